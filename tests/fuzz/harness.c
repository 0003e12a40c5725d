/* harness.c: the bodies of the fuzz targets (see harness.h).
 *
 * Each harness copies the input into an allocation of exactly its size, runs
 * one parser, and checks the outcome against the contract in the parser's
 * header.  Invariant failures are reported through `msg`; the libFuzzer entry
 * points abort on them and the replay test fails on them.  Nothing here keeps
 * state between calls. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "harness.h"
#include "search.h"
#include "units.h"

#define PARSER_MSG_SIZE 64   /* small on purpose: truncation must be safe */

static int fail(char *msg, int msg_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *msg, int msg_size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, (size_t)msg_size, fmt, ap);
    va_end(ap);
    return -1;
}

/* The input as a C string (embedded NULs end it early), in an exact-size
 * allocation; NULL if out of memory. */
static char *dup_cstr(const uint8_t *data, size_t size)
{
    char *s = pl_malloc(size + 1);
    if (s == NULL)
        return NULL;
    if (size > 0)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* A parser's message buffer: set, NUL-terminated inside, non-empty. */
static int msg_ok(const char *m, int size)
{
    return memchr(m, '\0', (size_t)size) != NULL && m[0] != '\0';
}

void harness_init(void)
{
    alloc_init();
}

int harness_constraints(const uint8_t *data, size_t size, char *msg, int msg_size)
{
    strategy_constraints c = STRATEGY_CONSTRAINTS_INIT;
    char *text = dup_cstr(data, size);
    char *pmsg = pl_malloc(PARSER_MSG_SIZE);
    int rc, ret = 0;

    if (text == NULL || pmsg == NULL) {
        ret = fail(msg, msg_size, "out of memory in the harness");
        goto cleanup;
    }
    memset(pmsg, 0x5a, PARSER_MSG_SIZE);
    rc = constraints_parse(text, &c, pmsg, PARSER_MSG_SIZE);
    if (rc != 0 && rc != -1) {
        ret = fail(msg, msg_size, "constraints_parse returned %d (not 0 or -1)", rc);
    } else if (rc == -1) {
        if (!msg_ok(pmsg, PARSER_MSG_SIZE))
            ret = fail(msg, msg_size, "constraints_parse failed without a message");
    } else {
        const struct { const char *key; int v, lo; } deg[] = {
            {"tp", c.tp, 1}, {"pp", c.pp, 1}, {"dp", c.dp, 1}, {"cp", c.cp, 1},
            {"ep", c.ep, 1}, {"vpp", c.vpp, 1}, {"mbs", c.mbs, 1}, {"gpus", c.gpus, 1}};
        for (size_t i = 0; i < sizeof deg / sizeof deg[0] && ret == 0; i++)
            if (deg[i].v != -1 && deg[i].v < deg[i].lo)
                ret = fail(msg, msg_size, "accepted %s=%d", deg[i].key, deg[i].v);
        if (ret == 0 && (c.sp < -1 || c.sp > 1))
            ret = fail(msg, msg_size, "accepted sp=%d", c.sp);
        if (ret == 0 && (c.recompute < -1 || c.recompute > RECOMPUTE_FULL))
            ret = fail(msg, msg_size, "accepted recompute=%d", c.recompute);
        if (ret == 0 && (c.zero < -1 || c.zero > 3))
            ret = fail(msg, msg_size, "accepted zero=%d", c.zero);
    }
cleanup:
    pl_free(pmsg);
    pl_free(text);
    return ret;
}

int harness_units(const uint8_t *data, size_t size, char *msg, int msg_size)
{
    unit_kind kind;
    bool allow_zero;
    char *text = NULL, *pmsg = NULL, fmt[64];
    double v = -12345.0;
    int rc, ret = 0;

    if (size < 1)
        return 0;
    kind = (unit_kind)(data[0] & 3);
    allow_zero = (data[0] & 4) != 0;
    text = dup_cstr(data + 1, size - 1);
    pmsg = pl_malloc(PARSER_MSG_SIZE);
    if (text == NULL || pmsg == NULL) {
        ret = fail(msg, msg_size, "out of memory in the harness");
        goto cleanup;
    }
    memset(pmsg, 0x5a, PARSER_MSG_SIZE);
    rc = units_parse(text, kind, allow_zero, &v, pmsg, PARSER_MSG_SIZE);
    if (rc == 0) {
        if (!isfinite(v) || v < 0 || (v == 0 && !allow_zero))
            ret = fail(msg, msg_size, "units_parse(kind %d, zero %d) accepted '%.40s' as %g",
                       (int)kind, (int)allow_zero, text, v);
        units_format(v, kind, fmt, (int)sizeof fmt);
        if (ret == 0 && memchr(fmt, '\0', sizeof fmt) == NULL)
            ret = fail(msg, msg_size, "units_format left its buffer unterminated");
    } else if (rc != -1) {
        ret = fail(msg, msg_size, "units_parse returned %d", rc);
    } else if (!msg_ok(pmsg, PARSER_MSG_SIZE)) {
        ret = fail(msg, msg_size, "units_parse failed without a message");
    }
cleanup:
    pl_free(pmsg);
    pl_free(text);
    return ret;
}

const harness_target harness_targets[] = {
    {"constraints", harness_constraints},
    {"units", harness_units},
};
const size_t harness_target_count = sizeof harness_targets / sizeof harness_targets[0];
