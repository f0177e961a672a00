// The public headers compile as C++ (-std=c++17 -Wall -Wextra -Werror) and link against the
// C library: every declaration sits inside extern "C" and the inline functions are valid C++.
#include <cstdio>
#include <cstring>

#include <wirekit/wirekit.h>
#if WK_TEST_HAVE_PQ
#include <wirekit/pq.h>
#endif
#include <wirekit/redis.h>

int main()
{
    wk_buf b;
    wk_buf_init(&b, nullptr, 0);
    wk_mp_writer w;
    wk_mp_writer_init(&w, &b);
    wk_mp_writer_str(&w, "wirekit", 7);
    if (wk_mp_writer_finish(&w, nullptr) != WK_OK || b.len != 8) {
        return 1;
    }
    wk_media_type mt = WK_MT_INIT;
    if (wk_mt_parse("text/html", 9, 0, &mt, nullptr) != WK_OK) {
        return 1;
    }
    std::printf("%s\n", wk_status_str(WK_OK));
    wk_buf_free(&b);
    return 0;
}
