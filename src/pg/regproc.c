/*
 * The reg* OID alias types, PostgreSQL's regproc.c: regclass, regproc, regprocedure, regoper,
 * regoperator, regtype, regconfig, regdictionary, regnamespace, regrole, regcollation.
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> this codec -> rendered.c's unsigned 32-bit
 * renderer. On the wire each is a 4-byte OID; the server's text output is the object's name,
 * which needs the catalog, so a binary value renders as its OID number and text input is
 * accepted only as an OID (a name goes as a text parameter, where the server resolves it).
 */
#include "pg/pg_codec.h"

/* One codec for all eleven types; the first OID (2205, regclass) names it. */
R_OIDS(c_reg, 2205, 24, 2202, 2203, 2204, 2206, 3734, 3769, 4089, 4096, 4191);
R_AOIDS(c_reg, 2210, 1008, 2207, 2208, 2209, 2211, 3735, 3770, 4090, 4097, 4192);
const wk_pg_codec wk__pg_codec_reg = RC("regclass", &wk__pg_rt_u32, WK_PG_BOTH_FORMATS, c_reg);
