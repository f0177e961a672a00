/*
 * The entity cache: schema-described objects under versioned keys, in an in-process tier in
 * front of an optional shared tier (Redis, see wirekit/redis.h), filled by a caller loader.
 *
 * Keys are `<namespace>:<entity>:v<version>:<id>`, with the entity name and version taken from
 * the descriptor, so entries written under an older schema are never decoded by a newer one.
 *
 * wk_cache_get looks in the local tier, then the shared tier, then calls the loader, and stores
 * what it gets in both tiers. Concurrent misses on one key call the loader once (single-flight
 * per key: the others wait for that load; other keys never wait for it). "Not found" can be
 * cached too (negative caching, with its own TTL).
 *
 * The local tier is a sharded table bounded by entries and bytes, with a TTL per entry and
 * CLOCK (second-chance) eviction; hits take no lock, so threads on different keys do not
 * wait for each other. It holds
 * immutable, reference-counted entries: a get hands out a reference (wk_cache_entry) to the
 * decoded object and its encoded bytes, valid until released, whatever other threads do.
 *
 * How far memory may exceed the bounds: an entry that leaves the local tier (evicted,
 * invalidated, replaced, expired, cleared) is freed by the first writer of its shard (a
 * fill, put, invalidation or eviction) that runs after every thread that was inside a
 * lock-free lookup when it left has come out of it (a lookup is a few hundred instructions;
 * a wk_cache_pin section lasts until wk_cache_unpin) and after the references that lookups
 * handed out for it are released; a reference taken otherwise (a miss, wk_cache_entry_ref)
 * frees it with its release instead. Writers try once 16 such entries are pending in the
 * shard beyond those still referenced, or their bytes pass an eighth of its share of
 * max_bytes. So the excess is: fewer than 16 entries (or an eighth of the bytes) per shard
 * when no reader lingers, plus everything the shard unlinks while the oldest lingering
 * reader stays inside (a thread descheduled mid-lookup, a long pinned section), plus, per
 * thread, at most 7 entries whose reference a lock-free hit on that thread took and another
 * thread released, until the taking thread releases another reference to the same entry or
 * exits. Nobody ever waits for a reader: a lingering one costs memory, never time. An entry
 * a lookup handed out on another thread than the one calling wk_cache_free, and released
 * after it, is freed by the next wk_cache_free of any cache, thread exit, or reclamation
 * pass of any cache in the process.
 *
 * Consistency: wk_cache_invalidate and wk_cache_put drop the local copy before returning and
 * ask the shared tier to broadcast the key, so every other process drops its copy when the
 * message arrives. A load that overlaps an invalidation of its key is returned to the callers
 * that were already waiting but is not kept. The shared tier keeps a short-lived tombstone
 * after an invalidation so that a load that started earlier cannot refill it with old data.
 * While the shared tier cannot deliver invalidations (Redis down), the local tier is bypassed
 * and cleared, and gets fall back to the loader; it is trusted again once the subscription is
 * back. An entry that cannot be decoded is treated as a miss, deleted and counted.
 *
 * Thread-safety: every function may be called from any thread on a shared wk_cache.
 */
#ifndef WIREKIT_CACHE_H
#define WIREKIT_CACHE_H

#include "arena.h"
#include "buffer.h"
#include "schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An entity cache (opaque; wk_cache_new(), wk_cache_free()). */
typedef struct wk_cache wk_cache;
/** A reference to a cached entry: its decoded object and encoded bytes, valid until
 * released. */
typedef struct wk_cache_entry wk_cache_entry;

/* ---- the shared tier: a byte store the cache talks to -------------------------------------- */

/** Values the cache stores in the shared tier besides encoded objects. Both start with the
 *  byte 0xc1, which is never the first byte of a MessagePack or JSON value. */
#define WK_CACHE_NEGATIVE_MARK "\xc1N" /**< the loader said "not found" */
#define WK_CACHE_TOMBSTONE_MARK "\xc1T" /**< recently invalidated: do not refill */
#define WK_CACHE_MARK_LEN 2u /**< length of both marks */

/** Callbacks a store invokes when it delivers invalidations: from its own thread, or from
 *  a thread inside one of its calls (the Redis store hands on what it reads while a write
 *  uses the feed's connection), never with a lock of the cache held by that thread. */
typedef struct wk_cache_watch {
    /** Another process (or this one) invalidated `key`. */
    void (*invalidated)(void *ctx, const char *key, size_t key_len);
    /** The invalidation feed went down (`up` false: messages may be lost from now on) or came
     *  back (`up` true: messages flow again; anything cached before may be stale). */
    void (*feed)(void *ctx, bool up);
    /** Every invalidation published so far was delivered, and local copies may be served
     *  until `fresh_until_ms` (CLOCK_MONOTONIC milliseconds) unless the store calls again.
     *  Past that the cache reads from the shared tier instead of its local tier (a process
     *  that was paused does not serve a copy a buffered invalidation would drop). A store
     *  that never calls it leaves the local tier trusted for as long as the feed is up; one
     *  that does calls it before `feed` says "up", also for a watcher registered while the
     *  feed is already up. */
    void (*heard)(void *ctx, int64_t fresh_until_ms);
    void *ctx; /**< passed to the callbacks */
} wk_cache_watch;

/* store modes */
#define WK_CACHE_STORE_FILL 0u    /**< only when the key is absent (a fill after a load) */
#define WK_CACHE_STORE_REPLACE 1u /**< always, then broadcast the key (a put) */

/** Receives one value of a `fetch_each`: the index of its key and its bytes, which are valid
 *  during the call only (they point into the store's read buffer). A status other than WK_OK
 *  ends the fetch with that status. */
typedef wk_status (*wk_cache_take_fn)(void *ctx, size_t i, const uint8_t *bytes, size_t len);

/** Receives the answer of a `fetch_async`, exactly once, from the store's own thread: `st`
 *  WK_OK with `found` and the value's `bytes[0..len)` (valid during the call only; they point
 *  into the store's read buffer), or `found` false for a miss; or the failure (WK_ERR_IO for
 *  an unavailable or slow tier, a deadline passed, a connection lost, the store being freed;
 *  WK_ERR_LIMIT, WK_ERR_NOMEM), described by `err`. The callback must not block for long (it
 *  holds up every other answer of the store) and must not free the store; it may call
 *  `fetch_async` again. */
typedef void (*wk_cache_fetched_fn)(void *ctx, wk_status st, const uint8_t *bytes, size_t len,
                                    bool found, const wk_error *err);

/**
 * A shared tier. Every operation is bounded in time (the store's timeouts) and returns WK_OK,
 * or WK_ERR_IO / WK_ERR_LIMIT when the tier is unavailable, slow, refuses the command or
 * answers something unexpected (never WK_ERR_NOT_FOUND: a miss is found[i] false); the
 * cache then falls back to the loader. `fetch` gets `n` keys in one round trip: vals[i]
 * receives the bytes (appended) and found[i] whether the key exists. `store` writes one value
 * with a TTL in milliseconds; in WK_CACHE_STORE_REPLACE mode it must leave no old value
 * behind even when the write is refused (delete first), and broadcast the key. `invalidate`
 * deletes the key, then writes WK_CACHE_TOMBSTONE_MARK for `tombstone_ms`, then broadcasts
 * it; when a step is refused it returns an error, having deleted what it could. `remove`
 * deletes it quietly. `watch` (NULL when the store cannot
 * broadcast) registers (`enable` true) or unregisters the callbacks `w`, which stay at that
 * address while registered; a store reports the feed's state to a new watcher at once if it
 * is up. Once unregistering returns, no callback of `w` runs any more. `fetch_each`
 * (optional, NULL when absent) is `fetch` without a copy per value: it calls `take` for each
 * key found, from the calling thread, at most once per key, in any order, with the bytes where
 * the store read them; a key without a call was not found when it returns WK_OK, and is of
 * unknown state when it fails (the values taken before a failure stand). `take` must not call
 * the store. `fetch_async` (optional, NULL when absent) gets one key without blocking the
 * caller: it returns WK_OK when the request was accepted, and then calls `done` exactly once
 * (see wk_cache_fetched_fn), within the store's command deadline; any other status means the
 * request was refused (no thread, no memory) and `done` is never called. The store is shared
 * by any number of threads and caches; it outlives them.
 */
typedef struct wk_cache_store {
    /** Gets `n` keys in one round trip (see above). */
    wk_status (*fetch)(void *self, size_t n, const wk_slice *keys, wk_buf *vals,
                       bool *found, wk_error *err);
    /** Writes one value with a TTL, WK_CACHE_STORE_FILL or _REPLACE. */
    wk_status (*store)(void *self, const char *key, size_t key_len, const void *val,
                       size_t val_len, uint32_t ttl_ms, unsigned mode, wk_error *err);
    /** Replaces the key with a tombstone and broadcasts it. */
    wk_status (*invalidate)(void *self, const char *key, size_t key_len, uint32_t tombstone_ms,
                            wk_error *err);
    /** Deletes the key quietly. */
    wk_status (*remove)(void *self, const char *key, size_t key_len, wk_error *err);
    /** Registers or unregisters invalidation callbacks; NULL when the store cannot
     * broadcast. */
    void (*watch)(void *self, const wk_cache_watch *w, bool enable);
    void *self; /**< the store object, passed to every callback */
    /** Gets `n` keys in one round trip, handing each value found to `take` in place (see
     *  above); NULL: the cache uses `fetch`. */
    wk_status (*fetch_each)(void *self, size_t n, const wk_slice *keys, wk_cache_take_fn take,
                            void *ctx, wk_error *err);
    /** Gets one key asynchronously, answering `done` from the store's thread (see above);
     *  NULL: the cache runs wk_cache_get_async's misses on its worker threads. */
    wk_status (*fetch_async)(void *self, const char *key, size_t key_len,
                             wk_cache_fetched_fn done, void *ctx);
} wk_cache_store;

/* ---- creating a cache --------------------------------------------------------------------- */

/* config flags */
#define WK_CACHE_NO_LOCAL 0x01u /**< no local tier: every get goes to the shared tier / loader */
/** A shared value that does not decode (written with another serializer, by another tool,
 *  damaged) is deleted from the shared tier by the get that meets it, and the loader's value
 *  filled in its place. Without it a read never deletes: the value is left where it is, a get
 *  without a loader fails with the decode status (WK_CACHE_UNDECODABLE), one with a loader
 *  returns the loader's value without storing it. Either way the value is counted in
 *  `corrupt` and never kept in the local tier. */
#define WK_CACHE_REMOVE_CORRUPT 0x02u
/** How the message of that failure begins (err->msg), telling it from a store's failure
 *  with the same status. */
#define WK_CACHE_UNDECODABLE "cache: the shared value cannot be decoded"

/** Cache settings; zero means the default given after each field. */
typedef struct wk_cache_config {
    const char *ns;                  /**< key namespace: "wk" */
    const wk_serializer *serializer; /**< wk_serializer_msgpack() */
    size_t max_entries;              /**< local tier entries: 10,000 */
    size_t max_bytes;                /**< local tier bytes (keys, encoded and decoded forms): 64 MiB */
    unsigned shards;                 /**< local tier shards, rounded up to a power of two: 16 */
    uint32_t local_ttl_ms;           /**< local entry lifetime: 30 s */
    uint32_t shared_ttl_ms;          /**< shared entry lifetime: 10 min */
    uint32_t negative_ttl_ms;        /**< 0: "not found" is not cached */
    uint32_t tombstone_ms;           /**< shared tombstone after an invalidation: 2 s */
    const wk_cache_store *store;     /**< shared tier, or NULL for the local tier only */
    unsigned flags;                  /**< WK_CACHE_* */
    size_t max_entry_bytes;          /**< largest encoded entry put or kept: 16 MiB
                                          (WK_CACHE_MAX_ENTRY_DEFAULT) */
    const wk_allocator *alloc;       /**< every allocation of the cache, its entries, loads
                                          and get_many: libc when NULL; must outlive every
                                          entry */
    void *reserved[4];               /**< zero; room to grow without breaking the ABI */
} wk_cache_config;

/** Default cap on one entry's encoded size. */
#define WK_CACHE_MAX_ENTRY_DEFAULT ((size_t)16 << 20)

/** Creates a cache. `cfg` may be NULL (all defaults, local tier only). The namespace and store
 *  are borrowed: the namespace is copied, the store must outlive the cache. Returns WK_OK,
 *  WK_ERR_ARG (namespace longer than 64 bytes or containing ':'), WK_ERR_NOMEM. */
WK_API wk_status wk_cache_new(const wk_cache_config *cfg, wk_cache **out, wk_error *err);

/** Unregisters from the store and frees the cache and its local entries. References still
 *  held stay valid until released. No other call may be running on `c`; wk_cache_get_async
 *  requests still pending are answered first (see there) and its workers joined. NULL is a
 *  no-op. */
WK_API void wk_cache_free(wk_cache *c);

/* ---- keys --------------------------------------------------------------------------------- */

/** Longest key the cache handles (namespace, entity, version and id together). */
#define WK_CACHE_KEY_MAX 512u

/** Writes `<ns>:<entity>:v<version>:<id>` into `buf[0..cap)` (NUL-terminated when it fits)
 *  and returns its length, which may exceed `cap` (nothing useful is written then). */
WK_API size_t wk_cache_key(const char *ns, const wk_schema *s, const char *id, size_t id_len,
                           char *buf, size_t cap);

/* ---- reading and writing ------------------------------------------------------------------ */

/**
 * Loads one entity when it is in neither tier: fills `obj` (zeroed, `s->size` bytes) for `id`,
 * allocating what it points to in `arena` or using memory that outlives the call. Returns
 * WK_OK, WK_ERR_NOT_FOUND (no such entity), or any other status for a failure (not cached,
 * handed to the caller). Called without any cache lock held; may run on any calling thread.
 */
typedef wk_status (*wk_cache_loader)(void *ctx, const wk_schema *s, const char *id,
                                     size_t id_len, void *obj, wk_arena *arena, wk_error *err);

/**
 * Gets entity `id` of schema `s`: local tier, shared tier, then `loader` (may be NULL: a miss
 * in both tiers is then WK_ERR_NOT_FOUND and is not cached). On WK_OK `*out` is a reference
 * the caller must release. Returns WK_OK, WK_ERR_NOT_FOUND (from the loader or a cached
 * negative entry), the loader's error, WK_ERR_ARG (key too long), WK_ERR_NOMEM, or
 * WK_ERR_LIMIT/encoding errors for an object that cannot be serialized. With a loader,
 * failures of the shared tier are never returned: they are counted and the loader answers
 * instead. Without a loader (`loader` NULL) a failure of the shared tier is returned as it is
 * (WK_ERR_IO or WK_ERR_LIMIT, with the store's message saying what failed), never as
 * WK_ERR_NOT_FOUND, which then means the shared tier answered that the key is absent.
 */
WK_API wk_status wk_cache_get(wk_cache *c, const wk_schema *s, const char *id, size_t id_len,
                              wk_cache_loader loader, void *loader_ctx, wk_cache_entry **out,
                              wk_error *err);

/** Receives the answer of wk_cache_get_async, exactly once: `st` as wk_cache_get would return
 *  it, `e` a reference the callee must release (NULL unless `st` is WK_OK), `err` describing
 *  a failure (valid during the call only). */
typedef void (*wk_cache_done_fn)(void *ctx, wk_status st, wk_cache_entry *e,
                                 const wk_error *err);

/**
 * wk_cache_get without blocking the caller on the shared tier or the loader: the same answer,
 * handed to `done` exactly once, with the same single-flight and invalidation rules (a get
 * that starts after wk_cache_invalidate returned is never answered with the old value).
 *
 * Threading contract: `done` runs on the calling thread, before this returns, for a local hit
 * and for an immediate failure (key too long, out of memory); on the store's thread for an
 * answer of the shared tier (a hit, decoded and filled into the local tier there; a miss or a
 * failure without a loader); and on one of the cache's worker threads (a small pool started
 * on first use, joined by wk_cache_free) for anything that needs the loader: a shared miss, a
 * tombstone, a value that does not decode, a failure of the shared tier with a loader given,
 * a store without `fetch_async` or no store at all. The loader therefore runs on a worker
 * thread, never on the store's. `done` must not block for long on the store's thread (other
 * answers wait behind it) and must not call wk_cache_free; it may call any other cache
 * function. `id` is copied; `s`, `loader_ctx` and `done_ctx` must stay valid until `done`
 * ran. wk_cache_free answers every request still pending (those queued for a worker with
 * WK_ERR_IO, the others with their answer) before it returns.
 *
 * Returns WK_OK when `done` ran with a hit on this thread or will run later; else the status
 * `done` was already given on this thread (WK_ERR_NOT_FOUND for a cached negative entry,
 * WK_ERR_ARG, WK_ERR_NOMEM).
 */
WK_API wk_status wk_cache_get_async(wk_cache *c, const wk_schema *s, const char *id,
                                    size_t id_len, wk_cache_loader loader, void *loader_ctx,
                                    wk_cache_done_fn done, void *done_ctx);

/**
 * Gets `n` entities: local hits first, then the misses from the shared tier in one pipelined
 * round trip, then the loader for what is left (single-flight per key as in wk_cache_get).
 * refs[i] and statuses[i] receive each result (refs[i] NULL unless statuses[i] is WK_OK).
 * Returns WK_OK when every id was answered (found or not found), else the first failure.
 */
WK_API wk_status wk_cache_get_many(wk_cache *c, const wk_schema *s, size_t n,
                                   const wk_slice *ids, wk_cache_loader loader,
                                   void *loader_ctx, wk_cache_entry **refs, wk_status *statuses,
                                   wk_error *err);

/**
 * Enters a pinned section on the calling thread (nestable; end it with wk_cache_unpin on the
 * same thread, before the thread exits). Inside it, wk_cache_peek hands out local entries
 * without taking a reference: no entry is freed while any thread is pinned, so a section
 * must stay short (memory of entries evicted or invalidated meanwhile is held until it ends).
 * Returns false when this thread cannot pin (more than 128 threads use caches at once):
 * wk_cache_peek then always returns NULL and wk_cache_get still works; wk_cache_unpin must
 * still be called.
 */
WK_API bool wk_cache_pin(wk_cache *c);

/** Ends the pinned section begun by the matching wk_cache_pin. */
WK_API void wk_cache_unpin(wk_cache *c);

/**
 * A local hit without a reference: the entry of `id` if the local tier holds a live, positive
 * one, valid until the caller's wk_cache_unpin (not released by the caller), else NULL
 * (absent, expired, a cached "not found", key too long, local tier not in use, or the thread
 * is not pinned): then call wk_cache_get. Neither a lock nor an atomic read-modify-write: the
 * fastest read, for loops that look up many ids in a short section. The invalidation rules
 * of wk_cache_get hold for every call; an entry already handed out stays readable (memory
 * safe, possibly superseded) until the section ends.
 */
WK_API const wk_cache_entry *wk_cache_peek(wk_cache *c, const wk_schema *s, const char *id,
                                           size_t id_len);

/**
 * Stores `obj` as entity `id` in both tiers (`ttl_ms` for the shared tier, 0 = the default)
 * and broadcasts the key so that other processes drop their old copies. Returns WK_OK,
 * WK_ERR_IO (the shared tier failed or refused the write: the local copy was dropped and the
 * store deleted what it could; err->msg says which step failed), WK_ERR_LIMIT (the encoded
 * object is larger than `max_entry_bytes`, nothing changed; or, with no shared tier, the
 * entry is larger than what one shard of the local tier may hold, max_bytes / shards, so it
 * could not be kept), or an encoding error.
 */
WK_API wk_status wk_cache_put(wk_cache *c, const wk_schema *s, const char *id, size_t id_len,
                              const void *obj, uint32_t ttl_ms, wk_error *err);

/**
 * Drops entity `id` from the local tier and (through a tombstone) from the shared tier, and
 * broadcasts the key. When it returns WK_OK no later get on this cache returns the old value,
 * and other processes drop theirs when the broadcast reaches them. WK_ERR_IO when the shared
 * tier failed or refused part of it (the local copy is dropped all the same; err->msg says
 * whether the value was deleted without its tombstone, or not deleted at all).
 */
WK_API wk_status wk_cache_invalidate(wk_cache *c, const wk_schema *s, const char *id,
                                     size_t id_len, wk_error *err);

/** Drops every local entry (the shared tier is untouched). */
WK_API void wk_cache_clear_local(wk_cache *c);

/** The serializer the cache encodes its entries with (wk_cache_config.serializer, or
 *  wk_serializer_msgpack() by default): the format of wk_cache_entry_bytes(). */
WK_API const wk_serializer *wk_cache_serializer(const wk_cache *c);

/* ---- references --------------------------------------------------------------------------- */

/** The decoded object (a `T *` for the schema's struct, or `wk_value *`). Immutable; valid
 *  until the reference is released. */
WK_API const void *wk_cache_entry_object(const wk_cache_entry *r);
/** The object's encoded bytes (in the cache's serializer format). */
WK_API const uint8_t *wk_cache_entry_bytes(const wk_cache_entry *r, size_t *len);
/** The entry's full key (NUL-terminated). */
WK_API const char *wk_cache_entry_key(const wk_cache_entry *r);
/** Takes one more reference; returns `r`. */
WK_API wk_cache_entry *wk_cache_entry_ref(wk_cache_entry *r);
/** Releases a reference; the entry is freed with its last reference. NULL is a no-op. */
WK_API void wk_cache_entry_unref(wk_cache_entry *r);

/* ---- statistics --------------------------------------------------------------------------- */

/** Counters of a cache since it was created (see wk_cache_get_stats()). */
typedef struct wk_cache_stats {
    uint64_t local_hits;      /**< answered by the local tier (including negative entries) */
    uint64_t local_misses; /**< gets the local tier could not answer */
    uint64_t shared_hits;     /**< answered by the shared tier */
    uint64_t shared_misses;   /**< the shared tier did not have the key */
    uint64_t negative_hits;   /**< "not found" answered from a cached negative entry */
    uint64_t loads;           /**< loader calls */
    uint64_t load_not_found;  /**< loader said "not found" */
    uint64_t load_errors;     /**< loader failed */
    uint64_t shared_errors;   /**< shared tier operations that failed (down, slow, refused) */
    uint64_t fallbacks;       /**< gets answered by the loader because the shared tier failed */
    uint64_t corrupt;         /**< shared values that could not be decoded (see WK_CACHE_REMOVE_CORRUPT) */
    uint64_t evictions;       /**< local entries evicted to make room */
    uint64_t expirations;     /**< local entries found past their TTL */
    uint64_t invalidations;   /**< invalidations received (own and broadcast) */
    uint64_t flight_waits;    /**< gets that waited for another caller's load of the same key */
    uint64_t feed_resets;     /**< times the invalidation feed went down or came back */
    uint64_t local_entries;   /**< entries in the local tier now */
    uint64_t local_bytes;     /**< bytes charged to the local tier now */
} wk_cache_stats;

/** Copies the counters (each read atomically; the set is not a snapshot). */
WK_API void wk_cache_get_stats(wk_cache *c, wk_cache_stats *out);

#ifdef __cplusplus
}
#endif
#endif
