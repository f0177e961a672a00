/*
 * uuid, PostgreSQL's uuid.c, in both wire formats, as a 16-byte wk_pg_uuid.
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> the codec below -> codec_generic.c's
 * generic functions over wk__pg_type_uuid -> a wk_pg_uuid, PostgreSQL text, an event or a
 * value.
 */
#include "pg/pg_codec.h"

static const char hexdig[] = "0123456789abcdef";

/* uuid_recv: the 16 bytes. */
static wk_status uuid_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                               wk_error *err)
{
    (void)a;
    if (n != 16) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "binary uuid must be 16 bytes");
    }
    memcpy(v->uuid.b, p, 16);
    return WK_OK;
}

/* uuid_in. */
static wk_status uuid_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                wk_error *err)
{
    (void)a;
    /* string_to_uuid: optional braces, an optional hyphen after any group of four digits. */
    size_t i = 0, end = n;
    bool braces = n > 0 && p[0] == '{';
    if (braces) {
        if (n < 2 || p[n - 1] != '}') {
            return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "invalid input syntax for type uuid");
        }
        i = 1;
        end = n - 1;
    }
    for (int k = 0; k < 16; k++) {
        if (i + 2 > end) {
            return wk__pg_fail(err, WK_ERR_SYNTAX, i, "invalid input syntax for type uuid");
        }
        int hi = wk__pg_hexval(p[i]), lo = wk__pg_hexval(p[i + 1]);
        if (hi < 0 || lo < 0) {
            return wk__pg_fail(err, WK_ERR_SYNTAX, i, "invalid input syntax for type uuid");
        }
        v->uuid.b[k] = (uint8_t)(hi << 4 | lo);
        i += 2;
        if (k % 2 == 1 && k < 15 && i < end && p[i] == '-') {
            i++;
        }
    }
    if (i != end) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, i, "invalid input syntax for type uuid");
    }
    return WK_OK;
}

/* uuid_send. */
static wk_status uuid_write_bin(const wk__pg_native *v, wk_buf *out)
{
    return wk_buf_append(out, v->uuid.b, 16);
}

/* uuid_out: 8-4-4-4-12 lower-case hex digits. */
static wk_status uuid_write_text(const wk__pg_native *v, wk_buf *out)
{
    char t[36];
    size_t o = 0;
    for (int k = 0; k < 16; k++) {
        if (k == 4 || k == 6 || k == 8 || k == 10) {
            t[o++] = '-';
        }
        t[o++] = hexdig[v->uuid.b[k] >> 4];
        t[o++] = hexdig[v->uuid.b[k] & 15];
    }
    return wk_buf_append(out, t, o);
}

/* The operations table of the generic codec functions. */
const wk__pg_type wk__pg_type_uuid = {WK__PG_CLASS_STRING, uuid_read_bin, uuid_read_text,
                                      uuid_write_bin, uuid_write_text, 0, 0};

/* ---- the codec ---- */

OIDS(o_uuid, WK_PG_OID_UUID);
OIDS(a_uuid, WK_PG_OID_UUID_ARRAY);

SIMPLE_CODEC(wk__pg_codec_uuid, "uuid", o_uuid, a_uuid, UUID, true, wk__pg_type_uuid);
