/*
 * The seed record of SEEDS.md section 3, {username:"root", password:"secret", age:20,
 * enabled:true, metadata:{hello:"world", int:10}}: 72 bytes of MessagePack, written and read
 * 1,000,000 times by wirekit, msgpuck and msgpack-c. Every encoder must produce the same 72
 * bytes (checked). "Decode" reads the bytes back into the same C struct for every
 * implementation: all fields, matched by key, type-checked, unknown keys skipped, and the
 * whole input validated (wirekit's reader validates as it reads; msgpuck runs mp_check
 * first, as its documentation prescribes; msgpack-c validates while building its objects).
 * Strings are views into the input for all three.
 */
#include <msgpack.h>
#include <msgpuck.h>
#include <string.h>

#include "bench_msgpack.h"
#include "wirekit/msgpack.h"

#define SEED_ITERS 1000000u
#define SEED_SIZE 72u

typedef struct record {
    const char *username;
    uint32_t username_len;
    const char *password;
    uint32_t password_len;
    int64_t age;
    bool enabled;
    const char *hello;
    uint32_t hello_len;
    int64_t meta_int;
} record;

#define F_USERNAME 1u
#define F_PASSWORD 2u
#define F_AGE 4u
#define F_ENABLED 8u
#define F_METADATA 16u
#define F_ALL 31u

static const record seed = {"root", 4, "secret", 6, 20, true, "world", 5, 10};

static inline bool key_is(const char *k, size_t klen, const char *want, size_t wlen)
{
    return klen == wlen && memcmp(k, want, wlen) == 0;
}
#define KEY_IS(k, klen, lit) key_is((k), (klen), lit, sizeof(lit) - 1)

/* ---- encoders ---------------------------------------------------------------------------- */

static size_t wk_encode(wk_buf *buf, const record *r)
{
    wk_buf_clear(buf);
    wk_mp_writer w;
    wk_mp_writer_init(&w, buf);
    wk_mp_writer_begin_map(&w, 5);
    wk_mp_writer_str(&w, "username", 8);
    wk_mp_writer_str(&w, r->username, r->username_len);
    wk_mp_writer_str(&w, "password", 8);
    wk_mp_writer_str(&w, r->password, r->password_len);
    wk_mp_writer_str(&w, "age", 3);
    wk_mp_writer_int(&w, r->age);
    wk_mp_writer_str(&w, "enabled", 7);
    wk_mp_writer_bool(&w, r->enabled);
    wk_mp_writer_str(&w, "metadata", 8);
    wk_mp_writer_begin_map(&w, 2);
    wk_mp_writer_str(&w, "hello", 5);
    wk_mp_writer_str(&w, r->hello, r->hello_len);
    wk_mp_writer_str(&w, "int", 3);
    wk_mp_writer_int(&w, r->meta_int);
    if (wk_mp_writer_finish(&w, NULL) != WK_OK) {
        return 0;
    }
    return buf->len;
}

/* wirekit's pre-sized mode: reserve a bound once, then encode unchecked (wk_mp_encode_*). */
static size_t wk_encode_presized(wk_buf *buf, const record *r)
{
    wk_buf_clear(buf);
    wk_mp_writer w;
    wk_mp_writer_init(&w, buf);
    /* An upper bound, as a caller with a fixed record shape would use: the keys and headers
     * are at most 85 bytes (str headers 5, integers 9), plus the variable strings. */
    size_t n = 85 + (size_t)r->username_len + r->password_len + r->hello_len;
    uint8_t *p = wk_mp_writer_ensure(&w, n);
    if (p != NULL) {
        p = wk_mp_encode_map_header(p, 5);
        p = wk_mp_encode_str(p, "username", 8);
        p = wk_mp_encode_str(p, r->username, r->username_len);
        p = wk_mp_encode_str(p, "password", 8);
        p = wk_mp_encode_str(p, r->password, r->password_len);
        p = wk_mp_encode_str(p, "age", 3);
        p = wk_mp_encode_int(p, r->age);
        p = wk_mp_encode_str(p, "enabled", 7);
        p = wk_mp_encode_bool(p, r->enabled);
        p = wk_mp_encode_str(p, "metadata", 8);
        p = wk_mp_encode_map_header(p, 2);
        p = wk_mp_encode_str(p, "hello", 5);
        p = wk_mp_encode_str(p, r->hello, r->hello_len);
        p = wk_mp_encode_str(p, "int", 3);
        p = wk_mp_encode_int(p, r->meta_int);
        wk_mp_writer_commit(&w, p);
    }
    if (wk_mp_writer_finish(&w, NULL) != WK_OK) {
        return 0;
    }
    return buf->len;
}

static size_t mpk_encode(char *buf, const record *r)
{
    char *p = buf;
    p = mp_encode_map(p, 5);
    p = mp_encode_str(p, "username", 8);
    p = mp_encode_str(p, r->username, r->username_len);
    p = mp_encode_str(p, "password", 8);
    p = mp_encode_str(p, r->password, r->password_len);
    p = mp_encode_str(p, "age", 3);
    p = r->age >= 0 ? mp_encode_uint(p, (uint64_t)r->age) : mp_encode_int(p, r->age);
    p = mp_encode_str(p, "enabled", 7);
    p = mp_encode_bool(p, r->enabled);
    p = mp_encode_str(p, "metadata", 8);
    p = mp_encode_map(p, 2);
    p = mp_encode_str(p, "hello", 5);
    p = mp_encode_str(p, r->hello, r->hello_len);
    p = mp_encode_str(p, "int", 3);
    p = r->meta_int >= 0 ? mp_encode_uint(p, (uint64_t)r->meta_int)
                         : mp_encode_int(p, r->meta_int);
    return (size_t)(p - buf);
}

static void mc_str(msgpack_packer *pk, const char *s, size_t n)
{
    msgpack_pack_str(pk, n);
    msgpack_pack_str_body(pk, s, n);
}

static size_t mc_encode(msgpack_sbuffer *sb, msgpack_packer *pk, const record *r)
{
    msgpack_sbuffer_clear(sb);
    msgpack_pack_map(pk, 5);
    mc_str(pk, "username", 8);
    mc_str(pk, r->username, r->username_len);
    mc_str(pk, "password", 8);
    mc_str(pk, r->password, r->password_len);
    mc_str(pk, "age", 3);
    msgpack_pack_int64(pk, r->age);
    mc_str(pk, "enabled", 7);
    if (r->enabled) {
        msgpack_pack_true(pk);
    } else {
        msgpack_pack_false(pk);
    }
    mc_str(pk, "metadata", 8);
    msgpack_pack_map(pk, 2);
    mc_str(pk, "hello", 5);
    mc_str(pk, r->hello, r->hello_len);
    mc_str(pk, "int", 3);
    msgpack_pack_int64(pk, r->meta_int);
    return sb->size;
}

/* ---- decoders ---------------------------------------------------------------------------- */

static bool wk_decode(const uint8_t *p, size_t n, record *r)
{
    wk_mp_reader rd;
    wk_mp_reader_init(&rd, p, n, NULL);
    uint32_t count;
    if (wk_mp_reader_begin_map(&rd, &count) != WK_OK) {
        return false;
    }
    unsigned seen = 0;
    for (uint32_t i = 0; i < count; i++) {
        const char *k;
        size_t kn;
        size_t vn;
        if (wk_mp_reader_str(&rd, &k, &kn) != WK_OK) {
            return false;
        }
        if (KEY_IS(k, kn, "username")) {
            if (wk_mp_reader_str(&rd, &r->username, &vn) != WK_OK) {
                return false;
            }
            r->username_len = (uint32_t)vn;
            seen |= F_USERNAME;
        } else if (KEY_IS(k, kn, "password")) {
            if (wk_mp_reader_str(&rd, &r->password, &vn) != WK_OK) {
                return false;
            }
            r->password_len = (uint32_t)vn;
            seen |= F_PASSWORD;
        } else if (KEY_IS(k, kn, "age")) {
            if (wk_mp_reader_int(&rd, &r->age) != WK_OK) {
                return false;
            }
            seen |= F_AGE;
        } else if (KEY_IS(k, kn, "enabled")) {
            if (wk_mp_reader_bool(&rd, &r->enabled) != WK_OK) {
                return false;
            }
            seen |= F_ENABLED;
        } else if (KEY_IS(k, kn, "metadata")) {
            uint32_t mc;
            if (wk_mp_reader_begin_map(&rd, &mc) != WK_OK) {
                return false;
            }
            for (uint32_t j = 0; j < mc; j++) {
                if (wk_mp_reader_str(&rd, &k, &kn) != WK_OK) {
                    return false;
                }
                if (KEY_IS(k, kn, "hello")) {
                    if (wk_mp_reader_str(&rd, &r->hello, &vn) != WK_OK) {
                        return false;
                    }
                    r->hello_len = (uint32_t)vn;
                } else if (KEY_IS(k, kn, "int")) {
                    if (wk_mp_reader_int(&rd, &r->meta_int) != WK_OK) {
                        return false;
                    }
                } else if (wk_mp_reader_skip(&rd) != WK_OK) {
                    return false;
                }
            }
            if (wk_mp_reader_end(&rd) != WK_OK) {
                return false;
            }
            seen |= F_METADATA;
        } else if (wk_mp_reader_skip(&rd) != WK_OK) {
            return false;
        }
    }
    /* Close the map, and nothing may follow the record. */
    wk_event ev;
    return wk_mp_reader_end(&rd) == WK_OK && wk_mp_reader_next(&rd, &ev) == WK_ERR_EOF &&
           seen == F_ALL;
}

static bool mpk_get_int(const char **q, int64_t *out)
{
    enum mp_type t = mp_typeof(**q);
    if (t == MP_UINT) {
        uint64_t u = mp_decode_uint(q);
        if (u > INT64_MAX) {
            return false;
        }
        *out = (int64_t)u;
        return true;
    }
    if (t == MP_INT) {
        *out = mp_decode_int(q);
        return true;
    }
    return false;
}

static bool mpk_get_str(const char **q, const char **s, uint32_t *n)
{
    if (mp_typeof(**q) != MP_STR) {
        return false;
    }
    *s = mp_decode_str(q, n);
    return true;
}

static bool mpk_decode(const char *p, size_t n, record *r)
{
    const char *q = p;
    const char *end = p + n;
    if (mp_check(&q, end) != 0 || q != end) {
        return false;
    }
    q = p;
    if (mp_typeof(*q) != MP_MAP) {
        return false;
    }
    unsigned seen = 0;
    uint32_t count = mp_decode_map(&q);
    for (uint32_t i = 0; i < count; i++) {
        const char *k;
        uint32_t kn;
        if (!mpk_get_str(&q, &k, &kn)) {
            return false;
        }
        if (KEY_IS(k, kn, "username")) {
            if (!mpk_get_str(&q, &r->username, &r->username_len)) {
                return false;
            }
            seen |= F_USERNAME;
        } else if (KEY_IS(k, kn, "password")) {
            if (!mpk_get_str(&q, &r->password, &r->password_len)) {
                return false;
            }
            seen |= F_PASSWORD;
        } else if (KEY_IS(k, kn, "age")) {
            if (!mpk_get_int(&q, &r->age)) {
                return false;
            }
            seen |= F_AGE;
        } else if (KEY_IS(k, kn, "enabled")) {
            if (mp_typeof(*q) != MP_BOOL) {
                return false;
            }
            r->enabled = mp_decode_bool(&q);
            seen |= F_ENABLED;
        } else if (KEY_IS(k, kn, "metadata")) {
            if (mp_typeof(*q) != MP_MAP) {
                return false;
            }
            uint32_t mc = mp_decode_map(&q);
            for (uint32_t j = 0; j < mc; j++) {
                if (!mpk_get_str(&q, &k, &kn)) {
                    return false;
                }
                if (KEY_IS(k, kn, "hello")) {
                    if (!mpk_get_str(&q, &r->hello, &r->hello_len)) {
                        return false;
                    }
                } else if (KEY_IS(k, kn, "int")) {
                    if (!mpk_get_int(&q, &r->meta_int)) {
                        return false;
                    }
                } else {
                    mp_next(&q);
                }
            }
            seen |= F_METADATA;
        } else {
            mp_next(&q);
        }
    }
    return seen == F_ALL;
}

static bool mc_get_int(const msgpack_object *o, int64_t *out)
{
    if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER && o->via.u64 <= INT64_MAX) {
        *out = (int64_t)o->via.u64;
        return true;
    }
    if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
        *out = o->via.i64;
        return true;
    }
    return false;
}

static bool mc_get_str(const msgpack_object *o, const char **s, uint32_t *n)
{
    if (o->type != MSGPACK_OBJECT_STR) {
        return false;
    }
    *s = o->via.str.ptr;
    *n = o->via.str.size;
    return true;
}

/* Unpacks into the caller's zone, cleared first: msgpack-c's way to reuse memory across
 * messages (msgpack_unpack_next would make a new zone per message). */
static bool mc_decode(msgpack_zone *zone, const char *p, size_t n, record *r)
{
    size_t off = 0;
    msgpack_zone_clear(zone);
    msgpack_object obj;
    if (msgpack_unpack(p, n, &off, zone, &obj) != MSGPACK_UNPACK_SUCCESS || off != n) {
        return false;
    }
    const msgpack_object *root = &obj;
    if (root->type != MSGPACK_OBJECT_MAP) {
        return false;
    }
    unsigned seen = 0;
    for (uint32_t i = 0; i < root->via.map.size; i++) {
        const msgpack_object_kv *kv = &root->via.map.ptr[i];
        const char *k;
        uint32_t kn;
        if (!mc_get_str(&kv->key, &k, &kn)) {
            return false;
        }
        if (KEY_IS(k, kn, "username")) {
            if (!mc_get_str(&kv->val, &r->username, &r->username_len)) {
                return false;
            }
            seen |= F_USERNAME;
        } else if (KEY_IS(k, kn, "password")) {
            if (!mc_get_str(&kv->val, &r->password, &r->password_len)) {
                return false;
            }
            seen |= F_PASSWORD;
        } else if (KEY_IS(k, kn, "age")) {
            if (!mc_get_int(&kv->val, &r->age)) {
                return false;
            }
            seen |= F_AGE;
        } else if (KEY_IS(k, kn, "enabled")) {
            if (kv->val.type != MSGPACK_OBJECT_BOOLEAN) {
                return false;
            }
            r->enabled = kv->val.via.boolean;
            seen |= F_ENABLED;
        } else if (KEY_IS(k, kn, "metadata")) {
            if (kv->val.type != MSGPACK_OBJECT_MAP) {
                return false;
            }
            const msgpack_object_map *m = &kv->val.via.map;
            for (uint32_t j = 0; j < m->size; j++) {
                if (!mc_get_str(&m->ptr[j].key, &k, &kn)) {
                    return false;
                }
                if (KEY_IS(k, kn, "hello")) {
                    if (!mc_get_str(&m->ptr[j].val, &r->hello, &r->hello_len)) {
                        return false;
                    }
                } else if (KEY_IS(k, kn, "int")) {
                    if (!mc_get_int(&m->ptr[j].val, &r->meta_int)) {
                        return false;
                    }
                }
            }
            seen |= F_METADATA;
        }
    }
    return seen == F_ALL;
}

static bool record_equal(const record *a, const record *b)
{
    return a->username_len == b->username_len &&
           memcmp(a->username, b->username, a->username_len) == 0 &&
           a->password_len == b->password_len &&
           memcmp(a->password, b->password, a->password_len) == 0 && a->age == b->age &&
           a->enabled == b->enabled && a->hello_len == b->hello_len &&
           memcmp(a->hello, b->hello, a->hello_len) == 0 && a->meta_int == b->meta_int;
}

/* ---- timed loops ------------------------------------------------------------------------- */

typedef struct seed_ctx {
    const record *rec;
    const uint8_t *bytes; /* the 72 bytes, for decoders */
    size_t len;
    wk_buf wbuf;
    char mbuf[128];
    msgpack_sbuffer sb;
    msgpack_packer pk;
    msgpack_zone zone;
} seed_ctx;

static uint64_t run_wk_encode(void *arg, uint64_t iters)
{
    seed_ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        wk_bench_escape(c->rec);
        sum += wk_encode(&c->wbuf, c->rec);
        wk_bench_escape(c->wbuf.data);
    }
    return sum;
}

static uint64_t run_wk_encode_presized(void *arg, uint64_t iters)
{
    seed_ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        wk_bench_escape(c->rec);
        sum += wk_encode_presized(&c->wbuf, c->rec);
        wk_bench_escape(c->wbuf.data);
    }
    return sum;
}

static uint64_t run_mpk_encode(void *arg, uint64_t iters)
{
    seed_ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        wk_bench_escape(c->rec);
        sum += mpk_encode(c->mbuf, c->rec);
        wk_bench_escape(c->mbuf);
    }
    return sum;
}

static uint64_t run_mc_encode(void *arg, uint64_t iters)
{
    seed_ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        wk_bench_escape(c->rec);
        sum += mc_encode(&c->sb, &c->pk, c->rec);
        wk_bench_escape(c->sb.data);
    }
    return sum;
}

static uint64_t run_wk_decode(void *arg, uint64_t iters)
{
    seed_ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        record r;
        wk_bench_escape(c->bytes);
        sum += wk_decode(c->bytes, c->len, &r) ? (uint64_t)r.age : 0;
        wk_bench_escape(&r);
    }
    return sum;
}

static uint64_t run_mpk_decode(void *arg, uint64_t iters)
{
    seed_ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        record r;
        wk_bench_escape(c->bytes);
        sum += mpk_decode((const char *)c->bytes, c->len, &r) ? (uint64_t)r.age : 0;
        wk_bench_escape(&r);
    }
    return sum;
}

static uint64_t run_mc_decode(void *arg, uint64_t iters)
{
    seed_ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        record r;
        wk_bench_escape(c->bytes);
        sum += mc_decode(&c->zone, (const char *)c->bytes, c->len, &r) ? (uint64_t)r.age : 0;
        wk_bench_escape(&r);
    }
    return sum;
}

int wk_bench_msgpack_seed(wk_bench *b)
{
    seed_ctx c;
    memset(&c, 0, sizeof c);
    c.rec = &seed;
    wk_buf_init(&c.wbuf, NULL, 0);
    msgpack_sbuffer_init(&c.sb);
    msgpack_packer_init(&c.pk, &c.sb, msgpack_sbuffer_write);
    msgpack_zone_init(&c.zone, 2048);

    /* Correctness first: the three encoders agree byte for byte on 72 bytes, and the three
     * decoders read those bytes back into the record. */
    int rc = 0;
    size_t wn = wk_encode(&c.wbuf, &seed);
    size_t pn = mpk_encode(c.mbuf, &seed);
    wk_buf pre;
    wk_buf_init(&pre, NULL, 0);
    size_t qn = wk_encode_presized(&pre, &seed);
    if (qn != wn || memcmp(pre.data, c.wbuf.data, wn) != 0) {
        wk_bench_fail(b, "seed record: wirekit's pre-sized mode differs from its writer");
        rc = 1;
    }
    wk_buf_free(&pre);
    size_t mn = mc_encode(&c.sb, &c.pk, &seed);
    if (wn != SEED_SIZE || pn != SEED_SIZE || mn != SEED_SIZE ||
        memcmp(c.wbuf.data, c.mbuf, SEED_SIZE) != 0 ||
        memcmp(c.wbuf.data, c.sb.data, SEED_SIZE) != 0) {
        wk_bench_fail(b, "seed record: encoders disagree (wirekit %zu, msgpuck %zu, msgpack-c "
                         "%zu bytes; expected %u identical bytes)",
                      wn, pn, mn, SEED_SIZE);
        rc = 1;
    } else {
        wk_bench_say(b, "seed record: wirekit, msgpuck and msgpack-c each wrote the same %u "
                        "bytes",
                     SEED_SIZE);
    }
    c.bytes = (const uint8_t *)c.mbuf;
    c.len = pn;
    record r1, r2, r3;
    memset(&r1, 0, sizeof r1);
    r2 = r3 = r1;
    if (!wk_decode(c.bytes, c.len, &r1) || !mpk_decode((const char *)c.bytes, c.len, &r2) ||
        !mc_decode(&c.zone, (const char *)c.bytes, c.len, &r3) || !record_equal(&r1, &seed) ||
        !record_equal(&r2, &seed) || !record_equal(&r3, &seed)) {
        wk_bench_fail(b, "seed record: a decoder did not read back the record");
        rc = 1;
    }
    /* And every decoder refuses a truncated record. */
    if (wk_decode(c.bytes, c.len - 1, &r1) || mpk_decode((const char *)c.bytes, c.len - 1, &r2) ||
        mc_decode(&c.zone, (const char *)c.bytes, c.len - 1, &r3)) {
        wk_bench_fail(b, "seed record: a decoder accepted a truncated record");
        rc = 1;
    }
    if (rc != 0) {
        return rc;
    }

    wk_bench_spec specs[] = {
        {"seed encode", "wirekit", run_wk_encode, &c, SEED_ITERS, SEED_SIZE,
         "writer: wk_mp_writer_*, checked per call, sticky error", 0},
        {"seed encode", "wirekit-presized", run_wk_encode_presized, &c, SEED_ITERS, SEED_SIZE,
         "one reserve of a bound, then wk_mp_encode_*", 0},
        {"seed encode", "msgpuck", run_mpk_encode, &c, SEED_ITERS, SEED_SIZE,
         "hand-written encoder, no bounds checks", 0},
        {"seed encode", "msgpack-c", run_mc_encode, &c, SEED_ITERS, SEED_SIZE,
         "msgpack_packer over msgpack_sbuffer", 0},
        {"seed decode", "wirekit", run_wk_decode, &c, SEED_ITERS, SEED_SIZE,
         "typed reads (wk_mp_reader_*), validate as they read", 0},
        {"seed decode", "msgpuck", run_mpk_decode, &c, SEED_ITERS, SEED_SIZE,
         "mp_check + mp_decode_*", 0},
        {"seed decode", "msgpack-c", run_mc_decode, &c, SEED_ITERS, SEED_SIZE,
         "msgpack_unpack into objects, zone cleared and reused per op", 0},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        wk_bench_add(b, &specs[i]);
    }
    wk_bench_flush(b);

    wk_buf_free(&c.wbuf);
    msgpack_sbuffer_destroy(&c.sb);
    msgpack_zone_destroy(&c.zone);
    return 0;
}
