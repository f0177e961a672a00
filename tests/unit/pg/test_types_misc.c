/*
 * The rendered types (rendered.c and the family files, range.c) without a server: binary
 * values built here byte by byte render to the text the PostgreSQL documentation gives for
 * them, text input parses to those same bytes, and hostile input (every truncation, a
 * trailing byte, counts far beyond the bytes present) fails with a status and an offset
 * inside the value, never a crash.
 */
#include <stdlib.h>

#include "pg_test_util.h"
#include "wk_test.h"

typedef struct bin_case {
    wk_pg_oid oid;
    const char *hex; /* binary value */
    const char *text;
} bin_case;

static const bin_case cases[] = {
    {28, "ffffffff", "4294967295"},
    {5069, "ffffffffffffffff", "18446744073709551615"},
    {27, "000000070003", "(7,3)"},
    {2205, "000004eb", "1259"},
    {3220, "00000016b374d848", "16/B374D848"},
    {3220, "0000000000000000", "0/0"},
    {829, "08002b010203", "08:00:2b:01:02:03"},
    {774, "08002b0102030405", "08:00:2b:01:02:03:04:05"},
    {790, "8000000000000000", "-$92,233,720,368,547,758.08"},
    {790, "0000000000000005", "$0.05"},
    {790, "00000000000186a0", "$1,000.00"},
    {600, "3ff8000000000000c000000000000000", "(1.5,-2)"},
    {628, "3ff0000000000000bff00000000000003fe0000000000000", "{1,-1,0.5}"},
    {718, "3ff000000000000040000000000000004008000000000000", "<(1,2),3>"},
    {601, "0000000000000000000000000000000000000000000000003ff0000000000000",
     "[(0,0),(0,1)]"},
    {603, "3ff00000000000003ff000000000000000000000000000000000000000000000",
     "(1,1),(0,0)"},
    {602, "00000000013ff00000000000003ff0000000000000", "[(1,1)]"},
    {604, "000000013ff00000000000003ff0000000000000", "((1,1))"},
    {1560, "0000000180", "1"},
    {1562, "00000009b280", "101100101"},
    {1562, "00000000", ""},
    {5038, "00000002000000000000000a0000000000000014000000000000000a000000000000000e",
     "10:20:10,14"},
    {3614, "0000000261000001c0016227000000", "'a':1A 'b'''"},
    {22, "000000010000000000000015000000020000000000000002ffff000000020003", "-1 3"},
    {30, "00000000000000000000001a", ""},
    {142, "3c612f3e", "<a/>"},
    {4072, "0124", "$"},
    {3904, "0200000004000000010000000400000005", "[1,5)"},
    {3904, "01", "empty"},
    {3904, "18", "(,)"},
    {3906, "0c0000000a0001000000000000000a", "(,10]"},
    {4451, "00000002000000010100000009080000000400000007", "{empty,(,7)}"},
    /* tsquery: PostgreSQL 15's tsquerysend and tsqueryout of the same values */
    {3615, "00000008020202040001010c01780002030201010000636174000100007261740001000066617400",
     "'fat' & ( 'rat' | !'cat' ) <-> 'x':*AB"},
    {3615, "000000010100006100", "'a'"},
    {3615, "0000000202010100006100", "!'a'"},
    {3615, "000000050204000302040001010000630001000062000100006100", "'a' <3> ( 'b' <-> 'c' )"},
    {3615, "000000050204000101000063000204000101000062000100006100", "'a' <-> 'b' <-> 'c'"},
    {3615, "000000050204000102040001010000630001000062000100006100", "'a' <-> ( 'b' <-> 'c' )"},
    {3615, "000000030202010100625c63000100006974277300", "'it''s' & 'b\\\\c':D"},
    {3615, "000000040201020201000062000100006100", "!( 'a' & 'b' )"},
    {3615, "0000000502030202010000630001000062000100006100", "'a' | 'b' & 'c'"},
    {3615, "0000000502020100006300020301000062000100006100", "( 'a' | 'b' ) & 'c'"},
    {3615, "000000010100016100", "'a':*"},
    {3615, "00000003020102010100006100", "!!'a'"},
    {3615, "000000030204000001000062000100006100", "'a' <0> 'b'"},
};

static uint8_t *unhex(const char *h, size_t *n)
{
    *n = strlen(h) / 2;
    uint8_t *p = malloc(*n ? *n : 1);
    for (size_t i = 0; i < *n; i++) {
        unsigned v;
        sscanf(h + 2 * i, "%2x", &v);
        p[i] = (uint8_t)v;
    }
    return p;
}

WK_TEST(test_pg_types_binary_renders_the_documented_text)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n;
        uint8_t *p = unhex(cases[i].hex, &n);
        const char *text;
        wk_error err = {0};
        wk_status st = pgt_to_text(cases[i].oid, WK_PG_BINARY, p, n, &text, &err);
        CHECK_MSG(st == WK_OK, "oid %u %s: %s", cases[i].oid, cases[i].hex, err.msg);
        CHECK_MSG(strcmp(text, cases[i].text) == 0, "oid %u: got '%s', want '%s'",
                  cases[i].oid, text, cases[i].text);
        free(p);
    }
}

WK_TEST(test_pg_types_text_input_parses_to_the_same_bytes)
{
    size_t parsed = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n;
        uint8_t *p = unhex(cases[i].hex, &n);
        const uint8_t *out;
        size_t len;
        wk_error err = {0};
        wk_status st = pgt_from_text(cases[i].oid, WK_PG_BINARY, cases[i].text, &out, &len, &err);
        if (st == WK_ERR_UNSUPPORTED) {
            free(p); /* money and tsvector: sent as text */
            CHECK(cases[i].oid == 790 || cases[i].oid == 3614 ||
                  ((cases[i].oid == 22 || cases[i].oid == 30) && cases[i].text[0] == 0));
            continue;
        }
        CHECK_MSG(st == WK_OK, "oid %u '%s': %s at %zu", cases[i].oid, cases[i].text, err.msg,
                  err.offset);
        CHECK_MSG(len == n && memcmp(out, p, n) == 0, "oid %u '%s': bytes differ",
                  cases[i].oid, cases[i].text);
        free(p);
        parsed++;
    }
    CHECK(parsed >= 25);
}

WK_TEST(test_pg_types_truncations_and_trailing_bytes_fail_with_an_offset)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n;
        uint8_t *p = unhex(cases[i].hex, &n);
        /* text-like types (xml, jsonpath) accept any prefix of valid text: skip them */
        bool textlike = cases[i].oid == 142 || cases[i].oid == 4072;
        for (size_t cut = 0; cut < n && !textlike; cut++) {
            uint8_t *q = malloc(cut ? cut : 1);
            memcpy(q, p, cut);
            const char *text;
            wk_error err = {0};
            wk_status st = pgt_to_text(cases[i].oid, WK_PG_BINARY, q, cut, &text, &err);
            free(q);
            /* a shorter bit string or empty path is the only valid prefix there is: none */
            CHECK_MSG(st != WK_OK, "oid %u: prefix %zu of %s decoded as '%s'", cases[i].oid,
                      cut, cases[i].hex, text);
            CHECK_MSG(err.offset <= cut, "oid %u: offset %zu past %zu", cases[i].oid,
                      err.offset, cut);
        }
        uint8_t *q = malloc(n + 1);
        memcpy(q, p, n);
        q[n] = 0;
        const char *text;
        wk_error err = {0};
        wk_status st = pgt_to_text(cases[i].oid, WK_PG_BINARY, q, n + 1, &text, &err);
        CHECK_MSG(st != WK_OK || textlike, "oid %u: a trailing byte was accepted", cases[i].oid);
        free(q);
        free(p);
    }
}

WK_TEST(test_pg_types_huge_counts_fail_without_reading_or_allocating)
{
    /* counts of 2^31-1 items in a few bytes */
    static const struct {
        wk_pg_oid oid;
        const char *hex;
    } bad[] = {
        {604, "7fffffff00000000"},
        {602, "017fffffff"},
        {5038, "7fffffff0000000000000000000000000000000000"},
        {3614, "7fffffff6100"},
        {1562, "7fffffff00"},
        {4451, "7fffffff00000001"},
        {22, "00000001000000000000001500000fff00000000"},
        {3904, "0200000004000000"},
        {3904, "02ffffffff"},
        {3614, "00000001610000ff"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t n;
        uint8_t *p = unhex(bad[i].hex, &n);
        const char *text;
        wk_error err = {0};
        wk_status st = pgt_to_text(bad[i].oid, WK_PG_BINARY, p, n, &text, &err);
        CHECK_MSG(st != WK_OK, "oid %u %s was accepted", bad[i].oid, bad[i].hex);
        CHECK(err.msg != NULL && err.offset <= n);
        free(p);
    }
}

WK_TEST(test_pg_types_bad_text_input_is_refused)
{
    static const struct {
        wk_pg_oid oid;
        const char *text;
    } bad[] = {
        {28, "-1"},         {28, "4294967296"}, {27, "(1,2"},       {27, "(1,65536)"},
        {3220, "16"},       {3220, "123456789/0"}, {829, "08:00:2b"}, {829, "zz:00:2b:01:02:03"},
        {600, "(1,2,3)"},   {600, "(1,x)"},     {602, "[(1,2),(3)]"}, {1562, "102"},
        {5038, "10:20"},    {5038, "1:2:x"},    {3904, "[1,5"},    {3904, "[1;5)"},
        {3904, "[x,5)"},    {4451, "{[1,2)"},   {4451, "[1,2)"},   {4451, "{[1,2)}x"},
        {22, "1 x"},        {22, "40000"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const uint8_t *out;
        size_t len;
        wk_error err = {0};
        wk_status st = pgt_from_text(bad[i].oid, WK_PG_BINARY, bad[i].text, &out, &len, &err);
        CHECK_MSG(st != WK_OK && st != WK_ERR_UNSUPPORTED, "oid %u '%s' was accepted (%d)",
                  bad[i].oid, bad[i].text, (int)st);
        CHECK(err.offset <= strlen(bad[i].text));
    }
}

WK_TEST(test_pg_types_text_format_passes_through_and_checks_utf8)
{
    const char *text;
    wk_error err = {0};
    CHECK_OK(pgt_to_text(600, WK_PG_TEXT, "(1,2)", 5, &text, &err));
    CHECK(strcmp(text, "(1,2)") == 0);
    CHECK_OK(pgt_to_text(1033, WK_PG_TEXT, "a=r/b", 5, &text, &err));
    CHECK(strcmp(text, "a=r/b") == 0);
    CHECK_STATUS(pgt_to_text(1033, WK_PG_TEXT, "a\xff", 2, &text, &err), WK_ERR_UTF8);
    CHECK_EQ(err.offset, 1);
    /* aclitem has no binary decoder: a result holding one must be read as text */
    CHECK(wk_pg_registry_find_decoder(pgt_reg(), 1033, WK_PG_BINARY, WK_PG_KIND_TEXT) == NULL);
    CHECK(wk_pg_registry_find_decoder(pgt_reg(), 1034, WK_PG_TEXT, WK_PG_KIND_TEXT) != NULL);
}

/* tsquery against hostile bytes and text: every malformed layout fails with a status and an
 * offset inside the value; a tree 200,000 levels deep (a chain of ! or of &) renders and
 * parses without recursion, in time linear in its size. */
WK_TEST(test_pg_tsquery_hostile_and_deep_values)
{
    static const char *const bad_hex[] = {
        "7fffffff0100006100",     /* a count far beyond the bytes */
        "ffffffff",               /* a negative count */
        "000000010300006100",     /* an unknown item type */
        "000000010110006100",     /* a weight bitmap over 15 */
        "000000010100026100",     /* a prefix mark other than 0 or 1 */
        "000000010100006180",     /* a lexeme that is not UTF-8, unterminated */
        "0000000101000061ff00",   /* invalid UTF-8 */
        "000000020209010000610001000062", /* an unknown operator */
        "000000030204400101000061000100006200", /* a phrase distance over 16384 */
        "000000020202010000610001",   /* an operator without its second operand */
        "00000002010000610001000062", /* two values, no operator: items after the tree */
        "000000010202",               /* an operator as the last item */
        "0000000101000061000000",     /* bytes after the tree */
    };
    for (size_t i = 0; i < sizeof bad_hex / sizeof bad_hex[0]; i++) {
        size_t n;
        uint8_t *p = unhex(bad_hex[i], &n);
        const char *text;
        wk_error err = {0};
        wk_status st = pgt_to_text(3615, WK_PG_BINARY, p, n, &text, &err);
        CHECK_MSG(st != WK_OK, "%s decoded as '%s'", bad_hex[i], text);
        CHECK_MSG(err.offset <= n, "%s: offset %zu past %zu", bad_hex[i], err.offset, n);
        free(p);
    }
    static const char *const bad_text[] = {
        "a &", "& a", "(a", "a)", "()", "!", "a <-", "a <x> b", "a <16385> b", "'a", "a b",
        "a:", "'' & b", "a \\",
    };
    for (size_t i = 0; i < sizeof bad_text / sizeof bad_text[0]; i++) {
        const uint8_t *out;
        size_t len;
        wk_error err = {0};
        wk_status st = pgt_from_text(3615, WK_PG_BINARY, bad_text[i], &out, &len, &err);
        CHECK_MSG(st != WK_OK || strcmp(bad_text[i], "a:") == 0, "'%s' parsed", bad_text[i]);
        CHECK_MSG(st == WK_OK || err.offset <= strlen(bad_text[i]), "'%s': offset %zu",
                  bad_text[i], err.offset);
    }
    /* blank text is the empty tsquery, which renders as nothing */
    const uint8_t *out;
    size_t len;
    CHECK_OK(pgt_from_text(3615, WK_PG_BINARY, "  ", &out, &len, NULL));
    CHECK(len == 4 && memcmp(out, "\0\0\0\0", 4) == 0);
    /* deep: 200,000 nots over one lexeme, and a right-leaning chain of 100,000 ands */
    const wk_pg_encoder *enc =
        wk_pg_registry_find_encoder_for(pgt_reg(), 3615, WK_PG_BINARY, WK_PG_KIND_TEXT);
    const wk_pg_decoder *dec =
        wk_pg_registry_find_decoder(pgt_reg(), 3615, WK_PG_BINARY, WK_PG_KIND_TEXT);
    CHECK(enc != NULL && dec != NULL);
    size_t depth = 200000;
    char *deep = malloc(depth * 3 + 8);
    size_t k = 0;
    for (size_t i = 0; i < depth; i++) {
        deep[k++] = '!';
    }
    memcpy(deep + k, "'a'", 4);
    for (int shape = 0; shape < 2; shape++) {
        if (shape == 1) { /* a&(a&(a&...a)...) */
            k = 0;
            for (size_t i = 0; i < depth / 2; i++) {
                memcpy(deep + k, "a&(", 3);
                k += 3;
            }
            deep[k++] = 'a';
            for (size_t i = 0; i < depth / 2; i++) {
                deep[k++] = ')';
            }
            deep[k] = '\0';
        }
        double t0 = wk_test_now_s();
        wk_error err = {0};
        wk_buf bin, txt;
        wk_buf_init(&bin, NULL, 0);
        wk_buf_init(&txt, NULL, 0);
        wk_slice in = {deep, strlen(deep)};
        CHECK_MSG(wk_pg_encode(enc, &in, &bin, &err) == WK_OK, "shape %d: %s at %zu", shape,
                  err.msg, err.offset);
        CHECK_MSG(wk_pg_decode(dec, bin.data, bin.len, &txt, NULL, &err) == WK_OK &&
                      wk_buf_push(&txt, 0) == WK_OK,
                  "shape %d render: %s", shape, err.msg);
        const char *text = (const char *)txt.data;
        size_t tl = txt.len - 1;
        if (shape == 0) {
            CHECK(tl == depth + 3 && text[0] == '!' && strcmp(text + depth, "'a'") == 0);
        } else { /* tsqueryout needs no parentheses there: 'a' & 'a' & ... & 'a' */
            CHECK(tl == (depth / 2 + 1) * 3 + depth / 2 * 3 && strchr(text, '(') == NULL);
            CHECK(strncmp(text, "'a' & 'a' & ", 12) == 0 && strcmp(text + tl - 9, "'a' & 'a'") == 0);
        }
        printf("    shape %d: %zu bytes of binary, %zu of text, %.0f ms both ways\n", shape,
               bin.len, tl, (wk_test_now_s() - t0) * 1000);
        wk_buf_free(&bin);
        wk_buf_free(&txt);
    }
    free(deep);
}
