/*
 * What a pipeline sends, all at once when its first outcome is asked for: the statements the
 * connection's cache did not hold are prepared and described first, each with its own Sync
 * so that one bad statement does not abort the others, in one round trip; the batch follows
 * (Bind/Execute of the prepared statements, or Parse too for those the server could not
 * prepare, with a text result) and one Sync; last come the DEALLOCATEs of statements the
 * cache evicted, each with its own Sync, answered after the batch.
 *
 * The connection is non-blocking while the pipeline runs: libpq buffers what the socket does
 * not take, and the readers (pq_pipeline_read.c) flush it while they wait, so a server that
 * writes results while the client is still sending can never deadlock the two.
 */
#include <stdio.h>

#include "pq/pq_pipeline.h"

/* A slot this batch reserved and the server has not prepared yet. */
static bool is_new(const wk_pq_pipeline *p, const wk__pq_stmt *s)
{
    return s->sql != NULL && s->batch == p->batch && !s->ready;
}

/* Prepares and describes the statements of this batch the cache did not hold (sent here,
 * their answers read by prepare_read: one round trip); one that fails stays unprepared (its
 * statements go with their text, and fail in place if they fail again) and is forgotten once
 * the batch is sent. */
static size_t prepare_send(wk_pq_pipeline *p)
{
    wk__pq_stmt_cache *sc = p->sc;
    PGconn *pg = p->c->pg;
    size_t k = 0;
    if (p->c->single_row_left) {
        /* single-row mode left set by an earlier query (pq_internal.h): libpq clears it
         * when it moves from one pipeline command to the next, so the batch is led by a
         * command without rows, the empty unnamed statement, in the same round trip */
        if (!PQsendPrepare(pg, "", "", 0, NULL) || !PQpipelineSync(pg)) {
            wk__pq_pipe_set_lost(p, WK_ERR_CONNECT, NULL);
        }
        p->c->single_row_left = false;
        p->reset_sent = true;
        k++;
    }
    for (size_t i = 0; i < sc->cap && p->lost == WK_OK; i++) {
        wk__pq_stmt *s = &sc->slots[i];
        if (!is_new(p, s)) {
            continue;
        }
        if (!PQsendPrepare(pg, s->name, s->sql, (int)s->ntypes, s->types) ||
            !PQsendDescribePrepared(pg, s->name) || !PQpipelineSync(pg)) {
            wk__pq_pipe_set_lost(p, WK_ERR_CONNECT, NULL);
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
    if (p->reset_sent && p->lost == WK_OK) {
        PGresult *r = wk__pq_pipe_read_result(p); /* its answer says nothing of the batch */
        PQclear(r);
        if (r == NULL || !wk__pq_pipe_read_end(p) || !wk__pq_pipe_read_sync(p)) {
            return;
        }
    }
    for (size_t i = 0; i < sc->cap && p->lost == WK_OK; i++) {
        wk__pq_stmt *s = &sc->slots[i];
        if (!is_new(p, s)) {
            continue;
        }
        PGresult *r = wk__pq_pipe_read_result(p);
        bool ok = r != NULL && PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
        if (r == NULL || !wk__pq_pipe_read_end(p)) {
            break;
        }
        r = wk__pq_pipe_read_result(p); /* the description, or PIPELINE_ABORTED */
        if (r != NULL && ok && PQresultStatus(r) == PGRES_COMMAND_OK) {
            s->format = wk__pq_described_format(p->c, r);
            s->ready = true;
        }
        PQclear(r);
        if (r == NULL || !wk__pq_pipe_read_end(p) || !wk__pq_pipe_read_sync(p)) {
            break;
        }
    }
}

/* Sends the batch and its Sync, then the evicted statements' DEALLOCATEs. */
static void send_statements(wk_pq_pipeline *p)
{
    PGconn *pg = p->c->pg;
    wk__pq_stmt_cache *sc = p->sc;
    for (size_t i = 0; i < p->n && p->lost == WK_OK; i++) {
        const wk__pq_pipe_stmt *s = &p->stmts[i];
        if (!wk__pq_pipe_grow((void **)&p->valp, &p->valp_cap, s->nparams, sizeof *p->valp)) {
            wk__pq_pipe_set_lost(p, WK_ERR_NOMEM, "out of memory for the pipeline");
            p->c->broken = true; /* part of the batch went out without its Sync */
            return;
        }
        size_t a = s->param0;
        const wk__pq_param_arrays *prm = &p->prm;
        wk__pq_param_values(&p->vals, prm->offs + a, s->nparams, p->valp);
        const wk__pq_stmt *slot = s->slot >= 0 ? &sc->slots[s->slot] : NULL;
        int ok;
        if (slot != NULL && slot->ready && slot->batch == p->batch) {
            ok = PQsendQueryPrepared(pg, slot->name, (int)s->nparams, p->valp, prm->lens + a,
                                     prm->fmts + a, slot->format);
        } else {
            const char *sql = slot != NULL ? slot->sql : (const char *)p->text.data + s->text;
            ok = PQsendQueryParams(pg, sql, (int)s->nparams, prm->types + a, p->valp,
                                   prm->lens + a, prm->fmts + a, 0);
        }
        if (!ok) {
            wk__pq_pipe_set_lost(p, WK_ERR_CONNECT, NULL);
        }
    }
    if (p->lost == WK_OK && !PQpipelineSync(pg)) {
        wk__pq_pipe_set_lost(p, WK_ERR_CONNECT, NULL);
    }
    p->syncs_sent++;
    for (size_t d = 0; d < sc->ndrop && p->lost == WK_OK; d++) {
        char sql[WK__PQ_STMT_NAME + 16];
        snprintf(sql, sizeof sql, "DEALLOCATE %s", sc->drop[d]);
        if (!PQsendQueryParams(pg, sql, 0, NULL, NULL, NULL, NULL, 0) || !PQpipelineSync(pg)) {
            wk__pq_pipe_set_lost(p, WK_ERR_CONNECT, NULL);
        }
        p->ndrop++;
        p->syncs_sent++;
    }
    sc->ndrop = 0;
    p->flushing = true;
}

/* Contract in pq_pipeline.h: frees the slots this batch reserved but could not prepare, so
 * they are not taken for prepared statements later. */
void wk__pq_pipe_release_new(wk_pq_pipeline *p)
{
    for (size_t i = 0; i < p->sc->cap; i++) {
        if (is_new(p, &p->sc->slots[i])) {
            wk__pq_stmt_forget(p->sc, (long)i, false);
        }
    }
}

/* Contract in pq_pipeline.h: reads the prepare answers, then sends the batch and its Sync. */
void wk__pq_pipe_send_batch(wk_pq_pipeline *p)
{
    prepare_read(p);
    send_statements(p);
    wk__pq_pipe_release_new(p); /* the statements the server would not prepare went unprepared */
}

/* Contract in pq_pipeline.h: switches the connection to pipeline and non-blocking mode, sends
 * the prepares (with their describes) of the statements the cache does not hold, then the
 * batch: at once, or, when an event loop drives the pipeline, once the prepares are answered. */
void wk__pq_pipe_start(wk_pq_pipeline *p)
{
    wk_pq_conn *c = p->c;
    p->state = WK__PQ_PIPE_SENT;
    wk__pq_clear_error(c);
    wk__pq_set_message(c, "");
    if (p->n == 0) {
        return;
    }
    if (!PQenterPipelineMode(c->pg)) {
        /* results of an earlier wk_pq_send not read yet, or no connection at all */
        wk__pq_pipe_set_lost(p, PQstatus(c->pg) == CONNECTION_BAD ? WK_ERR_CONNECT : WK_ERR_STATE,
                             NULL);
        return;
    }
    p->in_pipeline = true;
    p->nonblocking = PQisnonblocking(c->pg) == 1;
    if (PQsetnonblocking(c->pg, 1) != 0) {
        wk__pq_pipe_set_lost(p, WK_ERR_CONNECT, NULL);
        return;
    }
    wk__pq_pipe_renew_deadline(p);
    if (prepare_send(p) > 0 && p->driven) {
        p->preparing = true; /* the batch follows once their answers are in (step) */
        return;
    }
    wk__pq_pipe_send_batch(p);
}
