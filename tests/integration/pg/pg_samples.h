/*
 * A literal per built-in PostgreSQL 15 type name (several for some types; NULL for a type
 * that accepts no literal, which the server must refuse), for the integration tests.
 */
#ifndef WK_PG_SAMPLES_H
#define WK_PG_SAMPLES_H

#include <stddef.h>

extern const char *const pg_type_samples[][2];
extern const size_t pg_type_nsamples;

#endif
