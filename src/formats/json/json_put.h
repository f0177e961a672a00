/*
 * The JSON writer's byte-level string printers, for the fused schema encoder
 * (formats/json/schema_json_enc.c), which writes its own keys, numbers and separators but must print
 * strings, base64 and timestamps exactly as the writer does. Each appends to `b` and returns
 * WK_OK or the writer's status for the same data (WK_ERR_UTF8, WK_ERR_RANGE, WK_ERR_LIMIT,
 * WK_ERR_NOMEM); on failure `b` may hold part of the text (the caller drops it).
 * Flow: formats/json/schema_json_enc.c -> these printers (writer.c's own helpers) -> the
 * caller's wk_buf.
 */
#ifndef WK_JSON_PUT_H
#define WK_JSON_PUT_H

#include "wirekit/buffer.h"

/** s[0..n) as a quoted JSON string (escaped, UTF-8 checked). */
wk_status wk__json_put_string(wk_buf *b, const void *s, size_t n);

/** s[0..n) as a quoted base64 string (a WK_EV_BIN value). */
wk_status wk__json_put_base64(wk_buf *b, const void *s, size_t n);

/** A timestamp as a quoted RFC 3339 string (a WK_EV_TIMESTAMP value). */
wk_status wk__json_put_timestamp(wk_buf *b, int64_t sec, uint32_t nsec);

#endif
