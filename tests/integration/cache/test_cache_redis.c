/*
 * The entity cache against a real redis-server: sharing through Redis, invalidations seen by
 * another process, a stampede on one cold key, many threads on many keys, and Redis killed
 * mid-run then restarted (fallback to the loader, recovery, never a wrong value).
 *
 * Tests that only read and write use the server in WK_REDIS_URL (scripts/servers.sh); the
 * kill-and-restart test starts its own redis-server on a free loopback port in a temp dir.
 * Without WK_REDIS_URL or redis-server the tests are skipped (exit 77).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../unit/schema/seed_user.h"
#include "cache_rig.h"
#include "redis_server.h"
#include "wirekit/redis.h"
#include "wk_test.h"

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The "database": age of id N is truth + N. */
typedef struct db {
    atomic_int calls;
    atomic_int truth;
    int delay_ms;
} db;

static wk_status db_load(void *ctx, const wk_schema *s, const char *id, size_t id_len,
                         void *obj, wk_arena *arena, wk_error *err)
{
    db *d = ctx;
    (void)s;
    (void)err;
    atomic_fetch_add(&d->calls, 1);
    if (d->delay_ms > 0) {
        usleep((useconds_t)d->delay_ms * 1000);
    }
    seed_user *u = obj;
    u->username = wk_arena_strndup(arena, id, id_len);
    u->age = atomic_load(&d->truth) + (int)strtol(u->username, NULL, 10); /* NUL-terminated copy of id */
    u->enabled = true;
    return WK_OK;
}

static int64_t get_age(wk_cache *c, const char *id, db *d, wk_status *st)
{
    wk_cache_entry *r = NULL;
    *st = wk_cache_get(c, &seed_user_schema, id, strlen(id), db_load, d, &r, NULL);
    if (*st != WK_OK) {
        return -1;
    }
    int64_t age = ((const seed_user *)wk_cache_entry_object(r))->age;
    wk_cache_entry_unref(r);
    return age;
}

/* A fresh namespace per test run (tests share one Redis). */
static char ns[40];

/* A store on `url` (command and connect timeouts `timeout_ms`, breaker `retry_ms`) and a
 * cache on it, in this run's namespace. */
static bool rig_open(cache_rig *g, const char *url, uint32_t timeout_ms, uint32_t retry_ms)
{
    wk_redis_opts o = cache_rig_opts(url, timeout_ms, retry_ms);
    o.channel = ns;
    wk_cache_config cfg = {0};
    cfg.ns = ns;
    return cache_rig_open(g, &o, cfg, 2000);
}

static const char *shared_url(void)
{
    return getenv("WK_REDIS_URL");
}

/* Each test gets its own namespace (and channel), so tests never see each other's keys. */
static void fresh_namespace(void)
{
    static int n;
    snprintf(ns, sizeof ns, "wkt%ld-%d", (long)getpid(), ++n);
}

#define NEED_REDIS()                                                                      \
    do {                                                                                  \
        if (shared_url() == NULL) {                                                       \
            SKIP("WK_REDIS_URL is not set (scripts/servers.sh start)");                   \
        }                                                                                 \
        fresh_namespace();                                                                \
    } while (0)

WK_TEST(test_redis_store_round_trips_and_counts_keys)
{
    NEED_REDIS();
    cache_rig g;
    CHECK(rig_open(&g, shared_url(), 500, 500));
    CHECK_OK(wk_redis_store_ping(g.store, NULL));
    db d = {0};
    wk_status st;
    CHECK_EQ(get_age(g.cache, "1", &d, &st), 1);
    CHECK_EQ(get_age(g.cache, "2", &d, &st), 2);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s:", ns);
    uint64_t n = 0;
    CHECK_OK(wk_redis_store_count(g.store, prefix, &n, NULL));
    CHECK_EQ(n, 2);
    wk_cache_clear_local(g.cache);
    CHECK_EQ(get_age(g.cache, "1", &d, &st), 1);
    wk_cache_stats s;
    wk_cache_get_stats(g.cache, &s);
    CHECK_EQ(s.shared_hits, 1);
    CHECK_EQ(s.loads, 2);
    cache_rig_close(&g);
}

/* A thread-safe counting allocator (the feed thread allocates too). */
typedef struct counting {
    wk_allocator a;
    pthread_mutex_t mu;
    size_t allocs, live_bytes, peak_bytes;
} counting;

static void count_add(counting *t, size_t sub, size_t add)
{
    pthread_mutex_lock(&t->mu);
    t->allocs += add != 0;
    t->live_bytes = t->live_bytes - sub + add;
    if (t->live_bytes > t->peak_bytes) {
        t->peak_bytes = t->live_bytes;
    }
    pthread_mutex_unlock(&t->mu);
}

static void *c_malloc(void *ctx, size_t n)
{
    void *p = malloc(n);
    if (p != NULL) {
        count_add(ctx, 0, n);
    }
    return p;
}

static void *c_realloc(void *ctx, void *p, size_t old, size_t n)
{
    void *q = realloc(p, n);
    if (q != NULL) {
        count_add(ctx, old, n);
    }
    return q;
}

static void c_free(void *ctx, void *p, size_t n)
{
    free(p);
    count_add(ctx, n, 0);
}

WK_TEST(test_redis_store_buffers_come_from_its_allocator)
{
    NEED_REDIS();
    counting ta;
    memset(&ta, 0, sizeof ta);
    pthread_mutex_init(&ta.mu, NULL);
    ta.a.malloc = c_malloc;
    ta.a.realloc = c_realloc;
    ta.a.free = c_free;
    ta.a.ctx = &ta;
    wk_redis_opts o = {0};
    o.url = shared_url();
    o.channel = ns;
    o.alloc = &ta.a;
    o.connect_timeout_ms = 2000; /* a loaded machine: no fallback to the loader */
    o.command_timeout_ms = 2000;
    wk_redis_store *store = NULL;
    CHECK_OK(wk_redis_store_new(&o, &store, NULL));
    wk_cache_config cfg = {0};
    cfg.ns = ns;
    cfg.store = wk_redis_store_iface(store);
    cfg.flags = WK_CACHE_NO_LOCAL; /* every get reads a reply */
    wk_cache *c = NULL;
    CHECK_OK(wk_cache_new(&cfg, &c, NULL));
    db d = {0};
    wk_status st;
    for (int i = 0; i < 20; i++) {
        char id[8];
        snprintf(id, sizeof id, "%d", i % 5);
        CHECK_EQ(get_age(c, id, &d, &st), i % 5);
    }
    wk_cache_stats cs;
    wk_cache_get_stats(c, &cs);
    CHECK(cs.shared_hits > 0); /* values were read from replies */
    /* a connection's read buffer is at least 16 KiB: it came from this allocator */
    pthread_mutex_lock(&ta.mu);
    size_t live = ta.live_bytes;
    pthread_mutex_unlock(&ta.mu);
    CHECK(live >= 16384);
    wk_cache_free(c);
    wk_redis_store_free(store);
    /* every buffer given back, with the size it was allocated with */
    CHECK_EQ(ta.live_bytes, 0);
    CHECK(ta.allocs > 3);
    pthread_mutex_destroy(&ta.mu);
}

WK_TEST(test_redis_store_rejects_bad_urls)
{
    wk_redis_store *s = NULL;
    wk_redis_opts o = {0};
    o.url = "http://x";
    CHECK_STATUS(wk_redis_store_new(&o, &s, NULL), WK_ERR_ARG);
    o.url = "redis://127.0.0.1:99999";
    CHECK_STATUS(wk_redis_store_new(&o, &s, NULL), WK_ERR_ARG);
    o.url = "redis://[::1";
    CHECK_STATUS(wk_redis_store_new(&o, &s, NULL), WK_ERR_ARG);
}

/* Child process: caches key "5", reports its age, then polls until it sees `want`. */
static int child_watch(const char *url, int to_parent, int from_parent)
{
    cache_rig g;
    if (!rig_open(&g, url, 500, 500)) {
        return 10;
    }
    db d = {0};
    atomic_store(&d.truth, 100);
    wk_status st;
    int64_t age = get_age(g.cache, "5", &d, &st); /* 105 (or the parent's value) */
    age = get_age(g.cache, "5", &d, &st);        /* now from the local tier */
    if (write(to_parent, &age, sizeof age) != sizeof age) {
        return 11;
    }
    int64_t want = 0;
    if (read(from_parent, &want, sizeof want) != sizeof want) {
        return 12;
    }
    atomic_store(&d.truth, 200); /* the database changed before the invalidation */
    int64_t deadline = now_ms() + 3000;
    int64_t seen = age;
    while (seen != want && now_ms() < deadline) {
        seen = get_age(g.cache, "5", &d, &st);
        usleep(2000);
    }
    wk_cache_stats s;
    wk_cache_get_stats(g.cache, &s);
    cache_rig_close(&g);
    if (seen != want) {
        return 13;
    }
    return s.invalidations >= 1 ? 0 : 14;
}

WK_TEST(test_redis_two_processes_see_each_others_invalidations)
{
    NEED_REDIS();
    int up[2], down[2], go[2];
    CHECK(pipe(up) == 0 && pipe(down) == 0 && pipe(go) == 0);
    /* Both children are forked before this process starts any thread (fork and threads do
     * not mix well, and ThreadSanitizer refuses it). */
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        _exit(child_watch(shared_url(), up[1], down[0]));
    }
    seed_user u;
    memset(&u, 0, sizeof u);
    u.username = (char *)"five";
    u.age = 555;
    pid_t pid2 = fork();
    CHECK(pid2 >= 0);
    if (pid2 == 0) {
        char x;
        if (read(go[0], &x, 1) != 1) {
            _exit(19);
        }
        cache_rig h;
        if (!rig_open(&h, shared_url(), 500, 500)) {
            _exit(20);
        }
        wk_status pst = wk_cache_put(h.cache, &seed_user_schema, "5", 1, &u, 0, NULL);
        cache_rig_close(&h);
        _exit(pst == WK_OK ? 0 : 21);
    }
    cache_rig g;
    CHECK(rig_open(&g, shared_url(), 500, 500));
    int64_t child_age = 0;
    CHECK(read(up[0], &child_age, sizeof child_age) == sizeof child_age);
    CHECK_EQ(child_age, 105);
    db d = {0};
    atomic_store(&d.truth, 100);
    wk_status st;
    CHECK_EQ(get_age(g.cache, "5", &d, &st), 105); /* a shared hit: the child filled it */
    CHECK_EQ(atomic_load(&d.calls), 0);
    /* The database changes; this process invalidates; the other must drop its copy. */
    atomic_store(&d.truth, 200);
    CHECK_OK(wk_cache_invalidate(g.cache, &seed_user_schema, "5", 1, NULL));
    int64_t want = 205;
    CHECK(write(down[1], &want, sizeof want) == sizeof want);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child exit status %d",
              WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    CHECK_EQ(get_age(g.cache, "5", &d, &st), 205);
    /* And the other way round: a put in one process replaces the value in the other. */
    CHECK(write(go[1], "g", 1) == 1);
    waitpid(pid2, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    int64_t deadline = now_ms() + 3000;
    int64_t seen = 0;
    while (seen != 555 && now_ms() < deadline) {
        seen = get_age(g.cache, "5", &d, &st);
        usleep(2000);
    }
    CHECK_EQ(seen, 555);
    cache_rig_close(&g);
}

typedef struct worker {
    wk_cache *c;
    db *d;
    pthread_barrier_t *go;
    int id_base;
    int keys;
    int iters;
    int wrong;
    int errors;
} worker;

static void *stampede_worker(void *arg)
{
    worker *w = arg;
    pthread_barrier_wait(w->go);
    wk_status st;
    if (get_age(w->c, "77", w->d, &st) != 77 + atomic_load(&w->d->truth)) {
        w->wrong++;
    }
    return NULL;
}

WK_TEST(test_redis_stampede_of_64_threads_on_a_cold_key_calls_the_loader_once)
{
    NEED_REDIS();
    cache_rig g;
    /* A 5 s command timeout: the feed is declared lost only after a heartbeat round goes
     * unanswered that long. With 500 ms, 64 threads under ThreadSanitizer on a busy 2-core
     * machine starved the feed thread past it once; the reset fences the load under way (its
     * result is neither kept nor written to Redis), so a late thread rightly loaded again. */
    CHECK(rig_open(&g, shared_url(), 5000, 500));
    db d = {0};
    d.delay_ms = 50;
    enum { N = 64 };
    pthread_t th[N];
    worker w[N];
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, N);
    for (int i = 0; i < N; i++) {
        w[i] = (worker){g.cache, &d, &go, 0, 0, 0, 0, 0};
        pthread_create(&th[i], NULL, stampede_worker, &w[i]);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ(w[i].wrong, 0);
    }
    pthread_barrier_destroy(&go);
    CHECK_EQ(atomic_load(&d.calls), 1);
    cache_rig_close(&g);
}

static void *mixed_worker(void *arg)
{
    worker *w = arg;
    unsigned seed = (unsigned)w->id_base * 7919u + 1;
    char id[16];
    for (int i = 0; i < w->iters; i++) {
        seed = seed * 1103515245u + 12345u;
        int k = (int)((seed >> 8) % (unsigned)w->keys);
        snprintf(id, sizeof id, "%d", k);
        if ((seed >> 20) % 50 == 0) {
            if (wk_cache_invalidate(w->c, &seed_user_schema, id, strlen(id), NULL) != WK_OK) {
                w->errors++;
            }
            continue;
        }
        wk_status st;
        int64_t age = get_age(w->c, id, w->d, &st);
        if (st != WK_OK) {
            w->errors++;
        } else if (age != k) {
            w->wrong++;
        }
    }
    return NULL;
}

WK_TEST(test_redis_many_threads_on_many_keys_always_get_the_right_value)
{
    NEED_REDIS();
    cache_rig g;
    CHECK(rig_open(&g, shared_url(), 1000, 500));
    db d = {0};
    enum { T = 8 };
    pthread_t th[T];
    worker w[T];
    for (int i = 0; i < T; i++) {
        w[i] = (worker){g.cache, &d, NULL, i, 300, 3000, 0, 0};
        pthread_create(&th[i], NULL, mixed_worker, &w[i]);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ(w[i].wrong, 0);
        CHECK_EQ(w[i].errors, 0);
    }
    wk_cache_stats s;
    wk_cache_get_stats(g.cache, &s);
    CHECK(s.local_hits > 0 && s.shared_hits + s.loads > 0);
    cache_rig_close(&g);
}

WK_TEST(test_redis_killed_and_restarted_falls_back_then_recovers_without_wrong_values)
{
    redis_server srv;
    fresh_namespace();
    if (!redis_server_start(&srv)) {
        redis_server_stop(&srv);
        SKIP("cannot start a private redis-server");
    }
    cache_rig g;
    CHECK(rig_open(&g, srv.url, 100, 200));
    db d = {0};
    wk_status st;
    char id[16];
    for (int k = 0; k < 20; k++) {
        snprintf(id, sizeof id, "%d", k);
        CHECK_EQ(get_age(g.cache, id, &d, &st), k);
    }
    redis_server_kill(&srv);
    atomic_store(&d.truth, 1000); /* the database changes while Redis is gone */
    int64_t worst = 0;
    int64_t until = now_ms() + 1500;
    int rounds = 0;
    while (now_ms() < until) {
        for (int k = 0; k < 20; k++) {
            snprintf(id, sizeof id, "%d", k);
            int64_t t0 = now_ms();
            int64_t age = get_age(g.cache, id, &d, &st);
            int64_t dt = now_ms() - t0;
            worst = dt > worst ? dt : worst;
            CHECK_OK(st);
            /* Before the feed loss is noticed an old local copy may still answer; after
             * that, only the loader's truth. Never anything else. */
            CHECK_MSG(age == k || age == 1000 + k, "key %d: age %lld", k, (long long)age);
            if (rounds > 0 && now_ms() > until - 1000) {
                CHECK_EQ(age, 1000 + k);
            }
        }
        rounds++;
        usleep(20 * 1000);
    }
    wk_cache_stats s;
    wk_cache_get_stats(g.cache, &s);
    CHECK(s.fallbacks > 0);
    CHECK(s.shared_errors > 0);
    CHECK_MSG(worst <= 400, "a get took %lld ms while Redis was down", (long long)worst);
    printf("    Redis down: %llu fallbacks, slowest get %lld ms\n",
           (unsigned long long)s.fallbacks, (long long)worst);

    CHECK(redis_server_restart(&srv));
    int64_t deadline = now_ms() + 5000;
    while (!wk_redis_store_feed_up(g.store) && now_ms() < deadline) {
        usleep(20 * 1000);
    }
    CHECK(wk_redis_store_feed_up(g.store));
    atomic_store(&d.truth, 2000);
    /* Recovered: the breaker lets commands through again, values are refilled. */
    deadline = now_ms() + 3000;
    int64_t age = 0;
    while (now_ms() < deadline) {
        age = get_age(g.cache, "3", &d, &st);
        wk_cache_get_stats(g.cache, &s);
        uint64_t hits = s.shared_hits;
        wk_cache_clear_local(g.cache);
        get_age(g.cache, "3", &d, &st);
        wk_cache_get_stats(g.cache, &s);
        if (s.shared_hits > hits) {
            break;
        }
        usleep(50 * 1000);
    }
    CHECK_EQ(age, 2003);
    CHECK_MSG(now_ms() < deadline, "the shared tier did not come back");
    cache_rig_close(&g);
    redis_server_stop(&srv);
}

