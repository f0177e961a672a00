/*
 * Suite "pg". Part 1 is the seed's registry benchmark (SEEDS.md section 1): one iteration is
 * the same 9 decodes and 11 encodes (int2/int4/float4/float8/varchar/timestamp and
 * int2[]/int4[]/float8[], text and binary, plus three NULL encodes that only need the type),
 * run 10, 100 and 1000 times per operation, once resolving every call through the registry
 * table and once through the linear scan (the oracle, "cache off"). Every call produces real
 * output: values decoded into C variables, bytes written into a buffer; a checksum of them
 * must agree between the two. Part 2 is lookup cost with 10, 100 and 1000 added codecs.
 * Parts 3 (bench_pg_result.c) and 4 (bench_pg_loader.c: a cache miss through the loader)
 * need a server.
 */
#include <string.h>

#include "bench.h"
#include "wirekit/pg.h"
#include "pg/pg_oracle.h"

int wk_bench_pg_result(wk_bench *b);
int wk_bench_pg_loader(wk_bench *b);

typedef struct seed {
    const wk_pg_registry *reg;
    bool scan;
    uint64_t n; /* iterations per operation */
    wk_buf out;
} seed;

/* ---- lookups: table or scan ---- */

static const wk_pg_decoder *dec_of(seed *s, wk_pg_oid oid, wk_pg_format f, wk_pg_kind k,
                                   wk_pg_decoder *tmp)
{
    if (!s->scan) {
        return wk_pg_registry_find_decoder(s->reg, oid, f, k);
    }
    return wk__pg_registry_scan_decoder(s->reg, oid, f, k, tmp) ? tmp : NULL;
}

static const wk_pg_encoder *enc_of(seed *s, wk_pg_kind k, wk_pg_kind ek, wk_pg_encoder *tmp)
{
    if (!s->scan) {
        return k == WK_PG_KIND_ARRAY ? wk_pg_registry_find_array_encoder(s->reg, WK_PG_BINARY, ek)
                                     : wk_pg_registry_find_encoder(s->reg, WK_PG_BINARY, k);
    }
    return wk__pg_registry_scan_encoder(s->reg, WK_PG_BINARY, k, ek, tmp) ? tmp : NULL;
}

/* ---- the 9 decodes ---- */

static const uint8_t int4_bin[4] = {0, 0, 0x30, 0x39};
static const uint8_t float4_bin[4] = {0x40, 0x49, 0x0f, 0xd0};
static const char int2_txt[] = "1234";
static const char float8_txt[] = "3.141592653589793";
static const char varchar_txt[] = "hello, world";
static const char ts_txt[] = "2023-05-06 12:34:56.789";
static const char int2a_txt[] = "{1,2,3}";
static const char int4a_txt[] = "{100,200,300}";
static const char float8a_txt[] = "{1.5,2.5,3.5}";

/* One array decode: the int2[]/int4[]/float8[] value straight into a C array. */
static uint64_t decode_array(seed *s, wk_pg_oid oid, const char *txt, size_t len, wk_pg_kind ek,
                             void *out)
{
    wk_pg_decoder t;
    const wk_pg_decoder *d = dec_of(s, oid, WK_PG_TEXT, WK_PG_KIND_ARRAY, &t);
    wk_pg_carray ca = {ek, out, NULL, 8, 0};
    if (wk_pg_decode_array(d, txt, len, &ca, NULL, NULL) != WK_OK) {
        return 1u << 31;
    }
    return ca.count;
}

static uint64_t nine_decodes(seed *s)
{
    wk_pg_decoder t;
    int32_t i4 = 0;
    int16_t i2 = 0;
    double f8 = 0;
    float f4 = 0;
    wk_slice str = {NULL, 0};
    int64_t ts = 0;
    int16_t a2[8];
    int32_t a4[8];
    double a8[8];
    wk_pg_decode(dec_of(s, WK_PG_OID_INT4, WK_PG_BINARY, WK_PG_KIND_I32, &t), int4_bin, 4, &i4,
                 NULL, NULL);
    wk_pg_decode(dec_of(s, WK_PG_OID_INT2, WK_PG_TEXT, WK_PG_KIND_I16, &t), int2_txt, 4, &i2,
                 NULL, NULL);
    wk_pg_decode(dec_of(s, WK_PG_OID_FLOAT8, WK_PG_TEXT, WK_PG_KIND_F64, &t), float8_txt,
                 sizeof float8_txt - 1, &f8, NULL, NULL);
    wk_pg_decode(dec_of(s, WK_PG_OID_FLOAT4, WK_PG_BINARY, WK_PG_KIND_F32, &t), float4_bin, 4,
                 &f4, NULL, NULL);
    wk_pg_decode(dec_of(s, WK_PG_OID_VARCHAR, WK_PG_TEXT, WK_PG_KIND_STR, &t), varchar_txt,
                 sizeof varchar_txt - 1, &str, NULL, NULL);
    wk_pg_decode(dec_of(s, WK_PG_OID_TIMESTAMP, WK_PG_TEXT, WK_PG_KIND_TIMESTAMP, &t), ts_txt,
                 sizeof ts_txt - 1, &ts, NULL, NULL);
    uint64_t k = decode_array(s, WK_PG_OID_INT2_ARRAY, int2a_txt, sizeof int2a_txt - 1,
                              WK_PG_KIND_I16, a2);
    k += decode_array(s, WK_PG_OID_INT4_ARRAY, int4a_txt, sizeof int4a_txt - 1, WK_PG_KIND_I32,
                      a4);
    k += decode_array(s, WK_PG_OID_FLOAT8_ARRAY, float8a_txt, sizeof float8a_txt - 1,
                      WK_PG_KIND_F64, a8);
    wk_bench_escape(a2);
    wk_bench_escape(a4);
    wk_bench_escape(a8);
    return (uint64_t)i4 + (uint64_t)i2 + (uint64_t)f8 + (uint64_t)f4 + str.len +
           (uint64_t)(ts & 0xffff) + k + (uint64_t)a2[2] + (uint64_t)a4[2] + (uint64_t)a8[2];
}

/* ---- the 11 encodes ---- */

static const int64_t i8arr[3] = {1, 2, 3};
static const double f8arr[3] = {1.5, 2.5, 3.5};

static uint64_t eleven_encodes(seed *s)
{
    wk_pg_encoder t;
    wk_buf *o = &s->out;
    wk_buf_clear(o);
    int16_t i2 = 1234;
    int32_t i4 = 12345;
    double f8 = 3.14159;
    float f4 = 2.5f;
    wk_slice str = {"hello, world", 12};
    int64_t ts = INT64_C(737209696789000);
    wk_pg_array_in a8, af;
    wk_pg_array_in_1d(&a8, WK_PG_KIND_I64, i8arr, 3, NULL);
    wk_pg_array_in_1d(&af, WK_PG_KIND_F64, f8arr, 3, NULL);
    wk_pg_encode(enc_of(s, WK_PG_KIND_I16, 0, &t), &i2, o, NULL);
    wk_pg_encode(enc_of(s, WK_PG_KIND_I32, 0, &t), &i4, o, NULL);
    wk_pg_encode(enc_of(s, WK_PG_KIND_F64, 0, &t), &f8, o, NULL);
    wk_pg_encode(enc_of(s, WK_PG_KIND_F32, 0, &t), &f4, o, NULL);
    wk_pg_encode(enc_of(s, WK_PG_KIND_STR, 0, &t), &str, o, NULL);
    wk_pg_encode(enc_of(s, WK_PG_KIND_TIMESTAMP, 0, &t), &ts, o, NULL);
    wk_pg_encode(enc_of(s, WK_PG_KIND_ARRAY, WK_PG_KIND_I64, &t), &a8, o, NULL);
    wk_pg_encode(enc_of(s, WK_PG_KIND_ARRAY, WK_PG_KIND_F64, &t), &af, o, NULL);
    /* Three NULLs: only the parameter type is needed. */
    uint64_t oids = enc_of(s, WK_PG_KIND_I32, 0, &t)->oid;
    oids += enc_of(s, WK_PG_KIND_STR, 0, &t)->oid;
    oids += enc_of(s, WK_PG_KIND_TIMESTAMP, 0, &t)->oid;
    wk_bench_escape(o->data);
    return o->len + oids + (o->len > 0 ? o->data[o->len - 1] : 0);
}

static uint64_t run_decode(void *arg, uint64_t iters)
{
    seed *s = arg;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < iters; i++) {
        for (uint64_t k = 0; k < s->n; k++) {
            acc += nine_decodes(s);
        }
    }
    return acc;
}

static uint64_t run_encode(void *arg, uint64_t iters)
{
    seed *s = arg;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < iters; i++) {
        for (uint64_t k = 0; k < s->n; k++) {
            acc += eleven_encodes(s);
        }
    }
    return acc;
}

/* Average ns per call measured directly (one clock read around many iterations). */
static double per_call(seed *s, bool encode, uint64_t iters, int calls)
{
    double best = 0;
    for (int rep = 0; rep < 5; rep++) {
        uint64_t t0 = wk_bench_now_ns();
        uint64_t acc = encode ? run_encode(s, iters) : run_decode(s, iters);
        uint64_t t1 = wk_bench_now_ns();
        wk_bench_escape(&acc);
        double ns = (double)(t1 - t0) / (double)(iters * s->n * (uint64_t)calls);
        if (rep == 0 || ns < best) {
            best = ns;
        }
    }
    return best;
}

static int part1(wk_bench *b, const wk_pg_registry *reg)
{
    seed on = {reg, false, 1, {0}}, off = {reg, true, 1, {0}};
    wk_buf_init(&on.out, NULL, 0);
    wk_buf_init(&off.out, NULL, 0);
    /* The two lookup paths must produce the same values and bytes. */
    uint64_t e_on = eleven_encodes(&on), e_off = eleven_encodes(&off);
    if (nine_decodes(&on) != nine_decodes(&off) || e_on != e_off || on.out.len != off.out.len ||
        memcmp(on.out.data, off.out.data, on.out.len) != 0 || on.out.len < 80) {
        wk_bench_fail(b, "pg seed: registry and linear scan disagree");
    }
    static const uint64_t ns[3] = {10, 100, 1000};
    static const char *const dnames[3] = {"seed decode, N=10", "seed decode, N=100",
                                          "seed decode, N=1000"};
    static const char *const enames[3] = {"seed encode, N=10", "seed encode, N=100",
                                          "seed encode, N=1000"};
    for (int i = 0; i < 3; i++) {
        on.n = off.n = ns[i];
        uint64_t it = wk_bench_quick(b) ? 2 : 0;
        wk_bench_spec specs[] = {
            {dnames[i], "wirekit", run_decode, &on, it, 0,
             "registry table; one op = N x 9 decodes", 0},
            {dnames[i], "linear scan", run_decode, &off, it, 0,
             "same calls, lookup by asking every codec (wirekit without its table)",
             WK_BENCH_INFO},
            {enames[i], "wirekit", run_encode, &on, it, 0,
             "registry table; one op = N x 11 encodes", 0},
            {enames[i], "linear scan", run_encode, &off, it, 0,
             "same calls, lookup by asking every codec (wirekit without its table)",
             WK_BENCH_INFO},
        };
        for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
            wk_bench_add(b, &specs[k]);
        }
        wk_bench_flush(b);
    }
    on.n = 1000;
    uint64_t it = wk_bench_quick(b) ? 2 : 200;
    double dcall = per_call(&on, false, it, 9), ecall = per_call(&on, true, it, 11);
    wk_bench_record(b, "seed per call", "wirekit decode", dcall, 0, 0,
                    "average of the 9 decodes incl. lookup (target <= 20 ns)");
    wk_bench_record(b, "seed per call", "wirekit encode", ecall, 0, 0,
                    "average of the 11 encodes incl. lookup (target <= 15 ns)");
    if (!wk_bench_callgrind(b)) { /* times under valgrind say nothing about the targets */
        wk_bench_say(b,
                     "pg seed: %.1f ns per decode call (target <= 20: %s), %.1f ns per encode "
                     "call (target <= 15: %s)",
                     dcall, dcall <= 20 ? "met" : "missed", ecall, ecall <= 15 ? "met" : "missed");
    }
    wk_buf_free(&on.out);
    wk_buf_free(&off.out);
    return 0;
}

/* ---- part 2: lookup cost against the number of codecs ---- */

typedef struct lookup {
    const wk_pg_registry *reg;
    wk_pg_oid oids[32];
    wk_pg_kind kinds[32];
} lookup;

static uint64_t run_lookup(void *arg, uint64_t iters)
{
    lookup *l = arg;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < iters; i++) {
        for (int k = 0; k < 32; k++) {
            const wk_pg_decoder *d =
                wk_pg_registry_find_decoder(l->reg, l->oids[k], WK_PG_BINARY, l->kinds[k]);
            acc += (uintptr_t)d;
        }
    }
    return acc;
}

static int part2(wk_bench *b, const wk_pg_registry *base)
{
    size_t nb;
    const wk_pg_codec *const *bi = wk_pg_builtin_codecs(&nb);
    const wk_pg_codec *text = NULL, *int8 = NULL;
    for (size_t i = 0; i < nb; i++) {
        text = strcmp(bi[i]->name, "text") == 0 ? bi[i] : text;
        int8 = strcmp(bi[i]->name, "int8") == 0 ? bi[i] : int8;
    }
    enum { MAXC = 1000 };
    static wk_pg_codec codecs[MAXC];
    static wk_pg_oid oids[MAXC * 2];
    static const wk_pg_codec *ptrs[MAXC];
    for (int i = 0; i < MAXC; i++) {
        codecs[i] = *(i % 2 ? int8 : text);
        oids[2 * i] = 100000u + 7u * (wk_pg_oid)i;
        oids[2 * i + 1] = 500000u + 7u * (wk_pg_oid)i;
        codecs[i].oids = &oids[2 * i];
        codecs[i].array_oids = &oids[2 * i + 1];
        codecs[i].n_oids = 1;
        codecs[i].native_kinds = 0;
        ptrs[i] = &codecs[i];
    }
    static const size_t counts[3] = {10, 100, 1000};
    static const char *const names[3] = {"lookup, 10 added codecs", "lookup, 100 added codecs",
                                         "lookup, 1000 added codecs"};
    static const wk_pg_oid bo[8] = {WK_PG_OID_INT4, WK_PG_OID_INT8, WK_PG_OID_TEXT,
                                    WK_PG_OID_FLOAT8, WK_PG_OID_TIMESTAMP, WK_PG_OID_INT4_ARRAY,
                                    WK_PG_OID_NUMERIC, WK_PG_OID_UUID};
    static const wk_pg_kind bk[8] = {WK_PG_KIND_I32, WK_PG_KIND_I64, WK_PG_KIND_STR,
                                     WK_PG_KIND_F64, WK_PG_KIND_TIMESTAMP, WK_PG_KIND_ARRAY,
                                     WK_PG_KIND_NUMERIC, WK_PG_KIND_UUID};
    for (int c = 0; c < 3; c++) {
        wk_pg_registry *r;
        if (wk_pg_registry_add(base, ptrs, counts[c], &r, NULL) != WK_OK) {
            wk_bench_fail(b, "pg lookup: registry build failed");
            return 1;
        }
        lookup l;
        l.reg = r;
        /* 16 built-in keys (direct index) and 16 added ones (hash), the same in every run. */
        for (int k = 0; k < 16; k++) {
            l.oids[k] = bo[k % 8];
            l.kinds[k] = bk[k % 8];
            int ci = k % 10;
            l.oids[16 + k] = k % 2 ? oids[2 * ci] : oids[2 * ci + 1];
            l.kinds[16 + k] = k % 2 ? (ci % 2 ? WK_PG_KIND_I64 : WK_PG_KIND_STR)
                                    : WK_PG_KIND_ARRAY;
        }
        for (int k = 0; k < 32; k++) {
            if (wk_pg_registry_find_decoder(r, l.oids[k], WK_PG_BINARY, l.kinds[k]) == NULL) {
                wk_bench_fail(b, "pg lookup: key %d missing", k);
            }
        }
        wk_bench_spec s = {names[c], "wirekit", run_lookup, &l, wk_bench_quick(b) ? 2 : 0, 0,
                           "one op = 32 decoder lookups (16 direct, 16 hashed)", 0};
        wk_bench_run(b, &s);
        wk_pg_registry_unref(r);
    }
    return 0;
}

int wk_bench_suite_pg(wk_bench *b)
{
    wk_pg_registry *reg;
    if (wk_pg_registry_new_default(NULL, &reg, NULL) != WK_OK) {
        wk_bench_fail(b, "pg: cannot build the registry");
        return 1;
    }
    int rc = part1(b, reg);
    rc |= part2(b, reg);
    wk_pg_registry_unref(reg);
#ifdef WK_BENCH_PG_RESULT
    rc |= wk_bench_pg_result(b);
#else
    wk_bench_say(b, "pg result decode: skipped (built without libpq or libpqtypes)");
#endif
#ifdef WK_BENCH_PG_LOADER
    rc |= wk_bench_pg_loader(b);
#else
    wk_bench_say(b, "pg loader: skipped (built without libpq)");
#endif
    return rc;
}
