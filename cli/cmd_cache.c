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
#include <stdlib.h>
#include <string.h>

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
    "       wirekit cache [options] run [SCRIPT]    (operations from SCRIPT or standard input)\n"
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
    "In a script, get prints the JSON value or 'not found', put and del print 'ok', stats\n"
    "prints the counters as one JSON object; blank lines and '#' comments are skipped.\n"
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
    "  --timeout MS     Redis connect timeout, and the total time one Redis command may\n"
    "                   take, however slowly the server answers (default 1000)\n"
    "  --channel NAME   invalidation channel (default wirekit:invalidate)\n\n"
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
    return wk_cli_fail("script line %zu: expected 'get ID', 'put ID JSON', 'del ID' or 'stats'",
                       lineno);
}

static int run_script(cache_cli *c, const char *path)
{
    uint8_t *data = NULL;
    size_t len = 0;
    if (wk_cli_read_all(path, &data, &len) != 0) {
        return WK_EXIT_FAIL;
    }
    c->script = true;
    int rc = WK_EXIT_OK;
    size_t lineno = 0;
    char *p = (char *)data;
    char *end = p + len;
    while (p < end && rc == WK_EXIT_OK) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
        char *line = malloc(n + 1);
        if (line == NULL) {
            rc = wk_cli_fail("out of memory");
            break;
        }
        memcpy(line, p, n);
        line[n] = '\0';
        lineno++;
        if (memchr(line, '\0', n) != NULL) {
            rc = wk_cli_fail("script line %zu: NUL byte", lineno);
        } else {
            rc = run_line(c, line, lineno);
        }
        free(line);
        fflush(stdout);
        p += n + (nl != NULL ? 1 : 0);
    }
    free(data);
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
        o.no_subscribe = true; /* a one-shot command has nothing to keep fresh (it still
                                  publishes its puts and deletes) */
        o.max_reply_bytes = c->max_bytes;
        o.pool = 1;
        if (wk_redis_store_new(&o, &c->store, &err) != WK_OK) {
            return wk_cli_fail("%s", wk_cli_words(err.msg, words, sizeof words));
        }
        if (wk_redis_store_ping(c->store, &err) != WK_OK) {
            char shown[512];
            redact_url(spec != NULL ? spec : c->redis, shown, sizeof shown);
            return wk_cli_fail("cannot reach Redis at %s: %s", shown,
                               wk_cli_words(err.msg, words, sizeof words));
        }
        cfg.store = wk_redis_store_iface(c->store);
#else
        return wk_cli_fail("this wirekit was built without Redis support (hiredis)");
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
    C_CHANNEL, C_FORMAT, C_VERSION, C_TTL, C_MAX_BYTES, C_TIMEOUT
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

