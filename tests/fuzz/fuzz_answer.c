/* SPDX-License-Identifier: MIT */
/* fuzz_answer.c: libFuzzer target for the client's responder answer. */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clientlogic.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *json, value[130];
    size_t len = 0, i;

    json = malloc(size + 1);
    if (json == NULL)
        return 0;
    memcpy(json, data, size);
    json[size] = '\0';
    if (yk_client_parse_answer(json, value, sizeof(value), &len) == 0) {
        if (len >= sizeof(value) || strlen(value) != len)
            abort();
    } else {
        for (i = 0; i < sizeof(value); i++)
            if (value[i] != 0)
                abort();   /* a refused answer's value must be wiped */
    }
    free(json);
    return 0;
}
