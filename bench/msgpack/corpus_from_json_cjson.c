/*
 * Bench-only: JSON -> MessagePack through two peers, cJSON (parse) and msgpack-c (pack). It
 * runs once per corpus file before timing starts; its only job is to give every
 * implementation the same MessagePack input. cJSON keeps numbers as doubles, so integers
 * beyond 2^53 (twitter's ids) lose precision here; that changes the data, not the benchmark.
 */
#include <cJSON.h>
#include <math.h>
#include <msgpack.h>
#include <stdlib.h>
#include <string.h>

#include "bench_msgpack.h"

static void pack(msgpack_packer *pk, const cJSON *j)
{
    if (cJSON_IsNull(j)) {
        msgpack_pack_nil(pk);
    } else if (cJSON_IsBool(j)) {
        if (cJSON_IsTrue(j)) {
            msgpack_pack_true(pk);
        } else {
            msgpack_pack_false(pk);
        }
    } else if (cJSON_IsNumber(j)) {
        double d = j->valuedouble;
        if (d == floor(d) && d >= -9.2e18 && d <= 9.2e18) {
            msgpack_pack_int64(pk, (int64_t)d);
        } else {
            msgpack_pack_double(pk, d);
        }
    } else if (cJSON_IsString(j)) {
        size_t n = strlen(j->valuestring);
        msgpack_pack_str(pk, n);
        msgpack_pack_str_body(pk, j->valuestring, n);
    } else if (cJSON_IsArray(j) || cJSON_IsObject(j)) {
        size_t n = 0;
        for (const cJSON *c = j->child; c != NULL; c = c->next) {
            n++;
        }
        if (cJSON_IsArray(j)) {
            msgpack_pack_array(pk, n);
        } else {
            msgpack_pack_map(pk, n);
        }
        for (const cJSON *c = j->child; c != NULL; c = c->next) {
            if (cJSON_IsObject(j)) {
                size_t kn = strlen(c->string);
                msgpack_pack_str(pk, kn);
                msgpack_pack_str_body(pk, c->string, kn);
            }
            pack(pk, c);
        }
    }
}

uint8_t *bench_corpus_json_to_msgpack_cjson(const char *json, size_t json_len, size_t *len)
{
    cJSON *root = cJSON_ParseWithLength(json, json_len);
    if (root == NULL) {
        return NULL;
    }
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    pack(&pk, root);
    cJSON_Delete(root);
    uint8_t *out = malloc(sb.size);
    if (out != NULL) {
        memcpy(out, sb.data, sb.size);
        *len = sb.size;
    }
    msgpack_sbuffer_destroy(&sb);
    return out;
}
