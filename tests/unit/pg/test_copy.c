/*
 * The binary COPY readers (wk_pg_copy_header, wk_pg_copy_row) on hand-built streams: a valid
 * stream split at every byte (each prefix asks for more, never reads past it), NULLs and
 * empty values, the trailer, and hostile input: bad signature, OIDs flag, unknown critical
 * flags, negative or oversized lengths, wrong field counts; errors carry the byte offset.
 */
#include <stdlib.h>

#include "wirekit/pg.h"
#include "wk_test.h"

/* header, a tuple (int4 7, NULL, text "ab", empty text), the trailer */
static const uint8_t stream[] = {
    'P', 'G', 'C', 'O', 'P', 'Y', '\n', 0xff, '\r', '\n', 0, /* signature */
    0, 0, 0, 0,                                              /* flags */
    0, 0, 0, 2, 0xaa, 0xbb,                                  /* a 2-byte extension */
    0, 4,                                                    /* 4 fields */
    0, 0, 0, 4, 0, 0, 0, 7,                                  /* int4 7 */
    0xff, 0xff, 0xff, 0xff,                                  /* NULL */
    0, 0, 0, 2, 'a', 'b',                                    /* "ab" */
    0, 0, 0, 0,                                              /* "" */
    0xff, 0xff,                                              /* trailer */
};
#define HDR 21
#define TUPLE 24

WK_TEST(test_pg_copy_reads_header_tuple_and_trailer)
{
    size_t used = 0;
    wk_error err = {0};
    CHECK_OK(wk_pg_copy_header(stream, sizeof stream, &used, &err));
    CHECK_EQ(used, HDR);
    const uint8_t *vals[4];
    int lens[4];
    CHECK_OK(wk_pg_copy_row(stream + HDR, sizeof stream - HDR, 4, vals, lens, &used, &err));
    CHECK_EQ(used, TUPLE);
    CHECK_EQ(lens[0], 4);
    CHECK_EQ(vals[0][3], 7);
    CHECK_EQ(lens[1], -1);
    CHECK(vals[1] == NULL);
    CHECK_EQ(lens[2], 2);
    CHECK_MEM(vals[2], 2, "ab", 2);
    CHECK_EQ(lens[3], 0);
    CHECK_STATUS(wk_pg_copy_row(stream + HDR + TUPLE, 2, 4, vals, lens, &used, &err),
                 WK_ERR_EOF);
    CHECK_EQ(used, 2u);
}

WK_TEST(test_pg_copy_every_prefix_asks_for_more_in_exact_size_copies)
{
    const uint8_t *vals[4];
    int lens[4];
    wk_error err = {0};
    for (size_t n = 0; n < HDR; n++) {
        uint8_t *p = malloc(n ? n : 1);
        memcpy(p, stream, n);
        size_t used = 1;
        CHECK_STATUS(wk_pg_copy_header(p, n, &used, &err), WK_ERR_AGAIN);
        CHECK_EQ(used, 0u);
        free(p);
    }
    for (size_t n = 0; n < TUPLE; n++) {
        uint8_t *p = malloc(n ? n : 1);
        memcpy(p, stream + HDR, n);
        size_t used = 1;
        CHECK_STATUS(wk_pg_copy_row(p, n, 4, vals, lens, &used, &err), WK_ERR_AGAIN);
        CHECK_EQ(used, 0u);
        free(p);
    }
}

WK_TEST(test_pg_copy_hostile_headers_are_refused)
{
    uint8_t h[HDR];
    size_t used = 0;
    wk_error err = {0};
    memcpy(h, stream, HDR);
    h[5] = 'Z';
    CHECK_STATUS(wk_pg_copy_header(h, HDR, &used, &err), WK_ERR_SYNTAX);
    /* a bad signature is seen in the first bytes, before the rest arrives */
    CHECK_STATUS(wk_pg_copy_header(h, 6, &used, &err), WK_ERR_SYNTAX);
    memcpy(h, stream, HDR);
    h[12] = 1; /* bit 16: OIDs included */
    CHECK_STATUS(wk_pg_copy_header(h, HDR, &used, &err), WK_ERR_UNSUPPORTED);
    CHECK_EQ(err.offset, 11u);
    memcpy(h, stream, HDR);
    h[11] = 0x80; /* an unknown critical flag */
    CHECK_STATUS(wk_pg_copy_header(h, HDR, &used, &err), WK_ERR_UNSUPPORTED);
    memcpy(h, stream, HDR);
    h[14] = 0x01; /* a non-critical flag is ignored */
    CHECK_OK(wk_pg_copy_header(h, HDR, &used, &err));
    memcpy(h, stream, HDR);
    h[15] = 0x80; /* negative extension length */
    CHECK_STATUS(wk_pg_copy_header(h, HDR, &used, &err), WK_ERR_SYNTAX);
    CHECK_EQ(err.offset, 15u);
    memcpy(h, stream, HDR);
    h[15] = 0x7f; /* an extension longer than what is there: more is needed, nothing read */
    CHECK_STATUS(wk_pg_copy_header(h, HDR, &used, &err), WK_ERR_AGAIN);
    CHECK_EQ(used, 0u);
}

WK_TEST(test_pg_copy_hostile_tuples_are_refused)
{
    const uint8_t *vals[4];
    int lens[4];
    size_t used = 0;
    wk_error err = {0};
    uint8_t t[TUPLE];
    memcpy(t, stream + HDR, TUPLE);
    /* a field count other than the columns */
    CHECK_STATUS(wk_pg_copy_row(t, TUPLE, 3, vals, lens, &used, &err), WK_ERR_SYNTAX);
    CHECK_STATUS(wk_pg_copy_row(t, TUPLE, 5, vals, lens, &used, &err), WK_ERR_SYNTAX);
    t[0] = 0x80; /* negative count other than -1 */
    CHECK_STATUS(wk_pg_copy_row(t, TUPLE, 4, vals, lens, &used, &err), WK_ERR_SYNTAX);
    memcpy(t, stream + HDR, TUPLE);
    t[10] = 0xff; t[11] = 0xff; t[12] = 0xff; t[13] = 0xfe; /* length -2 for field 2 */
    CHECK_STATUS(wk_pg_copy_row(t, TUPLE, 4, vals, lens, &used, &err), WK_ERR_SYNTAX);
    CHECK_EQ(err.offset, 10u);
    memcpy(t, stream + HDR, TUPLE);
    t[2] = 0x7f; /* a 2 GiB field in a 24-byte tuple: more input needed, no allocation */
    CHECK_STATUS(wk_pg_copy_row(t, TUPLE, 4, vals, lens, &used, &err), WK_ERR_AGAIN);
    CHECK_EQ(used, 0u);
    /* zero columns: a tuple of count 0 is two bytes */
    uint8_t z[2] = {0, 0};
    CHECK_OK(wk_pg_copy_row(z, 2, 0, vals, lens, &used, &err));
    CHECK_EQ(used, 2u);
}
