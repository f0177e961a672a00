/*
 * What the harness prints: the per-suite table, the one-screen summary, JSON lines and the SVG
 * bar charts. Everything here is a pure function of an array of rows and writes to a FILE, so
 * tests/bench_report.c checks the formatting with rows it makes up. Figures carry their own unit
 * (three significant digits), ratios appear only between wirekit's baseline and a different
 * implementation doing the same work, and informative rows (wirekit variants, cached paths,
 * ablations) are listed apart without a ratio.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"

#define TABLE_WIDTH 100

/* ---- row classification --------------------------------------------------------------------- */

wk_bench_row_kind wk_bench_kind(const wk_bench_row *r)
{
    if (r->flags & WK_BENCH_BASELINE) {
        return WK_BENCH_ROW_BASELINE;
    }
    if (r->flags & WK_BENCH_INFO) {
        return WK_BENCH_ROW_INFO;
    }
    if (strcmp(r->impl, "wirekit") == 0) {
        return WK_BENCH_ROW_BASELINE;
    }
    return strncmp(r->impl, "wirekit", 7) == 0 ? WK_BENCH_ROW_INFO : WK_BENCH_ROW_PEER;
}

static bool same_case(const wk_bench_row *a, const wk_bench_row *b)
{
    return strcmp(a->suite, b->suite) == 0 && strcmp(a->case_name, b->case_name) == 0;
}

const wk_bench_row *wk_bench_baseline(const wk_bench_row *rows, size_t n, const wk_bench_row *r)
{
    for (size_t i = 0; i < n; i++) {
        if (same_case(&rows[i], r) && wk_bench_kind(&rows[i]) == WK_BENCH_ROW_BASELINE) {
            return &rows[i];
        }
    }
    return NULL;
}

double wk_bench_metric(const wk_bench_row *r)
{
    return r->instr > 0 ? r->instr : r->ns;
}

/* ---- units ------------------------------------------------------------------------------------ */

static void sig3(char *out, size_t cap, double v, const char *unit)
{
    const char *fmt = v < 9.995 ? "%.2f %s" : v < 99.95 ? "%.1f %s" : "%.0f %s";
    snprintf(out, cap, fmt, v, unit);
}

void wk_bench_fmt_time(char *out, size_t cap, double ns)
{
    if (!(ns > 0)) {
        snprintf(out, cap, "-");
    } else if (ns < 999.5) {
        sig3(out, cap, ns, "ns");
    } else if (ns < 999.5e3) {
        sig3(out, cap, ns / 1e3, "\xc2\xb5s");
    } else if (ns < 999.5e6) {
        sig3(out, cap, ns / 1e6, "ms");
    } else {
        sig3(out, cap, ns / 1e9, "s");
    }
}

void wk_bench_fmt_rate(char *out, size_t cap, double bytes, double ns)
{
    if (!(bytes > 0) || !(ns > 0)) {
        snprintf(out, cap, "-");
        return;
    }
    double mbs = bytes / ns * 1e3; /* bytes per ns = GB/s */
    if (mbs < 999.5) {
        sig3(out, cap, mbs, "MB/s");
    } else {
        sig3(out, cap, mbs / 1e3, "GB/s");
    }
}

void wk_bench_fmt_count(char *out, size_t cap, double v)
{
    if (v < 0) {
        snprintf(out, cap, "-");
    } else if (v < 9999.5) {
        snprintf(out, cap, v == floor(v) || v >= 100 ? "%.0f" : "%.2f", v);
    } else if (v < 999.5e3) {
        sig3(out, cap, v / 1e3, "k");
    } else if (v < 999.5e6) {
        sig3(out, cap, v / 1e6, "M");
    } else {
        sig3(out, cap, v / 1e9, "G");
    }
}

/* "5.41x", "33.2x", "497x": three significant digits. */
static void fmt_ratio(char *out, size_t cap, double r)
{
    snprintf(out, cap, r < 9.995 ? "%.2fx" : r < 99.95 ? "%.1fx" : "%.0fx", r);
}

size_t wk_bench_text_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++) {
        w += ((unsigned char)*s & 0xc0) != 0x80;
    }
    return w;
}

/* Writes s right-aligned in `width` columns (UTF-8 aware). */
static void put_right(FILE *out, const char *s, size_t width)
{
    for (size_t w = wk_bench_text_width(s); w < width; w++) {
        fputc(' ', out);
    }
    fputs(s, out);
}

/* ---- table ------------------------------------------------------------------------------------ */

typedef struct notes {
    const char *text[64];
    size_t n;
} notes;

static size_t note_index(notes *ns, const char *t)
{
    for (size_t i = 0; i < ns->n; i++) {
        if (strcmp(ns->text[i], t) == 0) {
            return i + 1;
        }
    }
    if (ns->n == sizeof ns->text / sizeof ns->text[0]) {
        return 0;
    }
    ns->text[ns->n++] = t;
    return ns->n;
}

/* Writes `text` wrapped at TABLE_WIDTH, the first line after `lead`, the others indented;
 * breaks only between the pieces separated by `sep` (' ' for words, ';' for summary items,
 * joined again with "; "). */
static void put_wrapped(FILE *out, const char *lead, const char *text, size_t indent, char sep)
{
    const char *join = sep == ' ' ? "" : ";";
    size_t col = wk_bench_text_width(lead);
    bool need_space = col > 0 && lead[strlen(lead) - 1] != ' ';
    fputs(lead, out);
    const char *p = text;
    for (;;) {
        while (*p == ' ') {
            p++;
        }
        char seps[2] = {sep, '\0'};
        size_t wl = strcspn(p, seps);
        if (wl == 0) {
            break;
        }
        char word[256];
        snprintf(word, sizeof word, "%.*s", (int)(wl < 255 ? wl : 255), p);
        size_t ww = wk_bench_text_width(word);
        bool more = p[wl] == sep;
        size_t jw = more ? strlen(join) : 0; /* the separator stays on this line */
        if (col > indent && col + (need_space ? 1 : 0) + ww + jw > TABLE_WIDTH) {
            fprintf(out, "\n%*s", (int)indent, "");
            col = indent;
        } else if (need_space) {
            fputc(' ', out);
            col++;
        }
        fputs(word, out);
        col += ww;
        if (more) {
            fputs(join, out);
            col += jw;
            p++;
        }
        need_space = true;
        p += wl;
    }
    fputc('\n', out);
}

void wk_bench_write_wrapped(FILE *out, const char *lead, const char *text, size_t indent)
{
    put_wrapped(out, lead, text, indent, ' ');
}

static void table_row(FILE *out, const wk_bench_row *rows, size_t n, const wk_bench_row *r,
                      notes *ns, bool instr)
{
    char impl[25], fig[32], spread[16], rate[32], allocs[32], ratio[32] = "", refs[32] = "";
    snprintf(impl, sizeof impl, "%s", r->impl);
    if (instr) {
        wk_bench_fmt_count(fig, sizeof fig, r->instr);
        snprintf(spread, sizeof spread, "-");
        snprintf(rate, sizeof rate, "-");
    } else {
        wk_bench_fmt_time(fig, sizeof fig, r->ns);
        if (r->reps > 1 && r->ns > 0) {
            snprintf(spread, sizeof spread, "%.1f%%", (r->ns_max - r->ns_min) / r->ns * 100);
        } else {
            snprintf(spread, sizeof spread, "-");
        }
        wk_bench_fmt_rate(rate, sizeof rate, (double)r->bytes, r->ns);
    }
    wk_bench_fmt_count(allocs, sizeof allocs, r->allocs);
    wk_bench_row_kind kind = wk_bench_kind(r);
    const wk_bench_row *base = wk_bench_baseline(rows, n, r);
    if (kind == WK_BENCH_ROW_BASELINE) {
        snprintf(ratio, sizeof ratio, "-");
    } else if (kind == WK_BENCH_ROW_PEER && base != NULL && wk_bench_metric(base) > 0 &&
               wk_bench_metric(r) > 0) {
        fmt_ratio(ratio, sizeof ratio, wk_bench_metric(r) / wk_bench_metric(base));
    }
    size_t used = 0;
    const char *ts[2] = {r->note, r->build};
    for (int k = 0; k < 2; k++) {
        if (ts[k] != NULL && ts[k][0] != '\0') {
            size_t idx = note_index(ns, ts[k]);
            if (idx != 0 && used < sizeof refs - 8) {
                used += (size_t)snprintf(refs + used, sizeof refs - used, "%s%zu",
                                         used ? "," : "", idx);
            }
        }
    }
    fprintf(out, "    %-24s", impl);
    put_right(out, fig, 10);
    put_right(out, spread, 8);
    put_right(out, rate, 12);
    put_right(out, allocs, 11);
    put_right(out, ratio, 8);
    if (refs[0] != '\0') {
        fprintf(out, "  %s", refs);
    }
    fputc('\n', out);
}

void wk_bench_write_table(FILE *out, const wk_bench_row *rows, size_t n)
{
    if (n == 0) {
        return;
    }
    bool instr = false;
    for (size_t i = 0; i < n; i++) {
        instr = instr || rows[i].instr > 0;
    }
    notes ns = {{0}, 0};
    fprintf(out, "\n  %-26s", "case / implementation");
    put_right(out, instr ? "instr/op" : "median", 10);
    put_right(out, "spread", 8);
    put_right(out, "throughput", 12);
    put_right(out, "allocs/op", 11);
    put_right(out, "vs wk", 8);
    fputs("  notes\n", out);
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++) {
            seen = same_case(&rows[j], &rows[i]);
        }
        if (seen) {
            continue;
        }
        fprintf(out, "  %s\n", rows[i].case_name);
        /* Like-for-like rows (baseline, then peers), then the informative ones. */
        for (int pass = 0; pass < 2; pass++) {
            bool header = false;
            for (size_t j = i; j < n; j++) {
                if (!same_case(&rows[j], &rows[i]) ||
                    (wk_bench_kind(&rows[j]) == WK_BENCH_ROW_INFO) != (pass == 1)) {
                    continue;
                }
                if (pass == 1 && !header) {
                    fprintf(out, "    . informative, not compared:\n");
                    header = true;
                }
                table_row(out, rows, n, &rows[j], &ns, instr);
            }
        }
    }
    if (ns.n > 0) {
        fputc('\n', out);
    }
    for (size_t i = 0; i < ns.n; i++) {
        char lead[16];
        snprintf(lead, sizeof lead, "  [%zu]", i + 1);
        put_wrapped(out, lead, ns.text[i], 7, ' ');
    }
}

/* ---- summary ---------------------------------------------------------------------------------- */

void wk_bench_write_summary(FILE *out, const wk_bench_row *rows, size_t n)
{
    bool instr = false;
    for (size_t i = 0; i < n; i++) {
        instr = instr || rows[i].instr > 0;
    }
    fprintf(out, "\nSummary: for each like-for-like case, the best peer's %s divided by "
                 "wirekit's\n(above 1: wirekit %s; below 1: the peer %s)\n",
            instr ? "instructions per op" : "median time",
            instr ? "runs fewer instructions" : "is faster", instr ? "does" : "is");
    for (size_t s = 0; s < n; s++) {
        bool seen = false;
        for (size_t j = 0; j < s && !seen; j++) {
            seen = strcmp(rows[j].suite, rows[s].suite) == 0;
        }
        if (seen) {
            continue;
        }
        char *text = NULL;
        size_t tlen = 0;
        FILE *m = open_memstream(&text, &tlen);
        if (m == NULL) {
            return;
        }
        bool any = false;
        for (size_t i = s; i < n; i++) {
            if (strcmp(rows[i].suite, rows[s].suite) != 0 ||
                wk_bench_kind(&rows[i]) != WK_BENCH_ROW_BASELINE ||
                !(wk_bench_metric(&rows[i]) > 0)) {
                continue;
            }
            const wk_bench_row *best = NULL;
            for (size_t j = s; j < n; j++) {
                if (same_case(&rows[j], &rows[i]) &&
                    wk_bench_kind(&rows[j]) == WK_BENCH_ROW_PEER &&
                    wk_bench_metric(&rows[j]) > 0 &&
                    (best == NULL || wk_bench_metric(&rows[j]) < wk_bench_metric(best))) {
                    best = &rows[j];
                }
            }
            if (best != NULL) {
                char ratio[32];
                fmt_ratio(ratio, sizeof ratio, wk_bench_metric(best) / wk_bench_metric(&rows[i]));
                fprintf(m, "%s%s %s %s", any ? ";" : "", rows[i].case_name, ratio, best->impl);
                any = true;
            }
        }
        if (!any) {
            fputs("(no peer measured)", m);
        }
        fclose(m);
        char lead[32];
        snprintf(lead, sizeof lead, "  %-10s", rows[s].suite);
        put_wrapped(out, lead, text, 13, ';');
        free(text);
    }
}

/* ---- JSON lines ------------------------------------------------------------------------------- */

static void json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            fprintf(out, "\\%c", c);
        } else if (c < 0x20) {
            fprintf(out, "\\u%04x", c);
        } else {
            fputc(c, out);
        }
    }
    fputc('"', out);
}

void wk_bench_write_json(FILE *out, const wk_bench_row *r)
{
    static const char *const kinds[] = {"baseline", "peer", "info"};
    fprintf(out, "{\"suite\":");
    json_str(out, r->suite);
    fprintf(out, ",\"case\":");
    json_str(out, r->case_name);
    fprintf(out, ",\"impl\":");
    json_str(out, r->impl);
    fprintf(out, ",\"kind\":\"%s\",\"ns_per_op\":%.3f,\"ns_min\":%.3f,\"ns_max\":%.3f",
            kinds[wk_bench_kind(r)], r->ns, r->ns_min, r->ns_max);
    fprintf(out, ",\"repetitions\":%d", r->reps);
    if (r->instr > 0) {
        fprintf(out, ",\"instructions_per_op\":%.1f", r->instr);
    }
    if (r->p99_ns > 0) {
        fprintf(out, ",\"p50_ns\":%.0f,\"p99_ns\":%.0f", r->p50_ns, r->p99_ns);
    }
    if (r->bytes != 0 && r->ns > 0) {
        fprintf(out, ",\"mb_per_s\":%.1f", (double)r->bytes / r->ns * 1e3);
    }
    fprintf(out, ",\"allocs_per_op\":%.3f,\"bytes_per_op\":%zu,\"iterations\":%llu", r->allocs,
            r->bytes, (unsigned long long)r->iters);
    if (r->note != NULL) {
        fprintf(out, ",\"note\":");
        json_str(out, r->note);
    }
    if (r->build != NULL) {
        fprintf(out, ",\"build\":");
        json_str(out, r->build);
    }
    fprintf(out, "}\n");
}

/* ---- SVG -------------------------------------------------------------------------------------- */

#define SVG_W 960
#define SVG_X0 210   /* bars start here; implementation names end left of it */
#define SVG_BAR_W 560
#define SVG_ROW_H 20
#define SVG_BAR_H 14

static void xml_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t') {
                fputc(*s, out);
            }
        }
    }
}

typedef struct scale {
    bool log;
    double lo, hi; /* log: decades lo..hi (exponents); linear: 0..hi */
} scale;

static scale case_scale(const wk_bench_row *rows, size_t n, const wk_bench_row *first)
{
    double mn = 0, mx = 0;
    for (size_t i = 0; i < n; i++) {
        if (!same_case(&rows[i], first)) {
            continue;
        }
        double v = wk_bench_metric(&rows[i]);
        double top = rows[i].instr > 0 ? v : (rows[i].ns_max > v ? rows[i].ns_max : v);
        double bottom = rows[i].instr > 0 ? v : (rows[i].ns_min > 0 ? rows[i].ns_min : v);
        if (v > 0) {
            mn = mn == 0 || bottom < mn ? bottom : mn;
            mx = top > mx ? top : mx;
        }
    }
    scale sc = {false, 0, mx > 0 ? mx : 1};
    if (mn > 0 && mx / mn > 20) {
        sc.log = true;
        sc.lo = floor(log10(mn) - 0.3); /* the shortest bar keeps a visible length */
        sc.hi = ceil(log10(mx));
        if (sc.hi <= sc.lo) {
            sc.hi = sc.lo + 1;
        }
    } else {
        /* A round top: 1, 2 or 5 times a power of ten, at least the largest value. */
        double p = pow(10, floor(log10(sc.hi)));
        sc.hi = sc.hi <= p ? p : sc.hi <= 2 * p ? 2 * p : sc.hi <= 5 * p ? 5 * p : 10 * p;
    }
    return sc;
}

static double scale_x(const scale *sc, double v)
{
    double f;
    if (sc->log) {
        f = v > 0 ? (log10(v) - sc->lo) / (sc->hi - sc->lo) : 0;
    } else {
        f = v / sc->hi;
    }
    f = f < 0 ? 0 : f > 1 ? 1 : f;
    return SVG_X0 + f * SVG_BAR_W;
}

static void fmt_metric(char *out, size_t cap, double v, bool instr)
{
    if (instr) {
        char c[32];
        wk_bench_fmt_count(c, sizeof c, v);
        snprintf(out, cap, "%s instr", c);
    } else {
        wk_bench_fmt_time(out, cap, v);
    }
}

static size_t case_rows(const wk_bench_row *rows, size_t n, const wk_bench_row *first)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        k += same_case(&rows[i], first);
    }
    return k;
}

/* A round top for a linear scale: 1, 2 or 5 times a power of ten, at least `mx`. */
static double round_top(double mx)
{
    if (mx <= 0) {
        return 1;
    }
    double p = pow(10, floor(log10(mx)));
    return mx <= p ? p : mx <= 2 * p ? 2 * p : mx <= 5 * p ? 5 * p : 10 * p;
}

/* True when the case of `first` holds request rows (wk_bench_record_requests: a p99). */
static bool request_case(const wk_bench_row *rows, size_t n, const wk_bench_row *first)
{
    for (size_t i = 0; i < n; i++) {
        if (same_case(&rows[i], first) && rows[i].p99_ns > 0) {
            return true;
        }
    }
    return false;
}

/* The rows of a request case (a service under load), two bars each on linear scales of their
 * own: requests per second of the median run (longer is better; the whisker from the slowest
 * to the fastest run; the peer's label says how many times wirekit's throughput is), then
 * that run's p99 latency (shorter is better). The first is the row's measurement (class
 * "bar"), the second its latency ("p99"). Returns the y below the last row. */
static int svg_request_rows(FILE *out, const wk_bench_row *rows, size_t n,
                            const wk_bench_row *first, int y)
{
    double rps_top = 0, p99_top = 0;
    for (size_t i = 0; i < n; i++) {
        if (same_case(&rows[i], first) && rows[i].ns > 0) {
            double fastest = rows[i].ns_min > 0 ? rows[i].ns_min : rows[i].ns;
            rps_top = 1e9 / fastest > rps_top ? 1e9 / fastest : rps_top;
            p99_top = rows[i].p99_ns > p99_top ? rows[i].p99_ns : p99_top;
        }
    }
    scale rs = {false, 0, round_top(rps_top)}, ps = {false, 0, round_top(p99_top)};
    for (size_t j = 0; j < n; j++) {
        const wk_bench_row *r = &rows[j];
        if (!same_case(r, first) || r->ns <= 0) {
            continue;
        }
        wk_bench_row_kind kind = wk_bench_kind(r);
        bool wk = kind == WK_BENCH_ROW_BASELINE;
        const char *fill = wk ? "#e8590c" : kind == WK_BENCH_ROW_INFO ? "#c9ced6" : "#5c7cfa";
        const char *pale = wk ? "#f4b183" : "#b6c4fd";
        const wk_bench_row *base = wk_bench_baseline(rows, n, r);
        char rate[48], fig[96], lat[48];
        wk_bench_fmt_count(rate, sizeof rate, 1e9 / r->ns);
        if (kind == WK_BENCH_ROW_PEER && base != NULL && base->ns > 0) {
            char ratio[32];
            fmt_ratio(ratio, sizeof ratio, r->ns / base->ns);
            snprintf(fig, sizeof fig, "%s req/s  (wirekit %s)", rate, ratio);
        } else {
            snprintf(fig, sizeof fig, "%s req/s", rate);
        }
        wk_bench_fmt_time(lat, sizeof lat, r->p99_ns);
        for (int bar = 0; bar < 2; bar++) {
            double x = bar == 0 ? scale_x(&rs, 1e9 / r->ns) : scale_x(&ps, r->p99_ns);
            fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\"%s>", SVG_X0 - 8,
                    y + 11, wk ? " font-weight=\"bold\"" : "");
            xml_text(out, r->impl);
            fprintf(out, "%s</text>\n<rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"%.1f\" "
                         "height=\"%d\" fill=\"%s\"><title>",
                    bar == 0 ? " req/s" : " p99", bar == 0 ? "bar" : "p99", SVG_X0, y,
                    x - SVG_X0 < 1 ? 1 : x - SVG_X0, SVG_BAR_H, bar == 0 ? fill : pale);
            xml_text(out, r->impl);
            fputs(": ", out);
            xml_text(out, bar == 0 ? fig : lat);
            if (r->note != NULL) {
                fputs(" (", out);
                xml_text(out, r->note);
                fputs(")", out);
            }
            fputs("</title></rect>\n", out);
            double lx = x + 6;
            if (bar == 0 && r->reps > 1 && r->ns_max > r->ns_min && r->ns_min > 0) {
                double x1 = scale_x(&rs, 1e9 / r->ns_max), x2 = scale_x(&rs, 1e9 / r->ns_min);
                fprintf(out, "<line class=\"spread\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" "
                             "y2=\"%d\" stroke=\"#222222\" stroke-width=\"1.2\"/>\n",
                        x1, x2, y + SVG_BAR_H / 2, y + SVG_BAR_H / 2);
                lx = x2 + 6 > lx ? x2 + 6 : lx;
            }
            fprintf(out, "<text x=\"%.1f\" y=\"%d\"%s>", lx, y + 11,
                    wk ? " font-weight=\"bold\"" : "");
            if (bar == 1) {
                fputs("p99 ", out);
            }
            xml_text(out, bar == 0 ? fig : lat);
            fputs("</text>\n", out);
            y += SVG_ROW_H;
        }
    }
    return y;
}

int wk_bench_write_svg(FILE *out, const wk_bench_row *rows, size_t n, const char *title,
                       const char *caption)
{
    bool instr = false;
    for (size_t i = 0; i < n; i++) {
        instr = instr || rows[i].instr > 0;
    }
    /* Heights first: title, then per case a heading, its bars and an axis. */
    int ncap = 1;
    for (const char *p = caption; *p; p++) {
        ncap += *p == '\n';
    }
    int height = 56;
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++) {
            seen = same_case(&rows[j], &rows[i]);
        }
        if (!seen) {
            int k = (int)case_rows(rows, n, &rows[i]) * (request_case(rows, n, &rows[i]) ? 2 : 1);
            height += 24 + k * SVG_ROW_H + 30;
        }
    }
    height += 20 + 16 * (ncap + 1);

    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                 "viewBox=\"0 0 %d %d\" font-family=\"DejaVu Sans, Arial, sans-serif\" "
                 "font-size=\"12\">\n",
            SVG_W, height, SVG_W, height);
    fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n");
    fprintf(out, "<text x=\"16\" y=\"28\" font-size=\"17\" font-weight=\"bold\">");
    xml_text(out, title);
    bool requests = n > 0 && request_case(rows, n, &rows[0]);
    fprintf(out, "</text>\n<text x=\"16\" y=\"46\" fill=\"#555555\">%s</text>\n",
            instr      ? "instructions per operation (callgrind); shorter is better"
            : requests ? "requests per second of the median run, whisker from slowest to "
                         "fastest run (longer is better); that run's p99 latency (shorter is "
                         "better)"
                       : "median time per operation, whisker from fastest to slowest repetition; "
                         "shorter is faster");
    int y = 56;
    for (size_t i = 0; i < n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++) {
            seen = same_case(&rows[j], &rows[i]);
        }
        if (seen) {
            continue;
        }
        scale sc = case_scale(rows, n, &rows[i]);
        y += 24;
        fprintf(out, "<g class=\"case\">\n<text x=\"16\" y=\"%d\" font-size=\"14\" "
                     "font-weight=\"bold\">",
                y - 6);
        xml_text(out, rows[i].case_name);
        bool req = !instr && request_case(rows, n, &rows[i]);
        fprintf(out, "</text>\n<text x=\"%d\" y=\"%d\" fill=\"#777777\" "
                     "text-anchor=\"end\">%s</text>\n",
                SVG_W - 16, y - 6,
                req ? "linear scales, one for req/s and one for p99" : sc.log ? "log scale"
                                                                               : "linear scale");
        if (req) {
            y = svg_request_rows(out, rows, n, &rows[i], y);
            fputs("</g>\n", out);
            y += 30;
            continue;
        }
        int top = y;
        /* Like-for-like rows first, informative ones after, as in the table. */
        for (int pass = 0; pass < 2; pass++) {
            for (size_t j = i; j < n; j++) {
                const wk_bench_row *r = &rows[j];
                wk_bench_row_kind kind = wk_bench_kind(r);
                if (!same_case(r, &rows[i]) || (kind == WK_BENCH_ROW_INFO) != (pass == 1)) {
                    continue;
                }
                bool wk = strncmp(r->impl, "wirekit", 7) == 0 || kind == WK_BENCH_ROW_BASELINE;
                const char *fill = kind == WK_BENCH_ROW_BASELINE ? "#e8590c"
                                   : kind == WK_BENCH_ROW_INFO    ? (wk ? "#f4b183" : "#c9ced6")
                                                                  : "#5c7cfa";
                double v = wk_bench_metric(r);
                double x = scale_x(&sc, v);
                fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\"%s%s>", SVG_X0 - 8,
                        y + 11, wk ? " font-weight=\"bold\"" : "",
                        kind == WK_BENCH_ROW_INFO ? " font-style=\"italic\"" : "");
                xml_text(out, r->impl);
                fprintf(out, "</text>\n<rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%.1f\" "
                             "height=\"%d\" fill=\"%s\"><title>",
                        SVG_X0, y, x - SVG_X0 < 1 ? 1 : x - SVG_X0, SVG_BAR_H, fill);
                char fig[48];
                fmt_metric(fig, sizeof fig, v, instr);
                xml_text(out, r->impl);
                fputs(": ", out);
                xml_text(out, fig);
                if (r->note != NULL) {
                    fputs(" (", out);
                    xml_text(out, r->note);
                    fputs(")", out);
                }
                fputs("</title></rect>\n", out);
                if (!instr && r->reps > 1 && r->ns_max > r->ns_min) {
                    fprintf(out, "<line class=\"spread\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" "
                                 "y2=\"%d\" stroke=\"#222222\" stroke-width=\"1.2\"/>\n",
                            scale_x(&sc, r->ns_min), scale_x(&sc, r->ns_max),
                            y + SVG_BAR_H / 2, y + SVG_BAR_H / 2);
                }
                char label[96];
                const wk_bench_row *base = wk_bench_baseline(rows, n, r);
                if (kind == WK_BENCH_ROW_PEER && base != NULL && wk_bench_metric(base) > 0 &&
                    v > 0) {
                    char ratio[32];
                    fmt_ratio(ratio, sizeof ratio, v / wk_bench_metric(base));
                    snprintf(label, sizeof label, "%s  (%s wirekit's)", fig, ratio);
                } else {
                    snprintf(label, sizeof label, "%s%s", fig,
                             kind == WK_BENCH_ROW_INFO ? "  (informative)" : "");
                }
                double lx = x + 6;
                double rx = !instr && r->reps > 1 ? scale_x(&sc, r->ns_max) + 6 : lx;
                fprintf(out, "<text x=\"%.1f\" y=\"%d\"%s>", rx > lx ? rx : lx, y + 11,
                        wk ? " font-weight=\"bold\"" : "");
                xml_text(out, label);
                fputs("</text>\n", out);
                y += SVG_ROW_H;
            }
        }
        /* The axis with its ticks. */
        fprintf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#888888\"/>\n",
                SVG_X0, SVG_X0, top - 2, y);
        fprintf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#888888\"/>\n",
                SVG_X0, SVG_X0 + SVG_BAR_W, y, y);
        int nticks = sc.log ? (int)(sc.hi - sc.lo) + 1 : 6;
        for (int t = 0; t < nticks; t++) {
            double v = sc.log ? pow(10, sc.lo + t) : sc.hi * t / 5;
            double x = scale_x(&sc, v);
            char tick[48];
            if (v == 0) {
                snprintf(tick, sizeof tick, "0");
            } else {
                fmt_metric(tick, sizeof tick, v, instr);
            }
            fprintf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" "
                         "stroke=\"#888888\"/>\n<text x=\"%.1f\" y=\"%d\" font-size=\"10\" "
                         "fill=\"#555555\" text-anchor=\"middle\">",
                    x, x, y, y + 4, x, y + 15);
            xml_text(out, tick);
            fputs("</text>\n", out);
        }
        fputs("</g>\n", out);
        y += 30;
    }
    y += 20;
    fprintf(out, "<text x=\"16\" y=\"%d\" fill=\"#555555\"><tspan fill=\"#e8590c\" "
                 "font-weight=\"bold\">wirekit</tspan>, <tspan fill=\"#5c7cfa\" "
                 "font-weight=\"bold\">peers</tspan> (compared), <tspan fill=\"#f4b183\" "
                 "font-weight=\"bold\">informative rows</tspan> (variants, cached paths; not "
                 "compared)</text>\n",
            y);
    const char *p = caption;
    while (*p) {
        size_t len = strcspn(p, "\n");
        y += 16;
        fprintf(out, "<text x=\"16\" y=\"%d\" fill=\"#555555\">", y);
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(len < 511 ? len : 511), p);
        xml_text(out, line);
        fputs("</text>\n", out);
        p += len;
        p += *p == '\n';
    }
    fputs("</svg>\n", out);
    return ferror(out) ? -1 : 0;
}
