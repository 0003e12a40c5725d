/* calibrate_report.h: the tables of `planner calibrate` and `planner
 * crossval`, written to a FILE* the caller gives. */
#ifndef PLANNER_CALIBRATE_REPORT_H
#define PLANNER_CALIBRATE_REPORT_H

#include <stdbool.h>
#include <stdio.h>
#include "fit/crossval.h"

/* The fitted values (start, fitted, change), every run's residual, and the
 * fit's statistics (RMS, condition number, singular values, iterations). */
void calibrate_report(FILE *out, const calib_fit *f, const validation_set *set);

/* crossval's first lines: the runs, sources, folds and subset, and the
 * fold table's header.  `subset` is calib_options.subset. */
void crossval_report_head(FILE *out, const char *runs_file, const crossval *cv, int subset);

/* Fold f's line of the fold table. */
void crossval_report_fold(FILE *out, const crossval *cv, int f, const crossval_fold_result *r);

/* The sources of each fold and the MAPE / max error of all test runs and
 * per subset. */
void crossval_report_tail(FILE *out, const crossval *cv, const validation_set *set);

/* crossval --calibrate-on N: the header (loso: under the fold table, the
 * start being each fold's fit), one line per source (its runs, the test
 * runs, MAPE with the start and with the fit on N of its runs, the fit or
 * why it was refused, the source's name), and the totals with the count of
 * sources whose rest the fit predicts better. */
void crossval_report_source_head(FILE *out, const char *runs_file, const crossval *cv,
                                 int subset, int n_cal, bool loso);
void crossval_report_source(FILE *out, const crossval *cv, const validation_set *set, int k,
                            const crossval_fold_result *r);
void crossval_report_source_tail(FILE *out, const crossval *cv);

#endif
