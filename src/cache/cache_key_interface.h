/*
 * The cache's key hash, published to the Redis add-on (its key sets hash keys the same way the
 * memory tier does). Inline: a local hit hashes its key on the caller's path.
 */
#ifndef WK_CACHE_KEY_INTERFACE_H
#define WK_CACHE_KEY_INTERFACE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t wk__rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint64_t wk__mix(uint64_t a, uint64_t b)
{
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t wk__rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/** 64-bit hash of a key (fast, well mixed; not for hostile-collision resistance). Inline:
 *  a local hit hashes its key on the caller's path. */
static inline uint64_t wk__cache_hash(const void *p, size_t len)
{
    /* 8-byte blocks, then the last 1 to 8 bytes in one or two (possibly overlapping) loads
     * instead of a byte loop: a 20-byte key is three multiplications. */
    const uint8_t *b = p;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ len;
    size_t n = len;
    while (n > 8) {
        h = wk__mix(h ^ wk__rd64(b), 0xa0761d6478bd642full);
        b += 8;
        n -= 8;
    }
    uint64_t tail;
    if (len >= 8) {
        tail = wk__rd64(b + n - 8); /* overlaps the last block when n < 8 */
    } else if (n >= 4) {
        tail = (wk__rd32(b) << 32) | wk__rd32(b + n - 4);
    } else if (n > 0) {
        tail = ((uint64_t)b[0] << 16) | ((uint64_t)b[n >> 1] << 8) | b[n - 1];
    } else {
        tail = 0;
    }
    return wk__mix(h ^ tail, 0xe7037ed1a0b428dbull);
}

#endif
