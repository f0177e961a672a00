/*
 * Server and connection errors of wirekit-pq connections: the fields of a PostgreSQL error
 * report (SQLSTATE, severity, message, detail, hint, context, position) copied out of the
 * PGresult into memory the connection owns, and their rendering as psql prints them,
 *
 * Where it sits: every failing libpq call in the glue (pq_conn.c, pq_connect.c, pq_copy*.c,
 * pq_async.c, the pipeline files) -> wk__pq_take_error / wk__pq_connect_error here -> the
 * connection's wk_pq_error (wk_pq_last_error) and message -> wk_pq_error_format for display
 * (the CLI prints it as psql would).
 * including the "LINE n:" excerpt with a caret under the error position.
 */
#include <stdlib.h>

#include "pg/pg_interface.h"
#include "pq/pq_internal.h"
#include "wirekit/pq.h"

/* Contract in pq_internal.h: forgets the last error (its text block and fields). */
void wk__pq_clear_error(wk_pq_conn *c)
{
    free(c->err_text);
    c->err_text = NULL;
    memset(&c->last, 0, sizeof c->last);
}

/* Contract in pq_internal.h: keeps msg, trailing newlines and spaces removed, truncated to the
 * connection's message buffer. */
void wk__pq_set_message(wk_pq_conn *c, const char *msg)
{
    size_t n = msg != NULL ? strlen(msg) : 0;
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' ')) {
        n--;
    }
    if (n >= sizeof c->message) {
        n = sizeof c->message - 1;
    }
    if (n) {
        memcpy(c->message, msg, n);
    }
    c->message[n] = '\0';
}

/* Copies the fields into one block: severity, message, detail, hint, context (NUL each). */
static void keep(wk_pq_conn *c, const char *state, const char *const f[5], int position)
{
    wk__pq_clear_error(c);
    size_t len[5], total = 0;
    for (int i = 0; i < 5; i++) {
        len[i] = f[i] != NULL ? strlen(f[i]) : 0;
        total += len[i] + 1;
    }
    c->err_text = malloc(total);
    static const char oom[] = "out of memory";
    if (c->err_text == NULL) {
        c->last.severity = "ERROR";
        c->last.message = oom;
        return;
    }
    const char *dst[5];
    size_t at = 0;
    for (int i = 0; i < 5; i++) {
        if (len[i] != 0) {
            memcpy(c->err_text + at, f[i], len[i]);
        }
        c->err_text[at + len[i]] = '\0';
        dst[i] = f[i] != NULL ? c->err_text + at : NULL;
        at += len[i] + 1;
    }
    if (state != NULL && strlen(state) == 5) {
        memcpy(c->last.sqlstate, state, 6);
    }
    c->last.severity = dst[0] != NULL ? dst[0] : "ERROR";
    c->last.message = dst[1] != NULL ? dst[1] : "";
    c->last.detail = dst[2];
    c->last.hint = dst[3];
    c->last.context = dst[4];
    c->last.position = position;
}

/* libpq's own text without its "SEVERITY:  " prefix or trailing newline. */
static char *strip_libpq(const char *m)
{
    size_t n = strlen(m);
    while (n > 0 && (m[n - 1] == '\n' || m[n - 1] == ' ')) {
        n--;
    }
    char *s = malloc(n + 1);
    if (s != NULL) {
        memcpy(s, m, n);
        s[n] = '\0';
    }
    return s;
}

/* Contract in pq_internal.h: the error report of r (or of the connection when r has none) is
 * kept, and the status says which it was: WK_ERR_CONNECT when the connection is gone, else
 * WK_ERR_SERVER, with `what` as the message. */
wk_status wk__pq_take_error(wk_pq_conn *c, const PGresult *r, const char *what, wk_error *err)
{
    bool gone = PQstatus(c->pg) == CONNECTION_BAD;
    const char *sev = r != NULL ? PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED) : NULL;
    const char *primary = r != NULL ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    wk__pq_set_message(c, r != NULL && PQresultErrorMessage(r)[0] != '\0'
                              ? PQresultErrorMessage(r)
                              : PQerrorMessage(c->pg));
    if (primary != NULL) {
        const char *pos = PQresultErrorField(r, PG_DIAG_STATEMENT_POSITION);
        const char *f[5] = {sev, primary, PQresultErrorField(r, PG_DIAG_MESSAGE_DETAIL),
                            PQresultErrorField(r, PG_DIAG_MESSAGE_HINT),
                            PQresultErrorField(r, PG_DIAG_CONTEXT)};
        keep(c, PQresultErrorField(r, PG_DIAG_SQLSTATE), f, pos != NULL ? (int)strtol(pos, NULL, 10) : 0);
    } else {
        /* no report from the server: libpq's own message (lost connection, ...) */
        char *m = strip_libpq(r != NULL && PQresultErrorMessage(r)[0] != '\0'
                                  ? PQresultErrorMessage(r)
                                  : PQerrorMessage(c->pg));
        const char *f[5] = {gone ? "FATAL" : "ERROR", m, NULL, NULL, NULL};
        keep(c, NULL, f, 0);
        free(m);
    }
    return wk__pg_fail(err, gone ? WK_ERR_CONNECT : WK_ERR_SERVER, 0, what);
}

/* Contract in pq_internal.h: a failure to connect, kept as a FATAL report of libpq's text (or
 * `why`). */
wk_status wk__pq_connect_error(wk_pq_conn *c, const char *why, wk_error *err)
{
    char *m = strip_libpq(why != NULL ? why : c->pg != NULL ? PQerrorMessage(c->pg)
                                                            : "out of memory");
    wk__pq_set_message(c, m);
    const char *f[5] = {"FATAL", m != NULL ? m : "out of memory", NULL, NULL, NULL};
    keep(c, NULL, f, 0);
    free(m);
    return wk__pg_fail(err, WK_ERR_CONNECT, 0, "cannot connect to the PostgreSQL server");
}

/* Public (wirekit/pq.h): the last error report, NULL when the last call succeeded. */
WK_API const wk_pq_error *wk_pq_last_error(const wk_pq_conn *conn)
{
    return conn->last.message != NULL ? &conn->last : NULL;
}

/* ---- rendering ---- */

#define DISPLAY_SIZE 60 /* psql's width of the LINE excerpt */
#define MIN_RIGHT_CUT 10

/* A UTF-8 continuation byte (the excerpt counts characters, not bytes, as psql does). */
static bool is_cont(unsigned char b)
{
    return (b & 0xC0) == 0x80;
}

/* Appends psql's "LINE n: ..." and caret lines for character position `pos` (1-based). */
static wk_status put_position(wk_buf *out, const char *sql, int pos)
{
    size_t n = strlen(sql);
    /* character starts, with tabs shown as spaces and line breaks found */
    size_t nchars = 0;
    for (size_t i = 0; i < n; i++) {
        nchars += !is_cont((unsigned char)sql[i]);
    }
    size_t *start = malloc((nchars + 1) * sizeof *start);
    if (start == NULL) {
        return WK_ERR_NOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_cont((unsigned char)sql[i])) {
            start[k++] = i;
        }
    }
    start[nchars] = n;
    size_t loc = (size_t)pos - 1;
    if (loc > nchars) {
        loc = nchars;
    }
    size_t ibeg = 0, iend = nchars;
    int lineno = 1;
    for (size_t c = 0; c < nchars; c++) {
        char ch = sql[start[c]];
        if (ch == '\n' || ch == '\r') {
            if (c < loc) {
                if (ch == '\r' && c + 1 < nchars && sql[start[c + 1]] == '\n') {
                    c++; /* \r\n is one line break */
                }
                ibeg = c + 1;
                lineno++;
            } else {
                iend = c;
                break;
            }
        }
    }
    bool beg_trunc = false, end_trunc = false;
    if (iend - ibeg > DISPLAY_SIZE) {
        if (ibeg + DISPLAY_SIZE >= loc + MIN_RIGHT_CUT) {
            iend = ibeg + DISPLAY_SIZE;
            end_trunc = true;
        } else {
            if (loc + MIN_RIGHT_CUT < iend) {
                iend = loc + MIN_RIGHT_CUT;
                end_trunc = true;
            }
            if (iend - ibeg > DISPLAY_SIZE) {
                ibeg = iend - DISPLAY_SIZE;
                beg_trunc = true;
            }
        }
    }
    char head[32];
    int hl = snprintf(head, sizeof head, "LINE %d: %s", lineno, beg_trunc ? "..." : "");
    wk_status st = wk_buf_append(out, head, (size_t)hl);
    for (size_t i = start[ibeg]; i < start[iend] && st == WK_OK; i++) {
        st = wk_buf_push(out, sql[i] == '\t' ? ' ' : (uint8_t)sql[i]);
    }
    if (st == WK_OK && end_trunc) {
        st = wk_buf_append(out, "...", 3);
    }
    if (st == WK_OK) {
        st = wk_buf_push(out, '\n');
    }
    for (size_t i = 0; i < (size_t)hl + (loc - ibeg) && st == WK_OK; i++) {
        st = wk_buf_push(out, ' ');
    }
    if (st == WK_OK) {
        st = wk_buf_append(out, "^\n", 2);
    }
    free(start);
    return st;
}

/* Appends "LABEL:  value\n" when v is given. */
static wk_status put_field(wk_buf *out, const char *label, const char *v)
{
    if (v == NULL) {
        return WK_OK;
    }
    wk_status st = wk_buf_append(out, label, strlen(label));
    if (st == WK_OK) {
        st = wk_buf_append(out, ":  ", 3);
    }
    if (st == WK_OK) {
        st = wk_buf_append(out, v, strlen(v));
    }
    return st == WK_OK ? wk_buf_push(out, '\n') : st;
}

/* Public: the report as psql prints it: severity and message, the LINE excerpt when sql and a
 * position are known, then DETAIL, HINT and CONTEXT lines. */
WK_API wk_status wk_pq_error_format(const wk_pq_error *e, const char *sql, wk_buf *out)
{
    wk_status st = put_field(out, e->severity, e->message);
    if (st == WK_OK && sql != NULL && e->position > 0) {
        st = put_position(out, sql, e->position);
    }
    if (st == WK_OK) {
        st = put_field(out, "DETAIL", e->detail);
    }
    if (st == WK_OK) {
        st = put_field(out, "HINT", e->hint);
    }
    if (st == WK_OK) {
        st = put_field(out, "CONTEXT", e->context);
    }
    return st;
}
