/* SPDX-License-Identifier: MIT */
/* secmem.c: wiping secrets, comparing them in constant time, keeping
 * long-lived ones in locked memory. */
#include <config.h>

#include <pthread.h>
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

/* Locked regions: mlock does not pass to a fork's child (krb5kdc forks
 * its workers after loading the module, and the workers are where the
 * secrets are used), so the regions are kept here and locked again in
 * every child.  A full table leaves a region locked in this process
 * only. */
#define YK_LOCKED_MAX 64

static struct {
    void *p;
    size_t size;
} locked_regions[YK_LOCKED_MAX];
static pthread_mutex_t locked_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t locked_once = PTHREAD_ONCE_INIT;

static void
locked_prepare(void)
{
    (void)pthread_mutex_lock(&locked_mutex);
}

static void
locked_parent(void)
{
    (void)pthread_mutex_unlock(&locked_mutex);
}

/* In the child (one thread): every region locked again. */
static void
locked_child(void)
{
    size_t i;

    for (i = 0; i < YK_LOCKED_MAX; i++) {
        if (locked_regions[i].p != NULL)
            (void)mlock(locked_regions[i].p, locked_regions[i].size);
    }
    (void)pthread_mutex_unlock(&locked_mutex);
}

static void
locked_init(void)
{
    (void)pthread_atfork(locked_prepare, locked_parent, locked_child);
}

/* See secmem.h. */
int
yk_mem_lock(void *p, size_t size)
{
    size_t i;
    int locked;

    (void)pthread_once(&locked_once, locked_init);
#ifdef MADV_DONTDUMP
    (void)madvise(p, size, MADV_DONTDUMP);
#endif
    locked = mlock(p, size) == 0;
    if (!locked)
        return 0;
    (void)pthread_mutex_lock(&locked_mutex);
    for (i = 0; i < YK_LOCKED_MAX; i++) {
        if (locked_regions[i].p == NULL) {
            locked_regions[i].p = p;
            locked_regions[i].size = size;
            break;
        }
    }
    (void)pthread_mutex_unlock(&locked_mutex);
    return 1;
}

/* See secmem.h. */
void
yk_mem_unlock(void *p, size_t size, int locked)
{
    size_t i;

    if (locked) {
        (void)pthread_mutex_lock(&locked_mutex);
        for (i = 0; i < YK_LOCKED_MAX; i++) {
            if (locked_regions[i].p == p) {
                locked_regions[i].p = NULL;
                locked_regions[i].size = 0;
                break;
            }
        }
        (void)pthread_mutex_unlock(&locked_mutex);
        (void)munlock(p, size);
    }
#ifdef MADV_DODUMP
    (void)madvise(p, size, MADV_DODUMP);
#endif
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
yk_secret_alloc(size_t n)
{
    yk_secret_head *h;
    long page = sysconf(_SC_PAGESIZE);
    size_t size;
    void *p;

    if (page <= 0)
        page = 4096;
    if (n > SIZE_MAX - YK_SECRET_OFFSET - (size_t)page)
        return NULL;
    size = (YK_SECRET_OFFSET + n + 1 + (size_t)page - 1) / (size_t)page *
        (size_t)page;
    /* Zero-filled: the string is terminated at any length up to n. */
    p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
             -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    h = p;
    h->size = size;
    h->locked = yk_mem_lock(p, size);
    return (char *)p + YK_SECRET_OFFSET;
}

/* See secmem.h. */
char *
yk_secret_strndup(const char *s, size_t n)
{
    char *d;

    if (s == NULL)
        return NULL;
    d = yk_secret_alloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
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
    yk_mem_unlock(h, size, locked);
    (void)munmap(h, size);
}
