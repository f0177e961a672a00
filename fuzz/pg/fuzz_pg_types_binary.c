/* libFuzzer harness: the rendered PostgreSQL types (geometry, ranges, bit strings, ...) in the
 * binary wire format (see fuzz_pg_types_common.h). */
#include "fuzz_pg_types_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_types_one(WK_PG_BINARY, data, size);
    return 0;
}
