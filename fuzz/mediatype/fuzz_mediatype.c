/*
 * libFuzzer harness for media types. The first byte picks the mode (WHATWG or strict, bytes or
 * UTF-8); the rest is the value. Checks, for every input:
 * - the fast scanner equals the grammar interpreter (status, and every field as the same view);
 * - serialization equals the grammar printer's;
 * - parse, serialize, reparse is a fixed point (the serialization is strict-valid, equal, and
 *   serializes to itself), in both styles, and render returns the same text.
 * Any disagreement aborts, which libFuzzer reports as a crash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mediatype/mt_internal.h"

static void check_at(bool ok, int line)
{
    if (!ok) {
        fprintf(stderr, "fuzz_mediatype: check at line %d failed\n", line);
        abort();
    }
}
#define check(ok) check_at((ok), __LINE__)

static bool same(const wk_media_type *a, const wk_media_type *b)
{
    wk_slice ea = wk_mt_essence(a), eb = wk_mt_essence(b);
    if (a->id != b->id || a->nparams != b->nparams || a->type_len != b->type_len ||
        ea.len != eb.len || memcmp(ea.ptr, eb.ptr, ea.len) != 0) {
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    unsigned flags = data[0] & 3u;
    data++;
    size--;
    wk_media_type a = WK_MT_INIT, b = WK_MT_INIT;
    wk_status sa = wk_mt_parse(data, size, flags, &a, NULL);
    wk_status sb = wk__mt_parse_grammar(data, size, flags, &b, NULL);
    check(sa == sb);
    if (sa != WK_OK) {
        return 0;
    }
    check(same(&a, &b));
    wk_buf x, y;
    wk_buf_init(&x, NULL, 0);
    wk_buf_init(&y, NULL, 0);
    check(wk_mt_serialize(&a, WK_MT_STYLE_WHATWG, &x, NULL) == WK_OK);
    check(wk__mt_serialize_grammar(&b, flags & WK_MT_UTF8, &y, NULL) == WK_OK);
    check(x.len == y.len && memcmp(x.data, y.data, x.len) == 0);
    for (unsigned style = 0; style < 2; style++) {
        wk_buf s1, s2;
        wk_buf_init(&s1, NULL, 0);
        wk_buf_init(&s2, NULL, 0);
        check(wk_mt_serialize(&a, style, &s1, NULL) == WK_OK);
        wk_media_type c = WK_MT_INIT;
        check(wk_mt_parse(s1.data, s1.len, (flags & WK_MT_UTF8) | WK_MT_STRICT, &c, NULL) == WK_OK);
        check(wk_mt_equal(&a, &c));
        check(wk_mt_serialize(&c, style, &s2, NULL) == WK_OK);
        check(s1.len == s2.len && memcmp(s1.data, s2.data, s1.len) == 0);
        /* A copy is a plain value: it renders the same, before and after the original. */
        wk_media_type d = a;
        wk_slice r, rd;
        wk_buf scratch;
        wk_buf_init(&scratch, NULL, 0);
        check(wk_mt_render(&a, style, &scratch, &r, NULL) == WK_OK);
        check(r.len == s1.len && memcmp(r.ptr, s1.data, r.len) == 0);
        wk_buf_clear(&scratch);
        check(wk_mt_render(&d, style, &scratch, &rd, NULL) == WK_OK);
        check(rd.len == s1.len && memcmp(rd.ptr, s1.data, rd.len) == 0);
        wk_buf_free(&scratch);
        wk_buf_free(&s1);
        wk_buf_free(&s2);
    }
    wk_buf_free(&x);
    wk_buf_free(&y);
    return 0;
}
