/* bench_common.c: the helpers the benchmark programs share (bench_common.h).
 * Invariant: every benchmark times the same thing the same way (the
 * search's own CLOCK_MONOTONIC span or bench_now_s()) and reports best and
 * median over its repeats. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench_common.h"

int bench_case_load(bench_case *bc, const char *model_path, const char *cluster_path)
{
    planner_error err = PLANNER_ERROR_INIT;
    run_spec run;
    memset(bc, 0, sizeof *bc);
    if (model_load(&bc->m, &run, model_path, NULL, &err) != PLANNER_OK ||
        cluster_load(&bc->c, cluster_path, &err) != PLANNER_OK) {
        error_print(&err, stderr);
        return 1;
    }
    cost_params_default(&bc->p);
    search_options_default(&bc->o);
    bc->o.gbs = run.global_batch;
    bc->o.seq_len = run.seq_len;
    return 0;
}

void bench_case_free(bench_case *bc)
{
    cluster_free(bc->c);
    model_free(bc->m);
    bc->c = NULL;
    bc->m = NULL;
}

int bench_search_repeat(const bench_case *bc, int repeats, double *t, search_result *last)
{
    planner_error err = PLANNER_ERROR_INIT;
    memset(last, 0, sizeof *last);
    for (int i = 0; i < repeats; i++) {
        search_result r;
        planner_status st = search_run(&r, bc->m, bc->c, &bc->p, &bc->o, &err);
        if (st != PLANNER_OK && st != PLANNER_E_INFEASIBLE) {
            error_print(&err, stderr);
            return 1;
        }
        t[i] = r.seconds;
        search_result_free(last);
        *last = r;
    }
    return 0;
}

int bench_parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

int bench_pair_args(int argc, char **argv, const char *prog, int max_repeats, int *repeats)
{
    int i = 1;
    if (argc > 2 && strcmp(argv[1], "-r") == 0) {
        if (bench_parse_int(argv[2], 1, max_repeats, repeats) != 0) {
            fprintf(stderr, "%s: -r takes 1..%d\n", prog, max_repeats);
            return -1;
        }
        i = 3;
    }
    if (argc - i < 2 || (argc - i) % 2 != 0) {
        fprintf(stderr, "usage: %s [-r REPEATS] MODEL CLUSTER [MODEL CLUSTER]...\n", prog);
        return -1;
    }
    return i;
}

double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_sort_median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof t[0], cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}
