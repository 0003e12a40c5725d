/* crossval.h: k-fold cross-validation of the calibration (`planner
 * crossval`): runs folded by their "source", each fold predicted with the
 * default constants and with constants fitted on the other folds.
 *
 * The caller drives the folds (crossval_prepare, then crossval_fold for
 * f = 0..folds-1), so it can show each fold as it finishes. */
#ifndef PLANNER_CROSSVAL_H
#define PLANNER_CROSSVAL_H

#include <stdbool.h>
#include "fit/calibrate.h"

#define CROSSVAL_MAX_FOLDS 100

/* Sum and max of |error| with the default and the calibrated constants. */
typedef struct crossval_acc {
    double sum_def, sum_cal, max_def, max_cal;
    int n;
} crossval_acc;

typedef struct crossval {
    int folds;
    int n_src;                          /* sources with eligible runs */
    int n_runs;                         /* eligible runs */
    bool *eligible;                     /* per run: supported, in the subset, a
                                           plan fits with the defaults */
    double *def_err;                    /* per run: tokens/s error, defaults */
    int *src;                           /* per eligible run: its source */
    int *fold;                          /* per run: its fold, -1 if not eligible */
    int *src_first;                     /* per source: its first run */
    int *src_runs;                      /* per source: its eligible runs */
    int *src_fold;                      /* per source: its fold */
    int fold_runs[CROSSVAL_MAX_FOLDS];  /* eligible runs per fold */
    int fold_srcs[CROSSVAL_MAX_FOLDS];  /* sources per fold */
    crossval_acc total;                 /* the test runs of the folds done */
    crossval_acc by_subset[SUBSET_COUNT];
    cost_params def;                    /* the default constants */
    bool *use;                          /* scratch: a fold's training runs */
    int *order;                         /* scratch: sources by size */
    plan *scratch;
} crossval;

/* One fold's figures. */
typedef struct crossval_fold_result {
    crossval_acc acc;                   /* its test runs */
    int ntrain;                         /* training runs */
    bool fitted;                        /* false: the fit was refused */
    calib_fit fit;                      /* when fitted */
    char refusal[ERROR_MSG_MAX];        /* why not */
} crossval_fold_result;

/* Predicts every run with the default constants, finds the eligible ones
 * and their sources, and deals the sources, largest first (then in file
 * order), each to the fold with the fewest runs (then the lowest index):
 * a source never trains and tests together.  Refuses (PLANNER_E_INPUT)
 * fewer sources than folds.  Free with crossval_free. */
planner_status crossval_prepare(crossval *out, const validation_set *set,
                                const calib_options *opt, int folds, planner_error *err);

/* Fold f: fits on the other folds' runs (calibrate_fit), predicts f's runs
 * with the fit (the defaults when it is refused: out->refusal says why) and
 * adds them to cv->total and cv->by_subset.  Fails only when the fit fails
 * with PLANNER_E_INTERNAL or PLANNER_E_USAGE (a bad --params) or a
 * prediction with PLANNER_E_INTERNAL.  Free out->fit with calib_fit_free. */
planner_status crossval_fold(crossval_fold_result *out, crossval *cv,
                             const validation_set *set, const calib_options *opt, int f,
                             planner_error *err);

void crossval_free(crossval *cv);   /* frees contents; NULL-safe */

#endif
