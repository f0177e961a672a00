/* Helpers shared by the JSON unit tests: event dumps and parse-then-write round trips. */
#ifndef JSON_TEST_UTIL_H
#define JSON_TEST_UTIL_H

#include <stdlib.h>

#include "wirekit/json.h"
#include "wk_test.h"

/* Reads every event of `json` (with `flags`) and writes them back compactly with the event
 * writer. Returns the reader's final status (WK_OK at a clean EOF); `out` must be freed. */
static inline wk_status json_reencode(const char *json, size_t len, unsigned flags, wk_buf *out,
                                      wk_error *err)
{
    wk_read_opts ro = {.flags = flags, .max_depth = 0};
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_json_reader r;
    wk_json_reader_init(&r, json, len, &ro, &arena);
    wk_json_writer w;
    wk_buf_init(out, NULL, 0);
    wk_json_writer_init(&w, out, NULL);
    wk_source src;
    wk_sink sink;
    wk_json_reader_source(&r, &src);
    wk_json_writer_sink(&w, &sink);
    wk_status st = wk_transcode(&src, &sink, err);
    if (st == WK_OK) {
        st = wk_json_writer_finish(&w, err);
    }
    wk_json_reader_free(&r);
    wk_arena_free(&arena);
    return st;
}

/* Status of reading all of `json` with the event reader; err gets the details. */
static inline wk_status json_read_all(const void *json, size_t len, unsigned flags,
                                      uint32_t max_depth, wk_error *err)
{
    wk_read_opts ro = {.flags = flags, .max_depth = max_depth};
    wk_json_reader r;
    wk_json_reader_init(&r, json, len, &ro, NULL);
    wk_event ev;
    wk_status st;
    do {
        st = wk_json_reader_next(&r, &ev);
    } while (st == WK_OK);
    if (st == WK_ERR_EOF) {
        st = WK_OK;
    }
    wk_json_reader_error(&r, err);
    wk_json_reader_free(&r);
    return st;
}

/* Status of the fused tree parser on `json`. */
static inline wk_status json_decode_status(const void *json, size_t len, unsigned flags,
                                           uint32_t max_depth, wk_error *err)
{
    wk_read_opts ro = {.flags = flags, .max_depth = max_depth};
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_value *v = NULL;
    wk_status st = wk_json_decode_value(json, len, &ro, &arena, &v, NULL, err);
    wk_arena_free(&arena);
    return st;
}

#endif
