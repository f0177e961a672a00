/*
 * The local tier under concurrency, as a property: reader threads hit, miss and load while
 * writer threads put, invalidate and clear, on a cache small enough that evictions and
 * expirations never stop. Every entry a get returns must be whole (the id it was asked for, a
 * canary field intact: a freed entry shows up here and under ASan/TSan) and not stale: a get
 * that begins after a put or invalidation of its key has returned sees that version or a
 * newer one; hits and misses add up to the gets. Half the readers go through wk_cache_peek in
 * pinned sections: what they borrow must also stay whole until the section ends. A second
 * test runs a hot set from six threads: every get a hit, no load. The last two move
 * references every way the contract allows (released on another thread, re-referenced,
 * held past the exit of the thread that took them or past wk_cache_free, more at once than
 * a thread's reference slots) and check that every byte comes back.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../schema/seed_user.h"
#include "wirekit/cache.h"
#include "wk_test.h"

#define NKEYS 96
#define READERS 4
#define WRITERS 2

static atomic_int version[NKEYS];   /* the truth the loader reads */
static atomic_int committed[NKEYS]; /* the last version a put/invalidate finished with */
static atomic_bool stop;
static atomic_long bad;
static atomic_long gets_done;

/* Every key back at version 1, in the loader's truth and as committed. */
static void reset_truth(void)
{
    for (int k = 0; k < NKEYS; k++) {
        atomic_store(&version[k], 1);
        atomic_store(&committed[k], 1);
    }
}

static wk_status truth_load(void *ctx, const wk_schema *s, const char *id, size_t id_len,
                            void *obj, wk_arena *arena, wk_error *err)
{
    (void)ctx;
    (void)s;
    (void)err;
    seed_user *u = obj;
    u->username = wk_arena_strndup(arena, id, id_len);
    u->password = (char *)"canary";
    u->age = atomic_load(&version[strtol(u->username, NULL, 10)]);
    u->enabled = true;
    wk_value_set_nil(&u->metadata);
    return WK_OK;
}

typedef struct worker {
    wk_cache *c;
    unsigned seed;
    int part; /* a writer owns the keys k % WRITERS == part (one writer per key, so the
                 last version finished is the newest) */
} worker;

static unsigned next_rand(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

/* The entry of key `id` is whole and not older than `floor`. */
static bool entry_ok(const seed_user *u, const char *id, int floor)
{
    return u->username != NULL && strcmp(u->username, id) == 0 && u->password != NULL &&
           strcmp(u->password, "canary") == 0 && u->enabled && u->age >= floor;
}

/* Lets the workers run for at least 700 ms and until they have done more than 1000 gets and
 * some evictions, so that a slow or loaded machine gets more time rather than a failure (the
 * checks after it fail only if nothing moves for a minute). */
static void let_threads_run(wk_cache *c)
{
    double start = wk_test_now_s();
    struct timespec ts = {0, 50 * 1000 * 1000};
    for (;;) {
        nanosleep(&ts, NULL);
        wk_cache_stats s;
        wk_cache_get_stats(c, &s);
        double t = wk_test_now_s() - start;
        bool busy = atomic_load(&gets_done) > 1000 && s.evictions > 0;
        if ((t >= 0.7 && busy) || t >= 60.0) {
            return;
        }
    }
}

static void *reader(void *arg)
{
    worker *w = arg;
    char id[8];
    while (!atomic_load(&stop)) {
        int k = (int)(next_rand(&w->seed) % NKEYS);
        int n = snprintf(id, sizeof id, "%d", k);
        int floor = atomic_load(&committed[k]);
        wk_cache_entry *r = NULL;
        if (wk_cache_get(w->c, &seed_user_schema, id, (size_t)n, truth_load, NULL, &r, NULL) !=
            WK_OK) {
            atomic_fetch_add(&bad, 1);
            continue;
        }
        if (!entry_ok(wk_cache_entry_object(r), id, floor)) {
            atomic_fetch_add(&bad, 1);
        }
        wk_cache_entry_unref(r);
        atomic_fetch_add(&gets_done, 1);
    }
    return NULL;
}

/* Like reader, through wk_cache_peek in pinned sections of up to 8 lookups (wk_cache_get on a
 * peek miss). Every borrowed entry is checked when handed out and again at the end of its
 * section, after the writers had the time to unlink it: it must still be whole. */
static void *peek_reader(void *arg)
{
    worker *w = arg;
    char ids[8][8];
    const wk_cache_entry *held[8];
    while (!atomic_load(&stop)) {
        if (!wk_cache_pin(w->c)) {
            atomic_fetch_add(&bad, 1);
            break;
        }
        unsigned nheld = 1 + next_rand(&w->seed) % 8;
        for (unsigned j = 0; j < nheld; j++) {
            int k = (int)(next_rand(&w->seed) % NKEYS);
            int n = snprintf(ids[j], sizeof ids[j], "%d", k);
            int floor = atomic_load(&committed[k]);
            held[j] = wk_cache_peek(w->c, &seed_user_schema, ids[j], (size_t)n);
            if (held[j] == NULL) {
                wk_cache_entry *r = NULL;
                if (wk_cache_get(w->c, &seed_user_schema, ids[j], (size_t)n, truth_load, NULL,
                                 &r, NULL) != WK_OK ||
                    !entry_ok(wk_cache_entry_object(r), ids[j], floor)) {
                    atomic_fetch_add(&bad, 1);
                }
                wk_cache_entry_unref(r);
            } else if (!entry_ok(wk_cache_entry_object(held[j]), ids[j], floor)) {
                atomic_fetch_add(&bad, 1);
            }
            atomic_fetch_add(&gets_done, 1);
        }
        for (unsigned j = 0; j < nheld; j++) {
            if (held[j] != NULL && !entry_ok(wk_cache_entry_object(held[j]), ids[j], 0)) {
                atomic_fetch_add(&bad, 1);
            }
        }
        wk_cache_unpin(w->c);
    }
    return NULL;
}

static void *writer(void *arg)
{
    worker *w = arg;
    char id[8];
    while (!atomic_load(&stop)) {
        unsigned r = next_rand(&w->seed);
        int k = (int)(r % (NKEYS / WRITERS)) * WRITERS + w->part;
        int n = snprintf(id, sizeof id, "%d", k);
        int v = atomic_fetch_add(&version[k], 1) + 1;
        wk_status st;
        if ((r >> 12) % 3 == 0) {
            seed_user u;
            memset(&u, 0, sizeof u);
            u.username = id;
            u.password = (char *)"canary";
            u.age = v;
            u.enabled = true;
            wk_value_set_nil(&u.metadata);
            st = wk_cache_put(w->c, &seed_user_schema, id, (size_t)n, &u, 0, NULL);
        } else {
            st = wk_cache_invalidate(w->c, &seed_user_schema, id, (size_t)n, NULL);
        }
        if (st != WK_OK) {
            atomic_fetch_add(&bad, 1);
        }
        atomic_store(&committed[k], v);
        if ((r >> 20) % 512 == 0) {
            wk_cache_clear_local(w->c);
        }
    }
    return NULL;
}

WK_TEST(test_cache_concurrent_hits_puts_invalidations_evictions_never_freed_or_stale)
{
    wk_cache_config cfg = {0};
    cfg.max_entries = 32; /* a third of the keys: constant eviction */
    cfg.shards = 4;
    cfg.local_ttl_ms = 3; /* and expirations */
    wk_cache *c = NULL;
    CHECK_OK(wk_cache_new(&cfg, &c, NULL));
    reset_truth();
    atomic_store(&stop, false);
    atomic_store(&bad, 0);
    atomic_store(&gets_done, 0);
    pthread_t t[READERS + WRITERS];
    worker w[READERS + WRITERS];
    for (int i = 0; i < READERS + WRITERS; i++) {
        w[i].c = c;
        w[i].seed = 7919u * (unsigned)(i + 1);
        w[i].part = i - READERS;
        void *(*fn)(void *) = i >= READERS ? writer : i % 2 == 0 ? reader : peek_reader;
        CHECK(pthread_create(&t[i], NULL, fn, &w[i]) == 0);
    }
    let_threads_run(c);
    atomic_store(&stop, true);
    for (int i = 0; i < READERS + WRITERS; i++) {
        pthread_join(t[i], NULL);
    }
    wk_cache_stats s;
    wk_cache_get_stats(c, &s);
    CHECK_EQ(atomic_load(&bad), 0);
    CHECK(atomic_load(&gets_done) > 1000);
    CHECK(s.local_hits > 0);
    CHECK(s.evictions > 0);
    CHECK(s.local_entries <= cfg.max_entries);
    CHECK_EQ(s.local_hits + s.local_misses, (uint64_t)atomic_load(&gets_done));
    wk_cache_free(c);
}

/* A hot working set that fits: after warm-up every get is a hit, from many threads at once,
 * and the loader is never called again (CLOCK keeps what is used). */
static void *hot_reader(void *arg)
{
    worker *w = arg;
    char id[8];
    for (int i = 0; i < 20000; i++) {
        int k = (int)(next_rand(&w->seed) % 16);
        int n = snprintf(id, sizeof id, "%d", k);
        wk_cache_entry *r = NULL;
        if (wk_cache_get(w->c, &seed_user_schema, id, (size_t)n, truth_load, NULL, &r, NULL) !=
            WK_OK) {
            atomic_fetch_add(&bad, 1);
            continue;
        }
        if (strcmp(((const seed_user *)wk_cache_entry_object(r))->username, id) != 0) {
            atomic_fetch_add(&bad, 1);
        }
        wk_cache_entry_unref(r);
    }
    return NULL;
}

WK_TEST(test_cache_hot_set_hits_from_many_threads_without_loads)
{
    wk_cache_config cfg = {0};
    cfg.max_entries = 64;
    cfg.local_ttl_ms = 3600 * 1000;
    wk_cache *c = NULL;
    CHECK_OK(wk_cache_new(&cfg, &c, NULL));
    atomic_store(&bad, 0);
    char id[8];
    for (int k = 0; k < 16; k++) {
        int n = snprintf(id, sizeof id, "%d", k);
        wk_cache_entry *r = NULL;
        CHECK_OK(wk_cache_get(c, &seed_user_schema, id, (size_t)n, truth_load, NULL, &r, NULL));
        wk_cache_entry_unref(r);
    }
    wk_cache_stats s0;
    wk_cache_get_stats(c, &s0);
    pthread_t t[6];
    worker w[6];
    for (int i = 0; i < 6; i++) {
        w[i].c = c;
        w[i].seed = 31u * (unsigned)(i + 1);
        CHECK(pthread_create(&t[i], NULL, hot_reader, &w[i]) == 0);
    }
    for (int i = 0; i < 6; i++) {
        pthread_join(t[i], NULL);
    }
    wk_cache_stats s;
    wk_cache_get_stats(c, &s);
    CHECK_EQ(atomic_load(&bad), 0);
    CHECK_EQ(s.loads, s0.loads);
    CHECK_EQ(s.local_hits - s0.local_hits, 6 * 20000);
    wk_cache_free(c);
}

/* ---- references that travel: released on another thread, re-referenced, outliving the
 * thread that took them or the cache itself. A hit keeps its reference in a slot of its
 * thread's own line; these tests move references every other way while writers evict,
 * invalidate and clear, then check that every byte the cache took is given back (a
 * reference lost or released twice shows up as live bytes, or as a use after free under
 * ASan/TSan). ---- */

/* An allocator counting live bytes, safe from any thread. */
typedef struct counting {
    wk_allocator a;
    atomic_long live;
} counting;

static void *cnt_malloc(void *ctx, size_t n)
{
    void *p = malloc(n);
    if (p != NULL) {
        atomic_fetch_add(&((counting *)ctx)->live, (long)n);
    }
    return p;
}

static void *cnt_realloc(void *ctx, void *p, size_t old, size_t n)
{
    void *q = realloc(p, n);
    if (q != NULL) {
        atomic_fetch_add(&((counting *)ctx)->live, (long)n - (long)old);
    }
    return q;
}

static void cnt_free(void *ctx, void *p, size_t n)
{
    if (p != NULL) {
        atomic_fetch_sub(&((counting *)ctx)->live, (long)n);
        free(p);
    }
}

static void counting_init(counting *t)
{
    t->a.malloc = cnt_malloc;
    t->a.realloc = cnt_realloc;
    t->a.free = cnt_free;
    t->a.ctx = t;
    atomic_store(&t->live, 0);
}

/* References in transit between threads, with the key each one must hold. */
#define MAILBOX 1024
/* A cache with `cfg` whose memory comes from `cnt` (initialised here), with the shared `bad`
 * count reset; NULL when it cannot be made. */
static wk_cache *new_counted_cache(counting *cnt, wk_cache_config *cfg)
{
    counting_init(cnt);
    cfg->alloc = &cnt->a;
    wk_cache *c = NULL;
    atomic_store(&bad, 0);
    return wk_cache_new(cfg, &c, NULL) == WK_OK ? c : NULL;
}

static pthread_mutex_t mail_mu = PTHREAD_MUTEX_INITIALIZER;
static wk_cache_entry *mail[MAILBOX];
static int mail_key[MAILBOX];
static size_t mail_n;

static bool entry_is(const wk_cache_entry *r, int k)
{
    char id[8];
    snprintf(id, sizeof id, "%d", k);
    return entry_ok(wk_cache_entry_object(r), id, 0);
}

/* Hands `r` to whichever thread takes it next (released here when the mailbox is full). */
static void post(wk_cache_entry *r, int k)
{
    pthread_mutex_lock(&mail_mu);
    if (mail_n < MAILBOX) {
        mail[mail_n] = r;
        mail_key[mail_n++] = k;
        r = NULL;
    }
    pthread_mutex_unlock(&mail_mu);
    wk_cache_entry_unref(r);
}

/* Takes one posted reference, checks it and releases it; false when none is posted. */
static bool take_one(void)
{
    pthread_mutex_lock(&mail_mu);
    wk_cache_entry *r = mail_n > 0 ? mail[--mail_n] : NULL;
    int k = r != NULL ? mail_key[mail_n] : 0;
    pthread_mutex_unlock(&mail_mu);
    if (r == NULL) {
        return false;
    }
    if (!entry_is(r, k)) {
        atomic_fetch_add(&bad, 1);
    }
    wk_cache_entry_unref(r);
    return true;
}

/* Gets `n` random keys into held[] / keys[] (each checked against its committed version). */
static size_t get_some(wk_cache *c, unsigned *seed, size_t n, wk_cache_entry **held, int *keys)
{
    size_t got = 0;
    for (size_t j = 0; j < n; j++) {
        char id[8];
        int k = (int)(next_rand(seed) % NKEYS);
        int len = snprintf(id, sizeof id, "%d", k);
        int floor = atomic_load(&committed[k]);
        wk_cache_entry *r = NULL;
        if (wk_cache_get(c, &seed_user_schema, id, (size_t)len, truth_load, NULL, &r, NULL) !=
                WK_OK ||
            !entry_ok(wk_cache_entry_object(r), id, floor)) {
            atomic_fetch_add(&bad, 1);
            wk_cache_entry_unref(r);
            continue;
        }
        held[got] = r;
        keys[got++] = k;
        atomic_fetch_add(&gets_done, 1);
    }
    return got;
}

/* Holds up to 14 references at once (more than a thread's slots), posts some to other
 * threads, posts a second reference (wk_cache_entry_ref) of others, then checks what it kept
 * and releases it in random order. */
static void *holder(void *arg)
{
    worker *w = arg;
    wk_cache_entry *held[14];
    int keys[14];
    while (!atomic_load(&stop)) {
        size_t n = get_some(w->c, &w->seed, 1 + next_rand(&w->seed) % 14, held, keys);
        size_t kept = 0;
        for (size_t j = 0; j < n; j++) {
            unsigned how = next_rand(&w->seed) % 4;
            if (how == 0) {
                post(held[j], keys[j]);
                continue;
            }
            if (how == 1) {
                post(wk_cache_entry_ref(held[j]), keys[j]);
            }
            held[kept] = held[j];
            keys[kept++] = keys[j];
        }
        sched_yield(); /* the writers unlink some of them meanwhile */
        while (kept > 0) {
            size_t j = next_rand(&w->seed) % kept;
            if (!entry_is(held[j], keys[j])) {
                atomic_fetch_add(&bad, 1);
            }
            wk_cache_entry_unref(held[j]);
            held[j] = held[--kept];
            keys[j] = keys[kept];
        }
    }
    return NULL;
}

static void *taker(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        if (!take_one()) {
            sched_yield();
        }
    }
    return NULL;
}

/* A thread that takes a few references, posts them and exits still "holding" them in its
 * slots: they must stay valid wherever they went. */
static void *short_lived(void *arg)
{
    worker *w = arg;
    wk_cache_entry *held[10];
    int keys[10];
    size_t n = get_some(w->c, &w->seed, 1 + next_rand(&w->seed) % 10, held, keys);
    for (size_t j = 0; j < n; j++) {
        post(held[j], keys[j]);
    }
    return NULL;
}

static void *spawner(void *arg)
{
    worker *w = arg;
    while (!atomic_load(&stop)) {
        pthread_t t;
        worker child = *w;
        child.seed = next_rand(&w->seed);
        if (pthread_create(&t, NULL, short_lived, &child) != 0) {
            atomic_fetch_add(&bad, 1);
            break;
        }
        pthread_join(t, NULL);
    }
    return NULL;
}

WK_TEST(test_cache_references_released_on_other_threads_rereferenced_and_outliving_threads)
{
    counting cnt;
    wk_cache_config cfg = {0};
    cfg.max_entries = 32;
    cfg.shards = 4;
    cfg.local_ttl_ms = 3;
    wk_cache *c = new_counted_cache(&cnt, &cfg);
    CHECK(c != NULL);
    reset_truth();
    atomic_store(&stop, false);
    atomic_store(&bad, 0);
    atomic_store(&gets_done, 0);
    enum { HOLDERS = 2, NT = HOLDERS + 2 + WRITERS };
    pthread_t t[NT];
    worker w[NT];
    for (int i = 0; i < NT; i++) {
        w[i].c = c;
        w[i].seed = 104729u * (unsigned)(i + 1);
        w[i].part = i - (NT - WRITERS);
        void *(*fn)(void *) = i < HOLDERS         ? holder
                              : i == HOLDERS      ? taker
                              : i == HOLDERS + 1  ? spawner
                                                  : writer;
        CHECK(pthread_create(&t[i], NULL, fn, &w[i]) == 0);
    }
    let_threads_run(c);
    atomic_store(&stop, true);
    for (int i = 0; i < NT; i++) {
        pthread_join(t[i], NULL);
    }
    while (take_one()) {
    }
    wk_cache_stats s;
    wk_cache_get_stats(c, &s);
    CHECK_EQ(atomic_load(&bad), 0);
    CHECK(atomic_load(&gets_done) > 1000);
    CHECK(s.evictions > 0);
    CHECK(s.local_hits > 0);
    CHECK(s.local_entries <= cfg.max_entries);
    wk_cache_free(c);
    CHECK_EQ(atomic_load(&cnt.live), 0); /* every entry freed once its last reference went */
}

/* The cache is freed while another thread holds references from lock-free hits (more than
 * its slots) and the freeing thread holds some too: all stay valid, and the memory comes
 * back when the last of them is released, on either thread. */
typedef struct late {
    wk_cache *c;
    wk_cache_entry *held[10];
    int keys[10];
    size_t n;
    pthread_barrier_t *bar;
} late;

/* Counts in `bad` each held reference that no longer shows its key's object. */
static void count_wrong_held(const late *l)
{
    for (size_t j = 0; j < l->n; j++) {
        if (!entry_is(l->held[j], l->keys[j])) {
            atomic_fetch_add(&bad, 1);
        }
    }
}

static void *late_holder(void *arg)
{
    late *l = arg;
    unsigned seed = 99;
    l->n = get_some(l->c, &seed, 10, l->held, l->keys);
    pthread_barrier_wait(l->bar); /* holding them */
    pthread_barrier_wait(l->bar); /* the cache is gone */
    count_wrong_held(l);
    for (size_t j = 0; j < l->n; j += 2) { /* half here, half on the main thread */
        wk_cache_entry_unref(l->held[j]);
    }
    return NULL;
}

WK_TEST(test_cache_references_from_hits_outlive_the_cache_on_any_thread)
{
    counting cnt;
    wk_cache_config cfg = {0};
    cfg.max_entries = 64;
    cfg.local_ttl_ms = 3600 * 1000;
    wk_cache *c = new_counted_cache(&cnt, &cfg);
    CHECK(c != NULL);
    reset_truth();
    unsigned seed = 99; /* the same keys as the other thread: loaded now, hits there */
    wk_cache_entry *mine[10];
    int mykeys[10];
    size_t n = get_some(c, &seed, 10, mine, mykeys);
    for (size_t j = 0; j < n; j++) {
        wk_cache_entry_unref(mine[j]);
    }
    wk_cache_stats s0;
    wk_cache_get_stats(c, &s0);
    seed = 99;
    n = get_some(c, &seed, 3, mine, mykeys); /* hits, in this thread's slots */
    CHECK_EQ(n, 3);
    pthread_barrier_t bar;
    CHECK(pthread_barrier_init(&bar, NULL, 2) == 0);
    late l = {.c = c, .bar = &bar};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, late_holder, &l) == 0);
    pthread_barrier_wait(&bar);
    wk_cache_stats s;
    wk_cache_get_stats(c, &s);
    CHECK_EQ(s.loads, s0.loads); /* the other thread's gets were all hits */
    wk_cache_free(c);
    pthread_barrier_wait(&bar);
    pthread_join(t, NULL);
    CHECK(atomic_load(&cnt.live) > 0);
    for (size_t j = 1; j < l.n; j += 2) {
        CHECK(entry_is(l.held[j], l.keys[j]));
        wk_cache_entry_unref(l.held[j]);
    }
    for (size_t j = 0; j < n; j++) {
        CHECK(entry_is(mine[j], mykeys[j]));
        wk_cache_entry_unref(mine[j]);
    }
    CHECK_EQ(atomic_load(&bad), 0);
    CHECK_EQ(l.n, 10);
    CHECK_EQ(atomic_load(&cnt.live), 0);
    pthread_barrier_destroy(&bar);
}

/* References from hits released after the cache was freed, by a thread that lives on: the
 * release itself stays two plain stores, so the entries are freed by the next sweep (here
 * the free of another cache), before that thread exits. */
static void *living_holder(void *arg)
{
    late *l = arg;
    unsigned seed = 7;
    l->n = get_some(l->c, &seed, 5, l->held, l->keys);
    pthread_barrier_wait(l->bar); /* holding them */
    pthread_barrier_wait(l->bar); /* the cache is gone */
    count_wrong_held(l);
    for (size_t j = l->n; j > 0; j--) { /* newest first: each one the top slot */
        wk_cache_entry_unref(l->held[j - 1]);
    }
    pthread_barrier_wait(l->bar); /* released */
    pthread_barrier_wait(l->bar); /* checked */
    return NULL;
}

WK_TEST(test_cache_entries_of_a_freed_cache_released_on_a_living_thread_are_freed_by_a_sweep)
{
    counting cnt;
    wk_cache_config cfg = {0};
    cfg.max_entries = 64;
    cfg.local_ttl_ms = 3600 * 1000;
    wk_cache *c = new_counted_cache(&cnt, &cfg);
    CHECK(c != NULL);
    unsigned seed = 7; /* the other thread's keys, loaded here: hits there */
    wk_cache_entry *mine[5];
    int mykeys[5];
    size_t n = get_some(c, &seed, 5, mine, mykeys);
    for (size_t j = 0; j < n; j++) {
        wk_cache_entry_unref(mine[j]);
    }
    pthread_barrier_t bar;
    CHECK(pthread_barrier_init(&bar, NULL, 2) == 0);
    late l = {.c = c, .bar = &bar};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, living_holder, &l) == 0);
    pthread_barrier_wait(&bar);
    wk_cache_free(c);
    long held_live = atomic_load(&cnt.live); /* held by the other thread */
    pthread_barrier_wait(&bar);
    pthread_barrier_wait(&bar);
    wk_cache *other = NULL;
    wk_status st = wk_cache_new(NULL, &other, NULL);
    wk_cache_free(other); /* a sweep */
    long swept_live = atomic_load(&cnt.live);
    pthread_barrier_wait(&bar); /* checked: the other thread may exit now */
    pthread_join(t, NULL);
    CHECK_OK(st);
    CHECK(held_live > 0);
    CHECK_EQ(swept_live, 0);
    CHECK_EQ(l.n, 5);
    CHECK_EQ(atomic_load(&bad), 0);
    pthread_barrier_destroy(&bar);
}

/* One entry held many times by one thread (more than its slots, so some references become
 * counted), re-referenced, unlinked by an invalidation while held, released out of order,
 * two of the references on another thread: it stays whole until the last release and is
 * freed once. */
static void *release_two(void *arg)
{
    wk_cache_entry **r = arg;
    for (int j = 0; j < 2; j++) {
        if (!entry_is(r[j], 5)) {
            atomic_fetch_add(&bad, 1);
        }
        wk_cache_entry_unref(r[j]);
    }
    return NULL;
}

WK_TEST(test_cache_one_entry_referenced_many_ways_on_one_thread_is_freed_once)
{
    counting cnt;
    wk_cache_config cfg = {0};
    cfg.local_ttl_ms = 3600 * 1000;
    cfg.shards = 1;
    wk_cache *c = new_counted_cache(&cnt, &cfg);
    CHECK(c != NULL);
    reset_truth();
    wk_cache_entry *r[12];
    long empty = atomic_load(&cnt.live);
    for (int j = 0; j < 11; j++) { /* a load, then ten hits */
        CHECK_OK(wk_cache_get(c, &seed_user_schema, "5", 1, truth_load, NULL, &r[j], NULL));
    }
    long one = atomic_load(&cnt.live); /* the cache and one entry */
    r[11] = wk_cache_entry_ref(r[3]);
    for (int j = 1; j < 12; j++) {
        CHECK(r[j] == r[0]);
    }
    CHECK_OK(wk_cache_invalidate(c, &seed_user_schema, "5", 1, NULL));
    for (int k = 0; k < 40; k++) { /* 40 more retired: reclamation passes run, and the
                                       held entry must stay */
        char id[8];
        int n = snprintf(id, sizeof id, "%d", 10 + k);
        wk_cache_entry *o = NULL;
        CHECK_OK(wk_cache_get(c, &seed_user_schema, id, (size_t)n, truth_load, NULL, &o, NULL));
        wk_cache_entry_unref(o);
        CHECK_OK(wk_cache_invalidate(c, &seed_user_schema, id, (size_t)n, NULL));
    }
    /* most of the others were freed (fewer than 16 wait for a pass) */
    CHECK(atomic_load(&cnt.live) - one < 20 * (one - empty));
    wk_cache_entry *posted[2] = {r[2], r[7]};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, release_two, posted) == 0);
    pthread_join(t, NULL);
    static const int order[] = {5, 0, 11, 10, 1, 9, 4, 3, 8, 6};
    for (size_t j = 0; j < sizeof order / sizeof order[0]; j++) {
        CHECK(entry_is(r[order[j]], 5));
        wk_cache_entry_unref(r[order[j]]);
    }
    CHECK_EQ(atomic_load(&bad), 0);
    wk_cache_free(c);
    CHECK_EQ(atomic_load(&cnt.live), 0);
}
