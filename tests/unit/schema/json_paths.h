/*
 * The two schema<->JSON paths side by side, for the tests and the fuzz harness: the generic
 * event paths (wk_schema_encode into a wk_json_writer, wk_schema_decode from a wk_json_reader
 * followed by the end-of-input check) and the fused ones (wk_schema_encode_json,
 * wk_schema_decode_json), with checks that they agree on everything a caller can see. The
 * fused decoder is also run with the JSON lexer's baseline instance forced, and must agree
 * with the machine's best instance (AVX2 where it has it) exactly.
 */
#ifndef JSON_PATHS_H
#define JSON_PATHS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/json/lex.h"
#include "wirekit/json.h"
#include "wirekit/schema.h"

/* The generic encoder: descriptor -> events -> JSON writer; `out` keeps its length on error. */
static inline wk_status json_encode_generic(const wk_schema *s, const void *obj, wk_buf *out,
                                            wk_error *err)
{
    size_t start = out->len;
    wk_json_writer w;
    wk_json_writer_init(&w, out, NULL);
    wk_sink sink;
    wk_json_writer_sink(&w, &sink);
    wk_status st = wk_schema_encode(s, obj, &sink, err);
    wk_status fin = wk_json_writer_finish(&w, st == WK_OK ? err : NULL);
    if (st == WK_OK) {
        st = fin;
    }
    if (st != WK_OK) {
        out->len = start;
    }
    return st;
}

/* The generic decoder: JSON reader -> events -> descriptor, then nothing may be left. */
static inline wk_status json_decode_generic(const wk_schema *s, const void *data, size_t len,
                                            void *obj, wk_arena *a, const wk_schema_opts *opts,
                                            wk_schema_error *err)
{
    wk_json_reader r;
    wk_json_reader_init(&r, data, len, NULL, NULL);
    wk_source src;
    wk_json_reader_source(&r, &src);
    wk_status st = wk_schema_decode(s, &src, obj, a, opts, err);
    if (st == WK_OK) {
        wk_event ev;
        st = wk_json_reader_next(&r, &ev);
        if (st == WK_ERR_EOF) {
            st = WK_OK;
        } else if (st == WK_OK) {
            st = wk_error_set(&err->base, WK_ERR_TRAILING, wk_json_reader_offset(&r),
                              "trailing bytes after the value");
        } else {
            wk_json_reader_error(&r, &err->base);
            err->path[0] = '\0';
        }
    }
    wk_json_reader_free(&r);
    return st;
}

static inline bool json_same_msg(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Encodes `obj` both ways into buffers of capacity `cap` (0: growable) after `pre` bytes
 * already there; true when status, error (code, message, offset) and bytes are the same.
 * `why` says what differs. */
static inline bool json_encoders_agree(const wk_schema *s, const void *obj, size_t cap,
                                       size_t pre, char *why, size_t why_cap)
{
    uint8_t *m1 = cap != 0 ? malloc(cap) : NULL;
    uint8_t *m2 = cap != 0 ? malloc(cap) : NULL;
    wk_buf b1, b2;
    if (cap != 0) {
        wk_buf_init_fixed(&b1, m1, cap);
        wk_buf_init_fixed(&b2, m2, cap);
    } else {
        wk_buf_init(&b1, NULL, 0);
        wk_buf_init(&b2, NULL, 0);
    }
    for (size_t i = 0; i < pre; i++) {
        if (wk_buf_push(&b1, (uint8_t)('a' + i % 26)) != WK_OK ||
            wk_buf_push(&b2, (uint8_t)('a' + i % 26)) != WK_OK) {
            break;
        }
    }
    size_t before = b1.len;
    wk_error e1 = {WK_OK, 0, NULL}, e2 = {WK_OK, 0, NULL};
    wk_status s1 = wk_schema_encode_json(s, obj, &b1, &e1);
    wk_status s2 = json_encode_generic(s, obj, &b2, &e2);
    bool ok = s1 == s2 && b1.len == b2.len && memcmp(b1.data, b2.data, b1.len) == 0;
    if (ok && s1 != WK_OK) {
        ok = e1.code == e2.code && e1.offset == e2.offset && json_same_msg(e1.msg, e2.msg) &&
             b1.len == before;
    }
    if (!ok) {
        snprintf(why, why_cap,
                 "fused %s '%s' at %zu (%zu bytes) / generic %s '%s' at %zu (%zu bytes): %.*s",
                 wk_status_str(s1), e1.msg ? e1.msg : "", e1.offset, b1.len,
                 wk_status_str(s2), e2.msg ? e2.msg : "", e2.offset, b2.len,
                 (int)(b2.len < 300 ? b2.len : 300), (const char *)b2.data);
    }
    if (cap != 0) {
        free(m1);
        free(m2);
    } else {
        wk_buf_free(&b1);
        wk_buf_free(&b2);
    }
    return ok;
}

/* Decodes `data` both ways (each with its own arena, capped at `arena_cap` bytes, 0: no cap)
 * and checks that they agree on status, offset, message and path, and on the result (both
 * objects written by the generic encoder). Out of arena may differ in where it happens. The
 * fused decoder on the lexer's baseline instance must agree with it on everything, out of
 * arena included. */
static inline bool json_decoders_agree(const wk_schema *s, size_t size, const void *data,
                                       size_t len, const wk_schema_opts *opts,
                                       size_t arena_cap, char *why, size_t why_cap)
{
    wk_arena a, b;
    wk_arena_init(&a, NULL, arena_cap);
    wk_arena_init(&b, NULL, arena_cap);
    void *x = calloc(1, size), *y = calloc(1, size);
    wk_schema_error e1, e2;
    memset(&e1, 0, sizeof e1);
    memset(&e2, 0, sizeof e2);
    wk_arena c;
    wk_arena_init(&c, NULL, arena_cap);
    void *z = calloc(1, size);
    wk_schema_error e3;
    memset(&e3, 0, sizeof e3);
    wk_status s1 = wk_schema_decode_json(s, data, len, x, &a, opts, &e1);
    wk_status s2 = json_decode_generic(s, data, len, y, &b, opts, &e2);
    wk__json_simd_force(WK__JSON_SIMD_BASE);
    wk_status s3 = wk_schema_decode_json(s, data, len, z, &c, opts, &e3);
    wk__json_simd_force(0);
    bool ok = s1 == s2;
    if (ok && s1 != WK_OK && s1 != WK_ERR_NOMEM) {
        ok = e1.base.offset == e2.base.offset && strcmp(e1.path, e2.path) == 0 &&
             json_same_msg(e1.base.msg, e2.base.msg);
    }
    bool same_instances = s1 == s3 && e1.base.offset == e3.base.offset &&
                          e1.base.msg == e3.base.msg && strcmp(e1.path, e3.path) == 0;
    if (ok && s1 == WK_OK) {
        wk_buf b1, b2, b3;
        wk_buf_init(&b1, NULL, 0);
        wk_buf_init(&b2, NULL, 0);
        wk_buf_init(&b3, NULL, 0);
        wk_status t1 = json_encode_generic(s, x, &b1, NULL);
        wk_status t2 = json_encode_generic(s, y, &b2, NULL);
        wk_status t3 = json_encode_generic(s, z, &b3, NULL);
        ok = t1 == t2 && b1.len == b2.len && memcmp(b1.data, b2.data, b1.len) == 0;
        same_instances = same_instances && t1 == t3 && b1.len == b3.len &&
                         memcmp(b1.data, b3.data, b1.len) == 0;
        wk_buf_free(&b1);
        wk_buf_free(&b2);
        wk_buf_free(&b3);
    }
    if (!ok) {
        snprintf(why, why_cap,
                 "fused %s '%s' at %zu path '%s' / generic %s '%s' at %zu path '%s' in %.*s",
                 wk_status_str(s1), e1.base.msg ? e1.base.msg : "", e1.base.offset, e1.path,
                 wk_status_str(s2), e2.base.msg ? e2.base.msg : "", e2.base.offset, e2.path,
                 (int)(len < 300 ? len : 300), (const char *)data);
    } else if (!same_instances) {
        ok = false;
        snprintf(why, why_cap,
                 "fused %s '%s' at %zu path '%s' / fused on the baseline lexer %s '%s' at %zu "
                 "path '%s' in %.*s",
                 wk_status_str(s1), e1.base.msg ? e1.base.msg : "", e1.base.offset, e1.path,
                 wk_status_str(s3), e3.base.msg ? e3.base.msg : "", e3.base.offset, e3.path,
                 (int)(len < 300 ? len : 300), (const char *)data);
    }
    free(x);
    free(y);
    free(z);
    wk_arena_free(&a);
    wk_arena_free(&b);
    wk_arena_free(&c);
    return ok;
}

#endif
