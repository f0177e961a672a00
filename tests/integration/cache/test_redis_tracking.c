/*
 * Server-assisted invalidation (CLIENT TRACKING, BCAST) against a private redis-server: a
 * process holding a key in its memory tier drops it when a plain redis-cli changes the key
 * (DEL, SET, EXPIRE, FLUSHDB), with the delay measured from redis-cli's acknowledged write
 * to the local copy gone and reported (p50, p99, max); the option that turns tracking off
 * keeps the PUBLISH path alone; and a soak where foreign writers do 10% of the writes with
 * redis-cli while Redis is killed and restarted, counting reads older than an acknowledged
 * write plus a grace.
 *
 * The delays are asserted under a bound a loaded 2-core machine cannot miss (2 s); the
 * figures printed are the proof of "within 50 ms". Each test starts its own redis-server on
 * a free loopback port (redis_server.c), so it runs beside other engineers' tests.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../unit/schema/seed_user.h"
#include "cache_rig.h"
#include "redis_server.h"
#include "wirekit/redis.h"
#include "wirekit/schema.h"
#include "wk_test.h"

#define NS "trk"
#define IDS 16

/* The "database": the age of every id is its current version. */
typedef struct db {
    atomic_int version[IDS];
} db;

static wk_status db_load(void *ctx, const wk_schema *s, const char *id, size_t id_len,
                         void *obj, wk_arena *arena, wk_error *err)
{
    db *d = ctx;
    (void)s;
    (void)err;
    seed_user *u = obj;
    u->username = wk_arena_strndup(arena, id, id_len);
    u->age = atomic_load(&d->version[strtol(u->username, NULL, 10) % IDS]);
    u->enabled = true;
    return WK_OK;
}

/* A store on `url` that tracks this test's prefix (or does not) and a cache on it. */
static bool rig_open(cache_rig *g, const char *url, bool tracking)
{
    static const char *const prefixes[1] = {NS ":"};
    wk_redis_opts o = cache_rig_opts(url, 1000, 200);
    o.no_tracking = !tracking;
    o.tracking_prefixes = prefixes;
    o.ntracking_prefixes = 1;
    wk_cache_config cfg = {0};
    cfg.ns = NS;
    return cache_rig_open(g, &o, cfg, 5000);
}

/* True while the memory tier holds `id` (a peek inside a pinned section). */
static bool held(wk_cache *c, const char *id)
{
    bool pinned = wk_cache_pin(c);
    bool h = pinned && wk_cache_peek(c, &seed_user_schema, id, strlen(id)) != NULL;
    wk_cache_unpin(c);
    return h;
}

static int get_age(wk_cache *c, const char *id, db *d)
{
    wk_cache_entry *r = NULL;
    if (wk_cache_get(c, &seed_user_schema, id, strlen(id), db_load, d, &r, NULL) != WK_OK) {
        return -1;
    }
    int age = (int)((const seed_user *)wk_cache_entry_object(r))->age;
    wk_cache_entry_unref(r);
    return age;
}

/* Reads `id` until the memory tier keeps it: one read once the feed lends its connection to
 * the load's fill (tracking_a_load_and_its_fill_keep_the_local_copy), more while a write
 * still takes a pooled connection (its echo drops the copy the load left). */
static bool hold(wk_cache *c, const char *id, db *d)
{
    for (int i = 0; i < 100; i++) {
        if (get_age(c, id, d) >= 0) {
            rs_sleep_ms(20);
            if (held(c, id)) {
                return true;
            }
        }
    }
    return false;
}

static void key_of(const char *id, char *key, size_t cap)
{
    wk_cache_key(NS, &seed_user_schema, id, strlen(id), key, cap);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Waits until `id` leaves the memory tier; the delay in microseconds since `since_us`, or
 * -1 after `bound_ms`. */
static int64_t time_to_drop(wk_cache *c, const char *id, int64_t since_us, int64_t bound_ms)
{
    while (held(c, id)) {
        if (now_us() - since_us > bound_ms * 1000) {
            return -1;
        }
        usleep(100);
    }
    return now_us() - since_us;
}

WK_TEST(tracking_drops_local_copies_on_redis_cli_del_set_expire_flushdb)
{
    redis_server srv;
    memset(&srv, 0, sizeof srv);
    if (!redis_server_start(&srv)) {
        SKIP("cannot start redis-server");
    }
    cache_rig g;
    CHECK(rig_open(&g, srv.url, true));
    CHECK(wk_redis_store_tracking(g.store));
    db d;
    memset(&d, 0, sizeof d);
    static const char *const ops[4] = {"DEL %s", "SET %s foreign", "PEXPIRE %s 600000",
                                       "FLUSHDB"};
    static const char *const names[4] = {"DEL", "SET", "EXPIRE", "FLUSHDB"};
    enum { ROUNDS = 15 };
    for (int op = 0; op < 4; op++) {
        int64_t delays[ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            char id[16], key[128], cmd[192];
            snprintf(id, sizeof id, "%d", r % IDS);
            key_of(id, key, sizeof key);
            CHECK_MSG(hold(g.cache, id, &d), "%s round %d: not in the memory tier", names[op],
                      r);
            snprintf(cmd, sizeof cmd, ops[op], key);
            char out[128];
            CHECK(rs_sh(out, sizeof out, "redis-cli -p %d %s", srv.port, cmd));
            int64_t acked = now_us(); /* redis-cli has printed the server's answer */
            delays[r] = time_to_drop(g.cache, id, acked, 2000);
            CHECK_MSG(delays[r] >= 0, "%s round %d: local copy still served after 2 s",
                      names[op], r);
            if (op == 1) { /* "foreign" is no seed_user: gone before the next round */
                CHECK(rs_sh(NULL, 0, "redis-cli -p %d DEL %s", srv.port, key));
            }
        }
        qsort(delays, ROUNDS, sizeof delays[0], cmp_i64);
        printf("# tracking: redis-cli %-7s acknowledged -> local copy gone: p50 %lld us, "
               "p99 %lld us, max %lld us (%d rounds)\n",
               names[op], (long long)delays[ROUNDS / 2], (long long)delays[ROUNDS * 99 / 100],
               (long long)delays[ROUNDS - 1], ROUNDS);
    }
    cache_rig_close(&g);
    redis_server_stop(&srv);
}

/* One command from a plain client of the server (a connection of its own, as redis-cli's). */
static bool foreign(const redis_server *srv, const char *verb, const char *key)
{
    const char *argv[3] = {verb, key, "x"};
    char out[64];
    return rs_cmd(srv->port, out, sizeof out, strcmp(verb, "SET") == 0 ? 3 : 2, argv, NULL) &&
           out[0] != '-';
}

/* Waits until everything the server pushed before now has been handled: a foreign SET of a
 * key this process holds (the barrier's own id), then until that copy is gone. The server
 * pushes in the order it ran the writes, so any echo of an earlier write of this process
 * was handled before the barrier's push. */
static bool barrier(cache_rig *g, const redis_server *srv, db *d)
{
    char key[128];
    key_of("barrier", key, sizeof key);
    if (!hold(g->cache, "barrier", d) || !foreign(srv, "SET", key)) {
        return false;
    }
    bool gone = time_to_drop(g->cache, "barrier", now_us(), 5000) >= 0;
    return foreign(srv, "DEL", key) && gone;
}

/* The self-echo: with tracking, the SET NX a load fills Redis with (and a put's DEL and SET)
 * used to come back as an invalidation that dropped the copy the process had just left, so
 * the next read was a Redis round trip. The feed's connection tracks with NOLOOP and the
 * store's writes go through it: the copy stays, the next read is a local hit. */
WK_TEST(tracking_a_load_and_its_fill_keep_the_local_copy)
{
    redis_server srv;
    memset(&srv, 0, sizeof srv);
    if (!redis_server_start(&srv)) {
        SKIP("cannot start redis-server");
    }
    cache_rig g;
    CHECK(rig_open(&g, srv.url, true));
    CHECK(wk_redis_store_tracking(g.store));
    db d;
    memset(&d, 0, sizeof d);
    atomic_store(&d.version[5], 41);
    CHECK(barrier(&g, &srv, &d)); /* the barrier's own copy is held before the load */
    wk_cache_stats before, after;
    wk_cache_get_stats(g.cache, &before);
    CHECK_EQ(get_age(g.cache, "5", &d), 41); /* local miss, shared miss, load, fill */
    CHECK(barrier(&g, &srv, &d));
    CHECK_MSG(held(g.cache, "5"), "the load's own fill dropped the copy it left");
    CHECK_EQ(get_age(g.cache, "5", &d), 41);
    wk_cache_get_stats(g.cache, &after);
    CHECK_EQ(after.loads - before.loads, 2); /* "5" and the barrier's second hold */
    CHECK_EQ(after.shared_hits - before.shared_hits, 0); /* no second read of "5" from Redis */
    char key[128], out[128];
    key_of("5", key, sizeof key);
    const char *exists[2] = {"EXISTS", key};
    CHECK(rs_cmd(srv.port, out, sizeof out, 2, exists, NULL));
    CHECK_MSG(strcmp(out, ":1") == 0, "the fill reached Redis: %s", out);
    /* a put keeps its copy too: its DEL and SET are not pushed back, and its PUBLISH comes
     * back on the same connection before the put returns (the other caches of this process
     * hear the put by it), so the copy the put leaves is the last word */
    seed_user u;
    memset(&u, 0, sizeof u);
    u.username = "6";
    u.age = 60;
    u.enabled = true;
    CHECK_OK(wk_cache_put(g.cache, &seed_user_schema, "6", 1, &u, 0, NULL));
    CHECK(barrier(&g, &srv, &d));
    CHECK_MSG(held(g.cache, "6"), "the put's own writes dropped the copy it left");
    wk_cache_get_stats(g.cache, &before);
    CHECK_EQ(get_age(g.cache, "6", &d), 60);
    wk_cache_get_stats(g.cache, &after);
    CHECK_EQ(after.local_hits - before.local_hits, 1);
    cache_rig_close(&g);
    redis_server_stop(&srv);
}

/* ...and the freshness rule holds: a foreign write right after this process's own fill (or
 * its put) is still pushed, and drops the copy within the bound. */
WK_TEST(tracking_a_foreign_write_right_after_an_own_fill_still_drops_the_copy)
{
    redis_server srv;
    memset(&srv, 0, sizeof srv);
    if (!redis_server_start(&srv)) {
        SKIP("cannot start redis-server");
    }
    cache_rig g;
    CHECK(rig_open(&g, srv.url, true));
    CHECK(wk_redis_store_tracking(g.store));
    db d;
    memset(&d, 0, sizeof d);
    static const char *const ops[2] = {"SET %s foreign", "DEL %s"};
    for (int r = 0; r < 4; r++) {
        char id[16], key[128], cmd[192];
        snprintf(id, sizeof id, "%d", 8 + r);
        key_of(id, key, sizeof key);
        CHECK(foreign(&srv, "DEL", key));
        CHECK(barrier(&g, &srv, &d)); /* the DEL's push handled */
        CHECK(get_age(g.cache, id, &d) >= 0); /* the load, then its fill */
        snprintf(cmd, sizeof cmd, ops[r % 2], key);
        CHECK(rs_sh(NULL, 0, "redis-cli -p %d %s", srv.port, cmd));
        int64_t acked = now_us();
        CHECK_MSG(time_to_drop(g.cache, id, acked, 2000) >= 0,
                  "round %d: a foreign %s right after the fill was not heard", r,
                  r % 2 ? "DEL" : "SET");
    }
    cache_rig_close(&g);
    redis_server_stop(&srv);
}

WK_TEST(tracking_off_keeps_the_publish_path_alone)
{
    redis_server srv;
    memset(&srv, 0, sizeof srv);
    if (!redis_server_start(&srv)) {
        SKIP("cannot start redis-server");
    }
    cache_rig g, w;
    CHECK(rig_open(&g, srv.url, false));
    CHECK(rig_open(&w, srv.url, false));
    CHECK(!wk_redis_store_tracking(g.store));
    db d;
    memset(&d, 0, sizeof d);
    char key[128];
    key_of("3", key, sizeof key);
    CHECK(get_age(g.cache, "3", &d) >= 0);
    CHECK(rs_sh(NULL, 0, "redis-cli -p %d DEL %s", srv.port, key));
    rs_sleep_ms(300);
    CHECK_MSG(held(g.cache, "3"), "without tracking a foreign DEL is not heard");
    /* wirekit's own invalidation still is, through PUBLISH */
    CHECK_OK(wk_cache_invalidate(w.cache, &seed_user_schema, "3", 1, NULL));
    CHECK(time_to_drop(g.cache, "3", now_us(), 2000) >= 0);
    cache_rig_close(&w);
    cache_rig_close(&g);
    redis_server_stop(&srv);
}

/* ---- the soak ---------------------------------------------------------------------------- */

typedef struct soak {
    redis_server *srv;
    db d;
    cache_rig reader, writer;
    atomic_llong acked_at[IDS];  /* when the latest acknowledged version was acknowledged */
    atomic_int acked[IDS];       /* that version */
    atomic_bool stop;
    atomic_long reads, stale_50, stale_bound, foreign, native, failed_writes;
    int64_t bound_ms;
    bool done; /* run_soak ran to its end (a failed CHECK or a SKIP returns before) */
} soak;

/* A foreign write: the new version encoded as the cache would, SET by redis-cli -x. */
static bool foreign_write(soak *k, int id, int v)
{
    seed_user u;
    memset(&u, 0, sizeof u);
    char name[16];
    snprintf(name, sizeof name, "%d", id);
    u.username = name;
    u.age = v;
    u.enabled = true;
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    char path[300], key[128];
    snprintf(path, sizeof path, "%s/value-%d", k->srv->dir, id);
    key_of(name, key, sizeof key);
    bool ok = wk_schema_encode_mp(&seed_user_schema, &u, &b, NULL) == WK_OK;
    FILE *f = ok ? fopen(path, "wb") : NULL;
    ok = f != NULL && fwrite(b.data, 1, b.len, f) == b.len;
    if (f != NULL) {
        ok = fclose(f) == 0 && ok;
    }
    wk_buf_free(&b);
    char out[64] = "";
    ok = ok && rs_sh(out, sizeof out, "redis-cli -p %d -x SET %s < %s", k->srv->port, key,
                     path) &&
         strcmp(out, "OK") == 0;
    unlink(path); /* the server's temp dir must be empty when it stops */
    return ok;
}

static void *writer_main(void *arg)
{
    soak *k = arg;
    uint32_t seed = 7;
    for (int n = 0; !atomic_load(&k->stop); n++) {
        seed = seed * 1103515245u + 12345u;
        int id = (int)((seed >> 16) % IDS);
        int v = atomic_fetch_add(&k->d.version[id], 1) + 1;
        bool ok;
        if (n % 10 == 9) {
            ok = foreign_write(k, id, v);
            atomic_fetch_add(&k->foreign, ok);
        } else {
            seed_user u;
            memset(&u, 0, sizeof u);
            char name[16];
            snprintf(name, sizeof name, "%d", id);
            u.username = name;
            u.age = v;
            u.enabled = true;
            ok = wk_cache_put(k->writer.cache, &seed_user_schema, name, strlen(name), &u, 0,
                              NULL) == WK_OK;
            atomic_fetch_add(&k->native, ok);
        }
        if (ok && v > atomic_load(&k->acked[id])) {
            atomic_store(&k->acked_at[id], rs_now_ms());
            atomic_store(&k->acked[id], v);
        }
        atomic_fetch_add(&k->failed_writes, !ok);
        usleep(2000);
    }
    return NULL;
}

/* The soak: a reader process (store and cache) and a writer (its own), foreign writes by
 * redis-cli; Redis killed and restarted at 3 s when `restart`. Prints the figures. */
static void run_soak(bool tracking, bool restart, int64_t run_ms, soak *k)
{
    redis_server srv;
    memset(&srv, 0, sizeof srv);
    if (!redis_server_start(&srv)) {
        SKIP("cannot start redis-server");
    }
    memset(k, 0, sizeof *k);
    k->srv = &srv;
    k->bound_ms = 1000;
    CHECK(rig_open(&k->reader, srv.url, tracking));
    CHECK(rig_open(&k->writer, srv.url, true));
    pthread_t w;
    CHECK(pthread_create(&w, NULL, writer_main, k) == 0);
    int64_t start = rs_now_ms();
    bool restarted = false;
    uint32_t seed = 99;
    while (rs_now_ms() - start < run_ms) {
        if (restart && !restarted && rs_now_ms() - start > 3000) {
            redis_server_kill(&srv);
            rs_sleep_ms(300);
            CHECK(redis_server_restart(&srv));
            restarted = true;
        }
        seed = seed * 1103515245u + 12345u;
        int id = (int)((seed >> 16) % IDS);
        char name[16];
        snprintf(name, sizeof name, "%d", id);
        /* what must be seen at least: the version acknowledged before the read began */
        int64_t t0 = rs_now_ms();
        int v = atomic_load(&k->acked[id]);
        int64_t at = atomic_load(&k->acked_at[id]);
        int age = get_age(k->reader.cache, name, &k->d);
        atomic_fetch_add(&k->reads, 1);
        if (age >= 0 && age < v && t0 - at > 50) {
            atomic_fetch_add(&k->stale_50, 1);
        }
        if (age >= 0 && age < v && t0 - at > k->bound_ms) {
            atomic_fetch_add(&k->stale_bound, 1);
        }
    }
    atomic_store(&k->stop, true);
    pthread_join(w, NULL);
    wk_cache_stats st;
    wk_cache_get_stats(k->reader.cache, &st);
    printf("# soak, tracking %s: %ld reads (%llu local hits), %ld wirekit puts, %ld redis-cli "
           "SETs, %ld writes failed (Redis killed and restarted: %s); stale after ack + "
           "50 ms: %ld, after ack + %lld ms: %ld\n",
           tracking ? "on" : "off", atomic_load(&k->reads), (unsigned long long)st.local_hits, atomic_load(&k->native),
           atomic_load(&k->foreign), atomic_load(&k->failed_writes), restarted ? "yes" : "no",
           atomic_load(&k->stale_50),
           (long long)k->bound_ms, atomic_load(&k->stale_bound));
    CHECK(restarted == restart);
    CHECK(atomic_load(&k->foreign) > 0); /* redis-cli is slow to start on a loaded machine */
    CHECK(st.local_hits > 0);
    cache_rig_close(&k->writer);
    cache_rig_close(&k->reader);
    redis_server_stop(&srv);
    k->done = true;
}



WK_TEST(tracking_soak_foreign_writers_and_a_restart_leave_no_stale_read)
{
    static soak k;
    run_soak(true, true, 8000, &k);
    if (!k.done) {
        return;
    }
    CHECK_EQ(atomic_load(&k.stale_bound), 0);
}

/* The control: the same check catches what tracking prevents (a foreign SET never heard, so
 * the old local copy is served after the write's acknowledgement plus 50 ms, until a wirekit
 * write of the same id happens to drop it). */
WK_TEST(soak_without_tracking_serves_stale_copies_after_foreign_writes)
{
    static soak k;
    run_soak(false, false, 6000, &k);
    if (!k.done) {
        return;
    }
    CHECK(atomic_load(&k.stale_50) > 0);
}

/* ---- `wirekit cache run` as a live session ----------------------------------------------- */

#ifdef WK_CLI_PATH
/* A `wirekit cache run` session on pipes: the test writes a line and reads the answer
 * before it writes the next, which only a session that answers each line as it arrives can
 * serve (a reader of the whole input would never answer: the read times out). */
typedef struct session {
    pid_t pid;
    int in, out; /* its standard input (we write) and output (we read) */
} session;

static bool session_start(session *ss, const char *url, bool tracking)
{
    int a[2], b[2];
    if (pipe(a) != 0 || pipe(b) != 0) {
        return false;
    }
    ss->pid = fork();
    if (ss->pid == 0) {
        dup2(a[0], 0);
        dup2(b[1], 1);
        close(a[1]);
        close(b[0]);
        execl(WK_CLI_PATH, WK_CLI_PATH, "cache", "--redis", url, "--ns", "clit", "run",
              tracking ? "-" : "--no-tracking", (char *)NULL);
        _exit(127);
    }
    close(a[0]);
    close(b[1]);
    ss->in = a[1];
    ss->out = b[0];
    return ss->pid > 0;
}

/* Writes `line`, reads one answer line into out (10 s at most: a loaded machine, ASan). */
static bool session_ask(session *ss, const char *line, char *out, size_t cap)
{
    size_t n = strlen(line);
    if (write(ss->in, line, n) != (ssize_t)n || write(ss->in, "\n", 1) != 1) {
        return false;
    }
    size_t got = 0;
    int64_t t0 = rs_now_ms();
    while (got + 1 < cap) {
        struct pollfd p = {ss->out, POLLIN, 0};
        int64_t left = 10000 - (rs_now_ms() - t0);
        if (left <= 0 || poll(&p, 1, (int)left) <= 0 || read(ss->out, out + got, 1) != 1) {
            out[got] = '\0';
            return false;
        }
        if (out[got] == '\n') {
            break;
        }
        got++;
    }
    out[got] = '\0';
    return true;
}

static void session_end(session *ss)
{
    if (ss->in >= 0) {
        close(ss->in);
        close(ss->out);
    }
    if (ss->pid > 0) {
        waitpid(ss->pid, NULL, 0);
    }
}

/* One session: put 5, read it until the memory tier holds it (the put's own broadcast drops
 * the first copy), a plain redis-cli SETs another value, then DELs it; the answers after
 * each foreign write in *after_set and *after_del. Only tracking can drop the copy (no
 * wirekit PUBLISH happens), and each read comes 1 s after the write, a margin a loaded
 * machine or an ASan build cannot miss (the first test of this file measures the delay). */
static bool session_run(const redis_server *srv, bool tracking, char *after_set,
                        char *after_del, size_t cap)
{
    session ss = {-1, -1, -1};
    char out[256];
    bool ok = session_start(&ss, srv->url, tracking) &&
              session_ask(&ss, "put 5 {\"v\":1}", out, sizeof out) && strcmp(out, "ok") == 0;
    for (int i = 0; ok && i < 2; i++) {
        rs_sleep_ms(100);
        ok = session_ask(&ss, "get 5", out, sizeof out) && strcmp(out, "{\"v\":1}") == 0;
    }
    ok = ok && rs_sh(NULL, 0, "printf '\\201\\241v\\002' | redis-cli -p %d -x SET clit:doc:v1:5",
                     srv->port);
    rs_sleep_ms(1000);
    ok = ok && session_ask(&ss, "get 5", after_set, cap);
    ok = ok && rs_sh(NULL, 0, "redis-cli -p %d DEL clit:doc:v1:5", srv->port);
    rs_sleep_ms(1000);
    ok = ok && session_ask(&ss, "get 5", after_del, cap);
    session_end(&ss);
    return ok;
}

WK_TEST(cli_run_session_answers_each_line_at_once_and_sees_redis_cli_writes)
{
    redis_server srv;
    memset(&srv, 0, sizeof srv);
    if (!redis_server_start(&srv)) {
        SKIP("cannot start redis-server");
    }
    char set_ans[256] = "", del_ans[256] = "";
    CHECK_MSG(session_run(&srv, true, set_ans, del_ans, sizeof set_ans),
              "session (tracking): stopped answering (after the SET: '%s')", set_ans);
    CHECK_STR(set_ans, "{\"v\":2}");
    CHECK_STR(del_ans, "not found");
    /* the control: without tracking the old copy is served after both foreign writes */
    CHECK(rs_sh(NULL, 0, "redis-cli -p %d FLUSHALL", srv.port));
    CHECK_MSG(session_run(&srv, false, set_ans, del_ans, sizeof set_ans),
              "session (no tracking): stopped answering");
    CHECK_STR(set_ans, "{\"v\":1}");
    CHECK_STR(del_ans, "{\"v\":1}");
    redis_server_stop(&srv);
}
#endif
