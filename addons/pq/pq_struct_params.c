/*
 * Structs into query parameters: each named field of a schema-described struct becomes one
 * wk_pq_param, ready for wk_pq_exec and the other senders, which encode it through the
 * connection's registry.
 *
 * Where it sits: the caller's struct -> this file (per field: the C kind the registry has a
 * binary encoder for, the member itself or a converted copy in the arena) -> wk_pq_param ->
 * pq_params.c's encoding. The choices: members whose C type is a pg kind's (bool, int16,
 * int32, int64, float, double, wk_slice bytes) are bound in place; other integers are
 * widened into the arena; strings go as text of unspecified type, so the server reads them
 * as whatever type the statement gives the parameter (a char * is as often a uuid or a
 * numeric as a text); free-form values, nested structs and arrays go as jsonb, written by
 * the JSON writer (wk_json_encode_value, wk_schema_encode_json), so one JSON rule holds on
 * both sides of the database. A NULL field gives a parameter of the same type with no value,
 * so a statement keeps one parameter type whatever the row.
 */
#include <stdlib.h>

#include "pg/pg_interface.h"
#include "pq/pq_internal.h"
#include "wirekit/json.h"
#include "wirekit/pq.h"

/* err filled with code, message and the field's name as its path; returns code. */
static wk_status fail_field(wk_schema_error *err, wk_status code, size_t index,
                            const char *msg, const char *name, size_t len)
{
    if (err != NULL) {
        wk_error_set(&err->base, code, index, msg);
        size_t n = len < WK_SCHEMA_PATH_MAX - 1 ? len : WK_SCHEMA_PATH_MAX - 1;
        memcpy(err->path, name, n);
        err->path[n] = '\0';
    }
    return code;
}

/* A copy of `n` bytes of `p` in the arena (NULL when out of memory). */
static void *arena_copy(wk_arena *a, const void *p, size_t n, size_t align)
{
    void *q = wk_arena_alloc(a, n != 0 ? n : 1, align);
    if (q != NULL && n != 0) {
        memcpy(q, p, n);
    }
    return q;
}

/* The JSON text in buf as a wk_slice in the arena, bound as jsonb. */
static wk_status bind_json(wk_buf *buf, wk_pq_param *out, wk_arena *arena)
{
    wk_slice s;
    s.ptr = arena_copy(arena, buf->data, buf->len, 1);
    s.len = buf->len;
    wk_slice *slot = s.ptr != NULL ? arena_copy(arena, &s, sizeof s, _Alignof(wk_slice)) : NULL;
    if (slot == NULL) {
        return WK_ERR_NOMEM;
    }
    out->value = slot;
    return WK_OK;
}

/* An array field's JSON: the struct written through a one-field descriptor of the field as
 * {"name":[...]}, of which the array is the part after the key (a name the plan's JSON keys
 * need no escape for, else WK_ERR_UNSUPPORTED). */
static wk_status array_json(const wk_schema *s, const wk_schema_field *f, const void *obj,
                            wk_buf *buf, wk_error *err)
{
    for (uint32_t i = 0; i < f->name_len; i++) {
        uint8_t c = (uint8_t)f->name[i];
        if (c < 0x20 || c == '"' || c == '\\') {
            return wk_error_set(err, WK_ERR_UNSUPPORTED, 0,
                                "array field name needs escaping in JSON");
        }
    }
    wk_schema_rt rt = {NULL};
    wk_schema one = {s->name, s->version, WK_SCHEMA_ROOT_STRUCT, s->size, f, 1, &rt};
    wk_status st = wk_schema_encode_json(&one, obj, buf, err);
    wk_schema_unprepare(&one);
    if (st != WK_OK) {
        return st;
    }
    size_t key = (size_t)f->name_len + 4; /* {"name": */
    memmove(buf->data, buf->data + key, buf->len - key - 1);
    buf->len -= key + 1;
    return WK_OK;
}

/* Field f of obj as parameter *out: WK_OK, or the failure (err->base filled). */
static wk_status bind_field(const wk_schema *s, const wk_schema_field *f, const uint8_t *obj,
                            wk_pq_param *out, wk_buf *buf, wk_arena *arena, wk_error *err)
{
    const uint8_t *p = obj + f->offset;
    bool null = (f->flags & WK_PRESENCE) != 0 && !*(const bool *)(obj + f->presence_offset);
    bool nullable = (f->flags & WK_NULLABLE) != 0;
    out->oid = 0;
    out->value = p;
    /* integers the registry has no kind of their own for, widened into the arena */
    int64_t wide = 0;
    wk_pg_kind wide_kind = WK_PG_KIND_COUNT;
    switch ((wk_schema_kind)f->type.kind) {
    case WK_SK_BOOL: out->kind = WK_PG_KIND_BOOL; break;
    case WK_SK_I16: out->kind = WK_PG_KIND_I16; break;
    case WK_SK_I32: out->kind = WK_PG_KIND_I32; break;
    case WK_SK_I64: out->kind = WK_PG_KIND_I64; break;
    case WK_SK_F32: out->kind = WK_PG_KIND_F32; break;
    case WK_SK_F64: out->kind = WK_PG_KIND_F64; break;
    case WK_SK_I8: wide = *(const int8_t *)p; wide_kind = WK_PG_KIND_I16; break;
    case WK_SK_U8: wide = *p; wide_kind = WK_PG_KIND_I16; break;
    case WK_SK_U16: wide = *(const uint16_t *)p; wide_kind = WK_PG_KIND_I32; break;
    case WK_SK_U32: wide = *(const uint32_t *)p; wide_kind = WK_PG_KIND_I64; break;
    case WK_SK_U64: {
        uint64_t u = *(const uint64_t *)p;
        if (u > INT64_MAX && !null) {
            return wk_error_set(err, WK_ERR_RANGE, 0, "uint64 field above INT64_MAX");
        }
        wide = (int64_t)(u & INT64_MAX);
        wide_kind = WK_PG_KIND_I64;
        break;
    }
    case WK_SK_STR:
    case WK_SK_STRBUF: {
        /* text of unspecified type: the server gives it the parameter's type */
        out->kind = WK_PG_KIND_TEXT;
        const char *str = f->type.kind == WK_SK_STR ? *(const char *const *)p : (const char *)p;
        if (f->type.kind == WK_SK_STR && str == NULL && nullable) {
            null = true;
        }
        if (null) {
            break;
        }
        wk_slice sl;
        sl.ptr = str != NULL ? str : "";
        sl.len = f->type.kind == WK_SK_STR ? strlen(sl.ptr) : strnlen(sl.ptr, f->type.size);
        if (f->type.kind == WK_SK_STRBUF && sl.len == f->type.size) {
            /* a full char[N] without its NUL: libpq reads text parameters up to a NUL */
            sl.ptr = wk_arena_strndup(arena, sl.ptr, sl.len);
        }
        out->value = sl.ptr != NULL ? arena_copy(arena, &sl, sizeof sl, _Alignof(wk_slice))
                                    : NULL;
        if (out->value == NULL) {
            return wk_error_set(err, WK_ERR_NOMEM, 0, "out of arena memory for parameters");
        }
        break;
    }
    case WK_SK_BYTES:
        out->kind = WK_PG_KIND_BYTES;
        if (((const wk_slice *)p)->ptr == NULL && nullable) {
            null = true;
        }
        break;
    case WK_SK_TIMESTAMP: {
        const wk_timestamp *ts = (const wk_timestamp *)p;
        out->kind = WK_PG_KIND_TIMESTAMP;
        out->oid = WK_PG_OID_TIMESTAMPTZ;
        if (null) {
            break;
        }
        /* microseconds since 2000-01-01, the sub-microsecond part dropped */
        if (ts->nsec >= 1000000000u || ts->sec > INT64_MAX / 1000000 - 946684800 ||
            ts->sec < INT64_MIN / 1000000 + 946684800) {
            return wk_error_set(err, WK_ERR_RANGE, 0, "timestamp out of PostgreSQL's range");
        }
        int64_t us = (ts->sec - 946684800) * 1000000 + (int64_t)(ts->nsec / 1000u);
        out->value = arena_copy(arena, &us, sizeof us, _Alignof(int64_t));
        if (out->value == NULL) {
            return wk_error_set(err, WK_ERR_NOMEM, 0, "out of arena memory for parameters");
        }
        break;
    }
    case WK_SK_VALUE:
    case WK_SK_STRUCT:
    case WK_SK_ARRAY: {
        out->kind = WK_PG_KIND_STR;
        out->oid = WK_PG_OID_JSONB;
        if (f->type.kind == WK_SK_VALUE && nullable &&
            ((const wk_value *)p)->type == WK_VAL_NIL) {
            null = true;
        }
        if (f->type.kind == WK_SK_ARRAY && nullable && *(const void *const *)p == NULL) {
            null = true;
        }
        if (null) {
            break;
        }
        wk_buf_clear(buf);
        wk_status st;
        if (f->type.kind == WK_SK_VALUE) {
            st = wk_json_encode_value((const wk_value *)p, NULL, buf, err);
        } else if (f->type.kind == WK_SK_STRUCT) {
            st = wk_schema_encode_json(f->type.schema, p, buf, err);
        } else {
            st = array_json(s, f, obj, buf, err);
        }
        if (st == WK_OK && bind_json(buf, out, arena) != WK_OK) {
            st = wk_error_set(err, WK_ERR_NOMEM, 0, "out of arena memory for parameters");
        }
        if (st != WK_OK) {
            return st;
        }
        break;
    }
    }
    if (wide_kind != WK_PG_KIND_COUNT) {
        out->kind = wide_kind;
        if (!null) {
            /* the widened value in the C type of its kind */
            int16_t w16 = (int16_t)wide;
            int32_t w32 = (int32_t)wide;
            const void *src = wide_kind == WK_PG_KIND_I16   ? (const void *)&w16
                              : wide_kind == WK_PG_KIND_I32 ? (const void *)&w32
                                                            : (const void *)&wide;
            size_t size = wide_kind == WK_PG_KIND_I16 ? 2u : wide_kind == WK_PG_KIND_I32 ? 4u : 8u;
            out->value = arena_copy(arena, src, size, size);
            if (out->value == NULL) {
                return wk_error_set(err, WK_ERR_NOMEM, 0, "out of arena memory for parameters");
            }
        }
    }
    if (null) {
        out->value = NULL;
    }
    return WK_OK;
}

/* Public (wirekit/pq.h): fields[i] (or field i) of obj as out[i]. */
WK_API wk_status wk_pq_struct_params(const wk_schema *schema, const void *obj,
                                     const char *const *fields, size_t n, wk_pq_param *out,
                                     wk_arena *arena, wk_schema_error *err)
{
    if (err != NULL) {
        err->path[0] = '\0';
    }
    if (schema == NULL || obj == NULL || (out == NULL && n != 0) || arena == NULL ||
        schema->root != WK_SCHEMA_ROOT_STRUCT || (fields == NULL && n != schema->nfields)) {
        return fail_field(err, WK_ERR_ARG, 0, "struct params: bad arguments", "", 0);
    }
    wk_status st = wk_schema_prepare(schema, NULL, err != NULL ? &err->base : NULL);
    if (st != WK_OK) {
        return st;
    }
    wk_buf buf;
    wk_buf_init(&buf, NULL, 0);
    for (size_t i = 0; i < n && st == WK_OK; i++) {
        const wk_schema_field *f = NULL;
        if (fields == NULL) {
            f = &schema->fields[i];
        } else {
            size_t len = fields[i] != NULL ? strlen(fields[i]) : 0;
            for (uint32_t k = 0; k < schema->nfields && f == NULL; k++) {
                const wk_schema_field *c = &schema->fields[k];
                if (c->name_len == len && memcmp(c->name, fields[i], len) == 0) {
                    f = c;
                }
            }
            if (f == NULL) {
                st = fail_field(err, WK_ERR_NOT_FOUND, i, "no field of this name in the schema",
                                fields[i] != NULL ? fields[i] : "", len);
                break;
            }
        }
        st = bind_field(schema, f, obj, &out[i], &buf, arena, err != NULL ? &err->base : NULL);
        if (st != WK_OK) {
            fail_field(err, st, i, err != NULL ? err->base.msg : NULL, f->name, f->name_len);
        }
    }
    wk_buf_free(&buf);
    return st;
}
