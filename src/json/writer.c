/*
 * The JSON writer: an event sink (wk_json_writer) and a direct tree walker
 * (wk_json_write_value) that share every byte-level helper below, so both print the same
 * text for the same data.
 *
 * Strings are copied in runs: the SSE2 scan from lex.h finds the next byte that needs a look
 * ('"', '\\', control, non-ASCII); runs are memcpy'd, non-ASCII is checked as UTF-8 and
 * copied as is, and only '"', '\\' and controls are escaped (as \n, \t, ... or \u00XX).
 * Doubles use the shortest round-trip digits (dtoa.c); float32 sources use the float's own
 * shortest digits. Values JSON cannot express are mapped (docs/formats.md): binary as a
 * base64 string, ext as {"ext":type,"data":"<base64>"}, timestamps as RFC 3339 strings,
 * scalar map keys as the string of their JSON text.
 */
#include <string.h>

#include "json/dtoa.h"
#include "json/lex.h"
#include "wirekit/json.h"

/* Frame bits of the event writer. */
#define F_OBJECT 0x01u
#define F_ITEMS 0x02u /* at least one element written */
#define F_VALUE 0x04u /* object: a key was written, its value is next */

typedef struct wfail {
    wk_status st;
    const char *msg;
} wfail;

static wk_status wfailed(wfail *f, wk_status st, const char *msg)
{
    f->st = st;
    f->msg = msg;
    return st;
}

static wk_status put(wk_buf *b, const void *s, size_t n, wfail *f)
{
    wk_status st = wk_buf_append(b, s, n);
    return st == WK_OK ? WK_OK : wfailed(f, st, "output buffer full");
}

static wk_status put_byte(wk_buf *b, uint8_t c, wfail *f)
{
    wk_status st = wk_buf_push(b, c);
    return st == WK_OK ? WK_OK : wfailed(f, st, "output buffer full");
}

static const char HEX[] = "0123456789abcdef";

/* Writes s[0..n) as a JSON string. */
static wk_status put_string(wk_buf *b, const uint8_t *s, size_t n, wfail *f)
{
    size_t need;
    if (!wk_size_add(n, 2, &need)) {
        return wfailed(f, WK_ERR_LIMIT, "output buffer full");
    }
    wk_status st = wk_buf_reserve(b, need);
    if (st != WK_OK) {
        return wfailed(f, st, "output buffer full");
    }
    uint8_t *d = b->data + b->len;
    *d++ = '"';
    const uint8_t *p = s;
    const uint8_t *end = s + n;
    while (p < end) {
        const uint8_t *q = wk__json_scan_plain(p, end);
        memcpy(d, p, (size_t)(q - p));
        d += q - p;
        p = q;
        if (p == end) {
            break;
        }
        uint8_t c = *p;
        if (c >= 0x80) {
            const uint8_t *nx = wk__json_utf8_one(p, end);
            if (nx == NULL) {
                b->len = (size_t)(d - b->data);
                return wfailed(f, WK_ERR_UTF8, "string is not valid UTF-8");
            }
            memcpy(d, p, (size_t)(nx - p));
            d += nx - p;
            p = nx;
            continue;
        }
        /* An escape: up to 6 bytes where 1 was reserved. */
        b->len = (size_t)(d - b->data);
        if (wk_buf_reserve(b, (size_t)(end - p) + 7) != WK_OK) {
            return wfailed(f, WK_ERR_LIMIT, "output buffer full");
        }
        d = b->data + b->len;
        *d++ = '\\';
        switch (c) {
        case '"':
        case '\\':
            *d++ = c;
            break;
        case '\b':
            *d++ = 'b';
            break;
        case '\f':
            *d++ = 'f';
            break;
        case '\n':
            *d++ = 'n';
            break;
        case '\r':
            *d++ = 'r';
            break;
        case '\t':
            *d++ = 't';
            break;
        default:
            memcpy(d, "u00", 3);
            d[3] = (uint8_t)HEX[c >> 4];
            d[4] = (uint8_t)HEX[c & 15];
            d += 5;
            break;
        }
        p++;
    }
    *d++ = '"';
    b->len = (size_t)(d - b->data);
    return WK_OK;
}

static const char DIGITS2[201] = "00010203040506070809101112131415161718192021222324252627282930"
                                 "31323334353637383940414243444546474849505152535455565758596061"
                                 "62636465666768697071727374757677787980818283848586878889909192"
                                 "93949596979899";

/* Writes u in decimal at d; returns the length. */
static size_t fmt_u64(uint64_t u, char *d)
{
    char tmp[20];
    int pos = 20;
    while (u >= 100) {
        uint64_t r = u % 100;
        u /= 100;
        pos -= 2;
        memcpy(tmp + pos, DIGITS2 + 2 * r, 2);
    }
    if (u >= 10) {
        pos -= 2;
        memcpy(tmp + pos, DIGITS2 + 2 * u, 2);
    } else {
        tmp[--pos] = (char)('0' + u);
    }
    memcpy(d, tmp + pos, (size_t)(20 - pos));
    return (size_t)(20 - pos);
}

static size_t fmt_i64(int64_t i, char *d)
{
    if (i < 0) {
        d[0] = '-';
        return 1 + fmt_u64(0 - (uint64_t)i, d + 1);
    }
    return fmt_u64((uint64_t)i, d);
}

/* Number text for a double into d (WK__DTOA_JSON_MAX bytes); 0 when not representable. */
static size_t fmt_double(double v, bool f32, unsigned flags, char *d)
{
    if (__builtin_isfinite(v)) {
        return f32 ? wk__ftoa_json((float)v, d) : wk__dtoa_json(v, d);
    }
    if (!(flags & WK_JSON_WRITE_NAN_INF)) {
        return 0;
    }
    const char *t = __builtin_isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity";
    size_t n = strlen(t);
    memcpy(d, t, n);
    return n;
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Writes s[0..n) as a quoted base64 string (RFC 4648, padded). */
static wk_status put_base64(wk_buf *b, const uint8_t *s, size_t n, wfail *f)
{
    size_t out = (n / 3 + (n % 3 != 0)) * 4 + 2;
    if (n > SIZE_MAX / 2 || wk_buf_reserve(b, out) != WK_OK) {
        return wfailed(f, WK_ERR_LIMIT, "output buffer full");
    }
    uint8_t *d = b->data + b->len;
    *d++ = '"';
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t x = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        d[0] = (uint8_t)B64[x >> 18];
        d[1] = (uint8_t)B64[(x >> 12) & 63];
        d[2] = (uint8_t)B64[(x >> 6) & 63];
        d[3] = (uint8_t)B64[x & 63];
        d += 4;
    }
    if (i < n) {
        uint32_t x = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0);
        d[0] = (uint8_t)B64[x >> 18];
        d[1] = (uint8_t)B64[(x >> 12) & 63];
        d[2] = i + 1 < n ? (uint8_t)B64[(x >> 6) & 63] : '=';
        d[3] = '=';
        d += 4;
    }
    *d++ = '"';
    b->len = (size_t)(d - b->data);
    return WK_OK;
}

/* Writes a timestamp as a quoted RFC 3339 UTC string, fraction without trailing zeros. */
static wk_status put_timestamp(wk_buf *b, int64_t sec, uint32_t nsec, wfail *f)
{
    if (sec < -62167219200ll || sec > 253402300799ll || nsec > 999999999u) {
        return wfailed(f, WK_ERR_RANGE, "timestamp outside years 0000-9999 (no RFC 3339 form)");
    }
    int64_t days = sec >= 0 ? sec / 86400 : (sec - 86399) / 86400;
    int64_t secs = sec - days * 86400;
    /* Civil date from days since 1970-01-01 (proleptic Gregorian, 400-year eras). */
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t day = doy - (153 * mp + 2) / 5 + 1;
    int64_t month = mp < 10 ? mp + 3 : mp - 9;
    int64_t year = yoe + era * 400 + (month <= 2);
    char t[40];
    char *d = t;
    *d++ = '"';
    memcpy(d, DIGITS2 + 2 * (year / 100), 2);
    memcpy(d + 2, DIGITS2 + 2 * (year % 100), 2);
    d[4] = '-';
    memcpy(d + 5, DIGITS2 + 2 * month, 2);
    d[7] = '-';
    memcpy(d + 8, DIGITS2 + 2 * day, 2);
    d[10] = 'T';
    memcpy(d + 11, DIGITS2 + 2 * (secs / 3600), 2);
    d[13] = ':';
    memcpy(d + 14, DIGITS2 + 2 * (secs / 60 % 60), 2);
    d[16] = ':';
    memcpy(d + 17, DIGITS2 + 2 * (secs % 60), 2);
    d += 19;
    if (nsec != 0) {
        *d++ = '.';
        uint32_t div = 100000000;
        uint32_t rest = nsec;
        while (rest != 0) {
            *d++ = (char)('0' + rest / div);
            rest %= div;
            div /= 10;
        }
    }
    *d++ = 'Z';
    *d++ = '"';
    return put(b, t, (size_t)(d - t), f);
}

/* Writes a scalar event as a value; containers, END and ext are handled by the callers. */
static wk_status put_scalar(wk_buf *b, const wk_event *ev, unsigned flags, wfail *f)
{
    char t[WK__DTOA_JSON_MAX];
    size_t n;
    switch (ev->type) {
    case WK_EV_NIL:
        return put(b, "null", 4, f);
    case WK_EV_BOOL:
        return ev->v.b ? put(b, "true", 4, f) : put(b, "false", 5, f);
    case WK_EV_INT:
        n = fmt_i64(ev->v.i, t);
        return put(b, t, n, f);
    case WK_EV_UINT:
        n = fmt_u64(ev->v.u, t);
        return put(b, t, n, f);
    case WK_EV_FLOAT:
        n = fmt_double(ev->v.f, ev->f32, flags, t);
        if (n == 0) {
            return wfailed(f, WK_ERR_RANGE, "NaN or infinity has no JSON form");
        }
        return put(b, t, n, f);
    case WK_EV_STR:
        return put_string(b, (const uint8_t *)ev->v.str.ptr, ev->v.str.len, f);
    case WK_EV_RAWNUM:
        return put(b, ev->v.str.ptr, ev->v.str.len, f);
    case WK_EV_BIN:
        return put_base64(b, (const uint8_t *)ev->v.str.ptr, ev->v.str.len, f);
    case WK_EV_TIMESTAMP:
        return put_timestamp(b, ev->v.ts.sec, ev->v.ts.nsec, f);
    default:
        return wfailed(f, WK_ERR_ARG, "unknown event type");
    }
}

/* Writes a scalar as an object key: strings as they are, other scalars as the string of
 * their JSON text; containers and ext cannot be keys. */
static wk_status put_key(wk_buf *b, const wk_event *ev, unsigned flags, wfail *f)
{
    switch (ev->type) {
    case WK_EV_STR:
    case WK_EV_BIN:
    case WK_EV_TIMESTAMP:
        return put_scalar(b, ev, flags, f);
    case WK_EV_ARRAY:
    case WK_EV_MAP:
    case WK_EV_EXT:
        return wfailed(f, WK_ERR_TYPE, "map key is an array, map or ext (JSON keys are strings)");
    default: {
        size_t mark = b->len;
        wk_status st = put_byte(b, '"', f);
        if (st == WK_OK) {
            st = put_scalar(b, ev, flags, f);
        }
        if (st == WK_OK) {
            st = put_byte(b, '"', f);
        }
        if (st != WK_OK) {
            b->len = mark;
        }
        return st;
    }
    }
}

static wk_status put_ext(wk_buf *b, const wk_event *ev, wfail *f)
{
    char t[40];
    memcpy(t, "{\"ext\":", 7);
    size_t n = 7 + fmt_i64(ev->v.ext.type, t + 7);
    memcpy(t + n, ",\"data\":", 8);
    n += 8;
    wk_status st = put(b, t, n, f);
    if (st == WK_OK) {
        st = put_base64(b, ev->v.ext.ptr, ev->v.ext.len, f);
    }
    if (st == WK_OK) {
        st = put_byte(b, '}', f);
    }
    return st;
}

static wk_status put_newline_indent(wk_buf *b, size_t depth, uint32_t indent, wfail *f)
{
    size_t n = depth * indent + 1;
    if (wk_buf_reserve(b, n) != WK_OK) {
        return wfailed(f, WK_ERR_LIMIT, "output buffer full");
    }
    b->data[b->len] = '\n';
    memset(b->data + b->len + 1, ' ', n - 1);
    b->len += n;
    return WK_OK;
}

/* ---- event writer ------------------------------------------------------------------------ */

WK_API void wk_json_writer_init(wk_json_writer *w, wk_buf *out, const wk_json_write_opts *opts)
{
    w->out = out;
    w->flags = opts != NULL ? opts->flags : 0;
    uint32_t indent = opts != NULL && opts->indent != 0 ? opts->indent : 2;
    w->indent = indent > 16 ? 16 : indent;
    w->depth = 0;
    w->values = 0;
    w->err.code = WK_OK;
    w->err.offset = 0;
    w->err.msg = NULL;
}

static wk_status latch(wk_json_writer *w, const wfail *f)
{
    w->err.code = f->st;
    w->err.msg = f->msg;
    w->err.offset = w->out->len;
    return f->st;
}

/* A value (scalar or container) ended at the top level. */
static wk_status top_done(wk_json_writer *w, wfail *f)
{
    w->values++;
    if (w->flags & WK_JSON_WRITE_NEWLINE) {
        return put_byte(w->out, '\n', f);
    }
    return WK_OK;
}

WK_API wk_status wk_json_writer_event(wk_json_writer *w, const wk_event *ev)
{
    if (w->err.code != WK_OK) {
        return w->err.code;
    }
    wk_buf *b = w->out;
    bool pretty = (w->flags & WK_JSON_WRITE_PRETTY) != 0;
    wfail f = {WK_OK, NULL};
    wk_status st = WK_OK;

    if (ev->type == WK_EV_END) {
        if (w->depth == 0) {
            wfailed(&f, WK_ERR_STATE, "END event with no open array or map");
            return latch(w, &f);
        }
        uint8_t fr = w->frame[w->depth - 1];
        if (fr & F_VALUE) {
            wfailed(&f, WK_ERR_STATE, "map ended after a key, before its value");
            return latch(w, &f);
        }
        w->depth--;
        if (pretty && (fr & F_ITEMS)) {
            st = put_newline_indent(b, w->depth, w->indent, &f);
        }
        if (st == WK_OK) {
            st = put_byte(b, (fr & F_OBJECT) ? '}' : ']', &f);
        }
        if (st == WK_OK && w->depth == 0) {
            st = top_done(w, &f);
        }
        return st == WK_OK ? WK_OK : latch(w, &f);
    }

    /* Separator and position. */
    if (w->depth == 0) {
        if (w->values > 0 && !(w->flags & WK_JSON_WRITE_NEWLINE)) {
            st = put_byte(b, '\n', &f);
        }
    } else {
        uint8_t *fr = &w->frame[w->depth - 1];
        if (*fr & F_OBJECT) {
            if (!(*fr & F_VALUE)) {
                /* This event is a key. */
                if (*fr & F_ITEMS) {
                    st = put_byte(b, ',', &f);
                }
                if (st == WK_OK && pretty) {
                    st = put_newline_indent(b, w->depth, w->indent, &f);
                }
                if (st == WK_OK) {
                    st = put_key(b, ev, w->flags, &f);
                }
                if (st == WK_OK) {
                    st = pretty ? put(b, ": ", 2, &f) : put_byte(b, ':', &f);
                }
                *fr |= F_ITEMS | F_VALUE;
                return st == WK_OK ? WK_OK : latch(w, &f);
            }
            *fr &= (uint8_t)~F_VALUE;
        } else {
            if (*fr & F_ITEMS) {
                st = put_byte(b, ',', &f);
            }
            if (st == WK_OK && pretty) {
                st = put_newline_indent(b, w->depth, w->indent, &f);
            }
            *fr |= F_ITEMS;
        }
    }
    if (st != WK_OK) {
        return latch(w, &f);
    }

    switch (ev->type) {
    case WK_EV_ARRAY:
    case WK_EV_MAP:
        if (w->depth >= WK_JSON_WRITER_MAX_DEPTH) {
            wfailed(&f, WK_ERR_DEPTH, "nesting deeper than the writer's limit");
            return latch(w, &f);
        }
        w->frame[w->depth++] = ev->type == WK_EV_MAP ? F_OBJECT : 0;
        st = put_byte(b, ev->type == WK_EV_MAP ? '{' : '[', &f);
        return st == WK_OK ? WK_OK : latch(w, &f);
    case WK_EV_EXT:
        st = put_ext(b, ev, &f);
        break;
    default:
        st = put_scalar(b, ev, w->flags, &f);
        break;
    }
    if (st == WK_OK && w->depth == 0) {
        st = top_done(w, &f);
    }
    return st == WK_OK ? WK_OK : latch(w, &f);
}

static wk_status sink_event(void *self, const wk_event *ev)
{
    return wk_json_writer_event(self, ev);
}

static void sink_error(const void *self, wk_error *err)
{
    *err = ((const wk_json_writer *)self)->err;
}

WK_API void wk_json_writer_sink(wk_json_writer *w, wk_sink *sink)
{
    sink->event = sink_event;
    sink->error = sink_error;
    sink->self = w;
}

WK_API wk_status wk_json_writer_finish(wk_json_writer *w, wk_error *err)
{
    if (w->err.code == WK_OK && w->depth != 0) {
        w->err.code = WK_ERR_STATE;
        w->err.msg = "an array or map was left open";
        w->err.offset = w->out->len;
    }
    if (err != NULL) {
        *err = w->err;
    }
    return w->err.code;
}

/* ---- tree writer ------------------------------------------------------------------------- */

/* The event a scalar node stands for (the event writer's helpers do the printing). */
static void node_event(const wk_value *v, wk_event *ev)
{
    ev->f32 = false;
    switch ((wk_value_type)v->type) {
    case WK_VAL_NIL:
        ev->type = WK_EV_NIL;
        break;
    case WK_VAL_BOOL:
        ev->type = WK_EV_BOOL;
        ev->v.b = v->u.b;
        break;
    case WK_VAL_INT:
        ev->type = WK_EV_INT;
        ev->v.i = v->u.i;
        break;
    case WK_VAL_UINT:
        ev->type = WK_EV_UINT;
        ev->v.u = v->u.u;
        break;
    case WK_VAL_FLOAT:
        ev->type = WK_EV_FLOAT;
        ev->f32 = (v->flags & WK_VALF_F32) != 0;
        ev->v.f = v->u.f;
        break;
    case WK_VAL_STR:
    case WK_VAL_RAWNUM:
    case WK_VAL_BIN:
        ev->type = v->type == WK_VAL_STR ? WK_EV_STR
                   : v->type == WK_VAL_BIN ? WK_EV_BIN
                                           : WK_EV_RAWNUM;
        ev->v.str.ptr = v->u.str;
        ev->v.str.len = v->len;
        break;
    case WK_VAL_EXT:
        ev->type = WK_EV_EXT;
        ev->v.ext.type = v->ext_type;
        ev->v.ext.ptr = v->u.bin;
        ev->v.ext.len = v->len;
        break;
    case WK_VAL_TIMESTAMP:
        ev->type = WK_EV_TIMESTAMP;
        ev->v.ts.sec = v->u.i;
        ev->v.ts.nsec = v->len;
        break;
    case WK_VAL_ARRAY:
        ev->type = WK_EV_ARRAY;
        ev->v.count = v->len;
        break;
    case WK_VAL_MAP:
        ev->type = WK_EV_MAP;
        ev->v.count = v->len;
        break;
    default:
        ev->type = (wk_event_type)-1;
        break;
    }
}

/* A scalar value node (fast paths for the common types). */
static inline wk_status put_node(wk_buf *b, const wk_value *v, unsigned flags, wfail *f)
{
    char t[24];
    switch ((wk_value_type)v->type) {
    case WK_VAL_STR:
        return put_string(b, (const uint8_t *)v->u.str, v->len, f);
    case WK_VAL_UINT:
        if (wk_buf_reserve(b, 20) != WK_OK) {
            return wfailed(f, WK_ERR_LIMIT, "output buffer full");
        }
        b->len += fmt_u64(v->u.u, (char *)b->data + b->len);
        return WK_OK;
    case WK_VAL_INT:
        return put(b, t, fmt_i64(v->u.i, t), f);
    default: {
        wk_event ev;
        node_event(v, &ev);
        if (ev.type == WK_EV_EXT) {
            return put_ext(b, &ev, f);
        }
        return put_scalar(b, &ev, flags, f);
    }
    }
}

typedef struct wframe {
    const wk_value *node;
    uint32_t i;
} wframe;

WK_API wk_status wk_json_write_value(const wk_value *v, wk_buf *out,
                                     const wk_json_write_opts *opts, wk_error *err)
{
    unsigned flags = opts != NULL ? opts->flags : 0;
    uint32_t indent = opts != NULL && opts->indent != 0 ? opts->indent : 2;
    indent = indent > 16 ? 16 : indent;
    const bool pretty = (flags & WK_JSON_WRITE_PRETTY) != 0;
    wframe stack[WK_JSON_WRITER_MAX_DEPTH];
    size_t depth = 0;
    wfail f = {WK_OK, NULL};
    wk_status st;
    const wk_value *cur = v;

enter:
    /* cur: a value to write in full. */
    if (cur->type == WK_VAL_ARRAY || cur->type == WK_VAL_MAP) {
        if (depth >= WK_JSON_WRITER_MAX_DEPTH) {
            wfailed(&f, WK_ERR_DEPTH, "nesting deeper than the writer's limit");
            goto fail;
        }
        if (put_byte(out, cur->type == WK_VAL_MAP ? '{' : '[', &f) != WK_OK) {
            goto fail;
        }
        stack[depth].node = cur;
        stack[depth].i = 0;
        depth++;
        goto next;
    }
    if (put_node(out, cur, flags, &f) != WK_OK) {
        goto fail;
    }

next:
    while (depth > 0) {
        wframe *fr = &stack[depth - 1];
        const wk_value *node = fr->node;
        if (fr->i == node->len) {
            depth--;
            if (pretty && node->len != 0 && put_newline_indent(out, depth, indent, &f) != WK_OK) {
                goto fail;
            }
            if (put_byte(out, node->type == WK_VAL_MAP ? '}' : ']', &f) != WK_OK) {
                goto fail;
            }
            continue;
        }
        uint32_t i = fr->i++;
        if (i != 0 && put_byte(out, ',', &f) != WK_OK) {
            goto fail;
        }
        if (pretty && put_newline_indent(out, depth, indent, &f) != WK_OK) {
            goto fail;
        }
        if (node->type == WK_VAL_ARRAY) {
            cur = &node->u.items[i];
        } else {
            const wk_pair *pr = &node->u.pairs[i];
            if (pr->key.type == WK_VAL_STR) {
                st = put_string(out, (const uint8_t *)pr->key.u.str, pr->key.len, &f);
            } else {
                wk_event kev;
                node_event(&pr->key, &kev);
                st = put_key(out, &kev, flags, &f);
            }
            if (st != WK_OK) {
                goto fail;
            }
            st = pretty ? put(out, ": ", 2, &f) : put_byte(out, ':', &f);
            if (st != WK_OK) {
                goto fail;
            }
            cur = &pr->val;
        }
        goto enter;
    }
    return WK_OK;

fail:
    return wk_error_set(err, f.st, out->len, f.msg);
}
