/*
 * Nullable fields (WK_FIELD_NULLABLE: a member plus a bool presence member): a NULL field is
 * written as nil / null whatever its member holds, a present one as its value (a present 0
 * too); decoding nil clears the presence member and zeroes the member, any value sets it, an
 * absent key leaves both alone. The generic walks (events through the MessagePack and JSON
 * writers and readers) and the fused calls (wk_schema_encode_mp / _json, wk_schema_decode_mp /
 * _json) give the same bytes and structs. WK_OMITEMPTY leaves out NULL fields only. The
 * presence flag changes the fingerprint; a presence member on a wk_value field or outside the
 * struct is refused.
 */
#include <stdio.h>

#include "wirekit/json.h"
#include "wirekit/msgpack.h"
#include "wirekit/schema.h"
#include "wk_test.h"

typedef struct person {
    char *name;
    int32_t age;
    bool has_age;
    bool admin;
    bool has_admin;
    double score;
    bool has_score;
    char *nick;
    bool has_nick;
    wk_timestamp seen;
    bool has_seen;
    uint8_t level;
    bool has_level;
} person;

WK_SCHEMA_DEFINE_STATIC(person_schema, person, "person", 1,
    WK_FIELD(person, name, "name", WK_SK_STR, 0),
    WK_FIELD_NULLABLE(person, age, has_age, "age", WK_SK_I32, 0),
    WK_FIELD_NULLABLE(person, admin, has_admin, "admin", WK_SK_BOOL, 0),
    WK_FIELD_NULLABLE(person, score, has_score, "score", WK_SK_F64, 0),
    WK_FIELD_NULLABLE(person, nick, has_nick, "nick", WK_SK_STR, 0),
    WK_FIELD_NULLABLE(person, seen, has_seen, "seen", WK_SK_TIMESTAMP, 0),
    WK_FIELD_NULLABLE(person, level, has_level, "level", WK_SK_U8, WK_OMITEMPTY));

/* The same wire names and kinds without presence members. */
WK_SCHEMA_DEFINE_STATIC(person_plain, person, "person", 1,
    WK_FIELD(person, name, "name", WK_SK_STR, 0),
    WK_FIELD(person, age, "age", WK_SK_I32, 0),
    WK_FIELD(person, admin, "admin", WK_SK_BOOL, 0),
    WK_FIELD(person, score, "score", WK_SK_F64, 0),
    WK_FIELD(person, nick, "nick", WK_SK_STR, 0),
    WK_FIELD(person, seen, "seen", WK_SK_TIMESTAMP, 0),
    WK_FIELD(person, level, "level", WK_SK_U8, WK_OMITEMPTY));

/* Encodes p both ways in one format: through events (generic) and the fused call; they must
 * agree byte for byte. `json` picks the format. */
static bool encode_both(const person *p, bool json, wk_buf *out)
{
    wk_buf gen;
    wk_buf_init(&gen, NULL, 0);
    wk_sink sink;
    wk_status st;
    if (json) {
        wk_json_writer w;
        wk_json_writer_init(&w, &gen, NULL);
        wk_json_writer_sink(&w, &sink);
        st = wk_schema_encode(&person_schema, p, &sink, NULL);
        if (st == WK_OK) {
            st = wk_json_writer_finish(&w, NULL);
        }
    } else {
        wk_mp_writer w;
        wk_mp_writer_init(&w, &gen);
        wk_mp_writer_sink(&w, &sink);
        st = wk_schema_encode(&person_schema, p, &sink, NULL);
        wk_status fin = wk_mp_writer_finish(&w, NULL);
        st = st == WK_OK ? fin : st;
    }
    wk_buf_clear(out);
    wk_status fst = json ? wk_schema_encode_json(&person_schema, p, out, NULL)
                         : wk_schema_encode_mp(&person_schema, p, out, NULL);
    bool same = st == WK_OK && fst == WK_OK && gen.len == out->len &&
                memcmp(gen.data, out->data, gen.len) == 0;
    wk_buf_free(&gen);
    return same;
}

/* Decodes data both ways (generic over the format's reader, and fused) into *a and *b, each
 * started from `init`; both statuses are returned through *sa and *sb. */
static void decode_both(const void *data, size_t len, bool json, const person *init,
                        person *a, person *b, wk_arena *arena, wk_status *sa, wk_status *sb)
{
    *a = *init;
    *b = *init;
    wk_source src;
    if (json) {
        wk_json_reader r;
        wk_json_reader_init(&r, data, len, NULL, arena);
        wk_json_reader_source(&r, &src);
        *sa = wk_schema_decode(&person_schema, &src, a, arena, NULL, NULL);
        wk_json_reader_free(&r);
        *sb = wk_schema_decode_json(&person_schema, data, len, b, arena, NULL, NULL);
    } else {
        wk_mp_reader r;
        wk_mp_reader_init(&r, data, len, NULL);
        wk_mp_reader_source(&r, &src);
        *sa = wk_schema_decode(&person_schema, &src, a, arena, NULL, NULL);
        *sb = wk_schema_decode_mp(&person_schema, data, len, b, arena, NULL, NULL);
    }
}

WK_TEST(test_schema_nullable_null_fields_encode_as_nil_in_both_formats)
{
    person p;
    memset(&p, 0, sizeof p);
    p.name = "ann";
    p.age = 41; /* present false: written as null whatever the member holds */
    p.admin = false;
    p.has_admin = true; /* a present false is a value */
    p.score = 0.0;
    p.has_score = true;
    p.level = 3; /* NULL with WK_OMITEMPTY: left out */
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    CHECK(encode_both(&p, true, &out));
    const char want[] =
        "{\"name\":\"ann\",\"age\":null,\"admin\":false,\"score\":0.0,\"nick\":null,"
        "\"seen\":null}";
    CHECK_MEM(out.data, out.len, want, sizeof want - 1);
    CHECK(encode_both(&p, false, &out));
    /* MessagePack: a map of 6, age nil, admin false, score 0.0, nick nil, seen nil */
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_value *tree = NULL;
    CHECK_OK(wk_mp_decode_value(out.data, out.len, NULL, &arena, &tree, NULL, NULL));
    CHECK_EQ(tree->type, WK_VAL_MAP);
    CHECK_EQ(tree->len, 6);
    CHECK_EQ(tree->u.pairs[1].val.type, WK_VAL_NIL); /* age */
    CHECK_EQ(tree->u.pairs[2].val.type, WK_VAL_BOOL);
    CHECK_EQ(tree->u.pairs[3].val.type, WK_VAL_FLOAT);
    CHECK_EQ(tree->u.pairs[4].val.type, WK_VAL_NIL); /* nick */
    /* a present 0 with WK_OMITEMPTY is written: presence is what "empty" means here */
    p.has_level = true;
    p.level = 0;
    CHECK(encode_both(&p, true, &out));
    CHECK(out.len > 9 && memcmp(out.data + out.len - 10, "\"level\":0}", 10) == 0);
    wk_arena_free(&arena);
    wk_buf_free(&out);
}

WK_TEST(test_schema_nullable_decode_sets_and_clears_presence)
{
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    person init;
    memset(&init, 0, sizeof init);
    init.age = 99;
    init.has_age = true;   /* overwritten by null: cleared, member zeroed */
    init.score = 7.5;
    init.has_score = true; /* the key is absent: kept */
    person a;
    person b;
    wk_status sa;
    wk_status sb;
    const char js[] = "{\"name\":\"bo\",\"age\":null,\"admin\":true,\"nick\":\"b\","
                      "\"seen\":\"2024-01-02T03:04:05Z\",\"level\":0}";
    decode_both(js, sizeof js - 1, true, &init, &a, &b, &arena, &sa, &sb);
    CHECK_OK(sa);
    CHECK_OK(sb);
    person *both[2] = {&a, &b};
    for (int i = 0; i < 2; i++) {
        person *q = both[i];
        CHECK(!q->has_age);
        CHECK_EQ(q->age, 0);
        CHECK(q->has_admin && q->admin);
        CHECK(q->has_score);
        CHECK(q->score == 7.5);
        CHECK(q->has_nick && strcmp(q->nick, "b") == 0);
        CHECK(q->has_seen);
        CHECK_EQ(q->seen.sec, 1704164645);
        CHECK(q->has_level);
        CHECK_EQ(q->level, 0);
    }
    /* the same object through MessagePack, encoded from a and decoded back */
    wk_buf mp;
    wk_buf_init(&mp, NULL, 0);
    CHECK(encode_both(&a, false, &mp));
    memset(&init, 0, sizeof init);
    decode_both(mp.data, mp.len, false, &init, &a, &b, &arena, &sa, &sb);
    CHECK_OK(sa);
    CHECK_OK(sb);
    for (int i = 0; i < 2; i++) {
        person *q = both[i];
        CHECK(!q->has_age);
        CHECK(q->has_admin && q->admin);
        CHECK(q->has_score && q->score == 7.5);
        CHECK(q->has_nick && strcmp(q->nick, "b") == 0);
        CHECK(q->has_level);
    }
    /* nil into a NULL string with presence: NULL pointer, presence false */
    const char js2[] = "{\"nick\":null,\"score\":null}";
    init.has_nick = true;
    init.nick = "x";
    decode_both(js2, sizeof js2 - 1, true, &init, &a, &b, &arena, &sa, &sb);
    CHECK_OK(sa);
    CHECK_OK(sb);
    CHECK(!a.has_nick && a.nick == NULL && !b.has_nick && b.nick == NULL);
    CHECK(!a.has_score && a.score == 0.0 && !b.has_score);
    /* a wrong-typed value still fails with the usual error, on both paths */
    const char bad[] = "{\"age\":\"x\"}";
    decode_both(bad, sizeof bad - 1, true, &init, &a, &b, &arena, &sa, &sb);
    CHECK_STATUS(sa, WK_ERR_TYPE);
    CHECK_STATUS(sb, WK_ERR_TYPE);
    wk_buf_free(&mp);
    wk_arena_free(&arena);
}

WK_TEST(test_schema_nullable_changes_fingerprint_and_checks_members)
{
    CHECK(wk_schema_fingerprint(&person_schema) != wk_schema_fingerprint(&person_plain));
    CHECK_OK(wk_schema_prepare(&person_schema, NULL, NULL));
    /* a presence member on a wk_value field (its nil is its NULL) is refused */
    typedef struct bad {
        wk_value v;
        bool has_v;
    } bad;
    static const wk_schema_field fields[] = {
        {"v", 1, offsetof(bad, v), 0, WK_NULLABLE | WK_PRESENCE,
         {WK_SK_VALUE, sizeof(wk_value), NULL, NULL}, offsetof(bad, has_v)}};
    static wk_schema_rt rt;
    const wk_schema s = {"bad", 1, WK_SCHEMA_ROOT_STRUCT, sizeof(bad), fields, 1, &rt};
    wk_error err;
    CHECK_STATUS(wk_schema_prepare(&s, NULL, &err), WK_ERR_ARG);
    CHECK(strcmp(err.msg, "schema: bad presence member") == 0);
    /* and so is one outside the struct */
    static const wk_schema_field far[] = {
        {"i", 1, 0, 0, WK_NULLABLE | WK_PRESENCE, {WK_SK_I32, 4, NULL, NULL}, 4096}};
    static wk_schema_rt rt2;
    const wk_schema s2 = {"far", 1, WK_SCHEMA_ROOT_STRUCT, 8, far, 1, &rt2};
    CHECK_STATUS(wk_schema_prepare(&s2, NULL, &err), WK_ERR_ARG);
}
