/*
 * A pipeline when the server dies: a PRIVATE PostgreSQL (pg_private.h; skipped when initdb
 * is missing) is stopped with `pg_ctl stop -m immediate` while a batch of 4,000 inserts,
 * each sleeping a millisecond, runs. The batch must end with an honest error (a lost
 * connection) within the connection's deadline; the statements read back must be a run of
 * OK ones the server answered, then UNKNOWN ones (none OK after the first that is not, none
 * FAILED or ABORTED without a server report); and the table, once the server is back, must
 * hold none of the rows, since the batch's one transaction never committed. Then a batch on
 * a fresh connection works. Run under ASan it also proves nothing leaks on that path.
 */
#include <stdlib.h>
#include <sys/wait.h>

#include "pg_private.h"
#include "wirekit/pq.h"
#include "wk_test.h"

#define STMTS 4000

WK_TEST(test_pg_pipeline_faults_server_stopped_during_a_pipeline)
{
    int port = 40000 + (int)((getpid() + 7919) % 20000);
    char dsn[512];
    NEED_PRIVATE_SERVER("pgpipe-fault", port, dsn);
    wk_pq_conn *conn = NULL;
    wk_error err = {0};
    wk_status st = wk_pq_connect_timeout(dsn, NULL, 5000, &conn, &err);
    if (st == WK_OK) {
        PGresult *r = PQexec(wk_pq_pgconn(conn), "CREATE TABLE t (id int8)");
        st = PQresultStatus(r) == PGRES_COMMAND_OK ? WK_OK : WK_ERR_SERVER;
        PQclear(r);
    }
    if (st != WK_OK) {
        wk_pq_conn_free(conn);
        pg_private_remove();
        CHECK_MSG(false, "set-up on the private server: %s", err.msg);
    }
    wk_pq_pipeline *p = NULL;
    st = wk_pq_pipeline_begin(conn, &p, &err);
    for (int64_t i = 1; st == WK_OK && i <= STMTS; i++) {
        wk_pq_param prm = {WK_PG_KIND_I64, &i, 0};
        st = wk_pq_pipeline_add(p, "INSERT INTO t SELECT $1 FROM pg_sleep(0.001)", &prm, 1,
                                &err);
    }
    /* about 4.5 s of work: the stop lands well inside it */
    pid_t child = pg_private_stop_later(800000);
    double t0 = wk_test_now_s();
    size_t ok = 0, unknown = 0, other = 0, ok_after = 0, n = 0;
    wk_pq_stmt_result r;
    while (st == WK_OK && wk_pq_pipeline_next(p, &r, &err) == WK_OK) {
        if (r.state == WK_PQ_STMT_OK) {
            ok++;
            ok_after += unknown + other > 0;
        } else if (r.state == WK_PQ_STMT_UNKNOWN) {
            unknown++;
        } else {
            other++; /* a FAILED one must carry the server's report */
            if (r.state != WK_PQ_STMT_FAILED || r.error == NULL || r.error->sqlstate[0] == 0) {
                ok_after += 1000000;
            }
        }
        n++;
    }
    wk_status end = wk_pq_pipeline_end(p, &err);
    double took = wk_test_now_s() - t0;
    pg_stopped stop;
    pg_private_stopped(child, conn, &stop);
    printf("    %zu statements: %zu ok, %zu unknown, %zu other; %.2f s; end %s (%s)\n", n, ok,
           unknown, other, took, wk_status_str(end), stop.msg);
    /* the next call on the dead connection fails promptly */
    PGresult *res = NULL;
    wk_status next = wk_pq_exec(conn, "SELECT 1", NULL, 0, &res, &err);
    PQclear(res);
    wk_pq_conn_free(conn);
    conn = NULL;
    /* back up: nothing of the batch was committed, and a new batch works */
    long after = -1;
    wk_status again = WK_ERR_STATE;
    if (pg_private_restart(port) && wk_pq_connect(dsn, NULL, &conn, &err) == WK_OK) {
        PGresult *cnt = PQexec(wk_pq_pgconn(conn), "SELECT count(*) FROM t");
        if (PQresultStatus(cnt) == PGRES_TUPLES_OK) {
            after = strtol(PQgetvalue(cnt, 0, 0), NULL, 10);
        }
        PQclear(cnt);
        if (wk_pq_pipeline_begin(conn, &p, &err) == WK_OK) {
            int64_t one = 1;
            wk_pq_param prm = {WK_PG_KIND_I64, &one, 0};
            (void)wk_pq_pipeline_add(p, "INSERT INTO t VALUES ($1)", &prm, 1, &err);
            again = wk_pq_pipeline_end(p, &err);
        }
    }
    wk_pq_conn_free(conn);
    pg_private_remove();
    CHECK_MSG(WIFEXITED(stop.wait_status) && WEXITSTATUS(stop.wait_status) == 0,
              "pg_ctl stop failed");
    CHECK_EQ(st, WK_OK);
    CHECK_EQ(n, (size_t)STMTS);
    CHECK_MSG(end == WK_ERR_CONNECT || end == WK_ERR_SERVER, "end: %s", wk_status_str(end));
    CHECK_MSG(ok > 0 && ok < STMTS, "%zu ok", ok);
    CHECK_MSG(unknown > 0, "no statement left unanswered?");
    CHECK_MSG(ok_after == 0, "an OK after an unanswered one, or a failure without a report");
    CHECK_MSG(stop.msg[0] != '\0', "no message");
    CHECK_MSG(took < 5.0 + 2.0, "the pipeline took %.2f s past a 5 s deadline", took);
    CHECK(next != WK_OK);
    CHECK_EQ(after, 0);
    CHECK_EQ(again, WK_OK);
}
