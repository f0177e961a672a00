/*
 * Internal state of wirekit-pq connections, shared by the pq_*.c files.
 */
#ifndef WK_PQ_INTERNAL_H
#define WK_PQ_INTERNAL_H

#include <time.h>

#include "wirekit/pq.h"

/* Result formats decided by describing a statement, by a hash of its text and types. */
#define WK__PQ_FMT_CACHE 32
typedef struct wk__pq_fmt_entry {
    uint64_t hash; /* 0 = empty */
    int format;    /* 1 binary, 0 text */
} wk__pq_fmt_entry;

struct wk_pq_conn {
    PGconn *pg;
    wk_pg_registry *reg; /* the snapshot this connection started with */
    char message[512];   /* last libpq / server error */
    wk_pq_error last;    /* the last error, fields pointing into err_text */
    char *err_text;      /* malloc'd copies of the last error's fields */
    wk__pq_fmt_entry fmt_cache[WK__PQ_FMT_CACHE];
    uint32_t timeout_ms; /* per-query deadline, 0 = none */
    uint32_t idle_ms;    /* client-side only: the longest a wait sees no socket event, 0 = none */
    bool broken;         /* a query overran its deadline and the server did not answer */
    int64_t heard_ms;    /* the last time a wait saw the socket ready (pq_wait.c): the
                          * event-loop paths' idle limit and every cancel's grace count from it */
    struct wk__pq_canceller *canceller; /* the cancel helper's shared state (pq_wait.c), NULL
                                         * before the first cancel */
    size_t catalog_types; /* catalog types in reg (capped at WK__PQ_CATALOG_MAX) */
    wk_pg_oid catalog_missed[16]; /* OIDs a lazy load did not find (a ring): not asked again */
    unsigned catalog_nmissed;
    struct wk__pq_stmt_cache *stmts; /* pipelines' prepared statements (pq_stmt_cache.c) */
    size_t max_value;    /* COPY out: the largest field held (wk_pq_set_max_value_bytes) */
    const struct wk_pq_async *async; /* the non-blocking query in flight, until it ends */
    /* libpq keeps single-row mode set after the query it was asked for has ended, and only a
     * query sent outside pipeline mode clears it: a pipeline whose first command returns rows
     * would get them one by one. Set with every PQsetSingleRowMode; the next pipeline clears
     * it (pq_pipeline_send.c). */
    bool single_row_left;
};

/* Whether a non-blocking query (wk_pq_async_start) is in flight on c: then `what` (a pipeline,
 * another query) is refused with WK_ERR_STATE, the connection's message saying why, since its
 * messages would interleave with the query's and each would read the other's answers. */
bool wk__pq_async_in_flight(wk_pq_conn *c, const char *what, wk_error *err);

/* Records the error of `r` (NULL: the connection's own message) as the connection's last
 * error and returns WK_ERR_CONNECT when the connection is gone, else WK_ERR_SERVER, with
 * `err` filled with `what`. */
wk_status wk__pq_take_error(wk_pq_conn *c, const PGresult *r, const char *what, wk_error *err);
/** Prepares sql as the unnamed statement and describes it (the blocking path's first run of a
 *  statement, and COPY's column look-up): WK_OK with the description in *desc, or the failure
 *  with err set; on a server error the failed result is in *failed. The caller clears both. */
wk_status wk__pq_prepare_describe(wk_pq_conn *c, const char *sql, const Oid *types, size_t n,
                                  PGresult **desc, PGresult **failed, wk_error *err);
/* Records a connection failure and returns WK_ERR_CONNECT: `why`, or libpq's message when
 * NULL. */
wk_status wk__pq_connect_error(wk_pq_conn *c, const char *why, wk_error *err);
/* Forgets the last error. */
void wk__pq_clear_error(wk_pq_conn *c);
/* Sets the connection's one-line message from msg (NULL: empty), without trailing newlines. */
void wk__pq_set_message(wk_pq_conn *c, const char *msg);

/* Sends `sql` (simple protocol; params when nparams > 0 is handled by the caller through
 * PQsendQueryParams) and waits for its last result within the connection's deadline. On a
 * timeout the query is cancelled; *res is NULL and WK_ERR_IO is returned. */
wk_status wk__pq_run(wk_pq_conn *c, const char *sql, PGresult **res, wk_error *err);

/* Keeps the last result of a query in *last, as PQexec does: an error result wins over the
 * results after it. */
static inline void wk__pq_keep_result(PGresult **last, PGresult *r)
{
    if (*last != NULL && PQresultStatus(*last) == PGRES_FATAL_ERROR) {
        PQclear(r);
    } else {
        PQclear(*last);
        *last = r;
    }
}

/* Waits for the result of a query already sent, within the connection's deadline. */
wk_status wk__pq_wait(wk_pq_conn *c, PGresult **res, wk_error *err);

/* wk_pq_pool_acquire, but the connection handed out was made for this call (an idle one the
 * pool would have handed out is closed and its slot connected again): the loader's second
 * try after a lost connection, which must not meet another backend that is going away.
 * (pq_pool.c) */
wk_status wk__pq_pool_acquire_fresh(wk_pq_pool *p, uint32_t timeout_ms, wk_pq_conn **out,
                                    wk_error *err);

/* The most types the catalog query at connect reads (and a lazy load adds at once). */
#define WK__PQ_CATALOG_EAGER_MAX 4096
/* The most catalog types one connection holds; past it a column's unknown type is read as
 * text (with text results) or decoded as it would be without the catalog. */
#define WK__PQ_CATALOG_MAX 16384
/* The catalog query: the database's own types, but for table row types no column has. */
const char *wk__pq_catalog_sql(void);
/* Builds `*out` = base + the database's own types from the catalog query's result `r` (not
 * freed), counting them in c->catalog_types (c may be NULL: no cap, no message). A row that
 * cannot be read fails the build, the connection's message naming the type. */
wk_status wk__pq_catalog_build(wk_pq_conn *c, wk_pg_registry *base, const PGresult *r,
                               wk_pg_registry **out, wk_error *err);
/* The lazy load: when the described statement `desc` has columns of the database's own types
 * the snapshot does not know (table row types the connect skipped), loads them and their
 * dependencies in one query and makes the result the connection's snapshot (the old one
 * stays alive as its parent). Runs a query, so the unnamed prepared statement is gone
 * afterwards: true when it ran (the caller then sends its statement with its text again).
 * Failures leave the snapshot as it was. (pq_catalog.c) */
bool wk__pq_catalog_load_columns(wk_pq_conn *c, const PGresult *desc);

/* Monotonic milliseconds, for deadlines. */
static inline int64_t wk__pq_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Encodes params[0..n) with the connection's registry into `buf` (appending), recording each
 * one's type, format (binary, or text for text-only types and server-inferred TEXT), length
 * (-1 NULL) and offset in buf (SIZE_MAX NULL). On error err->offset is the parameter's index
 * and buf keeps what was appended before it. (pq_params.c) */
wk_status wk__pq_encode_params(const wk_pq_conn *conn, const wk_pq_param *params, size_t n,
                               wk_buf *buf, Oid *types, int *fmts, int *lens, size_t *offs,
                               wk_error *err);
/* What libpq takes per parameter (type, format, length) and each value's offset in the
 * encoding buffer, for `cap` parameters, kept by the statements that outlive one call (a
 * pipeline's batch, a non-blocking query). Zero-initialised: empty. (pq_params.c) */
typedef struct wk__pq_param_arrays {
    Oid *types;
    int *fmts, *lens;
    size_t *offs;
    size_t cap;
} wk__pq_param_arrays;
/* Makes room for `need` parameters (at least doubling; the first call allocates even for
 * none, so the arrays are never NULL once encoded into): WK_OK, or WK_ERR_NOMEM with `err`
 * filled and nothing lost. */
wk_status wk__pq_param_arrays_reserve(wk__pq_param_arrays *a, size_t need, wk_error *err);
/* wk__pq_encode_params into parameters at..at+n of `a`, grown first. Inline: a pipeline
 * calls it per statement and it rarely grows. */
static inline wk_status wk__pq_param_arrays_encode(wk__pq_param_arrays *a, size_t at,
                                                   const wk_pq_conn *conn,
                                                   const wk_pq_param *params, size_t n,
                                                   wk_buf *buf, wk_error *err)
{
    if (a->cap == 0 || at + n > a->cap) {
        wk_status st = wk__pq_param_arrays_reserve(a, at + n, err);
        if (st != WK_OK) {
            return st;
        }
    }
    return wk__pq_encode_params(conn, params, n, buf, a->types + at, a->fmts + at, a->lens + at,
                                a->offs + at, err);
}
/* Frees the arrays and empties `a`. */
void wk__pq_param_arrays_free(wk__pq_param_arrays *a);
/* The value pointers for libpq once `buf` is complete. */
void wk__pq_param_values(const wk_buf *buf, const size_t *offs, size_t n, const char **vals);
/* The result format for a described statement: 1 (binary) when the snapshot has a binary
 * decoder for every column, else 0 (text). */
int wk__pq_described_format(const wk_pq_conn *c, const PGresult *desc);

/* A hash of a statement's text and parameter types, never 0. (pq_stmt_cache.c) */
uint64_t wk__pq_stmt_hash(const char *sql, const Oid *types, size_t n);

/* Frees the connection's prepared-statement cache (the server side goes with the
 * connection). (pq_stmt_cache.c) */
void wk__pq_stmt_cache_free(wk_pq_conn *c);

/* ---- waiting within the deadline (pq_wait.c) ---- */

/* Now plus the connection's timeout, or INT64_MAX when it has none. */
int64_t wk__pq_deadline(const wk_pq_conn *c);
/* Waits until the socket is readable (or writable, with want_write), `deadline` passes, or
 * the connection's idle limit passes without an event (false: passed, either way). Waits at
 * most 60 s at a time without a deadline and without an idle limit. */
bool wk__pq_poll(wk_pq_conn *c, bool want_write, int64_t deadline);
/* Flushes what libpq holds to send (non-blocking mode), reading what the server sends
 * meanwhile: WK_OK, WK_ERR_IO past `deadline`, WK_ERR_CONNECT when the connection broke. */
wk_status wk__pq_flush(wk_pq_conn *c, int64_t deadline, wk_error *err);
/* Reads input until libpq has a result ready (true; also when the connection broke) or
 * `deadline` passes (false), flushing pending output meanwhile. */
bool wk__pq_await_ready(wk_pq_conn *c, int64_t deadline);
/* The socket has an event without waiting: readable (or writable, with want_write). An event
 * is recorded as the last time the server was heard from (c->heard_ms). */
bool wk__pq_look(wk_pq_conn *c, bool want_write);
/* A wait of an event-loop path starts (a query, a pipeline, a connect): the idle limit counts
 * from now. */
static inline void wk__pq_idle_restart(wk_pq_conn *c)
{
    c->heard_ms = wk__pq_now_ms();
}
/* When the idle limit of an event-loop path passes: the connection's idle_ms after the last
 * event a step saw (INT64_MAX without a limit). */
static inline int64_t wk__pq_idle_until(const wk_pq_conn *c)
{
    return c->idle_ms != 0 ? c->heard_ms + c->idle_ms : INT64_MAX;
}
/* An event-loop step's look at the socket before it reads (wk__pq_look), made only when the
 * idle limit or a cancel in flight needs to know whether the server was heard from. */
static inline void wk__pq_step_look(wk_pq_conn *c, bool cancelling, bool want_write)
{
    if (c->idle_ms != 0 || cancelling) {
        (void)wk__pq_look(c, want_write);
    }
}

/*
 * The cancel, one rule for every path that cancels (the blocking wait, wk_pq_next, COPY, the
 * non-blocking query, both ways of reading a pipeline, giving a query or COPY up):
 * - the request goes out on a helper thread (libpq 15's PQcancel blocks until the server
 *   closes the cancel connection, which a server that accepts it and never answers never
 *   does): no wait of the caller's blocks on it past the grace, and one that never returns
 *   is left behind, holding only its own copy of the cancel key; a connection has at most
 *   one out, and once the query is over waits for it (wk__pq_cancel_settle), so that no
 *   request reaches the next query;
 * - it is repeated every WK__PQ_CANCEL_AGAIN_MS (a request that reaches the backend before
 *   the query does is ignored);
 * - the server has WK__PQ_CANCEL_GRACE_MS of silence to end the query: the grace starts at
 *   the first request and again whenever the socket has something for the client (rows in
 *   flight, the error, a slow row function's output), up to WK__PQ_CANCEL_DRAIN_MS after the
 *   first request;
 * - the grace ends only after a look at the socket has found nothing: a client that was
 *   paused (a loaded machine) past the grace never gives up an answer waiting for it.
 * Past the grace the connection is given up (broken).
 */
#define WK__PQ_CANCEL_AGAIN_MS 200
#define WK__PQ_CANCEL_GRACE_MS 1000
#define WK__PQ_CANCEL_DRAIN_MS 60000

/* A cancel in progress (per query, pipeline or give-up). Zero-initialised: no request sent
 * yet. */
typedef struct wk__pq_cancelling {
    bool sent;         /* the first request went out */
    unsigned requests; /* requests handed to the helper so far */
    int64_t first;     /* when the first request went out */
    int64_t again;     /* when the next request is due */
} wk__pq_cancelling;
/* Sends the first cancel request and starts the grace (nothing when one was sent already). */
void wk__pq_cancel_begin(wk_pq_conn *c, wk__pq_cancelling *k);
/* When the next thing is due: the next request or the end of the grace, whichever comes
 * first. */
int64_t wk__pq_cancel_due(const wk_pq_conn *c, const wk__pq_cancelling *k);
/* Repeats the request when it is due. Returns the time until which to wait for the server
 * (wk__pq_cancel_due), or -1 once the grace has passed and a look at the socket found
 * nothing: the server answers neither the query nor the cancel. Never blocks. */
int64_t wk__pq_cancel_tick(wk_pq_conn *c, wk__pq_cancelling *k);
/* The query (or whatever was cancelled) is over: waits for a request still out to return,
 * at most until the grace ends. A request returns once the server has delivered it; one
 * still out might reach the next query on the connection, so when it does not return in
 * time the connection is marked broken (false). Blocks only that long: the one wait of the
 * event-loop paths, as long as the cancel exchange PQcancel made them wait before. */
bool wk__pq_cancel_settle(wk_pq_conn *c, const wk__pq_cancelling *k);
/* Cancels and waits: wk__pq_cancel_begin, then `ended(c, until, arg)` (true: the query
 * ended, or whatever the caller waits for arrived; false: `until` passed) between requests
 * until it is true (then wk__pq_cancel_settle's outcome) or the grace passes (false). */
bool wk__pq_cancel_wait(wk_pq_conn *c, wk__pq_cancelling *k,
                        bool (*ended)(wk_pq_conn *c, int64_t until, void *arg), void *arg);
/* Gives up the query or COPY in progress: cancels it, ends a COPY in, and drains what is in
 * flight within the cancel's grace. False when the server did not answer: the connection is
 * then marked broken. */
bool wk__pq_abandon(wk_pq_conn *c);
/* Whether a cancel request of `c` is still out (its helper has not returned from PQcancel):
 * no other goes out until it has. */
bool wk__pq_cancel_out(const wk_pq_conn *c);
/* The connection is freed: its share of the cancel helper's state goes (a request still out
 * keeps its own). */
void wk__pq_canceller_release(wk_pq_conn *c);

/* ---- result formats remembered per statement (pq_conn.c) ---- */

/* The cached result format of `sql` with these parameter types (false: not known yet). */
bool wk__pq_fmt_cached(const wk_pq_conn *c, const char *sql, const Oid *types, size_t n,
                       int *fmt);
/* Remembers the result format of `sql` with these parameter types. */
void wk__pq_fmt_remember(wk_pq_conn *c, const char *sql, const Oid *types, size_t n, int fmt);

/* ---- rows (pq_rows.c) ---- */

/* The column slices of one row of a PGresult (stack arrays for up to 64 columns). */
typedef struct wk__pq_slices {
    const uint8_t *vals_s[64];
    int lens_s[64];
    const uint8_t **vals;
    int *lens;
} wk__pq_slices;

/* Fills `s` with row `row` of `res` (lens -1 for NULL); release with wk__pq_slices_release.
 * WK_ERR_ARG when the plan's column count or the row does not match the result. */
wk_status wk__pq_gather(const wk_pg_plan *plan, const PGresult *res, int row,
                        wk__pq_slices *s, wk_error *err);
/* The same for `n` columns without a plan (a row description's). */
wk_status wk__pq_gather_n(size_t n, const PGresult *res, int row, wk__pq_slices *s,
                          wk_error *err);
void wk__pq_slices_release(wk__pq_slices *s);

#endif
