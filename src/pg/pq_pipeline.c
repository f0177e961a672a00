/*
 * Pipelines: many parameterised statements in one round trip (libpq pipeline mode), their
 * outcomes read back in order.
 *
 * wk_pq_pipeline_add encodes each statement's parameters at once into one buffer for the
 * whole batch (offsets, not pointers: it grows) and finds its prepared statement in the
 * connection's cache (pq_stmt_cache.c); nothing goes out until the batch is read or ended.
 * Then the statements the cache did not hold are prepared and described, each with its own
 * Sync so that one bad statement does not abort the others, in one round trip; the batch
 * follows (Bind/Execute of the prepared statements, or Parse too for those the server could
 * not prepare, with a text result) and one Sync; last come the DEALLOCATEs of statements the
 * cache evicted, each with its own Sync, answered after the batch.
 *
 * The connection is non-blocking while the pipeline runs: libpq buffers what the socket does
 * not take, and every wait (poll on the socket, for writing while output is pending and
 * always for reading) flushes output and consumes input, so a server that writes results
 * while the client is still sending can never deadlock the two. The loop that does so,
 * next_event(), has no other blocking call. An event loop drives the pipeline instead with
 * wk_pq_pipeline_step: each step writes what the socket takes and reads the answers that are
 * complete into a queue, and runs the next reading only once what it reads is queued;
 * next_event() takes from that queue first, so the readers are the same for both.
 *
 * A statement is OK only when its result arrived, FAILED only when the server's error report
 * (with a SQLSTATE) arrived; an error libpq makes up itself (a lost connection) ends the
 * reading and every statement not answered yet is UNKNOWN.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>

#include "pg/pg_internal.h"
#include "pg/pq_stmt_cache.h"

#define MAX_STMTS 1000000u

typedef struct pipe_stmt {
    long slot;       /* cache slot; -1: sent unprepared */
    size_t text;     /* its text in p->text; SIZE_MAX: its cache slot has it */
    size_t param0;   /* its first parameter in the parameter arrays */
    uint32_t nparams;
} pipe_stmt;

enum { ADDING, SENT };

struct wk_pq_pipeline {
    wk_pq_conn *c;
    wk__pq_stmt_cache *sc;
    uint64_t batch; /* marks the cache slots this batch uses */
    pipe_stmt *stmts;
    size_t n, cap;
    Oid *types; /* parameters of every statement, one after the other */
    int *fmts, *lens;
    size_t *offs;
    size_t np, pcap;
    wk_buf vals; /* the encoded parameter values */
    wk_buf text; /* texts of the statements without a cache slot, NUL-terminated */
    const char **valp;
    size_t valp_cap;
    int state;
    size_t next;       /* the next statement to report */
    bool need_end;     /* the last reported statement's end of results is still to be read */
    bool in_pipeline;  /* libpq is in pipeline mode */
    bool nonblocking;  /* the connection's mode before the pipeline */
    bool flushing;     /* output is still pending */
    bool failed;       /* a statement failed: its error is the connection's last */
    bool cancelled;    /* the deadline passed: the batch was cancelled */
    wk__pq_cancelling cancel; /* its cancel request, repeated until the server answers */
    wk_status lost;    /* WK_ERR_CONNECT or WK_ERR_IO once no more answers can come */
    PGresult *cur;     /* the result handed out last */
    int64_t deadline;
    size_t ndrop;      /* DEALLOCATEs sent after the batch */
    /* driven by an event loop (wk_pq_pipeline_step): libpq's answers are read ahead into a
     * queue as they arrive, and a call runs only once the queue holds what it reads */
    bool driven;
    bool preparing;    /* driven: the preparations' answers are awaited before the batch */
    bool cancel_answered; /* driven: answers came after the cancel request */
    PGresult **q;      /* a result, NULL (end of a query's results) or SYNC_EV */
    size_t q_head, q_n, q_cap;
    size_t syncs_sent, syncs_read; /* Syncs sent, and read into the queue */
};

/* The queue's mark for a Sync (never dereferenced). */
static char sync_mark;
#define SYNC_EV ((PGresult *)(void *)&sync_mark)

WK_API const char *wk_pq_stmt_state_str(wk_pq_stmt_state s)
{
    switch (s) {
    case WK_PQ_STMT_OK: return "ok";
    case WK_PQ_STMT_FAILED: return "failed: the server reported an error";
    case WK_PQ_STMT_ABORTED: return "aborted: an earlier statement of the pipeline failed";
    case WK_PQ_STMT_UNKNOWN: return "unknown: no answer from the server";
    }
    return "?";
}

/* Grows an array to hold `need` elements (doubling). */
static bool grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) {
        return true;
    }
    size_t ncap = *cap == 0 ? 16 : *cap;
    while (ncap < need) {
        ncap *= 2;
    }
    void *na = realloc(*arr, ncap * elem);
    if (na == NULL) {
        return false;
    }
    *arr = na;
    *cap = ncap;
    return true;
}

static bool grow_params(wk_pq_pipeline *p, size_t need)
{
    if (need <= p->pcap) {
        return true;
    }
    size_t cap = p->pcap; /* each array grows from the same old capacity */
    bool ok = grow((void **)&p->types, &cap, need, sizeof *p->types);
    cap = p->pcap;
    ok = ok && grow((void **)&p->fmts, &cap, need, sizeof *p->fmts);
    cap = p->pcap;
    ok = ok && grow((void **)&p->lens, &cap, need, sizeof *p->lens);
    cap = p->pcap;
    ok = ok && grow((void **)&p->offs, &cap, need, sizeof *p->offs);
    if (ok) {
        p->pcap = cap;
    }
    return ok;
}

WK_API wk_status wk_pq_pipeline_begin(wk_pq_conn *conn, wk_pq_pipeline **out, wk_error *err)
{
    *out = NULL;
    if (conn->broken) {
        wk__pq_set_message(conn, "the connection was given up after a timeout");
        return wk__pg_fail(err, WK_ERR_IO, 0, "the connection is unusable after a timeout");
    }
    wk__pq_stmt_cache *sc = wk__pq_stmts(conn);
    wk_pq_pipeline *p = sc != NULL ? calloc(1, sizeof *p) : NULL;
    if (p == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the pipeline");
    }
    if (sc->open) {
        free(p);
        return wk__pg_fail(err, WK_ERR_STATE, 0, "a pipeline is open on the connection");
    }
    sc->open = true;
    p->c = conn;
    p->sc = sc;
    p->batch = ++sc->batches;
    wk_buf_init(&p->vals, NULL, 0);
    wk_buf_init(&p->text, NULL, 0);
    *out = p;
    return WK_OK;
}

WK_API size_t wk_pq_pipeline_count(const wk_pq_pipeline *p)
{
    return p->n;
}

WK_API wk_status wk_pq_pipeline_add(wk_pq_pipeline *p, const char *sql,
                                    const wk_pq_param *params, size_t n, wk_error *err)
{
    if (p->state != ADDING) {
        return wk__pg_fail(err, WK_ERR_STATE, 0, "the pipeline was sent already");
    }
    if (n > 65535) {
        return wk__pg_fail(err, WK_ERR_LIMIT, 0, "PostgreSQL takes at most 65535 parameters");
    }
    if (sql == NULL || (params == NULL && n != 0)) {
        return wk__pg_fail(err, WK_ERR_ARG, 0, "a statement needs its text and parameters");
    }
    if (p->n >= MAX_STMTS) {
        return wk__pg_fail(err, WK_ERR_LIMIT, 0, "a pipeline holds at most 1,000,000 statements");
    }
    if (!grow((void **)&p->stmts, &p->cap, p->n + 1, sizeof *p->stmts) ||
        !grow_params(p, p->np + n)) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the pipeline");
    }
    size_t vlen = p->vals.len, tlen = p->text.len, at = p->np;
    wk_status st = wk__pq_encode_params(p->c, params, n, &p->vals, p->types + at, p->fmts + at,
                                        p->lens + at, p->offs + at, err);
    if (st == WK_OK) {
        st = wk_buf_append(&p->text, sql, strlen(sql) + 1);
        if (st != WK_OK) {
            wk__pg_fail(err, st, 0, "out of memory for the pipeline");
        }
    }
    long slot = -1;
    bool hit = false;
    if (st == WK_OK) {
        st = wk__pq_stmt_acquire(p->sc, sql, p->types + at, n, p->batch, &slot, &hit, err);
    }
    if (st != WK_OK) {
        p->vals.len = vlen;
        p->text.len = tlen;
        return st;
    }
    if (slot >= 0) {
        p->text.len = tlen; /* its slot has the text until the batch is sent */
    }
    pipe_stmt *s = &p->stmts[p->n++];
    s->slot = slot;
    s->text = slot >= 0 ? SIZE_MAX : tlen;
    s->param0 = at;
    s->nparams = (uint32_t)n;
    p->np += n;
    return WK_OK;
}

/* ---- reading ---------------------------------------------------------------------------- */

typedef enum ev { EV_RESULT, EV_END, EV_SYNC, EV_LOST } ev;

/* No more answers can come: every statement not answered yet is UNKNOWN. */
static void set_lost(wk_pq_pipeline *p, wk_status st, const char *msg)
{
    if (p->lost == WK_OK) {
        p->lost = st;
        wk__pq_set_message(p->c, msg != NULL ? msg : PQerrorMessage(p->c->pg));
    }
}

static void renew_deadline(wk_pq_pipeline *p)
{
    uint32_t t = p->c->timeout_ms;
    p->deadline = t != 0 ? wk__pq_now_ms() + t : INT64_MAX;
}

/* wk__pq_cancel_wait's wait in a pipeline: the server's next answer (or a broken
 * connection), flushing the batch's pending output meanwhile. */
static bool answered(wk_pq_conn *c, int64_t until, void *arg)
{
    (void)arg;
    return wk__pq_await_ready(c, until);
}

/* The next thing libpq has for the pipeline: a result, the end of a query's results (libpq's
 * NULL), a Sync, or EV_LOST when nothing more can come. Flushes pending output and consumes
 * input while it waits; past the deadline cancels the batch and waits out the cancel's
 * grace (wk__pq_cancel_wait). */
static ev next_event(wk_pq_pipeline *p, PGresult **r)
{
    wk_pq_conn *c = p->c;
    *r = NULL;
    if (p->lost != WK_OK) {
        return EV_LOST;
    }
    if (p->q_head < p->q_n) {
        *r = p->q[p->q_head++];
        if (*r == SYNC_EV) {
            *r = NULL;
            return EV_SYNC;
        }
        return *r == NULL ? EV_END : EV_RESULT;
    }
    if (p->driven) {
        /* a driven call runs only once its answers are queued, or the connection broke */
        if (PQstatus(c->pg) == CONNECTION_BAD) {
            set_lost(p, WK_ERR_CONNECT, NULL);
        } else {
            p->c->broken = true;
            set_lost(p, WK_ERR_CONNECT, "the server's answers did not match the pipeline's "
                                        "statements; the connection was given up");
        }
        return EV_LOST;
    }
    for (;;) {
        if (p->flushing) {
            int f = PQflush(c->pg);
            if (f < 0) {
                set_lost(p, WK_ERR_CONNECT, NULL);
                return EV_LOST;
            }
            p->flushing = f == 1;
        }
        if (!PQisBusy(c->pg)) {
            *r = PQgetResult(c->pg);
            renew_deadline(p);
            if (*r == NULL) {
                return EV_END;
            }
            if (PQresultStatus(*r) == PGRES_PIPELINE_SYNC) {
                PQclear(*r);
                *r = NULL;
                return EV_SYNC;
            }
            return EV_RESULT;
        }
        if (PQstatus(c->pg) == CONNECTION_BAD) {
            set_lost(p, WK_ERR_CONNECT, NULL);
            return EV_LOST;
        }
        if (wk__pq_now_ms() >= p->deadline) {
            /* the running statement fails with 57014, the rest of the batch is aborted */
            p->cancelled = true;
            if (!wk__pq_cancel_wait(c, &p->cancel, answered, NULL)) {
                c->broken = true;
                set_lost(p, WK_ERR_IO, "the pipeline timed out and the server did not answer "
                                       "the cancel request; the connection was given up");
                return EV_LOST;
            }
            renew_deadline(p);
            continue;
        }
        struct pollfd pf = {PQsocket(c->pg), (short)(POLLIN | (p->flushing ? POLLOUT : 0)), 0};
        int64_t left = p->deadline - wk__pq_now_ms();
        int rc = poll(&pf, 1, (int)(left > 60000 ? 60000 : left < 0 ? 0 : left));
        if (rc < 0 && errno != EINTR) {
            set_lost(p, WK_ERR_CONNECT, "poll() failed on the connection's socket");
            return EV_LOST;
        }
        if (rc > 0 && (pf.revents & (POLLIN | POLLERR | POLLHUP)) != 0) {
            (void)PQconsumeInput(c->pg); /* a failure shows as CONNECTION_BAD or a result */
        }
    }
}

/* libpq's answers do not match what was sent: nothing read from here on can be trusted. */
static void mismatch(wk_pq_pipeline *p)
{
    p->c->broken = true;
    set_lost(p, WK_ERR_CONNECT, "the server's answers did not match the pipeline's "
                                "statements; the connection was given up");
}

/* The next query's result, or NULL once lost. */
static PGresult *read_result(wk_pq_pipeline *p)
{
    PGresult *r = NULL;
    switch (next_event(p, &r)) {
    case EV_RESULT: return r;
    case EV_END:
        if (PQstatus(p->c->pg) == CONNECTION_BAD) {
            set_lost(p, WK_ERR_CONNECT, NULL);
        } else {
            mismatch(p);
        }
        return NULL;
    case EV_SYNC: mismatch(p); return NULL;
    case EV_LOST: return NULL;
    }
    return NULL;
}

/* Reads the end of a query's results (false: lost). */
static bool read_end(wk_pq_pipeline *p)
{
    PGresult *r = NULL;
    ev e = next_event(p, &r);
    PQclear(r);
    if (e != EV_END && e != EV_LOST) {
        mismatch(p);
    }
    return e == EV_END;
}

/* A result libpq made up itself (no SQLSTATE from the server) while the connection broke. */
static bool from_libpq(const PGresult *r)
{
    return PQresultErrorField(r, PG_DIAG_SQLSTATE) == NULL;
}

/* Reads up to a Sync (false: lost). An error before it is the commit's (a deferred
 * constraint, a serialization failure): the batch failed although its statements ran. */
static bool read_sync(wk_pq_pipeline *p)
{
    for (;;) {
        PGresult *r = NULL;
        ev e = next_event(p, &r);
        if (e == EV_RESULT && PQresultStatus(r) == PGRES_FATAL_ERROR && !from_libpq(r)) {
            (void)wk__pq_take_error(p->c, r, "the pipeline's commit failed", NULL);
            p->failed = true;
        } else if (e == EV_RESULT) {
            mismatch(p);
        }
        PQclear(r);
        if (e != EV_RESULT && e != EV_END) {
            return e == EV_SYNC;
        }
    }
}

/* ---- sending ---------------------------------------------------------------------------- */

static bool is_new(const wk_pq_pipeline *p, const wk__pq_stmt *s)
{
    return s->sql != NULL && s->batch == p->batch && !s->ready;
}

/* Prepares and describes the statements of this batch the cache did not hold (sent here,
 * their answers read by prepare_read: one round trip); one that fails stays unprepared (its statements go with their text, and fail in
 * place if they fail again) and is forgotten once the batch is sent. */
static size_t prepare_send(wk_pq_pipeline *p)
{
    wk__pq_stmt_cache *sc = p->sc;
    PGconn *pg = p->c->pg;
    size_t k = 0;
    for (size_t i = 0; i < sc->cap && p->lost == WK_OK; i++) {
        wk__pq_stmt *s = &sc->slots[i];
        if (!is_new(p, s)) {
            continue;
        }
        if (!PQsendPrepare(pg, s->name, s->sql, (int)s->ntypes, s->types) ||
            !PQsendDescribePrepared(pg, s->name) || !PQpipelineSync(pg)) {
            set_lost(p, WK_ERR_CONNECT, NULL);
        }
        k++;
    }
    p->syncs_sent += k;
    p->flushing = p->flushing || k > 0;
    return k;
}

/* Reads the answers to prepare_send's preparations. */
static void prepare_read(wk_pq_pipeline *p)
{
    wk__pq_stmt_cache *sc = p->sc;
    for (size_t i = 0; i < sc->cap && p->lost == WK_OK; i++) {
        wk__pq_stmt *s = &sc->slots[i];
        if (!is_new(p, s)) {
            continue;
        }
        PGresult *r = read_result(p);
        bool ok = r != NULL && PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
        if (r == NULL || !read_end(p)) {
            break;
        }
        r = read_result(p); /* the description, or PIPELINE_ABORTED */
        if (r != NULL && ok && PQresultStatus(r) == PGRES_COMMAND_OK) {
            s->format = wk__pq_described_format(p->c, r);
            s->ready = true;
        }
        PQclear(r);
        if (r == NULL || !read_end(p) || !read_sync(p)) {
            break;
        }
    }
}

/* Sends the batch and its Sync, then the evicted statements' DEALLOCATEs. */
static void send_batch(wk_pq_pipeline *p)
{
    PGconn *pg = p->c->pg;
    wk__pq_stmt_cache *sc = p->sc;
    for (size_t i = 0; i < p->n && p->lost == WK_OK; i++) {
        const pipe_stmt *s = &p->stmts[i];
        if (!grow((void **)&p->valp, &p->valp_cap, s->nparams, sizeof *p->valp)) {
            set_lost(p, WK_ERR_NOMEM, "out of memory for the pipeline");
            p->c->broken = true; /* part of the batch went out without its Sync */
            return;
        }
        size_t a = s->param0;
        wk__pq_param_values(&p->vals, p->offs + a, s->nparams, p->valp);
        const wk__pq_stmt *slot = s->slot >= 0 ? &sc->slots[s->slot] : NULL;
        int ok;
        if (slot != NULL && slot->ready && slot->batch == p->batch) {
            ok = PQsendQueryPrepared(pg, slot->name, (int)s->nparams, p->valp, p->lens + a,
                                     p->fmts + a, slot->format);
        } else {
            const char *sql = slot != NULL ? slot->sql : (const char *)p->text.data + s->text;
            ok = PQsendQueryParams(pg, sql, (int)s->nparams, p->types + a, p->valp,
                                   p->lens + a, p->fmts + a, 0);
        }
        if (!ok) {
            set_lost(p, WK_ERR_CONNECT, NULL);
        }
    }
    if (p->lost == WK_OK && !PQpipelineSync(pg)) {
        set_lost(p, WK_ERR_CONNECT, NULL);
    }
    p->syncs_sent++;
    for (size_t d = 0; d < sc->ndrop && p->lost == WK_OK; d++) {
        char sql[WK__PQ_STMT_NAME + 16];
        snprintf(sql, sizeof sql, "DEALLOCATE %s", sc->drop[d]);
        if (!PQsendQueryParams(pg, sql, 0, NULL, NULL, NULL, NULL, 0) || !PQpipelineSync(pg)) {
            set_lost(p, WK_ERR_CONNECT, NULL);
        }
        p->ndrop++;
        p->syncs_sent++;
    }
    sc->ndrop = 0;
    p->flushing = true;
}

/* Forgets the slots this batch took but never got prepared. */
static void release_new(wk_pq_pipeline *p)
{
    for (size_t i = 0; i < p->sc->cap; i++) {
        if (is_new(p, &p->sc->slots[i])) {
            wk__pq_stmt_forget(p->sc, (long)i, false);
        }
    }
}

/* Sends everything: the new statements' preparation, the batch, the DEALLOCATEs. */
static void start(wk_pq_pipeline *p)
{
    wk_pq_conn *c = p->c;
    p->state = SENT;
    wk__pq_clear_error(c);
    wk__pq_set_message(c, "");
    if (p->n == 0) {
        return;
    }
    if (!PQenterPipelineMode(c->pg)) {
        /* results of an earlier wk_pq_send not read yet, or no connection at all */
        set_lost(p, PQstatus(c->pg) == CONNECTION_BAD ? WK_ERR_CONNECT : WK_ERR_STATE, NULL);
        return;
    }
    p->in_pipeline = true;
    p->nonblocking = PQisnonblocking(c->pg) == 1;
    if (PQsetnonblocking(c->pg, 1) != 0) {
        set_lost(p, WK_ERR_CONNECT, NULL);
        return;
    }
    renew_deadline(p);
    if (prepare_send(p) > 0 && p->driven) {
        p->preparing = true; /* the batch follows once their answers are in (step) */
        return;
    }
    prepare_read(p);
    send_batch(p);
    release_new(p); /* the statements the server would not prepare went unprepared */
}

/* What the result of a statement says about it. */
static wk_pq_stmt_state classify(wk_pq_pipeline *p, const pipe_stmt *s, PGresult *r)
{
    switch (PQresultStatus(r)) {
    case PGRES_TUPLES_OK:
    case PGRES_COMMAND_OK:
    case PGRES_EMPTY_QUERY: return WK_PQ_STMT_OK;
    case PGRES_PIPELINE_ABORTED: return WK_PQ_STMT_ABORTED;
    case PGRES_FATAL_ERROR:
    case PGRES_NONFATAL_ERROR:
    case PGRES_BAD_RESPONSE:
        if (from_libpq(r)) {
            set_lost(p, WK_ERR_CONNECT, PQresultErrorMessage(r));
            return WK_PQ_STMT_UNKNOWN;
        }
        (void)wk__pq_take_error(p->c, r, "a statement of the pipeline failed", NULL);
        p->failed = true;
        if (s->slot >= 0 && p->sc->slots[s->slot].batch == p->batch) {
            /* its prepared statement is gone (26000) or stale (0A000: "cached plan must
             * not change result type"): prepare it afresh next time */
            const char *state = p->c->last.sqlstate;
            if (strcmp(state, "26000") == 0 || strcmp(state, "0A000") == 0) {
                wk__pq_stmt_forget(p->sc, s->slot, state[0] == '0');
            }
        }
        return WK_PQ_STMT_FAILED;
    default:
        /* COPY and the like cannot run in a pipeline: the protocol state is unknown */
        mismatch(p);
        return WK_PQ_STMT_UNKNOWN;
    }
}

/* The next statement's outcome (wk_pq_pipeline_next, and wk_pq_pipeline_step once its
 * answers are queued). */
static wk_status next_outcome(wk_pq_pipeline *p, wk_pq_stmt_result *out)
{
    memset(out, 0, sizeof *out);
    if (p->state == ADDING) {
        start(p);
    }
    PQclear(p->cur);
    p->cur = NULL;
    if (p->next >= p->n) {
        return WK_ERR_EOF;
    }
    const pipe_stmt *s = &p->stmts[p->next];
    out->index = p->next++;
    out->state = WK_PQ_STMT_UNKNOWN;
    if (p->need_end) {
        p->need_end = false;
        (void)read_end(p);
    }
    PGresult *r = read_result(p);
    if (r == NULL) {
        return WK_OK; /* lost: UNKNOWN */
    }
    out->state = classify(p, s, r);
    p->need_end = true;
    if (out->state == WK_PQ_STMT_OK || out->state == WK_PQ_STMT_FAILED) {
        p->cur = r;
        out->res = r;
        out->error = out->state == WK_PQ_STMT_FAILED ? wk_pq_last_error(p->c) : NULL;
    } else {
        PQclear(r);
    }
    return WK_OK;
}

/* The caller reads on with the blocking calls: the queue is read first, then libpq with its
 * waits; a batch still waiting for its preparations' answers is sent first. */
static void undrive(wk_pq_pipeline *p)
{
    p->driven = false;
    if (p->preparing) {
        p->preparing = false;
        prepare_read(p);
        send_batch(p);
        release_new(p);
    }
}

WK_API wk_status wk_pq_pipeline_next(wk_pq_pipeline *p, wk_pq_stmt_result *out, wk_error *err)
{
    (void)err;
    undrive(p);
    return next_outcome(p, out);
}

static void free_pipeline(wk_pq_pipeline *p)
{
    release_new(p);
    p->sc->open = false;
    PQclear(p->cur);
    for (size_t i = p->q_head; i < p->q_n; i++) {
        if (p->q[i] != SYNC_EV) {
            PQclear(p->q[i]);
        }
    }
    free(p->q);
    free(p->stmts);
    free(p->types);
    free(p->fmts);
    free(p->lens);
    free(p->offs);
    free(p->valp);
    wk_buf_free(&p->vals);
    wk_buf_free(&p->text);
    free(p);
}

WK_API wk_status wk_pq_pipeline_end(wk_pq_pipeline *p, wk_error *err)
{
    if (p == NULL) {
        return WK_OK;
    }
    undrive(p);
    wk_pq_stmt_result r;
    while (wk_pq_pipeline_next(p, &r, NULL) == WK_OK) {
    }
    wk_pq_conn *c = p->c;
    if (p->in_pipeline) {
        if (p->need_end) {
            (void)read_end(p);
        }
        (void)read_sync(p);
        for (size_t d = 0; d < p->ndrop && p->lost == WK_OK; d++) {
            PQclear(read_result(p)); /* a DEALLOCATE that fails changes nothing */
            (void)(read_end(p) && read_sync(p));
        }
        if (p->lost == WK_OK) {
            (void)PQexitPipelineMode(c->pg);
        }
        (void)PQsetnonblocking(c->pg, p->nonblocking ? 1 : 0);
    }
    wk_status st = WK_OK;
    if (p->lost != WK_OK) {
        st = wk__pg_fail(err, p->lost, 0,
                         p->lost == WK_ERR_IO      ? "the pipeline timed out"
                         : p->lost == WK_ERR_NOMEM ? "out of memory for the pipeline"
                         : p->lost == WK_ERR_STATE ? "the connection was busy with other results"
                                                   : "the connection was lost");
    } else if (p->cancelled) {
        wk__pq_set_message(c, "the pipeline timed out (cancelled)");
        st = wk__pg_fail(err, WK_ERR_IO, 0, "the pipeline timed out");
    } else if (p->failed) {
        st = wk__pg_fail(err, WK_ERR_SERVER, 0, "a statement of the pipeline failed");
    }
    free_pipeline(p);
    return st;
}

WK_API void wk_pq_pipeline_discard(wk_pq_pipeline *p)
{
    if (p == NULL) {
        return;
    }
    if (p->state == ADDING) {
        free_pipeline(p);
        return;
    }
    (void)wk_pq_pipeline_end(p, NULL);
}

/* ---- driven by an event loop ------------------------------------------------------------ */

/* Flushes pending output and reads every answer libpq has complete into the queue, up to the
 * last Sync sent (past it libpq has nothing more to give). */
static void pull(wk_pq_pipeline *p)
{
    PGconn *pg = p->c->pg;
    if (p->lost != WK_OK) {
        return;
    }
    if (p->flushing) {
        int f = PQflush(pg);
        if (f < 0) {
            set_lost(p, WK_ERR_CONNECT, NULL);
            return;
        }
        p->flushing = f == 1;
    }
    (void)PQconsumeInput(pg); /* a failure shows as CONNECTION_BAD */
    if (p->q_head == p->q_n) {
        p->q_head = p->q_n = 0; /* everything read: the queue starts over */
    }
    bool got = false;
    while (p->syncs_read < p->syncs_sent && PQstatus(pg) != CONNECTION_BAD && !PQisBusy(pg)) {
        if (!grow((void **)&p->q, &p->q_cap, p->q_n + 1, sizeof *p->q)) {
            p->c->broken = true;
            set_lost(p, WK_ERR_NOMEM, "out of memory for the pipeline");
            return;
        }
        PGresult *r = PQgetResult(pg);
        if (r != NULL && PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
            PQclear(r);
            r = SYNC_EV;
            p->syncs_read++;
        }
        p->q[p->q_n++] = r;
        got = true;
    }
    if (got) {
        renew_deadline(p);
        p->cancel_answered = p->cancel.sent;
    }
}

/* The queued answers not read yet. */
static size_t queued(const wk_pq_pipeline *p)
{
    return p->q_n - p->q_head;
}

/* Whether `need_syncs` Syncs and `need_events` answers are queued, or nothing more can come
 * (every Sync read, the connection broken or given up). */
static bool have(const wk_pq_pipeline *p, size_t need_syncs, size_t need_events)
{
    if (p->lost != WK_OK || PQstatus(p->c->pg) == CONNECTION_BAD ||
        p->syncs_read >= p->syncs_sent) {
        return true;
    }
    return p->syncs_read >= need_syncs && queued(p) >= need_events;
}

/* Whether the next step can run without waiting: what it reads is queued. */
static bool next_ready(const wk_pq_pipeline *p)
{
    if (p->state == ADDING) {
        return true;
    }
    if (p->preparing) {
        return have(p, p->syncs_sent, 0);
    }
    if (p->next < p->n) {
        return have(p, 0, p->need_end ? 2 : 1);
    }
    return have(p, p->syncs_sent, 0);
}

/* The deadline while nothing is ready: cancels the batch when it passes, repeats the request
 * as the shared cancel does, and gives the connection up when its grace ends. */
static wk_status check_deadline(wk_pq_pipeline *p)
{
    if (p->cancel.sent && !p->cancel_answered) {
        if (wk__pq_cancel_tick(p->c, &p->cancel) < 0) {
            p->c->broken = true;
            set_lost(p, WK_ERR_IO, "the pipeline timed out and the server did not answer "
                                   "the cancel request; the connection was given up");
        }
    } else if (wk__pq_now_ms() >= p->deadline && p->cancel.sent) {
        /* the deadline passed again after the cancel was answered, as in the blocking path */
        p->c->broken = true;
        set_lost(p, WK_ERR_IO, "the pipeline timed out and the server did not answer the "
                               "cancel request; the connection was given up");
    } else if (wk__pq_now_ms() >= p->deadline) {
        p->cancelled = true; /* the running statement fails with 57014, the rest aborted */
        wk__pq_cancel_begin(p->c, &p->cancel);
    }
    return WK_ERR_AGAIN;
}

WK_API wk_status wk_pq_pipeline_step(wk_pq_pipeline *p, wk_pq_stmt_result *out, wk_error *err)
{
    memset(out, 0, sizeof *out);
    if (p->state == ADDING) {
        p->driven = true;
        start(p);
    }
    if (!p->driven) {
        return wk__pg_fail(err, WK_ERR_STATE, 0, "the pipeline is read with wk_pq_pipeline_next");
    }
    pull(p);
    if (p->preparing) {
        if (!next_ready(p)) {
            return check_deadline(p);
        }
        p->preparing = false;
        prepare_read(p);
        send_batch(p);
        release_new(p);
        pull(p);
    }
    PQclear(p->cur);
    p->cur = NULL;
    if (!next_ready(p)) {
        return check_deadline(p);
    }
    if (p->next < p->n) {
        return next_outcome(p, out);
    }
    return WK_ERR_EOF;
}

WK_API int wk_pq_pipeline_socket(const wk_pq_pipeline *p)
{
    return PQsocket(p->c->pg);
}

WK_API unsigned wk_pq_pipeline_wants(const wk_pq_pipeline *p)
{
    if (!p->driven || next_ready(p)) {
        return 0; /* step without waiting */
    }
    return WK_PQ_WANT_READ | (p->flushing ? WK_PQ_WANT_WRITE : 0u);
}

WK_API int wk_pq_pipeline_timeout_ms(const wk_pq_pipeline *p)
{
    if (wk_pq_pipeline_wants(p) == 0) {
        return 0;
    }
    int64_t until = p->cancel.sent && !p->cancel_answered ? wk__pq_cancel_due(&p->cancel)
                                                          : p->deadline;
    if (until == INT64_MAX) {
        return -1;
    }
    int64_t left = until - wk__pq_now_ms();
    return left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}
