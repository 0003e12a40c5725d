/* test_alloc_fail.c: allocation-failure injection ("torture", as in curl).
 *
 * For every shipped model (each .json in configs/), every shipped cluster
 * (each .yaml in clusters/) and two full searches (k_searches below), the
 * call is repeated with alloc_fail_at(n) for n = 1, 2, ... until a run
 * completes without reaching the n-th allocation.  Every run must end
 * either with a clean out-of-memory error (PLANNER_E_INTERNAL, "out of
 * memory", no result handed out) or with the same result as the run
 * without failures.  Under `make sanitize` the
 * LeakSanitizer adds: nothing allocated before the failure leaks.
 *
 * libyaml allocates with plain malloc and cannot be failed this way.  jansson
 * goes through pl_malloc (alloc_init), but jansson 2.14's lexer does not
 * survive an allocation failure (upstream akheron/jansson#362: lex_save drops
 * the failure, the lexer desynchronizes, reports bogus syntax errors or writes
 * out of bounds), so the allocations json_loadb makes for a model file are
 * not failed; everything the loader does before and after is. */
#include <dirent.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "inputs/cluster.h"
#include "schedule/evaluate.h"
#include "base/fileio.h"
#include "inputs/model.h"
#include "search/search.h"
#include "testutil.h"
#include "tool/shipped.h"

#define MAX_FILES 256
#define MAX_RUNS 1000000L   /* a guard against a loop that never ends */

/* The sorted names in `dir` ending in `ext`; returns the count. */
static int list_dir(const char *dir, const char *ext, char names[][256], int max)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    size_t lx = strlen(ext);

    ck_assert_msg(d != NULL, "cannot open %s", dir);
    while ((e = readdir(d)) != NULL && n < max) {
        size_t l = strlen(e->d_name);
        if (l <= lx || l >= 256 || strcmp(e->d_name + l - lx, ext) != 0)
            continue;
        snprintf(names[n++], 256, "%s", e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    return n;
}

static void read_input(const char *path, char **text, size_t *len)
{
    planner_error err = PLANNER_ERROR_INIT;
    alloc_fail_at(0);
    ck_assert_msg(file_read_all(text, len, path, INPUT_MAX_BYTES, &err) == PLANNER_OK,
                  "cannot read %s: %s", path, err.msg);
}

/* The failed run's error must be the out-of-memory one. */
static void assert_oom(const char *what, long n, planner_status rc, const planner_error *err)
{
    ck_assert_msg(rc == PLANNER_E_INTERNAL && err->status == PLANNER_E_INTERNAL &&
                      strstr(err->msg, "out of memory") != NULL,
                  "%s, allocation %ld failed: status %d, '%s' (expected 70, out of memory)",
                  what, n, (int)rc, err->msg);
}

/* The allocations json_loadb itself makes for `text`: 1..count when it is
 * the first thing model_load_buffer allocates with. */
static long jansson_allocations(const char *text, size_t len)
{
    json_error_t jerr;
    json_t *root;
    long count;
    alloc_fail_at(0);
    root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    count = alloc_count();
    ck_assert_ptr_nonnull(root);
    json_decref(root);
    return count;
}

static void assert_same_model(const char *what, long n, const model *a, const model *b)
{
    ck_assert_msg(strcmp(a->name, b->name) == 0 && a->layers == b->layers &&
                      a->hidden == b->hidden && a->heads == b->heads &&
                      a->kv_heads == b->kv_heads && a->ffn_hidden == b->ffn_hidden &&
                      a->vocab == b->vocab && a->max_position == b->max_position &&
                      a->moe.experts == b->moe.experts &&
                      model_param_count(a, 4096) == model_param_count(b, 4096) &&
                      memcmp(a->layer, b->layer, (size_t)a->layers * sizeof *a->layer) == 0,
                  "%s: the run with allocation %ld failed loaded a different model", what, n);
}

START_TEST(models_survive_every_failure)
{
    static char names[MAX_FILES][256];
    int nfiles = list_dir("configs", ".json", names, MAX_FILES);
    long total_runs = 0;

    ck_assert_int_gt(nfiles, 0);
    for (int f = 0; f < nfiles; f++) {
        char path[512];
        char *text = NULL;
        size_t len = 0;
        planner_error err = PLANNER_ERROR_INIT;
        model *ref = NULL;

        snprintf(path, sizeof path, "configs/%.255s", names[f]);
        read_input(path, &text, &len);
        ck_assert_msg(model_load_buffer(&ref, NULL, text, len, path, NULL, &err) == PLANNER_OK,
                      "%s: %s", path, err.msg);
        for (long n = jansson_allocations(text, len) + 1; n <= MAX_RUNS; n++) {
            model *m = NULL;
            planner_status rc;
            int hit;
            error_clear(&err);
            alloc_fail_at(n);
            rc = model_load_buffer(&m, NULL, text, len, path, NULL, &err);
            hit = alloc_failed();
            alloc_fail_at(0);
            total_runs++;
            if (rc == PLANNER_OK) {
                ck_assert_ptr_nonnull(m);
                assert_same_model(path, n, m, ref);
            } else {
                ck_assert_msg(hit, "%s: failed without an injected failure: %s", path, err.msg);
                ck_assert_ptr_null(m);
                assert_oom(path, n, rc, &err);
            }
            model_free(m);
            if (!hit)
                break;
        }
        model_free(ref);
        pl_free(text);
    }
    fprintf(stderr, "alloc_fail: %d models, %ld runs\n", nfiles, total_runs);
}
END_TEST

static void assert_same_cluster(const char *what, long n, const cluster *a, const cluster *b)
{
    int same = strcmp(a->name, b->name) == 0 && a->n_groups == b->n_groups &&
               a->n_links == b->n_links;
    for (int i = 0; same && i < a->n_groups; i++) {
        const node_group *x = &a->group[i], *y = &b->group[i];
        same = strcmp(x->name, y->name) == 0 && strcmp(x->gpu.name, y->gpu.name) == 0 &&
               x->nodes == y->nodes && x->gpus_per_node == y->gpus_per_node &&
               x->intra_bytes_per_s == y->intra_bytes_per_s &&
               x->inter_bytes_per_s == y->inter_bytes_per_s &&
               x->inter_latency_s == y->inter_latency_s &&
               x->gpu.usable_mem_bytes == y->gpu.usable_mem_bytes &&
               memcmp(x->gpu.peak_flops, y->gpu.peak_flops, sizeof x->gpu.peak_flops) == 0;
    }
    for (int i = 0; same && i < a->n_links; i++)
        same = a->link[i].a == b->link[i].a && a->link[i].b == b->link[i].b &&
               a->link[i].bytes_per_s == b->link[i].bytes_per_s;
    ck_assert_msg(same, "%s: the run with allocation %ld failed loaded a different cluster",
                  what, n);
}

START_TEST(clusters_survive_every_failure)
{
    static char names[MAX_FILES][256];
    int nfiles = list_dir("clusters", ".yaml", names, MAX_FILES);
    long total_runs = 0;

    ck_assert_int_gt(nfiles, 0);
    for (int f = 0; f < nfiles; f++) {
        char path[512];
        char *text = NULL;
        size_t len = 0;
        planner_error err = PLANNER_ERROR_INIT;
        cluster *ref = NULL;

        snprintf(path, sizeof path, "clusters/%.255s", names[f]);
        read_input(path, &text, &len);
        ck_assert_msg(cluster_load_buffer(&ref, text, len, path, &err) == PLANNER_OK,
                      "%s: %s", path, err.msg);
        for (long n = 1; n <= MAX_RUNS; n++) {
            cluster *c = NULL;
            planner_status rc;
            int hit;
            error_clear(&err);
            alloc_fail_at(n);
            rc = cluster_load_buffer(&c, text, len, path, &err);
            hit = alloc_failed();
            alloc_fail_at(0);
            total_runs++;
            if (rc == PLANNER_OK) {
                ck_assert_ptr_nonnull(c);
                assert_same_cluster(path, n, c, ref);
            } else {
                ck_assert_msg(hit, "%s: failed without an injected failure: %s", path, err.msg);
                ck_assert_ptr_null(c);
                assert_oom(path, n, rc, &err);
            }
            cluster_free(c);
            if (!hit)
                break;
        }
        cluster_free(ref);
        pl_free(text);
    }
    fprintf(stderr, "alloc_fail: %d clusters, %ld runs\n", nfiles, total_runs);
}
END_TEST

/* A search that survived a failure must have found exactly the same plans,
 * with the same predictions: an allocation failure may not silently change
 * what the planner recommends. */
static void assert_same_result(long n, const search_result *a, const search_result *b)
{
    ck_assert_msg(a->n_top == b->n_top && a->candidates == b->candidates &&
                      a->feasible == b->feasible,
                  "search, allocation %ld failed: %d plans of %ld candidates (%ld feasible),"
                  " without failures %d of %ld (%ld)", n, a->n_top, a->candidates, a->feasible,
                  b->n_top, b->candidates, b->feasible);
    for (int i = 0; i < a->n_top; i++) {
        const plan *x = &a->top[i], *y = &b->top[i];
        ck_assert_msg(memcmp(&x->s, &y->s, sizeof x->s) == 0 &&
                          x->e.step_time_s == y->e.step_time_s &&
                          x->e.peak_memory_bytes == y->e.peak_memory_bytes,
                      "search, allocation %ld failed: plan %d is tp %d pp %d dp %d mbs %d,"
                      " step %.9g s, peak %.6g B; without failures tp %d pp %d dp %d mbs %d,"
                      " step %.9g s, peak %.6g B", n, i, x->s.tp, x->s.pp, x->s.dp, x->s.mbs,
                      x->e.step_time_s, x->e.peak_memory_bytes, y->s.tp, y->s.pp, y->s.dp,
                      y->s.mbs, y->e.step_time_s, y->e.peak_memory_bytes);
    }
}

/* Full searches: AMP's GPT-2 on AMP's 3 x p3.8xlarge + 1 x g4dn.12xlarge
 * (placement over two groups, DP partition), and the uneven GPT 13B on
 * 32 DGX H100 + 32 DGX A100 with the GLPK partitioner; then searches on 3
 * threads (search.c PARALLEL: a failure in any worker's unit, its placer or
 * memo, the batch's scratch), AMP's again and GPT-2 XL on 32 DGX H100 + 32
 * DGX A100.  Which allocation is the n-th then depends on the scheduling,
 * but every run must still fail cleanly or find the reference's plans. */
static const struct {
    const char *model, *cluster;
    partition_solver partition;
    int jobs;
} k_searches[] = {
    {"configs/amp-gpt2.json", "clusters/amp-3xp3-1xg4dn.yaml", PARTITION_DP, 1},
    {"configs/uneven-gpt-13b.json", "clusters/h100-a100-mixed.yaml", PARTITION_ILP, 1},
    {"configs/amp-gpt2.json", "clusters/amp-3xp3-1xg4dn.yaml", PARTITION_DP, 3},
    {"configs/gpt2-xl.json", "clusters/h100-a100-mixed.yaml", PARTITION_DP, 3},
};

START_TEST(search_survives_every_failure)
{
    const char *mpath = k_searches[_i].model, *cpath = k_searches[_i].cluster;
    planner_error err = PLANNER_ERROR_INIT;
    model *m = NULL;
    run_spec run;
    cluster *c = NULL;
    cost_params p;
    search_options o;
    search_result ref;
    long runs = 0;

    alloc_fail_at(0);
    ck_assert_msg(model_load(&m, &run, mpath, NULL, &err) == PLANNER_OK, "%s", err.msg);
    ck_assert_msg(cluster_load(&c, cpath, &err) == PLANNER_OK, "%s", err.msg);
    cost_params_default(&p);
    search_options_default(&o);
    o.gbs = run.global_batch;
    o.seq_len = run.seq_len;
    o.partition = k_searches[_i].partition;
    o.jobs = k_searches[_i].jobs;
    ck_assert_msg(search_run(&ref, m, c, &p, &o, &err) == PLANNER_OK, "%s", err.msg);
    ck_assert_int_ge(ref.n_top, 1);
    for (long n = 1; n <= MAX_RUNS; n++) {
        search_result res;
        planner_status rc;
        int hit;
        error_clear(&err);
        alloc_fail_at(n);
        rc = search_run(&res, m, c, &p, &o, &err);
        hit = alloc_failed();
        alloc_fail_at(0);
        runs++;
        if (rc == PLANNER_OK)
            assert_same_result(n, &res, &ref);
        else
            assert_oom("search", n, rc, &err);
        search_result_free(&res);
        if (!hit)
            break;
    }
    search_result_free(&ref);
    model_free(m);
    cluster_free(c);
    fprintf(stderr, "alloc_fail: search %s on %s at -j %d, %ld runs\n", mpath, cpath,
            o.jobs, runs);
}
END_TEST

/* pl_grow, the growable array of base/alloc.h: capacities 8, 16, 32 as
 * appends pass them (one reallocation per doubling), a jump to the first
 * power-of-two multiple that holds the need, the array and capacity left
 * alone when the reallocation fails or the size overflows. */
START_TEST(grow_doubles_and_fails_cleanly)
{
    size_t cap = 0;
    int *a = NULL, *b;
    long reallocs = 0;
    for (size_t n = 1; n <= 32; n++) {
        size_t was = cap;
        alloc_fail_at(0);
        b = pl_grow(a, &cap, n, sizeof *a, 8);
        ck_assert_ptr_nonnull(b);
        reallocs += alloc_count();
        a = b;
        a[n - 1] = (int)n;
        ck_assert_uint_eq(cap, n <= 8 ? 8 : n <= 16 ? 16 : 32);
        ck_assert(cap == was || was == 0 || cap == 2 * was);
    }
    ck_assert_int_eq(reallocs, 3);
    ck_assert_ptr_eq(pl_grow(a, &cap, 32, sizeof *a, 8), a);   /* room: nothing to do */
    alloc_fail_at(1);
    ck_assert_ptr_null(pl_grow(a, &cap, 33, sizeof *a, 8));
    alloc_fail_at(0);
    ck_assert_uint_eq(cap, 32);
    for (int i = 0; i < 32; i++)
        ck_assert_int_eq(a[i], i + 1);   /* still the caller's, intact */
    ck_assert_ptr_null(pl_grow(a, &cap, SIZE_MAX / 2 + 2, sizeof *a, 8));   /* overflow */
    ck_assert_uint_eq(cap, 32);
    b = pl_grow(a, &cap, 100, sizeof *a, 8);   /* 32 -> 64 -> 128 in one step */
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(cap, 128);
    pl_free(b);
}
END_TEST

/* planner --help's lists of shipped files (tool/shipped.c): every
 * allocation failed in turn ends in the out-of-memory error with nothing of
 * the list printed (it printed its heading and returned silently, so --help
 * exited 0 with the names missing); the run that completes prints the
 * list the run without failures prints. */
START_TEST(shipped_list_fails_visibly)
{
    char *ref = NULL, *got = NULL;
    size_t ref_len = 0, got_len = 0;
    planner_error err = PLANNER_ERROR_INIT;
    FILE *f = open_memstream(&ref, &ref_len);
    long failed = 0, n;
    ck_assert_ptr_nonnull(f);
    alloc_fail_at(0);
    ck_assert_int_eq(shipped_list_in(f, "Shipped models", "configs", ".json", &err), PLANNER_OK);
    fclose(f);
    ck_assert_msg(strstr(ref, "Shipped models (in configs):\n  ") == ref &&
                      strstr(ref, "llama3-8b") != NULL, "%s", ref);
    for (n = 1; n <= MAX_RUNS; n++) {
        planner_status rc;
        int hit;
        planner_error e = PLANNER_ERROR_INIT;
        f = open_memstream(&got, &got_len);
        ck_assert_ptr_nonnull(f);
        alloc_fail_at(n);
        rc = shipped_list_in(f, "Shipped models", "configs", ".json", &e);
        hit = alloc_failed();
        alloc_fail_at(0);
        fclose(f);
        if (hit) {
            assert_oom("shipped_list_in", n, rc, &e);
            ck_assert_msg(got_len == 0, "allocation %ld failed, yet it printed '%s'", n, got);
            failed++;
        } else {
            ck_assert_int_eq(rc, PLANNER_OK);
            ck_assert_str_eq(got, ref);
        }
        free(got);
        got = NULL;
        if (!hit)
            break;
    }
    ck_assert_int_gt(failed, 1);   /* each name and the wrapped text */
    free(ref);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("alloc_fail");
    TCase *tc = tcase_create("torture");
    alloc_init();
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, grow_doubles_and_fails_cleanly);
    tcase_add_test(tc, shipped_list_fails_visibly);
    tcase_add_test(tc, models_survive_every_failure);
    tcase_add_test(tc, clusters_survive_every_failure);
    tcase_add_loop_test(tc, search_survives_every_failure, 0,
                        (int)(sizeof k_searches / sizeof k_searches[0]));
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
