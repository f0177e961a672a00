/*
 * Validate-only scans: wk_mp_check (one value), wk_mp_validate (a whole stream) and the
 * reader's skip. They walk the bytes with the same wk__mp_token as the reader but produce
 * nothing, keeping only a stack of "elements left" per open container to enforce the depth
 * limit (msgpuck's mp_check keeps one counter and so cannot). The stack's first 64 levels
 * are on the C stack; deeper nesting takes a heap stack that grows with the depth reached.
 * Flow: bytes -> wk__mp_token (mp_token.h) -> the scan's count stack -> a status and the
 * value's length (wk_mp_check, wk_mp_validate, wk_mp_reader_skip, the unpacker's errors).
 */
#include "formats/msgpack/mp_token.h"
#include "wirekit/utf8.h"

#define SCAN_INLINE_DEPTH 64

/* First byte -> how to scan the value: below 0x10, a fixed total size in bytes; otherwise a
 * class handled below. Range designators are a GCC/Clang extension, used for legibility. */
enum {
    C_FIXMAP = 0xf0, /* 0x80..0x8f: a map of up to 15 pairs */
    C_FIXARRAY,      /* 0x90..0x9f: an array of up to 15 elements */
    C_FIXSTR,        /* 0xa0..0xbf: a string of up to 31 bytes */
    C_STR8,          /* 0xd9: a string with an 8-bit length */
    C_TOKEN          /* anything else: through wk__mp_token (and its checks) */
};
static const uint8_t scan_class[256] = {
    [0x00 ... 0x7f] = 1,         [0x80 ... 0x8f] = C_FIXMAP, [0x90 ... 0x9f] = C_FIXARRAY,
    [0xa0 ... 0xbf] = C_FIXSTR,  [0xc0] = 1,                 [0xc1] = C_TOKEN,
    [0xc2 ... 0xc3] = 1,         [0xc4 ... 0xc9] = C_TOKEN,  [0xca] = 5,
    [0xcb] = 9,                  [0xcc] = 2,                 [0xcd] = 3,
    [0xce] = 5,                  [0xcf] = 9,                 [0xd0] = 2,
    [0xd1] = 3,                  [0xd2] = 5,                 [0xd3] = 9,
    [0xd4 ... 0xd8] = C_TOKEN,   [0xd9] = C_STR8,            [0xda ... 0xdf] = C_TOKEN,
    [0xe0 ... 0xff] = 1,
};

/* Room for `need` levels: the capacity doubles (the inline slots copied to the heap the first
 * time). False when out of memory (s is then unchanged). */
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

/* Frees the heap slots, if the stack moved there. */
void wk__mp_stack_free(wk__mp_stack *s)
{
    if (s->heap) {
        wk_free(s->alloc, s->slots, (size_t)s->cap * sizeof(uint64_t));
        s->heap = false;
    }
}

/* Walks the one whole value at *pp (not past end), nested inside depth0 open containers for
 * the depth limit: WK_OK with *pp after it, else the status with *err_at at the token that
 * failed and *msg a static message. Nothing is built; strings are checked as UTF-8 only with
 * strict_utf8. */
wk_status wk__mp_scan(const uint8_t **pp, const uint8_t *end, uint32_t depth0,
                      uint32_t max_depth, bool strict_utf8, const wk_allocator *alloc,
                      const uint8_t **err_at, const char **msg)
{
    uint64_t inline_slots[SCAN_INLINE_DEPTH];
    wk__mp_stack s = {inline_slots, SCAN_INLINE_DEPTH, false, alloc};
    uint32_t room = max_depth > depth0 ? max_depth - depth0 : 0; /* containers we may open */
    uint32_t depth = 0;
    uint64_t left = 1; /* values left in the innermost container; at the top, the one value */
    const uint8_t *p = *pp;
    const uint8_t *start;
    wk_status st = WK_OK;
    uint64_t kids;
    wk_event ev;
    for (;;) {
        start = p;
        if (WK__UNLIKELY(p == end)) {
            *msg = WK_MP_MSG_TRUNCATED;
            st = WK_ERR_TRUNCATED;
            goto fail;
        }
        /* Fixed-size values, fixstr/str8 and fixmap/fixarray inline through a class table:
         * they are most of real data. Everything else goes through the token decoder. */
        uint8_t b = *p;
        uint8_t cls = scan_class[b];
        size_t n;
        if (cls < 0x10) {
            if (WK__UNLIKELY((size_t)(end - p) < cls)) {
                *msg = WK_MP_MSG_TRUNCATED;
                st = WK_ERR_TRUNCATED;
                goto fail;
            }
            p += cls;
            goto value_done;
        }
        switch (cls) {
        case C_FIXSTR:
            if (strict_utf8) {
                break;
            }
            n = b & 0x1fu;
            if (WK__UNLIKELY((size_t)(end - p) - 1 < n)) {
                *msg = WK_MP_MSG_STR_LEN;
                st = WK_ERR_TRUNCATED;
                goto fail;
            }
            p += 1 + n;
            goto value_done;
        case C_STR8:
            if (strict_utf8 || (size_t)(end - p) < 2) {
                break;
            }
            n = p[1];
            if (WK__UNLIKELY((size_t)(end - p) - 2 < n)) {
                *msg = WK_MP_MSG_STR_LEN;
                st = WK_ERR_TRUNCATED;
                goto fail;
            }
            p += 2 + n;
            goto value_done;
        case C_FIXMAP:
            n = b & 0x0fu;
            p++;
            if (WK__UNLIKELY((size_t)(end - p) / 2 < n)) {
                *msg = WK_MP_MSG_MAP_COUNT;
                st = WK_ERR_TRUNCATED;
                goto fail;
            }
            kids = 2 * (uint64_t)n;
            goto container;
        case C_FIXARRAY:
            n = b & 0x0fu;
            p++;
            if (WK__UNLIKELY((size_t)(end - p) < n)) {
                *msg = WK_MP_MSG_ARRAY_COUNT;
                st = WK_ERR_TRUNCATED;
                goto fail;
            }
            kids = n;
            goto container;
        default: break;
        }
        st = wk__mp_token(&p, end, &ev, msg);
        if (WK__UNLIKELY(st != WK_OK)) {
            goto fail;
        }
        if (ev.type == WK_EV_ARRAY || ev.type == WK_EV_MAP) {
            kids = ev.type == WK_EV_MAP ? 2 * (uint64_t)ev.v.count : ev.v.count;
            goto container;
        }
        if (ev.type == WK_EV_STR && strict_utf8) {
            size_t bad = 0;
            if (!wk_utf8_valid(ev.v.str.ptr, ev.v.str.len, &bad)) {
                start = (const uint8_t *)ev.v.str.ptr + bad;
                *msg = WK_MP_MSG_UTF8;
                st = WK_ERR_UTF8;
                goto fail;
            }
        }
        goto value_done;
    container:
        if (WK__UNLIKELY(depth >= room)) {
            *msg = WK_MP_MSG_DEPTH;
            st = WK_ERR_DEPTH;
            goto fail;
        }
        if (kids != 0) {
            if (WK__UNLIKELY(depth == s.cap) && !wk__mp_stack_grow(&s, depth + 1)) {
                *msg = WK_MP_MSG_NOMEM;
                st = WK_ERR_NOMEM;
                goto fail;
            }
            s.slots[depth++] = left;
            left = kids;
            continue;
        }
    value_done:
        /* A value is complete: count it, closing every container it completes. */
        while (--left == 0) {
            if (depth == 0) {
                *pp = p;
                wk__mp_stack_free(&s);
                return WK_OK;
            }
            left = s.slots[--depth];
        }
    }
fail:
    *err_at = start;
    wk__mp_stack_free(&s);
    return st;
}

/* Checks that data starts with one whole valid value; *size (may be NULL) is its length.
 * Bytes after it are not looked at. */
WK_API wk_status wk_mp_check(const void *data, size_t len, const wk_read_opts *opts,
                             size_t *size, wk_error *err)
{
    const uint8_t *start = data;
    const uint8_t *p = start;
    const uint8_t *end = len != 0 ? start + len : start;
    const uint8_t *err_at = p;
    const char *msg = NULL;
    uint32_t max_depth = opts != NULL && opts->max_depth != 0 ? opts->max_depth
                                                              : WK_MP_DEFAULT_MAX_DEPTH;
    wk_status st = wk__mp_scan(&p, end, 0, max_depth, opts != NULL && (opts->flags & WK_READ_STRICT_UTF8) != 0,
                               opts != NULL ? opts->alloc : NULL, &err_at, &msg);
    if (st != WK_OK) {
        return wk_error_set(err, st, (size_t)(err_at - start), msg);
    }
    if (size != NULL) {
        *size = (size_t)(p - start);
    }
    return wk_error_set(err, WK_OK, (size_t)(p - start), NULL);
}

/* Checks that data[0..len) is a stream of whole valid values; *count (may be NULL) is how
 * many. The first failure's offset is from data. */
WK_API wk_status wk_mp_validate(const void *data, size_t len, const wk_read_opts *opts,
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
        wk_status st = wk__mp_scan(&p, end, 0, max_depth, opts != NULL && (opts->flags & WK_READ_STRICT_UTF8) != 0,
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
