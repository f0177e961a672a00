/*
 * `wirekit inspect FILE|-`: an annotated dump of a MessagePack stream, one line per value:
 * byte offset, first byte, format name, and the value (strings quoted and shortened, binary
 * and extension data in hex, timestamps also in UTC), indented by nesting. It reads through
 * the public event reader, so what it accepts is exactly what the library accepts; on bad
 * input it prints what it could, then one error line with the byte offset, and exits 1.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define SHOW_BYTES 48

static void usage(FILE *out)
{
    fprintf(out, "usage: wirekit inspect [--strict-utf8] [--max-depth N] FILE|-\n\n"
                 "Prints an annotated dump of the MessagePack values in FILE (or standard\n"
                 "input): byte offset, first byte, format and value, indented by nesting.\n\n"
                 "  --strict-utf8   reject str values that are not valid UTF-8\n"
                 "  --max-depth N   most containers open at once (default 512)\n\n"
                 "Exit status: 0 valid, 1 unreadable or invalid input (one line on stderr with\n"
                 "the byte offset), 2 usage error.\n");
}

static void print_quoted(const char *s, size_t n)
{
    size_t shown = n > SHOW_BYTES ? SHOW_BYTES : n;
    putchar('"');
    for (size_t i = 0; i < shown; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            printf("\\%c", c);
        } else if (c == '\n') {
            fputs("\\n", stdout);
        } else if (c == '\t') {
            fputs("\\t", stdout);
        } else if (c < 0x20 || c == 0x7f) {
            printf("\\x%02x", c);
        } else {
            putchar(c); /* UTF-8 bytes pass through */
        }
    }
    putchar('"');
    if (shown < n) {
        printf("... (%zu bytes)", n);
    }
}

static void print_hex(const uint8_t *p, size_t n)
{
    size_t shown = n > SHOW_BYTES ? SHOW_BYTES : n;
    for (size_t i = 0; i < shown; i++) {
        printf("%02x", p[i]);
    }
    if (shown < n) {
        printf("... (%zu bytes)", n);
    } else if (n == 0) {
        fputs("(empty)", stdout);
    }
}

static void print_timestamp(int64_t sec, uint32_t nsec)
{
    printf("%" PRId64 ".%09" PRIu32 "s", sec, nsec);
    time_t t = (time_t)sec;
    struct tm tm;
    if ((int64_t)t == sec && gmtime_r(&t, &tm) != NULL && tm.tm_year > -1900 &&
        tm.tm_year < 8100) {
        printf(" (%04d-%02d-%02dT%02d:%02d:%02d.%09" PRIu32 "Z)", tm.tm_year + 1900,
               tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, nsec);
    }
}

/* Per open container: is it a map, and how many elements were seen (to label keys). */
typedef struct level {
    bool is_map;
    uint64_t seen;
} level;

static int inspect(const uint8_t *data, size_t len, const wk_read_opts *opts)
{
    wk_mp_reader r;
    wk_mp_reader_init(&r, data, len, opts);
    uint32_t max_depth = opts->max_depth != 0 ? opts->max_depth : WK_MP_DEFAULT_MAX_DEPTH;
    level *levels = calloc((size_t)max_depth + 1, sizeof(level));
    if (levels == NULL) {
        return wk_cli_fail("out of memory");
    }
    size_t depth = 0;
    size_t values = 0;
    printf("%-10s %-4s %-16s value\n", "offset", "byte", "format");
    for (;;) {
        size_t off = wk_mp_reader_offset(&r);
        wk_event ev;
        wk_status st = wk_mp_reader_next(&r, &ev);
        if (st == WK_ERR_EOF) {
            break;
        }
        if (st != WK_OK) {
            wk_error err;
            wk_mp_reader_error(&r, &err);
            free(levels);
            fflush(stdout);
            return wk_cli_fail_at("invalid MessagePack", &err);
        }
        if (ev.type == WK_EV_END) {
            depth--;
            printf("%-10s %-4s %-16s %*s%s\n", "", "", "", (int)(2 * depth), "",
                   levels[depth + 1].is_map ? "} end of map" : "] end of array");
            if (depth == 0) {
                values++;
            }
            continue;
        }
        const char *role = "";
        if (depth > 0) {
            level *lv = &levels[depth];
            if (lv->is_map) {
                role = (lv->seen & 1) == 0 ? "key " : "value ";
            }
            lv->seen++;
        }
        printf("%-10zu %02x   %-16s %*s%s", off, data[off], wk_mp_format_name(data[off]),
               (int)(2 * depth), "", role);
        switch (ev.type) {
        case WK_EV_NIL: fputs("nil", stdout); break;
        case WK_EV_BOOL: fputs(ev.v.b ? "true" : "false", stdout); break;
        case WK_EV_INT: printf("%" PRId64, ev.v.i); break;
        case WK_EV_UINT: printf("%" PRIu64, ev.v.u); break;
        case WK_EV_FLOAT: printf("%.*g", ev.f32 ? 9 : 17, ev.v.f); break;
        case WK_EV_STR: print_quoted(ev.v.str.ptr, ev.v.str.len); break;
        case WK_EV_BIN:
            fputs("bin ", stdout);
            print_hex((const uint8_t *)ev.v.str.ptr, ev.v.str.len);
            break;
        case WK_EV_EXT:
            printf("ext type %d, ", ev.v.ext.type);
            print_hex(ev.v.ext.ptr, ev.v.ext.len);
            break;
        case WK_EV_TIMESTAMP:
            fputs("timestamp ", stdout);
            print_timestamp(ev.v.ts.sec, ev.v.ts.nsec);
            break;
        case WK_EV_ARRAY:
        case WK_EV_MAP:
            printf(ev.type == WK_EV_MAP ? "{ map of %" PRIu32 " pairs" : "[ array of %" PRIu32
                                                                           " elements",
                   ev.v.count);
            depth++;
            levels[depth].is_map = ev.type == WK_EV_MAP;
            levels[depth].seen = 0;
            break;
        default: break;
        }
        putchar('\n');
        if (depth == 0) {
            values++;
        }
    }
    printf("%zu top-level value%s, %zu bytes\n", values, values == 1 ? "" : "s", len);
    free(levels);
    return WK_EXIT_OK;
}

static int run(int argc, char **argv)
{
    wk_read_opts opts = {0};
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (wk_cli_is_help(argv[i])) {
            usage(stdout);
            return WK_EXIT_OK;
        }
        if (strcmp(argv[i], "--strict-utf8") == 0) {
            opts.flags |= WK_READ_STRICT_UTF8;
        } else if (strcmp(argv[i], "--max-depth") == 0 && i + 1 < argc) {
            char *end = NULL;
            unsigned long v = strtoul(argv[++i], &end, 10);
            if (*end != '\0' || v == 0 || v > 1000000) {
                return wk_cli_usage_error("inspect", "--max-depth wants 1..1000000, not '%s'",
                                          argv[i]);
            }
            opts.max_depth = (uint32_t)v;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            return wk_cli_usage_error("inspect", "unknown option '%s'", argv[i]);
        } else if (path == NULL) {
            path = argv[i];
        } else {
            return wk_cli_usage_error("inspect", "one input only");
        }
    }
    if (path == NULL) {
        return wk_cli_usage_error("inspect", "missing FILE (use - for standard input)");
    }
    uint8_t *data = NULL;
    size_t len = 0;
    if (wk_cli_read_all(path, &data, &len) != 0) {
        return WK_EXIT_FAIL;
    }
    int rc = inspect(data, len, &opts);
    free(data);
    return rc;
}

const wk_cli_command wk_cli_cmd_inspect = {"inspect", "annotated dump of a MessagePack stream",
                                           run};
