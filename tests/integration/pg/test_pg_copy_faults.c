/*
 * Binary COPY out when the server dies: a PRIVATE PostgreSQL (initdb in a temp dir, a Unix
 * socket only, started and stopped by this test; skipped when initdb is missing) is stopped
 * with `pg_ctl stop -m immediate` while wk_pq_copy_out streams a slow query. The copy must
 * end with an honest error (the server's shutdown report or a lost connection), report only
 * rows that were handed to the row function, stay within the connection's deadline, and
 * leak nothing (run under ASan). Then, restarted, it is stopped again while wk_pq_copy_in
 * streams rows: the copy fails, reports 0 rows written, and the table, once the server is
 * back, holds none of them. The shared test server is never touched.
 */
#include <stdlib.h>
#include <sys/wait.h>

#include "pg_private.h"
#include "wirekit/pq.h"
#include "wk_test.h"

WK_TEST(test_pg_copy_faults_server_stopped_during_copy_out_and_copy_in)
{
    int port = 40000 + (int)(getpid() % 20000);
    char dsn[512];
    NEED_PRIVATE_SERVER("pgcopy-fault", port, dsn);
    wk_pq_conn *conn = NULL;
    wk_error err = {0};
    wk_status st = wk_pq_connect_timeout(dsn, NULL, 5000, &conn, &err);
    if (st != WK_OK) {
        wk_pq_conn_free(conn);
        pg_private_remove();
        CHECK_MSG(false, "connect to the private server: %s", err.msg);
    }
    /* a stop from another process once rows are flowing */
    pid_t child = pg_private_stop_later(400000);
    pg_counter c = {0, 0};
    uint64_t rows = 0;
    wk_pg_kind kinds[1] = {WK_PG_KIND_I64};
    double t0 = wk_test_now_s();
    /* 1,000,000 rows at about 10 per millisecond: far longer than the 400 ms before the stop */
    st = wk_pq_copy_out(conn,
                        "SELECT i::int8 AS id FROM generate_series(1, 1000000) i "
                        "WHERE i % 100 <> 0 OR pg_sleep(0.01) IS NOT NULL",
                        kinds, NULL, pg_count_row, &c, &rows, &err);
    double took = wk_test_now_s() - t0;
    pg_stopped stop;
    pg_private_stopped(child, conn, &stop);
    printf("    stopped after %llu rows, %.2f s: %s (%s)\n", (unsigned long long)rows, took,
           wk_status_str(st), stop.msg);
    bool honest = pg_private_stop_honest(st, &stop);
    bool within = took < 5.0 + 2.0;
    bool counted = rows == c.rows && rows > 0 && rows < 1000000u &&
                   c.last_id == (int64_t)rows; /* every row, in order */
    /* the connection reports the loss on the next call, promptly */
    PGresult *res = NULL;
    wk_status next = wk_pq_exec(conn, "SELECT 1", NULL, 0, &res, &err);
    PQclear(res);
    wk_pq_conn_free(conn);
    conn = NULL;
    /* COPY in: the server is stopped while rows stream in; nothing may be reported written */
    bool restarted = pg_private_restart(port);
    wk_status in_st = WK_OK, end_st = WK_OK;
    uint64_t in_rows = 99, sent = 0;
    long after = -1;
    double in_took = 0;
    int wst2 = 0;
    if (restarted && wk_pq_connect_timeout(dsn, NULL, 5000, &conn, &err) == WK_OK) {
        PGresult *cr = PQexec(wk_pq_pgconn(conn), "CREATE TABLE t (id int8, s text)");
        PQclear(cr);
        static const char *const cols[2] = {"id", "s"};
        static const wk_pg_kind ik[2] = {WK_PG_KIND_I64, WK_PG_KIND_TEXT};
        wk_pq_copy_in *in = NULL;
        in_st = wk_pq_copy_in_start(conn, "t", cols, ik, 2, &in, &err);
        if (in_st == WK_OK) {
            pid_t child2 = pg_private_stop_later(300000);
            t0 = wk_test_now_s();
            wk_slice txt = {"some text to make the rows longer than a few bytes", 50};
            for (int64_t id = 1; in_st == WK_OK && wk_test_now_s() - t0 < 20.0; id++) {
                const void *vals[2] = {&id, &txt};
                in_st = wk_pq_copy_in_row(in, vals, &err);
                sent += in_st == WK_OK;
                if (id % 4096 == 0) {
                    usleep(1000); /* about 4 MB/s: the stop lands mid-stream */
                }
            }
            end_st = wk_pq_copy_in_end(in, NULL, &in_rows, &err);
            in_took = wk_test_now_s() - t0;
            waitpid(child2, &wst2, 0);
        }
        wk_pq_conn_free(conn);
        conn = NULL;
        /* back up: the table holds no row of the broken COPY */
        if (pg_private_restart(port) && wk_pq_connect(dsn, NULL, &conn, &err) == WK_OK) {
            PGresult *n = PQexec(wk_pq_pgconn(conn), "SELECT count(*) FROM t");
            if (PQresultStatus(n) == PGRES_TUPLES_OK) {
                after = strtol(PQgetvalue(n, 0, 0), NULL, 10);
            }
            PQclear(n);
        }
        wk_pq_conn_free(conn);
    }
    printf("    copy in: %llu rows sent, stopped in %.2f s: row %s, end %s, reported %llu\n",
           (unsigned long long)sent, in_took, wk_status_str(in_st), wk_status_str(end_st),
           (unsigned long long)in_rows);
    pg_private_remove();
    CHECK_MSG(WIFEXITED(stop.wait_status) && WEXITSTATUS(stop.wait_status) == 0,
              "pg_ctl stop failed");
    CHECK(restarted);
    CHECK(sent > 0);
    CHECK_MSG(in_st != WK_OK || end_st != WK_OK, "the broken COPY in reported success");
    /* a server gone mid-COPY is a lost connection, not a timeout or an I/O error */
    wk_status in_fail = in_st != WK_OK ? in_st : end_st;
    CHECK_MSG(in_fail == WK_ERR_CONNECT, "COPY in ended with %s", wk_status_str(in_fail));
    CHECK_EQ(in_rows, 0u);
    CHECK_EQ(after, 0);
    CHECK_MSG(in_took < 20.0 + 7.0, "copy in took %.2f s", in_took);
    CHECK_MSG(honest, "status %s, sqlstate %s: %s", wk_status_str(st), stop.sqlstate,
              stop.msg);
    CHECK_MSG(stop.msg[0] != '\0', "no message");
    CHECK_MSG(within, "the copy took %.2f s past a 5 s deadline", took);
    CHECK_MSG(counted, "rows %llu, handed over %llu, last id %lld", (unsigned long long)rows,
              (unsigned long long)c.rows, (long long)c.last_id);
    CHECK(next != WK_OK);
}
