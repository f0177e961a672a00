/*
 * Decode plans without a server: columns resolved once, rows decoded into a struct, as
 * events and as trees; unknown columns fail at build time with the column index.
 */
#include "pg_test_util.h"
#include "wk_test.h"

typedef struct row {
    int32_t id;
    wk_slice name;
    double score;
} row;

WK_TEST(test_pg_plan_decodes_rows_into_a_struct_with_nulls)
{
    wk_pg_plan_col cols[3] = {
        {"id", WK_PG_OID_INT4, WK_PG_BINARY, WK_PG_KIND_I32, offsetof(row, id)},
        {"name", WK_PG_OID_TEXT, WK_PG_TEXT, WK_PG_KIND_STR, offsetof(row, name)},
        {"score", WK_PG_OID_FLOAT8, WK_PG_TEXT, WK_PG_KIND_F64, offsetof(row, score)},
    };
    wk_pg_plan *plan;
    CHECK_OK(wk_pg_plan_build(pgt_reg(), cols, 3, NULL, &plan, NULL));
    CHECK_EQ(wk_pg_plan_ncols(plan), 3);
    const uint8_t *vals[3] = {(const uint8_t *)"\0\0\0\x2a", (const uint8_t *)"bob",
                              (const uint8_t *)"2.5"};
    int lens[3] = {4, 3, 3};
    row r;
    bool nulls[3];
    CHECK_OK(wk_pg_plan_decode_row(plan, vals, lens, &r, nulls, NULL, NULL));
    CHECK_EQ(r.id, 42);
    CHECK_MEM(r.name.ptr, r.name.len, "bob", 3);
    CHECK(r.score == 2.5);
    CHECK(!nulls[0] && !nulls[1] && !nulls[2]);
    lens[1] = -1;
    CHECK_OK(wk_pg_plan_decode_row(plan, vals, lens, &r, nulls, NULL, NULL));
    CHECK(nulls[1]);
    /* A malformed value reports the decoder's error. */
    lens[0] = 3;
    wk_error err = {0};
    CHECK_STATUS(wk_pg_plan_decode_row(plan, vals, lens, &r, nulls, NULL, &err), WK_ERR_SYNTAX);
    CHECK(err.msg != NULL);
    lens[0] = 4;
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    wk_value v;
    CHECK_OK(wk_pg_plan_value_row(plan, vals, lens, &a, &v, NULL));
    CHECK_EQ(v.type, WK_VAL_MAP);
    CHECK_EQ(v.len, 3);
    CHECK_EQ(v.u.pairs[0].val.u.u, 42);
    CHECK_EQ(v.u.pairs[1].val.type, WK_VAL_NIL);
    CHECK_EQ(v.u.pairs[2].val.type, WK_VAL_FLOAT);
    CHECK_MEM(v.u.pairs[2].key.u.str, v.u.pairs[2].key.len, "score", 5);
    wk_arena_free(&a);
    wk_pg_plan_free(plan);
}

WK_TEST(test_pg_plan_fails_at_build_time_for_an_unknown_column)
{
    wk_pg_plan_col cols[2] = {
        {"id", WK_PG_OID_INT4, WK_PG_BINARY, WK_PG_KIND_I32, 0},
        {"x", 999999, WK_PG_BINARY, WK_PG_KIND_TEXT, 0},
    };
    wk_pg_plan *plan = NULL;
    wk_error err = {0};
    CHECK_STATUS(wk_pg_plan_build(pgt_reg(), cols, 2, NULL, &plan, &err), WK_ERR_NOT_FOUND);
    CHECK_EQ(err.offset, 1);
    CHECK(plan == NULL);
    cols[1].oid = WK_PG_OID_TEXT;
    cols[1].kind = WK_PG_KIND_I32; /* text does not decode into int32 */
    CHECK_STATUS(wk_pg_plan_build(pgt_reg(), cols, 2, NULL, &plan, &err), WK_ERR_NOT_FOUND);
}

typedef struct jsonish {
    char out[256];
    size_t n;
} jsonish;

static wk_status put(void *self, const wk_event *ev)
{
    jsonish *j = self;
    int k;
    switch (ev->type) {
    case WK_EV_MAP: k = snprintf(j->out + j->n, sizeof j->out - j->n, "{"); break;
    case WK_EV_END: k = snprintf(j->out + j->n, sizeof j->out - j->n, "}"); break;
    case WK_EV_STR:
    case WK_EV_RAWNUM:
        k = snprintf(j->out + j->n, sizeof j->out - j->n, "%.*s ", (int)ev->v.str.len,
                     ev->v.str.ptr);
        break;
    case WK_EV_NIL: k = snprintf(j->out + j->n, sizeof j->out - j->n, "null "); break;
    case WK_EV_UINT:
        k = snprintf(j->out + j->n, sizeof j->out - j->n, "%llu ", (unsigned long long)ev->v.u);
        break;
    default: k = snprintf(j->out + j->n, sizeof j->out - j->n, "? "); break;
    }
    j->n += (size_t)k;
    return WK_OK;
}

static wk_status no_err(const void *self, wk_error *err)
{
    (void)self;
    (void)err;
    return WK_OK;
}

WK_TEST(test_pg_plan_emits_rows_as_maps_of_events)
{
    wk_pg_plan_col cols[3] = {
        {"id", WK_PG_OID_INT4, WK_PG_BINARY, WK_PG_KIND_I32, 0},
        {"f", WK_PG_OID_FLOAT8, WK_PG_TEXT, WK_PG_KIND_F64, 0},
        {"t", WK_PG_OID_DATE, WK_PG_TEXT, WK_PG_KIND_DATE, 0},
    };
    wk_pg_plan *plan;
    CHECK_OK(wk_pg_plan_build(pgt_reg(), cols, 3, NULL, &plan, NULL));
    const uint8_t *vals[3] = {(const uint8_t *)"\0\0\0\x07", (const uint8_t *)"1e100",
                              (const uint8_t *)"2000-01-01"};
    int lens[3] = {4, 5, -1};
    jsonish j = {{0}, 0};
    wk_sink sink = {put, no_err, &j};
    wk_pg_events ev = {&sink, WK_PG_EV_RAW_FLOATS, NULL, 0};
    CHECK_OK(wk_pg_plan_emit_row(plan, vals, lens, &ev, NULL));
    CHECK_STR(j.out, "{id 7 f 1e+100 t null }");
    wk_pg_plan_free(plan);
}
