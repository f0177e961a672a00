/*
 * Harness internals: the queue of specs, calibration, interleaved repetitions, progress on a
 * terminal, corpus lookup and the callgrind mode. Every implementation of a case is calibrated
 * on its own, then each repetition runs all of them once, starting with a different one each
 * time, so drift of the machine (frequency, a neighbour's build) spreads over all of them;
 * the row keeps the median and the fastest and slowest repetitions. Under --callgrind the
 * program runs inside valgrind and counts the instructions of one batch of operations per
 * (case, impl) with callgrind's client requests instead of timing.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <valgrind/callgrind.h>

#include "bench.h"
#include "bench_internal.h"

#define REPS 7
#define QUICK_REPS 2
#define TARGET_NS 200000000ull /* per repetition when calibrating */
#define QUICK_TARGET_NS 2000000ull
#define CG_TARGET_NS 100000000ull /* valgrind time per counted batch */

uint64_t wk_bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool wk_bench_quick(const wk_bench *b)
{
    return b->quick;
}

bool wk_bench_callgrind(const wk_bench *b)
{
    return b->cg_file != NULL;
}

static wk_bench_row *new_row(wk_bench *b)
{
    if (b->nrows == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        wk_bench_row *r = realloc(b->rows, cap * sizeof *r);
        if (r == NULL) {
            fprintf(stderr, "wirekit-bench: out of memory\n");
            exit(1);
        }
        b->rows = r;
        b->cap = cap;
    }
    wk_bench_row *row = &b->rows[b->nrows++];
    memset(row, 0, sizeof *row);
    row->suite = b->suite;
    return row;
}

static const char *peer_build(const wk_bench *b, const char *impl)
{
    for (size_t i = 0; i < b->npeers; i++) {
        if (strcmp(b->peers[i].impl, impl) == 0) {
            return b->peers[i].build;
        }
    }
    return NULL;
}

void wk_bench_peer(wk_bench *b, const char *impl, const char *build)
{
    for (size_t i = 0; i < b->npeers; i++) {
        if (strcmp(b->peers[i].impl, impl) == 0) {
            b->peers[i].build = build;
            return;
        }
    }
    if (b->npeers < sizeof b->peers / sizeof b->peers[0]) {
        b->peers[b->npeers++] = (wk_bench_peer_build){impl, build};
    }
}

static void progress(const wk_bench *b, const wk_bench_spec *s, size_t k, size_t n,
                     const char *phase)
{
    if (!b->progress) {
        return;
    }
    double el = (double)(wk_bench_now_ns() - b->started_ns) / 1e9;
    fprintf(stderr, "\r\033[K[suite %u/%u %s] %.40s: %.24s (%zu/%zu) %s, %.0f s", b->suite_no,
            b->suite_count, b->suite, s->case_name, s->impl, k + 1, n, phase, el);
    fflush(stderr);
}

static uint64_t calibrate(const wk_bench_spec *s, uint64_t target)
{
    uint64_t iters = 1;
    for (;;) {
        uint64_t t0 = wk_bench_now_ns();
        wk_bench_escape((void *)(uintptr_t)s->fn(s->arg, iters));
        uint64_t dt = wk_bench_now_ns() - t0;
        if (dt >= target / 10 || iters >= (1ull << 40)) {
            double per = (double)dt / (double)iters;
            double want = per > 0 ? (double)target / per : (double)iters * 10;
            return want < 1 ? 1 : (uint64_t)want;
        }
        iters *= 10;
    }
}

/* --quick: one op timed, then as many as fit in QUICK_TARGET_NS (at least one). */
static uint64_t calibrate_quick(const wk_bench_spec *s)
{
    uint64_t t0 = wk_bench_now_ns();
    wk_bench_escape((void *)(uintptr_t)s->fn(s->arg, 1));
    uint64_t dt = wk_bench_now_ns() - t0;
    uint64_t iters = dt > 0 ? QUICK_TARGET_NS / dt : 1000;
    return iters < 1 ? 1 : iters > 100000 ? 100000 : iters;
}

/* The instruction count of the last dump callgrind appended to b->cg_file ("totals:" or
 * "summary:" line of the last part), or 0. */
static double cg_last_total(const wk_bench *b)
{
    FILE *f = fopen(b->cg_file, "r");
    if (f == NULL) {
        return 0;
    }
    char line[1024];
    double last = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (strncmp(line, "totals:", 7) == 0 || strncmp(line, "summary:", 8) == 0) {
            last = strtod(strchr(line, ':') + 1, NULL);
        }
    }
    fclose(f);
    return last;
}

static void cg_measure(wk_bench *b, const wk_bench_spec *s, wk_bench_row *row)
{
    wk_bench_escape((void *)(uintptr_t)s->fn(s->arg, 1)); /* warm-up, not counted */
    uint64_t t0 = wk_bench_now_ns();
    wk_bench_escape((void *)(uintptr_t)s->fn(s->arg, 1));
    uint64_t dt = wk_bench_now_ns() - t0;
    uint64_t iters = dt > 0 ? CG_TARGET_NS / dt : 1000;
    iters = iters < 1 ? 1 : iters > 100000 ? 100000 : iters;
    if (s->iters != 0 && s->iters < iters) {
        iters = s->iters;
    }
    uint64_t a0 = wk_bench_alloc_count();
    CALLGRIND_ZERO_STATS;
    CALLGRIND_START_INSTRUMENTATION;
    uint64_t sink = s->fn(s->arg, iters);
    CALLGRIND_STOP_INSTRUMENTATION;
    CALLGRIND_DUMP_STATS_AT("wirekit-bench case");
    wk_bench_escape((void *)(uintptr_t)sink);
    double total = cg_last_total(b);
    if (!(total > 0)) {
        wk_bench_fail(b, "%s / %s: no instruction count in %s", s->case_name, s->impl,
                      b->cg_file);
    }
    row->instr = total / (double)iters;
    row->iters = iters;
    row->reps = 1;
    row->allocs = (double)(wk_bench_alloc_count() - a0) / (double)iters;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Runs specs[0..n) of one case, interleaved, and records their rows in order. */
static void run_case(wk_bench *b, const wk_bench_spec *specs, size_t n)
{
    size_t first = b->nrows;
    for (size_t k = 0; k < n; k++) {
        wk_bench_row *row = new_row(b);
        row->case_name = specs[k].case_name;
        row->impl = specs[k].impl;
        row->bytes = specs[k].bytes_per_op;
        row->note = specs[k].note;
        row->flags = specs[k].flags;
        row->build = peer_build(b, specs[k].impl);
    }
    if (b->cg_file != NULL) {
        for (size_t k = 0; k < n; k++) {
            progress(b, &specs[k], k, n, "callgrind");
            cg_measure(b, &specs[k], &b->rows[first + k]);
        }
    } else {
        int reps = b->quick ? QUICK_REPS : REPS;
        uint64_t iters[16];
        double ns[16][REPS], allocs[16];
        for (size_t k = 0; k < n; k++) {
            iters[k] = specs[k].iters;
            if (b->quick && iters[k] > 1000) {
                iters[k] = iters[k] / 1000 > 1000 ? iters[k] / 1000 : 1000;
            }
            if (iters[k] == 0 && b->quick) {
                /* --quick proves that everything runs: a few ops, a rough figure. */
                iters[k] = calibrate_quick(&specs[k]);
            } else if (iters[k] == 0) {
                progress(b, &specs[k], k, n, "calibrating");
                iters[k] = calibrate(&specs[k], TARGET_NS);
            }
            allocs[k] = 0;
        }
        for (int r = 0; r < reps; r++) {
            for (size_t j = 0; j < n; j++) {
                size_t k = (j + (size_t)r) % n;
                char phase[32];
                snprintf(phase, sizeof phase, "repetition %d/%d", r + 1, reps);
                progress(b, &specs[k], k, n, phase);
                uint64_t a0 = wk_bench_alloc_count();
                uint64_t t0 = wk_bench_now_ns();
                uint64_t sink = specs[k].fn(specs[k].arg, iters[k]);
                uint64_t dt = wk_bench_now_ns() - t0;
                uint64_t a1 = wk_bench_alloc_count();
                wk_bench_escape((void *)(uintptr_t)sink);
                ns[k][r] = (double)dt / (double)iters[k];
                allocs[k] = (double)(a1 - a0) / (double)iters[k];
            }
        }
        for (size_t k = 0; k < n; k++) {
            qsort(ns[k], (size_t)reps, sizeof ns[k][0], cmp_double);
            wk_bench_row *row = &b->rows[first + k];
            row->ns = reps % 2 ? ns[k][reps / 2] : (ns[k][reps / 2 - 1] + ns[k][reps / 2]) / 2;
            row->ns_min = ns[k][0];
            row->ns_max = ns[k][reps - 1];
            row->reps = reps;
            row->iters = iters[k];
            row->allocs = allocs[k];
        }
    }
    if (b->json) {
        for (size_t k = 0; k < n; k++) {
            wk_bench_write_json(stdout, &b->rows[first + k]);
        }
        fflush(stdout);
    }
}

static bool case_wanted(const wk_bench *b, const char *case_name)
{
    return b->case_filter == NULL || strstr(case_name, b->case_filter) != NULL;
}

void wk_bench_add(wk_bench *b, const wk_bench_spec *s)
{
    if (!case_wanted(b, s->case_name)) {
        return;
    }
    if (b->nqueue == sizeof b->queue / sizeof b->queue[0]) {
        wk_bench_flush(b);
    }
    b->queue[b->nqueue++] = *s;
}

void wk_bench_flush(wk_bench *b)
{
    /* Each case in the order its first spec was queued, its specs in queue order. */
    bool done[16] = {false};
    for (size_t i = 0; i < b->nqueue; i++) {
        if (done[i]) {
            continue;
        }
        wk_bench_spec group[16];
        size_t n = 0;
        for (size_t j = i; j < b->nqueue; j++) {
            if (!done[j] && strcmp(b->queue[j].case_name, b->queue[i].case_name) == 0) {
                group[n++] = b->queue[j];
                done[j] = true;
            }
        }
        run_case(b, group, n);
    }
    b->nqueue = 0;
}

void wk_bench_run(wk_bench *b, const wk_bench_spec *s)
{
    wk_bench_add(b, s);
    wk_bench_flush(b);
}

void wk_bench_record(wk_bench *b, const char *case_name, const char *impl, double ns_per_op,
                     size_t bytes_per_op, double allocs_per_op, const char *note)
{
    if (b->cg_file != NULL || !case_wanted(b, case_name)) {
        return;
    }
    wk_bench_row *row = new_row(b);
    row->case_name = case_name;
    row->impl = impl;
    row->ns = row->ns_min = row->ns_max = ns_per_op;
    row->bytes = bytes_per_op;
    row->allocs = allocs_per_op;
    row->note = note;
    row->build = peer_build(b, impl);
    if (b->json) {
        wk_bench_write_json(stdout, row);
        fflush(stdout);
    }
}

void wk_bench_record_requests(wk_bench *b, const char *case_name, const char *impl,
                              double ns_per_op, double ns_min, double ns_max, int reps,
                              double p50_ns, double p99_ns, const char *note)
{
    if (b->cg_file != NULL || !case_wanted(b, case_name)) {
        return;
    }
    wk_bench_row *row = new_row(b);
    row->case_name = case_name;
    row->impl = impl;
    row->ns = ns_per_op;
    row->ns_min = ns_min;
    row->ns_max = ns_max;
    row->reps = reps;
    row->allocs = -1;
    row->p50_ns = p50_ns;
    row->p99_ns = p99_ns;
    row->note = note;
    row->build = peer_build(b, impl);
    if (b->json) {
        wk_bench_write_json(stdout, row);
        fflush(stdout);
    }
}

void wk_bench_say(wk_bench *b, const char *fmt, ...)
{
    FILE *out = b->json ? stderr : stdout;
    if (b->progress) {
        fputs("\r\033[K", stderr);
    }
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    wk_bench_write_wrapped(out, "  ", text, 4);
}

void wk_bench_fail(wk_bench *b, const char *fmt, ...)
{
    va_list ap;
    if (b->progress) {
        fputs("\r\033[K", stderr);
    }
    fprintf(stderr, "wirekit-bench: %s: CHECK FAILED: ", b->suite);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    b->failures++;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    uint8_t *buf = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)n + 1);
    }
    if (buf != NULL && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf != NULL) {
        buf[n] = 0;
        *len = (size_t)n;
    }
    return buf;
}

uint8_t *wk_bench_read_data(wk_bench *b, const char *name, size_t *len)
{
    char dirs[3][PATH_MAX];
    size_t nd = 0;
    if (b->data_dir != NULL) {
        snprintf(dirs[nd++], sizeof dirs[0], "%s", b->data_dir);
    } else {
        char self[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n > 0) {
            self[n] = '\0';
            char *slash = strrchr(self, '/');
            if (slash != NULL) {
                *slash = '\0';
                snprintf(dirs[nd++], sizeof dirs[0], "%s/../share/wirekit/bench", self);
            }
        }
        snprintf(dirs[nd++], sizeof dirs[0], "%s", WK_BENCH_DATA_INSTALL_DIR);
        snprintf(dirs[nd++], sizeof dirs[0], "%s/node_modules/simdjson/jsonexamples",
                 WK_SOURCE_DIR);
    }
    for (size_t i = 0; i < nd; i++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/%s", dirs[i], name);
        uint8_t *buf = read_file(path, len);
        if (buf != NULL) {
            return buf;
        }
    }
    wk_bench_fail(b, "corpus file %s not found; looked in:", name);
    for (size_t i = 0; i < nd; i++) {
        fprintf(stderr, "    %s\n", dirs[i]);
    }
    if (b->data_hint_shown) {
        return NULL;
    }
    b->data_hint_shown = true;
    fprintf(stderr, "  The corpora come from npm simdjson@0.9.2 (jsonexamples/): run "
                    "scripts/deps.sh in the source tree,\n  install wirekit with its "
                    "share/wirekit/bench files, or pass --data DIR.\n");
    return NULL;
}

double wk_bench_figure(const wk_bench *b, const char *case_name, const char *impl)
{
    for (size_t i = b->nrows; i > 0; i--) {
        const wk_bench_row *r = &b->rows[i - 1];
        if (strcmp(r->case_name, case_name) == 0 && strcmp(r->impl, impl) == 0) {
            return wk_bench_metric(r);
        }
    }
    return 0;
}
