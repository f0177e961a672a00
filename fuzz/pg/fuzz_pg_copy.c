/*
 * libFuzzer harness: the binary COPY row decoder. Input: one byte n (the column count,
 * 1 + n % 6), n bytes picking each column's type from fuzz_oids, then a binary COPY stream
 * (header, tuples, trailer). The stream is read with wk_pg_copy_header / wk_pg_copy_row in
 * exact-size copies of what is left (so a read past the end hits the sanitizer), and every
 * tuple goes through a binary plan three ways: TEXT kinds into buffers, a value tree, events.
 * Crashes and sanitizer reports are the failures.
 */
#include "fuzz_pg_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    if (fuzz_reg == NULL && wk_pg_registry_new_default(NULL, &fuzz_reg, NULL) != WK_OK) {
        abort();
    }
    size_t ncols = 1 + data[0] % 6;
    if (size < 1 + ncols) {
        return 0;
    }
    wk_pg_plan_col cols[6];
    for (size_t i = 0; i < ncols; i++) {
        cols[i].name = "c";
        cols[i].oid = fuzz_oids[data[1 + i] % (sizeof fuzz_oids / sizeof fuzz_oids[0])];
        cols[i].format = WK_PG_BINARY;
        cols[i].kind = WK_PG_KIND_TEXT;
        cols[i].offset = i * sizeof(wk_buf);
    }
    wk_pg_plan *plan = NULL;
    if (wk_pg_plan_build(fuzz_reg, cols, ncols, NULL, &plan, NULL) != WK_OK) {
        return 0;
    }
    const uint8_t *rest = data + 1 + ncols;
    size_t n = size - 1 - ncols;
    uint8_t *p = malloc(n ? n : 1);
    memcpy(p, rest, n);
    wk_buf bufs[6];
    for (size_t i = 0; i < ncols; i++) {
        wk_buf_init(&bufs[i], NULL, 1 << 24);
    }
    wk_arena arena;
    wk_arena_init(&arena, NULL, 1 << 24);
    wk_sink sink = {fuzz_ev, fuzz_ev_err, NULL};
    wk_pg_events ev = {&sink, WK_PG_EV_RAW_FLOATS, NULL, 0};
    size_t pos = 0, used = 0;
    wk_error err = {0};
    if (wk_pg_copy_header(p, n, &used, &err) == WK_OK) {
        pos = used;
        for (;;) {
            /* the rest as its own exact-size block */
            size_t left = n - pos;
            uint8_t *q = malloc(left ? left : 1);
            memcpy(q, p + pos, left);
            const uint8_t *vals[6];
            int lens[6];
            wk_status st = wk_pg_copy_row(q, left, ncols, vals, lens, &used, &err);
            if (st == WK_OK) {
                if (used == 0 || used > left) {
                    abort(); /* a tuple must consume what it read */
                }
                bool nulls[6];
                wk_arena_reset(&arena);
                for (size_t i = 0; i < ncols; i++) {
                    wk_buf_clear(&bufs[i]);
                }
                (void)wk_pg_plan_decode_row(plan, vals, lens, bufs, nulls, &arena, &err);
                wk_value v;
                (void)wk_pg_plan_value_row(plan, vals, lens, &arena, &v, &err);
                (void)wk_pg_plan_emit_row(plan, vals, lens, &ev, &err);
            }
            free(q);
            if (st != WK_OK) {
                break;
            }
            pos += used;
        }
    }
    for (size_t i = 0; i < ncols; i++) {
        wk_buf_free(&bufs[i]);
    }
    wk_arena_free(&arena);
    wk_pg_plan_free(plan);
    free(p);
    return 0;
}
