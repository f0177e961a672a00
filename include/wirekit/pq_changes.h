/*
 * wirekit-pq: a table's changes as a stream (PostgreSQL logical replication, pgoutput).
 *
 * A wk_pq_changes is a replication connection (libpq, `replication=database`) reading a
 * logical slot of the `pgoutput` plugin for one publication, plus an ordinary connection for
 * the catalog (the registry snapshot of wk_pq_connect, the slot and publication checks). Every
 * committed row change is handed to a callback as a wk_pq_change: the table as the server last
 * described it (Relation messages, kept per table and rebuilt when the server announces a new
 * shape), the new and old row images with each value's bytes, and the transaction's xid,
 * commit LSN and commit time. wk_pq_changes_append renders a change as one record of the row
 * policy of wirekit/pg.h, so every value reads as `wirekit pg query` prints it.
 *
 * Delivery is at least once. A commit is confirmed to the server (the standby status update's
 * flush position) only after the callback returned WK_OK for it: the server then never sends
 * that transaction again. After a crash, kill -9 or a lost connection the next run resumes at
 * the slot's confirmed position: no committed change is lost, and the changes of transactions
 * after the last confirmed commit may be delivered again (a consumer that must not apply one
 * twice keys it by (commit LSN, position in the transaction) or by a column of its own).
 *
 * Only committed changes are delivered, in commit order. Protocol version 2 is asked for with
 * streaming of large in-progress transactions (`streaming 'true'`), so the server does not
 * hold a large transaction in its memory or spill it: the streamed parts are kept here,
 * in memory up to `max_buffer_bytes` and beyond it in an unlinked temporary file, and handed
 * over when the server says the transaction committed; an aborted one (or an aborted
 * subtransaction of it) is dropped unseen. Delivering them as they arrive would hand out
 * changes that may still roll back, and the position confirmed could then not say what was
 * handled. So resident memory is bounded whatever the transaction's size (the largest single
 * message plus the buffer cap), at the cost of temporary disk space for the largest ones.
 *
 * Values come in binary (`binary 'true'`) when the registry has a binary decoder for every
 * column type of the publication's tables, else the whole stream is text, which the text
 * codecs read (a type no codec knows stays its text).
 *
 * Deadlines: connecting, every command and every wait for the server are bounded by
 * `timeout_ms`; while streaming a status update goes out every `status_interval_ms` asking
 * for an answer, and a server silent for `timeout_ms` is taken for gone (WK_ERR_CONNECT), as
 * is one that closes the connection or shuts down.
 *
 * A wk_pq_changes is used by one thread at a time, except wk_pq_changes_stop, which any thread
 * or a signal handler may call.
 */
#ifndef WIREKIT_PQ_CHANGES_H
#define WIREKIT_PQ_CHANGES_H

#include "cache.h"
#include "pq.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A change stream (opaque; wk_pq_changes_open(), wk_pq_changes_free()). */
typedef struct wk_pq_changes wk_pq_changes;

/** What a change did. */
typedef enum wk_pq_change_op {
    WK_PQ_CHANGE_INSERT = 1, /**< a row was inserted: `new_row` */
    WK_PQ_CHANGE_UPDATE,     /**< a row was updated: `new_row`, and `old_row` when sent */
    WK_PQ_CHANGE_DELETE,     /**< a row was deleted: `old_row` */
    WK_PQ_CHANGE_TRUNCATE,   /**< the table was truncated: no rows */
    WK_PQ_CHANGE_COMMIT      /**< the transaction's last change was handed over: no table */
} wk_pq_change_op;

/** A column of a published table, as the last Relation message described it. */
typedef struct wk_pq_change_column {
    const char *name; /**< the column name (NUL-terminated) */
    wk_pg_oid oid;    /**< its type */
    int32_t typmod;   /**< its type modifier, -1 when none */
    bool key;         /**< part of the replica identity (the key the server sends as old) */
} wk_pq_change_column;

/** A published table. Valid during the callback; the server may describe it anew later. */
typedef struct wk_pq_change_table {
    uint32_t relid;                   /**< the table's OID */
    const char *schema;               /**< its schema ("public") */
    const char *name;                 /**< its name ("users") */
    const char *qualified;            /**< "schema.name", as events name it */
    char replica_identity;            /**< 'd' default, 'f' full, 'i' index, 'n' nothing */
    size_t ncols;                     /**< the number of columns */
    const wk_pq_change_column *cols;  /**< the columns, in table order */
} wk_pq_change_table;

/** How one value of a row image came. */
typedef enum wk_pq_value_kind {
    WK_PQ_VALUE_NULL = 0,  /**< SQL NULL */
    WK_PQ_VALUE_UNCHANGED, /**< an unchanged TOASTed value the server did not send again */
    WK_PQ_VALUE_TEXT,      /**< `ptr[0..len)` is its text form */
    WK_PQ_VALUE_BINARY     /**< `ptr[0..len)` is its binary form */
} wk_pq_value_kind;

/** One value of a row image (valid during the callback). */
typedef struct wk_pq_value {
    wk_pq_value_kind kind; /**< NULL, unchanged, text or binary */
    const uint8_t *ptr;    /**< its bytes (text and binary kinds) */
    size_t len;            /**< their length */
} wk_pq_value;

/** One change, handed to the callback. Every pointer is valid during the call only. */
typedef struct wk_pq_change {
    wk_pq_change_op op; /**< what happened: insert, update, delete, truncate or commit */
    uint64_t lsn;        /**< the change's own WAL position (COMMIT: the commit's end, the
                              position confirmed once the callback returns WK_OK for it) */
    uint64_t commit_lsn; /**< the transaction's commit record */
    uint32_t xid;        /**< the transaction's id */
    int64_t commit_time; /**< microseconds since 2000-01-01 00:00 UTC (PostgreSQL's epoch) */
    const wk_pq_change_table *table; /**< NULL for COMMIT */
    const wk_pq_value *new_row; /**< table->ncols values; NULL for DELETE, TRUNCATE, COMMIT */
    const wk_pq_value *old_row; /**< table->ncols values, or NULL: the server sends the old
                                     row for DELETE, and for UPDATE when the key changed or the
                                     table has REPLICA IDENTITY FULL */
    bool old_is_key; /**< old_row holds only the replica identity's columns (the others NULL) */
    bool streamed;   /**< the transaction was streamed while in progress (buffered here) */
} wk_pq_change;

/**
 * Called for every change in commit order, then once with WK_PQ_CHANGE_COMMIT at the end of
 * each transaction that had changes. Returning WK_OK from COMMIT says the transaction is
 * durably handled: its position may now be confirmed. Any other status stops
 * wk_pq_changes_run, which returns it (with `err` as the callback left it); nothing of that
 * transaction is confirmed.
 */
typedef wk_status (*wk_pq_change_fn)(void *ctx, const wk_pq_change *ch, wk_error *err);

/** wk_pq_changes_opts flag: create the slot when it does not exist (else WK_ERR_NOT_FOUND). */
#define WK_PQ_CHANGES_CREATE_SLOT 0x01u
/** wk_pq_changes_opts flag: ask for values in text even when binary would do. */
#define WK_PQ_CHANGES_TEXT 0x02u
/** wk_pq_changes_opts flag: do not ask the server to stream in-progress transactions (it then
 *  decodes each transaction whole and sends it at its commit, spilling to its own disk). */
#define WK_PQ_CHANGES_NO_STREAMING 0x04u

/** Options of wk_pq_changes_open. Zeroed fields take the defaults. */
typedef struct wk_pq_changes_opts {
    const char *dsn;         /**< libpq connection string or URI ("" or NULL: the environment) */
    const char *slot;        /**< the logical replication slot (pgoutput) */
    const char *publication; /**< the publication whose tables are streamed */
    unsigned flags;          /**< WK_PQ_CHANGES_* */
    uint32_t timeout_ms;     /**< every wait's deadline (0: 30000) */
    uint32_t status_interval_ms; /**< standby status updates at least this often (0: 10000);
                                      a confirmed position that moved is sent within 200 ms */
    size_t max_buffer_bytes; /**< memory for streamed transactions before a temporary file
                                  takes the rest (0: 4 MiB) */
    size_t max_message_bytes; /**< the largest replication message accepted (0: 256 MiB) */
    const char *decoding_work_mem; /**< the session's logical_decoding_work_mem ("64kB"), the
                                        size past which the server streams a transaction
                                        (NULL: the server's setting) */
    const wk_pg_registry *base; /**< the codecs (NULL: the built-in ones) */
    void *reserved[4]; /**< zero: room for options to come */
} wk_pq_changes_opts;

/**
 * Connects (an ordinary connection for the catalog, then the replication connection), checks
 * that the publication exists, finds the slot (creating it with WK_PQ_CHANGES_CREATE_SLOT;
 * another client creating it at the same moment is fine) and starts streaming from the slot's
 * confirmed position. Returns WK_OK, WK_ERR_ARG (no slot or publication name, a slot of
 * another plugin or another database, or a physical one), WK_ERR_NOT_FOUND (no such
 * publication, or no such slot without WK_PQ_CHANGES_CREATE_SLOT), WK_ERR_CONNECT (no
 * connection, or the server is not configured for logical replication: its message says why),
 * WK_ERR_SERVER (a command failed), WK_ERR_IO (a deadline passed), WK_ERR_NOMEM. On every
 * status but NOMEM `*out` is set so that wk_pq_changes_message can tell why; free it.
 */
WK_API wk_status wk_pq_changes_open(const wk_pq_changes_opts *opts, wk_pq_changes **out,
                                    wk_error *err);

/**
 * Streams changes to `fn` until wk_pq_changes_stop is called (WK_OK), `fn` returns another
 * status (that status), or the stream fails: WK_ERR_CONNECT (the server went away, shut down,
 * was silent past the deadline, or ended the stream: wk_pq_changes_message), WK_ERR_SERVER
 * (the server reported an error, e.g. the slot was dropped), WK_ERR_SYNTAX / WK_ERR_TRUNCATED
 * (a malformed message: err->offset is the byte in it), WK_ERR_LIMIT (a message over
 * max_message_bytes, too many tables or subtransactions), WK_ERR_IO (the temporary file
 * failed), WK_ERR_NOT_FOUND (a column type without a decoder), WK_ERR_NOMEM. After a failure
 * every later run returns WK_ERR_STATE: open a new stream to resume. Stopping answers within
 * a fraction of a second; the rest of a transaction in progress at that moment follows in
 * the next run of the same stream, or the whole of it comes again in a new stream.
 */
WK_API wk_status wk_pq_changes_run(wk_pq_changes *s, wk_pq_change_fn fn, void *ctx,
                                   wk_error *err);

/** Asks wk_pq_changes_run to return WK_OK after the change it is handling (a request made
 *  while no run is going ends the next one at once; each request ends one run). Safe from
 *  any thread and from a signal handler. */
WK_API void wk_pq_changes_stop(wk_pq_changes *s);

/** The position confirmed so far: the end of the last commit whose COMMIT callback returned
 *  WK_OK (or the slot's confirmed position at open). */
WK_API uint64_t wk_pq_changes_confirmed(const wk_pq_changes *s);

/** Whether values arrive in binary (false: text). */
WK_API bool wk_pq_changes_binary(const wk_pq_changes *s);

/** The last error message of the stream ("" when none). */
WK_API const char *wk_pq_changes_message(const wk_pq_changes *s);

/** Sends a last status update with the confirmed position (waiting at most one second for
 *  it to leave), closes both connections and frees `s`. NULL is a no-op. */
WK_API void wk_pq_changes_free(wk_pq_changes *s);

/** Writes `lsn` as PostgreSQL prints a pg_lsn ("0/16B3748") into buf (NUL-terminated) and
 *  returns its length. */
WK_API size_t wk_pq_lsn_format(uint64_t lsn, char buf[32]);

/** The record format of wk_pq_changes_append: wk_pg_row_opts (format, flags, max_text). */
typedef wk_pg_row_opts wk_pq_change_opts;

/**
 * Appends change `ch` (not COMMIT) to `out` as one record, whole or nothing:
 * {"lsn":"0/16B3748","xid":735,"commit_time":"2026-01-02 03:04:05.123456+00","op":"insert",
 * "table":"public.users","new":{...},"old":{...}} ("op" update, delete or truncate; "new"
 * and "old" only when the change has them), a newline after JSON, or the same as one
 * MessagePack map. Rows follow the row policy of wirekit/pg.h for `opts` (NULL: JSON objects)
 * as `wirekit pg query` prints them, commit_time as a timestamptz prints; "old" holds only the
 * replica identity's columns unless the table has REPLICA IDENTITY FULL, and an unchanged
 * TOASTed value the server did not send is left out of "new". Returns WK_OK, WK_ERR_ARG
 * (COMMIT, or a change of another stream), a row policy status (see wk_pg_row_append),
 * WK_ERR_NOMEM.
 */
WK_API wk_status wk_pq_changes_append(wk_pq_changes *s, const wk_pq_change *ch,
                                      const wk_pq_change_opts *opts, wk_buf *out,
                                      wk_error *err);

/**
 * The text of column `col` of a row image (`row` one of ch->new_row, ch->old_row) as
 * PostgreSQL prints it, appended to `out`, e.g. for a cache id. Returns WK_OK,
 * WK_ERR_NOT_FOUND (col past the last, or the value is NULL or was not sent), a decoder's
 * status, WK_ERR_NOMEM.
 */
WK_API wk_status wk_pq_changes_value_text(wk_pq_changes *s, const wk_pq_change *ch,
                                          const wk_pq_value *row, size_t col, wk_buf *out,
                                          wk_error *err);

/* ---- a cache the database keeps fresh (pq_repl_invalidate.c) ------------------------- */

/** One invalidation rule: changes of `table` invalidate entity `schema` whose id is the text
 *  of `column`. */
typedef struct wk_pq_invalidate_rule {
    const wk_schema *schema; /**< the cached entity (its name and version make the key) */
    const char *table;       /**< "schema.table" or "table" (schema public) */
    const char *column;      /**< the column holding the entity's id */
} wk_pq_invalidate_rule;

/** Turns changes into cache invalidations (opaque; wk_pq_invalidator_new, ..._free). */
typedef struct wk_pq_invalidator wk_pq_invalidator;

/**
 * An invalidator for `rules[0..n)` (copied) on `cache` (not owned; it must outlive the
 * invalidator). Returns WK_OK, WK_ERR_ARG (n 0, a rule without table or column), WK_ERR_NOMEM.
 */
WK_API wk_status wk_pq_invalidator_new(wk_cache *cache, const wk_pq_invalidate_rule *rules,
                                       size_t n, wk_pq_invalidator **out, wk_error *err);

/**
 * Invalidates what change `ch` of stream `s` makes stale, through wk_cache_invalidate (every
 * process's memory tier and the shared tier drop it): an UPDATE of a rule's table the entity
 * of its new id (and of its old one when the key changed), a DELETE the entity of its old id,
 * an INSERT the entity of its id (a cached "not found" is stale too). A TRUNCATE cannot name
 * its rows: WK_ERR_UNSUPPORTED unless no rule names the table. Returns WK_OK once every
 * invalidation was acknowledged, WK_ERR_ARG (the rule's column is not in the table, or a
 * DELETE whose old row does not hold it: the column must be in the replica identity), or
 * wk_cache_invalidate's status (WK_ERR_IO: the shared tier failed).
 */
WK_API wk_status wk_pq_invalidator_apply(wk_pq_invalidator *inv, wk_pq_changes *s,
                                         const wk_pq_change *ch, wk_error *err);

/** The number of invalidations acknowledged so far. */
WK_API uint64_t wk_pq_invalidator_count(const wk_pq_invalidator *inv);

/** Frees `inv`. NULL is a no-op. */
WK_API void wk_pq_invalidator_free(wk_pq_invalidator *inv);

/**
 * Runs `s` with `inv` as its callback: a service's cache kept fresh by the database, in a
 * thread of its own (stop it with wk_pq_changes_stop). A commit is confirmed after every
 * invalidation of its changes was acknowledged. Returns as wk_pq_changes_run.
 */
WK_API wk_status wk_pq_changes_run_invalidator(wk_pq_changes *s, wk_pq_invalidator *inv,
                                               wk_error *err);

#ifdef __cplusplus
}
#endif
#endif
