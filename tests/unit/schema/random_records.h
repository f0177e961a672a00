/*
 * Random inputs for the schema encoders' comparison tests (test_schema_msgpack.c,
 * test_schema_mp_fold.c): a fixed-seed xorshift64 (a failing record reproduces; each test
 * sets its own seed with rnd_seed), integers at every MessagePack form's edge, strings at the
 * headers' and copy steps' edges, and wk_value trees of every node type.
 */
#ifndef RANDOM_RECORDS_H
#define RANDOM_RECORDS_H

#include <stdint.h>

#include "wirekit/arena.h"
#include "wirekit/value.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static inline void rnd_seed(uint64_t seed)
{
    rng_state = seed;
}

/* xorshift64 */
static inline uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    rng_state = x;
    return x;
}

static inline uint32_t rnd_below(uint32_t n)
{
    return (uint32_t)(rnd() % n);
}

/* An integer at a MessagePack form's edge (fixint, int8..int64, uint8..uint64) or anywhere. */
static inline int64_t rnd_int(void)
{
    static const int64_t edges[] = {0,      1,      127,    128,         255,
                                    256,    65535,  65536,  4294967295ll, 4294967296ll,
                                    -1,     -32,    -33,    -128,        -129,
                                    -32768, -32769, INT32_MIN, INT64_MIN, INT64_MAX};
    if (rnd_below(3) == 0) {
        return (int64_t)rnd() >> rnd_below(64);
    }
    return edges[rnd_below(sizeof edges / sizeof edges[0])];
}

/* A string in the arena whose length is at a header's edge (fixstr 31/str8 32, str8
 * 255/str16 256), a 16-byte copy step's or the folded encoder's (up to 31 bytes written, longer
 * ones handed over), or anywhere below 40; bytes 1..255 (no NUL: a char * field). */
static inline char *rnd_str(wk_arena *a, size_t *len)
{
    static const size_t edges[] = {0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 30, 31, 32, 33, 255, 256, 299};
    size_t n = rnd_below(2) == 0 ? edges[rnd_below(sizeof edges / sizeof edges[0])]
                                 : rnd_below(40);
    char *c = wk_arena_alloc(a, n + 1, 1);
    for (size_t i = 0; i < n; i++) {
        c[i] = (char)(1 + rnd_below(255));
    }
    c[n] = '\0';
    *len = n;
    return c;
}

/* A random wk_value: scalars and strings mostly (the fast paths' own), containers now and then
 * (a container of scalars is the fast paths' loop; a nested one goes to the tree writer), and
 * the node types the fast paths hand over (float32, binary). */
static inline void rnd_value(wk_value *v, wk_arena *a, int depth)
{
    size_t n;
    switch (rnd_below(depth > 0 ? 11 : 8)) {
    case 0: wk_value_set_nil(v); break;
    case 1: wk_value_set_bool(v, rnd_below(2) != 0); break;
    case 2: wk_value_set_int(v, rnd_int()); break;
    case 3: wk_value_set_uint(v, (uint64_t)rnd_int()); break;
    case 4:
        wk_value_set_float(v, (double)rnd_int() / 7);
        if (rnd_below(5) == 0) {
            v->flags = WK_VALF_F32;
            v->u.f = (double)(float)v->u.f;
        }
        break;
    case 5:
    case 6: {
        char *c = rnd_str(a, &n);
        wk_value_set_str(v, c, n);
        break;
    }
    case 7: wk_value_set_bin(v, "\x00\x01\xff", rnd_below(4)); break;
    case 8: {
        uint32_t k = rnd_below(6);
        wk_value_set_array(v, a, k);
        for (uint32_t i = 0; i < k; i++) {
            rnd_value(&v->u.items[i], a, depth - 1);
        }
        break;
    }
    default: {
        uint32_t k = rnd_below(6);
        wk_value_set_map(v, a, k);
        for (uint32_t i = 0; i < k; i++) {
            rnd_value(&v->u.pairs[i].key, a, 0);
            rnd_value(&v->u.pairs[i].val, a, depth - 1);
        }
        break;
    }
    }
}

#endif
