/* test_units.c: the quantity parser and formatter (units.c) against
 * hand-converted values: 400 Gb/s = 400e9 / 8 = 50e9 bytes/s, 80 GiB =
 * 80 * 2^30 bytes, 5 us = 5e-6 s. */
#include <math.h>
#include <string.h>
#include "testutil.h"
#include "base/units.h"

static double parse_ok(const char *text, unit_kind kind)
{
    planner_error err = PLANNER_ERROR_INIT;
    double v = -1;
    planner_status rc = units_parse(&v, text, kind, false, &err);
    ck_assert_msg(rc == PLANNER_OK, "'%s' rejected: %s", text, err.msg);
    return v;
}

static void parse_bad(const char *text, unit_kind kind, const char *needle)
{
    planner_error err = PLANNER_ERROR_INIT;
    double v = 12345;
    planner_status rc = units_parse(&v, text, kind, false, &err);
    ck_assert_msg(rc == PLANNER_E_INPUT && err.status == rc, "'%s' accepted as %g", text, v);
    ck_assert_msg(v == 12345, "'%s' wrote the output on error", text);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "'%s': message '%s' lacks '%s'", text,
                  err.msg, needle);
}

START_TEST(bandwidth_bits_and_bytes)
{
    ck_assert_rel(parse_ok("400Gbps", UNIT_BANDWIDTH), 50e9, 1e-12);
    ck_assert_rel(parse_ok("400 Gb/s", UNIT_BANDWIDTH), 50e9, 1e-12);
    ck_assert_rel(parse_ok("450GB/s", UNIT_BANDWIDTH), 450e9, 1e-12);
    ck_assert_rel(parse_ok("450GBps", UNIT_BANDWIDTH), 450e9, 1e-12);
    ck_assert_rel(parse_ok("50Gbps", UNIT_BANDWIDTH), 6.25e9, 1e-12);
    ck_assert_rel(parse_ok("2.5Gbps", UNIT_BANDWIDTH), 312.5e6, 1e-12);
    ck_assert_rel(parse_ok("100Mbps", UNIT_BANDWIDTH), 12.5e6, 1e-12);
    ck_assert_rel(parse_ok("1.6TB/s", UNIT_BANDWIDTH), 1.6e12, 1e-12);
    ck_assert_rel(parse_ok("3.2Tbps", UNIT_BANDWIDTH), 400e9, 1e-12);
    ck_assert_rel(parse_ok("25e9", UNIT_BANDWIDTH), 25e9, 1e-12);   /* bare: bytes/s */
}
END_TEST

START_TEST(time_size_flops)
{
    ck_assert_rel(parse_ok("5us", UNIT_TIME), 5e-6, 1e-12);
    ck_assert_rel(parse_ok("5 \xC2\xB5s", UNIT_TIME), 5e-6, 1e-12);
    ck_assert_rel(parse_ok("3.4us", UNIT_TIME), 3.4e-6, 1e-12);
    ck_assert_rel(parse_ok("2ms", UNIT_TIME), 2e-3, 1e-12);
    ck_assert_rel(parse_ok("10ns", UNIT_TIME), 1e-8, 1e-12);
    ck_assert_rel(parse_ok("1.5", UNIT_TIME), 1.5, 1e-12);
    ck_assert_rel(parse_ok("80GB", UNIT_SIZE), 80e9, 1e-12);
    ck_assert_rel(parse_ok("80GiB", UNIT_SIZE), 85899345920.0, 1e-12);
    ck_assert_rel(parse_ok("512MiB", UNIT_SIZE), 536870912.0, 1e-12);
    ck_assert_rel(parse_ok("989TFLOPS", UNIT_FLOPS), 989e12, 1e-12);
    ck_assert_rel(parse_ok("989 TFLOP/s", UNIT_FLOPS), 989e12, 1e-12);
    ck_assert_rel(parse_ok("1.9PFLOPS", UNIT_FLOPS), 1.9e15, 1e-12);
}
END_TEST

START_TEST(rejects)
{
    planner_error err = PLANNER_ERROR_INIT;
    double v = -1;
    parse_bad("", UNIT_BANDWIDTH, "expected a bandwidth");
    parse_bad("fast", UNIT_BANDWIDTH, "expected a bandwidth");
    parse_bad("400Gbs", UNIT_BANDWIDTH, "unknown unit");
    parse_bad("400gbps", UNIT_BANDWIDTH, "unknown unit");   /* case-sensitive */
    parse_bad("5 parsecs", UNIT_TIME, "unknown unit");
    parse_bad("80GB", UNIT_TIME, "unknown unit");           /* wrong kind */
    parse_bad("-1us", UNIT_TIME, "must be > 0");
    parse_bad("0Gbps", UNIT_BANDWIDTH, "must be > 0");
    parse_bad("inf", UNIT_BANDWIDTH, "expected");
    parse_bad("nan", UNIT_SIZE, "expected");
    parse_bad("0x10", UNIT_SIZE, "unknown unit");
    parse_bad("1e400", UNIT_SIZE, "out of range");
    parse_bad("1e999TFLOPS", UNIT_FLOPS, "out of range");
    parse_bad(".", UNIT_SIZE, "expected");
    ck_assert_int_eq(units_parse(&v, "0TFLOPS", UNIT_FLOPS, true, &err), PLANNER_OK);
    ck_assert(v == 0);
}
END_TEST

START_TEST(format)
{
    char buf[64];
    units_format(1.23e12, UNIT_BANDWIDTH, buf, sizeof buf);
    ck_assert_str_eq(buf, "1.23 TB/s");
    units_format(450e9, UNIT_BANDWIDTH, buf, sizeof buf);
    ck_assert_str_eq(buf, "450 GB/s");
    units_format(5e-6, UNIT_TIME, buf, sizeof buf);
    ck_assert_str_eq(buf, "5.00 us");
    units_format(79.6 * 1073741824.0, UNIT_SIZE, buf, sizeof buf);
    ck_assert_str_eq(buf, "79.6 GiB");
    units_format(989e12, UNIT_FLOPS, buf, sizeof buf);
    ck_assert_str_eq(buf, "989 TFLOP/s");
    units_format(2.5e-3, UNIT_TIME, buf, sizeof buf);
    ck_assert_str_eq(buf, "2.50 ms");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("units");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, bandwidth_bits_and_bytes);
    tcase_add_test(tc, time_size_flops);
    tcase_add_test(tc, rejects);
    tcase_add_test(tc, format);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
