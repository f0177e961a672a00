/*
 * Differential tests of the incremental JSON unpacker against the buffer reader: random JSON
 * texts (one document, JSON Lines, concatenated values; escapes, surrogate pairs, multi-byte
 * UTF-8, numbers with fractions and exponents, literals; some corrupted or cut short) split
 * into random chunks, 1-byte chunks and one chunk must give exactly the values (text,
 * offsets, trees, events), the final status, message, offset and line:column that
 * wk_json_reader gives on the whole buffer. The take that gives a value longer than a bound
 * as its bytes instead of a tree (the converter's) is checked against next and next_value.
 */
#include <stdlib.h>

#include "split.h"
#include "wirekit/wirekit.h"
#include "wk_test.h"

/* ---- random texts ---------------------------------------------------------------------- */

static void put(wk_buf *b, const char *s)
{
    size_t n = strlen(s);
    if (n != 0 && wk_buf_grow(b, n) == WK_OK) {
        memcpy(b->data + b->len, s, n);
        b->len += n;
    }
}

static void ws(wk_buf *b, split_rng *r)
{
    static const char *const w[] = {"", "", "", " ", "\n", "\r\n", "\t", "  \n "};
    put(b, w[split_below(r, 8)]);
}

static void gen_string(wk_buf *b, split_rng *r)
{
    static const char *const parts[] = {"a",      "bc",     "\\n",        "\\\"",
                                        "\\\\",   "\\u00e9", "\\ud83d\\ude00", "\xc3\xa9",
                                        "\xf0\x9f\x98\x80", "\xe2\x82\xac", "x y", "\\/",
                                        "0123456789abcdef0123", "\\\\\\\\",
                                        "\\\\\\\"", "[{]}", "\\\\\\\\\\\"[",
                                        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde"};
    put(b, "\"");
    size_t n = split_below(r, split_below(r, 6) == 0 ? 60 : 6);
    for (size_t i = 0; i < n; i++) {
        put(b, parts[split_below(r, 18)]);
    }
    put(b, "\"");
}

static void gen_value(wk_buf *b, split_rng *r, int depth)
{
    static const char *const nums[] = {"0",    "-0",     "1",       "-12",  "123456789012",
                                       "1.5",  "-0.25e3", "6.02E+23", "1e-7", "18446744073709551615",
                                       "-9223372036854775808", "3.141592653589793", "12345678901234567890123",
                                       "NaN", "-Infinity", "Infinity"};
    size_t kind = split_below(r, depth < 5 ? 9 : 6);
    switch (kind) {
    case 0: put(b, split_below(r, 2) ? "true" : "false"); break;
    case 1: put(b, "null"); break;
    case 2:
    case 3: put(b, nums[split_below(r, 16)]); break;
    case 4:
    case 5: gen_string(b, r); break;
    case 6:
    case 7: {
        size_t n = split_below(r, 5);
        put(b, "[");
        ws(b, r);
        for (size_t i = 0; i < n; i++) {
            if (i > 0) {
                put(b, ",");
                ws(b, r);
            }
            gen_value(b, r, depth + 1);
            ws(b, r);
        }
        put(b, "]");
        break;
    }
    default: {
        size_t n = split_below(r, 5);
        put(b, "{");
        ws(b, r);
        for (size_t i = 0; i < n; i++) {
            if (i > 0) {
                put(b, ",");
                ws(b, r);
            }
            gen_string(b, r);
            ws(b, r);
            put(b, ":");
            ws(b, r);
            gen_value(b, r, depth + 1);
            ws(b, r);
        }
        put(b, "}");
        break;
    }
    }
}

static void gen_text(wk_buf *b, split_rng *r, size_t count)
{
    ws(b, r);
    for (size_t i = 0; i < count; i++) {
        if (i > 0) {
            if (split_below(r, 12) == 0) {
                /* nothing between values now and then: an error unless it cannot matter */
            } else {
                put(b, split_below(r, 2) ? "\n" : " ");
            }
        }
        gen_value(b, r, 0);
    }
    ws(b, r);
    if (b->len == 0) {
        return;
    }
    static const uint8_t junk[] = {'"', '\\', '{', '}', '[', ']', ',', ':', 'x', '0', ' ',
                                   '\n', 0xff, 0xc3, 0x01, 'e', '-', '.'};
    size_t at = split_below(r, b->len);
    switch (split_below(r, 6)) {
    case 0: b->len = at; break;
    case 1: b->data[at] = junk[split_below(r, sizeof junk)]; break;
    case 2:
        memmove(b->data + at, b->data + at + 1, b->len - at - 1);
        b->len--;
        break;
    default: break;
    }
}

/* ---- the reference: wk_json_reader on the whole text -------------------------------- */

typedef struct rec {
    size_t off, len;
} rec;

typedef struct result {
    rec *v;
    size_t n;
    wk_status final;
    size_t err_off;
    const char *msg;
} result;

static bool is_ws(uint8_t c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static void reference(const uint8_t *d, size_t len, const wk_read_opts *o, result *res)
{
    wk_json_reader r;
    wk_json_reader_init(&r, d, len, o, NULL);
    res->v = malloc((len + 1) * sizeof(rec));
    res->n = 0;
    res->err_off = 0;
    res->msg = "";
    uint32_t depth = 0;
    size_t start = 0;
    for (;;) {
        if (depth == 0) {
            start = wk_json_reader_offset(&r);
            while (start < len && is_ws(d[start])) {
                start++;
            }
        }
        wk_event ev;
        wk_status st = wk_json_reader_next(&r, &ev);
        if (st != WK_OK) {
            res->final = st;
            if (st != WK_ERR_EOF) {
                wk_error e;
                wk_json_reader_error(&r, &e);
                res->err_off = e.offset;
                res->msg = e.msg;
            }
            break;
        }
        if (ev.type == WK_EV_ARRAY || ev.type == WK_EV_MAP) {
            depth++;
        } else if (ev.type == WK_EV_END) {
            depth--;
        }
        if (depth == 0) {
            res->v[res->n].off = start;
            res->v[res->n].len = wk_json_reader_offset(&r) - start;
            res->n++;
        }
    }
    wk_json_reader_free(&r);
}

enum mode { RAW, TREE, EVENTS };

static bool run_and_compare(const uint8_t *d, size_t len, size_t *sizes, size_t count,
                            const wk_read_opts *o, enum mode mode, const result *ref,
                            const char *what)
{
    wk_json_unpacker u;
    split_feeder fd;
    wk_arena arena, ref_arena;
    split_events ev;
    split_events_init(&ev);
    wk_arena_init(&arena, NULL, 0);
    wk_arena_init(&ref_arena, NULL, 0);
    wk_json_unpacker_init(&u, o, 0);
    split_feeder_init(&fd, d, len, sizes, count);
    size_t k = 0;
    bool ok = false;
    wk_status st;
    for (;;) {
        size_t n;
        const uint8_t *c = split_feeder_next(&fd, &n);
        if (c == NULL) {
            wk_json_unpacker_finish(&u);
        } else if (wk_json_unpacker_feed(&u, c, n) != WK_OK) {
            st = wk_json_unpacker_error(&u, NULL, NULL, NULL);
            goto done;
        }
        for (;;) {
            const uint8_t *vd = NULL;
            size_t vl = 0;
            uint64_t voff = 0;
            wk_value *tree = NULL;
            wk_arena_reset(&arena);
            if (mode == RAW) {
                st = wk_json_unpacker_next(&u, &vd, &vl, &voff);
            } else if (mode == TREE) {
                st = wk_json_unpacker_next_value(&u, &arena, &tree);
            } else {
                st = split_events_next(&ev, &u);
            }
            if (st == WK_ERR_AGAIN && c != NULL) {
                break;
            }
            if (st != WK_OK) {
                goto done;
            }
            if (k == ref->n) {
                wk__test_fail(__FILE__, __LINE__, "%s: value %zu beyond the reference", what, k);
                goto out;
            }
            const rec *rv = &ref->v[k];
            if (mode == RAW && (voff != rv->off || vl != rv->len ||
                                memcmp(vd, d + rv->off, vl) != 0)) {
                wk__test_fail(__FILE__, __LINE__, "%s: value %zu at %llu+%zu, want %zu+%zu",
                              what, k, (unsigned long long)voff, vl, rv->off, rv->len);
                goto out;
            }
            if (mode == TREE) {
                wk_value *want = NULL;
                wk_read_opts o1 = *o;
                o1.flags &= ~WK_JSON_READ_MULTI;
                wk_arena_reset(&ref_arena);
                wk_json_decode_value(d + rv->off, rv->len, &o1, &ref_arena, &want, NULL, NULL);
                if (tree == NULL || want == NULL || !wk_value_equal(tree, want, NULL)) {
                    wk__test_fail(__FILE__, __LINE__, "%s: tree %zu differs", what, k);
                    goto out;
                }
            }
            if (mode == EVENTS) {
                if (!split_events_match(&ev, d + rv->off, rv->len, o)) {
                    wk__test_fail(__FILE__, __LINE__, "%s: events of value %zu differ", what, k);
                    goto out;
                }
            }
            k++;
        }
    }
done:
    if (k != ref->n || st != ref->final) {
        wk__test_fail(__FILE__, __LINE__, "%s: %zu values then %s, want %zu then %s", what, k,
                      wk_status_str(st), ref->n, wk_status_str(ref->final));
        goto out;
    }
    if (st != WK_ERR_EOF) {
        wk_error e;
        uint64_t line, col;
        size_t wline, wcol;
        wk_json_unpacker_error(&u, &e, &line, &col);
        wk_json_line_col(d, len, ref->err_off, &wline, &wcol);
        if (e.code != st || e.offset != ref->err_off || strcmp(e.msg, ref->msg) != 0) {
            wk__test_fail(__FILE__, __LINE__, "%s: error at %zu \"%s\", want at %zu \"%s\"",
                          what, e.offset, e.msg, ref->err_off, ref->msg);
            goto out;
        }
        if (line != wline || col != wcol) {
            wk__test_fail(__FILE__, __LINE__, "%s: error at %llu:%llu, want %zu:%zu", what,
                          (unsigned long long)line, (unsigned long long)col, wline, wcol);
            goto out;
        }
    }
    ok = true;
out:
    split_feeder_free(&fd);
    wk_json_unpacker_free(&u);
    wk_arena_free(&arena);
    wk_arena_free(&ref_arena);
    split_events_free(&ev);
    return ok;
}

static void property_run(uint64_t seed, int rounds, unsigned flags)
{
    split_rng r = {seed};
    size_t errors = 0;
    for (int round = 0; round < rounds; round++) {
        wk_read_opts o = {0};
        o.flags = flags;
        if (split_below(&r, 8) == 0) {
            o.flags |= WK_JSON_READ_NAN_INF;
        }
        o.max_depth = split_below(&r, 4) == 0 ? (uint32_t)(1 + split_below(&r, 4)) : 0;
        wk_buf text;
        wk_buf_init(&text, NULL, 0);
        gen_text(&text, &r, (flags & WK_JSON_READ_MULTI) ? 1 + split_below(&r, 8) : 1);
        result ref;
        reference(text.data, text.len, &o, &ref);
        errors += ref.final != WK_ERR_EOF;
        for (int kind = 0; kind < 4; kind++) {
            size_t *sizes;
            size_t count = split_plan(&r, text.len, kind, 1 + split_below(&r, 100), &sizes);
            for (int mode = RAW; mode <= EVENTS; mode++) {
                char what[96];
                snprintf(what, sizeof what, "seed %llu round %d split %d mode %d",
                         (unsigned long long)seed, round, kind, mode);
                if (!run_and_compare(text.data, text.len, sizes, count, &o, (enum mode)mode,
                                     &ref, what)) {
                    fprintf(stderr, "input: %.*s\n", (int)text.len, (const char *)text.data);
                    fprintf(stderr, "chunks:");
                    for (size_t q = 0; q < count; q++) {
                        fprintf(stderr, " %zu", sizes[q]);
                    }
                    fprintf(stderr, "\n");
                    free(sizes);
                    free(ref.v);
                    wk_buf_free(&text);
                    return;
                }
            }
            free(sizes);
        }
        free(ref.v);
        wk_buf_free(&text);
    }
    /* both outcomes must be exercised, or the test proves little */
    CHECK(errors > (size_t)rounds / 10 && errors < (size_t)rounds * 9 / 10);
}

WK_TEST(test_json_unpacker_matches_reader_on_json_lines)
{
    property_run(0x853c49e6748fea9bull, 800, WK_JSON_READ_MULTI);
}

WK_TEST(test_json_unpacker_matches_reader_on_one_document)
{
    property_run(0xda3e39cb94b95bdbull, 500, 0);
}

WK_TEST(test_json_unpacker_matches_reader_with_raw_numbers)
{
    property_run(0x5851f42d4c957f2dull, 200, WK_JSON_READ_MULTI | WK_JSON_READ_RAW_NUMBERS);
}

/* ---- contract cases ------------------------------------------------------------------- */

WK_TEST(test_json_unpacker_waits_for_the_end_of_a_top_level_number)
{
    wk_json_unpacker u;
    wk_read_opts o = {.flags = WK_JSON_READ_MULTI};
    wk_json_unpacker_init(&u, &o, 0);
    const uint8_t *d;
    size_t n;
    uint64_t off;
    CHECK_OK(wk_json_unpacker_feed(&u, "12", 2));
    CHECK_STATUS(wk_json_unpacker_next(&u, &d, &n, &off), WK_ERR_AGAIN);
    CHECK_OK(wk_json_unpacker_feed(&u, "34 5", 4));
    CHECK_OK(wk_json_unpacker_next(&u, &d, &n, &off));
    CHECK(n == 4 && memcmp(d, "1234", 4) == 0 && off == 0);
    CHECK_STATUS(wk_json_unpacker_next(&u, &d, &n, &off), WK_ERR_AGAIN);
    wk_json_unpacker_finish(&u);
    CHECK_OK(wk_json_unpacker_next(&u, &d, &n, &off));
    CHECK(n == 1 && d[0] == '5' && off == 5);
    CHECK_STATUS(wk_json_unpacker_next(&u, &d, &n, &off), WK_ERR_EOF);
    wk_json_unpacker_free(&u);
}

WK_TEST(test_json_unpacker_reports_line_and_column_across_chunks)
{
    wk_json_unpacker u;
    wk_read_opts o = {.flags = WK_JSON_READ_MULTI};
    wk_json_unpacker_init(&u, &o, 0);
    const uint8_t *d;
    size_t n;
    CHECK_OK(wk_json_unpacker_feed(&u, "{\"a\":1}\n[1,\n", 12));
    CHECK_OK(wk_json_unpacker_next(&u, &d, &n, NULL));
    CHECK_STATUS(wk_json_unpacker_next(&u, &d, &n, NULL), WK_ERR_AGAIN);
    CHECK_OK(wk_json_unpacker_feed(&u, "  2,]\n", 6));
    CHECK_STATUS(wk_json_unpacker_next(&u, &d, &n, NULL), WK_ERR_SYNTAX);
    wk_error e;
    uint64_t line, col;
    CHECK_STATUS(wk_json_unpacker_error(&u, &e, &line, &col), WK_ERR_SYNTAX);
    CHECK_EQ(e.offset, 16);
    CHECK_EQ(line, 3);
    CHECK_EQ(col, 5);
    wk_json_unpacker_free(&u);
}

WK_TEST(test_json_unpacker_refuses_bom_and_trailing_flags)
{
    wk_json_unpacker u;
    wk_read_opts o = {.flags = WK_JSON_READ_ALLOW_BOM};
    wk_json_unpacker_init(&u, &o, 0);
    CHECK_STATUS(wk_json_unpacker_feed(&u, "1", 1), WK_ERR_UNSUPPORTED);
    wk_json_unpacker_free(&u);
}

/* Issue 29: a value cut during next_value and then taken with next (mixing is allowed) must
 * come out as its span; the buffered retry once ran the tree parser with no arena. */
static void check_cut_then_raw(const char *first, const char *rest, const char *want,
                               unsigned flags)
{
    wk_json_unpacker u;
    wk_read_opts o = {.flags = flags};
    wk_json_unpacker_init(&u, &o, 0);
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    wk_value *v = NULL;
    const uint8_t *d;
    size_t n;
    CHECK_OK(wk_json_unpacker_feed(&u, first, strlen(first)));
    wk_status st;
    while ((st = wk_json_unpacker_next_value(&u, &a, &v)) == WK_OK) {
    }
    CHECK_STATUS(st, WK_ERR_AGAIN);
    CHECK_OK(wk_json_unpacker_feed(&u, rest, strlen(rest)));
    CHECK_OK(wk_json_unpacker_next(&u, &d, &n, NULL));
    CHECK(n == strlen(want) && memcmp(d, want, n) == 0);
    CHECK_STATUS(wk_json_unpacker_next(&u, &d, &n, NULL), WK_ERR_AGAIN);
    wk_json_unpacker_finish(&u);
    CHECK_STATUS(wk_json_unpacker_next_value(&u, &a, &v), WK_ERR_EOF);
    CHECK_STATUS(wk_json_unpacker_error(&u, NULL, NULL, NULL), WK_OK);
    wk_arena_free(&a);
    wk_json_unpacker_free(&u);
}

WK_TEST(test_json_unpacker_value_cut_in_next_value_taken_by_next)
{
    /* one document in a chunk of at least 256 bytes (the gathered retry), and a short one */
    char big[400];
    memset(big, ' ', sizeof big);
    big[0] = '[';
    for (size_t i = 1; i + 1 < sizeof big; i += 2) {
        big[i] = '1';
        big[i + 1] = ',';
    }
    big[sizeof big - 1] = '\0';
    char want[sizeof big + 8];
    int wl = snprintf(want, sizeof want, "%s2]", big);
    CHECK(wl > 0);
    check_cut_then_raw(big, "2]", want, 0);
    check_cut_then_raw("{\"a\": [1, 2", ", 3]}", "{\"a\": [1, 2, 3]}", 0);
    /* JSON Lines: the value after a newline, cut with no newline after it */
    check_cut_then_raw("{\"x\":1}\n[1, 2", ", 3]\n", "[1, 2, 3]", WK_JSON_READ_MULTI);
    check_cut_then_raw("1\n2\n\"abc", "def\"\n", "\"abcdef\"", WK_JSON_READ_MULTI);
}

/* wk_json_unpacker_next_value_or_bytes: a value up to tree_max bytes gets its tree, a longer
 * one comes out as its bytes (what wk_json_unpacker_next gives, same offset); a bad long
 * value fails as next_value fails; 1-byte feeds and one chunk alike. */
WK_TEST(test_json_unpacker_hands_out_values_longer_than_tree_max_as_bytes)
{
    static const char text[] = "[1,2] {\"a\":\"xyz\",\"b\":[[],{}]}\n7 \"0123456789\" [1,2,3,4,5,6,7]";
    static const struct {
        bool tree;
        uint64_t off;
        size_t len;
    } want[] = {{true, 0, 5}, {false, 6, 23}, {true, 30, 1}, {false, 32, 12}, {false, 45, 15}};
    for (size_t feed = 1; feed <= sizeof text; feed += sizeof text - 2) {
        wk_read_opts ro = {.flags = WK_JSON_READ_MULTI};
        wk_json_unpacker u;
        wk_json_unpacker_init(&u, &ro, 0);
        wk_arena a;
        wk_arena_init(&a, NULL, 0);
        size_t pos = 0, k = 0;
        for (;;) {
            wk_value *v = NULL;
            const uint8_t *d = NULL;
            size_t n = 0;
            uint64_t off = 0;
            wk_status st = wk_json_unpacker_next_value_or_bytes(&u, &a, 10, &v, &d, &n, &off);
            if (st == WK_ERR_AGAIN) {
                if (pos == sizeof text - 1) {
                    wk_json_unpacker_finish(&u);
                } else {
                    size_t c = sizeof text - 1 - pos < feed ? sizeof text - 1 - pos : feed;
                    CHECK_OK(wk_json_unpacker_feed(&u, text + pos, c));
                    pos += c;
                }
                continue;
            }
            if (st == WK_ERR_EOF) {
                break;
            }
            CHECK_OK(st);
            CHECK(k < sizeof want / sizeof want[0]);
            CHECK_EQ(v != NULL, want[k].tree);
            CHECK_EQ(off, want[k].off);
            CHECK_MEM(d, n, text + want[k].off, want[k].len);
            k++;
        }
        CHECK_EQ(k, sizeof want / sizeof want[0]);
        wk_json_unpacker_free(&u);
        wk_arena_free(&a);
    }
    /* a bad value longer than tree_max: the error next_value reports, at the same offset */
    static const char bad[] = "[1] [1,2,3,4,5,6,7,8,9,x] ";
    wk_error e1, e2;
    for (int mode = 0; mode < 2; mode++) {
        wk_read_opts ro = {.flags = WK_JSON_READ_MULTI};
        wk_json_unpacker u;
        wk_json_unpacker_init(&u, &ro, 0);
        wk_arena a;
        wk_arena_init(&a, NULL, 0);
        CHECK_OK(wk_json_unpacker_feed(&u, bad, sizeof bad - 1));
        wk_json_unpacker_finish(&u);
        wk_status st;
        do {
            wk_value *v = NULL;
            const uint8_t *d = NULL;
            size_t n = 0;
            st = mode == 0 ? wk_json_unpacker_next_value(&u, &a, &v)
                           : wk_json_unpacker_next_value_or_bytes(&u, &a, 4, &v, &d, &n, NULL);
        } while (st == WK_OK);
        CHECK_STATUS(st, WK_ERR_SYNTAX);
        wk_json_unpacker_error(&u, mode == 0 ? &e1 : &e2, NULL, NULL);
        wk_json_unpacker_free(&u);
        wk_arena_free(&a);
    }
    CHECK_EQ(e2.offset, e1.offset);
    CHECK_EQ(e1.offset, (size_t)23);
    CHECK_STR(e2.msg, e1.msg);
}
