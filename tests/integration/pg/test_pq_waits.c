/*
 * The waits of the libpq add-on after a deadline (issue 29, item 10), against the shared
 * PostgreSQL 15 (WK_PG_DSN; skipped when unset):
 * - the cancel's grace restarts while the server still sends: a row function that ignores
 *   the cancel (it catches query_canceled) and sends a 10 KB row every 0.1 s for 3 s after
 *   a 1 s deadline keeps its connection on the blocking query, the blocking pipeline and the
 *   driven pipeline (a fixed 1 s grace gave all three up, whatever the machine's speed);
 * - a cancel connection that the server accepts and never answers (a proxy in front of the
 *   real server forwards the query's connection and swallows every other) holds neither a
 *   blocking query nor a non-blocking one past the deadline plus the grace (PQcancel blocked
 *   in them forever before; an alarm fails the test instead of hanging it);
 * - the idle limit (wk_pq_limits.idle_ms, no deadline) ends the wait on a stopped backend
 *   (SIGSTOP, as test_pg_stalls stops its own backends) for the blocking pipeline, the
 *   driven pipeline and the non-blocking query, the event-loop connect to a server that
 *   never answers (wk_pq_connect_start_limits), and a pooled connection (the pool's
 *   idle_ms).
 * Every bound is far above what a loaded machine needs (limits of 1 to 1.5 s, bounds 15 s).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pg_stopped.h"
#include "pg_test_conn.h"
#include "wirekit/pq.h"
#include "wk_test.h"

static wk_pq_conn *conn; /* the watcher: finds and ends backends */

/* What every wait below must stay under. */
#define BOUND_S 15.0

/* ---- helpers -------------------------------------------------------------------------- */

/* Ends backend `pid` (a query the test left running). */
static void terminate(pid_t pid)
{
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%ld)::int", (long)pid);
    (void)pg_test_count(conn, sql);
}

/* Whether backend `pid` runs the test's pg_sleep(30) now. */
static bool is_active(pid_t pid)
{
    char sql[200];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM pg_stat_activity WHERE pid = %ld AND state = 'active' "
             "AND query LIKE '%%pg_sleep(30)%%'",
             (long)pid);
    return pg_test_count(conn, sql) == 1;
}

/* poll() for what the event-loop object wants, for at most `timeout_ms` (-1: 1 s at a time,
 * the loop steps again anyway). */
static void wait_for(int fd, unsigned want, int timeout_ms)
{
    struct pollfd p = {fd, (short)(((want & WK_PQ_WANT_READ) ? POLLIN : 0) |
                                   ((want & WK_PQ_WANT_WRITE) ? POLLOUT : 0)),
                       0};
    (void)poll(&p, 1, timeout_ms < 0 || timeout_ms > 1000 ? 1000 : timeout_ms);
}

/* Reads every outcome of a blocking pipeline and ends it: the end's status. */
static wk_status pipeline_run_blocking(wk_pq_pipeline *p)
{
    wk_pq_stmt_result r;
    while (wk_pq_pipeline_next(p, &r, NULL) == WK_OK) {
    }
    return wk_pq_pipeline_end(p, NULL);
}

/* Drives a pipeline with its step calls until every outcome is out, then ends it. */
static wk_status pipeline_run_driven(wk_pq_pipeline *p)
{
    wk_pq_stmt_result r;
    for (;;) {
        wk_status st = wk_pq_pipeline_step(p, &r, NULL);
        if (st == WK_ERR_EOF) {
            break;
        }
        if (st == WK_ERR_AGAIN) {
            wait_for(wk_pq_pipeline_socket(p), wk_pq_pipeline_wants(p),
                     wk_pq_pipeline_timeout_ms(p));
        } else if (st != WK_OK) {
            break;
        }
    }
    return wk_pq_pipeline_end(p, NULL);
}

/* Drives a non-blocking query to its end: its outcome. */
static wk_status async_run(wk_pq_async *q, wk_error *err)
{
    for (;;) {
        wk_status st = wk_pq_async_step(q, err);
        if (st != WK_ERR_AGAIN) {
            return st;
        }
        wait_for(wk_pq_async_socket(q), wk_pq_async_wants(q), wk_pq_async_timeout_ms(q));
    }
}

/* ---- the grace restarts while the server sends ------------------------------------------ */

/* A row function that ignores cancels (and the server's statement_timeout): 0.1 s per row,
 * each row 10 KB, so that every row reaches the client at once. 30 rows: 3 s. */
static const char slow_fn[] =
    "CREATE FUNCTION pg_temp.slow_row(i int) RETURNS text LANGUAGE plpgsql AS $$ BEGIN "
    "BEGIN PERFORM pg_sleep(0.1); EXCEPTION WHEN query_canceled THEN NULL; END; "
    "RETURN repeat('x', 10000); END $$";
static const char slow_sql[] = "SELECT pg_temp.slow_row(i) FROM generate_series(1, 30) i";

/* `dsn` connected within a generous 30 s (a loaded machine, a sanitizer), then given a 1 s
 * query deadline. */
static wk_status connect_1s(const char *dsn, wk_pq_conn **c, wk_error *err)
{
    wk_pq_limits lim = {0, 30000, 0};
    wk_status st = wk_pq_connect_limits(dsn, NULL, &lim, c, err);
    return st == WK_OK ? wk_pq_set_timeout(*c, 1000, err) : st;
}

/* A connection with a 1 s deadline and the slow row function. */
static wk_pq_conn *slow_conn(void)
{
    wk_pq_conn *c = NULL;
    if (connect_1s(getenv("WK_PG_DSN"), &c, NULL) != WK_OK || !pg_test_exec(c, slow_fn)) {
        wk_pq_conn_free(c);
        return NULL;
    }
    return c;
}

WK_TEST(test_pq_waits_a_cancelled_query_whose_rows_keep_coming_keeps_its_connection)
{
    NEED_CONN();
    wk_pq_conn *c = slow_conn();
    CHECK(c != NULL);
    PGresult *res = NULL;
    wk_error err = {0};
    double t0 = wk_test_now_s();
    wk_status st = wk_pq_exec(c, slow_sql, NULL, 0, &res, &err);
    double took = wk_test_now_s() - t0;
    PQclear(res);
    char msg[256];
    snprintf(msg, sizeof msg, "%s", wk_pq_conn_message(c));
    long after = pg_test_count(c, "SELECT 7");
    wk_pq_conn_free(c);
    printf("    took %.2f s: %s\n", took, msg);
    CHECK_STATUS(st, WK_ERR_IO);
    CHECK_MSG(strstr(msg, "(cancelled)") != NULL, "message: %s", msg);
    CHECK_MSG(after == 7, "the connection was given up while the server still sent rows");
    CHECK_MSG(took < BOUND_S, "took %.1f s", took);
}

WK_TEST(test_pq_waits_a_cancelled_pipeline_whose_rows_keep_coming_keeps_its_connection)
{
    NEED_CONN();
    for (int driven = 0; driven < 2; driven++) {
        wk_pq_conn *c = slow_conn();
        CHECK(c != NULL);
        wk_pq_pipeline *p = NULL;
        CHECK_OK(wk_pq_pipeline_begin(c, &p, NULL));
        CHECK_OK(wk_pq_pipeline_add(p, slow_sql, NULL, 0, NULL));
        double t0 = wk_test_now_s();
        wk_status st = driven ? pipeline_run_driven(p) : pipeline_run_blocking(p);
        double took = wk_test_now_s() - t0;
        char msg[256];
        snprintf(msg, sizeof msg, "%s", wk_pq_conn_message(c));
        long after = pg_test_count(c, "SELECT 7");
        wk_pq_conn_free(c);
        printf("    %s: took %.2f s: %s\n", driven ? "driven" : "blocking", took, msg);
        CHECK_STATUS(st, WK_ERR_IO);
        CHECK_MSG(after == 7, "%s: the connection was given up while the server still sent rows",
                  driven ? "driven" : "blocking");
        CHECK_MSG(took < BOUND_S, "took %.1f s", took);
    }
}

/* ---- a cancel connection that is accepted and never answered ---------------------------- */

/* A proxy on loopback in front of the shared server: the first connection is forwarded both
 * ways, every later one (the cancel requests) accepted and never answered nor closed until
 * the proxy stops. */
typedef struct proxy {
    int listen_fd;
    int port;
    struct sockaddr_storage target;
    socklen_t target_len;
    int stop[2]; /* a pipe: written to stop the thread */
    int swallowed[64];
    int nswallowed;
    pthread_t thread;
} proxy;

/* Copies what `from` has into `to`; false at EOF or an error. */
static bool forward(int from, int to)
{
    char buf[16384];
    ssize_t n = read(from, buf, sizeof buf);
    if (n <= 0) {
        return false;
    }
    for (ssize_t off = 0; off < n;) {
        ssize_t w = write(to, buf + off, (size_t)(n - off));
        if (w <= 0) {
            return false;
        }
        off += w;
    }
    return true;
}

static void *proxy_run(void *arg)
{
    proxy *x = arg;
    int client = -1, server = -1;
    for (;;) {
        struct pollfd p[4] = {{x->stop[0], POLLIN, 0}, {x->listen_fd, POLLIN, 0},
                              {client, POLLIN, 0}, {server, POLLIN, 0}};
        if (poll(p, 4, -1) < 0) {
            continue;
        }
        if (p[0].revents != 0) {
            break;
        }
        if (p[1].revents & POLLIN) {
            int fd = accept(x->listen_fd, NULL, NULL);
            if (fd >= 0 && client < 0) {
                client = fd;
                server = socket(x->target.ss_family, SOCK_STREAM, 0);
                if (server < 0 ||
                    connect(server, (struct sockaddr *)&x->target, x->target_len) != 0) {
                    break;
                }
            } else if (fd >= 0 && x->nswallowed < 64) {
                x->swallowed[x->nswallowed++] = fd; /* a cancel request: never answered */
            } else if (fd >= 0) {
                close(fd);
            }
        }
        if ((p[2].revents & (POLLIN | POLLHUP | POLLERR)) && !forward(client, server)) {
            break;
        }
        if ((p[3].revents & (POLLIN | POLLHUP | POLLERR)) && !forward(server, client)) {
            break;
        }
    }
    if (client >= 0) {
        close(client);
    }
    if (server >= 0) {
        close(server);
    }
    return NULL;
}

/* Starts the proxy in front of WK_PG_DSN's host and port (a TCP address). */
static bool proxy_start(proxy *x)
{
    memset(x, 0, sizeof *x);
    PQconninfoOption *o = PQconninfoParse(getenv("WK_PG_DSN"), NULL);
    const char *host = "127.0.0.1";
    int port = 5432;
    for (PQconninfoOption *i = o; i != NULL && i->keyword != NULL; i++) {
        if (strcmp(i->keyword, "host") == 0 && i->val != NULL) {
            host = i->val;
        } else if (strcmp(i->keyword, "port") == 0 && i->val != NULL) {
            port = (int)strtol(i->val, NULL, 10);
        }
    }
    struct sockaddr_in *t = (struct sockaddr_in *)&x->target;
    t->sin_family = AF_INET;
    t->sin_port = htons((uint16_t)port);
    bool ok = inet_pton(AF_INET, host, &t->sin_addr) == 1;
    PQconninfoFree(o);
    if (!ok) {
        return false; /* not a numeric IPv4 host: the proxy cannot stand in front of it */
    }
    x->target_len = sizeof *t;
    x->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    if (x->listen_fd < 0 || bind(x->listen_fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(x->listen_fd, 16) != 0 ||
        getsockname(x->listen_fd, (struct sockaddr *)&a, &alen) != 0 || pipe(x->stop) != 0) {
        return false;
    }
    x->port = ntohs(a.sin_port);
    return pthread_create(&x->thread, NULL, proxy_run, x) == 0;
}

/* Stops the proxy: the swallowed cancel connections close, so the helper threads that wait
 * on them end. */
static int proxy_stop(proxy *x)
{
    (void)write(x->stop[1], "x", 1);
    pthread_join(x->thread, NULL);
    for (int i = 0; i < x->nswallowed; i++) {
        close(x->swallowed[i]);
    }
    close(x->listen_fd);
    close(x->stop[0]);
    close(x->stop[1]);
    return x->nswallowed;
}

/* Fails the test instead of letting it hang in a cancel request. */
static void on_alarm(int sig)
{
    (void)sig;
    static const char m[] = "FAIL: blocked in a cancel request the server never answers\n";
    (void)write(2, m, sizeof m - 1);
    _exit(1);
}

WK_TEST(test_pq_waits_a_cancel_the_server_never_answers_ends_at_the_grace)
{
    NEED_CONN();
    signal(SIGALRM, on_alarm);
    alarm(60);
    for (int async = 0; async < 2; async++) {
        proxy x; /* one per connection: it forwards the first it accepts */
        if (!proxy_start(&x)) {
            SKIP("WK_PG_DSN has no numeric IPv4 host (the proxy needs one)");
        }
        char dsn[160];
        snprintf(dsn, sizeof dsn,
                 "host=127.0.0.1 port=%d user=wirekit dbname=postgres sslmode=disable", x.port);
        wk_pq_conn *c = NULL;
        wk_error err = {0};
        wk_status cst = connect_1s(dsn, &c, &err);
        if (cst != WK_OK) {
            wk_pq_conn_free(c);
            (void)proxy_stop(&x);
            CHECK_OK(cst);
        }
        pid_t backend = pg_stopped_backend_of(c);
        CHECK(backend > 0);
        /* only the client's deadline ends the query: the cancel must go out */
        CHECK(pg_test_exec(c, "SET statement_timeout = 0"));
        double t0 = wk_test_now_s();
        wk_status st;
        PGresult *res = NULL;
        if (async) {
            wk_pq_async *q = NULL;
            CHECK_OK(wk_pq_async_start(c, "SELECT pg_sleep(30)", NULL, 0, NULL, &q, &err));
            st = async_run(q, &err);
            wk_pq_async_free(q);
        } else {
            st = wk_pq_exec(c, "SELECT pg_sleep(30)", NULL, 0, &res, &err);
            PQclear(res);
        }
        double took = wk_test_now_s() - t0;
        char msg[256];
        snprintf(msg, sizeof msg, "%s", wk_pq_conn_message(c));
        wk_pq_conn_free(c);
        terminate(backend);
        int swallowed = proxy_stop(&x);
        printf("    %s: took %.2f s, %d cancel connections: %s\n", async ? "async" : "blocking",
               took, swallowed, msg);
        CHECK_STATUS(st, WK_ERR_IO);
        CHECK_MSG(strstr(msg, "given up") != NULL, "message: %s", msg);
        CHECK_MSG(took < BOUND_S, "took %.1f s", took);
        CHECK_MSG(swallowed >= 1, "no cancel connection reached the proxy");
    }
    alarm(0);
}

/* ---- the idle limit on the event-loop paths and the pipeline ---------------------------- */

typedef enum path { BLOCKING_PIPELINE, DRIVEN_PIPELINE, ASYNC_QUERY } path;
static const char *const path_names[] = {"blocking pipeline", "driven pipeline", "async query"};

WK_TEST(test_pq_waits_the_idle_limit_ends_pipelines_and_async_queries_on_a_stopped_backend)
{
    NEED_CONN();
    for (int i = 0; i < 3; i++) {
        path which = (path)i;
        wk_pq_limits lim = {0, 0, 1500};
        wk_pq_conn *c = NULL;
        wk_error err = {0};
        CHECK_OK(wk_pq_connect_limits(getenv("WK_PG_DSN"), NULL, &lim, &c, &err));
        pid_t backend = pg_stopped_backend_of(c);
        CHECK(backend > 0);
        wk_pq_pipeline *p = NULL;
        wk_pq_async *q = NULL;
        if (which == ASYNC_QUERY) {
            CHECK_OK(wk_pq_async_start(c, "SELECT pg_sleep(30)", NULL, 0, NULL, &q, &err));
        } else {
            CHECK_OK(wk_pq_pipeline_begin(c, &p, NULL));
            CHECK_OK(wk_pq_pipeline_add(p, "SELECT pg_sleep(30)", NULL, 0, NULL));
        }
        /* steps (which never wait) until the backend runs the statement, then it is stopped */
        for (int k = 0; k < 400 && !is_active(backend); k++) {
            wk_pq_stmt_result r;
            (void)(q != NULL ? wk_pq_async_step(q, NULL) : wk_pq_pipeline_step(p, &r, NULL));
            usleep(25000);
        }
        bool stopped = is_active(backend) && kill(backend, SIGSTOP) == 0;
        pid_t w = stopped ? pg_stopped_watchdog(backend) : -1;
        double t0 = wk_test_now_s();
        wk_status st = WK_ERR_AGAIN;
        if (stopped && which == ASYNC_QUERY) {
            st = async_run(q, &err);
        } else if (stopped) {
            /* the blocking reader takes over from the steps, as it may at any time */
            st = which == DRIVEN_PIPELINE ? pipeline_run_driven(p) : pipeline_run_blocking(p);
            p = NULL;
        }
        double took = wk_test_now_s() - t0;
        pg_stopped_release(w, backend);
        char msg[256];
        snprintf(msg, sizeof msg, "%s", wk_pq_conn_message(c));
        wk_pq_async_free(q);
        wk_pq_pipeline_discard(p);
        wk_pq_conn_free(c);
        terminate(backend);
        if (!stopped) {
            SKIP("cannot stop the backend (not allowed to signal it, or it never ran)");
        }
        printf("    %s: took %.2f s: %s\n", path_names[i], took, msg);
        CHECK_MSG(took < BOUND_S, "%s waited %.1f s with a 1.5 s idle limit", path_names[i],
                  took);
        CHECK_MSG(took >= 1.0, "%s gave up after %.2f s, before the idle limit", path_names[i],
                  took);
        CHECK_STATUS(st, WK_ERR_IO);
    }
}

WK_TEST(test_pq_waits_the_event_loop_connect_to_a_silent_server_ends_at_the_idle_limit)
{
    /* a listener that never accepts: the kernel completes the handshake, libpq sends its
     * startup packet and waits for an answer that never comes */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 8) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
        close(fd);
        CHECK_MSG(false, "cannot listen on loopback");
    }
    char dsn[128];
    snprintf(dsn, sizeof dsn, "host=127.0.0.1 port=%u user=nobody dbname=none sslmode=disable",
             (unsigned)ntohs(a.sin_port));
    /* a connect timeout far past the bound: only the idle limit can end it in time */
    wk_pq_limits lim = {0, 120000, 1500};
    wk_pq_connecting *k = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pq_connect_start_limits(dsn, NULL, &lim, &k, &err));
    double t0 = wk_test_now_s();
    wk_status st;
    while ((st = wk_pq_connecting_step(k, &err)) == WK_ERR_AGAIN &&
           wk_test_now_s() - t0 < 2 * BOUND_S) {
        wait_for(wk_pq_connecting_socket(k), wk_pq_connecting_wants(k),
                 wk_pq_connecting_timeout_ms(k));
    }
    double took = wk_test_now_s() - t0;
    wk_pq_conn *c = wk_pq_connecting_take(k);
    char msg[256];
    snprintf(msg, sizeof msg, "%s", c != NULL ? wk_pq_conn_message(c) : "");
    wk_pq_conn_free(c);
    close(fd);
    printf("    took %.2f s: %s\n", took, msg);
    CHECK_MSG(took < BOUND_S, "the connect waited %.1f s on a silent server", took);
    CHECK_MSG(took >= 1.0, "gave up after %.2f s, before the idle limit", took);
    CHECK_STATUS(st, WK_ERR_CONNECT);
    CHECK_MSG(strstr(msg, "nothing from the server") != NULL, "message: %s", msg);
}

WK_TEST(test_pq_waits_a_pooled_connection_has_the_pools_idle_limit)
{
    NEED_CONN();
    /* the query deadline (60 s) is far past the bound: only the idle limit ends the wait */
    wk_pq_pool_opts po = {.dsn = getenv("WK_PG_DSN"), .size = 1, .query_timeout_ms = 60000,
                          .idle_ms = 1500};
    wk_pq_pool *pool = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pq_pool_new(&po, &pool, &err));
    wk_pq_conn *c = NULL;
    CHECK_OK(wk_pq_pool_acquire(pool, 0, &c, &err));
    pid_t backend = pg_stopped_backend_of(c);
    CHECK(backend > 0);
    CHECK_OK(wk_pq_send(c, "SELECT pg_sleep(30)", NULL, 0, WK_PQ_SEND_SIMPLE, &err));
    for (int k = 0; k < 400 && !is_active(backend); k++) {
        usleep(25000);
    }
    bool stopped = is_active(backend) && kill(backend, SIGSTOP) == 0;
    pid_t w = stopped ? pg_stopped_watchdog(backend) : -1;
    double t0 = wk_test_now_s();
    PGresult *res = NULL;
    wk_status st = stopped ? wk_pq_next(c, &res, &err) : WK_ERR_AGAIN;
    double took = wk_test_now_s() - t0;
    pg_stopped_release(w, backend);
    PQclear(res);
    wk_pq_pool_release(pool, c); /* given up: the pool closes it */
    wk_pq_pool_free(pool);
    terminate(backend);
    if (!stopped) {
        SKIP("cannot stop the backend (not allowed to signal it, or it never ran)");
    }
    printf("    took %.2f s\n", took);
    CHECK_MSG(took < BOUND_S, "a pooled connection waited %.1f s with a 1.5 s idle limit", took);
    CHECK_MSG(took >= 1.0, "gave up after %.2f s, before the idle limit", took);
    CHECK_STATUS(st, WK_ERR_IO);
}

WK_TEST(test_pq_waits_zz_close_the_connection)
{
    wk_pq_conn_free(conn);
    conn = NULL;
}
