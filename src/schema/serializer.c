/*
 * Serializers: whole-object encode/decode in one wire format, picked at run time (the entity
 * cache, the command line). Both use the fused paths (schema_mp.c, schema_json_enc.c, schema_json_dec.c).
 */
#include <string.h>

#include "wirekit/schema.h"

static const wk_serializer mp_serializer = {"msgpack", wk_schema_encode_mp, wk_schema_decode_mp};

static const wk_serializer json_serializer = {"json", wk_schema_encode_json,
                                              wk_schema_decode_json};

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
