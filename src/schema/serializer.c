/*
 * Serializers: whole-object encode/decode in one wire format, picked at run time (the entity
 * cache, the command line). Flow: a struct -> wk_serializer (this table) -> the format's
 * fused schema paths (formats/msgpack/schema_mp.c, formats/json/schema_json_enc.c,
 * schema_json_dec.c) -> bytes, and back.
 */
#include <string.h>

#include "wirekit/schema.h"

/* The two serializers: static, so the pointers handed out stay valid for the process. */
static const wk_serializer mp_serializer = {"msgpack", wk_schema_encode_mp, wk_schema_decode_mp};

static const wk_serializer json_serializer = {"json", wk_schema_encode_json,
                                              wk_schema_decode_json};

/* The JSON serializer (wk_schema_encode_json, wk_schema_decode_json). */
WK_API const wk_serializer *wk_serializer_json(void)
{
    return &json_serializer;
}

/* The MessagePack serializer (wk_schema_encode_mp, wk_schema_decode_mp). */
WK_API const wk_serializer *wk_serializer_msgpack(void)
{
    return &mp_serializer;
}

/* The serializer named "msgpack" or "json" (exact, case-sensitive), else NULL. */
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
