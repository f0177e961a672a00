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
/* A cancel request that arrives before the backend has started the query is ignored by the
 * server: while waiting for a cancelled query to end, the request is sent again this often. */
#define WK__PQ_CANCEL_AGAIN_MS 200
/* How long the server has, after the first cancel request, to end the query; it starts
 * again whenever the query's results keep coming (wk__pq_cancel_answered). */
#define WK__PQ_CANCEL_GRACE_MS 1000
/* The longest a cancelled query whose results keep coming may take to end: the rows in
 * flight when the cancel went out (socket buffers full of them) are drained first, which a
 * loaded machine may take many seconds to do. */
#define WK__PQ_CANCEL_DRAIN_MS 60000

/* A cancel in progress, shared by every path that cancels (the blocking wait, the
 * non-blocking query, the pipeline, giving a query or COPY up): the first request, the
 * request repeated every WK__PQ_CANCEL_AGAIN_MS, and the grace within which the server must
 * end the query. Zero-initialised: no request sent yet. */
typedef struct wk__pq_cancelling {
    bool sent;         /* the first request went out */
    unsigned requests; /* requests sent so far */
    int64_t again;     /* when the next request is due */
    int64_t grace;     /* the end of the grace */
    int64_t limit;     /* the latest the grace may be moved to */
} wk__pq_cancelling;
/* When the next thing is due after a request: the next request or the end of the grace. */
static inline int64_t wk__pq_cancel_due(const wk__pq_cancelling *k)
{
    return k->again < k->grace ? k->again : k->grace;
}
/* Sends the first cancel request and starts the grace (nothing when one was sent already). */
void wk__pq_cancel_begin(wk_pq_conn *c, wk__pq_cancelling *k);
/* The query's results came in after the request (the server is answering, busy with the rows
 * in flight): the grace starts again, up to WK__PQ_CANCEL_DRAIN_MS after the first request.
 * Without this a client slower than the server gives a healthy connection up. */
void wk__pq_cancel_answered(wk__pq_cancelling *k);
/* Repeats the request when it is due. Returns the time until which to wait for the server
 * (the next request or the end of the grace, whichever comes first), or -1 once the grace has
 * passed: the server answers neither the query nor the cancel. Never blocks but for the
 * request itself (PQcancel). */
int64_t wk__pq_cancel_tick(wk_pq_conn *c, wk__pq_cancelling *k);
/* Cancels and waits: wk__pq_cancel_begin, then `ended(c, until, arg)` (true: the query
 * ended, or whatever the caller waits for arrived; false: `until` passed) between requests
 * until it is true (returns true) or the grace passes (false). */
bool wk__pq_cancel_wait(wk_pq_conn *c, wk__pq_cancelling *k,
                        bool (*ended)(wk_pq_conn *c, int64_t until, void *arg), void *arg);
/* Gives up the query or COPY in progress: cancels it (again every WK__PQ_CANCEL_AGAIN_MS),
 * ends a COPY in, and drains what is in flight for at most one second. False when the server
 * did not answer: the connection is then marked broken. */
bool wk__pq_abandon(wk_pq_conn *c);

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
