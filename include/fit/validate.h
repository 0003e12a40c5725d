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
    cluster *c;                     /* owned: one group of the run's GPUs;
                                       c->stack the run's software stack */
    int num_gpus;
    strategy_constraints fix;       /* published knobs; the rest free */
    int gbs;                        /* the run: global batch, sequences */
    int seq_len;                    /* and its sequence length (model.seq_len) */
    double measured_tokens_per_s_per_gpu;
    double measured_peak_memory_bytes;  /* measured.peak_memory_gib; 0: none */
    char unsupported[160];          /* why it cannot be predicted; "" if it can */
    strategy *layout;               /* owned: a published pipeline layout
                                       (parallel.pipeline_layout), or NULL */
    char definition[64];            /* the model library's file the model was
                                       taken from ("qwen3-30b-a3b.json"); ""
                                       when built from the row's dimensions */
    char shape_note[256];           /* what the definition changed, or why
                                       it was not used; "" when none applies */
} validation_run;

typedef struct validation_set {
    validation_run *run;            /* owned */
    int n;
} validation_set;

/* Reads a runs file.  Every run is checked (limits, known GPU, knobs);
 * the first problem is reported with the run's key path. */
planner_status validation_load(validation_set **out, const char *path, planner_error *err);

/* Same, with a model library (inputs/model_library.h; NULL: none): a run
 * whose "model.name" names a definition of the folder whose published
 * dimensions agree with the run's (layers, hidden, heads, kv heads; experts,
 * top-k and expert width for MoE) is predicted on that definition, which
 * says what the schema cannot (gating, head size, MLA, sliding windows,
 * shared experts, dense layers, MTP); the run's sequence and precision stay
 * the run's.  A definition that disagrees, or cannot be read, is not used,
 * and shape_note says why. */
planner_status validation_load_library(validation_set **out, const char *path,
                                       const char *models_dir, planner_error *err);
void validation_free(validation_set *v);   /* NULL-safe */

/* Predicts one run: its published knobs fixed, the rest searched.  Returns 0
 * with *best the winner, PLANNER_E_INFEASIBLE when nothing fits (best holds
 * the closest miss), or another status with *err. */
planner_status validation_predict(plan *best, const validation_run *r, const cost_params *p,
                                  planner_error *err);

const char *validation_subset_name(validation_subset s);

/* What became of one run's prediction. */
typedef enum validation_status {
    VALIDATION_OK,              /* predicted */
    VALIDATION_UNSUPPORTED,     /* the planner cannot express or model it */
    VALIDATION_INFEASIBLE       /* no plan fits in memory */
} validation_status;

typedef struct validation_outcome {
    validation_status status;
    double predicted, error;    /* tokens/s per GPU; (predicted - measured) / measured */
    plan pl;                    /* the chosen plan (status ok) */
    bool mem_have;              /* a measured peak memory and a plan (the
                                   closest miss when infeasible) */
    double mem_predicted_bytes; /* that plan's peak memory per GPU */
    double mem_error;           /* predicted / measured - 1 */
    char reason[ERROR_MSG_MAX]; /* why not (other statuses) */
} validation_outcome;

/* Per subset: runs, runs predicted, sum and max of |error| over those. */
typedef struct validation_summary {
    int total[SUBSET_COUNT], cnt[SUBSET_COUNT];
    double sum[SUBSET_COUNT], maxe[SUBSET_COUNT];
    /* runs with a measured peak memory and a plan: their count, sum and max
     * of |memory error|, the most negative error (under-prediction: an
     * OOM), and how many of them no plan fits (refused) */
    int mem_cnt, mem_refused;
    double mem_sum, mem_max, mem_min_signed;
} validation_summary;

/* Predicts every run of `set` with constants p, on `jobs` threads
 * (base/workers.h; the outcomes and figures are the same for every jobs):
 * *out gets set->n outcomes (pl_free it; NULL when the set is empty), *sum
 * the per-subset figures.
 * A run that cannot be predicted is an outcome, not an error; only an
 * internal error (out of memory) fails, with nothing in *out. */
planner_status validation_predict_all(validation_outcome **out, validation_summary *sum,
                                      const validation_set *set, const cost_params *p,
                                      int jobs, planner_error *err);

/* "ok", "unsupported", "infeasible". */
const char *validation_status_name(validation_status s);

#endif
