/* Shared declarations of the msgpack benchmark suite's files. */
#ifndef BENCH_MSGPACK_H
#define BENCH_MSGPACK_H

#include <stddef.h>
#include <stdint.h>

#include "bench.h"

/** The seed record cases: encode and decode, 1,000,000 times each (fewer with --quick). */
int wk_bench_msgpack_seed(wk_bench *b);

/** The corpus cases over a corpus file (wk_bench_read_data), e.g. "twitter.json". */
int wk_bench_msgpack_corpus(wk_bench *b, const char *name);

/**
 * Bench-only helper: converts JSON text to MessagePack with two peers (cJSON parses,
 * msgpack-c's packer writes), so the corpus exists as MessagePack before wirekit's own JSON
 * reader is involved. Integral numbers that fit int64 become integers, others doubles; object
 * member order is kept. Returns a malloc'd buffer (*len bytes) or NULL.
 */
uint8_t *bench_corpus_json_to_msgpack_cjson(const char *json, size_t json_len, size_t *len);

#endif
