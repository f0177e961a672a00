/*
 * What the entity cache keeps per thread, process-wide: the thread's id (a small integer
 * handed out on its first lock-free hit, recycled when it exits), which indexes its epoch
 * slot in every cache and its line of reference slots here; and the reference slots
 * themselves (see wk__tslot in cache_internal.h): a hit takes its reference in a slot of its
 * own line and a release on the same thread clears it, so a hit and its release write no
 * line another thread writes, and no atomic read-modify-write at all.
 *
 * Besides the fast paths (inline in cache_internal.h) this file holds what is rare: slots
 * full, a release that is not in the latest slot, a reclaimer's scan of every thread's
 * slots, a thread exiting with references in its slots (they become counted references,
 * valid wherever they went), and orphans: entries a freed cache left while slots held them,
 * freed by the first sweep that finds no slot holding them.
 */
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cache/cache_internal.h"

wk__tslot wk__tslots[WK__EBR_SLOTS];
__thread int wk__tls_slot __attribute__((tls_model("initial-exec")));
wk_cache_entry *wk__no_refs[1];
__thread wk_cache_entry **wk__tls_top __attribute__((tls_model("initial-exec"))) = wk__no_refs;
uint32_t wk__slot_hi;
_Alignas(64) uint32_t wk__orphans; /* its own line: read by every release, rarely written */

static pthread_once_t slot_once = PTHREAD_ONCE_INIT;
static pthread_key_t slot_key;
static pthread_mutex_t slot_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t slot_used[WK__EBR_SLOTS / 64];

static pthread_mutex_t orphan_mu = PTHREAD_MUTEX_INITIALIZER;
static wk_cache_entry *orphan_list; /* linked through `next` (orphan_mu) */

/* ---- reference slots ---- */

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
    wk__ref_after_put();
    return true;
}

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

/* Turns every reference in this thread's slots into a counted one (the thread is leaving:
 * whoever holds them now releases them through the count). */
static void refs_flush(void)
{
    wk_cache_entry **top = wk__tls_top;
    if (wk__ref_line(top) < WK__EBR_SLOTS) {
        for (wk_cache_entry **p = wk__tslots[wk__ref_line(top)].ref + 1; p <= top; p++) {
            wk_cache_entry *e = __atomic_load_n(p, __ATOMIC_RELAXED);
            if (e != NULL) {
                __atomic_fetch_add(&e->refs, 1, __ATOMIC_RELAXED);
                __atomic_store_n(p, NULL, __ATOMIC_RELEASE);
            }
        }
    }
    wk__tls_top = wk__no_refs;
}

/* ---- orphans ---- */

void wk__refs_orphan(wk_cache_entry *e)
{
    pthread_mutex_lock(&orphan_mu);
    e->next = orphan_list;
    orphan_list = e;
    __atomic_fetch_add(&wk__orphans, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&orphan_mu);
}

void wk__orphans_sweep(void)
{
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

/* A barrier on every thread of the process: each one's earlier stores are visible after it.
 * A release clears its slot, then reads wk__orphans; with this between the orphans' count
 * and the sweep, either the release sees the count (and sweeps) or the sweep sees the
 * cleared slot. Without membarrier (old kernels) an orphan whose last slot is released in
 * that window waits for the next sweep (any release while orphans exist, a thread exit, or
 * another cache's free). */
static void process_barrier(void)
{
    static int registered; /* atomic: 1 registered, -1 unavailable */
    int r = __atomic_load_n(&registered, __ATOMIC_ACQUIRE);
    if (r == 0) {
        r = syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 ? 1
                                                                                         : -1;
        __atomic_store_n(&registered, r, __ATOMIC_RELEASE);
    }
    if (r < 0 || syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
        /* this thread's own barrier at least (a sequentially consistent read-modify-write) */
        (void)__atomic_fetch_add(&wk__orphans, 0, __ATOMIC_SEQ_CST);
    }
}

void wk__refs_publish(void)
{
    if (__atomic_load_n(&wk__orphans, __ATOMIC_ACQUIRE) != 0) {
        process_barrier();
        wk__orphans_sweep();
    }
}

/* ---- thread ids ---- */

/* Key destructor: the thread is exiting. Its slots' references become counted, and from now
 * on it takes the locked paths (a later destructor may still use a cache). */
static void slot_release(void *v)
{
    unsigned id = (unsigned)(uintptr_t)v - 1u;
    refs_flush();
    wk__tls_slot = -1;
    if (__atomic_load_n(&wk__orphans, __ATOMIC_ACQUIRE) != 0) {
        wk__orphans_sweep();
    }
    pthread_mutex_lock(&slot_mu);
    slot_used[id / 64] &= ~((uint64_t)1 << (id % 64));
    pthread_mutex_unlock(&slot_mu);
}

static void slot_init(void)
{
    (void)pthread_key_create(&slot_key, slot_release);
}

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
