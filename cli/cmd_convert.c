/*
 * `wirekit convert`: JSON <-> MessagePack (and JSON or MessagePack reformatted), streaming
 * through events with no tree in between: the input format's reader is wired straight to the
 * output format's writer. JSON input may hold several whitespace-separated values (JSON
 * Lines); each becomes one MessagePack value, and each MessagePack value becomes one line
 * of JSON. The whole input is read first (files and pipes alike) and the output written at
 * the end, so memory is the input plus the output, whatever the nesting.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int usage(void)
{
    printf("usage: wirekit convert --from FORMAT --to FORMAT [--pretty] [IN [OUT]]\n\n"
           "Converts between JSON and MessagePack without building a tree.\n"
           "FORMAT is json or msgpack. IN and OUT default to standard input and output\n"
           "('-' means them too).\n\n"
           "  --from FORMAT  input format\n"
           "  --to FORMAT    output format\n"
           "  --pretty       indent JSON output (2 spaces)\n\n"
           "JSON input may hold several values separated by whitespace (JSON Lines): each\n"
           "becomes one MessagePack value. MessagePack input may hold several values: each\n"
           "becomes one line of JSON. Integers that fit 64 bits stay integers (shortest\n"
           "MessagePack form), other numbers are float64 and print as the shortest text that\n"
           "reads back. MessagePack values JSON lacks: bin -> base64 string, ext ->\n"
           "{\"ext\":TYPE,\"data\":BASE64}, timestamp -> RFC 3339 string, non-string map keys\n"
           "-> the string of their JSON text (docs/formats.md).\n");
    return WK_EXIT_OK;
}

enum { FMT_NONE, FMT_JSON, FMT_MSGPACK };

static int parse_format(const char *s)
{
    if (strcmp(s, "json") == 0) {
        return FMT_JSON;
    }
    if (strcmp(s, "msgpack") == 0 || strcmp(s, "mp") == 0) {
        return FMT_MSGPACK;
    }
    return FMT_NONE;
}

static int run(int argc, char **argv)
{
    int from = FMT_NONE, to = FMT_NONE;
    bool pretty = false;
    const char *paths[2] = {NULL, NULL};
    int npaths = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (wk_cli_is_help(a)) {
            return usage();
        }
        if (strcmp(a, "--from") == 0 || strcmp(a, "--to") == 0) {
            if (i + 1 >= argc) {
                return wk_cli_usage_error("convert", "%s needs a format (json or msgpack)", a);
            }
            int f = parse_format(argv[++i]);
            if (f == FMT_NONE) {
                return wk_cli_usage_error("convert", "unknown format '%s' (json or msgpack)",
                                          argv[i]);
            }
            if (a[2] == 'f') {
                from = f;
            } else {
                to = f;
            }
        } else if (strcmp(a, "--pretty") == 0) {
            pretty = true;
        } else if (a[0] == '-' && a[1] != '\0') {
            return wk_cli_usage_error("convert", "unknown option '%s'", a);
        } else if (npaths < 2) {
            paths[npaths++] = a;
        } else {
            return wk_cli_usage_error("convert", "too many arguments");
        }
    }
    if (from == FMT_NONE || to == FMT_NONE) {
        return wk_cli_usage_error("convert", "--from and --to are required");
    }
    if (pretty && to != FMT_JSON) {
        return wk_cli_usage_error("convert", "--pretty applies to JSON output only");
    }

    uint8_t *in;
    size_t len;
    if (wk_cli_read_all(paths[0], &in, &len) != 0) {
        return WK_EXIT_FAIL;
    }
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    wk_error err = {WK_OK, 0, NULL};
    wk_status st;
    const char *what;
    wk_json_write_opts wo = {WK_JSON_WRITE_NEWLINE | (pretty ? WK_JSON_WRITE_PRETTY : 0u), 0};
    wk_read_opts ro = {.flags = WK_JSON_READ_MULTI, .max_depth = 0};
    if (from == FMT_JSON && to == FMT_MSGPACK) {
        what = "cannot convert JSON to MessagePack";
        st = wk_json_to_msgpack(in, len, &ro, &out, &err);
    } else if (from == FMT_MSGPACK && to == FMT_JSON) {
        what = "cannot convert MessagePack to JSON";
        st = wk_json_from_msgpack(in, len, &wo, 0, &out, &err);
    } else if (from == FMT_JSON) {
        /* JSON reformatted: reader straight into the writer. */
        what = "cannot reformat JSON";
        wk_json_reader r;
        wk_json_reader_init(&r, in, len, &ro, NULL);
        wk_json_writer w;
        wk_json_writer_init(&w, &out, &wo);
        wk_source src;
        wk_sink sink;
        wk_json_reader_source(&r, &src);
        wk_json_writer_sink(&w, &sink);
        st = wk_transcode(&src, &sink, &err);
        if (st == WK_OK) {
            st = wk_json_writer_finish(&w, &err);
        }
        wk_json_reader_free(&r);
    } else {
        /* MessagePack re-encoded: validated, shortest forms. */
        what = "cannot re-encode MessagePack";
        wk_mp_reader r;
        wk_mp_reader_init(&r, in, len, NULL);
        wk_mp_writer w;
        wk_mp_writer_init(&w, &out);
        wk_source src;
        wk_sink sink;
        wk_mp_reader_source(&r, &src);
        wk_mp_writer_sink(&w, &sink);
        st = wk_transcode(&src, &sink, &err);
        wk_error e2;
        wk_status fin = wk_mp_writer_finish(&w, &e2);
        if (st == WK_OK && fin != WK_OK) {
            st = fin;
            err = e2;
        }
        wk_mp_reader_free(&r);
    }
    free(in);
    if (st != WK_OK) {
        wk_buf_free(&out);
        return wk_cli_fail_at(what, &err);
    }
    FILE *f = wk_cli_open_out(paths[1]);
    if (f == NULL) {
        wk_buf_free(&out);
        return WK_EXIT_FAIL;
    }
    size_t wrote = out.len == 0 ? 0 : fwrite(out.data, 1, out.len, f);
    int bad = wrote != out.len || fflush(f) != 0;
    if (f != stdout) {
        bad |= fclose(f) != 0;
    }
    wk_buf_free(&out);
    if (bad) {
        return wk_cli_fail("cannot write %s", paths[1] != NULL ? paths[1] : "standard output");
    }
    return WK_EXIT_OK;
}

const wk_cli_command wk_cli_cmd_convert = {"convert", "convert between JSON and MessagePack",
                                           run};
