/* SPDX-License-Identifier: MIT */
/* exact.c: exact-size input buffers for the decoder unit tests. */
#include <config.h>

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "exact.h"

/* Copy n bytes of p into a buffer of exactly n bytes (1 when n is 0, so
 * that malloc never returns NULL for an empty input). */
krb5_data
exact(const uint8_t *p, size_t n)
{
    krb5_data d;

    d.magic = KV5M_DATA;
    d.length = (unsigned int)n;
    d.data = malloc(n > 0 ? n : 1);
    ck_assert_ptr_nonnull(d.data);
    if (n > 0)
        memcpy(d.data, p, n);
    return d;
}

/* Free d's buffer; d is left empty. */
void
free_exact(krb5_data *d)
{
    free(d->data);
    d->data = NULL;
    d->length = 0;
}
