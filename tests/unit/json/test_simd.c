/*
 * The JSON lexer's instances (src/formats/json/lex_scan.h: the baseline, SSE2 on x86-64, and AVX2)
 * against each other and against byte-at-a-time references: the whitespace run, the plain part of a
 * string, the UTF-8 run and the whole string scan (closing quote, first escape, or error status and
 * position) on random inputs cut at every length into a heap block of exactly that size (ASan sees
 * any read past the end), then the fused parser forced to each instance on random documents,
 * mutated documents and every truncation of them (same status, offset, message and tree). On a
 * machine without AVX2 the AVX2 side is skipped and says so; the baseline side always runs.
 */
#include <stdlib.h>

#include "formats/json/lex.h"
#include "json_test_util.h"
#include "wirekit/value.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static bool have_avx2(void)
{
    wk__json_simd_force(WK__JSON_SIMD_AVX2);
    bool yes = wk__json_simd() == WK__JSON_SIMD_AVX2;
    wk__json_simd_force(0);
    return yes;
}

/* The AVX2 instance, callable from code not compiled for AVX2 (its functions only inline into
 * AVX2 code); called only when have_avx2(). */
#if WK__JSON_HAVE_AVX2
WK__JSON_AVX2_FN static const uint8_t *ws_avx2(const uint8_t *p, const uint8_t *end)
{
    return wk__json_skip_ws_run_avx2(p, end);
}
WK__JSON_AVX2_FN static const uint8_t *plain_avx2(const uint8_t *p, const uint8_t *end)
{
    return wk__json_scan_plain_avx2(p, end);
}
WK__JSON_AVX2_FN static const uint8_t *utf8_avx2(const uint8_t *p, const uint8_t *end)
{
    return wk__json_utf8_run_avx2(p, end);
}
WK__JSON_AVX2_FN static const uint8_t *string_avx2(const uint8_t *p, const uint8_t *end,
                                                   const uint8_t **esc, wk__json_fail *f)
{
    return wk__json_scan_string_avx2(p, end, esc, f);
}
#endif

/* Byte-at-a-time references. */
static const uint8_t *ws_ref(const uint8_t *p, const uint8_t *end)
{
    while (p < end && wk__json_is_ws(*p)) {
        p++;
    }
    return p;
}
static const uint8_t *plain_ref(const uint8_t *p, const uint8_t *end)
{
    while (p < end && *p != '"' && *p != '\\' && *p >= 0x20 && *p < 0x80) {
        p++;
    }
    return p;
}
static const uint8_t *utf8_ref(const uint8_t *p, const uint8_t *end)
{
    do {
        p = wk__json_utf8_one(p, end);
        if (p == NULL) {
            return NULL;
        }
    } while (p < end && *p >= 0x80);
    return p;
}

/* The string scan one byte (or one UTF-8 sequence) at a time: the closing quote, or NULL
 * with the status and position wk__json_scan_string reports. */
static const uint8_t *string_ref(const uint8_t *p, const uint8_t *end, const uint8_t **esc,
                                 wk_status *st, const uint8_t **at)
{
    *esc = NULL;
    while (p < end) {
        if (*p == '"') {
            return p;
        }
        if (*p == '\\') {
            *esc = *esc != NULL ? *esc : p;
            if (end - p < 2) {
                break;
            }
            p += 2;
        } else if (*p < 0x20) {
            *st = WK_ERR_SYNTAX;
            *at = p;
            return NULL;
        } else if (*p >= 0x80) {
            const uint8_t *n = wk__json_utf8_one(p, end);
            if (n == NULL) {
                *st = WK_ERR_UTF8;
                *at = p;
                return NULL;
            }
            p = n;
        } else {
            p++;
        }
    }
    *st = WK_ERR_TRUNCATED;
    *at = end;
    return NULL;
}

/* Pieces the random texts are made of: whitespace, ASCII, the bytes a string scan stops at,
 * valid UTF-8 of every length (long CJK runs above all, so the ten-at-a-time path runs), and
 * invalid sequences (overlongs, surrogates, stray and cut bytes). */
static const char *const pieces[] = {
    " ", "    ", "\n", "\n        ", "\t", "\r\n", "abc", "key", "0123456789", "\"", "\\",
    "\\n", "\\u00e9", "\x01", "\x1f", "\x7f", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
    "\xe3\x81\x82\xe3\x81\x84\xe3\x81\x86\xe3\x81\x88\xe3\x81\x8a", "\xc3\xa9", "\xf0\x9f\x98\x80",
    "\xe0\xa0\x80", "\xed\x9f\xbf", "\xef\xbf\xbf", "\xe0\x9f\xbf", "\xed\xa0\x80", "\xc0\xaf",
    "\xc1\xbf", "\xf5\x80\x80\x80", "\x80", "\xe6\x97", "\xc3", "\xff", "{", "}", "[", "]", ":",
    ","};

/* A random text of about `size` bytes, biased by `mode`: 0 whitespace, 1 string bodies,
 * 2 CJK runs, 3 anything. */
static size_t random_text(uint8_t *out, size_t size, int mode)
{
    const size_t np = sizeof pieces / sizeof pieces[0];
    size_t n = 0;
    while (n + 16 < size) {
        size_t k;
        uint64_t r = rng() % 16;
        if (mode == 0) {
            k = r < 14 ? rng() % 6 : rng() % np;
        } else if (mode == 1) {
            k = r < 12 ? 6 + rng() % 3 : rng() % np;
        } else if (mode == 2) {
            k = r < 13 ? 16 + rng() % 2 : rng() % np;
        } else {
            k = rng() % np;
        }
        size_t l = strlen(pieces[k]);
        memcpy(out + n, pieces[k], l);
        n += l;
    }
    return n;
}

WK_TEST(test_json_simd_scans_agree_with_byte_references_on_every_truncation)
{
    bool avx2 = have_avx2();
    if (!avx2) {
        printf("  (no AVX2 on this machine: the baseline instance only)\n");
    }
    (void)avx2;
    for (int round = 0; round < 1600 && !wk__test_failed(); round++) {
        uint8_t text[128];
        size_t n = random_text(text, sizeof text, round % 4);
        size_t from = (size_t)(rng() % 3); /* also start off the first byte */
        for (size_t len = from + 1; len <= n; len++) {
            uint8_t *buf = malloc(len);
            CHECK(buf != NULL);
            memcpy(buf, text, len);
            const uint8_t *p = buf + from;
            const uint8_t *end = buf + len;
            const uint8_t *ws = ws_ref(p, end);
            const uint8_t *plain = plain_ref(p, end);
            const uint8_t *utf8 = *p >= 0x80 ? utf8_ref(p, end) : NULL;
            CHECK_MSG(*p > ' ' || wk__json_skip_ws_run(p, end) == ws, "ws, round %d len %zu",
                      round, len);
            CHECK_MSG(wk__json_scan_plain(p, end) == plain, "plain, round %d len %zu", round,
                      len);
            CHECK_MSG(*p < 0x80 || wk__json_utf8_run(p, end) == utf8, "utf8, round %d len %zu",
                      round, len);
            const uint8_t *esc1;
            wk__json_fail f1 = {WK_OK, NULL, NULL};
            const uint8_t *s1 = wk__json_scan_string(p, end, &esc1, &f1);
            const uint8_t *esc0;
            wk_status st0 = WK_OK;
            const uint8_t *at0 = NULL;
            const uint8_t *s0 = string_ref(p, end, &esc0, &st0, &at0);
            CHECK_MSG(s1 == s0 && (s0 != NULL ? esc1 == esc0 : f1.st == st0 && f1.at == at0),
                      "string scan against the reference, round %d len %zu: %td vs %td", round,
                      len, s1 != NULL ? s1 - buf : -1, s0 != NULL ? s0 - buf : -1);
#if WK__JSON_HAVE_AVX2
            if (avx2) {
                const uint8_t *esc2 = NULL;
                wk__json_fail f2 = {WK_OK, NULL, NULL};
                CHECK_MSG(*p > ' ' || ws_avx2(p, end) == ws, "ws avx2, round %d len %zu", round,
                          len);
                CHECK_MSG(plain_avx2(p, end) == plain, "plain avx2, round %d len %zu", round, len);
                CHECK_MSG(*p < 0x80 || utf8_avx2(p, end) == utf8, "utf8 avx2, round %d len %zu",
                          round, len);
                const uint8_t *s2 = string_avx2(p, end, &esc2, &f2);
                CHECK_MSG(s1 == s2 && f1.st == f2.st && f1.at == f2.at && f1.msg == f2.msg &&
                              (s1 == NULL || esc1 == esc2),
                          "string scans differ, round %d len %zu: %td vs %td", round, len,
                          s1 != NULL ? s1 - buf : -1, s2 != NULL ? s2 - buf : -1);
            }
#endif
            free(buf);
        }
    }
}

/* The string scans on every sequence of four bytes from a set that holds each UTF-8 edge
 * (ASCII, control and stop bytes, continuation ranges, every lead class and the bytes no
 * sequence has), placed at each offset around a 32-byte step and followed by ASCII or by
 * two-byte text, then a closing quote: the AVX2 scan (the lookup-table UTF-8 check) answers
 * what the byte-at-a-time reference answers. Then every two-byte pair with a non-ASCII first
 * byte the same way. */
static void check_string_scans_on(const uint8_t *body, size_t n, const char *what, size_t at)
{
    uint8_t *buf = malloc(n);
    CHECK(buf != NULL);
    memcpy(buf, body, n);
    const uint8_t *esc0, *esc1;
    wk_status st0 = WK_OK;
    const uint8_t *at0 = NULL;
    const uint8_t *s0 = string_ref(buf, buf + n, &esc0, &st0, &at0);
    wk__json_fail f1 = {WK_OK, NULL, NULL};
    const uint8_t *s1 = wk__json_scan_string(buf, buf + n, &esc1, &f1);
    CHECK_MSG(s1 == s0 && (s0 != NULL ? esc1 == esc0 : f1.st == st0 && f1.at == at0),
              "baseline string scan, %s at %zu", what, at);
#if WK__JSON_HAVE_AVX2
    const uint8_t *esc2 = NULL;
    wk__json_fail f2 = {WK_OK, NULL, NULL};
    const uint8_t *s2 = string_avx2(buf, buf + n, &esc2, &f2);
    CHECK_MSG(s2 == s0 && (s0 != NULL ? esc2 == esc0 : f2.st == st0 && f2.at == at0),
              "AVX2 string scan, %s at %zu: %td (%s at %td) vs %td (%s at %td)", what, at,
              s2 != NULL ? s2 - buf : -1, wk_status_str(f2.st), f2.at != NULL ? f2.at - buf : -1,
              s0 != NULL ? s0 - buf : -1, wk_status_str(st0), at0 != NULL ? at0 - buf : -1);
#endif
    free(buf);
}

WK_TEST(test_json_simd_string_scans_agree_on_every_utf8_edge_sequence_at_every_step_offset)
{
    static const uint8_t edge[] = {0x01, ' ',  'a',  '"',  '\\', 0x7f, 0x80, 0x8f, 0x90, 0x9f,
                                   0xa0, 0xbf, 0xc0, 0xc1, 0xc2,  0xdf, 0xe0, 0xe1, 0xec, 0xed,
                                   0xee, 0xef, 0xf0, 0xf1, 0xf3,  0xf4, 0xf5, 0xff};
    enum { NE = sizeof edge };
    static const size_t offsets[] = {0, 29, 30, 31};
    static const char *const tails[] = {"abcdefghijklmnopqrstuvwxyz0123456789abcd",
                                        "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                                        "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"};
    uint8_t body[128];
    size_t scans = 0;
    for (size_t t = 0; t < 2 && !wk__test_failed(); t++) {
        size_t tl = strlen(tails[t]);
        for (size_t o = 0; o < sizeof offsets / sizeof offsets[0] && !wk__test_failed(); o++) {
            size_t m = offsets[o];
            memset(body, 0xe6, sizeof body);
            for (size_t i = 0; i < m; i += 3) { /* CJK before the sequence, cut to m bytes */
                memcpy(body + i, "\xe6\x97\xa5", 3);
            }
            memset(body + m / 3 * 3, 'x', m % 3); /* (no sequence cut by the offset) */
            for (uint32_t code = 0; code < NE * NE * NE * NE && !wk__test_failed(); code++) {
                uint32_t c = code;
                for (int k = 0; k < 4; k++, c /= NE) {
                    body[m + (size_t)k] = edge[c % NE];
                }
                memcpy(body + m + 4, tails[t], tl);
                body[m + 4 + tl] = '"';
                check_string_scans_on(body, m + 5 + tl, "four edge bytes", m);
                scans++;
            }
        }
    }
    for (uint32_t pair = 0x8000; pair <= 0xffff && !wk__test_failed(); pair++) {
        for (size_t m = 30; m <= 31; m++) {
            memset(body, 'a', m);
            body[m] = (uint8_t)(pair >> 8);
            body[m + 1] = (uint8_t)pair;
            memcpy(body + m + 2, tails[1], strlen(tails[1]));
            body[m + 2 + strlen(tails[1])] = '"';
            check_string_scans_on(body, m + 3 + strlen(tails[1]), "a byte pair", m);
            scans++;
        }
    }
    printf("  %zu string scans compared\n", scans);
}

/* Appends a random JSON value (depth-limited) to out[*n..cap): pretty and compact layouts,
 * strings with CJK, escapes and emoji, numbers with long fractions, literals. */
static void gen_value(char *out, size_t *n, size_t cap, int depth)
{
    static const char *const strs[] = {
        "\"id_str\"", "\"\xe5\x90\x8d\xe5\x89\x8d:\xe5\x89\x8d\xe7\x94\xb0\xe3\x81\x82\xe3\x82\x86"
                      "\xe3\x81\xbf\\n\xe7\xac\xac\xe4\xb8\x80\xe5\x8d\xb0\xe8\xb1\xa1\"",
        "\"<a href=\\\"http://twitter.com\\\" rel=\\\"nofollow\\\">Twitter for iPhone</a>\"",
        "\"\xf0\x9f\x98\x8b\xe2\x9c\xa8\xe2\x9c\xa8\"", "\"\\u3042\\ud83d\\ude00\"", "\"\"",
        "\"a string long enough to take several thirty-two byte steps of the scan\""};
    static const char *const scalars[] = {"true", "false", "null", "0", "-0", "12345678901",
                                          "-65.613616999999977", "43.420273000000009",
                                          "1e-7", "0.000123456789012345", "18446744073709551615"};
    static const char *const ws[] = {"", " ", "\n", "\n    ", "\n                                "
                                                              "      ",
                                     "\t", "\r\n  "};
    if (*n + 200 >= cap) {
        memcpy(out + *n, "1", 1);
        *n += 1;
        return;
    }
    uint64_t r = depth == 0 ? rng() % 2 : rng() % 10; /* the root is a container */
    const char *piece = NULL;
    if (depth < 5 && r < 3) {
        bool object = r == 0;
        out[(*n)++] = object ? '{' : '[';
        size_t items = (size_t)(rng() % (depth == 0 ? 12 : 6));
        for (size_t i = 0; i < items && *n + 200 < cap; i++) {
            if (i > 0) {
                out[(*n)++] = ',';
            }
            const char *w = ws[rng() % (sizeof ws / sizeof ws[0])];
            memcpy(out + *n, w, strlen(w));
            *n += strlen(w);
            if (object) {
                const char *k = strs[rng() % 3];
                memcpy(out + *n, k, strlen(k));
                *n += strlen(k);
                w = rng() % 2 ? ": " : ":";
                memcpy(out + *n, w, strlen(w));
                *n += strlen(w);
            }
            gen_value(out, n, cap, depth + 1);
        }
        out[(*n)++] = object ? '}' : ']';
        return;
    }
    if (r < 6) {
        piece = strs[rng() % (sizeof strs / sizeof strs[0])];
    } else {
        piece = scalars[rng() % (sizeof scalars / sizeof scalars[0])];
    }
    memcpy(out + *n, piece, strlen(piece));
    *n += strlen(piece);
}

/* Parses buf[0..len) with the parser forced to `level`. */
static wk_status parse_at(int level, const uint8_t *buf, size_t len, wk_arena *a, wk_value **v,
                          wk_error *err)
{
    wk__json_simd_force(level);
    wk_status st = wk_json_decode_value(buf, len, NULL, a, v, NULL, err);
    wk__json_simd_force(0);
    return st;
}

/* Validates buf[0..len) with the validator forced to `level`. */
static wk_status validate_at(int level, const uint8_t *buf, size_t len, size_t *used,
                             wk_error *err)
{
    wk__json_simd_force(level);
    wk_status st = wk_json_validate(buf, len, NULL, used, err);
    wk__json_simd_force(0);
    return st;
}

WK_TEST(test_json_simd_parser_and_validator_instances_agree_on_random_documents_and_truncations)
{
    if (!have_avx2()) {
        wk__test_skip("no AVX2 on this machine: one parser instance only");
        return;
    }
    static char doc[4096];
    for (int round = 0; round < 600 && !wk__test_failed(); round++) {
        size_t n = 0;
        gen_value(doc, &n, sizeof doc, 0);
        if (round % 3 == 1) {
            /* mutate a few bytes: errors at random places, bad UTF-8, stray bytes */
            for (int m = 0; m < 3; m++) {
                doc[rng() % n] = (char)(rng() % 256);
            }
        } else if (round % 3 == 2) {
            /* a control byte inside an indentation run (the whitespace classes) */
            for (size_t at = (size_t)(rng() % n); at + 3 < n; at++) {
                if (doc[at] == '\n' && doc[at + 1] == ' ' && doc[at + 2] == ' ') {
                    doc[at + 2] = (char)(rng() % 0x21);
                    break;
                }
            }
        }
        size_t step = n > 600 ? n / 300 : 1;
        for (size_t len = n; len >= 1 && !wk__test_failed(); len = len > step ? len - step : 0) {
            uint8_t *buf = malloc(len);
            CHECK(buf != NULL);
            memcpy(buf, doc, len);
            wk_arena a1, a2;
            wk_arena_init(&a1, NULL, 0);
            wk_arena_init(&a2, NULL, 0);
            wk_value *v1 = NULL, *v2 = NULL;
            wk_error e1 = {WK_OK, 0, NULL}, e2 = {WK_OK, 0, NULL};
            wk_status s1 = parse_at(WK__JSON_SIMD_BASE, buf, len, &a1, &v1, &e1);
            wk_status s2 = parse_at(WK__JSON_SIMD_AVX2, buf, len, &a2, &v2, &e2);
            bool same = s1 == s2 && e1.offset == e2.offset && e1.msg == e2.msg &&
                        (s1 != WK_OK || wk_value_equal(v1, v2, NULL));
            CHECK_MSG(same, "round %d, length %zu of %zu: %s at %zu (%s) vs %s at %zu (%s)", round,
                      len, n, wk_status_str(s1), e1.offset, e1.msg ? e1.msg : "-",
                      wk_status_str(s2), e2.offset, e2.msg ? e2.msg : "-");
            size_t u1 = 0, u2 = 0, used = 0;
            wk_error f1 = {WK_OK, 0, NULL}, f2 = {WK_OK, 0, NULL};
            wk_status w1 = validate_at(WK__JSON_SIMD_BASE, buf, len, &u1, &f1);
            wk_status w2 = validate_at(WK__JSON_SIMD_AVX2, buf, len, &u2, &f2);
            wk__json_simd_force(WK__JSON_SIMD_BASE);
            (void)wk_json_decode_value(buf, len, NULL, &a1, &v1, &used, NULL); /* its length */
            wk__json_simd_force(0);
            same = w1 == w2 && f1.offset == f2.offset && f1.msg == f2.msg && u1 == u2 &&
                   w1 == s1 &&
                   (w1 == WK_OK ? u1 == used
                                : f1.offset == e1.offset && strcmp(f1.msg, e1.msg) == 0);
            CHECK_MSG(same,
                      "validate, round %d, length %zu of %zu: %s at %zu (%s) vs %s at %zu (%s), "
                      "parser %s at %zu (%s)",
                      round, len, n, wk_status_str(w1), f1.offset, f1.msg ? f1.msg : "-",
                      wk_status_str(w2), f2.offset, f2.msg ? f2.msg : "-", wk_status_str(s1),
                      e1.offset, e1.msg ? e1.msg : "-");
            if (len == n && round % 3 == 0) {
                CHECK_MSG(s1 == WK_OK, "round %d: generated document rejected: %s at %zu (%s)",
                          round, wk_status_str(s1), e1.offset, e1.msg ? e1.msg : "-");
            }
            wk_arena_free(&a1);
            wk_arena_free(&a2);
            free(buf);
        }
    }
}

WK_TEST(test_json_simd_environment_forces_the_baseline)
{
    /* The choice is made once per process; force(0) goes back to it. Whatever the machine,
     * the level is one the library has and the machine runs. */
    wk__json_simd_force(0);
    int level = wk__json_simd();
    CHECK(level == WK__JSON_SIMD_BASE || level == WK__JSON_SIMD_AVX2);
    const char *env = getenv("WK_JSON_SIMD");
    if (env != NULL && strcmp(env, "base") == 0) {
        CHECK_EQ(level, WK__JSON_SIMD_BASE);
    } else {
        CHECK_EQ(level, have_avx2() ? WK__JSON_SIMD_AVX2 : WK__JSON_SIMD_BASE);
    }
    wk__json_simd_force(WK__JSON_SIMD_BASE);
    CHECK_EQ(wk__json_simd(), WK__JSON_SIMD_BASE);
    wk__json_simd_force(0);
}
