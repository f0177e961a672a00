/*
 * MessagePack's token decoder on the reading side: wk__mp_token() decodes the value that
 * starts at a cursor into an event. The reader, the validate-only scan, the unpacker's
 * framing, the schema decoders and `wirekit inspect` all call it; the tree build loop
 * (mp_build_loop.h) writes nodes instead of events from the same byte layout,
 * mp_token_cases.h, which both include: one place knows the format, so every path applies
 * the same checks. It is static inline so that each caller's loop gets its own copy,
 * specialised by the compiler, instead of paying a call per value.
 *
 * Checks made here (in mp_token_cases.h): the header and any payload fit in the remaining
 * bytes; a container's count is no larger than the bytes left (a map's 2n elements each need
 * a byte); 0xc1 is an error; a timestamp extension (type -1) has 4, 8 or 12 bytes and
 * nanoseconds below 1e9. Checks made by the callers: nesting depth and, optionally, UTF-8 of
 * strings.
 *
 * An internal interface of the msgpack module, documented here as such: besides the module's
 * own files, the layers above MessagePack in the module graph (core <- msgpack <- schema,
 * convert) may include it to read MessagePack bytes without a reader, as the schema module's
 * fused decoder does. The contract is this header: wk__mp_token() and its messages; it never
 * allocates and never reads outside [*pp, end).
 * Flow: bytes -> mp_token_cases.h -> wk__mp_token -> one event -> its callers: the reader
 * (mp_reader.c), the scans (mp_scan.c), the unpacker's framing (mp_unpacker.c), the schema
 * decoders (schema_mp.c); bytes -> mp_token_cases.h -> nodes in the tree build loop.
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

/*
 * Decodes the value at `*pp` (which is < end) into `ev`. On success `*pp` moves past the
 * header and any str/bin/ext payload (a container's elements are left for the caller). On
 * failure `*pp` is unchanged, `*msg` says why and the status is WK_ERR_TRUNCATED or
 * WK_ERR_SYNTAX. Its body is mp_token_cases.h, the byte layout, with actions that fill the
 * event. Non-negative integers are always WK_EV_UINT, whatever their encoding, so that equal
 * numbers give equal events.
 */
static inline wk_status wk__mp_token(const uint8_t **pp, const uint8_t *end, wk_event *ev,
                                     const char **msg)
{
    const uint8_t *p = *pp;
    ev->f32 = false;
#define MP_TC_DONE(t) \
    ev->type = (t); \
    *pp = p; \
    return WK_OK
#define MP_TC_NIL() MP_TC_DONE(WK_EV_NIL)
#define MP_TC_BOOL(x) \
    ev->v.b = (x); \
    MP_TC_DONE(WK_EV_BOOL)
#define MP_TC_UINT(x) \
    ev->v.u = (x); \
    MP_TC_DONE(WK_EV_UINT)
#define MP_TC_INT(x) \
    ev->v.i = (x); \
    MP_TC_DONE(WK_EV_INT)
#define MP_TC_FLOAT(d, is32) \
    ev->v.f = (d); \
    ev->f32 = (is32); \
    MP_TC_DONE(WK_EV_FLOAT)
#define MP_TC_STR(s, n) \
    ev->v.str.ptr = (const char *)(s); \
    ev->v.str.len = (n); \
    MP_TC_DONE(WK_EV_STR)
#define MP_TC_BIN(s, n) \
    ev->v.str.ptr = (const char *)(s); \
    ev->v.str.len = (n); \
    MP_TC_DONE(WK_EV_BIN)
#define MP_TC_EXT(t, s, n) \
    ev->v.ext.type = (t); \
    ev->v.ext.ptr = (s); \
    ev->v.ext.len = (n); \
    MP_TC_DONE(WK_EV_EXT)
#define MP_TC_TS(s, ns) \
    ev->v.ts.sec = (s); \
    ev->v.ts.nsec = (ns); \
    MP_TC_DONE(WK_EV_TIMESTAMP)
#define MP_TC_ARRAY(n) \
    ev->v.count = (n); \
    MP_TC_DONE(WK_EV_ARRAY)
#define MP_TC_MAP(n) \
    ev->v.count = (n); \
    MP_TC_DONE(WK_EV_MAP)
#define MP_TC_FAIL(st, m) \
    *msg = (m); \
    return (st)
#include "formats/msgpack/mp_token_cases.h"
#undef MP_TC_DONE
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
