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
            "                        [--max-value-bytes N] SQL [PARAM...]\n\n"
            "Runs SQL on PostgreSQL and prints each row as it arrives. Without PARAMs, SQL may\n"
            "hold several statements separated by ';'. PARAMs are bound to $1, $2, ... as text\n"
            "(the server infers their types).\n\n"
            "  --dsn DSN       libpq connection string or URI (default: $WK_PG_DSN, else the\n"
            "                  libpq environment: PGHOST, PGPORT, PGDATABASE, PGUSER,\n"
            "                  PGSERVICE with pg_service.conf, ~/.pgpass, ...)\n"
            "  --format FMT    json (default): one JSON value per line; msgpack: one\n"
            "                  MessagePack value per row; csv: byte for byte what psql prints in\n"
            "                  its csv output format\n"
            "  --rows-as WHAT  objects (default): {\"column\": value}, a repeated column name\n"
            "                  gets a suffix (a, a_2, a_3); arrays: [value, ...] in column order\n"
            "  --null TOKEN    a PARAM equal to TOKEN is sent as SQL NULL\n"
            "  --timeout SECS  give up after SECS seconds (decimals allowed; default: none):\n"
            "                  the server's statement_timeout, the connect timeout, and a\n"
            "                  client-side deadline that cancels the query even when the\n"
            "                  server does not answer (exit 1, 'query timed out')\n"
            "  --max-value-bytes N  largest text one value (a record) is rendered to before\n"
            "                  it is refused (default 64 MiB)\n\n"
            "Mapping (json, msgpack): bool -> true/false; integers, finite floats and numerics ->\n"
            "numbers with exactly PostgreSQL's digits; arrays -> nested arrays; json/jsonb ->\n"
            "the embedded value; anything else (and NaN/Infinity) -> a string with PostgreSQL's\n"
            "text output (DateStyle=ISO, MDY, IntervalStyle=postgres, TimeZone=UTC).\n"
            "SQL NULL vs JSON null: SQL NULL is null, except in a json/jsonb column, where an\n"
            "object leaves the key out, so null there is always the JSON value null; with\n"
            "--rows-as arrays, json/jsonb values are strings holding their JSON text instead.\n"
            "(Inside a json[] array, SQL NULL and JSON null elements both print as null.)\n"
            "Command tags (INSERT 0 1) go to stdout with csv, to stderr otherwise.\n"
            "Exit status: 0 success, 1 a query failed, 2 no connection or a usage error.\n");
}

#ifdef WK_CLI_HAVE_PQ

#define WK_EXIT_CONNECT 2 /* psql's status for a failed connection */

typedef enum out_fmt { OUT_JSON, OUT_MSGPACK, OUT_CSV } out_fmt;

typedef struct printer {
    out_fmt fmt;
    bool arrays;
    wk_pq_conn *conn;
    wk_buf buf;
    wk_json_writer jw;
    wk_mp_writer mw;
    wk_sink sink;
    wk_buf scratch;
    wk_buf cell;
    size_t max_text; /* --max-value-bytes (0 = the library's default) */
    wk_arena arena;  /* unescaped array elements of one row; reset per row */
    /* the current result set */
    wk_pg_plan *plan;
    size_t ncols;
    char **keys;                  /* unique column keys (objects) */
    bool *is_json;                /* json/jsonb columns */
    const wk_pg_decoder **as_text; /* arrays mode: TEXT decoders of json columns */
} printer;

static void end_set(printer *p)
{
    wk_pg_plan_free(p->plan);
    p->plan = NULL;
    for (size_t i = 0; i < p->ncols && p->keys != NULL; i++) {
        free(p->keys[i]);
    }
    free(p->keys);
    free(p->is_json);
    free(p->as_text);
    p->keys = NULL;
    p->is_json = NULL;
    p->as_text = NULL;
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

/* Column keys for objects: a name seen before gets _2, _3, ... (skipping taken names). */
static bool unique_keys(printer *p, const PGresult *res)
{
    p->keys = calloc(p->ncols + 1, sizeof *p->keys);
    if (p->keys == NULL) {
        return false;
    }
    for (size_t i = 0; i < p->ncols; i++) {
        const char *name = PQfname(res, (int)i);
        size_t len = strlen(name);
        char *k = malloc(len + 16);
        if (k == NULL) {
            return false;
        }
        memcpy(k, name, len + 1);
        for (unsigned suffix = 2;; suffix++) {
            bool taken = false;
            for (size_t j = 0; j < p->ncols && !taken; j++) {
                /* earlier keys, and later columns' own names */
                const char *other = j < i ? p->keys[j] : j > i ? PQfname(res, (int)j) : NULL;
                taken = other != NULL && strcmp(other, k) == 0 && (j < i || suffix > 2);
            }
            if (!taken) {
                break;
            }
            snprintf(k + len, 16, "_%u", suffix);
        }
        p->keys[i] = k;
    }
    return true;
}

/* Sets up a result set's columns from `res` (a row or the end of a set). */
static int begin_set(printer *p, const PGresult *res)
{
    p->ncols = (size_t)PQnfields(res);
    wk_pg_kind *kinds = calloc(p->ncols + 1, sizeof *kinds);
    p->is_json = calloc(p->ncols + 1, sizeof *p->is_json);
    p->as_text = calloc(p->ncols + 1, sizeof *p->as_text);
    if (kinds == NULL || p->is_json == NULL || p->as_text == NULL ||
        (p->fmt != OUT_CSV && !p->arrays && !unique_keys(p, res))) {
        free(kinds);
        return wk_cli_fail("out of memory");
    }
    for (size_t i = 0; i < p->ncols; i++) {
        kinds[i] = p->fmt == OUT_CSV ? WK_PG_KIND_TEXT : WK_PG_KIND_EVENTS;
    }
    wk_error err = {0};
    wk_status st = wk_pq_plan(p->conn, res, kinds, NULL, &p->plan, &err);
    free(kinds);
    if (st != WK_OK) {
        return wk_cli_fail("cannot decode column %zu (%s): %s", err.offset + 1,
                           PQfname(res, (int)err.offset), err.msg);
    }
    const wk_pg_registry *reg = wk_pq_registry(p->conn);
    for (size_t i = 0; i < p->ncols; i++) {
        const wk_pg_decoder *d = wk_pg_plan_decoder(p->plan, i);
        const char *cn = d != NULL && d->elem_oid == 0 ? d->codec->name : "";
        p->is_json[i] = strcmp(cn, "json") == 0 || strcmp(cn, "jsonb") == 0;
        if (p->is_json[i]) {
            p->as_text[i] = wk_pg_registry_find_decoder(reg, d->oid, (wk_pg_format)d->format,
                                                       WK_PG_KIND_TEXT);
        }
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

static wk_status send_ev(printer *p, wk_event_type t, const char *s, size_t n, uint32_t count)
{
    wk_event x;
    memset(&x, 0, sizeof x);
    x.type = t;
    if (t == WK_EV_STR) {
        x.v.str.ptr = s;
        x.v.str.len = n;
    } else {
        x.v.count = count;
    }
    return p->sink.event(p->sink.self, &x);
}

static int print_row(printer *p, const PGresult *res, long rowno)
{
    wk_error err = {0};
    wk_status st = WK_OK;
    wk_arena_reset(&p->arena);
    if (p->fmt == OUT_CSV) {
        for (size_t i = 0; i < p->ncols && st == WK_OK; i++) {
            st = i > 0 ? wk_buf_push(&p->buf, ',') : WK_OK;
            if (st != WK_OK || PQgetisnull(res, 0, (int)i)) {
                continue; /* NULL: an empty field, as psql's default */
            }
            wk_buf_clear(&p->cell);
            st = wk_pg_decode(wk_pg_plan_decoder(p->plan, i), PQgetvalue(res, 0, (int)i),
                              (size_t)PQgetlength(res, 0, (int)i), &p->cell, &p->arena, &err);
            if (st == WK_OK) {
                st = csv_field(&p->buf, (const char *)p->cell.data, p->cell.len);
            }
        }
        if (st == WK_OK) {
            st = wk_buf_push(&p->buf, '\n');
        }
    } else {
        if (p->fmt == OUT_MSGPACK) {
            wk_mp_writer_init(&p->mw, &p->buf);
            wk_mp_writer_sink(&p->mw, &p->sink);
        }
        uint32_t count = 0;
        for (size_t i = 0; i < p->ncols; i++) {
            count += p->arrays || !(p->is_json[i] && PQgetisnull(res, 0, (int)i));
        }
        st = send_ev(p, p->arrays ? WK_EV_ARRAY : WK_EV_MAP, NULL, 0, count);
        wk_pg_events ev = {&p->sink, p->fmt == OUT_JSON ? WK_PG_EV_RAW_FLOATS : 0u,
                           &p->scratch, p->max_text};
        for (size_t i = 0; i < p->ncols && st == WK_OK; i++) {
            bool null = PQgetisnull(res, 0, (int)i);
            if (!p->arrays && p->is_json[i] && null) {
                continue; /* SQL NULL in a json column: the key is left out */
            }
            if (!p->arrays) {
                st = send_ev(p, WK_EV_STR, p->keys[i], strlen(p->keys[i]), 0);
            }
            const char *v = PQgetvalue(res, 0, (int)i);
            size_t n = (size_t)PQgetlength(res, 0, (int)i);
            if (st != WK_OK) {
                break;
            }
            if (null) {
                st = send_ev(p, WK_EV_NIL, NULL, 0, 0);
            } else if (p->arrays && p->is_json[i] && p->as_text[i] != NULL) {
                wk_buf_clear(&p->cell);
                st = wk_pg_decode(p->as_text[i], v, n, &p->cell, &p->arena, &err);
                if (st == WK_OK) {
                    st = send_ev(p, WK_EV_STR,
                                 p->cell.data != NULL ? (const char *)p->cell.data : "",
                                 p->cell.len, 0);
                }
            } else {
                st = wk_pg_decode(wk_pg_plan_decoder(p->plan, i), v, n, &ev, &p->arena, &err);
            }
        }
        if (st == WK_OK) {
            st = send_ev(p, WK_EV_END, NULL, 0, 0);
        }
        if (st == WK_OK && p->fmt == OUT_MSGPACK) {
            st = wk_mp_writer_finish(&p->mw, &err);
        }
    }
    if (st != WK_OK) {
        return wk_cli_fail("row %ld: %s (at byte %zu)", rowno,
                           err.msg != NULL ? err.msg : wk_status_str(st), err.offset);
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

static int query(const char *dsn, out_fmt fmt, bool arrays, const char *null_token,
                 uint32_t timeout_ms, size_t max_text, const char *sql, char **params,
                 int nparams)
{
    wk_pq_conn *conn = NULL;
    wk_error err = {0};
    wk_status cst = wk_pq_connect_timeout(dsn, NULL, timeout_ms, &conn, &err);
    if (cst != WK_OK) {
        int rc = wk_cli_fail("%s: %s", err.msg, conn != NULL ? wk_pq_conn_message(conn) : "");
        wk_pq_conn_free(conn);
        return cst == WK_ERR_CONNECT ? WK_EXIT_CONNECT : rc;
    }
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
    wk_buf_init(&pr.scratch, NULL, 0);
    wk_buf_init(&pr.cell, NULL, 0);
    wk_arena_init(&pr.arena, NULL, 0);
    wk_json_write_opts jopts = {WK_JSON_WRITE_NEWLINE, 0};
    if (fmt == OUT_JSON) {
        wk_json_writer_init(&pr.jw, &pr.buf, &jopts);
        wk_json_writer_sink(&pr.jw, &pr.sink);
    }
    int rc = WK_EXIT_OK;
    unsigned flags = WK_PQ_SEND_SINGLE_ROW | (nparams == 0 ? WK_PQ_SEND_SIMPLE : 0u);
    wk_status st = wk_pq_send(conn, sql, p, (size_t)nparams, flags, &err);
    if (st == WK_ERR_SERVER || st == WK_ERR_CONNECT) {
        print_error(conn, sql);
        rc = st == WK_ERR_CONNECT ? WK_EXIT_CONNECT : WK_EXIT_FAIL;
    } else if (st != WK_OK) {
        rc = wk_cli_fail_at("parameter", &err);
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
            print_error(conn, sql);
            rc = st == WK_ERR_CONNECT ? WK_EXIT_CONNECT : WK_EXIT_FAIL;
            PQclear(res);
            end_set(&pr);
            st = st == WK_ERR_CONNECT ? st : WK_OK; /* drain the remaining results */
            continue;
        }
        ExecStatusType rs = PQresultStatus(res);
        if ((rs == PGRES_SINGLE_TUPLE || rs == PGRES_TUPLES_OK) && pr.plan == NULL &&
            rc == WK_EXIT_OK) {
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
            /* a local failure: stop reading rows but let libpq finish the query */
            while ((res = PQgetResult(wk_pq_pgconn(conn))) != NULL) {
                PQclear(res);
            }
            break;
        }
    }
    int frc = flush(&pr, true);
    rc = rc != WK_EXIT_OK ? rc : frc;
    if (fmt == OUT_JSON && rc == WK_EXIT_OK && wk_json_writer_finish(&pr.jw, &err) != WK_OK) {
        rc = wk_cli_fail_at("writing JSON", &err);
    }
    end_set(&pr);
    wk_buf_free(&pr.buf);
    wk_buf_free(&pr.scratch);
    wk_buf_free(&pr.cell);
    wk_arena_free(&pr.arena);
    free(p);
    free(s);
    wk_pq_conn_free(conn);
    return rc;
}

#endif

static int run(int argc, char **argv)
{
    if (argc < 2 || wk_cli_is_help(argv[1])) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? WK_EXIT_USAGE : WK_EXIT_OK;
    }
    if (strcmp(argv[1], "query") != 0) {
        return wk_cli_usage_error("pg", "unknown subcommand '%s'", argv[1]);
    }
    const char *dsn = getenv("WK_PG_DSN");
    int fmt = 0; /* json, msgpack, csv */
    bool arrays = false;
    const char *null_token = NULL;
    uint32_t timeout_ms = 0;
    size_t max_text = 0;
    int i = 2;
    for (; i < argc; i++) {
        if (wk_cli_is_help(argv[i])) {
            usage(stdout);
            return WK_EXIT_OK;
        } else if (strcmp(argv[i], "--dsn") == 0 && i + 1 < argc) {
            dsn = argv[++i];
        } else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc) {
            const char *f = argv[++i];
            if (strcmp(f, "msgpack") == 0) {
                fmt = 1;
            } else if (strcmp(f, "csv") == 0) {
                fmt = 2;
            } else if (strcmp(f, "json") != 0) {
                return wk_cli_usage_error("pg", "unknown format '%s' (json, msgpack or csv)",
                                          f);
            }
        } else if (strcmp(argv[i], "--rows-as") == 0 && i + 1 < argc) {
            const char *r = argv[++i];
            if (strcmp(r, "arrays") == 0) {
                arrays = true;
            } else if (strcmp(r, "objects") != 0) {
                return wk_cli_usage_error("pg", "unknown --rows-as '%s' (objects or arrays)",
                                          r);
            }
        } else if (strcmp(argv[i], "--null") == 0 && i + 1 < argc) {
            null_token = argv[++i];
        } else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
            char *end = NULL;
            double secs = strtod(argv[++i], &end);
            if (end == argv[i] || *end != '\0' || !(secs > 0) || secs > 86400.0) {
                return wk_cli_usage_error("pg", "--timeout needs seconds, more than 0");
            }
            timeout_ms = (uint32_t)(secs * 1000.0 + 0.5);
            if (timeout_ms == 0) {
                timeout_ms = 1;
            }
        } else if (strcmp(argv[i], "--max-value-bytes") == 0 && i + 1 < argc) {
            char *end = NULL;
            unsigned long long v = strtoull(argv[++i], &end, 10);
            if (end == argv[i] || *end != '\0' || v == 0 || argv[i][0] == '-') {
                return wk_cli_usage_error("pg", "--max-value-bytes needs a positive number");
            }
            max_text = (size_t)v;
        } else if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else if (argv[i][0] == '-' && argv[i][1] == '-') {
            return wk_cli_usage_error("pg", "unknown or incomplete option '%s'", argv[i]);
        } else {
            break;
        }
    }
    if (i >= argc) {
        return wk_cli_usage_error("pg", "missing SQL");
    }
    if (dsn == NULL) {
        dsn = ""; /* libpq takes PGHOST, PGDATABASE, PGSERVICE, ... from the environment */
    }
#ifdef WK_CLI_HAVE_PQ
    return query(dsn, (out_fmt)fmt, arrays, null_token, timeout_ms, max_text, argv[i],
                 argv + i + 1, argc - i - 1);
#else
    (void)fmt;
    (void)arrays;
    (void)null_token;
    (void)timeout_ms;
    (void)max_text;
    return wk_cli_fail("this wirekit was built without libpq (wirekit-pq)");
#endif
}

const wk_cli_command wk_cli_cmd_pg = {"pg", "run PostgreSQL queries, print rows as JSON, MessagePack or CSV",
                                      run};
