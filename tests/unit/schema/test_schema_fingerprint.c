/*
 * Fingerprints, the version guard and descriptor validation: a shape change (name, kind,
 * order, flags, nested shape) changes the fingerprint; layout-only changes do not; the guard
 * fails when the shape changed and the version did not; descriptor validation and where the
 * lookup index is allocated.
 */
#include <stdio.h>

#include "seed_user.h"
#include "wirekit/msgpack.h"
#include "wk_test.h"

typedef struct pt {
    int32_t x;
    int32_t y;
} pt;
typedef struct pt_padded {
    int64_t pad;
    int32_t y;
    int32_t x;
} pt_padded;
typedef struct pt_wide {
    int64_t x;
    int32_t y;
} pt_wide;

WK_SCHEMA_DEFINE_STATIC(pt_v1, pt, "pt", 1,
    WK_FIELD(pt, x, "x", WK_SK_I32, 0),
    WK_FIELD(pt, y, "y", WK_SK_I32, 0));
/* Same wire shape, other C layout: same fingerprint. */
WK_SCHEMA_DEFINE_STATIC(pt_layout, pt_padded, "pt", 1,
    WK_FIELD(pt_padded, x, "x", WK_SK_I32, 0),
    WK_FIELD(pt_padded, y, "y", WK_SK_I32, 0));
WK_SCHEMA_DEFINE_STATIC(pt_renamed, pt, "pt", 1,
    WK_FIELD(pt, x, "x", WK_SK_I32, 0),
    WK_FIELD(pt, y, "Y", WK_SK_I32, 0));
WK_SCHEMA_DEFINE_STATIC(pt_reordered, pt, "pt", 1,
    WK_FIELD(pt, y, "y", WK_SK_I32, 0),
    WK_FIELD(pt, x, "x", WK_SK_I32, 0));
WK_SCHEMA_DEFINE_STATIC(pt_rekinded, pt_wide, "pt", 1,
    WK_FIELD(pt_wide, x, "x", WK_SK_I64, 0),
    WK_FIELD(pt_wide, y, "y", WK_SK_I32, 0));
WK_SCHEMA_DEFINE_STATIC(pt_flagged, pt, "pt", 1,
    WK_FIELD(pt, x, "x", WK_SK_I32, WK_REQUIRED),
    WK_FIELD(pt, y, "y", WK_SK_I32, 0));
WK_SCHEMA_DEFINE_STATIC(pt_v2, pt, "pt", 2,
    WK_FIELD(pt, x, "x", WK_SK_I32, 0));

typedef struct line {
    pt a;
} line;
WK_SCHEMA_DEFINE_STATIC(line_v1, line, "line", 1,
    WK_FIELD_STRUCT(line, a, "a", pt, &pt_v1, 0));
WK_SCHEMA_DEFINE_STATIC(line_inner_renamed, line, "line", 1,
    WK_FIELD_STRUCT(line, a, "a", pt, &pt_renamed, 0));

WK_TEST(test_schema_fingerprint_ignores_layout_and_tracks_shape)
{
    uint64_t base = wk_schema_fingerprint(&pt_v1);
    CHECK(base == wk_schema_fingerprint(&pt_v1));
    CHECK(base == wk_schema_fingerprint(&pt_layout));
    CHECK(base != wk_schema_fingerprint(&pt_renamed));
    CHECK(base != wk_schema_fingerprint(&pt_reordered));
    CHECK(base != wk_schema_fingerprint(&pt_rekinded));
    CHECK(base != wk_schema_fingerprint(&pt_flagged));
    CHECK(base != wk_schema_fingerprint(&pt_v2));
}

WK_TEST(test_schema_fingerprint_covers_nested_descriptors)
{
    CHECK(wk_schema_fingerprint(&line_v1) != wk_schema_fingerprint(&line_inner_renamed));
}


WK_TEST(test_schema_guard_holds_for_the_seed_record)
{
    wk_error err;
    wk_status st = wk_schema_guard(&seed_user_schema, SEED_USER_VERSION, SEED_USER_FINGERPRINT,
                                   &err);
    CHECK_MSG(st == WK_OK, "%s (fingerprint now 0x%016llxull)", err.msg,
              (unsigned long long)wk_schema_fingerprint(&seed_user_schema));
}

WK_TEST(test_schema_guard_fails_when_shape_changes_without_version_bump)
{
    wk_error err;
    uint64_t recorded = wk_schema_fingerprint(&pt_v1);
    CHECK_OK(wk_schema_guard(&pt_v1, 1, recorded, &err));
    CHECK_STATUS(wk_schema_guard(&pt_renamed, 1, recorded, &err), WK_ERR_STATE);
    CHECK_STR(err.msg, "schema shape changed but its version was not bumped");
    CHECK_STATUS(wk_schema_guard(&pt_v2, 1, recorded, &err), WK_ERR_STATE);
    CHECK_STR(err.msg, "schema version changed: record the new version and fingerprint");
    CHECK_OK(wk_schema_guard(&pt_v2, 2, wk_schema_fingerprint(&pt_v2), &err));
}

typedef struct two {
    int32_t a;
    int32_t b;
} two;

WK_TEST(test_schema_prepare_rejects_duplicate_names)
{
    WK_SCHEMA_DEFINE_STATIC(dup, two, "two", 1,
        WK_FIELD(two, a, "same", WK_SK_I32, 0),
        WK_FIELD(two, b, "same", WK_SK_I32, 0));
    wk_error err;
    CHECK_STATUS(wk_schema_prepare(&dup, NULL, &err), WK_ERR_ARG);
    CHECK_STR(err.msg, "schema: two fields with the same name");
    CHECK_EQ(err.offset, 1);
}

WK_TEST(test_schema_prepare_rejects_broken_descriptors)
{
    static wk_schema_rt rt;
    wk_schema_field f = {"a", 1, 0, 0, 0, {WK_SK_I32, 4, NULL, NULL}, 0};
    wk_schema s = {"two", 1, WK_SCHEMA_ROOT_STRUCT, sizeof(two), &f, 1, &rt};
    wk_error err;
    f.offset = 6; /* past the end of an 8-byte struct for a 4-byte member */
    CHECK_STATUS(wk_schema_prepare(&s, NULL, &err), WK_ERR_ARG);
    CHECK_STR(err.msg, "schema: member outside the struct");
    f.offset = 0;
    f.type.kind = 99;
    CHECK_STATUS(wk_schema_prepare(&s, NULL, &err), WK_ERR_ARG);
    CHECK_STR(err.msg, "schema: unknown field kind");
    f.type.kind = WK_SK_I32;
    f.type.size = 8;
    CHECK_STATUS(wk_schema_prepare(&s, NULL, &err), WK_ERR_ARG);
    CHECK_STR(err.msg, "schema: field size does not match kind");
    f.type.size = 4;
    f.type.kind = WK_SK_U32;
    f.type.kind = WK_SK_STRUCT;
    f.type.schema = &pt_v1; /* 8 bytes, but the member type says 4 */
    CHECK_STATUS(wk_schema_prepare(&s, NULL, &err), WK_ERR_ARG);
    CHECK_STR(err.msg, "schema: nested descriptor does not describe the member");
    f.type.kind = WK_SK_I32;
    f.type.schema = NULL;
    f.flags = 0x80;
    CHECK_STATUS(wk_schema_prepare(&s, NULL, &err), WK_ERR_ARG);
    f.flags = 0;
    s.rt = NULL;
    CHECK_STATUS(wk_schema_prepare(&s, NULL, &err), WK_ERR_ARG);
    s.rt = &rt;
    CHECK_OK(wk_schema_prepare(&s, NULL, &err));
    wk_schema_unprepare(&s);
}

/* A descriptor nobody prepared gets its index on first use from the decode options'
 * allocator (the same lifetime rule as wk_schema_prepare's), never from libc behind the
 * caller's back; running out there is WK_ERR_NOMEM and publishes nothing. */
WK_TEST(test_schema_first_use_builds_the_index_on_the_decode_options_allocator)
{
    static wk_schema_rt rt;
    wk_schema_field f[2] = {{"a", 1, offsetof(two, a), 0, 0, {WK_SK_I32, 4, NULL, NULL}, 0},
                            {"b", 1, offsetof(two, b), 0, 0, {WK_SK_I32, 4, NULL, NULL}, 0}};
    wk_schema s = {"two", 1, WK_SCHEMA_ROOT_STRUCT, sizeof(two), f, 2, &rt};
    static const uint8_t mp[] = {0x82, 0xa1, 'a', 0x05, 0xa1, 'b', 0x06};
    wk_test_alloc t;
    wk_test_alloc_init(&t);
    wk_schema_opts o = {0, 0, &t.a};
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    two x = {0, 0};
    t.fail_at = 1;
    wk_schema_error err;
    CHECK_STATUS(wk_schema_decode_mp(&s, mp, sizeof mp, &x, &arena, &o, &err), WK_ERR_NOMEM);
    CHECK_EQ(t.live_bytes, 0);
    CHECK(rt.index == NULL);
    t.fail_at = 0;
    CHECK_OK(wk_schema_decode_mp(&s, mp, sizeof mp, &x, &arena, &o, &err));
    CHECK(x.a == 5 && x.b == 6);
    CHECK_EQ(t.allocs, 1);
    CHECK(t.live_bytes > 0);
    CHECK_OK(wk_schema_decode_mp(&s, mp, sizeof mp, &x, &arena, &o, &err)); /* built once */
    CHECK_EQ(t.allocs, 1);
    wk_schema_unprepare(&s);
    CHECK_EQ(t.live_bytes, 0);
    /* the generic decoder over a source does the same */
    wk_mp_reader r;
    wk_mp_reader_init(&r, mp, sizeof mp, NULL);
    wk_source src;
    wk_mp_reader_source(&r, &src);
    CHECK_OK(wk_schema_decode(&s, &src, &x, &arena, &o, &err));
    wk_mp_reader_free(&r);
    CHECK_EQ(t.allocs, 2);
    wk_schema_unprepare(&s);
    CHECK_EQ(t.live_bytes, 0);
    wk_arena_free(&arena);
}
