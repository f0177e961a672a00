/*
 * The change stream's connections and its receive loop: the catalog connection and the
 * checks made on it (publication, slot, whether binary will do), the replication connection
 * (`replication=database`, every command sent without blocking and waited for within the
 * deadline), START_REPLICATION, and the loop that reads CopyData messages, answers keepalives
 * and sends standby status updates.
 *
 * The position confirmed to the server is the end of the last commit the callback handled
 * (pq_repl_dispatch.c moves it), or, when no transaction is open, the position of a keepalive:
 * every transaction that committed before it has been sent and handled, so the slot may move
 * past WAL that concerned no published table. Status updates go out every
 * status_interval_ms asking for an answer, so a live server always says something within the
 * interval and a silent one is found out after timeout_ms.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pg/pg_interface.h"
#include "pq/pq_repl_internal.h"

#define DEFAULT_TIMEOUT_MS 30000u
#define DEFAULT_STATUS_MS 10000u
#define DEFAULT_BUFFER ((size_t)4 << 20)
#define DEFAULT_MAX_MESSAGE ((size_t)256 << 20)
/* A confirmed position that moved goes to the server within this long, so that a consumer
 * killed a moment later is sent again only what it had not confirmed yet. */
#define CONFIRM_WITHIN_MS 200
/* How long a clean close waits for the server to end the stream (close_stream). */
#define CLOSE_WITHIN_MS 2000
/* Microseconds from the Unix epoch to PostgreSQL's (2000-01-01). */
#define PG_EPOCH_US INT64_C(946684800000000)

static char *dup_str(const char *s)
{
    if (s == NULL) {
        return NULL;
    }
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d != NULL) {
        memcpy(d, s, n);
    }
    return d;
}

/* The server's message of a failed result or connection, one line. */
static wk_status repl_error(wk_pq_changes *s, const PGresult *r, wk_status st, wk_error *err,
                            const char *what)
{
    const char *m = r != NULL && PQresultErrorMessage(r)[0] != '\0' ? PQresultErrorMessage(r)
                    : s->repl != NULL                                ? PQerrorMessage(s->repl)
                                                                     : "";
    size_t n = strlen(m);
    while (n > 0 && (m[n - 1] == '\n' || m[n - 1] == ' ')) {
        n--;
    }
    snprintf(s->message, sizeof s->message, "%s: %.*s", what, (int)n, m);
    return wk__pg_fail(err, st, 0, what);
}

/* Waits until the replication socket is readable (or writable) or the deadline passes. */
static bool wait_socket(wk_pq_changes *s, bool write, int64_t deadline)
{
    int64_t left = deadline - wk__pq_now_ms();
    if (left <= 0) {
        return false;
    }
    struct pollfd p = {PQsocket(s->repl), (short)(POLLIN | (write ? POLLOUT : 0)), 0};
    (void)poll(&p, 1, (int)(left > 1000 ? 1000 : left));
    return true;
}

/* One command on the replication connection, waited for within the deadline: its last
 * result in *res (the caller clears it), or WK_ERR_IO / WK_ERR_CONNECT. */
static wk_status repl_exec(wk_pq_changes *s, const char *sql, PGresult **res, wk_error *err)
{
    *res = NULL;
    if (PQsendQuery(s->repl, sql) == 0) {
        return repl_error(s, NULL, WK_ERR_CONNECT, err, "the replication connection failed");
    }
    int64_t deadline = wk__pq_now_ms() + s->opts.timeout_ms;
    for (;;) {
        while (PQflush(s->repl) > 0 || (PQconsumeInput(s->repl) != 0 && PQisBusy(s->repl))) {
            if (!wait_socket(s, true, deadline)) {
                snprintf(s->message, sizeof s->message,
                         "the server did not answer %.40s within %u ms", sql, s->opts.timeout_ms);
                return wk__pg_fail(err, WK_ERR_IO, 0, "the server did not answer in time");
            }
        }
        PGresult *r = PQgetResult(s->repl);
        if (r == NULL) {
            break;
        }
        ExecStatusType rs = PQresultStatus(r);
        wk__pq_keep_result(res, r);
        if (rs == PGRES_COPY_BOTH) {
            break; /* the stream has started: no other result follows */
        }
    }
    if (*res == NULL) {
        return repl_error(s, NULL, WK_ERR_CONNECT, err, "the replication connection failed");
    }
    ExecStatusType rs = PQresultStatus(*res);
    if (rs == PGRES_FATAL_ERROR) {
        return repl_error(s, *res, PQstatus(s->repl) == CONNECTION_BAD ? WK_ERR_CONNECT
                                                                        : WK_ERR_SERVER,
                          err, "the server refused a replication command");
    }
    return WK_OK;
}

/* A query on the catalog connection, text parameter `arg`, every column cast to text. */
static wk_status sql_exec(wk_pq_changes *s, const char *sql, const char *arg, PGresult **res,
                          wk_error *err)
{
    wk_slice v = {arg, strlen(arg)};
    wk_pq_param p = {WK_PG_KIND_TEXT, &v, 25};
    wk_status st = wk_pq_exec(s->sql, sql, &p, 1, res, err);
    if (st != WK_OK) {
        snprintf(s->message, sizeof s->message, "%s", wk_pq_conn_message(s->sql));
    }
    return st;
}

/* Whether binary will do: every column type of the publication's tables that the server
 * sends in binary has a binary decoder here. A type without a binary send function (aclitem)
 * comes as text even in binary mode, value by value, which the row policy reads; an array of
 * such a type would make the server fail the stream, so it asks for text throughout. So do
 * the OID alias types (regclass, regproc, ...): their text is a name the catalog resolves
 * (`pg query` prints `pg_class`), their binary form only the OID. */
static wk_status binary_will_do(wk_pq_changes *s, bool *yes, wk_error *err)
{
    PGresult *r = NULL;
    wk_status st = sql_exec(s,
                            "SELECT DISTINCT a.atttypid::text, (t.typsend <> 0)::text, "
                            "(e.oid IS NULL OR e.typsend <> 0)::text, "
                            "(t.typnamespace = 'pg_catalog'::regnamespace AND "
                            "(t.typname LIKE 'reg%' OR e.typname LIKE 'reg%'))::text "
                            "FROM pg_publication_tables p "
                            "JOIN pg_namespace n ON n.nspname = p.schemaname "
                            "JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = p.tablename "
                            "JOIN pg_attribute a ON a.attrelid = c.oid "
                            "JOIN pg_type t ON t.oid = a.atttypid "
                            "LEFT JOIN pg_type e ON e.oid = t.typelem "
                            "WHERE p.pubname = $1 AND a.attnum > 0 AND NOT a.attisdropped",
                            s->publication, &r, err);
    *yes = st == WK_OK;
    const wk_pg_registry *reg = wk_pq_registry(s->sql);
    for (int i = 0; st == WK_OK && i < PQntuples(r) && *yes; i++) {
        wk_pg_oid oid = (wk_pg_oid)strtoul(PQgetvalue(r, i, 0), NULL, 10);
        bool sent_binary = strcmp(PQgetvalue(r, i, 1), "true") == 0;
        bool elem_binary = strcmp(PQgetvalue(r, i, 2), "true") == 0;
        bool oid_alias = strcmp(PQgetvalue(r, i, 3), "true") == 0;
        *yes = elem_binary && !oid_alias && (!sent_binary || wk_pg_registry_find_decoder(
                                                   reg, oid, WK_PG_BINARY, WK_PG_KIND_EVENTS) != NULL);
    }
    PQclear(r);
    return st;
}

/* The publication exists; the slot exists (or is to be made), is logical, pgoutput, ours. */
static wk_status check_catalog(wk_pq_changes *s, bool *create, wk_error *err)
{
    PGresult *r = NULL;
    wk_status st = sql_exec(s, "SELECT 1 FROM pg_publication WHERE pubname = $1",
                            s->publication, &r, err);
    if (st == WK_OK && PQntuples(r) == 0) {
        st = wk__repl_fail(s, WK_ERR_NOT_FOUND, err, "no such publication",
                           "publication \"%s\" does not exist", s->publication);
    }
    PQclear(r);
    if (st != WK_OK) {
        return st;
    }
    st = sql_exec(s,
                  "SELECT plugin::text, slot_type, (database = current_database())::text, "
                  "coalesce(confirmed_flush_lsn, '0/0')::text FROM pg_replication_slots "
                  "WHERE slot_name = $1",
                  s->slot, &r, err);
    *create = false;
    if (st == WK_OK && PQntuples(r) == 0) {
        if (s->opts.flags & WK_PQ_CHANGES_CREATE_SLOT) {
            *create = true;
        } else {
            st = wk__repl_fail(s, WK_ERR_NOT_FOUND, err, "no such replication slot",
                               "replication slot \"%s\" does not exist", s->slot);
        }
    } else if (st == WK_OK) {
        if (strcmp(PQgetvalue(r, 0, 1), "logical") != 0 ||
            strcmp(PQgetvalue(r, 0, 0), "pgoutput") != 0) {
            st = wk__repl_fail(s, WK_ERR_ARG, err, "not a pgoutput slot",
                               "replication slot \"%s\" is not a logical slot of pgoutput",
                               s->slot);
        } else if (strcmp(PQgetvalue(r, 0, 2), "true") != 0) {
            st = wk__repl_fail(s, WK_ERR_ARG, err, "a slot of another database",
                               "replication slot \"%s\" belongs to another database", s->slot);
        } else {
            unsigned hi = 0, lo = 0;
            if (sscanf(PQgetvalue(r, 0, 3), "%X/%X", &hi, &lo) == 2) {
                s->confirmed = ((uint64_t)hi << 32) | lo;
            }
        }
    }
    PQclear(r);
    return st;
}

/* Appends `v` to `b` with every `q` doubled (quoting for SQL strings and identifiers). */
static void quote_into(char *b, size_t cap, size_t *len, const char *v, char q)
{
    for (; *v != '\0' && *len + 3 < cap; v++) {
        if (*v == q) {
            b[(*len)++] = q;
        }
        b[(*len)++] = *v;
    }
    b[*len] = '\0';
}

/* The replication connection, the slot made when asked, and START_REPLICATION. */
static wk_status start_stream(wk_pq_changes *s, bool create, wk_error *err)
{
    char ct[16];
    uint32_t secs = (s->opts.timeout_ms + 999) / 1000;
    snprintf(ct, sizeof ct, "%u", secs < 2 ? 2u : secs);
    const char *keys[] = {"dbname", "replication", "connect_timeout",
                          "fallback_application_name", NULL};
    const char *vals[] = {s->dsn, "database", ct, "wirekit", NULL};
    s->repl = PQconnectdbParams(keys, vals, 1);
    if (s->repl == NULL) {
        return wk__repl_fail(s, WK_ERR_NOMEM, err, "out of memory", "out of memory");
    }
    if (PQstatus(s->repl) != CONNECTION_OK) {
        return repl_error(s, NULL, WK_ERR_CONNECT, err,
                          "cannot open a replication connection");
    }
    PGresult *r = NULL;
    wk_status st = WK_OK;
    if (create) {
        char sql[160];
        snprintf(sql, sizeof sql, "CREATE_REPLICATION_SLOT \"%s\" LOGICAL pgoutput NOEXPORT_SNAPSHOT",
                 s->slot);
        st = repl_exec(s, sql, &r, err);
        const char *code = r != NULL ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
        if (st == WK_ERR_SERVER && code != NULL && strcmp(code, "42710") == 0) {
            st = WK_OK; /* made by another client meanwhile: reuse it */
        } else if (st == WK_OK && PQntuples(r) == 1) {
            unsigned hi = 0, lo = 0;
            if (sscanf(PQgetvalue(r, 0, 1), "%X/%X", &hi, &lo) == 2) {
                s->confirmed = ((uint64_t)hi << 32) | lo;
            }
        }
        PQclear(r);
        if (st != WK_OK) {
            return st;
        }
    }
    if (s->work_mem != NULL) {
        char sql[96];
        size_t len = (size_t)snprintf(sql, sizeof sql, "SET logical_decoding_work_mem = '");
        quote_into(sql, sizeof sql - 2, &len, s->work_mem, '\'');
        sql[len++] = '\'';
        sql[len] = '\0';
        st = repl_exec(s, sql, &r, err);
        PQclear(r);
        if (st != WK_OK) {
            return st;
        }
    }
    /* protocol 2 (streaming) and binary values came with PostgreSQL 14 */
    bool v14 = PQserverVersion(s->repl) >= 140000;
    s->binary = s->binary && v14;
    s->streaming = v14 && !(s->opts.flags & WK_PQ_CHANGES_NO_STREAMING);
    char sql[1024];
    size_t len = (size_t)snprintf(sql, sizeof sql,
                                  "START_REPLICATION SLOT \"%s\" LOGICAL 0/0 (proto_version '%s', "
                                  "publication_names '\"",
                                  s->slot, v14 ? "2" : "1");
    /* the publication as an identifier ("" doubled) inside a string literal ('' doubled) */
    char ident[520];
    size_t ilen = 0;
    quote_into(ident, sizeof ident, &ilen, s->publication, '"');
    quote_into(sql, sizeof sql - 80, &len, ident, '\'');
    snprintf(sql + len, sizeof sql - len, "\"'%s%s)", s->binary ? ", binary 'true'" : "",
             s->streaming ? ", streaming 'true'" : "");
    /* a slot still held by a consumer that was just killed is let go by the server as soon
     * as it notices the closed socket: retry "active" within the deadline */
    int64_t deadline = wk__pq_now_ms() + s->opts.timeout_ms;
    for (;;) {
        st = repl_exec(s, sql, &r, err);
        const char *code = r != NULL ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
        bool busy = st == WK_ERR_SERVER && code != NULL && strcmp(code, "55006") == 0;
        PQclear(r);
        if (!busy || wk__pq_now_ms() >= deadline) {
            break;
        }
        usleep(100000);
    }
    if (st != WK_OK) {
        return st;
    }
    if (PQsetnonblocking(s->repl, 1) != 0) {
        return repl_error(s, NULL, WK_ERR_CONNECT, err, "the replication connection failed");
    }
    s->last_recv_ms = s->last_status_ms = wk__pq_now_ms();
    return WK_OK;
}

/* Public: see wirekit/pq_changes.h. */
WK_API wk_status wk_pq_changes_open(const wk_pq_changes_opts *opts, wk_pq_changes **out,
                                    wk_error *err)
{
    *out = NULL;
    wk_pq_changes *s = calloc(1, sizeof *s);
    if (s == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory");
    }
    s->stop_pipe[0] = s->stop_pipe[1] = -1;
    if (opts == NULL || opts->slot == NULL || opts->slot[0] == '\0' ||
        opts->publication == NULL || opts->publication[0] == '\0') {
        free(s);
        return wk__pg_fail(err, WK_ERR_ARG, 0, "a slot and a publication are needed");
    }
    s->opts = *opts;
    s->opts.timeout_ms = opts->timeout_ms != 0 ? opts->timeout_ms : DEFAULT_TIMEOUT_MS;
    s->opts.status_interval_ms =
        opts->status_interval_ms != 0 ? opts->status_interval_ms : DEFAULT_STATUS_MS;
    s->opts.max_buffer_bytes = opts->max_buffer_bytes != 0 ? opts->max_buffer_bytes
                                                           : DEFAULT_BUFFER;
    s->opts.max_message_bytes = opts->max_message_bytes != 0 ? opts->max_message_bytes
                                                             : DEFAULT_MAX_MESSAGE;
    s->dsn = dup_str(opts->dsn != NULL ? opts->dsn : "");
    s->slot = dup_str(opts->slot);
    s->publication = dup_str(opts->publication);
    s->work_mem = dup_str(opts->decoding_work_mem);
    wk_buf_init(&s->time_text, NULL, 0);
    *out = s;
    if (s->dsn == NULL || s->slot == NULL || s->publication == NULL ||
        (opts->decoding_work_mem != NULL && s->work_mem == NULL) ||
        pipe(s->stop_pipe) != 0) {
        return wk__repl_fail(s, WK_ERR_NOMEM, err, "out of memory", "out of memory");
    }
    for (int i = 0; i < 2; i++) {
        fcntl(s->stop_pipe[i], F_SETFL, O_NONBLOCK);
        fcntl(s->stop_pipe[i], F_SETFD, FD_CLOEXEC);
    }
    /* PostgreSQL's slot names: lower-case letters, digits and underscores, so they need no
     * quoting and cannot break out of a command */
    size_t sl = strlen(s->slot);
    for (size_t i = 0; i < sl; i++) {
        char ch = s->slot[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_') || sl > 63) {
            return wk__repl_fail(s, WK_ERR_ARG, err, "a bad slot name",
                                 "slot names are up to 63 lower-case letters, digits and _");
        }
    }
    if (strlen(s->publication) > 200) {
        return wk__repl_fail(s, WK_ERR_ARG, err, "a bad publication name",
                             "the publication name is too long");
    }
    wk_status st = wk_pq_connect_timeout(s->dsn, opts->base, s->opts.timeout_ms, &s->sql, err);
    if (st != WK_OK) {
        snprintf(s->message, sizeof s->message, "%s",
                 s->sql != NULL ? wk_pq_conn_message(s->sql) : "cannot connect");
        return st;
    }
    s->reg = wk_pq_registry(s->sql);
    bool create = false;
    st = check_catalog(s, &create, err);
    if (st != WK_OK) {
        return st;
    }
    s->binary = false;
    if (!(opts->flags & WK_PQ_CHANGES_TEXT)) {
        st = binary_will_do(s, &s->binary, err);
        if (st != WK_OK) {
            return st;
        }
    }
    return start_stream(s, create, err);
}

/* Internal: see pq_repl_internal.h. The old connection goes only once the new one is up,
 * so a failed refresh leaves the stream as it was (and stops it with the failure). */
wk_status wk__repl_refresh_registry(wk_pq_changes *s, wk_error *err)
{
    wk_pq_conn *fresh = NULL;
    wk_status st = wk_pq_connect_timeout(s->dsn, s->opts.base, s->opts.timeout_ms, &fresh, err);
    if (st != WK_OK) {
        snprintf(s->message, sizeof s->message, "reading the catalog again: %s",
                 fresh != NULL ? wk_pq_conn_message(fresh) : "cannot connect");
        wk_pq_conn_free(fresh);
        return st;
    }
    wk_pq_conn *old = s->sql;
    s->sql = fresh;
    s->reg = wk_pq_registry(fresh);
    wk__repl_rebind(s);
    wk_pq_conn_free(old);
    return WK_OK;
}

/* Microseconds since 2000-01-01, for status updates. */
static int64_t pg_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 - PG_EPOCH_US;
}

/* A standby status update: written up to what was received, flushed and applied up to what
 * was confirmed. `ask` asks the server to answer at once (the liveness check). */
static wk_status send_status(wk_pq_changes *s, bool ask, wk_error *err)
{
    uint8_t m[34];
    m[0] = 'r';
    uint64_t written = s->received > s->confirmed ? s->received : s->confirmed;
    wk__pg_put64(m + 1, written);
    wk__pg_put64(m + 9, s->confirmed);
    wk__pg_put64(m + 17, s->confirmed);
    wk__pg_put64(m + 25, (uint64_t)pg_now_us());
    m[33] = ask ? 1 : 0;
    s->sent_confirmed = s->confirmed;
    if (PQputCopyData(s->repl, (const char *)m, (int)sizeof m) != 1 || PQflush(s->repl) < 0) {
        return repl_error(s, NULL, WK_ERR_CONNECT, err, "the server went away");
    }
    s->last_status_ms = wk__pq_now_ms();
    s->reply_asked = false;
    return WK_OK;
}

/* Whether a status update is due: asked for, the interval passed, or a confirmed position
 * not sent yet. */
static bool status_due(const wk_pq_changes *s, int64_t now)
{
    int64_t since = now - s->last_status_ms;
    return s->reply_asked || since >= s->opts.status_interval_ms ||
           (s->confirmed != s->sent_confirmed && since >= CONFIRM_WITHIN_MS);
}

/* One CopyData message: XLogData to the dispatcher, a keepalive noted. */
static wk_status handle_copy(wk_pq_changes *s, const uint8_t *p, size_t n, wk_error *err)
{
    if (n > s->opts.max_message_bytes) {
        return wk__repl_fail(s, WK_ERR_LIMIT, err, "a replication message over the cap",
                             "a replication message of %zu bytes, more than %zu", n,
                             s->opts.max_message_bytes);
    }
    if (n >= 25 && p[0] == 'w') {
        uint64_t start = wk__pg_be64(p + 1), end = wk__pg_be64(p + 9);
        if (end > s->received) {
            s->received = end;
        }
        wk_status st = wk__repl_dispatch(s, p + 25, n - 25, start, err);
        if (st != WK_OK && err != NULL && st != WK_ERR_IO) {
            err->offset += 25; /* the offset in the CopyData message */
        }
        return st;
    }
    if (n >= 18 && p[0] == 'k') {
        uint64_t end = wk__pg_be64(p + 1);
        if (end > s->received) {
            s->received = end;
        }
        /* between transactions everything before `end` was sent and handled */
        if (!s->in_txn && end > s->confirmed) {
            s->confirmed = end;
        }
        s->reply_asked = s->reply_asked || p[17] != 0;
        return WK_OK;
    }
    return wk__repl_fail(s, WK_ERR_SYNTAX, err, "an unknown replication message",
                         "an unknown replication message (%zu bytes, type 0x%02x)", n,
                         n > 0 ? p[0] : 0);
}

/* The stream ended or broke: why, as WK_ERR_CONNECT (or WK_ERR_SERVER for an error the
 * server reported while it keeps running, e.g. the slot was dropped). */
static wk_status stream_ended(wk_pq_changes *s, int r, wk_error *err)
{
    if (r == -2) {
        return repl_error(s, NULL, WK_ERR_CONNECT, err, "the server went away");
    }
    PGresult *res = PQgetResult(s->repl);
    const char *code = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    bool shutdown = code == NULL || strncmp(code, "57", 2) == 0 || strncmp(code, "08", 2) == 0;
    wk_status st = res != NULL && PQresultStatus(res) == PGRES_FATAL_ERROR
                       ? repl_error(s, res, shutdown ? WK_ERR_CONNECT : WK_ERR_SERVER, err,
                                    "the server ended the stream")
                       : wk__repl_fail(s, WK_ERR_CONNECT, err, "the server ended the stream",
                                       "the server ended the stream");
    PQclear(res);
    return st;
}

static wk_status receive(wk_pq_changes *s, wk_error *err);

/* Public: see wirekit/pq_changes.h. */
WK_API wk_status wk_pq_changes_run(wk_pq_changes *s, wk_pq_change_fn fn, void *ctx,
                                   wk_error *err)
{
    if (s->repl == NULL || PQstatus(s->repl) != CONNECTION_OK) {
        return wk__repl_fail(s, WK_ERR_STATE, err, "the stream is not open",
                             "the stream is not open");
    }
    if (s->failed) {
        /* the failed transaction may be half handed over: only a new stream resumes right */
        return wk__repl_fail(s, WK_ERR_STATE, err, "the stream failed",
                             "the stream failed before: open a new one to resume");
    }
    s->fn = fn;
    s->fn_ctx = ctx;
    wk_status st = receive(s, err);
    s->failed = st != WK_OK;
    return st;
}

/* The receive loop of wk_pq_changes_run. */
static wk_status receive(wk_pq_changes *s, wk_error *err)
{
    unsigned since_check = 0;
    for (;;) {
        if (s->stop) {
            s->stop = 0; /* a stop request ends one run */
            return send_status(s, false, err);
        }
        char *buf = NULL;
        int r = PQgetCopyData(s->repl, &buf, 1);
        if (r > 0) {
            wk_status st = handle_copy(s, (const uint8_t *)buf, (size_t)r, err);
            PQfreemem(buf);
            if (st != WK_OK) {
                return st;
            }
            /* a busy stream still answers on time: the clock is read every few messages */
            if (++since_check < 64 && !s->reply_asked) {
                continue;
            }
            since_check = 0;
            int64_t now = wk__pq_now_ms();
            s->last_recv_ms = now;
            if (status_due(s, now)) {
                st = send_status(s, !s->reply_asked, err);
                if (st != WK_OK) {
                    return st;
                }
            }
            continue;
        }
        if (r < 0) {
            return stream_ended(s, r, err);
        }
        int64_t now = wk__pq_now_ms();
        if (since_check > 0) {
            s->last_recv_ms = now; /* messages were read since the clock was last read */
            since_check = 0;
        }
        if (status_due(s, now)) {
            wk_status st = send_status(s, !s->reply_asked, err);
            if (st != WK_OK) {
                return st;
            }
        }
        int64_t silent_until = s->last_recv_ms + s->opts.timeout_ms;
        if (now >= silent_until) {
            return wk__repl_fail(s, WK_ERR_CONNECT, err, "the server went silent",
                                 "the server sent nothing for %u ms", s->opts.timeout_ms);
        }
        int64_t until = s->last_status_ms + (s->confirmed != s->sent_confirmed
                                                 ? CONFIRM_WITHIN_MS
                                                 : (int64_t)s->opts.status_interval_ms);
        until = until < silent_until ? until : silent_until;
        int wait = (int)(until - now > 1000 ? 1000 : until - now < 1 ? 1 : until - now);
        int pending = PQflush(s->repl);
        struct pollfd p[2] = {{PQsocket(s->repl), (short)(POLLIN | (pending > 0 ? POLLOUT : 0)), 0},
                              {s->stop_pipe[0], POLLIN, 0}};
        if (poll(p, 2, wait) < 0 && errno != EINTR) {
            return wk__repl_fail(s, WK_ERR_IO, err, "poll failed", "poll: %s", strerror(errno));
        }
        if (p[1].revents != 0) {
            char drain[16];
            while (read(s->stop_pipe[0], drain, sizeof drain) > 0) {
            }
        }
        if (p[0].revents != 0 && PQconsumeInput(s->repl) == 0) {
            return repl_error(s, NULL, WK_ERR_CONNECT, err, "the server went away");
        }
        if (p[0].revents & POLLIN) {
            s->last_recv_ms = wk__pq_now_ms();
        }
    }
}

/* Public: see wirekit/pq_changes.h. Only a flag and a write(2): async-signal-safe. */
WK_API void wk_pq_changes_stop(wk_pq_changes *s)
{
    s->stop = 1;
    if (s->stop_pipe[1] >= 0) {
        ssize_t w = write(s->stop_pipe[1], "x", 1);
        (void)w;
    }
}

/* Public: see wirekit/pq_changes.h. */
WK_API uint64_t wk_pq_changes_confirmed(const wk_pq_changes *s)
{
    return s->confirmed;
}

/* Public: see wirekit/pq_changes.h. */
WK_API bool wk_pq_changes_binary(const wk_pq_changes *s)
{
    return s->binary;
}

/* Public: see wirekit/pq_changes.h. */
WK_API const char *wk_pq_changes_message(const wk_pq_changes *s)
{
    return s->message;
}

/* The last word of a stream that is still up: a status update with what was confirmed (so
 * that the next run starts there), then CopyDone, and what the server still sends is read
 * until its own CopyDone and the command's end, within CLOSE_WITHIN_MS. The server's answer
 * proves that it took the position. Closing the socket with data still unread makes the
 * kernel send a reset instead; a walsender that writes before it next reads (a keepalive, the
 * rest of a transaction) then fails and exits with the status update unread, and the next run
 * is sent again what this one confirmed. */
static void close_stream(wk_pq_changes *s)
{
    if (send_status(s, false, NULL) != WK_OK || PQputCopyEnd(s->repl, NULL) != 1) {
        return;
    }
    int64_t deadline = wk__pq_now_ms() + CLOSE_WITHIN_MS;
    for (;;) {
        int pending = PQflush(s->repl);
        char *buf = NULL;
        int r = pending < 0 ? -2 : PQgetCopyData(s->repl, &buf, 1);
        PQfreemem(buf);
        if (r > 0) {
            continue;
        }
        if (r == -1) {
            break; /* the server's CopyDone */
        }
        if (r == -2 || !wait_socket(s, pending > 0, deadline) || PQconsumeInput(s->repl) == 0) {
            return;
        }
    }
    while (PQisBusy(s->repl) && wait_socket(s, false, deadline) && PQconsumeInput(s->repl) != 0) {
    }
    PGresult *res;
    while (!PQisBusy(s->repl) && (res = PQgetResult(s->repl)) != NULL) {
        PQclear(res);
    }
}

/* Public: see wirekit/pq_changes.h. */
WK_API void wk_pq_changes_free(wk_pq_changes *s)
{
    if (s == NULL) {
        return;
    }
    if (s->repl != NULL && PQstatus(s->repl) == CONNECTION_OK &&
        PQisnonblocking(s->repl)) {
        close_stream(s);
    }
    if (s->repl != NULL) {
        PQfinish(s->repl);
    }
    wk_pq_conn_free(s->sql);
    wk__repl_dispatch_free(s);
    for (int i = 0; i < 2; i++) {
        if (s->stop_pipe[i] >= 0) {
            close(s->stop_pipe[i]);
        }
    }
    free(s->dsn);
    free(s->slot);
    free(s->publication);
    free(s->work_mem);
    free(s->pv);
    free(s->pl);
    wk_buf_free(&s->time_text);
    free(s);
}

/* Public: see wirekit/pq_changes.h. */
WK_API size_t wk_pq_lsn_format(uint64_t lsn, char buf[32])
{
    int n = snprintf(buf, 32, "%X/%X", (unsigned)(lsn >> 32), (unsigned)(lsn & 0xffffffffu));
    return n > 0 ? (size_t)n : 0;
}
