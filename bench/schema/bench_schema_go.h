/* The schema suite's Go peers (bench_schema_go.c). */
#ifndef WK_BENCH_SCHEMA_GO_H
#define WK_BENCH_SCHEMA_GO_H
#include "bench.h"

/** Runs seed 004's Go benchmark for `iters` iterations per operation and records its rows
 *  in the seed cases; `json` and `mp_len` are wirekit's outputs, to check Go's against.
 *  Says it is skipped when the build has no Go toolchain. */
void wk_bench_schema_go_rows(wk_bench *b, const uint8_t *json, size_t json_len, size_t mp_len,
                             uint64_t iters);

#endif
