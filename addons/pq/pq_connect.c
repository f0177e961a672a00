/*
 * Connecting: the socket (libpq's PQconnectStartParams/PQconnectPoll), then one simple query
 * that applies the session settings wirekit's text output follows and runs the catalog query
 * behind them (one round trip; the settings' results come first, the catalog's last), then the
 * connection's registry snapshot built from that last result (pq_catalog.c).
 *
 * Where it sits: a DSN -> the socket here -> the set-up query (session settings + pq_catalog.c's
 * SQL) -> pq_catalog.c's registry snapshot over the base registry (src/pg/registry.c) -> a
 * wk_pq_conn ready for pq_conn.c's queries.
 *
 * A wk_pq_connecting holds those steps for an event loop: it says which socket to watch, for
 * what and until when, and each wk_pq_connecting_step does what the socket allows without
 * blocking. wk_pq_connect_timeout connects the socket with libpq's blocking call (so libpq's
 * connect_timeout and multi-host rules stay as they are) and drives the same set-up steps
 * with poll(): both ways end in the same state, by the same code.
 *
 * Deadlines: the whole connect, socket and set-up, must finish within `timeout_ms` (0: no
 * deadline of wirekit's; libpq's connect_timeout is honoured by the blocking call only). A
 * connection that has not finished its set-up is never handed out working, so a set-up past
 * the deadline is not cancelled: the connection is given up, which ends the backend too.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>

#include "pg/pg_interface.h"
#include "pq/pq_internal.h"

/* The session settings, then the catalog query, as one simple query. */
static const char session_sql[] = "SET DateStyle = 'ISO, MDY'; SET IntervalStyle = 'postgres'; "
                                  "SET TimeZone = 'UTC'; SET client_encoding = 'UTF8'; "
                                  "SET extra_float_digits = 1; SET lc_monetary = 'C'; ";

enum { PH_SOCKET, PH_SETUP, PH_DONE };

struct wk_pq_connecting {
    wk_pq_conn *c;
    wk_pg_registry *start;  /* the base snapshot the catalog's types are added to */
    int ph;
    bool want_write;        /* PH_SOCKET: libpq waits to write; PH_SETUP: output pending */
    PGresult *last;         /* PH_SETUP: the last result (an error result wins) */
    int64_t deadline;       /* INT64_MAX: none */
    wk_status status;       /* once PH_DONE */
    wk_error err;
};

/* libpq's default notice processor prints to stderr; a library must not print. */
static void quiet_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

/* The connection object and the start snapshot; `*out` NULL on NOMEM. */
static wk_status connecting_new(const wk_pg_registry *base, uint32_t timeout_ms,
                                wk_pq_connecting **out, wk_error *err)
{
    *out = NULL;
    wk_pq_connecting *k = calloc(1, sizeof *k);
    wk_pq_conn *c = calloc(1, sizeof *c);
    if (k == NULL || c == NULL) {
        free(k);
        free(c);
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the connection");
    }
    k->c = c;
    c->timeout_ms = timeout_ms;
    k->deadline = wk__pq_deadline(c);
    k->want_write = true; /* libpq: after PQconnectStart, wait for writing first */
    wk_status st = WK_OK;
    if (base == NULL) {
        st = wk_pg_registry_new_default(NULL, &k->start, err);
    } else {
        k->start = wk_pg_registry_ref((wk_pg_registry *)base);
    }
    if (st != WK_OK) {
        free(c);
        free(k);
        return st;
    }
    *out = k;
    return WK_OK;
}

/* The keywords for libpq: the DSN expanded first, the later keywords overriding it. */
static void connect_params(const char *dsn, uint32_t timeout_ms, const char **keys,
                           const char **vals, char *secs, size_t secs_size, char *opts,
                           size_t opts_size)
{
    keys[0] = "dbname";
    vals[0] = dsn;
    keys[1] = vals[1] = NULL;
    if (timeout_ms != 0) {
        uint32_t whole = (timeout_ms + 999) / 1000;
        snprintf(secs, secs_size, "%u", whole < 2 ? 2 : whole);
        snprintf(opts, opts_size, "-c statement_timeout=%u", timeout_ms);
        keys[1] = "connect_timeout";
        vals[1] = secs;
        keys[2] = "options";
        vals[2] = opts;
        keys[3] = vals[3] = NULL;
    }
}

/* Ends the connect with status st (its detail e): the last set-up result is dropped and a
 * live connection is put back into blocking mode, the mode the rest of the glue expects. */
static wk_status end(wk_pq_connecting *k, wk_status st, const wk_error *e)
{
    k->ph = PH_DONE;
    k->want_write = false;
    k->status = st;
    if (e != NULL) {
        k->err = *e;
    }
    PQclear(k->last);
    k->last = NULL;
    if (k->c->pg != NULL && PQstatus(k->c->pg) != CONNECTION_BAD) {
        (void)PQsetnonblocking(k->c->pg, 0);
    }
    return st;
}

/* The socket is up: the settings and the catalog query go out. */
static wk_status start_setup(wk_pq_connecting *k)
{
    wk_pq_conn *c = k->c;
    wk_error e = {0};
    PQsetNoticeProcessor(c->pg, quiet_notice, NULL);
    size_t n1 = sizeof session_sql - 1;
    const char *cat = wk__pq_catalog_sql();
    size_t n2 = strlen(cat);
    char *sql = malloc(n1 + n2 + 1);
    if (sql == NULL) {
        wk__pg_fail(&e, WK_ERR_NOMEM, 0, "out of memory for the connection");
        return end(k, WK_ERR_NOMEM, &e);
    }
    memcpy(sql, session_sql, n1);
    memcpy(sql + n1, cat, n2 + 1);
    int sent = PQsetnonblocking(c->pg, 1) == 0 && PQsendQuery(c->pg, sql) == 1;
    free(sql);
    if (!sent) {
        return end(k, wk__pq_take_error(c, NULL, "cannot send the session set-up", &e), &e);
    }
    k->ph = PH_SETUP;
    k->want_write = true; /* the first step flushes what the socket did not take */
    return WK_ERR_AGAIN;
}

/* Every result of the set-up is in: the snapshot from the catalog's. */
static wk_status finish_setup(wk_pq_connecting *k)
{
    wk_pq_conn *c = k->c;
    wk_error e = {0};
    ExecStatusType s = k->last != NULL ? PQresultStatus(k->last) : PGRES_FATAL_ERROR;
    if (s != PGRES_TUPLES_OK) {
        return end(k, wk__pq_take_error(c, k->last, "setting up the session failed", &e), &e);
    }
    wk_status st = wk__pq_catalog_build(c, k->start, k->last, &c->reg, &e);
    return end(k, st, &e);
}

/* One PQconnectPoll: the set-up starts as soon as the socket is up. */
static wk_status step_socket(wk_pq_connecting *k)
{
    wk_error e = {0};
    PostgresPollingStatusType s = PQconnectPoll(k->c->pg);
    if (s == PGRES_POLLING_FAILED) {
        return end(k, wk__pq_connect_error(k->c, NULL, &e), &e);
    }
    if (s == PGRES_POLLING_OK) {
        return start_setup(k);
    }
    k->want_write = s == PGRES_POLLING_WRITING;
    return WK_ERR_AGAIN;
}

/* Flushes the set-up query, consumes input and keeps the last complete result; the set-up is
 * finished when libpq has no more results. */
static wk_status step_setup(wk_pq_connecting *k)
{
    PGconn *pg = k->c->pg;
    int f = PQflush(pg);
    k->want_write = f > 0;
    (void)PQconsumeInput(pg); /* on failure the connection is bad, not busy: its error comes */
    while (!PQisBusy(pg)) {
        PGresult *r = PQgetResult(pg);
        if (r == NULL) {
            return finish_setup(k);
        }
        wk__pq_keep_result(&k->last, r);
    }
    return WK_ERR_AGAIN;
}

/* Public (wirekit/pq.h): does what the socket allows; WK_ERR_AGAIN until the connect ends,
 * then its status (a passed deadline ends it as a failure naming the step). */
WK_API wk_status wk_pq_connecting_step(wk_pq_connecting *k, wk_error *err)
{
    if (k->ph == PH_SOCKET) {
        (void)step_socket(k); /* once the socket is up, the set-up goes out at once */
    }
    wk_status st = k->ph == PH_SETUP  ? step_setup(k)
                   : k->ph == PH_DONE ? k->status
                                      : WK_ERR_AGAIN;
    if (st == WK_ERR_AGAIN && wk__pq_now_ms() >= k->deadline) {
        wk_error e = {0};
        char why[96];
        snprintf(why, sizeof why, "%s timed out after %u ms",
                 k->ph == PH_SOCKET ? "connecting" : "setting up the session", k->c->timeout_ms);
        st = end(k, wk__pq_connect_error(k->c, why, &e), &e);
        k->c->broken = true;
    }
    if (st != WK_OK && st != WK_ERR_AGAIN && err != NULL) {
        *err = k->err;
    }
    return st;
}

/* Public: starts a non-blocking connect; a DSN libpq refuses outright is reported by the
 * first step, like any other failure to connect. */
WK_API wk_status wk_pq_connect_start(const char *dsn, const wk_pg_registry *base,
                                     uint32_t timeout_ms, wk_pq_connecting **out, wk_error *err)
{
    wk_status st = connecting_new(base, timeout_ms, out, err);
    if (st != WK_OK) {
        return st;
    }
    wk_pq_connecting *k = *out;
    const char *keys[4], *vals[4];
    char secs[16], opts[64];
    connect_params(dsn, timeout_ms, keys, vals, secs, sizeof secs, opts, sizeof opts);
    k->c->pg = PQconnectStartParams(keys, vals, 1);
    if (k->c->pg == NULL || PQstatus(k->c->pg) == CONNECTION_BAD) {
        wk_error e = {0}; /* reported by the first step, as any failure to connect */
        (void)end(k, wk__pq_connect_error(k->c, NULL, &e), &e);
    }
    return WK_OK;
}

/* Public: the socket to wait on, -1 before libpq has one. */
WK_API int wk_pq_connecting_socket(const wk_pq_connecting *k)
{
    return k->c->pg != NULL ? PQsocket(k->c->pg) : -1;
}

/* Public: what PQconnectPoll asked for while connecting; during the set-up read always, write
 * too while libpq holds unsent data; 0 when done. */
WK_API unsigned wk_pq_connecting_wants(const wk_pq_connecting *k)
{
    if (k->ph == PH_DONE) {
        return 0;
    }
    if (k->ph == PH_SOCKET) {
        return k->want_write ? WK_PQ_WANT_WRITE : WK_PQ_WANT_READ;
    }
    return WK_PQ_WANT_READ | (k->want_write ? WK_PQ_WANT_WRITE : 0u);
}

/* Public: milliseconds until the deadline, -1 for none, 0 when overdue or done. */
WK_API int wk_pq_connecting_timeout_ms(const wk_pq_connecting *k)
{
    if (k->ph == PH_DONE) {
        return 0;
    }
    if (k->deadline == INT64_MAX) {
        return -1;
    }
    int64_t left = k->deadline - wk__pq_now_ms();
    return left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

/* Public: the connection when the connect succeeded (the caller owns it), else NULL with
 * everything freed; frees k either way. */
WK_API wk_pq_conn *wk_pq_connecting_take(wk_pq_connecting *k)
{
    if (k == NULL) {
        return NULL;
    }
    wk_pq_conn *c = k->c;
    if (k->ph != PH_DONE) {
        PQclear(k->last);
        wk_pq_conn_free(c);
        c = NULL;
    }
    wk_pg_registry_unref(k->start);
    free(k);
    return c;
}

/* Public: the blocking connect: libpq's PQconnectdbParams for the socket, then the same
 * set-up steps driven with poll() until done or the deadline. */
WK_API wk_status wk_pq_connect_timeout(const char *dsn, const wk_pg_registry *base,
                                       uint32_t timeout_ms, wk_pq_conn **out, wk_error *err)
{
    *out = NULL;
    wk_pq_connecting *k = NULL;
    wk_status st = connecting_new(base, timeout_ms, &k, err);
    if (st != WK_OK) {
        return st;
    }
    const char *keys[4], *vals[4];
    char secs[16], opts[64];
    connect_params(dsn, timeout_ms, keys, vals, secs, sizeof secs, opts, sizeof opts);
    k->c->pg = PQconnectdbParams(keys, vals, 1);
    wk_error e = {0};
    if (k->c->pg == NULL || PQstatus(k->c->pg) != CONNECTION_OK) {
        st = end(k, wk__pq_connect_error(k->c, NULL, &e), &e);
    } else {
        st = start_setup(k);
    }
    while (st == WK_ERR_AGAIN) {
        unsigned want = wk_pq_connecting_wants(k);
        struct pollfd p = {wk_pq_connecting_socket(k),
                           (short)(POLLIN | ((want & WK_PQ_WANT_WRITE) ? POLLOUT : 0)), 0};
        int t = wk_pq_connecting_timeout_ms(k);
        if (poll(&p, 1, t < 0 || t > 60000 ? 60000 : t) < 0 && errno != EINTR) {
            wk__pg_fail(&e, WK_ERR_IO, 0, "poll() failed on the connection's socket");
            st = end(k, WK_ERR_IO, &e);
            break;
        }
        st = wk_pq_connecting_step(k, NULL);
    }
    if (st != WK_OK && err != NULL) {
        *err = k->err;
    }
    *out = wk_pq_connecting_take(k);
    return st;
}

/* Public: wk_pq_connect_timeout without a deadline of wirekit's. */
WK_API wk_status wk_pq_connect(const char *dsn, const wk_pg_registry *base, wk_pq_conn **out,
                               wk_error *err)
{
    return wk_pq_connect_timeout(dsn, base, 0, out, err);
}
