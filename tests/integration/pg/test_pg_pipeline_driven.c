/*
 * Pipelines driven by an event loop (wk_pq_pipeline_step / socket / wants / timeout_ms)
 * against the real PostgreSQL 15 server (WK_PG_DSN; skipped when unset), with the blocking
 * wk_pq_pipeline_next as the oracle:
 * - a batch with new statements (their preparation, then the batch, from the loop), a
 *   failing statement in the middle and a statement that sleeps on the server gives the same
 *   states, SQLSTATEs, formats and values as the blocking reading, cold and warm, and no step
 *   takes as long as the server's sleep (a step never waits);
 * - the deadline: a statement sleeping past it is cancelled from a step (57014, the rest
 *   ABORTED, the end WK_ERR_IO), the connection usable;
 * - a batch of 40 MB each way completes (each step writes what the socket takes and reads
 *   what has come: no deadlock; a wait for the socket, if any, is for reading and writing);
 * - wk_pq_pipeline_next takes over a driven pipeline half-way.
 */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pg_test_conn.h"
#include "wirekit/pq.h"
#include "wk_test.h"

static wk_pq_conn *conn;

/* What became of a batch: each statement's state, SQLSTATE and first value (as text or the
 * bytes of a binary value), and how the loop went. */
typedef struct outcome {
    size_t n;
    wk_pq_stmt_state state[64];
    char sqlstate[64][6];
    char value[64][64];
    int format[64];
    wk_status end;
    double max_step; /* seconds, the longest single wk_pq_pipeline_step */
    int write_waits; /* polls that included POLLOUT */
    double took;
} outcome;

static void record(outcome *o, const wk_pq_stmt_result *r)
{
    size_t i = r->index;
    if (i >= 64) {
        return;
    }
    o->n = i + 1 > o->n ? i + 1 : o->n;
    o->state[i] = r->state;
    o->sqlstate[i][0] = '\0';
    o->value[i][0] = '\0';
    o->format[i] = -1;
    if (r->error != NULL) {
        memcpy(o->sqlstate[i], r->error->sqlstate, 6);
    }
    if (r->state == WK_PQ_STMT_OK && r->res != NULL && PQntuples(r->res) > 0) {
        int len = PQgetlength(r->res, 0, 0);
        o->format[i] = PQfformat(r->res, 0);
        memcpy(o->value[i], PQgetvalue(r->res, 0, 0), len < 63 ? (size_t)len : 63);
    }
}

/* Adds `sqls` with one int8 parameter each (its index). */
static void add_all(wk_pq_pipeline *p, const char *const *sqls, size_t n)
{
    static int64_t idx[64];
    for (size_t i = 0; i < n; i++) {
        idx[i] = (int64_t)i;
        wk_pq_param prm = {WK_PG_KIND_I64, &idx[i], 0};
        wk_error err = {0};
        CHECK_STATUS(wk_pq_pipeline_add(p, sqls[i], &prm, 1, &err), WK_OK);
    }
}

/* Waits up to `timeout_ms` for what the pipeline wants of its socket, counting the waits for
 * writing: poll()'s result, or 1 when it wants nothing (a step can run at once). */
static int wait_wanted(wk_pq_pipeline *p, outcome *o, int timeout_ms)
{
    unsigned want = wk_pq_pipeline_wants(p);
    if (want == 0) {
        return 1;
    }
    struct pollfd pf = {wk_pq_pipeline_socket(p),
                        (short)(((want & WK_PQ_WANT_READ) ? POLLIN : 0) |
                                ((want & WK_PQ_WANT_WRITE) ? POLLOUT : 0)),
                        0};
    o->write_waits += (want & WK_PQ_WANT_WRITE) != 0;
    return poll(&pf, 1, timeout_ms);
}

/* The event loop of one pipeline: poll for what it wants, step until WK_ERR_EOF. */
static wk_status drive(wk_pq_pipeline *p, outcome *o, size_t take_over_after)
{
    wk_error err = {0};
    size_t got = 0;
    for (;;) {
        if (wait_wanted(p, o, wk_pq_pipeline_timeout_ms(p)) < 0) {
            return WK_ERR_IO;
        }
        wk_pq_stmt_result r;
        double t0 = wk_test_now_s();
        wk_status st = wk_pq_pipeline_step(p, &r, &err);
        double t = wk_test_now_s() - t0;
        o->max_step = t > o->max_step ? t : o->max_step;
        if (st == WK_OK) {
            record(o, &r);
            if (++got == take_over_after) {
                while (wk_pq_pipeline_next(p, &r, &err) == WK_OK) {
                    record(o, &r);
                }
                return WK_OK;
            }
        } else if (st != WK_ERR_AGAIN) {
            return st;
        }
    }
}

/* Runs `sqls` as one pipeline, driven (take_over_after: switch to wk_pq_pipeline_next after
 * that many outcomes, 0: never) or read with wk_pq_pipeline_next. */
static void run(const char *const *sqls, size_t n, bool driven, size_t take_over_after,
                outcome *o)
{
    memset(o, 0, sizeof *o);
    wk_error err = {0};
    wk_pq_pipeline *p = NULL;
    CHECK_STATUS(wk_pq_pipeline_begin(conn, &p, &err), WK_OK);
    if (p == NULL) {
        return;
    }
    add_all(p, sqls, n);
    double t0 = wk_test_now_s();
    if (driven) {
        wk_status st = drive(p, o, take_over_after);
        CHECK_MSG(st == WK_ERR_EOF || (take_over_after != 0 && st == WK_OK), "%s",
                  wk_status_str(st));
    } else {
        wk_pq_stmt_result r;
        while (wk_pq_pipeline_next(p, &r, &err) == WK_OK) {
            record(o, &r);
        }
    }
    double t1 = wk_test_now_s();
    o->end = wk_pq_pipeline_end(p, &err);
    if (driven && take_over_after == 0) {
        CHECK_MSG(wk_test_now_s() - t1 < 0.05, "the end waited %.3f s", wk_test_now_s() - t1);
    }
    o->took = wk_test_now_s() - t0;
}

static void same(const outcome *a, const outcome *b)
{
    CHECK_EQ(a->n, b->n);
    CHECK_EQ(a->end, b->end);
    for (size_t i = 0; i < a->n && i < b->n; i++) {
        CHECK_MSG(a->state[i] == b->state[i], "statement %zu: %s against %s", i,
                  wk_pq_stmt_state_str(a->state[i]), wk_pq_stmt_state_str(b->state[i]));
        CHECK_STR(a->sqlstate[i], b->sqlstate[i]);
        CHECK_EQ(a->format[i], b->format[i]);
        CHECK(memcmp(a->value[i], b->value[i], sizeof a->value[i]) == 0);
    }
}

static const char *const mixed[8] = {
    "SELECT $1::int8 * 3 AS v",
    "SELECT repeat('x', $1::int4) || 'drv' AS v",
    "SELECT pg_sleep(0.3), $1::int8 AS v",
    "SELECT ($1::int8 + 0.5)::numeric AS v",
    "SELECT 1 / ($1::int8 - 4) AS v", /* division by zero: 22012 */
    "SELECT $1::int8 AS v",
    "SELECT now() - $1::int8 * interval '1 s' AS v",
    "SELECT $1::int8 AS v",
};

WK_TEST(test_pg_pipeline_driven_equals_the_blocking_reading_cold_and_warm)
{
    NEED_CONN();
    wk_error err = {0};
    CHECK_STATUS(wk_pq_set_stmt_cache_capacity(conn, 64, &err), WK_OK);
    /* cold: a new text for each statement (the cache cannot hold it yet) */
    char cold[8][128];
    const char *sqls[8];
    unsigned salt = (unsigned)time(NULL);
    for (int i = 0; i < 8; i++) {
        snprintf(cold[i], sizeof cold[i], "%s /* drv %u */", i == 6 ? mixed[5] : mixed[i],
                 salt);
        sqls[i] = cold[i];
    }
    outcome d_cold, blocking, d_warm;
    run(sqls, 8, true, 0, &d_cold);
    run(sqls, 8, false, 0, &blocking);
    run(sqls, 8, true, 0, &d_warm);
    printf("    driven cold %.0f ms (longest step %.1f ms), blocking %.0f ms, driven warm %.0f ms "
           "(longest step %.1f ms)\n",
           d_cold.took * 1e3, d_cold.max_step * 1e3, blocking.took * 1e3, d_warm.took * 1e3,
           d_warm.max_step * 1e3);
    CHECK_EQ(blocking.n, 8);
    CHECK(blocking.state[0] == WK_PQ_STMT_OK && blocking.state[4] == WK_PQ_STMT_FAILED &&
          blocking.state[5] == WK_PQ_STMT_ABORTED);
    CHECK_STR(blocking.sqlstate[4], "22012");
    CHECK_STATUS(blocking.end, WK_ERR_SERVER);
    same(&d_cold, &blocking);
    same(&d_warm, &blocking);
    /* the server sleeps 0.3 s in the batch: a step that waited would show it */
    CHECK_MSG(d_cold.max_step < 0.15, "a step took %.3f s", d_cold.max_step);
    CHECK_MSG(d_warm.max_step < 0.15, "a step took %.3f s", d_warm.max_step);
    CHECK(d_cold.took >= 0.3 && d_warm.took >= 0.3);
    CHECK_EQ(pg_test_count(conn, "SELECT 11"), 11);
}

WK_TEST(test_pg_pipeline_driven_past_the_deadline_is_cancelled_from_a_step)
{
    NEED_CONN();
    wk_error err = {0};
    CHECK_STATUS(wk_pq_set_timeout(conn, 500, &err), WK_OK);
    CHECK(pg_test_exec(conn, "SET statement_timeout = 0")); /* the client's deadline alone */
    static const char *const sqls[3] = {"SELECT $1::int8", "SELECT pg_sleep(30), $1::int8",
                                        "SELECT $1::int8"};
    outcome o;
    run(sqls, 3, true, 0, &o);
    printf("    ended in %.2f s, longest step %.1f ms: %s\n", o.took, o.max_step * 1e3,
           wk_pq_conn_message(conn));
    CHECK_STATUS(o.end, WK_ERR_IO);
    CHECK(o.state[0] == WK_PQ_STMT_OK && o.state[1] == WK_PQ_STMT_FAILED &&
          o.state[2] == WK_PQ_STMT_ABORTED);
    CHECK_STR(o.sqlstate[1], "57014");
    CHECK_MSG(o.took < 0.5 + 1.0 + 1.0, "took %.2f s", o.took);
    CHECK_MSG(o.max_step < 0.3, "a step took %.3f s", o.max_step); /* the cancel request */
    CHECK_STATUS(wk_pq_set_timeout(conn, 0, &err), WK_OK);
    CHECK_EQ(pg_test_count(conn, "SELECT 12"), 12);
}

WK_TEST(test_pg_pipeline_driven_a_batch_larger_than_the_socket_buffers_completes)
{
    NEED_CONN();
    enum { N = 20000, LEN = 2048 };
    char *big = malloc(LEN);
    CHECK(big != NULL);
    if (big == NULL) {
        return;
    }
    memset(big, 'p', LEN);
    wk_error err = {0};
    wk_pq_pipeline *p = NULL;
    CHECK_STATUS(wk_pq_pipeline_begin(conn, &p, &err), WK_OK);
    wk_slice v = {big, LEN};
    for (int i = 0; i < N && p != NULL; i++) {
        wk_pq_param prm = {WK_PG_KIND_STR, &v, 0};
        CHECK_STATUS(wk_pq_pipeline_add(p, "SELECT $1::text AS t", &prm, 1, &err), WK_OK);
    }
    outcome o;
    memset(&o, 0, sizeof o);
    size_t ok = 0, total = 0;
    for (;;) {
        CHECK(wait_wanted(p, &o, 20000) > 0);
        wk_pq_stmt_result r;
        wk_status st = wk_pq_pipeline_step(p, &r, &err);
        if (st == WK_OK) {
            total++;
            ok += r.state == WK_PQ_STMT_OK && PQgetlength(r.res, 0, 0) == LEN;
        } else if (st != WK_ERR_AGAIN) {
            CHECK_STATUS(st, WK_ERR_EOF);
            break;
        }
    }
    CHECK_STATUS(wk_pq_pipeline_end(p, &err), WK_OK);
    printf("    %zu of %zu statements back whole, %d waits with writing pending\n", ok, total,
           o.write_waits);
    CHECK_EQ(total, N);
    CHECK_EQ(ok, N);
    free(big);
}

WK_TEST(test_pg_pipeline_driven_wk_pq_pipeline_next_takes_over_half_way)
{
    NEED_CONN();
    outcome blocking, handed;
    run(mixed, 8, false, 0, &blocking);
    run(mixed, 8, true, 2, &handed);
    same(&handed, &blocking);
    CHECK_EQ(pg_test_count(conn, "SELECT 13"), 13);
}

WK_TEST(test_pg_pipeline_driven_zz_free_connection)
{
    wk_pq_conn_free(conn);
    conn = NULL;
}
