/*
 * The row policy, records to rows: the inverse of row.c for COPY in. A record (a wk_value map
 * keyed as row.c keys it, or an array in column order) becomes each column's value in the
 * column's wire format, ready for a binary COPY tuple.
 *
 * Where it sits: `wirekit pg copy in` / wk_pq_copy_in_record (addons/pq) -> wk_pg_row_parse
 * here -> per column: json/jsonb as their JSON text; arrays and composites built in their
 * binary layouts (array_send, record_send) right here, one pass over the tree; scalars as
 * PostgreSQL text input through the column type's TEXT encoder from the registry (which
 * parses and validates it as the server's *_in would) -> bytes in the description's buffer.
 *
 * The trade-off: building arrays and composites directly in binary, instead of a text literal
 * the type's parser reads back, keeps the work linear at any nesting (a text literal doubles
 * its quoting per level); it costs this file the two layouts, which record.c and array.c
 * also read.
 */
#include <stdio.h>

#include "pg/row_policy.h"
#include "wirekit/json.h"

/* The recursion below follows the value tree (arrays in composites in arrays...), bounded
 * by the same budget as the decoders. */
typedef struct enc_ctx {
    wk_pg_rowdesc *d;
    wk_error *err;
    unsigned depth;
} enc_ctx;

static wk_status encode_value(enc_ctx *x, wk_pg_oid oid, wk_pg_format fmt, const wk_value *v,
                              wk_buf *out);

static wk_status nomem(enc_ctx *x)
{
    return wk__pg_fail(x->err, WK_ERR_NOMEM, 0, "out of memory for a record");
}

/* The codec of `oid` when it is a composite with known fields (a catalog composite). */
static const wk_pg_composite *composite_of(const wk_pg_codec *codec)
{
    const wk_pg_codec *tmpl = wk_pg_composite_codec();
    if (codec == NULL || codec->data == NULL ||
        codec->decode[WK_PG_BINARY][WK_PG_KIND_EVENTS] !=
            tmpl->decode[WK_PG_BINARY][WK_PG_KIND_EVENTS]) {
        return NULL;
    }
    return codec->data;
}

static bool is_json_codec(const wk_pg_codec *codec)
{
    return codec != NULL && (strcmp(codec->name, "json") == 0 || strcmp(codec->name, "jsonb") == 0);
}

/* A scalar as PostgreSQL text input, appended to `t`; false when `v` is no scalar. */
static wk_status scalar_text(const wk_value *v, wk_buf *t, bool *done)
{
    static const char hex[] = "0123456789abcdef";
    char num[32];
    int n = 0;
    *done = true;
    switch (v->type) {
    case WK_VAL_BOOL: return wk_buf_append(t, v->u.b ? "t" : "f", 1);
    case WK_VAL_INT: n = snprintf(num, sizeof num, "%lld", (long long)v->u.i); break;
    case WK_VAL_UINT: n = snprintf(num, sizeof num, "%llu", (unsigned long long)v->u.u); break;
    case WK_VAL_FLOAT: return wk__pg_put_float(t, v->u.f, (v->flags & WK_VALF_F32) != 0);
    case WK_VAL_STR:
    case WK_VAL_RAWNUM: return wk_buf_append(t, v->u.str, v->len);
    case WK_VAL_BIN: {
        wk_status st = wk_buf_append(t, "\\x", 2); /* bytea's hex input */
        for (uint32_t i = 0; i < v->len && st == WK_OK; i++) {
            char h[2] = {hex[v->u.bin[i] >> 4], hex[v->u.bin[i] & 15]};
            st = wk_buf_append(t, h, 2);
        }
        return st;
    }
    default: *done = false; return WK_OK;
    }
    return wk_buf_append(t, num, (size_t)n);
}

/* A scalar through the type's TEXT encoder (its text input parser). */
static wk_status encode_scalar(enc_ctx *x, wk_pg_oid oid, wk_pg_format fmt, const wk_value *v,
                               wk_buf *out)
{
    wk_buf *t = &x->d->cell;
    wk_buf_clear(t);
    bool done = false;
    if (scalar_text(v, t, &done) != WK_OK) {
        return nomem(x);
    }
    if (!done) {
        return wk__pg_fail(x->err, WK_ERR_TYPE, 0,
                           v->type == WK_VAL_MAP
                               ? "an object for a column that is not json, jsonb or a composite"
                               : "an array for a column that is not an array, json or jsonb");
    }
    const wk_pg_encoder *e = wk_pg_registry_find_encoder_for(x->d->reg, oid, fmt, WK_PG_KIND_TEXT);
    if (e == NULL) {
        return wk__pg_fail(x->err, WK_ERR_NOT_FOUND, 0,
                           fmt == WK_PG_BINARY ? "the column's type has no binary encoder"
                                               : "the column's type has no encoder");
    }
    wk_slice s = {t->data != NULL ? (const char *)t->data : "", t->len};
    return wk__pg_encode_part(e, &s, out, x->err);
}

/* json: the JSON text; jsonb in binary: version 1, then the text. `null` is the JSON null. */
static wk_status encode_json(enc_ctx *x, const wk_pg_codec *codec, wk_pg_format fmt,
                             const wk_value *v, wk_buf *out)
{
    if (fmt == WK_PG_BINARY && strcmp(codec->name, "jsonb") == 0 && wk_buf_push(out, 1) != WK_OK) {
        return nomem(x);
    }
    return wk_json_encode_value(v, NULL, out, x->err);
}

/* Writes a 4-byte length word now and fills it once the value after it is done. */
static wk_status begin_len(enc_ctx *x, wk_buf *out, size_t *at)
{
    static const uint8_t zero[4] = {0, 0, 0, 0};
    *at = out->len;
    return wk_buf_append(out, zero, 4) == WK_OK ? WK_OK : nomem(x);
}

static wk_status end_len(enc_ctx *x, wk_buf *out, size_t at)
{
    size_t n = out->len - at - 4;
    if (n > INT32_MAX) {
        return wk__pg_fail(x->err, WK_ERR_RANGE, 0, "a value longer than 2 GiB");
    }
    wk__pg_put32(out->data + at, (uint32_t)n);
    return WK_OK;
}

/* One element or field: a length word (-1: NULL) and the bytes in binary. */
static wk_status encode_part(enc_ctx *x, wk_pg_oid oid, const wk_value *v, bool json_null,
                             wk_buf *out)
{
    if (v->type == WK_VAL_NIL && !json_null) {
        uint8_t w[4];
        wk__pg_put32(w, UINT32_MAX);
        return wk_buf_append(out, w, 4) == WK_OK ? WK_OK : nomem(x);
    }
    size_t at;
    wk_status st = begin_len(x, out, &at);
    st = st == WK_OK ? encode_value(x, oid, WK_PG_BINARY, v, out) : st;
    return st == WK_OK ? end_len(x, out, at) : st;
}

/* ---- arrays: array_send's layout ---- */

/* The dimensions of a nested array value: each level's length, down to the first item that
 * is not an array (json/jsonb elements: one dimension, since a JSON array is an element). */
static int array_dims(const wk_value *v, bool flat, int32_t dims[WK_PG_MAXDIM])
{
    int nd = 0;
    const wk_value *a = v;
    for (;;) {
        if (nd == WK_PG_MAXDIM) {
            return -1;
        }
        dims[nd++] = (int32_t)a->len;
        if (flat || a->len == 0 || a->u.items[0].type != WK_VAL_ARRAY) {
            return a->len == 0 && nd == 1 ? 0 : nd;
        }
        a = &a->u.items[0];
    }
}

/* The elements of dimension `level` onwards, row-major, each checked against the shape. */
static wk_status array_elems(enc_ctx *x, wk_pg_oid elem, bool json, const wk_value *a,
                             int level, int ndim, const int32_t *dims, bool *has_null,
                             wk_buf *out)
{
    if (a->type != WK_VAL_ARRAY || a->len != (uint32_t)dims[level]) {
        return wk__pg_fail(x->err, WK_ERR_TYPE, 0,
                           "a multidimensional array whose sub-arrays differ in length");
    }
    wk_status st = WK_OK;
    for (uint32_t i = 0; i < a->len && st == WK_OK; i++) {
        const wk_value *e = &a->u.items[i];
        if (level + 1 < ndim) {
            st = array_elems(x, elem, json, e, level + 1, ndim, dims, has_null, out);
            continue;
        }
        if (e->type == WK_VAL_ARRAY && !json) {
            return wk__pg_fail(x->err, WK_ERR_TYPE, 0,
                               "a multidimensional array whose sub-arrays differ in depth");
        }
        *has_null = *has_null || e->type == WK_VAL_NIL;
        st = encode_part(x, elem, e, false, out);
    }
    return st;
}

static wk_status encode_array(enc_ctx *x, wk_pg_oid elem, const wk_value *v, wk_buf *out)
{
    const wk_pg_codec *ec = wk_pg_registry_codec_for(x->d->reg, elem, NULL);
    bool json = is_json_codec(ec);
    int32_t dims[WK_PG_MAXDIM];
    int ndim = array_dims(v, json, dims);
    if (ndim < 0) {
        return wk__pg_fail(x->err, WK_ERR_LIMIT, 0, "an array of more than 6 dimensions");
    }
    uint8_t head[12 + 8 * WK_PG_MAXDIM];
    wk__pg_put32(head, (uint32_t)ndim);
    wk__pg_put32(head + 4, 0); /* has nulls: set below */
    wk__pg_put32(head + 8, elem);
    for (int i = 0; i < ndim; i++) {
        wk__pg_put32(head + 12 + 8 * i, (uint32_t)dims[i]);
        wk__pg_put32(head + 16 + 8 * i, 1); /* lower bound 1, as JSON arrays start */
    }
    size_t at = out->len;
    if (wk_buf_append(out, head, 12 + 8 * (size_t)ndim) != WK_OK) {
        return nomem(x);
    }
    bool has_null = false;
    wk_status st = ndim > 0 ? array_elems(x, elem, json, v, 0, ndim, dims, &has_null, out) : WK_OK;
    if (st == WK_OK && has_null) {
        wk__pg_put32(out->data + at + 4, 1);
    }
    return st;
}

/* ---- composites: record_send's layout, fields by name ---- */

static wk_status encode_composite(enc_ctx *x, const wk_pg_composite *c, const wk_value *v,
                                  wk_buf *out)
{
    size_t natts = wk__pg_composite_natts(c);
    uint8_t w[4];
    wk__pg_put32(w, (uint32_t)natts);
    if (wk_buf_append(out, w, 4) != WK_OK) {
        return nomem(x);
    }
    static const wk_value nil = {0};
    size_t matched = 0;
    wk_status st = WK_OK;
    for (size_t i = 0; i < natts && st == WK_OK; i++) {
        wk_slice name = wk__pg_composite_name(c, i);
        const wk_value *f = &nil;
        for (uint32_t k = 0; k < v->len; k++) {
            const wk_value *key = &v->u.pairs[k].key;
            if (key->type == WK_VAL_STR && key->len == name.len &&
                memcmp(key->u.str, name.ptr, name.len) == 0) {
                f = &v->u.pairs[k].val;
                matched++;
                break;
            }
        }
        wk_pg_oid type = wk__pg_composite_type(c, i);
        wk__pg_put32(w, type);
        st = wk_buf_append(out, w, 4) == WK_OK ? encode_part(x, type, f, false, out) : nomem(x);
    }
    if (st == WK_OK && matched != v->len) {
        return wk__pg_fail(x->err, WK_ERR_NOT_FOUND, 0,
                           "an object key that is not a field of the composite type");
    }
    return st;
}

/* One value of type `oid` in `fmt`. */
static wk_status encode_value(enc_ctx *x, wk_pg_oid oid, wk_pg_format fmt, const wk_value *v,
                              wk_buf *out)
{
    if (x->depth >= WK_PG_MAX_NESTING) {
        return wk__pg_nest_fail(x->err);
    }
    bool is_array = false;
    const wk_pg_codec *codec = wk_pg_registry_codec_for(x->d->reg, oid, &is_array);
    wk_status st;
    x->depth++;
    if (is_json_codec(codec) && !is_array) {
        st = encode_json(x, codec, fmt, v, out);
    } else if (is_array && v->type == WK_VAL_ARRAY && fmt == WK_PG_BINARY) {
        st = encode_array(x, wk_pg_registry_elem_oid(x->d->reg, oid), v, out);
    } else if (v->type == WK_VAL_MAP && fmt == WK_PG_BINARY && composite_of(codec) != NULL) {
        st = encode_composite(x, composite_of(codec), v, out);
    } else {
        st = encode_scalar(x, oid, fmt, v, out);
    }
    x->depth--;
    return st;
}

/* ---- records ---- */

/* The column whose key is key[0..len), or SIZE_MAX: one probe of the key index, so a record
 * costs time linear in its keys however wide the table. */
static size_t find_column(const wk_pg_rowdesc *d, const char *key, size_t len)
{
    for (size_t h = wk__pg_row_key_hash(key, len) & d->kmask; d->kslot[h] != 0;
         h = (h + 1) & d->kmask) {
        const wk__pg_row_col *c = &d->cols[d->kslot[h] - 1];
        if (c->key_len == len && memcmp(c->key, key, len) == 0) {
            return d->kslot[h] - 1;
        }
    }
    return SIZE_MAX;
}

/* Column i's value from record value v: NULL unless json (where null is the JSON null). */
static wk_status put_column(wk_pg_rowdesc *d, size_t i, const wk_value *v, wk_error *err)
{
    const wk__pg_row_col *c = &d->cols[i];
    if (v->type == WK_VAL_NIL && !c->is_json) {
        return WK_OK;
    }
    enc_ctx x = {d, err, 0};
    d->offs[2 * i] = d->enc.len;
    wk_status st = encode_value(&x, c->ev->oid, c->col.format, v, &d->enc);
    d->offs[2 * i + 1] = d->enc.len;
    return st;
}

/* Public (wirekit/pg.h): see the contract there. */
WK_API wk_status wk_pg_row_parse(wk_pg_rowdesc *d, const wk_value *rec, const uint8_t **vals,
                                 int *lens, wk_error *err)
{
    d->failed_col = SIZE_MAX;
    d->unknown_key = SIZE_MAX;
    wk_buf_clear(&d->enc);
    if (err != NULL) {
        err->msg = NULL;
        err->code = WK_OK;
        err->offset = 0;
    }
    for (size_t i = 0; i < d->ncols; i++) {
        d->offs[2 * i] = SIZE_MAX;
    }
    wk_status st = WK_OK;
    if (rec->type == WK_VAL_ARRAY && (d->opts.flags & WK_PG_ROW_ARRAYS)) {
        if (rec->len != d->ncols) {
            return wk__pg_fail(err, WK_ERR_TYPE, 0, "a record array with a value per column");
        }
        for (size_t i = 0; i < d->ncols && st == WK_OK; i++) {
            st = put_column(d, i, &rec->u.items[i], err);
            d->failed_col = st == WK_OK ? SIZE_MAX : i;
        }
    } else if (rec->type == WK_VAL_MAP) {
        for (uint32_t p = 0; p < rec->len && st == WK_OK; p++) {
            const wk_value *k = &rec->u.pairs[p].key;
            size_t i = k->type == WK_VAL_STR ? find_column(d, k->u.str, k->len) : SIZE_MAX;
            if (i == SIZE_MAX) {
                d->unknown_key = p;
                return wk__pg_fail(err, WK_ERR_NOT_FOUND, p, "a key that is not a column");
            }
            if (d->offs[2 * i] != SIZE_MAX) {
                d->failed_col = i;
                return wk__pg_fail(err, WK_ERR_SYNTAX, p, "a column given twice");
            }
            st = put_column(d, i, &rec->u.pairs[p].val, err);
            d->failed_col = st == WK_OK ? SIZE_MAX : i;
        }
    } else {
        return wk__pg_fail(err, WK_ERR_TYPE, 0,
                           (d->opts.flags & WK_PG_ROW_ARRAYS) ? "a record must be an array"
                                                              : "a record must be an object");
    }
    if (st != WK_OK) {
        if (err != NULL && err->msg == NULL) {
            wk__pg_fail(err, st, 0, wk_status_str(st));
        }
        return st;
    }
    for (size_t i = 0; i < d->ncols; i++) {
        bool null = d->offs[2 * i] == SIZE_MAX;
        vals[i] = null ? NULL : d->enc.data + d->offs[2 * i];
        lens[i] = null ? -1 : (int)(d->offs[2 * i + 1] - d->offs[2 * i]);
    }
    return WK_OK;
}
