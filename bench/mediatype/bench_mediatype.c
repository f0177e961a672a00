/*
 * Suite "mediatype" — the seed's Content-Type benchmark (SEEDS.md §2): parse
 * `application/json; charset=utf-8`, render a parsed `application/json`, and a mix of 20
 * real-world header values. Peers: GMime's content-type parser in this process, and Node's
 * whatwg-mimetype in a separate process (its figures recorded beside ours). The render case
 * measures wirekit's cached render; the uncached serialize is reported too, for honesty.
 * Outputs are cross-checked: GMime's type, subtype, charset and boundary must equal ours, and
 * whatwg-mimetype's serialization of every mix value must equal ours byte for byte.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "bench_negotiate.h"
#include "wirekit/mediatype.h"

#ifdef WK_BENCH_HAVE_GMIME
#include <gmime/gmime.h>
#endif

static const char seed[] = "application/json; charset=utf-8";
static const char render_value[] = "application/json";

static const char *const mix[] = {
    "text/html; charset=UTF-8",
    "application/json",
    "application/json; charset=utf-8",
    "multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW",
    "multipart/mixed; boundary=\"simple boundary\"",
    "text/plain;charset=us-ascii",
    "application/x-www-form-urlencoded",
    "image/png",
    "TEXT/HTML; CHARSET=ISO-8859-1",
    "application/vnd.api+json",
    "application/octet-stream",
    "text/css; charset=utf-8",
    "application/javascript; charset=utf-8",
    "application/xml; charset=\"utf-8\"",
    "multipart/alternative; boundary=\"000000000000a1b2c3d4e5f6\"",
    "text/plain; format=flowed; delsp=yes; charset=utf-8",
    "application/problem+json",
    "message/rfc822",
    "Application/Vnd.MS-Excel",
    "text/event-stream; charset=utf-8",
};
#define NMIX (sizeof mix / sizeof mix[0])
static size_t mix_len[NMIX];
static size_t mix_bytes;

/* ---- wirekit ---- */

static uint64_t wk_parse_seed(void *arg, uint64_t iters)
{
    (void)arg;
    uint64_t sum = 0;
    wk_media_type mt = WK_MT_INIT;
    for (uint64_t i = 0; i < iters; i++) {
        wk_bench_escape(seed);
        wk_mt_parse(seed, sizeof seed - 1, 0, &mt, NULL);
        sum += mt.nparams + mt.id;
    }
    return sum;
}

static uint64_t wk_render_cached(void *arg, uint64_t iters)
{
    wk_media_type *mt = arg;
    uint64_t sum = 0;
    wk_slice r;
    for (uint64_t i = 0; i < iters; i++) {
        wk_bench_escape(mt);
        wk_mt_render(mt, WK_MT_STYLE_WHATWG, NULL, &r, NULL); /* a table string: no buffer */
        sum += r.len;
    }
    return sum;
}

static uint64_t wk_serialize_uncached(void *arg, uint64_t iters)
{
    wk_media_type *mt = arg;
    uint8_t mem[256];
    wk_buf out;
    wk_buf_init_fixed(&out, mem, sizeof mem);
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        wk_bench_escape(mt);
        wk_buf_clear(&out);
        wk_mt_serialize(mt, WK_MT_STYLE_WHATWG, &out, NULL);
        sum += out.len;
    }
    return sum;
}

static uint64_t wk_parse_mix(void *arg, uint64_t iters)
{
    (void)arg;
    uint64_t sum = 0;
    wk_media_type mt = WK_MT_INIT;
    size_t k = 0;
    for (uint64_t i = 0; i < iters; i++) {
        wk_mt_parse(mix[k], mix_len[k], 0, &mt, NULL);
        sum += mt.nparams + wk_mt_essence(&mt).len;
        k = k + 1 == NMIX ? 0 : k + 1;
    }
    return sum;
}

static uint64_t wk_parse_render_mix(void *arg, uint64_t iters)
{
    (void)arg;
    uint64_t sum = 0;
    wk_media_type mt = WK_MT_INIT;
    wk_slice r;
    uint8_t mem[512];
    wk_buf scratch;
    wk_buf_init_fixed(&scratch, mem, sizeof mem);
    size_t k = 0;
    for (uint64_t i = 0; i < iters; i++) {
        wk_mt_parse(mix[k], mix_len[k], 0, &mt, NULL);
        wk_buf_clear(&scratch);
        wk_mt_render(&mt, WK_MT_STYLE_WHATWG, &scratch, &r, NULL);
        sum += r.len;
        k = k + 1 == NMIX ? 0 : k + 1;
    }
    return sum;
}

/* ---- GMime ---- */
#ifdef WK_BENCH_HAVE_GMIME
static uint64_t gm_parse_seed(void *arg, uint64_t iters)
{
    (void)arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        GMimeContentType *ct = g_mime_content_type_parse(NULL, seed);
        sum += strlen(g_mime_content_type_get_media_subtype(ct));
        g_object_unref(ct);
    }
    return sum;
}

static uint64_t gm_render(void *arg, uint64_t iters)
{
    GMimeContentType *ct = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        char *s = g_mime_content_type_get_mime_type(ct);
        sum += strlen(s);
        g_free(s);
    }
    return sum;
}

static uint64_t gm_parse_mix(void *arg, uint64_t iters)
{
    (void)arg;
    uint64_t sum = 0;
    size_t k = 0;
    for (uint64_t i = 0; i < iters; i++) {
        GMimeContentType *ct = g_mime_content_type_parse(NULL, mix[k]);
        sum += strlen(g_mime_content_type_get_media_subtype(ct));
        g_object_unref(ct);
        k = k + 1 == NMIX ? 0 : k + 1;
    }
    return sum;
}

static bool param_is(const wk_media_type *mt, const char *name, const char *want)
{
    const wk_mt_param *p = wk_mt_param_find(mt, name, strlen(name));
    if (p == NULL || want == NULL) {
        return p == NULL && want == NULL;
    }
    char buf[256];
    size_t n = wk_mt_param_value(p, buf, sizeof buf);
    return n == strlen(want) && memcmp(buf, want, n) == 0;
}

/* GMime must see the same type, subtype, charset and boundary as wirekit. */
static void gm_check(wk_bench *b)
{
    for (size_t k = 0; k < NMIX; k++) {
        wk_media_type mt = WK_MT_INIT;
        GMimeContentType *ct = g_mime_content_type_parse(NULL, mix[k]);
        if (wk_mt_parse(mix[k], mix_len[k], 0, &mt, NULL) != WK_OK || ct == NULL) {
            wk_bench_fail(b, "mix value %zu did not parse", k);
        } else if (g_ascii_strncasecmp(g_mime_content_type_get_media_type(ct), wk_mt_type(&mt).ptr,
                                       wk_mt_type(&mt).len) != 0 ||
                   g_ascii_strncasecmp(g_mime_content_type_get_media_subtype(ct),
                                       wk_mt_subtype(&mt).ptr, wk_mt_subtype(&mt).len) != 0 ||
                   !param_is(&mt, "charset", g_mime_content_type_get_parameter(ct, "charset")) ||
                   !param_is(&mt, "boundary", g_mime_content_type_get_parameter(ct, "boundary"))) {
            wk_bench_fail(b, "GMime and wirekit disagree on '%s'", mix[k]);
        }
        if (ct != NULL) {
            g_object_unref(ct);
        }
    }
}
#endif

/* ---- Node's whatwg-mimetype, in its own process ---- */

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static void run_node(wk_bench *b)
{
    char modules[4096];
    snprintf(modules, sizeof modules, "%s/node_modules", WK_SOURCE_DIR);
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/whatwg-mimetype/package.json", modules);
    if (access(probe, R_OK) != 0) {
        wk_bench_say(b, "whatwg-mimetype (node): skipped, %s missing (run scripts/deps.sh)", probe);
        return;
    }
    const char *argv[8 + NMIX];
    size_t ac = 0;
    argv[ac++] = "node";
    argv[ac++] = WK_BENCH_MT_NODE_SCRIPT;
    argv[ac++] = modules;
    argv[ac++] = wk_bench_quick(b) ? "1" : "0";
    argv[ac++] = seed;
    argv[ac++] = render_value;
    for (size_t k = 0; k < NMIX; k++) {
        argv[ac++] = mix[k];
    }
    argv[ac] = NULL;
    pid_t pid;
    FILE *in = wk_bench_spawn((char *const *)argv, &pid);
    if (in == NULL) {
        return;
    }
    char line[1024];
    bool seen[NMIX] = {false};
    size_t got = 0;
    static char names[3][8];
    while (fgets(line, sizeof line, in) != NULL) {
        char which[32];
        double ns;
        unsigned idx;
        char hex[600];
        if (sscanf(line, "ns %31s %lf", which, &ns) == 2) {
            const char *case_name = strcmp(which, "parse") == 0       ? "parse seed value"
                                    : strcmp(which, "render") == 0    ? "render application/json"
                                    : strcmp(which, "parse-mix") == 0 ? "parse mix of 20"
                                                                      : NULL;
            if (case_name != NULL) {
                (void)names;
                wk_bench_record(b, case_name, "whatwg-mimetype (node)", ns,
                                strcmp(which, "parse") == 0 ? sizeof seed - 1 : 0, -1,
                                strcmp(which, "parse-mix") == 0 ? "per value" : NULL);
            }
        } else if (sscanf(line, "out %u %599s", &idx, hex) == 2 && idx < NMIX) {
            wk_media_type mt = WK_MT_INIT;
            wk_buf out;
            wk_buf_init(&out, NULL, 0);
            bool ok = wk_mt_parse(mix[idx], mix_len[idx], 0, &mt, NULL) == WK_OK &&
                      wk_mt_serialize(&mt, WK_MT_STYLE_WHATWG, &out, NULL) == WK_OK &&
                      strlen(hex) == 2 * out.len;
            for (size_t i = 0; ok && i < out.len; i++) {
                ok = hexval(hex[2 * i]) * 16 + hexval(hex[2 * i + 1]) == out.data[i];
            }
            wk_buf_free(&out);
            if (!ok) {
                wk_bench_fail(b, "whatwg-mimetype and wirekit serialize '%s' differently",
                              mix[idx]);
            }
            seen[idx] = true;
            got++;
        }
    }
    int status = wk_bench_spawn_wait(in, pid);
    if (status == 127) {
        wk_bench_say(b, "whatwg-mimetype (node): skipped, node could not run");
        return;
    }
    if (status != 0 || got != NMIX) {
        wk_bench_fail(b, "the whatwg-mimetype run failed (exit %d, %zu outputs)", status, got);
    }
    wk_bench_say(b, "whatwg-mimetype (node): all %zu mix serializations equal wirekit's", got);
}

int wk_bench_suite_mediatype(wk_bench *b)
{
    for (size_t k = 0; k < NMIX; k++) {
        mix_len[k] = strlen(mix[k]);
        mix_bytes += mix_len[k];
    }
    wk_media_type json = WK_MT_INIT;
    wk_mt_parse(render_value, sizeof render_value - 1, 0, &json, NULL);
    wk_media_type seed_mt = WK_MT_INIT;
    wk_mt_parse(seed, sizeof seed - 1, 0, &seed_mt, NULL);
#ifdef WK_BENCH_HAVE_GMIME
    g_mime_init();
    gm_check(b);
    GMimeContentType *gm_json = g_mime_content_type_parse(NULL, render_value);
#endif

#ifdef WK_BENCH_HAVE_GMIME
    static char gm_build[128];
    snprintf(gm_build, sizeof gm_build,
             "GMime %u.%u.%u: Debian shared library, distribution build (-O2)",
             (unsigned)gmime_major_version, (unsigned)gmime_minor_version,
             (unsigned)gmime_micro_version);
    wk_bench_peer(b, "GMime 3", gm_build);
#endif
    wk_bench_peer(b, "whatwg-mimetype (node)",
                  "whatwg-mimetype 5.0.0 (npm) on Node's JIT, timed in its own process: median "
                  "of 5 runs, allocations not measurable (-)");
    wk_bench_spec specs[] = {
        {"parse seed value", "wirekit", wk_parse_seed, NULL, 0, sizeof seed - 1, NULL, 0},
#ifdef WK_BENCH_HAVE_GMIME
        {"parse seed value", "GMime 3", gm_parse_seed, NULL, 0, sizeof seed - 1, NULL, 0},
#endif
        /* Like for like: a serialization from the parsed value every time. */
        {"render application/json", "wirekit", wk_serialize_uncached, &json, 0, 0,
         "wk_mt_serialize into a buffer", 0},
        {"render application/json", "wirekit (cached)", wk_render_cached, &json, 0, 0,
         "cached: points at the table string (no work to compare)", WK_BENCH_INFO},
#ifdef WK_BENCH_HAVE_GMIME
        {"render application/json", "GMime 3", gm_render, gm_json, 0, 0,
         "g_mime_content_type_get_mime_type (a g_strdup per op)", 0},
#endif
        {"serialize seed value", "wirekit", wk_serialize_uncached, &seed_mt, 0, 0,
         "no peer serializes parameters the WHATWG way", 0},
        {"parse mix of 20", "wirekit", wk_parse_mix, NULL, 0, mix_bytes / NMIX, "per value", 0},
#ifdef WK_BENCH_HAVE_GMIME
        {"parse mix of 20", "GMime 3", gm_parse_mix, NULL, 0, mix_bytes / NMIX, "per value", 0},
#endif
        {"parse+render mix of 20", "wirekit", wk_parse_render_mix, NULL, 0, mix_bytes / NMIX,
         "per value", 0},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        wk_bench_add(b, &specs[i]);
    }
    wk_bench_flush(b);
    run_node(b);
    wk_bench_mediatype_negotiate(b);
#ifdef WK_BENCH_HAVE_GMIME
    g_object_unref(gm_json);
#endif
    return 0;
}
