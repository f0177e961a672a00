/*
 * Tree building from any event source. A source may not know a container's size when it
 * opens (JSON), so children are gathered on a scratch stack of finished values and copied
 * into the arena, contiguously, when the container's WK_EV_END arrives; the scratch stack is
 * then popped back. Nesting uses an explicit frame stack, never recursion. Both stacks start
 * on the C stack and move to the heap (the arena's allocator) only for large or deep input.
 * MessagePack has a faster fused path (wk_mp_decode_value) that must give the same tree.
 */
#include <string.h>

#include "wirekit/value.h"

#define INLINE_FRAMES 32
#define INLINE_SCRATCH 128

typedef struct vframe {
    size_t start; /* index in scratch of the container's first child */
    bool is_map;
} vframe;

typedef struct vstack {
    void *mem;
    size_t len; /* elements in use */
    size_t cap; /* elements */
    size_t elem;
    void *inline_mem;
    const wk_allocator *alloc;
} vstack;

static bool vstack_grow(vstack *s)
{
    size_t ncap;
    size_t nbytes;
    if (!wk_size_mul(s->cap, 2, &ncap) || !wk_size_mul(ncap, s->elem, &nbytes)) {
        return false;
    }
    void *n;
    if (s->mem == s->inline_mem) {
        n = wk_alloc(s->alloc, nbytes);
        if (n != NULL) {
            memcpy(n, s->mem, s->len * s->elem);
        }
    } else {
        n = wk_realloc(s->alloc, s->mem, s->cap * s->elem, nbytes);
    }
    if (n == NULL) {
        return false;
    }
    s->mem = n;
    s->cap = ncap;
    return true;
}

static void vstack_free(vstack *s)
{
    if (s->mem != s->inline_mem) {
        wk_free(s->alloc, s->mem, s->cap * s->elem);
    }
}

static bool set_bytes(wk_value *v, const void *p, size_t n, bool copy, wk_arena *a)
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

WK_API wk_status wk_value_decode(const wk_source *src, const wk_read_opts *opts,
                                 wk_arena *arena, wk_value **out, wk_error *err)
{
    const wk_allocator *scratch_alloc =
        opts != NULL && opts->alloc != NULL ? opts->alloc : arena->alloc;
    uint32_t max_depth = opts != NULL && opts->max_depth != 0 ? opts->max_depth : 512u;
    bool copy = opts != NULL && (opts->flags & WK_READ_COPY_STRINGS) != 0;
    vframe frames_inline[INLINE_FRAMES];
    wk_value scratch_inline[INLINE_SCRATCH];
    vstack frames = {frames_inline, 0, INLINE_FRAMES, sizeof(vframe), frames_inline,
                     scratch_alloc};
    vstack scratch = {scratch_inline, 0, INLINE_SCRATCH, sizeof(wk_value), scratch_inline,
                      scratch_alloc};
    wk_status st;
    const char *msg = NULL;
    bool started = false;
    wk_event ev;
    for (;;) {
        st = src->next(src->self, &ev);
        if (st != WK_OK) {
            if (st == WK_ERR_EOF && started) {
                st = WK_ERR_TRUNCATED;
                msg = "input ends inside a container";
                goto fail_here;
            }
            goto fail_src;
        }
        started = true;
        wk_value v;
        memset(&v, 0, sizeof v);
        switch (ev.type) {
        case WK_EV_NIL: v.type = WK_VAL_NIL; break;
        case WK_EV_BOOL:
            v.type = WK_VAL_BOOL;
            v.u.b = ev.v.b;
            break;
        case WK_EV_INT:
            if (ev.v.i >= 0) {
                v.type = WK_VAL_UINT;
                v.u.u = (uint64_t)ev.v.i;
            } else {
                v.type = WK_VAL_INT;
                v.u.i = ev.v.i;
            }
            break;
        case WK_EV_UINT:
            v.type = WK_VAL_UINT;
            v.u.u = ev.v.u;
            break;
        case WK_EV_FLOAT:
            v.type = WK_VAL_FLOAT;
            v.flags = ev.f32 ? WK_VALF_F32 : 0;
            v.u.f = ev.v.f;
            break;
        case WK_EV_STR:
        case WK_EV_BIN:
        case WK_EV_RAWNUM:
            v.type = ev.type == WK_EV_STR   ? WK_VAL_STR
                     : ev.type == WK_EV_BIN ? WK_VAL_BIN
                                            : WK_VAL_RAWNUM;
            if (ev.v.str.len > UINT32_MAX) {
                st = WK_ERR_RANGE;
                msg = "string longer than 2^32-1 bytes";
                goto fail_here;
            }
            if (!set_bytes(&v, ev.v.str.ptr, ev.v.str.len, copy, arena)) {
                goto nomem;
            }
            break;
        case WK_EV_EXT:
            v.type = WK_VAL_EXT;
            v.ext_type = ev.v.ext.type;
            if (!set_bytes(&v, ev.v.ext.ptr, ev.v.ext.len, copy, arena)) {
                goto nomem;
            }
            break;
        case WK_EV_TIMESTAMP:
            v.type = WK_VAL_TIMESTAMP;
            v.u.i = ev.v.ts.sec;
            v.len = ev.v.ts.nsec;
            break;
        case WK_EV_ARRAY:
        case WK_EV_MAP:
            if (frames.len >= max_depth) {
                st = WK_ERR_DEPTH;
                msg = "nesting deeper than the configured limit";
                goto fail_here;
            }
            if (frames.len == frames.cap && !vstack_grow(&frames)) {
                goto nomem_stack;
            }
            ((vframe *)frames.mem)[frames.len].start = scratch.len;
            ((vframe *)frames.mem)[frames.len].is_map = ev.type == WK_EV_MAP;
            frames.len++;
            continue;
        case WK_EV_END: {
            if (frames.len == 0) {
                st = WK_ERR_STATE;
                msg = "end of container with no container open";
                goto fail_here;
            }
            vframe f = ((vframe *)frames.mem)[--frames.len];
            size_t n = scratch.len - f.start;
            if (f.is_map && (n & 1) != 0) {
                st = WK_ERR_SYNTAX;
                msg = "map ended after a key without its value";
                goto fail_here;
            }
            size_t count = f.is_map ? n / 2 : n;
            if (count > UINT32_MAX) {
                st = WK_ERR_RANGE;
                msg = "container of more than 2^32-1 elements";
                goto fail_here;
            }
            v.type = f.is_map ? WK_VAL_MAP : WK_VAL_ARRAY;
            v.len = (uint32_t)count;
            v.u.items = NULL;
            if (n != 0) {
                /* n values already sit in the scratch stack, so n * 16 fits in size_t. */
                wk_value *items = wk_arena_alloc(arena, n * sizeof(wk_value), 8);
                if (items == NULL) {
                    goto nomem;
                }
                memcpy(items, (wk_value *)scratch.mem + f.start, n * sizeof(wk_value));
                v.u.items = items;
            }
            scratch.len = f.start;
            break;
        }
        default:
            st = WK_ERR_ARG;
            msg = "unknown event type";
            goto fail_here;
        }
        if (frames.len == 0) {
            wk_value *root = wk_arena_alloc(arena, sizeof(wk_value), 8);
            if (root == NULL) {
                goto nomem;
            }
            *root = v;
            *out = root;
            vstack_free(&frames);
            vstack_free(&scratch);
            return wk_error_set(err, WK_OK, src->offset(src->self), NULL);
        }
        if (scratch.len == scratch.cap && !vstack_grow(&scratch)) {
            goto nomem_stack;
        }
        ((wk_value *)scratch.mem)[scratch.len++] = v;
    }
nomem:
    st = WK_ERR_NOMEM;
    msg = "arena exhausted";
    goto fail_here;
nomem_stack:
    st = WK_ERR_NOMEM;
    msg = "out of memory for the tree builder's stacks";
fail_here:
    vstack_free(&frames);
    vstack_free(&scratch);
    return wk_error_set(err, st, src->offset(src->self), msg);
fail_src:
    vstack_free(&frames);
    vstack_free(&scratch);
    if (err != NULL) {
        if (st == WK_ERR_EOF) {
            wk_error_set(err, st, src->offset(src->self), "no more values");
        } else {
            src->error(src->self, err);
        }
    }
    return st;
}
