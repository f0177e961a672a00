/*
 * The shared part of the tree builders (internal to the value module, used by the codecs):
 * events or bytes become wk_value nodes in an arena. Flow: any wk_source -> the generic loop
 * (value_build_loop_interface.h, the body of build_from_source) -> the tree; MessagePack
 * bytes -> its own loop (formats/msgpack/mp_build_loop.h, the body of build_from_tokens and
 * build_in_block, nodes written from the bytes) -> the tree.
 *
 * This file holds what every builder shares: the node a scalar event stands for
 * (wk__vb_node_from_event; the generic loop, the JSON parser and the schema decoder's fused
 * wk_value fields use it), a node's head (wk__vb_head), where string bytes go
 * (wk__vb_set_bytes), the options and the failure; the generic loop's frame. MessagePack's
 * loop keeps its own frames and pause state (formats/msgpack/mp_build_state.h).
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
 * decoder once that had two instances, which costs instructions per seed record: wirekit
 * bench --suite schema --callgrind); wk_arena_alloc handles new chunks. */
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
    /* Each case writes the whole node (head, then payload, the unused payload bytes zeroed)
     * so a node never keeps bytes of what the slot held before. */
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

/* A frame of the generic loop: an open container whose children gather on the scratch
 * stack from index `first`. */
typedef struct wk__vb_frame {
    size_t first;
    bool is_map;
} wk__vb_frame;

#define WK__VB_INLINE_FRAMES 64
#define WK__VB_INLINE_SCRATCH 128

#endif /* WK_VALUE_BUILD_CORE_SHARED */
