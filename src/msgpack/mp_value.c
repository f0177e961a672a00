/*
 * Fused MessagePack <-> value tree paths. The generic tree decoder (src/value) gathers each
 * container's children in a scratch stack because a source may not know counts up front;
 * MessagePack does, so this decoder allocates a container's children in the arena as soon
 * as its header is read (the count is first checked against the remaining bytes, so the
 * allocation is bounded by 16 or 32 bytes per input byte) and fills them in place: no events,
 * no copies, one pass. The encoder walks a tree straight into the writer. Both keep their own
 * explicit stacks (64 levels inline, heap beyond), and tests check they agree with the
 * generic paths.
 */
#include "mp_token.h"
#include "wirekit/utf8.h"

#define INLINE_FRAMES 64

typedef struct frame {
    wk_value *next; /* next child to fill */
    uint64_t left;  /* children still to fill (keys and values count separately) */
} frame;

/* The arena's bump fast path, inline; wk_arena_alloc handles new chunks. */
static inline void *arena_alloc(wk_arena *a, size_t size)
{
    uintptr_t p = ((uintptr_t)a->cur + 7u) & ~(uintptr_t)7u;
    if (a->cur != NULL && p <= (uintptr_t)a->end && size <= (size_t)((uintptr_t)a->end - p)) {
        a->cur = (uint8_t *)p + size;
        return (void *)p;
    }
    return wk_arena_alloc(a, size, 8);
}

static bool grow_frames(frame **frames, uint32_t *cap, const wk_allocator *alloc,
                        frame *inline_frames)
{
    uint32_t ncap = *cap * 2;
    frame *nf;
    if (*frames == inline_frames) {
        nf = wk_alloc(alloc, (size_t)ncap * sizeof(frame));
        if (nf != NULL) {
            memcpy(nf, inline_frames, (size_t)*cap * sizeof(frame));
        }
    } else {
        nf = wk_realloc(alloc, *frames, (size_t)*cap * sizeof(frame),
                        (size_t)ncap * sizeof(frame));
    }
    if (nf == NULL) {
        return false;
    }
    *frames = nf;
    *cap = ncap;
    return true;
}

/* Points `v` at `p[0..n)` or copies it into the arena. */
static inline bool set_bytes(wk_value *v, const void *p, uint32_t n, bool copy, wk_arena *a)
{
    v->len = n;
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

WK_API wk_status wk_mp_decode_value(const void *data, size_t len, const wk_mp_reader_opts *ropts,
                                   const wk_value_opts *vopts, wk_arena *arena, wk_value **out,
                                   size_t *consumed, wk_error *err)
{
    const uint8_t *start = data;
    const uint8_t *p = start;
    const uint8_t *end = len != 0 ? start + len : start;
    uint32_t max_depth = WK_MP_DEFAULT_MAX_DEPTH;
    bool strict = false;
    const wk_allocator *alloc = NULL;
    bool copy = vopts != NULL && (vopts->flags & WK_VALUE_COPY_STRINGS) != 0;
    if (ropts != NULL) {
        if (ropts->max_depth != 0) {
            max_depth = ropts->max_depth;
        }
        strict = ropts->strict_utf8;
        alloc = ropts->alloc;
    }
    if (vopts != NULL && vopts->max_depth != 0 && vopts->max_depth < max_depth) {
        max_depth = vopts->max_depth;
    }

    frame inline_frames[INLINE_FRAMES];
    frame *frames = inline_frames;
    uint32_t cap = INLINE_FRAMES;
    uint32_t depth = 0;
    wk_status st = WK_OK;
    const char *msg = NULL;
    const uint8_t *at = p;

    wk_value *root = arena_alloc(arena, sizeof(wk_value));
    if (root == NULL) {
        return wk_error_set(err, WK_ERR_NOMEM, 0, "arena exhausted");
    }
    wk_value *v = root;
    wk_event ev;
    for (;;) {
        at = p;
        if (WK__UNLIKELY(p == end)) {
            st = WK_ERR_TRUNCATED;
            msg = WK_MP_MSG_TRUNCATED;
            goto fail;
        }
        st = wk__mp_token(&p, end, &ev, &msg);
        if (WK__UNLIKELY(st != WK_OK)) {
            goto fail;
        }
        v->flags = 0;
        v->ext_type = 0;
        v->reserved = 0;
        v->len = 0;
        switch (ev.type) {
        case WK_EV_NIL:
            v->type = WK_VAL_NIL;
            v->u.u = 0;
            break;
        case WK_EV_BOOL:
            v->type = WK_VAL_BOOL;
            v->u.u = 0;
            v->u.b = ev.v.b;
            break;
        case WK_EV_UINT:
            v->type = WK_VAL_UINT;
            v->u.u = ev.v.u;
            break;
        case WK_EV_INT:
            v->type = WK_VAL_INT;
            v->u.i = ev.v.i;
            break;
        case WK_EV_FLOAT:
            v->type = WK_VAL_FLOAT;
            v->flags = ev.f32 ? WK_VALF_F32 : 0;
            v->u.f = ev.v.f;
            break;
        case WK_EV_STR:
            if (strict) {
                size_t bad = 0;
                if (!wk_utf8_valid(ev.v.str.ptr, ev.v.str.len, &bad)) {
                    at = (const uint8_t *)ev.v.str.ptr + bad;
                    st = WK_ERR_UTF8;
                    msg = WK_MP_MSG_UTF8;
                    goto fail;
                }
            }
            v->type = WK_VAL_STR;
            if (!set_bytes(v, ev.v.str.ptr, (uint32_t)ev.v.str.len, copy, arena)) {
                goto nomem;
            }
            break;
        case WK_EV_BIN:
            v->type = WK_VAL_BIN;
            if (!set_bytes(v, ev.v.str.ptr, (uint32_t)ev.v.str.len, copy, arena)) {
                goto nomem;
            }
            break;
        case WK_EV_EXT:
            v->type = WK_VAL_EXT;
            v->ext_type = ev.v.ext.type;
            if (!set_bytes(v, ev.v.ext.ptr, ev.v.ext.len, copy, arena)) {
                goto nomem;
            }
            break;
        case WK_EV_TIMESTAMP:
            v->type = WK_VAL_TIMESTAMP;
            v->u.i = ev.v.ts.sec;
            v->len = ev.v.ts.nsec;
            break;
        case WK_EV_ARRAY:
        case WK_EV_MAP: {
            if (WK__UNLIKELY(depth >= max_depth)) {
                st = WK_ERR_DEPTH;
                msg = WK_MP_MSG_DEPTH;
                goto fail;
            }
            bool is_map = ev.type == WK_EV_MAP;
            uint32_t n = ev.v.count;
            v->type = is_map ? WK_VAL_MAP : WK_VAL_ARRAY;
            v->len = n;
            v->u.items = NULL;
            if (n == 0) {
                break;
            }
            uint64_t kids = is_map ? 2 * (uint64_t)n : n;
            /* kids <= remaining bytes, so this product cannot overflow. */
            wk_value *items = arena_alloc(arena, (size_t)kids * sizeof(wk_value));
            if (items == NULL) {
                goto nomem;
            }
            v->u.items = items;
            if (WK__UNLIKELY(depth == cap) &&
                !grow_frames(&frames, &cap, alloc, inline_frames)) {
                st = WK_ERR_NOMEM;
                msg = WK_MP_MSG_NOMEM;
                goto fail;
            }
            frames[depth].next = items;
            frames[depth].left = kids;
            depth++;
            break;
        }
        default:
            break;
        }
        /* Move to the next slot to fill, closing containers whose children are all done. */
        while (depth > 0 && frames[depth - 1].left == 0) {
            depth--;
        }
        if (depth == 0) {
            break;
        }
        frames[depth - 1].left--;
        v = frames[depth - 1].next++;
    }
    if (frames != inline_frames) {
        wk_free(alloc, frames, (size_t)cap * sizeof(frame));
    }
    if (consumed != NULL) {
        *consumed = (size_t)(p - start);
    } else if (p != end) {
        return wk_error_set(err, WK_ERR_TRAILING, (size_t)(p - start),
                            "bytes left after the MessagePack value");
    }
    *out = root;
    return wk_error_set(err, WK_OK, (size_t)(p - start), NULL);

nomem:
    st = WK_ERR_NOMEM;
    msg = "arena exhausted";
fail:
    if (frames != inline_frames) {
        wk_free(alloc, frames, (size_t)cap * sizeof(frame));
    }
    return wk_error_set(err, st, (size_t)(at - start), msg);
}

/* ---- tree -> writer ---------------------------------------------------------------------- */

typedef struct wframe {
    const wk_value *next;
    uint64_t left;
} wframe;

WK_API void wk_mp_write_value(wk_mp_writer *w, const wk_value *v)
{
    wframe inline_frames[INLINE_FRAMES];
    wk__stack fs;
    wk__stack_init(&fs, inline_frames, INLINE_FRAMES, sizeof(wframe), w->out->alloc);
    wframe *frames = inline_frames;
    size_t depth = 0;
    for (;;) {
        switch ((wk_value_type)v->type) {
        case WK_VAL_NIL: wk_mp_write_nil(w); break;
        case WK_VAL_BOOL: wk_mp_write_bool(w, v->u.b); break;
        case WK_VAL_INT: wk_mp_write_int(w, v->u.i); break;
        case WK_VAL_UINT: wk_mp_write_uint(w, v->u.u); break;
        case WK_VAL_FLOAT:
            if ((v->flags & WK_VALF_F32) != 0) {
                wk_mp_write_float(w, (float)v->u.f);
            } else {
                wk_mp_write_double(w, v->u.f);
            }
            break;
        case WK_VAL_STR:
        case WK_VAL_RAWNUM: wk_mp_write_str(w, v->u.str, v->len); break;
        case WK_VAL_BIN: wk_mp_write_bin(w, v->u.bin, v->len); break;
        case WK_VAL_EXT: wk_mp_write_ext(w, v->ext_type, v->u.bin, v->len); break;
        case WK_VAL_TIMESTAMP: wk_mp_write_timestamp(w, v->u.i, v->len); break;
        case WK_VAL_ARRAY:
        case WK_VAL_MAP: {
            bool is_map = v->type == WK_VAL_MAP;
            if (is_map) {
                wk_mp_write_map(w, v->len);
            } else {
                wk_mp_write_array(w, v->len);
            }
            if (v->len == 0 || w->status != WK_OK) {
                break;
            }
            if (depth == fs.cap) {
                if (!wk__stack_grow(&fs, depth, 0)) {
                    wk_mp_writer_fail(w, WK_ERR_NOMEM, "out of memory for the tree walk");
                    break;
                }
                frames = fs.mem;
            }
            frames[depth].next = is_map ? &v->u.pairs[0].key : v->u.items;
            frames[depth].left = is_map ? 2 * (uint64_t)v->len : v->len;
            depth++;
            break;
        }
        default: wk_mp_writer_fail(w, WK_ERR_ARG, "value of unknown type in the tree"); break;
        }
        if (w->status != WK_OK) {
            break;
        }
        while (depth > 0 && frames[depth - 1].left == 0) {
            depth--;
        }
        if (depth == 0) {
            break;
        }
        frames[depth - 1].left--;
        v = frames[depth - 1].next++;
    }
    wk__stack_free(&fs);
}

WK_API wk_status wk_mp_encode_value(const wk_value *v, wk_buf *out, wk_error *err)
{
    wk_mp_writer w;
    wk_mp_writer_init(&w, out);
    wk_mp_write_value(&w, v);
    return wk_mp_writer_finish(&w, err);
}
