/*
 * The parser's fast path (mt_fast.c) held to the general scanner (mt_parse.c) and the grammar
 * oracle: random values aimed at the fast path's boundaries — the common shape, and values one
 * byte or one rule away from it (a stray byte, whitespace, an empty part, a duplicate name,
 * capitals, lengths around 8, 16, 32, 48 and 63/64) — must parse to the same fields, including
 * the canonical flags and the input view the render cache relies on, in all four modes.
 */
#include <stdlib.h>

#include "mediatype/mt_internal.h"
#include "wk_test.h"

static uint32_t rng = 987654321u;
static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

/* A run of `n` bytes from the fast alphabet (sometimes with capitals). */
static size_t word(char *out, size_t n, bool caps)
{
    static const char alpha[] = "abcdefghijklmnopqrstuvwxyz0123456789-.+_";
    for (size_t i = 0; i < n; i++) {
        char c = alpha[next() % (sizeof alpha - 1)];
        if (caps && c >= 'a' && c <= 'z' && next() % 3 == 0) {
            c = (char)(c - 32);
        }
        out[i] = c;
    }
    return n;
}

/* A value of the common shape, then (often) one mutation that may take it out of it. */
static size_t fast_value(char *out, size_t cap)
{
    static const char *const essences[] = {"application/json", "text/html", "text/plain",
                                           "image/png",        "TEXT/HTML", "Application/JSON",
                                           "multipart/form-data"};
    static const char *const names[] = {"charset", "boundary", "q", "Charset", "CHARSET", "a"};
    char tmp[160];
    size_t n = 0;
    bool caps = next() % 4 == 0;
    if (next() % 2 == 0) {
        const char *e = essences[next() % (sizeof essences / sizeof essences[0])];
        memcpy(tmp, e, strlen(e));
        n = strlen(e);
    } else {
        n += word(tmp + n, 1 + next() % 12, caps);
        tmp[n++] = '/';
        n += word(tmp + n, 1 + next() % 20, caps);
    }
    size_t params = next() % 5;
    for (size_t k = 0; k < params && n + 40 < sizeof tmp; k++) {
        tmp[n++] = ';';
        if (next() % 2 == 0) {
            tmp[n++] = ' ';
        }
        if (next() % 3 == 0) {
            const char *nm = names[next() % (sizeof names / sizeof names[0])];
            memcpy(tmp + n, nm, strlen(nm));
            n += strlen(nm);
        } else {
            n += word(tmp + n, 1 + next() % 8, caps);
        }
        tmp[n++] = '=';
        n += word(tmp + n, 1 + next() % 24, true);
    }
    switch (next() % 8) {
    case 0:
    case 1: { /* replace one byte with any byte */
        if (n != 0) {
            tmp[next() % n] = (char)(next() & 0xFF);
        }
        break;
    }
    case 2: { /* insert a delimiter or whitespace anywhere */
        static const char ins[] = "; =/\t\"\\,";
        size_t at = next() % (n + 1);
        memmove(tmp + at + 1, tmp + at, n - at);
        tmp[at] = ins[next() % (sizeof ins - 1)];
        n++;
        break;
    }
    case 3: { /* delete one byte */
        if (n != 0) {
            size_t at = next() % n;
            memmove(tmp + at, tmp + at + 1, n - at - 1);
            n--;
        }
        break;
    }
    case 4: /* repeat the first parameter (a duplicate name, maybe in other case) */
        if (params != 0 && n + 20 < sizeof tmp) {
            const char *semi = memchr(tmp, ';', n);
            size_t len = (size_t)(tmp + n - semi);
            len = len > 20 ? 20 : len;
            memcpy(tmp + n, semi, len);
            n += len;
        }
        break;
    default:
        break;
    }
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

/* Every field a parse defines, the same (views compared by address). */
static bool same_all(const wk_media_type *a, const wk_media_type *b)
{
    if (a->id != b->id || a->nparams != b->nparams || a->canonical != b->canonical ||
        !same_essence(a, b) || a->input.ptr != b->input.ptr || a->input.len != b->input.len ||
        a->render_styles != b->render_styles) {
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

static long fast_taken, compared;

static void compare(const char *in, size_t len)
{
    for (unsigned flags = 0; flags < 4; flags++) {
        wk_media_type a = WK_MT_INIT, b = WK_MT_INIT, g = WK_MT_INIT;
        wk_error ea = {0}, eb = {0};
        wk_status sa = wk_mt_parse(in, len, flags, &a, &ea);
        wk_status sb = wk__mt_parse_scan(in, len, flags, &b, &eb);
        wk_status sg = wk__mt_parse_grammar(in, len, flags, &g, NULL);
        compared++;
        CHECK_MSG(sa == sb && sa == sg, "'%.*s' flags %u: parse %d, scanner %d, grammar %d",
                  (int)len, in, flags, sa, sb, sg);
        if (sa != WK_OK || sb != WK_OK) {
            CHECK_MSG(ea.offset == eb.offset, "'%.*s': error offsets differ", (int)len, in);
            continue;
        }
        CHECK_MSG(same_all(&a, &b), "'%.*s' flags %u: fast path and scanner differ", (int)len,
                  in, flags);
        CHECK_MSG(a.id == g.id && a.nparams == g.nparams, "'%.*s' flags %u: grammar differs",
                  (int)len, in, flags);
        wk_slice r1, r2;
        wk_buf s1, s2;
        wk_buf_init(&s1, NULL, 0);
        wk_buf_init(&s2, NULL, 0);
        CHECK_OK(wk_mt_render(&a, (unsigned)len & 1u, &s1, &r1, NULL));
        CHECK_OK(wk_mt_render(&b, (unsigned)len & 1u, &s2, &r2, NULL));
        CHECK_MEM(r1.ptr, r1.len, r2.ptr, r2.len);
        wk_buf_free(&s1);
        wk_buf_free(&s2);
    }
}

WK_TEST(test_mediatype_fast_path_equals_the_scanner_near_the_common_shape)
{
    for (int iter = 0; iter < 60000; iter++) {
        char in[128];
        size_t len = fast_value(in, sizeof in);
        /* the input lives at the end of a heap block, so a read past it trips ASan */
        char *heap = malloc(len == 0 ? 1 : len);
        CHECK(heap != NULL);
        memcpy(heap, in, len);
        compare(heap, len);
        wk_media_type m = WK_MT_INIT;
        if (len >= 8 && len <= 63 && wk_mt_parse(heap, len, 0, &m, NULL) == WK_OK &&
            m.input.ptr == heap && m.input.len == len) {
            fast_taken++;
        }
        free(heap);
    }
    printf("  %ld comparisons, %ld in the fast path's length range and accepted\n", compared,
           fast_taken);
    CHECK(fast_taken > 10000);
}

WK_TEST(test_mediatype_fast_path_handles_every_length_from_1_to_70)
{
    /* "a/b;c=ddd..." grown one byte at a time, and with the last byte made a space, a ';', a
     * capital or a quote: every length through the 8/16/63 edges of the vector loads. */
    char base[80];
    memcpy(base, "a/b;c=", 6);
    for (size_t i = 6; i < sizeof base; i++) {
        base[i] = (char)('d' + i % 20);
    }
    for (size_t len = 1; len <= 70; len++) {
        static const char last[] = "x; \"X=";
        for (size_t k = 0; k < sizeof last - 1; k++) {
            char *heap = malloc(len);
            CHECK(heap != NULL);
            memcpy(heap, base, len);
            heap[len - 1] = last[k];
            compare(heap, len);
            free(heap);
        }
    }
}

WK_TEST(test_mediatype_fast_path_parses_the_seed_as_a_well_known_view)
{
    static const char seed[] = "application/json; charset=utf-8";
    wk_media_type mt = WK_MT_INIT;
    CHECK_OK(wk_mt_parse(seed, sizeof seed - 1, 0, &mt, NULL));
    CHECK(mt.id == wk_mt_known_find("application/json", 16));
    CHECK(mt.id != 0);
    CHECK(wk_mt_essence(&mt).ptr == wk_mt_known_get(mt.id)->essence);
    CHECK_EQ(mt.nparams, 1);
    CHECK_MEM(mt.params[0].name.ptr, mt.params[0].name.len, "charset", 7);
    CHECK_MEM(mt.params[0].value.ptr, mt.params[0].value.len, "utf-8", 5);
    CHECK_EQ(mt.canonical, WK__MT_CANON_SPACE);
    /* capitals in a value keep it canonical; in a name or the essence they do not */
    CHECK_OK(wk_mt_parse("text/html;charset=UTF-8", 23, 0, &mt, NULL));
    CHECK_EQ(mt.canonical, WK__MT_CANON_SEMI);
    CHECK_OK(wk_mt_parse("text/html;Charset=utf-8", 23, 0, &mt, NULL));
    CHECK_EQ(mt.canonical, 0);
    CHECK_OK(wk_mt_parse("Text/html;charset=utf-8", 23, 0, &mt, NULL));
    CHECK_EQ(mt.canonical, 0);
    CHECK(mt.id == wk_mt_known_find("text/html", 9));
}
