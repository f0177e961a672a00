/*
 * xml, PostgreSQL's xml.c: read as its text, which is also its binary form.
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> this codec -> rendered.c's plain renderer
 * (a UTF-8 check, then the bytes) -> text / a string event / a value tree. The document is not
 * parsed: well-formedness is the server's business (xml_in / xml_recv check it).
 */
#include "pg/pg_codec.h"

R_OIDS(c_xml, 142);
R_AOIDS(c_xml, 143);
const wk_pg_codec wk__pg_codec_xml = RC("xml", &wk__pg_rt_plain, WK_PG_BOTH_FORMATS, c_xml);
