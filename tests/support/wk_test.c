/* The harness's main(): runs registered tests and prints one summary line ctest can read. */
#include <stdarg.h>
#include <stdlib.h>

#include "wk_test.h"

#define MAX_TESTS 4096

static struct {
    const char *name;
    wk_test_fn fn;
} tests[MAX_TESTS];
static size_t test_count;
static bool current_failed;
static bool current_skipped;

void wk__test_register(const char *name, wk_test_fn fn)
{
    if (test_count < MAX_TESTS) {
        tests[test_count].name = name;
        tests[test_count].fn = fn;
        test_count++;
    }
}

void wk__test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    current_failed = true;
    fprintf(stdout, "    %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
}

void wk__test_skip(const char *why)
{
    current_skipped = true;
    fprintf(stdout, "    skipped: %s\n", why);
}

bool wk__test_failed(void)
{
    return current_failed;
}

int main(int argc, char **argv)
{
    const char *filter = argc > 1 ? argv[1] : NULL;
    size_t passed = 0, failed = 0, skipped = 0;
    for (size_t i = 0; i < test_count; i++) {
        if (filter != NULL && strstr(tests[i].name, filter) == NULL) {
            continue;
        }
        current_failed = false;
        current_skipped = false;
        tests[i].fn();
        if (current_failed) {
            failed++;
            printf("FAIL %s\n", tests[i].name);
        } else if (current_skipped) {
            skipped++;
            printf("skip %s\n", tests[i].name);
        } else {
            passed++;
            printf("ok   %s\n", tests[i].name);
        }
        fflush(stdout);
    }
    printf("%zu passed, %zu failed, %zu skipped\n", passed, failed, skipped);
    if (failed != 0) {
        return 1;
    }
    return passed == 0 && skipped != 0 ? 77 : 0;
}
