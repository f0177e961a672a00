/*
 * Fuzz harness for JSON <-> MessagePack transcoding. Any input read as JSON Lines: JSON ->
 * MessagePack -> JSON must give exactly the compact re-serialisation of the input (the JSON
 * reader wired to the JSON writer), or both must fail the same way; the MessagePack
 * produced must validate and, when the input converts, hold as many values as the input
 * has. Any disagreement traps.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wirekit/json.h"
#include "wirekit/msgpack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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

    wk_status to = wk_json_to_msgpack(data, size, &ro, &mp, NULL);
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
