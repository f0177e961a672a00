/*
 * The media-type grammars as text-codec grammars, and the scanner held to them:
 * - the differential test: scanner == grammar interpreter on random header-like inputs,
 *   in all four modes, field by field, and for serialization;
 * - the codec properties, for every grammar in the project: parse(print(x)) == x for captures
 *   (random ones that print, and parsed ones), and print(parse(s)) is a fixed point;
 * - serialization is a fixed point: serialize(parse(serialize(parse(s)))) == serialize(parse(s)).
 */
#include <stdlib.h>

#include "mediatype/mt_internal.h"
#include "wk_test.h"

static uint32_t rng = 12345;
static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

/* A random header-like value: usually a type/subtype and parameters, with noise. */
static size_t random_value(char *out, size_t cap)
{
    static const char *const noise[] = {
        "\"", "\\", " ",    "\t",       "\r\n", "(", "\xc3\xa9", "\xff", "a b",  ",", "\x7f",
        ";;", "==", "\"\"", "\xc4\x80", "@",    "/", "=",        ";",    "\xc3", "",
    };
    static const char *const types[] = {"text/html",           "TEXT/Plain", "application/json",
                                        "multipart/form-data", "x/y",        "a/b ",
                                        " image/PNG\t"};
    static const char *const names[] = {"charset", "Charset", "boundary", "q", "x", "", "a b"};
    static const char *const values[] = {"utf-8",          "\"utf-8\"", "\"a\\\"b\"",
                                         "\"a;b\"",        "",          "x y ",
                                         "\"unterminated", "\"\\",      "----WebKit12",
                                         "\"\"",           "\xc3\xa9",  "\"\xc3\xa9\\\xc3\xa9\""};
    char tmp[512];
    size_t n = 0;
#define ADD(s)                                                                                     \
    do {                                                                                           \
        const char *s_ = (s); /* evaluated once: PICK draws a random number */                     \
        size_t l_ = strlen(s_);                                                                    \
        if (n + l_ < sizeof tmp) {                                                                 \
            memcpy(tmp + n, s_, l_);                                                               \
            n += l_;                                                                               \
        }                                                                                          \
    } while (0)
#define PICK(a) a[next() % (sizeof a / sizeof a[0])]
    if (next() % 8 != 0) {
        ADD(PICK(types));
    }
    size_t params = next() % 5;
    for (size_t i = 0; i < params; i++) {
        ADD(next() % 4 == 0 ? "; " : ";");
        ADD(PICK(names));
        if (next() % 8 != 0) {
            ADD("=");
        }
        ADD(PICK(values));
        if (next() % 4 == 0) {
            ADD(PICK(noise));
        }
    }
    if (next() % 3 == 0) {
        /* splice noise into a random place, including a NUL byte now and then */
        size_t at = n == 0 ? 0 : next() % n;
        const char *z = PICK(noise);
        size_t zl = z[0] == '\0' ? 1 : strlen(z);
        if (n + zl < sizeof tmp) {
            memmove(tmp + at + zl, tmp + at, n - at);
            memcpy(tmp + at, z[0] == '\0' ? "\0" : z, zl);
            n += zl;
        }
    }
#undef ADD
#undef PICK
    n = n < cap ? n : cap;
    memcpy(out, tmp, n);
    return n;
}

/* The same lowercase essence, held the same way (the same view, or each a copy in its struct). */
static bool same_essence(const wk_media_type *a, const wk_media_type *b)
{
    wk_slice x = wk_mt_essence(a), y = wk_mt_essence(b);
    return a->type_len == b->type_len && x.len == y.len && memcmp(x.ptr, y.ptr, x.len) == 0 &&
           a->essence_ptr == b->essence_ptr;
}

static bool same(const wk_media_type *a, const wk_media_type *b)
{
    if (a->id != b->id || a->nparams != b->nparams || !same_essence(a, b)) {
        return false;
    }
    for (unsigned k = 0; k < a->nparams; k++) {
        const wk_mt_param *p = &a->params[k], *q = &b->params[k];
        if (p->name.ptr != q->name.ptr || p->name.len != q->name.len ||
            p->value.ptr != q->value.ptr || p->value.len != q->value.len ||
            p->quoted != q->quoted || p->escaped != q->escaped) {
            return false;
        }
    }
    return true;
}

WK_TEST(test_mediatype_scanner_equals_grammar_on_random_inputs)
{
    long compared = 0, accepted = 0;
    for (int iter = 0; iter < 40000; iter++) {
        char in[128];
        size_t len = random_value(in, sizeof in);
        for (unsigned flags = 0; flags < 4; flags++) {
            wk_media_type a = WK_MT_INIT, b = WK_MT_INIT;
            wk_error ea = {0}, eb = {0};
            wk_status sa = wk_mt_parse(in, len, flags, &a, &ea);
            wk_status sb = wk__mt_parse_grammar(in, len, flags, &b, &eb);
            CHECK_MSG(sa == sb, "'%.*s' flags %u: scanner %d, grammar %d", (int)len, in, flags, sa,
                      sb);
            compared++;
            if (sa != WK_OK) {
                continue;
            }
            accepted++;
            CHECK_MSG(same(&a, &b), "'%.*s' flags %u: results differ", (int)len, in, flags);
            wk_buf x, y;
            wk_buf_init(&x, NULL, 0);
            wk_buf_init(&y, NULL, 0);
            CHECK_OK(wk_mt_serialize(&a, WK_MT_STYLE_WHATWG, &x, NULL));
            CHECK_OK(wk__mt_serialize_grammar(&b, flags & WK_MT_UTF8, &y, NULL));
            CHECK_MSG(x.len == y.len && memcmp(x.data, y.data, x.len) == 0,
                      "'%.*s': serialize '%.*s' vs grammar '%.*s'", (int)len, in, (int)x.len,
                      (const char *)x.data, (int)y.len, (const char *)y.data);
            wk_buf_free(&x);
            wk_buf_free(&y);
        }
    }
    printf("  %ld comparisons, %ld accepted\n", compared, accepted);
    CHECK(accepted > 1000);
}

WK_TEST(test_mediatype_serialization_is_a_fixed_point_in_both_styles)
{
    for (int iter = 0; iter < 20000; iter++) {
        char in[128];
        size_t len = random_value(in, sizeof in);
        unsigned flags = next() % 4;
        wk_media_type a = WK_MT_INIT;
        if (wk_mt_parse(in, len, flags, &a, NULL) != WK_OK) {
            continue;
        }
        for (unsigned style = 0; style < 2; style++) {
            wk_buf s1, s2;
            wk_buf_init(&s1, NULL, 0);
            wk_buf_init(&s2, NULL, 0);
            CHECK_OK(wk_mt_serialize(&a, style, &s1, NULL));
            wk_media_type b = WK_MT_INIT;
            /* the serialization is valid even in strict mode */
            CHECK_MSG(wk_mt_parse(s1.data, s1.len, flags | WK_MT_STRICT, &b, NULL) == WK_OK,
                      "'%.*s' not strict-valid", (int)s1.len, (const char *)s1.data);
            CHECK(wk_mt_equal(&a, &b));
            CHECK_OK(wk_mt_serialize(&b, style, &s2, NULL));
            CHECK_MEM(s1.data, s1.len, s2.data, s2.len);
            wk_slice r;
            wk_buf scratch;
            wk_buf_init(&scratch, NULL, 0);
            CHECK_OK(wk_mt_render(&b, style, &scratch, &r, NULL));
            CHECK_MEM(r.ptr, r.len, s1.data, s1.len);
            wk_buf_free(&scratch);
            wk_buf_free(&s1);
            wk_buf_free(&s2);
        }
    }
}

static void lower_slots(wk_text_cap *c, size_t n, char *store)
{
    for (size_t i = 0; i < n; i++) {
        if (c[i].slot == WK_MT_SLOT_TYPE || c[i].slot == WK_MT_SLOT_SUBTYPE ||
            c[i].slot == WK_MT_SLOT_NAME) {
            for (size_t k = 0; k < c[i].len; k++) {
                char ch = c[i].ptr[k];
                store[k] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
            }
            c[i].ptr = store;
            store += c[i].len;
        }
    }
}

static bool caps_equal(const wk_text_cap *a, size_t na, const wk_text_cap *b, size_t nb)
{
    if (na != nb) {
        return false;
    }
    for (size_t i = 0; i < na; i++) {
        if (a[i].slot != b[i].slot || a[i].len != b[i].len ||
            (a[i].len != 0 && memcmp(a[i].ptr, b[i].ptr, a[i].len) != 0)) {
            return false;
        }
    }
    return true;
}

WK_TEST(test_mediatype_grammars_print_parsed_captures_canonically)
{
    for (unsigned flags = 0; flags < 4; flags++) {
        const wk_text_program *p = wk_mt_grammar(flags);
        CHECK(p != NULL);
        long checked = 0;
        for (int iter = 0; iter < 30000; iter++) {
            char in[128], low[128];
            size_t len = random_value(in, sizeof in);
            wk_text_cap x[160], y[160];
            size_t nx, ny;
            if (wk_text_parse(p, in, len, x, 160, &nx, NULL) != WK_OK) {
                continue;
            }
            lower_slots(x, nx, low);
            wk_buf s1, s2;
            wk_buf_init(&s1, NULL, 0);
            wk_buf_init(&s2, NULL, 0);
            CHECK_OK(wk_text_print(p, x, nx, &s1, NULL));
            CHECK_OK(wk_text_parse(p, s1.data, s1.len, y, 160, &ny, NULL));
            CHECK_MSG(caps_equal(x, nx, y, ny), "flags %u: '%.*s' -> '%.*s' changes captures",
                      flags, (int)len, in, (int)s1.len, (const char *)s1.data);
            CHECK_OK(wk_text_print(p, y, ny, &s2, NULL));
            CHECK_MEM(s1.data, s1.len, s2.data, s2.len);
            wk_buf_free(&s1);
            wk_buf_free(&s2);
            checked++;
        }
        printf("  flags %u: %ld inputs parsed and printed\n", flags, checked);
        CHECK(checked > 300);
    }
}

WK_TEST(test_mediatype_grammars_round_trip_random_captures_that_print)
{
    static const char *const texts[] = {"text", "html",  "x",     "",         "a b",
                                        "\"",   "\\",    "q\\\"", "\xc3\xa9", "\xe9",
                                        ";",    "utf-8", "\t",    "(",        "a\\"};
    for (unsigned flags = 0; flags < 4; flags++) {
        const wk_text_program *p = wk_mt_grammar(flags);
        long printed = 0;
        for (int iter = 0; iter < 30000; iter++) {
            wk_text_cap x[8], y[16];
            size_t n = 2 + next() % 6;
            for (size_t i = 0; i < n; i++) {
                uint32_t slot = i < 2 ? (uint32_t)i : (uint32_t)(2 + (i % 2) * (1 + next() % 3));
                if (next() % 8 == 0) {
                    slot = next() % 6;
                }
                const char *t = texts[next() % (sizeof texts / sizeof texts[0])];
                x[i] = (wk_text_cap){slot, t, strlen(t)};
            }
            wk_buf s;
            wk_buf_init(&s, NULL, 0);
            if (wk_text_print(p, x, n, &s, NULL) == WK_OK) {
                size_t ny = 0;
                wk_status st = wk_text_parse(p, s.data, s.len, y, 16, &ny, NULL);
                if (st != WK_OK || !caps_equal(x, n, y, ny)) {
                    for (size_t i = 0; i < n; i++) {
                        printf("    x[%zu] slot %u '%.*s'\n", i, x[i].slot, (int)x[i].len,
                               x[i].ptr);
                    }
                    for (size_t i = 0; i < ny; i++) {
                        printf("    y[%zu] slot %u '%.*s'\n", i, y[i].slot, (int)y[i].len,
                               y[i].ptr);
                    }
                }
                CHECK_OK(st);
                CHECK_MSG(caps_equal(x, n, y, ny), "flags %u: '%.*s' does not parse back", flags,
                          (int)s.len, (const char *)s.data);
                printed++;
            }
            wk_buf_free(&s);
        }
        CHECK(printed > 200);
    }
}

WK_TEST(test_mediatype_grammars_describe_themselves_as_abnf)
{
    for (unsigned flags = 0; flags < 4; flags++) {
        wk_buf out;
        wk_buf_init(&out, NULL, 0);
        CHECK_OK(wk_text_describe(wk_mt_grammar(flags), NULL, &out));
        CHECK(out.len > 200);
        CHECK(memcmp(out.data, "media-type = type \"/\" subtype ", 30) == 0);
        wk_buf_free(&out);
    }
}
