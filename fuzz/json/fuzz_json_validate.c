/*
 * Fuzz harness for wk_json_validate. Any input: it must answer what the fused tree parser
 * (wk_json_decode_value) answers with the same options: the same status, message and byte
 * offset on failure, the same `consumed` on success; and the validator forced to the lexer's
 * baseline instance answers what the machine's best instance (AVX2 where it has it) answers.
 * The first byte picks the options (flags and a depth limit from 1 to 121, so depth limits are
 * reached too). Any disagreement traps.
 */
#include <stdint.h>
#include <string.h>

#include "formats/json/lex.h"
#include "wirekit/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const unsigned MODES[] = {0,
                                 WK_JSON_READ_RAW_NUMBERS,
                                 WK_JSON_READ_ALLOW_BOM | WK_JSON_READ_NAN_INF,
                                 WK_JSON_READ_ALLOW_TRAILING,
                                 WK_JSON_READ_MULTI | WK_READ_COPY_STRINGS};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) {
        return 0;
    }
    unsigned flags = MODES[data[0] % (sizeof MODES / sizeof MODES[0])];
    wk_read_opts ro = {.flags = flags, .max_depth = (uint32_t)(data[0] >> 4) * 8 + 1};
    data++;
    size--;

    wk_arena arena;
    wk_arena_init(&arena, NULL, 64u << 20);
    wk_value *v = NULL;
    size_t used_d = 0, used_v = 0;
    wk_error ed = {WK_OK, 0, NULL}, ev = {WK_OK, 0, NULL};
    wk_status sd = wk_json_decode_value(data, size, &ro, &arena, &v, &used_d, &ed);
    wk_status sv = wk_json_validate(data, size, &ro, &used_v, &ev);
    wk_arena_free(&arena);
    if (sd == WK_ERR_NOMEM) {
        return 0; /* the arena's cap: a limit of the tree, which validation does not have */
    }
    if (sd != sv || ed.code != ev.code) {
        __builtin_trap();
    }
    if (sd == WK_OK ? used_d != used_v || ev.offset != used_v
                    : ed.offset != ev.offset || strcmp(ed.msg, ev.msg) != 0) {
        __builtin_trap();
    }
    size_t used_b = 0;
    wk_error eb = {WK_OK, 0, NULL};
    wk__json_simd_force(WK__JSON_SIMD_BASE);
    wk_status sb = wk_json_validate(data, size, &ro, &used_b, &eb);
    wk__json_simd_force(0);
    if (sb != sv || eb.offset != ev.offset || eb.msg != ev.msg || used_b != used_v) {
        __builtin_trap();
    }
    return 0;
}
