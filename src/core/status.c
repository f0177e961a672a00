/*
 * Status names and the error-report helper. Messages are static strings so that an error
 * report never allocates and never needs freeing.
 * Flow: every failing call -> wk_error_set -> the caller's wk_error (its message static, or
 * the status's name from wk_status_str).
 */
#include "wirekit/core.h"

/* A short static English name for status ("unknown status" for a value outside the enum). */
WK_API const char *wk_status_str(wk_status status)
{
    switch (status) {
    case WK_OK: return "ok";
    case WK_ERR_NOMEM: return "out of memory";
    case WK_ERR_TRUNCATED: return "truncated input";
    case WK_ERR_SYNTAX: return "syntax error";
    case WK_ERR_TYPE: return "type mismatch";
    case WK_ERR_RANGE: return "value out of range";
    case WK_ERR_DEPTH: return "nesting too deep";
    case WK_ERR_LIMIT: return "size limit reached";
    case WK_ERR_UTF8: return "invalid UTF-8";
    case WK_ERR_NOT_FOUND: return "not found";
    case WK_ERR_ARG: return "invalid argument";
    case WK_ERR_STATE: return "call out of order";
    case WK_ERR_TRAILING: return "trailing bytes after value";
    case WK_ERR_IO: return "I/O error";
    case WK_ERR_UNSUPPORTED: return "unsupported";
    case WK_ERR_EOF: return "end of input";
    case WK_ERR_SERVER: return "the server reported an error";
    case WK_ERR_CONNECT: return "connection failed";
    case WK_ERR_AGAIN: return "more input needed";
    }
    return "unknown status";
}

/* Fills err (when not NULL) with code, offset and msg (NULL: the status's name) and returns
 * code, so a failing call ends with `return wk_error_set(err, ...)`. */
WK_API wk_status wk_error_set(wk_error *err, wk_status code, size_t offset, const char *msg)
{
    if (err != NULL) {
        err->code = code;
        err->offset = offset;
        err->msg = msg != NULL ? msg : wk_status_str(code);
    }
    return code;
}
