/*
 * The body of the generic tree-building loop (value_build_interface.h has its shared part): a
 * source's events -> wk_value nodes in an arena. Flow: any reader -> a wk_source -> this loop
 * -> the tree. It is the body of build_from_source() (value/value_decode.c, wk_value_decode),
 * which writes its header out and #includes this file between its braces; MessagePack's
 * fused decoder has its own loop over the bytes (formats/msgpack/mp_build_loop.h), with the
 * same event->node rules. The function it is the body of is
 *   static wk_status NAME(CURSOR *c, wk_arena *arena, const wk__vb_opts *o, wk_value **out,
 *                         wk__vb_fail *f)
 * and returns WK_OK (*out: the root, in the arena) or a status with `f` saying whether the
 * cursor failed (then the adapter asks it for details and offset) or the builder did (with a
 * static message). Containers close with WK_EV_END and counts are optional: children gather
 * on a scratch stack and move to the arena in one copy at their END. Nesting is an explicit
 * stack (core/kernel_interface.h) on the caller's allocator.
 *
 * Before including, define:
 *   VB_NEXT(c, ev, m)  the next event into *ev, returning wk_status (WK_ERR_EOF: no more
 *                      values); on failure may set *m (const char **) to a static message
 *   VB_MSG_STACK       message when the frame or scratch stack cannot grow
 * The macros are #undef'd at the end of the body.
 */
#if !defined(VB_NEXT) || !defined(VB_MSG_STACK)
#error "value_build_loop_interface.h is a function body: see its opening comment"
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
    /* The scratch stack: finished nodes gather on it until their container's WK_EV_END
     * moves them into the arena; a frame remembers where its children start. Each event is
     * built in `node`, then pushed. */
    wk_value scratch_inline[WK__VB_INLINE_SCRATCH];
    wk__stack ss;
    wk__stack_init(&ss, scratch_inline, WK__VB_INLINE_SCRATCH, sizeof(wk_value), o->alloc);
    wk_value *scratch = scratch_inline;
    size_t sn = 0;
    bool started = false;
    wk_value node;
    wk_value *v = &node;
    /* One event per turn: its node built, then onto the stack (the root: into the arena). */
    for (;;) {
        st = VB_NEXT(c, &ev, &f->msg);
        if (WK__UNLIKELY(st != WK_OK)) {
            if (st == WK_ERR_EOF && started) {
                st = WK_ERR_TRUNCATED;
                f->msg = "input ends inside a container";
                goto fail;
            }
            f->cursor = true;
            goto fail;
        }
        started = true;
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
                /* A frame remembers where the container's children will start on the
                 * scratch stack; the node itself is made at its END. */
                if (WK__UNLIKELY(depth == fs.cap) && !wk__stack_grow(&fs, depth, 0)) {
                    goto stack_full;
                }
                frames = fs.mem;
                frames[depth].first = sn;
                frames[depth].is_map = is_map;
                depth++;
                continue;
            } else if (ev.type == WK_EV_END) {
                /* The container's END: its children (the scratch stack from the frame's
                 * start) move into the arena in one copy, and the container's node is the
                 * value just finished. */
                if (depth == 0) {
                    st = WK_ERR_STATE;
                    f->msg = "end of container with no container open";
                    goto fail;
                }
                wk__vb_frame fr = frames[--depth];
                size_t start = fr.first;
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
            } else {
                goto fail;
            }
        }
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
    }
    /* The exits (the whole tree returned from the loop): a stack that cannot grow, and
     * every failure, the stacks freed. */
stack_full:
    st = WK_ERR_NOMEM;
    f->msg = VB_MSG_STACK;
fail:
    wk__stack_free(&fs);
    wk__stack_free(&ss);
    return st;

#undef VB_NEXT
#undef VB_MSG_STACK

