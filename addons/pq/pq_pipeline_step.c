/*
 * A pipeline driven by an event loop (wk_pq_pipeline_step): each step writes what the socket
 * takes and reads the answers that are complete into a queue, and runs the next reading only
 * once what it reads is queued, so no step ever waits; the readers (pq_pipeline_read.c) take
 * from that queue first. The deadline and the idle limit (no socket event for the
 * connection's idle_ms, seen by a look at the socket each step makes) are kept here as the
 * blocking path keeps them: when one passes the batch is cancelled, and from then on the
 * cancel's rule (pq_internal.h) decides when the connection is given up.
 */
#include <limits.h>

#include "pq/pq_pipeline.h"

/* Flushes pending output and reads every answer libpq has complete into the queue, up to the
 * last Sync sent (past it libpq has nothing more to give). */
static void pull(wk_pq_pipeline *p)
{
    PGconn *pg = p->c->pg;
    if (p->lost != WK_OK) {
        return;
    }
    wk__pq_step_look(p->c, p->cancel.sent, p->flushing);
    if (p->flushing) {
        int f = PQflush(pg);
        if (f < 0) {
            wk__pq_pipe_set_lost(p, WK_ERR_CONNECT, NULL);
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
        if (!wk__pq_pipe_grow((void **)&p->q, &p->q_cap, p->q_n + 1, sizeof *p->q)) {
            p->c->broken = true;
            wk__pq_pipe_set_lost(p, WK_ERR_NOMEM, "out of memory for the pipeline");
            return;
        }
        PGresult *r = PQgetResult(pg);
        if (r != NULL && PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
            PQclear(r);
            r = WK__PQ_SYNC_EV;
            p->syncs_read++;
        }
        p->q[p->q_n++] = r;
        got = true;
    }
    if (got) {
        wk__pq_pipe_renew_deadline(p);
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
    if (p->state == WK__PQ_PIPE_ADDING) {
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

/* The deadline and the idle limit while nothing is ready: cancels the batch when one passes;
 * once cancelled, the shared cancel repeats the request and ends the grace. */
static wk_status check_deadline(wk_pq_pipeline *p)
{
    int64_t now = wk__pq_now_ms();
    if (p->cancel.sent) {
        if (wk__pq_cancel_tick(p->c, &p->cancel) < 0) {
            wk__pq_pipe_give_up(p);
        }
    } else if (now >= p->deadline || now >= wk__pq_idle_until(p->c)) {
        p->cancelled = true; /* the running statement fails with 57014, the rest aborted */
        wk__pq_cancel_begin(p->c, &p->cancel);
    }
    return WK_ERR_AGAIN;
}

WK_API wk_status wk_pq_pipeline_step(wk_pq_pipeline *p, wk_pq_stmt_result *out, wk_error *err)
{
    memset(out, 0, sizeof *out);
    if (p->state == WK__PQ_PIPE_ADDING) {
        p->driven = true;
        wk__pq_pipe_start(p);
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
        wk__pq_pipe_send_batch(p);
        pull(p);
    }
    PQclear(p->cur);
    p->cur = NULL;
    if (!next_ready(p)) {
        return check_deadline(p);
    }
    if (p->next < p->n) {
        return wk__pq_pipe_next_outcome(p, out);
    }
    if (p->cancel.sent && p->lost == WK_OK && !wk__pq_cancel_settle(p->c, &p->cancel)) {
        wk__pq_pipe_give_up(p); /* a request still out could reach the next query */
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
    int64_t idle = wk__pq_idle_until(p->c);
    int64_t until = p->cancel.sent       ? wk__pq_cancel_due(p->c, &p->cancel)
                    : idle < p->deadline ? idle
                                         : p->deadline;
    if (until == INT64_MAX) {
        return -1;
    }
    int64_t left = until - wk__pq_now_ms();
    return left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}
