/*
 * Tests of what wirekit-bench prints (support/report.c): unit scaling, the 100-column table,
 * ratios only on like-for-like peer rows, the --json line schema (read back with wirekit's
 * own JSON parser) and the SVG charts (parsed with expat: well-formed XML, one bar per
 * measurement). The first half drives the report functions with rows made up here; the second
 * runs the real program (argv[1]) on the mediatype suite with --quick and checks its --json
 * lines, its chart and its piped table (no progress escapes when stderr is not a terminal).
 *
 * usage: bench_report_test WIREKIT_BENCH WORK_DIR [FLAGS]
 * FLAGS: the build type's C flags of the tree (CMAKE_C_FLAGS_<TYPE>), which the header's
 * "flags:" line must show (not the Release flags whatever the tree).
 */
#include <expat.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_internal.h"
#include "wirekit/json.h"

static int failures;

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                               \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fputc('\n', stderr);                                                               \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

static void test_units_scale_per_value(void)
{
    static const struct {
        double ns;
        const char *want;
    } t[] = {{0.6, "0.60 ns"},       {19.3, "19.3 ns"},        {286.0, "286 ns"},
             {999.4, "999 ns"},      {999.6, "1.00 \xc2\xb5s"}, {286299.9, "286 \xc2\xb5s"},
             {2320555.0, "2.32 ms"}, {15207072.5, "15.2 ms"},  {75463187000.0, "75.5 s"}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char out[32];
        wk_bench_fmt_time(out, sizeof out, t[i].ns);
        CHECK(strcmp(out, t[i].want) == 0, "time %.1f ns -> '%s', want '%s'", t[i].ns, out,
              t[i].want);
    }
    char out[32];
    wk_bench_fmt_rate(out, sizeof out, 631514, 286299.9); /* 2205.7 MB/s */
    CHECK(strcmp(out, "2.21 GB/s") == 0, "rate -> '%s'", out);
    wk_bench_fmt_rate(out, sizeof out, 72, 99.6); /* 722.9 MB/s */
    CHECK(strcmp(out, "723 MB/s") == 0, "rate -> '%s'", out);
    wk_bench_fmt_rate(out, sizeof out, 0, 99.6);
    CHECK(strcmp(out, "-") == 0, "no bytes -> '%s'", out);
    wk_bench_fmt_count(out, sizeof out, 5520000);
    CHECK(strcmp(out, "5.52 M") == 0, "count -> '%s'", out);
    wk_bench_fmt_count(out, sizeof out, 34122);
    CHECK(strcmp(out, "34.1 k") == 0, "count -> '%s'", out);
    wk_bench_fmt_count(out, sizeof out, 24);
    CHECK(strcmp(out, "24") == 0, "count -> '%s'", out);
    wk_bench_fmt_count(out, sizeof out, 2.03);
    CHECK(strcmp(out, "2.03") == 0, "count -> '%s'", out);
    wk_bench_fmt_count(out, sizeof out, -1);
    CHECK(strcmp(out, "-") == 0, "not measured -> '%s'", out);
    CHECK(wk_bench_text_width("286 \xc2\xb5s") == 6, "a micro sign is one column");
}

/* Rows as a suite would record them: a baseline, peers, wirekit variants, an ablation
 * flagged informative, a case without peers, a very long note and a peer build. */
static const char *const LONG_NOTE =
    "a note far longer than any column: it must wrap onto its own footnote lines and never push "
    "the table past one hundred columns, whatever the terminal";

static size_t sample_rows(wk_bench_row *r)
{
    size_t n = 0;
    r[n++] = (wk_bench_row){"json", "parse twitter.json", "wirekit", 286299.9, 280000, 300000, 0,
                            7, 631514, 0, 100, "arena reset per op", NULL, 0};
    r[n++] = (wk_bench_row){"json", "parse twitter.json", "cJSON", 1548919.2, 1500000, 1600000, 0,
                            7, 631514, 34122, 20, LONG_NOTE, "cJSON 1.7.15: Debian shared, -O2",
                            0};
    r[n++] = (wk_bench_row){"json", "parse twitter.json", "wirekit-events", 402000, 400000,
                            410000, 0, 7, 631514, 0, 10, NULL, NULL, 0};
    r[n++] = (wk_bench_row){"json", "parse twitter.json", "simdjson", 138951.9, 138000, 140000, 0,
                            7, 631514, 0, 300, NULL, "simdjson 3.0.1: Debian shared, -O2", 0};
    r[n++] = (wk_bench_row){"mediatype", "render application/json", "wirekit", 9.4, 9.3, 9.6, 0, 7,
                            0, 0, 1000000, "wk_mt_serialize into a buffer", NULL, 0};
    r[n++] = (wk_bench_row){"mediatype", "render application/json", "wirekit (cached)", 0.6, 0.6,
                            0.7, 0, 7, 0, 0, 1000000, "cached", NULL, WK_BENCH_INFO};
    r[n++] = (wk_bench_row){"mediatype", "render application/json", "GMime 3", 73.2, 72, 75, 0, 7,
                            0, 2, 1000000, NULL, NULL, 0};
    r[n++] = (wk_bench_row){"mediatype", "render application/json", "linear scan", 50, 49, 52, 0,
                            7, 0, 0, 1000000, "ablation", NULL, WK_BENCH_INFO};
    r[n++] = (wk_bench_row){"mediatype", "serialize seed value", "wirekit", 18.8, 18, 19, 0, 7, 0,
                            0, 1000000, NULL, NULL, 0};
    r[n++] = (wk_bench_row){"mediatype", "parse seed value", "whatwg-mimetype (node)", 775, 775,
                            775, 0, 0, 31, -1, 0, NULL, NULL, 0};
    return n;
}

static char *capture_table(const wk_bench_row *rows, size_t n, size_t *len)
{
    char *text = NULL;
    FILE *m = open_memstream(&text, len);
    wk_bench_write_table(m, rows, n);
    fclose(m);
    return text;
}

/* The line of the table that shows `impl` in a row (4 spaces, the name, a space). */
static const char *row_line(const char *text, const char *impl, char *line, size_t cap)
{
    const char *p = text;
    while (*p) {
        size_t len = strcspn(p, "\n");
        if (len > 4 && strncmp(p, "    ", 4) == 0 && strncmp(p + 4, impl, strlen(impl)) == 0 &&
            p[4 + strlen(impl)] == ' ') {
            snprintf(line, cap, "%.*s", (int)len, p);
            return line;
        }
        p += len + (p[len] == '\n');
    }
    return NULL;
}

static bool has_ratio(const char *line)
{
    /* A ratio is a number directly followed by 'x' and a space or the end. */
    for (const char *p = strchr(line, 'x'); p != NULL; p = strchr(p + 1, 'x')) {
        if (p > line && p[-1] >= '0' && p[-1] <= '9' && (p[1] == ' ' || p[1] == '\0')) {
            return true;
        }
    }
    return false;
}

static void check_width(const char *text, const char *what)
{
    const char *p = text;
    size_t lineno = 1;
    while (*p) {
        size_t len = strcspn(p, "\n");
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(len < 511 ? len : 511), p);
        CHECK(wk_bench_text_width(line) <= 100, "%s line %zu is %zu columns: %s", what, lineno,
              wk_bench_text_width(line), line);
        CHECK(strchr(line, '\033') == NULL, "%s line %zu has an escape sequence", what, lineno);
        p += len + (p[len] == '\n');
        lineno++;
    }
}

static void test_table_ratios_only_between_implementations(void)
{
    wk_bench_row rows[16];
    size_t n = sample_rows(rows);
    size_t len = 0;
    char *text = capture_table(rows, 4, &len); /* the json suite */
    char line[256];
    check_width(text, "table");
    CHECK(row_line(text, "cJSON", line, sizeof line) != NULL && strstr(line, "5.41x") != NULL,
          "cJSON row has its ratio 1548919.2 / 286299.9: %s", line);
    CHECK(strstr(line, "1.55 ms") != NULL && strstr(line, "34.1 k") != NULL &&
              strstr(line, "408 MB/s") != NULL,
          "cJSON row has scaled figures: %s", line);
    CHECK(row_line(text, "simdjson", line, sizeof line) != NULL && strstr(line, "0.49x"),
          "simdjson row has its ratio: %s", line);
    CHECK(row_line(text, "wirekit", line, sizeof line) != NULL && !has_ratio(line),
          "the baseline has no ratio: %s", line);
    CHECK(row_line(text, "wirekit-events", line, sizeof line) != NULL && !has_ratio(line),
          "a wirekit variant has no ratio: %s", line);
    const char *info = strstr(text, "informative");
    const char *variant = strstr(text, "    wirekit-events");
    const char *simd = strstr(text, "    simdjson");
    CHECK(info != NULL && variant != NULL && simd != NULL && simd < info && info < variant,
          "the variant is listed apart, after every like-for-like row");
    CHECK(strstr(text, "[1] arena reset per op") != NULL, "notes are footnotes");
    CHECK(strstr(text, "cJSON 1.7.15: Debian shared, -O2") != NULL, "peer builds are footnotes");
    free(text);

    text = capture_table(rows + 4, n - 4, &len); /* the mediatype suite */
    check_width(text, "table");
    CHECK(row_line(text, "wirekit (cached)", line, sizeof line) != NULL && !has_ratio(line),
          "a cached wirekit path has no ratio: %s", line);
    CHECK(row_line(text, "linear scan", line, sizeof line) != NULL && !has_ratio(line),
          "a row flagged informative has no ratio: %s", line);
    CHECK(row_line(text, "GMime 3", line, sizeof line) != NULL && strstr(line, "7.79x"),
          "GMime is compared with the uncached baseline (73.2 / 9.4): %s", line);
    CHECK(row_line(text, "whatwg-mimetype (node)", line, sizeof line) != NULL &&
              !has_ratio(line),
          "a peer in a case without a wirekit row has no ratio: %s", line);
    free(text);

    char *sum = NULL;
    FILE *m = open_memstream(&sum, &len);
    wk_bench_write_summary(m, rows, n);
    fclose(m);
    check_width(sum, "summary");
    CHECK(strstr(sum, "parse twitter.json 0.49x simdjson") != NULL,
          "the summary names the best peer: %s", sum);
    CHECK(strstr(sum, "render application/json 7.79x GMime 3") != NULL,
          "the summary ignores informative rows: %s", sum);
    free(sum);
}

static const wk_value *member(const wk_value *obj, const char *key)
{
    for (uint32_t i = 0; obj->type == WK_VAL_MAP && i < obj->len; i++) {
        const wk_value *k = &obj->u.pairs[i].key;
        if (k->type == WK_VAL_STR && k->len == strlen(key) && memcmp(k->u.str, key, k->len) == 0) {
            return &obj->u.pairs[i].val;
        }
    }
    return NULL;
}

static bool is_number(const wk_value *v)
{
    return v != NULL && (v->type == WK_VAL_INT || v->type == WK_VAL_UINT ||
                         v->type == WK_VAL_FLOAT || v->type == WK_VAL_RAWNUM);
}

/* Checks one --json line; returns true if it is a measurement with the schema's fields. */
static bool check_json_line(const char *line, size_t len)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    wk_value *v = NULL;
    bool ok = wk_json_decode_value(line, len, NULL, &a, &v, NULL, NULL) == WK_OK;
    CHECK(ok, "a --json line does not parse: %.*s", (int)len, line);
    if (ok) {
        static const char *const strs[] = {"suite", "case", "impl", "kind"};
        for (size_t i = 0; i < 4; i++) {
            const wk_value *f = member(v, strs[i]);
            CHECK(f != NULL && f->type == WK_VAL_STR, "field %s missing: %.*s", strs[i],
                  (int)len, line);
            ok = ok && f != NULL;
        }
        static const char *const nums[] = {"ns_per_op", "ns_min", "ns_max", "repetitions",
                                           "allocs_per_op", "bytes_per_op", "iterations"};
        for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
            CHECK(is_number(member(v, nums[i])), "field %s missing: %.*s", nums[i], (int)len,
                  line);
        }
    }
    wk_arena_free(&a);
    return ok;
}

static size_t check_json_lines(const char *text)
{
    size_t count = 0;
    const char *p = text;
    while (*p) {
        size_t len = strcspn(p, "\n");
        if (len > 0) {
            count += check_json_line(p, len);
        }
        p += len + (p[len] == '\n');
    }
    return count;
}

static void test_json_lines_keep_the_schema(void)
{
    wk_bench_row rows[16];
    size_t n = sample_rows(rows);
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    for (size_t i = 0; i < n; i++) {
        wk_bench_write_json(m, &rows[i]);
    }
    fclose(m);
    CHECK(check_json_lines(text) == n, "every row gives one JSON line");
    CHECK(strstr(text, "\"kind\":\"info\"") != NULL && strstr(text, "\"kind\":\"peer\"") != NULL,
          "rows carry their kind");
    free(text);
}

typedef struct svg_count {
    int depth, max_depth;
    size_t bars, p99s, svg_roots;
    bool root_is_svg;
} svg_count;

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **attrs)
{
    svg_count *c = ud;
    if (c->depth == 0) {
        c->root_is_svg = strcmp(name, "http://www.w3.org/2000/svg|svg") == 0;
        c->svg_roots++;
    }
    c->depth++;
    c->max_depth = c->depth > c->max_depth ? c->depth : c->max_depth;
    if (strcmp(name, "http://www.w3.org/2000/svg|rect") == 0) {
        for (size_t i = 0; attrs[i] != NULL; i += 2) {
            c->bars += strcmp(attrs[i], "class") == 0 && strcmp(attrs[i + 1], "bar") == 0;
            c->p99s += strcmp(attrs[i], "class") == 0 && strcmp(attrs[i + 1], "p99") == 0;
        }
    }
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    (void)name;
    ((svg_count *)ud)->depth--;
}

/* Parses an SVG document; returns its number of bars (its p99 bars in *p99s when not NULL),
 * or -1 if it is not well-formed. */
static long parse_svg_p99(const char *text, size_t len, size_t *p99s)
{
    svg_count c = {0, 0, 0, 0, 0, false};
    XML_Parser p = XML_ParserCreateNS("UTF-8", '|');
    XML_SetUserData(p, &c);
    XML_SetElementHandler(p, on_start, on_end);
    bool ok = XML_Parse(p, text, (int)len, 1) == XML_STATUS_OK;
    if (!ok) {
        fprintf(stderr, "SVG parse error at line %lu: %s\n",
                (unsigned long)XML_GetCurrentLineNumber(p), XML_ErrorString(XML_GetErrorCode(p)));
    }
    XML_ParserFree(p);
    if (p99s != NULL) {
        *p99s = c.p99s;
    }
    return ok && c.root_is_svg && c.svg_roots == 1 ? (long)c.bars : -1;
}

static long parse_svg(const char *text, size_t len)
{
    return parse_svg_p99(text, len, NULL);
}

static void test_svg_is_well_formed_with_a_bar_per_row(void)
{
    wk_bench_row rows[16];
    size_t n = sample_rows(rows);
    rows[1].note = "a note with <markup> & \"quotes\" that must be escaped";
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    CHECK(wk_bench_write_svg(m, rows, n, "wirekit bench <test>", "machine line\ncompiler & flags") ==
              0,
          "SVG written");
    fclose(m);
    long bars = parse_svg(text, len);
    CHECK(bars == (long)n, "SVG has %ld bars for %zu rows", bars, n);
    CHECK(strstr(text, "log scale") != NULL, "a case spanning 20x or more uses a log scale");
    CHECK(strstr(text, "linear scale") != NULL, "a narrow case uses a linear scale");
    CHECK(strstr(text, "compiler &amp; flags") != NULL, "the caption is in the chart");
    free(text);
}

/* A service suite's rows (wk_bench_record_requests): each case's chart shows requests per
 * second and p99 for both impls, not time per request alone. */
static void test_svg_of_requests_shows_throughput_and_p99(void)
{
    wk_bench_row rows[4];
    memset(rows, 0, sizeof rows);
    const char *cases[] = {"hot json", "cold json"};
    for (size_t i = 0; i < 4; i++) {
        wk_bench_row *r = &rows[i];
        r->suite = "service";
        r->case_name = cases[i / 2];
        r->impl = i % 2 == 0 ? "wirekit" : "go";
        r->ns = i % 2 == 0 ? 1e9 / 57300.0 : 1e9 / 31558.0; /* 57.3 k and 31.6 k req/s */
        r->ns_min = r->ns * 0.9;
        r->ns_max = r->ns * 1.1;
        r->reps = 3;
        r->allocs = -1;
        r->p50_ns = 1e6;
        r->p99_ns = i % 2 == 0 ? 3.70e6 : 6.14e6;
    }
    char *text = NULL;
    size_t len = 0, p99s = 0;
    FILE *m = open_memstream(&text, &len);
    CHECK(wk_bench_write_svg(m, rows, 4, "service", "caption") == 0, "SVG written");
    fclose(m);
    long bars = parse_svg_p99(text, len, &p99s);
    CHECK(bars == 4 && p99s == 4, "one throughput and one p99 bar per row: %ld, %zu", bars, p99s);
    CHECK(strstr(text, "57.3 k req/s") != NULL && strstr(text, "31.6 k req/s  (wirekit 1.82x)"),
          "throughput labels, the peer's with wirekit's ratio");
    CHECK(strstr(text, "p99 3.70 ms") != NULL && strstr(text, "p99 6.14 ms") != NULL,
          "p99 labels");
    free(text);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    char *buf = NULL;
    FILE *m = open_memstream(&buf, len);
    char chunk[4096];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) {
        fwrite(chunk, 1, k, m);
    }
    fclose(m);
    fclose(f);
    return buf;
}

static void test_real_run(const char *bench, const char *dir, const char *flags)
{
    mkdir(dir, 0777);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "'%s' --quick --suite mediatype --json --chart '%s/charts' > '%s/run.jsonl' "
             "2> '%s/run.err'",
             bench, dir, dir, dir);
    CHECK(system(cmd) == 0, "%s failed (see %s/run.err)", cmd, dir);
    size_t jlen = 0, slen = 0;
    char path[2048];
    snprintf(path, sizeof path, "%s/run.jsonl", dir);
    char *json = slurp(path, &jlen);
    snprintf(path, sizeof path, "%s/charts/mediatype.svg", dir);
    char *svg = slurp(path, &slen);
    CHECK(json != NULL && svg != NULL, "the run wrote its JSON lines and its chart");
    if (json != NULL && svg != NULL) {
        size_t rows = check_json_lines(json);
        CHECK(rows >= 5, "the mediatype suite measured %zu rows", rows);
        long bars = parse_svg(svg, slen);
        CHECK(bars == (long)rows, "the chart has %ld bars for %zu measurements", bars, rows);
    }
    free(json);
    free(svg);

    /* The table through a pipe: no progress escapes, 100 columns at most. */
    snprintf(cmd, sizeof cmd, "'%s' --quick --suite mediatype > '%s/run.txt' 2> '%s/run2.err'",
             bench, dir, dir);
    CHECK(system(cmd) == 0, "%s failed", cmd);
    snprintf(path, sizeof path, "%s/run.txt", dir);
    char *table = slurp(path, &jlen);
    snprintf(path, sizeof path, "%s/run2.err", dir);
    char *err = slurp(path, &slen);
    CHECK(table != NULL && strstr(table, "Summary:") != NULL, "the table run ends with a summary");
    if (table != NULL) {
        check_width(table, "real table");
        char shown[256] = "";
        const char *line = strstr(table, "flags:");
        if (line != NULL) {
            snprintf(shown, sizeof shown, "%.*s", (int)strcspn(line, "|\n"), line);
        }
        CHECK(flags == NULL || strstr(shown, flags) != NULL,
              "the header's flags are the tree's (%s): %s", flags != NULL ? flags : "", shown);
    }
    CHECK(err != NULL && strchr(err, '\033') == NULL, "no progress on a stderr that is a file");
    free(table);
    free(err);

    /* Corpora missing: the run fails and says where they come from. */
    snprintf(cmd, sizeof cmd,
             "'%s' --quick --suite msgpack --data '%s/no-such-dir' > /dev/null 2> '%s/nodata.err'",
             bench, dir, dir);
    CHECK(system(cmd) != 0, "a run without its corpora must fail");
    snprintf(path, sizeof path, "%s/nodata.err", dir);
    err = slurp(path, &slen);
    CHECK(err != NULL && strstr(err, "twitter.json not found") != NULL &&
              strstr(err, "no-such-dir") != NULL && strstr(err, "simdjson@0.9.2") != NULL &&
              strstr(err, "--data DIR") != NULL,
          "the message names the file, where it looked and where corpora come from: %s",
          err != NULL ? err : "(none)");
    free(err);

    /* --callgrind: every row gets an instruction count (valgrind is a dependency of the
     * project, scripts/deps.sh; the check is skipped where it is missing). */
    if (system("valgrind --version > /dev/null 2>&1") != 0) {
        printf("bench_report: valgrind not found, --callgrind not checked\n");
        return;
    }
    snprintf(cmd, sizeof cmd,
             "'%s' --callgrind --suite mediatype --json > '%s/cg.jsonl' 2> '%s/cg.err'", bench,
             dir, dir);
    CHECK(system(cmd) == 0, "%s failed (see %s/cg.err)", cmd, dir);
    snprintf(path, sizeof path, "%s/cg.jsonl", dir);
    json = slurp(path, &jlen);
    size_t rows = json != NULL ? check_json_lines(json) : 0;
    CHECK(rows >= 5, "the callgrind run measured %zu rows", rows);
    size_t counted = 0;
    for (const char *p = json; p != NULL && (p = strstr(p, "\"instructions_per_op\":")) != NULL;
         p++) {
        counted += strtod(p + strlen("\"instructions_per_op\":"), NULL) > 0;
    }
    CHECK(counted == rows, "%zu of %zu callgrind rows have an instruction count", counted, rows);
    free(json);
}

int main(int argc, char **argv)
{
    test_units_scale_per_value();
    test_table_ratios_only_between_implementations();
    test_json_lines_keep_the_schema();
    test_svg_is_well_formed_with_a_bar_per_row();
    test_svg_of_requests_shows_throughput_and_p99();
    if (argc >= 3) {
        test_real_run(argv[1], argv[2], argc > 3 && argv[3][0] != '\0' ? argv[3] : NULL);
    }
    if (failures != 0) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("bench_report: all checks passed\n");
    return 0;
}
