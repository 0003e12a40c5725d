/* bench_search.c: wall time of full searches (the planner's main job).
 *
 * Usage: bench_search [-r REPEATS] MODEL CLUSTER [MODEL CLUSTER]...
 * For each pair, loads the inputs once, then runs search_run REPEATS times
 * (default 7) with the default options (the whole space, top 10) and prints
 * the equivalent command, the best and median wall time of the search
 * (search_result.seconds, CLOCK_MONOTONIC), the candidates evaluated and the
 * candidates per second at the median.  Exits 1 when an input fails to load
 * or a search errs (an infeasible plan is reported, not an error). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "search.h"

#define MAX_REPEATS 100

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int bench_one(const char *model_path, const char *cluster_path, int repeats)
{
    planner_error err = PLANNER_ERROR_INIT;
    model *m = NULL;
    cluster *c = NULL;
    cost_params p;
    search_options o;
    double t[MAX_REPEATS], median;
    long candidates = 0, feasible = 0;
    int rc = 1;

    if (model_load(model_path, NULL, &m, &err) != PLANNER_OK ||
        cluster_load(cluster_path, &c, &err) != PLANNER_OK) {
        error_print(&err, stderr);
        goto cleanup;
    }
    cost_params_default(&p);
    search_options_default(&o);
    o.gbs = m->global_batch;
    o.seq_len = m->seq_len;
    for (int i = 0; i < repeats; i++) {
        search_result r;
        planner_status st = search_run(m, c, &p, &o, &r, &err);
        if (st != PLANNER_OK && st != PLANNER_E_INFEASIBLE) {
            error_print(&err, stderr);
            goto cleanup;
        }
        t[i] = r.seconds;
        candidates = r.candidates;
        feasible = r.feasible;
        search_result_free(&r);
    }
    qsort(t, (size_t)repeats, sizeof t[0], cmp_double);
    median = repeats % 2 ? t[repeats / 2] : 0.5 * (t[repeats / 2 - 1] + t[repeats / 2]);
    printf("planner --model %s --cluster %s\n", model_path, cluster_path);
    printf("  %d GPUs, %d runs: best %.1f ms, median %.1f ms; %ld candidates evaluated "
           "(%ld feasible), %.0f candidates/s\n",
           cluster_total_gpus(c), repeats, 1e3 * t[0], 1e3 * median, candidates, feasible,
           median > 0 ? (double)candidates / median : 0.0);
    rc = 0;
cleanup:
    cluster_free(c);
    model_free(m);
    return rc;
}

int main(int argc, char **argv)
{
    int repeats = 7, i = 1, rc = 0;
    alloc_init();
    if (argc > 2 && strcmp(argv[1], "-r") == 0) {
        repeats = atoi(argv[2]);
        if (repeats < 1 || repeats > MAX_REPEATS) {
            fprintf(stderr, "bench_search: -r takes 1..%d\n", MAX_REPEATS);
            return 2;
        }
        i = 3;
    }
    if (argc - i < 2 || (argc - i) % 2 != 0) {
        fprintf(stderr, "usage: bench_search [-r REPEATS] MODEL CLUSTER [MODEL CLUSTER]...\n");
        return 2;
    }
    for (; i + 1 < argc; i += 2)
        rc |= bench_one(argv[i], argv[i + 1], repeats);
    return rc;
}
