/*
 * The folded wk_schema_encode_mp (wirekit/schema_mp_fold.h) against the library function and
 * the generic event path: a descriptor of every folded kind is folded (when optimised), and on
 * 5000 random records (integers at every form's edge, NULL and long strings, wk_value trees of
 * every node type) and on fixed buffers of every capacity, the three give the same statuses
 * and bytes, and a refusal leaves the buffer as it was.
 */
#include <stdlib.h>

#include "random_records.h"
#include "wirekit/msgpack.h"
#include "wirekit/schema.h"
#include "wk_test.h"

/* Every kind the folded encoder writes, a nullable string (NULL: the library's nil), and a
 * name of 31 bytes (the longest fixstr key). */
typedef struct fold_all {
    bool b;
    int8_t i8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    double f64;
    char *str;
    char *nstr;
    wk_value any;
} fold_all;

WK_SCHEMA_DEFINE_STATIC(fold_all_schema, fold_all, "fold_all", 1,
    WK_FIELD(fold_all, b, "b", WK_SK_BOOL, 0),
    WK_FIELD(fold_all, i8, "i8", WK_SK_I8, 0),
    WK_FIELD(fold_all, i16, "i16", WK_SK_I16, 0),
    WK_FIELD(fold_all, i32, "i32", WK_SK_I32, WK_REQUIRED),
    WK_FIELD(fold_all, i64, "i64", WK_SK_I64, 0),
    WK_FIELD(fold_all, u8, "u8", WK_SK_U8, 0),
    WK_FIELD(fold_all, u16, "u16", WK_SK_U16, 0),
    WK_FIELD(fold_all, u32, "u32", WK_SK_U32, 0),
    WK_FIELD(fold_all, u64, "u64", WK_SK_U64, 0),
    WK_FIELD(fold_all, f64, "f64", WK_SK_F64, 0),
    WK_FIELD(fold_all, str, "a_string_field_named_in_31_byte", WK_SK_STR, 0),
    WK_FIELD(fold_all, nstr, "nstr", WK_SK_STR, WK_NULLABLE),
    WK_FIELD(fold_all, any, "any", WK_SK_VALUE, 0));

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

static void rnd_fold(fold_all *f, wk_arena *a)
{
    size_t n;
    memset(f, 0, sizeof *f);
    f->b = rnd_below(2) != 0;
    f->i8 = (int8_t)rnd_int();
    f->i16 = (int16_t)rnd_int();
    f->i32 = (int32_t)rnd_int();
    f->i64 = rnd_int();
    f->u8 = (uint8_t)rnd_int();
    f->u16 = (uint16_t)rnd_int();
    f->u32 = (uint32_t)rnd_int();
    f->u64 = (uint64_t)rnd_int();
    f->f64 = (double)rnd_int() / 7;
    f->str = rnd_below(20) == 0 ? NULL : rnd_str(a, &n);
    f->nstr = rnd_below(4) == 0 ? NULL : rnd_str(a, &n);
    rnd_value(&f->any, a, 2);
}

WK_TEST(test_schema_mp_fold_takes_the_descriptor_when_optimised)
{
#if defined(__GNUC__) && defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__)
    /* -O2 and up (the sanitizer builds are -O1, which does not unroll the shape's loop) */
    const bool folds = wk__mpf_shape(&fold_all_schema);
    CHECK(__builtin_constant_p(folds) && folds);
#endif
    /* the first call builds the index (the library's); the later ones fold */
    fold_all f;
    memset(&f, 0, sizeof f);
    f.str = (char *)"x";
    wk_buf b1, b2;
    wk_buf_init(&b1, NULL, 0);
    wk_buf_init(&b2, NULL, 0);
    CHECK_OK(wk_schema_encode_mp(&fold_all_schema, &f, &b1, NULL));
    CHECK_OK(wk_schema_encode_mp(&fold_all_schema, &f, &b2, NULL));
    CHECK_MEM(b1.data, b1.len, b2.data, b2.len);
    wk_buf_free(&b1);
    wk_buf_free(&b2);
}

WK_TEST(test_schema_mp_fold_matches_the_library_on_random_records)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    size_t refused = 0;
    for (int i = 0; i < 5000; i++) {
        wk_arena_reset(&a);
        fold_all f;
        rnd_fold(&f, &a);
        wk_buf folded, lib, gen;
        wk_buf_init(&folded, NULL, 0);
        wk_buf_init(&lib, NULL, 0);
        wk_buf_init(&gen, NULL, 0);
        /* after a prefix: the record is appended */
        size_t pre = rnd_below(3) == 0 ? rnd_below(200) : 0;
        for (size_t k = 0; k < pre; k++) {
            CHECK_OK(wk_buf_push(&folded, (uint8_t)k));
            CHECK_OK(wk_buf_push(&lib, (uint8_t)k));
        }
        wk_status s1 = wk_schema_encode_mp(&fold_all_schema, &f, &folded, NULL);
        wk_status s2 = (wk_schema_encode_mp)(&fold_all_schema, &f, &lib, NULL);
        wk_status s3 = encode_generic(&fold_all_schema, &f, &gen);
        CHECK_MSG(s1 == s2 && s2 == s3, "record %d: folded %s, library %s, generic %s", i,
                  wk_status_str(s1), wk_status_str(s2), wk_status_str(s3));
        CHECK_MSG(folded.len == lib.len && memcmp(folded.data, lib.data, lib.len) == 0,
                  "record %d: folded (%zu bytes) and library (%zu bytes) differ", i,
                  folded.len, lib.len);
        if (s1 == WK_OK) {
            CHECK_MSG(folded.len - pre == gen.len &&
                          memcmp(folded.data + pre, gen.data, gen.len) == 0,
                      "record %d: folded and generic differ", i);
        } else {
            CHECK_EQ(folded.len, pre);
            refused++;
        }
        wk_buf_free(&folded);
        wk_buf_free(&lib);
        wk_buf_free(&gen);
    }
    printf("    5000 random records: folded, library and generic agree (%zu refused)\n",
           refused);
    wk_arena_free(&a);
}

WK_TEST(test_schema_mp_fold_fills_fixed_buffers_to_the_last_byte)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    for (int i = 0; i < 40; i++) {
        wk_arena_reset(&a);
        fold_all f;
        rnd_fold(&f, &a);
        for (size_t cap = 0; cap <= 400; cap++) {
            uint8_t m1[400], m2[400];
            wk_buf b1, b2;
            wk_buf_init_fixed(&b1, m1, cap);
            wk_buf_init_fixed(&b2, m2, cap);
            wk_status s1 = wk_schema_encode_mp(&fold_all_schema, &f, &b1, NULL);
            wk_status s2 = (wk_schema_encode_mp)(&fold_all_schema, &f, &b2, NULL);
            CHECK_MSG(s1 == s2, "record %d, capacity %zu: folded %s, library %s", i, cap,
                      wk_status_str(s1), wk_status_str(s2));
            CHECK_MEM(b1.data, b1.len, b2.data, b2.len);
        }
    }
    wk_arena_free(&a);
}

WK_TEST(test_schema_mp_fold_null_arguments_are_the_library_s_refusals)
{
    fold_all f;
    memset(&f, 0, sizeof f);
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    CHECK_EQ(wk_schema_encode_mp(&fold_all_schema, NULL, &b, NULL), WK_ERR_ARG);
    CHECK_EQ(wk_schema_encode_mp(&fold_all_schema, &f, NULL, NULL), WK_ERR_ARG);
    CHECK_EQ(b.len, 0);
    wk_buf_free(&b);
}

