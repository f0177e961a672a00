/*
 * Fuzz harness for the tree decoders. The first byte picks options (copy strings, strict
 * UTF-8, a small depth limit). Checks that the fused decoder and the generic decoder over
 * the reader agree (status, offset, tree), that wk_mp_check agrees with both, and that an
 * accepted tree encodes (fused and generic encoders, same bytes) to MessagePack that decodes
 * back to an equal tree. Arenas are capped so that a tree can never take more than a fixed
 * multiple of the input.
 */
#include <stdlib.h>
#include <string.h>

#include "wirekit/msgpack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    unsigned flags = (data[0] & 1) != 0 ? WK_READ_COPY_STRINGS : 0;
    wk_read_opts ropts = {.flags = (data[0] & 2) != 0 ? WK_READ_STRICT_UTF8 : 0u,
                          .max_depth = (data[0] & 4) != 0 ? 8u : 0u};
    wk_read_opts vopts = {.flags = flags, .max_depth = ropts.max_depth};
    wk_read_opts fopts = {.flags = ropts.flags | flags, .max_depth = ropts.max_depth};
    data++;
    size--;
    size_t cap = 64 * size + (1u << 16);

    wk_arena a1;
    wk_arena_init(&a1, NULL, cap);
    wk_value *fused = NULL;
    size_t used = 0;
    wk_error ferr;
    wk_status fst = wk_mp_decode_value(data, size, &fopts, &a1, &fused, &used, &ferr);

    wk_arena a2;
    wk_arena_init(&a2, NULL, cap);
    wk_mp_reader r;
    wk_mp_reader_init(&r, data, size, &ropts);
    wk_source src;
    wk_mp_reader_source(&r, &src);
    wk_value *generic = NULL;
    wk_error gerr;
    wk_status gst = wk_value_decode(&src, &vopts, &a2, &generic, &gerr);
    wk_mp_reader_free(&r);

    size_t csize = 0;
    wk_error cerr;
    wk_status cst = wk_mp_check(data, size, &ropts, &csize, &cerr);

    if (size == 0) {
        /* empty input: a truncation for one-shot calls, a clean end for a stream */
        if (fst != WK_ERR_TRUNCATED || gst != WK_ERR_EOF || cst != WK_ERR_TRUNCATED) {
            abort();
        }
    } else if (fst != WK_ERR_NOMEM && gst != WK_ERR_NOMEM) {
        if (fst != gst || fst != cst) {
            abort();
        }
        if (fst == WK_OK) {
            if (used != csize || !wk_value_equal(fused, generic, NULL)) {
                abort();
            }
        } else if (ferr.offset != gerr.offset || ferr.offset != cerr.offset) {
            abort();
        }
    }

    if (fst == WK_OK) {
        wk_buf b1;
        wk_buf_init(&b1, NULL, 0);
        if (wk_mp_encode_value(fused, &b1, NULL) != WK_OK) {
            abort();
        }
        wk_buf b2;
        wk_buf_init(&b2, NULL, 0);
        wk_mp_writer w;
        wk_mp_writer_init(&w, &b2);
        wk_sink sink;
        wk_mp_writer_sink(&w, &sink);
        if (wk_value_encode(fused, NULL, &sink, NULL) != WK_OK || wk_mp_writer_finish(&w, NULL) ||
            b1.len != b2.len || memcmp(b1.data, b2.data, b1.len) != 0 || b1.len > used) {
            abort();
        }
        wk_arena a3;
        wk_arena_init(&a3, NULL, 0);
        wk_value *back = NULL;
        if (wk_mp_decode_value(b1.data, b1.len, &ropts, &a3, &back, NULL, NULL) != WK_OK ||
            !wk_value_equal(fused, back, NULL)) {
            abort();
        }
        wk_arena_free(&a3);
        wk_buf_free(&b1);
        wk_buf_free(&b2);
    }
    wk_arena_free(&a1);
    wk_arena_free(&a2);
    return 0;
}
