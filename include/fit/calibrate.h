/* calibrate.h: fitting the cost model's free constants to measured runs
 * (`planner calibrate`; `planner crossval` is crossval.h, the calibration
 * file calibration.h).
 *
 * The fitted quantities are named parameters over cost_params: per GPU
 * generation "<gen>.<field>" (hopper.gemm_eff, ampere.step_overhead_s; a
 * bare "<field>" in --params or in a calibration file means that field for
 * every generation), and per software stack "<stack>.<field>"
 * (megatron-lm-2020.step_overhead_s, deepspeed.attn_eff; inputs/stack.h).
 * An efficiency enters the step time as work / (peak x eff), so its
 * inverse is fitted; a time or a fraction of a
 * modelled time is fitted as is.
 * The table of fields is in calibrate.c (one line per constant).
 */
#ifndef PLANNER_CALIBRATE_H
#define PLANNER_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>
#include "base/progress.h"
#include "schedule/evaluate.h"
#include "fit/validate.h"

#define CALIB_MAX_PARAMS 96
#define CALIB_NAME_MAX 48

typedef enum calib_kind {
    CALIB_INV_EFF,      /* an efficiency in (0, 1]: 1/value is fitted */
    CALIB_DIRECT        /* a time or a fraction: fitted as is */
} calib_kind;

/* One fitted quantity: a field of the table, for one generation (gen <
 * GEN_COUNT), one software stack (gen = GEN_COUNT + stack_id), or -1 for a
 * global field. */
typedef struct calib_param {
    int field;
    int gen;
} calib_param;

/* Parses "hopper.gemm_eff" into *out.  Returns 0 or -1. */
int calib_param_parse(calib_param *out, const char *name);
void calib_param_name(const calib_param *p, char *buf, size_t size);
calib_kind calib_param_kind(const calib_param *p);
double calib_param_get(const cost_params *cp, const calib_param *p);
void calib_param_set(cost_params *cp, const calib_param *p, double value);
/* PLANNER_OK if `value` is in the parameter's accepted range, else
 * PLANNER_E_INPUT with "V is out of range (accepted LO..HI)" in *err (no
 * position: the caller adds it).  err may be NULL. */
planner_status calib_param_check(const calib_param *p, double value, planner_error *err);

/* The field of a bare per-generation name ("gemm_eff": that field for
 * every generation), or -1. */
int calib_field_bare(const char *name);

/* Every parameter name (GEN.NAME, globals, and the bare per-generation
 * names), for did-you-mean. */
#define CALIB_NAMES_MAX 256
typedef struct calib_name_list {
    char text[CALIB_NAMES_MAX][CALIB_NAME_MAX];
    const char *ptr[CALIB_NAMES_MAX];
    size_t n;
} calib_name_list;
void calib_param_names(calib_name_list *out);

/* "per generation, as GEN.NAME or NAME for every generation: a, b; global:
 * c" (the names of the table, for messages and --help). */
void calib_field_list(char *buf, size_t size);

/* calib_options.subset besides a validation_subset. */
#define CALIB_SUBSET_ALL (-1)     /* every supported run, MoE included */
#define CALIB_SUBSET_DENSE (-2)   /* dense16 + fp8: every non-MoE run */

typedef struct calib_options {
    const char *runs_file;  /* for messages */
    const char *params;     /* "gemm_eff,hopper.inter_eff,..."; NULL = the
                               default list: per generation the runs use,
                               with a prior (prior > 0) the constants its
                               runs exercise most, one per 3 runs; without,
                               the constants its runs determine (dropped,
                               each with a note: those no run exercises,
                               those of a near-singular direction of the
                               generation's block, those whose fit leaves
                               the plausible range of cost.h); a name
                               without generation means that field for
                               every generation present */
    int subset;             /* validation_subset, CALIB_SUBSET_DENSE (default:
                               every non-MoE run) or CALIB_SUBSET_ALL */
    int max_iter;           /* linearized fixed-point iterations, >= 1 */
    double prior;           /* weight w >= 0 of the prior toward the start
                               values: w^2 sum_j ln(x_j / x0_j)^2 is added
                               to the sum of the runs' squared relative
                               errors (a ridge on the log-parameters);
                               0: none (plain least squares); default
                               CALIB_PRIOR_DEFAULT */
    double huber_k;         /* a fit of fewer than CALIB_ROBUST_MAX_RUNS
                               runs takes Huber's loss: a run whose
                               relative step-time error is beyond huber_k x
                               CALIB_SCATTER_DEFAULT pulls on the constants
                               with a bounded force (docs/calibration.md,
                               "The robust loss"); default
                               CALIB_HUBER_K_DEFAULT, 0: least squares */
    progress_hook progress; /* told the runs re-predicted so far (each
                               prediction re-searches a run's strategies;
                               a fit makes hundreds), total unknown */
} calib_options;

/* The default calib_options.prior (docs/calibration.md, "The prior"). */
#define CALIB_PRIOR_DEFAULT 1.0
/* The robust loss (docs/calibration.md, "The robust loss"): Huber's tuning
 * constant (95% efficiency at normal errors), the scale it multiplies (the
 * published corpus's within-source scatter of step times, in sample, RMS:
 * "The prior"), and the fewest runs fitted by least squares instead. */
#define CALIB_HUBER_K_DEFAULT 1.345
#define CALIB_SCATTER_DEFAULT 0.09
#define CALIB_ROBUST_MAX_RUNS 10

void calib_options_default(calib_options *o);

/* Whether a run of subset `s` takes part under the --subset choice `subset`
 * (a validation_subset, CALIB_SUBSET_ALL or CALIB_SUBSET_DENSE).  The default,
 * CALIB_SUBSET_DENSE, leaves the MoE runs out: their cost model is not
 * validated yet (docs/validation.md), and fitting the shared per-generation
 * constants to them would degrade the dense predictions. */
bool calib_subset_wanted(int subset, validation_subset s);

typedef struct calib_run_fit {
    int run;                /* index into the validation_set */
    double measured_step_s;
    double predicted_step_s;
    double rel_error;       /* predicted / measured - 1 (step time) */
} calib_run_fit;

typedef struct calib_fit {
    int n_params;
    calib_param param[CALIB_MAX_PARAMS];
    double start[CALIB_MAX_PARAMS];     /* values before the fit */
    double value[CALIB_MAX_PARAMS];     /* fitted values */
    cost_params fitted;                 /* the start params with the fit applied */
    int n_runs;
    calib_run_fit *run;                 /* n_runs, owned */
    int skipped_unsupported, skipped_subset, skipped_infeasible;
    int rank;
    double sv[CALIB_MAX_PARAMS];        /* singular values, scaled columns */
    double condition;                   /* sv[0] / sv[n-1] */
    int iterations;
    bool converged;                     /* strategies and values stable */
    double rms_rel, max_rel, mean_abs_rel;
    char notes[8192];                   /* dropped parameters, one per line */
} calib_fit;

/* Fits the parameters to the supported runs of `set` selected by `use`
 * (NULL: all) and opt->subset, starting from *start.  Each iteration picks
 * every run's strategy with the current constants (validation_predict),
 * linearizes its step time in the fitted variables (exact: the model is
 * piecewise linear in them), and solves the relatively weighted least-squares
 * problem with LAPACKE_dgelsd.  Refuses (PLANNER_E_INPUT, message in *err)
 * fewer runs than parameters, rank deficiency, an explicitly named parameter
 * no run exercises, and values outside their range.  Free with
 * calib_fit_free. */
planner_status calibrate_fit(calib_fit *out, const validation_set *set, const bool *use,
                             const cost_params *start, const calib_options *opt,
                             planner_error *err);
void calib_fit_free(calib_fit *f);   /* frees contents; NULL-safe */

#endif
