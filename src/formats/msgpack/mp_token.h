/*
 * The one place that knows MessagePack's byte layout on the reading side: wk__mp_token()
 * decodes the value that starts at a cursor into an event. The reader, the validate-only
 * scan, the fused tree decoder and `wirekit inspect` all call it, so every path applies the
 * same checks. It is static inline so that each caller's loop gets its own copy, specialised
 * by the compiler, instead of paying a call per value.
 *
 * Checks made here: the header and any payload fit in the remaining bytes; a container's
 * count is no larger than the bytes left (a map's 2n elements each need a byte); 0xc1 is an
 * error; a timestamp extension (type -1) has 4, 8 or 12 bytes and nanoseconds below 1e9.
 * Checks made by the callers: nesting depth and, optionally, UTF-8 of strings.
 *
 * An internal interface of the msgpack module, documented here as such: besides the module's
 * own files, the layers above MessagePack in the module graph (core <- msgpack <- schema,
 * convert) may include it to read MessagePack bytes without a reader, as the schema module's
 * fused decoder does. The contract is this header: wk__mp_token() and its messages; it never
 * allocates and never reads outside [*pp, end).
 * Flow: bytes -> wk__mp_token -> one event -> its callers: the reader (mp_reader.c), the
 * scans (mp_scan.c), the tree builders (mp_cursor.h), the unpacker's framing
 * (mp_unpacker.c), the schema decoders (schema_mp.c).
 */
#ifndef WK_MP_TOKEN_H
#define WK_MP_TOKEN_H

#include <string.h>

#include "core/kernel_interface.h"
#include "wirekit/msgpack.h"

/* Big-endian loads of 16, 32 and 64 bits from p (any alignment), as MessagePack stores its
 * lengths and numbers. */
static inline uint16_t wk__mp_load16(const uint8_t *p)
{
    return (uint16_t)((uint16_t)(p[0] << 8) | p[1]);
}
static inline uint32_t wk__mp_load32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return __builtin_bswap32(v);
}
static inline uint64_t wk__mp_load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return __builtin_bswap64(v);
}

/* Static messages, shared so that every path reports a problem in the same words. */
#define WK_MP_MSG_TRUNCATED "input ends inside a value"
#define WK_MP_MSG_C1 "byte 0xc1 is never used in MessagePack"
#define WK_MP_MSG_STR_LEN "string length exceeds the remaining input"
#define WK_MP_MSG_BIN_LEN "binary length exceeds the remaining input"
#define WK_MP_MSG_EXT_LEN "extension length exceeds the remaining input"
#define WK_MP_MSG_ARRAY_COUNT "array count exceeds the remaining input"
#define WK_MP_MSG_MAP_COUNT "map count exceeds the remaining input (2 bytes per pair at least)"
#define WK_MP_MSG_TS_LEN "timestamp extension must have 4, 8 or 12 bytes"
#define WK_MP_MSG_TS_NSEC "timestamp nanoseconds must be below 1000000000"
#define WK_MP_MSG_DEPTH "nesting deeper than the configured limit"
#define WK_MP_MSG_UTF8 "string is not valid UTF-8"
#define WK_MP_MSG_NOMEM "out of memory for the nesting stack"

/* Decodes the timestamp payload `d[0..n)` (extension type -1). */
static inline wk_status wk__mp_timestamp(const uint8_t *d, uint32_t n, wk_event *ev,
                                         const char **msg)
{
    if (n == 4) {
        ev->v.ts.sec = (int64_t)wk__mp_load32(d);
        ev->v.ts.nsec = 0;
    } else if (n == 8) {
        uint64_t x = wk__mp_load64(d);
        ev->v.ts.nsec = (uint32_t)(x >> 34);
        ev->v.ts.sec = (int64_t)(x & 0x3ffffffffull);
    } else if (n == 12) {
        ev->v.ts.nsec = wk__mp_load32(d);
        ev->v.ts.sec = (int64_t)wk__mp_load64(d + 4);
    } else {
        *msg = WK_MP_MSG_TS_LEN;
        return WK_ERR_SYNTAX;
    }
    if (ev->v.ts.nsec > 999999999u) {
        *msg = WK_MP_MSG_TS_NSEC;
        return WK_ERR_SYNTAX;
    }
    ev->type = WK_EV_TIMESTAMP;
    return WK_OK;
}

/* An extension of `n` data bytes at `p` (type byte first). */
static inline wk_status wk__mp_ext(const uint8_t **pp, const uint8_t *p, const uint8_t *end,
                                   uint32_t n, wk_event *ev, const char **msg)
{
    if (WK__UNLIKELY((size_t)(end - p) < 1 || (size_t)(end - p) - 1 < n)) {
        *msg = (size_t)(end - p) < 1 ? WK_MP_MSG_TRUNCATED : WK_MP_MSG_EXT_LEN;
        return WK_ERR_TRUNCATED;
    }
    int8_t type = (int8_t)p[0];
    if (type == WK_MP_EXT_TIMESTAMP) {
        wk_status st = wk__mp_timestamp(p + 1, n, ev, msg);
        if (st != WK_OK) {
            return st;
        }
    } else {
        ev->type = WK_EV_EXT;
        ev->v.ext.type = type;
        ev->v.ext.ptr = p + 1;
        ev->v.ext.len = n;
    }
    *pp = p + 1 + n;
    return WK_OK;
}

/*
 * Decodes the value at `*pp` (which is < end) into `ev`. On success `*pp` moves past the
 * header and any str/bin/ext payload (a container's elements are left for the caller). On
 * failure `*pp` is unchanged, `*msg` says why and the status is WK_ERR_TRUNCATED or
 * WK_ERR_SYNTAX.
 */
static inline wk_status wk__mp_token(const uint8_t **pp, const uint8_t *end, wk_event *ev,
                                     const char **msg)
{
    const uint8_t *p = *pp;
    uint8_t b = *p++;
    size_t left = (size_t)(end - p);
    uint32_t n;
    ev->f32 = false;
    /* The one-byte forms first, by range: positive fixint, negative fixint, fixmap,
     * fixarray, fixstr. Non-negative integers are always WK_EV_UINT, whatever their
     * encoding, so that equal numbers give equal events. */
    if (b <= 0x7f) {
        ev->type = WK_EV_UINT;
        ev->v.u = b;
        *pp = p;
        return WK_OK;
    }
    if (b >= 0xe0) {
        ev->type = WK_EV_INT;
        ev->v.i = (int8_t)b;
        *pp = p;
        return WK_OK;
    }
    if (b <= 0x8f) {
        n = b & 0x0fu;
        goto map;
    }
    if (b <= 0x9f) {
        n = b & 0x0fu;
        goto array;
    }
    if (b <= 0xbf) {
        n = b & 0x1fu;
        goto str;
    }
    /* The rest by their first byte: each checks that its fixed-size header is there
     * (`left` bytes follow b) before reading it. */
    switch (b) {
    case 0xc0:
        ev->type = WK_EV_NIL;
        *pp = p;
        return WK_OK;
    case 0xc2:
    case 0xc3:
        ev->type = WK_EV_BOOL;
        ev->v.b = b == 0xc3;
        *pp = p;
        return WK_OK;
    case 0xc4: /* bin 8, 16, 32: a length, then the bytes (checked at bin:) */
        if (left < 1) {
            goto truncated;
        }
        n = p[0];
        p += 1;
        goto bin;
    case 0xc5:
        if (left < 2) {
            goto truncated;
        }
        n = wk__mp_load16(p);
        p += 2;
        goto bin;
    case 0xc6:
        if (left < 4) {
            goto truncated;
        }
        n = wk__mp_load32(p);
        p += 4;
        goto bin;
    case 0xc7: /* ext 8, 16, 32: a length, the type byte, the data */
        if (left < 1) {
            goto truncated;
        }
        return wk__mp_ext(pp, p + 1, end, p[0], ev, msg);
    case 0xc8:
        if (left < 2) {
            goto truncated;
        }
        return wk__mp_ext(pp, p + 2, end, wk__mp_load16(p), ev, msg);
    case 0xc9:
        if (left < 4) {
            goto truncated;
        }
        return wk__mp_ext(pp, p + 4, end, wk__mp_load32(p), ev, msg);
    case 0xca: { /* float 32, widened exactly; f32 says so (writers keep the width) */
        if (left < 4) {
            goto truncated;
        }
        uint32_t bits = wk__mp_load32(p);
        float f;
        memcpy(&f, &bits, 4);
        ev->type = WK_EV_FLOAT;
        ev->f32 = true;
        ev->v.f = (double)f;
        *pp = p + 4;
        return WK_OK;
    }
    case 0xcb: {
        if (left < 8) {
            goto truncated;
        }
        uint64_t bits = wk__mp_load64(p);
        ev->type = WK_EV_FLOAT;
        memcpy(&ev->v.f, &bits, 8);
        *pp = p + 8;
        return WK_OK;
    }
    case 0xcc: /* uint 8, 16, 32, 64 */
        if (left < 1) {
            goto truncated;
        }
        ev->type = WK_EV_UINT;
        ev->v.u = p[0];
        *pp = p + 1;
        return WK_OK;
    case 0xcd:
        if (left < 2) {
            goto truncated;
        }
        ev->type = WK_EV_UINT;
        ev->v.u = wk__mp_load16(p);
        *pp = p + 2;
        return WK_OK;
    case 0xce:
        if (left < 4) {
            goto truncated;
        }
        ev->type = WK_EV_UINT;
        ev->v.u = wk__mp_load32(p);
        *pp = p + 4;
        return WK_OK;
    case 0xcf:
        if (left < 8) {
            goto truncated;
        }
        ev->type = WK_EV_UINT;
        ev->v.u = wk__mp_load64(p);
        *pp = p + 8;
        return WK_OK;
    case 0xd0: /* int 8, 16, 32, 64: sign-extended, then sorted by sign at sint: */
        if (left < 1) {
            goto truncated;
        }
        ev->v.i = (int8_t)p[0];
        p += 1;
        goto sint;
    case 0xd1:
        if (left < 2) {
            goto truncated;
        }
        ev->v.i = (int16_t)wk__mp_load16(p);
        p += 2;
        goto sint;
    case 0xd2:
        if (left < 4) {
            goto truncated;
        }
        ev->v.i = (int32_t)wk__mp_load32(p);
        p += 4;
        goto sint;
    case 0xd3:
        if (left < 8) {
            goto truncated;
        }
        ev->v.i = (int64_t)wk__mp_load64(p);
        p += 8;
        goto sint;
    case 0xd4: /* fixext 1, 2, 4, 8, 16: the type byte, then that many data bytes */
        return wk__mp_ext(pp, p, end, 1, ev, msg);
    case 0xd5:
        return wk__mp_ext(pp, p, end, 2, ev, msg);
    case 0xd6:
        return wk__mp_ext(pp, p, end, 4, ev, msg);
    case 0xd7:
        return wk__mp_ext(pp, p, end, 8, ev, msg);
    case 0xd8:
        return wk__mp_ext(pp, p, end, 16, ev, msg);
    case 0xd9: /* str 8, 16, 32 */
        if (left < 1) {
            goto truncated;
        }
        n = p[0];
        p += 1;
        goto str;
    case 0xda:
        if (left < 2) {
            goto truncated;
        }
        n = wk__mp_load16(p);
        p += 2;
        goto str;
    case 0xdb:
        if (left < 4) {
            goto truncated;
        }
        n = wk__mp_load32(p);
        p += 4;
        goto str;
    case 0xdc: /* array 16, 32 and map 16, 32: a count; the elements follow as tokens */
        if (left < 2) {
            goto truncated;
        }
        n = wk__mp_load16(p);
        p += 2;
        goto array;
    case 0xdd:
        if (left < 4) {
            goto truncated;
        }
        n = wk__mp_load32(p);
        p += 4;
        goto array;
    case 0xde:
        if (left < 2) {
            goto truncated;
        }
        n = wk__mp_load16(p);
        p += 2;
        goto map;
    case 0xdf:
        if (left < 4) {
            goto truncated;
        }
        n = wk__mp_load32(p);
        p += 4;
        goto map;
    default: /* 0xc1 */
        *msg = WK_MP_MSG_C1;
        return WK_ERR_SYNTAX;
    }
    /* The shared tails. A payload must lie wholly within the input; a container's count is
     * checked against the bytes left (one byte at least per element, two per pair), which
     * bounds what a builder allocates for it by the input's size. */
sint:
    if (ev->v.i >= 0) {
        ev->type = WK_EV_UINT;
        ev->v.u = (uint64_t)ev->v.i;
    } else {
        ev->type = WK_EV_INT;
    }
    *pp = p;
    return WK_OK;
str:
    if (WK__UNLIKELY((size_t)(end - p) < n)) {
        *msg = WK_MP_MSG_STR_LEN;
        return WK_ERR_TRUNCATED;
    }
    ev->type = WK_EV_STR;
    ev->v.str.ptr = (const char *)p;
    ev->v.str.len = n;
    *pp = p + n;
    return WK_OK;
bin:
    if (WK__UNLIKELY((size_t)(end - p) < n)) {
        *msg = WK_MP_MSG_BIN_LEN;
        return WK_ERR_TRUNCATED;
    }
    ev->type = WK_EV_BIN;
    ev->v.str.ptr = (const char *)p;
    ev->v.str.len = n;
    *pp = p + n;
    return WK_OK;
array:
    if (WK__UNLIKELY((size_t)(end - p) < n)) {
        *msg = WK_MP_MSG_ARRAY_COUNT;
        return WK_ERR_TRUNCATED;
    }
    ev->type = WK_EV_ARRAY;
    ev->v.count = n;
    *pp = p;
    return WK_OK;
map:
    if (WK__UNLIKELY((size_t)(end - p) / 2 < n)) {
        *msg = WK_MP_MSG_MAP_COUNT;
        return WK_ERR_TRUNCATED;
    }
    ev->type = WK_EV_MAP;
    ev->v.count = n;
    *pp = p;
    return WK_OK;
truncated:
    *msg = WK_MP_MSG_TRUNCATED;
    return WK_ERR_TRUNCATED;
}

/*
 * How many bytes from `p` wk__mp_token needs before it can decode the value at `p`, when
 * `avail` (>= 1) are present: the header, then a str/bin/ext payload, or one byte per element
 * of an array and two per pair of a map (the count check above). Incremental readers use it
 * to wait for that many bytes instead of decoding the token again at every feed.
 */
static inline uint64_t wk__mp_token_need(const uint8_t *p, size_t avail)
{
    uint8_t b = p[0];
    uint64_t h;
    if (b <= 0x7f || b >= 0xe0 || (b >= 0xc0 && b <= 0xc3)) {
        return 1;
    }
    if (b <= 0x8f) {
        return 1 + 2 * (uint64_t)(b & 0x0fu);
    }
    if (b <= 0x9f) {
        return 1 + (uint64_t)(b & 0x0fu);
    }
    if (b <= 0xbf) {
        return 1 + (uint64_t)(b & 0x1fu);
    }
    switch (b) {
    case 0xca: case 0xce: case 0xd2: return 5;
    case 0xcb: case 0xcf: case 0xd3: return 9;
    case 0xcc: case 0xd0: return 2;
    case 0xcd: case 0xd1: return 3;
    case 0xd4: return 3;
    case 0xd5: return 4;
    case 0xd6: return 6;
    case 0xd7: return 10;
    case 0xd8: return 18;
    case 0xc4: case 0xd9: h = 2; break;                       /* 8-bit length */
    case 0xc5: case 0xda: case 0xdc: case 0xde: h = 3; break; /* 16-bit length or count */
    case 0xc7: h = 3; break;                                  /* 8-bit length, type */
    case 0xc8: h = 4; break;
    case 0xc9: h = 6; break;
    default: h = 5; break;                                    /* 32-bit length or count */
    }
    if (avail < h) {
        return h;
    }
    uint64_t n;
    if (b == 0xc4 || b == 0xd9 || b == 0xc7) {
        n = p[1];
    } else if (h == 3 || b == 0xc8) {
        n = wk__mp_load16(p + 1);
    } else {
        n = wk__mp_load32(p + 1);
    }
    return h + (b == 0xde || b == 0xdf ? 2 * n : n);
}

/* A growable stack of "elements left" per open container: inline slots first, then heap. */
typedef struct wk__mp_stack {
    uint64_t *slots;           /* the caller's inline array, or the heap copy */
    uint32_t cap;              /* slots it holds */
    bool heap;                 /* slots is on the heap (wk__mp_stack_free frees it) */
    const wk_allocator *alloc; /* for the heap copy */
} wk__mp_stack;

/* Grows `s` to hold at least `need` slots (need > cap). Returns false on allocation failure. */
bool wk__mp_stack_grow(wk__mp_stack *s, uint32_t need);

/* Frees the heap slots, if any (the stack is then back on nothing: reinitialize to reuse). */
void wk__mp_stack_free(wk__mp_stack *s);

/*
 * The validate-only scan of one value starting at `*pp`, with `depth0` containers already
 * open around it (for the reader's skip). Advances `*pp` past the value on success; on
 * failure sets `*err_at` to the offending position and `*msg`.
 */
wk_status wk__mp_scan(const uint8_t **pp, const uint8_t *end, uint32_t depth0,
                      uint32_t max_depth, bool strict_utf8, const wk_allocator *alloc,
                      const uint8_t **err_at, const char **msg);

#endif
