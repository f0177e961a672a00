/*
 * Harness internals: calibration, repetitions, the result table and JSON lines.
 * The reported figure is the fastest of the repetitions (the least disturbed by the machine),
 * which is the usual choice for micro-benchmarks; every implementation is treated alike.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "bench_internal.h"

#define REPS 5
#define QUICK_REPS 1
#define TARGET_NS 300000000ull /* per repetition when calibrating */
#define QUICK_TARGET_NS 2000000ull

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
    return row;
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

void wk_bench_run(wk_bench *b, const wk_bench_spec *s)
{
    uint64_t iters = s->iters;
    int reps = b->quick ? QUICK_REPS : REPS;
    if (b->quick && iters > 1000) {
        iters = iters / 1000 > 1000 ? iters / 1000 : 1000;
    }
    if (b->iterations != 0) {
        iters = b->iterations; /* for instruction counts: no calibration, one repetition */
        reps = 1;
    }
    if (iters == 0) {
        iters = calibrate(s, b->quick ? QUICK_TARGET_NS : TARGET_NS);
    }
    double best = 0;
    double allocs = 0;
    for (int r = 0; r < reps; r++) {
        uint64_t a0 = wk_bench_alloc_count();
        uint64_t t0 = wk_bench_now_ns();
        uint64_t sink = s->fn(s->arg, iters);
        uint64_t dt = wk_bench_now_ns() - t0;
        uint64_t a1 = wk_bench_alloc_count();
        wk_bench_escape((void *)(uintptr_t)sink);
        double ns = (double)dt / (double)iters;
        if (r == 0 || ns < best) {
            best = ns;
        }
        allocs = (double)(a1 - a0) / (double)iters;
    }
    wk_bench_row *row = new_row(b);
    row->case_name = s->case_name;
    row->impl = s->impl;
    row->ns = best;
    row->bytes = s->bytes_per_op;
    row->allocs = allocs;
    row->iters = iters;
    row->note = s->note;
    wk_bench_emit_json(b, row);
}

void wk_bench_record(wk_bench *b, const char *case_name, const char *impl, double ns_per_op,
                     size_t bytes_per_op, double allocs_per_op, const char *note)
{
    wk_bench_row *row = new_row(b);
    row->case_name = case_name;
    row->impl = impl;
    row->ns = ns_per_op;
    row->bytes = bytes_per_op;
    row->allocs = allocs_per_op;
    row->note = note;
    wk_bench_emit_json(b, row);
}

void wk_bench_say(wk_bench *b, const char *fmt, ...)
{
    FILE *out = b->json ? stderr : stdout;
    va_list ap;
    fprintf(out, "  ");
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
    fputc('\n', out);
}

void wk_bench_fail(wk_bench *b, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "wirekit-bench: %s: CHECK FAILED: ", b->suite);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    b->failures++;
}

uint8_t *wk_bench_read_shared(wk_bench *b, const char *rel, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", WK_SHARED_DATA_DIR, rel);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        wk_bench_fail(b, "cannot open %s", path);
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        wk_bench_fail(b, "cannot read %s", path);
        return NULL;
    }
    fclose(f);
    buf[n] = 0;
    *len = (size_t)n;
    return buf;
}

static void json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') {
            fputc('\\', out);
        }
        fputc(*s, out);
    }
    fputc('"', out);
}

void wk_bench_emit_json(wk_bench *b, const wk_bench_row *r)
{
    if (!b->json) {
        return;
    }
    printf("{\"suite\":");
    json_str(stdout, b->suite);
    printf(",\"case\":");
    json_str(stdout, r->case_name);
    printf(",\"impl\":");
    json_str(stdout, r->impl);
    printf(",\"ns_per_op\":%.3f", r->ns);
    if (r->bytes != 0 && r->ns > 0) {
        printf(",\"mb_per_s\":%.1f", (double)r->bytes / r->ns * 1e3);
    }
    printf(",\"allocs_per_op\":%.3f,\"bytes_per_op\":%zu,\"iterations\":%llu", r->allocs,
           r->bytes, (unsigned long long)r->iters);
    if (r->note != NULL) {
        printf(",\"note\":");
        json_str(stdout, r->note);
    }
    printf("}\n");
    fflush(stdout);
}

/* The baseline of a case is its first "wirekit" row. */
static const wk_bench_row *baseline(const wk_bench *b, size_t from, const char *case_name)
{
    for (size_t i = from; i < b->nrows; i++) {
        if (strcmp(b->rows[i].case_name, case_name) == 0 &&
            strcmp(b->rows[i].impl, "wirekit") == 0) {
            return &b->rows[i];
        }
    }
    return NULL;
}

void wk_bench_print_table(const wk_bench *b, size_t from)
{
    if (b->json || from == b->nrows) {
        return;
    }
    printf("\n  %-34s %-22s %12s %10s %10s  %s\n", "case", "impl", "ns/op", "MB/s",
           "allocs/op", "wirekit speed-up");
    const char *prev = "";
    for (size_t i = from; i < b->nrows; i++) {
        const wk_bench_row *r = &b->rows[i];
        const wk_bench_row *base = baseline(b, from, r->case_name);
        char mbs[32] = "-";
        if (r->bytes != 0 && r->ns > 0) {
            snprintf(mbs, sizeof mbs, "%.1f", (double)r->bytes / r->ns * 1e3);
        }
        char ratio[48] = "";
        if (base != NULL && base != r && base->ns > 0) {
            snprintf(ratio, sizeof ratio, "%.2fx", r->ns / base->ns);
        } else if (base == r) {
            snprintf(ratio, sizeof ratio, "(baseline)");
        }
        printf("  %-34s %-22s %12.1f %10s %10.2f  %s%s%s\n",
               strcmp(prev, r->case_name) == 0 ? "" : r->case_name, r->impl, r->ns, mbs,
               r->allocs, ratio, r->note ? "  " : "", r->note ? r->note : "");
        prev = r->case_name;
    }
    printf("\n");
}
