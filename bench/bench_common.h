/* bench_common.h: what the benchmark programs (bench/bench_*.c) share:
 * loading one MODEL CLUSTER case with the search's default options (the
 * whole space, the model file's batch and sequence), their command line
 * ([-r REPEATS] MODEL CLUSTER [MODEL CLUSTER]...), a monotonic clock and
 * the best/median of repeated timings.  Built with each of them by
 * bench/run.sh; not part of libplanner. */
#ifndef PLANNER_BENCH_COMMON_H
#define PLANNER_BENCH_COMMON_H

#include "search/search.h"

#define BENCH_MAX_REPEATS 100

typedef struct bench_case {
    model *m;               /* owned */
    cluster *c;             /* owned */
    cost_params p;          /* the defaults */
    search_options o;       /* the defaults, gbs and seq_len from the model */
} bench_case;

/* Loads the pair into *bc.  Returns 0, or 1 with the error printed on
 * stderr (bc then holds nothing to free beyond bench_case_free). */
int bench_case_load(bench_case *bc, const char *model_path, const char *cluster_path);
void bench_case_free(bench_case *bc);   /* safe on a failed load */

/* Runs the search on bc `repeats` times: t[i] the seconds of run i
 * (search_result.seconds), *last the last result (search_result_free it in
 * every case; zeroed when no run succeeded).  An infeasible plan is a
 * result, not an error.  Returns 0, or 1 with the error printed. */
int bench_search_repeat(const bench_case *bc, int repeats, double *t, search_result *last);

/* Parses "[-r REPEATS] MODEL CLUSTER [MODEL CLUSTER]..." for `prog`:
 * *repeats (1..max_repeats, else *repeats as given) and the index of the
 * first MODEL.  Returns -1 after printing the usage error (exit 2). */
int bench_pair_args(int argc, char **argv, const char *prog, int max_repeats, int *repeats);

/* 0 with *out the integer `s` (all of it, in lo..hi), else -1. */
int bench_parse_int(const char *s, int lo, int hi, int *out);

double bench_now_s(void);   /* CLOCK_MONOTONIC, seconds */

/* Sorts t[0..n) ascending (t[0] is then the best) and returns the median. */
double bench_sort_median(double *t, int n);

#endif
