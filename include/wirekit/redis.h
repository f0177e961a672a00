/*
 * The Redis shared tier of the entity cache (library wirekit-redis: its own RESP client over
 * TCP, unix sockets or TLS with OpenSSL).
 *
 * A store keeps a small pool of connections for commands (GET pipelined for multi-gets,
 * SET with PX and NX, DEL, PUBLISH) and one subscriber connection on a pub/sub channel that
 * carries invalidated keys to every process. Every command has one deadline,
 * `command_timeout_ms` from its start, covering the wait for a pooled connection, sending and
 * reading the whole reply (a server that dribbles a reply byte by byte cannot hold a caller
 * longer); a new connection adds at most `connect_timeout_ms`, host name resolution
 * included (a DNS server that does not answer costs that deadline, not the resolver's
 * retries). Replies are capped
 * (`max_reply_bytes`, `max_reply_elements`): the cap is checked on the length headers, before
 * anything is allocated, and a reply over it fails with WK_ERR_LIMIT. After a failure the
 * store fails fast (WK_ERR_IO, no network round trip) for `retry_ms`, then tries again, so a
 * cache in front of a dead or stalled Redis falls back to its loader at once and recovers by
 * itself.
 *
 * The store's `fetch_async` (wk_cache_get_async's shared tier) runs on one I/O thread per
 * store, started by the first asynchronous get, with its own connection to the server (or
 * Sentinel's master; never the feed's): every GET queued since the thread last woke goes out
 * in one write, and the replies are answered in order, each request under
 * `command_timeout_ms` from when it was queued. A request not answered in time fails with
 * WK_ERR_IO together with every other one in flight on the connection, which is closed (the
 * next GET opens another) and the server failed fast for `retry_ms` as after any failure; a
 * broken connection fails its requests the same way, each answered once. A Cluster's store
 * has no `fetch_async` (NULL): the cache runs those gets on its worker threads through the
 * synchronous path, which routes by slot and follows MOVED and ASK. wk_redis_store_free
 * answers every asynchronous get still pending with WK_ERR_IO before it returns.
 *
 * Writes (a cache's put and invalidate) delete the key first, then write the value or
 * tombstone, then PUBLISH the key on the channel, whether or not this store subscribes; so a
 * write Redis refuses (maxmemory with noeviction) still removes the old value, and the caller
 * gets WK_ERR_IO saying which step was refused. The subscriber pings Redis every
 * `heartbeat_ms`; each pong proves every message published before its ping was delivered, and
 * caches serve local copies only while that proof is younger than `heartbeat_ms +
 * command_timeout_ms` (a process that was paused re-checks before trusting its local tier).
 * When the feed is lost (closed connection, no pong) the caches are told, so they stop
 * trusting their local copies until the subscription is back.
 *
 * Server-assisted invalidation: on a server that has it (Redis 6+), the feed's connection
 * speaks RESP3 and turns on CLIENT TRACKING in broadcast mode (BCAST, for
 * `tracking_prefixes`), so a write by any client (redis-cli DEL, SET, EXPIRE, FLUSHDB, a
 * program in another language) drops every process's local copy, not only wirekit's
 * PUBLISH. In a Cluster the feed holds one such connection per master (a node reports only
 * its own keys) and counts as up only while every one of them is; a change of masters resets
 * it. The feed's connections track with NOLOOP and the store's own writes (a load's fill, a
 * put, an invalidation) go through them, so this process is not told of its own writes: the
 * copy a load or a put leaves stays (a put's PUBLISH still reaches the other caches of the
 * process). Without tracking (no_tracking, or a server that refuses HELLO 3 or CLIENT
 * TRACKING) the feed hears wirekit's PUBLISH alone.
 *
 * TLS: a rediss:// URL or `tls` makes every TCP connection TLS, with the server's certificate
 * checked against the CA given (or the system's) and the host name, unless the caller opts
 * out with tls_insecure_skip_verify. Failures say why (certificate not trusted, host name
 * mismatch, handshake timed out, client certificate required) and show nothing of the
 * certificates or keys.
 */
#ifndef WIREKIT_REDIS_H
#define WIREKIT_REDIS_H

#include "cache.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A Redis store: the shared tier of entity caches (opaque; wk_redis_store_new(),
 * wk_redis_store_free()). */
typedef struct wk_redis_store wk_redis_store;

/** Store settings; zero means the default given after each field. */
typedef struct wk_redis_opts {
    const char *url;             /**< "redis://[[user]:password@]host[:port][/db]",
                                      "rediss://..." (the same over TLS: see `tls`),
                                      "unix:///path/to/socket[?db=N]" or "host[:port]" (user
                                      and password %-encoded): 127.0.0.1:6379 */
    uint32_t connect_timeout_ms; /**< 250 */
    uint32_t command_timeout_ms; /**< 250 */
    uint32_t retry_ms;           /**< fail fast for this long after a failure: 1000 */
    uint32_t heartbeat_ms;       /**< subscriber ping interval: 1000 */
    unsigned pool;               /**< command connections: 4 */
    const char *channel;         /**< invalidation channel: "wirekit:invalidate" */
    bool no_subscribe;           /**< no invalidation feed (the cache then trusts its local
                                      tier); writes still publish */
    size_t max_reply_bytes;      /**< largest reply (a value) accepted:
                                      WK_REDIS_MAX_REPLY_DEFAULT */
    size_t max_reply_elements;   /**< most elements in one reply: WK_REDIS_MAX_ELEMENTS_DEFAULT */
    const wk_allocator *alloc;   /**< the store's own memory: libc when NULL (OpenSSL allocates
                                      its TLS sessions itself) */
    const char *username;        /**< ACL user for AUTH (overrides the URL's): the default user */
    const char *password;        /**< AUTH password (overrides the URL's; keeps it out of
                                      URLs and process lists): none */
    const char *client_name;     /**< CLIENT SETNAME on every connection, no spaces: none */
    const char *const *cluster_nodes; /**< Redis Cluster seed nodes, "host:port" (or URLs,
                                           whose credentials apply): none (no cluster) */
    size_t ncluster_nodes;       /**< entries in cluster_nodes */
    const char *const *sentinels; /**< Sentinels, "host:port", asked without AUTH for the
                                       master named sentinel_master: none */
    size_t nsentinels;           /**< entries in sentinels */
    const char *sentinel_master; /**< the master's name in Sentinel (required with sentinels) */
    unsigned wait_replicas;      /**< after each put or invalidation, WAIT for this many
                                      replicas (half the command timeout); fewer is a
                                      failure, so an acknowledged write survives a failover:
                                      0 (no WAIT) */
    unsigned pipeline_window;    /**< a multi-get keeps at most this many GETs in flight on
                                      each server's connection, sending more as replies are
                                      read (when half the window is answered, in one send once
                                      the replies that arrived are read), so a multi-get
                                      of many keys keeps every master busy without queueing
                                      all its replies in the server at once; a small window
                                      costs more sends per key: 256 */
    bool tls;                    /**< TLS (OpenSSL) on every TCP connection, to the server,
                                      cluster nodes (their TLS ports, as CLUSTER SLOTS names
                                      them to a TLS client) and sentinels alike; a rediss://
                                      URL or seed turns it on too: off. Unix sockets stay
                                      plain */
    const char *tls_ca_file;     /**< PEM file of the CAs a server's certificate must chain
                                      to: the system's store (with tls_ca_dir, both) */
    const char *tls_ca_dir;      /**< directory of CA certificates named by their hash
                                      (openssl rehash): none */
    const char *tls_cert_file;   /**< client certificate (PEM, chain allowed), for servers
                                      that require one (tls-auth-clients): none */
    const char *tls_key_file;    /**< the client certificate's private key (PEM, not
                                      encrypted); read once, at wk_redis_store_new: none */
    const char *tls_server_name; /**< SNI sent, and the name (DNS or IP) each server's
                                      certificate must carry: the host connected to */
    bool tls_insecure_skip_verify; /**< INSECURE: accept any certificate from anyone (no chain
                                        and no host name check), so anyone on the path can read
                                        and change the traffic; for tests only: off */
    bool no_tracking;            /**< no server-assisted invalidation: the feed hears only
                                      wirekit's PUBLISH (what a server without CLIENT TRACKING,
                                      Redis < 6, gets anyway): off, so tracking is used when the
                                      server has it (see wk_redis_store_tracking) */
    const char *const *tracking_prefixes; /**< key prefixes the feed's CLIENT TRACKING BCAST
                                               covers (a cache's "<ns>:"; at most 8, each under
                                               128 bytes): none, so every key the server holds
                                               is covered */
    size_t ntracking_prefixes;   /**< entries in tracking_prefixes */
    void *reserved[4];           /**< zero; room to grow without breaking the ABI */
} wk_redis_opts;

/** Default reply cap: 64 MiB. */
#define WK_REDIS_MAX_REPLY_DEFAULT ((size_t)64 << 20)
/** Default cap on the elements of one reply (arrays, counted recursively): 1,000,000. */
#define WK_REDIS_MAX_ELEMENTS_DEFAULT ((size_t)1000000)

/**
 * Creates a store. Connections are made lazily (the first command, and the subscriber thread
 * started here), so this succeeds even while Redis is down; use wk_redis_store_ping() to
 * check. Every new connection (so every reconnect) sends AUTH, CLIENT SETNAME and SELECT as
 * configured; failures name their cause in err->msg (WRONGPASS, NOAUTH, connection refused,
 * timed out, no such unix socket). Returns WK_OK, WK_ERR_ARG (bad URL or option), WK_ERR_NOMEM
 * or WK_ERR_IO (thread creation).
 * Close with wk_redis_store_free() after every cache using it is destroyed.
 */
WK_API wk_status wk_redis_store_new(const wk_redis_opts *opts, wk_redis_store **out,
                                     wk_error *err);

/** The store as a wk_cache_store for wk_cache_config.store. Valid until the store closes. */
WK_API const wk_cache_store *wk_redis_store_iface(wk_redis_store *s);

/** Sends PING. WK_OK, or WK_ERR_IO with a message (cannot connect, timeout, error reply). */
WK_API wk_status wk_redis_store_ping(wk_redis_store *s, wk_error *err);

/** True while the subscriber holds a live subscription (always false with no_subscribe). */
WK_API bool wk_redis_store_feed_up(wk_redis_store *s);

/** True while the feed is up with CLIENT TRACKING on (every master's connection, in a
 *  cluster): writes by clients other than wirekit reach the caches too. False with
 *  no_tracking or no_subscribe, while the feed is down, and on a server without tracking. */
WK_API bool wk_redis_store_tracking(wk_redis_store *s);

/** Writes to `out` (cap bytes, NUL-terminated, cut to fit) the server the calling thread's
 *  last failed connect or command of `s` was talking to, "host:port" or a unix socket path,
 *  so that a message can name the node or sentinel that failed rather than the address the
 *  caller gave; "" when the last call of this thread did not fail on a server. Returns the
 *  length written. Thread-safe: the record is per thread. */
WK_API size_t wk_redis_store_failed_server(wk_redis_store *s, char *out, size_t cap);

/** Called with each key found by wk_redis_store_scan(); return false to stop. */
typedef bool (*wk_redis_key_fn)(void *ctx, const char *key, size_t len);

/** Calls `fn` with every key that starts with `prefix` (SCAN MATCH on the server, or on every
 *  master of a cluster). In a cluster each key is reported once even when it moves to
 *  another master while the scan runs: the keys reported so far are remembered (their bytes
 *  plus about 24 bytes each, from the store's allocator, until the call returns); a key that
 *  moves may also be missed, as SCAN guarantees only keys present from start to end.
 *  WK_ERR_NOMEM when that memory runs out. */
WK_API wk_status wk_redis_store_scan(wk_redis_store *s, const char *prefix, wk_redis_key_fn fn,
                                     void *ctx, wk_error *err);

/** The remaining lifetime of `key` in milliseconds (PTTL): -1 without expiry, -2 when the key
 *  does not exist. */
WK_API wk_status wk_redis_store_pttl(wk_redis_store *s, const char *key, int64_t *ms,
                                     wk_error *err);

/** Counts the keys that start with `prefix` (SCAN MATCH, not KEYS: Redis is not blocked; every
 *  master of a cluster). */
WK_API wk_status wk_redis_store_count(wk_redis_store *s, const char *prefix, uint64_t *count,
                                      wk_error *err);

/** Stops the subscriber, closes every connection and frees the store. NULL is a no-op. */
WK_API void wk_redis_store_free(wk_redis_store *s);

#ifdef __cplusplus
}
#endif
#endif
