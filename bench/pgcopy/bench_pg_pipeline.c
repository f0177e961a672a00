/*
 * Suite "pg-copy", small statements (needs WK_PG_DSN): 10,000 lookups by primary key,
 * `SELECT id, name FROM wk_bench_pipe WHERE id = $1` over a 1,000-row table, each row decoded
 * into an int32 and a string and summed, four ways, each on its own loopback connection:
 * - wirekit: one pipeline of 10,000 statements (wk_pq_pipeline_*), one round trip, the
 *   statement prepared once per connection, binary parameter and result, rows through a plan;
 * - wk_pq_exec one by one: wirekit's blocking call, one round trip per statement (the
 *   statement's format known after its first run, binary in and out, the same plan);
 * - libpq PQexecParams loop: libpq alone, one round trip per statement, the parameter sent
 *   in binary (htonl) and the result asked in binary (ntohl), the leanest libpq allows;
 * - wirekit unprepared (informative, no ratio): the same pipeline with the statement cache
 *   off (capacity 0), so each statement is parsed by the server again and answered in text:
 *   what the round trips alone are worth, without the preparation.
 * An operation is one statement; a repetition runs 10,000 of them (1,000 with --quick), the
 * sides interleaved. The sums must agree. Wall time counts the server's
 * work and the loopback; callgrind counts only this process's instructions.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "wirekit/pq.h"

#define STMTS 10000
#define TABLE_ROWS 1000

static const char lookup[] = "SELECT id, name FROM wk_bench_pipe WHERE id = $1";

typedef struct row {
    int32_t id;
    wk_slice name;
} row;

typedef struct side {
    wk_pq_conn *conn;
    wk_pg_plan *plan; /* built from the first result: every result has the same columns */
    bool failed;
} side;

static const wk_pg_kind kinds[2] = {WK_PG_KIND_I32, WK_PG_KIND_STR};
static const size_t offs[2] = {offsetof(row, id), offsetof(row, name)};

/* The row's contribution to the sum (0 and a failure mark when it cannot be decoded). */
static uint64_t decode(side *s, const PGresult *res)
{
    wk_error err = {0};
    if (s->plan == NULL && wk_pq_plan(s->conn, res, kinds, offs, &s->plan, &err) != WK_OK) {
        s->failed = true;
        return 0;
    }
    row r;
    if (PQntuples(res) != 1 || wk_pq_decode_row(s->plan, res, 0, &r, NULL, NULL, &err) != WK_OK) {
        s->failed = true;
        return 0;
    }
    return (uint64_t)r.id + r.name.len;
}

static int32_t key(uint64_t k)
{
    return (int32_t)(k % TABLE_ROWS) + 1;
}

static uint64_t run_pipelined(void *arg, uint64_t iters)
{
    side *s = arg;
    wk_pq_pipeline *p = NULL;
    wk_error err = {0};
    if (wk_pq_pipeline_begin(s->conn, &p, &err) != WK_OK) {
        s->failed = true;
        return 0;
    }
    for (uint64_t k = 0; k < iters; k++) {
        int32_t id = key(k);
        wk_pq_param prm = {WK_PG_KIND_I32, &id, 0};
        if (wk_pq_pipeline_add(p, lookup, &prm, 1, &err) != WK_OK) {
            s->failed = true;
        }
    }
    uint64_t sum = 0;
    wk_pq_stmt_result r;
    while (wk_pq_pipeline_next(p, &r, &err) == WK_OK) {
        if (r.state != WK_PQ_STMT_OK) {
            s->failed = true;
            continue;
        }
        sum += decode(s, r.res);
    }
    if (wk_pq_pipeline_end(p, &err) != WK_OK) {
        s->failed = true;
    }
    return sum;
}

static uint64_t run_one_by_one(void *arg, uint64_t iters)
{
    side *s = arg;
    uint64_t sum = 0;
    wk_error err = {0};
    for (uint64_t k = 0; k < iters; k++) {
        int32_t id = key(k);
        wk_pq_param prm = {WK_PG_KIND_I32, &id, 0};
        PGresult *res = NULL;
        if (wk_pq_exec(s->conn, lookup, &prm, 1, &res, &err) != WK_OK) {
            s->failed = true;
        } else {
            sum += decode(s, res);
        }
        PQclear(res);
    }
    return sum;
}

static uint64_t run_libpq(void *arg, uint64_t iters)
{
    side *s = arg;
    PGconn *pg = wk_pq_pgconn(s->conn);
    uint64_t sum = 0;
    static const Oid types[1] = {23};
    static const int lens[1] = {4}, fmts[1] = {1};
    for (uint64_t k = 0; k < iters; k++) {
        uint32_t be = htonl((uint32_t)key(k));
        const char *vals[1] = {(const char *)&be};
        PGresult *res = PQexecParams(pg, lookup, 1, types, vals, lens, fmts, 1);
        if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1 ||
            PQgetlength(res, 0, 0) != 4) {
            s->failed = true;
        } else {
            uint32_t v;
            memcpy(&v, PQgetvalue(res, 0, 0), 4);
            sum += (uint64_t)(int32_t)ntohl(v) + (uint64_t)PQgetlength(res, 0, 1);
        }
        PQclear(res);
    }
    return sum;
}

/* Creates the table, runs the sides (each on its own connection), drops the table. */
int wk_bench_pg_pipeline(wk_bench *b, const char *dsn)
{
    side sides[4];
    memset(sides, 0, sizeof sides);
    wk_error err = {0};
    int rc = 0;
    for (int i = 0; i < 4 && rc == 0; i++) {
        if (wk_pq_connect(dsn, NULL, &sides[i].conn, &err) != WK_OK) {
            wk_bench_fail(b, "pg-copy statements: cannot connect: %s",
                          wk_pq_conn_message(sides[i].conn));
            rc = 1;
        }
    }
    if (rc == 0 && wk_pq_set_stmt_cache_capacity(sides[3].conn, 0, &err) != WK_OK) {
        wk_bench_fail(b, "pg-copy statements: cannot turn the statement cache off");
        rc = 1;
    }
    PGresult *r = NULL;
    if (rc == 0) {
        char sql[512];
        snprintf(sql, sizeof sql,
                 "DROP TABLE IF EXISTS wk_bench_pipe; CREATE UNLOGGED TABLE wk_bench_pipe "
                 "(id int4 PRIMARY KEY, name text); INSERT INTO wk_bench_pipe SELECT i, "
                 "'name-' || i FROM generate_series(1, %d) i; ANALYZE wk_bench_pipe",
                 TABLE_ROWS);
        r = PQexec(wk_pq_pgconn(sides[0].conn), sql);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            wk_bench_fail(b, "pg-copy statements: cannot create the table: %s",
                          PQresultErrorMessage(r));
            rc = 1;
        }
        PQclear(r);
    }
    if (rc == 0) {
        /* all must agree, on a full batch, before anything is timed */
        uint64_t a = run_pipelined(&sides[0], STMTS), o = run_one_by_one(&sides[1], STMTS),
                 l = run_libpq(&sides[2], STMTS), u = run_pipelined(&sides[3], STMTS);
        if (a == 0 || a != o || a != l || a != u || sides[0].failed || sides[1].failed ||
            sides[2].failed || sides[3].failed) {
            wk_bench_fail(b, "pg-copy statements: sums differ or a statement failed (pipelined "
                             "%llu, one by one %llu, libpq %llu, unprepared %llu)",
                          (unsigned long long)a, (unsigned long long)o, (unsigned long long)l,
                          (unsigned long long)u);
            rc = 1;
        }
    }
    if (rc == 0) {
        const char *cn = "10,000 lookups by primary key";
        wk_bench_spec s1 = {cn, "wirekit", run_pipelined, &sides[0], STMTS, 0,
                            "one pipeline: one round trip, prepared once, binary, plan", 0};
        wk_bench_spec s2 = {cn, "wk_pq_exec one by one", run_one_by_one, &sides[1], STMTS, 0,
                            "wirekit blocking: a round trip per statement, binary, plan", 0};
        wk_bench_spec s3 = {cn, "libpq PQexecParams loop", run_libpq, &sides[2], STMTS, 0,
                            "a round trip per statement, binary in and out, ntohl", 0};
        wk_bench_spec s4 = {cn, "wirekit unprepared", run_pipelined, &sides[3], STMTS, 0,
                            "one pipeline, cache off: parsed each time, text results",
                            WK_BENCH_INFO};
        wk_bench_peer(b, "libpq PQexecParams loop", "libpq 15: Debian shared library, "
                                                    "distribution build (-O2)");
        wk_bench_add(b, &s1);
        wk_bench_add(b, &s2);
        wk_bench_add(b, &s3);
        wk_bench_add(b, &s4);
        wk_bench_flush(b);
        if (sides[0].failed || sides[1].failed || sides[2].failed || sides[3].failed) {
            wk_bench_fail(b, "pg-copy statements: a statement failed while timed");
            rc = 1;
        }
    }
    if (sides[0].conn != NULL) {
        r = PQexec(wk_pq_pgconn(sides[0].conn), "DROP TABLE IF EXISTS wk_bench_pipe");
        PQclear(r);
    }
    for (int i = 0; i < 4; i++) {
        wk_pg_plan_free(sides[i].plan);
        wk_pq_conn_free(sides[i].conn);
    }
    return rc;
}
