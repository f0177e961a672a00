/*
 * wirekit media types (Content-Type values): parse, serialize, look up well-known types.
 *
 * The grammar is written once with the text codec (wk_mt_grammar(), the oracle); parsing
 * runs a hand-tuned scanner that a differential test and a fuzzer hold equal to the grammar.
 * Default mode is the WHATWG MIME Sniffing Standard ("parse a MIME type" over bytes, each
 * byte one code point, as in "parse a MIME type from bytes"); WK_MT_STRICT is RFC 9110's
 * grammar, where any error rejects. Parsing allocates nothing: the result is a struct of views
 * into the input (parameters in the input's case) and a lowercase essence; the canonical
 * form, names lowercased too, appears on output.
 *
 * A wk_media_type is a plain value: zero-initialised it is empty, a struct assignment copies
 * it, and nothing in it is owned (there is nothing to free). The essence, type and subtype
 * are always lowercase: a view of the well-known table, of the input when it was written in
 * lower case, or else a lowercase copy inside the struct (read them with wk_mt_essence(),
 * wk_mt_type() and wk_mt_subtype(), which stay right in a copy). Parameters are views of the
 * input, in the input's case.
 *
 * Rendering never copies or allocates when the text already exists: a well-known type with
 * no parameters, or with only `charset=utf-8`, renders as a pointer to a precomputed string,
 * and an input already in canonical form renders as a view of itself; such a view is kept
 * in the struct, so the next render is a few instructions. Any other form is built into a
 * buffer the caller passes.
 *
 * Thread-safety: a wk_media_type belongs to one thread at a time; the well-known table and
 * the compiled grammars are immutable and shared.
 */
#ifndef WIREKIT_MEDIATYPE_H
#define WIREKIT_MEDIATYPE_H

#include "buffer.h"
#include "core.h"
#include "text.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Parse flag: RFC 9110 media-type grammar (no whitespace trimming, no dropped parameters,
 *  a duplicate parameter name is an error). Default: WHATWG. */
#define WK_MT_STRICT 0x1u
/** Parse flag: the input is UTF-8 text rather than bytes-as-code-points. Parameter values may
 *  then hold U+0080..U+00FF only as their two-byte UTF-8 forms; any other non-ASCII makes a
 *  value invalid (dropped in WHATWG mode, an error in strict mode), as a code point above
 *  U+00FF does in the standard. Serialization copies the bytes, so output stays UTF-8. */
#define WK_MT_UTF8 0x2u

/** Serialize style: parameters joined with ";" (the WHATWG serialization). */
#define WK_MT_STYLE_WHATWG 0u
/** Serialize style: parameters joined with "; " (the common server style). */
#define WK_MT_STYLE_SPACE 1u

/** Most parameters a media type holds (distinct names that survived parsing). */
#define WK_MT_MAX_PARAMS 16
/** Longest essence ("type/subtype") a media type holds as a lowercase copy of its own (a type
 *  not in the table, written with capitals); RFC 6838 allows 127 bytes for each name. Such an
 *  essence that is longer is WK_ERR_LIMIT; one in lower case is a view and has no limit. */
#define WK_MT_ESSENCE_MAX 255

/** One parameter of a media type. */
typedef struct wk_mt_param {
    wk_slice name;  /**< as written; names compare case-insensitively */
    wk_slice value; /**< as written; a quoted value is the text between the quotes */
    uint8_t quoted;      /**< the value was a quoted string */
    uint8_t escaped;     /**< the quoted value holds backslash escapes: see wk_mt_param_value */
} wk_mt_param;

/** A parsed or built media type: a plain value, safe to zero-initialise (empty) and to copy
 * by assignment; it owns nothing. The fields are the contract of the inline accessors and of
 * wk_mt_render(); only the library writes them. */
typedef struct wk_media_type {
    /** The lowercase essence when it lies outside the struct (the well-known table, or the
     *  input when written in lower case); NULL when it is the copy in `lower`. Read the
     *  essence with wk_mt_essence(). */
    const char *essence_ptr;
    size_t essence_len; /**< length of the essence; 0 when there is no type */
    size_t type_len;    /**< length of the type, the bytes of the essence before '/' */
    uint8_t nparams;    /**< parameters in `params` */
    uint16_t id;          /**< well-known id (wk_mt_known_get), 0 when not in the table */
    uint8_t canonical;    /**< which styles the input is already the serialization of */
    uint8_t render_styles; /**< bit (1 << style): `render_view` is that style's form */
    /** The rendered form wk_mt_render() found without building it: a view of the table or of
     *  the input, never of the struct itself, so a copy keeps it valid. */
    wk_slice render_view;
    wk_slice input; /**< the parsed text, whitespace-trimmed (empty for wk_mt_build) */
    wk_mt_param params[WK_MT_MAX_PARAMS]; /**< the parameters, in input order, duplicates removed */
    /** The lowercase essence, NUL-terminated, when `essence_ptr` is NULL (a type not in the
     *  table written with capitals). */
    char lower[WK_MT_ESSENCE_MAX + 1];
} wk_media_type;

/** Initialiser of an empty wk_media_type; all-zero bytes are the same (`= {0}`, calloc or
 *  memset). A media type needs no initialisation before wk_mt_parse() or wk_mt_build(). */
#ifdef __cplusplus
#define WK_MT_INIT {} /**< C++: value-initialised, no missing-initializer warning */
#else
#define WK_MT_INIT {0}
#endif

/** The lowercase essence "type/subtype" of *mt (empty when *mt holds no type). */
static inline wk_slice wk_mt_essence(const wk_media_type *mt)
{
    wk_slice s;
    s.ptr = mt->essence_ptr != NULL ? mt->essence_ptr : mt->lower;
    s.len = mt->essence_len;
    return s;
}

/** The lowercase type of *mt (empty when *mt holds no type). */
static inline wk_slice wk_mt_type(const wk_media_type *mt)
{
    wk_slice s = wk_mt_essence(mt);
    s.len = mt->type_len;
    return s;
}

/** The lowercase subtype of *mt (empty when *mt holds no type). */
static inline wk_slice wk_mt_subtype(const wk_media_type *mt)
{
    wk_slice s = wk_mt_essence(mt);
    if (s.len != 0) {
        s.ptr += mt->type_len + 1u;
        s.len -= mt->type_len + 1u;
    }
    return s;
}

/**
 * Parses `data[0..len)` into *mt (views of `data`, which must outlive *mt). `flags`: 0
 * (WHATWG), WK_MT_STRICT, WK_MT_UTF8, or both. Allocates nothing. Returns WK_OK;
 * WK_ERR_SYNTAX for a value that is not a media type (err->offset is the first byte that
 * made it so, err->msg says what was expected); WK_ERR_LIMIT when more than
 * WK_MT_MAX_PARAMS distinct parameters survive or an essence to copy in lower case is longer
 * than WK_MT_ESSENCE_MAX; WK_ERR_ARG for NULL arguments. On error *mt is left empty (no type).
 * *mt needs no initialisation; whatever it held is overwritten. Thread-safe.
 */
WK_API wk_status wk_mt_parse(const void *data, size_t len, unsigned flags, wk_media_type *mt,
                             wk_error *err);

/**
 * Makes *mt from an essence ("type/subtype", any case) and `n` parameters whose `value` is
 * the plain value (no quotes or escapes; `quoted`/`escaped` are ignored and cleared). Views
 * only: names, values and a lowercase essence must outlive *mt (an essence written with
 * capitals is copied, lowercased, into *mt; a well-known one views the table). *mt needs no
 * initialisation. Returns WK_ERR_SYNTAX
 * (err->offset is the index of the bad parameter + 1, or 0 for the essence) when the essence
 * is not token "/" token, a name is not a token, or a value has a byte outside TAB,
 * 0x20-0x7E, 0x80-0xFF; WK_ERR_ARG for a duplicate name; WK_ERR_LIMIT beyond WK_MT_MAX_PARAMS or
 * WK_MT_ESSENCE_MAX (as for wk_mt_parse). On error *mt is left empty.
 */
WK_API wk_status wk_mt_build(wk_media_type *mt, const char *essence, size_t essence_len,
                             const wk_mt_param *params, size_t n, wk_error *err);

/**
 * Appends the serialization of *mt to `out` (not cached): lowercase type, subtype and
 * parameter names; values that are empty or not all token bytes quoted, with double quotes
 * and backslashes escaped; parameters joined by ";" (WK_MT_STYLE_WHATWG) or "; " (WK_MT_STYLE_SPACE).
 * Returns the buffer's status (WK_ERR_LIMIT, WK_ERR_NOMEM); on error `out` is unchanged.
 */
WK_API wk_status wk_mt_serialize(const wk_media_type *mt, unsigned style, wk_buf *out,
                                 wk_error *err);

/** The slow path of wk_mt_render(): finds the serialization without building it (and keeps
 *  that view in *mt) or builds it into `scratch`. Call wk_mt_render(), which tries the kept
 *  view inline first. */
WK_API wk_status wk_mt_render_build(wk_media_type *mt, unsigned style, wk_buf *scratch,
                                    wk_slice *out, wk_error *err);

/**
 * Returns in *out the serialization of *mt in `style` with as little work as possible. No
 * copy when *mt is well-known with no parameters or only charset=utf-8 (a precomputed
 * string) or when the parsed input already is the serialization (a view of it): that view
 * is kept in *mt (a copy of *mt keeps it too), so later calls return it at once (inline, a
 * few instructions). Otherwise the text is appended to `scratch` and *out views those bytes
 * (valid until `scratch` changes); `scratch` may be NULL when the caller knows no building
 * is needed, and then such a form is WK_ERR_ARG. Returns WK_OK, the buffer's WK_ERR_LIMIT or
 * WK_ERR_NOMEM, WK_ERR_ARG (no parsed type, an unknown style, or a form to build without a
 * buffer).
 */
static inline wk_status wk_mt_render(wk_media_type *mt, unsigned style, wk_buf *scratch,
                                     wk_slice *out, wk_error *err)
{
    if (style <= WK_MT_STYLE_SPACE && mt != NULL && out != NULL &&
        (mt->render_styles & (1u << style)) != 0) {
        *out = mt->render_view;
        return WK_OK;
    }
    return wk_mt_render_build(mt, style, scratch, out, err);
}

/** Finds parameter `name` (case-insensitive); NULL when absent. */
WK_API const wk_mt_param *wk_mt_param_find(const wk_media_type *mt, const char *name, size_t len);

/** The `charset` parameter, or NULL. */
WK_API const wk_mt_param *wk_mt_charset(const wk_media_type *mt);
/** The `boundary` parameter (multipart), or NULL. */
WK_API const wk_mt_param *wk_mt_boundary(const wk_media_type *mt);

/**
 * Writes the plain value of `p` (quotes removed, backslash escapes resolved) to
 * `buf[0..cap)` and returns its length; when that exceeds `cap` nothing useful is written and
 * the caller retries with a larger buffer. A value that is not `escaped` equals p->value and
 * needs no copy. `buf` may be NULL when `cap` is 0.
 */
WK_API size_t wk_mt_param_value(const wk_mt_param *p, char *buf, size_t cap);

/** True when *a and *b are the same media type: equal essence and parameters (names
 *  case-insensitive, plain values byte-equal, same order). */
WK_API bool wk_mt_equal(const wk_media_type *a, const wk_media_type *b);

/* ---- Accept: content negotiation (RFC 9110 section 12.5.1) ----------------------------- */

/** Longest Accept value wk_mt_accept_parse() reads (real ones are well under 1 KB; servers
 *  commonly cap a header line at 8 KB). */
#define WK_MT_ACCEPT_MAX_LEN 8192
/** Most media ranges an Accept value holds (browsers send about ten). */
#define WK_MT_ACCEPT_MAX_RANGES 64
/** Most media-range parameters (before the weight) of all ranges of an Accept value; each
 *  range also keeps the media-type limit of WK_MT_MAX_PARAMS. */
#define WK_MT_ACCEPT_MAX_PARAMS 64
/** The quality of a range without a weight ("q=1"): qualities are thousandths, 0..1000. */
#define WK_MT_Q_ONE 1000u
/** What wk_mt_negotiate() returns when no offer is acceptable (answer 406). */
#define WK_MT_NONE ((size_t)-1)

/** One media range of an Accept value. */
typedef struct wk_mt_range {
    wk_slice type;    /**< as written (compare case-insensitively); "*" for any type */
    wk_slice subtype; /**< as written; "*" for any subtype (always so when the type is "*") */
    uint16_t q;       /**< its weight in thousandths (0..1000), WK_MT_Q_ONE without one */
    uint16_t first_param; /**< its parameters are params[first_param .. first_param + nparams) */
    uint8_t nparams; /**< parameters before the weight; those after it (RFC 7231's accept-ext)
                          are checked but not kept and take no part in matching */
} wk_mt_range;

/** A parsed Accept value: a plain value of views into the parsed text (which must outlive
 *  it), safe to zero and to copy by assignment; it owns nothing. About 5 KB: a stack value
 *  per request is the intended use. */
typedef struct wk_mt_accept {
    uint16_t nranges; /**< ranges in `ranges`, in the order written; 0 accepts nothing */
    uint16_t nparams; /**< parameters in `params` */
    wk_mt_range ranges[WK_MT_ACCEPT_MAX_RANGES]; /**< the ranges, in the order written */
    wk_mt_param params[WK_MT_ACCEPT_MAX_PARAMS]; /**< views of the input, as in wk_media_type */
} wk_mt_accept;

/**
 * Parses the Accept value `data[0..len)` into *acc: a comma list of media ranges, each with
 * optional parameters and a weight ("q=0.8"). Each range is parsed by wk_mt_parse() with
 * WK_MT_STRICT (RFC 9110's grammar, its limits: WK_MT_MAX_PARAMS, WK_MT_ESSENCE_MAX), plus
 * `flags & WK_MT_UTF8`; empty list elements (", ,") and optional whitespace around commas are
 * allowed, as RFC 9110's list rule asks. A weight is the first parameter named "q" (any
 * case) and must be an RFC 9110 qvalue: "0" to "1" with at most three decimals, unquoted.
 * "\*" as a type needs "\*" as the subtype. An empty value (or only commas and whitespace)
 * parses to zero ranges: nothing is acceptable. Allocates nothing; linear in `len`.
 * Returns WK_OK; WK_ERR_SYNTAX (err->offset: the first byte that made the value invalid,
 * err->msg what was expected), including a NUL byte or a bad qvalue; WK_ERR_LIMIT beyond
 * WK_MT_ACCEPT_MAX_LEN bytes (offset WK_MT_ACCEPT_MAX_LEN), WK_MT_ACCEPT_MAX_RANGES ranges
 * or WK_MT_ACCEPT_MAX_PARAMS parameters (offset: the range or parameter that did not fit),
 * or a range's own media-type limits; WK_ERR_ARG for NULL arguments. On error *acc holds
 * zero ranges. Thread-safe.
 */
WK_API wk_status wk_mt_accept_parse(const void *data, size_t len, unsigned flags,
                                    wk_mt_accept *acc, wk_error *err);

/**
 * The quality (0..1000) that *acc gives the media type *offer, by RFC 9110 section 12.5.1:
 * the most specific range that matches the offer decides (a type and subtype named beat a
 * type with subtype "\*", which beats "\*" for both; a range with parameters, all of them matching, beats one
 * without), and among equally specific matching ranges the highest weight. 0 when no range
 * matches or the deciding one says q=0. A range parameter matches when the offer has the
 * same name (any case) with the same plain value compared case-insensitively, when its value
 * is "\*", or when its value is "" and the offer lacks the name (negotiator's rules). The
 * offer's own parameters beyond the range's are ignored.
 */
WK_API unsigned wk_mt_accept_quality(const wk_mt_accept *acc, const wk_media_type *offer);

/**
 * Chooses among the server's `n` offers (parsed media types, in the server's order of
 * preference) the one *acc prefers, and returns its index, or WK_MT_NONE when every offer has
 * quality 0 (a server answers 406, or ignores the header and sends its default). The highest
 * quality (wk_mt_accept_quality()) wins. RFC 9110 leaves ties open; wirekit breaks them as npm
 * `negotiator` (Express's req.accepts) does: at equal quality the offer matched by the more
 * specific range wins, then the one whose range comes first in the Accept value, then the
 * earlier offer. Allocates nothing; O(n x ranges). Thread-safe on a shared *acc.
 */
WK_API size_t wk_mt_negotiate(const wk_mt_accept *acc, const wk_media_type *offers, size_t n);

/**
 * One call for a request: parses the Accept value `accept[0..len)` and chooses among the `n`
 * offers as wk_mt_negotiate() does, setting *chosen to the offer's index. `accept` NULL means
 * the request had no Accept header, which accepts anything (RFC 9110): the first offer is
 * chosen. Returns WK_OK; WK_ERR_NOT_FOUND (*chosen = WK_MT_NONE) when no offer is acceptable
 * (406); wk_mt_accept_parse()'s errors for a malformed value (*chosen = WK_MT_NONE; the caller
 * picks 400 or its default); WK_ERR_ARG for a NULL `chosen` or no offers.
 */
WK_API wk_status wk_mt_negotiate_header(const void *accept, size_t len, unsigned flags,
                                        const wk_media_type *offers, size_t n, size_t *chosen,
                                        wk_error *err);

/* ---- well-known media types (generated from mime-db) ---------------------------------- */

/** An entry of the built-in table of well-known media types (mime-db). */
typedef struct wk_mt_known {
    const char *essence; /**< lowercase "type/subtype", NUL-terminated */
    uint32_t essence_len; /**< length of `essence` */
    const char *charset; /**< mime-db's default charset ("UTF-8"), NULL when none */
    int8_t compressible; /**< 1 yes, 0 no, -1 unknown */
    uint8_t source;      /**< 0 none, 1 IANA, 2 Apache, 3 nginx */
    uint16_t nextensions; /**< entries in `extensions` */
    const char *const *extensions; /**< lowercase, without the dot; the first is preferred */
    const char *render_utf8[2];    /**< "<essence>;charset=utf-8" and "<essence>; charset=utf-8"
                                      for UTF-8 and text types, else NULL */
} wk_mt_known;

/** Number of well-known types; ids run 1..count. */
WK_API size_t wk_mt_known_count(void);
/** The entry for `id`, or NULL for 0 or an id beyond the table. */
WK_API const wk_mt_known *wk_mt_known_get(uint16_t id);
/** The id of essence `s[0..len)` (ASCII case-insensitive) through a perfect hash; 0 when
 *  not well-known. */
WK_API uint16_t wk_mt_known_find(const char *s, size_t len);
/** The id of the type for file extension `s[0..len)` ("json" or ".json", case-insensitive),
 *  chosen among types sharing it as the npm mime-types package does; 0 when unknown. */
WK_API uint16_t wk_mt_known_find_ext(const char *s, size_t len);

/* ---- the grammar -------------------------------------------------------------------------- */

/** Capture slots of the media-type grammars. */
enum {
    WK_MT_SLOT_TYPE = 0,
    WK_MT_SLOT_SUBTYPE = 1,
    WK_MT_SLOT_NAME = 2,
    WK_MT_SLOT_VALUE = 3,  /**< an unquoted value */
    WK_MT_SLOT_QVALUE = 4, /**< a quoted value's text between the quotes, escapes included */
    WK_MT_SLOT_QTAIL = 5   /**< WHATWG: the lone "\" ending an unterminated quoted value */
};

/**
 * The compiled text-codec grammar for `flags` (WK_MT_STRICT, WK_MT_UTF8), built on first use
 * and shared for the life of the process; NULL only when memory ran out. The WHATWG grammar
 * matches the input after HTTP whitespace is trimmed from both ends and captures every valid
 * parameter (duplicates are resolved after, the first wins). Thread-safe.
 */
WK_API const wk_text_program *wk_mt_grammar(unsigned flags);

#ifdef __cplusplus
}
#endif
#endif
