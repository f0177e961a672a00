/*
 * The entity cache: versioned keys, the get path (local tier, shared tier, loader) with
 * single-flight per key, negative caching, put/invalidate, and the reactions to the shared
 * tier's invalidation feed.
 *
 * Where it sits: wk_cache_get(schema, id) -> the key `<ns>:<entity>:v<version>:<id>` built
 * here -> the local tier (cache_local.c: shards of lock-free chains) -> on a miss, the shared
 * tier (a wk_cache_store: addons/redis, or the caller's) -> on a miss there, the caller's
 * loader -> the object serialized once (the serializer: MessagePack by default) into a
 * refcounted entry (cache_entry.c) that both tiers share the bytes of -> the caller's
 * wk_cache_entry, decoded object inside. Invalidations arrive from the store's feed
 * (on_invalidated below) and from wk_cache_put / wk_cache_invalidate.
 *
 * A local hit takes no lock (cache_local.c: lock-free chains, CLOCK bits, epoch-based
 * reclamation); misses, fills and invalidations take the key's shard lock.
 * Single-flight records live in the key's shard, next to its table: the first miss registers
 * one and loads without holding any lock; later misses on the same key wait on the record's
 * condition variable (which releases the shard lock), so other keys are never held up.
 * Staleness is fenced with epochs: every invalidation or clear bumps its shard's epoch, and
 * every feed change bumps the cache's feed epoch; a load remembers both when it starts and
 * keeps its result (locally, or as a fill of the shared tier) only if neither moved.
 *
 * wk_cache_get_async takes the same path in pieces: the local tier on the caller's thread
 * (the epochs noted there), then the store's fetch_async, whose answer (on_fetched, on the
 * store's thread) is a hit decoded and filled under those epochs, or a request handed to the
 * cache's workers (cache_workers.c), which run get_key, the synchronous path, told what the
 * shared tier already said (SKIP_STORE, STORE_FAILED, NO_FILL): loads keep the single-flight
 * records and the fences above, and never run on the store's thread.
 */
#include <stdlib.h>
#include <string.h>

#include "cache/cache_internal.h"
#include "core/kernel_interface.h"

/* messages name the limits by their numbers: kept in step here */
_Static_assert(WK_CACHE_KEY_MAX == 512u, "a message below says 512 bytes");

#define WK_CACHE_NS_MAX 64u
#define SKIP_STORE 0x01u   /* the caller already asked the shared tier */
#define STORE_FAILED 0x02u /* ... and it failed */
#define SHARED_CORRUPT_LEFT 0x04u /* ... and its value did not decode and was left there */
#define NO_FILL 0x08u /* ... and it held a tombstone: the load does not fill it */

/* The cache: its configuration (immutable after wk_cache_new), the feed state the store's
 * callbacks change (atomics), the shards, and the counters wk_cache_get_stats reports. */
struct wk_cache {
    char ns[WK_CACHE_NS_MAX + 1]; /* NUL-padded to the end: read whole when building keys */
    size_t ns_len;
    const wk_serializer *ser;
    const wk_cache_store *store;
    uint32_t local_ttl_ms;
    uint32_t shared_ttl_ms;
    uint32_t negative_ttl_ms;
    uint32_t tombstone_ms;
    unsigned flags;
    bool watching;
    int local_ok;        /* atomic: the local tier may be read and filled */
    uint64_t feed_epoch; /* atomic */
    int64_t fresh_until; /* atomic: local copies known current until then (INT64_MAX: the
                            store does not report it) */
    size_t max_entry;
    wk_cache_watch watch;
    wk__shard *shards;
    wk__ebr ebr; /* reclamation for lock-free local hits */
    void *shards_block;  /* the allocation `shards` is aligned in */
    size_t shards_bytes; /* its size */
    const wk_allocator *alloc; /* NULL = libc */
    uint32_t shard_bits;
    uint32_t nshards;
    /* atomic counters (the per-shard ones are in the shards) */
    uint64_t shared_hits;
    uint64_t shared_misses;
    uint64_t negative_hits;
    uint64_t loads;
    uint64_t load_not_found;
    uint64_t load_errors;
    uint64_t shared_errors;
    uint64_t fallbacks;
    uint64_t corrupt;
    uint64_t invalidations;
    uint64_t flight_waits;
    uint64_t feed_resets;
    /* wk_cache_get_async: its workers, and the requests not answered yet (under async_mu;
     * wk_cache_free waits on async_cv for none) */
    wk__cworkers workers;
    pthread_mutex_t async_mu;
    pthread_cond_t async_cv;
    size_t async_pending;
};

/* Bumps one of the cache's counters; relaxed: they are statistics, ordering nothing. */
#define COUNT(c, field) __atomic_fetch_add(&(c)->field, 1, __ATOMIC_RELAXED)

/* The shard of a key: the hash's top bits (the low bits index the shard's own table). */
static inline wk__shard *shard_of(wk_cache *c, uint64_t hash)
{
    return &c->shards[c->shard_bits == 0 ? 0 : hash >> (64 - c->shard_bits)];
}

/* A shard's epoch, acquired: a load compares it with the value it started under. */
static inline uint64_t shard_epoch(wk__shard *sh)
{
    return __atomic_load_n(&sh->epoch, __ATOMIC_ACQUIRE);
}

/* The local tier may be read and filled at `now`: there is one, the feed is up, and the
 * feed was heard recently enough that no invalidation can be waiting unread. */
static inline bool local_usable(wk_cache *c, int64_t now)
{
    return (c->flags & WK_CACHE_NO_LOCAL) == 0 &&
           __atomic_load_n(&c->local_ok, __ATOMIC_ACQUIRE) &&
           now <= __atomic_load_n(&c->fresh_until, __ATOMIC_ACQUIRE);
}

/* ---- keys --------------------------------------------------------------------------------- */

/* Decimal digits of `v`. */
static inline size_t u32_digits(uint32_t v)
{
    size_t n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

/* Writes the `n` decimal digits of `v` at `p`. */
static inline void put_u32(char *p, size_t n, uint32_t v)
{
    for (size_t i = n; i > 0; i--) {
        p[i - 1] = (char)('0' + v % 10);
        v /= 10;
    }
}


/* Builds `<ns>:<entity>:v<version>:<id>` (see wk_cache_key). With `ns_padded`, `ns` is a
 * cache's namespace array, readable for WK_CACHE_NS_MAX bytes, and is copied whole (one
 * fixed-size move) when `cap` allows. Every get builds a key, so no memcpy or snprintf call:
 * the other parts are overlapping 8/4-byte moves and the version's digits are written in
 * place (instructions per hit: wirekit bench --suite cache --case 'local hit' --callgrind).
 * test_cache_key_matches_the_format_for_every_length holds it to the format. */
static inline __attribute__((always_inline)) size_t
build_key(const char *ns, size_t nl, bool ns_padded, const wk_schema *s, const char *id,
          size_t id_len, char *buf, size_t cap)
{
    size_t vn = s->version < 10 ? 1 : u32_digits(s->version);
    size_t el = strlen(s->name);
    size_t total = nl + 1 + el + 2 + vn + 1 + id_len;
    if (total < id_len || total >= cap) {
        return total < id_len ? SIZE_MAX : total;
    }
    char *p = buf;
    if (ns_padded && cap >= WK_CACHE_NS_MAX) {
        memcpy(p, ns, WK_CACHE_NS_MAX); /* the bytes past nl are overwritten below */
        p += nl;
    } else {
        p = (char *)wk__put_bytes(p, ns, nl);
    }
    *p++ = ':';
    p = (char *)wk__put_bytes(p, s->name, el);
    *p++ = ':';
    *p++ = 'v';
    if (vn == 1) {
        *p = (char)('0' + s->version);
    } else {
        put_u32(p, vn, s->version);
    }
    p += vn;
    *p++ = ':';
    p = (char *)wk__put_bytes(p, id, id_len);
    *p = '\0';
    return total;
}

/* Public (wirekit/cache.h): the key's length whatever cap is (the key is written, NUL-ended,
 * only when it fits), so a caller can size its buffer; SIZE_MAX on overflow. */
WK_API size_t wk_cache_key(const char *ns, const wk_schema *s, const char *id, size_t id_len,
                           char *buf, size_t cap)
{
    return build_key(ns, strlen(ns), false, s, id, id_len, buf, cap);
}

/* The key of `id` in cache `c` (the namespace's length is known, its copy is one move). */
static inline __attribute__((always_inline)) size_t
cache_key(const wk_cache *c, const wk_schema *s, const char *id, size_t id_len, char *buf,
          size_t cap)
{
    return build_key(c->ns, c->ns_len, true, s, id, id_len, buf, cap);
}

/* ---- create / destroy --------------------------------------------------------------------- */

/* The store's feed says `key` changed elsewhere: drop the local copy and bump the shard's
 * epoch, so a load of that key already under way keeps its result out of the local tier. */
static void on_invalidated(void *ctx, const char *key, size_t key_len)
{
    wk_cache *c = ctx;
    uint64_t h = wk__cache_hash(key, key_len);
    wk__shard *sh = shard_of(c, h);
    pthread_mutex_lock(&sh->mu);
    wk__shard_remove(sh, h, key, key_len);
    __atomic_fetch_add(&sh->epoch, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&sh->mu);
    COUNT(c, invalidations);
}

/* Empties every shard's table (each under its own lock). Epochs are not bumped: callers that
 * must fence loads do it themselves (on_feed bumps the feed epoch). */
static void clear_all(wk_cache *c)
{
    for (uint32_t i = 0; i < c->nshards; i++) {
        pthread_mutex_lock(&c->shards[i].mu);
        wk__shard_clear(&c->shards[i]);
        pthread_mutex_unlock(&c->shards[i].mu);
    }
}

/* The store heard from its feed: local copies are known current until fresh_until_ms. */
static void on_heard(void *ctx, int64_t fresh_until_ms)
{
    wk_cache *c = ctx;
    __atomic_store_n(&c->fresh_until, fresh_until_ms, __ATOMIC_RELEASE);
}

/* The feed went down or came (back) up: invalidations may have been missed either way, so the
 * local tier is switched off, fenced (feed epoch) and cleared; it is switched on again only
 * when the feed is up. */
static void on_feed(void *ctx, bool up)
{
    wk_cache *c = ctx;
    COUNT(c, feed_resets);
    __atomic_store_n(&c->local_ok, 0, __ATOMIC_RELEASE);
    __atomic_fetch_add(&c->feed_epoch, 1, __ATOMIC_ACQ_REL);
    clear_all(c);
    if (up) {
        __atomic_store_n(&c->local_ok, 1, __ATOMIC_RELEASE);
    }
}

/* Public (wirekit/cache.h): zeros in cfg mean the documented defaults. With a store that has
 * a feed, the local tier starts off and waits for the feed's first "up". */
WK_API wk_status wk_cache_new(const wk_cache_config *cfg, wk_cache **out, wk_error *err)
{
    static const wk_cache_config defaults;
    if (cfg == NULL) {
        cfg = &defaults;
    }
    *out = NULL;
    const char *ns = cfg->ns != NULL ? cfg->ns : "wk";
    size_t nl = strlen(ns);
    if (nl == 0 || nl > WK_CACHE_NS_MAX || memchr(ns, ':', nl) != NULL) {
        return wk_error_set(err, WK_ERR_ARG, 0,
                            "cache: namespace must be 1 to 64 bytes without ':'");
    }
    wk_cache *c = wk_alloc(cfg->alloc, sizeof *c);
    if (c == NULL) {
        return wk_error_set(err, WK_ERR_NOMEM, 0, "cache: out of memory");
    }
    memset(c, 0, sizeof *c);
    c->alloc = cfg->alloc;
    memcpy(c->ns, ns, nl + 1); /* zeroed: the rest of the array stays NUL */
    c->ns_len = nl;
    c->ser = cfg->serializer != NULL ? cfg->serializer : wk_serializer_msgpack();
    c->store = cfg->store;
    c->local_ttl_ms = cfg->local_ttl_ms != 0 ? cfg->local_ttl_ms : 30000;
    c->shared_ttl_ms = cfg->shared_ttl_ms != 0 ? cfg->shared_ttl_ms : 600000;
    c->negative_ttl_ms = cfg->negative_ttl_ms;
    c->tombstone_ms = cfg->tombstone_ms != 0 ? cfg->tombstone_ms : 2000;
    c->flags = cfg->flags;
    c->fresh_until = INT64_MAX;
    c->max_entry = cfg->max_entry_bytes != 0 ? cfg->max_entry_bytes : WK_CACHE_MAX_ENTRY_DEFAULT;
    unsigned want = cfg->shards != 0 ? cfg->shards : 16;
    if (want > 1024) {
        want = 1024;
    }
    c->nshards = 1;
    while (c->nshards < want) {
        c->nshards *= 2;
        c->shard_bits++;
    }
    size_t max_entries = cfg->max_entries != 0 ? cfg->max_entries : 10000;
    size_t max_bytes = cfg->max_bytes != 0 ? cfg->max_bytes : ((size_t)64 << 20);
    /* Shards are 64-byte aligned (no false sharing); any allocator will do: align by hand. */
    c->shards_bytes = sizeof(wk__shard) * c->nshards + 63;
    c->shards_block = wk_alloc(c->alloc, c->shards_bytes);
    if (c->shards_block == NULL) {
        wk_free(c->alloc, c, sizeof *c);
        return wk_error_set(err, WK_ERR_NOMEM, 0, "cache: out of memory");
    }
    c->shards = (wk__shard *)(((uintptr_t)c->shards_block + 63) & ~(uintptr_t)63);
    if (wk__ebr_init(&c->ebr, c->alloc) != WK_OK) {
        wk_free(c->alloc, c->shards_block, c->shards_bytes);
        wk_free(c->alloc, c, sizeof *c);
        return wk_error_set(err, WK_ERR_NOMEM, 0, "cache: out of memory");
    }
    for (uint32_t i = 0; i < c->nshards; i++) {
        if (wk__shard_init(&c->shards[i], c->alloc, (max_entries + c->nshards - 1) / c->nshards,
                           (max_bytes + c->nshards - 1) / c->nshards, &c->ebr) != WK_OK) {
            for (uint32_t j = 0; j < i; j++) {
                wk__shard_free(&c->shards[j]);
            }
            wk__ebr_free(&c->ebr);
            wk_free(c->alloc, c->shards_block, c->shards_bytes);
            wk_free(c->alloc, c, sizeof *c);
            return wk_error_set(err, WK_ERR_NOMEM, 0, "cache: out of memory");
        }
    }
    c->local_ok = 1;
    wk__cworkers_init(&c->workers);
    pthread_mutex_init(&c->async_mu, NULL);
    pthread_cond_init(&c->async_cv, NULL);
    if (c->store != NULL && c->store->watch != NULL) {
        /* Until the store says its invalidation feed is up, local copies cannot be trusted. */
        c->local_ok = 0;
        c->watch.invalidated = on_invalidated;
        c->watch.feed = on_feed;
        c->watch.heard = on_heard;
        c->watch.ctx = c;
        c->watching = true;
        c->store->watch(c->store->self, &c->watch, true);
    }
    *out = c;
    return WK_OK;
}

/* Public: stops watching the feed first, so no callback runs into a freed cache; entries the
 * caller still holds stay valid (they are refcounted) and free themselves later. */
WK_API void wk_cache_free(wk_cache *c)
{
    if (c == NULL) {
        return;
    }
    /* Asynchronous gets first: queued loads are cancelled and running ones finish (both
     * answer), then the answers still due from the store arrive (within its deadline; one
     * that needs a worker now is answered with an error). */
    wk__cworkers_stop(&c->workers);
    pthread_mutex_lock(&c->async_mu);
    while (c->async_pending > 0) {
        pthread_cond_wait(&c->async_cv, &c->async_mu);
    }
    pthread_mutex_unlock(&c->async_mu);
    wk__cworkers_destroy(&c->workers);
    pthread_mutex_destroy(&c->async_mu);
    pthread_cond_destroy(&c->async_cv);
    if (c->watching) {
        c->store->watch(c->store->self, &c->watch, false);
    }
    wk__refs_flush_mine(); /* this thread's references then free their entries */
    for (uint32_t i = 0; i < c->nshards; i++) {
        wk__shard_free(&c->shards[i]);
    }
    wk__orphans_sweep(); /* what other threads released meanwhile */
    wk__ebr_free(&c->ebr);
    const wk_allocator *alloc = c->alloc;
    wk_free(alloc, c->shards_block, c->shards_bytes);
    wk_free(alloc, c, sizeof *c);
}

/* Public (wirekit/cache.h). */
WK_API const wk_serializer *wk_cache_serializer(const wk_cache *c)
{
    return c->ser;
}

/* Public: drops every local copy; the shared tier is untouched. */
WK_API void wk_cache_clear_local(wk_cache *c)
{
    clear_all(c);
}

/* ---- loading ------------------------------------------------------------------------------ */

/* One get's load: the key (built once), its shard, and the epochs it started under. */
typedef struct load_ctx {
    wk_cache *c;
    const wk_schema *s;
    const char *key;
    size_t key_len;
    uint64_t hash;
    wk__shard *sh;
    uint64_t epoch;      /* shard epoch when the load started */
    uint64_t feed_epoch; /* feed epoch when the load started */
} load_ctx;

/* True when neither the key's shard nor the feed changed since the load started: its result
 * may be kept locally and written to the shared tier as a fill. */
static bool still_current(const load_ctx *l)
{
    return shard_epoch(l->sh) == l->epoch &&
           __atomic_load_n(&l->c->feed_epoch, __ATOMIC_ACQUIRE) == l->feed_epoch;
}

enum { SHARED_HIT, SHARED_MISS, SHARED_TOMBSTONE, SHARED_FAILED, SHARED_CORRUPT };

/* Turns bytes from the shared tier into an entry; SHARED_CORRUPT (counted) when they do not
 * decode. Does not call the store. */
static int shared_entry(const load_ctx *l, const uint8_t *bytes, size_t len,
                        wk_cache_entry **out, wk_status *st)
{
    wk_cache *c = l->c;
    int64_t now = wk__cache_now_ms();
    *st = WK_OK;
    if (len == WK_CACHE_MARK_LEN && memcmp(bytes, WK_CACHE_TOMBSTONE_MARK, len) == 0) {
        COUNT(c, shared_misses);
        return SHARED_TOMBSTONE;
    }
    bool negative = len == WK_CACHE_MARK_LEN && memcmp(bytes, WK_CACHE_NEGATIVE_MARK, len) == 0;
    uint32_t ttl = negative && c->negative_ttl_ms != 0 ? c->negative_ttl_ms : c->local_ttl_ms;
    *out = wk__cache_entry_new(c->alloc, c->ser, l->s, l->key, l->key_len, l->hash, bytes, len, negative,
                               now + ttl, st);
    if (*out != NULL) {
        COUNT(c, shared_hits);
        return SHARED_HIT;
    }
    if (*st == WK_ERR_NOMEM) {
        return SHARED_FAILED;
    }
    COUNT(c, corrupt);
    if (*st == WK_OK) {
        *st = WK_ERR_SYNTAX;
    }
    return SHARED_CORRUPT; /* *st: why it does not decode */
}

/* Removes a corrupt entry from the shared tier, when the cache was asked to
 * (WK_CACHE_REMOVE_CORRUPT): the value may be another writer's, in a format this cache does
 * not read, so a read leaves it alone unless told otherwise. */
static void remove_corrupt(wk_cache *c, const char *key, size_t key_len)
{
    if ((c->flags & WK_CACHE_REMOVE_CORRUPT) == 0) {
        return;
    }
    wk_error e;
    if (c->store->remove(c->store->self, key, key_len, &e) != WK_OK) {
        COUNT(c, shared_errors);
    }
}

/* One key's answer from fetch_each: shared_entry's result, SHARED_MISS until a value comes. */
typedef struct one_ctx {
    const load_ctx *l;
    wk_cache_entry **out;
    int r;
    wk_status st;
} one_ctx;

/* fetch_each's callback for one key: the value's bytes become an entry via shared_entry. */
static wk_status take_one(void *ctx, size_t i, const uint8_t *bytes, size_t len)
{
    one_ctx *o = ctx;
    (void)i;
    o->r = shared_entry(o->l, bytes, len, o->out, &o->st);
    return WK_OK;
}

/* Asks the shared tier for the key: SHARED_HIT (*out set), SHARED_MISS (absent, tombstone, or a
 * corrupt value removed under WK_CACHE_REMOVE_CORRUPT), SHARED_CORRUPT (a value left in place,
 * *st saying why it does not decode), or SHARED_FAILED with *st WK_ERR_NOMEM or the store's
 * failure (in *serr). Decodes the value where the store read it when the store offers
 * fetch_each. */
static int fetch_one(const load_ctx *l, wk_cache_entry **out, wk_status *st, wk_error *serr)
{
    wk_cache *c = l->c;
    wk_slice kr = {l->key, l->key_len};
    one_ctx o = {l, out, SHARED_MISS, WK_OK};
    if (c->store->fetch_each != NULL) {
        *st = c->store->fetch_each(c->store->self, 1, &kr, take_one, &o, serr);
    } else {
        wk_buf v;
        wk_buf_init(&v, c->alloc, 0);
        bool found = false;
        *st = c->store->fetch(c->store->self, 1, &kr, &v, &found, serr);
        if (*st == WK_OK && found) {
            (void)take_one(&o, 0, v.data, v.len);
        }
        wk_buf_free(&v);
    }
    if (*st != WK_OK) {
        COUNT(c, shared_errors);
        if (o.r != SHARED_HIT) { /* a value taken before a failure stands */
            return SHARED_FAILED;
        }
    }
    if (o.r == SHARED_MISS) { /* no value came */
        COUNT(c, shared_misses);
    }
    *st = o.st;
    if (o.r == SHARED_CORRUPT && (c->flags & WK_CACHE_REMOVE_CORRUPT) != 0) {
        remove_corrupt(c, l->key, l->key_len);
        *st = WK_OK;
        return SHARED_MISS;
    }
    return o.r;
}

/* Runs the caller's loader into a zeroed object and its own arena, serializes the result and
 * builds the entry from those bytes (so the object the cache hands out is the one every later
 * hit decodes). A NOT_FOUND becomes a negative entry when negative caching is on. With `fill`,
 * a still-current result is also written to the shared tier (a fill never replaces a newer
 * value there: WK_CACHE_STORE_FILL). Returns the loader's status or the encoding's. */
static wk_status call_loader(const load_ctx *l, const char *id, size_t id_len,
                             wk_cache_loader loader, void *loader_ctx, bool fill,
                             wk_cache_entry **out, wk_error *err)
{
    wk_cache *c = l->c;
    const wk_schema *s = l->s;
    wk_arena arena;
    wk_arena_init(&arena, c->alloc, 0);
    void *obj = wk_alloc(c->alloc, s->size != 0 ? s->size : 1);
    if (obj == NULL) {
        return wk_error_set(err, WK_ERR_NOMEM, 0, "cache: out of memory");
    }
    memset(obj, 0, s->size);
    COUNT(c, loads);
    wk_status st = loader(loader_ctx, s, id, id_len, obj, &arena, err);
    wk_buf b;
    wk_buf_init(&b, c->alloc, 0);
    if (st == WK_OK) {
        st = c->ser->encode(s, obj, &b, err);
        if (st == WK_OK && b.len > c->max_entry) {
            st = wk_error_set(err, WK_ERR_LIMIT, 0,
                              "cache: the loaded object is larger than max_entry_bytes");
        }
        if (st == WK_OK) {
            *out = wk__cache_entry_new(c->alloc, c->ser, s, l->key, l->key_len, l->hash, b.data, b.len,
                                       false, wk__cache_now_ms() + c->local_ttl_ms, &st);
            if (*out == NULL) {
                wk_error_set(err, st, 0, "cache: the loaded object does not decode back");
            }
        }
        if (*out != NULL && fill && still_current(l)) {
            wk_error e;
            if (c->store->store(c->store->self, l->key, l->key_len, b.data, b.len,
                                c->shared_ttl_ms, WK_CACHE_STORE_FILL, &e) != WK_OK) {
                COUNT(c, shared_errors);
            }
        }
    } else if (st == WK_ERR_NOT_FOUND) {
        COUNT(c, load_not_found);
        if (c->negative_ttl_ms != 0) {
            *out = wk__cache_entry_new(c->alloc, c->ser, s, l->key, l->key_len, l->hash,
                                       (const uint8_t *)WK_CACHE_NEGATIVE_MARK,
                                       WK_CACHE_MARK_LEN, true,
                                       wk__cache_now_ms() + c->negative_ttl_ms, &st);
            if (*out == NULL) {
                wk_error_set(err, st, 0, "cache: out of memory");
            } else {
                st = WK_OK; /* the negative entry carries the answer */
                if (fill && still_current(l)) {
                    wk_error e;
                    if (c->store->store(c->store->self, l->key, l->key_len,
                                        WK_CACHE_NEGATIVE_MARK, WK_CACHE_MARK_LEN,
                                        c->negative_ttl_ms, WK_CACHE_STORE_FILL,
                                        &e) != WK_OK) {
                        COUNT(c, shared_errors);
                    }
                }
            }
        } else {
            wk_error_set(err, WK_ERR_NOT_FOUND, 0, "not found");
        }
    } else {
        COUNT(c, load_errors);
    }
    wk_buf_free(&b);
    wk_arena_free(&arena);
    wk_free(c->alloc, obj, s->size != 0 ? s->size : 1);
    return st;
}

/* A miss's load: the shared tier first (unless the caller already asked it, SKIP_STORE),
 * then the loader. When the shared tier failed and there is no loader, the failure is
 * returned as it is: answering NOT_FOUND would make an outage look like a deleted entity. */
static wk_status load(const load_ctx *l, const char *id, size_t id_len, wk_cache_loader loader,
                      void *loader_ctx, unsigned flags, wk_cache_entry **out, wk_error *err)
{
    wk_cache *c = l->c;
    bool shared_failed = false;
    bool fill = c->store != NULL;
    wk_error serr = {WK_OK, 0, NULL};
    wk_status shared_st = WK_OK;
    *out = NULL;
    if ((flags & (SHARED_CORRUPT_LEFT | NO_FILL)) != 0) {
        fill = false;
    }
    if (c->store != NULL && (flags & SKIP_STORE) == 0) {
        wk_status st;
        int r = fetch_one(l, out, &st, &serr);
        if (r == SHARED_CORRUPT && loader == NULL) {
            /* not a miss: the id has a value, which this cache cannot read */
            return wk_error_set(err, st, 0,
                                WK_CACHE_UNDECODABLE " (written with another serializer or "
                                "by another program?); it is left in place");
        }
        if (r == SHARED_FAILED && st != WK_ERR_NOMEM) {
            shared_st = st;
        }
        if (r == SHARED_HIT) {
            return WK_OK;
        }
        if (st == WK_ERR_NOMEM) {
            return wk_error_set(err, st, 0, "cache: out of memory");
        }
        shared_failed = r == SHARED_FAILED;
        fill = r == SHARED_MISS; /* not over a value left in place (SHARED_CORRUPT) */
        if (r == SHARED_CORRUPT) {
            st = WK_OK;
        }
    }
    if ((flags & STORE_FAILED) != 0) {
        shared_failed = true;
        fill = false;
    }
    if (loader == NULL) {
        if (shared_failed) {
            /* Nothing can answer instead: the caller must not take the failure for a miss. */
            if (shared_st == WK_OK) {
                return wk_error_set(err, WK_ERR_IO, 0, "cache: the shared tier failed");
            }
            if (err != NULL) {
                *err = serr;
                err->code = shared_st;
            }
            return shared_st;
        }
        return wk_error_set(err, WK_ERR_NOT_FOUND, 0, "not found");
    }
    if (shared_failed) {
        COUNT(c, fallbacks);
    }
    return call_loader(l, id, id_len, loader, loader_ctx, fill, out, err);
}

/* ---- get ---------------------------------------------------------------------------------- */

/* Hands an entry to the caller: a negative entry is NOT_FOUND (its reference dropped). */
static wk_status deliver(wk_cache *c, wk_cache_entry *e, wk_cache_entry **out, wk_error *err)
{
    if (e->negative) {
        COUNT(c, negative_hits);
        wk_cache_entry_unref(e);
        return wk_error_set(err, WK_ERR_NOT_FOUND, 0, "not found");
    }
    *out = e;
    return WK_OK;
}

/* Drops one user of a single-flight record (shard lock held); the last frees it and its
 * result reference. */
static void flight_put(wk__flight *f)
{
    if (--f->users == 0) {
        wk_cache_entry_unref(f->result);
        pthread_cond_destroy(&f->cond);
        wk_free(f->alloc, f, sizeof *f + f->key_len);
    }
}

/* The get path past a lock-free hit: the locked lookup, then single-flight and the load. */
static __attribute__((noinline)) wk_status
get_locked(wk_cache *c, const wk_schema *s, const char *key, size_t key_len, uint64_t hash,
           const char *id, size_t id_len, wk_cache_loader loader, void *loader_ctx,
           unsigned flags, int64_t now, wk_cache_entry **out, wk_error *err)
{
    wk__shard *sh = shard_of(c, hash);
    pthread_mutex_lock(&sh->mu);
    if (local_usable(c, now)) {
        wk_cache_entry *e = wk__shard_find(sh, hash, key, key_len, now);
        if (e != NULL) {
            sh->hits++;
            wk_cache_entry_ref(e);
            pthread_mutex_unlock(&sh->mu);
            return deliver(c, e, out, err);
        }
    }
    sh->misses++;
    /* Join a load of this key only if it started after the last invalidation (and feed
     * change): one from before may return the old value, which callers that began before
     * the invalidation may get, but this one may not. Newer records are nearer the head. */
    uint64_t epoch_now = shard_epoch(sh);
    uint64_t feed_now = __atomic_load_n(&c->feed_epoch, __ATOMIC_ACQUIRE);
    wk__flight *f = sh->flights;
    while (f != NULL && !(f->hash == hash && f->key_len == key_len &&
                          memcmp(f->key, key, key_len) == 0)) {
        f = f->next;
    }
    if (f != NULL && (f->epoch != epoch_now || f->feed_epoch != feed_now)) {
        f = NULL; /* stale load: start a new one (registered in front of it) */
    }
    if (f != NULL) {
        /* A load of this key is under way: wait for it (the wait releases the shard lock,
         * so other keys of the shard are not held up) and share its answer. */
        f->users++;
        COUNT(c, flight_waits);
        while (!f->done) {
            pthread_cond_wait(&f->cond, &sh->mu);
        }
        wk_cache_entry *e = f->result != NULL ? wk_cache_entry_ref(f->result) : NULL;
        wk_status st = f->status;
        wk_error fe = f->err;
        flight_put(f);
        pthread_mutex_unlock(&sh->mu);
        if (e != NULL) {
            return deliver(c, e, out, err);
        }
        if (err != NULL) {
            *err = fe;
        }
        return st;
    }
    /* This get loads: register the record (key copied in, epochs of now) so that later misses
     * join it, then load with no lock held. */
    f = wk_alloc(c->alloc, sizeof *f + key_len);
    if (f == NULL) {
        pthread_mutex_unlock(&sh->mu);
        return wk_error_set(err, WK_ERR_NOMEM, 0, "cache: out of memory");
    }
    memset(f, 0, sizeof *f);
    f->alloc = c->alloc;
    if (pthread_cond_init(&f->cond, NULL) != 0) {
        pthread_mutex_unlock(&sh->mu);
        wk_free(c->alloc, f, sizeof *f + key_len);
        return wk_error_set(err, WK_ERR_NOMEM, 0, "cache: out of memory");
    }
    f->hash = hash;
    f->key_len = key_len;
    memcpy(f->key, key, key_len);
    f->users = 1;
    f->epoch = epoch_now;
    f->feed_epoch = feed_now;
    f->next = sh->flights;
    sh->flights = f;
    load_ctx l = {c, s, key, key_len, hash, sh, epoch_now, feed_now};
    pthread_mutex_unlock(&sh->mu);

    wk_cache_entry *e = NULL;
    wk_error lerr = {WK_OK, 0, NULL};
    wk_status st = load(&l, id, id_len, loader, loader_ctx, flags, &e, &lerr);

    /* Publish: keep the result locally only if nothing invalidated the key meanwhile, hand
     * it to the waiters (each takes its own reference), and unlink the record. */
    pthread_mutex_lock(&sh->mu);
    if (e != NULL && local_usable(c, wk__cache_now_ms()) && still_current(&l)) {
        wk__shard_insert(sh, e);
    }
    f->done = true;
    f->status = st;
    f->err = lerr;
    f->result = e != NULL ? wk_cache_entry_ref(e) : NULL;
    wk__flight **pp = &sh->flights;
    while (*pp != f) {
        pp = &(*pp)->next;
    }
    *pp = f->next;
    pthread_cond_broadcast(&f->cond);
    flight_put(f);
    pthread_mutex_unlock(&sh->mu);
    if (e != NULL) {
        return deliver(c, e, out, err);
    }
    if (err != NULL) {
        *err = lerr;
    }
    return st;
}

/* The get path for a built key: a lock-free local hit when the local tier is usable, else
 * get_locked. */
static wk_status get_key(wk_cache *c, const wk_schema *s, const char *key, size_t key_len,
                         uint64_t hash, const char *id, size_t id_len, wk_cache_loader loader,
                         void *loader_ctx, unsigned flags, wk_cache_entry **out, wk_error *err)
{
    int64_t now = wk__cache_now_ms();
    if (local_usable(c, now)) {
        wk_cache_entry *e = wk__shard_peek(shard_of(c, hash), hash, key, key_len, now);
        if (e != NULL) {
            return deliver(c, e, out, err);
        }
    }
    return get_locked(c, s, key, key_len, hash, id, id_len, loader, loader_ctx, flags, now, out,
                      err);
}

/* Public (wirekit/cache.h): the key is built on the stack (WK_CACHE_KEY_MAX). */
WK_API wk_status wk_cache_get(wk_cache *c, const wk_schema *s, const char *id, size_t id_len,
                              wk_cache_loader loader, void *loader_ctx, wk_cache_entry **out,
                              wk_error *err)
{
    char key[WK_CACHE_KEY_MAX];
    *out = NULL;
    size_t key_len = cache_key(c, s, id, id_len, key, sizeof key);
    if (key_len >= sizeof key) {
        return wk_error_set(err, WK_ERR_ARG, 0, "cache: key longer than 512 bytes");
    }
    return get_key(c, s, key, key_len, wk__cache_hash(key, key_len), id, id_len, loader,
                   loader_ctx, 0, out, err);
}

/* ---- asynchronous get --------------------------------------------------------------------- */

/* One wk_cache_get_async past the local tier: what the store's answer and the worker need.
 * Allocated from the cache's allocator with the key and the id behind it; freed by
 * async_finish, after `done` ran. */
typedef struct async_get {
    wk__cjob job; /* first: the worker's job is the request */
    wk_cache *c;
    const wk_schema *s;
    wk_cache_loader loader;
    void *loader_ctx;
    wk_cache_done_fn done;
    void *done_ctx;
    uint64_t hash;
    uint64_t epoch;      /* shard epoch when the get started */
    uint64_t feed_epoch; /* feed epoch when the get started */
    unsigned flags;      /* the worker's get_key flags (SKIP_STORE, ...) */
    bool remove;         /* the worker first removes a corrupt shared value */
    size_t size;         /* bytes allocated */
    size_t key_len, id_len;
    char *id; /* behind the key */
    char key[];
} async_get;

/* Answers the request, frees it, and tells wk_cache_free one request fewer is pending (the
 * last touch of the cache: it may be freed as soon as the lock is released). */
static void async_finish(async_get *a, wk_status st, wk_cache_entry *e, const wk_error *err)
{
    wk_cache *c = a->c;
    a->done(a->done_ctx, st, st == WK_OK ? e : NULL, err);
    wk_free(c->alloc, a, a->size);
    pthread_mutex_lock(&c->async_mu);
    if (--c->async_pending == 0) {
        pthread_cond_broadcast(&c->async_cv);
    }
    pthread_mutex_unlock(&c->async_mu);
}

/* Answers with a failure of status `st` described by `msg`. */
static void async_fail(async_get *a, wk_status st, const char *msg)
{
    wk_error e = {WK_OK, 0, NULL};
    wk_error_set(&e, st, 0, msg);
    async_finish(a, st, NULL, &e);
}

/* A worker's job: the synchronous get path for the request's key (local tier again,
 * single-flight, the loader), told by a->flags what the shared tier already answered. */
static void async_run(wk__cjob *j)
{
    async_get *a = (async_get *)j;
    wk_cache *c = a->c;
    if (a->remove) {
        remove_corrupt(c, a->key, a->key_len);
    }
    wk_cache_entry *e = NULL;
    wk_error err = {WK_OK, 0, NULL};
    wk_status st = get_key(c, a->s, a->key, a->key_len, a->hash, a->id, a->id_len, a->loader,
                           a->loader_ctx, a->flags, &e, &err);
    async_finish(a, st, e, &err);
}

/* The pool stopped (wk_cache_free) before a worker took the request. */
static void async_cancel(wk__cjob *j)
{
    async_fail((async_get *)j, WK_ERR_IO, "cache: freed before the get was answered");
}

/* Hands the request to a worker with get_key `flags`; answers it with an error when the
 * pool is stopping or cannot start a thread. */
static void async_to_worker(async_get *a, unsigned flags)
{
    a->flags = flags;
    a->job.run = async_run;
    a->job.cancel = async_cancel;
    if (!wk__cworkers_submit(&a->c->workers, &a->job)) {
        async_fail(a, WK_ERR_IO, "cache: no worker thread for the load (being freed?)");
    }
}

/* Counts the local miss of a request the store's thread answers (the synchronous path counts
 * it in get_locked) and, for a shared hit `e`, keeps it in the local tier under the rules of
 * every fill: the tier is usable and neither the key's shard nor the feed moved since the
 * get started. */
static void async_local_fill(async_get *a, wk_cache_entry *e)
{
    wk_cache *c = a->c;
    wk__shard *sh = shard_of(c, a->hash);
    load_ctx l = {c, a->s, a->key, a->key_len, a->hash, sh, a->epoch, a->feed_epoch};
    pthread_mutex_lock(&sh->mu);
    sh->misses++;
    if (e != NULL && (c->flags & WK_CACHE_NO_LOCAL) == 0 &&
        local_usable(c, wk__cache_now_ms()) && still_current(&l)) {
        wk__shard_insert(sh, e);
    }
    pthread_mutex_unlock(&sh->mu);
}

/* The shared tier failed the get (`serr`, or `msg` when the store said nothing) or refused
 * it: with a loader a worker answers (the store is not asked again), else the failure is the
 * answer, as load() gives it. */
static void async_store_failed(async_get *a, wk_status st, const wk_error *serr,
                               const char *msg)
{
    COUNT(a->c, shared_errors);
    if (a->loader != NULL) {
        async_to_worker(a, SKIP_STORE | STORE_FAILED);
        return;
    }
    async_local_fill(a, NULL);
    wk_error e = {WK_OK, 0, NULL};
    if (serr != NULL) {
        e = *serr;
    } else {
        wk_error_set(&e, st, 0, msg);
    }
    e.code = st;
    async_finish(a, st, NULL, &e);
}

/* The store's answer (on its thread): a hit is decoded, filled and delivered here; what
 * needs the loader goes to a worker: a miss as wk_cache_get (which asks the shared tier again
 * inside the key's single-flight record), the rest told what the shared tier said so that it
 * is not asked again (a tombstone, a failure, a value left in place); what needs neither is
 * answered here as load() would (NOT_FOUND, the store's failure, the undecodable value). */
static void on_fetched(void *ctx, wk_status st, const uint8_t *bytes, size_t len, bool found,
                       const wk_error *serr)
{
    async_get *a = ctx;
    wk_cache *c = a->c;
    if (st != WK_OK) {
        async_store_failed(a, st, serr, "cache: the shared tier failed");
        return;
    }
    int r = SHARED_MISS;
    wk_cache_entry *e = NULL;
    wk_status est = WK_OK;
    if (found) {
        load_ctx l = {c, a->s, a->key, a->key_len, a->hash, shard_of(c, a->hash), a->epoch,
                      a->feed_epoch};
        r = shared_entry(&l, bytes, len, &e, &est);
    }
    if (r == SHARED_MISS && a->loader != NULL) {
        /* wk_cache_get itself, Redis asked again under the key's single-flight record: the
         * misses of a stampede then wait for one load instead of each loading */
        async_to_worker(a, 0);
        return;
    }
    if (r == SHARED_MISS) {
        COUNT(c, shared_misses);
    }
    if (r == SHARED_HIT) {
        async_local_fill(a, e);
        wk_cache_entry *out = NULL;
        wk_error derr = {WK_OK, 0, NULL};
        wk_status dst = deliver(c, e, &out, &derr);
        async_finish(a, dst, out, &derr);
    } else if (r == SHARED_FAILED) { /* out of memory decoding it */
        async_local_fill(a, NULL);
        async_fail(a, WK_ERR_NOMEM, "cache: out of memory");
    } else if (r == SHARED_CORRUPT && (c->flags & WK_CACHE_REMOVE_CORRUPT) != 0) {
        a->remove = true; /* a store call: on the worker, which then loads (or NOT_FOUND) */
        async_to_worker(a, SKIP_STORE);
    } else if (r == SHARED_CORRUPT && a->loader != NULL) {
        async_to_worker(a, SKIP_STORE | SHARED_CORRUPT_LEFT);
    } else if (r == SHARED_CORRUPT) {
        async_local_fill(a, NULL);
        async_fail(a, est, WK_CACHE_UNDECODABLE " (written with another serializer or by "
                           "another program?); it is left in place");
    } else if (a->loader != NULL) { /* a tombstone: the loader's turn, without a fill */
        async_to_worker(a, SKIP_STORE | NO_FILL);
    } else {
        async_local_fill(a, NULL);
        async_fail(a, WK_ERR_NOT_FOUND, "not found");
    }
}

/* Public (wirekit/cache.h): the local tier on the calling thread (lock-free, then locked, as
 * wk_cache_get), then the store's fetch_async, or a worker when the store has none. */
WK_API wk_status wk_cache_get_async(wk_cache *c, const wk_schema *s, const char *id,
                                    size_t id_len, wk_cache_loader loader, void *loader_ctx,
                                    wk_cache_done_fn done, void *done_ctx)
{
    char key[WK_CACHE_KEY_MAX];
    wk_error err = {WK_OK, 0, NULL};
    size_t key_len = cache_key(c, s, id, id_len, key, sizeof key);
    if (key_len >= sizeof key) {
        wk_error_set(&err, WK_ERR_ARG, 0, "cache: key longer than 512 bytes");
        done(done_ctx, WK_ERR_ARG, NULL, &err);
        return WK_ERR_ARG;
    }
    uint64_t hash = wk__cache_hash(key, key_len);
    wk__shard *sh = shard_of(c, hash);
    uint64_t feed = __atomic_load_n(&c->feed_epoch, __ATOMIC_ACQUIRE);
    int64_t now = wk__cache_now_ms();
    wk_cache_entry *e = local_usable(c, now) ? wk__shard_peek(sh, hash, key, key_len, now) : NULL;
    uint64_t epoch = 0;
    if (e == NULL && (c->flags & WK_CACHE_NO_LOCAL) != 0) {
        epoch = shard_epoch(sh);
    } else if (e == NULL) {
        pthread_mutex_lock(&sh->mu);
        if (local_usable(c, now)) {
            e = wk__shard_find(sh, hash, key, key_len, now);
        }
        if (e != NULL) {
            sh->hits++;
            wk_cache_entry_ref(e);
        }
        epoch = shard_epoch(sh);
        pthread_mutex_unlock(&sh->mu);
    }
    if (e != NULL || (c->store == NULL && loader == NULL)) {
        /* a local hit, or nothing to ask (the synchronous path answers without blocking) */
        wk_cache_entry *out = NULL;
        wk_status st = e != NULL ? deliver(c, e, &out, &err)
                                 : get_key(c, s, key, key_len, hash, id, id_len, NULL, NULL, 0,
                                           &out, &err);
        done(done_ctx, st, out, &err);
        return st;
    }
    size_t size = sizeof(async_get) + key_len + 1 + id_len;
    async_get *a = wk_alloc(c->alloc, size);
    if (a == NULL) {
        wk_error_set(&err, WK_ERR_NOMEM, 0, "cache: out of memory");
        done(done_ctx, WK_ERR_NOMEM, NULL, &err);
        return WK_ERR_NOMEM;
    }
    memset(a, 0, sizeof *a);
    a->c = c;
    a->s = s;
    a->loader = loader;
    a->loader_ctx = loader_ctx;
    a->done = done;
    a->done_ctx = done_ctx;
    a->hash = hash;
    a->epoch = epoch;
    a->feed_epoch = feed;
    a->size = size;
    a->key_len = key_len;
    memcpy(a->key, key, key_len + 1);
    a->id = a->key + key_len + 1;
    a->id_len = id_len;
    if (id_len != 0) {
        memcpy(a->id, id, id_len);
    }
    pthread_mutex_lock(&c->async_mu);
    c->async_pending++;
    pthread_mutex_unlock(&c->async_mu);
    if (c->store == NULL || c->store->fetch_async == NULL) {
        async_to_worker(a, 0);
        return WK_OK;
    }
    wk_status st = c->store->fetch_async(c->store->self, a->key, key_len, on_fetched, a);
    if (st != WK_OK) { /* refused: as a failure of the shared tier (`a` is gone after it) */
        async_store_failed(a, st, NULL, "cache: the shared tier refused the get");
        return loader != NULL ? WK_OK : st;
    }
    return WK_OK;
}

/* Public: enters an EBR critical section, so peeked entries stay valid until unpin. */
WK_API bool wk_cache_pin(wk_cache *c)
{
    return wk__ebr_pin(&c->ebr);
}

/* Public: leaves the section wk_cache_pin entered. */
WK_API void wk_cache_unpin(wk_cache *c)
{
    wk__ebr_unpin(&c->ebr);
}

/* Public: the local copy without a reference (valid while pinned), or NULL: never loads. */
WK_API const wk_cache_entry *wk_cache_peek(wk_cache *c, const wk_schema *s, const char *id,
                                           size_t id_len)
{
    char key[WK_CACHE_KEY_MAX];
    size_t key_len = cache_key(c, s, id, id_len, key, sizeof key);
    int64_t now = wk__cache_now_ms();
    if (key_len >= sizeof key || !local_usable(c, now)) {
        return NULL;
    }
    uint64_t hash = wk__cache_hash(key, key_len);
    return wk__shard_borrow(shard_of(c, hash), hash, key, key_len, now);
}

/* What a multi-get knows of each key it asked the shared tier for. */
enum { TAKE_NONE, TAKE_DONE, TAKE_MISS, TAKE_CORRUPT, TAKE_CORRUPT_LEFT };

/* A multi-get's state, for the values the shared tier hands over (take_shared). */
typedef struct many_ctx {
    wk_cache *c;
    const wk_schema *s;
    const wk_slice *krefs;
    const uint64_t *hashes, *epochs;
    uint64_t feed;
    const size_t *miss; /* the j-th key asked is key miss[j] of the call */
    uint8_t *took;      /* TAKE_* per key asked */
    wk_cache_entry **refs;
    wk_status *statuses;
} many_ctx;

/* The value of the j-th key asked becomes its answer (and a local entry when still current),
 * or a miss. Calls no store function (fetch_each forbids it). */
static wk_status take_shared(void *ctx, size_t j, const uint8_t *bytes, size_t len)
{
    many_ctx *m = ctx;
    wk_cache *c = m->c;
    size_t i = m->miss[j];
    wk__shard *sh = shard_of(c, m->hashes[i]);
    load_ctx l = {c, m->s, m->krefs[i].ptr, m->krefs[i].len, m->hashes[i], sh, m->epochs[i],
                  m->feed};
    wk_cache_entry *e = NULL;
    wk_status est;
    int r = shared_entry(&l, bytes, len, &e, &est);
    if (r != SHARED_HIT) {
        m->took[j] = r == SHARED_CORRUPT ? TAKE_CORRUPT : TAKE_MISS;
        if (r == SHARED_CORRUPT) {
            m->statuses[i] = est; /* why it does not decode */
        }
        return WK_OK;
    }
    if ((c->flags & WK_CACHE_NO_LOCAL) == 0) {
        pthread_mutex_lock(&sh->mu);
        if (local_usable(c, wk__cache_now_ms()) && still_current(&l)) {
            wk__shard_insert(sh, e);
        }
        pthread_mutex_unlock(&sh->mu);
    }
    m->statuses[i] = deliver(c, e, &m->refs[i], NULL);
    m->took[j] = TAKE_DONE;
    return WK_OK;
}

/* Public (wirekit/cache.h): local hits first, then one fetch_each round trip for every key
 * the local tier missed, then the loader for each key still missing (as wk_cache_get would,
 * single-flight included). */
WK_API wk_status wk_cache_get_many(wk_cache *c, const wk_schema *s, size_t n,
                                   const wk_slice *ids, wk_cache_loader loader,
                                   void *loader_ctx, wk_cache_entry **refs, wk_status *statuses,
                                   wk_error *err)
{
    wk_status first = WK_OK;
    if (n == 0) {
        return WK_OK;
    }
    /* One scratch block from the cache's allocator for every per-id array (the arrays with
     * 8-byte members first, so each stays aligned). */
    size_t per_id = 2 * sizeof(wk_slice) + sizeof(wk_buf) + 2 * sizeof(uint64_t) +
                    sizeof(size_t) + WK_CACHE_KEY_MAX + sizeof(bool) + sizeof(uint8_t);
    size_t block_bytes;
    if (!wk_size_mul(n, per_id, &block_bytes)) {
        return wk_error_set(err, WK_ERR_ARG, 0, "cache: too many ids");
    }
    uint8_t *block = wk_alloc(c->alloc, block_bytes);
    if (block == NULL) {
        return wk_error_set(err, WK_ERR_NOMEM, 0, "cache: out of memory");
    }
    wk_slice *krefs = (wk_slice *)block;
    wk_slice *mk = krefs + n;
    wk_buf *vals = (wk_buf *)(mk + n);
    uint64_t *hashes = (uint64_t *)(vals + n);
    uint64_t *epochs = hashes + n;
    size_t *miss = (size_t *)(epochs + n);
    char *keys = (char *)(miss + n);
    bool *found = (bool *)(keys + n * WK_CACHE_KEY_MAX);
    uint8_t *took = (uint8_t *)(found + n);
    memset(took, 0, n * sizeof *took); /* the rest is written before it is read */
    /* Pass 1, local: build every key, answer what the local tier holds (lock-free, then
     * locked), and note each miss with the shard epoch it was seen under, so that a value the
     * shared tier returns is kept locally only if that key was not invalidated meanwhile. */
    size_t nmiss = 0;
    uint64_t feed = __atomic_load_n(&c->feed_epoch, __ATOMIC_ACQUIRE);
    for (size_t i = 0; i < n; i++) {
        refs[i] = NULL;
        statuses[i] = WK_OK;
        char *key = keys + i * WK_CACHE_KEY_MAX;
        size_t kl = cache_key(c, s, ids[i].ptr, ids[i].len, key, WK_CACHE_KEY_MAX);
        if (kl >= WK_CACHE_KEY_MAX) {
            statuses[i] = WK_ERR_ARG;
            if (first == WK_OK) {
                first = wk_error_set(err, WK_ERR_ARG, i, "cache: key longer than 512 bytes");
            }
            continue;
        }
        hashes[i] = wk__cache_hash(key, kl);
        krefs[i].ptr = key;
        krefs[i].len = kl;
        wk__shard *sh = shard_of(c, hashes[i]);
        int64_t now = wk__cache_now_ms();
        wk_cache_entry *e = local_usable(c, now)
                                ? wk__shard_peek(sh, hashes[i], key, kl, now)
                                : NULL;
        if (e == NULL && (c->flags & WK_CACHE_NO_LOCAL) != 0) {
            epochs[i] = shard_epoch(sh); /* no local tier: nothing to look up under the lock */
        } else if (e == NULL) {
            pthread_mutex_lock(&sh->mu);
            if (local_usable(c, now)) {
                e = wk__shard_find(sh, hashes[i], key, kl, now);
            }
            if (e != NULL) {
                sh->hits++;
                wk_cache_entry_ref(e);
            }
            epochs[i] = shard_epoch(sh);
            pthread_mutex_unlock(&sh->mu);
        }
        if (e != NULL) {
            statuses[i] = deliver(c, e, &refs[i], NULL);
        } else {
            miss[nmiss++] = i;
        }
    }
    /* Pass 2, shared: one round trip for all the misses; the keys it answers leave the miss
     * list, corrupt values are removed from the store. */
    unsigned flags = 0;
    if (c->store != NULL && nmiss > 0) {
        for (size_t j = 0; j < nmiss; j++) {
            mk[j] = krefs[miss[j]];
        }
        many_ctx m = {c, s, krefs, hashes, epochs, feed, miss, took, refs, statuses};
        wk_error serr;
        wk_status st;
        if (c->store->fetch_each != NULL) { /* each value decoded where the store read it */
            st = c->store->fetch_each(c->store->self, nmiss, mk, take_shared, &m, &serr);
        } else {
            for (size_t j = 0; j < nmiss; j++) {
                wk_buf_init(&vals[j], c->alloc, 0);
                found[j] = false;
            }
            st = c->store->fetch(c->store->self, nmiss, mk, vals, found, &serr);
            for (size_t j = 0; j < nmiss; j++) {
                if (st == WK_OK && found[j]) {
                    (void)take_shared(&m, j, vals[j].data, vals[j].len);
                }
                wk_buf_free(&vals[j]);
            }
        }
        flags = SKIP_STORE;
        if (st != WK_OK) {
            COUNT(c, shared_errors);
            flags |= STORE_FAILED;
        }
        size_t left = 0;
        for (size_t j = 0; j < nmiss; j++) {
            size_t i = miss[j];
            if (took[j] == TAKE_DONE) {
                continue;
            }
            if (took[j] == TAKE_CORRUPT && (c->flags & WK_CACHE_REMOVE_CORRUPT) == 0) {
                if (loader == NULL) { /* left in place and reported, as by wk_cache_get */
                    if (first == WK_OK) {
                        first = wk_error_set(err, statuses[i], i,
                                             WK_CACHE_UNDECODABLE " (written with another "
                                             "serializer or by another program?); it is "
                                             "left in place");
                    }
                    continue;
                }
                statuses[i] = WK_OK;
                took[j] = TAKE_CORRUPT_LEFT;
            } else if (took[j] == TAKE_CORRUPT) {
                remove_corrupt(c, krefs[i].ptr, krefs[i].len);
            } else if (took[j] == TAKE_NONE && st == WK_OK) {
                COUNT(c, shared_misses);
            }
            took[left] = took[j]; /* left <= j: a slot already read */
            miss[left++] = i;
        }
        nmiss = left;
    }
    /* Pass 3, loader: the keys still missing take the single-key path (single-flight, negative
     * caching), told that the shared tier was already asked (SKIP_STORE) and whether it
     * failed. NOT_FOUND is an answer, not a failure of the call. */
    for (size_t j = 0; j < nmiss; j++) {
        size_t i = miss[j];
        wk_error e1;
        unsigned kf = flags | (took[j] == TAKE_CORRUPT_LEFT ? SHARED_CORRUPT_LEFT : 0u);
        statuses[i] = get_key(c, s, krefs[i].ptr, krefs[i].len, hashes[i], ids[i].ptr,
                              ids[i].len, loader, loader_ctx, kf, &refs[i], &e1);
        if (statuses[i] != WK_OK && statuses[i] != WK_ERR_NOT_FOUND && first == WK_OK) {
            first = statuses[i];
            if (err != NULL) {
                *err = e1;
            }
        }
    }
    wk_free(c->alloc, block, block_bytes);
    return first;
}

/* ---- put / invalidate --------------------------------------------------------------------- */

/* Drops the local copy of `key` and inserts `replacement` if given; returns whether the
 * replacement was kept (false also when the local tier is not in use). */
static bool drop_local(wk_cache *c, const char *key, size_t key_len, uint64_t hash,
                       wk_cache_entry *replacement)
{
    wk__shard *sh = shard_of(c, hash);
    bool kept = false;
    pthread_mutex_lock(&sh->mu);
    wk__shard_remove(sh, hash, key, key_len);
    __atomic_fetch_add(&sh->epoch, 1, __ATOMIC_RELEASE);
    if (replacement != NULL && local_usable(c, wk__cache_now_ms())) {
        kept = wk__shard_insert(sh, replacement);
    }
    pthread_mutex_unlock(&sh->mu);
    return kept;
}

/* Public: serializes obj once, replaces the local copy, then writes the shared tier (which
 * broadcasts the invalidation to other processes); the local copy is kept only when the
 * shared write succeeded, so a failed put leaves no value here that others do not see. */
WK_API wk_status wk_cache_put(wk_cache *c, const wk_schema *s, const char *id, size_t id_len,
                              const void *obj, uint32_t ttl_ms, wk_error *err)
{
    char key[WK_CACHE_KEY_MAX];
    size_t key_len = cache_key(c, s, id, id_len, key, sizeof key);
    if (key_len >= sizeof key) {
        return wk_error_set(err, WK_ERR_ARG, 0, "cache: key longer than 512 bytes");
    }
    uint64_t hash = wk__cache_hash(key, key_len);
    wk_buf b;
    wk_buf_init(&b, c->alloc, 0);
    wk_status st = c->ser->encode(s, obj, &b, err);
    wk_cache_entry *e = NULL;
    if (st == WK_OK && b.len > c->max_entry) {
        st = wk_error_set(err, WK_ERR_LIMIT, 0,
                          "cache: the object is larger than max_entry_bytes");
    }
    if (st == WK_OK) {
        e = wk__cache_entry_new(c->alloc, c->ser, s, key, key_len, hash, b.data, b.len, false,
                                wk__cache_now_ms() + c->local_ttl_ms, &st);
        if (e == NULL) {
            wk_error_set(err, st, 0, "cache: the object does not decode back");
        }
    }
    if (e == NULL) {
        wk_buf_free(&b);
        return st;
    }
    bool kept = drop_local(c, key, key_len, hash, e);
    if (c->store == NULL && !kept && (c->flags & WK_CACHE_NO_LOCAL) == 0) {
        st = wk_error_set(err, WK_ERR_LIMIT, 0,
                          "cache: the entry is larger than one local shard may hold "
                          "(max_bytes / shards); it was not kept");
    }
    if (c->store != NULL) {
        st = c->store->store(c->store->self, key, key_len, b.data, b.len,
                             ttl_ms != 0 ? ttl_ms : c->shared_ttl_ms, WK_CACHE_STORE_REPLACE,
                             err);
        if (st != WK_OK) {
            COUNT(c, shared_errors);
        }
        /* Again after the shared write: a get that read the old value from the shared tier
         * while it ran may have filled the local tier with it. */
        drop_local(c, key, key_len, hash, st == WK_OK ? e : NULL);
    }
    wk_cache_entry_unref(e);
    wk_buf_free(&b);
    return st;
}

/* Public: drops the local copy, then asks the store for a tombstone (tombstone_ms), which
 * keeps late fills of the old value out of the shared tier. */
WK_API wk_status wk_cache_invalidate(wk_cache *c, const wk_schema *s, const char *id,
                                     size_t id_len, wk_error *err)
{
    char key[WK_CACHE_KEY_MAX];
    size_t key_len = cache_key(c, s, id, id_len, key, sizeof key);
    if (key_len >= sizeof key) {
        return wk_error_set(err, WK_ERR_ARG, 0, "cache: key longer than 512 bytes");
    }
    uint64_t hash = wk__cache_hash(key, key_len);
    drop_local(c, key, key_len, hash, NULL);
    COUNT(c, invalidations);
    if (c->store != NULL) {
        wk_status st = c->store->invalidate(c->store->self, key, key_len, c->tombstone_ms, err);
        /* Again: a get that read the old value from the shared tier while the invalidation
         * ran may have filled the local tier with it. */
        drop_local(c, key, key_len, hash, NULL);
        if (st != WK_OK) {
            COUNT(c, shared_errors);
            return st;
        }
    }
    return WK_OK;
}

/* ---- stats -------------------------------------------------------------------------------- */

/* Public: sums the cache's counters and every shard's; a snapshot, not atomic as a whole. */
WK_API void wk_cache_get_stats(wk_cache *c, wk_cache_stats *out)
{
    memset(out, 0, sizeof *out);
    for (uint32_t i = 0; i < c->nshards; i++) {
        wk__shard *sh = &c->shards[i];
        pthread_mutex_lock(&sh->mu);
        out->local_hits += sh->hits;
        out->local_misses += sh->misses;
        out->evictions += sh->evictions;
        out->expirations += sh->expirations;
        out->local_entries += sh->entries;
        out->local_bytes += sh->bytes;
        pthread_mutex_unlock(&sh->mu);
    }
    out->local_hits += wk__ebr_hits(&c->ebr);
#define LOAD(field) out->field = __atomic_load_n(&c->field, __ATOMIC_RELAXED)
    LOAD(shared_hits);
    LOAD(shared_misses);
    LOAD(negative_hits);
    LOAD(loads);
    LOAD(load_not_found);
    LOAD(load_errors);
    LOAD(shared_errors);
    LOAD(fallbacks);
    LOAD(corrupt);
    LOAD(invalidations);
    LOAD(flight_waits);
    LOAD(feed_resets);
#undef LOAD
}
