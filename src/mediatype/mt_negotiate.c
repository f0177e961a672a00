/*
 * Content negotiation: scores a server's offers against a parsed Accept value (mt_accept.c)
 * and chooses one, by RFC 9110 section 12.5.1.
 *
 * Where it sits: mt_accept.c's wk_mt_accept + the server's wk_media_type offers -> here ->
 * the index of the offer to send (or WK_MT_NONE: 406).
 *
 * The RFC fixes the quality of an offer (the most specific matching range decides, q=0
 * refuses) and leaves the rest open; here the open choices are made as npm `negotiator`
 * makes them, so that a C service answers a request as an Express one would, and a
 * differential test against negotiator (tests/unit/mediatype/negotiate_diff.js) holds the
 * two equal on generated Accept values:
 * - specificity is a number: 4 for the type named, 2 for the subtype named, 1 for range
 *   parameters that all match; among equally specific ranges the highest weight counts, and
 *   at the same weight the later range (that range's position breaks ties between offers);
 * - between offers of equal quality: the more specific match, then the earlier range in the
 *   Accept value, then the server's order;
 * - parameter values compare case-insensitively; a range value "*" matches anything, "" an
 *   absent parameter.
 * Nothing is allocated or copied: every comparison reads the views in place, escapes and all.
 */
#include "mediatype/mt_internal.h"

/* How one range matched one offer: its specificity (-1: no match), weight and position. */
typedef struct match {
    int spec;
    unsigned q;
    size_t pos;
} match;

/* The next byte of a parameter's plain value at *i (a quoted-pair gives the escaped byte),
 * or -1 at the end; the rule of wk_mt_param_value(). */
static int plain_next(const wk_mt_param *p, size_t *i)
{
    if (p == NULL || *i >= p->value.len) {
        return -1;
    }
    const char *s = p->value.ptr;
    if (p->escaped && s[*i] == '\\' && *i + 1 < p->value.len) {
        ++*i;
    }
    return (uint8_t)s[(*i)++];
}

static int fold(int c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* The plain values of a and b are equal ignoring ASCII case; NULL stands for "". */
static bool value_ieq(const wk_mt_param *a, const wk_mt_param *b)
{
    size_t i = 0, j = 0;
    for (;;) {
        int x = plain_next(a, &i), y = plain_next(b, &j);
        if (fold(x) != fold(y)) {
            return false;
        }
        if (x < 0) {
            return true;
        }
    }
}

/* Range parameter p matches the offer: its plain value is "*", or equals (any case) the
 * offer's value of that name, "" standing for an absent one. */
static bool param_matches(const wk_mt_param *p, const wk_media_type *offer)
{
    size_t i = 0;
    if (plain_next(p, &i) == '*' && plain_next(p, &i) < 0) {
        return true;
    }
    return value_ieq(p, wk_mt_param_find(offer, p->name.ptr, p->name.len));
}

/* The specificity with which range r matches the offer (type, subtype, subtype s), or -1.
 * Names equal first, then the wildcard: an offer may itself be written with a "*". */
static int specificity(const wk_mt_accept *acc, const wk_mt_range *r, wk_slice type,
                       wk_slice sub, const wk_media_type *offer)
{
    int s = 0;
    if (wk__mt_ieq(r->type.ptr, r->type.len, type.ptr, type.len)) {
        s |= 4;
    } else if (r->type.len != 1 || r->type.ptr[0] != '*') {
        return -1;
    }
    if (wk__mt_ieq(r->subtype.ptr, r->subtype.len, sub.ptr, sub.len)) {
        s |= 2;
    } else if (r->subtype.len != 1 || r->subtype.ptr[0] != '*') {
        return -1;
    }
    if (r->nparams != 0) {
        for (unsigned k = 0; k < r->nparams; k++) {
            if (!param_matches(&acc->params[r->first_param + k], offer)) {
                return -1;
            }
        }
        s |= 1;
    }
    return s;
}

/* The deciding match of the offer: most specific, then highest weight, then latest range. */
static match best_match(const wk_mt_accept *acc, const wk_media_type *offer)
{
    match best = {-1, 0, 0};
    wk_slice type = wk_mt_type(offer), sub = wk_mt_subtype(offer);
    if (type.len == 0) {
        return best; /* an empty wk_media_type matches nothing */
    }
    for (size_t i = 0; i < acc->nranges; i++) {
        const wk_mt_range *r = &acc->ranges[i];
        int s = specificity(acc, r, type, sub, offer);
        if (s < 0) {
            continue;
        }
        if (s > best.spec || (s == best.spec && r->q >= best.q)) {
            best.spec = s;
            best.q = r->q;
            best.pos = i;
        }
    }
    if (best.spec < 0) {
        best.q = 0;
    }
    return best;
}

/* Public (wirekit/mediatype.h). */
unsigned wk_mt_accept_quality(const wk_mt_accept *acc, const wk_media_type *offer)
{
    if (acc == NULL || offer == NULL) {
        return 0;
    }
    return best_match(acc, offer).q;
}

/* Public: the offer that sorts first by weight (high), specificity (high), range position
 * (early), offer position (early); a strict comparison keeps the earlier offer on a tie. */
size_t wk_mt_negotiate(const wk_mt_accept *acc, const wk_media_type *offers, size_t n)
{
    if (acc == NULL || offers == NULL) {
        return WK_MT_NONE;
    }
    size_t chosen = WK_MT_NONE;
    match top = {-1, 0, 0};
    for (size_t i = 0; i < n; i++) {
        match m = best_match(acc, &offers[i]);
        if (m.q == 0) {
            continue;
        }
        if (chosen == WK_MT_NONE || m.q > top.q || (m.q == top.q && m.spec > top.spec) ||
            (m.q == top.q && m.spec == top.spec && m.pos < top.pos)) {
            chosen = i;
            top = m;
        }
    }
    return chosen;
}

/* Public: no header accepts anything (RFC 9110: "*" for both), so the first offer. */
wk_status wk_mt_negotiate_header(const void *accept, size_t len, unsigned flags,
                                 const wk_media_type *offers, size_t n, size_t *chosen,
                                 wk_error *err)
{
    if (chosen == NULL || offers == NULL || n == 0) {
        if (chosen != NULL) {
            *chosen = WK_MT_NONE;
        }
        return wk_error_set(err, WK_ERR_ARG, 0, "no offers or no output given");
    }
    *chosen = WK_MT_NONE;
    if (accept == NULL) {
        *chosen = 0;
        return WK_OK;
    }
    wk_mt_accept acc;
    wk_status st = wk_mt_accept_parse(accept, len, flags, &acc, err);
    if (st != WK_OK) {
        return st;
    }
    *chosen = wk_mt_negotiate(&acc, offers, n);
    if (*chosen == WK_MT_NONE) {
        return wk_error_set(err, WK_ERR_NOT_FOUND, 0, "no offer is acceptable");
    }
    return WK_OK;
}
