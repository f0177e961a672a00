/*
 * Fuzz harness for JSON <-> MessagePack transcoding. Any input read as JSON Lines: JSON ->
 * MessagePack -> JSON must give exactly the compact re-serialisation of the input (the JSON
 * reader wired to the JSON writer), or both must fail the same way; the MessagePack
 * produced must validate and, when the input converts, hold as many values as the input
 * has. The converter's streaming path (every value through the events of its bytes and the
 * MessagePack sink's back-patched headers, as values longer than its tree_max go) must give
 * what the tree path gives: status, offset, message and bytes. Any disagreement traps.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wirekit/format.h"
#include "wirekit/json.h"
#include "wirekit/msgpack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* JSON to MessagePack through wk_converter with every value streamed (white-box: tree_max
 * 0), the whole input one chunk as wk_convert feeds it. */
static wk_status streamed(const uint8_t *data, size_t size, const wk_read_opts *ro,
                          wk_buf *out, wk_error *err)
{
    wk_converter c;
    wk_converter_init(&c, wk_format_json(), wk_format_msgpack(), ro, NULL,
                      size < WK_UNPACKER_DEFAULT_MAX ? 0 : size + 1, out);
    c.tree_max = 0;
    wk_converter_feed(&c, size != 0 ? data : NULL, size);
    wk_converter_finish(&c);
    wk_status st;
    do {
        st = wk_converter_next(&c);
    } while (st == WK_OK);
    if (st == WK_ERR_EOF) {
        st = WK_OK;
        wk_error_set(err, WK_OK, out->len, NULL);
    } else {
        wk_converter_error(&c, err, NULL, NULL, NULL);
    }
    wk_converter_free(&c);
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    wk_read_opts ro = {.flags = WK_JSON_READ_MULTI, .max_depth = 0};
    wk_buf compact, mp, back;
    wk_buf_init(&compact, NULL, 0);
    wk_buf_init(&mp, NULL, 0);
    wk_buf_init(&back, NULL, 0);

    /* The compact form: JSON reader straight into the JSON writer. */
    wk_json_reader r;
    wk_json_reader_init(&r, data, size, &ro, NULL);
    wk_json_writer w;
    wk_json_writer_init(&w, &compact, NULL);
    wk_source src;
    wk_sink sink;
    wk_json_reader_source(&r, &src);
    wk_json_writer_sink(&w, &sink);
    wk_status direct = wk_transcode(&src, &sink, NULL);
    if (direct == WK_OK) {
        direct = wk_json_writer_finish(&w, NULL);
    }
    uint32_t values = r.values;
    wk_json_reader_free(&r);

    wk_error to_err, st_err;
    wk_status to = wk_json_to_msgpack(data, size, &ro, &mp, &to_err);
    wk_buf st_mp;
    wk_buf_init(&st_mp, NULL, 0);
    if (streamed(data, size, &ro, &st_mp, &st_err) != to || st_err.code != to_err.code ||
        st_err.offset != to_err.offset ||
        (st_err.msg != to_err.msg &&
         (st_err.msg == NULL || to_err.msg == NULL || strcmp(st_err.msg, to_err.msg) != 0)) ||
        st_mp.len != mp.len || (mp.len != 0 && memcmp(st_mp.data, mp.data, mp.len) != 0)) {
        __builtin_trap(); /* the streaming path differs from the tree path */
    }
    wk_buf_free(&st_mp);
    if (to == WK_OK) {
        size_t count = 0;
        if (wk_mp_validate(mp.data, mp.len, NULL, &count, NULL) != WK_OK ||
            (direct == WK_OK && count != values)) {
            __builtin_trap();
        }
        wk_status from = wk_json_from_msgpack(mp.data, mp.len, NULL, 0, &back, NULL);
        if (from != direct) {
            __builtin_trap(); /* e.g. both refuse an infinity, or both succeed */
        }
        if (from == WK_OK &&
            (back.len != compact.len ||
             (back.len != 0 && memcmp(back.data, compact.data, back.len) != 0))) {
            __builtin_trap();
        }
    } else if (direct == WK_OK) {
        __builtin_trap(); /* the reader accepted what the transcoder refused */
    }
    wk_buf_free(&compact);
    wk_buf_free(&mp);
    wk_buf_free(&back);
    return 0;
}
