/* Harness state shared by bench.c and main.c; suites only see bench.h. */
#ifndef WK_BENCH_INTERNAL_H
#define WK_BENCH_INTERNAL_H

#include "bench.h"

typedef struct wk_bench_row {
    const char *case_name;
    const char *impl;
    double ns;
    size_t bytes;
    double allocs;
    uint64_t iters;
    const char *note;
} wk_bench_row;

struct wk_bench {
    bool json;
    bool quick;
    uint64_t iterations; /* --iterations N: every case runs N iterations once (0 = off) */
    const char *suite;
    wk_bench_row *rows;
    size_t nrows, cap;
    int failures;
};

void wk_bench_emit_json(wk_bench *b, const wk_bench_row *r);
void wk_bench_print_table(const wk_bench *b, size_t from);

#endif
