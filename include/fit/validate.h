/* validate.h: measured training runs (the schema of
 * ../shared/validation/published-runs.json) and the planner's prediction of
 * each, for `planner validate` and `planner calibrate`. */
#ifndef PLANNER_VALIDATE_H
#define PLANNER_VALIDATE_H

#include "search/search.h"

typedef enum validation_subset {
    SUBSET_DENSE16,     /* bf16 / fp16, no MoE */
    SUBSET_FP8,         /* fp8, mxfp8, nvfp4, no MoE */
    SUBSET_MOE,         /* any precision with MoE */
    SUBSET_COUNT
} validation_subset;

#define VALIDATION_ID_MAX 128
#define VALIDATION_MAX_RUNS 100000

typedef struct validation_run {
    char id[VALIDATION_ID_MAX];
    char source[256];               /* the source, shortened */
    validation_subset subset;
    model *m;                       /* owned */
    cluster *c;                     /* owned: one group of the run's GPUs */
    int num_gpus;
    strategy_constraints fix;       /* published knobs; the rest free */
    int gbs;
    double measured_tokens_per_s_per_gpu;
    char unsupported[160];          /* why it cannot be predicted; "" if it can */
} validation_run;

typedef struct validation_set {
    validation_run *run;            /* owned */
    int n;
} validation_set;

/* Reads a runs file.  Every run is checked (limits, known GPU, knobs);
 * the first problem is reported with the run's key path. */
planner_status validation_load(const char *path, validation_set **out, planner_error *err);
void validation_free(validation_set *v);   /* NULL-safe */

/* Predicts one run: its published knobs fixed, the rest searched.  Returns 0
 * with *best the winner, PLANNER_E_INFEASIBLE when nothing fits (best holds
 * the closest miss), or another status with *err. */
planner_status validation_predict(const validation_run *r, const cost_params *p,
                                  plan *best, planner_error *err);

const char *validation_subset_name(validation_subset s);

#endif
