/* Accept values and content negotiation: RFC 9110 section 12.5.1's examples, the choices it
 * leaves open (made as npm negotiator makes them), the parse result, and hostile values
 * (oversized, too many ranges, bad qvalues, NUL bytes) refused with an offset. */
#include <stdlib.h>

#include "wirekit/mediatype.h"
#include "wk_test.h"

static wk_status accept_parse(const char *s, wk_mt_accept *acc, wk_error *err)
{
    return wk_mt_accept_parse(s, strlen(s), 0, acc, err);
}

/* The quality `accept` gives `offer`, or -1 when either does not parse. */
static int quality(const char *accept, const char *offer)
{
    wk_mt_accept acc;
    wk_media_type mt;
    if (accept_parse(accept, &acc, NULL) != WK_OK ||
        wk_mt_parse(offer, strlen(offer), 0, &mt, NULL) != WK_OK) {
        return -1;
    }
    return (int)wk_mt_accept_quality(&acc, &mt);
}

/* The offer `accept` chooses among the NULL-ended `offers`: its index, -1 for none, -2 when
 * something does not parse. */
static int choose(const char *accept, const char *const *offers)
{
    wk_media_type mts[8];
    size_t n = 0;
    for (; offers[n] != NULL; n++) {
        if (wk_mt_parse(offers[n], strlen(offers[n]), 0, &mts[n], NULL) != WK_OK) {
            return -2;
        }
    }
    size_t chosen;
    wk_status st = wk_mt_negotiate_header(accept, strlen(accept), 0, mts, n, &chosen, NULL);
    if (st == WK_ERR_NOT_FOUND) {
        return chosen == WK_MT_NONE ? -1 : -2;
    }
    return st == WK_OK ? (int)chosen : -2;
}

/* Parsing `accept` fails with `want` at byte `off`. */
static bool refused_at(const char *accept, size_t len, wk_status want, size_t off)
{
    wk_mt_accept acc;
    wk_error err = {0};
    wk_status st = wk_mt_accept_parse(accept, len, 0, &acc, &err);
    if (st != want || err.offset != off || acc.nranges != 0) {
        printf("    '%.*s': status %s at %zu (want %s at %zu): %s\n", len > 60 ? 60 : (int)len,
               accept, wk_status_str(st), err.offset, wk_status_str(want), off,
               err.msg != NULL ? err.msg : "");
        return false;
    }
    return true;
}

WK_TEST(test_accept_gives_rfc9110_table5_qualities)
{
    // RFC 9110 section 12.5.1, Table 5, with verified erratum 7138 (text/html;level=3 is
    // matched by text/* alone, so 0.3, not the 0.7 printed).
    const char *a = "text/*;q=0.3, text/plain;q=0.7, text/plain;format=flowed, "
                    "text/plain;format=fixed;q=0.4, */*;q=0.5";
    CHECK_EQ(quality(a, "text/plain;format=flowed"), 1000);
    CHECK_EQ(quality(a, "text/plain"), 700);
    CHECK_EQ(quality(a, "text/html"), 300);
    CHECK_EQ(quality(a, "image/jpeg"), 500);
    CHECK_EQ(quality(a, "text/plain;format=fixed"), 400);
    CHECK_EQ(quality(a, "text/html;level=3"), 300);
}

WK_TEST(test_accept_follows_rfc9110_precedence_example)
{
    // "text/*, text/plain, text/plain;format=flowed, */*": each more specific range takes
    // precedence; weights tell which range decided.
    const char *a = "text/*;q=0.1, text/plain;q=0.2, text/plain;format=flowed;q=0.3, */*;q=0.4";
    CHECK_EQ(quality(a, "text/plain;format=flowed"), 300);
    CHECK_EQ(quality(a, "text/plain;format=fixed"), 200);
    CHECK_EQ(quality(a, "text/plain"), 200);
    CHECK_EQ(quality(a, "text/html"), 100);
    CHECK_EQ(quality(a, "image/png"), 400);
}

WK_TEST(test_accept_chooses_as_rfc9110_examples_describe)
{
    // "audio/*; q=0.2, audio/basic": audio/basic preferred, other audio 80% less.
    const char *audio[] = {"audio/x-wav", "audio/basic", NULL};
    CHECK_EQ(choose("audio/*; q=0.2, audio/basic", audio), 1);
    CHECK_EQ(quality("audio/*; q=0.2, audio/basic", "audio/x-wav"), 200);
    /* "text/plain; q=0.5, text/html, text/x-dvi; q=0.8, text/x-c": text/html and text/x-c
     * equally preferred, then text/x-dvi, then text/plain. */
    const char *a = "text/plain; q=0.5, text/html, text/x-dvi; q=0.8, text/x-c";
    const char *offers[] = {"text/plain", "text/x-dvi", "text/x-c", NULL};
    CHECK_EQ(choose(a, offers), 2);
    const char *no_c[] = {"text/plain", "text/x-dvi", NULL};
    CHECK_EQ(choose(a, no_c), 1);
    CHECK_EQ(quality(a, "text/html"), 1000);
    CHECK_EQ(quality(a, "text/x-c"), 1000);
    CHECK_EQ(quality(a, "image/png"), 0);
}

WK_TEST(test_accept_q0_refuses_even_under_a_wildcard)
{
    const char *json_xml[] = {"application/json", "application/xml", NULL};
    CHECK_EQ(choose("*/*, application/json;q=0", json_xml), 1);
    const char *json[] = {"application/json", NULL};
    CHECK_EQ(choose("*/*, application/json;q=0", json), -1);
    CHECK_EQ(choose("application/*;q=0, */*", json), -1);
    CHECK_EQ(choose("application/json;q=0.000", json), -1);
}

WK_TEST(test_accept_ties_keep_the_servers_order)
{
    const char *ab[] = {"application/json", "application/vnd.msgpack", NULL};
    const char *ba[] = {"application/vnd.msgpack", "application/json", NULL};
    CHECK_EQ(choose("*/*", ab), 0);
    CHECK_EQ(choose("*/*", ba), 0);
    CHECK_EQ(choose("application/*", ba), 0);
    /* negotiator's tie-breaks before the server's order: the more specific match ... */
    CHECK_EQ(choose("*/*, application/json", ba), 1);
    /* ... then the range written first */
    CHECK_EQ(choose("application/json, application/vnd.msgpack", ba), 1);
    /* a higher weight beats both */
    CHECK_EQ(choose("application/json;q=0.5, application/vnd.msgpack", ab), 1);
}

WK_TEST(test_accept_no_header_accepts_anything_and_empty_accepts_nothing)
{
    wk_media_type mt;
    CHECK_OK(wk_mt_parse("text/html", 9, 0, &mt, NULL));
    size_t chosen = 7;
    CHECK_OK(wk_mt_negotiate_header(NULL, 0, 0, &mt, 1, &chosen, NULL));
    CHECK_EQ(chosen, 0);
    wk_error err = {0};
    CHECK_STATUS(wk_mt_negotiate_header("", 0, 0, &mt, 1, &chosen, &err), WK_ERR_NOT_FOUND);
    CHECK(chosen == WK_MT_NONE);
    CHECK_STATUS(wk_mt_negotiate_header(" , ,", 4, 0, &mt, 1, &chosen, NULL), WK_ERR_NOT_FOUND);
    CHECK_STATUS(wk_mt_negotiate_header("*/*", 3, 0, &mt, 0, &chosen, NULL), WK_ERR_ARG);
    CHECK_STATUS(wk_mt_negotiate_header("*/*", 3, 0, &mt, 1, NULL, NULL), WK_ERR_ARG);
    CHECK(wk_mt_negotiate(NULL, &mt, 1) == WK_MT_NONE);
}

WK_TEST(test_accept_parses_ranges_weights_and_parameters_as_views)
{
    const char *in = " Text/HTML ;level=1; Q=0.5 ;ext=\"a,b\" ,, application/*,*/*;q=0.01";
    wk_mt_accept acc;
    CHECK_OK(accept_parse(in, &acc, NULL));
    CHECK_EQ(acc.nranges, 3);
    CHECK_MEM(acc.ranges[0].type.ptr, acc.ranges[0].type.len, "Text", 4);
    CHECK(acc.ranges[0].type.ptr == in + 1);
    CHECK_MEM(acc.ranges[0].subtype.ptr, acc.ranges[0].subtype.len, "HTML", 4);
    CHECK_EQ(acc.ranges[0].q, 500);
    CHECK_EQ(acc.ranges[0].nparams, 1); /* ext, after the weight, is not kept */
    const wk_mt_param *p = &acc.params[acc.ranges[0].first_param];
    CHECK_MEM(p->name.ptr, p->name.len, "level", 5);
    CHECK_MEM(p->value.ptr, p->value.len, "1", 1);
    CHECK_MEM(acc.ranges[1].subtype.ptr, acc.ranges[1].subtype.len, "*", 1);
    CHECK_EQ(acc.ranges[1].q, WK_MT_Q_ONE);
    CHECK_EQ(acc.ranges[1].nparams, 0);
    CHECK_EQ(acc.ranges[2].q, 10);
    CHECK_EQ(quality(in, "text/html;level=1"), 500);
    CHECK_EQ(quality(in, "text/html"), 10);
    CHECK_EQ(quality(in, "application/json"), 1000);
}

WK_TEST(test_accept_matches_parameters_as_negotiator_does)
{
    /* values case-insensitive, "*" any value, "" an absent parameter, escapes resolved */
    CHECK_EQ(quality("text/plain;charset=UTF-8", "text/plain;charset=utf-8"), 1000);
    CHECK_EQ(quality("text/plain;charset=utf-8", "text/plain"), 0);
    CHECK_EQ(quality("text/plain;charset=*", "text/plain"), 1000);
    CHECK_EQ(quality("text/plain;charset=\"\"", "text/plain"), 1000);
    CHECK_EQ(quality("text/plain;charset=\"\"", "text/plain;charset=x"), 0);
    CHECK_EQ(quality("text/plain;a=\"x\\\"y\"", "text/plain;a=\"X\\\"Y\""), 1000);
    CHECK_EQ(quality("text/plain;A=b;q=0.5", "text/plain;c=d;a=B"), 500);
    CHECK_EQ(quality("text/plain;a=b;c=d", "text/plain;a=b"), 0);
}

WK_TEST(test_accept_refuses_bad_qvalues_with_their_offset)
{
    const char *bad[] = {"q=2", "q=1.5", "q=0.1234", "q=-1", "q=abc", "q=\"0.5\"", "q=1.001",
                         "q=.5", "q=0,5x"};
    size_t at[] = {17, 19, 22, 17, 17, 17, 21, 17, 0};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char in[64];
        int n = snprintf(in, sizeof in, "text/html, a/b;%s", bad[i]);
        if (strcmp(bad[i], "q=0,5x") == 0) {
            /* the comma ends the range: "5x" is a range without a '/' */
            CHECK(refused_at(in, (size_t)n, WK_ERR_SYNTAX, 21));
            continue;
        }
        CHECK_MSG(refused_at(in, (size_t)n, WK_ERR_SYNTAX, at[i]), "%s", bad[i]);
    }
    CHECK(refused_at("a/b;q=", 6, WK_ERR_SYNTAX, 6)); /* an empty value: the range grammar */
    CHECK(refused_at("a/b;q=0.5;Q=1", 13, WK_ERR_SYNTAX, 10)); /* a duplicate name */
    wk_mt_accept acc;
    CHECK_OK(accept_parse("a/b;q=0., c/d;q=1.000, e/f;q=0.999, g/h;q=1.", &acc, NULL));
    CHECK_EQ(acc.ranges[0].q, 0);
    CHECK_EQ(acc.ranges[1].q, 1000);
    CHECK_EQ(acc.ranges[2].q, 999);
    CHECK_EQ(acc.ranges[3].q, 1000);
}

WK_TEST(test_accept_refuses_malformed_ranges_with_their_offset)
{
    CHECK(refused_at("text/html,\0application/json", 27, WK_ERR_SYNTAX, 10));
    CHECK(refused_at("text/html\0", 10, WK_ERR_SYNTAX, 9));
    CHECK(refused_at("text/html, */json", 17, WK_ERR_SYNTAX, 13));
    CHECK(refused_at("text/html, html", 15, WK_ERR_SYNTAX, 15));
    CHECK(refused_at("a/b;x=\"1, c/d", 13, WK_ERR_SYNTAX, 13));
    CHECK(refused_at("a/b\r\n, c/d", 10, WK_ERR_SYNTAX, 3));
    wk_mt_accept acc;
    CHECK_OK(accept_parse("a/b;x=\"1,\\\"2\", c/d", &acc, NULL));
    CHECK_EQ(acc.nranges, 2);
}

WK_TEST(test_accept_refuses_oversized_values_at_once)
{
    /* 1 MB of one range, and 10,000 ranges: past WK_MT_ACCEPT_MAX_LEN, refused before any
     * byte is read */
    size_t big = (size_t)1 << 20;
    char *s = malloc(big);
    CHECK(s != NULL);
    memset(s, 'a', big);
    s[0] = 'a';
    s[1] = '/';
    CHECK(refused_at(s, big, WK_ERR_LIMIT, WK_MT_ACCEPT_MAX_LEN));
    size_t n = 0;
    for (int i = 0; i < 10000; i++) {
        memcpy(s + n, "a/b,", 4);
        n += 4;
    }
    CHECK(refused_at(s, n, WK_ERR_LIMIT, WK_MT_ACCEPT_MAX_LEN));
    /* within the length cap, the range cap: the 65th range is refused where it starts */
    CHECK(refused_at(s, 4 * (WK_MT_ACCEPT_MAX_RANGES + 1), WK_ERR_LIMIT,
                     4 * WK_MT_ACCEPT_MAX_RANGES));
    wk_mt_accept acc;
    CHECK_OK(wk_mt_accept_parse(s, 4 * WK_MT_ACCEPT_MAX_RANGES, 0, &acc, NULL));
    CHECK_EQ(acc.nranges, WK_MT_ACCEPT_MAX_RANGES);
    /* the parameter cap across ranges: 5 ranges of 15 parameters */
    n = 0;
    for (int r = 0; r < 5; r++) {
        n += (size_t)snprintf(s + n, 64, "%sa/b", r ? "," : "");
        for (int k = 0; k < 15; k++) {
            n += (size_t)snprintf(s + n, 64, ";p%d=v", k);
        }
    }
    wk_error err = {0};
    CHECK_STATUS(wk_mt_accept_parse(s, n, 0, &acc, &err), WK_ERR_LIMIT);
    CHECK(err.offset > 0 && err.offset < n && s[err.offset] == 'p');
    /* a range keeps the media-type limit of 16 parameters */
    n = 3;
    for (int k = 0; k < 17; k++) {
        n += (size_t)snprintf(s + n, 64, ";p%d=v", k);
    }
    CHECK_STATUS(wk_mt_accept_parse(s, n, 0, &acc, &err), WK_ERR_LIMIT);
    free(s);
}

WK_TEST(test_accept_parse_rejects_null_arguments)
{
    wk_mt_accept acc;
    CHECK_STATUS(wk_mt_accept_parse(NULL, 1, 0, &acc, NULL), WK_ERR_ARG);
    CHECK_STATUS(wk_mt_accept_parse("a/b", 3, 0, NULL, NULL), WK_ERR_ARG);
    CHECK_OK(wk_mt_accept_parse(NULL, 0, 0, &acc, NULL));
    CHECK_EQ(acc.nranges, 0);
}
