/*
 * Serializers: whole-object encode/decode in one wire format, picked at run time (the entity
 * cache, the command line). MessagePack uses the fused paths; JSON goes through the generic
 * event paths over the JSON reader and writer.
 */
#include <string.h>

#include "wirekit/json.h"
#include "wirekit/schema.h"

static const wk_serializer mp_serializer = {"msgpack", wk_schema_encode_mp, wk_schema_decode_mp};

static wk_status json_encode(const wk_schema *s, const void *obj, wk_buf *out, wk_error *err)
{
    size_t start = out->len;
    wk_json_writer w;
    wk_json_writer_init(&w, out, NULL);
    wk_sink sink;
    wk_json_writer_sink(&w, &sink);
    wk_status st = wk_schema_encode(s, obj, &sink, err);
    wk_status fin = wk_json_writer_finish(&w, st == WK_OK ? err : NULL);
    if (st == WK_OK) {
        st = fin;
    }
    if (st != WK_OK) {
        out->len = start;
    }
    return st;
}

static wk_status json_decode(const wk_schema *s, const void *data, size_t len, void *obj,
                             wk_arena *arena, const wk_schema_opts *opts, wk_schema_error *err)
{
    wk_json_reader r;
    /* Escaped strings go to the reader's scratch buffer: the decoder copies every string it
     * keeps before asking for the next event. */
    wk_json_reader_init(&r, data, len, NULL, NULL);
    wk_source src;
    wk_json_reader_source(&r, &src);
    wk_status st = wk_schema_decode(s, &src, obj, arena, opts, err);
    if (st == WK_OK) {
        wk_event ev;
        st = wk_json_reader_next(&r, &ev);
        if (st == WK_ERR_EOF) {
            st = WK_OK;
        } else if (st == WK_OK) {
            st = wk_error_set(err != NULL ? &err->base : NULL, WK_ERR_TRAILING,
                              wk_json_reader_offset(&r), "trailing bytes after the value");
        } else if (err != NULL) {
            wk_json_reader_error(&r, &err->base);
            err->path[0] = '\0';
        }
    }
    wk_json_reader_free(&r);
    return st;
}

static const wk_serializer json_serializer = {"json", json_encode, json_decode};

WK_API const wk_serializer *wk_serializer_json(void)
{
    return &json_serializer;
}

WK_API const wk_serializer *wk_serializer_msgpack(void)
{
    return &mp_serializer;
}

WK_API const wk_serializer *wk_serializer_find(const char *name)
{
    if (name == NULL) {
        return NULL;
    }
    if (strcmp(name, "msgpack") == 0) {
        return &mp_serializer;
    }
    if (strcmp(name, "json") == 0) {
        return &json_serializer;
    }
    return NULL;
}
