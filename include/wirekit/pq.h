/*
 * wirekit-pq: libpq glue for the PostgreSQL codecs (library wirekit-pq, needs libpq).
 *
 * A wk_pq_conn is a libpq connection plus the registry snapshot it started with: at connect
 * time one catalog query discovers the database's own types (enums, domains over known
 * types, arrays of known element types, composite types, and extension types found by name
 * such as citext and hstore) and adds them to a snapshot private to this connection. Queries
 * send parameters encoded by wirekit in binary and ask for binary results; a plan built once
 * per result decodes every row into C values, value trees or events with no lookups.
 *
 * The session is set to DateStyle=ISO, MDY, IntervalStyle=postgres, TimeZone=UTC,
 * client_encoding=UTF8, extra_float_digits=1 and lc_monetary=C, the settings wirekit's text
 * output follows.
 * A connection is used by one thread at a time (as a PGconn is).
 */
#ifndef WIREKIT_PQ_H
#define WIREKIT_PQ_H

#include <libpq-fe.h>

#include "pg.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A libpq connection with its registry snapshot (opaque; wk_pq_connect(), wk_pq_conn_free()). */
typedef struct wk_pq_conn wk_pq_conn;

/**
 * A server or connection error, as PostgreSQL reports it. Strings are NUL-terminated, owned
 * by the connection and valid until its next query or wk_pq_conn_free.
 */
typedef struct wk_pq_error {
    char sqlstate[6];     /**< five characters ("22012"); "" when the server gave none (libpq
                               could not connect, or the connection broke without a report) */
    const char *severity; /**< "ERROR", "FATAL", "PANIC" (never NULL) */
    const char *message;  /**< the primary message (never NULL) */
    const char *detail;   /**< NULL when absent */
    const char *hint;     /**< NULL when absent */
    const char *context;  /**< NULL when absent */
    int position;         /**< 1-based character position in the statement; 0 = none */
} wk_pq_error;

/**
 * Connects with libpq to `dsn` (a connection string or URI; "" takes everything from the
 * libpq environment: PGHOST, PGDATABASE, PGSERVICE and service files, ...), applies the
 * session settings, and builds the connection's registry snapshot from `base` (NULL = the
 * built-in codecs) plus the types the catalog query finds. Returns WK_OK, WK_ERR_CONNECT (no
 * connection; wk_pq_conn_message() and wk_pq_last_error() tell why), WK_ERR_SERVER (the
 * session set-up or the catalog query failed), WK_ERR_NOMEM. On errors other than NOMEM
 * `*out` is still set so that the message can be read; close it with wk_pq_conn_free.
 */
WK_API wk_status wk_pq_connect(const char *dsn, const wk_pg_registry *base, wk_pq_conn **out,
                               wk_error *err);

/**
 * wk_pq_connect with a deadline for every query the connection runs, the set-up and catalog
 * queries included (`timeout_ms` 0: none, as wk_pq_connect). The server gets
 * statement_timeout = timeout_ms and libpq connect_timeout = timeout_ms rounded up to seconds
 * (at least 2, libpq's minimum); besides, the client waits at most `timeout_ms` for a result:
 * past it the query is cancelled (PQcancel) and the call returns WK_ERR_IO ("the query timed
 * out"); when the server does not answer even the cancel within one more second (a stopped
 * backend), the connection is given up and every later query fails with WK_ERR_IO. Same
 * statuses as wk_pq_connect.
 */
WK_API wk_status wk_pq_connect_timeout(const char *dsn, const wk_pg_registry *base,
                                       uint32_t timeout_ms, wk_pq_conn **out, wk_error *err);

/** Sets (or with 0 clears) the per-query deadline of `conn` as wk_pq_connect_timeout does,
 *  from the next query on. Returns WK_OK, or WK_ERR_IO when the server refused
 *  `SET statement_timeout` (or the connection is unusable). */
WK_API wk_status wk_pq_set_timeout(wk_pq_conn *conn, uint32_t timeout_ms, wk_error *err);

/** Closes the connection and releases its snapshot. NULL is a no-op. */
WK_API void wk_pq_conn_free(wk_pq_conn *conn);

/** The underlying libpq connection (owned by `conn`). */
WK_API PGconn *wk_pq_pgconn(const wk_pq_conn *conn);

/** The connection's registry snapshot (valid until wk_pq_conn_free; take a reference to keep). */
WK_API const wk_pg_registry *wk_pq_registry(const wk_pq_conn *conn);

/** The last libpq or server error message of this connection ("" when none). */
WK_API const char *wk_pq_conn_message(const wk_pq_conn *conn);

/** The last error of this connection (after WK_ERR_SERVER or WK_ERR_CONNECT), or NULL when
 *  the last call succeeded. */
WK_API const wk_pq_error *wk_pq_last_error(const wk_pq_conn *conn);

/**
 * Appends `e` as psql prints it: "SEVERITY:  message", then, when `sql` is the statement
 * and e->position is set, "LINE n: " with the statement's line and a caret under the
 * position (long lines cut to 60 characters around it with "..."), then DETAIL, HINT and
 * CONTEXT lines; each line ends with '\n'. Characters are counted as one column each (psql
 * gives East Asian wide characters two). Returns WK_OK or WK_ERR_NOMEM.
 */
WK_API wk_status wk_pq_error_format(const wk_pq_error *e, const char *sql, wk_buf *out);

/** One query parameter. */
typedef struct wk_pq_param {
    wk_pg_kind kind;   /**< C kind of *value; WK_PG_KIND_ARRAY: a wk_pg_array_in;
                          WK_PG_KIND_TEXT: a wk_slice holding PostgreSQL text input */
    const void *value; /**< NULL = SQL NULL */
    wk_pg_oid oid;     /**< type to send as; 0 = the kind's default type (for TEXT: let the
                          server infer it, sent in text format) */
} wk_pq_param;

/**
 * Runs `sql` with `params[0..n)` encoded by wirekit (binary format, except TEXT parameters
 * with oid 0, and TEXT parameters of types whose text input wirekit does not parse, which go
 * as text). Results come back in binary when the connection's snapshot has a binary decoder
 * for every result column; otherwise (an extension type, aclitem, ...) the whole result comes
 * back in the text format, which wk_pq_plan decodes with the text codecs (a type no codec
 * knows stays its text). To know that, the statement is described before its first run on
 * this connection (one more round trip; the decision is remembered per statement text and
 * parameter types). `*res` receives the PGresult (free with PQclear) when the query ran, even
 * when the server reported an error. Returns WK_OK (tuples or a command completed),
 * WK_ERR_SERVER (the server reported an error: wk_pq_last_error), WK_ERR_CONNECT (the
 * connection is lost), WK_ERR_IO (the connection's deadline passed: see wk_pq_conn_message;
 * *res is NULL after a timeout), WK_ERR_NOT_FOUND (no encoder for a parameter: err->offset is its
 * index), or an encoder's status.
 */
WK_API wk_status wk_pq_exec(wk_pq_conn *conn, const char *sql, const wk_pq_param *params,
                            size_t n, PGresult **res, wk_error *err);

/** wk_pq_send flag: rows arrive one by one (PGRES_SINGLE_TUPLE results). */
#define WK_PQ_SEND_SINGLE_ROW 0x01u
/** wk_pq_send flag: the simple query protocol: several statements separated by ';', no
 *  parameters, text results. */
#define WK_PQ_SEND_SIMPLE 0x02u

/**
 * Sends `sql` like wk_pq_exec (same parameter encoding and result-format choice) without
 * waiting for the results, which are then read one by one with wk_pq_next; with
 * WK_PQ_SEND_SINGLE_ROW every row is its own result, so any number of rows is read in
 * bounded memory. Returns WK_OK, WK_ERR_SERVER (the statement failed to prepare: see
 * wk_pq_last_error; nothing to read), WK_ERR_CONNECT, WK_ERR_ARG (parameters with
 * WK_PQ_SEND_SIMPLE), or a parameter's encoding status.
 */
WK_API wk_status wk_pq_send(wk_pq_conn *conn, const char *sql, const wk_pq_param *params,
                            size_t n, unsigned flags, wk_error *err);

/**
 * The next result of a sent query into `*res` (free with PQclear): WK_OK for a row
 * (PGRES_SINGLE_TUPLE), the end of a result set (PGRES_TUPLES_OK; with single-row mode it
 * holds no rows but still describes the columns), a command (PGRES_COMMAND_OK: PQcmdStatus
 * has its tag, e.g. "INSERT 0 1") or an empty query; WK_ERR_SERVER or WK_ERR_CONNECT for a
 * failed statement (`*res` is the failed result; see wk_pq_last_error; keep calling until
 * WK_ERR_EOF); WK_ERR_EOF after the last result (`*res` NULL).
 */
WK_API wk_status wk_pq_next(wk_pq_conn *conn, PGresult **res, wk_error *err);

/**
 * Builds a decode plan for `res`'s columns in the connection's snapshot: column i decodes
 * into kinds[i] at offsets[i] of a row struct (kinds NULL = WK_PG_KIND_EVENTS for all,
 * offsets NULL = 0). The plan records each column's wire format. A text-format column of a
 * type the snapshot does not know is read as text (its plan column has the text OID, 25)
 * when its kind is TEXT, STR, VALUE or EVENTS. See wk_pg_plan_build for statuses.
 */
WK_API wk_status wk_pq_plan(const wk_pq_conn *conn, const PGresult *res, const wk_pg_kind *kinds,
                            const size_t *offsets, wk_pg_plan **out, wk_error *err);

/** Decodes row `row` of `res` through `plan` into a row struct (see wk_pg_plan_decode_row). */
WK_API wk_status wk_pq_decode_row(const wk_pg_plan *plan, const PGresult *res, int row,
                                  void *dst, bool *nulls, wk_arena *arena, wk_error *err);

/** Writes row `row` of `res` as a map of column name -> value events. */
WK_API wk_status wk_pq_emit_row(const wk_pg_plan *plan, const PGresult *res, int row,
                                const wk_pg_events *ev, wk_error *err);

/** Builds row `row` of `res` as a wk_value map in `arena`. */
WK_API wk_status wk_pq_value_row(const wk_pg_plan *plan, const PGresult *res, int row,
                                 wk_arena *arena, wk_value *out, wk_error *err);

#ifdef __cplusplus
}
#endif
#endif
