/*
 * The Redis store with Sentinel, against real servers started here on loopback ports
 * WK_SENTINEL_PORT_BASE.. (default 28120, else 28186; sentinels at base + 10..12) in temp dirs: one master, one replica, three
 * sentinels (quorum 2, down-after 1000 ms). The store finds the master by name, a value
 * written with WAIT 1 survives the master being killed, gets fail while the sentinels elect,
 * then the promoted replica is found (data there, writes accepted) and the subscriber and the
 * asynchronous get (fetch_async) follow it. Skipped (77) without redis-server (run as redis-sentinel with --sentinel) / redis-cli.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "redis_server.h"
#include "wirekit/redis.h"
#include "wk_test.h"

static wk_status put(wk_redis_store *s, const char *key, const char *val, wk_error *e)
{
    const wk_cache_store *st = wk_redis_store_iface(s);
    return st->store(st->self, key, strlen(key), val, strlen(val), 600000,
                     WK_CACHE_STORE_REPLACE, e);
}

static wk_status get(wk_redis_store *s, const char *key, char *val, size_t cap, bool *found,
                     wk_error *e)
{
    const wk_cache_store *st = wk_redis_store_iface(s);
    wk_buf b;
    wk_buf_init(&b, NULL, 1 << 20);
    wk_slice k = {key, strlen(key)};
    wk_status r = st->fetch(st->self, 1, &k, &b, found, e);
    snprintf(val, cap, "%.*s", (int)b.len, b.data != NULL ? (const char *)b.data : "");
    wk_buf_free(&b);
    return r;
}

/* An asynchronous get's answer, waited for (aget). */
typedef struct answer {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done, found;
    wk_status st;
    char val[64];
} answer;

static void on_answer(void *ctx, wk_status st, const uint8_t *bytes, size_t len, bool found,
                      const wk_error *err)
{
    answer *a = ctx;
    (void)err;
    pthread_mutex_lock(&a->mu);
    a->st = st;
    a->found = found;
    snprintf(a->val, sizeof a->val, "%.*s", (int)len, found ? (const char *)bytes : "");
    a->done = true;
    pthread_cond_signal(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

/* The store's fetch_async, waited for: its status, and the value in `val` when found. */
static wk_status aget(wk_redis_store *s, const char *key, char *val, size_t cap, bool *found)
{
    const wk_cache_store *st = wk_redis_store_iface(s);
    answer a = {.done = false};
    pthread_mutex_init(&a.mu, NULL);
    pthread_cond_init(&a.cv, NULL);
    wk_status r = st->fetch_async(st->self, key, strlen(key), on_answer, &a);
    if (r != WK_OK) {
        return r;
    }
    pthread_mutex_lock(&a.mu);
    while (!a.done) { /* answered within the store's deadline */
        pthread_cond_wait(&a.cv, &a.mu);
    }
    pthread_mutex_unlock(&a.mu);
    *found = a.found;
    snprintf(val, cap, "%s", a.val);
    return a.st;
}

/* A watcher that notes an invalidation of wks:3 (the tracking check after the failover). */
static atomic_int heard_wks3;

static void heard_key(void *ctx, const char *key, size_t len)
{
    (void)ctx;
    if (len == 5 && memcmp(key, "wks:3", 5) == 0) {
        atomic_store(&heard_wks3, 1);
    }
}

static void feed_changed(void *ctx, bool up)
{
    (void)ctx;
    (void)up;
}

static redis_server data[2];
static redis_server sent[3];
static char sent_conf[3][300];
static char replicaof_port[16];
static const char *replica_args[4];

static void stop_all(void)
{
    for (int i = 0; i < 3; i++) {
        redis_server_kill(&sent[i]);
        if (sent_conf[i][0] != '\0') {
            unlink(sent_conf[i]);
        }
        redis_server_stop(&sent[i]);
    }
    for (int i = 0; i < 2; i++) {
        redis_server_stop(&data[i]);
    }
}

WK_TEST(sentinel_finds_the_master_and_follows_a_failover)
{
    if (system("command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null "
               "2>&1") != 0) {
        SKIP("redis-server / redis-cli not installed");
    }
    const char *b = getenv("WK_SENTINEL_PORT_BASE");
    atexit(stop_all);
    /* fixed ports below Linux's ephemeral range (32768-60999), so no client connection holds
     * one; a second base is tried when another program listens there */
    int base = 0;
    bool up = false;
    for (int attempt = 0; attempt < 2 && !up; attempt++) {
        base = b != NULL ? (int)strtol(b, NULL, 10) + attempt * 66 : (attempt == 0 ? 28120 : 28186);
        snprintf(replicaof_port, sizeof replicaof_port, "%d", base);
        replica_args[0] = "--replicaof";
        replica_args[1] = "127.0.0.1";
        replica_args[2] = replicaof_port;
        replica_args[3] = NULL;
        up = redis_server_start_at(&data[0], base, NULL) &&
             redis_server_start_at(&data[1], base + 1, replica_args);
        if (!up) {
            redis_server_stop(&data[0]);
            redis_server_stop(&data[1]);
        }
    }
    CHECK_MSG(up, "cannot start the master and replica (ports taken?)");
    char out[512];
    int64_t t0 = rs_now_ms();
    while (!(rs_sh(out, sizeof out, "redis-cli -p %d info replication | grep -c 'state=online'",
                base) &&
             (int)strtol(out, NULL, 10) == 1)) {
        CHECK_MSG(rs_now_ms() - t0 < 10000, "the replica never synchronised");
        rs_sleep_ms(50);
    }
    for (int i = 0; i < 3; i++) {
        /* a sentinel rewrites its config file: one per sentinel, in its own dir */
        redis_server *r = &sent[i];
        memset(r, 0, sizeof *r);
        snprintf(r->dir, sizeof r->dir, "/tmp/wk-sentinel-XXXXXX");
        CHECK(mkdtemp(r->dir) != NULL);
        snprintf(sent_conf[i], sizeof sent_conf[i], "%.250s/sentinel.conf", r->dir);
        FILE *f = fopen(sent_conf[i], "w");
        CHECK(f != NULL);
        fprintf(f,
                "port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor wkm 127.0.0.1 %d 2\n"
                "sentinel down-after-milliseconds wkm 1000\n"
                "sentinel failover-timeout wkm 4000\nsentinel parallel-syncs wkm 1\n",
                base + 10 + i, r->dir, base);
        fclose(f);
        pid_t pid = fork();
        if (pid == 0) {
            FILE *null = freopen("/dev/null", "w", stdout);
            (void)null;
            execlp("redis-server", "redis-server", sent_conf[i], "--sentinel", (char *)NULL);
            _exit(127);
        }
        r->pid = pid;
        r->port = base + 10 + i;
    }
    /* the sentinels know each other and the replica */
    t0 = rs_now_ms();
    for (;;) {
        bool ok = true;
        for (int i = 0; i < 3 && ok; i++) {
            ok = rs_sh(out, sizeof out,
                    "redis-cli -p %d sentinel master wkm 2>/dev/null | grep -A1 -x num-other-sentinels "
                    "| tail -1",
                    base + 10 + i) &&
                 (int)strtol(out, NULL, 10) == 2 &&
                 rs_sh(out, sizeof out,
                    "redis-cli -p %d sentinel master wkm 2>/dev/null | grep -A1 -x num-slaves | tail -1",
                    base + 10 + i) &&
                 (int)strtol(out, NULL, 10) == 1;
        }
        if (ok) {
            break;
        }
        CHECK_MSG(rs_now_ms() - t0 < 30000, "the sentinels never found each other");
        rs_sleep_ms(100);
    }

    char s1[32], s2[32], s3[32];
    snprintf(s1, sizeof s1, "127.0.0.1:%d", base + 10);
    snprintf(s2, sizeof s2, "127.0.0.1:%d", base + 11);
    snprintf(s3, sizeof s3, "127.0.0.1:%d", base + 12);
    const char *sentinels[3] = {s1, s2, s3};
    wk_redis_opts o = {0};
    o.sentinels = sentinels;
    o.nsentinels = 3;
    o.sentinel_master = "wkm";
    o.wait_replicas = 1;
    o.retry_ms = 100;
    wk_error e = {0};
    wk_redis_store *s = NULL;
    CHECK_OK(wk_redis_store_new(&o, &s, &e));
    CHECK_MSG(wk_redis_store_ping(s, &e) == WK_OK, "%s", e.msg);
    CHECK_MSG(put(s, "wks:1", "before", &e) == WK_OK, "%s", e.msg); /* WAIT 1: replicated */
    for (int i = 0; i < 300 && !wk_redis_store_feed_up(s); i++) {
        rs_sleep_ms(10);
    }
    CHECK(wk_redis_store_feed_up(s));
    char got[64];
    bool found = false;
    CHECK_OK(get(s, "wks:1", got, sizeof got, &found, &e));
    CHECK(found);
    CHECK_STR(got, "before");
    CHECK_OK(aget(s, "wks:1", got, sizeof got, &found)); /* the asynchronous get: the master */
    CHECK(found);
    CHECK_STR(got, "before");
    /* a wrong master name is an error that says so */
    wk_redis_opts bad = o;
    bad.sentinel_master = "nosuch";
    bad.no_subscribe = true;
    wk_redis_store *sb = NULL;
    CHECK_OK(wk_redis_store_new(&bad, &sb, &e));
    CHECK_STATUS(wk_redis_store_ping(sb, &e), WK_ERR_IO);
    CHECK_MSG(strstr(e.msg, "master name") != NULL, "message: %s", e.msg);
    wk_redis_store_free(sb);

    redis_server_kill(&data[0]);
    t0 = rs_now_ms();
    int failures = 0;
    bool back = false;
    while (rs_now_ms() - t0 < 30000) {
        found = false;
        wk_status st = get(s, "wks:1", got, sizeof got, &found, &e);
        if (st == WK_OK) {
            CHECK(found);
            CHECK_STR(got, "before"); /* never a wrong value */
            if (rs_sh(out, sizeof out,
                   "redis-cli -p %d sentinel get-master-addr-by-name wkm | tail -1", base + 10) &&
                (int)strtol(out, NULL, 10) == base + 1) {
                back = true;
                break;
            }
        } else {
            failures++;
        }
        rs_sleep_ms(50);
    }
    CHECK_MSG(back, "the promoted replica was not followed in 30 s");
    CHECK(failures > 0);
    /* the new master takes writes (it has no replica: WAIT 1 cannot be met, so the put says
     * it is not acknowledged; the value is written all the same) */
    CHECK_STATUS(put(s, "wks:2", "after", &e), WK_ERR_IO);
    CHECK_MSG(strstr(e.msg, "WAIT") != NULL, "message: %s", e.msg);
    CHECK_OK(get(s, "wks:2", got, sizeof got, &found, &e));
    CHECK(found);
    CHECK_STR(got, "after");
    /* the asynchronous get follows the failover too (its connection to the dead master
     * fails, the next one goes where the sentinels say): "after" is only on the new master */
    bool async_back = false;
    for (t0 = rs_now_ms(); !async_back && rs_now_ms() - t0 < 10000; rs_sleep_ms(50)) {
        async_back = aget(s, "wks:2", got, sizeof got, &found) == WK_OK && found &&
                     strcmp(got, "after") == 0;
    }
    CHECK_MSG(async_back, "the asynchronous get did not reach the promoted replica");
    t0 = rs_now_ms();
    while (!wk_redis_store_feed_up(s) && rs_now_ms() - t0 < 5000) {
        rs_sleep_ms(20);
    }
    CHECK(wk_redis_store_feed_up(s));
    /* the feed was opened again on the promoted master, with tracking: a plain redis-cli
     * write there reaches the watchers */
    while (!wk_redis_store_tracking(s) && rs_now_ms() - t0 < 5000) {
        rs_sleep_ms(20);
    }
    CHECK(wk_redis_store_tracking(s));
    const wk_cache_store *st = wk_redis_store_iface(s);
    wk_cache_watch w = {heard_key, feed_changed, NULL, NULL};
    st->watch(st->self, &w, true);
    CHECK(rs_sh(out, sizeof out, "redis-cli -p %d SET wks:3 foreign", base + 1));
    t0 = rs_now_ms();
    while (!atomic_load(&heard_wks3) && rs_now_ms() - t0 < 2000) {
        rs_sleep_ms(5);
    }
    st->watch(st->self, &w, false);
    printf("# sentinel: after the failover a redis-cli SET on the new master was heard in "
           "%lld ms\n", (long long)(rs_now_ms() - t0));
    CHECK_MSG(atomic_load(&heard_wks3), "a redis-cli write after the failover was not heard");
    wk_redis_store_free(s);
    stop_all();
}
