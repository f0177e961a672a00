/*
 * The registry's test oracle: the slow, obvious look-ups (ask every codec in turn, using only
 * its metadata) that the O(1) tables of registry.c must agree with. Internal: not exported,
 * not in the public headers; the unit tests and the pg benchmark include it from src/.
 */
#ifndef WIREKIT_PG_ORACLE_H
#define WIREKIT_PG_ORACLE_H

#include <stdbool.h>

#include "wirekit/pg.h"

/**
 * The slow path, kept as the oracle: asks every codec in turn, using only its metadata, which
 * one decodes (oid, format, kind), and returns the function it would use (the decoder's
 * elem_oid is filled for arrays). Returns false when none can. Linear in the codec count.
 */
bool wk__pg_registry_scan_decoder(const wk_pg_registry *reg, wk_pg_oid oid,
                                  wk_pg_format format, wk_pg_kind kind,
                                  wk_pg_decoder *out);
/** Slow twin of wk_pg_registry_find_encoder_for. */
bool wk__pg_registry_scan_encoder_for(const wk_pg_registry *reg, wk_pg_oid oid,
                                      wk_pg_format format, wk_pg_kind kind,
                                      wk_pg_encoder *out);
/** Slow twin of wk_pg_registry_find_encoder (elem_kind used only when kind is ARRAY). */
bool wk__pg_registry_scan_encoder(const wk_pg_registry *reg, wk_pg_format format,
                                  wk_pg_kind kind, wk_pg_kind elem_kind,
                                  wk_pg_encoder *out);

#endif
