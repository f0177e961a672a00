/*
 * The entity cache, measured:
 *   local hit       wk_cache_get of an entry in the local tier (key build, hash, lock-free
 *                   chain walk, CLOCK bit, reference) + release, over 1,000 seed records;
 *                   1 thread, and 2 threads on the same cache, each on its own 500 keys
 *                   (ns/op is wall time / total gets: half of one thread's is linear); and
 *                   the same with wk_cache_peek (borrowed, no reference) in pinned sections.
 *                   All four interleaved; the 2-thread / 1-thread ratios are printed after
 *                   the table. Alone: wirekit bench --suite cache --case "local hit".
 *   redis get       wk_cache_get with the local tier off: one GET round trip to Redis and a
 *                   schema decode of the 72-byte record. p50 and p99 from per-call timings.
 *   redis pipelined wk_cache_get_many of 16 ids per call (16 GETs in one round trip), local
 *                   tier off; ns per key.
 *   local hit, tracking  local hits of a cache on a Redis store whose feed has CLIENT
 *                   TRACKING (BCAST on the namespace) against one whose feed hears PUBLISH
 *                   alone, interleaved; the ratio after the table (target within 5%).
 *   redis put, tracking  wk_cache_put through the feed's connection (tracking: own writes
 *                   lent it, so they are not pushed back) against a pooled one (no_tracking).
 *   redis get/put, tls vs tcp  wk_cache_get (local tier off) and wk_cache_put against the
 *                   same server's TLS port (WK_REDIS_TLS_URL, CA in WK_REDIS_TLS_CA, both
 *                   set by scripts/servers.sh) and its plain port, interleaved.
 * Beside the Redis cases, redis-benchmark runs GET on the same server in another process
 * (one connection; -P 1 for latency, -P 16 for pipelining) against a 72-byte value, and its
 * figures are recorded next to ours. Redis comes from WK_REDIS_URL; without it the Redis
 * cases are skipped with a message.
 *   redis cluster get, pipelined   wk_cache_get_many over a Redis Cluster, local tier off, 1
 *                   connection per master, pipeline_window 16: 480 ids per call (each
 *                   master's window refilled as its replies are read: 8 to 16 GETs in flight
 *                   per master) and, informative, 48 ids per call (about 16 per master, each
 *                   call waiting for its slowest master) and 480 ids with a window of 64
 *                   (deeper than the peer, fewer sends); interleaved with redis-benchmark
 *                   --cluster -c <masters> -P 16 -d 72 -r 1000 (one client per master 16
 *                   deep, the same value size and key count), as it runs by default (one
 *                   thread per master) and with --threads 1 (one thread, like ours), each a
 *                   child process for the same number of GETs. Its clients run free until
 *                   the total is reached (a slowed master slows only its own client), where a
 *                   wk_cache_get_many returns when its slowest master has answered its keys.
 *                   "vs wk" is its time over ours
 *                   (our throughput over its; target >= 0.8); after the table each run's
 *                   ratio (paired within a repetition), their median and range, and the
 *                   share of the peer's time spent starting (wall time minus the time it
 *                   reports). The cluster comes from WK_REDIS_CLUSTER=HOST:PORT; without it
 *                   the case is skipped. Alone: wirekit bench --suite cache --case cluster.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../tests/unit/schema/seed_user.h"
#include "bench.h"
#include "wirekit/cache.h"
#include "wirekit/redis.h"

#define NKEYS 1000
#define BATCH 16

typedef struct bctx {
    wk_cache *c;
    char ids[NKEYS][8];
    size_t id_len[NKEYS];
    uint64_t *lat; /* per-call latencies for percentiles */
    size_t nlat;
} bctx;

static wk_status seed_loader(void *ctx, const wk_schema *s, const char *id, size_t id_len,
                             void *obj, wk_arena *arena, wk_error *err)
{
    (void)ctx;
    (void)s;
    (void)id;
    (void)id_len;
    (void)arena;
    (void)err;
    static wk_pair pairs[2];
    seed_user_fill(obj, pairs);
    return WK_OK;
}

/* Hits over keys [lo, lo + n), stride 7: wk_cache_get + release, or (`peek`) wk_cache_peek
 * inside one pinned section per 64 gets. */
static uint64_t run_hits(bctx *b, uint64_t iters, unsigned lo, unsigned n, bool peek)
{
    uint64_t sum = 0;
    unsigned j = 0;
    bool pinned = false;
    for (uint64_t i = 0; i < iters; i++) {
        j = n == NKEYS ? (j + 7) % NKEYS : (j + 7) % (NKEYS / 2); /* constant divisors */
        unsigned k = lo + j;
        if (peek) {
            if ((i & 63) == 0) {
                if (pinned) {
                    wk_cache_unpin(b->c);
                }
                pinned = wk_cache_pin(b->c);
            }
            const wk_cache_entry *r = wk_cache_peek(b->c, &seed_user_schema, b->ids[k],
                                                    b->id_len[k]);
            if (r != NULL) {
                sum += (uint64_t)((const seed_user *)wk_cache_entry_object(r))->age;
            }
            continue;
        }
        wk_cache_entry *r = NULL;
        if (wk_cache_get(b->c, &seed_user_schema, b->ids[k], b->id_len[k], seed_loader, NULL,
                         &r, NULL) == WK_OK) {
            sum += (uint64_t)((const seed_user *)wk_cache_entry_object(r))->age;
            wk_cache_entry_unref(r);
        }
    }
    if (pinned) {
        wk_cache_unpin(b->c);
    }
    return sum;
}

static uint64_t local_hit_1(void *arg, uint64_t iters)
{
    return run_hits(arg, iters, 0, NKEYS, false);
}

static uint64_t local_peek_1(void *arg, uint64_t iters)
{
    return run_hits(arg, iters, 0, NKEYS, true);
}

typedef struct half {
    bctx *b;
    uint64_t iters;
    unsigned lo; /* each thread has its own half of the keys */
    bool peek;
    uint64_t sum;
    char pad[64]; /* the two threads' records on different lines */
} half;

static void *half_thread(void *arg)
{
    half *h = arg;
    h->sum = run_hits(h->b, h->iters, h->lo, NKEYS / 2, h->peek);
    return NULL;
}

static uint64_t two_threads(void *arg, uint64_t iters, bool peek, bool same_keys)
{
    half h[2] = {{arg, iters / 2, 0, peek, 0, {0}},
                 {arg, iters - iters / 2, same_keys ? 0 : NKEYS / 2, peek, 0, {0}}};
    pthread_t t;
    pthread_create(&t, NULL, half_thread, &h[1]);
    half_thread(&h[0]);
    pthread_join(t, NULL);
    return h[0].sum + h[1].sum;
}

static uint64_t local_hit_2(void *arg, uint64_t iters)
{
    return two_threads(arg, iters, false, false);
}

static uint64_t local_peek_2(void *arg, uint64_t iters)
{
    return two_threads(arg, iters, true, false);
}

/* The contrast: both threads on the same 500 keys (the same entries, read by both; a hit's
 * reference is a slot in its own thread's line, so only CLOCK bits, set when clear, are
 * written to a shared entry). */
static uint64_t local_hit_2_same(void *arg, uint64_t iters)
{
    return two_threads(arg, iters, false, true);
}

/* The local-hit case: one thread and two threads (each on its own 500 keys), with references
 * (wk_cache_get) and borrowed (wk_cache_peek), interleaved in every repetition so that a busy
 * patch of the shared machine hits them alike; then the scaling ratios. */
static void local_cases(wk_bench *b, bctx *ctx)
{
    static const char *const cname = "local hit";
    /* one fixed count for all four (not calibrated: a 2-thread call starts a thread, and a
     * calibration on a busy machine could settle on so few gets that the start dominates) */
    uint64_t n = wk_bench_quick(b) ? 20000 : 4000000;
    wk_bench_spec specs[] = {
        {cname, "wirekit", local_hit_1, ctx, n, 0, "wk_cache_get + unref, 1 thread", 0},
        {cname, "wirekit, 2 threads", local_hit_2, ctx, n, 0,
         "wk_cache_get + unref, 2 threads on 500 keys each: wall time / total gets", 0},
        {cname, "wirekit peek", local_peek_1, ctx, n, 0,
         "wk_cache_peek (borrowed, pinned per 64 gets), 1 thread", 0},
        {cname, "wirekit peek, 2 threads", local_peek_2, ctx, n, 0,
         "wk_cache_peek, 2 threads on 500 keys each: wall time / total gets", 0},
        {cname, "wirekit, 2 threads, same keys", local_hit_2_same, ctx, n, 0,
         "contrast: wk_cache_get + unref, both threads on the same 500 keys (the same "
         "entries read by both)",
         0},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        /* under --callgrind the 2-thread rows would count thread starts, not hits */
        if (!wk_bench_callgrind(b) || strstr(specs[i].impl, "2 threads") == NULL) {
            wk_bench_add(b, &specs[i]);
        }
    }
    wk_bench_flush(b);
    double one = wk_bench_figure(b, cname, "wirekit");
    double two = wk_bench_figure(b, cname, "wirekit, 2 threads");
    double p1 = wk_bench_figure(b, cname, "wirekit peek");
    double p2 = wk_bench_figure(b, cname, "wirekit peek, 2 threads");
    double same = wk_bench_figure(b, cname, "wirekit, 2 threads, same keys");
    if (one > 0 && two > 0 && !wk_bench_callgrind(b)) {
        wk_bench_say(b,
                     "local hit: 2 threads / 1 thread, wall time per get = %.2f (get), %.2f "
                     "(peek), %.2f (get, same keys); target <= 0.60 on different keys; a "
                     "figure near 1 means the second thread found no idle core",
                     two / one, p2 > 0 && p1 > 0 ? p2 / p1 : 0.0, same > 0 ? same / one : 0.0);
    }
}

static uint64_t redis_get(void *arg, uint64_t iters)
{
    bctx *b = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        unsigned k = (unsigned)(i % NKEYS);
        uint64_t t0 = wk_bench_now_ns();
        wk_cache_entry *r = NULL;
        if (wk_cache_get(b->c, &seed_user_schema, b->ids[k], b->id_len[k], seed_loader, NULL,
                         &r, NULL) == WK_OK) {
            sum += (uint64_t)((const seed_user *)wk_cache_entry_object(r))->age;
            wk_cache_entry_unref(r);
        }
        if (b->lat != NULL && b->nlat < 200000) {
            b->lat[b->nlat++] = wk_bench_now_ns() - t0;
        }
    }
    return sum;
}

static uint64_t redis_pipelined(void *arg, uint64_t iters)
{
    bctx *b = arg;
    uint64_t sum = 0;
    wk_slice ids[BATCH];
    wk_cache_entry *refs[BATCH];
    wk_status sts[BATCH];
    for (uint64_t i = 0; i < iters; i += BATCH) {
        unsigned m = iters - i < BATCH ? (unsigned)(iters - i) : BATCH; /* exactly iters keys */
        for (unsigned j = 0; j < m; j++) {
            unsigned k = (unsigned)((i + j) % NKEYS);
            ids[j].ptr = b->ids[k];
            ids[j].len = b->id_len[k];
        }
        if (wk_cache_get_many(b->c, &seed_user_schema, m, ids, seed_loader, NULL, refs, sts,
                              NULL) == WK_OK) {
            for (unsigned j = 0; j < m; j++) {
                sum += (uint64_t)((const seed_user *)wk_cache_entry_object(refs[j]))->age;
                wk_cache_entry_unref(refs[j]);
            }
        }
    }
    return sum;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Runs redis-benchmark; returns requests per second and the p50 in ms (0 when unknown). */
static bool redis_benchmark(const char *host, int port, int pipeline, int n, double *rps,
                            double *p50_ms)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd,
             "redis-benchmark -h %s -p %d -t get -n %d -c 1 -P %d -d 72 -q 2>/dev/null", host,
             port, n, pipeline);
    FILE *p = popen(cmd, "r");
    if (p == NULL) {
        return false;
    }
    char line[512];
    bool ok = false;
    *p50_ms = 0;
    while (fgets(line, sizeof line, p) != NULL) {
        /* "GET: 81300.81 requests per second, p50=0.095 msec" (possibly after \r updates) */
        char *g = NULL;
        for (char *q = strstr(line, "GET: "); q != NULL; q = strstr(q + 1, "GET: ")) {
            g = q; /* the last update on the line is the summary */
        }
        if (g != NULL && strstr(g, "requests per second") != NULL) {
            *rps = strtod(g + 5, NULL);
            char *q = strstr(g, "p50=");
            if (q != NULL) {
                *p50_ms = strtod(q + 4, NULL);
            }
            ok = *rps > 0;
        }
    }
    pclose(p);
    return ok;
}

static void redis_cases(wk_bench *b, bctx *ctx)
{
    const char *url = getenv("WK_REDIS_URL");
    if (url == NULL) {
        wk_bench_say(b, "cache: Redis cases skipped (set WK_REDIS_URL, e.g. after "
                        "scripts/servers.sh start)");
        return;
    }
    wk_redis_opts o = {0};
    o.url = url;
    o.no_subscribe = true;
    o.pool = 1;
    o.command_timeout_ms = 2000;
    wk_redis_store *store = NULL;
    wk_error err;
    if (wk_redis_store_new(&o, &store, &err) != WK_OK ||
        wk_redis_store_ping(store, &err) != WK_OK) {
        wk_bench_say(b, "cache: Redis cases skipped (%s at %s)", err.msg, url);
        wk_redis_store_free(store);
        return;
    }
    wk_cache_config cfg = {0};
    cfg.ns = "wkbench";
    cfg.store = wk_redis_store_iface(store);
    cfg.flags = WK_CACHE_NO_LOCAL;
    wk_cache *c = NULL;
    wk_cache_new(&cfg, &c, NULL);
    ctx->c = c;
    /* Fill Redis once (loads), then every get is a Redis hit. */
    redis_get(ctx, NKEYS);
    wk_cache_stats st;
    wk_cache_get_stats(c, &st);
    uint64_t n = wk_bench_quick(b) ? 2000 : 50000;
    ctx->lat = malloc(200000 * sizeof *ctx->lat);
    ctx->nlat = 0;
    wk_bench_spec s1 = {"redis get (1 conn)", "wirekit", redis_get, ctx, n, 72,
                        "GET + schema decode", 0};
    wk_bench_run(b, &s1);
    if (ctx->nlat > 0) {
        qsort(ctx->lat, ctx->nlat, sizeof *ctx->lat, cmp_u64);
        double p50 = (double)ctx->lat[ctx->nlat / 2];
        double p99 = (double)ctx->lat[ctx->nlat * 99 / 100];
        static char note[96]; /* the harness keeps the pointer until it prints */
        snprintf(note, sizeof note, "p50 %.1f us, p99 %.1f us", p50 / 1000, p99 / 1000);
        wk_bench_record(b, "redis get (1 conn)", "wirekit p50", p50, 72, 0, note);
    }
    wk_bench_spec s2 = {"redis get pipelined x16", "wirekit", redis_pipelined, ctx, n, 72,
                        "wk_cache_get_many, 16 GETs per round trip", 0};
    wk_bench_run(b, &s2);

    /* redis-benchmark on the same server, a 72-byte value under its key. */
    char host[128] = "127.0.0.1";
    int port = 6379;
    const char *hp = strncmp(url, "redis://", 8) == 0 ? url + 8 : url;
    const char *colon = strrchr(hp, ':');
    if (colon != NULL) {
        size_t hl = (size_t)(colon - hp) < sizeof host - 1 ? (size_t)(colon - hp) : sizeof host - 1;
        memcpy(host, hp, hl);
        host[hl] = '\0';
        port = (int)strtol(colon + 1, NULL, 10);
    }
    double rps = 0, p50 = 0;
    int rn = wk_bench_quick(b) ? 2000 : 100000;
    if (redis_benchmark(host, port, 1, rn, &rps, &p50)) {
        static char note[96];
        snprintf(note, sizeof note, "separate process, -c 1 -P 1, p50 %.1f us", p50 * 1000);
        wk_bench_record(b, "redis get (1 conn)", "redis-benchmark", 1e9 / rps, 72, 0, note);
    } else {
        wk_bench_say(b, "cache: redis-benchmark not available; no Redis reference figure");
    }
    if (redis_benchmark(host, port, BATCH, rn * 4, &rps, &p50)) {
        wk_bench_record(b, "redis get pipelined x16", "redis-benchmark", 1e9 / rps, 72, 0,
                        "separate process, -c 1 -P 16");
    }
    wk_cache_free(c);
    wk_redis_store_free(store);
    free(ctx->lat);
    ctx->lat = NULL;
}

/* ---- the memory tier with CLIENT TRACKING on and off; get and put over TLS and TCP ---- */

/* A store on `url` (TLS with `ca` when not NULL) and a cache on it; with `feed`, its
 * invalidation feed (`tracking` or not) and a local tier, else the local tier off. */
static bool open_pair(const char *url, const char *ca, bool feed, bool tracking,
                      wk_redis_store **store, wk_cache **c, wk_error *err)
{
    static const char *const prefixes[1] = {"wkbench:"};
    wk_redis_opts o = {0};
    o.url = url;
    o.tls_ca_file = ca;
    o.no_subscribe = !feed;
    o.no_tracking = !tracking;
    o.tracking_prefixes = prefixes;
    o.ntracking_prefixes = 1;
    o.pool = 1;
    o.command_timeout_ms = 2000;
    o.connect_timeout_ms = 2000;
    *store = NULL;
    *c = NULL;
    if (wk_redis_store_new(&o, store, err) != WK_OK || wk_redis_store_ping(*store, err) != WK_OK) {
        wk_redis_store_free(*store);
        *store = NULL;
        return false;
    }
    wk_cache_config cfg = {0};
    cfg.ns = "wkbench";
    cfg.store = wk_redis_store_iface(*store);
    cfg.flags = feed ? 0 : WK_CACHE_NO_LOCAL;
    cfg.max_entries = 10 * NKEYS;
    cfg.local_ttl_ms = 3600 * 1000;
    if (wk_cache_new(&cfg, c, err) != WK_OK) {
        wk_redis_store_free(*store);
        *store = NULL;
        return false;
    }
    for (int i = 0; feed && i < 400 && !wk_redis_store_feed_up(*store); i++) {
        struct timespec ts = {0, 5000000L};
        nanosleep(&ts, NULL);
    }
    return !feed || wk_redis_store_feed_up(*store);
}

/* Reads every key until the local tier holds them all (one pass once the feed is up: a
 * load's own fill is not pushed back). */
static bool warm_local(bctx *b)
{
    for (int pass = 0; pass < 20; pass++) {
        run_hits(b, NKEYS, 0, NKEYS, false);
        struct timespec ts = {0, 20000000L};
        nanosleep(&ts, NULL);
        wk_cache_stats st;
        wk_cache_get_stats(b->c, &st);
        if (st.local_entries == NKEYS) {
            return true;
        }
    }
    return false;
}

static uint64_t redis_put(void *arg, uint64_t iters)
{
    bctx *b = arg;
    seed_user u;
    static wk_pair pairs[2];
    seed_user_fill(&u, pairs);
    uint64_t ok = 0;
    for (uint64_t i = 0; i < iters; i++) {
        unsigned k = (unsigned)(i % NKEYS);
        ok += wk_cache_put(b->c, &seed_user_schema, b->ids[k], b->id_len[k], &u, 0, NULL) ==
              WK_OK;
    }
    return ok;
}

/* Runs the rows `base` and `other` of one case and says "<what> = other / base<tail>". The
 * harness runs rows in queue order in each repetition, and on a loaded machine the first row
 * of a repetition was measured slower whichever it was (see docs/benchmarks.md): the baseline
 * goes first, so that penalty cannot pass for a cost of the other row. */
static void run_against_baseline(wk_bench *b, const wk_bench_spec *base,
                                 const wk_bench_spec *other, const char *what, const char *tail)
{
    wk_bench_add(b, base);
    wk_bench_add(b, other);
    wk_bench_flush(b);
    double fb = wk_bench_figure(b, base->case_name, base->impl);
    double fo = wk_bench_figure(b, other->case_name, other->impl);
    if (fb > 0 && fo > 0 && !wk_bench_callgrind(b)) {
        wk_bench_say(b, "%s = %.3f%s", what, fo / fb, tail);
    }
}

/* Local hits on a cache whose feed tracks (BCAST on its namespace) against one whose feed
 * hears PUBLISH alone, interleaved: the hit path reads neither, so the target is equal
 * times (within 5%). Then get and put through a cache without local tier over the same
 * Redis's TLS port and plain port, interleaved. */
static void tracking_tls_cases(wk_bench *b, const bctx *ids)
{
    const char *url = getenv("WK_REDIS_URL");
    if (url == NULL) {
        return; /* redis_cases said why */
    }
    static bctx on, off;
    memcpy(&on, ids, sizeof on);
    memcpy(&off, ids, sizeof off);
    on.lat = off.lat = NULL;
    wk_redis_store *s_on = NULL, *s_off = NULL;
    wk_error err = {0};
    if (!open_pair(url, NULL, true, true, &s_on, &on.c, &err) ||
        !open_pair(url, NULL, true, false, &s_off, &off.c, &err) || !warm_local(&on) ||
        !warm_local(&off)) {
        wk_bench_say(b, "cache: tracking cases skipped (%s)",
                     err.msg != NULL ? err.msg : "the local tier did not warm up");
    } else {
        if (!wk_redis_store_tracking(s_on)) {
            wk_bench_say(b, "cache: the server refused CLIENT TRACKING; both rows hear PUBLISH");
        }
        static const char *const cname = "local hit, tracking";
        uint64_t n = wk_bench_quick(b) ? 20000 : 4000000;
        wk_bench_spec specs[] = {
            {cname, "tracking on", local_hit_1, &on, n, 0,
             "Redis store, feed with CLIENT TRACKING BCAST PREFIX wkbench:", 0},
            {cname, "tracking off", local_hit_1, &off, n, 0,
             "Redis store, feed with PUBLISH alone (no_tracking)", 0},
        };
        run_against_baseline(b, &specs[1], &specs[0], "local hit: tracking on / off",
                             " (target within 0.95-1.05)");
        /* what not echoing own writes costs a put: with tracking it runs on the feed's
         * connection (locked for its round trip; the writer reads its own replies), without
         * on a pooled one */
        static const char *const pname = "redis put, tracking";
        uint64_t np = wk_bench_quick(b) ? 2000 : 20000;
        wk_bench_spec puts[] = {
            {pname, "pooled connection", redis_put, &off, np, 72,
             "wk_cache_put, feed with PUBLISH alone (no_tracking): a pooled connection", 0},
            {pname, "feed connection", redis_put, &on, np, 72,
             "wk_cache_put with tracking: lent the feed's connection (NOLOOP)", 0},
        };
        run_against_baseline(b, &puts[0], &puts[1], "redis put: feed connection / pooled", "");
    }
    wk_cache_free(on.c);
    wk_cache_free(off.c);
    wk_redis_store_free(s_on);
    wk_redis_store_free(s_off);

    const char *tls_url = getenv("WK_REDIS_TLS_URL");
    const char *tls_ca = getenv("WK_REDIS_TLS_CA");
    if (tls_url == NULL) {
        wk_bench_say(b, "cache: TLS cases skipped (set WK_REDIS_TLS_URL and WK_REDIS_TLS_CA, "
                        "as scripts/servers.sh start does)");
        return;
    }
    static bctx tcp, tls;
    memcpy(&tcp, ids, sizeof tcp);
    memcpy(&tls, ids, sizeof tls);
    tcp.lat = tls.lat = NULL;
    wk_redis_store *s_tcp = NULL, *s_tls = NULL;
    if (!open_pair(url, NULL, false, false, &s_tcp, &tcp.c, &err) ||
        !open_pair(tls_url, tls_ca, false, false, &s_tls, &tls.c, &err)) {
        wk_bench_say(b, "cache: TLS cases skipped (%s at %s)", err.msg, tls_url);
    } else {
        redis_get(&tcp, NKEYS); /* fill Redis: every get below is a hit there */
        uint64_t n = wk_bench_quick(b) ? 2000 : 40000;
        wk_bench_spec specs[] = {
            {"redis get, tls vs tcp", "tcp", redis_get, &tcp, n, 72,
             "GET + schema decode, plain TCP port", 0},
            {"redis get, tls vs tcp", "tls", redis_get, &tls, n, 72,
             "GET + schema decode, the same server's TLS port (TLS 1.3)", 0},
            {"redis put, tls vs tcp", "tcp", redis_put, &tcp, n / 2, 72,
             "wk_cache_put: DEL, SET PX, PUBLISH in one round trip, plain TCP", 0},
            {"redis put, tls vs tcp", "tls", redis_put, &tls, n / 2, 72,
             "wk_cache_put over TLS", 0},
        };
        for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
            wk_bench_add(b, &specs[i]);
        }
        wk_bench_flush(b);
        double g0 = wk_bench_figure(b, "redis get, tls vs tcp", "tcp");
        double g1 = wk_bench_figure(b, "redis get, tls vs tcp", "tls");
        double p0 = wk_bench_figure(b, "redis put, tls vs tcp", "tcp");
        double p1 = wk_bench_figure(b, "redis put, tls vs tcp", "tls");
        if (g0 > 0 && p0 > 0 && !wk_bench_callgrind(b)) {
            wk_bench_say(b, "redis over TLS / plain TCP: get %.2f, put %.2f", g1 / g0, p1 / p0);
        }
    }
    wk_cache_free(tcp.c);
    wk_cache_free(tls.c);
    wk_redis_store_free(s_tcp);
    wk_redis_store_free(s_tls);
}

/* ---- Redis Cluster: pipelined multi-get vs redis-benchmark --cluster ---- */

#define CBATCH 48   /* keys per wk_cache_get_many: about 16 per master of a 3-master cluster */
#define CSTREAM 480 /* keys per call in the streamed row: windows refilled per master */
#define CWINDOW 16  /* GETs in flight per master: redis-benchmark's -P 16 */
#define CRUNS 16    /* per-run times kept (repetitions of the interleaved harness) */

/* One side of the comparison: its whole-call times, run by run, in harness order. */
typedef struct cluster_side {
    bctx *b;
    wk_cache *cache; /* wirekit sides: the cache (its store's window) */
    unsigned batch;  /* ids per wk_cache_get_many (wirekit sides) */
    bool threads1;  /* redis-benchmark --threads 1 (peer sides) */
    uint64_t ns[CRUNS];
    double startup_ns[CRUNS]; /* peer: wall time minus what it reports as its own */
    unsigned runs;
} cluster_side;

typedef struct cluster_peer {
    char host[128];
    int port;
    unsigned nmasters;
} cluster_peer;

static cluster_peer peer;

static void side_record(cluster_side *c, uint64_t ns, double startup_ns)
{
    if (c->runs < CRUNS) {
        c->ns[c->runs] = ns;
        c->startup_ns[c->runs] = startup_ns;
        c->runs++;
    }
}

static uint64_t cluster_get_many(void *arg, uint64_t iters)
{
    cluster_side *c = arg;
    bctx *b = c->b;
    uint64_t t0 = wk_bench_now_ns();
    uint64_t sum = 0;
    wk_slice ids[CSTREAM];
    wk_cache_entry *refs[CSTREAM];
    wk_status sts[CSTREAM];
    for (uint64_t i = 0; i < iters; i += c->batch) {
        unsigned m = iters - i < c->batch ? (unsigned)(iters - i) : c->batch; /* exactly iters */
        for (unsigned j = 0; j < m; j++) {
            unsigned k = (unsigned)((i + j) % NKEYS);
            ids[j].ptr = b->ids[k];
            ids[j].len = b->id_len[k];
        }
        if (wk_cache_get_many(c->cache, &seed_user_schema, m, ids, seed_loader, NULL, refs,
                              sts, NULL) == WK_OK) {
            for (unsigned j = 0; j < m; j++) {
                sum += (uint64_t)((const seed_user *)wk_cache_entry_object(refs[j]))->age;
                wk_cache_entry_unref(refs[j]);
            }
        }
    }
    side_record(c, wk_bench_now_ns() - t0, 0);
    return sum;
}

/* redis-benchmark --cluster, `iters` GETs: one client per master (-c = masters), 16 deep
 * each (-P 16), 72-byte values (-d 72, the size of our encoded record), over NKEYS random keys
 * per master (-r; redis-benchmark keeps each master's keys under one hash tag, so in one
 * slot, where ours spread over about NKEYS slots). By default it runs one thread per master
 * (--cluster sets --threads to the master count); `threads1` runs its clients on one event
 * loop, like our one calling thread. Its start-up (asking the cluster for its nodes and
 * their CONFIG) is inside the harness's time; the figure it prints itself leaves it out, so
 * the difference is recorded to show it is negligible at this -n. */
static uint64_t cluster_redis_benchmark(void *arg, uint64_t iters)
{
    cluster_side *c = arg;
    char cmd[320];
    snprintf(cmd, sizeof cmd,
             "redis-benchmark --cluster -h %s -p %d -t get -n %llu -c %u -P %d -d 72 -r %d%s -q "
             "2>/dev/null",
             peer.host, peer.port, (unsigned long long)iters, peer.nmasters, CWINDOW, NKEYS,
             c->threads1 ? " --threads 1" : "");
    uint64_t t0 = wk_bench_now_ns();
    FILE *p = popen(cmd, "r");
    if (p == NULL) {
        return 0;
    }
    char line[4096];
    double rps = 0;
    while (fgets(line, sizeof line, p) != NULL) {
        char *g = NULL;
        for (char *q = strstr(line, "GET: "); q != NULL; q = strstr(q + 1, "GET: ")) {
            g = q; /* the last update on the line is the summary */
        }
        if (g != NULL && strstr(g, "requests per second") != NULL) {
            rps = strtod(g + 5, NULL);
        }
    }
    int rc = pclose(p);
    uint64_t dt = wk_bench_now_ns() - t0;
    side_record(c, dt, rps > 0 ? (double)dt - 1e9 * (double)iters / rps : -1);
    return (uint64_t)rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Prints, run by run, wirekit's throughput over the peer's (the peer's time over ours) for
 * the runs paired by the harness (same repetition), then their median and spread. */
static void say_runs(wk_bench *b, const char *what, const cluster_side *wk,
                     const cluster_side *rb)
{
    unsigned n = wk->runs < rb->runs ? wk->runs : rb->runs;
    if (n == 0) {
        return;
    }
    double r[CRUNS], su[CRUNS];
    char list[CRUNS * 8 + 1];
    size_t at = 0;
    for (unsigned i = 0; i < n; i++) {
        r[i] = (double)rb->ns[i] / (double)wk->ns[i];
        su[i] = rb->startup_ns[i] / (double)rb->ns[i];
        at += (size_t)snprintf(list + at, sizeof list - at, " %.2f", r[i]);
    }
    qsort(r, n, sizeof r[0], cmp_double);
    qsort(su, n, sizeof su[0], cmp_double);
    wk_bench_say(b,
                 "cluster, %s: per run%s; median %.2f (min %.2f, max %.2f); the peer's "
                 "start-up %.1f%% of its time (median)",
                 what, list, n % 2 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2, r[0], r[n - 1],
                 100 * su[n / 2]);
}

static void cluster_cases(wk_bench *b, bctx *ctx)
{
    const char *seeds = getenv("WK_REDIS_CLUSTER");
    if (seeds == NULL) {
        wk_bench_say(b, "cache: Redis Cluster case skipped (set WK_REDIS_CLUSTER=HOST:PORT of "
                        "a node of a running cluster)");
        return;
    }
    const char *colon = strrchr(seeds, ':');
    size_t hl = colon != NULL ? (size_t)(colon - seeds) : 0;
    if (colon == NULL || hl == 0 || hl >= sizeof peer.host) {
        wk_bench_say(b, "cache: WK_REDIS_CLUSTER must be HOST:PORT");
        return;
    }
    memcpy(peer.host, seeds, hl);
    peer.host[hl] = '\0';
    peer.port = (int)strtol(colon + 1, NULL, 10);
    const char *list[1] = {seeds};
    wk_redis_opts o = {0};
    o.cluster_nodes = list;
    o.ncluster_nodes = 1;
    o.no_subscribe = true;
    o.pool = 1;
    o.command_timeout_ms = 2000;
    o.pipeline_window = CWINDOW;
    wk_redis_store *store = NULL;
    wk_error err;
    if (wk_redis_store_new(&o, &store, &err) != WK_OK ||
        wk_redis_store_ping(store, &err) != WK_OK) {
        wk_bench_say(b, "cache: Redis Cluster case skipped (%s at %s)", err.msg, seeds);
        wk_redis_store_free(store);
        return;
    }
    /* how many masters: one redis-benchmark client each */
    char cmd[256];
    snprintf(cmd, sizeof cmd, "redis-cli -h %s -p %d cluster shards 2>/dev/null | grep -c '^master$'",
             peer.host, peer.port);
    peer.nmasters = 3;
    FILE *f = popen(cmd, "r");
    if (f != NULL) {
        char line[32];
        if (fgets(line, sizeof line, f) != NULL && strtol(line, NULL, 10) > 0) {
            peer.nmasters = (unsigned)strtol(line, NULL, 10);
        }
        pclose(f);
    }
    wk_cache_config cfg = {0};
    cfg.ns = "wkbench";
    cfg.store = wk_redis_store_iface(store);
    cfg.flags = WK_CACHE_NO_LOCAL;
    wk_cache *c = NULL;
    wk_cache_new(&cfg, &c, NULL);
    ctx->c = c;
    /* the same with a window of 64: fewer, larger sends */
    o.pipeline_window = 64;
    wk_redis_store *store64 = NULL;
    wk_cache *c64 = NULL;
    if (wk_redis_store_new(&o, &store64, &err) == WK_OK) {
        cfg.store = wk_redis_store_iface(store64);
        wk_cache_new(&cfg, &c64, NULL);
    }
    static cluster_side stream, stream64, calls, rb, rb1;
    stream = (cluster_side){ctx, c, CSTREAM, false, {0}, {0}, 0};
    stream64 = (cluster_side){ctx, c64, CSTREAM, false, {0}, {0}, 0};
    calls = (cluster_side){ctx, c, CBATCH, false, {0}, {0}, 0};
    rb = (cluster_side){ctx, NULL, 0, false, {0}, {0}, 0};
    rb1 = (cluster_side){ctx, NULL, 0, true, {0}, {0}, 0};
    cluster_get_many(&calls, NKEYS); /* fill: every later get is a Redis hit */
    calls.runs = 0;
    if (c64 != NULL) {
        cluster_get_many(&stream64, NKEYS); /* its connections opened outside the count */
        stream64.runs = 0;
    }
    /* the peer's keys, with 72-byte values */
    snprintf(cmd, sizeof cmd,
             "redis-benchmark --cluster -h %s -p %d -t set -n 100000 -c %u -P 16 -d 72 -r %d "
             "-q >/dev/null 2>&1",
             peer.host, peer.port, peer.nmasters, NKEYS);
    /* under --callgrind the peer is another process: no instruction count for it */
    bool have_peer = !wk_bench_callgrind(b) && system(cmd) == 0;
    uint64_t n = wk_bench_quick(b) ? 4800 : 480000;
    static const char *const cname = "redis cluster get, pipelined";
    wk_bench_spec specs[] = {
        {cname, "wirekit", cluster_get_many, &stream, n, 72,
         "wk_cache_get_many of 480 ids, pipeline_window 16: each master's window refilled as "
         "its replies are read (8 to 16 GETs in flight per master), 1 connection per master, "
         "1 thread, 72-byte values decoded into objects, 1000 keys over about 1000 slots",
         0},
        {cname, "wirekit, 48 ids per call", cluster_get_many, &calls, n, 72,
         "wk_cache_get_many of 48 ids (about 16 per master, at most 16 in flight): each "
         "call waits for its slowest master",
         0},
        {cname, "wirekit, 480 ids, window 64", cluster_get_many, &stream64, n, 72,
         "the 480-id call with pipeline_window 64 (refilled 32 at a time, 32 to 64 in flight "
         "per master): deeper than the peer, fewer sends",
         0},
        {cname, "redis-benchmark", cluster_redis_benchmark, &rb, n, 72,
         "separate process, --cluster -c <masters> -P 16 -d 72 -r 1000: 1 client per master "
         "16 deep, one thread per master (its default), values not decoded, each master's "
         "keys in one slot, clients free-running (no call waits for the slowest master), "
         "start-up included",
         0},
        {cname, "redis-benchmark --threads 1", cluster_redis_benchmark, &rb1, n, 72,
         "the same with its clients on one thread, like ours",
         0},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        const cluster_side *side = specs[i].arg;
        if (specs[i].fn == cluster_redis_benchmark ? have_peer : side->cache != NULL) {
            wk_bench_add(b, &specs[i]);
        }
    }
    if (!have_peer && !wk_bench_callgrind(b)) {
        wk_bench_say(b, "cache: redis-benchmark --cluster not available; no reference figure");
    }
    wk_bench_flush(b);
    if (have_peer) {
        say_runs(b, "480 ids per call / redis-benchmark", &stream, &rb);
        say_runs(b, "480 ids per call / redis-benchmark --threads 1", &stream, &rb1);
        say_runs(b, "48 ids per call / redis-benchmark", &calls, &rb);
        say_runs(b, "480 ids per call, window 64 / redis-benchmark", &stream64, &rb);
    }
    wk_cache_free(c64);
    wk_redis_store_free(store64);
    wk_cache_free(c);
    wk_redis_store_free(store);
}

int wk_bench_suite_cache(wk_bench *b)
{
    bctx *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL) {
        return 1;
    }
    for (int i = 0; i < NKEYS; i++) {
        ctx->id_len[i] = (size_t)snprintf(ctx->ids[i], sizeof ctx->ids[i], "%d", i);
    }
    wk_cache_config cfg = {0};
    cfg.max_entries = 10 * NKEYS;
    cfg.local_ttl_ms = 3600 * 1000;
    wk_cache_new(&cfg, &ctx->c, NULL);
    run_hits(ctx, NKEYS, 0, NKEYS, false); /* load everything once (stride 7 is coprime) */
    wk_cache_stats st;
    wk_cache_get_stats(ctx->c, &st);
    if (st.loads != NKEYS || st.local_entries != NKEYS) {
        wk_bench_fail(b, "cache: %llu loads, %llu entries after warm-up, want %d",
                      (unsigned long long)st.loads, (unsigned long long)st.local_entries, NKEYS);
    }
    local_cases(b, ctx);
    wk_cache_get_stats(ctx->c, &st);
    if (st.loads != NKEYS) {
        wk_bench_fail(b, "cache: hits called the loader (%llu loads)",
                      (unsigned long long)st.loads);
    }
    wk_cache_free(ctx->c);
    redis_cases(b, ctx);
    tracking_tls_cases(b, ctx);
    cluster_cases(b, ctx);
    free(ctx);
    return 0;
}
