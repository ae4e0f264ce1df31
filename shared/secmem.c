/* SPDX-License-Identifier: MIT */
/* secmem.c: wiping secrets, comparing them in constant time, keeping
 * long-lived ones in locked memory. */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* What precedes a secret string in its mapping. */
typedef struct {
    size_t size;        /* of the whole mapping */
    int locked;         /* mlock succeeded */
} yk_secret_head;

#define YK_SECRET_OFFSET                                                \
    ((sizeof(yk_secret_head) + sizeof(max_align_t) - 1) /               \
     sizeof(max_align_t) * sizeof(max_align_t))

/* See secmem.h.  A mapping of its own, so that the lock and the dump flag
 * cover these pages only (a page shared with other data would be locked
 * or hidden with it).  A failing mlock is not an error: the copy is still
 * wiped when freed. */
char *
yk_secret_strndup(const char *s, size_t n)
{
    yk_secret_head *h;
    long page = sysconf(_SC_PAGESIZE);
    size_t size;
    void *p;

    if (page <= 0)
        page = 4096;
    if (s == NULL || n > SIZE_MAX - YK_SECRET_OFFSET - (size_t)page)
        return NULL;
    size = (YK_SECRET_OFFSET + n + 1 + (size_t)page - 1) / (size_t)page *
        (size_t)page;
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
             -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    h = p;
    h->size = size;
    h->locked = mlock(p, size) == 0;
#ifdef MADV_DONTDUMP
    (void)madvise(p, size, MADV_DONTDUMP);
#endif
    memcpy((char *)p + YK_SECRET_OFFSET, s, n);
    ((char *)p)[YK_SECRET_OFFSET + n] = '\0';    /* mmap zero-fills */
    return (char *)p + YK_SECRET_OFFSET;
}

/* See secmem.h. */
void
yk_secret_free(char *s)
{
    yk_secret_head *h;
    size_t size;
    int locked;

    if (s == NULL)
        return;
    h = (yk_secret_head *)(void *)(s - YK_SECRET_OFFSET);
    size = h->size;
    locked = h->locked;
    yk_zap(h, size);
    if (locked)
        (void)munlock(h, size);
    (void)munmap(h, size);
}
