/* wk_buf: growth, the hard cap, fixed buffers and allocation failure. */
#include "wirekit/buffer.h"
#include "wk_test.h"

WK_TEST(test_buffer_grows_and_keeps_contents)
{
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    for (int i = 0; i < 10000; i++) {
        CHECK_OK(wk_buf_push(&b, (uint8_t)i));
    }
    CHECK_EQ(b.len, 10000);
    for (int i = 0; i < 10000; i++) {
        CHECK_EQ(b.data[i], (uint8_t)i);
    }
    wk_buf_free(&b);
    CHECK(b.data == NULL);
}

WK_TEST(test_buffer_cap_rejects_append_and_leaves_contents)
{
    wk_buf b;
    wk_buf_init(&b, NULL, 100);
    CHECK_OK(wk_buf_append(&b, "0123456789", 10));
    uint8_t big[91] = {0};
    CHECK_STATUS(wk_buf_append(&b, big, sizeof big), WK_ERR_LIMIT);
    CHECK_EQ(b.len, 10);
    CHECK_OK(wk_buf_append(&b, big, 90));
    CHECK_EQ(b.len, 100);
    CHECK(b.cap <= 100);
    CHECK_STATUS(wk_buf_push(&b, 1), WK_ERR_LIMIT);
    wk_buf_free(&b);
}

WK_TEST(test_buffer_rejects_size_overflow)
{
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    CHECK_OK(wk_buf_push(&b, 1));
    CHECK_STATUS(wk_buf_reserve(&b, SIZE_MAX), WK_ERR_LIMIT);
    wk_buf_free(&b);
}

WK_TEST(test_buffer_fixed_fails_cleanly_when_full)
{
    uint8_t mem[4];
    wk_buf b;
    wk_buf_init_fixed(&b, mem, sizeof mem);
    CHECK_OK(wk_buf_append(&b, "abc", 3));
    CHECK_STATUS(wk_buf_append(&b, "de", 2), WK_ERR_LIMIT);
    CHECK_OK(wk_buf_push(&b, 'd'));
    CHECK_MEM(mem, 4, "abcd", 4);
    wk_buf_free(&b);
    CHECK_EQ(b.len, 0);
}

WK_TEST(test_buffer_reports_allocator_failure)
{
    wk_test_alloc t;
    wk_test_alloc_init(&t);
    t.fail_at = 1;
    wk_buf b;
    wk_buf_init(&b, &t.a, 0);
    CHECK_STATUS(wk_buf_push(&b, 1), WK_ERR_NOMEM);
    CHECK_OK(wk_buf_push(&b, 1));
    wk_buf_free(&b);
    CHECK_EQ(t.live_bytes, 0);
}

WK_TEST(test_buffer_detach_hands_over_memory)
{
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    CHECK_OK(wk_buf_append(&b, "xyz", 3));
    size_t len, cap;
    uint8_t *p = wk_buf_detach(&b, &len, &cap);
    CHECK(p != NULL);
    CHECK_EQ(len, 3);
    CHECK(cap >= 3);
    CHECK(b.data == NULL && b.len == 0);
    wk_free(NULL, p, cap);
}
