/* SPDX-License-Identifier: MIT */
/* cache.c: per-principal cache of directory lookups (hash table). */

#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache.h"

#define YK_CACHE_MIN_BUCKETS 16

/* One cached lookup, chained in its bucket. */
typedef struct yk_cache_item {
    struct yk_cache_item *next;
    char *principal;
    yk_entry *entry;             /* NULL for a negative result */
    krb5_error_code code;        /* 0 or the negative code */
    int64_t fetched;
} yk_cache_item;

struct yk_cache {
    yk_cache_item **buckets;
    size_t nbuckets;             /* a power of two */
    size_t count;
    size_t max;
};

/* FNV-1a over the principal name. */
static size_t
hash_name(const char *s)
{
    uint64_t h = 14695981039346656037ULL;

    for (; *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return (size_t)h;
}

/* Free one item and the entry it owns. */
static void
item_free(yk_cache_item *item)
{
    if (item == NULL)
        return;
    yk_entry_free(item->entry);
    free(item->principal);
    free(item);
}

/* The link that points at principal's item (or at the NULL ending its
 * bucket's chain when it is not cached). */
static yk_cache_item **
find_link(yk_cache *cache, const char *principal)
{
    yk_cache_item **link;

    link = &cache->buckets[hash_name(principal) & (cache->nbuckets - 1)];
    while (*link != NULL && strcmp((*link)->principal, principal) != 0)
        link = &(*link)->next;
    return link;
}

/* Unlink and free the item with the oldest lookup time. */
static void
evict_oldest(yk_cache *cache)
{
    yk_cache_item **link, **oldest = NULL, *victim;
    size_t i;

    for (i = 0; i < cache->nbuckets; i++) {
        for (link = &cache->buckets[i]; *link != NULL;
             link = &(*link)->next) {
            if (oldest == NULL || (*link)->fetched < (*oldest)->fetched)
                oldest = link;
        }
    }
    if (oldest == NULL)
        return;
    victim = *oldest;
    *oldest = victim->next;
    cache->count--;
    item_free(victim);
}

/* Make an empty cache; the bucket count is the next power of two at or
 * above max_entries. */
krb5_error_code
yk_cache_new(size_t max_entries, yk_cache **cache_out)
{
    yk_cache *cache = NULL;
    size_t n = YK_CACHE_MIN_BUCKETS;

    if (max_entries == 0)
        max_entries = YK_CACHE_MAX_ENTRIES;
    while (n < max_entries)
        n <<= 1;
    cache = calloc(1, sizeof(*cache));
    if (cache == NULL)
        return ENOMEM;
    cache->buckets = calloc(n, sizeof(*cache->buckets));
    if (cache->buckets == NULL) {
        free(cache);
        return ENOMEM;
    }
    cache->nbuckets = n;
    cache->max = max_entries;
    *cache_out = cache;
    return 0;
}

/* Free every item, then the table. */
void
yk_cache_free(yk_cache *cache)
{
    yk_cache_item *item, *next;
    size_t i;

    if (cache == NULL)
        return;
    for (i = 0; i < cache->nbuckets; i++) {
        for (item = cache->buckets[i]; item != NULL; item = next) {
            next = item->next;
            item_free(item);
        }
    }
    free(cache->buckets);
    free(cache);
}

/* Report principal's cached lookup without changing the cache. */
krb5_error_code
yk_cache_get(yk_cache *cache, const char *principal,
             const yk_entry **entry_out, krb5_error_code *code_out,
             int64_t *fetched_out)
{
    yk_cache_item *item = *find_link(cache, principal);

    if (item == NULL)
        return ENOENT;
    *entry_out = item->entry;
    *code_out = item->code;
    *fetched_out = item->fetched;
    return 0;
}

/* Insert or replace principal's item; the entry is owned by the cache
 * from here on, or freed when it cannot be stored. */
krb5_error_code
yk_cache_put(yk_cache *cache, const char *principal, yk_entry *entry,
             krb5_error_code code, int64_t fetched)
{
    yk_cache_item **link, *item;

    link = find_link(cache, principal);
    item = *link;
    if (item != NULL) {
        /* Replace in place: the old entry goes. */
        yk_entry_free(item->entry);
        item->entry = entry;
        item->code = code;
        item->fetched = fetched;
        return 0;
    }

    item = calloc(1, sizeof(*item));
    if (item == NULL)
        goto fail;
    item->principal = strdup(principal);
    if (item->principal == NULL)
        goto fail;
    if (cache->count >= cache->max) {
        evict_oldest(cache);
        /* The eviction may have emptied our chain: look again. */
        link = find_link(cache, principal);
    }
    item->entry = entry;
    item->code = code;
    item->fetched = fetched;
    item->next = NULL;
    *link = item;
    cache->count++;
    return 0;

fail:
    if (item != NULL)
        free(item->principal);
    free(item);
    yk_entry_free(entry);
    return ENOMEM;
}

/* Unlink and free principal's item, if any. */
void
yk_cache_drop(yk_cache *cache, const char *principal)
{
    yk_cache_item **link = find_link(cache, principal), *item = *link;

    if (item == NULL)
        return;
    *link = item->next;
    cache->count--;
    item_free(item);
}

/* The number of cached principals. */
size_t
yk_cache_count(const yk_cache *cache)
{
    return cache->count;
}

