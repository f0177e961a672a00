/*
 * wk_out: a bounded output buffer in front of a file descriptor, a FILE * or a callback.
 * Writers append whole values to `buf`; wk_out_commit() between values sends the buffer on
 * once it holds 64 KiB, so memory stays at what the largest value needs (never above the
 * cap) however much is written, and one system call carries many small values. Flow: any
 * writer (JSON, MessagePack, the schema encoders) -> o->buf -> wk_out_commit -> the fd, FILE *
 * or callback.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "wirekit/stream.h"

#define OUT_DEFAULT_CAP ((size_t)1 << 20)

/* The fd writer: all of data[0..len) to the descriptor at ctx, short writes continued and
 * EINTR retried; WK_ERR_IO on any other failure (errno says why). */
static wk_status write_fd(void *ctx, const void *data, size_t len)
{
    int fd = *(const int *)ctx;
    const uint8_t *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return WK_ERR_IO;
        }
        p += n;
        len -= (size_t)n;
    }
    return WK_OK;
}

/* The FILE * writer: one fwrite of all the bytes; WK_ERR_IO when it writes fewer. */
static wk_status write_file(void *ctx, const void *data, size_t len)
{
    return fwrite(data, 1, len, ctx) == len ? WK_OK : WK_ERR_IO;
}

/* The part every init shares: an empty buffer capped at cap (0: OUT_DEFAULT_CAP), sent on
 * at WK_OUT_FLUSH_AT bytes or half the cap, whichever is smaller. */
static void init(wk_out *o, size_t cap, const wk_allocator *alloc)
{
    memset(o, 0, sizeof *o);
    cap = cap != 0 ? cap : OUT_DEFAULT_CAP;
    wk_buf_init(&o->buf, alloc, cap);
    o->flush_at = cap / 2 < WK_OUT_FLUSH_AT ? cap / 2 : WK_OUT_FLUSH_AT;
    o->fd = -1;
}

/* An output to the descriptor fd (not closed by wk_out_free). */
WK_API void wk_out_init_fd(wk_out *o, int fd, size_t cap, const wk_allocator *alloc)
{
    init(o, cap, alloc);
    o->fd = fd;
    o->fn = write_fd;
    o->ctx = &o->fd;
}

/* An output to the stream fp, flushed by wk_out_flush (not closed by wk_out_free). */
WK_API void wk_out_init_file(wk_out *o, FILE *fp, size_t cap, const wk_allocator *alloc)
{
    init(o, cap, alloc);
    o->fp = fp;
    o->fn = write_file;
    o->ctx = fp;
}

/* An output to the callback fn(ctx, data, len), which must take all the bytes or fail. */
WK_API void wk_out_init_fn(wk_out *o, wk_out_fn fn, void *ctx, size_t cap,
                           const wk_allocator *alloc)
{
    init(o, cap, alloc);
    o->fn = fn;
    o->ctx = ctx;
}

/* Sends the whole buffer on and empties it; a failure is latched (at the bytes written so
 * far) and every later call returns it. */
static wk_status send_all(wk_out *o)
{
    if (o->err.code != WK_OK) {
        return o->err.code;
    }
    if (o->buf.len == 0) {
        return WK_OK;
    }
    /* the fd writer's context points into `o`, which the caller may have moved */
    void *ctx = o->fn == write_fd ? &o->fd : o->ctx;
    wk_status st = o->fn(ctx, o->buf.data, o->buf.len);
    if (st != WK_OK) {
        return wk_error_set(&o->err, st, (size_t)o->written, "writing the output failed");
    }
    o->written += o->buf.len;
    o->buf.len = 0;
    return WK_OK;
}

/* Between values: sends the buffer on once it holds flush_at bytes; returns the latched
 * status. */
WK_API wk_status wk_out_commit(wk_out *o)
{
    if (o->buf.len >= o->flush_at) {
        return send_all(o);
    }
    return o->err.code;
}

/* Sends everything buffered on now (and fflush for a FILE *). */
WK_API wk_status wk_out_flush(wk_out *o)
{
    wk_status st = send_all(o);
    if (st == WK_OK && o->fp != NULL && fflush(o->fp) != 0) {
        return wk_error_set(&o->err, WK_ERR_IO, (size_t)o->written, "flushing the output failed");
    }
    return st;
}

/* The latched error into err (when not NULL); returns its status. */
WK_API wk_status wk_out_error(const wk_out *o, wk_error *err)
{
    if (err != NULL) {
        *err = o->err;
    }
    return o->err.code;
}

/* The bytes sent on so far (not counting what is still buffered). */
WK_API uint64_t wk_out_written(const wk_out *o)
{
    return o->written;
}

/* Flushes, then frees the buffer; returns the flush's status. */
WK_API wk_status wk_out_free(wk_out *o)
{
    wk_status st = wk_out_flush(o);
    wk_buf_free(&o->buf);
    return st;
}
