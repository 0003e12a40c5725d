/* test_error.c: the error type's first-wins rule and its printed form. */
#include <math.h>
#include <string.h>
#include "base/error.h"
#include "testutil.h"

START_TEST(prints_file_line_col)
{
    planner_error err = PLANNER_ERROR_INIT;
    char buf[1024];
    ck_assert_int_eq(error_set(&err, PLANNER_E_INPUT, "m.json", 3, 7, "model.hidden",
                               "must be > 0"), PLANNER_E_INPUT);
    error_format(&err, buf, sizeof buf);
    ck_assert_str_eq(buf, "planner: m.json:3:7: must be > 0");
}
END_TEST

START_TEST(first_error_wins)
{
    planner_error err = PLANNER_ERROR_INIT;
    char buf[1024];
    error_set(&err, PLANNER_E_INPUT, "a.yaml", 1, 2, NULL, "first");
    error_set(&err, PLANNER_E_IO, "b.yaml", 5, 6, NULL, "second");
    ck_assert_int_eq(err.status, PLANNER_E_INPUT);
    error_format(&err, buf, sizeof buf);
    ck_assert_str_eq(buf, "planner: a.yaml:1:2: first");
}
END_TEST

START_TEST(unknown_position_left_out)
{
    planner_error err = PLANNER_ERROR_INIT;
    char buf[1024];
    error_set(&err, PLANNER_E_IO, "x", 0, 0, NULL, "cannot open");
    error_format(&err, buf, sizeof buf);
    ck_assert_str_eq(buf, "planner: x: cannot open");
    error_clear(&err);
    error_set(&err, PLANNER_E_USAGE, NULL, 0, 0, NULL, "bad");
    error_format(&err, buf, sizeof buf);
    ck_assert_str_eq(buf, "planner: bad");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("error");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, prints_file_line_col);
    tcase_add_test(tc, first_error_wins);
    tcase_add_test(tc, unknown_position_left_out);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
