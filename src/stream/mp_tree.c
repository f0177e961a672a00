/*
 * The pausing MessagePack tree builder of wk_mp_unpacker (see mp_tree.h): the value module's counted
 * build loop in its resumable form, the node block a paused tree
 * lives in, and the pointer moves between the caller's arena, the block, the chunk and the
 * gather buffer. Every move is one linear pass over the nodes it concerns: the partial tree
 * once when it leaves the caller's arena, the block when it doubles, string pointers when the
 * gather buffer doubles, the finished tree once into the caller's arena; with doubling, the
 * total stays linear in the value's size.
 */
#include "mp_tree.h"

#include "../msgpack/mp_cursor.h"
#include "value/value_build_core.h"

#define BLOCK_MIN_NODES 256u

/* Pointer moves: addresses in [lo, lo + span] (the end included: a frame's next slot, or an
 * empty string, may point just past the end) move by `delta`. */
typedef struct move {
    uintptr_t lo, span, delta;
} move;

static const move no_move = {UINTPTR_MAX, 0, 0};

struct wk__mp_tree {
    wk__vb_state b;      /* the build in progress (frames, slot to fill next) */
    wk_value *nodes;     /* the node block: the root first, then children arrays */
    size_t used;         /* nodes in use (0 while the tree is not in the block) */
    size_t cap;          /* nodes the block holds */
    size_t max_nodes;    /* the cap, in nodes */
    uint8_t *arena_cur;  /* the caller's arena before the first run: where its nodes start */
    wk_arena_chunk *arena_chunks; /* ... and its chunk list then (the run's nodes are
                                   * contiguous if the list is the same after it) */
    const wk_allocator *alloc;
    uint32_t max_depth;
    bool strict;
    bool copy;
    bool full;           /* the block could not grow (at the cap, or no memory) */
    move last;           /* how the block moved in the last allocation (or no move) */
    bool in_arena;       /* the paused tree is in the caller's arena (same call), not the block */
    size_t *kids;        /* indexes in the block of the containers with children there */
    size_t nkids;
    size_t kids_cap;
};

static inline move move_of(const void *old, size_t bytes, const void *now)
{
    move m = {(uintptr_t)old, bytes, (uintptr_t)now - (uintptr_t)old};
    return m;
}

static inline bool moves(const move *m, uintptr_t p)
{
    return p - m->lo <= m->span;
}

/* Moves the byte pointers (strings, binary, extension data) of nodes[0..n) found in `bytes`.
 * Slots not filled yet are zero (nil) and have none. */
static void move_bytes(wk_value *v, size_t n, const move *bytes)
{
    const move b = *bytes;
    for (wk_value *end = v + n; v != end; v++) {
        uintptr_t p = (uintptr_t)v->u.items;
        if ((v->type == WK_VAL_STR || v->type == WK_VAL_BIN || v->type == WK_VAL_EXT) &&
            p - b.lo <= b.span) {
            v->u.bin = (const uint8_t *)(p + b.delta);
        }
    }
}

/* Moves the children pointers of the containers listed in t->kids, in the copy of the block
 * at `nodes`, by `delta`: the block is copied with memcpy, and only these nodes change. */
static void move_kids(const struct wk__mp_tree *t, wk_value *nodes, uintptr_t delta)
{
    for (size_t i = 0; i < t->nkids; i++) {
        wk_value *v = &nodes[t->kids[i]];
        v->u.items = (wk_value *)((uintptr_t)v->u.items + delta);
    }
}

/* Lists the container at index `at` of the block. False when out of memory. */
static bool kids_grow(struct wk__mp_tree *t);

static inline bool kids_push(struct wk__mp_tree *t, size_t at)
{
    if (t->nkids == t->kids_cap && !kids_grow(t)) {
        return false;
    }
    t->kids[t->nkids++] = at;
    return true;
}

static bool kids_grow(struct wk__mp_tree *t)
{
    size_t cap = t->kids_cap != 0 ? t->kids_cap * 2 : 64;
    size_t *n = t->kids == NULL ? wk_alloc(t->alloc, cap * sizeof(size_t))
                                : wk_realloc(t->alloc, t->kids, t->kids_cap * sizeof(size_t),
                                             cap * sizeof(size_t));
    if (n == NULL) {
        return false;
    }
    t->kids = n;
    t->kids_cap = cap;
    return true;
}

/* Moves the build's own pointers to nodes: the open frames' next slots and the slot to fill. */
static void move_build(wk__vb_frame *frames, size_t depth, wk_value **vp, const move *m)
{
    for (size_t i = 0; i < depth; i++) {
        if (moves(m, (uintptr_t)frames[i].next)) {
            frames[i].next = (wk_value *)((uintptr_t)frames[i].next + m->delta);
        }
    }
    if (vp != NULL && *vp != NULL && moves(m, (uintptr_t)*vp)) {
        *vp = (wk_value *)((uintptr_t)*vp + m->delta);
    }
}

/* Makes room for `n` more nodes in the block, moving what points into it when it moves.
 * False at the cap or when the allocator fails. */
static bool block_grow(struct wk__mp_tree *t, size_t n, wk__vb_frame *frames, size_t depth)
{
    if (n > t->max_nodes - t->used) {
        return false;
    }
    size_t need = t->used + n;
    size_t cap = t->cap != 0 ? t->cap : BLOCK_MIN_NODES;
    while (cap < need) {
        cap = cap > t->max_nodes / 2 ? t->max_nodes : cap * 2;
    }
    if (cap > t->max_nodes) {
        cap = t->max_nodes;
    }
    wk_value *old = t->nodes;
    wk_value *now = old == NULL ? wk_alloc(t->alloc, cap * sizeof(wk_value))
                                : wk_realloc(t->alloc, old, t->cap * sizeof(wk_value),
                                             cap * sizeof(wk_value));
    if (now == NULL) {
        return false;
    }
    if (old != NULL && now != old && t->used != 0) {
        move m = move_of(old, t->used * sizeof(wk_value), now);
        move_kids(t, now, m.delta);
        move_build(frames, depth, NULL, &m);
        t->last = m;
    }
    t->nodes = now;
    t->cap = cap;
    return true;
}

/* Where node `v` is after the last allocation in the block. */
static inline wk_value *block_moved(const struct wk__mp_tree *t, wk_value *v)
{
    return moves(&t->last, (uintptr_t)v) ? (wk_value *)((uintptr_t)v + t->last.delta) : v;
}

/* The builder's allocation hook in the block: zeroed nodes (unfilled slots read as nil) for
 * the root (v NULL) or the children of container v, which is listed. */
static inline wk_value *block_alloc(struct wk__mp_tree *t, size_t n, wk__vb_frame *frames,
                                    size_t depth, const wk_value *v)
{
    t->last = no_move;
    size_t at = v != NULL ? (size_t)(v - t->nodes) : 0;
    if ((n > t->cap - t->used && !block_grow(t, n, frames, depth)) ||
        (v != NULL && !kids_push(t, at))) {
        t->full = true;
        return NULL;
    }
    wk_value *p = t->nodes + t->used;
    t->used += n;
    memset(p, 0, n * sizeof(wk_value));
    return p;
}

/* The build, compiled once (so that the token decoder is inlined into it): the first run on
 * the chunk puts nodes in the caller's arena, as wk_mp_decode_value does; the later runs on
 * the gather buffer put them in the block. */
typedef struct tree_cursor {
    mp_cursor c;
    struct wk__mp_tree *t; /* the block's owner when `own` */
    bool own;
} tree_cursor;

#define VB_FN build
#define VB_CURSOR tree_cursor
#define VB_NEXT(c, ev, m) mp_next(&(c)->c, (ev), (m))
#define VB_COUNTED 1
#define VB_RESUMABLE 1
#define VB_ALLOC_KIDS(c, arena, n, frames, depth, v)                                   \
    ((c)->own ? block_alloc((c)->t, (size_t)(n), (frames), (depth), (v))               \
              : wk__vb_alloc((arena), (size_t)(n) * sizeof(wk_value)))
#define VB_MOVED(c, v) ((c)->own ? block_moved((c)->t, (v)) : (v))
#define VB_MSG_STACK WK_MP_MSG_NOMEM
#include "value/value_build_core.h"

static uint32_t max_depth_of(const wk_read_opts *opts)
{
    return opts->max_depth != 0 ? opts->max_depth : WK_MP_DEFAULT_MAX_DEPTH;
}

/* The tree state, made on first use. */
static struct wk__mp_tree *tree_new(const wk_read_opts *opts, size_t max)
{
    struct wk__mp_tree *t = wk_alloc(opts->alloc, sizeof *t);
    if (t != NULL) {
        memset(t, 0, sizeof *t);
        t->alloc = opts->alloc;
        t->max_depth = max_depth_of(opts);
        t->strict = (opts->flags & WK_READ_STRICT_UTF8) != 0;
        t->copy = (opts->flags & WK_READ_COPY_STRINGS) != 0;
        t->max_nodes = max / sizeof(wk_value);
        t->last = no_move;
    }
    return t;
}

bool wk__mp_tree_start(struct wk__mp_tree **tp, const wk_read_opts *opts, size_t max)
{
    if (*tp == NULL) {
        *tp = tree_new(opts, max);
    }
    if (*tp != NULL) {
        wk__mp_tree_restart(*tp);
    }
    return *tp != NULL;
}

wk_status wk__mp_tree_first(struct wk__mp_tree **tp, const wk_read_opts *opts, size_t max,
                            const uint8_t *base, size_t n, wk_arena *arena, wk_value **out,
                            wk__mp_tree_stop *stop)
{
    struct wk__mp_tree *t = *tp;
    wk__vb_state local;
    memset(&local, 0, sizeof local);
    wk__vb_state *s = t != NULL ? &t->b : &local;
    s->v = NULL;
    tree_cursor c = {{base, base + n, base, (opts->flags & WK_READ_STRICT_UTF8) != 0}, t, false};
    wk__vb_opts o;
    o.copy = (opts->flags & WK_READ_COPY_STRINGS) != 0;
    o.max_depth = max_depth_of(opts);
    o.alloc = opts->alloc;
    uint8_t *cur = arena->cur;
    wk_arena_chunk *chunks = arena->chunks;
    wk__vb_fail f;
    wk_status st = build(&c, arena, &o, s, &f);
    stop->at = (size_t)(c.c.at - base);
    stop->msg = f.msg;
    stop->block_full = false;
    if (st == WK_OK) {
        stop->at = (size_t)(c.c.p - base);
        *out = s->root;
    }
    if (t == NULL) {
        if (st != WK_ERR_AGAIN) {
            wk__vb_state_free(&local, opts->alloc);
            return st;
        }
        t = tree_new(opts, max);
        if (t == NULL) {
            wk__vb_state_free(&local, opts->alloc);
            stop->msg = NULL;
            return WK_ERR_NOMEM;
        }
        t->b = local;
        *tp = t;
    }
    t->arena_cur = cur;
    t->arena_chunks = chunks;
    return st;
}

bool wk__mp_tree_adopt(struct wk__mp_tree *t, wk_arena *arena, const uint8_t *chunk_rest,
                       size_t rest_len, const uint8_t *buf)
{
    wk__vb_state *s = &t->b;
    if (t->copy || arena->chunks != t->arena_chunks) {
        return false; /* strings in the arena among the nodes, or nodes in two regions */
    }
    /* (built in the arena by a resumed run: strings point into the gather buffer already) */
    wk_value *root = s->root;
    if ((uintptr_t)arena->cur < (uintptr_t)root) {
        return false;
    }
    size_t n = (size_t)((uintptr_t)arena->cur - (uintptr_t)root) / sizeof(wk_value);
    t->used = 0;
    if (n > t->cap && !block_grow(t, n, NULL, 0)) {
        return false;
    }
    memcpy(t->nodes, root, n * sizeof(wk_value));
    move m = move_of(root, n * sizeof(wk_value), t->nodes);
    move_build(s->frames, s->depth, &s->v, &m);
    /* the slots not filled yet hold whatever the arena held: make them nil */
    memset(s->v, 0, sizeof(wk_value));
    for (size_t i = 0; i < s->depth; i++) {
        memset(s->frames[i].next, 0, (size_t)s->frames[i].left * sizeof(wk_value));
    }
    /* children pointers into the region move with it (the containers are listed); byte
     * pointers into the chunk move to the copy in the gather buffer: one pass */
    move bytes = chunk_rest != NULL ? move_of(chunk_rest, rest_len, buf) : no_move;
    t->nkids = 0;
    for (size_t i = 0; i < n; i++) {
        wk_value *v = &t->nodes[i];
        uintptr_t p = (uintptr_t)v->u.items;
        switch ((wk_value_type)v->type) {
        case WK_VAL_ARRAY:
        case WK_VAL_MAP:
            if (moves(&m, p)) {
                v->u.items = (wk_value *)(p + m.delta);
                if (!kids_push(t, i)) {
                    return false;
                }
            }
            break;
        case WK_VAL_STR:
        case WK_VAL_BIN:
        case WK_VAL_EXT:
            if (moves(&bytes, p)) {
                v->u.bin = (const uint8_t *)(p + bytes.delta);
            }
            break;
        default: break;
        }
    }
    t->used = n;
    t->in_arena = false;
    arena->cur = t->arena_cur; /* the caller's arena is as it was before the value */
    return true;
}

void wk__mp_tree_restart(struct wk__mp_tree *t)
{
    t->b.v = NULL;
    t->used = 0;
    t->nkids = 0;
    t->in_arena = false;
}

/* Moves the paused tree from the block into `arena` (one block of nodes), where the run goes
 * on. False when the arena refuses, or gives the block a chunk of its own (the run's nodes
 * must follow it in one region, for wk__mp_tree_adopt). */
static bool move_in(struct wk__mp_tree *t, wk_arena *arena)
{
    uint8_t *cur = arena->cur;
    wk_arena_chunk *chunks = arena->chunks;
    wk_value *dst = wk_arena_alloc(arena, t->used * sizeof(wk_value), 8);
    if (dst == NULL || (uint8_t *)(dst + t->used) != arena->cur) {
        return false; /* refused, or a chunk of its own: the run's nodes would not follow */
    }
    memcpy(dst, t->nodes, t->used * sizeof(wk_value));
    move m = move_of(t->nodes, t->used * sizeof(wk_value), dst);
    move_kids(t, dst, m.delta);
    move_build(t->b.frames, t->b.depth, &t->b.v, &m);
    t->b.root = dst;
    t->used = 0;
    t->nkids = 0;
    t->in_arena = true;
    t->arena_chunks = arena->chunks;
    t->arena_cur = arena->chunks == chunks ? cur : (uint8_t *)dst;
    return true;
}

wk_status wk__mp_tree_resume(struct wk__mp_tree *t, const uint8_t *base, size_t n, size_t from,
                             wk_arena *arena, wk_value **out, wk__mp_tree_stop *stop)
{
    if (arena != NULL && !t->in_arena) {
        if (t->b.v == NULL) { /* a new build, in the arena */
            t->arena_cur = arena->cur;
            t->arena_chunks = arena->chunks;
            t->in_arena = true;
        } else if (!move_in(t, arena)) { /* the arena is full: the caller gives the tree up */
            stop->at = from;
            stop->msg = NULL;
            stop->block_full = true;
            *out = NULL;
            return WK_ERR_NOMEM;
        }
    }
    tree_cursor c = {{base + from, base + n, base + from, t->strict}, t, arena == NULL};
    wk__vb_opts o;
    o.copy = false;
    o.max_depth = t->max_depth;
    o.alloc = t->alloc;
    if (t->b.v == NULL && arena == NULL) { /* a new build: the root is the block's first node */
        t->used = 0;
        t->nkids = 0;
    }
    wk__vb_fail f;
    t->full = false;
    wk_status st = build(&c, arena, &o, &t->b, &f);
    stop->at = (size_t)(c.c.at - base);
    stop->msg = f.msg;
    stop->block_full = st == WK_ERR_NOMEM && t->full;
    *out = NULL;
    if (st == WK_OK) {
        stop->at = (size_t)(c.c.p - base);
        if (arena != NULL) {
            *out = t->b.root;
        }
        t->in_arena = false;
    } else if (st != WK_ERR_AGAIN) {
        t->in_arena = false;
    }
    return st;
}

void wk__mp_tree_buffer_moved(struct wk__mp_tree *t, const uint8_t *old, size_t n,
                              const uint8_t *buf)
{
    move bytes = move_of(old, n, buf);
    move_bytes(t->nodes, t->used, &bytes);
}

bool wk__mp_tree_deliver(struct wk__mp_tree *t, wk_arena *arena, bool copy, wk_value **out)
{
    size_t n = t->used;
    t->used = 0;
    wk_value *dst = wk_arena_alloc(arena, n * sizeof(wk_value), 8);
    if (dst == NULL) {
        t->nkids = 0;
        return false;
    }
    memcpy(dst, t->nodes, n * sizeof(wk_value));
    move_kids(t, dst, (uintptr_t)dst - (uintptr_t)t->nodes);
    t->nkids = 0;
    if (copy) {
        for (size_t i = 0; i < n; i++) {
            wk_value *v = &dst[i];
            if (v->type == WK_VAL_STR || v->type == WK_VAL_BIN || v->type == WK_VAL_EXT) {
                if (!wk__vb_set_bytes(v, v->u.bin, v->len, true, arena)) {
                    return false;
                }
            }
        }
    }
    *out = dst;
    return true;
}

void wk__mp_tree_free(struct wk__mp_tree *t)
{
    if (t == NULL) {
        return;
    }
    const wk_allocator *alloc = t->alloc;
    wk__vb_state_free(&t->b, alloc);
    if (t->nodes != NULL) {
        wk_free(alloc, t->nodes, t->cap * sizeof(wk_value));
    }
    if (t->kids != NULL) {
        wk_free(alloc, t->kids, t->kids_cap * sizeof(size_t));
    }
    wk_free(alloc, t, sizeof *t);
}
