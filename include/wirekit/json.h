/*
 * JSON (RFC 8259): a zero-copy event reader, a fused parser straight into the value tree, and
 * a writer (compact or pretty) that prints doubles as the shortest text that reads back.
 *
 * The reader is a wk_source: it emits the same events as the MessagePack reader (containers
 * with WK_COUNT_UNKNOWN, closed by WK_EV_END), so trees, schemas and transcoding work the same
 * over JSON. Unescaped strings are views into the input; escaped ones are decoded into an
 * arena (or a scratch buffer). Integers without fraction or exponent that fit int64/uint64
 * become WK_EV_INT/WK_EV_UINT; every other number is a correctly rounded double (the same
 * result as strtod in the "C" locale), or its exact text with WK_JSON_READ_RAW_NUMBERS.
 * The writer is a wk_sink and accepts every event; values JSON has no form for (binary, ext,
 * timestamp, non-string map keys) are mapped as docs/formats.md describes.
 *
 * Readers and writers are per-thread objects; the one-shot functions are thread-safe.
 */
#ifndef WIREKIT_JSON_H
#define WIREKIT_JSON_H

#include "arena.h"
#include "buffer.h"
#include "event.h"
#include "value.h"

#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- reading ------------------------------------------------------------------------------ */

/* Reader flags (wk_read_opts.flags). Zero is strict RFC 8259, one value per input. */
#define WK_JSON_READ_RAW_NUMBERS 0x01u /**< numbers as WK_EV_RAWNUM / WK_VAL_RAWNUM text */
#define WK_JSON_READ_MULTI 0x02u       /**< several values separated by whitespace (JSON Lines) */
#define WK_JSON_READ_ALLOW_TRAILING 0x04u /**< stop after the first value; ignore what follows */
#define WK_JSON_READ_ALLOW_BOM 0x08u   /**< skip one leading UTF-8 byte order mark */
#define WK_JSON_READ_NAN_INF 0x10u     /**< accept NaN, Infinity, -Infinity (not JSON) */

/** Default nesting limit of the reader and the tree decoder. */
#define WK_JSON_DEFAULT_MAX_DEPTH 512


/** The event reader; lives on the caller's stack or heap. Contract of the inline calls in
 *  this header (ABI of this major version): the typed reads' fast paths read `p`, `end`,
 *  `state` (the WK__JR_* values below), `flags`, `depth`, `max_depth`, `values` and the
 *  nesting bits `stack[0..depth/64]`, and write `p`, `state`, `depth`, `values` and those
 *  bits; wk_json_reader_init and wk_json_reader_free (inline too) set or test the rest.
 *  Callers read none of the fields and must not copy a reader in use. */
typedef struct wk_json_reader {
    const uint8_t *start; /**< internal: first input byte */
    const uint8_t *p;     /**< internal: next input byte */
    const uint8_t *end;   /**< internal: end of the input */
    wk_arena *arena; /**< where escaped strings go; NULL = scratch (valid until the next call) */
    wk_buf scratch; /**< internal: escaped strings when no arena is given */
    unsigned flags; /**< internal: reader flags */
    uint32_t max_depth; /**< internal: nesting limit */
    uint32_t depth; /**< internal: open containers */
    uint32_t state; /**< internal: parser state */
    uint32_t values; /**< top-level values read */
    uint64_t *stack; /**< one bit per level: 1 = object; inline up to 512 levels */
    uint64_t inline_stack[8]; /**< internal: the stack of the first 512 levels */
    const wk_allocator *alloc; /**< internal: scratch allocator */
    wk_error err; /**< internal: the latched error */
} wk_json_reader;

/* The reader's states (`state`; internal, ABI of this major version). A latched error is
 * always WK__JR_FAILED, so a fast path that tests for one of the others needs no look at
 * `err`. WK__JR_VALUE (a key's value is due) is always inside an object; the _OBJ and _ARR
 * states say which kind of container is innermost. */
#define WK__JR_TOP 0u       /* a top-level value may start */
#define WK__JR_VALUE 1u     /* a key's value must start (after its ':') */
#define WK__JR_ARR_FIRST 2u /* after '[' */
#define WK__JR_OBJ_FIRST 3u /* after '{' */
#define WK__JR_AFTER_OBJ 4u /* after a value inside an object */
#define WK__JR_AFTER_ARR 5u /* after a value inside an array */
#define WK__JR_DONE 6u      /* input used up */
#define WK__JR_FAILED 7u    /* an error is latched */
/* A reader flag of the library's own (its stream unpacker's); init clears it from the
 * caller's flags. */
#define WK__JR_READ_MORE 0x80000000u

/** Out-of-line half of wk_json_reader_init (ABI): the byte order mark at the start of the
 *  input, skipped when allowed, else latched as the first error. */
WK_API void wk_json_reader_init_bom(wk_json_reader *r);

/**
 * Prepares `r` to read `data[0..len)`, which must stay valid (and unchanged) while events and
 * trees that point into it are in use. `opts` NULL means defaults. `arena`, when not NULL,
 * receives the decoded form of strings that contain escapes, so every string event stays
 * valid as long as the input and the arena; with NULL those strings live in a scratch buffer
 * until the next call. `opts->alloc` (NULL = libc) serves the scratch buffer and nesting
 * deeper than 512. Release with wk_json_reader_free(). Never fails; errors surface from next().
 * (Inline: it sets fields; a byte order mark goes out of line.)
 */
static inline void wk_json_reader_init(wk_json_reader *r, const void *data, size_t len,
                                       const wk_read_opts *opts, wk_arena *arena)
{
    const wk_allocator *alloc = opts != NULL ? opts->alloc : NULL;
    const uint8_t *d = (const uint8_t *)data;
    /* Field by field: the inline nesting stack needs no clearing (push sets each bit; the
     * first word is cleared below). */
    r->depth = 0;
    r->values = 0;
    r->err.code = WK_OK;
    r->err.offset = 0;
    r->err.msg = NULL;
    r->start = d;
    r->p = d;
    r->end = d + len;
    r->arena = arena;
    r->alloc = alloc;
    r->scratch.data = NULL; /* wk_buf_init, without the call */
    r->scratch.len = 0;
    r->scratch.cap = 0;
    r->scratch.max = WK_BUF_DEFAULT_MAX;
    r->scratch.alloc = alloc;
    r->scratch.fixed = false;
    r->flags = opts != NULL ? opts->flags & ~WK__JR_READ_MORE : 0;
    r->max_depth = opts != NULL && opts->max_depth != 0 ? opts->max_depth
                                                        : WK_JSON_DEFAULT_MAX_DEPTH;
    r->stack = r->inline_stack;
    r->inline_stack[0] = 0; /* the other bits of the first word are then never indeterminate */
    r->state = WK__JR_TOP;
    if (len >= 3 && d[0] == 0xEF && d[1] == 0xBB && d[2] == 0xBF) {
        wk_json_reader_init_bom(r);
    }
}

/**
 * Reads the next event. Returns WK_OK, WK_ERR_EOF after the last top-level value (and the
 * trailing-content check), or an error that is latched (later calls return it again):
 * WK_ERR_SYNTAX, WK_ERR_TRUNCATED, WK_ERR_UTF8 (invalid UTF-8 or a lone surrogate escape),
 * WK_ERR_DEPTH, WK_ERR_TRAILING, WK_ERR_NOMEM. wk_json_reader_error() gives the offset.
 */
WK_API wk_status wk_json_reader_next(wk_json_reader *r, wk_event *ev);

/** Fills `src` with this reader's event interface (for wk_value_decode, wk_transcode, ...). */
WK_API void wk_json_reader_source(wk_json_reader *r, wk_source *src);

/** Copies the latched error into `err` and returns its code (WK_OK when none). */
WK_API wk_status wk_json_reader_error(const wk_json_reader *r, wk_error *err);

/** Byte offset of the next unread byte. */
WK_API size_t wk_json_reader_offset(const wk_json_reader *r);

/* wk_json_reader_free (release the reader's scratch memory) is inline, below the typed
 * reads. */

/*
 * Typed reads, for decoding by hand without building events. Each reads exactly the event
 * wk_json_reader_next() would read next (they mix freely with it and with each other) and
 * returns:
 *  - WK_OK with the value, when it has the asked-for type;
 *  - WK_ERR_TYPE (or WK_ERR_RANGE: an integer that does not fit the asked-for type) when it
 *    has another type: nothing is consumed and nothing latched, so another typed call (or
 *    next) can read it; a string decoded into the arena on the way stays there;
 *  - WK_ERR_STATE when the next event is the END of the current array or object: nothing
 *    is consumed and nothing latched; wk_json_reader_end() closes the container, so
 *    `while (wk_json_reader_key(r, &k, &n) == WK_OK) {...}` then `wk_json_reader_end(r)`
 *    walks an object (the MessagePack reader's rule, docs/design.md "API rules");
 *  - WK_ERR_EOF after the last top-level value, as next() returns it;
 *  - the latched error (WK_ERR_SYNTAX, WK_ERR_TRUNCATED, WK_ERR_UTF8, WK_ERR_DEPTH, ...)
 *    when the input is bad, exactly as next() would report it.
 * Strings (`*s`, `*n`) live as next() describes: views into the input, escaped ones in the
 * arena or the scratch buffer. Numbers: wk_json_reader_int takes integers in int64 range,
 * wk_json_reader_uint non-negative integers, wk_json_reader_double any number (integers
 * converted); with WK_JSON_READ_RAW_NUMBERS every number is raw text, so they return
 * WK_ERR_TYPE (read it with next()).
 */
/** Typed read of the '[' that opens an array (WK_EV_ARRAY). */
WK_API wk_status wk_json_reader_begin_array(wk_json_reader *r);
/** Typed read of a non-negative integer in uint64 range. */
WK_API wk_status wk_json_reader_uint(wk_json_reader *r, uint64_t *v);
/** Typed read of any number, as a double (integers converted). */
WK_API wk_status wk_json_reader_double(wk_json_reader *r, double *v);
/** Typed read of `null`. */
WK_API wk_status wk_json_reader_nil(wk_json_reader *r);
/** Skips one whole value (a container with everything in it); WK_ERR_STATE (nothing
 *  consumed) at an END. */
WK_API wk_status wk_json_reader_skip(wk_json_reader *r);

/* Out-of-line halves of the inline typed reads below: part of the ABI, each the whole call
 * it completes (any input, every check), with its contract; call the inline calls, not
 * these. */
/** Out-of-line half of wk_json_reader_begin_map (ABI). */
WK_API wk_status wk_json_reader_begin_map_slow(wk_json_reader *r);
/** Out-of-line half of wk_json_reader_key (ABI). */
WK_API wk_status wk_json_reader_key_slow(wk_json_reader *r, const char **s, size_t *n);
/** Out-of-line half of wk_json_reader_str (ABI). */
WK_API wk_status wk_json_reader_str_slow(wk_json_reader *r, const char **s, size_t *n);
/** Out-of-line half of wk_json_reader_int (ABI). */
WK_API wk_status wk_json_reader_int_slow(wk_json_reader *r, int64_t *v);
/** Out-of-line half of wk_json_reader_bool (ABI). */
WK_API wk_status wk_json_reader_bool_slow(wk_json_reader *r, bool *v);
/** Out-of-line half of wk_json_reader_end (ABI). */
WK_API wk_status wk_json_reader_end_slow(wk_json_reader *r);
/** Out-of-line half of wk_json_reader_free (ABI). */
WK_API void wk_json_reader_free_slow(wk_json_reader *r);

/* The inline fast paths: compact input on SSE2 (x86-64); elsewhere every call goes out of
 * line. WK_NO_INLINE_READ before including wirekit headers makes every call go out of line. */
#if defined(__SSE2__) && defined(__x86_64__) && !defined(WK_NO_INLINE_READ)
#define WK__JR_INLINE 1
#else
#define WK__JR_INLINE 0
#endif

/* The inline reads are always inlined where the compiler allows it: GCC 12 at -O2 left the
 * key and string reads out of line (as local functions: a call and the reader's fields
 * reloaded each time, 0.84x of the out-of-line library's seed time against 0.66x at -O3). */
#if defined(__GNUC__)
#define WK__JR_FN static inline __attribute__((always_inline))
#else
#define WK__JR_FN static inline
#endif

#if WK__JR_INLINE
/* A short plain string body at s (after its opening quote; s[0..16) inside the input): its
 * length (0-15) when its closing quote is among those 16 bytes and no byte before it needs a
 * look (a control byte, '\\', non-ASCII), else -1. The library's short-string step on the
 * same bytes (src/formats/json/lex.h, wk__json_short_plain), which gives the same answer. */
WK__JR_FN int wk__jr_short16(const uint8_t *s)
{
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)s);
    __m128i quote = _mm_cmpeq_epi8(x, _mm_set1_epi8('"'));
    __m128i m = _mm_or_si128(_mm_or_si128(quote, _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))),
                             _mm_cmplt_epi8(x, _mm_set1_epi8(0x20)));
    unsigned mask = (unsigned)_mm_movemask_epi8(m);
    unsigned first = mask & (0u - mask); /* the first byte that needs a look, if any */
    if ((first & (unsigned)_mm_movemask_epi8(quote)) == 0) {
        return -1; /* none in 16 bytes, or not the quote */
    }
    return __builtin_ctz(first);
}

/* p + k for k < 16, reached by a jump on k (a table of 16 cases) rather than by adding k: the
 * next token's loads then need not wait for the scan that gave k (the CPU predicts the jump;
 * the lengths of keys and of one field's strings repeat with the data's shape). The library's
 * wk__advance (src/core/kernel_interface.h, docs/design.md "The kernel"); the empty asm keeps
 * the compiler from folding the table back into the add. */
#define WK__JR_ADV(K)                                                                           \
    case K:                                                                                     \
        __asm__("" : "+r"(q));                                                                  \
        return q + K;
static inline __attribute__((always_inline)) const uint8_t *wk__jr_advance(const uint8_t *q,
                                                                            unsigned k)
{
    switch (k & 15u) {
        WK__JR_ADV(0) WK__JR_ADV(1) WK__JR_ADV(2) WK__JR_ADV(3) WK__JR_ADV(4) WK__JR_ADV(5)
        WK__JR_ADV(6) WK__JR_ADV(7) WK__JR_ADV(8) WK__JR_ADV(9) WK__JR_ADV(10) WK__JR_ADV(11)
        WK__JR_ADV(12) WK__JR_ADV(13) WK__JR_ADV(14) WK__JR_ADV(15)
    }
    __builtin_unreachable();
}
#undef WK__JR_ADV

/* wk__jr_short16 for the string body at s with the input ending at `end`: fewer than 16
 * bytes left are looked at one by one, never past `end` (as the library does). */
WK__JR_FN int wk__jr_short(const uint8_t *s, const uint8_t *end)
{
    if (end - s >= 16) {
        return wk__jr_short16(s);
    }
    for (const uint8_t *q = s; q < end; q++) {
        uint8_t c = *q;
        if (c == '"') {
            return (int)(q - s);
        }
        if (c == '\\' || c < 0x20 || c >= 0x80) {
            return -1;
        }
    }
    return -1;
}
#endif

/*
 * The inline typed reads (begin_map, key, str, int, bool, end): the common case of compact
 * input (no whitespace between tokens) with at least 16 bytes or so left, a short plain key
 * or string, a small non-negative integer, is read here with one test of `state`; anything
 * else (whitespace, escapes, long or non-ASCII strings, other numbers, wrong types, errors,
 * the input's last bytes) calls the out-of-line half, which decides from the start, so the
 * results (values, status, error, offset) are the library's. The fast paths read no byte
 * past `end`.
 */
/** Typed read of the '{' that opens an object (WK_EV_MAP). */
WK__JR_FN wk_status wk_json_reader_begin_map(wk_json_reader *r)
{
#if WK__JR_INLINE
    const uint8_t *p = r->p;
    uint32_t st = r->state, d = r->depth;
    if ((st == WK__JR_VALUE || (st == WK__JR_TOP && r->values == 0)) && p < r->end &&
        *p == '{' && d < 512 && d < r->max_depth) {
        r->stack[d >> 6] |= 1ull << (d & 63);
        r->depth = d + 1;
        r->p = p + 1;
        r->state = WK__JR_OBJ_FIRST;
        return WK_OK;
    }
#endif
    return wk_json_reader_begin_map_slow(r);
}

/** The next key of the current object. WK_ERR_STATE (nothing consumed, not latched) at its
 *  '}' and when no key is due (not inside an object, or its value is next). */
WK__JR_FN wk_status wk_json_reader_key(wk_json_reader *r, const char **s, size_t *n)
{
#if WK__JR_INLINE
    const uint8_t *p = r->p, *end = r->end;
    uint32_t st = r->state;
    if (st == WK__JR_AFTER_OBJ || st == WK__JR_OBJ_FIRST) {
        /* the key's quote (after the ',' that follows a value), its body, then ':' at once */
        const uint8_t *q = p + (st == WK__JR_AFTER_OBJ);
        if (end - q >= 2 && *q == '"' && (q == p || *p == ',')) {
            int k = wk__jr_short(q + 1, end);
            const uint8_t *close = k >= 0 ? wk__jr_advance(q + 1, (unsigned)k) : NULL;
            if (close != NULL && end - close > 1 && close[1] == ':') {
                *s = (const char *)q + 1;
                *n = (size_t)k;
                r->p = close + 2;
                r->state = WK__JR_VALUE;
                return WK_OK;
            }
        }
        if (p < end && *p == '}') {
            return WK_ERR_STATE; /* the object's end: wk_json_reader_end consumes it */
        }
    }
#endif
    return wk_json_reader_key_slow(r, s, n);
}

/** Typed read of a string value: `*s`, `*n` (a view, see above). */
WK__JR_FN wk_status wk_json_reader_str(wk_json_reader *r, const char **s, size_t *n)
{
#if WK__JR_INLINE
    const uint8_t *p = r->p;
    if (r->state == WK__JR_VALUE && p < r->end && *p == '"') {
        int k = wk__jr_short(p + 1, r->end);
        if (k >= 0) {
            *s = (const char *)p + 1;
            *n = (size_t)k;
            r->p = wk__jr_advance(p + 2, (unsigned)k);
            r->state = WK__JR_AFTER_OBJ; /* a key's value: inside an object */
            return WK_OK;
        }
    }
#endif
    return wk_json_reader_str_slow(r, s, n);
}

/** Typed read of an integer in int64 range. */
WK__JR_FN wk_status wk_json_reader_int(wk_json_reader *r, int64_t *v)
{
#if WK__JR_INLINE
    /* a key's value of 1 to 18 digits, no leading zero, followed by a byte that cannot go on
     * a number (the library's small-integer step: src/formats/json/lex.h) */
    const uint8_t *p = r->p, *end = r->end;
    if (r->state == WK__JR_VALUE && p < end && !(r->flags & WK_JSON_READ_RAW_NUMBERS)) {
        const uint8_t *stop = end - p < 18 ? end : p + 18; /* at most 18 digits */
        const uint8_t *q = p;
        uint64_t x = 0;
        unsigned c;
        while (q < stop && (c = (unsigned)*q - '0') <= 9) {
            x = x * 10 + c;
            q++;
        }
        /* a number cannot end the input (the library then reports it) */
        if (q != p && q != end) {
            unsigned e = *q;
            if (!(e - '0' <= 9 || e == '.' || (e | 0x20) == 'e' || (*p == '0' && q - p > 1))) {
                *v = (int64_t)x;
                r->p = q;
                r->state = WK__JR_AFTER_OBJ; /* a key's value: inside an object */
                return WK_OK;
            }
        }
    }
#endif
    return wk_json_reader_int_slow(r, v);
}

/** Typed read of `true` or `false`. */
WK__JR_FN wk_status wk_json_reader_bool(wk_json_reader *r, bool *v)
{
#if WK__JR_INLINE
    const uint8_t *p = r->p;
    if (r->state == WK__JR_VALUE && r->end - p >= 5) {
        uint32_t w;
        memcpy(&w, p, 4);
        if (w == 0x65757274u) { /* "true", little-endian */
            *v = true;
            r->p = p + 4;
            r->state = WK__JR_AFTER_OBJ; /* a key's value: inside an object */
            return WK_OK;
        }
        if (w == 0x736c6166u && p[4] == 'e') { /* "false" */
            *v = false;
            r->p = p + 5;
            r->state = WK__JR_AFTER_OBJ;
            return WK_OK;
        }
    }
#endif
    return wk_json_reader_bool_slow(r, v);
}

/** Closes the innermost open array or object: consumes its ']' or '}'. WK_ERR_STATE (not
 *  latched, nothing consumed) when elements remain or no container is open; a latched
 *  error when the input is bad. */
WK__JR_FN wk_status wk_json_reader_end(wk_json_reader *r)
{
#if WK__JR_INLINE
    const uint8_t *p = r->p;
    uint32_t st = r->state;
    if (p < r->end) {
        /* the states say which container is innermost: '}' or ']' closes it right here */
        uint8_t c = *p;
        if (((st == WK__JR_AFTER_OBJ || st == WK__JR_OBJ_FIRST) && c == '}') ||
            ((st == WK__JR_AFTER_ARR || st == WK__JR_ARR_FIRST) && c == ']')) {
            uint32_t d = r->depth - 1;
            r->p = p + 1;
            r->depth = d;
            if (d == 0) {
                r->values++;
                r->state = WK__JR_TOP;
            } else {
                d--;
                r->state = ((r->stack[d >> 6] >> (d & 63)) & 1) ? WK__JR_AFTER_OBJ
                                                                : WK__JR_AFTER_ARR;
            }
            return WK_OK;
        }
    }
#endif
    return wk_json_reader_end_slow(r);
}

/** Releases the reader's scratch memory (not the arena). */
static inline void wk_json_reader_free(wk_json_reader *r)
{
    if (r->scratch.data != NULL || r->stack != r->inline_stack) {
        wk_json_reader_free_slow(r);
    }
}

/**
 * Parses one JSON document straight into a value tree in `arena` (the fast path: no events,
 * nodes written in place). Gives the same tree as wk_value_decode over a wk_json_reader with
 * the same options. Strings without escapes point into `data` unless
 * WK_READ_COPY_STRINGS is set; `*consumed` (may be NULL) gets the bytes used, which is
 * the whole input unless WK_JSON_READ_ALLOW_TRAILING. Scratch memory comes from `alloc`
 * (NULL = libc) and is freed before returning. Returns WK_OK or a reader status (see
 * wk_json_reader_next; WK_ERR_TRUNCATED for empty input); on error the arena may hold
 * partial allocations. Thread-safe. On x86-64 CPUs with AVX2 the scans run 32 bytes a step,
 * chosen once per process (the environment variable WK_JSON_SIMD=base forces the SSE2
 * baseline); the result, error offsets included, is the same either way.
 */
WK_API wk_status wk_json_decode_value(const void *data, size_t len, const wk_read_opts *opts,
                                      wk_arena *arena, wk_value **out, size_t *consumed,
                                      wk_error *err);

/**
 * Checks that `data[0..len)` is what wk_json_decode_value() accepts with the same options,
 * without building anything: no tree, no copy, no unescaping, no number conversion (numbers
 * are checked against the grammar only). Every check of the parser is kept: grammar, UTF-8,
 * control characters, escapes (with surrogate pairs), the depth limit, the options'
 * extensions (WK_JSON_READ_ALLOW_BOM, _NAN_INF, _ALLOW_TRAILING; WK_JSON_READ_MULTI stops
 * after the first value as the parser does; WK_JSON_READ_RAW_NUMBERS and WK_READ_COPY_STRINGS
 * change nothing). On bad input it returns the status wk_json_decode_value returns, and `err`
 * gets the same message and byte offset: WK_ERR_SYNTAX, WK_ERR_TRUNCATED (also for empty
 * input), WK_ERR_UTF8, WK_ERR_DEPTH, WK_ERR_TRAILING. It does not check what only a tree
 * can run out of, so the parser may still fail where this passes: WK_ERR_NOMEM (the arena),
 * WK_ERR_RANGE (a string of 4 GiB or more, a container of 2^32 elements or more).
 * WK_ERR_NOMEM here means nesting deeper than 512 levels (with a higher `max_depth`) found
 * `opts->alloc` (NULL = libc) out of memory for its stack of one bit per level, which is freed
 * before returning. `*consumed` (may be NULL) gets what the parser's would: the bytes up to
 * the end of the value and the whitespace after it, the whole input unless trailing content
 * is allowed. On success `err` gets WK_OK and that offset. Thread-safe.
 */
WK_API wk_status wk_json_validate(const void *data, size_t len, const wk_read_opts *opts,
                                  size_t *consumed, wk_error *err);

/** Turns a byte offset into 1-based line and column numbers (columns count bytes; lines end
 *  at '\n'). Offsets past the end are clamped. Thread-safe. */
WK_API void wk_json_line_col(const void *data, size_t len, size_t offset, size_t *line,
                             size_t *col);

/* ---- writing ------------------------------------------------------------------------------ */

/* Writer flags (wk_json_write_opts.flags). Zero is compact RFC 8259 output. */
#define WK_JSON_WRITE_PRETTY 0x01u  /**< newlines and indentation (see indent) */
#define WK_JSON_WRITE_NAN_INF 0x02u /**< write NaN, Infinity, -Infinity instead of failing */
#define WK_JSON_WRITE_NEWLINE 0x04u /**< end every top-level value with '\n' (JSON Lines) */

/** Deepest nesting the writer accepts. */
#define WK_JSON_WRITER_MAX_DEPTH 1024

/** Writer options; zero-initialised options are the defaults (compact). */
typedef struct wk_json_write_opts {
    unsigned flags;  /**< WK_JSON_WRITE_* */
    uint32_t indent; /**< spaces per level when pretty; 0 = 2; at most 16 */
} wk_json_write_opts;

/**
 * The event writer; lives on the caller's stack or heap, made by wk_json_writer_init.
 * Contract of the inline calls in this header (ABI of this major version): they read and
 * write `out` (its data/len/cap), `depth`, `values`, `err` and `frame[0..depth]`, and read
 * `flags`/`indent`; callers read none of the fields and must not copy a writer in use.
 */
typedef struct wk_json_writer {
    wk_buf *out; /**< internal: where bytes go */
    unsigned flags; /**< internal: WK_JSON_WRITE_* flags */
    uint32_t indent; /**< internal: spaces per level */
    uint32_t depth; /**< internal: open containers */
    uint64_t values; /**< top-level values written */
    wk_error err; /**< internal: the latched error */
    /** Per level (frame[0] = top level): object?, has items?, after key?, and a stop bit that
     * keeps the inline paths out (top level, pretty output, an error latched). */
    uint8_t frame[WK_JSON_WRITER_MAX_DEPTH + 1];
} wk_json_writer;

/* Frame bits and the room the inline fast paths need (internal). */
#define WK__JW_OBJECT 0x01u
#define WK__JW_ITEMS 0x02u /* at least one element written */
#define WK__JW_VALUE 0x04u /* object: a key was written, its value is next */
#define WK__JW_STOP 0x80u  /* the inline paths must not run at this level */
#define WK__JW_ROOM 32u

/**
 * Prepares `w` to append JSON to `out` (not cleared). `opts` NULL means compact. Allocates
 * nothing; `out` must stay valid while `w` is in use. (Inline: it only sets fields.)
 */
static inline void wk_json_writer_init(wk_json_writer *w, wk_buf *out,
                                       const wk_json_write_opts *opts)
{
    unsigned flags = opts != NULL ? opts->flags : 0;
    uint32_t indent = opts != NULL && opts->indent != 0 ? opts->indent : 2;
    w->out = out;
    w->flags = flags;
    w->indent = indent > 16 ? 16 : indent;
    w->depth = 0;
    w->frame[0] = WK__JW_STOP;
    w->values = 0;
    w->err.code = WK_OK;
    w->err.offset = 0;
    w->err.msg = NULL;
}

/**
 * Writes one event. Several top-level values are separated by '\n'. Returns WK_OK or the
 * latched error: WK_ERR_LIMIT/WK_ERR_NOMEM (buffer), WK_ERR_RANGE (NaN or infinity without
 * WK_JSON_WRITE_NAN_INF, a timestamp outside years 0000-9999), WK_ERR_TYPE (an array, map or
 * ext as a map key), WK_ERR_UTF8 (a string that is not UTF-8), WK_ERR_DEPTH, WK_ERR_STATE
 * (an END that closes nothing).
 */
WK_API wk_status wk_json_writer_event(wk_json_writer *w, const wk_event *ev);

/* Out-of-line halves of the inline typed calls below: part of the ABI, each with the contract
 * of the call it completes (wk_json_writer_begin_slow(w, true) is begin_map, false
 * begin_array); call the inline calls, not these. wk_json_fmt_u64 writes the decimal digits
 * of `u` at `d` (at least 20 bytes of room) and returns how many it wrote. */
/** Out-of-line half of wk_json_writer_begin_map (`object` true) and _begin_array (ABI). */
WK_API wk_status wk_json_writer_begin_slow(wk_json_writer *w, bool object);
/** Out-of-line half of wk_json_writer_end (ABI). */
WK_API wk_status wk_json_writer_end_slow(wk_json_writer *w);
/** Out-of-line half of wk_json_writer_key (ABI). */
WK_API wk_status wk_json_writer_key_slow(wk_json_writer *w, const char *s, size_t n);
/** Out-of-line half of wk_json_writer_str (ABI). */
WK_API wk_status wk_json_writer_str_slow(wk_json_writer *w, const char *s, size_t n);
/** Out-of-line half of wk_json_writer_int (ABI). */
WK_API wk_status wk_json_writer_int_slow(wk_json_writer *w, int64_t i);
/** Out-of-line half of wk_json_writer_uint (ABI). */
WK_API wk_status wk_json_writer_uint_slow(wk_json_writer *w, uint64_t u);
/** Out-of-line half of wk_json_writer_bool (ABI). */
WK_API wk_status wk_json_writer_bool_slow(wk_json_writer *w, bool b);
/** Out-of-line half of wk_json_writer_nil (ABI). */
WK_API wk_status wk_json_writer_nil_slow(wk_json_writer *w);
/** Writes the decimal digits of `u` at `d` (20 bytes of room) and returns their count. */
WK_API size_t wk_json_fmt_u64(uint64_t u, char *d);

/* The room check of the inline paths: `out` has WK__JW_ROOM bytes free. */
static inline bool wk__jw_room(const wk_json_writer *w)
{
    const wk_buf *b = w->out;
    return __builtin_expect(b->cap - b->len >= WK__JW_ROOM, 1);
}

/* Frame v takes a value (array, or object after a key) on the inline path (no stop bit). */
static inline bool wk__jw_value_slot(uint8_t v)
{
    return ((v ^ (v >> 2)) & (WK__JW_STOP | WK__JW_OBJECT)) == 0;
}

/* Frame v takes a key on the inline path. */
static inline bool wk__jw_key_slot(uint8_t v)
{
    return (v & (WK__JW_STOP | WK__JW_OBJECT | WK__JW_VALUE)) == WK__JW_OBJECT;
}

/* High bit set in each byte of x that a string writer must look at: < 0x20, '"', '\\',
 * >= 0x80 (zero when none). */
static inline uint64_t wk__jw_special(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101ull;
    const uint64_t high = 0x8080808080808080ull;
    uint64_t q = x ^ (ones * '"');
    uint64_t bs = x ^ (ones * '\\');
    return (((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((bs - ones) & ~bs) | x) & high;
}

/* True when no byte of a or z needs a look: SSE2 for run-time data, SWAR for constants
 * (which then fold away). */
static inline bool wk__jw_plain(uint64_t a, uint64_t z)
{
#if defined(__SSE2__) && defined(__x86_64__)
    if (!(__builtin_constant_p(a) && __builtin_constant_p(z))) {
        __m128i x = _mm_set_epi64x((long long)z, (long long)a);
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
                                              _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))),
                                 _mm_cmplt_epi8(x, _mm_set1_epi8(0x20)));
        return _mm_movemask_epi8(m) == 0;
    }
#endif
    return (wk__jw_special(a) | wk__jw_special(z)) == 0;
}

/* Copies s[0..n) (n <= 16) to d when no byte needs escaping or a UTF-8 check; returns false
 * otherwise (d may have been written; the caller does not commit it). Whole-word loads and
 * stores that overlap, never outside s[0..n) or d[0..16). Always inlined where GCC allows it:
 * at -O2 it left it out of line in the fused schema encoder (seed record 621 instructions
 * against 608). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline bool wk__jw_copy16(uint8_t *d, const char *s, size_t n)
{
    if (n >= 8) {
        uint64_t a, z;
        memcpy(&a, s, 8);
        memcpy(&z, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &z, 8);
        return wk__jw_plain(a, z);
    }
    if (n >= 4) {
        uint32_t a, z;
        memcpy(&a, s, 4);
        memcpy(&z, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &z, 4);
        uint64_t x = (uint64_t)a | (uint64_t)z << 32;
        return wk__jw_plain(x, x);
    }
    if (n == 0) {
        return true;
    }
    uint8_t a = (uint8_t)s[0], m = (uint8_t)s[n / 2], z = (uint8_t)s[n - 1];
    d[0] = a;
    d[n / 2] = m;
    d[n - 1] = z;
    return wk__jw_special(0x2020202020000000ull | a | (uint64_t)m << 8 | (uint64_t)z << 16) == 0;
}

/* Writes the ',' a value needs in frame `*fr` (= v, not a key slot) and moves the frame on;
 * returns the new write position. */
static inline uint8_t *wk__jw_value_sep(uint8_t *d, uint8_t *fr, uint8_t v)
{
    bool after_key = (v & (WK__JW_OBJECT | WK__JW_VALUE)) == (WK__JW_OBJECT | WK__JW_VALUE);
    *d = ',';
    d += !after_key && (v & WK__JW_ITEMS);
    *fr = after_key ? (uint8_t)(v & ~WK__JW_VALUE) : (uint8_t)(v | WK__JW_ITEMS);
    return d;
}

/*
 * Typed calls for writing by hand: each does exactly what the matching event does
 * (wk_json_writer_str = WK_EV_STR, begin_object = WK_EV_MAP, end = WK_EV_END, ...), same
 * bytes and same latched errors, without building events. wk_json_writer_key is
 * wk_json_writer_str that also checks an object key is due (WK_ERR_STATE otherwise).
 * They are inline: compact output inside a container with room in `out` takes one room
 * check and a few stores (short strings are checked 8 bytes at a time); anything else
 * (pretty output, top level, growth, escapes, errors) goes out of line. `out->len` is
 * always up to date. Like every writer call they are no-ops returning the latched error
 * once one is latched.
 */
/** Typed write of the opening of an object (WK_EV_MAP with an unknown count). */
static inline wk_status wk_json_writer_begin_map(wk_json_writer *w)
{
    uint8_t *fr = &w->frame[w->depth];
    uint8_t v = *fr;
    if (wk__jw_room(w) && wk__jw_value_slot(v) && w->depth < WK_JSON_WRITER_MAX_DEPTH) {
        uint8_t *d = w->out->data + w->out->len;
        d = wk__jw_value_sep(d, fr, v);
        *d++ = '{';
        w->frame[++w->depth] = WK__JW_OBJECT;
        w->out->len = (size_t)(d - w->out->data);
        return WK_OK;
    }
    if (w->depth == 0 && w->values == 0 && w->err.code == WK_OK && wk__jw_room(w)) {
        /* The first top-level value: nothing before it. */
        w->out->data[w->out->len++] = '{';
        w->frame[w->depth = 1] =
            (uint8_t)(WK__JW_OBJECT | ((w->flags & WK_JSON_WRITE_PRETTY) ? WK__JW_STOP : 0));
        return WK_OK;
    }
    return wk_json_writer_begin_slow(w, true);
}

/** Typed write of the opening of an array (WK_EV_ARRAY with an unknown count). */
static inline wk_status wk_json_writer_begin_array(wk_json_writer *w)
{
    uint8_t *fr = &w->frame[w->depth];
    uint8_t v = *fr;
    if (wk__jw_room(w) && wk__jw_value_slot(v) && w->depth < WK_JSON_WRITER_MAX_DEPTH) {
        uint8_t *d = w->out->data + w->out->len;
        d = wk__jw_value_sep(d, fr, v);
        *d++ = '[';
        w->frame[++w->depth] = 0;
        w->out->len = (size_t)(d - w->out->data);
        return WK_OK;
    }
    if (w->depth == 0 && w->values == 0 && w->err.code == WK_OK && wk__jw_room(w)) {
        /* The first top-level value: nothing before it. */
        w->out->data[w->out->len++] = '[';
        w->frame[w->depth = 1] =
            (uint8_t)(0 | ((w->flags & WK_JSON_WRITE_PRETTY) ? WK__JW_STOP : 0));
        return WK_OK;
    }
    return wk_json_writer_begin_slow(w, false);
}

/** Typed write of the end of the innermost open object or array (WK_EV_END). */
static inline wk_status wk_json_writer_end(wk_json_writer *w)
{
    uint8_t v = w->frame[w->depth];
    if (wk__jw_room(w) && (v & (WK__JW_STOP | WK__JW_VALUE)) == 0) {
        uint8_t *d = w->out->data + w->out->len;
        *d = (v & WK__JW_OBJECT) ? '}' : ']';
        w->out->len++;
        if (--w->depth == 0) {
            w->values++;
            if (w->flags & WK_JSON_WRITE_NEWLINE) {
                w->out->data[w->out->len++] = '\n';
            }
        }
        return WK_OK;
    }
    return wk_json_writer_end_slow(w);
}

/** Typed write of an object key `s[0..n)` (WK_ERR_STATE when no key is due). */
static inline wk_status wk_json_writer_key(wk_json_writer *w, const char *s, size_t n)
{
    uint8_t *fr = &w->frame[w->depth];
    uint8_t v = *fr;
    if (wk__jw_room(w) && n <= 16 && wk__jw_key_slot(v)) {
        uint8_t *d = w->out->data + w->out->len;
        uint8_t *q = d;
        *q = ',';
        q += (v & WK__JW_ITEMS) != 0;
        *q++ = '"';
        if (wk__jw_copy16(q, s, n)) {
            q += n;
            q[0] = '"';
            q[1] = ':';
            *fr = (uint8_t)(v | WK__JW_ITEMS | WK__JW_VALUE);
            w->out->len = (size_t)(q + 2 - w->out->data);
            return WK_OK;
        }
    }
    return wk_json_writer_key_slow(w, s, n);
}

/** Typed write of the string `s[0..n)` (UTF-8, escaped as needed). */
static inline wk_status wk_json_writer_str(wk_json_writer *w, const char *s, size_t n)
{
    uint8_t *fr = &w->frame[w->depth];
    uint8_t v = *fr;
    if (wk__jw_room(w) && n <= 16 && wk__jw_value_slot(v)) {
        uint8_t *d = w->out->data + w->out->len;
        uint8_t *q = d;
        bool after_key = (v & (WK__JW_OBJECT | WK__JW_VALUE)) ==
                         (WK__JW_OBJECT | WK__JW_VALUE);
        *q = ',';
        q += !after_key && (v & WK__JW_ITEMS);
        *q++ = '"';
        if (wk__jw_copy16(q, s, n)) {
            q[n] = '"';
            *fr = after_key ? (uint8_t)(v & ~WK__JW_VALUE) : (uint8_t)(v | WK__JW_ITEMS);
            w->out->len = (size_t)(q + n + 1 - w->out->data);
            return WK_OK;
        }
    }
    return wk_json_writer_str_slow(w, s, n);
}

/** Typed write of an unsigned integer. */
static inline wk_status wk_json_writer_uint(wk_json_writer *w, uint64_t u)
{
    uint8_t *fr = &w->frame[w->depth];
    uint8_t v = *fr;
    if (wk__jw_room(w) && wk__jw_value_slot(v)) {
        uint8_t *d = w->out->data + w->out->len;
        d = wk__jw_value_sep(d, fr, v);
        if (u < 10) {
            *d++ = (uint8_t)('0' + u);
        } else if (u < 100) {
            uint32_t t = (uint32_t)u / 10;
            d[0] = (uint8_t)('0' + t);
            d[1] = (uint8_t)('0' + (uint32_t)u - 10 * t);
            d += 2;
        } else {
            d += wk_json_fmt_u64(u, (char *)d);
        }
        w->out->len = (size_t)(d - w->out->data);
        return WK_OK;
    }
    return wk_json_writer_uint_slow(w, u);
}

/** Typed write of a signed integer. */
static inline wk_status wk_json_writer_int(wk_json_writer *w, int64_t i)
{
    uint8_t *fr = &w->frame[w->depth];
    uint8_t v = *fr;
    if (wk__jw_room(w) && wk__jw_value_slot(v)) {
        uint8_t *d = w->out->data + w->out->len;
        d = wk__jw_value_sep(d, fr, v);
        uint64_t u = (uint64_t)i;
        if (i < 0) {
            *d++ = '-';
            u = 0 - u;
        }
        if (u < 10) {
            *d++ = (uint8_t)('0' + u);
        } else if (u < 100) {
            uint32_t t = (uint32_t)u / 10;
            d[0] = (uint8_t)('0' + t);
            d[1] = (uint8_t)('0' + (uint32_t)u - 10 * t);
            d += 2;
        } else {
            d += wk_json_fmt_u64(u, (char *)d);
        }
        w->out->len = (size_t)(d - w->out->data);
        return WK_OK;
    }
    return wk_json_writer_int_slow(w, i);
}

/** Typed write of `true` or `false`. */
static inline wk_status wk_json_writer_bool(wk_json_writer *w, bool b)
{
    uint8_t *fr = &w->frame[w->depth];
    uint8_t v = *fr;
    if (wk__jw_room(w) && wk__jw_value_slot(v)) {
        uint8_t *d = w->out->data + w->out->len;
        d = wk__jw_value_sep(d, fr, v);
        uint64_t yes, no;
        memcpy(&yes, "true    ", 8);
        memcpy(&no, "false   ", 8);
        uint64_t word = b ? yes : no; /* one store; the room covers the spaces */
        memcpy(d, &word, 8);
        d += b ? 4 : 5;
        w->out->len = (size_t)(d - w->out->data);
        return WK_OK;
    }
    return wk_json_writer_bool_slow(w, b);
}

/** Typed write of `null`. */
static inline wk_status wk_json_writer_nil(wk_json_writer *w)
{
    uint8_t *fr = &w->frame[w->depth];
    uint8_t v = *fr;
    if (wk__jw_room(w) && wk__jw_value_slot(v)) {
        uint8_t *d = w->out->data + w->out->len;
        d = wk__jw_value_sep(d, fr, v);
        memcpy(d, "null", 4);
        w->out->len = (size_t)(d + 4 - w->out->data);
        return WK_OK;
    }
    return wk_json_writer_nil_slow(w);
}

/** Writes a double as the shortest text that reads back to it (WK_ERR_ARG for NaN and
 * infinities unless WK_JSON_WRITE_NAN_INF). */
WK_API wk_status wk_json_writer_double(wk_json_writer *w, double d);

/** Fills `sink` with this writer's event interface. */
WK_API void wk_json_writer_sink(wk_json_writer *w, wk_sink *sink);

/** Checks that every container was closed; returns WK_OK, the latched error, or WK_ERR_STATE
 *  (a value left open). `err` (may be NULL) gets the details, offset into the output. */
/** wk_json_writer_finish's out-of-line half (ABI; call wk_json_writer_finish). */
WK_API wk_status wk_json_writer_finish_slow(wk_json_writer *w, wk_error *err);
/** Checks that every container was closed and returns the latched error, or WK_ERR_STATE for
 * an unfinished document; `err` gets the details. */
static inline wk_status wk_json_writer_finish(wk_json_writer *w, wk_error *err)
{
    if (w->err.code == WK_OK && w->depth == 0 && err == NULL) {
        return WK_OK;
    }
    return wk_json_writer_finish_slow(w, err);
}

/**
 * Writes the tree `v` as one JSON value to `out` (the fast path: walks the tree directly,
 * same bytes as wk_value_encode into a wk_json_writer). `opts` NULL means compact. Returns
 * WK_OK or a writer status (see wk_json_writer_event); on error `out` may hold a partial
 * value. Thread-safe.
 */
WK_API wk_status wk_json_encode_value(const wk_value *v, const wk_json_write_opts *opts,
                                      wk_buf *out, wk_error *err);


/* ---- transcoding to and from MessagePack (no tree) ---------------------------------------- */

/**
 * Converts JSON to MessagePack: wk_convert between the table's rows (wirekit/format.h), the
 * path `wirekit convert` takes, which builds each top-level value's tree (fused parser) and
 * encodes it, and streams a value longer than 1 MiB through its events instead, so memory
 * is one small value's tree or one big value's bytes at a time (plus the output). Integers
 * that fit int64/uint64 become MessagePack integers in their shortest form, other numbers
 * float64 (raw-number mode: strings). With WK_JSON_READ_MULTI in `opts` every top-level value
 * (JSON Lines or whitespace-separated) becomes one MessagePack value in sequence. Appends to
 * `out`, complete values only (on an error, the values before the bad one). Returns WK_OK or
 * the reader's or writer's status; `err` offsets are into the input for reader errors and
 * into the output for writer errors. Thread-safe.
 */
WK_API wk_status wk_json_to_msgpack(const void *json, size_t len, const wk_read_opts *opts,
                                    wk_buf *out, wk_error *err);

/**
 * Converts a sequence of zero or more MessagePack values to JSON (one value per top-level
 * MessagePack value, separated by '\n'; add WK_JSON_WRITE_NEWLINE to end each with '\n').
 * Values JSON cannot express are mapped as wk_json_writer_event describes. `max_depth` limits
 * MessagePack nesting (0 = 512). Goes through wk_convert, as `wirekit convert` does. Appends
 * to `out`, complete values only (on an error, the values before the bad one). Returns WK_OK
 * or the reader's or writer's status (see wk_mp_reader_next, wk_json_writer_event); `err`
 * offsets are into the input, also for a value JSON cannot hold (a string that is not UTF-8:
 * its first bad byte; a map key JSON cannot hold, NaN, a timestamp out of range: the
 * value's first byte), and into the output when the output fails. Thread-safe.
 */
WK_API wk_status wk_json_from_msgpack(const void *mp, size_t len, const wk_json_write_opts *opts,
                                      uint32_t max_depth, wk_buf *out, wk_error *err);

#ifdef __cplusplus
}
#endif
#endif
