/*
 * The types of the rendered codecs (types_misc.c, range.c) for the fuzz harnesses: the first
 * input byte indexes this list (scalars, then their arrays), the rest is the value. The order
 * is fixed: the seed corpus names types by their index here.
 */
#ifndef FUZZ_PG_TYPES_COMMON_H
#define FUZZ_PG_TYPES_COMMON_H

#include "fuzz_pg_common.h"

static const wk_pg_oid fuzz_types_oids[] = {
    /* 0 */ 28,   29,   5069, 27,   22,   30,   2205, 24,   142,  1790,
    /* 10 */ 4072, 3220, 829,  774,  790,  600,  601,  602,  603,  604,
    /* 20 */ 628,  718,  1560, 1562, 5038, 2970, 3614, 1033, 3615, 3904,
    /* 30 */ 3906, 3908, 3910, 3912, 3926, 4451, 4532, 4533, 4534, 4535,
    /* 40 */ 4536, 1011, 1010, 1006, 1013, 143,  3221, 1040, 1017, 1019,
    /* 50 */ 1027, 1561, 3643, 3905, 3907, 3911, 6150, 6155, 2210, 1034};

static inline void fuzz_types_one(wk_pg_format format, const uint8_t *data, size_t size)
{
    fuzz_one_of(fuzz_types_oids, sizeof fuzz_types_oids / sizeof fuzz_types_oids[0], format,
                data, size);
}

#endif
