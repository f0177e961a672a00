/*
 * libFuzzer harness: hostile MessagePack decoded into the seed struct and into a struct with
 * every field kind (nested structs, arrays of arrays, recursive trees), through the fused
 * decoder and through the generic event path. Both must agree (status, offset, message,
 * field path); whatever decodes must encode again and decode to the same bytes, and the fused
 * encoder must write what the generic event encoder writes. A flat struct with every scalar
 * kind (omitempty, nullable, required, a key longer than 16 bytes) exercises the compiled-plan
 * fast paths; one of presence members (WK_FIELD_NULLABLE, seed key names) the general walks. The same bytes are also read as JSON through the fused and generic
 * schema<->JSON paths (json_paths.h), which must agree in the same way, on the decode and on
 * encoding the result again. The arena is capped, so memory stays proportional to the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../tests/unit/schema/json_paths.h"
#include "../../tests/unit/schema/seed_user.h"
#include "../../tests/unit/schema/test_shapes.h"
#include "wirekit/msgpack.h"

/* A flat struct of nullable fields (presence members), which takes the general walks. */
typedef struct nullable_all {
    int32_t i;
    bool has_i;
    bool b;
    bool has_b;
    double f;
    bool has_f;
    char *s;
    bool has_s;
    wk_timestamp t;
    bool has_t;
    uint64_t u;
    bool has_u;
} nullable_all;

WK_SCHEMA_DEFINE_STATIC(nullable_all_schema, nullable_all, "nullable_all", 1,
    WK_FIELD_NULLABLE(nullable_all, i, has_i, "username", WK_SK_I32, 0),
    WK_FIELD_NULLABLE(nullable_all, b, has_b, "enabled", WK_SK_BOOL, 0),
    WK_FIELD_NULLABLE(nullable_all, f, has_f, "age", WK_SK_F64, WK_OMITEMPTY),
    WK_FIELD_NULLABLE(nullable_all, s, has_s, "password", WK_SK_STR, 0),
    WK_FIELD_NULLABLE(nullable_all, t, has_t, "t", WK_SK_TIMESTAMP, 0),
    WK_FIELD_NULLABLE(nullable_all, u, has_u, "u", WK_SK_U64, WK_REQUIRED));

static wk_status generic(const wk_schema *s, const uint8_t *d, size_t n, void *obj,
                         wk_arena *a, wk_schema_error *err)
{
    wk_mp_reader r;
    wk_mp_reader_init(&r, d, n, NULL);
    wk_source src;
    wk_mp_reader_source(&r, &src);
    wk_status st = wk_schema_decode(s, &src, obj, a, NULL, err);
    if (st == WK_OK && wk_mp_reader_offset(&r) != n) {
        st = wk_error_set(&err->base, WK_ERR_TRAILING, wk_mp_reader_offset(&r),
                          "trailing bytes after the value");
    }
    wk_mp_reader_free(&r);
    return st;
}

/* The generic encoder: descriptor -> events -> MessagePack writer. */
static wk_status generic_encode(const wk_schema *s, const void *obj, wk_buf *out)
{
    wk_mp_writer w;
    wk_mp_writer_init(&w, out);
    wk_sink sink;
    wk_mp_writer_sink(&w, &sink);
    wk_status st = wk_schema_encode(s, obj, &sink, NULL);
    wk_status fin = wk_mp_writer_finish(&w, NULL);
    return st != WK_OK ? st : fin;
}

static void one(const wk_schema *s, size_t size, const uint8_t *d, size_t n)
{
    wk_arena a;
    wk_arena_init(&a, NULL, (size_t)1 << 22);
    void *x = calloc(1, size);
    void *y = calloc(1, size);
    wk_schema_error e1, e2;
    wk_status s1 = wk_schema_decode_mp(s, d, n, x, &a, NULL, &e1);
    wk_status s2 = generic(s, d, n, y, &a, &e2);
    if (s1 != s2) {
        abort();
    }
    /* NOMEM depends on how much each path had allocated before the cap. A wk_value nested
     * too deeply is reported by the msgpack module's fused tree decoder at the container's
     * first byte and by wk_value_decode after its header: the same error, offsets a header
     * apart. Everything else must match exactly. */
    if (s1 != WK_OK && s1 != WK_ERR_NOMEM &&
        (strcmp(e1.path, e2.path) != 0 ||
         (s1 == WK_ERR_DEPTH ? e2.base.offset - e1.base.offset > 5
                             : e1.base.offset != e2.base.offset))) {
        abort();
    }
    if (s1 == WK_OK) {
        wk_buf b1, b2;
        wk_buf_init(&b1, NULL, 0);
        wk_buf_init(&b2, NULL, 0);
        if (wk_schema_encode_mp(s, x, &b1, NULL) != WK_OK ||
            wk_schema_encode_mp(s, y, &b2, NULL) != WK_OK || b1.len != b2.len ||
            memcmp(b1.data, b2.data, b1.len) != 0) {
            abort();
        }
        void *z = calloc(1, size);
        wk_buf b3;
        wk_buf_init(&b3, NULL, 0);
        if (wk_schema_decode_mp(s, b1.data, b1.len, z, &a, NULL, NULL) != WK_OK ||
            wk_schema_encode_mp(s, z, &b3, NULL) != WK_OK || b3.len != b1.len ||
            memcmp(b3.data, b1.data, b1.len) != 0) {
            abort();
        }
        free(z);
        wk_buf b4;
        wk_buf_init(&b4, NULL, 0);
        if (generic_encode(s, x, &b4) != WK_OK || b4.len != b1.len ||
            memcmp(b4.data, b1.data, b1.len) != 0) {
            abort();
        }
        wk_buf_free(&b4);
        wk_buf_free(&b1);
        wk_buf_free(&b2);
        wk_buf_free(&b3);
    }
    free(x);
    free(y);
    wk_arena_free(&a);
}

/* The same bytes as JSON: the fused and generic schema<->JSON paths agree on the decode
 * (status, offset, message, path, object) and, when it succeeds, on encoding the object
 * again (bytes, or the same error), into a growable buffer and into one a few bytes short. */
static void one_json(const wk_schema *s, size_t size, const uint8_t *d, size_t n)
{
    char why[1024];
    if (!json_decoders_agree(s, size, d, n, NULL, (size_t)1 << 22, why, sizeof why)) {
        fprintf(stderr, "%s\n", why);
        abort();
    }
    wk_arena a;
    wk_arena_init(&a, NULL, (size_t)1 << 22);
    void *x = calloc(1, size);
    if (wk_schema_decode_json(s, d, n, x, &a, NULL, NULL) == WK_OK) {
        wk_buf b;
        wk_buf_init(&b, NULL, 0);
        bool ok = json_encoders_agree(s, x, 0, 0, why, sizeof why);
        /* A number beyond a double's range decodes to an infinity (as strtod does,
         * docs/formats.md), which JSON cannot hold: encoding the object back is then
         * WK_ERR_RANGE, on both paths alike. Any other failure is a bug. */
        wk_status es = ok ? wk_schema_encode_json(s, x, &b, NULL) : WK_OK;
        if (es != WK_OK && es != WK_ERR_RANGE) {
            snprintf(why, sizeof why, "the decoded object does not encode: %s",
                     wk_status_str(es));
            ok = false;
        }
        if (!ok || !json_encoders_agree(s, x, b.len > 3 ? b.len - 3 : 1, 0, why, sizeof why)) {
            fprintf(stderr, "%s\n", why);
            abort();
        }
        wk_buf_free(&b);
    }
    free(x);
    wk_arena_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    one_json(&seed_user_schema, sizeof(seed_user), data, size);
    one_json(&flat_all_schema, sizeof(flat_all), data, size);
    one_json(&everything_schema, sizeof(everything), data, size);
    one(&seed_user_schema, sizeof(seed_user), data, size);
    one(&everything_schema, sizeof(everything), data, size);
    one(&node_schema, sizeof(node), data, size);
    one(&flat_all_schema, sizeof(flat_all), data, size);
    one_json(&nullable_all_schema, sizeof(nullable_all), data, size);
    one(&nullable_all_schema, sizeof(nullable_all), data, size);
    return 0;
}
