/* Error reporting and stream helpers for the wirekit command. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int wk_cli_fail(const char *fmt, ...)
{
    va_list ap;
    fputs("wirekit: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return WK_EXIT_FAIL;
}

int wk_cli_fail_at(const char *what, const wk_error *err)
{
    return wk_cli_fail("%s: %s (at byte %zu)", what,
                       err->msg != NULL ? err->msg : wk_status_str(err->code), err->offset);
}

int wk_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "wirekit %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'wirekit %s --help'.\n", cmd);
    return WK_EXIT_USAGE;
}

int wk_cli_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

int wk_cli_read_all(const char *path, uint8_t **data, size_t *len)
{
    return wk_cli_read_max(path, SIZE_MAX, data, len);
}

int wk_cli_read_max(const char *path, size_t max, uint8_t **data, size_t *len)
{
    int use_stdin = path == NULL || strcmp(path, "-") == 0;
    FILE *f = use_stdin ? stdin : fopen(path, "rb");
    if (f == NULL) {
        wk_cli_fail("cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    bool too_big = false;
    while (buf != NULL) {
        n += fread(buf + n, 1, cap - n, f);
        if (n > max) {
            too_big = true;
            break;
        }
        if (n < cap) {
            break;
        }
        uint8_t *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
        if (nb == NULL) {
            free(buf);
        }
        buf = nb;
        cap *= 2;
    }
    int failed = buf == NULL || ferror(f);
    if (!use_stdin) {
        fclose(f);
    }
    if (too_big && !failed) {
        free(buf);
        wk_cli_fail("%s is larger than the limit of %zu bytes", use_stdin ? "standard input" : path,
                    max);
        return -1;
    }
    if (failed) {
        free(buf);
        wk_cli_fail("cannot read %s", use_stdin ? "standard input" : path);
        return -1;
    }
    *data = buf;
    *len = n;
    return 0;
}

FILE *wk_cli_open_out(const char *path)
{
    if (path == NULL || strcmp(path, "-") == 0) {
        return stdout;
    }
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        wk_cli_fail("cannot write %s: %s", path, strerror(errno));
    }
    return f;
}
