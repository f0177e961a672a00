/*
 * The mediatype suite's content-negotiation case: a server offering JSON, MessagePack and
 * HTML answers a mix of real Accept values (browsers navigating and loading images, fetch
 * and axios defaults, curl, API clients asking for JSON or MessagePack). One operation parses
 * one Accept value and chooses an offer: wk_mt_negotiate_header() with the offers parsed once
 * at start-up (how a service uses it), against npm negotiator's
 * `new Negotiator(req).mediaType(offers)` timed by its own loop in a Node process
 * (negotiator.js): both are in-process loops over the same mix, in different processes.
 * negotiator takes the offers as strings and parses them on every call, so an informative
 * row parses them per call on wirekit's side too. Every chosen offer is cross-checked.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_negotiate.h"
#include "wirekit/mediatype.h"

static const char *const offers_text[] = {"application/json", "application/vnd.msgpack",
                                          "text/html"};
#define NOFFERS (sizeof offers_text / sizeof offers_text[0])

static const char *const accepts[] = {
    /* Chrome, Edge: a navigation, an image, a script's fetch() */
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,"
    "*/*;q=0.8,application/signed-exchange;v=b3;q=0.7",
    "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8",
    "*/*",
    /* Firefox and Safari navigations */
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8",
    "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
    /* axios's default, curl, python-requests */
    "application/json, text/plain, */*",
    "*/*",
    "*/*",
    /* API clients */
    "application/json",
    "application/json;charset=utf-8",
    "application/vnd.msgpack, application/json;q=0.5",
    "application/x-msgpack",
    "application/vnd.github+json",
    "application/json, application/problem+json",
    "text/plain; q=0.5, text/html, text/x-dvi; q=0.8, text/x-c",
    "application/xml",
};
#define NACCEPT (sizeof accepts / sizeof accepts[0])
static size_t accept_len[NACCEPT];
static size_t accept_bytes;
static wk_media_type offers[NOFFERS];
static size_t wk_chosen[NACCEPT];

static uint64_t wk_negotiate_mix(void *arg, uint64_t iters)
{
    (void)arg;
    uint64_t sum = 0;
    size_t k = 0;
    for (uint64_t i = 0; i < iters; i++) {
        size_t chosen;
        wk_mt_negotiate_header(accepts[k], accept_len[k], 0, offers, NOFFERS, &chosen, NULL);
        sum += chosen;
        k = k + 1 == NACCEPT ? 0 : k + 1;
    }
    return sum;
}

/* As negotiator does: the offers are strings, parsed on every call. */
static uint64_t wk_negotiate_mix_parse_offers(void *arg, uint64_t iters)
{
    (void)arg;
    uint64_t sum = 0;
    size_t k = 0;
    wk_media_type parsed[NOFFERS];
    for (uint64_t i = 0; i < iters; i++) {
        for (size_t j = 0; j < NOFFERS; j++) {
            wk_mt_parse(offers_text[j], strlen(offers_text[j]), 0, &parsed[j], NULL);
        }
        size_t chosen;
        wk_mt_negotiate_header(accepts[k], accept_len[k], 0, parsed, NOFFERS, &chosen, NULL);
        sum += chosen;
        k = k + 1 == NACCEPT ? 0 : k + 1;
    }
    return sum;
}

/* negotiator.js's figure and its chosen offers, checked against wirekit's. */
static void run_negotiator(wk_bench *b, const char *case_name)
{
    char modules[4096], probe[4200];
    snprintf(modules, sizeof modules, "%s/node_modules", WK_SOURCE_DIR);
    snprintf(probe, sizeof probe, "%s/negotiator/package.json", modules);
    if (access(probe, R_OK) != 0) {
        wk_bench_say(b, "negotiator (node): skipped, %s missing (run scripts/deps.sh)", probe);
        return;
    }
    char noffers[16];
    snprintf(noffers, sizeof noffers, "%zu", NOFFERS);
    const char *argv[6 + NOFFERS + NACCEPT];
    size_t ac = 0;
    argv[ac++] = "node";
    argv[ac++] = WK_BENCH_NEGOTIATOR_SCRIPT;
    argv[ac++] = modules;
    argv[ac++] = wk_bench_quick(b) ? "1" : "0";
    argv[ac++] = noffers;
    for (size_t j = 0; j < NOFFERS; j++) {
        argv[ac++] = offers_text[j];
    }
    for (size_t k = 0; k < NACCEPT; k++) {
        argv[ac++] = accepts[k];
    }
    argv[ac] = NULL;
    pid_t pid;
    FILE *in = wk_bench_spawn((char *const *)argv, &pid);
    if (in == NULL) {
        return;
    }
    char line[256];
    size_t got = 0;
    while (fgets(line, sizeof line, in) != NULL) {
        double ns;
        unsigned idx;
        long chosen;
        if (sscanf(line, "ns negotiate %lf", &ns) == 1) {
            wk_bench_record(b, case_name, "negotiator (node)", ns, accept_bytes / NACCEPT, -1,
                            "per request: new Negotiator(req).mediaType(offers)");
        } else if (sscanf(line, "out %u %ld", &idx, &chosen) == 2 && idx < NACCEPT) {
            long want = wk_chosen[idx] == WK_MT_NONE ? -1L : (long)wk_chosen[idx];
            if (chosen != want) {
                wk_bench_fail(b, "negotiator chose offer %ld and wirekit %ld for '%s'", chosen,
                              want, accepts[idx]);
            }
            got++;
        }
    }
    int status = wk_bench_spawn_wait(in, pid);
    if (status == 127) {
        wk_bench_say(b, "negotiator (node): skipped, node could not run");
        return;
    }
    if (status != 0 || got != NACCEPT) {
        wk_bench_fail(b, "the negotiator run failed (exit %d, %zu outputs)", status, got);
        return;
    }
    wk_bench_say(b, "negotiator (node): all %zu choices equal wirekit's", got);
}

void wk_bench_mediatype_negotiate(wk_bench *b)
{
    static char case_name[64];
    snprintf(case_name, sizeof case_name, "negotiate mix of %zu", NACCEPT);
    for (size_t j = 0; j < NOFFERS; j++) {
        wk_mt_parse(offers_text[j], strlen(offers_text[j]), 0, &offers[j], NULL);
    }
    accept_bytes = 0;
    for (size_t k = 0; k < NACCEPT; k++) {
        accept_len[k] = strlen(accepts[k]);
        accept_bytes += accept_len[k];
        if (wk_mt_negotiate_header(accepts[k], accept_len[k], 0, offers, NOFFERS, &wk_chosen[k],
                                   NULL) == WK_ERR_SYNTAX) {
            wk_bench_fail(b, "wirekit refuses the Accept value '%s'", accepts[k]);
        }
    }
    wk_bench_peer(b, "negotiator (node)",
                  "negotiator 1.0.0 (npm) on Node's JIT, timed by its own loop in its own "
                  "process: median of 5 runs, allocations not measurable (-)");
    wk_bench_spec specs[] = {
        {case_name, "wirekit", wk_negotiate_mix, NULL, 0, accept_bytes / NACCEPT,
         "per request: wk_mt_negotiate_header, offers parsed once", 0},
        {case_name, "wirekit (offers parsed per call)", wk_negotiate_mix_parse_offers, NULL, 0,
         accept_bytes / NACCEPT, "as negotiator, which takes the offers as strings",
         WK_BENCH_INFO},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        wk_bench_add(b, &specs[i]);
    }
    wk_bench_flush(b);
    run_negotiator(b, case_name);
}
