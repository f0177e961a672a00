/*
 * The WHATWG MIME Sniffing vectors (web-platform-tests mime-types.json and
 * generated-mime-types.json, 47 + 881 = 928 cases, as Debian's librust-data-url-dev ships them
 * in /usr/share/cargo/registry/data-url-0.1.0/tests/), run through the fast scanner and the
 * grammar oracle.
 *
 * The vectors are strings of code points. Two mappings to bytes are run:
 * - UTF-8 (WK_MT_UTF8): the input as UTF-8, the expected output compared as UTF-8. All 928.
 * - bytes: every code point is one byte (isomorphic encode, what HTTP headers are, "parse a
 *   MIME type from bytes"). Only vectors whose code points are all <= U+00FF map; 926 of 928.
 */
#include <stdlib.h>

#include "mediatype/mt_internal.h"
#include "mini_json.h"
#include "wk_test.h"

static mj_vector *vec;
static long nvec;

static bool load(void)
{
    if (vec != NULL) {
        return true;
    }
    const char *files[] = {"mime-types.json", "generated-mime-types.json"};
    for (int f = 0; f < 2; f++) {
        size_t len;
        uint8_t *text = wk_test_read_file(wk_test_mime_vectors(files[f]), &len);
        if (text == NULL) {
            return false;
        }
        mj_vector *v;
        long n = mj_read_vectors((const char *)text, len, &v);
        free(text);
        if (n < 0) {
            return false;
        }
        mj_vector *all = realloc(vec, (size_t)(nvec + n) * sizeof *all);
        if (all == NULL) {
            return false;
        }
        vec = all;
        memcpy(vec + nvec, v, (size_t)n * sizeof *v);
        nvec += n;
        free(v);
    }
    return true;
}

typedef wk_status (*parse_fn)(const void *, size_t, unsigned, wk_media_type *, wk_error *);

/* Runs one vector; returns true when the result matches the expectation. */
static bool run_one(parse_fn parse, bool grammar_print, unsigned flags, const char *in,
                    size_t inlen, const char *want, size_t wantlen, char *got, size_t *gotlen)
{
    wk_media_type mt = WK_MT_INIT;
    wk_error err = {0};
    wk_status st = parse(in, inlen, flags, &mt, &err);
    *gotlen = 0;
    if (st != WK_OK) {
        memcpy(got, "<failure>", 10);
        *gotlen = 9;
        return want == NULL && st == WK_ERR_SYNTAX;
    }
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    st = grammar_print ? wk__mt_serialize_grammar(&mt, flags, &out, NULL)
                       : wk_mt_serialize(&mt, WK_MT_STYLE_WHATWG, &out, NULL);
    bool ok =
        st == WK_OK && want != NULL && out.len == wantlen && memcmp(out.data, want, wantlen) == 0;
    size_t n = out.len < 200 ? out.len : 200;
    if (n != 0) {
        memcpy(got, out.data, n);
    }
    *gotlen = n;
    wk_buf_free(&out);
    return ok;
}

static long run_all(parse_fn parse, bool grammar_print, bool bytes, const char *label,
                    long *eligible)
{
    long passed = 0, shown = 0;
    *eligible = 0;
    for (long i = 0; i < nvec; i++) {
        const mj_vector *v = &vec[i];
        char in[4096], want[4096], got[256];
        size_t inlen = v->input_len, wantlen = v->output_len, gotlen;
        const char *inp = v->input, *wantp = v->output;
        if (bytes) {
            if (v->input_len > sizeof in ||
                !mj_utf8_to_latin1(v->input, v->input_len, in, &inlen)) {
                continue;
            }
            inp = in;
            if (wantp != NULL) {
                if (!mj_utf8_to_latin1(v->output, v->output_len, want, &wantlen)) {
                    continue;
                }
                wantp = want;
            }
        }
        (*eligible)++;
        if (run_one(parse, grammar_print, bytes ? 0 : WK_MT_UTF8, inp, inlen, wantp, wantlen, got,
                    &gotlen)) {
            passed++;
        } else if (shown++ < 10) {
            printf("  FAIL %s #%ld: input \"%.*s\" want \"%.*s\" got \"%.*s\"\n", label, i,
                   (int)inlen, inp, wantp ? (int)wantlen : 6, wantp ? wantp : "<null>", (int)gotlen,
                   got);
        }
    }
    printf("mimesniff %s: %ld/%ld cases passed\n", label, passed, *eligible);
    return passed;
}

WK_TEST(test_mimesniff_vector_files_hold_928_cases)
{
    CHECK(load());
    CHECK_EQ(nvec, 928);
}

WK_TEST(test_mimesniff_all_cases_pass_as_utf8_with_the_fast_scanner)
{
    CHECK(load());
    long eligible, passed = run_all(wk_mt_parse, false, false, "UTF-8, fast scanner", &eligible);
    CHECK_EQ(eligible, 928);
    CHECK_EQ(passed, 928);
}

WK_TEST(test_mimesniff_all_cases_pass_as_utf8_with_the_grammar)
{
    CHECK(load());
    long eligible,
        passed = run_all(wk__mt_parse_grammar, true, false, "UTF-8, grammar oracle", &eligible);
    CHECK_EQ(eligible, 928);
    CHECK_EQ(passed, 928);
}

WK_TEST(test_mimesniff_latin1_cases_pass_as_bytes_with_the_fast_scanner)
{
    CHECK(load());
    long eligible, passed = run_all(wk_mt_parse, false, true, "bytes, fast scanner", &eligible);
    CHECK_EQ(eligible, 926);
    CHECK_EQ(passed, 926);
}

WK_TEST(test_mimesniff_latin1_cases_pass_as_bytes_with_the_grammar)
{
    CHECK(load());
    long eligible,
        passed = run_all(wk__mt_parse_grammar, true, true, "bytes, grammar oracle", &eligible);
    CHECK_EQ(eligible, 926);
    CHECK_EQ(passed, 926);
}

/* The two parsers agree on every field (same views of the input), not only on the output. */
WK_TEST(test_mimesniff_fast_scanner_equals_grammar_on_every_vector)
{
    CHECK(load());
    for (long i = 0; i < nvec; i++) {
        for (unsigned flags = 0; flags < 4; flags++) {
            wk_media_type a = WK_MT_INIT, b = WK_MT_INIT;
            wk_status sa = wk_mt_parse(vec[i].input, vec[i].input_len, flags, &a, NULL);
            wk_status sb = wk__mt_parse_grammar(vec[i].input, vec[i].input_len, flags, &b, NULL);
            CHECK_MSG(sa == sb, "vector %ld flags %u: status %d vs %d", i, flags, sa, sb);
            if (sa != WK_OK) {
                continue;
            }
            CHECK_MSG(a.id == b.id && a.nparams == b.nparams && a.type_len == b.type_len &&
                          wk_mt_essence(&a).len == wk_mt_essence(&b).len &&
                          memcmp(wk_mt_essence(&a).ptr, wk_mt_essence(&b).ptr,
                                 wk_mt_essence(&a).len) == 0,
                      "vector %ld flags %u: type differs", i, flags);
            for (unsigned k = 0; k < a.nparams; k++) {
                CHECK_MSG(a.params[k].name.ptr == b.params[k].name.ptr &&
                              a.params[k].name.len == b.params[k].name.len &&
                              a.params[k].value.ptr == b.params[k].value.ptr &&
                              a.params[k].value.len == b.params[k].value.len &&
                              a.params[k].quoted == b.params[k].quoted &&
                              a.params[k].escaped == b.params[k].escaped,
                          "vector %ld flags %u: parameter %u differs", i, flags, k);
            }
        }
    }
}
