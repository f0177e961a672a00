/*
 * A minimal, test-only JSON reader for the WHATWG mimesniff vector files: an array whose items
 * are strings (section comments) or flat objects with string, null or boolean members. Strings
 * are decoded to code points (\u escapes and surrogate pairs included) and stored as UTF-8.
 * Not a general JSON parser: the project's JSON codec lives in src/formats/json.
 */
#ifndef MINI_JSON_H
#define MINI_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct mj_vector {
    char *input; /* UTF-8 */
    size_t input_len;
    char *output; /* UTF-8; NULL when the expected output is null (parse failure) */
    size_t output_len;
} mj_vector;

/* Reads every object of the array in `text`; returns the count or -1 on malformed JSON.
 * *out is malloc'd; free with mj_free(). */
long mj_read_vectors(const char *text, size_t len, mj_vector **out);
void mj_free(mj_vector *v, long n);

/* Converts UTF-8 `s` to one byte per code point (isomorphic encode). Returns false when a
 * code point is above U+00FF. `out` must hold `len` bytes; *out_len receives the length. */
bool mj_utf8_to_latin1(const char *s, size_t len, char *out, size_t *out_len);

#endif
