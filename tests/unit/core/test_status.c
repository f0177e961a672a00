/* Status names and wk_error_set; the generic transcoder's error reporting. */
#include "wirekit/core.h"
#include "wirekit/event.h"
#include "wk_test.h"

WK_TEST(test_status_every_code_has_a_distinct_name)
{
    for (int i = WK_OK; i <= WK_ERR_EOF; i++) {
        const char *s = wk_status_str((wk_status)i);
        CHECK(strcmp(s, "unknown status") != 0);
        for (int j = WK_OK; j < i; j++) {
            CHECK(strcmp(s, wk_status_str((wk_status)j)) != 0);
        }
    }
    CHECK_STR(wk_status_str((wk_status)999), "unknown status");
}

WK_TEST(test_error_set_fills_report_and_tolerates_null)
{
    wk_error e;
    CHECK_STATUS(wk_error_set(&e, WK_ERR_SYNTAX, 17, "bad byte"), WK_ERR_SYNTAX);
    CHECK_EQ(e.offset, 17);
    CHECK_STR(e.msg, "bad byte");
    CHECK_STATUS(wk_error_set(&e, WK_ERR_RANGE, 3, NULL), WK_ERR_RANGE);
    CHECK_STR(e.msg, "value out of range");
    CHECK_STATUS(wk_error_set(NULL, WK_ERR_TYPE, 0, NULL), WK_ERR_TYPE);
}

/* A scripted source and a recording sink to check wk_transcode's contract. */
typedef struct {
    int n, fail_at;
} script;
static wk_status script_next(void *self, wk_event *ev)
{
    script *s = self;
    if (s->n == s->fail_at) {
        return WK_ERR_SYNTAX;
    }
    if (s->n == 3) {
        return WK_ERR_EOF;
    }
    ev->type = WK_EV_UINT;
    ev->v.u = (uint64_t)s->n++;
    return WK_OK;
}
static size_t script_offset(const void *self)
{
    return (size_t)((const script *)self)->n;
}
static wk_status script_error(const void *self, wk_error *err)
{
    return wk_error_set(err, WK_ERR_SYNTAX, script_offset(self), "scripted failure");
}
typedef struct {
    uint64_t sum;
    int count;
} record;
static wk_status record_event(void *self, const wk_event *ev)
{
    record *r = self;
    r->sum += ev->v.u;
    r->count++;
    return WK_OK;
}
static wk_status record_error(const void *self, wk_error *err)
{
    (void)self;
    return wk_error_set(err, WK_ERR_LIMIT, 0, "unused");
}

WK_TEST(test_transcode_copies_until_eof_and_reports_source_errors)
{
    script s = {0, -1};
    record r = {0, 0};
    wk_source src = {script_next, script_offset, script_error, &s};
    wk_sink dst = {record_event, record_error, &r};
    CHECK_OK(wk_transcode(&src, &dst, NULL));
    CHECK_EQ(r.count, 3);
    CHECK_EQ(r.sum, 3);

    script bad = {0, 2};
    src.self = &bad;
    wk_error e;
    CHECK_STATUS(wk_transcode(&src, &dst, &e), WK_ERR_SYNTAX);
    CHECK_EQ(e.offset, 2);
    CHECK_STR(e.msg, "scripted failure");
}
