/*
 * Test helpers for code that speaks events: a sink that records events as compact text, and a
 * source that replays events written in that same text.
 *
 * Text form (tokens separated by spaces):
 *   {N  {?   map of N pairs / of unknown size      [N  [?   array        }  ]   end
 *   nil  true  false   uN (unsigned)  iN (signed)  dX (double)  sX (float32)
 *   "text" (no escapes; \0 stands for a NUL byte)   b:HEX (binary)   ts:SEC:NSEC
 */
#ifndef EVENT_SCRIPT_H
#define EVENT_SCRIPT_H

#include "wirekit/event.h"

typedef struct ev_recorder {
    char text[8192];
    size_t len;
    wk_sink sink;
    size_t fail_after; /* 0 = never; N = the Nth event fails with WK_ERR_LIMIT */
    size_t events;
    wk_status latched;
} ev_recorder;

void ev_recorder_init(ev_recorder *r);

typedef struct ev_script {
    wk_event ev[512];
    char strings[8192];
    size_t n;
    size_t pos;
    wk_source source;
} ev_script;

/** Parses `text`; returns 0, or -1 on a malformed script (a test bug). */
int ev_script_init(ev_script *s, const char *text);

#endif
