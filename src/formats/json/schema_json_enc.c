/*
 * The fused JSON encoder of the schema codec (wk_schema_encode_json, and so the JSON
 * serializer's encode). Flow: the caller's struct -> the flat plan (enc_flat) -> JSON text
 * in the caller's wk_buf; on any give-up, struct -> wk_schema_encode -> wk_json_writer
 * (enc_generic) from the same start.
 *
 * It runs the compiled plan of a flat struct (no nested struct or array, at most 64 fields,
 * names that are their own JSON text; schema_index.c builds it with the MessagePack plan),
 * the way schema_mp.c's fast path does, and writes with a cursor straight into the output
 * buffer: each key is one fixed-size copy of its pre-built `,"name":`, integers and doubles go
 * straight in, short plain strings are copied as two words, and everything that needs a look
 * (escapes, non-ASCII, base64, timestamps, deep wk_value trees) goes through the JSON
 * writer's own printers, so the bytes are the writer's.
 *
 * It gives up at anything unusual (every error, a buffer that cannot grow; a struct that is
 * not flat never starts) and the generic path then runs from the start: wk_schema_encode into
 * a wk_json_writer. Bytes, error statuses and messages are therefore the generic path's own
 * (tests and the fuzz harness compare the two). The decoder is schema_json_dec.c.
 */
#include "core/dtoa_interface.h"
#include "formats/json/json_put.h"
#include "formats/json/lex.h"
#include "schema/schema_fast_interface.h"
#include "schema/schema_plan_interface.h"
#include "wirekit/json.h"

/* The generic path (every fallback). */
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

/* A signed integer's text (no room check: SCALAR_ROOM); INT64_MIN negated as unsigned. */
static inline uint8_t *enc_i64(uint8_t *o, int64_t i)
{
    if (i < 0) {
        *o++ = '-';
        return enc_u64(o, 0 - (uint64_t)i);
    }
    return enc_u64(o, (uint64_t)i);
}

/* `true` or `false` (no room check: SCALAR_ROOM). */
static inline uint8_t *enc_bool(uint8_t *o, bool b)
{
    if (b) {
        memcpy(o, "true", 4);
        return o + 4;
    }
    memcpy(o, "false", 5);
    return o + 5;
}

/* `null` (no room check: SCALAR_ROOM). */
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
    o = wk__schema_put_key(o, op->jkey, op->jkey_len); /* room: the plan's */
    /* Fixed-size values are written straight in (the plan's room covers them); strings,
     * bytes, timestamps and wk_value trees check for room or go through the writer's
     * printers. Non-finite floats have no JSON form: give up, and the generic path reports
     * the writer's error. */
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
    uint8_t *o = wk__schema_enc_start(out, fixed);
    if (o == NULL) {
        return false;
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

/* Appends the JSON form of obj to out: the flat plan when the struct has one, else (or when
 * it gives up) the generic path from the same start, which decides bytes and errors. */
WK_API wk_status wk_schema_encode_json(const wk_schema *s, const void *obj, wk_buf *out,
                                       wk_error *err)
{
    wk_status st;
    const wk__schema_index *ix = wk__schema_encode_begin(s, obj, out, err, &st);
    if (ix == NULL) {
        return st;
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
