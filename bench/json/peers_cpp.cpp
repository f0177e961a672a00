/*
 * C++ peers of the json suite behind a C interface: rapidjson 1.1 (DOM parse with length,
 * Writer<StringBuffer>) and simdjson 3.0 (DOM parser reused across documents, as its
 * documentation recommends; input copied once into the padded buffer it requires).
 * rapidjson parses with kParseValidateEncodingFlag (UTF-8 checked, as wirekit does) and
 * kParseFullPrecisionFlag (correctly rounded doubles, as wirekit), into a document whose
 * MemoryPoolAllocator sits on one buffer cleared per op (as wirekit resets its arena).
 */
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/encodedstream.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <simdjson.h>

#include "bench_json.h"

/* ---- rapidjson ---------------------------------------------------------------------------- */

static const unsigned RJ_PARSE_FLAGS =
    rapidjson::kParseValidateEncodingFlag | rapidjson::kParseFullPrecisionFlag;

extern "C" uint64_t jb_rapidjson_parse(void *arg, uint64_t iters)
{
    const jb_input *in = static_cast<const jb_input *>(arg);
    uint64_t acc = 0;
    /* One pool buffer per batch, large enough for the corpus documents: Clear() keeps it. */
    std::vector<char> pool(in->len * 4 + 65536);
    rapidjson::MemoryPoolAllocator<> alloc(pool.data(), pool.size());
    for (uint64_t i = 0; i < iters; i++) {
        alloc.Clear();
        rapidjson::Document doc(&alloc);
        doc.Parse<RJ_PARSE_FLAGS>(reinterpret_cast<const char *>(in->data), in->len);
        acc += !doc.HasParseError();
    }
    return acc;
}

/* Validation without a DOM: the SAX Reader into a handler that accepts everything, numbers
 * kept as text (kParseNumbersAsStringsFlag: no conversion), UTF-8 checked. */
extern "C" uint64_t jb_rapidjson_validate(void *arg, uint64_t iters)
{
    const jb_input *in = static_cast<const jb_input *>(arg);
    uint64_t acc = 0;
    for (uint64_t i = 0; i < iters; i++) {
        rapidjson::MemoryStream ms(reinterpret_cast<const char *>(in->data), in->len);
        rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> is(ms);
        rapidjson::Reader reader;
        rapidjson::BaseReaderHandler<> handler;
        acc += !reader
                    .Parse<rapidjson::kParseValidateEncodingFlag |
                           rapidjson::kParseNumbersAsStringsFlag>(is, handler)
                    .IsError();
    }
    return acc;
}

extern "C" const char *jb_rapidjson_version(void)
{
    return RAPIDJSON_VERSION_STRING;
}

#define WK_STR2(x) #x
#define WK_STR(x) WK_STR2(x)
#define SIMDJSON_VERSION_STRING WK_STR(SIMDJSON_VERSION)

extern "C" const char *jb_simdjson_version(void)
{
    return SIMDJSON_VERSION_STRING;
}

extern "C" void *jb_rapidjson_load(const jb_input *in)
{
    rapidjson::Document *doc = new rapidjson::Document();
    doc->Parse<RJ_PARSE_FLAGS>(reinterpret_cast<const char *>(in->data), in->len);
    return doc;
}

extern "C" void jb_rapidjson_free(void *doc)
{
    delete static_cast<rapidjson::Document *>(doc);
}

extern "C" uint64_t jb_rapidjson_stringify(void *arg, uint64_t iters)
{
    rapidjson::Document *doc = static_cast<rapidjson::Document *>(arg);
    uint64_t acc = 0;
    rapidjson::StringBuffer sb; /* reused, as wirekit reuses its output buffer */
    for (uint64_t i = 0; i < iters; i++) {
        sb.Clear();
        rapidjson::Writer<rapidjson::StringBuffer> w(sb);
        doc->Accept(w);
        acc += sb.GetSize();
    }
    return acc;
}

extern "C" char *jb_rapidjson_dump(void *arg, size_t *len)
{
    rapidjson::Document *doc = static_cast<rapidjson::Document *>(arg);
    rapidjson::StringBuffer sb;
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    doc->Accept(w);
    *len = sb.GetSize();
    char *out = static_cast<char *>(std::malloc(*len + 1));
    std::memcpy(out, sb.GetString(), *len + 1);
    return out;
}

extern "C" uint64_t jb_rapidjson_seed_encode(void *arg, uint64_t iters)
{
    jb_seed_ctx *c = static_cast<jb_seed_ctx *>(arg);
    const jb_seed *s = &c->in;
    rapidjson::StringBuffer sb;
    for (uint64_t i = 0; i < iters; i++) {
        sb.Clear();
        rapidjson::Writer<rapidjson::StringBuffer> w(sb);
        w.StartObject();
        w.Key("username", 8);
        w.String(s->username, (rapidjson::SizeType)std::strlen(s->username));
        w.Key("password", 8);
        w.String(s->password, (rapidjson::SizeType)std::strlen(s->password));
        w.Key("age", 3);
        w.Int64(s->age);
        w.Key("enabled", 7);
        w.Bool(s->enabled);
        w.Key("metadata", 8);
        w.StartObject();
        w.Key("hello", 5);
        w.String(s->hello, (rapidjson::SizeType)std::strlen(s->hello));
        w.Key("int", 3);
        w.Int64(s->meta_int);
        w.EndObject();
        w.EndObject();
    }
    c->len = sb.GetSize();
    std::memcpy(c->buf, sb.GetString(), c->len);
    return c->len;
}

static void rj_str(const rapidjson::Value &o, const char *key, char *dst, size_t cap)
{
    rapidjson::Value::ConstMemberIterator it = o.FindMember(key);
    if (it != o.MemberEnd() && it->value.IsString()) {
        jb_copy(dst, cap, it->value.GetString(), it->value.GetStringLength());
    }
}

extern "C" uint64_t jb_rapidjson_seed_decode(void *arg, uint64_t iters)
{
    jb_seed_ctx *c = static_cast<jb_seed_ctx *>(arg);
    jb_seed *s = &c->out;
    char pool[4096];
    rapidjson::MemoryPoolAllocator<> alloc(pool, sizeof pool);
    for (uint64_t i = 0; i < iters; i++) {
        alloc.Clear();
        rapidjson::Document doc(&alloc);
        doc.Parse<RJ_PARSE_FLAGS>(reinterpret_cast<const char *>(c->json.data), c->json.len);
        rj_str(doc, "username", s->username, sizeof s->username);
        rj_str(doc, "password", s->password, sizeof s->password);
        s->age = doc["age"].GetInt64();
        s->enabled = doc["enabled"].GetBool();
        const rapidjson::Value &meta = doc["metadata"];
        rj_str(meta, "hello", s->hello, sizeof s->hello);
        s->meta_int = meta["int"].GetInt64();
    }
    return (uint64_t)s->age;
}

/* ---- simdjson ----------------------------------------------------------------------------- */

struct simd_state {
    simdjson::padded_string input;
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    bool ok = false;
    jb_seed seed;
};

extern "C" void *jb_simdjson_prepare(const jb_input *in)
{
    simd_state *s = new simd_state();
    s->input = simdjson::padded_string(reinterpret_cast<const char *>(in->data), in->len);
    return s;
}

extern "C" void jb_simdjson_release(void *state)
{
    delete static_cast<simd_state *>(state);
}

extern "C" uint64_t jb_simdjson_parse(void *state, uint64_t iters)
{
    simd_state *s = static_cast<simd_state *>(state);
    uint64_t acc = 0;
    for (uint64_t i = 0; i < iters; i++) {
        auto r = s->parser.parse(s->input);
        s->ok = r.error() == simdjson::SUCCESS;
        if (s->ok) {
            s->root = r.value_unsafe();
        }
        acc += s->ok;
    }
    return acc;
}

extern "C" bool jb_simdjson_ok(void *state)
{
    return static_cast<simd_state *>(state)->ok;
}

extern "C" uint64_t jb_simdjson_stringify(void *state, uint64_t iters)
{
    simd_state *s = static_cast<simd_state *>(state);
    uint64_t acc = 0;
    for (uint64_t i = 0; i < iters; i++) {
        std::string out = simdjson::to_string(s->root);
        acc += out.size();
    }
    return acc;
}

extern "C" char *jb_simdjson_dump(void *state, size_t *len)
{
    simd_state *s = static_cast<simd_state *>(state);
    std::string out = simdjson::to_string(s->root);
    *len = out.size();
    char *d = static_cast<char *>(std::malloc(out.size() + 1));
    std::memcpy(d, out.c_str(), out.size() + 1);
    return d;
}

static void sj_str(simdjson::dom::element o, const char *key, char *dst, size_t cap)
{
    std::string_view v;
    if (o[key].get_string().get(v) == simdjson::SUCCESS) {
        jb_copy(dst, cap, v.data(), v.size());
    }
}

extern "C" uint64_t jb_simdjson_seed_decode(void *state, uint64_t iters)
{
    simd_state *st = static_cast<simd_state *>(state);
    jb_seed *s = &st->seed;
    for (uint64_t i = 0; i < iters; i++) {
        simdjson::dom::element root;
        if (st->parser.parse(st->input).get(root) != simdjson::SUCCESS) {
            return 0;
        }
        sj_str(root, "username", s->username, sizeof s->username);
        sj_str(root, "password", s->password, sizeof s->password);
        int64_t n = 0;
        bool b = false;
        if (root["age"].get_int64().get(n) == simdjson::SUCCESS) {
            s->age = n;
        }
        if (root["enabled"].get_bool().get(b) == simdjson::SUCCESS) {
            s->enabled = b;
        }
        simdjson::dom::element meta;
        if (root["metadata"].get(meta) == simdjson::SUCCESS) {
            sj_str(meta, "hello", s->hello, sizeof s->hello);
            if (meta["int"].get_int64().get(n) == simdjson::SUCCESS) {
                s->meta_int = n;
            }
        }
    }
    return (uint64_t)s->age;
}

extern "C" void jb_simdjson_seed_result(void *state, jb_seed *out)
{
    *out = static_cast<simd_state *>(state)->seed;
}
