/*
 * The MessagePack tree build loop's frames and the state a paused build keeps between calls
 * (internal to the msgpack module): mp_build_loop.h builds with them, mp_value.c
 * (build_from_tokens) and mp_tree.c (the unpacker's build_in_block) own the state.
 */
#ifndef WK_MP_BUILD_STATE_H
#define WK_MP_BUILD_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/kernel_interface.h"
#include "wirekit/value.h"

/* An open container: its next child to fill and how many are left (keys and values count
 * apart). */
typedef struct mp_build_frame {
    wk_value *next;
    uint64_t left;
} mp_build_frame;

/* Frames on the C stack before the loop takes the options' allocator. */
#define MP_BUILD_INLINE_FRAMES 64

/* A build's state between calls. Zero it before the first call. The frames live on the
 * builder's allocator (o->alloc) between calls; the owner frees them with mp_build_state_free
 * (they are kept from one value to the next). */
typedef struct mp_build_state {
    mp_build_frame *frames; /* open frames while paused, else spare storage (or NULL) */
    size_t cap;             /* frames' capacity */
    size_t depth;           /* frames open while paused */
    wk_value *root;         /* the root (set when a build starts) */
    wk_value *v;            /* paused: the slot to fill next; NULL: no build in progress */
    bool pause;             /* a cut token pauses the build (else it is the cursor's error) */
} mp_build_state;

static inline void mp_build_state_free(mp_build_state *s, const wk_allocator *alloc)
{
    if (s->frames != NULL) {
        wk_free(alloc, s->frames, s->cap * sizeof(mp_build_frame));
    }
    s->frames = NULL;
    s->cap = 0;
    s->v = NULL;
}

/* Hands the frames stack of a build that returns back to `s`: heap storage the loop grew or
 * was given stays in `s`; frames still on the C stack are copied out when the build pauses
 * (`keep` frames). False when that copy cannot be allocated. */
static inline bool mp_build_state_keep(mp_build_state *s, wk__stack *fs, void *inline_mem,
                                       size_t keep, const wk_allocator *alloc)
{
    /* frames already on the heap: the state takes that block over (and drops its own) */
    if (fs->mem != inline_mem) {
        if (s->frames != NULL && s->frames != fs->mem) {
            wk_free(alloc, s->frames, s->cap * sizeof(mp_build_frame));
        }
        s->frames = fs->mem;
        s->cap = fs->cap;
        return true;
    }
    /* frames on the C stack, which ends with the call: the `keep` open ones are copied into
     * the state's own block, grown when too small */
    if (keep > s->cap) {
        mp_build_state_free(s, alloc);
        size_t cap = keep > 16 ? keep * 2 : 16;
        s->frames = wk_alloc(alloc, cap * sizeof(mp_build_frame));
        if (s->frames == NULL) {
            return false;
        }
        s->cap = cap;
    }
    if (keep != 0) {
        memcpy(s->frames, inline_mem, keep * sizeof(mp_build_frame));
    }
    return true;
}

#endif
