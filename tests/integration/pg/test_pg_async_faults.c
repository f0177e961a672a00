/*
 * A non-blocking query when the server dies: a PRIVATE PostgreSQL (pg_private.c; skipped
 * when initdb is missing) is stopped with `pg_ctl stop -m immediate` while a poll() loop
 * drives a slow query through wk_pq_async_step. The query must end with an honest error (a
 * lost connection, or the server's shutdown report), every row handed over before stays
 * counted and in order, the loop never hangs (the deadline is far away: the end comes from
 * the socket), the next query fails promptly, and nothing leaks (run under ASan).
 */
#include <poll.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "pg_private.h"
#include "wirekit/pq.h"
#include "wk_test.h"

WK_TEST(test_pg_async_faults_server_stopped_during_a_non_blocking_query)
{
    if (!pg_private_available()) {
        SKIP("no PostgreSQL 15 initdb in /usr/lib/postgresql/15/bin");
    }
    int port = 40000 + (int)((getpid() + 7919) % 20000);
    if (!pg_private_start("pgasync-fault", port)) {
        pg_private_remove();
        CHECK_MSG(false, "cannot start a private PostgreSQL in %s", pg_private_dir());
    }
    char dsn[512];
    pg_private_dsn(dsn, sizeof dsn, port);
    wk_pq_conn *conn = NULL;
    wk_error err = {0};
    wk_status st = wk_pq_connect(dsn, NULL, &conn, &err);
    if (st != WK_OK) {
        wk_pq_conn_free(conn);
        pg_private_remove();
        CHECK_MSG(false, "connect to the private server: %s", err.msg);
    }
    static const wk_pg_kind kinds[1] = {WK_PG_KIND_I64};
    pg_counter c = {0, 0};
    wk_pq_row_handler h = {kinds, NULL, pg_count_row, &c};
    wk_pq_async *q = NULL;
    /* about 10 rows per millisecond for far longer than the 400 ms before the stop */
    st = wk_pq_async_start(conn,
                           "SELECT i::int8 AS id FROM generate_series(1, 1000000) i "
                           "WHERE i % 100 <> 0 OR pg_sleep(0.01) IS NOT NULL",
                           NULL, 0, &h, &q, &err);
    pid_t child = pg_private_stop_later(400000);
    wk_pq_async_set_timeout(q, 60000); /* far away: the end must come from the socket */
    double t0 = wk_test_now_s();
    int steps = 0;
    while (st == WK_OK || st == WK_ERR_AGAIN) {
        unsigned want = wk_pq_async_wants(q);
        struct pollfd p = {wk_pq_async_socket(q),
                           (short)(POLLIN | ((want & WK_PQ_WANT_WRITE) ? POLLOUT : 0)), 0};
        (void)poll(&p, 1, 1000);
        st = wk_pq_async_step(q, &err);
        steps++;
        if (st != WK_ERR_AGAIN || wk_test_now_s() - t0 > 30) {
            break;
        }
    }
    double took = wk_test_now_s() - t0;
    pg_stopped stop;
    pg_private_stopped(child, conn, &stop);
    uint64_t rows = wk_pq_async_rows(q);
    printf("    stopped after %llu rows, %d steps, %.2f s: %s (%s)\n", (unsigned long long)rows,
           steps, took, wk_status_str(st), stop.msg);
    wk_pq_async_free(q);
    /* the next query fails at once */
    double t1 = wk_test_now_s();
    wk_status next = wk_pq_async_start(conn, "SELECT 1", NULL, 0, NULL, &q, &err);
    if (next == WK_OK) {
        do {
            next = wk_pq_async_step(q, &err);
        } while (next == WK_ERR_AGAIN && wk_test_now_s() - t1 < 5);
        wk_pq_async_free(q);
    }
    double next_took = wk_test_now_s() - t1;
    wk_pq_conn_free(conn);
    pg_private_remove();
    CHECK_MSG(WIFEXITED(stop.wait_status) && WEXITSTATUS(stop.wait_status) == 0,
              "pg_ctl stop failed");
    bool honest = pg_private_stop_honest(st, &stop);
    CHECK_MSG(honest, "status %s, sqlstate %s: %s", wk_status_str(st), stop.sqlstate, stop.msg);
    CHECK_MSG(stop.msg[0] != '\0', "no message");
    CHECK_MSG(took < 5.0, "the loop took %.2f s to see the server gone", took);
    CHECK_MSG(rows == c.rows && rows > 0 && rows < 1000000u && c.last_id == (int64_t)rows,
              "rows %llu, handed over %llu, last id %lld", (unsigned long long)rows,
              (unsigned long long)c.rows, (long long)c.last_id);
    CHECK_EQ(next, WK_ERR_CONNECT);
    CHECK_MSG(next_took < 1.0, "the next query took %.2f s to fail", next_took);
}
