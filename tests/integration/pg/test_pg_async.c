/*
 * Non-blocking queries (wk_pq_async_*) against a real PostgreSQL 15 (WK_PG_DSN; skipped when
 * unset), each driven by a plain poll() loop as an event loop would drive it. The blocking
 * path is the oracle: a literal of every built-in type (pg_samples.c), and an array of each,
 * read through the non-blocking API equals the same query read by wk_pq_exec, as value
 * trees, both in the text fallback and in binary. Then the ways a query ends: a large result
 * that arrives over many reads, a server error after rows have been handed over, a deadline,
 * a cancel, a row function that stops, two connections at once; the connection must serve
 * the next query each time.
 */
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pg_samples.h"
#include "pg_test_conn.h"
#include "wirekit/pq.h"
#include "wk_test.h"

static wk_pq_conn *conn;

/* How a driven query went. */
typedef struct drive_stats {
    int steps;           /* wk_pq_async_step calls */
    int steps_with_rows; /* of them, those that handed rows over */
    double took;         /* seconds */
} drive_stats;

/* The event loop of one query: poll() for what it wants, step, until it ends. Calls `tick`
 * (may be NULL) after each step with the seconds since the start. */
static wk_status drive(wk_pq_async *q, drive_stats *ds, void (*tick)(wk_pq_async *, double),
                       wk_error *err)
{
    double t0 = wk_test_now_s();
    memset(ds, 0, sizeof *ds);
    for (;;) {
        unsigned want = wk_pq_async_wants(q);
        struct pollfd p = {wk_pq_async_socket(q),
                           (short)(((want & WK_PQ_WANT_READ) ? POLLIN : 0) |
                                   ((want & WK_PQ_WANT_WRITE) ? POLLOUT : 0)),
                           0};
        int timeout = wk_pq_async_timeout_ms(q);
        if (tick != NULL && (timeout < 0 || timeout > 50)) {
            timeout = 50; /* tick at least every 50 ms */
        }
        if (want != 0 && poll(&p, 1, timeout) < 0) {
            return WK_ERR_IO;
        }
        uint64_t before = wk_pq_async_rows(q);
        wk_status st = wk_pq_async_step(q, err);
        ds->steps++;
        ds->steps_with_rows += wk_pq_async_rows(q) > before;
        ds->took = wk_test_now_s() - t0;
        if (st != WK_ERR_AGAIN) {
            return st;
        }
        if (tick != NULL) {
            tick(q, ds->took);
        }
    }
}

/* The connection answers the next query. */
static bool usable(wk_pq_conn *c)
{
    PGresult *r = NULL;
    wk_error err = {0};
    wk_status st = wk_pq_exec(c, "SELECT 41 + 1", NULL, 0, &r, &err);
    bool ok = st == WK_OK && PQntuples(r) == 1 && PQgetlength(r, 0, 0) == 4;
    PQclear(r);
    return ok;
}

/* Rows as value trees, in an arena, for the comparison with the blocking path. */
typedef struct trees {
    wk_arena arena;
    wk_value rows[4];
    int n;
} trees;

static wk_status keep_tree(void *ctx, const wk_pg_plan *plan, const uint8_t *const *vals,
                           const int *lens, wk_error *err)
{
    trees *t = ctx;
    if (t->n == 4) {
        return wk_pg_plan_value_row(plan, vals, lens, &t->arena, &t->rows[3], err);
    }
    return wk_pg_plan_value_row(plan, vals, lens, &t->arena, &t->rows[t->n++], err);
}

/* `sql` through both paths: the same rows as trees, in the same result format. */
static void check_same_as_blocking(const char *sql, const char *what)
{
    wk_error err = {0};
    PGresult *res = NULL;
    wk_status st = wk_pq_exec(conn, sql, NULL, 0, &res, &err);
    CHECK_MSG(st == WK_OK, "%s: blocking: %s", what, wk_pq_conn_message(conn));
    wk_pg_plan *plan = NULL;
    CHECK_OK(wk_pq_plan(conn, res, NULL, NULL, &plan, &err));
    trees want;
    memset(&want, 0, sizeof want);
    wk_arena_init(&want.arena, NULL, 0);
    for (int i = 0; i < PQntuples(res) && i < 4; i++) {
        CHECK_OK(wk_pq_value_row(plan, res, i, &want.arena, &want.rows[want.n++], &err));
    }
    trees got;
    memset(&got, 0, sizeof got);
    wk_arena_init(&got.arena, NULL, 0);
    wk_pq_row_handler h = {NULL, NULL, keep_tree, &got};
    wk_pq_async *q = NULL;
    CHECK_OK(wk_pq_async_start(conn, sql, NULL, 0, &h, &q, &err));
    drive_stats ds;
    st = drive(q, &ds, NULL, &err);
    CHECK_MSG(st == WK_OK, "%s: non-blocking: %s (%s)", what, wk_status_str(st),
              wk_pq_conn_message(conn));
    CHECK_EQ(got.n, want.n);
    CHECK_EQ(wk_pq_async_rows(q), (uint64_t)PQntuples(res));
    for (int i = 0; i < got.n; i++) {
        CHECK_MSG(wk_value_equal(&got.rows[i], &want.rows[i], NULL), "%s: row %d differs", what,
                  i);
    }
    printf("    %s: %u columns, equal (result format %s)\n", what, want.n ? want.rows[0].len : 0,
           PQfformat(res, 0) ? "binary" : "text");
    wk_pq_async_free(q);
    wk_arena_free(&got.arena);
    wk_arena_free(&want.arena);
    wk_pg_plan_free(plan);
    PQclear(res);
}

WK_TEST(test_pg_async_every_listed_type_equals_the_blocking_result)
{
    NEED_CONN();
    const wk_pg_registry *reg = wk_pq_registry(conn);
    PGconn *pg = wk_pq_pgconn(conn);
    wk_buf all, bin;
    wk_buf_init(&all, NULL, 0);
    wk_buf_init(&bin, NULL, 0);
    wk_buf_append(&all, "SELECT ", 7);
    wk_buf_append(&bin, "SELECT ", 7);
    int nall = 0, nbin = 0;
    for (size_t s = 0; s < pg_type_nsamples; s++) {
        const char *type = pg_type_samples[s][0], *lit = pg_type_samples[s][1];
        if (lit == NULL) {
            continue; /* a type without input */
        }
        char *q = PQescapeLiteral(pg, lit, strlen(lit));
        size_t cap = 2 * strlen(q) + 2 * strlen(type) + 64;
        char *col = malloc(cap);
        int n = snprintf(col, cap, "%s%s::%s, array[%s::%s, NULL]", nall ? ", " : "", q, type, q,
                         type);
        wk_buf_append(&all, col, (size_t)n);
        nall++;
        /* the binary subset: types with binary decoders, looked up by name on the server */
        PGresult *oid = PQexecParams(pg, "SELECT $1::regtype::oid", 1, NULL, &type, NULL, NULL,
                                     0);
        wk_pg_oid o = PQresultStatus(oid) == PGRES_TUPLES_OK
                          ? (wk_pg_oid)strtoul(PQgetvalue(oid, 0, 0), NULL, 10)
                          : 0;
        PQclear(oid);
        if (o != 0 && strncmp(type, "reg", 3) != 0 &&
            wk_pg_registry_find_decoder(reg, o, WK_PG_BINARY, WK_PG_KIND_EVENTS) != NULL) {
            n = snprintf(col, cap, "%s%s::%s", nbin ? ", " : "", q, type);
            wk_buf_append(&bin, col, (size_t)n);
            nbin++;
        }
        free(col);
        PQfreemem(q);
    }
    wk_buf_push(&all, 0);
    wk_buf_push(&bin, 0);
    CHECK(nall > 50 && nbin > 30);
    /* text-only types (aclitem, ...) among them: the whole result in text */
    check_same_as_blocking((const char *)all.data, "every type and an array of each");
    check_same_as_blocking((const char *)bin.data, "the types with binary decoders");
    wk_buf_free(&all);
    wk_buf_free(&bin);
    CHECK(usable(conn));
}

/* A row of the summing queries: an int8, then (optionally) a text. */
typedef struct sum_row_t {
    int64_t id;
    wk_slice s;
} sum_row_t;

/* Sums the int8 first column. */
typedef struct summer {
    uint64_t rows;
    int64_t sum;
    uint64_t stop_after; /* 0: never */
} summer;

static wk_status sum_row(void *ctx, const wk_pg_plan *plan, const uint8_t *const *vals,
                         const int *lens, wk_error *err)
{
    summer *s = ctx;
    if (s->stop_after != 0 && s->rows == s->stop_after) {
        return WK_ERR_LIMIT;
    }
    sum_row_t r;
    bool nulls[2];
    wk_status st = wk_pg_plan_decode_row(plan, vals, lens, &r, nulls, NULL, err);
    if (st == WK_OK) {
        s->rows++;
        s->sum += r.id;
    }
    return st;
}

static const wk_pg_kind sum_kinds[2] = {WK_PG_KIND_I64, WK_PG_KIND_STR};
static const size_t sum_offsets[2] = {offsetof(sum_row_t, id), offsetof(sum_row_t, s)};

/* Starts `sql` (no parameters) with sum_row and drives it to its end; *q stays for checks
 * (NULL when the start failed, whose status is then returned). */
static wk_status sum_query(const char *sql, summer *s, void (*tick)(wk_pq_async *, double),
                           wk_pq_async **q, drive_stats *ds)
{
    wk_pq_row_handler h = {sum_kinds, sum_offsets, sum_row, s};
    wk_error err = {0};
    wk_status st = wk_pq_async_start(conn, sql, NULL, 0, &h, q, &err);
    return st != WK_OK ? st : drive(*q, ds, tick, &err);
}

WK_TEST(test_pg_async_a_large_result_arrives_over_many_reads_with_parameters)
{
    NEED_CONN();
    int64_t n = 300000;
    wk_slice pad = {"0123456789abcdef0123456789abcdef", 32};
    wk_pq_param params[2] = {{WK_PG_KIND_I64, &n, 0}, {WK_PG_KIND_STR, &pad, 0}};
    const char *sql = "SELECT g::int8, $2::text || md5(g::text) FROM generate_series(1, $1) g";
    for (int run = 0; run < 2; run++) { /* described the first time, from the cache then */
        summer s = {0, 0, 0};
        wk_pq_row_handler h = {sum_kinds, sum_offsets, sum_row, &s};
        wk_pq_async *q = NULL;
        wk_error err = {0};
        CHECK_OK(wk_pq_async_start(conn, sql, params, 2, &h, &q, &err));
        drive_stats ds;
        wk_status st = drive(q, &ds, NULL, &err);
        CHECK_MSG(st == WK_OK, "%s: %s", wk_status_str(st), wk_pq_conn_message(conn));
        CHECK_EQ(s.rows, (uint64_t)n);
        CHECK_EQ(s.sum, n * (n + 1) / 2);
        CHECK_EQ(wk_pq_async_rows(q), (uint64_t)n);
        CHECK_STR(wk_pq_async_command(q), "SELECT 300000");
        /* about 20 MB: far more than one socket read */
        CHECK_MSG(ds.steps_with_rows > 10, "rows came in %d steps", ds.steps_with_rows);
        printf("    run %d: %llu rows in %d steps (%d with rows), %.0f ms\n", run + 1,
               (unsigned long long)s.rows, ds.steps, ds.steps_with_rows, ds.took * 1000);
        CHECK_EQ(wk_pq_async_wants(q), 0u);
        wk_pq_async_free(q);
    }
    CHECK(usable(conn));
}

/* Keeps the int8 of a one-row result. */
static wk_status keep_i64(void *ctx, const wk_pg_plan *plan, const uint8_t *const *vals,
                          const int *lens, wk_error *err)
{
    return wk_pg_plan_decode_row(plan, vals, lens, ctx, NULL, NULL, err);
}

WK_TEST(test_pg_async_a_parameter_larger_than_the_socket_buffers_is_sent_when_writable)
{
    NEED_CONN();
    size_t n = (size_t)32 << 20; /* 32 MiB: many times what a socket takes at once */
    char *big = malloc(n);
    CHECK(big != NULL);
    for (size_t i = 0; i < n; i++) {
        big[i] = (char)('a' + i % 26);
    }
    wk_slice s = {big, n};
    wk_pq_param params[1] = {{WK_PG_KIND_STR, &s, 0}};
    static const wk_pg_kind k[1] = {WK_PG_KIND_I64};
    int64_t len = 0;
    wk_pq_row_handler h = {k, NULL, keep_i64, &len};
    wk_pq_async *q = NULL;
    wk_error err = {0};
    double t0 = wk_test_now_s();
    CHECK_OK(wk_pq_async_start(conn, "SELECT octet_length($1::text)::int8", params, 1, &h, &q,
                               &err));
    double start_took = wk_test_now_s() - t0;
    int wrote = 0;
    wk_status st = WK_ERR_AGAIN;
    while (st == WK_ERR_AGAIN) {
        unsigned want = wk_pq_async_wants(q);
        wrote += (want & WK_PQ_WANT_WRITE) != 0;
        struct pollfd p = {wk_pq_async_socket(q),
                           (short)(POLLIN | ((want & WK_PQ_WANT_WRITE) ? POLLOUT : 0)), 0};
        CHECK(poll(&p, 1, 10000) > 0);
        st = wk_pq_async_step(q, &err);
    }
    CHECK_MSG(st == WK_OK, "%s: %s", wk_status_str(st), wk_pq_conn_message(conn));
    CHECK_EQ(len, (int64_t)n);
    CHECK_MSG(wrote > 0, "the loop was never asked to wait for the socket to be writable");
    printf("    32 MiB parameter: start returned in %.1f ms, %d waits for writable\n",
           start_took * 1000, wrote);
    wk_pq_async_free(q);
    free(big);
    CHECK(usable(conn));
}

WK_TEST(test_pg_async_a_server_error_after_rows_ends_the_query)
{
    NEED_CONN();
    summer s = {0, 0, 0};
    wk_pq_async *q = NULL;
    wk_error err = {0};
    drive_stats ds;
    wk_status st = sum_query("SELECT g::int8, (1 / (g - 30000))::text "
                             "FROM generate_series(1, 60000) g",
                             &s, NULL, &q, &ds);
    CHECK_EQ(st, WK_ERR_SERVER);
    const wk_pq_error *e = wk_pq_last_error(conn);
    CHECK(e != NULL);
    CHECK_STR(e->sqlstate, "22012");
    /* the rows before the failing one were handed over, in order */
    CHECK_MSG(s.rows > 0 && s.rows < 30000u, "%llu rows", (unsigned long long)s.rows);
    CHECK_EQ(s.sum, (int64_t)(s.rows * (s.rows + 1) / 2));
    CHECK_EQ(wk_pq_async_step(q, &err), WK_ERR_SERVER); /* the outcome stays */
    printf("    %llu rows, then %s\n", (unsigned long long)s.rows, e->message);
    wk_pq_async_free(q);
    /* a statement that fails to prepare: no row at all */
    s.rows = 0;
    CHECK_EQ(sum_query("SELEC 1", &s, NULL, &q, &ds), WK_ERR_SERVER);
    CHECK_EQ(s.rows, 0u);
    CHECK_STR(wk_pq_last_error(conn)->sqlstate, "42601");
    wk_pq_async_free(q);
    CHECK(usable(conn));
}

WK_TEST(test_pg_async_deadline_cancels_a_silent_query)
{
    NEED_CONN();
    wk_pq_async *q = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pq_async_start(conn, "SELECT pg_sleep(30)", NULL, 0, NULL, &q, &err));
    CHECK_EQ(wk_pq_async_timeout_ms(q), -1); /* the connection has no timeout */
    wk_pq_async_set_timeout(q, 300);
    int left = wk_pq_async_timeout_ms(q);
    CHECK(left > 0 && left <= 300);
    drive_stats ds;
    wk_status st = drive(q, &ds, NULL, &err);
    CHECK_EQ(st, WK_ERR_IO);
    CHECK_MSG(ds.took >= 0.29 && ds.took < 1.5, "took %.2f s", ds.took);
    CHECK_STR(wk_pq_conn_message(conn), "query timed out (cancelled)");
    printf("    timed out after %.0f ms, %d steps\n", ds.took * 1000, ds.steps);
    wk_pq_async_free(q);
    CHECK(usable(conn));
    /* the connection's own timeout is the default deadline (the server's statement_timeout
     * off, so that the client's deadline is what ends the query) */
    CHECK_OK(wk_pq_set_timeout(conn, 200, &err));
    PGresult *off = NULL;
    CHECK_OK(wk_pq_exec(conn, "SET statement_timeout = 0", NULL, 0, &off, &err));
    PQclear(off);
    CHECK_OK(wk_pq_async_start(conn, "SELECT pg_sleep(30)", NULL, 0, NULL, &q, &err));
    st = drive(q, &ds, NULL, &err);
    wk_pq_async_free(q);
    CHECK_OK(wk_pq_set_timeout(conn, 0, &err));
    CHECK_EQ(st, WK_ERR_IO);
    CHECK_MSG(ds.took >= 0.19 && ds.took < 1.5, "took %.2f s", ds.took);
    CHECK(usable(conn));
}

static void cancel_after_200ms(wk_pq_async *q, double t)
{
    if (t > 0.2) {
        (void)wk_pq_async_cancel(q, NULL);
    }
}

WK_TEST(test_pg_async_cancel_ends_the_query_with_57014)
{
    NEED_CONN();
    summer s = {0, 0, 0};
    wk_pq_async *q = NULL;
    wk_error err = {0};
    drive_stats ds;
    /* rows first, then a long sleep: the cancel comes while the server sleeps */
    wk_status st = sum_query("SELECT g::int8 FROM generate_series(1, 5) g "
                             "UNION ALL SELECT pg_sleep(30)::text::int8 * 0",
                             &s, cancel_after_200ms, &q, &ds);
    CHECK_EQ(st, WK_ERR_SERVER);
    CHECK_STR(wk_pq_last_error(conn)->sqlstate, "57014");
    CHECK_EQ(s.rows, 5u);
    CHECK_MSG(ds.took < 2.0, "took %.2f s", ds.took);
    CHECK_EQ(wk_pq_async_cancel(q, &err), WK_ERR_STATE); /* it has ended */
    wk_pq_async_free(q);
    CHECK(usable(conn));
}

/* drive's tick: once the row function has stopped the query, the client pauses once for
 * longer than the cancel's grace, as a loaded machine's client falls behind the server. */
static void pause_once_after_the_stop(wk_pq_async *q, double took)
{
    static bool paused;
    (void)took;
    if (q == NULL) {
        paused = false; /* reset for the next query */
    } else if (!paused && wk_pq_async_rows(q) >= 10) {
        paused = true;
        struct timespec ts = {1, 500000000};
        nanosleep(&ts, NULL);
    }
}

/* Runs `sql` with a row function that stops at row 10, driven with `tick`; checks, after
 * freeing the query (so a failure leaks nothing), that the outcome is the row function's,
 * that the server cancelled the query (57014) and that the connection serves. */
static void stop_at_ten(const char *sql, void (*tick)(wk_pq_async *, double), double max_s)
{
    summer s = {0, 0, 10};
    wk_pq_async *q = NULL;
    drive_stats ds;
    memset(&ds, 0, sizeof ds);
    wk_status st = sum_query(sql, &s, tick, &q, &ds);
    uint64_t rows = q != NULL ? wk_pq_async_rows(q) : 0;
    wk_pq_async_free(q);
    const wk_pq_error *e = wk_pq_last_error(conn);
    CHECK_MSG(st == WK_ERR_LIMIT, "%s: %s", wk_status_str(st), wk_pq_conn_message(conn));
    CHECK_EQ(s.rows, 10u);
    CHECK_EQ(rows, 10u);
    CHECK_MSG(e != NULL && strcmp(e->sqlstate, "57014") == 0, "last error %s",
              e != NULL ? e->sqlstate : "none"); /* cancelled, not run to its end */
    CHECK_MSG(ds.took < max_s, "took %.2f s", ds.took);
    CHECK(usable(conn));
}

WK_TEST(test_pg_async_a_row_function_that_stops_cancels_the_rest)
{
    NEED_CONN();
    /* Rows that come slowly after the tenth: the cancel is what ends the query (about 1 ms
     * a row: 50 million would take half a day), and few rows are in flight, so the time is
     * the cancel's, loaded machine or not. */
    stop_at_ten("SELECT g::int8 FROM generate_series(1, 50000000) g "
                "WHERE g <= 10 OR pg_sleep(0.001) IS NOT NULL",
                NULL, 30.0);
    /* Issue 29: rows as fast as the server makes them, and a client that falls behind by
     * more than the cancel's grace (1 s) just after it sent the cancel: the socket buffers
     * are full of rows, which the client must drain before the server's answer to the
     * cancel can arrive. The query was given up with WK_ERR_IO and the connection marked
     * unusable; the grace now starts again while rows keep coming. No time bound: under
     * ASan on a loaded machine the drain takes tens of seconds. */
    pause_once_after_the_stop(NULL, 0);
    stop_at_ten("SELECT generate_series(1, 50000000)::int8", pause_once_after_the_stop, 1e9);
    /* freed while running, even at once (the cancel may reach the backend before the query
     * does, and the server ignores it then): abandoned, and the connection still serves */
    wk_error err = {0};
    for (int i = 0; i < 5; i++) {
        wk_pq_async *q = NULL;
        CHECK_OK(wk_pq_async_start(conn, "SELECT pg_sleep(30)", NULL, 0, NULL, &q, &err));
        wk_status first = i == 0 ? wk_pq_async_step(q, &err) : WK_ERR_AGAIN;
        double t0 = wk_test_now_s();
        wk_pq_async_free(q);
        double took = wk_test_now_s() - t0;
        CHECK_EQ(first, WK_ERR_AGAIN);
        /* the cancel's time, not the 30 s sleep (a loaded machine gets room) */
        CHECK_MSG(took < 10.0, "free took %.2f s", took);
        CHECK(usable(conn));
    }
}

/* The server's start and end of a query (microseconds since the epoch), so that "ran at
 * once" is told by the server's clock, whatever the load on the client's machine. */
typedef struct span_row_t {
    int64_t start, end;
} span_row_t;

static wk_status span_row(void *ctx, const wk_pg_plan *plan, const uint8_t *const *vals,
                          const int *lens, wk_error *err)
{
    bool nulls[2];
    return wk_pg_plan_decode_row(plan, vals, lens, ctx, nulls, NULL, err);
}

static const wk_pg_kind span_kinds[2] = {WK_PG_KIND_I64, WK_PG_KIND_I64};
static const size_t span_offsets[2] = {offsetof(span_row_t, start), offsetof(span_row_t, end)};

WK_TEST(test_pg_async_two_connections_run_at_once_in_one_loop)
{
    NEED_CONN();
    wk_pq_conn *other = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pq_connect(getenv("WK_PG_DSN"), NULL, &other, &err));
    wk_pq_conn *cs[2] = {conn, other};
    wk_pq_async *q[2] = {NULL, NULL};
    /* every check's outcome is kept and looked at once both queries and the second
     * connection are freed: a failure here leaks nothing into the tests after it */
    wk_status started[2] = {WK_ERR_AGAIN, WK_ERR_AGAIN};
    static const char span_sql[] =
        "SELECT (extract(epoch FROM statement_timestamp()) * 1e6)::int8, "
        "(extract(epoch FROM clock_timestamp()) * 1e6)::int8 FROM pg_sleep(1)";
    span_row_t spans[2] = {{0, 0}, {0, 0}};
    wk_pq_row_handler spans_to[2] = {{span_kinds, span_offsets, span_row, &spans[0]},
                                     {span_kinds, span_offsets, span_row, &spans[1]}};
    double t0 = wk_test_now_s();
    for (int i = 0; i < 2; i++) {
        started[i] = wk_pq_async_start(cs[i], span_sql, NULL, 0, &spans_to[i], &q[i], &err);
    }
    /* one query at a time per connection */
    wk_pq_async *third = NULL;
    wk_status busy = wk_pq_async_start(conn, "SELECT 1", NULL, 0, NULL, &third, &err);
    wk_pq_async_free(third);
    wk_status out[2] = {started[0] == WK_OK ? WK_ERR_AGAIN : started[0],
                        started[1] == WK_OK ? WK_ERR_AGAIN : started[1]};
    bool polled = true;
    while (polled && (out[0] == WK_ERR_AGAIN || out[1] == WK_ERR_AGAIN)) {
        struct pollfd p[2];
        for (int i = 0; i < 2; i++) {
            p[i].fd = out[i] == WK_ERR_AGAIN ? wk_pq_async_socket(q[i]) : -1;
            p[i].events = POLLIN;
            p[i].revents = 0;
        }
        polled = poll(p, 2, 3000) >= 0;
        for (int i = 0; i < 2; i++) {
            if (out[i] == WK_ERR_AGAIN && p[i].revents != 0) {
                out[i] = wk_pq_async_step(q[i], &err);
            }
        }
    }
    double took = wk_test_now_s() - t0;
    for (int i = 0; i < 2; i++) {
        wk_pq_async_free(q[i]);
    }
    wk_pq_conn_free(other);
    CHECK_MSG(started[0] == WK_OK && started[1] == WK_OK, "start: %s, %s (%s)",
              wk_status_str(started[0]), wk_status_str(started[1]), wk_pq_conn_message(conn));
    CHECK_EQ(busy, WK_ERR_STATE);
    CHECK(third == NULL);
    CHECK(polled);
    CHECK_EQ(out[0], WK_OK);
    CHECK_EQ(out[1], WK_OK);
    /* at once: each began on the server before the other ended (the server's clock: the
     * client's time depends on the machine's load), and neither ended early */
    CHECK_MSG(spans[0].start < spans[1].end && spans[1].start < spans[0].end,
              "not at once: %lld..%lld and %lld..%lld", (long long)spans[0].start,
              (long long)spans[0].end, (long long)spans[1].start, (long long)spans[1].end);
    CHECK(spans[0].end - spans[0].start >= 999000 && spans[1].end - spans[1].start >= 999000);
    CHECK_MSG(took >= 0.99, "two 1 s queries took %.2f s", took);
    printf("    two 1 s queries in %.0f ms\n", took * 1000);
    CHECK(usable(conn));
}

/* One pipeline of "SELECT 7::int4" on conn: its outcome is OK with the row in binary. */
static bool pipeline_of_seven(void)
{
    wk_pq_pipeline *p = NULL;
    wk_error err = {0};
    wk_pq_stmt_result r;
    if (wk_pq_pipeline_begin(conn, &p, &err) != WK_OK) {
        return false;
    }
    bool ok = wk_pq_pipeline_add(p, "SELECT 7::int4", NULL, 0, &err) == WK_OK &&
              wk_pq_pipeline_next(p, &r, &err) == WK_OK;
    ok = ok && r.state == WK_PQ_STMT_OK && r.res != NULL && PQntuples(r.res) == 1 &&
         PQfformat(r.res, 0) == 1 && PQgetlength(r.res, 0, 0) == 4 &&
         PQgetvalue(r.res, 0, 0)[3] == 7;
    if (!ok) {
        printf("    pipeline: %s: %s\n", wk_pq_stmt_state_str(r.state), wk_pq_conn_message(conn));
    }
    return wk_pq_pipeline_end(p, &err) == WK_OK && ok;
}

/* A pipeline or another query on a connection whose non-blocking query is in flight would
 * interleave their messages with its own (each reading the other's answers): both are refused
 * with WK_ERR_STATE until the query has ended, and its rows are all its own. Once it has ended
 * a pipeline works, also one whose first command is the execute of a statement prepared
 * before: libpq left single-row mode set from the query, and the pipeline's first result came
 * as one row (PGRES_SINGLE_TUPLE), taken for a mismatch that gave the connection up. */
WK_TEST(test_pg_async_a_pipeline_beside_or_after_a_query_reads_its_own_answers)
{
    NEED_CONN();
    CHECK(pipeline_of_seven()); /* its statement is prepared now: the next batch is an execute */
    for (int known = 0; known < 2; known++) { /* first described, then from the format cache */
        summer s = {0, 0, 0};
        wk_pq_row_handler h = {sum_kinds, sum_offsets, sum_row, &s};
        wk_pq_async *q = NULL, *q2 = NULL;
        wk_error err = {0};
        const char *sql = "SELECT g::int8, g::text FROM generate_series(1, 1000) g";
        CHECK_OK(wk_pq_async_start(conn, sql, NULL, 0, &h, &q, &err));
        wk_pq_pipeline *p = NULL;
        CHECK_STATUS(wk_pq_pipeline_begin(conn, &p, &err), WK_ERR_STATE);
        CHECK(p == NULL);
        CHECK(err.msg != NULL && strstr(err.msg, "non-blocking query") != NULL);
        CHECK(strstr(wk_pq_conn_message(conn), "wk_pq_async_start") != NULL);
        CHECK_STATUS(wk_pq_async_start(conn, "SELECT 1::int8, 'x'", NULL, 0, &h, &q2, &err),
                     WK_ERR_STATE);
        CHECK(q2 == NULL);
        PGresult *r0 = NULL;
        CHECK_STATUS(wk_pq_exec(conn, "SELECT 1", NULL, 0, &r0, &err), WK_ERR_STATE);
        CHECK(r0 == NULL);
        drive_stats ds;
        wk_status st = drive(q, &ds, NULL, &err);
        CHECK_MSG(st == WK_OK, "%s: %s", wk_status_str(st), wk_pq_conn_message(conn));
        CHECK_EQ(s.rows, 1000u);
        CHECK_EQ(s.sum, (int64_t)(1000 * 1001 / 2));
        CHECK_MSG(pipeline_of_seven(), "run %d", known); /* ended, not yet freed */
        wk_pq_async_free(q);
    }
    /* the same after a single-row query of the blocking calls (pg query's path) */
    wk_error err = {0};
    CHECK_OK(wk_pq_send(conn, "SELECT g FROM generate_series(1, 3) g", NULL, 0,
                        WK_PQ_SEND_SINGLE_ROW, &err));
    PGresult *r = NULL;
    while (wk_pq_next(conn, &r, &err) == WK_OK) {
        PQclear(r);
    }
    CHECK(pipeline_of_seven());
    /* a query freed before its end gives the connection back too */
    wk_pq_async *q = NULL;
    CHECK_OK(wk_pq_async_start(conn, "SELECT g::int8, g::text FROM generate_series(1, 10) g",
                               NULL, 0, NULL, &q, &err));
    wk_pq_async_free(q);
    CHECK(pipeline_of_seven());
    CHECK(usable(conn));
}

WK_TEST(test_pg_async_zz_close_the_connection)
{
    wk_pq_conn_free(conn);
    conn = NULL;
}
