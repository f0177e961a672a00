/*
 * The format table (wirekit/format.h): the rows of JSON and MessagePack, each a set of thin
 * adapters from the format's own calls to the table's `void *` signatures, the lookups by
 * name, and the generic reader, writer and unpacker handles that dispatch through a row.
 * The one thing added to a format here is where a sink's refusal happened in the input: the
 * MessagePack row reads each framed value with its own loop so that it knows each event's
 * offset (the unpacker's own next_events hands the sink's output offset on).
 */
#include <string.h>

#include "wirekit/format.h"
#include "wirekit/utf8.h"

/* ---- JSON ---------------------------------------------------------------------------------- */

static void js_reader_init(void *r, const void *data, size_t len, const wk_read_opts *opts)
{
    wk_json_reader_init(r, data, len, opts, NULL);
}

static void js_reader_source(void *r, wk_source *src)
{
    wk_json_reader_source(r, src);
}

static void js_reader_free(void *r)
{
    wk_json_reader_free(r);
}

static void js_writer_init(void *w, wk_buf *out, const wk_json_write_opts *opts)
{
    wk_json_writer_init(w, out, opts);
}

static void js_writer_sink(void *w, wk_sink *sink)
{
    wk_json_writer_sink(w, sink);
}

static wk_status js_writer_value(void *w, const wk_value *v)
{
    wk_sink sink;
    wk_json_writer_sink(w, &sink);
    return wk_value_encode(v, NULL, &sink, NULL);
}

static wk_status js_writer_flush(void *w)
{
    /* the JSON writer keeps no cursor into the buffer: out->len is always current */
    return ((const wk_json_writer *)w)->err.code;
}

static wk_status js_writer_resume(void *w)
{
    return ((const wk_json_writer *)w)->err.code;
}

static wk_status js_writer_finish(void *w, wk_error *err)
{
    return wk_json_writer_finish(w, err);
}

static void js_unpacker_init(void *u, const wk_read_opts *opts, size_t max)
{
    wk_json_unpacker_init(u, opts, max);
}

static wk_status js_unpacker_feed(void *u, const void *data, size_t len)
{
    return wk_json_unpacker_feed(u, data, len);
}

static void js_unpacker_finish(void *u)
{
    wk_json_unpacker_finish(u);
}

static wk_status js_unpacker_next(void *u, const uint8_t **data, size_t *len, uint64_t *off)
{
    return wk_json_unpacker_next(u, data, len, off);
}

static wk_status js_unpacker_next_events(void *u, const wk_sink *sink, uint64_t *at)
{
    /* the events reader does not say where a refused token was (the unpacker latches the
     * sink's own offset): the place stays unknown */
    *at = WK_FORMAT_NOWHERE;
    return wk_json_unpacker_next_events(u, sink);
}

static wk_status js_unpacker_next_value(void *u, wk_arena *arena, wk_value **out)
{
    return wk_json_unpacker_next_value(u, arena, out);
}

static wk_status js_unpacker_next_value_or_bytes(void *u, wk_arena *arena, size_t tree_max,
                                                 wk_value **out, const uint8_t **data,
                                                 size_t *len, uint64_t *offset)
{
    return wk_json_unpacker_next_value_or_bytes(u, arena, tree_max, out, data, len, offset);
}

static wk_status js_unpacker_error(const void *u, wk_error *err, uint64_t *line, uint64_t *col)
{
    return wk_json_unpacker_error(u, err, line, col);
}

static uint64_t js_unpacker_offset(const void *u)
{
    return wk_json_unpacker_offset(u);
}

static void js_unpacker_free(void *u)
{
    wk_json_unpacker_free(u);
}

/* The buffer reader's options the unpacker does not take, done here for a whole buffer: a
 * byte order mark is skipped, and with trailing content allowed only the first value (as
 * wk_json_validate finds its end) is read. */
static void js_whole_input(const void *data, size_t len, wk_read_opts *opts, size_t *skip,
                           size_t *used)
{
    const uint8_t *p = data;
    *skip = 0;
    *used = len;
    if ((opts->flags & WK_JSON_READ_ALLOW_BOM) && len >= 3 && p[0] == 0xef && p[1] == 0xbb &&
        p[2] == 0xbf) {
        *skip = 3;
        *used = len - 3;
    }
    if (opts->flags & WK_JSON_READ_ALLOW_TRAILING) {
        wk_read_opts v = *opts;
        v.flags &= ~(WK_JSON_READ_ALLOW_BOM | WK_JSON_READ_MULTI);
        size_t consumed = 0;
        if (wk_json_validate(p + *skip, *used, &v, &consumed, NULL) == WK_OK) {
            *used = consumed;
        }
        /* else the unpacker finds the same error in the first value */
        opts->flags &= ~WK_JSON_READ_MULTI;
    }
    opts->flags &= ~(WK_JSON_READ_ALLOW_BOM | WK_JSON_READ_ALLOW_TRAILING);
}

/* ---- MessagePack --------------------------------------------------------------------------- */

static void mp_reader_init(void *r, const void *data, size_t len, const wk_read_opts *opts)
{
    wk_mp_reader_init(r, data, len, opts);
}

static void mp_reader_source(void *r, wk_source *src)
{
    wk_mp_reader_source(r, src);
}

static void mp_reader_free(void *r)
{
    wk_mp_reader_free(r);
}

static void mp_writer_init(void *w, wk_buf *out, const wk_json_write_opts *opts)
{
    (void)opts; /* no layout in a binary format */
    wk_mp_writer_init(w, out);
}

static void mp_writer_sink(void *w, wk_sink *sink)
{
    wk_mp_writer_sink(w, sink);
}

static wk_status mp_writer_value(void *w, const wk_value *v)
{
    wk_mp_writer *mw = w;
    wk_mp_writer_value(mw, v);
    return mw->status;
}

/* The MessagePack writer holds a cursor into the buffer, which the caller may move between
 * values: flush ends the writer there (syncing out->len), resume starts it again at the
 * buffer's new end. */
static wk_status mp_writer_flush(void *w)
{
    return wk_mp_writer_finish(w, NULL);
}

static wk_status mp_writer_resume(void *w)
{
    wk_mp_writer *mw = w;
    if (mw->status != WK_OK) {
        return mw->status; /* stays latched: the writer is not started again */
    }
    wk_mp_writer_init(mw, mw->out);
    return WK_OK;
}

static wk_status mp_writer_finish(void *w, wk_error *err)
{
    wk_mp_writer *mw = w;
    if (mw->finished) { /* flushed last: already ended, out->len is current */
        if (mw->status != WK_OK) {
            return wk_error_set(err, mw->status, mw->err_offset, mw->msg);
        }
        return wk_error_set(err, WK_OK, mw->out->len, NULL);
    }
    return wk_mp_writer_finish(mw, err);
}

static void mp_unpacker_init(void *u, const wk_read_opts *opts, size_t max)
{
    wk_mp_unpacker_init(u, opts, max);
}

static wk_status mp_unpacker_feed(void *u, const void *data, size_t len)
{
    return wk_mp_unpacker_feed(u, data, len);
}

static void mp_unpacker_finish(void *u)
{
    wk_mp_unpacker_finish(u);
}

static wk_status mp_unpacker_next(void *u, const uint8_t **data, size_t *len, uint64_t *off)
{
    return wk_mp_unpacker_next(u, data, len, off);
}

/* As wk_mp_unpacker_next_events (frame the value, then read it), with the offset of each
 * event kept, so that a refused event is placed in the input: its first byte, or for a
 * string the writer finds not UTF-8, the first bad byte. */
static wk_status mp_unpacker_next_events(void *u, const wk_sink *sink, uint64_t *at)
{
    wk_mp_unpacker *mu = u;
    const uint8_t *d = NULL;
    size_t n = 0;
    uint64_t off = 0;
    wk_status st = wk_mp_unpacker_next(mu, &d, &n, &off);
    if (st != WK_OK) {
        return st;
    }
    wk_mp_reader r;
    wk_mp_reader_init(&r, d, n, &mu->opts);
    for (;;) {
        size_t pos = wk_mp_reader_offset(&r);
        wk_event ev;
        st = wk_mp_reader_next(&r, &ev);
        if (st == WK_ERR_EOF) {
            st = WK_OK;
            break;
        }
        if (st != WK_OK) { /* the framing validated the value: only memory can fail here */
            *at = off + pos;
            break;
        }
        st = sink->event(sink->self, &ev);
        if (st != WK_OK) {
            size_t bad = 0;
            if (st == WK_ERR_UTF8 && ev.type == WK_EV_STR &&
                !wk_utf8_valid(ev.v.str.ptr, ev.v.str.len, &bad)) {
                pos = (size_t)((const uint8_t *)ev.v.str.ptr - d) + bad;
            }
            *at = off + pos;
            break;
        }
    }
    wk_mp_reader_free(&r);
    return st;
}

static wk_status mp_unpacker_next_value(void *u, wk_arena *arena, wk_value **out)
{
    return wk_mp_unpacker_next_value(u, arena, out);
}

static wk_status mp_unpacker_error(const void *u, wk_error *err, uint64_t *line, uint64_t *col)
{
    if (line != NULL) {
        *line = 0;
    }
    if (col != NULL) {
        *col = 0;
    }
    return wk_mp_unpacker_error(u, err);
}

static uint64_t mp_unpacker_offset(const void *u)
{
    return wk_mp_unpacker_offset(u);
}

static void mp_unpacker_free(void *u)
{
    wk_mp_unpacker_free(u);
}

static wk_status mp_encode_value(const wk_value *v, const wk_json_write_opts *opts, wk_buf *out,
                                 wk_error *err)
{
    (void)opts;
    return wk_mp_encode_value(v, out, err);
}

/* ---- the table ----------------------------------------------------------------------------- */

static const char *const json_aliases[] = {NULL};
static const char *const json_exts[] = {"json", "jsonl", "ndjson", NULL};
static const char *const mp_aliases[] = {"mp", NULL};
static const char *const mp_exts[] = {"msgpack", "mp", NULL};

static const wk_format json_row = {
    "json", json_aliases, "JSON", "application/json", json_exts,
    WK_FORMAT_TEXT | WK_FORMAT_PRETTY, WK_JSON_READ_MULTI,
    js_reader_init, js_reader_source, js_reader_free,
    js_writer_init, js_writer_sink, js_writer_value, js_writer_flush, js_writer_resume,
    js_writer_finish,
    js_unpacker_init, js_unpacker_feed, js_unpacker_finish, js_unpacker_next,
    js_unpacker_next_events, js_unpacker_next_value, js_unpacker_next_value_or_bytes,
    js_unpacker_error, js_unpacker_offset,
    js_unpacker_free,
    wk_json_decode_value, wk_json_encode_value, js_whole_input,
};

static const wk_format msgpack_row = {
    "msgpack", mp_aliases, "MessagePack", "application/vnd.msgpack", mp_exts,
    WK_FORMAT_COUNTS | WK_FORMAT_WRITER_CURSOR, 0,
    mp_reader_init, mp_reader_source, mp_reader_free,
    mp_writer_init, mp_writer_sink, mp_writer_value, mp_writer_flush, mp_writer_resume,
    mp_writer_finish,
    mp_unpacker_init, mp_unpacker_feed, mp_unpacker_finish, mp_unpacker_next,
    mp_unpacker_next_events, mp_unpacker_next_value, NULL, mp_unpacker_error, mp_unpacker_offset,
    mp_unpacker_free,
    wk_mp_decode_value, mp_encode_value, NULL,
};

static const wk_format *const rows[] = {&json_row, &msgpack_row};

WK_API const wk_format *wk_format_json(void)
{
    return &json_row;
}

WK_API const wk_format *wk_format_msgpack(void)
{
    return &msgpack_row;
}

WK_API const wk_format *wk_format_find(const char *name)
{
    if (name == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (strcmp(rows[i]->name, name) == 0) {
            return rows[i];
        }
        for (const char *const *a = rows[i]->aliases; *a != NULL; a++) {
            if (strcmp(*a, name) == 0) {
                return rows[i];
            }
        }
    }
    return NULL;
}

/* ASCII case-insensitive equality of a[0..n) and the lowercase b[0..n). */
static bool lower_eq(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = a[i] >= 'A' && a[i] <= 'Z' ? (char)(a[i] + 32) : a[i];
        if (c != b[i]) {
            return false;
        }
    }
    return true;
}

/* The media types each format is read from: what it sends first, then the other spellings
 * peers send. MessagePack's IANA registration (application/vnd.msgpack) is the one wirekit
 * sends; the unregistered application/msgpack and application/x-msgpack, both in wide use,
 * are recognised on input. */
static const char *const json_media[] = {"application/json", NULL};
static const char *const mp_media[] = {"application/vnd.msgpack", "application/msgpack",
                                       "application/x-msgpack", NULL};

WK_API const wk_format *wk_format_find_media_type(const char *s, size_t len)
{
    if (s == NULL) {
        return NULL;
    }
    const struct {
        const wk_format *fmt;
        const char *const *types;
    } by_media[] = {{&json_row, json_media}, {&msgpack_row, mp_media}};
    for (size_t i = 0; i < sizeof by_media / sizeof by_media[0]; i++) {
        for (const char *const *t = by_media[i].types; *t != NULL; t++) {
            if (strlen(*t) == len && lower_eq(s, *t, len)) {
                return by_media[i].fmt;
            }
        }
    }
    /* RFC 6839: application/<anything>+json is JSON (problem+json, vnd.api+json, ...) */
    if (len > 17 && lower_eq(s, "application/", 12) && lower_eq(s + len - 5, "+json", 5)) {
        return &json_row;
    }
    return NULL;
}

WK_API const wk_format *const *wk_format_list(size_t *count)
{
    *count = sizeof rows / sizeof rows[0];
    return rows;
}

/* ---- generic reader ------------------------------------------------------------------------ */

static wk_status no_next(void *self, wk_event *ev)
{
    (void)self;
    (void)ev;
    return WK_ERR_STATE;
}

static size_t no_offset(const void *self)
{
    (void)self;
    return 0;
}

static wk_status no_error(const void *self, wk_error *err)
{
    (void)self;
    return wk_error_set(err, WK_ERR_STATE, 0, "the reader has no format");
}

WK_API void wk_reader_init(wk_reader *r, const wk_format *fmt, const void *data, size_t len,
                           const wk_read_opts *opts)
{
    memset(r, 0, sizeof *r);
    r->fmt = fmt;
    if (fmt != NULL) {
        fmt->reader_init(&r->r, data, len, opts);
    }
}

WK_API void wk_reader_source(wk_reader *r, wk_source *src)
{
    if (r->fmt == NULL) {
        src->next = no_next;
        src->offset = no_offset;
        src->error = no_error;
        src->self = r;
        return;
    }
    r->fmt->reader_source(&r->r, src);
}

WK_API void wk_reader_free(wk_reader *r)
{
    if (r->fmt != NULL) {
        r->fmt->reader_free(&r->r);
    }
    r->fmt = NULL;
}

/* ---- generic writer ------------------------------------------------------------------------ */

static wk_status no_event(void *self, const wk_event *ev)
{
    (void)self;
    (void)ev;
    return WK_ERR_STATE;
}

WK_API void wk_writer_init(wk_writer *w, const wk_format *fmt, wk_buf *out,
                           const wk_json_write_opts *opts)
{
    w->fmt = fmt;
    w->out = out;
    if (fmt != NULL) {
        fmt->writer_init(&w->w, out, opts);
    }
}

WK_API void wk_writer_sink(wk_writer *w, wk_sink *sink)
{
    if (w->fmt == NULL) {
        sink->event = no_event;
        sink->error = no_error;
        sink->self = w;
        return;
    }
    w->fmt->writer_sink(&w->w, sink);
}

WK_API wk_status wk_writer_value(wk_writer *w, const wk_value *v)
{
    return w->fmt != NULL ? w->fmt->writer_value(&w->w, v) : WK_ERR_STATE;
}

WK_API wk_status wk_writer_flush(wk_writer *w)
{
    return w->fmt != NULL ? w->fmt->writer_flush(&w->w) : WK_ERR_STATE;
}

WK_API wk_status wk_writer_resume(wk_writer *w)
{
    return w->fmt != NULL ? w->fmt->writer_resume(&w->w) : WK_ERR_STATE;
}

WK_API wk_status wk_writer_finish(wk_writer *w, wk_error *err)
{
    if (w->fmt == NULL) {
        return no_error(w, err);
    }
    wk_status st = w->fmt->writer_finish(&w->w, err);
    w->fmt = NULL;
    return st;
}

/* ---- generic unpacker ---------------------------------------------------------------------- */

WK_API void wk_unpacker_init(wk_unpacker *u, const wk_format *fmt, const wk_read_opts *opts,
                             size_t max_buffer)
{
    u->fmt = fmt;
    u->err.code = WK_OK;
    u->err.offset = 0;
    u->err.msg = NULL;
    if (fmt != NULL) {
        fmt->unpacker_init(&u->u, opts, max_buffer);
    }
}

WK_API wk_status wk_unpacker_feed(wk_unpacker *u, const void *data, size_t len)
{
    if (u->fmt == NULL) {
        return WK_ERR_STATE;
    }
    if (u->err.code != WK_OK) {
        return u->err.code;
    }
    return u->fmt->unpacker_feed(&u->u, data, len);
}

WK_API void wk_unpacker_finish(wk_unpacker *u)
{
    if (u->fmt != NULL) {
        u->fmt->unpacker_finish(&u->u);
    }
}

WK_API wk_status wk_unpacker_next(wk_unpacker *u, const uint8_t **data, size_t *len,
                                  uint64_t *offset)
{
    if (u->fmt == NULL) {
        return WK_ERR_STATE;
    }
    if (u->err.code != WK_OK) {
        return u->err.code;
    }
    return u->fmt->unpacker_next(&u->u, data, len, offset);
}

WK_API wk_status wk_unpacker_next_events(wk_unpacker *u, const wk_sink *sink)
{
    if (u->fmt == NULL) {
        return WK_ERR_STATE;
    }
    if (u->err.code != WK_OK) {
        return u->err.code;
    }
    uint64_t at = 0;
    wk_status st = u->fmt->unpacker_next_events(&u->u, sink, &at);
    if (st == WK_OK || st == WK_ERR_AGAIN || st == WK_ERR_EOF) {
        return st;
    }
    wk_error se = {WK_OK, 0, NULL};
    if (at != WK_FORMAT_NOWHERE && sink->error(sink->self, &se) != WK_OK && se.code == st) {
        /* the sink refused an event: latch its message at the input's offset */
        wk_error_set(&u->err, st, (size_t)at, se.msg);
    }
    return st;
}

WK_API wk_status wk_unpacker_next_value(wk_unpacker *u, wk_arena *arena, wk_value **out)
{
    if (u->fmt == NULL) {
        return WK_ERR_STATE;
    }
    if (u->err.code != WK_OK) {
        return u->err.code;
    }
    return u->fmt->unpacker_next_value(&u->u, arena, out);
}

WK_API wk_status wk_unpacker_error(const wk_unpacker *u, wk_error *err, uint64_t *line,
                                   uint64_t *col)
{
    if (u->fmt == NULL || u->err.code != WK_OK) {
        if (line != NULL) {
            *line = 0;
        }
        if (col != NULL) {
            *col = 0;
        }
        if (err != NULL) {
            *err = u->err;
        }
        return u->err.code;
    }
    return u->fmt->unpacker_error(&u->u, err, line, col);
}

WK_API uint64_t wk_unpacker_offset(const wk_unpacker *u)
{
    return u->fmt != NULL ? u->fmt->unpacker_offset(&u->u) : 0;
}

WK_API void wk_unpacker_free(wk_unpacker *u)
{
    if (u->fmt != NULL) {
        u->fmt->unpacker_free(&u->u);
    }
    u->fmt = NULL;
}
