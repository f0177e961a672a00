/*
 * `wirekit convert`: JSON <-> MessagePack (and JSON or MessagePack reformatted), streaming.
 * Input is read a chunk at a time and fed to an unpacker (wirekit/stream.h); each complete
 * top-level value is converted and its output flushed before the next read that would
 * block, so a pipe's values come out as they come in. Memory is bounded by the largest
 * single value (at most --max-value), never by the total size. JSON input may hold several
 * whitespace-separated values (JSON Lines); each becomes one MessagePack value, and each
 * MessagePack value becomes one line of JSON. JSON goes to MessagePack through its tree (the
 * fused parser on the chunk, then the tree encoder); every other pair goes through events.
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
           "                     suffixes); JSON to JSON holds one string or number at a time\n"
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
           "line:column (JSON) and the byte offset.\n\n"
           "Exit status: 0 success (--check: every value valid), 1 unreadable or invalid\n"
           "input or output that cannot be written, 2 usage error.\n");
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

typedef struct job {
    int from, to;
    bool pretty;
    bool check;
    size_t max_value;
    wk_cli_input in;
    wk_out out;
    size_t done; /* bytes of out's buffer that end a complete value */
    const char *out_name;
} job;

/* One side of the loop: the unpacker of the input format. */
typedef struct unpacker {
    int fmt;
    wk_mp_unpacker mp;
    wk_json_unpacker js;
} unpacker;

static wk_status up_feed(unpacker *u, const uint8_t *d, size_t n)
{
    return u->fmt == FMT_JSON ? wk_json_unpacker_feed(&u->js, d, n)
                              : wk_mp_unpacker_feed(&u->mp, d, n);
}

static void up_finish(unpacker *u)
{
    if (u->fmt == FMT_JSON) {
        wk_json_unpacker_finish(&u->js);
    } else {
        wk_mp_unpacker_finish(&u->mp);
    }
}

static wk_status up_events(unpacker *u, const wk_sink *sink)
{
    return u->fmt == FMT_JSON ? wk_json_unpacker_next_events(&u->js, sink)
                              : wk_mp_unpacker_next_events(&u->mp, sink);
}

static int fail_input(job *j, unpacker *u, const char *what)
{
    wk_error e;
    uint64_t line = 0, col = 0;
    if (u->fmt == FMT_JSON) {
        wk_json_unpacker_error(&u->js, &e, &line, &col);
    } else {
        wk_mp_unpacker_error(&u->mp, &e);
    }
    wk_out_buf(&j->out)->len = j->done; /* no half value in the output */
    wk_out_flush(&j->out);
    wk_cli_input_close(&j->in);
    return wk_cli_fail_in(j->in.name, line, col, what, &e, j->max_value);
}

/* Sends the output of the values complete so far before a read that may wait. The output of
 * a value still open (JSON -> JSON writes a value's events as they come) stays in the buffer,
 * so that bad input leaves no half value in the output, unless it has grown past
 * WK_OUT_FLUSH_AT: a large value streams. */
static wk_status flush_done(job *j)
{
    wk_buf *b = wk_out_buf(&j->out);
    size_t open = b->len - j->done;
    if (open > WK_OUT_FLUSH_AT) {
        j->done = 0;
        return wk_out_flush(&j->out);
    }
    size_t done = j->done;
    b->len = done;
    j->done = 0;
    wk_status st = wk_out_flush(&j->out);
    if (open > 0) { /* the JSON writer keeps no cursor into the buffer: its bytes may move */
        memmove(b->data, b->data + done, open);
    }
    b->len = open;
    return st;
}

/* Feeds the next chunk after flushing what is ready; returns 0, or -1 after a read error. */
static int refill(job *j, unpacker *u)
{
    if (flush_done(j) != WK_OK) {
        return 0; /* reported by the caller's write check */
    }
    const uint8_t *d;
    long n = wk_cli_input_read(&j->in, &d);
    if (n < 0) {
        return -1;
    }
    if (n == 0) {
        up_finish(u);
        return 0;
    }
    up_feed(u, d, (size_t)n);
    return 0;
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

static const char *what_of(const job *j)
{
    if (j->from == FMT_JSON) {
        return j->to == FMT_JSON ? "cannot reformat JSON" : "cannot convert JSON to MessagePack";
    }
    return j->to == FMT_JSON ? "cannot convert MessagePack to JSON"
                             : "cannot re-encode MessagePack";
}

/* --check: each value taken out raw, validated by the unpacker (wk_json_validate for JSON,
 * wk_mp_check for MessagePack) and counted; nothing is built or written. */
static int check(job *j, unpacker *u)
{
    uint64_t values = 0;
    for (;;) {
        const uint8_t *d;
        size_t n;
        wk_status st = u->fmt == FMT_JSON ? wk_json_unpacker_next(&u->js, &d, &n, NULL)
                                          : wk_mp_unpacker_next(&u->mp, &d, &n, NULL);
        if (st == WK_OK) {
            values++;
        } else if (st == WK_ERR_AGAIN) {
            if (refill(j, u) != 0) {
                return WK_EXIT_FAIL;
            }
        } else if (st == WK_ERR_EOF) {
            printf("%s: %" PRIu64 " %s value%s, valid\n", j->in.name, values,
                   u->fmt == FMT_JSON ? "JSON" : "MessagePack", values == 1 ? "" : "s");
            return WK_EXIT_OK;
        } else {
            return fail_input(j, u, u->fmt == FMT_JSON ? "invalid JSON" : "invalid MessagePack");
        }
    }
}

static int convert(job *j)
{
    unpacker u = {.fmt = j->from};
    wk_read_opts ro = {.flags = j->from == FMT_JSON ? WK_JSON_READ_MULTI : 0u};
    if (j->from == FMT_JSON) {
        wk_json_unpacker_init(&u.js, &ro, j->max_value);
    } else {
        wk_mp_unpacker_init(&u.mp, &ro, j->max_value);
    }
    if (j->check) {
        int rc = check(j, &u);
        if (j->from == FMT_JSON) {
            wk_json_unpacker_free(&u.js);
        } else {
            wk_mp_unpacker_free(&u.mp);
        }
        return rc;
    }
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_json_writer jw;
    wk_json_write_opts wo = {WK_JSON_WRITE_NEWLINE | (j->pretty ? WK_JSON_WRITE_PRETTY : 0u), 0};
    wk_sink sink;
    if (j->to == FMT_JSON) {
        wk_json_writer_init(&jw, wk_out_buf(&j->out), &wo);
        wk_json_writer_sink(&jw, &sink);
    }
    int rc = WK_EXIT_OK;
    for (;;) {
        wk_status st;
        wk_error we = {WK_OK, 0, NULL};
        if (j->to == FMT_JSON) {
            /* from JSON, WK_ERR_AGAIN may come inside a value (its events so far are written):
             * refill() keeps that part back unless it is large (flush_done) */
            st = up_events(&u, &sink);
            if (st != WK_OK && st != WK_ERR_AGAIN && st != WK_ERR_EOF && jw.err.code != WK_OK) {
                wk_json_writer_finish(&jw, &we);
                rc = write_failed(j, &we);
                break;
            }
        } else if (j->from == FMT_JSON) {
            wk_value *v = NULL;
            wk_arena_reset(&arena);
            st = wk_json_unpacker_next_value(&u.js, &arena, &v);
            if (st == WK_OK && wk_mp_encode_value(v, wk_out_buf(&j->out), &we) != WK_OK) {
                rc = write_failed(j, &we);
                break;
            }
        } else {
            wk_mp_writer mw;
            wk_sink ms;
            wk_mp_writer_init(&mw, wk_out_buf(&j->out));
            wk_mp_writer_sink(&mw, &ms);
            st = up_events(&u, &ms);
            wk_status ws = wk_mp_writer_finish(&mw, &we);
            if (mw.status != WK_OK || (st == WK_OK && ws != WK_OK)) {
                rc = write_failed(j, &we);
                break;
            }
        }
        if (st == WK_OK) {
            if (wk_out_commit(&j->out) != WK_OK) {
                wk_out_error(&j->out, &we);
                rc = write_failed(j, &we);
                break;
            }
            j->done = wk_out_buf(&j->out)->len;
            continue;
        }
        if (st == WK_ERR_AGAIN) {
            if (refill(j, &u) != 0) {
                rc = WK_EXIT_FAIL;
                break;
            }
            if (wk_out_error(&j->out, &we) != WK_OK) {
                rc = write_failed(j, &we);
                break;
            }
            continue;
        }
        if (st == WK_ERR_EOF) {
            break;
        }
        rc = fail_input(j, &u, what_of(j));
        break;
    }
    wk_arena_free(&arena);
    if (j->from == FMT_JSON) {
        wk_json_unpacker_free(&u.js);
    } else {
        wk_mp_unpacker_free(&u.mp);
    }
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
            int f = parse_format(optarg);
            if (f == FMT_NONE) {
                return wk_cli_usage_error("convert", "unknown format '%s' (json or msgpack)",
                                          optarg);
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
    if (j.check && (j.to != FMT_NONE || j.pretty || paths[1] != NULL)) {
        return wk_cli_usage_error("convert", "--check writes nothing: no --to, --pretty or OUT");
    }
    if (j.from == FMT_NONE || (j.to == FMT_NONE && !j.check)) {
        return wk_cli_usage_error("convert", "--from and --to (or --check) are required");
    }
    if (j.pretty && j.to != FMT_JSON) {
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
    int rc = convert(&j);
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
