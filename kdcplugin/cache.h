/* SPDX-License-Identifier: MIT */
/* cache.h: per-principal cache of directory lookups for the KDC module. */
#ifndef YK_CACHE_H
#define YK_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <krb5.h>
#include "store.h"
#include "ykclock.h"

#define YK_CACHE_MAX_ENTRIES 4096  /* principals held at most per worker */

/*
 * The cache remembers, per principal, the result of its last directory
 * lookup and when it was made (milliseconds on a monotonic clock):
 * positive (an entry, owned by the cache) or negative (code
 * YK_ERR_STORE_NOT_FOUND or YK_ERR_STORE_AMBIGUOUS, no entry).  Failures
 * of the directory itself are never cached.  Freshness is the caller's
 * decision: the cache only reports the age.  A KDC worker is single
 * threaded; the cache takes no locks.
 */
typedef struct yk_cache yk_cache;

/* Make an empty cache holding at most max_entries principals (0 means
 * YK_CACHE_MAX_ENTRIES). */
krb5_error_code yk_cache_new(size_t max_entries, yk_cache **cache_out);

/* Free the cache and every entry in it; NULL is accepted. */
void yk_cache_free(yk_cache *cache);

/* Look principal up.  On success *entry_out is the cached entry (owned by
 * the cache, valid until the next put or drop for principal, so never
 * across a wait of the store (async.c); NULL
 * for a negative result), *code_out 0 or the cached negative code and
 * *fetched_out the time of the lookup.  ENOENT when nothing is cached. */
krb5_error_code yk_cache_get(yk_cache *cache, const char *principal,
                             const yk_entry **entry_out,
                             krb5_error_code *code_out,
                             int64_t *fetched_out);

/* Store a lookup result for principal made at fetched: entry (taken over,
 * even on failure; may be NULL) and code (0, or a negative code with a
 * NULL entry).  Replaces and frees any older item.  When the cache is
 * full, the oldest item is evicted. */
krb5_error_code yk_cache_put(yk_cache *cache, const char *principal,
                             yk_entry *entry, krb5_error_code code,
                             int64_t fetched);

/* Forget principal (nothing happens when it is not cached). */
void yk_cache_drop(yk_cache *cache, const char *principal);

/* Number of principals cached. */
size_t yk_cache_count(const yk_cache *cache);

#endif /* YK_CACHE_H */
