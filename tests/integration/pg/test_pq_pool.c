/*
 * The connection pool (wk_pq_pool_*) on the shared server (WK_PG_DSN): checkout up to N and
 * a deadline past it, a terminated backend replaced at checkout, a connection given back
 * inside a transaction closed, a connection idle past health_check_ms checked by a round
 * trip, a first connect that fails reported by wk_pq_pool_new. The restart and termination
 * storm with threads is test_pq_pool_faults (a private server).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pg_test_conn.h"
#include "wirekit/pq.h"
#include "wk_test.h"

static wk_pq_conn *conn; /* the test's own connection, for terminating the pool's backends */

static wk_pq_pool *new_pool(size_t size, uint32_t health_ms)
{
    wk_pq_pool_opts o = {0};
    o.dsn = getenv("WK_PG_DSN");
    o.size = size;
    o.health_check_ms = health_ms;
    wk_pq_pool *p = NULL;
    wk_error err = {0};
    if (wk_pq_pool_new(&o, &p, &err) != WK_OK) {
        fprintf(stderr, "pool: %s\n", err.msg);
    }
    return p;
}

/* The backend's answer to SELECT 1 on `c` (false on any failure). */
static bool answers(wk_pq_conn *c)
{
    PGresult *r = NULL;
    wk_status st = wk_pq_exec(c, "SELECT 1", NULL, 0, &r, NULL);
    bool ok = st == WK_OK && PQntuples(r) == 1;
    PQclear(r);
    return ok;
}

WK_TEST(test_pq_pool_hands_out_n_connections_then_times_out_until_one_is_given_back)
{
    NEED_CONN();
    wk_pq_pool *p = new_pool(2, 0);
    CHECK(p != NULL);
    wk_pq_conn *a = NULL, *b = NULL, *c = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pq_pool_acquire(p, 0, &a, &err));
    CHECK_OK(wk_pq_pool_acquire(p, 0, &b, &err));
    CHECK(a != b && answers(a) && answers(b));
    CHECK(PQbackendPID(wk_pq_pgconn(a)) != PQbackendPID(wk_pq_pgconn(b)));
    CHECK_STATUS(wk_pq_pool_acquire(p, 100, &c, &err), WK_ERR_IO);
    CHECK(c == NULL);
    wk_pq_pool_release(p, b);
    CHECK_OK(wk_pq_pool_acquire(p, 100, &c, &err));
    CHECK(c == b); /* the same connection, kept */
    wk_pq_pool_stats s;
    wk_pq_pool_get_stats(p, &s);
    CHECK_EQ(s.size, 2);
    CHECK_EQ(s.open, 2);
    CHECK_EQ(s.busy, 2);
    CHECK_EQ(s.connects, 2);
    CHECK_EQ(s.waits, 1);
    wk_pq_pool_release(p, a);
    wk_pq_pool_release(p, c);
    wk_pq_pool_free(p);
}

WK_TEST(test_pq_pool_replaces_a_terminated_backend_at_checkout)
{
    NEED_CONN();
    wk_pq_pool *p = new_pool(1, 0);
    CHECK(p != NULL);
    wk_pq_conn *c = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pq_pool_acquire(p, 0, &c, &err));
    int pid = PQbackendPID(wk_pq_pgconn(c));
    wk_pq_pool_release(p, c);
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%d, 10000)", pid);
    CHECK(pg_test_exec(conn, sql)); /* waits (up to 10 s) until the backend is gone */
    CHECK_OK(wk_pq_pool_acquire(p, 0, &c, &err));
    CHECK(PQbackendPID(wk_pq_pgconn(c)) != pid);
    CHECK(answers(c)); /* the first request after the kill succeeds */
    wk_pq_pool_release(p, c);
    wk_pq_pool_stats s;
    wk_pq_pool_get_stats(p, &s);
    CHECK_EQ(s.discarded, 1);
    CHECK_EQ(s.connects, 2);
    CHECK_EQ(s.open, 1);
    wk_pq_pool_free(p);
}

WK_TEST(test_pq_pool_closes_a_connection_given_back_inside_a_transaction)
{
    NEED_CONN();
    wk_pq_pool *p = new_pool(1, 0);
    CHECK(p != NULL);
    wk_pq_conn *c = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pq_pool_acquire(p, 0, &c, &err));
    int pid = PQbackendPID(wk_pq_pgconn(c));
    PGresult *r = NULL;
    CHECK_OK(wk_pq_exec(c, "BEGIN", NULL, 0, &r, &err));
    PQclear(r);
    wk_pq_pool_release(p, c); /* an open transaction must not reach the next user */
    CHECK_OK(wk_pq_pool_acquire(p, 0, &c, &err));
    CHECK(PQbackendPID(wk_pq_pgconn(c)) != pid);
    CHECK(PQtransactionStatus(wk_pq_pgconn(c)) == PQTRANS_IDLE);
    wk_pq_pool_release(p, c);
    wk_pq_pool_stats s;
    wk_pq_pool_get_stats(p, &s);
    CHECK_EQ(s.discarded, 1);
    wk_pq_pool_free(p);
}

WK_TEST(test_pq_pool_checks_a_connection_idle_past_the_health_interval_by_a_round_trip)
{
    NEED_CONN();
    wk_pq_pool *p = new_pool(1, 50);
    CHECK(p != NULL);
    wk_pq_conn *c = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pq_pool_acquire(p, 0, &c, &err));
    wk_pq_pool_release(p, c);
    CHECK_OK(wk_pq_pool_acquire(p, 0, &c, &err)); /* idle < 50 ms: no round trip */
    wk_pq_pool_release(p, c);
    wk_pq_pool_stats s;
    wk_pq_pool_get_stats(p, &s);
    uint64_t before = s.health_checks;
    nanosleep(&(struct timespec){0, 120 * 1000 * 1000}, NULL);
    CHECK_OK(wk_pq_pool_acquire(p, 0, &c, &err));
    CHECK(answers(c));
    wk_pq_pool_release(p, c);
    wk_pq_pool_get_stats(p, &s);
    CHECK_EQ(s.health_checks, before + 1);
    CHECK_EQ(s.connects, 1);
    wk_pq_pool_free(p);
}

WK_TEST(test_pq_pool_reports_a_first_connect_that_fails)
{
    wk_pq_pool_opts o = {0};
    o.dsn = "host=127.0.0.1 port=1 user=nobody"; /* nothing listens on port 1 */
    o.size = 2;
    wk_pq_pool *p = NULL;
    wk_error err = {0};
    CHECK_STATUS(wk_pq_pool_new(&o, &p, &err), WK_ERR_CONNECT);
    CHECK(p == NULL);
    o.size = 2000;
    CHECK_STATUS(wk_pq_pool_new(&o, &p, &err), WK_ERR_LIMIT);
}
