/*
 * Suite "pg-copy" (needs WK_PG_DSN and psql on PATH; says "skipped" and succeeds without
 * them): a 7-column table of 1,000,000 rows (100,000 with --quick) is exported to a JSON
 * Lines file three ways, each timed once end to end (query, transfer, decode, write):
 * - wirekit: wk_pq_copy_out (binary COPY) with every row written as a JSON object;
 * - psql \copy (select row_to_json(t) from t): the server renders the JSON, psql writes it;
 * - psql --csv: not JSON at all, the floor of what a text export costs.
 * Then the wirekit JSON Lines are imported into an empty copy of the table with
 * `wirekit pg copy in` (the command built next to wirekit-bench) and must equal the table by
 * EXCEPT ALL, against psql \copy from the CSV (both timed as whole processes).
 * The two JSON outputs must hold the same number of lines as the table has rows. Figures are
 * ns per row (recorded, not calibrated: one run each, the table being large).
 * First, 10,000 small statements pipelined against one at a time (bench_pg_pipeline.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "wirekit/json.h"
#include "wirekit/pq.h"

int wk_bench_pg_pipeline(wk_bench *b, const char *dsn);

typedef struct out {
    FILE *f;
    wk_buf buf;
    wk_json_writer jw;
    wk_sink sink;
    wk_buf scratch;
} out;

static wk_status write_row(void *ctx, const wk_pg_plan *plan, const uint8_t *const *vals,
                           const int *lens, wk_error *err)
{
    out *o = ctx;
    wk_pg_events ev = {&o->sink, WK_PG_EV_RAW_FLOATS, &o->scratch, 0};
    wk_status st = wk_pg_plan_emit_row(plan, vals, lens, &ev, err);
    if (st == WK_OK && o->buf.len >= (1u << 16)) {
        if (fwrite(o->buf.data, 1, o->buf.len, o->f) != o->buf.len) {
            return WK_ERR_IO;
        }
        wk_buf_clear(&o->buf);
    }
    return st;
}

static long count_lines(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return -1;
    }
    long n = 0;
    char buf[1 << 16];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
        for (size_t i = 0; i < got; i++) {
            n += buf[i] == '\n';
        }
    }
    fclose(f);
    return n;
}

/* Runs a shell command, returns its wall time in ns (0 on failure). */
static uint64_t timed_system(const char *cmd)
{
    uint64_t t0 = wk_bench_now_ns();
    int rc = system(cmd);
    uint64_t t = wk_bench_now_ns() - t0;
    return rc == 0 ? t : 0;
}

int wk_bench_suite_pg_copy(wk_bench *b)
{
    const char *dsn = getenv("WK_PG_DSN");
    if (dsn == NULL) {
        wk_bench_say(b, "pg-copy: skipped (WK_PG_DSN is not set; start a server with "
                        "scripts/servers.sh start)");
        return 0;
    }
    int prc = wk_bench_pg_pipeline(b, dsn); /* bench_pg_pipeline.c */
    if (wk_bench_callgrind(b)) {
        wk_bench_say(b, "pg-copy: export and import are timed as whole processes; they have "
                        "no instruction count");
        return prc;
    }
    if (system("psql --version >/dev/null 2>&1") != 0) {
        wk_bench_say(b, "pg-copy: export and import skipped (no psql on PATH)");
        return prc;
    }
    long rows = wk_bench_quick(b) ? 100000 : 1000000;
    wk_pq_conn *conn = NULL;
    wk_error err = {0};
    if (wk_pq_connect(dsn, NULL, &conn, &err) != WK_OK) {
        wk_bench_fail(b, "pg-copy: cannot connect: %s", wk_pq_conn_message(conn));
        wk_pq_conn_free(conn);
        return 1;
    }
    char sql[1024];
    snprintf(sql, sizeof sql,
             "DROP TABLE IF EXISTS wk_bench_copy; CREATE UNLOGGED TABLE wk_bench_copy AS "
             "SELECT i::int4 AS id, (i::int8 * 1000003) AS big, (i * 0.25)::float8 AS f, "
             "(1 + i / 100.0)::numeric(12,2) AS price, 'name-' || i AS name, "
             "timestamptz '2000-01-01 00:00:00+00' + i * interval '1 second' AS at, "
             "(i %% 3 = 0) AS flag FROM generate_series(1, %ld) AS i; ANALYZE wk_bench_copy",
             rows);
    PGresult *r = PQexec(wk_pq_pgconn(conn), sql);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!ok) {
        wk_bench_fail(b, "pg-copy: cannot create the table: %s",
                      PQerrorMessage(wk_pq_pgconn(conn)));
        wk_pq_conn_free(conn);
        return 1;
    }
    char dir[] = "/tmp/wk-bench-pgcopy.XXXXXX";
    if (mkdtemp(dir) == NULL) {
        wk_bench_fail(b, "pg-copy: cannot make a temp dir");
        wk_pq_conn_free(conn);
        return 1;
    }
    char path_wk[128], path_json[128], path_csv[128], cmd[2048];
    snprintf(path_wk, sizeof path_wk, "%s/wirekit.jsonl", dir);
    snprintf(path_json, sizeof path_json, "%s/psql.jsonl", dir);
    snprintf(path_csv, sizeof path_csv, "%s/psql.csv", dir);
    int rc = 0;

    /* wirekit: binary COPY, JSON objects written to the file */
    out o;
    memset(&o, 0, sizeof o);
    o.f = fopen(path_wk, "wb");
    wk_buf_init(&o.buf, NULL, 0);
    wk_buf_init(&o.scratch, NULL, 0);
    wk_json_write_opts jopts = {WK_JSON_WRITE_NEWLINE, 0};
    wk_json_writer_init(&o.jw, &o.buf, &jopts);
    wk_json_writer_sink(&o.jw, &o.sink);
    uint64_t got = 0;
    uint64_t t0 = wk_bench_now_ns();
    wk_status st = o.f == NULL ? WK_ERR_IO
                               : wk_pq_copy_out(conn, "SELECT * FROM wk_bench_copy", NULL, NULL,
                                                write_row, &o, &got, &err);
    if (st == WK_OK) {
        st = wk_json_writer_finish(&o.jw, &err);
    }
    if (st == WK_OK && o.buf.len > 0 && fwrite(o.buf.data, 1, o.buf.len, o.f) != o.buf.len) {
        st = WK_ERR_IO;
    }
    if (o.f != NULL && fclose(o.f) != 0) {
        st = WK_ERR_IO;
    }
    uint64_t t_wk = wk_bench_now_ns() - t0;
    wk_buf_free(&o.buf);
    wk_buf_free(&o.scratch);
    const char *case_name = "export 7 cols to JSON Lines";
    if (st != WK_OK || (long)got != rows || count_lines(path_wk) != rows) {
        wk_bench_fail(b, "pg-copy: wirekit export failed: %s (%llu rows)", wk_status_str(st),
                      (unsigned long long)got);
        rc = 1;
    } else {
        wk_bench_record(b, case_name, "wirekit", (double)t_wk / (double)rows, 0, 0,
                        "binary COPY, rows decoded and written as JSON objects");
    }
    /* psql: the server renders row_to_json, psql writes it */
    char *q = PQescapeLiteral(wk_pq_pgconn(conn), dsn, strlen(dsn));
    snprintf(cmd, sizeof cmd,
             "psql -X -q -d %s -c \"\\copy (select row_to_json(t) from wk_bench_copy t) to '%s'\"",
             q, path_json);
    uint64_t t_json = timed_system(cmd);
    if (t_json == 0 || count_lines(path_json) != rows) {
        wk_bench_fail(b, "pg-copy: psql \\copy row_to_json failed");
        rc = 1;
    } else {
        wk_bench_peer(b, "psql \\copy row_to_json", "Debian psql 15, server-side row_to_json");
        wk_bench_record(b, case_name, "psql \\copy row_to_json", (double)t_json / (double)rows, 0,
                        0, "JSON rendered by the server, one process");
    }
    snprintf(cmd, sizeof cmd, "psql -X -q -d %s --csv -c 'select * from wk_bench_copy' > '%s'", q,
             path_csv);
    PQfreemem(q);
    uint64_t t_csv = timed_system(cmd);
    if (t_csv == 0 || count_lines(path_csv) != rows + 1) {
        wk_bench_fail(b, "pg-copy: psql --csv failed");
        rc = 1;
    } else {
        wk_bench_record(b, case_name, "psql --csv", (double)t_csv / (double)rows, 0, 0,
                        "CSV, not JSON: the floor of a text export");
    }
    /* import: the wirekit JSON Lines through `wirekit pg copy in` (the command next to this
     * program) against psql \copy from the CSV; both are whole processes */
    char self[512], wk_cmd[600];
    ssize_t sn = readlink("/proc/self/exe", self, sizeof self - 1);
    self[sn > 0 ? sn : 0] = '\0';
    char *slash = strrchr(self, '/');
    if (slash != NULL) {
        *slash = '\0';
    }
    snprintf(wk_cmd, sizeof wk_cmd, "%s/wirekit", self);
    const char *case_in = "import JSON Lines / CSV, 7 cols";
    if (access(wk_cmd, X_OK) != 0) {
        wk_bench_say(b, "pg-copy import: skipped (no wirekit command next to wirekit-bench)");
    } else if (rc == 0) {
        r = PQexec(wk_pq_pgconn(conn), "DROP TABLE IF EXISTS wk_bench_copy_in; CREATE UNLOGGED "
                                       "TABLE wk_bench_copy_in (LIKE wk_bench_copy)");
        PQclear(r);
        q = PQescapeLiteral(wk_pq_pgconn(conn), dsn, strlen(dsn));
        snprintf(cmd, sizeof cmd, "'%s' pg copy in --dsn %s wk_bench_copy_in '%s' 2>/dev/null",
                 wk_cmd, q, path_wk);
        uint64_t t_in = timed_system(cmd);
        long n_in = -1;
        r = PQexec(wk_pq_pgconn(conn), "SELECT count(*) FROM (SELECT * FROM wk_bench_copy "
                                       "EXCEPT ALL SELECT * FROM wk_bench_copy_in) x");
        long diff = PQresultStatus(r) == PGRES_TUPLES_OK ? atol(PQgetvalue(r, 0, 0)) : -1;
        PQclear(r);
        r = PQexec(wk_pq_pgconn(conn), "SELECT count(*) FROM wk_bench_copy_in");
        n_in = PQresultStatus(r) == PGRES_TUPLES_OK ? atol(PQgetvalue(r, 0, 0)) : -1;
        PQclear(r);
        if (t_in == 0 || n_in != rows || diff != 0) {
            wk_bench_fail(b, "pg-copy: wirekit pg copy in failed (%ld rows, %ld differ)", n_in,
                          diff);
            rc = 1;
        } else {
            wk_bench_record(b, case_in, "wirekit", (double)t_in / (double)rows, 0, 0,
                            "wirekit pg copy in: JSON Lines, binary COPY (whole process)");
        }
        r = PQexec(wk_pq_pgconn(conn), "TRUNCATE wk_bench_copy_in");
        PQclear(r);
        snprintf(cmd, sizeof cmd,
                 "psql -X -q -d %s -c \"\\copy wk_bench_copy_in from '%s' csv header\"", q,
                 path_csv);
        PQfreemem(q);
        uint64_t t_pin = timed_system(cmd);
        r = PQexec(wk_pq_pgconn(conn), "SELECT count(*) FROM wk_bench_copy_in");
        n_in = PQresultStatus(r) == PGRES_TUPLES_OK ? atol(PQgetvalue(r, 0, 0)) : -1;
        PQclear(r);
        if (t_pin == 0 || n_in != rows) {
            wk_bench_fail(b, "pg-copy: psql \\copy from csv failed");
            rc = 1;
        } else {
            wk_bench_record(b, case_in, "psql \\copy from csv", (double)t_pin / (double)rows, 0,
                            0, "CSV parsed by the server");
        }
        r = PQexec(wk_pq_pgconn(conn), "DROP TABLE IF EXISTS wk_bench_copy_in");
        PQclear(r);
    }
    wk_bench_say(b, "pg-copy: %ld rows exported and imported", rows);
    r = PQexec(wk_pq_pgconn(conn), "DROP TABLE IF EXISTS wk_bench_copy");
    PQclear(r);
    unlink(path_wk);
    unlink(path_json);
    unlink(path_csv);
    rmdir(dir);
    wk_pq_conn_free(conn);
    return rc != 0 ? rc : prc;
}
