/*
 * Serving entities in the negotiated type (wirekit/serve.h): a cache get answered as an HTTP
 * status, a body and a Content-Type, and a request body decoded by its Content-Type. Built on
 * the public calls of the media-type module (negotiation, parsing, rendering), the format
 * table (which format a media type names), the serializers and the cache, so it adds no path
 * of its own through any of them.
 */
#include <pthread.h>
#include <string.h>

#include "wirekit/format.h"
#include "wirekit/mediatype.h"
#include "wirekit/serve.h"

/* The offers in the server's order of preference; index 0 is JSON, the rest MessagePack. */
static const char *const offer_text[] = {"application/json", "application/vnd.msgpack",
                                         "application/msgpack", "application/x-msgpack"};
#define NOFFERS (sizeof offer_text / sizeof offer_text[0])

/* Parsed and rendered once per process: a wk_media_type is a plain value that points at the
 * literal (or the well-known table), so the parsed offers are read by every thread unlocked. */
static wk_media_type offers[NOFFERS];
static char rendered[NOFFERS][32];
static pthread_once_t offers_once = PTHREAD_ONCE_INIT;

static void offers_init(void)
{
    for (size_t i = 0; i < NOFFERS; i++) {
        wk_mt_parse(offer_text[i], strlen(offer_text[i]), 0, &offers[i], NULL);
        wk_buf b;
        wk_buf_init(&b, NULL, sizeof rendered[i] - 1);
        if (wk_mt_serialize(&offers[i], WK_MT_STYLE_SPACE, &b, NULL) == WK_OK) {
            memcpy(rendered[i], b.data, b.len); /* the rest of the row is already NUL */
        }
        wk_buf_free(&b);
    }
}

/* Fills the failure fields of `r` for `status`, with `code` and `msg` as its error. */
static wk_status refuse(wk_serve_reply *r, unsigned status, wk_status code, const char *msg)
{
    r->status = status;
    r->body = "";
    r->len = 0;
    r->content_type = NULL;
    if (msg != NULL) {
        wk_error_set(&r->err, code, r->err.offset, msg);
    }
    r->err.code = code;
    return code;
}

/* Starts a reply: `*out` zeroed, then the format negotiated among the offers (its index in
 * *k). Anything but WK_OK has been answered (406, 400). */
static wk_status negotiate(const char *accept, size_t len, wk_serve_reply *out, size_t *k)
{
    memset(out, 0, sizeof *out);
    wk_buf_init(&out->buf, NULL, 0);
    pthread_once(&offers_once, offers_init);
    wk_status st = wk_mt_negotiate_header(accept, len, 0, offers, NOFFERS, k, &out->err);
    if (st == WK_ERR_NOT_FOUND) {
        return refuse(out, 406, st, "serve: neither JSON nor MessagePack is acceptable");
    }
    if (st != WK_OK) {
        return refuse(out, 400, st, NULL); /* the Accept parser's message and offset */
    }
    return WK_OK;
}

/* Finishes a reply from the cache's answer `st` (out->entry and out->err set by the get):
 * 404 or 503 for a failure, else the body in format `k`, the cache's own bytes when it is
 * the cache's serializer. Shared by the blocking and the asynchronous get. */
static wk_status build(wk_cache *c, const wk_schema *s, size_t k, wk_status st,
                       wk_serve_reply *out)
{
    if (st != WK_OK) {
        return refuse(out, st == WK_ERR_NOT_FOUND ? 404 : 503, st, NULL);
    }
    const wk_serializer *want = k == 0 ? wk_serializer_json() : wk_serializer_msgpack();
    if (want == wk_cache_serializer(c)) { /* the cache's own bytes: no copy, no encode */
        out->body = wk_cache_entry_bytes(out->entry, &out->len);
    } else {
        st = want->encode(s, wk_cache_entry_object(out->entry), &out->buf, &out->err);
        if (st != WK_OK) {
            return refuse(out, 500, st, NULL);
        }
        out->body = out->buf.data;
        out->len = out->buf.len;
    }
    out->status = 200;
    out->content_type = rendered[k];
    return WK_OK;
}

WK_API wk_status wk_serve_get(wk_cache *c, const wk_schema *s, const char *id, size_t id_len,
                              wk_cache_loader loader, void *loader_ctx, const char *accept,
                              size_t len, wk_serve_reply *out)
{
    size_t k;
    wk_status st = negotiate(accept, len, out, &k);
    if (st != WK_OK) {
        return st;
    }
    st = wk_cache_get(c, s, id, id_len, loader, loader_ctx, &out->entry, &out->err);
    return build(c, s, k, st, out);
}

/* The race of wk_serve_get_async's answer with its deferral, in out->phase: the answer may
 * come on any thread, before the cache call returns, while the caller is parking the request
 * (`defer`), or after; whoever moves the phase last hands the answer on. */
enum {
    ASKING,         /* the cache call is running, nothing decided */
    ANSWERED_NOW,   /* the answer came first: returned to the caller, no callback */
    DEFERRING,      /* the caller's `defer` is running */
    ANSWERED_EARLY, /* the answer came during `defer`: the calling thread calls `done` */
    DEFERRED,       /* parked: the answer calls `done` where it comes */
};

/* Moves *phase from `from` to `to`; false (and nothing moved) when it is not at `from`. */
static bool move_phase(int *phase, int from, int to)
{
    return __atomic_compare_exchange_n(phase, &from, to, false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
}

/* The cache's answer to wk_serve_get_async: the reply built, then handed on by the phase. */
static void on_entry(void *ctx, wk_status st, wk_cache_entry *e, const wk_error *err)
{
    wk_serve_reply *out = ctx;
    out->entry = e;
    if (st != WK_OK && err != NULL) {
        out->err = *err;
    }
    build(out->cache, out->schema, out->offer, st, out);
    if (!move_phase(&out->phase, ASKING, ANSWERED_NOW) &&
        !move_phase(&out->phase, DEFERRING, ANSWERED_EARLY)) {
        out->done(out->done_ctx, out); /* DEFERRED */
    }
}

WK_API wk_status wk_serve_get_async(wk_cache *c, const wk_schema *s, const char *id,
                                    size_t id_len, wk_cache_loader loader, void *loader_ctx,
                                    const char *accept, size_t len, wk_serve_reply *out,
                                    wk_serve_defer_fn defer, wk_serve_done_fn done, void *ctx)
{
    size_t k;
    wk_status st = negotiate(accept, len, out, &k);
    if (st != WK_OK) {
        return st;
    }
    out->cache = c;
    out->schema = s;
    out->offer = k;
    out->done = done;
    out->done_ctx = ctx;
    out->phase = ASKING;
    (void)wk_cache_get_async(c, s, id, id_len, loader, loader_ctx, on_entry, out);
    if (!move_phase(&out->phase, ASKING, DEFERRING)) {
        return out->status == 200 ? WK_OK : out->err.code; /* ANSWERED_NOW */
    }
    defer(ctx);
    if (!move_phase(&out->phase, DEFERRING, DEFERRED)) {
        done(ctx, out); /* ANSWERED_EARLY */
    }
    return WK_ERR_AGAIN;
}

WK_API void wk_serve_reply_free(wk_serve_reply *r)
{
    if (r == NULL) {
        return;
    }
    wk_cache_entry_unref(r->entry);
    wk_buf_free(&r->buf);
    r->entry = NULL;
}

WK_API wk_status wk_serve_decode(const wk_schema *s, const char *content_type, size_t ct_len,
                                 const void *body, size_t len, void *obj, wk_arena *arena,
                                 unsigned *status, wk_schema_error *err)
{
    wk_media_type mt;
    const wk_format *f = NULL;
    if (content_type != NULL && wk_mt_parse(content_type, ct_len, 0, &mt, NULL) == WK_OK) {
        wk_slice e = wk_mt_essence(&mt);
        f = wk_format_find_media_type(e.ptr, e.len);
    }
    const wk_serializer *ser = f != NULL ? wk_serializer_find(f->name) : NULL;
    if (ser == NULL) {
        *status = 415;
        if (err != NULL) {
            err->path[0] = '\0';
            wk_error_set(&err->base, WK_ERR_UNSUPPORTED, 0,
                         "serve: the body is neither JSON nor MessagePack (Content-Type)");
        }
        return WK_ERR_UNSUPPORTED;
    }
    wk_status st = ser->decode(s, body, len, obj, arena, NULL, err);
    *status = st == WK_OK ? 0 : 400;
    return st;
}
