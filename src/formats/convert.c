/*
 * The converter (wirekit/format.h): one value at a time from the input format's unpacker to
 * the output format's writer, each value's output whole or not at all, and wk_convert, the
 * one-shot conversion of a whole buffer through the same steps. `wirekit convert`, the
 * one-shot bridges (bridge.c) and any caller of the table take this one path.
 *
 * The path is chosen once per stream from the rows' flags: an input without container counts
 * going to an output that needs them (JSON to MessagePack) goes through each value's tree,
 * whose counts are known once it is built; a value longer than TREE_MAX (its tree takes about
 * 17 bytes per `1,` of input: the tree is what made one big document cost 17 times its size)
 * comes out of the unpacker as its checked bytes instead and is streamed by a reader into the
 * writer's sink, which back-patches the headers in one linear pass when the value closes
 * (the MessagePack sink's compaction), so its memory is its input and its output. Every other
 * pair streams events from the unpacker into the writer's sink.
 */
#include <string.h>

#include "wirekit/format.h"

/* The longest value converted through its tree (tree path); a longer one streams through
 * events. Trees are faster for the values they fit, the bound keeps a tree below about
 * 32 MiB, and a longer value's parse stops here, so what the failed try costs is bounded. */
#define TREE_MAX ((size_t)1 << 20)

/* Writer statuses that say the value cannot be held by the output format (the input's
 * fault, placed in the input); every other writer status is the output's (a full buffer). */
static bool value_refused(wk_status st)
{
    return st == WK_ERR_TYPE || st == WK_ERR_RANGE || st == WK_ERR_UTF8;
}

WK_API void wk_converter_init(wk_converter *c, const wk_format *from, const wk_format *to,
                              const wk_read_opts *ropts, const wk_json_write_opts *wopts,
                              size_t max_buffer, wk_buf *out)
{
    memset(c, 0, sizeof *c);
    if (from == NULL || to == NULL || out == NULL) {
        return; /* not live: every call says WK_ERR_STATE */
    }
    wk_unpacker_init(&c->in, from, ropts, max_buffer);
    wk_writer_init(&c->out, to, out, wopts);
    wk_writer_sink(&c->out, &c->sink);
    c->buf = out;
    c->done = out->len;
    c->tree = (from->flags & WK_FORMAT_COUNTS) == 0 && (to->flags & WK_FORMAT_COUNTS) != 0;
    if (ropts != NULL) {
        c->ropts = *ropts;
    }
    c->tree_max = TREE_MAX;
    wk_arena_init(&c->arena, c->ropts.alloc, 0);
    c->cursor = (to->flags & WK_FORMAT_WRITER_CURSOR) != 0;
    c->live = true;
}

WK_API wk_status wk_converter_feed(wk_converter *c, const void *data, size_t len)
{
    if (!c->live) {
        return WK_ERR_STATE;
    }
    if (c->err.code != WK_OK) {
        return c->err.code;
    }
    return wk_unpacker_feed(&c->in, data, len);
}

WK_API void wk_converter_finish(wk_converter *c)
{
    if (c->live) {
        wk_unpacker_finish(&c->in);
    }
}

/* Latches the error that stopped value conversion (`st`), the writer's or the input's, and
 * cuts the output back to the last complete value. `at` is the input offset of the event the
 * writer refused (events path), `wrote` says that a tree was given to the writer. */
static wk_status fail(wk_converter *c, wk_status st, uint64_t at, bool wrote)
{
    wk_error we = {WK_OK, 0, NULL};
    c->sink.error(c->sink.self, &we);
    if (we.code != WK_OK && (!value_refused(we.code) || (!wrote && at == WK_FORMAT_NOWHERE))) {
        /* the output's error, or a refusal the input format cannot place (JSON events) */
        c->err = we;
        c->output_err = true;
    } else if (we.code != WK_OK) {
        /* a value the output cannot hold: named in the input. A tree has no offsets, so a
         * refused tree is placed at the value's end. */
        wk_error_set(&c->err, we.code, (size_t)(wrote ? wk_unpacker_offset(&c->in) : at),
                     we.msg);
    } else if (c->err.code == WK_OK) { /* else the reader's, latched by stream_bytes */
        wk_unpacker_error(&c->in, &c->err, &c->line, &c->col);
        if (c->err.code == WK_OK) {
            wk_error_set(&c->err, st, (size_t)wk_unpacker_offset(&c->in), NULL);
        }
    }
    if (c->cursor && !c->flushed) { /* the writer syncs out->len now, not after the cut */
        wk_writer_flush(&c->out);
        c->flushed = true;
    }
    if (c->buf->len > c->done) {
        c->buf->len = c->done; /* no half value in the output */
    }
    return c->err.code;
}

/* A value too big for a tree, as its bytes data[0..len) at input offset `off` (checked by the
 * unpacker): a reader sends its events to the writer's sink. Returns the status; a failure
 * of the reader (out of memory for a long string's unescaped copy) is latched here, at its
 * input offset. */
static wk_status stream_bytes(wk_converter *c, const uint8_t *data, size_t len, uint64_t off)
{
    wk_reader r;
    wk_reader_init(&r, c->in.fmt, data, len, &c->ropts);
    wk_source src;
    wk_reader_source(&r, &src);
    wk_error e = {WK_OK, 0, NULL};
    wk_status st = wk_transcode(&src, &c->sink, &e);
    if (st != WK_OK && src.error(src.self, &e) != WK_OK) {
        wk_error_set(&c->err, e.code, (size_t)(off + e.offset), e.msg);
    }
    wk_reader_free(&r);
    return st;
}

/* The per-value step calls the rows' functions directly (one indirect call per value each
 * way, none per event): the generic handles' checks are done once here. */
WK_API wk_status wk_converter_next(wk_converter *c)
{
    if (c->err.code != WK_OK || !c->live) {
        return c->live ? c->err.code : WK_ERR_STATE;
    }
    wk_status st;
    const wk_format *from = c->in.fmt;
    if (c->flushed) {
        st = c->out.fmt->writer_resume(&c->out.w);
        if (st != WK_OK) {
            return fail(c, st, 0, false);
        }
        c->flushed = false;
    }
    bool wrote = false;
    uint64_t at = 0;
    if (c->tree) {
        wk_value *v = NULL;
        const uint8_t *data = NULL;
        size_t len = 0;
        uint64_t off = 0;
        wk_arena_reset(&c->arena);
        st = from->unpacker_next_value_or_bytes(&c->in.u, &c->arena, c->tree_max, &v, &data,
                                                &len, &off);
        if (st == WK_OK) {
            wrote = true;
            st = v != NULL ? c->out.fmt->writer_value(&c->out.w, v)
                           : stream_bytes(c, data, len, off);
        }
    } else {
        st = from->unpacker_next_events(&c->in.u, &c->sink, &at);
    }
    if (st == WK_OK) {
        if (c->cursor) {
            st = c->out.fmt->writer_flush(&c->out.w);
            c->flushed = true;
            if (st != WK_OK) {
                return fail(c, st, 0, true);
            }
        }
        c->done = c->buf->len;
        return WK_OK;
    }
    if (st == WK_ERR_AGAIN || st == WK_ERR_EOF) {
        /* the caller may drain `out` before the next call: a writer that holds a cursor
         * into it must not keep one. Nothing was written since the resume (input that
         * stops inside a value, JSON's events, reaches a writer with a cursor, one with
         * counts, only through trees), so the flush leaves out->len as it is */
        if (c->cursor) {
            c->out.fmt->writer_flush(&c->out.w);
            c->flushed = true;
        }
        return st;
    }
    return fail(c, st, at, wrote);
}

WK_API size_t wk_converter_done(const wk_converter *c)
{
    return c->done;
}

WK_API void wk_converter_drained(wk_converter *c, size_t n)
{
    c->done = n < c->done ? c->done - n : 0;
}

WK_API wk_status wk_converter_error(const wk_converter *c, wk_error *err, uint64_t *line,
                                    uint64_t *col, bool *output)
{
    if (err != NULL) {
        *err = c->err;
    }
    if (line != NULL) {
        *line = c->line;
    }
    if (col != NULL) {
        *col = c->col;
    }
    if (output != NULL) {
        *output = c->output_err;
    }
    return c->err.code;
}

WK_API void wk_converter_free(wk_converter *c)
{
    if (!c->live) {
        return;
    }
    wk_writer_finish(&c->out, NULL);
    wk_unpacker_free(&c->in);
    wk_arena_free(&c->arena);
    c->live = false;
}

WK_API wk_status wk_convert(const wk_format *from, const wk_format *to, const void *in,
                            size_t len, const wk_read_opts *ropts,
                            const wk_json_write_opts *wopts, wk_buf *out, wk_error *err)
{
    if (from == NULL || to == NULL || out == NULL || (in == NULL && len != 0)) {
        return wk_error_set(err, WK_ERR_ARG, 0, "wk_convert: missing format, input or output");
    }
    wk_read_opts ro = {0};
    if (ropts != NULL) {
        ro = *ropts;
    }
    size_t skip = 0;
    size_t used = len;
    if (from->whole_input != NULL) {
        from->whole_input(in, len, &ro, &skip, &used);
    }
    /* the whole input is one chunk: its values are read in place; only a value cut by the
     * end of the input is gathered, and the cap must not turn its truncation into a limit */
    wk_converter c;
    wk_converter_init(&c, from, to, &ro, wopts, used < WK_UNPACKER_DEFAULT_MAX ? 0 : used + 1,
                      out);
    /* no input (NULL, 0) is fed as NULL: NULL + 0 is undefined behaviour in C */
    wk_converter_feed(&c, in != NULL ? (const uint8_t *)in + skip : NULL, used);
    wk_converter_finish(&c);
    wk_status st;
    do {
        st = wk_converter_next(&c);
    } while (st == WK_OK);
    if (st == WK_ERR_EOF) {
        st = WK_OK;
        wk_error_set(err, WK_OK, out->len, NULL);
    } else {
        bool output = false;
        wk_error e;
        wk_converter_error(&c, &e, NULL, NULL, &output);
        if (!output) {
            e.offset += skip;
        }
        if (err != NULL) {
            *err = e;
        }
    }
    wk_converter_free(&c);
    return st;
}
