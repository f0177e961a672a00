/*
 * Generic codec functions driven by a type's operations table (codec->data, a wk__pg_type):
 * conversions between the native union and every C kind, PostgreSQL text output, events,
 * value trees, and encoding from C kinds or from PostgreSQL text input.
 *
 * Where it sits: a row's bytes -> plan (plan.c) picks a codec function by (OID, format,
 * kind) -> for every combination the family files (int.c, float.c, varlena.c, ...) do not
 * cover with a direct function, one of the functions here -> the family's reader
 * (wk__pg_type.read_bin / read_text) into a wk__pg_native -> store / emit / write in the
 * caller's kind. Encoding runs the same way backwards: C kind -> native -> write_bin /
 * write_text. Each combination costs one table-driven function instead of one function per
 * (type, format, kind).
 *
 * Values that need temporary memory (numeric digits, rendered text) use a small stack arena
 * or buffer and spill to the heap only for large values, freed before returning.
 */
#include <math.h>

#include "formats/json/json_number_interface.h"
#include "pg/pg_interface.h"

#include "wirekit/json.h"

/* The C size of each kind's value (what `out` points at), for wk_pg_kind_size(). */
static const size_t kind_sizes[WK_PG_KIND_COUNT] = {
    [WK_PG_KIND_BOOL] = sizeof(bool),
    [WK_PG_KIND_I16] = sizeof(int16_t),
    [WK_PG_KIND_I32] = sizeof(int32_t),
    [WK_PG_KIND_I64] = sizeof(int64_t),
    [WK_PG_KIND_U32] = sizeof(uint32_t),
    [WK_PG_KIND_F32] = sizeof(float),
    [WK_PG_KIND_F64] = sizeof(double),
    [WK_PG_KIND_NUMERIC] = sizeof(wk_pg_numeric),
    [WK_PG_KIND_STR] = sizeof(wk_slice),
    [WK_PG_KIND_BYTES] = sizeof(wk_slice),
    [WK_PG_KIND_UUID] = sizeof(wk_pg_uuid),
    [WK_PG_KIND_DATE] = sizeof(int32_t),
    [WK_PG_KIND_TIME] = sizeof(int64_t),
    [WK_PG_KIND_TIMETZ] = sizeof(wk_pg_timetz),
    [WK_PG_KIND_TIMESTAMP] = sizeof(int64_t),
    [WK_PG_KIND_INTERVAL] = sizeof(wk_pg_interval),
    [WK_PG_KIND_INET] = sizeof(wk_pg_inet),
    [WK_PG_KIND_ARRAY] = sizeof(wk_pg_array_in),
};

/* The names wk_pg_kind_name() returns, in wk_pg_kind order; the CLI and error text use them. */
static const char *const kind_names[WK_PG_KIND_COUNT] = {
    "bool", "i16",      "i32",  "i64",      "u32",   "f32",  "f64",      "numeric",
    "str",  "bytes",    "uuid", "date",     "time",  "timetz", "timestamp", "interval",
    "inet", "array",    "text", "value",    "events"};

/* Public (wirekit/pg.h): 0 for an unknown kind. */
WK_API size_t wk_pg_kind_size(wk_pg_kind kind)
{
    return (unsigned)kind < WK_PG_KIND_COUNT ? kind_sizes[kind] : 0;
}

/* Public (wirekit/pg.h): "unknown" for an unknown kind. */
WK_API const char *wk_pg_kind_name(wk_pg_kind kind)
{
    return (unsigned)kind < WK_PG_KIND_COUNT ? kind_names[kind] : "unknown";
}

/* A temporary arena over the stack for one call, when the caller gave none. */
typedef struct tmp_arena {
    wk_arena arena;
    uint8_t buf[512];
} tmp_arena;

/* `given` when there is one, else `t`'s stack arena (which may spill to the heap; release it
 * with tmp_done). */
static wk_arena *arena_or_tmp(wk_arena *given, tmp_arena *t)
{
    if (given != NULL) {
        return given;
    }
    wk_arena_init_buf(&t->arena, t->buf, sizeof t->buf, NULL, 0);
    return &t->arena;
}

/* Frees what arena_or_tmp set up when it had to use `t`; a given arena is left alone. */
static void tmp_done(wk_arena *given, tmp_arena *t)
{
    if (given == NULL) {
        wk_arena_free(&t->arena);
    }
}

/* A table-driven codec's operations table. */
static const wk__pg_type *type_of(const wk_pg_codec *c)
{
    return c->data;
}

/* ---- native -> kind ---- */

/* Stores integer v as kind k: WK_ERR_RANGE when it does not fit, WK_ERR_TYPE for a kind an
 * integer type does not decode into. */
static wk_status store_int(int64_t v, wk_pg_kind k, void *out)
{
    switch (k) {
    case WK_PG_KIND_I16:
        if (v < INT16_MIN || v > INT16_MAX) {
            return WK_ERR_RANGE;
        }
        *(int16_t *)out = (int16_t)v;
        return WK_OK;
    case WK_PG_KIND_I32:
        if (v < INT32_MIN || v > INT32_MAX) {
            return WK_ERR_RANGE;
        }
        *(int32_t *)out = (int32_t)v;
        return WK_OK;
    case WK_PG_KIND_I64: *(int64_t *)out = v; return WK_OK;
    case WK_PG_KIND_U32:
        if (v < 0 || v > UINT32_MAX) {
            return WK_ERR_RANGE;
        }
        *(uint32_t *)out = (uint32_t)v;
        return WK_OK;
    case WK_PG_KIND_F64: *(double *)out = (double)v; return WK_OK;
    default: return WK_ERR_TYPE;
    }
}

/* Stores a native value as kind k, by the type's class: integers and floats convert (see
 * store_int), numeric converts to I64/F64 through the numeric helpers, views and structs are
 * copied as they are (a view still points into the input or the arena). WK_ERR_TYPE for a kind
 * the class does not have. */
static wk_status store(const wk__pg_type *t, const wk__pg_native *v, wk_pg_kind k, void *out)
{
    switch (t->cls) {
    case WK__PG_CLASS_INT: return store_int(v->i, k, out);
    case WK__PG_CLASS_FLOAT4:
        if (k == WK_PG_KIND_F32) {
            *(float *)out = v->f4;
            return WK_OK;
        }
        if (k == WK_PG_KIND_F64) {
            *(double *)out = (double)v->f4;
            return WK_OK;
        }
        return WK_ERR_TYPE;
    case WK__PG_CLASS_FLOAT8:
        if (k == WK_PG_KIND_F64) {
            *(double *)out = v->f8;
            return WK_OK;
        }
        return WK_ERR_TYPE;
    case WK__PG_CLASS_NUMERIC:
        if (k == WK_PG_KIND_NUMERIC) {
            *(wk_pg_numeric *)out = v->num;
            return WK_OK;
        }
        if (k == WK_PG_KIND_I64) {
            return wk_pg_numeric_to_i64(&v->num, out);
        }
        if (k == WK_PG_KIND_F64) {
            return wk_pg_numeric_to_double(&v->num, out);
        }
        return WK_ERR_TYPE;
    case WK__PG_CLASS_BOOL:
        if (k == WK_PG_KIND_BOOL) {
            *(bool *)out = v->b;
            return WK_OK;
        }
        return WK_ERR_TYPE;
    default: break;
    }
    switch (k) {
    case WK_PG_KIND_STR:
    case WK_PG_KIND_BYTES: *(wk_slice *)out = v->s; return WK_OK;
    case WK_PG_KIND_UUID: *(wk_pg_uuid *)out = v->uuid; return WK_OK;
    case WK_PG_KIND_DATE: *(int32_t *)out = (int32_t)v->i; return WK_OK;
    case WK_PG_KIND_TIME:
    case WK_PG_KIND_TIMESTAMP: *(int64_t *)out = v->i; return WK_OK;
    case WK_PG_KIND_TIMETZ: *(wk_pg_timetz *)out = v->timetz; return WK_OK;
    case WK_PG_KIND_INTERVAL: *(wk_pg_interval *)out = v->iv; return WK_OK;
    case WK_PG_KIND_INET: *(wk_pg_inet *)out = v->inet; return WK_OK;
    default: return WK_ERR_TYPE;
    }
}

/* The generic decoder to a C kind (pg_interface.h). The value is read, then stored; a range or
 * kind mismatch is reported with the reason. */
wk_status wk__pg_dec_convert(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                             wk_arena *arena, wk_error *err)
{
    const wk__pg_type *t = type_of(d->codec);
    wk__pg_native v;
    tmp_arena tmp;
    /* Only numeric converted to I64/F64 needs memory that may die with the call; the NUMERIC
     * kind keeps its digits in the caller's arena, views need none. */
    bool use_tmp = arena == NULL && t->cls == WK__PG_CLASS_NUMERIC &&
                   d->kind != WK_PG_KIND_NUMERIC;
    wk_arena *a = use_tmp ? arena_or_tmp(NULL, &tmp) : arena;
    wk_status st = wk__pg_read(t, (wk_pg_format)d->format, p, n, &v, a, err);
    if (st == WK_OK) {
        st = store(t, &v, (wk_pg_kind)d->kind, out);
        if (st != WK_OK) {
            wk__pg_fail(err, st, 0,
                        st == WK_ERR_RANGE ? "value does not fit the requested C kind"
                                           : "this type does not decode into that C kind");
        }
    }
    if (use_tmp) {
        tmp_done(NULL, &tmp);
    }
    return st;
}

/* The generic decoder to PostgreSQL text: read, then write_text appends the server's output
 * form to the wk_buf at `out` (so binary input decodes to what a text-format query shows). */
wk_status wk__pg_dec_text(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                          wk_arena *arena, wk_error *err)
{
    const wk__pg_type *t = type_of(d->codec);
    wk__pg_native v;
    tmp_arena tmp;
    wk_arena *a = arena_or_tmp(arena, &tmp);
    wk_status st = wk__pg_read(t, (wk_pg_format)d->format, p, n, &v, a, err);
    if (st == WK_OK) {
        st = t->write_text(&v, out);
        if (st != WK_OK) {
            wk__pg_fail(err, st, 0, "output buffer is full");
        }
    }
    tmp_done(arena, &tmp);
    return st;
}

/* ---- events ---- */

/* One event to the caller's sink; its status as it is. */
static wk_status send(const wk_pg_events *ev, const wk_event *x)
{
    return ev->sink->event(ev->sink->self, x);
}

/* One string-like event (STR or RAWNUM) over the bytes of b, valid during the callback. */
static wk_status send_text(const wk_pg_events *ev, wk_event_type type, const wk_buf *b)
{
    wk_event x;
    x.type = type;
    x.f32 = false;
    x.v.str.ptr = (const char *)b->data;
    x.v.str.len = b->len;
    return send(ev, &x);
}

/* Replays the JSON document s as events (json/jsonb columns): numbers stay RAWNUM (their exact
 * text) unless the caller asked for native numbers. A reader error fills err when the sink has
 * not already. */
static wk_status emit_json(const wk_slice *s, const wk_pg_events *ev, wk_error *err)
{
    wk_json_reader r;
    wk_read_opts o = {.flags = WK_JSON_READ_RAW_NUMBERS, .max_depth = 0};
    wk_json_reader_init(&r, s->ptr, s->len, &o, NULL);
    wk_event x;
    wk_status st;
    while ((st = wk_json_reader_next(&r, &x)) == WK_OK) {
        if (x.type == WK_EV_RAWNUM && (ev->flags & WK_PG_EV_JSON_NUMBERS)) {
            wk__json_number_to_native(&x);
        }
        st = send(ev, &x);
        if (st != WK_OK) {
            wk__pg_fail(err, st, 0, "the event sink failed");
            break;
        }
    }
    if (st == WK_ERR_EOF) {
        st = WK_OK;
    } else if (st != WK_OK && err != NULL && err->msg == NULL) {
        wk_json_reader_error(&r, err);
    }
    if (st != WK_OK && err != NULL && err->code == WK_OK) {
        wk_json_reader_error(&r, err);
    }
    wk_json_reader_free(&r);
    return st;
}

/* The significant digits of a decimal text (no sign, no exponent: numeric_out's form)
 * without leading and trailing zeros, into sig[0..*len) (at most `cap`, else false), and the
 * decimal exponent of the first of them; false for zero. */
static bool significant_digits(const uint8_t *s, size_t n, char *sig, size_t cap, size_t *len,
                               int *exp10)
{
    size_t dot = 0;
    while (dot < n && s[dot] != '.') {
        dot++;
    }
    size_t first = 0;
    while (first < n && (s[first] == '0' || s[first] == '.')) {
        first++;
    }
    if (first == n) {
        return false;
    }
    /* the exponent of the first significant digit: its place relative to the point */
    *exp10 = first < dot ? (int)(dot - first) - 1 : -(int)(first - dot);
    size_t last = n;
    while (last > first && (s[last - 1] == '0' || s[last - 1] == '.')) {
        last--; /* trailing zeros say nothing (1e30, 2.50) */
    }
    size_t k = 0;
    for (size_t i = first; i < last; i++) {
        if (s[i] == '.') {
            continue;
        }
        if (k == cap) {
            return false;
        }
        sig[k++] = (char)s[i];
    }
    *len = k;
    return true;
}

/* The numeric rule of WK_PG_EV_NUMERIC_NUMBERS over numeric_out's text s[0..n): an integer
 * when integral and within 64 bits, else a double when its shortest digits are the same
 * number; false: only the text holds it. */
static bool numeric_as_number(const uint8_t *s, size_t n, wk_event *x)
{
    bool neg = n > 0 && s[0] == '-';
    const uint8_t *d = s + neg;
    size_t dn = n - neg, dot = 0;
    while (dot < dn && d[dot] != '.') {
        dot++;
    }
    bool integral = true;
    for (size_t i = dot + 1; i < dn; i++) {
        integral = integral && d[i] == '0';
    }
    if (integral) {
        uint64_t u = 0;
        bool fits = dot > 0;
        for (size_t i = 0; i < dot && fits; i++) {
            unsigned digit = (unsigned)(d[i] - '0');
            fits = u <= (UINT64_MAX - digit) / 10;
            u = u * 10 + digit;
        }
        if (fits && (!neg || u == 0)) {
            x->type = WK_EV_UINT;
            x->v.u = u;
            return true;
        }
        if (fits && u <= (uint64_t)INT64_MAX + 1) {
            x->type = WK_EV_INT;
            x->v.i = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
            return true;
        }
    }
    char sig[24], dig[20];
    size_t slen = 0;
    int sexp = 0, dexp = 0;
    if (!significant_digits(d, dn, sig, sizeof sig, &slen, &sexp)) {
        return false; /* zero's sign aside, more digits than any double's shortest form */
    }
    /* Up to 15 significant digits always print back from the nearest double (DBL_DIG), and
     * with a power of ten up to 1e22 that double is one exact multiply or divide away
     * (Clinger's fast path): the common numeric costs no parse and no shortest print. */
    static const double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    int scale = sexp - (int)slen + 1; /* value = digits * 10^scale */
    if (slen <= 15 && scale >= -22 && scale <= 22) {
        uint64_t m = 0;
        for (size_t k = 0; k < slen; k++) {
            m = m * 10 + (unsigned)(sig[k] - '0');
        }
        double f = scale >= 0 ? (double)m * pow10[scale] : (double)m / pow10[-scale];
        x->type = WK_EV_FLOAT;
        x->f32 = false;
        x->v.f = neg ? -f : f;
        return true;
    }
    double f;
    if (!wk__pg_parse_float(s, n, false, &f) || !isfinite(f) || f == 0) {
        return false;
    }
    int dlen = wk__pg_shortest(fabs(f), false, dig, &dexp);
    while (dlen > 0 && dig[dlen - 1] == '0') {
        dlen--;
    }
    if ((size_t)dlen != slen || dexp != sexp || memcmp(sig, dig, slen) != 0) {
        return false;
    }
    x->type = WK_EV_FLOAT;
    x->f32 = false;
    x->v.f = f;
    return true;
}

/* Contract in pg_interface.h. Non-finite floats and non-finite numerics go as strings
 * ("NaN", "Infinity") because no event format has them as numbers; finite numerics go as
 * RAWNUM so that no digit is lost. `scratch` may be fixed-size: WK_ERR_LIMIT then asks the
 * caller for a bigger one. */
wk_status wk__pg_emit_native(const wk__pg_type *t, const wk__pg_native *v,
                             const wk_pg_events *ev, wk_buf *scratch, wk_error *err)
{
    wk_event x;
    x.f32 = false;
    wk_status st;
    switch (t->cls) {
    case WK__PG_CLASS_BOOL:
        x.type = WK_EV_BOOL;
        x.v.b = v->b;
        return send(ev, &x);
    case WK__PG_CLASS_INT:
        if (v->i < 0) {
            x.type = WK_EV_INT;
            x.v.i = v->i;
        } else {
            x.type = WK_EV_UINT;
            x.v.u = (uint64_t)v->i;
        }
        return send(ev, &x);
    case WK__PG_CLASS_FLOAT4:
    case WK__PG_CLASS_FLOAT8: {
        double f = t->cls == WK__PG_CLASS_FLOAT4 ? (double)v->f4 : v->f8;
        if (isfinite(f) && !(ev->flags & WK_PG_EV_RAW_FLOATS)) {
            x.type = WK_EV_FLOAT;
            x.f32 = t->cls == WK__PG_CLASS_FLOAT4;
            x.v.f = f;
            return send(ev, &x);
        }
        wk_buf_clear(scratch);
        st = t->write_text(v, scratch);
        if (st != WK_OK) {
            return st;
        }
        return send_text(ev, isfinite(f) ? WK_EV_RAWNUM : WK_EV_STR, scratch);
    }
    case WK__PG_CLASS_NUMERIC:
        wk_buf_clear(scratch);
        st = t->write_text(v, scratch);
        if (st != WK_OK) {
            return st;
        }
        if ((ev->flags & WK_PG_EV_NUMERIC_NUMBERS) &&
            (v->num.sign == WK_PG_NUMERIC_POS || v->num.sign == WK_PG_NUMERIC_NEG) &&
            numeric_as_number(scratch->data, scratch->len, &x)) {
            return send(ev, &x);
        }
        return send_text(ev,
                         v->num.sign == WK_PG_NUMERIC_POS || v->num.sign == WK_PG_NUMERIC_NEG
                             ? WK_EV_RAWNUM
                             : WK_EV_STR,
                         scratch);
    case WK__PG_CLASS_JSON:
        /* The embedded value, numbers kept as their exact text. */
        return emit_json(&v->s, ev, err);
    case WK__PG_CLASS_STRING:
    default:
        wk_buf_clear(scratch);
        st = t->write_text(v, scratch);
        if (st != WK_OK) {
            return st;
        }
        return send_text(ev, WK_EV_STR, scratch);
    }
}

/* The generic decoder to events (the caller's wk_pg_events at `out`): read the native value,
 * then emit it, rendering in a 128-byte stack buffer when the caller gave no scratch buffer. */
wk_status wk__pg_dec_events(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                            wk_arena *arena, wk_error *err)
{
    const wk_pg_events *ev = out;
    const wk__pg_type *t = type_of(d->codec);
    wk__pg_native v;
    tmp_arena tmp;
    wk_arena *a = arena_or_tmp(arena, &tmp);
    wk_status st = wk__pg_read(t, (wk_pg_format)d->format, p, n, &v, a, err);
    if (st == WK_OK) {
        uint8_t stack[128];
        wk_buf local;
        wk_buf *scratch = ev->scratch;
        if (scratch == NULL) {
            wk_buf_init_fixed(&local, stack, sizeof stack);
            scratch = &local;
        }
        if (err != NULL) {
            err->msg = NULL;
        }
        st = wk__pg_emit_native(t, &v, ev, scratch, err);
        if (st == WK_ERR_LIMIT && scratch == &local) {
            /* A long rendering (bytea, big numeric): retry with a heap buffer. */
            wk_buf_init(&local, NULL, 0);
            st = wk__pg_emit_native(t, &v, ev, &local, err);
            wk_buf_free(&local);
        }
        if (st != WK_OK && err != NULL && err->msg == NULL) {
            wk__pg_fail(err, st, 0, "the event sink failed");
        }
    }
    tmp_done(arena, &tmp);
    return st;
}

/* ---- value trees: a sink that builds wk_value nodes in the arena ---- */

typedef struct frame {
    size_t start; /* index of the first child in `items` */
    uint8_t type; /* WK_VAL_ARRAY or WK_VAL_MAP */
} frame;

typedef struct builder {
    wk_arena *arena;
    wk_buf items;  /* wk_value children of every open container, contiguous */
    wk_buf frames; /* frame stack */
    wk_value root;
    bool done;
    wk_status st;
} builder;

#define BUILDER_MAX_DEPTH 600

/* Adds a finished node: the root when no container is open, else the next child of the
 * innermost one (children stay contiguous in b->items until its END). */
static wk_status add_node(builder *b, const wk_value *v)
{
    if (b->frames.len == 0) {
        b->root = *v;
        b->done = true;
        return WK_OK;
    }
    return wk_buf_append(&b->items, v, sizeof *v);
}

/* A string-like node whose bytes are copied into the arena (the event's bytes die with the
 * callback). */
static wk_status copy_str(builder *b, wk_value *v, uint8_t type, const char *s, size_t len)
{
    if (len > UINT32_MAX) {
        return WK_ERR_RANGE;
    }
    char *c = wk_arena_strndup(b->arena, s, len);
    if (c == NULL) {
        return WK_ERR_NOMEM;
    }
    v->type = type;
    v->flags = WK_VALF_COPIED;
    v->len = (uint32_t)len;
    v->u.str = c;
    return WK_OK;
}

/* The tree builder's sink callback. Containers push a frame; END copies the frame's children
 * out of b->items into one arena array and adds the container as a node. The first error
 * sticks: every later event returns it. */
static wk_status builder_event(void *self, const wk_event *ev)
{
    builder *b = self;
    if (b->st != WK_OK) {
        return b->st;
    }
    wk_value v;
    memset(&v, 0, sizeof v);
    wk_status st = WK_OK;
    switch (ev->type) {
    case WK_EV_NIL: v.type = WK_VAL_NIL; break;
    case WK_EV_BOOL:
        v.type = WK_VAL_BOOL;
        v.u.b = ev->v.b;
        break;
    case WK_EV_INT:
        v.type = ev->v.i < 0 ? WK_VAL_INT : WK_VAL_UINT;
        v.u.i = ev->v.i;
        break;
    case WK_EV_UINT:
        v.type = WK_VAL_UINT;
        v.u.u = ev->v.u;
        break;
    case WK_EV_FLOAT:
        v.type = WK_VAL_FLOAT;
        v.flags = ev->f32 ? WK_VALF_F32 : 0;
        v.u.f = ev->v.f;
        break;
    case WK_EV_STR: st = copy_str(b, &v, WK_VAL_STR, ev->v.str.ptr, ev->v.str.len); break;
    case WK_EV_BIN: st = copy_str(b, &v, WK_VAL_BIN, ev->v.str.ptr, ev->v.str.len); break;
    case WK_EV_RAWNUM:
        st = copy_str(b, &v, WK_VAL_RAWNUM, ev->v.str.ptr, ev->v.str.len);
        break;
    case WK_EV_ARRAY:
    case WK_EV_MAP: {
        if (b->frames.len / sizeof(frame) >= BUILDER_MAX_DEPTH) {
            st = WK_ERR_DEPTH;
            break;
        }
        frame f = {b->items.len / sizeof(wk_value),
                   (uint8_t)(ev->type == WK_EV_ARRAY ? WK_VAL_ARRAY : WK_VAL_MAP)};
        st = wk_buf_append(&b->frames, &f, sizeof f);
        b->st = st;
        return st;
    }
    case WK_EV_END: {
        if (b->frames.len == 0) {
            st = WK_ERR_STATE;
            break;
        }
        frame f;
        b->frames.len -= sizeof f;
        memcpy(&f, b->frames.data + b->frames.len, sizeof f);
        size_t count = b->items.len / sizeof(wk_value) - f.start;
        size_t bytes = count * sizeof(wk_value);
        void *mem = NULL;
        if (count > 0) {
            mem = wk_arena_alloc(b->arena, bytes, 8);
            if (mem == NULL) {
                st = WK_ERR_NOMEM;
                break;
            }
            memcpy(mem, b->items.data + f.start * sizeof(wk_value), bytes);
        }
        b->items.len = f.start * sizeof(wk_value);
        v.type = f.type;
        if (f.type == WK_VAL_MAP) {
            v.len = (uint32_t)(count / 2);
            v.u.pairs = mem;
        } else {
            v.len = (uint32_t)count;
            v.u.items = mem;
        }
        break;
    }
    default: st = WK_ERR_UNSUPPORTED; break;
    }
    if (st == WK_OK) {
        st = add_node(b, &v);
    }
    b->st = st;
    return st;
}

/* The builder's error hook: reports the sticky status. */
static wk_status builder_error(const void *self, wk_error *err)
{
    const builder *b = self;
    wk__pg_fail(err, b->st, 0, "building the value tree failed");
    return b->st;
}

/* The generic decoder to a value tree (a wk_value at `out`, nodes and strings in `arena`,
 * which is required): runs the type's EVENTS decoder (the array one for arrays) into the
 * builder above, so every type gets trees from its event form. */
wk_status wk__pg_dec_value(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                           wk_arena *arena, wk_error *err)
{
    if (arena == NULL) {
        return wk__pg_fail(err, WK_ERR_ARG, 0, "decoding into a value tree needs an arena");
    }
    /* Run the EVENTS decoder of the same type into the tree builder. */
    wk_pg_decoder ed = *d;
    ed.kind = WK_PG_KIND_EVENTS;
    ed.fn = d->elem_oid != 0 ? wk__pg_array_dec[d->format][WK_PG_KIND_EVENTS]
                             : d->codec->decode[d->format][WK_PG_KIND_EVENTS];
    if (ed.fn == NULL) {
        return wk__pg_fail(err, WK_ERR_NOT_FOUND, 0, "this type has no event decoder");
    }
    builder b;
    memset(&b, 0, sizeof b);
    b.arena = arena;
    wk_buf_init(&b.items, NULL, 0);
    wk_buf_init(&b.frames, NULL, 0);
    wk_sink sink = {builder_event, builder_error, &b};
    /* json/jsonb numbers become the tree's numbers, as a JSON library reads them;
     * numerics keep their exact text (WK_VAL_RAWNUM) */
    wk_pg_events ev = {&sink, WK_PG_EV_JSON_NUMBERS, NULL, 0};
    wk_status st = ed.fn(&ed, p, n, &ev, arena, err);
    if (st == WK_OK && !b.done) {
        st = wk__pg_fail(err, WK_ERR_STATE, 0, "value tree is incomplete");
    }
    if (st == WK_OK) {
        *(wk_value *)out = b.root;
    }
    wk_buf_free(&b.items);
    wk_buf_free(&b.frames);
    return st;
}

/* ---- encoding ---- */

/* Appends the native value in format f; a writer's failure is the buffer's. */
static wk_status write_native(const wk__pg_type *t, wk_pg_format f, const wk__pg_native *v,
                              wk_buf *out, wk_error *err)
{
    wk_status st = f == WK_PG_BINARY ? t->write_bin(v, out) : t->write_text(v, out);
    if (st != WK_OK) {
        return wk__pg_fail(err, st, out->len, "output buffer is full");
    }
    return WK_OK;
}

/* The generic encoder from PostgreSQL text input (a wk_slice at `in`): parsed by the type's
 * text reader, then written in the encoder's format, so malformed input is refused here and
 * not by the server. */
wk_status wk__pg_enc_text(const wk_pg_encoder *e, const void *in, wk_buf *out, wk_error *err)
{
    const wk__pg_type *t = type_of(e->codec);
    const wk_slice *s = in;
    wk__pg_native v;
    tmp_arena tmp;
    wk_arena *a = arena_or_tmp(NULL, &tmp);
    wk_status st = t->read_text((const uint8_t *)s->ptr, s->len, &v, a, err);
    if (st == WK_OK) {
        st = write_native(t, (wk_pg_format)e->format, &v, out, err);
    }
    tmp_done(NULL, &tmp);
    return st;
}

/* Reads the caller's C value of kind k into the native union, by the type's class: integers
 * are range-checked against the type (t->min..t->max), numeric is built from NUMERIC, a float
 * (digits in `a`) or an integer (digits in store_digits). */
static wk_status kind_to_native(const wk__pg_type *t, wk_pg_kind k, const void *in,
                                wk__pg_native *v, wk_arena *a, uint16_t *store_digits,
                                wk_error *err)
{
    int64_t i;
    switch (k) {
    case WK_PG_KIND_I16: i = *(const int16_t *)in; break;
    case WK_PG_KIND_I32: i = *(const int32_t *)in; break;
    case WK_PG_KIND_I64: i = *(const int64_t *)in; break;
    case WK_PG_KIND_U32: i = *(const uint32_t *)in; break;
    default: i = 0; break;
    }
    switch (t->cls) {
    case WK__PG_CLASS_INT:
        if (i < t->min || i > t->max) {
            return wk__pg_fail(err, WK_ERR_RANGE, 0, "integer out of range for the type");
        }
        v->i = i;
        return WK_OK;
    case WK__PG_CLASS_FLOAT4:
    case WK__PG_CLASS_FLOAT8: {
        double f = k == WK_PG_KIND_F32 ? (double)*(const float *)in : *(const double *)in;
        if (t->cls == WK__PG_CLASS_FLOAT4) {
            v->f4 = (float)f;
        } else {
            v->f8 = f;
        }
        return WK_OK;
    }
    case WK__PG_CLASS_NUMERIC:
        if (k == WK_PG_KIND_NUMERIC) {
            v->num = *(const wk_pg_numeric *)in;
            return WK_OK;
        }
        if (k == WK_PG_KIND_F64 || k == WK_PG_KIND_F32) {
            double f = k == WK_PG_KIND_F32 ? (double)*(const float *)in : *(const double *)in;
            return wk_pg_numeric_from_double(f, a, &v->num, err);
        }
        wk_pg_numeric_from_i64(i, store_digits, &v->num);
        return WK_OK;
    case WK__PG_CLASS_BOOL: v->b = *(const bool *)in; return WK_OK;
    default: break;
    }
    switch (k) {
    case WK_PG_KIND_STR:
    case WK_PG_KIND_BYTES: v->s = *(const wk_slice *)in; break;
    case WK_PG_KIND_UUID: v->uuid = *(const wk_pg_uuid *)in; break;
    case WK_PG_KIND_DATE: v->i = *(const int32_t *)in; break;
    case WK_PG_KIND_TIME:
    case WK_PG_KIND_TIMESTAMP: v->i = *(const int64_t *)in; break;
    case WK_PG_KIND_TIMETZ: v->timetz = *(const wk_pg_timetz *)in; break;
    case WK_PG_KIND_INTERVAL: v->iv = *(const wk_pg_interval *)in; break;
    case WK_PG_KIND_INET: v->inet = *(const wk_pg_inet *)in; break;
    default: return wk__pg_fail(err, WK_ERR_TYPE, 0, "this type does not encode that C kind");
    }
    return WK_OK;
}

/* Checks a C value against what the type's binary reader would accept, so that encoding never
 * produces bytes PostgreSQL (or our own decoder) would reject. */
static wk_status validate(const wk__pg_type *t, wk_pg_kind k, const wk__pg_native *v,
                          wk_error *err)
{
    uint8_t tmp[64];
    wk_buf b;
    wk_buf_init_fixed(&b, tmp, sizeof tmp);
    if (k == WK_PG_KIND_STR || k == WK_PG_KIND_BYTES || k == WK_PG_KIND_NUMERIC ||
        t->write_bin(v, &b) != WK_OK) {
        return WK_OK; /* variable-length kinds are checked by the server */
    }
    wk__pg_native back;
    return t->read_bin(b.data, b.len, &back, NULL, err);
}

/* The generic encoder from a C kind: to native, checked by validate, then written in the
 * encoder's format. */
wk_status wk__pg_enc_convert(const wk_pg_encoder *e, const void *in, wk_buf *out,
                             wk_error *err)
{
    const wk__pg_type *t = type_of(e->codec);
    wk__pg_native v;
    uint16_t digits[WK_PG_NUMERIC_I64_DIGITS];
    tmp_arena tmp;
    wk_arena *a = arena_or_tmp(NULL, &tmp);
    wk_status st = kind_to_native(t, (wk_pg_kind)e->kind, in, &v, a, digits, err);
    if (st == WK_OK) {
        st = validate(t, (wk_pg_kind)e->kind, &v, err);
    }
    if (st == WK_OK) {
        st = write_native(t, (wk_pg_format)e->format, &v, out, err);
    }
    tmp_done(NULL, &tmp);
    return st;
}
