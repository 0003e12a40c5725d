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
/* crossval_prepare's folds: one fold per source (leave one source out). */
#define CROSSVAL_LOSO 0

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
    crossval_acc src_total;             /* crossval_source's test runs */
    crossval_acc src_by_subset[SUBSET_COUNT];
    int src_sources, src_better;        /* sources calibrated; predicted better */
    cost_params def;                    /* the default constants */
    cost_params start;                  /* the folds' start, prior centre and
                                           fallback: cost_params_unfitted */
    bool *use;                          /* scratch: a fold's training runs */
    bool *test;                         /* scratch: its test runs */
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
 * a source never trains and tests together.  folds CROSSVAL_LOSO: one
 * fold per source (cv->folds becomes the number of sources).  Refuses
 * (PLANNER_E_INPUT) fewer sources than folds.  Free with crossval_free. */
planner_status crossval_prepare(crossval *out, const validation_set *set,
                                const calib_options *opt, int folds, planner_error *err);

/* Fold f: fits on the other folds' runs (calibrate_fit) from cv->start,
 * the unfitted constants (its prior's centre too), predicts f's runs with
 * the fit (cv->start when it is refused: out->refusal says why) and with
 * the defaults (the "default" column: in-sample), and
 * adds them to cv->total and cv->by_subset.  Fails only when the fit fails
 * with PLANNER_E_INTERNAL or PLANNER_E_USAGE (a bad --params) or a
 * prediction with PLANNER_E_INTERNAL.  Free out->fit with calib_fit_free. */
planner_status crossval_fold(crossval_fold_result *out, crossval *cv,
                             const validation_set *set, const calib_options *opt, int f,
                             planner_error *err);

/* Calibrating on a few runs of a source (crossval --calibrate-on N): of
 * source k's eligible runs (file order, n of them, n >= 2 N), the N in the
 * middle of N equal slices (positions floor((2 i + 1) n / (2 N)), i =
 * 0..N-1) are fitted from *start (NULL: the defaults; with --folds loso the
 * fit on the other sources, so that the source is new to it), and the
 * other n - N runs of the source are predicted with the fit and with
 * *start.  out->acc holds those test runs (sum_def: with *start); the
 * totals go to cv->src_total and cv->src_by_subset, and cv->src_sources,
 * cv->src_better count the sources and those the fit predicts better.
 * Fails as crossval_fold does.  Free out->fit with calib_fit_free. */
planner_status crossval_source(crossval_fold_result *out, crossval *cv,
                               const validation_set *set, const calib_options *opt,
                               const cost_params *start, int k, int n_cal, planner_error *err);

void crossval_free(crossval *cv);   /* frees contents; NULL-safe */

#endif
