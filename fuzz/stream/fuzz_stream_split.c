/*
 * Fuzz harness for the incremental unpackers. The input is: one option byte (bit 0: JSON
 * instead of MessagePack; bit 1: JSON Lines; bit 2: strict UTF-8 / NaN-Infinity; bit 3: a
 * depth limit of 3; bit 4: tree mode instead of raw spans; bit 5: a 64-byte buffer cap; bit
 * 6, JSON: events, each value's gathered over the calls it takes, compared re-encoded
 * as MessagePack with the buffer reader's events for that value; MessagePack trees:
 * wk_mp_unpacker_next_value_in_place, the arena reset only after a value; bit 7, with bit 4
 * and not bit 6: calls alternate between the tree take and the raw take, which the unpackers
 * allow to mix, so a value cut in one is finished by the other), a count K (at most 16) and K chunk sizes (0 stands for 1), then the stream itself, which is
 * fed in chunks of those sizes in turn. Whatever the split, the unpacker must give exactly
 * the values, the final status, the message and the error offset of the buffer readers on
 * the whole stream (wk_mp_check value by value; wk_json_reader), except that a value larger
 * than the cap that spans chunks may end the stream with WK_ERR_LIMIT instead. Each chunk is
 * a fresh heap copy freed as soon as the unpacker asks for the next, so a pointer kept into
 * an old chunk is a use-after-free that ASan reports.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "split.h"
#include "wirekit/wirekit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_VALUES 4096

typedef struct ref {
    size_t off[MAX_VALUES], len[MAX_VALUES];
    size_t n;
    wk_status final;
    size_t err_off;
    const char *msg;
    bool overflow;
} ref;

static bool ws(uint8_t c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static void ref_mp(const uint8_t *d, size_t len, const wk_read_opts *o, ref *r)
{
    size_t off = 0;
    r->final = WK_ERR_EOF;
    while (off < len) {
        size_t sz = 0;
        wk_error e;
        wk_status st = wk_mp_check(d + off, len - off, o, &sz, &e);
        if (st != WK_OK) {
            r->final = st;
            r->err_off = off + e.offset;
            r->msg = e.msg;
            return;
        }
        if (r->n == MAX_VALUES) {
            r->overflow = true;
            return;
        }
        r->off[r->n] = off;
        r->len[r->n++] = sz;
        off += sz;
    }
}

static void ref_json(const uint8_t *d, size_t len, const wk_read_opts *o, ref *r)
{
    wk_json_reader rd;
    wk_json_reader_init(&rd, d, len, o, NULL);
    uint32_t depth = 0;
    size_t start = 0;
    for (;;) {
        if (depth == 0) {
            start = wk_json_reader_offset(&rd);
            while (start < len && ws(d[start])) {
                start++;
            }
        }
        wk_event ev;
        wk_status st = wk_json_reader_next(&rd, &ev);
        if (st != WK_OK) {
            r->final = st;
            if (st != WK_ERR_EOF) {
                wk_error e;
                wk_json_reader_error(&rd, &e);
                r->err_off = e.offset;
                r->msg = e.msg;
            }
            break;
        }
        depth += ev.type == WK_EV_ARRAY || ev.type == WK_EV_MAP;
        depth -= ev.type == WK_EV_END;
        if (depth == 0) {
            if (r->n == MAX_VALUES) {
                r->overflow = true;
                break;
            }
            r->off[r->n] = start;
            r->len[r->n++] = wk_json_reader_offset(&rd) - start;
        }
    }
    wk_json_reader_free(&rd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) {
        return 0;
    }
    uint8_t opt = data[0];
    size_t k = data[1] % 17;
    if (size < 2 + k) {
        return 0;
    }
    const uint8_t *sizes = data + 2;
    const uint8_t *in = data + 2 + k;
    size_t len = size - 2 - k;
    bool json = opt & 1;
    bool tree = (opt & 16) != 0;
    bool events = json && (opt & 64) != 0;
    bool in_place = !json && tree && (opt & 64) != 0;
    bool mix = tree && (opt & 64) == 0 && (opt & 128) != 0;
    size_t calls = 0;
    size_t cap = (opt & 32) ? 64 : 0;
    wk_read_opts o = {0};
    if (json) {
        o.flags = ((opt & 2) ? WK_JSON_READ_MULTI : 0u) | ((opt & 4) ? WK_JSON_READ_NAN_INF : 0u);
    } else {
        o.flags = (opt & 4) ? WK_READ_STRICT_UTF8 : 0u;
    }
    o.max_depth = (opt & 8) ? 3u : 0u;

    static ref r;
    memset(&r, 0, sizeof r);
    if (json) {
        ref_json(in, len, &o, &r);
    } else {
        ref_mp(in, len, &o, &r);
    }
    if (r.overflow) {
        return 0;
    }

    wk_mp_unpacker mu;
    wk_json_unpacker ju;
    if (json) {
        wk_json_unpacker_init(&ju, &o, cap);
    } else {
        wk_mp_unpacker_init(&mu, &o, cap);
    }
    wk_arena arena, ref_arena;
    wk_arena_init(&arena, NULL, 0);
    wk_arena_init(&ref_arena, NULL, 0);
    split_events ev;
    split_events_init(&ev);
    size_t pos = 0, next_size = 0, got = 0;
    uint8_t *copy = NULL;
    wk_status st;
    bool finished = false;
    for (;;) {
        free(copy);
        copy = NULL;
        if (pos == len) {
            finished = true;
            if (json) {
                wk_json_unpacker_finish(&ju);
            } else {
                wk_mp_unpacker_finish(&mu);
            }
        } else {
            size_t c = k == 0 ? len - pos : sizes[next_size++ % k];
            c = c == 0 ? 1 : c;
            c = c > len - pos ? len - pos : c;
            copy = malloc(c);
            memcpy(copy, in + pos, c);
            pos += c;
            st = json ? wk_json_unpacker_feed(&ju, copy, c) : wk_mp_unpacker_feed(&mu, copy, c);
            if (st != WK_OK) {
                break;
            }
        }
        for (;;) {
            const uint8_t *vd = NULL;
            size_t vl = 0;
            uint64_t voff = 0;
            wk_value *v = NULL;
            bool raw_turn = mix && (calls++ & 1) != 0;
            if (!in_place) {
                wk_arena_reset(&arena);
            }
            if (events) {
                st = split_events_next(&ev, &ju);
            } else if (in_place) {
                st = wk_mp_unpacker_next_value_in_place(&mu, &arena, &v);
            } else if (tree && !raw_turn) {
                st = json ? wk_json_unpacker_next_value(&ju, &arena, &v)
                          : wk_mp_unpacker_next_value(&mu, &arena, &v);
            } else {
                st = json ? wk_json_unpacker_next(&ju, &vd, &vl, &voff)
                          : wk_mp_unpacker_next(&mu, &vd, &vl, &voff);
            }
            if (st != WK_OK) {
                break;
            }
            if (got == r.n) {
                fprintf(stderr, "value %zu beyond the reference\n", got);
                abort();
            }
            if (events) {
                if (!split_events_match(&ev, in + r.off[got], r.len[got], &o)) {
                    fprintf(stderr, "events of value %zu differ\n", got);
                    abort();
                }
            } else if (tree && !raw_turn) {
                wk_value *want = NULL;
                wk_read_opts o1 = o;
                o1.flags &= ~WK_JSON_READ_MULTI;
                wk_arena_reset(&ref_arena);
                wk_status rs = json ? wk_json_decode_value(in + r.off[got], r.len[got], &o1,
                                                           &ref_arena, &want, NULL, NULL)
                                    : wk_mp_decode_value(in + r.off[got], r.len[got], &o1,
                                                         &ref_arena, &want, NULL, NULL);
                if (rs != WK_OK || !wk_value_equal(v, want, NULL)) {
                    fprintf(stderr, "tree %zu differs\n", got);
                    abort();
                }
            } else if (voff != r.off[got] || vl != r.len[got] ||
                       memcmp(vd, in + r.off[got], vl) != 0) {
                fprintf(stderr, "value %zu at %llu+%zu, want %zu+%zu\n", got,
                        (unsigned long long)voff, vl, r.off[got], r.len[got]);
                abort();
            }
            got++;
            if (in_place) {
                wk_arena_reset(&arena); /* the arena is the caller's again */
            }
        }
        if (st != WK_ERR_AGAIN || finished) {
            break;
        }
    }
    free(copy);
    wk_error e;
    if (json) {
        wk_json_unpacker_error(&ju, &e, NULL, NULL);
    } else {
        wk_mp_unpacker_error(&mu, &e);
    }
    if (st == WK_ERR_LIMIT && cap != 0 && got <= r.n) {
        /* a value that spans chunks outgrew the small cap: allowed, values before it agree */
    } else if (got != r.n || st != r.final) {
        fprintf(stderr, "%zu values then status %d, want %zu then %d\n", got, (int)st, r.n,
                (int)r.final);
        abort();
    } else if (st != WK_ERR_EOF && (e.offset != r.err_off || strcmp(e.msg, r.msg) != 0)) {
        fprintf(stderr, "error at %zu '%s', want at %zu '%s'\n", e.offset, e.msg, r.err_off,
                r.msg);
        abort();
    }
    if (json) {
        wk_json_unpacker_free(&ju);
    } else {
        wk_mp_unpacker_free(&mu);
    }
    wk_arena_free(&arena);
    wk_arena_free(&ref_arena);
    split_events_free(&ev);
    return 0;
}
