/* The value tree: builders, equality, the generic decoder/encoder over events, and the
 * MessagePack fused paths, which must give identical trees and bytes. */
#include <stdlib.h>

#include "wirekit/msgpack.h"
#include "wk_test.h"

static const char *doc_hex =
    "87 a8757365726e616d65 a4726f6f74 a3616765 d1fc18 a166 ca3fc00000"
    " a178 95 d6ff00000001 c70307616263 c4020102 d7ff0000000400000000 cb7ff8000000000000"
    " a16e c0 a16d 83 a568656c6c6f dc0002 c3 c2 cd0100 df00000001 c0 ce00010000 01 a3 647570"
    " a16d c0"; /* duplicate key "m" kept */

static wk_status generic_decode(const uint8_t *p, size_t n, wk_arena *a, unsigned flags,
                                wk_value **out)
{
    wk_mp_reader r;
    wk_mp_reader_init(&r, p, n, NULL);
    wk_source src;
    wk_mp_reader_source(&r, &src);
    wk_read_opts vo = {.flags = flags};
    wk_status st = wk_value_decode(&src, &vo, a, out, NULL);
    wk_mp_reader_free(&r);
    return st;
}

/* Same tree, and also the same flags and node bytes where they are defined. */
static bool identical(const wk_value *a, const wk_value *b)
{
    if (!wk_value_equal(a, b, NULL) || a->type != b->type || a->flags != b->flags ||
        a->len != b->len) {
        return false;
    }
    if (a->type == WK_VAL_ARRAY || a->type == WK_VAL_MAP) {
        uint64_t n = a->type == WK_VAL_MAP ? 2 * (uint64_t)a->len : a->len;
        for (uint64_t i = 0; i < n; i++) {
            if (!identical(&a->u.items[i], &b->u.items[i])) {
                return false;
            }
        }
    }
    return true;
}

WK_TEST(test_value_fused_and_generic_decoders_give_identical_trees)
{
    uint8_t doc[256];
    size_t n = wk_test_hex(doc_hex, doc, sizeof doc);
    CHECK(n != (size_t)-1);
    for (unsigned flags = 0; flags <= WK_READ_COPY_STRINGS; flags += WK_READ_COPY_STRINGS) {
        wk_arena arena;
        wk_arena_init(&arena, NULL, 0);
        wk_value *g = NULL;
        wk_value *f = NULL;
        CHECK_OK(generic_decode(doc, n, &arena, flags, &g));
        wk_read_opts vo = {.flags = flags};
        CHECK_OK(wk_mp_decode_value(doc, n, &vo, &arena, &f, NULL, NULL));
        CHECK(identical(g, f));
        CHECK_EQ(f->type, WK_VAL_MAP);
        CHECK_EQ(f->len, 7);
        wk_arena_free(&arena);
    }
}

WK_TEST(test_value_tree_holds_every_type_in_order_with_duplicate_keys)
{
    uint8_t doc[256];
    size_t n = wk_test_hex(doc_hex, doc, sizeof doc);
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_value *v = NULL;
    CHECK_OK(wk_mp_decode_value(doc, n, NULL, &arena, &v, NULL, NULL));
    const wk_value *user = wk_value_map_get(v, "username", 8);
    CHECK(user != NULL && user->type == WK_VAL_STR);
    CHECK_MEM(user->u.str, user->len, "root", 4);
    CHECK(user->u.str >= (const char *)doc && user->u.str < (const char *)doc + n); /* view */
    const wk_value *age = wk_value_map_get(v, "age", 3);
    CHECK(age->type == WK_VAL_INT && age->u.i == -1000);
    const wk_value *f = wk_value_map_get(v, "f", 1);
    CHECK(f->type == WK_VAL_FLOAT && f->u.f == 1.5 && (f->flags & WK_VALF_F32) != 0);
    const wk_value *x = wk_value_map_get(v, "x", 1);
    CHECK(x->type == WK_VAL_ARRAY && x->len == 5);
    CHECK(x->u.items[0].type == WK_VAL_TIMESTAMP && x->u.items[0].u.i == 1 &&
          x->u.items[0].len == 0);
    CHECK(x->u.items[1].type == WK_VAL_EXT && x->u.items[1].ext_type == 7 &&
          x->u.items[1].len == 3);
    CHECK(x->u.items[2].type == WK_VAL_BIN && x->u.items[2].len == 2);
    CHECK(x->u.items[3].type == WK_VAL_TIMESTAMP && x->u.items[3].len == 1);
    CHECK(x->u.items[4].type == WK_VAL_FLOAT && x->u.items[4].u.f != x->u.items[4].u.f);
    /* map order and the duplicate key */
    CHECK_EQ(v->u.pairs[5].key.type, WK_VAL_STR);
    CHECK_MEM(v->u.pairs[5].key.u.str, 1, "m", 1);
    CHECK_MEM(v->u.pairs[6].key.u.str, 1, "m", 1);
    CHECK_EQ(v->u.pairs[6].val.type, WK_VAL_NIL);
    CHECK(wk_value_map_get(v, "m", 1) == &v->u.pairs[5].val); /* first wins */
    const wk_value *m = &v->u.pairs[5].val;
    CHECK(m->u.pairs[1].key.type == WK_VAL_UINT && m->u.pairs[1].key.u.u == 256); /* any key */
    CHECK(m->u.pairs[1].val.u.pairs[0].key.type == WK_VAL_NIL);
    CHECK(m->u.pairs[1].val.u.pairs[0].val.u.u == 65536);
    wk_arena_free(&arena);
}

WK_TEST(test_value_copy_strings_makes_tree_independent_of_input)
{
    uint8_t doc[256];
    size_t n = wk_test_hex(doc_hex, doc, sizeof doc);
    uint8_t *copy = malloc(n);
    memcpy(copy, doc, n);
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_value *v = NULL;
    wk_read_opts vo = {.flags = WK_READ_COPY_STRINGS};
    CHECK_OK(wk_mp_decode_value(copy, n, &vo, &arena, &v, NULL, NULL));
    memset(copy, 0, n);
    free(copy);
    const wk_value *user = wk_value_map_get(v, "username", 8);
    CHECK(user != NULL && (user->flags & WK_VALF_COPIED) != 0);
    CHECK_STR(user->u.str, "root"); /* NUL-terminated copy */
    wk_arena_free(&arena);
}

WK_TEST(test_value_encoders_reproduce_input_bytes)
{
    uint8_t doc[256];
    size_t n = wk_test_hex(doc_hex, doc, sizeof doc);
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_value *v = NULL;
    CHECK_OK(wk_mp_decode_value(doc, n, NULL, &arena, &v, NULL, NULL));
    /* The input is in shortest form except dc0002 / df00000001 / cd0100; re-encoding gives
     * the canonical bytes, and the fused and generic encoders agree. */
    wk_buf fused;
    wk_buf_init(&fused, NULL, 0);
    CHECK_OK(wk_mp_encode_value(v, &fused, NULL));
    wk_buf generic;
    wk_buf_init(&generic, NULL, 0);
    wk_mp_writer w;
    wk_mp_writer_init(&w, &generic);
    wk_sink sink;
    wk_mp_writer_sink(&w, &sink);
    CHECK_OK(wk_value_encode(v, NULL, &sink, NULL));
    CHECK_OK(wk_mp_writer_finish(&w, NULL));
    CHECK_MEM(fused.data, fused.len, generic.data, generic.len);
    CHECK_EQ(fused.len, n - 2 - 4); /* dc0002->92, df00000001->81, cd0100 stays */
    wk_value *back = NULL;
    CHECK_OK(wk_mp_decode_value(fused.data, fused.len, NULL, &arena, &back, NULL, NULL));
    CHECK(wk_value_equal(v, back, NULL));
    wk_buf_free(&fused);
    wk_buf_free(&generic);
    wk_arena_free(&arena);
}

WK_TEST(test_value_equal_distinguishes_what_differs)
{
    wk_value a, b;
    wk_value_set_int(&a, 5);
    wk_value_set_uint(&b, 5);
    CHECK(wk_value_equal(&a, &b, NULL));
    CHECK_EQ(a.type, WK_VAL_UINT);
    a.type = WK_VAL_INT; /* an INT holding 5 still equals UINT 5 */
    CHECK(wk_value_equal(&a, &b, NULL));
    wk_value_set_int(&a, -1);
    wk_value_set_uint(&b, UINT64_MAX);
    CHECK(!wk_value_equal(&a, &b, NULL));
    wk_value_set_float(&a, 0.0);
    wk_value_set_float(&b, -0.0);
    CHECK(!wk_value_equal(&a, &b, NULL));
    CHECK_OK(wk_value_set_str(&a, "ab", 2));
    CHECK_OK(wk_value_set_bin(&b, "ab", 2));
    CHECK(!wk_value_equal(&a, &b, NULL));
    CHECK_OK(wk_value_set_ext(&a, 1, "ab", 2));
    CHECK_OK(wk_value_set_ext(&b, 2, "ab", 2));
    CHECK(!wk_value_equal(&a, &b, NULL));
    CHECK_OK(wk_value_set_timestamp(&a, 1, 2));
    CHECK_OK(wk_value_set_timestamp(&b, 1, 3));
    CHECK(!wk_value_equal(&a, &b, NULL));
    CHECK_STATUS(wk_value_set_timestamp(&b, 1, 1000000000u), WK_ERR_RANGE);
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    CHECK_OK(wk_value_set_array(&a, &arena, 2));
    CHECK_OK(wk_value_set_array(&b, &arena, 2));
    CHECK(wk_value_equal(&a, &b, NULL));
    wk_value_set_bool(&b.u.items[1], false);
    CHECK(!wk_value_equal(&a, &b, NULL));
    CHECK(!wk_value_map_get(&a, "x", 1));
    wk_arena_free(&arena);
}

WK_TEST(test_value_builders_make_a_tree_that_encodes_to_the_seed_record)
{
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_value root;
    CHECK_OK(wk_value_set_map(&root, &arena, 5));
    wk_pair *p = root.u.pairs;
    CHECK_OK(wk_value_set_str(&p[0].key, "username", 8));
    CHECK_OK(wk_value_set_str_copy(&p[0].val, &arena, "root", 4));
    CHECK_OK(wk_value_set_str(&p[1].key, "password", 8));
    CHECK_OK(wk_value_set_str(&p[1].val, "secret", 6));
    CHECK_OK(wk_value_set_str(&p[2].key, "age", 3));
    wk_value_set_int(&p[2].val, 20);
    CHECK_OK(wk_value_set_str(&p[3].key, "enabled", 7));
    wk_value_set_bool(&p[3].val, true);
    CHECK_OK(wk_value_set_str(&p[4].key, "metadata", 8));
    CHECK_OK(wk_value_set_map(&p[4].val, &arena, 2));
    wk_pair *m = p[4].val.u.pairs;
    CHECK_OK(wk_value_set_str(&m[0].key, "hello", 5));
    CHECK_OK(wk_value_set_str(&m[0].val, "world", 5));
    CHECK_OK(wk_value_set_str(&m[1].key, "int", 3));
    wk_value_set_int(&m[1].val, 10);
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    CHECK_OK(wk_mp_encode_value(&root, &out, NULL));
    CHECK_EQ(out.len, 72);
    wk_buf_free(&out);
    CHECK_STR(wk_value_type_name(WK_VAL_TIMESTAMP), "timestamp");
    CHECK_STR(wk_value_type_name((wk_value_type)99), "unknown");
    wk_arena_free(&arena);
}

WK_TEST(test_value_generic_decoder_handles_unknown_counts_and_streams)
{
    /* Events with unknown counts, as a JSON reader would give them. */
    uint8_t doc[] = {0x92, 0x81, 0xa1, 'k', 0x90, 0x05, 0x06};
    wk_mp_reader r;
    wk_mp_reader_init(&r, doc, sizeof doc, NULL);
    wk_source src;
    wk_mp_reader_source(&r, &src);
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_value *v = NULL;
    CHECK_OK(wk_value_decode(&src, NULL, &arena, &v, NULL));
    CHECK(v->type == WK_VAL_ARRAY && v->len == 2);
    CHECK_OK(wk_value_decode(&src, NULL, &arena, &v, NULL));
    CHECK(v->type == WK_VAL_UINT && v->u.u == 6);
    wk_error err;
    CHECK_STATUS(wk_value_decode(&src, NULL, &arena, &v, &err), WK_ERR_EOF);
    wk_arena_free(&arena);
}

/* A source that replays a fixed list of events, counts unknown. */
typedef struct replay {
    const wk_event *evs;
    size_t n, i;
} replay;
static wk_status replay_next(void *self, wk_event *ev)
{
    replay *r = self;
    if (r->i == r->n) {
        return WK_ERR_EOF;
    }
    *ev = r->evs[r->i++];
    return WK_OK;
}
static size_t replay_offset(const void *self)
{
    return ((const replay *)self)->i;
}
static wk_status replay_error(const void *self, wk_error *err)
{
    return wk_error_set(err, WK_OK, ((const replay *)self)->i, NULL);
}

WK_TEST(test_value_generic_decoder_rejects_odd_maps_and_stray_ends)
{
    wk_event evs[4];
    memset(evs, 0, sizeof evs);
    evs[0].type = WK_EV_MAP;
    evs[0].v.count = WK_COUNT_UNKNOWN;
    evs[1].type = WK_EV_NIL;
    evs[2].type = WK_EV_END;
    replay rp = {evs, 3, 0};
    wk_source src = {replay_next, replay_offset, replay_error, &rp};
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_value *v = NULL;
    CHECK_STATUS(wk_value_decode(&src, NULL, &arena, &v, NULL), WK_ERR_SYNTAX);
    rp.evs = evs + 2;
    rp.n = 1;
    rp.i = 0;
    CHECK_STATUS(wk_value_decode(&src, NULL, &arena, &v, NULL), WK_ERR_STATE);
    rp.evs = evs;
    rp.n = 2; /* ends inside the map */
    rp.i = 0;
    CHECK_STATUS(wk_value_decode(&src, NULL, &arena, &v, NULL), WK_ERR_TRUNCATED);
    wk_arena_free(&arena);
}
