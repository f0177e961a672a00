/*
 * The MessagePack event reader: a cursor over caller bytes plus the count of elements left
 * in the innermost open container (`left`, UINT64_MAX at top level so that counting there is
 * free) and a stack of the enclosing containers' counts, which is how it knows when to emit
 * WK_EV_END. The first 32 levels of that stack live inside the reader; deeper nesting (up to
 * max_depth) takes a heap stack, so depth costs no C stack at all. Every byte-level check is
 * in wk__mp_token (mp_token.h), shared with the scan and the fused tree decoder. The typed
 * reads (wk_mp_reader_*) are inline in msgpack.h for the one-byte forms and land here for the
 * rest. Flow: bytes -> the token decoder (mp_token.h) -> this reader (counts -> WK_EV_END) ->
 * events, to a caller or through wk_source to any sink.
 */
#include "formats/msgpack/mp_token.h"
#include "wirekit/utf8.h"

#define TOP_LEVEL UINT64_MAX

/* The depth below which the inline fast paths of msgpack.h may open and close containers.
 * Kept in one field, fast_depth (this, or 0 with a heap stack or after an error), so that the
 * inline begin_map/begin_array/end test one compare instead of depth, heap and status apart:
 * that is what lets validate-while-decoding beat a separate check pass (instructions per seed
 * decode: wirekit bench --suite msgpack --case 'seed decode' --callgrind). */
static uint32_t inline_depth(const wk_mp_reader *r)
{
    return r->max_depth < WK_MP_READER_INLINE_DEPTH ? r->max_depth : WK_MP_READER_INLINE_DEPTH;
}

/* Sets r up to read data[0..len) (not copied: it must outlive r and the views r hands out).
 * Never fails; the options' depth limit, UTF-8 strictness and allocator are kept. */
WK_API void wk_mp_reader_init(wk_mp_reader *r, const void *data, size_t len,
                              const wk_read_opts *opts)
{
    r->start = data;
    r->pos = data;
    r->end = len != 0 ? r->start + len : r->start;
    r->left = TOP_LEVEL;
    r->heap = NULL;
    r->depth = 0;
    r->heap_cap = 0;
    r->max_depth = WK_MP_DEFAULT_MAX_DEPTH;
    r->strict_utf8 = false;
    r->alloc = NULL;
    if (opts != NULL) {
        if (opts->max_depth != 0) {
            r->max_depth = opts->max_depth;
        }
        r->strict_utf8 = (opts->flags & WK_READ_STRICT_UTF8) != 0;
        r->alloc = opts->alloc;
    }
    r->fast_depth = inline_depth(r);
    r->status = WK_OK;
    r->msg = NULL;
    r->err_offset = 0;
}

/* Frees the heap stack of deep nesting, if any; r may go on reading (or be dropped). Called
 * at the end of the input and on failure too, so a reader read to its end holds nothing. */
WK_API void wk_mp_reader_free(wk_mp_reader *r)
{
    if (r->heap != NULL) {
        wk_free(r->alloc, r->heap, (size_t)r->heap_cap * sizeof(uint64_t));
        r->heap = NULL;
        r->heap_cap = 0;
        r->fast_depth = inline_depth(r);
    }
}

/* Latches the error (st, the static msg, the offset of `at`) and returns st; the reader is
 * left so that every later call, inline fast paths included, returns it. */
static wk_status fail(wk_mp_reader *r, wk_status st, const uint8_t *at, const char *msg)
{
    r->status = st;
    r->msg = msg;
    r->err_offset = (size_t)(at - r->start);
    r->left = 0; /* makes the inline fast paths of the typed reads fall through */
    wk_mp_reader_free(r);
    r->fast_depth = 0; /* and those of read_map/read_array/read_end */
    return st;
}

/* Where the enclosing containers' counts are: inline, or on the heap once deeper. */
static inline uint64_t *slots(wk_mp_reader *r)
{
    return r->heap != NULL ? r->heap : r->inline_rem;
}

/* Opens a container of `count` elements; the depth limit was checked by the caller. */
static bool push(wk_mp_reader *r, uint64_t count)
{
    /* past the inline slots: a heap stack that doubles (never past max_depth), the inline
     * counts copied into it the first time */
    if (r->depth >= WK_MP_READER_INLINE_DEPTH && r->depth >= r->heap_cap) {
        uint32_t ncap = r->heap_cap == 0 ? 2 * WK_MP_READER_INLINE_DEPTH : r->heap_cap * 2;
        if (ncap > r->max_depth) {
            ncap = r->max_depth;
        }
        uint64_t *nh;
        if (r->heap == NULL) {
            nh = wk_alloc(r->alloc, (size_t)ncap * sizeof(uint64_t));
            if (nh != NULL) {
                memcpy(nh, r->inline_rem, sizeof r->inline_rem);
            }
        } else {
            nh = wk_realloc(r->alloc, r->heap, (size_t)r->heap_cap * sizeof(uint64_t),
                            (size_t)ncap * sizeof(uint64_t));
        }
        if (nh == NULL) {
            return false;
        }
        r->heap = nh;
        r->heap_cap = ncap;
        r->fast_depth = 0; /* the slots now live on the heap: no inline open/close */
    }
    /* the parent's count of elements left goes on the stack; `left` is the new container's */
    slots(r)[r->depth++] = r->left;
    r->left = count;
    return true;
}

/* Closes the innermost container: its parent's count of elements left comes back. */
static inline void pop(wk_mp_reader *r)
{
    r->left = slots(r)[--r->depth];
}

/*
 * Decodes the next value's token without counting it: WK_OK (ev filled, *next = the position
 * after its header and payload), WK_ERR_EOF at the end of a top-level stream, or a latched
 * error. The caller has checked that the container has elements left.
 */
static wk_status peek(wk_mp_reader *r, wk_event *ev, const uint8_t **next)
{
    if (r->pos == r->end) {
        if (r->depth == 0) {
            wk_mp_reader_free(r);
            return WK_ERR_EOF;
        }
        return fail(r, WK_ERR_TRUNCATED, r->pos, WK_MP_MSG_TRUNCATED);
    }
    const uint8_t *p = r->pos;
    const char *msg = NULL;
    wk_status st = wk__mp_token(&p, r->end, ev, &msg);
    if (WK__UNLIKELY(st != WK_OK)) {
        return fail(r, st, r->pos, msg);
    }
    *next = p;
    return WK_OK;
}

/* Consumes the peeked value: string check, depth limit and container push. */
static wk_status take(wk_mp_reader *r, const wk_event *ev, const uint8_t *next)
{
    /* what the token decoder leaves to its callers: UTF-8 of strings (when asked for) and
     * the depth limit; a container's count goes on the stack (a map's pairs twice) */
    switch (ev->type) {
    case WK_EV_STR:
        if (r->strict_utf8) {
            size_t bad = 0;
            if (!wk_utf8_valid(ev->v.str.ptr, ev->v.str.len, &bad)) {
                return fail(r, WK_ERR_UTF8, (const uint8_t *)ev->v.str.ptr + bad,
                            WK_MP_MSG_UTF8);
            }
        }
        break;
    case WK_EV_ARRAY:
    case WK_EV_MAP:
        if (r->depth >= r->max_depth) {
            return fail(r, WK_ERR_DEPTH, r->pos, WK_MP_MSG_DEPTH);
        }
        r->left--;
        if (!push(r, ev->type == WK_EV_MAP ? 2 * (uint64_t)ev->v.count : ev->v.count)) {
            r->left++;
            return fail(r, WK_ERR_NOMEM, r->pos, WK_MP_MSG_NOMEM);
        }
        r->pos = next;
        return WK_OK;
    default: break;
    }
    r->left--;
    r->pos = next;
    return WK_OK;
}

/* The next event (wirekit/msgpack.h): WK_EV_END when the innermost container's count is used
 * up, else the next token. WK_ERR_EOF after the last top-level value; errors are latched. */
WK_API wk_status wk_mp_reader_next(wk_mp_reader *r, wk_event *ev)
{
    if (r->status != WK_OK) {
        return r->status;
    }
    if (r->left == 0) {
        pop(r);
        ev->type = WK_EV_END;
        ev->f32 = false;
        return WK_OK;
    }
    const uint8_t *next = NULL;
    wk_status st = peek(r, ev, &next);
    if (st != WK_OK) {
        return st;
    }
    return take(r, ev, next);
}

/* The out-of-line half of the typed reads: the next value must be of type `want`, INT and
 * UINT being one family (WK_ERR_RANGE when the value does not fit). WK_ERR_STATE at a
 * container's end, WK_ERR_TYPE for another type; either way nothing is consumed. */
WK_API wk_status wk_mp_reader_read_slow(wk_mp_reader *r, wk_event *ev, wk_event_type want)
{
    if (r->status != WK_OK) {
        return r->status;
    }
    if (r->left == 0) {
        return WK_ERR_STATE;
    }
    const uint8_t *next = NULL;
    wk_status st = peek(r, ev, &next);
    if (st != WK_OK) {
        return st;
    }
    if (ev->type != want) {
        /* Integers: INT and UINT are one family; the caller's range decides. */
        if (want == WK_EV_INT && ev->type == WK_EV_UINT) {
            if (ev->v.u > (uint64_t)INT64_MAX) {
                return WK_ERR_RANGE;
            }
            ev->v.i = (int64_t)ev->v.u;
        } else if (!(want == WK_EV_UINT && ev->type == WK_EV_INT)) {
            return WK_ERR_TYPE;
        } else {
            return WK_ERR_RANGE; /* a negative number where an unsigned one is wanted */
        }
    }
    return take(r, ev, next);
}

/* The out-of-line half of wk_mp_reader_end: closes the current container, which must have no
 * element left (WK_ERR_STATE otherwise). */
WK_API wk_status wk_mp_reader_end_slow(wk_mp_reader *r)
{
    if (r->status != WK_OK) {
        return r->status;
    }
    if (r->left != 0 || r->depth == 0) {
        return WK_ERR_STATE;
    }
    pop(r);
    return WK_OK;
}

/* Skips the next value, a whole container with everything in it, checked by the scan
 * (mp_scan.c) without events. */
WK_API wk_status wk_mp_reader_skip(wk_mp_reader *r)
{
    if (r->status != WK_OK) {
        return r->status;
    }
    if (r->left == 0) {
        return WK_ERR_STATE;
    }
    if (r->depth == 0 && r->pos == r->end) {
        wk_mp_reader_free(r);
        return WK_ERR_EOF;
    }
    const uint8_t *err_at = r->pos;
    const char *msg = NULL;
    wk_status st = wk__mp_scan(&r->pos, r->end, r->depth, r->max_depth, r->strict_utf8,
                               r->alloc, &err_at, &msg);
    if (st != WK_OK) {
        return fail(r, st, err_at, msg);
    }
    r->left--;
    return WK_OK;
}

/* The latched error, or WK_OK at the current offset, into err (when not NULL); returns its
 * status. */
WK_API wk_status wk_mp_reader_error(const wk_mp_reader *r, wk_error *err)
{
    if (err == NULL) {
        return r->status;
    }
    err->code = r->status;
    err->msg = r->msg != NULL ? r->msg : wk_status_str(r->status);
    err->offset = r->status != WK_OK ? r->err_offset : wk_mp_reader_offset(r);
    return r->status;
}

/* The wk_source adapter: self is the wk_mp_reader (wk_mp_reader_source). */
static wk_status source_next(void *self, wk_event *ev)
{
    return wk_mp_reader_next(self, ev);
}

static size_t source_offset(const void *self)
{
    return wk_mp_reader_offset(self);
}

static wk_status source_error(const void *self, wk_error *err)
{
    return wk_mp_reader_error(self, err);
}

/* Fills src so that it reads r's events; r must outlive src. */
WK_API void wk_mp_reader_source(wk_mp_reader *r, wk_source *src)
{
    src->next = source_next;
    src->offset = source_offset;
    src->error = source_error;
    src->self = r;
}
