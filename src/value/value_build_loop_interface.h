/*
 * The body of the one tree-building loop (value_build_interface.h has its shared part): a
 * cursor's events -> wk_value nodes in an arena. Flow: bytes -> a cursor (any wk_source, or
 * MessagePack's token decoder) -> this loop -> the tree. It is the body of
 *   build_from_source()  value/value_decode.c: over any wk_source (wk_value_decode)
 *   build_from_tokens()  formats/msgpack/mp_value.c: over the token decoder (wk_mp_decode_value)
 *   build_in_block()     formats/msgpack/mp_tree.c: the same, into the stream unpacker's blocks
 * each of which writes its header (name, cursor type, attributes) out and #includes this file
 * between its braces, so both paths build the same nodes with the same event->node rules,
 * depth limit and stack handling. The function it is the body of is
 *   static wk_status NAME(CURSOR *c, wk_arena *arena, const wk__vb_opts *o, wk_value **out,
 *                         wk__vb_fail *f)
 * (VB_RESUMABLE: `wk__vb_state *s` in place of `out`; the root is s->root) and returns WK_OK
 * (*out: the root, in the arena) or a status with `f` saying whether the cursor failed (then
 * the adapter asks it for details and offset) or the builder did (with a static message).
 * Nesting is an explicit stack (core/kernel_interface.h) on the caller's allocator.
 *
 * Before including, define:
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
 * The macros are #undef'd at the end of the body.
 */
#if !defined(VB_NEXT) || !defined(VB_COUNTED) || !defined(VB_MSG_STACK)
#error "value_build_loop_interface.h is a function body: see its opening comment"
#endif

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

    /* The frame stack: one frame per open container, WK__VB_INLINE_FRAMES on the C stack,
     * then the options' allocator (core/kernel_interface.h). `v` is always the slot the next
     * event fills. */
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
    /* Counted: the root's slot is allocated first, and each container's children when its
     * header is read; a resumed build takes its frames and next slot from the state. */
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
    /* Scratch-stack mode: finished nodes gather on a second stack until their container's
     * WK_EV_END moves them into the arena; a frame remembers where its children start. Each
     * event is built in `node`, then pushed. */
    wk_value scratch_inline[WK__VB_INLINE_SCRATCH];
    wk__stack ss;
    wk__stack_init(&ss, scratch_inline, WK__VB_INLINE_SCRATCH, sizeof(wk_value), o->alloc);
    wk_value *scratch = scratch_inline;
    size_t sn = 0;
    bool started = false;
    wk_value node;
    wk_value *v = &node;
#endif
    /* One event per turn: its node into the slot, then (counted) on to the next slot, or
     * (scratch) onto the stack. */
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
        /* A scalar is complete here; WK_ERR_ARG means a container header or END, handled
         * below; any other status is a failure (no memory for a copied string). */
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
                /* Counted: the node gets its count now and its children's slots from the
                 * hook (the arena, or the unpacker's block, which may move nodes already
                 * built: VB_MOVED); a frame then walks the slots. An empty container is
                 * complete at once. */
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
                /* Scratch: a frame remembers where the container's children will start on
                 * the scratch stack; the node itself is made at its END. */
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
                /* The container's END: its children (the scratch stack from the frame's
                 * start) move into the arena in one copy, and the container's node is the
                 * value just finished. */
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
    /* The tree is whole (counted mode; the scratch mode returned from the loop). */
#if VB_RESUMABLE
    st = WK_OK;
    goto fail; /* the same exit: the frames' storage goes back to the state */
#elif VB_COUNTED
    wk__stack_free(&fs);
    *out = root;
    return WK_OK;
#endif
    /* The exits: a stack that cannot grow, and every failure (and, resumable, the end):
     * the stacks freed, or kept in the state for its next use. */
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

#undef VB_NEXT
#undef VB_COUNTED
#undef VB_MSG_STACK
#undef VB_RESUMABLE
#undef VB_ALLOC_KIDS
#undef VB_MOVED
