/*
 * Where it sits: cache.c's get path -> wk__shard_peek here (lock-free) -> on a miss,
 * cache.c takes the shard lock and uses wk__shard_find / insert / remove here; entries are
 * built by cache_entry.c and their references kept in per-thread slots by cache_thread.c.
 *
 * The local tier: one shard of the in-process cache, built so that hits from many threads do
 * not serialize. Each shard is a chained hash table whose chains are read without a lock and
 * changed only under the shard's mutex; eviction is CLOCK (second chance): a hit sets the
 * entry's "referenced" bit (only when it is clear, so a hot entry's line is not written on
 * every hit) and the hand, moved by inserts that overflow the bounds, clears set bits and
 * evicts the first entry found clear. The reference a hit hands out is a slot in its
 * thread's own line (cache_thread.c), not a count. A hit therefore writes only its thread's
 * own cache lines (and the entry's bit when clear): no lock, no list to reorder, no atomic
 * read-modify-write but the epoch announcement.
 *
 * Memory safety without the lock is epoch-based reclamation per cache: a reader announces the
 * current epoch in its thread's slot while it walks a chain; an unlinked entry keeps its
 * chain link and the shard's hold (the bias in its count), goes on the shard's retired list
 * stamped with the epoch, and loses that hold only once the epoch has advanced twice, which
 * needs every announced reader to have moved on, and no thread's reference slot holds it
 * (slots are filled inside the announcement, so once the grace period is over a scan that
 * finds none is final). A reader thus never takes a reference to a freed entry. The
 * announcement and every chain access are sequentially consistent, so a reader that
 * announced before a writer looked at its slot sees the unlink or is waited for.
 * Threads past WK__EBR_SLOTS (slot ids are process-wide and recycled when a thread exits)
 * take the locked path, which stays correct because entries are freed only under the lock.
 *
 * The table never resizes: its bucket count is fixed at creation from the shard's entry
 * bound. Retired entries are reclaimed by writers once 16 are pending beyond those a slot
 * still held at the last pass (or their bytes reach an eighth of the shard's bound) and their
 * grace period is over; until then they are memory above the bounds (the exact statement is
 * in wirekit/cache.h). Writers never wait for readers, so a reader that lingers (descheduled
 * mid-walk, or in a long pinned section) holds back memory, never another thread.
 */
#include <stdlib.h>
#include <string.h>

#include "cache/cache_internal.h"

/* ---- reclamation domain ---- */

/* The reader slots, with room to align them to a cache line by hand. */
#define SLOTS_BYTES (WK__EBR_SLOTS * sizeof(wk__rslot) + 63)

/* Contract in cache_internal.h: the epoch starts at 2, so that 0 in a slot means "not reading"
 * and a retire epoch two behind is never 0. */
wk_status wk__ebr_init(wk__ebr *d, const wk_allocator *alloc)
{
    memset(d, 0, sizeof *d);
    d->epoch = 2;
    d->alloc = alloc;
    d->block = wk_alloc(alloc, SLOTS_BYTES); /* any allocator: aligned by hand */
    if (d->block == NULL) {
        return WK_ERR_NOMEM;
    }
    memset(d->block, 0, SLOTS_BYTES);
    d->slots = (wk__rslot *)(((uintptr_t)d->block + 63) & ~(uintptr_t)63);
    return WK_OK;
}

/* Contract in cache_internal.h. */
void wk__ebr_free(wk__ebr *d)
{
    wk_free(d->alloc, d->block, SLOTS_BYTES);
    d->block = NULL;
    d->slots = NULL;
}

/* Contract in cache_internal.h: the sum of every slot's lock-free hit count. */
uint64_t wk__ebr_hits(const wk__ebr *d)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < WK__EBR_SLOTS; i++) {
        n += __atomic_load_n(&d->slots[i].hits, __ATOMIC_RELAXED);
    }
    return n;
}

/* Advances the epoch when every reading thread announced the current one. */
static void ebr_try_advance(wk__ebr *d)
{
    uint64_t g = __atomic_load_n(&d->epoch, __ATOMIC_SEQ_CST);
    uint32_t hi = __atomic_load_n(&wk__slot_hi, __ATOMIC_SEQ_CST);
    for (uint32_t i = 0; i < hi; i++) {
        uint64_t v = __atomic_load_n(&d->slots[i].active, __ATOMIC_SEQ_CST);
        if (v != 0 && v != g) {
            return;
        }
    }
    __atomic_compare_exchange_n(&d->epoch, &g, g + 1, false, __ATOMIC_SEQ_CST,
                                __ATOMIC_SEQ_CST);
}

/* ---- shard ---- */

/* A chain link, loaded as the readers load it (sequentially consistent: see the top). */
static inline wk_cache_entry *ld(wk_cache_entry *const *p)
{
    return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

/* A chain link, stored under the shard lock so that a lock-free reader sees it whole. */
static inline void st(wk_cache_entry **p, wk_cache_entry *v)
{
    __atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

/* Contract in cache_internal.h: the bucket count is the power of two at or above the entry
 * bound, at least 8 and at most 2^24 (fixed: the table never resizes, see the top). */
wk_status wk__shard_init(wk__shard *sh, const wk_allocator *alloc, size_t max_entries,
                         size_t max_bytes, wk__ebr *ebr)
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
    sh->ebr = ebr;
    sh->ring.next = &sh->ring;
    sh->ring.prev = &sh->ring;
    sh->hand = &sh->ring;
    sh->max_entries = max_entries;
    sh->max_bytes = max_bytes;
    return WK_OK;
}

/* Drops the shard's hold (the bias) on retired entries whose grace period is over and that
 * no thread's slot holds; those a slot still holds stay for a later pass. With `all` (the
 * cache is being freed) every retired entry goes, the held ones to the orphan list. */
static void reclaim(wk__shard *sh, bool all)
{
    if (!all) {
        /* two tries: an entry retired in the current epoch needs the epoch to move twice */
        ebr_try_advance(sh->ebr);
        ebr_try_advance(sh->ebr);
        wk__orphans_sweep(); /* a freed cache's entries whose holders let go */
    }
    uint64_t g = __atomic_load_n(&sh->ebr->epoch, __ATOMIC_SEQ_CST);
    wk_cache_entry **pp = &sh->retired;
    sh->nheld = 0;
    sh->held_bytes = 0;
    while (*pp != NULL) {
        wk_cache_entry *e = *pp;
        if (!all && e->retire_epoch + 2 > g) {
            pp = &e->next; /* grace period not over: a reader may still stand on it */
            continue;
        }
        /* Only after the grace period is the slot scan final: slots are filled inside the
         * announcement, so no new slot can take e now. */
        bool held = wk__refs_held(e);
        if (held && !all) {
            sh->nheld++;
            sh->held_bytes += e->charge;
            pp = &e->next;
            continue;
        }
        *pp = e->next;
        sh->nretired--;
        sh->retired_bytes -= e->charge;
        e->retired = false;
        if (held) {
            wk__refs_orphan(e); /* the shard is going away but a thread still holds it */
        } else {
            wk__entry_unbias(e);
        }
    }
}

/* Unlinks e from its chain and the CLOCK ring (shard lock held) and retires it, stamped with
 * the current epoch; it keeps its own chain link so that a reader standing on it walks on. */
static void unlink_entry(wk__shard *sh, wk_cache_entry *e)
{
    wk_cache_entry **pp = &sh->buckets[e->hash & sh->mask];
    while (ld(pp) != e) {
        pp = &(*pp)->hnext;
    }
    st(pp, ld(&e->hnext)); /* e->hnext stays: a reader standing on e walks on */
    if (sh->hand == e) {
        sh->hand = e->next;
    }
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->in_local = false;
    sh->entries--;
    sh->bytes -= e->charge;
    e->retire_epoch = __atomic_load_n(&sh->ebr->epoch, __ATOMIC_SEQ_CST);
    e->next = sh->retired;
    e->retired = true;
    sh->retired = e;
    sh->nretired++;
    sh->retired_bytes += e->charge;
}

/* Reclaims once 16 entries (or an eighth of the bytes) are pending beyond those the last pass
 * found held by a thread's slot. */
static void maybe_reclaim(wk__shard *sh)
{
    if (sh->nretired >= sh->nheld + 16 || sh->retired_bytes > sh->held_bytes + sh->max_bytes / 8) {
        reclaim(sh, false);
    }
}

/* Contract in cache_internal.h: every entry retired, the shard's epoch bumped. */
void wk__shard_clear(wk__shard *sh)
{
    while (sh->ring.next != &sh->ring) {
        unlink_entry(sh, sh->ring.next);
    }
    __atomic_fetch_add(&sh->epoch, 1, __ATOMIC_RELEASE); /* read without the lock by loads */
    reclaim(sh, false);
}

/* Contract in cache_internal.h: at destruction every retired entry is released, held or not
 * (no reader can remain). */
void wk__shard_free(wk__shard *sh)
{
    while (sh->ring.next != &sh->ring) {
        unlink_entry(sh, sh->ring.next);
    }
    reclaim(sh, true);
    wk_free(sh->alloc, sh->buckets, (sh->mask + 1) * sizeof *sh->buckets);
    pthread_mutex_destroy(&sh->mu);
}

/* Equal keys of the same length `n`: 8-byte loads (the last one overlapping) instead of a
 * memcmp call, for the short keys a cache holds. */
static inline bool key_eq(const char *a, const char *b, size_t n)
{
    const uint8_t *x = (const uint8_t *)a, *y = (const uint8_t *)b;
    if (n < 8) { /* no memcmp call: the hit path stays a leaf */
        if (n >= 4) {
            return wk__rd32(x) == wk__rd32(y) && wk__rd32(x + n - 4) == wk__rd32(y + n - 4);
        }
        for (size_t i = 0; i < n; i++) {
            if (x[i] != y[i]) {
                return false;
            }
        }
        return true;
    }
    for (size_t i = 0; i + 8 < n; i += 8) {
        if (wk__rd64(x + i) != wk__rd64(y + i)) {
            return false;
        }
    }
    return wk__rd64(x + n - 8) == wk__rd64(y + n - 8);
}

/* The entry of (hash, key) on its chain, or NULL; safe without the lock inside an epoch
 * announcement. */
static inline wk_cache_entry *lookup(wk__shard *sh, uint64_t hash, const char *key,
                                     size_t key_len)
{
    for (wk_cache_entry *e = ld(&sh->buckets[hash & sh->mask]); e != NULL; e = ld(&e->hnext)) {
        if (e->hash == hash && e->key_len == key_len && key_eq(e->key, key, key_len)) {
            return e;
        }
    }
    return NULL;
}

/* Sets the CLOCK bit only when it is clear, so a hot entry's line is not written every hit. */
static inline void mark_referenced(wk_cache_entry *e)
{
    if (__atomic_load_n(&e->clock, __ATOMIC_RELAXED) == 0) {
        __atomic_store_n(&e->clock, 1, __ATOMIC_RELAXED);
    }
}

/* Announces the current epoch in this thread's slot. An exchange rather than a plain store
 * and a full fence: it orders the announcement before the chain loads that follow (the
 * store-load order the reclamation needs) in one instruction. */
static inline void ebr_enter(wk__ebr *d, wk__rslot *slot)
{
    (void)__atomic_exchange_n(&slot->active, __atomic_load_n(&d->epoch, __ATOMIC_SEQ_CST),
                              __ATOMIC_SEQ_CST);
}

/* Leaves the read section (release: the walk's loads happen before it). */
static inline void ebr_exit(wk__rslot *slot)
{
    __atomic_store_n(&slot->active, 0, __ATOMIC_RELEASE);
}

/* One lock-free hit in this thread's slot: only this thread writes it, so no atomic add. */
static inline void count_hit(wk__rslot *slot)
{
    __atomic_store_n(&slot->hits, __atomic_load_n(&slot->hits, __ATOMIC_RELAXED) + 1,
                     __ATOMIC_RELAXED);
}

/* The first lock-free hit of a thread: gives it an id, then the hit (NULL without one). */
static __attribute__((noinline)) wk_cache_entry *
peek_first(wk__shard *sh, uint64_t hash, const char *key, size_t key_len, int64_t now)
{
    return wk__my_slot() >= 0 ? wk__shard_peek(sh, hash, key, key_len, now) : NULL;
}

/* Contract in cache_internal.h: the lock-free hit. A thread without a slot id (or past
 * WK__EBR_SLOTS) gets NULL and takes the locked path. */
wk_cache_entry *wk__shard_peek(wk__shard *sh, uint64_t hash, const char *key, size_t key_len,
                               int64_t now)
{
    /* no call on the way of a hit: the function then saves no register */
    int id = wk__tls_slot;
    if (__builtin_expect(id <= 0, 0)) {
        return id == 0 ? peek_first(sh, hash, key, key_len, now) : NULL;
    }
    wk__rslot *slot = &sh->ebr->slots[id - 1];
    bool pinned = slot->pins != 0; /* inside wk__ebr_pin: already announced */
    if (!pinned) {
        ebr_enter(sh->ebr, slot);
    }
    wk_cache_entry *e = lookup(sh, hash, key, key_len);
    if (e != NULL && e->expires_ms > now) {
        wk__ref_take(wk__tls_top, e); /* inside the section: see wk__tslot */
        mark_referenced(e);
    } else {
        e = NULL; /* an expired entry is dropped by the locked path */
    }
    if (!pinned) {
        ebr_exit(slot);
    }
    if (e != NULL) {
        count_hit(slot);
    }
    return e;
}

/* Contract in cache_internal.h: pins nest; only the outermost announces. */
bool wk__ebr_pin(wk__ebr *d)
{
    int id = wk__my_slot();
    if (id < 0) {
        return false;
    }
    wk__rslot *slot = &d->slots[id];
    if (slot->pins++ == 0) {
        ebr_enter(d, slot);
    }
    return true;
}

/* Contract in cache_internal.h. */
void wk__ebr_unpin(wk__ebr *d)
{
    int id = wk__my_slot();
    if (id < 0) {
        return;
    }
    wk__rslot *slot = &d->slots[id];
    if (slot->pins != 0 && --slot->pins == 0) {
        ebr_exit(slot);
    }
}

/* Contract in cache_internal.h: a hit without a reference, for a pinned caller. */
const wk_cache_entry *wk__shard_borrow(wk__shard *sh, uint64_t hash, const char *key,
                                       size_t key_len, int64_t now)
{
    int id = wk__my_slot();
    if (id < 0) {
        return NULL;
    }
    wk__rslot *slot = &sh->ebr->slots[id];
    if (slot->pins == 0) {
        return NULL; /* not inside a pinned section: nothing would keep the entry */
    }
    wk_cache_entry *e = lookup(sh, hash, key, key_len);
    if (e == NULL || e->expires_ms <= now || e->negative) {
        return NULL;
    }
    mark_referenced(e);
    count_hit(slot);
    return e;
}

/* Contract in cache_internal.h: the locked lookup (no reference taken: the caller holds the
 * lock and takes one); an expired entry is removed and reported absent. */
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
        maybe_reclaim(sh);
        return NULL;
    }
    mark_referenced(e);
    return e;
}

/* Contract in cache_internal.h: shard lock held. */
bool wk__shard_remove(wk__shard *sh, uint64_t hash, const char *key, size_t key_len)
{
    wk_cache_entry *e = lookup(sh, hash, key, key_len);
    if (e == NULL) {
        return false;
    }
    unlink_entry(sh, e);
    maybe_reclaim(sh);
    return true;
}

/* Evicts with the CLOCK hand until the shard is within its bounds. Readers may set bits
 * behind the hand while it turns, so after two full turns it evicts regardless. */
static void evict(wk__shard *sh)
{
    size_t steps = 0;
    while (sh->entries > sh->max_entries || sh->bytes > sh->max_bytes) {
        wk_cache_entry *e = sh->hand;
        if (e == &sh->ring) {
            e = e->next;
        }
        sh->hand = e->next;
        /* Second chance: a referenced entry loses its bit and is passed over. The step bound
         * ends the sweep even while readers keep setting bits (two full turns at most). */
        if (__atomic_load_n(&e->clock, __ATOMIC_RELAXED) != 0 && steps++ < 2 * sh->entries) {
            __atomic_store_n(&e->clock, 0, __ATOMIC_RELAXED);
            continue;
        }
        sh->evictions++;
        unlink_entry(sh, e);
    }
}

/* Contract in cache_internal.h: replaces an entry of the same key, then evicts to the bounds;
 * false (nothing kept) when the entry alone exceeds the shard's byte bound. */
bool wk__shard_insert(wk__shard *sh, wk_cache_entry *e)
{
    wk_cache_entry *old = lookup(sh, e->hash, e->key, e->key_len);
    if (old != NULL) {
        unlink_entry(sh, old);
    }
    if (e->charge > sh->max_bytes || sh->max_entries == 0) {
        maybe_reclaim(sh);
        return false;
    }
    if (e->retired) {
        /* unlinked from this shard moments ago (a put of the entry a get returned): take it
         * off the retired list and keep the shard's reference it still holds */
        wk_cache_entry **pp = &sh->retired;
        while (*pp != e) {
            pp = &(*pp)->next;
        }
        *pp = e->next;
        e->retired = false;
        sh->nretired--;
        sh->retired_bytes -= e->charge;
    } else {
        __atomic_fetch_add(&e->refs, WK__REF_BIAS, __ATOMIC_RELAXED); /* the shard's hold */
    }
    __atomic_store_n(&e->clock, 0, __ATOMIC_RELAXED);
    /* in the ring just behind the hand: the last the hand will look at */
    wk_cache_entry *at = sh->hand;
    e->next = at;
    e->prev = at->prev;
    at->prev->next = e;
    at->prev = e;
    e->in_local = true;
    sh->entries++;
    sh->bytes += e->charge;
    /* published last: a reader that finds it sees it whole */
    wk_cache_entry **bucket = &sh->buckets[e->hash & sh->mask];
    st(&e->hnext, ld(bucket));
    st(bucket, e);
    evict(sh);
    maybe_reclaim(sh);
    return true;
}
