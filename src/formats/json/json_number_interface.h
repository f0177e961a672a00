/*
 * The JSON module's number rule, published to other modules (the PostgreSQL json/jsonb codecs):
 * number text that the JSON reader handed over raw (WK_EV_RAWNUM) becomes the native number the
 * reader would have produced.
 * Flow: the PostgreSQL json codecs -> this interface -> json_number.c (the lexer's rule).
 */
#ifndef WK_JSON_NUMBER_INTERFACE_H
#define WK_JSON_NUMBER_INTERFACE_H

#include "wirekit/event.h"

/**
 * Turns the number text in x->v.str into WK_EV_INT or WK_EV_UINT when it is an integer that
 * fits 64 bits, or WK_EV_FLOAT when it is finite as a double and not a nonzero value that
 * underflows to zero. Otherwise (not JSON number text, out of range) x is left as it was: the
 * text is the only form that keeps numeric's range.
 */
void wk__json_number_to_native(wk_event *x);

#endif
