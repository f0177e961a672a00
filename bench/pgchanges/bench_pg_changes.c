/*
 * Suite "pg-changes" (needs WK_PG_DSN with wal_level=logical, pg_recvlogical and the wal2json
 * plugin of Debian's postgresql-15-wal2json; says "skipped" and succeeds without them):
 * change events to JSON Lines from one UPDATE of every row of a 7-column table (1,000,000
 * rows; 100,000 with --quick), each side reading its own slot made before the UPDATE:
 * - wirekit: wk_pq_changes (pgoutput, binary values, the transaction streamed in progress and
 *   buffered here) with every change appended as a JSON line (wk_pq_changes_append, what
 *   `wirekit pg changes` writes) to a file; timed in this process from connecting to the
 *   commit's callback;
 * - wirekit, not streamed: the same with WK_PQ_CHANGES_NO_STREAMING (the server decodes the
 *   whole transaction first, as it does for wal2json);
 * - pg_recvlogical with wal2json format-version 2 (one JSON object per change, with xid,
 *   timestamp and LSN as wirekit's events carry) to a file, timed as a whole process that
 *   exits at the UPDATE's end position (--endpos).
 * Figures are ns per event (events/s is 1e9 / that) and bytes per event, one run each (the
 * transaction is large, and a slot is read once). Then, with WK_REDIS_URL, the delay from an
 * UPDATE's commit returning (synchronous_commit on) to a reader's cache, whose memory tier
 * held the entity, answering the new value, with the invalidator (wk_pq_changes_run_
 * invalidator) in a thread on another cache of the same Redis: 50 updates (20 with --quick),
 * p50 and p99.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "wirekit/pq_changes.h"
#include "wirekit/redis.h"

typedef struct sink {
    wk_pq_changes *s;
    FILE *f;
    wk_buf buf;
    uint64_t events;
} sink;

static wk_status write_change(void *ctx, const wk_pq_change *ch, wk_error *err)
{
    sink *k = ctx;
    if (ch->op == WK_PQ_CHANGE_COMMIT) {
        if (k->buf.len > 0 && fwrite(k->buf.data, 1, k->buf.len, k->f) != k->buf.len) {
            return WK_ERR_IO;
        }
        wk_buf_clear(&k->buf);
        fflush(k->f);
        wk_pq_changes_stop(k->s); /* the one transaction is handled */
        return WK_OK;
    }
    wk_status st = wk_pq_changes_append(k->s, ch, NULL, &k->buf, err);
    k->events++;
    if (st == WK_OK && k->buf.len >= (1u << 16)) {
        if (fwrite(k->buf.data, 1, k->buf.len, k->f) != k->buf.len) {
            return WK_ERR_IO;
        }
        wk_buf_clear(&k->buf);
    }
    return st;
}

static bool exec_sql(PGconn *c, const char *sql)
{
    PGresult *r = PQexec(c, sql);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
    PQclear(r);
    return ok;
}

static void quiet(void *arg, const char *msg)
{
    (void)arg;
    (void)msg; /* NOTICEs of DROP ... IF EXISTS */
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* One wirekit run over `slot`: the ns it took, 0 on failure. */
static uint64_t run_wirekit(wk_bench *b, const char *dsn, const char *slot, unsigned flags,
                            const char *path, uint64_t *events)
{
    wk_pq_changes_opts o;
    memset(&o, 0, sizeof o);
    o.dsn = dsn;
    o.slot = slot;
    o.publication = "wk_bench_chg_pub";
    o.flags = flags;
    o.timeout_ms = 120000;
    sink k;
    memset(&k, 0, sizeof k);
    k.f = fopen(path, "wb");
    wk_buf_init(&k.buf, NULL, 0);
    uint64_t t0 = wk_bench_now_ns();
    wk_error err = {0};
    wk_status st = k.f != NULL ? wk_pq_changes_open(&o, &k.s, &err) : WK_ERR_IO;
    if (st == WK_OK) {
        st = wk_pq_changes_run(k.s, write_change, &k, &err);
    }
    uint64_t t = wk_bench_now_ns() - t0;
    if (st != WK_OK) {
        wk_bench_fail(b, "pg-changes: wirekit: %s",
                      k.s != NULL ? wk_pq_changes_message(k.s) : wk_status_str(st));
    }
    wk_pq_changes_free(k.s);
    if (k.f != NULL) {
        fclose(k.f);
    }
    wk_buf_free(&k.buf);
    *events = k.events;
    return st == WK_OK ? t : 0;
}

typedef struct inv_thread {
    wk_pq_changes *s;
    wk_pq_invalidator *inv;
    wk_status st;
} inv_thread;

static void *inv_run(void *arg)
{
    inv_thread *t = arg;
    t->st = wk_pq_changes_run_invalidator(t->s, t->inv, NULL);
    return NULL;
}

WK_SCHEMA_DEFINE_VALUE(bench_user, "user", 1);

/* A cache on its own Redis store (subscribed: its memory tier is trusted). */
static bool open_cache(wk_redis_store **store, wk_cache **cache)
{
    wk_redis_opts o = {0};
    o.url = getenv("WK_REDIS_URL");
    o.connect_timeout_ms = 2000;
    o.command_timeout_ms = 2000;
    if (wk_redis_store_new(&o, store, NULL) != WK_OK) {
        return false;
    }
    for (int i = 0; i < 300 && !wk_redis_store_feed_up(*store); i++) {
        usleep(10000);
    }
    wk_cache_config cfg = {0};
    cfg.ns = "wkbenchchg";
    cfg.store = wk_redis_store_iface(*store);
    cfg.local_ttl_ms = 600000;
    return wk_cache_new(&cfg, cache, NULL) == WK_OK;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The reader's view: what the cache holds for id 1 (its loader reads the row). */
static wk_status load_name(void *ctx, const wk_schema *s, const char *id, size_t id_len,
                           void *obj, wk_arena *arena, wk_error *err)
{
    (void)s;
    (void)id;
    (void)id_len;
    (void)err;
    PGresult *r = PQexec(ctx, "SELECT name FROM wk_bench_chg_user WHERE id = 1");
    wk_status st = WK_ERR_NOT_FOUND;
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
        size_t n = (size_t)PQgetlength(r, 0, 0);
        char *copy = wk_arena_alloc(arena, n + 1, 1);
        if (copy != NULL) {
            memcpy(copy, PQgetvalue(r, 0, 0), n + 1);
            wk_value *v = obj;
            v->type = WK_VAL_STR;
            v->len = (uint32_t)n;
            v->u.str = copy;
            st = WK_OK;
        }
    }
    PQclear(r);
    return st;
}

static bool reader_sees(wk_cache *c, PGconn *loader_conn, const char *want)
{
    wk_cache_entry *e = NULL;
    bool same = false;
    if (wk_cache_get(c, &bench_user, "1", 1, load_name, loader_conn, &e, NULL) == WK_OK) {
        const wk_value *v = wk_cache_entry_object(e);
        same = v->len == strlen(want) && memcmp(v->u.str, want, v->len) == 0;
        wk_cache_entry_unref(e);
    }
    return same;
}

/* UPDATE -> a reader's cache answering the new value, p50 and p99. */
static int bench_delay(wk_bench *b, const char *dsn, PGconn *c)
{
    if (getenv("WK_REDIS_URL") == NULL) {
        wk_bench_say(b, "pg-changes: cache delay skipped (WK_REDIS_URL is not set)");
        return 0;
    }
    exec_sql(c, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                "WHERE slot_name = 'wk_bench_chg_inv'");
    if (!exec_sql(c, "DROP TABLE IF EXISTS wk_bench_chg_user; "
                     "CREATE TABLE wk_bench_chg_user (id int PRIMARY KEY, name text); "
                     "INSERT INTO wk_bench_chg_user VALUES (1, 'v0'); "
                     "DROP PUBLICATION IF EXISTS wk_bench_chg_user_pub; "
                     "CREATE PUBLICATION wk_bench_chg_user_pub FOR TABLE wk_bench_chg_user")) {
        wk_bench_fail(b, "pg-changes: cannot make the user table: %s", PQerrorMessage(c));
        return 1;
    }
    wk_redis_store *rs_w = NULL, *rs_r = NULL;
    wk_cache *cw = NULL, *cr = NULL;
    inv_thread t = {NULL, NULL, WK_OK};
    wk_pq_changes_opts o;
    memset(&o, 0, sizeof o);
    o.dsn = dsn;
    o.slot = "wk_bench_chg_inv";
    o.publication = "wk_bench_chg_user_pub";
    o.flags = WK_PQ_CHANGES_CREATE_SLOT;
    wk_pq_invalidate_rule rule = {&bench_user, "wk_bench_chg_user", "id"};
    PGconn *lc = PQconnectdb(dsn);
    bool ok = open_cache(&rs_w, &cw) && open_cache(&rs_r, &cr) &&
              wk_pq_invalidator_new(cw, &rule, 1, &t.inv, NULL) == WK_OK &&
              wk_pq_changes_open(&o, &t.s, NULL) == WK_OK;
    pthread_t th;
    if (ok) {
        pthread_create(&th, NULL, inv_run, &t);
    }
    int n = wk_bench_quick(b) ? 20 : 50;
    uint64_t *delays = calloc((size_t)n, sizeof *delays);
    exec_sql(c, "SET synchronous_commit = on");
    int got = 0;
    for (int i = 1; ok && i <= n; i++) {
        char prev[32], next[32], sql[128];
        snprintf(prev, sizeof prev, "v%d", i - 1);
        snprintf(next, sizeof next, "v%d", i);
        /* the reader holds the current value in its memory tier */
        for (int w = 0; w < 5000 && !reader_sees(cr, lc, prev); w++) {
            usleep(1000);
        }
        snprintf(sql, sizeof sql, "UPDATE wk_bench_chg_user SET name = '%s' WHERE id = 1", next);
        if (!exec_sql(c, sql)) {
            break;
        }
        uint64_t t0 = wk_bench_now_ns();
        while (!reader_sees(cr, lc, next) && wk_bench_now_ns() - t0 < 30000000000ull) {
        }
        delays[got++] = wk_bench_now_ns() - t0;
    }
    if (ok) {
        wk_pq_changes_stop(t.s);
        pthread_join(th, NULL);
    }
    int rc = 0;
    if (!ok || got < n) {
        wk_bench_fail(b, "pg-changes: the cache delay run failed (%d of %d updates)", got, n);
        rc = 1;
    } else {
        qsort(delays, (size_t)got, sizeof *delays, cmp_u64);
        const char *note = "UPDATE's commit returned -> reader's get answers the new value "
                           "(invalidator thread, Redis pub/sub)";
        wk_bench_record(b, "UPDATE to cache reader, p50", "wirekit",
                        (double)delays[got / 2], 0, 0, note);
        wk_bench_record(b, "UPDATE to cache reader, p99", "wirekit",
                        (double)delays[(got * 99) / 100 < got ? (got * 99) / 100 : got - 1], 0,
                        0, note);
    }
    free(delays);
    wk_pq_changes_free(t.s);
    wk_pq_invalidator_free(t.inv);
    wk_cache_free(cw);
    wk_cache_free(cr);
    wk_redis_store_free(rs_w);
    wk_redis_store_free(rs_r);
    PQfinish(lc);
    exec_sql(c, "SELECT pg_drop_replication_slot('wk_bench_chg_inv')");
    return rc;
}

int wk_bench_suite_pg_changes(wk_bench *b)
{
    const char *dsn = getenv("WK_PG_DSN");
    if (dsn == NULL) {
        wk_bench_say(b, "pg-changes: skipped (WK_PG_DSN is not set; start a server with "
                        "scripts/servers.sh start)");
        return 0;
    }
    if (wk_bench_callgrind(b)) {
        wk_bench_say(b, "pg-changes: a stream against a server has no instruction count");
        return 0;
    }
    PGconn *c = PQconnectdb(dsn);
    PQsetNoticeProcessor(c, quiet, NULL);
    PGresult *wl = PQexec(c, "SHOW wal_level");
    bool logical = PQresultStatus(wl) == PGRES_TUPLES_OK && strcmp(PQgetvalue(wl, 0, 0), "logical") == 0;
    PQclear(wl);
    if (!logical) {
        wk_bench_say(b, "pg-changes: skipped (the server's wal_level is not logical)");
        PQfinish(c);
        return 0;
    }
    int rc = 0;
    long rows = wk_bench_quick(b) ? 100000 : 1000000;
    static const char *const slots[] = {"wk_bench_chg_wk", "wk_bench_chg_wk_ns", "wk_bench_chg_w2j"};
    char sql[1024];
    for (int i = 0; i < 3; i++) {
        snprintf(sql, sizeof sql,
                 "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                 "WHERE slot_name = '%s'",
                 slots[i]);
        exec_sql(c, sql);
    }
    snprintf(sql, sizeof sql,
             "DROP TABLE IF EXISTS wk_bench_chg; CREATE TABLE wk_bench_chg AS "
             "SELECT i::int4 AS id, (i::int8 * 1000003) AS big, (i * 0.25)::float8 AS f, "
             "(1 + i / 100.0)::numeric(12,2) AS price, 'name-' || i AS name, "
             "timestamptz '2000-01-01 00:00:00+00' + i * interval '1 second' AS at, "
             "(i %% 3 = 0) AS flag FROM generate_series(1, %ld) AS i; "
             "ALTER TABLE wk_bench_chg ADD PRIMARY KEY (id); "
             "DROP PUBLICATION IF EXISTS wk_bench_chg_pub; "
             "CREATE PUBLICATION wk_bench_chg_pub FOR TABLE wk_bench_chg",
             rows);
    /* each slot in a transaction of its own (a slot cannot be made after writes) */
    if (!exec_sql(c, sql) ||
        !exec_sql(c, "SELECT pg_create_logical_replication_slot('wk_bench_chg_wk', 'pgoutput')") ||
        !exec_sql(c, "SELECT pg_create_logical_replication_slot('wk_bench_chg_wk_ns', 'pgoutput')") ||
        !exec_sql(c, "SELECT pg_create_logical_replication_slot('wk_bench_chg_w2j', 'wal2json')")) {
        wk_bench_say(b, "pg-changes: skipped (cannot make the table and slots: %s)",
                     PQerrorMessage(c));
        PQfinish(c);
        return 0;
    }
    if (!exec_sql(c, "UPDATE wk_bench_chg SET big = big + 1")) {
        wk_bench_fail(b, "pg-changes: the UPDATE failed: %s", PQerrorMessage(c));
        PQfinish(c);
        return 1;
    }
    PGresult *er = PQexec(c, "SELECT pg_current_wal_lsn()::text");
    char endpos[64];
    snprintf(endpos, sizeof endpos, "%s", PQresultStatus(er) == PGRES_TUPLES_OK ? PQgetvalue(er, 0, 0) : "0/0");
    PQclear(er);
    char dir[] = "/tmp/wk-bench-pgchanges.XXXXXX";
    if (mkdtemp(dir) == NULL) {
        wk_bench_fail(b, "pg-changes: cannot make a temp dir");
        PQfinish(c);
        return 1;
    }
    char path_wk[128], path_ns[128], path_w2j[128], cmd[2048];
    snprintf(path_wk, sizeof path_wk, "%s/wirekit.jsonl", dir);
    snprintf(path_ns, sizeof path_ns, "%s/wirekit-ns.jsonl", dir);
    snprintf(path_w2j, sizeof path_w2j, "%s/wal2json.jsonl", dir);
    const char *case_name = "UPDATE of 1M rows, 7 cols: events to JSON Lines";
    if (wk_bench_quick(b)) {
        case_name = "UPDATE of 100k rows, 7 cols: events to JSON Lines";
    }
    uint64_t ev = 0;
    uint64_t t = run_wirekit(b, dsn, "wk_bench_chg_wk", 0, path_wk, &ev);
    if (t != 0 && (long)ev == rows) {
        wk_bench_record(b, case_name, "wirekit", (double)t / (double)rows,
                        (size_t)(file_size(path_wk) / rows), 0,
                        "pgoutput binary, streamed in progress, buffered, JSON per change");
    } else {
        wk_bench_fail(b, "pg-changes: wirekit gave %llu events of %ld", (unsigned long long)ev,
                      rows);
        rc = 1;
    }
    unlink(path_wk);
    t = run_wirekit(b, dsn, "wk_bench_chg_wk_ns", WK_PQ_CHANGES_NO_STREAMING, path_ns, &ev);
    if (t != 0 && (long)ev == rows) {
        wk_bench_record(b, case_name, "wirekit, not streamed", (double)t / (double)rows,
                        (size_t)(file_size(path_ns) / rows), 0,
                        "pgoutput binary, decoded whole by the server first (as for wal2json)");
    } else {
        wk_bench_fail(b, "pg-changes: wirekit (not streamed) gave %llu events", (unsigned long long)ev);
        rc = 1;
    }
    unlink(path_ns);
    char *q = PQescapeLiteral(c, dsn, strlen(dsn));
    snprintf(cmd, sizeof cmd,
             "pg_recvlogical -d %s --slot wk_bench_chg_w2j --start --endpos %s --no-loop "
             "-o format-version=2 -o include-xids=1 -o include-timestamp=1 -o include-lsn=1 "
             "-f '%s' 2>/dev/null",
             q, endpos, path_w2j);
    PQfreemem(q);
    uint64_t t0 = wk_bench_now_ns();
    int prc = system(cmd);
    uint64_t t_w2j = wk_bench_now_ns() - t0;
    long size = file_size(path_w2j);
    if (prc != 0 || size <= 0) {
        wk_bench_say(b, "pg-changes: pg_recvlogical with wal2json failed (is "
                        "postgresql-15-wal2json installed?)");
    } else {
        wk_bench_peer(b, "pg_recvlogical + wal2json 2", "Debian postgresql-15-wal2json, -O2");
        wk_bench_record(b, case_name, "pg_recvlogical + wal2json 2", (double)t_w2j / (double)rows,
                        (size_t)(size / rows), 0,
                        "format-version 2 with xid, timestamp, lsn; a whole process");
    }
    unlink(path_w2j);
    rmdir(dir);
    for (int i = 0; i < 3; i++) {
        snprintf(sql, sizeof sql,
                 "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                 "WHERE slot_name = '%s'",
                 slots[i]);
        exec_sql(c, sql);
    }
    exec_sql(c, "DROP TABLE IF EXISTS wk_bench_chg");
    int drc = bench_delay(b, dsn, c);
    PQfinish(c);
    return rc != 0 ? rc : drc;
}
