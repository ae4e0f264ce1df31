/* SPDX-License-Identifier: MIT */
/* fuzz_postread.c: libFuzzer target for the swap's post-read parser. */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "postread.h"
#include "record.h"

#define MINE "yk1 id=vvccccdefghi ctr=300 gen=8 nonce=0badf00d used=1"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    yk_state_rec mine;
    int rival = -1;

    if (yk_state_rec_parse(MINE, strlen(MINE), &mine) != 0)
        abort();
    if (yk_postread_rival((const char *)data, size, MINE, &mine,
                          &rival) == 0) {
        if (rival < YK_RIVAL_NONE || rival > YK_RIVAL_OLDER)
            abort();
    } else if (rival != YK_RIVAL_NONE) {
        abort();
    }
    return 0;
}
