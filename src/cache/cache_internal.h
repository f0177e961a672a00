/*
 * Internal structures of the entity cache: immutable reference-counted entries, the sharded
 * LRU local tier, and single-flight records. Shared by cache.c (the get/put/invalidate logic),
 * cache_local.c (the LRU) and cache_entry.c (building entries).
 */
#ifndef WK_CACHE_INTERNAL_H
#define WK_CACHE_INTERNAL_H

#include <pthread.h>

#include "wirekit/cache.h"

struct wk_cache_entry {
    uint32_t refs;        /* atomic */
    bool negative;        /* a cached "not found" */
    bool in_local;        /* linked in a shard (shard lock) */
    uint64_t hash;
    int64_t expires_ms;
    size_t charge;        /* bytes charged to the local tier */
    char *key;
    size_t key_len;
    uint8_t *bytes;
    size_t len;
    void *obj;
    wk_arena arena;       /* the decoded object's strings, arrays, values */
    const wk_allocator *alloc; /* the cache's; frees this entry's block */
    size_t block;         /* bytes of this entry's block */
    wk_cache_entry *prev;   /* LRU links (shard lock) */
    wk_cache_entry *next;
    wk_cache_entry *hnext;  /* hash chain (shard lock) */
};

typedef struct wk__flight {
    struct wk__flight *next;
    uint64_t hash;
    size_t key_len;
    uint32_t users;       /* leader + waiters still holding the record (shard lock) */
    uint64_t epoch;       /* shard and feed epochs when the load started: a get that begins */
    uint64_t feed_epoch;  /* after an invalidation never joins a load from before it */
    bool done;
    wk_status status;
    wk_error err;
    wk_cache_entry *result; /* one reference owned by the flight */
    pthread_cond_t cond;
    const wk_allocator *alloc; /* the cache's: frees this record (sizeof + key_len bytes) */
    char key[];
} wk__flight;

typedef struct wk__shard {
    _Alignas(64) pthread_mutex_t mu;
    wk_cache_entry **buckets;
    size_t mask;
    wk_cache_entry lru;     /* sentinel: lru.next is the most recent, lru.prev the least */
    size_t entries;
    size_t bytes;
    size_t max_entries;
    size_t max_bytes;
    uint64_t epoch;       /* bumped by every invalidation or clear in this shard */
    uint64_t hits;
    uint64_t misses;
    uint64_t evictions;
    uint64_t expirations;
    wk__flight *flights;
    const wk_allocator *alloc; /* the cache's (buckets) */
} wk__shard;

/** 64-bit hash of a key (fast, well mixed; not for hostile-collision resistance). */
uint64_t wk__cache_hash(const void *p, size_t len);

/** Milliseconds of a monotonic coarse clock. */
int64_t wk__cache_now_ms(void);

/** Builds an entry holding `bytes` (copied) decoded with `ser` (or a negative entry when
 *  `negative`). Returns NULL with *st set: WK_ERR_NOMEM, or the decoder's status (corrupt). */
wk_cache_entry *wk__cache_entry_new(const wk_allocator *alloc, const wk_serializer *ser,
                                    const wk_schema *s, const char *key, size_t key_len,
                                    uint64_t hash, const uint8_t *bytes, size_t len,
                                    bool negative, int64_t expires_ms, wk_status *st);

/* ---- local tier (callers hold sh->mu except for init/free) ---- */

wk_status wk__shard_init(wk__shard *sh, const wk_allocator *alloc, size_t max_entries,
                         size_t max_bytes);
void wk__shard_free(wk__shard *sh);
/** Finds a live entry (moving it to the front) or NULL; drops it when expired. */
wk_cache_entry *wk__shard_find(wk__shard *sh, uint64_t hash, const char *key, size_t key_len,
                             int64_t now);
/** Inserts `e` (taking one reference), replacing an entry with the same key, then evicts
 *  from the LRU end until the shard is within bounds. An entry larger than the whole shard is
 *  not inserted. Returns whether `e` was inserted. */
bool wk__shard_insert(wk__shard *sh, wk_cache_entry *e);
/** Removes the entry with this key, if any. Returns true when one was removed. */
bool wk__shard_remove(wk__shard *sh, uint64_t hash, const char *key, size_t key_len);
/** Removes every entry. */
void wk__shard_clear(wk__shard *sh);

#endif
