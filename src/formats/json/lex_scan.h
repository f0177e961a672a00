/*
 * The JSON lexer's wide scans, a template included by lex.h once per instruction set:
 * whitespace runs, the plain part of a string, UTF-8 runs, and the string scan built on them.
 * Every instance has the same contract and accepts exactly the same inputs; only the width of
 * a step differs. The includer defines
 *   WK__LEX(name)  the instance's name for `name` (name itself for the baseline, name_avx2)
 *   WK__LEX_FN     the storage and target attributes of its functions (static inline ...)
 *   WK__LEX_HOT    the same, always inlined (the string scans, at each call site)
 *   WK__LEX_AVX2   1 for the AVX2 instance (32-byte steps, byte classes by table shuffle),
 *                  0 for the baseline (16-byte SSE2 steps on x86-64, bytes elsewhere).
 * Trade-off: the AVX2 instance can only be inlined into code compiled for AVX2, so each parser
 * loop is instantiated per instruction set too and chosen once per call (simd.c).
 * No read ever reaches `end`: a wide step runs only while its whole width is left, and a
 * narrower step (16 bytes, then single bytes) finishes.
 * Flow: bytes -> these scans -> the lexer's steps (lex.h) -> the parser loops, each compiled
 * with the instance of its instruction set.
 */
#if !defined(WK__LEX) || !defined(WK__LEX_FN) || !defined(WK__LEX_HOT) || !defined(WK__LEX_AVX2)
#error "json/lex_scan.h is a template: include json/lex.h"
#endif

/* The whitespace run at p (p < end, *p <= ' '): 32 bytes a step with AVX2 (a nibble table
 * shuffle and one compare find the bytes that are not whitespace), 16 with SSE2 (four
 * compares), byte by byte for the rest; the run's end by a predicted jump (wk__advance).
 * Never reads at or past `end`. Always inlined: out of line, its call, return and
 * vzeroupper took a fifth of an indented parse's time (twitter.json; issue 26). */
WK__LEX_HOT const uint8_t *WK__LEX(wk__json_skip_ws_run)(const uint8_t *p, const uint8_t *end)
{
#if WK__LEX_AVX2
    /* ' ' '\t' '\n' '\r' each sit at their low nibble; the other entries are 0x80, which no
     * byte below 0x80 equals; bytes >= 0x80 shuffle to 0 and differ from themselves. */
    const char o = (char)0x80;
    const __m256i table = _mm256_setr_epi8(' ', o, o, o, o, o, o, o, o, '\t', '\n', o, o, '\r', o,
                                           o, ' ', o, o, o, o, o, o, o, o, '\t', '\n', o, o, '\r',
                                           o, o);
    while (end - p >= 32) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)p);
        unsigned other =
            ~(unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_shuffle_epi8(table, x), x));
        if (other != 0) {
            return wk__advance(p, (unsigned)__builtin_ctz(other));
        }
        p += 32;
    }
    if (end - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i t16 = _mm256_castsi256_si128(table);
        unsigned other =
            (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_shuffle_epi8(t16, x), x)) ^ 0xFFFFu;
        if (other != 0) {
            return wk__advance(p, (unsigned)__builtin_ctz(other));
        }
        p += 16;
    }
#elif defined(__SSE2__)
    if (*p == '\n' && end - p >= 16) {
        /* indented text: a line break and spaces, found with one compare; the byte after
         * them ends the run unless it is whitespace too (then the general step goes on) */
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        unsigned spaces = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(' ')));
        unsigned k = (unsigned)__builtin_ctz(~(spaces | 1u));
        if (k < 16 && p[k] > ' ') {
            return wk__advance(p, k);
        }
        p += k < 16 ? k : 16;
    }
    const __m128i sp = _mm_set1_epi8(' ');
    const __m128i nl = _mm_set1_epi8('\n');
    const __m128i cr = _mm_set1_epi8('\r');
    const __m128i tab = _mm_set1_epi8('\t');
    while (end - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, sp), _mm_cmpeq_epi8(x, nl)),
                                  _mm_or_si128(_mm_cmpeq_epi8(x, cr), _mm_cmpeq_epi8(x, tab)));
        unsigned other = (unsigned)_mm_movemask_epi8(ws) ^ 0xFFFFu;
        if (other != 0) {
            return wk__advance(p, (unsigned)__builtin_ctz(other));
        }
        p += 16;
    }
#endif
    while (p < end && wk__json_is_ws(*p)) {
        p++;
    }
    return p;
}

/* The first byte at or after p that is not JSON whitespace, or `end`. The common cases, no
 * whitespace and a single space (after ':' or ',' in indented text), take one or two compares.
 * Always inlined: GCC -O2 kept it out of line in the schema JSON decoder, a call per
 * separator, measured as instructions per seed record (wirekit bench --suite schema
 * --callgrind). */
WK__LEX_HOT const uint8_t *WK__LEX(wk__json_skip_ws)(const uint8_t *p, const uint8_t *end)
{
    if (WK__LIKELY(p < end && *p > ' ')) {
        return p;
    }
    if (p < end && *p == ' ' && end - p > 1 && p[1] > ' ') {
        return p + 1;
    }
    return p < end ? WK__LEX(wk__json_skip_ws_run)(p, end) : p;
}

/* The same where indented text has a line break and indentation (after '{', '[' and ','):
 * no whitespace in one compare, else straight to the run. */
WK__LEX_HOT const uint8_t *WK__LEX(wk__json_skip_ws_indent)(const uint8_t *p, const uint8_t *end)
{
    if (WK__LIKELY(p < end && *p > ' ')) {
        return p;
    }
    return p < end ? WK__LEX(wk__json_skip_ws_run)(p, end) : p;
}

/* After a three-byte sequence (CJK text): skips further three-byte sequences, up to ten per
 * 32-byte step (AVX2 instance) or five per 16-byte step (SSE2 baseline) while that many bytes
 * are left: lead bytes 1110xxxx every third byte, continuation bytes 10xxxxxx in between, no E0
 * before 80-9F (overlong) nor ED before A0-BF (surrogate). A step also takes the valid groups
 * before the first other one (a run shorter than the step, as most in JSON text are), so one
 * step ends any run within its width. Stops at the first group that is anything else
 * and leaves it to the caller. */
WK__LEX_FN const uint8_t *WK__LEX(wk__json_utf8_run3)(const uint8_t *p, const uint8_t *end)
{
#if WK__LEX_AVX2
    while (end - p >= 32) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)p);
        unsigned lead = (unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(
            _mm256_and_si256(x, _mm256_set1_epi8((char)0xF0)), _mm256_set1_epi8((char)0xE0)));
        unsigned cont = (unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(
            _mm256_and_si256(x, _mm256_set1_epi8((char)0xC0)), _mm256_set1_epi8((char)0x80)));
        unsigned e0 =
            (unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, _mm256_set1_epi8((char)0xE0)));
        unsigned ed =
            (unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, _mm256_set1_epi8((char)0xED)));
        /* bit 5 of each byte lands on its sign bit; shifted down one, on the byte before */
        unsigned b5 = (unsigned)_mm256_movemask_epi8(_mm256_slli_epi16(x, 2)) >> 1;
        /* the bytes of groups 0..9 where a group is not a valid sequence; bit 30 ends them */
        unsigned bad = (~lead & 0x09249249u) | (~cont & 0x36DB6DB6u) |
                       (((e0 & ~b5) | (ed & b5)) & 0x09249249u) | 0x40000000u;
        unsigned k = (unsigned)__builtin_ctz(bad);
        p += k / 3 * 3; /* the whole groups before the first bad byte */
        if (k < 30) {
            break;
        }
    }
    /* the caller's word steps finish a run the step could not reach (fewer than 32 bytes
     * left in the input); a 16-byte step here too cost more than it saved on the corpora */
#elif defined(__SSE2__)
    while (end - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        unsigned lead = (unsigned)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_and_si128(x, _mm_set1_epi8((char)0xF0)), _mm_set1_epi8((char)0xE0)));
        unsigned cont = (unsigned)_mm_movemask_epi8(
            _mm_cmpeq_epi8(_mm_and_si128(x, _mm_set1_epi8((char)0xC0)), _mm_set1_epi8((char)0x80)));
        unsigned e0 = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8((char)0xE0)));
        unsigned ed = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8((char)0xED)));
        unsigned b5 = (unsigned)_mm_movemask_epi8(_mm_slli_epi16(x, 2)) >> 1; /* as above */
        unsigned bad = (~lead & 0x1249u) | (~cont & 0x6DB6u) |
                       (((e0 & ~b5) | (ed & b5)) & 0x1249u) | 0x8000u; /* groups 0..4 */
        unsigned k = (unsigned)__builtin_ctz(bad);
        p += k / 3 * 3;
        if (k < 15) {
            break;
        }
    }
#else
    (void)end;
#endif
    return p;
}

/* Validates the run of non-ASCII bytes at p (p < end, p[0] >= 0x80) and returns the first
 * byte after it (an ASCII byte or `end`), or NULL at an invalid sequence. Two- and three-byte
 * sequences with three bytes of input left are checked on one word (p[0] lowest): the marker
 * bits, then the overlongs (C0, C1; E0 followed by 80-9F) and the surrogates (ED followed by
 * A0-BF) from the low nibble of the lead byte and bit 5 of the next; everything else goes
 * through wk__json_utf8_one. */
WK__LEX_FN const uint8_t *WK__LEX(wk__json_utf8_run)(const uint8_t *p, const uint8_t *end)
{
    do {
        if (WK__LIKELY(end - p >= 3)) {
            uint32_t w = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
            if ((w & 0xC0C0F0u) == 0x8080E0u) {
                uint32_t t = w & 0x200Fu;
                if (WK__LIKELY(t != 0 && t != 0x200Du)) {
                    p += 3;
                    p = WK__LEX(wk__json_utf8_run3)(p, end);
                    continue;
                }
                return NULL;
            }
            if ((w & 0xC0E0u) == 0x80C0u) {
                if (WK__LIKELY((w & 0x1Eu) != 0)) {
                    p += 2;
                    continue;
                }
                return NULL;
            }
        }
        p = wk__json_utf8_one(p, end);
        if (p == NULL) {
            return NULL;
        }
    } while (p < end && *p >= 0x80);
    return p;
}

#if WK__LEX_AVX2
/* How many of the bytes before p (valid UTF-8 so far, at least three of them) belong to a
 * sequence still open at p: 0 to 3. */
static inline size_t wk__json_utf8_open(const uint8_t *p)
{
    if (p[-1] >= 0xC0) {
        return 1;
    }
    if (p[-1] >= 0x80 && p[-2] >= 0xE0) {
        return 2;
    }
    return p[-1] >= 0x80 && p[-2] >= 0x80 && p[-2] < 0xC0 && p[-3] >= 0xF0 ? 3 : 0;
}

/* The rest of a string body from a non-ASCII byte at p (p[0] >= 0x80 starts a sequence),
 * 32 bytes a step: the bytes a string scan stops at ('"', '\\', < 0x20) by compares, UTF-8 by
 * the lookup tables (core/utf8_avx2_interface.h), so text that mixes ASCII and other scripts goes
 * on in one loop. Returns the first stop byte, or, once fewer than 32 bytes are left, the
 * start of the sequence the last step ended inside (or the byte after the step), for the
 * caller's narrower steps; with fewer than 32 bytes left from p, wk__json_utf8_run's answer.
 * NULL when a sequence before the stop byte is invalid, with *run the first byte of the run
 * of non-ASCII bytes that holds it (where wk__json_utf8_run would have started). Used by the
 * AVX2 instance only. */
WK__LEX_FN const uint8_t *WK__LEX(wk__json_utf8_string)(const uint8_t *p, const uint8_t *end,
                                                      const uint8_t **run)
{
    *run = p;
    if (end - p < 32) {
        return WK__LEX(wk__json_utf8_run)(p, end);
    }
    const __m256i quote = _mm256_set1_epi8('"');
    const __m256i bslash = _mm256_set1_epi8('\\');
    const __m256i ctrl = _mm256_set1_epi8(0x1f);
    const uint8_t *seq = p;                /* a sequence starts here, at or before p */
    __m256i prev = _mm256_setzero_si256(); /* p starts a sequence */
    do {
        __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)p);
        unsigned stop = (unsigned)_mm256_movemask_epi8(_mm256_or_si256(
            _mm256_or_si256(_mm256_cmpeq_epi8(x, quote), _mm256_cmpeq_epi8(x, bslash)),
            _mm256_cmpeq_epi8(_mm256_max_epu8(x, ctrl), ctrl)));
        unsigned bad = ~(unsigned)_mm256_movemask_epi8(
            _mm256_cmpeq_epi8(wk__utf8_errors_avx2(x, prev), _mm256_setzero_si256()));
        unsigned k = stop != 0 ? (unsigned)__builtin_ctz(stop) : 31;
        /* (a sequence cut short by the stop byte shows at the stop byte itself) */
        if (WK__UNLIKELY((bad & ((2u << k) - 1u)) != 0)) {
            /* the run that holds the bad sequence, by the narrower steps from `seq`: ASCII
             * between runs, no stop byte before the bad sequence */
            for (const uint8_t *q = seq;;) {
                while (q < end && *q < 0x80) {
                    q++;
                }
                if (q == end) {
                    return end; /* (cannot happen: the tables flag real errors only) */
                }
                *run = q;
                q = WK__LEX(wk__json_utf8_run)(q, end);
                if (q == NULL) {
                    return NULL;
                }
            }
        }
        if (stop != 0) {
            return p + k;
        }
        prev = x;
        p += 32;
        seq = p - wk__json_utf8_open(p);
    } while (end - p >= 32);
    return seq;
}
#endif

/* First byte at or after p that a string scan must look at ('"', '\\', < 0x20, >= 0x80), or
 * `end`. */
WK__LEX_HOT const uint8_t *WK__LEX(wk__json_scan_plain)(const uint8_t *p, const uint8_t *end)
{
#if WK__LEX_AVX2
    const __m256i quote = _mm256_set1_epi8('"');
    const __m256i bslash = _mm256_set1_epi8('\\');
    const __m256i space = _mm256_set1_epi8(0x20);
    while (end - p >= 32) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)p);
        /* Signed compare: bytes >= 0x80 are negative, so they count as "< 0x20" too. */
        __m256i m = _mm256_or_si256(
            _mm256_or_si256(_mm256_cmpeq_epi8(x, quote), _mm256_cmpeq_epi8(x, bslash)),
            _mm256_cmpgt_epi8(space, x));
        unsigned mask = (unsigned)_mm256_movemask_epi8(m);
        if (mask != 0) {
            return wk__advance(p, (unsigned)__builtin_ctz(mask));
        }
        p += 32;
    }
#endif
#if defined(__SSE2__)
    const __m128i quote16 = _mm_set1_epi8('"');
    const __m128i bslash16 = _mm_set1_epi8('\\');
    const __m128i space16 = _mm_set1_epi8(0x20);
    while (end - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i m =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote16), _mm_cmpeq_epi8(x, bslash16)),
                         _mm_cmplt_epi8(x, space16));
        unsigned mask = (unsigned)_mm_movemask_epi8(m);
        if (mask != 0) {
            return wk__advance(p, (unsigned)__builtin_ctz(mask));
        }
        p += 16;
    }
#endif
    while (p < end && wk__json_str_stop[*p] == 0) {
        p++;
    }
    return p;
}

/*
 * Scans a string body starting after the opening quote. Returns the position of the closing
 * quote; *esc is the first backslash or NULL when there is none. Checks UTF-8 and control
 * characters (escapes are checked when decoded). NULL on failure (f filled).
 */
WK__LEX_HOT const uint8_t *WK__LEX(wk__json_scan_string)(const uint8_t *p, const uint8_t *end,
                                                       const uint8_t **esc, wk__json_fail *f)
{
    *esc = NULL;
    /* plain runs by the wide scan; at each byte that stops it: the closing quote ends the
     * string, non-ASCII is checked as a run of UTF-8 sequences, a backslash is noted (the
     * first one, for the caller's unescape) and skipped with the byte it escapes, and a
     * control byte is an error */
    for (;;) {
        p = WK__LEX(wk__json_scan_plain)(p, end);
        if (WK__UNLIKELY(p == end)) {
            return wk__json_failed(f, WK_ERR_TRUNCATED, "unterminated string", p);
        }
        uint8_t c = *p;
        if (WK__LIKELY(c == '"')) {
            return p;
        }
        if (c >= 0x80) {
#if WK__LEX_AVX2
            const uint8_t *n = WK__LEX(wk__json_utf8_string)(p, end, &p);
#else
            const uint8_t *n = WK__LEX(wk__json_utf8_run)(p, end);
#endif
            if (n == NULL) {
                /* the offending sequence, as the one-at-a-time check reports it */
                while ((n = wk__json_utf8_one(p, end)) != NULL) {
                    p = n;
                }
                return wk__json_failed(f, WK_ERR_UTF8, "invalid UTF-8 in string", p);
            }
            p = n;
            continue;
        }
        if (c == '\\') {
            if (*esc == NULL) {
                *esc = p;
            }
            if (end - p < 2) {
                return wk__json_failed(f, WK_ERR_TRUNCATED, "unterminated string", end);
            }
            p += 2; /* the escaped byte is checked by wk__json_unescape */
            continue;
        }
        return wk__json_failed(f, WK_ERR_SYNTAX, "control character in string (must be escaped)",
                               p);
    }
}

/* The grammar's steps that skip whitespace, written once for the tree parser and the
 * validator (lex.h has the ones that do not). Each returns NULL on failure (f filled). */

/* The start of a document at p (the whole input is [p, end)): an optional byte order mark
 * (an error unless `allow_bom`), then whitespace. Returns the first byte of the value, before
 * `end`. */
WK__LEX_FN const uint8_t *WK__LEX(wk__json_doc_start)(const uint8_t *p, const uint8_t *end,
                                                      bool allow_bom, wk__json_fail *f)
{
    if (end - p >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) {
        if (!allow_bom) {
            return wk__json_failed(f, WK_ERR_SYNTAX,
                                   "byte order mark before JSON (not allowed by default)", p);
        }
        p += 3;
    }
    p = WK__LEX(wk__json_skip_ws)(p, end);
    if (p == end) {
        return wk__json_failed(f, WK_ERR_TRUNCATED, "no JSON value in the input", p);
    }
    return p;
}

/* After an object key (p right after its closing quote): the ':' with the whitespace around
 * it. Returns the first byte of the value, before `end`. ':' and ": " before a value (compact
 * and indented text) take no whitespace step. */
WK__LEX_HOT const uint8_t *WK__LEX(wk__json_colon)(const uint8_t *p, const uint8_t *end,
                                                   wk__json_fail *f)
{
    if (WK__LIKELY(end - p > 2 && *p == ':')) {
        p += 1 + (p[1] == ' '); /* still before `end` */
        if (WK__LIKELY(*p > ' ')) {
            return p;
        }
    } else if (WK__LIKELY(p < end && *p == ':')) {
        p++;
    } else {
        p = WK__LEX(wk__json_skip_ws)(p, end);
        if (p == end) {
            return wk__json_failed(f, WK_ERR_TRUNCATED, "input ends after an object key", p);
        }
        if (*p != ':') {
            return wk__json_failed(f, WK_ERR_SYNTAX, "':' expected after object key", p);
        }
        p++;
    }
    p = WK__LEX(wk__json_skip_ws)(p, end);
    if (WK__UNLIKELY(p == end)) {
        return wk__json_failed(f, WK_ERR_TRUNCATED, "input ends where a value should start", p);
    }
    return p;
}

/* After the document's value (at p): whitespace, then the end of the input unless
 * `allow_trailing`. Returns where the whitespace ends. */
WK__LEX_FN const uint8_t *WK__LEX(wk__json_doc_end)(const uint8_t *p, const uint8_t *end,
                                                    bool allow_trailing, wk__json_fail *f)
{
    p = WK__LEX(wk__json_skip_ws)(p, end);
    if (p != end && !allow_trailing) {
        return wk__json_failed(f, WK_ERR_TRAILING, "content after the JSON value", p);
    }
    return p;
}
