/*
 * The fused JSON decoder of the schema codec (wk_schema_decode_json, and so the JSON
 * serializer's decode). Flow: bytes -> lexer (lex.h) -> the flat plan loop (dec_flat(),
 * dec_flat_avx2(): schema_json_dec_loop.h) -> the caller's struct; on any give-up, bytes ->
 * wk_json_reader -> wk_schema_decode (dec_generic()) from the start.
 *
 * It runs the compiled plan of a flat struct (no nested struct or array, at most 64 fields,
 * names that are their own JSON text; schema_index.c builds it with the MessagePack plan),
 * the way schema_mp.c's fast path does: it compares the expected key's `"name":` as two
 * masked words (any other key through the index), reads values with the JSON lexer's inline
 * primitives (lex.h: whitespace, strings with their UTF-8 check, numbers correctly
 * rounded), copies strings with one arena bump, and builds a wk_value that is a scalar or a
 * container of scalars in place (deeper ones through the fused tree parser). The plan loop and
 * the helpers that scan are schema_json_dec_loop.h, instantiated here once per instance of the
 * lexer's wide scans (baseline, AVX2) and chosen once per call like the tree parser's
 * (wk__json_simd); the helpers that do not scan are here.
 *
 * It gives up at anything unusual (every error, an unknown key, a key with an escape, a byte
 * order mark, a missing required field, trailing bytes; a struct that is not flat never
 * starts) and the generic event path then runs from the start: wk_schema_decode from a
 * wk_json_reader. Outcomes, error statuses, messages, offsets and field paths are therefore
 * the generic path's own; the fast path only has to accept exactly what the generic one
 * accepts and store exactly what it stores (tests and the fuzz harness compare the two on
 * random records, truncations and mutations, with each lexer instance). One difference is
 * visible: strings in wk_value fields that had no escape carry WK_VALF_PLAIN (the JSON
 * parser's hint that they need no escaping when written again), which the generic path does
 * not set; and a retry spends arena bytes twice. Repeated keys need nothing special: like the
 * generic loop, the fast loop stores each occurrence, so the last one wins.
 */
#include <float.h>

#include "formats/json/lex.h"
#include "schema/schema_decode_interface.h"
#include "schema/schema_fast_interface.h"
#include "value/value_build_interface.h"
#include "wirekit/json.h"

/* The generic path (every fallback): the schema decoder's loop over a JSON reader on the
 * same bytes, then a check that only whitespace follows. Returns its status, err filled as
 * the generic path fills it. */
static __attribute__((noinline)) wk_status dec_generic(const wk_schema *s, const void *data,
                                                       size_t len, void *obj, wk_arena *arena,
                                                       const wk_schema_opts *opts,
                                                       wk_schema_error *err)
{
    wk_json_reader r;
    /* Escaped strings go to the reader's scratch buffer: the decoder copies every string it
     * keeps before asking for the next event. */
    wk_json_reader_init(&r, data, len, NULL, NULL);
    wk_source src;
    wk_json_reader_source(&r, &src);
    wk_status st = wk_schema_decode(s, &src, obj, arena, opts, err);
    if (st == WK_OK) {
        wk_event ev;
        st = wk_json_reader_next(&r, &ev);
        if (st == WK_ERR_EOF) {
            st = WK_OK;
        } else if (st == WK_OK) {
            st = wk_error_set(err != NULL ? &err->base : NULL, WK_ERR_TRAILING,
                              wk_json_reader_offset(&r), "trailing bytes after the value");
        } else if (err != NULL) {
            wk_json_reader_error(&r, &err->base);
            err->path[0] = '\0';
        }
    }
    wk_json_reader_free(&r);
    return st;
}


/* The decoder's helpers are inlined into the plan loop at -O2 too, where GCC otherwise keeps
 * them out of line (measured as instructions per seed record: wirekit bench --suite schema
 * --callgrind). */
#define DEC_HOT static inline __attribute__((always_inline))

/* The literal `null` at p (p < end). */
static inline bool dec_is_null(const uint8_t *p, const uint8_t *end)
{
    return end - p >= 4 && memcmp(p, "null", 4) == 0;
}

/* An integer field (p < end): the general loop's range rules; null is accepted and ignored
 * when the field is WK_NULLABLE. Returns the next byte or NULL. */
DEC_HOT const uint8_t *dec_int_field(const wk__mp_op *op, const uint8_t *p,
                                     const uint8_t *end, uint8_t *dst)
{
    if (*p == 'n') {
        return (op->flags & WK_NULLABLE) != 0 && dec_is_null(p, end) ? p + 4 : NULL;
    }
    wk__json_num num;
    const uint8_t *q = wk__json_small_uint(p, end, &num.v.u);
    if (WK__LIKELY(q != NULL)) {
        num.kind = WK__NUM_UINT;
        p = q;
    } else {
        wk__json_fail f = {WK_OK, NULL, NULL};
        if (*p != '-' && !wk__json_digit(*p)) {
            return NULL;
        }
        p = wk__json_lex_number(p, end, false, &num, &f);
        if (p == NULL || num.kind == WK__NUM_DOUBLE) {
            return NULL;
        }
    }
    return wk__dec_int_store(op->kind, op->size, num.kind == WK__NUM_INT, num.v.u, dst) ? p
                                                                                       : NULL;
}

/* A float field (p < end): any number, float32 range checked as the general loop does; null
 * accepted and ignored when WK_NULLABLE. */
static __attribute__((noinline)) const uint8_t *dec_float_field(const wk__mp_op *op,
                                                                const uint8_t *p,
                                                                const uint8_t *end,
                                                                uint8_t *dst)
{
    if (*p == 'n') {
        return (op->flags & WK_NULLABLE) != 0 && dec_is_null(p, end) ? p + 4 : NULL;
    }
    wk__json_num num;
    wk__json_fail f = {WK_OK, NULL, NULL};
    if (*p != '-' && !wk__json_digit(*p)) {
        return NULL;
    }
    p = wk__json_lex_number(p, end, false, &num, &f);
    if (p == NULL) {
        return NULL;
    }
    /* any number, converted as the general loop converts it (wk__dec_scalar): integers to
     * double, and for a float member a finite value beyond FLT_MAX gives up (the general
     * path reports the range error) */
    double v = num.kind == WK__NUM_UINT  ? (double)num.v.u
               : num.kind == WK__NUM_INT ? (double)num.v.i
                                         : num.v.d;
    if (op->kind == WK_SK_F64) {
        memcpy(dst, &v, sizeof v);
        return p;
    }
    if (v == v && (v > FLT_MAX || v < -FLT_MAX) && v - v == 0.0) {
        return NULL;
    }
    float x = (float)v;
    memcpy(dst, &x, sizeof x);
    return p;
}

/* The expected key's `"name":` at p compared as two masked words (16 bytes of input left). */
static inline bool dec_key_is(const wk__mp_op *want, const uint8_t *p, const uint8_t *end)
{
    uint64_t w0, w1;
    memcpy(&w0, p, 8);
    memcpy(&w1, p + 8, 8);
    if ((((w0 ^ want->jw[0]) & want->jm[0]) | ((w1 ^ want->jw[1]) & want->jm[1])) != 0) {
        return false;
    }
    size_t n = (size_t)want->jkey_len - 1;
    return n <= 16 ||
           ((size_t)(end - p) >= n && memcmp(p + 16, want->jkey + 17, n - 16) == 0);
}

/* Children a container of scalars may have to be built here (more: the tree parser). */
#define VALUE_KIDS 32

/* The baseline instance of the plan loop (schema_json_dec_loop.h): its always-inlined
 * helpers dec_text(), dec_str_copy(), dec_node(), dec_value(), dec_str_field() (the same
 * names with _avx2 in the AVX2 instance), then dec_text_field() and dec_flat() over their
 * bodies (contracts in schema_json_dec_loop.h).
 * Both out of line: dec_text_field is rare, dec_flat is the entry. */
#define WK__SJD(name) name
#define WK__SJD_HOT DEC_HOT
#include "formats/json/schema_json_dec_loop.h"
static WK__NOINLINE const uint8_t *dec_text_field(const wk__mp_op *op, const uint8_t *p,
                                                  const uint8_t *end, uint8_t *dst,
                                                  wk_arena *a)
{
#define WK__SJD_BODY 1
#include "formats/json/schema_json_dec_loop.h"
#undef WK__SJD_BODY
}
static WK__NOINLINE bool dec_flat(const wk__schema_index *ix, const uint8_t *in,
                                  const uint8_t *end, uint8_t *base, wk_arena *a,
                                  uint32_t vdepth)
{
#define WK__SJD_BODY 2
#include "formats/json/schema_json_dec_loop.h"
#undef WK__SJD_BODY
}
#undef WK__SJD
#undef WK__SJD_HOT

#if WK__JSON_HAVE_AVX2
/* The AVX2 instance: dec_text_field_avx2() and dec_flat_avx2(), compiled for AVX2 over the
 * lexer's AVX2 wide scans; the same contracts as the baseline's. */
#define WK__SJD(name) name##_avx2
#define WK__SJD_HOT DEC_HOT WK__JSON_AVX2_FN
#include "formats/json/schema_json_dec_loop.h"
static WK__NOINLINE WK__JSON_AVX2_FN const uint8_t *dec_text_field_avx2(const wk__mp_op *op,
                                                                       const uint8_t *p,
                                                                       const uint8_t *end,
                                                                       uint8_t *dst,
                                                                       wk_arena *a)
{
#define WK__SJD_BODY 1
#include "formats/json/schema_json_dec_loop.h"
#undef WK__SJD_BODY
}
static WK__NOINLINE WK__JSON_AVX2_FN bool dec_flat_avx2(const wk__schema_index *ix,
                                                        const uint8_t *in, const uint8_t *end,
                                                        uint8_t *base, wk_arena *a,
                                                        uint32_t vdepth)
{
#define WK__SJD_BODY 2
#include "formats/json/schema_json_dec_loop.h"
#undef WK__SJD_BODY
}
#undef WK__SJD
#undef WK__SJD_HOT
#endif

/* The entry point: the flat plan when the struct has one (in the instance wk__json_simd()
 * chose), else or when it gives up the generic path (dec_generic) from the start. */
WK_API wk_status wk_schema_decode_json(const wk_schema *s, const void *data, size_t len,
                                       void *obj, wk_arena *arena, const wk_schema_opts *opts,
                                       wk_schema_error *err)
{
    wk_status st;
    const wk__schema_index *ix = wk__schema_decode_begin(s, data, len, obj, arena, opts, err, &st);
    if (ix == NULL) {
        return st;
    }
    /* the flat plan for a flat struct (wk_value fields get the depth left below the
     * struct), else or when it gives up the generic path from the start */
    if (s->root == WK_SCHEMA_ROOT_STRUCT && ix->js_flat && len != 0) {
        uint32_t limit = wk__schema_depth_limit(opts);
        const uint8_t *in = data;
        uint32_t vdepth = limit > 1 ? limit - 1 : 1;
#if WK__JSON_HAVE_AVX2
        if (wk__json_simd() == WK__JSON_SIMD_AVX2) {
            if (dec_flat_avx2(ix, in, in + len, obj, arena, vdepth)) {
                return WK_OK;
            }
            return dec_generic(s, data, len, obj, arena, opts, err);
        }
#endif
        if (dec_flat(ix, in, in + len, obj, arena, vdepth)) {
            return WK_OK;
        }
    }
    return dec_generic(s, data, len, obj, arena, opts, err);
}
