/*
 * cJSON as a peer of the json suite, used the way its documentation shows (parse with length,
 * compact output, build and look up through the public API). Each function does what its
 * wirekit counterpart in bench_json.c does. (One file per peer: jansson and json-c headers
 * declare the same names.)
 */
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_json.h"

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d != NULL) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

uint64_t jb_cjson_parse(void *arg, uint64_t iters)
{
    const jb_input *in = arg;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < iters; i++) {
        cJSON *doc = cJSON_ParseWithLength((const char *)in->data, in->len);
        acc += doc != NULL;
        cJSON_Delete(doc);
    }
    return acc;
}

void *jb_cjson_load(const jb_input *in)
{
    return cJSON_ParseWithLength((const char *)in->data, in->len);
}

void jb_cjson_free(void *doc)
{
    cJSON_Delete(doc);
}

/* Into one buffer reused for every op (cJSON_PrintPreallocated, as wirekit reuses its output
 * buffer), sized once per batch from a first print plus the slack cJSON's documentation asks. */
uint64_t jb_cjson_stringify(void *doc, uint64_t iters)
{
    char *first = cJSON_PrintUnformatted(doc);
    if (first == NULL) {
        return 0;
    }
    size_t cap = strlen(first) + 64;
    cJSON_free(first);
    char *buf = malloc(cap);
    uint64_t acc = 0;
    for (uint64_t i = 0; buf != NULL && i < iters; i++) {
        if (cJSON_PrintPreallocated(doc, buf, (int)cap, 0)) {
            acc += (uint8_t)buf[0] + 1;
        }
    }
    free(buf);
    return acc;
}

char *jb_cjson_dump(void *doc, size_t *len)
{
    char *s = cJSON_PrintUnformatted(doc);
    *len = strlen(s);
    char *d = dup_n(s, *len);
    cJSON_free(s);
    return d;
}

uint64_t jb_cjson_seed_encode(void *arg, uint64_t iters)
{
    jb_seed_ctx *c = arg;
    const jb_seed *s = &c->in;
    for (uint64_t i = 0; i < iters; i++) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "username", s->username);
        cJSON_AddStringToObject(root, "password", s->password);
        cJSON_AddNumberToObject(root, "age", (double)s->age);
        cJSON_AddBoolToObject(root, "enabled", s->enabled);
        cJSON *meta = cJSON_AddObjectToObject(root, "metadata");
        cJSON_AddStringToObject(meta, "hello", s->hello);
        cJSON_AddNumberToObject(meta, "int", (double)s->meta_int);
        cJSON_PrintPreallocated(root, c->buf, (int)sizeof c->buf, 0);
        cJSON_Delete(root);
    }
    c->len = strlen(c->buf);
    return c->len;
}

static void cjson_str(cJSON *o, const char *key, char *dst, size_t cap)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    const char *s = cJSON_GetStringValue(v);
    if (s != NULL) {
        jb_copy(dst, cap, s, strlen(s));
    }
}

uint64_t jb_cjson_seed_decode(void *arg, uint64_t iters)
{
    jb_seed_ctx *c = arg;
    jb_seed *s = &c->out;
    for (uint64_t i = 0; i < iters; i++) {
        cJSON *root = cJSON_ParseWithLength((const char *)c->json.data, c->json.len);
        cjson_str(root, "username", s->username, sizeof s->username);
        cjson_str(root, "password", s->password, sizeof s->password);
        s->age = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(root, "age"));
        s->enabled = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "enabled"));
        cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "metadata");
        cjson_str(meta, "hello", s->hello, sizeof s->hello);
        s->meta_int = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(meta, "int"));
        cJSON_Delete(root);
    }
    return (uint64_t)s->age;
}

const char *jb_cjson_version(void)
{
    static char v[32];
    snprintf(v, sizeof v, "%d.%d.%d", CJSON_VERSION_MAJOR, CJSON_VERSION_MINOR,
             CJSON_VERSION_PATCH);
    return v;
}
