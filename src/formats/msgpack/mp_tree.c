/*
 * The pausing MessagePack tree builder of wk_mp_unpacker (see mp_tree.h): the msgpack
 * module's build loop (mp_build_loop.h; into the caller's arena: the buffer decoder's own
 * build, build_from_tokens in mp_value.c; into the block: build_in_block, compiled here), the
 * node block a paused tree lives in, and the pointer moves between the caller's arena, the
 * block, the chunk and the gather buffer. Flow: chunks -> mp_unpacker.c (the feed) -> the
 * build loop (nodes from the bytes), paused at each chunk end -> a tree in the
 * caller's arena. Every move is one linear pass
 * over the nodes it concerns: a run's new nodes once when they leave the caller's arena at a
 * pause (with the block's slots the run filled), the block when it doubles, string pointers
 * when the gather buffer doubles, the block once into the caller's arena when the tree is
 * complete; with doubling, the total stays linear in the value's size.
 */
#include "formats/msgpack/mp_tree.h"

#include "formats/msgpack/mp_cursor.h"
#include "value/value_build_interface.h"

#define BLOCK_MIN_NODES 256u

/* Pointer moves: addresses in [lo, lo + span] (the end included: a frame's next slot, or an
 * empty string, may point just past the end) move by `delta`. */
typedef struct move {
    uintptr_t lo, span, delta;
} move;

static const move no_move = {UINTPTR_MAX, 0, 0};

struct wk__mp_tree {
    mp_build_state b;    /* the build in progress (frames, slot to fill next) */
    wk_value *nodes;     /* the node block: the root first, then children arrays */
    size_t used;         /* nodes in use (0 while the tree is not in the block) */
    size_t cap;          /* nodes the block holds */
    size_t max_nodes;    /* the cap, in nodes */
    uint8_t *arena_cur;  /* the caller's arena before this call's runs into it (given back
                          * when their nodes move into the block) */
    wk_arena_chunk *arena_chunks; /* its chunk list once the runs began (their nodes are
                                   * contiguous if the list is the same after them) */
    size_t arena_total;  /* the bytes it had taken from its allocator then */
    uintptr_t run_lo;    /* where the runs' nodes start in the arena */
    wk_value *dst;       /* room in the arena for the block's nodes, taken when the runs
                          * began (the block moves there if they complete the tree) */
    const wk_allocator *alloc;
    uint32_t max_depth;
    bool strict;
    bool copy;
    bool full;           /* the block could not grow (at the cap, or no memory) */
    move last;           /* how the block moved in the last allocation (or no move) */
    bool in_arena;       /* runs of this call have put nodes in the caller's arena */
    size_t *kids;        /* indexes in the block of the containers with children there */
    size_t nkids;
    size_t kids_cap;
    size_t *open;        /* before the runs into the arena: the unfilled slots of the open
                          * frames in the block, as index pairs [from, to) (runs fill them) */
    size_t nopen;        /* pairs in `open` */
    size_t open_cap;     /* pairs `open` holds */
    size_t slot;         /* ... and the slot to fill next then, if in the block (else none) */
    bool held;           /* the tree is built in the caller's arena from its start and stays
                          * there while paused (wk_mp_unpacker_next_value_in_place): the
                          * indexes above count from the root, and the block is not used */
    const wk_arena *held_arena;       /* while held and paused: the arena as the pause left it */
    const uint8_t *held_cur;
    const wk_arena_chunk *held_chunks;
    uint64_t held_gen; /* its wk_arena.gen: a reset or a re-init since shows there */
};

#define NO_SLOT SIZE_MAX

/* The move of the `bytes` bytes at `old` to `now`. */
static inline move move_of(const void *old, size_t bytes, const void *now)
{
    move m = {(uintptr_t)old, bytes, (uintptr_t)now - (uintptr_t)old};
    return m;
}

/* Does the address p lie in what m moves (its end included)? One compare: p - lo wraps for
 * addresses below lo. */
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

/* Makes nil the unfilled slots of a paused build (the slot to fill next, the open frames'
 * rest) that lie among nodes[0..n). */
static void nil_unfilled(const mp_build_state *s, wk_value *nodes, size_t n)
{
    move here = move_of(nodes, n * sizeof(wk_value), nodes);
    if (moves(&here, (uintptr_t)s->v)) {
        memset(s->v, 0, sizeof(wk_value));
    }
    for (size_t i = 0; i < s->depth; i++) {
        if (moves(&here, (uintptr_t)s->frames[i].next)) {
            memset(s->frames[i].next, 0, (size_t)s->frames[i].left * sizeof(wk_value));
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

/* Lists the container at index `at` of the block (kids_grow when full). False when out of
 * memory. */
static inline bool kids_push(struct wk__mp_tree *t, size_t at)
{
    if (t->nkids == t->kids_cap && !kids_grow(t)) {
        return false;
    }
    t->kids[t->nkids++] = at;
    return true;
}

/* Doubles the container list (64 entries first). False when out of memory (the list is as
 * it was). */
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
static void move_build(mp_build_frame *frames, size_t depth, wk_value **vp, const move *m)
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
static bool block_grow(struct wk__mp_tree *t, size_t n, mp_build_frame *frames, size_t depth,
                       wk_value **vp)
{
    /* never past the cap (the unpacker's buffer cap, in nodes); doubling from
     * BLOCK_MIN_NODES so the copies stay linear in the tree's size */
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
    /* the block moved: the containers' children pointers in it, the build's frames and slot
     * follow, and `last` tells the builder where a node it holds now is (block_moved) */
    if (old != NULL && now != old && t->used != 0) {
        move m = move_of(old, t->used * sizeof(wk_value), now);
        move_kids(t, now, m.delta);
        move_build(frames, depth, vp, &m);
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
static inline wk_value *block_alloc(struct wk__mp_tree *t, size_t n, mp_build_frame *frames,
                                    size_t depth, const wk_value *v)
{
    t->last = no_move;
    size_t at = v != NULL ? (size_t)(v - t->nodes) : 0;
    if ((n > t->cap - t->used && !block_grow(t, n, frames, depth, NULL)) ||
        (v != NULL && !kids_push(t, at))) {
        t->full = true;
        return NULL;
    }
    wk_value *p = t->nodes + t->used;
    t->used += n;
    static const wk_value nil;
    switch (n) { /* most containers are small: no call for them */
    case 4: p[3] = nil; /* fall through */
    case 3: p[2] = nil; /* fall through */
    case 2: p[1] = nil; /* fall through */
    case 1: p[0] = nil; break;
    default: memset(p, 0, n * sizeof(wk_value)); break;
    }
    return p;
}

/* The builds: into the caller's arena, the buffer decoder's own (wk__mp_build: the first run
 * on the chunk, and the runs that go on from the block in the arena), and into the block (the
 * runs on the gather buffer), compiled here with the byte layout inlined. */
typedef struct tree_cursor {
    mp_cursor c;
    struct wk__mp_tree *t; /* the block's owner */
} tree_cursor;

#if defined(__GNUC__)
#define TREE_FLATTEN __attribute__((flatten)) /* the arena's and the block's calls inlined */
#else
#define TREE_FLATTEN
#endif
static wk_status build_in_block(tree_cursor *c, wk_arena *arena, const wk__vb_opts *o,
                                mp_build_state *s, wk__vb_fail *f) TREE_FLATTEN;

/* build_in_block(): build_from_tokens() (mp_value.c) with the tree's blocks in place of the
 * arena: a container's children come from block_alloc, which may move nodes already built
 * (block_moved then says where one is now). Resumable; returns as build_from_tokens. Its
 * body is mp_build_loop.h. */
#define MP_BL_CURSOR(c) (&(c)->c)
#define MP_BL_ALLOC_KIDS(c, arena, n, frames, depth, v) \
    block_alloc((c)->t, (size_t)(n), (frames), (depth), (v))
#define MP_BL_MOVED(c, v) block_moved((c)->t, (v))
static wk_status build_in_block(tree_cursor *c, wk_arena *arena, const wk__vb_opts *o,
                                mp_build_state *s, wk__vb_fail *f)
{
#include "formats/msgpack/mp_build_loop.h"
}

/* The nesting limit of the options, or the MessagePack default. */
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
        t->b.pause = true;
    }
    return t;
}

/* Makes the tree state on first use, or forgets the build in progress (mp_tree.h). */
bool wk__mp_tree_start(struct wk__mp_tree **tp, const wk_read_opts *opts, size_t max,
                       bool held)
{
    if (*tp == NULL) {
        *tp = tree_new(opts, max);
    }
    if (*tp != NULL) {
        wk__mp_tree_restart(*tp);
        (*tp)->held = held;
    }
    return *tp != NULL;
}

/* The first run over a value, on the caller's chunk into the caller's arena (mp_tree.h):
 * the state is a local one until a pause needs the tree's. */
wk_status wk__mp_tree_first(struct wk__mp_tree **tp, const wk_read_opts *opts, size_t max,
                            bool held, const uint8_t *base, size_t n, wk_arena *arena,
                            wk_value **out, wk__mp_tree_stop *stop)
{
    struct wk__mp_tree *t = *tp;
    mp_build_state local;
    memset(&local, 0, sizeof local);
    local.pause = true;
    mp_build_state *s = t != NULL ? &t->b : &local;
    s->v = NULL;
    tree_cursor c = {{base, base + n, base, (opts->flags & WK_READ_STRICT_UTF8) != 0}, t};
    wk__vb_opts o;
    o.copy = (opts->flags & WK_READ_COPY_STRINGS) != 0;
    o.max_depth = max_depth_of(opts);
    o.alloc = opts->alloc;
    uint8_t *cur = arena->cur;
    wk_arena_chunk *chunks = arena->chunks;
    size_t total = arena->total;
    wk__vb_fail f;
    wk_status st = wk__mp_build(&c.c, arena, &o, s, &f);
    stop->at = (size_t)(c.c.at - base);
    stop->msg = f.msg;
    stop->block_full = false;
    if (st == WK_OK) {
        stop->at = (size_t)(c.c.p - base);
        *out = s->root;
    }
    if (t == NULL) {
        if (st != WK_ERR_AGAIN) {
            mp_build_state_free(&local, opts->alloc);
            return st;
        }
        t = tree_new(opts, max);
        if (t == NULL) {
            mp_build_state_free(&local, opts->alloc);
            stop->msg = NULL;
            return WK_ERR_NOMEM;
        }
        t->b = local;
        *tp = t;
    }
    t->used = 0; /* a pause leaves the whole tree in the arena, for wk__mp_tree_adopt or
                  * wk__mp_tree_hold */
    t->nkids = 0;
    t->held = held;
    t->nopen = 0;
    t->slot = NO_SLOT;
    t->arena_cur = cur;
    t->arena_chunks = chunks;
    t->arena_total = total;
    t->run_lo = ((uintptr_t)cur + 7u) & ~(uintptr_t)7u;
    t->in_arena = st == WK_ERR_AGAIN;
    return st;
}

/* Makes room for `pairs` index pairs in t->open. False when out of memory. */
static bool open_grow(struct wk__mp_tree *t, size_t pairs)
{
    size_t cap = t->open_cap != 0 ? t->open_cap : 16;
    while (cap < pairs) {
        cap *= 2;
    }
    size_t *n = t->open == NULL ? wk_alloc(t->alloc, cap * 2 * sizeof(size_t))
                                : wk_realloc(t->alloc, t->open, t->open_cap * 2 * sizeof(size_t),
                                             cap * 2 * sizeof(size_t));
    if (n == NULL) {
        return false;
    }
    t->open = n;
    t->open_cap = cap;
    return true;
}

/* Where the indexes of the open slots count from: the root of a held tree, else the block. */
static inline const wk_value *node_base(const struct wk__mp_tree *t)
{
    return t->held ? t->b.root : t->nodes;
}

/* Before the first run of a call into the caller's arena (before every run, for a held
 * tree): takes room there for the block's nodes (filled if the runs complete the tree) and
 * notes what the runs may change in the block, or in the held tree's nodes: the open frames'
 * unfilled slots and the slot to fill next. False when the arena
 * refuses, or puts that room in a chunk of its own (the runs' nodes would not follow it in one
 * region), or out of memory: the caller gives the tree up. */
static bool runs_begin(struct wk__mp_tree *t, wk_arena *arena)
{
    mp_build_state *s = &t->b;
    uint8_t *cur = arena->cur;
    wk_arena_chunk *chunks = arena->chunks;
    /* room for the block's nodes first, right where the runs' nodes will follow, so that a
     * complete tree is one contiguous region (the block copied in front of the new nodes) */
    t->nopen = 0;
    t->slot = NO_SLOT;
    t->dst = NULL;
    t->arena_cur = cur;
    if (t->used != 0) {
        t->dst = wk_arena_alloc(arena, t->used * sizeof(wk_value), 8);
        if (t->dst == NULL || (uint8_t *)(t->dst + t->used) != arena->cur) {
            return false;
        }
        if (arena->chunks != chunks) {
            t->arena_cur = (uint8_t *)t->dst;
        }
    }
    /* a tree paused before this call: note its unfilled slots (the open frames' rest, the
     * next slot) as indexes, which a later pause in the arena needs to nil or move them */
    if ((t->used != 0 || t->held) && s->v != NULL) { /* a tree paused before this call */
        const wk_value *base = node_base(t);
        if (s->depth > t->open_cap && !open_grow(t, s->depth)) {
            return false;
        }
        t->slot = (size_t)(s->v - base);
        for (size_t i = 0; i < s->depth; i++) {
            size_t from = (size_t)(s->frames[i].next - base);
            t->open[2 * i] = from;
            t->open[2 * i + 1] = from + (size_t)s->frames[i].left;
        }
        t->nopen = s->depth;
    }
    /* the arena as the runs begin: if its chunk list is the same after them, their nodes
     * are the contiguous bytes from run_lo on */
    t->arena_chunks = arena->chunks;
    t->arena_total = arena->total;
    t->run_lo = ((uintptr_t)arena->cur + 7u) & ~(uintptr_t)7u;
    t->in_arena = true;
    return true;
}

/* The runs completed the tree: the block's nodes move into the room taken for them, where
 * the runs' nodes point already. *out is the root. */
static void runs_complete(struct wk__mp_tree *t, wk_value **out)
{
    if (t->used != 0) {
        memcpy(t->dst, t->nodes, t->used * sizeof(wk_value));
        move_kids(t, t->dst, (uintptr_t)t->dst - (uintptr_t)t->nodes);
        *out = t->dst;
    } else {
        *out = t->b.root;
    }
    t->used = 0;
    t->nkids = 0;
    t->in_arena = false;
}

/* Node types (as bits) whose payload points at children, and at bytes. */
#define CONTAINERS (1u << WK_VAL_ARRAY | 1u << WK_VAL_MAP)
#define BYTES (1u << WK_VAL_STR | 1u << WK_VAL_BIN | 1u << WK_VAL_EXT)

/* After the runs' nodes moved into the block: fixes node `at` of the block, a container
 * whose children moved with them (listed then), or bytes in the chunk's rest, which the
 * gather buffer holds now. False when out of memory. */
static inline bool fix_moved(struct wk__mp_tree *t, size_t at, const move *m, const move *bytes)
{
    wk_value *v = &t->nodes[at];
    uintptr_t p = (uintptr_t)v->u.items;
    uint32_t kind = 1u << (v->type & 31u);
    if ((kind & CONTAINERS) != 0 && p - m->lo < m->span) { /* children: never at the end */
        v->u.items = (wk_value *)(p + m->delta);
        return kids_push(t, at);
    }
    if ((kind & BYTES) != 0 && moves(bytes, p)) {
        v->u.bin = (const uint8_t *)(p + bytes->delta);
    }
    return true;
}

/* At a pause: the runs' nodes move from the caller's arena into the block (mp_tree.h). */
bool wk__mp_tree_adopt(struct wk__mp_tree *t, wk_arena *arena, const uint8_t *chunk_rest,
                       size_t rest_len, const uint8_t *buf)
{
    mp_build_state *s = &t->b;
    if (t->copy || arena->chunks != t->arena_chunks) {
        return false; /* strings in the arena among the nodes, or nodes in two regions */
    }
    uintptr_t lo = t->run_lo;
    size_t n = (uintptr_t)arena->cur > lo ? ((uintptr_t)arena->cur - lo) / sizeof(wk_value) : 0;
    size_t base = t->used;
    if (n > t->cap - base && !block_grow(t, n, s->frames, s->depth, &s->v)) {
        return false;
    }
    /* the runs' nodes go after the block's: pointers to them follow */
    wk_value *dst = t->nodes + base;
    if (n != 0) {
        memcpy(dst, (const void *)lo, n * sizeof(wk_value));
    }
    move m = move_of((const void *)lo, n * sizeof(wk_value), dst);
    move_build(s->frames, s->depth, &s->v, &m);
    if (base == 0) {
        s->root = t->nodes; /* the runs built the root first */
    }
    nil_unfilled(s, dst, n); /* their unfilled slots hold whatever the arena held */
    /* the nodes the runs built or filled: the moved ones, the slot that was to be filled
     * next, and the open frames' slots filled since (all of them for a frame closed since) */
    move bytes = chunk_rest != NULL ? move_of(chunk_rest, rest_len, buf) : no_move;
    for (size_t i = base; i < base + n; i++) {
        if (!fix_moved(t, i, &m, &bytes)) {
            return false;
        }
    }
    if (t->slot != NO_SLOT && !fix_moved(t, t->slot, &m, &bytes)) {
        return false;
    }
    for (size_t j = 0; j < t->nopen; j++) {
        size_t from = t->open[2 * j];
        size_t to = t->open[2 * j + 1];
        if (j < s->depth) {
            size_t at = (size_t)((uintptr_t)s->frames[j].next - (uintptr_t)t->nodes) /
                        sizeof(wk_value);
            if (at >= from && at <= to) { /* still open: filled up to its next slot */
                to = at;
            }
        }
        for (size_t i = from; i < to; i++) {
            if (!fix_moved(t, i, &m, &bytes)) {
                return false;
            }
        }
    }
    t->used = base + n;
    t->in_arena = false;
    arena->cur = t->arena_cur; /* the caller's arena is as it was before the runs */
    return true;
}

/* The nodes of a held tree are one region of the arena, [root, arena->cur): no chunk was
 * started since the run began, or the run's first node (the root of a new build) started the
 * chunk that is current and nothing started another. */
static bool one_region(const struct wk__mp_tree *t, const wk_arena *a)
{
    if (a->chunks == t->arena_chunks) {
        return true;
    }
    uintptr_t root = (uintptr_t)t->b.root;
    uintptr_t chunk = (uintptr_t)a->chunks;
    return t->slot == NO_SLOT && root >= chunk && root < (uintptr_t)a->end &&
           a->total - t->arena_total == (uintptr_t)a->end - chunk; /* that chunk alone */
}

/* At a pause of a held tree: its nodes stay in the caller's arena (mp_tree.h). */
bool wk__mp_tree_hold(struct wk__mp_tree *t, wk_arena *arena, const uint8_t *chunk_rest,
                      size_t rest_len, const uint8_t *buf)
{
    mp_build_state *s = &t->b;
    t->in_arena = false;
    if (!t->copy) { /* else no node points at input bytes, and nothing is scanned */
        if (!one_region(t, arena)) {
            return false;
        }
        /* the run's nodes: all of a new build's, from the root */
        wk_value *lo = t->slot == NO_SLOT ? s->root : (wk_value *)t->run_lo;
        size_t n = (size_t)((uintptr_t)arena->cur - (uintptr_t)lo) / sizeof(wk_value);
        /* the slots it allocated and did not fill hold whatever the arena held: nil, so that
         * no scan reads memory never written (older nodes' slots were made nil at earlier
         * pauses) */
        nil_unfilled(s, lo, n);
        if (chunk_rest != NULL) {
            /* the nodes it built or filled may point into the chunk; not the slot that was
             * to be filled next when it began: a run goes on only once the token it stopped
             * at is whole in the buffer, so that slot's bytes are there */
            move bytes = move_of(chunk_rest, rest_len, buf);
            move_bytes(lo, n, &bytes);
            for (size_t j = 0; j < t->nopen; j++) {
                size_t from = t->open[2 * j];
                size_t to = t->open[2 * j + 1];
                if (j < s->depth) {
                    size_t at = (size_t)(s->frames[j].next - s->root);
                    if (at >= from && at <= to) { /* still open: filled up to its next slot */
                        to = at;
                    }
                }
                move_bytes(s->root + from, to - from, &bytes);
            }
        }
    }
    t->held_arena = arena;
    t->held_cur = arena->cur;
    t->held_chunks = arena->chunks;
    t->held_gen = arena->gen;
    return true;
}

/* Is the paused tree held in the caller's arena (mp_tree.h)? */
bool wk__mp_tree_is_held(const struct wk__mp_tree *t)
{
    return t->held;
}

/* Is `arena` the one the held tree paused in, as the pause left it (mp_tree.h)? */
bool wk__mp_tree_held_intact(const struct wk__mp_tree *t, const wk_arena *arena)
{
    /* the pointers catch an allocation; the generation a reset or a free and init, which
     * may leave the pointers where they were once the caller refills the arena */
    return arena == t->held_arena && arena->gen == t->held_gen && arena->cur == t->held_cur &&
           arena->chunks == t->held_chunks;
}

/* Forgets the build in progress (mp_tree.h). */
void wk__mp_tree_restart(struct wk__mp_tree *t)
{
    t->b.v = NULL;
    t->used = 0;
    t->nkids = 0;
    t->in_arena = false;
}

/* Goes on with the value from the token the last pause stopped at (mp_tree.h). */
wk_status wk__mp_tree_resume(struct wk__mp_tree *t, const uint8_t *base, size_t n, size_t from,
                             wk_arena *arena, wk_value **out, wk__mp_tree_stop *stop)
{
    *out = NULL;
    if (t->b.v == NULL) { /* a new build: the root is the block's first node, or the arena's */
        t->used = 0;
        t->nkids = 0;
    }
    if (arena != NULL && !t->in_arena && !runs_begin(t, arena)) {
        stop->at = from; /* the arena is full: the caller gives the tree up */
        stop->msg = NULL;
        stop->block_full = true;
        return WK_ERR_NOMEM;
    }
    tree_cursor c = {{base + from, base + n, base + from, t->strict}, t};
    wk__vb_opts o;
    o.copy = t->held && t->copy; /* a tree in the block copies its strings when delivered */
    o.max_depth = t->max_depth;
    o.alloc = t->alloc;
    wk__vb_fail f;
    t->full = false;
    wk_status st = arena != NULL ? wk__mp_build(&c.c, arena, &o, &t->b, &f)
                                 : build_in_block(&c, NULL, &o, &t->b, &f);
    stop->at = (size_t)(c.c.at - base);
    stop->msg = f.msg;
    stop->block_full = st == WK_ERR_NOMEM && t->full;
    if (st == WK_OK) {
        stop->at = (size_t)(c.c.p - base);
        if (arena != NULL) {
            runs_complete(t, out);
        }
    } else if (st != WK_ERR_AGAIN) {
        t->in_arena = false;
    }
    return st;
}

/* The gather buffer moved: string pointers into it follow (mp_tree.h). */
void wk__mp_tree_buffer_moved(struct wk__mp_tree *t, const uint8_t *old, size_t n,
                              const uint8_t *buf)
{
    move bytes = move_of(old, n, buf);
    if (!t->held) {
        move_bytes(t->nodes, t->used, &bytes);
    } else if (!t->copy && t->b.v != NULL) { /* the held nodes, made nil where unfilled */
        move_bytes(t->b.root, (size_t)(t->held_cur - (const uint8_t *)t->b.root) /
                                  sizeof(wk_value), &bytes);
    }
}

/* The complete tree from the block into the caller's arena (mp_tree.h). */
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

/* Releases the tree state and all it holds (mp_tree.h). */
void wk__mp_tree_free(struct wk__mp_tree *t)
{
    if (t == NULL) {
        return;
    }
    const wk_allocator *alloc = t->alloc;
    mp_build_state_free(&t->b, alloc);
    if (t->nodes != NULL) {
        wk_free(alloc, t->nodes, t->cap * sizeof(wk_value));
    }
    if (t->kids != NULL) {
        wk_free(alloc, t->kids, t->kids_cap * sizeof(size_t));
    }
    if (t->open != NULL) {
        wk_free(alloc, t->open, t->open_cap * 2 * sizeof(size_t));
    }
    wk_free(alloc, t, sizeof *t);
}
