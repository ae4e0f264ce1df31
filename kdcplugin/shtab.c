/* SPDX-License-Identifier: MIT */
/* shtab.c: the token states the KDC's workers share; see shtab.h. */

#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <gcrypt.h>

#include "shtab.h"
#include "ykclock.h"

typedef struct {
    unsigned char key[YK_SHTAB_KEY_LEN];
    uint64_t gen;
    int64_t written_ms;          /* monotonic: the eviction order */
    uint16_t len;                /* 0: empty */
    char raw[YK_SHTAB_RAW_MAX];
} yk_shslot;

/* The shared mapping: a process-shared robust mutex, then the slots. */
typedef struct {
    pthread_mutex_t lock;
    yk_shslot slots[YK_SHTAB_SETS * YK_SHTAB_WAYS];
} yk_shmap;

struct yk_shtab {
    yk_shmap *map;               /* MAP_SHARED | MAP_ANONYMOUS */
};

/* See shtab.h. */
krb5_error_code
yk_shtab_new(yk_shtab **out)
{
    pthread_mutexattr_t attr;
    yk_shtab *t;
    void *p;
    int err;

    *out = NULL;
    t = calloc(1, sizeof(*t));
    if (t == NULL)
        return ENOMEM;
    p = mmap(NULL, sizeof(yk_shmap), PROT_READ | PROT_WRITE,
             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        err = errno;
        free(t);
        return err != 0 ? err : ENOMEM;
    }
    t->map = p;     /* zero-filled: every slot empty */
    err = pthread_mutexattr_init(&attr);
    if (err == 0) {
        err = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
        if (err == 0)
            err = pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
        if (err == 0)
            err = pthread_mutex_init(&t->map->lock, &attr);
        pthread_mutexattr_destroy(&attr);
    }
    if (err != 0) {
        munmap(t->map, sizeof(yk_shmap));
        free(t);
        return err;
    }
    *out = t;
    return 0;
}

/* See shtab.h. */
void
yk_shtab_free(yk_shtab *t)
{
    if (t == NULL)
        return;
    /* Not destroyed: the other workers may still use the lock. */
    munmap(t->map, sizeof(yk_shmap));
    free(t);
}

/* See shtab.h. */
krb5_error_code
yk_shtab_key(const char *principal, const char *pubid, const char *secret,
             size_t secret_len, int policy,
             unsigned char key[YK_SHTAB_KEY_LEN])
{
    gcry_buffer_t iov[4];
    gcry_error_t err;
    int32_t pol = policy;

    /* The NUL ends each name and the policy has a fixed size, so the
     * secret runs to the end: no two tuples hash alike. */
    memset(iov, 0, sizeof(iov));
    iov[0].data = (void *)principal;
    iov[0].len = strlen(principal) + 1;
    iov[1].data = (void *)pubid;
    iov[1].len = strlen(pubid) + 1;
    iov[2].data = &pol;
    iov[2].len = sizeof(pol);
    iov[3].data = (void *)secret;
    iov[3].len = secret_len;
    err = gcry_md_hash_buffers(GCRY_MD_SHA256, 0, key, iov, 4);
    return err ? ENOMEM : 0;
}

/* Take t's lock without waiting for another worker: tried, yielding
 * between tries.  A worker that died holding it may have left a slot
 * half written: the table is emptied.  Returns 1 when held. */
static int
lock_try(yk_shtab *t)
{
    int i, err;

    for (i = 0; i < YK_SHTAB_LOCK_TRIES; i++) {
        err = pthread_mutex_trylock(&t->map->lock);
        if (err == 0)
            return 1;
        if (err == EOWNERDEAD) {
            memset(t->map->slots, 0, sizeof(t->map->slots));
            if (pthread_mutex_consistent(&t->map->lock) == 0)
                return 1;
            (void)pthread_mutex_unlock(&t->map->lock);
            return 0;
        }
        if (err != EBUSY)
            return 0;
        (void)sched_yield();
    }
    return 0;
}

/* The first slot of key's set. */
static yk_shslot *
set_of(yk_shtab *t, const unsigned char key[YK_SHTAB_KEY_LEN])
{
    uint32_t h;

    memcpy(&h, key, sizeof(h));
    return &t->map->slots[(h % YK_SHTAB_SETS) * YK_SHTAB_WAYS];
}

/* key's slot in set, or NULL. */
static yk_shslot *
find(yk_shslot *set, const unsigned char key[YK_SHTAB_KEY_LEN])
{
    size_t i;

    for (i = 0; i < YK_SHTAB_WAYS; i++) {
        if (set[i].len != 0 &&
            memcmp(set[i].key, key, YK_SHTAB_KEY_LEN) == 0)
            return &set[i];
    }
    return NULL;
}

/* See shtab.h. */
int
yk_shtab_get(yk_shtab *t, const unsigned char key[YK_SHTAB_KEY_LEN],
             uint64_t gen, char *raw, size_t rawmax, size_t *len_out)
{
    yk_shslot *s;
    int found = 0;

    *len_out = 0;
    if (t == NULL || !lock_try(t))
        return 0;
    s = find(set_of(t, key), key);
    if (s != NULL && s->gen > gen && s->len <= rawmax) {
        memcpy(raw, s->raw, s->len);
        *len_out = s->len;
        found = 1;
    }
    (void)pthread_mutex_unlock(&t->map->lock);
    return found;
}

/* See shtab.h. */
void
yk_shtab_put(yk_shtab *t, const unsigned char key[YK_SHTAB_KEY_LEN],
             uint64_t gen, int force, const char *raw, size_t len)
{
    yk_shslot *set, *s;
    size_t i;

    if (t == NULL || len == 0 || len > YK_SHTAB_RAW_MAX || !lock_try(t))
        return;
    set = set_of(t, key);
    s = find(set, key);
    if (s != NULL && s->gen >= gen && !force)
        goto done;
    for (i = 0; s == NULL && i < YK_SHTAB_WAYS; i++) {
        if (set[i].len == 0)
            s = &set[i];
    }
    if (s == NULL) {
        s = &set[0];
        for (i = 1; i < YK_SHTAB_WAYS; i++) {
            if (set[i].written_ms < s->written_ms)
                s = &set[i];
        }
    }
    memcpy(s->key, key, YK_SHTAB_KEY_LEN);
    s->gen = gen;
    s->written_ms = yk_mono_ms();
    memcpy(s->raw, raw, len);
    s->len = (uint16_t)len;

done:
    (void)pthread_mutex_unlock(&t->map->lock);
}
