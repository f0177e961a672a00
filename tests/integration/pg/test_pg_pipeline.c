/*
 * Pipelines against the real PostgreSQL 15 server (WK_PG_DSN; skipped when unset), with the
 * blocking path (wk_pq_exec) as the oracle:
 * - a sample of every built-in type, sent as a binary parameter and read back with an array
 *   of it, gives the same columns, formats, bytes and decoded text pipelined (cold cache,
 *   then warm) as one at a time, and C-kind parameters likewise; unprepared (no cache) the
 *   result comes in text and decodes to the same text;
 * - a failing statement in the middle: those before it OK (rolled back), it FAILED with the
 *   server's SQLSTATE, the rest ABORTED, the batch WK_ERR_SERVER, the connection usable;
 *   a statement that cannot be prepared before the batch (a table the batch creates) runs in
 *   its place; a commit that fails (a deferred constraint) fails the batch;
 * - the prepared-statement cache: hits, misses, eviction at the bound, the server's own
 *   pg_prepared_statements agreeing, capacity 0;
 * - the deadline: a statement that sleeps past it is cancelled (57014), the rest aborted,
 *   the batch WK_ERR_IO within the deadline plus the cancel's second, the connection usable;
 * - a batch of 40 MB each way completes (sending and reading interleave: no deadlock).
 */
#include <arpa/inet.h>
#include <stdlib.h>

#include "pg_samples.h"
#include "pg_test_conn.h"
#include "wirekit/pq.h"
#include "wk_test.h"

static wk_pq_conn *conn;

/* Every column of `res` decoded to PostgreSQL text through a plan, joined with '|'. */
static bool decoded_text(const PGresult *res, wk_buf *out)
{
    int n = PQnfields(res);
    wk_buf cols[8];
    bool nulls[8];
    if (n > 8 || PQntuples(res) != 1) {
        return false;
    }
    wk_error err = {0};
    bool ok = pg_test_decode_text_row(conn, res, cols, nulls, &err) == WK_OK;
    if (!ok) {
        printf("    decode failed: %s at %zu\n", err.msg != NULL ? err.msg : "", err.offset);
    }
    for (int i = 0; i < n; i++) {
        if (ok) {
            ok = wk_buf_append(out, cols[i].data, cols[i].len) == WK_OK &&
                 wk_buf_append(out, nulls[i] ? "<null>|" : "|", nulls[i] ? 7 : 1) == WK_OK;
        }
        wk_buf_free(&cols[i]);
    }
    return ok;
}

/* Same columns (names, types, formats) and the same bytes in every cell. */
static bool same_result(const PGresult *a, const PGresult *b, char *why, size_t cap)
{
    if (PQnfields(a) != PQnfields(b) || PQntuples(a) != PQntuples(b)) {
        snprintf(why, cap, "shape %dx%d vs %dx%d", PQntuples(a), PQnfields(a), PQntuples(b),
                 PQnfields(b));
        return false;
    }
    for (int c = 0; c < PQnfields(a); c++) {
        if (PQftype(a, c) != PQftype(b, c) || PQfformat(a, c) != PQfformat(b, c) ||
            strcmp(PQfname(a, c), PQfname(b, c)) != 0) {
            snprintf(why, cap, "column %d: type %u/%u format %d/%d", c, PQftype(a, c),
                     PQftype(b, c), PQfformat(a, c), PQfformat(b, c));
            return false;
        }
        for (int r = 0; r < PQntuples(a); r++) {
            int la = PQgetlength(a, r, c), lb = PQgetlength(b, r, c);
            if (PQgetisnull(a, r, c) != PQgetisnull(b, r, c) || la != lb ||
                memcmp(PQgetvalue(a, r, c), PQgetvalue(b, r, c), (size_t)la) != 0) {
                snprintf(why, cap, "row %d column %d differs", r, c);
                return false;
            }
        }
    }
    return true;
}

typedef struct sample_stmt {
    char sql[256];
    wk_pq_param param;
    wk_slice lit;
    PGresult *want;
} sample_stmt;

WK_TEST(test_pg_pipeline_results_equal_the_blocking_ones_for_every_type)
{
    NEED_CONN();
    PGconn *pg = wk_pq_pgconn(conn);
    sample_stmt *ss = calloc(pg_type_nsamples, sizeof *ss);
    size_t n = 0, skipped = 0;
    wk_error err = {0};
    for (size_t s = 0; s < pg_type_nsamples; s++) {
        const char *name = pg_type_samples[s][0], *lit = pg_type_samples[s][1];
        if (lit == NULL) {
            continue;
        }
        sample_stmt *t = &ss[n];
        char q[128];
        snprintf(q, sizeof q, "SELECT '%s'::regtype::oid", name);
        PGresult *o = PQexec(pg, q);
        CHECK_MSG(PQresultStatus(o) == PGRES_TUPLES_OK, "%s", name);
        wk_pg_oid oid = (wk_pg_oid)strtoul(PQgetvalue(o, 0, 0), NULL, 10);
        PQclear(o);
        snprintf(t->sql, sizeof t->sql, "SELECT $1::%s AS v, array[$1::%s, NULL] AS a", name,
                 name);
        t->lit.ptr = lit;
        t->lit.len = strlen(lit);
        /* the reg* types carry an OID in binary: their names go as text for the server */
        bool reg = strncmp(name, "reg", 3) == 0;
        t->param = (wk_pq_param){WK_PG_KIND_TEXT, &t->lit, reg ? 0 : oid};
        wk_status st = wk_pq_exec(conn, t->sql, &t->param, 1, &t->want, &err);
        if (st != WK_OK) {
            /* both paths refuse it alike: checked by the failure tests, not here */
            PQclear(t->want);
            t->want = NULL;
            skipped++;
            continue;
        }
        n++;
    }
    /* one fixed statement with C kinds besides */
    int32_t i4 = -7;
    int64_t i8 = INT64_MIN;
    double f8 = 0.1;
    bool b = true;
    wk_slice str = {"naïve \"q\"", 10};
    wk_slice bytes = {"\0\1\xff", 3};
    int64_t ts = 86400000000;
    const wk_pq_param kp[7] = {
        {WK_PG_KIND_I32, &i4, 0},   {WK_PG_KIND_I64, &i8, 0},   {WK_PG_KIND_F64, &f8, 0},
        {WK_PG_KIND_BOOL, &b, 0},   {WK_PG_KIND_STR, &str, 0},  {WK_PG_KIND_BYTES, &bytes, 0},
        {WK_PG_KIND_TIMESTAMP, &ts, 0}};
    const char *ksql = "SELECT $1 + 1 AS i4, $2 AS i8, $3 * 2 AS f8, NOT $4 AS b, $5 || '!' AS "
                       "s, $6 AS by, $7 AS ts, NULL::int4 AS n";
    PGresult *kwant = NULL;
    CHECK_STATUS(wk_pq_exec(conn, ksql, kp, 7, &kwant, &err), WK_OK);
    wk_buf da, db;
    wk_buf_init(&da, NULL, 0);
    wk_buf_init(&db, NULL, 0);
    /* rounds: cold cache, warm cache, no cache (unprepared: results in text) */
    CHECK_STATUS(wk_pq_set_stmt_cache_capacity(conn, 256, &err), WK_OK);
    for (int round = 0; round < 3; round++) {
        if (round == 2) {
            CHECK_STATUS(wk_pq_set_stmt_cache_capacity(conn, 0, &err), WK_OK);
        }
        wk_pq_stmt_cache_stats before, after;
        wk_pq_get_stmt_cache_stats(conn, &before);
        wk_pq_pipeline *p = NULL;
        CHECK_STATUS(wk_pq_pipeline_begin(conn, &p, &err), WK_OK);
        for (size_t i = 0; i < n; i++) {
            CHECK_STATUS(wk_pq_pipeline_add(p, ss[i].sql, &ss[i].param, 1, &err), WK_OK);
        }
        CHECK_STATUS(wk_pq_pipeline_add(p, ksql, kp, 7, &err), WK_OK);
        CHECK_EQ(wk_pq_pipeline_count(p), n + 1);
        wk_pq_stmt_result r;
        size_t got = 0;
        while (wk_pq_pipeline_next(p, &r, &err) == WK_OK) {
            CHECK_EQ(r.index, got);
            const PGresult *want = r.index < n ? ss[r.index].want : kwant;
            const char *what = r.index < n ? ss[r.index].sql : ksql;
            CHECK_MSG(r.state == WK_PQ_STMT_OK, "%s: %s (%s)", what, wk_pq_stmt_state_str(r.state),
                      r.error != NULL ? r.error->message : "");
            char why[128];
            if (round < 2) {
                CHECK_MSG(same_result(r.res, want, why, sizeof why), "%s: %s", what, why);
            }
            wk_buf_clear(&da);
            wk_buf_clear(&db);
            /* reg* types: binary carries the OID, text the name */
            bool comparable = round < 2 || strstr(what, "::reg") == NULL;
            bool same = decoded_text(r.res, &da) && decoded_text(want, &db) &&
                        da.len == db.len && memcmp(da.data, db.data, da.len) == 0;
            CHECK_MSG(same || !comparable,
                      "%s: decoded differently: %.*s vs %.*s", what, (int)da.len,
                      (const char *)da.data, (int)db.len, (const char *)db.data);
            got++;
        }
        CHECK_EQ(got, n + 1);
        CHECK_STATUS(wk_pq_pipeline_end(p, &err), WK_OK);
        wk_pq_get_stmt_cache_stats(conn, &after);
        printf("    round %d: %zu statements, cache hits +%llu, misses +%llu\n", round, got,
               (unsigned long long)(after.hits - before.hits),
               (unsigned long long)(after.misses - before.misses));
        if (round == 1) {
            CHECK_EQ(after.hits - before.hits, (uint64_t)got); /* all prepared already */
        }
    }
    CHECK_STATUS(wk_pq_set_stmt_cache_capacity(conn, 64, &err), WK_OK);
    printf("    %zu typed samples compared (%zu refused by both paths)\n", n, skipped);
    CHECK(n >= 90);
    for (size_t i = 0; i < n; i++) {
        PQclear(ss[i].want);
    }
    free(ss);
    PQclear(kwant);
    wk_buf_free(&da);
    wk_buf_free(&db);
}

/* Runs a pipeline of `n` statements without parameters; states[i] and each FAILED SQLSTATE
 * into sqlstates (6 bytes each). Returns wk_pq_pipeline_end's status. */
static wk_status run_batch(const char *const *sqls, size_t n, wk_pq_stmt_state *states,
                           char (*sqlstates)[6])
{
    wk_pq_pipeline *p = NULL;
    wk_error err = {0};
    if (wk_pq_pipeline_begin(conn, &p, &err) != WK_OK) {
        return WK_ERR_STATE;
    }
    for (size_t i = 0; i < n; i++) {
        if (wk_pq_pipeline_add(p, sqls[i], NULL, 0, &err) != WK_OK) {
            wk_pq_pipeline_discard(p);
            return WK_ERR_ARG;
        }
    }
    wk_pq_stmt_result r;
    size_t i = 0;
    while (wk_pq_pipeline_next(p, &r, &err) == WK_OK && i < n) {
        states[i] = r.state;
        snprintf(sqlstates[i], 6, "%s", r.error != NULL ? r.error->sqlstate : "");
        i++;
    }
    return wk_pq_pipeline_end(p, &err);
}

WK_TEST(test_pg_pipeline_a_failing_statement_aborts_the_rest_and_the_connection_goes_on)
{
    NEED_CONN();
    CHECK(pg_test_exec(conn, "DROP TABLE IF EXISTS wk_pipe_t; CREATE TABLE wk_pipe_t (id int PRIMARY KEY)"));
    wk_pq_pipeline *p = NULL;
    wk_error err = {0};
    CHECK_STATUS(wk_pq_pipeline_begin(conn, &p, &err), WK_OK);
    /* one pipeline at a time per connection */
    wk_pq_pipeline *q = NULL;
    CHECK_STATUS(wk_pq_pipeline_begin(conn, &q, &err), WK_ERR_STATE);
    int32_t ids[6] = {1, 2, 0, 3, 4, 5};
    for (int i = 0; i < 6; i++) {
        wk_pq_param prm = {WK_PG_KIND_I32, &ids[i], 0};
        const char *sql = i == 2 ? "SELECT 10 / $1" : "INSERT INTO wk_pipe_t VALUES ($1)";
        CHECK_STATUS(wk_pq_pipeline_add(p, sql, &prm, 1, &err), WK_OK);
    }
    /* a parameter without an encoder is refused at add, the pipeline unharmed */
    wk_pq_param bad = {WK_PG_KIND_EVENTS, &ids[0], 0};
    CHECK_STATUS(wk_pq_pipeline_add(p, "SELECT $1", &bad, 1, &err), WK_ERR_NOT_FOUND);
    CHECK_EQ(err.offset, 0u);
    CHECK_EQ(wk_pq_pipeline_count(p), 6u);
    static const wk_pq_stmt_state want[6] = {WK_PQ_STMT_OK, WK_PQ_STMT_OK, WK_PQ_STMT_FAILED,
                                             WK_PQ_STMT_ABORTED, WK_PQ_STMT_ABORTED,
                                             WK_PQ_STMT_ABORTED};
    wk_pq_stmt_result r;
    size_t i = 0;
    while (wk_pq_pipeline_next(p, &r, &err) == WK_OK) {
        CHECK_MSG(r.state == want[i], "statement %zu: %s", i, wk_pq_stmt_state_str(r.state));
        if (i < 2) {
            CHECK_MSG(strcmp(PQcmdStatus(r.res), "INSERT 0 1") == 0, "%s", PQcmdStatus(r.res));
        } else if (i == 2) {
            CHECK(r.error != NULL && strcmp(r.error->sqlstate, "22012") == 0);
            CHECK(r.res != NULL && PQresultStatus(r.res) == PGRES_FATAL_ERROR);
        } else {
            CHECK(r.res == NULL && r.error == NULL);
        }
        i++;
    }
    CHECK_EQ(i, 6u);
    CHECK_STATUS(wk_pq_pipeline_add(p, "SELECT 1", NULL, 0, &err), WK_ERR_STATE);
    CHECK_STATUS(wk_pq_pipeline_end(p, &err), WK_ERR_SERVER);
    CHECK(strcmp(wk_pq_last_error(conn)->sqlstate, "22012") == 0);
    /* one implicit transaction: the two inserts that ran were rolled back */
    CHECK_EQ(pg_test_count(conn, "SELECT count(*) FROM wk_pipe_t"), 0);
    /* the connection goes on: blocking queries and another pipeline */
    PGresult *res = NULL;
    CHECK_STATUS(wk_pq_exec(conn, "SELECT 41 + 1", NULL, 0, &res, &err), WK_OK);
    PQclear(res);
    static const char *const ok_batch[3] = {"INSERT INTO wk_pipe_t VALUES (1)",
                                            "INSERT INTO wk_pipe_t VALUES (2)",
                                            "UPDATE wk_pipe_t SET id = id + 10"};
    wk_pq_stmt_state states[8];
    char sqlstates[8][6];
    CHECK_STATUS(run_batch(ok_batch, 3, states, sqlstates), WK_OK);
    CHECK_EQ(pg_test_count(conn, "SELECT sum(id) FROM wk_pipe_t"), 23);
    /* a syntax error in the middle: the server cannot prepare it, so it fails in place */
    static const char *const syntax[3] = {"INSERT INTO wk_pipe_t VALUES (3)", "SELEC 1",
                                          "INSERT INTO wk_pipe_t VALUES (4)"};
    CHECK_STATUS(run_batch(syntax, 3, states, sqlstates), WK_ERR_SERVER);
    CHECK(states[0] == WK_PQ_STMT_OK && states[1] == WK_PQ_STMT_FAILED &&
          states[2] == WK_PQ_STMT_ABORTED);
    CHECK(strcmp(sqlstates[1], "42601") == 0);
    CHECK_EQ(pg_test_count(conn, "SELECT count(*) FROM wk_pipe_t"), 2);
    /* a table the batch creates: its statements cannot be prepared before, they run in place */
    static const char *const create[4] = {
        "DROP TABLE IF EXISTS wk_pipe_new", "CREATE TABLE wk_pipe_new (a int, b text)",
        "INSERT INTO wk_pipe_new VALUES (1, 'x'), (2, 'y')", "SELECT count(*) FROM wk_pipe_new"};
    CHECK_STATUS(run_batch(create, 4, states, sqlstates), WK_OK);
    CHECK_EQ(pg_test_count(conn, "SELECT count(*) FROM wk_pipe_new"), 2);
    /* a commit that fails (a deferred constraint) fails the batch though every statement ran */
    CHECK(pg_test_exec(conn, "DROP TABLE IF EXISTS wk_pipe_d; CREATE TABLE wk_pipe_d (id int UNIQUE "
              "DEFERRABLE INITIALLY DEFERRED)"));
    static const char *const deferred[2] = {"INSERT INTO wk_pipe_d VALUES (1)",
                                            "INSERT INTO wk_pipe_d VALUES (1)"};
    CHECK_STATUS(run_batch(deferred, 2, states, sqlstates), WK_ERR_SERVER);
    CHECK(states[0] == WK_PQ_STMT_OK && states[1] == WK_PQ_STMT_OK);
    CHECK(strcmp(wk_pq_last_error(conn)->sqlstate, "23505") == 0);
    CHECK_EQ(pg_test_count(conn, "SELECT count(*) FROM wk_pipe_d"), 0);
    /* results of a wk_pq_send still unread: the pipeline refuses to start, sends nothing */
    CHECK_STATUS(wk_pq_send(conn, "SELECT 1", NULL, 0, 0, &err), WK_OK);
    static const char *const one[1] = {"INSERT INTO wk_pipe_t VALUES (98)"};
    CHECK_STATUS(run_batch(one, 1, states, sqlstates), WK_ERR_STATE);
    CHECK(states[0] == WK_PQ_STMT_UNKNOWN);
    while (wk_pq_next(conn, &res, &err) != WK_ERR_EOF) {
        PQclear(res);
    }
    CHECK_EQ(pg_test_count(conn, "SELECT count(*) FROM wk_pipe_t WHERE id = 98"), 0);
    /* an empty pipeline is fine, and one discarded unsent runs nothing */
    CHECK_STATUS(run_batch(NULL, 0, states, sqlstates), WK_OK);
    CHECK_STATUS(wk_pq_pipeline_begin(conn, &p, &err), WK_OK);
    CHECK_STATUS(wk_pq_pipeline_add(p, "INSERT INTO wk_pipe_t VALUES (99)", NULL, 0, &err),
                 WK_OK);
    wk_pq_pipeline_discard(p);
    CHECK_EQ(pg_test_count(conn, "SELECT count(*) FROM wk_pipe_t WHERE id = 99"), 0);
    CHECK(pg_test_exec(conn, "DROP TABLE wk_pipe_t; DROP TABLE wk_pipe_new; DROP TABLE wk_pipe_d"));
}

static long server_statements(void)
{
    return pg_test_count(conn, "SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'wk\\_s%'");
}

/* A batch of `reps` rounds over statements "SELECT $1::int4 + k" for k in [k0, k0 + nk), each
 * result checked. Returns the number of wrong or failed results. */
static int distinct_batch(int k0, int nk, int reps)
{
    wk_pq_pipeline *p = NULL;
    wk_error err = {0};
    if (wk_pq_pipeline_begin(conn, &p, &err) != WK_OK) {
        return 1000;
    }
    int32_t x = 1000;
    wk_pq_param prm = {WK_PG_KIND_I32, &x, 0};
    for (int r = 0; r < reps; r++) {
        for (int k = k0; k < k0 + nk; k++) {
            char sql[64];
            snprintf(sql, sizeof sql, "SELECT $1::int4 + %d AS v", k);
            if (wk_pq_pipeline_add(p, sql, &prm, 1, &err) != WK_OK) {
                wk_pq_pipeline_discard(p);
                return 1000;
            }
        }
    }
    int wrong = 0;
    wk_pq_stmt_result r;
    while (wk_pq_pipeline_next(p, &r, &err) == WK_OK) {
        int k = k0 + (int)(r.index % (size_t)nk);
        wk_pg_plan *plan = NULL;
        int32_t v = 0;
        wk_pg_kind kind = WK_PG_KIND_I32;
        if (r.state != WK_PQ_STMT_OK ||
            wk_pq_plan(conn, r.res, &kind, NULL, &plan, &err) != WK_OK ||
            wk_pq_decode_row(plan, r.res, 0, &v, NULL, NULL, &err) != WK_OK || v != 1000 + k) {
            wrong++;
        }
        wk_pg_plan_free(plan);
    }
    return wk_pq_pipeline_end(p, &err) == WK_OK ? wrong : wrong + 1;
}

WK_TEST(test_pg_pipeline_prepared_statements_are_cached_by_text_and_evicted_at_the_bound)
{
    NEED_CONN();
    /* a fresh connection: its own cache and server session */
    wk_pq_conn *saved = conn;
    conn = NULL;
    CHECK(pg_test_connect(&conn) != NULL);
    wk_error err = {0};
    CHECK_STATUS(wk_pq_set_stmt_cache_capacity(conn, 4097, &err), WK_ERR_LIMIT);
    CHECK_STATUS(wk_pq_set_stmt_cache_capacity(conn, 4, &err), WK_OK);
    wk_pq_stmt_cache_stats s;
    /* 3 statements, 10 times each: prepared once each, in one round trip before the batch */
    CHECK_EQ(distinct_batch(0, 3, 10), 0);
    wk_pq_get_stmt_cache_stats(conn, &s);
    CHECK_EQ(s.misses, 3u);
    CHECK_EQ(s.hits, 0u);
    CHECK_EQ(s.size, 3u);
    CHECK_EQ(s.capacity, 4u);
    CHECK_EQ(server_statements(), 3);
    /* again: every statement a hit */
    CHECK_EQ(distinct_batch(0, 3, 10), 0);
    wk_pq_get_stmt_cache_stats(conn, &s);
    CHECK_EQ(s.hits, 30u);
    CHECK_EQ(s.misses, 3u);
    /* 3 new ones: the cache is full at 4, the two least recently used make room, and their
     * DEALLOCATEs follow the batch */
    CHECK_EQ(distinct_batch(10, 3, 2), 0);
    wk_pq_get_stmt_cache_stats(conn, &s);
    CHECK_EQ(s.misses, 6u);
    CHECK_EQ(s.evictions, 2u);
    CHECK_EQ(s.size, 4u);
    CHECK_EQ(server_statements(), 4);
    /* more distinct statements in one batch than the cache holds: the extra ones go
     * unprepared, every result still right */
    CHECK_EQ(distinct_batch(20, 7, 3), 0);
    wk_pq_get_stmt_cache_stats(conn, &s);
    CHECK_EQ(s.size, 4u);
    CHECK_EQ(server_statements(), 4);
    /* a statement deallocated behind the cache's back fails with 26000 once, then is
     * prepared again */
    CHECK(pg_test_exec(conn, "DEALLOCATE ALL"));
    CHECK_EQ(distinct_batch(20, 1, 1), 2); /* the statement, and the batch */
    CHECK(strcmp(wk_pq_last_error(conn)->sqlstate, "26000") == 0);
    CHECK_EQ(distinct_batch(20, 1, 1), 0);
    /* capacity 0: nothing prepared, the server holds none once the next batch has run */
    CHECK_STATUS(wk_pq_set_stmt_cache_capacity(conn, 0, &err), WK_OK);
    CHECK_EQ(distinct_batch(0, 3, 2), 0);
    wk_pq_get_stmt_cache_stats(conn, &s);
    CHECK_EQ(s.size, 0u);
    CHECK_EQ(server_statements(), 0);
    wk_pq_conn_free(conn);
    conn = saved;
}

WK_TEST(test_pg_pipeline_a_statement_past_the_deadline_is_cancelled_and_the_rest_aborted)
{
    NEED_CONN();
    wk_error err = {0};
    CHECK_STATUS(wk_pq_set_timeout(conn, 1000, &err), WK_OK);
    CHECK(pg_test_exec(conn, "SET statement_timeout = 0")); /* the client's deadline alone */
    static const char *const sqls[4] = {"SELECT 1", "SELECT pg_sleep(30)", "SELECT 3",
                                        "SELECT 4"};
    wk_pq_stmt_state states[4];
    char sqlstates[4][6];
    double t0 = wk_test_now_s();
    wk_status st = run_batch(sqls, 4, states, sqlstates);
    double took = wk_test_now_s() - t0;
    printf("    batch ended in %.2f s: %s (%s)\n", took, wk_status_str(st),
           wk_pq_conn_message(conn));
    CHECK_STATUS(st, WK_ERR_IO);
    CHECK(states[0] == WK_PQ_STMT_OK && states[1] == WK_PQ_STMT_FAILED &&
          states[2] == WK_PQ_STMT_ABORTED && states[3] == WK_PQ_STMT_ABORTED);
    CHECK(strcmp(sqlstates[1], "57014") == 0); /* canceling statement due to user request */
    CHECK_MSG(took < 1.0 + 1.0 + 1.0, "took %.2f s", took);
    PGresult *res = NULL;
    CHECK_STATUS(wk_pq_exec(conn, "SELECT 1", NULL, 0, &res, &err), WK_OK);
    PQclear(res);
    CHECK_STATUS(wk_pq_set_timeout(conn, 0, &err), WK_OK);
}

WK_TEST(test_pg_pipeline_a_batch_larger_than_the_socket_buffers_both_ways_completes)
{
    NEED_CONN();
    /* 20,000 statements with a 2 KB parameter each and 2 KB back each: 40 MB each way, far
     * past what the sockets buffer, so the server writes results while the client is still
     * sending; a client that only wrote, then read, would deadlock here */
    enum { N = 20000, LEN = 2048 };
    char *big = malloc(LEN);
    memset(big, 'x', LEN);
    wk_slice v = {big, LEN};
    wk_pq_pipeline *p = NULL;
    wk_error err = {0};
    CHECK_STATUS(wk_pq_set_timeout(conn, 20000, &err), WK_OK);
    CHECK_STATUS(wk_pq_pipeline_begin(conn, &p, &err), WK_OK);
    for (int32_t i = 0; i < N; i++) {
        wk_pq_param prm[2] = {{WK_PG_KIND_STR, &v, 0}, {WK_PG_KIND_I32, &i, 0}};
        CHECK_STATUS(wk_pq_pipeline_add(p, "SELECT $2::int4 AS i, $1::text AS s", prm, 2, &err),
                     WK_OK);
    }
    /* more parameters than PostgreSQL takes are refused before anything is encoded */
    CHECK_STATUS(wk_pq_pipeline_add(p, "SELECT 1", NULL, 65536, &err), WK_ERR_LIMIT);
    CHECK_STATUS(wk_pq_pipeline_add(p, "SELECT $1", NULL, 1, &err), WK_ERR_ARG);
    CHECK_STATUS(wk_pq_pipeline_add(p, NULL, NULL, 0, &err), WK_ERR_ARG);
    CHECK_EQ(wk_pq_pipeline_count(p), (size_t)N);
    size_t got = 0, bytes = 0;
    wk_pq_stmt_result r;
    while (wk_pq_pipeline_next(p, &r, &err) == WK_OK) {
        if (r.state == WK_PQ_STMT_OK && PQntuples(r.res) == 1 &&
            PQgetlength(r.res, 0, 1) == LEN) {
            int32_t i = 0;
            memcpy(&i, PQgetvalue(r.res, 0, 0), 4);
            got += (size_t)ntohl((uint32_t)i) == r.index;
            bytes += (size_t)PQgetlength(r.res, 0, 1);
        }
    }
    CHECK_STATUS(wk_pq_pipeline_end(p, &err), WK_OK);
    CHECK_EQ(got, (size_t)N);
    CHECK_EQ(bytes, (size_t)N * LEN);
    CHECK_STATUS(wk_pq_set_timeout(conn, 0, &err), WK_OK);
    free(big);
}

WK_TEST(test_pg_pipeline_zz_free_connection)
{
    wk_pq_conn_free(conn);
    conn = NULL;
}
