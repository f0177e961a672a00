/*
 * Serializing media types, the render cache, building from parts, and parameter helpers.
 *
 * Where it sits: a wk_media_type from mt_parse.c / mt_fast.c (or built here from parts) ->
 * wk_mt_render_build / wk_mt_serialize here -> a view (table string, the input) or text in
 * the caller's buffer. The parameter helpers read the views the parser left.
 *
 * Serialization is the WHATWG algorithm (lowercase names, values quoted when empty or not all
 * token bytes, `"` and `\` escaped), with ";" or "; " between parameters. Rendering returns the
 * same text but tries, in order, never to build it: a precomputed table string for well-known
 * types with no parameters or only charset=utf-8, then the input itself when the parser found
 * it already canonical (either view is kept in the object, which stays a plain value); only
 * then is it built, into the caller's scratch buffer.
 */
#include <string.h>

#include "mediatype/mt_internal.h"

/* messages name the limits by their numbers: kept in step here */
_Static_assert(WK_MT_MAX_PARAMS == 16, "a message below says 16 parameters");
_Static_assert(WK_MT_ESSENCE_MAX == 255, "a message below says 255 bytes");

/* Public (wirekit/mediatype.h): the plain value (backslash escapes of a quoted value
 * removed) into buf, up to cap bytes; returns the full length, so a caller can size buf. */
size_t wk_mt_param_value(const wk_mt_param *p, char *buf, size_t cap)
{
    if (p == NULL) {
        return 0;
    }
    const char *s = p->value.ptr;
    size_t n = p->value.len, m = 0;
    for (size_t i = 0; i < n; i++) {
        if (p->escaped && s[i] == '\\' && i + 1 < n) {
            i++;
        }
        if (m < cap) {
            buf[m] = s[i];
        }
        m++;
    }
    return m;
}

/* ASCII lower case (parameter names serialize lower-cased). */
static inline char lower(char c)
{
    return (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
}

/* Writes the serialization to `dst` when not NULL; returns its length either way. The value
 * is quoted when the plain value is empty or not all token bytes. */
static size_t write_form(const wk_media_type *mt, unsigned style, char *dst)
{
    size_t n = 0;
#define PUT(c)                                                                                     \
    do {                                                                                           \
        if (dst != NULL) {                                                                         \
            dst[n] = (c);                                                                          \
        }                                                                                          \
        n++;                                                                                       \
    } while (0)
    wk_slice ess = wk_mt_essence(mt);
    if (dst != NULL) {
        memcpy(dst, ess.ptr, ess.len);
    }
    n = ess.len;
    for (unsigned k = 0; k < mt->nparams; k++) {
        const wk_mt_param *p = &mt->params[k];
        PUT(';');
        if (style == WK_MT_STYLE_SPACE) {
            PUT(' ');
        }
        for (size_t i = 0; i < p->name.len; i++) {
            PUT(lower(p->name.ptr[i]));
        }
        PUT('=');
        const char *s = p->value.ptr;
        size_t len = p->value.len;
        bool token = len != 0;
        for (size_t i = 0; i < len && token; i++) {
            token = wk__mt_is((uint8_t)s[i], WK__MT_TOKEN);
        }
        /* An escaped value's plain form holds '"' or '\' (or an escaped token byte); scan
         * the plain form only when the raw one is not already all token bytes. */
        if (token) {
            for (size_t i = 0; i < len; i++) {
                PUT(s[i]);
            }
            continue;
        }
        if (p->escaped) {
            token = true;
            size_t plain = 0;
            for (size_t i = 0; i < len && token; i++) {
                if (s[i] == '\\' && i + 1 < len) {
                    i++;
                }
                token = wk__mt_is((uint8_t)s[i], WK__MT_TOKEN);
                plain++;
            }
            if (token && plain != 0) {
                for (size_t i = 0; i < len; i++) {
                    if (s[i] == '\\' && i + 1 < len) {
                        i++;
                    }
                    PUT(s[i]);
                }
                continue;
            }
        }
        PUT('"');
        for (size_t i = 0; i < len; i++) {
            char c = s[i];
            if (p->escaped && c == '\\' && i + 1 < len) {
                c = s[++i];
            }
            if (c == '"' || c == '\\') {
                PUT('\\');
            }
            PUT(c);
        }
        PUT('"');
    }
#undef PUT
    return n;
}

/* Public: the serialization appended to out, in one reservation (write_form measures first,
 * then writes). */
wk_status wk_mt_serialize(const wk_media_type *mt, unsigned style, wk_buf *out, wk_error *err)
{
    if (mt == NULL || out == NULL || mt->essence_len == 0 || style > WK_MT_STYLE_SPACE) {
        return wk_error_set(err, WK_ERR_ARG, 0, "no media type, buffer or style");
    }
    size_t n = write_form(mt, style, NULL);
    wk_status st = wk_buf_reserve(out, n);
    if (st != WK_OK) {
        return wk_error_set(err, st, out->len, "output buffer is full");
    }
    write_form(mt, style, (char *)out->data + out->len);
    out->len += n;
    return WK_OK;
}

/* Which render styles a cached view serves (bit per style). */
/* Without parameters both styles serialize the same, so one cached form serves both. */
static uint8_t styles_of(const wk_media_type *mt, unsigned style)
{
    return (uint8_t)(mt->nparams == 0 ? 3u : 1u << style);
}

/* Keeps p[0..n) as the value's rendering for `style` and returns it as the output view; the
 * view lives as long as the table (static) or the input. */
static wk_status cached(wk_media_type *mt, unsigned style, const char *p, size_t n,
                        wk_slice *out)
{
    mt->render_styles = styles_of(mt, style);
    mt->render_view.ptr = p;
    mt->render_view.len = n;
    out->ptr = p;
    out->len = n;
    return WK_OK;
}

/* Public: the rendering, as a view when one exists (see the top), else built at the end of
 * `scratch` (required then) and returned as a view into it. */
wk_status wk_mt_render_build(wk_media_type *mt, unsigned style, wk_buf *scratch, wk_slice *out,
                             wk_error *err)
{
    if (mt == NULL || out == NULL || mt->essence_len == 0 || style > WK_MT_STYLE_SPACE) {
        return wk_error_set(err, WK_ERR_ARG, 0, "no media type, output or style");
    }
    if (mt->id != 0) {
        const wk_mt_known *k = &wk__mt_known[mt->id];
        if (mt->nparams == 0) {
            return cached(mt, style, k->essence, k->essence_len, out);
        }
        const wk_mt_param *p = &mt->params[0];
        if (mt->nparams == 1 && k->render_utf8[style] != NULL && p->name.len == 7 &&
            p->value.len == 5 && memcmp(p->value.ptr, "utf-8", 5) == 0 &&
            wk__mt_ieq(p->name.ptr, 7, "charset", 7)) {
            const char *r = k->render_utf8[style];
            return cached(mt, style, r, k->essence_len + (style == WK_MT_STYLE_SPACE ? 15 : 14),
                          out);
        }
    }
    unsigned bit = style == WK_MT_STYLE_SPACE ? WK__MT_CANON_SPACE : WK__MT_CANON_SEMI;
    if ((mt->canonical & bit) && mt->input.ptr != NULL) {
        return cached(mt, style, mt->input.ptr, mt->input.len, out);
    }
    if (scratch == NULL) {
        return wk_error_set(err, WK_ERR_ARG, 0, "the form must be built and no buffer was given");
    }
    size_t at = scratch->len;
    wk_status st = wk_mt_serialize(mt, style, scratch, err);
    if (st != WK_OK) {
        return st;
    }
    out->ptr = (const char *)scratch->data + at;
    out->len = scratch->len - at;
    return WK_OK;
}

/* Public: a value from an essence and parameters, checked as the parser would check them
 * (token/token, token names, no control bytes, no duplicates); the parameters keep pointing
 * at the caller's strings, so those must outlive the value. */
wk_status wk_mt_build(wk_media_type *mt, const char *essence, size_t essence_len,
                      const wk_mt_param *params, size_t n, wk_error *err)
{
    if (mt == NULL || essence == NULL || (params == NULL && n != 0)) {
        return wk_error_set(err, WK_ERR_ARG, 0, "no media type, essence or parameters");
    }
    wk__mt_clear(mt);
    const char *slash = memchr(essence, '/', essence_len);
    if (slash == NULL || !wk__mt_token(essence, (size_t)(slash - essence)) ||
        !wk__mt_token(slash + 1, essence_len - (size_t)(slash - essence) - 1)) {
        return wk_error_set(err, WK_ERR_SYNTAX, 0, "essence is not token/token");
    }
    if (n > WK_MT_MAX_PARAMS) {
        return wk_error_set(err, WK_ERR_LIMIT, 0, "more than 16 parameters");
    }
    for (size_t k = 0; k < n; k++) {
        const wk_mt_param *p = &params[k];
        if (!wk__mt_token(p->name.ptr, p->name.len) ||
            (p->value.ptr == NULL && p->value.len != 0) ||
            !wk__mt_value_ok(p->value.ptr, p->value.len, false)) {
            return wk_error_set(err, WK_ERR_SYNTAX, k + 1,
                                "parameter name is not a token or value has a control byte");
        }
        for (size_t j = 0; j < k; j++) {
            if (wk__mt_ieq(params[j].name.ptr, params[j].name.len, p->name.ptr, p->name.len)) {
                return wk_error_set(err, WK_ERR_ARG, k + 1, "duplicate parameter name");
            }
        }
    }
    if (!wk__mt_set_essence(mt, essence, (size_t)(slash - essence), essence_len, NULL)) {
        return wk_error_set(err, WK_ERR_LIMIT, 0,
                            "an essence with capitals longer than 255 bytes");
    }
    for (size_t k = 0; k < n; k++) {
        mt->params[k] = params[k];
        mt->params[k].quoted = 0;
        mt->params[k].escaped = 0;
    }
    mt->nparams = (uint8_t)n;
    return WK_OK;
}

/* Public: the parameter named `name` (ASCII case ignored), or NULL. */
const wk_mt_param *wk_mt_param_find(const wk_media_type *mt, const char *name, size_t len)
{
    if (mt == NULL || name == NULL) {
        return NULL;
    }
    for (unsigned k = 0; k < mt->nparams; k++) {
        if (wk__mt_ieq(mt->params[k].name.ptr, mt->params[k].name.len, name, len)) {
            return &mt->params[k];
        }
    }
    return NULL;
}

/* Public: the charset parameter, or NULL. */
const wk_mt_param *wk_mt_charset(const wk_media_type *mt)
{
    return wk_mt_param_find(mt, "charset", 7);
}

/* Public: the boundary parameter (multipart), or NULL. */
const wk_mt_param *wk_mt_boundary(const wk_media_type *mt)
{
    return wk_mt_param_find(mt, "boundary", 8);
}

/* Plain values compared without copying: walk both escaped forms side by side. */
static bool value_eq(const wk_mt_param *a, const wk_mt_param *b)
{
    size_t i = 0, j = 0, an = a->value.len, bn = b->value.len;
    const char *x = a->value.ptr, *y = b->value.ptr;
    for (;;) {
        if (a->escaped && i < an && x[i] == '\\' && i + 1 < an) {
            i++;
        }
        if (b->escaped && j < bn && y[j] == '\\' && j + 1 < bn) {
            j++;
        }
        if (i == an || j == bn) {
            return i == an && j == bn;
        }
        if (x[i++] != y[j++]) {
            return false;
        }
    }
}

/* Public: same essence and the same parameters in the same order, names compared without
 * case, values by their plain form (so "a" equals a and \a). */
bool wk_mt_equal(const wk_media_type *a, const wk_media_type *b)
{
    if (a == NULL || b == NULL || a->nparams != b->nparams ||
        a->essence_len != b->essence_len ||
        memcmp(wk_mt_essence(a).ptr, wk_mt_essence(b).ptr, a->essence_len) != 0) {
        return false;
    }
    for (unsigned k = 0; k < a->nparams; k++) {
        const wk_mt_param *p = &a->params[k], *q = &b->params[k];
        if (!wk__mt_ieq(p->name.ptr, p->name.len, q->name.ptr, q->name.len) || !value_eq(p, q)) {
            return false;
        }
    }
    return true;
}
