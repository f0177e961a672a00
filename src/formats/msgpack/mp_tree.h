/*
 * Internal: the tree side of wk_mp_unpacker, a MessagePack tree builder that pauses where a
 * chunk ends and goes on when the next chunk arrives, so that a value cut by chunk ends is
 * decoded once, a piece at a time. It is the msgpack module's build loop (mp_build_loop.h,
 * the loop of wk_mp_decode_value, nodes written from the bytes) compiled twice, pausing at a
 * cut token (build_from_tokens in mp_value.c, build_in_block in mp_tree.c):
 *
 *   - on the caller's chunk, into the caller's arena: a value that ends inside the chunk is
 *     built exactly as wk_mp_decode_value builds it, strings in place;
 *   - on the unpacker's gather buffer, into the tree's own node block: the rest of a value
 *     that the chunk cut.
 *
 * A paused tree lives in the node block (the caller may reset its arena before the next call).
 * When the first run pauses, the nodes it built move out of the caller's arena into the
 * block, in one copy: the run's allocations are one contiguous run of nodes when the arena
 * did not start a new chunk meanwhile and strings were not copied; otherwise the gathered
 * bytes are decoded again from the value's start, once. String pointers into the chunk move to
 * the same bytes in the gather buffer (the unpacker has copied the chunk's rest there), and
 * follow the buffer when it grows. A run that goes on from the block on the next chunk in
 * place leaves the block where it is and puts its new nodes in the caller's arena, after room
 * taken for the block's nodes: if it completes the tree, the block is copied into that room
 * (each node built before the last pause is copied once); if it pauses again, only the nodes
 * it built move into the block, and only the nodes it built or filled are looked at. A run on
 * the gather buffer builds in the block, and the complete tree is copied into the caller's
 * arena in one block (strings copied too with WK_READ_COPY_STRINGS, else pointing into the
 * gather buffer until the next call).
 *
 * The node block never grows past the unpacker's buffer cap: a value whose tree would need
 * more goes back to the unpacker's framing and is decoded once complete.
 *
 * A held tree (wk_mp_unpacker_next_value_in_place: the caller leaves its arena alone while a
 * value is paused) uses no block: every run builds into the caller's arena, so the tree is
 * never copied. At each pause the slots the run allocated but did not fill are made nil, and
 * the byte pointers of the nodes it built or filled move from the chunk's rest to the same
 * bytes in the gather buffer; when the buffer moves, the pointers of the whole tree follow
 * (one pass over its nodes, which lie in one region of the arena: a run that starts another
 * region gives the tree up). With WK_READ_COPY_STRINGS no node points at input bytes and
 * none of this is needed.
 * Flow: chunks -> mp_unpacker.c -> these calls -> the build loop, paused and resumed ->
 * a tree in the caller's arena.
 */
#ifndef WK_STREAM_MP_TREE_H
#define WK_STREAM_MP_TREE_H

#include "wirekit/stream.h"

/* Why a run stopped, beside its status. */
typedef struct wk__mp_tree_stop {
    size_t at;       /* WK_OK: the value's length; WK_ERR_AGAIN: offset of the token that is
                      * cut short; otherwise: offset of the error */
    const char *msg; /* static message of an error */
    bool block_full; /* WK_ERR_NOMEM because the node block reached the cap, or the tree
                      * could not move into the caller's arena: the tree is given up */
} wk__mp_tree_stop;

/* Builds the value at base[0..n) into `arena`, with `*tp` (allocated here on the first pause,
 * NULL before; `opts` and the block cap `max` are kept in it) holding what a pause needs.
 * WK_OK: *out is the tree, whole in the arena; WK_ERR_AGAIN: paused (call wk__mp_tree_adopt
 * next, or wk__mp_tree_hold when `held`); WK_ERR_NOMEM with a null stop->msg: no memory for
 * the pause itself; other statuses as the builder's. */
wk_status wk__mp_tree_first(struct wk__mp_tree **tp, const wk_read_opts *opts, size_t max,
                            bool held, const uint8_t *base, size_t n, wk_arena *arena,
                            wk_value **out, wk__mp_tree_stop *stop);

/* After a pause of the runs of this call into `arena` (wk__mp_tree_first on `chunk_rest`,
 * whose bytes are now copied at `buf`; or wk__mp_tree_resume, on `chunk_rest` or, NULL, on the
 * gather buffer), in the same call: moves the nodes they put in `arena` into the node block
 * and gives that room back to `arena`. Returns false when it cannot (strings copied, the arena
 * started a new chunk, the block would pass the cap, out of memory): the tree is then given
 * up (wk__mp_tree_restart; the value is built again from its start). */
bool wk__mp_tree_adopt(struct wk__mp_tree *t, wk_arena *arena, const uint8_t *chunk_rest,
                       size_t rest_len, const uint8_t *buf);

/* After a pause of a held tree's run into `arena` (on `chunk_rest`, whose bytes are now
 * copied at `buf`; or, NULL, on the gather buffer), in the same call: makes the slots the run
 * allocated and did not fill nil, points the nodes it built or filled at the buffer instead of
 * the chunk, and notes the arena's state (wk__mp_tree_held_intact). False when the tree's nodes
 * are no longer one region of the arena: the tree is then given up (wk__mp_tree_restart). */
bool wk__mp_tree_hold(struct wk__mp_tree *t, wk_arena *arena, const uint8_t *chunk_rest,
                      size_t rest_len, const uint8_t *buf);

/* Whether `arena` is the one a held tree paused in, as the pause left it. */
bool wk__mp_tree_held_intact(const struct wk__mp_tree *t, const wk_arena *arena);

/* Whether the tree paused last is held in the caller's arena (else it is in the block). */
bool wk__mp_tree_is_held(const struct wk__mp_tree *t);

/* Makes the tree state (*tp NULL) or forgets the build in progress; false when out of
 * memory. A value read with wk__mp_tree_resume from its start follows, held in the caller's
 * arena when `held`. */
bool wk__mp_tree_start(struct wk__mp_tree **tp, const wk_read_opts *opts, size_t max,
                       bool held);

/* Forgets the build in progress (the next wk__mp_tree_resume starts at the value's start). */
void wk__mp_tree_restart(struct wk__mp_tree *t);

/* Goes on with the value at base[from..n): `from` is the token the last pause stopped at
 * (0 after a restart, when base[0] is the value's start), in the gather buffer or, when the
 * buffer ended at a token's end, in the next chunk. With `arena` NULL it builds into the node
 * block (a complete tree is then taken out by wk__mp_tree_deliver). Else the new nodes go in
 * `arena` (the first such run of a call takes room there for the block's nodes too): *out is
 * then the complete tree, wholly in `arena`; a pause leaves the new nodes there (run again on
 * the next bytes in the same call, or wk__mp_tree_adopt them; a held tree's runs all go in
 * `arena`, and each pause is followed by wk__mp_tree_hold). Statuses as
 * wk__mp_tree_first; `stop->block_full` says that the tree must be given up (the block
 * reached the cap, or `arena` refused the room for the block). */
wk_status wk__mp_tree_resume(struct wk__mp_tree *t, const uint8_t *base, size_t n, size_t from,
                             wk_arena *arena, wk_value **out, wk__mp_tree_stop *stop);

/* The gather buffer moved from `old` to `buf` (it holds `n` bytes): string pointers follow. */
void wk__mp_tree_buffer_moved(struct wk__mp_tree *t, const uint8_t *old, size_t n,
                              const uint8_t *buf);

/* Copies the complete tree into `arena` (strings too when `copy`) and empties the block.
 * False when the arena refuses (the caller then decodes the gathered value itself, which
 * gives the buffer decoder's verdict). */
bool wk__mp_tree_deliver(struct wk__mp_tree *t, wk_arena *arena, bool copy, wk_value **out);

/* Releases everything the tree holds (NULL is fine). */
void wk__mp_tree_free(struct wk__mp_tree *t);

#endif
