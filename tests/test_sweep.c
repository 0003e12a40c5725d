/* test_sweep.c: grid values and files, point order, shards and merging.
 * The end-to-end runs (real models, clusters, search) are in
 * tests/cli/sweep.sh. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "out/sweep_merge.h"
#include "out/sweep_rows.h"
#include "inputs/stack.h"
#include "search/sweep_grid.h"
#include "tool/cli.h"
#include "tool/sweep.h"
#include "testutil.h"

static void axis_ok(sweep_dim d, const char *text, int n, const char *const *expect)
{
    sweep_axis a = {0};
    planner_error err = PLANNER_ERROR_INIT;
    int off;
    ck_assert_msg(sweep_axis_parse(&a, &off, d, text, &err) == PLANNER_OK, "%s: %s", text,
                  err.msg);
    ck_assert_int_eq(a.n, n);
    for (int i = 0; i < n; i++)
        ck_assert_str_eq(a.str[i], expect[i]);
    sweep_axis_free(&a);
}

static void axis_bad(sweep_dim d, const char *text, int offset, const char *needle)
{
    sweep_axis a = {0};
    planner_error err = PLANNER_ERROR_INIT;
    int off = -1;
    ck_assert_int_eq(sweep_axis_parse(&a, &off, d, text, &err), PLANNER_E_INPUT);
    ck_assert_int_eq(err.status, PLANNER_E_INPUT);
    ck_assert_int_eq(off, offset);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "'%s' not in '%s'", needle, err.msg);
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
    axis_bad(SWEEP_NODES, "8, 0", 3, "nodes: expected an integer in 1..1048576, got '0'");
    axis_bad(SWEEP_GBS, "0", 0, "gbs: expected an integer in 1..100000000, got '0'");
    axis_bad(SWEEP_NODES, "8,", 2, "empty value");
    axis_bad(SWEEP_NODES, "64..8", 0, "nodes: range '64..8' must run upwards within 1..1048576");
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
    planner_error err;
    ck_assert_int_eq(sweep_shard_parse(&i, &n, "0/8", tu_err(&err)), PLANNER_OK);
    ck_assert_int_eq(i, 0);
    ck_assert_int_eq(n, 8);
    ck_assert_int_eq(sweep_shard_parse(&i, &n, "7/8", tu_err(&err)), PLANNER_OK);
    ck_assert_int_eq(sweep_shard_parse(&i, &n, "8/8", tu_err(&err)), PLANNER_E_USAGE);
    ck_assert_str_eq(err.msg, "expected I/N with 0 <= I < N <= 100000, got '8/8'");
    ck_assert_int_eq(sweep_shard_parse(&i, &n, "-1/8", tu_err(&err)), PLANNER_E_USAGE);
    ck_assert_int_eq(sweep_shard_parse(&i, &n, "1/0", tu_err(&err)), PLANNER_E_USAGE);
    ck_assert_int_eq(sweep_shard_parse(&i, &n, "1", tu_err(&err)), PLANNER_E_USAGE);
    ck_assert_int_eq(sweep_shard_parse(&i, &n, "1/2/3", tu_err(&err)), PLANNER_E_USAGE);
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

/* The header's columns: their count, and status's and reason's indices. */
static int header_cols(int *status, int *reason)
{
    char hl[SWEEP_CSV_HEADER_MAX];
    const char *h = sweep_csv_header(hl, sizeof hl);
    int n = 0;
    for (const char *p = h;; n++) {
        size_t len = strcspn(p, ",");
        if (len == 6 && strncmp(p, "status", 6) == 0)
            *status = n;
        if (len == 6 && strncmp(p, "reason", 6) == 0)
            *reason = n;
        if (p[len] == '\0')
            return n + 1;
        p += len + 1;
    }
}

/* A CSV line of a sweep (every column of the header; a plan when ok; a
 * quoted cluster name), with its newline. */
static void csv_row(char *buf, size_t size, long k, long n, bool ok)
{
    int status = 0, reason = 0;
    header_cols(&status, &reason);
    int len = snprintf(buf, size, "%ld,%ld,m.json,\"x,y\",H100-SXM", k, n);
    for (int c = 5; c < status; c++)
        len += snprintf(buf + len, size - (size_t)len, ",1");
    len += snprintf(buf + len, size - (size_t)len, ",%s", ok ? "ok" : "infeasible");
    for (int c = status + 1; c < reason; c++)
        len += snprintf(buf + len, size - (size_t)len, ",%s", ok ? "8" : "");
    snprintf(buf + len, size - (size_t)len, ",%s\n", ok ? "" : "needs 90 GiB");
}

/* The same as a JSON Lines line: the header's columns as keys. */
static void jsonl_row(char *buf, size_t size, long k, long n, bool ok)
{
    char hl[SWEEP_CSV_HEADER_MAX];
    const char *h = sweep_csv_header(hl, sizeof hl);
    int status = 0, reason = 0, c = 0;
    header_cols(&status, &reason);
    int len = snprintf(buf, size, "{");
    for (const char *p = h;; c++) {
        int kl = (int)strcspn(p, ",");
        const char *sep = c > 0 ? "," : "";
        if (c == 0 || c == 1)
            len += snprintf(buf + len, size - (size_t)len, "%s\"%.*s\":%ld", sep, kl, p,
                            c == 0 ? k : n);
        else if (c == status)
            len += snprintf(buf + len, size - (size_t)len, "%s\"status\":\"%s\"", sep,
                            ok ? "ok" : "infeasible");
        else if (c == reason)
            len += snprintf(buf + len, size - (size_t)len, "%s\"reason\":%s", sep,
                            ok ? "null" : "\"needs 90 GiB\"");
        else if (c < status || ok)
            len += snprintf(buf + len, size - (size_t)len, "%s\"%.*s\":%s", sep, kl, p,
                            c < 5 ? "\"x\"" : "1");
        if (p[kl] == '\0')
            break;
        p += kl + 1;
    }
    snprintf(buf + len, size - (size_t)len, "}\n");
}

START_TEST(merge_shards)
{
    /* a 5-point grid in 2 shards (0/2: points 0, 2, 4; 1/2: 1, 3), CSV */
    char p0[64], p1[64], *paths[2] = {p0, p1};
    char h[1024], hl[SWEEP_CSV_HEADER_MAX];
    snprintf(h, sizeof h, "%s\n", sweep_csv_header(hl, sizeof hl));
    char s0[4096], s1[4096], whole[8192], r[5][512];
    for (int k = 0; k < 5; k++)
        csv_row(r[k], sizeof r[k], k, 5, k < 4);
    snprintf(s0, sizeof s0, "%s%s%s%s", h, r[0], r[2], r[4]);
    snprintf(s1, sizeof s1, "%s%s%s", h, r[1], r[3]);
    snprintf(whole, sizeof whole, "%s%s%s%s%s%s", h, r[0], r[1], r[2], r[3], r[4]);
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
    csv_row(r[0], sizeof r[0], 1, 6, true);
    snprintf(s2, sizeof s2, "%s%s", h, r[0]);
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
    char p0[64], p1[64], *paths[2] = {p0, p1}, r0[1024], r1[1024], whole[2048];
    jsonl_row(r0, sizeof r0, 0, 2, false);
    jsonl_row(r1, sizeof r1, 1, 2, true);
    write_tmp(p0, r1);
    write_tmp(p1, r0);
    planner_error err = PLANNER_ERROR_INIT;
    planner_status rc;
    char *out = merge_to_string(2, paths, &rc, &err);
    ck_assert_int_eq(rc, PLANNER_OK);
    snprintf(whole, sizeof whole, "%s%s", r0, r1);
    ck_assert_str_eq(out, whole);
    free(out);
    unlink(p0);
    unlink(p1);
}
END_TEST

/* Damaged shards (issue 15): each refused with the shard's FILE:LINE and
 * nothing written.  Shard 0 holds point 0 intact; shard 1 holds point 1,
 * damaged as the case says. */
static void damaged(bool jsonl, const char *shard1, int line, const char *msg)
{
    char p0[64], p1[64], *paths[2] = {p0, p1}, s0[2048], r0[1024];
    if (jsonl) {
        jsonl_row(r0, sizeof r0, 0, 2, true);
        snprintf(s0, sizeof s0, "%s", r0);
    } else {
        csv_row(r0, sizeof r0, 0, 2, true);
        char hl[SWEEP_CSV_HEADER_MAX];
        snprintf(s0, sizeof s0, "%s\n%s", sweep_csv_header(hl, sizeof hl), r0);
    }
    write_tmp(p0, s0);
    write_tmp(p1, shard1);
    planner_error err = PLANNER_ERROR_INIT;
    planner_status rc;
    char *out = merge_to_string(2, paths, &rc, &err);
    ck_assert_msg(rc == PLANNER_E_INPUT, "%s: merged (rc %d)", msg, rc);
    ck_assert_str_eq(out, "");
    ck_assert_str_eq(err.file, p1);
    ck_assert_msg(err.line == line, "%s: line %d, expected %d (%s)", msg, err.line, line,
                  err.msg);
    ck_assert_msg(strstr(err.msg, msg) != NULL, "'%s' not in '%s'", msg, err.msg);
    free(out);
    unlink(p0);
    unlink(p1);
}

START_TEST(merge_refuses_damaged_shards)
{
    char h[1024], hl[SWEEP_CSV_HEADER_MAX], row[1024], text[4096], msg[128];
    int status = 0, reason = 0, cols = header_cols(&status, &reason);
    snprintf(h, sizeof h, "%s\n", sweep_csv_header(hl, sizeof hl));
    csv_row(row, sizeof row, 1, 2, true);
    size_t n = strlen(row);

    /* truncated in the last line: no newline (cut mid-field) */
    snprintf(text, sizeof text, "%s%.*s", h, (int)(n / 2), row);
    damaged(false, text, 2, "the last line has no newline");
    /* cut mid-field, the line then ended: too few fields */
    snprintf(text, sizeof text, "%s%.*s\n", h, (int)(n / 2), row);
    snprintf(msg, sizeof msg, "fields, the header has %d", cols);
    damaged(false, text, 2, msg);
    /* cut inside the quoted field */
    snprintf(text, sizeof text, "%s1,2,m.json,\"x,y\n", h);
    damaged(false, text, 2, "without its closing quote");
    /* garbage after the points */
    snprintf(text, sizeof text, "%s%sgarbage\n", h, row);
    snprintf(msg, sizeof msg, "1 fields, the header has %d", cols);
    damaged(false, text, 3, msg);
    snprintf(text, sizeof text, "%s%s\x7f\x45LF", h, row);
    damaged(false, text, 3, "no newline");
    /* an extra field */
    snprintf(text, sizeof text, "%s%.*s,extra\n", h, (int)(n - 1), row);
    snprintf(msg, sizeof msg, "%d fields, the header has %d", cols + 1, cols);
    damaged(false, text, 2, msg);
    /* a float where a point index belongs, a sign, a point beyond the grid */
    snprintf(text, sizeof text, "%s1.0%s", h, row + 1);
    damaged(false, text, 2, "point: expected an integer, got '1.0'");
    snprintf(text, sizeof text, "%s1,2.0%s", h, row + 3);
    damaged(false, text, 2, "points: expected an integer, got '2.0'");
    snprintf(text, sizeof text, "%s+1%s", h, row + 1);
    damaged(false, text, 2, "point: expected an integer");
    snprintf(text, sizeof text, "%s7%s", h, row + 1);
    damaged(false, text, 2, "point 7 of 2 points");
    /* a status that is none of ok, infeasible, invalid; plan columns that disagree */
    csv_row(row, sizeof row, 1, 2, false);
    snprintf(text, sizeof text, "%s%s", h, row);
    memcpy(strstr(text, "infeasible"), "infeasable", 10);
    damaged(false, text, 2, "status: expected ok, infeasible or invalid");
    {
        const char *at = strstr(row, "infeasible,") + strlen("infeasible,");
        snprintf(text, sizeof text, "%s%.*s8%s", h, (int)(at - row), row, at);
    }
    damaged(false, text, 2, "a plan column set on a line without a plan");
    /* a NUL byte inside a line */
    snprintf(text, sizeof text, "%s%s", h, row);
    {
        char p0[64], p1[64], *paths[2] = {p0, p1}, r0[1024], s0[2048];
        csv_row(r0, sizeof r0, 0, 2, true);
        snprintf(s0, sizeof s0, "%s%s", h, r0);
        write_tmp(p0, s0);
        strcpy(p1, "/tmp/planner-shard-XXXXXX");
        int fd = mkstemp(p1);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text) + 1), (long)strlen(text) + 1);
        close(fd);
        planner_error err = PLANNER_ERROR_INIT;
        planner_status rc;
        char *out = merge_to_string(2, paths, &rc, &err);
        ck_assert_int_eq(rc, PLANNER_E_INPUT);
        ck_assert_ptr_nonnull(strstr(err.msg, "NUL byte"));
        ck_assert_int_eq(err.line, 3);
        free(out);
        unlink(p0);
        unlink(p1);
    }

    /* JSON Lines: an extra field, a missing one, a float index, cut short */
    jsonl_row(row, sizeof row, 1, 2, true);
    n = strlen(row);
    snprintf(text, sizeof text, "%.*s,\"extra\":1}\n", (int)(n - 2), row);
    damaged(true, text, 1, "unknown field 'extra'");
    snprintf(text, sizeof text, "%s", row);
    memcpy(strstr(text, "\"mfu\""), "\"MFU\"", 5);
    damaged(true, text, 1, "unknown field 'MFU'");
    snprintf(text, sizeof text, "%s", row);
    {
        char *mfu = strstr(text, "\"mfu\":1,");
        memmove(mfu, mfu + 8, strlen(mfu + 8) + 1);
    }
    snprintf(msg, sizeof msg, "%d fields, a line with status ok has %d", cols - 1, cols);
    damaged(true, text, 1, msg);
    snprintf(text, sizeof text, "{\"point\":1.0%s", strstr(row, ",\"points\""));
    damaged(true, text, 1, "point: expected an integer");
    snprintf(text, sizeof text, "%.*s\n", (int)(n / 2), row);
    damaged(true, text, 1, "not a JSON object");
    snprintf(text, sizeof text, "%.*s", (int)(n / 2), row);
    damaged(true, text, 1, "the last line has no newline");
    snprintf(text, sizeof text, "%s[1]\n", row);
    damaged(true, text, 2, "not a JSON object");
}
END_TEST

/* --torch-compile (plan, size and every sweep point): taken exactly by the
 * stacks whose blocks run eagerly (pytorch-fsdp2, the only one in the table),
 * a usage error that leaves the model eager on every other; absent, nothing
 * changes, on any stack. */
START_TEST(torch_compile_only_on_eager_stacks)
{
    model *m = tu_model_load("configs/llama3-8b.json", NULL);
    cluster *c = tu_cluster_load("clusters/h200x64.yaml");
    int taken = 0;
    for (size_t i = 0; i < stack_count(); i++) {
        bool eager = stack_eager_blocks(stack_at(i));
        c->stack = (int)stack_at(i)->id;
        m->torch_compile = false;
        ck_assert_int_eq(cli_apply_torch_compile("sweep", false, m, c), 0);
        ck_assert(!m->torch_compile);
        ck_assert_int_eq(cli_apply_torch_compile("sweep", true, m, c),
                         eager ? 0 : PLANNER_E_USAGE);
        ck_assert(m->torch_compile == eager);
        taken += eager;
        if (eager)
            ck_assert_str_eq(stack_at(i)->name, "pytorch-fsdp2");
    }
    ck_assert_int_eq(taken, 1);
    cluster_free(c);
    model_free(m);
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
    tcase_add_test(tc, merge_refuses_damaged_shards);
    tcase_add_test(tc, torch_compile_only_on_eager_stacks);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
