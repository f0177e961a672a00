/*
 * Test shapes for the schema tests and fuzz harness: a struct with a field of every kind
 * (nested struct, arrays of scalars, structs, strings and arrays), a flat struct with every
 * scalar kind and flag, and a recursive tree node.
 */
#ifndef TEST_SHAPES_H
#define TEST_SHAPES_H

#include <string.h>

#include "wirekit/schema.h"

typedef struct inner {
    int32_t id;
    char *name;
} inner;

WK_SCHEMA_DEFINE_STATIC(inner_schema, inner, "inner", 1,
    WK_FIELD(inner, id, "id", WK_SK_I32, WK_REQUIRED),
    WK_FIELD(inner, name, "name", WK_SK_STR, 0));

typedef struct everything {
    bool b;
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    float f32;
    double f64;
    char *str;
    char code[8];
    wk_slice bytes;
    wk_timestamp ts;
    wk_value any;
    inner child;
    int32_t *nums;
    size_t nnums;
    inner *kids;
    size_t nkids;
    char **tags;
    size_t ntags;
    wk_schema_array *matrix;
    size_t nmatrix;
} everything;

WK_SCHEMA_DEFINE_STATIC(everything_schema, everything, "everything", 3,
    WK_FIELD(everything, b, "b", WK_SK_BOOL, 0),
    WK_FIELD(everything, i8, "i8", WK_SK_I8, 0),
    WK_FIELD(everything, i16, "i16", WK_SK_I16, 0),
    WK_FIELD(everything, i32, "i32", WK_SK_I32, 0),
    WK_FIELD(everything, i64, "i64", WK_SK_I64, 0),
    WK_FIELD(everything, u8, "u8", WK_SK_U8, 0),
    WK_FIELD(everything, u16, "u16", WK_SK_U16, 0),
    WK_FIELD(everything, u32, "u32", WK_SK_U32, 0),
    WK_FIELD(everything, u64, "u64", WK_SK_U64, 0),
    WK_FIELD(everything, f32, "f32", WK_SK_F32, 0),
    WK_FIELD(everything, f64, "f64", WK_SK_F64, 0),
    WK_FIELD(everything, str, "str", WK_SK_STR, WK_NULLABLE),
    WK_FIELD_STRBUF(everything, code, "code", 0),
    WK_FIELD(everything, bytes, "bytes", WK_SK_BYTES, 0),
    WK_FIELD(everything, ts, "ts", WK_SK_TIMESTAMP, 0),
    WK_FIELD(everything, any, "any", WK_SK_VALUE, 0),
    WK_FIELD_STRUCT(everything, child, "child", inner, &inner_schema, 0),
    WK_FIELD_ARRAY(everything, nums, nnums, "nums", WK_ELEM(WK_SK_I32), 0),
    WK_FIELD_ARRAY(everything, kids, nkids, "kids", WK_ELEM_STRUCT(inner, &inner_schema), 0),
    WK_FIELD_ARRAY(everything, tags, ntags, "tags", WK_ELEM(WK_SK_STR), WK_NULLABLE),
    WK_FIELD_ARRAY(everything, matrix, nmatrix, "matrix",
                   WK_ELEM_ARRAY(WK_ELEM(WK_SK_U8)), WK_OMITEMPTY));

/* A flat struct with every scalar kind and every flag (omitempty, nullable, required, a key
 * longer than 16 bytes, one longer than 31: a str8 header in MessagePack): the fused paths'
 * compiled plans, against the generic ones. */
typedef struct flat_all {
    bool b;
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    float f32;
    double f64;
    char *str;
    char *nstr;
    char code[8];
    wk_slice bytes;
    wk_timestamp ts;
    wk_value any;
    int32_t far;
} flat_all;

WK_SCHEMA_DEFINE_STATIC(flat_all_schema, flat_all, "flat_all", 1,
    WK_FIELD(flat_all, b, "b", WK_SK_BOOL, WK_NULLABLE),
    WK_FIELD(flat_all, i8, "i8", WK_SK_I8, 0),
    WK_FIELD(flat_all, i16, "i16", WK_SK_I16, WK_OMITEMPTY),
    WK_FIELD(flat_all, i32, "i32", WK_SK_I32, WK_NULLABLE),
    WK_FIELD(flat_all, i64, "i64", WK_SK_I64, 0),
    WK_FIELD(flat_all, u8, "u8", WK_SK_U8, 0),
    WK_FIELD(flat_all, u16, "u16", WK_SK_U16, 0),
    WK_FIELD(flat_all, u32, "u32", WK_SK_U32, WK_OMITEMPTY),
    WK_FIELD(flat_all, u64, "u64", WK_SK_U64, 0),
    WK_FIELD(flat_all, f32, "f32", WK_SK_F32, 0),
    WK_FIELD(flat_all, f64, "f64", WK_SK_F64, 0),
    WK_FIELD(flat_all, str, "a key longer than sixteen bytes", WK_SK_STR, WK_REQUIRED),
    WK_FIELD(flat_all, nstr, "nstr", WK_SK_STR, WK_NULLABLE | WK_OMITEMPTY),
    WK_FIELD_STRBUF(flat_all, code, "code", 0),
    WK_FIELD(flat_all, bytes, "bytes", WK_SK_BYTES, WK_NULLABLE),
    WK_FIELD(flat_all, ts, "ts", WK_SK_TIMESTAMP, WK_OMITEMPTY),
    WK_FIELD(flat_all, any, "any", WK_SK_VALUE, 0),
    WK_FIELD(flat_all, far, "an int32 whose key is longer than 31 bytes", WK_SK_I32,
             WK_OMITEMPTY));

/* A recursive shape: a tree node with child nodes. */
typedef struct node {
    int32_t v;
    struct node *kids;
    size_t nkids;
} node;
extern const wk_schema node_schema;
WK_SCHEMA_DEFINE(node_schema, node, "node", 1,
    WK_FIELD(node, v, "v", WK_SK_I32, 0),
    WK_FIELD_ARRAY(node, kids, nkids, "kids", WK_ELEM_STRUCT(node, &node_schema), WK_OMITEMPTY));

static inline void fill_everything(everything *e, wk_arena *a)
{
    static int32_t nums[3] = {1, -2, 300000};
    static inner kids[2] = {{1, (char *)"one"}, {2, NULL}};
    static char *tags[2] = {(char *)"x", (char *)"y z"};
    static uint8_t row0[2] = {1, 2};
    static wk_schema_array matrix[2] = {{row0, 2}, {NULL, 0}};
    static const uint8_t raw[3] = {0, 0xff, 0x10};
    memset(e, 0, sizeof *e);
    e->b = true;
    e->i8 = -128;
    e->i16 = -300;
    e->i32 = 70000;
    e->i64 = INT64_MIN;
    e->u8 = 255;
    e->u16 = 65535;
    e->u32 = 4000000000u;
    e->u64 = UINT64_MAX;
    e->f32 = 1.5f;
    e->f64 = -0.25;
    e->str = NULL;
    memcpy(e->code, "ABC", 4);
    e->bytes.ptr = (const char *)raw;
    e->bytes.len = 3;
    e->ts.sec = 1700000000;
    e->ts.nsec = 5;
    wk_value_set_array(&e->any, a, 2);
    wk_value_set_bool(&e->any.u.items[0], false);
    wk_value_set_float(&e->any.u.items[1], 2.5);
    e->child.id = 9;
    e->child.name = (char *)"kid";
    e->nums = nums;
    e->nnums = 3;
    e->kids = kids;
    e->nkids = 2;
    e->tags = tags;
    e->ntags = 2;
    e->matrix = matrix;
    e->nmatrix = 2;
}

#endif
