/*
 * Fault tests (issue 11): each reproduces one way wirekit served a stale value, hung, or used
 * unbounded memory, against real servers where they can misbehave on demand (a private
 * redis-server pushed to maxmemory, a PostgreSQL backend stopped with SIGSTOP, a reader
 * process stopped mid-invalidation) and a fake RESP server (fake_resp.c) where they cannot.
 *
 * Redis tests use WK_REDIS_URL (scripts/servers.sh) or start a private redis-server; the PG
 * tests use WK_PG_DSN; without them those tests are skipped. Memory is measured in a forked
 * child (peak RSS growth of the child alone). Every wait is bounded: a test that would hang
 * before the fix fails on its own deadline check or on the ctest timeout.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../unit/schema/seed_user.h"
#include "../cache/redis_server.h"
#include "fake_resp.h"
#include "wirekit/pg.h"
#include "wirekit/pq.h"
#include "wirekit/redis.h"
#include "wk_test.h"

/* The wirekit command under test ($WK_FAULT_CLI overrides, e.g. to show an older build
 * failing these tests). */
static const char *cli_path(void)
{
    const char *p = getenv("WK_FAULT_CLI");
    return p != NULL && p[0] != '\0' ? p : WK_CLI_PATH;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static long peak_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* Runs fn in a forked child; returns its status and the child's peak RSS growth (KiB). */
typedef wk_status (*child_fn)(void *arg);
static bool in_child(child_fn fn, void *arg, wk_status *st, long *grow_kb, int64_t *ms)
{
    int p[2];
    if (pipe(p) != 0) {
        return false;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        long before = peak_kb();
        int64_t t0 = now_ms();
        long out[3];
        out[0] = (long)fn(arg);
        out[2] = (long)(now_ms() - t0);
        out[1] = peak_kb() - before;
        ssize_t w = write(p[1], out, sizeof out);
        _exit(w == (ssize_t)sizeof out ? 0 : 1);
    }
    close(p[1]);
    long out[3];
    ssize_t r = read(p[0], out, sizeof out);
    close(p[0]);
    int ws = 0;
    waitpid(pid, &ws, 0);
    if (r != (ssize_t)sizeof out) {
        return false;
    }
    *st = (wk_status)out[0];
    *grow_kb = out[1];
    *ms = out[2];
    return true;
}

/* ---- item 1: records nested 60,000 deep ------------------------------------------------ */

/* A binary record nested `depth` deep, innermost a record with one text field `leaf`. */
static uint8_t *nested_record(size_t depth, const char *leaf, size_t *len)
{
    size_t ll = leaf != NULL ? strlen(leaf) : 0;
    size_t inner = leaf != NULL ? 12 + ll : 4;
    size_t total = inner + depth * 12;
    uint8_t *b = malloc(total);
    if (b == NULL) {
        return NULL;
    }
    size_t at = depth * 12;
    if (leaf != NULL) {
        uint8_t head[12] = {0, 0, 0, 1, 0, 0, 0, 25, 0, 0, 0, (uint8_t)ll};
        memcpy(b + at, head, 12);
        memcpy(b + at + 12, leaf, ll);
    } else {
        memset(b + at, 0, 4);
    }
    for (size_t k = depth; k-- > 0;) {
        size_t body = total - (k * 12 + 12);
        uint8_t *h = b + k * 12;
        h[0] = 0, h[1] = 0, h[2] = 0, h[3] = 1;
        h[4] = 0, h[5] = 0, h[6] = 0x08, h[7] = 0xc9; /* 2249 */
        h[8] = (uint8_t)(body >> 24), h[9] = (uint8_t)(body >> 16);
        h[10] = (uint8_t)(body >> 8), h[11] = (uint8_t)body;
    }
    *len = total;
    return b;
}

static wk_status ev_ok(void *self, const wk_event *ev)
{
    (void)self;
    (void)ev;
    return WK_OK;
}
static wk_status ev_err(const void *self, wk_error *err)
{
    (void)self;
    (void)err;
    return WK_OK;
}

typedef struct rec_job {
    size_t depth;
    const char *leaf;
    wk_pg_kind kind;
    size_t max_text;
} rec_job;

static wk_status decode_record(void *arg)
{
    rec_job *j = arg;
    wk_pg_registry *reg = NULL;
    if (wk_pg_registry_new_default(NULL, &reg, NULL) != WK_OK) {
        return WK_ERR_NOMEM;
    }
    size_t n = 0;
    uint8_t *p = nested_record(j->depth, j->leaf, &n);
    const wk_pg_decoder *d = wk_pg_registry_find_decoder(reg, 2249, WK_PG_BINARY, j->kind);
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_error err = {0};
    wk_status st;
    if (j->kind == WK_PG_KIND_TEXT) {
        wk_buf out;
        wk_buf_init(&out, NULL, j->max_text);
        st = wk_pg_decode(d, p, n, &out, &arena, &err);
        wk_buf_free(&out);
    } else {
        wk_sink sink = {ev_ok, ev_err, NULL};
        wk_pg_events ev = {&sink, 0, NULL, j->max_text};
        st = wk_pg_decode(d, p, n, &ev, &arena, &err);
    }
    wk_arena_free(&arena);
    free(p);
    wk_pg_registry_unref(reg);
    return st;
}

WK_TEST(test_fault_record_nested_60000_deep_is_refused_not_a_stack_overflow)
{
    wk_pg_kind kinds[3] = {WK_PG_KIND_TEXT, WK_PG_KIND_EVENTS, WK_PG_KIND_VALUE};
    for (int k = 0; k < 3; k++) {
        rec_job j = {60000, NULL, kinds[k], 0};
        wk_status st;
        long kb;
        int64_t ms;
        CHECK(in_child(decode_record, &j, &st, &kb, &ms)); /* a crash loses the pipe */
        CHECK_STATUS(st, WK_ERR_LIMIT);
    }
    /* In process: the error names the depth limit, not a size. */
    wk_pg_registry *reg = NULL;
    CHECK_OK(wk_pg_registry_new_default(NULL, &reg, NULL));
    size_t n = 0;
    uint8_t *p = nested_record(60000, NULL, &n);
    CHECK(p != NULL);
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_error err = {0};
    wk_status st =
        wk_pg_decode(wk_pg_registry_find_decoder(reg, 2249, WK_PG_BINARY, WK_PG_KIND_TEXT), p, n,
                     &out, &arena, &err);
    wk_buf_free(&out);
    wk_arena_free(&arena);
    free(p);
    wk_pg_registry_unref(reg);
    CHECK_STATUS(st, WK_ERR_LIMIT);
    CHECK(err.msg != NULL && strstr(err.msg, "nested deeper") != NULL);
    /* Below the limit a nested record still decodes (empty records double too: 10 levels). */
    rec_job ok = {10, NULL, WK_PG_KIND_TEXT, 0};
    CHECK_OK(decode_record(&ok));
}

/* ---- item 6: record text that doubles per level ---------------------------------------- */

WK_TEST(test_fault_record_nested_40_deep_is_linear_as_objects_and_capped_as_text)
{
    /* 40 levels around 'x y': as PostgreSQL's record text (each level quotes and doubles the
     * one inside) it would be about 2^40 bytes, so the text kind stops at the cap in bounded
     * memory; as events and value trees (nested objects, the row policy) it is linear. */
    wk_status st;
    long kb;
    int64_t ms;
    rec_job text = {40, "x y", WK_PG_KIND_TEXT, (size_t)1 << 20};
    CHECK(in_child(decode_record, &text, &st, &kb, &ms)); /* a crash loses the pipe */
    CHECK_STATUS(st, WK_ERR_LIMIT);
    CHECK_MSG(kb < 32 * 1024, "peak memory grew by %ld KiB with a 1 MiB cap", kb);
    CHECK_MSG(ms < 3000, "took %lld ms", (long long)ms);
    wk_pg_kind objects[2] = {WK_PG_KIND_EVENTS, WK_PG_KIND_VALUE};
    for (int k = 0; k < 2; k++) {
        rec_job j = {40, "x y", objects[k], (size_t)1 << 20};
        CHECK(in_child(decode_record, &j, &st, &kb, &ms));
        CHECK_OK(st);
        CHECK_MSG(kb < 32 * 1024, "peak memory grew by %ld KiB", kb);
        CHECK_MSG(ms < 3000, "took %lld ms", (long long)ms);
    }
    /* An output buffer made with max 0 has WK_BUF_DEFAULT_MAX (1 GiB) as its cap: the text
     * is quoted in place in that one buffer, so what is held is the buffer, up to its cap
     * (hundreds of MiB here, more under ASan); only the refusal is checked. Callers that
     * print (the CLI, wk_pg_events) cap a value's text at WK_PG_MAX_TEXT_DEFAULT. */
    rec_job deflt = {40, "x y", WK_PG_KIND_TEXT, 0};
    CHECK(in_child(decode_record, &deflt, &st, &kb, &ms));
    CHECK_STATUS(st, WK_ERR_LIMIT);
    /* A few levels render as text normally. */
    rec_job small = {3, "x y", WK_PG_KIND_TEXT, 0};
    CHECK_OK(decode_record(&small));
}

/* ---- helpers for the Redis tests --------------------------------------------------------- */

typedef struct truth {
    int age;
    int calls;
} truth;

static wk_status load_truth(void *ctx, const wk_schema *s, const char *id, size_t id_len, void *obj,
                            wk_arena *arena, wk_error *err)
{
    truth *t = ctx;
    (void)s;
    (void)err;
    t->calls++;
    seed_user *u = obj;
    u->username = wk_arena_strndup(arena, id, id_len);
    u->age = t->age;
    return WK_OK;
}

/* The age cached for `id` (loader `t`, may be NULL); -1 not found, -2 other failure. */
static long long age_of(wk_cache *c, const char *id, truth *t, wk_status *stp, wk_error *err)
{
    wk_cache_entry *r = NULL;
    wk_status st = wk_cache_get(c, &seed_user_schema, id, strlen(id), t != NULL ? load_truth : NULL,
                                t, &r, err);
    if (stp != NULL) {
        *stp = st;
    }
    if (st == WK_ERR_NOT_FOUND) {
        return -1;
    }
    if (st != WK_OK) {
        return -2;
    }
    long long age = ((const seed_user *)wk_cache_entry_object(r))->age;
    wk_cache_entry_unref(r);
    return age;
}

static wk_status put_age(wk_cache *c, const char *id, int age, wk_error *err)
{
    seed_user u;
    memset(&u, 0, sizeof u);
    u.username = (char *)id;
    u.age = age;
    return wk_cache_put(c, &seed_user_schema, id, strlen(id), &u, 0, err);
}

static wk_redis_store *open_store(const char *url, bool subscribe, uint32_t timeout_ms)
{
    wk_redis_opts o;
    memset(&o, 0, sizeof o);
    o.url = url;
    o.no_subscribe = !subscribe;
    o.command_timeout_ms = timeout_ms;
    o.connect_timeout_ms = timeout_ms;
    o.heartbeat_ms = 200;
    o.retry_ms = 100;
    wk_redis_store *s = NULL;
    return wk_redis_store_new(&o, &s, NULL) == WK_OK ? s : NULL;
}

static wk_cache *open_cache(wk_redis_store *s, const char *ns)
{
    wk_cache_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.ns = ns;
    cfg.store = s != NULL ? wk_redis_store_iface(s) : NULL;
    wk_cache *c = NULL;
    return wk_cache_new(&cfg, &c, NULL) == WK_OK ? c : NULL;
}

static bool wait_feed(wk_redis_store *s)
{
    for (int i = 0; i < 300 && !wk_redis_store_feed_up(s); i++) {
        sleep_ms(10);
    }
    return wk_redis_store_feed_up(s);
}

static const char *redis_url(void)
{
    const char *u = getenv("WK_REDIS_URL");
    if (u == NULL || u[0] == '\0') {
        wk__test_skip("WK_REDIS_URL is not set");
        return NULL;
    }
    return u;
}

static void unique_ns(char *buf, size_t cap, const char *tag)
{
    snprintf(buf, cap, "flt%s%d", tag, (int)getpid());
}

/* Runs a shell command line; returns its exit status (-1: abnormal). */
static int sh(const char *cmd)
{
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* Runs `cmd`, capturing up to cap-1 bytes of its stdout+stderr; returns the exit status. */
static int sh_capture(const char *cmd, char *out, size_t cap, size_t *total)
{
    char full[4096];
    snprintf(full, sizeof full, "%s 2>&1", cmd);
    FILE *f = popen(full, "r");
    if (f == NULL) {
        return -1;
    }
    size_t n = 0, all = 0;
    char chunk[65536];
    size_t r;
    while ((r = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (n + 1 < cap) {
            size_t k = r < cap - 1 - n ? r : cap - 1 - n;
            memcpy(out + n, chunk, k);
            n += k;
        }
        all += r;
    }
    out[n] = '\0';
    if (total != NULL) {
        *total = all;
    }
    int rc = pclose(f);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* ---- item 2: CLI put/del reach subscribed readers ---------------------------------------- */

WK_TEST(test_fault_cli_put_and_del_reach_a_subscribed_reader)
{
    const char *url = redis_url();
    if (url == NULL) {
        return;
    }
    char ns[32];
    unique_ns(ns, sizeof ns, "cli");
    wk_redis_store *s = open_store(url, true, 250);
    CHECK(s != NULL);
    wk_schema_rt rt;
    memset(&rt, 0, sizeof rt);
    wk_schema doc = {"doc", 1, WK_SCHEMA_ROOT_VALUE, sizeof(wk_value), NULL, 0, &rt};
    wk_cache *c = open_cache(s, ns);
    CHECK(c != NULL);
    CHECK(wait_feed(s));
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s cache --redis %s --ns %s put 7 '{\"v\":1}' >/dev/null",
             cli_path(), url, ns);
    CHECK_EQ(sh(cmd), 0);
    wk_cache_entry *r = NULL;
    CHECK_OK(wk_cache_get(c, &doc, "7", 1, NULL, NULL, &r, NULL));
    wk_cache_entry_unref(r);
    wk_cache_stats st0;
    wk_cache_get_stats(c, &st0);
    CHECK_OK(wk_cache_get(c, &doc, "7", 1, NULL, NULL, &r, NULL)); /* now a local hit */
    wk_cache_entry_unref(r);
    wk_cache_stats st1;
    wk_cache_get_stats(c, &st1);
    CHECK_EQ(st1.local_hits, st0.local_hits + 1);

    snprintf(cmd, sizeof cmd, "%s cache --redis %s --ns %s del 7", cli_path(), url, ns);
    CHECK_EQ(sh(cmd), 0);
    /* The reader must drop its copy once the broadcast arrives (well within 1 s). */
    wk_status got = WK_OK;
    for (int i = 0; i < 100; i++) {
        got = wk_cache_get(c, &doc, "7", 1, NULL, NULL, &r, NULL);
        if (got == WK_OK) {
            wk_cache_entry_unref(r);
            sleep_ms(10);
            continue;
        }
        break;
    }
    CHECK_STATUS(got, WK_ERR_NOT_FOUND);

    /* put from the CLI: the reader sees the new value, not its local copy of the old one. */
    snprintf(cmd, sizeof cmd, "%s cache --redis %s --ns %s put 8 '{\"v\":1}' >/dev/null",
             cli_path(), url, ns);
    CHECK_EQ(sh(cmd), 0);
    CHECK_OK(wk_cache_get(c, &doc, "8", 1, NULL, NULL, &r, NULL));
    wk_cache_entry_unref(r);
    snprintf(cmd, sizeof cmd, "%s cache --redis %s --ns %s put 8 '{\"v\":2}' >/dev/null",
             cli_path(), url, ns);
    CHECK_EQ(sh(cmd), 0);
    bool fresh = false;
    for (int i = 0; i < 100 && !fresh; i++) {
        CHECK_OK(wk_cache_get(c, &doc, "8", 1, NULL, NULL, &r, NULL));
        size_t n;
        const uint8_t *b = wk_cache_entry_bytes(r, &n);
        fresh = n > 0 && b[n - 1] == 2; /* msgpack {"v":2}: the last byte is the fixint */
        wk_cache_entry_unref(r);
        if (!fresh) {
            sleep_ms(10);
        }
    }
    CHECK(fresh);
    wk_cache_free(c);
    wk_redis_store_free(s);
    wk_schema_unprepare(&doc);
}

WK_TEST(test_fault_store_without_subscriber_still_broadcasts_invalidations)
{
    const char *url = redis_url();
    if (url == NULL) {
        return;
    }
    char ns[32];
    unique_ns(ns, sizeof ns, "pub");
    wk_redis_store *rs = open_store(url, true, 250);
    wk_redis_store *ws = open_store(url, false, 250);
    CHECK(rs != NULL && ws != NULL);
    wk_cache *reader = open_cache(rs, ns);
    wk_cache *writer = open_cache(ws, ns);
    CHECK(reader != NULL && writer != NULL);
    CHECK(wait_feed(rs));
    truth t = {1, 0};
    CHECK_OK(put_age(writer, "a", 1, NULL));
    CHECK_EQ(age_of(reader, "a", &t, NULL, NULL), 1);
    CHECK_EQ(age_of(reader, "a", &t, NULL, NULL), 1); /* local */
    t.age = 2;
    CHECK_OK(wk_cache_invalidate(writer, &seed_user_schema, "a", 1, NULL));
    long long age = 1;
    for (int i = 0; i < 100 && age == 1; i++) {
        age = age_of(reader, "a", &t, NULL, NULL);
        if (age == 1) {
            sleep_ms(10);
        }
    }
    CHECK_EQ(age, 2);
    wk_cache_free(reader);
    wk_cache_free(writer);
    wk_redis_store_free(rs);
    wk_redis_store_free(ws);
}

/* ---- item 3: invalidation and put when Redis refuses writes -------------------------------- */

static bool redis_config(const redis_server *srv, const char *name, const char *value)
{
    const char *argv[4] = {"CONFIG", "SET", name, value};
    char rep[128];
    return rs_cmd(srv->port, rep, sizeof rep, 4, argv, NULL) && rep[0] == '+';
}

WK_TEST(test_fault_invalidate_and_put_at_maxmemory_leave_no_old_value)
{
    redis_server srv;
    if (!redis_server_start(&srv)) {
        wk__test_skip("cannot start redis-server");
        return;
    }
    wk_redis_store *ws = open_store(srv.url, false, 500);
    wk_cache *w = open_cache(ws, "oom");
    CHECK(w != NULL);
    CHECK_OK(put_age(w, "k1", 1, NULL));
    CHECK_OK(put_age(w, "k2", 1, NULL));
    CHECK(redis_config(&srv, "maxmemory-policy", "noeviction"));
    CHECK(redis_config(&srv, "maxmemory", "1"));

    /* The tombstone is refused: the caller is told, and the old value is gone anyway. */
    wk_error err = {0};
    wk_status st = wk_cache_invalidate(w, &seed_user_schema, "k1", 2, &err);
    CHECK_STATUS(st, WK_ERR_IO);
    CHECK(err.msg != NULL && strstr(err.msg, "not fenced") != NULL);
    /* A put refused by Redis: reported, and the old value is gone too. */
    st = put_age(w, "k2", 5, &err);
    CHECK_STATUS(st, WK_ERR_IO);
    CHECK(err.msg != NULL && strstr(err.msg, "SET refused") != NULL);

    /* A fresh process (new store and cache) must load the truth, not read version 1. */
    wk_redis_store *fs = open_store(srv.url, false, 500);
    wk_cache *f = open_cache(fs, "oom");
    truth t = {5, 0};
    CHECK_EQ(age_of(f, "k1", &t, NULL, NULL), 5);
    CHECK_EQ(age_of(f, "k2", &t, NULL, NULL), 5);
    CHECK(redis_config(&srv, "maxmemory", "0"));
    wk_cache_free(f);
    wk_redis_store_free(fs);
    wk_cache_free(w);
    wk_redis_store_free(ws);
    redis_server_stop(&srv);
}

/* ---- items 4 and 5: deadlines and reply caps, against a misbehaving server ------------- */

typedef struct get_job {
    wk_cache *c;
    wk_status st;
    wk_error err;
    int64_t ms;
} get_job;

static void *get_thread(void *arg)
{
    get_job *j = arg;
    int64_t t0 = now_ms();
    (void)age_of(j->c, "x", NULL, &j->st, &j->err);
    j->ms = now_ms() - t0;
    return NULL;
}

WK_TEST(test_fault_dribbled_reply_and_pool_wait_end_at_the_command_deadline)
{
    fake_resp f;
    memset(&f, 0, sizeof f);
    f.get_reply = "$100000\r\n";
    f.get_reply_len = strlen(f.get_reply);
    f.dribble_ms = 100;
    CHECK(fake_resp_start(&f));
    wk_redis_opts o;
    memset(&o, 0, sizeof o);
    o.url = f.url;
    o.no_subscribe = true;
    o.command_timeout_ms = 250;
    o.pool = 1;
    o.retry_ms = 1;
    wk_redis_store *s = NULL;
    CHECK_OK(wk_redis_store_new(&o, &s, NULL));
    wk_cache *c = open_cache(s, "drib");
    /* Two gets share the one pooled connection: the second waits for it. */
    get_job a = {c, WK_OK, {0}, 0}, b = {c, WK_OK, {0}, 0};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, get_thread, &a);
    sleep_ms(20);
    pthread_create(&tb, NULL, get_thread, &b);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    f.stop = 1;
    CHECK_STATUS(a.st, WK_ERR_IO);
    CHECK(a.err.msg != NULL && strstr(a.err.msg, "timed out") != NULL);
    CHECK_MSG(a.ms < 1000, "a dribbled reply held the get for %lld ms", (long long)a.ms);
    CHECK(b.st != WK_OK && b.st != WK_ERR_NOT_FOUND);
    CHECK_MSG(b.ms < 1000, "the pool wait took %lld ms", (long long)b.ms);
    wk_cache_free(c);
    wk_redis_store_free(s);
    fake_resp_stop(&f);
}

typedef struct fake_job {
    const char *reply;
    size_t stream;
    size_t max_reply;
} fake_job;

static wk_status get_from_fake(void *arg)
{
    fake_job *j = arg;
    fake_resp f;
    memset(&f, 0, sizeof f);
    f.get_reply = j->reply;
    f.get_reply_len = strlen(j->reply);
    f.stream_bytes = j->stream;
    if (!fake_resp_start(&f)) {
        return WK_ERR_STATE;
    }
    wk_redis_opts o;
    memset(&o, 0, sizeof o);
    o.url = f.url;
    o.no_subscribe = true;
    o.command_timeout_ms = 250;
    o.max_reply_bytes = j->max_reply;
    wk_redis_store *s = NULL;
    wk_status st = wk_redis_store_new(&o, &s, NULL);
    if (st == WK_OK) {
        wk_cache *c = open_cache(s, "big");
        (void)age_of(c, "x", NULL, &st, NULL);
        wk_cache_free(c);
        wk_redis_store_free(s);
    }
    f.stop = 1;
    fake_resp_stop(&f);
    return st;
}

WK_TEST(test_fault_oversized_replies_are_refused_from_their_headers)
{
    struct {
        fake_job j;
        long max_kb;
    } cases[] = {
        /* 100 MB announced and 64 MB actually sent, against a 1 MiB cap */
        {{"$100000000\r\n", (size_t)64 << 20, (size_t)1 << 20}, 16 * 1024},
        /* the same with the default cap (64 MiB): refused before buffering */
        {{"$100000000\r\n", (size_t)64 << 20, 0}, 16 * 1024},
        /* a billion elements announced */
        {{"*999999999\r\n", 0, 0}, 16 * 1024},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wk_status st;
        long kb;
        int64_t ms;
        CHECK(in_child(get_from_fake, &cases[i].j, &st, &kb, &ms));
        CHECK_MSG(st == WK_ERR_LIMIT, "case %zu: status %s", i, wk_status_str(st));
        CHECK_MSG(kb < cases[i].max_kb, "case %zu: peak memory grew by %ld KiB", i, kb);
        CHECK_MSG(ms < 1000, "case %zu: took %lld ms", i, (long long)ms);
    }
    /* Within the cap a value is accepted. */
    fake_job ok = {"$3\r\nabc\r\n", 0, 16};
    wk_status st = get_from_fake(&ok);
    CHECK(st != WK_ERR_LIMIT); /* "abc" is not MessagePack: a corrupt entry, not a cap */
}

WK_TEST(test_fault_entry_larger_than_max_entry_bytes_is_refused)
{
    wk_cache_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.max_entry_bytes = 1000;
    wk_cache *c = NULL;
    CHECK_OK(wk_cache_new(&cfg, &c, NULL));
    char *big = malloc(5000);
    CHECK(big != NULL);
    memset(big, 'a', 4999);
    big[4999] = '\0';
    seed_user u;
    memset(&u, 0, sizeof u);
    u.username = big;
    wk_error err = {0};
    CHECK_STATUS(wk_cache_put(c, &seed_user_schema, "b", 1, &u, 0, &err), WK_ERR_LIMIT);
    free(big);
    wk_cache_free(c);
    /* The CLI refuses a document over --max-bytes before parsing it. */
    char cmd[512], out[4096];
    snprintf(cmd, sizeof cmd,
             "head -c 3000000 /dev/zero | tr '\\0' '1' | %s cache --redis redis://127.0.0.1:1 "
             "--max-bytes 1000000 put 1",
             cli_path());
    CHECK_EQ(sh_capture(cmd, out, sizeof out, NULL), 1);
    CHECK_MSG(strstr(out, "larger than the limit") != NULL, "CLI said: %s", out);
}

/* ---- item 8: the CLI tells Redis failures from misses ------------------------------------ */

WK_TEST(test_fault_cli_cache_get_reports_redis_failures_not_not_found)
{
    struct {
        const char *reply;
        bool close;
        const char *want;
    } cases[] = {
        {"-ERR boom\r\n", false, "error reply"},
        {":42\r\n", false, "wrong type"},
        {"*2\r\n$1\r\na\r\n$1\r\nb\r\n", false, "wrong type"},
        {"$10\r\nabc", true, "closed"},
        {"?garbage\r\n", false, "unknown reply type"},
        {"", true, "closed"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fake_resp f;
        memset(&f, 0, sizeof f);
        f.get_reply = cases[i].reply;
        f.get_reply_len = strlen(cases[i].reply);
        f.close_after_get = cases[i].close;
        CHECK(fake_resp_start(&f));
        char cmd[512], out[4096];
        snprintf(cmd, sizeof cmd, "%s cache --redis %s --timeout 300 get 1", cli_path(), f.url);
        int rc = sh_capture(cmd, out, sizeof out, NULL);
        f.stop = 1;
        fake_resp_stop(&f);
        CHECK_MSG(rc == 1, "case %zu: exit %d", i, rc);
        CHECK_MSG(strstr(out, "not found") == NULL && strstr(out, "redis") != NULL &&
                      strstr(out, cases[i].want) != NULL,
                  "case %zu: the CLI said: %s", i, out);
    }
    /* A real miss is still "not found". */
    const char *url = getenv("WK_REDIS_URL");
    if (url != NULL) {
        char cmd[512], out[4096];
        snprintf(cmd, sizeof cmd, "%s cache --redis %s --ns fltmiss%d get nosuch", cli_path(), url,
                 (int)getpid());
        CHECK_EQ(sh_capture(cmd, out, sizeof out, NULL), 1);
        CHECK_MSG(strstr(out, "not found") != NULL, "the CLI said: %s", out);
    }
}

/* ---- item 9: a memory-tier put that cannot be kept says so -------------------------------- */

WK_TEST(test_fault_memory_tier_put_too_large_to_keep_says_so)
{
    wk_cache *c = open_cache(NULL, "mem");
    CHECK(c != NULL);
    size_t n = (size_t)2 << 20; /* 2 MiB: more than a shard's share of 64 MiB / 16 */
    char *big = malloc(n + 1);
    CHECK(big != NULL);
    memset(big, 'a', n);
    big[n] = '\0';
    seed_user u;
    memset(&u, 0, sizeof u);
    u.username = big;
    wk_error err = {0};
    CHECK_STATUS(wk_cache_put(c, &seed_user_schema, "big", 3, &u, 0, &err), WK_ERR_LIMIT);
    u.username = (char *)"small";
    CHECK_OK(wk_cache_put(c, &seed_user_schema, "small", 5, &u, 0, NULL));
    wk_cache_entry *r = NULL;
    CHECK_OK(wk_cache_get(c, &seed_user_schema, "small", 5, NULL, NULL, &r, NULL));
    wk_cache_entry_unref(r);
    wk_cache_free(c);
    /* The CLI script prints a failure, never "ok", for the same put. */
    char path[] = "/tmp/wk-fault-script-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *sf = fdopen(fd, "w");
    fputs("put 1 \"", sf);
    for (size_t i = 0; i < n; i++) {
        fputc('a', sf);
    }
    fputs("\"\n", sf);
    fclose(sf);
    char cmd[512], out[4096];
    snprintf(cmd, sizeof cmd, "%s cache run %s", cli_path(), path);
    int rc = sh_capture(cmd, out, sizeof out, NULL);
    unlink(path);
    CHECK_EQ(rc, 1);
    CHECK_MSG(strstr(out, "ok") == NULL && strstr(out, "not kept") != NULL, "CLI said: %s", out);
    free(big);
}

/* ---- item 10: a paused reader, the 65th watcher, inspect output --------------------------- */

/* The reader: a cache opened before the feed is up (it hears "up" from the feed thread) or
 * after (it hears it when it registers, and must be given the feed's bound then too). */
static void reader_child(const char *url, const char *ns, bool cache_after_feed, int cmd_fd,
                         int res_fd)
{
    wk_redis_store *s = open_store(url, true, 250);
    wk_cache *c = cache_after_feed ? NULL : open_cache(s, ns);
    char ready = wait_feed(s) ? 'R' : 'X';
    if (cache_after_feed) {
        c = open_cache(s, ns);
    }
    if (write(res_fd, &ready, 1) != 1) {
        _exit(1);
    }
    char op;
    while (read(cmd_fd, &op, 1) == 1 && op == 'g') {
        long long age = age_of(c, "p1", NULL, NULL, NULL);
        char out = age == -1 ? 'N' : age >= 0 && age <= 9 ? (char)('0' + age) : 'E';
        if (write(res_fd, &out, 1) != 1) {
            break;
        }
    }
    wk_cache_free(c);
    wk_redis_store_free(s);
    _exit(0);
}

static char ask(int cmd_fd, int res_fd)
{
    char op = 'g', out = '?';
    if (write(cmd_fd, &op, 1) != 1) {
        return '?';
    }
    struct pollfd p = {res_fd, POLLIN, 0};
    if (poll(&p, 1, 5000) <= 0 || read(res_fd, &out, 1) != 1) {
        return '?';
    }
    return out;
}

/* A reader holding p1 is stopped, p1 is invalidated, the reader resumes past the feed's
 * bound: its first answer must come from Redis, not from the copy it held. */
static void stopped_reader_case(bool cache_after_feed)
{
    const char *url = redis_url();
    if (url == NULL) {
        return;
    }
    char ns[32];
    unique_ns(ns, sizeof ns, cache_after_feed ? "stopl" : "stop");
    /* The writer's deadline is long: only the reader's (250 ms) sets the feed's bound, and an
     * invalidation that timed out on a loaded machine would leave the old value in Redis and
     * look like a stale read. */
    wk_redis_store *ws = open_store(url, false, 5000);
    wk_cache *w = open_cache(ws, ns);
    CHECK_OK(put_age(w, "p1", 1, NULL));
    int cmd[2], res[2];
    CHECK(pipe(cmd) == 0 && pipe(res) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(cmd[1]);
        close(res[0]);
        reader_child(url, ns, cache_after_feed, cmd[0], res[1]);
    }
    close(cmd[0]);
    close(res[1]);
    char ready = '?';
    struct pollfd p = {res[0], POLLIN, 0};
    bool up = poll(&p, 1, 5000) > 0 && read(res[0], &ready, 1) == 1 && ready == 'R';
    char first = up ? ask(cmd[1], res[0]) : '?';
    char second = up ? ask(cmd[1], res[0]) : '?';
    char after = '?';
    wk_status invalidated = WK_ERR_STATE;
    if (up) {
        kill(pid, SIGSTOP);
        sleep_ms(50);
        invalidated = wk_cache_invalidate(w, &seed_user_schema, "p1", 2, NULL);
        sleep_ms(1000); /* longer than the feed's bound (heartbeat 200 + timeout 250 ms) */
        char op = 'g';
        if (write(cmd[1], &op, 1) == 1) {
            kill(pid, SIGCONT);
            if (poll(&p, 1, 5000) <= 0 || read(res[0], &after, 1) != 1) {
                after = '?';
            }
        } else {
            kill(pid, SIGCONT);
        }
    }
    close(cmd[1]);
    close(res[0]);
    kill(pid, SIGCONT);
    waitpid(pid, NULL, 0);
    wk_cache_free(w);
    wk_redis_store_free(ws);
    CHECK(up);
    CHECK_EQ(first, '1');
    CHECK_EQ(second, '1');
    CHECK_OK(invalidated);
    CHECK_MSG(after == 'N', "after the pause the reader answered '%c' (want N: invalidated)",
              after);
}

WK_TEST(test_fault_reader_stopped_during_an_invalidation_does_not_serve_the_old_value)
{
    stopped_reader_case(false);
}

/* The CI flake of stop 32: a cache registered while the feed was up was told "up" without a
 * bound, so until the next round of pongs it trusted its copies without limit. */
WK_TEST(test_fault_reader_whose_cache_joined_a_running_feed_is_bounded_too)
{
    stopped_reader_case(true);
}

WK_TEST(test_fault_sixty_fifth_cache_on_a_store_still_uses_its_local_tier)
{
    const char *url = redis_url();
    if (url == NULL) {
        return;
    }
    char ns[32];
    unique_ns(ns, sizeof ns, "w65");
    wk_redis_store *s = open_store(url, true, 250);
    CHECK(s != NULL);
    enum { N = 70 };
    wk_cache *cs[N];
    for (int i = 0; i < N; i++) {
        cs[i] = open_cache(s, ns);
        CHECK(cs[i] != NULL);
    }
    CHECK(wait_feed(s));
    bool all = true;
    for (int i = 0; i < N; i++) {
        truth t = {3, 0};
        (void)age_of(cs[i], "k", &t, NULL, NULL);
        long long age = 0;
        for (int k = 0; k < 50; k++) { /* the feed's freshness is renewed every 200 ms */
            age = age_of(cs[i], "k", &t, NULL, NULL);
            wk_cache_stats st;
            wk_cache_get_stats(cs[i], &st);
            if (st.local_hits > 0) {
                break;
            }
            sleep_ms(10);
        }
        wk_cache_stats st;
        wk_cache_get_stats(cs[i], &st);
        if (st.local_hits == 0 || age != 3) {
            wk__test_fail(__FILE__, __LINE__, "cache %d never used its local tier", i + 1);
            all = false;
            break;
        }
    }
    for (int i = 0; i < N; i++) {
        wk_cache_free(cs[i]);
    }
    wk_redis_store_free(s);
    CHECK(all);
}

WK_TEST(test_fault_inspect_output_stays_proportional_to_the_input_at_any_depth)
{
    char path[] = "/tmp/wk-fault-deep-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    size_t depth = 20000;
    uint8_t *b = malloc(depth + 1);
    CHECK(b != NULL);
    memset(b, 0x91, depth); /* [[[[...nil...]]]] */
    b[depth] = 0xc0;
    CHECK(write(fd, b, depth + 1) == (ssize_t)(depth + 1));
    close(fd);
    free(b);
    char cmd[512], out[256];
    snprintf(cmd, sizeof cmd, "%s inspect --max-depth 100000 %s", cli_path(), path);
    size_t total = 0;
    int64_t t0 = now_ms();
    int rc = sh_capture(cmd, out, sizeof out, &total);
    int64_t ms = now_ms() - t0;
    unlink(path);
    CHECK_EQ(rc, 0);
    /* Two lines per level (open and end), each at most ~130 bytes. */
    CHECK_MSG(total < (depth + 1) * 300, "%zu bytes of output for %zu bytes of input", total,
              depth + 1);
    CHECK_MSG(ms < 10000, "took %lld ms", (long long)ms);
}

/* ---- item 7: query deadlines --------------------------------------------------------------- */

static const char *pg_dsn(void)
{
    const char *d = getenv("WK_PG_DSN");
    if (d == NULL || d[0] == '\0') {
        wk__test_skip("WK_PG_DSN is not set");
        return NULL;
    }
    return d;
}

WK_TEST(test_fault_pq_query_on_a_stopped_backend_ends_at_the_deadline)
{
    const char *dsn = pg_dsn();
    if (dsn == NULL) {
        return;
    }
    wk_pq_conn *conn = NULL;
    CHECK_OK(wk_pq_connect_timeout(dsn, NULL, 500, &conn, NULL));
    PGresult *res = NULL;
    /* A slow query: the server's statement_timeout (or the cancel) ends it. */
    int64_t t0 = now_ms();
    /* whichever fires first: the server's statement_timeout (WK_ERR_SERVER, SQLSTATE 57014)
     * or the client-side deadline (WK_ERR_IO) */
    wk_status slow = wk_pq_exec(conn, "select pg_sleep(5)", NULL, 0, &res, NULL);
    CHECK_MSG(slow == WK_ERR_IO ||
                  (slow == WK_ERR_SERVER && wk_pq_last_error(conn) != NULL &&
                   strcmp(wk_pq_last_error(conn)->sqlstate, "57014") == 0),
              "slow query: %s", wk_status_str(slow));
    PQclear(res);
    CHECK_MSG(now_ms() - t0 < 2000, "a slow query took %lld ms", (long long)(now_ms() - t0));
    /* The connection is still usable after a server-side timeout. */
    CHECK_OK(wk_pq_exec(conn, "select pg_backend_pid()::text", NULL, 0, &res, NULL));
    pid_t backend = (pid_t)strtol(PQgetvalue(res, 0, 0), NULL, 10);
    PQclear(res);
    res = NULL;
    CHECK(backend > 0);
    if (kill(backend, SIGSTOP) != 0) {
        wk_pq_conn_free(conn);
        wk__test_skip("cannot stop the backend (not allowed to signal it)");
        return;
    }
    t0 = now_ms();
    wk_error err = {0};
    wk_status st = wk_pq_exec(conn, "select 1", NULL, 0, &res, &err);
    int64_t ms = now_ms() - t0;
    kill(backend, SIGCONT);
    PQclear(res);
    CHECK_STATUS(st, WK_ERR_IO);
    CHECK(strstr(wk_pq_conn_message(conn), "timed out") != NULL);
    CHECK_MSG(ms < 3000, "a stopped backend held the query for %lld ms", (long long)ms);
    wk_pq_conn_free(conn);
}

WK_TEST(test_fault_cli_pg_query_timeout)
{
    const char *dsn = pg_dsn();
    if (dsn == NULL) {
        return;
    }
    char cmd[1024], out[4096];
    snprintf(cmd, sizeof cmd, "%s pg query --dsn '%s' --timeout 0.5 'select pg_sleep(10)'",
             cli_path(), dsn);
    int64_t t0 = now_ms();
    int rc = sh_capture(cmd, out, sizeof out, NULL);
    int64_t ms = now_ms() - t0;
    CHECK_EQ(rc, 1);
    CHECK_MSG(ms < 3000, "pg query --timeout 0.5 took %lld ms", (long long)ms);
    CHECK_MSG(strstr(out, "timeout") != NULL || strstr(out, "timed out") != NULL ||
                  strstr(out, "cancel") != NULL,
              "the CLI said: %s", out);
    /* A record nested 20 deep from the server prints as nested objects (the row policy), not
     * as text that doubles per level, well inside --max-value-bytes. */
    snprintf(cmd, sizeof cmd,
             "%s pg query --dsn '%s' --max-value-bytes 100000 \"select "
             "row(row(row(row(row(row(row(row(row(row(row(row(row(row(row(row(row(row(row(row("
             "'x y'))))))))))))))))))))\"",
             cli_path(), dsn);
    rc = sh_capture(cmd, out, sizeof out, NULL);
    CHECK_EQ(rc, 0);
    CHECK_MSG(strstr(out, "{\"f1\":{\"f1\":\"x y\"}}") != NULL, "the CLI said: %s", out);
}

/* ---- found by the soak: a get after an invalidation must not join an older load ----------- */

typedef struct gate_loader {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int calls;
    bool started, released;
    int age;
} gate_loader;

static wk_status load_gated(void *ctx, const wk_schema *s, const char *id, size_t id_len, void *obj,
                            wk_arena *arena, wk_error *err)
{
    gate_loader *g = ctx;
    (void)s;
    (void)err;
    pthread_mutex_lock(&g->mu);
    int age = g->age;
    bool first = g->calls++ == 0;
    if (first) {
        g->started = true;
        pthread_cond_broadcast(&g->cv);
        while (!g->released) {
            pthread_cond_wait(&g->cv, &g->mu);
        }
    }
    pthread_mutex_unlock(&g->mu);
    seed_user *u = obj;
    u->username = wk_arena_strndup(arena, id, id_len);
    u->age = age;
    return WK_OK;
}

typedef struct gated_get {
    wk_cache *c;
    gate_loader *g;
    long long age;
    atomic_int done;
} gated_get;

static void *gated_get_thread(void *arg)
{
    gated_get *j = arg;
    wk_cache_entry *r = NULL;
    j->age = -2;
    if (wk_cache_get(j->c, &seed_user_schema, "j", 1, load_gated, j->g, &r, NULL) == WK_OK) {
        j->age = ((const seed_user *)wk_cache_entry_object(r))->age;
        wk_cache_entry_unref(r);
    }
    j->done = 1;
    return NULL;
}

WK_TEST(test_fault_get_after_an_invalidation_does_not_join_a_load_from_before_it)
{
    wk_cache *c = open_cache(NULL, "gate");
    CHECK(c != NULL);
    gate_loader g;
    memset(&g, 0, sizeof g);
    pthread_mutex_init(&g.mu, NULL);
    pthread_cond_init(&g.cv, NULL);
    g.age = 1;
    gated_get before = {c, &g, 0, 0}, after = {c, &g, 0, 0};
    pthread_t t1, t2;
    pthread_create(&t1, NULL, gated_get_thread, &before);
    pthread_mutex_lock(&g.mu);
    while (!g.started) {
        pthread_cond_wait(&g.cv, &g.mu);
    }
    g.age = 2; /* the source changes while the first load is in progress ... */
    pthread_mutex_unlock(&g.mu);
    CHECK_OK(wk_cache_invalidate(c, &seed_user_schema, "j", 1, NULL)); /* ... and says so */
    pthread_create(&t2, NULL, gated_get_thread, &after);
    for (int i = 0; i < 100 && !after.done; i++) {
        sleep_ms(5);
    }
    pthread_mutex_lock(&g.mu);
    g.released = true;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    CHECK_EQ(before.age, 1); /* began before the invalidation: the old value is fine */
    CHECK_EQ(after.age, 2);
    /* And the local tier holds the new value, not the old load's. */
    CHECK_EQ(age_of(c, "j", NULL, NULL, NULL), 2);
    wk_cache_free(c);
    pthread_cond_destroy(&g.cv);
    pthread_mutex_destroy(&g.mu);
}

/* ---- issue 29 item 10: topology failures named by the server that failed ------------------ */

/* A port nobody listens on: bound, then closed. */
static int dead_port(void)
{
    return rs_free_port();
}

WK_TEST(test_fault_sentinel_naming_port_abc_is_refused_not_port_0)
{
    fake_resp f;
    memset(&f, 0, sizeof f);
    f.other_name = "SENTINEL";
    f.other_reply = "*2\r\n$9\r\n127.0.0.1\r\n$3\r\nabc\r\n";
    CHECK(fake_resp_start(&f));
    char sa[32];
    snprintf(sa, sizeof sa, "127.0.0.1:%d", f.port);
    const char *sentinels[1] = {sa};
    wk_redis_opts o = {0};
    o.sentinels = sentinels;
    o.nsentinels = 1;
    o.sentinel_master = "m";
    o.no_subscribe = true;
    o.command_timeout_ms = 500;
    wk_redis_store *s = NULL;
    wk_error e = {0};
    CHECK_OK(wk_redis_store_new(&o, &s, &e));
    CHECK_STATUS(wk_redis_store_ping(s, &e), WK_ERR_IO);
    CHECK_MSG(e.msg != NULL && strstr(e.msg, "bad port") != NULL, "said: %s", e.msg);
    char at[64];
    wk_redis_store_failed_server(s, at, sizeof at);
    CHECK_STR(at, sa); /* the sentinel that answered so */
    wk_redis_store_free(s);
    f.stop = 1;
    fake_resp_stop(&f);
}

WK_TEST(test_fault_unreachable_cluster_node_and_sentinel_master_named_by_their_address)
{
    int dead = dead_port();
    char reply[256];
    /* CLUSTER SLOTS: every slot on a node nobody listens on */
    snprintf(reply, sizeof reply, "*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n$9\r\n127.0.0.1\r\n:%d\r\n",
             dead);
    fake_resp f;
    memset(&f, 0, sizeof f);
    f.other_name = "CLUSTER";
    f.other_reply = reply;
    CHECK(fake_resp_start(&f));
    char cmd[512], out[4096], want[64];
    snprintf(want, sizeof want, "cannot reach Redis at 127.0.0.1:%d", dead);
    snprintf(cmd, sizeof cmd, "%s cache --redis-cluster 127.0.0.1:%d --timeout 300 get 1",
             cli_path(), f.port);
    CHECK_EQ(sh_capture(cmd, out, sizeof out, NULL), 1);
    CHECK_MSG(strstr(out, want) != NULL, "cluster: the CLI said: %s", out);
    f.stop = 1;
    fake_resp_stop(&f);
    /* a sentinel naming a master nobody listens on */
    char sreply[128];
    char dp[16];
    int dl = snprintf(dp, sizeof dp, "%d", dead);
    snprintf(sreply, sizeof sreply, "*2\r\n$9\r\n127.0.0.1\r\n$%d\r\n%s\r\n", dl, dp);
    memset(&f, 0, sizeof f);
    f.other_name = "SENTINEL";
    f.other_reply = sreply;
    CHECK(fake_resp_start(&f));
    snprintf(cmd, sizeof cmd,
             "%s cache --redis-sentinel 127.0.0.1:%d --sentinel-master m --timeout 300 get 1",
             cli_path(), f.port);
    CHECK_EQ(sh_capture(cmd, out, sizeof out, NULL), 1);
    CHECK_MSG(strstr(out, want) != NULL, "sentinel: the CLI said: %s", out);
    f.stop = 1;
    fake_resp_stop(&f);
    /* and a sentinel that cannot be reached at all is named too */
    snprintf(cmd, sizeof cmd,
             "%s cache --redis-sentinel 127.0.0.1:%d --sentinel-master m --timeout 300 get 1",
             cli_path(), dead);
    CHECK_EQ(sh_capture(cmd, out, sizeof out, NULL), 1);
    CHECK_MSG(strstr(out, want) != NULL, "dead sentinel: the CLI said: %s", out);
}
