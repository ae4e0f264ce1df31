/* SPDX-License-Identifier: MIT */
/* exact.h: exact-size input buffers for the decoder unit tests. */
#ifndef YK_TEST_EXACT_H
#define YK_TEST_EXACT_H

#include <stddef.h>
#include <stdint.h>
#include <krb5.h>

/* A krb5_data over a malloc'd copy of exactly n bytes of p, so that a
 * read past the end shows under ASan or valgrind.  Free with free_exact. */
krb5_data exact(const uint8_t *p, size_t n);

/* Free a buffer made by exact and empty d. */
void free_exact(krb5_data *d);

#endif /* YK_TEST_EXACT_H */
