/*
 * The format table (wirekit/format.h): lookups by name and alias, the list, and for every row
 * one value taken through each of its paths (tree encode/decode, buffer reader into writer,
 * the chunked unpacker fed a byte at a time as raw values, events and trees, its errors with
 * offsets and lines), then the converter between every pair of rows, which must give what
 * the output row's tree encoder gives, whole values only when the input turns bad.
 */
#include <string.h>

#include "wirekit/mediatype.h"
#include "wk_test.h"
#include "wirekit/format.h"

/* {"k":[7,-3,2.5,true,null,"s\u00e9"],"e":{}} built by hand. */
static void sample(wk_arena *a, wk_value **out)
{
    wk_value *v = wk_arena_alloc(a, sizeof *v, 8);
    *out = v;
    CHECK(v != NULL);
    CHECK_OK(wk_value_set_map(v, a, 2));
    CHECK_OK(wk_value_set_str(&v->u.pairs[0].key, "k", 1));
    wk_value *arr = &v->u.pairs[0].val;
    CHECK_OK(wk_value_set_array(arr, a, 6));
    wk_value_set_uint(&arr->u.items[0], 7);
    wk_value_set_int(&arr->u.items[1], -3);
    wk_value_set_float(&arr->u.items[2], 2.5);
    wk_value_set_bool(&arr->u.items[3], true);
    wk_value_set_nil(&arr->u.items[4]);
    CHECK_OK(wk_value_set_str(&arr->u.items[5], "s\xc3\xa9", 3));
    CHECK_OK(wk_value_set_str(&v->u.pairs[1].key, "e", 1));
    CHECK_OK(wk_value_set_map(&v->u.pairs[1].val, a, 0));
}

WK_TEST(test_format_finds_msgpack_by_its_three_media_types_and_json_by_suffix)
{
    const wk_format *mp = wk_format_msgpack(), *js = wk_format_json();
    CHECK(wk_format_find_media_type("application/vnd.msgpack", 23) == mp);
    CHECK(wk_format_find_media_type("application/msgpack", 19) == mp);
    CHECK(wk_format_find_media_type("Application/X-MsgPack", 21) == mp);
    CHECK(strcmp(mp->media_type, "application/vnd.msgpack") == 0); /* what wirekit sends */
    CHECK(wk_format_find_media_type("application/json", 16) == js);
    CHECK(wk_format_find_media_type("application/problem+json", 24) == js);
    CHECK(wk_format_find_media_type("application/+json", 17) == NULL);
    CHECK(wk_format_find_media_type("text/json+x", 11) == NULL);
    CHECK(wk_format_find_media_type("application/msgpackx", 20) == NULL);
    CHECK(wk_format_find_media_type("application/msgpac", 18) == NULL);
    CHECK(wk_format_find_media_type(NULL, 0) == NULL);
    /* the two unregistered spellings are well-known types too */
    CHECK(wk_mt_known_find("application/msgpack", 19) != 0);
    CHECK(wk_mt_known_find("application/x-msgpack", 21) != 0);
    CHECK(wk_mt_known_find("application/vnd.msgpack", 23) != 0);
}

WK_TEST(test_format_lookups_by_name_and_alias)
{
    CHECK(wk_format_find("json") == wk_format_json());
    CHECK(wk_format_find("msgpack") == wk_format_msgpack());
    CHECK(wk_format_find("mp") == wk_format_msgpack());
    CHECK(wk_format_find("JSON") == NULL); /* names are exact */
    CHECK(wk_format_find("cbor") == NULL);
    CHECK(wk_format_find("") == NULL);
    CHECK(wk_format_find(NULL) == NULL);
    size_t n = 0;
    const wk_format *const *rows = wk_format_list(&n);
    CHECK_EQ(n, 2);
    CHECK(rows[0] == wk_format_json());
    CHECK(rows[1] == wk_format_msgpack());
    for (size_t i = 0; i < n; i++) {
        const wk_format *f = rows[i];
        CHECK(wk_format_find(f->name) == f);
        CHECK(f->title != NULL && f->media_type != NULL && f->extensions[0] != NULL);
        CHECK(f->reader_init && f->reader_source && f->reader_free && f->writer_init &&
              f->writer_sink && f->writer_value && f->writer_flush && f->writer_resume &&
              f->writer_finish && f->unpacker_init && f->unpacker_feed && f->unpacker_finish &&
              f->unpacker_next && f->unpacker_next_events && f->unpacker_next_value &&
              f->unpacker_error && f->unpacker_offset && f->unpacker_free && f->decode_value &&
              f->encode_value);
    }
    CHECK(strcmp(wk_format_json()->media_type, "application/json") == 0);
    CHECK((wk_format_json()->flags & WK_FORMAT_TEXT) != 0);
    CHECK((wk_format_msgpack()->flags & WK_FORMAT_COUNTS) != 0);
}

/* Two copies of the sample in `f`, separated as the format separates values. */
static void two_values(const wk_format *f, const wk_buf *one, wk_buf *two)
{
    wk_buf_clear(two);
    CHECK_OK(wk_buf_append(two, one->data, one->len));
    if (f->flags & WK_FORMAT_TEXT) {
        CHECK_OK(wk_buf_append(two, "\n", 1));
    }
    CHECK_OK(wk_buf_append(two, one->data, one->len));
}

static void round_trip(const wk_format *f)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    wk_value *v = NULL;
    sample(&a, &v);
    wk_buf enc, out, two;
    wk_buf_init(&enc, NULL, 0);
    wk_buf_init(&out, NULL, 0);
    wk_buf_init(&two, NULL, 0);

    /* tree encode, tree decode */
    CHECK_OK(f->encode_value(v, NULL, &enc, NULL));
    wk_value *back = NULL;
    CHECK_OK(f->decode_value(enc.data, enc.len, NULL, &a, &back, NULL, NULL));
    CHECK(wk_value_equal(v, back, NULL));

    /* buffer reader -> writer of the same format: the same bytes */
    wk_reader r;
    wk_reader_init(&r, f, enc.data, enc.len, NULL);
    wk_source src;
    wk_reader_source(&r, &src);
    wk_writer w;
    wk_writer_init(&w, f, &out, NULL);
    wk_sink sink;
    wk_writer_sink(&w, &sink);
    CHECK_OK(wk_transcode(&src, &sink, NULL));
    CHECK_OK(wk_writer_finish(&w, NULL));
    wk_reader_free(&r);
    CHECK_MEM(out.data, out.len, enc.data, enc.len);

    /* the writer's tree call, flushed and resumed between values */
    wk_buf_clear(&out);
    wk_writer_init(&w, f, &out, NULL);
    CHECK_OK(wk_writer_value(&w, v));
    CHECK_OK(wk_writer_flush(&w));
    CHECK_MEM(out.data, out.len, enc.data, enc.len);
    CHECK_OK(wk_buf_reserve(&out, 4096)); /* the buffer may move in between */
    CHECK_OK(wk_writer_resume(&w));
    CHECK_OK(wk_writer_value(&w, v));
    CHECK_OK(wk_writer_finish(&w, NULL));
    two_values(f, &enc, &two);
    CHECK_MEM(out.data, out.len, two.data, two.len);

    /* the unpacker, a byte at a time: raw values, trees, events */
    wk_read_opts ro = {.flags = f->multi_flag};
    for (int take = 0; take < 3; take++) {
        wk_unpacker u;
        wk_unpacker_init(&u, f, &ro, 0);
        wk_buf_clear(&out);
        wk_writer_init(&w, f, &out, NULL);
        wk_writer_sink(&w, &sink);
        size_t fed = 0;
        int values = 0;
        for (;;) {
            wk_status st;
            if (take == 0) {
                const uint8_t *d;
                size_t n;
                uint64_t off;
                st = wk_unpacker_next(&u, &d, &n, &off);
                if (st == WK_OK) {
                    CHECK_MEM(d, n, enc.data, enc.len);
                    CHECK_EQ(off, values == 0 ? 0 : two.len - enc.len);
                }
            } else if (take == 1) {
                wk_value *t = NULL;
                st = wk_unpacker_next_value(&u, &a, &t);
                if (st == WK_OK) {
                    CHECK(wk_value_equal(v, t, NULL));
                }
            } else {
                st = wk_unpacker_next_events(&u, &sink);
            }
            if (st == WK_OK) {
                values++;
            } else if (st == WK_ERR_AGAIN) {
                if (fed == two.len) {
                    wk_unpacker_finish(&u);
                } else {
                    CHECK_OK(wk_unpacker_feed(&u, two.data + fed, 1));
                    fed++;
                }
            } else {
                CHECK_STATUS(st, WK_ERR_EOF);
                break;
            }
        }
        CHECK_EQ(values, 2);
        CHECK_EQ(wk_unpacker_offset(&u), two.len);
        CHECK_OK(wk_unpacker_error(&u, NULL, NULL, NULL));
        CHECK_OK(wk_writer_finish(&w, NULL));
        if (take == 2) {
            wk_buf expect;
            wk_buf_init(&expect, NULL, 0);
            two_values(f, &enc, &expect); /* the writer separates values as the input did */
            CHECK_MEM(out.data, out.len, expect.data, expect.len);
            wk_buf_free(&expect);
        }
        wk_unpacker_free(&u);
    }
    wk_buf_free(&enc);
    wk_buf_free(&out);
    wk_buf_free(&two);
    wk_arena_free(&a);
}

WK_TEST(test_format_every_row_round_trips_a_value_through_each_path)
{
    size_t n = 0;
    const wk_format *const *rows = wk_format_list(&n);
    for (size_t i = 0; i < n; i++) {
        round_trip(rows[i]);
    }
}

WK_TEST(test_format_unpacker_errors_carry_offset_and_line)
{
    wk_unpacker u;
    wk_unpacker_init(&u, wk_format_json(), NULL, 0);
    const char *bad = "[1,\n  x]";
    CHECK_OK(wk_unpacker_feed(&u, bad, strlen(bad)));
    wk_unpacker_finish(&u);
    const uint8_t *d;
    size_t n;
    CHECK_STATUS(wk_unpacker_next(&u, &d, &n, NULL), WK_ERR_SYNTAX);
    wk_error e;
    uint64_t line = 0, col = 0;
    CHECK_STATUS(wk_unpacker_error(&u, &e, &line, &col), WK_ERR_SYNTAX);
    CHECK_EQ(e.offset, 6);
    CHECK_EQ(line, 2);
    CHECK_EQ(col, 3);
    wk_unpacker_free(&u);

    wk_unpacker_init(&u, wk_format_msgpack(), NULL, 0);
    CHECK_OK(wk_unpacker_feed(&u, "\x01\xc1", 2));
    CHECK_OK(wk_unpacker_next(&u, &d, &n, NULL));
    CHECK_STATUS(wk_unpacker_next(&u, &d, &n, NULL), WK_ERR_SYNTAX);
    line = col = 9;
    CHECK_STATUS(wk_unpacker_error(&u, &e, &line, &col), WK_ERR_SYNTAX);
    CHECK_EQ(e.offset, 1);
    CHECK_EQ(line, 0);
    CHECK_EQ(col, 0);
    wk_unpacker_free(&u);
}

WK_TEST(test_format_zeroed_handles_refuse_and_free_quietly)
{
    wk_unpacker u;
    memset(&u, 0, sizeof u);
    const uint8_t *d;
    size_t n;
    CHECK_STATUS(wk_unpacker_feed(&u, "1", 1), WK_ERR_STATE);
    CHECK_STATUS(wk_unpacker_next(&u, &d, &n, NULL), WK_ERR_STATE);
    CHECK_OK(wk_unpacker_error(&u, NULL, NULL, NULL));
    wk_unpacker_finish(&u);
    wk_unpacker_free(&u);
    wk_writer w;
    memset(&w, 0, sizeof w);
    wk_value nil;
    wk_value_set_nil(&nil);
    CHECK_STATUS(wk_writer_value(&w, &nil), WK_ERR_STATE);
    CHECK_STATUS(wk_writer_finish(&w, NULL), WK_ERR_STATE);
    wk_reader r;
    memset(&r, 0, sizeof r);
    wk_source src;
    wk_reader_source(&r, &src);
    wk_event ev;
    CHECK_STATUS(src.next(src.self, &ev), WK_ERR_STATE);
    wk_reader_free(&r);
    wk_converter c;
    memset(&c, 0, sizeof c);
    CHECK_STATUS(wk_converter_feed(&c, "1", 1), WK_ERR_STATE);
    CHECK_STATUS(wk_converter_next(&c), WK_ERR_STATE);
    wk_converter_free(&c);
}

WK_TEST(test_format_convert_between_every_pair_gives_the_tree_encoding)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    wk_value *v = NULL;
    sample(&a, &v);
    size_t n = 0;
    const wk_format *const *rows = wk_format_list(&n);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            wk_buf in, out, want;
            wk_buf_init(&in, NULL, 0);
            wk_buf_init(&out, NULL, 0);
            wk_buf_init(&want, NULL, 0);
            CHECK_OK(rows[i]->encode_value(v, NULL, &in, NULL));
            CHECK_OK(rows[j]->encode_value(v, NULL, &want, NULL));
            wk_error e;
            CHECK_OK(wk_convert(rows[i], rows[j], in.data, in.len, NULL, NULL, &out, &e));
            CHECK_MEM(out.data, out.len, want.data, want.len);
            wk_buf_free(&in);
            wk_buf_free(&out);
            wk_buf_free(&want);
        }
    }
    wk_arena_free(&a);
}

WK_TEST(test_format_converter_writes_whole_values_and_names_the_input)
{
    /* 1, then ["1", "<ff fe>"]: the second value is cut out whole, the offset is the bad
     * byte's in the input */
    static const uint8_t mp[] = {0x01, 0x92, 0xa1, '1', 0xa2, 0xff, 0xfe};
    for (size_t chunk = 1; chunk <= sizeof mp; chunk++) {
        wk_buf out;
        wk_buf_init(&out, NULL, 0);
        wk_json_write_opts wo = {WK_JSON_WRITE_NEWLINE, 0};
        wk_converter c;
        wk_converter_init(&c, wk_format_msgpack(), wk_format_json(), NULL, &wo, 0, &out);
        size_t fed = 0;
        wk_status st;
        int values = 0;
        for (;;) {
            st = wk_converter_next(&c);
            if (st == WK_OK) {
                values++;
                CHECK_EQ(wk_converter_done(&c), out.len);
            } else if (st == WK_ERR_AGAIN) {
                size_t k = sizeof mp - fed < chunk ? sizeof mp - fed : chunk;
                if (k == 0) {
                    wk_converter_finish(&c);
                } else {
                    CHECK_OK(wk_converter_feed(&c, mp + fed, k));
                    fed += k;
                }
            } else {
                break;
            }
        }
        CHECK_STATUS(st, WK_ERR_UTF8);
        CHECK_EQ(values, 1);
        CHECK_MEM(out.data, out.len, "1\n", 2);
        wk_error e;
        bool output = true;
        CHECK_STATUS(wk_converter_error(&c, &e, NULL, NULL, &output), WK_ERR_UTF8);
        CHECK(!output);
        CHECK_EQ(e.offset, 5);
        CHECK_STATUS(wk_converter_next(&c), WK_ERR_UTF8); /* sticky */
        wk_converter_free(&c);
        wk_buf_free(&out);
    }
    /* an output that is full is the output's error, with the output offset */
    uint8_t small[4];
    wk_buf out;
    wk_buf_init_fixed(&out, small, sizeof small);
    wk_error e;
    CHECK_STATUS(wk_convert(wk_format_json(), wk_format_json(), "[1,2,3]", 7, NULL, NULL, &out,
                            &e),
                 WK_ERR_LIMIT);
    CHECK_EQ(out.len, 0); /* no half value */
}

WK_TEST(test_format_one_shot_takes_the_buffer_readers_json_options)
{
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    wk_read_opts bom = {.flags = WK_JSON_READ_ALLOW_BOM};
    CHECK_OK(wk_json_to_msgpack("\xef\xbb\xbf[1]", 6, &bom, &out, NULL));
    CHECK_MEM(out.data, out.len, "\x91\x01", 2);
    wk_buf_clear(&out);
    wk_error e;
    CHECK_STATUS(wk_json_to_msgpack("\xef\xbb\xbf[1,]", 7, &bom, &out, &e), WK_ERR_SYNTAX);
    CHECK_EQ(e.offset, 6); /* counted from the start of the input, mark included */
    wk_buf_clear(&out);
    wk_read_opts trailing = {.flags = WK_JSON_READ_ALLOW_TRAILING};
    CHECK_OK(wk_json_to_msgpack("[1] x", 5, &trailing, &out, NULL));
    CHECK_MEM(out.data, out.len, "\x91\x01", 2);
    wk_buf_free(&out);
}

/* Found by fuzz_json_msgpack_roundtrip: no input given as (NULL, 0), which the contract
 * allows, ran NULL + 0 (undefined behaviour, UBSan stops there); it must convert as an empty
 * input does, for every pair of formats. */
WK_TEST(test_format_convert_of_no_input_as_null_is_an_empty_input)
{
    size_t n = 0;
    const wk_format *const *rows = wk_format_list(&n);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            wk_buf a, b;
            wk_buf_init(&a, NULL, 0);
            wk_buf_init(&b, NULL, 0);
            wk_error ea = {0}, eb = {0};
            wk_status sa = wk_convert(rows[i], rows[j], NULL, 0, NULL, NULL, &a, &ea);
            wk_status sb = wk_convert(rows[i], rows[j], "", 0, NULL, NULL, &b, &eb);
            size_t la = a.len, lb = b.len;
            wk_buf_free(&a);
            wk_buf_free(&b);
            CHECK_EQ(sa, sb);
            CHECK_EQ(la, lb);
            CHECK_EQ(ea.offset, eb.offset);
        }
    }
}
