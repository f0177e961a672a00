/* Error reporting and stream helpers for the wirekit command: whole-file reads, chunked
 * input with a progress line, and named output files replaced whole through a temporary
 * file. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
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

/* The library's messages name its settings by their C names; the command says which option
 * sets them (or what they are), so that no identifier reaches a user. */
const char *wk_cli_words(const char *msg, char *buf, size_t cap)
{
    static const char *const words[][2] = {
        {" (max_bytes / shards)", " (its share of the memory tier)"},
        {"max_reply_bytes", "--max-bytes"},
        {"max_entry_bytes", "--max-bytes"},
        {"max_reply_elements", "the largest reply"},
        {" (connect_timeout_ms)", " (--timeout)"},
        {" (max_text)", " (--max-value-bytes)"},
        /* pg copy in sends every value as its column type's text input */
        {" has no binary encoder from a C value of kind text",
         ": wirekit cannot write this type from a JSON or MessagePack value"},
    };
    if (msg == NULL) {
        return msg;
    }
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        const char *at = strstr(msg, words[i][0]);
        if (at != NULL) {
            size_t skip = strlen(words[i][0]);
            int n = snprintf(buf, cap, "%.*s%s%s", (int)(at - msg), msg, words[i][1],
                             at + skip);
            return n > 0 && (size_t)n < cap ? buf : msg;
        }
    }
    return msg;
}

int wk_cli_fail_at(const char *what, const wk_error *err)
{
    char buf[512];
    const char *msg = err->msg != NULL ? wk_cli_words(err->msg, buf, sizeof buf)
                                       : wk_status_str(err->code);
    return wk_cli_fail("%s: %s (at byte %zu)", what, msg, err->offset);
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

/* ---- a named output file, replaced whole or not at all ---- */

/* The temporary file of the output being written, removed by a fatal signal. One output is
 * open at a time; the handler uses only async-signal-safe calls. */
static char pending_tmp[4096];
static volatile sig_atomic_t pending_set;

static void on_fatal_signal(int sig)
{
    if (pending_set) {
        unlink(pending_tmp);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void watch_tmp(const char *tmp)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    size_t n = strlen(tmp);
    if (n >= sizeof pending_tmp) {
        return; /* not removed on a signal; the target is still safe */
    }
    memcpy(pending_tmp, tmp, n + 1);
    pending_set = 1;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sigemptyset(&sa.sa_mask);
        /* a signal ignored by the caller (nohup) stays ignored */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN) {
            sigaction(sigs[i], &sa, NULL);
        }
    }
}

static bool same_file(int fd, const struct stat *sb)
{
    struct stat in;
    return fd >= 0 && fstat(fd, &in) == 0 && in.st_dev == sb->st_dev && in.st_ino == sb->st_ino;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d != NULL) {
        memcpy(d, s, n);
    }
    return d;
}

int wk_cli_output_open(wk_cli_output *o, const char *path, int in_fd)
{
    memset(o, 0, sizeof *o);
    struct stat sb;
    if (path == NULL || strcmp(path, "-") == 0) {
        o->name = "standard output";
        o->fd = 1;
        o->f = stdout;
        /* `wirekit convert f.json >> f.json` would read its own output without end */
        if (fstat(1, &sb) == 0 && S_ISREG(sb.st_mode) && same_file(in_fd, &sb)) {
            wk_cli_fail("standard output is the input file: the output would overwrite the "
                        "input it is read from");
            return -1;
        }
        return 0;
    }
    o->name = path;
    bool exists = stat(path, &sb) == 0;
    if (exists && same_file(in_fd, &sb)) {
        wk_cli_fail("%s is the input file: writing it would destroy the input (write to "
                    "another file, then rename it)",
                    path);
        return -1;
    }
    if (exists && !S_ISREG(sb.st_mode)) {
        /* a device or a FIFO (/dev/null, a pipe): written in place, nothing to replace */
        o->fd = open(path, O_WRONLY | O_CLOEXEC);
        o->f = o->fd >= 0 ? fdopen(o->fd, "wb") : NULL;
        if (o->f == NULL) {
            wk_cli_fail("cannot write %s: %s", path, strerror(errno));
            if (o->fd >= 0) {
                close(o->fd);
            }
            return -1;
        }
        return 0;
    }
    /* rename replaces a symbolic link itself: write beside the file it names instead */
    o->target = exists ? realpath(path, NULL) : dup_str(path);
    if (o->target == NULL) {
        wk_cli_fail("cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    const char *slash = strrchr(o->target, '/');
    size_t dirlen = slash != NULL ? (size_t)(slash - o->target) + 1 : 0;
    const char *base = o->target + dirlen;
    size_t cap = dirlen + strlen(base) + 32;
    o->tmp = malloc(cap);
    if (o->tmp == NULL) {
        free(o->target);
        o->target = NULL;
        wk_cli_fail("out of memory");
        return -1;
    }
    snprintf(o->tmp, cap, "%.*s.%s.wirekit-XXXXXX", (int)dirlen, o->target, base);
    o->fd = mkstemp(o->tmp);
    if (o->fd >= 0) {
        (void)fcntl(o->fd, F_SETFD, FD_CLOEXEC);
    }
    if (o->fd < 0) {
        wk_cli_fail("cannot write %s: cannot create a temporary file beside it: %s", path,
                    strerror(errno));
        free(o->tmp);
        free(o->target);
        o->tmp = o->target = NULL;
        return -1;
    }
    watch_tmp(o->tmp);
    mode_t mode;
    if (exists) {
        mode = sb.st_mode & 07777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    o->f = fdopen(o->fd, "wb");
    if (fchmod(o->fd, mode) != 0 || o->f == NULL) {
        wk_cli_fail("cannot write %s: %s", path, strerror(errno));
        if (o->f == NULL) {
            close(o->fd);
        }
        wk_cli_output_abort(o);
        return -1;
    }
    return 0;
}

static void forget_tmp(wk_cli_output *o)
{
    pending_set = 0;
    free(o->tmp);
    free(o->target);
    o->tmp = o->target = NULL;
    o->f = NULL;
}

void wk_cli_output_abort(wk_cli_output *o)
{
    if (o->f == stdout) {
        fflush(stdout);
        return;
    }
    if (o->f != NULL) {
        fclose(o->f);
    }
    if (o->tmp != NULL) {
        unlink(o->tmp);
    }
    forget_tmp(o);
}

int wk_cli_output_commit(wk_cli_output *o)
{
    if (o->f == stdout) {
        return fflush(stdout) == 0 && !ferror(stdout)
                   ? 0
                   : (wk_cli_fail("cannot write standard output: %s", strerror(errno)), -1);
    }
    if (o->f == NULL) {
        return 0;
    }
    errno = 0;
    bool ok = fflush(o->f) == 0 && !ferror(o->f);
    /* the data reaches the disk before the name does: a crash leaves the old file or the
     * new one, never an empty new one */
    ok = ok && (o->tmp == NULL || fsync(o->fd) == 0);
    int e = errno;
    ok = fclose(o->f) == 0 && ok;
    o->f = NULL;
    if (ok && o->tmp != NULL && rename(o->tmp, o->target) != 0) {
        ok = false;
        e = errno;
    }
    if (!ok) {
        wk_cli_fail("cannot write %s: %s", o->name, strerror(e != 0 ? e : errno));
        wk_cli_output_abort(o);
        return -1;
    }
    if (o->tmp != NULL) {
        /* the rename itself made durable */
        char *slash = strrchr(o->target, '/');
        if (slash != NULL) {
            *slash = '\0';
        }
        int dfd = open(slash != NULL ? (slash == o->target ? "/" : o->target) : ".",
                       O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            (void)fsync(dfd);
            close(dfd);
        }
    }
    forget_tmp(o);
    return 0;
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

bool wk_cli_input_feed(wk_cli_input *in, wk_unpacker *u)
{
    const uint8_t *d;
    long k = wk_cli_input_read(in, &d);
    if (k < 0) {
        return false;
    }
    if (k == 0) {
        wk_unpacker_finish(u);
    } else {
        wk_unpacker_feed(u, d, (size_t)k);
    }
    return true;
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
