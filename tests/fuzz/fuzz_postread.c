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
    int rival = -1, first_ok;

    if (yk_state_rec_parse(MINE, strlen(MINE), &mine) != 0)
        abort();
    first_ok = yk_postread_rival((const char *)data, size, MINE, &mine,
                                 &rival) == 0;
    if (first_ok) {
        if (rival < YK_RIVAL_NONE || rival > YK_RIVAL_OLDER)
            abort();
    } else if (rival != YK_RIVAL_NONE) {
        abort();
    }
    /* The lower values: the same verdict on the entry, and each value
     * one of mine's token below it. */
    {
        char **lower = (char **)1;
        yk_state_rec rec;
        size_t i;
        int ok = yk_postread_lower((const char *)data, size, MINE, &mine,
                                   &lower) == 0;

        if (ok != first_ok || (!ok && lower != NULL))
            abort();
        for (i = 0; lower != NULL && lower[i] != NULL; i++) {
            if (yk_state_rec_parse(lower[i], strlen(lower[i]), &rec) != 0 ||
                strcmp(rec.pubid, mine.pubid) != 0 ||
                rec.counter >= mine.counter)
                abort();
        }
        yk_postread_free(lower);
    }
    return 0;
}
