/* Shared declarations of the json benchmark suite: inputs, the seed struct, peer adapters. */
#ifndef WK_BENCH_JSON_H
#define WK_BENCH_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jb_input {
    const uint8_t *data;
    size_t len;
} jb_input;

/* The seed record as a C struct (SEEDS.md section 3). */
typedef struct jb_seed {
    char username[32];
    char password[32];
    int64_t age;
    bool enabled;
    char hello[32];
    int64_t meta_int;
} jb_seed;

#define JB_SEED_JSON                                                                      \
    "{\"username\":\"root\",\"password\":\"secret\",\"age\":20,\"enabled\":true,"          \
    "\"metadata\":{\"hello\":\"world\",\"int\":10}}"

/* Where seed encoders write; seed decoders fill `out`. */
typedef struct jb_seed_ctx {
    jb_seed in;
    jb_seed out;
    char buf[256];
    size_t len;
    jb_input json;
} jb_seed_ctx;

/* Copies up to cap-1 bytes and a NUL. */
static inline void jb_copy(char *dst, size_t cap, const char *s, size_t n)
{
    size_t k = n < cap - 1 ? n : cap - 1;
    for (size_t i = 0; i < k; i++) {
        dst[i] = s[i];
    }
    dst[k] = 0;
}

/* C peers (peers_c.c). `tree` functions take a parsed document made by *_load. */
uint64_t jb_cjson_parse(void *arg, uint64_t iters);
uint64_t jb_jansson_parse(void *arg, uint64_t iters);
uint64_t jb_jsonc_parse(void *arg, uint64_t iters);
void *jb_cjson_load(const jb_input *in);
void *jb_jansson_load(const jb_input *in);
void *jb_jsonc_load(const jb_input *in);
void jb_cjson_free(void *doc);
void jb_jansson_free(void *doc);
void jb_jsonc_free(void *doc);
uint64_t jb_cjson_stringify(void *doc, uint64_t iters);
uint64_t jb_jansson_stringify(void *doc, uint64_t iters);
uint64_t jb_jsonc_stringify(void *doc, uint64_t iters);
/* One stringification into a malloc'd buffer (for output checks). */
char *jb_cjson_dump(void *doc, size_t *len);
char *jb_jansson_dump(void *doc, size_t *len);
char *jb_jsonc_dump(void *doc, size_t *len);
uint64_t jb_cjson_seed_encode(void *ctx, uint64_t iters);
uint64_t jb_jansson_seed_encode(void *ctx, uint64_t iters);
uint64_t jb_jsonc_seed_encode(void *ctx, uint64_t iters);
uint64_t jb_cjson_seed_decode(void *ctx, uint64_t iters);
uint64_t jb_jansson_seed_decode(void *ctx, uint64_t iters);
uint64_t jb_jsonc_seed_decode(void *ctx, uint64_t iters);

/* Versions from the peers' headers, for the table's build notes. */
const char *jb_cjson_version(void);
const char *jb_jansson_version(void);
const char *jb_jsonc_version(void);
const char *jb_rapidjson_version(void);
const char *jb_simdjson_version(void);

/* Validate-only peers: yajl (peers_yajl.c), rapidjson's SAX reader (peers_cpp.cpp). */
uint64_t jb_yajl_validate(void *arg, uint64_t iters);
const char *jb_yajl_version(void);
uint64_t jb_rapidjson_validate(void *arg, uint64_t iters);

/* C++ peers (peers_cpp.cpp). */
uint64_t jb_rapidjson_parse(void *arg, uint64_t iters);
void *jb_rapidjson_load(const jb_input *in);
void jb_rapidjson_free(void *doc);
uint64_t jb_rapidjson_stringify(void *doc, uint64_t iters);
char *jb_rapidjson_dump(void *doc, size_t *len);
uint64_t jb_rapidjson_seed_encode(void *ctx, uint64_t iters);
uint64_t jb_rapidjson_seed_decode(void *ctx, uint64_t iters);

void *jb_simdjson_prepare(const jb_input *in); /* padded copy + reusable parser */
void jb_simdjson_release(void *state);
uint64_t jb_simdjson_parse(void *state, uint64_t iters);
bool jb_simdjson_ok(void *state);
uint64_t jb_simdjson_stringify(void *state, uint64_t iters); /* of the last parsed doc */
char *jb_simdjson_dump(void *state, size_t *len);
uint64_t jb_simdjson_seed_decode(void *state, uint64_t iters); /* state from seed JSON */
void jb_simdjson_seed_result(void *state, jb_seed *out);

#ifdef __cplusplus
}
#endif
#endif
