/*
 * Which instance of the JSON lexer's wide scans runs (json/lex_scan.h): the AVX2 one when the
 * CPU and the OS have AVX2, else the baseline (SSE2 on x86-64). Decided once per process and
 * kept in one relaxed atomic, so a parse pays one load and one compare for the choice, not a
 * call through a pointer per string. WK_JSON_SIMD=base in the environment forces the baseline
 * (to compare or test it on an AVX2 machine); tests force each level in turn with
 * wk__json_simd_force.
 */
#include <stdlib.h>
#include <string.h>

#include "json/lex.h"

/* 0: not decided yet; else a WK__JSON_SIMD_* level. */
static int simd_level;

static int machine_level(void)
{
#if WK__JSON_HAVE_AVX2
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
        return WK__JSON_SIMD_AVX2;
    }
#endif
    return WK__JSON_SIMD_BASE;
}

int wk__json_simd(void)
{
    int level = __atomic_load_n(&simd_level, __ATOMIC_RELAXED);
    if (WK__LIKELY(level != 0)) {
        return level;
    }
    level = machine_level();
    const char *env = getenv("WK_JSON_SIMD");
    if (env != NULL && strcmp(env, "base") == 0) {
        level = WK__JSON_SIMD_BASE;
    }
    __atomic_store_n(&simd_level, level, __ATOMIC_RELAXED);
    return level;
}

void wk__json_simd_force(int level)
{
    int have = machine_level();
    __atomic_store_n(&simd_level, level != 0 && level < have ? level : level != 0 ? have : 0,
                     __ATOMIC_RELAXED);
}
