/*
 * Conformance: every case of the npm package msgpack-test-suite (pinned in package.json),
 * read from node_modules/msgpack-test-suite/dist/msgpack-test-suite.json, which holds the
 * suite's 15 source files. For every case:
 *   - every listed encoding decodes (fused tree decoder) to the case's value, the generic
 *     decoder over the event reader gives an identical tree, and wk_mp_check accepts exactly
 *     its bytes;
 *   - encoding the value yields the first listed encoding, which the suite lists shortest
 *     first. One case (9223372036854775807) lists int64 d3 first and uint64 cf second, both
 *     9 bytes; wirekit writes non-negative integers as unsigned, so an equally short listed
 *     alternative is accepted and counted separately.
 * Mapping of the suite's values to trees: integral numbers and "bignum" strings become
 * integers; other numbers become floats, flagged float32 when a float32 holds them exactly
 * (the suite lists float32 first for 0.5); "binary" and "ext" hex become bin/ext bytes;
 * "timestamp" [sec, nsec] becomes a timestamp. Decoded numbers compare by mathematical value
 * (the suite lists float forms of integers, e.g. ca-4f-00-00-00 for 2147483648).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "suite_json.h"
#include "wirekit/msgpack.h"
#include "wk_test.h"

static size_t dash_hex(const wk_value *s, uint8_t *out, size_t cap)
{
    char tmp[4096];
    size_t k = 0;
    for (uint32_t i = 0; i < s->len && k + 1 < sizeof tmp; i++) {
        if (s->u.str[i] != '-') {
            tmp[k++] = s->u.str[i];
        }
    }
    tmp[k] = '\0';
    return wk_test_hex(tmp, out, cap);
}

/* Reads a number's text (RAWNUM or the bignum string) into an int/uint/float node. */
static bool number_value(const char *s, size_t len, wk_value *out)
{
    char tmp[64];
    if (len == 0 || len >= sizeof tmp) {
        return false;
    }
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    char *end = NULL;
    errno = 0;
    if (strpbrk(tmp, ".eE") != NULL) {
        double d = strtod(tmp, &end);
        if (*end != '\0' || errno != 0) {
            return false;
        }
        wk_value_set_float(out, d);
        if ((double)(float)d == d) {
            out->flags |= WK_VALF_F32;
        }
        return true;
    }
    if (tmp[0] == '-') {
        long long v = strtoll(tmp, &end, 10);
        if (*end != '\0' || errno != 0) {
            return false;
        }
        wk_value_set_int(out, v);
        return true;
    }
    unsigned long long u = strtoull(tmp, &end, 10);
    if (*end != '\0' || errno != 0) {
        return false;
    }
    wk_value_set_uint(out, u);
    return true;
}

/* Converts suite JSON (numbers still as text) into the expected tree, in place. */
static bool convert_numbers(wk_value *v)
{
    if (v->type == WK_VAL_RAWNUM) {
        return number_value(v->u.str, v->len, v);
    }
    if (v->type == WK_VAL_ARRAY || v->type == WK_VAL_MAP) {
        uint64_t n = v->type == WK_VAL_MAP ? 2 * (uint64_t)v->len : v->len;
        for (uint64_t i = 0; i < n; i++) {
            if (!convert_numbers(&v->u.items[i])) {
                return false;
            }
        }
    }
    return true;
}

static bool expected_value(const wk_value *c, wk_arena *a, wk_value *out)
{
    const wk_value *x;
    if ((x = wk_value_map_get(c, "bignum", 6)) != NULL) {
        return x->type == WK_VAL_STR && number_value(x->u.str, x->len, out);
    }
    if ((x = wk_value_map_get(c, "number", 6)) != NULL) {
        return x->type == WK_VAL_RAWNUM && number_value(x->u.str, x->len, out);
    }
    if ((x = wk_value_map_get(c, "nil", 3)) != NULL || (x = wk_value_map_get(c, "bool", 4)) ||
        (x = wk_value_map_get(c, "string", 6)) != NULL ||
        (x = wk_value_map_get(c, "array", 5)) != NULL ||
        (x = wk_value_map_get(c, "map", 3)) != NULL) {
        *out = *x;
        return convert_numbers(out);
    }
    if ((x = wk_value_map_get(c, "binary", 6)) != NULL) {
        uint8_t *buf = wk_arena_alloc(a, x->len + 1, 1);
        size_t n = dash_hex(x, buf, x->len + 1);
        return n != (size_t)-1 && wk_value_set_bin(out, buf, n) == WK_OK;
    }
    if ((x = wk_value_map_get(c, "timestamp", 9)) != NULL) {
        wk_value sec, nsec;
        if (x->type != WK_VAL_ARRAY || x->len != 2 ||
            !number_value(x->u.items[0].u.str, x->u.items[0].len, &sec) ||
            !number_value(x->u.items[1].u.str, x->u.items[1].len, &nsec)) {
            return false;
        }
        return wk_value_set_timestamp(out, sec.u.i, (uint32_t)nsec.u.u) == WK_OK;
    }
    if ((x = wk_value_map_get(c, "ext", 3)) != NULL) {
        wk_value type;
        if (x->type != WK_VAL_ARRAY || x->len != 2 ||
            !number_value(x->u.items[0].u.str, x->u.items[0].len, &type)) {
            return false;
        }
        const wk_value *hex = &x->u.items[1];
        uint8_t *buf = wk_arena_alloc(a, hex->len + 1, 1);
        size_t n = dash_hex(hex, buf, hex->len + 1);
        return n != (size_t)-1 && wk_value_set_ext(out, (int8_t)type.u.i, buf, n) == WK_OK;
    }
    return false;
}

static bool is_number(const wk_value *v)
{
    return v->type == WK_VAL_INT || v->type == WK_VAL_UINT || v->type == WK_VAL_FLOAT;
}

/* Numbers compare by value across int/uint/float; everything else as wk_value_equal. */
static bool suite_equal(const wk_value *got, const wk_value *want)
{
    if (is_number(got) && is_number(want)) {
        if (got->type != WK_VAL_FLOAT && want->type != WK_VAL_FLOAT) {
            return wk_value_equal(got, want, NULL);
        }
        double g = got->type == WK_VAL_FLOAT  ? got->u.f
                   : got->type == WK_VAL_INT ? (double)got->u.i
                                              : (double)got->u.u;
        double w = want->type == WK_VAL_FLOAT  ? want->u.f
                   : want->type == WK_VAL_INT ? (double)want->u.i
                                               : (double)want->u.u;
        return g == w;
    }
    if (got->type != want->type || got->len != want->len) {
        return false;
    }
    if (got->type == WK_VAL_ARRAY || got->type == WK_VAL_MAP) {
        uint64_t n = got->type == WK_VAL_MAP ? 2 * (uint64_t)got->len : got->len;
        for (uint64_t i = 0; i < n; i++) {
            if (!suite_equal(&got->u.items[i], &want->u.items[i])) {
                return false;
            }
        }
        return true;
    }
    return wk_value_equal(got, want, NULL);
}

WK_TEST(test_msgpack_passes_every_case_of_msgpack_test_suite)
{
    const char *path = wk_test_node_module("msgpack-test-suite/dist/msgpack-test-suite.json");
    size_t len = 0;
    uint8_t *text = wk_test_read_file(path, &len);
    if (text == NULL) {
        CHECK_MSG(false, "cannot read %s (run scripts/deps.sh)", path);
    }
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    size_t err_at = 0;
    wk_value *root = suite_json_parse((const char *)text, len, &arena, &err_at);
    CHECK_MSG(root != NULL && root->type == WK_VAL_MAP, "suite JSON unreadable at %zu", err_at);

    size_t files = 0, cases = 0, decoded = 0, encoded = 0, alternative = 0, failures = 0;
    for (uint32_t f = 0; f < root->len; f++) {
        const wk_pair *file = &root->u.pairs[f];
        CHECK(file->val.type == WK_VAL_ARRAY);
        files++;
        for (uint32_t c = 0; c < file->val.len; c++) {
            const wk_value *cs = &file->val.u.items[c];
            cases++;
            wk_value want;
            const wk_value *encs = wk_value_map_get(cs, "msgpack", 7);
            if (!expected_value(cs, &arena, &want) || encs == NULL ||
                encs->type != WK_VAL_ARRAY || encs->len == 0) {
                printf("  %.*s case %u: unreadable\n", (int)file->key.len, file->key.u.str, c);
                failures++;
                continue;
            }
            uint8_t first[256];
            size_t first_len = dash_hex(&encs->u.items[0], first, sizeof first);
            bool case_ok = true;
            for (uint32_t e = 0; e < encs->len; e++) {
                uint8_t bytes[256];
                size_t n = dash_hex(&encs->u.items[e], bytes, sizeof bytes);
                wk_value *fused = NULL, *generic = NULL;
                wk_mp_reader r;
                wk_mp_reader_init(&r, bytes, n, NULL);
                wk_source src;
                wk_mp_reader_source(&r, &src);
                size_t size = 0;
                bool ok = n != (size_t)-1 &&
                          wk_mp_decode_value(bytes, n, NULL, &arena, &fused, NULL, NULL) == WK_OK &&
                          wk_value_decode(&src, NULL, &arena, &generic, NULL) == WK_OK &&
                          wk_mp_check(bytes, n, NULL, &size, NULL) == WK_OK && size == n &&
                          suite_equal(fused, &want) && wk_value_equal(fused, generic, NULL);
                wk_mp_reader_free(&r);
                if (ok) {
                    decoded++;
                } else {
                    printf("  %.*s case %u: encoding %u (%.*s) does not decode to the value\n",
                           (int)file->key.len, file->key.u.str, c, e,
                           (int)encs->u.items[e].len, encs->u.items[e].u.str);
                    case_ok = false;
                }
            }
            wk_buf out;
            wk_buf_init(&out, NULL, 0);
            wk_status st = wk_mp_encode_value(&want, &out, NULL);
            bool enc_ok = st == WK_OK && out.len == first_len &&
                          memcmp(out.data, first, first_len) == 0;
            bool alt_ok = false;
            if (!enc_ok && st == WK_OK && out.len == first_len) {
                for (uint32_t e = 1; e < encs->len; e++) {
                    uint8_t bytes[256];
                    size_t n = dash_hex(&encs->u.items[e], bytes, sizeof bytes);
                    if (n == out.len && memcmp(bytes, out.data, n) == 0) {
                        alt_ok = true;
                    }
                }
            }
            if (enc_ok || alt_ok) {
                encoded++;
                alternative += alt_ok;
            } else {
                printf("  %.*s case %u: encodes to %zu bytes, not the first listed (%.*s)\n",
                       (int)file->key.len, file->key.u.str, c, out.len,
                       (int)encs->u.items[0].len, encs->u.items[0].u.str);
                wk_test_dump_diff(out.data, out.len, first, first_len);
                case_ok = false;
            }
            wk_buf_free(&out);
            failures += !case_ok;
        }
    }
    printf("msgpack-test-suite: %zu files, %zu cases; %zu listed encodings decoded; "
           "%zu cases encoded to the first listed encoding, %zu to an equally short listed "
           "alternative; %zu cases failed\n",
           files, cases, decoded, encoded - alternative, alternative, failures);
    wk_arena_free(&arena);
    free(text);
    CHECK_EQ(failures, 0);
    CHECK_EQ(files, 15);
    CHECK_EQ(cases, 85);
}
