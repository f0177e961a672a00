/*
 * The format table: one row per wire format (JSON, MessagePack), each with its names, media
 * type and file extensions and the functions that read, write, unpack and build trees in it,
 * so that code that works on "a format" picks a row once (wk_format_find("json")) and never
 * branches on the format again.
 *
 * On top of the rows sit generic handles that hold one object whatever the format: a buffer
 * reader (wk_reader), a writer on a wk_buf (wk_writer), a chunked unpacker (wk_unpacker), and
 * the converter (wk_converter) that `wirekit convert` and the one-shot calls (wk_convert,
 * wk_json_to_msgpack, wk_json_from_msgpack) all go through: one path per conversion. Every
 * handle is safe to zero: a zeroed handle has no format, its calls return WK_ERR_STATE (or do
 * nothing) and its _free does nothing.
 *
 * The function pointers of a row take the format's own object (a wk_json_reader, a
 * wk_mp_unpacker, ...) as `void *`; callers use the generic handles, which dispatch once per
 * call (per value or per chunk, never per event).
 */
#ifndef WIREKIT_FORMAT_H
#define WIREKIT_FORMAT_H

#include "arena.h"
#include "buffer.h"
#include "event.h"
#include "json.h"
#include "msgpack.h"
#include "stream.h"
#include "value.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Row flags (wk_format.flags). */
#define WK_FORMAT_TEXT 0x01u   /**< text with lines: errors have a line:column */
#define WK_FORMAT_COUNTS 0x02u /**< containers carry their element count up front */
#define WK_FORMAT_PRETTY 0x04u /**< the writer honours WK_JSON_WRITE_PRETTY */
/** The writer holds a cursor into its buffer: writer_flush and writer_resume do work between
 *  values (without the flag they only return the latched status). */
#define WK_FORMAT_WRITER_CURSOR 0x08u

/** What a row's unpacker_next_events stores for a refused event it cannot place. */
#define WK_FORMAT_NOWHERE UINT64_MAX

/** One row of the format table. Rows are static and immutable; compare them by address. */
typedef struct wk_format {
    const char *name;                 /**< the canonical name: "json", "msgpack" */
    const char *const *aliases;       /**< other names (NULL-terminated): "mp" */
    const char *title;                /**< the name in messages: "JSON", "MessagePack" */
    const char *media_type;           /**< what wirekit sends: "application/json",
                                           "application/vnd.msgpack" (IANA-registered) */
    const char *const *extensions;    /**< file extensions without the dot (NULL-terminated) */
    unsigned flags;                   /**< WK_FORMAT_* */
    /** The read flag that lets one input hold several top-level values (JSON:
     *  WK_JSON_READ_MULTI); 0 when the format's readers always take a sequence. */
    unsigned multi_flag;

    /** wk_json_reader_init / wk_mp_reader_init on the format's reader object `r`. */
    void (*reader_init)(void *r, const void *data, size_t len, const wk_read_opts *opts);
    /** Fills `src` with reader `r`'s event interface. */
    void (*reader_source)(void *r, wk_source *src);
    /** Releases reader `r`. */
    void (*reader_free)(void *r);

    /** Prepares writer `w` to append to `out`; `opts` as for wk_writer_init. */
    void (*writer_init)(void *w, wk_buf *out, const wk_json_write_opts *opts);
    /** Fills `sink` with writer `w`'s event interface. */
    void (*writer_sink)(void *w, wk_sink *sink);
    /** Writes tree `v` as one value; returns the writer's status. */
    wk_status (*writer_value)(void *w, const wk_value *v);
    /** Syncs `out->len` between values (see wk_writer_flush); returns the status. */
    wk_status (*writer_flush)(void *w);
    /** Starts writing again at `out->len` after a flush (see wk_writer_resume). */
    wk_status (*writer_resume)(void *w);
    /** Checks that every container was closed; returns the status, details in `err`. */
    wk_status (*writer_finish)(void *w, wk_error *err);

    /** wk_json_unpacker_init / wk_mp_unpacker_init on the format's unpacker object `u`. */
    void (*unpacker_init)(void *u, const wk_read_opts *opts, size_t max_buffer);
    /** Gives unpacker `u` the next chunk (as wk_mp_unpacker_feed). */
    wk_status (*unpacker_feed)(void *u, const void *data, size_t len);
    /** Says that no input follows the current chunk. */
    void (*unpacker_finish)(void *u);
    /** Takes out the next value as its raw bytes (as wk_mp_unpacker_next). */
    wk_status (*unpacker_next)(void *u, const uint8_t **data, size_t *len, uint64_t *offset);
    /** Sends the next value's events to `sink`. When the sink refuses an event, `*at` gets
     *  the stream offset of that event's bytes, or WK_FORMAT_NOWHERE when the format cannot
     *  tell (JSON). */
    wk_status (*unpacker_next_events)(void *u, const wk_sink *sink, uint64_t *at);
    /** Takes out the next value as a tree in `arena` (as wk_mp_unpacker_next_value). */
    wk_status (*unpacker_next_value)(void *u, wk_arena *arena, wk_value **out);
    /** As unpacker_next_value, but a value longer than `tree_max` bytes, or whose tree
     *  `arena` cannot hold, is handed out as its checked bytes instead (`*out` NULL,
     *  `*data`/`*len`/`*offset` set: see wk_json_unpacker_next_value_or_bytes). Needed by a
     *  row without WK_FORMAT_COUNTS (its big values stream to a writer that needs counts);
     *  NULL in a row with them. */
    wk_status (*unpacker_next_value_or_bytes)(void *u, wk_arena *arena, size_t tree_max,
                                              wk_value **out, const uint8_t **data,
                                              size_t *len, uint64_t *offset);
    /** Fills `err` with the latched error; `line`/`col` get its position (0 without lines). */
    wk_status (*unpacker_error)(const void *u, wk_error *err, uint64_t *line, uint64_t *col);
    /** Stream offset of the next byte not yet handed out. */
    uint64_t (*unpacker_offset)(const void *u);
    /** Releases unpacker `u`. */
    void (*unpacker_free)(void *u);

    /** One value straight into a tree (wk_json_decode_value, wk_mp_decode_value). */
    wk_status (*decode_value)(const void *data, size_t len, const wk_read_opts *opts,
                              wk_arena *arena, wk_value **out, size_t *consumed,
                              wk_error *err);
    /** One tree straight into bytes appended to `out` (`opts` as for wk_writer_init). */
    wk_status (*encode_value)(const wk_value *v, const wk_json_write_opts *opts, wk_buf *out,
                              wk_error *err);
    /** For a whole-buffer input: sets `*skip` and `*used` to the bytes an unpacker reads
     *  (`used` of them from offset `skip`) and rewrites `*opts` to what it takes, for the
     *  buffer readers' options the unpacker lacks (JSON: a byte order mark, trailing
     *  content). NULL when there are none. */
    void (*whole_input)(const void *data, size_t len, wk_read_opts *opts, size_t *skip,
                        size_t *used);
} wk_format;

/** The row of JSON (RFC 8259, JSON Lines). */
WK_API const wk_format *wk_format_json(void);
/** The row of MessagePack. */
WK_API const wk_format *wk_format_msgpack(void);

/** The row whose name or alias is `name` ("json", "msgpack", "mp"; exact, case-sensitive),
 *  or NULL when no format has that name. */
WK_API const wk_format *wk_format_find(const char *name);

/** The row whose media type has the essence `s[0..len)` ("type/subtype", ASCII
 *  case-insensitive, no parameters: wk_mt_essence() of a parsed Content-Type), or NULL.
 *  JSON: application/json and any application/...+json (RFC 6839's structured syntax
 *  suffix, e.g. application/problem+json). MessagePack: application/vnd.msgpack (the IANA
 *  registration, which `media_type` names and wirekit sends) and the unregistered
 *  application/msgpack and application/x-msgpack that other services send. */
WK_API const wk_format *wk_format_find_media_type(const char *s, size_t len);

/** The rows of the table: `*count` gets their number, the return value points at the first
 *  of that many row pointers (static). */
WK_API const wk_format *const *wk_format_list(size_t *count);

/* ==== buffer reader ======================================================================== */

/** A buffer reader of any format. Safe to zero (a zeroed reader's source fails with
 *  WK_ERR_STATE). Fields are private. */
typedef struct wk_reader {
    const wk_format *fmt; /**< the format; NULL when not initialised */
    /** the format's reader */
    union {
        wk_json_reader json; /**< JSON */
        wk_mp_reader mp;     /**< MessagePack */
    } r;
} wk_reader;

/** Prepares `r` to read `data[0..len)` in format `fmt` (as that format's reader init: the
 *  data must outlive the events; `opts` NULL = defaults). Cannot fail; errors surface from
 *  the source. Release with wk_reader_free. */
WK_API void wk_reader_init(wk_reader *r, const wk_format *fmt, const void *data, size_t len,
                           const wk_read_opts *opts);
/** Fills `src` with the reader's event interface (for wk_transcode, wk_value_decode ...). */
WK_API void wk_reader_source(wk_reader *r, wk_source *src);
/** Releases the reader's memory; `r` may be initialised again. */
WK_API void wk_reader_free(wk_reader *r);

/* ==== writer =============================================================================== */

/** A writer of any format appending to a wk_buf. Safe to zero (a zeroed writer's calls return
 *  WK_ERR_STATE). Fields are private. */
typedef struct wk_writer {
    const wk_format *fmt; /**< the format; NULL when not initialised */
    wk_buf *out;          /**< where bytes go */
    /** the format's writer */
    union {
        wk_json_writer json; /**< JSON */
        wk_mp_writer mp;     /**< MessagePack */
    } w;
} wk_writer;

/** Prepares `w` to append format `fmt` to `out` (kept; not cleared). `opts` (NULL = compact,
 *  one value after another) are the JSON writer's: WK_JSON_WRITE_NEWLINE, _PRETTY, _NAN_INF
 *  and the indent; formats without a text layout ignore them. Allocates nothing. */
WK_API void wk_writer_init(wk_writer *w, const wk_format *fmt, wk_buf *out,
                           const wk_json_write_opts *opts);
/** Fills `sink` with the writer's event interface (valid while `w` is). */
WK_API void wk_writer_sink(wk_writer *w, wk_sink *sink);
/** Writes tree `v` as the next top-level value. Returns WK_OK or the latched error. */
WK_API wk_status wk_writer_value(wk_writer *w, const wk_value *v);
/**
 * Call between values: makes `out->len` cover everything written. Afterwards the caller may
 * send bytes of `out` on and remove them (`out->data` may move); call wk_writer_resume before
 * the next value. Returns WK_OK or the latched error.
 */
WK_API wk_status wk_writer_flush(wk_writer *w);
/** After wk_writer_flush (and whatever the caller did to `out`): the writer goes on appending
 *  at `out->len`. Returns WK_OK or the latched error (the writer then stays stopped). */
WK_API wk_status wk_writer_resume(wk_writer *w);
/** Checks that every container was closed and returns WK_OK, the latched error or
 *  WK_ERR_STATE (a value left open); `err` (may be NULL) gets the details, offsets into the
 *  output. Releases what the writer holds; initialise it again to reuse it. */
WK_API wk_status wk_writer_finish(wk_writer *w, wk_error *err);

/* ==== chunked unpacker ===================================================================== */

/** The chunked unpacker of any format (see wirekit/stream.h for the calls it stands for).
 *  Safe to zero. Fields are private. */
typedef struct wk_unpacker {
    const wk_format *fmt; /**< the format; NULL when not initialised */
    wk_error err;         /**< a sink's refusal, at the input offset (internal) */
    /** the format's unpacker */
    union {
        wk_json_unpacker json; /**< JSON */
        wk_mp_unpacker mp;     /**< MessagePack */
    } u;
} wk_unpacker;

/** Prepares `u` to read a stream in format `fmt`: as wk_json_unpacker_init or
 *  wk_mp_unpacker_init with `opts` (NULL = defaults; add `fmt->multi_flag` for several
 *  values) and `max_buffer` (0 = WK_UNPACKER_DEFAULT_MAX). Cannot fail. */
WK_API void wk_unpacker_init(wk_unpacker *u, const wk_format *fmt, const wk_read_opts *opts,
                             size_t max_buffer);
/** Gives `u` the next chunk (as wk_mp_unpacker_feed). */
WK_API wk_status wk_unpacker_feed(wk_unpacker *u, const void *data, size_t len);
/** Says that no input follows the current chunk (as wk_mp_unpacker_finish). */
WK_API void wk_unpacker_finish(wk_unpacker *u);
/** Takes out the next value as its raw bytes, validated (as wk_mp_unpacker_next). */
WK_API wk_status wk_unpacker_next(wk_unpacker *u, const uint8_t **data, size_t *len,
                                  uint64_t *offset);
/**
 * Sends the next value's events to `sink` (as the format's unpacker does; JSON may stop
 * inside a value with WK_ERR_AGAIN, see wk_json_unpacker_next_events). When the sink refuses
 * an event, its status is returned; for MessagePack it is latched with its message and the
 * input's stream offset of the refused event (its first byte, or for a string that is not
 * UTF-8 its first bad byte), so that wk_unpacker_error names the input, not the output; JSON
 * latches it as wk_json_unpacker_next_events does (the sink's offset).
 */
WK_API wk_status wk_unpacker_next_events(wk_unpacker *u, const wk_sink *sink);
/** Takes out the next value as a tree in `arena` (as wk_mp_unpacker_next_value and
 *  wk_json_unpacker_next_value: `arena` is free between calls). */
WK_API wk_status wk_unpacker_next_value(wk_unpacker *u, wk_arena *arena, wk_value **out);
/** Fills `err` with the latched error and returns its code (WK_OK when none); `line`/`col`
 *  (may be NULL) get its 1-based line and byte column for a text format, else 0. */
WK_API wk_status wk_unpacker_error(const wk_unpacker *u, wk_error *err, uint64_t *line,
                                   uint64_t *col);
/** Stream offset of the next byte not yet handed out (0 when not initialised). */
WK_API uint64_t wk_unpacker_offset(const wk_unpacker *u);
/** Releases the unpacker's memory; `u` may be initialised again. */
WK_API void wk_unpacker_free(wk_unpacker *u);

/* ==== conversion =========================================================================== */

/**
 * Converts a stream from one format to another a value at a time: fed chunks (or a whole
 * buffer), it appends each top-level value's output to `out` whole or not at all. A pair
 * whose input gives no container counts and whose output needs them (JSON to MessagePack)
 * goes through each value's tree, and a value longer than 1 MiB through the events of its
 * bytes once they are complete, the writer back-patching its headers (so a big value costs
 * its input and its output, not a tree of about 17 times its size); every other pair goes through
 * events, which for JSON input
 * are written as they are read (the output of a value cut by a chunk end is partly in `out`
 * until the value completes: see wk_converter_done). Safe to zero. Fields are private.
 */
typedef struct wk_converter {
    wk_unpacker in;  /**< the input's unpacker */
    wk_writer out;   /**< the output's writer */
    wk_sink sink;    /**< the writer's sink */
    wk_arena arena;  /**< one value's tree (tree path) */
    wk_read_opts ropts; /**< the input's reading options (internal) */
    size_t tree_max; /**< tree path: longer values stream through events (internal) */
    wk_buf *buf;     /**< where the output goes */
    size_t done;     /**< bytes of `buf` that end complete values */
    bool tree;       /**< values go through trees */
    bool cursor;     /**< the writer is flushed and resumed between values (internal) */
    bool live;       /**< initialised */
    bool flushed;    /**< the writer was flushed after the last value (internal) */
    bool output_err; /**< the latched error is the output's */
    wk_error err;    /**< the latched error (internal) */
    uint64_t line;   /**< its input line, for a text input (internal) */
    uint64_t col;    /**< its input column (internal) */
} wk_converter;

/**
 * Prepares `c` to convert `from` to `to`, appending to `out`. `ropts` are the input's reading
 * options (NULL = defaults; add `from->multi_flag` for several values); `wopts` the writer's
 * (see wk_writer_init); `max_buffer` caps the unpacker's buffer (0 = default). When `to`
 * holds only valid UTF-8 strings, MessagePack strings are checked by the writer, which then
 * fails at the input offset of the bad byte. Cannot fail; allocates on first use.
 */
WK_API void wk_converter_init(wk_converter *c, const wk_format *from, const wk_format *to,
                              const wk_read_opts *ropts, const wk_json_write_opts *wopts,
                              size_t max_buffer, wk_buf *out);
/** Gives the converter the next chunk of input (as wk_unpacker_feed). */
WK_API wk_status wk_converter_feed(wk_converter *c, const void *data, size_t len);
/** Says that no input follows the current chunk. */
WK_API void wk_converter_finish(wk_converter *c);
/**
 * Converts the next value. Returns WK_OK (its whole output appended to `out`), WK_ERR_AGAIN
 * (feed the next chunk), WK_ERR_EOF (the input is finished and used up), or a latched error;
 * on an error `out` is cut back to the end of the last complete value. The error is the
 * input's (bad input, or a value the output format cannot hold: WK_ERR_TYPE, WK_ERR_RANGE,
 * WK_ERR_UTF8 from the writer, at the input offset, where the input format can place it:
 * MessagePack, and trees, placed at the value's end) or the output's (the writer's
 * WK_ERR_LIMIT, WK_ERR_NOMEM, ..., and a refusal JSON events cannot place, at the output
 * offset): see wk_converter_error.
 */
WK_API wk_status wk_converter_next(wk_converter *c);
/** Bytes at the start of `out` that hold complete values: what may be sent on between calls.
 *  Past them lie the bytes written so far of a value not complete yet. */
WK_API size_t wk_converter_done(const wk_converter *c);
/** Tells the converter that the caller removed the first `n` bytes of `out` (sent them on),
 *  moving the rest to the front. `n` may pass wk_converter_done (a large value streamed out):
 *  an error then cuts `out` back to 0. */
WK_API void wk_converter_drained(wk_converter *c, size_t n);
/** Fills `err` with the latched error and returns its code (WK_OK when none). `line`/`col`
 *  (may be NULL) get the input position for a text input (else 0); `output` (may be NULL)
 *  is set true when the error is the output's (offset into the output). */
WK_API wk_status wk_converter_error(const wk_converter *c, wk_error *err, uint64_t *line,
                                    uint64_t *col, bool *output);
/** Releases what the converter holds (not `out`). */
WK_API void wk_converter_free(wk_converter *c);

/**
 * One-shot conversion of `in[0..len)` from `from` to `to`, appended to `out`, through
 * wk_converter (the path `wirekit convert` takes). `ropts` as for the input format's buffer
 * reader (JSON: WK_JSON_READ_ALLOW_BOM and _ALLOW_TRAILING work here too); `wopts` as for
 * wk_writer_init. Returns WK_OK, the input's error (offset into `in`) or the output's (offset
 * into `out`); `out` then holds the complete values before the failing one. Thread-safe.
 */
WK_API wk_status wk_convert(const wk_format *from, const wk_format *to, const void *in,
                            size_t len, const wk_read_opts *ropts,
                            const wk_json_write_opts *wopts, wk_buf *out, wk_error *err);

#ifdef __cplusplus
}
#endif
#endif
