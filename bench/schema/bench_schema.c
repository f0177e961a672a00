/*
 * The seed benchmark (SEEDS.md section 3): the record {username:"root", password:"secret",
 * age:20, enabled:true, metadata:{hello:"world", int:10}} serialized and deserialized
 * 1,000,000 times, MessagePack and JSON, with its sizes (72 and 101 bytes, checked).
 *
 * wirekit goes through the schema descriptor (tests/unit/schema/seed_user.h): the fused
 * paths, MessagePack (wk_schema_encode_mp / _decode_mp) and JSON (the JSON serializer, i.e.
 * wk_schema_encode_json / _decode_json), and the generic event paths ("wirekit-generic":
 * descriptor -> events -> writer, reader -> events -> descriptor). The peers do the same
 * record by hand:
 *   msgpuck    mp_encode_* into a buffer; decode: mp_check, then mp_decode_* into the struct,
 *              keys matched by hand, metadata's two known keys only, strings as views;
 *   msgpack-c  msgpack_pack_* into an sbuffer; decode: msgpack_unpack into a zone (its object
 *              tree is the free-form metadata), fields extracted by key, strings as views;
 *   cJSON      builds the object tree and prints it into a preallocated buffer; decode:
 *              cJSON_Parse, fields extracted, metadata kept as the cJSON subtree;
 *   rapidjson  the json suite's adapters (bench/json/peers_cpp.cpp): Writer<StringBuffer>;
 *              decode: DOM on a pooled buffer with UTF-8 validation, fields copied out.
 * wirekit's decode does more than the peers: it copies every string into the arena (the
 * struct holds NUL-terminated char *) and builds metadata as a wk_value tree, also copied.
 * Every implementation's output bytes are checked against wirekit's. The seed's own Go
 * program (vmihailenco/msgpack v5, encoding/json, gob) runs after them as out-of-process peer
 * rows (bench_schema_go.c).
 */
#include <cJSON.h>
#include <msgpack.h>
#include <msgpuck.h>
#include <stdlib.h>
#include <string.h>

#include "../../tests/unit/schema/seed_user.h"
#include "../json/bench_json.h"
#include "bench.h"
#include "bench_schema_go.h"
#include "wirekit/msgpack.h"

#include "wirekit/json.h"

#define SEED_ITERS 1000000u

typedef struct ctx {
    seed_user u;
    wk_pair pairs[2];
    wk_buf out;
    wk_arena arena;
    uint8_t mp[128];
    size_t mp_len;
    char json[256];
    size_t json_len;
    char scratch[256];
    msgpack_sbuffer sb;
    msgpack_packer pk;
    msgpack_zone zone;
} ctx;

/* ---- wirekit ------------------------------------------------------------------------------ */

static uint64_t wk_enc_fused(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        wk_buf_clear(&c->out);
        wk_schema_encode_mp(&seed_user_schema, &c->u, &c->out, NULL);
        sum += c->out.len;
        wk_bench_escape(c->out.data);
    }
    return sum;
}

static uint64_t wk_enc_generic(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        wk_buf_clear(&c->out);
        wk_mp_writer w;
        wk_mp_writer_init(&w, &c->out);
        wk_sink sink;
        wk_mp_writer_sink(&w, &sink);
        wk_schema_encode(&seed_user_schema, &c->u, &sink, NULL);
        wk_mp_writer_finish(&w, NULL);
        sum += c->out.len;
        wk_bench_escape(c->out.data);
    }
    return sum;
}

static uint64_t wk_dec_fused(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        wk_arena_reset(&c->arena);
        seed_user u;
        memset(&u, 0, sizeof u);
        if (wk_schema_decode_mp(&seed_user_schema, c->mp, c->mp_len, &u, &c->arena, NULL,
                                NULL) == WK_OK) {
            sum += (uint64_t)u.age + u.metadata.len;
        }
        wk_bench_escape(&u);
    }
    return sum;
}

static uint64_t wk_dec_generic(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        wk_arena_reset(&c->arena);
        seed_user u;
        memset(&u, 0, sizeof u);
        wk_mp_reader r;
        wk_mp_reader_init(&r, c->mp, c->mp_len, NULL);
        wk_source src;
        wk_mp_reader_source(&r, &src);
        if (wk_schema_decode(&seed_user_schema, &src, &u, &c->arena, NULL, NULL) == WK_OK) {
            sum += (uint64_t)u.age + u.metadata.len;
        }
        wk_bench_escape(&u);
    }
    return sum;
}

static uint64_t wk_enc_json(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    const wk_serializer *ser = wk_serializer_json();
    for (uint64_t i = 0; i < iters; i++) {
        wk_buf_clear(&c->out);
        ser->encode(&seed_user_schema, &c->u, &c->out, NULL);
        sum += c->out.len;
        wk_bench_escape(c->out.data);
    }
    return sum;
}

static uint64_t wk_enc_json_generic(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        wk_buf_clear(&c->out);
        wk_json_writer w;
        wk_json_writer_init(&w, &c->out, NULL);
        wk_sink sink;
        wk_json_writer_sink(&w, &sink);
        wk_schema_encode(&seed_user_schema, &c->u, &sink, NULL);
        wk_json_writer_finish(&w, NULL);
        sum += c->out.len;
        wk_bench_escape(c->out.data);
    }
    return sum;
}

static uint64_t wk_dec_json_generic(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        wk_arena_reset(&c->arena);
        seed_user u;
        memset(&u, 0, sizeof u);
        wk_json_reader r;
        wk_json_reader_init(&r, c->json, c->json_len, NULL, NULL);
        wk_source src;
        wk_json_reader_source(&r, &src);
        wk_event end;
        if (wk_schema_decode(&seed_user_schema, &src, &u, &c->arena, NULL, NULL) == WK_OK &&
            wk_json_reader_next(&r, &end) == WK_ERR_EOF) {
            sum += (uint64_t)u.age + u.metadata.len;
        }
        wk_json_reader_free(&r);
        wk_bench_escape(&u);
    }
    return sum;
}

static uint64_t wk_dec_json(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    const wk_serializer *ser = wk_serializer_json();
    for (uint64_t i = 0; i < iters; i++) {
        wk_arena_reset(&c->arena);
        seed_user u;
        memset(&u, 0, sizeof u);
        if (ser->decode(&seed_user_schema, c->json, c->json_len, &u, &c->arena, NULL, NULL) ==
            WK_OK) {
            sum += (uint64_t)u.age + u.metadata.len;
        }
        wk_bench_escape(&u);
    }
    return sum;
}

/* ---- msgpuck, by hand ---------------------------------------------------------------------- */

static size_t mpk_encode(char *buf, const seed_user *u)
{
    char *p = buf;
    p = mp_encode_map(p, 5);
    p = mp_encode_str(p, "username", 8);
    p = mp_encode_str(p, u->username, (uint32_t)strlen(u->username));
    p = mp_encode_str(p, "password", 8);
    p = mp_encode_str(p, u->password, (uint32_t)strlen(u->password));
    p = mp_encode_str(p, "age", 3);
    p = u->age >= 0 ? mp_encode_uint(p, (uint64_t)u->age) : mp_encode_int(p, u->age);
    p = mp_encode_str(p, "enabled", 7);
    p = mp_encode_bool(p, u->enabled);
    p = mp_encode_str(p, "metadata", 8);
    p = mp_encode_map(p, 2);
    p = mp_encode_str(p, "hello", 5);
    p = mp_encode_str(p, "world", 5);
    p = mp_encode_str(p, "int", 3);
    p = mp_encode_uint(p, 10);
    return (size_t)(p - buf);
}

static uint64_t mpk_enc(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        sum += mpk_encode(c->scratch, &c->u);
        wk_bench_escape(c->scratch);
    }
    return sum;
}

typedef struct view_user {
    const char *username, *password, *hello;
    uint32_t username_len, password_len, hello_len;
    int64_t age, meta_int;
    bool enabled;
} view_user;

#define KEY_IS(k, kl, lit) ((kl) == sizeof(lit) - 1 && memcmp((k), lit, sizeof(lit) - 1) == 0)

static bool mpk_int(const char **p, int64_t *out)
{
    if (mp_typeof(**p) == MP_UINT) {
        uint64_t u = mp_decode_uint(p);
        if (u > INT64_MAX) {
            return false;
        }
        *out = (int64_t)u;
        return true;
    }
    if (mp_typeof(**p) == MP_INT) {
        *out = mp_decode_int(p);
        return true;
    }
    return false;
}

static bool mpk_decode(const char *data, size_t len, view_user *u)
{
    const char *p = data;
    if (mp_check(&p, data + len) != 0 || p != data + len) {
        return false;
    }
    p = data;
    if (mp_typeof(*p) != MP_MAP) {
        return false;
    }
    uint32_t n = mp_decode_map(&p);
    for (uint32_t i = 0; i < n; i++) {
        if (mp_typeof(*p) != MP_STR) {
            return false;
        }
        uint32_t kl;
        const char *k = mp_decode_str(&p, &kl);
        if (KEY_IS(k, kl, "username") && mp_typeof(*p) == MP_STR) {
            u->username = mp_decode_str(&p, &u->username_len);
        } else if (KEY_IS(k, kl, "password") && mp_typeof(*p) == MP_STR) {
            u->password = mp_decode_str(&p, &u->password_len);
        } else if (KEY_IS(k, kl, "age")) {
            if (!mpk_int(&p, &u->age)) {
                return false;
            }
        } else if (KEY_IS(k, kl, "enabled") && mp_typeof(*p) == MP_BOOL) {
            u->enabled = mp_decode_bool(&p);
        } else if (KEY_IS(k, kl, "metadata") && mp_typeof(*p) == MP_MAP) {
            uint32_t m = mp_decode_map(&p);
            for (uint32_t j = 0; j < m; j++) {
                if (mp_typeof(*p) != MP_STR) {
                    return false;
                }
                const char *mk = mp_decode_str(&p, &kl);
                if (KEY_IS(mk, kl, "hello") && mp_typeof(*p) == MP_STR) {
                    u->hello = mp_decode_str(&p, &u->hello_len);
                } else if (KEY_IS(mk, kl, "int")) {
                    if (!mpk_int(&p, &u->meta_int)) {
                        return false;
                    }
                } else {
                    mp_next(&p);
                }
            }
        } else {
            mp_next(&p);
        }
    }
    return true;
}

static uint64_t mpk_dec(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        view_user u;
        memset(&u, 0, sizeof u);
        if (mpk_decode((const char *)c->mp, c->mp_len, &u)) {
            sum += (uint64_t)u.age + (uint64_t)u.meta_int;
        }
        wk_bench_escape(&u);
    }
    return sum;
}

/* ---- msgpack-c, by hand -------------------------------------------------------------------- */

static void mc_str(msgpack_packer *pk, const char *s, size_t n)
{
    msgpack_pack_str(pk, n);
    msgpack_pack_str_body(pk, s, n);
}

static size_t mc_encode(ctx *c, const seed_user *u)
{
    msgpack_sbuffer_clear(&c->sb);
    msgpack_packer *pk = &c->pk;
    msgpack_pack_map(pk, 5);
    mc_str(pk, "username", 8);
    mc_str(pk, u->username, strlen(u->username));
    mc_str(pk, "password", 8);
    mc_str(pk, u->password, strlen(u->password));
    mc_str(pk, "age", 3);
    msgpack_pack_int64(pk, u->age);
    mc_str(pk, "enabled", 7);
    if (u->enabled) {
        msgpack_pack_true(pk);
    } else {
        msgpack_pack_false(pk);
    }
    mc_str(pk, "metadata", 8);
    msgpack_pack_map(pk, 2);
    mc_str(pk, "hello", 5);
    mc_str(pk, "world", 5);
    mc_str(pk, "int", 3);
    msgpack_pack_int64(pk, 10);
    return c->sb.size;
}

static uint64_t mc_enc(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        sum += mc_encode(c, &c->u);
        wk_bench_escape(c->sb.data);
    }
    return sum;
}

typedef struct mc_user {
    const char *username, *password;
    uint32_t username_len, password_len;
    int64_t age;
    bool enabled;
    const msgpack_object *metadata;
} mc_user;

static bool mc_decode(ctx *c, mc_user *u, msgpack_object *root)
{
    msgpack_zone_clear(&c->zone);
    size_t off = 0;
    if (msgpack_unpack((const char *)c->mp, c->mp_len, &off, &c->zone, root) !=
            MSGPACK_UNPACK_SUCCESS ||
        root->type != MSGPACK_OBJECT_MAP) {
        return false;
    }
    for (uint32_t i = 0; i < root->via.map.size; i++) {
        const msgpack_object_kv *kv = &root->via.map.ptr[i];
        if (kv->key.type != MSGPACK_OBJECT_STR) {
            continue;
        }
        const char *k = kv->key.via.str.ptr;
        uint32_t kl = kv->key.via.str.size;
        const msgpack_object *v = &kv->val;
        if (KEY_IS(k, kl, "username") && v->type == MSGPACK_OBJECT_STR) {
            u->username = v->via.str.ptr;
            u->username_len = v->via.str.size;
        } else if (KEY_IS(k, kl, "password") && v->type == MSGPACK_OBJECT_STR) {
            u->password = v->via.str.ptr;
            u->password_len = v->via.str.size;
        } else if (KEY_IS(k, kl, "age") && v->type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
                   v->via.u64 <= INT64_MAX) {
            u->age = (int64_t)v->via.u64;
        } else if (KEY_IS(k, kl, "age") && v->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
            u->age = v->via.i64;
        } else if (KEY_IS(k, kl, "enabled") && v->type == MSGPACK_OBJECT_BOOLEAN) {
            u->enabled = v->via.boolean;
        } else if (KEY_IS(k, kl, "metadata")) {
            u->metadata = v;
        }
    }
    return true;
}

static uint64_t mc_dec(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        mc_user u;
        memset(&u, 0, sizeof u);
        msgpack_object root;
        if (mc_decode(c, &u, &root)) {
            sum += (uint64_t)u.age + (u.metadata != NULL ? u.metadata->via.map.size : 0);
        }
        wk_bench_escape(&u);
    }
    return sum;
}

/* ---- cJSON, by hand ------------------------------------------------------------------------ */

static bool cj_encode(ctx *c, const seed_user *u)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "username", u->username);
    cJSON_AddStringToObject(o, "password", u->password);
    cJSON_AddNumberToObject(o, "age", (double)u->age);
    cJSON_AddBoolToObject(o, "enabled", u->enabled);
    cJSON *m = cJSON_AddObjectToObject(o, "metadata");
    cJSON_AddStringToObject(m, "hello", "world");
    cJSON_AddNumberToObject(m, "int", 10);
    bool ok = cJSON_PrintPreallocated(o, c->scratch, (int)sizeof c->scratch, false) != 0;
    cJSON_Delete(o);
    return ok;
}

static uint64_t cj_enc(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        if (cj_encode(c, &c->u)) {
            sum += (uint64_t)c->scratch[0];
        }
        wk_bench_escape(c->scratch);
    }
    return sum;
}

typedef struct cj_user {
    const char *username, *password;
    int64_t age;
    bool enabled;
    const cJSON *metadata;
} cj_user;

static uint64_t cj_dec(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        cJSON *o = cJSON_ParseWithLength(c->json, c->json_len);
        cj_user u;
        memset(&u, 0, sizeof u);
        if (o != NULL && cJSON_IsObject(o)) {
            for (const cJSON *f = o->child; f != NULL; f = f->next) {
                if (strcmp(f->string, "username") == 0 && cJSON_IsString(f)) {
                    u.username = f->valuestring;
                } else if (strcmp(f->string, "password") == 0 && cJSON_IsString(f)) {
                    u.password = f->valuestring;
                } else if (strcmp(f->string, "age") == 0 && cJSON_IsNumber(f)) {
                    u.age = (int64_t)f->valuedouble;
                } else if (strcmp(f->string, "enabled") == 0 && cJSON_IsBool(f)) {
                    u.enabled = cJSON_IsTrue(f);
                } else if (strcmp(f->string, "metadata") == 0) {
                    u.metadata = f;
                }
            }
            sum += (uint64_t)u.age;
        }
        wk_bench_escape(&u);
        cJSON_Delete(o);
    }
    return sum;
}

/* ---- the suite ----------------------------------------------------------------------------- */

static void run(wk_bench *b, const char *cs, const char *impl, wk_bench_fn fn, void *c,
                uint64_t iters, size_t bytes, const char *note)
{
    wk_bench_spec s = {cs, impl, fn, c, iters, bytes, note, 0};
    wk_bench_add(b, &s);
}

int wk_bench_suite_schema(wk_bench *b)
{
    ctx *c = calloc(1, sizeof *c);
    if (c == NULL) {
        wk_bench_fail(b, "out of memory");
        return 1;
    }
    seed_user_fill(&c->u, c->pairs);
    wk_buf_init(&c->out, NULL, 0);
    wk_arena_init(&c->arena, NULL, 0);
    msgpack_sbuffer_init(&c->sb);
    msgpack_packer_init(&c->pk, &c->sb, msgpack_sbuffer_write);
    msgpack_zone_init(&c->zone, 2048);
    uint64_t iters = wk_bench_quick(b) ? 10000 : SEED_ITERS;
    wk_bench_peer(b, "msgpack-c", "msgpack-c: Debian shared library, distribution build (-O2)");
    wk_bench_peer(b, "cJSON", "cJSON: Debian shared library, distribution build (-O2)");
    wk_bench_peer(b, "msgpuck", "msgpuck: header-inline, compiled here with wirekit's flags");
    wk_bench_peer(b, "rapidjson", "rapidjson: header-only, compiled here with wirekit's flags");

    /* Outputs, checked before anything is timed. */
    wk_schema_encode_mp(&seed_user_schema, &c->u, &c->out, NULL);
    c->mp_len = c->out.len;
    memcpy(c->mp, c->out.data, c->mp_len);
    if (c->mp_len != 72) {
        wk_bench_fail(b, "seed record: MessagePack is %zu bytes, want 72", c->mp_len);
    }
    wk_enc_generic(c, 1);
    if (c->out.len != c->mp_len || memcmp(c->out.data, c->mp, c->mp_len) != 0) {
        wk_bench_fail(b, "seed record: generic and fused MessagePack differ");
    }
    size_t n = mpk_encode(c->scratch, &c->u);
    if (n != c->mp_len || memcmp(c->scratch, c->mp, n) != 0) {
        wk_bench_fail(b, "seed record: msgpuck output differs from wirekit's");
    }
    n = mc_encode(c, &c->u);
    if (n != c->mp_len || memcmp(c->sb.data, c->mp, n) != 0) {
        wk_bench_fail(b, "seed record: msgpack-c output differs from wirekit's");
    }
    wk_buf_clear(&c->out);
    wk_serializer_json()->encode(&seed_user_schema, &c->u, &c->out, NULL);
    c->json_len = c->out.len;
    memcpy(c->json, c->out.data, c->json_len);
    if (c->json_len != 101) {
        wk_bench_fail(b, "seed record: JSON is %zu bytes, want 101", c->json_len);
    }
    wk_enc_json_generic(c, 1);
    if (c->out.len != c->json_len || memcmp(c->out.data, c->json, c->json_len) != 0) {
        wk_bench_fail(b, "seed record: generic and fused JSON differ");
    }
    if (wk_dec_json(c, 1) != 22 || wk_dec_json_generic(c, 1) != 22) {
        wk_bench_fail(b, "seed record: a JSON decoder did not read the record back");
    }
    if (!cj_encode(c, &c->u) || strlen(c->scratch) != c->json_len ||
        memcmp(c->scratch, c->json, c->json_len) != 0) {
        wk_bench_fail(b, "seed record: cJSON output differs from wirekit's");
    }
    wk_bench_say(b, "seed record: MessagePack %zu bytes, JSON %zu bytes; %llu iterations per "
                 "case (x ns/op = x ms per 1,000,000)",
                 c->mp_len, c->json_len, (unsigned long long)iters);

    run(b, "seed encode msgpack", "wirekit", wk_enc_fused, c, iters, c->mp_len,
        "schema, fused writer");
    run(b, "seed encode msgpack", "wirekit-generic", wk_enc_generic, c, iters, c->mp_len,
        "schema -> events -> writer");
    run(b, "seed encode msgpack", "msgpuck", mpk_enc, c, iters, c->mp_len, "by hand");
    run(b, "seed encode msgpack", "msgpack-c", mc_enc, c, iters, c->mp_len, "by hand");
    run(b, "seed decode msgpack", "wirekit", wk_dec_fused, c, iters, c->mp_len,
        "schema, strings copied, metadata as wk_value");
    run(b, "seed decode msgpack", "wirekit-generic", wk_dec_generic, c, iters, c->mp_len,
        "reader -> events -> schema");
    run(b, "seed decode msgpack", "msgpuck", mpk_dec, c, iters, c->mp_len,
        "by hand: mp_check + views, fixed metadata keys");
    run(b, "seed decode msgpack", "msgpack-c", mc_dec, c, iters, c->mp_len,
        "by hand: object tree + views");
    /* rapidjson by hand too (the json suite's adapters): the fastest hand-written JSON peer
     * here, so the schema JSON rows are not compared with cJSON alone. */
    jb_seed_ctx rj_enc, rj_dec;
    memset(&rj_enc, 0, sizeof rj_enc);
    memset(&rj_dec, 0, sizeof rj_dec);
    rj_enc.in = (jb_seed){"root", "secret", 20, true, "world", 10};
    jb_rapidjson_seed_encode(&rj_enc, 1);
    bool rj_enc_ok = rj_enc.len == c->json_len && memcmp(rj_enc.buf, c->json, c->json_len) == 0;
    if (!rj_enc_ok) {
        wk_bench_fail(b, "seed record: rapidjson output differs from wirekit's");
    }
    rj_dec.json = (jb_input){(const uint8_t *)c->json, c->json_len};
    jb_rapidjson_seed_decode(&rj_dec, 1);
    const jb_seed *got = &rj_dec.out;
    bool rj_dec_ok = strcmp(got->username, "root") == 0 && strcmp(got->password, "secret") == 0 &&
                     got->age == 20 && got->enabled && strcmp(got->hello, "world") == 0 &&
                     got->meta_int == 10;
    if (!rj_dec_ok) {
        wk_bench_fail(b, "seed record: rapidjson did not read the record back");
    }
    run(b, "seed encode json", "wirekit", wk_enc_json, c, iters, c->json_len,
        "schema, fused writer (the JSON serializer)");
    run(b, "seed encode json", "wirekit-generic", wk_enc_json_generic, c, iters, c->json_len,
        "schema -> events -> writer");
    run(b, "seed encode json", "cJSON", cj_enc, c, iters, c->json_len,
        "by hand: tree + print");
    if (rj_enc_ok) {
        run(b, "seed encode json", "rapidjson", jb_rapidjson_seed_encode, &rj_enc, iters,
            c->json_len, "by hand: Writer<StringBuffer>");
    }
    run(b, "seed decode json", "wirekit", wk_dec_json, c, iters, c->json_len,
        "schema, fused reader; strings copied, metadata as wk_value; validates UTF-8");
    run(b, "seed decode json", "wirekit-generic", wk_dec_json_generic, c, iters, c->json_len,
        "reader -> events -> schema");
    run(b, "seed decode json", "cJSON", cj_dec, c, iters, c->json_len, "by hand: parse tree");
    if (rj_dec_ok) {
        run(b, "seed decode json", "rapidjson", jb_rapidjson_seed_decode, &rj_dec, iters,
            c->json_len, "by hand: DOM on a pooled buffer, validates UTF-8");
    }
    wk_bench_flush(b);
    /* seed 004's own Go program, after the C rows (it cannot be interleaved with them) */
    wk_bench_schema_go_rows(b, (const uint8_t *)c->json, c->json_len, c->mp_len, iters);
    msgpack_zone_destroy(&c->zone);
    msgpack_sbuffer_destroy(&c->sb);
    wk_arena_free(&c->arena);
    wk_buf_free(&c->out);
    free(c);
    return 0;
}
