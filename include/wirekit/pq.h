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
 * A connection is used by one thread at a time (as a PGconn is); a wk_pq_pool shares N of
 * them between the threads of a service and reconnects them when they die.
 */
#ifndef WIREKIT_PQ_H
#define WIREKIT_PQ_H

#include <libpq-fe.h>

#include "pg.h"
#include "schema.h"

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
 * wk_pq_connect with a deadline for every query the connection runs (`timeout_ms` 0: none,
 * as wk_pq_connect). The set-up and catalog queries (one round trip) must be answered within
 * `timeout_ms` after the socket is up, else the connection is given up and the call returns
 * WK_ERR_CONNECT ("setting up the session timed out after N ms"). The server gets
 * statement_timeout = timeout_ms and libpq connect_timeout = timeout_ms rounded up to seconds
 * (at least 2, libpq's minimum); besides, the client waits at most `timeout_ms` for a result:
 * past it the query is cancelled (PQcancel) and the call returns WK_ERR_IO ("the query timed
 * out"); when the server does not answer even the cancel within the cancel's grace (one
 * second without a word from the server, restarted while it still sends, at most 60 s; a
 * stopped backend), the connection is given up and every later query fails with WK_ERR_IO.
 * The cancel request goes out on a helper thread, so a server that takes the cancel
 * connection and never answers it cannot hold the caller past the grace. Same statuses as
 * wk_pq_connect.
 */
WK_API wk_status wk_pq_connect_timeout(const char *dsn, const wk_pg_registry *base,
                                       uint32_t timeout_ms, wk_pq_conn **out, wk_error *err);

/**
 * The limits of a connection (wk_pq_connect_limits); zero-initialised: none, as wk_pq_connect.
 */
typedef struct wk_pq_limits {
    /** As wk_pq_connect_timeout's `timeout_ms`: the connect, the server's statement_timeout
     *  and the client-side deadline of every query. */
    uint32_t timeout_ms;
    /** Used when timeout_ms is 0: the longest the whole connect (socket, authentication, the
     *  session set-up and catalog query) may take, also given to libpq as connect_timeout
     *  (seconds, rounded up, at least 2). A connect_timeout the DSN or PGCONNECT_TIMEOUT sets
     *  takes its place. */
    uint32_t connect_timeout_ms;
    /** Client-side only (the server gets no statement_timeout): every wait on the server (a
     *  result, COPY data, a COPY chunk it does not take, the set-up, a pipeline's next
     *  answer, and a non-blocking query's, pipeline's or connect's steps, which look at the
     *  socket each time) gives up once the socket has had no event for this long, as a
     *  passed deadline does: the query, COPY or pipeline is cancelled, and a server that does
     *  not answer the cancel has the connection given up (WK_ERR_IO). A server that keeps
     *  sending (rows, notices) is never idle. It applies
     *  beside timeout_ms too; when timeout_ms is 0, libpq is also asked, unless the DSN says
     *  otherwise, for TCP keepalives (after 30 s without traffic, every 10 s, 3 probes) and
     *  tcp_user_timeout = idle_ms, so that a host that vanished is noticed as a lost
     *  connection. The connect itself is bounded by idle_ms when neither other limit is
     *  set. */
    uint32_t idle_ms;
} wk_pq_limits;

/**
 * wk_pq_connect with `limits` (NULL: none); wk_pq_connect_timeout(dsn, base, t, ...) is
 * wk_pq_connect_limits with {t, 0, 0}. A connect past its deadline returns WK_ERR_CONNECT
 * ("connecting timed out after N ms", "setting up the session timed out after N ms"). Same
 * statuses as wk_pq_connect.
 */
WK_API wk_status wk_pq_connect_limits(const char *dsn, const wk_pg_registry *base,
                                      const wk_pq_limits *limits, wk_pq_conn **out,
                                      wk_error *err);

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
/** wk_pq_send flag: without parameters, SQL that is one statement goes through the extended
 *  protocol like any other (binary results, so records and nested values are never rendered
 *  as text by the server), and only SQL the server refuses to prepare as one statement
 *  (several statements separated by ';', SQLSTATE 42601) is sent again with the simple
 *  protocol (text results). One more round trip for the describe, as without the flag. */
#define WK_PQ_SEND_SIMPLE_IF_MANY 0x04u

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
 * WK_ERR_EOF); WK_ERR_EOF after the last result (`*res` NULL). The wait for each result is
 * bounded by the connection's deadline (wk_pq_set_timeout) and idle limit
 * (wk_pq_limits.idle_ms): past them the query is cancelled and WK_ERR_IO returned ("the
 * query timed out", wk_pq_conn_message says whether the server answered the cancel; if not,
 * the connection is given up); the query is then over and the next call returns WK_ERR_EOF.
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

/* ---- the row policy over results (pq_rows.c) ------------------------------------------ */

/**
 * Builds a row description (wirekit/pg.h, "the row policy") for `res`'s columns in the
 * connection's snapshot: names, PQftype, PQfmod and PQfformat of each column. Column types
 * of the database the snapshot does not hold yet (a table's row type in a whole-row
 * reference) are loaded first, into a new snapshot of `conn`: by a catalog query on `conn`
 * when it is idle, or, while it streams this result's rows (a query sent with
 * WK_PQ_SEND_SIMPLE), on a short second connection with `conn`'s parameters, which sees
 * committed types only. A text column of a type still unknown is read as its text. Write its
 * rows with wk_pq_row_append or wk_pg_row_append. Same statuses as wk_pg_rowdesc_new.
 */
WK_API wk_status wk_pq_rowdesc_new(wk_pq_conn *conn, const PGresult *res,
                                   const wk_pg_row_opts *opts, wk_pg_rowdesc **out,
                                   wk_error *err);

/** Appends row `row` of `res` to `out` through `d` (built for `res`'s columns) as one record,
 *  whole or nothing; see wk_pg_row_append. */
WK_API wk_status wk_pq_row_append(wk_pg_rowdesc *d, const PGresult *res, int row, wk_buf *out,
                                  wk_error *err);

/**
 * Caps what one value may hold while it is being received, for COPY out: a field whose
 * declared length is over `max_bytes` stops wk_pq_copy_out with WK_ERR_LIMIT before it is
 * buffered (0: the default, 1 GiB, PostgreSQL's own limit on a field). Returns WK_OK.
 */
WK_API wk_status wk_pq_set_max_value_bytes(wk_pq_conn *conn, size_t max_bytes);

/* ---- rows into structs, structs into parameters (pq_struct.c, pq_struct_params.c) ------ */

/**
 * A result's columns matched to a schema's fields (opaque; wk_pq_struct_plan_new,
 * wk_pq_struct_plan_free): built once per result shape, then every row of a result of that
 * shape decodes into a struct with wk_pq_row_to_struct, with no lookups.
 *
 * Columns are matched to fields by name (the column name as the server reports it, e.g. the
 * `AS` alias, compared byte for byte with the field's wire name). What a column may feed:
 *
 * - WK_SK_BOOL: bool.
 * - integers (WK_SK_I8 .. WK_SK_U64): int2, int4, int8, oid; numeric when integral. A value
 *   outside the field's range is WK_ERR_RANGE.
 * - WK_SK_F32, WK_SK_F64: float4, float8, numeric (the nearest), int2, int4, int8.
 * - WK_SK_STR, WK_SK_STRBUF: any type; text-like types as they are, others as PostgreSQL's
 *   text output (uuid, inet, date, numeric, ...). Copied into the arena (char *, with its
 *   NUL) or into the member (char[N]: a longer value is WK_ERR_RANGE).
 * - WK_SK_BYTES: bytea, text-like types (their bytes); copied into the arena.
 * - WK_SK_TIMESTAMP: timestamptz, timestamp (read as UTC), date (midnight UTC);
 *   +/-infinity is WK_ERR_RANGE.
 * - WK_SK_VALUE: any type, as its codec's value tree (WK_PG_KIND_VALUE): json and jsonb as
 *   the document, numbers staying numbers (integers that fit 64 bits as integers, other
 *   finite ones as float64, the rest as WK_VAL_RAWNUM with their exact text).
 * - WK_SK_STRUCT, WK_SK_ARRAY: json, jsonb, decoded through the field's descriptor as
 *   wk_schema_decode_json decodes it.
 *
 * SQL NULL: a field with a presence member (WK_FIELD_NULLABLE) gets it false and its member
 * zeroed; a WK_NULLABLE WK_SK_STR, WK_SK_BYTES or WK_SK_ARRAY field gets a NULL pointer; a
 * WK_SK_VALUE field a nil value; any other field fails the row (WK_ERR_TYPE, the path names
 * the column). A plan is immutable: any number of threads may use one at once, each with its
 * own result, struct and arena.
 */
typedef struct wk_pq_struct_plan wk_pq_struct_plan;

/** wk_pq_struct_plan_new flag: result columns that match no field are ignored (default: the
 *  plan fails naming the column). */
#define WK_PQ_STRUCT_SKIP_UNKNOWN 0x01u
/** wk_pq_struct_plan_new flag: fields that no column feeds keep what the caller put in the
 *  struct, as a missing key does in wk_schema_decode; a WK_REQUIRED field without a column
 *  still fails (default: every field needs a column). */
#define WK_PQ_STRUCT_PARTIAL 0x02u

/**
 * Builds the plan that decodes rows of `res` (any result of the statement: a PGRES_TUPLES_OK
 * or PGRES_SINGLE_TUPLE result, in binary or text format; binary is faster) into structs
 * described by `schema` (a struct root), resolving every column's decoder in the
 * connection's registry snapshot. `flags`: WK_PQ_STRUCT_*. The plan does not refer to
 * `res` (it may be cleared) but holds a reference on the snapshot and points to `schema`,
 * which must outlive it. Returns WK_OK with `*out` set, or (with `*out` NULL) WK_ERR_NOT_FOUND
 * (a column no field matches, a field no column feeds), WK_ERR_TYPE (a column whose type
 * cannot feed its field's kind; two columns of the same name), WK_ERR_ARG (NULL arguments, a
 * value schema, an invalid descriptor), WK_ERR_NOMEM. `err` (may be NULL): the message says
 * what is wrong, `path` names the field (= the column), `base.offset` is the column index.
 */
WK_API wk_status wk_pq_struct_plan_new(const wk_pq_conn *conn, const PGresult *res,
                                       const wk_schema *schema, unsigned flags,
                                       wk_pq_struct_plan **out, wk_schema_error *err);

/** Frees a plan and drops its registry reference. NULL is a no-op. */
WK_API void wk_pq_struct_plan_free(wk_pq_struct_plan *plan);

/**
 * Decodes row `row` of `res` (a result of the shape `plan` was built for) into `dst`, a
 * struct of the plan's schema that the caller initialised (e.g. zeroed: with
 * WK_PQ_STRUCT_PARTIAL the fields no column feeds keep their values). Strings, bytes, trees
 * and arrays are copied into `arena` and never point into `res`, which may be cleared
 * afterwards. Returns WK_OK, WK_ERR_TYPE (SQL NULL into a field that cannot hold NULL),
 * WK_ERR_RANGE (a value outside the field's range, a string longer than a char[N] field), a
 * decoder's status for a malformed value (WK_ERR_TRUNCATED, WK_ERR_SYNTAX, ...; `base.offset`
 * is the byte inside the column's value), the JSON decoder's or the schema decoder's status
 * for a json column (WK_ERR_DEPTH past the schema's depth limit, 64), WK_ERR_NOMEM (the arena's cap),
 * WK_ERR_ARG (a row out of range, a result of another shape). `err->path` starts with the
 * column's name ("metadata", "kids[1].name" inside a json column). On error `dst` may be
 * partly written and the arena may hold partial copies. Thread-safe for distinct `dst`.
 */
WK_API wk_status wk_pq_row_to_struct(const wk_pq_struct_plan *plan, const PGresult *res, int row,
                                     void *dst, wk_arena *arena, wk_schema_error *err);

/**
 * wk_pq_row_to_struct over a row's column bytes: vals[i][0..lens[i]) is column i of the
 * result the plan was built for (lens[i] < 0 for SQL NULL), as a wk_pq_copy_row_fn or a
 * non-blocking query hands them out (the columns in the formats of the result the plan was
 * built from). Same statuses.
 */
WK_API wk_status wk_pq_struct_decode(const wk_pq_struct_plan *plan, const uint8_t *const *vals,
                                     const int *lens, void *dst, wk_arena *arena,
                                     wk_schema_error *err);

/**
 * Fills `out[0..n)` with query parameters from the fields of `obj` (a struct of `schema`):
 * out[i] is the field named fields[i] (`fields` NULL: every field in declaration order, and
 * `n` must be schema->nfields), ready for wk_pq_exec, wk_pq_send, wk_pq_async_start or
 * wk_pq_pipeline_add. Binary where the kind has a binary encoder: bool, integers (I8, U8,
 * I16 as int2; U16, I32 as int4; U32, I64 and U64 up to INT64_MAX as int8), float4, float8,
 * bytea, timestamptz (nanoseconds below a microsecond dropped); strings (WK_SK_STR,
 * WK_SK_STRBUF) go as text of unspecified type, which the server reads as the type the
 * statement gives the parameter (text, varchar, uuid, numeric, inet, ...); WK_SK_VALUE
 * fields go as jsonb through the jsonb codec's wk_value encoder, WK_SK_STRUCT and
 * WK_SK_ARRAY fields as jsonb too (their compact JSON, as wk_schema_encode_json writes it). SQL NULL for: a field whose presence member is false, a
 * NULL WK_SK_STR / WK_SK_BYTES / WK_SK_ARRAY pointer of a WK_NULLABLE field, a nil WK_SK_VALUE
 * of a WK_NULLABLE field. The parameters point into `obj` and `arena` (converted integers,
 * JSON text): both must outlive their use. Returns WK_OK, WK_ERR_NOT_FOUND (no field of that
 * name: `err->path` names it, `base.offset` its index in `fields`), WK_ERR_RANGE (a U64 above
 * INT64_MAX), the JSON encoder's status (NaN in a wk_value, a string that is not UTF-8),
 * WK_ERR_ARG, WK_ERR_NOMEM. Thread-safe.
 */
WK_API wk_status wk_pq_struct_params(const wk_schema *schema, const void *obj,
                                     const char *const *fields, size_t n, wk_pq_param *out,
                                     wk_arena *arena, wk_schema_error *err);

/* wk_pq_struct_sql statements */
#define WK_PQ_SQL_SELECT 0u /**< `SELECT "f1", ... FROM table WHERE key = $1` */
#define WK_PQ_SQL_UPSERT 1u /**< `INSERT INTO table (key, "f1", ...) VALUES ($1, $2, ...) ON
                                 CONFLICT (key) DO UPDATE SET "f1" = $2, ...` */

/**
 * Appends to `out` (NUL-terminated; the NUL is not counted in out->len) the statement `what`
 * implies for struct schema `s` over `table` with primary key column `key`: the columns are
 * the schema's fields in order, as quoted identifiers (a field's wire name is its column
 * name, as the row -> struct plan matches them), $1 is the key, and an upsert's $2... are
 * the fields in order, which wk_pq_struct_params(s, obj, NULL, s->nfields, ...) fills.
 * `table` and `key` are SQL text as written in a statement (`users`, `app.users`,
 * `"Users"`), not quoted here: never pass a request's bytes. Returns WK_OK, WK_ERR_ARG (no
 * table or key, a value schema or no fields, another `what`), the buffer's status (`out`
 * unchanged).
 */
WK_API wk_status wk_pq_struct_sql(const wk_schema *s, const char *table, const char *key,
                                  unsigned what, wk_buf *out, wk_error *err);

/* ---- binary COPY ---------------------------------------------------------------------- */

/**
 * Called by wk_pq_copy_out and by non-blocking queries (wk_pq_row_handler) for every row:
 * vals[i][0..lens[i]) is column i (lens[i] -1 for NULL), valid only during the call, in the
 * binary format with COPY and in the plan's column formats with a query; decode it with
 * `plan` (wk_pg_plan_decode_row, wk_pg_plan_emit_row, wk_pg_plan_value_row). A status other
 * than WK_OK stops the copy or query, which then returns it (with `err` as the function left
 * it).
 */
typedef wk_status (*wk_pq_copy_row_fn)(void *ctx, const wk_pg_plan *plan,
                                        const uint8_t *const *vals, const int *lens,
                                        wk_error *err);

/**
 * Streams the rows of `query` (one SELECT-like statement, no parameters) with
 * `COPY (query) TO STDOUT (FORMAT binary)`: the query is described first (one round trip)
 * and a binary plan built from its columns (kinds NULL = WK_PG_KIND_EVENTS for all, offsets
 * NULL = 0), then each tuple goes to `fn` as it arrives. Memory stays bounded by the largest
 * tuple. The connection's deadline (wk_pq_set_timeout) applies to every wait for data: a
 * server silent that long has the copy cancelled. `*rows` (may be NULL) receives the number of
 * rows handed to `fn`. Returns WK_OK, WK_ERR_SERVER / WK_ERR_CONNECT (wk_pq_last_error; the
 * rows already handed over stay handed over), WK_ERR_IO (timed out), WK_ERR_NOT_FOUND (a
 * column type without a binary decoder: err->offset is its index, wk_pq_conn_message names
 * it), WK_ERR_TRUNCATED / WK_ERR_SYNTAX (malformed COPY data: err->offset is the stream
 * offset), WK_ERR_ARG (a query without columns), or `fn`'s status.
 */
WK_API wk_status wk_pq_copy_out(wk_pq_conn *conn, const char *query, const wk_pg_kind *kinds,
                                const size_t *offsets, wk_pq_copy_row_fn fn, void *ctx,
                                uint64_t *rows, wk_error *err);

/** A binary COPY into a table in progress (opaque; wk_pq_copy_in_start, wk_pq_copy_in_end). */
typedef struct wk_pq_copy_in wk_pq_copy_in;

/**
 * Starts `COPY table (columns) FROM STDIN (FORMAT binary)`: the table's columns are read once
 * from the catalog (`table` as SQL names it: schema-qualified, quoted if need be), columns[i]
 * is matched by name and given the binary encoder of its type for the C kind kinds[i]
 * (WK_PG_KIND_TEXT: a wk_slice of PostgreSQL text input). Returns WK_OK, WK_ERR_NOT_FOUND (no
 * such column, or no encoder for its type from that kind: err->offset is the index and
 * wk_pq_conn_message names the column), WK_ERR_SERVER / WK_ERR_CONNECT (wk_pq_last_error),
 * WK_ERR_IO (the server did not start the COPY within the connection's deadline, e.g. behind
 * another session's lock: it was cancelled), WK_ERR_ARG, WK_ERR_NOMEM. While it runs the
 * connection serves nothing else and its PGconn is in non-blocking mode: every wait of the
 * copy (the start, each chunk sent, the end) is bounded by the connection's deadline.
 */
WK_API wk_status wk_pq_copy_in_start(wk_pq_conn *conn, const char *table,
                                     const char *const *columns, const wk_pg_kind *kinds,
                                     size_t n, wk_pq_copy_in **out, wk_error *err);

/** The number of columns of the copy. */
WK_API size_t wk_pq_copy_in_ncols(const wk_pq_copy_in *c);

/** The type OID of column `col` (0 past the last). */
WK_API wk_pg_oid wk_pq_copy_in_oid(const wk_pq_copy_in *c, size_t col);

/**
 * Encodes one row: values[i] points to column i's value in its C kind (NULL for SQL NULL).
 * Tuples are buffered and sent in 64 KiB chunks. A value its encoder refuses drops the whole
 * row and returns the encoder's status, err->offset the column index, wk_pq_conn_message
 * "row N, column \"name\": why"; the copy can go on with the next row or be aborted.
 * WK_ERR_CONNECT when the connection broke; WK_ERR_IO when the server took no chunk within the
 * connection's deadline (it stopped reading): the COPY is then cancelled and failed. After
 * either only wk_pq_copy_in_end is left, which returns the same status.
 */
WK_API wk_status wk_pq_copy_in_row(wk_pq_copy_in *c, const void *const *values, wk_error *err);

/**
 * Ends the copy and frees `c`: sends the trailer and waits for the server's result (nothing is
 * committed before), or with `abort_reason` non-NULL makes the server fail the COPY with that
 * message (nothing is written). `*rows` (may be NULL) receives the count the server reports
 * written, 0 unless the COPY completed. Returns WK_OK, WK_ERR_SERVER (a constraint, a value
 * the server refused, or the abort: wk_pq_last_error), WK_ERR_CONNECT, WK_ERR_IO (timeout).
 */
WK_API wk_status wk_pq_copy_in_end(wk_pq_copy_in *c, const char *abort_reason, uint64_t *rows,
                                   wk_error *err);

/**
 * Starts a binary COPY into `table` that takes records of the row policy (wirekit/pg.h):
 * the columns are `columns[0..n)` (the first record's keys, say) followed by every json/jsonb
 * column of the table not among them (a SQL NULL there is a key left out), all in binary. Then
 * wk_pq_copy_in_record for each record and wk_pq_copy_in_end. `opts` as for the records read
 * (NULL: zeroed). Same statuses as wk_pq_copy_in_start.
 */
WK_API wk_status wk_pq_copy_in_start_records(wk_pq_conn *conn, const char *table,
                                             const char *const *columns, size_t n,
                                             const wk_pg_row_opts *opts, wk_pq_copy_in **out,
                                             wk_error *err);

/**
 * Adds one record to a copy started with wk_pq_copy_in_start_records, its values turned into
 * the columns' binary forms by wk_pg_row_parse. A record that does not fit is dropped whole
 * with wk_pg_row_parse's status (wk_pq_conn_message: "column \"name\": why"; err->offset the
 * column index); then the copy can go on or be aborted. WK_ERR_CONNECT and WK_ERR_IO as
 * wk_pq_copy_in_row; WK_ERR_STATE for a copy not started from records.
 */
WK_API wk_status wk_pq_copy_in_record(wk_pq_copy_in *c, const wk_value *rec, wk_error *err);

/** After a wk_pq_copy_in_record that failed with WK_ERR_NOT_FOUND: the index of the record's
 *  pair whose key is no column of the copy (wk_pg_row_unknown_key), or SIZE_MAX when the
 *  failure was another (then err->offset is the column index). SIZE_MAX for a copy not started
 *  from records. */
WK_API size_t wk_pq_copy_in_unknown_key(const wk_pq_copy_in *c);

/* ---- pipeline mode ---------------------------------------------------------------------- */

/**
 * A batch of statements sent in one round trip (libpq pipeline mode; opaque):
 * wk_pq_pipeline_begin, wk_pq_pipeline_add for each statement, then wk_pq_pipeline_next for
 * each outcome in order, and wk_pq_pipeline_end (or wk_pq_pipeline_discard).
 *
 * The batch is one implicit transaction (one Sync at its end), as PostgreSQL runs a
 * pipeline: wk_pq_pipeline_end returning WK_OK says it committed (see there for the other
 * statuses). When a statement fails, the server skips every later one (WK_PQ_STMT_ABORTED)
 * and rolls back the earlier ones, which still report WK_PQ_STMT_OK with their results
 * (they ran). A batch that holds its own BEGIN/COMMIT follows those instead.
 *
 * Statements are prepared once per connection and kept in a cache keyed by their text and
 * parameter types (see wk_pq_set_stmt_cache_capacity): a batch whose statements are all
 * cached costs one round trip; otherwise the new ones are prepared and described first, all
 * together in one more round trip (their result format is chosen as wk_pq_exec does: binary
 * when every column has a binary decoder). A statement the server cannot prepare before the
 * batch runs (a table the batch itself creates) is sent unprepared in its place, its result
 * in text, which wk_pq_plan decodes all the same.
 *
 * While a pipeline is open the connection serves nothing else. The connection's deadline
 * (wk_pq_set_timeout) bounds every wait for the next outcome: past it the running statement
 * is cancelled (it reports the server's 57014, the rest ABORTED), and a server that does not
 * answer even the cancel within the cancel's grace (wk_pq_connect_timeout) has the
 * connection given up (the rest UNKNOWN). The idle limit (wk_pq_limits.idle_ms) applies to
 * the same waits. A pipeline is used by one thread at a time.
 */
typedef struct wk_pq_pipeline wk_pq_pipeline;

/** What became of one statement of a pipeline. */
typedef enum wk_pq_stmt_state {
    WK_PQ_STMT_OK = 0,  /**< it ran: `res` holds its rows or command tag */
    WK_PQ_STMT_FAILED,  /**< the server reported an error for it: `error` (SQLSTATE, ...) */
    WK_PQ_STMT_ABORTED, /**< not run: an earlier statement of the batch failed
                             (libpq's PGRES_PIPELINE_ABORTED); nothing of it happened */
    WK_PQ_STMT_UNKNOWN  /**< no answer: the connection was lost or given up before its result
                             came (wk_pq_conn_message says why); the batch's commit is not
                             confirmed (see wk_pq_pipeline_end) */
} wk_pq_stmt_state;

/** The outcome of one statement, as wk_pq_pipeline_next hands it out. */
typedef struct wk_pq_stmt_result {
    size_t index;           /**< the statement's position in the batch (0 = first added) */
    wk_pq_stmt_state state; /**< what became of it (OK, FAILED, ABORTED, UNKNOWN) */
    PGresult *res;          /**< OK: its result (rows in binary or text: decode them with
                                 wk_pq_plan); FAILED: the error result; else NULL. Owned by
                                 the pipeline, valid until the next wk_pq_pipeline_next or the
                                 end of the pipeline */
    const wk_pq_error *error; /**< FAILED: the server's error (the connection's last error,
                                   valid as long as `res`); else NULL */
} wk_pq_stmt_result;

/** A fixed, static description of `s` ("ok", "failed: the server reported an error",
 *  "aborted: an earlier statement of the pipeline failed", "unknown: no answer from the
 *  server"; "?" for a value outside the enum). */
WK_API const char *wk_pq_stmt_state_str(wk_pq_stmt_state s);

/**
 * Opens an empty pipeline on `conn`; nothing is sent yet. End (or discard) it before
 * freeing the connection. Returns WK_OK, WK_ERR_STATE (a non-blocking query of
 * wk_pq_async_start is in flight, or another pipeline is open on the
 * connection), WK_ERR_IO (the connection was given up after a timeout), WK_ERR_NOMEM.
 * `*out` is NULL on error.
 */
WK_API wk_status wk_pq_pipeline_begin(wk_pq_conn *conn, wk_pq_pipeline **out, wk_error *err);

/**
 * Queues `sql` (one statement, parameters $1..$n) with params[0..n) encoded now by the
 * connection's registry as wk_pq_exec encodes them (the values need not outlive the call).
 * Nothing is sent until the first wk_pq_pipeline_next or wk_pq_pipeline_end. Returns WK_OK;
 * WK_ERR_NOT_FOUND (no encoder for a parameter: err->offset is its index) or an encoder's
 * status, the statement then not queued and the pipeline usable; WK_ERR_LIMIT (more than
 * 65535 parameters, or more than 1,000,000 statements in one batch); WK_ERR_ARG (`sql`
 * NULL, or `params` NULL with n > 0); WK_ERR_STATE (the pipeline was already sent);
 * WK_ERR_NOMEM.
 */
WK_API wk_status wk_pq_pipeline_add(wk_pq_pipeline *p, const char *sql,
                                    const wk_pq_param *params, size_t n, wk_error *err);

/** The number of statements queued in `p`. */
WK_API size_t wk_pq_pipeline_count(const wk_pq_pipeline *p);

/**
 * The outcome of the next statement, in the order they were added, into `*out`. The first
 * call sends the batch (after preparing statements the cache does not hold yet), then every
 * call waits, within the connection's deadline, until the next statement's answer is in,
 * writing what is still unsent while it waits. Returns WK_OK when `*out` describes a
 * statement (whatever its state), WK_ERR_EOF after the last one (`*out` zeroed). Failures
 * show in the states; wk_pq_pipeline_end gives the batch's status.
 */
WK_API wk_status wk_pq_pipeline_next(wk_pq_pipeline *p, wk_pq_stmt_result *out, wk_error *err);

/**
 * Ends the pipeline and frees it: sends the batch if it was not sent, reads the outcomes not
 * yet read (discarding them) and the batch's end, and leaves the connection ready for other
 * work. Returns WK_OK when every statement ran and the batch was committed; WK_ERR_SERVER
 * when a statement failed (wk_pq_last_error holds its error; nothing was committed);
 * WK_ERR_IO when the deadline passed (the batch was cancelled, or the connection given up);
 * WK_ERR_CONNECT when the connection was lost (wk_pq_conn_message says why); WK_ERR_STATE
 * when the connection still had results of a wk_pq_send to read (nothing was sent);
 * WK_ERR_NOMEM. After WK_ERR_SERVER and WK_ERR_STATE nothing of the batch was committed;
 * after WK_ERR_CONNECT and WK_ERR_IO the commit was not confirmed (it cannot have happened
 * while a statement was still unanswered by a server that was running, but a connection cut
 * after the server committed looks the same: ask the server when it matters).
 * NULL is a no-op returning WK_OK.
 */
WK_API wk_status wk_pq_pipeline_end(wk_pq_pipeline *p, wk_error *err);

/** Frees `p` without running it when it was not sent yet; a sent pipeline is ended as
 *  wk_pq_pipeline_end does, its status dropped. NULL is a no-op. */
WK_API void wk_pq_pipeline_discard(wk_pq_pipeline *p);

/** Counters of a connection's prepared-statement cache (wk_pq_get_stmt_cache_stats). */
typedef struct wk_pq_stmt_cache_stats {
    size_t size;        /**< statements prepared on the server now */
    size_t capacity;    /**< the most it keeps (default 64) */
    uint64_t hits;      /**< statements added that were prepared already */
    uint64_t misses;    /**< statements added that were not prepared yet: once per new
                             statement of a batch, or at every add of one sent unprepared
                             (no slot free, capacity 0) */
    uint64_t evictions; /**< prepared statements dropped to make room (DEALLOCATEd) */
} wk_pq_stmt_cache_stats;

/**
 * Sets how many prepared statements the pipelines of `conn` keep (default 64, at most 4096;
 * 0: none, every statement is sent unprepared with a text result). At the bound, a new
 * statement takes the place of the least recently used one, whose DEALLOCATE goes out with
 * the next batch; a batch with more distinct statements than the capacity sends the extra
 * ones unprepared. Lowering the capacity evicts the least recently used now. Returns WK_OK,
 * WK_ERR_LIMIT (over 4096), WK_ERR_STATE (a pipeline is open), WK_ERR_NOMEM.
 */
WK_API wk_status wk_pq_set_stmt_cache_capacity(wk_pq_conn *conn, size_t capacity,
                                               wk_error *err);

/** Fills `*out` with the counters of `conn`'s prepared-statement cache. */
WK_API void wk_pq_get_stmt_cache_stats(const wk_pq_conn *conn, wk_pq_stmt_cache_stats *out);


/* ---- non-blocking queries for event loops (pq_async.c) --------------------------------- */

/** A query in flight, driven by an event loop (opaque; wk_pq_async_start, wk_pq_async_free). */
typedef struct wk_pq_async wk_pq_async;

/** wk_pq_async_wants: wait until the socket is readable. */
#define WK_PQ_WANT_READ 0x01u
/** wk_pq_async_wants: wait until the socket is writable (libpq holds data to send). */
#define WK_PQ_WANT_WRITE 0x02u

/** Where the rows of a non-blocking query go. `kinds` and `offsets` (NULL: WK_PG_KIND_EVENTS
 *  for every column, offsets 0) make the plan, built when the first row arrives; they must
 *  stay valid until the query ends. */
typedef struct wk_pq_row_handler {
    const wk_pg_kind *kinds;  /**< the C kind of each result column, or NULL */
    const size_t *offsets;    /**< the offset of each column in a row struct, or NULL */
    wk_pq_copy_row_fn fn;     /**< called once per row as it arrives; NULL: rows are counted */
    void *ctx;                /**< passed to fn */
} wk_pq_row_handler;

/**
 * Sends `sql` with `params[0..n)` without waiting: parameters are encoded as wk_pq_exec
 * encodes them (binary), the result format is chosen as wk_pq_exec chooses it (a statement
 * not seen before on this connection is first prepared and described, two more round trips
 * that the same loop drives), and rows arrive one by one (libpq's single-row mode), each
 * handed to `rows->fn` with the plan as soon as wk_pq_async_step reads it, so any number of
 * rows takes bounded memory. The PGconn is in non-blocking mode until the query ends;
 * nothing on this path blocks except the cancel request (see wk_pq_async_cancel). One
 * statement, no COPY. The deadline starts as the connection's timeout (wk_pq_set_timeout;
 * none when 0) counted from now, for the whole query; see wk_pq_async_set_timeout.
 * While it runs (until wk_pq_async_step has returned its outcome, or wk_pq_async_free) the
 * connection takes no other query: wk_pq_exec, wk_pq_send, wk_pq_pipeline_begin and another
 * wk_pq_async_start return WK_ERR_STATE (wk_pq_conn_message says why), since their messages
 * would interleave with this query's.
 * Returns WK_OK (`*out` is set: drive it with wk_pq_async_step, free it with
 * wk_pq_async_free), WK_ERR_STATE (another query is in progress on the connection, a
 * non-blocking one included, or a pipeline is open),
 * WK_ERR_IO (the connection was given up after a timeout), WK_ERR_CONNECT (sending failed:
 * wk_pq_last_error), WK_ERR_ARG, WK_ERR_NOMEM, or a parameter's encoding status (as
 * wk_pq_exec). `conn` must outlive the query.
 */
WK_API wk_status wk_pq_async_start(wk_pq_conn *conn, const char *sql, const wk_pq_param *params,
                                   size_t n, const wk_pq_row_handler *rows, wk_pq_async **out,
                                   wk_error *err);

/** The socket to watch (PQsocket), valid while the query runs. */
WK_API int wk_pq_async_socket(const wk_pq_async *q);

/** What to wait for on the socket before the next wk_pq_async_step: WK_PQ_WANT_READ,
 *  with WK_PQ_WANT_WRITE while libpq holds data to send; 0 once the query has ended. */
WK_API unsigned wk_pq_async_wants(const wk_pq_async *q);

/** Milliseconds until the query's deadline or idle limit (or, after a cancel request, until
 *  the request is due again or the server must have answered it): the timeout for poll(); 0
 *  when it has passed (call wk_pq_async_step now), -1 when there is none. */
WK_API int wk_pq_async_timeout_ms(const wk_pq_async *q);

/** Sets the query's deadline to `timeout_ms` from now (0: none). When it passes,
 *  wk_pq_async_step cancels the query and it ends with WK_ERR_IO. */
WK_API void wk_pq_async_set_timeout(wk_pq_async *q, uint32_t timeout_ms);

/**
 * Advances the query without blocking: sends what libpq holds, reads what the socket has,
 * hands every complete row to the row function, and sends the next protocol step. Call it
 * when the socket is ready as wk_pq_async_wants says, and when wk_pq_async_timeout_ms
 * passes (it enforces the deadline). Returns WK_ERR_AGAIN while the query goes on, then,
 * once, its outcome (and the same again on later calls): WK_OK (every row was handed over;
 * wk_pq_async_command has the tag), WK_ERR_SERVER (the server reported an error, possibly
 * after some rows: wk_pq_last_error; after wk_pq_async_cancel, SQLSTATE 57014),
 * WK_ERR_CONNECT (the connection was lost), WK_ERR_IO (the deadline or the idle limit passed:
 * the query was cancelled; when the server did not answer the cancel within its grace the
 * connection is given up as wk_pq_exec gives it up), the row function's status, or a plan's status (a
 * column without a decoder: WK_ERR_NOT_FOUND) — in the last two cases the query is
 * cancelled and its remaining rows dropped before the status is returned.
 */
WK_API wk_status wk_pq_async_step(wk_pq_async *q, wk_error *err);

/**
 * Asks the server to cancel the query (PQcancel on a helper thread, on a connection of its
 * own: nothing here blocks); rows read meanwhile are still handed over and the query ends
 * through wk_pq_async_step, normally with WK_ERR_SERVER and SQLSTATE 57014, or WK_OK when it
 * had already finished. A server that does not answer within the cancel's grace
 * (wk_pq_connect_timeout) has the connection given up. Returns WK_OK, or WK_ERR_STATE when the query has ended.
 */
WK_API wk_status wk_pq_async_cancel(wk_pq_async *q, wk_error *err);

/** The number of rows handed to the row function so far. */
WK_API uint64_t wk_pq_async_rows(const wk_pq_async *q);

/** The command tag of the finished query ("SELECT 3", "INSERT 0 1"; "" before the end). */
WK_API const char *wk_pq_async_command(const wk_pq_async *q);

/** Frees the query. One still running is abandoned first: cancelled and drained within the
 *  cancel's grace (wk_pq_connect_timeout; then the connection is given up), so that the
 *  connection can run the next query. The PGconn is back in blocking mode. NULL is a no-op. */
WK_API void wk_pq_async_free(wk_pq_async *q);

/* ---- non-blocking connect for event loops (pq_connect.c) ------------------------------- */

/** A connection being made, driven by an event loop (opaque; wk_pq_connect_start,
 *  wk_pq_connecting_take). */
typedef struct wk_pq_connecting wk_pq_connecting;

/**
 * Starts connecting to `dsn` without blocking (libpq's PQconnectStartParams; a host name is
 * still resolved by libpq, which can block unless `dsn` gives hostaddr or a numeric host).
 * The rest is what wk_pq_connect does: the session settings, the catalog query and the
 * registry snapshot from `base` (NULL: the built-in codecs), here in one round trip sent
 * once the socket is up; the connection ends in the same state as wk_pq_connect's.
 * `timeout_ms` (0: none) is the deadline of the whole connect and then the connection's
 * per-query deadline, as wk_pq_connect_timeout (libpq's connect_timeout is not applied on
 * this path: the deadline replaces it). Returns WK_OK (`*out` is set: drive it with
 * wk_pq_connecting_step, then take the connection with wk_pq_connecting_take) or
 * WK_ERR_NOMEM. A failure to start (a malformed `dsn`) is reported by the first step.
 */
WK_API wk_status wk_pq_connect_start(const char *dsn, const wk_pg_registry *base,
                                     uint32_t timeout_ms, wk_pq_connecting **out,
                                     wk_error *err);

/**
 * wk_pq_connect_start with `limits` (NULL: none) as wk_pq_connect_limits takes them: the
 * connect's deadline is the first of timeout_ms, the connect timeout (the DSN's, else
 * connect_timeout_ms) and idle_ms that is set; with idle_ms a step that finds the socket
 * without an event for idle_ms ends the connect ("connecting timed out: nothing from the
 * server for N ms"), and the connection keeps idle_ms (and the keepalives it asks libpq for)
 * for its queries, pipelines and non-blocking queries. wk_pq_connect_start(dsn, base, t, ...)
 * is this with {t, 0, 0}.
 */
WK_API wk_status wk_pq_connect_start_limits(const char *dsn, const wk_pg_registry *base,
                                            const wk_pq_limits *limits,
                                            wk_pq_connecting **out, wk_error *err);

/** The socket to watch before the next step (-1 once it has failed). It can change between
 *  steps while libpq tries the next host or address: read it again before each wait. */
WK_API int wk_pq_connecting_socket(const wk_pq_connecting *k);

/** What to wait for on the socket before the next step: WK_PQ_WANT_READ and/or
 *  WK_PQ_WANT_WRITE; 0 once the connect has ended. */
WK_API unsigned wk_pq_connecting_wants(const wk_pq_connecting *k);

/** Milliseconds until the connect's deadline (0: passed, or ended: call
 *  wk_pq_connecting_step now), -1 when there is none. */
WK_API int wk_pq_connecting_timeout_ms(const wk_pq_connecting *k);

/**
 * Does what the socket allows without blocking: advances libpq's connect, sends the set-up
 * once the socket is up, reads its answers, and builds the snapshot once all are in. Call it
 * when the socket is ready as wk_pq_connecting_wants says, and when
 * wk_pq_connecting_timeout_ms has passed. Returns WK_ERR_AGAIN (wait and step again), WK_OK
 * (connected: wk_pq_connecting_take), or the failure, which every later step repeats:
 * WK_ERR_CONNECT (the server refused or could not be reached, a bad password or database:
 * the server's message in wk_pq_conn_message of the taken connection and
 * wk_pq_last_error; or the deadline passed: "connecting timed out after N ms", or "setting
 * up the session timed out after N ms" once the socket was up),
 * WK_ERR_SERVER (the set-up or catalog query failed), WK_ERR_NOMEM.
 */
WK_API wk_status wk_pq_connecting_step(wk_pq_connecting *k, wk_error *err);

/**
 * Frees `k` and hands its connection over: once a step returned WK_OK, ready for queries;
 * after a failure, the failed connection, whose message says why (free it with
 * wk_pq_conn_free, as after a failed wk_pq_connect). A connect still in progress is given up
 * (nothing is handed over: NULL). NULL is a no-op (NULL).
 */
WK_API wk_pq_conn *wk_pq_connecting_take(wk_pq_connecting *k);

/* ---- pipelines driven by an event loop (pq_pipeline.c) --------------------------------- */

/**
 * wk_pq_pipeline_next for an event loop: never waits. The first call sends the batch (or,
 * when the cache lacks some of its statements, their preparation: the batch follows from the
 * step that finds their answers in). Every call writes what the socket takes, reads the
 * answers that have arrived, and hands out the next statement's outcome once its answer is
 * in. Returns WK_OK (`*out` as wk_pq_pipeline_next gives it), WK_ERR_AGAIN (wait on
 * wk_pq_pipeline_socket for what wk_pq_pipeline_wants says, at most
 * wk_pq_pipeline_timeout_ms, and step again), WK_ERR_EOF (every outcome handed out and the
 * batch's end read: wk_pq_pipeline_end returns without waiting), or WK_ERR_STATE (the
 * pipeline is being read with wk_pq_pipeline_next). The connection's deadline applies to
 * each wait for the next answer: past it a step cancels the batch (the running statement
 * fails with 57014, the rest are ABORTED, the end gives WK_ERR_IO), and if the server
 * answers neither within the cancel's grace (wk_pq_connect_timeout) the connection is given
 * up (the statements not answered are UNKNOWN). The idle limit (wk_pq_limits.idle_ms) ends
 * a wait as the deadline does. Nothing blocks: the cancel request goes out on a helper
 * thread, as for wk_pq_async_cancel. wk_pq_pipeline_next or wk_pq_pipeline_end may take over at any time
 * (they then wait as usual).
 */
WK_API wk_status wk_pq_pipeline_step(wk_pq_pipeline *p, wk_pq_stmt_result *out, wk_error *err);

/** The socket to watch before the next wk_pq_pipeline_step. */
WK_API int wk_pq_pipeline_socket(const wk_pq_pipeline *p);

/** What to wait for on the socket before the next wk_pq_pipeline_step: WK_PQ_WANT_READ,
 *  plus WK_PQ_WANT_WRITE while libpq holds part of the batch; 0 when the next step will not
 *  wait (the batch is not sent yet, or what it reads is in). */
WK_API unsigned wk_pq_pipeline_wants(const wk_pq_pipeline *p);

/** Milliseconds until the deadline or idle limit of the wait for the next answer (or, once
 *  cancelled, until the request is due again or the grace ends), when wk_pq_pipeline_step must be called even if the socket is
 *  not ready; 0 when it is due now (or wk_pq_pipeline_wants is 0), -1 without a deadline. */
WK_API int wk_pq_pipeline_timeout_ms(const wk_pq_pipeline *p);

/* ---- a pool of connections shared by threads (pq_pool.c) ------------------------------ */

/** A pool of connections shared by any number of threads (opaque; wk_pq_pool_new,
 *  wk_pq_pool_free). */
typedef struct wk_pq_pool wk_pq_pool;

/** Pool settings; zero means the default given after each field. */
typedef struct wk_pq_pool_opts {
    const char *dsn;              /**< as wk_pq_connect takes it (NULL or "": the libpq
                                       environment); copied */
    const wk_pg_registry *base;   /**< the registry every connection's snapshot starts from;
                                       NULL: the built-in codecs (a reference is kept) */
    size_t size;                  /**< connections: 4 (at most 1024) */
    uint32_t connect_timeout_ms;  /**< each connect attempt (socket and session set-up:
                                       wk_pq_limits.connect_timeout_ms, so a connect_timeout
                                       the DSN or PGCONNECT_TIMEOUT sets takes its place):
                                       10,000 */
    uint32_t query_timeout_ms;    /**< every connection's per-query deadline
                                       (wk_pq_set_timeout: the server's statement_timeout
                                       and the client's wait): 30,000 */
    uint32_t acquire_timeout_ms;  /**< wk_pq_pool_acquire with timeout 0: 5,000 */
    uint32_t health_check_ms;     /**< a connection idle longer than this makes a round trip
                                       before it is handed out: 30,000 */
    uint32_t backoff_min_ms;      /**< the wait after a failed connect: 50 ms, doubling ... */
    uint32_t backoff_max_ms;      /**< ... up to this: 2,000 ms */
    uint32_t idle_ms;             /**< every connection's idle limit, with the TCP keepalives
                                       and tcp_user_timeout it asks libpq for
                                       (wk_pq_limits.idle_ms): none */
    void *reserved[3];            /**< zero; room to grow without breaking the ABI */
} wk_pq_pool_opts;

/**
 * Creates a pool of `opts->size` connections (`opts` NULL: every default), all of them made
 * by the pool as wk_pq_connect makes one (so the libpq environment, service files and URIs
 * work as there), with the connect and per-query deadlines of `opts`. The first connection
 * is made now, so that a wrong DSN, password or database is reported here; the others are
 * made when first needed. Returns WK_OK, WK_ERR_CONNECT / WK_ERR_SERVER (the first connect
 * failed: `*out` is still set, as after a failed wk_pq_connect, so that
 * wk_pq_pool_last_error can tell why; the pool works as after any failed connect, trying
 * again when a connection is asked for, so a service may also start before its database; free
 * it with wk_pq_pool_free), WK_ERR_LIMIT (more than 1024 connections), WK_ERR_NOMEM (`*out`
 * NULL after these two).
 */
WK_API wk_status wk_pq_pool_new(const wk_pq_pool_opts *opts, wk_pq_pool **out, wk_error *err);

/** Closes every connection and frees the pool. Every connection must have been released, and
 *  no other call may be running on `p`. NULL is a no-op. */
WK_API void wk_pq_pool_free(wk_pq_pool *p);

/**
 * Takes a connection for the calling thread's exclusive use until wk_pq_pool_release,
 * waiting at most `timeout_ms` (0: the pool's acquire_timeout_ms) for one to be free. The
 * connection handed out is healthy as far as the pool can tell: it is not lost or given up,
 * nothing unexpected is waiting on its socket (the end of a terminated backend's session is
 * noticed here), and one idle longer than health_check_ms has just answered a round trip. A
 * dead connection is closed and its slot connected again before the call returns; a slot
 * whose last connect failed waits (backoff_min_ms, doubling up to backoff_max_ms) before
 * trying again, within the caller's deadline. A reconnected connection starts afresh: new
 * session, registry snapshot, result formats and prepared statements (rebuilt as they are
 * used). Returns WK_OK (`*out` set), WK_ERR_CONNECT (the server cannot be reached now, or
 * not before the deadline; wk_pq_pool_last_error tells why), WK_ERR_SERVER (a new
 * connection's set-up failed), WK_ERR_IO (every connection stayed in use until the
 * deadline), WK_ERR_NOMEM. Thread-safe.
 */
WK_API wk_status wk_pq_pool_acquire(wk_pq_pool *p, uint32_t timeout_ms, wk_pq_conn **out,
                                    wk_error *err);

/**
 * Gives back a connection taken with wk_pq_pool_acquire (NULL: no-op). Read or clear its
 * results first. A connection that was lost or given up after a timeout, or that is left
 * inside a transaction or with a query still running, is closed instead of kept (its slot
 * connects again when next needed), so a caller never hands an unfinished session to
 * another thread. Settings the caller changed (wk_pq_set_timeout, SET ...) stay with a kept
 * connection: restore them first. Thread-safe.
 */
WK_API void wk_pq_pool_release(wk_pq_pool *p, wk_pq_conn *conn);

/** Counters of a pool (wk_pq_pool_get_stats). */
typedef struct wk_pq_pool_stats {
    size_t size;               /**< slots */
    size_t open;               /**< connections open now */
    size_t busy;               /**< slots handed out (or being checked or connected) now */
    uint64_t acquires;         /**< wk_pq_pool_acquire calls */
    uint64_t waits;            /**< acquires that found every connection in use */
    uint64_t connects;         /**< connections made, first ones and reconnects */
    uint64_t connect_failures; /**< connect attempts that failed */
    uint64_t discarded;        /**< connections closed as dead (checked out or given back) */
    uint64_t health_checks;    /**< round trips made to check idle connections */
} wk_pq_pool_stats;

/** Fills `*out` with the pool's counters (one consistent snapshot). Thread-safe. */
WK_API void wk_pq_pool_get_stats(wk_pq_pool *p, wk_pq_pool_stats *out);

/**
 * Writes `obj` (a struct of schema `s`) as the row whose `key` column is `id[0..id_len)`
 * (sent as text, read as the column's type): the WK_PQ_SQL_UPSERT statement of
 * wk_pq_struct_sql with the struct's fields as parameters (wk_pq_struct_params), run on a
 * connection of `p` taken for the call (the pool's acquire timeout). `table` and `key` as for
 * wk_pq_struct_sql. Returns WK_OK, wk_pq_struct_sql's and wk_pq_struct_params's statuses
 * (err->path is not kept), wk_pq_pool_acquire's and wk_pq_exec's (WK_ERR_SERVER with the
 * server's message, WK_ERR_CONNECT, WK_ERR_IO). Thread-safe.
 */
WK_API wk_status wk_pq_pool_upsert(wk_pq_pool *p, const char *table, const char *key,
                                   const char *id, size_t id_len, const wk_schema *s,
                                   const void *obj, wk_error *err);

/** Copies the message of the pool's last failed connect (libpq's or the server's; "" when
 *  none failed) into buf[0..cap) (NUL-terminated, cut to fit) and returns its full length.
 *  Thread-safe. */
WK_API size_t wk_pq_pool_last_error(wk_pq_pool *p, char *buf, size_t cap);

/* ---- a wk_cache loader over PostgreSQL (pq_loader.c) ---------------------------------- */

/** A ready wk_cache_loader over a pool (opaque; wk_pq_loader_new, wk_pq_loader_free). */
typedef struct wk_pq_loader wk_pq_loader;

/** What a loader runs and decodes into. */
typedef struct wk_pq_loader_opts {
    wk_pq_pool *pool;            /**< where the statement runs (must outlive the loader) */
    const char *sql;             /**< one query whose $1 is the entity's id, returning at most
                                      one row ("SELECT ... FROM users WHERE id = $1"); copied.
                                      It must be safe to run twice (a read): see
                                      wk_pq_loader_load. NULL: the WK_PQ_SQL_SELECT statement
                                      of wk_pq_struct_sql over `table` and `key` */
    const wk_schema *schema;     /**< the struct a row decodes into, columns matched to
                                      fields by name as wk_pq_struct_plan_new matches them
                                      (must outlive the loader) */
    wk_pg_oid id_oid;            /**< the type $1 is sent as, from the id's text; 0: sent as
                                      text of unspecified type, read by the server as the
                                      type the statement gives $1 */
    unsigned struct_flags;       /**< WK_PQ_STRUCT_* for the row -> struct plan */
    uint32_t acquire_timeout_ms; /**< the wait for a pooled connection; 0: the pool's */
    const char *table;           /**< with `sql` NULL: the table the schema's fields are read
                                      from (SQL text, see wk_pq_struct_sql) */
    const char *key;             /**< with `sql` NULL: its primary key column: "id" when NULL */
    void *reserved[2];           /**< zero; room to grow without breaking the ABI */
} wk_pq_loader_opts;

/** Creates a loader. Returns WK_OK, WK_ERR_ARG (no pool or schema, neither a statement nor
 *  a table, or a schema wk_pq_struct_sql cannot make a statement of),
 *  WK_ERR_NOMEM. Nothing is sent until the first load. */
WK_API wk_status wk_pq_loader_new(const wk_pq_loader_opts *opts, wk_pq_loader **out,
                                  wk_error *err);

/** Frees the loader and its plans. No load may be running on it. NULL is a no-op. */
WK_API void wk_pq_loader_free(wk_pq_loader *l);

/**
 * The loader itself, a wk_cache_loader: pass it with the wk_pq_loader as its context
 * (`wk_cache_get(cache, &user_schema, id, len, wk_pq_loader_load, loader, &ref, &err)`).
 * Takes a connection from the pool, runs the statement with `id` as $1, gives the connection
 * back and decodes the row into `obj` (strings, trees and arrays in `arena`) with a
 * row -> struct plan built once per result shape and connection snapshot and reused by every
 * later load. A statement cut by a lost connection (a terminated backend, a restarted server)
 * is run once more on a fresh connection, so a load fails with WK_ERR_CONNECT only when the
 * server cannot be reached now, and never returns an empty or partial object for it.
 * Returns WK_OK, WK_ERR_NOT_FOUND (no row: the cache keeps it as a negative entry when its
 * negative_ttl_ms is set), WK_ERR_STATE (more than one row, or a statement that returns no
 * rows), WK_ERR_ARG (`s` is not the loader's schema), the pool's statuses (WK_ERR_CONNECT,
 * WK_ERR_IO when no connection was free in time), wk_pq_exec's (WK_ERR_SERVER: a server error;
 * WK_ERR_IO: the query's deadline passed), wk_pq_struct_plan_new's and
 * wk_pq_row_to_struct's (WK_ERR_TYPE, WK_ERR_RANGE, WK_ERR_NOT_FOUND for a column no field
 * matches, ...), WK_ERR_NOMEM. Thread-safe: any number of threads may load at once.
 */
WK_API wk_status wk_pq_loader_load(void *ctx, const wk_schema *s, const char *id, size_t id_len,
                                   void *obj, wk_arena *arena, wk_error *err);

#ifdef __cplusplus
}
#endif
#endif
