/*
 * `wirekit pg query`: runs one SQL statement and prints every row, decoded by wirekit from
 * the binary result format, as one JSON object per line (or one MessagePack map per row).
 *
 * Rows go out as events through the decode plan straight into the JSON or MessagePack
 * writer: numbers keep PostgreSQL's exact text (raw numbers), arrays become nested arrays,
 * json/jsonb their embedded value, everything else PostgreSQL's own text output. Parameters
 * are given as text and typed by the server.
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
            "usage: wirekit pg query --dsn DSN [--format json|msgpack] [--timeout SECONDS]\n"
            "                        SQL [PARAM...]\n\n"
            "Runs SQL on PostgreSQL and prints each row, decoded from the binary result\n"
            "format: one JSON object per line ({\"column\": value}), or with --format msgpack\n"
            "one MessagePack map per row. PARAMs are bound to $1, $2, ... as text (the server\n"
            "infers their types).\n\n"
            "  --dsn DSN       libpq connection string or URI (default: $WK_PG_DSN)\n"
            "  --format FMT    json (default) or msgpack\n"
            "  --timeout SECS  give up after SECS seconds (decimals allowed; default: none):\n"
            "                  the server's statement_timeout, the connect timeout, and a\n"
            "                  client-side deadline that cancels the query even when the\n"
            "                  server does not answer (exit 1, 'query timed out')\n"
            "  --max-value-bytes N  largest text one value (a record) is rendered to before\n"
            "                  it is refused (default 64 MiB)\n\n"
            "Mapping: NULL -> null; bool -> true/false; integers, finite floats and numerics ->\n"
            "numbers with exactly PostgreSQL's digits; json/jsonb -> the embedded value;\n"
            "arrays -> nested arrays; anything else (and NaN/Infinity) -> a string with\n"
            "PostgreSQL's text output (DateStyle=ISO, MDY, IntervalStyle=postgres, TimeZone=UTC).\n");
}

#ifdef WK_CLI_HAVE_PQ

typedef struct out_state {
    bool msgpack;
    wk_buf buf;
    wk_json_writer jw;
    wk_mp_writer mw;
    wk_sink sink;
} out_state;

static int print_rows(wk_pq_conn *conn, PGresult *res, bool msgpack, size_t max_text)
{
    wk_pg_plan *plan = NULL;
    wk_error err = {0};
    if (wk_pq_plan(conn, res, NULL, NULL, &plan, &err) != WK_OK) {
        return wk_cli_fail("cannot decode column %zu: %s", err.offset, err.msg);
    }
    out_state o;
    memset(&o, 0, sizeof o);
    wk_buf_init(&o.buf, NULL, 0);
    wk_json_write_opts jopts = {WK_JSON_WRITE_NEWLINE, 0};
    if (!msgpack) {
        wk_json_writer_init(&o.jw, &o.buf, &jopts);
        wk_json_writer_sink(&o.jw, &o.sink);
    }
    wk_buf scratch;
    wk_buf_init(&scratch, NULL, 0);
    wk_pg_events ev = {&o.sink, msgpack ? 0u : WK_PG_EV_RAW_FLOATS, &scratch, max_text};
    int rc = WK_EXIT_OK;
    int rows = PQntuples(res);
    for (int i = 0; i < rows; i++) {
        if (msgpack) {
            wk_mp_writer_init(&o.mw, &o.buf);
            wk_mp_writer_sink(&o.mw, &o.sink);
        }
        wk_status st = wk_pq_emit_row(plan, res, i, &ev, &err);
        if (st == WK_OK && msgpack) {
            st = wk_mp_writer_finish(&o.mw, &err);
        }
        if (st != WK_OK) {
            rc = wk_cli_fail("row %d: %s (at byte %zu)", i + 1,
                             err.msg != NULL ? err.msg : wk_status_str(st), err.offset);
            break;
        }
        if (o.buf.len >= (1u << 16) || i + 1 == rows) {
            if (fwrite(o.buf.data, 1, o.buf.len, stdout) != o.buf.len) {
                rc = wk_cli_fail("cannot write the output");
                break;
            }
            wk_buf_clear(&o.buf);
        }
    }
    if (!msgpack && rc == WK_EXIT_OK && wk_json_writer_finish(&o.jw, &err) != WK_OK) {
        rc = wk_cli_fail_at("writing JSON", &err);
    }
    wk_buf_free(&o.buf);
    wk_buf_free(&scratch);
    wk_pg_plan_free(plan);
    return rc;
}

static int query(const char *dsn, bool msgpack, uint32_t timeout_ms, size_t max_text,
                 const char *sql, char **params, int nparams)
{
    wk_pq_conn *conn = NULL;
    wk_error err = {0};
    if (wk_pq_connect_timeout(dsn, NULL, timeout_ms, &conn, &err) != WK_OK) {
        int rc = wk_cli_fail("%s: %s", err.msg, conn != NULL ? wk_pq_conn_message(conn) : "");
        wk_pq_conn_free(conn);
        return rc;
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
        p[i].value = &s[i];
        p[i].oid = 0;
    }
    PGresult *res = NULL;
    int rc;
    if (wk_pq_exec(conn, sql, p, (size_t)nparams, &res, &err) != WK_OK) {
        rc = err.code == WK_ERR_IO ? wk_cli_fail("query failed: %s", wk_pq_conn_message(conn))
                                   : wk_cli_fail_at("parameter", &err);
    } else {
        rc = print_rows(conn, res, msgpack, max_text);
    }
    PQclear(res);
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
    bool msgpack = false;
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
                msgpack = true;
            } else if (strcmp(f, "json") != 0) {
                return wk_cli_usage_error("pg", "unknown format '%s' (json or msgpack)", f);
            }
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
        return wk_cli_usage_error("pg", "missing --dsn (or set WK_PG_DSN)");
    }
#ifdef WK_CLI_HAVE_PQ
    return query(dsn, msgpack, timeout_ms, max_text, argv[i], argv + i + 1, argc - i - 1);
#else
    (void)msgpack;
    (void)timeout_ms;
    (void)max_text;
    return wk_cli_fail("this wirekit was built without libpq (wirekit-pq)");
#endif
}

const wk_cli_command wk_cli_cmd_pg = {"pg", "run a PostgreSQL query, print rows as JSON lines",
                                      run};
