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
 * client_encoding=UTF8 and extra_float_digits=1, the settings wirekit's text output follows.
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
 * Connects with libpq to `dsn` (a connection string or URI), applies the session settings,
 * and builds the connection's registry snapshot from `base` (NULL = the built-in codecs) plus
 * the types the catalog query finds. Returns WK_OK, WK_ERR_IO (connection or query failure;
 * wk_pq_conn_message() has the server's text when *out is set), WK_ERR_NOMEM. On WK_ERR_IO
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
 * with oid 0) and asks for binary results. `*res` receives the PGresult (free with PQclear)
 * when the query ran, even when the server reported an error. Returns WK_OK (tuples or a
 * command completed), WK_ERR_IO (server error, or the connection's deadline passed: see
 * wk_pq_conn_message; *res is NULL after a timeout), WK_ERR_NOT_FOUND (no
 * encoder for a parameter: err->offset is its index), or an encoder's status.
 */
WK_API wk_status wk_pq_exec(wk_pq_conn *conn, const char *sql, const wk_pq_param *params,
                            size_t n, PGresult **res, wk_error *err);

/**
 * Builds a decode plan for `res`'s columns in the connection's snapshot: column i decodes
 * into kinds[i] at offsets[i] of a row struct (kinds NULL = WK_PG_KIND_EVENTS for all,
 * offsets NULL = 0). See wk_pg_plan_build for statuses.
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
