/*
 * Helpers shared by the PostgreSQL codec unit tests: one default registry for the process,
 * and one-line decode / encode / round-trip calls through it.
 */
#ifndef PG_TEST_UTIL_H
#define PG_TEST_UTIL_H

#include "wirekit/pg.h"

/** The built-in registry (built on first use, lives for the process). */
const wk_pg_registry *pgt_reg(void);

/** Decodes `p[0..n)` of `oid` in `fmt` to PostgreSQL text in a static buffer (NUL-terminated).
 *  Returns the status; `*text` points at the result. */
wk_status pgt_to_text(wk_pg_oid oid, wk_pg_format fmt, const void *p, size_t n,
                      const char **text, wk_error *err);

/** Encodes text input `s` of `oid` into `fmt` (static buffer). */
wk_status pgt_from_text(wk_pg_oid oid, wk_pg_format fmt, const char *s, const uint8_t **out,
                        size_t *len, wk_error *err);

/** Decodes into `kind` (arena for memory). */
wk_status pgt_decode(wk_pg_oid oid, wk_pg_format fmt, wk_pg_kind kind, const void *p, size_t n,
                     void *out, wk_error *err);

/** Encodes `in` of `kind` as `oid` in `fmt` (static buffer). */
wk_status pgt_encode(wk_pg_oid oid, wk_pg_format fmt, wk_pg_kind kind, const void *in,
                     const uint8_t **out, size_t *len, wk_error *err);

/** Text -> binary -> text, and text -> text (canonicalising); both must give `want`. */
int pgt_roundtrip(wk_pg_oid oid, const char *in, const char *want, char *why, size_t whylen);

#endif
