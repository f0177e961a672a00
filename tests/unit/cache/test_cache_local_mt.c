/*
 * The local tier under concurrency, as a property: reader threads hit, miss and load while
 * writer threads put, invalidate and clear, on a cache small enough that evictions and
 * expirations never stop. Every entry a get returns must be whole (the id it was asked for, a
 * canary field intact: a freed entry shows up here and under ASan/TSan) and not stale: a get
 * that begins after a put or invalidation of its key has returned sees that version or a
 * newer one; hits and misses add up to the gets. Half the readers go through wk_cache_peek in
 * pinned sections: what they borrow must also stay whole until the section ends. A second
 * test runs a hot set from six threads: every get a hit, no load.
 */
#include <pthread.h>
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
    for (int k = 0; k < NKEYS; k++) {
        atomic_store(&version[k], 1);
        atomic_store(&committed[k], 1);
    }
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
    struct timespec ts = {0, 700 * 1000 * 1000};
    nanosleep(&ts, NULL);
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
