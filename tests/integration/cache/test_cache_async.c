/*
 * wk_cache_get_async against a real redis-server: which thread answers (a local hit on the
 * caller's, a shared hit on the store's, a load on a worker), the answers themselves (hit,
 * miss then load, not found), 1,000 gets from 4 threads each answered once with the right
 * value, an invalidation never followed by the old value, gets over TLS, and the failures:
 * Redis stopped (SIGSTOP) with gets in flight, Redis killed and restarted, and the cache and
 * the store freed with gets pending, every request answered exactly once.
 *
 * Reads and writes use the server in WK_REDIS_URL (scripts/servers.sh); the failure tests
 * start their own redis-server on a free loopback port. Skipped (exit 77) without them. The
 * time bounds are generous (a busy 2-core machine): they catch a get that waits forever or a
 * deadline ignored, not a slow one.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../unit/schema/seed_user.h"
#include "cache_rig.h"
#include "redis_server.h"
#include "wirekit/redis.h"
#include "wk_test.h"

/* The "database": the age of id N is truth + N; ids starting with "missing" do not exist. */
typedef struct db {
    atomic_int calls;
    atomic_int truth;
    int delay_ms;
    pthread_mutex_t mu;
    pthread_t thread; /* the last load's */
} db;

static wk_status db_load(void *ctx, const wk_schema *s, const char *id, size_t id_len,
                         void *obj, wk_arena *arena, wk_error *err)
{
    db *d = ctx;
    (void)s;
    (void)err;
    atomic_fetch_add(&d->calls, 1);
    pthread_mutex_lock(&d->mu);
    d->thread = pthread_self();
    pthread_mutex_unlock(&d->mu);
    if (d->delay_ms > 0) {
        usleep((useconds_t)d->delay_ms * 1000);
    }
    if (id_len >= 7 && memcmp(id, "missing", 7) == 0) {
        return WK_ERR_NOT_FOUND;
    }
    seed_user *u = obj;
    u->username = wk_arena_strndup(arena, id, id_len);
    u->age = atomic_load(&d->truth) + strtol(u->username, NULL, 10);
    u->enabled = true;
    return WK_OK;
}

/* Answers counted under one lock, so a test waits for all of them. */
typedef struct tracker {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int answered;
} tracker;

/* One request's answer. */
typedef struct req {
    tracker *t;
    atomic_int calls;
    wk_status st;
    int64_t age; /* -1: no entry */
    pthread_t thread;
    int64_t at_ms;
    int64_t want; /* what the right answer is (for the many-threads test) */
} req;

static void on_done(void *ctx, wk_status st, wk_cache_entry *e, const wk_error *err)
{
    req *r = ctx;
    (void)err;
    r->st = st;
    r->age = e != NULL ? ((const seed_user *)wk_cache_entry_object(e))->age : -1;
    r->thread = pthread_self();
    r->at_ms = rs_now_ms();
    wk_cache_entry_unref(e);
    atomic_fetch_add(&r->calls, 1);
    pthread_mutex_lock(&r->t->mu);
    r->t->answered++;
    pthread_cond_broadcast(&r->t->cv);
    pthread_mutex_unlock(&r->t->mu);
}

static void tracker_init(tracker *t)
{
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    t->answered = 0;
}

/* Waits until `n` answers came, at most `ms`; true when they did. */
static bool wait_answers(tracker *t, int n, int ms)
{
    int64_t until = rs_now_ms() + ms;
    pthread_mutex_lock(&t->mu);
    while (t->answered < n && rs_now_ms() < until) {
        pthread_mutex_unlock(&t->mu);
        rs_sleep_ms(2);
        pthread_mutex_lock(&t->mu);
    }
    bool ok = t->answered >= n;
    pthread_mutex_unlock(&t->mu);
    return ok;
}

static void req_init(req *r, tracker *t)
{
    memset(r, 0, sizeof *r);
    r->t = t;
    r->age = -1;
}

static char ns[40];

/* Each test gets its own namespace and channel (tests share one Redis). */
static void fresh_namespace(void)
{
    static int n;
    snprintf(ns, sizeof ns, "wka%ld-%d", (long)getpid(), ++n);
}

/* A store on `url` (command and connect timeouts `timeout_ms`, breaker `retry_ms`) and a
 * cache on it with `flags`; waits for the feed when the cache has a local tier. */
static bool rig_open(cache_rig *g, const char *url, uint32_t timeout_ms, uint32_t retry_ms,
                     unsigned flags)
{
    wk_redis_opts o = cache_rig_opts(url, timeout_ms, retry_ms);
    o.channel = ns;
    wk_cache_config cfg = {0};
    cfg.ns = ns;
    cfg.flags = flags;
    return cache_rig_open(g, &o, cfg, 3000);
}

#define NEED_REDIS()                                                                      \
    do {                                                                                  \
        if (getenv("WK_REDIS_URL") == NULL) {                                             \
            SKIP("WK_REDIS_URL is not set (scripts/servers.sh start)");                   \
        }                                                                                 \
        fresh_namespace();                                                                \
    } while (0)

static wk_status get_async(wk_cache *c, const char *id, db *d, req *r)
{
    return wk_cache_get_async(c, &seed_user_schema, id, strlen(id), d != NULL ? db_load : NULL,
                              d, on_done, r);
}

WK_TEST(test_async_local_hit_answers_on_the_calling_thread)
{
    NEED_REDIS();
    cache_rig g;
    CHECK(rig_open(&g, getenv("WK_REDIS_URL"), 1000, 500, 0));
    seed_user u = {.username = "7", .age = 77, .enabled = true};
    CHECK_OK(wk_cache_put(g.cache, &seed_user_schema, "7", 1, &u, 0, NULL));
    tracker t;
    tracker_init(&t);
    req r;
    req_init(&r, &t);
    CHECK_OK(get_async(g.cache, "7", NULL, &r));
    CHECK_EQ(atomic_load(&r.calls), 1); /* before it returned */
    CHECK(pthread_equal(r.thread, pthread_self()));
    CHECK_OK(r.st);
    CHECK_EQ(r.age, 77);
    cache_rig_close(&g);
}

WK_TEST(test_async_shared_hit_is_answered_by_the_store_and_fills_the_local_tier)
{
    NEED_REDIS();
    cache_rig a, b;
    CHECK(rig_open(&a, getenv("WK_REDIS_URL"), 1000, 500, 0));
    CHECK(rig_open(&b, getenv("WK_REDIS_URL"), 1000, 500, 0));
    seed_user u = {.username = "8", .age = 88, .enabled = true};
    CHECK_OK(wk_cache_put(a.cache, &seed_user_schema, "8", 1, &u, 0, NULL));
    /* the put's broadcast reaches b first: arriving during b's get it would (rightly) keep
     * the value out of b's local tier */
    wk_cache_stats s;
    for (int i = 0; i < 500; i++) {
        wk_cache_get_stats(b.cache, &s);
        if (s.invalidations > 0) {
            break;
        }
        rs_sleep_ms(10);
    }
    rs_sleep_ms(100);
    tracker t;
    tracker_init(&t);
    req r1, r2;
    req_init(&r1, &t);
    req_init(&r2, &t);
    db d = {0};
    pthread_mutex_init(&d.mu, NULL);
    CHECK_OK(get_async(b.cache, "8", &d, &r1)); /* b's local tier is empty: Redis answers */
    CHECK(wait_answers(&t, 1, 5000));
    CHECK_OK(r1.st);
    CHECK_EQ(r1.age, 88);
    CHECK(!pthread_equal(r1.thread, pthread_self()));
    CHECK_EQ(atomic_load(&d.calls), 0);
    wk_cache_get_stats(b.cache, &s);
    CHECK_EQ(s.shared_hits, 1);
    CHECK_OK(get_async(b.cache, "8", &d, &r2)); /* filled: now a local hit */
    CHECK_EQ(atomic_load(&r2.calls), 1);
    CHECK(pthread_equal(r2.thread, pthread_self()));
    CHECK_EQ(r2.age, 88);
    CHECK_EQ(atomic_load(&r1.calls), 1);
    cache_rig_close(&a);
    cache_rig_close(&b);
}

WK_TEST(test_async_shared_miss_runs_the_loader_on_a_worker_then_fills_both_tiers)
{
    NEED_REDIS();
    cache_rig g, other;
    CHECK(rig_open(&g, getenv("WK_REDIS_URL"), 1000, 500, 0));
    CHECK(rig_open(&other, getenv("WK_REDIS_URL"), 1000, 500, 0));
    db d = {0};
    pthread_mutex_init(&d.mu, NULL);
    atomic_store(&d.truth, 100);
    tracker t;
    tracker_init(&t);
    req r1, r2;
    req_init(&r1, &t);
    req_init(&r2, &t);
    CHECK_OK(get_async(g.cache, "5", &d, &r1));
    CHECK(wait_answers(&t, 1, 5000));
    CHECK_OK(r1.st);
    CHECK_EQ(r1.age, 105);
    CHECK_EQ(atomic_load(&d.calls), 1);
    pthread_mutex_lock(&d.mu);
    pthread_t loader_thread = d.thread;
    pthread_mutex_unlock(&d.mu);
    CHECK(!pthread_equal(loader_thread, pthread_self()));
    CHECK(pthread_equal(r1.thread, loader_thread)); /* the worker answered */
    /* the load filled Redis: another process's cache gets it without a load */
    CHECK_OK(get_async(other.cache, "5", &d, &r2));
    CHECK(wait_answers(&t, 2, 5000));
    CHECK_EQ(r2.age, 105);
    CHECK_EQ(atomic_load(&d.calls), 1);
    cache_rig_close(&g);
    cache_rig_close(&other);
}

WK_TEST(test_async_not_found_with_and_without_a_loader)
{
    NEED_REDIS();
    cache_rig g;
    CHECK(rig_open(&g, getenv("WK_REDIS_URL"), 1000, 500, 0));
    db d = {0};
    pthread_mutex_init(&d.mu, NULL);
    tracker t;
    tracker_init(&t);
    req r1, r2;
    req_init(&r1, &t);
    req_init(&r2, &t);
    CHECK_OK(get_async(g.cache, "missing1", &d, &r1));
    CHECK_OK(get_async(g.cache, "9", NULL, &r2)); /* no loader: the shared miss is the answer */
    CHECK(wait_answers(&t, 2, 5000));
    CHECK_STATUS(r1.st, WK_ERR_NOT_FOUND);
    CHECK_EQ(r1.age, -1);
    CHECK_STATUS(r2.st, WK_ERR_NOT_FOUND);
    CHECK_EQ(atomic_load(&d.calls), 1);
    CHECK_EQ(atomic_load(&r1.calls), 1);
    CHECK_EQ(atomic_load(&r2.calls), 1);
    cache_rig_close(&g);
}

WK_TEST(test_async_stampede_on_a_cold_key_loads_once)
{
    NEED_REDIS();
    /* no feed: a reset of it (a late pong on a busy machine) would rightly keep a load's
     * fill out, and the next get would load again */
    wk_redis_opts o = {0};
    o.url = getenv("WK_REDIS_URL");
    o.command_timeout_ms = 2000;
    o.no_subscribe = true;
    cache_rig g;
    CHECK_OK(wk_redis_store_new(&o, &g.store, NULL));
    wk_cache_config cfg = {0};
    cfg.ns = ns;
    cfg.store = wk_redis_store_iface(g.store);
    cfg.flags = WK_CACHE_NO_LOCAL;
    CHECK_OK(wk_cache_new(&cfg, &g.cache, NULL));
    db d = {0};
    pthread_mutex_init(&d.mu, NULL);
    d.delay_ms = 50;
    enum { N = 100 };
    req rs[N];
    tracker t;
    tracker_init(&t);
    for (int i = 0; i < N; i++) {
        req_init(&rs[i], &t);
        (void)get_async(g.cache, "42", &d, &rs[i]);
    }
    bool all = wait_answers(&t, N, 20000);
    cache_rig_close(&g);
    CHECK(all);
    for (int i = 0; i < N; i++) {
        CHECK_EQ(atomic_load(&rs[i].calls), 1);
        CHECK_OK(rs[i].st);
        CHECK_EQ(rs[i].age, 42);
    }
    /* the misses reach the workers; the first loads, the others join it or find its fill */
    CHECK_EQ(atomic_load(&d.calls), 1);
}

/* The many-threads test: each thread asks for its share of the requests. */
typedef struct many {
    wk_cache *cache;
    db *d;
    req *reqs;
    int from, to;
} many;

static void *many_main(void *arg)
{
    many *m = arg;
    char id[16];
    for (int i = m->from; i < m->to; i++) {
        int k = (i * 7) % 97;
        snprintf(id, sizeof id, "%d", k);
        m->reqs[i].want = 1000 + k;
        (void)wk_cache_get_async(m->cache, &seed_user_schema, id, strlen(id), db_load, m->d,
                                 on_done, &m->reqs[i]);
    }
    return NULL;
}

WK_TEST(test_async_1000_gets_from_4_threads_are_each_answered_once_and_right)
{
    NEED_REDIS();
    cache_rig g;
    CHECK(rig_open(&g, getenv("WK_REDIS_URL"), 2000, 500, WK_CACHE_NO_LOCAL));
    db d = {0};
    pthread_mutex_init(&d.mu, NULL);
    atomic_store(&d.truth, 1000);
    enum { N = 1000, T = 4 };
    tracker t;
    tracker_init(&t);
    req *reqs = calloc(N, sizeof *reqs);
    CHECK(reqs != NULL);
    for (int i = 0; i < N; i++) {
        req_init(&reqs[i], &t);
    }
    pthread_t th[T];
    many m[T];
    for (int i = 0; i < T; i++) {
        m[i] = (many){g.cache, &d, reqs, i * N / T, (i + 1) * N / T};
        CHECK(pthread_create(&th[i], NULL, many_main, &m[i]) == 0);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
    }
    bool all = wait_answers(&t, N, 30000);
    cache_rig_close(&g); /* answers anything left before the checks read */
    CHECK(all);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        if (atomic_load(&reqs[i].calls) != 1 || reqs[i].st != WK_OK ||
            reqs[i].age != reqs[i].want) {
            bad++;
        }
    }
    CHECK_EQ(bad, 0);
    /* 97 distinct keys, all missing at first: some loads, the rest answered by Redis */
    CHECK(atomic_load(&d.calls) >= 1 && atomic_load(&d.calls) <= N);
    printf("    1000 gets: %d loads\n", atomic_load(&d.calls));
    free(reqs);
}

WK_TEST(test_async_get_after_an_invalidation_never_answers_the_old_value)
{
    NEED_REDIS();
    cache_rig g, other;
    CHECK(rig_open(&g, getenv("WK_REDIS_URL"), 1000, 500, 0));
    CHECK(rig_open(&other, getenv("WK_REDIS_URL"), 1000, 500, 0));
    db d = {0};
    pthread_mutex_init(&d.mu, NULL);
    char id[16];
    for (int round = 0; round < 30; round++) {
        snprintf(id, sizeof id, "%d", round);
        atomic_store(&d.truth, 100 * round);
        tracker t;
        tracker_init(&t);
        req r0, r1, r2;
        req_init(&r0, &t);
        req_init(&r1, &t);
        req_init(&r2, &t);
        CHECK_OK(get_async(g.cache, id, &d, &r0)); /* cached in both tiers */
        CHECK(wait_answers(&t, 1, 5000));
        CHECK_EQ(r0.age, 100 * round + round);
        atomic_store(&d.truth, 100 * round + 50); /* the row changes, then the key is dropped */
        CHECK_OK(wk_cache_invalidate(g.cache, &seed_user_schema, id, strlen(id), NULL));
        CHECK_OK(get_async(g.cache, id, &d, &r1));
        CHECK_OK(get_async(other.cache, id, &d, &r2));
        CHECK(wait_answers(&t, 3, 5000));
        CHECK_OK(r1.st);
        CHECK_OK(r2.st);
        CHECK_EQ(r1.age, 100 * round + 50 + round);
        CHECK_EQ(r2.age, 100 * round + 50 + round);
    }
    cache_rig_close(&g);
    cache_rig_close(&other);
}

/* Starts a private server, or skips. */
#define PRIVATE_REDIS(srv)                                                                \
    do {                                                                                  \
        fresh_namespace();                                                                \
        if (!redis_server_start(srv)) {                                                   \
            redis_server_stop(srv);                                                       \
            SKIP("cannot start a private redis-server");                                  \
        }                                                                                 \
    } while (0)

/* Fills keys 0..n-1 through the cache (loads), so later gets are Redis hits. */
static bool warm(wk_cache *c, db *d, int n)
{
    char id[16];
    for (int k = 0; k < n; k++) {
        snprintf(id, sizeof id, "%d", k);
        wk_cache_entry *e = NULL;
        if (wk_cache_get(c, &seed_user_schema, id, strlen(id), db_load, d, &e, NULL) != WK_OK) {
            return false;
        }
        wk_cache_entry_unref(e);
    }
    return true;
}

/* Issues `n` asynchronous gets of keys 0..n-1 without a loader (Redis answers or fails). */
static void issue(wk_cache *c, req *rs, tracker *t, int n)
{
    char id[16];
    for (int k = 0; k < n; k++) {
        req_init(&rs[k], t);
        snprintf(id, sizeof id, "%d", k);
        (void)get_async(c, id, NULL, &rs[k]);
    }
}

/* issue(), then waits for every answer (5 s): false when one did not come. */
static bool issue_and_wait(wk_cache *c, req *rs, tracker *t, int n)
{
    tracker_init(t);
    issue(c, rs, t, n);
    return wait_answers(t, n, 5000);
}

/* Every answer of rs[0..n) is a hit with age base + k. */
static bool all_ages(const req *rs, int n, int base)
{
    bool ok = true;
    for (int k = 0; k < n; k++) {
        ok = ok && rs[k].st == WK_OK && rs[k].age == base + k;
    }
    return ok;
}

WK_TEST(test_async_redis_stopped_fails_each_get_within_the_deadline_then_recovers)
{
    redis_server srv;
    PRIVATE_REDIS(&srv);
    cache_rig g;
    CHECK(rig_open(&g, srv.url, 300, 300, WK_CACHE_NO_LOCAL));
    db d = {0};
    pthread_mutex_init(&d.mu, NULL);
    CHECK(warm(g.cache, &d, 40));
    enum { N = 40 };
    req rs[N];
    tracker t;
    CHECK(issue_and_wait(g.cache, rs, &t, N)); /* opens the asynchronous connection */
    CHECK(all_ages(rs, N, 0));
    CHECK(kill(srv.pid, SIGSTOP) == 0);
    tracker_init(&t);
    int64_t t0 = rs_now_ms();
    issue(g.cache, rs, &t, N);
    bool all = wait_answers(&t, N, 5000);
    kill(srv.pid, SIGCONT);
    CHECK(all);
    int64_t worst = 0;
    for (int k = 0; k < N; k++) {
        CHECK_EQ(atomic_load(&rs[k].calls), 1);
        CHECK_STATUS(rs[k].st, WK_ERR_IO);
        worst = rs[k].at_ms - t0 > worst ? rs[k].at_ms - t0 : worst;
    }
    /* the deadline is 300 ms; 3 s of slack for a busy machine */
    CHECK_MSG(worst <= 3300, "a get failed only after %lld ms", (long long)worst);
    printf("    Redis stopped: %d gets failed, the last after %lld ms\n", N, (long long)worst);
    /* resumed: past the breaker's retry_ms, gets are answered by Redis again */
    int64_t until = rs_now_ms() + 10000;
    bool back = false;
    while (!back && rs_now_ms() < until) {
        rs_sleep_ms(100);
        CHECK(issue_and_wait(g.cache, rs, &t, N));
        back = all_ages(rs, N, 0);
    }
    CHECK_MSG(back, "gets did not work again after Redis resumed");
    cache_rig_close(&g);
    redis_server_stop(&srv);
}

WK_TEST(test_async_redis_killed_and_restarted_falls_back_then_recovers)
{
    redis_server srv;
    PRIVATE_REDIS(&srv);
    cache_rig g;
    CHECK(rig_open(&g, srv.url, 300, 200, WK_CACHE_NO_LOCAL));
    db d = {0};
    pthread_mutex_init(&d.mu, NULL);
    CHECK(warm(g.cache, &d, 20));
    enum { N = 20 };
    req rs[N];
    tracker t;
    CHECK(issue_and_wait(g.cache, rs, &t, N));
    redis_server_kill(&srv);
    /* without a loader a dead shared tier is an error, never "not found" */
    CHECK(issue_and_wait(g.cache, rs, &t, N));
    for (int k = 0; k < N; k++) {
        CHECK_STATUS(rs[k].st, WK_ERR_IO);
    }
    /* with a loader it answers instead, on a worker */
    atomic_store(&d.truth, 500);
    tracker_init(&t);
    char id[16];
    for (int k = 0; k < N; k++) {
        req_init(&rs[k], &t);
        snprintf(id, sizeof id, "%d", k);
        (void)get_async(g.cache, id, &d, &rs[k]);
    }
    CHECK(wait_answers(&t, N, 5000));
    CHECK(all_ages(rs, N, 500));
    wk_cache_stats s;
    wk_cache_get_stats(g.cache, &s);
    CHECK(s.fallbacks >= N);
    CHECK(redis_server_restart(&srv));
    /* the restarted server is empty: fill it, then the asynchronous gets are Redis hits */
    int64_t until = rs_now_ms() + 10000;
    bool back = false;
    while (!back && rs_now_ms() < until) {
        rs_sleep_ms(100);
        if (!warm(g.cache, &d, N)) {
            continue;
        }
        wk_cache_get_stats(g.cache, &s);
        uint64_t hits = s.shared_hits;
        CHECK(issue_and_wait(g.cache, rs, &t, N));
        wk_cache_get_stats(g.cache, &s);
        back = all_ages(rs, N, 500) && s.shared_hits >= hits + N;
    }
    CHECK_MSG(back, "asynchronous gets did not reach the restarted Redis");
    cache_rig_close(&g);
    redis_server_stop(&srv);
}

WK_TEST(test_async_cache_free_with_gets_in_flight_answers_each_once)
{
    redis_server srv;
    PRIVATE_REDIS(&srv);
    cache_rig g;
    CHECK(rig_open(&g, srv.url, 500, 300, WK_CACHE_NO_LOCAL));
    db d = {0};
    pthread_mutex_init(&d.mu, NULL);
    d.delay_ms = 20; /* loads queue on the 4 workers */
    enum { N = 60 };
    req rs[N];
    tracker t;
    tracker_init(&t);
    char id[16];
    for (int k = 0; k < N; k++) { /* misses: each goes Redis -> worker -> loader */
        req_init(&rs[k], &t);
        snprintf(id, sizeof id, "%d", k);
        (void)get_async(g.cache, id, &d, &rs[k]);
    }
    for (int i = 0; i < 500 && atomic_load(&d.calls) == 0; i++) {
        rs_sleep_ms(10); /* until the workers load */
    }
    CHECK(kill(srv.pid, SIGSTOP) == 0);
    req stuck[N];
    issue(g.cache, stuck, &t, N); /* these sit in flight on the stopped Redis */
    int64_t t0 = rs_now_ms();
    wk_cache_free(g.cache);
    int64_t took = rs_now_ms() - t0;
    kill(srv.pid, SIGCONT);
    pthread_mutex_lock(&t.mu);
    int answered = t.answered;
    pthread_mutex_unlock(&t.mu);
    CHECK_EQ(answered, 2 * N); /* every one before wk_cache_free returned */
    int ok = 0, failed = 0;
    for (int k = 0; k < N; k++) {
        CHECK_EQ(atomic_load(&rs[k].calls), 1);
        CHECK_EQ(atomic_load(&stuck[k].calls), 1);
        CHECK_STATUS(stuck[k].st, WK_ERR_IO);
        ok += rs[k].st == WK_OK;
        failed += rs[k].st == WK_ERR_IO;
    }
    CHECK_EQ(ok + failed, N);
    CHECK_MSG(took <= 5000, "wk_cache_free took %lld ms", (long long)took);
    printf("    cache freed in %lld ms: %d loads finished, %d cancelled\n", (long long)took, ok,
           failed);
    wk_redis_store_free(g.store);
    redis_server_stop(&srv);
}

/* A store's answer, counted. */
typedef struct fetched {
    atomic_int calls;
    atomic_int errors;
} fetched;

static void on_fetched(void *ctx, wk_status st, const uint8_t *bytes, size_t len, bool found,
                       const wk_error *err)
{
    fetched *f = ctx;
    (void)bytes, (void)len, (void)found, (void)err;
    atomic_fetch_add(&f->errors, st != WK_OK);
    atomic_fetch_add(&f->calls, 1);
}

WK_TEST(test_async_store_free_with_gets_in_flight_answers_each_once)
{
    redis_server srv;
    PRIVATE_REDIS(&srv);
    wk_redis_opts o = {0};
    o.url = srv.url;
    o.command_timeout_ms = 10000; /* the free must not wait for the deadline */
    o.no_subscribe = true;
    wk_redis_store *store = NULL;
    CHECK_OK(wk_redis_store_new(&o, &store, NULL));
    const wk_cache_store *iface = wk_redis_store_iface(store);
    CHECK(iface->fetch_async != NULL);
    enum { N = 100 };
    fetched f[N];
    memset(f, 0, sizeof f);
    CHECK_OK(iface->fetch_async(iface->self, "k", 1, on_fetched, &f[0])); /* connects */
    for (int i = 0; i < 500 && atomic_load(&f[0].calls) == 0; i++) {
        rs_sleep_ms(10);
    }
    CHECK_EQ(atomic_load(&f[0].calls), 1);
    CHECK_EQ(atomic_load(&f[0].errors), 0);
    memset(f, 0, sizeof f);
    CHECK(kill(srv.pid, SIGSTOP) == 0);
    for (int i = 0; i < N; i++) {
        CHECK_OK(iface->fetch_async(iface->self, "k", 1, on_fetched, &f[i]));
    }
    int64_t t0 = rs_now_ms();
    wk_redis_store_free(store);
    int64_t took = rs_now_ms() - t0;
    kill(srv.pid, SIGCONT);
    for (int i = 0; i < N; i++) {
        CHECK_EQ(atomic_load(&f[i].calls), 1);
        CHECK_EQ(atomic_load(&f[i].errors), 1);
    }
    CHECK_MSG(took <= 5000, "wk_redis_store_free took %lld ms", (long long)took);
    redis_server_stop(&srv);
}

WK_TEST(test_async_gets_over_tls)
{
    const char *url = getenv("WK_REDIS_TLS_URL"), *ca = getenv("WK_REDIS_TLS_CA");
    if (url == NULL || ca == NULL) {
        SKIP("WK_REDIS_TLS_URL and WK_REDIS_TLS_CA are not set (scripts/servers.sh start)");
    }
    fresh_namespace();
    wk_redis_opts o = {0};
    o.url = url;
    o.tls_ca_file = ca;
    o.connect_timeout_ms = 2000;
    o.command_timeout_ms = 2000;
    o.no_subscribe = true;
    wk_redis_store *store = NULL;
    CHECK_OK(wk_redis_store_new(&o, &store, NULL));
    wk_cache_config cfg = {0};
    cfg.ns = ns;
    cfg.store = wk_redis_store_iface(store);
    cfg.flags = WK_CACHE_NO_LOCAL;
    wk_cache *c = NULL;
    CHECK_OK(wk_cache_new(&cfg, &c, NULL));
    enum { N = 50 };
    char id[16];
    for (int k = 0; k < N; k++) {
        seed_user u = {.username = "tls", .age = 300 + k, .enabled = true};
        snprintf(id, sizeof id, "%d", k);
        CHECK_OK(wk_cache_put(c, &seed_user_schema, id, strlen(id), &u, 0, NULL));
    }
    req rs[N];
    tracker t;
    tracker_init(&t);
    issue(c, rs, &t, N); /* one TLS connection, the GETs pipelined on it */
    bool all = wait_answers(&t, N, 10000);
    wk_cache_free(c);
    wk_redis_store_free(store);
    CHECK(all);
    for (int k = 0; k < N; k++) {
        CHECK_EQ(atomic_load(&rs[k].calls), 1);
        CHECK_OK(rs[k].st);
        CHECK_EQ(rs[k].age, 300 + k);
    }
}
