/*
 * The chunk-gathering state shared by the unpackers (see feed_interface.h): the caller's
 * chunk, the capped buffer for a value that spans chunks, the sticky error. Flow: the
 * caller's chunks -> this feed (a value inside a chunk is read in place; one cut by the
 * chunk's end is gathered here) -> the format's unpacker (formats/json/json_unpacker.c,
 * formats/msgpack/mp_unpacker.c) -> values or events.
 */
#include "stream/feed_interface.h"

#include <string.h>

#define FEED_MIN_PIECE 4096u

/* Stands for "no bytes" so that the cursor arithmetic never starts from a null pointer. */
static const uint8_t empty_chunk[1];

/* An empty feed: no chunk, no buffer (allocated on first gather, on alloc), a cap of max
 * bytes (0: WK_UNPACKER_DEFAULT_MAX). */
void wk__feed_init(wk__feed *f, const wk_allocator *alloc, size_t max)
{
    memset(f, 0, sizeof *f);
    f->alloc = alloc;
    f->max = max != 0 ? max : WK_UNPACKER_DEFAULT_MAX;
    f->chunk = empty_chunk;
}

/* Takes the next chunk (not copied). WK_ERR_STATE while the last one is not used up or after
 * finish; the latched error if any. */
wk_status wk__feed_feed(wk__feed *f, const void *data, size_t len)
{
    if (f->err.code != WK_OK) {
        return f->err.code;
    }
    if (f->finished || f->chunk_pos != f->chunk_len || (data == NULL && len != 0)) {
        return WK_ERR_STATE;
    }
    f->chunk_off += f->chunk_len;
    f->chunk = data != NULL ? data : empty_chunk;
    f->chunk_len = len;
    f->chunk_pos = 0;
    return WK_OK;
}

/* Frees the gather buffer; the feed may be used again. */
void wk__feed_free(wk__feed *f)
{
    if (f->buf != NULL) {
        wk_free(f->alloc, f->buf, f->buf_cap);
    }
    f->buf = NULL;
    f->buf_cap = 0;
    f->buf_len = 0;
}

/* Latches the first error (st at stream offset off, static msg); returns the latched one. */
wk_status wk__feed_fail(wk__feed *f, wk_status st, uint64_t off, const char *msg)
{
    if (f->err.code == WK_OK) {
        wk_error_set(&f->err, st, (size_t)off, msg);
    }
    return f->err.code;
}

/* Makes room for `need` bytes in buf (need <= max): the capacity doubles from
 * FEED_MIN_PIECE and stops at the cap. WK_ERR_NOMEM, latched at the value's offset, when the
 * allocator refuses (the buffer is then as it was). */
static wk_status reserve(wk__feed *f, size_t need)
{
    if (need <= f->buf_cap) {
        return WK_OK;
    }
    size_t cap = f->buf_cap != 0 ? f->buf_cap : FEED_MIN_PIECE;
    while (cap < need) {
        cap = cap > f->max / 2 ? f->max : cap * 2;
    }
    uint8_t *n = f->buf == NULL ? wk_alloc(f->alloc, cap)
                                : wk_realloc(f->alloc, f->buf, f->buf_cap, cap);
    if (n == NULL) {
        return wk__feed_fail(f, WK_ERR_NOMEM, wk__feed_value_off(f), WK__FEED_MSG_NOMEM);
    }
    f->buf = n;
    f->buf_cap = cap;
    return WK_OK;
}

/* Copies the chunk's rest into the (empty) buffer, used up: the start of a value the chunk
 * cuts. WK_ERR_LIMIT, latched, when it is larger than the cap. */
wk_status wk__feed_gather(wk__feed *f)
{
    size_t n = f->chunk_len - f->chunk_pos;
    if (n > f->max) {
        return wk__feed_fail(f, WK_ERR_LIMIT, wk__feed_value_off(f), WK__FEED_MSG_LIMIT);
    }
    if (n == 0) {
        return WK_OK;
    }
    wk_status st = reserve(f, n);
    if (st != WK_OK) {
        return st;
    }
    memcpy(f->buf, f->chunk + f->chunk_pos, n);
    f->buf_len = n;
    f->chunk_pos = f->chunk_len;
    return WK_OK;
}

/* Appends up to `take` more bytes of the chunk to the buffer, never past the cap.
 * WK_ERR_AGAIN when the chunk is used up, WK_ERR_LIMIT (latched) when the buffer is full. */
wk_status wk__feed_append_n(wk__feed *f, size_t take)
{
    size_t left = f->chunk_len - f->chunk_pos;
    if (left == 0) {
        return WK_ERR_AGAIN;
    }
    if (f->buf_len >= f->max) {
        return wk__feed_fail(f, WK_ERR_LIMIT, wk__feed_value_off(f), WK__FEED_MSG_LIMIT);
    }
    /* no more than the chunk holds, nor than the cap leaves */
    if (take > left) {
        take = left;
    }
    if (take > f->max - f->buf_len) {
        take = f->max - f->buf_len;
    }
    wk_status st = reserve(f, f->buf_len + take);
    if (st != WK_OK) {
        return st;
    }
    memcpy(f->buf + f->buf_len, f->chunk + f->chunk_pos, take);
    f->buf_len += take;
    f->chunk_pos += take;
    return WK_OK;
}

/* Appends until the buffer holds n bytes (or the chunk ends). */
wk_status wk__feed_append_to(wk__feed *f, size_t n)
{
    return wk__feed_append_n(f, n > f->buf_len ? n - f->buf_len : 0);
}

/* Appends the next piece: as many bytes as the buffer holds (at least FEED_MIN_PIECE), so a
 * value gathered piece by piece costs linear time overall. */
wk_status wk__feed_append(wk__feed *f)
{
    return wk__feed_append_n(f, f->buf_len > FEED_MIN_PIECE ? f->buf_len : FEED_MIN_PIECE);
}
