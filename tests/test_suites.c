/* test_suites.c: third-party JSON conformance inputs through the model
 * loader.  Every n_*.json of ../shared/suites/JSONTestSuite/test_parsing and
 * every input of ../shared/suites/jansson/test/suites/invalid and
 * invalid-unicode must be rejected with status 1 and a message carrying a
 * FILE:LINE:COL position, without crashing (run it under `make sanitize`).
 * Skipped cleanly when ../shared is absent. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include "inputs/model.h"
#include "testutil.h"

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Loads one file; it must fail with status 1 at a known position. */
static void must_reject(const char *path)
{
    planner_error err = PLANNER_ERROR_INIT;
    model *m = NULL;
    char buf[1400], prefix[1100];
    planner_status rc = model_load(&m, NULL, path, NULL, &err);
    error_format(&err, buf, sizeof buf);
    ck_assert_msg(rc == PLANNER_E_INPUT, "%s: status %d: %s", path, rc, buf);
    ck_assert_ptr_null(m);
    ck_assert_msg(err.line > 0 && err.col > 0, "%s: no position: %s", path, buf);
    snprintf(prefix, sizeof prefix, "planner: %s:%d:%d: ", path, err.line, err.col);
    ck_assert_msg(starts_with(buf, prefix) && strlen(buf) > strlen(prefix), "%s: %s", path,
                  buf);
}

START_TEST(json_test_suite)
{
    const char *shared = tu_shared_dir();
    char dir[600], path[1100];
    DIR *d;
    struct dirent *e;
    int n = 0;
    if (shared == NULL) {
        tu_skip("test_suites json_test_suite", "../shared absent");
        return;
    }
    snprintf(dir, sizeof dir, "%s/suites/JSONTestSuite/test_parsing", shared);
    d = opendir(dir);
    if (d == NULL) {
        tu_skip("test_suites json_test_suite", "../shared/suites/JSONTestSuite absent");
        return;
    }
    while ((e = readdir(d)) != NULL) {
        if (!starts_with(e->d_name, "n_"))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        must_reject(path);
        n++;
    }
    closedir(d);
    ck_assert_int_ge(n, 150);
}
END_TEST

static int jansson_dir(const char *shared, const char *sub)
{
    char dir[600], path[1100];
    DIR *d;
    struct dirent *e;
    int n = 0;
    snprintf(dir, sizeof dir, "%s/suites/jansson/test/suites/%s", shared, sub);
    d = opendir(dir);
    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL) {
        FILE *fp;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s/input", dir, e->d_name);
        fp = fopen(path, "rb");
        if (fp == NULL)
            continue;
        fclose(fp);
        must_reject(path);
        n++;
    }
    closedir(d);
    return n;
}

START_TEST(jansson_invalid)
{
    const char *shared = tu_shared_dir();
    int n;
    if (shared == NULL) {
        tu_skip("test_suites jansson_invalid", "../shared absent");
        return;
    }
    n = jansson_dir(shared, "invalid") + jansson_dir(shared, "invalid-unicode");
    ck_assert_int_ge(n, 40);
}
END_TEST

int main(void)
{
    Suite *s;
    if (tu_shared_dir() == NULL) {
        tu_skip("test_suites", "../shared absent (JSONTestSuite, jansson's test inputs)");
        return TU_EXIT_SKIP;
    }
    s = suite_create("suites");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, json_test_suite);
    tcase_add_test(tc, jansson_invalid);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
