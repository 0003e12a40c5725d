/* test_bad_inputs.c: the data-driven bad-input set.
 *
 * Every tests/bad/NAME.json (a model) and tests/bad/NAME.yaml (a cluster)
 * comes with tests/bad/NAME.expect: the one line the planner must print,
 * "planner: FILE:LINE:COL: message".  Each must fail with status 1 and that
 * exact text.  Also: the input size limit, unreadable files (status 4), and
 * every shipped config and cluster loading cleanly. */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/alloc.h"
#include "inputs/cluster.h"
#include "base/fileio.h"
#include "inputs/model.h"
#include "testutil.h"

#define BAD_DIR "tests/bad"

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcmp(s + n - k, suffix) == 0;
}

/* Loads `path` by its extension; returns the status, message in buf. */
static planner_status load_any(const char *path, char *buf, size_t size)
{
    planner_error err = PLANNER_ERROR_INIT;
    planner_status rc;
    if (has_suffix(path, ".yaml")) {
        cluster *c = NULL;
        rc = cluster_load(&c, path, &err);
        ck_assert(rc == PLANNER_OK ? c != NULL : c == NULL);
        cluster_free(c);
    } else {
        model *m = NULL;
        rc = model_load(&m, NULL, path, NULL, &err);
        ck_assert(rc == PLANNER_OK ? m != NULL : m == NULL);
        model_free(m);
    }
    error_format(&err, buf, size);
    return rc;
}

START_TEST(each_bad_input)
{
    DIR *d = opendir(BAD_DIR);
    struct dirent *e;
    int n = 0;
    ck_assert_msg(d != NULL, "cannot open " BAD_DIR);
    while ((e = readdir(d)) != NULL) {
        char path[512], expect_path[512], got[1400], expect[1400] = "";
        FILE *fp;
        size_t len;
        if (!has_suffix(e->d_name, ".json") && !has_suffix(e->d_name, ".yaml"))
            continue;
        snprintf(path, sizeof path, "%s/%s", BAD_DIR, e->d_name);
        snprintf(expect_path, sizeof expect_path, "%s/%.*s.expect", BAD_DIR,
                 (int)(strlen(e->d_name) - 5), e->d_name);
        fp = fopen(expect_path, "r");
        ck_assert_msg(fp != NULL, "%s has no .expect file", path);
        len = fread(expect, 1, sizeof expect - 1, fp);
        fclose(fp);
        expect[len] = '\0';
        while (len > 0 && expect[len - 1] == '\n')
            expect[--len] = '\0';
        ck_assert_msg(load_any(path, got, sizeof got) == PLANNER_E_INPUT, "%s: status", path);
        ck_assert_msg(strcmp(got, expect) == 0, "%s:\n  got    %s\n  expect %s", path, got,
                      expect);
        n++;
    }
    closedir(d);
    ck_assert_int_ge(n, 40);
}
END_TEST

START_TEST(size_limit)
{
    char path[] = "/tmp/planner-test-big-XXXXXX";
    char got[1400], expect[1400];
    int fd = mkstemp(path);
    FILE *fp;
    long i;
    ck_assert_int_ge(fd, 0);
    fp = fdopen(fd, "w");
    ck_assert_ptr_nonnull(fp);
    fputc('{', fp);
    for (i = 0; i < INPUT_MAX_BYTES; i++)
        fputc(' ', fp);
    fputc('}', fp);
    fclose(fp);
    ck_assert_int_eq(load_any(path, got, sizeof got), PLANNER_E_INPUT);
    snprintf(expect, sizeof expect, "planner: %s: file larger than the limit of %ld bytes", path,
             (long)INPUT_MAX_BYTES);
    ck_assert_str_eq(got, expect);
    unlink(path);
}
END_TEST

START_TEST(unreadable)
{
    char got[1400];
    ck_assert_int_eq(load_any("tests/bad/no-such-file.json", got, sizeof got), PLANNER_E_IO);
    ck_assert_str_eq(got, "planner: tests/bad/no-such-file.json: cannot open: No such file or "
                          "directory");
    ck_assert_int_eq(load_any("tests/bad/no-such-file.yaml", got, sizeof got), PLANNER_E_IO);
    ck_assert_int_eq(load_any("tests", got, sizeof got), PLANNER_E_IO);
}
END_TEST

/* Loads a model or cluster and returns a fingerprint of what was read
 * (parameters or GPUs), 0 on error. */
static double fingerprint(const char *path, planner_status *rc, char *buf, size_t size)
{
    planner_error err = PLANNER_ERROR_INIT;
    double fp = 0;
    if (has_suffix(path, ".yaml")) {
        cluster *c = NULL;
        *rc = cluster_load(&c, path, &err);
        if (c != NULL)
            fp = cluster_total_gpus(c) + c->group[0].inter_bytes_per_s;
        cluster_free(c);
    } else {
        model *m = NULL;
        *rc = model_load(&m, NULL, path, NULL, &err);
        if (m != NULL)
            fp = model_param_count(m, 4096) + m->layer[m->layers - 1].ffn_hidden;
        model_free(m);
    }
    error_format(&err, buf, size);
    return fp;
}

/* The allocations json_loadb makes for `path` lie in (*first, *last]:
 * file_read_all's come first, then jansson's. */
static void jansson_window(const char *path, long *first, long *last)
{
    planner_error err = PLANNER_ERROR_INIT;
    json_error_t jerr;
    char *text = NULL;
    size_t len = 0;
    json_t *root;
    *first = *last = 0;
    if (has_suffix(path, ".yaml"))
        return;   /* libyaml allocates on its own */
    alloc_fail_at(0);
    ck_assert_int_eq(file_read_all(&text, &len, path, INPUT_MAX_BYTES, &err), PLANNER_OK);
    *first = alloc_count();
    alloc_fail_at(0);
    root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    *last = *first + alloc_count();
    ck_assert_ptr_nonnull(root);
    json_decref(root);
    pl_free(text);
}

/* Allocation failures while loading end in a clean "out of memory", never
 * a crash or a half-read input.  jansson 2.14 absorbs some failures and
 * recovers (then the result must equal the normal one), and crashes on
 * others (strbuffer_steal_value leaves a NULL buffer of size 16 behind when
 * its malloc fails), so failures inside json_loadb itself are not injected. */
START_TEST(allocation_failures)
{
    static const char *const files[] = {"configs/deepseek-v3.json",
                                        "configs/uneven-gpt-13b.json",
                                        "clusters/amp-3xp3-1xg4dn.yaml"};
    size_t f;
    alloc_init();
    for (f = 0; f < sizeof files / sizeof files[0]; f++) {
        char got[1400];
        planner_status rc;
        double ref = fingerprint(files[f], &rc, got, sizeof got);
        long nth, first, last;
        ck_assert_int_eq(rc, PLANNER_OK);
        jansson_window(files[f], &first, &last);
        for (nth = 1; nth < 10000; nth++) {
            double fp;
            if (nth > first && nth <= last)
                continue;
            alloc_fail_at(nth);
            fp = fingerprint(files[f], &rc, got, sizeof got);
            if (!alloc_failed()) {
                ck_assert_int_eq(rc, PLANNER_OK);
                break;
            }
            if (rc == PLANNER_OK) {
                ck_assert_msg(fp == ref, "%s, allocation %ld: recovered with other figures",
                              files[f], nth);
                continue;
            }
            ck_assert_msg(rc == PLANNER_E_INTERNAL, "%s, allocation %ld: %s", files[f], nth,
                          got);
            ck_assert_str_eq(got, "planner: out of memory");
        }
        alloc_fail_at(0);
        ck_assert_int_lt(nth, 10000);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bad_inputs");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, each_bad_input);
    tcase_add_test(tc, size_limit);
    tcase_add_test(tc, unreadable);
    tcase_add_test(tc, allocation_failures);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
