/*
 * Validate-only scans: wk_mp_check (one value), wk_mp_validate (a whole stream) and the
 * reader's skip. They walk the bytes with the same wk__mp_token as the reader but produce
 * nothing, keeping only a stack of "elements left" per open container to enforce the depth
 * limit (msgpuck's mp_check keeps one counter and so cannot). The stack's first 64 levels
 * are on the C stack; deeper nesting takes a heap stack that grows with the depth reached.
 */
#include "mp_token.h"
#include "wirekit/utf8.h"

#define SCAN_INLINE_DEPTH 64

bool wk__mp_stack_grow(wk__mp_stack *s, uint32_t need)
{
    uint32_t ncap = s->cap;
    while (ncap < need) {
        ncap = ncap > UINT32_MAX / 2 ? UINT32_MAX : ncap * 2;
    }
    uint64_t *n;
    if (!s->heap) {
        n = wk_alloc(s->alloc, (size_t)ncap * sizeof(uint64_t));
        if (n != NULL) {
            memcpy(n, s->slots, (size_t)s->cap * sizeof(uint64_t));
        }
    } else {
        n = wk_realloc(s->alloc, s->slots, (size_t)s->cap * sizeof(uint64_t),
                       (size_t)ncap * sizeof(uint64_t));
    }
    if (n == NULL) {
        return false;
    }
    s->slots = n;
    s->cap = ncap;
    s->heap = true;
    return true;
}

void wk__mp_stack_free(wk__mp_stack *s)
{
    if (s->heap) {
        wk_free(s->alloc, s->slots, (size_t)s->cap * sizeof(uint64_t));
        s->heap = false;
    }
}

wk_status wk__mp_scan(const uint8_t **pp, const uint8_t *end, uint32_t depth0,
                      uint32_t max_depth, bool strict_utf8, const wk_allocator *alloc,
                      const uint8_t **err_at, const char **msg)
{
    uint64_t inline_slots[SCAN_INLINE_DEPTH];
    wk__mp_stack s = {inline_slots, SCAN_INLINE_DEPTH, false, alloc};
    uint32_t room = max_depth > depth0 ? max_depth - depth0 : 0; /* containers we may open */
    uint32_t depth = 0;
    const uint8_t *p = *pp;
    wk_status st = WK_OK;
    wk_event ev;
    for (;;) {
        const uint8_t *start = p;
        if (WK_MP_UNLIKELY(p == end)) {
            *msg = WK_MP_MSG_TRUNCATED;
            st = WK_ERR_TRUNCATED;
            goto fail;
        }
        st = wk__mp_token(&p, end, &ev, msg);
        if (WK_MP_UNLIKELY(st != WK_OK)) {
            goto fail;
        }
        if (ev.type == WK_EV_ARRAY || ev.type == WK_EV_MAP) {
            if (WK_MP_UNLIKELY(depth >= room)) {
                *msg = WK_MP_MSG_DEPTH;
                st = WK_ERR_DEPTH;
                goto fail;
            }
            uint64_t n = ev.type == WK_EV_MAP ? 2 * (uint64_t)ev.v.count : ev.v.count;
            if (n != 0) {
                if (WK_MP_UNLIKELY(depth == s.cap) && !wk__mp_stack_grow(&s, depth + 1)) {
                    *msg = WK_MP_MSG_NOMEM;
                    st = WK_ERR_NOMEM;
                    goto fail;
                }
                s.slots[depth++] = n;
                continue;
            }
        } else if (ev.type == WK_EV_STR && strict_utf8) {
            size_t bad = 0;
            if (!wk_utf8_valid(ev.v.str.ptr, ev.v.str.len, &bad)) {
                start = (const uint8_t *)ev.v.str.ptr + bad;
                *msg = WK_MP_MSG_UTF8;
                st = WK_ERR_UTF8;
                goto fail;
            }
        }
        /* A value is complete: count it against its container, closing finished ones. */
        for (;;) {
            if (depth == 0) {
                *pp = p;
                wk__mp_stack_free(&s);
                return WK_OK;
            }
            if (--s.slots[depth - 1] != 0) {
                break;
            }
            depth--;
        }
        continue;
    fail:
        *err_at = start;
        wk__mp_stack_free(&s);
        return st;
    }
}

WK_API wk_status wk_mp_check(const void *data, size_t len, const wk_mp_reader_opts *opts,
                             size_t *size, wk_error *err)
{
    const uint8_t *start = data;
    const uint8_t *p = start;
    const uint8_t *end = len != 0 ? start + len : start;
    const uint8_t *err_at = p;
    const char *msg = NULL;
    uint32_t max_depth = opts != NULL && opts->max_depth != 0 ? opts->max_depth
                                                              : WK_MP_DEFAULT_MAX_DEPTH;
    wk_status st = wk__mp_scan(&p, end, 0, max_depth, opts != NULL && opts->strict_utf8,
                               opts != NULL ? opts->alloc : NULL, &err_at, &msg);
    if (st != WK_OK) {
        return wk_error_set(err, st, (size_t)(err_at - start), msg);
    }
    if (size != NULL) {
        *size = (size_t)(p - start);
    }
    return wk_error_set(err, WK_OK, (size_t)(p - start), NULL);
}

WK_API wk_status wk_mp_validate(const void *data, size_t len, const wk_mp_reader_opts *opts,
                                size_t *count, wk_error *err)
{
    const uint8_t *start = data;
    const uint8_t *p = start;
    const uint8_t *end = len != 0 ? start + len : start;
    uint32_t max_depth = opts != NULL && opts->max_depth != 0 ? opts->max_depth
                                                              : WK_MP_DEFAULT_MAX_DEPTH;
    size_t n = 0;
    while (p != end) {
        const uint8_t *err_at = p;
        const char *msg = NULL;
        wk_status st = wk__mp_scan(&p, end, 0, max_depth, opts != NULL && opts->strict_utf8,
                                   opts != NULL ? opts->alloc : NULL, &err_at, &msg);
        if (st != WK_OK) {
            return wk_error_set(err, st, (size_t)(err_at - start), msg);
        }
        n++;
    }
    if (count != NULL) {
        *count = n;
    }
    return wk_error_set(err, WK_OK, len, NULL);
}
