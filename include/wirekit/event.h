/*
 * The event vocabulary every wire format speaks.
 *
 * A format is a reader that turns bytes into events and a writer that turns events back into
 * bytes. The value tree, schemas and transcoding sit on top of events only, so no module knows
 * another format's byte layout.
 *
 * Stream shape: scalars are single events; a container is WK_EV_ARRAY or WK_EV_MAP (with its
 * element count, or WK_COUNT_UNKNOWN when the format does not say it up front, as in JSON),
 * then its elements (a map gives key, value, key, value...), then WK_EV_END. Readers always
 * emit WK_EV_END; writers always expect it.
 */
#ifndef WIREKIT_EVENT_H
#define WIREKIT_EVENT_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Element count of a container whose size is not known when it begins. */
#define WK_COUNT_UNKNOWN UINT32_MAX

/** Event types (see the stream shape above). */
typedef enum wk_event_type {
    WK_EV_NIL = 0,
    WK_EV_BOOL,
    WK_EV_INT,       /**< signed: v.i (readers use it for negative values only) */
    WK_EV_UINT,      /**< unsigned: v.u (readers use it for non-negative integers) */
    WK_EV_FLOAT,     /**< v.f; `f32` tells the source width where known */
    WK_EV_STR,       /**< v.str: UTF-8 bytes (not NUL-terminated) */
    WK_EV_BIN,       /**< v.str: raw bytes */
    WK_EV_ARRAY,     /**< v.count elements follow, then WK_EV_END */
    WK_EV_MAP,       /**< v.count key/value pairs follow, then WK_EV_END */
    WK_EV_END,       /**< closes the innermost open array or map */
    WK_EV_EXT,       /**< v.ext: application extension (type, bytes) */
    WK_EV_TIMESTAMP, /**< v.ts: seconds since the Unix epoch and nanoseconds */
    WK_EV_RAWNUM     /**< v.str: a number as exact decimal text (JSON raw-number mode, PostgreSQL
                        numeric). Writers with a textual number form (JSON) copy it verbatim;
                        binary writers (MessagePack) write it as a string. */
} wk_event_type;

/** One event: its type and, for scalars and container openings, its payload. */
typedef struct wk_event {
    wk_event_type type; /**< which event */
    bool f32;           /**< WK_EV_FLOAT: the value came from (or is meant for) a float32 */
    union {
        bool b;
        int64_t i;
        uint64_t u;
        double f;
        wk_slice str; /* STR, BIN, RAWNUM */
        uint32_t count;
        struct {
            int8_t type;
            const uint8_t *ptr;
            uint32_t len;
        } ext;
        struct {
            int64_t sec;
            uint32_t nsec;
        } ts;
    } v; /**< the payload, by type */
} wk_event;

/* ---- reading options: one shape for every reader and tree decoder ------------------------ */

/* Flags of wk_read_opts that mean the same in every format. Format-specific flags
 * (WK_JSON_READ_*) use the low byte; these use the next one. Zero is the default. */
#define WK_READ_COPY_STRINGS 0x100u /**< tree decode: copy str/bin/ext bytes into the arena */
#define WK_READ_STRICT_UTF8 0x200u  /**< MessagePack: reject str values that are not UTF-8
                                       (JSON text is always checked) */

/** Default nesting limit of every reader and tree decoder. */
#define WK_READ_DEFAULT_MAX_DEPTH 512u

/**
 * Options of every reader (wk_mp_reader_init, wk_json_reader_init), validator (wk_mp_check,
 * wk_mp_validate) and tree decoder (wk_mp_decode_value, wk_json_decode_value,
 * wk_value_decode). A NULL pointer and a zero-initialised struct both mean the defaults.
 * Fields a format has no use for are ignored by it.
 */
typedef struct wk_read_opts {
    unsigned flags;            /**< WK_READ_* | the format's own flags (WK_JSON_READ_*) */
    uint32_t max_depth;        /**< most containers open at once; 0 = WK_READ_DEFAULT_MAX_DEPTH */
    const wk_allocator *alloc; /**< scratch memory and deep nesting stacks; NULL = libc */
    void *reserved[2];         /**< zero; room to grow without breaking the ABI */
} wk_read_opts;

/**
 * A reader seen through events: `next` fills `ev` and returns WK_OK, WK_ERR_EOF after the last
 * top-level value, or an error (latched: later calls return it again). `offset` is the byte
 * position of the next unread byte; `error` reports the latched error (code, offset, static
 * message). Format readers provide a function that fills one of these
 * (e.g. wk_mp_reader_source).
 */
typedef struct wk_source {
    /** Reads the next event: WK_OK, WK_ERR_EOF after the last value, or the latched error. */
    wk_status (*next)(void *self, wk_event *ev);
    /** Byte position of the next unread byte. */
    size_t (*offset)(const void *self);
    wk_status (*error)(const void *self, wk_error *err); /**< fills *err, returns its code */
    void *self; /**< the reader object */
} wk_source;

/**
 * A writer seen through events: `event` consumes one event; the writer latches its first
 * error and keeps returning it (sticky); `error` reports it. Format writers provide a
 * function that fills one of these (e.g. wk_mp_writer_sink).
 */
typedef struct wk_sink {
    /** Consumes one event; returns WK_OK or the latched error. */
    wk_status (*event)(void *self, const wk_event *ev);
    wk_status (*error)(const void *self, wk_error *err); /**< fills *err, returns its code */
    void *self; /**< the writer object */
} wk_sink;

/** Copies every event from `src` to `dst` until the source reports WK_ERR_EOF (returns WK_OK)
 *  or either side fails (returns that status; `err` gets that side's latched error). */
WK_API wk_status wk_transcode(const wk_source *src, const wk_sink *dst, wk_error *err);

#ifdef __cplusplus
}
#endif
#endif
