/*
 * Shared body of the PostgreSQL codec fuzz harnesses: the first input byte picks a type OID
 * (from the harness's list: the first built-in types, or the rendered ones of types_misc.c
 * and range.c, scalars and arrays), the rest is the value in the harness's wire format.
 * The value goes through every decoder kind the registry has for that type (C kinds, text
 * output, events, value tree, array header plus iteration and element decodes). Anything
 * decoded to text is parsed back (text encode) to exercise the encoders too. Crashes and
 * sanitizer reports are the failures.
 */
#ifndef FUZZ_PG_COMMON_H
#define FUZZ_PG_COMMON_H

#include <stdlib.h>
#include <string.h>

#include "wirekit/pg.h"

static const wk_pg_oid fuzz_oids[] = {
    WK_PG_OID_BOOL, WK_PG_OID_BYTEA, WK_PG_OID_CHAR, WK_PG_OID_NAME, WK_PG_OID_INT8,
    WK_PG_OID_INT2, WK_PG_OID_INT4, WK_PG_OID_TEXT, WK_PG_OID_OID, WK_PG_OID_JSON,
    WK_PG_OID_CIDR, WK_PG_OID_FLOAT4, WK_PG_OID_FLOAT8, WK_PG_OID_INET, WK_PG_OID_BPCHAR,
    WK_PG_OID_VARCHAR, WK_PG_OID_DATE, WK_PG_OID_TIME, WK_PG_OID_TIMESTAMP,
    WK_PG_OID_TIMESTAMPTZ, WK_PG_OID_INTERVAL, WK_PG_OID_TIMETZ, WK_PG_OID_NUMERIC,
    WK_PG_OID_UUID, WK_PG_OID_JSONB, 2249,
    WK_PG_OID_JSON_ARRAY, WK_PG_OID_CIDR_ARRAY, WK_PG_OID_BOOL_ARRAY, WK_PG_OID_BYTEA_ARRAY,
    WK_PG_OID_CHAR_ARRAY, WK_PG_OID_NAME_ARRAY, WK_PG_OID_INT2_ARRAY, WK_PG_OID_INT4_ARRAY,
    WK_PG_OID_TEXT_ARRAY, WK_PG_OID_BPCHAR_ARRAY, WK_PG_OID_VARCHAR_ARRAY,
    WK_PG_OID_INT8_ARRAY, WK_PG_OID_FLOAT4_ARRAY, WK_PG_OID_FLOAT8_ARRAY, WK_PG_OID_OID_ARRAY,
    WK_PG_OID_INET_ARRAY, WK_PG_OID_TIMESTAMP_ARRAY, WK_PG_OID_DATE_ARRAY,
    WK_PG_OID_TIME_ARRAY, WK_PG_OID_TIMESTAMPTZ_ARRAY, WK_PG_OID_INTERVAL_ARRAY,
    WK_PG_OID_NUMERIC_ARRAY, WK_PG_OID_TIMETZ_ARRAY, WK_PG_OID_UUID_ARRAY,
    WK_PG_OID_JSONB_ARRAY};

static wk_status fuzz_ev(void *self, const wk_event *ev)
{
    (void)self;
    /* Touch string bytes so that a dangling view trips the sanitizer. */
    if (ev->type == WK_EV_STR || ev->type == WK_EV_RAWNUM) {
        volatile uint8_t sum = 0;
        for (size_t i = 0; i < ev->v.str.len; i++) {
            sum = (uint8_t)(sum + (uint8_t)ev->v.str.ptr[i]);
        }
        (void)sum;
    }
    return WK_OK;
}

static wk_status fuzz_ev_err(const void *self, wk_error *err)
{
    (void)self;
    (void)err;
    return WK_OK;
}

static wk_pg_registry *fuzz_reg;

/* `oids[0..noids)`: the types the first byte picks from. */
static void fuzz_one_of(const wk_pg_oid *oids, size_t noids, wk_pg_format format,
                        const uint8_t *data, size_t size)
{
    if (size < 1) {
        return;
    }
    if (fuzz_reg == NULL && wk_pg_registry_new_default(NULL, &fuzz_reg, NULL) != WK_OK) {
        abort();
    }
    wk_pg_oid oid = oids[data[0] % noids];
    size_t n = size - 1;
    /* An exact-size copy: reads past the value's end hit the sanitizer. */
    uint8_t *p = malloc(n ? n : 1);
    memcpy(p, data + 1, n);
    wk_arena arena;
    wk_arena_init(&arena, NULL, 1 << 24);
    wk_buf text;
    wk_buf_init(&text, NULL, 1 << 24);
    for (int k = 0; k < WK_PG_KIND_COUNT; k++) {
        const wk_pg_decoder *d = wk_pg_registry_find_decoder(fuzz_reg, oid, format, (wk_pg_kind)k);
        if (d == NULL) {
            continue;
        }
        union {
            uint8_t raw[128];
            wk_pg_array arr;
            wk_value v;
        } out;
        wk_error err = {0};
        if (k == WK_PG_KIND_TEXT) {
            wk_buf_clear(&text);
            if (wk_pg_decode(d, p, n, &text, &arena, &err) == WK_OK) {
                /* Parse PostgreSQL's text back through the text encoder. */
                const wk_pg_encoder *e =
                    wk_pg_registry_find_encoder_for(fuzz_reg, oid, WK_PG_BINARY, WK_PG_KIND_TEXT);
                if (e != NULL) {
                    wk_buf bin;
                    wk_buf_init(&bin, NULL, 1 << 24);
                    wk_slice s = {(const char *)text.data, text.len};
                    (void)wk_pg_encode(e, &s, &bin, &err);
                    wk_buf_free(&bin);
                }
            }
        } else if (k == WK_PG_KIND_EVENTS) {
            wk_sink sink = {fuzz_ev, fuzz_ev_err, NULL};
            wk_pg_events ev = {&sink, WK_PG_EV_RAW_FLOATS, NULL, 0};
            (void)wk_pg_decode(d, p, n, &ev, &arena, &err);
        } else if (k == WK_PG_KIND_ARRAY) {
            if (wk_pg_decode(d, p, n, &out.arr, &arena, &err) == WK_OK) {
                const wk_pg_decoder *ed = wk_pg_registry_find_decoder(
                    fuzz_reg, out.arr.elem_oid, format, WK_PG_KIND_TEXT);
                wk_pg_array_iter it;
                wk_pg_array_iter_init(&it, &out.arr, &arena);
                const uint8_t *ep;
                size_t en;
                bool isn;
                while (wk_pg_array_next(&it, &ep, &en, &isn, &err) == WK_OK) {
                    if (!isn && ed != NULL) {
                        wk_buf_clear(&text);
                        (void)wk_pg_decode(ed, ep, en, &text, &arena, &err);
                    }
                }
            }
        } else {
            (void)wk_pg_decode(d, p, n, &out, &arena, &err);
        }
    }
    wk_buf_free(&text);
    wk_arena_free(&arena);
    free(p);
}

static inline void fuzz_one(wk_pg_format format, const uint8_t *data, size_t size)
{
    fuzz_one_of(fuzz_oids, sizeof fuzz_oids / sizeof fuzz_oids[0], format, data, size);
}

#endif
