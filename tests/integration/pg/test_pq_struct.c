/*
 * Rows into structs and structs into parameters against the real PostgreSQL 15 server
 * (WK_PG_DSN; skipped when unset): one row with a column for every supported field kind
 * decodes into the struct the same from a binary and from a text result; a jsonb column
 * becomes a free-form map whose numbers are numbers (integers as integers, floats as floats),
 * a nested struct or an array; SQL NULL clears a presence member, NULLs a nullable pointer, and
 * fails a field that cannot hold it, naming the column; missing, unknown, repeated and
 * mistyped columns fail the plan naming the column; hostile values (truncated binary, a value
 * longer than its char[N], integers out of range, deep jsonb, an arena at its cap) fail with
 * their statuses and byte offsets; a struct bound as INSERT parameters and selected back
 * gives the same struct, NULLs included.
 */
#include <stdlib.h>

#include "pg_test_conn.h"
#include "wirekit/json.h"
#include "wirekit/pq.h"
#include "wk_test.h"

static wk_pq_conn *conn;

typedef struct kid {
    char *name;
    int32_t age;
} kid;

WK_SCHEMA_DEFINE_STATIC(kid_schema, kid, "kid", 1,
    WK_FIELD(kid, name, "name", WK_SK_STR, 0),
    WK_FIELD(kid, age, "age", WK_SK_I32, 0));

typedef struct every {
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
    double num_f;
    int64_t num_i;
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
    int32_t age;
    bool has_age;
    char *nick;
} every;

WK_SCHEMA_DEFINE_STATIC(every_schema, every, "every", 1,
    WK_FIELD(every, b, "b", WK_SK_BOOL, 0),
    WK_FIELD(every, i8, "i8", WK_SK_I8, 0),
    WK_FIELD(every, i16, "i16", WK_SK_I16, 0),
    WK_FIELD(every, i32, "i32", WK_SK_I32, 0),
    WK_FIELD(every, i64, "i64", WK_SK_I64, 0),
    WK_FIELD(every, u8, "u8", WK_SK_U8, 0),
    WK_FIELD(every, u16, "u16", WK_SK_U16, 0),
    WK_FIELD(every, u32, "u32", WK_SK_U32, 0),
    WK_FIELD(every, u64, "u64", WK_SK_U64, 0),
    WK_FIELD(every, f32, "f32", WK_SK_F32, 0),
    WK_FIELD(every, f64, "f64", WK_SK_F64, 0),
    WK_FIELD(every, num_f, "num_f", WK_SK_F64, 0),
    WK_FIELD(every, num_i, "num_i", WK_SK_I64, 0),
    WK_FIELD(every, s, "s", WK_SK_STR, 0),
    WK_FIELD_STRBUF(every, sb, "sb", 0),
    WK_FIELD(every, uuid, "uuid", WK_SK_STR, 0),
    WK_FIELD(every, bytes, "bytes", WK_SK_BYTES, 0),
    WK_FIELD(every, ts, "ts", WK_SK_TIMESTAMP, 0),
    WK_FIELD(every, day, "day", WK_SK_TIMESTAMP, 0),
    WK_FIELD(every, meta, "meta", WK_SK_VALUE, 0),
    WK_FIELD_STRUCT(every, best, "best", kid, &kid_schema, 0),
    WK_FIELD_ARRAY(every, tags, ntags, "tags", WK_ELEM(WK_SK_I32), 0),
    WK_FIELD_NULLABLE(every, age, has_age, "age", WK_SK_I32, 0),
    WK_FIELD(every, nick, "nick", WK_SK_STR, WK_NULLABLE));

/* One row of every kind; `age` and `nick` as given (SQL text, e.g. "NULL"). */
#define EVERY_SELECT(age, nick)                                                             \
    "SELECT true AS b, -5::int2 AS i8, -300::int2 AS i16, 70000::int4 AS i32, "             \
    "-9000000000::int8 AS i64, 200::int2 AS u8, 65000::int4 AS u16, 4000000000::int8 AS u32, " \
    "18446744073709551615::numeric AS u64, 1.5::float4 AS f32, 0.1::float8 AS f64, "         \
    "2.25::numeric AS num_f, 12345678901::numeric AS num_i, 'héllo'::text AS s, "            \
    "'seven'::varchar AS sb, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid AS uuid, "        \
    "'\\x00ff10'::bytea AS bytes, '1999-12-31 23:59:59.25+00'::timestamptz AS ts, "          \
    "'2024-02-29'::date AS day, "                                                           \
    "'{\"int\":10,\"score\":99.5,\"neg\":-3,\"big\":18446744073709551615,\"exp\":1e400,"    \
    "\"arr\":[1,2.5,{\"deep\":[true,null,\"x\"]}]}'::jsonb AS meta, "                        \
    "'{\"name\":\"kim\",\"age\":7}'::jsonb AS best, '[3,1,2]'::json AS tags, "              \
    age "::int4 AS age, " nick "::text AS nick"

/* The pair of `m` whose key is `key`, or NULL. */
static const wk_value *map_get(const wk_value *m, const char *key)
{
    for (uint32_t i = 0; m->type == WK_VAL_MAP && i < m->len; i++) {
        const wk_value *k = &m->u.pairs[i].key;
        if (k->type == WK_VAL_STR && k->len == strlen(key) && memcmp(k->u.str, key, k->len) == 0) {
            return &m->u.pairs[i].val;
        }
    }
    return NULL;
}

/* Checks every field of the row EVERY_SELECT("41", "'bo'") (age and nick given) gives. */
static void check_every(const every *e, bool with_age)
{
    CHECK(e->b);
    CHECK_EQ(e->i8, -5);
    CHECK_EQ(e->i16, -300);
    CHECK_EQ(e->i32, 70000);
    CHECK_EQ(e->i64, -9000000000LL);
    CHECK_EQ(e->u8, 200);
    CHECK_EQ(e->u16, 65000);
    CHECK_EQ(e->u32, 4000000000LL);
    CHECK(e->u64 == UINT64_MAX);
    CHECK(e->f32 == 1.5f);
    CHECK(e->f64 == 0.1);
    CHECK(e->num_f == 2.25);
    CHECK_EQ(e->num_i, 12345678901LL);
    CHECK_STR(e->s, "héllo");
    CHECK_STR(e->sb, "seven");
    CHECK_STR(e->uuid, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
    CHECK_MEM(e->bytes.ptr, e->bytes.len, "\x00\xff\x10", 3);
    CHECK_EQ(e->ts.sec, 946684799);
    CHECK_EQ(e->ts.nsec, 250000000);
    CHECK_EQ(e->day.sec, 1709164800);
    CHECK_EQ(e->day.nsec, 0);
    /* the jsonb map: numbers stay numbers */
    const wk_value *m = &e->meta;
    CHECK_EQ(m->type, WK_VAL_MAP);
    const wk_value *v = map_get(m, "int");
    CHECK(v != NULL && v->type == WK_VAL_UINT && v->u.u == 10);
    v = map_get(m, "score");
    CHECK(v != NULL && v->type == WK_VAL_FLOAT && v->u.f == 99.5);
    v = map_get(m, "neg");
    CHECK(v != NULL && v->type == WK_VAL_INT && v->u.i == -3);
    v = map_get(m, "big");
    CHECK(v != NULL && v->type == WK_VAL_UINT && v->u.u == UINT64_MAX);
    v = map_get(m, "exp"); /* beyond a double: its exact text (jsonb writes all 401 digits) */
    CHECK(v != NULL && v->type == WK_VAL_RAWNUM && v->len == 401 && v->u.str[0] == '1');
    v = map_get(m, "arr");
    CHECK(v != NULL && v->type == WK_VAL_ARRAY && v->len == 3);
    CHECK(v->u.items[0].type == WK_VAL_UINT && v->u.items[1].type == WK_VAL_FLOAT);
    const wk_value *deep = map_get(&v->u.items[2], "deep");
    CHECK(deep != NULL && deep->type == WK_VAL_ARRAY && deep->len == 3);
    CHECK(deep->u.items[0].type == WK_VAL_BOOL && deep->u.items[1].type == WK_VAL_NIL);
    CHECK(deep->u.items[2].type == WK_VAL_STR);
    CHECK_STR(e->best.name, "kim");
    CHECK_EQ(e->best.age, 7);
    CHECK_EQ(e->ntags, 3);
    CHECK(e->tags[0] == 3 && e->tags[1] == 1 && e->tags[2] == 2);
    if (with_age) {
        CHECK(e->has_age);
        CHECK_EQ(e->age, 41);
        CHECK_STR(e->nick, "bo");
    } else {
        CHECK(!e->has_age);
        CHECK_EQ(e->age, 0);
        CHECK(e->nick == NULL);
    }
}

/* Runs sql through wk_pq_exec (binary results) or PQexec (text results). */
static PGresult *run(const char *sql, bool binary)
{
    if (!binary) {
        PGresult *r = PQexec(wk_pq_pgconn(conn), sql);
        if (PQresultStatus(r) != PGRES_TUPLES_OK) {
            fprintf(stderr, "%s: %s", sql, PQresultErrorMessage(r));
        }
        return r;
    }
    PGresult *r = NULL;
    wk_error err = {0};
    if (wk_pq_exec(conn, sql, NULL, 0, &r, &err) != WK_OK) {
        fprintf(stderr, "%s: %s %s\n", sql, err.msg != NULL ? err.msg : "",
                wk_pq_conn_message(conn));
    }
    return r;
}

/* Decodes row 0 of sql into *e (zeroed first) through a new plan of every_schema. */
static wk_status decode_first(const char *sql, bool binary, every *e, wk_arena *arena,
                              wk_schema_error *err)
{
    PGresult *r = run(sql, binary);
    wk_pq_struct_plan *plan = NULL;
    memset(e, 0, sizeof *e);
    wk_status st = wk_pq_struct_plan_new(conn, r, &every_schema, 0, &plan, err);
    if (st == WK_OK) {
        st = wk_pq_row_to_struct(plan, r, 0, e, arena, err);
    }
    wk_pq_struct_plan_free(plan);
    PQclear(r);
    return st;
}

WK_TEST(test_pq_struct_row_of_every_kind_binary_and_text)
{
    NEED_CONN();
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_schema_error err;
    every e;
    for (int binary = 1; binary >= 0; binary--) {
        wk_status st = decode_first(EVERY_SELECT("41", "'bo'"), binary != 0, &e, &arena, &err);
        CHECK_MSG(st == WK_OK, "%s: %s: %s", binary ? "binary" : "text", err.path,
                  err.base.msg);
        check_every(&e, true);
        if (wk__test_failed()) {
            break;
        }
    }
    wk_arena_free(&arena);
}

WK_TEST(test_pq_struct_sql_null_by_field)
{
    NEED_CONN();
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_schema_error err;
    every e;
    const char *q = EVERY_SELECT("NULL", "NULL");
    for (int binary = 1; binary >= 0; binary--) {
        CHECK_OK(decode_first(q, binary != 0, &e, &arena, &err));
        check_every(&e, false);
    }
    /* a NULL json document into a wk_value is a nil value */
    PGresult *r = run("SELECT NULL::jsonb AS meta, NULL::int4 AS age", true);
    wk_pq_struct_plan *plan = NULL;
    CHECK_OK(wk_pq_struct_plan_new(conn, r, &every_schema, WK_PQ_STRUCT_PARTIAL, &plan, &err));
    memset(&e, 0, sizeof e);
    e.meta.type = WK_VAL_BOOL;
    e.has_age = true;
    CHECK_OK(wk_pq_row_to_struct(plan, r, 0, &e, &arena, &err));
    CHECK_EQ(e.meta.type, WK_VAL_NIL);
    CHECK(!e.has_age);
    wk_pq_struct_plan_free(plan);
    PQclear(r);
    /* NULL into a field that cannot hold it fails, naming the column */
    r = run("SELECT NULL::int4 AS i32, 'x'::text AS s", true);
    CHECK_OK(wk_pq_struct_plan_new(conn, r, &every_schema, WK_PQ_STRUCT_PARTIAL, &plan, &err));
    CHECK_STATUS(wk_pq_row_to_struct(plan, r, 0, &e, &arena, &err), WK_ERR_TYPE);
    CHECK_STR(err.path, "i32");
    char text[200];
    wk_schema_error_format(&err, text, sizeof text);
    CHECK_STR(text, "i32: SQL NULL in a field that is not nullable (at byte 0)");
    wk_pq_struct_plan_free(plan);
    PQclear(r);
    wk_arena_free(&arena);
}

WK_TEST(test_pq_struct_plan_rejects_wrong_and_missing_columns)
{
    NEED_CONN();
    wk_schema_error err;
    wk_pq_struct_plan *plan = (wk_pq_struct_plan *)&err; /* set to NULL on failure */
    /* a column no field matches */
    PGresult *r = run("SELECT 1::int4 AS i32, 2::int4 AS nope", true);
    CHECK_STATUS(wk_pq_struct_plan_new(conn, r, &every_schema, WK_PQ_STRUCT_PARTIAL, &plan,
                                       &err),
                 WK_ERR_NOT_FOUND);
    CHECK(plan == NULL);
    CHECK_STR(err.path, "nope");
    CHECK_EQ(err.base.offset, 1);
    /* ... which SKIP_UNKNOWN ignores */
    CHECK_OK(wk_pq_struct_plan_new(conn, r, &every_schema,
                                   WK_PQ_STRUCT_PARTIAL | WK_PQ_STRUCT_SKIP_UNKNOWN, &plan,
                                   &err));
    wk_pq_struct_plan_free(plan);
    /* a field without a column (no PARTIAL) */
    CHECK_STATUS(wk_pq_struct_plan_new(conn, r, &every_schema, WK_PQ_STRUCT_SKIP_UNKNOWN, &plan,
                                       &err),
                 WK_ERR_NOT_FOUND);
    CHECK_STR(err.path, "b");
    CHECK_STR(err.base.msg, "field has no column in the result");
    PQclear(r);
    /* a type that cannot feed the kind: text into an integer, float into an integer,
     * int into a nested struct */
    const char *wrong[] = {"SELECT 'x'::text AS i32", "SELECT 1.5::float8 AS i64",
                           "SELECT 1::int4 AS best", "SELECT 'x'::text AS meta"};
    for (size_t i = 0; i < 4; i++) {
        r = run(wrong[i], true);
        wk_status st = wk_pq_struct_plan_new(conn, r, &every_schema, WK_PQ_STRUCT_PARTIAL,
                                             &plan, &err);
        PQclear(r);
        if (i == 3) {
            /* text has a value tree of its own: a string */
            CHECK_OK(st);
            wk_pq_struct_plan_free(plan);
            continue;
        }
        CHECK_MSG(st == WK_ERR_TYPE, "%s: %s", wrong[i], wk_status_str(st));
        CHECK_STR(err.base.msg, "column type cannot feed the field's kind");
    }
    /* two columns of one name */
    r = run("SELECT 1::int4 AS i32, 2::int4 AS i32", true);
    CHECK_STATUS(wk_pq_struct_plan_new(conn, r, &every_schema, WK_PQ_STRUCT_PARTIAL, &plan,
                                       &err),
                 WK_ERR_TYPE);
    CHECK_STR(err.path, "i32");
    CHECK_EQ(err.base.offset, 1);
    PQclear(r);
}

/* Decodes one hand-made column value through a plan built for `sql`'s one column. */
static wk_status decode_one(const char *sql, const void *val, int len, every *e,
                            wk_arena *arena, wk_schema_error *err)
{
    PGresult *r = run(sql, true);
    wk_pq_struct_plan *plan = NULL;
    wk_status st = wk_pq_struct_plan_new(conn, r, &every_schema, WK_PQ_STRUCT_PARTIAL, &plan,
                                         err);
    PQclear(r);
    if (st == WK_OK) {
        const uint8_t *vals[1] = {val};
        int lens[1] = {len};
        st = wk_pq_struct_decode(plan, vals, lens, e, arena, err);
    }
    wk_pq_struct_plan_free(plan);
    return st;
}

WK_TEST(test_pq_struct_hostile_values_fail_with_offsets)
{
    NEED_CONN();
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_schema_error err;
    every e;
    memset(&e, 0, sizeof e);
    /* truncated binary: three bytes of an int4, a jsonb without its version byte */
    CHECK_STATUS(decode_one("SELECT 1::int4 AS i32", "\0\0\1", 3, &e, &arena, &err),
                 WK_ERR_SYNTAX);
    CHECK_STR(err.path, "i32");
    CHECK_STATUS(decode_one("SELECT '{}'::jsonb AS meta", "", 0, &e, &arena, &err),
                 WK_ERR_TRUNCATED);
    CHECK_STR(err.path, "meta");
    /* a jsonb document cut short: the JSON reader's offset, counted in the document */
    CHECK_STATUS(decode_one("SELECT '{}'::jsonb AS meta", "\1{\"a\":[1,", 8, &e, &arena, &err),
                 WK_ERR_TRUNCATED);
    CHECK_STR(err.path, "meta");
    CHECK_EQ(err.base.offset, 7);
    /* a bad document in a nested struct: the path goes through the column */
    CHECK_STATUS(decode_one("SELECT '{}'::jsonb AS best", "\1{\"name\":5}", 12, &e, &arena,
                            &err),
                 WK_ERR_TYPE);
    CHECK_STR(err.path, "best.name");
    CHECK_STATUS(decode_one("SELECT '[]'::jsonb AS tags", "\1[1,\"x\"]", 8, &e, &arena, &err),
                 WK_ERR_TYPE);
    CHECK_STR(err.path, "tags[1]");
    /* longer than the char[8] */
    CHECK_STATUS(decode_one("SELECT 'x'::text AS sb", "eight ch", 8, &e, &arena, &err),
                 WK_ERR_RANGE);
    CHECK_STR(err.path, "sb");
    /* integers out of the field's range, a fraction into an integer */
    static const uint8_t big8[8] = {0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    CHECK_STATUS(decode_one("SELECT 1::int8 AS i32", big8, 8, &e, &arena, &err), WK_ERR_RANGE);
    static const uint8_t neg2[2] = {0xff, 0xff};
    CHECK_STATUS(decode_one("SELECT 1::int2 AS u8", neg2, 2, &e, &arena, &err), WK_ERR_RANGE);
    PGresult *r = run("SELECT 1.5::numeric AS num_i", true);
    wk_pq_struct_plan *plan = NULL;
    CHECK_OK(wk_pq_struct_plan_new(conn, r, &every_schema, WK_PQ_STRUCT_PARTIAL, &plan, &err));
    CHECK_STATUS(wk_pq_row_to_struct(plan, r, 0, &e, &arena, &err), WK_ERR_RANGE);
    CHECK_STR(err.path, "num_i");
    wk_pq_struct_plan_free(plan);
    PQclear(r);
    /* deep jsonb, from the server itself: past the JSON reader's depth limit (512) as a map,
     * past the schema's (64) as a nested struct's document */
    char *deep = malloc(4096);
    CHECK(deep != NULL);
    size_t n = 0;
    n += (size_t)snprintf(deep, 4096, "SELECT '");
    for (int i = 0; i < 600; i++) {
        deep[n++] = '[';
    }
    for (int i = 0; i < 600; i++) {
        deep[n++] = ']';
    }
    snprintf(deep + n, 4096 - n, "'::jsonb AS meta");
    r = run(deep, true);
    CHECK_OK(wk_pq_struct_plan_new(conn, r, &every_schema, WK_PQ_STRUCT_PARTIAL, &plan, &err));
    CHECK_STATUS(wk_pq_row_to_struct(plan, r, 0, &e, &arena, &err), WK_ERR_DEPTH);
    CHECK_STR(err.path, "meta");
    wk_pq_struct_plan_free(plan);
    PQclear(r);
    memcpy(strstr(deep, "AS meta"), "AS tags", 7);
    r = run(deep, true);
    CHECK_OK(wk_pq_struct_plan_new(conn, r, &every_schema, WK_PQ_STRUCT_PARTIAL, &plan, &err));
    CHECK_STATUS(wk_pq_row_to_struct(plan, r, 0, &e, &arena, &err), WK_ERR_TYPE);
    CHECK(strncmp(err.path, "tags[0]", 7) == 0);
    wk_pq_struct_plan_free(plan);
    PQclear(r);
    free(deep);
    /* an arena at its cap: a long string is WK_ERR_NOMEM, not a crash */
    wk_arena small;
    wk_arena_init(&small, NULL, 256);
    r = run("SELECT repeat('x', 100000) AS s", true);
    CHECK_OK(wk_pq_struct_plan_new(conn, r, &every_schema, WK_PQ_STRUCT_PARTIAL, &plan, &err));
    CHECK_STATUS(wk_pq_row_to_struct(plan, r, 0, &e, &small, &err), WK_ERR_NOMEM);
    CHECK_STR(err.path, "s");
    /* a row or a result of another shape */
    CHECK_STATUS(wk_pq_row_to_struct(plan, r, 1, &e, &small, &err), WK_ERR_ARG);
    wk_pq_struct_plan_free(plan);
    PQclear(r);
    wk_arena_free(&small);
    wk_arena_free(&arena);
}

/* The first field in which two `every` structs differ (strings by content, trees by value),
 * or NULL when they are the same. */
static const char *first_difference(const every *a, const every *b)
{
#define DIFF(cond, name)                                                                  \
    if (!(cond)) {                                                                        \
        return name;                                                                      \
    }
    DIFF(a->b == b->b, "b");
    DIFF(a->i8 == b->i8 && a->i16 == b->i16 && a->i32 == b->i32 && a->i64 == b->i64, "ints");
    DIFF(a->u8 == b->u8 && a->u16 == b->u16 && a->u32 == b->u32 && a->u64 == b->u64, "uints");
    DIFF(a->f32 == b->f32 && a->f64 == b->f64, "floats");
    DIFF(a->num_f == b->num_f && a->num_i == b->num_i, "numerics");
    DIFF(strcmp(a->s, b->s) == 0 && strcmp(a->sb, b->sb) == 0, "strings");
    DIFF(strcmp(a->uuid, b->uuid) == 0, "uuid");
    DIFF(a->bytes.len == b->bytes.len &&
             (a->bytes.len == 0 || memcmp(a->bytes.ptr, b->bytes.ptr, a->bytes.len) == 0),
         "bytes");
    DIFF(a->ts.sec == b->ts.sec && a->ts.nsec == b->ts.nsec, "ts");
    DIFF(a->day.sec == b->day.sec && a->day.nsec == b->day.nsec, "day");
    DIFF(wk_value_equal(&a->meta, &b->meta, NULL), "meta");
    DIFF(strcmp(a->best.name, b->best.name) == 0 && a->best.age == b->best.age, "best");
    DIFF(a->ntags == b->ntags, "ntags");
    for (size_t i = 0; i < a->ntags; i++) {
        DIFF(a->tags[i] == b->tags[i], "tags");
    }
    DIFF(a->has_age == b->has_age && a->age == b->age, "age");
    DIFF((a->nick == NULL) == (b->nick == NULL) &&
             (a->nick == NULL || strcmp(a->nick, b->nick) == 0),
         "nick");
#undef DIFF
    return NULL;
}

WK_TEST(test_pq_struct_params_insert_then_select_gives_the_same_struct)
{
    NEED_CONN();
    CHECK(pg_test_exec(conn,
                       "DROP TABLE IF EXISTS pq_struct_rt; CREATE TEMP TABLE pq_struct_rt ("
                       "b bool, i8 int2, i16 int2, i32 int4, i64 int8, u8 int2, u16 int4, "
                       "u32 int8, u64 numeric, f32 float4, f64 float8, num_f numeric, "
                       "num_i numeric, s text, sb varchar(7), uuid uuid, bytes bytea, "
                       "ts timestamptz, day date, meta jsonb, best jsonb, tags jsonb, "
                       "age int4, nick text)"));
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_value *meta = NULL;
    /* keys in jsonb's own order (shorter first, then bytewise), which the server keeps */
    const char doc[] = "{\"arr\":[1,2.5,{\"d\":[true,null]}],\"int\":10,\"neg\":-3,"
                       "\"score\":99.5}";
    CHECK_OK(wk_json_decode_value(doc, sizeof doc - 1, NULL, &arena, &meta, NULL, NULL));
    int32_t tags[3] = {5, -6, 7};
    every rows[2];
    memset(rows, 0, sizeof rows);
    for (int i = 0; i < 2; i++) {
        every *e = &rows[i];
        e->b = i == 0;
        e->i8 = (int8_t)(-100 + i);
        e->i16 = -30000;
        e->i32 = 2000000000 + i;
        e->i64 = INT64_MIN + 1;
        e->u8 = 255;
        e->u16 = 65535;
        e->u32 = UINT32_MAX;
        e->u64 = (uint64_t)INT64_MAX;
        e->f32 = 3.25f;
        e->f64 = 1e-300;
        e->num_f = 0.125;
        e->num_i = -42;
        e->s = i == 0 ? "it's \"quoted\"" : "";
        memcpy(e->sb, "sevench", 8);
        e->uuid = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11";
        e->bytes.ptr = "\0\1\2";
        e->bytes.len = 3;
        e->ts.sec = 1700000000;
        e->ts.nsec = 123456000;
        e->day.sec = 1709164800;
        e->meta = *meta;
        e->best.name = "kim";
        e->best.age = 7;
        e->tags = tags;
        e->ntags = 3;
        e->age = i == 0 ? 41 : 12345; /* row 1: NULL whatever the member holds */
        e->has_age = i == 0;
        e->nick = i == 0 ? "bo" : NULL;
    }
    wk_pq_param params[24];
    wk_schema_error err;
    for (int i = 0; i < 2; i++) {
        CHECK_OK(wk_pq_struct_params(&every_schema, &rows[i], NULL, every_schema.nfields,
                                     params, &arena, &err));
        PGresult *r = NULL;
        wk_error e = {0};
        wk_status st = wk_pq_exec(conn,
                                  "INSERT INTO pq_struct_rt VALUES ($1, $2, $3, $4, $5, $6, $7, "
                                  "$8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, "
                                  "$21, $22, $23, $24)",
                                  params, 24, &r, &e);
        CHECK_MSG(st == WK_OK, "insert: %s %s", e.msg != NULL ? e.msg : "",
                  wk_pq_conn_message(conn));
        PQclear(r);
    }
    rows[1].age = 0; /* what a NULL decodes to */
    /* by name, a subset: an UPDATE of two fields */
    const char *names[] = {"nick", "i32"};
    every upd = rows[1];
    upd.nick = "changed";
    CHECK_OK(wk_pq_struct_params(&every_schema, &upd, names, 2, params, &arena, &err));
    PGresult *r = NULL;
    CHECK_OK(wk_pq_exec(conn, "UPDATE pq_struct_rt SET nick = $1 WHERE i32 = $2", params, 2, &r,
                        NULL));
    PQclear(r);
    rows[1].nick = "changed";
    const char *unknown[] = {"nope"};
    CHECK_STATUS(wk_pq_struct_params(&every_schema, &upd, unknown, 1, params, &arena, &err),
                 WK_ERR_NOT_FOUND);
    CHECK_STR(err.path, "nope");
    /* and back: both formats give the struct that went in */
    for (int binary = 1; binary >= 0; binary--) {
        r = run("SELECT * FROM pq_struct_rt ORDER BY i32", binary != 0);
        CHECK_EQ(PQntuples(r), 2);
        wk_pq_struct_plan *plan = NULL;
        CHECK_OK(wk_pq_struct_plan_new(conn, r, &every_schema, 0, &plan, &err));
        for (int i = 0; i < 2; i++) {
            every back;
            memset(&back, 0, sizeof back);
            wk_status st = wk_pq_row_to_struct(plan, r, i, &back, &arena, &err);
            CHECK_MSG(st == WK_OK, "row %d: %s: %s", i, err.path, err.base.msg);
            const char *diff = first_difference(&back, &rows[i]);
            CHECK_MSG(diff == NULL, "row %d (%s): %s differs", i, binary ? "binary" : "text",
                      diff);
        }
        wk_pq_struct_plan_free(plan);
        PQclear(r);
    }
    /* a uint64 above INT64_MAX cannot go as int8 */
    rows[0].u64 = UINT64_MAX;
    CHECK_STATUS(wk_pq_struct_params(&every_schema, &rows[0], NULL, every_schema.nfields, params,
                                     &arena, &err),
                 WK_ERR_RANGE);
    CHECK_STR(err.path, "u64");
    wk_arena_free(&arena);
}
