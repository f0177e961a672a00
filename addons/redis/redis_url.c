/*
 * The Redis store's options: wk_redis_opts and its URLs turned into a wk__rconfig, checked and
 * with every default filled in, before the store opens anything. A leaf of the add-on: no
 * I/O, no threads, nothing here calls another file of it; redis_store.c calls it once, from
 * wk_redis_store_new(), and every layer above then reads the config it made (the pool its
 * timeouts and credentials, the topology its seeds, the feed its channel).
 *
 * Accepted: redis://[[user]:password@]host[:port][/db], rediss:// (the same over TLS),
 * unix://[[user]:password@]/path[?db=N] and a bare host[:port], with %XX escapes in the user and password and [v6addr] in brackets;
 * cluster seeds and sentinels in the same forms. The trade-off is strictness over leniency:
 * anything else (another scheme, a stray character, a NUL escape, a name too long for its
 * field) is refused with WK_ERR_ARG and a message naming the part, rather than guessed at,
 * because a store that silently talks to the wrong server or database is worse than one that
 * does not start. Explicit options (username, password) override what a URL carried.
 */
#include <string.h>

#include "redis/redis_internal.h"

/* Copies `n` bytes of a URL component, decoding %XX; false when it does not fit or a %
 * escape is malformed. */
static bool url_component(char *dst, size_t cap, const char *src, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)src[i];
        if (ch == '%') {
            int v = 0;
            for (int k = 1; k <= 2; k++) {
                char h = i + (size_t)k < n ? src[i + (size_t)k] : '\0';
                int d = h >= '0' && h <= '9'   ? h - '0'
                        : h >= 'a' && h <= 'f' ? h - 'a' + 10
                        : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                               : -1;
                if (d < 0) {
                    return false;
                }
                v = v * 16 + d;
            }
            if (v == 0) {
                return false;
            }
            ch = (unsigned char)v;
            i += 2;
        }
        if (o + 1 >= cap) {
            return false;
        }
        dst[o++] = (char)ch;
    }
    dst[o] = '\0';
    return true;
}

/* A database number: 1 to 5 digits, the whole of [p, end). */
static bool parse_db(const char *p, const char *end, unsigned *db)
{
    unsigned v = 0;
    if (p == end || end - p > 5) {
        return false;
    }
    for (; p < end; p++) {
        if (*p < '0' || *p > '9') {
            return false;
        }
        v = v * 10 + (unsigned)(*p - '0');
    }
    *db = v;
    return true;
}

/* [[user]:password@] at the start of the authority [p, auth_end); returns where the host
 * starts. */
static const char *parse_userinfo(wk__rconfig *cfg, const char *p, const char *auth_end,
                                  wk_status *st, wk_error *err)
{
    const char *at = NULL;
    for (const char *q = p; q < auth_end; q++) {
        if (*q == '@') {
            at = q;
        }
    }
    if (at == NULL) {
        return p;
    }
    const char *colon = memchr(p, ':', (size_t)(at - p));
    if (colon == NULL) {
        /* "redis://secret@host": the whole userinfo is a password (as redis-cli reads it). */
        colon = p - 1;
    } else if (!url_component(cfg->user, sizeof cfg->user, p, (size_t)(colon - p))) {
        *st = wk_error_set(err, WK_ERR_ARG, 0,
                           "redis: bad user name in URL (too long or a bad % escape)");
        return NULL;
    }
    if (!url_component(cfg->pass, sizeof cfg->pass, colon + 1, (size_t)(at - colon - 1))) {
        *st = wk_error_set(err, WK_ERR_ARG, 0,
                           "redis: bad password in URL (too long or a bad % escape)");
        return NULL;
    }
    cfg->has_pass = true;
    return at + 1;
}

/* redis://[[user]:password@]host[:port][/db], unix://[[user]:password@]/path[?db=N] or
 * host[:port]; [v6addr] in brackets. */
static wk_status parse_url(wk__rconfig *cfg, const char *url, wk_error *err)
{
    const char *p = url;
    wk_status st = WK_OK;
    if (strncmp(p, "unix://", 7) == 0) {
        p += 7;
        const char *slash = strchr(p, '/');
        if (slash == NULL) {
            return wk_error_set(err, WK_ERR_ARG, 0,
                                "redis: unix:// needs an absolute socket path");
        }
        p = parse_userinfo(cfg, p, slash, &st, err);
        if (p == NULL) {
            return st;
        }
        if (p != slash) {
            return wk_error_set(err, WK_ERR_ARG, 0,
                                "redis: unix:// needs an absolute socket path");
        }
        const char *q = strchr(p, '?');
        size_t pl = q != NULL ? (size_t)(q - p) : strlen(p);
        if (!url_component(cfg->ep.host, sizeof cfg->ep.host, p, pl) || pl >= 108) {
            return wk_error_set(err, WK_ERR_ARG, 0, "redis: unix socket path too long");
        }
        cfg->ep.is_unix = true;
        if (q != NULL) {
            if (strncmp(q, "?db=", 4) != 0 || !parse_db(q + 4, q + strlen(q), &cfg->db)) {
                return wk_error_set(err, WK_ERR_ARG, 0,
                                    "redis: unix:// takes only ?db=N after the path");
            }
        }
        return WK_OK;
    }
    if (strncmp(p, "rediss://", 9) == 0) {
        cfg->tls = true; /* the same URL over TLS */
        p += 9;
    } else if (strncmp(p, "redis://", 8) == 0) {
        p += 8;
    } else if (strstr(p, "://") != NULL) {
        return wk_error_set(err, WK_ERR_ARG, 0,
                            "redis: URL scheme must be redis://, rediss:// or unix://");
    }
    p = parse_userinfo(cfg, p, p + strcspn(p, "/?#"), &st, err);
    if (p == NULL) {
        return st;
    }
    const char *host = p, *host_end;
    if (*p == '[') {
        host = p + 1;
        host_end = strchr(host, ']');
        if (host_end == NULL) {
            return wk_error_set(err, WK_ERR_ARG, 0, "redis: unclosed [ in URL");
        }
        p = host_end + 1;
    } else {
        host_end = p + strcspn(p, ":/");
        p = host_end;
    }
    size_t hl = (size_t)(host_end - host);
    if (hl == 0) {
        host = "127.0.0.1";
        hl = 9;
    }
    if (hl >= sizeof cfg->ep.host) {
        return wk_error_set(err, WK_ERR_ARG, 0, "redis: host name too long");
    }
    memcpy(cfg->ep.host, host, hl);
    cfg->ep.host[hl] = '\0';
    cfg->ep.port = 6379;
    if (*p == ':') {
        p++;
        long port = 0;
        int digits = 0;
        while (*p >= '0' && *p <= '9' && digits < 6) {
            port = port * 10 + (*p++ - '0');
            digits++;
        }
        if (digits == 0 || port < 1 || port > 65535) {
            return wk_error_set(err, WK_ERR_ARG, 0, "redis: bad port in URL");
        }
        cfg->ep.port = (int)port;
    }
    if (*p == '/') {
        p++;
        if (*p != '\0' && !parse_db(p, p + strlen(p), &cfg->db)) {
            return wk_error_set(err, WK_ERR_ARG, 0, "redis: bad database number in URL");
        }
        p += strlen(p);
    }
    if (*p != '\0') {
        return wk_error_set(err, WK_ERR_ARG, 0, "redis: unexpected characters in URL");
    }
    return WK_OK;
}

/* Cluster seeds or sentinels: each "host:port" or a URL (whose credentials then apply). */
static wk_status parse_seeds(wk__rconfig *cfg, const wk_allocator *alloc,
                             const char *const *list, size_t n, wk_error *err)
{
    if (n == 0 || n > WK__MAX_SRV) {
        return wk_error_set(err, WK_ERR_ARG, 0, "redis: give 1 to 64 seed nodes or sentinels");
    }
    cfg->seeds = wk_alloc(alloc, n * sizeof *cfg->seeds);
    if (cfg->seeds == NULL) {
        return wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory");
    }
    memset(cfg->seeds, 0, n * sizeof *cfg->seeds);
    cfg->seeds_cap = n;
    wk__rendpoint keep = cfg->ep;
    unsigned db = cfg->db;
    for (size_t i = 0; i < n; i++) {
        if (list[i] == NULL) {
            return wk_error_set(err, WK_ERR_ARG, 0, "redis: NULL in the seed list");
        }
        wk_status st = parse_url(cfg, list[i], err);
        if (st != WK_OK) {
            return st;
        }
        if (cfg->ep.is_unix && cfg->mode == WK__MODE_CLUSTER) {
            return wk_error_set(err, WK_ERR_ARG, 0,
                                "redis: cluster seed nodes must be host:port");
        }
        cfg->seeds[i] = cfg->ep;
        cfg->nseeds++;
    }
    cfg->ep = keep;
    if (cfg->db == 0) {
        cfg->db = db;
    }
    return WK_OK;
}

/* Copies the string `src` into dst[0..cap) with its NUL; false (dst untouched) when it does
 * not fit. */
static bool copy_option(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n >= cap) {
        return false;
    }
    memcpy(dst, src, n + 1);
    return true;
}

wk_status wk__redis_config_parse(wk__rconfig *cfg, const wk_redis_opts *opts,
                                 const wk_allocator *alloc, wk_error *err)
{
    cfg->mode = opts->ncluster_nodes > 0 ? WK__MODE_CLUSTER
                : opts->nsentinels > 0   ? WK__MODE_SENTINEL
                                         : WK__MODE_SINGLE;
    wk_status st = WK_OK;
    if (opts->url != NULL || cfg->mode == WK__MODE_SINGLE) {
        st = parse_url(cfg, opts->url != NULL ? opts->url : "127.0.0.1:6379", err);
    }
    if (st == WK_OK && cfg->mode == WK__MODE_CLUSTER) {
        st = parse_seeds(cfg, alloc, opts->cluster_nodes, opts->ncluster_nodes, err);
        if (st == WK_OK && cfg->db != 0) {
            st = wk_error_set(err, WK_ERR_ARG, 0, "redis: a cluster has only database 0");
        }
    } else if (st == WK_OK && cfg->mode == WK__MODE_SENTINEL) {
        st = parse_seeds(cfg, alloc, opts->sentinels, opts->nsentinels, err);
        size_t mn = opts->sentinel_master != NULL ? strlen(opts->sentinel_master) : 0;
        if (st == WK_OK && (mn == 0 || mn >= sizeof cfg->master_name)) {
            st = wk_error_set(err, WK_ERR_ARG, 0,
                              "redis: sentinel_master (the master's name) is required");
        } else if (st == WK_OK) {
            memcpy(cfg->master_name, opts->sentinel_master, mn + 1);
        }
    }
    const char *channel = opts->channel != NULL ? opts->channel : "wirekit:invalidate";
    cfg->channel_len = strlen(channel);
    if (st == WK_OK && (cfg->channel_len == 0 || cfg->channel_len >= sizeof cfg->channel)) {
        st = wk_error_set(err, WK_ERR_ARG, 0, "redis: channel name must be 1 to 127 bytes");
    }
    if (st == WK_OK && opts->username != NULL &&
        !copy_option(cfg->user, sizeof cfg->user, opts->username)) {
        st = wk_error_set(err, WK_ERR_ARG, 0, "redis: user name longer than 127 bytes");
    }
    if (st == WK_OK && opts->password != NULL) {
        if (!copy_option(cfg->pass, sizeof cfg->pass, opts->password)) {
            st = wk_error_set(err, WK_ERR_ARG, 0, "redis: password longer than 255 bytes");
        } else {
            cfg->has_pass = true;
        }
    }
    /* no whitespace: CLIENT SETNAME refuses it, and every connect would then fail */
    if (st == WK_OK && opts->client_name != NULL &&
        (strpbrk(opts->client_name, " \n\r\t") != NULL ||
         !copy_option(cfg->name, sizeof cfg->name, opts->client_name))) {
        st = wk_error_set(err, WK_ERR_ARG, 0,
                          "redis: client name must be under 128 bytes, without spaces");
    }
    if (st != WK_OK) {
        return st;
    }
    memcpy(cfg->channel, channel, cfg->channel_len + 1);
    cfg->connect_ms = opts->connect_timeout_ms != 0 ? opts->connect_timeout_ms : 250;
    cfg->command_ms = opts->command_timeout_ms != 0 ? opts->command_timeout_ms : 250;
    cfg->retry_ms = opts->retry_ms != 0 ? opts->retry_ms : 1000;
    cfg->heartbeat_ms = opts->heartbeat_ms != 0 ? opts->heartbeat_ms : 1000;
    cfg->lim.max_bytes =
        opts->max_reply_bytes != 0 ? opts->max_reply_bytes : WK_REDIS_MAX_REPLY_DEFAULT;
    cfg->lim.max_elems =
        opts->max_reply_elements != 0 ? opts->max_reply_elements : WK_REDIS_MAX_ELEMENTS_DEFAULT;
    cfg->pool_max = opts->pool != 0 ? opts->pool : 4;
    cfg->wait_replicas = opts->wait_replicas;
    cfg->window = opts->pipeline_window != 0 ? opts->pipeline_window : 256;
    cfg->subscribe = !opts->no_subscribe;
    cfg->tls = cfg->tls || opts->tls;
    if (opts->tls_server_name != NULL &&
        (opts->tls_server_name[0] == '\0' ||
         !copy_option(cfg->tls_sni, sizeof cfg->tls_sni, opts->tls_server_name))) {
        return wk_error_set(err, WK_ERR_ARG, 0, "redis: tls_server_name must be 1 to 255 bytes");
    }
    cfg->tracking = !opts->no_tracking;
    if (opts->ntracking_prefixes > WK__TRACK_PREFIXES_MAX ||
        (opts->ntracking_prefixes > 0 && opts->tracking_prefixes == NULL)) {
        return wk_error_set(err, WK_ERR_ARG, 0, "redis: give at most 8 tracking prefixes");
    }
    for (size_t i = 0; i < opts->ntracking_prefixes; i++) {
        const char *tp = opts->tracking_prefixes[i];
        if (tp == NULL || tp[0] == '\0' ||
            !copy_option(cfg->track_prefix[i], sizeof cfg->track_prefix[i], tp)) {
            return wk_error_set(err, WK_ERR_ARG, 0,
                                "redis: a tracking prefix must be 1 to 127 bytes");
        }
        cfg->ntrack++;
    }
    return WK_OK;
}

void wk__redis_config_free(wk__rconfig *cfg, const wk_allocator *alloc)
{
    if (cfg->seeds != NULL) {
        wk_free(alloc, cfg->seeds, cfg->seeds_cap * sizeof *cfg->seeds);
        cfg->seeds = NULL;
    }
    explicit_bzero(cfg->pass, sizeof cfg->pass);
}
