/*
 * Where it sits: the caller's C values per row -> the column encoders resolved once from the
 * registry (src/pg/registry.c, the family codecs) -> COPY's binary tuple layout in a buffer
 * -> PQputCopyData in chunks -> PQputCopyEnd and the server's COPY result.
 *
 * Binary COPY in through libpq: the target table's columns (names and type OIDs) are read
 * once from the catalog, each given column's binary encoder for the caller's C kind is
 * resolved once, then `COPY table (columns) FROM STDIN (FORMAT binary)` receives the header,
 * one tuple per wk_pq_copy_in_row (each value encoded for its column's type into a buffer sent
 * in 64 KiB CopyData chunks) and the trailer. Nothing is committed until wk_pq_copy_in_end
 * gets the server's COPY result, whose count is the number of rows reported written; a value
 * that does not fit is refused naming its row and column, and the copy is then aborted.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pg/pg_interface.h"
#include "pq/pq_internal.h"

/* How much encoded data is gathered before one CopyData message is sent. */
#define COPY_IN_CHUNK ((size_t)64 << 10)

/* One COPY in progress: the columns and their encoders, the unsent bytes, the rows so far. */
struct wk_pq_copy_in {
    wk_pq_conn *conn;
    size_t ncols;
    char **names;
    wk_pg_oid *oids;
    const wk_pg_encoder **enc;
    wk_buf buf;
    wk_pg_rowdesc *rd;  /* started from records: the row policy's columns, else NULL */
    const uint8_t **rvals; /* a record's column values (wk_pg_row_parse) */
    int *rlens;
    uint64_t rows;      /* rows encoded */
    bool failed;        /* timed out or broken: only end is allowed, it returns fail_st */
    wk_status fail_st;  /* why */
};

/* The COPY is over on the client's side (timed out, or the connection broke). */
static wk_status copy_in_failed(wk_pq_copy_in *c, wk_status st)
{
    c->failed = true;
    c->fail_st = st;
    return st;
}

/* A wait past the connection's deadline: the COPY is cancelled and drained. */
static wk_status copy_in_timed_out(wk_pq_conn *conn, wk_error *err)
{
    bool answered = wk__pq_abandon(conn);
    wk__pq_set_message(conn, answered ? "COPY timed out (cancelled)"
                                      : "COPY timed out and the server did not answer the "
                                        "cancel request; the connection was given up");
    return wk__pg_fail(err, WK_ERR_IO, 0, "the COPY timed out");
}

/* Hands `n` bytes to libpq and flushes them within the connection's deadline, so that at
 * most one chunk waits in libpq's buffer and a server that stops reading cannot hold the
 * caller past the deadline. */
static wk_status send_copy(wk_pq_conn *conn, const char *data, size_t n, const char *end_reason,
                           bool end, wk_error *err)
{
    int64_t deadline = wk__pq_deadline(conn);
    for (;;) {
        int r = end ? PQputCopyEnd(conn->pg, end_reason)
                    : PQputCopyData(conn->pg, data, (int)n);
        if (r < 0) {
            return wk__pq_take_error(conn, NULL, "the connection was lost during the COPY",
                                     err);
        }
        wk_status st = wk__pq_flush(conn, deadline, err);
        if (st != WK_OK) {
            return st == WK_ERR_IO ? copy_in_timed_out(conn, err) : st;
        }
        if (r == 1) {
            return WK_OK;
        }
        /* 0: libpq's buffer was full; it has been flushed, so try again */
    }
}

/* Frees the copy's own memory (the connection stays the caller's). */
static void copy_in_release(wk_pq_copy_in *c)
{
    if (c == NULL) {
        return;
    }
    for (size_t i = 0; i < c->ncols && c->names != NULL; i++) {
        free(c->names[i]);
    }
    free(c->names);
    free(c->oids);
    free(c->enc);
    wk_pg_rowdesc_free(c->rd);
    free(c->rvals);
    free(c->rlens);
    wk_buf_free(&c->buf);
    free(c);
}

/* Sends what the buffer holds as one CopyData message, then empties it; a failure ends the
 * copy (copy_in_failed). */
static wk_status put(wk_pq_copy_in *c, wk_error *err)
{
    if (c->buf.len == 0) {
        return WK_OK;
    }
    wk_status st = send_copy(c->conn, (const char *)c->buf.data, c->buf.len, NULL, false, err);
    if (st != WK_OK) {
        return copy_in_failed(c, st);
    }
    wk_buf_clear(&c->buf);
    return WK_OK;
}

/* Public (wirekit/pq.h): reads the table's column types, resolves an encoder of the caller's
 * kind for each, starts the COPY and queues the binary header. Up to 1600 columns (the most a
 * table can have). */
WK_API wk_status wk_pq_copy_in_start(wk_pq_conn *conn, const char *table,
                                     const char *const *columns, const wk_pg_kind *kinds,
                                     size_t n, wk_pq_copy_in **out, wk_error *err)
{
    *out = NULL;
    if (conn == NULL || table == NULL || columns == NULL || kinds == NULL || n == 0 ||
        n > 1600) {
        return wk__pg_fail(err, WK_ERR_ARG, 0, "COPY in needs a table and 1 to 1600 columns");
    }
    wk__pq_clear_error(conn);
    conn->message[0] = '\0';
    if (conn->broken) {
        return wk__pg_fail(err, WK_ERR_IO, 0, "the connection is unusable after a timeout");
    }
    wk_pq_copy_in *c = calloc(1, sizeof *c);
    if (c == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory");
    }
    c->conn = conn;
    c->names = calloc(n, sizeof *c->names);
    c->oids = calloc(n, sizeof *c->oids);
    c->enc = calloc(n, sizeof *c->enc);
    wk_buf_init(&c->buf, NULL, 0);
    if (c->names == NULL || c->oids == NULL || c->enc == NULL) {
        copy_in_release(c);
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory");
    }
    c->ncols = n;
    /* the table's columns, once */
    const char *pv[1] = {table};
    if (!PQsendQueryParams(conn->pg,
                           "SELECT attname, atttypid, format_type(atttypid, atttypmod) "
                           "FROM pg_attribute WHERE attrelid = "
                           "$1::regclass AND attnum > 0 AND NOT attisdropped",
                           1, NULL, pv, NULL, NULL, 0)) {
        copy_in_release(c);
        return wk__pq_take_error(conn, NULL, "cannot send the query", err);
    }
    PGresult *r = NULL;
    wk_status st = wk__pq_wait(conn, &r, err);
    if (st != WK_OK) {
        copy_in_release(c);
        return st;
    }
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        st = wk__pq_take_error(conn, r, "cannot read the table's columns", err);
        PQclear(r);
        copy_in_release(c);
        return st;
    }
    wk_buf sql;
    wk_buf_init(&sql, NULL, 0);
    st = wk_buf_append(&sql, "COPY ", 5);
    st = st == WK_OK ? wk_buf_append(&sql, table, strlen(table)) : st;
    st = st == WK_OK ? wk_buf_append(&sql, " (", 2) : st;
    for (size_t i = 0; i < n && st == WK_OK; i++) {
        int row = -1;
        for (int k = 0; k < PQntuples(r); k++) {
            if (strcmp(PQgetvalue(r, k, 0), columns[i]) == 0) {
                row = k;
                break;
            }
        }
        if (row < 0) {
            snprintf(conn->message, sizeof conn->message, "table %s has no column \"%s\"",
                     table, columns[i]);
            st = wk__pg_fail(err, WK_ERR_NOT_FOUND, i, "no such column");
            break;
        }
        c->oids[i] = (wk_pg_oid)strtoul(PQgetvalue(r, row, 1), NULL, 10);
        c->enc[i] = wk_pg_registry_find_encoder_for(conn->reg, c->oids[i], WK_PG_BINARY,
                                                    kinds[i]);
        if (c->enc[i] == NULL) {
            /* in the caller's words: the type as SQL names it, the kind by its name */
            snprintf(conn->message, sizeof conn->message,
                     "column \"%s\" of type %s has no binary encoder from a C value of kind "
                     "%s",
                     columns[i], PQgetvalue(r, row, 2), wk_pg_kind_name(kinds[i]));
            st = wk__pg_fail(err, WK_ERR_NOT_FOUND, i, "no binary encoder for a column");
            break;
        }
        c->names[i] = malloc(strlen(columns[i]) + 1);
        if (c->names[i] == NULL) {
            st = wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory");
            break;
        }
        memcpy(c->names[i], columns[i], strlen(columns[i]) + 1);
        char *q = PQescapeIdentifier(conn->pg, columns[i], strlen(columns[i]));
        if (q == NULL) {
            st = wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory");
            break;
        }
        st = i > 0 ? wk_buf_append(&sql, ", ", 2) : WK_OK;
        st = st == WK_OK ? wk_buf_append(&sql, q, strlen(q)) : st;
        PQfreemem(q);
    }
    PQclear(r);
    static const char tail[] = ") FROM STDIN (FORMAT binary)";
    st = st == WK_OK ? wk_buf_append(&sql, tail, sizeof tail) : st; /* with the NUL */
    if (st != WK_OK) {
        wk_buf_free(&sql);
        copy_in_release(c);
        return st;
    }
    r = NULL;
    /* non-blocking until the COPY ends: every wait is a poll() within the deadline */
    int sent = PQsetnonblocking(conn->pg, 1) == 0 && PQsendQuery(conn->pg, (const char *)sql.data);
    wk_buf_free(&sql);
    if (!sent) {
        copy_in_release(c);
        return wk__pq_take_error(conn, NULL, "cannot send the COPY", err);
    }
    /* CopyInResponse arrives as a result of its own; wk__pq_wait would wait for the end */
    if (!wk__pq_await_ready(conn, wk__pq_deadline(conn))) {
        copy_in_release(c);
        st = copy_in_timed_out(conn, err);
        (void)PQsetnonblocking(conn->pg, 0);
        return st;
    }
    r = PQgetResult(conn->pg);
    if (r == NULL || PQresultStatus(r) != PGRES_COPY_IN) {
        st = wk__pq_take_error(conn, r, "the COPY failed", err);
        PQclear(r);
        /* the error's end follows, each result awaited within the deadline */
        while (wk__pq_await_ready(conn, wk__pq_deadline(conn)) &&
               (r = PQgetResult(conn->pg)) != NULL) {
            PQclear(r);
        }
        (void)PQsetnonblocking(conn->pg, 0);
        copy_in_release(c);
        return st;
    }
    PQclear(r);
    static const uint8_t header[19] = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', 0xff, '\r', '\n',
                                       0,   0,   0,   0,   0,   0,   0,    0,    0};
    st = wk_buf_append(&c->buf, header, sizeof header);
    if (st != WK_OK) {
        (void)send_copy(conn, NULL, 0, "out of memory", true, NULL);
        PGresult *last = NULL;
        (void)wk__pq_wait(conn, &last, NULL);
        PQclear(last);
        (void)PQsetnonblocking(conn->pg, 0);
        copy_in_release(c);
        return st;
    }
    *out = c;
    return WK_OK;
}

/* Public: the number of columns given at start. */
WK_API size_t wk_pq_copy_in_ncols(const wk_pq_copy_in *c)
{
    return c->ncols;
}

/* Public: column col's type OID as the catalog reported it, 0 past the end. */
WK_API wk_pg_oid wk_pq_copy_in_oid(const wk_pq_copy_in *c, size_t col)
{
    return col < c->ncols ? c->oids[col] : 0;
}

/* Public: encodes one row (values[i] NULL for SQL NULL) into the buffer, sending a chunk when
 * it is full; a value that does not encode leaves the buffer as it was and names its column. */
WK_API wk_status wk_pq_copy_in_row(wk_pq_copy_in *c, const void *const *values, wk_error *err)
{
    if (c->failed) {
        return wk__pg_fail(err, WK_ERR_STATE, 0, "the COPY was aborted");
    }
    size_t start = c->buf.len;
    uint8_t cnt[2];
    wk__pg_put16(cnt, (uint16_t)c->ncols);
    wk_status st = wk_buf_append(&c->buf, cnt, 2);
    for (size_t i = 0; i < c->ncols && st == WK_OK; i++) {
        uint8_t len[4] = {0, 0, 0, 0};
        if (values[i] == NULL) {
            wk__pg_put32(len, 0xffffffffu);
            st = wk_buf_append(&c->buf, len, 4);
            continue;
        }
        size_t at = c->buf.len;
        st = wk_buf_append(&c->buf, len, 4);
        if (st == WK_OK) {
            st = wk_pg_encode(c->enc[i], values[i], &c->buf, err);
        }
        if (st == WK_OK && c->buf.len - at - 4 > INT32_MAX) {
            st = wk__pg_fail(err, WK_ERR_RANGE, 0, "a value longer than 2 GiB");
        }
        if (st == WK_OK) {
            wk__pg_put32(c->buf.data + at, (uint32_t)(c->buf.len - at - 4));
        } else {
            snprintf(c->conn->message, sizeof c->conn->message,
                     "row %llu, column \"%s\": %s", (unsigned long long)c->rows + 1,
                     c->names[i], err != NULL && err->msg != NULL ? err->msg : "cannot encode");
            if (err != NULL) {
                err->offset = i;
            }
        }
    }
    if (st != WK_OK) {
        c->buf.len = start; /* the tuple is dropped whole; the caller decides to go on or not */
        return st;
    }
    c->rows++;
    return c->buf.len >= COPY_IN_CHUNK ? put(c, err) : WK_OK;
}

/* Public: with abort_reason NULL sends the trailer and ends the COPY, *rows being the server's
 * count; otherwise aborts it with that reason (nothing is written). Frees c either way. */
WK_API wk_status wk_pq_copy_in_end(wk_pq_copy_in *c, const char *abort_reason, uint64_t *rows,
                                   wk_error *err)
{
    if (rows != NULL) {
        *rows = 0;
    }
    wk_pq_conn *conn = c->conn;
    if (c->failed) {
        /* timed out (cancelled and drained) or broken: nothing more to send or read */
        wk_status fst = c->fail_st;
        (void)PQsetnonblocking(conn->pg, 0);
        copy_in_release(c);
        return wk__pg_fail(err, fst, 0, fst == WK_ERR_IO ? "the COPY timed out"
                                                         : "the COPY failed");
    }
    wk_status st = WK_OK;
    if (abort_reason == NULL) {
        uint8_t trailer[2] = {0xff, 0xff};
        st = wk_buf_append(&c->buf, trailer, 2);
        st = st == WK_OK ? put(c, err) : st;
    }
    if (!c->failed) {
        const char *why = abort_reason != NULL ? abort_reason
                          : st != WK_OK        ? "the client failed"
                                               : NULL;
        wk_status est = send_copy(conn, NULL, 0, why, true, err);
        if (est != WK_OK) {
            st = st == WK_OK ? est : st;
            c->failed = true; /* timed out and drained, or lost: no result to wait for */
        }
    }
    /* the COPY's result: rows written only when it completed */
    PGresult *r = NULL;
    if (!c->failed) {
        wk_status wst = wk__pq_wait(conn, &r, err);
        if (wst != WK_OK) {
            st = st == WK_OK ? wst : st;
        } else if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            wk_status e = wk__pq_take_error(conn, r,
                                            abort_reason != NULL ? "the COPY was aborted"
                                                                 : "the COPY failed",
                                            err);
            st = st == WK_OK ? e : st;
        } else if (st == WK_OK && rows != NULL) {
            *rows = strtoull(PQcmdTuples(r), NULL, 10);
        }
    }
    PQclear(r);
    (void)PQsetnonblocking(conn->pg, 0);
    copy_in_release(c);
    return st;
}

/* ---- records of the row policy ---- */

/* The json/jsonb columns of `table` (their names, malloc'd, into *names[0..*n)): a record of
 * the row policy leaves a SQL NULL there out, so the first record cannot name them all. */
static wk_status json_columns(wk_pq_conn *conn, const char *table, char ***names, size_t *n,
                              wk_error *err)
{
    *names = NULL;
    *n = 0;
    const char *pv[1] = {table};
    if (!PQsendQueryParams(conn->pg,
                           "SELECT attname, atttypid FROM pg_attribute WHERE attrelid = "
                           "$1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
                           1, NULL, pv, NULL, NULL, 0)) {
        return wk__pq_take_error(conn, NULL, "cannot send the query", err);
    }
    PGresult *r = NULL;
    wk_status st = wk__pq_wait(conn, &r, err);
    if (st == WK_OK && PQresultStatus(r) != PGRES_TUPLES_OK) {
        st = wk__pq_take_error(conn, r, "cannot read the table's columns", err);
    }
    int rows = st == WK_OK ? PQntuples(r) : 0;
    if (rows > 0) {
        *names = calloc((size_t)rows, sizeof **names);
        st = *names != NULL ? WK_OK : wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory");
    }
    for (int k = 0; k < rows && st == WK_OK; k++) {
        wk_pg_oid oid = (wk_pg_oid)strtoul(PQgetvalue(r, k, 1), NULL, 10);
        bool is_array = false;
        const wk_pg_codec *codec = wk_pg_registry_codec_for(conn->reg, oid, &is_array);
        if (codec == NULL || is_array ||
            (strcmp(codec->name, "json") != 0 && strcmp(codec->name, "jsonb") != 0)) {
            continue;
        }
        const char *name = PQgetvalue(r, k, 0);
        (*names)[*n] = malloc(strlen(name) + 1);
        if ((*names)[*n] == NULL) {
            st = wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory");
            break;
        }
        memcpy((*names)[*n], name, strlen(name) + 1);
        (*n)++;
    }
    PQclear(r);
    return st;
}

/* Public (wirekit/pq.h): the given columns plus the table's json/jsonb columns not given,
 * started as a binary COPY, with a row description over them for wk_pg_row_parse. */
WK_API wk_status wk_pq_copy_in_start_records(wk_pq_conn *conn, const char *table,
                                             const char *const *columns, size_t n,
                                             const wk_pg_row_opts *opts, wk_pq_copy_in **out,
                                             wk_error *err)
{
    *out = NULL;
    if (conn == NULL || table == NULL || (columns == NULL && n > 0) || n > 1600) {
        return wk__pg_fail(err, WK_ERR_ARG, 0, "COPY in needs a table and 0 to 1600 columns");
    }
    wk__pq_clear_error(conn);
    conn->message[0] = '\0';
    if (conn->broken) {
        return wk__pg_fail(err, WK_ERR_IO, 0, "the connection is unusable after a timeout");
    }
    char **json = NULL;
    size_t njson = 0;
    wk_status st = json_columns(conn, table, &json, &njson, err);
    const char **all = st == WK_OK ? calloc(n + njson + 1, sizeof *all) : NULL;
    wk_pg_kind *kinds = st == WK_OK ? calloc(n + njson + 1, sizeof *kinds) : NULL;
    if (st == WK_OK && (all == NULL || kinds == NULL)) {
        st = wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory");
    }
    size_t total = 0;
    for (size_t i = 0; i < n && st == WK_OK; i++) {
        all[total++] = columns[i];
    }
    for (size_t j = 0; j < njson && st == WK_OK; j++) {
        bool given = false;
        for (size_t i = 0; i < n && !given; i++) {
            given = strcmp(columns[i], json[j]) == 0;
        }
        if (!given) {
            all[total++] = json[j];
        }
    }
    for (size_t i = 0; i < total; i++) {
        kinds[i] = WK_PG_KIND_TEXT; /* resolves (and so checks) a binary encoder per column */
    }
    wk_pq_copy_in *c = NULL;
    if (st == WK_OK) {
        st = wk_pq_copy_in_start(conn, table, all, kinds, total, &c, err);
    }
    wk_pg_row_col *rc = st == WK_OK ? calloc(total + 1, sizeof *rc) : NULL;
    if (st == WK_OK && rc == NULL) {
        st = wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory");
    }
    for (size_t i = 0; i < total && st == WK_OK; i++) {
        rc[i].name = c->names[i];
        rc[i].oid = c->oids[i];
        rc[i].typmod = -1;
        rc[i].format = WK_PG_BINARY;
    }
    if (st == WK_OK) {
        st = wk_pg_rowdesc_new(conn->reg, rc, total, opts, NULL, &c->rd, err);
    }
    if (st == WK_OK) {
        c->rvals = calloc(total + 1, sizeof *c->rvals);
        c->rlens = calloc(total + 1, sizeof *c->rlens);
        if (c->rvals == NULL || c->rlens == NULL) {
            st = wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory");
        }
    }
    if (st != WK_OK && c != NULL) {
        wk_error ignore;
        (void)wk_pq_copy_in_end(c, "wirekit: the copy could not be set up", NULL, &ignore);
        c = NULL;
    }
    for (size_t j = 0; j < njson; j++) {
        free(json[j]);
    }
    free(json);
    free(all);
    free(kinds);
    free(rc);
    *out = c;
    return st;
}

/* Public: the pair of the last record whose key was no column. */
WK_API size_t wk_pq_copy_in_unknown_key(const wk_pq_copy_in *c)
{
    return c->rd != NULL ? wk_pg_row_unknown_key(c->rd) : SIZE_MAX;
}

/* Public: one record's values (wk_pg_row_parse) as one tuple, whole or not at all. */
WK_API wk_status wk_pq_copy_in_record(wk_pq_copy_in *c, const wk_value *rec, wk_error *err)
{
    if (c->rd == NULL) {
        return wk__pg_fail(err, WK_ERR_STATE, 0, "the COPY was not started from records");
    }
    if (c->failed) {
        return wk__pg_fail(err, WK_ERR_STATE, 0, "the COPY was aborted");
    }
    wk_status st = wk_pg_row_parse(c->rd, rec, c->rvals, c->rlens, err);
    if (st != WK_OK) {
        size_t col = wk_pg_row_column(c->rd);
        const char *why = err != NULL && err->msg != NULL ? err->msg : wk_status_str(st);
        if (col < c->ncols) {
            snprintf(c->conn->message, sizeof c->conn->message, "column \"%s\": %s",
                     c->names[col], why);
            if (err != NULL) {
                err->offset = col;
            }
        } else {
            /* a key that is no column: err->offset stays the key's place in the record */
            snprintf(c->conn->message, sizeof c->conn->message, "%s", why);
        }
        return st;
    }
    size_t start = c->buf.len;
    uint8_t w[4];
    wk__pg_put16(w, (uint16_t)c->ncols);
    st = wk_buf_append(&c->buf, w, 2);
    for (size_t i = 0; i < c->ncols && st == WK_OK; i++) {
        wk__pg_put32(w, c->rlens[i] < 0 ? UINT32_MAX : (uint32_t)c->rlens[i]);
        st = wk_buf_append(&c->buf, w, 4);
        if (st == WK_OK && c->rlens[i] > 0) {
            st = wk_buf_append(&c->buf, c->rvals[i], (size_t)c->rlens[i]);
        }
    }
    if (st != WK_OK) {
        c->buf.len = start;
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for a tuple");
    }
    c->rows++;
    return c->buf.len >= COPY_IN_CHUNK ? put(c, err) : WK_OK;
}
