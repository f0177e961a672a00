/*
 * Helpers for the PostgreSQL codec unit tests (see pg_test_util.h).
 */
#include "pg_test_util.h"

#include <stdio.h>
#include <string.h>

static wk_pg_registry *reg;
static wk_arena arena;
static bool arena_ready;

const wk_pg_registry *pgt_reg(void)
{
    if (reg == NULL) {
        wk_pg_registry_new_default(NULL, &reg, NULL);
    }
    return reg;
}

static wk_arena *pgt_arena(void)
{
    if (!arena_ready) {
        wk_arena_init(&arena, NULL, 0);
        arena_ready = true;
    }
    return &arena;
}

wk_status pgt_to_text(wk_pg_oid oid, wk_pg_format fmt, const void *p, size_t n,
                      const char **text, wk_error *err)
{
    static uint8_t mem[1 << 16];
    wk_buf b;
    wk_buf_init_fixed(&b, mem, sizeof mem - 1);
    const wk_pg_decoder *d = wk_pg_registry_find_decoder(pgt_reg(), oid, fmt, WK_PG_KIND_TEXT);
    if (d == NULL) {
        return WK_ERR_NOT_FOUND;
    }
    wk_status st = wk_pg_decode(d, p, n, &b, pgt_arena(), err);
    mem[b.len] = 0;
    *text = (const char *)mem;
    return st;
}

wk_status pgt_from_text(wk_pg_oid oid, wk_pg_format fmt, const char *s, const uint8_t **out,
                        size_t *len, wk_error *err)
{
    wk_slice in = {s, strlen(s)};
    return pgt_encode(oid, fmt, WK_PG_KIND_TEXT, &in, out, len, err);
}

wk_status pgt_decode(wk_pg_oid oid, wk_pg_format fmt, wk_pg_kind kind, const void *p, size_t n,
                     void *out, wk_error *err)
{
    const wk_pg_decoder *d = wk_pg_registry_find_decoder(pgt_reg(), oid, fmt, kind);
    if (d == NULL) {
        return WK_ERR_NOT_FOUND;
    }
    return wk_pg_decode(d, p, n, out, pgt_arena(), err);
}

wk_status pgt_encode(wk_pg_oid oid, wk_pg_format fmt, wk_pg_kind kind, const void *in,
                     const uint8_t **out, size_t *len, wk_error *err)
{
    static uint8_t mem[1 << 16];
    wk_buf b;
    wk_buf_init_fixed(&b, mem, sizeof mem);
    const wk_pg_encoder *e = wk_pg_registry_find_encoder_for(pgt_reg(), oid, fmt, kind);
    if (e == NULL) {
        return WK_ERR_NOT_FOUND;
    }
    wk_status st = wk_pg_encode(e, in, &b, err);
    *out = mem;
    *len = b.len;
    return st;
}

int pgt_roundtrip(wk_pg_oid oid, const char *in, const char *want, char *why, size_t whylen)
{
    for (int f = 0; f < 2; f++) {
        const uint8_t *bin;
        size_t n;
        wk_error err = {0};
        wk_status st = pgt_from_text(oid, (wk_pg_format)f, in, &bin, &n, &err);
        if (st != WK_OK) {
            snprintf(why, whylen, "oid %u: encode '%s' (%s) failed: %s at %zu", oid, in,
                     f ? "binary" : "text", err.msg ? err.msg : wk_status_str(st), err.offset);
            return 0;
        }
        uint8_t copy[1 << 16];
        memcpy(copy, bin, n);
        const char *text;
        st = pgt_to_text(oid, (wk_pg_format)f, copy, n, &text, &err);
        if (st != WK_OK) {
            snprintf(why, whylen, "oid %u: decode of '%s' (%s) failed: %s", oid, in,
                     f ? "binary" : "text", err.msg ? err.msg : wk_status_str(st));
            return 0;
        }
        if (strcmp(text, want) != 0) {
            snprintf(why, whylen, "oid %u: '%s' (%s) gave '%s', want '%s'", oid, in,
                     f ? "binary" : "text", text, want);
            return 0;
        }
    }
    return 1;
}
