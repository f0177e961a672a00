/*
 * The local tier: one shard of an LRU cache. Each shard is a chained hash table plus a doubly
 * linked recency list under one mutex; the cache spreads keys over a power-of-two number of
 * shards by hash so that threads rarely meet on the same lock. The table never resizes: its
 * bucket count is fixed at creation from the shard's entry bound, so an insert is O(1) with
 * no pauses. Entries are reference-counted; the shard holds one reference per linked entry and
 * drops it on removal, so a reader that took its own reference is never left with freed
 * memory.
 */
#include <stdlib.h>
#include <string.h>

#include "cache/cache_internal.h"

wk_status wk__shard_init(wk__shard *sh, const wk_allocator *alloc, size_t max_entries,
                         size_t max_bytes)
{
    memset(sh, 0, sizeof *sh);
    sh->alloc = alloc;
    size_t buckets = 8;
    while (buckets < max_entries && buckets < ((size_t)1 << 24)) {
        buckets *= 2;
    }
    sh->buckets = wk_alloc(alloc, buckets * sizeof *sh->buckets);
    if (sh->buckets == NULL) {
        return WK_ERR_NOMEM;
    }
    memset(sh->buckets, 0, buckets * sizeof *sh->buckets);
    if (pthread_mutex_init(&sh->mu, NULL) != 0) {
        wk_free(alloc, sh->buckets, buckets * sizeof *sh->buckets);
        return WK_ERR_NOMEM;
    }
    sh->mask = buckets - 1;
    sh->lru.next = &sh->lru;
    sh->lru.prev = &sh->lru;
    sh->max_entries = max_entries;
    sh->max_bytes = max_bytes;
    return WK_OK;
}

static void unlink_entry(wk__shard *sh, wk_cache_entry *e)
{
    wk_cache_entry **pp = &sh->buckets[e->hash & sh->mask];
    while (*pp != e) {
        pp = &(*pp)->hnext;
    }
    *pp = e->hnext;
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->in_local = false;
    sh->entries--;
    sh->bytes -= e->charge;
    wk_cache_entry_unref(e);
}

void wk__shard_clear(wk__shard *sh)
{
    while (sh->lru.next != &sh->lru) {
        unlink_entry(sh, sh->lru.next);
    }
    sh->epoch++;
}

void wk__shard_free(wk__shard *sh)
{
    wk__shard_clear(sh);
    wk_free(sh->alloc, sh->buckets, (sh->mask + 1) * sizeof *sh->buckets);
    pthread_mutex_destroy(&sh->mu);
}

static wk_cache_entry *lookup(wk__shard *sh, uint64_t hash, const char *key, size_t key_len)
{
    for (wk_cache_entry *e = sh->buckets[hash & sh->mask]; e != NULL; e = e->hnext) {
        if (e->hash == hash && e->key_len == key_len && memcmp(e->key, key, key_len) == 0) {
            return e;
        }
    }
    return NULL;
}

wk_cache_entry *wk__shard_find(wk__shard *sh, uint64_t hash, const char *key, size_t key_len,
                             int64_t now)
{
    wk_cache_entry *e = lookup(sh, hash, key, key_len);
    if (e == NULL) {
        return NULL;
    }
    if (e->expires_ms <= now) {
        sh->expirations++;
        unlink_entry(sh, e);
        return NULL;
    }
    if (sh->lru.next != e) {
        e->prev->next = e->next;
        e->next->prev = e->prev;
        e->next = sh->lru.next;
        e->prev = &sh->lru;
        sh->lru.next->prev = e;
        sh->lru.next = e;
    }
    return e;
}

bool wk__shard_remove(wk__shard *sh, uint64_t hash, const char *key, size_t key_len)
{
    wk_cache_entry *e = lookup(sh, hash, key, key_len);
    if (e == NULL) {
        return false;
    }
    unlink_entry(sh, e);
    return true;
}

bool wk__shard_insert(wk__shard *sh, wk_cache_entry *e)
{
    wk_cache_entry *old = lookup(sh, e->hash, e->key, e->key_len);
    if (old != NULL) {
        unlink_entry(sh, old);
    }
    if (e->charge > sh->max_bytes || sh->max_entries == 0) {
        return false;
    }
    wk_cache_entry_ref(e);
    wk_cache_entry **bucket = &sh->buckets[e->hash & sh->mask];
    e->hnext = *bucket;
    *bucket = e;
    e->next = sh->lru.next;
    e->prev = &sh->lru;
    sh->lru.next->prev = e;
    sh->lru.next = e;
    e->in_local = true;
    sh->entries++;
    sh->bytes += e->charge;
    while (sh->entries > sh->max_entries || sh->bytes > sh->max_bytes) {
        sh->evictions++;
        unlink_entry(sh, sh->lru.prev);
    }
    return true;
}
