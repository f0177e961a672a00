/*
 * Rows into structs: a result's columns matched once to a schema's fields by name, then each
 * row decoded straight into the caller's struct.
 *
 * Where it sits: a PGresult (wk_pq_exec, a pipeline, a non-blocking query) -> the plan built
 * here (per column: the registry's decoder, the field's member, how the decoded C value
 * becomes the member) -> per row, each column's bytes through its decoder -> the struct, with
 * strings, bytes and trees copied into the caller's arena. A json/jsonb column feeds a
 * wk_value field through its codec's value tree (the row policy's number rule, the one every
 * row path follows) and a nested struct or array field through the schema JSON decoder, so
 * the schema's own rules and errors apply inside the document.
 *
 * The trade-off: every decision (which decoder, which conversion, what SQL NULL does) is made
 * when the plan is built, so the row loop is a switch per column with no lookup and no
 * allocation besides the arena's copies; a column whose decoder writes the member's own C type
 * (int4 into int32_t, float8 into double, bool) is decoded in place.
 */
#include <stdlib.h>
#include <string.h>

#include "pq/pq_internal.h"
#include "wirekit/json.h"
#include "wirekit/pq.h"

/* How a decoded column becomes its member. */
typedef enum conv {
    CONV_DIRECT,     /* the decoder writes the member's own C type in place */
    CONV_INT,        /* an integer kind (I16, I32, I64, U32) into any integer member */
    CONV_NUM_INT,    /* numeric into an integer member: integral and in range */
    CONV_FLOAT,      /* float or integer kinds into a float member */
    CONV_NUM_FLOAT,  /* numeric into a float member: the nearest double */
    CONV_STR,        /* a text view (KIND_STR) copied into char * or char[N] */
    CONV_TEXT,       /* PostgreSQL's text output (KIND_TEXT) copied into char * or char[N] */
    CONV_RAW,        /* a text-format column of a type no codec knows: its bytes as text */
    CONV_BYTES,      /* a byte view (KIND_BYTES or KIND_STR) copied into a wk_slice */
    CONV_TIMESTAMP,  /* microseconds since 2000 into a wk_timestamp */
    CONV_DATE,       /* days since 2000 into a wk_timestamp at midnight UTC */
    CONV_JSON_STRUCT, /* json text decoded through the nested descriptor */
    CONV_JSON_ARRAY  /* json text decoded as the array field, through a one-field wrapper */
} conv;

/* What SQL NULL does to a field (decided from its kind and flags). */
typedef enum null_rule {
    NULL_FAIL,     /* the field cannot hold NULL: the row fails */
    NULL_PRESENCE, /* presence member false, member zeroed */
    NULL_ZERO,     /* a NULL pointer (char *, wk_slice, array) or a nil wk_value: zeroed */
} null_rule;

/* One fed field: its column, decoder and member. */
typedef struct scol {
    const wk_pg_decoder *dec;
    const wk_schema_field *field;
    int col;               /* the result column */
    uint32_t offset;       /* of the member */
    uint32_t size;         /* of the member (char[N]: N) */
    uint8_t conv;          /* enum conv */
    uint8_t null_rule;     /* enum null_rule */
    uint8_t skind;         /* the field's wk_schema_kind */
    uint8_t pkind;         /* the decoder's wk_pg_kind */
    wk_schema wrap;        /* CONV_JSON_ARRAY: a one-field descriptor of the array field */
    wk_schema_rt wrap_rt;  /* and its lookup state */
} scol;

struct wk_pq_struct_plan {
    wk_pg_registry *reg; /* a reference on the connection's snapshot */
    const wk_schema *schema;
    int ncols;           /* columns of the result shape */
    size_t n;            /* fed fields */
    scol cols[];         /* in field order */
};

/* ---- errors ---- */

/* Fills err with code, offset, static message and `name` (a column or field name, cut to the
 * path's room) as its path; returns code. */
static wk_status fail_named(wk_schema_error *err, wk_status code, size_t offset,
                            const char *msg, const char *name, size_t name_len)
{
    if (err != NULL) {
        wk_error_set(&err->base, code, offset, msg);
        size_t n = name_len < WK_SCHEMA_PATH_MAX - 1 ? name_len : WK_SCHEMA_PATH_MAX - 1;
        memcpy(err->path, name, n);
        err->path[n] = '\0';
    }
    return code;
}

/* A column's failure: the path is its field's name (which is the column's). */
static wk_status fail_col(wk_schema_error *err, const scol *c, wk_status code, size_t offset,
                          const char *msg)
{
    return fail_named(err, code, offset, msg, c->field->name, c->field->name_len);
}

/* Puts "name." in front of the path a nested decode left in err ("name" alone for its root),
 * so the path reads from the column down ("metadata.kids[1].name"); cut at the path's room. */
static void prefix_path(wk_schema_error *err, const wk_schema_field *f)
{
    if (err == NULL) {
        return;
    }
    char tail[WK_SCHEMA_PATH_MAX];
    size_t tl = strnlen(err->path, WK_SCHEMA_PATH_MAX - 1);
    memcpy(tail, err->path, tl);
    size_t room = WK_SCHEMA_PATH_MAX - 1;
    size_t n = f->name_len < room ? f->name_len : room;
    memcpy(err->path, f->name, n);
    /* array paths continue with '[', struct paths with '.' */
    if (tl > 0 && n < room) {
        if (tail[0] != '[') {
            err->path[n++] = '.';
        }
        size_t m = tl < room - n ? tl : room - n;
        memcpy(err->path + n, tail, m);
        n += m;
    }
    err->path[n] = '\0';
}

/* ---- the plan ---- */

/* Whether the decoder d reads json or jsonb text (a domain over them included). */
static bool is_json(const wk_pg_decoder *d)
{
    const char *name = d->codec != NULL ? d->codec->name : NULL;
    return d->oid == WK_PG_OID_JSON || d->oid == WK_PG_OID_JSONB ||
           (name != NULL && (strcmp(name, "json") == 0 || strcmp(name, "jsonb") == 0));
}

/* The first of kinds[0..n) that the registry decodes (oid, format) into, or NULL. */
static const wk_pg_decoder *first_decoder(const wk_pg_registry *reg, wk_pg_oid oid,
                                          wk_pg_format fmt, const wk_pg_kind *kinds, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const wk_pg_decoder *d = wk_pg_registry_find_decoder(reg, oid, fmt, kinds[i]);
        if (d != NULL) {
            return d;
        }
    }
    return NULL;
}

/* The C kind of the pg kind that holds exactly what member kind `sk` holds (decoded in
 * place), or WK_PG_KIND_COUNT when there is none. */
static wk_pg_kind direct_kind(unsigned sk)
{
    switch ((wk_schema_kind)sk) {
    case WK_SK_BOOL: return WK_PG_KIND_BOOL;
    case WK_SK_I16: return WK_PG_KIND_I16;
    case WK_SK_I32: return WK_PG_KIND_I32;
    case WK_SK_I64: return WK_PG_KIND_I64;
    case WK_SK_U32: return WK_PG_KIND_U32;
    case WK_SK_F32: return WK_PG_KIND_F32;
    case WK_SK_F64: return WK_PG_KIND_F64;
    default: return WK_PG_KIND_COUNT;
    }
}

/* Chooses column c's decoder and conversion for its field's kind: WK_OK, or WK_ERR_TYPE when
 * the column's type cannot feed the kind. */
static wk_status choose(const wk_pg_registry *reg, wk_pg_oid oid, wk_pg_format fmt, scol *c)
{
    static const wk_pg_kind ints[] = {WK_PG_KIND_I64, WK_PG_KIND_I32, WK_PG_KIND_I16,
                                      WK_PG_KIND_U32};
    static const wk_pg_kind floats[] = {WK_PG_KIND_F64, WK_PG_KIND_F32, WK_PG_KIND_I64,
                                        WK_PG_KIND_I32, WK_PG_KIND_I16};
    static const wk_pg_kind numeric[] = {WK_PG_KIND_NUMERIC};
    static const wk_pg_kind str[] = {WK_PG_KIND_STR};
    static const wk_pg_kind text[] = {WK_PG_KIND_TEXT};
    static const wk_pg_kind bytes[] = {WK_PG_KIND_BYTES, WK_PG_KIND_STR};
    static const wk_pg_kind value[] = {WK_PG_KIND_VALUE};
    const wk_pg_decoder *d = NULL;
    unsigned sk = c->skind;
    wk_pg_kind dk = direct_kind(sk);
    if (dk != WK_PG_KIND_COUNT) {
        d = wk_pg_registry_find_decoder(reg, oid, fmt, dk);
        c->conv = CONV_DIRECT;
    }
    switch ((wk_schema_kind)sk) {
    case WK_SK_BOOL: break;
    case WK_SK_I8:
    case WK_SK_I16:
    case WK_SK_I32:
    case WK_SK_I64:
    case WK_SK_U8:
    case WK_SK_U16:
    case WK_SK_U32:
    case WK_SK_U64:
        /* a numeric column goes through its digits (the whole uint64 range, an exact
         * check of the fraction); a float column never feeds an integer: that would
         * round silently */
        if (oid == WK_PG_OID_NUMERIC &&
            (d = first_decoder(reg, oid, fmt, numeric, 1)) != NULL) {
            c->conv = CONV_NUM_INT;
        }
        if (d == NULL && (d = first_decoder(reg, oid, fmt, ints, 4)) != NULL) {
            c->conv = CONV_INT;
        }
        if (d == NULL && (d = first_decoder(reg, oid, fmt, numeric, 1)) != NULL) {
            c->conv = CONV_NUM_INT;
        }
        break;
    case WK_SK_F32:
    case WK_SK_F64:
        if (d == NULL && (d = first_decoder(reg, oid, fmt, floats, 5)) != NULL) {
            c->conv = CONV_FLOAT;
        }
        if (d == NULL && (d = first_decoder(reg, oid, fmt, numeric, 1)) != NULL) {
            c->conv = CONV_NUM_FLOAT;
        }
        break;
    case WK_SK_STR:
    case WK_SK_STRBUF:
        if ((d = first_decoder(reg, oid, fmt, str, 1)) != NULL) {
            c->conv = CONV_STR;
        } else if ((d = first_decoder(reg, oid, fmt, text, 1)) != NULL) {
            c->conv = CONV_TEXT;
        }
        break;
    case WK_SK_BYTES:
        if ((d = first_decoder(reg, oid, fmt, bytes, 2)) != NULL) {
            c->conv = CONV_BYTES;
        }
        break;
    case WK_SK_TIMESTAMP:
        if ((d = wk_pg_registry_find_decoder(reg, oid, fmt, WK_PG_KIND_TIMESTAMP)) != NULL) {
            c->conv = CONV_TIMESTAMP;
        } else if ((d = wk_pg_registry_find_decoder(reg, oid, fmt, WK_PG_KIND_DATE)) != NULL) {
            c->conv = CONV_DATE;
        }
        break;
    case WK_SK_VALUE:
        /* the codecs' value trees: json/jsonb numbers by the row policy's rule (integers
         * within 64 bits as integers, other finite ones as float64, the rest as raw text) */
        if ((d = first_decoder(reg, oid, fmt, value, 1)) != NULL) {
            c->conv = CONV_DIRECT;
        }
        break;
    case WK_SK_STRUCT:
    case WK_SK_ARRAY:
        d = first_decoder(reg, oid, fmt, str, 1);
        if (d != NULL && !is_json(d)) {
            d = NULL;
        }
        c->conv = sk == WK_SK_STRUCT ? CONV_JSON_STRUCT : CONV_JSON_ARRAY;
        break;
    }
    /* a text-format column of a type no codec knows is its own text (wk_pq_plan's rule) */
    if (d == NULL && fmt == WK_PG_TEXT &&
        (sk == WK_SK_STR || sk == WK_SK_STRBUF || sk == WK_SK_BYTES) &&
        wk_pg_registry_codec_for(reg, oid, &(bool){false}) == NULL) {
        c->conv = CONV_RAW;
        c->dec = NULL;
        return WK_OK;
    }
    if (d == NULL) {
        return WK_ERR_TYPE;
    }
    c->dec = d;
    c->pkind = d->kind;
    return WK_OK;
}

/* What SQL NULL does to field f. */
static null_rule rule_for(const wk_schema_field *f)
{
    if ((f->flags & WK_PRESENCE) != 0) {
        return NULL_PRESENCE;
    }
    unsigned k = f->type.kind;
    if (k == WK_SK_VALUE ||
        ((f->flags & WK_NULLABLE) != 0 &&
         (k == WK_SK_STR || k == WK_SK_BYTES || k == WK_SK_ARRAY))) {
        return NULL_ZERO;
    }
    return NULL_FAIL;
}

/* Public (wirekit/pq.h): every field matched to its column by name, every column's decoder
 * and conversion chosen; the column index of a failure in err->base.offset. */
WK_API wk_status wk_pq_struct_plan_new(const wk_pq_conn *conn, const PGresult *res,
                                       const wk_schema *schema, unsigned flags,
                                       wk_pq_struct_plan **out, wk_schema_error *err)
{
    if (out != NULL) {
        *out = NULL;
    }
    if (err != NULL) {
        err->path[0] = '\0';
    }
    if (conn == NULL || res == NULL || schema == NULL || out == NULL ||
        schema->root != WK_SCHEMA_ROOT_STRUCT) {
        return fail_named(err, WK_ERR_ARG, 0, "row to struct: NULL argument or a value schema",
                          "", 0);
    }
    wk_status st = wk_schema_prepare(schema, NULL, err != NULL ? &err->base : NULL);
    if (st != WK_OK) {
        return st;
    }
    int ncols = PQnfields(res);
    /* each column to its field (by name, byte for byte); unknown and repeated columns */
    int *col_of = malloc((size_t)(schema->nfields + 1) * sizeof *col_of);
    if (col_of == NULL) {
        return fail_named(err, WK_ERR_NOMEM, 0, "row to struct: out of memory", "", 0);
    }
    for (uint32_t i = 0; i < schema->nfields; i++) {
        col_of[i] = -1;
    }
    for (int c = 0; c < ncols && st == WK_OK; c++) {
        const char *name = PQfname(res, c);
        size_t len = strlen(name);
        uint32_t i = 0;
        while (i < schema->nfields &&
               !(schema->fields[i].name_len == len &&
                 memcmp(schema->fields[i].name, name, len) == 0)) {
            i++;
        }
        if (i == schema->nfields) {
            if ((flags & WK_PQ_STRUCT_SKIP_UNKNOWN) == 0) {
                st = fail_named(err, WK_ERR_NOT_FOUND, (size_t)c,
                                "result column matches no field of the schema", name, len);
            }
        } else if (col_of[i] >= 0) {
            st = fail_named(err, WK_ERR_TYPE, (size_t)c, "two result columns of this name",
                            name, len);
        } else {
            col_of[i] = c;
        }
    }
    /* fields without a column */
    size_t fed = 0;
    for (uint32_t i = 0; i < schema->nfields && st == WK_OK; i++) {
        const wk_schema_field *f = &schema->fields[i];
        if (col_of[i] >= 0) {
            fed++;
        } else if ((flags & WK_PQ_STRUCT_PARTIAL) == 0 || (f->flags & WK_REQUIRED) != 0) {
            st = fail_named(err, WK_ERR_NOT_FOUND, i, "field has no column in the result",
                            f->name, f->name_len);
        }
    }
    wk_pq_struct_plan *p = NULL;
    if (st == WK_OK) {
        p = calloc(1, sizeof *p + fed * sizeof(scol));
        if (p == NULL) {
            st = fail_named(err, WK_ERR_NOMEM, 0, "row to struct: out of memory", "", 0);
        }
    }
    /* each fed field's decoder, conversion and NULL rule; an array field's wrapper */
    for (uint32_t i = 0; i < schema->nfields && st == WK_OK; i++) {
        if (col_of[i] < 0) {
            continue;
        }
        const wk_schema_field *f = &schema->fields[i];
        scol *c = &p->cols[p->n];
        c->field = f;
        c->col = col_of[i];
        c->offset = f->offset;
        c->size = f->type.size;
        c->skind = f->type.kind;
        c->null_rule = (uint8_t)rule_for(f);
        wk_pg_format fmt = PQfformat(res, c->col) == 1 ? WK_PG_BINARY : WK_PG_TEXT;
        if (choose(conn->reg, PQftype(res, c->col), fmt, c) != WK_OK) {
            st = fail_named(err, WK_ERR_TYPE, (size_t)c->col,
                            "column type cannot feed the field's kind", f->name, f->name_len);
            break;
        }
        if (c->conv == CONV_JSON_ARRAY) {
            c->wrap.name = schema->name;
            c->wrap.version = schema->version;
            c->wrap.root = WK_SCHEMA_ROOT_STRUCT;
            c->wrap.size = schema->size;
            c->wrap.fields = f;
            c->wrap.nfields = 1;
            c->wrap.rt = &c->wrap_rt;
            st = wk_schema_prepare(&c->wrap, NULL, err != NULL ? &err->base : NULL);
        }
        p->n++;
    }
    free(col_of);
    if (st != WK_OK) {
        wk_pq_struct_plan_free(p);
        return st;
    }
    p->reg = wk_pg_registry_ref(conn->reg);
    p->schema = schema;
    p->ncols = ncols;
    *out = p;
    return WK_OK;
}

/* Public: drops the wrappers' indexes and the snapshot reference. */
WK_API void wk_pq_struct_plan_free(wk_pq_struct_plan *plan)
{
    if (plan == NULL) {
        return;
    }
    for (size_t i = 0; i < plan->n; i++) {
        if (plan->cols[i].wrap.rt != NULL) {
            wk_schema_unprepare(&plan->cols[i].wrap);
        }
    }
    wk_pg_registry_unref(plan->reg);
    free(plan);
}

/* ---- one row ---- */

/* Stores v into the integer member of kind sk at dst: false when it does not fit. */
static bool store_int(unsigned sk, int64_t v, uint8_t *dst)
{
    switch ((wk_schema_kind)sk) {
    case WK_SK_I8:
        if (v < INT8_MIN || v > INT8_MAX) {
            return false;
        }
        *(int8_t *)dst = (int8_t)v;
        return true;
    case WK_SK_I16:
        if (v < INT16_MIN || v > INT16_MAX) {
            return false;
        }
        *(int16_t *)dst = (int16_t)v;
        return true;
    case WK_SK_I32:
        if (v < INT32_MIN || v > INT32_MAX) {
            return false;
        }
        *(int32_t *)dst = (int32_t)v;
        return true;
    case WK_SK_I64: *(int64_t *)dst = v; return true;
    case WK_SK_U8:
        if (v < 0 || v > UINT8_MAX) {
            return false;
        }
        *dst = (uint8_t)v;
        return true;
    case WK_SK_U16:
        if (v < 0 || v > UINT16_MAX) {
            return false;
        }
        *(uint16_t *)dst = (uint16_t)v;
        return true;
    case WK_SK_U32:
        if (v < 0 || v > (int64_t)UINT32_MAX) {
            return false;
        }
        *(uint32_t *)dst = (uint32_t)v;
        return true;
    case WK_SK_U64:
        if (v < 0) {
            return false;
        }
        *(uint64_t *)dst = (uint64_t)v;
        return true;
    default: return false;
    }
}

/* The C value a decoder of an integer or float kind wrote, by its kind. */
typedef union scalar {
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint32_t u32;
    float f32;
    double f64;
    wk_pg_numeric num;
    wk_slice s;
} scalar;

/* The integer in x, decoded as pg kind pk (I16, I32, I64 or U32). */
static int64_t int_of(unsigned pk, const scalar *x)
{
    switch ((wk_pg_kind)pk) {
    case WK_PG_KIND_I16: return x->i16;
    case WK_PG_KIND_I32: return x->i32;
    case WK_PG_KIND_U32: return x->u32;
    default: return x->i64;
    }
}

/* The non-negative integral numeric `num` as a uint64: false when it has a non-zero fraction
 * or passes UINT64_MAX. Digits are base 10000, the first of weight num->weight. */
static bool numeric_to_u64(const wk_pg_numeric *num, uint64_t *out)
{
    uint64_t v = 0;
    for (int i = 0; i <= num->weight; i++) {
        uint64_t d = i < num->ndigits ? num->digits[i] : 0;
        if (v > (UINT64_MAX - d) / 10000) {
            return false;
        }
        v = v * 10000 + d;
    }
    for (int i = num->weight < 0 ? 0 : num->weight + 1; i < num->ndigits; i++) {
        if (num->digits[i] != 0) {
            return false;
        }
    }
    *out = v;
    return true;
}

/* Stores the string s[0..n) into member c: a NUL-terminated copy in the arena (char *), or
 * into the char[N] member (WK_ERR_RANGE past N-1 bytes). A NUL byte inside is refused, as the
 * schema decoders refuse it. */
static wk_status store_str(const scol *c, const uint8_t *s, size_t n, uint8_t *dst,
                           wk_arena *arena, wk_schema_error *err)
{
    const uint8_t *nul = n != 0 ? memchr(s, 0, n) : NULL;
    if (nul != NULL) {
        return fail_col(err, c, WK_ERR_TYPE, (size_t)(nul - s), "string contains a NUL byte");
    }
    if (c->skind == WK_SK_STRBUF) {
        if (n >= c->size) {
            return fail_col(err, c, WK_ERR_RANGE, 0, "string longer than the field's buffer");
        }
        memcpy(dst, s, n);
        dst[n] = '\0';
        return WK_OK;
    }
    char *copy = wk_arena_strndup(arena, s, n);
    if (copy == NULL) {
        return fail_col(err, c, WK_ERR_NOMEM, 0, "out of arena memory for a string");
    }
    *(char **)dst = copy;
    return WK_OK;
}

/* Seconds from the Unix epoch to 2000-01-01, PostgreSQL's epoch. */
#define PG_EPOCH_UNIX 946684800

/* A event source over a json column's text that reads as the map {field: text}: the array
 * field is then decoded through its one-field wrapper descriptor, so it gets the schema
 * decoder's rules and errors. */
typedef struct wrap_src {
    wk_json_reader r;
    const wk_schema_field *f;
    unsigned state;  /* 0: the map, 1: the key, 2: the document, 3: the END, 4: done */
    uint32_t depth;  /* containers of the document open */
} wrap_src;

/* Next event of the wrapped document (see wrap_src). */
static wk_status wrap_next(void *self, wk_event *ev)
{
    wrap_src *w = self;
    ev->f32 = false;
    switch (w->state) {
    case 0:
        w->state = 1;
        ev->type = WK_EV_MAP;
        ev->v.count = 1;
        return WK_OK;
    case 1:
        w->state = 2;
        ev->type = WK_EV_STR;
        ev->v.str.ptr = w->f->name;
        ev->v.str.len = w->f->name_len;
        return WK_OK;
    case 2: {
        wk_status st = wk_json_reader_next(&w->r, ev);
        if (st != WK_OK) {
            return st;
        }
        if (ev->type == WK_EV_ARRAY || ev->type == WK_EV_MAP) {
            w->depth++;
        } else if (ev->type == WK_EV_END) {
            w->depth--;
        }
        if (w->depth == 0) {
            w->state = 3;
        }
        return WK_OK;
    }
    case 3: {
        /* the document must be all of the text */
        wk_event tail;
        wk_status st = wk_json_reader_next(&w->r, &tail);
        if (st != WK_ERR_EOF) {
            return st == WK_OK ? WK_ERR_TRAILING : st;
        }
        w->state = 4;
        ev->type = WK_EV_END;
        return WK_OK;
    }
    default: return WK_ERR_EOF;
    }
}

/* Offset inside the column's text. */
static size_t wrap_offset(const void *self)
{
    return wk_json_reader_offset(&((const wrap_src *)self)->r);
}

/* The reader's latched error (a trailing document is reported by the loop's own words). */
static wk_status wrap_error(const void *self, wk_error *err)
{
    const wrap_src *w = self;
    wk_status st = wk_json_reader_error(&w->r, err);
    if (st == WK_OK && err != NULL) {
        st = wk_error_set(err, WK_ERR_TRAILING, wk_json_reader_offset(&w->r),
                          "bytes after the JSON document");
    }
    return st;
}

/* Decodes json text into the array field of the struct at base through its wrapper. */
static wk_status decode_json_array(const scol *c, const uint8_t *s, size_t n, uint8_t *base,
                                   wk_arena *arena, wk_schema_error *err)
{
    wrap_src w;
    wk_json_reader_init(&w.r, s, n, NULL, arena);
    w.f = c->field;
    w.state = 0;
    w.depth = 0;
    wk_source src = {wrap_next, wrap_offset, wrap_error, &w};
    wk_status st = wk_schema_decode(&c->wrap, &src, base, arena, NULL, err);
    wk_json_reader_free(&w.r);
    return st;
}

/* Column c of one row, value p[0..n), into the struct at base. Inline into both row loops:
 * most columns are decoded in place, one call to their decoder. */
static inline __attribute__((always_inline)) wk_status decode_col(const scol *c, const uint8_t *p, size_t n, uint8_t *base,
                            wk_arena *arena, wk_schema_error *err)
{
    uint8_t *dst = base + c->offset;
    wk_status st;
    scalar x;
    if (c->conv == CONV_DIRECT) {
        st = wk_pg_decode(c->dec, p, n, dst, arena, err != NULL ? &err->base : NULL);
        goto done;
    }
    if (c->conv == CONV_RAW) {
        return store_str(c, p, n, dst, arena, err);
    }
    if (c->conv == CONV_TEXT) {
        /* PostgreSQL's text output, rendered on the stack when it fits (uuid, numeric, a
         * date...), else into a growable buffer (the render is repeated: bounded by the
         * value), then copied */
        uint8_t room[256];
        wk_buf b;
        wk_buf_init_fixed(&b, room, sizeof room);
        st = wk_pg_decode(c->dec, p, n, &b, arena, NULL);
        if (st != WK_OK) {
            wk_buf_init(&b, NULL, 0);
            st = wk_pg_decode(c->dec, p, n, &b, arena, err != NULL ? &err->base : NULL);
        }
        if (st == WK_OK) {
            st = store_str(c, b.data != NULL ? b.data : (const uint8_t *)"", b.len, dst, arena,
                           err);
        }
        wk_buf_free(&b);
        goto done;
    }
    st = wk_pg_decode(c->dec, p, n, &x, arena, err != NULL ? &err->base : NULL);
    if (st != WK_OK) {
        goto done;
    }
    switch ((conv)c->conv) {
    case CONV_INT:
        if (!store_int(c->skind, int_of(c->pkind, &x), dst)) {
            return fail_col(err, c, WK_ERR_RANGE, 0, "integer out of the field's range");
        }
        return WK_OK;
    case CONV_NUM_INT: {
        int64_t v;
        if (c->skind == WK_SK_U64 && x.num.sign == WK_PG_NUMERIC_POS) {
            /* the whole uint64 range, which int64 does not reach */
            if (!numeric_to_u64(&x.num, (uint64_t *)dst)) {
                return fail_col(err, c, WK_ERR_RANGE, 0,
                                "numeric not an integer in the field's range");
            }
            return WK_OK;
        }
        if (wk_pg_numeric_to_i64(&x.num, &v) != WK_OK || !store_int(c->skind, v, dst)) {
            return fail_col(err, c, WK_ERR_RANGE, 0,
                            "numeric not an integer in the field's range");
        }
        return WK_OK;
    }
    case CONV_FLOAT:
    case CONV_NUM_FLOAT: {
        double v;
        if (c->conv == CONV_NUM_FLOAT) {
            wk_pg_numeric_to_double(&x.num, &v);
        } else if (c->pkind == WK_PG_KIND_F64) {
            v = x.f64;
        } else if (c->pkind == WK_PG_KIND_F32) {
            v = x.f32;
        } else {
            v = (double)int_of(c->pkind, &x);
        }
        if (c->skind == WK_SK_F32) {
            *(float *)dst = (float)v;
        } else {
            *(double *)dst = v;
        }
        return WK_OK;
    }
    case CONV_STR: return store_str(c, (const uint8_t *)x.s.ptr, x.s.len, dst, arena, err);
    case CONV_BYTES: {
        wk_slice *b = (wk_slice *)dst;
        uint8_t *copy = x.s.len != 0 ? wk_arena_alloc(arena, x.s.len, 1) : NULL;
        if (x.s.len != 0 && copy == NULL) {
            return fail_col(err, c, WK_ERR_NOMEM, 0, "out of arena memory for bytes");
        }
        if (x.s.len != 0) {
            memcpy(copy, x.s.ptr, x.s.len);
        }
        b->ptr = (const char *)copy;
        b->len = x.s.len;
        return WK_OK;
    }
    case CONV_TIMESTAMP:
    case CONV_DATE: {
        int64_t us;
        if (c->conv == CONV_DATE) {
            if (x.i32 == INT32_MIN || x.i32 == INT32_MAX) {
                return fail_col(err, c, WK_ERR_RANGE, 0, "infinite date in a timestamp field");
            }
            us = 0;
            x.i64 = (int64_t)x.i32 * 86400;
        } else {
            if (x.i64 == INT64_MIN || x.i64 == INT64_MAX) {
                return fail_col(err, c, WK_ERR_RANGE, 0, "infinite timestamp in the field");
            }
            /* floor division: a time before 2000 keeps a non-negative nanosecond part */
            us = x.i64 % 1000000;
            x.i64 /= 1000000;
            if (us < 0) {
                us += 1000000;
                x.i64 -= 1;
            }
        }
        wk_timestamp *ts = (wk_timestamp *)dst;
        ts->sec = x.i64 + PG_EPOCH_UNIX;
        ts->nsec = (uint32_t)us * 1000u;
        return WK_OK;
    }
    case CONV_JSON_STRUCT:
        st = wk_schema_decode_json(c->field->type.schema, x.s.ptr, x.s.len, dst, arena, NULL,
                                   err);
        if (st != WK_OK) {
            prefix_path(err, c->field);
            return st;
        }
        return WK_OK;
    case CONV_JSON_ARRAY:
        st = decode_json_array(c, (const uint8_t *)x.s.ptr, x.s.len, base, arena, err);
        if (st != WK_OK && err != NULL && err->path[0] == '\0') {
            goto done; /* past the array (bytes after it): the wrapper's root, named here */
        }
        return st; /* else the wrapper's path starts with the field's name already */
    default: break;
    }
done:
    /* a decoder's or the JSON reader's failure: the path names the column */
    if (st != WK_OK && err != NULL) {
        fail_named(err, st, err->base.offset, err->base.msg, c->field->name,
                   c->field->name_len);
    }
    return st;
}

/* SQL NULL into column c's field, by its rule: WK_OK, or WK_ERR_TYPE for a field that cannot
 * hold NULL. */
static wk_status store_null(const scol *c, uint8_t *base, wk_schema_error *err)
{
    if (c->null_rule == NULL_FAIL) {
        return fail_col(err, c, WK_ERR_TYPE, 0, "SQL NULL in a field that is not nullable");
    }
    memset(base + c->offset, 0, c->skind == WK_SK_ARRAY ? sizeof(void *) : c->size);
    if (c->skind == WK_SK_ARRAY) {
        *(size_t *)(base + c->field->count_offset) = 0;
    }
    if (c->null_rule == NULL_PRESENCE) {
        *(bool *)(base + c->field->presence_offset) = false;
    }
    return WK_OK;
}

/* Public: the row's columns, in the plan's field order, into dst. */
WK_API wk_status wk_pq_struct_decode(const wk_pq_struct_plan *plan, const uint8_t *const *vals,
                                     const int *lens, void *dst, wk_arena *arena,
                                     wk_schema_error *err)
{
    if (plan == NULL || vals == NULL || lens == NULL || dst == NULL || arena == NULL) {
        return fail_named(err, WK_ERR_ARG, 0, "row to struct: NULL argument", "", 0);
    }
    uint8_t *base = dst;
    for (size_t i = 0; i < plan->n; i++) {
        const scol *c = &plan->cols[i];
        int len = lens[c->col];
        if (len < 0) {
            wk_status st = store_null(c, base, err);
            if (st != WK_OK) {
                return st;
            }
            continue;
        }
        wk_status st = decode_col(c, vals[c->col], (size_t)len, base, arena, err);
        if (st != WK_OK) {
            return st;
        }
        if (c->null_rule == NULL_PRESENCE) {
            *(bool *)(base + c->field->presence_offset) = true;
        }
    }
    return WK_OK;
}

/* Public: the row's columns straight from libpq into dst. */
WK_API wk_status wk_pq_row_to_struct(const wk_pq_struct_plan *plan, const PGresult *res, int row,
                                     void *dst, wk_arena *arena, wk_schema_error *err)
{
    if (plan == NULL || res == NULL || dst == NULL || arena == NULL) {
        return fail_named(err, WK_ERR_ARG, 0, "row to struct: NULL argument", "", 0);
    }
    if (PQnfields(res) != plan->ncols || row < 0 || row >= PQntuples(res)) {
        return fail_named(err, WK_ERR_ARG, 0, "row or plan does not match the result", "", 0);
    }
    uint8_t *base = dst;
    for (size_t i = 0; i < plan->n; i++) {
        const scol *c = &plan->cols[i];
        if (PQgetisnull(res, row, c->col)) {
            wk_status st = store_null(c, base, err);
            if (st != WK_OK) {
                return st;
            }
            continue;
        }
        const uint8_t *p = (const uint8_t *)PQgetvalue(res, row, c->col);
        size_t n = (size_t)PQgetlength(res, row, c->col);
        wk_status st = decode_col(c, p, n, base, arena, err);
        if (st != WK_OK) {
            return st;
        }
        if (c->null_rule == NULL_PRESENCE) {
            *(bool *)(base + c->field->presence_offset) = true;
        }
    }
    return WK_OK;
}
