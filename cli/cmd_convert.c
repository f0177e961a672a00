/*
 * `wirekit convert`: JSON <-> MessagePack (and JSON or MessagePack reformatted), streaming.
 * The formats are rows of the format table (wirekit/format.h), chosen once by name; the
 * conversion is a wk_converter, the path the one-shot calls (wk_convert, wk_json_to_msgpack)
 * take too. Input is read a chunk at a time and fed to it; each complete top-level value is
 * converted whole into the output buffer, and the output is flushed before the next read that
 * would block, so a pipe's values come out as they come in. Memory is bounded by the largest
 * single value (at most --max-value; JSON to MessagePack: its bytes and its output, a tree
 * only for a value of up to 1 MiB), never by the total size. JSON input may hold several
 * whitespace-separated values (JSON Lines); each becomes one MessagePack value, and each
 * MessagePack value becomes one line of JSON. A bad value, or one the output format cannot
 * hold, leaves no half of it in the output and is named at its input offset.
 * --check writes nothing: each value is taken out raw, which the unpacker validates without
 * building it (wk_json_validate, wk_mp_check), and the values are counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static int usage(void)
{
    printf("usage: wirekit convert --from=FORMAT --to=FORMAT [OPTIONS] [IN [OUT]]\n"
           "       wirekit convert --from=FORMAT --check [OPTIONS] [IN]\n\n"
           "Converts between JSON and MessagePack, streaming: each value is written as soon\n"
           "as it has been read, and memory is bounded by the largest single value.\n"
           "FORMAT is json or msgpack. IN and OUT default to standard input and output\n"
           "('-' means them too).\n\n"
           "  --from=FORMAT      input format\n"
           "  --to=FORMAT        output format\n"
           "  --check            only check the input (every check of a conversion, nothing\n"
           "                     built or written) and print how many values it holds\n"
           "  --pretty           indent JSON output (2 spaces)\n"
           "  --max-value=BYTES  largest value held in memory (default 256 MiB; K, M, G\n"
           "                     suffixes); JSON to JSON holds one string or number at a\n"
           "                     time, JSON to MessagePack one value's bytes and its output\n"
           "  --progress         show a progress line on stderr (bytes, MB/s, percent, ETA)\n"
           "  --no-progress      never show it (by default it is shown for regular files\n"
           "                     larger than 64 MB when stderr is a terminal and the output\n"
           "                     does not go to one)\n\n"
           "JSON input may hold several values separated by whitespace (JSON Lines): each\n"
           "becomes one MessagePack value. MessagePack input may hold several values: each\n"
           "becomes one line of JSON. Integers that fit 64 bits stay integers (shortest\n"
           "MessagePack form), other numbers are float64 and print as the shortest text that\n"
           "reads back. MessagePack values JSON lacks: bin -> base64 string, ext ->\n"
           "{\"ext\":TYPE,\"data\":BASE64}, timestamp -> RFC 3339 string, non-string map keys\n"
           "-> the string of their JSON text (docs/formats.md). Errors name the input, the\n"
           "line:column (JSON) and the byte offset. A value is written whole or not at all:\n"
           "one JSON cannot hold (a string that is not UTF-8, a container as a map key, NaN)\n"
           "is an input error.\n\n"
           "Exit status: 0 success (--check: every value valid), 1 unreadable or invalid\n"
           "input or output that cannot be written, 2 usage error.\n");
    return WK_EXIT_OK;
}

/* "json or msgpack": the canonical names of the format table's rows, for messages. */
static void format_names(char *buf, size_t cap)
{
    size_t count = 0;
    const wk_format *const *rows = wk_format_list(&count);
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < count && used < cap; i++) {
        const char *sep = i == 0 ? "" : i + 1 == count ? " or " : ", ";
        int n = snprintf(buf + used, cap - used, "%s%s", sep, rows[i]->name);
        if (n < 0) {
            break;
        }
        used += (size_t)n;
    }
}

typedef struct job {
    const wk_format *from, *to; /* rows of the format table; `to` NULL with --check */
    bool pretty;
    bool check;
    size_t max_value;
    wk_cli_input in;
    wk_out out;
    const char *out_name;
} job;

/* Reports bad input. The converter has cut the output back to the end of the last complete
 * value (no half value in the output): what is left goes out first. */
static int fail_input(job *j, const wk_error *e, uint64_t line, uint64_t col, const char *what)
{
    wk_out_flush(&j->out);
    wk_cli_input_close(&j->in);
    return wk_cli_fail_in(j->in.name, line, col, what, e, j->max_value);
}

/* Sends the output of the values complete so far before a read that may wait. The output of
 * a value still open (JSON input writes a value's events as they come) stays in the buffer,
 * so that bad input leaves no half value in the output, unless it has grown past
 * WK_OUT_FLUSH_AT: a large value streams. The converter is told what left the buffer. */
static wk_status flush_done(job *j, wk_converter *c)
{
    wk_buf *b = wk_out_buf(&j->out);
    size_t done = wk_converter_done(c);
    size_t open = b->len - done;
    if (open > WK_OUT_FLUSH_AT) {
        size_t all = b->len;
        wk_status st = wk_out_flush(&j->out);
        wk_converter_drained(c, all);
        return st;
    }
    b->len = done;
    wk_status st = wk_out_flush(&j->out);
    if (open > 0) { /* the writers keep no cursor into the buffer between calls: it may move */
        memmove(b->data, b->data + done, open);
    }
    b->len = open;
    wk_converter_drained(c, done);
    return st;
}

static int write_failed(job *j, const wk_error *e)
{
    wk_cli_input_close(&j->in);
    if (e->code == WK_ERR_IO) {
        return wk_cli_fail("cannot write %s: %s", j->out_name, strerror(errno));
    }
    return wk_cli_fail("cannot write %s: %s (at output byte %zu)", j->out_name,
                       e->msg != NULL ? e->msg : wk_status_str(e->code), e->offset);
}

/* "cannot convert JSON to MessagePack", "cannot reformat JSON", "cannot re-encode
 * MessagePack": the first words of an input error. */
static void what_of(const job *j, char *buf, size_t cap)
{
    if (j->from == j->to) {
        snprintf(buf, cap, "cannot %s %s",
                 (j->from->flags & WK_FORMAT_TEXT) != 0 ? "reformat" : "re-encode",
                 j->from->title);
    } else {
        snprintf(buf, cap, "cannot convert %s to %s", j->from->title, j->to->title);
    }
}

/* --check: each value taken out raw, validated by the unpacker (wk_json_validate for JSON,
 * wk_mp_check for MessagePack) and counted; nothing is built or written. */
static int check(job *j)
{
    wk_read_opts ro = {.flags = j->from->multi_flag};
    wk_unpacker u;
    wk_unpacker_init(&u, j->from, &ro, j->max_value);
    uint64_t values = 0;
    int rc = WK_EXIT_OK;
    for (;;) {
        const uint8_t *d;
        size_t n;
        wk_status st = wk_unpacker_next(&u, &d, &n, NULL);
        if (st == WK_OK) {
            values++;
            continue;
        }
        if (st == WK_ERR_AGAIN) {
            if (!wk_cli_input_feed(&j->in, &u)) {
                rc = WK_EXIT_FAIL;
                break;
            }
            continue;
        }
        if (st == WK_ERR_EOF) {
            printf("%s: %" PRIu64 " %s value%s, valid\n", j->in.name, values, j->from->title,
                   values == 1 ? "" : "s");
            break;
        }
        wk_error e;
        uint64_t line = 0, col = 0;
        wk_unpacker_error(&u, &e, &line, &col);
        char what[64];
        snprintf(what, sizeof what, "invalid %s", j->from->title);
        rc = fail_input(j, &e, line, col, what);
        break;
    }
    wk_unpacker_free(&u);
    return rc;
}

/* The conversion, value by value through wk_converter (the path of wk_convert and the
 * one-shot bridges): each value's output whole in the buffer, committed between values. */
static int convert(job *j)
{
    wk_read_opts ro = {.flags = j->from->multi_flag};
    wk_json_write_opts wo = {WK_JSON_WRITE_NEWLINE | (j->pretty ? WK_JSON_WRITE_PRETTY : 0u), 0};
    wk_converter c;
    wk_converter_init(&c, j->from, j->to, &ro, &wo, j->max_value, wk_out_buf(&j->out));
    int rc = WK_EXIT_OK;
    for (;;) {
        wk_status st = wk_converter_next(&c);
        wk_error we = {WK_OK, 0, NULL};
        if (st == WK_OK) {
            size_t before = wk_out_buf(&j->out)->len;
            if (wk_out_commit(&j->out) != WK_OK) {
                wk_out_error(&j->out, &we);
                rc = write_failed(j, &we);
                break;
            }
            if (wk_out_buf(&j->out)->len != before) { /* sent on */
                wk_converter_drained(&c, before - wk_out_buf(&j->out)->len);
            }
            continue;
        }
        if (st == WK_ERR_AGAIN) {
            /* from JSON, WK_ERR_AGAIN may come inside a value (its events so far are
             * written): flush_done keeps that part back unless it is large */
            if (flush_done(j, &c) != WK_OK) {
                wk_out_error(&j->out, &we);
                rc = write_failed(j, &we);
                break;
            }
            const uint8_t *d;
            long n = wk_cli_input_read(&j->in, &d);
            if (n < 0) {
                rc = WK_EXIT_FAIL;
                break;
            }
            if (n == 0) {
                wk_converter_finish(&c);
            } else {
                wk_converter_feed(&c, d, (size_t)n);
            }
            continue;
        }
        if (st == WK_ERR_EOF) {
            break;
        }
        uint64_t line = 0, col = 0;
        bool output = false;
        wk_converter_error(&c, &we, &line, &col, &output);
        if (output) {
            rc = write_failed(j, &we);
            break;
        }
        char what[96];
        what_of(j, what, sizeof what);
        rc = fail_input(j, &we, line, col, what);
        break;
    }
    wk_converter_free(&c);
    return rc;
}

static int run(int argc, char **argv)
{
    enum { O_FROM = 256, O_TO, O_PRETTY, O_PROGRESS, O_NO_PROGRESS, O_MAX_VALUE, O_CHECK };
    static const struct option longopts[] = {
        {"from", required_argument, NULL, O_FROM},
        {"to", required_argument, NULL, O_TO},
        {"pretty", no_argument, NULL, O_PRETTY},
        {"check", no_argument, NULL, O_CHECK},
        {"progress", no_argument, NULL, O_PROGRESS},
        {"no-progress", no_argument, NULL, O_NO_PROGRESS},
        {"max-value", required_argument, NULL, O_MAX_VALUE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    job j;
    memset(&j, 0, sizeof j);
    j.max_value = WK_CLI_DEFAULT_MAX_VALUE;
    int progress = WK_CLI_PROGRESS_AUTO;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'h': return usage();
        case O_FROM:
        case O_TO: {
            const wk_format *f = wk_format_find(optarg);
            if (f == NULL) {
                char names[64];
                format_names(names, sizeof names);
                return wk_cli_usage_error("convert", "unknown format '%s' (%s)", optarg, names);
            }
            if (c == O_FROM) {
                j.from = f;
            } else {
                j.to = f;
            }
            break;
        }
        case O_PRETTY: j.pretty = true; break;
        case O_CHECK: j.check = true; break;
        case O_PROGRESS: progress = 1; break;
        case O_NO_PROGRESS: progress = 0; break;
        case O_MAX_VALUE:
            j.max_value = wk_cli_parse_size(optarg);
            if (j.max_value == 0) {
                return wk_cli_usage_error("convert", "--max-value wants a size, not '%s'",
                                          optarg);
            }
            break;
        default:
            if (optopt == O_FROM || optopt == O_TO || optopt == O_MAX_VALUE) {
                return wk_cli_usage_error("convert", "%s needs a value", argv[optind - 1]);
            }
            return wk_cli_usage_error("convert", "unknown option '%s'", argv[optind - 1]);
        }
    }
    const char *paths[2] = {NULL, NULL};
    if (argc - optind > 2) {
        return wk_cli_usage_error("convert", "too many arguments");
    }
    for (int i = 0; optind + i < argc; i++) {
        paths[i] = argv[optind + i];
    }
    if (j.check && (j.to != NULL || j.pretty || paths[1] != NULL)) {
        return wk_cli_usage_error("convert", "--check writes nothing: no --to, --pretty or OUT");
    }
    if (j.from == NULL || (j.to == NULL && !j.check)) {
        return wk_cli_usage_error("convert", "--from and --to (or --check) are required");
    }
    if (j.pretty && (j.to->flags & WK_FORMAT_PRETTY) == 0) {
        return wk_cli_usage_error("convert", "--pretty applies to JSON output only");
    }
    int use_stdout = paths[1] == NULL || strcmp(paths[1], "-") == 0;
    if (use_stdout && !j.check) {
        progress = wk_cli_progress_to_stdout(progress);
    }
    if (wk_cli_input_open(&j.in, paths[0], progress) != 0) {
        return WK_EXIT_FAIL;
    }
    /* through a temporary file renamed over OUT at the end, refused when OUT is IN */
    wk_cli_output outf = {NULL, NULL, NULL, -1, NULL};
    if (!j.check && wk_cli_output_open(&outf, paths[1], j.in.fd) != 0) {
        wk_cli_input_close(&j.in);
        return WK_EXIT_FAIL;
    }
    j.out_name = j.check ? "standard output" : outf.name;
    int fd = j.check ? 1 : outf.fd;
    /* the output buffer holds one value's output at most (plus what waits for a flush) */
    size_t out_cap = j.max_value > SIZE_MAX / 8 ? SIZE_MAX : j.max_value * 8;
    wk_out_init_fd(&j.out, fd, out_cap, NULL);
    int rc = j.check ? check(&j) : convert(&j);
    if (rc == WK_EXIT_OK) {
        wk_cli_input_close(&j.in);
        wk_error e;
        if (wk_out_flush(&j.out) != WK_OK) {
            wk_out_error(&j.out, &e);
            rc = wk_cli_fail("cannot write %s: %s", j.out_name, strerror(errno));
        }
    }
    wk_out_free(&j.out);
    if (!j.check && rc == WK_EXIT_OK && wk_cli_output_commit(&outf) != 0) {
        rc = WK_EXIT_FAIL;
    } else if (!j.check && rc != WK_EXIT_OK) {
        wk_cli_output_abort(&outf); /* a named OUT stays as it was */
    }
    return rc;
}

const wk_cli_command wk_cli_cmd_convert = {"convert", "convert between JSON and MessagePack",
                                           run};
