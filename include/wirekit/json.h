/*
 * JSON (RFC 8259): a zero-copy event reader, a fused parser straight into the value tree, and
 * a writer (compact or pretty) that prints doubles as the shortest text that reads back.
 *
 * The reader is a wk_source: it emits the same events as the MessagePack reader (containers
 * with WK_COUNT_UNKNOWN, closed by WK_EV_END), so trees, schemas and transcoding work the same
 * over JSON. Unescaped strings are views into the input; escaped ones are decoded into an
 * arena (or a scratch buffer). Integers without fraction or exponent that fit int64/uint64
 * become WK_EV_INT/WK_EV_UINT; every other number is a correctly rounded double (the same
 * result as strtod in the "C" locale), or its exact text with WK_JSON_READ_RAW_NUMBERS.
 * The writer is a wk_sink and accepts every event; values JSON has no form for (binary, ext,
 * timestamp, non-string map keys) are mapped as docs/formats.md describes.
 *
 * Readers and writers are per-thread objects; the one-shot functions are thread-safe.
 */
#ifndef WIREKIT_JSON_H
#define WIREKIT_JSON_H

#include "arena.h"
#include "buffer.h"
#include "event.h"
#include "value.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- reading ------------------------------------------------------------------------------ */

/* Reader flags (wk_json_read_opts.flags). Zero is strict RFC 8259, one value per input. */
#define WK_JSON_READ_RAW_NUMBERS 0x01u /* numbers as WK_EV_RAWNUM / WK_VAL_RAWNUM text */
#define WK_JSON_READ_MULTI 0x02u       /* several values separated by whitespace (JSON Lines) */
#define WK_JSON_READ_ALLOW_TRAILING 0x04u /* stop after the first value; ignore what follows */
#define WK_JSON_READ_ALLOW_BOM 0x08u   /* skip one leading UTF-8 byte order mark */
#define WK_JSON_READ_NAN_INF 0x10u     /* accept NaN, Infinity, -Infinity (not JSON) */
#define WK_JSON_READ_COPY_STRINGS 0x20u /* tree decode: copy every string into the arena */

/** Default nesting limit of the reader and the tree decoder. */
#define WK_JSON_DEFAULT_MAX_DEPTH 512

typedef struct wk_json_read_opts {
    unsigned flags;     /* WK_JSON_READ_* */
    uint32_t max_depth; /* 0 = WK_JSON_DEFAULT_MAX_DEPTH */
} wk_json_read_opts;

/** The event reader. Treat as opaque; lives on the caller's stack or heap. */
typedef struct wk_json_reader {
    const uint8_t *start, *p, *end;
    wk_arena *arena; /* where escaped strings go; NULL = scratch (valid until the next call) */
    wk_buf scratch;
    unsigned flags;
    uint32_t max_depth;
    uint32_t depth;
    uint32_t state;
    uint32_t values; /* top-level values read */
    uint64_t *stack; /* one bit per level: 1 = object; inline up to 512 levels */
    uint64_t inline_stack[8];
    const wk_allocator *alloc;
    wk_error err;
} wk_json_reader;

/**
 * Prepares `r` to read `data[0..len)`, which must stay valid (and unchanged) while events and
 * trees that point into it are in use. `opts` NULL means defaults. `arena`, when not NULL,
 * receives the decoded form of strings that contain escapes, so every string event stays
 * valid as long as the input and the arena; with NULL those strings live in a scratch buffer
 * until the next call. `alloc` (NULL = libc) serves the scratch buffer and nesting deeper than
 * 512. Release with wk_json_reader_free(). Never fails; errors surface from next().
 */
WK_API void wk_json_reader_init(wk_json_reader *r, const void *data, size_t len,
                                const wk_json_read_opts *opts, wk_arena *arena,
                                const wk_allocator *alloc);

/**
 * Reads the next event. Returns WK_OK, WK_ERR_EOF after the last top-level value (and the
 * trailing-content check), or an error that is latched (later calls return it again):
 * WK_ERR_SYNTAX, WK_ERR_TRUNCATED, WK_ERR_UTF8 (invalid UTF-8 or a lone surrogate escape),
 * WK_ERR_DEPTH, WK_ERR_TRAILING, WK_ERR_NOMEM. wk_json_reader_error() gives the offset.
 */
WK_API wk_status wk_json_reader_next(wk_json_reader *r, wk_event *ev);

/** Fills `src` with this reader's event interface (for wk_value_decode, wk_transcode, ...). */
WK_API void wk_json_reader_source(wk_json_reader *r, wk_source *src);

/** Copies the latched error into `err` and returns its code (WK_OK when none). */
WK_API wk_status wk_json_reader_error(const wk_json_reader *r, wk_error *err);

/** Byte offset of the next unread byte. */
WK_API size_t wk_json_reader_offset(const wk_json_reader *r);

/** Releases the reader's scratch memory (not the arena). */
WK_API void wk_json_reader_free(wk_json_reader *r);

/**
 * Parses one JSON document straight into a value tree in `arena` (the fast path: no events,
 * nodes written in place). Gives the same tree as wk_value_decode over a wk_json_reader with
 * the same options. Strings without escapes point into `data` unless
 * WK_JSON_READ_COPY_STRINGS is set; `*consumed` (may be NULL) gets the bytes used, which is
 * the whole input unless WK_JSON_READ_ALLOW_TRAILING. Scratch memory comes from `alloc`
 * (NULL = libc) and is freed before returning. Returns WK_OK or a reader status (see
 * wk_json_reader_next; WK_ERR_TRUNCATED for empty input); on error the arena may hold
 * partial allocations. Thread-safe.
 */
WK_API wk_status wk_json_decode(const void *data, size_t len, const wk_json_read_opts *opts,
                                wk_arena *arena, const wk_allocator *alloc, wk_value **out,
                                size_t *consumed, wk_error *err);

/** Turns a byte offset into 1-based line and column numbers (columns count bytes; lines end
 *  at '\n'). Offsets past the end are clamped. Thread-safe. */
WK_API void wk_json_line_col(const void *data, size_t len, size_t offset, size_t *line,
                             size_t *col);

/* ---- writing ------------------------------------------------------------------------------ */

/* Writer flags (wk_json_write_opts.flags). Zero is compact RFC 8259 output. */
#define WK_JSON_WRITE_PRETTY 0x01u  /* newlines and indentation (see indent) */
#define WK_JSON_WRITE_NAN_INF 0x02u /* write NaN, Infinity, -Infinity instead of failing */
#define WK_JSON_WRITE_NEWLINE 0x04u /* end every top-level value with '\n' (JSON Lines) */

/** Deepest nesting the writer accepts. */
#define WK_JSON_WRITER_MAX_DEPTH 1024

typedef struct wk_json_write_opts {
    unsigned flags;  /* WK_JSON_WRITE_* */
    uint32_t indent; /* spaces per level when pretty; 0 = 2; at most 16 */
} wk_json_write_opts;

/** The event writer. Treat as opaque. */
typedef struct wk_json_writer {
    wk_buf *out;
    unsigned flags;
    uint32_t indent;
    uint32_t depth;
    uint64_t values; /* top-level values written */
    uint8_t frame[WK_JSON_WRITER_MAX_DEPTH]; /* per level: object?, has items?, after key? */
    wk_error err;
} wk_json_writer;

/** Prepares `w` to append JSON to `out` (not cleared). `opts` NULL means compact. */
WK_API void wk_json_writer_init(wk_json_writer *w, wk_buf *out, const wk_json_write_opts *opts);

/**
 * Writes one event. Several top-level values are separated by '\n'. Returns WK_OK or the
 * latched error: WK_ERR_LIMIT/WK_ERR_NOMEM (buffer), WK_ERR_RANGE (NaN or infinity without
 * WK_JSON_WRITE_NAN_INF, a timestamp outside years 0000-9999), WK_ERR_TYPE (an array, map or
 * ext as a map key), WK_ERR_UTF8 (a string that is not UTF-8), WK_ERR_DEPTH, WK_ERR_STATE
 * (an END that closes nothing).
 */
WK_API wk_status wk_json_writer_event(wk_json_writer *w, const wk_event *ev);

/*
 * Typed calls for writing by hand: each does exactly what the matching event does
 * (wk_json_writer_str = WK_EV_STR, begin_object = WK_EV_MAP, end = WK_EV_END, ...), same
 * bytes and same latched errors, without building events. wk_json_writer_key is
 * wk_json_writer_str that also checks an object key is due (WK_ERR_STATE otherwise).
 */
WK_API wk_status wk_json_writer_begin_object(wk_json_writer *w);
WK_API wk_status wk_json_writer_begin_array(wk_json_writer *w);
WK_API wk_status wk_json_writer_end(wk_json_writer *w);
WK_API wk_status wk_json_writer_key(wk_json_writer *w, const char *s, size_t n);
WK_API wk_status wk_json_writer_str(wk_json_writer *w, const char *s, size_t n);
WK_API wk_status wk_json_writer_int(wk_json_writer *w, int64_t i);
WK_API wk_status wk_json_writer_uint(wk_json_writer *w, uint64_t u);
WK_API wk_status wk_json_writer_double(wk_json_writer *w, double d);
WK_API wk_status wk_json_writer_bool(wk_json_writer *w, bool b);
WK_API wk_status wk_json_writer_null(wk_json_writer *w);

/** Fills `sink` with this writer's event interface. */
WK_API void wk_json_writer_sink(wk_json_writer *w, wk_sink *sink);

/** Checks that every container was closed; returns WK_OK, the latched error, or WK_ERR_STATE
 *  (a value left open). `err` (may be NULL) gets the details, offset into the output. */
WK_API wk_status wk_json_writer_finish(wk_json_writer *w, wk_error *err);

/**
 * Writes the tree `v` as one JSON value to `out` (the fast path: walks the tree directly,
 * same bytes as wk_value_encode into a wk_json_writer). `opts` NULL means compact. Returns
 * WK_OK or a writer status (see wk_json_writer_event); on error `out` may hold a partial
 * value. Thread-safe.
 */
WK_API wk_status wk_json_write_value(const wk_value *v, wk_buf *out,
                                     const wk_json_write_opts *opts, wk_error *err);


/* ---- transcoding to and from MessagePack (no tree) ---------------------------------------- */

/**
 * Converts JSON to MessagePack by wiring a wk_json_reader straight to a MessagePack writer:
 * no tree, memory flat in the document size (plus the output). Integers that fit
 * int64/uint64 become MessagePack integers in their shortest form, other numbers float64
 * (raw-number mode: strings). With WK_JSON_READ_MULTI in `opts` every top-level value
 * (JSON Lines or whitespace-separated) becomes one MessagePack value in sequence. Appends to
 * `out`. Returns WK_OK or the reader's or writer's status; `err` offsets are into the input
 * for reader errors and into the output for writer errors. Thread-safe.
 */
WK_API wk_status wk_json_to_msgpack(const void *json, size_t len, const wk_json_read_opts *opts,
                                    wk_buf *out, wk_error *err);

/**
 * Converts a sequence of zero or more MessagePack values to JSON (one value per top-level
 * MessagePack value, separated by '\n'; add WK_JSON_WRITE_NEWLINE to end each with '\n').
 * Values JSON cannot express are mapped as wk_json_writer_event describes. `max_depth` limits
 * MessagePack nesting (0 = 512). Appends to `out`. Returns WK_OK or the reader's or writer's
 * status (see wk_mp_reader_next, wk_json_writer_event). Thread-safe.
 */
WK_API wk_status wk_json_from_msgpack(const void *mp, size_t len, const wk_json_write_opts *opts,
                                      uint32_t max_depth, wk_buf *out, wk_error *err);

#ifdef __cplusplus
}
#endif
#endif
