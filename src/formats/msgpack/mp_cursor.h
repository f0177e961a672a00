/*
 * The cursor the MessagePack tree builders read from (the fused whole-buffer decoder in
 * mp_value.c, the stream unpacker's pausing builder in mp_tree.c): a byte range, with the
 * optional UTF-8 check of strings, and the build loop's entry. After a build, `at` is where
 * the last token started (or the bad byte of a string), for error offsets; when the build
 * pauses the cursor is at the token that the range cuts short (`p` and `at` both).
 * Flow: bytes -> the build loop (mp_build_loop.h, over the byte layout of mp_token_cases.h)
 * in mp_value.c and mp_tree.c -> a tree.
 */
#ifndef WK_MP_CURSOR_H
#define WK_MP_CURSOR_H

#include "formats/msgpack/mp_token.h"
#include "formats/msgpack/mp_build_state.h"
#include "value/value_build_interface.h"
#include "wirekit/utf8.h"

typedef struct mp_cursor {
    const uint8_t *p;   /* the next token */
    const uint8_t *end; /* the end of the bytes present */
    const uint8_t *at;  /* where the last token started, for error offsets */
    bool strict;        /* check strings as UTF-8 (WK_READ_STRICT_UTF8) */
} mp_cursor;

/* The fused bytes -> tree build (mp_build_loop.h, resumable) over a cursor, into the arena:
 * wk_mp_decode_value runs it over a whole buffer, the stream unpacker over chunks (s->pause
 * set), so both run the same machine code. Returns as the loop does; the root is s->root. */
wk_status wk__mp_build(mp_cursor *c, wk_arena *arena, const wk__vb_opts *o, mp_build_state *s,
                       wk__vb_fail *f);

#endif
