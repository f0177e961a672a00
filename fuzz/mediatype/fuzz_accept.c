/*
 * libFuzzer harness for Accept values (wk_mt_accept_parse) and negotiation over them. The
 * first byte picks the mode (bit 0: WK_MT_UTF8); the rest is the Accept value. Checks, for
 * every input:
 * - a refusal has an offset within the value (the length cap: exactly WK_MT_ACCEPT_MAX_LEN)
 *   and leaves no ranges; an accepted value holds at most the caps;
 * - every range and kept parameter is a view inside the value, weights are 0..1000, a "*"
 *   type has a "*" subtype, and each range's text parses alone as a strict media type;
 * - the offer wk_mt_negotiate() chooses has the highest quality of all offers (the server's
 *   set, plus each range's own essence as an offer), and WK_MT_NONE means every quality is 0;
 * - wk_mt_negotiate_header() agrees with parse-then-negotiate.
 * Any disagreement aborts, which libFuzzer reports as a crash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mediatype/mt_internal.h"

static void check_at(bool ok, int line)
{
    if (!ok) {
        fprintf(stderr, "fuzz_accept: check at line %d failed\n", line);
        abort();
    }
}
#define check(ok) check_at((ok), __LINE__)

static bool inside(wk_slice s, const uint8_t *data, size_t size)
{
    return (const uint8_t *)s.ptr >= data && (const uint8_t *)s.ptr + s.len <= data + size;
}

static const char *const server[] = {
    "application/json", "application/vnd.msgpack", "text/html;level=1",
    "text/plain;format=flowed;charset=utf-8", "image/webp",
};
#define NSERVER (sizeof server / sizeof server[0])
#define MAX_OFFERS (NSERVER + 8)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    unsigned flags = data[0] & WK_MT_UTF8 ? WK_MT_UTF8 : 0u;
    data++;
    size--;
    static wk_mt_accept acc;
    wk_error err = {0};
    wk_status st = wk_mt_accept_parse(data, size, flags, &acc, &err);
    static wk_media_type offers[MAX_OFFERS];
    size_t n = 0;
    for (; n < NSERVER; n++) {
        check(wk_mt_parse(server[n], strlen(server[n]), 0, &offers[n], NULL) == WK_OK);
    }
    size_t chosen_h = 0;
    wk_status sh = wk_mt_negotiate_header(data, size, flags, offers, n, &chosen_h, NULL);
    if (st != WK_OK) {
        check(st == WK_ERR_SYNTAX || st == WK_ERR_LIMIT);
        check(err.offset <= size && err.msg != NULL);
        check(size <= WK_MT_ACCEPT_MAX_LEN || err.offset == WK_MT_ACCEPT_MAX_LEN);
        check(acc.nranges == 0 && sh == st && chosen_h == WK_MT_NONE);
        return 0;
    }
    check(acc.nranges <= WK_MT_ACCEPT_MAX_RANGES && acc.nparams <= WK_MT_ACCEPT_MAX_PARAMS);
    for (size_t i = 0; i < acc.nranges; i++) {
        const wk_mt_range *r = &acc.ranges[i];
        check(inside(r->type, data, size) && inside(r->subtype, data, size));
        check(r->type.len > 0 && r->subtype.len > 0 && r->q <= WK_MT_Q_ONE);
        check(r->subtype.ptr == r->type.ptr + r->type.len + 1);
        check(!(r->type.len == 1 && r->type.ptr[0] == '*') ||
              (r->subtype.len == 1 && r->subtype.ptr[0] == '*'));
        check((size_t)r->first_param + r->nparams <= acc.nparams);
        for (unsigned k = 0; k < r->nparams; k++) {
            const wk_mt_param *p = &acc.params[r->first_param + k];
            check(inside(p->name, data, size) && inside(p->value, data, size));
        }
        wk_media_type alone;
        size_t ess = r->type.len + 1 + r->subtype.len;
        check(wk_mt_parse(r->type.ptr, ess, WK_MT_STRICT | flags, &alone, NULL) == WK_OK);
        /* the range's essence as one more offer, so that matches are common */
        if (n < MAX_OFFERS && wk_mt_parse(r->type.ptr, ess, 0, &offers[n], NULL) == WK_OK) {
            n++;
        }
    }
    size_t chosen = wk_mt_negotiate(&acc, offers, n);
    unsigned top = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned q = wk_mt_accept_quality(&acc, &offers[i]);
        check(q <= WK_MT_Q_ONE);
        top = q > top ? q : top;
    }
    if (chosen == WK_MT_NONE) {
        check(top == 0);
    } else {
        check(chosen < n && top > 0 && wk_mt_accept_quality(&acc, &offers[chosen]) == top);
    }
    size_t chosen_server = wk_mt_negotiate(&acc, offers, NSERVER);
    check(sh == (chosen_server == WK_MT_NONE ? WK_ERR_NOT_FOUND : WK_OK));
    check(chosen_h == chosen_server);
    return 0;
}
