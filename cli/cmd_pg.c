/*
 * `wirekit pg query`: runs SQL the way people use psql and prints every row as it arrives,
 * decoded by wirekit: one JSON object (or array) per line, one MessagePack map (or array) per
 * row, or CSV byte-identical to `psql --csv`.
 *
 * Without parameters the SQL goes through the simple query protocol, so several statements
 * separated by ';' run in one call (as `psql -c`); with parameters it is one statement whose
 * parameters are sent as text and typed by the server. Rows are read in single-row mode and
 * written out one by one, so the memory used does not grow with the number of rows. Commands
 * print their tag (`INSERT 0 1`): on stdout in CSV (as psql), on stderr for JSON and
 * MessagePack so that stdout stays one value per row. A server error is printed as psql
 * prints it (`ERROR:  ...`, LINE and caret, DETAIL, HINT) and ends the run with status 1; a
 * connection failure ends it with status 2, as psql.
 *
 * `wirekit pg copy out` streams a query's rows through binary COPY (wk_pq_copy_out), one
 * JSON object per line or one MessagePack map per row, in bounded memory; `wirekit pg copy
 * in` reads such records back into a table (wk_pq_copy_in), each value turned into
 * PostgreSQL text input and encoded in binary for its column's type.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#ifdef WK_CLI_HAVE_PQ
#include "wirekit/pq.h"
#endif

static void usage(FILE *out)
{
    fprintf(out,
            "usage: wirekit pg query [--dsn DSN] [--format json|msgpack|csv]\n"
            "                        [--rows-as objects|arrays] [--null TOKEN] [--timeout SECONDS]\n"
            "                        [--idle-timeout SECONDS] [--max-value-bytes N] SQL|- [PARAM...]\n"
            "       wirekit pg query [options] --file FILE [PARAM...]\n"
            "       wirekit pg copy out [--dsn DSN] [--format jsonl|msgpack] [--timeout SECONDS]\n"
            "                        [--idle-timeout SECONDS] [--max-value-bytes N] QUERY [FILE]\n"
            "       wirekit pg copy in [--dsn DSN] [--format jsonl|msgpack] [--timeout SECONDS]\n"
            "                        [--idle-timeout SECONDS] TABLE [FILE]\n"
            "       wirekit pg changes --slot NAME --publication NAME [options] [FILE]\n"
            "                        (row changes as they commit: wirekit pg changes --help)\n\n"
            "Runs SQL on PostgreSQL and prints each row as it arrives. Without PARAMs, SQL may\n"
            "hold several statements separated by ';'. PARAMs are bound to $1, $2, ... as text\n"
            "(the server infers their types). SQL '-' reads the SQL from standard input.\n"
            "Options may come anywhere before '--' (after SQL too); '--' ends them, so a\n"
            "PARAM that begins with '-' goes after it. An unknown option exits 2.\n\n"
            "  --dsn DSN       libpq connection string or URI (default: $WK_PG_DSN, else the\n"
            "                  libpq environment: PGHOST, PGPORT, PGDATABASE, PGUSER,\n"
            "                  PGSERVICE with pg_service.conf, ~/.pgpass, ...)\n"
            "  --format FMT    json (default): one JSON value per line; msgpack: one\n"
            "                  MessagePack value per row; csv: byte for byte what psql prints in\n"
            "                  its csv output format\n"
            "  --rows-as WHAT  objects (default): {\"column\": value}, a repeated column name\n"
            "                  gets a suffix (a, a_2, a_3; one not taken by another column);\n"
            "                  arrays: [value, ...] in column order\n"
            "  --null TOKEN    a PARAM equal to TOKEN is sent as SQL NULL\n"
            "  --timeout SECS  give up after SECS seconds (decimals allowed; default: none):\n"
            "                  the server's statement_timeout, the connect timeout, and a\n"
            "                  client-side deadline that cancels the query even when the\n"
            "                  server does not answer (exit 1, 'query timed out')\n"
            "  --idle-timeout SECS  give up when the server sends and takes nothing for SECS\n"
            "                  seconds while wirekit waits on it (a stopped or stalled server;\n"
            "                  default 300 without --timeout, none with it; 0: never): the\n"
            "                  query or COPY is cancelled (exit 1, 'timed out'). Without\n"
            "                  --timeout the connect must also finish within 30 s (a\n"
            "                  connect_timeout in DSN or PGCONNECT_TIMEOUT wins) and TCP\n"
            "                  keepalives are on. The server sends small rows in blocks of\n"
            "                  about 8 KB: a query that runs longer than 300 s before it has\n"
            "                  that much to send needs --idle-timeout 0 or a --timeout\n"
            "  --max-value-bytes N  largest text one value (a range; in csv any value) is\n"
            "                  rendered to before it is refused (default 64 MiB); copy out:\n"
            "                  also the largest COPY field received (default 1 GiB)\n"
            "  -f, --file FILE the SQL from FILE ('-': standard input), as psql -f; every\n"
            "                  operand is then a PARAM\n\n"
            "Mapping (json, msgpack; the library's row policy, the same in query, copy out and\n"
            "copy in): bool -> true/false; integers -> integers; finite floats -> numbers;\n"
            "numerics -> json: numbers with exactly PostgreSQL's digits; msgpack: an integer\n"
            "when integral and within 64 bits, else a float64 when that double's shortest\n"
            "digits are the same number (2.50 -> 2.5), else a string of the exact digits;\n"
            "arrays -> nested arrays; composite types and records -> nested objects keyed by\n"
            "field name, as row_to_json (anonymous records: f1, f2, ...); json/jsonb -> the\n"
            "embedded value (msgpack: its integers within 64 bits as integers, other numbers\n"
            "as float64, strings only beyond a double's range); anything else (and\n"
            "NaN/Infinity) -> a string with PostgreSQL's text output (DateStyle=ISO, MDY,\n"
            "IntervalStyle=postgres, TimeZone=UTC). One statement is run with binary results\n"
            "(several separated by ';' go as psql -c sends them, in text).\n"
            "SQL NULL vs JSON null: SQL NULL is null, except in a json/jsonb column, where an\n"
            "object leaves the key out, so null there is always the JSON value null; with\n"
            "--rows-as arrays, json/jsonb values are strings holding their JSON text instead.\n"
            "(Inside arrays and records, SQL NULL and JSON null both print as null.)\n"
            "Command tags (INSERT 0 1) go to stdout with csv, to stderr otherwise.\n"
            "A row is written whole or not at all: a row with a value that cannot be printed\n"
            "leaves nothing of itself on stdout (the rows before it are whole), and the error\n"
            "names the row.\n\n"
            "copy out streams QUERY's rows with COPY (QUERY) TO STDOUT (FORMAT binary), each\n"
            "decoded by wirekit as it arrives and written to FILE (default: standard output) as\n"
            "one JSON object per line (jsonl, the default) or one MessagePack map per row\n"
            "(msgpack), with the mapping above; the row count goes to stderr (COPY n). FILE\n"
            "is written through a temporary file renamed over it at the end: a copy that\n"
            "fails leaves the old FILE as it was.\n"
            "copy in reads records (JSON objects, one per line, or MessagePack maps) from FILE\n"
            "(default: standard input) into TABLE with binary COPY, the mapping above read\n"
            "back: the first record's keys are the columns (matched by name), with the\n"
            "table's json/jsonb columns (a key left out is SQL NULL there, null is JSON null);\n"
            "arrays and objects become arrays and composites of the column's type;\n"
            "a record that does not fit is named (FILE:N: column \"c\": why) and nothing is\n"
            "written. A progress line is shown for large files on a terminal.\n"
            "Exit status: 0 success, 1 a query failed, 2 no connection or a usage error.\n");
}

#ifdef WK_CLI_HAVE_PQ

#define WK_EXIT_CONNECT 2 /* psql's status for a failed connection */
/* The defaults without --timeout (--help and wirekit.1 say them): a connect gets what psql
 * users often set as connect_timeout, a wait on a server that sends and takes nothing is
 * given up after five minutes; a query silent for longer needs --idle-timeout 0. */
#define CONNECT_DEFAULT_MS 30000u
#define IDLE_DEFAULT_MS 300000u

typedef enum out_fmt { OUT_JSON, OUT_MSGPACK, OUT_CSV } out_fmt;

typedef struct printer {
    out_fmt fmt;
    bool arrays;
    wk_pq_conn *conn;
    wk_buf buf;
    wk_buf cell;
    size_t max_text; /* --max-value-bytes (0 = the library's default) */
    wk_arena arena;  /* csv: unescaped array elements of one row; reset per row */
    /* the current result set: the row policy's description (json, msgpack) or a TEXT plan
     * (csv, psql's format) */
    wk_pg_rowdesc *rd;
    wk_pg_plan *plan;
    size_t ncols;
} printer;

static void end_set(printer *p)
{
    wk_pg_plan_free(p->plan);
    wk_pg_rowdesc_free(p->rd);
    p->plan = NULL;
    p->rd = NULL;
    p->ncols = 0;
}

static int flush(printer *p, bool force)
{
    if (p->buf.len >= (1u << 16) || (force && p->buf.len > 0)) {
        if (fwrite(p->buf.data, 1, p->buf.len, stdout) != p->buf.len) {
            return wk_cli_fail("cannot write the output");
        }
        wk_buf_clear(&p->buf);
    }
    return WK_EXIT_OK;
}

/* psql's csv_print_field: quoted when holding ',', '"', CR or LF, or exactly "\." */
static wk_status csv_field(wk_buf *b, const char *s, size_t n)
{
    bool q = (n == 2 && s[0] == '\\' && s[1] == '.');
    for (size_t i = 0; i < n && !q; i++) {
        q = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
    }
    wk_status st = q ? wk_buf_push(b, '"') : WK_OK;
    for (size_t i = 0; i < n && st == WK_OK; i++) {
        if (s[i] == '"') {
            st = wk_buf_push(b, '"');
        }
        if (st == WK_OK) {
            st = wk_buf_push(b, (uint8_t)s[i]);
        }
    }
    return st == WK_OK && q ? wk_buf_push(b, '"') : st;
}

/* Sets up a result set's columns from `res` (a row or the end of a set). */
static int begin_set(printer *p, const PGresult *res)
{
    p->ncols = (size_t)PQnfields(res);
    wk_error err = {0};
    wk_status st;
    if (p->fmt != OUT_CSV) {
        wk_pg_row_opts o = {p->fmt == OUT_MSGPACK ? WK_PG_ROW_MSGPACK : WK_PG_ROW_JSON,
                            p->arrays ? WK_PG_ROW_ARRAYS : 0u, p->max_text};
        st = wk_pq_rowdesc_new(p->conn, res, &o, &p->rd, &err);
    } else {
        wk_pg_kind *kinds = calloc(p->ncols + 1, sizeof *kinds);
        if (kinds == NULL) {
            return wk_cli_fail("out of memory");
        }
        for (size_t i = 0; i < p->ncols; i++) {
            kinds[i] = WK_PG_KIND_TEXT;
        }
        st = wk_pq_plan(p->conn, res, kinds, NULL, &p->plan, &err);
        free(kinds);
    }
    if (st != WK_OK) {
        return wk_cli_fail("cannot decode column %zu (%s): %s", err.offset + 1,
                           PQfname(res, (int)err.offset), err.msg);
    }
    if (p->fmt == OUT_CSV) {
        wk_status ws = WK_OK;
        for (size_t i = 0; i < p->ncols && ws == WK_OK; i++) {
            const char *name = PQfname(res, (int)i);
            ws = i > 0 ? wk_buf_push(&p->buf, ',') : WK_OK;
            if (ws == WK_OK) {
                ws = csv_field(&p->buf, name, strlen(name));
            }
        }
        if (ws == WK_OK) {
            ws = wk_buf_push(&p->buf, '\n');
        }
        if (ws != WK_OK) {
            return wk_cli_fail("out of memory");
        }
    }
    return WK_EXIT_OK;
}

/* The message of a value that cannot be printed (row N, its column, why). */
static int row_fail(long long rowno, const char *col, size_t max_text, wk_status st,
                    const wk_error *err)
{
    if (st == WK_ERR_LIMIT && max_text != 0) {
        return wk_cli_fail("row %lld: column \"%s\": a value's text is larger than "
                           "--max-value-bytes %zu",
                           rowno, col, max_text);
    }
    return wk_cli_fail("row %lld: column \"%s\": %s (at byte %zu)", rowno, col,
                       err->msg != NULL ? err->msg : wk_status_str(st), err->offset);
}

static int print_row(printer *p, const PGresult *res, long rowno)
{
    wk_error err = {0};
    wk_status st = WK_OK;
    if (p->fmt != OUT_CSV) {
        /* whole or nothing: a failed row leaves none of its bytes */
        st = wk_pq_row_append(p->rd, res, 0, &p->buf, &err);
        if (st != WK_OK) {
            size_t col = wk_pg_row_column(p->rd);
            return row_fail(rowno, col < p->ncols ? wk_pg_rowdesc_key(p->rd, col) : "?",
                            p->max_text, st, &err);
        }
        return flush(p, false);
    }
    size_t row_start = p->buf.len;
    size_t i = 0;
    wk_arena_reset(&p->arena);
    for (; i < p->ncols && st == WK_OK; i++) {
        st = i > 0 ? wk_buf_push(&p->buf, ',') : WK_OK;
        if (st != WK_OK || PQgetisnull(res, 0, (int)i)) {
            continue; /* NULL: an empty field, as psql's default */
        }
        wk_buf_clear(&p->cell);
        st = wk_pg_decode(wk_pg_plan_decoder(p->plan, i), PQgetvalue(res, 0, (int)i),
                          (size_t)PQgetlength(res, 0, (int)i), &p->cell, &p->arena, &err);
        if (st == WK_OK && p->max_text != 0 && p->cell.len > p->max_text) {
            st = wk_error_set(&err, WK_ERR_LIMIT, 0, "value text larger than the cap");
        }
        if (st == WK_OK) {
            st = csv_field(&p->buf, (const char *)p->cell.data, p->cell.len);
        }
    }
    if (st == WK_OK) {
        st = wk_buf_push(&p->buf, '\n');
    }
    if (st != WK_OK) {
        p->buf.len = row_start;
        return row_fail(rowno, PQfname(res, (int)(i > 0 ? i - 1 : 0)), p->max_text, st, &err);
    }
    return flush(p, false);
}

static void print_error(wk_pq_conn *conn, const char *sql)
{
    const wk_pq_error *e = wk_pq_last_error(conn);
    if (e == NULL) {
        return;
    }
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    if (wk_pq_error_format(e, sql, &b) == WK_OK) {
        fflush(stdout);
        fwrite(b.data, 1, b.len, stderr);
    }
    wk_buf_free(&b);
}

/* Connects within the limits: WK_EXIT_OK with *conn set, else the message printed and
 * WK_EXIT_CONNECT (psql's status) or WK_EXIT_FAIL, *conn NULL. */
static int connect_or_fail(const char *dsn, const wk_pq_limits *lim, wk_pq_conn **conn)
{
    wk_error err = {0};
    wk_status cst = wk_pq_connect_limits(dsn, NULL, lim, conn, &err);
    if (cst != WK_OK) {
        int rc = wk_cli_fail("%s: %s", err.msg, *conn != NULL ? wk_pq_conn_message(*conn) : "");
        wk_pq_conn_free(*conn);
        *conn = NULL;
        return cst == WK_ERR_CONNECT ? WK_EXIT_CONNECT : rc;
    }
    return WK_EXIT_OK;
}

/* Which limit ended a wait, in the options' words: " (--timeout 3 s)". */
static const char *limit_note(const wk_pq_limits *lim, char *buf, size_t cap)
{
    if (lim->timeout_ms != 0) {
        snprintf(buf, cap, " (--timeout %.3g s)", lim->timeout_ms / 1000.0);
    } else if (lim->idle_ms != 0) {
        snprintf(buf, cap, " (the server sent and took nothing for %.3g s, --idle-timeout)",
                 lim->idle_ms / 1000.0);
    } else {
        buf[0] = '\0';
    }
    return buf;
}

/* A failed call of the library: the server's report as psql prints it when there is one,
 * else the library's message and the connection's ("the query timed out: query timed out
 * (cancelled) (--timeout 3 s)"). */
static void print_failure(wk_pq_conn *conn, const char *sql, wk_status st, const wk_error *err,
                          const wk_pq_limits *lim)
{
    if (wk_pq_last_error(conn) != NULL) {
        print_error(conn, sql);
        return;
    }
    char note[128];
    const char *m = wk_pq_conn_message(conn);
    fflush(stdout);
    (void)wk_cli_fail("%s%s%s%s", err->msg != NULL ? err->msg : wk_status_str(st),
                      m[0] != '\0' ? ": " : "", m,
                      st == WK_ERR_IO ? limit_note(lim, note, sizeof note) : "");
}

static int query(const char *dsn, out_fmt fmt, bool arrays, const char *null_token,
                 const wk_pq_limits *lim, size_t max_text, const char *sql, char **params,
                 int nparams)
{
    wk_pq_conn *conn = NULL;
    int crc = connect_or_fail(dsn, lim, &conn);
    if (crc != WK_EXIT_OK) {
        return crc;
    }
    wk_error err = {0};
    wk_pq_param *p = calloc((size_t)nparams + 1, sizeof *p);
    wk_slice *s = calloc((size_t)nparams + 1, sizeof *s);
    if (p == NULL || s == NULL) {
        free(p);
        free(s);
        wk_pq_conn_free(conn);
        return wk_cli_fail("out of memory");
    }
    for (int i = 0; i < nparams; i++) {
        s[i].ptr = params[i];
        s[i].len = strlen(params[i]);
        p[i].kind = WK_PG_KIND_TEXT;
        p[i].value = null_token != NULL && strcmp(params[i], null_token) == 0 ? NULL : &s[i];
        p[i].oid = 0;
    }
    printer pr;
    memset(&pr, 0, sizeof pr);
    pr.fmt = fmt;
    pr.arrays = arrays;
    pr.conn = conn;
    pr.max_text = max_text;
    wk_buf_init(&pr.buf, NULL, 0);
    wk_buf_init(&pr.cell, NULL, 0);
    wk_arena_init(&pr.arena, NULL, 0);
    int rc = WK_EXIT_OK;
    /* csv is psql's text; JSON and MessagePack ask for binary whenever the SQL is one
     * statement, so that the server never renders a nested value as text */
    unsigned flags = WK_PQ_SEND_SINGLE_ROW;
    if (nparams == 0) {
        flags |= fmt == OUT_CSV ? WK_PQ_SEND_SIMPLE : WK_PQ_SEND_SIMPLE_IF_MANY;
    }
    wk_status st = wk_pq_send(conn, sql, p, (size_t)nparams, flags, &err);
    if (st == WK_ERR_SERVER || st == WK_ERR_CONNECT || st == WK_ERR_IO) {
        /* the statement's describe failed, timed out or lost the connection */
        print_failure(conn, sql, st, &err, lim);
        rc = st == WK_ERR_CONNECT ? WK_EXIT_CONNECT : WK_EXIT_FAIL;
    } else if (st != WK_OK) {
        char what[48]; /* an encoding failure: err.offset is the parameter's index */
        snprintf(what, sizeof what, "parameter $%zu", err.offset + 1);
        err.offset = 0;
        rc = wk_cli_fail("%s: %s", what, err.msg != NULL ? err.msg : wk_status_str(st));
    }
    long rowno = 0;
    while (st == WK_OK) {
        PGresult *res = NULL;
        st = wk_pq_next(conn, &res, &err);
        if (st == WK_ERR_EOF) {
            break;
        }
        if (st != WK_OK) {
            rc = flush(&pr, true);
            print_failure(conn, sql, st, &err, lim);
            rc = st == WK_ERR_CONNECT ? WK_EXIT_CONNECT : WK_EXIT_FAIL;
            PQclear(res);
            end_set(&pr);
            st = st == WK_ERR_CONNECT ? st : WK_OK; /* drain the remaining results */
            continue;
        }
        ExecStatusType rs = PQresultStatus(res);
        bool in_set = pr.plan != NULL || pr.rd != NULL;
        if ((rs == PGRES_SINGLE_TUPLE || rs == PGRES_TUPLES_OK) && !in_set && rc == WK_EXIT_OK) {
            rc = begin_set(&pr, res);
        }
        if (rs == PGRES_SINGLE_TUPLE && rc == WK_EXIT_OK) {
            rc = print_row(&pr, res, ++rowno);
        } else if (rs == PGRES_TUPLES_OK) {
            end_set(&pr);
        } else if (rs == PGRES_COMMAND_OK && rc == WK_EXIT_OK) {
            if (fmt == OUT_CSV) {
                wk_buf_append(&pr.buf, PQcmdStatus(res), strlen(PQcmdStatus(res)));
                wk_buf_push(&pr.buf, '\n');
            } else {
                rc = flush(&pr, true);
                fflush(stdout);
                fprintf(stderr, "%s\n", PQcmdStatus(res));
            }
        }
        PQclear(res);
        if (rc != WK_EXIT_OK && st == WK_OK) {
            /* a local failure: stop reading rows but let the query finish, each wait
             * within the limits */
            while (wk_pq_next(conn, &res, NULL) != WK_ERR_EOF) {
                PQclear(res);
                res = NULL;
            }
            break;
        }
    }
    int frc = flush(&pr, true);
    rc = rc != WK_EXIT_OK ? rc : frc;
    end_set(&pr);
    wk_buf_free(&pr.buf);
    wk_buf_free(&pr.cell);
    wk_arena_free(&pr.arena);
    free(p);
    free(s);
    wk_pq_conn_free(conn);
    return rc;
}


/* ---- pg copy out ---- */

typedef struct copy_out {
    FILE *f;
    wk_pg_row_opts opts;
    wk_pg_rowdesc *rd; /* made from the plan at the first row */
    wk_buf buf;
    bool write_failed;
} copy_out;

static wk_status copy_out_row(void *ctx, const wk_pg_plan *plan, const uint8_t *const *vals,
                              const int *lens, wk_error *err)
{
    copy_out *o = ctx;
    wk_status st = o->rd == NULL ? wk_pg_rowdesc_from_plan(plan, &o->opts, &o->rd, err) : WK_OK;
    if (st == WK_OK) {
        st = wk_pg_row_append(o->rd, vals, lens, &o->buf, err); /* whole or nothing */
    }
    if (st != WK_OK) {
        return st;
    }
    if (o->buf.len >= (1u << 16)) {
        if (fwrite(o->buf.data, 1, o->buf.len, o->f) != o->buf.len) {
            o->write_failed = true;
            err->msg = "cannot write the output";
            return WK_ERR_IO;
        }
        wk_buf_clear(&o->buf);
    }
    return st;
}

static int copy_out_run(const char *dsn, bool msgpack, const wk_pq_limits *lim,
                        size_t max_text, const char *sql, const char *path)
{
    wk_pq_conn *conn = NULL;
    int crc = connect_or_fail(dsn, lim, &conn);
    if (crc != WK_EXIT_OK) {
        return crc;
    }
    wk_error err = {0};
    copy_out o;
    memset(&o, 0, sizeof o);
    o.opts.format = msgpack ? WK_PG_ROW_MSGPACK : WK_PG_ROW_JSON;
    o.opts.max_text = max_text;
    if (max_text != 0) {
        (void)wk_pq_set_max_value_bytes(conn, max_text); /* a COPY field too, as it arrives */
    }
    wk_cli_output out; /* FILE is replaced at the end, whole, or left as it was */
    if (wk_cli_output_open(&out, path, -1) != 0) {
        wk_pq_conn_free(conn);
        return WK_EXIT_FAIL;
    }
    o.f = out.f;
    wk_buf_init(&o.buf, NULL, 0);
    uint64_t rows = 0;
    int rc = WK_EXIT_OK;
    wk_status st = wk_pq_copy_out(conn, sql, NULL, NULL, copy_out_row, &o, &rows, &err);
    /* the complete rows before a failure still go to standard output (a FILE is dropped) */
    if ((st == WK_OK || o.f == stdout) && !o.write_failed && o.buf.len > 0 &&
        fwrite(o.buf.data, 1, o.buf.len, o.f) != o.buf.len) {
        o.write_failed = true;
    }
    if (o.write_failed) {
        wk_cli_output_abort(&out);
        rc = wk_cli_fail("cannot write %s", out.name);
    } else if (st != WK_OK) {
        wk_cli_output_abort(&out); /* the rows before the failure stay on stdout */
    } else if (wk_cli_output_commit(&out) != 0) {
        rc = WK_EXIT_FAIL;
        st = WK_ERR_IO;
    }
    if (rc == WK_EXIT_OK) {
        if (st == WK_ERR_SERVER || st == WK_ERR_CONNECT) {
            print_error(conn, NULL);
            rc = st == WK_ERR_CONNECT ? WK_EXIT_CONNECT : WK_EXIT_FAIL;
        } else if (st == WK_ERR_NOT_FOUND) {
            rc = wk_cli_fail("%s", wk_pq_conn_message(conn));
        } else if (st == WK_ERR_LIMIT && max_text != 0) {
            size_t col = o.rd != NULL ? wk_pg_row_column(o.rd) : SIZE_MAX;
            rc = wk_cli_fail("row %llu%s%s%s: a value is larger than --max-value-bytes %zu",
                             (unsigned long long)rows + 1, col != SIZE_MAX ? ": column \"" : "",
                             col != SIZE_MAX ? wk_pg_rowdesc_key(o.rd, col) : "",
                             col != SIZE_MAX ? "\"" : "", max_text);
        } else if (st != WK_OK && o.rd != NULL && wk_pg_row_column(o.rd) != SIZE_MAX) {
            rc = row_fail((long long)rows + 1, wk_pg_rowdesc_key(o.rd, wk_pg_row_column(o.rd)),
                          max_text, st, &err);
        } else if (st == WK_ERR_IO) {
            char note[128];
            rc = wk_cli_fail("%s: %s after %llu rows%s", err.msg != NULL ? err.msg : "copy",
                             wk_pq_conn_message(conn), (unsigned long long)rows,
                             limit_note(lim, note, sizeof note));
        } else if (st != WK_OK) {
            rc = wk_cli_fail("%s: %s (row %llu, at byte %zu)",
                             err.msg != NULL ? err.msg : "copy",
                             wk_pq_conn_message(conn)[0] ? wk_pq_conn_message(conn)
                                                         : wk_status_str(st),
                             (unsigned long long)rows + 1, err.offset);
        } else {
            fprintf(stderr, "COPY %llu\n", (unsigned long long)rows);
        }
    }
    wk_buf_free(&o.buf);
    wk_pg_rowdesc_free(o.rd);
    wk_pq_conn_free(conn);
    return rc;
}


/* ---- pg copy in ---- */

typedef struct copy_in_cli {
    wk_pq_conn *conn;
    const wk_pq_limits *lim;
    wk_pq_copy_in *in;
    bool msgpack;
    const char *src; /* input name for messages */
} copy_in_cli;

static int copy_in_fail(copy_in_cli *c, uint64_t rec, const char *msg)
{
    return wk_cli_fail("%s:%llu: %s (nothing written)", c->src, (unsigned long long)rec, msg);
}

/* One record. The first one's keys (with the table's json/jsonb columns, whose SQL NULL is a
 * key left out) fix the columns; the row policy of the library turns each record into the
 * columns' binary values. */
static int copy_in_record(copy_in_cli *c, const char *table, const wk_value *v, uint64_t rec)
{
    wk_error err = {0};
    if (v->type != WK_VAL_MAP) {
        return copy_in_fail(c, rec, "a record must be an object (a map)");
    }
    if (c->in == NULL) {
        const char **names = calloc((size_t)v->len + 1, sizeof *names);
        char *block = NULL;
        size_t total = 0;
        for (uint32_t i = 0; i < v->len; i++) {
            const wk_value *k = &v->u.pairs[i].key;
            if (k->type != WK_VAL_STR) {
                free(names);
                return copy_in_fail(c, rec, "a key that is not a string");
            }
            total += k->len + 1u;
        }
        block = malloc(total + 1);
        if (names == NULL || block == NULL) {
            free(names);
            free(block);
            return wk_cli_fail("out of memory");
        }
        char *w = block;
        for (uint32_t i = 0; i < v->len; i++) {
            const wk_value *k = &v->u.pairs[i].key;
            memcpy(w, k->u.str, k->len);
            w[k->len] = '\0';
            names[i] = w;
            w += k->len + 1u;
        }
        wk_pg_row_opts o = {c->msgpack ? WK_PG_ROW_MSGPACK : WK_PG_ROW_JSON, 0, 0};
        wk_status st = wk_pq_copy_in_start_records(c->conn, table, names, v->len, &o, &c->in,
                                                   &err);
        free(names);
        free(block);
        if (st == WK_ERR_SERVER || st == WK_ERR_CONNECT) {
            print_error(c->conn, NULL);
            return st == WK_ERR_CONNECT ? WK_EXIT_CONNECT : WK_EXIT_FAIL;
        }
        if (st != WK_OK) {
            char words[600];
            return copy_in_fail(c, rec, wk_pq_conn_message(c->conn)[0]
                                            ? wk_cli_words(wk_pq_conn_message(c->conn), words,
                                                           sizeof words)
                                            : wk_status_str(st));
        }
    }
    wk_status st = wk_pq_copy_in_record(c->in, v, &err);
    if (st == WK_ERR_CONNECT || st == WK_ERR_IO) {
        /* the COPY itself failed (lost, or the server stopped taking data): no column's
         * fault; the record is where it happened */
        char note[128];
        const wk_pq_error *e = wk_pq_last_error(c->conn);
        if (e != NULL) {
            print_error(c->conn, NULL);
        }
        (void)wk_cli_fail("%s:%llu: %s: %s%s (nothing written)", c->src,
                          (unsigned long long)rec, err.msg != NULL ? err.msg : wk_status_str(st),
                          e != NULL ? e->message : wk_pq_conn_message(c->conn),
                          st == WK_ERR_IO ? limit_note(c->lim, note, sizeof note) : "");
        return st == WK_ERR_CONNECT ? WK_EXIT_CONNECT : WK_EXIT_FAIL;
    }
    size_t unknown = st == WK_ERR_NOT_FOUND ? wk_pq_copy_in_unknown_key(c->in) : SIZE_MAX;
    if (unknown != SIZE_MAX) {
        const wk_value *k = unknown < v->len ? &v->u.pairs[unknown].key : NULL;
        char msg[200];
        snprintf(msg, sizeof msg, "column \"%.*s\": not a column of the first record",
                 k != NULL && k->type == WK_VAL_STR ? (int)(k->len > 100 ? 100 : k->len) : 1,
                 k != NULL && k->type == WK_VAL_STR ? k->u.str : "?");
        return copy_in_fail(c, rec, msg);
    }
    if (st != WK_OK) {
        return copy_in_fail(c, rec, wk_pq_conn_message(c->conn));
    }
    return WK_EXIT_OK;
}

static int copy_in_run(const char *dsn, bool msgpack, const wk_pq_limits *lim,
                       const char *table, const char *path)
{
    copy_in_cli c;
    memset(&c, 0, sizeof c);
    c.lim = lim;
    int crc = connect_or_fail(dsn, lim, &c.conn);
    if (crc != WK_EXIT_OK) {
        return crc;
    }
    wk_error err = {0};
    wk_cli_input in;
    if (wk_cli_input_open(&in, path, WK_CLI_PROGRESS_AUTO) != 0) {
        wk_pq_conn_free(c.conn);
        return WK_EXIT_FAIL;
    }
    c.src = in.name;
    c.msgpack = msgpack;
    wk_buf pend;
    wk_buf_init(&pend, NULL, 0);
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_read_opts ro = {msgpack ? 0u : WK_JSON_READ_RAW_NUMBERS, 0, NULL, {NULL, NULL}};
    int rc = WK_EXIT_OK;
    uint64_t rec = 0;
    size_t pos = 0;
    size_t clean = 0; /* jsonl: bytes of pend[pos..] known to hold no newline */
    size_t tried = 0; /* msgpack: bytes of pend[pos..] a decode found cut short */
    bool eof = false;
    while (rc == WK_EXIT_OK) {
        /* the next record in pend[pos..) */
        const uint8_t *p = pend.data != NULL ? pend.data + pos : NULL;
        size_t left = pend.len - pos;
        size_t used = 0;
        wk_value *v = NULL;
        wk_status st = WK_ERR_AGAIN;
        wk_arena_reset(&arena);
        if (!msgpack) {
            /* only the bytes that came since the last look: a long line costs linear time */
            const uint8_t *nl = left > clean ? memchr(p + clean, '\n', left - clean) : NULL;
            clean = nl != NULL ? 0 : left;
            if (nl != NULL || (eof && left > 0)) {
                clean = 0;
                size_t n = nl != NULL ? (size_t)(nl - p) : left;
                used = nl != NULL ? n + 1 : n;
                size_t k = 0;
                while (k < n && (p[k] == ' ' || p[k] == '\t' || p[k] == '\r')) {
                    k++;
                }
                if (k == n) {
                    rec++;
                    pos += used;
                    continue; /* a blank line */
                }
                st = wk_json_decode_value(p, n, &ro, &arena, &v, NULL, &err);
            }
        } else if (left > 0 && (eof || left >= 2 * tried || pend.len > pend.max - WK_CLI_CHUNK)) {
            /* a cut record is decoded again once its bytes have doubled (or the input ended,
             * or one more chunk might not fit): each try reads what came before, so trying
             * at every chunk cost quadratic time in a long record; this is linear */
            st = wk_mp_decode_value(p, left, &ro, &arena, &v, &used, &err);
            if (st == WK_ERR_TRAILING) {
                st = WK_OK; /* more records follow: used is this one's size */
            }
            if (st == WK_ERR_TRUNCATED && !eof) {
                st = WK_ERR_AGAIN;
                tried = left;
            }
        }
        if (st == WK_ERR_AGAIN) {
            if (eof) {
                break;
            }
            if (pos > 0) { /* keep only the incomplete tail */
                memmove(pend.data, pend.data + pos, pend.len - pos);
                pend.len -= pos;
                pos = 0;
            }
            const uint8_t *chunk = NULL;
            long got = wk_cli_input_read(&in, &chunk);
            if (got < 0) {
                rc = WK_EXIT_FAIL;
            } else if (got == 0) {
                eof = true;
            } else {
                wk_status ast = wk_buf_append(&pend, chunk, (size_t)got);
                if (ast == WK_ERR_LIMIT) {
                    /* the buffer's cap, not the machine's memory: say which record */
                    rc = wk_cli_fail("%s:%llu: a record longer than %zu bytes, the most pg copy "
                                     "in holds (nothing written)",
                                     c.src, (unsigned long long)rec + 1, (size_t)WK_BUF_DEFAULT_MAX);
                } else if (ast != WK_OK) {
                    rc = wk_cli_fail("out of memory");
                }
            }
            continue;
        }
        rec++;
        if (st != WK_OK) {
            rc = wk_cli_fail("%s:%llu: %s (at byte %zu of the record; nothing written)", c.src,
                             (unsigned long long)rec, err.msg ? err.msg : wk_status_str(st),
                             err.offset);
            break;
        }
        rc = copy_in_record(&c, table, v, rec);
        pos += used;
        tried = 0;
    }
    wk_cli_input_close(&in);
    uint64_t rows = 0;
    if (c.in != NULL) {
        wk_status st = wk_pq_copy_in_end(c.in, rc == WK_EXIT_OK ? NULL : "wirekit: input refused",
                                         &rows, &err);
        if (rc == WK_EXIT_OK && st != WK_OK) {
            print_failure(c.conn, NULL, st, &err, lim);
            rc = st == WK_ERR_CONNECT ? WK_EXIT_CONNECT : WK_EXIT_FAIL;
        }
    }
    if (rc == WK_EXIT_OK) {
        fprintf(stderr, "COPY %llu\n", (unsigned long long)rows);
    }
    wk_buf_free(&pend);
    wk_arena_free(&arena);
    wk_pq_conn_free(c.conn);
    return rc;
}

#endif

enum { P_DSN = 1, P_FORMAT, P_ROWS_AS, P_NULL, P_TIMEOUT, P_IDLE, P_MAX_VALUE, P_FILE };

static const wk_cli_optdef pg_opts[] = {
    {"--dsn", 0, true, P_DSN},
    {"--format", 0, true, P_FORMAT},
    {"--rows-as", 0, true, P_ROWS_AS},
    {"--null", 0, true, P_NULL},
    {"--timeout", 0, true, P_TIMEOUT},
    {"--idle-timeout", 0, true, P_IDLE},
    {"--max-value-bytes", 0, true, P_MAX_VALUE},
    {"--file", 'f', true, P_FILE},
    {NULL, 0, false, 0},
};

#ifdef WK_CLI_HAVE_PQ
/* The SQL of `--file FILE` or of the operand "-" (standard input), NUL-terminated. */
static char *read_sql(const char *path)
{
    uint8_t *data = NULL;
    size_t len = 0;
    if (wk_cli_read_all(path, &data, &len) != 0) {
        return NULL;
    }
    const char *name = path == NULL || strcmp(path, "-") == 0 ? "standard input" : path;
    if (memchr(data, '\0', len) != NULL) {
        free(data);
        wk_cli_fail("%s: the SQL holds a NUL byte", name);
        return NULL;
    }
    uint8_t *sql = realloc(data, len + 1);
    if (sql == NULL) {
        free(data);
        wk_cli_fail("out of memory");
        return NULL;
    }
    sql[len] = '\0';
    return (char *)sql;
}
#endif

static int run(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return WK_EXIT_USAGE;
    }
    if (strcmp(argv[1], "changes") == 0) {
        return wk_cli_pg_changes(argc - 1, argv + 1); /* its own options (pg_changes.c) */
    }
    const char *dsn = getenv("WK_PG_DSN");
    const char *format = NULL;
    bool arrays = false;
    const char *null_token = NULL;
    const char *sql_file = NULL;
    uint32_t timeout_ms = 0;
    long idle_ms = -1; /* -1: the default */
    size_t max_text = 0;
    wk_cli_args args;
    wk_cli_args_init(&args, "pg", argc, argv, 1, pg_opts);
    int id;
    const char *v;
    while ((id = wk_cli_next(&args, &v)) != WK_CLI_DONE) {
        switch (id) {
        case WK_CLI_HELP: usage(stdout); return WK_EXIT_OK;
        case WK_CLI_BAD: return WK_EXIT_USAGE;
        case P_DSN: dsn = v; break;
        case P_FORMAT: format = v; break;
        case P_ROWS_AS:
            if (strcmp(v, "arrays") == 0) {
                arrays = true;
            } else if (strcmp(v, "objects") != 0) {
                return wk_cli_usage_error("pg", "unknown --rows-as '%s' (objects or arrays)", v);
            }
            break;
        case P_NULL: null_token = v; break;
        case P_FILE: sql_file = v; break;
        case P_TIMEOUT: {
            char *end = NULL;
            double secs = strtod(v, &end);
            if (end == v || *end != '\0' || !(secs > 0) || secs > 86400.0) {
                return wk_cli_usage_error("pg", "--timeout needs seconds, more than 0");
            }
            timeout_ms = (uint32_t)(secs * 1000.0 + 0.5);
            if (timeout_ms == 0) {
                timeout_ms = 1;
            }
            break;
        }
        case P_IDLE: {
            char *end = NULL;
            double secs = strtod(v, &end);
            if (end == v || *end != '\0' || !(secs >= 0) || secs > 86400.0) {
                return wk_cli_usage_error("pg", "--idle-timeout needs seconds, 0 or more");
            }
            idle_ms = secs > 0 && secs * 1000.0 < 1.0 ? 1 : (long)(secs * 1000.0 + 0.5);
            break;
        }
        case P_MAX_VALUE: {
            char *end = NULL;
            unsigned long long mb = strtoull(v, &end, 10);
            if (end == v || *end != '\0' || mb == 0 || v[0] == '-') {
                return wk_cli_usage_error("pg", "--max-value-bytes needs a positive number");
            }
            max_text = (size_t)mb;
            break;
        }
        default: return wk_cli_usage_error("pg", "unexpected option");
        }
    }
    char **ops = argv + args.first;
    int nops = args.nops;
    if (nops == 0) {
        return wk_cli_usage_error("pg", "missing subcommand: query or copy");
    }
    bool copy = strcmp(ops[0], "copy") == 0;
    if (strcmp(ops[0], "query") != 0 && !copy) {
        return wk_cli_usage_error("pg", "unknown subcommand '%s'", ops[0]);
    }
    bool copy_in = copy && nops >= 2 && strcmp(ops[1], "in") == 0;
    if (copy && (nops < 2 || (strcmp(ops[1], "out") != 0 && !copy_in))) {
        return wk_cli_usage_error("pg", "copy needs a direction: out or in");
    }
    ops += copy ? 2 : 1;
    nops -= copy ? 2 : 1;
    int fmt = 0; /* json, msgpack, csv */
    if (format == NULL || strcmp(format, "json") == 0) {
        fmt = 0;
    } else if (strcmp(format, "msgpack") == 0) {
        fmt = 1;
    } else if (copy && strcmp(format, "jsonl") == 0) {
        fmt = 0;
    } else if (copy) {
        return wk_cli_usage_error("pg", "unknown copy format '%s' (jsonl or msgpack)", format);
    } else if (strcmp(format, "csv") == 0) {
        fmt = 2;
    } else {
        return wk_cli_usage_error("pg", "unknown format '%s' (json, msgpack or csv)", format);
    }
    if (copy && (arrays || null_token != NULL || sql_file != NULL)) {
        return wk_cli_usage_error("pg", "--rows-as, --null and --file are options of pg query, "
                                        "not of pg copy");
    }
    if (copy_in && max_text != 0) {
        return wk_cli_usage_error("pg", "--max-value-bytes is not an option of pg copy in");
    }
    if (nops == 0 && sql_file == NULL) {
        return wk_cli_usage_error("pg", "missing %s", copy_in ? "TABLE" : copy ? "QUERY" : "SQL");
    }
    if (copy && nops > 2) {
        return wk_cli_usage_error("pg", "copy %s takes %s and at most one FILE",
                                  copy_in ? "in" : "out", copy_in ? "TABLE" : "QUERY");
    }
    if (dsn == NULL) {
        dsn = ""; /* libpq takes PGHOST, PGDATABASE, PGSERVICE, ... from the environment */
    }
#ifdef WK_CLI_HAVE_PQ
    /* Without --timeout a stopped or stalled server must not hang the command: the connect
     * within CONNECT_DEFAULT_MS, every wait within IDLE_DEFAULT_MS of silence. */
    wk_pq_limits lim = {timeout_ms, timeout_ms == 0 ? CONNECT_DEFAULT_MS : 0,
                        idle_ms >= 0 ? (uint32_t)idle_ms : timeout_ms == 0 ? IDLE_DEFAULT_MS : 0};
    if (copy_in) {
        return copy_in_run(dsn, fmt == 1, &lim, ops[0], nops > 1 ? ops[1] : NULL);
    }
    if (copy) {
        return copy_out_run(dsn, fmt == 1, &lim, max_text, ops[0], nops > 1 ? ops[1] : NULL);
    }
    /* SQL from --file FILE (then every operand is a PARAM) or from standard input ("-") */
    char *sql = NULL;
    if (sql_file != NULL || strcmp(ops[0], "-") == 0) {
        sql = read_sql(sql_file != NULL ? sql_file : "-");
        if (sql == NULL) {
            return WK_EXIT_FAIL;
        }
    }
    int skip = sql_file != NULL ? 0 : 1;
    int rc = query(dsn, (out_fmt)fmt, arrays, null_token, &lim, max_text,
                   sql != NULL ? sql : ops[0], ops + skip, nops - skip);
    free(sql);
    return rc;
#else
    (void)fmt;
    (void)arrays;
    (void)null_token;
    (void)timeout_ms;
    (void)idle_ms;
    (void)max_text;
    return wk_cli_fail("this wirekit was built without libpq (wirekit-pq)");
#endif
}

const wk_cli_command wk_cli_cmd_pg = {"pg", "run PostgreSQL queries, print rows as JSON, MessagePack or CSV",
                                      run};
