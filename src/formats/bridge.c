/*
 * The one-shot JSON <-> MessagePack bridges: wk_convert between the table's rows, the path
 * `wirekit convert` takes value by value (see convert.c). They live in src/formats, above both
 * codecs: neither codec module includes the other.
 */
#include "wirekit/format.h"

WK_API wk_status wk_json_to_msgpack(const void *json, size_t len, const wk_read_opts *opts,
                                    wk_buf *out, wk_error *err)
{
    return wk_convert(wk_format_json(), wk_format_msgpack(), json, len, opts, NULL, out, err);
}

WK_API wk_status wk_json_from_msgpack(const void *mp, size_t len, const wk_json_write_opts *opts,
                                      uint32_t max_depth, wk_buf *out, wk_error *err)
{
    /* no WK_READ_STRICT_UTF8: the JSON writer checks every string anyway, and the converter
     * names a string it refuses at the input offset of its first bad byte */
    wk_read_opts ro = {.max_depth = max_depth};
    return wk_convert(wk_format_msgpack(), wk_format_json(), mp, len, &ro, opts, out, err);
}
