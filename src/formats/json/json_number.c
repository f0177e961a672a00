/*
 * A JSON number's text turned into a native number event, for modules that hold number text
 * from elsewhere (the PostgreSQL json/jsonb codecs read with WK_JSON_READ_RAW_NUMBERS and
 * decide per number). The lexer's own number rule, so the result is the one the JSON reader
 * would have given.
 * Flow: raw number text (WK_EV_RAWNUM, from the reader) -> wk__json_number_to_native (the
 * lexer's number rule, lex.h) -> a native number event, for src/pg/codec_generic.c.
 */
#include <math.h>

#include "formats/json/json_number_interface.h"
#include "formats/json/lex.h"

/* The contract is json_number_interface.h's: the lexer's number rule over the whole text,
 * and a double kept only when it is finite and not a nonzero value that became zero. */
void wk__json_number_to_native(wk_event *x)
{
    const uint8_t *p = (const uint8_t *)x->v.str.ptr, *end = p + x->v.str.len;
    wk__json_num num;
    wk__json_fail f = {WK_OK, NULL, NULL};
    if (x->v.str.len == 0 || wk__json_lex_number(p, end, false, &num, &f) != end) {
        return;
    }
    if (num.kind == WK__NUM_UINT) {
        x->type = WK_EV_UINT;
        x->v.u = num.v.u;
    } else if (num.kind == WK__NUM_INT) {
        x->type = WK_EV_INT;
        x->v.i = num.v.i;
    } else if (num.kind == WK__NUM_DOUBLE && isfinite(num.v.d)) {
        bool nonzero = false; /* any nonzero digit before the exponent */
        for (const uint8_t *q = p; q < end && (*q | 0x20) != 'e'; q++) {
            nonzero |= *q >= '1' && *q <= '9';
        }
        if (num.v.d != 0 || !nonzero) {
            x->type = WK_EV_FLOAT;
            x->f32 = false;
            x->v.f = num.v.d;
        }
    }
}

