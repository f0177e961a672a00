/*
 * What the entity cache keeps per thread, process-wide: the thread's id (a small integer
 * handed out on its first lock-free hit, recycled when it exits), which indexes its epoch
 * slot in every cache and its line of reference slots here; and the reference slots
 * themselves (see wk__tslot in cache_internal.h): a hit takes its reference in a slot of its
 * own line and a release on the same thread clears it, so a hit and its release write no
 * line another thread writes, and no atomic read-modify-write at all.
 *
 * Where it sits: cache_local.c's lock-free hit takes its reference in this thread's slots
 * (inline, cache_internal.h) -> wk_cache_entry_unref (cache_entry.c) clears it -> the rare
 * cases come here; cache_local.c's reclaimer asks wk__refs_held before it frees.
 *
 * Besides the fast paths (inline in cache_internal.h) this file holds what is rare: slots
 * full, a release that is not in the latest slot, a reclaimer's scan of every thread's
 * slots, a thread exiting with references in its slots (they become counted references,
 * valid wherever they went), and orphans: entries a freed cache left while other threads'
 * slots held them, freed by the first sweep that finds no slot holding them (at a cache's
 * free, a thread's exit, or a reclamation pass of any cache: a release itself does not look,
 * so that it stays two plain stores).
 */
#include "cache/cache_internal.h"

/* Every thread's line of reference slots, indexed by thread id (slot 0 of a line stays NULL:
 * the bottom a line's top never goes below). */
/* Slots rather than the entry's own count: an atomic increment and decrement per get, even on
 * a line no other thread writes, kept two threads on different keys from scaling (the 2-thread
 * / 1-thread line of wirekit bench --suite cache --case 'local hit'). */
wk__tslot wk__tslots[WK__EBR_SLOTS];
/* This thread's id + 1: 0 = none yet, -1 = none to be had (or the thread is exiting). */
__thread int wk__tls_slot __attribute__((tls_model("initial-exec")));
/* The top of a thread without a line: one NULL slot no reference ever equals. */
wk_cache_entry *wk__no_refs[1];
/* This thread's top-most used reference slot. */
__thread wk_cache_entry **wk__tls_top __attribute__((tls_model("initial-exec"))) = wk__no_refs;
/* One past the highest id ever handed out: how far a reclaimer's scan goes. */
uint32_t wk__slot_hi;
/* How many orphans wait (read without the lock, so that a sweep with none costs one load). */
uint32_t wk__orphans;

/* Thread ids: a bit per id in use (slot_mu), and a key whose destructor gives the id back. */
static pthread_once_t slot_once = PTHREAD_ONCE_INIT;
static pthread_key_t slot_key;
static pthread_mutex_t slot_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t slot_used[WK__EBR_SLOTS / 64];

static pthread_mutex_t orphan_mu = PTHREAD_MUTEX_INITIALIZER;
static wk_cache_entry *orphan_list; /* linked through `next` (orphan_mu) */

/* ---- reference slots ---- */

/* Contract in cache_internal.h: the release of a reference below this thread's top slot;
 * false when it is not in this thread's slots (it is then a counted reference). */
bool wk__ref_put_below(wk_cache_entry *e)
{
    wk_cache_entry **top = wk__tls_top;
    if (wk__ref_line(top) >= WK__EBR_SLOTS) {
        return false;
    }
    wk_cache_entry **bottom = wk__tslots[wk__ref_line(top)].ref;
    wk_cache_entry **p = top;
    while (p != bottom && __atomic_load_n(p, __ATOMIC_RELAXED) != e) {
        p--;
    }
    if (p == bottom) {
        return false;
    }
    __atomic_store_n(p, NULL, __ATOMIC_RELEASE);
    while (top != bottom && __atomic_load_n(top, __ATOMIC_RELAXED) == NULL) {
        top--; /* the top comes down past the holes */
    }
    wk__tls_top = top;
    return true;
}

/* Contract in cache_internal.h: whether any thread's slot holds e (acquire loads, paired with
 * the releases that clear slots). */
bool wk__refs_held(const wk_cache_entry *e)
{
    uint32_t hi = __atomic_load_n(&wk__slot_hi, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < hi; i++) {
        for (unsigned j = 1; j <= WK__REF_SLOTS; j++) {
            if (__atomic_load_n(&wk__tslots[i].ref[j], __ATOMIC_ACQUIRE) == e) {
                return true;
            }
        }
    }
    return false;
}

/* Turns every reference in this thread's slots into a counted one (valid wherever it went;
 * released through the count). */
void wk__refs_flush_mine(void)
{
    wk_cache_entry **top = wk__tls_top;
    if (wk__ref_line(top) >= WK__EBR_SLOTS) {
        return;
    }
    wk_cache_entry **bottom = wk__tslots[wk__ref_line(top)].ref;
    for (wk_cache_entry **p = bottom + 1; p <= top; p++) {
        wk_cache_entry *e = __atomic_load_n(p, __ATOMIC_RELAXED);
        if (e != NULL) {
            __atomic_fetch_add(&e->refs, 1, __ATOMIC_RELAXED);
            __atomic_store_n(p, NULL, __ATOMIC_RELEASE);
        }
    }
    wk__tls_top = bottom;
}

/* ---- orphans ---- */

/* Contract in cache_internal.h: e (whose cache is being freed) waits on the orphan list until
 * no slot holds it. */
void wk__refs_orphan(wk_cache_entry *e)
{
    pthread_mutex_lock(&orphan_mu);
    e->next = orphan_list;
    orphan_list = e;
    __atomic_fetch_add(&wk__orphans, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&orphan_mu);
}

/* Contract in cache_internal.h: drops the hold on every orphan no slot holds any more. */
void wk__orphans_sweep(void)
{
    if (__atomic_load_n(&wk__orphans, __ATOMIC_ACQUIRE) == 0) {
        return;
    }
    pthread_mutex_lock(&orphan_mu);
    wk_cache_entry **pp = &orphan_list;
    while (*pp != NULL) {
        wk_cache_entry *e = *pp;
        if (wk__refs_held(e)) {
            pp = &e->next;
            continue;
        }
        *pp = e->next;
        __atomic_fetch_sub(&wk__orphans, 1, __ATOMIC_RELAXED);
        wk__entry_unbias(e);
    }
    pthread_mutex_unlock(&orphan_mu);
}

/* ---- thread ids ---- */

/* Key destructor: the thread is exiting. Its slots' references become counted, and from now
 * on it takes the locked paths (a later destructor may still use a cache). */
static void slot_release(void *v)
{
    unsigned id = (unsigned)(uintptr_t)v - 1u;
    wk__refs_flush_mine();
    wk__tls_top = wk__no_refs;
    wk__tls_slot = -1;
    wk__orphans_sweep();
    pthread_mutex_lock(&slot_mu);
    slot_used[id / 64] &= ~((uint64_t)1 << (id % 64));
    pthread_mutex_unlock(&slot_mu);
}

/* Creates the thread-exit key once per process. */
static void slot_init(void)
{
    (void)pthread_key_create(&slot_key, slot_release);
}

/* Contract in cache_internal.h: the lowest free id (-1 when all WK__EBR_SLOTS are taken, and
 * the thread then stays on the locked paths), registered for release at thread exit. */
int wk__slot_assign(void)
{
    pthread_once(&slot_once, slot_init);
    int id = -1;
    pthread_mutex_lock(&slot_mu);
    for (unsigned i = 0; i < WK__EBR_SLOTS && id < 0; i++) {
        if ((slot_used[i / 64] & ((uint64_t)1 << (i % 64))) == 0) {
            slot_used[i / 64] |= (uint64_t)1 << (i % 64);
            id = (int)i;
        }
    }
    if (id >= 0 && (uint32_t)id + 1 > __atomic_load_n(&wk__slot_hi, __ATOMIC_RELAXED)) {
        __atomic_store_n(&wk__slot_hi, (uint32_t)id + 1, __ATOMIC_SEQ_CST);
    }
    pthread_mutex_unlock(&slot_mu);
    if (id >= 0 && pthread_setspecific(slot_key, (void *)(uintptr_t)(id + 1)) != 0) {
        pthread_mutex_lock(&slot_mu);
        slot_used[id / 64] &= ~((uint64_t)1 << (id % 64));
        pthread_mutex_unlock(&slot_mu);
        id = -1;
    }
    wk__tls_slot = id >= 0 ? id + 1 : -1;
    if (id >= 0) {
        wk__tls_top = wk__tslots[id].ref;
    }
    return id;
}
