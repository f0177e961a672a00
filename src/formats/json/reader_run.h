/*
 * Internal: the event reader's batch entry point for the JSON stream unpacker. It runs the
 * reader's step in a loop inside reader.c, so the step is inlined there and each event costs
 * no call into another translation unit; the unpacker's per-event work (remembering where the
 * step started, holding back a number that reaches the end of a chunk, stopping when a
 * top-level value is whole) is done in the same loop.
 * Flow: formats/json/json_unpacker.c (events) -> wk__json_reader_run -> reader.c's step ->
 * the caller's sink.
 */
#ifndef WK_JSON_READER_RUN_H
#define WK_JSON_READER_RUN_H

#include "wirekit/event.h"
#include "wirekit/json.h"

/* A reader flag of its own, set only while wk__json_reader_run runs with `more`: a number
 * that reaches the end of the input is then not read (WK_ERR_AGAIN, nothing changed), as it
 * may go on in the next chunk. wk_json_reader_init (json.h) clears it from the caller's
 * flags. */
#define WK__JSON_READ_MORE WK__JR_READ_MORE

/* What the step that ended a run started from, and whether the sink failed. */
typedef struct wk__json_run {
    const uint8_t *save_p; /* the cursor before the last step */
    uint32_t save_state;   /* the state before the last step */
    bool sink_failed;      /* the status returned is the sink's */
} wk__json_run;

/* Reads events from r into sink until one leaves the nesting depth at 0 (or, with `one`,
 * after a single event), a step fails, or the sink fails. Returns WK_OK after the last event
 * was sent; the step's status when it failed (r is then as the step left it; out says where
 * it started); WK_ERR_AGAIN, the event not read, for a number that reaches the end of the
 * input when `more` says more input may follow; or the sink's status with out->sink_failed
 * set. */
wk_status wk__json_reader_run(wk_json_reader *r, const wk_sink *sink, bool one, bool more,
                              wk__json_run *out);

#endif
