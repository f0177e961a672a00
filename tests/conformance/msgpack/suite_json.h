/*
 * A minimal JSON reader for the conformance suite's data file only (test code, not the
 * library's JSON module): objects, arrays, strings with escapes, true/false/null, and numbers
 * kept as their text (WK_VAL_RAWNUM) so the test decides how to read them. Recursive, which
 * is fine for a trusted file a few levels deep.
 */
#ifndef SUITE_JSON_H
#define SUITE_JSON_H

#include "wirekit/value.h"

/** Parses `text[0..len)` into a tree in `arena`. Returns NULL and sets *err_at on bad input. */
wk_value *suite_json_parse(const char *text, size_t len, wk_arena *arena, size_t *err_at);

#endif
