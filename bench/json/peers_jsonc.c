/*
 * json-c as a peer of the json suite, used the way its documentation shows (parse with length,
 * compact output, build and look up through the public API). Each function does what its
 * wirekit counterpart in bench_json.c does. (One file per peer: jansson and json-c headers
 * declare the same names.)
 */
#include <json.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_json.h"

uint64_t jb_jsonc_parse(void *arg, uint64_t iters)
{
    const jb_input *in = arg;
    uint64_t acc = 0;
    json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
    json_tokener_set_flags(tok, JSON_TOKENER_VALIDATE_UTF8);
    for (uint64_t i = 0; i < iters; i++) {
        json_tokener_reset(tok);
        json_object *doc = json_tokener_parse_ex(tok, (const char *)in->data, (int)in->len);
        acc += doc != NULL;
        json_object_put(doc);
    }
    json_tokener_free(tok);
    return acc;
}

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d != NULL) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

void *jb_jsonc_load(const jb_input *in)
{
    json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
    json_tokener_set_flags(tok, JSON_TOKENER_VALIDATE_UTF8);
    json_object *doc = json_tokener_parse_ex(tok, (const char *)in->data, (int)in->len);
    json_tokener_free(tok);
    return doc;
}

void jb_jsonc_free(void *doc)
{
    json_object_put(doc);
}

#define JSONC_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

uint64_t jb_jsonc_stringify(void *doc, uint64_t iters)
{
    uint64_t acc = 0;
    for (uint64_t i = 0; i < iters; i++) {
        size_t n;
        const char *s = json_object_to_json_string_length(doc, JSONC_FLAGS, &n);
        acc += n + (uint8_t)s[0];
    }
    return acc;
}

char *jb_jsonc_dump(void *doc, size_t *len)
{
    const char *s = json_object_to_json_string_length(doc, JSONC_FLAGS, len);
    return dup_n(s, *len);
}

uint64_t jb_jsonc_seed_encode(void *arg, uint64_t iters)
{
    jb_seed_ctx *c = arg;
    const jb_seed *s = &c->in;
    for (uint64_t i = 0; i < iters; i++) {
        json_object *root = json_object_new_object();
        json_object_object_add(root, "username", json_object_new_string(s->username));
        json_object_object_add(root, "password", json_object_new_string(s->password));
        json_object_object_add(root, "age", json_object_new_int64(s->age));
        json_object_object_add(root, "enabled", json_object_new_boolean(s->enabled));
        json_object *meta = json_object_new_object();
        json_object_object_add(meta, "hello", json_object_new_string(s->hello));
        json_object_object_add(meta, "int", json_object_new_int64(s->meta_int));
        json_object_object_add(root, "metadata", meta);
        size_t n;
        const char *t = json_object_to_json_string_length(root, JSONC_FLAGS, &n);
        memcpy(c->buf, t, n);
        c->len = n;
        json_object_put(root);
    }
    return c->len;
}

static void jsonc_str(json_object *o, const char *key, char *dst, size_t cap)
{
    json_object *v;
    if (json_object_object_get_ex(o, key, &v)) {
        jb_copy(dst, cap, json_object_get_string(v), (size_t)json_object_get_string_len(v));
    }
}

uint64_t jb_jsonc_seed_decode(void *arg, uint64_t iters)
{
    jb_seed_ctx *c = arg;
    jb_seed *s = &c->out;
    json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
    json_tokener_set_flags(tok, JSON_TOKENER_VALIDATE_UTF8);
    for (uint64_t i = 0; i < iters; i++) {
        json_tokener_reset(tok);
        json_object *root = json_tokener_parse_ex(tok, (const char *)c->json.data,
                                                  (int)c->json.len);
        json_object *v, *meta;
        jsonc_str(root, "username", s->username, sizeof s->username);
        jsonc_str(root, "password", s->password, sizeof s->password);
        if (json_object_object_get_ex(root, "age", &v)) {
            s->age = json_object_get_int64(v);
        }
        if (json_object_object_get_ex(root, "enabled", &v)) {
            s->enabled = json_object_get_boolean(v);
        }
        if (json_object_object_get_ex(root, "metadata", &meta)) {
            jsonc_str(meta, "hello", s->hello, sizeof s->hello);
            if (json_object_object_get_ex(meta, "int", &v)) {
                s->meta_int = json_object_get_int64(v);
            }
        }
        json_object_put(root);
    }
    json_tokener_free(tok);
    return (uint64_t)s->age;
}

const char *jb_jsonc_version(void)
{
    return JSON_C_VERSION;
}
