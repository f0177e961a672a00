/* UTF-8 validation: every class of invalid sequence, with the offset of the first bad byte. */
#include "wirekit/utf8.h"
#include "wk_test.h"

static bool valid_hex(const char *hex, size_t *bad)
{
    uint8_t buf[64];
    size_t n = wk_test_hex(hex, buf, sizeof buf);
    return wk_utf8_valid(buf, n, bad);
}

WK_TEST(test_utf8_accepts_ascii_and_all_sequence_lengths)
{
    CHECK(wk_utf8_valid("", 0, NULL));
    CHECK(wk_utf8_valid(NULL, 0, NULL));
    CHECK(wk_utf8_valid("plain ascii text, longer than eight bytes", 41, NULL));
    CHECK(valid_hex("c2 80 df bf", NULL));             /* 2-byte bounds */
    CHECK(valid_hex("e0 a0 80 ef bf bf", NULL));       /* 3-byte bounds */
    CHECK(valid_hex("ed 9f bf ee 80 80", NULL));       /* around the surrogates */
    CHECK(valid_hex("f0 90 80 80 f4 8f bf bf", NULL)); /* 4-byte bounds */
}

WK_TEST(test_utf8_rejects_overlongs_surrogates_and_out_of_range)
{
    size_t bad = 99;
    CHECK(!valid_hex("41 c0 80", &bad));
    CHECK_EQ(bad, 1);
    CHECK(!valid_hex("c1 bf", &bad));
    CHECK(!valid_hex("e0 9f bf", &bad));      /* overlong 3-byte */
    CHECK(!valid_hex("ed a0 80", &bad));      /* U+D800 */
    CHECK(!valid_hex("f0 8f bf bf", &bad));   /* overlong 4-byte */
    CHECK(!valid_hex("f4 90 80 80", &bad));   /* above U+10FFFF */
    CHECK(!valid_hex("f5 80 80 80", &bad));
    CHECK(!valid_hex("ff", &bad));
    CHECK(!valid_hex("41 41 41 41 41 41 41 41 41 80", &bad)); /* lone continuation */
    CHECK_EQ(bad, 9);
}

WK_TEST(test_utf8_rejects_truncated_sequences)
{
    size_t bad = 99;
    CHECK(!valid_hex("41 e2 82", &bad));
    CHECK_EQ(bad, 1);
    CHECK(!valid_hex("f0 9f 98", &bad));
    CHECK(!valid_hex("c3", &bad));
    CHECK(!valid_hex("e2 28 a1", &bad)); /* bad continuation */
}

WK_TEST(test_utf8_encode_round_trips_every_scalar_value)
{
    uint8_t out[4];
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        size_t n = wk_utf8_encode(cp, out);
        if (cp >= 0xD800 && cp <= 0xDFFF) {
            CHECK_EQ(n, 0);
            continue;
        }
        CHECK(n >= 1 && n <= 4);
        CHECK_MSG(wk_utf8_valid(out, n, NULL), "U+%04X", (unsigned)cp);
    }
    CHECK_EQ(wk_utf8_encode(0x110000, out), 0);
}
