/*
 * The incremental JSON unpacker. Framing finds where the next top-level value ends with a
 * small lexer whose whole state fits in the unpacker (bracket depth, inside a string, after
 * a backslash, inside a top-level number or literal), so it is carried across chunk
 * boundaries at any byte: inside strings, escapes, numbers, literals and UTF-8 sequences
 * (framing treats bytes above 0x7f as opaque string content; the reader checks them).
 * Framing resumes where it stopped, so the work stays linear in the input.
 *
 * Checking and decoding are the buffer codecs' own, run on the framed bytes: the event reader
 * (reader.c) for raw spans and events, the fused tree parser (wk_json_decode_value)
 * for trees. Framing never disagrees with them about where a value ends: a value closes at
 * its balanced bracket or closing quote, and a top-level number or literal is framed up to
 * the first byte that cannot continue it, after which the decoder's own length is used (so
 * `1x` is the value 1 followed by an `x` that is not separated by whitespace, as the reader
 * says). Errors are the reader's, run over every byte present from the value's start, with
 * offsets from the start of the stream and a line:column position.
 *
 * A value whose bytes lie inside the chunk goes straight to the tree parser on the rest of
 * the chunk (one pass); framing is only needed for the value that the chunk cuts. For trees
 * not even then, most of the time: when the parser's try on the chunk ends with
 * WK_ERR_TRUNCATED (the input ran out inside the value), the value is gathered unframed and
 * parsed again from the gathered bytes once the next chunk's bytes are appended; framing
 * starts from the value's start only if that try fails too (as in mp_unpacker.c). In JSON
 * Lines a value with no newline after it in the chunk is gathered unframed and parsed up to
 * the next chunk's first newline. Events do not frame at all: one event reader runs over the
 * whole stream and is undone and resumed at chunk ends (see "events" below).
 *
 * Flow: chunks -> the feed (stream/feed_interface.h: the chunk, the gather buffer, the cap)
 * -> framing (frame, frame_blocks) or a parse attempt (try_tree) -> the reader
 * (read_value) or the tree parser (wk_json_decode_value) -> a value; for events, chunks ->
 * the feed -> one wk_json_reader (wk__json_reader_run) -> the caller's sink.
 *
 * Contents, in order:
 *   framing            number_step, literal_len (top-level scalars), frame_blocks (64-byte
 *                      blocks inside containers), frame (the byte loop and its states)
 *   values             consume, trim_ws, emit, try_tree, start_value, drop_leftover, take;
 *                      wk_json_unpacker_next, _next_value
 *   events             ev_look (where a gathered token ends), ev_limit_at_token,
 *                      ev_need_more, ev_next; wk_json_unpacker_next_events
 */
#include <emmintrin.h>
#include <string.h>

#include "stream/feed_interface.h"
#include "formats/json/reader_run.h"
#include "wirekit/json.h"

/* Framing states. A top-level number is followed through the grammar's states so that it
 * ends exactly where the reader's number lexer ends it (`1234-5` is 1234, then a value not
 * separated by whitespace); a literal is framed as the length of the literal its first byte
 * names (the count of bytes left is kept in `depth`, which is 0 at the top level). */
enum {
    M_TOP = 0,
    M_VALUE,   /* inside a container, outside strings */
    M_STR,     /* inside a string */
    M_STR_ESC, /* inside a string, after a backslash */
    M_LIT,     /* inside a top-level literal; `depth` bytes left */
    M_N_SIGN,  /* number: after '-' */
    M_N_ZERO,  /* after a leading 0 */
    M_N_INT,   /* in the integer digits */
    M_N_DOT,   /* after '.' */
    M_N_FRAC,  /* in the fraction digits */
    M_N_E,     /* after 'e' */
    M_N_ESIGN, /* after the exponent's sign */
    M_N_EXP    /* in the exponent digits */
};

/* Which takes an unpacker serves (u->use): the first call decides. */
enum { USE_NONE, USE_VALUES, USE_EVENTS };

/* An ASCII decimal digit? */
static bool digit(uint8_t c)
{
    return c >= '0' && c <= '9';
}

/* The number state after byte `c` in state `m`; M_TOP when the number ends before `c`. A
 * byte the grammar does not allow also ends it: the reader then reports the error. */
static uint8_t number_step(uint8_t m, uint8_t c)
{
    switch (m) {
    case M_N_SIGN: return c == '0' ? M_N_ZERO : digit(c) ? M_N_INT : M_TOP;
    case M_N_ZERO:
    case M_N_INT:
        if (m == M_N_INT && digit(c)) {
            return M_N_INT;
        }
        return c == '.' ? M_N_DOT : (c | 0x20) == 'e' ? M_N_E : M_TOP;
    case M_N_DOT: return digit(c) ? M_N_FRAC : M_TOP;
    case M_N_FRAC: return digit(c) ? M_N_FRAC : (c | 0x20) == 'e' ? M_N_E : M_TOP;
    case M_N_E: return c == '+' || c == '-' ? M_N_ESIGN : digit(c) ? M_N_EXP : M_TOP;
    case M_N_ESIGN:
    case M_N_EXP: return digit(c) ? M_N_EXP : M_TOP;
    default: return M_TOP;
    }
}

/* Length of the literal that starts with `c`, 0 when none does. */
static uint32_t literal_len(uint8_t c)
{
    switch (c) {
    case 't': return 4;
    case 'f': return 5;
    case 'n': return 4;
    case 'N': return 3;
    case 'I': return 8;
    default: return 0;
    }
}

/* One of JSON's four whitespace bytes? */
static bool ws_byte(uint8_t c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* The nesting limit of the options, or the reader's default. */
static uint32_t max_depth_of(const wk_json_unpacker *u)
{
    return u->opts.max_depth != 0 ? u->opts.max_depth : WK_JSON_DEFAULT_MAX_DEPTH;
}

/* An empty unpacker (wirekit/stream.h) that buffers at most max_buffer bytes of a value cut
 * by chunk ends (stream/feed_interface.h). The options are copied. BOM and trailing data are
 * not stream notions: asking for them latches WK_ERR_UNSUPPORTED at once. */
WK_API void wk_json_unpacker_init(wk_json_unpacker *u, const wk_read_opts *opts,
                                  size_t max_buffer)
{
    memset(u, 0, sizeof *u);
    if (opts != NULL) {
        u->opts = *opts;
    }
    u->line = 1;
    wk__feed_init(&u->f, u->opts.alloc, max_buffer);
    if (u->opts.flags & (WK_JSON_READ_ALLOW_BOM | WK_JSON_READ_ALLOW_TRAILING)) {
        wk__feed_fail(&u->f, WK_ERR_UNSUPPORTED, 0,
                      "the JSON unpacker does not take ALLOW_BOM or ALLOW_TRAILING");
    }
}

/* Frees the buffered bytes and, if events were taken, the event reader's memory. */
WK_API void wk_json_unpacker_free(wk_json_unpacker *u)
{
    if (u->use == USE_EVENTS) { /* the events reader was started */
        wk_json_reader_free(&u->ev);
    }
    wk__feed_free(&u->f);
}

/* The next chunk, not copied: it must stay valid until a take returns WK_ERR_AGAIN (what it
 * still holds is then gathered into the buffer). */
WK_API wk_status wk_json_unpacker_feed(wk_json_unpacker *u, const void *data, size_t len)
{
    wk_status st = wk__feed_feed(&u->f, data, len);
    u->live = st == WK_OK;
    return st;
}

/* No more chunks: a value cut by the end of the stream is now an error, not WK_ERR_AGAIN. */
WK_API void wk_json_unpacker_finish(wk_json_unpacker *u)
{
    u->f.finished = true;
}

/* The latched error (offset from the stream's start) and its 1-based line and byte column;
 * returns its status. */
WK_API wk_status wk_json_unpacker_error(const wk_json_unpacker *u, wk_error *err,
                                        uint64_t *line, uint64_t *col)
{
    if (err != NULL) {
        *err = u->f.err;
    }
    uint64_t l = u->err_line, c = u->err_col;
    if (l == 0 && u->f.err.offset == u->line_off) {
        /* latched without a position (the cap, out of memory) where lines are counted up
         * to: the start of a value or token */
        l = u->line;
        c = u->line_off - u->line_start + 1;
    }
    if (line != NULL) {
        *line = u->f.err.code != WK_OK ? l : 0;
    }
    if (col != NULL) {
        *col = u->f.err.code != WK_OK ? c : 0;
    }
    return u->f.err.code;
}

/* Stream offset of the next byte not handed out (bytes gathered after a value taken from the
 * buffer, `leftover`, are not yet handed out). */
WK_API uint64_t wk_json_unpacker_offset(const wk_json_unpacker *u)
{
    return wk__feed_offset(&u->f) + u->leftover;
}

/* Bytes held in the internal buffer that belong to a value not yet taken. */
WK_API size_t wk_json_unpacker_buffered(const wk_json_unpacker *u)
{
    return wk__feed_buffered(&u->f) - u->leftover;
}

/* Counts the lines in `p[0..n)`, the bytes at stream offset u->line_off on. */
static void count_lines(wk_json_unpacker *u, const uint8_t *p, size_t n)
{
    const uint8_t *end = p + n;
    const uint8_t *q = p;
    while (q < end) {
        const uint8_t *nl = memchr(q, '\n', (size_t)(end - q));
        if (nl == NULL) {
            break;
        }
        u->line++;
        u->line_start = u->line_off + (uint64_t)(nl + 1 - p);
        q = nl + 1;
    }
    u->line_off += n;
}

/* Latches an error at `off`, a stream offset inside base[0..avail), which starts at the stream
 * offset u->line_off (every byte before it is counted already). */
static wk_status fail_at(wk_json_unpacker *u, const uint8_t *base, size_t avail, wk_status st,
                         uint64_t off, const char *msg)
{
    if (u->f.err.code == WK_OK) {
        uint64_t line = u->line;
        uint64_t start = u->line_start;
        size_t upto = off > u->line_off ? (size_t)(off - u->line_off) : 0;
        if (upto > avail) {
            upto = avail;
        }
        for (size_t i = 0; i < upto; i++) {
            if (base[i] == '\n') {
                line++;
                start = u->line_off + i + 1;
            }
        }
        u->err_line = line;
        u->err_col = off - start + 1;
    }
    return wk__feed_fail(&u->f, st, off, msg);
}

static size_t trim_ws(const uint8_t *p, size_t consumed);

/*
 * Checks the value at base[0..avail) (framed: it is whole there) with wk_json_validate,
 * which answers what the event reader answers (same status, message and offset;
 * test_json_validate compares them) without making events. Returns WK_OK with *vlen = the
 * value's length, or the error, latched.
 */
static wk_status read_value(wk_json_unpacker *u, const uint8_t *base, size_t avail,
                            size_t *vlen)
{
    wk_json_reader r;
    wk_read_opts o = u->opts;
    o.flags |= WK_JSON_READ_MULTI;
    if (u->value_off > 0 && avail >= 3 && memcmp(base, "\xef\xbb\xbf", 3) == 0) {
        /* A reader started here would take these bytes for a byte order mark, which only
         * the stream's first bytes can be: let it see them after a space instead. */
        static const uint8_t late_bom[4] = {' ', 0xef, 0xbb, 0xbf};
        wk_error e;
        wk_event ev;
        wk_json_reader_init(&r, late_bom, sizeof late_bom, &o, NULL);
        wk_json_reader_next(&r, &ev);
        wk_json_reader_error(&r, &e);
        wk_json_reader_free(&r);
        return fail_at(u, base, avail, e.code, u->value_off + e.offset - 1, e.msg);
    }
    wk_error e;
    size_t used = 0;
    wk_status st = wk_json_validate(base, avail, &o, &used, &e);
    if (st != WK_OK) {
        return fail_at(u, base, avail, st, u->value_off + e.offset, e.msg);
    }
    *vlen = trim_ws(base, used);
    return WK_OK;
}

/* Bit i set where block[i] == c, for a 64-byte block. */
static inline uint64_t eq_mask(const __m128i v[4], __m128i c)
{
    return (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v[0], c)) |
           (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v[1], c)) << 16 |
           (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v[2], c)) << 32 |
           (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v[3], c)) << 48;
}

/* Population count without POPCNT (not in baseline x86-64; the builtin would call libgcc). */
static inline uint32_t count_bits(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (uint32_t)((x * 0x0101010101010101ull) >> 56);
}

/* Bit i of the result is the XOR of bits 0..i of x: with x the unescaped quotes of a block,
 * the bytes inside strings (the carry-less multiply of simdjson, with shifts). */
static inline uint64_t prefix_xor(uint64_t x)
{
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

/*
 * Frames whole 64-byte blocks inside a container (mode M_VALUE, M_STR or M_STR_ESC, depth at
 * least 1) while 64 bytes remain, branch-free per block as simdjson's first stage does:
 * bit masks of quotes, backslashes and brackets (`[`/`{` and `]`/`}` differ from each other
 * only in bit 5), escaped bytes from the backslash runs (odd runs escape the next byte, the
 * carry crosses blocks), the inside-string mask as the prefix XOR of the unescaped quotes,
 * and the bracket counts outside strings. Only a block where the depth may reach 0 or pass
 * the limit is walked bracket by bracket. On valid input this agrees with the byte loop;
 * on invalid input (a backslash outside a string) both are only a guess that the reader,
 * which has the last word, corrects. Returns the position reached; *vlen is set (and
 * *status WK_OK or WK_ERR_DEPTH) when the value ends or nests too deep in a block.
 */
static const uint8_t *frame_blocks(const uint8_t *base, const uint8_t *p, const uint8_t *end,
                                   uint8_t *mode, uint32_t *depth, uint32_t max_depth,
                                   size_t *vlen, wk_status *status)
{
    const uint64_t even = 0x5555555555555555ull;
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
    const __m128i open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}');
    const __m128i bit5 = _mm_set1_epi8(0x20);
    uint64_t in_str = *mode != M_VALUE ? ~0ull : 0;
    uint64_t prev_esc = *mode == M_STR_ESC;
    uint32_t d = *depth;
    while ((size_t)(end - p) >= 64) {
        /* the 64 bytes as four SSE2 vectors; OR 0x20 folds '[' onto '{' and ']' onto '}' */
        __m128i v[4], f[4];
        for (int i = 0; i < 4; i++) {
            v[i] = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
            f[i] = _mm_or_si128(v[i], bit5);
        }
        uint64_t q = eq_mask(v, quote);
        uint64_t b = eq_mask(v, bslash);
        uint64_t o = eq_mask(f, open);
        uint64_t c = eq_mask(f, close);
        /* escapes: a backslash escaped by the previous block's last one is not a start; of
         * each run of backslashes, the byte after an odd run is escaped (the carry of the
         * addition tells the next block) */
        b &= ~prev_esc;
        uint64_t follows = b << 1 | prev_esc;
        uint64_t odd_starts = b & ~even & ~follows;
        uint64_t seq_even;
        prev_esc = __builtin_add_overflow(odd_starts, b, &seq_even);
        uint64_t escaped = (even ^ (seq_even << 1)) & follows;
        /* strings: between unescaped quotes; brackets inside them do not count */
        q &= ~escaped;
        uint64_t inside = prefix_xor(q) ^ in_str;
        in_str = (uint64_t)((int64_t)inside >> 63);
        o &= ~inside;
        c &= ~inside;
        uint32_t no = count_bits(o), nc = count_bits(c);
        if (d > nc && d + no <= max_depth) { /* cannot end or pass the limit here */
            d = d - nc + no;
            p += 64;
            continue;
        }
        /* the value may end, or nest too deep, in this block: walk its brackets */
        for (uint64_t m = o | c; m != 0; m &= m - 1) {
            int i = __builtin_ctzll(m);
            if ((o >> i) & 1) {
                if (++d > max_depth) {
                    *vlen = (size_t)(p + i - base);
                    *status = WK_ERR_DEPTH;
                    *depth = d;
                    return p + i;
                }
            } else if (--d == 0) {
                *vlen = (size_t)(p + i + 1 - base);
                *status = WK_OK;
                *depth = 0;
                return p + i + 1;
            }
        }
        p += 64;
    }
    *mode = in_str != 0 ? (prev_esc ? M_STR_ESC : M_STR) : M_VALUE;
    *depth = d;
    return p;
}

/*
 * Frames the value at base[0..avail) from f.scan on (state in u->mode/u->depth). Returns
 * WK_OK with *vlen = an end no shorter than the value (exact for strings and containers),
 * WK_ERR_AGAIN, or WK_ERR_DEPTH (the reader then words the error).
 */
static wk_status frame(wk_json_unpacker *u, const uint8_t *base, size_t avail, size_t *vlen)
{
    if (avail < u->f.need) {
        return WK_ERR_AGAIN; /* gathered after a parse attempt: framing waits for more bytes */
    }
    const uint8_t *p = base + u->f.scan;
    const uint8_t *end = base + avail;
    uint32_t depth = u->depth;
    uint32_t max_depth = max_depth_of(u);
    uint8_t mode = u->mode;
    wk_status st = WK_ERR_AGAIN;
    /* a byte at a time, in the framing state; inside a container, whole 64-byte blocks go
     * through frame_blocks first */
    while (p < end) {
        if (depth > 0 && mode <= M_STR_ESC && (size_t)(end - p) >= 64) {
            p = frame_blocks(base, p, end, &mode, &depth, max_depth, vlen, &st);
            if (st != WK_ERR_AGAIN) {
                goto out;
            }
            if (p == end) {
                break;
            }
        }
        uint8_t c = *p;
        switch (mode) {
        case M_TOP:
            if (c == '"') {
                mode = M_STR;
                p++;
            } else if (c == '[' || c == '{') {
                mode = M_VALUE;
            } else if (c == '-') {
                mode = M_N_SIGN;
                p++;
            } else if (digit(c)) {
                mode = c == '0' ? M_N_ZERO : M_N_INT;
                p++;
            } else if (literal_len(c) != 0) {
                mode = M_LIT;
                depth = literal_len(c);
            } else if (c == 0xef) { /* maybe a byte order mark: the reader wants all of it */
                mode = M_LIT;
                depth = 3;
            } else { /* no value starts here: the reader says why, at this byte */
                *vlen = 1;
                st = WK_OK;
                goto out;
            }
            break;
        case M_LIT: {
            size_t k = (size_t)(end - p) < depth ? (size_t)(end - p) : depth;
            p += k;
            depth -= (uint32_t)k;
            if (depth == 0) {
                *vlen = (size_t)(p - base);
                st = WK_OK;
                goto out;
            }
            break;
        }
        case M_VALUE:
            while (p < end) {
                c = *p++;
                if (c == '"') {
                    mode = M_STR;
                    break;
                }
                if (c == '[' || c == '{') {
                    if (++depth > max_depth) {
                        st = WK_ERR_DEPTH;
                        goto out;
                    }
                } else if (c == ']' || c == '}') {
                    if (--depth == 0) {
                        *vlen = (size_t)(p - base);
                        st = WK_OK;
                        goto out;
                    }
                }
            }
            break;
        case M_STR:
            /* a string: its closing quote ends a top-level string value, or goes back to
             * the container's state; a backslash makes the next byte inert */
            while (p < end) {
                c = *p++;
                if (c == '"') {
                    if (depth == 0) {
                        *vlen = (size_t)(p - base);
                        st = WK_OK;
                        goto out;
                    }
                    mode = M_VALUE;
                    break;
                }
                if (c == '\\') {
                    mode = M_STR_ESC;
                    break;
                }
            }
            break;
        case M_STR_ESC: /* the escaped byte cannot end the string */
            p++;
            mode = M_STR;
            break;
        default: /* in a top-level number */
            if (mode == M_N_SIGN && c == 'I' && (u->opts.flags & WK_JSON_READ_NAN_INF)) {
                mode = M_LIT; /* -Infinity */
                depth = 8;
                break;
            }
            /* the number ends at the first byte its grammar cannot take (the reader then
             * judges that byte) */
            while (p < end) {
                uint8_t next = number_step(mode, *p);
                if (next == M_TOP) {
                    *vlen = (size_t)(p - base);
                    st = WK_OK;
                    goto out;
                }
                mode = next;
                p++;
            }
            break;
        }
    }
    if (mode >= M_LIT && u->f.finished) { /* a top-level scalar ends with the input */
        *vlen = avail;
        st = WK_OK;
    }
out:
    /* framing resumes from here on the next call (WK_ERR_AGAIN), or starts afresh with the
     * next value */
    u->mode = st == WK_ERR_AGAIN ? mode : M_TOP;
    u->depth = st == WK_ERR_AGAIN ? depth : 0;
    u->f.scan = st == WK_ERR_AGAIN ? (size_t)(p - base) : 0;
    return st;
}

/* What a take hands out: the value's bytes (wk_json_unpacker_next), its tree
 * (wk_json_unpacker_next_value), or its tree unless the arena cannot hold it, then its bytes
 * (wk_json_unpacker_next_value_or_bytes). */
enum take_mode { TAKE_RAW, TAKE_TREE, TAKE_TREE_OR_BYTES };

/* The value handed out ends `vlen` bytes after its start. A value parsed from gathered bytes
 * may end before the bytes appended from the current chunk (it was gathered unframed): the
 * bytes after it then stay gathered, as the start of the next value (see take). */
static wk_status consume(wk_json_unpacker *u, size_t vlen)
{
    wk__feed *f = &u->f;
    size_t from_chunk = !u->live ? 0 : f->buf_len < f->chunk_pos ? f->buf_len : f->chunk_pos;
    if (f->buf_len > 0 && f->buf_len - vlen > from_chunk) {
        u->leftover = vlen;
        return WK_OK;
    }
    return wk__feed_consume(f, vlen);
}

/* The length of a value decoded from `p` with `consumed` bytes used (trailing whitespace
 * included by the decoder): the whitespace trimmed. */
static size_t trim_ws(const uint8_t *p, size_t consumed)
{
    while (consumed > 0 && ws_byte(p[consumed - 1])) {
        consumed--;
    }
    return consumed;
}

/* Hands the value at base[0..) (in the chunk or in buf) out: decodes or reads it and
 * consumes its bytes. */
static wk_status emit(wk_json_unpacker *u, const uint8_t *base, size_t avail, size_t vlen,
                      enum take_mode mode, wk_arena *arena, wk_value **out,
                      const uint8_t **data, size_t *len)
{
    wk_status st;
    /* a tree: the parser over every byte present; its failure is worded by the reader over
     * the same bytes (so both takes report the same errors), unless the reader takes the
     * value, when only the arena can have failed: an error, or for TAKE_TREE_OR_BYTES the
     * value's bytes handed out instead. Raw bytes: the reader checks them. */
    if (mode != TAKE_RAW) {
        wk_read_opts o = u->opts;
        o.flags |= WK_JSON_READ_ALLOW_TRAILING;
        size_t used = 0;
        /* over every byte present, not just the framed ones: the number lexer looks at the
         * byte after a number (a leading zero followed by a digit is an error); a value
         * longer than tree_max is not parsed at all */
        st = vlen <= u->tree_max ? wk_json_decode_value(base, avail, &o, arena, out, &used, NULL)
                                 : WK_ERR_LIMIT;
        if (st != WK_OK) {
            st = read_value(u, base, avail, &vlen);
            if (st != WK_OK) {
                return st;
            }
            if (mode == TAKE_TREE) { /* the reader took it: the failure was the arena's
                                      * (TAKE_TREE has no tree_max) */
                return fail_at(u, base, avail, WK_ERR_NOMEM, u->value_off,
                               "out of memory (arena) for the value");
            }
            *out = NULL;
        } else {
            vlen = trim_ws(base, used);
        }
    } else {
        st = read_value(u, base, avail, &vlen);
        if (st != WK_OK) {
            return st;
        }
    }
    /* the value is out: `typical` (a running mean of value sizes) guides the next take's
     * guess whether a value is cut; lines are counted for error positions */
    *data = base;
    *len = vlen;
    u->typical = u->typical / 2 + vlen / 2;
    count_lines(u, base, vlen);
    u->values++;
    u->sep = false;
    return consume(u, vlen);
}

/* Chunks smaller than this get no parse attempt on the gathered bytes (framing has then
 * read almost every byte already). As in mp_unpacker.c, a build may lower it. */
#ifndef WK_STREAM_ATTEMPT_MIN_CHUNK
#define WK_STREAM_ATTEMPT_MIN_CHUNK 256u
#endif
#define ATTEMPT_MIN_CHUNK WK_STREAM_ATTEMPT_MIN_CHUNK

/*
 * The tree parser on base[0..n) (the rest of the chunk, or the gathered bytes): when the value
 * is whole there (and, for a top-level number or literal, cannot go on past n), hands it out
 * and returns what consuming it returns. Otherwise WK_ERR_AGAIN, with the parser's status in
 * u->try_status (*out is then NULL); the caller frames.
 */
static wk_status try_tree(wk_json_unpacker *u, const uint8_t *base, size_t n, wk_arena *arena,
                          wk_value **out, const uint8_t **data, size_t *len)
{
    wk_read_opts o = u->opts;
    o.flags |= WK_JSON_READ_ALLOW_TRAILING;
    size_t used = 0;
    /* a value longer than tree_max is not given a tree: the parse stops there (its scratch
     * and nodes stay bounded), and WK_ERR_LIMIT sends the caller to framing */
    bool cut = n > u->tree_max;
    u->try_status = wk_json_decode_value(base, cut ? u->tree_max : n, &o, arena, out, &used,
                                         NULL);
    if (cut && u->try_status != WK_OK) {
        u->try_status = WK_ERR_LIMIT;
    }
    /* a value that ends in a closing quote or bracket, or before n, or with the stream, is
     * whole; a top-level number or literal ending at n (or at the cut) might go on */
    if (u->try_status == WK_OK) {
        size_t vlen = trim_ws(base, used);
        uint8_t last = base[vlen - 1];
        bool closed = last == '"' || last == ']' || last == '}';
        if (cut && !closed && vlen == u->tree_max) {
            u->try_status = WK_ERR_LIMIT; /* a number or literal the cut may have ended */
        } else if (closed || vlen < n || u->f.finished) {
            *data = base;
            *len = vlen;
            u->typical = u->typical / 2 + vlen / 2;
            count_lines(u, base, vlen);
            u->values++;
            u->sep = false;
            return consume(u, vlen);
        }
    }
    *out = NULL;
    return WK_ERR_AGAIN;
}

/* Checks where a top-level value may start (stream offset `off`, base[0..n) the bytes there)
 * and resets the framing state for it. */
static wk_status start_value(wk_json_unpacker *u, const uint8_t *base, size_t n, uint64_t off)
{
    if (u->values > 0 && !(u->opts.flags & WK_JSON_READ_MULTI)) {
        return fail_at(u, base, n, WK_ERR_TRAILING, off, "content after the JSON value");
    }
    if (u->values > 0 && !u->sep) {
        return fail_at(u, base, n, WK_ERR_SYNTAX, off,
                       "top-level values must be separated by whitespace");
    }
    /* a fresh value: framing from its first byte, no parse attempt pending */
    u->value_off = off;
    u->mode = M_TOP;
    u->depth = 0;
    u->nl_try = false;
    u->f.scan = 0;
    u->f.need = 0;
    u->f.attempt = 0;
    return WK_OK;
}

/* Drops the value handed out last from the gathered bytes when bytes of an earlier chunk
 * follow it (consume): they, past their whitespace, start the next value. */
static wk_status drop_leftover(wk_json_unpacker *u)
{
    wk__feed *f = &u->f;
    size_t k = u->leftover;
    u->leftover = 0;
    size_t ws = k;
    while (ws < f->buf_len && ws_byte(f->buf[ws])) {
        ws++;
    }
    if (ws > k) {
        count_lines(u, f->buf + k, ws - k);
        u->sep = true;
    }
    memmove(f->buf, f->buf + ws, f->buf_len - ws);
    f->buf_len -= ws;
    if (f->buf_len == 0) {
        return WK_OK;
    }
    wk_status st = start_value(u, f->buf, f->buf_len, wk__feed_value_off(f));
    u->nl_try = st == WK_OK && u->line > 1;
    return st;
}

/* The next whole top-level value, as raw bytes (TAKE_RAW: *data, *len, valid until the next
 * call or feed) or as a tree in `arena` (TAKE_TREE: *out; TAKE_TREE_OR_BYTES: the bytes, *out
 * NULL, when the arena cannot hold the tree). Values inside the chunk go to the
 * reader or the parser at once; a value cut by the chunk's end is gathered (unframed first
 * for trees, framed when that fails) and taken once its end arrives. Returns WK_OK,
 * WK_ERR_AGAIN (feed more), WK_ERR_EOF (finished, nothing left), WK_ERR_STATE (events were
 * taken from this unpacker), or the latched error. */
static wk_status take(wk_json_unpacker *u, enum take_mode mode, wk_arena *arena,
                      wk_value **out, const uint8_t **data, size_t *len)
{
    wk__feed *f = &u->f;
    /* a latched error, or a take while the last chunk is not yet released, stops here */
    wk_status st = wk__feed_enter(f);
    if (st != WK_OK) {
        return st;
    }
    if (u->use == USE_EVENTS) {
        return WK_ERR_STATE;
    }
    u->use = USE_VALUES;
    /* bytes gathered after the value the last call took from the buffer: the start of this
     * value (or whitespace before it) */
    if (u->leftover != 0) {
        st = drop_leftover(u);
        if (st != WK_OK) {
            return st;
        }
    }
    size_t vlen = 0;
    /* Nothing gathered: the value starts in the chunk. Whitespace before it is skipped (and
     * its lines counted); an empty rest waits for the next chunk, or ends the stream. */
    if (f->buf_len == 0) {
        const uint8_t *p = f->chunk + f->chunk_pos;
        size_t n = f->chunk_len - f->chunk_pos;
        size_t ws = 0;
        while (ws < n && ws_byte(p[ws])) {
            ws++;
        }
        if (ws > 0) {
            count_lines(u, p, ws);
            f->chunk_pos += ws;
            p += ws;
            n -= ws;
            u->sep = true;
        }
        uint64_t off = f->chunk_off + f->chunk_pos;
        if (n == 0) {
            if (!f->finished) {
                return WK_ERR_AGAIN;
            }
            if (u->values == 0 && !(u->opts.flags & WK_JSON_READ_MULTI)) {
                return fail_at(u, p, 0, WK_ERR_TRUNCATED, off, "no JSON value in the input");
            }
            return WK_ERR_EOF;
        }
        st = start_value(u, p, n, off);
        if (st != WK_OK) {
            return st;
        }
        /* Trees: the parser runs on the rest of the chunk unless the value is probably cut.
         * In JSON Lines (newlines seen) it is cut when no newline follows in the chunk: it is
         * then gathered as it is, unframed, and parsed up to the next chunk's first newline
         * (the buffer loop below). Otherwise it is cut when values have been larger than
         * what is left, and framing goes first. */
        bool lines = u->line > 1;
        if (mode != TAKE_RAW && !f->finished && lines && memchr(p, '\n', n) == NULL) {
            st = wk__feed_gather(f);
            if (st != WK_OK) {
                return st;
            }
            u->nl_try = true;
            return WK_ERR_AGAIN;
        }
        if (mode != TAKE_RAW && (f->finished || lines || n >= u->typical)) {
            st = try_tree(u, p, n, arena, out, data, len);
            if (st != WK_ERR_AGAIN) {
                return st;
            }
            if (u->try_status == WK_ERR_TRUNCATED && !f->finished) {
                /* the input ends inside the value: it is cut, and nothing is framed yet.
                 * Gather it and parse it again once more bytes are there; framing (from
                 * the value's start) only if that fails too. */
                st = wk__feed_gather(f);
                if (st != WK_OK) {
                    return st;
                }
                f->need = f->buf_len + 1;
                f->attempt = f->buf_len + 1;
                return WK_ERR_AGAIN;
            }
        }
        /* framing over the rest of the chunk: the value ends in it (emit), or it is cut
         * (gathered; for trees, a parse is tried again once `attempt` bytes are there) */
        st = frame(u, p, n, &vlen);
        if (st == WK_OK) {
            return emit(u, p, n, vlen, mode, arena, out, data, len);
        }
        if (st == WK_ERR_AGAIN && !f->finished) {
            st = wk__feed_gather(f);
            if (st != WK_OK) {
                return st;
            }
            if (mode != TAKE_RAW && f->chunk_len >= ATTEMPT_MIN_CHUNK) {
                size_t at = f->buf_len + 1;
                f->attempt = u->typical > at ? u->typical : at;
            }
            return WK_ERR_AGAIN;
        }
        size_t ignored;
        return read_value(u, p, n, &ignored); /* depth, or input ends inside the value */
    }
    if (mode == TAKE_RAW) {
        /* A tree take that was cut (wirekit/stream.h lets the two takes mix) left a parse
         * try pending; a span has nothing to parse into (no arena), so it frames instead,
         * from the value's start when nothing is framed yet. */
        u->nl_try = false;
        f->attempt = 0;
        if (f->scan == 0 && u->mode == M_TOP) {
            f->need = 0;
        }
    }
    /* Something gathered: the value started in an earlier chunk. Each turn appends more of
     * the chunk to the buffer (a piece as large as the buffer, so the work stays linear),
     * and first tries what may finish the value without framing it. */
    for (;;) {
        if (u->nl_try && f->chunk_pos < f->chunk_len) {
            /* JSON Lines: the framed bytes hold no end, so the value most likely ends at the
             * next newline. Parse up to it; if that fails, framing goes on where it was. */
            u->nl_try = false;
            const uint8_t *c = f->chunk + f->chunk_pos;
            const uint8_t *nl = memchr(c, '\n', f->chunk_len - f->chunk_pos);
            if (nl != NULL) {
                st = wk__feed_append_n(f, (size_t)(nl + 1 - c));
                if (st != WK_OK) {
                    return st;
                }
                st = try_tree(u, f->buf, f->buf_len, arena, out, data, len);
                if (st != WK_ERR_AGAIN) {
                    return st;
                }
            }
        }
        if (f->attempt != 0 && f->buf_len >= f->attempt) {
            f->attempt = 0;
            st = try_tree(u, f->buf, f->buf_len, arena, out, data, len);
            if (st != WK_ERR_AGAIN) {
                return st; /* one pass, no framing */
            }
            if (f->scan == 0 && u->mode == M_TOP) {
                f->need = 0; /* nothing framed yet: framing starts at the value's start */
            }
        }
        /* framing resumes where it stopped in the buffer */
        st = frame(u, f->buf, f->buf_len, &vlen);
        if (st == WK_OK) {
            return emit(u, f->buf, f->buf_len, vlen, mode, arena, out, data, len);
        }
        if (st == WK_ERR_AGAIN) {
            st = wk__feed_append(f);
            if (st == WK_OK) {
                continue;
            }
            if (st != WK_ERR_AGAIN) {
                return st;
            }
            if (!f->finished) {
                return WK_ERR_AGAIN;
            }
            /* finished: a top-level scalar ends at the end of input */
            st = frame(u, f->buf, f->buf_len, &vlen);
            if (st == WK_OK) {
                return emit(u, f->buf, f->buf_len, vlen, mode, arena, out, data, len);
            }
        }
        size_t ignored;
        return read_value(u, f->buf, f->buf_len, &ignored);
    }
}

/* The next value's bytes (checked by the reader) and its stream offset: take(TAKE_RAW). */
WK_API wk_status wk_json_unpacker_next(wk_json_unpacker *u, const uint8_t **data, size_t *len,
                                       uint64_t *offset)
{
    const uint8_t *d = NULL;
    size_t n = 0;
    wk_status st = take(u, TAKE_RAW, NULL, NULL, &d, &n);
    u->live = u->live && st != WK_ERR_AGAIN; /* the caller may now free or reuse the chunk */
    if (st == WK_OK) {
        *data = d;
        *len = n;
        if (offset != NULL) {
            *offset = u->value_off;
        }
    }
    return st;
}

/* The next value as a tree in arena: take(TAKE_TREE). */
WK_API wk_status wk_json_unpacker_next_value(wk_json_unpacker *u, wk_arena *arena,
                                             wk_value **out)
{
    const uint8_t *d = NULL;
    size_t n = 0;
    wk_value *v = NULL;
    u->tree_max = SIZE_MAX;
    wk_status st = take(u, TAKE_TREE, arena, &v, &d, &n);
    u->live = u->live && st != WK_ERR_AGAIN;
    if (st == WK_OK) {
        *out = v;
    }
    return st;
}

/* The next value as a tree in arena, or as its bytes when it is longer than tree_max or the
 * arena cannot hold its tree: take(TAKE_TREE_OR_BYTES). */
WK_API wk_status wk_json_unpacker_next_value_or_bytes(wk_json_unpacker *u, wk_arena *arena,
                                                      size_t tree_max, wk_value **out,
                                                      const uint8_t **data, size_t *len,
                                                      uint64_t *offset)
{
    const uint8_t *d = NULL;
    size_t n = 0;
    wk_value *v = NULL;
    u->tree_max = tree_max;
    wk_status st = take(u, TAKE_TREE_OR_BYTES, arena, &v, &d, &n);
    u->live = u->live && st != WK_ERR_AGAIN;
    if (st == WK_OK) {
        *out = v;
        *data = d;
        *len = n;
        if (offset != NULL) {
            *offset = u->value_off;
        }
    }
    return st;
}


/* ---- events: one reader carried across chunks ------------------------------------------- */

/*
 * Events need no framing: one wk_json_reader reads the whole stream, pointed at each chunk in
 * turn, and sends each event as soon as it is read. A reader call that runs into the end of
 * the chunk (its token is cut, or, for a number, might go on) is undone: the reader's state
 * is a cursor, a state, a depth and a count, saved before each call and put back. The bytes
 * from where that call started are gathered in the buffer, and the reader goes on from there
 * once more bytes are appended; as soon as its cursor is back in the bytes of the current
 * chunk, it returns to the chunk itself. So each byte is read once, plus the cut token again.
 *
 * A failed call is told from a genuine error by where it stopped: the end of the input is
 * WK_ERR_TRUNCATED, or (a cut UTF-8 sequence, `\u` escape, number or literal) an error within
 * EV_LOOKAHEAD bytes of the end. Anything else is the reader's error on the whole input too.
 * Gathered bytes are read again when a token may have ended in the new bytes (a closing
 * quote, a bracket, a comma or colon, the first whitespace after a token), when they reach
 * EV_LOOKAHEAD bytes past a near-end error, or when they have doubled since the last try;
 * the doubling keeps the work linear whatever that look gets wrong.
 */

#define EV_LOOKAHEAD 16u

/* ev_look's lexer states: between tokens, inside a number or literal, inside a string,
 * after a backslash in a string. */
enum { LEX_WS, LEX_TOKEN, LEX_STR, LEX_STR_ESC };

/* Stream offset of the first gathered byte, or of the chunk. */
static uint64_t ev_base_off(const wk_json_unpacker *u)
{
    return u->f.buf_len > 0 ? wk__feed_value_off(&u->f) : u->f.chunk_off;
}

/* Counts the lines of base[..] (stream offset base_off) up to stream offset `to`. */
static void ev_lines_to(wk_json_unpacker *u, const uint8_t *base, uint64_t base_off, uint64_t to)
{
    if (to > u->line_off) {
        count_lines(u, base + (u->line_off - base_off), (size_t)(to - u->line_off));
    }
}

/* Looks at the gathered bytes from u->ev_scan on for the end of a token; `arm` says whether a
 * token end there makes the bytes worth reading again (new bytes) or only moves the state
 * (bytes a failed call has read already). Stops at the first token end when armed. */
static void ev_look(wk_json_unpacker *u, bool arm)
{
    const uint8_t *b = u->f.buf;
    size_t n = u->f.buf_len;
    size_t i = u->ev_scan;
    uint8_t lex = u->ev_lex;
    bool end = false;
    /* a token ends at a string's closing quote, at whitespace after a number or literal,
     * and at every structural byte */
    while (i < n && !(arm && end)) {
        uint8_t c = b[i++];
        end = false;
        if (lex == LEX_STR) {
            if (c == '"') {
                lex = LEX_TOKEN;
                end = true;
            } else if (c == '\\') {
                lex = LEX_STR_ESC;
            }
        } else if (lex == LEX_STR_ESC) {
            lex = LEX_STR;
        } else if (c == '"') {
            lex = LEX_STR;
        } else if (ws_byte(c)) {
            end = lex == LEX_TOKEN;
            lex = LEX_WS;
        } else if (c == ',' || c == ':' || c == '[' || c == ']' || c == '{' || c == '}') {
            end = true;
            lex = LEX_WS;
        } else {
            lex = LEX_TOKEN;
        }
    }
    u->ev_scan = i;
    u->ev_lex = lex;
    if (arm && (end || (u->ev_retry != 0 && n >= u->ev_retry))) {
        u->ev_ready = true;
    }
}

/* A latched WK_ERR_LIMIT (or NOMEM) for gathered bytes p[0..n) at stream offset `off` is
 * put at the token they hold, past the whitespace the reader call started with. */
static wk_status ev_limit_at_token(wk_json_unpacker *u, const uint8_t *p, size_t n,
                                   uint64_t off)
{
    size_t k = 0;
    while (k < n && ws_byte(p[k])) {
        k++;
    }
    if (off == u->line_off) {
        count_lines(u, p, k); /* so that its line and column are known */
    }
    u->f.err.offset = (size_t)(off + k);
    return u->f.err.code;
}

/* The reader call that started at base[keep] needs bytes past base[len): keeps base[keep..len)
 * in the buffer (dropping what was read before it) and returns WK_ERR_AGAIN when the chunk is
 * used up, WK_OK when the buffer got more bytes to try, or a latched error. `retry` is the
 * buffer length at which to try again regardless (0 = none). */
static wk_status ev_need_more(wk_json_unpacker *u, const uint8_t *base, size_t len, size_t keep,
                              size_t retry)
{
    wk__feed *f = &u->f;
    uint64_t base_off = ev_base_off(u);
    ev_lines_to(u, base, base_off, base_off + keep);
    if (f->buf_len == 0) {
        f->chunk_pos = keep;
        wk_status st = wk__feed_gather(f);
        if (st != WK_OK) {
            return ev_limit_at_token(u, base + keep, len - keep, base_off + keep);
        }
    } else if (keep > 0) {
        memmove(f->buf, f->buf + keep, len - keep);
        f->buf_len = len - keep;
    }
    u->ev_pos = 0;
    u->ev_scan = 0;
    u->ev_lex = LEX_WS;
    ev_look(u, false); /* the state at the end of what the failed call read */
    u->ev_ready = false;
    size_t twice = f->buf_len * 2;
    u->ev_retry = retry != 0 && retry - keep < twice ? retry - keep : twice;
    for (;;) {
        if (f->buf_len == 0 && f->chunk_pos == f->chunk_len) {
            return WK_ERR_AGAIN; /* nothing pending: the next chunk starts afresh */
        }
        wk_status st = wk__feed_append(f);
        if (st != WK_OK) { /* WK_ERR_AGAIN: used up; or latched */
            return st == WK_ERR_AGAIN ? st
                                      : ev_limit_at_token(u, f->buf, f->buf_len,
                                                          wk__feed_value_off(f));
        }
        ev_look(u, true);
        if (u->ev_ready) {
            return WK_OK;
        }
    }
}

/* The events of the next value (or of what the chunk holds of it) to sink, from the one event
 * reader that runs over the whole stream; wk_json_unpacker_next_events has the contract. */
static wk_status ev_next(wk_json_unpacker *u, const wk_sink *sink)
{
    wk__feed *f = &u->f;
    wk_json_reader *r = &u->ev;
    if (f->err.code != WK_OK) {
        return f->err.code;
    }
    if (u->use != USE_EVENTS) {
        if (u->use != USE_NONE) {
            return WK_ERR_STATE;
        }
        /* the reader starts on the first three bytes, where it looks for a byte order mark */
        if (!f->finished) {
            wk_status st = WK_OK;
            if (f->buf_len == 0 && f->chunk_len - f->chunk_pos < 3) {
                st = wk__feed_gather(f);
            }
            while (st == WK_OK && f->buf_len > 0 && f->buf_len < 3) {
                st = wk__feed_append(f);
            }
            if (st != WK_OK) {
                return st;
            }
            if (f->buf_len == 0 && f->chunk_len - f->chunk_pos < 3) {
                return WK_ERR_AGAIN;
            }
        }
        const uint8_t *b = f->buf_len > 0 ? f->buf : f->chunk + f->chunk_pos;
        size_t n = f->buf_len > 0 ? f->buf_len : f->chunk_len - f->chunk_pos;
        wk_json_reader_init(r, b, n, &u->opts, NULL);
        u->use = USE_EVENTS;
        u->ev_pos = 0;
        u->ev_ready = true;
        if (r->err.code != WK_OK) {
            return fail_at(u, b, n, r->err.code, wk__feed_value_off(f) + r->err.offset,
                           r->err.msg);
        }
    }
    /* Each turn runs the reader over the chunk, or over the gathered bytes once a token end
     * has arrived in them (ev_look), sending the events of whole tokens to the sink; a run
     * that stops at a cut token is undone to where that token started and waits for more. */
    for (;;) {
        bool in_buf = f->buf_len > 0;
        if (in_buf && !u->ev_ready && !f->finished) {
            wk_status st = wk__feed_append(f);
            if (st != WK_OK) {
                return st == WK_ERR_AGAIN ? st
                                          : ev_limit_at_token(u, f->buf, f->buf_len,
                                                              wk__feed_value_off(f));
            }
            ev_look(u, true);
            continue;
        }
        const uint8_t *base = in_buf ? f->buf : f->chunk;
        size_t len = in_buf ? f->buf_len : f->chunk_len;
        r->start = base;
        r->p = base + (in_buf ? u->ev_pos : f->chunk_pos);
        r->end = base + len;
        /* What a call that is undone can have changed: the cursor and the state (a failure
         * latches; a number that reaches the end is not read at all). The nesting depth
         * changes only with an event that stays. */
        wk__json_run run = {NULL, 0, false};
        wk_status st = wk__json_reader_run(r, sink, in_buf, !f->finished, &run);
        if (WK_UNLIKELY(run.sink_failed)) {
            wk_error e;
            sink->error(sink->self, &e);
            return wk__feed_fail(f, st, e.offset, e.msg);
        }
        size_t pos = (size_t)(r->p - base);
        if (st == WK_OK) {
            if (!in_buf) {
                f->chunk_pos = pos;
                return WK_OK;
            }
            u->ev_pos = pos;
            /* the gathered bytes end with a copy of the chunk's bytes before chunk_pos, which
             * the reader may go on from while the chunk is still the caller's */
            size_t from_chunk = !u->live               ? 0
                                : f->buf_len < f->chunk_pos ? f->buf_len
                                                            : f->chunk_pos;
            if (pos >= f->buf_len - from_chunk) { /* back in the chunk's own bytes */
                uint64_t base_off = ev_base_off(u);
                ev_lines_to(u, base, base_off, base_off + pos);
                f->chunk_pos -= f->buf_len - pos;
                f->buf_len = 0;
            }
            if (r->depth == 0) {
                return WK_OK;
            }
            continue;
        }
        if (st == WK_ERR_EOF && f->finished) {
            return WK_ERR_EOF;
        }
        size_t retry = 0;
        if (st != WK_ERR_EOF && st != WK_ERR_AGAIN) {
            size_t at = r->err.offset;
            if (f->finished || (st != WK_ERR_TRUNCATED && at + EV_LOOKAHEAD < len)) {
                uint64_t base_off = ev_base_off(u);
                size_t from = (size_t)(u->line_off - base_off);
                return fail_at(u, base + from, len - from, st, base_off + at, r->err.msg);
            }
            if (st != WK_ERR_TRUNCATED) {
                retry = at + EV_LOOKAHEAD + 1;
            }
        }
        /* the call needs bytes past the end: undo it and wait for them. Whitespace where it
         * started is not kept, except one byte between top-level values (the reader checks
         * that they are separated). */
        size_t keep = (size_t)(run.save_p - base);
        size_t q = keep;
        while (q < len && ws_byte(base[q])) {
            q++;
        }
        if (q > keep) {
            keep = r->depth == 0 && r->values > 0 ? q - 1 : q;
        }
        r->p = run.save_p;
        r->state = run.save_state;
        r->err.code = WK_OK;
        if (in_buf) {
            u->ev_pos = keep;
        }
        st = ev_need_more(u, base, len, keep, retry);
        if (st != WK_OK) {
            if (st == WK_ERR_AGAIN && f->buf_len == 0) {
                ev_lines_to(u, f->chunk, f->chunk_off, f->chunk_off + f->chunk_len);
            }
            return st;
        }
    }
}

/* The events of the next value to sink (wirekit/stream.h): ev_next, and on WK_ERR_AGAIN the
 * chunk released to the caller. */
WK_API wk_status wk_json_unpacker_next_events(wk_json_unpacker *u, const wk_sink *sink)
{
    wk_status st = ev_next(u, sink);
    if (st == WK_ERR_AGAIN) {
        u->live = false; /* the caller may now free or reuse the chunk */
    }
    return st;
}
