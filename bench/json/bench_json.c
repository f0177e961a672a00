/*
 * Suite `json`: wirekit's JSON codec against cJSON, jansson, json-c, yajl, rapidjson and
 * simdjson.
 *
 * Cases: parse to a tree, validate only (no tree: wk_json_validate against yajl without
 * callbacks and rapidjson's SAX reader) and stringify from a tree (compact) for each corpus
 * file, MB/s of the input (parse, validate) or output (stringify); the seed record (101
 * bytes) encoded from a C struct and decoded back into one, by hand through each library's
 * API. Checks: every parse and validation succeeds; every peer's stringified output, read back by wirekit, is the same tree as
 * wirekit's (cJSON excepted: it keeps numbers as doubles, so 64-bit ids change; its output
 * must still parse and keep the top-level shape); every seed encoding is the exact 101 bytes
 * and every seed decoding gives the original struct.
 */
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_json.h"
#include "wirekit/json.h"

/* ---- wirekit ------------------------------------------------------------------------------ */

typedef struct wk_parse_ctx {
    jb_input in;
    wk_arena arena;
    wk_value *root;
} wk_parse_ctx;

static uint64_t wk_parse(void *arg, uint64_t iters)
{
    wk_parse_ctx *c = arg;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < iters; i++) {
        wk_arena_reset(&c->arena);
        wk_status st =
            wk_json_decode_value(c->in.data, c->in.len, NULL, &c->arena, &c->root, NULL, NULL);
        acc += st == WK_OK;
    }
    return acc;
}

static uint64_t wk_validate(void *arg, uint64_t iters)
{
    const jb_input *in = arg;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < iters; i++) {
        acc += wk_json_validate(in->data, in->len, NULL, NULL, NULL) == WK_OK;
    }
    return acc;
}

typedef struct wk_write_ctx {
    const wk_value *root;
    wk_buf out;
} wk_write_ctx;

static uint64_t wk_stringify(void *arg, uint64_t iters)
{
    wk_write_ctx *c = arg;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < iters; i++) {
        wk_buf_clear(&c->out);
        wk_json_encode_value(c->root, NULL, &c->out, NULL);
        acc += c->out.len;
    }
    return acc;
}

static uint64_t wk_seed_encode(void *arg, uint64_t iters)
{
    jb_seed_ctx *c = arg;
    const jb_seed *s = &c->in;
    for (uint64_t i = 0; i < iters; i++) {
        wk_buf out;
        wk_buf_init_fixed(&out, c->buf, sizeof c->buf);
        wk_json_writer w;
        wk_json_writer_init(&w, &out, NULL);
        wk_json_writer_begin_map(&w);
        wk_json_writer_key(&w, "username", 8);
        wk_json_writer_str(&w, s->username, strlen(s->username));
        wk_json_writer_key(&w, "password", 8);
        wk_json_writer_str(&w, s->password, strlen(s->password));
        wk_json_writer_key(&w, "age", 3);
        wk_json_writer_int(&w, s->age);
        wk_json_writer_key(&w, "enabled", 7);
        wk_json_writer_bool(&w, s->enabled);
        wk_json_writer_key(&w, "metadata", 8);
        wk_json_writer_begin_map(&w);
        wk_json_writer_key(&w, "hello", 5);
        wk_json_writer_str(&w, s->hello, strlen(s->hello));
        wk_json_writer_key(&w, "int", 3);
        wk_json_writer_int(&w, s->meta_int);
        wk_json_writer_end(&w);
        wk_json_writer_end(&w);
        c->len = wk_json_writer_finish(&w, NULL) == WK_OK ? out.len : 0;
    }
    return c->len;
}

static bool name_is(const char *k, size_t kn, const char *want, size_t n)
{
    return kn == n && memcmp(k, want, n) == 0;
}

/* Reads the seed object's fields into `s` with the typed reads (keys in any order, unknown
 * keys and wrong types rejected). */
static bool wk_seed_read(wk_json_reader *r, jb_seed *s)
{
    const char *k, *v;
    size_t kn, vn;
    wk_status st;
    if (wk_json_reader_begin_map(r) != WK_OK) {
        return false;
    }
    while ((st = wk_json_reader_key(r, &k, &kn)) == WK_OK) {
        if (name_is(k, kn, "username", 8)) {
            if (wk_json_reader_str(r, &v, &vn) != WK_OK) {
                return false;
            }
            jb_copy(s->username, sizeof s->username, v, vn);
        } else if (name_is(k, kn, "password", 8)) {
            if (wk_json_reader_str(r, &v, &vn) != WK_OK) {
                return false;
            }
            jb_copy(s->password, sizeof s->password, v, vn);
        } else if (name_is(k, kn, "age", 3)) {
            if (wk_json_reader_int(r, &s->age) != WK_OK) {
                return false;
            }
        } else if (name_is(k, kn, "enabled", 7)) {
            if (wk_json_reader_bool(r, &s->enabled) != WK_OK) {
                return false;
            }
        } else if (name_is(k, kn, "metadata", 8)) {
            if (wk_json_reader_begin_map(r) != WK_OK) {
                return false;
            }
            while ((st = wk_json_reader_key(r, &k, &kn)) == WK_OK) {
                if (name_is(k, kn, "hello", 5)) {
                    if (wk_json_reader_str(r, &v, &vn) != WK_OK) {
                        return false;
                    }
                    jb_copy(s->hello, sizeof s->hello, v, vn);
                } else if (name_is(k, kn, "int", 3)) {
                    if (wk_json_reader_int(r, &s->meta_int) != WK_OK) {
                        return false;
                    }
                } else {
                    return false;
                }
            }
            if (st != WK_ERR_STATE || wk_json_reader_end(r) != WK_OK) {
                return false;
            }
        } else {
            return false;
        }
    }
    wk_event end;
    return st == WK_ERR_STATE && wk_json_reader_end(r) == WK_OK &&
           wk_json_reader_next(r, &end) == WK_ERR_EOF;
}

static uint64_t wk_seed_decode(void *arg, uint64_t iters)
{
    jb_seed_ctx *c = arg;
    uint64_t ok = 0;
    for (uint64_t i = 0; i < iters; i++) {
        wk_json_reader r;
        wk_json_reader_init(&r, c->json.data, c->json.len, NULL, NULL);
        ok += wk_seed_read(&r, &c->out);
        wk_json_reader_free(&r);
    }
    return ok;
}

/* ---- the suite ---------------------------------------------------------------------------- */

static const jb_seed SEED = {"root", "secret", 20, true, "world", 10};

static bool seed_equal(const jb_seed *a, const jb_seed *b)
{
    return strcmp(a->username, b->username) == 0 && strcmp(a->password, b->password) == 0 &&
           a->age == b->age && a->enabled == b->enabled && strcmp(a->hello, b->hello) == 0 &&
           a->meta_int == b->meta_int;
}

/* A peer's compact output must read back as wirekit's tree. */
static void check_dump(wk_bench *b, const char *what, const char *impl, char *dump, size_t n,
                       const wk_value *want, bool exact)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    wk_value *v;
    if (dump == NULL || wk_json_decode_value(dump, n, NULL, &a, &v, NULL, NULL) != WK_OK) {
        wk_bench_fail(b, "%s: %s output does not parse", what, impl);
    } else if (exact ? !wk_value_equal(v, want, NULL)
                     : (v->type != want->type || v->len != want->len)) {
        wk_bench_fail(b, "%s: %s output is not the same document", what, impl);
    }
    wk_arena_free(&a);
    free(dump);
}

/* What each peer does differently from wirekit in the parse cases (footnotes in the table). */
#define NOTE_CJSON_PARSE "no UTF-8 validation (cJSON has no option); numbers as doubles; a malloc per node"
#define NOTE_JANSSON_PARSE "validates UTF-8; a malloc per node (no arena in jansson's API)"
#define NOTE_JSONC_PARSE "JSON_TOKENER_VALIDATE_UTF8, tokener reused; a malloc per node (no arena)"
#define NOTE_RAPIDJSON_PARSE "kParseValidateEncodingFlag + kParseFullPrecisionFlag; MemoryPoolAllocator on one buffer, cleared per op"
#define NOTE_SIMDJSON_PARSE "validates UTF-8; dom::parser reused; reads a padded copy of the input"
#define NOTE_WK_VALIDATE "wk_json_validate: the parser's checks (UTF-8, escapes, depth 512), numbers checked but not converted, nothing built"
#define NOTE_YAJL_VALIDATE "yajl_parse without callbacks (grammar, UTF-8; nothing built or converted); a handle per document; no depth limit"
#define NOTE_RAPIDJSON_VALIDATE "SAX Reader, do-nothing handler, kParseValidateEncodingFlag | kParseNumbersAsStringsFlag (no conversion); escaped strings still decoded onto its stack; no depth limit"

/* Validate only: wirekit and the peers that can check a document without building one. */
static void validate_case(wk_bench *b, const jb_input *in, const char *name)
{
    wk_bench_spec specs[] = {
        {name, "wirekit", wk_validate, (void *)in, 0, in->len, NOTE_WK_VALIDATE, 0},
        {name, "yajl", jb_yajl_validate, (void *)in, 0, in->len, NOTE_YAJL_VALIDATE, 0},
        {name, "rapidjson", jb_rapidjson_validate, (void *)in, 0, in->len,
         NOTE_RAPIDJSON_VALIDATE, 0}};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        if (specs[i].fn(specs[i].arg, 1) != 1) {
            wk_bench_fail(b, "%s: %s rejects the document", name, specs[i].impl);
            continue;
        }
        wk_bench_add(b, &specs[i]);
    }
    wk_bench_flush(b);
}

static void corpus_cases(wk_bench *b, const char *file, const char *parse_name,
                         const char *validate_name, const char *write_name)
{
    jb_input in;
    uint8_t *data = wk_bench_read_data(b, file, &in.len);
    if (data == NULL) {
        return;
    }
    in.data = data;
    size_t n = in.len;

    /* parse */
    wk_parse_ctx pc = {in, {0}, NULL};
    wk_arena_init(&pc.arena, NULL, 0);
    wk_parse(&pc, 1);
    if (pc.root == NULL) {
        wk_bench_fail(b, "%s: wirekit failed to parse", parse_name);
        wk_arena_free(&pc.arena);
        free(data);
        return;
    }
    void *simd = jb_simdjson_prepare(&in);
    wk_bench_spec parsers[] = {
        {parse_name, "wirekit", wk_parse, &pc, 0, n, "validates UTF-8; arena reset per op", 0},
        {parse_name, "cJSON", jb_cjson_parse, &in, 0, n, NOTE_CJSON_PARSE, 0},
        {parse_name, "jansson", jb_jansson_parse, &in, 0, n, NOTE_JANSSON_PARSE, 0},
        {parse_name, "json-c", jb_jsonc_parse, &in, 0, n, NOTE_JSONC_PARSE, 0},
        {parse_name, "rapidjson", jb_rapidjson_parse, &in, 0, n, NOTE_RAPIDJSON_PARSE, 0},
        {parse_name, "simdjson", jb_simdjson_parse, simd, 0, n, NOTE_SIMDJSON_PARSE, 0}};
    for (size_t i = 0; i < sizeof parsers / sizeof parsers[0]; i++) {
        if (parsers[i].fn(parsers[i].arg, 1) != 1) {
            wk_bench_fail(b, "%s: %s failed to parse", parse_name, parsers[i].impl);
            continue;
        }
        wk_bench_add(b, &parsers[i]);
    }
    wk_bench_flush(b);
    validate_case(b, &in, validate_name);

    /* stringify from each library's own tree */
    wk_parse(&pc, 1);
    wk_write_ctx wc = {pc.root, {0}};
    wk_buf_init(&wc.out, NULL, 0);
    wk_stringify(&wc, 1);
    size_t out_len = wc.out.len;

    void *cj = jb_cjson_load(&in);
    void *ja = jb_jansson_load(&in);
    void *jc = jb_jsonc_load(&in);
    void *rj = jb_rapidjson_load(&in);
    jb_simdjson_parse(simd, 1);
    struct {
        const char *impl;
        char *(*dump)(void *, size_t *);
        void *doc;
        bool exact;
    } dumps[] = {{"cJSON", jb_cjson_dump, cj, false},
                 {"jansson", jb_jansson_dump, ja, true},
                 {"json-c", jb_jsonc_dump, jc, true},
                 {"rapidjson", jb_rapidjson_dump, rj, true},
                 {"simdjson", jb_simdjson_dump, simd, true}};
    for (size_t i = 0; i < sizeof dumps / sizeof dumps[0]; i++) {
        size_t dn = 0;
        char *d = dumps[i].dump(dumps[i].doc, &dn);
        check_dump(b, write_name, dumps[i].impl, d, dn, pc.root, dumps[i].exact);
    }
    wk_bench_spec w2[] = {
        {write_name, "wirekit", wk_stringify, &wc, 0, out_len, "output buffer reused", 0},
        {write_name, "cJSON", jb_cjson_stringify, cj, 0, out_len,
         "numbers as doubles; cJSON_PrintPreallocated into a reused buffer", 0},
        {write_name, "jansson", jb_jansson_stringify, ja, 0, out_len,
         "json_dumpb into a reused buffer", 0},
        {write_name, "json-c", jb_jsonc_stringify, jc, 0, out_len,
         "printbuf reused; doubles copied from their source text, not formatted", 0},
        {write_name, "rapidjson", jb_rapidjson_stringify, rj, 0, out_len,
         "StringBuffer reused", 0},
        {write_name, "simdjson", jb_simdjson_stringify, simd, 0, out_len,
         "simdjson::to_string: a new std::string per op", 0},
    };
    for (size_t i = 0; i < sizeof w2 / sizeof w2[0]; i++) {
        wk_bench_add(b, &w2[i]);
    }
    wk_bench_flush(b);
    jb_cjson_free(cj);
    jb_jansson_free(ja);
    jb_jsonc_free(jc);
    jb_rapidjson_free(rj);
    jb_simdjson_release(simd);
    wk_buf_free(&wc.out);
    wk_arena_free(&pc.arena);
    free(data);
}

static void seed_cases(wk_bench *b)
{
    static const char want[] = JB_SEED_JSON;
    const size_t want_len = sizeof want - 1;
    uint64_t iters = 0; /* calibrated: the slowest peers take microseconds per op */
    struct {
        const char *impl;
        wk_bench_fn fn;
        const char *note;
    } enc[] = {{"wirekit", wk_seed_encode, "wk_json_writer into a fixed buffer"},
               {"cJSON", jb_cjson_seed_encode, "builds a cJSON tree, then prints it"},
               {"jansson", jb_jansson_seed_encode, "builds a json_t tree, then dumps it"},
               {"json-c", jb_jsonc_seed_encode, "builds a json_object tree, then prints it"},
               {"rapidjson", jb_rapidjson_seed_encode, "Writer<StringBuffer>, streaming"}};
    enum { NENC = sizeof enc / sizeof enc[0] };
    jb_seed_ctx ectx[NENC];
    for (size_t i = 0; i < NENC; i++) {
        jb_seed_ctx *c = &ectx[i];
        memset(c, 0, sizeof *c);
        c->in = SEED;
        enc[i].fn(c, 1);
        if (c->len != want_len || memcmp(c->buf, want, want_len) != 0) {
            wk_bench_fail(b, "seed encode json: %s wrote %zu bytes '%.*s', want the 101 bytes",
                          enc[i].impl, c->len, (int)c->len, c->buf);
            continue;
        }
        wk_bench_add(b, &(wk_bench_spec){"seed encode json", enc[i].impl, enc[i].fn, c, iters,
                                         want_len, enc[i].note, 0});
    }
    wk_bench_flush(b);
    wk_bench_say(b, "seed encode json: simdjson has no writer (parse only), not measured");

    jb_input in = {(const uint8_t *)want, want_len};
    struct {
        const char *impl;
        wk_bench_fn fn;
        const char *note;
    } dec[] = {{"wirekit", wk_seed_decode, "typed reads, no tree; validates UTF-8"},
               {"cJSON", jb_cjson_seed_decode, "tree, then look-ups; no UTF-8 validation"},
               {"jansson", jb_jansson_seed_decode, "tree, then look-ups"},
               {"json-c", jb_jsonc_seed_decode, "tree, then look-ups; validates UTF-8"},
               {"rapidjson", jb_rapidjson_seed_decode,
                "tree on a pooled buffer, then look-ups; validates UTF-8"}};
    enum { NDEC = sizeof dec / sizeof dec[0] };
    jb_seed_ctx dctx[NDEC];
    for (size_t i = 0; i < NDEC; i++) {
        jb_seed_ctx *c = &dctx[i];
        memset(c, 0, sizeof *c);
        c->json = in;
        dec[i].fn(c, 1);
        if (!seed_equal(&c->out, &SEED)) {
            wk_bench_fail(b, "seed decode json: %s did not read the record back", dec[i].impl);
            continue;
        }
        wk_bench_add(b, &(wk_bench_spec){"seed decode json", dec[i].impl, dec[i].fn, c, iters,
                                         want_len, dec[i].note, 0});
    }
    void *simd = jb_simdjson_prepare(&in);
    jb_simdjson_seed_decode(simd, 1);
    jb_seed got;
    jb_simdjson_seed_result(simd, &got);
    if (!seed_equal(&got, &SEED)) {
        wk_bench_fail(b, "seed decode json: simdjson did not read the record back");
    } else {
        wk_bench_add(b, &(wk_bench_spec){"seed decode json", "simdjson", jb_simdjson_seed_decode,
                                         simd, iters, want_len,
                                         "DOM on a reused parser, then look-ups", 0});
    }
    wk_bench_flush(b);
    jb_simdjson_release(simd);
}

int wk_bench_suite_json(wk_bench *b)
{
    static char builds[6][160];
    const char *dist = "Debian shared library, distribution build (-O2)";
    snprintf(builds[0], sizeof builds[0], "cJSON %s: %s", jb_cjson_version(), dist);
    snprintf(builds[1], sizeof builds[1], "jansson %s: %s", jb_jansson_version(), dist);
    snprintf(builds[2], sizeof builds[2], "json-c %s: %s", jb_jsonc_version(), dist);
    snprintf(builds[3], sizeof builds[3],
             "rapidjson %s: header-only, compiled here with wirekit's compiler and flags",
             jb_rapidjson_version());
    snprintf(builds[4], sizeof builds[4], "simdjson %s: %s, runtime CPU dispatch",
             jb_simdjson_version(), dist);
    snprintf(builds[5], sizeof builds[5], "yajl %s: %s", jb_yajl_version(), dist);
    static const char *const impls[6] = {"cJSON",     "jansson",  "json-c",
                                         "rapidjson", "simdjson", "yajl"};
    for (int i = 0; i < 6; i++) {
        wk_bench_peer(b, impls[i], builds[i]);
    }
    wk_bench_say(b, "validate: simdjson has no validate-only call (its DOM parse is the parse "
                    "row; On Demand checks only what is read), cJSON, jansson and json-c none either");
    corpus_cases(b, "twitter.json", "parse twitter.json", "validate twitter.json",
                 "stringify twitter.json");
    corpus_cases(b, "citm_catalog.json", "parse citm_catalog.json", "validate citm_catalog.json",
                 "stringify citm_catalog.json");
    corpus_cases(b, "canada.json", "parse canada.json", "validate canada.json",
                 "stringify canada.json");
    seed_cases(b);
    return 0;
}
