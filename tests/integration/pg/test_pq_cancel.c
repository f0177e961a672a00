/*
 * The cancel every wirekit-pq path shares (wk__pq_cancel_begin/tick/wait in addons/pq/pq_wait.c:
 * the blocking wait, the non-blocking query, the pipeline and giving a query up all cancel
 * through it) against a real PostgreSQL 15 (WK_PG_DSN; skipped when unset):
 * - a cancel request that reaches the backend before the query does is ignored by the
 *   server; here the first request goes to an idle backend on purpose, the query follows, and
 *   the repeated request must end it with 57014 within the grace;
 * - a backend that answers neither the query nor the cancel (stopped with SIGSTOP, when the
 *   test may signal the server's processes): the wait ends when the grace does, having asked
 *   again every WK__PQ_CANCEL_AGAIN_MS, and not before;
 * - a client paused after the cancel (descheduled on a loaded machine) until past the grace,
 *   with the server's answer waiting in its socket, takes the answer: the grace ends only
 *   after a look at the socket found nothing (a fixed grace gave the connection up).
 * How each path behaves at its deadline is tested with the path (test_pg_server,
 * test_pg_async, test_pg_pipeline, test_pg_copy).
 */
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pq/pq_internal.h"
#include "pg_test_conn.h"
#include "wirekit/pq.h"
#include "wk_test.h"

static wk_pq_conn *conn;

/* wk__pq_cancel_wait's wait: the query's last result into *arg (PGresult **). */
static bool query_ended(wk_pq_conn *c, int64_t until, void *arg)
{
    PGresult **last = arg;
    for (;;) {
        if (!wk__pq_await_ready(c, until)) {
            return false;
        }
        PGresult *r = PQgetResult(c->pg);
        if (r == NULL) {
            return true;
        }
        PQclear(*last);
        *last = r;
    }
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

WK_TEST(test_pq_cancel_a_request_that_reached_the_idle_backend_is_repeated_for_the_query)
{
    NEED_CONN();
    CHECK(pg_test_exec(conn, "SET statement_timeout = 0"));
    for (int round = 0; round < 3; round++) {
        wk__pq_cancelling k = {0};
        wk__pq_cancel_begin(conn, &k); /* the backend is idle: the server drops this one */
        CHECK_EQ(k.requests, 1u);
        /* the request goes out on a helper thread: once the server has closed its cancel
         * connection it has signalled the backend, which takes the signal before the query
         * arrives */
        for (int i = 0; i < 2000 && wk__pq_cancel_out(conn); i++) {
            sleep_ms(5);
        }
        CHECK(!wk__pq_cancel_out(conn));
        sleep_ms(50);
        CHECK(PQsendQuery(conn->pg, "SELECT pg_sleep(30)") == 1);
        int64_t t0 = wk__pq_now_ms();
        PGresult *last = NULL;
        bool ended = wk__pq_cancel_wait(conn, &k, query_ended, &last);
        int64_t took = wk__pq_now_ms() - t0;
        printf("    round %d: %s after %lld ms and %u requests\n", round,
               ended ? "cancelled" : "NOT cancelled", (long long)took, k.requests);
        CHECK(ended);
        CHECK(k.requests >= 2); /* the first was ignored: only a repeat can have ended it */
        CHECK(last != NULL && PQresultStatus(last) == PGRES_FATAL_ERROR);
        const char *state = last != NULL ? PQresultErrorField(last, PG_DIAG_SQLSTATE) : NULL;
        CHECK(state != NULL && strcmp(state, "57014") == 0);
        PQclear(last);
        CHECK_EQ(pg_test_count(conn, "SELECT 7"), 7); /* the connection serves again */
    }
}

WK_TEST(test_pq_cancel_a_backend_that_never_answers_is_asked_again_until_the_grace_ends)
{
    NEED_CONN();
    long pid = pg_test_count(conn, "SELECT pg_backend_pid()");
    CHECK(pid > 0);
    CHECK(pg_test_exec(conn, "SET statement_timeout = 0"));
    CHECK(PQsendQuery(conn->pg, "SELECT pg_sleep(2)") == 1);
    sleep_ms(100); /* the backend sleeps in the query */
    if (kill((pid_t)pid, SIGSTOP) != 0) {
        PGresult *r;
        while ((r = PQgetResult(conn->pg)) != NULL) {
            PQclear(r);
        }
        SKIP("cannot stop the server's backend (not allowed to signal it)");
    }
    wk__pq_cancelling k = {0};
    PGresult *last = NULL;
    int64_t t0 = wk__pq_now_ms();
    bool ended = wk__pq_cancel_wait(conn, &k, query_ended, &last);
    int64_t took = wk__pq_now_ms() - t0;
    kill((pid_t)pid, SIGCONT);
    printf("    gave up after %lld ms and %u requests\n", (long long)took, k.requests);
    CHECK(!ended);
    CHECK(last == NULL);
    CHECK(took >= WK__PQ_CANCEL_GRACE_MS);
    CHECK_MSG(took < WK__PQ_CANCEL_GRACE_MS + 1500, "took %lld ms", (long long)took);
    /* one request at the start, then one each time WK__PQ_CANCEL_AGAIN_MS passed: asked
     * again at least once, never more often than that period allows (a loaded machine skips
     * some: one still out when the next is due is not doubled) */
    unsigned most = WK__PQ_CANCEL_GRACE_MS / WK__PQ_CANCEL_AGAIN_MS;
    CHECK_MSG(k.requests >= 2 && k.requests <= most + 1, "%u requests", k.requests);
    /* the backend goes on: the query ends (cancelled now that the backend runs) */
    PGresult *r;
    while ((r = PQgetResult(conn->pg)) != NULL) {
        PQclear(r);
    }
    CHECK_EQ(pg_test_count(conn, "SELECT 8"), 8);
}

WK_TEST(test_pq_cancel_a_client_paused_past_the_grace_still_takes_the_answer)
{
    NEED_CONN();
    long pid = pg_test_count(conn, "SELECT pg_backend_pid()");
    CHECK(pid > 0);
    CHECK(pg_test_exec(conn, "SET statement_timeout = 0"));
    wk_pq_conn *watcher = NULL;
    CHECK_OK(wk_pq_connect(getenv("WK_PG_DSN"), NULL, &watcher, NULL));
    char sql[160];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM pg_stat_activity WHERE pid = %ld AND state = 'active'", pid);
    CHECK(PQsendQuery(conn->pg, "SELECT pg_sleep(30)") == 1);
    for (int i = 0; i < 400 && pg_test_count(watcher, sql) != 1; i++) {
        sleep_ms(25);
    }
    CHECK_EQ(pg_test_count(watcher, sql), 1); /* the backend sleeps in the query */
    wk_pq_conn_free(watcher);
    wk__pq_cancelling k = {0};
    int64_t t0 = wk__pq_now_ms();
    wk__pq_cancel_begin(conn, &k);
    /* the client is paused: until the answer waits in its socket and the grace is over */
    struct pollfd p = {PQsocket(conn->pg), POLLIN, 0};
    for (int i = 0; i < 200 && poll(&p, 1, 100) == 0; i++) {
    }
    CHECK((p.revents & POLLIN) != 0);
    int64_t paused = wk__pq_now_ms() - t0;
    if (paused < WK__PQ_CANCEL_GRACE_MS + 200) {
        sleep_ms(WK__PQ_CANCEL_GRACE_MS + 200 - paused);
    }
    PGresult *last = NULL;
    bool ended = wk__pq_cancel_wait(conn, &k, query_ended, &last);
    printf("    paused %lld ms: %s\n", (long long)(wk__pq_now_ms() - t0),
           ended ? "took the answer" : "gave up");
    CHECK(ended);
    const char *state = last != NULL ? PQresultErrorField(last, PG_DIAG_SQLSTATE) : NULL;
    CHECK(state != NULL && strcmp(state, "57014") == 0);
    PQclear(last);
    if (!ended) {
        PGresult *r;
        while ((r = PQgetResult(conn->pg)) != NULL) {
            PQclear(r);
        }
    }
    CHECK_EQ(pg_test_count(conn, "SELECT 9"), 9);
}

WK_TEST(test_pq_cancel_zz_close_the_connection)
{
    wk_pq_conn_free(conn);
    conn = NULL;
}
