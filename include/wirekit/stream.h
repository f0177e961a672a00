/*
 * wirekit streams: incremental readers that take input a chunk at a time, and a bounded
 * output buffer that flushes to a file descriptor, a FILE * or a callback.
 *
 * An unpacker (wk_mp_unpacker for MessagePack, wk_json_unpacker for JSON text) is fed chunks
 * of any size and hands out each complete top-level value as its raw bytes, as events or as a
 * value tree. It applies the buffer readers' checks, with their messages and with offsets
 * counted from the start of the stream, so a stream split anywhere gives exactly what the
 * buffer reader gives on the whole input. A value that lies inside one chunk is handed out
 * in place (no copy); one that spans chunks is gathered in an internal buffer that never grows
 * past a cap (WK_ERR_LIMIT), whatever a header declares. Finding where a value ends is
 * resumable: the bytes already framed are not looked at again when more input arrives, so
 * the work is linear in the input.
 *
 * The usual loop: feed a chunk, take values out until WK_ERR_AGAIN, feed the next chunk; at
 * the end of input call ..._finish() and take the remaining values out until WK_ERR_EOF.
 * JSON events are the one exception to "whole values": wk_json_unpacker_next_events reads
 * straight from the chunks and may stop inside a value (see there).
 */
#ifndef WIREKIT_STREAM_H
#define WIREKIT_STREAM_H

#include <stdio.h>

#include "arena.h"
#include "buffer.h"
#include "event.h"
#include "json.h"
#include "value.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Default cap of an unpacker's internal buffer (the largest value that may span chunks). */
#define WK_UNPACKER_DEFAULT_MAX ((size_t)64 << 20)

/* Internal: the chunk-gathering state both unpackers share. Fields are private. */
typedef struct wk__feed {
    const uint8_t *chunk; /* the caller's current chunk */
    size_t chunk_len;
    size_t chunk_pos;     /* bytes of the chunk handed out or gathered */
    uint64_t chunk_off;   /* stream offset of chunk[0] */
    uint8_t *buf;         /* gathered bytes of a value that spans chunks */
    size_t buf_len;
    size_t buf_cap;
    size_t max;           /* cap of buf_cap */
    const wk_allocator *alloc;
    size_t scan;          /* framing resumes at this offset from the value's start */
    uint64_t need;        /* framing cannot progress before this many bytes of the value */
    size_t attempt;       /* decode buf directly once it holds this many bytes (0 = no) */
    bool finished;        /* no more input after the current chunk */
    bool release;         /* the value handed out last lives in buf: drop it on the next call */
    wk_error err;         /* sticky */
} wk__feed;

/* ==== MessagePack ========================================================================== */

struct wk__mp_tree; /* internal: a tree build paused at a chunk's end */

/** The incremental MessagePack unpacker. Treat as opaque; lives on the caller's stack or heap
 *  (wk_mp_unpacker_init / wk_mp_unpacker_free). */
typedef struct wk_mp_unpacker {
    wk__feed f;         /**< chunk, gather buffer and sticky error (internal) */
    wk_read_opts opts;  /**< the reading options given to init */
    uint64_t *stack;    /**< framing: elements left in each enclosing container */
    uint32_t stack_cap; /**< capacity of `stack` */
    uint32_t depth;     /**< framing: containers open */
    uint64_t left;      /**< framing: elements left in the innermost open container */
    uint64_t value_off; /**< stream offset of the value handed out last */
    size_t typical;     /**< running estimate of value sizes (decides the first try) */
    struct wk__mp_tree *tree; /**< tree build paused at a chunk's end (internal) */
    uint8_t cut;        /**< how the value in the gather buffer is read (internal) */
} wk_mp_unpacker;

/**
 * Prepares `u` to read a stream of MessagePack values. `opts` (NULL = defaults) gives the
 * depth limit, WK_READ_STRICT_UTF8, WK_READ_COPY_STRINGS (tree decode) and the allocator of
 * the internal buffer; `max_buffer` caps that buffer (0 = WK_UNPACKER_DEFAULT_MAX). `opts` is
 * copied; its allocator must outlive `u`. Cannot fail; allocates nothing until a value spans
 * chunks. Release with wk_mp_unpacker_free().
 */
WK_API void wk_mp_unpacker_init(wk_mp_unpacker *u, const wk_read_opts *opts, size_t max_buffer);

/**
 * Gives `u` the next chunk of input. The bytes must stay valid and unchanged until the
 * unpacker returns WK_ERR_AGAIN (it hands out values that point into them). Returns WK_OK,
 * WK_ERR_STATE when the previous chunk is not used up yet (take values out until WK_ERR_AGAIN
 * first) or after wk_mp_unpacker_finish(), or the latched error. `len` 0 is allowed.
 */
WK_API wk_status wk_mp_unpacker_feed(wk_mp_unpacker *u, const void *data, size_t len);

/** Says that no input follows the current chunk: a value still incomplete then is an error
 *  (WK_ERR_TRUNCATED with the buffer reader's message and offset). */
WK_API void wk_mp_unpacker_finish(wk_mp_unpacker *u);

/**
 * Takes out the next complete top-level value as its raw bytes, validated as wk_mp_check
 * validates them. `*data`/`*len` point into the caller's chunk (a value inside one chunk) or
 * into the internal buffer, valid until the next call on `u`; `*offset` (may be NULL) gets
 * the value's stream offset. Returns WK_OK; WK_ERR_AGAIN when the chunk is used up (feed the
 * next); WK_ERR_EOF after the last value once finished; or a latched error: the buffer
 * reader's (WK_ERR_TRUNCATED, WK_ERR_SYNTAX, WK_ERR_DEPTH, WK_ERR_UTF8), WK_ERR_LIMIT for a
 * value that spans chunks and outgrows the cap, WK_ERR_NOMEM. Details by wk_mp_unpacker_error.
 */
WK_API wk_status wk_mp_unpacker_next(wk_mp_unpacker *u, const uint8_t **data, size_t *len,
                                     uint64_t *offset);

/**
 * Takes out the next complete value as a tree in `arena` (as wk_mp_decode_value builds it;
 * strings point into the input or the internal buffer, valid until the next call, unless
 * WK_READ_COPY_STRINGS). A value cut by chunk ends is built as its bytes arrive: between
 * calls its partial tree lives in the unpacker (its nodes in a block of at most the buffer
 * cap, beside a list of its containers), so `arena` may be reset or used for anything between
 * calls; the complete tree is copied into `arena`. Statuses as wk_mp_unpacker_next,
 * plus the arena's WK_ERR_NOMEM/WK_ERR_LIMIT (latched).
 */
WK_API wk_status wk_mp_unpacker_next_value(wk_mp_unpacker *u, wk_arena *arena, wk_value **out);

/**
 * The same, faster on values cut by chunk ends, for a caller that gives the unpacker `arena`
 * between calls that return WK_ERR_AGAIN: a value cut by chunk ends is built straight in
 * `arena` as its bytes arrive and its tree is never copied. Until the call that hands the
 * value out (or fails), do not reset `arena`, allocate from it, or pass another arena; an
 * arena found changed is WK_ERR_STATE (latched). Resetting it after each value, as usual, is
 * fine. Strings point into the input or the internal buffer, valid until the next call, unless
 * WK_READ_COPY_STRINGS. If a paused tree cannot stay in one region of `arena` (the arena
 * starts a new chunk meanwhile), the value is decoded again once whole: `arena` then holds
 * the abandoned nodes too until it is reset. Mixing this with wk_mp_unpacker_next_value on
 * one stream is allowed: a value paused here and taken by wk_mp_unpacker_next_value is decoded
 * again from the gathered bytes. Statuses as wk_mp_unpacker_next_value.
 */
WK_API wk_status wk_mp_unpacker_next_value_in_place(wk_mp_unpacker *u, wk_arena *arena,
                                                    wk_value **out);

/**
 * Takes out the next complete value and sends its events to `sink` (offsets of a sink error
 * are the sink's own). Statuses as wk_mp_unpacker_next; a sink's error is returned as it is
 * and latched. The events' strings and payloads point into the chunk or the internal buffer,
 * valid during the sink call (copy what must outlive it).
 */
WK_API wk_status wk_mp_unpacker_next_events(wk_mp_unpacker *u, const wk_sink *sink);

/** Fills `err` with the latched error (code, static message, stream offset) and returns its
 *  code (WK_OK when none). */
WK_API wk_status wk_mp_unpacker_error(const wk_mp_unpacker *u, wk_error *err);

/** Stream offset of the next byte not yet handed out. */
WK_API uint64_t wk_mp_unpacker_offset(const wk_mp_unpacker *u);

/** Bytes held by the internal buffer now (0 while values lie inside chunks). */
WK_API size_t wk_mp_unpacker_buffered(const wk_mp_unpacker *u);

/** Releases the internal buffer and framing stack. `u` may be initialised again. */
WK_API void wk_mp_unpacker_free(wk_mp_unpacker *u);

/* ==== JSON ================================================================================= */

/** The incremental JSON unpacker. Treat as opaque; lives on the caller's stack or heap
 *  (wk_json_unpacker_init / wk_json_unpacker_free). */
typedef struct wk_json_unpacker {
    wk__feed f;          /**< chunk, gather buffer and sticky error (internal) */
    wk_read_opts opts;   /**< the reading options given to init */
    uint32_t depth;      /**< framing: brackets open (a literal's bytes left at the top) */
    uint8_t mode;        /**< framing state (internal) */
    bool sep;            /**< whitespace seen since the last value */
    uint64_t values;     /**< values handed out */
    uint64_t value_off;  /**< stream offset of the value handed out last */
    uint64_t line;       /**< the line (1-based) that stream offset `line_off` is on */
    uint64_t line_off;   /**< stream offset up to which lines are counted */
    uint64_t line_start; /**< stream offset of the start of line `line` */
    uint64_t err_line;   /**< line of the latched error (0 = none) */
    uint64_t err_col;    /**< byte column of the latched error */
    size_t typical;      /**< running estimate of value sizes (decides the first try) */
    wk_status try_status; /**< status of the last tree parse attempt (internal) */
    size_t tree_max;     /**< the longest value a take gives a tree (internal) */
    bool nl_try;         /**< trees: parse the gathered bytes up to the next newline first */
    size_t leftover;     /**< a value handed out from the buffer ended this far into it, and
                              the bytes after it came from an earlier chunk (internal) */
    wk_json_reader ev;   /**< events: one reader carried across chunks (internal) */
    size_t ev_pos;       /**< events: the reader's position in the gathered bytes */
    size_t ev_scan;      /**< events: gathered bytes looked at for the end of a token */
    size_t ev_retry;     /**< events: read the gathered bytes again once this many are there */
    uint8_t ev_lex;      /**< events: string state of that look (internal) */
    uint8_t use;         /**< values or events: which takes the stream serves (internal) */
    bool ev_ready;       /**< events: the gathered bytes are worth reading again */
    bool live;           /**< the chunk may be read (fed, no WK_ERR_AGAIN since) (internal) */
} wk_json_unpacker;

/**
 * Prepares `u` to read JSON text: one document, or with WK_JSON_READ_MULTI in `opts->flags`
 * several values separated by whitespace (JSON Lines, concatenated values), as
 * wk_json_reader_init reads them. Other flags, depth limit and allocator as for the buffer
 * reader (WK_JSON_READ_ALLOW_BOM and WK_JSON_READ_ALLOW_TRAILING are not supported:
 * WK_ERR_UNSUPPORTED from the first call). `max_buffer`, the copy of `opts` and the
 * allocator's lifetime as for wk_mp_unpacker_init. Release with wk_json_unpacker_free().
 */
WK_API void wk_json_unpacker_init(wk_json_unpacker *u, const wk_read_opts *opts,
                                  size_t max_buffer);

/** As wk_mp_unpacker_feed. */
WK_API wk_status wk_json_unpacker_feed(wk_json_unpacker *u, const void *data, size_t len);

/** As wk_mp_unpacker_finish: a value (or a top-level number) still open is then complete or
 *  an error. */
WK_API void wk_json_unpacker_finish(wk_json_unpacker *u);

/**
 * Takes out the next complete top-level value as its raw text (no surrounding whitespace),
 * validated as the buffer reader validates it. Pointers and statuses as for
 * wk_mp_unpacker_next; errors are the buffer reader's (status, message, offset from the start
 * of the stream), plus WK_ERR_LIMIT and WK_ERR_NOMEM.
 */
WK_API wk_status wk_json_unpacker_next(wk_json_unpacker *u, const uint8_t **data, size_t *len,
                                       uint64_t *offset);

/**
 * Takes out the next complete value as a tree in `arena` (as wk_json_decode_value builds it:
 * strings without escapes point into the chunk or the internal buffer, valid until the next
 * call on `u`, unless WK_READ_COPY_STRINGS). A value is parsed once it is complete, so
 * `arena` may be reset or used for anything between calls. Statuses as
 * wk_json_unpacker_next, plus WK_ERR_NOMEM when the arena fails (latched).
 */
WK_API wk_status wk_json_unpacker_next_value(wk_json_unpacker *u, wk_arena *arena,
                                             wk_value **out);

/**
 * As wk_json_unpacker_next_value, except that a value longer than `tree_max` bytes, or whose
 * tree `arena` cannot hold (its cap is reached or its allocator fails), is no error and gets
 * no tree: it is handed out as its bytes, checked as wk_json_unpacker_next checks them
 * (`*out` NULL; `*data`, `*len` valid until the next call or feed). Otherwise `*out` is the
 * tree and `*data`, `*len` its bytes. `*offset` (may be NULL) gets the value's stream offset.
 * The parse of a longer value stops at `tree_max` bytes, so a caller that streams big values
 * through events (the converter) holds no tree larger than about 32 times `tree_max`.
 */
WK_API wk_status wk_json_unpacker_next_value_or_bytes(wk_json_unpacker *u, wk_arena *arena,
                                                      size_t tree_max, wk_value **out,
                                                      const uint8_t **data, size_t *len,
                                                      uint64_t *offset);

/**
 * Sends the events of the next value to `sink`, reading straight from the chunks: a value
 * is never framed first, nor read twice. Unlike wk_mp_unpacker_next_events, one call may
 * send only part of a value's events: when the chunk ends inside a value, the events of its
 * tokens that are whole in the chunk have been sent, and the call returns WK_ERR_AGAIN; after
 * the next feed, the next call goes on with the same value's next event. WK_OK means the
 * value's last event (its scalar, or the END of its outer container) has been sent. A sink
 * that needs whole values (a writer that patches counts, an output buffer committed between
 * values) must therefore not be committed or finished on WK_ERR_AGAIN. A token cut by a chunk
 * end (a string, a number, a literal) is gathered in the internal buffer (cap as for the
 * other takes) and sent from there, valid during the sink call. The events, statuses,
 * messages and offsets are those of wk_json_reader on the whole input; when the input is
 * bad, the events before the error have been sent. Events and the other takes (next,
 * next_value) do not mix on one unpacker: after the first call of one kind, the other kind
 * returns WK_ERR_STATE (not latched).
 */
WK_API wk_status wk_json_unpacker_next_events(wk_json_unpacker *u, const wk_sink *sink);

/** Fills `err` with the latched error and returns its code; `line`/`col` (may be NULL) get
 *  its 1-based line and byte column in the stream (0 when no error is latched). */
WK_API wk_status wk_json_unpacker_error(const wk_json_unpacker *u, wk_error *err,
                                        uint64_t *line, uint64_t *col);

/** Stream offset of the next byte not yet handed out. */
WK_API uint64_t wk_json_unpacker_offset(const wk_json_unpacker *u);

/** Bytes held by the internal buffer now. */
WK_API size_t wk_json_unpacker_buffered(const wk_json_unpacker *u);

/** Releases the internal buffer and the events reader. `u` may be initialised again. */
WK_API void wk_json_unpacker_free(wk_json_unpacker *u);

/* ==== bounded output ======================================================================= */

/** Bytes a wk_out gathers before wk_out_commit sends them on. */
#define WK_OUT_FLUSH_AT ((size_t)64 << 10)

/** Where a wk_out sends its bytes: write all `len` bytes or return an error status. */
typedef wk_status (*wk_out_fn)(void *ctx, const void *data, size_t len);

/**
 * A bounded output buffer in front of a file descriptor, a FILE * or a callback. Writers
 * (wk_mp_writer, wk_json_writer) write into `buf` (capped at the size given to init, so a
 * single value larger than that fails with the writer's WK_ERR_LIMIT); between values the
 * caller calls wk_out_commit(), which sends the buffer on once it holds WK_OUT_FLUSH_AT bytes
 * or more. Memory is what the largest value needs, never more than the cap. Errors latch
 * (sticky). Fields other than `buf` are private.
 */
typedef struct wk_out {
    wk_buf buf;       /**< where writers append (capped) */
    wk_out_fn fn;     /**< where bytes go */
    void *ctx;        /**< argument of `fn` */
    int fd;           /**< the file descriptor (wk_out_init_fd), else -1 */
    FILE *fp;         /**< the stream (wk_out_init_file), else NULL */
    size_t flush_at;  /**< wk_out_commit sends the buffer on from this size */
    uint64_t written; /**< bytes sent on */
    wk_error err;     /**< the latched error */
} wk_out;

/** Buffers output for file descriptor `fd` (writes retry on EINTR and short writes; errors are
 *  WK_ERR_IO, with errno as write(2) left it). `cap` bounds the buffer, i.e. the largest value
 *  (0 = 1 MiB); `alloc` NULL = libc, and must outlive `o`. Cannot fail; allocates on the first
 *  write. The fd is not owned: wk_out_free leaves it open. */
WK_API void wk_out_init_fd(wk_out *o, int fd, size_t cap, const wk_allocator *alloc);
/** Buffers output for `fp` (fwrite; WK_ERR_IO when it writes less). */
WK_API void wk_out_init_file(wk_out *o, FILE *fp, size_t cap, const wk_allocator *alloc);
/** Buffers output for `fn(ctx, data, len)`; its error status is latched as it is. */
WK_API void wk_out_init_fn(wk_out *o, wk_out_fn fn, void *ctx, size_t cap,
                           const wk_allocator *alloc);

/** The buffer a writer should append to. */
static inline wk_buf *wk_out_buf(wk_out *o)
{
    return &o->buf;
}

/** Sends the buffer on when it holds at least the flush threshold (WK_OUT_FLUSH_AT, or half
 *  the cap when that is smaller). Call it between values, when no writer holds a cursor into
 *  the buffer (a JSON writer may stay live: it keeps no cursor). Returns the status. */
WK_API wk_status wk_out_commit(wk_out *o);

/** Sends everything buffered now (for a FILE *, also fflush). Returns the status. */
WK_API wk_status wk_out_flush(wk_out *o);

/** Fills `err` with the latched error and returns its code. */
WK_API wk_status wk_out_error(const wk_out *o, wk_error *err);

/** Bytes sent on so far. */
WK_API uint64_t wk_out_written(const wk_out *o);

/** Flushes, then releases the buffer (the fd or FILE * stays open). Returns the status. */
WK_API wk_status wk_out_free(wk_out *o);

#ifdef __cplusplus
}
#endif
#endif
