/*
 * Harness state shared by bench.c, report.c and main.c (suites only see bench.h), and the
 * report functions: table, summary, JSON lines and SVG charts. The report functions take an
 * array of rows and a FILE, so tests/bench_report can drive them with rows of its own.
 */
#ifndef WK_BENCH_INTERNAL_H
#define WK_BENCH_INTERNAL_H

#include "bench.h"

typedef struct wk_bench_row {
    const char *suite;
    const char *case_name;
    const char *impl;
    double ns;         /* median of the repetitions, ns per op */
    double ns_min;     /* fastest repetition */
    double ns_max;     /* slowest repetition */
    double instr;      /* instructions per op under --callgrind; 0 = not counted */
    int reps;          /* repetitions behind the figures (0 = measured elsewhere) */
    size_t bytes;
    double allocs;     /* per op; negative = not measurable */
    uint64_t iters;
    const char *note;
    const char *build; /* how a peer was built (wk_bench_peer), or NULL */
    unsigned flags;    /* WK_BENCH_INFO, WK_BENCH_BASELINE */
    double p50_ns;     /* request latency percentiles (wk_bench_record_requests); 0 = none */
    double p99_ns;
} wk_bench_row;

typedef struct wk_bench_peer_build {
    const char *impl;
    const char *build;
} wk_bench_peer_build;

struct wk_bench {
    bool json;
    bool quick;
    bool progress;          /* stderr is a terminal and the output is a table */
    const char *cg_file;    /* under --callgrind: the file callgrind dumps into */
    const char *data_dir;   /* --data DIR */
    const char *case_filter; /* --case TEXT: only cases whose name contains it */
    bool data_hint_shown;   /* where corpora come from: said once per run */
    const char *suite;
    unsigned suite_no, suite_count;
    uint64_t started_ns;
    wk_bench_row *rows;
    size_t nrows, cap;
    wk_bench_spec queue[16];
    size_t nqueue;
    wk_bench_peer_build peers[24];
    size_t npeers;
    int failures;
};

/** What a row is in its case: the wirekit baseline, a compared peer, or informative. */
typedef enum { WK_BENCH_ROW_BASELINE, WK_BENCH_ROW_PEER, WK_BENCH_ROW_INFO } wk_bench_row_kind;

wk_bench_row_kind wk_bench_kind(const wk_bench_row *r);

/** The baseline row of r's case among rows[0..n), or NULL. */
const wk_bench_row *wk_bench_baseline(const wk_bench_row *rows, size_t n, const wk_bench_row *r);

/** The figure compared: instructions when counted, else the median time. */
double wk_bench_metric(const wk_bench_row *r);

/** "286 µs", "2.32 ms", "0.60 ns": three significant digits and a unit per value. */
void wk_bench_fmt_time(char *out, size_t cap, double ns);
/** "995 MB/s", "2.21 GB/s" from bytes per op and ns per op. */
void wk_bench_fmt_rate(char *out, size_t cap, double bytes, double ns);
/** "950", "5.52 M", "34.1 k": counts (instructions, allocations). */
void wk_bench_fmt_count(char *out, size_t cap, double v);

/** Columns of text a UTF-8 string takes (code points; the report uses no wide characters). */
size_t wk_bench_text_width(const char *s);

/** Writes `text` after `lead`, wrapped at 100 columns, continuation lines indented. */
void wk_bench_write_wrapped(FILE *out, const char *lead, const char *text, size_t indent);

/** The table of rows[0..n) (one suite): a block per case, like-for-like rows first, then the
 *  informative ones; notes and peer builds as numbered footnotes. At most 100 columns. */
void wk_bench_write_table(FILE *out, const wk_bench_row *rows, size_t n);

/** One line per suite: wirekit's ratio against the best peer on each like-for-like case. */
void wk_bench_write_summary(FILE *out, const wk_bench_row *rows, size_t n);

/** One JSON object (one line) for the row. */
void wk_bench_write_json(FILE *out, const wk_bench_row *r);

/** An SVG document with a horizontal bar chart per case of rows[0..n) (one bar per row, log
 *  scale where a case spans more than 20x), wirekit highlighted, `caption` (machine, compiler)
 *  at the bottom. Returns 0, or -1 on a write error. */
int wk_bench_write_svg(FILE *out, const wk_bench_row *rows, size_t n, const char *title,
                       const char *caption);

#endif
