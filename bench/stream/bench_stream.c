/*
 * The stream suite. A stream of values is made once from the JSON corpus (each document cut
 * into messages of at most 64 KiB: a value that is larger is replaced by its elements), as
 * MessagePack and as JSON Lines, repeated to a few MB.
 *   MessagePack, 4 KiB, 64 KiB and 1-byte chunks: wirekit's wk_mp_unpacker taking each value
 *     out as a tree (wk_mp_unpacker_next_value_in_place, arena reset per value; on 4 KiB also
 *     wk_mp_unpacker_next_value, which leaves the arena free between calls), and as a checked
 *     raw span; msgpack-c's
 *     msgpack_unpacker (reserve, copy, consume, next: a msgpack_object tree per value). The
 *     whole-buffer row is wk_mp_decode_value value after value over the whole stream, the
 *     ceiling for the unpacker.
 *   JSON Lines, 4 KiB chunks: wirekit's wk_json_unpacker as events to a counting sink and as
 *     trees; yajl_parse with counting callbacks (yajl_allow_multiple_values). The
 *     whole-buffer row is wk_json_reader over the whole text.
 *   convert: `wirekit convert` (the "wirekit" rows) of a 200 MB JSON Lines file (8 MB with --quick) run as a child
 *     process (wall time; peak RSS from /usr/bin/time, skipped when it is absent), to
 *     MessagePack and to compact JSON, beside
 *     `jq -c .` and python3's json + msgpack, each writing to /dev/null; and the same
 *     conversion in process on the whole buffer (wk_json_to_msgpack), the throughput that
 *     streaming should come close to.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <msgpack.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>

#include "bench.h"
#include "wirekit/wirekit.h"

typedef struct stream_ctx {
    const uint8_t *data;
    size_t len;
    size_t chunk;
    uint64_t values; /* values per pass, for the check */
    wk_arena arena;
} stream_ctx;

/* ---- building the stream ---------------------------------------------------------------- */

static void add_value(wk_buf *mp, wk_buf *jl, const wk_value *v)
{
    wk_mp_encode_value(v, mp, NULL);
    wk_json_encode_value(v, NULL, jl, NULL);
    if (wk_buf_grow(jl, 1) == WK_OK) {
        jl->data[jl->len++] = '\n';
    }
}

/* Adds `v` as one value when its MessagePack form is at most 64 KiB, else each of its
 * elements (map values) the same way: messages the size RPC and log streams carry. */
static void add_messages(wk_buf *mp, wk_buf *jl, const wk_value *v, wk_buf *scratch,
                         uint64_t *n)
{
    scratch->len = 0;
    wk_mp_encode_value(v, scratch, NULL);
    if (scratch->len <= ((size_t)64 << 10) || (v->type != WK_VAL_ARRAY && v->type != WK_VAL_MAP)) {
        add_value(mp, jl, v);
        (*n)++;
        return;
    }
    for (size_t i = 0; i < v->len; i++) {
        add_messages(mp, jl, v->type == WK_VAL_MAP ? &v->u.pairs[i].val : &v->u.items[i],
                     scratch, n);
    }
}

/* ---- MessagePack ------------------------------------------------------------------------ */

/* How the wirekit rows take each value out. */
enum take { TAKE_SPAN, TAKE_TREE, TAKE_TREE_IN_PLACE };

static uint64_t run_wk_mp(void *arg, uint64_t iters, enum take take)
{
    stream_ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        wk_mp_unpacker u;
        wk_mp_unpacker_init(&u, NULL, 0);
        size_t pos = 0;
        for (;;) {
            wk_status st;
            if (take != TAKE_SPAN) {
                wk_value *v;
                st = take == TAKE_TREE ? wk_mp_unpacker_next_value(&u, &c->arena, &v)
                                       : wk_mp_unpacker_next_value_in_place(&u, &c->arena, &v);
                if (st == WK_OK) {
                    sum += v->type;
                    wk_arena_reset(&c->arena);
                }
            } else {
                const uint8_t *d;
                size_t n;
                st = wk_mp_unpacker_next(&u, &d, &n, NULL);
                if (st == WK_OK) {
                    sum += n;
                }
            }
            if (st == WK_OK) {
                continue;
            }
            if (st != WK_ERR_AGAIN) {
                break;
            }
            if (pos == c->len) {
                wk_mp_unpacker_finish(&u);
                continue;
            }
            size_t n = c->len - pos < c->chunk ? c->len - pos : c->chunk;
            wk_mp_unpacker_feed(&u, c->data + pos, n);
            pos += n;
        }
        wk_mp_unpacker_free(&u);
    }
    return sum;
}

static uint64_t run_wk_mp_tree(void *arg, uint64_t iters)
{
    return run_wk_mp(arg, iters, TAKE_TREE_IN_PLACE);
}

static uint64_t run_wk_mp_tree_free_arena(void *arg, uint64_t iters)
{
    return run_wk_mp(arg, iters, TAKE_TREE);
}

static uint64_t run_wk_mp_raw(void *arg, uint64_t iters)
{
    return run_wk_mp(arg, iters, TAKE_SPAN);
}

static uint64_t run_wk_mp_whole(void *arg, uint64_t iters)
{
    stream_ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        size_t pos = 0;
        while (pos < c->len) {
            wk_value *v;
            size_t used = 0;
            wk_arena_reset(&c->arena);
            if (wk_mp_decode_value(c->data + pos, c->len - pos, NULL, &c->arena, &v, &used,
                                   NULL) != WK_OK) {
                break;
            }
            sum += v->type;
            pos += used;
        }
    }
    return sum;
}

static uint64_t run_mc_mp(void *arg, uint64_t iters)
{
    stream_ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        msgpack_unpacker u;
        msgpack_unpacker_init(&u, c->chunk > MSGPACK_UNPACKER_INIT_BUFFER_SIZE
                                      ? c->chunk
                                      : MSGPACK_UNPACKER_INIT_BUFFER_SIZE);
        msgpack_unpacked res;
        msgpack_unpacked_init(&res);
        size_t pos = 0;
        while (pos < c->len) {
            size_t n = c->len - pos < c->chunk ? c->len - pos : c->chunk;
            if (!msgpack_unpacker_reserve_buffer(&u, n)) {
                break;
            }
            memcpy(msgpack_unpacker_buffer(&u), c->data + pos, n);
            msgpack_unpacker_buffer_consumed(&u, n);
            pos += n;
            while (msgpack_unpacker_next(&u, &res) == MSGPACK_UNPACK_SUCCESS) {
                sum += res.data.type;
            }
        }
        msgpack_unpacked_destroy(&res);
        msgpack_unpacker_destroy(&u);
    }
    return sum;
}

/* Counts the values each implementation takes out in one pass (must agree). */
static uint64_t count_mc(stream_ctx *c)
{
    msgpack_unpacker u;
    msgpack_unpacker_init(&u, MSGPACK_UNPACKER_INIT_BUFFER_SIZE);
    msgpack_unpacked res;
    msgpack_unpacked_init(&res);
    uint64_t n = 0;
    msgpack_unpacker_reserve_buffer(&u, c->len);
    memcpy(msgpack_unpacker_buffer(&u), c->data, c->len);
    msgpack_unpacker_buffer_consumed(&u, c->len);
    while (msgpack_unpacker_next(&u, &res) == MSGPACK_UNPACK_SUCCESS) {
        n++;
    }
    msgpack_unpacked_destroy(&res);
    msgpack_unpacker_destroy(&u);
    return n;
}

static uint64_t count_wk_mp(stream_ctx *c)
{
    wk_mp_unpacker u;
    wk_mp_unpacker_init(&u, NULL, 0);
    uint64_t n = 0;
    size_t pos = 0;
    for (;;) {
        const uint8_t *d;
        size_t len;
        wk_status st = wk_mp_unpacker_next(&u, &d, &len, NULL);
        if (st == WK_OK) {
            n++;
            continue;
        }
        if (st != WK_ERR_AGAIN) {
            break;
        }
        if (pos == c->len) {
            wk_mp_unpacker_finish(&u);
            continue;
        }
        size_t k = c->len - pos < c->chunk ? c->len - pos : c->chunk;
        wk_mp_unpacker_feed(&u, c->data + pos, k);
        pos += k;
    }
    wk_mp_unpacker_free(&u);
    return n;
}

/* ---- JSON Lines ------------------------------------------------------------------------- */

typedef struct counter {
    uint64_t n;
} counter;

static wk_status count_event(void *self, const wk_event *ev)
{
    ((counter *)self)->n += 1 + (ev->type == WK_EV_STR ? ev->v.str.len & 1 : 0);
    return WK_OK;
}

static wk_status count_error(const void *self, wk_error *err)
{
    (void)self;
    return wk_error_set(err, WK_OK, 0, NULL);
}

static uint64_t run_wk_json(void *arg, uint64_t iters, bool tree)
{
    stream_ctx *c = arg;
    counter cn = {0};
    wk_sink sink = {count_event, count_error, &cn};
    wk_read_opts o = {.flags = WK_JSON_READ_MULTI};
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        wk_json_unpacker u;
        wk_json_unpacker_init(&u, &o, 0);
        size_t pos = 0;
        for (;;) {
            wk_status st;
            if (tree) {
                wk_value *v;
                st = wk_json_unpacker_next_value(&u, &c->arena, &v);
                if (st == WK_OK) {
                    sum += v->type;
                    wk_arena_reset(&c->arena);
                }
            } else {
                st = wk_json_unpacker_next_events(&u, &sink);
            }
            if (st == WK_OK) {
                continue;
            }
            if (st != WK_ERR_AGAIN) {
                break;
            }
            if (pos == c->len) {
                wk_json_unpacker_finish(&u);
                continue;
            }
            size_t n = c->len - pos < c->chunk ? c->len - pos : c->chunk;
            wk_json_unpacker_feed(&u, c->data + pos, n);
            pos += n;
        }
        wk_json_unpacker_free(&u);
    }
    return sum + cn.n;
}

static uint64_t run_wk_json_events(void *arg, uint64_t iters)
{
    return run_wk_json(arg, iters, false);
}

static uint64_t run_wk_json_tree(void *arg, uint64_t iters)
{
    return run_wk_json(arg, iters, true);
}

static uint64_t run_wk_json_whole(void *arg, uint64_t iters)
{
    stream_ctx *c = arg;
    wk_read_opts o = {.flags = WK_JSON_READ_MULTI};
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        wk_json_reader r;
        wk_json_reader_init(&r, c->data, c->len, &o, NULL);
        wk_event ev;
        while (wk_json_reader_next(&r, &ev) == WK_OK) {
            sum += 1 + (ev.type == WK_EV_STR ? ev.v.str.len & 1 : 0);
        }
        wk_json_reader_free(&r);
    }
    return sum;
}

static int y_null(void *ctx)
{
    ((counter *)ctx)->n++;
    return 1;
}
static int y_bool(void *ctx, int b)
{
    ((counter *)ctx)->n += 1 + (unsigned)b * 0;
    return 1;
}
static int y_int(void *ctx, long long v)
{
    (void)v;
    ((counter *)ctx)->n++;
    return 1;
}
static int y_double(void *ctx, double v)
{
    (void)v;
    ((counter *)ctx)->n++;
    return 1;
}
static int y_str(void *ctx, const unsigned char *s, size_t len)
{
    (void)s;
    ((counter *)ctx)->n += 1 + (len & 1);
    return 1;
}
static int y_start_map(void *ctx)
{
    ((counter *)ctx)->n++;
    return 1;
}
static int y_map_key(void *ctx, const unsigned char *s, size_t len)
{
    (void)s;
    ((counter *)ctx)->n += 1 + (len & 1);
    return 1;
}
static int y_end(void *ctx)
{
    ((counter *)ctx)->n++;
    return 1;
}

static const yajl_callbacks y_callbacks = {y_null, y_bool,   y_int,       y_double, NULL,
                                           y_str,  y_start_map, y_map_key, y_end,    y_start_map,
                                           y_end};

static uint64_t run_yajl(void *arg, uint64_t iters)
{
    stream_ctx *c = arg;
    counter cn = {0};
    for (uint64_t i = 0; i < iters; i++) {
        yajl_handle h = yajl_alloc(&y_callbacks, NULL, &cn);
        yajl_config(h, yajl_allow_multiple_values, 1);
        size_t pos = 0;
        while (pos < c->len) {
            size_t n = c->len - pos < c->chunk ? c->len - pos : c->chunk;
            if (yajl_parse(h, c->data + pos, n) != yajl_status_ok) {
                break;
            }
            pos += n;
        }
        yajl_complete_parse(h);
        yajl_free(h);
    }
    return cn.n;
}

/* ---- convert as a child process --------------------------------------------------------- */

typedef struct child_run {
    double seconds;
    long max_rss_kb;
    int status;
} child_run;

/* Runs argv under /usr/bin/time -f %M (the child's own peak RSS: the rusage of a child forked
 * from this process would start from this process's RSS, which exec keeps as a floor). */
static child_run run_child(char *const argv[])
{
    child_run r = {0, 0, -1};
    char rss_path[] = "/tmp/wirekit-bench-rss-XXXXXX";
    int rfd = mkstemp(rss_path);
    if (rfd < 0) {
        return r;
    }
    close(rfd);
    char *targv[32] = {"/usr/bin/time", "-f", "%M", "-o", rss_path};
    size_t k = 5;
    for (size_t i = 0; argv[i] != NULL && k < 31; i++) {
        targv[k++] = argv[i];
    }
    targv[k] = NULL;
    uint64_t t0 = wk_bench_now_ns();
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execv(targv[0], targv);
        _exit(127);
    }
    if (pid > 0) {
        int st = 0;
        if (waitpid(pid, &st, 0) == pid) {
            r.seconds = (double)(wk_bench_now_ns() - t0) / 1e9;
            r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
            FILE *f = fopen(rss_path, "r");
            if (f == NULL || fscanf(f, "%ld", &r.max_rss_kb) != 1) {
                r.status = r.status != 0 ? r.status : 126;
            }
            if (f != NULL) {
                fclose(f);
            }
        }
    }
    unlink(rss_path);
    return r;
}

static void record_child(wk_bench *b, const char *case_name, const char *impl,
                         char *const argv[], size_t bytes)
{
    child_run best = {0, 0, -1};
    for (int rep = 0; rep < 3; rep++) { /* the fastest of 3 */
        child_run r = run_child(argv);
        if (r.status != 0) {
            wk_bench_say(b, "%s: %s exited %d (skipped)", case_name, impl, r.status);
            return;
        }
        if (best.status != 0 || r.seconds < best.seconds) {
            best = r;
        }
    }
    /* the harness keeps the pointer until it prints the table: one buffer per row */
    static char notes[8][48];
    static size_t next_note;
    char *note = notes[next_note++ % 8];
    snprintf(note, sizeof notes[0], "peak RSS %.1f MB", (double)best.max_rss_kb / 1024.0);
    wk_bench_record(b, case_name, impl, best.seconds * 1e9, bytes, 0, note);
}

static uint64_t run_wk_convert_whole(void *arg, uint64_t iters)
{
    stream_ctx *c = arg;
    wk_read_opts o = {.flags = WK_JSON_READ_MULTI};
    wk_buf out;
    wk_buf_init(&out, NULL, (size_t)4 << 30);
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        out.len = 0;
        if (wk_json_to_msgpack(c->data, c->len, &o, &out, NULL) == WK_OK) {
            sum += out.len;
        }
    }
    wk_buf_free(&out);
    return sum;
}

static void bench_convert(wk_bench *b, const uint8_t *jl, size_t jl_len)
{
    size_t target = wk_bench_quick(b) ? (size_t)8 << 20 : (size_t)200 << 20;
    char path[] = "/tmp/wirekit-bench-stream-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        wk_bench_fail(b, "cannot create a temporary file: %s", strerror(errno));
        return;
    }
    size_t written = 0;
    while (written < target) {
        ssize_t n = write(fd, jl, jl_len);
        if (n != (ssize_t)jl_len) {
            wk_bench_fail(b, "cannot write the temporary file");
            close(fd);
            unlink(path);
            return;
        }
        written += jl_len;
    }
    close(fd);

    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 16);
    if (n <= 0) {
        wk_bench_fail(b, "cannot find the wirekit command");
        unlink(path);
        return;
    }
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    snprintf(slash + 1, sizeof exe - (size_t)(slash + 1 - exe), "wirekit");
    static char case_mp[64], case_json[64]; /* the harness keeps the pointers */
    snprintf(case_mp, sizeof case_mp, "convert %zu MB JSONL->mp", written >> 20);
    snprintf(case_json, sizeof case_json, "convert %zu MB JSONL->JSON", written >> 20);

    /* in process, whole buffer: the throughput streaming should approach */
    uint8_t *all = malloc(written);
    if (all != NULL) {
        for (size_t off = 0; off < written; off += jl_len) {
            memcpy(all + off, jl, jl_len);
        }
        stream_ctx c = {.data = all, .len = written};
        wk_bench_spec s = {case_mp, "wirekit whole buffer", run_wk_convert_whole, &c, 1,
                           written, "in process, whole buffer (wk_json_to_msgpack)", 0};
        wk_bench_run(b, &s);
        free(all);
    }
    if (access("/usr/bin/time", X_OK) != 0) {
        wk_bench_say(b, "convert: /usr/bin/time is missing (Debian package time): skipped");
        unlink(path);
        return;
    }
    char *wk_mp[] = {exe, "convert", "--from=json", "--to=msgpack", "--no-progress", path,
                     "/dev/null", NULL};
    record_child(b, case_mp, "wirekit", wk_mp, written); /* the command, streaming */
    char *py[] = {"/usr/bin/python3", "-c",
                  "import sys, json, msgpack\n"
                  "out = open('/dev/null', 'wb')\n"
                  "for line in open(sys.argv[1], 'rb'):\n"
                  "    out.write(msgpack.packb(json.loads(line)))\n",
                  path, NULL};
    record_child(b, case_mp, "python3 json+msgpack", py, written);
    char *wk_js[] = {exe, "convert", "--from=json", "--to=json", "--no-progress", path,
                     "/dev/null", NULL};
    record_child(b, case_json, "wirekit", wk_js, written);
    char *jq[] = {"jq", "-c", ".", path, NULL};
    record_child(b, case_json, "jq -c", jq, written);
    unlink(path);
}

/* ---- the suite -------------------------------------------------------------------------- */

int wk_bench_suite_stream(wk_bench *b)
{
    static const char *const names[] = {"twitter.json", "citm_catalog.json"};
    wk_buf mp, jl;
    wk_buf_init(&mp, NULL, 0);
    wk_buf_init(&jl, NULL, 0);
    uint64_t values = 0;
    for (size_t i = 0; i < 2; i++) {
        size_t len = 0;
        uint8_t *json = wk_bench_read_data(b, names[i], &len);
        if (json == NULL) {
            continue;
        }
        wk_arena a;
        wk_arena_init(&a, NULL, 0);
        wk_value *v = NULL;
        if (wk_json_decode_value(json, len, NULL, &a, &v, NULL, NULL) == WK_OK) {
            wk_buf scratch;
            wk_buf_init(&scratch, NULL, 0);
            add_messages(&mp, &jl, v, &scratch, &values);
            wk_buf_free(&scratch);
        }
        wk_arena_free(&a);
        free(json);
    }
    if (values == 0) {
        wk_buf_free(&mp);
        wk_buf_free(&jl);
        return 1;
    }
    /* repeat to about 4 MB of MessagePack */
    size_t one_mp = mp.len, one_jl = jl.len;
    int reps = (int)(((size_t)4 << 20) / one_mp) + 1;
    for (int r = 1; r < reps; r++) {
        wk_buf_grow(&mp, one_mp);
        memcpy(mp.data + mp.len, mp.data, one_mp);
        mp.len += one_mp;
        wk_buf_grow(&jl, one_jl);
        memcpy(jl.data + jl.len, jl.data, one_jl);
        jl.len += one_jl;
    }
    wk_bench_say(b, "stream: %llu values (%.1f MB MessagePack, %.1f MB JSON Lines) from the corpus",
                 (unsigned long long)values * (unsigned long long)reps, (double)mp.len / 1e6,
                 (double)jl.len / 1e6);

    wk_bench_peer(b, "msgpack-c unpacker", "msgpack-c: Debian shared library, distribution build");
    wk_bench_peer(b, "yajl", "yajl: Debian shared library, distribution build");
    wk_bench_peer(b, "jq -c", "jq 1.6: Debian package, a separate process");
    wk_bench_peer(b, "python3 json+msgpack",
                  "python3 json + msgpack 1.0.3 (C extension): Debian packages, a process");
    stream_ctx c;
    memset(&c, 0, sizeof c);
    wk_arena_init(&c.arena, NULL, 0);
    c.data = mp.data;
    c.len = mp.len;
    c.chunk = 4096;
    uint64_t n_wk = count_wk_mp(&c), n_mc = count_mc(&c);
    if (n_wk != n_mc || n_wk != values * (uint64_t)reps) {
        wk_bench_fail(b, "value counts differ: wirekit %llu, msgpack-c %llu, built %llu",
                      (unsigned long long)n_wk, (unsigned long long)n_mc,
                      (unsigned long long)(values * (uint64_t)reps));
    }
    static char note[64]; /* the harness keeps the pointer */
    snprintf(note, sizeof note, "%.0f values per op", (double)n_wk);
    wk_bench_spec specs[] = {
        {"mp stream, 4 KiB chunks", "wirekit", run_wk_mp_tree, &c, 0, c.len, note},
        {"mp stream, 4 KiB chunks", "wirekit raw span", run_wk_mp_raw, &c, 0, c.len,
         "checked bytes, no tree"},
        {"mp stream, 4 KiB chunks", "wirekit arena free", run_wk_mp_tree_free_arena, &c, 0,
         c.len, "wk_mp_unpacker_next_value: the arena is the caller's between calls"},
        {"mp stream, 4 KiB chunks", "wirekit whole buffer", run_wk_mp_whole, &c, 0, c.len,
         "wk_mp_decode_value over the whole stream"},
        {"mp stream, 4 KiB chunks", "msgpack-c unpacker", run_mc_mp, &c, 0, c.len, NULL},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        wk_bench_add(b, &specs[i]);
    }
    wk_bench_flush(b);

    /* the same stream in 64 KiB chunks: values cut by a chunk end are rarer */
    stream_ctx c64 = c;
    c64.chunk = (size_t)64 << 10;
    wk_arena_init(&c64.arena, NULL, 0);
    wk_bench_spec specs64[] = {
        {"mp stream, 64 KiB chunks", "wirekit", run_wk_mp_tree, &c64, 0, c64.len, NULL},
        {"mp stream, 64 KiB chunks", "msgpack-c unpacker", run_mc_mp, &c64, 0, c64.len, NULL},
    };
    for (size_t i = 0; i < 2; i++) {
        wk_bench_add(b, &specs64[i]);
    }
    wk_bench_flush(b);
    wk_arena_free(&c64.arena);

    stream_ctx c1 = c;
    c1.len = c.len / 4; /* cut at a value boundary below: a whole number of repetitions */
    c1.len = (c1.len / one_mp + 1) * one_mp;
    c1.chunk = 1;
    wk_arena_init(&c1.arena, NULL, 0);
    wk_bench_spec specs1[] = {
        {"mp stream, 1-byte chunks", "wirekit", run_wk_mp_tree, &c1, 0, c1.len, NULL},
        {"mp stream, 1-byte chunks", "msgpack-c unpacker", run_mc_mp, &c1, 0, c1.len, NULL},
    };
    for (size_t i = 0; i < 2; i++) {
        wk_bench_add(b, &specs1[i]);
    }
    wk_bench_flush(b);
    wk_arena_free(&c1.arena);

    stream_ctx cj = c;
    cj.data = jl.data;
    cj.len = jl.len;
    wk_bench_spec specsj[] = {
        {"JSON Lines, 4 KiB chunks", "wirekit", run_wk_json_events, &cj, 0, cj.len,
         "events to a counting sink"},
        {"JSON Lines, 4 KiB chunks", "wirekit tree", run_wk_json_tree, &cj, 0, cj.len, NULL},
        {"JSON Lines, 4 KiB chunks", "wirekit whole buffer", run_wk_json_whole, &cj, 0, cj.len,
         "wk_json_reader events over the whole text"},
        {"JSON Lines, 4 KiB chunks", "yajl", run_yajl, &cj, 0, cj.len,
         "callbacks counting events"},
    };
    for (size_t i = 0; i < sizeof specsj / sizeof specsj[0]; i++) {
        wk_bench_add(b, &specsj[i]);
    }
    wk_bench_flush(b);
    /* both count the same events (wirekit's END is yajl's end_map/end_array) */
    uint64_t ew = run_wk_json_events(&cj, 1), ey = run_yajl(&cj, 1), eb = run_wk_json_whole(&cj, 1);
    if (ew != ey || ew != eb) {
        wk_bench_fail(b, "JSON event counts differ: wirekit %llu, whole %llu, yajl %llu",
                      (unsigned long long)ew, (unsigned long long)eb, (unsigned long long)ey);
    }
    wk_arena_free(&c.arena);

    if (!wk_bench_callgrind(b)) { /* child processes: timed only */
        bench_convert(b, jl.data, one_jl);
    }
    wk_buf_free(&mp);
    wk_buf_free(&jl);
    return 0;
}
