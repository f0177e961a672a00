/*
 * MessagePack's byte layout on the reading side, as a fragment of a function body: the value
 * that starts at `p` (p < end) is decoded, checked, and handed to the includer's actions.
 * It is included by the token decoder (wk__mp_token, mp_token.h: the actions fill an event)
 * and by the tree build loop (mp_build_loop.h: the actions write the node in place), so the
 * format's rules are written once and each caller's actions are compiled into them (no event
 * in between for the tree).
 *
 * Checks made here: the header and any payload fit in [p, end); a container's count is no
 * larger than the bytes left (a map's 2n elements each need a byte); 0xc1 is an error; a
 * timestamp extension (type -1) has 4, 8 or 12 bytes and nanoseconds below 1e9.
 *
 * In scope when included: `const uint8_t *p` (the value's first byte, p < end) and
 * `const uint8_t *end`. Before a success action, `p` is past the header and any str/bin/ext
 * payload (a container's elements are left to the includer). The includer defines, and each
 * must leave the fragment (return or goto):
 *   MP_TC_NIL()                 nil
 *   MP_TC_BOOL(x)               bool x
 *   MP_TC_UINT(u)               a non-negative integer (whatever its encoding: equal numbers
 *                               get the same action)
 *   MP_TC_INT(i)                a negative integer (int64_t)
 *   MP_TC_FLOAT(d, f32)         a double, widened exactly from a float 32 when f32
 *   MP_TC_STR(s, n), MP_TC_BIN(s, n)        n bytes at s (const uint8_t *)
 *   MP_TC_EXT(type, s, n)       an extension of type `type` (int8_t, not -1), n bytes at s
 *   MP_TC_TS(sec, nsec)         a timestamp extension (int64_t, uint32_t below 1e9)
 *   MP_TC_ARRAY(n), MP_TC_MAP(n)  a container header of n elements (pairs), n checked
 *   MP_TC_FAIL(st, msg)         WK_ERR_TRUNCATED or WK_ERR_SYNTAX with a static message
 * The fragment's labels are function-wide: include it once per function. The macros are
 * #undef'd at its end.
 */
#if !defined(MP_TC_NIL) || !defined(MP_TC_BOOL) || !defined(MP_TC_UINT) || \
    !defined(MP_TC_INT) || !defined(MP_TC_FLOAT) || !defined(MP_TC_STR) || \
    !defined(MP_TC_BIN) || !defined(MP_TC_EXT) || !defined(MP_TC_TS) || \
    !defined(MP_TC_ARRAY) || !defined(MP_TC_MAP) || !defined(MP_TC_FAIL)
#error "mp_token_cases.h is a function body fragment: see its opening comment"
#endif

{
    uint8_t tc_b = *p++;
    size_t tc_left = (size_t)(end - p); /* bytes after the type byte */
    uint32_t tc_n;
    int64_t tc_i;
    /* One jump by the type byte (a table of 256, no range tests in turn): the one-byte forms
     * by range (positive fixint, fixmap, fixarray, fixstr, negative fixint), the rest by
     * their first byte, each checking that its fixed-size header is there (`tc_left` bytes
     * follow the type byte) before reading it. Case ranges are a GCC/Clang extension. */
    switch (tc_b) {
    case 0x00 ... 0x7f: MP_TC_UINT(tc_b);
    case 0x80 ... 0x8f:
        tc_n = tc_b & 0x0fu;
        goto tc_map;
    case 0x90 ... 0x9f:
        tc_n = tc_b & 0x0fu;
        goto tc_array;
    case 0xa0 ... 0xbf:
        tc_n = tc_b & 0x1fu;
        goto tc_str;
    case 0xe0 ... 0xff: MP_TC_INT((int8_t)tc_b);
    case 0xc0: MP_TC_NIL();
    case 0xc2:
    case 0xc3: MP_TC_BOOL(tc_b == 0xc3);
    case 0xc4: /* bin 8, 16, 32: a length, then the bytes (checked at tc_bin:) */
        if (tc_left < 1) {
            goto tc_truncated;
        }
        tc_n = p[0];
        p += 1;
        goto tc_bin;
    case 0xc5:
        if (tc_left < 2) {
            goto tc_truncated;
        }
        tc_n = wk__mp_load16(p);
        p += 2;
        goto tc_bin;
    case 0xc6:
        if (tc_left < 4) {
            goto tc_truncated;
        }
        tc_n = wk__mp_load32(p);
        p += 4;
        goto tc_bin;
    case 0xc7: /* ext 8, 16, 32: a length, then the type byte and the data (at tc_ext:) */
        if (tc_left < 1) {
            goto tc_truncated;
        }
        tc_n = p[0];
        p += 1;
        goto tc_ext;
    case 0xc8:
        if (tc_left < 2) {
            goto tc_truncated;
        }
        tc_n = wk__mp_load16(p);
        p += 2;
        goto tc_ext;
    case 0xc9:
        if (tc_left < 4) {
            goto tc_truncated;
        }
        tc_n = wk__mp_load32(p);
        p += 4;
        goto tc_ext;
    case 0xca: { /* float 32, widened exactly; writers keep the width */
        if (tc_left < 4) {
            goto tc_truncated;
        }
        uint32_t tc_bits = wk__mp_load32(p);
        float tc_f;
        memcpy(&tc_f, &tc_bits, 4);
        p += 4;
        MP_TC_FLOAT((double)tc_f, true);
    }
    case 0xcb: {
        if (tc_left < 8) {
            goto tc_truncated;
        }
        uint64_t tc_bits = wk__mp_load64(p);
        double tc_d;
        memcpy(&tc_d, &tc_bits, 8);
        p += 8;
        MP_TC_FLOAT(tc_d, false);
    }
    case 0xcc: /* uint 8, 16, 32, 64 */
        if (tc_left < 1) {
            goto tc_truncated;
        }
        p += 1;
        MP_TC_UINT(p[-1]);
    case 0xcd:
        if (tc_left < 2) {
            goto tc_truncated;
        }
        p += 2;
        MP_TC_UINT(wk__mp_load16(p - 2));
    case 0xce:
        if (tc_left < 4) {
            goto tc_truncated;
        }
        p += 4;
        MP_TC_UINT(wk__mp_load32(p - 4));
    case 0xcf:
        if (tc_left < 8) {
            goto tc_truncated;
        }
        p += 8;
        MP_TC_UINT(wk__mp_load64(p - 8));
    case 0xd0: /* int 8, 16, 32, 64: sign-extended, then sorted by sign at tc_sint: */
        if (tc_left < 1) {
            goto tc_truncated;
        }
        tc_i = (int8_t)p[0];
        p += 1;
        goto tc_sint;
    case 0xd1:
        if (tc_left < 2) {
            goto tc_truncated;
        }
        tc_i = (int16_t)wk__mp_load16(p);
        p += 2;
        goto tc_sint;
    case 0xd2:
        if (tc_left < 4) {
            goto tc_truncated;
        }
        tc_i = (int32_t)wk__mp_load32(p);
        p += 4;
        goto tc_sint;
    case 0xd3:
        if (tc_left < 8) {
            goto tc_truncated;
        }
        tc_i = (int64_t)wk__mp_load64(p);
        p += 8;
        goto tc_sint;
    case 0xd4: /* fixext 1, 2, 4, 8, 16: the type byte, then that many data bytes */
        tc_n = 1;
        goto tc_ext;
    case 0xd5: tc_n = 2; goto tc_ext;
    case 0xd6: tc_n = 4; goto tc_ext;
    case 0xd7: tc_n = 8; goto tc_ext;
    case 0xd8: tc_n = 16; goto tc_ext;
    case 0xd9: /* str 8, 16, 32 */
        if (tc_left < 1) {
            goto tc_truncated;
        }
        tc_n = p[0];
        p += 1;
        goto tc_str;
    case 0xda:
        if (tc_left < 2) {
            goto tc_truncated;
        }
        tc_n = wk__mp_load16(p);
        p += 2;
        goto tc_str;
    case 0xdb:
        if (tc_left < 4) {
            goto tc_truncated;
        }
        tc_n = wk__mp_load32(p);
        p += 4;
        goto tc_str;
    case 0xdc: /* array 16, 32 and map 16, 32: a count; the elements follow */
        if (tc_left < 2) {
            goto tc_truncated;
        }
        tc_n = wk__mp_load16(p);
        p += 2;
        goto tc_array;
    case 0xdd:
        if (tc_left < 4) {
            goto tc_truncated;
        }
        tc_n = wk__mp_load32(p);
        p += 4;
        goto tc_array;
    case 0xde:
        if (tc_left < 2) {
            goto tc_truncated;
        }
        tc_n = wk__mp_load16(p);
        p += 2;
        goto tc_map;
    case 0xdf:
        if (tc_left < 4) {
            goto tc_truncated;
        }
        tc_n = wk__mp_load32(p);
        p += 4;
        goto tc_map;
    default: /* 0xc1 */
        MP_TC_FAIL(WK_ERR_SYNTAX, WK_MP_MSG_C1);
    }
    /* The shared tails. A payload must lie wholly within the input; a container's count is
     * checked against the bytes left (one byte at least per element, two per pair), which
     * bounds what a builder allocates for it by the input's size. */
tc_sint:
    if (tc_i >= 0) {
        MP_TC_UINT((uint64_t)tc_i);
    }
    MP_TC_INT(tc_i);
tc_str:
    if (WK__UNLIKELY((size_t)(end - p) < tc_n)) {
        MP_TC_FAIL(WK_ERR_TRUNCATED, WK_MP_MSG_STR_LEN);
    }
    p += tc_n;
    MP_TC_STR(p - tc_n, tc_n);
tc_bin:
    if (WK__UNLIKELY((size_t)(end - p) < tc_n)) {
        MP_TC_FAIL(WK_ERR_TRUNCATED, WK_MP_MSG_BIN_LEN);
    }
    p += tc_n;
    MP_TC_BIN(p - tc_n, tc_n);
tc_ext: /* the type byte, then tc_n data bytes; type -1 is a timestamp */
    if (WK__UNLIKELY((size_t)(end - p) < 1 || (size_t)(end - p) - 1 < tc_n)) {
        if ((size_t)(end - p) < 1) {
            goto tc_truncated;
        }
        MP_TC_FAIL(WK_ERR_TRUNCATED, WK_MP_MSG_EXT_LEN);
    }
    p += 1 + (size_t)tc_n;
    if ((int8_t)p[-1 - (ptrdiff_t)tc_n] != WK_MP_EXT_TIMESTAMP) {
        MP_TC_EXT((int8_t)p[-1 - (ptrdiff_t)tc_n], p - tc_n, tc_n);
    } else {
        /* the timestamp's three forms: 32-bit seconds; 30-bit nanoseconds and 34-bit
         * seconds in one word; 32-bit nanoseconds and 64-bit seconds */
        const uint8_t *tc_d = p - tc_n;
        int64_t tc_sec;
        uint32_t tc_nsec;
        if (tc_n == 4) {
            tc_sec = (int64_t)wk__mp_load32(tc_d);
            tc_nsec = 0;
        } else if (tc_n == 8) {
            uint64_t tc_x = wk__mp_load64(tc_d);
            tc_nsec = (uint32_t)(tc_x >> 34);
            tc_sec = (int64_t)(tc_x & 0x3ffffffffull);
        } else if (tc_n == 12) {
            tc_nsec = wk__mp_load32(tc_d);
            tc_sec = (int64_t)wk__mp_load64(tc_d + 4);
        } else {
            MP_TC_FAIL(WK_ERR_SYNTAX, WK_MP_MSG_TS_LEN);
        }
        if (tc_nsec > 999999999u) {
            MP_TC_FAIL(WK_ERR_SYNTAX, WK_MP_MSG_TS_NSEC);
        }
        MP_TC_TS(tc_sec, tc_nsec);
    }
tc_array:
    if (WK__UNLIKELY((size_t)(end - p) < tc_n)) {
        MP_TC_FAIL(WK_ERR_TRUNCATED, WK_MP_MSG_ARRAY_COUNT);
    }
    MP_TC_ARRAY(tc_n);
tc_map:
    if (WK__UNLIKELY((size_t)(end - p) / 2 < tc_n)) {
        MP_TC_FAIL(WK_ERR_TRUNCATED, WK_MP_MSG_MAP_COUNT);
    }
    MP_TC_MAP(tc_n);
tc_truncated:
    MP_TC_FAIL(WK_ERR_TRUNCATED, WK_MP_MSG_TRUNCATED);
}

#undef MP_TC_NIL
#undef MP_TC_BOOL
#undef MP_TC_UINT
#undef MP_TC_INT
#undef MP_TC_FLOAT
#undef MP_TC_STR
#undef MP_TC_BIN
#undef MP_TC_EXT
#undef MP_TC_TS
#undef MP_TC_ARRAY
#undef MP_TC_MAP
#undef MP_TC_FAIL
