/*
 * The JSON corpus as MessagePack (converted once, before timing, by the bench-only cJSON ->
 * msgpack-c helper): tree decode, validate and encode, in MB/s of MessagePack.
 *   tree decode: wirekit's fused decoder into an arena (reset per op), wirekit's generic
 *     event path (reader -> wk_value_decode), msgpack-c's msgpack_unpack_next into its
 *     object tree (zone reused per op). Strings are views into the input for all.
 *   validate: wk_mp_check (depth-limited, all checks) and msgpuck's mp_check.
 *   encode: the decoded tree back to bytes; wirekit's wk_mp_writer_value and msgpack-c's
 *     msgpack_pack_object. Both outputs must equal the input bytes (checked).
 */
#include <msgpack.h>
#include <msgpuck.h>
#include <stdlib.h>
#include <string.h>

#include "bench_msgpack.h"
#include "wirekit/msgpack.h"

typedef struct corpus_ctx {
    const uint8_t *mp;
    size_t len;
    wk_arena arena;
    wk_value *tree; /* decoded once for the encode case */
    wk_buf out;
    msgpack_unpacked up;  /* the tree msgpack-c encodes from */
    msgpack_zone zone;    /* reused by the decode case */
    msgpack_sbuffer sb;
    msgpack_packer pk;
} corpus_ctx;

static uint64_t run_wk_tree(void *arg, uint64_t iters)
{
    corpus_ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        wk_arena_reset(&c->arena);
        wk_value *v = NULL;
        if (wk_mp_decode_value(c->mp, c->len, NULL, &c->arena, &v, NULL, NULL) == WK_OK) {
            sum += v->len;
        }
    }
    return sum;
}

static uint64_t run_wk_tree_generic(void *arg, uint64_t iters)
{
    corpus_ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        wk_arena_reset(&c->arena);
        wk_mp_reader r;
        wk_mp_reader_init(&r, c->mp, c->len, NULL);
        wk_source src;
        wk_mp_reader_source(&r, &src);
        wk_value *v = NULL;
        if (wk_value_decode(&src, NULL, &c->arena, &v, NULL) == WK_OK) {
            sum += v->len;
        }
        wk_mp_reader_free(&r);
    }
    return sum;
}

static uint64_t run_mc_tree(void *arg, uint64_t iters)
{
    corpus_ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        size_t off = 0;
        msgpack_object obj;
        msgpack_zone_clear(&c->zone);
        if (msgpack_unpack((const char *)c->mp, c->len, &off, &c->zone, &obj) ==
            MSGPACK_UNPACK_SUCCESS) {
            sum += obj.via.map.size + off;
        }
    }
    return sum;
}

static uint64_t run_wk_check(void *arg, uint64_t iters)
{
    corpus_ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        size_t size = 0;
        if (wk_mp_check(c->mp, c->len, NULL, &size, NULL) == WK_OK) {
            sum += size;
        }
    }
    return sum;
}

static uint64_t run_mpk_check(void *arg, uint64_t iters)
{
    corpus_ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        const char *q = (const char *)c->mp;
        if (mp_check(&q, q + c->len) == 0) {
            sum += (uint64_t)(q - (const char *)c->mp);
        }
    }
    return sum;
}

static uint64_t run_wk_encode(void *arg, uint64_t iters)
{
    corpus_ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        wk_buf_clear(&c->out);
        if (wk_mp_encode_value(c->tree, &c->out, NULL) == WK_OK) {
            sum += c->out.len;
        }
    }
    return sum;
}

static uint64_t run_mc_encode(void *arg, uint64_t iters)
{
    corpus_ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        msgpack_sbuffer_clear(&c->sb);
        if (msgpack_pack_object(&c->pk, c->up.data) == 0) {
            sum += c->sb.size;
        }
    }
    return sum;
}

int wk_bench_msgpack_corpus(wk_bench *b, const char *name)
{
    size_t jlen = 0;
    uint8_t *json = wk_bench_read_data(b, name, &jlen);
    if (json == NULL) {
        return 1;
    }
    corpus_ctx c;
    memset(&c, 0, sizeof c);
    uint8_t *mp = bench_corpus_json_to_msgpack_cjson((const char *)json, jlen, &c.len);
    free(json);
    if (mp == NULL) {
        wk_bench_fail(b, "%s: the cJSON -> msgpack-c conversion failed", name);
        return 1;
    }
    c.mp = mp;
    const char *base = strrchr(name, '/') != NULL ? strrchr(name, '/') + 1 : name;
    wk_arena_init(&c.arena, NULL, 0);
    wk_buf_init(&c.out, NULL, 0);
    msgpack_unpacked_init(&c.up);
    msgpack_zone_init(&c.zone, MSGPACK_ZONE_CHUNK_SIZE);
    msgpack_sbuffer_init(&c.sb);
    msgpack_packer_init(&c.pk, &c.sb, msgpack_sbuffer_write);
    wk_bench_say(b, "%s: %zu bytes of JSON -> %zu bytes of MessagePack", base, jlen, c.len);

    /* Checks: every path accepts the input; trees agree; both encoders give back the input. */
    int rc = 0;
    wk_arena check_arena;
    wk_arena_init(&check_arena, NULL, 0);
    wk_value *generic = NULL;
    wk_mp_reader r;
    wk_mp_reader_init(&r, c.mp, c.len, NULL);
    wk_source src;
    wk_mp_reader_source(&r, &src);
    size_t off = 0;
    const char *q = (const char *)c.mp;
    if (wk_mp_decode_value(c.mp, c.len, NULL, &check_arena, &c.tree, NULL, NULL) != WK_OK ||
        wk_value_decode(&src, NULL, &check_arena, &generic, NULL) != WK_OK ||
        !wk_value_equal(c.tree, generic, NULL) ||
        wk_mp_check(c.mp, c.len, NULL, NULL, NULL) != WK_OK ||
        mp_check(&q, q + c.len) != 0 ||
        msgpack_unpack_next(&c.up, (const char *)c.mp, c.len, &off) != MSGPACK_UNPACK_SUCCESS ||
        off != c.len) {
        wk_bench_fail(b, "%s: an implementation rejected the corpus or trees differ", base);
        rc = 1;
    }
    wk_mp_reader_free(&r);
    if (rc == 0) {
        wk_buf_clear(&c.out);
        msgpack_sbuffer_clear(&c.sb);
        if (wk_mp_encode_value(c.tree, &c.out, NULL) != WK_OK || c.out.len != c.len ||
            memcmp(c.out.data, c.mp, c.len) != 0 || msgpack_pack_object(&c.pk, c.up.data) != 0 ||
            c.sb.size != c.len || memcmp(c.sb.data, c.mp, c.len) != 0) {
            wk_bench_fail(b, "%s: re-encoding does not reproduce the input bytes", base);
            rc = 1;
        }
    }
    if (rc == 0) {
        /* The harness keeps the case names: they must outlive this call. */
        static char names[4][3][96];
        static unsigned used;
        char(*cname)[96] = names[used++ % 4];
        snprintf(cname[0], sizeof cname[0], "tree decode %s", base);
        snprintf(cname[1], sizeof cname[1], "validate %s", base);
        snprintf(cname[2], sizeof cname[2], "encode tree %s", base);
        wk_bench_spec specs[] = {
            {cname[0], "wirekit", run_wk_tree, &c, 0, c.len, "fused decoder, arena reset per op",
             0},
            {cname[0], "wirekit-events", run_wk_tree_generic, &c, 0, c.len,
             "generic path: reader events -> wk_value_decode", 0},
            {cname[0], "msgpack-c", run_mc_tree, &c, 0, c.len,
             "msgpack_unpack into a zone cleared per op (msgpack_zone_clear keeps one chunk)",
             0},
            {cname[1], "wirekit", run_wk_check, &c, 0, c.len,
             "wk_mp_check: depth limit, 0xc1, timestamps", 0},
            {cname[1], "msgpuck", run_mpk_check, &c, 0, c.len, "mp_check", 0},
            {cname[2], "wirekit", run_wk_encode, &c, 0, c.len, "wk_mp_writer_value", 0},
            {cname[2], "msgpack-c", run_mc_encode, &c, 0, c.len, "msgpack_pack_object", 0},
        };
        for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
            wk_bench_add(b, &specs[i]);
        }
        wk_bench_flush(b);
    }
    wk_arena_free(&check_arena);
    wk_arena_free(&c.arena);
    wk_buf_free(&c.out);
    msgpack_unpacked_destroy(&c.up);
    msgpack_zone_destroy(&c.zone);
    msgpack_sbuffer_destroy(&c.sb);
    free(mp);
    return rc;
}
