/*
 * `wirekit pg changes`: a table's committed row changes as they happen (logical replication,
 * wirekit/pq_changes.h), one JSON line or MessagePack map per change, and optionally the
 * cache invalidations they call for.
 *
 * Output is appended to FILE (standard output without one) and flushed at every commit; the
 * commit is confirmed to the server only after that flush, and, with --invalidate, after
 * Redis acknowledged its invalidations. So a run killed at any point loses nothing: the next
 * run resumes at the last confirmed commit, and what came after it is written again. A
 * transaction larger than the output buffer is written out as it goes (memory stays bounded)
 * and so may appear twice after a kill; SIGINT and SIGTERM stop at once, drop the part of an
 * unfinished transaction still buffered, confirm what was written and exit 0.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#ifdef WK_CLI_HAVE_PQ
#include "wirekit/pq_changes.h"
#endif
#ifdef WK_CLI_HAVE_REDIS
#include "wirekit/redis.h"
#endif

static const char usage[] =
    "usage: wirekit pg changes [--dsn DSN] --slot NAME --publication NAME [--create]\n"
    "                          [--format jsonl|msgpack] [--timeout SECONDS]\n"
    "                          [--decoding-work-mem SIZE] [FILE]\n"
    "       wirekit pg changes ... --invalidate ENTITY=TABLE:COLUMN... --redis URL\n"
    "                          [--redis-cluster NODES] [--redis-sentinel NODES\n"
    "                          --sentinel-master NAME] [--ns NAME] [--version N]\n\n"
    "Streams the committed row changes of the tables of publication NAME through logical\n"
    "replication slot NAME (plugin pgoutput), one record per change, appended to FILE\n"
    "(default: standard output) as it arrives and flushed at each commit:\n"
    "  {\"lsn\":\"0/16B3748\",\"xid\":735,\"commit_time\":\"2026-01-02 03:04:05.123456+00\",\n"
    "   \"op\":\"insert\",\"table\":\"public.users\",\"new\":{...},\"old\":{...}}\n"
    "op is insert, update, delete or truncate; lsn is the change's WAL position. Rows are\n"
    "written as `wirekit pg query` prints them (every value reads the same). \"old\" holds the\n"
    "replica identity's columns (the whole old row with REPLICA IDENTITY FULL) and comes\n"
    "with deletes, and with updates that changed the key or under REPLICA IDENTITY FULL; a\n"
    "TOASTed value an update left unchanged is not sent by the server and is left out of\n"
    "\"new\". Rolled-back transactions give nothing.\n\n"
    "Delivery is at least once: a commit is confirmed to the server only after its changes\n"
    "were written (and, with --invalidate, acknowledged by Redis); the next run resumes at\n"
    "the last confirmed commit, so after a crash or kill -9 changes after it come again.\n"
    "SIGINT and SIGTERM stop cleanly: what was written is confirmed, exit status 0.\n\n"
    "  --dsn DSN        libpq connection string or URI (default: $WK_PG_DSN, else the\n"
    "                   libpq environment); the role needs the REPLICATION attribute\n"
    "  --slot NAME      the logical replication slot (lower-case letters, digits, _)\n"
    "  --publication NAME  the publication whose tables are streamed\n"
    "  --create         create the slot when it does not exist (else exit 1)\n"
    "  --format FMT     jsonl (default): one JSON object per line; msgpack: one\n"
    "                   MessagePack map per change\n"
    "  --timeout SECS   deadline of every wait for the server: connecting, commands, and\n"
    "                   silence while streaming (default 30; decimals allowed)\n"
    "  --decoding-work-mem SIZE  the session's logical_decoding_work_mem (e.g. 64kB): past\n"
    "                   it the server streams a transaction in progress, which is kept\n"
    "                   here (4 MiB in memory, the rest in a temporary file) until its\n"
    "                   commit\n"
    "  --invalidate ENTITY=TABLE:COLUMN  (repeatable) every committed insert, update and\n"
    "                   delete of TABLE (schema.table; public when omitted) invalidates the\n"
    "                   cached ENTITY whose id is COLUMN's value as pg query prints it,\n"
    "                   as `wirekit cache del` does: every process's memory tier and Redis\n"
    "                   drop it. COLUMN must be in the replica identity for deletes. A\n"
    "                   TRUNCATE of TABLE stops the run (exit 1): its ids are unknown\n"
    "  --redis URL      the cache's Redis, as `wirekit cache` takes it (also\n"
    "                   WK_REDIS_PASSWORD, REDISCLI_AUTH)\n"
    "  --redis-cluster HOST:PORT[,HOST:PORT...]  a Redis Cluster instead\n"
    "  --redis-sentinel HOST:PORT[,HOST:PORT...]  a master named by Sentinel instead\n"
    "  --sentinel-master NAME  the master's name in Sentinel\n"
    "  --ns NAME        the cache's key namespace (default wk)\n"
    "  --version N      the entities' schema version in keys (default 1)\n\n"
    "Exit status: 0 stopped by a signal, 1 a failure (the message says which), 2 the server\n"
    "went away or a usage error.\n";

/* ENTITY=TABLE:COLUMN into its three parts (pointers into a copy the caller frees). */
static bool parse_rule(const char *spec, char **copy, const char **entity, const char **table,
                       const char **column)
{
    size_t n = strlen(spec);
    *copy = malloc(n + 1);
    if (*copy == NULL) {
        return false;
    }
    memcpy(*copy, spec, n + 1);
    char *eq = strchr(*copy, '=');
    char *colon = eq != NULL ? strrchr(eq + 1, ':') : NULL;
    if (eq == NULL || colon == NULL || eq == *copy || colon == eq + 1 || colon[1] == '\0' ||
        memchr(*copy, ':', (size_t)(eq - *copy)) != NULL) {
        return false;
    }
    *eq = '\0';
    *colon = '\0';
    *entity = *copy;
    *table = eq + 1;
    *column = colon + 1;
    return true;
}

#define MAX_RULES 64

typedef struct changes_args {
    const char *dsn, *slot, *publication, *file, *work_mem;
    bool create, msgpack;
    uint32_t timeout_ms;
    const char *rules[MAX_RULES];
    size_t nrules;
    const char *redis, *cluster, *sentinels, *master, *ns;
    uint32_t version;
} changes_args;

#ifdef WK_CLI_HAVE_PQ

#define FLUSH_BYTES ((size_t)64 << 10)

typedef struct changes_cli {
    wk_pq_changes *stream;
    FILE *out;
    wk_buf buf;             /* records not written yet */
    wk_pg_row_opts row;
    wk_pq_invalidator *inv; /* --invalidate */
} changes_cli;

static wk_pq_changes *volatile the_stream;

static void on_signal(int sig)
{
    (void)sig;
    wk_pq_changes *s = the_stream;
    if (s != NULL) {
        wk_pq_changes_stop(s);
    }
}

/* Writes the buffered records out (one write(2) on an unbuffered file) and empties it. */
static wk_status write_out(changes_cli *c, wk_error *err)
{
    if (c->buf.len > 0 && fwrite(c->buf.data, 1, c->buf.len, c->out) != c->buf.len) {
        return wk_error_set(err, WK_ERR_IO, 0, "cannot write the output");
    }
    wk_buf_clear(&c->buf);
    return WK_OK;
}

/* A file appended to: unbuffered, so that each flush is one write(2) of whole records; a
 * JSON line a kill cut short is ended with a newline, so the next run's records start on a
 * line of their own (a reader sees one torn line, never two records run together). */
static int end_torn_line(FILE *f, bool msgpack)
{
    setvbuf(f, NULL, _IONBF, 0);
    if (msgpack || fseeko(f, -1, SEEK_END) != 0) {
        return WK_EXIT_OK; /* empty, or not seekable: nothing to mend */
    }
    int last = fgetc(f);
    fseeko(f, 0, SEEK_END);
    if (last != EOF && last != '\n' && fputc('\n', f) == EOF) {
        return wk_cli_fail("cannot write the output");
    }
    return WK_EXIT_OK;
}

/* One change: its record into the buffer, its invalidations; at COMMIT the flush. */
static wk_status on_change(void *ctx, const wk_pq_change *ch, wk_error *err)
{
    changes_cli *c = ctx;
    if (ch->op != WK_PQ_CHANGE_COMMIT) {
        wk_status st = wk_pq_changes_append(c->stream, ch, &c->row, &c->buf, err);
        if (st == WK_OK && c->inv != NULL) {
            st = wk_pq_invalidator_apply(c->inv, c->stream, ch, err);
        }
        if (st != WK_OK) {
            return st;
        }
        if (c->buf.len >= FLUSH_BYTES) {
            /* a large transaction is written as it goes: memory stays bounded */
            return write_out(c, err);
        }
        return WK_OK;
    }
    wk_status st = write_out(c, err);
    if (st == WK_OK && fflush(c->out) != 0) {
        st = wk_error_set(err, WK_ERR_IO, 0, "cannot write the output");
    }
    return st;
}

#ifdef WK_CLI_HAVE_REDIS
/* The cache whose entities --invalidate names, on the Redis tier as `wirekit cache` opens
 * it; the schemas only name the keys (a value root: nothing is decoded here). */
typedef struct inv_cache {
    wk_redis_store *store;
    wk_cache *cache;
    wk_schema schemas[MAX_RULES];
    wk_schema_rt rts[MAX_RULES];
    char *names[MAX_RULES];
} inv_cache;

static int open_redis(inv_cache *ic, const char *url, const char *cluster,
                      const char *sentinels, const char *master, const char *ns)
{
    wk_redis_opts o = {0};
    const char *list[64];
    char listbuf[2048];
    size_t nlist = 0;
    const char *spec = cluster != NULL ? cluster : sentinels;
    if (spec != NULL) {
        if (strlen(spec) >= sizeof listbuf) {
            return wk_cli_fail("the node list is too long");
        }
        memcpy(listbuf, spec, strlen(spec) + 1);
        char *save = NULL;
        for (char *t = strtok_r(listbuf, ",", &save); t != NULL && nlist < 64;
             t = strtok_r(NULL, ",", &save)) {
            list[nlist++] = t;
        }
        if (cluster != NULL) {
            o.cluster_nodes = list;
            o.ncluster_nodes = nlist;
        } else {
            o.sentinels = list;
            o.nsentinels = nlist;
            o.sentinel_master = master;
        }
    } else {
        o.url = url;
    }
    o.password = getenv("WK_REDIS_PASSWORD");
    if (o.password == NULL) {
        o.password = getenv("REDISCLI_AUTH");
    }
    o.connect_timeout_ms = 1000;
    o.command_timeout_ms = 1000;
    o.no_subscribe = true; /* this process keeps nothing cached: it only invalidates */
    o.pool = 1;
    wk_error err = {0};
    char words[512];
    if (wk_redis_store_new(&o, &ic->store, &err) != WK_OK) {
        return wk_cli_fail("%s", wk_cli_words(err.msg, words, sizeof words));
    }
    if (wk_redis_store_ping(ic->store, &err) != WK_OK) {
        return wk_cli_fail("cannot reach Redis: %s", wk_cli_words(err.msg, words, sizeof words));
    }
    wk_cache_config cfg = {0};
    cfg.ns = ns;
    cfg.store = wk_redis_store_iface(ic->store);
    if (wk_cache_new(&cfg, &ic->cache, &err) != WK_OK) {
        return wk_cli_fail("%s", wk_cli_words(err.msg, words, sizeof words));
    }
    return WK_EXIT_OK;
}

static void close_redis(inv_cache *ic, size_t n)
{
    wk_cache_free(ic->cache);
    wk_redis_store_free(ic->store);
    for (size_t i = 0; i < n; i++) {
        wk_schema_unprepare(&ic->schemas[i]);
        free(ic->names[i]);
    }
}
#endif


static int stream_changes(const changes_args *a)
{
    changes_cli c;
    memset(&c, 0, sizeof c);
    c.row.format = a->msgpack ? WK_PG_ROW_MSGPACK : WK_PG_ROW_JSON;
    wk_buf_init(&c.buf, NULL, 0);
    int rc = WK_EXIT_OK;
    char *copies[MAX_RULES] = {0};
#ifdef WK_CLI_HAVE_REDIS
    inv_cache ic;
    memset(&ic, 0, sizeof ic);
    wk_pq_invalidate_rule rules[MAX_RULES];
    if (a->nrules > 0) {
        rc = open_redis(&ic, a->redis, a->cluster, a->sentinels, a->master, a->ns);
        for (size_t i = 0; i < a->nrules && rc == WK_EXIT_OK; i++) {
            const char *entity, *table, *column;
            if (!parse_rule(a->rules[i], &copies[i], &entity, &table, &column)) {
                rc = wk_cli_fail("out of memory"); /* the syntax was checked with the options */
                break;
            }
            ic.schemas[i].name = entity;
            ic.schemas[i].version = a->version;
            ic.schemas[i].root = WK_SCHEMA_ROOT_VALUE;
            ic.schemas[i].size = sizeof(wk_value);
            ic.schemas[i].rt = &ic.rts[i];
            rules[i].schema = &ic.schemas[i];
            rules[i].table = table;
            rules[i].column = column;
        }
        wk_error err = {0};
        if (rc == WK_EXIT_OK &&
            wk_pq_invalidator_new(ic.cache, rules, a->nrules, &c.inv, &err) != WK_OK) {
            rc = wk_cli_fail_at("--invalidate", &err);
        }
    }
#endif
    wk_pq_changes_opts o;
    memset(&o, 0, sizeof o);
    o.dsn = a->dsn;
    o.slot = a->slot;
    o.publication = a->publication;
    o.flags = a->create ? WK_PQ_CHANGES_CREATE_SLOT : 0;
    o.timeout_ms = a->timeout_ms;
    o.decoding_work_mem = a->work_mem;
    wk_error err = {0};
    if (rc == WK_EXIT_OK) {
        c.out = a->file != NULL && strcmp(a->file, "-") != 0 ? fopen(a->file, "a+b") : stdout;
        if (c.out == NULL) {
            rc = wk_cli_fail("cannot open %s: %s", a->file, strerror(errno));
        } else if (c.out != stdout) {
            rc = end_torn_line(c.out, a->msgpack);
        }
    }
    wk_status st = WK_OK;
    if (rc == WK_EXIT_OK) {
        st = wk_pq_changes_open(&o, &c.stream, &err);
        if (st != WK_OK) {
            rc = wk_cli_fail("%s", c.stream != NULL && wk_pq_changes_message(c.stream)[0] != '\0'
                                       ? wk_pq_changes_message(c.stream)
                                       : err.msg);
            rc = st == WK_ERR_CONNECT ? WK_EXIT_USAGE : rc;
        }
    }
    if (rc == WK_EXIT_OK) {
        the_stream = c.stream;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        st = wk_pq_changes_run(c.stream, on_change, &c, &err);
        the_stream = NULL;
        if (st == WK_OK) {
            /* stopped: the unfinished transaction's records not yet written are dropped, so
             * that what was written is what is confirmed */
            c.buf.len = 0;
            if (fflush(c.out) != 0) {
                rc = wk_cli_fail("cannot write the output");
            }
        } else {
            const char *m = wk_pq_changes_message(c.stream);
            rc = wk_cli_fail("%s", m[0] != '\0' ? m : err.msg != NULL ? err.msg : wk_status_str(st));
            rc = st == WK_ERR_CONNECT ? WK_EXIT_USAGE : rc;
            fflush(c.out);
        }
    }
    wk_pq_changes_free(c.stream);
    wk_pq_invalidator_free(c.inv);
#ifdef WK_CLI_HAVE_REDIS
    if (a->nrules > 0) {
        close_redis(&ic, 0);
    }
#endif
    for (size_t i = 0; i < a->nrules; i++) {
        free(copies[i]);
    }
    if (c.out != NULL && c.out != stdout) {
        fclose(c.out);
    }
    wk_buf_free(&c.buf);
    return rc;
}

#endif

enum {
    O_DSN = 1, O_SLOT, O_PUB, O_CREATE, O_FORMAT, O_TIMEOUT, O_WORK_MEM, O_INVALIDATE, O_REDIS,
    O_CLUSTER, O_SENTINEL, O_MASTER, O_NS, O_VERSION
};

static const wk_cli_optdef changes_opts[] = {
    {"--dsn", 0, true, O_DSN},
    {"--slot", 0, true, O_SLOT},
    {"--publication", 0, true, O_PUB},
    {"--create", 0, false, O_CREATE},
    {"--format", 0, true, O_FORMAT},
    {"--timeout", 0, true, O_TIMEOUT},
    {"--decoding-work-mem", 0, true, O_WORK_MEM},
    {"--invalidate", 0, true, O_INVALIDATE},
    {"--redis", 0, true, O_REDIS},
    {"--redis-cluster", 0, true, O_CLUSTER},
    {"--redis-sentinel", 0, true, O_SENTINEL},
    {"--sentinel-master", 0, true, O_MASTER},
    {"--ns", 0, true, O_NS},
    {"--version", 0, true, O_VERSION},
    {NULL, 0, false, 0},
};

/* cli.h: `wirekit pg changes`, argv[0] "changes". */
int wk_cli_pg_changes(int argc, char **argv)
{
    struct changes_args a;
    memset(&a, 0, sizeof a);
    a.ns = "wk";
    a.version = 1;
    a.dsn = getenv("WK_PG_DSN");
    wk_cli_args args;
    wk_cli_args_init(&args, "pg changes", argc, argv, 1, changes_opts);
    int opt;
    const char *v;
    while ((opt = wk_cli_next(&args, &v)) != WK_CLI_DONE) {
        switch (opt) {
        case WK_CLI_HELP: fputs(usage, stdout); return WK_EXIT_OK;
        case WK_CLI_BAD: return WK_EXIT_USAGE;
        case O_DSN: a.dsn = v; break;
        case O_SLOT: a.slot = v; break;
        case O_PUB: a.publication = v; break;
        case O_CREATE: a.create = true; break;
        case O_FORMAT:
            if (strcmp(v, "msgpack") == 0) {
                a.msgpack = true;
            } else if (strcmp(v, "jsonl") == 0 || strcmp(v, "json") == 0) {
                a.msgpack = false;
            } else {
                return wk_cli_usage_error("pg changes", "unknown format '%s' (jsonl or msgpack)",
                                          v);
            }
            break;
        case O_TIMEOUT: {
            char *end = NULL;
            double secs = strtod(v, &end);
            if (end == v || *end != '\0' || !(secs > 0) || secs > 86400.0) {
                return wk_cli_usage_error("pg changes", "--timeout needs seconds, more than 0");
            }
            a.timeout_ms = (uint32_t)(secs * 1000.0 + 0.5);
            a.timeout_ms = a.timeout_ms == 0 ? 1 : a.timeout_ms;
            break;
        }
        case O_WORK_MEM: a.work_mem = v; break;
        case O_INVALIDATE: {
            if (a.nrules == MAX_RULES) {
                return wk_cli_usage_error("pg changes", "at most %d --invalidate rules",
                                          MAX_RULES);
            }
            char *copy = NULL;
            const char *e, *t, *col;
            bool ok = parse_rule(v, &copy, &e, &t, &col);
            free(copy);
            if (!ok) {
                return wk_cli_usage_error("pg changes",
                                          "--invalidate needs ENTITY=TABLE:COLUMN, not '%s'", v);
            }
            a.rules[a.nrules++] = v;
            break;
        }
        case O_REDIS: a.redis = v; break;
        case O_CLUSTER: a.cluster = v; break;
        case O_SENTINEL: a.sentinels = v; break;
        case O_MASTER: a.master = v; break;
        case O_NS: a.ns = v; break;
        case O_VERSION: {
            char *end = NULL;
            errno = 0;
            unsigned long n = strtoul(v, &end, 10);
            if (errno != 0 || end == v || *end != '\0' || n > UINT32_MAX || v[0] == '-') {
                return wk_cli_usage_error("pg changes", "--version needs a number");
            }
            a.version = (uint32_t)n;
            break;
        }
        default: return wk_cli_usage_error("pg changes", "unexpected option");
        }
    }
    if (a.slot == NULL || a.publication == NULL) {
        return wk_cli_usage_error("pg changes", "--slot and --publication are required");
    }
    if (args.nops > 1) {
        return wk_cli_usage_error("pg changes", "at most one FILE");
    }
    a.file = args.nops == 1 ? argv[args.first] : NULL;
    bool shared = a.redis != NULL || a.cluster != NULL || a.sentinels != NULL;
    if (a.nrules > 0 && !shared) {
        return wk_cli_usage_error("pg changes",
                                  "--invalidate needs the cache's Redis (--redis, "
                                  "--redis-cluster or --redis-sentinel)");
    }
    if (a.nrules == 0 && shared) {
        return wk_cli_usage_error("pg changes", "--redis without --invalidate does nothing");
    }
    if (a.sentinels != NULL && a.master == NULL) {
        return wk_cli_usage_error("pg changes", "--redis-sentinel needs --sentinel-master");
    }
    if (a.dsn == NULL) {
        a.dsn = "";
    }
#ifdef WK_CLI_HAVE_PQ
#ifndef WK_CLI_HAVE_REDIS
    if (a.nrules > 0) {
        return wk_cli_fail("this wirekit was built without Redis support (hiredis)");
    }
#endif
    return stream_changes(&a);
#else
    return wk_cli_fail("this wirekit was built without libpq (wirekit-pq)");
#endif
}
