/*
 * The benchmark harness. A suite queues the implementations of a case with wk_bench_add()
 * and runs them with wk_bench_flush(): the harness calibrates each iteration count (or uses
 * the one given), then runs the repetitions interleaved (each repetition runs every
 * implementation once, in a rotating order, so a slow patch of the machine hits them all
 * alike), reports the median and the spread (fastest and slowest repetition), counts
 * allocations through the process-wide malloc wrappers, and prints a table with the ratio of
 * every peer to wirekit in the same case (or JSON lines). Under `--callgrind` it counts
 * instructions per operation instead of timing.
 */
#ifndef WK_BENCH_H
#define WK_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

typedef struct wk_bench wk_bench;

/** Runs `iters` operations and returns a value derived from their results (defeats dead-code
 *  elimination). */
typedef uint64_t (*wk_bench_fn)(void *arg, uint64_t iters);

/** The row is informative, not a like-for-like comparison (a wirekit variant, an ablation, a
 *  cached path): it gets no ratio and is listed apart. Rows whose impl starts with "wirekit"
 *  but is not exactly "wirekit" are informative without the flag. */
#define WK_BENCH_INFO 1u
/** The row is the case's wirekit baseline although its impl is not "wirekit". */
#define WK_BENCH_BASELINE 2u

typedef struct wk_bench_spec {
    const char *case_name;  /* e.g. "seed encode"; must outlive the run (static string) */
    const char *impl;       /* "wirekit" or the peer's name */
    wk_bench_fn fn;
    void *arg;              /* must stay valid until wk_bench_flush() returns */
    uint64_t iters;         /* 0 = calibrate to about 0.2 s per repetition */
    size_t bytes_per_op;    /* input or output bytes per op, for MB/s; 0 = none */
    const char *note;       /* optional short remark, printed as a footnote (static string) */
    unsigned flags;         /* WK_BENCH_INFO, WK_BENCH_BASELINE */
} wk_bench_spec;

/** Queues one (case, impl); nothing runs until wk_bench_flush(). */
void wk_bench_add(wk_bench *b, const wk_bench_spec *spec);

/** Runs every queued spec, the implementations of each case interleaved within each
 *  repetition, and records their rows in the order they were queued. */
void wk_bench_flush(wk_bench *b);

/** wk_bench_add() then wk_bench_flush(): a case with one implementation. */
void wk_bench_run(wk_bench *b, const wk_bench_spec *spec);

/** Records a figure measured elsewhere (e.g. another process) so it prints in the table.
 *  Ignored under --callgrind (there is no instruction count for it). */
void wk_bench_record(wk_bench *b, const char *case_name, const char *impl, double ns_per_op,
                     size_t bytes_per_op, double allocs_per_op, const char *note);

/** Records a request benchmark's row measured elsewhere (a load generator against a server):
 *  `ns_per_op` is wall ns per request at the measured throughput (the median of `reps`
 *  runs, `ns_min`/`ns_max` the fastest and slowest), with the latency percentiles; --json
 *  adds "p50_ns" and "p99_ns". Ignored under --callgrind. */
void wk_bench_record_requests(wk_bench *b, const char *case_name, const char *impl,
                              double ns_per_op, double ns_min, double ns_max, int reps,
                              double p50_ns, double p99_ns, const char *note);
/** Says how a peer was built (e.g. "Debian shared library, -O2 (distribution build)"); every
 *  row of that impl in the current suite carries it as a footnote and in --json. */
void wk_bench_peer(wk_bench *b, const char *impl, const char *build);

/** Prints a line of text for the suite (skips, checks); goes to stderr in --json mode. */
void wk_bench_say(wk_bench *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** Reports a failed correctness check (e.g. sizes differ); the run exits non-zero at the end. */
void wk_bench_fail(wk_bench *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** The figure recorded for (case, impl) in this run: the median ns per op, or instructions
 *  per op under --callgrind; 0 when there is no such row (e.g. filtered out by --case). */
double wk_bench_figure(const wk_bench *b, const char *case_name, const char *impl);

/** True in --quick mode: suites may shrink fixed iteration counts. */
bool wk_bench_quick(const wk_bench *b);

/** True under --callgrind: suites may skip parts that only make sense timed. */
bool wk_bench_callgrind(const wk_bench *b);

/** Reads a corpus file (e.g. "twitter.json") into a malloc'd, NUL-terminated buffer. Looks in
 *  --data DIR if given, else share/wirekit/bench beside the installed program, else the source
 *  tree's node_modules/simdjson/jsonexamples (npm simdjson@0.9.2, installed by
 *  scripts/deps.sh). NULL (and a failure that says where it looked) if missing. */
uint8_t *wk_bench_read_data(wk_bench *b, const char *name, size_t *len);

/** Monotonic clock in nanoseconds. */
uint64_t wk_bench_now_ns(void);

/** Allocation calls (malloc, calloc, realloc, aligned) made by this process so far. */
uint64_t wk_bench_alloc_count(void);

/** Starts argv[0] (searched in PATH; argv NULL-ended) with its standard output on a pipe, for
 *  a peer timed in its own process. Returns the read end (NULL when no pipe or fork could be
 *  made) and the child in *pid; a child that cannot exec exits 127. */
FILE *wk_bench_spawn(char *const *argv, pid_t *pid);
/** Closes `out` (may be NULL) and waits for the child `pid`: its exit status, -1 when it did
 *  not exit normally (a signal). */
int wk_bench_spawn_wait(FILE *out, pid_t pid);

/** Keeps the compiler from optimising `p` away. */
static inline void wk_bench_escape(const void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
}

#endif
