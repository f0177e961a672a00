/*
 * The non-blocking connect (wk_pq_connect_start / wk_pq_connecting_*) driven by a plain
 * poll() loop, against a real PostgreSQL 15 (WK_PG_DSN; skipped when unset):
 * - it ends in the state the blocking wk_pq_connect reaches: the same registry snapshot (the
 *   database's own enum, domain, composite and range types included, codec for codec) and
 *   the same session settings, and it runs queries;
 * - a refused connection (a port just closed), a database that does not exist (the server's
 *   FATAL message) and a malformed connection string end with WK_ERR_CONNECT and say why;
 * - the deadline: a socket that accepts connections (the kernel's backlog) and never
 *   answers ends the connect at the deadline, not libpq's later connect_timeout; a set-up
 *   that waits on a lock held by another session ends at the deadline too, blocking or not;
 * - a connect given up half-way (wk_pq_connecting_take before it ended) leaks nothing (ASan).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pg_test_conn.h"
#include "wirekit/pq.h"
#include "wk_test.h"

static wk_pq_conn *conn; /* the blocking connection, through pg_test_conn */

/* An event loop of one connect: poll() for what it wants, step, until it ends. *steps counts
 * the steps; the connection (ready or failed) lands in *out. */
static wk_status drive(wk_pq_connecting *k, int *steps, wk_pq_conn **out, wk_error *err)
{
    wk_status st = WK_ERR_AGAIN;
    *steps = 0;
    while (st == WK_ERR_AGAIN) {
        unsigned want = wk_pq_connecting_wants(k);
        struct pollfd p = {wk_pq_connecting_socket(k),
                           (short)(((want & WK_PQ_WANT_READ) ? POLLIN : 0) |
                                   ((want & WK_PQ_WANT_WRITE) ? POLLOUT : 0)),
                           0};
        if (want != 0 && poll(&p, 1, wk_pq_connecting_timeout_ms(k)) < 0) {
            break;
        }
        st = wk_pq_connecting_step(k, err);
        (*steps)++;
    }
    *out = wk_pq_connecting_take(k);
    return st;
}

static wk_status connect_async(const char *dsn, uint32_t timeout_ms, wk_pq_conn **out,
                               int *steps, wk_error *err)
{
    wk_pq_connecting *k = NULL;
    wk_status st = wk_pq_connect_start(dsn, NULL, timeout_ms, &k, err);
    if (st != WK_OK) {
        *out = NULL;
        return st;
    }
    return drive(k, steps, out, err);
}

/* The first value of `sql` as text into buf ("" when it fails). */
static void first_value(wk_pq_conn *c, const char *sql, char *buf, size_t size)
{
    PGresult *r = PQexec(wk_pq_pgconn(c), sql);
    snprintf(buf, size, "%s",
             PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0 ? PQgetvalue(r, 0, 0)
                                                                       : "");
    PQclear(r);
}

WK_TEST(test_pg_connect_async_ends_as_the_blocking_connect_does)
{
    NEED_CONN();
    /* the database's own types, which the catalog query turns into codecs */
    CHECK(pg_test_exec(conn, "DROP SCHEMA IF EXISTS wk_conn_async CASCADE; "
                             "CREATE SCHEMA wk_conn_async; "
                             "CREATE TYPE wk_conn_async.mood AS ENUM ('sad', 'ok'); "
                             "CREATE DOMAIN wk_conn_async.posint AS int4 CHECK (VALUE > 0); "
                             "CREATE TYPE wk_conn_async.pair AS (a int4, b text); "
                             "CREATE TYPE wk_conn_async.floatrange AS RANGE "
                             "(subtype = float8)"));
    const char *dsn = getenv("WK_PG_DSN");
    wk_error err = {0};
    wk_pq_conn *blocking = NULL, *async = NULL;
    CHECK_STATUS(wk_pq_connect(dsn, NULL, &blocking, &err), WK_OK);
    int steps = 0;
    double t0 = wk_test_now_s();
    CHECK_STATUS(connect_async(dsn, 0, &async, &steps, &err), WK_OK);
    printf("    connected in %d steps, %.1f ms\n", steps, (wk_test_now_s() - t0) * 1e3);
    CHECK(steps >= 2); /* it waited on the socket at least once */
    CHECK(blocking != NULL && async != NULL);
    if (blocking == NULL || async == NULL) {
        wk_pq_conn_free(blocking);
        wk_pq_conn_free(async);
        return;
    }
    size_t nb = 0, na = 0;
    const wk_pg_codec *const *cb = wk_pg_registry_codecs(wk_pq_registry(blocking), &nb);
    const wk_pg_codec *const *ca = wk_pg_registry_codecs(wk_pq_registry(async), &na);
    CHECK_EQ(na, nb);
    size_t own = 0; /* codecs for the database's own types */
    for (size_t i = 0; i < na && i < nb; i++) {
        CHECK(strcmp(ca[i]->name, cb[i]->name) == 0);
        CHECK_EQ(ca[i]->n_oids, cb[i]->n_oids);
        CHECK_EQ(ca[i]->oids[0], cb[i]->oids[0]);
        CHECK((ca[i]->array_oids == NULL) == (cb[i]->array_oids == NULL));
        if (ca[i]->array_oids != NULL && cb[i]->array_oids != NULL) {
            CHECK_EQ(ca[i]->array_oids[0], cb[i]->array_oids[0]);
        }
        own += ca[i]->oids[0] >= 16384; /* FirstNormalObjectId: made in this database */
    }
    CHECK(own >= 4);
    char oid[32];
    first_value(async, "SELECT 'wk_conn_async.mood'::regtype::oid", oid, sizeof oid);
    bool is_array = true;
    const wk_pg_codec *mood = wk_pg_registry_codec_for(wk_pq_registry(async),
                                                       (wk_pg_oid)strtoul(oid, NULL, 10),
                                                       &is_array);
    CHECK(mood != NULL && !is_array);
    static const char *const settings[] = {"DateStyle",       "IntervalStyle", "TimeZone",
                                           "client_encoding", "extra_float_digits",
                                           "lc_monetary"};
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        char sql[64], vb[64], va[64];
        snprintf(sql, sizeof sql, "SHOW %s", settings[i]);
        first_value(blocking, sql, vb, sizeof vb);
        first_value(async, sql, va, sizeof va);
        CHECK_MSG(va[0] != '\0' && strcmp(va, vb) == 0, "%s: %s against %s", settings[i], va,
                  vb);
    }
    CHECK_EQ(pg_test_count(async, "SELECT count(*) FROM generate_series(1, 1234)"), 1234);
    CHECK(PQisnonblocking(wk_pq_pgconn(async)) == 0); /* back to blocking, as wk_pq_connect */
    wk_pq_conn_free(blocking);
    wk_pq_conn_free(async);
    CHECK(pg_test_exec(conn, "DROP SCHEMA wk_conn_async CASCADE"));
}

/* A TCP port on 127.0.0.1: listening (backlog 4, never accepting) when `listening`, else
 * just closed (nothing listens there). *fd is the listening socket (-1: none). */
static int local_port(bool listening, int *fd)
{
    *fd = -1;
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) {
        return -1;
    }
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(s, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(s, (struct sockaddr *)&a, &len) != 0 || (listening && listen(s, 4) != 0)) {
        close(s);
        return -1;
    }
    if (listening) {
        *fd = s;
    } else {
        close(s);
    }
    return ntohs(a.sin_port);
}

/* Connects to `dsn` without blocking, expecting WK_ERR_CONNECT with the connection kept in
 * *c for its message (printed); the caller frees *c. */
static void connect_fails(const char *dsn, wk_pq_conn **c)
{
    wk_error err = {0};
    int steps = 0;
    *c = NULL;
    CHECK_STATUS(connect_async(dsn, 5000, c, &steps, &err), WK_ERR_CONNECT);
    CHECK(*c != NULL);
    printf("    %s\n", wk_pq_conn_message(*c));
}

WK_TEST(test_pg_connect_async_a_refused_connection_says_so)
{
    int fd;
    int port = local_port(false, &fd);
    CHECK(port > 0);
    char dsn[128];
    snprintf(dsn, sizeof dsn, "host=127.0.0.1 port=%d dbname=postgres", port);
    wk_pq_conn *c = NULL;
    connect_fails(dsn, &c);
    if (c != NULL) {
        CHECK(strstr(wk_pq_conn_message(c), "refused") != NULL);
        const wk_pq_error *e = wk_pq_last_error(c);
        CHECK(e != NULL && strstr(e->message, "refused") != NULL);
    }
    wk_pq_conn_free(c);
}

WK_TEST(test_pg_connect_async_a_database_that_does_not_exist_gives_the_servers_message)
{
    NEED_CONN();
    char dsn[512];
    snprintf(dsn, sizeof dsn, "%s dbname=wk_no_such_database", getenv("WK_PG_DSN"));
    wk_error err = {0};
    wk_pq_conn *c = NULL;
    connect_fails(dsn, &c);
    if (c != NULL) {
        CHECK(strstr(wk_pq_conn_message(c),
                     "database \"wk_no_such_database\" does not exist") != NULL);
    }
    wk_pq_conn_free(c);
    /* the blocking connect says the same */
    CHECK_STATUS(wk_pq_connect(dsn, NULL, &c, &err), WK_ERR_CONNECT);
    CHECK(c != NULL && strstr(wk_pq_conn_message(c), "does not exist") != NULL);
    wk_pq_conn_free(c);
}

WK_TEST(test_pg_connect_async_a_malformed_connection_string_is_reported_by_the_first_step)
{
    wk_error err = {0};
    wk_pq_connecting *k = NULL;
    CHECK_STATUS(wk_pq_connect_start("host=127.0.0.1 no_such_keyword=1", NULL, 0, &k, &err),
                 WK_OK);
    CHECK_EQ(wk_pq_connecting_wants(k), 0);
    CHECK_STATUS(wk_pq_connecting_step(k, &err), WK_ERR_CONNECT);
    CHECK_STATUS(wk_pq_connecting_step(k, &err), WK_ERR_CONNECT); /* repeated */
    wk_pq_conn *c = wk_pq_connecting_take(k);
    CHECK(c != NULL && strstr(wk_pq_conn_message(c), "no_such_keyword") != NULL);
    wk_pq_conn_free(c);
}

WK_TEST(test_pg_connect_async_a_server_that_never_answers_ends_at_the_deadline)
{
    int fd;
    int port = local_port(true, &fd);
    CHECK(port > 0 && fd >= 0);
    char dsn[128];
    snprintf(dsn, sizeof dsn, "host=127.0.0.1 port=%d dbname=postgres", port);
    wk_error err = {0};
    wk_pq_conn *c = NULL;
    int steps = 0;
    double t0 = wk_test_now_s();
    wk_status st = connect_async(dsn, 300, &c, &steps, &err);
    double took = wk_test_now_s() - t0;
    printf("    ended after %.3f s, %d steps: %s\n", took, steps,
           c != NULL ? wk_pq_conn_message(c) : "");
    CHECK_STATUS(st, WK_ERR_CONNECT);
    CHECK(took >= 0.299); /* the deadline is counted in whole milliseconds */
    CHECK_MSG(took < 1.5, "took %.2f s (libpq's connect_timeout would be 2 s)", took);
    CHECK(c != NULL && strstr(wk_pq_conn_message(c), "timed out after 300 ms") != NULL);
    CHECK(steps < 50); /* it waited on the socket, it did not spin */
    wk_pq_conn_free(c);
    close(fd);
}

WK_TEST(test_pg_connect_async_a_set_up_that_does_not_end_is_given_up_at_the_deadline)
{
    NEED_CONN();
    /* another session holds a lock the catalog query waits for: the socket comes up, the
     * set-up does not end. The server's statement_timeout (the same 300 ms) or the client's
     * deadline ends it, whichever fires first; either way within the deadline and nothing
     * handed out working. */
    CHECK(pg_test_exec(conn, "BEGIN; LOCK TABLE pg_catalog.pg_range IN ACCESS EXCLUSIVE MODE"));
    const char *dsn = getenv("WK_PG_DSN");
    for (int blocking = 0; blocking < 2; blocking++) {
        wk_error err = {0};
        wk_pq_conn *c = NULL;
        int steps = 0;
        double t0 = wk_test_now_s();
        wk_status st = blocking ? wk_pq_connect_timeout(dsn, NULL, 300, &c, &err)
                                : connect_async(dsn, 300, &c, &steps, &err);
        double took = wk_test_now_s() - t0;
        const char *msg = c != NULL ? wk_pq_conn_message(c) : "";
        printf("    %s: %s after %.3f s: %s\n", blocking ? "blocking" : "non-blocking",
               wk_status_str(st), took, msg);
        CHECK(st == WK_ERR_CONNECT || st == WK_ERR_SERVER);
        /* the set-up's deadline; now and then the backend's own start waits on the lock too
         * (a backend of an earlier attempt queued for it): then the connect phase's deadline,
         * which on the blocking path is libpq's connect_timeout (2 s at least) */
        CHECK(st != WK_ERR_CONNECT || strstr(msg, "timed out after 300 ms") != NULL ||
              (blocking && strstr(msg, "timeout expired") != NULL));
        CHECK(st != WK_ERR_SERVER ||
              (wk_pq_last_error(c) != NULL &&
               strcmp(wk_pq_last_error(c)->sqlstate, "57014") == 0));
        CHECK(took >= 0.25);
        CHECK_MSG(took < (blocking ? 3.0 : 1.5), "took %.2f s", took);
        wk_pq_conn_free(c);
    }
    CHECK(pg_test_exec(conn, "ROLLBACK"));
    wk_pq_conn *c = NULL;
    wk_error err = {0};
    CHECK_STATUS(wk_pq_connect_timeout(dsn, NULL, 300, &c, &err), WK_OK); /* lock gone */
    wk_pq_conn_free(c);
}

WK_TEST(test_pg_connect_async_a_connect_given_up_half_way_frees_everything)
{
    NEED_CONN();
    wk_error err = {0};
    for (int stop_after = 0; stop_after < 4; stop_after++) {
        wk_pq_connecting *k = NULL;
        CHECK_STATUS(wk_pq_connect_start(getenv("WK_PG_DSN"), NULL, 5000, &k, &err), WK_OK);
        wk_status st = WK_ERR_AGAIN;
        for (int i = 0; i < stop_after && st == WK_ERR_AGAIN; i++) {
            unsigned want = wk_pq_connecting_wants(k);
            struct pollfd p = {wk_pq_connecting_socket(k),
                               (short)(((want & WK_PQ_WANT_READ) ? POLLIN : 0) |
                                       ((want & WK_PQ_WANT_WRITE) ? POLLOUT : 0)),
                               0};
            (void)poll(&p, 1, wk_pq_connecting_timeout_ms(k));
            st = wk_pq_connecting_step(k, &err);
        }
        wk_pq_conn *c = wk_pq_connecting_take(k);
        CHECK((c != NULL) == (st != WK_ERR_AGAIN)); /* handed over only once it ended */
        wk_pq_conn_free(c);
    }
    CHECK_EQ(pg_test_count(conn, "SELECT 5"), 5);
}

WK_TEST(test_pg_connect_async_zz_close_the_connection)
{
    wk_pq_conn_free(conn);
    conn = NULL;
}
