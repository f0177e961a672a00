/*
 * Tree building from any event source (wk_value_decode): an adapter over the one
 * tree-building loop (value/value_build_loop_interface.h) with a wk_source as its cursor.
 * Flow: any reader -> wk_source events -> build_from_source() -> wk_value nodes in the arena.
 * A source may not know a container's size when it opens (JSON), so the loop runs in its
 * scratch-stack mode: children gather on a stack of finished nodes and move into the arena in
 * one copy at WK_EV_END. Both stacks start on the C stack and move to the arena's allocator
 * only for large or deep input. MessagePack's fused path (wk_mp_decode_value) has its own
 * loop over the bytes (formats/msgpack/mp_build_loop.h), with the same nodes.
 */
#include "value/value_build_interface.h"
#include "wirekit/value.h"

/* The cursor: any wk_source, called through its function pointers. */
static inline wk_status source_next(const wk_source *src, wk_event *ev, const char **msg)
{
    (void)msg;
    return src->next(src->self, ev);
}

/* build_from_source(): builds the next whole value of src into the arena (*out, its root),
 * with its scratch stack (a container's size may be unknown until its WK_EV_END). Returns
 * WK_OK, or the failure with f saying whether the source failed (then it has the details) or
 * the builder did. Its body is value/value_build_loop_interface.h. */
#define VB_NEXT(c, ev, m) source_next((c), (ev), (m))
#define VB_MSG_STACK "out of memory for the tree builder's stacks"
static wk_status build_from_source(const wk_source *c, wk_arena *arena, const wk__vb_opts *o,
                                   wk_value **out, wk__vb_fail *f)
{
#include "value/value_build_loop_interface.h"
}

/* The adapter: options resolved (depth 512 by default, the arena's allocator for the
 * stacks), then the source's own report when it was the source that failed. */
WK_API wk_status wk_value_decode(const wk_source *src, const wk_read_opts *opts,
                                 wk_arena *arena, wk_value **out, wk_error *err)
{
    wk__vb_opts o;
    o.max_depth = opts != NULL && opts->max_depth != 0 ? opts->max_depth : 512u;
    o.copy = opts != NULL && (opts->flags & WK_READ_COPY_STRINGS) != 0;
    o.alloc = opts != NULL && opts->alloc != NULL ? opts->alloc : arena->alloc;
    wk__vb_fail f;
    wk_status st = build_from_source(src, arena, &o, out, &f);
    /* the builder's own failures carry a static message; the source's are its to report
     * (WK_ERR_EOF before any event: there was no value to build) */
    if (st == WK_OK) {
        return wk_error_set(err, WK_OK, src->offset(src->self), NULL);
    }
    if (!f.cursor) {
        return wk_error_set(err, st, src->offset(src->self), f.msg);
    }
    if (err != NULL) {
        if (st == WK_ERR_EOF) {
            wk_error_set(err, st, src->offset(src->self), "no more values");
        } else {
            src->error(src->self, err);
        }
    }
    return st;
}
