/*
 * Internal: the chunk-gathering half that the MessagePack and JSON unpackers share. A value
 * that starts and ends inside the caller's chunk is handed out in place; one that reaches the
 * end of a chunk is copied into `buf`, and later chunks are appended a piece at a time (at
 * least as much as is buffered already, so a value is framed in O(log n) rounds and copied
 * O(1) times per byte) until the format's framer finds its end. Bytes appended past that end
 * are given back to the chunk, so the next value starts in place again. `buf` never grows
 * beyond `max`, whatever a header declares: a value that needs more is WK_ERR_LIMIT.
 * Flow: the caller's chunks -> this feed -> the format's framer and decoders
 * (formats/json/json_unpacker.c, formats/msgpack/mp_unpacker.c). The functions are in
 * stream/feed.c; the small ones every take calls are inline below.
 */
#ifndef WK_STREAM_FEED_H
#define WK_STREAM_FEED_H

#include "wirekit/stream.h"

#define WK__FEED_MSG_LIMIT "value spans chunks and is larger than the unpacker's buffer cap"
#define WK__FEED_MSG_NOMEM "out of memory for the unpacker's buffer"

/* An empty feed whose buffer is allocated on `alloc` and capped at `max` bytes (0: the
 * default cap). */
void wk__feed_init(wk__feed *f, const wk_allocator *alloc, size_t max);

/* The next chunk, not copied; WK_ERR_STATE while the last one is not used up. */
wk_status wk__feed_feed(wk__feed *f, const void *data, size_t len);

/* Frees the buffer; the feed may be used again. */
void wk__feed_free(wk__feed *f);

/* Latches an error at stream offset `off` (the first one wins) and returns the latched code. */
wk_status wk__feed_fail(wk__feed *f, wk_status st, uint64_t off, const char *msg);

/* Called first by every "next": drops a value handed out from `buf` last time and returns
 * the latched error, if any. */
static inline wk_status wk__feed_enter(wk__feed *f)
{
    if (f->release) {
        f->release = false;
        f->buf_len = 0;
    }
    return f->err.code;
}

/* Stream offset of the first byte of the value being framed (buf[0] or the chunk cursor). */
static inline uint64_t wk__feed_value_off(const wk__feed *f)
{
    return f->buf_len > 0 ? f->chunk_off + f->chunk_pos - f->buf_len
                          : f->chunk_off + f->chunk_pos;
}

/* The stream offset of the next byte not yet handed out. */
static inline uint64_t wk__feed_offset(const wk__feed *f)
{
    return f->chunk_off + f->chunk_pos - (f->release ? 0 : f->buf_len);
}

/* The bytes held in the gather buffer for a value not yet handed out. */
static inline size_t wk__feed_buffered(const wk__feed *f)
{
    return f->release ? 0 : f->buf_len;
}

/* Copies the chunk's rest `chunk[pos..len)` (the start of a value) into `buf`. */
wk_status wk__feed_gather(wk__feed *f);

/* Appends the next piece of the chunk to `buf`. Returns WK_OK, WK_ERR_AGAIN when the chunk is
 * used up, or a latched WK_ERR_LIMIT / WK_ERR_NOMEM. */
wk_status wk__feed_append(wk__feed *f);

/* Appends the chunk's next `n` bytes (fewer when the chunk or the cap ends first; n == 0
 * appends nothing). Statuses as wk__feed_append. */
wk_status wk__feed_append_n(wk__feed *f, size_t n);

/* The same, the piece being what `buf` lacks to hold `n` bytes (at most what the chunk and the
 * cap allow: call again until it holds them). */
wk_status wk__feed_append_to(wk__feed *f, size_t n);

/* The value being framed ends `used` bytes after its start: advances past it. A value held in
 * `buf` stays readable until the next wk__feed_enter. */
static inline wk_status wk__feed_consume(wk__feed *f, size_t used)
{
    f->scan = 0;
    f->need = 0;
    f->attempt = 0;
    if (f->buf_len == 0) {
        f->chunk_pos += used;
        return WK_OK;
    }
    /* give back what was appended past the end: framing ends values exactly, so these
     * bytes always come from the current chunk */
    if (f->buf_len - used > f->chunk_pos) {
        return wk__feed_fail(f, WK_ERR_STATE, wk__feed_value_off(f) + used,
                             "internal: a value ended before bytes of an earlier chunk");
    }
    f->chunk_pos -= f->buf_len - used;
    f->release = true;
    return WK_OK;
}

/* The value being framed, whose start is held in `buf`, ends `in_chunk` bytes past the chunk
 * cursor (its rest was read in place): advances past it. `buf` stays readable until the next
 * wk__feed_enter. */
static inline void wk__feed_consume_past(wk__feed *f, size_t in_chunk)
{
    f->scan = 0;
    f->need = 0;
    f->attempt = 0;
    f->chunk_pos += in_chunk;
    f->release = true;
}

#endif
