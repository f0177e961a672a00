/*
 * Internal structures of the entity cache: immutable reference-counted entries, the sharded
 * local tier (lock-free hits, CLOCK eviction, epoch-based reclamation), each thread's
 * reference slots, and single-flight records. Shared by cache.c (the get/put/invalidate
 * logic), cache_local.c (the local tier), cache_thread.c (thread ids and reference slots)
 * and cache_entry.c (building entries).
 */
#ifndef WK_CACHE_INTERNAL_H
#define WK_CACHE_INTERNAL_H

#include <pthread.h>
#include <string.h>
#include <time.h>

#include "wirekit/cache.h"
#include "cache/cache_key_interface.h"

struct wk_cache_entry {
    uint32_t refs;        /* atomic: counted references, plus WK__REF_BIAS while the entry
                             is in a shard (linked or retired) or orphaned; minus references
                             held in a thread's slots and released on another thread */
    bool negative;        /* a cached "not found" */
    bool in_local;        /* linked in a shard (shard lock) */
    uint8_t clock;        /* atomic: CLOCK "referenced" bit, set by hits, cleared by the hand */
    bool retired;         /* on its shard's retired list (shard lock) */
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
    wk_cache_entry *prev;   /* CLOCK ring links (shard lock); `next` also links the */
    wk_cache_entry *next;   /* retired list once the entry is unlinked */
    wk_cache_entry *hnext;  /* atomic: hash chain (written under the shard lock, read by
                               lock-free hits; kept intact after unlinking) */
    uint64_t retire_epoch;  /* the reclamation epoch when it was unlinked (shard lock) */
};

/* ---- threads: process-wide ids and reference slots ---- */

/** Threads that may take the lock-free hit path (others take the shard lock). */
#define WK__EBR_SLOTS 128u
/** Reference slots per thread. */
#define WK__REF_SLOTS 7u
/** Added to an entry's count while a shard holds it: a thread's slots may hold references
 *  the count does not see, so the count may drop below them; the bias keeps it above zero
 *  until no slot holds the entry. */
#define WK__REF_BIAS ((uint32_t)1 << 30)

/**
 * One thread's reference slots (process-wide, one 64-byte line per thread id, written by
 * that thread only). A lock-free hit pushes the entry on the thread's stack of slots instead
 * of counting it: the reference is then the slot, and a release on the same thread of the
 * entry on top pops it. Both are plain stores to the thread's own line (and its top in
 * thread-local storage). A release of another slot's entry clears that slot (a hole, skipped
 * when the top comes down to it); a reference released on another thread (or after
 * wk_cache_entry_ref) goes through the entry's count, which may then sit below the slot
 * references (the bias covers them). An entry leaves its shard's retired list only once no
 * slot holds it: slots are filled only inside an epoch section, so after the grace period no
 * slot can take it any more and a scan that finds none is final.
 */
typedef struct wk__tslot {
    /* atomic (scanned by reclaimers); ref[0] stays NULL: the bottom of the stack */
    _Alignas(64) wk_cache_entry *ref[WK__REF_SLOTS + 1];
} wk__tslot;

_Static_assert(sizeof(wk__tslot) == 64, "one thread's reference slots per cache line");

/* (hidden: inside the library, addressed directly rather than through the GOT) */
#define WK__HIDDEN __attribute__((visibility("hidden")))
/** Every thread id's reference slots. */
extern WK__HIDDEN wk__tslot wk__tslots[WK__EBR_SLOTS];
/** This thread's id + 1; 0 = not asked yet, -1 = none left (or the thread is exiting). */
extern WK__HIDDEN __thread int wk__tls_slot __attribute__((tls_model("initial-exec")));
/** This thread's top slot: &ref[n] in its line with ref[1..n] in use (NULL ones are holes;
 *  ref[n+1..] are NULL). A thread without a line points at wk__no_refs (never written). */
extern WK__HIDDEN __thread wk_cache_entry **wk__tls_top __attribute__((tls_model("initial-exec")));
extern WK__HIDDEN wk_cache_entry *wk__no_refs[1];
/** Ids handed out so far are below this (atomic). */
extern WK__HIDDEN uint32_t wk__slot_hi;
/** Entries on the orphan list (atomic; see wk__refs_orphan). */
extern WK__HIDDEN uint32_t wk__orphans;

/** Gives this thread an id; -1 when all WK__EBR_SLOTS are taken. */
int wk__slot_assign(void);

static inline int wk__my_slot(void)
{
    int s = wk__tls_slot;
    if (__builtin_expect(s > 0, 1)) {
        return s - 1;
    }
    return s == 0 ? wk__slot_assign() : -1;
}

/** The thread id whose line holds slot `top` (WK__EBR_SLOTS or more for wk__no_refs). */
static inline size_t wk__ref_line(wk_cache_entry *const *top)
{
    return ((uintptr_t)top - (uintptr_t)wk__tslots) / sizeof(wk__tslot);
}

/** Takes a reference to `e`, found in a shard inside an epoch section, on top of this
 *  thread's slots (`top` is wk__tls_top, in a line). With every slot taken, the top one's
 *  reference becomes counted and its slot is reused: counted before the slot is overwritten
 *  (a release store), so a reclaimer that sees the slot not holding it sees the count. */
static inline void wk__ref_take(wk_cache_entry **top, wk_cache_entry *e)
{
    if (__builtin_expect(((uintptr_t)top & 63) != WK__REF_SLOTS * sizeof *top, 1)) {
        wk__tls_top = ++top;
    } else if (*top != NULL) { /* NULL: a hole the top came down to */
        __atomic_fetch_add(&(*top)->refs, 1, __ATOMIC_RELAXED);
    }
    __atomic_store_n(top, e, __ATOMIC_RELEASE);
}

/** Releases a reference to `e` from a slot of this thread below its top (false when none
 *  holds it). */
bool wk__ref_put_below(wk_cache_entry *e);
/** Frees the orphans no slot holds any more. */
void wk__orphans_sweep(void);

/** Whether any thread's slot holds `e` (call after its grace period: final then). */
bool wk__refs_held(const wk_cache_entry *e);
/** Hands `e` (which still has its bias) to the process-wide orphan list: its cache is being
 *  freed while another thread's slot holds it. It is freed by the first sweep that finds no
 *  slot holding it: at a cache's free, a thread's exit, or a reclamation pass of any cache. */
void wk__refs_orphan(wk_cache_entry *e);
/** Before a cache frees its shards: the calling thread's slot references become counted, so
 *  that its own references of the cache's entries free them on release. */
void wk__refs_flush_mine(void);
/** Drops the bias of an entry that left its shard and is held by no slot (frees it when no
 *  counted reference is left). */
void wk__entry_unbias(wk_cache_entry *e);
/** Frees an entry's memory (its count reached zero). */
void wk__entry_destroy(wk_cache_entry *e);

/* ---- epoch-based reclamation for lock-free hits ---- */

/** One thread's line (64-byte aligned and padded: no two threads write the same line): the
 *  epoch it is reading in (0 = not reading), its hit count and its pinned-section depth. */
typedef struct wk__rslot {
    _Alignas(64) uint64_t active; /* atomic */
    uint64_t hits;                /* atomic, written by its thread only */
    uint32_t pins;                /* read and written by its thread only */
} wk__rslot;

_Static_assert(sizeof(wk__rslot) == 64, "one reader slot per cache line");

/** A cache's reclamation domain. An entry unlinked at epoch E is freed once the epoch reaches
 *  E + 2: every reader that could have seen it has left by then. */
typedef struct wk__ebr {
    _Alignas(64) uint64_t epoch; /* atomic, starts at 2 */
    wk__rslot *slots;            /* WK__EBR_SLOTS, 64-byte aligned inside `block` */
    void *block;
    const wk_allocator *alloc;
} wk__ebr;

wk_status wk__ebr_init(wk__ebr *d, const wk_allocator *alloc);
void wk__ebr_free(wk__ebr *d);
/** Hits counted by lock-free readers. */
uint64_t wk__ebr_hits(const wk__ebr *d);

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
    /* read by lock-free hits, never written after init */
    _Alignas(64) wk_cache_entry **buckets; /* atomic pointers */
    size_t mask;
    wk__ebr *ebr;
    /* writers (shard lock) */
    _Alignas(64) pthread_mutex_t mu;
    wk_cache_entry ring;    /* CLOCK ring sentinel */
    wk_cache_entry *hand;   /* next entry the hand looks at (may be &ring) */
    wk_cache_entry *retired; /* unlinked, awaiting the grace period */
    size_t nretired;
    size_t retired_bytes;
    size_t nheld;         /* retired entries the last reclaim pass found held by a slot */
    size_t held_bytes;    /* ... and their bytes */
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

/* The key hash lives in cache/cache_key_interface.h (the Redis tier hashes keys too). */


/** Milliseconds of a monotonic coarse clock (inline: every get reads it). */
static inline int64_t wk__cache_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/** Builds an entry holding `bytes` (copied) decoded with `ser` (or a negative entry when
 *  `negative`). Returns NULL with *st set: WK_ERR_NOMEM, or the decoder's status (corrupt). */
wk_cache_entry *wk__cache_entry_new(const wk_allocator *alloc, const wk_serializer *ser,
                                    const wk_schema *s, const char *key, size_t key_len,
                                    uint64_t hash, const uint8_t *bytes, size_t len,
                                    bool negative, int64_t expires_ms, wk_status *st);

/* ---- local tier (callers hold sh->mu except for init/free and wk__shard_peek) ---- */

wk_status wk__shard_init(wk__shard *sh, const wk_allocator *alloc, size_t max_entries,
                         size_t max_bytes, wk__ebr *ebr);
/** Frees every entry no reference holds (the others go when released); no reader may be
 *  left. Call wk__refs_flush_mine before the first shard and wk__orphans_sweep after the
 *  last. */
void wk__shard_free(wk__shard *sh);
/** Lock-free hit: a live entry with a reference taken for the caller (in this thread's
 *  reference slots), or NULL (absent, expired, or this thread has no reader slot: then use
 *  wk__shard_find under the lock). Writes only the entry's CLOCK bit when clear and this
 *  thread's own lines. */
wk_cache_entry *wk__shard_peek(wk__shard *sh, uint64_t hash, const char *key, size_t key_len,
                               int64_t now);
/** Enters a pinned section of domain `d` on this thread (nestable): until the matching
 *  wk__ebr_unpin no entry unlinked meanwhile is freed, so wk__shard_borrow may hand out
 *  entries without a reference. False when this thread has no reader slot. */
bool wk__ebr_pin(wk__ebr *d);
/** Leaves a pinned section (the outermost one stops holding back reclamation). */
void wk__ebr_unpin(wk__ebr *d);
/** Lock-free hit inside a pinned section: a live, positive entry without a reference (valid
 *  until the section ends), or NULL (absent, expired, negative, or not pinned). Writes only
 *  the entry's CLOCK bit when clear and this thread's own line. */
const wk_cache_entry *wk__shard_borrow(wk__shard *sh, uint64_t hash, const char *key,
                                       size_t key_len, int64_t now);
/** Finds a live entry (marking it referenced) or NULL; drops it when expired. */
wk_cache_entry *wk__shard_find(wk__shard *sh, uint64_t hash, const char *key, size_t key_len,
                             int64_t now);
/** Inserts `e` (taking one reference), replacing an entry with the same key, then evicts
 *  with the CLOCK hand (second chance for entries hit since its last pass) until the shard
 *  is within bounds. An entry larger than the whole shard is
 *  not inserted. Returns whether `e` was inserted. */
bool wk__shard_insert(wk__shard *sh, wk_cache_entry *e);
/** Removes the entry with this key, if any. Returns true when one was removed. */
bool wk__shard_remove(wk__shard *sh, uint64_t hash, const char *key, size_t key_len);
/** Removes every entry. */
void wk__shard_clear(wk__shard *sh);


/* ---- worker threads of wk_cache_get_async (cache_workers.c) ---- */

/** Most worker threads a cache starts. */
#define WK__CWORKERS 4u

/** A job for the workers: `run` on a worker thread, or `cancel` (on the thread stopping the
 *  pool) when the pool stops before a worker took it. Either is called once; the job's
 *  memory is the submitter's. */
typedef struct wk__cjob {
    struct wk__cjob *next;
    void (*run)(struct wk__cjob *j);
    void (*cancel)(struct wk__cjob *j);
} wk__cjob;

/** A cache's worker pool: a FIFO of jobs under `mu`, threads started on the first submit. */
typedef struct wk__cworkers {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a job was queued, or the pool is stopping */
    wk__cjob *head, **tail;
    pthread_t th[WK__CWORKERS];
    unsigned nth;
    bool stopping;
} wk__cworkers;

void wk__cworkers_init(wk__cworkers *w);
/** Queues `j`, starting the threads on first use. False (nothing queued, neither callback
 *  will run) when the pool is stopping or no thread could be started. */
bool wk__cworkers_submit(wk__cworkers *w, wk__cjob *j);
/** Stops the pool: later submits fail, queued jobs are cancelled (on this thread), running
 *  ones finish, the threads are joined. Submits may still come (and fail) until destroy. */
void wk__cworkers_stop(wk__cworkers *w);
/** Frees the pool's mutex and condition, once no thread can submit any more. */
void wk__cworkers_destroy(wk__cworkers *w);

#endif
