/*
 * Which instance of the JSON lexer's wide scans runs (lex_scan.h): the AVX2 one when the
 * CPU and the OS have AVX2, else the baseline (SSE2 on x86-64). Decided once per process and
 * kept in one relaxed atomic, so a parse pays one load and one compare for the choice (inline,
 * lex.h), not a call through a pointer per string. WK_JSON_SIMD=base in the environment
 * forces the baseline (to compare or test it on an AVX2 machine); tests force each level in
 * turn with wk__json_simd_force. Also the byte vectors the string scans read from memory.
 * Flow: the first parse -> wk__json_simd (lex.h) -> wk__json_simd_decide here -> the level
 * every later parse reads.
 */
#include <stdlib.h>
#include <string.h>

#include "formats/json/lex.h"

#define WK__JSON_8(c) c, c, c, c, c, c, c, c
#define WK__JSON_32(c) {WK__JSON_8(c), WK__JSON_8(c), WK__JSON_8(c), WK__JSON_8(c)}
/* The byte vectors of lex.h (WK__JSON_VQUOTE, _VBSLASH, _VSPACE): 32 copies of each byte. */
const uint8_t wk__json_vbytes[3][32] __attribute__((aligned(32))) = {
    WK__JSON_32('"'), WK__JSON_32('\\'), WK__JSON_32(0x20)};

/* 0: not decided yet; else a WK__JSON_SIMD_* level. */
int wk__json_simd_level;

/* The best level this CPU runs: AVX2 when compiled in and supported, else the baseline. */
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

/* Decides the level on first use (lex.h's wk__json_simd calls this once): the machine's, or
 * the baseline with WK_JSON_SIMD=base; stored for every later parse. */
int wk__json_simd_decide(void)
{
    int level = machine_level();
    const char *env = getenv("WK_JSON_SIMD");
    if (env != NULL && strcmp(env, "base") == 0) {
        level = WK__JSON_SIMD_BASE;
    }
    __atomic_store_n(&wk__json_simd_level, level, __ATOMIC_RELAXED);
    return level;
}

/* Tests: forces a level (never above what the machine runs); 0 makes the next parse decide
 * again. */
void wk__json_simd_force(int level)
{
    int have = machine_level();
    __atomic_store_n(&wk__json_simd_level,
                     level != 0 && level < have ? level : level != 0 ? have : 0, __ATOMIC_RELAXED);
}
