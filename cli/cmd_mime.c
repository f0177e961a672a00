/*
 * `wirekit mime`: parses media types (Content-Type values) and prints their serialization, or
 * with --json one object per value (input, output, essence, type, subtype, parameters).
 * JSON is written here with RFC 8259 string escaping: the command depends on the media-type
 * API only. A value's bytes are code points (WHATWG "from bytes"), so bytes above 0x7F appear
 * in JSON as \u0080..\u00FF; with --utf8 the value is UTF-8 text and is copied as such.
 * `wirekit mime negotiate ACCEPT OFFER...` chooses among offers by an Accept value
 * (wk_mt_negotiate_header) and prints the chosen one as it was given.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: wirekit mime [--strict] [--utf8] [--space] [--json] VALUE...\n"
        "       wirekit mime negotiate [--utf8] ACCEPT OFFER...\n\n"
        "Parses each VALUE as a media type (a Content-Type header value) and prints its\n"
        "serialization, one line per value; an invalid value prints an error on stderr.\n"
        "A VALUE of '-' reads values from standard input, one a line.\n\n"
        "  --strict  RFC 9110 grammar: any error rejects (default: WHATWG MIME Sniffing,\n"
        "            which trims whitespace and drops invalid parameters)\n"
        "  --utf8    the values are UTF-8 text (default: bytes, one code point each)\n"
        "  --space   join parameters with \"; \" (default \";\", as WHATWG serializes)\n"
        "  --json    one JSON object per value: {\"input\", \"output\" (null when invalid),\n"
        "            \"essence\", \"type\", \"subtype\", \"parameters\": [[name, value], ...]}\n\n"
        "negotiate: chooses among the OFFERs (media types, the server's preferred first) the\n"
        "one an Accept header value ACCEPT prefers (RFC 9110 section 12.5.1, ties broken as\n"
        "npm negotiator does) and prints it as given; an ACCEPT of '' accepts nothing.\n\n"
        "Exit status: 0 all values valid (negotiate: an offer chosen), 1 some value invalid\n"
        "(negotiate: no offer acceptable, or an invalid ACCEPT or OFFER), 2 usage error.\n");
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

static void print_json(FILE *out, const char *in, size_t in_len, const wk_media_type *mt,
                       const char *output, size_t output_len, bool utf8)
{
    fputs("{\"input\":", out);
    json_string(out, in, in_len, utf8);
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

typedef struct mime_opts {
    unsigned flags, style;
    bool json;
} mime_opts;

/* Parses and prints one value; returns WK_EXIT_OK or WK_EXIT_FAIL (an invalid value). */
static int one_value(const mime_opts *o, const char *in, size_t len)
{
    wk_media_type mt = WK_MT_INIT;
    wk_error err = {0};
    wk_slice r = {NULL, 0};
    wk_buf scratch;
    wk_buf_init(&scratch, NULL, 0);
    wk_status st = wk_mt_parse(in, len, o->flags, &mt, &err);
    if (st == WK_OK) {
        st = wk_mt_render(&mt, o->style, &scratch, &r, &err);
    }
    bool utf8 = (o->flags & WK_MT_UTF8) != 0;
    if (st != WK_OK) {
        char what[160];
        snprintf(what, sizeof what, "invalid media type '%.*s'", len > 120 ? 120 : (int)len,
                 in);
        wk_cli_fail_at(what, &err);
        if (o->json) {
            print_json(stdout, in, len, NULL, NULL, 0, utf8);
        }
        wk_buf_free(&scratch);
        return WK_EXIT_FAIL;
    }
    if (o->json) {
        print_json(stdout, in, len, &mt, r.ptr, r.len, utf8);
    } else {
        fwrite(r.ptr, 1, r.len, stdout);
        fputc('\n', stdout);
    }
    wk_buf_free(&scratch);
    return WK_EXIT_OK;
}

/* The values of standard input ("-"), one a line (a final CR of a line is dropped). */
static int stdin_values(const mime_opts *o)
{
    uint8_t *data = NULL;
    size_t len = 0;
    if (wk_cli_read_all("-", &data, &len) != 0) {
        return WK_EXIT_FAIL;
    }
    int status = WK_EXIT_OK;
    for (size_t at = 0; at < len;) {
        const uint8_t *nl = memchr(data + at, '\n', len - at);
        size_t end = nl != NULL ? (size_t)(nl - data) : len;
        size_t n = end - at;
        if (n > 0 && data[at + n - 1] == '\r') {
            n--;
        }
        if (one_value(o, (const char *)data + at, n) != WK_EXIT_OK) {
            status = WK_EXIT_FAIL;
        }
        at = end + 1;
    }
    free(data);
    return status;
}


/* `mime negotiate [--utf8] ACCEPT OFFER...`: prints the chosen offer as given; exit 1 when
 * none is acceptable (a server's 406) or a value is invalid. */
static int negotiate(int argc, char **argv)
{
    enum { N_UTF8 = 1 };
    static const wk_cli_optdef defs[] = {
        {"--utf8", 0, false, N_UTF8},
        {NULL, 0, false, 0},
    };
    unsigned flags = 0;
    wk_cli_args args;
    wk_cli_args_init(&args, "mime", argc, argv, 1, defs);
    int id;
    const char *v;
    while ((id = wk_cli_next(&args, &v)) != WK_CLI_DONE) {
        switch (id) {
        case WK_CLI_HELP: usage(stdout); return WK_EXIT_OK;
        case WK_CLI_BAD: return WK_EXIT_USAGE;
        case N_UTF8: flags |= WK_MT_UTF8; break;
        default: return wk_cli_usage_error("mime", "unexpected option");
        }
    }
    if (args.nops < 2) {
        return wk_cli_usage_error("mime", "negotiate needs an ACCEPT value and an OFFER");
    }
    const char *accept = argv[args.first];
    size_t n = (size_t)args.nops - 1;
    wk_media_type *offers = calloc(n, sizeof *offers);
    if (offers == NULL) {
        return wk_cli_fail("out of memory");
    }
    wk_error err = {0};
    int status = WK_EXIT_OK;
    for (size_t i = 0; i < n && status == WK_EXIT_OK; i++) {
        const char *o = argv[args.first + 1 + (int)i];
        if (wk_mt_parse(o, strlen(o), flags, &offers[i], &err) != WK_OK) {
            char what[160];
            snprintf(what, sizeof what, "invalid offer '%.120s'", o);
            status = wk_cli_fail_at(what, &err);
        }
    }
    if (status == WK_EXIT_OK) {
        size_t chosen;
        wk_status st =
            wk_mt_negotiate_header(accept, strlen(accept), flags, offers, n, &chosen, &err);
        if (st == WK_OK) {
            puts(argv[args.first + 1 + (int)chosen]);
        } else if (st == WK_ERR_NOT_FOUND) {
            status = wk_cli_fail("no offer is acceptable (406)");
        } else {
            status = wk_cli_fail_at("invalid Accept value", &err);
        }
    }
    free(offers);
    return status;
}

static int run(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "negotiate") == 0) {
        return negotiate(argc - 1, argv + 1);
    }
    enum { M_STRICT = 1, M_UTF8, M_SPACE, M_JSON };
    static const wk_cli_optdef defs[] = {
        {"--strict", 0, false, M_STRICT},
        {"--utf8", 0, false, M_UTF8},
        {"--space", 0, false, M_SPACE},
        {"--json", 0, false, M_JSON},
        {NULL, 0, false, 0},
    };
    mime_opts o = {0, WK_MT_STYLE_WHATWG, false};
    wk_cli_args args;
    wk_cli_args_init(&args, "mime", argc, argv, 1, defs);
    int id;
    const char *v;
    while ((id = wk_cli_next(&args, &v)) != WK_CLI_DONE) {
        switch (id) {
        case WK_CLI_HELP: usage(stdout); return WK_EXIT_OK;
        case WK_CLI_BAD: return WK_EXIT_USAGE;
        case M_STRICT: o.flags |= WK_MT_STRICT; break;
        case M_UTF8: o.flags |= WK_MT_UTF8; break;
        case M_SPACE: o.style = WK_MT_STYLE_SPACE; break;
        case M_JSON: o.json = true; break;
        default: return wk_cli_usage_error("mime", "unexpected option");
        }
    }
    if (args.nops == 0) {
        return wk_cli_usage_error("mime", "no VALUE given ('-' reads them from standard input)");
    }
    int status = WK_EXIT_OK;
    bool read_stdin = false;
    for (int i = 0; i < args.nops; i++) {
        const char *in = argv[args.first + i];
        int rc;
        if (strcmp(in, "-") == 0) {
            if (read_stdin) {
                continue; /* standard input is read once */
            }
            read_stdin = true;
            rc = stdin_values(&o);
        } else {
            rc = one_value(&o, in, strlen(in));
        }
        if (rc != WK_EXIT_OK) {
            status = WK_EXIT_FAIL;
        }
    }
    return status;
}

const wk_cli_command wk_cli_cmd_mime = {"mime", "parse and serialize media types (Content-Type)",
                                        run};
