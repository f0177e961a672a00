/* Hostile MessagePack: every decoding path (event reader, check/validate, fused tree decoder,
 * generic tree decoder) must refuse truncated, oversized, too-deep and ill-formed input with
 * the right status and offset, without allocating more than the input justifies. */
#include <stdlib.h>

#include "wirekit/msgpack.h"
#include "wk_test.h"

typedef struct outcome {
    wk_status reader, check, fused, generic;
    size_t reader_off, check_off, fused_off, generic_off;
} outcome;

/* Runs all four paths over `p[0..n)` and records their statuses and offsets. */
static outcome run_all(const uint8_t *p, size_t n, const wk_read_opts *opts,
                       wk_test_alloc *ta)
{
    outcome o;
    wk_error err;
    wk_mp_reader r;
    wk_mp_reader_init(&r, p, n, opts);
    wk_event ev;
    wk_status st;
    do {
        st = wk_mp_reader_next(&r, &ev);
    } while (st == WK_OK);
    wk_mp_reader_error(&r, &err);
    o.reader = st == WK_ERR_EOF ? WK_OK : st;
    o.reader_off = err.offset;
    wk_mp_reader_free(&r);

    o.check = wk_mp_check(p, n, opts, NULL, &err);
    o.check_off = err.offset;

    wk_arena arena;
    wk_arena_init(&arena, ta != NULL ? &ta->a : NULL, 0);
    wk_value *v = NULL;
    o.fused = wk_mp_decode_value(p, n, opts, &arena, &v, NULL, &err);
    o.fused_off = err.offset;
    wk_arena_free(&arena);

    wk_arena_init(&arena, ta != NULL ? &ta->a : NULL, 0);
    wk_mp_reader_init(&r, p, n, opts);
    wk_source src;
    wk_mp_reader_source(&r, &src);
    o.generic = wk_value_decode(&src, NULL, &arena, &v, &err);
    o.generic_off = err.offset;
    wk_mp_reader_free(&r);
    wk_arena_free(&arena);
    return o;
}

#define CHECK_ALL(o, want, off)                                                           \
    do {                                                                                  \
        CHECK_STATUS((o).reader, want);                                                   \
        CHECK_STATUS((o).check, want);                                                    \
        CHECK_STATUS((o).fused, want);                                                    \
        CHECK_STATUS((o).generic, want);                                                  \
        CHECK_EQ((o).reader_off, off);                                                    \
        CHECK_EQ((o).check_off, off);                                                     \
        CHECK_EQ((o).fused_off, off);                                                     \
        CHECK_EQ((o).generic_off, off);                                                   \
    } while (0)

static const char *doc_hex =
    "86 a8757365726e616d65 a4726f6f74 a3616765 d1fc18 a166 cb3ff8000000000000"
    " a178 94 d6ff00000001 c70307616263 c4020102 d7ff0000000400000000"
    " a16d 82 a568656c6c6f dc0002 c3 c2 cd0100 df00000001 c0 ce00010000"
    " a174 d9 05 776f726c64";

WK_TEST(test_msgpack_rejects_document_truncated_at_every_byte)
{
    uint8_t doc[256];
    size_t n = wk_test_hex(doc_hex, doc, sizeof doc);
    CHECK(n != (size_t)-1);
    outcome full = run_all(doc, n, NULL, NULL);
    CHECK_ALL(full, WK_OK, n);
    for (size_t cut = 0; cut < n; cut++) {
        uint8_t *p = malloc(cut + 1); /* exact size so ASan catches over-reads */
        memcpy(p, doc, cut);
        outcome o = run_all(p, cut, NULL, NULL);
        free(p);
        if (cut == 0) {
            /* An empty stream is a clean end for the reader, a truncation for one-shot calls. */
            CHECK_STATUS(o.reader, WK_OK);
            CHECK_STATUS(o.check, WK_ERR_TRUNCATED);
            CHECK_STATUS(o.fused, WK_ERR_TRUNCATED);
            CHECK_STATUS(o.generic, WK_ERR_EOF);
            continue;
        }
        CHECK_MSG(o.reader == WK_ERR_TRUNCATED && o.check == WK_ERR_TRUNCATED &&
                      o.fused == WK_ERR_TRUNCATED && o.generic == WK_ERR_TRUNCATED,
                  "cut at %zu: %d %d %d %d", cut, o.reader, o.check, o.fused, o.generic);
        CHECK_MSG(o.reader_off <= cut && o.reader_off == o.check_off &&
                      o.check_off == o.fused_off && o.fused_off == o.generic_off,
                  "cut at %zu: offsets %zu %zu %zu %zu", cut, o.reader_off, o.check_off,
                  o.fused_off, o.generic_off);
    }
}

WK_TEST(test_msgpack_rejects_array_of_four_billion_without_allocating)
{
    uint8_t doc[] = {0xdd, 0xff, 0xff, 0xff, 0xff};
    wk_test_alloc ta;
    wk_test_alloc_init(&ta);
    outcome o = run_all(doc, sizeof doc, NULL, &ta);
    CHECK_ALL(o, WK_ERR_TRUNCATED, 0);
    /* Each arena takes one first chunk (4 KiB) for the root node at most: no count-sized
     * allocation was attempted. */
    CHECK(ta.peak_bytes <= 8192);
    CHECK_EQ(ta.live_bytes, 0);
}

WK_TEST(test_msgpack_rejects_map_count_beyond_input)
{
    uint8_t doc[] = {0xdf, 0xff, 0xff, 0xff, 0xff};
    wk_test_alloc ta;
    wk_test_alloc_init(&ta);
    outcome o = run_all(doc, sizeof doc, NULL, &ta);
    CHECK_ALL(o, WK_ERR_TRUNCATED, 0);
    CHECK(ta.peak_bytes <= 8192);
    /* A map of 3 pairs needs at least 6 more bytes; 5 are not enough. */
    uint8_t doc2[] = {0x83, 0x01, 0x02, 0x03, 0x04, 0x05};
    outcome o2 = run_all(doc2, sizeof doc2, NULL, NULL);
    CHECK_ALL(o2, WK_ERR_TRUNCATED, 0);
}

WK_TEST(test_msgpack_rejects_str32_length_past_the_end)
{
    uint8_t doc[] = {0x91, 0xdb, 0x7f, 0xff, 0xff, 0xff, 'a', 'b'};
    outcome o = run_all(doc, sizeof doc, NULL, NULL);
    CHECK_ALL(o, WK_ERR_TRUNCATED, 1);
    uint8_t bin[] = {0xc6, 0xff, 0xff, 0xff, 0xff, 0};
    outcome ob = run_all(bin, sizeof bin, NULL, NULL);
    CHECK_ALL(ob, WK_ERR_TRUNCATED, 0);
    uint8_t ext[] = {0xc9, 0xff, 0xff, 0xff, 0xff, 1, 0};
    outcome oe = run_all(ext, sizeof ext, NULL, NULL);
    CHECK_ALL(oe, WK_ERR_TRUNCATED, 0);
}

WK_TEST(test_msgpack_rejects_100000_nested_arrays_at_the_depth_limit)
{
    size_t n = 100000;
    uint8_t *doc = malloc(n + 1);
    memset(doc, 0x91, n);
    doc[n] = 0xc0;
    outcome o = run_all(doc, n + 1, NULL, NULL);
    CHECK_ALL(o, WK_ERR_DEPTH, 512); /* 512 arrays open; the 513th is refused */
    wk_read_opts opts = {.max_depth = 3};
    outcome o3 = run_all(doc, n + 1, &opts, NULL);
    CHECK_ALL(o3, WK_ERR_DEPTH, 3);
    free(doc);
}

WK_TEST(test_msgpack_reads_100000_nested_arrays_when_allowed_without_recursion)
{
    size_t n = 100000;
    uint8_t *doc = malloc(n + 1);
    memset(doc, 0x91, n);
    doc[n] = 0xc0;
    wk_read_opts opts = {.max_depth = 100000};
    outcome o = run_all(doc, n + 1, &opts, NULL);
    CHECK_STATUS(o.reader, WK_OK);
    CHECK_STATUS(o.check, WK_OK);
    /* The generic decoder has its own limit (wk_read_opts, default 512). */
    CHECK_STATUS(o.generic, WK_ERR_DEPTH);
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_value *v = NULL;
    CHECK_OK(wk_mp_decode_value(doc, n + 1, &opts, &arena, &v, NULL, NULL));
    size_t depth = 0;
    while (v->type == WK_VAL_ARRAY) {
        v = &v->u.items[0];
        depth++;
    }
    CHECK_EQ(depth, n);
    /* And the tree encodes back to the same bytes, and equals itself, without recursion. */
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    wk_value *root = NULL;
    CHECK_OK(wk_mp_decode_value(doc, n + 1, &opts, &arena, &root, NULL, NULL));
    CHECK_OK(wk_mp_encode_value(root, &out, NULL));
    CHECK_MEM(out.data, out.len, doc, n + 1);
    CHECK(wk_value_equal(root, root, NULL));
    wk_buf_free(&out);
    wk_arena_free(&arena);
    free(doc);
}

/* 300 levels of maps and arrays in turn (past the 64 frames the fused decoder keeps on the C
 * stack), with a scalar of each kind beside each: the fused tree equals the generic one and
 * encodes back to the same bytes. */
WK_TEST(test_msgpack_decodes_300_nested_levels_with_scalars_beside_them)
{
    wk_buf doc;
    wk_buf_init(&doc, NULL, 0);
    wk_mp_writer w;
    wk_mp_writer_init(&w, &doc);
    for (int i = 0; i < 300; i++) {
        if (i % 2 == 0) {
            wk_mp_writer_begin_map(&w, 2);
            wk_mp_writer_str(&w, "k", 1);
            wk_mp_writer_int(&w, -(int64_t)i * 1000);
            wk_mp_writer_str(&w, "next", 4);
        } else {
            wk_mp_writer_begin_array(&w, 3);
            wk_mp_writer_double(&w, i / 4.0);
            wk_mp_writer_bin(&w, "xyz", (size_t)(i % 4));
        }
    }
    wk_mp_writer_timestamp(&w, 1700000000, 5);
    CHECK_OK(wk_mp_writer_finish(&w, NULL));
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_value *fused = NULL;
    CHECK_OK(wk_mp_decode_value(doc.data, doc.len, NULL, &arena, &fused, NULL, NULL));
    wk_mp_reader r;
    wk_mp_reader_init(&r, doc.data, doc.len, NULL);
    wk_source src;
    wk_mp_reader_source(&r, &src);
    wk_value *generic = NULL;
    CHECK_OK(wk_value_decode(&src, NULL, &arena, &generic, NULL));
    wk_mp_reader_free(&r);
    CHECK(wk_value_equal(fused, generic, NULL));
    size_t depth = 0;
    const wk_value *v = fused;
    while (v->type == WK_VAL_MAP || v->type == WK_VAL_ARRAY) {
        v = v->type == WK_VAL_MAP ? &v->u.pairs[1].val : &v->u.items[2];
        depth++;
    }
    CHECK_EQ(depth, 300);
    CHECK_EQ(v->type, WK_VAL_TIMESTAMP);
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    CHECK_OK(wk_mp_encode_value(fused, &out, NULL));
    CHECK_MEM(out.data, out.len, doc.data, doc.len);
    wk_buf_free(&out);
    wk_arena_free(&arena);
    wk_buf_free(&doc);
}

WK_TEST(test_msgpack_strict_mode_rejects_invalid_utf8)
{
    /* ["ok", "a\xff"] : the bad byte is at offset 6 */
    uint8_t doc[] = {0x92, 0xa2, 'o', 'k', 0xa2, 'a', 0xff};
    outcome lax = run_all(doc, sizeof doc, NULL, NULL);
    CHECK_ALL(lax, WK_OK, sizeof doc);
    wk_read_opts opts = {.flags = WK_READ_STRICT_UTF8};
    outcome o = run_all(doc, sizeof doc, &opts, NULL);
    CHECK_ALL(o, WK_ERR_UTF8, 6);
    /* overlong encoding and a surrogate */
    uint8_t overlong[] = {0xa2, 0xc0, 0x80};
    outcome o2 = run_all(overlong, sizeof overlong, &opts, NULL);
    CHECK_ALL(o2, WK_ERR_UTF8, 1);
    uint8_t surrogate[] = {0xa3, 0xed, 0xa0, 0x80};
    outcome o3 = run_all(surrogate, sizeof surrogate, &opts, NULL);
    CHECK_ALL(o3, WK_ERR_UTF8, 1);
}

WK_TEST(test_msgpack_rejects_c1_everywhere)
{
    uint8_t doc[] = {0x81, 0xa1, 'k', 0xc1};
    outcome o = run_all(doc, sizeof doc, NULL, NULL);
    CHECK_ALL(o, WK_ERR_SYNTAX, 3);
}

WK_TEST(test_msgpack_fused_decode_rejects_trailing_bytes)
{
    uint8_t doc[] = {0x01, 0x02};
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_value *v = NULL;
    wk_error err;
    CHECK_STATUS(wk_mp_decode_value(doc, 2, NULL, &arena, &v, NULL, &err),
                 WK_ERR_TRAILING);
    CHECK_EQ(err.offset, 1);
    size_t used = 0;
    CHECK_OK(wk_mp_decode_value(doc, 2, NULL, &arena, &v, &used, NULL));
    CHECK_EQ(used, 1);
    wk_arena_free(&arena);
}

WK_TEST(test_msgpack_tree_allocation_is_bounded_by_input_size)
{
    /* An array32 of 1000 nils: 1005 bytes of input may make at most ~16 KB of nodes. */
    uint8_t doc[1005];
    doc[0] = 0xdd;
    doc[1] = 0;
    doc[2] = 0;
    doc[3] = 0x03;
    doc[4] = 0xe8;
    memset(doc + 5, 0xc0, 1000);
    wk_test_alloc ta;
    wk_test_alloc_init(&ta);
    wk_arena arena;
    wk_arena_init(&arena, &ta.a, 0);
    wk_value *v = NULL;
    CHECK_OK(wk_mp_decode_value(doc, sizeof doc, NULL, &arena, &v, NULL, NULL));
    CHECK_EQ(v->len, 1000);
    CHECK(ta.peak_bytes <= 16 * sizeof doc + 4096);
    wk_arena_free(&arena);
    /* The arena cap is honoured: a tree that needs more fails with NOMEM. */
    wk_arena_init(&arena, NULL, 2048);
    CHECK_STATUS(wk_mp_decode_value(doc, sizeof doc, NULL, &arena, &v, NULL, NULL),
                 WK_ERR_NOMEM);
    wk_arena_free(&arena);
}
