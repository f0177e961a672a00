/*
 * Names of MessagePack formats by first byte, for dumps and error messages (`wirekit
 * inspect`). A table lookup: the first byte alone decides the format.
 */
#include "wirekit/msgpack.h"

WK_API const char *wk_mp_format_name(uint8_t byte)
{
    if (byte <= 0x7f) {
        return "positive fixint";
    }
    if (byte <= 0x8f) {
        return "fixmap";
    }
    if (byte <= 0x9f) {
        return "fixarray";
    }
    if (byte <= 0xbf) {
        return "fixstr";
    }
    if (byte >= 0xe0) {
        return "negative fixint";
    }
    static const char *const names[32] = {
        "nil",     "(never used)", "false",   "true",    "bin 8",    "bin 16",   "bin 32",
        "ext 8",   "ext 16",       "ext 32",  "float 32", "float 64", "uint 8",   "uint 16",
        "uint 32", "uint 64",      "int 8",   "int 16",   "int 32",   "int 64",   "fixext 1",
        "fixext 2", "fixext 4",    "fixext 8", "fixext 16", "str 8",  "str 16",   "str 32",
        "array 16", "array 32",    "map 16",  "map 32"};
    return names[byte - 0xc0];
}
