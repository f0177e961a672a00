/*
 * libFuzzer harness: hostile column bytes decoded into a schema struct by
 * wk_pq_struct_decode. No server: a result description made with libpq's PQmakeEmptyPGresult
 * and PQsetResultAttrs (a binary column of each type the row-to-struct table takes, jsonb into
 * a free-form map, a nested struct and an array) and a connection holding only the built-in
 * registry. The input is split into the columns' values, each a two-byte big-endian length
 * (0xffff: SQL NULL) and that many bytes. Whatever decodes must encode again (MessagePack);
 * the arena is capped, so memory stays proportional to the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pq/pq_internal.h"
#include "wirekit/pq.h"

typedef struct kid {
    char *name;
    int32_t age;
} kid;

WK_SCHEMA_DEFINE_STATIC(kid_schema, kid, "kid", 1,
    WK_FIELD(kid, name, "name", WK_SK_STR, 0),
    WK_FIELD(kid, age, "age", WK_SK_I32, 0));

typedef struct row {
    bool b;
    int8_t i8;
    int32_t i32;
    uint64_t u64;
    double f;
    float f32;
    char *s;
    char sb[8];
    char *uuid;
    wk_slice bytes;
    wk_timestamp ts;
    wk_timestamp day;
    wk_value meta;
    kid best;
    int32_t *tags;
    size_t ntags;
    int64_t n;
    bool has_n;
} row;

WK_SCHEMA_DEFINE_STATIC(row_schema, row, "row", 1,
    WK_FIELD(row, b, "b", WK_SK_BOOL, 0),
    WK_FIELD(row, i8, "i8", WK_SK_I8, 0),
    WK_FIELD(row, i32, "i32", WK_SK_I32, 0),
    WK_FIELD(row, u64, "u64", WK_SK_U64, 0),
    WK_FIELD(row, f, "f", WK_SK_F64, 0),
    WK_FIELD(row, f32, "f32", WK_SK_F32, 0),
    WK_FIELD(row, s, "s", WK_SK_STR, WK_NULLABLE),
    WK_FIELD_STRBUF(row, sb, "sb", 0),
    WK_FIELD(row, uuid, "uuid", WK_SK_STR, 0),
    WK_FIELD(row, bytes, "bytes", WK_SK_BYTES, 0),
    WK_FIELD(row, ts, "ts", WK_SK_TIMESTAMP, 0),
    WK_FIELD(row, day, "day", WK_SK_TIMESTAMP, 0),
    WK_FIELD(row, meta, "meta", WK_SK_VALUE, 0),
    WK_FIELD_STRUCT(row, best, "best", kid, &kid_schema, 0),
    WK_FIELD_ARRAY(row, tags, ntags, "tags", WK_ELEM(WK_SK_I32), WK_NULLABLE),
    WK_FIELD_NULLABLE(row, n, has_n, "n", WK_SK_I64, 0));

/* The columns: name and type (int2 into int8_t, numeric into uint64_t and double, ...). */
static const struct {
    const char *name;
    Oid oid;
} cols[] = {{"b", 16},     {"i8", 21},    {"i32", 23},    {"u64", 1700}, {"f", 1700},
            {"f32", 701},  {"s", 25},     {"sb", 1043},   {"uuid", 2950}, {"bytes", 17},
            {"ts", 1184},  {"day", 1082}, {"meta", 3802}, {"best", 3802}, {"tags", 114},
            {"n", 20}};
#define NCOLS (sizeof cols / sizeof cols[0])

static wk_pq_struct_plan *plan;

/* The plan over a result description of cols, built once. */
static wk_pq_struct_plan *make_plan(void)
{
    static struct wk_pq_conn conn;
    if (wk_pg_registry_new_default(NULL, &conn.reg, NULL) != WK_OK) {
        abort();
    }
    PGresult *res = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
    PGresAttDesc attrs[NCOLS];
    memset(attrs, 0, sizeof attrs);
    for (size_t i = 0; i < NCOLS; i++) {
        attrs[i].name = (char *)cols[i].name;
        attrs[i].format = 1;
        attrs[i].typid = cols[i].oid;
        attrs[i].typlen = -1;
        attrs[i].atttypmod = -1;
    }
    if (res == NULL || !PQsetResultAttrs(res, (int)NCOLS, attrs)) {
        abort();
    }
    wk_pq_struct_plan *p = NULL;
    if (wk_pq_struct_plan_new(&conn, res, &row_schema, 0, &p, NULL) != WK_OK) {
        abort();
    }
    PQclear(res);
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (plan == NULL) {
        plan = make_plan();
    }
    const uint8_t *vals[NCOLS];
    int lens[NCOLS];
    size_t at = 0;
    for (size_t i = 0; i < NCOLS; i++) {
        size_t len = 0;
        if (at + 2 <= size) {
            len = (size_t)data[at] << 8 | data[at + 1];
            at += 2;
        }
        if (len == 0xffff) {
            vals[i] = NULL;
            lens[i] = -1;
            continue;
        }
        if (len > size - at) {
            len = size - at;
        }
        vals[i] = data + at;
        lens[i] = (int)len;
        at += len;
    }
    wk_arena a;
    wk_arena_init(&a, NULL, (size_t)1 << 22);
    row r;
    memset(&r, 0, sizeof r);
    wk_schema_error err;
    if (wk_pq_struct_decode(plan, vals, lens, &r, &a, &err) == WK_OK) {
        wk_buf out;
        wk_buf_init(&out, NULL, 0);
        /* a decoded float may be NaN or an infinity: MessagePack holds them */
        if (wk_schema_encode_mp(&row_schema, &r, &out, NULL) != WK_OK) {
            abort();
        }
        wk_buf_free(&out);
    } else if (err.path[0] == '\0' && err.base.code != WK_ERR_NOMEM) {
        abort(); /* every column error names its column */
    }
    wk_arena_free(&a);
    return 0;
}
