/*
 * Schemas over MessagePack: the seed record's exact 72 bytes, the fused encoder and decoder
 * against the generic event paths (same bytes, same errors on every truncation and on every
 * single-byte corruption of the seed; the same bytes and refusals on 3000 random flat
 * records), and round trips of every field kind.
 */
#include <stdlib.h>

#include "seed_user.h"
#include "random_records.h"
#include "test_shapes.h"
#include "wirekit/msgpack.h"
#include "wk_test.h"

static const char seed_hex[] =
    "85 a8 757365726e616d65 a4 726f6f74 a8 70617373776f7264 a6 736563726574 a3 616765 14 "
    "a7 656e61626c6564 c3 a8 6d65746164617461 82 a5 68656c6c6f a5 776f726c64 a3 696e74 0a";

/* The generic path: events from the descriptor into the MessagePack writer's sink. */
static wk_status encode_generic(const wk_schema *s, const void *obj, wk_buf *out)
{
    wk_mp_writer w;
    wk_mp_writer_init(&w, out);
    wk_sink sink;
    wk_mp_writer_sink(&w, &sink);
    wk_status st = wk_schema_encode(s, obj, &sink, NULL);
    wk_status fin = wk_mp_writer_finish(&w, NULL);
    return st != WK_OK ? st : fin;
}

/* The generic path: the MessagePack reader as an event source, then no trailing bytes. */
static wk_status decode_generic(const wk_schema *s, const void *data, size_t len, void *obj,
                                wk_arena *a, wk_schema_error *err)
{
    wk_mp_reader r;
    wk_mp_reader_init(&r, data, len, NULL);
    wk_source src;
    wk_mp_reader_source(&r, &src);
    wk_status st = wk_schema_decode(s, &src, obj, a, NULL, err);
    if (st == WK_OK && wk_mp_reader_offset(&r) != len) {
        st = wk_error_set(&err->base, WK_ERR_TRAILING, wk_mp_reader_offset(&r),
                          "trailing bytes after the value");
    }
    wk_mp_reader_free(&r);
    return st;
}

WK_TEST(test_schema_msgpack_seed_record_is_exactly_72_bytes)
{
    uint8_t want[128];
    size_t want_len = wk_test_hex(seed_hex, want, sizeof want);
    CHECK_EQ(want_len, 72);
    seed_user u;
    wk_pair pairs[2];
    seed_user_fill(&u, pairs);
    wk_buf fused, generic;
    wk_buf_init(&fused, NULL, 0);
    wk_buf_init(&generic, NULL, 0);
    CHECK_OK(wk_schema_encode_mp(&seed_user_schema, &u, &fused, NULL));
    CHECK_OK(encode_generic(&seed_user_schema, &u, &generic));
    CHECK_MEM(fused.data, fused.len, want, want_len);
    CHECK_MEM(generic.data, generic.len, want, want_len);
    CHECK_OK(wk_serializer_msgpack()->encode(&seed_user_schema, &u, &fused, NULL));
    CHECK_EQ(fused.len, 144); /* appends */
    wk_buf_free(&fused);
    wk_buf_free(&generic);
}

WK_TEST(test_schema_msgpack_decodes_the_seed_record_both_ways)
{
    uint8_t bytes[128];
    size_t n = wk_test_hex(seed_hex, bytes, sizeof bytes);
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    seed_user x, y;
    memset(&x, 0, sizeof x);
    memset(&y, 0, sizeof y);
    wk_schema_error e1, e2;
    CHECK_OK(wk_schema_decode_mp(&seed_user_schema, bytes, n, &x, &a, NULL, &e1));
    CHECK_OK(decode_generic(&seed_user_schema, bytes, n, &y, &a, &e2));
    CHECK_STR(x.username, "root");
    CHECK_STR(x.password, "secret");
    CHECK_EQ(x.age, 20);
    CHECK(x.enabled);
    wk_pair pairs[2];
    seed_user want;
    seed_user_fill(&want, pairs);
    CHECK(wk_value_equal(&x.metadata, &want.metadata, NULL));
    CHECK(wk_value_equal(&y.metadata, &want.metadata, NULL));
    CHECK_STR(y.username, "root");
    CHECK((x.metadata.u.pairs[0].key.flags & WK_VALF_COPIED) != 0); /* not in the input */
    wk_arena_free(&a);
}

WK_TEST(test_schema_msgpack_fused_encoder_matches_generic_for_every_kind)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    everything e;
    fill_everything(&e, &a);
    wk_buf fused, generic;
    wk_buf_init(&fused, NULL, 0);
    wk_buf_init(&generic, NULL, 0);
    CHECK_OK(wk_schema_encode_mp(&everything_schema, &e, &fused, NULL));
    CHECK_OK(encode_generic(&everything_schema, &e, &generic));
    CHECK_MEM(fused.data, fused.len, generic.data, generic.len);
    /* Round trip: decode (fused) and encode again gives the same bytes. */
    everything back;
    memset(&back, 0, sizeof back);
    wk_schema_error err;
    wk_status st = wk_schema_decode_mp(&everything_schema, fused.data, fused.len, &back, &a,
                                       NULL, &err);
    CHECK_MSG(st == WK_OK, "%s: %s", err.path, err.base.msg);
    wk_buf again;
    wk_buf_init(&again, NULL, 0);
    CHECK_OK(wk_schema_encode_mp(&everything_schema, &back, &again, NULL));
    CHECK_MEM(again.data, again.len, fused.data, fused.len);
    CHECK_EQ(back.u64, UINT64_MAX);
    CHECK_EQ(back.ts.sec, 1700000000);
    CHECK(back.f32 == 1.5f);
    wk_buf_free(&fused);
    wk_buf_free(&generic);
    wk_buf_free(&again);
    wk_arena_free(&a);
}

WK_TEST(test_schema_msgpack_fused_encoder_matches_generic_on_nullable_and_empty_fields)
{
    everything e;
    memset(&e, 0, sizeof e);
    wk_buf fused, generic;
    wk_buf_init(&fused, NULL, 0);
    wk_buf_init(&generic, NULL, 0);
    CHECK_OK(wk_schema_encode_mp(&everything_schema, &e, &fused, NULL));
    CHECK_OK(encode_generic(&everything_schema, &e, &generic));
    CHECK_MEM(fused.data, fused.len, generic.data, generic.len);
    node kids[2] = {{1, NULL, 0}, {2, NULL, 0}};
    node root = {0, kids, 2};
    wk_buf_clear(&fused);
    wk_buf_clear(&generic);
    CHECK_OK(wk_schema_encode_mp(&node_schema, &root, &fused, NULL));
    CHECK_OK(encode_generic(&node_schema, &root, &generic));
    CHECK_MEM(fused.data, fused.len, generic.data, generic.len);
    wk_buf_free(&fused);
    wk_buf_free(&generic);
}

WK_TEST(test_schema_msgpack_encode_errors_leave_the_buffer_unchanged)
{
    everything e;
    memset(&e, 0, sizeof e);
    e.nnums = 3; /* NULL items with a count */
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    CHECK_OK(wk_buf_append(&out, "xy", 2));
    wk_error err;
    CHECK_STATUS(wk_schema_encode_mp(&everything_schema, &e, &out, &err), WK_ERR_ARG);
    CHECK_STR(err.msg, "schema: NULL array with a count");
    CHECK_EQ(out.len, 2);
    node n = {1, NULL, 1};
    n.kids = &n;
    CHECK_STATUS(wk_schema_encode_mp(&node_schema, &n, &out, &err), WK_ERR_DEPTH);
    CHECK_EQ(out.len, 2);
    uint8_t small[10];
    wk_buf fixed;
    wk_buf_init_fixed(&fixed, small, sizeof small);
    seed_user u;
    wk_pair pairs[2];
    seed_user_fill(&u, pairs);
    CHECK_STATUS(wk_schema_encode_mp(&seed_user_schema, &u, &fixed, &err), WK_ERR_LIMIT);
    wk_buf_free(&out);
}

/* Decodes `data` both ways and checks that they agree on status, offset, message and path
 * (and on the result, by re-encoding it). */
static bool decoders_agree(const wk_schema *s, size_t size, const uint8_t *data, size_t len,
                           char *why, size_t why_cap)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 1 << 20);
    void *x = calloc(1, size), *y = calloc(1, size);
    wk_schema_error e1, e2;
    memset(&e1, 0, sizeof e1);
    memset(&e2, 0, sizeof e2);
    wk_status s1 = wk_schema_decode_mp(s, data, len, x, &a, NULL, &e1);
    wk_status s2 = decode_generic(s, data, len, y, &a, &e2);
    bool ok = s1 == s2;
    if (ok && s1 != WK_OK) {
        ok = e1.base.offset == e2.base.offset && strcmp(e1.path, e2.path) == 0 &&
             (e1.base.msg == e2.base.msg ||
              (e1.base.msg != NULL && e2.base.msg != NULL && strcmp(e1.base.msg, e2.base.msg) == 0));
    }
    if (ok && s1 == WK_OK) {
        wk_buf b1, b2;
        wk_buf_init(&b1, NULL, 0);
        wk_buf_init(&b2, NULL, 0);
        ok = wk_schema_encode_mp(s, x, &b1, NULL) == WK_OK &&
             wk_schema_encode_mp(s, y, &b2, NULL) == WK_OK && b1.len == b2.len &&
             memcmp(b1.data, b2.data, b1.len) == 0;
        wk_buf_free(&b1);
        wk_buf_free(&b2);
    }
    if (!ok) {
        snprintf(why, why_cap, "fused %s '%s' at %zu path '%s' / generic %s '%s' at %zu path '%s'",
                 wk_status_str(s1), e1.base.msg ? e1.base.msg : "", e1.base.offset, e1.path,
                 wk_status_str(s2), e2.base.msg ? e2.base.msg : "", e2.base.offset, e2.path);
    }
    free(x);
    free(y);
    wk_arena_free(&a);
    return ok;
}

WK_TEST(test_schema_msgpack_fused_decoder_matches_generic_on_truncations_and_corruptions)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    everything e;
    fill_everything(&e, &a);
    wk_buf inputs[2];
    wk_buf_init(&inputs[0], NULL, 0);
    wk_buf_init(&inputs[1], NULL, 0);
    seed_user u;
    wk_pair pairs[2];
    seed_user_fill(&u, pairs);
    CHECK_OK(wk_schema_encode_mp(&seed_user_schema, &u, &inputs[0], NULL));
    CHECK_OK(wk_schema_encode_mp(&everything_schema, &e, &inputs[1], NULL));
    const wk_schema *schemas[2] = {&seed_user_schema, &everything_schema};
    size_t sizes[2] = {sizeof(seed_user), sizeof(everything)};
    static const uint8_t flips[] = {0x00, 0x01, 0x7f, 0x80, 0x90, 0xa0, 0xc0, 0xc1, 0xc3,
                                    0xca, 0xcc, 0xd0, 0xd9, 0xdc, 0xde, 0xdf, 0xff};
    size_t cases = 0;
    char why[512];
    for (int k = 0; k < 2; k++) {
        const uint8_t *d = inputs[k].data;
        size_t n = inputs[k].len;
        uint8_t *m = malloc(n + 1);
        for (size_t cut = 0; cut <= n; cut++) {
            memcpy(m, d, cut);
            cases++;
            CHECK_MSG(decoders_agree(schemas[k], sizes[k], m, cut, why, sizeof why),
                      "truncated at %zu: %s", cut, why);
        }
        for (size_t i = 0; i < n; i++) {
            for (size_t f = 0; f < sizeof flips; f++) {
                memcpy(m, d, n);
                m[i] = flips[f];
                cases++;
                CHECK_MSG(decoders_agree(schemas[k], sizes[k], m, n, why, sizeof why),
                          "byte %zu = 0x%02x: %s", i, flips[f], why);
            }
        }
        memcpy(m, d, n);
        m[n] = 0xc0; /* one byte too many */
        CHECK(decoders_agree(schemas[k], sizes[k], m, n + 1, why, sizeof why));
        free(m);
    }
    printf("    %zu hostile inputs: fused and generic decoders agree\n", cases);
    wk_buf_free(&inputs[0]);
    wk_buf_free(&inputs[1]);
    wk_arena_free(&a);
}

WK_TEST(test_schema_msgpack_decode_accepts_wider_integer_encodings)
{
    /* {"age": int16 20} and {"age": uint64 20}: same value, other widths. */
    uint8_t a16[32], a64[32];
    size_t n16 = wk_test_hex("82 a8 757365726e616d65 a1 78 a3 616765 d1 0014", a16, sizeof a16);
    size_t n64 = wk_test_hex("82 a8 757365726e616d65 a1 78 a3 616765 cf 0000000000000014", a64,
                             sizeof a64);
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    seed_user u;
    memset(&u, 0, sizeof u);
    CHECK_OK(wk_schema_decode_mp(&seed_user_schema, a16, n16, &u, &a, NULL, NULL));
    CHECK_EQ(u.age, 20);
    u.age = 0;
    CHECK_OK(wk_schema_decode_mp(&seed_user_schema, a64, n64, &u, &a, NULL, NULL));
    CHECK_EQ(u.age, 20);
    wk_arena_free(&a);
}

WK_TEST(test_schema_msgpack_rejects_trailing_bytes_and_empty_input)
{
    uint8_t bytes[128];
    size_t n = wk_test_hex(seed_hex, bytes, sizeof bytes);
    bytes[n] = 0x01;
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    seed_user u;
    memset(&u, 0, sizeof u);
    wk_schema_error err;
    CHECK_STATUS(wk_schema_decode_mp(&seed_user_schema, bytes, n + 1, &u, &a, NULL, &err),
                 WK_ERR_TRAILING);
    CHECK_EQ(err.base.offset, 72);
    CHECK_STATUS(wk_schema_decode_mp(&seed_user_schema, bytes, 0, &u, &a, NULL, &err),
                 WK_ERR_EOF);
    wk_arena_free(&a);
}

WK_TEST(test_schema_serializer_lookup_by_name)
{
    CHECK(wk_serializer_find("msgpack") == wk_serializer_msgpack());
    CHECK(wk_serializer_find("cbor") == NULL);
    CHECK(wk_serializer_find(NULL) == NULL);
    CHECK_STR(wk_serializer_msgpack()->name, "msgpack");
}

static void check_flat_paths_agree(const flat_all *f, const char *what)
{
    wk_buf fused, generic;
    wk_buf_init(&fused, NULL, 0);
    wk_buf_init(&generic, NULL, 0);
    CHECK_OK(wk_schema_encode_mp(&flat_all_schema, f, &fused, NULL));
    CHECK_OK(encode_generic(&flat_all_schema, f, &generic));
    CHECK_MSG(fused.len == generic.len && memcmp(fused.data, generic.data, fused.len) == 0,
              "%s: fused (%zu bytes) and generic (%zu bytes) differ", what, fused.len,
              generic.len);
    wk_buf_free(&fused);
    wk_buf_free(&generic);
}

WK_TEST(test_schema_msgpack_flat_fast_path_matches_generic_for_every_value)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    static const int64_t ints[] = {0, 1, 127, 128, 255, 256, 65535, 65536, -1, -32, -33, -128,
                                   -129, -32768, -32769, INT64_MIN, INT64_MAX};
    static const char *strs[] = {"", "a", "ab", "abc", "abcd", "abcdefg", "abcdefgh",
                                 "abcdefghijklmno", "abcdefghijklmnop", "abcdefghijklmnopq",
                                 "a string of thirty-two bytes....", ("a string longer than "
                                 "thirty-two bytes, so a str8 header")};
    flat_all f;
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        memset(&f, 0, sizeof f);
        f.b = (i & 1) != 0;
        f.i8 = (int8_t)ints[i];
        f.i16 = (int16_t)ints[i];
        f.i32 = (int32_t)ints[i];
        f.i64 = ints[i];
        f.u8 = (uint8_t)ints[i];
        f.u16 = (uint16_t)ints[i];
        f.u32 = (uint32_t)ints[i];
        f.u64 = (uint64_t)ints[i];
        f.f32 = (float)ints[i] / 3;
        f.f64 = (double)ints[i] / 7;
        f.far = (int32_t)(i % 3);
        const char *s = strs[i % (sizeof strs / sizeof strs[0])];
        f.str = (char *)s;
        f.nstr = (i & 2) != 0 ? NULL : (char *)s;
        size_t sl = strlen(s) < sizeof f.code ? strlen(s) : sizeof f.code - 1;
        memcpy(f.code, s, sl);
        f.bytes.ptr = (i & 4) != 0 ? NULL : s;
        f.bytes.len = f.bytes.ptr != NULL ? strlen(s) : 0;
        f.ts.sec = ints[i] / 1000;
        f.ts.nsec = (uint32_t)(i * 12345);
        /* A value tree: a map with an array, a negative int, a float, nil and a string. */
        wk_value_set_map(&f.any, &a, 3);
        wk_value_set_str(&f.any.u.pairs[0].key, s, strlen(s));
        wk_value_set_array(&f.any.u.pairs[0].val, &a, 3);
        wk_value_set_int(&f.any.u.pairs[0].val.u.items[0], ints[i]);
        wk_value_set_float(&f.any.u.pairs[0].val.u.items[1], (double)i / 3);
        wk_value_set_nil(&f.any.u.pairs[0].val.u.items[2]);
        wk_value_set_str(&f.any.u.pairs[1].key, "k", 1);
        wk_value_set_bool(&f.any.u.pairs[1].val, true);
        wk_value_set_uint(&f.any.u.pairs[2].key, 7);
        wk_value_set_str(&f.any.u.pairs[2].val, s, strlen(s));
        check_flat_paths_agree(&f, s);
        /* Node types the fast path leaves to the general one (float32, binary). */
        f.any.u.pairs[0].val.u.items[1].flags = WK_VALF_F32;
        check_flat_paths_agree(&f, "float32 in the tree");
        wk_value_set_bin(&f.any.u.pairs[2].val, s, strlen(s));
        check_flat_paths_agree(&f, "binary in the tree");
    }
    memset(&f, 0, sizeof f);
    f.str = (char *)"required";
    f.ts.nsec = 1000000000u; /* invalid: both paths must refuse it */
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    CHECK_STATUS(wk_schema_encode_mp(&flat_all_schema, &f, &out, NULL), WK_ERR_ARG);
    CHECK_EQ(out.len, 0);
    wk_buf_free(&out);
    wk_arena_free(&a);
}

/* ---- random flat records: the fused encoder against the generic one ----------------------- */

/* A random flat_all: every kind, NULL strings, empty and non-empty omitempty fields, now and
 * then an invalid timestamp (both encoders must refuse it). */
static void rnd_flat(flat_all *f, wk_arena *a)
{
    size_t n;
    memset(f, 0, sizeof *f);
    f->b = rnd_below(2) != 0;
    f->i8 = (int8_t)rnd_int();
    f->i16 = rnd_below(3) == 0 ? 0 : (int16_t)rnd_int();
    f->i32 = (int32_t)rnd_int();
    f->i64 = rnd_int();
    f->u8 = (uint8_t)rnd_int();
    f->u16 = (uint16_t)rnd_int();
    f->u32 = rnd_below(3) == 0 ? 0 : (uint32_t)rnd_int();
    f->u64 = (uint64_t)rnd_int();
    f->f32 = (float)rnd_int() / 3;
    f->f64 = (double)rnd_int() / 7;
    f->str = rnd_str(a, &n);
    f->nstr = rnd_below(3) == 0 ? NULL : rnd_str(a, &n);
    char *code = rnd_str(a, &n);
    memcpy(f->code, code, n < sizeof f->code ? n : sizeof f->code); /* full: no NUL */
    if (rnd_below(4) != 0) {
        f->bytes.ptr = rnd_str(a, &f->bytes.len);
    }
    if (rnd_below(3) != 0) {
        f->ts.sec = rnd_int();
        f->ts.nsec = rnd_below(40) == 0 ? 1000000000u : (uint32_t)rnd_below(1000000000u);
    }
    rnd_value(&f->any, a, 2);
    f->far = rnd_below(2) == 0 ? 0 : (int32_t)rnd_int();
}

WK_TEST(test_schema_msgpack_fused_encoder_matches_generic_on_random_records)
{
    rnd_seed(0x2545f4914f6cdd1dull);
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    char why[512];
    size_t errors = 0;
    for (int i = 0; i < 3000; i++) {
        wk_arena_reset(&a);
        flat_all f;
        rnd_flat(&f, &a);
        wk_buf fused, generic;
        wk_buf_init(&fused, NULL, 0);
        wk_buf_init(&generic, NULL, 0);
        wk_status s1 = wk_schema_encode_mp(&flat_all_schema, &f, &fused, NULL);
        wk_status s2 = encode_generic(&flat_all_schema, &f, &generic);
        CHECK_MSG(s1 == s2, "record %d: fused %s, generic %s", i, wk_status_str(s1),
                  wk_status_str(s2));
        if (s1 == WK_OK) {
            CHECK_MSG(fused.len == generic.len &&
                          memcmp(fused.data, generic.data, fused.len) == 0,
                      "record %d: fused (%zu bytes) and generic (%zu bytes) differ", i,
                      fused.len, generic.len);
            /* and the bytes decode alike on both paths */
            CHECK_MSG(decoders_agree(&flat_all_schema, sizeof(flat_all), fused.data, fused.len,
                                     why, sizeof why),
                      "record %d: %s", i, why);
        } else {
            CHECK_EQ(fused.len, 0);
            errors++;
        }
        wk_buf_free(&fused);
        wk_buf_free(&generic);
    }
    /* the generator reaches the refusals too (nanoseconds >= 1e9), not only them */
    CHECK_MSG(errors > 10 && errors < 300, "%zu records of 3000 failed to encode", errors);
    printf("    3000 random flat records: fused and generic encoders agree (%zu refused)\n",
           errors);
    wk_arena_free(&a);
}

/* Fills `f` with a value of every kind (the tree holds a nested array, so the fast decoder
 * hands it to the general tree decoder). */
static void fill_flat(flat_all *f, wk_arena *a, bool nested)
{
    memset(f, 0, sizeof *f);
    f->b = true;
    f->i8 = -100;
    f->i16 = 30000;
    f->i32 = -70000;
    f->i64 = INT64_MIN;
    f->u8 = 200;
    f->u16 = 65535;
    f->u32 = 4000000000u;
    f->u64 = UINT64_MAX;
    f->f32 = 1.5f;
    f->f64 = -2.25;
    f->str = (char *)"a string";
    f->nstr = NULL;
    memcpy(f->code, "XYZ", 3);
    f->bytes.ptr = (const char *)"\x01\x02\x03";
    f->bytes.len = 3;
    f->ts.sec = 1700000000;
    f->ts.nsec = 123;
    f->far = 5;
    wk_value_set_map(&f->any, a, 3);
    wk_value_set_str(&f->any.u.pairs[0].key, "k", 1);
    if (nested) {
        wk_value_set_array(&f->any.u.pairs[0].val, a, 2);
        wk_value_set_int(&f->any.u.pairs[0].val.u.items[0], -5);
        wk_value_set_str(&f->any.u.pairs[0].val.u.items[1], "in", 2);
    } else {
        wk_value_set_int(&f->any.u.pairs[0].val, -5);
    }
    wk_value_set_uint(&f->any.u.pairs[1].key, 7);
    wk_value_set_float(&f->any.u.pairs[1].val, 0.5);
    wk_value_set_str(&f->any.u.pairs[2].key, "n", 1);
    wk_value_set_nil(&f->any.u.pairs[2].val);
}

WK_TEST(test_schema_msgpack_fast_decoder_matches_generic_on_flat_structs)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    static const uint8_t flips[] = {0x00, 0x01, 0x7f, 0x80, 0x90, 0xa0, 0xa3, 0xc0, 0xc1, 0xc2,
                                    0xc3, 0xca, 0xcc, 0xcf, 0xd0, 0xd3, 0xd9, 0xdc, 0xde, 0xff};
    size_t cases = 0;
    char why[512];
    for (int nested = 0; nested < 2; nested++) {
        flat_all f;
        fill_flat(&f, &a, nested != 0);
        wk_buf in;
        wk_buf_init(&in, NULL, 0);
        CHECK_OK(wk_schema_encode_mp(&flat_all_schema, &f, &in, NULL));
        const uint8_t *d = in.data;
        size_t n = in.len;
        uint8_t *m = malloc(n + 1);
        for (size_t cut = 0; cut <= n; cut++) {
            memcpy(m, d, cut);
            cases++;
            CHECK_MSG(decoders_agree(&flat_all_schema, sizeof(flat_all), m, cut, why, sizeof why),
                      "truncated at %zu: %s", cut, why);
        }
        for (size_t i = 0; i < n; i++) {
            for (size_t k = 0; k < sizeof flips; k++) {
                memcpy(m, d, n);
                m[i] = flips[k];
                cases++;
                CHECK_MSG(decoders_agree(&flat_all_schema, sizeof(flat_all), m, n, why, sizeof why),
                          "byte %zu = 0x%02x: %s", i, flips[k], why);
            }
        }
        free(m);
        wk_buf_free(&in);
    }
    printf("    %zu hostile flat inputs: fast and generic decoders agree\n", cases);
    wk_arena_free(&a);
}

WK_TEST(test_schema_msgpack_fast_decoder_handles_reordered_unknown_and_repeated_keys)
{
    /* Each input is valid; the fast path must give the same struct as the generic one. */
    static const char *const inputs[] = {
        /* keys in reverse order */
        ("85 a8 6d65746164617461 80 a7 656e61626c6564 c2 a3 616765 d0 9c "
         "a8 70617373776f7264 a0 a8 757365726e616d65 a1 78"),
        /* an unknown key with a nested value, a repeated key (the last wins) */
        "84 a8 757365726e616d65 a1 78 a5 6f74686572 92 01 81 a1 61 c0 a3 616765 01 a3 616765 02",
        /* a str8-encoded key, a uint64-encoded age, a nil metadata */
        "83 a8 757365726e616d65 a1 78 d9 03 616765 cf 0000000000000014 a8 6d65746164617461 c0",
        /* a short tail: fewer than 16 bytes after the last key starts */
        "82 a8 757365726e616d65 a1 78 a3 616765 05",
        /* metadata: array of scalars, then a map holding a map */
        "82 a8 757365726e616d65 a1 78 a8 6d65746164617461 93 c3 cb 3ff8000000000000 a2 6869",
        "82 a8 757365726e616d65 a1 78 a8 6d65746164617461 81 a1 6d 81 a1 6e 01",
    };
    char why[512];
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        uint8_t bytes[256];
        size_t n = wk_test_hex(inputs[i], bytes, sizeof bytes);
        CHECK_MSG(decoders_agree(&seed_user_schema, sizeof(seed_user), bytes, n, why,
                                 sizeof why),
                  "input %zu: %s", i, why);
        wk_arena a;
        wk_arena_init(&a, NULL, 0);
        seed_user u;
        memset(&u, 0, sizeof u);
        CHECK_MSG(wk_schema_decode_mp(&seed_user_schema, bytes, n, &u, &a, NULL, NULL) == WK_OK,
                  "input %zu does not decode", i);
        CHECK_STR(u.username, "x");
        wk_arena_free(&a);
    }
}

WK_TEST(test_schema_msgpack_fast_encoder_fills_fixed_buffers_to_the_last_byte)
{
    seed_user u;
    wk_pair pairs[2];
    seed_user_fill(&u, pairs);
    uint8_t want[128];
    size_t want_len = wk_test_hex(seed_hex, want, sizeof want);
    for (size_t cap = 0; cap <= 128; cap++) {
        uint8_t mem[128];
        wk_buf fixed, gen;
        wk_buf_init_fixed(&fixed, mem, cap);
        uint8_t gmem[128];
        wk_buf_init_fixed(&gen, gmem, cap);
        wk_error e1, e2;
        wk_status s1 = wk_schema_encode_mp(&seed_user_schema, &u, &fixed, &e1);
        wk_status s2 = encode_generic(&seed_user_schema, &u, &gen);
        CHECK_MSG(s1 == s2, "capacity %zu: fused %s, generic %s", cap, wk_status_str(s1),
                  wk_status_str(s2));
        CHECK_MSG((s1 == WK_OK) == (cap >= want_len), "capacity %zu", cap);
        if (s1 == WK_OK) {
            CHECK_MEM(fixed.data, fixed.len, want, want_len);
        } else {
            CHECK_EQ(fixed.len, 0);
            (void)e2;
        }
    }
    /* Appending after existing bytes, across every growth boundary of a small buffer. */
    for (size_t pre = 0; pre < 100; pre += 7) {
        wk_buf out;
        wk_buf_init(&out, NULL, 0);
        for (size_t k = 0; k < pre; k++) {
            CHECK_OK(wk_buf_push(&out, (uint8_t)k));
        }
        CHECK_OK(wk_schema_encode_mp(&seed_user_schema, &u, &out, NULL));
        CHECK_MEM(out.data + pre, out.len - pre, want, want_len);
        wk_buf_free(&out);
    }
}
