/*
 * The cursor the MessagePack tree builders read from (the fused whole-buffer decoder in
 * mp_value.c, the stream unpacker's pausing builder in mp_tree.c): the token decoder
 * over a byte range, with the optional UTF-8 check of strings. `at` is where the last token
 * started (or the bad byte of a string), for error offsets; on WK_ERR_TRUNCATED the cursor
 * has not moved, so `p` is the start of the token that the range cuts short.
 * Flow: bytes -> mp_next (the token decoder, mp_token.h) -> events -> the build loop
 * (value/value_build_loop_interface.h) in mp_value.c and mp_tree.c.
 */
#ifndef WK_MP_CURSOR_H
#define WK_MP_CURSOR_H

#include "formats/msgpack/mp_token.h"
#include "value/value_build_interface.h"
#include "wirekit/utf8.h"

typedef struct mp_cursor {
    const uint8_t *p;   /* the next token */
    const uint8_t *end; /* the end of the bytes present */
    const uint8_t *at;  /* where the last token started, for error offsets */
    bool strict;        /* check strings as UTF-8 (WK_READ_STRICT_UTF8) */
} mp_cursor;

/* The next token of the range as an event (the builder's VB_NEXT): WK_OK with c->p past it;
 * WK_ERR_TRUNCATED, the cursor unmoved, when the range cuts it short; another status with
 * *msg set for a bad token, or a string that is not UTF-8 when the check is on. */
static inline wk_status mp_next(mp_cursor *c, wk_event *ev, const char **msg)
{
    c->at = c->p;
    if (WK__UNLIKELY(c->p == c->end)) {
        *msg = WK_MP_MSG_TRUNCATED;
        return WK_ERR_TRUNCATED;
    }
    wk_status st = wk__mp_token(&c->p, c->end, ev, msg);
    if (c->strict && st == WK_OK && ev->type == WK_EV_STR) {
        size_t bad = 0;
        if (!wk_utf8_valid(ev->v.str.ptr, ev->v.str.len, &bad)) {
            c->at = (const uint8_t *)ev->v.str.ptr + bad;
            *msg = WK_MP_MSG_UTF8;
            return WK_ERR_UTF8;
        }
    }
    return st;
}

/* The fused token -> tree build (value/value_build_loop_interface.h, counted and resumable) over a
 * cursor: wk_mp_decode_value runs it over a whole buffer, the stream unpacker over chunks
 * (s->pause set), so both run the same machine code. Returns as the loop does; the root is
 * s->root. */
wk_status wk__mp_build(mp_cursor *c, wk_arena *arena, const wk__vb_opts *o, wk__vb_state *s,
                       wk__vb_fail *f);

#endif
