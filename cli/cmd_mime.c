/*
 * `wirekit mime`: parses media types (Content-Type values) and prints their serialization, or
 * with --json one object per value (input, output, essence, type, subtype, parameters).
 * JSON is written here with RFC 8259 string escaping: the command depends on the media-type
 * API only. A value's bytes are code points (WHATWG "from bytes"), so bytes above 0x7F appear
 * in JSON as \u0080..\u00FF; with --utf8 the value is UTF-8 text and is copied as such.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: wirekit mime [--strict] [--utf8] [--space] [--json] VALUE...\n\n"
        "Parses each VALUE as a media type (a Content-Type header value) and prints its\n"
        "serialization, one line per value; an invalid value prints an error on stderr.\n\n"
        "  --strict  RFC 9110 grammar: any error rejects (default: WHATWG MIME Sniffing,\n"
        "            which trims whitespace and drops invalid parameters)\n"
        "  --utf8    the values are UTF-8 text (default: bytes, one code point each)\n"
        "  --space   join parameters with \"; \" (default \";\", as WHATWG serializes)\n"
        "  --json    one JSON object per value: {\"input\", \"output\" (null when invalid),\n"
        "            \"essence\", \"type\", \"subtype\", \"parameters\": [[name, value], ...]}\n\n"
        "Exit status: 0 all values valid, 1 some value invalid, 2 usage error.\n");
}

/* Writes s[0..n) as a JSON string. Bytes are code points unless `utf8`, in which case valid
 * UTF-8 is copied and any other byte becomes U+FFFD. */
static void json_string(FILE *out, const char *s, size_t n, bool utf8)
{
    fputc('"', out);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            fputc('\\', out);
            fputc(c, out);
        } else if (c == '\n') {
            fputs("\\n", out);
        } else if (c == '\r') {
            fputs("\\r", out);
        } else if (c == '\t') {
            fputs("\\t", out);
        } else if (c < 0x20 || c == 0x7F) {
            fprintf(out, "\\u%04x", c);
        } else if (c < 0x80) {
            fputc(c, out);
        } else if (!utf8) {
            fprintf(out, "\\u%04x", c);
        } else {
            size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
            if (len > 1 && i + len <= n && wk_utf8_valid(s + i, len, NULL)) {
                fwrite(s + i, 1, len, out);
                i += len - 1;
            } else {
                fputs("\\ufffd", out);
            }
        }
    }
    fputc('"', out);
}

/* A name in lower case, as serialized. */
static void json_lower(FILE *out, const char *s, size_t n)
{
    char buf[256];
    while (n > 0) {
        size_t k = n < sizeof buf ? n : sizeof buf;
        for (size_t i = 0; i < k; i++) {
            buf[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] + 32 : s[i]);
        }
        /* names are tokens: printable ASCII without quotes or backslashes, no escaping */
        fwrite(buf, 1, k, out);
        s += k;
        n -= k;
    }
}

static void print_json(FILE *out, const char *in, const wk_media_type *mt, const char *output,
                       size_t output_len, bool utf8)
{
    fputs("{\"input\":", out);
    json_string(out, in, strlen(in), utf8);
    fputs(",\"output\":", out);
    if (mt == NULL) {
        fputs("null,\"essence\":null,\"type\":null,\"subtype\":null,\"parameters\":[]}\n", out);
        return;
    }
    json_string(out, output, output_len, utf8);
    fputs(",\"essence\":\"", out);
    json_lower(out, wk_mt_essence(mt).ptr, wk_mt_essence(mt).len);
    fputs("\",\"type\":\"", out);
    json_lower(out, wk_mt_type(mt).ptr, wk_mt_type(mt).len);
    fputs("\",\"subtype\":\"", out);
    json_lower(out, wk_mt_subtype(mt).ptr, wk_mt_subtype(mt).len);
    fputs("\",\"parameters\":[", out);
    for (unsigned k = 0; k < mt->nparams; k++) {
        const wk_mt_param *p = &mt->params[k];
        fputs(k == 0 ? "[\"" : ",[\"", out);
        json_lower(out, p->name.ptr, p->name.len);
        fputs("\",", out);
        size_t n = wk_mt_param_value(p, NULL, 0);
        char *plain = malloc(n + 1);
        if (plain != NULL) {
            wk_mt_param_value(p, plain, n);
            json_string(out, plain, n, utf8);
            free(plain);
        } else {
            fputs("null", out);
        }
        fputc(']', out);
    }
    fputs("]}\n", out);
}

static int run(int argc, char **argv)
{
    unsigned flags = 0, style = WK_MT_STYLE_WHATWG;
    bool json = false;
    int first = argc;
    for (int i = 1; i < argc; i++) {
        if (wk_cli_is_help(argv[i])) {
            usage(stdout);
            return WK_EXIT_OK;
        } else if (strcmp(argv[i], "--strict") == 0) {
            flags |= WK_MT_STRICT;
        } else if (strcmp(argv[i], "--utf8") == 0) {
            flags |= WK_MT_UTF8;
        } else if (strcmp(argv[i], "--space") == 0) {
            style = WK_MT_STYLE_SPACE;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--") == 0) {
            first = i + 1;
            break;
        } else if (argv[i][0] == '-' && argv[i][1] == '-') {
            return wk_cli_usage_error("mime", "unknown option '%s'", argv[i]);
        } else {
            first = i;
            break;
        }
    }
    if (first >= argc) {
        return wk_cli_usage_error("mime", "no VALUE given");
    }
    int status = WK_EXIT_OK;
    for (int i = first; i < argc; i++) {
        const char *in = argv[i];
        wk_media_type mt = WK_MT_INIT;
        wk_error err = {0};
        wk_slice r = {NULL, 0};
        wk_buf scratch;
        wk_buf_init(&scratch, NULL, 0);
        wk_status st = wk_mt_parse(in, strlen(in), flags, &mt, &err);
        if (st == WK_OK) {
            st = wk_mt_render(&mt, style, &scratch, &r, &err);
        }
        if (st != WK_OK) {
            status = WK_EXIT_FAIL;
            char what[160];
            snprintf(what, sizeof what, "invalid media type '%.120s'", in);
            wk_cli_fail_at(what, &err);
            if (json) {
                print_json(stdout, in, NULL, NULL, 0, (flags & WK_MT_UTF8) != 0);
            }
            wk_buf_free(&scratch);
            continue;
        }
        if (json) {
            print_json(stdout, in, &mt, r.ptr, r.len, (flags & WK_MT_UTF8) != 0);
        } else {
            fwrite(r.ptr, 1, r.len, stdout);
            fputc('\n', stdout);
        }
        wk_buf_free(&scratch);
    }
    return status;
}

const wk_cli_command wk_cli_cmd_mime = {"mime", "parse and serialize media types (Content-Type)",
                                        run};
