/*
 * Byte classes and small helpers of the media-type grammars, as one 256-entry table so the
 * scanner classifies a byte with one load. The grammar (mt_grammar.c) builds its byte sets
 * from the same table, so the two cannot drift apart.
 *
 * Where it sits: used by every other file here (mt_parse.c's scanner, mt_grammar.c's byte
 * sets, mt_serialize.c's checks and quoting, the case-blind compares of the look-ups).
 */
#include "mediatype/mt_internal.h"

/* Short names for the classes, so the table below reads as one row per 16 bytes. */
#define T WK__MT_TOKEN
#define W WK__MT_WS
#define Q WK__MT_QSC
#define U WK__MT_UPPER
#define O WK__MT_OWS

/* clang-format off */
const uint8_t wk__mt_class[256] = {
    /* 0x00 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, W | Q | O, W, 0, 0, W, 0, 0,
    /* 0x10 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 0x20  sp ! " # $ % & ' ( ) * + , - . / */
    W | Q | O, T | Q, Q, T | Q, T | Q, T | Q, T | Q, T | Q, Q, Q, T | Q, T | Q, Q, T | Q, T | Q, Q,
    /* 0x30  0-9 : ; < = > ? */
    T | Q, T | Q, T | Q, T | Q, T | Q, T | Q, T | Q, T | Q, T | Q, T | Q, Q, Q, Q, Q, Q, Q,
    /* 0x40  @ A-O */
    Q, T | Q | U, T | Q | U, T | Q | U, T | Q | U, T | Q | U, T | Q | U, T | Q | U,
    T | Q | U, T | Q | U, T | Q | U, T | Q | U, T | Q | U, T | Q | U, T | Q | U, T | Q | U,
    /* 0x50  P-Z [ \ ] ^ _ */
    T | Q | U, T | Q | U, T | Q | U, T | Q | U, T | Q | U, T | Q | U, T | Q | U, T | Q | U,
    T | Q | U, T | Q | U, T | Q | U, Q, Q, Q, T | Q, T | Q,
    /* 0x60  ` a-o */
    T | Q, T | Q, T | Q, T | Q, T | Q, T | Q, T | Q, T | Q, T | Q, T | Q, T | Q, T | Q, T | Q,
    T | Q, T | Q, T | Q,
    /* 0x70  p-z { | } ~ DEL */
    T | Q, T | Q, T | Q, T | Q, T | Q, T | Q, T | Q, T | Q, T | Q, T | Q, T | Q, Q, T | Q, Q,
    T | Q, 0,
    /* 0x80-0xFF: quoted-string code points only */
    Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q,
    Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q,
    Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q,
    Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q, Q,
};
/* clang-format on */

/* Contract in mt_internal.h: a non-empty run of token bytes. */
bool wk__mt_token(const char *s, size_t n)
{
    if (n == 0) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!wk__mt_is((uint8_t)s[i], WK__MT_TOKEN)) {
            return false;
        }
    }
    return true;
}

/* Contract in mt_internal.h: every byte may stand in a quoted string; in UTF-8 mode a byte
 * >= 0x80 must start U+0080..U+00FF (the only code points the grammar admits). */
bool wk__mt_value_ok(const char *s, size_t n, bool utf8)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t c = (uint8_t)s[i];
        if (!wk__mt_is(c, WK__MT_QSC)) {
            return false;
        }
        if (utf8 && c >= 0x80) {
            /* U+0080..U+00FF are C2/C3 followed by a continuation byte; nothing else. */
            if ((c != 0xC2 && c != 0xC3) || i + 1 >= n || ((uint8_t)s[i + 1] & 0xC0) != 0x80) {
                return false;
            }
            i++;
        }
    }
    return true;
}

/* Contract in mt_internal.h: equal lengths, equal bytes with ASCII case folded. */
bool wk__mt_ieq(const char *a, size_t an, const char *b, size_t bn)
{
    if (an != bn) {
        return false;
    }
    for (size_t i = 0; i < an; i++) {
        uint8_t x = (uint8_t)a[i], y = (uint8_t)b[i];
        if (x != y) {
            if (x >= 'A' && x <= 'Z') {
                x = (uint8_t)(x + 32);
            }
            if (y >= 'A' && y <= 'Z') {
                y = (uint8_t)(y + 32);
            }
            if (x != y) {
                return false;
            }
        }
    }
    return true;
}
