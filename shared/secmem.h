/* SPDX-License-Identifier: MIT */
/* secmem.h: wiping secrets and comparing them in constant time. */
#ifndef YK_SECMEM_H
#define YK_SECMEM_H

#include <stddef.h>

/* Overwrite n bytes at p with zeros in a way the compiler cannot elide.
 * p may be NULL when n is 0. */
void yk_zap(void *p, size_t n);

/* Compare n bytes in time independent of their contents: 1 if equal,
 * 0 otherwise. */
int yk_memeq(const void *a, const void *b, size_t n);

/* Wipe a NUL-terminated string in place and free it; NULL is accepted. */
void yk_free_string_zap(char *s);

#endif /* YK_SECMEM_H */
