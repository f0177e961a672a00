/*
 * Arrays of any registered element type, in both wire formats: header parsing with full
 * validation, the element iterator, text output, events, and encoding.
 *
 * Where it sits: a row's bytes -> plan (plan.c) finds an array OID's row in the registry,
 * whose functions are this file's (wk__pg_array_dec / _enc) with the element type's decoder
 * -> the parser here validates the whole value -> the iterator hands each element's bytes to
 * the element codec (int.c, varlena.c, ...) -> PostgreSQL text, events (nested arrays), a
 * value tree, or the parsed header (wk_pg_array) for callers that iterate themselves;
 * array_c.c decodes one-dimensional arrays into C arrays on top of the same parser.
 *
 * Binary (array_send): ndim, has-null flag, element OID, (dim, lower bound) per dimension,
 * then each element as a length word (-1 = NULL) and bytes. Every count is checked before it
 * is used: ndim in 0..6, dims non-negative, upper bounds inside int32, the product of dims
 * overflow-checked and bounded by the bytes present (four per element at least), every
 * element length inside what remains, nothing left over.
 *
 * Text (array_in / array_out): an optional `[lb:ub]...=` decoration, nested braces (checked
 * rectangular, at most six levels, scanned with a counter per level rather than recursion),
 * quoted elements with backslash escapes, unquoted elements trimmed of whitespace, and NULL.
 * Parsing validates the whole literal once; the iterator then walks it again, handing out
 * views (or unescaped copies in the arena when an element holds backslashes).
 */
#include "pg/pg_interface.h"

/* PostgreSQL's MaxArraySize (pg_interface.h), the most elements an array may hold. */
#define MAX_ARRAY_SIZE WK__PG_MAX_ARRAY_SIZE

/* The whitespace array_in skips around elements and braces (isspace in the C locale). */
static bool aspace(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* ---- binary header ---- */

/* ArrayGetNItems and ArrayCheckBounds: dims non-negative, upper bounds inside int32, the
 * element count at most MAX_ARRAY_SIZE; *nitems the product (0 for ndim 0). */
static wk_status dims_check(int ndim, const int32_t *dims, const int32_t *lbs, uint32_t *nitems,
                            size_t off, wk_error *err)
{
    uint64_t prod = 1;
    for (int d = 0; d < ndim; d++) {
        if (dims[d] < 0) {
            return wk__pg_fail(err, WK_ERR_SYNTAX, off, "negative array dimension");
        }
        if ((int64_t)lbs[d] + dims[d] - 1 > INT32_MAX) {
            return wk__pg_fail(err, WK_ERR_RANGE, off, "array upper bound is too large");
        }
        prod *= (uint64_t)dims[d];
        if (prod > MAX_ARRAY_SIZE) {
            return wk__pg_fail(err, WK_ERR_LIMIT, off, "array size exceeds the maximum");
        }
    }
    *nitems = ndim == 0 ? 0 : (uint32_t)prod;
    return WK_OK;
}

/* array_recv's validation of the binary form into the header *a: ndim 0..6, a has-null flag
 * of 0 or 1, the element OID equal to elem_oid, dims checked, then every element's length
 * walked against the bytes left, nothing left over. Elements are not decoded here. */
static wk_status parse_bin(wk_pg_oid elem_oid, const uint8_t *p, size_t n, wk_pg_array *a,
                           wk_error *err)
{
    if (n < 12) {
        return wk__pg_fail(err, WK_ERR_TRUNCATED, n, "binary array header needs 12 bytes");
    }
    int32_t ndim = (int32_t)wk__pg_be32(p);
    uint32_t flags = wk__pg_be32(p + 4);
    wk_pg_oid eo = wk__pg_be32(p + 8);
    if (ndim < 0 || ndim > WK_PG_MAXDIM) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "invalid number of array dimensions");
    }
    if (flags > 1) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 4, "invalid array flags");
    }
    if (elem_oid != 0 && eo != elem_oid) {
        return wk__pg_fail(err, WK_ERR_TYPE, 8, "wrong element type in binary array");
    }
    size_t pos = 12;
    if (n - pos < (size_t)ndim * 8) {
        return wk__pg_fail(err, WK_ERR_TRUNCATED, n, "binary array dimensions are truncated");
    }
    a->format = WK_PG_BINARY;
    a->elem_oid = eo;
    a->ndim = ndim;
    for (int d = 0; d < ndim; d++) {
        a->dims[d] = (int32_t)wk__pg_be32(p + pos);
        a->lbounds[d] = (int32_t)wk__pg_be32(p + pos + 4);
        pos += 8;
    }
    wk_status st = dims_check(ndim, a->dims, a->lbounds, &a->nitems, 12, err);
    if (st != WK_OK) {
        return st;
    }
    if (a->nitems == 0) {
        a->ndim = 0; /* array_recv turns any zero-length array into the empty array */
    }
    if ((uint64_t)a->nitems * 4 > n - pos) {
        return wk__pg_fail(err, WK_ERR_TRUNCATED, n, "array element count exceeds the input");
    }
    a->data = p + pos;
    a->has_nulls = false;
    for (uint32_t k = 0; k < a->nitems; k++) {
        if (n - pos < 4) {
            return wk__pg_fail(err, WK_ERR_TRUNCATED, pos, "array element length is truncated");
        }
        int32_t len = (int32_t)wk__pg_be32(p + pos);
        pos += 4;
        if (len == -1) {
            a->has_nulls = true;
            continue;
        }
        if (len < 0 || (size_t)len > n - pos) {
            return wk__pg_fail(err, WK_ERR_TRUNCATED, pos - 4,
                               "array element length goes past the end");
        }
        pos += (size_t)len;
    }
    if (pos != n) {
        return wk__pg_fail(err, WK_ERR_TRAILING, pos, "bytes left after the last array element");
    }
    a->len = n - (size_t)(a->data - p);
    return WK_OK;
}

/* ---- text literal ---- */

/* One text element found by scan_elem. */
typedef struct span {
    size_t start, end; /* content bytes (inside quotes for quoted elements) */
    size_t next;       /* first byte after the element (and its closing quote) */
    bool escaped;      /* holds backslashes: needs unescaping */
    bool null;
} span;

/* The element type's delimiter (pg_type.typdelim), which separates elements in the text
 * form: ';' for box (whose own text holds commas: `{(2,2),(1,1);(4,4),(3,3)}`), ',' for every
 * other built-in type. */
static uint8_t delim_of(wk_pg_oid elem_oid)
{
    return elem_oid == 603 ? ';' : ',';
}

/* Scans one element at p[i] (not whitespace, not a brace or the delimiter). */
static bool scan_elem(const uint8_t *p, size_t n, size_t i, uint8_t delim, span *e, size_t *bad)
{
    e->escaped = false;
    e->null = false;
    if (p[i] == '"') {
        i++;
        e->start = i;
        for (;;) {
            if (i >= n) {
                *bad = i;
                return false;
            }
            if (p[i] == '\\') {
                e->escaped = true;
                if (i + 1 >= n) {
                    *bad = i;
                    return false;
                }
                i += 2;
            } else if (p[i] == '"') {
                break;
            } else {
                i++;
            }
        }
        e->end = i;
        e->next = i + 1;
        return true;
    }
    e->start = i;
    size_t last = i; /* end of the last non-space or escaped byte */
    while (i < n && p[i] != delim && p[i] != '}') {
        if (p[i] == '\\') {
            e->escaped = true;
            if (i + 1 >= n) {
                *bad = i;
                return false;
            }
            i += 2;
            last = i;
        } else if (p[i] == '"' || p[i] == '{') {
            *bad = i;
            return false;
        } else {
            if (!aspace(p[i])) {
                last = i + 1;
            }
            i++;
        }
    }
    e->end = last;
    e->next = i;
    if (!e->escaped && e->end - e->start == 4) {
        const uint8_t *s = p + e->start;
        e->null = (s[0] | 0x20) == 'n' && (s[1] | 0x20) == 'u' && (s[2] | 0x20) == 'l' &&
                  (s[3] | 0x20) == 'l';
    }
    return true;
}

/* A signed decimal int32 at p[*i] (a dimension decoration's bound); advances *i. */
static bool parse_int32(const uint8_t *p, size_t n, size_t *i, int32_t *out)
{
    bool neg = false;
    if (*i < n && (p[*i] == '-' || p[*i] == '+')) {
        neg = p[*i] == '-';
        (*i)++;
    }
    int64_t v = 0;
    size_t st = *i;
    while (*i < n && p[*i] >= '0' && p[*i] <= '9') {
        v = v * 10 + (p[*i] - '0');
        if (v > (int64_t)INT32_MAX + 1) {
            return false;
        }
        (*i)++;
    }
    if (*i == st) {
        return false;
    }
    v = neg ? -v : v;
    if (v > INT32_MAX || v < INT32_MIN) {
        return false;
    }
    *out = (int32_t)v;
    return true;
}

/* Iterator note: a 1-D literal with no quotes, escapes, spaces or decoration, whose elements
 * end at the next ',' or '}'. */
#define SIMPLE_1D 1u

/* The common shape `{a,b,c}` (or `{}`), recognised in one pass; false means "use the full
 * parser" (which also reports errors). */
static bool parse_simple(const uint8_t *p, size_t n, wk_pg_array *a)
{
    if (n < 2 || p[0] != '{' || p[n - 1] != '}') {
        return false;
    }
    if (n == 2) {
        a->ndim = 0;
        a->nitems = 0;
        a->data = p;
        a->len = n;
        return true;
    }
    /* 1: separator or closing brace; 2: a byte that needs the full parser. */
    static const uint8_t cls[256] = {
        ['\t'] = 2, ['\n'] = 2, ['\v'] = 2, ['\f'] = 2, ['\r'] = 2, [' '] = 2, ['"'] = 2,
        ['\\'] = 2, ['{'] = 2, [','] = 1, ['}'] = 1,
    };
    uint32_t count = 0;
    size_t start = 1;
    bool nulls = false;
    for (size_t i = 1; i < n; i++) {
        uint8_t c = p[i];
        if (cls[c] == 0) {
            continue;
        }
        if (c == ',' || i == n - 1) {
            size_t len = i - start;
            if (len == 0) {
                return false;
            }
            if (len == 4) {
                const uint8_t *e = p + start;
                nulls = nulls || ((e[0] | 0x20) == 'n' && (e[1] | 0x20) == 'u' &&
                                  (e[2] | 0x20) == 'l' && (e[3] | 0x20) == 'l');
            }
            if (++count > MAX_ARRAY_SIZE) {
                return false;
            }
            start = i + 1;
        } else if (c == '"' || c == '\\' || c == '{' || c == '}' || aspace(c)) {
            return false;
        }
    }
    a->ndim = 1;
    a->dims[0] = (int32_t)count;
    a->lbounds[0] = 1;
    a->nitems = count;
    a->has_nulls = nulls;
    a->data = p;
    a->len = n;
    a->internal = SIMPLE_1D;
    return true;
}

/* array_in's validation of a text literal into the header *a: the optional decoration, then
 * the braces level by level (checked rectangular and matching the decoration), each element
 * scanned (quotes, escapes, NULL); the simple shape goes through parse_simple first. */
static wk_status parse_text(wk_pg_oid elem_oid, const uint8_t *p, size_t n, wk_pg_array *a,
                            wk_error *err)
{
    a->format = WK_PG_TEXT;
    a->elem_oid = elem_oid;
    uint8_t delim = delim_of(elem_oid);
    if (delim == ',' && parse_simple(p, n, a)) { /* its table knows ',' only */
        return WK_OK;
    }
    a->elem_oid = elem_oid;
    a->has_nulls = false;
    size_t i = 0;
    while (i < n && aspace(p[i])) {
        i++;
    }
    /* Optional dimension decoration. */
    int dec_ndim = 0;
    int32_t dec_dims[WK_PG_MAXDIM], dec_lbs[WK_PG_MAXDIM];
    while (i < n && p[i] == '[') {
        if (dec_ndim == WK_PG_MAXDIM) {
            return wk__pg_fail(err, WK_ERR_DEPTH, i, "array has more than 6 dimensions");
        }
        i++;
        int32_t lb = 1, ub;
        if (!parse_int32(p, n, &i, &ub)) {
            return wk__pg_fail(err, WK_ERR_SYNTAX, i, "invalid array dimension bound");
        }
        if (i < n && p[i] == ':') {
            i++;
            lb = ub;
            if (!parse_int32(p, n, &i, &ub)) {
                return wk__pg_fail(err, WK_ERR_SYNTAX, i, "invalid array dimension bound");
            }
        }
        if (i >= n || p[i] != ']') {
            return wk__pg_fail(err, WK_ERR_SYNTAX, i, "missing ] in array dimensions");
        }
        i++;
        if ((int64_t)ub < (int64_t)lb - 1) {
            return wk__pg_fail(err, WK_ERR_SYNTAX, i,
                               "array upper bound cannot be less than lower bound");
        }
        dec_lbs[dec_ndim] = lb;
        dec_dims[dec_ndim] = (int32_t)((int64_t)ub - lb + 1);
        dec_ndim++;
        while (i < n && aspace(p[i])) {
            i++;
        }
    }
    if (dec_ndim > 0) {
        if (i >= n || p[i] != '=') {
            return wk__pg_fail(err, WK_ERR_SYNTAX, i, "missing = after array dimensions");
        }
        i++;
        while (i < n && aspace(p[i])) {
            i++;
        }
    }
    if (i >= n || p[i] != '{') {
        return wk__pg_fail(err, WK_ERR_SYNTAX, i, "array value must start with {");
    }
    a->data = p + i;
    a->len = n - i;
    /* Structure scan: a counter per level instead of recursion. */
    enum { START, AFTER_VALUE, AFTER_COMMA } state = START;
    int depth = 1, ndim = -1;
    int32_t dims[WK_PG_MAXDIM + 1];
    bool dim_set[WK_PG_MAXDIM + 1] = {false};
    uint32_t counts[WK_PG_MAXDIM + 2];
    counts[1] = 0;
    uint64_t nitems = 0;
    i++;
    for (;;) {
        while (i < n && aspace(p[i])) {
            i++;
        }
        if (i >= n) {
            return wk__pg_fail(err, WK_ERR_TRUNCATED, i, "unterminated array literal");
        }
        uint8_t c = p[i];
        if (c == '{') {
            if (state == AFTER_VALUE || (ndim != -1 && depth >= ndim)) {
                return wk__pg_fail(err, WK_ERR_SYNTAX, i, "unexpected { in array literal");
            }
            if (depth == WK_PG_MAXDIM) {
                return wk__pg_fail(err, WK_ERR_DEPTH, i, "array has more than 6 dimensions");
            }
            depth++;
            counts[depth] = 0;
            state = START;
            i++;
            continue;
        }
        if (c == '}') {
            if (state == AFTER_COMMA) {
                return wk__pg_fail(err, WK_ERR_SYNTAX, i, "unexpected } in array literal");
            }
            if (counts[depth] == 0) {
                if (depth != 1 || ndim != -1) {
                    return wk__pg_fail(err, WK_ERR_SYNTAX, i, "empty sub-array in array literal");
                }
                ndim = 0;
            } else {
                int lvl = depth - 1;
                if (!dim_set[lvl]) {
                    dims[lvl] = (int32_t)counts[depth];
                    dim_set[lvl] = true;
                } else if ((uint32_t)dims[lvl] != counts[depth]) {
                    return wk__pg_fail(err, WK_ERR_SYNTAX, i,
                                       "sub-arrays of a multidimensional array must have "
                                       "matching dimensions");
                }
            }
            depth--;
            i++;
            if (depth == 0) {
                break;
            }
            counts[depth]++;
            state = AFTER_VALUE;
            continue;
        }
        if (c == delim) {
            if (state != AFTER_VALUE) {
                return wk__pg_fail(err, WK_ERR_SYNTAX, i,
                                   delim == ',' ? "unexpected , in array literal"
                                                : "unexpected delimiter in array literal");
            }
            state = AFTER_COMMA;
            i++;
            continue;
        }
        if (state == AFTER_VALUE) {
            return wk__pg_fail(err, WK_ERR_SYNTAX, i, "missing , between array elements");
        }
        if (ndim == -1) {
            ndim = depth;
        } else if (depth != ndim) {
            return wk__pg_fail(err, WK_ERR_SYNTAX, i, "array element at the wrong nesting level");
        }
        span e;
        size_t bad;
        if (!scan_elem(p, n, i, delim, &e, &bad)) {
            return wk__pg_fail(err, bad >= n ? WK_ERR_TRUNCATED : WK_ERR_SYNTAX, bad,
                               "malformed array element");
        }
        if (e.null) {
            a->has_nulls = true;
        }
        if (++nitems > MAX_ARRAY_SIZE) {
            return wk__pg_fail(err, WK_ERR_LIMIT, i, "array size exceeds the maximum");
        }
        counts[depth]++;
        state = AFTER_VALUE;
        i = e.next;
    }
    while (i < n && aspace(p[i])) {
        i++;
    }
    if (i != n) {
        return wk__pg_fail(err, WK_ERR_TRAILING, i, "junk after closing } of array");
    }
    a->ndim = ndim < 0 ? 0 : ndim;
    for (int d = 0; d < a->ndim; d++) {
        a->dims[d] = dims[d];
        a->lbounds[d] = 1;
    }
    a->nitems = (uint32_t)nitems;
    if (dec_ndim > 0) {
        if (dec_ndim != a->ndim) {
            return wk__pg_fail(err, WK_ERR_SYNTAX, 0,
                               "array dimensions do not match the array literal");
        }
        for (int d = 0; d < a->ndim; d++) {
            if (dec_dims[d] != a->dims[d]) {
                return wk__pg_fail(err, WK_ERR_SYNTAX, 0,
                                   "array dimensions do not match the array literal");
            }
            a->lbounds[d] = dec_lbs[d];
        }
    }
    uint32_t check;
    return dims_check(a->ndim, a->dims, a->lbounds, &check, 0, err);
}

/* Contract in pg_interface.h. */
wk_status wk__pg_array_parse(wk_pg_format f, wk_pg_oid elem_oid, const uint8_t *p, size_t n,
                             wk_pg_array *out, wk_error *err)
{
    memset(out, 0, sizeof *out);
    return f == WK_PG_BINARY ? parse_bin(elem_oid, p, n, out, err)
                             : parse_text(elem_oid, p, n, out, err);
}

/* ---- iteration ---- */

/* Public (wirekit/pg.h): an iterator over a parsed array; `arena` receives the unescaped
 * copies of text elements that hold backslashes. */
WK_API void wk_pg_array_iter_init(wk_pg_array_iter *it, const wk_pg_array *a, wk_arena *arena)
{
    it->arr = a;
    it->pos = 0;
    it->index = 0;
    it->arena = arena;
}

/* Public: the next element in row-major order as a view (or an arena copy), or WK_ERR_EOF;
 * *is_null for SQL NULL. */
WK_API wk_status wk_pg_array_next(wk_pg_array_iter *it, const uint8_t **p, size_t *n,
                                  bool *is_null, wk_error *err)
{
    const wk_pg_array *a = it->arr;
    if (it->index >= a->nitems) {
        return WK_ERR_EOF;
    }
    const uint8_t *d = a->data;
    if (a->format == WK_PG_BINARY) {
        int32_t len = (int32_t)wk__pg_be32(d + it->pos);
        it->pos += 4;
        it->index++;
        if (len < 0) {
            *is_null = true;
            *p = NULL;
            *n = 0;
            return WK_OK;
        }
        *is_null = false;
        *p = d + it->pos;
        *n = (size_t)len;
        it->pos += (size_t)len;
        return WK_OK;
    }
    if (a->internal & SIMPLE_1D) {
        size_t st = it->pos == 0 ? 1 : it->pos;
        size_t e = st;
        while (d[e] != ',' && d[e] != '}') {
            e++;
        }
        it->pos = e + 1;
        it->index++;
        size_t len = e - st;
        *is_null = len == 4 && (d[st] | 0x20) == 'n' && (d[st + 1] | 0x20) == 'u' &&
                   (d[st + 2] | 0x20) == 'l' && (d[st + 3] | 0x20) == 'l';
        *p = *is_null ? NULL : d + st;
        *n = *is_null ? 0 : len;
        return WK_OK;
    }
    size_t i = it->pos;
    uint8_t delim = delim_of(a->elem_oid);
    while (i < a->len && (aspace(d[i]) || d[i] == '{' || d[i] == '}' || d[i] == delim)) {
        i++;
    }
    span e;
    size_t bad;
    if (i >= a->len || !scan_elem(d, a->len, i, delim, &e, &bad)) {
        return wk__pg_fail(err, WK_ERR_STATE, i, "array iterator past the validated literal");
    }
    it->pos = e.next;
    it->index++;
    *is_null = e.null;
    if (e.null) {
        *p = NULL;
        *n = 0;
        return WK_OK;
    }
    if (!e.escaped) {
        *p = d + e.start;
        *n = e.end - e.start;
        return WK_OK;
    }
    if (it->arena == NULL) {
        return wk__pg_fail(err, WK_ERR_ARG, e.start, "escaped array element needs an arena");
    }
    uint8_t *o = wk_arena_alloc(it->arena, e.end - e.start, 1);
    if (o == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, e.start, "out of memory for an array element");
    }
    size_t k = 0;
    for (size_t j = e.start; j < e.end; j++) {
        if (d[j] == '\\') {
            j++;
        }
        o[k++] = d[j];
    }
    *p = o;
    *n = k;
    return WK_OK;
}

/* Public: describes a one-dimensional C array (n elements of elem_kind, optional NULL flags)
 * for the ARRAY encoders; nothing is copied. */
WK_API void wk_pg_array_in_1d(wk_pg_array_in *a, wk_pg_kind elem_kind, const void *elems,
                              size_t n, const bool *nulls)
{
    memset(a, 0, sizeof *a);
    a->elem_kind = elem_kind;
    a->ndim = n == 0 ? 0 : 1;
    a->dims[0] = (int32_t)(n > INT32_MAX ? INT32_MAX : n);
    a->lbounds[0] = 1;
    a->elems = elems;
    a->nulls = nulls;
}

/* ---- decode functions ---- */

/* The ARRAY-kind decoder: the validated header (a wk_pg_array at `out`), elements as views. */
static wk_status dec_array(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                           wk_arena *arena, wk_error *err)
{
    (void)arena;
    return wk__pg_array_parse((wk_pg_format)d->format, d->elem_oid, p, n, out, err);
}

/* array_out's rule: an element is quoted when empty, "NULL" in any case, or holding a brace,
 * the type's delimiter (comma, or ';' for box), a quote, a backslash or whitespace. */
static bool needs_quotes(const uint8_t *s, size_t n, uint8_t delim)
{
    if (n == 0) {
        return true;
    }
    if (n == 4 && (s[0] | 0x20) == 'n' && (s[1] | 0x20) == 'u' && (s[2] | 0x20) == 'l' &&
        (s[3] | 0x20) == 'l') {
        return true;
    }
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (c == '"' || c == '\\' || c == '{' || c == '}' || c == delim || aspace(c)) {
            return true;
        }
    }
    return false;
}

/* Quotes out->data[start..len) in place when array_out would (elements separated by
 * `delim`). */
static wk_status quote_tail(wk_buf *out, size_t start, uint8_t delim)
{
    size_t n = out->len - start;
    if (!needs_quotes(out->data + start, n, delim)) {
        return WK_OK;
    }
    size_t esc = 0;
    for (size_t i = start; i < out->len; i++) {
        if (out->data[i] == '"' || out->data[i] == '\\') {
            esc++;
        }
    }
    wk_status st = wk_buf_reserve(out, esc + 2);
    if (st != WK_OK) {
        return st;
    }
    uint8_t *b = out->data + start;
    size_t w = n + esc + 2;
    b[--w] = '"';
    for (size_t r = n; r-- > 0;) {
        b[--w] = b[r];
        if (b[r] == '"' || b[r] == '\\') {
            b[--w] = '\\';
        }
    }
    b[0] = '"';
    out->len += esc + 2;
    return WK_OK;
}

/* array_out's `[lb:ub]...=` prefix, written only when some lower bound is not 1. */
static wk_status put_decoration(const wk_pg_array *a, wk_buf *out)
{
    bool need = false;
    for (int d = 0; d < a->ndim; d++) {
        need = need || a->lbounds[d] != 1;
    }
    if (!need) {
        return WK_OK;
    }
    wk_status st = WK_OK;
    for (int d = 0; d < a->ndim && st == WK_OK; d++) {
        st = wk_buf_push(out, '[');
        if (st == WK_OK) {
            st = wk__pg_put_i64(out, a->lbounds[d]);
        }
        if (st == WK_OK) {
            st = wk_buf_push(out, ':');
        }
        if (st == WK_OK) {
            st = wk__pg_put_i64(out, (int64_t)a->lbounds[d] + a->dims[d] - 1);
        }
        if (st == WK_OK) {
            st = wk_buf_push(out, ']');
        }
    }
    return st == WK_OK ? wk_buf_push(out, '=') : st;
}

/*
 * Walks the elements in row-major order and calls `open`/`close` around every dimension level
 * and `elem` for every element, with a counter per level (no recursion).
 */
typedef struct walker {
    wk_status (*open)(void *ctx, int level, uint32_t count);
    wk_status (*close)(void *ctx, int level);
    wk_status (*sep)(void *ctx);
    wk_status (*elem)(void *ctx, const uint8_t *p, size_t n, bool is_null);
    void *ctx;
} walker;

/* Walks the parsed array for `w`: open/close around each level with its length, sep between
 * siblings, elem per element; the first callback failure stops the walk. */
static wk_status walk(const wk_pg_array *a, wk_arena *arena, const walker *w, wk_error *err)
{
    if (a->ndim == 0) {
        wk_status st = w->open(w->ctx, 0, 0);
        return st == WK_OK ? w->close(w->ctx, 0) : st;
    }
    wk_pg_array_iter it;
    wk_pg_array_iter_init(&it, a, arena);
    uint32_t pos[WK_PG_MAXDIM] = {0};
    int level = 0;
    wk_status st = WK_OK;
    for (;;) {
        /* Open levels down to the innermost. */
        while (level < a->ndim) {
            st = w->open(w->ctx, level, (uint32_t)a->dims[level]);
            if (st != WK_OK) {
                return st;
            }
            pos[level] = 0;
            level++;
        }
        const uint8_t *p;
        size_t n;
        bool is_null;
        /* Innermost level: all its elements. */
        for (uint32_t k = 0; k < (uint32_t)a->dims[a->ndim - 1]; k++) {
            if (k > 0 && (st = w->sep(w->ctx)) != WK_OK) {
                return st;
            }
            st = wk_pg_array_next(&it, &p, &n, &is_null, err);
            if (st != WK_OK) {
                return st;
            }
            st = w->elem(w->ctx, p, n, is_null);
            if (st != WK_OK) {
                return st;
            }
        }
        /* Close levels while they are complete. */
        for (;;) {
            level--;
            st = w->close(w->ctx, level);
            if (st != WK_OK) {
                return st;
            }
            if (level == 0) {
                return WK_OK;
            }
            pos[level - 1]++;
            if (pos[level - 1] < (uint32_t)a->dims[level - 1]) {
                st = w->sep(w->ctx);
                if (st != WK_OK) {
                    return st;
                }
                break;
            }
        }
    }
}

typedef struct text_ctx {
    wk_buf *out;
    const wk_pg_decoder *elem;
    wk_arena *arena;
    wk_error *err;
} text_ctx;

/* The text walker (array_out): '{' per level, '}' after, ',' between, each element in its
 * type's text form, quoted as array_out quotes. */
static wk_status text_open(void *c, int level, uint32_t count)
{
    (void)level;
    (void)count;
    return wk_buf_push(((text_ctx *)c)->out, '{');
}
/* '}' after a level. */
static wk_status text_close(void *c, int level)
{
    (void)level;
    return wk_buf_push(((text_ctx *)c)->out, '}');
}
/* ',' between siblings. */
static wk_status text_sep(void *c)
{
    text_ctx *t = c;
    return wk_buf_push(t->out, delim_of(t->elem->oid));
}
/* NULL, or the element's text in its type's output form, quoted when array_out would. */
static wk_status text_elem(void *c, const uint8_t *p, size_t n, bool is_null)
{
    text_ctx *t = c;
    if (is_null) {
        return wk_buf_append(t->out, "NULL", 4);
    }
    size_t start = t->out->len;
    wk_status st = wk__pg_decode_part(t->elem, p, n, t->out, t->arena, t->err);
    return st == WK_OK ? quote_tail(t->out, start, delim_of(t->elem->oid)) : st;
}

/* The TEXT-kind decoder: the array rendered as PostgreSQL's array_out would. */
static wk_status dec_text(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                          wk_arena *arena, wk_error *err)
{
    wk_pg_array a;
    wk_status st = wk__pg_array_parse((wk_pg_format)d->format, d->elem_oid, p, n, &a, err);
    if (st != WK_OK) {
        return st;
    }
    wk_buf *b = out;
    st = put_decoration(&a, b);
    if (st != WK_OK) {
        return wk__pg_fail(err, st, 0, "output buffer is full");
    }
    text_ctx t = {b, d->elem, arena, err};
    walker w = {text_open, text_close, text_sep, text_elem, &t};
    st = walk(&a, arena, &w, err);
    if (st == WK_ERR_LIMIT || st == WK_ERR_NOMEM) {
        if (err != NULL && (err->code != st || err->msg == NULL)) {
            wk__pg_fail(err, st, 0, "output buffer is full");
        }
    }
    return st;
}

typedef struct ev_ctx {
    const wk_pg_events *ev;
    const wk_pg_decoder *elem;
    wk_arena *arena;
    wk_error *err;
} ev_ctx;

/* The events walker: an ARRAY event per level (with its length), END after, NIL for a NULL
 * element, each element through its type's EVENTS decoder. */
static wk_status ev_open(void *c, int level, uint32_t count)
{
    (void)level;
    ev_ctx *e = c;
    wk_event x;
    x.type = WK_EV_ARRAY;
    x.f32 = false;
    x.v.count = count;
    return e->ev->sink->event(e->ev->sink->self, &x);
}
/* END after a level. */
static wk_status ev_close(void *c, int level)
{
    (void)level;
    ev_ctx *e = c;
    wk_event x;
    x.type = WK_EV_END;
    x.f32 = false;
    return e->ev->sink->event(e->ev->sink->self, &x);
}
/* Events need no separator. */
static wk_status ev_sep(void *c)
{
    (void)c;
    return WK_OK;
}
/* NIL, or the element's own events (a copy of the caller's wk_pg_events, so that its scratch
 * buffer is shared). */
static wk_status ev_elem(void *c, const uint8_t *p, size_t n, bool is_null)
{
    ev_ctx *e = c;
    if (is_null) {
        wk_event x;
        x.type = WK_EV_NIL;
        x.f32 = false;
        return e->ev->sink->event(e->ev->sink->self, &x);
    }
    wk_pg_events sub = *e->ev;
    return wk__pg_decode_part(e->elem, p, n, &sub, e->arena, e->err);
}

/* The EVENTS-kind decoder: nested arrays of the elements' events. */
static wk_status dec_events(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                            wk_arena *arena, wk_error *err)
{
    wk_pg_array a;
    wk_status st = wk__pg_array_parse((wk_pg_format)d->format, d->elem_oid, p, n, &a, err);
    if (st != WK_OK) {
        return st;
    }
    ev_ctx e = {out, d->elem, arena, err};
    walker w = {ev_open, ev_close, ev_sep, ev_elem, &e};
    st = walk(&a, arena, &w, err);
    if (st != WK_OK && err != NULL && err->msg == NULL) {
        wk__pg_fail(err, st, 0, "the event sink failed");
    }
    return st;
}

const wk_pg_decode_fn wk__pg_array_dec[2][WK_PG_KIND_COUNT] = {
    [WK_PG_TEXT] = {[WK_PG_KIND_ARRAY] = dec_array,
                    [WK_PG_KIND_TEXT] = dec_text,
                    [WK_PG_KIND_EVENTS] = dec_events,
                    [WK_PG_KIND_VALUE] = wk__pg_dec_value},
    [WK_PG_BINARY] = {[WK_PG_KIND_ARRAY] = dec_array,
                      [WK_PG_KIND_TEXT] = dec_text,
                      [WK_PG_KIND_EVENTS] = dec_events,
                      [WK_PG_KIND_VALUE] = wk__pg_dec_value},
};

/* Contract in pg_interface.h: arrays decode to ARRAY, and to TEXT / EVENTS / VALUE when the
 * element type does. */
uint32_t wk__pg_array_decode_kinds(const wk_pg_codec *elem)
{
    return WK_PG_KIND_MASK(WK_PG_KIND_ARRAY) |
           (elem->decode_kinds & (WK_PG_KIND_MASK(WK_PG_KIND_TEXT) |
                                  WK_PG_KIND_MASK(WK_PG_KIND_EVENTS) |
                                  WK_PG_KIND_MASK(WK_PG_KIND_VALUE)));
}

/* Contract in pg_interface.h: ARRAY when the element type encodes some C kind, TEXT when it
 * encodes from text. */
uint32_t wk__pg_array_encode_kinds(const wk_pg_codec *elem)
{
    uint32_t k = 0;
    if (elem->encode_kinds & ~WK_PG_KIND_MASK(WK_PG_KIND_TEXT)) {
        k |= WK_PG_KIND_MASK(WK_PG_KIND_ARRAY);
    }
    if (elem->encode_kinds & WK_PG_KIND_MASK(WK_PG_KIND_TEXT)) {
        k |= WK_PG_KIND_MASK(WK_PG_KIND_TEXT);
    }
    return k;
}

/* ---- encoding ---- */

/* Shared by both formats: `elem_at(i)` gives element i's pointer or NULL for a NULL. */
typedef struct enc_src {
    const wk_pg_array_in *in; /* C values, or NULL when encoding from a parsed text array */
    const wk_pg_array *parsed;
    size_t elem_size;
} enc_src;

/* array_send's header for ndim dims; WK_ERR_ARG for an ndim outside 0..6. */
static wk_status enc_header_bin(const wk_pg_encoder *e, int ndim, const int32_t *dims,
                                const int32_t *lbs, bool has_nulls, wk_buf *out)
{
    uint8_t h[12 + 8 * WK_PG_MAXDIM];
    if (ndim < 0 || ndim > WK_PG_MAXDIM) {
        return WK_ERR_ARG;
    }
    wk__pg_put32(h, (uint32_t)ndim);
    wk__pg_put32(h + 4, has_nulls ? 1 : 0);
    wk__pg_put32(h + 8, e->elem_oid);
    for (int d = 0; d < ndim; d++) {
        wk__pg_put32(h + 12 + 8 * d, (uint32_t)dims[d]);
        wk__pg_put32(h + 16 + 8 * d, (uint32_t)lbs[d]);
    }
    return wk_buf_append(out, h, 12 + 8 * (size_t)ndim);
}

/* Encodes one element (binary: with its length word; text: quoted as needed). */
static wk_status enc_elem(const wk_pg_encoder *ee, wk_pg_format f, const void *v, wk_buf *out,
                          wk_error *err)
{
    if (f == WK_PG_BINARY) {
        if (v == NULL) {
            uint8_t m[4] = {0xff, 0xff, 0xff, 0xff};
            return wk_buf_append(out, m, 4);
        }
        size_t at = out->len;
        uint8_t z[4] = {0, 0, 0, 0};
        wk_status st = wk_buf_append(out, z, 4);
        if (st != WK_OK) {
            return st;
        }
        st = wk__pg_encode_part(ee, v, out, err);
        if (st != WK_OK) {
            return st;
        }
        size_t len = out->len - at - 4;
        if (len > INT32_MAX) {
            return wk__pg_fail(err, WK_ERR_LIMIT, at, "array element longer than 2 GiB");
        }
        wk__pg_put32(out->data + at, (uint32_t)len);
        return WK_OK;
    }
    if (v == NULL) {
        return wk_buf_append(out, "NULL", 4);
    }
    size_t start = out->len;
    wk_status st = wk__pg_encode_part(ee, v, out, err);
    return st == WK_OK ? quote_tail(out, start, delim_of(ee->oid)) : st;
}

/* Text braces around element i of an array with `ndim` dims, before (open) the element. */
static wk_status text_braces_before(const int32_t *dims, int ndim, uint64_t i, uint8_t delim,
                                    wk_buf *out)
{
    /* Count how many levels start at element i. */
    uint64_t stride = 1;
    int opens = 0;
    for (int d = ndim - 1; d >= 0; d--) {
        stride *= (uint64_t)dims[d];
        if (i % stride == 0) {
            opens++;
        } else {
            break;
        }
    }
    if (i != 0) {
        wk_status st = wk_buf_push(out, delim);
        if (st != WK_OK) {
            return st;
        }
    }
    for (int k = 0; k < opens; k++) {
        wk_status st = wk_buf_push(out, '{');
        if (st != WK_OK) {
            return st;
        }
    }
    return WK_OK;
}

/* Text braces around element i, after (close) the element: as many '}' as the levels i ends. */
static wk_status text_braces_after(const int32_t *dims, int ndim, uint64_t i, wk_buf *out)
{
    uint64_t stride = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        stride *= (uint64_t)dims[d];
        if ((i + 1) % stride == 0) {
            wk_status st = wk_buf_push(out, '}');
            if (st != WK_OK) {
                return st;
            }
        } else {
            break;
        }
    }
    return WK_OK;
}

/* The ARRAY-kind encoder: a wk_pg_array_in of C values (dims checked as dims_check does),
 * each element through the element type's encoder of elem_kind; binary arrays of fixed-width
 * elements without NULLs are written in one pass (wk__pg_fixed_bin_width). */
static wk_status enc_array(const wk_pg_encoder *e, const void *in, wk_buf *out, wk_error *err)
{
    const wk_pg_array_in *a = in;
    wk_pg_format f = (wk_pg_format)e->format;
    if (a->ndim < 0 || a->ndim > WK_PG_MAXDIM) {
        return wk__pg_fail(err, WK_ERR_ARG, 0, "array to encode has an invalid ndim");
    }
    uint32_t nitems;
    wk_status st = dims_check(a->ndim, a->dims, a->lbounds, &nitems, 0, err);
    if (st != WK_OK) {
        return st;
    }
    size_t esize = wk_pg_kind_size(a->elem_kind);
    const wk_pg_encoder *ee = wk__pg_elem_encoder(e, a->elem_kind);
    if (ee == NULL || esize == 0) {
        return wk__pg_fail(err, WK_ERR_NOT_FOUND, 0,
                           "no encoder for the array's element kind and type");
    }
    if (nitems > 0 && a->elems == NULL) {
        return wk__pg_fail(err, WK_ERR_ARG, 0, "array to encode has no element storage");
    }
    int ndim = nitems == 0 ? 0 : a->ndim;
    bool has_nulls = false;
    for (uint32_t i = 0; a->nulls != NULL && i < nitems; i++) {
        has_nulls = has_nulls || a->nulls[i];
    }
    size_t w = f == WK_PG_BINARY && !has_nulls ? wk__pg_fixed_bin_width(ee->fn) : 0;
    if (w != 0 && w == esize && ndim == 1) {
        /* Fixed-size elements without NULLs: header and elements in one reserved block, the
         * same bytes as enc_header_bin + enc_elem would write. */
        size_t total = 20 + (size_t)nitems * (4 + w);
        if (wk_buf_reserve(out, total) != WK_OK) {
            return wk__pg_fail(err, WK_ERR_LIMIT, out->len, "output buffer is full");
        }
        uint8_t *o = out->data + out->len;
        wk__pg_put32(o, 1);
        wk__pg_put32(o + 4, 0);
        wk__pg_put32(o + 8, e->elem_oid);
        wk__pg_put32(o + 12, (uint32_t)a->dims[0]);
        wk__pg_put32(o + 16, (uint32_t)a->lbounds[0]);
        o += 20;
        const uint8_t *src = a->elems;
        for (uint32_t i = 0; i < nitems; i++, o += 4 + w, src += w) {
            wk__pg_put32(o, (uint32_t)w);
            if (w == 8) {
                uint64_t v;
                memcpy(&v, src, 8);
                wk__pg_put64(o + 4, v);
            } else if (w == 4) {
                uint32_t v;
                memcpy(&v, src, 4);
                wk__pg_put32(o + 4, v);
            } else {
                uint16_t v;
                memcpy(&v, src, 2);
                wk__pg_put16(o + 4, v);
            }
        }
        out->len += total;
        return WK_OK;
    }
    if (f == WK_PG_BINARY) {
        st = enc_header_bin(e, ndim, a->dims, a->lbounds, has_nulls, out);
    } else {
        wk_pg_array hdr;
        memset(&hdr, 0, sizeof hdr);
        hdr.ndim = ndim;
        memcpy(hdr.dims, a->dims, sizeof hdr.dims);
        memcpy(hdr.lbounds, a->lbounds, sizeof hdr.lbounds);
        st = put_decoration(&hdr, out);
        if (st == WK_OK && ndim == 0) {
            st = wk_buf_append(out, "{}", 2);
        }
    }
    const uint8_t *base = a->elems;
    for (uint32_t i = 0; i < nitems && st == WK_OK; i++) {
        const void *v = (a->nulls != NULL && a->nulls[i]) ? NULL : base + (size_t)i * esize;
        if (f == WK_PG_TEXT) {
            st = text_braces_before(a->dims, ndim, i, delim_of(e->elem_oid), out);
        }
        if (st == WK_OK) {
            st = enc_elem(ee, f, v, out, err);
        }
        if (st == WK_OK && f == WK_PG_TEXT) {
            st = text_braces_after(a->dims, ndim, i, out);
        }
    }
    if (st == WK_ERR_LIMIT || st == WK_ERR_NOMEM) {
        return wk__pg_fail(err, st, out->len, "output buffer is full");
    }
    return st;
}

/* Encodes from PostgreSQL text input (an array literal): each element goes through the
 * element type's TEXT encoder, so every element is validated. */
static wk_status enc_text(const wk_pg_encoder *e, const void *in, wk_buf *out, wk_error *err)
{
    const wk_slice *s = in;
    wk_pg_format f = (wk_pg_format)e->format;
    wk_pg_array a;
    wk_status st = wk__pg_array_parse(WK_PG_TEXT, e->elem_oid, (const uint8_t *)s->ptr, s->len,
                                      &a, err);
    if (st != WK_OK) {
        return st;
    }
    const wk_pg_encoder *ee = wk__pg_elem_encoder(e, WK_PG_KIND_TEXT);
    if (ee == NULL) {
        return wk__pg_fail(err, WK_ERR_NOT_FOUND, 0, "no text encoder for the element type");
    }
    /* Unescaped elements need memory: a private arena, released before returning. */
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    if (f == WK_PG_BINARY) {
        st = enc_header_bin(e, a.ndim, a.dims, a.lbounds, a.has_nulls, out);
    } else {
        st = put_decoration(&a, out);
        if (st == WK_OK && a.ndim == 0) {
            st = wk_buf_append(out, "{}", 2);
        }
    }
    wk_pg_array_iter it;
    wk_pg_array_iter_init(&it, &a, &arena);
    for (uint32_t i = 0; i < a.nitems && st == WK_OK; i++) {
        const uint8_t *p;
        size_t n;
        bool is_null;
        st = wk_pg_array_next(&it, &p, &n, &is_null, err);
        if (st != WK_OK) {
            break;
        }
        wk_slice es = {(const char *)p, n};
        if (f == WK_PG_TEXT) {
            st = text_braces_before(a.dims, a.ndim, i, delim_of(e->elem_oid), out);
        }
        if (st == WK_OK) {
            st = enc_elem(ee, f, is_null ? NULL : &es, out, err);
        }
        if (st == WK_OK && f == WK_PG_TEXT) {
            st = text_braces_after(a.dims, a.ndim, i, out);
        }
    }
    wk_arena_free(&arena);
    return st;
}

const wk_pg_encode_fn wk__pg_array_enc[2][WK_PG_KIND_COUNT] = {
    [WK_PG_TEXT] = {[WK_PG_KIND_ARRAY] = enc_array, [WK_PG_KIND_TEXT] = enc_text},
    [WK_PG_BINARY] = {[WK_PG_KIND_ARRAY] = enc_array, [WK_PG_KIND_TEXT] = enc_text},
};
