/*
 * wk_mt_accept_parse(): an Accept value (RFC 9110 section 12.5.1) into a wk_mt_accept, a list
 * of media ranges with their weights, all views of the input.
 *
 * Where it sits: the caller's Accept header -> here -> mt_negotiate.c, which scores offers
 * against the ranges. Each range is parsed by the media-type parser itself (wk_mt_parse with
 * WK_MT_STRICT), so a range has exactly the grammar and limits of a media type; this file
 * only finds where each range ends and reads the weight. Finding the end is one pass that
 * knows quoted strings (a ',' inside quotes belongs to a parameter value), so the whole value
 * is read twice at most: linear, whatever the input.
 *
 * Trade-off: the ranges are kept in a fixed array (WK_MT_ACCEPT_MAX_RANGES) and the length of
 * the value is capped (WK_MT_ACCEPT_MAX_LEN), so parsing allocates nothing and a hostile value
 * is refused after at most a few kilobytes; a real browser or API client sends a small
 * fraction of either limit.
 */
#include "mediatype/mt_internal.h"

/* messages name the limits by their numbers: kept in step here */
_Static_assert(WK_MT_ACCEPT_MAX_LEN == 8192, "a message below says 8192 bytes");
_Static_assert(WK_MT_ACCEPT_MAX_RANGES == 64, "a message below says 64 media ranges");
_Static_assert(WK_MT_ACCEPT_MAX_PARAMS == 64, "a message below says 64 parameters");
_Static_assert(WK_MT_ACCEPT_MAX_RANGES <= UINT16_MAX && WK_MT_ACCEPT_MAX_PARAMS <= UINT16_MAX,
               "the counts are uint16_t");

/* An error at `off`; the value is left with no ranges, so a failed parse accepts nothing. */
static wk_status fail(wk_mt_accept *acc, wk_error *err, wk_status code, size_t off,
                      const char *msg)
{
    acc->nranges = 0;
    acc->nparams = 0;
    return wk_error_set(err, code, off, msg);
}

/* One past the last byte of the range starting at s[i]: the first ',' outside a quoted
 * string, or `e`. Inside quotes a backslash takes the next byte with it (a quoted-pair), so
 * an escaped '"' does not end the string. An unterminated string runs to `e`, and the range
 * parser reports it. */
static size_t range_end(const uint8_t *s, size_t i, size_t e)
{
    bool quoted = false;
    for (; i < e; i++) {
        uint8_t c = s[i];
        if (quoted) {
            if (c == '\\') {
                i++;
            } else if (c == '"') {
                quoted = false;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            return i;
        }
    }
    return e;
}

/* The qvalue of p in thousandths, or -1 when it is not RFC 9110's
 * qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ), unquoted. *bad is the offset
 * (within the value) of the first byte that made it so. */
static int qvalue(const wk_mt_param *p, size_t *bad)
{
    const char *v = p->value.ptr;
    size_t n = p->value.len;
    *bad = 0;
    if (p->quoted || n == 0 || (v[0] != '0' && v[0] != '1')) {
        return -1;
    }
    int q = v[0] == '1' ? 1000 : 0;
    if (n == 1) {
        return q;
    }
    if (v[1] != '.' || n > 5) {
        *bad = v[1] != '.' ? 1 : 5;
        return -1;
    }
    int scale = 100;
    for (size_t i = 2; i < n; i++, scale /= 10) {
        int d = v[i] - '0';
        if (d < 0 || d > 9 || (q == 1000 && d != 0)) {
            *bad = i;
            return -1;
        }
        q += d * scale;
    }
    return q;
}

/* Parses the trimmed range s[b..e) and appends it to *acc. */
static wk_status add_range(wk_mt_accept *acc, const uint8_t *s, size_t b, size_t e,
                           unsigned flags, wk_error *err)
{
    if (acc->nranges == WK_MT_ACCEPT_MAX_RANGES) {
        return fail(acc, err, WK_ERR_LIMIT, b, "more than 64 media ranges");
    }
    /* The range's media type is scratch: only views of the input are kept from it. */
    wk_media_type mt;
    wk_error e1 = {0};
    wk_status st = wk_mt_parse(s + b, e - b, WK_MT_STRICT | (flags & WK_MT_UTF8), &mt, &e1);
    if (st != WK_OK) {
        return fail(acc, err, st, b + e1.offset, e1.msg);
    }
    wk_mt_range *r = &acc->ranges[acc->nranges];
    r->type.ptr = (const char *)s + b;
    r->type.len = mt.type_len;
    r->subtype.ptr = r->type.ptr + mt.type_len + 1;
    r->subtype.len = mt.essence_len - mt.type_len - 1;
    if (r->type.len == 1 && r->type.ptr[0] == '*' &&
        (r->subtype.len != 1 || r->subtype.ptr[0] != '*')) {
        return fail(acc, err, WK_ERR_SYNTAX, b + 2, "expected '*' as the subtype of type '*'");
    }
    r->q = WK_MT_Q_ONE;
    r->first_param = acc->nparams;
    r->nparams = 0;
    /* Parameters before the first "q" belong to the range; "q" is the weight; any after it
     * are extensions (RFC 7231's accept-ext), valid syntax that takes no part in matching. */
    for (unsigned k = 0; k < mt.nparams; k++) {
        const wk_mt_param *p = &mt.params[k];
        if (p->name.len == 1 && (p->name.ptr[0] | 0x20) == 'q') {
            size_t bad;
            int q = qvalue(p, &bad);
            if (q < 0) {
                size_t at = (size_t)((const uint8_t *)p->value.ptr - s) - (p->quoted ? 1u : 0u);
                return fail(acc, err, WK_ERR_SYNTAX, at + bad,
                            "expected a qvalue: 0 to 1 with at most three decimals");
            }
            r->q = (uint16_t)q;
            break;
        }
        if (acc->nparams == WK_MT_ACCEPT_MAX_PARAMS) {
            return fail(acc, err, WK_ERR_LIMIT, (size_t)((const uint8_t *)p->name.ptr - s),
                        "more than 64 parameters in the media ranges");
        }
        acc->params[acc->nparams++] = *p;
        r->nparams++;
    }
    acc->nranges++;
    return WK_OK;
}

/* Public (wirekit/mediatype.h): #( media-range [ weight ] ), with RFC 9110's list rule
 * (OWS around commas, empty elements skipped). */
wk_status wk_mt_accept_parse(const void *data, size_t len, unsigned flags, wk_mt_accept *acc,
                             wk_error *err)
{
    if (acc == NULL || (data == NULL && len != 0)) {
        return wk_error_set(err, WK_ERR_ARG, 0, "no input or output given");
    }
    acc->nranges = 0;
    acc->nparams = 0;
    if (len > WK_MT_ACCEPT_MAX_LEN) {
        return wk_error_set(err, WK_ERR_LIMIT, WK_MT_ACCEPT_MAX_LEN,
                            "an Accept value longer than 8192 bytes");
    }
    const uint8_t *s = data;
    size_t i = 0;
    while (i < len) {
        /* Skip OWS and empty elements up to the next range. */
        while (i < len && (s[i] == ',' || wk__mt_is(s[i], WK__MT_OWS))) {
            i++;
        }
        if (i == len) {
            break;
        }
        size_t b = i, e = range_end(s, i, len);
        i = e;
        while (e > b && wk__mt_is(s[e - 1], WK__MT_OWS)) {
            e--;
        }
        wk_status st = add_range(acc, s, b, e, flags, err);
        if (st != WK_OK) {
            return st;
        }
    }
    return WK_OK;
}
