/*
 * The MessagePack writer's out-of-line half: growth and error latching (the slow path of the
 * inline writers in msgpack.h), extensions and timestamps, and the event sink. Flow: typed
 * calls or events (any source, through wk_mp_writer_sink) -> this writer -> MessagePack bytes
 * in the caller's wk_buf.
 *
 * The sink must accept containers whose size is unknown when they open (JSON input). It
 * reserves a five-byte header (the widest) and, when WK_EV_END arrives, writes the header.
 * A small container (at most SMALL_BODY bytes of contents, none of them left wide) gets its
 * shortest header at once, its contents moved down over the gap. A larger one keeps the
 * widest header (array32/map32) with its true count, and when the outermost container closes
 * one pass over the value (compact) rewrites every such header to the shortest form and moves
 * the bytes down. So every byte moves at most once per enclosing small container plus once,
 * which keeps a huge value linear (moving each container's contents at its end cost
 * O(bytes x nesting)), and the output is byte for byte what shortest headers written up front
 * give. The writer never writes a non-shortest header itself, so an array32/map32 header with
 * a count below 65536 in the value is always one left wide: no per-container records.
 */
#include <string.h>

#include "formats/msgpack/mp_token.h"
#include "wirekit/msgpack.h"

#define SINK_MAX_DEPTH 65536u
#define COUNT_UNKNOWN64 UINT64_MAX
/* Contents up to this size get their shortest header when their container closes; a byte is
 * then moved at most once per enclosing container this small, and those nest at most this
 * deep around it (each adds a byte). */
#define SMALL_BODY 64u

/* Latches an error (code, static msg, at the current size): every later write is a no-op
 * and the status stays. */
WK_API void wk_mp_writer_fail(wk_mp_writer *w, wk_status code, const char *msg)
{
    wk__mp_latch(w, code, msg);
}

/* The inline writers' slow path: syncs out->len to pos, makes room for n more bytes, and
 * gives the new write window (pos, end), or the failure (WK_ERR_LIMIT for a fixed or capped
 * buffer, WK_ERR_NOMEM) with the window unchanged.
 * Growth takes the buffer and the cursor and hands the new cursor and end back by value, never
 * the writer's address: a byte store into the buffer may, for all the compiler knows, change
 * any object whose address has escaped, so a writer whose address reached an out-of-line call
 * would have pos/lim stored and reloaded around every inline write. With nothing escaping, a
 * writer on the caller's stack stays in registers across a run of writes (instructions per
 * seed encode: wirekit bench --suite msgpack --case 'seed encode' --callgrind). */
WK_API wk_mp_grown wk_mp_writer_grow(wk_buf *out, uint8_t *pos, size_t n)
{
    wk_mp_grown g;
    if (pos != NULL) {
        out->len = (size_t)(pos - out->data);
    }
    /* A growable buffer gets at least the 32 bytes of slack the one-compare check needs, so
     * the inline path does not keep landing here near the end of the capacity; a fixed (or
     * capped) buffer is filled exactly. */
    wk_status st = WK_ERR_LIMIT;
    if (!out->fixed && n < WK__MP_SLACK) {
        st = wk_buf_reserve(out, WK__MP_SLACK);
    }
    if (st == WK_ERR_LIMIT) {
        st = wk_buf_reserve(out, n);
    }
    if (st != WK_OK) {
        g.pos = pos;
        g.end = pos;
        g.status = st;
        g.msg = st == WK_ERR_LIMIT ? "output buffer full (fixed size or cap reached)"
                                   : "out of memory growing the output buffer";
        return g;
    }
    g.pos = out->data + out->len;
    g.end = out->data + out->cap;
    g.status = WK_OK;
    g.msg = NULL;
    return g;
}

/* Syncs the buffer's length with the writer's cursor; returns the writer's status. */
WK_API wk_status wk_mp_writer_flush(wk_mp_writer *w)
{
    if (w->pos != NULL) {
        w->out->len = (size_t)(w->pos - w->out->data);
    }
    return w->status;
}

/* Frees the sink's heap frame stack (allocated on the buffer's allocator). */
WK_API void wk_mp_writer_free_frames(wk_buf *out, wk_mp_frame *frames, uint32_t cap)
{
    wk_free(out->alloc, frames, (size_t)cap * sizeof(wk_mp_frame));
}

/* The header of an extension of `len` bytes: fixext 1/2/4/8/16 when the length is one of
 * those, else ext 8/16/32; WK_ERR_RANGE (latched) past 2^32-1 bytes. */
WK_API void wk_mp_writer_ext_header(wk_mp_writer *w, int8_t type, size_t len)
{
    if (len > UINT32_MAX) {
        wk_mp_writer_fail(w, WK_ERR_RANGE, "extension longer than 2^32-1 bytes");
        return;
    }
    if (!WK__MP_SMALL(w, wk_mp_sizeof_ext_header((uint32_t)len))) {
        return;
    }
    uint8_t *p = w->pos;
    switch (len) {
    case 1: *p++ = 0xd4; break;
    case 2: *p++ = 0xd5; break;
    case 4: *p++ = 0xd6; break;
    case 8: *p++ = 0xd7; break;
    case 16: *p++ = 0xd8; break;
    default:
        if (len <= 0xff) {
            *p++ = 0xc7;
            *p++ = (uint8_t)len;
        } else if (len <= 0xffff) {
            *p++ = 0xc8;
            p = wk__mp_store16(p, (uint16_t)len);
        } else {
            *p++ = 0xc9;
            p = wk__mp_store32(p, (uint32_t)len);
        }
    }
    *p++ = (uint8_t)type;
    w->pos = p;
}

/* A whole extension (header and the bytes p[0..len)), or nothing when it does not fit. */
WK_API void wk_mp_writer_ext(wk_mp_writer *w, int8_t type, const void *p, size_t len)
{
    /* Room for header and data first, so that an ext that does not fit leaves nothing. */
    if (len <= UINT32_MAX && len <= SIZE_MAX - 6 &&
        !wk__mp_room(w, wk_mp_sizeof_ext_header((uint32_t)len) + len)) {
        return;
    }
    wk_mp_writer_ext_header(w, type, len);
    if (w->status == WK_OK) {
        wk_mp_writer_raw(w, p, len);
    }
}

/* The timestamp extension (type -1) in its shortest form: 32-bit seconds, 34-bit seconds
 * with 30-bit nanoseconds, or the 96-bit form. WK_ERR_RANGE (latched) when nsec >= 10^9. */
WK_API void wk_mp_writer_timestamp(wk_mp_writer *w, int64_t sec, uint32_t nsec)
{
    if (nsec > 999999999u) {
        wk_mp_writer_fail(w, WK_ERR_RANGE, "timestamp nanoseconds must be below 1000000000");
        return;
    }
    if (!WK__MP_SMALL(w, wk_mp_sizeof_timestamp(sec, nsec))) {
        return;
    }
    /* timestamp 32 (fixext 4: seconds only), timestamp 64 (fixext 8: 30-bit nanoseconds
     * above 34-bit seconds), else timestamp 96 (ext 8 of 12 bytes: nanoseconds, then signed
     * 64-bit seconds), as the MessagePack spec lays them out */
    uint8_t *p = w->pos;
    if (sec >= 0 && (uint64_t)sec >> 34 == 0) {
        if (nsec == 0 && (uint64_t)sec >> 32 == 0) {
            p[0] = 0xd6;
            p[1] = 0xff;
            w->pos = wk__mp_store32(p + 2, (uint32_t)sec);
        } else {
            p[0] = 0xd7;
            p[1] = 0xff;
            w->pos = wk__mp_store64(p + 2, ((uint64_t)nsec << 34) | (uint64_t)sec);
        }
        return;
    }
    p[0] = 0xc7;
    p[1] = 12;
    p[2] = 0xff;
    p = wk__mp_store32(p + 3, nsec);
    w->pos = wk__mp_store64(p, (uint64_t)sec);
}

/* ---- the event sink ---------------------------------------------------------------------- */

/* The sink's frame stack: inline, or on the heap once deeper. */
static wk_mp_frame *frames_of(wk_mp_writer *w)
{
    return w->frames != NULL ? w->frames : w->inline_frames;
}

/* The sink opens a container: its header is written now when the count is known, else five
 * bytes are reserved for it (close_frame writes it). False, latched, past SINK_MAX_DEPTH
 * containers or when the stack cannot grow. */
static bool push_frame(wk_mp_writer *w, bool is_map, uint32_t count)
{
    if (w->depth == SINK_MAX_DEPTH) {
        wk_mp_writer_fail(w, WK_ERR_DEPTH, "more than 65536 containers open in the writer");
        return false;
    }
    if (w->depth == w->frames_cap) {
        size_t old = (size_t)w->frames_cap * sizeof(wk_mp_frame);
        uint32_t ncap = w->frames_cap * 2;
        wk_mp_frame *nf;
        if (w->frames == NULL) {
            nf = wk_alloc(w->out->alloc, (size_t)ncap * sizeof(wk_mp_frame));
            if (nf != NULL) {
                memcpy(nf, w->inline_frames, old);
            }
        } else {
            nf = wk_realloc(w->out->alloc, w->frames, old, (size_t)ncap * sizeof(wk_mp_frame));
        }
        if (nf == NULL) {
            wk_mp_writer_fail(w, WK_ERR_NOMEM, "out of memory for the writer's container stack");
            return false;
        }
        w->frames = nf;
        w->frames_cap = ncap;
    }
    wk_mp_frame *f = &frames_of(w)[w->depth];
    f->is_map = is_map;
    f->wide = 0;
    f->seen = 0;
    if (count == WK_COUNT_UNKNOWN) {
        if (!wk__mp_room(w, 5)) {
            return false;
        }
        f->header = wk_mp_writer_size(w);
        f->declared = COUNT_UNKNOWN64;
        w->pos += 5; /* placeholder, rewritten when the container ends */
    } else {
        f->header = wk_mp_writer_size(w); /* where compact starts, when this is the outermost */
        f->declared = is_map ? 2 * (uint64_t)count : count;
        if (is_map) {
            wk_mp_writer_begin_map(w, count);
        } else {
            wk_mp_writer_begin_array(w, count);
        }
    }
    w->depth++;
    return w->status == WK_OK;
}

/* One pass over p[0..end) (whole MessagePack values written by this writer): every
 * array32/map32 header whose count fits a shorter form, which only the sink leaves (see the
 * file comment), is rewritten to the shortest form and the bytes after it are moved down.
 * Returns the new end. Linear: each token is looked at once and moved at most once. */
static uint8_t *compact(uint8_t *p, uint8_t *end)
{
    uint8_t *d = p;
    while (p < end) {
        uint8_t b = p[0];
        uint64_t len;
        if ((b == 0xdd || b == 0xdf) && wk__mp_load32(p + 1) <= UINT16_MAX) {
            uint32_t n = wk__mp_load32(p + 1);
            uint8_t hdr[3];
            uint8_t *he = b == 0xdf ? wk_mp_encode_map_header(hdr, n)
                                    : wk_mp_encode_array_header(hdr, n);
            memcpy(d, hdr, (size_t)(he - hdr));
            d += he - hdr;
            p += 5;
            continue;
        }
        if (b >= 0x80 && b <= 0x9f) {
            len = 1; /* fixmap, fixarray: the elements follow as tokens */
        } else if (b >= 0xdc && b <= 0xdf) {
            len = b == 0xdc || b == 0xde ? 3 : 5;
        } else {
            len = wk__mp_token_need(p, (size_t)(end - p)); /* a scalar, payload included */
        }
        if (d != p) {
            memmove(d, p, (size_t)len);
        }
        d += len;
        p += len;
    }
    return d;
}

/* The sink closes the innermost container: a declared count must have been met; an unknown
 * one gets its header now (see the file comment: shortest when small, else widest until the
 * outermost container closes and compact runs). Failures are latched. */
static void close_frame(wk_mp_writer *w)
{
    if (w->depth == 0) {
        wk_mp_writer_fail(w, WK_ERR_STATE, "end of container with no container open");
        return;
    }
    wk_mp_frame *f = &frames_of(w)[w->depth - 1];
    if (f->is_map && (f->seen & 1) != 0) {
        wk_mp_writer_fail(w, WK_ERR_STATE, "map ended after a key without its value");
        return;
    }
    bool outer = w->depth == 1;
    bool wide = f->wide != 0; /* a header inside was left wide */
    if (f->declared != COUNT_UNKNOWN64) {
        if (f->seen != f->declared) {
            wk_mp_writer_fail(w, WK_ERR_STATE, "container ended before its declared count");
            return;
        }
    } else {
        uint64_t n = f->is_map ? f->seen / 2 : f->seen;
        if (n > UINT32_MAX) {
            wk_mp_writer_fail(w, WK_ERR_RANGE, "container of more than 2^32-1 elements");
            return;
        }
        uint8_t *base = w->out->data + f->header;
        size_t body = (size_t)(w->pos - base) - 5;
        if (!wide && (outer || body <= SMALL_BODY)) {
            /* the shortest header now, the contents moved down over the rest of the five
             * reserved bytes */
            uint8_t hdr[5];
            uint8_t *he = f->is_map ? wk_mp_encode_map_header(hdr, (uint32_t)n)
                                    : wk_mp_encode_array_header(hdr, (uint32_t)n);
            size_t hlen = (size_t)(he - hdr);
            if (hlen != 5) {
                memmove(base + hlen, base + 5, body);
                w->pos -= 5 - hlen;
            }
            memcpy(base, hdr, hlen);
        } else {
            base[0] = f->is_map ? 0xdf : 0xdd; /* widest, the true count: compact shortens it */
            wk__mp_store32(base + 1, (uint32_t)n);
            wide = true;
        }
    }
    if (outer && wide) {
        w->pos = compact(w->out->data + f->header, w->pos);
    } else if (wide) {
        frames_of(w)[w->depth - 2].wide = 1;
    }
    w->depth--;
}

/* The wk_sink adapter: one event, counted against its container's declared count, written
 * with the typed calls. Raw numbers become strings (MessagePack has no such type). */
static wk_status sink_event(void *self, const wk_event *ev)
{
    wk_mp_writer *w = self;
    if (w->status != WK_OK) {
        return w->status;
    }
    if (ev->type == WK_EV_END) {
        close_frame(w);
        return w->status;
    }
    /* every item counts against its container's declared count (a map's keys and values
     * alike) */
    if (w->depth > 0) {
        wk_mp_frame *f = &frames_of(w)[w->depth - 1];
        if (f->seen == f->declared) {
            wk_mp_writer_fail(w, WK_ERR_STATE, "more elements than the container's count");
            return w->status;
        }
        f->seen++;
    }
    switch (ev->type) {
    case WK_EV_NIL: wk_mp_writer_nil(w); break;
    case WK_EV_BOOL: wk_mp_writer_bool(w, ev->v.b); break;
    case WK_EV_INT: wk_mp_writer_int(w, ev->v.i); break;
    case WK_EV_UINT: wk_mp_writer_uint(w, ev->v.u); break;
    case WK_EV_FLOAT:
        if (ev->f32) {
            wk_mp_writer_float(w, (float)ev->v.f);
        } else {
            wk_mp_writer_double(w, ev->v.f);
        }
        break;
    case WK_EV_STR:
    case WK_EV_RAWNUM: wk_mp_writer_str(w, ev->v.str.ptr, ev->v.str.len); break;
    case WK_EV_BIN: wk_mp_writer_bin(w, ev->v.str.ptr, ev->v.str.len); break;
    case WK_EV_ARRAY: push_frame(w, false, ev->v.count); break;
    case WK_EV_MAP: push_frame(w, true, ev->v.count); break;
    case WK_EV_EXT: wk_mp_writer_ext(w, ev->v.ext.type, ev->v.ext.ptr, ev->v.ext.len); break;
    case WK_EV_TIMESTAMP: wk_mp_writer_timestamp(w, ev->v.ts.sec, ev->v.ts.nsec); break;
    default: wk_mp_writer_fail(w, WK_ERR_ARG, "unknown event type"); break;
    }
    return w->status;
}

/* The writer's status with its offset (where it failed, else the size written) and message. */
static wk_status sink_error(const void *self, wk_error *err)
{
    const wk_mp_writer *w = self;
    return wk_error_set(err, w->status, w->status != WK_OK ? w->err_offset : wk_mp_writer_size(w),
                 w->msg);
}

/* Fills sink so that its events go to w; w must outlive it and be flushed after the last. */
WK_API void wk_mp_writer_sink(wk_mp_writer *w, wk_sink *sink)
{
    sink->event = sink_event;
    sink->error = sink_error;
    sink->self = w;
}
