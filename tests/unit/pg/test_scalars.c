/*
 * Scalar PostgreSQL codecs: canonical text round trips through both wire formats (expected
 * texts are PostgreSQL 15's own output), exact binary layouts, C kinds, events and hostile
 * inputs.
 */
#include <math.h>
#include <stdlib.h>

#include "pg_test_util.h"
#include "wk_test.h"

typedef struct rt {
    wk_pg_oid oid;
    const char *in, *want;
} rt;

static const rt cases[] = {
    {WK_PG_OID_BOOL, "t", "t"},
    {WK_PG_OID_BOOL, "FALSE", "f"},
    {WK_PG_OID_BOOL, " yes ", "t"},
    {WK_PG_OID_BOOL, "off", "f"},
    {WK_PG_OID_INT2, "-32768", "-32768"},
    {WK_PG_OID_INT2, "32767", "32767"},
    {WK_PG_OID_INT2, " +12 ", "12"},
    {WK_PG_OID_INT4, "-2147483648", "-2147483648"},
    {WK_PG_OID_INT4, "2147483647", "2147483647"},
    {WK_PG_OID_INT8, "-9223372036854775808", "-9223372036854775808"},
    {WK_PG_OID_INT8, "9223372036854775807", "9223372036854775807"},
    {WK_PG_OID_OID, "4294967295", "4294967295"},
    {WK_PG_OID_OID, "-1", "4294967295"},
    {WK_PG_OID_FLOAT8, "1e15", "1e+15"},
    {WK_PG_OID_FLOAT8, "1e14", "100000000000000"},
    {WK_PG_OID_FLOAT8, "0.0001", "0.0001"},
    {WK_PG_OID_FLOAT8, "0.00001", "1e-05"},
    {WK_PG_OID_FLOAT8, "1.5e-7", "1.5e-07"},
    {WK_PG_OID_FLOAT8, "1e100", "1e+100"},
    {WK_PG_OID_FLOAT8, "5e-324", "5e-324"},
    {WK_PG_OID_FLOAT8, "-0", "-0"},
    {WK_PG_OID_FLOAT8, "0.1", "0.1"},
    {WK_PG_OID_FLOAT8, "1.7976931348623157e308", "1.7976931348623157e+308"},
    {WK_PG_OID_FLOAT8, "3.141592653589793", "3.141592653589793"},
    {WK_PG_OID_FLOAT8, "nan", "NaN"},
    {WK_PG_OID_FLOAT8, "-Infinity", "-Infinity"},
    {WK_PG_OID_FLOAT8, "inf", "Infinity"},
    {WK_PG_OID_FLOAT8, "123456789012345678901234567890", "1.2345678901234568e+29"},
    {WK_PG_OID_FLOAT4, "123456", "123456"},
    {WK_PG_OID_FLOAT4, "1e6", "1e+06"},
    {WK_PG_OID_FLOAT4, "1234567", "1.234567e+06"},
    {WK_PG_OID_FLOAT4, "0.1", "0.1"},
    {WK_PG_OID_FLOAT4, "3.4028235e38", "3.4028235e+38"},
    {WK_PG_OID_FLOAT4, "1.4e-45", "1e-45"},
    {WK_PG_OID_FLOAT4, "-inf", "-Infinity"},
    {WK_PG_OID_TEXT, "héllo wörld", "héllo wörld"},
    {WK_PG_OID_VARCHAR, "", ""},
    {WK_PG_OID_NAME, "pg_type", "pg_type"},
    {WK_PG_OID_CHAR, "a", "a"},
    {WK_PG_OID_CHAR, "\\351", "\\351"},
    {WK_PG_OID_CHAR, "", ""},
    {WK_PG_OID_BYTEA, "\\x780179", "\\x780179"},
    {WK_PG_OID_BYTEA, "\\x", "\\x"},
    {WK_PG_OID_BYTEA, "x\\001y\\\\", "\\x7801795c"},
    {WK_PG_OID_UUID, "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
    {WK_PG_OID_UUID, "{a0eebc999c0b4ef8bb6d6bb9bd380a11}", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
    {WK_PG_OID_JSON, "{\"a\": [1, 2.50]}", "{\"a\": [1, 2.50]}"},
    {WK_PG_OID_JSONB, "{\"a\": 1}", "{\"a\": 1}"},
    {WK_PG_OID_DATE, "2000-01-01", "2000-01-01"},
    {WK_PG_OID_DATE, "4713-01-01 BC", "4713-01-01 BC"},
    {WK_PG_OID_DATE, "5874897-12-31", "5874897-12-31"},
    {WK_PG_OID_DATE, "0001-01-01 BC", "0001-01-01 BC"},
    {WK_PG_OID_DATE, "2024-02-29", "2024-02-29"},
    {WK_PG_OID_DATE, "infinity", "infinity"},
    {WK_PG_OID_DATE, "-infinity", "-infinity"},
    {WK_PG_OID_TIME, "00:00:00", "00:00:00"},
    {WK_PG_OID_TIME, "24:00:00", "24:00:00"},
    {WK_PG_OID_TIME, "13:14:15.500", "13:14:15.5"},
    {WK_PG_OID_TIME, "23:59:59.999999", "23:59:59.999999"},
    {WK_PG_OID_TIMETZ, "12:00:00.5+05:30:10", "12:00:00.5+05:30:10"},
    {WK_PG_OID_TIMETZ, "12:00:00-08", "12:00:00-08"},
    {WK_PG_OID_TIMETZ, "00:00:00+00", "00:00:00+00"},
    {WK_PG_OID_TIMESTAMP, "2000-01-01 00:00:00", "2000-01-01 00:00:00"},
    {WK_PG_OID_TIMESTAMP, "1999-12-31T23:59:59.000001", "1999-12-31 23:59:59.000001"},
    {WK_PG_OID_TIMESTAMP, "294276-12-31 23:59:59.999999", "294276-12-31 23:59:59.999999"},
    {WK_PG_OID_TIMESTAMP, "4713-01-01 00:00:00 BC", "4713-01-01 00:00:00 BC"},
    {WK_PG_OID_TIMESTAMP, "infinity", "infinity"},
    {WK_PG_OID_TIMESTAMPTZ, "2000-01-01 00:00:00+00", "2000-01-01 00:00:00+00"},
    {WK_PG_OID_TIMESTAMPTZ, "2000-01-01 05:30:00+05:30", "2000-01-01 00:00:00+00"},
    {WK_PG_OID_TIMESTAMPTZ, "4713-01-01 00:00:00+00 BC", "4713-01-01 00:00:00+00 BC"},
    {WK_PG_OID_TIMESTAMPTZ, "-infinity", "-infinity"},
    {WK_PG_OID_INTERVAL, "-1 years -2 mons +3 days -04:05:06.5",
     "-1 years -2 mons +3 days -04:05:06.5"},
    {WK_PG_OID_INTERVAL, "1 mon -1 days", "1 mon -1 days"},
    {WK_PG_OID_INTERVAL, "-1 days +01:00:00", "-1 days +01:00:00"},
    {WK_PG_OID_INTERVAL, "00:00:00", "00:00:00"},
    {WK_PG_OID_INTERVAL, "1 year 1 day", "1 year 1 day"},
    {WK_PG_OID_INTERVAL, "14 mons", "1 year 2 mons"},
    {WK_PG_OID_INTERVAL, "-2562047788:00:54.775808", "-2562047788:00:54.775808"},
    {WK_PG_OID_INET, "192.168.1.0/24", "192.168.1.0/24"},
    {WK_PG_OID_INET, "192.168.1.5/32", "192.168.1.5"},
    {WK_PG_OID_INET, "::1", "::1"},
    {WK_PG_OID_INET, "::", "::"},
    {WK_PG_OID_INET, "::ffff:1.2.3.4", "::ffff:1.2.3.4"},
    {WK_PG_OID_INET, "::102:304", "::1.2.3.4"},
    {WK_PG_OID_INET, "::0.0.0.1", "::1"},
    {WK_PG_OID_INET, "0:0:0:0:0:1:0:0", "::1:0:0"},
    {WK_PG_OID_INET, "1:0:0:2:0:0:0:3", "1:0:0:2::3"},
    {WK_PG_OID_INET, "1:0:2:0:3:0:4:0", "1:0:2:0:3:0:4:0"},
    {WK_PG_OID_INET, "1:0:0:1::", "1:0:0:1::"},
    {WK_PG_OID_INET, "10.1.2.3/8", "10.1.2.3/8"},
    {WK_PG_OID_CIDR, "10.0.0.0/8", "10.0.0.0/8"},
    {WK_PG_OID_CIDR, "1.2.3.4/32", "1.2.3.4/32"},
    {WK_PG_OID_CIDR, "::/0", "::/0"},
    {WK_PG_OID_CIDR, "2001:db8::/32", "2001:db8::/32"},
};

WK_TEST(test_pg_scalars_round_trip_to_postgresql_text_in_both_formats)
{
    char why[512];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK_MSG(pgt_roundtrip(cases[i].oid, cases[i].in, cases[i].want, why, sizeof why),
                  "%s", why);
    }
}

WK_TEST(test_pg_scalars_binary_layouts_match_postgresql_send_functions)
{
    const uint8_t *b;
    size_t n;
    uint8_t want[64];
    size_t wn;
    CHECK_OK(pgt_from_text(WK_PG_OID_INET, WK_PG_BINARY, "1.2.3.4/24", &b, &n, NULL));
    wn = wk_test_hex("0218000401020304", want, sizeof want);
    CHECK_MEM(b, n, want, wn);
    CHECK_OK(pgt_from_text(WK_PG_OID_CIDR, WK_PG_BINARY, "10.0.0.0/8", &b, &n, NULL));
    wn = wk_test_hex("020801040a000000", want, sizeof want);
    CHECK_MEM(b, n, want, wn);
    CHECK_OK(pgt_from_text(WK_PG_OID_INTERVAL, WK_PG_BINARY, "1 mon 2 days 00:00:01", &b, &n,
                           NULL));
    wn = wk_test_hex("00000000000f42400000000200000001", want, sizeof want);
    CHECK_MEM(b, n, want, wn);
    CHECK_OK(pgt_from_text(WK_PG_OID_TIMETZ, WK_PG_BINARY, "12:00+05:30", &b, &n, NULL));
    wn = wk_test_hex("0000000a0eebb000ffffb2a8", want, sizeof want);
    CHECK_MEM(b, n, want, wn);
    CHECK_OK(pgt_from_text(WK_PG_OID_JSONB, WK_PG_BINARY, "{\"a\": 1}", &b, &n, NULL));
    wn = wk_test_hex("017b2261223a20317d", want, sizeof want);
    CHECK_MEM(b, n, want, wn);
    CHECK_OK(pgt_from_text(WK_PG_OID_CHAR, WK_PG_BINARY, "", &b, &n, NULL));
    wn = wk_test_hex("00", want, sizeof want);
    CHECK_MEM(b, n, want, wn);
    CHECK_OK(pgt_from_text(WK_PG_OID_DATE, WK_PG_BINARY, "1999-12-31", &b, &n, NULL));
    wn = wk_test_hex("ffffffff", want, sizeof want);
    CHECK_MEM(b, n, want, wn);
}

WK_TEST(test_pg_scalars_decode_into_c_kinds)
{
    uint8_t b4[4] = {0xff, 0xff, 0xff, 0xfe};
    int32_t i32;
    int64_t i64;
    double f64;
    CHECK_OK(pgt_decode(WK_PG_OID_INT4, WK_PG_BINARY, WK_PG_KIND_I32, b4, 4, &i32, NULL));
    CHECK_EQ(i32, -2);
    CHECK_OK(pgt_decode(WK_PG_OID_INT4, WK_PG_BINARY, WK_PG_KIND_I64, b4, 4, &i64, NULL));
    CHECK_EQ(i64, -2);
    CHECK_OK(pgt_decode(WK_PG_OID_INT4, WK_PG_BINARY, WK_PG_KIND_F64, b4, 4, &f64, NULL));
    CHECK(f64 == -2.0);
    uint32_t u32;
    CHECK_OK(pgt_decode(WK_PG_OID_OID, WK_PG_BINARY, WK_PG_KIND_U32, b4, 4, &u32, NULL));
    CHECK_EQ(u32, 4294967294u);
    int16_t i16;
    CHECK_OK(pgt_decode(WK_PG_OID_INT2, WK_PG_TEXT, WK_PG_KIND_I16, "-123", 4, &i16, NULL));
    CHECK_EQ(i16, -123);
    float f32;
    CHECK_OK(pgt_decode(WK_PG_OID_FLOAT4, WK_PG_TEXT, WK_PG_KIND_F32, "0.1", 3, &f32, NULL));
    CHECK(f32 == 0.1f);
    CHECK_OK(pgt_decode(WK_PG_OID_FLOAT8, WK_PG_TEXT, WK_PG_KIND_F64, "2.5e-3", 6, &f64, NULL));
    CHECK(f64 == 2.5e-3);
    int64_t ts;
    const char *t = "2000-01-02 00:00:01.5";
    CHECK_OK(pgt_decode(WK_PG_OID_TIMESTAMP, WK_PG_TEXT, WK_PG_KIND_TIMESTAMP, t, strlen(t), &ts,
                        NULL));
    CHECK_EQ(ts, INT64_C(86400000000) + 1500000);
    int32_t date;
    CHECK_OK(pgt_decode(WK_PG_OID_DATE, WK_PG_TEXT, WK_PG_KIND_DATE, "infinity", 8, &date, NULL));
    CHECK_EQ(date, INT32_MAX);
    wk_pg_timetz tz;
    t = "01:00:00+05:30";
    CHECK_OK(pgt_decode(WK_PG_OID_TIMETZ, WK_PG_TEXT, WK_PG_KIND_TIMETZ, t, strlen(t), &tz, NULL));
    CHECK_EQ(tz.offset_sec, 19800);
    CHECK_EQ(tz.usec, INT64_C(3600000000));
    wk_pg_interval iv;
    t = "1 year 2 mons 3 days 00:00:01";
    CHECK_OK(
        pgt_decode(WK_PG_OID_INTERVAL, WK_PG_TEXT, WK_PG_KIND_INTERVAL, t, strlen(t), &iv, NULL));
    CHECK_EQ(iv.months, 14);
    CHECK_EQ(iv.days, 3);
    CHECK_EQ(iv.usec, 1000000);
    wk_slice s;
    CHECK_OK(pgt_decode(WK_PG_OID_BYTEA, WK_PG_TEXT, WK_PG_KIND_BYTES, "\\x00ff", 6, &s, NULL));
    CHECK_MEM(s.ptr, s.len, "\x00\xff", 2);
    wk_pg_uuid u;
    t = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11";
    CHECK_OK(pgt_decode(WK_PG_OID_UUID, WK_PG_TEXT, WK_PG_KIND_UUID, t, strlen(t), &u, NULL));
    CHECK_EQ(u.b[0], 0xa0);
    CHECK_EQ(u.b[15], 0x11);
    wk_pg_inet in;
    CHECK_OK(pgt_decode(WK_PG_OID_INET, WK_PG_TEXT, WK_PG_KIND_INET, "::1/64", 6, &in, NULL));
    CHECK_EQ(in.family, 6);
    CHECK_EQ(in.bits, 64);
    CHECK_EQ(in.addr[15], 1);
    bool bv;
    CHECK_OK(pgt_decode(WK_PG_OID_BOOL, WK_PG_BINARY, WK_PG_KIND_BOOL, "\x01", 1, &bv, NULL));
    CHECK(bv);
}

WK_TEST(test_pg_scalars_refuse_kinds_they_do_not_produce)
{
    int16_t i16;
    CHECK(wk_pg_registry_find_decoder(pgt_reg(), WK_PG_OID_INT8, WK_PG_BINARY, WK_PG_KIND_I16) ==
          NULL);
    CHECK_STATUS(pgt_decode(WK_PG_OID_TEXT, WK_PG_TEXT, WK_PG_KIND_I16, "1", 1, &i16, NULL),
                 WK_ERR_NOT_FOUND);
}

typedef struct bad {
    wk_pg_oid oid;
    wk_pg_format fmt;
    const char *hex_or_text;
    wk_status want;
} bad;

static const bad bads[] = {
    {WK_PG_OID_BOOL, WK_PG_BINARY, "", WK_ERR_SYNTAX},
    {WK_PG_OID_BOOL, WK_PG_BINARY, "0101", WK_ERR_SYNTAX},
    {WK_PG_OID_INT2, WK_PG_BINARY, "000000", WK_ERR_SYNTAX},
    {WK_PG_OID_INT4, WK_PG_BINARY, "000000", WK_ERR_SYNTAX},
    {WK_PG_OID_INT8, WK_PG_BINARY, "00000000000000", WK_ERR_SYNTAX},
    {WK_PG_OID_FLOAT4, WK_PG_BINARY, "0000000000", WK_ERR_SYNTAX},
    {WK_PG_OID_FLOAT8, WK_PG_BINARY, "00", WK_ERR_SYNTAX},
    {WK_PG_OID_UUID, WK_PG_BINARY, "00112233445566778899aabbccddee", WK_ERR_SYNTAX},
    {WK_PG_OID_DATE, WK_PG_BINARY, "7ffffff0", WK_ERR_RANGE},
    {WK_PG_OID_TIME, WK_PG_BINARY, "ffffffffffffffff", WK_ERR_RANGE},
    {WK_PG_OID_TIME, WK_PG_BINARY, "000000141dd76001", WK_ERR_RANGE},
    {WK_PG_OID_TIMETZ, WK_PG_BINARY, "000000000000000000010000", WK_ERR_RANGE},
    {WK_PG_OID_TIMESTAMP, WK_PG_BINARY, "7ffffffffffffff0", WK_ERR_RANGE},
    {WK_PG_OID_INTERVAL, WK_PG_BINARY, "000000000000000000000000", WK_ERR_SYNTAX},
    {WK_PG_OID_INET, WK_PG_BINARY, "0418000401020304", WK_ERR_SYNTAX},
    {WK_PG_OID_INET, WK_PG_BINARY, "0221000401020304", WK_ERR_SYNTAX},
    {WK_PG_OID_INET, WK_PG_BINARY, "0218001001020304", WK_ERR_SYNTAX},
    {WK_PG_OID_INET, WK_PG_BINARY, "02180004010203", WK_ERR_SYNTAX},
    {WK_PG_OID_INET, WK_PG_BINARY, "021800", WK_ERR_TRUNCATED},
    {WK_PG_OID_CIDR, WK_PG_BINARY, "020801040a000001", WK_ERR_SYNTAX},
    {WK_PG_OID_JSONB, WK_PG_BINARY, "027b7d", WK_ERR_UNSUPPORTED},
    {WK_PG_OID_JSONB, WK_PG_BINARY, "", WK_ERR_TRUNCATED},
    {WK_PG_OID_TEXT, WK_PG_BINARY, "c328", WK_ERR_UTF8},
    {WK_PG_OID_CHAR, WK_PG_BINARY, "6162", WK_ERR_SYNTAX},
};

static const bad bad_texts[] = {
    {WK_PG_OID_BOOL, WK_PG_TEXT, "maybe", WK_ERR_SYNTAX},
    {WK_PG_OID_BOOL, WK_PG_TEXT, "o", WK_ERR_SYNTAX},
    {WK_PG_OID_INT2, WK_PG_TEXT, "32768", WK_ERR_SYNTAX},
    {WK_PG_OID_INT4, WK_PG_TEXT, "12a", WK_ERR_SYNTAX},
    {WK_PG_OID_INT4, WK_PG_TEXT, "", WK_ERR_SYNTAX},
    {WK_PG_OID_INT8, WK_PG_TEXT, "9223372036854775808", WK_ERR_SYNTAX},
    {WK_PG_OID_INT8, WK_PG_TEXT, "-", WK_ERR_SYNTAX},
    {WK_PG_OID_FLOAT8, WK_PG_TEXT, "1e999", WK_ERR_SYNTAX},
    {WK_PG_OID_FLOAT8, WK_PG_TEXT, "1.2.3", WK_ERR_SYNTAX},
    {WK_PG_OID_FLOAT8, WK_PG_TEXT, "e5", WK_ERR_SYNTAX},
    {WK_PG_OID_FLOAT4, WK_PG_TEXT, "1e39", WK_ERR_SYNTAX},
    {WK_PG_OID_DATE, WK_PG_TEXT, "2023-02-29", WK_ERR_RANGE},
    {WK_PG_OID_DATE, WK_PG_TEXT, "2023-13-01", WK_ERR_RANGE},
    {WK_PG_OID_DATE, WK_PG_TEXT, "4714-01-01 BC", WK_ERR_RANGE},
    {WK_PG_OID_DATE, WK_PG_TEXT, "9999999-01-01", WK_ERR_RANGE},
    {WK_PG_OID_DATE, WK_PG_TEXT, "2023/01/01", WK_ERR_SYNTAX},
    {WK_PG_OID_TIME, WK_PG_TEXT, "24:00:01", WK_ERR_RANGE},
    {WK_PG_OID_TIME, WK_PG_TEXT, "12:60", WK_ERR_SYNTAX},
    {WK_PG_OID_TIMETZ, WK_PG_TEXT, "12:00:00+16", WK_ERR_SYNTAX},
    {WK_PG_OID_TIMESTAMP, WK_PG_TEXT, "294277-01-01 00:00:00", WK_ERR_RANGE},
    {WK_PG_OID_TIMESTAMP, WK_PG_TEXT, "294277-12-31 23:59:59.999999", WK_ERR_RANGE},
    {WK_PG_OID_TIMESTAMPTZ, WK_PG_TEXT, "294277-12-31 23:59:59.999999+00", WK_ERR_RANGE},
    {WK_PG_OID_TIMESTAMP, WK_PG_TEXT, "2000-01-01 00:00:00 AD", WK_ERR_SYNTAX},
    {WK_PG_OID_INTERVAL, WK_PG_TEXT, "3 fortnights", WK_ERR_SYNTAX},
    {WK_PG_OID_INTERVAL, WK_PG_TEXT, "", WK_ERR_SYNTAX},
    {WK_PG_OID_INTERVAL, WK_PG_TEXT, "99999999999 years", WK_ERR_RANGE},
    {WK_PG_OID_INTERVAL, WK_PG_TEXT, "9999999999999:00:00", WK_ERR_SYNTAX},
    {WK_PG_OID_INET, WK_PG_TEXT, "1.2.3", WK_ERR_SYNTAX},
    {WK_PG_OID_INET, WK_PG_TEXT, "1.2.3.256", WK_ERR_SYNTAX},
    {WK_PG_OID_INET, WK_PG_TEXT, "1.2.3.4/33", WK_ERR_SYNTAX},
    {WK_PG_OID_INET, WK_PG_TEXT, "1::2::3", WK_ERR_SYNTAX},
    {WK_PG_OID_INET, WK_PG_TEXT, "1:2:3:4:5:6:7:8:9", WK_ERR_SYNTAX},
    {WK_PG_OID_CIDR, WK_PG_TEXT, "10.0.0.1/8", WK_ERR_SYNTAX},
    {WK_PG_OID_UUID, WK_PG_TEXT, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", WK_ERR_SYNTAX},
    {WK_PG_OID_UUID, WK_PG_TEXT, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-", WK_ERR_SYNTAX},
    {WK_PG_OID_BYTEA, WK_PG_TEXT, "\\x0", WK_ERR_SYNTAX},
    {WK_PG_OID_BYTEA, WK_PG_TEXT, "\\xzz", WK_ERR_SYNTAX},
    {WK_PG_OID_BYTEA, WK_PG_TEXT, "a\\9", WK_ERR_SYNTAX},
    {WK_PG_OID_CHAR, WK_PG_TEXT, "ab", WK_ERR_SYNTAX},
};

WK_TEST(test_pg_scalars_reject_hostile_binary_with_a_message)
{
    for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
        uint8_t buf[64];
        size_t n = wk_test_hex(bads[i].hex_or_text, buf, sizeof buf);
        CHECK(n != (size_t)-1);
        /* Copy into an exact-size heap block so a read past the end trips ASan. */
        uint8_t *exact = malloc(n ? n : 1);
        memcpy(exact, buf, n);
        const char *text;
        wk_error err = {0};
        wk_status st = pgt_to_text(bads[i].oid, bads[i].fmt, exact, n, &text, &err);
        free(exact);
        CHECK_MSG(st == bads[i].want, "case %zu (oid %u): got %s, want %s", i, bads[i].oid,
                  wk_status_str(st), wk_status_str(bads[i].want));
        CHECK_MSG(err.msg != NULL && err.code == st, "case %zu: no error message", i);
    }
}

WK_TEST(test_pg_scalars_reject_invalid_text_syntax_with_a_message)
{
    for (size_t i = 0; i < sizeof bad_texts / sizeof bad_texts[0]; i++) {
        const char *s = bad_texts[i].hex_or_text;
        size_t n = strlen(s);
        char *exact = malloc(n ? n : 1);
        memcpy(exact, s, n);
        const char *text;
        wk_error err = {0};
        wk_status st = pgt_to_text(bad_texts[i].oid, WK_PG_TEXT, exact, n,
                                   &text, &err);
        free(exact);
        CHECK_MSG(st == bad_texts[i].want, "case %zu ('%s', oid %u): got %s, want %s", i, s,
                  bad_texts[i].oid, wk_status_str(st), wk_status_str(bad_texts[i].want));
        CHECK_MSG(err.msg != NULL, "case %zu: no error message", i);
    }
}

/* ---- events ---- */

typedef struct rec {
    wk_event ev[16];
    char text[16][64];
    int n;
} rec;

static wk_status rec_event(void *self, const wk_event *ev)
{
    rec *r = self;
    if (r->n == 16) {
        return WK_ERR_LIMIT;
    }
    r->ev[r->n] = *ev;
    if (ev->type == WK_EV_STR || ev->type == WK_EV_RAWNUM) {
        size_t len = ev->v.str.len < 63 ? ev->v.str.len : 63;
        memcpy(r->text[r->n], ev->v.str.ptr, len);
        r->text[r->n][len] = 0;
    }
    r->n++;
    return WK_OK;
}

static wk_status rec_error(const void *self, wk_error *err)
{
    (void)self;
    err->code = WK_ERR_LIMIT;
    return err->code;
}

static wk_status events_of(wk_pg_oid oid, const char *text, unsigned flags, rec *r)
{
    memset(r, 0, sizeof *r);
    wk_sink sink = {rec_event, rec_error, r};
    wk_pg_events ev = {&sink, flags, NULL, 0};
    const uint8_t *bin;
    size_t n;
    wk_status st = pgt_from_text(oid, WK_PG_BINARY, text, &bin, &n, NULL);
    if (st != WK_OK) {
        return st;
    }
    uint8_t copy[256];
    memcpy(copy, bin, n);
    return pgt_decode(oid, WK_PG_BINARY, WK_PG_KIND_EVENTS, copy, n, &ev, NULL);
}

WK_TEST(test_pg_scalars_json_numbers_become_native_numbers_only_when_asked_and_when_they_fit)
{
    rec r;
    const char *doc = "[1, -2, 2.50, 18446744073709551615, 18446744073709551616, 1e400, "
                      "1e-400, 0.0, -0, 1E2]";
    /* by default: exact text */
    CHECK_OK(events_of(WK_PG_OID_JSONB, doc, 0, &r));
    CHECK_EQ(r.n, 12);
    CHECK_EQ(r.ev[1].type, WK_EV_RAWNUM);
    CHECK_STR(r.text[3], "2.50");
    /* asked for: integers that fit 64 bits, finite doubles; the rest stays exact text */
    CHECK_OK(events_of(WK_PG_OID_JSONB, doc, WK_PG_EV_JSON_NUMBERS, &r));
    CHECK_EQ(r.n, 12);
    CHECK_EQ(r.ev[1].type, WK_EV_UINT);
    CHECK_EQ(r.ev[1].v.u, 1u);
    CHECK_EQ(r.ev[2].type, WK_EV_INT);
    CHECK_EQ(r.ev[2].v.i, -2);
    CHECK_EQ(r.ev[3].type, WK_EV_FLOAT);
    CHECK(r.ev[3].v.f == 2.5);
    CHECK_EQ(r.ev[4].type, WK_EV_UINT);
    CHECK_EQ(r.ev[4].v.u, UINT64_MAX);
    CHECK_EQ(r.ev[5].type, WK_EV_FLOAT); /* past 64 bits: the nearest double */
    CHECK(r.ev[5].v.f == 18446744073709551616.0);
    CHECK_EQ(r.ev[6].type, WK_EV_RAWNUM); /* beyond a double: exact text */
    CHECK_STR(r.text[6], "1e400");
    CHECK_EQ(r.ev[7].type, WK_EV_RAWNUM); /* an underflow is not a zero */
    CHECK_EQ(r.ev[8].type, WK_EV_FLOAT);  /* a written zero is */
    CHECK(r.ev[8].v.f == 0.0);
    CHECK_EQ(r.ev[9].type, WK_EV_FLOAT); /* the JSON reader's own rules: -0 is a double */
    CHECK(r.ev[9].v.f == 0.0 && signbit(r.ev[9].v.f));
    CHECK_EQ(r.ev[10].type, WK_EV_FLOAT); /* an exponent makes a double */
    CHECK(r.ev[10].v.f == 100.0);
    CHECK_EQ(r.ev[11].type, WK_EV_END);
}

WK_TEST(test_pg_scalars_emit_events_with_postgresql_number_text)
{
    rec r;
    CHECK_OK(events_of(WK_PG_OID_FLOAT8, "1e100", WK_PG_EV_RAW_FLOATS, &r));
    CHECK_EQ(r.ev[0].type, WK_EV_RAWNUM);
    CHECK_STR(r.text[0], "1e+100");
    CHECK_OK(events_of(WK_PG_OID_FLOAT8, "1e100", 0, &r));
    CHECK_EQ(r.ev[0].type, WK_EV_FLOAT);
    CHECK(r.ev[0].v.f == 1e100);
    CHECK_OK(events_of(WK_PG_OID_FLOAT4, "0.1", 0, &r));
    CHECK(r.ev[0].f32);
    CHECK_OK(events_of(WK_PG_OID_FLOAT8, "NaN", WK_PG_EV_RAW_FLOATS, &r));
    CHECK_EQ(r.ev[0].type, WK_EV_STR);
    CHECK_STR(r.text[0], "NaN");
    CHECK_OK(events_of(WK_PG_OID_NUMERIC, "-12.3400", 0, &r));
    CHECK_EQ(r.ev[0].type, WK_EV_RAWNUM);
    CHECK_STR(r.text[0], "-12.3400");
    CHECK_OK(events_of(WK_PG_OID_NUMERIC, "-Infinity", 0, &r));
    CHECK_EQ(r.ev[0].type, WK_EV_STR);
    CHECK_OK(events_of(WK_PG_OID_INT8, "-5", 0, &r));
    CHECK_EQ(r.ev[0].type, WK_EV_INT);
    CHECK_EQ(r.ev[0].v.i, -5);
    CHECK_OK(events_of(WK_PG_OID_INT2, "5", 0, &r));
    CHECK_EQ(r.ev[0].type, WK_EV_UINT);
    CHECK_OK(events_of(WK_PG_OID_BOOL, "t", 0, &r));
    CHECK_EQ(r.ev[0].type, WK_EV_BOOL);
    CHECK(r.ev[0].v.b);
    CHECK_OK(events_of(WK_PG_OID_TIMESTAMPTZ, "2001-02-03 04:05:06+00", 0, &r));
    CHECK_EQ(r.ev[0].type, WK_EV_STR);
    CHECK_STR(r.text[0], "2001-02-03 04:05:06+00");
}

WK_TEST(test_pg_scalars_decode_into_value_trees)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    const uint8_t *bin;
    size_t n;
    CHECK_OK(pgt_from_text(WK_PG_OID_NUMERIC, WK_PG_BINARY, "3.14", &bin, &n, NULL));
    const wk_pg_decoder *d =
        wk_pg_registry_find_decoder(pgt_reg(), WK_PG_OID_NUMERIC, WK_PG_BINARY, WK_PG_KIND_VALUE);
    CHECK(d != NULL);
    wk_value v;
    CHECK_OK(wk_pg_decode(d, bin, n, &v, &a, NULL));
    CHECK_EQ(v.type, WK_VAL_RAWNUM);
    CHECK_MEM(v.u.str, v.len, "3.14", 4);
    CHECK_STATUS(wk_pg_decode(d, bin, n, &v, NULL, NULL), WK_ERR_ARG);
    wk_arena_free(&a);
}

/* ---- issue 29: every date/time type's whole range, both ends ---------------------------- */

/* PostgreSQL 15's ranges: date 4714-11-24 BC to 5874897-12-31, timestamp(tz) 4714-11-24
 * 00:00:00 BC to 294276-12-31 23:59:59.999999, and infinity; time 00:00 to 24:00; timetz
 * with displacements up to 15:59:59; interval to its int64/int32 fields' ends. Text in and
 * out, and through binary, alone and in arrays. */
static const struct {
    wk_pg_oid oid;
    const char *in, *want;
} date_ends[] = {
    {WK_PG_OID_DATE, "4714-11-24 BC", "4714-11-24 BC"},
    {WK_PG_OID_DATE, "4714-12-31 BC", "4714-12-31 BC"},
    {WK_PG_OID_DATE, "4713-01-01 BC", "4713-01-01 BC"},
    {WK_PG_OID_DATE, "5874897-12-31", "5874897-12-31"},
    {WK_PG_OID_DATE, "infinity", "infinity"},
    {WK_PG_OID_DATE, "-infinity", "-infinity"},
    {WK_PG_OID_TIMESTAMP, "4714-11-24 00:00:00 BC", "4714-11-24 00:00:00 BC"},
    {WK_PG_OID_TIMESTAMP, "4714-12-31 23:59:59.999999 BC", "4714-12-31 23:59:59.999999 BC"},
    {WK_PG_OID_TIMESTAMP, "294276-12-31 23:59:59.999999", "294276-12-31 23:59:59.999999"},
    {WK_PG_OID_TIMESTAMP, "-infinity", "-infinity"},
    {WK_PG_OID_TIMESTAMP, "infinity", "infinity"},
    {WK_PG_OID_TIMESTAMPTZ, "4714-11-24 00:00:00+00 BC", "4714-11-24 00:00:00+00 BC"},
    {WK_PG_OID_TIMESTAMPTZ, "4714-11-24 00:00:00-05 BC", "4714-11-24 05:00:00+00 BC"},
    {WK_PG_OID_TIMESTAMPTZ, "4714-12-01 12:30:00+00 BC", "4714-12-01 12:30:00+00 BC"},
    {WK_PG_OID_TIMESTAMPTZ, "294276-12-31 23:59:59.999999+00",
     "294276-12-31 23:59:59.999999+00"},
    {WK_PG_OID_TIMESTAMPTZ, "infinity", "infinity"},
    {WK_PG_OID_TIMESTAMPTZ, "-infinity", "-infinity"},
    {WK_PG_OID_TIME, "00:00:00", "00:00:00"},
    {WK_PG_OID_TIME, "24:00:00", "24:00:00"},
    {WK_PG_OID_TIMETZ, "00:00:00+15:59:59", "00:00:00+15:59:59"},
    {WK_PG_OID_TIMETZ, "24:00:00-15:59:59", "24:00:00-15:59:59"},
    {WK_PG_OID_INTERVAL, "178956970 years 7 mons 2147483647 days 2562047788:00:54.775807",
     "178956970 years 7 mons 2147483647 days 2562047788:00:54.775807"},
    {WK_PG_OID_INTERVAL, "-178956970 years -8 mons -2147483648 days -2562047788:00:54.775808",
     "-178956970 years -8 mons -2147483648 days -2562047788:00:54.775808"},
    {1182, "{\"4714-11-24 BC\",\"4714-12-31 BC\",5874897-12-31,infinity,-infinity}",
     "{\"4714-11-24 BC\",\"4714-12-31 BC\",5874897-12-31,infinity,-infinity}"},
    {1115, "{\"4714-11-24 00:00:00 BC\",\"294276-12-31 23:59:59.999999\",-infinity}",
     "{\"4714-11-24 00:00:00 BC\",\"294276-12-31 23:59:59.999999\",-infinity}"},
    {1185, "{\"4714-11-24 00:00:00+00 BC\",\"294276-12-31 23:59:59.999999+00\",infinity}",
     "{\"4714-11-24 00:00:00+00 BC\",\"294276-12-31 23:59:59.999999+00\",infinity}"},
};

WK_TEST(test_pg_datetime_types_take_their_whole_range_at_both_ends)
{
    char why[512];
    for (size_t i = 0; i < sizeof date_ends / sizeof date_ends[0]; i++) {
        CHECK_MSG(pgt_roundtrip(date_ends[i].oid, date_ends[i].in, date_ends[i].want, why,
                                sizeof why),
                  "%s", why);
    }
    /* every day of the first BC year's last weeks (the ones once refused), as date and
     * timestamp */
    for (int m = 11; m <= 12; m++) {
        for (int d = m == 11 ? 24 : 1; d <= (m == 11 ? 30 : 31); d++) {
            char in[64];
            snprintf(in, sizeof in, "4714-%02d-%02d BC", m, d);
            CHECK_MSG(pgt_roundtrip(WK_PG_OID_DATE, in, in, why, sizeof why), "%s", why);
            snprintf(in, sizeof in, "4714-%02d-%02d 12:00:00 BC", m, d);
            CHECK_MSG(pgt_roundtrip(WK_PG_OID_TIMESTAMP, in, in, why, sizeof why), "%s", why);
        }
    }
    /* the binary values at the ends are PostgreSQL's: days and microseconds from 2000-01-01 */
    const uint8_t *bin;
    size_t n;
    CHECK_OK(pgt_from_text(WK_PG_OID_DATE, WK_PG_BINARY, "4714-11-24 BC", &bin, &n, NULL));
    CHECK(n == 4 && (int32_t)((uint32_t)bin[0] << 24 | (uint32_t)bin[1] << 16 |
                              (uint32_t)bin[2] << 8 | bin[3]) == -2451545);
    CHECK_OK(pgt_from_text(WK_PG_OID_TIMESTAMP, WK_PG_BINARY, "4714-11-24 00:00:00 BC", &bin,
                           &n, NULL));
    uint64_t ts = 0;
    for (size_t i = 0; i < 8 && n == 8; i++) {
        ts = ts << 8 | bin[i];
    }
    CHECK(n == 8 && (int64_t)ts == INT64_C(-211813488000000000));
    /* one step past each end is refused, as PostgreSQL refuses it */
    static const struct {
        wk_pg_oid oid;
        const char *in;
    } past[] = {
        {WK_PG_OID_DATE, "4714-11-23 BC"},
        {WK_PG_OID_DATE, "5874898-01-01"},
        {WK_PG_OID_TIMESTAMP, "4714-11-23 23:59:59.999999 BC"},
        {WK_PG_OID_TIMESTAMP, "294277-01-01 00:00:00"},
        {WK_PG_OID_TIMESTAMPTZ, "4714-11-24 00:00:00+01 BC"},
        {WK_PG_OID_TIMESTAMPTZ, "294276-12-31 23:59:59.999999-01"},
        {WK_PG_OID_TIME, "24:00:00.000001"},
    };
    for (size_t i = 0; i < sizeof past / sizeof past[0]; i++) {
        for (int f = 0; f < 2; f++) {
            wk_error err = {0};
            wk_status st = pgt_from_text(past[i].oid, (wk_pg_format)f, past[i].in, &bin, &n, &err);
            CHECK_MSG(st == WK_ERR_RANGE, "'%s' (%s): %s", past[i].in, f ? "binary" : "text",
                      wk_status_str(st));
        }
    }
}
