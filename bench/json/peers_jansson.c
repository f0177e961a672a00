/*
 * jansson as a peer of the json suite, used the way its documentation shows (parse with length,
 * compact output, build and look up through the public API). Each function does what its
 * wirekit counterpart in bench_json.c does. (One file per peer: jansson and json-c headers
 * declare the same names.)
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_json.h"

uint64_t jb_jansson_parse(void *arg, uint64_t iters)
{
    const jb_input *in = arg;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < iters; i++) {
        json_error_t err;
        json_t *doc = json_loadb((const char *)in->data, in->len, 0, &err);
        acc += doc != NULL;
        json_decref(doc);
    }
    return acc;
}

void *jb_jansson_load(const jb_input *in)
{
    json_error_t err;
    return json_loadb((const char *)in->data, in->len, 0, &err);
}

void jb_jansson_free(void *doc)
{
    json_decref(doc);
}

/* Into one buffer reused for every op (json_dumpb, as wirekit reuses its output buffer). */
uint64_t jb_jansson_stringify(void *doc, uint64_t iters)
{
    size_t cap = json_dumpb(doc, NULL, 0, JSON_COMPACT);
    char *buf = malloc(cap + 1);
    uint64_t acc = 0;
    for (uint64_t i = 0; buf != NULL && i < iters; i++) {
        acc += json_dumpb(doc, buf, cap, JSON_COMPACT);
    }
    free(buf);
    return acc;
}

char *jb_jansson_dump(void *doc, size_t *len)
{
    char *s = json_dumps(doc, JSON_COMPACT);
    *len = strlen(s);
    return s;
}

uint64_t jb_jansson_seed_encode(void *arg, uint64_t iters)
{
    jb_seed_ctx *c = arg;
    const jb_seed *s = &c->in;
    for (uint64_t i = 0; i < iters; i++) {
        json_t *root = json_pack("{s:s,s:s,s:I,s:b,s:{s:s,s:I}}", "username", s->username,
                                 "password", s->password, "age", (json_int_t)s->age, "enabled",
                                 (int)s->enabled, "metadata", "hello", s->hello, "int",
                                 (json_int_t)s->meta_int);
        c->len = json_dumpb(root, c->buf, sizeof c->buf, JSON_COMPACT);
        json_decref(root);
    }
    return c->len;
}

uint64_t jb_jansson_seed_decode(void *arg, uint64_t iters)
{
    jb_seed_ctx *c = arg;
    jb_seed *s = &c->out;
    for (uint64_t i = 0; i < iters; i++) {
        json_error_t err;
        json_t *root = json_loadb((const char *)c->json.data, c->json.len, 0, &err);
        const char *u = NULL, *p = NULL, *h = NULL;
        json_int_t age = 0, mi = 0;
        int en = 0;
        json_unpack(root, "{s:s,s:s,s:I,s:b,s:{s:s,s:I}}", "username", &u, "password", &p,
                    "age", &age, "enabled", &en, "metadata", "hello", &h, "int", &mi);
        jb_copy(s->username, sizeof s->username, u, strlen(u));
        jb_copy(s->password, sizeof s->password, p, strlen(p));
        jb_copy(s->hello, sizeof s->hello, h, strlen(h));
        s->age = age;
        s->enabled = en != 0;
        s->meta_int = mi;
        json_decref(root);
    }
    return (uint64_t)s->age;
}

const char *jb_jansson_version(void)
{
    return JANSSON_VERSION;
}
