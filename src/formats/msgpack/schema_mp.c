/*
 * The fused MessagePack paths of the schema codec (wk_schema_encode_mp, wk_schema_decode_mp).
 * Flow, encoding: the caller's struct -> the flat plan (enc_flat) or the general walk
 * (enc_general) -> the MessagePack writer's inline calls -> bytes. Decoding: bytes -> the
 * flat plan (dec_flat) or the schema decoder's loop over a token cursor (decode_mp, over
 * schema/schema_decode_loop_interface.h) -> the caller's struct.
 *
 * Flat structs (no nested struct or array, at most 64 fields) have a compiled plan (one op
 * per field with its pre-encoded key, built with the descriptor's index). Encoding runs the
 * plan in one pass with a cursor straight over the output buffer: the fixed-size parts (and
 * 32 bytes a string field) were bounded when the plan was compiled, so only strings longer
 * than 31 bytes and wk_value nodes check for room, and a wk_value container of scalars is
 * written in one loop with no frame stack. Decoding runs the plan over the bytes: the
 * expected key is compared as two masked words, values are read inline, strings are copied
 * with one arena bump, a wk_value container of scalars is built with no frame stack. Both fast paths give up at anything unusual (every error included) and
 * the general paths below then run from the start, so outcomes, bytes and error reports are
 * the general paths' own; tests compare the two over every kind and thousands of hostile
 * inputs.
 *
 * General encoding walks the descriptor exactly as wk_schema_encode does (same frames, same
 * emptiness rules, same pair counts) but calls the MessagePack writer's inline functions
 * directly instead of dispatching events through a sink. General decoding instantiates the
 * shared decode loop (schema_decode_loop_interface.h) over a small cursor that mirrors
 * wk_mp_reader_next with the msgpack module's inline token decoder; wk_value fields are built
 * by the msgpack module's fused tree decoder straight from the bytes.
 */
#include "formats/msgpack/mp_token.h"
#include "schema/schema_decode_interface.h"
#include "schema/schema_fast_interface.h"
#include "value/value_build_interface.h"

/* ---- encoding ----------------------------------------------------------------------------- */

/* One open struct (s) or array (s NULL: count elements of type elem at base) of the general
 * encoder's walk; i is the next field or element. */
typedef struct mp_frame {
    const wk_schema *s;
    const uint8_t *base;
    const wk_schema_type *elem;
    size_t count;
    size_t i;
} mp_frame;

/* The general encoder's state: the writer over the output buffer and the frame stack. */
typedef struct mp_enc {
    wk_mp_writer w;
    uint32_t depth;
    mp_frame stack[WK__SCHEMA_MAX_DEPTH];
} mp_enc;

/* Opens a frame and writes its header (a struct as a map of its present fields, an array of
 * count elements). False, latched in the writer, past the depth limit or 2^32-1 elements. */
static bool mp_push(mp_enc *e, const wk_schema *s, const uint8_t *base,
                    const wk_schema_type *elem, size_t count)
{
    if (e->depth == WK__SCHEMA_MAX_DEPTH) {
        wk_mp_writer_fail(&e->w, WK_ERR_DEPTH, "schema: object nested too deeply");
        return false;
    }
    mp_frame *f = &e->stack[e->depth++];
    f->s = s;
    f->base = base;
    f->elem = elem;
    f->count = count;
    f->i = 0;
    if (s != NULL) {
        wk_mp_writer_begin_map(&e->w, wk__schema_present_count(s, base));
    } else if (count >= WK_COUNT_UNKNOWN) {
        wk_mp_writer_fail(&e->w, WK_ERR_ARG, "schema: array longer than 2^32-1");
        return false;
    } else {
        wk_mp_writer_begin_array(&e->w, (uint32_t)count);
    }
    return true;
}

/* A string field (WK_ERR_ARG, latched, beyond 4 GiB). */
static void mp_put_str(wk_mp_writer *w, const char *s, size_t len)
{
    if (len > UINT32_MAX) {
        wk_mp_writer_fail(w, WK_ERR_ARG, "schema: string longer than 4 GiB");
        return;
    }
    wk_mp_writer_str(w, s, len);
}

/* Writes the value of type t stored at p (flags: the field's); a struct or array pushes a
 * frame the walk then fills. Failures are latched in the writer. */
static void mp_put_value(mp_enc *e, const wk_schema_type *t, const uint8_t *p, uint32_t flags,
                         size_t count)
{
    wk_mp_writer *w = &e->w;
    /* The same mapping as wk_schema_encode's events (schema/schema_encode.c), written with
     * the writer's inline calls: numbers in their shortest form, NULL pointers as nil for
     * WK_NULLABLE fields (else as empty), char[N] up to its NUL. */
    switch ((wk_schema_kind)t->kind) {
    case WK_SK_BOOL: wk_mp_writer_bool(w, *(const bool *)p); return;
    case WK_SK_I8: wk_mp_writer_int(w, *(const int8_t *)p); return;
    case WK_SK_I16: wk_mp_writer_int(w, *(const int16_t *)p); return;
    case WK_SK_I32: wk_mp_writer_int(w, *(const int32_t *)p); return;
    case WK_SK_I64: wk_mp_writer_int(w, *(const int64_t *)p); return;
    case WK_SK_U8: wk_mp_writer_uint(w, *p); return;
    case WK_SK_U16: wk_mp_writer_uint(w, *(const uint16_t *)p); return;
    case WK_SK_U32: wk_mp_writer_uint(w, *(const uint32_t *)p); return;
    case WK_SK_U64: wk_mp_writer_uint(w, *(const uint64_t *)p); return;
    case WK_SK_F32: wk_mp_writer_float(w, *(const float *)p); return;
    case WK_SK_F64: wk_mp_writer_double(w, *(const double *)p); return;
    case WK_SK_STR: {
        const char *s = *(const char *const *)p;
        if (s == NULL && (flags & WK_NULLABLE) != 0) {
            wk_mp_writer_nil(w);
        } else if (s == NULL) {
            mp_put_str(w, "", 0);
        } else {
            mp_put_str(w, s, strlen(s));
        }
        return;
    }
    case WK_SK_STRBUF: {
        const char *s = (const char *)p;
        const char *nul = memchr(s, 0, t->size);
        mp_put_str(w, s, nul != NULL ? (size_t)(nul - s) : t->size);
        return;
    }
    case WK_SK_BYTES: {
        const wk_slice *b = (const wk_slice *)p;
        if (b->ptr == NULL && (flags & WK_NULLABLE) != 0) {
            wk_mp_writer_nil(w);
        } else if (b->ptr == NULL && b->len != 0) {
            wk_mp_writer_fail(w, WK_ERR_ARG, "schema: NULL bytes with a length");
        } else if (b->len > UINT32_MAX) {
            wk_mp_writer_fail(w, WK_ERR_ARG, "schema: string longer than 4 GiB");
        } else {
            wk_mp_writer_bin(w, b->ptr, b->len);
        }
        return;
    }
    case WK_SK_TIMESTAMP: {
        const wk_timestamp *ts = (const wk_timestamp *)p;
        if (ts->nsec >= 1000000000u) {
            wk_mp_writer_fail(w, WK_ERR_ARG, "schema: timestamp nanoseconds >= 1e9");
            return;
        }
        wk_mp_writer_timestamp(w, ts->sec, ts->nsec);
        return;
    }
    case WK_SK_VALUE: wk_mp_writer_value(w, (const wk_value *)p); return;
    case WK_SK_STRUCT: mp_push(e, t->schema, p, NULL, 0); return;
    case WK_SK_ARRAY: {
        const uint8_t *items = *(const uint8_t *const *)p;
        if (items == NULL && (flags & WK_NULLABLE) != 0) {
            wk_mp_writer_nil(w);
        } else if (items == NULL && count != 0) {
            wk_mp_writer_fail(w, WK_ERR_ARG, "schema: NULL array with a count");
        } else {
            mp_push(e, NULL, items, t->elem, count);
        }
        return;
    }
    }
    wk_mp_writer_fail(w, WK_ERR_ARG, "schema: unknown field kind");
}

/* ---- the flat fast path: one pre-sized pass for structs without nested structs/arrays ---- */


/* The flat encoder writes with a cursor `o` straight into the output buffer, bounded by
 * out->data + out->cap. Invariant: at least the plan's `fixed` bytes of room (the bound of
 * every fixed-size part still to come), so only variable-size parts check for room. The
 * cursor stays in registers: helpers take it and return it (NULL: the buffer cannot grow, or
 * a writer failed, and the caller takes the general path, which reports the exact error). */
__attribute__((noinline)) uint8_t *wk__schema_buf_grow(wk_buf *out, uint8_t *o, size_t need)
{
    size_t len = o != NULL ? (size_t)(o - out->data) : out->len;
    out->len = len;
    if (wk_buf_reserve(out, need) != WK_OK) {
        return NULL;
    }
    return out->data + len;
}

/* Writes `v` with the msgpack module's checked tree writer (same bytes) and returns the
 * cursor after it. */
static __attribute__((noinline)) uint8_t *enc_general_value(wk_buf *out, uint8_t *o,
                                                            const wk_value *v, size_t fixed)
{
    out->len = (size_t)(o - out->data);
    wk_mp_writer w;
    wk_mp_writer_init(&w, out);
    wk_mp_writer_value(&w, v);
    if (wk_mp_writer_finish(&w, NULL) != WK_OK) {
        return NULL;
    }
    o = out->data + out->len;
    return (size_t)(WK__ENC_END(out) - o) >= fixed ? o : wk__schema_buf_grow(out, o, fixed);
}

/* The same for the field kinds without a cursor encoder (float32, timestamp, bytes). */
static __attribute__((noinline)) uint8_t *enc_general_field(wk_buf *out, uint8_t *o,
                                                            const wk__mp_op *op,
                                                            const uint8_t *p, size_t fixed)
{
    /* the cursor handed to a writer over the same buffer and taken back after it, with the
     * plan's room restored (a writer failure gives up: the general path reports it) */
    out->len = (size_t)(o - out->data);
    wk_mp_writer w;
    wk_mp_writer_init(&w, out);
    if (op->kind == WK_SK_F32) {
        wk_mp_writer_float(&w, *(const float *)p);
    } else if (op->kind == WK_SK_TIMESTAMP) {
        const wk_timestamp *ts = (const wk_timestamp *)p;
        if (ts->nsec >= 1000000000u) {
            return NULL;
        }
        wk_mp_writer_timestamp(&w, ts->sec, ts->nsec);
    } else {
        const wk_slice *bytes = (const wk_slice *)p;
        if (bytes->ptr == NULL && (op->flags & WK_NULLABLE) != 0) {
            wk_mp_writer_nil(&w);
        } else if ((bytes->ptr == NULL && bytes->len != 0) || bytes->len > UINT32_MAX) {
            return NULL;
        } else {
            wk_mp_writer_bin(&w, bytes->ptr, bytes->len);
        }
    }
    if (wk_mp_writer_finish(&w, NULL) != WK_OK) {
        return NULL;
    }
    o = out->data + out->len;
    return (size_t)(WK__ENC_END(out) - o) >= fixed ? o : wk__schema_buf_grow(out, o, fixed);
}

/* A str header, inline for the short forms. */
static inline uint8_t *enc_str_header(uint8_t *o, size_t len)
{
    if (WK__LIKELY(len < 32)) {
        *o = (uint8_t)(0xa0u | len);
        return o + 1;
    }
    return wk_mp_encode_str_header(o, (uint32_t)len);
}

/* One wk_value node the fields' inline loop (wk__mpf_value, wirekit/schema_mp_fold.h) does not
 * write: a string of 32 bytes or more, anything but a small scalar (through the tree writer),
 * or any node when the room is short. Makes the room first, and keeps `room` bytes after. */
WK_API uint8_t *wk_schema_mp_put_node(wk_buf *out, uint8_t *o, const wk_value *v, size_t room)
{
    uint8_t *end = WK__ENC_END(out);
    WK__ENC_ENSURE(WK__MP_SMALL_MAX + room, NULL);
    uint8_t *w = wk__mpf_small(o, v);
    if (w != NULL) {
        return w;
    }
    if (v->type == WK_VAL_STR) {
        o = wk_mp_encode_str_header(o, v->len);
        WK__ENC_ENSURE((size_t)v->len + room, NULL);
        return (uint8_t *)wk__put_bytes(o, v->u.str, v->len);
    }
    return enc_general_value(out, o, v, room);
}

/* A string field's value: one of up to 31 bytes (most) in the room the plan keeps for it
 * (WK__MP_SMALL_MAX bytes a string field), a longer one after a check; NULL (give up) beyond
 * 4 GiB. */
static inline __attribute__((always_inline)) uint8_t *enc_str_field(wk_buf *out, uint8_t *o,
                                                                    uint8_t **endp,
                                                                    const char *str,
                                                                    size_t len, size_t fixed)
{
    if (WK__LIKELY(len < 32)) {
        *o = (uint8_t)(0xa0u | len);
        return (uint8_t *)wk__put_bytes(o + 1, str, len);
    }
    if (WK__UNLIKELY(len > UINT32_MAX)) {
        return NULL;
    }
    uint8_t *end = *endp;
    o = wk_mp_encode_str_header(o, (uint32_t)len);
    WK__ENC_ENSURE(len + fixed, NULL);
    *endp = end;
    return (uint8_t *)wk__put_bytes(o, str, len);
}

/* One field of a flat plan: its key, then its value. Returns the cursor or NULL (give up). */
static inline __attribute__((always_inline)) uint8_t *enc_field(wk_buf *out, uint8_t *o,
                                                                uint8_t **endp,
                                                                const wk__mp_op *op,
                                                                const uint8_t *base,
                                                                size_t fixed)
{
    /* the op read before the key's store (a byte store may alias it) */
    const uint8_t *p = base + op->offset;
    const unsigned kind = op->kind;
    o = wk__schema_put_key(o, op->key, op->key_len); /* room: the plan's */
    switch ((wk_schema_kind)kind) {
    case WK_SK_STR: {
        const char *str = *(const char *const *)p;
        if (str == NULL) {
            return (op->flags & WK_NULLABLE) != 0 ? wk_mp_encode_nil(o) : enc_str_header(o, 0);
        }
        return enc_str_field(out, o, endp, str, strlen(str), fixed);
    }
    case WK_SK_STRBUF: {
        const char *str = (const char *)p;
        const char *nul = memchr(str, 0, op->size);
        return enc_str_field(out, o, endp, str, nul != NULL ? (size_t)(nul - str) : op->size,
                             fixed);
    }
    case WK_SK_VALUE:
        o = wk__mpf_value(out, o, (const wk_value *)p, fixed);
        *endp = WK__ENC_END(out);
        return o;
    case WK_SK_F32:
    case WK_SK_TIMESTAMP:
    case WK_SK_BYTES:
        o = enc_general_field(out, o, op, p, fixed);
        *endp = WK__ENC_END(out);
        return o;
    default: return wk__mpf_scalar(o, kind, p); /* NULL: not in a flat plan */
    }
}

/* Encodes a flat struct with its compiled plan in one pass over `out`. Returns false when
 * the object needs the general path (an error to report, a buffer that cannot grow, a string
 * beyond 4 GiB); the caller then drops what was written. */
static bool enc_flat(wk_buf *out, const wk__schema_index *ix, const uint8_t *base)
{
    const size_t fixed = ix->mp_fixed;
    const wk__mp_op *op = ix->mp_ops;
    const wk__mp_op *const op_end = op + ix->nfields;
    uint8_t *o = wk__schema_enc_start(out, fixed);
    if (o == NULL) {
        return false;
    }
    uint8_t *end = WK__ENC_END(out);
    if (!ix->mp_omit) {
        /* Every field is written. */
        o = wk_mp_encode_map_header(o, ix->nfields);
        for (; op < op_end; op++) {
            o = enc_field(out, o, &end, op, base, fixed);
            if (WK__UNLIKELY(o == NULL)) {
                return false;
            }
        }
        out->len = (size_t)(o - out->data);
        return true;
    }
    /* WK_OMITEMPTY fields: the map's count first (one bit per written field), then the
     * written fields in order, as the general walk counts and writes them */
    uint64_t present = 0;
    uint32_t n = 0;
    for (uint32_t i = 0; i < ix->nfields; i++) {
        if ((op[i].flags & WK_OMITEMPTY) == 0 || !wk__schema_member_empty(op[i].kind, base + op[i].offset)) {
            present |= (uint64_t)1 << i;
            n++;
        }
    }
    o = wk_mp_encode_map_header(o, n);
    for (; op < op_end; op++, present >>= 1) {
        if ((present & 1) == 0) {
            continue;
        }
        o = enc_field(out, o, &end, op, base, fixed);
        if (WK__UNLIKELY(o == NULL)) {
            return false;
        }
    }
    out->len = (size_t)(o - out->data);
    return true;
}

/* The general encoder: the descriptor walked with an explicit frame stack. */
static __attribute__((noinline)) wk_status enc_general(const wk_schema *s, const void *obj,
                                                       wk_buf *out, wk_error *err)
{
    size_t start = out->len;
    mp_enc e;
    wk_mp_writer_init(&e.w, out);
    e.depth = 0;
    if (s->root == WK_SCHEMA_ROOT_VALUE) {
        wk_mp_writer_value(&e.w, obj);
    } else {
        mp_push(&e, s, obj, NULL, 0);
    }
    /* wk_schema_encode's walk, frame for frame: a struct's next written field (its name,
     * then its value), an array's next element; a frame with none left is done (counted
     * containers need no END). The writer latches the first failure, which ends the walk. */
    while (e.depth > 0 && e.w.status == WK_OK) {
        mp_frame *f = &e.stack[e.depth - 1];
        if (f->s != NULL) {
            const wk_schema_field *fd = wk__schema_next_field(f->s, f->base, &f->i);
            if (fd == NULL) {
                e.depth--;
                continue;
            }
            wk_mp_writer_str(&e.w, fd->name, fd->name_len);
            if (wk__schema_field_null(fd, f->base)) {
                wk_mp_writer_nil(&e.w);
                continue;
            }
            size_t count = 0;
            if (fd->type.kind == WK_SK_ARRAY) {
                count = *(const size_t *)(f->base + fd->count_offset);
            }
            mp_put_value(&e, &fd->type, f->base + fd->offset, fd->flags, count);
        } else {
            if (f->i == f->count) {
                e.depth--;
                continue;
            }
            const uint8_t *p = f->base + f->i * f->elem->size;
            f->i++;
            size_t count = 0;
            if (f->elem->kind == WK_SK_ARRAY) {
                count = ((const wk_schema_array *)p)->count;
            }
            mp_put_value(&e, f->elem, p, 0, count);
        }
    }
    /* on failure the output goes back to where it was: nothing half-written stays */
    wk_status st = wk_mp_writer_finish(&e.w, err);
    if (st != WK_OK) {
        out->len = start;
    }
    return st;
}

/* Appends the MessagePack form of obj to out: the flat plan when the struct has one, else
 * (or when it gives up) the general walk from the same start. On failure out is as it was. */
WK_API wk_status(wk_schema_encode_mp)(const wk_schema *s, const void *obj, wk_buf *out,
                                     wk_error *err)
{
    wk_status st;
    const wk__schema_index *ix = wk__schema_encode_begin(s, obj, out, err, &st);
    if (ix == NULL) {
        return st;
    }
    if (s->root == WK_SCHEMA_ROOT_STRUCT && ix->mp_flat) {
        size_t start = out->len;
        if (enc_flat(out, ix, obj)) {
            return WK_OK;
        }
        /* Anything unusual (including every error): the general path from the start, which
         * decides the outcome byte for byte. */
        out->len = start;
    }
    return enc_general(s, obj, out, err);
}

/* ---- decoding ----------------------------------------------------------------------------- */

/* A cursor with the reader's semantics (events, END after counted elements, latched errors,
 * offsets) and none of its options: no UTF-8 check and the default depth limit, like a
 * wk_mp_reader with default options. The decode loop never lets it nest deeper than the
 * schema depth limit plus one, so its stack is fixed. */
typedef struct mp_cursor {
    const uint8_t *start; /* the input, for offsets */
    const uint8_t *pos;   /* the next token */
    const uint8_t *end;
    uint32_t depth;       /* open containers */
    wk_status status;     /* the latched error, WK_OK if none */
    const char *msg;      /* and its static message */
    size_t err_offset;    /* and its offset */
    uint64_t rem[WK__SCHEMA_MAX_DEPTH + 4]; /* elements left in each open container */
} mp_cursor;

/* Latches the cursor's error (st, static msg, the offset of `at`); returns st. */
static wk_status cur_fail(mp_cursor *r, wk_status st, const uint8_t *at, const char *msg)
{
    r->status = st;
    r->msg = msg;
    r->err_offset = (size_t)(at - r->start);
    return st;
}

/* The next event, as wk_mp_reader_next gives it: WK_EV_END when the innermost container's
 * count is used up, WK_ERR_EOF at the end of the top level, errors latched. */
static inline wk_status cur_next(mp_cursor *r, wk_event *ev)
{
    if (WK__UNLIKELY(r->status != WK_OK)) {
        return r->status;
    }
    /* the innermost container's count: used up means its END, else one element less */
    if (r->depth > 0) {
        uint64_t *top = &r->rem[r->depth - 1];
        if (*top == 0) {
            r->depth--;
            ev->type = WK_EV_END;
            ev->f32 = false;
            return WK_OK;
        }
        (*top)--;
    } else if (r->pos == r->end) {
        return WK_ERR_EOF;
    }
    if (WK__UNLIKELY(r->pos == r->end)) {
        return cur_fail(r, WK_ERR_TRUNCATED, r->pos, WK_MP_MSG_TRUNCATED);
    }
    const uint8_t *start = r->pos;
    const char *msg = NULL;
    wk_status st = wk__mp_token(&r->pos, r->end, ev, &msg);
    if (WK__UNLIKELY(st != WK_OK)) {
        return cur_fail(r, st, start, msg);
    }
    /* a container opens a count (a map's pairs count twice); the fixed stack is deeper than
     * the decode loop ever lets the input nest */
    if (ev->type == WK_EV_ARRAY || ev->type == WK_EV_MAP) {
        if (r->depth >= WK__SCHEMA_MAX_DEPTH + 4) {
            r->pos = start;
            return cur_fail(r, WK_ERR_DEPTH, start, WK_MP_MSG_DEPTH);
        }
        r->rem[r->depth++] = ev->type == WK_EV_MAP ? 2 * (uint64_t)ev->v.count : ev->v.count;
    }
    return WK_OK;
}

/* The latched error (or WK_OK at the current offset) into err. */
static void cur_error(const mp_cursor *r, wk_error *err)
{
    err->code = r->status;
    err->msg = r->msg;
    err->offset = r->status != WK_OK ? r->err_offset : (size_t)(r->pos - r->start);
}

/* The wk_source adapter over the cursor (cur_source), for wk_value elements whose first
 * event was read already. */
static wk_status src_next(void *self, wk_event *ev)
{
    return cur_next(self, ev);
}

static size_t src_offset(const void *self)
{
    const mp_cursor *r = self;
    return (size_t)(r->pos - r->start);
}

static wk_status src_error(const void *self, wk_error *err)
{
    cur_error(self, err);
    return err->code;
}

/* Fills src so that it reads r's events; r must outlive src. */
static void cur_source(mp_cursor *r, wk_source *src)
{
    src->next = src_next;
    src->offset = src_offset;
    src->error = src_error;
    src->self = r;
}

/* A wk_value field: the msgpack module's fused tree decoder, then the cursor moves past it.
 * The one difference from the generic path that the tests tolerate: a value nested too deeply
 * is reported by the fused decoder at the container's first byte and by wk_value_decode after
 * its header (same status, offsets a header apart). */
static wk_status cur_value(mp_cursor *r, wk__dec *d, wk_value *dst, size_t voff)
{
    if (r->status != WK_OK) {
        return r->status;
    }
    /* the value counts as one element of its container, as cur_next would count it */
    if (r->depth > 0) {
        if (r->rem[r->depth - 1] == 0) {
            return wk__dec_fail(d, WK_ERR_SYNTAX, voff, "map ended after a key");
        }
        r->rem[r->depth - 1]--;
    }
    if (r->pos == r->end) {
        return cur_fail(r, WK_ERR_TRUNCATED, r->pos, WK_MP_MSG_TRUNCATED);
    }
    /* the whole value by the fused tree decoder, strings copied (the struct outlives the
     * input), with the depth the field has left; its failure is latched in the cursor at
     * the offset in the whole input */
    wk_read_opts vo = {0};
    vo.flags = WK_READ_COPY_STRINGS;
    vo.max_depth = d->limit > d->depth ? d->limit - d->depth : 1;
    wk_value *v = NULL;
    size_t used = 0;
    wk_error e = {WK_OK, 0, NULL};
    wk_status st = wk_mp_decode_value(r->pos, (size_t)(r->end - r->pos), &vo, d->arena, &v, &used, &e);
    if (st != WK_OK) {
        size_t at = (size_t)(r->pos - r->start) + e.offset;
        r->status = st;
        r->msg = e.msg;
        r->err_offset = at;
        return wk__dec_fail(d, st, at, e.msg);
    }
    r->pos += used;
    *dst = *v;
    return WK_OK;
}

/* decode_mp(): decodes the MessagePack value at r into obj by the plan of s, the schema
 * decoder's loop (schema/schema_decode_loop_interface.h, its body) over the cursor above;
 * returns as the loop does. */
#define DEC_NEXT(r, ev) cur_next((r), (ev))
#define DEC_OFFSET(r) ((size_t)((r)->pos - (r)->start))
#define DEC_ERROR(r, e) cur_error((r), (e))
#define DEC_SOURCE(r, out) cur_source((r), (out))
#define DEC_VALUE(r, d, dst, voff) cur_value((r), (d), (dst), (voff))
static wk_status decode_mp(const wk_schema *s, mp_cursor *r, void *obj, wk_arena *arena,
                           const wk_schema_opts *opts, wk_schema_error *err)
{
#include "schema/schema_decode_loop_interface.h"
}

/* ---- the flat decode fast path ---------------------------------------------------------- */

/* A direct pass over the bytes for flat structs: the expected key compared as two masked
 * words, values read with inline typed reads, strings copied with one arena bump. It accepts
 * only what the general loop accepts and stores exactly what it stores, in the same order;
 * at the first thing it does not handle (an error, an unknown key, a nested container in a
 * wk_value's children, a missing required field, trailing bytes) it gives up, and the caller
 * runs the general loop from the start, which rewrites the same fields and reports the
 * outcome. Giving up costs only the repeated work (and arena bytes, bounded by the input). */

/* Reads a str header at `p` (p < end): the length, with the bytes checked to be there.
 * Returns the first byte of the string, or NULL. */
static inline const uint8_t *dec_str_header(const uint8_t *p, const uint8_t *end, size_t *len)
{
    uint8_t b = *p;
    size_t n;
    /* fixstr, str 8, str 16, str 32; a header cut short or another type gives up */
    if (WK__LIKELY((b & 0xe0) == 0xa0)) {
        n = b & 0x1fu;
        p += 1;
    } else if (b == 0xd9 && end - p >= 2) {
        n = p[1];
        p += 2;
    } else if (b == 0xda && end - p >= 3) {
        n = wk__mp_load16(p + 1);
        p += 3;
    } else if (b == 0xdb && end - p >= 5) {
        n = wk__mp_load32(p + 1);
        p += 5;
    } else {
        return NULL;
    }
    if (WK__UNLIKELY(n > (size_t)(end - p))) {
        return NULL;
    }
    *len = n;
    return p;
}

/* Fills the common fields of a wk_value node (what the tree decoder sets first): type,
 * flags, ext_type 0, reserved 0, len (one store where the layout allows). */


/* One child node of a wk_value container (p < end). The common forms are read inline; the
 * others through the token decoder. Returns the next byte, or NULL (a nested container is
 * reported with *deeper set, anything else is a give-up). */
static inline const uint8_t *dec_kid(const uint8_t *p, const uint8_t *end,
                                     const uint8_t *start, wk_value *v, wk_arena *a,
                                     bool *deeper)
{
    uint8_t b = *p;
    /* fixints and fixstr inline (strings copied: the field outlives the input) */
    if (b <= 0x7f) {
        wk__vb_head(v, WK_VAL_UINT, 0, 0);
        v->u.u = b;
        return p + 1;
    }
    if (b >= 0xe0) {
        wk__vb_head(v, WK_VAL_INT, 0, 0);
        v->u.i = (int8_t)b;
        return p + 1;
    }
    if ((b & 0xe0) == 0xa0) {
        size_t n = b & 0x1fu;
        p++;
        if (WK__UNLIKELY(n > (size_t)(end - p))) {
            return NULL;
        }
        bool nul = false;
        char *c = wk__dec_copy_str(a, p, n, start, false, &nul);
        if (c == NULL) {
            return NULL;
        }
        wk__vb_head(v, WK_VAL_STR, WK_VALF_COPIED, (uint32_t)n);
        v->u.str = c;
        return p + n;
    }
    /* the rest through the token decoder and the tree builders' event -> node rule, so the
     * node is the one the general path would build */
    wk_event ev;
    const char *msg;
    if (wk__mp_token(&p, end, &ev, &msg) != WK_OK) {
        return NULL;
    }
    if (ev.type == WK_EV_MAP || ev.type == WK_EV_ARRAY) {
        *deeper = true;
        return NULL;
    }
    return wk__vb_node_from_event(v, &ev, true, a, &msg) == WK_OK ? p : NULL;
}

/* A wk_value field (p < end). A scalar or a container of scalars is built here, with no
 * frame stack; a container among the children sends the whole value to the msgpack module's
 * tree decoder (as the general loop does). Returns the next byte or NULL. */
static inline const uint8_t *dec_value(const uint8_t *p, const uint8_t *end, const uint8_t *in,
                                       wk_value *dst, wk_arena *a, uint32_t vdepth)
{
    const uint8_t *start = p;
    uint8_t b = *p;
    uint32_t n;
    bool is_map;
    if ((b & 0xf0) == 0x80) {
        n = b & 0x0fu;
        is_map = true;
        p++;
    } else if ((b & 0xf0) == 0x90) {
        n = b & 0x0fu;
        is_map = false;
        p++;
    } else {
        wk_event ev;
        const char *msg;
        if (wk__mp_token(&p, end, &ev, &msg) != WK_OK) {
            return NULL;
        }
        if (ev.type != WK_EV_MAP && ev.type != WK_EV_ARRAY) {
            return wk__vb_node_from_event(dst, &ev, true, a, &msg) == WK_OK ? p : NULL;
        }
        n = ev.v.count; /* checked against the remaining bytes */
        is_map = ev.type == WK_EV_MAP;
    }
    uint64_t nkids = is_map ? 2 * (uint64_t)n : n;
    if (WK__UNLIKELY(nkids > (uint64_t)(end - p))) {
        return NULL; /* the token decoder's count check (fix forms) */
    }
    wk_value *kids = NULL;
    if (nkids != 0) {
        kids = wk__vb_alloc(a, (size_t)nkids * sizeof(wk_value));
        if (kids == NULL) {
            return NULL;
        }
    }
    for (uint64_t k = 0; k < nkids; k++) {
        bool deeper = false;
        if (p == end) {
            return NULL;
        }
        p = dec_kid(p, end, in, &kids[k], a, &deeper);
        if (p != NULL) {
            continue;
        }
        if (!deeper) {
            return NULL;
        }
        /* Deeper: the general tree decoder, from the value's first byte. */
        wk_read_opts vo = {0};
        vo.flags = WK_READ_COPY_STRINGS;
        vo.max_depth = vdepth;
        wk_value *v = NULL;
        size_t used = 0;
        if (wk_mp_decode_value(start, (size_t)(end - start), &vo, a, &v, &used, NULL) !=
            WK_OK) {
            return NULL;
        }
        *dst = *v;
        return start + used;
    }
    wk__vb_head(dst, is_map ? WK_VAL_MAP : WK_VAL_ARRAY, 0, n);
    dst->u.items = kids;
    return p;
}

/* Any other scalar kind (p < end): the token, then the general loop's own store. Returns the
 * next byte or NULL. */
static __attribute__((noinline)) const uint8_t *dec_other(const wk__mp_op *op, const uint8_t *p,
                                                          const uint8_t *end, uint8_t *base,
                                                          wk_arena *a)
{
    wk_event ev;
    const char *msg;
    if (wk__mp_token(&p, end, &ev, &msg) != WK_OK || ev.type == WK_EV_MAP ||
        ev.type == WK_EV_ARRAY) {
        return NULL;
    }
    wk__dec d;
    d.arena = a;
    d.err = NULL;
    d.depth = 1;
    d.limit = WK__SCHEMA_MAX_DEPTH;
    d.flags = 0;
    wk_schema_type t = {op->kind, op->size, NULL, NULL};
    return wk__dec_scalar(&d, &t, base + op->offset, op->flags, NULL, &ev, 0) == WK_OK ? p
                                                                                      : NULL;
}

/* An integer field (p < end); nil is accepted and ignored when the field is WK_NULLABLE. The
 * same range rules as the general loop. Returns the next byte or NULL. */
static inline const uint8_t *dec_int_field(const wk__mp_op *op, const uint8_t *p,
                                           const uint8_t *end, uint8_t *dst)
{
    uint8_t b = *p;
    size_t left = (size_t)(end - p);
    uint64_t u;
    int64_t i;
    /* fixints in one byte; the other integer forms by their first byte, each checking that
     * its bytes are there; anything else (a float, a string) gives up */
    if (b <= 0x7f) {
        u = b;
        p += 1;
        goto unsigned_value;
    }
    if (b >= 0xe0) {
        i = (int8_t)b;
        p += 1;
        goto signed_value;
    }
    switch (b) {
    case 0xc0: return (op->flags & WK_NULLABLE) != 0 ? p + 1 : NULL;
    case 0xcc:
        if (left < 2) {
            return NULL;
        }
        u = p[1];
        p += 2;
        goto unsigned_value;
    case 0xcd:
        if (left < 3) {
            return NULL;
        }
        u = wk__mp_load16(p + 1);
        p += 3;
        goto unsigned_value;
    case 0xce:
        if (left < 5) {
            return NULL;
        }
        u = wk__mp_load32(p + 1);
        p += 5;
        goto unsigned_value;
    case 0xcf:
        if (left < 9) {
            return NULL;
        }
        u = wk__mp_load64(p + 1);
        p += 9;
        goto unsigned_value;
    case 0xd0:
        if (left < 2) {
            return NULL;
        }
        i = (int8_t)p[1];
        p += 2;
        break;
    case 0xd1:
        if (left < 3) {
            return NULL;
        }
        i = (int16_t)wk__mp_load16(p + 1);
        p += 3;
        break;
    case 0xd2:
        if (left < 5) {
            return NULL;
        }
        i = (int32_t)wk__mp_load32(p + 1);
        p += 5;
        break;
    case 0xd3:
        if (left < 9) {
            return NULL;
        }
        i = (int64_t)wk__mp_load64(p + 1);
        p += 9;
        break;
    default: return NULL;
    }
    /* a non-negative intN is an unsigned value, as the token decoder makes it */
    if (i >= 0) {
        u = (uint64_t)i;
        goto unsigned_value;
    }
    /* the member's range check and store (wk__dec_int_store: false when out of range) */
signed_value:
    return wk__dec_int_store(op->kind, op->size, true, (uint64_t)i, dst) ? p : NULL;
unsigned_value:
    return wk__dec_int_store(op->kind, op->size, false, u, dst) ? p : NULL;
}

/* The expected key compared as two masked words (the input has 16 bytes left). */
static inline bool dec_key_is(const wk__mp_op *want, const uint8_t *p, const uint8_t *end)
{
    uint64_t w0, w1;
    memcpy(&w0, p, 8);
    memcpy(&w1, p + 8, 8);
    if ((((w0 ^ want->kw[0]) & want->km[0]) | ((w1 ^ want->kw[1]) & want->km[1])) != 0) {
        return false;
    }
    return want->key_len <= 16 ||
           ((size_t)(end - p) >= want->key_len &&
            memcmp(p + 16, want->key + 16, (size_t)want->key_len - 16) == 0);
}

/* The flat plan over the value at p (p < end) into the struct at base: true when it decoded
 * the whole input (then every field is stored as the general loop would store it); false to
 * let the general loop run from the start. vdepth caps the nesting of wk_value fields. */
static inline bool dec_flat(const wk__schema_index *ix, const uint8_t *p, const uint8_t *end,
                            uint8_t *base, wk_arena *a, uint32_t vdepth)
{
    /* the value must be a map of fewer than 2^16 pairs (fixmap or map 16) */
    const uint8_t *const in = p;
    uint32_t n;
    if ((*p & 0xf0) == 0x80) {
        n = *p & 0x0fu;
        p += 1;
    } else if (*p == 0xde && end - p >= 3) {
        n = wk__mp_load16(p + 1);
        p += 3;
    } else {
        return false;
    }
    const wk__mp_op *const ops = ix->mp_ops;
    const wk__mp_op *const ops_end = ops + ix->nfields;
    const wk__mp_op *want = ops;
    uint64_t seen = 0;
    /* One pair per turn. The key: the expected field's pre-encoded key first (fields mostly
     * come in the descriptor's order), compared as two masked words when 16 bytes are left;
     * any other key through the index. The value: stored into the member by its kind. */
    for (; n > 0; n--) {
        if (WK__UNLIKELY(p == end)) {
            return false;
        }
        const wk__mp_op *op;
        if (WK__LIKELY(want < ops_end &&
                         ((size_t)(end - p) >= 16
                              ? dec_key_is(want, p, end)
                              : (size_t)(end - p) >= want->key_len &&
                                    memcmp(p, want->key, want->key_len) == 0))) {
            op = want;
            p += op->key_len;
        } else {
            size_t klen;
            p = dec_str_header(p, end, &klen);
            if (p == NULL) {
                return false;
            }
            int32_t idx = wk__schema_lookup_index(ix, (const char *)p, klen);
            if (idx < 0) {
                return false;
            }
            p += klen;
            op = &ops[idx];
        }
        want = op + 1;
        seen |= op->reqmask;
        if (WK__UNLIKELY(p == end)) {
            return false;
        }
        uint8_t *dst = base + op->offset;
        switch ((wk_schema_kind)op->kind) {
        case WK_SK_STR: {
            if (*p == 0xc0 && (op->flags & WK_NULLABLE) != 0) {
                *(char **)dst = NULL;
                p++;
                break;
            }
            size_t len;
            p = dec_str_header(p, end, &len);
            if (p == NULL) {
                return false;
            }
            bool nul = false;
            char *c = wk__dec_copy_str(a, p, len, in, true, &nul);
            if (c == NULL) {
                return false;
            }
            *(char **)dst = c;
            p += len;
            break;
        }
        case WK_SK_BOOL:
            if (*p == 0xc2 || *p == 0xc3) {
                *(bool *)dst = *p == 0xc3;
            } else if (*p != 0xc0 || (op->flags & WK_NULLABLE) == 0) {
                return false;
            }
            p++;
            break;
        case WK_SK_I8:
        case WK_SK_I16:
        case WK_SK_I32:
        case WK_SK_I64:
        case WK_SK_U8:
        case WK_SK_U16:
        case WK_SK_U32:
        case WK_SK_U64: p = dec_int_field(op, p, end, dst); break;
        case WK_SK_VALUE: p = dec_value(p, end, in, (wk_value *)dst, a, vdepth); break;
        default: p = dec_other(op, p, end, base, a); break;
        }
        if (WK__UNLIKELY(p == NULL)) {
            return false;
        }
    }
    /* every required field seen, and nothing after the map */
    return (seen & ix->required_mask) == ix->required_mask && p == end;
}

/* The general decode loop over the MessagePack cursor (decode_mp), then a check that
 * nothing follows the value; its status and err are the outcome of wk_schema_decode_mp. */
static __attribute__((noinline)) wk_status dec_general(const wk_schema *s, const void *data,
                                                       size_t len, void *obj, wk_arena *arena,
                                                       const wk_schema_opts *opts,
                                                       wk_schema_error *err)
{
    mp_cursor r;
    r.start = data != NULL ? data : (const uint8_t *)"";
    r.pos = r.start;
    r.end = r.start + len;
    r.depth = 0;
    r.status = WK_OK;
    r.msg = NULL;
    r.err_offset = 0;
    wk_status st = decode_mp(s, &r, obj, arena, opts, err);
    if (st == WK_OK && r.pos != r.end) {
        return wk_error_set(err != NULL ? &err->base : NULL, WK_ERR_TRAILING,
                            (size_t)(r.pos - r.start), "trailing bytes after the value");
    }
    return st;
}

/* Decodes the one MessagePack value data[0..len) into obj: the flat plan when the struct has
 * one, else or when it gives up the general loop (dec_general), which decides the outcome and
 * the error report. */
WK_API wk_status wk_schema_decode_mp(const wk_schema *s, const void *data, size_t len,
                                     void *obj, wk_arena *arena, const wk_schema_opts *opts,
                                     wk_schema_error *err)
{
    wk_status st;
    const wk__schema_index *ix = wk__schema_decode_begin(s, data, len, obj, arena, opts, err, &st);
    if (ix == NULL) {
        return st;
    }
    if (s->root == WK_SCHEMA_ROOT_STRUCT && ix->mp_flat && len != 0) {
        uint32_t limit = opts == NULL || opts->max_depth == 0 ? WK__SCHEMA_DEFAULT_DEPTH
                                                             : wk__schema_depth_limit(opts);
        if (dec_flat(ix, data, (const uint8_t *)data + len, obj, arena,
                     limit > 1 ? limit - 1 : 1)) {
            return WK_OK;
        }
    }
    return dec_general(s, data, len, obj, arena, opts, err);
}
