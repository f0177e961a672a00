/*
 * The row policy on every path of wirekit-pq, against the test server: the same query read
 * with wk_pq_exec, binary COPY out, a non-blocking query driven by poll() and a pipeline
 * writes the same bytes through its row description, in JSON Lines and in MessagePack (a
 * catalog composite with nested composite and array fields as objects keyed by field name,
 * SQL NULL and JSON null in jsonb, numerics, repeated names). Records read back with
 * wk_pq_copy_in_record restore a table with composite columns, and a wk_value goes in as a
 * jsonb parameter.
 */
#include <poll.h>
#include <string.h>

#include "pg_test_conn.h"
#include "wirekit/json.h"
#include "wirekit/msgpack.h"

static wk_pq_conn *conn;

static const char setup[] =
    "DROP TABLE IF EXISTS wk_rpp_src, wk_rpp_dst; DROP TYPE IF EXISTS wk_rpp_outer, wk_rpp_pt;"
    "CREATE TYPE wk_rpp_pt AS (x int, label text, tags int[]);"
    "CREATE TYPE wk_rpp_outer AS (p wk_rpp_pt, n numeric, j jsonb);"
    "CREATE TABLE wk_rpp_src (id int, o wk_rpp_outer, ps wk_rpp_pt[], j jsonb, n numeric);"
    "INSERT INTO wk_rpp_src VALUES"
    " (1, ROW(ROW(1, 'a \"q\"', '{1,NULL}'), 2.50, '{\"k\": 10}'), "
    "  ARRAY[ROW(2, 'b', NULL)::wk_rpp_pt, NULL], 'null', 0.1),"
    " (2, NULL, '{}', NULL, -7),"
    /* inside a composite SQL NULL and JSON null are both null (as row_to_json): only SQL NULL
     * there, so that the round trip below can be exact */
    " (3, ROW(NULL, NULL, NULL), ARRAY[ROW(3, NULL, '{}')::wk_rpp_pt], '[1, 2.5]', NULL);"
    "CREATE TABLE wk_rpp_dst (LIKE wk_rpp_src);";

static const char query[] = "SELECT id, o, ps, j, n, id AS n FROM wk_rpp_src ORDER BY id";

/* Rows through a row description made from the plan the path hands over. */
typedef struct sink_rows {
    wk_pg_row_opts opts;
    wk_pg_rowdesc *rd;
    wk_buf out;
} sink_rows;

static wk_status plan_row(void *ctx, const wk_pg_plan *plan, const uint8_t *const *vals,
                          const int *lens, wk_error *err)
{
    sink_rows *s = ctx;
    wk_status st = s->rd == NULL ? wk_pg_rowdesc_from_plan(plan, &s->opts, &s->rd, err) : WK_OK;
    return st == WK_OK ? wk_pg_row_append(s->rd, vals, lens, &s->out, err) : st;
}

/* Every row of a result through a description of its columns. */
static wk_status result_rows(const PGresult *res, const wk_pg_row_opts *o, wk_buf *out)
{
    wk_pg_rowdesc *rd = NULL;
    wk_status st = wk_pq_rowdesc_new(conn, res, o, &rd, NULL);
    for (int r = 0; st == WK_OK && r < PQntuples(res); r++) {
        st = wk_pq_row_append(rd, res, r, out, NULL);
    }
    wk_pg_rowdesc_free(rd);
    return st;
}

WK_TEST(test_pg_row_policy_is_the_same_on_exec_copy_async_and_pipeline_paths)
{
    NEED_CONN();
    CHECK(pg_test_exec(conn, setup));
    /* a fresh connection sees the composite types in its catalog */
    wk_pq_conn *c2 = NULL;
    CHECK_OK(wk_pq_connect(getenv("WK_PG_DSN"), NULL, &c2, NULL));
    wk_pq_conn_free(conn);
    conn = c2;
    for (int f = 0; f < 2; f++) {
        wk_pg_row_opts o = {f == 0 ? WK_PG_ROW_JSON : WK_PG_ROW_MSGPACK, 0, 0};
        /* blocking */
        wk_buf ex;
        wk_buf_init(&ex, NULL, 0);
        PGresult *res = NULL;
        CHECK_OK(wk_pq_exec(conn, query, NULL, 0, &res, NULL));
        CHECK_OK(result_rows(res, &o, &ex));
        PQclear(res);
        if (f == 0) {
            const char *want =
                "{\"id\":1,\"o\":{\"p\":{\"x\":1,\"label\":\"a \\\"q\\\"\",\"tags\":[1,null]},"
                "\"n\":2.50,\"j\":{\"k\":10}},\"ps\":[{\"x\":2,\"label\":\"b\",\"tags\":null},"
                "null],\"j\":null,\"n\":0.1,\"n_2\":1}\n";
            CHECK(ex.len > strlen(want) && memcmp(ex.data, want, strlen(want)) == 0);
        }
        /* binary COPY out */
        sink_rows cp = {o, NULL, {0}};
        wk_buf_init(&cp.out, NULL, 0);
        CHECK_OK(wk_pq_copy_out(conn, query, NULL, NULL, plan_row, &cp, NULL, NULL));
        CHECK_MEM(cp.out.data, cp.out.len, ex.data, ex.len);
        /* non-blocking, driven by poll() */
        sink_rows as = {o, NULL, {0}};
        wk_buf_init(&as.out, NULL, 0);
        wk_pq_row_handler h = {NULL, NULL, plan_row, &as};
        wk_pq_async *q = NULL;
        CHECK_OK(wk_pq_async_start(conn, query, NULL, 0, &h, &q, NULL));
        wk_status st;
        while ((st = wk_pq_async_step(q, NULL)) == WK_ERR_AGAIN) {
            struct pollfd p = {wk_pq_async_socket(q),
                               (short)((wk_pq_async_wants(q) & WK_PQ_WANT_READ ? POLLIN : 0) |
                                       (wk_pq_async_wants(q) & WK_PQ_WANT_WRITE ? POLLOUT : 0)),
                               0};
            (void)poll(&p, 1, 1000);
        }
        CHECK_OK(st);
        wk_pq_async_free(q);
        CHECK_MEM(as.out.data, as.out.len, ex.data, ex.len);
        /* a pipeline, on a connection of its own: on main a pipeline whose statement the
         * connection ran through wk_pq_async_start before gets mismatched answers (a bug
         * of the pipeline's statement cache, reported, not of the row policy) */
        wk_buf pl;
        wk_buf_init(&pl, NULL, 0);
        wk_pq_conn *pc = NULL;
        CHECK_OK(wk_pq_connect(getenv("WK_PG_DSN"), NULL, &pc, NULL));
        wk_pq_pipeline *p = NULL;
        CHECK_OK(wk_pq_pipeline_begin(pc, &p, NULL));
        CHECK_OK(wk_pq_pipeline_add(p, query, NULL, 0, NULL));
        wk_pq_stmt_result sr;
        CHECK_OK(wk_pq_pipeline_next(p, &sr, NULL));
        CHECK_MSG(sr.state == WK_PQ_STMT_OK, "pipeline: %s (%s)", wk_pq_stmt_state_str(sr.state),
                  wk_pq_conn_message(pc));
        CHECK_OK(result_rows(sr.res, &o, &pl));
        CHECK_OK(wk_pq_pipeline_end(p, NULL));
        wk_pq_conn_free(pc);
        CHECK_MEM(pl.data, pl.len, ex.data, ex.len);
        /* and back: the records restore the table, composites and all */
        CHECK(pg_test_exec(conn, "TRUNCATE wk_rpp_dst"));
        static const char *const cols[] = {"id", "o", "ps", "j", "n"};
        sink_rows back = {o, NULL, {0}};
        wk_buf_init(&back.out, NULL, 0);
        CHECK_OK(wk_pq_copy_out(conn, "SELECT * FROM wk_rpp_src", NULL, NULL, plan_row, &back,
                                NULL, NULL));
        size_t pos = 0;
        wk_pq_copy_in *ci = NULL;
        CHECK_OK(wk_pq_copy_in_start_records(conn, "wk_rpp_dst", cols, 5, &o, &ci, NULL));
        while (pos < back.out.len) {
            wk_arena a;
            wk_arena_init(&a, NULL, 0);
            wk_value *v = NULL;
            size_t used = 0;
            wk_read_opts ro = {WK_JSON_READ_RAW_NUMBERS, 0, NULL, {NULL, NULL}};
            if (f == 0) {
                const uint8_t *nl = memchr(back.out.data + pos, '\n', back.out.len - pos);
                used = (size_t)(nl - (back.out.data + pos)) + 1;
                CHECK_OK(wk_json_decode_value(back.out.data + pos, used - 1, &ro, &a, &v, NULL,
                                              NULL));
            } else {
                wk_status ds = wk_mp_decode_value(back.out.data + pos, back.out.len - pos, NULL,
                                                  &a, &v, &used, NULL);
                CHECK(ds == WK_OK || ds == WK_ERR_TRAILING);
            }
            wk_error err = {0};
            st = wk_pq_copy_in_record(ci, v, &err);
            CHECK_MSG(st == WK_OK, "record: %s", wk_pq_conn_message(conn));
            wk_arena_free(&a);
            pos += used;
        }
        uint64_t rows = 0;
        CHECK_OK(wk_pq_copy_in_end(ci, NULL, &rows, NULL));
        CHECK_EQ(rows, 3u);
        CHECK_EQ(pg_test_count(conn, "SELECT count(*) FROM (SELECT id, o::text, ps::text, "
                                     "j, n FROM wk_rpp_src EXCEPT SELECT id, o::text, ps::text, "
                                     "j, n FROM wk_rpp_dst) x"),
                 (f == 0 ? 0 : 1)); /* msgpack: 2.50 inside the composite's text comes back 2.5 */
        CHECK_EQ(pg_test_count(conn, "SELECT count(*) FROM (SELECT id, o, ps, j, n FROM "
                                     "wk_rpp_dst EXCEPT SELECT id, o, ps, j, n FROM wk_rpp_src) x"),
                 0);
        CHECK_EQ(pg_test_count(conn, "SELECT count(*) FROM wk_rpp_dst WHERE j IS NULL"), 1);
        CHECK_EQ(pg_test_count(conn, "SELECT count(*) FROM wk_rpp_dst WHERE j = 'null'"), 1);
        wk_buf_free(&ex);
        wk_buf_free(&cp.out);
        wk_buf_free(&as.out);
        wk_buf_free(&pl);
        wk_buf_free(&back.out);
        wk_pg_rowdesc_free(cp.rd);
        wk_pg_rowdesc_free(as.rd);
        wk_pg_rowdesc_free(back.rd);
    }
}

WK_TEST(test_pg_row_policy_sends_a_value_tree_as_a_jsonb_parameter)
{
    NEED_CONN();
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    wk_value *v = NULL;
    CHECK_OK(wk_json_decode_value("{\"int\":10,\"score\":99.5,\"n\":null}", 32, NULL, &a, &v,
                                  NULL, NULL));
    wk_pq_param p = {WK_PG_KIND_VALUE, v, WK_PG_OID_JSONB};
    PGresult *res = NULL;
    CHECK_OK(wk_pq_exec(conn, "SELECT jsonb_typeof($1->'int') || ' ' || ($1->>'score') || ' ' || "
                              "jsonb_typeof($1->'n')",
                        &p, 1, &res, NULL));
    CHECK_STR(PQgetvalue(res, 0, 0), "number 99.5 null");
    PQclear(res);
    wk_arena_free(&a);
    pg_test_exec(conn, "DROP TABLE wk_rpp_src, wk_rpp_dst; DROP TYPE wk_rpp_outer, wk_rpp_pt");
    wk_pq_conn_free(conn);
    conn = NULL;
}
