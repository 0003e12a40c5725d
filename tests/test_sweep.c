/* test_sweep.c: grid values and files, point order, shards and merging.
 * The end-to-end runs (real models, clusters, search) are in
 * tests/cli/sweep.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tool/sweep.h"
#include "testutil.h"

static void axis_ok(sweep_dim d, const char *text, int n, const char *const *expect)
{
    sweep_axis a = {0, NULL, NULL};
    char msg[256];
    int off;
    ck_assert_msg(sweep_axis_parse(d, text, &a, msg, sizeof msg, &off) == 0, "%s: %s", text,
                  msg);
    ck_assert_int_eq(a.n, n);
    for (int i = 0; i < n; i++)
        ck_assert_str_eq(a.str[i], expect[i]);
    sweep_axis_free(&a);
}

static void axis_bad(sweep_dim d, const char *text, int offset, const char *needle)
{
    sweep_axis a = {0, NULL, NULL};
    char msg[256];
    int off = -1;
    ck_assert_int_eq(sweep_axis_parse(d, text, &a, msg, sizeof msg, &off), -1);
    ck_assert_int_eq(off, offset);
    ck_assert_msg(strstr(msg, needle) != NULL, "'%s' not in '%s'", needle, msg);
    sweep_axis_free(&a);
}

START_TEST(axis_values)
{
    axis_ok(SWEEP_NODES, "8,16,32", 3, (const char *const[]){"8", "16", "32"});
    axis_ok(SWEEP_NODES, "8..64x2", 4, (const char *const[]){"8", "16", "32", "64"});
    axis_ok(SWEEP_NODES, "1..3", 3, (const char *const[]){"1", "2", "3"});
    axis_ok(SWEEP_GBS, "512..2048:512", 4, (const char *const[]){"512", "1024", "1536", "2048"});
    axis_ok(SWEEP_NODES, " 4 , 8..32x2 ", 4, (const char *const[]){"4", "8", "16", "32"});
    axis_ok(SWEEP_INTER_BW, "0.5..2x2", 3, (const char *const[]){"0.5", "1", "2"});
    axis_ok(SWEEP_PEAK, "0.8..1.2:0.2", 3, (const char *const[]){"0.8", "1", "1.2"});
    /* catalog names, aliases resolved */
    axis_ok(SWEEP_GPU, "H100,a100", 2, (const char *const[]){"H100-SXM", "A100-SXM-80GB"});
    axis_ok(SWEEP_MODEL, "a.json,dir/b.json", 2, (const char *const[]){"a.json", "dir/b.json"});
}
END_TEST

START_TEST(axis_errors)
{
    axis_bad(SWEEP_NODES, "8,x", 2, "expected an integer");
    axis_bad(SWEEP_NODES, "8, 0", 3, "expected an integer in 1..");
    axis_bad(SWEEP_NODES, "8,", 2, "empty value");
    axis_bad(SWEEP_NODES, "64..8", 0, "must run upwards");
    axis_bad(SWEEP_NODES, "8..64x1", 0, "factor > 1");
    axis_bad(SWEEP_NODES, "8..64:0", 0, "step > 0");
    axis_bad(SWEEP_NODES, "8..", 0, "bad range");
    axis_bad(SWEEP_NODES, "1..20000", 0, "more than");
    axis_bad(SWEEP_NODES, "8,16,8", 5, "given twice");
    axis_bad(SWEEP_GPU, "H100,H10O", 5, "unknown GPU 'H10O'");
    axis_bad(SWEEP_INTER_BW, "0.5..2", 0, "needs ':STEP' or 'xFACTOR'");
    axis_bad(SWEEP_PEAK, "-1", 0, "expected a number");
}
END_TEST

START_TEST(grid_file)
{
    const char *text =
        "# what-ifs for the 175B run\n"
        "\n"
        "model = configs/gpt3-175b.json\n"
        "cluster=clusters/h100x512.yaml, clusters/a100x1024.yaml\n"
        "  nodes = 8..32x2\r\n"
        "gbs = 1536\n"
        "inter-bw-scale = 0.5, 1\n"
        "fix = tp=8\n";
    sweep_grid g;
    planner_error err = PLANNER_ERROR_INIT;
    memset(&g, 0, sizeof g);
    ck_assert_int_eq(sweep_grid_parse_buffer(text, strlen(text), "g.txt", &g, &err), 0);
    ck_assert_int_eq(g.axis[SWEEP_MODEL].n, 1);
    ck_assert_int_eq(g.axis[SWEEP_CLUSTER].n, 2);
    ck_assert_str_eq(g.axis[SWEEP_CLUSTER].str[1], "clusters/a100x1024.yaml");
    ck_assert_int_eq(g.axis[SWEEP_NODES].n, 3);
    ck_assert_int_eq(g.axis[SWEEP_GPU].n, 0);
    ck_assert_str_eq(g.fix, "tp=8");
    /* 1 model x 2 clusters x 3 node counts x 1 gbs x 2 scales */
    ck_assert_double_eq(sweep_grid_points(&g), 12);

    /* point order: the first axis varies slowest, the last fastest */
    int idx[SWEEP_DIM_COUNT];
    sweep_point_decode(&g, 0, idx);
    ck_assert_int_eq(idx[SWEEP_CLUSTER], 0);
    ck_assert_int_eq(idx[SWEEP_NODES], 0);
    ck_assert_int_eq(idx[SWEEP_INTER_BW], 0);
    sweep_point_decode(&g, 1, idx);
    ck_assert_int_eq(idx[SWEEP_INTER_BW], 1);
    ck_assert_int_eq(idx[SWEEP_NODES], 0);
    sweep_point_decode(&g, 7, idx);   /* 7 = 1 x 6 + 0 x 2 + 1 */
    ck_assert_int_eq(idx[SWEEP_CLUSTER], 1);
    ck_assert_int_eq(idx[SWEEP_NODES], 0);
    ck_assert_int_eq(idx[SWEEP_INTER_BW], 1);
    sweep_point_decode(&g, 11, idx);
    ck_assert_int_eq(idx[SWEEP_CLUSTER], 1);
    ck_assert_int_eq(idx[SWEEP_NODES], 2);
    ck_assert_int_eq(idx[SWEEP_INTER_BW], 1);
    sweep_grid_free(&g);
}
END_TEST

static void grid_bad(const char *text, int line, int col, const char *needle)
{
    sweep_grid g;
    planner_error err = PLANNER_ERROR_INIT;
    char buf[1024];
    memset(&g, 0, sizeof g);
    ck_assert_int_eq(sweep_grid_parse_buffer(text, strlen(text), "g.txt", &g, &err),
                     PLANNER_E_INPUT);
    error_format(&err, buf, sizeof buf);
    ck_assert_int_eq(err.line, line);
    ck_assert_int_eq(err.col, col);
    ck_assert_msg(strstr(buf, needle) != NULL, "'%s' not in '%s'", needle, buf);
    ck_assert_msg(strncmp(buf, "planner: g.txt:", 15) == 0, "%s", buf);
    sweep_grid_free(&g);
}

START_TEST(grid_file_errors)
{
    grid_bad("model = a.json\nnodse = 8\n", 2, 1, "unknown key 'nodse' (did you mean 'nodes'?)");
    grid_bad("model = a.json\nnodes 8\n", 2, 1, "expected 'key = values'");
    grid_bad("nodes = 8\n\nnodes = 16\n", 3, 1, "given twice (first on line 1)");
    grid_bad("nodes = 8, 16, x\n", 1, 16, "expected an integer");
    grid_bad("gpu = H100, Z9000\n", 1, 13, "unknown GPU");
    grid_bad("  seq =\n", 1, 8, "seq: no value");
    grid_bad("fix = tp=banana\n", 1, 7, "fix:");
}
END_TEST

START_TEST(shard_spec)
{
    long i, n;
    ck_assert_int_eq(sweep_shard_parse("0/8", &i, &n), 0);
    ck_assert_int_eq(i, 0);
    ck_assert_int_eq(n, 8);
    ck_assert_int_eq(sweep_shard_parse("7/8", &i, &n), 0);
    ck_assert_int_eq(sweep_shard_parse("8/8", &i, &n), -1);
    ck_assert_int_eq(sweep_shard_parse("-1/8", &i, &n), -1);
    ck_assert_int_eq(sweep_shard_parse("1/0", &i, &n), -1);
    ck_assert_int_eq(sweep_shard_parse("1", &i, &n), -1);
    ck_assert_int_eq(sweep_shard_parse("1/2/3", &i, &n), -1);
}
END_TEST

/* Writes text to a new temporary file; returns its path (static buffer set). */
static void write_tmp(char *path, const char *text)
{
    strcpy(path, "/tmp/planner-shard-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *fp = fdopen(fd, "w");
    fputs(text, fp);
    fclose(fp);
}

static char *merge_to_string(int n, char **paths, planner_status *rc, planner_error *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);
    *rc = sweep_merge(fp, n, paths, err);
    fclose(fp);
    return text;
}

START_TEST(merge_shards)
{
    /* a 5-point grid in 2 shards (0/2: points 0, 2, 4; 1/2: 1, 3), CSV */
    char p0[64], p1[64], *paths[2] = {p0, p1};
    char h[1024], hl[SWEEP_CSV_HEADER_MAX];
    snprintf(h, sizeof h, "%s\n", sweep_csv_header(hl, sizeof hl));
    char s0[2048], s1[2048], whole[4096];
    snprintf(s0, sizeof s0, "%s0,5,a,\"x,y\",ok\n2,5,c,z,ok\n4,5,e,z,infeasible\n", h);
    snprintf(s1, sizeof s1, "%s1,5,b,z,ok\n3,5,d,z,ok\n", h);
    snprintf(whole, sizeof whole,
             "%s0,5,a,\"x,y\",ok\n1,5,b,z,ok\n2,5,c,z,ok\n3,5,d,z,ok\n4,5,e,z,infeasible\n", h);
    write_tmp(p0, s0);
    write_tmp(p1, s1);
    planner_error err = PLANNER_ERROR_INIT;
    planner_status rc;
    char *out = merge_to_string(2, paths, &rc, &err);
    ck_assert_int_eq(rc, PLANNER_OK);
    ck_assert_str_eq(out, whole);
    free(out);

    /* the order of the files does not matter */
    char *rev[2] = {p1, p0};
    out = merge_to_string(2, rev, &rc, &err);
    ck_assert_int_eq(rc, PLANNER_OK);
    ck_assert_str_eq(out, whole);
    free(out);

    /* a missing shard: nothing written, the first missing point named */
    error_clear(&err);
    out = merge_to_string(1, paths, &rc, &err);
    ck_assert_int_eq(rc, PLANNER_E_INPUT);
    ck_assert_str_eq(out, "");
    ck_assert_ptr_nonnull(strstr(err.msg, "3 of 5 points"));
    ck_assert_ptr_nonnull(strstr(err.msg, "first is point 1"));
    free(out);

    /* a shard twice */
    char *twice[3] = {p0, p1, p0};
    error_clear(&err);
    out = merge_to_string(3, twice, &rc, &err);
    ck_assert_int_eq(rc, PLANNER_E_INPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "given twice"));
    free(out);

    /* a shard of another grid */
    char p2[64], s2[2048];
    snprintf(s2, sizeof s2, "%s1,6,b,z,ok\n", h);
    write_tmp(p2, s2);
    char *other[2] = {p0, p2};
    error_clear(&err);
    out = merge_to_string(2, other, &rc, &err);
    ck_assert_int_eq(rc, PLANNER_E_INPUT);
    ck_assert_int_eq(err.line, 2);
    ck_assert_ptr_nonnull(strstr(err.msg, "different sweeps"));
    free(out);

    /* not a sweep output */
    char p3[64];
    write_tmp(p3, "hello,world\n");
    char *junk[1] = {p3};
    error_clear(&err);
    out = merge_to_string(1, junk, &rc, &err);
    ck_assert_int_eq(rc, PLANNER_E_INPUT);
    ck_assert_int_eq(err.line, 1);
    free(out);
    unlink(p0);
    unlink(p1);
    unlink(p2);
    unlink(p3);
}
END_TEST

START_TEST(merge_jsonl)
{
    char p0[64], p1[64], *paths[2] = {p0, p1};
    write_tmp(p0, "{\"point\":1,\"points\":2,\"status\":\"ok\"}\n");
    write_tmp(p1, "{\"point\":0,\"points\":2,\"status\":\"infeasible\"}\n");
    planner_error err = PLANNER_ERROR_INIT;
    planner_status rc;
    char *out = merge_to_string(2, paths, &rc, &err);
    ck_assert_int_eq(rc, PLANNER_OK);
    ck_assert_str_eq(out, "{\"point\":0,\"points\":2,\"status\":\"infeasible\"}\n"
                          "{\"point\":1,\"points\":2,\"status\":\"ok\"}\n");
    free(out);
    unlink(p0);
    unlink(p1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sweep");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, axis_values);
    tcase_add_test(tc, axis_errors);
    tcase_add_test(tc, grid_file);
    tcase_add_test(tc, grid_file_errors);
    tcase_add_test(tc, shard_spec);
    tcase_add_test(tc, merge_shards);
    tcase_add_test(tc, merge_jsonl);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
