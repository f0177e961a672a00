/*
 * The state of a pipeline, shared by the files that run it: pq_pipeline.c (adding
 * statements, reading outcomes with the blocking calls, ending), pq_pipeline_send.c (what
 * goes out: the preparations, the batch, the DEALLOCATEs), pq_pipeline_read.c (what comes
 * back: libpq's events, each statement's outcome) and pq_pipeline_step.c (an event loop
 * driving the pipeline without blocking); and the two small helpers every path calls
 * (growing an array, leaving the event loop), inline.
 *
 * The parameters of every statement are encoded into one buffer for the whole batch, kept as
 * offsets (the buffer grows while statements are added) and turned into pointers only when
 * the batch is sent. Driven by an event loop, libpq's answers are read ahead into a queue
 * whose entries are a result, NULL (the end of a query's results) or WK__PQ_SYNC_EV (a
 * Sync); the blocking readers take from that queue before they wait on libpq, so both ways
 * of running share one set of readers.
 */
#ifndef WK_PQ_PIPELINE_H
#define WK_PQ_PIPELINE_H

#include "pg/pg_interface.h"
#include <stdlib.h>

#include "pq/pq_stmt_cache.h"

/* A pipeline holds at most this many statements. */
#define WK__PQ_PIPE_MAX_STMTS 1000000u

typedef struct wk__pq_pipe_stmt {
    long slot;       /* cache slot; -1: sent unprepared */
    size_t text;     /* its text in p->text; SIZE_MAX: its cache slot has it */
    size_t param0;   /* its first parameter in the parameter arrays */
    uint32_t nparams;
} wk__pq_pipe_stmt;

/* A pipeline is adding statements until its first outcome is asked for, then sent. */
enum { WK__PQ_PIPE_ADDING, WK__PQ_PIPE_SENT };

struct wk_pq_pipeline {
    wk_pq_conn *c;
    wk__pq_stmt_cache *sc;
    uint64_t batch; /* marks the cache slots this batch uses */
    wk__pq_pipe_stmt *stmts;
    size_t n, cap;
    wk__pq_param_arrays prm; /* parameters of every statement, one after the other */
    size_t np;               /* how many */
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
    bool reset_sent;   /* the batch is led by the empty statement (prepare_send) */
    bool preparing;    /* driven: the preparations' answers are awaited before the batch */
    PGresult **q;      /* a result, NULL (end of a query's results) or WK__PQ_SYNC_EV */
    size_t q_head, q_n, q_cap;
    size_t syncs_sent, syncs_read; /* Syncs sent, and read into the queue */
};

/* The queue's mark for a Sync (never dereferenced). (pq_pipeline_read.c) */
extern char wk__pq_sync_mark;
#define WK__PQ_SYNC_EV ((PGresult *)(void *)&wk__pq_sync_mark)

/* Grows an array to hold `need` elements of `elem` bytes (doubling); false: no memory, the
 * array unchanged. Inline: the batch calls it once per statement. */
static inline bool wk__pq_pipe_grow(void **arr, size_t *cap, size_t need, size_t elem)
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

/* ---- sending (pq_pipeline_send.c) ---- */

/* Sends everything: the new statements' preparations, then (at once, unless driven: the
 * event loop sends it once their answers are in) the batch and the DEALLOCATEs. */
void wk__pq_pipe_start(wk_pq_pipeline *p);
/* Reads the preparations' answers, sends the batch and the DEALLOCATEs, and forgets the
 * statements the server would not prepare. */
void wk__pq_pipe_send_batch(wk_pq_pipeline *p);
/* Forgets the cache slots this batch took but never got prepared. */
void wk__pq_pipe_release_new(wk_pq_pipeline *p);

/* ---- reading (pq_pipeline_read.c) ---- */

/* No more answers can come: every statement not answered yet is UNKNOWN. `msg` NULL: libpq's
 * message. The first call wins. */
void wk__pq_pipe_set_lost(wk_pq_pipeline *p, wk_status st, const char *msg);
/* The deadline passed and the server answered neither the batch nor the cancel request:
 * the connection is given up (WK_ERR_IO). */
void wk__pq_pipe_give_up(wk_pq_pipeline *p);
/* The deadline (the connection's timeout; none: INT64_MAX) and the idle limit start over
 * from now. */
void wk__pq_pipe_renew_deadline(wk_pq_pipeline *p);
/* The next query's result, or NULL once lost. */
PGresult *wk__pq_pipe_read_result(wk_pq_pipeline *p);
/* Reads the end of a query's results (false: lost). */
bool wk__pq_pipe_read_end(wk_pq_pipeline *p);
/* Reads up to a Sync (false: lost); an error before it fails the batch (the commit's). */
bool wk__pq_pipe_read_sync(wk_pq_pipeline *p);
/* The next statement's outcome, sending the batch first if it is still being added:
 * WK_ERR_EOF after the last. */
wk_status wk__pq_pipe_next_outcome(wk_pq_pipeline *p, wk_pq_stmt_result *out);

/* ---- leaving the event loop ---- */

/* The caller reads on with the blocking calls: the queue is read first, then libpq with its
 * waits; a batch still waiting for its preparations' answers is sent first. Inline: every
 * blocking read starts with it. */
static inline void wk__pq_pipe_undrive(wk_pq_pipeline *p)
{
    p->driven = false;
    if (p->preparing) {
        p->preparing = false;
        wk__pq_pipe_send_batch(p);
    }
}

#endif
