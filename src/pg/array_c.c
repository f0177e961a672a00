/*
 * wk_pg_decode_array: a one-dimensional array value straight into a caller's C array.
 *
 * Where it sits: an array column's bytes (a row value, after plan.c or the caller found the
 * array decoder in the registry) -> wk_pg_decode_array here -> either the one pass below, or
 * array.c's parser and iterator with the element codec's own decoder (int.c, float.c, ...)
 * -> the caller's C array of elem_kind, with NULL flags.
 *
 * The common case, a text literal `{1,2,3}` of int2/int4/int8/float4/float8 decoded into its
 * natural C kind by the built-in codec, is read in one pass: no header, no element iterator,
 * no per-element indirect call. Anything the pass does not recognise (quotes, escapes,
 * spaces, NULLs, dimension decorations, nesting, a number outside the plain forms or range,
 * more elements than fit) sends the whole value to the general path: the array parser, its
 * iterator and the element codec's own decoder, which also reports every error. So the pass
 * only ever answers where the general path would give the same values.
 */
#include "pg/pg_interface.h"

/* Bytes that end the one-pass float scan: 1 = separator or closing brace, 2 = a byte only
 * the general parser handles (spaces, quotes, escapes, nested braces). */
static const uint8_t elem_cls[256] = {
    ['\t'] = 2, ['\n'] = 2, ['\v'] = 2, ['\f'] = 2, ['\r'] = 2, [' '] = 2,
    ['"'] = 2,  ['\\'] = 2, ['{'] = 2,  [','] = 1,  ['}'] = 1,
};

/* One pass over `{e,e,...}` (p[n-1] == '}' is the sentinel that stops every scan). Returns
 * false, with nothing promised about out->elems, when the general path must decide. */
static bool fast_text(wk__pg_fast_form form, const uint8_t *p, size_t n, wk_pg_carray *out)
{
    if (n < 2 || p[0] != '{' || p[n - 1] != '}') {
        return false;
    }
    if (n == 2) {
        out->count = 0;
        return true;
    }
    size_t cap = out->cap < WK__PG_MAX_ARRAY_SIZE ? out->cap : WK__PG_MAX_ARRAY_SIZE;
    uint8_t *o = out->elems;
    size_t i = 1, k = 0;
    for (;;) {
        if (k >= cap) {
            return false;
        }
        if (form <= WK__PG_FAST_I64) {
            bool neg = p[i] == '-';
            i += neg ? 1 : 0;
            size_t ds = i;
            uint64_t u = 0; /* at most 19 digits are read: no overflow */
            while ((unsigned)(p[i] - '0') < 10) {
                u = u * 10 + (unsigned)(p[i] - '0');
                i++;
                if (i - ds > 18) {
                    return false;
                }
            }
            if (i == ds) {
                return false;
            }
            int64_t v = neg ? -(int64_t)u : (int64_t)u;
            if (form == WK__PG_FAST_I16) {
                if (v < INT16_MIN || v > INT16_MAX) {
                    return false;
                }
                int16_t x = (int16_t)v;
                memcpy(o + k * 2, &x, 2);
            } else if (form == WK__PG_FAST_I32) {
                if (v < INT32_MIN || v > INT32_MAX) {
                    return false;
                }
                int32_t x = (int32_t)v;
                memcpy(o + k * 4, &x, 4);
            } else {
                memcpy(o + k * 8, &v, 8);
            }
        } else {
            size_t st = i;
            while (elem_cls[p[i]] == 0) {
                i++;
            }
            double v;
            if (elem_cls[p[i]] != 1 || !wk__pg_parse_float(p + st, i - st, form == WK__PG_FAST_F32,
                                                          &v)) {
                return false;
            }
            if (form == WK__PG_FAST_F32) {
                float x = (float)v;
                memcpy(o + k * 4, &x, 4);
            } else {
                memcpy(o + k * 8, &v, 8);
            }
        }
        k++;
        if (p[i] == ',') {
            i++;
            continue;
        }
        if (p[i] == '}' && i == n - 1) {
            break;
        }
        return false;
    }
    out->count = k;
    return true;
}

/* The general path: parse (every element checked), refuse more than one dimension or more
 * elements than out->cap (out->count still says how many there are), then decode each
 * element with `fn` into out->elems[k]; a NULL element needs out->nulls and is zero-filled. */
static wk_status general(const wk_pg_decoder *d, wk_pg_decode_fn fn, size_t esize,
                         const uint8_t *p, size_t n, wk_pg_carray *out, wk_arena *arena,
                         wk_error *err)
{
    wk_pg_format f = (wk_pg_format)d->format;
    wk_pg_array a;
    wk_status st = wk__pg_array_parse(f, d->elem_oid, p, n, &a, err);
    if (st != WK_OK) {
        return st;
    }
    if (a.ndim > 1) {
        return wk__pg_fail(err, WK_ERR_TYPE, 0, "array has more than one dimension");
    }
    out->count = a.nitems;
    if (a.nitems > out->cap) {
        return wk__pg_fail(err, WK_ERR_LIMIT, 0, "array has more elements than the C array holds");
    }
    /* The element decoder the registry would resolve for (element OID, format, kind) in the
     * array's codec (VALUE/EVENTS/TEXT kinds, the only ones needing d->elem, are refused). */
    wk_pg_decoder ed;
    memset(&ed, 0, sizeof ed);
    ed.fn = fn;
    ed.codec = d->codec;
    ed.reg = d->reg;
    ed.oid = d->elem_oid;
    ed.format = d->format;
    ed.kind = (uint8_t)out->elem_kind;
    wk_pg_array_iter it;
    wk_pg_array_iter_init(&it, &a, arena);
    uint8_t *o = out->elems;
    for (uint32_t k = 0; k < a.nitems; k++) {
        const uint8_t *ep;
        size_t en;
        bool isn;
        st = wk_pg_array_next(&it, &ep, &en, &isn, err);
        if (st != WK_OK) {
            return st;
        }
        if (isn) {
            if (out->nulls == NULL) {
                return wk__pg_fail(err, WK_ERR_TYPE, 0,
                                   "array has a NULL element and no NULL flags were given");
            }
            out->nulls[k] = true;
            memset(o + (size_t)k * esize, 0, esize);
            continue;
        }
        if (out->nulls != NULL) {
            out->nulls[k] = false;
        }
        st = fn(&ed, ep, en, o + (size_t)k * esize, arena, err);
        if (st != WK_OK) {
            /* Element offsets are relative to the element; make them relative to the value
             * when the element is a view into it (escaped elements are copies). */
            if (err != NULL && ep >= p && ep < p + n) {
                err->offset += (size_t)(ep - p);
            }
            return st;
        }
    }
    return WK_OK;
}

/* Public (wirekit/pg.h). The element decoder is the array codec's row for elem_kind; the one
 * pass is tried only when that row is one of the direct text decoders (builtins.c tells). */
WK_API wk_status wk_pg_decode_array(const wk_pg_decoder *d, const void *p, size_t n,
                                    wk_pg_carray *out, wk_arena *arena, wk_error *err)
{
    if (d == NULL || out == NULL || d->elem_oid == 0 || d->codec == NULL ||
        (p == NULL && n != 0) || d->format > 1) {
        return wk__pg_fail(err, WK_ERR_ARG, 0, "wk_pg_decode_array needs an array decoder");
    }
    wk_pg_kind k = out->elem_kind;
    size_t esize = wk_pg_kind_size(k);
    if (esize == 0 || k == WK_PG_KIND_ARRAY || (out->elems == NULL && out->cap != 0)) {
        return wk__pg_fail(err, WK_ERR_ARG, 0, "C array element kind or storage is invalid");
    }
    wk_pg_decode_fn fn = d->codec->decode[d->format][k];
    if (fn == NULL) {
        return wk__pg_fail(err, WK_ERR_NOT_FOUND, 0,
                           "the element codec cannot decode into the C array's kind");
    }
    const uint8_t *b = p;
    if (d->format == WK_PG_TEXT) {
        wk__pg_fast_form form = wk__pg_text_fast_form(fn);
        if (form != WK__PG_FAST_NONE && fast_text(form, b, n, out)) {
            if (out->nulls != NULL) {
                memset(out->nulls, 0, out->count);
            }
            return WK_OK;
        }
    }
    return general(d, fn, esize, b, n, out, arena, err);
}
