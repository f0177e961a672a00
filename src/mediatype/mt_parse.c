/*
 * The hand-tuned media-type scanner: the WHATWG "parse a MIME type" algorithm and the
 * RFC 9110 grammar, written directly over bytes with one table lookup per byte. It takes every
 * input; wk_mt_parse() (mt_fast.c) tries a vector fast path for the common shape first.
 *
 * Where it sits: wk_mt_parse (mt_fast.c) -> the vector fast path, or wk__mt_parse_scan here
 * -> a wk_media_type whose essence and parameters are views into the input (or into the
 * value's own lower-case copy, or the known-types table, mt_known.c) -> mt_serialize.c renders
 * it; mt_chars.c holds the byte classes both use.
 *
 * It is held equal to the text-codec grammar (mt_grammar.c) by a differential test over every
 * vector and by the fuzzer. While scanning it also notes whether the input already is its own
 * serialization (lowercase, no dropped parameters, ";" or "; " separators, values quoted
 * exactly when needed), so that rendering such a value is a view of the input.
 */
#include <string.h>

#include "mediatype/mt_internal.h"

/* messages name the limits by their numbers: kept in step here */
_Static_assert(WK_MT_MAX_PARAMS == 16, "a message below says 16 parameters");
_Static_assert(WK_MT_ESSENCE_MAX == 255, "a message below says 255 bytes");

/* The message of an essence that must be lower-cased into the value but does not fit. */
#define LONG_ESSENCE "an essence with capitals longer than 255 bytes"

/* A syntax error at off: the value is cleared, so a failed parse never leaves a half value. */
static wk_status syntax(wk_media_type *mt, wk_error *err, size_t off, const char *msg)
{
    wk__mt_clear(mt);
    return wk_error_set(err, WK_ERR_SYNTAX, off, msg);
}

/* Contract in mt_internal.h: the empty value (the parameter array is left as it is). */
void wk__mt_clear(wk_media_type *mt)
{
    mt->essence_ptr = NULL;
    mt->essence_len = 0;
    mt->type_len = 0;
    mt->nparams = 0;
    mt->id = 0;
    mt->canonical = 0;
    mt->render_styles = 0;
    mt->input.ptr = NULL;
    mt->input.len = 0;
}

/* Contract in mt_internal.h: the essence lower-cased into mt->lower; essence_ptr is reset so
 * that wk_mt_essence() reads the copy. */
void wk__mt_lower_copy(wk_media_type *mt, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        mt->lower[i] = (char)(wk__mt_is((uint8_t)p[i], WK__MT_UPPER) ? p[i] + 32 : p[i]);
    }
    mt->lower[n] = '\0';
    mt->essence_ptr = NULL;
}

/* Contract in mt_internal.h: a known type points at its table entry (lower case already); an
 * unknown one at the input when it has no capitals, else at a lower-case copy; false (value
 * cleared) when that copy would not fit WK_MT_ESSENCE_MAX. *lowercase says whether the input
 * was lower case already (for the canonical flags). */
bool wk__mt_set_essence(wk_media_type *mt, const char *p, size_t type_len, size_t n,
                        bool *lowercase)
{
    mt->essence_len = n;
    mt->type_len = type_len;
    bool exact = false;
    mt->id = wk__mt_known_lookup(p, n, &exact);
    if (mt->id != 0) {
        mt->essence_ptr = wk__mt_known[mt->id].essence;
    } else {
        exact = true;
        for (size_t i = 0; i < n && exact; i++) {
            exact = !wk__mt_is((uint8_t)p[i], WK__MT_UPPER);
        }
        if (exact) {
            mt->essence_ptr = p;
        } else if (n <= WK_MT_ESSENCE_MAX) {
            wk__mt_lower_copy(mt, p, n);
        } else {
            wk__mt_clear(mt);
            return false;
        }
    }
    if (lowercase != NULL) {
        *lowercase = exact;
    }
    return true;
}

/* Adds a parameter unless its name is already present (the first one wins). Returns false
 * when the name was a duplicate. */
static bool add_param(wk_media_type *mt, const char *name, size_t nlen, const char *val,
                      size_t vlen, bool quoted, bool escaped)
{
    for (unsigned k = 0; k < mt->nparams; k++) {
        if (wk__mt_ieq(mt->params[k].name.ptr, mt->params[k].name.len, name, nlen)) {
            return false;
        }
    }
    wk_mt_param *p = &mt->params[mt->nparams++];
    p->name.ptr = name;
    p->name.len = nlen;
    p->value.ptr = val;
    p->value.len = vlen;
    p->quoted = quoted;
    p->escaped = escaped;
    return true;
}

/* WHATWG "parse a MIME type": leading and trailing HTTP whitespace trimmed, type and subtype
 * of token bytes, then parameters; invalid parameters are dropped rather than refused, the
 * first of duplicate names wins. Notes the canonical flags as it goes. */
static wk_status parse_whatwg(const uint8_t *s, size_t len, unsigned flags, wk_media_type *mt,
                              wk_error *err)
{
    bool utf8 = (flags & WK_MT_UTF8) != 0;
    /* Step 1 of the algorithm: strip leading and trailing HTTP whitespace. */
    size_t b = 0, e = len;
    while (b < e && wk__mt_is(s[b], WK__MT_WS)) {
        b++;
    }
    while (e > b && wk__mt_is(s[e - 1], WK__MT_WS)) {
        e--;
    }
    /* Whether the input is its own serialization, in the ";" style, the "; " style or
     * neither; every irregularity below clears what it rules out. */
    unsigned canon = WK__MT_CANON_SEMI | WK__MT_CANON_SPACE;
    size_t i = b;
    while (i < e && wk__mt_is(s[i], WK__MT_TOKEN)) {
        i++;
    }
    if (i == b) {
        return syntax(mt, err, i, "expected a type (token characters)");
    }
    if (i == e || s[i] != '/') {
        return syntax(mt, err, i, i == e ? "expected '/'" : "expected '/' after the type");
    }
    size_t slash = i++;
    size_t sub = i;
    while (i < e && wk__mt_is(s[i], WK__MT_TOKEN)) {
        i++;
    }
    if (i == sub) {
        return syntax(mt, err, i, "expected a subtype (token characters)");
    }
    size_t sub_end = i;
    while (i < e && wk__mt_is(s[i], WK__MT_WS)) {
        i++;
    }
    if (i < e && s[i] != ';') {
        return syntax(mt, err, i, "expected ';' after the subtype");
    }
    if (i != sub_end) {
        canon = 0; /* whitespace after the subtype is dropped by serialization */
    }
    const char *ess = (const char *)s + b;
    mt->nparams = 0;
    mt->render_styles = 0;
    mt->input.ptr = (const char *)s + b;
    mt->input.len = e - b;

    /* Parameters: each is collected first and validated after, and an invalid one is skipped
     * to the next ';' rather than failing the whole value. */
    while (i < e) {
        i++; /* the ';' */
        size_t ws = i;
        while (i < e && wk__mt_is(s[i], WK__MT_WS)) {
            i++;
        }
        if (i - ws != 0) {
            canon &= (i - ws == 1 && s[ws] == ' ') ? WK__MT_CANON_SPACE : 0u;
        } else {
            canon &= WK__MT_CANON_SEMI;
        }
        /* The name runs to ';' or '='; the common all-token name is one tight loop. */
        size_t ns = i;
        uint8_t nseen = 0;
        while (i < e && wk__mt_is(s[i], WK__MT_TOKEN)) {
            nseen |= wk__mt_class[s[i]];
            i++;
        }
        bool name_ok = i > ns;
        if (i < e && s[i] != ';' && s[i] != '=') {
            name_ok = false;
            while (i < e && s[i] != ';' && s[i] != '=') {
                i++;
            }
        }
        if (nseen & WK__MT_UPPER) {
            canon = 0;
        }
        size_t ne = i;
        if (i >= e || s[i] == ';') {
            canon = 0; /* a name without '=': dropped */
            continue;
        }
        i++; /* the '=' */
        if (i >= e) {
            canon = 0;
            break;
        }
        const char *val;
        size_t vlen;
        bool quoted = s[i] == '"', escaped = false, ok;
        if (quoted) {
            size_t vs = ++i;
            bool closed = false, odd_escape = false;
            while (i < e) {
                uint8_t c = s[i];
                if (c == '"') {
                    closed = true;
                    break;
                }
                if (c == '\\') {
                    escaped = true;
                    if (i + 1 >= e) {
                        i++; /* a lone backslash at the end is kept */
                        odd_escape = true;
                        break;
                    }
                    odd_escape = odd_escape || (s[i + 1] != '"' && s[i + 1] != '\\');
                    i += 2;
                    continue;
                }
                i++;
            }
            val = (const char *)s + vs;
            vlen = i - vs;
            if (closed) {
                i++;
            }
            /* The plain value (escapes resolved) must hold only quoted-string code points.
             * Backslash is one and an escape takes the whole next code point, so checking the
             * raw bytes is the same thing, in UTF-8 mode too: a raw sequence that is not UTF-8
             * (a lead byte followed by the escaping backslash, say) is already U+FFFD. */
            ok = wk__mt_value_ok(val, vlen, utf8);
            /* Canonical only when serialization would quote it the same way. */
            bool needs_quotes = vlen == 0 || !wk__mt_token(val, vlen) || escaped;
            if (!closed || odd_escape || !needs_quotes) {
                canon = 0;
            }
            size_t junk = i;
            while (i < e && s[i] != ';') {
                i++;
            }
            if (i != junk) {
                canon = 0;
            }
        } else {
            /* The common value is all token bytes up to ';' or the end: one tight loop. */
            size_t vs = i;
            while (i < e && wk__mt_is(s[i], WK__MT_TOKEN)) {
                i++;
            }
            val = (const char *)s + vs;
            if (i == e || s[i] == ';') {
                vlen = i - vs;
                ok = true;
                if (vlen == 0) {
                    canon = 0;
                    continue;
                }
            } else {
                size_t last = i;       /* one past the last non-whitespace byte */
                size_t bad = SIZE_MAX; /* first byte that is not a quoted-string code point */
                while (i < e && s[i] != ';') {
                    uint8_t c = wk__mt_class[s[i]];
                    if (!(c & WK__MT_WS)) {
                        last = i + 1;
                    }
                    if (!(c & WK__MT_QSC) && bad == SIZE_MAX) {
                        bad = i;
                    }
                    i++;
                }
                vlen = last - vs;
                if (vlen == 0) {
                    canon = 0;
                    continue;
                }
                ok = bad >= last && (!utf8 || wk__mt_value_ok(val, vlen, true));
                canon = 0; /* not all token bytes: serialization quotes it */
            }
        }
        if (!ok || !name_ok) {
            canon = 0;
            continue;
        }
        /* A full array is an error only for a new name: a duplicate would be dropped anyway. */
        if (mt->nparams == WK_MT_MAX_PARAMS) {
            for (unsigned k = 0; k < mt->nparams; k++) {
                if (wk__mt_ieq(mt->params[k].name.ptr, mt->params[k].name.len, (const char *)s + ns,
                               ne - ns)) {
                    goto duplicate;
                }
            }
            wk__mt_clear(mt);
            return wk_error_set(err, WK_ERR_LIMIT, ns, "more than 16 parameters");
        }
        if (!add_param(mt, (const char *)s + ns, ne - ns, val, vlen, quoted, escaped)) {
        duplicate:
            canon = 0;
        }
    }
    bool lowercase = true;
    if (!wk__mt_set_essence(mt, ess, slash - b, sub_end - b, &lowercase)) {
        return wk_error_set(err, WK_ERR_LIMIT, b + WK_MT_ESSENCE_MAX, LONG_ESSENCE);
    }
    mt->canonical = (uint8_t)(lowercase ? canon : 0);
    return WK_OK;
}

/* RFC 9110: media-type = type "/" subtype *( OWS ";" OWS [ parameter ] ). */
static wk_status parse_strict(const uint8_t *s, size_t e, unsigned flags, wk_media_type *mt,
                              wk_error *err)
{
    bool utf8 = (flags & WK_MT_UTF8) != 0;
    unsigned canon = WK__MT_CANON_SEMI | WK__MT_CANON_SPACE;
    uint8_t seen = 0;
    size_t i = 0;
    while (i < e && wk__mt_is(s[i], WK__MT_TOKEN)) {
        seen |= wk__mt_class[s[i]];
        i++;
    }
    if (i == 0) {
        return syntax(mt, err, i, "expected a type (token characters)");
    }
    if (i == e || s[i] != '/') {
        return syntax(mt, err, i, "expected '/' after the type");
    }
    size_t slash = i++;
    size_t sub = i;
    while (i < e && wk__mt_is(s[i], WK__MT_TOKEN)) {
        seen |= wk__mt_class[s[i]];
        i++;
    }
    if (i == sub) {
        return syntax(mt, err, i, "expected a subtype (token characters)");
    }
    if (seen & WK__MT_UPPER) {
        canon = 0;
    }
    size_t ess_len = i;
    mt->nparams = 0;
    mt->render_styles = 0;
    mt->input.ptr = (const char *)s;
    mt->input.len = e;
    while (i < e) {
        size_t ows = i;
        while (i < e && wk__mt_is(s[i], WK__MT_OWS)) {
            i++;
        }
        if (i == e || s[i] != ';') {
            return syntax(mt, err, i, "expected ';' before a parameter");
        }
        if (i != ows) {
            canon = 0;
        }
        i++;
        ows = i;
        while (i < e && wk__mt_is(s[i], WK__MT_OWS)) {
            i++;
        }
        if (i - ows == 0) {
            canon &= WK__MT_CANON_SEMI;
        } else {
            canon &= (i - ows == 1 && s[ows] == ' ') ? WK__MT_CANON_SPACE : 0u;
        }
        if (i == e || !wk__mt_is(s[i], WK__MT_TOKEN)) {
            canon = 0; /* an empty parameter: allowed, but not canonical */
            continue;
        }
        size_t ns = i;
        uint8_t nseen = 0;
        while (i < e && wk__mt_is(s[i], WK__MT_TOKEN)) {
            nseen |= wk__mt_class[s[i]];
            i++;
        }
        size_t ne = i;
        if (nseen & WK__MT_UPPER) {
            canon = 0;
        }
        if (i == e || s[i] != '=') {
            return syntax(mt, err, i, "expected '=' after the parameter name");
        }
        i++;
        const char *val = (const char *)s + i;
        size_t vlen;
        bool quoted = false, escaped = false;
        if (i < e && s[i] == '"') {
            quoted = true;
            size_t vs = ++i;
            bool odd_escape = false;
            for (;;) {
                if (i == e) {
                    return syntax(mt, err, i, "expected '\"' to end the quoted string");
                }
                uint8_t c = s[i];
                if (c == '"') {
                    break;
                }
                if (c == '\\') {
                    /* quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text ) */
                    if (i + 1 == e || !wk__mt_is(s[i + 1], WK__MT_QSC)) {
                        return syntax(mt, err, i + 1, "expected a character after '\\'");
                    }
                    escaped = true;
                    odd_escape = odd_escape || (s[i + 1] != '"' && s[i + 1] != '\\');
                    i += 2;
                    continue;
                }
                if (!wk__mt_is(c, WK__MT_QSC)) {
                    return syntax(mt, err, i, "expected a quoted-string character");
                }
                i++;
            }
            val = (const char *)s + vs;
            vlen = i - vs;
            i++;
            /* Raw bytes suffice, as in parse_whatwg. */
            if (utf8 && !wk__mt_value_ok(val, vlen, true)) {
                return syntax(mt, err, vs, "expected UTF-8 for U+0080..U+00FF only");
            }
            if (odd_escape || (vlen != 0 && !escaped && wk__mt_token(val, vlen))) {
                canon = 0;
            }
        } else {
            size_t vs = i;
            while (i < e && wk__mt_is(s[i], WK__MT_TOKEN)) {
                i++;
            }
            vlen = i - vs;
            if (vlen == 0) {
                return syntax(mt, err, i, "expected a token or a quoted string");
            }
        }
        for (unsigned k = 0; k < mt->nparams; k++) {
            if (wk__mt_ieq(mt->params[k].name.ptr, mt->params[k].name.len, (const char *)s + ns,
                           ne - ns)) {
                return syntax(mt, err, ns, "duplicate parameter name");
            }
        }
        if (mt->nparams == WK_MT_MAX_PARAMS) {
            wk__mt_clear(mt);
            return wk_error_set(err, WK_ERR_LIMIT, ns, "more than 16 parameters");
        }
        add_param(mt, (const char *)s + ns, ne - ns, val, vlen, quoted, escaped);
    }
    mt->canonical = (uint8_t)canon;
    if (!wk__mt_set_essence(mt, (const char *)s, slash, ess_len, NULL)) {
        return wk_error_set(err, WK_ERR_LIMIT, WK_MT_ESSENCE_MAX, LONG_ESSENCE);
    }
    return WK_OK;
}

/* Contract in mt_internal.h: WK_MT_STRICT selects RFC 9110's grammar, else WHATWG's. */
wk_status wk__mt_parse_scan(const void *data, size_t len, unsigned flags, wk_media_type *mt,
                            wk_error *err)
{
    if (mt == NULL || (data == NULL && len != 0)) {
        return wk_error_set(err, WK_ERR_ARG, 0, "no input or output given");
    }
    const uint8_t *s = data != NULL ? data : (const uint8_t *)"";
    mt->id = 0;
    mt->canonical = 0;
    mt->render_styles = 0;
    if (flags & WK_MT_STRICT) {
        return parse_strict(s, len, flags, mt, err);
    }
    return parse_whatwg(s, len, flags, mt, err);
}
