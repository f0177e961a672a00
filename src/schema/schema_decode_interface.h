/*
 * State and helpers of the schema decoder shared by its two instantiations (generic events,
 * decode_events in schema_decode.c, and fused MessagePack, decode_mp in
 * formats/msgpack/schema_mp.c: both over schema_decode_loop_interface.h): the frame stack,
 * storing one decoded value into a field, array growth, error reports with the field path.
 * The helpers are in schema_decode_util.c.
 */
#ifndef WK_SCHEMA_DECODE_UTIL_H
#define WK_SCHEMA_DECODE_UTIL_H

#include "schema/schema_plan_interface.h"

/* One open struct or array of the decode (the loop's explicit stack). */
typedef struct wk__dec_frame {
    const wk_schema *s;            /* struct frame; NULL for an array frame */
    const wk__schema_index *ix;
    uint8_t *base;                 /* struct: the object */
    uint64_t seen;                 /* struct: required-field bits seen */
    uint32_t next;                 /* struct: the field expected next */
    int32_t cur;                   /* struct: field being decoded, -1 between fields */
    const wk_schema_type *elem;    /* array: element type */
    uint8_t *items;                /* array: elements so far */
    size_t count;                  /* array: elements so far */
    size_t cap;                    /* array: room in `items` */
    size_t declared;               /* array: count announced by the reader, or SIZE_MAX */
    void **dst_items;              /* array: where the items pointer goes when it ends */
    size_t *dst_count;             /* array: where the count goes when it ends */
} wk__dec_frame;

/* The decode's state: where nodes and strings go, where failures go, the frame stack. */
typedef struct wk__dec {
    wk_arena *arena;       /* strings, arrays and wk_value trees go here */
    wk_schema_error *err;  /* the caller's report, or NULL */
    uint32_t depth;        /* frames open in `stack` */
    uint32_t limit;        /* the nesting limit (wk__schema_depth_limit) */
    unsigned flags;        /* the options' WK_SCHEMA_* flags */
    wk__dec_frame stack[WK__SCHEMA_MAX_DEPTH];
} wk__dec;

/** Records an error (code, offset, static message, current field path); returns `code`. */
wk_status wk__dec_fail(wk__dec *d, wk_status code, size_t offset, const char *msg);

/** Writes the current field path into d->err->path. */
void wk__dec_path(wk__dec *d);

/** Stores the value whose first event is `ev` into `dst` (type `t`, field flags `flags`).
 *  Containers push a frame; scalars are complete on return. `count_dst`: the count member of
 *  an array. */
wk_status wk__dec_scalar(wk__dec *d, const wk_schema_type *t, uint8_t *dst, uint32_t flags,
                         size_t *count_dst, const wk_event *ev, size_t voff);

/** Closes the top frame at its WK_EV_END: checks required fields, stores array results. */
wk_status wk__dec_pop(wk__dec *d, size_t voff);

/** Room for the next element of array frame `f` (zeroed). NULL with *st set on failure. */
uint8_t *wk__dec_array_slot(wk__dec *d, wk__dec_frame *f, size_t voff, wk_status *st);

/** Builds a wk_value whose first event `ev` has been read from `src` into `out`. */
wk_status wk__dec_value_tree(wk__dec *d, const wk_source *src, const wk_event *ev,
                             wk_value *out, size_t voff);

/** Parses an RFC 3339 date-time ("2024-01-02T03:04:05.123Z") into a timestamp. */
bool wk__schema_parse_rfc3339(const char *s, size_t len, wk_timestamp *out);

/** Decodes standard base64 (padding optional) into the arena. */
bool wk__schema_base64_decode(wk_arena *a, const char *s, size_t len, wk_slice *out);

#endif
