/*
 * Schema encode/decode at the event level: a recording sink shows exactly which events a
 * descriptor produces, and a scripted source feeds hand-written (and hostile) event streams to
 * the decoder. No wire format is involved here; the format tests are in test_schema_formats.c.
 */
#include <stdlib.h>

#include "event_script.h"
#include "seed_user.h"
#include "test_shapes.h"
#include "wk_test.h"

static const char *encode_text(const wk_schema *s, const void *obj, ev_recorder *r)
{
    ev_recorder_init(r);
    wk_error err;
    if (wk_schema_encode(s, obj, &r->sink, &err) != WK_OK) {
        return err.msg;
    }
    return r->text;
}

static wk_status decode_text(const wk_schema *s, const char *script, void *obj, wk_arena *a,
                             const wk_schema_opts *opts, wk_schema_error *err)
{
    static ev_script sc;
    if (ev_script_init(&sc, script) != 0) {
        return WK_ERR_ARG;
    }
    return wk_schema_decode(s, &sc.source, obj, a, opts, err);
}

WK_TEST(test_schema_encodes_seed_record_as_events_in_field_order)
{
    seed_user u;
    wk_pair pairs[2];
    seed_user_fill(&u, pairs);
    ev_recorder r;
    CHECK_STR(encode_text(&seed_user_schema, &u, &r),
              "{5 \"username\" \"root\" \"password\" \"secret\" \"age\" u20 \"enabled\" true "
              "\"metadata\" {2 \"hello\" \"world\" \"int\" u10 } }");
}

WK_TEST(test_schema_decodes_seed_record_from_events)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    seed_user u;
    memset(&u, 0, sizeof u);
    wk_schema_error err;
    CHECK_OK(decode_text(&seed_user_schema,
                         "{5 \"username\" \"root\" \"password\" \"secret\" \"age\" u20 "
                         "\"enabled\" true \"metadata\" {2 \"hello\" \"world\" \"int\" u10 } }",
                         &u, &a, NULL, &err));
    CHECK_STR(u.username, "root");
    CHECK_STR(u.password, "secret");
    CHECK_EQ(u.age, 20);
    CHECK(u.enabled);
    CHECK_EQ(u.metadata.type, WK_VAL_MAP);
    CHECK_EQ(u.metadata.len, 2);
    const wk_value *hello = wk_value_map_get(&u.metadata, "hello", 5);
    CHECK(hello != NULL && hello->type == WK_VAL_STR);
    CHECK_MEM(hello->u.str, hello->len, "world", 5);
    wk_pair pairs[2];
    seed_user want;
    seed_user_fill(&want, pairs);
    CHECK(wk_value_equal(&u.metadata, &want.metadata, NULL));
    wk_arena_free(&a);
}

WK_TEST(test_schema_decodes_keys_in_any_order)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    seed_user u;
    memset(&u, 0, sizeof u);
    CHECK_OK(decode_text(&seed_user_schema,
                         "{? \"metadata\" nil \"enabled\" true \"age\" u7 \"password\" \"p\" "
                         "\"username\" \"u\" }",
                         &u, &a, NULL, NULL));
    CHECK_STR(u.username, "u");
    CHECK_STR(u.password, "p");
    CHECK_EQ(u.age, 7);
    CHECK(u.enabled);
    CHECK_EQ(u.metadata.type, WK_VAL_NIL);
    wk_arena_free(&a);
}

static const char *everything_events =
    "{21 \"b\" true \"i8\" i-128 \"i16\" i-300 \"i32\" u70000 \"i64\" i-9223372036854775808 "
    "\"u8\" u255 \"u16\" u65535 \"u32\" u4000000000 \"u64\" u18446744073709551615 "
    "\"f32\" s1.5 \"f64\" d-0.25 \"str\" nil \"code\" \"ABC\" \"bytes\" b:00ff10 "
    "\"ts\" ts:1700000000:5 \"any\" [2 false d2.5 } \"child\" {2 \"id\" u9 \"name\" \"kid\" } "
    "\"nums\" [3 u1 i-2 u300000 } \"kids\" [2 {2 \"id\" u1 \"name\" \"one\" } "
    "{2 \"id\" u2 \"name\" \"\" } } \"tags\" [2 \"x\" \"y z\" } \"matrix\" [2 [2 u1 u2 } [0 } } }";

WK_TEST(test_schema_encodes_every_kind)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    everything e;
    fill_everything(&e, &a);
    ev_recorder r;
    CHECK_STR(encode_text(&everything_schema, &e, &r), everything_events);
    wk_arena_free(&a);
}

WK_TEST(test_schema_decode_then_encode_gives_the_same_events_for_every_kind)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    everything e;
    memset(&e, 0, sizeof e);
    wk_schema_error err;
    wk_status st = decode_text(&everything_schema, everything_events, &e, &a, NULL, &err);
    CHECK_MSG(st == WK_OK, "%s: %s", err.path, err.base.msg);
    CHECK_EQ(e.i64, INT64_MIN);
    CHECK(e.u64 == UINT64_MAX);
    CHECK(e.str == NULL);
    CHECK_STR(e.code, "ABC");
    CHECK_EQ(e.nkids, 2);
    CHECK_STR(e.kids[0].name, "one");
    CHECK_EQ(e.nmatrix, 2);
    CHECK_EQ(e.matrix[1].count, 0);
    CHECK(e.matrix[1].ptr != NULL);
    ev_recorder r;
    CHECK_STR(encode_text(&everything_schema, &e, &r), everything_events);
    wk_arena_free(&a);
}

WK_TEST(test_schema_decoded_strings_live_in_the_arena_not_the_input)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    ev_script *sc = malloc(sizeof *sc);
    CHECK(sc != NULL);
    CHECK_EQ(ev_script_init(sc, "{1 \"username\" \"alice\" }"), 0);
    seed_user u;
    memset(&u, 0, sizeof u);
    CHECK_OK(wk_schema_decode(&seed_user_schema, &sc->source, &u, &a, NULL, NULL));
    memset(sc, 0x55, sizeof *sc); /* the input is gone */
    free(sc);
    CHECK_STR(u.username, "alice");
    wk_arena_free(&a);
}

WK_TEST(test_schema_accepts_every_integer_width_that_fits)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    everything e;
    memset(&e, 0, sizeof e);
    CHECK_OK(decode_text(&everything_schema,
                         "{? \"i8\" u127 \"i16\" i-32768 \"u8\" i200 \"u64\" u18446744073709551615 "
                         "\"i64\" u9223372036854775807 \"f32\" u3 \"f64\" i-7 }",
                         &e, &a, NULL, NULL));
    CHECK_EQ(e.i8, 127);
    CHECK_EQ(e.i16, -32768);
    CHECK_EQ(e.u8, 200);
    CHECK_EQ(e.i64, INT64_MAX);
    CHECK(e.f32 == 3.0f);
    CHECK(e.f64 == -7.0);
    wk_arena_free(&a);
}

static void check_decode_error(const wk_schema *s, const char *script, wk_status want,
                               const char *want_path, const char *want_msg)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    everything e;
    memset(&e, 0, sizeof e);
    wk_schema_error err;
    wk_status st = decode_text(s, script, &e, &a, NULL, &err);
    wk_arena_free(&a);
    CHECK_MSG(st == want, "%s: got %s (%s), want %s", script, wk_status_str(st),
              err.base.msg != NULL ? err.base.msg : "", wk_status_str(want));
    CHECK_MSG(strcmp(err.path, want_path) == 0, "%s: path '%s', want '%s'", script, err.path,
              want_path);
    CHECK_MSG(want_msg == NULL || strcmp(err.base.msg, want_msg) == 0, "%s: msg '%s'", script,
              err.base.msg);
}

WK_TEST(test_schema_rejects_integers_that_do_not_fit)
{
    check_decode_error(&everything_schema, "{1 \"i8\" u128 }", WK_ERR_RANGE, "i8",
                       "integer out of range for the field");
    check_decode_error(&everything_schema, "{1 \"i8\" i-129 }", WK_ERR_RANGE, "i8", NULL);
    check_decode_error(&everything_schema, "{1 \"u8\" u256 }", WK_ERR_RANGE, "u8", NULL);
    check_decode_error(&everything_schema, "{1 \"u32\" i-1 }", WK_ERR_RANGE, "u32",
                       "negative integer for an unsigned field");
    check_decode_error(&everything_schema, "{1 \"i64\" u9223372036854775808 }", WK_ERR_RANGE,
                       "i64", NULL);
    check_decode_error(&everything_schema, "{1 \"i32\" d1.0 }", WK_ERR_TYPE, "i32",
                       "expected integer");
    check_decode_error(&everything_schema, "{1 \"f32\" d1e300 }", WK_ERR_RANGE, "f32", NULL);
}

WK_TEST(test_schema_reports_type_mismatch_with_field_path)
{
    check_decode_error(&everything_schema, "{1 \"child\" {1 \"name\" u5 } }", WK_ERR_TYPE,
                       "child.name", "expected string");
    check_decode_error(&everything_schema,
                       "{1 \"kids\" [2 {1 \"id\" u1 } {2 \"id\" u2 \"name\" true } } }",
                       WK_ERR_TYPE, "kids[1].name", "expected string");
    check_decode_error(&everything_schema, "{1 \"matrix\" [1 [1 \"x\" } } }", WK_ERR_TYPE,
                       "matrix[0][0]", "expected integer");
    check_decode_error(&everything_schema, "{1 \"b\" u1 }", WK_ERR_TYPE, "b",
                       "expected boolean");
    check_decode_error(&everything_schema, "{1 \"child\" [0 } }", WK_ERR_TYPE, "child",
                       "expected map");
    check_decode_error(&everything_schema, "{1 \"nums\" {0 } }", WK_ERR_TYPE, "nums",
                       "expected array");
    check_decode_error(&everything_schema, "[0 }", WK_ERR_TYPE, "", "expected map");
    check_decode_error(&everything_schema, "{1 \"ts\" true }", WK_ERR_TYPE, "ts",
                       "expected timestamp");
    check_decode_error(&everything_schema, "{1 \"bytes\" u1 }", WK_ERR_TYPE, "bytes",
                       "expected bytes");
}

WK_TEST(test_schema_error_format_names_path_message_and_offset)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    everything e;
    memset(&e, 0, sizeof e);
    wk_schema_error err;
    CHECK_STATUS(decode_text(&everything_schema, "{1 \"child\" {1 \"name\" u5 } }", &e, &a,
                             NULL, &err),
                 WK_ERR_TYPE);
    char buf[128];
    size_t n = wk_schema_error_format(&err, buf, sizeof buf);
    CHECK_STR(buf, "child.name: expected string (at byte 4)");
    CHECK_EQ(n, strlen(buf));
    wk_arena_free(&a);
}

WK_TEST(test_schema_skips_unknown_keys_including_containers)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    seed_user u;
    memset(&u, 0, sizeof u);
    CHECK_OK(decode_text(&seed_user_schema,
                         "{4 \"x\" {1 \"y\" [2 u1 {0 } } } \"username\" \"root\" u5 \"int key\" "
                         "[1 u1 } \"map key\" \"age\" u3 }",
                         &u, &a, NULL, NULL));
    CHECK_STR(u.username, "root");
    CHECK_EQ(u.age, 3);
    wk_arena_free(&a);
}

WK_TEST(test_schema_rejects_unknown_keys_when_asked)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    seed_user u;
    memset(&u, 0, sizeof u);
    wk_schema_opts opts = {.flags = WK_SCHEMA_REJECT_UNKNOWN};
    wk_schema_error err;
    CHECK_STATUS(decode_text(&seed_user_schema, "{2 \"username\" \"r\" \"nope\" u1 }", &u, &a,
                             &opts, &err),
                 WK_ERR_NOT_FOUND);
    CHECK_STR(err.base.msg, "unknown field");
    wk_arena_free(&a);
}

WK_TEST(test_schema_leaves_missing_optional_fields_at_their_defaults)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    seed_user u;
    memset(&u, 0, sizeof u);
    u.age = 42;
    u.password = (char *)"default";
    CHECK_OK(decode_text(&seed_user_schema, "{1 \"username\" \"root\" }", &u, &a, NULL, NULL));
    CHECK_EQ(u.age, 42);
    CHECK_STR(u.password, "default");
    wk_arena_free(&a);
}

WK_TEST(test_schema_fails_on_missing_required_field_with_its_path)
{
    check_decode_error(&seed_user_schema, "{1 \"age\" u1 }", WK_ERR_NOT_FOUND, "username",
                       "missing required field");
    check_decode_error(&everything_schema, "{1 \"kids\" [1 {1 \"name\" \"n\" } } }",
                       WK_ERR_NOT_FOUND, "kids[0].id", "missing required field");
}

WK_TEST(test_schema_nullable_fields_take_nil_and_others_reject_it)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    everything e;
    memset(&e, 0, sizeof e);
    e.str = (char *)"was set";
    CHECK_OK(decode_text(&everything_schema, "{2 \"str\" nil \"tags\" nil }", &e, &a, NULL,
                         NULL));
    CHECK(e.str == NULL);
    CHECK(e.tags == NULL && e.ntags == 0);
    wk_arena_free(&a);
    check_decode_error(&everything_schema, "{1 \"i32\" nil }", WK_ERR_TYPE, "i32",
                       "expected integer");
    check_decode_error(&seed_user_schema, "{1 \"username\" nil }", WK_ERR_TYPE, "username",
                       "expected string");
}

WK_TEST(test_schema_omitempty_leaves_out_empty_fields)
{
    node n = {5, NULL, 0};
    ev_recorder r;
    CHECK_STR(encode_text(&node_schema, &n, &r), "{1 \"v\" u5 }");
    node kid = {0, NULL, 0};
    n.kids = &kid;
    n.nkids = 1;
    CHECK_STR(encode_text(&node_schema, &n, &r), "{2 \"v\" u5 \"kids\" [1 {1 \"v\" u0 } } }");
}

WK_TEST(test_schema_rejects_strings_with_nul_bytes_and_overlong_fixed_strings)
{
    check_decode_error(&seed_user_schema, "{1 \"username\" \"ro\\0ot\" }", WK_ERR_TYPE,
                       "username", "string contains a NUL byte");
    check_decode_error(&everything_schema, "{1 \"code\" \"12345678\" }", WK_ERR_RANGE, "code",
                       "string too long for the field");
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    everything e;
    memset(&e, 0, sizeof e);
    CHECK_OK(decode_text(&everything_schema, "{1 \"code\" \"1234567\" }", &e, &a, NULL, NULL));
    CHECK_STR(e.code, "1234567");
    wk_arena_free(&a);
}

WK_TEST(test_schema_decodes_text_forms_of_bytes_and_timestamps)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    everything e;
    memset(&e, 0, sizeof e);
    CHECK_OK(decode_text(&everything_schema,
                         "{2 \"bytes\" \"AP8Q\" \"ts\" \"2023-11-14T22:13:20.000000005Z\" }", &e,
                         &a, NULL, NULL));
    CHECK_MEM(e.bytes.ptr, e.bytes.len, "\x00\xff\x10", 3);
    CHECK_EQ(e.ts.sec, 1700000000);
    CHECK_EQ(e.ts.nsec, 5);
    CHECK_OK(decode_text(&everything_schema, "{1 \"ts\" \"2023-11-15T00:13:20+02:00\" }", &e, &a,
                         NULL, NULL));
    CHECK_EQ(e.ts.sec, 1700000000);
    wk_arena_free(&a);
    check_decode_error(&everything_schema, "{1 \"bytes\" \"A\" }", WK_ERR_TYPE, "bytes", NULL);
    check_decode_error(&everything_schema, "{1 \"bytes\" \"A*==\" }", WK_ERR_TYPE, "bytes", NULL);
    check_decode_error(&everything_schema, "{1 \"ts\" \"2023-02-29T00:00:00Z\" }", WK_ERR_TYPE,
                       "ts", NULL);
    check_decode_error(&everything_schema, "{1 \"ts\" \"2023-01-01 00:00:00Z\" }", WK_ERR_TYPE,
                       "ts", NULL);
}

WK_TEST(test_schema_decode_fails_cleanly_on_truncated_or_malformed_streams)
{
    check_decode_error(&seed_user_schema, "{5 \"username\" \"root\" \"age\"", WK_ERR_TRUNCATED,
                       "age", "input ended inside a value");
    check_decode_error(&seed_user_schema, "", WK_ERR_EOF, "", NULL);
    check_decode_error(&seed_user_schema, "{1 \"username\" }", WK_ERR_SYNTAX, "username",
                       "map ended after a key");
    check_decode_error(&everything_schema, "{1 \"nums\" [1 u1 u2 } }", WK_ERR_SYNTAX, "nums[0]",
                       "array longer than its count");
    check_decode_error(&everything_schema, "{1 \"nums\" [3 u1 } }", WK_ERR_SYNTAX, "nums[0]",
                       "array ended before its count");
    check_decode_error(&seed_user_schema, "{1 \"metadata\" }", WK_ERR_SYNTAX, "metadata", NULL);
}

WK_TEST(test_schema_limits_nesting_depth_without_recursion)
{
    char *script = malloc(20000);
    CHECK(script != NULL);
    size_t n = 0;
    for (int i = 0; i < 100; i++) {
        n += (size_t)snprintf(script + n, 20000 - n, "{1 \"kids\" [1 ");
    }
    script[n] = '\0';
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    node root;
    memset(&root, 0, sizeof root);
    wk_schema_error err;
    ev_script *sc = malloc(sizeof *sc);
    CHECK(ev_script_init(sc, script) == 0);
    wk_status st = wk_schema_decode(&node_schema, &sc->source, &root, &a, NULL, &err);
    free(sc);
    free(script);
    wk_arena_free(&a);
    CHECK_STATUS(st, WK_ERR_DEPTH);
    CHECK(strncmp(err.path, "kids[0].kids[0]", 15) == 0);
}

WK_TEST(test_schema_encode_stops_a_cycle_with_a_depth_error)
{
    node n;
    n.v = 1;
    n.kids = &n;
    n.nkids = 1;
    ev_recorder *r = malloc(sizeof *r);
    ev_recorder_init(r);
    wk_error err;
    CHECK_STATUS(wk_schema_encode(&node_schema, &n, &r->sink, &err), WK_ERR_DEPTH);
    free(r);
}

WK_TEST(test_schema_encode_reports_the_sink_error)
{
    seed_user u;
    wk_pair pairs[2];
    seed_user_fill(&u, pairs);
    ev_recorder r;
    ev_recorder_init(&r);
    r.fail_after = 4;
    wk_error err;
    CHECK_STATUS(wk_schema_encode(&seed_user_schema, &u, &r.sink, &err), WK_ERR_LIMIT);
    CHECK_STR(err.msg, "recorder failure");
}

WK_TEST(test_schema_decode_stops_when_the_arena_cap_is_reached)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 64);
    everything e;
    memset(&e, 0, sizeof e);
    wk_schema_error err;
    CHECK_STATUS(decode_text(&everything_schema,
                             "{1 \"str\" \"a string much longer than the sixty four bytes the "
                             "arena may take from its allocator\" }",
                             &e, &a, NULL, &err),
                 WK_ERR_NOMEM);
    CHECK_STR(err.path, "str");
    wk_arena_free(&a);
}

WK_TEST(test_schema_finds_out_of_order_keys_in_a_wide_struct)
{
    /* 40 u8 fields named f0..f39, fed in reverse order: every key goes through the index. */
    typedef struct wide {
        uint8_t f[40];
    } wide;
    static wk_schema_field fields[40];
    static char names[40][4];
    static wk_schema_rt rt;
    for (int i = 0; i < 40; i++) {
        int n = snprintf(names[i], sizeof names[i], "f%d", i);
        fields[i].name = names[i];
        fields[i].name_len = (uint32_t)n;
        fields[i].offset = (uint32_t)i;
        fields[i].flags = WK_REQUIRED;
        fields[i].type.kind = WK_SK_U8;
        fields[i].type.size = 1;
    }
    wk_schema s = {"wide", 1, WK_SCHEMA_ROOT_STRUCT, sizeof(wide), fields, 40, &rt};
    char script[2048];
    size_t n = (size_t)snprintf(script, sizeof script, "{40");
    for (int i = 39; i >= 0; i--) {
        n += (size_t)snprintf(script + n, sizeof script - n, " \"f%d\" u%d", i, i + 100);
    }
    snprintf(script + n, sizeof script - n, " }");
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    wide w;
    memset(&w, 0, sizeof w);
    wk_schema_error err;
    wk_status st = decode_text(&s, script, &w, &a, NULL, &err);
    wk_arena_free(&a);
    wk_schema_unprepare(&s);
    CHECK_MSG(st == WK_OK, "%s: %s", err.path, err.base.msg);
    for (int i = 0; i < 40; i++) {
        CHECK_EQ(w.f[i], i + 100);
    }
}

WK_TEST(test_schema_value_root_descriptor_round_trips_any_document)
{
    WK_SCHEMA_DEFINE_VALUE(doc_schema, "doc", 1);
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    wk_value v;
    CHECK_OK(decode_text(&doc_schema, "[3 u1 \"two\" {1 \"k\" nil } }", &v, &a, NULL, NULL));
    CHECK_EQ(v.type, WK_VAL_ARRAY);
    ev_recorder r;
    CHECK_STR(encode_text(&doc_schema, &v, &r), "[3 u1 \"two\" {1 \"k\" nil } }");
    wk_schema_unprepare(&doc_schema);
    wk_arena_free(&a);
}
