/*
 * The body of MessagePack's tree build loop: bytes -> wk_value nodes in an arena, each node
 * written straight from its bytes (no event in between). Flow: bytes -> the byte layout
 * (mp_token_cases.h, the token decoder's too) -> this loop -> the tree. It is the body of
 *   build_from_tokens()  mp_value.c: into the caller's arena (wk_mp_decode_value, the
 *                        unpacker's runs on a chunk, the schema decoder's wk_value fields)
 *   build_in_block()     mp_tree.c: into the stream unpacker's node block
 * each of which writes its header out and #includes this file between its braces. The
 * function it is the body of is
 *   static wk_status NAME(CURSOR *c, wk_arena *arena, const wk__vb_opts *o, mp_build_state *s,
 *                         wk__vb_fail *f)
 * and returns WK_OK (s->root: the root; the cursor's `p` is past the value) or a status with
 * the cursor's `at` at the token that failed (or the bad byte of a string) and f->msg a static
 * message. MessagePack gives counts up front, so a container's children are allocated when its
 * header is read (the count checked against the bytes left first, which bounds the
 * allocation by the input's size) and filled in place; the root comes first.
 *
 * The build can pause: with `pause` set in the state, a token cut short by the end of the
 * bytes returns WK_ERR_AGAIN with the open frames, the slot to fill next and the root saved in
 * the state, and the cursor at that token; a later call with that state goes on from there
 * (over a cursor that holds the same token, now whole). Without `pause` a cut token fails as
 * WK_ERR_TRUNCATED (a build over a whole buffer). Nesting is an explicit stack
 * (core/kernel_interface.h) on the options' allocator; deeper than o->max_depth fails.
 *
 * Before including, optionally define:
 *   MP_BL_CURSOR(c)    the mp_cursor (mp_cursor.h) that `c` holds; default: `c` itself
 *   MP_BL_ALLOC_KIDS(c, arena, n, frames, depth, v)
 *                      where the root (n = 1, v NULL) and the n children of node v come from;
 *                      default: the arena. A hook that moves nodes already built must fix
 *                      the pointers to them in the nodes and in frames[0..depth), and
 *   MP_BL_MOVED(c, v)  then gives the node `v` (built before the call) where it is now;
 *                      default: `v`.
 * The macros are #undef'd at the end of the body.
 */
#ifndef MP_BL_CURSOR
#define MP_BL_CURSOR(c) (c)
#endif
#ifndef MP_BL_ALLOC_KIDS
#define MP_BL_ALLOC_KIDS(c, arena, n, frames, depth, v) \
    wk__vb_alloc((arena), (size_t)(n) * sizeof(wk_value))
#endif
#ifndef MP_BL_MOVED
#define MP_BL_MOVED(c, v) (v)
#endif

    /* The frame stack: one frame per open container, MP_BUILD_INLINE_FRAMES on the C stack,
     * then the options' allocator. `v` is always the slot the next token fills. The
     * innermost frame lives in `next` and `left` (registers, not reloaded after each node's
     * stores); frames[depth - 1] holds it only across a children allocation and a pause. */
    mp_build_frame inline_frames[MP_BUILD_INLINE_FRAMES];
    wk__stack fs;
    wk__stack_init(&fs, inline_frames, MP_BUILD_INLINE_FRAMES, sizeof(mp_build_frame), o->alloc);
    mp_build_frame *frames = inline_frames;
    size_t depth = 0;
    wk_value *next = NULL; /* the innermost open container's next slot */
    uint64_t left = 0;     /* and how many of its slots are left (0 with nothing open) */
    wk_status st;
    const bool copy = o->copy;
    mp_cursor *const cur = MP_BL_CURSOR(c);
    const uint8_t *p = cur->p;
    const uint8_t *const end = cur->end;
    const uint8_t *at = p; /* where the token being built starts, for error offsets */
    const bool strict = cur->strict;
    uint32_t count; /* a container header's count, and its kind */
    bool is_map;
    f->cursor = false;
    f->msg = NULL;
    /* The root's slot first; a resumed build takes its frames and next slot from the state. */
    wk_value *v = s->v;
    if (v != NULL) { /* resume: the saved frames become the stack */
        depth = s->depth;
        if (depth <= MP_BUILD_INLINE_FRAMES) {
            if (depth != 0) {
                memcpy(inline_frames, s->frames, depth * sizeof(mp_build_frame));
            }
        } else { /* their heap storage, taken over */
            fs.mem = s->frames;
            fs.cap = s->cap;
            frames = fs.mem;
            s->frames = NULL;
            s->cap = 0;
        }
        if (depth != 0) {
            next = frames[depth - 1].next;
            left = frames[depth - 1].left;
        }
    } else {
        v = MP_BL_ALLOC_KIDS(c, arena, 1, frames, depth, NULL);
        s->root = v;
        if (v == NULL) {
            f->msg = WK__VB_MSG_ARENA;
            return WK_ERR_NOMEM;
        }
    }

/* The actions of the byte layout: each writes the whole node `v` (head, then payload, the
 * unused payload bytes zeroed, so a node never keeps bytes of what the slot held) and goes on
 * to the next slot; a container goes to its header's handling, a bad token to token_fail. */
#define MP_TC_NIL()                   \
    wk__vb_head(v, WK_VAL_NIL, 0, 0); \
    v->u.u = 0;                       \
    goto next_slot
#define MP_TC_BOOL(x)                  \
    wk__vb_head(v, WK_VAL_BOOL, 0, 0); \
    v->u.u = 0;                        \
    v->u.b = (x);                      \
    goto next_slot
#define MP_TC_UINT(x)                  \
    wk__vb_head(v, WK_VAL_UINT, 0, 0); \
    v->u.u = (x);                      \
    goto next_slot
#define MP_TC_INT(x)                  \
    wk__vb_head(v, WK_VAL_INT, 0, 0); \
    v->u.i = (x);                     \
    goto next_slot
#define MP_TC_FLOAT(d, is32)                                   \
    wk__vb_head(v, WK_VAL_FLOAT, (is32) ? WK_VALF_F32 : 0, 0); \
    v->u.f = (d);                                              \
    goto next_slot
/* bytes in place, or (copy) a NUL-terminated copy in the arena */
#define MP_BL_BYTES(t, s, n)                                         \
    if (!copy) {                                                     \
        wk__vb_head(v, (t), 0, (n));                                 \
        v->u.bin = (s);                                              \
        goto next_slot;                                              \
    }                                                                \
    wk__vb_head(v, (t), 0, 0);                                       \
    if (WK__UNLIKELY(!wk__vb_set_bytes(v, (s), (n), true, arena))) { \
        goto arena_full;                                             \
    }                                                                \
    goto next_slot
/* strings are checked as UTF-8 with WK_READ_STRICT_UTF8 (the error at the bad byte) */
#define MP_TC_STR(s, n)                                     \
    if (strict) {                                           \
        size_t bad = 0;                                     \
        if (!wk_utf8_valid((const char *)(s), (n), &bad)) { \
            at = (s) + bad;                                 \
            st = WK_ERR_UTF8;                               \
            f->msg = WK_MP_MSG_UTF8;                        \
            goto token_fail;                                \
        }                                                   \
    }                                                       \
    MP_BL_BYTES(WK_VAL_STR, (s), (n))
#define MP_TC_BIN(s, n) MP_BL_BYTES(WK_VAL_BIN, (s), (n))
#define MP_TC_EXT(t, s, n)                                           \
    if (!copy) {                                                     \
        wk__vb_head(v, WK_VAL_EXT, 0, (n));                          \
        v->ext_type = (t);                                           \
        v->u.bin = (s);                                              \
        goto next_slot;                                              \
    }                                                                \
    wk__vb_head(v, WK_VAL_EXT, 0, 0);                                \
    v->ext_type = (t);                                               \
    if (WK__UNLIKELY(!wk__vb_set_bytes(v, (s), (n), true, arena))) { \
        goto arena_full;                                             \
    }                                                                \
    goto next_slot
#define MP_TC_TS(sec, nsec)                      \
    wk__vb_head(v, WK_VAL_TIMESTAMP, 0, (nsec)); \
    v->u.i = (sec);                              \
    goto next_slot
#define MP_TC_ARRAY(n) \
    count = (n);       \
    is_map = false;    \
    goto container
#define MP_TC_MAP(n) \
    count = (n);     \
    is_map = true;   \
    goto container
#define MP_TC_FAIL(s, m) \
    st = (s);            \
    f->msg = (m);        \
    goto token_fail

    /* One token per turn: its node into the slot, then on to the next slot. */
    for (;;) {
        at = p;
        if (WK__UNLIKELY(p == end)) {
            st = WK_ERR_TRUNCATED;
            f->msg = WK_MP_MSG_TRUNCATED;
            goto token_fail;
        }
#include "formats/msgpack/mp_token_cases.h"
    container:
        /* The node gets its count now and its children's slots from the hook (the arena,
         * or the unpacker's block, which may move nodes already built: MP_BL_MOVED); a frame
         * then walks the slots. An empty container is complete at once. */
        if (WK__UNLIKELY(depth >= o->max_depth)) {
            st = WK_ERR_DEPTH;
            f->msg = WK_MP_MSG_DEPTH;
            goto fail;
        }
        wk__vb_head(v, is_map ? WK_VAL_MAP : WK_VAL_ARRAY, 0, count);
        v->u.items = NULL;
        if (count != 0) {
            uint64_t kids = is_map ? 2 * (uint64_t)count : count;
            if (depth != 0) { /* the innermost frame into the stack, where the hook sees it */
                frames[depth - 1].next = next;
                frames[depth - 1].left = left;
            }
            /* kids <= remaining bytes (the byte layout checked): no overflow. */
            wk_value *items = MP_BL_ALLOC_KIDS(c, arena, kids, frames, depth, v);
            if (items == NULL) {
                goto arena_full;
            }
            v = MP_BL_MOVED(c, v);
            v->u.items = items;
            if (WK__UNLIKELY(depth == fs.cap) && !wk__stack_grow(&fs, depth, 0)) {
                st = WK_ERR_NOMEM;
                f->msg = WK_MP_MSG_NOMEM;
                goto fail;
            }
            frames = fs.mem;
            next = items;
            left = kids;
            depth++;
        }
    next_slot:
        /* Move to the next slot to fill, closing containers whose children are all done. */
        while (left == 0) {
            if (depth <= 1) {
                depth = 0;
                goto whole;
            }
            depth--;
            next = frames[depth - 1].next;
            left = frames[depth - 1].left;
        }
        left--;
        v = next++;
    }
whole:
    /* The tree is whole: the same exit as a failure, the frames' storage back to the state. */
    st = WK_OK;
    goto fail;
token_fail:
    /* The byte layout refused the token (or a string is not UTF-8). A token cut short pauses
     * the build before it when the state allows. */
    f->cursor = true;
    if (st == WK_ERR_TRUNCATED && s->pause) {
        cur->p = at;
        cur->at = at;
        if (depth != 0) { /* the innermost frame with the others, for the state */
            frames[depth - 1].next = next;
            frames[depth - 1].left = left;
        }
        if (!mp_build_state_keep(s, &fs, inline_frames, depth, o->alloc)) {
            s->v = NULL;
            f->msg = WK_MP_MSG_NOMEM;
            return WK_ERR_NOMEM;
        }
        s->depth = depth;
        s->v = v;
        return WK_ERR_AGAIN;
    }
    goto fail;
arena_full:
    st = WK_ERR_NOMEM;
    f->msg = WK__VB_MSG_ARENA;
fail:
    /* Every exit but a pause: the cursor past the last token read (at the failing one), the
     * frames' storage kept in the state for its next use. */
    cur->p = p;
    cur->at = at;
    (void)mp_build_state_keep(s, &fs, inline_frames, 0, o->alloc); /* keeps 0: cannot fail */
    s->v = NULL;
    return st;

#undef MP_BL_BYTES
#undef MP_BL_CURSOR
#undef MP_BL_ALLOC_KIDS
#undef MP_BL_MOVED
