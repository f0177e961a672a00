/*
 * JSON <-> MessagePack without a tree: one format's reader (a wk_source) pumped into the
 * other's writer (a wk_sink) by wk_transcode. Neither side knows the other's bytes; the only
 * contract is the event vocabulary. MessagePack needs container counts up front and JSON
 * does not give them, so the MessagePack writer back-patches WK_COUNT_UNKNOWN headers.
 * It lives in src/convert, above both codecs: neither codec module includes the other.
 */
#include "wirekit/json.h"
#include "wirekit/msgpack.h"

WK_API wk_status wk_json_to_msgpack(const void *json, size_t len, const wk_read_opts *opts,
                                    wk_buf *out, wk_error *err)
{
    wk_json_reader r;
    wk_json_reader_init(&r, json, len, opts, NULL);
    wk_mp_writer w;
    wk_mp_writer_init(&w, out);
    wk_source src;
    wk_sink sink;
    wk_json_reader_source(&r, &src);
    wk_mp_writer_sink(&w, &sink);
    wk_error e1 = {WK_OK, 0, NULL};
    wk_status st = wk_transcode(&src, &sink, &e1);
    wk_error e2 = {WK_OK, 0, NULL};
    wk_status fin = wk_mp_writer_finish(&w, &e2);
    wk_json_reader_free(&r);
    if (st != WK_OK) {
        if (err != NULL) {
            *err = e1;
        }
        return st;
    }
    if (fin != WK_OK && err != NULL) {
        *err = e2;
    }
    return fin;
}

WK_API wk_status wk_json_from_msgpack(const void *mp, size_t len, const wk_json_write_opts *opts,
                                      uint32_t max_depth, wk_buf *out, wk_error *err)
{
    wk_read_opts ro = {.flags = WK_READ_STRICT_UTF8, .max_depth = max_depth};
    wk_mp_reader r;
    wk_mp_reader_init(&r, mp, len, &ro);
    wk_json_writer w;
    wk_json_writer_init(&w, out, opts);
    wk_source src;
    wk_sink sink;
    wk_mp_reader_source(&r, &src);
    wk_json_writer_sink(&w, &sink);
    wk_status st = wk_transcode(&src, &sink, err);
    wk_mp_reader_free(&r);
    if (st != WK_OK) {
        return st;
    }
    return wk_json_writer_finish(&w, err);
}
