/*
 * `wirekit cache`: the entity cache from the command line, against Redis (--redis URL) or the
 * in-process memory tier.
 *
 * Entries here are free-form documents: any JSON value, stored (as MessagePack by default)
 * under `<ns>:<entity>:v<version>:<id>` with a value descriptor (WK_SCHEMA_DEFINE_VALUE's
 * runtime twin). That keeps the command useful for every cache a program writes with the same
 * serializer: a struct entry written through a descriptor is a map, so it reads back here as a
 * JSON object. The memory tier lives only as long as one invocation, so without --redis the
 * operations come from a script (`run`): one per line, `get ID`, `put ID JSON`, `del ID`,
 * `stats`, with blank lines and `#` comments ignored.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "wirekit/cache.h"
#include "wirekit/json.h"
#include "wirekit/schema.h"
#ifdef WK_CLI_HAVE_REDIS
#include "wirekit/redis.h"
#endif

static const char usage[] =
    "usage: wirekit cache [options] get ID\n"
    "       wirekit cache [options] put ID [JSON]   (JSON from standard input when omitted)\n"
    "       wirekit cache [options] del ID\n"
    "       wirekit cache [options] stats\n"
    "       wirekit cache [options] keys            (ids in Redis, this entity and version)\n"
    "       wirekit cache [options] ttl ID          (milliseconds left in Redis)\n"
    "       wirekit cache [options] run [SCRIPT]    (a session: operations from SCRIPT or\n"
    "                                               standard input, each answered at once)\n"
    "\n"
    "The entity cache: documents (any JSON value) stored under versioned keys\n"
    "<ns>:<entity>:v<version>:<id>, in the in-process memory tier or in Redis. Values are\n"
    "shown as JSON. get exits 1 when the id is not cached ('ID: not found'), and also\n"
    "exits 1, with the cause ('get: redis: ...'), when Redis fails or answers something\n"
    "that is not a value: a failure is never reported as 'not found'. A value that does\n"
    "not decode with this --format (written with another one, or by another program)\n"
    "exits 1 too ('ID: cannot decode the stored value as FORMAT: why'): a read never\n"
    "deletes anything. Against Redis,\n"
    "stats prints only what other processes see too: {\"redis_keys\":N (this namespace and\n"
    "entity), \"redis_keys_version\":N (and this version)}; keys lists the ids (SCAN, on\n"
    "every master of a cluster); ttl exits 1 when the id is not in Redis. The tombstone\n"
    "a del leaves for a moment (so that no process refills the old value) is not a\n"
    "value: keys, ttl and stats do not count it, as get does not.\n"
    "\n"
    "Without --redis the cache is the memory tier of this one invocation, so get/put/del/stats\n"
    "alone are refused: use run with a script, one operation per line:\n"
    "    put 1 {\"name\":\"ada\",\"tags\":[\"x\"]}\n"
    "    get 1\n"
    "    del 1\n"
    "    stats\n"
    "    sleep 50\n"
    "In a script, get prints the JSON value or 'not found', put and del print 'ok', stats\n"
    "prints the counters as one JSON object, sleep MS waits; blank lines and '#' comments\n"
    "are skipped. Each line is answered (and the answer flushed) as soon as it is read,\n"
    "so a session on a pipe can be interleaved with other clients. With --redis a session\n"
    "keeps a memory tier in front of Redis, trusted while its invalidation feed is up.\n"
    "A put the memory tier cannot keep (larger than one shard's share of its 64 MiB) fails\n"
    "with a message instead of printing 'ok'.\n"
    "\n"
    "options:\n"
    "  --redis URL      shared tier: redis://[[user]:password@]host[:port][/db] or\n"
    "                   unix:///path/to/socket[?db=N]; as redis-cli reads it, userinfo\n"
    "                   without ':' is a password: redis://alice@host sends AUTH alice\n"
    "                   (the default user), an ACL user needs redis://alice:PASSWORD@host.\n"
    "                   The password may instead come from WK_REDIS_PASSWORD (over the\n"
    "                   URL's) or REDISCLI_AUTH (when the URL has none, as redis-cli\n"
    "                   takes it); put and del delete the old\n"
    "                   value first and are broadcast on the invalidation channel, so\n"
    "                   other processes drop their copies; when Redis refuses part of it\n"
    "                   (e.g. out of memory) the command fails and says which part\n"
    "  --redis-cluster HOST:PORT[,HOST:PORT...]\n"
    "                   shared tier in a Redis Cluster, found from these seed nodes (the\n"
    "                   password from WK_REDIS_PASSWORD or REDISCLI_AUTH)\n"
    "  --redis-sentinel HOST:PORT[,HOST:PORT...]\n"
    "                   shared tier on the master the sentinels name (--sentinel-master)\n"
    "  --sentinel-master NAME  the master's name in Sentinel\n"
    "  --client-name N  CLIENT SETNAME on the Redis connection (seen in CLIENT LIST)\n"
    "  --max-bytes N    largest document put (JSON input and encoded entry) and largest\n"
    "                   value read back from Redis (default 16777216)\n"
    "  --ns NAME        key namespace (default wk)\n"
    "  --entity NAME    entity name in keys (default doc)\n"
    "  --version N      schema version in keys (default 1)\n"
    "  --format F       stored encoding: msgpack (default) or json\n"
    "  --ttl MS         lifetime of a put in Redis, milliseconds (default 600000)\n"
    "  --timeout MS     Redis connect timeout (host name resolution included), and the\n"
    "                   total time one Redis command may take, however slowly the server\n"
    "                   answers (default 1000)\n"
    "  --channel NAME   invalidation channel (default wirekit:invalidate)\n"
    "  --no-tracking    in a run session, hear only wirekit's own invalidations (PUBLISH):\n"
    "                   without it the session's memory tier also drops what any client\n"
    "                   changes under --ns (CLIENT TRACKING, Redis 6+)\n"
    "  --tls            TLS to the server, cluster nodes and sentinels (as rediss://)\n"
    "  --cacert FILE    CA certificates (PEM) the server's must chain to (default: the\n"
    "                   system's)\n"
    "  --cacertdir DIR  directory of CA certificates named by hash (openssl rehash)\n"
    "  --cert FILE      client certificate (PEM), for servers that require one\n"
    "  --key FILE       the client certificate's private key (PEM, not encrypted)\n"
    "  --sni NAME       server name sent (SNI) and checked in the certificate (default:\n"
    "                   the host connected to)\n"
    "  --insecure       INSECURE: accept any certificate, unchecked (tests only)\n\n"
    "Options may come anywhere before '--' (after the operation too); '--' ends them.\n\n"
    "Exit status: 0 success, 1 a failure or an id not there (get, ttl), 2 usage error.\n";

typedef struct cache_cli {
    const char *redis;
    const char *cluster;      /* --redis-cluster host:port,... */
    const char *sentinels;    /* --redis-sentinel host:port,... */
    const char *sentinel_master;
    const char *client_name;
    const char *ns;
    const char *entity;
    const char *channel;
    uint32_t version;
    uint32_t ttl_ms;
    uint32_t timeout_ms;
    size_t max_bytes;
    const wk_serializer *ser;
    wk_schema_rt rt;
    wk_schema schema;
    wk_cache *cache;
#ifdef WK_CLI_HAVE_REDIS
    wk_redis_store *store;
#endif
    bool script; /* inside `run`: softer output conventions */
    bool no_tracking;
    bool tls, insecure;
    const char *cacert, *cacertdir, *cert, *key, *sni;
} cache_cli;

static bool parse_u32(const char *s, uint32_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v > UINT32_MAX || s[0] == '-') {
        return false;
    }
    *out = (uint32_t)v;
    return true;
}

static int print_value(const wk_value *v)
{
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    wk_error err;
    if (wk_json_encode_value(v, NULL, &out, &err) != WK_OK) {
        wk_buf_free(&out);
        return wk_cli_fail_at("cannot show the value as JSON", &err);
    }
    fwrite(out.data, 1, out.len, stdout);
    fputc('\n', stdout);
    wk_buf_free(&out);
    return WK_EXIT_OK;
}

/* A value that is there but does not decode with this --format: the cache's own message (a
 * store's failure, whatever its status, is the store's: "redis: ..."). */
static bool is_decode_failure(wk_status st, const wk_error *err)
{
    return st != WK_OK && err->msg != NULL &&
           strncmp(err->msg, WK_CACHE_UNDECODABLE, strlen(WK_CACHE_UNDECODABLE)) == 0;
}

static int op_get(cache_cli *c, const char *id)
{
    wk_cache_entry *r = NULL;
    wk_error err;
    wk_status st = wk_cache_get(c->cache, &c->schema, id, strlen(id), NULL, NULL, &r, &err);
    if (st == WK_ERR_NOT_FOUND) {
        if (c->script) {
            printf("not found\n");
            return WK_EXIT_OK;
        }
        return wk_cli_fail("%s: not found", id);
    }
    if (is_decode_failure(st, &err)) {
        /* a value is there, in another encoding or damaged: never reported as absent */
        return wk_cli_fail("%s: cannot decode the stored value as %s: %s (written with "
                           "another --format or by another program? it is left in place)",
                           id, c->ser->name, wk_status_str(st));
    }
    if (st != WK_OK) {
        return wk_cli_fail_at("get", &err);
    }
    int rc = print_value(wk_cache_entry_object(r));
    wk_cache_entry_unref(r);
    return rc;
}

static int op_put(cache_cli *c, const char *id, const char *json, size_t len)
{
    if (len > c->max_bytes) {
        return wk_cli_fail("put: the document (%zu bytes) is larger than --max-bytes %zu", len,
                           c->max_bytes);
    }
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_value *v = NULL;
    wk_error err;
    int rc = WK_EXIT_OK;
    if (wk_json_decode_value(json, len, NULL, &arena, &v, NULL, &err) != WK_OK) {
        rc = wk_cli_fail_at("put: invalid JSON", &err);
    } else if (wk_cache_put(c->cache, &c->schema, id, strlen(id), v, c->ttl_ms, &err) != WK_OK) {
        rc = wk_cli_fail_at("put", &err);
    } else if (c->script) {
        printf("ok\n");
    }
    wk_arena_free(&arena);
    return rc;
}

static int op_del(cache_cli *c, const char *id)
{
    wk_error err;
    if (wk_cache_invalidate(c->cache, &c->schema, id, strlen(id), &err) != WK_OK) {
        return wk_cli_fail_at("del", &err);
    }
    if (c->script) {
        printf("ok\n");
    }
    return WK_EXIT_OK;
}

#ifdef WK_CLI_HAVE_REDIS
/* The keys of this namespace, entity and version: `<ns>:<entity>:v<version>:`. */
static bool version_prefix(const cache_cli *c, char *buf, size_t cap)
{
    int n = snprintf(buf, cap, "%s:%s:v%u:", c->ns, c->entity, c->version);
    return n > 0 && (size_t)n < cap;
}

/* A deleted id's tombstone (WK_CACHE_TOMBSTONE_MARK, kept a moment so that no load refills the
 * old value) and a loader's "not found" (WK_CACHE_NEGATIVE_MARK) are not values: get says "not
 * found" for both, so keys, ttl and stats leave them out too. */
static bool is_mark(const uint8_t *v, size_t len)
{
    return len == WK_CACHE_MARK_LEN && (memcmp(v, WK_CACHE_TOMBSTONE_MARK, len) == 0 ||
                                        memcmp(v, WK_CACHE_NEGATIVE_MARK, len) == 0);
}

/* The keys a SCAN found, checked for marks a batch at a time. */
#define KEY_BATCH 64

typedef struct key_batch {
    cache_cli *c;
    size_t skip;   /* prefix length: printed ids start after it */
    bool print;    /* keys: print each live id; stats: count them */
    uint64_t live;
    size_t n;
    char *keys[KEY_BATCH];
    size_t lens[KEY_BATCH];
    wk_status st;
    wk_error err;
} key_batch;

/* Whether each key of the batch holds a value (not a mark); a batch too large for one reply
 * (--max-bytes) is asked key by key, and a single value too large is a value. */
static wk_status batch_live(key_batch *kb, bool *live)
{
    const wk_cache_store *st = wk_redis_store_iface(kb->c->store);
    wk_slice ks[KEY_BATCH];
    wk_buf vals[KEY_BATCH];
    bool found[KEY_BATCH];
    for (size_t i = 0; i < kb->n; i++) {
        ks[i].ptr = kb->keys[i];
        ks[i].len = kb->lens[i];
        wk_buf_init(&vals[i], NULL, 0);
        found[i] = false;
    }
    wk_status rs = st->fetch(st->self, kb->n, ks, vals, found, &kb->err);
    for (size_t i = 0; i < kb->n && rs == WK_OK; i++) {
        live[i] = found[i] && !is_mark(vals[i].data, vals[i].len);
    }
    for (size_t i = 0; i < kb->n && rs != WK_OK; i++) {
        wk_buf_clear(&vals[i]);
        found[i] = false;
        wk_status one = st->fetch(st->self, 1, &ks[i], &vals[i], &found[i], &kb->err);
        if (one != WK_OK && one != WK_ERR_LIMIT) {
            for (size_t k = 0; k < kb->n; k++) {
                wk_buf_free(&vals[k]);
            }
            return one;
        }
        live[i] = one == WK_ERR_LIMIT || (found[i] && !is_mark(vals[i].data, vals[i].len));
    }
    for (size_t i = 0; i < kb->n; i++) {
        wk_buf_free(&vals[i]);
    }
    return WK_OK;
}

static void batch_flush(key_batch *kb)
{
    bool live[KEY_BATCH];
    if (kb->n > 0 && kb->st == WK_OK) {
        kb->st = batch_live(kb, live);
    }
    for (size_t i = 0; i < kb->n; i++) {
        if (kb->st == WK_OK && live[i]) {
            kb->live++;
            if (kb->print) {
                fwrite(kb->keys[i] + kb->skip, 1, kb->lens[i] - kb->skip, stdout);
                fputc('\n', stdout);
            }
        }
        free(kb->keys[i]);
    }
    kb->n = 0;
}

static bool take_key(void *ctx, const char *key, size_t len)
{
    key_batch *kb = ctx;
    if (len < kb->skip || kb->st != WK_OK) {
        return kb->st == WK_OK;
    }
    char *k = malloc(len + 1);
    if (k == NULL) {
        kb->st = wk_error_set(&kb->err, WK_ERR_NOMEM, 0, "out of memory");
        return false;
    }
    memcpy(k, key, len);
    k[len] = '\0';
    kb->keys[kb->n] = k;
    kb->lens[kb->n++] = len;
    if (kb->n == KEY_BATCH) {
        batch_flush(kb);
    }
    return kb->st == WK_OK;
}

/* The ids under `prefix` that hold values: printed (keys) or counted (stats). */
static wk_status live_keys(cache_cli *c, const char *prefix, size_t skip, bool print,
                           uint64_t *count, wk_error *err)
{
    key_batch *kb = calloc(1, sizeof *kb);
    if (kb == NULL) {
        return wk_error_set(err, WK_ERR_NOMEM, 0, "out of memory");
    }
    kb->c = c;
    kb->skip = skip;
    kb->print = print;
    wk_status st = wk_redis_store_scan(c->store, prefix, take_key, kb, err);
    batch_flush(kb);
    if (st == WK_OK && kb->st != WK_OK) {
        st = kb->st;
        *err = kb->err;
    }
    if (count != NULL) {
        *count = kb->live;
    }
    free(kb);
    return st;
}

/* `keys`: the ids stored in Redis for this namespace, entity and version (SCAN, every master
 * of a cluster), one per line, in no order; deleted ids (tombstones) are not listed. */
static int op_keys(cache_cli *c)
{
    char prefix[WK_CACHE_KEY_MAX];
    if (!version_prefix(c, prefix, sizeof prefix)) {
        return wk_cli_fail("keys: namespace and entity too long");
    }
    wk_error err;
    if (live_keys(c, prefix, strlen(prefix), true, NULL, &err) != WK_OK) {
        return wk_cli_fail_at("keys", &err);
    }
    return WK_EXIT_OK;
}

/* `ttl ID`: milliseconds left in Redis; "no expiry"; not found exits 1. */
static int op_ttl(cache_cli *c, const char *id)
{
    char key[WK_CACHE_KEY_MAX];
    size_t kl = wk_cache_key(c->ns, &c->schema, id, strlen(id), key, sizeof key);
    if (kl >= sizeof key) {
        return wk_cli_fail("ttl: key longer than %u bytes", WK_CACHE_KEY_MAX);
    }
    int64_t ms = 0;
    wk_error err;
    if (wk_redis_store_pttl(c->store, key, &ms, &err) != WK_OK) {
        return wk_cli_fail_at("ttl", &err);
    }
    if (ms >= 0 || ms == -1) { /* a tombstone has a lifetime too: not a value */
        const wk_cache_store *st = wk_redis_store_iface(c->store);
        wk_slice k = {key, kl};
        wk_buf v;
        wk_buf_init(&v, NULL, 0);
        bool found = false;
        wk_status fs = st->fetch(st->self, 1, &k, &v, &found, &err);
        bool mark = fs == WK_OK && found && is_mark(v.data, v.len);
        wk_buf_free(&v);
        if (fs != WK_OK && fs != WK_ERR_LIMIT) {
            return wk_cli_fail_at("ttl", &err);
        }
        if (mark || (fs == WK_OK && !found)) {
            ms = -2;
        }
    }
    if (ms == -2) {
        return wk_cli_fail("%s: not found", id);
    }
    if (ms == -1) {
        printf("no expiry\n");
    } else {
        printf("%lld\n", (long long)ms);
    }
    return WK_EXIT_OK;
}
#endif

static int op_stats(cache_cli *c)
{
#ifdef WK_CLI_HAVE_REDIS
    if (c->store != NULL && !c->script) {
        /* One invocation's hit counters mean nothing to other processes: only what is in
         * Redis is printed. */
        char prefix[WK_CACHE_KEY_MAX], vprefix[WK_CACHE_KEY_MAX];
        int n = snprintf(prefix, sizeof prefix, "%s:%s:", c->ns, c->entity);
        uint64_t keys = 0, vkeys = 0;
        wk_error err;
        if (n <= 0 || (size_t)n >= sizeof prefix || !version_prefix(c, vprefix, sizeof vprefix)) {
            return wk_cli_fail("stats: namespace and entity too long");
        }
        if (live_keys(c, prefix, 0, false, &keys, &err) != WK_OK ||
            live_keys(c, vprefix, 0, false, &vkeys, &err) != WK_OK) {
            return wk_cli_fail_at("stats", &err);
        }
        printf("{\"redis_keys\":%llu,\"redis_keys_version\":%llu}\n", (unsigned long long)keys,
               (unsigned long long)vkeys);
        return WK_EXIT_OK;
    }
#endif
    wk_cache_stats s;
    wk_cache_get_stats(c->cache, &s);
    printf("{\"local_hits\":%llu,\"local_misses\":%llu,\"shared_hits\":%llu,"
           "\"shared_misses\":%llu,\"negative_hits\":%llu,\"loads\":%llu,"
           "\"load_not_found\":%llu,\"load_errors\":%llu,\"shared_errors\":%llu,"
           "\"fallbacks\":%llu,\"corrupt\":%llu,\"evictions\":%llu,\"expirations\":%llu,"
           "\"invalidations\":%llu,\"flight_waits\":%llu,\"feed_resets\":%llu,"
           "\"local_entries\":%llu,\"local_bytes\":%llu",
           (unsigned long long)s.local_hits, (unsigned long long)s.local_misses,
           (unsigned long long)s.shared_hits, (unsigned long long)s.shared_misses,
           (unsigned long long)s.negative_hits, (unsigned long long)s.loads,
           (unsigned long long)s.load_not_found, (unsigned long long)s.load_errors,
           (unsigned long long)s.shared_errors, (unsigned long long)s.fallbacks,
           (unsigned long long)s.corrupt, (unsigned long long)s.evictions,
           (unsigned long long)s.expirations, (unsigned long long)s.invalidations,
           (unsigned long long)s.flight_waits, (unsigned long long)s.feed_resets,
           (unsigned long long)s.local_entries, (unsigned long long)s.local_bytes);
#ifdef WK_CLI_HAVE_REDIS
    if (c->store != NULL) {
        char prefix[WK_CACHE_KEY_MAX];
        int n = snprintf(prefix, sizeof prefix, "%s:%s:", c->ns, c->entity);
        uint64_t keys = 0;
        wk_error err;
        if (n > 0 && (size_t)n < sizeof prefix &&
            wk_redis_store_count(c->store, prefix, &keys, &err) == WK_OK) {
            printf(",\"redis_keys\":%llu", (unsigned long long)keys);
        }
    }
#endif
    printf("}\n");
    return WK_EXIT_OK;
}

#ifdef WK_CLI_HAVE_REDIS
/* The URL for messages, with a password replaced by "***". */
static void redact_url(const char *url, char *out, size_t cap)
{
    const char *auth = strstr(url, "://");
    auth = auth != NULL ? auth + 3 : url;
    const char *end = auth + strcspn(auth, "/?#");
    const char *at = NULL;
    for (const char *q = auth; q < end; q++) {
        if (*q == '@') {
            at = q;
        }
    }
    const char *colon = at != NULL ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
    if (at == NULL) {
        snprintf(out, cap, "%s", url);
    } else if (colon == NULL) {
        snprintf(out, cap, "%.*s***%s", (int)(auth - url), url, at);
    } else {
        snprintf(out, cap, "%.*s***%s", (int)(colon + 1 - url), url, at);
    }
}

/* Whether the URL has userinfo (`user:password@` or, as redis-cli reads it, `password@`). */
static bool url_has_password(const char *url)
{
    const char *auth = strstr(url, "://");
    auth = auth != NULL ? auth + 3 : url;
    size_t n = strncmp(url, "unix://", 7) == 0 ? strcspn(auth, "/") : strcspn(auth, "/?#");
    return memchr(auth, '@', n) != NULL;
}
#endif

/* Runs one script line; returns an exit code (usage problems in a script are failures). */
static int run_line(cache_cli *c, char *line, size_t lineno)
{
    char *p = line;
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    size_t len = strlen(p);
    while (len > 0 && (p[len - 1] == '\n' || p[len - 1] == '\r' || p[len - 1] == ' ')) {
        p[--len] = '\0';
    }
    if (len == 0 || p[0] == '#') {
        return WK_EXIT_OK;
    }
    char *op = p;
    char *rest = strchr(p, ' ');
    if (rest != NULL) {
        *rest++ = '\0';
        while (*rest == ' ') {
            rest++;
        }
    }
    char *id = rest;
    char *arg = NULL;
    if (id != NULL) {
        arg = strchr(id, ' ');
        if (arg != NULL) {
            *arg++ = '\0';
        }
    }
    bool has_id = id != NULL && *id != '\0';
    if (strcmp(op, "get") == 0 && has_id && arg == NULL) {
        return op_get(c, id);
    }
    if (strcmp(op, "put") == 0 && has_id && arg != NULL) {
        return op_put(c, id, arg, strlen(arg));
    }
    if (strcmp(op, "del") == 0 && has_id && arg == NULL) {
        return op_del(c, id);
    }
    if (strcmp(op, "stats") == 0 && id == NULL) {
        return op_stats(c);
    }
    if (strcmp(op, "sleep") == 0 && has_id && arg == NULL) {
        uint32_t ms = 0;
        if (!parse_u32(id, &ms)) {
            return wk_cli_fail("script line %zu: sleep takes milliseconds", lineno);
        }
        fflush(stdout);
        struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
        return WK_EXIT_OK;
    }
    return wk_cli_fail("script line %zu: expected 'get ID', 'put ID JSON', 'del ID', 'stats' "
                       "or 'sleep MS'",
                       lineno);
}

/* Reads one line of `f` (without its newline) into *buf, growing it up to `cap` bytes: 1 a
 * line, 0 at the end of the input, -1 on a line longer than `cap` or a read error. */
static int read_line(FILE *f, char **buf, size_t *bcap, size_t cap, size_t *len)
{
    size_t n = 0;
    int ch;
    while ((ch = getc(f)) != EOF && ch != '\n') {
        if (n + 1 >= *bcap) {
            if (*bcap >= cap) {
                return -1;
            }
            size_t nc = *bcap < 256 ? 256 : *bcap * 2;
            char *nb = realloc(*buf, nc > cap ? cap : nc);
            if (nb == NULL) {
                return -1;
            }
            *buf = nb;
            *bcap = nc > cap ? cap : nc;
        }
        (*buf)[n++] = (char)ch;
    }
    if (ferror(f)) {
        return -1;
    }
    if (ch == EOF && n == 0) {
        return 0;
    }
    if (*buf == NULL) { /* an empty line before any byte was kept */
        *buf = malloc(1);
        if (*buf == NULL) {
            return -1;
        }
        *bcap = 1;
    }
    (*buf)[n] = '\0';
    *len = n;
    return 1;
}

/* A live session: each line of SCRIPT (or standard input) is answered as soon as it is read,
 * and the answer flushed, so a script or a test can interleave it with other clients. */
static int run_script(cache_cli *c, const char *path)
{
    FILE *f = path == NULL || strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (f == NULL) {
        return wk_cli_fail("cannot open %s: %s", path, strerror(errno));
    }
    c->script = true;
    int rc = WK_EXIT_OK;
    size_t lineno = 0;
    char *line = NULL;
    size_t bcap = 0, len = 0;
    /* a put line carries one document: --max-bytes of it, plus the operation and its id */
    size_t cap = c->max_bytes > SIZE_MAX - 1024 ? SIZE_MAX : c->max_bytes + 1024;
    while (rc == WK_EXIT_OK) {
        int got = read_line(f, &line, &bcap, cap, &len);
        if (got == 0) {
            break;
        }
        lineno++;
        if (got < 0) {
            rc = ferror(f) ? wk_cli_fail("cannot read the script: %s", strerror(errno))
                           : wk_cli_fail("script line %zu: longer than --max-bytes allows",
                                         lineno);
        } else if (memchr(line, '\0', len) != NULL) {
            rc = wk_cli_fail("script line %zu: NUL byte", lineno);
        } else {
            rc = run_line(c, line, lineno);
        }
        fflush(stdout);
    }
    free(line);
    if (f != stdin) {
        fclose(f);
    }
    return rc;
}

static int open_cache(cache_cli *c)
{
    c->schema.name = c->entity;
    c->schema.version = c->version;
    c->schema.root = WK_SCHEMA_ROOT_VALUE;
    c->schema.size = sizeof(wk_value);
    c->schema.fields = NULL;
    c->schema.nfields = 0;
    c->schema.rt = &c->rt;
    wk_cache_config cfg = {0};
    cfg.ns = c->ns;
    cfg.serializer = c->ser;
    cfg.max_entry_bytes = c->max_bytes;
    wk_error err;
    char words[512]; /* a message in the command's words (wk_cli_words) */
    if (c->redis != NULL) {
#ifdef WK_CLI_HAVE_REDIS
        wk_redis_opts o = {0};
        o.url = c->cluster == NULL && c->sentinels == NULL ? c->redis : NULL;
        const char *list[64];
        char listbuf[2048];
        size_t nlist = 0;
        const char *spec = c->cluster != NULL ? c->cluster : c->sentinels;
        if (spec != NULL) {
            if (strlen(spec) >= sizeof listbuf) {
                return wk_cli_fail("the node list is too long");
            }
            memcpy(listbuf, spec, strlen(spec) + 1);
            char *save = NULL;
            for (char *t = strtok_r(listbuf, ",", &save); t != NULL && nlist < 64;
                 t = strtok_r(NULL, ",", &save)) {
                list[nlist++] = t;
            }
        }
        if (c->cluster != NULL) {
            o.cluster_nodes = list;
            o.ncluster_nodes = nlist;
        } else if (c->sentinels != NULL) {
            o.sentinels = list;
            o.nsentinels = nlist;
            o.sentinel_master = c->sentinel_master;
        }
        o.client_name = c->client_name;
        /* WK_REDIS_PASSWORD overrides the URL's password; REDISCLI_AUTH, as redis-cli
         * reads it, only stands in for a password the URL does not give */
        o.password = getenv("WK_REDIS_PASSWORD");
        if (o.password == NULL && (o.url == NULL || !url_has_password(o.url))) {
            o.password = getenv("REDISCLI_AUTH");
        }
        o.connect_timeout_ms = c->timeout_ms;
        o.command_timeout_ms = c->timeout_ms;
        o.channel = c->channel;
        /* a one-shot command has nothing to keep fresh (it still publishes its puts and
         * deletes); a `run` session keeps a memory tier, so it listens to the feed, with
         * CLIENT TRACKING on this namespace unless --no-tracking */
        o.no_subscribe = !c->script;
        o.no_tracking = c->no_tracking;
        char prefix[WK_CACHE_KEY_MAX];
        const char *prefixes[1] = {prefix};
        int pn = snprintf(prefix, sizeof prefix, "%s:", c->ns);
        if (pn > 0 && (size_t)pn < 128) {
            o.tracking_prefixes = prefixes;
            o.ntracking_prefixes = 1;
        }
        o.tls = c->tls;
        o.tls_ca_file = c->cacert;
        o.tls_ca_dir = c->cacertdir;
        o.tls_cert_file = c->cert;
        o.tls_key_file = c->key;
        o.tls_server_name = c->sni;
        o.tls_insecure_skip_verify = c->insecure;
        o.max_reply_bytes = c->max_bytes;
        o.pool = 1;
        if (wk_redis_store_new(&o, &c->store, &err) != WK_OK) {
            return wk_cli_fail("%s", wk_cli_words(err.msg, words, sizeof words));
        }
        if (wk_redis_store_ping(c->store, &err) != WK_OK) {
            /* the server that failed, by its own address: a node CLUSTER SLOTS named or the
             * sentinel asked may not be the address given */
            char shown[512];
            if (wk_redis_store_failed_server(c->store, shown, sizeof shown) == 0) {
                redact_url(spec != NULL ? spec : c->redis, shown, sizeof shown);
            }
            return wk_cli_fail("cannot reach Redis at %s: %s", shown,
                               wk_cli_words(err.msg, words, sizeof words));
        }
        /* a session's memory tier serves only once the feed is up: wait for it (within
         * --timeout), so the first lines already use it */
        for (uint32_t waited = 0; c->script && waited < c->timeout_ms &&
                                  !wk_redis_store_feed_up(c->store);
             waited += 5) {
            struct timespec ts = {0, 5000000L};
            nanosleep(&ts, NULL);
        }
        cfg.store = wk_redis_store_iface(c->store);
#else
        return wk_cli_fail("this wirekit was built without Redis support");
#endif
    }
    if (wk_cache_new(&cfg, &c->cache, &err) != WK_OK) {
        return wk_cli_fail("%s", wk_cli_words(err.msg, words, sizeof words));
    }
    return WK_EXIT_OK;
}

static void close_cache(cache_cli *c)
{
    wk_cache_free(c->cache);
#ifdef WK_CLI_HAVE_REDIS
    wk_redis_store_free(c->store);
#endif
    wk_schema_unprepare(&c->schema);
}

enum {
    C_REDIS = 1, C_CLIENT_NAME, C_CLUSTER, C_SENTINEL, C_SENTINEL_MASTER, C_NS, C_ENTITY,
    C_CHANNEL, C_FORMAT, C_VERSION, C_TTL, C_MAX_BYTES, C_TIMEOUT, C_NO_TRACKING, C_TLS,
    C_CACERT, C_CACERTDIR, C_CERT, C_KEY, C_SNI, C_INSECURE
};

static const wk_cli_optdef cache_opts[] = {
    {"--redis", 0, true, C_REDIS},
    {"--client-name", 0, true, C_CLIENT_NAME},
    {"--redis-cluster", 0, true, C_CLUSTER},
    {"--redis-sentinel", 0, true, C_SENTINEL},
    {"--sentinel-master", 0, true, C_SENTINEL_MASTER},
    {"--ns", 0, true, C_NS},
    {"--entity", 0, true, C_ENTITY},
    {"--channel", 0, true, C_CHANNEL},
    {"--format", 0, true, C_FORMAT},
    {"--version", 0, true, C_VERSION},
    {"--ttl", 0, true, C_TTL},
    {"--max-bytes", 0, true, C_MAX_BYTES},
    {"--timeout", 0, true, C_TIMEOUT},
    {"--no-tracking", 0, false, C_NO_TRACKING},
    {"--tls", 0, false, C_TLS},
    {"--cacert", 0, true, C_CACERT},
    {"--cacertdir", 0, true, C_CACERTDIR},
    {"--cert", 0, true, C_CERT},
    {"--key", 0, true, C_KEY},
    {"--sni", 0, true, C_SNI},
    {"--insecure", 0, false, C_INSECURE},
    {NULL, 0, false, 0},
};

static int run(int argc, char **argv)
{
    cache_cli c;
    memset(&c, 0, sizeof c);
    c.ns = "wk";
    c.entity = "doc";
    c.version = 1;
    c.ttl_ms = 600000;
    c.timeout_ms = 1000;
    c.max_bytes = WK_CACHE_MAX_ENTRY_DEFAULT;
    c.ser = wk_serializer_msgpack();
    wk_cli_args args;
    wk_cli_args_init(&args, "cache", argc, argv, 1, cache_opts);
    int opt;
    const char *v;
    while ((opt = wk_cli_next(&args, &v)) != WK_CLI_DONE) {
        switch (opt) {
        case WK_CLI_HELP: fputs(usage, stdout); return WK_EXIT_OK;
        case WK_CLI_BAD: return WK_EXIT_USAGE;
        case C_REDIS: c.redis = v; break;
        case C_CLIENT_NAME: c.client_name = v; break;
        case C_CLUSTER:
            c.cluster = v;
            c.redis = v; /* "a shared tier is given" */
            break;
        case C_SENTINEL:
            c.sentinels = v;
            c.redis = v;
            break;
        case C_SENTINEL_MASTER: c.sentinel_master = v; break;
        case C_NO_TRACKING: c.no_tracking = true; break;
        case C_TLS: c.tls = true; break;
        case C_CACERT: c.cacert = v; break;
        case C_CACERTDIR: c.cacertdir = v; break;
        case C_CERT: c.cert = v; break;
        case C_KEY: c.key = v; break;
        case C_SNI: c.sni = v; break;
        case C_INSECURE: c.insecure = true; break;
        case C_NS: c.ns = v; break;
        case C_ENTITY: c.entity = v; break;
        case C_CHANNEL: c.channel = v; break;
        case C_FORMAT:
            c.ser = wk_serializer_find(v);
            if (c.ser == NULL) {
                return wk_cli_usage_error("cache", "unknown format '%s' (msgpack or json)", v);
            }
            break;
        case C_VERSION:
            if (!parse_u32(v, &c.version)) {
                return wk_cli_usage_error("cache", "--version needs a number");
            }
            break;
        case C_TTL:
            if (!parse_u32(v, &c.ttl_ms) || c.ttl_ms == 0) {
                return wk_cli_usage_error("cache", "--ttl needs a positive number");
            }
            break;
        case C_MAX_BYTES: {
            char *end = NULL;
            errno = 0;
            unsigned long long mb = strtoull(v, &end, 10);
            if (errno != 0 || end == v || *end != '\0' || mb == 0 || v[0] == '-') {
                return wk_cli_usage_error("cache", "--max-bytes needs a positive number");
            }
            c.max_bytes = (size_t)mb;
            break;
        }
        case C_TIMEOUT:
            if (!parse_u32(v, &c.timeout_ms) || c.timeout_ms == 0) {
                return wk_cli_usage_error("cache", "--timeout needs a positive number");
            }
            break;
        default: return wk_cli_usage_error("cache", "unexpected option");
        }
    }
    /* the operands: OPERATION [ID [JSON]] */
    argv += args.first;
    argc = args.nops;
    int i = 0;
    if (i >= argc) {
        return wk_cli_usage_error("cache", "missing operation (get, put, del, stats or run)");
    }
    if (c.entity[0] == '\0' || strchr(c.entity, ':') != NULL) {
        return wk_cli_usage_error("cache", "--entity must be non-empty without ':'");
    }
    const char *op = argv[i++];
    int nargs = argc - i;
    bool single = strcmp(op, "run") != 0;
    if (strcmp(op, "get") == 0 || strcmp(op, "del") == 0) {
        if (nargs != 1) {
            return wk_cli_usage_error("cache", "%s takes one ID", op);
        }
    } else if (strcmp(op, "put") == 0) {
        if (nargs != 1 && nargs != 2) {
            return wk_cli_usage_error("cache", "put takes an ID and optionally the JSON");
        }
    } else if (strcmp(op, "stats") == 0 || strcmp(op, "keys") == 0) {
        if (nargs != 0) {
            return wk_cli_usage_error("cache", "%s takes no argument", op);
        }
    } else if (strcmp(op, "ttl") == 0) {
        if (nargs != 1) {
            return wk_cli_usage_error("cache", "ttl takes one ID");
        }
    } else if (strcmp(op, "run") == 0) {
        if (nargs > 1) {
            return wk_cli_usage_error("cache", "run takes at most one script file");
        }
    } else {
        return wk_cli_usage_error("cache", "unknown operation '%s'", op);
    }
    if (c.cluster != NULL && c.sentinels != NULL) {
        return wk_cli_usage_error("cache", "--redis-cluster and --redis-sentinel exclude each "
                                           "other");
    }
    if (c.sentinels != NULL && c.sentinel_master == NULL) {
        return wk_cli_usage_error("cache", "--redis-sentinel needs --sentinel-master NAME");
    }
    bool tls_asked = c.tls || (c.redis != NULL && strstr(c.redis, "rediss://") != NULL);
    if (!tls_asked && (c.cacert != NULL || c.cacertdir != NULL || c.cert != NULL ||
                       c.key != NULL || c.sni != NULL || c.insecure)) {
        return wk_cli_usage_error("cache", "--cacert, --cacertdir, --cert, --key, --sni and "
                                           "--insecure need --tls or a rediss:// URL");
    }
    if (single && c.redis == NULL) {
        return wk_cli_usage_error("cache",
                                  "the memory tier lives for one invocation only: give "
                                  "--redis URL, or use 'run' with a script of operations");
    }
    /* A document from standard input is read (within --max-bytes) before Redis is
     * contacted, so an oversized or unreadable input fails alone. */
    uint8_t *stdin_doc = NULL;
    size_t stdin_len = 0;
    if (strcmp(op, "put") == 0 && nargs == 1 &&
        wk_cli_read_max(NULL, c.max_bytes, &stdin_doc, &stdin_len) != 0) {
        return WK_EXIT_FAIL;
    }
    c.script = !single;
    int rc = open_cache(&c);
    if (rc != WK_EXIT_OK) {
        free(stdin_doc);
        close_cache(&c);
        return rc;
    }
    if (strcmp(op, "get") == 0) {
        rc = op_get(&c, argv[i]);
    } else if (strcmp(op, "del") == 0) {
        rc = op_del(&c, argv[i]);
    } else if (strcmp(op, "stats") == 0) {
        rc = op_stats(&c);
#ifdef WK_CLI_HAVE_REDIS
    } else if (strcmp(op, "keys") == 0) {
        rc = op_keys(&c);
    } else if (strcmp(op, "ttl") == 0) {
        rc = op_ttl(&c, argv[i]);
#endif
    } else if (strcmp(op, "put") == 0) {
        if (nargs == 2) {
            rc = op_put(&c, argv[i], argv[i + 1], strlen(argv[i + 1]));
        } else {
            rc = op_put(&c, argv[i], (char *)stdin_doc, stdin_len);
        }
    } else {
        rc = run_script(&c, nargs == 1 ? argv[i] : NULL);
    }
    free(stdin_doc);
    close_cache(&c);
    return rc;
}

const wk_cli_command wk_cli_cmd_cache = {
    "cache", "entity cache get/put/del/stats (memory tier or Redis), values as JSON", run};

