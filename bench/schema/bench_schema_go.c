/*
 * The schema suite's Go peers: seed 004's own benchmark (bench/schema/go/seedbench.go:
 * vmihailenco/msgpack v5, encoding/json, encoding/gob on the seed's User record) run as a
 * child process in the same run as wirekit's rows, its figures recorded beside them. Go
 * cannot be interleaved with the C loops, so it runs after them, one loop of the suite's
 * iteration count per operation, as the seed did. Its sizes are checked (72 and 101 bytes,
 * the JSON byte for byte against wirekit's; the MessagePack keys are Go's field names, as
 * msgpack.Marshal writes them without a msgpack tag, so only the size is compared).
 */
#include <string.h>

#include "bench.h"
#include "bench_schema_go.h"

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* True when hex (NUL-terminated) spells exactly the n bytes at p. */
static bool hex_equals(const char *hex, const uint8_t *p, size_t n)
{
    if (strlen(hex) != 2 * n) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (hexval(hex[2 * i]) * 16 + hexval(hex[2 * i + 1]) != p[i]) {
            return false;
        }
    }
    return true;
}

void wk_bench_schema_go_rows(wk_bench *b, const uint8_t *json, size_t json_len, size_t mp_len,
                             uint64_t iters)
{
#ifndef WK_BENCH_SEED_GO
    (void)json;
    (void)json_len;
    (void)mp_len;
    (void)iters;
    wk_bench_say(b, "go peers: skipped, this build found no Go toolchain with "
                    "vmihailenco/msgpack v5 (scripts/deps.sh installs golang-go and it)");
#else
    wk_bench_peer(b, "go msgpack/v5", "Go (Debian golang-go), vmihailenco/msgpack v5 (Debian), "
                                      "msgpack.Marshal/Unmarshal; own process, one loop");
    wk_bench_peer(b, "go encoding/json",
                  "Go (Debian golang-go), encoding/json Marshal/Unmarshal; own process, one loop");
    wk_bench_peer(b, "go encoding/gob", "Go (Debian golang-go), encoding/gob, fresh buffer and "
                                        "encoder per call; own process, one loop");
    char n[32];
    snprintf(n, sizeof n, "%llu", (unsigned long long)iters);
    char *argv[] = {WK_BENCH_SEED_GO, n, "1", NULL};
    pid_t pid;
    FILE *in = wk_bench_spawn(argv, &pid);
    if (in == NULL) {
        wk_bench_fail(b, "go peers: could not start %s", WK_BENCH_SEED_GO);
        return;
    }
    static const struct {
        const char *format, *op, *case_name, *impl;
    } rows[] = {
        {"msgpack", "encode", "seed encode msgpack", "go msgpack/v5"},
        {"msgpack", "decode", "seed decode msgpack", "go msgpack/v5"},
        {"json", "encode", "seed encode json", "go encoding/json"},
        {"json", "decode", "seed decode json", "go encoding/json"},
        {"gob", "encode", "seed encode gob", "go encoding/gob"},
        {"gob", "decode", "seed decode gob", "go encoding/gob"},
    };
    size_t sizes[3] = {0, 0, 0}; /* msgpack, json, gob */
    size_t got = 0;
    char line[1024];
    while (fgets(line, sizeof line, in) != NULL) {
        char format[16], op[16], hex[600];
        double ns;
        size_t size;
        if (sscanf(line, "ns %15s %15s %lf", format, op, &ns) == 3) {
            for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
                if (strcmp(rows[i].format, format) == 0 && strcmp(rows[i].op, op) == 0) {
                    size_t k = i / 2;
                    wk_bench_record(b, rows[i].case_name, rows[i].impl, ns, sizes[k], -1,
                                    k == 2 ? "the seed's third format (no wirekit gob codec)"
                                           : "the seed's own Go program");
                    got++;
                }
            }
        } else if (sscanf(line, "size %15s %zu", format, &size) == 2) {
            size_t k = strcmp(format, "msgpack") == 0 ? 0 : strcmp(format, "json") == 0 ? 1 : 2;
            sizes[k] = size;
        } else if (sscanf(line, "hex json %599s", hex) == 1 && !hex_equals(hex, json, json_len)) {
            wk_bench_fail(b, "go peers: encoding/json's bytes differ from wirekit's");
        }
    }
    int status = wk_bench_spawn_wait(in, pid);
    if (status != 0 || got != sizeof rows / sizeof rows[0]) {
        wk_bench_fail(b, "go peers: %s failed (exit %d, %zu figures)", WK_BENCH_SEED_GO, status,
                      got);
        return;
    }
    if (sizes[0] != mp_len || sizes[1] != json_len) {
        wk_bench_fail(b, "go peers: sizes %zu and %zu bytes, wirekit's %zu and %zu", sizes[0],
                      sizes[1], mp_len, json_len);
    }
    wk_bench_say(b, "go peers: MessagePack %zu bytes, JSON %zu bytes (equal to wirekit's), gob "
                    "%zu bytes",
                 sizes[0], sizes[1], sizes[2]);
#endif
}
