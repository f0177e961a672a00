/*
 * Internal state of a change stream, shared by the pq_repl_*.c files: the stream object, the
 * per-table descriptions built from Relation messages, and the buffers of transactions the
 * server streams while they are in progress.
 */
#ifndef WK_PQ_REPL_INTERNAL_H
#define WK_PQ_REPL_INTERNAL_H

#include <signal.h>
#include <stdio.h>

#include "pq/pq_internal.h"
#include "pq/pq_repl_msg.h"

/* The most tables one stream keeps descriptions of, and the most transactions it buffers at
 * once: past them the stream fails with WK_ERR_LIMIT instead of growing without end. */
#define WK__REPL_MAX_RELATIONS 65536u
#define WK__REPL_MAX_STREAMED 64u
/* The most subtransactions of one streamed transaction whose start is remembered (an aborted
 * subtransaction's changes are cut off the buffer from there). */
#define WK__REPL_MAX_SUBXACTS 65536u
/* Types no codec knows even after the catalog was read again, remembered so that their Type
 * messages do not have it read again each time. */
#define WK__REPL_MAX_UNKNOWN 64u

/* A row image's shape: per column 0 (left out), 't' (text) or 'b' (binary). A description of
 * the row policy is kept for the last shape seen on each side, so that an update that leaves
 * a TOASTed column out or a key-only old row costs one build, not one per row. */
typedef struct wk__repl_shape {
    char *mask;              /* ncols bytes, NULL until built */
    wk_pg_rowdesc *desc;     /* for the columns present, in table order */
    wk_pg_row_opts opts;     /* the options it was built with */
    size_t *cols;            /* desc column -> table column */
    size_t n;                /* columns present */
} wk__repl_shape;

/* A published table as the last Relation message described it. */
typedef struct wk__repl_rel {
    wk_pq_change_table pub;  /* what the callback sees */
    wk_pq_change_column *cols;
    char *strings;           /* schema, name, qualified name and column names */
    const wk_pg_decoder **text; /* per column: the TEXT decoder of its type, for ids */
    const wk_pg_decoder **text_fmt; /* the same for text-format values */
    wk__repl_shape shape_new, shape_old;
} wk__repl_rel;

/* A transaction streamed while in progress: its messages as records [u32 len][u64 lsn][msg],
 * in memory up to the stream's budget, then in an unlinked temporary file. */
typedef struct wk__repl_txn {
    uint32_t xid;
    bool used;
    wk_buf mem;              /* the records while they fit the budget */
    FILE *file;              /* the rest (opened when the budget is spent) */
    uint64_t file_len;
    struct wk__repl_sub {
        uint32_t xid;
        uint64_t at;         /* where its first record starts (mem then file offsets) */
    } *subs;
    size_t nsubs, subs_cap;
} wk__repl_txn;

struct wk_pq_changes {
    wk_pq_changes_opts opts;
    char *dsn, *slot, *publication, *work_mem; /* copies of the options' strings */
    wk_pq_conn *sql;         /* catalog connection: the registry snapshot */
    const wk_pg_registry *reg; /* its snapshot, what every value is decoded with */
    uint32_t unknown[WK__REPL_MAX_UNKNOWN]; /* types unknown even after a refresh */
    size_t nunknown;
    PGconn *repl;            /* the replication connection */
    char message[512];
    bool binary;             /* values asked for in binary */
    bool streaming;          /* in-progress transactions asked for */
    bool failed;             /* a run failed: the stream is done */
    int stop_pipe[2];        /* wk_pq_changes_stop writes a byte: poll() wakes up */
    volatile sig_atomic_t stop;
    /* positions */
    uint64_t confirmed;      /* last commit handled (flush position sent) */
    uint64_t sent_confirmed; /* the confirmed position the last status update carried */
    uint64_t received;       /* last WAL position received (write position sent) */
    int64_t last_status_ms;  /* when the last status update went out */
    int64_t last_recv_ms;    /* when the server last sent anything */
    bool reply_asked;        /* the server asked for an answer now */
    /* the transaction being delivered */
    bool in_txn;
    bool txn_changes;        /* a change of it was delivered: a COMMIT callback is due */
    uint32_t xid;
    uint64_t commit_lsn;
    int64_t commit_time;
    bool replaying;          /* handing over a buffered streamed transaction */
    /* tables */
    wk__repl_rel **rels;     /* sorted by relid */
    size_t nrels, rels_cap;
    /* streamed transactions */
    wk__repl_txn txns[WK__REPL_MAX_STREAMED];
    wk__repl_txn *cur_stream; /* inside Stream Start/Stop: the transaction being buffered */
    size_t buffered;          /* bytes in memory across all buffered transactions */
    /* per-change scratch */
    wk_pq_value *vals_new, *vals_old;
    size_t vals_cap;
    const uint8_t **pv;       /* row policy argument arrays */
    int *pl;
    size_t pv_cap;
    wk_buf time_text;         /* the commit time as text, of time_of_text */
    int64_t time_of_text;
    wk_pq_change_fn fn;
    void *fn_ctx;
};

/* Sets the stream's message (printf-like) and returns `st` with err filled with `what`. */
wk_status wk__repl_fail(wk_pq_changes *s, wk_status st, wk_error *err, const char *what,
                        const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* ---- dispatch (pq_repl_dispatch.c) ---- */

/* Handles one pgoutput message at WAL position `lsn`: relation and type bookkeeping, a
 * streamed message into its buffer, a change to the callback, a commit to the callback and
 * then the confirmed position. */
wk_status wk__repl_dispatch(wk_pq_changes *s, const uint8_t *msg, size_t n, uint64_t lsn,
                            wk_error *err);
/* The description of table `relid`, or NULL. */
wk__repl_rel *wk__repl_rel_find(wk_pq_changes *s, uint32_t relid);
/* Points every table description at the decoders of s->reg (after a refresh). */
void wk__repl_rebind(wk_pq_changes *s);
/* Reads the catalog again on a new connection: s->sql and s->reg are replaced and the table
 * descriptions rebound (pq_repl_stream.c). */
wk_status wk__repl_refresh_registry(wk_pq_changes *s, wk_error *err);
/* Frees every table description and buffered transaction. */
void wk__repl_dispatch_free(wk_pq_changes *s);

/* ---- streamed transactions (pq_repl_spill.c) ---- */

/* The buffer of transaction `xid`, made when `create` (NULL: none, or WK_ERR_LIMIT). */
wk__repl_txn *wk__repl_txn_get(wk_pq_changes *s, uint32_t xid, bool create, wk_error *err,
                               wk_status *st);
/* Appends one message (its (sub)transaction id `subxid`) to the buffer. */
wk_status wk__repl_txn_add(wk_pq_changes *s, wk__repl_txn *t, uint32_t subxid,
                           const uint8_t *msg, size_t n, uint64_t lsn, wk_error *err);
/* Drops subtransaction `subxid`'s messages (all of them when it is the transaction itself,
 * which then ends). */
void wk__repl_txn_abort(wk_pq_changes *s, wk__repl_txn *t, uint32_t subxid);
/* Hands every buffered message to `fn` in order (with its LSN), then ends the buffer. */
wk_status wk__repl_txn_replay(wk_pq_changes *s, wk__repl_txn *t,
                              wk_status (*fn)(wk_pq_changes *s, const uint8_t *msg, size_t n,
                                              uint64_t lsn, wk_error *err),
                              wk_error *err);
/* Frees a buffer (unused afterwards). */
void wk__repl_txn_end(wk_pq_changes *s, wk__repl_txn *t);

#endif
