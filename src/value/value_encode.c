/*
 * Tree to events: a depth-first walk with an explicit stack (64 levels on the C stack, the
 * caller's allocator beyond), emitting WK_EV_END after each container's children. Any sink
 * works (the MessagePack writer, the JSON writer); MessagePack also has a fused walk,
 * wk_mp_writer_value. Flow: a tree -> this walk -> events -> any wk_sink -> its bytes.
 */
#include <string.h>

#include "core/kernel_interface.h"
#include "wirekit/value.h"

#define INLINE_FRAMES 64

/* One open container of the walk: its next child and how many are left. */
typedef struct eframe {
    const wk_value *next;
    uint64_t left;
} eframe;

/* The event that stands for node v (a container's header with its count; its children are
 * the caller's to walk); views point into the tree. False for an unknown node type. */
WK_API bool wk_value_event(const wk_value *v, wk_event *ev)
{
    ev->f32 = false;
    /* One event per node type; str, bin and raw numbers share the string payload, a
     * timestamp keeps its nanoseconds in the node's len. */
    switch ((wk_value_type)v->type) {
    case WK_VAL_NIL: ev->type = WK_EV_NIL; break;
    case WK_VAL_BOOL:
        ev->type = WK_EV_BOOL;
        ev->v.b = v->u.b;
        break;
    case WK_VAL_INT:
        ev->type = WK_EV_INT;
        ev->v.i = v->u.i;
        break;
    case WK_VAL_UINT:
        ev->type = WK_EV_UINT;
        ev->v.u = v->u.u;
        break;
    case WK_VAL_FLOAT:
        ev->type = WK_EV_FLOAT;
        ev->f32 = (v->flags & WK_VALF_F32) != 0;
        ev->v.f = v->u.f;
        break;
    case WK_VAL_STR:
    case WK_VAL_BIN:
    case WK_VAL_RAWNUM:
        ev->type = v->type == WK_VAL_STR   ? WK_EV_STR
                   : v->type == WK_VAL_BIN ? WK_EV_BIN
                                           : WK_EV_RAWNUM;
        ev->v.str.ptr = v->u.str;
        ev->v.str.len = v->len;
        break;
    case WK_VAL_EXT:
        ev->type = WK_EV_EXT;
        ev->v.ext.type = v->ext_type;
        ev->v.ext.ptr = v->u.bin;
        ev->v.ext.len = v->len;
        break;
    case WK_VAL_TIMESTAMP:
        ev->type = WK_EV_TIMESTAMP;
        ev->v.ts.sec = v->u.i;
        ev->v.ts.nsec = v->len;
        break;
    case WK_VAL_ARRAY:
    case WK_VAL_MAP:
        ev->type = v->type == WK_VAL_MAP ? WK_EV_MAP : WK_EV_ARRAY;
        ev->v.count = v->len;
        break;
    default: return false;
    }
    return true;
}

/* Sends the tree v to sink as events, depth first, each container's children followed by
 * WK_EV_END. Failures: the sink's (err gets its report), an unknown node type (WK_ERR_ARG),
 * or no memory for a deep stack. */
WK_API wk_status wk_value_encode(const wk_value *v, const wk_allocator *alloc,
                                 const wk_sink *sink, wk_error *err)
{
    eframe inline_frames[INLINE_FRAMES];
    wk__stack fs;
    wk__stack_init(&fs, inline_frames, INLINE_FRAMES, sizeof(eframe), alloc);
    eframe *frames = inline_frames;
    size_t depth = 0;
    wk_status st = WK_OK;
    wk_event ev;
    /* Each turn sends node v's event; a container (even an empty one) pushes a frame over
     * its children, so its END comes from the closing loop below like every other. */
    for (;;) {
        if (!wk_value_event(v, &ev)) {
            st = wk_error_set(err, WK_ERR_ARG, 0, "value of unknown type in the tree");
            goto done;
        }
        st = sink->event(sink->self, &ev);
        if (st != WK_OK) {
            goto sink_failed;
        }
        if (ev.type == WK_EV_ARRAY || ev.type == WK_EV_MAP) {
            if (depth == fs.cap) {
                if (!wk__stack_grow(&fs, depth, 0)) {
                    st = wk_error_set(err, WK_ERR_NOMEM, 0, "out of memory for the tree walk");
                    goto done;
                }
                frames = fs.mem;
            }
            frames[depth].next = v->u.items;
            frames[depth].left = v->type == WK_VAL_MAP ? 2 * (uint64_t)v->len : v->len;
            depth++;
        }
        /* Close every finished container, then step to the next child. */
        while (depth > 0 && frames[depth - 1].left == 0) {
            depth--;
            ev.type = WK_EV_END;
            ev.f32 = false;
            st = sink->event(sink->self, &ev);
            if (st != WK_OK) {
                goto sink_failed;
            }
        }
        if (depth == 0) {
            st = wk_error_set(err, WK_OK, 0, NULL);
            goto done;
        }
        frames[depth - 1].left--;
        v = frames[depth - 1].next++;
    }
    /* the sink's own report, in its words and offset */
sink_failed:
    if (err != NULL) {
        sink->error(sink->self, err);
    }
done:
    wk__stack_free(&fs);
    return st;
}
