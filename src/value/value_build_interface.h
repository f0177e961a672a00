/*
 * The one tree-building loop (internal to the value module, instantiated by the codecs): a cursor's
 * events become wk_value nodes in an arena. Written once and compiled once per cursor, the way
 * schema_decode_loop_interface.h is: over any wk_source (value_decode.c, the generic path) and over
 * MessagePack's token decoder (formats/msgpack/mp_value.c, the fused path), so both build the same
 * nodes with the same event->node rules, depth limit and stack handling.
 *
 * The first part (guarded) holds what every builder shares and is included once: the node a
 * scalar event stands for (wk__vb_node_from_event; the JSON parser and the schema decoder's
 * fused wk_value fields use it too) and where string bytes go (wk__vb_set_bytes). The second
 * part is the loop itself; before each inclusion define:
 *   VB_FN              name of the function to generate
 *   VB_CURSOR          type of the cursor
 *   VB_NEXT(c, ev, m)  the next event into *ev, returning wk_status (WK_ERR_EOF: no more
 *                      values); on failure may set *m (const char **) to a static message
 *   VB_COUNTED         1: containers carry their counts and no WK_EV_END follows (MessagePack
 *                      tokens): the children are allocated in the arena when the header is
 *                      read (the cursor has checked the count against the bytes left) and
 *                      filled in place; the root comes first. 0: containers close with
 *                      WK_EV_END and counts are optional (any wk_source): children gather on a
 *                      scratch stack and move to the arena in one copy at their END.
 *   VB_MSG_STACK       message when the frame or scratch stack cannot grow
 * and optionally (VB_COUNTED only):
 *   VB_RESUMABLE       1: the build can pause. With `pause` set in its wk__vb_state, a
 *                      WK_ERR_TRUNCATED from the cursor (the token at the cursor is cut short;
 *                      the cursor has not moved) returns WK_ERR_AGAIN with the open frames,
 *                      the slot to fill next and the root saved in the state; a later call
 *                      with that state goes on from there (over a cursor that holds the same
 *                      token, now whole). Without `pause` it fails as the cursor says (a
 *                      build over a whole buffer).
 *   VB_ALLOC_KIDS(c, arena, n, frames, depth, v)
 *                      where the root (n = 1, v NULL) and the n children of node v come from;
 *                      default: the arena. A hook that moves nodes already built must fix
 *                      the pointers to them in the nodes and in frames[0..depth), and
 *   VB_MOVED(c, v)     then gives the node `v` (built before the call) where it is now;
 *                      default: `v`.
 * The generated function is
 *   static wk_status VB_FN(VB_CURSOR *c, wk_arena *arena, const wk__vb_opts *o,
 *                          wk_value **out, wk__vb_fail *f)
 * (VB_RESUMABLE: `wk__vb_state *s` in place of `out`; the root is s->root) and returns WK_OK
 * (*out: the root, in the arena) or a status with `f` saying whether the cursor failed (then
 * the adapter asks it for details and offset) or the builder did (with a static message).
 * Nesting is an explicit stack (core/kernel_interface.h) on the caller's allocator.
 */
#ifndef WK_VALUE_BUILD_CORE_SHARED
#define WK_VALUE_BUILD_CORE_SHARED

#include <string.h>

#include "core/kernel_interface.h"
#include "wirekit/value.h"

/* Builder options, already resolved by the adapter. */
typedef struct wk__vb_opts {
    bool copy;                 /* copy str/bin/ext bytes into the arena */
    uint32_t max_depth;        /* containers open at once, >= 1 */
    const wk_allocator *alloc; /* for deep or wide input (frame and scratch stacks) */
} wk__vb_opts;

/* Why a build stopped. */
typedef struct wk__vb_fail {
    bool cursor;     /* the cursor failed: ask it (its status is the return value) */
    const char *msg; /* otherwise: the builder's static message */
} wk__vb_fail;

#define WK__VB_MSG_ARENA "arena exhausted"

/* The arena's bump fast path, always inline (GCC left it out of line in the fused schema JSON
 * decoder once that had two instances: 14 more instructions per seed record); wk_arena_alloc
 * handles new chunks. */
static inline __attribute__((always_inline)) void *wk__vb_alloc(wk_arena *a, size_t size)
{
    uintptr_t p = ((uintptr_t)a->cur + 7u) & ~(uintptr_t)7u;
    if (a->cur != NULL && p <= (uintptr_t)a->end && size <= (size_t)((uintptr_t)a->end - p)) {
        a->cur = (uint8_t *)p + size;
        return (void *)p;
    }
    return wk_arena_alloc(a, size, 8);
}

/* Points `v` at p[0..n) (n < 2^32) or, with `copy`, at a NUL-terminated copy in the arena. */
static inline bool wk__vb_set_bytes(wk_value *v, const void *p, size_t n, bool copy, wk_arena *a)
{
    v->len = (uint32_t)n;
    if (copy) {
        char *c = wk_arena_strndup(a, p, n);
        if (c == NULL) {
            return false;
        }
        v->flags = WK_VALF_COPIED;
        v->u.str = c;
    } else {
        v->u.str = p;
    }
    return true;
}

/* The node's first eight bytes (type, flags, ext_type 0, reserved 0, len): one store where
 * the byte order allows. */
static inline void wk__vb_head(wk_value *v, uint8_t type, uint8_t flags, uint32_t len)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t head = (uint64_t)type | (uint64_t)flags << 8 | (uint64_t)len << 32;
    memcpy(v, &head, 8);
#else
    v->type = type;
    v->flags = flags;
    v->ext_type = 0;
    v->reserved = 0;
    v->len = len;
#endif
}

/* The node a scalar event stands for, written over every field of `v`: the event->node rule
 * of every tree builder. A non-negative INT becomes UINT (decoders agree on which of the two a
 * 5 is). Returns WK_OK, WK_ERR_NOMEM (arena), WK_ERR_RANGE (bytes of 2^32 or more) or
 * WK_ERR_ARG (not a scalar event: the loop tries containers then, so that one switch
 * dispatches every event), with *msg set on failure. */
static inline wk_status wk__vb_node_from_event(wk_value *v, const wk_event *ev, bool copy,
                                               wk_arena *a, const char **msg)
{
    switch (ev->type) {
    case WK_EV_NIL:
        wk__vb_head(v, WK_VAL_NIL, 0, 0);
        v->u.u = 0;
        return WK_OK;
    case WK_EV_BOOL:
        wk__vb_head(v, WK_VAL_BOOL, 0, 0);
        v->u.u = 0;
        v->u.b = ev->v.b;
        return WK_OK;
    case WK_EV_UINT:
        wk__vb_head(v, WK_VAL_UINT, 0, 0);
        v->u.u = ev->v.u;
        return WK_OK;
    case WK_EV_INT:
        wk__vb_head(v, ev->v.i >= 0 ? WK_VAL_UINT : WK_VAL_INT, 0, 0);
        v->u.i = ev->v.i;
        return WK_OK;
    case WK_EV_FLOAT:
        wk__vb_head(v, WK_VAL_FLOAT, ev->f32 ? WK_VALF_F32 : 0, 0);
        v->u.f = ev->v.f;
        return WK_OK;
    case WK_EV_STR:
    case WK_EV_BIN:
    case WK_EV_RAWNUM:
        wk__vb_head(v,
                    ev->type == WK_EV_STR   ? WK_VAL_STR
                    : ev->type == WK_EV_BIN ? WK_VAL_BIN
                                            : WK_VAL_RAWNUM,
                    0, 0);
        if (WK__UNLIKELY(ev->v.str.len > UINT32_MAX)) {
            *msg = "string longer than 2^32-1 bytes";
            return WK_ERR_RANGE;
        }
        if (!wk__vb_set_bytes(v, ev->v.str.ptr, ev->v.str.len, copy, a)) {
            *msg = WK__VB_MSG_ARENA;
            return WK_ERR_NOMEM;
        }
        return WK_OK;
    case WK_EV_EXT:
        wk__vb_head(v, WK_VAL_EXT, 0, 0);
        v->ext_type = ev->v.ext.type;
        if (!wk__vb_set_bytes(v, ev->v.ext.ptr, ev->v.ext.len, copy, a)) {
            *msg = WK__VB_MSG_ARENA;
            return WK_ERR_NOMEM;
        }
        return WK_OK;
    case WK_EV_TIMESTAMP:
        wk__vb_head(v, WK_VAL_TIMESTAMP, 0, ev->v.ts.nsec);
        v->u.i = ev->v.ts.sec;
        return WK_OK;
    default: *msg = "unknown event type"; return WK_ERR_ARG;
    }
}

/* A frame of the loop: where the open container's children go. */
typedef struct wk__vb_frame {
    wk_value *next; /* VB_COUNTED: the next child to fill */
    uint64_t left;  /* VB_COUNTED: children still to fill (keys and values count apart);
                     * otherwise: index in the scratch stack of the first child */
    bool is_map;
} wk__vb_frame;

#define WK__VB_INLINE_FRAMES 64
#define WK__VB_INLINE_SCRATCH 128

/* A paused counted build (VB_RESUMABLE). Zero it before the first call. The frames live on
 * the builder's allocator (o->alloc) between calls; the owner frees them with
 * wk__vb_state_free (they are kept from one value to the next). */
typedef struct wk__vb_state {
    wk__vb_frame *frames; /* open frames while paused, else spare storage (or NULL) */
    size_t cap;           /* frames' capacity */
    size_t depth;         /* frames open while paused */
    wk_value *root;       /* the root (set when a build starts) */
    wk_value *v;          /* paused: the slot to fill next; NULL: no build in progress */
    bool pause;           /* a cut token pauses the build (else it is the cursor's error) */
} wk__vb_state;

static inline void wk__vb_state_free(wk__vb_state *s, const wk_allocator *alloc)
{
    if (s->frames != NULL) {
        wk_free(alloc, s->frames, s->cap * sizeof(wk__vb_frame));
    }
    s->frames = NULL;
    s->cap = 0;
    s->v = NULL;
}

/* Hands the frames stack of a build that returns back to `s`: heap storage the loop grew or
 * was given stays in `s`; frames still on the C stack are copied out when the build pauses
 * (`keep` frames). False when that copy cannot be allocated. */
static inline bool wk__vb_state_keep(wk__vb_state *s, wk__stack *fs, void *inline_mem,
                                     size_t keep, const wk_allocator *alloc)
{
    if (fs->mem != inline_mem) {
        if (s->frames != NULL && s->frames != fs->mem) {
            wk_free(alloc, s->frames, s->cap * sizeof(wk__vb_frame));
        }
        s->frames = fs->mem;
        s->cap = fs->cap;
        return true;
    }
    if (keep > s->cap) {
        wk__vb_state_free(s, alloc);
        size_t cap = keep > 16 ? keep * 2 : 16;
        s->frames = wk_alloc(alloc, cap * sizeof(wk__vb_frame));
        if (s->frames == NULL) {
            return false;
        }
        s->cap = cap;
    }
    if (keep != 0) {
        memcpy(s->frames, inline_mem, keep * sizeof(wk__vb_frame));
    }
    return true;
}

#endif /* WK_VALUE_BUILD_CORE_SHARED */

#ifdef VB_FN

#ifndef VB_RESUMABLE
#define VB_RESUMABLE 0
#endif
#ifndef VB_ALLOC_KIDS
#define VB_ALLOC_KIDS(c, arena, n, frames, depth, v) \
    wk__vb_alloc((arena), (size_t)(n) * sizeof(wk_value))
#endif
#ifndef VB_MOVED
#define VB_MOVED(c, v) (v)
#endif

#if VB_RESUMABLE
static wk_status VB_FN(VB_CURSOR *c, wk_arena *arena, const wk__vb_opts *o, wk__vb_state *s,
                       wk__vb_fail *f)
#else
static wk_status VB_FN(VB_CURSOR *c, wk_arena *arena, const wk__vb_opts *o, wk_value **out,
                       wk__vb_fail *f)
#endif
{
    wk__vb_frame inline_frames[WK__VB_INLINE_FRAMES];
    wk__stack fs;
    wk__stack_init(&fs, inline_frames, WK__VB_INLINE_FRAMES, sizeof(wk__vb_frame), o->alloc);
    wk__vb_frame *frames = inline_frames;
    size_t depth = 0;
    wk_status st;
    const bool copy = o->copy;
    wk_event ev;
    f->cursor = false;
    f->msg = NULL;
#if VB_COUNTED
#if VB_RESUMABLE
    wk_value *v = s->v;
    if (v != NULL) { /* resume: the saved frames become the stack */
        depth = s->depth;
        if (depth <= WK__VB_INLINE_FRAMES) {
            if (depth != 0) {
                memcpy(inline_frames, s->frames, depth * sizeof(wk__vb_frame));
            }
        } else { /* their heap storage, taken over */
            fs.mem = s->frames;
            fs.cap = s->cap;
            frames = fs.mem;
            s->frames = NULL;
            s->cap = 0;
        }
    } else {
        v = VB_ALLOC_KIDS(c, arena, 1, frames, depth, NULL);
        s->root = v;
        if (v == NULL) {
            f->msg = WK__VB_MSG_ARENA;
            return WK_ERR_NOMEM;
        }
    }
#else
    wk_value *v = wk__vb_alloc(arena, sizeof(wk_value));
    wk_value *root = v;
    if (v == NULL) {
        f->msg = WK__VB_MSG_ARENA;
        return WK_ERR_NOMEM;
    }
#endif
#else
    wk_value scratch_inline[WK__VB_INLINE_SCRATCH];
    wk__stack ss;
    wk__stack_init(&ss, scratch_inline, WK__VB_INLINE_SCRATCH, sizeof(wk_value), o->alloc);
    wk_value *scratch = scratch_inline;
    size_t sn = 0;
    bool started = false;
    wk_value node;
    wk_value *v = &node;
#endif
    for (;;) {
        st = VB_NEXT(c, &ev, &f->msg);
        if (WK__UNLIKELY(st != WK_OK)) {
#if VB_RESUMABLE
            if (st == WK_ERR_TRUNCATED && s->pause) { /* pause before the cut token */
                if (!wk__vb_state_keep(s, &fs, inline_frames, depth, o->alloc)) {
                    s->v = NULL;
                    st = WK_ERR_NOMEM;
                    f->msg = VB_MSG_STACK;
                    return st;
                }
                s->depth = depth;
                s->v = v;
                return WK_ERR_AGAIN;
            }
#endif
#if !VB_COUNTED
            if (st == WK_ERR_EOF && started) {
                st = WK_ERR_TRUNCATED;
                f->msg = "input ends inside a container";
                goto fail;
            }
#endif
            f->cursor = true;
            goto fail;
        }
#if !VB_COUNTED
        started = true;
#endif
        st = wk__vb_node_from_event(v, &ev, copy, arena, &f->msg);
        if (WK__UNLIKELY(st != WK_OK)) {
            if (st != WK_ERR_ARG) {
                goto fail;
            }
            if (ev.type == WK_EV_ARRAY || ev.type == WK_EV_MAP) {
                if (WK__UNLIKELY(depth >= o->max_depth)) {
                    st = WK_ERR_DEPTH;
                    f->msg = "nesting deeper than the configured limit";
                    goto fail;
                }
                bool is_map = ev.type == WK_EV_MAP;
#if VB_COUNTED
                uint32_t n = ev.v.count;
                wk__vb_head(v, is_map ? WK_VAL_MAP : WK_VAL_ARRAY, 0, n);
                v->u.items = NULL;
                if (n != 0) {
                    uint64_t kids = is_map ? 2 * (uint64_t)n : n;
                    /* kids <= remaining bytes (the cursor checked): no overflow. */
                    wk_value *items = VB_ALLOC_KIDS(c, arena, kids, frames, depth, v);
                    if (items == NULL) {
                        st = WK_ERR_NOMEM;
                        f->msg = WK__VB_MSG_ARENA;
                        goto fail;
                    }
                    v = VB_MOVED(c, v);
                    v->u.items = items;
                    if (WK__UNLIKELY(depth == fs.cap) && !wk__stack_grow(&fs, depth, 0)) {
                        goto stack_full;
                    }
                    frames = fs.mem;
                    frames[depth].next = items;
                    frames[depth].left = kids;
                    depth++;
                }
#else
                if (WK__UNLIKELY(depth == fs.cap) && !wk__stack_grow(&fs, depth, 0)) {
                    goto stack_full;
                }
                frames = fs.mem;
                frames[depth].left = sn;
                frames[depth].is_map = is_map;
                depth++;
                continue;
#endif
            }
#if !VB_COUNTED
            else if (ev.type == WK_EV_END) {
                if (depth == 0) {
                    st = WK_ERR_STATE;
                    f->msg = "end of container with no container open";
                    goto fail;
                }
                wk__vb_frame fr = frames[--depth];
                size_t start = (size_t)fr.left;
                size_t n = sn - start;
                if (fr.is_map && (n & 1) != 0) {
                    st = WK_ERR_SYNTAX;
                    f->msg = "map ended after a key without its value";
                    goto fail;
                }
                size_t count = fr.is_map ? n / 2 : n;
                if (count > UINT32_MAX) {
                    st = WK_ERR_RANGE;
                    f->msg = "container of more than 2^32-1 elements";
                    goto fail;
                }
                wk__vb_head(v, fr.is_map ? WK_VAL_MAP : WK_VAL_ARRAY, 0, (uint32_t)count);
                v->u.items = NULL;
                if (n != 0) {
                    /* n values already sit in the scratch stack: n * 16 fits in size_t. */
                    wk_value *items = wk_arena_alloc(arena, n * sizeof(wk_value), 8);
                    if (items == NULL) {
                        st = WK_ERR_NOMEM;
                        f->msg = WK__VB_MSG_ARENA;
                        goto fail;
                    }
                    memcpy(items, scratch + start, n * sizeof(wk_value));
                    v->u.items = items;
                }
                sn = start;
            }
#endif
            else {
                goto fail;
            }
        }
#if VB_COUNTED
        /* Move to the next slot to fill, closing containers whose children are all done. */
        while (depth > 0 && frames[depth - 1].left == 0) {
            depth--;
        }
        if (depth == 0) {
            break;
        }
        frames[depth - 1].left--;
        v = frames[depth - 1].next++;
#else
        if (depth == 0) {
            wk_value *root = wk_arena_alloc(arena, sizeof(wk_value), 8);
            if (root == NULL) {
                st = WK_ERR_NOMEM;
                f->msg = WK__VB_MSG_ARENA;
                goto fail;
            }
            *root = node;
            *out = root;
            wk__stack_free(&fs);
            wk__stack_free(&ss);
            return WK_OK;
        }
        if (WK__UNLIKELY(sn == ss.cap)) {
            if (!wk__stack_grow(&ss, sn, 0)) {
                goto stack_full;
            }
            scratch = ss.mem;
        }
        scratch[sn++] = node;
#endif
    }
#if VB_RESUMABLE
    st = WK_OK;
    goto fail; /* the same exit: the frames' storage goes back to the state */
#elif VB_COUNTED
    wk__stack_free(&fs);
    *out = root;
    return WK_OK;
#endif
stack_full:
    st = WK_ERR_NOMEM;
    f->msg = VB_MSG_STACK;
fail:
#if VB_RESUMABLE
    (void)wk__vb_state_keep(s, &fs, inline_frames, 0, o->alloc); /* keeps 0: cannot fail */
    s->v = NULL;
#else
    wk__stack_free(&fs);
#endif
#if !VB_COUNTED
    wk__stack_free(&ss);
#endif
    return st;
}

#undef VB_FN
#undef VB_CURSOR
#undef VB_NEXT
#undef VB_COUNTED
#undef VB_MSG_STACK
#undef VB_RESUMABLE
#undef VB_ALLOC_KIDS
#undef VB_MOVED

#endif /* VB_FN */
