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
 * Deadlines: the whole connect, socket and set-up, must finish within `timeout_ms`, else the
 * connect timeout (the DSN's connect_timeout or PGCONNECT_TIMEOUT, else the caller's
 * default), else the idle limit (none of them: no deadline of wirekit's; libpq's
 * connect_timeout is honoured by the blocking call only). Besides, each step looks at the
 * socket (with an idle limit): a connect whose socket has no event for idle_ms ends as a
 * passed deadline does, on both ways of connecting. A
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
    uint32_t limit_ms;      /* what the deadline is, for the message (0: none) */
    uint32_t idle_ms;       /* the idle limit (0: none); c->heard_ms is the last event */
    wk_status status;       /* once PH_DONE */
    wk_error err;
};

/* libpq's default notice processor prints to stderr; a library must not print. */
static void quiet_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

/* The connect_timeout the DSN or PGCONNECT_TIMEOUT sets, in milliseconds (0: none), as libpq
 * reads it: whole seconds, 1 taken as 2 (libpq's minimum), 0 or less meaning none. */
static uint32_t user_connect_timeout_ms(const char *dsn, bool *set)
{
    const char *v = NULL;
    PQconninfoOption *opts = dsn != NULL && dsn[0] != '\0' ? PQconninfoParse(dsn, NULL) : NULL;
    for (PQconninfoOption *o = opts; o != NULL && o->keyword != NULL; o++) {
        if (strcmp(o->keyword, "connect_timeout") == 0 && o->val != NULL && o->val[0] != '\0') {
            v = o->val;
        }
    }
    char copy[16] = "";
    if (v != NULL) {
        snprintf(copy, sizeof copy, "%s", v);
    }
    PQconninfoFree(opts);
    if (copy[0] == '\0' && getenv("PGCONNECT_TIMEOUT") != NULL) {
        snprintf(copy, sizeof copy, "%s", getenv("PGCONNECT_TIMEOUT"));
    }
    *set = copy[0] != '\0';
    uint32_t secs = 0;
    for (size_t i = 0; copy[i] >= '0' && copy[i] <= '9' && secs < 1000000u; i++) {
        secs = secs * 10 + (uint32_t)(copy[i] - '0');
    }
    return secs == 0 ? 0 : secs < 2 ? 2000 : secs * 1000;
}

/* The connection object and the start snapshot; `*out` NULL on NOMEM. The connect's deadline
 * is the first limit set of: timeout_ms, the connect timeout (the user's connect_timeout, or
 * the caller's default), idle_ms. */
static wk_status connecting_new(const char *dsn, const wk_pg_registry *base,
                                const wk_pq_limits *lim, wk_pq_connecting **out, wk_error *err)
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
    c->timeout_ms = lim->timeout_ms;
    c->idle_ms = lim->idle_ms;
    bool user_set = false;
    uint32_t user_ms = user_connect_timeout_ms(dsn, &user_set);
    uint32_t connect_ms = user_set ? user_ms : lim->connect_timeout_ms;
    k->limit_ms = lim->timeout_ms != 0 ? lim->timeout_ms
                  : connect_ms != 0    ? connect_ms
                                       : lim->idle_ms;
    k->deadline = k->limit_ms != 0 ? wk__pq_now_ms() + k->limit_ms : INT64_MAX;
    k->idle_ms = lim->idle_ms;
    wk__pq_idle_restart(c);
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

/* libpq's keywords for a connect, at most this many plus the NULL that ends them. */
#define CONNECT_KEYS 10

/* The texts connect_params points the keyword values into. */
typedef struct connect_texts {
    char secs[16], user_timeout[16], opts[64], default_secs[16];
} connect_texts;

/* The keywords for libpq. Defaults come before the DSN, which overrides them (libpq expands
 * the first dbname in place); the later keywords override the DSN. With timeout_ms:
 * connect_timeout and statement_timeout, as wk_pq_connect_timeout promises. Without it: the
 * caller's default connect_timeout (else idle_ms: libpq's blocking connect has no other
 * limit), and with idle_ms TCP keepalives (a host that vanished is
 * noticed within about a minute, even while nothing is awaited) and tcp_user_timeout =
 * idle_ms (data the peer does not acknowledge), each unless the DSN sets it. */
static void connect_params(const char *dsn, const wk_pq_limits *lim, const char **keys,
                           const char **vals, connect_texts *t)
{
    size_t n = 0;
    uint32_t connect_ms = lim->connect_timeout_ms != 0 ? lim->connect_timeout_ms : lim->idle_ms;
    if (lim->timeout_ms == 0 && connect_ms != 0) {
        uint32_t whole = (connect_ms + 999) / 1000;
        snprintf(t->default_secs, sizeof t->default_secs, "%u", whole < 2 ? 2 : whole);
        keys[n] = "connect_timeout";
        vals[n++] = t->default_secs;
    }
    if (lim->timeout_ms == 0 && lim->idle_ms != 0) {
        snprintf(t->user_timeout, sizeof t->user_timeout, "%u", lim->idle_ms);
        keys[n] = "keepalives";
        vals[n++] = "1";
        keys[n] = "keepalives_idle";
        vals[n++] = "30";
        keys[n] = "keepalives_interval";
        vals[n++] = "10";
        keys[n] = "keepalives_count";
        vals[n++] = "3";
        keys[n] = "tcp_user_timeout";
        vals[n++] = t->user_timeout;
    }
    keys[n] = "dbname";
    vals[n++] = dsn;
    if (lim->timeout_ms != 0) {
        uint32_t whole = (lim->timeout_ms + 999) / 1000;
        snprintf(t->secs, sizeof t->secs, "%u", whole < 2 ? 2 : whole);
        snprintf(t->opts, sizeof t->opts, "-c statement_timeout=%u", lim->timeout_ms);
        keys[n] = "connect_timeout";
        vals[n++] = t->secs;
        keys[n] = "options";
        vals[n++] = t->opts;
    }
    keys[n] = vals[n] = NULL;
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
    wk__pq_idle_restart(c); /* the socket came up: the idle limit counts from here */
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
    if (k->idle_ms != 0 && k->ph != PH_DONE && k->c->pg != NULL && PQsocket(k->c->pg) >= 0) {
        (void)wk__pq_look(k->c, k->want_write);
    }
    if (k->ph == PH_SOCKET) {
        (void)step_socket(k); /* once the socket is up, the set-up goes out at once */
    }
    wk_status st = k->ph == PH_SETUP  ? step_setup(k)
                   : k->ph == PH_DONE ? k->status
                                      : WK_ERR_AGAIN;
    int64_t now = wk__pq_now_ms();
    bool idle = k->idle_ms != 0 && now >= k->c->heard_ms + k->idle_ms;
    if (st == WK_ERR_AGAIN && (now >= k->deadline || idle)) {
        wk_error e = {0};
        char why[128];
        const char *what = k->ph == PH_SOCKET ? "connecting" : "setting up the session";
        if (now >= k->deadline) {
            snprintf(why, sizeof why, "%s timed out after %u ms", what, k->limit_ms);
        } else {
            snprintf(why, sizeof why, "%s timed out: nothing from the server for %u ms", what,
                     k->idle_ms);
        }
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
WK_API wk_status wk_pq_connect_start_limits(const char *dsn, const wk_pg_registry *base,
                                            const wk_pq_limits *limits, wk_pq_connecting **out,
                                            wk_error *err)
{
    wk_pq_limits none = {0, 0, 0};
    const wk_pq_limits *lim = limits != NULL ? limits : &none;
    wk_status st = connecting_new(dsn, base, lim, out, err);
    if (st != WK_OK) {
        return st;
    }
    wk_pq_connecting *k = *out;
    const char *keys[CONNECT_KEYS + 1], *vals[CONNECT_KEYS + 1];
    connect_texts t;
    connect_params(dsn, lim, keys, vals, &t);
    k->c->pg = PQconnectStartParams(keys, vals, 1);
    if (k->c->pg == NULL || PQstatus(k->c->pg) == CONNECTION_BAD) {
        wk_error e = {0}; /* reported by the first step, as any failure to connect */
        (void)end(k, wk__pq_connect_error(k->c, NULL, &e), &e);
    }
    return WK_OK;
}

/* Public: wk_pq_connect_start_limits with the one timeout. */
WK_API wk_status wk_pq_connect_start(const char *dsn, const wk_pg_registry *base,
                                     uint32_t timeout_ms, wk_pq_connecting **out, wk_error *err)
{
    wk_pq_limits lim = {timeout_ms, 0, 0};
    return wk_pq_connect_start_limits(dsn, base, &lim, out, err);
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

/* Public: milliseconds until the deadline or the idle limit, -1 for none, 0 when overdue or
 * done. */
WK_API int wk_pq_connecting_timeout_ms(const wk_pq_connecting *k)
{
    if (k->ph == PH_DONE) {
        return 0;
    }
    int64_t until = k->deadline;
    if (k->idle_ms != 0 && k->c->heard_ms + k->idle_ms < until) {
        until = k->c->heard_ms + k->idle_ms;
    }
    if (until == INT64_MAX) {
        return -1;
    }
    int64_t left = until - wk__pq_now_ms();
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
WK_API wk_status wk_pq_connect_limits(const char *dsn, const wk_pg_registry *base,
                                      const wk_pq_limits *limits, wk_pq_conn **out,
                                      wk_error *err)
{
    *out = NULL;
    wk_pq_limits none = {0, 0, 0};
    const wk_pq_limits *lim = limits != NULL ? limits : &none;
    wk_pq_connecting *k = NULL;
    wk_status st = connecting_new(dsn, base, lim, &k, err);
    if (st != WK_OK) {
        return st;
    }
    const char *keys[CONNECT_KEYS + 1], *vals[CONNECT_KEYS + 1];
    connect_texts t;
    connect_params(dsn, lim, keys, vals, &t);
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
        int t_ms = wk_pq_connecting_timeout_ms(k);
        if (poll(&p, 1, t_ms < 0 || t_ms > 60000 ? 60000 : t_ms) < 0 && errno != EINTR) {
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

/* Public: wk_pq_connect_limits with the one timeout. */
WK_API wk_status wk_pq_connect_timeout(const char *dsn, const wk_pg_registry *base,
                                       uint32_t timeout_ms, wk_pq_conn **out, wk_error *err)
{
    wk_pq_limits lim = {timeout_ms, 0, 0};
    return wk_pq_connect_limits(dsn, base, &lim, out, err);
}

/* Public: wk_pq_connect_timeout without a deadline of wirekit's. */
WK_API wk_status wk_pq_connect(const char *dsn, const wk_pg_registry *base, wk_pq_conn **out,
                               wk_error *err)
{
    return wk_pq_connect_timeout(dsn, base, 0, out, err);
}
