/*
 * Replays a corpus through a libFuzzer harness without libFuzzer: every file under the
 * directories (or the files) given on the command line is passed to LLVMFuzzerTestOneInput.
 * Under ASan+UBSan this turns the committed corpus into a regression test. Prints
 * "N passed, 0 failed"; a crash or sanitizer report fails the test.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t replayed;

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s\n", path);
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) {
            break;
        }
        cap *= 2;
        buf = realloc(buf, cap);
        if (buf == NULL) {
            fclose(f);
            return -1;
        }
    }
    fclose(f);
    /* Hand the harness an exactly-sized copy so ASan sees reads past the end. */
    uint8_t *exact = malloc(n ? n : 1);
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    replayed++;
    return 0;
}

static int replay_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "missing %s\n", path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        return replay_file(path);
    }
    DIR *d = opendir(path);
    if (d == NULL) {
        return -1;
    }
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') {
            continue;
        }
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        if (replay_path(sub) != 0) {
            rc = -1;
        }
    }
    closedir(d);
    return rc;
}

int main(int argc, char **argv)
{
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        if (replay_path(argv[i]) != 0) {
            rc = 1;
        }
    }
    if (replayed == 0) {
        fprintf(stderr, "no corpus files replayed\n");
        rc = 1;
    }
    printf("%zu passed, %d failed\n", replayed, rc);
    return rc;
}
