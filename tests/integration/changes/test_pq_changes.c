/*
 * The change stream against the shared PostgreSQL 15 server (WK_PG_DSN, wal_level=logical;
 * skipped when unset): every built-in type inserted, updated and deleted, each row in the
 * event equal to `wirekit pg query`'s rendering of it (WK_CLI names the command), in binary
 * and in text; REPLICA IDENTITY DEFAULT and FULL; a table altered while streaming; TRUNCATE;
 * rolled-back transactions and subtransactions give nothing; a transaction streamed in
 * progress is buffered until its commit and dropped on abort; a missing slot or publication;
 * a publication that does not cover a table; a consumer that fails gets its transaction
 * again (at least once).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "changes_test.h"
#include "pg_samples.h"
#include "wirekit/json.h"
#include "wirekit/value.h"

#define NEED_SERVER()                                                                     \
    do {                                                                                  \
        if (getenv("WK_PG_DSN") == NULL) {                                                \
            SKIP("WK_PG_DSN is not set (run scripts/servers.sh start)");                  \
        }                                                                                 \
    } while (0)

/* A fresh slot on a fresh publication of `tables`: the stream is opened once to make the
 * slot (its position is now), then closed, so that what the test does next is streamed. */
static bool fresh_slot(const char *slot, const char *pub, const char *tables)
{
    changes_drop_slot(NULL, slot);
    char sql[512];
    snprintf(sql, sizeof sql, "DROP PUBLICATION IF EXISTS %s; CREATE PUBLICATION %s FOR TABLE %s",
             pub, pub, tables);
    if (!changes_sql(NULL, sql)) {
        return false;
    }
    wk_pq_changes *s = NULL;
    wk_error err = {0};
    wk_status st = changes_open(NULL, slot, pub, WK_PQ_CHANGES_CREATE_SLOT, NULL, &s, &err);
    if (st != WK_OK) {
        fprintf(stderr, "open %s: %s\n", slot, s != NULL ? wk_pq_changes_message(s) : err.msg);
    }
    wk_pq_changes_free(s);
    return st == WK_OK;
}

/* The value of key `k` of map `v`, or NULL. */
static const wk_value *member(const wk_value *v, const char *k)
{
    if (v == NULL || v->type != WK_VAL_MAP) {
        return NULL;
    }
    for (uint32_t i = 0; i < v->len; i++) {
        const wk_value *key = &v->u.pairs[i].key;
        if (key->type == WK_VAL_STR && key->len == strlen(k) && memcmp(key->u.str, k, key->len) == 0) {
            return &v->u.pairs[i].val;
        }
    }
    return NULL;
}

/* Line `n` (0-based) of the run as a tree (numbers as their text). */
static const wk_value *line_value(const changes_run *r, size_t n, wk_arena *a)
{
    const char *p = (const char *)r->lines.data, *end = p + r->lines.len;
    for (size_t i = 0; i < n && p != NULL; i++) {
        p = memchr(p, '\n', (size_t)(end - p));
        p = p != NULL ? p + 1 : NULL;
    }
    if (p == NULL || p >= end) {
        return NULL;
    }
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    wk_read_opts o = {WK_JSON_READ_RAW_NUMBERS | WK_READ_COPY_STRINGS, 0, NULL, {NULL, NULL}};
    wk_value *v = NULL;
    size_t used = 0;
    return wk_json_decode_value(p, (size_t)(nl - p), &o, a, &v, &used, NULL) == WK_OK ? v : NULL;
}

/* What `wirekit pg query` prints for `sql` (one row), as a tree; NULL when it fails. */
static const wk_value *pg_query_row(const char *sql, wk_arena *a)
{
    const char *cli = getenv("WK_CLI");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' pg query \"%s\"", cli, sql);
    FILE *f = popen(cmd, "r");
    if (f == NULL) {
        return NULL;
    }
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        wk_buf_append(&b, chunk, n);
    }
    int rc = pclose(f);
    wk_read_opts o = {WK_JSON_READ_RAW_NUMBERS | WK_READ_COPY_STRINGS, 0, NULL, {NULL, NULL}};
    wk_value *v = NULL;
    size_t used = 0;
    wk_status st = rc == 0 && b.len > 0
                       ? wk_json_decode_value(b.data, b.len - 1, &o, a, &v, &used, NULL)
                       : WK_ERR_IO;
    wk_buf_free(&b);
    return st == WK_OK ? v : NULL;
}

/* Prints a tree as JSON on stderr (a failing comparison shows both sides). */
static void show(const char *what, const wk_value *v)
{
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    if (v != NULL && wk_json_encode_value(v, NULL, &b, NULL) == WK_OK) {
        fprintf(stderr, "%s: %.*s\n", what, (int)b.len, (const char *)b.data);
    }
    wk_buf_free(&b);
}

/* Every sample type as a column of wk_chg_types (REPLICA IDENTITY FULL, so a delete's old
 * row holds every column): row 1 updated to the samples, row 2 inserted as a copy of it,
 * then deleted. Each event's row must equal pg query's rendering of the same row. */
static void every_type(unsigned flags, const char *slot)
{
    NEED_SERVER();
    if (getenv("WK_CLI") == NULL) {
        SKIP("WK_CLI (the wirekit command, the oracle) is not set");
    }
    CHECK(changes_sql(NULL, "DROP TABLE IF EXISTS wk_chg_types; "
                            "CREATE TABLE wk_chg_types (id int PRIMARY KEY); "
                            "ALTER TABLE wk_chg_types REPLICA IDENTITY FULL"));
    /* a column per sample whose type can be a column and takes the literal */
    wk_buf set, cols;
    wk_buf_init(&set, NULL, 0);
    wk_buf_init(&cols, NULL, 0);
    char sql[8192];
    size_t ncols = 0;
    CHECK(changes_sql(NULL, "INSERT INTO wk_chg_types VALUES (1)"));
    /* in binary, the types wirekit reads only as text (tsquery) would make the stream text:
     * they are left to the text run (aclitem, which the server never sends in binary, stays) */
    wk_pq_conn *pc = NULL;
    wk_error cerr = {0};
    CHECK_OK(wk_pq_connect(getenv("WK_PG_DSN"), NULL, &pc, &cerr));
    for (size_t i = 0; i < pg_type_nsamples; i++) {
        const char *type = pg_type_samples[i][0], *lit = pg_type_samples[i][1];
        if (lit == NULL) {
            continue;
        }
        if (!(flags & WK_PQ_CHANGES_TEXT)) {
            /* the OID alias types (regclass, ...) make the stream text too: names in text */
            snprintf(sql, sizeof sql,
                     "SELECT oid, typsend <> 0, typname LIKE 'reg%%' FROM pg_type "
                     "WHERE oid = '\"%s\"'::regtype", type);
            PGresult *tr = PQexec(wk_pq_pgconn(pc), sql);
            bool found = PQntuples(tr) == 1;
            bool sent_binary = found && PQgetvalue(tr, 0, 1)[0] == 't';
            bool oid_alias = found && PQgetvalue(tr, 0, 2)[0] == 't';
            wk_pg_oid oid = found ? (wk_pg_oid)strtoul(PQgetvalue(tr, 0, 0), NULL, 10) : 0;
            PQclear(tr);
            if (oid_alias || (sent_binary && wk_pg_registry_find_decoder(
                                                 wk_pq_registry(pc), oid, WK_PG_BINARY,
                                                 WK_PG_KIND_EVENTS) == NULL)) {
                continue;
            }
        }
        char esc[1024];
        size_t k = 0;
        for (const char *p = lit; *p != '\0' && k + 3 < sizeof esc; p++) {
            if (*p == '\'') {
                esc[k++] = '\'';
            }
            esc[k++] = *p;
        }
        esc[k] = '\0';
        snprintf(sql, sizeof sql,
                 "ALTER TABLE wk_chg_types ADD COLUMN c%zu \"%s\"; "
                 "UPDATE wk_chg_types SET c%zu = '%s'::\"%s\"",
                 i, type, i, esc, type);
        PGconn *c = PQconnectdb(getenv("WK_PG_DSN"));
        PGresult *r = PQexec(c, "BEGIN");
        PQclear(r);
        r = PQexec(c, sql);
        bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
        r = PQexec(c, ok ? "COMMIT" : "ROLLBACK");
        PQclear(r);
        PQfinish(c);
        if (ok) {
            ncols++;
            char part[64];
            snprintf(part, sizeof part, ", c%zu", i);
            wk_buf_append(&cols, part, strlen(part));
        }
    }
    wk_pq_conn_free(pc);
    CHECK_MSG(ncols > 80, "only %zu sample types could be columns", ncols);
    wk_buf_push(&cols, '\0');
    CHECK(fresh_slot(slot, "wk_chg_types_pub", "wk_chg_types"));
    /* an update of every column, an insert of a copy, a delete of it */
    snprintf(sql, sizeof sql, "UPDATE wk_chg_types SET id = 1 WHERE id = 1");
    CHECK(changes_sql(NULL, sql));
    snprintf(sql, sizeof sql, "INSERT INTO wk_chg_types SELECT 2%s FROM wk_chg_types WHERE id = 1",
             (const char *)cols.data);
    CHECK(changes_sql(NULL, sql));
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    const wk_value *want1 = pg_query_row("select * from wk_chg_types where id = 1", &a);
    const wk_value *want2 = pg_query_row("select * from wk_chg_types where id = 2", &a);
    CHECK(want1 != NULL && want2 != NULL);
    CHECK(changes_sql(NULL, "DELETE FROM wk_chg_types WHERE id = 2"));
    wk_pq_changes *s = NULL;
    wk_error err = {0};
    CHECK_OK(changes_open(NULL, slot, "wk_chg_types_pub", flags, NULL, &s, &err));
    CHECK_EQ(wk_pq_changes_binary(s), !(flags & WK_PQ_CHANGES_TEXT));
    changes_run r;
    CHECK_OK(changes_collect(s, 3, 0, 120, &r, &err));
    CHECK_EQ(r.changes, 3u);
    const wk_value *up = line_value(&r, 0, &a), *ins = line_value(&r, 1, &a),
                   *del = line_value(&r, 2, &a);
    const wk_value *got[3] = {member(up, "new"), member(ins, "new"), member(del, "old")};
    const wk_value *want[3] = {want1, want2, want2};
    const char *what[3] = {"update new", "insert new", "delete old"};
    for (int i = 0; i < 3; i++) {
        bool same = got[i] != NULL && wk_value_equal(got[i], want[i], NULL);
        if (!same) {
            show(what[i], got[i]);
            show("pg query", want[i]);
        }
        CHECK_MSG(same, "%s differs from pg query's row (%zu type columns)", what[i], ncols);
    }
    changes_run_free(&r);
    wk_pq_changes_free(s);
    changes_drop_slot(NULL, slot);
    wk_arena_free(&a);
    wk_buf_free(&set);
    wk_buf_free(&cols);
}

WK_TEST(test_changes_every_type_reads_as_pg_query_binary)
{
    every_type(0, "wk_chg_types_bin");
}

WK_TEST(test_changes_every_type_reads_as_pg_query_text)
{
    every_type(WK_PQ_CHANGES_TEXT, "wk_chg_types_text");
}

WK_TEST(test_changes_replica_identity_default_sends_key_full_sends_row)
{
    NEED_SERVER();
    CHECK(changes_sql(NULL, "DROP TABLE IF EXISTS wk_chg_ri; CREATE TABLE wk_chg_ri "
                            "(id int PRIMARY KEY, name text, n int)"));
    CHECK(fresh_slot("wk_chg_ri", "wk_chg_ri_pub", "wk_chg_ri"));
    CHECK(changes_sql(NULL, "INSERT INTO wk_chg_ri VALUES (1, 'a', 10)"));
    CHECK(changes_sql(NULL, "UPDATE wk_chg_ri SET name = 'b' WHERE id = 1"));
    CHECK(changes_sql(NULL, "UPDATE wk_chg_ri SET id = 2 WHERE id = 1"));
    CHECK(changes_sql(NULL, "DELETE FROM wk_chg_ri WHERE id = 2"));
    CHECK(changes_sql(NULL, "ALTER TABLE wk_chg_ri REPLICA IDENTITY FULL; "
                            "INSERT INTO wk_chg_ri VALUES (3, 'c', 30)"));
    CHECK(changes_sql(NULL, "UPDATE wk_chg_ri SET n = 31 WHERE id = 3"));
    CHECK(changes_sql(NULL, "DELETE FROM wk_chg_ri WHERE id = 3"));
    wk_pq_changes *s = NULL;
    wk_error err = {0};
    CHECK_OK(changes_open(NULL, "wk_chg_ri", "wk_chg_ri_pub", 0, NULL, &s, &err));
    changes_run r;
    CHECK_OK(changes_collect(s, 7, 0, 60, &r, &err));
    CHECK_EQ(r.changes, 7u);
    /* DEFAULT: an update keeping the key has no old row; one changing it has the old key */
    CHECK_EQ(changes_count(&r, "\"op\":\"update\",\"table\":\"public.wk_chg_ri\","
                               "\"new\":{\"id\":1,\"name\":\"b\",\"n\":10}}"),
             1u);
    CHECK_EQ(changes_count(&r, "\"new\":{\"id\":2,\"name\":\"b\",\"n\":10},\"old\":{\"id\":1}}"),
             1u);
    CHECK_EQ(changes_count(&r, "\"op\":\"delete\",\"table\":\"public.wk_chg_ri\",\"old\":{\"id\":2}}"),
             1u);
    /* FULL: the whole old row */
    CHECK_EQ(changes_count(&r, "\"new\":{\"id\":3,\"name\":\"c\",\"n\":31},"
                               "\"old\":{\"id\":3,\"name\":\"c\",\"n\":30}}"),
             1u);
    CHECK_EQ(changes_count(&r, "\"op\":\"delete\",\"table\":\"public.wk_chg_ri\","
                               "\"old\":{\"id\":3,\"name\":\"c\",\"n\":31}}"),
             1u);
    changes_run_free(&r);
    wk_pq_changes_free(s);
    changes_drop_slot(NULL, "wk_chg_ri");
}

WK_TEST(test_changes_table_altered_while_streaming_reads_new_columns)
{
    NEED_SERVER();
    CHECK(changes_sql(NULL, "DROP TABLE IF EXISTS wk_chg_alt; CREATE TABLE wk_chg_alt "
                            "(id int PRIMARY KEY, a text, b int)"));
    CHECK(fresh_slot("wk_chg_alt", "wk_chg_alt_pub", "wk_chg_alt"));
    wk_pq_changes *s = NULL;
    wk_error err = {0};
    CHECK_OK(changes_open(NULL, "wk_chg_alt", "wk_chg_alt_pub", 0, NULL, &s, &err));
    CHECK(changes_sql(NULL, "INSERT INTO wk_chg_alt VALUES (1, 'x', 1)"));
    changes_run r;
    CHECK_OK(changes_collect(s, 1, 0, 60, &r, &err));
    CHECK_EQ(changes_count(&r, "\"new\":{\"id\":1,\"a\":\"x\",\"b\":1}"), 1u);
    changes_run_free(&r);
    /* while the stream is open: a column added, one dropped, one changing type */
    CHECK(changes_sql(NULL, "ALTER TABLE wk_chg_alt ADD COLUMN c numeric; "
                            "ALTER TABLE wk_chg_alt DROP COLUMN a; "
                            "ALTER TABLE wk_chg_alt ALTER COLUMN b TYPE text"));
    CHECK(changes_sql(NULL, "INSERT INTO wk_chg_alt VALUES (2, 'two', 2.50)"));
    CHECK_OK(changes_collect(s, 1, 0, 60, &r, &err));
    CHECK_EQ(changes_count(&r, "\"new\":{\"id\":2,\"b\":\"two\",\"c\":2.50}"), 1u);
    changes_run_free(&r);
    wk_pq_changes_free(s);
    changes_drop_slot(NULL, "wk_chg_alt");
}

WK_TEST(test_changes_truncate_is_one_event_per_table)
{
    NEED_SERVER();
    CHECK(changes_sql(NULL, "DROP TABLE IF EXISTS wk_chg_tr1, wk_chg_tr2; "
                            "CREATE TABLE wk_chg_tr1 (id int PRIMARY KEY); "
                            "CREATE TABLE wk_chg_tr2 (id int PRIMARY KEY)"));
    CHECK(fresh_slot("wk_chg_tr", "wk_chg_tr_pub", "wk_chg_tr1, wk_chg_tr2"));
    CHECK(changes_sql(NULL, "INSERT INTO wk_chg_tr1 VALUES (1); INSERT INTO wk_chg_tr2 VALUES (1)"));
    CHECK(changes_sql(NULL, "TRUNCATE wk_chg_tr1, wk_chg_tr2"));
    wk_pq_changes *s = NULL;
    wk_error err = {0};
    CHECK_OK(changes_open(NULL, "wk_chg_tr", "wk_chg_tr_pub", 0, NULL, &s, &err));
    changes_run r;
    CHECK_OK(changes_collect(s, 2, 0, 60, &r, &err));
    CHECK_EQ(r.changes, 4u);
    CHECK_EQ(changes_count(&r, "\"op\":\"truncate\",\"table\":\"public.wk_chg_tr1\"}"), 1u);
    CHECK_EQ(changes_count(&r, "\"op\":\"truncate\",\"table\":\"public.wk_chg_tr2\"}"), 1u);
    changes_run_free(&r);
    wk_pq_changes_free(s);
    changes_drop_slot(NULL, "wk_chg_tr");
}

WK_TEST(test_changes_rolled_back_transaction_gives_no_events)
{
    NEED_SERVER();
    CHECK(changes_sql(NULL, "DROP TABLE IF EXISTS wk_chg_rb; CREATE TABLE wk_chg_rb "
                            "(id int PRIMARY KEY, v text)"));
    CHECK(fresh_slot("wk_chg_rb", "wk_chg_rb_pub", "wk_chg_rb"));
    CHECK(changes_sql(NULL, "BEGIN; INSERT INTO wk_chg_rb VALUES (1, 'gone'); ROLLBACK"));
    /* a committed transaction with a rolled-back subtransaction keeps only the rest */
    CHECK(changes_sql(NULL, "BEGIN; INSERT INTO wk_chg_rb VALUES (2, 'kept'); SAVEPOINT s; "
                            "INSERT INTO wk_chg_rb VALUES (3, 'gone'); ROLLBACK TO SAVEPOINT s; "
                            "INSERT INTO wk_chg_rb VALUES (4, 'kept'); COMMIT"));
    wk_pq_changes *s = NULL;
    wk_error err = {0};
    CHECK_OK(changes_open(NULL, "wk_chg_rb", "wk_chg_rb_pub", 0, NULL, &s, &err));
    changes_run r;
    CHECK_OK(changes_collect(s, 1, 0, 60, &r, &err));
    CHECK_EQ(r.changes, 2u);
    CHECK_EQ(changes_count(&r, "gone"), 0u);
    CHECK_EQ(changes_count(&r, "\"v\":\"kept\""), 2u);
    changes_run_free(&r);
    wk_pq_changes_free(s);
    changes_drop_slot(NULL, "wk_chg_rb");
}

WK_TEST(test_changes_streamed_transaction_is_buffered_until_commit)
{
    NEED_SERVER();
    CHECK(changes_sql(NULL, "DROP TABLE IF EXISTS wk_chg_big; CREATE TABLE wk_chg_big "
                            "(id int PRIMARY KEY, pad text)"));
    CHECK(fresh_slot("wk_chg_big", "wk_chg_big_pub", "wk_chg_big"));
    /* 64kB of decoding memory: the server streams these while they are in progress. An
     * aborted one, then a committed one with an aborted subtransaction in its middle. */
    CHECK(changes_sql(NULL, "BEGIN; INSERT INTO wk_chg_big SELECT g, repeat('x', 100) "
                            "FROM generate_series(1, 20000) g; ROLLBACK"));
    CHECK(changes_sql(NULL,
                      "BEGIN; INSERT INTO wk_chg_big SELECT g, 'a' FROM generate_series(1, 20000) g; "
                      "SAVEPOINT s; INSERT INTO wk_chg_big SELECT g, 'gone' "
                      "FROM generate_series(20001, 30000) g; ROLLBACK TO SAVEPOINT s; "
                      "INSERT INTO wk_chg_big SELECT g, 'b' FROM generate_series(30001, 40000) g; "
                      "COMMIT"));
    wk_pq_changes *s = NULL;
    wk_error err = {0};
    CHECK_OK(changes_open(NULL, "wk_chg_big", "wk_chg_big_pub", 0, "64kB", &s, &err));
    changes_run r;
    CHECK_OK(changes_collect(s, 1, 0, 120, &r, &err));
    CHECK_EQ(r.changes, 30000u);
    CHECK_EQ(r.streamed, 30000u); /* it came streamed, and was handed over at its commit */
    CHECK_EQ(changes_count(&r, "gone"), 0u);
    CHECK_EQ(changes_count(&r, "\"pad\":\"b\""), 10000u);
    changes_run_free(&r);
    wk_pq_changes_free(s);
    changes_drop_slot(NULL, "wk_chg_big");
}

WK_TEST(test_changes_missing_slot_is_not_found)
{
    NEED_SERVER();
    CHECK(changes_sql(NULL, "DROP TABLE IF EXISTS wk_chg_ns; CREATE TABLE wk_chg_ns (id int); "
                            "DROP PUBLICATION IF EXISTS wk_chg_ns_pub; "
                            "CREATE PUBLICATION wk_chg_ns_pub FOR TABLE wk_chg_ns"));
    changes_drop_slot(NULL, "wk_chg_no_such_slot");
    wk_pq_changes *s = NULL;
    wk_error err = {0};
    CHECK_STATUS(changes_open(NULL, "wk_chg_no_such_slot", "wk_chg_ns_pub", 0, NULL, &s, &err),
                 WK_ERR_NOT_FOUND);
    CHECK(strstr(wk_pq_changes_message(s), "wk_chg_no_such_slot") != NULL);
    wk_pq_changes_free(s);
    /* and a publication that does not exist, with --create: nothing is created */
    s = NULL;
    CHECK_STATUS(changes_open(NULL, "wk_chg_no_such_slot", "wk_chg_no_such_pub",
                              WK_PQ_CHANGES_CREATE_SLOT, NULL, &s, &err),
                 WK_ERR_NOT_FOUND);
    CHECK(strstr(wk_pq_changes_message(s), "wk_chg_no_such_pub") != NULL);
    wk_pq_changes_free(s);
}

WK_TEST(test_changes_publication_not_covering_a_table_gives_only_its_tables)
{
    NEED_SERVER();
    CHECK(changes_sql(NULL, "DROP TABLE IF EXISTS wk_chg_in, wk_chg_out; "
                            "CREATE TABLE wk_chg_in (id int PRIMARY KEY); "
                            "CREATE TABLE wk_chg_out (id int PRIMARY KEY)"));
    CHECK(fresh_slot("wk_chg_cov", "wk_chg_cov_pub", "wk_chg_in"));
    CHECK(changes_sql(NULL, "INSERT INTO wk_chg_out VALUES (1)"));
    CHECK(changes_sql(NULL, "INSERT INTO wk_chg_in VALUES (2)"));
    CHECK(changes_sql(NULL, "INSERT INTO wk_chg_out VALUES (3); INSERT INTO wk_chg_in VALUES (4)"));
    wk_pq_changes *s = NULL;
    wk_error err = {0};
    CHECK_OK(changes_open(NULL, "wk_chg_cov", "wk_chg_cov_pub", 0, NULL, &s, &err));
    changes_run r;
    CHECK_OK(changes_collect(s, 2, 0, 60, &r, &err));
    CHECK_EQ(r.changes, 2u);
    CHECK_EQ(changes_count(&r, "wk_chg_out"), 0u);
    CHECK_EQ(changes_count(&r, "\"table\":\"public.wk_chg_in\""), 2u);
    changes_run_free(&r);
    wk_pq_changes_free(s);
    changes_drop_slot(NULL, "wk_chg_cov");
}

WK_TEST(test_changes_failed_consumer_gets_the_transaction_again)
{
    NEED_SERVER();
    CHECK(changes_sql(NULL, "DROP TABLE IF EXISTS wk_chg_again; CREATE TABLE wk_chg_again "
                            "(id int PRIMARY KEY)"));
    CHECK(fresh_slot("wk_chg_again", "wk_chg_again_pub", "wk_chg_again"));
    CHECK(changes_sql(NULL, "INSERT INTO wk_chg_again VALUES (1)"));
    CHECK(changes_sql(NULL, "INSERT INTO wk_chg_again SELECT generate_series(2, 4)"));
    wk_pq_changes *s = NULL;
    wk_error err = {0};
    CHECK_OK(changes_open(NULL, "wk_chg_again", "wk_chg_again_pub", 0, NULL, &s, &err));
    uint64_t start = wk_pq_changes_confirmed(s);
    /* the consumer fails at the third change, in the middle of the second transaction */
    changes_run r;
    CHECK_STATUS(changes_collect(s, 0, 3, 60, &r, &err), WK_ERR_IO);
    CHECK_EQ(r.commits, 1u);
    changes_run_free(&r);
    uint64_t confirmed = wk_pq_changes_confirmed(s);
    CHECK(confirmed > start); /* the first commit, not the second */
    wk_pq_changes_free(s);
    /* the close ended the stream with the server, so the slot holds that position at once (a
     * close that reset the socket could lose the last status update: txn 1 would come again) */
    char lsn[32], check[512];
    wk_pq_lsn_format(confirmed, lsn);
    snprintf(check, sizeof check,
             "DO $$ BEGIN IF (SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE "
             "slot_name = 'wk_chg_again') IS DISTINCT FROM '%s'::pg_lsn THEN RAISE EXCEPTION "
             "'the slot did not take %s'; END IF; END $$",
             lsn, lsn);
    CHECK(changes_sql(NULL, check));
    /* the next run starts after the first transaction: all of the second comes again */
    CHECK_OK(changes_open(NULL, "wk_chg_again", "wk_chg_again_pub", 0, NULL, &s, &err));
    CHECK_OK(changes_collect(s, 1, 0, 60, &r, &err));
    CHECK_EQ(r.changes, 3u);
    CHECK_EQ(changes_count(&r, "\"new\":{\"id\":1}"), 0u);
    CHECK_EQ(changes_count(&r, "\"new\":{\"id\":2}"), 1u);
    changes_run_free(&r);
    wk_pq_changes_free(s);
    changes_drop_slot(NULL, "wk_chg_again");
}

WK_TEST(test_changes_types_made_while_streaming_are_read)
{
    NEED_SERVER();
    CHECK(changes_sql(NULL, "DROP TABLE IF EXISTS wk_chg_newtype; DROP TYPE IF EXISTS wk_chg_mood; "
                            "DROP TYPE IF EXISTS wk_chg_pair; "
                            "CREATE TABLE wk_chg_newtype (id int PRIMARY KEY)"));
    CHECK(fresh_slot("wk_chg_newtype", "wk_chg_newtype_pub", "wk_chg_newtype"));
    wk_pq_changes *s = NULL;
    wk_error err = {0};
    CHECK_OK(changes_open(NULL, "wk_chg_newtype", "wk_chg_newtype_pub", 0, NULL, &s, &err));
    /* an enum and a composite the stream's catalog snapshot has never seen */
    CHECK(changes_sql(NULL, "CREATE TYPE wk_chg_mood AS ENUM ('sad', 'happy'); "
                            "CREATE TYPE wk_chg_pair AS (a int, b text); "
                            "ALTER TABLE wk_chg_newtype ADD COLUMN m wk_chg_mood, "
                            "ADD COLUMN p wk_chg_pair"));
    CHECK(changes_sql(NULL, "INSERT INTO wk_chg_newtype VALUES (1, 'happy', ROW(7, 'x'))"));
    changes_run r;
    CHECK_OK(changes_collect(s, 1, 0, 60, &r, &err));
    if (r.changes != 1) {
        fprintf(stderr, "%s\n", wk_pq_changes_message(s));
    }
    CHECK_EQ(r.changes, 1u);
    CHECK_EQ(changes_count(&r, "\"new\":{\"id\":1,\"m\":\"happy\",\"p\":{\"a\":7,\"b\":\"x\"}}"), 1u);
    changes_run_free(&r);
    wk_pq_changes_free(s);
    changes_drop_slot(NULL, "wk_chg_newtype");
}
