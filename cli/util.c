/* Error reporting and stream helpers for the wirekit command: whole-file reads, chunked
 * input with a progress line. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
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

/* ---- streaming input ---- */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int wk_cli_input_open(wk_cli_input *in, const char *path, int progress)
{
    memset(in, 0, sizeof *in);
    int use_stdin = path == NULL || strcmp(path, "-") == 0;
    in->name = use_stdin ? "standard input" : path;
    in->fd = use_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
    if (in->fd < 0) {
        wk_cli_fail("cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat sb;
    if (fstat(in->fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
        in->size = (uint64_t)sb.st_size;
    }
    if (progress == WK_CLI_PROGRESS_AUTO) {
        in->progress = in->size > ((uint64_t)64 << 20) && isatty(2);
    } else {
        in->progress = progress != 0;
    }
    in->buf = malloc(WK_CLI_CHUNK);
    if (in->buf == NULL) {
        if (!use_stdin) {
            close(in->fd);
        }
        wk_cli_fail("out of memory");
        return -1;
    }
    in->t0 = in->last = now_seconds();
    return 0;
}

static void show_progress(wk_cli_input *in, double t)
{
    double mb = (double)in->done / 1e6;
    double rate = t > in->t0 ? mb / (t - in->t0) : 0.0;
    if (in->size > 0) {
        double pct = 100.0 * (double)in->done / (double)in->size;
        double eta = rate > 0 ? ((double)(in->size - in->done) / 1e6) / rate : 0.0;
        fprintf(stderr, "\r%.1f MB of %.1f MB (%.0f%%), %.1f MB/s, ETA %d:%02d ", mb,
                (double)in->size / 1e6, pct, rate, (int)eta / 60, (int)eta % 60);
    } else {
        fprintf(stderr, "\r%.1f MB, %.1f MB/s ", mb, rate);
    }
    fflush(stderr);
    in->shown = true;
}

long wk_cli_input_read(wk_cli_input *in, const uint8_t **data)
{
    ssize_t n;
    do {
        n = read(in->fd, in->buf, WK_CLI_CHUNK);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        wk_cli_fail("cannot read %s: %s", in->name, strerror(errno));
        return -1;
    }
    in->done += (uint64_t)n;
    if (in->progress) {
        double t = now_seconds();
        if (t - in->last >= 0.25 || n == 0) { /* every quarter second, and at the end */
            in->last = t;
            show_progress(in, t);
        }
    }
    *data = in->buf;
    return (long)n;
}

void wk_cli_input_close(wk_cli_input *in)
{
    if (in->shown) {
        fputc('\n', stderr);
    }
    if (in->fd > 0) {
        close(in->fd);
    }
    free(in->buf);
    in->buf = NULL;
}

int wk_cli_fail_in(const char *name, uint64_t line, uint64_t col, const char *what,
                   const wk_error *err, size_t max_value)
{
    const char *msg = err->msg != NULL ? err->msg : wk_status_str(err->code);
    if (line != 0) {
        wk_cli_fail("%s:%llu:%llu: %s: %s (at byte %zu)", name, (unsigned long long)line,
                    (unsigned long long)col, what, msg, err->offset);
    } else {
        wk_cli_fail("%s: %s: %s (at byte %zu)", name, what, msg, err->offset);
    }
    if (err->code == WK_ERR_LIMIT && max_value != 0) {
        wk_cli_fail("a value may hold at most %zu bytes here: --max-value=SIZE raises the limit",
                    max_value);
    }
    return WK_EXIT_FAIL;
}

size_t wk_cli_parse_size(const char *s)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *s == '-') {
        return 0;
    }
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k') {
        shift = 10;
    } else if (*end == 'M' || *end == 'm') {
        shift = 20;
    } else if (*end == 'G' || *end == 'g') {
        shift = 30;
    }
    if (shift != 0) {
        end++;
    }
    if (*end != '\0' || v > (SIZE_MAX >> shift) || v == 0) {
        return 0;
    }
    return (size_t)(v << shift);
}

int wk_cli_progress_to_stdout(int progress)
{
    return progress == WK_CLI_PROGRESS_AUTO && isatty(1) ? 0 : progress;
}
