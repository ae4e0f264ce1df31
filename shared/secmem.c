/* SPDX-License-Identifier: MIT */
/* secmem.c: wiping secrets and comparing them in constant time. */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "secmem.h"

/* Overwrite n bytes at p with zeros.  explicit_bzero when the C library has
 * it; otherwise stores through a volatile pointer, which the compiler must
 * perform even though the buffer is dead afterwards.  p may be NULL when n
 * is 0. */
void
yk_zap(void *p, size_t n)
{
    if (p == NULL || n == 0)
        return;
#ifdef HAVE_EXPLICIT_BZERO
    explicit_bzero(p, n);
#else
    {
        volatile unsigned char *v = p;

        while (n-- > 0)
            *v++ = 0;
    }
#endif
}

/* Compare n bytes of a and b in time that depends only on n: every byte is
 * read, differences are accumulated with XOR and there is no early exit.
 * Returns 1 if equal, 0 otherwise; a and b may be NULL when n is 0. */
int
yk_memeq(const void *a, const void *b, size_t n)
{
    const volatile unsigned char *pa = a;
    const volatile unsigned char *pb = b;
    unsigned int diff = 0;
    size_t i;

    for (i = 0; i < n; i++)
        diff |= (unsigned int)(pa[i] ^ pb[i]);

    /* diff is 0..255: (diff - 1) >> 8 has its low bit set only for 0. */
    return (int)(((diff - 1U) >> 8) & 1U);
}

/* Wipe the NUL-terminated string s (up to its terminator) and free it.
 * NULL is accepted and ignored. */
void
yk_free_string_zap(char *s)
{
    if (s == NULL)
        return;
    yk_zap(s, strlen(s));
    free(s);
}
