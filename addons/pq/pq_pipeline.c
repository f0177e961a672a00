/*
 * Pipelines: many parameterised statements in one round trip (libpq pipeline mode), their
 * outcomes read back in order. This file holds a pipeline's life: beginning it, adding
 * statements, reading outcomes with the blocking calls, ending it.
 *
 * wk_pq_pipeline_add encodes each statement's parameters at once into one buffer for the
 * whole batch (offsets, not pointers: it grows) and finds its prepared statement in the
 * connection's cache (pq_stmt_cache.c); nothing goes out until the batch is read or ended
 * (pq_pipeline_send.c sends it, pq_pipeline_read.c reads the answers, pq_pipeline_step.c
 * lets an event loop drive both). Ending a pipeline reads what is left of its answers (the
 * outcomes nobody asked for, the Syncs, the DEALLOCATEs') so that the connection is ready
 * for the next query, and reports the first thing that went wrong.
 */
#include <stdlib.h>

#include "pq/pq_pipeline.h"

/* Public (wirekit/pq.h): a sentence for each outcome state, for messages. */
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

/* Public: one pipeline at a time per connection (the statement cache is its); a broken
 * connection is refused. Nothing is sent yet. */
WK_API wk_status wk_pq_pipeline_begin(wk_pq_conn *conn, wk_pq_pipeline **out, wk_error *err)
{
    *out = NULL;
    if (conn->broken) {
        wk__pq_set_message(conn, "the connection was given up after a timeout");
        return wk__pg_fail(err, WK_ERR_IO, 0, "the connection is unusable after a timeout");
    }
    if (wk__pq_async_in_flight(conn, "a pipeline", err)) {
        return WK_ERR_STATE;
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

/* Public: the statements added so far. */
WK_API size_t wk_pq_pipeline_count(const wk_pq_pipeline *p)
{
    return p->n;
}

/* Public: queues one statement, its parameters encoded now (the caller's values may go
 * away) and its prepared statement looked up or reserved in the cache. */
WK_API wk_status wk_pq_pipeline_add(wk_pq_pipeline *p, const char *sql,
                                    const wk_pq_param *params, size_t n, wk_error *err)
{
    if (p->state != WK__PQ_PIPE_ADDING) {
        return wk__pg_fail(err, WK_ERR_STATE, 0, "the pipeline was sent already");
    }
    if (n > 65535) {
        return wk__pg_fail(err, WK_ERR_LIMIT, 0, "PostgreSQL takes at most 65535 parameters");
    }
    if (sql == NULL || (params == NULL && n != 0)) {
        return wk__pg_fail(err, WK_ERR_ARG, 0, "a statement needs its text and parameters");
    }
    if (p->n >= WK__PQ_PIPE_MAX_STMTS) {
        return wk__pg_fail(err, WK_ERR_LIMIT, 0, "a pipeline holds at most 1,000,000 statements");
    }
    if (!wk__pq_pipe_grow((void **)&p->stmts, &p->cap, p->n + 1, sizeof *p->stmts)) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the pipeline");
    }
    size_t vlen = p->vals.len, tlen = p->text.len, at = p->np;
    wk_status st = wk__pq_param_arrays_encode(&p->prm, at, p->c, params, n, &p->vals, err);
    if (st == WK_OK) {
        st = wk_buf_append(&p->text, sql, strlen(sql) + 1);
        if (st != WK_OK) {
            wk__pg_fail(err, st, 0, "out of memory for the pipeline");
        }
    }
    long slot = -1;
    bool hit = false;
    if (st == WK_OK) {
        st = wk__pq_stmt_acquire(p->sc, sql, p->prm.types + at, n, p->batch, &slot, &hit, err);
    }
    if (st != WK_OK) {
        p->vals.len = vlen;
        p->text.len = tlen;
        return st;
    }
    if (slot >= 0) {
        p->text.len = tlen; /* its slot has the text until the batch is sent */
    }
    wk__pq_pipe_stmt *s = &p->stmts[p->n++];
    s->slot = slot;
    s->text = slot >= 0 ? SIZE_MAX : tlen;
    s->param0 = at;
    s->nparams = (uint32_t)n;
    p->np += n;
    return WK_OK;
}

/* Public: the next statement's outcome, in order, sending the batch first if needed and
 * waiting on the socket (the blocking path). */
WK_API wk_status wk_pq_pipeline_next(wk_pq_pipeline *p, wk_pq_stmt_result *out, wk_error *err)
{
    (void)err;
    wk__pq_pipe_undrive(p);
    return wk__pq_pipe_next_outcome(p, out);
}

/* Frees everything the pipeline holds (queued results, the encoded batch) and frees the
 * connection's statement cache for the next pipeline. */
static void free_pipeline(wk_pq_pipeline *p)
{
    wk__pq_pipe_release_new(p);
    p->sc->open = false;
    PQclear(p->cur);
    for (size_t i = p->q_head; i < p->q_n; i++) {
        if (p->q[i] != WK__PQ_SYNC_EV) {
            PQclear(p->q[i]);
        }
    }
    free(p->q);
    free(p->stmts);
    wk__pq_param_arrays_free(&p->prm);
    free(p->valp);
    wk_buf_free(&p->vals);
    wk_buf_free(&p->text);
    free(p);
}

/* Public: reads every outcome not asked for and what follows (Syncs, DEALLOCATEs), so the
 * connection is ready for the next query; returns the first failure. Frees p. */
WK_API wk_status wk_pq_pipeline_end(wk_pq_pipeline *p, wk_error *err)
{
    if (p == NULL) {
        return WK_OK;
    }
    wk__pq_pipe_undrive(p);
    wk_pq_stmt_result r;
    while (wk_pq_pipeline_next(p, &r, NULL) == WK_OK) {
    }
    wk_pq_conn *c = p->c;
    if (p->in_pipeline) {
        if (p->need_end) {
            (void)wk__pq_pipe_read_end(p);
        }
        (void)wk__pq_pipe_read_sync(p);
        for (size_t d = 0; d < p->ndrop && p->lost == WK_OK; d++) {
            PQclear(wk__pq_pipe_read_result(p)); /* a DEALLOCATE that fails changes nothing */
            (void)(wk__pq_pipe_read_end(p) && wk__pq_pipe_read_sync(p));
        }
        if (p->lost == WK_OK) {
            (void)PQexitPipelineMode(c->pg);
        }
        (void)PQsetnonblocking(c->pg, p->nonblocking ? 1 : 0);
    }
    if (p->cancel.sent && p->lost == WK_OK && !wk__pq_cancel_settle(c, &p->cancel)) {
        wk__pq_pipe_give_up(p); /* a request still out could reach the next query */
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

/* Public: a pipeline never sent is just freed; one sent is ended as wk_pq_pipeline_end ends
 * it, its failure ignored. */
WK_API void wk_pq_pipeline_discard(wk_pq_pipeline *p)
{
    if (p == NULL) {
        return;
    }
    if (p->state == WK__PQ_PIPE_ADDING) {
        free_pipeline(p);
        return;
    }
    (void)wk_pq_pipeline_end(p, NULL);
}

