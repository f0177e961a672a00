/*
 * Fuzz harness for the JSON readers. Any input: the fused tree parser and the event reader
 * (through wk_value_decode) must agree on the status and, when both accept, on the tree;
 * an accepted tree written compactly (tree walker and event writer alike) must read back as
 * the same tree, and written into fixed buffers too short for it, must give a prefix of that
 * text and WK_ERR_LIMIT. The fused parser also runs on the lexer's baseline instance and must
 * agree with the machine's best (AVX2) to the error offset. The typed reads walk the input
 * twice, through json.h's inline fast paths and through their out-of-line halves, with the
 * calls picked by the input's own bytes: every status, value and the reader's whole state
 * must agree after each call. The first byte picks reader options so all modes get
 * exercised. Any disagreement traps.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/json/lex.h"
#include "wirekit/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const unsigned MODES[] = {0, WK_JSON_READ_RAW_NUMBERS, WK_READ_COPY_STRINGS,
                                 WK_JSON_READ_ALLOW_BOM | WK_JSON_READ_NAN_INF,
                                 WK_JSON_READ_ALLOW_TRAILING};

/* The two readers are at the same point (cursor, state, nesting and its bits, values, the
 * latched error). */
static bool same_reader(const wk_json_reader *a, const wk_json_reader *b)
{
    if (a->p - a->start != b->p - b->start || a->state != b->state || a->depth != b->depth ||
        a->values != b->values || a->err.code != b->err.code ||
        a->err.offset != b->err.offset || a->err.msg != b->err.msg ||
        (a->err.code != WK_OK) != (a->state == WK__JR_FAILED)) {
        return false;
    }
    for (uint32_t d = 0; d < a->depth && d < 512; d++) {
        if (((a->stack[d >> 6] ^ b->stack[d >> 6]) >> (d & 63)) & 1) {
            return false;
        }
    }
    return true;
}

/* The inline typed reads (begin_map, key, str, int, bool, end) against their out-of-line
 * halves on data[0..size), call by call; kind k (0-6, 6 = next) of each call comes from the
 * input's bytes in turn. */
static void typed_inline_vs_slow(const uint8_t *data, size_t size, const wk_read_opts *ro)
{
    wk_json_reader a, b;
    wk_json_reader_init(&a, data, size, ro, NULL);
    wk_json_reader_init(&b, data, size, ro, NULL);
    for (size_t i = 0; i < 4 * size + 16; i++) {
        unsigned kind = size != 0 ? (unsigned)(data[i % size] + i / size) % 7u : (unsigned)i % 7u;
        const char *sa = NULL, *sb = NULL;
        size_t na = 0, nb = 0;
        int64_t ia = 0, ib = 0;
        bool ba = false, bb = false;
        wk_status xa, xb;
        wk_event ea, eb;
        switch (kind) {
        case 0:
            xa = wk_json_reader_begin_map(&a);
            xb = wk_json_reader_begin_map_slow(&b);
            break;
        case 1:
            xa = wk_json_reader_key(&a, &sa, &na);
            xb = wk_json_reader_key_slow(&b, &sb, &nb);
            break;
        case 2:
            xa = wk_json_reader_str(&a, &sa, &na);
            xb = wk_json_reader_str_slow(&b, &sb, &nb);
            break;
        case 3:
            xa = wk_json_reader_int(&a, &ia);
            xb = wk_json_reader_int_slow(&b, &ib);
            break;
        case 4:
            xa = wk_json_reader_bool(&a, &ba);
            xb = wk_json_reader_bool_slow(&b, &bb);
            break;
        case 5:
            xa = wk_json_reader_end(&a);
            xb = wk_json_reader_end_slow(&b);
            break;
        default:
            xa = wk_json_reader_next(&a, &ea);
            xb = wk_json_reader_next(&b, &eb);
            if (xa == WK_OK && xb == WK_OK && ea.type != eb.type) {
                __builtin_trap();
            }
            break;
        }
        if (xa != xb || !same_reader(&a, &b) || na != nb ||
            (na != 0 && memcmp(sa, sb, na) != 0) || ia != ib || ba != bb) {
            __builtin_trap();
        }
        if (xa != WK_OK && xa != WK_ERR_TYPE && xa != WK_ERR_STATE && xa != WK_ERR_RANGE) {
            break; /* EOF or a latched error */
        }
    }
    wk_json_reader_free(&a);
    wk_json_reader_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    unsigned flags = MODES[data[0] % (sizeof MODES / sizeof MODES[0])];
    wk_read_opts ro = {.flags = flags, .max_depth = (uint32_t)(data[0] >> 4) * 8 + 1};
    data++;
    size--;

    wk_arena a1, a2;
    wk_arena_init(&a1, NULL, 64u << 20);
    wk_arena_init(&a2, NULL, 64u << 20);
    wk_value *fused = NULL, *generic = NULL;
    size_t used = 0;
    wk_error e1 = {WK_OK, 0, NULL};
    wk_status s1 = wk_json_decode_value(data, size, &ro, &a1, &fused, &used, &e1);

    /* The fused parser on the lexer's baseline instance (the call above ran the machine's
     * best, AVX2 here): same status, offset, message, consumed bytes and tree. */
    {
        wk_arena a3;
        wk_arena_init(&a3, NULL, 64u << 20);
        wk_value *base = NULL;
        size_t used3 = 0;
        wk_error e3 = {WK_OK, 0, NULL};
        wk__json_simd_force(WK__JSON_SIMD_BASE);
        wk_status s3 = wk_json_decode_value(data, size, &ro, &a3, &base, &used3, &e3);
        wk__json_simd_force(0);
        if (s3 != s1 || e3.offset != e1.offset || e3.msg != e1.msg ||
            (s1 == WK_OK && (used3 != used || !wk_value_equal(fused, base, NULL)))) {
            __builtin_trap();
        }
        wk_arena_free(&a3);
    }

    typed_inline_vs_slow(data, size, &ro);

    wk_json_reader r;
    wk_json_reader_init(&r, data, size, &ro, &a2);
    wk_source src;
    wk_json_reader_source(&r, &src);
    wk_read_opts vo = {.flags = (flags & WK_READ_COPY_STRINGS) ? WK_READ_COPY_STRINGS : 0u, .max_depth = ro.max_depth};
    wk_status s2 = wk_value_decode(&src, &vo, &a2, &generic, NULL);
    if (s2 == WK_OK) {
        wk_event ev;
        s2 = wk_json_reader_next(&r, &ev);
        s2 = s2 == WK_ERR_EOF ? WK_OK : s2;
    }
    wk_json_reader_free(&r);
    if (s1 != s2 || (s1 == WK_OK && !wk_value_equal(fused, generic, NULL))) {
        __builtin_trap();
    }
    if (s1 == WK_OK) {
        wk_json_write_opts wo = {WK_JSON_WRITE_NAN_INF, 0};
        wk_buf out, out2;
        wk_buf_init(&out, NULL, 0);
        wk_buf_init(&out2, NULL, 0);
        wk_status w1 = wk_json_encode_value(fused, &wo, &out, NULL);
        wk_json_writer w;
        wk_json_writer_init(&w, &out2, &wo);
        wk_sink sink;
        wk_json_writer_sink(&w, &sink);
        wk_status w2 = wk_value_encode(fused, NULL, &sink, NULL);
        if (w2 == WK_OK) {
            w2 = wk_json_writer_finish(&w, NULL);
        }
        if (w1 != w2 || (w1 == WK_OK && (out.len != out2.len ||
                                         (out.len != 0 &&
                                          memcmp(out.data, out2.data, out.len) != 0)))) {
            __builtin_trap();
        }
        if (w1 == WK_OK) {
            /* The compact walker into fixed buffers of exactly the size given (heap blocks,
             * so a store past the room traps under ASan): short of the full size it fails
             * with WK_ERR_LIMIT after writing a prefix of the text, at full size it writes
             * the text. */
            size_t caps[4] = {out.len, out.len - (out.len != 0), out.len / 2, out.len / 3};
            for (int k = 0; k < 4; k++) {
                uint8_t *mem = malloc(caps[k] != 0 ? caps[k] : 1);
                if (mem == NULL) {
                    break;
                }
                wk_buf fixed;
                wk_buf_init_fixed(&fixed, mem, caps[k]);
                wk_status wf = wk_json_encode_value(fused, &wo, &fixed, NULL);
                if (wf != (caps[k] == out.len ? WK_OK : WK_ERR_LIMIT) || fixed.len > caps[k] ||
                    (fixed.len != 0 && memcmp(mem, out.data, fixed.len) != 0) ||
                    (wf == WK_OK && fixed.len != out.len)) {
                    __builtin_trap();
                }
                free(mem);
            }
            wk_read_opts back = {.flags = (flags & WK_JSON_READ_RAW_NUMBERS) | WK_JSON_READ_NAN_INF, .max_depth = 0};
            wk_value *again = NULL;
            wk_arena_reset(&a2);
            if (wk_json_decode_value(out.data, out.len, &back, &a2, &again, NULL, NULL) != WK_OK ||
                !wk_value_equal(fused, again, NULL)) {
                __builtin_trap();
            }
        }
        wk_buf_free(&out);
        wk_buf_free(&out2);
    }
    wk_arena_free(&a1);
    wk_arena_free(&a2);
    return 0;
}
