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
#include <string.h>
#include "base/alloc.h"
#include "bench_common.h"

static int bench_one(const char *model_path, const char *cluster_path, int repeats)
{
    bench_case bc;
    search_result r;
    double t[BENCH_MAX_REPEATS], median;
    int rc = 1;

    memset(&r, 0, sizeof r);
    if (bench_case_load(&bc, model_path, cluster_path) != 0 ||
        bench_search_repeat(&bc, repeats, t, &r) != 0)
        goto cleanup;
    median = bench_sort_median(t, repeats);
    printf("planner --model %s --cluster %s\n", model_path, cluster_path);
    printf("  %d GPUs, %d runs: best %.1f ms, median %.1f ms; %ld candidates evaluated "
           "(%ld feasible), %.0f candidates/s\n",
           cluster_total_gpus(bc.c), repeats, 1e3 * t[0], 1e3 * median, r.candidates, r.feasible,
           median > 0 ? (double)r.candidates / median : 0.0);
    rc = 0;
cleanup:
    search_result_free(&r);
    bench_case_free(&bc);
    return rc;
}

int main(int argc, char **argv)
{
    int repeats = 7, rc = 0, i;
    alloc_init();
    if ((i = bench_pair_args(argc, argv, "bench_search", BENCH_MAX_REPEATS, &repeats)) < 0)
        return 2;
    for (; i + 1 < argc; i += 2)
        rc |= bench_one(argv[i], argv[i + 1], repeats);
    return rc;
}
