/*
 * wk_schema_encode_mp folded over a descriptor the compiler can see (issue 26; included by
 * schema.h), and the wk_value fields' node loop that the folded code and the library's flat
 * plan (src/formats/msgpack/schema_mp.c) both run.
 * When the descriptor is a constant in the calling translation unit (a WK_SCHEMA_DEFINE or
 * WK_SCHEMA_DEFINE_STATIC object) of the shape below, and the build optimises (-O2 and up),
 * the call compiles into straight-line code for that struct: the map header and every key
 * are constant stores, every value is its kind's inline encoder with no dispatch, and room
 * is checked once for the whole fixed part. Anything else calls the library function, which
 * then decides the outcome from the start, so the bytes and statuses are the library's own
 * (tests/unit/schema/test_schema_mp_fold.c compares them over every folded kind): a
 * descriptor the compiler cannot fold, one whose index is not built yet (the first call
 * checks it), a NULL argument, a buffer without the room, a NULL `char *` or one of 32 bytes
 * or more, a wk_value node the loop gives up on.
 * The shape folded: a struct root of 1 to 15 fields, names of up to 31 bytes, kinds bool,
 * the integers, float64, `char *` and wk_value, no WK_OMITEMPTY and no presence member.
 * Define WK_NO_FOLD before including wirekit headers to always call the library.
 */
#ifndef WIREKIT_SCHEMA_MP_FOLD_H
#define WIREKIT_SCHEMA_MP_FOLD_H

#include <string.h>

#include "msgpack.h"
#include "schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most bytes of a "small" wk_value node (wk__mpf_small): a str of up to 31 bytes with its
 * fixstr header, or any scalar but a timestamp (at most 9). */
#define WK__MPF_SMALL 32u

/**
 * One wk_value node that wk__mpf_value does not write itself (not for direct use): at `o` in
 * `out`'s buffer, with any room; makes the room (`out->len` then follows the cursor) and
 * keeps `room` bytes free after the node. Returns the cursor after it, NULL to give up (the
 * caller then calls wk_schema_encode_mp from its start).
 */
WK_API uint8_t *wk_schema_mp_put_node(wk_buf *out, uint8_t *o, const wk_value *v, size_t room);

/* One wk_value node that takes at most WK__MPF_SMALL bytes, written at o without a room
 * check: a string of up to 31 bytes (tested first: map keys and most values), nil, a bool,
 * an integer, a float64. NULL for any other node (a longer string, float32, binary, ext,
 * timestamp, raw number, container, unknown type). */
WK__MP_HOT uint8_t *wk__mpf_small(uint8_t *o, const wk_value *v)
{
    /* the node read before the first store (a byte store may alias it) */
    uint32_t len = v->len;
    const char *str = v->u.str;
    if (WK_LIKELY(v->type == WK_VAL_STR && len < 32)) {
        *o = (uint8_t)(0xa0u | len);
        wk_copy_short(o + 1, str, len);
        return o + 1 + len;
    }
    switch ((wk_value_type)v->type) {
    case WK_VAL_NIL: return wk_mp_encode_nil(o);
    case WK_VAL_BOOL: return wk_mp_encode_bool(o, v->u.b);
    case WK_VAL_INT: return wk_mp_encode_int(o, v->u.i);
    case WK_VAL_UINT: return wk_mp_encode_uint(o, v->u.u);
    case WK_VAL_FLOAT:
        return (v->flags & WK_VALF_F32) != 0 ? NULL : wk_mp_encode_double(o, v->u.f);
    default: return NULL;
    }
}

/* The last cursor in `out`'s buffer with a small node's bytes and `room` after it (0, which
 * no cursor is at or below, when the buffer has less): one compare a node. */
WK__MP_HOT uintptr_t wk__mpf_lim(const wk_buf *out, size_t room)
{
    return out->data != NULL && out->cap >= WK__MPF_SMALL + room
               ? (uintptr_t)out->data + (out->cap - WK__MPF_SMALL - room)
               : 0;
}

/* A wk_value field of a flat struct (the library's plan and the folded encoder), at `o` in
 * `out`'s buffer with room for its header (5 bytes): a container's children are written in
 * one loop without a frame stack, a scalar field as a container of one. Each child that is
 * small gets WK__MPF_SMALL bytes plus `room` with one check; any other child, or one without
 * that room, goes to wk_schema_mp_put_node (a child container is a whole subtree for the
 * tree writer). Keeps `room` bytes free after it; NULL to give up. */
WK__MP_HOT uint8_t *wk__mpf_value(wk_buf *out, uint8_t *o, const wk_value *v,
                                  size_t room)
{
    const wk_value *kid;
    size_t nkids;
    const uint32_t n = v->len; /* read before the header's store, which may alias it */
    if (v->type == WK_VAL_MAP) {
        kid = n != 0 ? &v->u.pairs[0].key : v; /* (empty: any pointer, no step) */
        nkids = 2 * (size_t)n;
        o = wk_mp_encode_map_header(o, n);
    } else if (v->type == WK_VAL_ARRAY) {
        kid = n != 0 ? v->u.items : v;
        nkids = n;
        o = wk_mp_encode_array_header(o, n);
    } else {
        kid = v;
        nkids = 1;
    }
    uintptr_t lim = wk__mpf_lim(out, room);
    for (const wk_value *c = kid, *const c_end = kid + nkids; c < c_end; c++) {
        uint8_t *w = NULL;
        if (WK_LIKELY((uintptr_t)o <= lim)) {
            w = wk__mpf_small(o, c);
        }
        if (WK_UNLIKELY(w == NULL)) {
            w = wk_schema_mp_put_node(out, o, c, room);
            if (w == NULL) {
                return NULL;
            }
            lim = wk__mpf_lim(out, room);
        }
        o = w;
    }
    return o;
}

/* A bool, integer or float64 member at p, by its kind, written at o (at most 9 bytes, no room
 * check); NULL for any other kind. The folded encoder and the library's flat plan both
 * write these kinds with it. */
WK__MP_HOT uint8_t *wk__mpf_scalar(uint8_t *o, unsigned kind, const uint8_t *p)
{
    switch ((wk_schema_kind)kind) {
    case WK_SK_BOOL: return wk_mp_encode_bool(o, *(const bool *)p);
    case WK_SK_I8: return wk_mp_encode_int(o, *(const int8_t *)p);
    case WK_SK_I16: return wk_mp_encode_int(o, *(const int16_t *)p);
    case WK_SK_I32: return wk_mp_encode_int(o, *(const int32_t *)p);
    case WK_SK_I64: return wk_mp_encode_int(o, *(const int64_t *)p);
    case WK_SK_U8: return wk_mp_encode_uint(o, *p);
    case WK_SK_U16: return wk_mp_encode_uint(o, *(const uint16_t *)p);
    case WK_SK_U32: return wk_mp_encode_uint(o, *(const uint32_t *)p);
    case WK_SK_U64: return wk_mp_encode_uint(o, *(const uint64_t *)p);
    case WK_SK_F64: return wk_mp_encode_double(o, *(const double *)p);
    default: return NULL;
    }
}

#if defined(__GNUC__) && defined(__OPTIMIZE__) && !defined(WK_NO_FOLD)

/* Fields are folded by a loop of this many steps, unrolled, each step skipped past the
 * descriptor's field count (a fixmap header holds up to 15). */
#define WK__MPF_MAX 15u

/* Whether a field is one the folded encoder writes (see the header comment). */
static inline __attribute__((always_inline)) bool wk__mpf_field_ok(const wk_schema_field *f)
{
    if (f->name_len > 31 || (f->flags & (WK_OMITEMPTY | WK_PRESENCE)) != 0) {
        return false;
    }
    switch ((wk_schema_kind)f->type.kind) {
    case WK_SK_BOOL:
    case WK_SK_I8:
    case WK_SK_I16:
    case WK_SK_I32:
    case WK_SK_I64:
    case WK_SK_U8:
    case WK_SK_U16:
    case WK_SK_U32:
    case WK_SK_U64:
    case WK_SK_F64:
    case WK_SK_STR:
    case WK_SK_VALUE: return true;
    default: return false;
    }
}

/* Whether the descriptor has the folded shape. */
static inline __attribute__((always_inline)) bool wk__mpf_shape(const wk_schema *s)
{
    bool ok = s->root == WK_SCHEMA_ROOT_STRUCT && s->nfields >= 1 && s->nfields <= WK__MPF_MAX;
#pragma GCC unroll 16
    for (uint32_t i = 0; i < WK__MPF_MAX; i++) {
        ok = ok && (i >= s->nfields || wk__mpf_field_ok(&s->fields[i]));
    }
    return ok;
}

/* The most bytes a record's fixed part takes: the map header, every key, every value but a
 * wk_value's children (a `char *` of up to 31 bytes with its header, a wk_value's header). */
static inline __attribute__((always_inline)) size_t wk__mpf_fixed(const wk_schema *s)
{
    size_t n = 1;
#pragma GCC unroll 16
    for (uint32_t i = 0; i < WK__MPF_MAX; i++) {
        if (i < s->nfields) {
            const wk_schema_field *f = &s->fields[i];
            n += 1u + f->name_len;
            n += f->type.kind == WK_SK_BOOL  ? 1u
                 : f->type.kind == WK_SK_STR ? WK__MPF_SMALL
                 : f->type.kind == WK_SK_VALUE ? 5u
                                               : 9u;
        }
    }
    return n;
}

/* One field at `o` (its key, then its value from the struct at `base`), in the room the
 * record's fixed part keeps; NULL to give up. */
static inline __attribute__((always_inline)) uint8_t *wk__mpf_field(wk_buf *out, uint8_t *o,
                                                                   const wk_schema_field *f,
                                                                   const uint8_t *base,
                                                                   size_t fixed)
{
    const uint8_t *p = base + f->offset;
    *o = (uint8_t)(0xa0u | f->name_len);
    memcpy(o + 1, f->name, f->name_len);
    o += 1u + f->name_len;
    switch ((wk_schema_kind)f->type.kind) {
    case WK_SK_STR: {
        const char *str = *(const char *const *)p;
        if (str == NULL) {
            return NULL; /* nil or "" by the field's flags: the library's call */
        }
        size_t len = strlen(str);
        if (len >= 32) {
            return NULL;
        }
        *o = (uint8_t)(0xa0u | len);
        wk_copy_short(o + 1, str, len);
        return o + 1 + len;
    }
    case WK_SK_VALUE: return wk__mpf_value(out, o, (const wk_value *)p, fixed);
    default: return wk__mpf_scalar(o, f->type.kind, p); /* NULL: not folded (wk__mpf_shape) */
    }
}

/* wk_schema_encode_mp over a descriptor of the folded shape: the record straight into `out`
 * when the index is built and the buffer has the room, else (or on giving up, with out->len
 * back where it was) the library function. */
static inline __attribute__((always_inline)) wk_status
wk__mpf_encode(const wk_schema *s, const void *obj, wk_buf *out, wk_error *err)
{
    if (obj != NULL && out != NULL && s->rt != NULL &&
        __atomic_load_n(&s->rt->index, __ATOMIC_ACQUIRE) != NULL) {
        const size_t fixed = wk__mpf_fixed(s);
        const size_t start = out->len;
        if (WK_LIKELY(out->data != NULL && out->cap - start >= fixed)) {
            uint8_t *o = out->data + start;
            *o++ = (uint8_t)(0x80u | s->nfields);
#pragma GCC unroll 16
            for (uint32_t i = 0; i < WK__MPF_MAX; i++) {
                if (i < s->nfields && o != NULL) {
                    o = wk__mpf_field(out, o, &s->fields[i], (const uint8_t *)obj, fixed);
                }
            }
            if (WK_LIKELY(o != NULL)) {
                out->len = (size_t)(o - out->data);
                return WK_OK;
            }
            out->len = start;
        }
    }
    return (wk_schema_encode_mp)(s, obj, out, err);
}

/* The call: folded when the descriptor's shape is known at compile time, else the library. */
static inline __attribute__((always_inline)) wk_status
wk__schema_encode_mp_call(const wk_schema *s, const void *obj, wk_buf *out, wk_error *err)
{
    /* (a local: __builtin_constant_p of an expression with a call is 0 before inlining) */
    const bool folds = s != NULL && wk__mpf_shape(s);
    if (__builtin_constant_p(folds) && folds) {
        return wk__mpf_encode(s, obj, out, err);
    }
    return (wk_schema_encode_mp)(s, obj, out, err);
}

#define wk_schema_encode_mp(s, obj, out, err) wk__schema_encode_mp_call((s), (obj), (out), (err))

#endif

#ifdef __cplusplus
}
#endif
#endif
