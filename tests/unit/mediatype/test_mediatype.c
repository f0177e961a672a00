/* Media types: the parse result, strict mode, limits, serializing, the render cache,
 * building from parts, parameter helpers, and the well-known table. */
#include <stdlib.h>

#include "wirekit/mediatype.h"
#include "wk_test.h"

static wk_status parse(const char *s, unsigned flags, wk_media_type *mt, wk_error *err)
{
    return wk_mt_parse(s, strlen(s), flags, mt, err);
}

static bool serializes_to(const char *in, unsigned flags, unsigned style, const char *want)
{
    wk_media_type mt = WK_MT_INIT;
    if (parse(in, flags, &mt, NULL) != WK_OK) {
        return false;
    }
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    bool ok = wk_mt_serialize(&mt, style, &out, NULL) == WK_OK && out.len == strlen(want) &&
              memcmp(out.data, want, out.len) == 0;
    if (!ok) {
        printf("    %s -> %.*s (want %s)\n", in, (int)out.len, (const char *)out.data, want);
    }
    wk_buf_free(&out);
    return ok;
}

WK_TEST(test_mediatype_parses_the_seed_value_into_views)
{
    const char *in = "application/json; charset=utf-8";
    wk_media_type mt = WK_MT_INIT;
    CHECK_OK(parse(in, 0, &mt, NULL));
    CHECK_MEM(wk_mt_type(&mt).ptr, wk_mt_type(&mt).len, "application", 11);
    CHECK_MEM(wk_mt_subtype(&mt).ptr, wk_mt_subtype(&mt).len, "json", 4);
    CHECK_MEM(wk_mt_essence(&mt).ptr, wk_mt_essence(&mt).len, "application/json", 16);
    CHECK(mt.id != 0);
    CHECK(mt.id == wk_mt_known_find("application/json", 16));
    CHECK_EQ(mt.nparams, 1);
    CHECK_MEM(mt.params[0].name.ptr, mt.params[0].name.len, "charset", 7);
    CHECK(mt.params[0].value.ptr == in + 26); /* a view of the input */
    CHECK_EQ(mt.params[0].quoted, 0);
    const wk_mt_param *cs = wk_mt_charset(&mt);
    CHECK(cs != NULL);
    CHECK_MEM(cs->value.ptr, cs->value.len, "utf-8", 5);
    CHECK(wk_mt_boundary(&mt) == NULL);
}

WK_TEST(test_mediatype_lowercases_the_essence_and_keeps_parameters_as_written)
{
    wk_media_type mt = WK_MT_INIT;
    CHECK_OK(parse("Text/X-Custom;Foo=Bar", 0, &mt, NULL));
    CHECK_EQ(mt.id, 0);
    CHECK_MEM(wk_mt_type(&mt).ptr, wk_mt_type(&mt).len, "text", 4);
    CHECK_MEM(wk_mt_subtype(&mt).ptr, wk_mt_subtype(&mt).len, "x-custom", 8);
    CHECK_MEM(wk_mt_essence(&mt).ptr, wk_mt_essence(&mt).len, "text/x-custom", 13);
    CHECK_MEM(mt.params[0].name.ptr, mt.params[0].name.len, "Foo", 3);
    CHECK(wk_mt_param_find(&mt, "FOO", 3) != NULL);
    CHECK(wk_mt_param_find(&mt, "foo", 3) != NULL);
    CHECK(wk_mt_param_find(&mt, "fo", 2) == NULL);
    CHECK(serializes_to("Text/X-Custom;Foo=Bar", 0, WK_MT_STYLE_WHATWG, "text/x-custom;foo=Bar"));
    /* a well-known type's views are the table's lowercase string */
    CHECK_OK(parse("TEXT/HTML", 0, &mt, NULL));
    CHECK(mt.id != 0);
    CHECK_MEM(wk_mt_essence(&mt).ptr, wk_mt_essence(&mt).len, "text/html", 9);
    CHECK_MEM(wk_mt_subtype(&mt).ptr, wk_mt_subtype(&mt).len, "html", 4);
    /* not in mime-db, in both grammars and through wk_mt_build */
    static const char *const in[] = {"Application/X-Foo-Bar", "application/X-FOO-bar ; a=b"};
    for (unsigned flags = 0; flags < 2; flags++) {
        CHECK_OK(parse(in[flags], flags, &mt, NULL));
        CHECK_MEM(wk_mt_essence(&mt).ptr, wk_mt_essence(&mt).len, "application/x-foo-bar", 21);
        CHECK_MEM(wk_mt_type(&mt).ptr, wk_mt_type(&mt).len, "application", 11);
        CHECK_MEM(wk_mt_subtype(&mt).ptr, wk_mt_subtype(&mt).len, "x-foo-bar", 9);
    }
    CHECK_OK(wk_mt_build(&mt, "Application/X-Foo-Bar", 21, NULL, 0, NULL));
    CHECK_MEM(wk_mt_essence(&mt).ptr, wk_mt_essence(&mt).len, "application/x-foo-bar", 21);
    /* an input already in lower case is viewed, not copied */
    const char *low = "x-a/x-b;Q=1";
    CHECK_OK(parse(low, 0, &mt, NULL));
    CHECK(wk_mt_essence(&mt).ptr == low);
}

WK_TEST(test_mediatype_whatwg_drops_invalid_and_duplicate_parameters)
{
    CHECK(serializes_to(" text/html ;charset=gbk;charset=utf-8; x ; =y;z=;q=\"a\\\"b\"junk;k=v ", 0,
                        WK_MT_STYLE_WHATWG, "text/html;charset=gbk;q=\"a\\\"b\";k=v"));
    CHECK(serializes_to("multipart/form-data; boundary=\"----abc\"", 0, WK_MT_STYLE_SPACE,
                        "multipart/form-data; boundary=----abc"));
    CHECK(serializes_to("a/b;x=\"\"", 0, WK_MT_STYLE_WHATWG, "a/b;x=\"\""));
    CHECK(serializes_to("a/b;x=\"unterminated\\", 0, WK_MT_STYLE_WHATWG,
                        "a/b;x=\"unterminated\\\\\""));
    CHECK(serializes_to("a/b;x=has space ;y=1", 0, WK_MT_STYLE_WHATWG, "a/b;x=\"has space\";y=1"));
}

WK_TEST(test_mediatype_rejects_values_without_a_type_or_subtype_with_offsets)
{
    wk_media_type mt = WK_MT_INIT;
    wk_error err = {0};
    CHECK_STATUS(parse("", 0, &mt, &err), WK_ERR_SYNTAX);
    CHECK_STATUS(parse(" \t\r\n", 0, &mt, &err), WK_ERR_SYNTAX);
    CHECK_STATUS(parse("text", 0, &mt, &err), WK_ERR_SYNTAX);
    CHECK_EQ(err.offset, 4);
    CHECK_STATUS(parse("text/", 0, &mt, &err), WK_ERR_SYNTAX);
    CHECK_EQ(err.offset, 5);
    CHECK_STATUS(parse("te xt/html", 0, &mt, &err), WK_ERR_SYNTAX);
    CHECK_EQ(err.offset, 2);
    CHECK_STATUS(parse("text/html x", 0, &mt, &err), WK_ERR_SYNTAX);
    CHECK_EQ(err.offset, 10);
    CHECK(err.msg != NULL);
    CHECK_EQ(wk_mt_essence(&mt).len, 0);
    CHECK_STATUS(wk_mt_parse(NULL, 3, 0, &mt, &err), WK_ERR_ARG);
    CHECK_STATUS(wk_mt_parse("a/b", 3, 0, NULL, &err), WK_ERR_ARG);
}

WK_TEST(test_mediatype_strict_mode_accepts_rfc9110_media_types)
{
    CHECK(serializes_to("text/html;charset=utf-8", WK_MT_STRICT, 0, "text/html;charset=utf-8"));
    CHECK(
        serializes_to("Text/HTML ; Charset=\"utf-8\"", WK_MT_STRICT, 0, "text/html;charset=utf-8"));
    CHECK(serializes_to("a/b;;x=1; ;y=\"a\\\\b\"", WK_MT_STRICT, 0, "a/b;x=1;y=\"a\\\\b\""));
    CHECK(serializes_to("a/b;", WK_MT_STRICT, 0, "a/b"));
}

WK_TEST(test_mediatype_strict_mode_rejects_every_error_with_its_offset)
{
    static const struct {
        const char *in;
        size_t offset;
    } bad[] = {
        {" text/html", 0},              /* leading whitespace */
        {"text/html ", 10},             /* trailing whitespace */
        {"text/html;charset", 17},      /* no '=' */
        {"text/html;charset=", 18},     /* no value */
        {"text/html;x=\"abc", 16},      /* unterminated quoted string */
        {"text/html;x=\"a\x01\"", 14},  /* control byte in a quoted string */
        {"text/html;x=\"\\\x01\"", 14}, /* bad quoted-pair */
        {"text/html;x=a b", 14},        /* junk after a token value */
        {"text/html;x=1;X=2", 14},      /* duplicate name */
        {"text/html;x=(", 12},          /* not a token */
        {"text/html;x=\"a\"b", 15},     /* junk after a quoted value */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wk_media_type mt = WK_MT_INIT;
        wk_error err = {0};
        CHECK_MSG(parse(bad[i].in, WK_MT_STRICT, &mt, &err) == WK_ERR_SYNTAX, "accepted %s",
                  bad[i].in);
        CHECK_MSG(err.offset == bad[i].offset, "%s: offset %zu, want %zu", bad[i].in, err.offset,
                  bad[i].offset);
        /* WHATWG mode takes most of these */
        (void)parse(bad[i].in, 0, &mt, NULL);
    }
}

WK_TEST(test_mediatype_utf8_mode_allows_latin1_code_points_only)
{
    CHECK(serializes_to("a/b;x=\xc3\xa9", WK_MT_UTF8, 0, "a/b;x=\"\xc3\xa9\""));
    CHECK(serializes_to("a/b;x=\xc4\x80;y=1", WK_MT_UTF8, 0, "a/b;y=1")); /* U+0100 dropped */
    CHECK(serializes_to("a/b;x=\xc3;y=1", WK_MT_UTF8, 0, "a/b;y=1"));     /* truncated UTF-8 */
    CHECK(serializes_to("a/b;x=\xc3;y=1", 0, 0, "a/b;x=\"\xc3\";y=1"));   /* as bytes: fine */
    wk_media_type mt = WK_MT_INIT;
    CHECK_STATUS(parse("a/b;x=\"\xe2\x82\xac\"", WK_MT_UTF8 | WK_MT_STRICT, &mt, NULL),
                 WK_ERR_SYNTAX);
}

WK_TEST(test_mediatype_limits_distinct_parameters_not_duplicates)
{
    char in[1024] = "a/b";
    for (int i = 0; i < WK_MT_MAX_PARAMS; i++) {
        size_t n = strlen(in);
        snprintf(in + n, sizeof in - n, ";p%d=%d", i, i);
    }
    wk_media_type mt = WK_MT_INIT;
    CHECK_OK(parse(in, 0, &mt, NULL));
    CHECK_EQ(mt.nparams, WK_MT_MAX_PARAMS);
    size_t used = strlen(in);
    snprintf(in + used, sizeof in - used, ";p0=dup;P1=dup");
    CHECK_OK(parse(in, 0, &mt, NULL));
    CHECK_OK(parse(in, 0, &mt, NULL));
    wk_error err = {0};
    used = strlen(in);
    snprintf(in + used, sizeof in - used, ";extra=1");
    CHECK_STATUS(parse(in, 0, &mt, &err), WK_ERR_LIMIT);
    CHECK_EQ(err.offset, strlen(in) - 7);
    CHECK_STATUS(parse(in, WK_MT_STRICT, &mt, &err), WK_ERR_SYNTAX); /* dup in strict */
}

WK_TEST(test_mediatype_survives_a_megabyte_of_hostile_parameters)
{
    size_t len = 1 << 20;
    char *in = malloc(len);
    memcpy(in, "a/b", 3);
    for (size_t i = 3; i < len; i++) {
        in[i] = ";x=\"\\"[i % 5];
    }
    wk_media_type mt = WK_MT_INIT;
    for (unsigned flags = 0; flags < 4; flags++) {
        wk_status st = wk_mt_parse(in, len, flags, &mt, NULL);
        CHECK(st == WK_OK || st == WK_ERR_SYNTAX);
    }
    memset(in + 3, ' ', len - 3);
    CHECK_OK(wk_mt_parse(in, len, 0, &mt, NULL));
    CHECK_EQ(mt.nparams, 0);
    free(in);
}

WK_TEST(test_mediatype_render_points_at_precomputed_strings_without_copying)
{
    wk_media_type mt = WK_MT_INIT;
    wk_slice r, r2;
    CHECK_OK(parse("Application/JSON", 0, &mt, NULL));
    CHECK_OK(wk_mt_render(&mt, WK_MT_STYLE_WHATWG, NULL, &r, NULL));
    const wk_mt_known *k = wk_mt_known_get(mt.id);
    CHECK(r.ptr == k->essence);
    CHECK_OK(wk_mt_render(&mt, WK_MT_STYLE_WHATWG, NULL, &r2, NULL));
    CHECK(r2.ptr == r.ptr && r2.len == 16);

    CHECK_OK(parse("application/json;Charset=utf-8", 0, &mt, NULL));
    CHECK_OK(wk_mt_render(&mt, WK_MT_STYLE_SPACE, NULL, &r, NULL));
    CHECK(r.ptr == k->render_utf8[1]);
    CHECK_MEM(r.ptr, r.len, "application/json; charset=utf-8", 31);
    CHECK_OK(wk_mt_render(&mt, WK_MT_STYLE_WHATWG, NULL, &r, NULL));
    CHECK_MEM(r.ptr, r.len, "application/json;charset=utf-8", 30);
}

WK_TEST(test_mediatype_render_of_canonical_input_is_a_view_of_the_input)
{
    const char *in = "  x-app/x-thing; a=1; b=\"two words\"\t";
    wk_media_type mt = WK_MT_INIT;
    wk_slice r;
    CHECK_OK(parse(in, 0, &mt, NULL));
    CHECK_OK(wk_mt_render(&mt, WK_MT_STYLE_SPACE, NULL, &r, NULL));
    CHECK(r.ptr == in + 2);
    CHECK_MEM(r.ptr, r.len, "x-app/x-thing; a=1; b=\"two words\"", 33);
    wk_slice again;
    CHECK_OK(wk_mt_render(&mt, WK_MT_STYLE_SPACE, NULL, &again, NULL)); /* the kept view */
    CHECK(again.ptr == r.ptr && again.len == r.len);
    /* the other style is not the input: built into the caller's buffer, never kept */
    wk_buf scratch;
    wk_buf_init(&scratch, NULL, 0);
    CHECK_STATUS(wk_mt_render(&mt, WK_MT_STYLE_WHATWG, NULL, &r, NULL), WK_ERR_ARG);
    CHECK_OK(wk_mt_render(&mt, WK_MT_STYLE_WHATWG, &scratch, &r, NULL));
    CHECK(r.ptr == (const char *)scratch.data);
    CHECK_MEM(r.ptr, r.len, "x-app/x-thing;a=1;b=\"two words\"", 31);
    CHECK_OK(wk_mt_render(&mt, WK_MT_STYLE_WHATWG, &scratch, &r, NULL)); /* appended again */
    CHECK(r.ptr == (const char *)scratch.data + 31 && scratch.len == 62);
    wk_buf_free(&scratch);
    /* non-canonical inputs are never mistaken for canonical */
    static const char *const not_canon[] = {
        "a/b;x=\"y\"", "A/b",      "a/b;x=1;x=2", "a/b ;x=1", "a/b;x=\"a\\b\"", "a/b;x=\"y",
        "a/b;x=a b",   "a/b;;x=1", "a/b;X=1",     "a/b;x=1;", "a/b;x=\"y\"z"};
    for (size_t i = 0; i < sizeof not_canon / sizeof not_canon[0]; i++) {
        for (unsigned style = 0; style < 2; style++) {
            CHECK_OK(parse(not_canon[i], 0, &mt, NULL));
            wk_buf scratch2;
            wk_buf_init(&scratch2, NULL, 0);
            CHECK_OK(wk_mt_render(&mt, style, &scratch2, &r, NULL));
            wk_buf out;
            wk_buf_init(&out, NULL, 0);
            CHECK_OK(wk_mt_serialize(&mt, style, &out, NULL));
            CHECK_MSG(out.len == r.len && memcmp(out.data, r.ptr, r.len) == 0,
                      "%s style %u: render %.*s", not_canon[i], style, (int)r.len, r.ptr);
            wk_buf_free(&out);
            wk_buf_free(&scratch2);
        }
    }
}

WK_TEST(test_mediatype_render_builds_into_the_callers_buffer_with_its_allocator_and_limit)
{
    char in[400] = "A/b;x=\""; /* upper case: not canonical, so render must build it */
    memset(in + 7, 'v', 300);
    memcpy(in + 307, " \"", 3);
    wk_media_type mt = WK_MT_INIT;
    CHECK_OK(parse(in, 0, &mt, NULL));
    wk_test_alloc ta;
    wk_test_alloc_init(&ta);
    wk_buf scratch;
    wk_buf_init(&scratch, &ta.a, 0);
    wk_slice r;
    CHECK_OK(wk_mt_render(&mt, WK_MT_STYLE_WHATWG, &scratch, &r, NULL));
    CHECK_EQ(r.len, 309);
    CHECK(ta.allocs >= 1 && ta.live_bytes != 0);
    wk_buf_free(&scratch);
    CHECK_EQ(ta.live_bytes, 0);
    /* a buffer that cannot hold the form: its status, nothing appended */
    uint8_t small[64];
    wk_buf fixed;
    wk_buf_init_fixed(&fixed, small, sizeof small);
    CHECK_STATUS(wk_mt_render(&mt, WK_MT_STYLE_WHATWG, &fixed, &r, NULL), WK_ERR_LIMIT);
    CHECK_EQ(fixed.len, 0);
    ta.fail_at = ta.attempts + 1;
    wk_buf_init(&scratch, &ta.a, 0);
    CHECK_STATUS(wk_mt_render(&mt, WK_MT_STYLE_WHATWG, &scratch, &r, NULL), WK_ERR_NOMEM);
    wk_buf_free(&scratch);
    CHECK_EQ(ta.live_bytes, 0);
}

WK_TEST(test_mediatype_is_a_plain_value_safe_to_zero_and_to_copy)
{
    /* any bytes before a parse: nothing is read or freed from them */
    wk_media_type mt;
    memset(&mt, 0xa5, sizeof mt);
    CHECK_OK(parse("Application/X-Foo-Bar;Q=\"v\"", 0, &mt, NULL));
    wk_media_type zero;
    memset(&zero, 0, sizeof zero);
    CHECK_EQ(wk_mt_essence(&zero).len, 0);
    CHECK_EQ(zero.nparams, 0);
    wk_slice r;
    CHECK_STATUS(wk_mt_render(&zero, WK_MT_STYLE_WHATWG, NULL, &r, NULL), WK_ERR_ARG);
    CHECK_STATUS(parse("nope", 0, &zero, NULL), WK_ERR_SYNTAX);
    CHECK_EQ(wk_mt_essence(&zero).len, 0);
    /* a copy holds its own lowercase essence: it outlives changes to the original */
    wk_media_type copy = mt;
    CHECK(wk_mt_essence(&copy).ptr != wk_mt_essence(&mt).ptr);
    CHECK_OK(parse("Other/Thing", 0, &mt, NULL));
    CHECK_MEM(wk_mt_essence(&copy).ptr, wk_mt_essence(&copy).len, "application/x-foo-bar", 21);
    CHECK_MEM(wk_mt_subtype(&copy).ptr, wk_mt_subtype(&copy).len, "x-foo-bar", 9);
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    CHECK_OK(wk_mt_render(&copy, WK_MT_STYLE_WHATWG, &out, &r, NULL));
    CHECK_MEM(r.ptr, r.len, "application/x-foo-bar;q=v", 25);
    wk_buf_free(&out);
    /* a kept render view is of the input or the table, so a copy keeps it valid */
    CHECK_OK(parse("text/html", 0, &mt, NULL));
    CHECK_OK(wk_mt_render(&mt, WK_MT_STYLE_WHATWG, NULL, &r, NULL));
    wk_media_type copy2 = mt;
    memset(&mt, 0, sizeof mt);
    wk_slice r2;
    CHECK_OK(wk_mt_render(&copy2, WK_MT_STYLE_WHATWG, NULL, &r2, NULL));
    CHECK(r2.ptr == r.ptr && r2.len == 9);
}

WK_TEST(test_mediatype_limits_only_an_essence_it_must_copy_to_lower_case)
{
    char in[WK_MT_ESSENCE_MAX + 300];
    memset(in, 'a', sizeof in);
    in[100] = '/';
    wk_media_type mt = WK_MT_INIT;
    wk_error err = {0};
    /* in lower case the essence is a view: any length */
    CHECK_OK(wk_mt_parse(in, sizeof in, 0, &mt, &err));
    CHECK_EQ(wk_mt_essence(&mt).len, sizeof in);
    CHECK(wk_mt_essence(&mt).ptr == in);
    in[0] = 'A'; /* the copy in the struct holds up to WK_MT_ESSENCE_MAX bytes */
    CHECK_OK(wk_mt_parse(in, WK_MT_ESSENCE_MAX, 0, &mt, &err));
    CHECK(wk_mt_essence(&mt).ptr[0] == 'a' && wk_mt_essence(&mt).len == WK_MT_ESSENCE_MAX);
    for (unsigned flags = 0; flags < 2; flags++) {
        CHECK_STATUS(wk_mt_parse(in, WK_MT_ESSENCE_MAX + 1, flags, &mt, &err), WK_ERR_LIMIT);
        CHECK_EQ(err.offset, WK_MT_ESSENCE_MAX);
        CHECK_EQ(wk_mt_essence(&mt).len, 0);
    }
    CHECK_STATUS(wk_mt_build(&mt, in, WK_MT_ESSENCE_MAX + 1, NULL, 0, &err), WK_ERR_LIMIT);
    CHECK_EQ(wk_mt_essence(&mt).len, 0);
}

WK_TEST(test_mediatype_serialize_fails_cleanly_on_a_full_buffer)
{
    wk_media_type mt = WK_MT_INIT;
    CHECK_OK(parse("text/plain;format=flowed", 0, &mt, NULL));
    uint8_t small[10];
    wk_buf out;
    wk_buf_init_fixed(&out, small, sizeof small);
    CHECK_STATUS(wk_mt_serialize(&mt, 0, &out, NULL), WK_ERR_LIMIT);
    CHECK_EQ(out.len, 0);
    CHECK_STATUS(wk_mt_serialize(&mt, 7, &out, NULL), WK_ERR_ARG);
}

WK_TEST(test_mediatype_build_from_parts_validates_and_quotes)
{
    wk_mt_param ps[] = {
        {{"Charset", 7}, {"UTF-8", 5}, 1, 1},
        {{"title", 5}, {"say \"hi\"", 8}, 0, 0},
        {{"empty", 5}, {"", 0}, 0, 0},
    };
    wk_media_type mt = WK_MT_INIT;
    CHECK_OK(wk_mt_build(&mt, "Text/Plain", 10, ps, 3, NULL));
    CHECK(mt.id == wk_mt_known_find("text/plain", 10));
    CHECK_EQ(mt.params[0].escaped, 0);
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    CHECK_OK(wk_mt_serialize(&mt, WK_MT_STYLE_SPACE, &out, NULL));
    const char *want = "text/plain; charset=UTF-8; title=\"say \\\"hi\\\"\"; empty=\"\"";
    CHECK_MEM(out.data, out.len, want, strlen(want));
    wk_buf_free(&out);
    wk_error err = {0};
    CHECK_STATUS(wk_mt_build(&mt, "text", 4, NULL, 0, &err), WK_ERR_SYNTAX);
    CHECK_STATUS(wk_mt_build(&mt, "text/", 5, NULL, 0, &err), WK_ERR_SYNTAX);
    wk_mt_param bad_name[] = {{{"a b", 3}, {"x", 1}, 0, 0}};
    CHECK_STATUS(wk_mt_build(&mt, "a/b", 3, bad_name, 1, &err), WK_ERR_SYNTAX);
    CHECK_EQ(err.offset, 1);
    wk_mt_param bad_val[] = {{{"a", 1}, {"x\ny", 3}, 0, 0}};
    CHECK_STATUS(wk_mt_build(&mt, "a/b", 3, bad_val, 1, &err), WK_ERR_SYNTAX);
    wk_mt_param dup[] = {{{"a", 1}, {"1", 1}, 0, 0}, {{"A", 1}, {"2", 1}, 0, 0}};
    CHECK_STATUS(wk_mt_build(&mt, "a/b", 3, dup, 2, &err), WK_ERR_ARG);
    CHECK_EQ(err.offset, 2);
}

WK_TEST(test_mediatype_param_value_resolves_escapes)
{
    wk_media_type mt = WK_MT_INIT;
    CHECK_OK(parse("a/b;x=\"q\\\"\\\\\\z\"", 0, &mt, NULL));
    const wk_mt_param *p = wk_mt_param_find(&mt, "x", 1);
    CHECK(p != NULL && p->quoted && p->escaped);
    char buf[16];
    size_t n = wk_mt_param_value(p, buf, sizeof buf);
    CHECK_MEM(buf, n, "q\"\\z", 4);
    CHECK_EQ(wk_mt_param_value(p, NULL, 0), 4);
    CHECK_EQ(wk_mt_param_value(p, buf, 2), 4); /* too small: says how much is needed */
}

WK_TEST(test_mediatype_equal_compares_essence_names_and_plain_values)
{
    wk_media_type a = WK_MT_INIT, b = WK_MT_INIT;
    CHECK_OK(parse("Text/Plain;Format=\"flowed\"", 0, &a, NULL));
    CHECK_OK(parse("text/plain; format=flowed", 0, &b, NULL));
    CHECK(wk_mt_equal(&a, &b));
    CHECK_OK(parse("text/plain; format=Flowed", 0, &b, NULL));
    CHECK(!wk_mt_equal(&a, &b));
    CHECK_OK(parse("text/plain", 0, &b, NULL));
    CHECK(!wk_mt_equal(&a, &b));
}

WK_TEST(test_mediatype_known_table_finds_every_essence_in_any_case)
{
    size_t n = wk_mt_known_count();
    CHECK(n > 2000);
    CHECK(wk_mt_known_get(0) == NULL);
    CHECK(wk_mt_known_get((uint16_t)(n + 1)) == NULL);
    for (size_t id = 1; id <= n; id++) {
        const wk_mt_known *k = wk_mt_known_get((uint16_t)id);
        CHECK(k != NULL && strlen(k->essence) == k->essence_len);
        CHECK_EQ(wk_mt_known_find(k->essence, k->essence_len), id);
        char up[256];
        for (size_t i = 0; i < k->essence_len; i++) {
            char c = k->essence[i];
            up[i] = (char)(c >= 'a' && c <= 'z' ? c - 32 : c);
        }
        CHECK_EQ(wk_mt_known_find(up, k->essence_len), id);
        for (size_t e = 0; e < k->nextensions; e++) {
            uint16_t owner = wk_mt_known_find_ext(k->extensions[e], strlen(k->extensions[e]));
            CHECK(owner != 0);
            const wk_mt_known *o = wk_mt_known_get(owner);
            bool listed = false;
            for (size_t j = 0; j < o->nextensions; j++) {
                listed = listed || strcmp(o->extensions[j], k->extensions[e]) == 0;
            }
            CHECK(listed);
        }
    }
    CHECK_EQ(wk_mt_known_find("application/jsonx", 17), 0);
    CHECK_EQ(wk_mt_known_find("", 0), 0);
    CHECK_EQ(wk_mt_known_find_ext("nope-nope", 9), 0);
}

WK_TEST(test_mediatype_known_table_carries_mime_db_facts)
{
    uint16_t id = wk_mt_known_find_ext(".JSON", 5);
    const wk_mt_known *k = wk_mt_known_get(id);
    CHECK(k != NULL);
    CHECK_STR(k->essence, "application/json");
    CHECK_STR(k->charset, "UTF-8");
    CHECK_EQ(k->compressible, 1);
    CHECK_EQ(k->source, 1);
    CHECK_STR(wk_mt_known_get(wk_mt_known_find_ext("html", 4))->essence, "text/html");
    /* mime-types 2.x's rule: equal sources keep the application/ type seen first */
    CHECK_STR(wk_mt_known_get(wk_mt_known_find_ext("mp4", 3))->essence, "application/mp4");
    CHECK_STR(wk_mt_known_get(wk_mt_known_find_ext("png", 3))->essence, "image/png");
    CHECK_STR(wk_mt_known_get(wk_mt_known_find_ext("js", 2))->essence, "text/javascript");
}
