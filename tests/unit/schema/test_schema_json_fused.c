/*
 * The fused schema<->JSON paths against the generic event paths (json_paths.h): random
 * records of every field kind (random values, numbers at their limits, strings with escapes,
 * control bytes, non-ASCII and invalid UTF-8, wk_value trees of every node type), written
 * both ways into growable and too-small buffers; their JSON re-read with random key orders,
 * whitespace, escapes, missing, unknown and repeated keys, then truncated at every byte and
 * mutated: both decoders must give the same status, message, offset, field path and object.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "json_paths.h"
#include "seed_user.h"
#include "test_shapes.h"
#include "wk_test.h"

/* ---- random values ------------------------------------------------------------------------ */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    rng_state = x;
    return x;
}

static uint32_t rnd_below(uint32_t n)
{
    return (uint32_t)(rnd() % n);
}

static int64_t rnd_int(void)
{
    static const int64_t limits[] = {0,          1,          -1,         9,
                                     10,         127,        128,        -128,
                                     -129,       255,        256,        32767,
                                     -32768,     65535,      65536,      2147483647,
                                     -2147483647 - 1,        4294967295ll,
                                     INT64_MAX,  INT64_MIN,  99999999,   100000000,
                                     999999999999999999ll,   1000000000000000000ll};
    if (rnd_below(3) == 0) {
        return (int64_t)rnd() >> rnd_below(64);
    }
    return limits[rnd_below(sizeof limits / sizeof limits[0])];
}

static double rnd_double(void)
{
    static const double specials[] = {0.0,     -0.0,    1.5,   0.1,          1.0 / 3,
                                      DBL_MAX, DBL_MIN, 5e-324, 1e300,       -2.5e-300,
                                      1e22,    1e23,    9007199254740993.0, 123456.789};
    switch (rnd_below(8)) {
    case 0: {
        uint64_t bits = rnd();
        double d;
        memcpy(&d, &bits, sizeof d);
        return d; /* NaN or infinity now and then: both paths must refuse it */
    }
    case 1: return (double)(int64_t)rnd() / 1000.0;
    case 2: return rnd_below(20) == 0 ? INFINITY : -(double)rnd_below(1000) / 7.0;
    default: return specials[rnd_below(sizeof specials / sizeof specials[0])];
    }
}

/* A random string into `buf` (cap >= 200): plain ASCII mostly, with characters that need
 * escaping, valid UTF-8 of every length, and (when `bad_ok`) invalid bytes. No NUL. */
static char *rnd_string(char *buf, bool bad_ok)
{
    static const char *const pieces[] = {"a",  "Z",    "0",       " ",        "\"",
                                         "\\", "/",    "\x01",    "\x1f",     "\x7f",
                                         "\n", "\t",   "\xc3\xa9", "\xe4\xb8\xad",
                                         "\xf0\x9f\x98\x80", "key", "hello world"};
    static const char *const bad[] = {"\x80", "\xc0\xaf", "\xff", "\xed\xa0\x80", "\xe4\xb8"};
    size_t n = 0;
    uint32_t parts = rnd_below(4) == 0 ? rnd_below(40) : rnd_below(8);
    for (uint32_t i = 0; i < parts && n < 180; i++) {
        const char *p;
        if (rnd_below(4) != 0) {
            p = pieces[rnd_below(3)];
        } else if (bad_ok && rnd_below(30) == 0) {
            p = bad[rnd_below(sizeof bad / sizeof bad[0])];
        } else {
            p = pieces[rnd_below(sizeof pieces / sizeof pieces[0])];
        }
        size_t k = strlen(p);
        memcpy(buf + n, p, k);
        n += k;
    }
    buf[n] = '\0';
    return buf;
}

/* A random wk_value tree in `a` (depth-limited). */
static void rnd_value(wk_value *v, wk_arena *a, int depth)
{
    char s[200];
    uint32_t pick = rnd_below(depth > 0 ? 12 : 8);
    switch (pick) {
    case 0: wk_value_set_nil(v); break;
    case 1: wk_value_set_bool(v, rnd_below(2) != 0); break;
    case 2: wk_value_set_int(v, rnd_int()); break;
    case 3: wk_value_set_uint(v, (uint64_t)rnd_int()); break;
    case 4:
        wk_value_set_float(v, rnd_double());
        if (rnd_below(6) == 0) {
            v->flags = WK_VALF_F32;
            v->u.f = (double)(float)v->u.f;
        }
        break;
    case 5:
    case 6: {
        rnd_string(s, rnd_below(10) == 0);
        char *c = wk_arena_strndup(a, s, strlen(s));
        wk_value_set_str(v, c, strlen(c));
        break;
    }
    case 7: wk_value_set_bin(v, "\x00\x01\xff", rnd_below(4)); break;
    case 8:
    case 9: {
        uint32_t n = rnd_below(5);
        wk_value_set_array(v, a, n);
        for (uint32_t i = 0; i < n; i++) {
            rnd_value(&v->u.items[i], a, depth - 1);
        }
        break;
    }
    default: {
        uint32_t n = rnd_below(5);
        wk_value_set_map(v, a, n);
        for (uint32_t i = 0; i < n; i++) {
            if (rnd_below(12) == 0) {
                wk_value_set_int(&v->u.pairs[i].key, rnd_int()); /* a key JSON must quote */
            } else {
                rnd_string(s, false);
                char *c = wk_arena_strndup(a, s, strlen(s));
                wk_value_set_str(&v->u.pairs[i].key, c, strlen(c));
            }
            rnd_value(&v->u.pairs[i].val, a, depth - 1);
        }
        break;
    }
    }
}

static void rnd_flat_all(flat_all *f, wk_arena *a)
{
    char s[200];
    memset(f, 0, sizeof *f);
    f->b = rnd_below(2) != 0;
    f->i8 = (int8_t)rnd_int();
    f->i16 = (int16_t)rnd_int();
    f->i32 = (int32_t)rnd_int();
    f->i64 = rnd_int();
    f->u8 = (uint8_t)rnd_int();
    f->u16 = rnd_below(4) == 0 ? 0 : (uint16_t)rnd_int();
    f->u32 = rnd_below(4) == 0 ? 0 : (uint32_t)rnd_int();
    f->u64 = (uint64_t)rnd_int();
    f->f32 = (float)rnd_double();
    f->f64 = rnd_double();
    rnd_string(s, rnd_below(20) == 0);
    f->str = wk_arena_strndup(a, s, strlen(s));
    if (rnd_below(3) == 0) {
        f->nstr = NULL;
    } else {
        rnd_string(s, false);
        f->nstr = wk_arena_strndup(a, s, strlen(s));
    }
    rnd_string(s, false);
    size_t n = strlen(s) < sizeof f->code ? strlen(s) : sizeof f->code;
    memcpy(f->code, s, n); /* sometimes all 8 bytes, no NUL: the field is full */
    uint32_t blen = rnd_below(12);
    uint8_t *bytes = wk_arena_alloc(a, blen + 1, 1);
    for (uint32_t i = 0; i < blen; i++) {
        bytes[i] = (uint8_t)rnd();
    }
    f->bytes.ptr = rnd_below(5) == 0 ? NULL : (const char *)bytes;
    f->bytes.len = f->bytes.ptr != NULL || rnd_below(10) == 0 ? blen : 0;
    static const int64_t secs[] = {0, -1, 1700000000, -62167219200ll, 253402300799ll,
                                   253402300800ll, 86399, 951782400};
    f->ts.sec = rnd_below(3) == 0 ? (int64_t)(rnd() % 20000000000ull) : secs[rnd_below(8)];
    static const uint32_t nsecs[] = {0, 5, 999999999u, 1000000000u, 120000000u};
    f->ts.nsec = rnd_below(3) == 0 ? (uint32_t)(rnd() % 1000000000u) : nsecs[rnd_below(5)];
    rnd_value(&f->any, a, (int)rnd_below(3));
}

static void rnd_seed(seed_user *u, wk_arena *a)
{
    char s[200];
    memset(u, 0, sizeof *u);
    rnd_string(s, false);
    u->username = wk_arena_strndup(a, s, strlen(s));
    if (rnd_below(4) != 0) {
        rnd_string(s, false);
        u->password = wk_arena_strndup(a, s, strlen(s));
    }
    u->age = rnd_int();
    u->enabled = rnd_below(2) != 0;
    rnd_value(&u->metadata, a, (int)rnd_below(3));
}

/* ---- JSON text variations ----------------------------------------------------------------- */

/* Rewrites the JSON text `in` into `out`: whitespace between tokens, some string characters
 * as \u escapes (or "\/"), and the members of the outer object shuffled, dropped, repeated
 * or joined by unknown ones (the text is parsed into a tree for that). Returns false when
 * `in` does not parse. */
static bool vary_text(const wk_buf *in, wk_buf *out, wk_arena *a)
{
    /* Half the time only what the fast decoder takes itself (order, repeats, missing keys,
     * whitespace, escapes in values); otherwise unknown keys and escaped keys too. */
    const bool plain = rnd_below(2) == 0;
    wk_value *root = NULL;
    wk_read_opts ro = {0};
    if (wk_json_decode_value(in->data, in->len, &ro, a, &root, NULL, NULL) != WK_OK) {
        return false;
    }
    if (root->type == WK_VAL_MAP) {
        uint32_t n = root->len;
        uint32_t extra = plain ? 0 : rnd_below(3);
        wk_pair *pairs = wk_arena_alloc(a, (n + extra + 1) * sizeof(wk_pair), 16);
        uint32_t m = 0;
        for (uint32_t i = 0; i < n; i++) {
            if (rnd_below(8) != 0) {
                pairs[m++] = root->u.pairs[i];
            }
            if (rnd_below(10) == 0 && m < n + extra + 1) {
                pairs[m++] = root->u.pairs[i]; /* repeated: the last one wins */
            }
            if (m >= n + extra) {
                break;
            }
        }
        for (uint32_t i = 0; i < extra && m < n + extra + 1; i++) {
            wk_value_set_str(&pairs[m].key, i == 0 ? "unknown" : "x", i == 0 ? 7 : 1);
            rnd_value(&pairs[m].val, a, 2);
            m++;
        }
        for (uint32_t i = m; i > 1; i--) {
            if (rnd_below(3) == 0) {
                uint32_t j = rnd_below(i);
                wk_pair t = pairs[i - 1];
                pairs[i - 1] = pairs[j];
                pairs[j] = t;
            }
        }
        root->u.pairs = pairs;
        root->len = m;
    }
    wk_buf mid;
    wk_buf_init(&mid, NULL, 0);
    wk_json_write_opts wo = {0};
    wo.flags = rnd_below(3) == 0 ? WK_JSON_WRITE_PRETTY : 0;
    if (wk_json_encode_value(root, &wo, &mid, NULL) != WK_OK) {
        /* an added value JSON cannot hold (NaN, bad UTF-8): vary the original text only */
        wk_buf_clear(&mid);
        wk_buf_append(&mid, in->data, in->len);
    }
    bool in_str = false;
    bool sparse = rnd_below(4) == 0;
    for (size_t i = 0; i < mid.len; i++) {
        uint8_t c = mid.data[i];
        if (!in_str && sparse && rnd_below(4) == 0) {
            bool one = rnd_below(2) != 0;
            wk_buf_append(out, one ? " " : "\r\n\t", one ? 1 : 3);
        }
        if (in_str && c >= 'a' && c <= 'z' && rnd_below(plain ? 60 : 12) == 0) {
            char esc[8];
            snprintf(esc, sizeof esc, "\\u%04X", c);
            wk_buf_append(out, esc, 6);
            continue;
        }
        if (in_str && c == '/' && rnd_below(2) == 0) {
            wk_buf_append(out, "\\/", 2);
            continue;
        }
        wk_buf_push(out, c);
        if (c == '\\' && in_str) {
            wk_buf_push(out, mid.data[++i]);
            continue;
        }
        if (c == '"') {
            in_str = !in_str;
        }
    }
    if (sparse) {
        wk_buf_append(out, " \n", 2);
    }
    wk_buf_free(&mid);
    return true;
}

/* Bytes that change the meaning of JSON text when they replace another. */
static const uint8_t MUTATIONS[] = {'"', '\\', '{', '}', '[', ']', ',', ':', '0', '9', '-',
                                    '.', 'e', 'n', 't', 'f', ' ', 'u', 'x', 0x00, 0x1f, 0x80,
                                    0xc3, 0xff};

/* Every truncation of `d` and `mutations` random one-byte changes: the decoders agree. */
static bool hostile_inputs_agree(const wk_schema *s, size_t size, const uint8_t *d, size_t n,
                                 uint32_t mutations, size_t *cases, char *why, size_t why_cap)
{
    uint8_t *m = malloc(n + 1);
    bool ok = true;
    for (size_t cut = 0; cut <= n && ok; cut++) {
        uint8_t *exact = malloc(cut + 1); /* exact size: ASan sees any read past the end */
        memcpy(exact, d, cut);
        ok = json_decoders_agree(s, size, exact, cut, NULL, 0, why, why_cap);
        free(exact);
        (*cases)++;
    }
    for (uint32_t k = 0; k < mutations && ok && n > 0; k++) {
        memcpy(m, d, n);
        if (k % 2 == 0) {
            /* A change that keeps the text valid more often than not: a digit for a digit, a
             * letter for a letter (values, keys, literals), so both decoders also succeed on
             * many neighbours of the text. */
            size_t at = rnd_below((uint32_t)n);
            if (m[at] >= '0' && m[at] <= '9') {
                m[at] = (uint8_t)('0' + rnd_below(10));
            } else if (m[at] >= 'a' && m[at] <= 'z') {
                m[at] = (uint8_t)('a' + rnd_below(26));
            }
            ok = json_decoders_agree(s, size, m, n, NULL, 0, why, why_cap);
            (*cases)++;
            continue;
        }
        m[rnd_below((uint32_t)n)] = MUTATIONS[rnd_below(sizeof MUTATIONS)];
        if (rnd_below(4) == 0) {
            m[rnd_below((uint32_t)n)] = MUTATIONS[rnd_below(sizeof MUTATIONS)];
        }
        ok = json_decoders_agree(s, size, m, n, NULL, 0, why, why_cap);
        (*cases)++;
    }
    free(m);
    return ok;
}

/* One record both ways: same bytes (or the same error); then its text, varied, decoded
 * both ways, with every truncation and some mutations of the varied text. */
static bool record_paths_agree(const wk_schema *s, size_t size, const void *obj,
                               uint32_t mutations, size_t *cases, char *why, size_t why_cap)
{
    if (!json_encoders_agree(s, obj, 0, rnd_below(40), why, why_cap)) {
        return false;
    }
    wk_buf text;
    wk_buf_init(&text, NULL, 0);
    if (wk_schema_encode_json(s, obj, &text, NULL) != WK_OK) {
        wk_buf_free(&text);
        return true; /* an error both paths reported the same way */
    }
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    wk_buf varied;
    wk_buf_init(&varied, NULL, 0);
    bool ok = json_decoders_agree(s, size, text.data, text.len, NULL, 0, why, why_cap);
    /* Several variations decoded whole (most succeed: the fast path's own ground), then one
     * truncated at every byte and mutated. */
    for (int k = 0; k < 8 && ok; k++) {
        wk_buf_clear(&varied);
        ok = vary_text(&text, &varied, &a) &&
             json_decoders_agree(s, size, varied.data, varied.len, NULL, 0, why, why_cap);
        (*cases)++;
    }
    ok = ok && hostile_inputs_agree(s, size, varied.data, varied.len, mutations, cases, why,
                                    why_cap);
    wk_buf_free(&varied);
    wk_buf_free(&text);
    wk_arena_free(&a);
    return ok;
}

/* ---- tests -------------------------------------------------------------------------------- */

static const char seed_json[] = "{\"username\":\"root\",\"password\":\"secret\",\"age\":20,"
                                "\"enabled\":true,\"metadata\":{\"hello\":\"world\",\"int\":10}}";

WK_TEST(test_schema_json_fused_seed_record_round_trips_byte_exact)
{
    seed_user u;
    wk_pair pairs[2];
    seed_user_fill(&u, pairs);
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    CHECK_OK(wk_schema_encode_json(&seed_user_schema, &u, &out, NULL));
    CHECK_MEM(out.data, out.len, seed_json, sizeof seed_json - 1);
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    seed_user back;
    memset(&back, 0, sizeof back);
    CHECK_OK(wk_schema_decode_json(&seed_user_schema, out.data, out.len, &back, &a, NULL, NULL));
    CHECK_STR(back.username, "root");
    CHECK_STR(back.password, "secret");
    CHECK_EQ(back.age, 20);
    CHECK(back.enabled);
    CHECK(wk_value_equal(&back.metadata, &u.metadata, NULL));
    /* Strings are copies in the arena, never views into the input. */
    CHECK(back.username < (char *)out.data || back.username >= (char *)out.data + out.len);
    CHECK((back.metadata.u.pairs[0].key.flags & WK_VALF_COPIED) != 0);
    wk_buf_clear(&out);
    CHECK_OK(wk_schema_encode_json(&seed_user_schema, &back, &out, NULL));
    CHECK_MEM(out.data, out.len, seed_json, sizeof seed_json - 1);
    wk_buf_free(&out);
    wk_arena_free(&a);
}

WK_TEST(test_schema_json_fused_encoder_matches_generic_on_random_records)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    char why[1024];
    size_t errors = 0;
    for (int i = 0; i < 3000; i++) {
        wk_arena_reset(&a);
        flat_all f;
        rnd_flat_all(&f, &a);
        CHECK_MSG(json_encoders_agree(&flat_all_schema, &f, 0, 0, why, sizeof why),
                  "record %d: %s", i, why);
        seed_user u;
        rnd_seed(&u, &a);
        CHECK_MSG(json_encoders_agree(&seed_user_schema, &u, 0, (size_t)i % 50, why,
                                      sizeof why),
                  "seed record %d: %s", i, why);
        wk_buf b;
        wk_buf_init(&b, NULL, 0);
        errors += wk_schema_encode_json(&flat_all_schema, &f, &b, NULL) != WK_OK;
        wk_buf_free(&b);
    }
    /* The generator must reach the error paths too (NaN, bad UTF-8, bad timestamps...). */
    CHECK_MSG(errors > 100 && errors < 2900, "%zu records of 3000 failed to encode", errors);
    printf("    3000 random records x 2 schemas: fused and generic encoders agree "
           "(%zu errors among them)\n", errors);
    wk_arena_free(&a);
}

WK_TEST(test_schema_json_fused_encoder_fills_fixed_buffers_like_generic)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    char why[1024];
    seed_user u;
    wk_pair pairs[2];
    seed_user_fill(&u, pairs);
    for (size_t cap = 1; cap <= 130; cap++) {
        for (size_t pre = 0; pre < 3 && pre < cap; pre++) {
            CHECK_MSG(json_encoders_agree(&seed_user_schema, &u, cap, pre, why, sizeof why),
                      "capacity %zu after %zu bytes: %s", cap, pre, why);
        }
    }
    for (int i = 0; i < 200; i++) {
        wk_arena_reset(&a);
        flat_all f;
        rnd_flat_all(&f, &a);
        for (size_t cap = 1; cap < 400; cap += 1 + rnd_below(7)) {
            CHECK_MSG(json_encoders_agree(&flat_all_schema, &f, cap, 0, why, sizeof why),
                      "record %d, capacity %zu: %s", i, cap, why);
        }
    }
    wk_arena_free(&a);
}

WK_TEST(test_schema_json_fused_decoder_matches_generic_on_varied_truncated_and_mutated_text)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    char why[1024];
    size_t cases = 0;
    for (int i = 0; i < 400; i++) {
        wk_arena_reset(&a);
        flat_all f;
        rnd_flat_all(&f, &a);
        CHECK_MSG(record_paths_agree(&flat_all_schema, sizeof f, &f, 150, &cases, why,
                                     sizeof why),
                  "flat record %d: %s", i, why);
        seed_user u;
        rnd_seed(&u, &a);
        CHECK_MSG(record_paths_agree(&seed_user_schema, sizeof u, &u, 100, &cases, why,
                                     sizeof why),
                  "seed record %d: %s", i, why);
    }
    /* A struct that is not flat: the fused entry points take the generic paths whole. */
    everything e;
    fill_everything(&e, &a);
    CHECK_MSG(record_paths_agree(&everything_schema, sizeof e, &e, 300, &cases, why,
                                 sizeof why),
              "everything: %s", why);
    printf("    %zu hostile inputs: fused and generic decoders agree\n", cases);
    wk_arena_free(&a);
}

WK_TEST(test_schema_json_fused_decoder_matches_generic_on_chosen_inputs)
{
    static const char *const inputs[] = {
        seed_json,
        " {\"metadata\":{\"int\":10,\"hello\":\"w\\u00f6rld\"},\"enabled\":true,"
        "\"extra\":[1,{\"x\":null}],\"age\":20,\"username\":\"ro\\\"ot\"} ",
        "{\"username\":\"a\",\"username\":\"b\"}",             /* repeated: the last wins */
        "{\"usern\\u0061me\":\"a\"}",                            /* an escaped key */
        "{\"username\":\"a\\u0000b\"}",                          /* NUL in a char * field */
        "{\"username\":\"a\",\"age\":-9223372036854775808}",     /* INT64_MIN */
        "{\"username\":\"a\",\"age\":9223372036854775808}",      /* one past INT64_MAX */
        "{\"username\":\"a\",\"age\":20.0}",                     /* a float for an int */
        "{\"username\":\"a\",\"age\":1e2}",
        "{\"username\":\"a\",\"age\":-0}",
        "{\"username\":\"a\",\"age\":007}",
        "{\"username\":\"a\",\"age\":null}",
        "{\"username\":\"a\",\"enabled\":null}",
        "{\"username\":null}",
        "{\"age\":1}",                                           /* required field missing */
        "{}",
        "[]",
        "",
        "   ",
        "\xef\xbb\xbf{\"username\":\"a\"}",                      /* a byte order mark */
        "{\"username\":\"a\"} {}",
        "{\"username\":\"a\"}x",
        "{\"username\":\"a\",}",
        "{\"username\" : \"a\" , \"metadata\" : [ 1 , 2.5 , \"x\" , true , null ] }",
        "{\"username\":\"a\",\"metadata\":{\"k\":{\"deep\":[[[]]]}}}",
        "{\"username\":\"a\",\"metadata\":{\"a\":1,\"a\":2}}",
        "{\"username\":\"a\",\"metadata\":\"\\ud83d\\ude00\"}",
        "{\"username\":\"a\",\"metadata\":\"\\ud83d\"}",         /* a lone surrogate */
        "{\"username\":\"\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80 long enough to need a scan\"}",
        "{\"username\":\"\xc3\"}",                               /* cut UTF-8 */
        "{\"username\":\"a\",\"metadata\":1e400}",
        "{\"username\":\"a\",\"metadata\":123456789012345678901234567890}",
        "{\"username\":\"a\",\"metadata\":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,"
        "20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35]}",  /* wider than the inline kids */
        "{\"username\":\"a\",\"password\":\"a string of more than sixteen bytes, plain\"}",
        "{\"username\":\"a\",\"unknown\":{\"x\":[1,2,{\"y\":\"z\"}]},\"age\":3}",
    };
    char why[1024];
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        size_t n = strlen(inputs[i]);
        char *exact = malloc(n + 1);
        memcpy(exact, inputs[i], n);
        CHECK_MSG(json_decoders_agree(&seed_user_schema, sizeof(seed_user), exact, n, NULL, 0,
                                      why, sizeof why),
                  "input %zu: %s", i, why);
        CHECK_MSG(json_decoders_agree(&flat_all_schema, sizeof(flat_all), exact, n, NULL, 0,
                                      why, sizeof why),
                  "input %zu (flat_all): %s", i, why);
        /* Options: unknown keys rejected, tight depth limits, a small arena. */
        wk_schema_opts strict = {WK_SCHEMA_REJECT_UNKNOWN, 0, NULL};
        wk_schema_opts shallow = {0, 1, NULL};
        wk_schema_opts two = {0, 2, NULL};
        CHECK_MSG(json_decoders_agree(&seed_user_schema, sizeof(seed_user), exact, n, &strict,
                                      0, why, sizeof why),
                  "input %zu, unknown keys rejected: %s", i, why);
        CHECK_MSG(json_decoders_agree(&seed_user_schema, sizeof(seed_user), exact, n, &shallow,
                                      0, why, sizeof why),
                  "input %zu, depth 1: %s", i, why);
        CHECK_MSG(json_decoders_agree(&seed_user_schema, sizeof(seed_user), exact, n, &two, 0,
                                      why, sizeof why),
                  "input %zu, depth 2: %s", i, why);
        CHECK_MSG(json_decoders_agree(&seed_user_schema, sizeof(seed_user), exact, n, NULL, 64,
                                      why, sizeof why),
                  "input %zu, 64-byte arena: %s", i, why);
        free(exact);
    }
}

/* Names the fused plan cannot print as they are (an escape, a control byte, invalid UTF-8)
 * and names it can (non-ASCII): both give the generic path's bytes. */
typedef struct odd_names {
    int32_t quote;
    int32_t accent;
    int32_t tab;
} odd_names;
WK_SCHEMA_DEFINE_STATIC(odd_schema, odd_names, "odd", 1,
    WK_FIELD(odd_names, quote, "say \"hi\"", WK_SK_I32, 0),
    WK_FIELD(odd_names, accent, "gr\xc3\xb6\xc3\x9f" "e", WK_SK_I32, 0),
    WK_FIELD(odd_names, tab, "a\tb", WK_SK_I32, 0));
WK_SCHEMA_DEFINE_STATIC(accent_schema, odd_names, "accent", 1,
    WK_FIELD(odd_names, accent, "gr\xc3\xb6\xc3\x9f" "e", WK_SK_I32, 0),
    WK_FIELD(odd_names, quote, "\xe4\xb8\xad\xe6\x96\x87", WK_SK_I32, 0));

WK_TEST(test_schema_json_fused_paths_handle_names_that_need_escaping)
{
    odd_names o = {1, -2, 3};
    char why[1024];
    CHECK_MSG(json_encoders_agree(&odd_schema, &o, 0, 0, why, sizeof why), "%s", why);
    CHECK_MSG(json_encoders_agree(&accent_schema, &o, 0, 0, why, sizeof why), "%s", why);
    const wk_schema *schemas[2] = {&odd_schema, &accent_schema};
    size_t cases = 0;
    for (int k = 0; k < 2; k++) {
        wk_buf text;
        wk_buf_init(&text, NULL, 0);
        CHECK_OK(wk_schema_encode_json(schemas[k], &o, &text, NULL));
        CHECK_MSG(hostile_inputs_agree(schemas[k], sizeof o, text.data, text.len, 200, &cases,
                                       why, sizeof why),
                  "%s", why);
        odd_names back = {0, 0, 0};
        wk_arena a;
        wk_arena_init(&a, NULL, 0);
        CHECK_OK(wk_schema_decode_json(schemas[k], text.data, text.len, &back, &a, NULL, NULL));
        CHECK_EQ(back.accent, -2);
        wk_arena_free(&a);
        wk_buf_free(&text);
    }
}
