/* The text codec: building, parsing, errors, printing, ABNF, and its limits. */
#include <stdlib.h>

#include "wirekit/text.h"
#include "wk_test.h"

#define UNB WK_TEXT_UNBOUNDED

/* list = pair *( "," pair ) ; pair = key "=" value ; key lowercased on print. */
static wk_text_program *kv_program(wk_text_builder **out_b)
{
    wk_text_builder *b = wk_text_builder_new(NULL);
    wk_text_byteset alpha = {{0}}, digit = {{0}};
    wk_text_byteset_add_range(&alpha, 'a', 'z');
    wk_text_byteset_add_range(&alpha, 'A', 'Z');
    wk_text_byteset_add_range(&digit, '0', '9');
    wk_text_node key = wk_text_capture(
        b, 1, "key", wk_text_rep(b, wk_text_class(b, "ALPHA", &alpha), 1, 8), WK_TEXT_PRINT_LOWER);
    wk_text_node val =
        wk_text_capture(b, 2, "val", wk_text_rep(b, wk_text_class(b, "DIGIT", &digit), 1, UNB), 0);
    wk_text_node pair =
        wk_text_rule(b, "pair", WK_TEXT_SEQ(b, key, wk_text_lit(b, "=", 1, 0), val));
    wk_text_node list = WK_TEXT_SEQ(
        b, pair, wk_text_rep(b, WK_TEXT_SEQ(b, wk_text_lit(b, ",", 1, 0), pair), 0, UNB),
        wk_text_end(b));
    wk_text_program *p = NULL;
    wk_status st = wk_text_compile(b, list, &p, NULL);
    if (out_b != NULL) {
        *out_b = b;
    } else {
        wk_text_builder_free(b);
    }
    return st == WK_OK ? p : NULL;
}

WK_TEST(test_text_parse_captures_every_repetition_in_input_order)
{
    wk_text_program *p = kv_program(NULL);
    CHECK(p != NULL);
    const char *in = "a=1,Bc=22,d=333";
    wk_text_cap caps[8];
    size_t n;
    CHECK_OK(wk_text_parse(p, in, strlen(in), caps, 8, &n, NULL));
    CHECK_EQ(n, 6);
    CHECK_EQ(caps[2].slot, 1);
    CHECK_MEM(caps[2].ptr, caps[2].len, "Bc", 2);
    CHECK(caps[2].ptr == in + 4); /* a view of the input, not a copy */
    CHECK_EQ(caps[5].slot, 2);
    CHECK_MEM(caps[5].ptr, caps[5].len, "333", 3);
    wk_text_program_free(p);
}

WK_TEST(test_text_parse_error_names_the_expectation_at_the_farthest_offset)
{
    wk_text_program *p = kv_program(NULL);
    CHECK(p != NULL);
    wk_text_cap caps[8];
    size_t n;
    wk_error err = {0};
    CHECK_STATUS(wk_text_parse(p, "a=1,b=", 6, caps, 8, &n, &err), WK_ERR_SYNTAX);
    CHECK_EQ(err.offset, 6);
    CHECK_STR(err.msg, "expected val");
    CHECK_STATUS(wk_text_parse(p, "a=1;b=2", 7, caps, 8, &n, &err), WK_ERR_SYNTAX);
    CHECK_EQ(err.offset, 3);
    CHECK_STR(err.msg, "expected ','");
    CHECK_STATUS(wk_text_parse(p, "abcdefghi=1", 11, caps, 8, &n, &err), WK_ERR_SYNTAX);
    CHECK_EQ(err.offset, 8); /* key is at most 8 letters */
    CHECK_EQ(n, 0);
    wk_text_program_free(p);
}

WK_TEST(test_text_parse_reports_limit_when_captures_overflow)
{
    wk_text_program *p = kv_program(NULL);
    wk_text_cap caps[3];
    size_t n;
    wk_error err = {0};
    CHECK_STATUS(wk_text_parse(p, "a=1,b=2", 7, caps, 3, &n, &err), WK_ERR_LIMIT);
    CHECK_STATUS(wk_text_parse(p, "a=1", 3, NULL, 0, &n, &err), WK_ERR_LIMIT);
    wk_text_program_free(p);
}

WK_TEST(test_text_parse_handles_megabytes_of_repetition_without_recursion)
{
    wk_text_program *p = kv_program(NULL);
    size_t pairs = 200000, len = pairs * 4 - 1;
    char *in = malloc(len);
    for (size_t i = 0; i < pairs; i++) {
        memcpy(in + i * 4, "x=1,", i + 1 == pairs ? 3 : 4);
    }
    wk_text_cap *caps = malloc(2 * pairs * sizeof *caps);
    size_t n;
    wk_status st = wk_text_parse(p, in, len, caps, 2 * pairs, &n, NULL);
    free(in);
    free(caps);
    wk_text_program_free(p);
    CHECK_OK(st);
    CHECK_EQ(n, 2 * pairs);
}

WK_TEST(test_text_caseless_literal_matches_any_case_and_prints_as_written)
{
    wk_text_builder *b = wk_text_builder_new(NULL);
    wk_text_node root =
        WK_TEXT_SEQ(b, wk_text_lit(b, "Hello", 5, WK_TEXT_CASELESS), wk_text_end(b));
    wk_text_program *p;
    CHECK_OK(wk_text_compile(b, root, &p, NULL));
    wk_text_builder_free(b);
    size_t n;
    CHECK_OK(wk_text_parse(p, "hELLO", 5, NULL, 0, &n, NULL));
    CHECK_STATUS(wk_text_parse(p, "hELLx", 5, NULL, 0, &n, NULL), WK_ERR_SYNTAX);
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    CHECK_OK(wk_text_print(p, NULL, 0, &out, NULL));
    CHECK_MEM(out.data, out.len, "Hello", 5);
    wk_buf_free(&out);
    wk_text_program_free(p);
}

WK_TEST(test_text_bounded_repetition_respects_min_and_max)
{
    wk_text_builder *b = wk_text_builder_new(NULL);
    wk_text_byteset x = {{0}};
    wk_text_byteset_add_chars(&x, "x");
    wk_text_node root =
        WK_TEXT_SEQ(b, wk_text_rep(b, wk_text_class(b, "X", &x), 2, 3), wk_text_end(b));
    wk_text_program *p;
    CHECK_OK(wk_text_compile(b, root, &p, NULL));
    wk_text_builder_free(b);
    size_t n;
    CHECK_STATUS(wk_text_parse(p, "x", 1, NULL, 0, &n, NULL), WK_ERR_SYNTAX);
    CHECK_OK(wk_text_parse(p, "xx", 2, NULL, 0, &n, NULL));
    CHECK_OK(wk_text_parse(p, "xxx", 3, NULL, 0, &n, NULL));
    wk_error err;
    CHECK_STATUS(wk_text_parse(p, "xxxx", 4, NULL, 0, &n, &err), WK_ERR_SYNTAX);
    CHECK_EQ(err.offset, 3);
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    CHECK_OK(wk_text_print(p, NULL, 0, &out, NULL));
    CHECK_MEM(out.data, out.len, "xx", 2); /* uncaptured repetitions print their minimum */
    wk_buf_free(&out);
    wk_text_program_free(p);
}

WK_TEST(test_text_lookahead_tests_without_consuming)
{
    wk_text_builder *b = wk_text_builder_new(NULL);
    wk_text_byteset any = {{~0ull, ~0ull, ~0ull, ~0ull}};
    wk_text_node a = wk_text_lit(b, "a", 1, 0);
    /* ( !"a" any ) then &"a" "a" */
    wk_text_node root = WK_TEXT_SEQ(b, wk_text_not(b, a), wk_text_class(b, "any", &any),
                                    wk_text_and(b, a), a, wk_text_end(b));
    wk_text_program *p;
    CHECK_OK(wk_text_compile(b, root, &p, NULL));
    wk_text_builder_free(b);
    size_t n;
    CHECK_OK(wk_text_parse(p, "ba", 2, NULL, 0, &n, NULL));
    CHECK_STATUS(wk_text_parse(p, "aa", 2, NULL, 0, &n, NULL), WK_ERR_SYNTAX);
    CHECK_STATUS(wk_text_parse(p, "bb", 2, NULL, 0, &n, NULL), WK_ERR_SYNTAX);
    wk_text_program_free(p);
}

WK_TEST(test_text_repetition_of_an_empty_match_terminates)
{
    wk_text_builder *b = wk_text_builder_new(NULL);
    wk_text_node opt = wk_text_opt(b, wk_text_lit(b, "z", 1, 0));
    wk_text_node root = WK_TEXT_SEQ(b, wk_text_rep(b, opt, 0, UNB), wk_text_end(b));
    wk_text_program *p;
    CHECK_OK(wk_text_compile(b, root, &p, NULL));
    wk_text_builder_free(b);
    size_t n;
    CHECK_OK(wk_text_parse(p, "zzz", 3, NULL, 0, &n, NULL));
    CHECK_OK(wk_text_parse(p, "", 0, NULL, 0, &n, NULL));
    wk_text_program_free(p);
}

WK_TEST(test_text_compile_rejects_failed_nodes_and_excess_depth)
{
    wk_text_builder *b = wk_text_builder_new(NULL);
    wk_text_node bad = wk_text_lit(b, "", 0, 0); /* empty literal: fails */
    CHECK_EQ(bad, 0);
    wk_text_node root = WK_TEXT_SEQ(b, wk_text_lit(b, "a", 1, 0), bad);
    CHECK_EQ(root, 0);
    wk_text_program *p = (wk_text_program *)1;
    wk_error err = {0};
    CHECK_STATUS(wk_text_compile(b, root, &p, &err), WK_ERR_ARG);
    CHECK(p == NULL);
    wk_text_builder_free(b);

    b = wk_text_builder_new(NULL);
    wk_text_node n = wk_text_lit(b, "a", 1, 0);
    for (int i = 0; i < WK_TEXT_MAX_DEPTH + 5; i++) {
        n = wk_text_opt(b, n);
    }
    CHECK_STATUS(wk_text_compile(b, n, &p, &err), WK_ERR_DEPTH);
    wk_text_builder_free(b);
}

WK_TEST(test_text_builder_and_compile_survive_every_allocation_failure)
{
    for (size_t fail = 1; fail < 200; fail++) {
        wk_test_alloc ta;
        wk_test_alloc_init(&ta);
        ta.fail_at = fail;
        wk_text_builder *b = wk_text_builder_new(&ta.a);
        wk_text_program *p = NULL;
        if (b != NULL) {
            wk_text_byteset d = {{0}};
            wk_text_byteset_add_range(&d, '0', '9');
            wk_text_node root = WK_TEXT_SEQ(
                b, wk_text_capture(b, 0, "n", wk_text_rep(b, wk_text_class(b, "d", &d), 1, UNB), 0),
                wk_text_rule(b, "tail", wk_text_opt(b, wk_text_lit(b, "!", 1, 0))), wk_text_end(b));
            if (wk_text_compile(b, root, &p, NULL) == WK_OK) {
                size_t n;
                wk_text_cap c[2];
                CHECK_OK(wk_text_parse(p, "42!", 3, c, 2, &n, NULL));
            }
            wk_text_builder_free(b);
            wk_text_program_free(p);
        }
        CHECK_EQ(ta.live_bytes, 0);
    }
}

WK_TEST(test_text_print_writes_canonical_text_from_captures)
{
    wk_text_program *p = kv_program(NULL);
    wk_text_cap caps[] = {{1, "AbC", 3}, {2, "7", 1}, {1, "x", 1}, {2, "0", 1}};
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    CHECK_OK(wk_text_print(p, caps, 4, &out, NULL));
    CHECK_MEM(out.data, out.len, "abc=7,x=0", 9);
    wk_buf_free(&out);
    wk_text_program_free(p);
}

WK_TEST(test_text_print_rejects_captures_that_do_not_fit)
{
    wk_text_program *p = kv_program(NULL);
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    wk_buf_push(&out, '#');
    wk_error err = {0};
    wk_text_cap not_digits[] = {{1, "a", 1}, {2, "7x", 2}};
    CHECK_STATUS(wk_text_print(p, not_digits, 2, &out, &err), WK_ERR_ARG);
    CHECK_EQ(err.offset, 1);
    wk_text_cap wrong_slot[] = {{2, "1", 1}, {2, "7", 1}};
    CHECK_STATUS(wk_text_print(p, wrong_slot, 2, &out, &err), WK_ERR_ARG);
    wk_text_cap left_over[] = {{1, "a", 1}, {2, "7", 1}, {1, "b", 1}};
    CHECK_STATUS(wk_text_print(p, left_over, 3, &out, &err), WK_ERR_ARG);
    CHECK_EQ(err.offset, 3); /* the grammar wanted a fourth capture (a val after "b") */
    CHECK_EQ(out.len, 1);    /* nothing partial left behind */
    wk_buf_free(&out);
    uint8_t small[4];
    wk_buf_init_fixed(&out, small, sizeof small);
    wk_text_cap ok[] = {{1, "abc", 3}, {2, "12", 2}};
    CHECK_STATUS(wk_text_print(p, ok, 2, &out, &err), WK_ERR_LIMIT);
    CHECK_EQ(out.len, 0);
    wk_text_program_free(p);
}

/* parse(print(x)) == x for random capture lists that print, on a grammar of our own. */
WK_TEST(test_text_print_then_parse_round_trips_random_captures)
{
    wk_text_program *p = kv_program(NULL);
    srand(7);
    const char *letters = "abZq", *digits = "0917", *foreign = "=,;x";
    int printed = 0, rejected = 0;
    for (int iter = 0; iter < 20000; iter++) {
        wk_text_cap caps[6];
        char text[6][6];
        size_t n = 1 + (size_t)(rand() % 6);
        for (size_t i = 0; i < n; i++) {
            uint32_t slot = rand() % 10 == 0 ? (uint32_t)(rand() % 3) : (uint32_t)(1 + i % 2);
            size_t len = (size_t)(rand() % 5);
            for (size_t k = 0; k < len; k++) {
                const char *from = rand() % 20 == 0 ? foreign : slot == 1 ? letters : digits;
                text[i][k] = from[rand() % 4];
            }
            caps[i] = (wk_text_cap){slot, text[i], len};
        }
        wk_buf out;
        wk_buf_init(&out, NULL, 0);
        if (wk_text_print(p, caps, n, &out, NULL) == WK_OK) {
            printed++;
            wk_text_cap back[6];
            size_t m;
            CHECK_OK(wk_text_parse(p, out.data, out.len, back, 6, &m, NULL));
            CHECK_EQ(m, n);
            for (size_t i = 0; i < n; i++) {
                CHECK_EQ(back[i].slot, caps[i].slot);
                CHECK_EQ(back[i].len, caps[i].len);
                for (size_t k = 0; k < back[i].len; k++) {
                    char want = caps[i].ptr[k];
                    if (caps[i].slot == 1 && want >= 'A' && want <= 'Z') {
                        want = (char)(want + 32);
                    }
                    CHECK_EQ(back[i].ptr[k], want);
                }
            }
        } else {
            rejected++;
        }
        wk_buf_free(&out);
    }
    CHECK(printed > 1000 && rejected > 1000);
    wk_text_program_free(p);
}

WK_TEST(test_text_describe_prints_the_grammar_as_abnf)
{
    wk_text_program *p = kv_program(NULL);
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    CHECK_OK(wk_text_describe(p, "list", &out));
    const char *want = "list = pair *( \",\" pair ) <end of input>\n"
                       "pair = key \"=\" val\n"
                       "key = 1*8ALPHA  ; captured into slot 1, printed in lower case\n"
                       "val = 1*DIGIT  ; captured into slot 2\n"
                       "ALPHA = %x41-5A / %x61-7A\n"
                       "DIGIT = %x30-39\n";
    CHECK_MEM(out.data, out.len, want, strlen(want));
    wk_buf_free(&out);
    wk_text_program_free(p);
}
