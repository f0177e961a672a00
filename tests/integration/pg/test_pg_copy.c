/*
 * Binary COPY out against the real PostgreSQL 15 server (WK_PG_DSN; skipped when unset):
 * many rows streamed into C kinds agree with the server's own aggregates, events produce the
 * same JSON as the row-at-a-time path, and failures are honest: a syntax error, a column
 * type without a binary decoder, an error raised mid-stream (the rows before it were handed
 * over, the connection stays usable), a row function that stops the copy. Binary COPY in:
 * a 14-column table copied out and back in through TEXT kinds equals the original by EXCEPT
 * ALL both ways; unknown columns and values that do not fit are named by row and column; an
 * abort or a server-side constraint failure writes nothing.
 */
#include <stdlib.h>

#include "wirekit/json.h"
#include "pg_test_conn.h"
#include "wirekit/pq.h"
#include "wk_test.h"

static wk_pq_conn *conn;

typedef struct row3 {
    int64_t id;
    double f;
    wk_buf name;
} row3;

typedef struct sums {
    row3 r;
    bool nulls[3];
    wk_arena arena;
    int64_t id_sum;
    double f_sum;
    uint64_t name_bytes;
    uint64_t nulls_seen;
    uint64_t rows;
    uint64_t stop_after; /* 0 = never */
} sums;

static void sums_init(sums *s)
{
    memset(s, 0, sizeof *s);
    wk_buf_init(&s->r.name, NULL, 0);
    wk_arena_init(&s->arena, NULL, 0);
}

static void sums_free(sums *s)
{
    wk_buf_free(&s->r.name);
    wk_arena_free(&s->arena);
}

static wk_status sum_row(void *ctx, const wk_pg_plan *plan, const uint8_t *const *vals,
                         const int *lens, wk_error *err)
{
    sums *s = ctx;
    if (s->stop_after != 0 && s->rows == s->stop_after) {
        err->msg = "stopped by the row function";
        return WK_ERR_LIMIT;
    }
    wk_arena_reset(&s->arena);
    wk_buf_clear(&s->r.name);
    wk_status st = wk_pg_plan_decode_row(plan, vals, lens, &s->r, s->nulls, &s->arena, err);
    if (st != WK_OK) {
        return st;
    }
    s->rows++;
    s->id_sum += s->r.id;
    if (s->nulls[1]) {
        s->nulls_seen++;
    } else {
        s->f_sum += s->r.f;
    }
    s->name_bytes += s->r.name.len;
    return WK_OK;
}

static const wk_pg_kind kinds3[3] = {WK_PG_KIND_I64, WK_PG_KIND_F64, WK_PG_KIND_TEXT};
static const size_t offs3[3] = {offsetof(row3, id), offsetof(row3, f), offsetof(row3, name)};

static const char rows_sql[] =
    "SELECT i::int8 AS id, CASE WHEN i % 7 = 0 THEN NULL ELSE i / 4.0 END::float8 AS f, "
    "repeat('x', i % 13) || i AS name FROM generate_series(1, 200000) i";

WK_TEST(test_pg_copy_out_streams_many_rows_into_c_kinds)
{
    NEED_CONN();
    sums s;
    sums_init(&s);
    wk_error err = {0};
    uint64_t rows = 0;
    wk_status st = wk_pq_copy_out(conn, rows_sql, kinds3, offs3, sum_row, &s, &rows, &err);
    CHECK_MSG(st == WK_OK, "%s: %s", err.msg, wk_pq_conn_message(conn));
    /* the oracle: the server's own aggregates over the same query */
    char agg[512];
    snprintf(agg, sizeof agg,
             "SELECT count(*), sum(id), sum(f), sum(length(name)), count(*) - count(f) FROM (%s) q",
             rows_sql);
    PGresult *want = PQexec(wk_pq_pgconn(conn), agg);
    CHECK(PQresultStatus(want) == PGRES_TUPLES_OK);
    CHECK_EQ(rows, strtoull(PQgetvalue(want, 0, 0), NULL, 10));
    CHECK_EQ(s.rows, rows);
    CHECK_EQ(s.id_sum, strtoll(PQgetvalue(want, 0, 1), NULL, 10));
    CHECK(s.f_sum == strtod(PQgetvalue(want, 0, 2), NULL));
    CHECK_EQ(s.name_bytes, strtoull(PQgetvalue(want, 0, 3), NULL, 10));
    CHECK_EQ(s.nulls_seen, strtoull(PQgetvalue(want, 0, 4), NULL, 10));
    PQclear(want);
    sums_free(&s);
}

typedef struct json_rows {
    wk_buf out;
    wk_json_writer jw;
    wk_sink sink;
    wk_buf scratch;
} json_rows;

static wk_status json_row(void *ctx, const wk_pg_plan *plan, const uint8_t *const *vals,
                          const int *lens, wk_error *err)
{
    json_rows *j = ctx;
    wk_pg_events ev = {&j->sink, WK_PG_EV_RAW_FLOATS, &j->scratch, 0};
    return wk_pg_plan_emit_row(plan, vals, lens, &ev, err);
}

WK_TEST(test_pg_copy_out_events_equal_the_row_at_a_time_path)
{
    NEED_CONN();
    static const char sql[] =
        "SELECT i, i * 1.5 AS n, ARRAY[i, NULL] AS a, jsonb_build_object('k', i) AS j, "
        "'2020-01-01'::timestamptz + i * interval '1 hour' AS t, NULL::text AS z "
        "FROM generate_series(1, 300) i";
    wk_error err = {0};
    wk_json_write_opts jopts = {WK_JSON_WRITE_NEWLINE, 0};
    json_rows a;
    memset(&a, 0, sizeof a);
    wk_buf_init(&a.out, NULL, 0);
    wk_buf_init(&a.scratch, NULL, 0);
    wk_json_writer_init(&a.jw, &a.out, &jopts);
    wk_json_writer_sink(&a.jw, &a.sink);
    CHECK_OK(wk_pq_copy_out(conn, sql, NULL, NULL, json_row, &a, NULL, &err));
    CHECK_OK(wk_json_writer_finish(&a.jw, &err));
    /* the same rows through wk_pq_exec (binary results, one PGresult) */
    json_rows b;
    memset(&b, 0, sizeof b);
    wk_buf_init(&b.out, NULL, 0);
    wk_buf_init(&b.scratch, NULL, 0);
    wk_json_writer_init(&b.jw, &b.out, &jopts);
    wk_json_writer_sink(&b.jw, &b.sink);
    PGresult *res = NULL;
    CHECK_OK(wk_pq_exec(conn, sql, NULL, 0, &res, &err));
    wk_pg_plan *plan = NULL;
    CHECK_OK(wk_pq_plan(conn, res, NULL, NULL, &plan, &err));
    wk_pg_events ev = {&b.sink, WK_PG_EV_RAW_FLOATS, &b.scratch, 0};
    for (int r = 0; r < PQntuples(res); r++) {
        CHECK_OK(wk_pq_emit_row(plan, res, r, &ev, &err));
    }
    CHECK_OK(wk_json_writer_finish(&b.jw, &err));
    CHECK(a.out.len > 0);
    CHECK_EQ(a.out.len, b.out.len);
    CHECK(memcmp(a.out.data, b.out.data, a.out.len) == 0);
    wk_pg_plan_free(plan);
    PQclear(res);
    wk_buf_free(&a.out);
    wk_buf_free(&a.scratch);
    wk_buf_free(&b.out);
    wk_buf_free(&b.scratch);
}

static void check_usable(void)
{
    PGresult *res = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pq_exec(conn, "SELECT '4' || '2'", NULL, 0, &res, &err));
    CHECK_EQ(PQntuples(res), 1);
    CHECK_STR(PQgetvalue(res, 0, 0), "42");
    PQclear(res);
}

WK_TEST(test_pg_copy_out_failures_are_reported_and_leave_the_connection_usable)
{
    NEED_CONN();
    sums s;
    sums_init(&s);
    wk_error err = {0};
    uint64_t rows = 0;
    /* a syntax error: the server's report, no rows */
    CHECK_EQ(wk_pq_copy_out(conn, "SELEC 1", NULL, NULL, sum_row, &s, &rows, &err),
             WK_ERR_SERVER);
    CHECK(wk_pq_last_error(conn) != NULL);
    CHECK_STR(wk_pq_last_error(conn)->sqlstate, "42601");
    CHECK_EQ(rows, 0u);
    check_usable();
    /* a type without a binary output (aclitem): named before anything runs */
    CHECK_EQ(wk_pq_copy_out(conn, "SELECT 1::int8 AS id, 'wirekit=r/wirekit'::aclitem AS acl",
                            NULL, NULL, sum_row, &s, &rows, &err),
             WK_ERR_NOT_FOUND);
    CHECK_EQ(err.offset, 1u);
    CHECK(strstr(wk_pq_conn_message(conn), "acl") != NULL);
    check_usable();
    /* an error raised by the server mid-stream: the rows before it were handed over */
    memset(&err, 0, sizeof err);
    s.rows = 0;
    wk_status st = wk_pq_copy_out(
        conn,
        "SELECT i::int8 AS id, (1 / (i - 150000))::float8 AS f, 'n' AS name FROM "
        "generate_series(1, 200000) i",
        kinds3, offs3, sum_row, &s, &rows, &err);
    CHECK_EQ(st, WK_ERR_SERVER);
    CHECK_STR(wk_pq_last_error(conn)->sqlstate, "22012");
    CHECK(rows < 150000u);
    CHECK_EQ(rows, s.rows);
    check_usable();
    /* the row function stops the copy: its status comes back, the connection is usable */
    s.rows = 0;
    s.stop_after = 1000;
    st = wk_pq_copy_out(conn, rows_sql, kinds3, offs3, sum_row, &s, &rows, &err);
    CHECK_EQ(st, WK_ERR_LIMIT);
    CHECK_EQ(rows, 1000u);
    check_usable();
    /* a statement that returns no rows */
    CHECK_EQ(wk_pq_copy_out(conn, "SET search_path = public", NULL, NULL, sum_row, &s, &rows,
                            &err),
             WK_ERR_ARG);
    check_usable();
    sums_free(&s);
}

WK_TEST(test_pg_copy_out_timeout_cancels_a_silent_query)
{
    NEED_CONN();
    wk_error err = {0};
    sums s;
    sums_init(&s);
    CHECK_OK(wk_pq_set_timeout(conn, 300, &err));
    uint64_t rows = 0;
    wk_status st = wk_pq_copy_out(conn,
                                  "SELECT i::int8 AS id, 1.0::float8 AS f, pg_sleep(5)::text "
                                  "AS name FROM generate_series(1, 2) i",
                                  kinds3, offs3, sum_row, &s, &rows, &err);
    /* the server's statement_timeout (57014) or the client's deadline, whichever comes first */
    CHECK_MSG(st == WK_ERR_SERVER || st == WK_ERR_IO, "status %s: %s", wk_status_str(st),
              wk_pq_conn_message(conn));
    if (st == WK_ERR_SERVER) {
        CHECK_STR(wk_pq_last_error(conn)->sqlstate, "57014");
    }
    CHECK_EQ(rows, 0u);
    CHECK_MSG(wk_pq_set_timeout(conn, 0, &err) == WK_OK, "%s after %s",
              wk_pq_conn_message(conn), wk_status_str(st));
    check_usable();
    sums_free(&s);
}


/* ---- COPY in ---- */

static wk_pq_conn *conn_in;

typedef struct pump {
    wk_pq_copy_in *in;
    wk_buf *bufs;
    bool *nulls;
    wk_slice *slices;
    const void **ptrs;
    wk_arena arena;
    wk_status in_st;
} pump;

/* COPY out row -> TEXT kinds -> COPY in row on the other connection */
static wk_status pump_row(void *ctx, const wk_pg_plan *plan, const uint8_t *const *vals,
                          const int *lens, wk_error *err)
{
    pump *p = ctx;
    size_t n = wk_pg_plan_ncols(plan);
    for (size_t i = 0; i < n; i++) {
        wk_buf_clear(&p->bufs[i]);
    }
    wk_arena_reset(&p->arena);
    wk_status st = wk_pg_plan_decode_row(plan, vals, lens, p->bufs, p->nulls, &p->arena, err);
    if (st != WK_OK) {
        return st;
    }
    for (size_t i = 0; i < n; i++) {
        p->slices[i].ptr = p->bufs[i].data != NULL ? (const char *)p->bufs[i].data : "";
        p->slices[i].len = p->bufs[i].len;
        p->ptrs[i] = p->nulls[i] ? NULL : &p->slices[i];
    }
    return wk_pq_copy_in_row(p->in, p->ptrs, err);
}

#define NEED_CONN_IN()                                                                     \
    do {                                                                                   \
        NEED_CONN();                                                                       \
        if (conn_in == NULL) {                                                             \
            wk_error cerr2 = {0};                                                          \
            if (wk_pq_connect(getenv("WK_PG_DSN"), NULL, &conn_in, &cerr2) != WK_OK) {     \
                wk_pq_conn_free(conn_in);                                                  \
                conn_in = NULL;                                                            \
            }                                                                              \
            CHECK_MSG(conn_in != NULL, "cannot connect a second time");                    \
        }                                                                                  \
    } while (0)

WK_TEST(test_pg_copy_in_round_trips_a_table_equal_by_except_both_ways)
{
    NEED_CONN_IN();
    CHECK(pg_test_exec(conn, "DROP TABLE IF EXISTS wk_copy_src, wk_copy_dst"));
    CHECK(pg_test_exec(conn,
                  "CREATE TABLE wk_copy_src AS SELECT i::int4 AS id, i::int8 * 1000003 AS big, "
                  "CASE WHEN i % 5 = 0 THEN NULL ELSE i / 3.0 END::float8 AS f, "
                  "(i / 7.0)::numeric(20,6) AS num, 'name \"' || i || E'\\\\' AS name, "
                  "timestamptz '2000-01-01 00:00+00' + i * interval '1 min' AS at, "
                  "i % 2 = 0 AS flag, jsonb_build_object('k', i, 'a', ARRAY[i, NULL]) AS j, "
                  "ARRAY[i, NULL, -i] AS arr, md5(i::text)::uuid AS u, "
                  "decode(md5(i::text), 'hex') AS by, date '2020-01-01' + i AS d, "
                  "i * interval '1 day 2 sec' AS iv, ('10.0.' || i % 256 || '.1/24')::inet AS ip "
                  "FROM generate_series(1, 5000) i"));
    CHECK(pg_test_exec(conn, "CREATE TABLE wk_copy_dst (LIKE wk_copy_src)"));
    static const char *const cols[14] = {"id", "big", "f", "num", "name", "at", "flag",
                                         "j",  "arr", "u", "by",  "d",   "iv", "ip"};
    wk_pg_kind kinds[14];
    size_t offs[14];
    pump p;
    memset(&p, 0, sizeof p);
    p.bufs = calloc(14, sizeof *p.bufs);
    p.nulls = calloc(14, sizeof *p.nulls);
    p.slices = calloc(14, sizeof *p.slices);
    p.ptrs = calloc(14, sizeof *p.ptrs);
    for (int i = 0; i < 14; i++) {
        kinds[i] = WK_PG_KIND_TEXT;
        offs[i] = (size_t)i * sizeof(wk_buf);
        wk_buf_init(&p.bufs[i], NULL, 0);
    }
    wk_arena_init(&p.arena, NULL, 0);
    wk_error err = {0};
    wk_status st = wk_pq_copy_in_start(conn_in, "wk_copy_dst", cols, kinds, 14, &p.in, &err);
    CHECK_MSG(st == WK_OK, "start: %s: %s", err.msg, wk_pq_conn_message(conn_in));
    CHECK_EQ(wk_pq_copy_in_ncols(p.in), 14u);
    uint64_t out_rows = 0, in_rows = 0;
    st = wk_pq_copy_out(conn,
                        "SELECT id, big, f, num, name, at, flag, j, arr, u, by, d, iv, ip "
                        "FROM wk_copy_src",
                        kinds, offs, pump_row, &p, &out_rows, &err);
    wk_status est = wk_pq_copy_in_end(p.in, st == WK_OK ? NULL : "copy out failed", &in_rows,
                                      &err);
    CHECK_MSG(st == WK_OK, "copy out: %s: %s", err.msg, wk_pq_conn_message(conn));
    CHECK_MSG(est == WK_OK, "copy in: %s: %s", err.msg, wk_pq_conn_message(conn_in));
    CHECK_EQ(out_rows, 5000u);
    CHECK_EQ(in_rows, out_rows);
    CHECK_EQ(pg_test_count(conn, "SELECT count(*) FROM wk_copy_dst"), 5000);
    CHECK_EQ(pg_test_count(conn, "SELECT count(*) FROM (SELECT * FROM wk_copy_src EXCEPT ALL "
                            "SELECT * FROM wk_copy_dst) x"),
             0);
    CHECK_EQ(pg_test_count(conn, "SELECT count(*) FROM (SELECT * FROM wk_copy_dst EXCEPT ALL "
                            "SELECT * FROM wk_copy_src) x"),
             0);
    for (int i = 0; i < 14; i++) {
        wk_buf_free(&p.bufs[i]);
    }
    free(p.bufs);
    free(p.nulls);
    free(p.slices);
    free(p.ptrs);
    wk_arena_free(&p.arena);
    CHECK(pg_test_exec(conn, "DROP TABLE wk_copy_src, wk_copy_dst"));
}

WK_TEST(test_pg_copy_in_refuses_values_that_do_not_fit_and_commits_nothing_on_failure)
{
    NEED_CONN_IN();
    CHECK(pg_test_exec(conn, "DROP TABLE IF EXISTS wk_copy_fit"));
    CHECK(pg_test_exec(conn, "CREATE TABLE wk_copy_fit (n int8 NOT NULL, s int2, t text)"));
    static const char *const cols[3] = {"n", "s", "t"};
    static const wk_pg_kind kinds[3] = {WK_PG_KIND_I64, WK_PG_KIND_TEXT, WK_PG_KIND_TEXT};
    wk_error err = {0};
    wk_pq_copy_in *in = NULL;
    /* an unknown column is named */
    static const char *const bad_cols[3] = {"n", "nope", "t"};
    CHECK_EQ(wk_pq_copy_in_start(conn_in, "wk_copy_fit", bad_cols, kinds, 3, &in, &err),
             WK_ERR_NOT_FOUND);
    CHECK_EQ(err.offset, 1u);
    CHECK(strstr(wk_pq_conn_message(conn_in), "nope") != NULL);
    /* a value that does not fit its column's type: row and column named, row dropped */
    CHECK_OK(wk_pq_copy_in_start(conn_in, "wk_copy_fit", cols, kinds, 3, &in, &err));
    int64_t n1 = 1;
    wk_slice s_ok = {"12", 2}, s_big = {"40000", 5}, t = {"x", 1};
    const void *row1[3] = {&n1, &s_ok, &t};
    const void *row2[3] = {&n1, &s_big, &t};
    CHECK_OK(wk_pq_copy_in_row(in, row1, &err));
    CHECK(wk_pq_copy_in_row(in, row2, &err) != WK_OK);
    CHECK_EQ(err.offset, 1u);
    CHECK_MSG(strstr(wk_pq_conn_message(conn_in), "row 2, column \"s\"") != NULL, "message: %s",
              wk_pq_conn_message(conn_in));
    /* the caller aborts: nothing is written */
    uint64_t rows = 99;
    CHECK_EQ(wk_pq_copy_in_end(in, "a value did not fit", &rows, &err), WK_ERR_SERVER);
    CHECK_EQ(rows, 0u);
    CHECK_EQ(pg_test_count(conn, "SELECT count(*) FROM wk_copy_fit"), 0);
    /* a constraint the server checks (NOT NULL) fails the whole COPY: nothing is written */
    CHECK_OK(wk_pq_copy_in_start(conn_in, "wk_copy_fit", cols, kinds, 3, &in, &err));
    const void *row_null[3] = {NULL, &s_ok, &t};
    CHECK_OK(wk_pq_copy_in_row(in, row1, &err));
    CHECK_OK(wk_pq_copy_in_row(in, row_null, &err));
    CHECK_EQ(wk_pq_copy_in_end(in, NULL, &rows, &err), WK_ERR_SERVER);
    CHECK_STR(wk_pq_last_error(conn_in)->sqlstate, "23502");
    CHECK_EQ(rows, 0u);
    CHECK_EQ(pg_test_count(conn, "SELECT count(*) FROM wk_copy_fit"), 0);
    /* and a good copy after the failures on the same connection */
    CHECK_OK(wk_pq_copy_in_start(conn_in, "wk_copy_fit", cols, kinds, 3, &in, &err));
    CHECK_OK(wk_pq_copy_in_row(in, row1, &err));
    CHECK_OK(wk_pq_copy_in_end(in, NULL, &rows, &err));
    CHECK_EQ(rows, 1u);
    CHECK_EQ(pg_test_count(conn, "SELECT count(*) FROM wk_copy_fit WHERE s = 12 AND t = 'x'"), 1);
    CHECK(pg_test_exec(conn, "DROP TABLE wk_copy_fit"));
}

/* A second connection whose deadline is only the client's (statement_timeout 0 on the
 * server), so that the waits of COPY in are what ends a stuck copy. */
static wk_pq_conn *client_deadline_conn(uint32_t timeout_ms)
{
    wk_pq_conn *c = NULL;
    wk_error err = {0};
    if (wk_pq_connect(getenv("WK_PG_DSN"), NULL, &c, &err) != WK_OK ||
        wk_pq_set_timeout(c, timeout_ms, &err) != WK_OK ||
        !pg_test_exec(c, "SET statement_timeout = 0")) {
        wk_pq_conn_free(c);
        return NULL;
    }
    return c;
}

WK_TEST(test_pg_copy_in_every_wait_honours_the_deadline)
{
    NEED_CONN();
    CHECK(pg_test_exec(conn, "DROP TABLE IF EXISTS wk_copy_slow"));
    CHECK(pg_test_exec(conn, "CREATE TABLE wk_copy_slow (id int8, s text)"));
    wk_pq_conn *c2 = client_deadline_conn(400);
    CHECK(c2 != NULL);
    static const char *const cols[2] = {"id", "s"};
    static const wk_pg_kind kinds[2] = {WK_PG_KIND_I64, WK_PG_KIND_STR};
    wk_error err = {0};
    wk_pq_copy_in *in = NULL;

    /* 1. the start: another session holds the table locked, the server says nothing */
    CHECK(pg_test_exec(conn, "BEGIN"));
    CHECK(pg_test_exec(conn, "LOCK TABLE wk_copy_slow IN ACCESS EXCLUSIVE MODE"));
    double t0 = wk_test_now_s();
    wk_status st = wk_pq_copy_in_start(c2, "wk_copy_slow", cols, kinds, 2, &in, &err);
    double took = wk_test_now_s() - t0;
    CHECK(pg_test_exec(conn, "ROLLBACK"));
    printf("    start behind a lock: %s after %.0f ms (%s)\n", wk_status_str(st), took * 1000,
           wk_pq_conn_message(c2));
    CHECK_EQ(st, WK_ERR_IO);
    CHECK(in == NULL);
    CHECK_MSG(took >= 0.39 && took < 1.9, "took %.2f s", took);
    CHECK_STR(wk_pq_conn_message(c2), "COPY timed out (cancelled)");
    CHECK_EQ(pg_test_count(c2, "SELECT 7"), 7); /* the connection serves again */

    /* 2. sending: the server stops reading (a trigger sleeps on the first row) while the
     * client has megabytes to send; the sockets' buffers fill and a chunk cannot go */
    CHECK(pg_test_exec(conn, "CREATE OR REPLACE FUNCTION wk_copy_sleep() RETURNS trigger "
                        "LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(30); RETURN NEW; END $$"));
    CHECK(pg_test_exec(conn, "CREATE TRIGGER wk_copy_sleep BEFORE INSERT ON wk_copy_slow FOR EACH "
                        "ROW EXECUTE FUNCTION wk_copy_sleep()"));
    CHECK_OK(wk_pq_copy_in_start(c2, "wk_copy_slow", cols, kinds, 2, &in, &err));
    static char text[1024];
    memset(text, 'x', sizeof text);
    wk_slice s = {text, sizeof text};
    uint64_t sent = 0;
    double last_ok = wk_test_now_s();
    st = WK_OK;
    for (int64_t id = 1; st == WK_OK && id <= 256 * 1024; id++) { /* up to 256 MB */
        const void *vals[2] = {&id, &s};
        st = wk_pq_copy_in_row(in, vals, &err);
        if (st == WK_OK) {
            sent++;
            last_ok = wk_test_now_s();
        }
    }
    double stalled = wk_test_now_s() - last_ok;
    uint64_t rows = 99;
    wk_status end = wk_pq_copy_in_end(in, NULL, &rows, &err);
    printf("    sending to a server that stopped reading: %llu rows (%llu KiB) went, then %s "
           "after %.0f ms (%s); end %s\n",
           (unsigned long long)sent, (unsigned long long)sent, wk_status_str(st),
           stalled * 1000, wk_pq_conn_message(c2), wk_status_str(end));
    CHECK_EQ(st, WK_ERR_IO);
    CHECK_MSG(stalled >= 0.39 && stalled < 1.9, "a stalled chunk held the caller %.2f s",
              stalled);
    CHECK_EQ(end, WK_ERR_IO);
    CHECK_EQ(rows, 0u);
    CHECK_EQ(pg_test_count(c2, "SELECT 7"), 7);
    CHECK_EQ(pg_test_count(conn, "SELECT count(*) FROM wk_copy_slow"), 0);
    wk_pq_conn_free(c2);
    CHECK(pg_test_exec(conn, "DROP TABLE wk_copy_slow"));
    CHECK(pg_test_exec(conn, "DROP FUNCTION wk_copy_sleep()"));
}
