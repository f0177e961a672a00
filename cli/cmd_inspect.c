/*
 * `wirekit inspect [FILE|-]`: an annotated dump of a MessagePack stream, one line per value:
 * byte offset, first byte, format name, and the value (strings quoted and shortened, binary
 * and extension data in hex, timestamps also in UTC), indented by nesting. The input
 * (standard input when no FILE is given) is read a chunk at a time through the incremental
 * unpacker, and each top-level value is printed as soon as it is complete, through the
 * public event reader, so what it accepts is exactly what the library accepts and memory is
 * bounded by the largest value. On bad input it prints the values before the bad one, then
 * one error line with the byte offset, and exits 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define SHOW_BYTES 48

/* Deepest level shown by indentation; deeper lines carry their depth as a number instead, so
 * a line is at most a constant longer than its value and the output stays proportional to
 * the input (an indent per level made it grow with the depth squared). */
#define INDENT_LEVELS 32u

static void print_indent(size_t depth)
{
    if (depth <= INDENT_LEVELS) {
        printf("%*s", (int)(2 * depth), "");
    } else {
        printf("%*s(depth %zu) ", (int)(2 * INDENT_LEVELS), "", depth);
    }
}

static void usage(FILE *out)
{
    fprintf(out, "usage: wirekit inspect [--strict-utf8] [--max-depth=N] [FILE|-]\n\n"
                 "Prints an annotated dump of the MessagePack values in FILE (or standard\n"
                 "input): byte offset, first byte, format and value, indented by nesting\n"
                 "(up to 32 levels; deeper lines show '(depth N)' instead, so the output stays\n"
                 "within a constant factor of the input whatever the depth). Each value is\n"
                 "printed as soon as it has been read.\n\n"
                 "  --strict-utf8      reject str values that are not valid UTF-8\n"
                 "  --max-depth=N      most containers open at once (default 512)\n"
                 "  --max-value=BYTES  largest single value (default 256 MiB; K, M, G suffixes)\n"
                 "  --progress, --no-progress   as for wirekit convert (by default no progress\n"
                 "                     line when standard output is a terminal)\n\n"
                 "Exit status: 0 valid, 1 unreadable or invalid input (a line on stderr with\n"
                 "the input's name and the byte offset) or output that cannot be written,\n"
                 "2 usage error.\n");
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

/* Prints the value data[0..len) (whole and valid: the unpacker checked it), which starts at
 * stream offset `base`. */
static int inspect(const uint8_t *data, size_t len, uint64_t base, const wk_read_opts *opts,
                   level *levels)
{
    wk_mp_reader r;
    wk_mp_reader_init(&r, data, len, opts);
    size_t depth = 0;
    for (;;) {
        size_t at = wk_mp_reader_offset(&r);
        uint64_t off = base + at;
        wk_event ev;
        wk_status st = wk_mp_reader_next(&r, &ev);
        if (st == WK_ERR_EOF) {
            break;
        }
        if (st != WK_OK) {
            wk_error err;
            wk_mp_reader_error(&r, &err);
            err.offset += (size_t)base;
            wk_mp_reader_free(&r);
            fflush(stdout);
            return wk_cli_fail_at("invalid MessagePack", &err); /* the unpacker checked it */
        }
        if (ev.type == WK_EV_END) {
            depth--;
            printf("%-10s %-4s %-16s ", "", "", "");
            print_indent(depth);
            printf("%s\n", levels[depth + 1].is_map ? "} end of map" : "] end of array");
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
        printf("%-10" PRIu64 " %02x   %-16s ", off, data[at], wk_mp_format_name(data[at]));
        print_indent(depth);
        fputs(role, stdout);
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
            printf("%s of %" PRIu32 " %s", ev.type == WK_EV_MAP ? "{ map" : "[ array",
                   ev.v.count,
                   ev.type == WK_EV_MAP ? (ev.v.count == 1 ? "pair" : "pairs")
                                        : (ev.v.count == 1 ? "element" : "elements"));
            depth++;
            levels[depth].is_map = ev.type == WK_EV_MAP;
            levels[depth].seen = 0;
            break;
        default: break;
        }
        putchar('\n');
    }
    wk_mp_reader_free(&r);
    return WK_EXIT_OK;
}

static int run(int argc, char **argv)
{
    enum { O_STRICT = 1, O_MAX_DEPTH, O_MAX_VALUE, O_PROGRESS, O_NO_PROGRESS };
    static const wk_cli_optdef defs[] = {
        {"--strict-utf8", 0, false, O_STRICT},
        {"--max-depth", 0, true, O_MAX_DEPTH},
        {"--max-value", 0, true, O_MAX_VALUE},
        {"--progress", 0, false, O_PROGRESS},
        {"--no-progress", 0, false, O_NO_PROGRESS},
        {NULL, 0, false, 0},
    };
    wk_read_opts opts = {0};
    size_t max_value = WK_CLI_DEFAULT_MAX_VALUE;
    int progress = WK_CLI_PROGRESS_AUTO;
    wk_cli_args args;
    wk_cli_args_init(&args, "inspect", argc, argv, 1, defs);
    int c;
    const char *optarg_;
    while ((c = wk_cli_next(&args, &optarg_)) != WK_CLI_DONE) {
        char *end = NULL;
        unsigned long long v;
        switch (c) {
        case WK_CLI_HELP: usage(stdout); return WK_EXIT_OK;
        case WK_CLI_BAD: return WK_EXIT_USAGE;
        case O_STRICT: opts.flags |= WK_READ_STRICT_UTF8; break;
        case O_MAX_DEPTH:
            v = strtoull(optarg_, &end, 10);
            if (*end != '\0' || v == 0 || v > 1000000 || optarg_[0] == '-') {
                return wk_cli_usage_error("inspect", "--max-depth wants 1..1000000, not '%s'",
                                          optarg_);
            }
            opts.max_depth = (uint32_t)v;
            break;
        case O_MAX_VALUE:
            max_value = wk_cli_parse_size(optarg_);
            if (max_value == 0) {
                return wk_cli_usage_error("inspect", "--max-value wants a size, not '%s'",
                                          optarg_);
            }
            break;
        case O_PROGRESS: progress = 1; break;
        case O_NO_PROGRESS: progress = 0; break;
        default: return wk_cli_usage_error("inspect", "unexpected option");
        }
    }
    if (args.nops > 1) {
        return wk_cli_usage_error("inspect", "one input only");
    }
    const char *path = args.nops == 1 ? argv[args.first] : NULL;
    wk_cli_input in;
    if (wk_cli_input_open(&in, path, wk_cli_progress_to_stdout(progress)) != 0) {
        return WK_EXIT_FAIL;
    }
    uint32_t max_depth = opts.max_depth != 0 ? opts.max_depth : WK_MP_DEFAULT_MAX_DEPTH;
    level *levels = calloc((size_t)max_depth + 1, sizeof(level));
    if (levels == NULL) {
        wk_cli_input_close(&in);
        return wk_cli_fail("out of memory");
    }
    const wk_format *fmt = wk_format_find("msgpack"); /* the dump reads MessagePack bytes */
    wk_unpacker u;
    wk_unpacker_init(&u, fmt, &opts, max_value);
    printf("%-10s %-4s %-16s value\n", "offset", "byte", "format");
    size_t values = 0;
    int rc = WK_EXIT_OK;
    for (;;) {
        const uint8_t *d;
        size_t n;
        uint64_t off;
        wk_status st = wk_unpacker_next(&u, &d, &n, &off);
        if (st == WK_OK) {
            rc = inspect(d, n, off, &opts, levels);
            if (rc != WK_EXIT_OK) {
                break;
            }
            values++;
            continue;
        }
        if (st == WK_ERR_AGAIN) {
            if (fflush(stdout) != 0) { /* this value's lines out before a read that may wait */
                rc = wk_cli_fail("cannot write standard output: %s", strerror(errno));
                break;
            }
            if (!wk_cli_input_feed(&in, &u)) {
                rc = WK_EXIT_FAIL;
                break;
            }
            continue;
        }
        if (st == WK_ERR_EOF) {
            printf("%zu top-level value%s, %" PRIu64 " bytes\n", values, values == 1 ? "" : "s",
                   wk_unpacker_offset(&u));
            break;
        }
        wk_error err;
        uint64_t line = 0, col = 0;
        wk_unpacker_error(&u, &err, &line, &col);
        fflush(stdout);
        wk_cli_input_close(&in);
        in.buf = NULL;
        char what[64];
        snprintf(what, sizeof what, "invalid %s", fmt->title);
        rc = wk_cli_fail_in(in.name, line, col, what, &err, max_value);
        break;
    }
    if (in.buf != NULL) {
        wk_cli_input_close(&in);
    }
    wk_unpacker_free(&u);
    free(levels);
    return rc;
}

const wk_cli_command wk_cli_cmd_inspect = {"inspect", "annotated dump of a MessagePack stream",
                                           run};
