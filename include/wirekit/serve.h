/*
 * Serving entities over HTTP (or any protocol that has content types), without the HTTP
 * server: what a handler answers for `GET /things/ID` and how it reads the body of a `PUT`.
 * The HTTP library stays the caller's; these calls take header values as bytes and give back
 * a status, a body and a Content-Type for the caller to send.
 *
 * Answers are JSON or MessagePack, chosen by the request's Accept (RFC 9110 negotiation, as
 * wk_mt_negotiate_header does it) among these offers, in the server's order of preference:
 * `application/json`, `application/vnd.msgpack` (the IANA registration, what wirekit sends
 * by default), `application/msgpack`, `application/x-msgpack`; a client that asks for one of
 * the unregistered MessagePack spellings gets it under that name. With no Accept header,
 * JSON. The body in the cache's own serializer is the entry's bytes, sent without a copy or
 * an encode (a MessagePack GET from a MessagePack cache encodes nothing); the other format is
 * encoded from the cached object.
 *
 * wk_serve_get blocks its thread on the cache's misses; wk_serve_get_async answers through a
 * callback instead, so an event-driven server keeps serving while the shared tier answers.
 *
 * Thread-safe: every call may run on any thread at once.
 */
#ifndef WIREKIT_SERVE_H
#define WIREKIT_SERVE_H

#include "cache.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What to answer a request for one entity (wk_serve_get). `status`, `body`, `len`,
 *  `content_type` and `err` are the contract; `entry` and `buf` are private (they hold the
 *  body) and are released by wk_serve_reply_free; the fields after them are private too (the
 *  request of wk_serve_get_async in flight). */
typedef struct wk_serve_reply {
    unsigned status;          /**< HTTP status: 200, 400 (malformed Accept), 404 (no such
                                   entity), 406 (neither JSON nor MessagePack acceptable),
                                   500 (the object cannot be encoded), 503 (the cache's
                                   loader failed, or is missing and the shared tier failed) */
    const void *body;         /**< the body: `len` bytes (0 for any status but 200), valid
                                   until wk_serve_reply_free */
    size_t len;               /**< bytes at `body` */
    const char *content_type; /**< the Content-Type for a 200, NUL-terminated and static
                                   (rendered by wirekit); NULL for any other status */
    wk_error err;             /**< why, for any status but 200 (code WK_OK for a 200) */
    wk_cache_entry *entry;    /**< private: the reference the body may point into */
    wk_buf buf;               /**< private: the body when it was encoded */
    wk_cache *cache;          /**< private (wk_serve_get_async): the cache asked */
    const wk_schema *schema;  /**< private: the entity's schema */
    size_t offer;             /**< private: the negotiated format */
    void (*done)(void *ctx, struct wk_serve_reply *r); /**< private: the caller's callback */
    void *done_ctx;           /**< private: its context */
    int phase;                /**< private: the answer's race with the deferral (atomic) */
} wk_serve_reply;

/** Receives the answer of wk_serve_get_async: `r` is the caller's reply, filled. */
typedef void (*wk_serve_done_fn)(void *ctx, wk_serve_reply *r);

/** Told by wk_serve_get_async, on the calling thread, that the answer will come later through
 *  `done`: where an event-driven server parks the request (libmicrohttpd's
 *  MHD_suspend_connection), so that `done` may wake it (MHD_resume_connection). */
typedef void (*wk_serve_defer_fn)(void *ctx);

/**
 * Answers a request for entity `id` of schema `s` whose Accept header is `accept[0..len)`
 * (`accept` NULL: the request had none): negotiates the format first (a 406 or 400 costs no
 * cache call), then wk_cache_get(c, s, id, id_len, loader, loader_ctx, ...), then the body in
 * the chosen format. Fills every contract field of `*out`, which the caller must release with
 * wk_serve_reply_free whatever the status. Returns WK_OK for a 200, else the status behind
 * the answer (out->err.code): WK_ERR_NOT_FOUND for a 404 and a 406, the Accept parser's for
 * a 400, the cache's or the encoder's otherwise.
 */
WK_API wk_status wk_serve_get(wk_cache *c, const wk_schema *s, const char *id, size_t id_len,
                              wk_cache_loader loader, void *loader_ctx, const char *accept,
                              size_t len, wk_serve_reply *out);

/**
 * wk_serve_get without blocking on the cache: negotiates first, then wk_cache_get_async.
 * When the answer is ready before this returns (a 400 or 406, a local hit, an immediate
 * failure), `*out` is filled exactly as wk_serve_get fills it and the return value is
 * wk_serve_get's; neither callback is called. Otherwise this calls `defer(ctx)` on the
 * calling thread, returns WK_ERR_AGAIN, and `done(ctx, out)` runs exactly once, never before
 * `defer` has returned: on the store's or a cache worker's thread (see wk_cache_get_async;
 * `done` must not block long there), or on the calling thread right after `defer` when the
 * answer came meanwhile. From a WK_ERR_AGAIN on, `out` is `done`'s: it and whatever `s`,
 * `loader_ctx` and `ctx` point to must stay valid until `done` ran; the caller releases
 * `out` with wk_serve_reply_free (inside `done`, or after it). A server needs no lock of its
 * own to keep its wake-up after its parking.
 */
WK_API wk_status wk_serve_get_async(wk_cache *c, const wk_schema *s, const char *id,
                                    size_t id_len, wk_cache_loader loader, void *loader_ctx,
                                    const char *accept, size_t len, wk_serve_reply *out,
                                    wk_serve_defer_fn defer, wk_serve_done_fn done, void *ctx);

/** Releases what `r` holds (its entry reference and encoded body). NULL is a no-op. */
WK_API void wk_serve_reply_free(wk_serve_reply *r);

/**
 * Decodes a request body `body[0..len)` into `obj` (zeroed by the caller, `s->size` bytes;
 * strings in `arena` as wk_schema_decode places them) by its Content-Type
 * `content_type[0..ct_len)` (NULL: the request had none): JSON for application/json and
 * any application/...+json, MessagePack for the three spellings above (wk_format_find_media_type).
 * Sets `*status` to the HTTP status a handler answers when this fails: 415 for a missing,
 * malformed or other Content-Type, 400 for a body that does not decode (0 on success).
 * Returns WK_OK, WK_ERR_UNSUPPORTED (415; err->path empty), or the decoder's status (400,
 * with err's field path and offset).
 */
WK_API wk_status wk_serve_decode(const wk_schema *s, const char *content_type, size_t ct_len,
                                 const void *body, size_t len, void *obj, wk_arena *arena,
                                 unsigned *status, wk_schema_error *err);

#ifdef __cplusplus
}
#endif
#endif
