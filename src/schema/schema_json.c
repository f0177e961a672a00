/*
 * The fused JSON paths of the schema codec (wk_schema_encode_json / wk_schema_decode_json,
 * and so the JSON serializer).
 *
 * They run the compiled plan of a flat struct (no nested struct or array, at most 64 fields,
 * names that are their own JSON text; schema_index.c builds it with the MessagePack plan),
 * the way schema_mp.c's fast paths do. Encoding writes with a cursor straight into the output
 * buffer: each key is one fixed-size copy of its pre-built `,"name":`, integers and doubles go
 * straight in, short plain strings are copied as two words, and everything that needs a look
 * (escapes, non-ASCII, base64, timestamps, deep wk_value trees) goes through the JSON
 * writer's own printers, so the bytes are the writer's. Decoding compares the expected key's
 * `"name":` as two masked words (any other key through the index), reads values with the JSON
 * lexer's inline primitives (json/lex.h: whitespace, strings with their UTF-8 check, numbers
 * correctly rounded), copies strings with one arena bump, and builds a wk_value that is a
 * scalar or a container of scalars in place (deeper ones through the fused tree parser).
 *
 * Both give up at anything unusual (every error, a buffer that cannot grow, an unknown key,
 * a key with an escape, a byte order mark, a missing required field, trailing bytes; a struct
 * that is not flat never starts) and the generic event paths then run from the start: wk_schema_encode into a wk_json_writer, wk_schema_decode
 * from a wk_json_reader. Outcomes, bytes, error statuses, messages, offsets and field paths
 * are therefore the generic paths' own; the fast paths only have to accept exactly what the
 * generic ones accept and store exactly what they store (tests and the fuzz harness compare
 * the two on random records, truncations and mutations). One difference is visible: strings
 * in wk_value fields that had no escape carry WK_VALF_PLAIN (the JSON parser's hint that they
 * need no escaping when written again), which the generic path does not set; and a retry
 * spends arena bytes twice. Repeated keys need nothing special: like the generic loop, the
 * fast loop stores each occurrence, so the last one wins.
 */
#include <float.h>

#include "core/dtoa.h"
#include "json/json_put.h"
#include "json/lex.h"
#include "schema/schema_decode_util.h"
#include "schema/schema_fast.h"
#include "value/value_build_core.h"
#include "wirekit/json.h"

/* ---- the generic paths (every fallback) ------------------------------------------------- */

static __attribute__((noinline)) wk_status enc_generic(const wk_schema *s, const void *obj,
                                                       wk_buf *out, wk_error *err)
{
    size_t start = out->len;
    wk_json_writer w;
    wk_json_writer_init(&w, out, NULL);
    wk_sink sink;
    wk_json_writer_sink(&w, &sink);
    wk_status st = wk_schema_encode(s, obj, &sink, err);
    wk_status fin = wk_json_writer_finish(&w, st == WK_OK ? err : NULL);
    if (st == WK_OK) {
        st = fin;
    }
    if (st != WK_OK) {
        out->len = start;
    }
    return st;
}

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

/* ---- encoding: the flat plan ------------------------------------------------------------ */

/* Room for a JSON scalar the cursor writes without a check: a number's text (the longest
 * double, 20 integer digits and a sign), `false`, or a short string with its quotes. The
 * plan's per-field budget (schema_index.c) holds it. */
#define SCALAR_ROOM WK__DTOA_JSON_MAX

/* The cursor after the writer's printer `put` wrote at o (NULL: it failed), with the
 * invariant (`fixed` bytes of room) restored. */
#define ENC_CALL(put)                                                                        \
    do {                                                                                     \
        out->len = (size_t)(o - out->data);                                                  \
        if ((put) != WK_OK) {                                                                \
            return NULL;                                                                     \
        }                                                                                    \
        o = out->data + out->len;                                                            \
        end = WK__ENC_END(out);                                                                  \
        WK__ENC_ENSURE(fixed, NULL);                                                         \
        *endp = end;                                                                         \
        return o;                                                                            \
    } while (0)

/* A string value: short plain ones as two words, longer plain ones after one scan, the rest
 * through the writer's string printer (escapes, UTF-8). */
static inline __attribute__((always_inline)) uint8_t *enc_str(wk_buf *out, uint8_t *o,
                                                              uint8_t **endp, const char *s,
                                                              size_t len, size_t fixed)
{
    uint8_t *end = *endp;
    if (WK__LIKELY(len <= 16)) {
        *o = '"';
        if (WK__LIKELY(wk__jw_copy16(o + 1, s, len))) {
            o[len + 1] = '"';
            return o + len + 2;
        }
    } else {
        const uint8_t *u = (const uint8_t *)s;
        if (wk__json_scan_plain(u, u + len) == u + len) {
            WK__ENC_ENSURE(len + 2 + fixed, NULL);
            *endp = end;
            *o = '"';
            memcpy(o + 1, s, len);
            o[len + 1] = '"';
            return o + len + 2;
        }
    }
    ENC_CALL(wk__json_put_string(out, s, len));
}

/* An integer's digits (no room check: SCALAR_ROOM). */
static inline uint8_t *enc_u64(uint8_t *o, uint64_t u)
{
    return o + wk__fmt_u64(u, (char *)o);
}

static inline uint8_t *enc_i64(uint8_t *o, int64_t i)
{
    if (i < 0) {
        *o++ = '-';
        return enc_u64(o, 0 - (uint64_t)i);
    }
    return enc_u64(o, (uint64_t)i);
}

static inline uint8_t *enc_bool(uint8_t *o, bool b)
{
    if (b) {
        memcpy(o, "true", 4);
        return o + 4;
    }
    memcpy(o, "false", 5);
    return o + 5;
}

static inline uint8_t *enc_null(uint8_t *o)
{
    memcpy(o, "null", 4);
    return o + 4;
}

/* One node of a wk_value container: scalars and strings here; NULL with *deeper set for
 * anything else (a nested container, float32, binary, ext, timestamp, raw number, a
 * non-finite double), which sends the whole value to the tree writer. */
static inline __attribute__((always_inline)) uint8_t *enc_node(wk_buf *out, uint8_t *o,
                                                               uint8_t **endp,
                                                               const wk_value *v, size_t fixed,
                                                               bool *deeper)
{
    uint8_t *end = *endp;
    switch ((wk_value_type)v->type) {
    case WK_VAL_NIL: o = enc_null(o); break;
    case WK_VAL_BOOL: o = enc_bool(o, v->u.b); break;
    case WK_VAL_INT: o = enc_i64(o, v->u.i); break;
    case WK_VAL_UINT: o = enc_u64(o, v->u.u); break;
    case WK_VAL_FLOAT:
        if ((v->flags & WK_VALF_F32) != 0 || !__builtin_isfinite(v->u.f)) {
            *deeper = true;
            return NULL;
        }
        o += wk__dtoa_json(v->u.f, (char *)o);
        break;
    case WK_VAL_STR:
        o = enc_str(out, o, endp, v->u.str, v->len, fixed);
        if (o == NULL) {
            return NULL;
        }
        end = *endp;
        break;
    default: *deeper = true; return NULL;
    }
    /* A scalar or a short string took at most SCALAR_ROOM bytes of the room; restore the
     * invariant, so that the next key, ':' and node fit the field's budget again. */
    WK__ENC_ENSURE(fixed, NULL);
    *endp = end;
    return o;
}

/* A wk_value field: a container of scalars (string keys) in one loop, anything else through
 * the JSON tree writer (the same bytes as wk_value_encode into the writer). */
static inline __attribute__((always_inline)) uint8_t *enc_value(wk_buf *out, uint8_t *o,
                                                                uint8_t **endp,
                                                                const wk_value *v,
                                                                size_t fixed)
{
    const size_t vpos = (size_t)(o - out->data); /* o may move to a grown buffer */
    bool deeper = false;
    if (v->type == WK_VAL_MAP) {
        *o++ = '{';
        for (uint32_t i = 0; i < v->len; i++) {
            const wk_pair *pr = &v->u.pairs[i];
            if (pr->key.type != WK_VAL_STR) {
                goto general;
            }
            *o = ',';
            o += i != 0;
            o = enc_str(out, o, endp, pr->key.u.str, pr->key.len, fixed);
            if (o == NULL) {
                return NULL;
            }
            *o++ = ':';
            o = enc_node(out, o, endp, &pr->val, fixed, &deeper);
            if (o == NULL) {
                goto fail;
            }
        }
        *o++ = '}';
        return o;
    }
    if (v->type == WK_VAL_ARRAY) {
        *o++ = '[';
        for (uint32_t i = 0; i < v->len; i++) {
            *o = ',';
            o += i != 0;
            o = enc_node(out, o, endp, &v->u.items[i], fixed, &deeper);
            if (o == NULL) {
                goto fail;
            }
        }
        *o++ = ']';
        return o;
    }
    o = enc_node(out, o, endp, v, fixed, &deeper);
    if (o != NULL) {
        return o;
    }
fail:
    if (!deeper) {
        return NULL;
    }
general: {
    uint8_t *end;
    o = out->data + vpos;
    ENC_CALL(wk_json_encode_value(v, NULL, out, NULL));
}
}

/* One field of a flat plan: its key (`,"name":`, one fixed-size copy; the caller turns the
 * first field's ',' into the '{'), then its value. Returns the cursor or NULL (give up). */
static inline __attribute__((always_inline)) uint8_t *enc_field(wk_buf *out, uint8_t *o,
                                                                uint8_t **endp,
                                                                const wk__mp_op *op,
                                                                const uint8_t *base,
                                                                size_t fixed)
{
    uint8_t *end = *endp;
    const uint8_t *p = base + op->offset;
    memcpy(o, op->jkey, WK__MP_KEY_PAD); /* room and source padding: the plan's */
    if (WK__UNLIKELY(op->jkey_len > WK__MP_KEY_PAD)) {
        memcpy(o, op->jkey, op->jkey_len);
    }
    o += op->jkey_len;
    switch ((wk_schema_kind)op->kind) {
    case WK_SK_BOOL: return enc_bool(o, *(const bool *)p);
    case WK_SK_I8: return enc_i64(o, *(const int8_t *)p);
    case WK_SK_I16: return enc_i64(o, *(const int16_t *)p);
    case WK_SK_I32: return enc_i64(o, *(const int32_t *)p);
    case WK_SK_I64: return enc_i64(o, *(const int64_t *)p);
    case WK_SK_U8: return enc_u64(o, *p);
    case WK_SK_U16: return enc_u64(o, *(const uint16_t *)p);
    case WK_SK_U32: return enc_u64(o, *(const uint32_t *)p);
    case WK_SK_U64: return enc_u64(o, *(const uint64_t *)p);
    case WK_SK_F32: {
        float f = *(const float *)p;
        return __builtin_isfinite(f) ? o + wk__ftoa_json(f, (char *)o) : NULL;
    }
    case WK_SK_F64: {
        double d = *(const double *)p;
        return __builtin_isfinite(d) ? o + wk__dtoa_json(d, (char *)o) : NULL;
    }
    case WK_SK_STR: {
        const char *str = *(const char *const *)p;
        if (str == NULL) {
            if ((op->flags & WK_NULLABLE) != 0) {
                return enc_null(o);
            }
            memcpy(o, "\"\"", 2);
            return o + 2;
        }
        size_t len = strlen(str);
        if (WK__UNLIKELY(len > UINT32_MAX)) {
            return NULL;
        }
        return enc_str(out, o, endp, str, len, fixed);
    }
    case WK_SK_STRBUF: {
        const char *str = (const char *)p;
        const char *nul = memchr(str, 0, op->size);
        return enc_str(out, o, endp, str, nul != NULL ? (size_t)(nul - str) : op->size, fixed);
    }
    case WK_SK_BYTES: {
        const wk_slice *b = (const wk_slice *)p;
        if (b->ptr == NULL && (op->flags & WK_NULLABLE) != 0) {
            return enc_null(o);
        }
        if ((b->ptr == NULL && b->len != 0) || b->len > UINT32_MAX) {
            return NULL;
        }
        ENC_CALL(wk__json_put_base64(out, b->ptr, b->len));
    }
    case WK_SK_TIMESTAMP: {
        const wk_timestamp *ts = (const wk_timestamp *)p;
        if (ts->nsec >= 1000000000u) {
            return NULL;
        }
        ENC_CALL(wk__json_put_timestamp(out, ts->sec, ts->nsec));
    }
    case WK_SK_VALUE: return enc_value(out, o, endp, (const wk_value *)p, fixed);
    default: return NULL; /* not in a flat plan */
    }
}

/* Encodes a flat struct with its compiled plan in one pass over `out`. Returns false when
 * the object needs the generic path (an error to report, a buffer that cannot grow); the
 * caller then drops what was written. */
static bool enc_flat(wk_buf *out, const wk__schema_index *ix, const uint8_t *base)
{
    const size_t fixed = ix->js_fixed;
    const wk__mp_op *op = ix->mp_ops;
    const wk__mp_op *const op_end = op + ix->nfields;
    uint8_t *o;
    if (WK__LIKELY(out->data != NULL && out->cap - out->len >= fixed)) {
        o = out->data + out->len;
    } else {
        o = wk__schema_buf_grow(out, NULL, fixed);
        if (o == NULL) {
            return false;
        }
    }
    uint8_t *end = WK__ENC_END(out);
    const size_t open = out->len; /* where the '{' goes (the buffer may move) */
    uint64_t present = ~(uint64_t)0;
    if (ix->mp_omit) {
        for (uint32_t i = 0; i < ix->nfields; i++) {
            if ((op[i].flags & WK_OMITEMPTY) != 0 &&
                wk__schema_member_empty(op[i].kind, base + op[i].offset)) {
                present &= ~((uint64_t)1 << i);
            }
        }
    }
    for (; op < op_end; op++, present >>= 1) {
        if ((present & 1) == 0) {
            continue;
        }
        o = enc_field(out, o, &end, op, base, fixed);
        if (WK__UNLIKELY(o == NULL)) {
            return false;
        }
    }
    /* The first key's ',' becomes the '{' (an empty object writes it here). */
    o += o == out->data + open;
    out->data[open] = '{';
    *o++ = '}';
    out->len = (size_t)(o - out->data);
    return true;
}

WK_API wk_status wk_schema_encode_json(const wk_schema *s, const void *obj, wk_buf *out,
                                       wk_error *err)
{
    if (s == NULL || obj == NULL || out == NULL) {
        return wk_error_set(err, WK_ERR_ARG, 0, "schema: NULL argument");
    }
    const wk__schema_index *ix = wk__schema_index_get(s, NULL, err);
    if (ix == NULL) {
        return err != NULL ? err->code : WK_ERR_ARG;
    }
    if (s->root == WK_SCHEMA_ROOT_STRUCT && ix->js_flat) {
        size_t start = out->len;
        if (enc_flat(out, ix, obj)) {
            return WK_OK;
        }
        /* Anything unusual (including every error): the generic path from the start, which
         * decides the outcome byte for byte. */
        out->len = start;
    }
    return enc_generic(s, obj, out, err);
}

/* ---- decoding: the flat plan ------------------------------------------------------------ */

/* The decoder's helpers are inlined into the plan loop at -O2 too, where GCC otherwise keeps
 * them out of line (measured: about 10% more instructions on the seed record). */
#define DEC_HOT static inline __attribute__((always_inline))

/* A string at p ('"', p < end): its bytes, a view into the input when it has no escape
 * (*esc false), else unescaped into the arena with room for a NUL after them (*esc true).
 * Returns the byte after the closing quote, or NULL. */
DEC_HOT const uint8_t *dec_text(const uint8_t *p, const uint8_t *end, wk_arena *a,
                                      const uint8_t **s, size_t *len, bool *esc)
{
    const uint8_t *first;
    wk__json_fail f = {WK_OK, NULL, NULL};
    const uint8_t *close = wk__json_scan_string(p + 1, end, &first, &f);
    if (WK__UNLIKELY(close == NULL)) {
        return NULL;
    }
    size_t n = (size_t)(close - p - 1);
    if (WK__LIKELY(first == NULL)) {
        *s = p + 1;
        *len = n;
        *esc = false;
        return close + 1;
    }
    uint8_t *d = wk_arena_alloc(a, n + 1, 1);
    if (d == NULL) {
        return NULL;
    }
    n = wk__json_unescape(p + 1, first, close, d, &f);
    if (n == (size_t)-1) {
        return NULL;
    }
    d[n] = '\0';
    *s = d;
    *len = n;
    *esc = true;
    return close + 1;
}

/* A string at p ('"', p < end) copied into the arena with its NUL; *plain when it had no
 * escape. A short plain one (closing quote within the 16 bytes after the opening one) is
 * found with one vector compare (a byte loop near the end of the input) and, with 16 bytes
 * of input after the quote, stored as one 16-byte move (the bytes past its NUL land in the
 * arena's free space); others go through dec_text. A string with an escape may hold
 * a NUL ("\u0000"): *plain false tells the caller to look. Returns the byte after the
 * closing quote, or NULL. */
DEC_HOT const uint8_t *dec_str_copy(const uint8_t *p, const uint8_t *end,
                                          const uint8_t *in, wk_arena *a, const char **out,
                                          size_t *len, bool *plain)
{
    int k = wk__json_short_plain(p + 1, end);
    if (WK__LIKELY(k >= 0)) {
        char *d;
        if (WK__LIKELY(end - p > 16 && a->cur != NULL && a->end - a->cur >= 16)) {
            d = (char *)a->cur;
            memcpy(d, p + 1, 16);
            d[k] = '\0';
            a->cur += k + 1;
        } else {
            bool nul = false;
            d = wk__dec_copy_str(a, p + 1, (size_t)k, in, false, &nul);
            if (d == NULL) {
                return NULL;
            }
        }
        *out = d;
        *len = (size_t)k;
        *plain = true;
        return p + k + 2;
    }
    const uint8_t *s;
    p = dec_text(p, end, a, &s, len, plain);
    if (p == NULL) {
        return NULL;
    }
    *plain = !*plain;
    if (*plain) {
        bool nul = false;
        s = (const uint8_t *)wk__dec_copy_str(a, s, *len, in, false, &nul);
        if (s == NULL) {
            return NULL;
        }
    }
    *out = (const char *)s;
    return p;
}

/* The literal `null` at p (p < end). */
static inline bool dec_is_null(const uint8_t *p, const uint8_t *end)
{
    return end - p >= 4 && memcmp(p, "null", 4) == 0;
}

/* One scalar JSON value at p (p < end) as a wk_value node, as the tree builders make it
 * (strings copied; no escape: WK_VALF_PLAIN too, as the JSON parser marks them). Returns the
 * next byte, or NULL (containers included: the caller decides). */
DEC_HOT const uint8_t *dec_node(const uint8_t *p, const uint8_t *end, const uint8_t *in,
                                      wk_value *v, wk_arena *a)
{
    uint8_t c = *p;
    if (c == '"') {
        const char *str;
        size_t len;
        bool plain;
        p = dec_str_copy(p, end, in, a, &str, &len, &plain);
        if (p == NULL || len > UINT32_MAX) {
            return NULL;
        }
        wk__vb_head(v, WK_VAL_STR, plain ? WK_VALF_COPIED | WK_VALF_PLAIN : WK_VALF_COPIED,
                    (uint32_t)len);
        v->u.str = str;
        return p;
    }
    uint64_t small;
    const uint8_t *q = wk__json_small_uint(p, end, &small);
    if (WK__LIKELY(q != NULL)) {
        wk__vb_head(v, WK_VAL_UINT, 0, 0);
        v->u.u = small;
        return q;
    }
    if (c == '-' || wk__json_digit(c)) {
        wk__json_num num;
        wk__json_fail f = {WK_OK, NULL, NULL};
        p = wk__json_lex_number(p, end, false, &num, &f);
        if (p == NULL) {
            return NULL;
        }
        if (num.kind == WK__NUM_UINT) {
            wk__vb_head(v, WK_VAL_UINT, 0, 0);
            v->u.u = num.v.u;
        } else if (num.kind == WK__NUM_INT) {
            wk__vb_head(v, WK_VAL_INT, 0, 0);
            v->u.i = num.v.i;
        } else {
            wk__vb_head(v, WK_VAL_FLOAT, 0, 0);
            v->u.f = num.v.d;
        }
        return p;
    }
    size_t left = (size_t)(end - p);
    if (c == 't' && left >= 4 && memcmp(p, "true", 4) == 0) {
        wk__vb_head(v, WK_VAL_BOOL, 0, 0);
        v->u.u = 0;
        v->u.b = true;
        return p + 4;
    }
    if (c == 'f' && left >= 5 && memcmp(p, "false", 5) == 0) {
        wk__vb_head(v, WK_VAL_BOOL, 0, 0);
        v->u.u = 0;
        return p + 5;
    }
    if (c == 'n' && dec_is_null(p, end)) {
        wk__vb_head(v, WK_VAL_NIL, 0, 0);
        v->u.u = 0;
        return p + 4;
    }
    return NULL;
}

/* Children a container of scalars may have to be built here (more: the tree parser). */
#define VALUE_KIDS 32

/* A wk_value field at p (p < end): a scalar, or a container of scalars built here with no
 * frame stack; a nested container or a wide one sends the whole value to the fused JSON tree
 * parser (the same tree as the generic path's builder; depth limit `vdepth`). Returns the
 * next byte or NULL. */
DEC_HOT const uint8_t *dec_value(const uint8_t *p, const uint8_t *end, const uint8_t *in,
                                       wk_value *dst, wk_arena *a, uint32_t vdepth)
{
    const uint8_t *const start = p;
    uint8_t c = *p;
    if (c != '{' && c != '[') {
        return dec_node(p, end, in, dst, a);
    }
    const bool is_map = c == '{';
    const uint8_t close = is_map ? '}' : ']';
    wk_value kids[VALUE_KIDS];
    uint32_t n = 0;
    p = wk__json_skip_ws(p + 1, end);
    if (p == end) {
        return NULL;
    }
    if (*p == close) {
        p++;
    } else {
        for (;;) {
            if (n + 2 > VALUE_KIDS) {
                goto deeper;
            }
            if (is_map) {
                if (*p != '"') {
                    return NULL;
                }
                p = dec_node(p, end, in, &kids[n++], a);
                if (p == NULL) {
                    return NULL;
                }
                if (WK__LIKELY(p < end && *p == ':')) {
                    p++;
                } else {
                    p = wk__json_skip_ws(p, end);
                    if (p == end || *p != ':') {
                        return NULL;
                    }
                    p++;
                }
                p = wk__json_skip_ws(p, end);
                if (p == end) {
                    return NULL;
                }
            }
            if (*p == '{' || *p == '[') {
                goto deeper;
            }
            p = dec_node(p, end, in, &kids[n++], a);
            if (p == NULL) {
                return NULL;
            }
            p = wk__json_skip_ws(p, end);
            if (p == end) {
                return NULL;
            }
            if (*p == ',') {
                p = wk__json_skip_ws(p + 1, end);
                if (p == end) {
                    return NULL;
                }
                continue;
            }
            if (*p != close) {
                return NULL;
            }
            p++;
            break;
        }
    }
    wk_value *items = NULL;
    if (n != 0) {
        items = wk__vb_alloc(a, (size_t)n * sizeof(wk_value));
        if (items == NULL) {
            return NULL;
        }
        memcpy(items, kids, (size_t)n * sizeof(wk_value));
    }
    wk__vb_head(dst, is_map ? WK_VAL_MAP : WK_VAL_ARRAY, 0, is_map ? n / 2 : n);
    dst->u.items = items;
    return p;
deeper: {
    wk_read_opts vo = {0};
    vo.flags = WK_READ_COPY_STRINGS | WK_JSON_READ_ALLOW_TRAILING;
    vo.max_depth = vdepth;
    wk_value *v = NULL;
    size_t used = 0;
    if (wk_json_decode_value(start, (size_t)(end - start), &vo, a, &v, &used, NULL) != WK_OK) {
        return NULL;
    }
    *dst = *v;
    return start + used;
}
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

/* The string kinds other than WK_SK_STR (p < end): char[N], base64 bytes, RFC 3339
 * timestamps, with the general loop's checks; null as it takes it for WK_NULLABLE. */
static __attribute__((noinline)) const uint8_t *dec_text_field(const wk__mp_op *op,
                                                               const uint8_t *p,
                                                               const uint8_t *end,
                                                               uint8_t *dst, wk_arena *a)
{
    if (*p == 'n') {
        if ((op->flags & WK_NULLABLE) == 0 || !dec_is_null(p, end)) {
            return NULL;
        }
        if (op->kind == WK_SK_BYTES) {
            ((wk_slice *)dst)->ptr = NULL;
            ((wk_slice *)dst)->len = 0;
        }
        return p + 4;
    }
    if (*p != '"') {
        return NULL;
    }
    const uint8_t *s;
    size_t len;
    bool esc;
    p = dec_text(p, end, a, &s, &len, &esc);
    if (p == NULL) {
        return NULL;
    }
    switch ((wk_schema_kind)op->kind) {
    case WK_SK_STRBUF:
        if (len >= op->size || (esc && wk__dec_has_nul(s, len))) {
            return NULL;
        }
        memcpy(dst, s, len);
        dst[len] = '\0';
        return p;
    case WK_SK_BYTES:
        return wk__schema_base64_decode(a, (const char *)s, len, (wk_slice *)dst) ? p : NULL;
    case WK_SK_TIMESTAMP:
        return wk__schema_parse_rfc3339((const char *)s, len, (wk_timestamp *)dst) ? p : NULL;
    default: return NULL;
    }
}

/* A WK_SK_STR field (p < end). */
DEC_HOT const uint8_t *dec_str_field(const wk__mp_op *op, const uint8_t *p,
                                           const uint8_t *end, const uint8_t *in, uint8_t *dst,
                                           wk_arena *a)
{
    if (*p != '"') {
        if ((op->flags & WK_NULLABLE) != 0 && *p == 'n' && dec_is_null(p, end)) {
            *(char **)dst = NULL;
            return p + 4;
        }
        return NULL;
    }
    const char *str;
    size_t len;
    bool plain;
    p = dec_str_copy(p, end, in, a, &str, &len, &plain);
    if (p == NULL) {
        return NULL;
    }
    /* A plain string has no control byte (the lexer let none through): no NUL to look for. */
    if (WK__UNLIKELY(!plain) && wk__dec_has_nul((const uint8_t *)str, len)) {
        return NULL; /* "\u0000": the general loop's "string contains a NUL byte" */
    }
    *(const char **)dst = str;
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

static inline bool dec_flat(const wk__schema_index *ix, const uint8_t *in, const uint8_t *end,
                            uint8_t *base, wk_arena *a, uint32_t vdepth)
{
    const uint8_t *p = wk__json_skip_ws(in, end);
    if (p == end || *p != '{') {
        return false;
    }
    p = wk__json_skip_ws(p + 1, end);
    if (p == end) {
        return false;
    }
    const wk__mp_op *const ops = ix->mp_ops;
    const wk__mp_op *const ops_end = ops + ix->nfields;
    const wk__mp_op *want = ops;
    uint64_t seen = 0;
    if (*p == '}') {
        p++;
    } else {
        for (;;) {
            if (*p != '"') {
                return false;
            }
            const wk__mp_op *op;
            size_t left = (size_t)(end - p);
            if (WK__LIKELY(want < ops_end &&
                           (left >= 16 ? dec_key_is(want, p, end)
                                       : left >= (size_t)want->jkey_len - 1 &&
                                             memcmp(p, want->jkey + 1, want->jkey_len - 1u) ==
                                                 0))) {
                op = want;
                p += op->jkey_len - 1;
            } else {
                const uint8_t *first;
                wk__json_fail f = {WK_OK, NULL, NULL};
                const uint8_t *close = wk__json_scan_string(p + 1, end, &first, &f);
                if (close == NULL || first != NULL) {
                    return false;
                }
                int32_t idx = wk__schema_lookup_index(ix, (const char *)p + 1,
                                                      (size_t)(close - p - 1));
                if (idx < 0) {
                    return false; /* unknown: the generic path skips it (or rejects it) */
                }
                op = &ops[idx];
                p = wk__json_skip_ws(close + 1, end);
                if (p == end || *p != ':') {
                    return false;
                }
                p++;
            }
            want = op + 1;
            seen |= op->reqmask;
            p = wk__json_skip_ws(p, end);
            if (WK__UNLIKELY(p == end)) {
                return false;
            }
            uint8_t *dst = base + op->offset;
            switch ((wk_schema_kind)op->kind) {
            case WK_SK_STR: p = dec_str_field(op, p, end, in, dst, a); break;
            case WK_SK_BOOL:
                if (end - p >= 4 && memcmp(p, "true", 4) == 0) {
                    *(bool *)dst = true;
                    p += 4;
                } else if (end - p >= 5 && memcmp(p, "false", 5) == 0) {
                    *(bool *)dst = false;
                    p += 5;
                } else if ((op->flags & WK_NULLABLE) != 0 && dec_is_null(p, end)) {
                    p += 4;
                } else {
                    return false;
                }
                break;
            case WK_SK_I8:
            case WK_SK_I16:
            case WK_SK_I32:
            case WK_SK_I64:
            case WK_SK_U8:
            case WK_SK_U16:
            case WK_SK_U32:
            case WK_SK_U64: p = dec_int_field(op, p, end, dst); break;
            case WK_SK_F32:
            case WK_SK_F64: p = dec_float_field(op, p, end, dst); break;
            case WK_SK_VALUE: p = dec_value(p, end, in, (wk_value *)dst, a, vdepth); break;
            default: p = dec_text_field(op, p, end, dst, a); break;
            }
            if (WK__UNLIKELY(p == NULL)) {
                return false;
            }
            if (WK__LIKELY(p < end && *p == ',')) {
                p++;
            } else {
                p = wk__json_skip_ws(p, end);
                if (p == end) {
                    return false;
                }
                if (*p == '}') {
                    p++;
                    break;
                }
                if (*p != ',') {
                    return false;
                }
                p++;
            }
            p = wk__json_skip_ws(p, end);
            if (p == end) {
                return false;
            }
        }
    }
    p = wk__json_skip_ws(p, end);
    return p == end && (seen & ix->required_mask) == ix->required_mask;
}

WK_API wk_status wk_schema_decode_json(const wk_schema *s, const void *data, size_t len,
                                       void *obj, wk_arena *arena, const wk_schema_opts *opts,
                                       wk_schema_error *err)
{
    wk__schema_error_reset(err);
    if (s == NULL || (data == NULL && len != 0) || obj == NULL || arena == NULL) {
        return wk_error_set(err != NULL ? &err->base : NULL, WK_ERR_ARG, 0,
                            "schema: NULL argument");
    }
    const wk__schema_index *ix = wk__schema_index_get(s, opts != NULL ? opts->alloc : NULL,
                                                      err != NULL ? &err->base : NULL);
    if (ix == NULL) {
        return err != NULL ? err->base.code : WK_ERR_ARG;
    }
    if (s->root == WK_SCHEMA_ROOT_STRUCT && ix->js_flat && len != 0) {
        uint32_t limit = wk__schema_depth_limit(opts);
        if (dec_flat(ix, data, (const uint8_t *)data + len, obj, arena,
                     limit > 1 ? limit - 1 : 1)) {
            return WK_OK;
        }
    }
    return dec_generic(s, data, len, obj, arena, opts, err);
}
