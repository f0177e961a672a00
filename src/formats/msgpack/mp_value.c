/*
 * Fused MessagePack <-> value tree paths. Flow: bytes -> build_from_tokens() (the byte layout
 * of mp_token_cases.h, each node written straight from its bytes) -> a tree in the arena; a
 * tree -> wk_mp_writer_value -> the writer (msgpack.h) -> bytes. The decoder is the msgpack
 * module's build loop (mp_build_loop.h): MessagePack gives counts up front, so a container's
 * children are allocated in the arena as soon as its header is read (the count is first
 * checked against the remaining bytes, so the allocation is bounded by 16 or 32 bytes per
 * input byte) and filled in place: no events, no copies, one pass. The encoder walks a tree straight
 * into the writer. Both stacks are core/kernel_interface.h's (64 levels inline, then the caller's
 * allocator: the reader options', else the arena's; the output buffer's for the encoder), and
 * tests check they agree with the generic paths.
 */
#include "formats/msgpack/mp_cursor.h"

#define INLINE_FRAMES 64

/* Where the loop lies in the instruction cache moves its speed by well over 10% with no
 * other change: measured as the msgpack suite's tree decode of twitter.json (wirekit bench
 * --suite msgpack) with the function at each 16-byte offset within a 64-byte line, 48 bytes
 * past a line being the fastest, and which offset a build got depended on the size of the
 * code linked before it (docs/benchmarks.md "mpinplace"). So its place is fixed: a line
 * boundary, then 48 bytes of padding before the entry (patchable_function_entry puts them
 * there as NOPs that are never executed). */
#if defined(__GNUC__)
static wk_status build_from_tokens(mp_cursor *c, wk_arena *arena, const wk__vb_opts *o,
                                   mp_build_state *s, wk__vb_fail *f)
    __attribute__((aligned(64), patchable_function_entry(48, 48)));
#endif

/* build_from_tokens(): builds the value at the cursor into the arena (s->root), resumable
 * (with s->pause, a token cut short returns WK_ERR_AGAIN and a later call goes on). Returns
 * WK_OK, or the failure with c->at at the token (or byte) at fault and f->msg. Its body is
 * mp_build_loop.h; its place in the code is fixed by the declaration above. */
static wk_status build_from_tokens(mp_cursor *c, wk_arena *arena, const wk__vb_opts *o,
                                   mp_build_state *s, wk__vb_fail *f)
{
#include "formats/msgpack/mp_build_loop.h"
}

/* The msgpack module's entry to the loop (mp_cursor.h), for the stream unpacker and the
 * schema decoder's wk_value fields: build_from_tokens() out of this file. */
wk_status wk__mp_build(mp_cursor *c, wk_arena *arena, const wk__vb_opts *o, mp_build_state *s,
                       wk__vb_fail *f)
{
    return build_from_tokens(c, arena, o, s, f);
}

/* The first value of data[0..len) as a tree in arena (*out; *consumed, may be NULL, its
 * length): build_from_tokens over the whole buffer, no pause. On failure err has the
 * cursor's or the builder's report and *out is untouched. */
WK_API wk_status wk_mp_decode_value(const void *data, size_t len, const wk_read_opts *opts,
                                   wk_arena *arena, wk_value **out, size_t *consumed,
                                   wk_error *err)
{
    const uint8_t *start = data;
    mp_cursor c;
    c.p = start;
    c.end = len != 0 ? start + len : start;
    c.at = start;
    c.strict = false;
    wk__vb_opts o;
    o.max_depth = WK_MP_DEFAULT_MAX_DEPTH;
    o.copy = opts != NULL && (opts->flags & WK_READ_COPY_STRINGS) != 0;
    o.alloc = arena->alloc;
    if (opts != NULL) {
        if (opts->max_depth != 0) {
            o.max_depth = opts->max_depth;
        }
        c.strict = (opts->flags & WK_READ_STRICT_UTF8) != 0;
        if (opts->alloc != NULL) {
            o.alloc = opts->alloc;
        }
    }
    wk__vb_fail f;
    mp_build_state s;
    memset(&s, 0, sizeof s); /* no pause: a cut token is the cursor's error */
    wk_status st = wk__mp_build(&c, arena, &o, &s, &f);
    wk_value *root = s.root;
    mp_build_state_free(&s, o.alloc); /* frames the build grew on the heap */
    if (st != WK_OK) {
        return wk_error_set(err, st, (size_t)(c.at - start), f.msg);
    }
    if (consumed != NULL) {
        *consumed = (size_t)(c.p - start);
    } else if (c.p != c.end) {
        return wk_error_set(err, WK_ERR_TRAILING, (size_t)(c.p - start),
                            "bytes left after the MessagePack value");
    }
    *out = root;
    return wk_error_set(err, WK_OK, (size_t)(c.p - start), NULL);
}

/* ---- tree -> writer ---------------------------------------------------------------------- */

/* One open container of the walk: its next child (a map's key and value are two) and how
 * many are left. */
typedef struct wframe {
    const wk_value *next;
    uint64_t left;
} wframe;

/* Writes the tree v through w, depth first with an explicit frame stack (64 levels inline,
 * then the buffer's allocator); failures are latched in w. */
WK_API void wk_mp_writer_value(wk_mp_writer *w, const wk_value *v)
{
    wframe inline_frames[INLINE_FRAMES];
    wk__stack fs;
    wk__stack_init(&fs, inline_frames, INLINE_FRAMES, sizeof(wframe), w->out->alloc);
    wframe *frames = inline_frames;
    size_t depth = 0;
    /* Each turn writes node v: a scalar whole, a container's header (its children follow
     * as the next turns); then on to the next child of the innermost open container. Raw
     * numbers are written as strings (MessagePack has no such type), floats keep their
     * width. */
    for (;;) {
        switch ((wk_value_type)v->type) {
        case WK_VAL_NIL: wk_mp_writer_nil(w); break;
        case WK_VAL_BOOL: wk_mp_writer_bool(w, v->u.b); break;
        case WK_VAL_INT: wk_mp_writer_int(w, v->u.i); break;
        case WK_VAL_UINT: wk_mp_writer_uint(w, v->u.u); break;
        case WK_VAL_FLOAT:
            if ((v->flags & WK_VALF_F32) != 0) {
                wk_mp_writer_float(w, (float)v->u.f);
            } else {
                wk_mp_writer_double(w, v->u.f);
            }
            break;
        case WK_VAL_STR:
        case WK_VAL_RAWNUM: wk_mp_writer_str(w, v->u.str, v->len); break;
        case WK_VAL_BIN: wk_mp_writer_bin(w, v->u.bin, v->len); break;
        case WK_VAL_EXT: wk_mp_writer_ext(w, v->ext_type, v->u.bin, v->len); break;
        case WK_VAL_TIMESTAMP: wk_mp_writer_timestamp(w, v->u.i, v->len); break;
        case WK_VAL_ARRAY:
        case WK_VAL_MAP: {
            bool is_map = v->type == WK_VAL_MAP;
            if (is_map) {
                wk_mp_writer_begin_map(w, v->len);
            } else {
                wk_mp_writer_begin_array(w, v->len);
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
            break; /* latched: nothing more is written */
        }
        /* close the containers whose children are all written, then the next child */
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

/* Appends the MessagePack form of the tree v to out; err says what failed. */
WK_API wk_status wk_mp_encode_value(const wk_value *v, wk_buf *out, wk_error *err)
{
    wk_mp_writer w;
    wk_mp_writer_init(&w, out);
    wk_mp_writer_value(&w, v);
    return wk_mp_writer_finish(&w, err);
}
