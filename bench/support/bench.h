/*
 * The benchmark harness. A suite calls wk_bench_run() once per (case, implementation); the
 * harness calibrates the iteration count (or uses the one given), runs several repetitions,
 * keeps the fastest, counts allocations through the process-wide malloc wrappers, and prints
 * a table with the ratio of every peer to wirekit in the same case (or JSON lines).
 */
#ifndef WK_BENCH_H
#define WK_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct wk_bench wk_bench;

/** Runs `iters` operations and returns a value derived from their results (defeats dead-code
 *  elimination). */
typedef uint64_t (*wk_bench_fn)(void *arg, uint64_t iters);

typedef struct wk_bench_spec {
    const char *case_name;  /* e.g. "seed encode" */
    const char *impl;       /* "wirekit" or the peer's name */
    wk_bench_fn fn;
    void *arg;
    uint64_t iters;         /* 0 = calibrate to about 0.3 s per repetition */
    size_t bytes_per_op;    /* input or output bytes per op, for MB/s; 0 = none */
    const char *note;       /* optional short remark printed after the row */
} wk_bench_spec;

/** Measures one (case, impl). The first impl named "wirekit" in a case is the baseline. */
void wk_bench_run(wk_bench *b, const wk_bench_spec *spec);

/** Records a figure measured elsewhere (e.g. another process) so it prints in the table. */
void wk_bench_record(wk_bench *b, const char *case_name, const char *impl, double ns_per_op,
                     size_t bytes_per_op, double allocs_per_op, const char *note);

/** Prints a line of text for the suite (skips, checks); goes to stderr in --json mode. */
void wk_bench_say(wk_bench *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** Reports a failed correctness check (e.g. sizes differ); the run exits non-zero at the end. */
void wk_bench_fail(wk_bench *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** True in --quick mode: suites may shrink fixed iteration counts. */
bool wk_bench_quick(const wk_bench *b);

/** Reads a file under ../shared/data into a malloc'd buffer; NULL (and a failure) if missing. */
uint8_t *wk_bench_read_shared(wk_bench *b, const char *rel, size_t *len);

/** Monotonic clock in nanoseconds. */
uint64_t wk_bench_now_ns(void);

/** Allocation calls (malloc, calloc, realloc, aligned) made by this process so far. */
uint64_t wk_bench_alloc_count(void);

/** Keeps the compiler from optimising `p` away. */
static inline void wk_bench_escape(const void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
}

#endif
