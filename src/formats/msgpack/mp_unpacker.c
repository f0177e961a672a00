/*
 * The incremental MessagePack unpacker. Framing (where does the next top-level value end?)
 * is a resumable version of the validate-only scan: the same wk__mp_token decodes each
 * header, and the "elements left" stack of the open containers lives in the unpacker, so a
 * value cut by the end of a chunk is framed on from the token where it stopped, never from
 * its start. A token the chunk cuts short (a header, a payload, or a count larger than the
 * bytes present, which the token decoder reports the same way) simply waits for more input.
 *
 * A value that lies inside the chunk takes the fast path first: the buffer checker
 * (wk_mp_check) runs on the rest of the chunk, succeeds exactly when the value is whole there,
 * and the value is handed out in place in one pass; a value reached with fewer bytes left than
 * values have been taking is framed first. Only the value that the chunk cuts (one per chunk)
 * is gathered, and framed on as the next chunks are appended.
 *
 * Trees (see mp_tree.h) are built by the buffer decoder's own loop in a form that pauses: on
 * the chunk in place, and when the chunk cuts the value, on from the token where it stopped
 * as the gathered bytes grow, so no byte is decoded twice. A value expected to be cut (fewer
 * bytes left than values have been taking) is gathered first and built in the tree's own
 * block from its start; one that was not expected to be cut moves its partial tree out of the
 * caller's arena when it pauses. With chunks under WK_STREAM_TREE_MIN_CHUNK bytes, and for a
 * tree that would outgrow the cap in the block, the value is framed and decoded once whole.
 *
 * Errors are never worded here: when framing meets a bad byte, or input ends inside a value,
 * the buffer scan (wk__mp_scan, the scan behind wk_mp_check) runs over the value's bytes, so
 * status, message and offset are the buffer reader's by construction. The bytes present
 * cover everything the buffer reader would look at up to the error, because framing never
 * passes a header whose count the present bytes cannot back.
 *
 * Flow: chunks -> the feed (stream/feed_interface.h) -> framing (frame) or the pausing tree
 * build (mp_tree.c) -> a value's bytes, a tree, or (through a wk_mp_reader) events.
 *
 * Contents, in order:
 *   the unpacker       init, free, feed, finish, error, offset, buffered
 *   framing            fail_as_buffer_reader (errors in the buffer reader's words), push,
 *                      frame (the resumable scan), absorb_small_chunk, expect,
 *                      wait_for_token, frame_gathered, frame_from_start
 *   raw values         hand_out, take
 *   trees              tree_failed, decode_taken, decode_gathered, frame_and_decode, append,
 *                      resume_tree, take_tree
 *   the takes          next_span, next_tree, next_events and their WK_API entry points
 */
#include "formats/msgpack/mp_token.h"
#include "stream/feed_interface.h"
#include "formats/msgpack/mp_tree.h"
#include "wirekit/utf8.h"

#define MP_STACK_MIN 16u

#define MSG_ARENA_CHANGED "the arena was changed while a value was paused in it"

/* The nesting limit of the options, or the MessagePack default. */
static uint32_t max_depth_of(const wk_mp_unpacker *u)
{
    return u->opts.max_depth != 0 ? u->opts.max_depth : WK_MP_DEFAULT_MAX_DEPTH;
}

/* An empty unpacker (wirekit/stream.h) that buffers at most max_buffer bytes of a value cut
 * by chunk ends (stream/feed_interface.h). The options are copied. */
WK_API void wk_mp_unpacker_init(wk_mp_unpacker *u, const wk_read_opts *opts, size_t max_buffer)
{
    memset(u, 0, sizeof *u);
    if (opts != NULL) {
        u->opts = *opts;
    }
    wk__feed_init(&u->f, u->opts.alloc, max_buffer);
}

/* Frees the buffered bytes, a paused tree build (mp_tree.h) and framing's count stack. */
WK_API void wk_mp_unpacker_free(wk_mp_unpacker *u)
{
    wk__feed_free(&u->f);
    wk__mp_tree_free(u->tree);
    u->tree = NULL;
    if (u->stack != NULL) {
        wk_free(u->opts.alloc, u->stack, (size_t)u->stack_cap * sizeof(uint64_t));
    }
    u->stack = NULL;
    u->stack_cap = 0;
}

/* The next chunk, not copied: valid until a take returns WK_ERR_AGAIN (stream/feed.c). */
WK_API wk_status wk_mp_unpacker_feed(wk_mp_unpacker *u, const void *data, size_t len)
{
    return wk__feed_feed(&u->f, data, len);
}

/* No more chunks: a value cut by the end of the stream is now an error. */
WK_API void wk_mp_unpacker_finish(wk_mp_unpacker *u)
{
    u->f.finished = true;
}

/* The latched error (offset from the stream's start) into err; returns its status. */
WK_API wk_status wk_mp_unpacker_error(const wk_mp_unpacker *u, wk_error *err)
{
    if (err != NULL) {
        *err = u->f.err;
    }
    return u->f.err.code;
}

/* Stream offset of the next byte not handed out. */
WK_API uint64_t wk_mp_unpacker_offset(const wk_mp_unpacker *u)
{
    return wk__feed_offset(&u->f);
}

/* Bytes held in the internal buffer for a value not yet taken. */
WK_API size_t wk_mp_unpacker_buffered(const wk_mp_unpacker *u)
{
    return wk__feed_buffered(&u->f);
}

/* The buffer reader's verdict on the value at base[0..avail): latches it. `fallback` is used
 * when the scan finds nothing wrong (only an allocation failure while framing). */
static wk_status fail_as_buffer_reader(wk_mp_unpacker *u, const uint8_t *base, size_t avail,
                                       wk_status fallback, const char *fallback_msg)
{
    const uint8_t *p = base;
    const uint8_t *err_at = base;
    const char *msg = NULL;
    uint64_t off = wk__feed_value_off(&u->f);
    if (fallback == WK_ERR_NOMEM) { /* framing's own stack: not a property of the input */
        return wk__feed_fail(&u->f, fallback, off, fallback_msg);
    }
    wk_status st = wk__mp_scan(&p, base + avail, 0, max_depth_of(u),
                               (u->opts.flags & WK_READ_STRICT_UTF8) != 0, u->opts.alloc,
                               &err_at, &msg);
    if (st == WK_OK) {
        return wk__feed_fail(&u->f, fallback, off, fallback_msg);
    }
    return wk__feed_fail(&u->f, st, off + (uint64_t)(err_at - base), msg);
}

/* Framing: opens a container with `left` items still to frame, on a count stack that starts
 * at MP_STACK_MIN entries and doubles (the options' allocator). False when out of memory. */
static bool push(wk_mp_unpacker *u, uint64_t left)
{
    if (u->depth == u->stack_cap) {
        uint32_t ncap = u->stack_cap != 0 ? u->stack_cap * 2 : MP_STACK_MIN;
        uint64_t *n = u->stack == NULL
                          ? wk_alloc(u->opts.alloc, (size_t)ncap * sizeof(uint64_t))
                          : wk_realloc(u->opts.alloc, u->stack,
                                       (size_t)u->stack_cap * sizeof(uint64_t),
                                       (size_t)ncap * sizeof(uint64_t));
        if (n == NULL) {
            return false;
        }
        u->stack = n;
        u->stack_cap = ncap;
    }
    u->stack[u->depth++] = left;
    return true;
}

/*
 * Frames the value at base[0..avail) from offset f.scan on. Returns WK_OK with *vlen = the
 * value's size, WK_ERR_AGAIN (f.scan remembers the token to resume at), WK_ERR_NOMEM, or
 * another status when a token is bad (the caller then asks the buffer scan for the details).
 */
static wk_status frame(wk_mp_unpacker *u, const uint8_t *base, size_t avail, size_t *vlen)
{
    if (avail < u->f.need) {
        return WK_ERR_AGAIN; /* the token framing stopped at is still cut short */
    }
    const uint8_t *p = base + u->f.scan;
    const uint8_t *end = base + avail;
    uint32_t room = max_depth_of(u);
    bool strict = (u->opts.flags & WK_READ_STRICT_UTF8) != 0;
    uint32_t depth = u->depth; /* in locals while the loop runs; stored back on every exit */
    uint64_t left = u->left;
    wk_status st = WK_ERR_AGAIN;
    while (p < end) {
        const uint8_t *q = p;
        uint8_t b = *p;
        /* One-byte values and fixstr inline: most of real data. The rest (and every check
         * that can fail) goes through the token decoder. */
        if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) {
            q = p + 1;
            goto value_done;
        }
        if (b >= 0xa0 && b <= 0xbf && !strict && (size_t)(end - p) - 1 >= (size_t)(b & 0x1fu)) {
            q = p + 1 + (b & 0x1fu);
            goto value_done;
        }
        wk_event ev;
        const char *msg;
        st = wk__mp_token(&q, end, &ev, &msg);
        if (st == WK_ERR_TRUNCATED) { /* cut by the end of the bytes present: wait for more */
            uint64_t here = (uint64_t)(end - p);
            uint64_t need = wk__mp_token_need(p, (size_t)here);
            u->f.need = (uint64_t)(p - base) + (need > here ? need : here + 1);
            st = WK_ERR_AGAIN;
            break;
        }
        if (st != WK_OK) {
            goto out;
        }
        /* a container with elements opens a level (its count of elements left); an empty
         * one is a complete value */
        if (ev.type == WK_EV_ARRAY || ev.type == WK_EV_MAP) {
            if (depth >= room) {
                st = WK_ERR_DEPTH;
                goto out;
            }
            uint64_t kids = ev.type == WK_EV_MAP ? 2 * (uint64_t)ev.v.count : ev.v.count;
            if (kids != 0) {
                u->depth = depth;
                if (!push(u, left)) {
                    st = WK_ERR_NOMEM;
                    goto out;
                }
                depth++;
                left = kids;
                p = q;
                continue;
            }
        } else if (ev.type == WK_EV_STR && strict && !wk_utf8_valid(ev.v.str.ptr, ev.v.str.len,
                                                                    NULL)) {
            st = WK_ERR_UTF8;
            goto out;
        }
    value_done:
        p = q;
        for (;;) { /* a value is complete: count it, closing what it completes */
            if (depth == 0) {
                *vlen = (size_t)(p - base);
                u->f.scan = 0;
                st = WK_OK;
                goto out;
            }
            if (--left != 0) {
                break;
            }
            left = u->stack[--depth];
        }
    }
    u->f.scan = (size_t)(p - base);
    st = WK_ERR_AGAIN;
out:
    u->depth = depth;
    u->left = left;
    return st;
}

/* Chunks smaller than this get no pausing tree build: with a run per token or two, the runs'
 * entry and exit would cost more than framing the value token by token and decoding it once
 * it is whole, which such chunks get instead (a build may lower it). */
#ifndef WK_STREAM_TREE_MIN_CHUNK
#define WK_STREAM_TREE_MIN_CHUNK 64u
#endif

/* How the value in the gather buffer is being read. */
enum cut_mode {
    CUT_FRAMED, /* framed token by token (raw spans, events; a tree too large for the block) */
    CUT_TREE    /* built as it arrives (mp_tree.c) */
};

/* A small chunk that cannot complete the token framing waits for is appended whole, with no
 * framing and no growth, before anything else runs: 1-byte feeds cost a compare and a copy. */
static inline bool absorb_small_chunk(wk__feed *f)
{
    size_t left = f->chunk_len - f->chunk_pos;
    if (f->buf_len == 0 || f->release || f->finished || f->buf_len + left >= f->need ||
        f->buf_len + left > f->buf_cap) {
        return false;
    }
    /* a byte or a few copied by hand: a memcpy call would cost more than the copy */
    const uint8_t *src = f->chunk + f->chunk_pos;
    uint8_t *dst = f->buf + f->buf_len;
    if (left == 1) {
        dst[0] = src[0];
    } else if (left <= 8) {
        for (size_t i = 0; i < left; i++) {
            dst[i] = src[i];
        }
    } else {
        memcpy(dst, src, left);
    }
    f->buf_len += left;
    f->chunk_pos = f->chunk_len;
    return true;
}

/* Values have been taking about this many bytes (a running average): decides whether the
 * value at a chunk's end is checked (built) in place first, or framed (gathered) first. */
static inline void expect(wk_mp_unpacker *u, size_t vlen)
{
    u->typical = u->typical / 2 + vlen / 2;
}

/* The token at base[at..avail) is cut short: framing or building goes on from it once the
 * bytes it needs are there. */
static void wait_for_token(wk__feed *f, const uint8_t *base, size_t avail, size_t at)
{
    uint64_t here = (uint64_t)(avail - at);
    uint64_t need = here != 0 ? wk__mp_token_need(base + at, avail - at) : 1;
    f->scan = at;
    f->need = (uint64_t)at + (need > here ? need : here + 1);
}

/* Frames the value gathered in the buffer on to its end, appending the chunk a piece at a
 * time. WK_OK with *vlen; WK_ERR_AGAIN (chunk used up); or a latched error. */
static wk_status frame_gathered(wk_mp_unpacker *u, size_t *vlen)
{
    wk__feed *f = &u->f;
    /* frame what is there; if the value goes on, append the next piece and frame on from
     * where framing stopped; the chunk used up, wait (or, finished, report the cut value) */
    for (;;) {
        wk_status st = frame(u, f->buf, f->buf_len, vlen);
        if (st == WK_OK) {
            return WK_OK;
        }
        if (st != WK_ERR_AGAIN) {
            return fail_as_buffer_reader(u, f->buf, f->buf_len, st, WK_MP_MSG_NOMEM);
        }
        st = wk__feed_append(f);
        if (st == WK_ERR_AGAIN) {
            if (!f->finished) {
                return WK_ERR_AGAIN;
            }
            return fail_as_buffer_reader(u, f->buf, f->buf_len, WK_ERR_TRUNCATED,
                                         WK_MP_MSG_TRUNCATED);
        }
        if (st != WK_OK) {
            return st;
        }
    }
}

/* Starts framing the gathered value over from its start (a tree build given up). */
static void frame_from_start(wk_mp_unpacker *u)
{
    if (u->tree != NULL) {
        wk__mp_tree_restart(u->tree);
    }
    u->cut = CUT_FRAMED;
    u->depth = 0;
    u->left = 0;
    u->f.scan = 0;
    u->f.need = 0;
}

/* The value at p[0..vlen) (in the chunk or the gather buffer) is handed out: consumes it. */
static wk_status hand_out(wk_mp_unpacker *u, const uint8_t *p, size_t vlen, const uint8_t **data,
                          size_t *len)
{
    *data = p;
    *len = vlen;
    expect(u, vlen);
    return wk__feed_consume(&u->f, vlen);
}

/*
 * Finds the next value and hands out its bytes (consumed already). Every status other than
 * WK_OK is returned as it is.
 */
static wk_status take(wk_mp_unpacker *u, const uint8_t **data, size_t *len)
{
    wk__feed *f = &u->f;
    wk_status st = wk__feed_enter(f);
    if (st != WK_OK) {
        return st;
    }
    size_t vlen = 0;
    /* a value started in an earlier chunk: framed on in the buffer as the chunk is appended */
    if (f->buf_len != 0) {
        if (u->cut == CUT_TREE) {
            frame_from_start(u); /* a tree call took the value's start: frame it instead */
        }
        st = frame_gathered(u, &vlen);
        if (st != WK_OK) {
            return st;
        }
        return hand_out(u, f->buf, vlen, data, len);
    }
    const uint8_t *p = f->chunk + f->chunk_pos;
    size_t n = f->chunk_len - f->chunk_pos;
    if (n == 0) {
        return f->finished ? WK_ERR_EOF : WK_ERR_AGAIN;
    }
    u->value_off = f->chunk_off + f->chunk_pos;
    /* Fast path: the buffer check on the rest of the chunk, unless values have been larger
     * than what is left (then the value is probably cut, and a failed try would be a wasted
     * pass: framing goes first). */
    u->depth = 0;
    u->left = 0;
    u->cut = CUT_FRAMED;
    f->scan = 0;
    f->need = 0;
    if (n >= u->typical && wk_mp_check(p, n, &u->opts, &vlen, NULL) == WK_OK) {
        return hand_out(u, p, vlen, data, len);
    }
    /* framing over the chunk: the value ends in it, or it is cut (the rest is gathered and
     * framing resumes there on the next call), or it is bad (worded by the buffer scan) */
    st = frame(u, p, n, &vlen);
    if (st == WK_OK) {
        return hand_out(u, p, vlen, data, len);
    }
    if (st == WK_ERR_AGAIN && !f->finished) {
        st = wk__feed_gather(f);
        return st != WK_OK ? st : WK_ERR_AGAIN;
    }
    return fail_as_buffer_reader(u, p, n, st, WK_MP_MSG_NOMEM);
}

/* A tree build stopped with `st` on base[0..avail): latches the error as the buffer decoder
 * reports it. */
static wk_status tree_failed(wk_mp_unpacker *u, const uint8_t *base, size_t avail, wk_status st,
                             const wk__mp_tree_stop *stop)
{
    if (st == WK_ERR_NOMEM) { /* the arena or the nesting stack: the builder's own words */
        return wk__feed_fail(&u->f, st, wk__feed_value_off(&u->f) + stop->at,
                             stop->msg != NULL ? stop->msg : WK__FEED_MSG_NOMEM);
    }
    return fail_as_buffer_reader(u, base, avail, st, stop->msg);
}

/* Decodes the value d[0..vlen), framed and consumed already, into `arena`. */
static wk_status decode_taken(wk_mp_unpacker *u, const uint8_t *d, size_t vlen, wk_arena *arena,
                              wk_value **out)
{
    wk_error e;
    wk_status st = wk_mp_decode_value(d, vlen, &u->opts, arena, out, NULL, &e);
    if (st != WK_OK) {
        return wk__feed_fail(&u->f, st, u->value_off + e.offset, e.msg);
    }
    return WK_OK;
}

/* The gathered value is whole (vlen bytes): consumes it and decodes it into `arena` (the
 * fallback for a tree that did not stay in the block). */
static wk_status decode_gathered(wk_mp_unpacker *u, size_t vlen, wk_arena *arena,
                                 wk_value **out)
{
    wk_status st = wk__feed_consume(&u->f, vlen);
    return st != WK_OK ? st : decode_taken(u, u->f.buf, vlen, arena, out);
}

/* The tree is given up (it would outgrow the block, or cannot leave the caller's arena):
 * the gathered value is framed from its start and decoded once whole. */
static wk_status frame_and_decode(wk_mp_unpacker *u, wk_arena *arena, wk_value **out)
{
    frame_from_start(u);
    size_t vlen;
    wk_status st = frame_gathered(u, &vlen);
    return st != WK_OK ? st : decode_gathered(u, vlen, arena, out);
}

/* Appends to the gather buffer (a piece, or up to `upto` bytes), string pointers of the tree
 * in the block following the buffer if it moves. */
static wk_status append(wk_mp_unpacker *u, size_t upto)
{
    wk__feed *f = &u->f;
    const uint8_t *old = f->buf;
    size_t old_len = f->buf_len;
    wk_status st = upto != 0 ? wk__feed_append_to(f, upto) : wk__feed_append(f);
    if (f->buf != old && old != NULL) {
        wk__mp_tree_buffer_moved(u->tree, old, old_len, f->buf);
    }
    return st;
}

/*
 * Goes on with the tree of the gathered value, from the token it paused at, once the bytes
 * that token needs are there. When the chunk brings at least as many new bytes as the value
 * had (the value is then likely to end in it; if not, the nodes built on it move into the
 * block once, paid for by the new bytes), and strings are not to be copied: only the cut token
 * is completed in the buffer and the run goes on over the chunk in place, its new nodes in
 * `arena` (the block's nodes join them when the tree is complete); if the chunk ends first,
 * its rest joins the buffer and the new nodes move into the block. Otherwise (and for the run
 * at a value's start when `block_first`) the chunk is appended a piece at a time and the tree
 * is built in the block, copied into `arena` once complete.
 */
static wk_status resume_tree(wk_mp_unpacker *u, wk_arena *arena, wk_value **out,
                             bool block_first)
{
    wk__feed *f = &u->f;
    wk__mp_tree_stop stop;
    bool copy = (u->opts.flags & WK_READ_COPY_STRINGS) != 0;
    bool held = wk__mp_tree_is_held(u->tree);
    wk_status st;
    size_t vlen;
    for (;;) {
        size_t rest = f->chunk_len - f->chunk_pos;
        /* a held tree goes on in place whenever it can: a pause costs it no copy of nodes */
        bool direct = !block_first && rest != 0 &&
                      (held || (!copy && f->buf_len - f->scan + rest >= f->scan));
        if (f->buf_len < f->need) {
            st = append(u, direct ? (size_t)f->need : 0);
            if (st == WK_ERR_AGAIN) {
                return !f->finished ? WK_ERR_AGAIN
                                    : fail_as_buffer_reader(u, f->buf, f->buf_len,
                                                            WK_ERR_TRUNCATED,
                                                            WK_MP_MSG_TRUNCATED);
            }
            if (st != WK_OK) {
                return st;
            }
            continue;
        }
        if (f->chunk_len < WK_STREAM_TREE_MIN_CHUNK) { /* chunks became small */
            return frame_and_decode(u, arena, out);
        }
        block_first = false;
        st = wk__mp_tree_resume(u->tree, f->buf, f->buf_len, f->scan,
                                direct || held ? arena : NULL, out, &stop);
        if (st == WK_OK) {
            vlen = stop.at;
            break;
        }
        if (stop.block_full) { /* the tree outgrows the cap */
            return frame_and_decode(u, arena, out);
        }
        if (st != WK_ERR_AGAIN) {
            return tree_failed(u, f->buf, f->buf_len, st, &stop);
        }
        if (direct && stop.at == f->buf_len) {
            /* the buffer ends at a token's end: the rest of the value is read in place */
            size_t old_len = f->buf_len;
            const uint8_t *old = f->buf;
            const uint8_t *part = f->chunk + f->chunk_pos;
            st = wk__mp_tree_resume(u->tree, part, rest, 0, arena, out, &stop);
            if (st == WK_OK) {
                wk__feed_consume_past(f, stop.at);
                expect(u, old_len + stop.at);
                u->cut = CUT_FRAMED;
                return WK_OK;
            }
            /* paused or failed: the chunk's rest joins the buffer */
            wk_status gst = WK_OK;
            while (gst == WK_OK && f->buf_len < old_len + rest) {
                gst = wk__feed_append_to(f, old_len + rest);
            }
            stop.at += old_len;
            if (st != WK_ERR_AGAIN) {
                wk__mp_tree_restart(u->tree);
                return tree_failed(u, f->buf, f->buf_len, st, &stop);
            }
            if (gst != WK_OK) {
                wk__mp_tree_restart(u->tree);
                return gst;
            }
            if (!(held ? wk__mp_tree_hold(u->tree, arena, part, rest, f->buf + old_len)
                       : wk__mp_tree_adopt(u->tree, arena, part, rest, f->buf + old_len))) {
                return frame_and_decode(u, arena, out);
            }
            if (f->buf != old) {
                wk__mp_tree_buffer_moved(u->tree, old, old_len, f->buf);
            }
        } else if (held ? !wk__mp_tree_hold(u->tree, arena, NULL, 0, NULL)
                        : direct && !wk__mp_tree_adopt(u->tree, arena, NULL, 0, NULL)) {
            return frame_and_decode(u, arena, out);
        }
        wait_for_token(f, f->buf, f->buf_len, stop.at);
    }
    expect(u, vlen);
    st = wk__feed_consume(f, vlen);
    if (st != WK_OK) {
        return st;
    }
    u->cut = CUT_FRAMED;
    if (*out == NULL && !wk__mp_tree_deliver(u->tree, arena, copy, out)) {
        /* the arena refused the block: the buffer decoder's own run says how it fails */
        return decode_taken(u, f->buf, vlen, arena, out);
    }
    return WK_OK;
}

/* Takes out the next value as a tree (see mp_tree.h): built in place when the chunk holds it
 * whole, else paused at the chunk's end and resumed as the next chunks arrive; `held`: the
 * caller leaves `arena` alone while a value is paused, and the tree stays there. */
static wk_status take_tree(wk_mp_unpacker *u, wk_arena *arena, wk_value **out, bool held)
{
    wk__feed *f = &u->f;
    wk_status st = wk__feed_enter(f);
    if (st != WK_OK) {
        return st;
    }
    /* A value started in an earlier chunk: a paused tree goes on (a held one only in the
     * same, untouched arena), a framed one is framed on and decoded once whole. */
    if (f->buf_len != 0) {
        if (u->cut == CUT_TREE && wk__mp_tree_is_held(u->tree)) {
            if (!held) { /* the arena was the caller's again: build the value anew */
                return frame_and_decode(u, arena, out);
            }
            if (!wk__mp_tree_held_intact(u->tree, arena)) {
                wk__mp_tree_restart(u->tree);
                return wk__feed_fail(f, WK_ERR_STATE, wk__feed_value_off(f), MSG_ARENA_CHANGED);
            }
        }
        if (u->cut == CUT_TREE) {
            return resume_tree(u, arena, out, false);
        }
        size_t vlen;
        st = frame_gathered(u, &vlen);
        return st != WK_OK ? st : decode_gathered(u, vlen, arena, out);
    }
    /* The value starts in this chunk. Small chunks: framed and decoded once whole (a pause
     * per chunk would cost more than it saves). */
    const uint8_t *p = f->chunk + f->chunk_pos;
    size_t n = f->chunk_len - f->chunk_pos;
    if (n == 0) {
        return f->finished ? WK_ERR_EOF : WK_ERR_AGAIN;
    }
    if (f->chunk_len < WK_STREAM_TREE_MIN_CHUNK) { /* framed, decoded once whole */
        const uint8_t *d = NULL;
        size_t vlen = 0;
        st = take(u, &d, &vlen);
        return st != WK_OK ? st : decode_taken(u, d, vlen, arena, out);
    }
    u->value_off = f->chunk_off + f->chunk_pos;
    if (n < u->typical && !f->finished) {
        /* values have been larger than what is left: this one is probably cut. Gather it
         * now and build in the block, so that the pause costs nothing. */
        st = wk__feed_gather(f);
        if (st != WK_OK) {
            return st;
        }
        if (!wk__mp_tree_start(&u->tree, &u->opts, f->max, held)) {
            return wk__feed_fail(f, WK_ERR_NOMEM, u->value_off, WK__FEED_MSG_NOMEM);
        }
        u->cut = CUT_TREE;
        f->scan = 0;
        f->need = 0;
        return resume_tree(u, arena, out, true);
    }
    /* The first run, in place on the chunk into the caller's arena: the value is whole in
     * it (done), bad, or cut, in which case it pauses, the chunk's rest is gathered and the
     * nodes built so far move into the block (or stay, held). */
    wk__mp_tree_stop stop;
    st = wk__mp_tree_first(&u->tree, &u->opts, f->max, held, p, n, arena, out, &stop);
    if (st == WK_OK) {
        f->chunk_pos += stop.at;
        expect(u, stop.at);
        return WK_OK;
    }
    if (st != WK_ERR_AGAIN) {
        return tree_failed(u, p, n, st, &stop);
    }
    if (f->finished) {
        wk__mp_tree_restart(u->tree);
        return fail_as_buffer_reader(u, p, n, WK_ERR_TRUNCATED, WK_MP_MSG_TRUNCATED);
    }
    st = wk__feed_gather(f);
    if (st != WK_OK) {
        wk__mp_tree_restart(u->tree);
        return st;
    }
    u->cut = CUT_TREE;
    f->scan = 0;
    f->need = 0;
    if (!(held ? wk__mp_tree_hold(u->tree, arena, p, n, f->buf)
               : wk__mp_tree_adopt(u->tree, arena, p, n, f->buf))) {
        wk__mp_tree_restart(u->tree); /* built again from the gathered bytes, once */
        return resume_tree(u, arena, out, true);
    }
    wait_for_token(f, f->buf, f->buf_len, stop.at);
    return WK_ERR_AGAIN;
}

/* The three takes check the small-chunk shortcut inline and call the rest out of line, so
 * that a 1-byte feed does not pay for the registers the whole take saves and restores. */
#if defined(__GNUC__)
#define OUT_OF_LINE __attribute__((noinline))
#else
#define OUT_OF_LINE
#endif

/* The next value's bytes and stream offset (take; valid until the next call or feed). */
static OUT_OF_LINE wk_status next_span(wk_mp_unpacker *u, const uint8_t **data, size_t *len,
                                       uint64_t *offset)
{
    const uint8_t *d = NULL;
    size_t n = 0;
    wk_status st = take(u, &d, &n);
    if (st == WK_OK) {
        *data = d;
        *len = n;
        if (offset != NULL) {
            *offset = u->value_off;
        }
    }
    return st;
}

/* The next whole value's bytes (wirekit/stream.h); a small chunk is absorbed inline. */
WK_API wk_status wk_mp_unpacker_next(wk_mp_unpacker *u, const uint8_t **data, size_t *len,
                                     uint64_t *offset)
{
    return absorb_small_chunk(&u->f) ? WK_ERR_AGAIN : next_span(u, data, len, offset);
}

/* The next value as a tree in arena (take_tree), `held`: built in place in the tree's blocks
 * across chunks (mp_tree.h) rather than from the framed bytes. */
static OUT_OF_LINE wk_status next_tree(wk_mp_unpacker *u, wk_arena *arena, wk_value **out,
                                       bool held)
{
    wk_value *v = NULL;
    wk_status st = take_tree(u, arena, &v, held);
    if (st == WK_OK) {
        *out = v;
    }
    return st;
}

/* The next whole value as a tree in arena (wirekit/stream.h). */
WK_API wk_status wk_mp_unpacker_next_value(wk_mp_unpacker *u, wk_arena *arena, wk_value **out)
{
    return absorb_small_chunk(&u->f) ? WK_ERR_AGAIN : next_tree(u, arena, out, false);
}

/* The next value as a tree built in place while its chunks arrive (wirekit/stream.h): the
 * same tree as wk_mp_unpacker_next_value, no framing and no second pass. */
WK_API wk_status wk_mp_unpacker_next_value_in_place(wk_mp_unpacker *u, wk_arena *arena,
                                                    wk_value **out)
{
    return absorb_small_chunk(&u->f) ? WK_ERR_AGAIN : next_tree(u, arena, out, true);
}

/* The next whole value, framed, then read by a wk_mp_reader into sink (wk_transcode); a
 * failure of either is latched with the reader's offset. */
static OUT_OF_LINE wk_status next_events(wk_mp_unpacker *u, const wk_sink *sink)
{
    const uint8_t *d = NULL;
    size_t n = 0;
    wk_status st = take(u, &d, &n);
    if (st != WK_OK) {
        return st;
    }
    /* the value is whole and checked: a reader over its bytes pumps its events; the offset
     * of a failure (the sink's, in practice) is within the value */
    wk_mp_reader r;
    wk_source src;
    wk_error e;
    wk_mp_reader_init(&r, d, n, &u->opts);
    wk_mp_reader_source(&r, &src);
    st = wk_transcode(&src, sink, &e);
    wk_mp_reader_free(&r);
    if (st != WK_OK) {
        return wk__feed_fail(&u->f, st, e.offset, e.msg);
    }
    return WK_OK;
}

/* The events of the next whole value to sink (wirekit/stream.h). */
WK_API wk_status wk_mp_unpacker_next_events(wk_mp_unpacker *u, const wk_sink *sink)
{
    return absorb_small_chunk(&u->f) ? WK_ERR_AGAIN : next_events(u, sink);
}
