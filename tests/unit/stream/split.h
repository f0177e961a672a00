/*
 * Test helpers for the stream tests: a deterministic PRNG, chunk-split plans (random, every
 * byte alone, a few big pieces) and a feeder that copies each chunk into its own heap block
 * and frees it as soon as the unpacker asks for the next one, so that ASan catches an
 * unpacker that keeps pointing into a chunk it has given back; and the reference events of
 * a JSON value. The libFuzzer harness fuzz_stream_split links this file too.
 */
#ifndef WK_TEST_STREAM_SPLIT_H
#define WK_TEST_STREAM_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "wirekit/wirekit.h"

typedef struct split_rng {
    uint64_t s;
} split_rng;

uint64_t split_next(split_rng *r);
/* Uniform in [0, n) (n > 0). */
size_t split_below(split_rng *r, size_t n);

/* Chunk sizes that add up to `len`: kind 0 = random (1..max_piece), 1 = every byte alone,
 * 2 = one chunk, 3 = random with many 1-byte pieces. Returns the count; `sizes` is malloc'd. */
size_t split_plan(split_rng *r, size_t len, int kind, size_t max_piece, size_t **sizes);

/* Holds the current chunk copy. */
typedef struct split_feeder {
    const uint8_t *data;
    size_t len;
    size_t *sizes;
    size_t count;
    size_t next; /* next chunk index */
    size_t pos;
    uint8_t *copy; /* heap copy of the current chunk */
} split_feeder;

void split_feeder_init(split_feeder *f, const uint8_t *data, size_t len, size_t *sizes,
                       size_t count);
/* Frees the previous copy and returns a fresh copy of the next chunk (NULL when none left;
 * then *n = 0). A zero-size chunk gives a non-NULL pointer with *n = 0. */
const uint8_t *split_feeder_next(split_feeder *f, size_t *n);
void split_feeder_free(split_feeder *f);

/* The events wk_json_reader gives on d[0..n) (options `o`), written as MessagePack into `out`
 * (cleared first): what an unpacker's events for that value must re-encode to. */
void split_json_events(const uint8_t *d, size_t n, const wk_read_opts *o, wk_buf *out);

/* A JSON unpacker's events for one value, gathered over the calls it takes (WK_ERR_AGAIN
 * may come inside a value) and written as MessagePack into `got`. */
typedef struct split_events {
    wk_buf got, want; /* the value's events; the reference's (for split_events_match) */
    wk_mp_writer w;
    wk_sink sink;
    bool open; /* a value's events are being gathered */
} split_events;

void split_events_init(split_events *e);
/* wk_json_unpacker_next_events into `got`: cleared at a value's start, complete when this
 * returns anything but WK_ERR_AGAIN. */
wk_status split_events_next(split_events *e, wk_json_unpacker *u);
/* Whether `got` equals the reference events of d[0..n) (split_json_events). */
bool split_events_match(split_events *e, const uint8_t *d, size_t n, const wk_read_opts *o);
void split_events_free(split_events *e);

#endif
