/* calibrate_report.c: the tables of `planner calibrate` and `planner
 * crossval` (calibrate_report.h).
 *
 * calibrate: one line per fitted constant (start, fitted, change in
 * percent), one per run (measured and predicted step time, relative error),
 * then the fit's statistics.  crossval: a header, one line per fold (MAPE of
 * tokens/s per GPU with the default and the fitted constants, or why the
 * fit was refused), the sources of each fold, and the totals.  Percentages
 * to one decimal; the figures are the fit's, nothing is recomputed here
 * except means.
 */
#include <stdio.h>
#include "out/calibrate_report.h"

void calibrate_report(FILE *out, const calib_fit *f, const validation_set *set)
{
    int j, i;
    fprintf(out, "%-28s %14s %14s %8s\n", "parameter", "start", "fitted", "change");
    for (j = 0; j < f->n_params; j++) {
        char name[CALIB_NAME_MAX];
        calib_param_name(&f->param[j], name, sizeof name);
        fprintf(out, "%-28s %14.6g %14.6g ", name, f->start[j], f->value[j]);
        if (f->start[j] != 0)
            fprintf(out, "%+7.1f%%\n", 100.0 * (f->value[j] / f->start[j] - 1.0));
        else
            fprintf(out, "%8s\n", "-");
    }
    fprintf(out, "\n%-36s %-14s %12s %12s %8s\n", "run", "gpu", "measured_s", "predicted_s",
            "error");
    for (i = 0; i < f->n_runs; i++) {
        const calib_run_fit *r = &f->run[i];
        const validation_run *vr = &set->run[r->run];
        fprintf(out, "%-36.36s %-14.14s %12.4f %12.4f %+7.1f%%\n", vr->id,
                vr->c->group[0].gpu.name, r->measured_step_s, r->predicted_step_s,
                100.0 * r->rel_error);
    }
    fprintf(out,
            "\nruns fitted: %d (skipped: %d unsupported, %d in other subsets, %d infeasible)\n",
            f->n_runs, f->skipped_unsupported, f->skipped_subset, f->skipped_infeasible);
    fprintf(out, "step time error: RMS %.2f%%, mean |error| %.2f%%, max %.2f%%\n",
            100.0 * f->rms_rel, 100.0 * f->mean_abs_rel, 100.0 * f->max_rel);
    fprintf(out, "condition number %.4g (rank %d of %d); singular values:", f->condition,
            f->rank, f->n_params);
    for (j = 0; j < f->n_params; j++)
        fprintf(out, " %.4g", f->sv[j]);
    fprintf(out, "\niterations: %d (%s)\n", f->iterations,
            f->converged ? "converged" : "not converged");
}

static const char *subset_label(int subset)
{
    if (subset == CALIB_SUBSET_ALL)
        return "all";
    if (subset == CALIB_SUBSET_DENSE)
        return "dense (dense16 + fp8)";
    return validation_subset_name((validation_subset)subset);
}

void crossval_report_head(FILE *out, const char *runs_file, const crossval *cv, int subset)
{
    fprintf(out, "crossval: %s, %d runs from %d sources, %d folds by source, subset %s\n",
            runs_file, cv->n_runs, cv->n_src, cv->folds, subset_label(subset));
    fprintf(out, "%-5s %7s %6s %5s %13s %16s  %s\n", "fold", "sources", "train", "test",
            "MAPE default", "MAPE calibrated", "fit");
}

void crossval_report_fold(FILE *out, const crossval *cv, int f, const crossval_fold_result *r)
{
    const crossval_acc *acc = &r->acc;
    fprintf(out, "%-5d %7d %6d %5d %12.1f%% %15.1f%%  ", f + 1, cv->fold_srcs[f], r->ntrain,
            acc->n, acc->n ? 100.0 * acc->sum_def / acc->n : 0.0,
            acc->n ? 100.0 * acc->sum_cal / acc->n : 0.0);
    if (r->fitted)
        fprintf(out, "%d parameters, train RMS %.1f%%\n", r->fit.n_params,
                100.0 * r->fit.rms_rel);
    else
        fprintf(out, "refused, defaults kept: %s\n", r->refusal);
}

/* A summary line: runs, MAPE and max error, default and calibrated. */
static void acc_line(FILE *out, const char *label, const crossval_acc *a)
{
    fprintf(out, "%-16s %5d %12.1f%% %15.1f%% %11.1f%% %14.1f%%\n", label, a->n,
            100.0 * a->sum_def / a->n, 100.0 * a->sum_cal / a->n, 100.0 * a->max_def,
            100.0 * a->max_cal);
}

static void acc_table(FILE *out, const crossval_acc *total, const crossval_acc *by_subset,
                      const char *what);

void crossval_report_tail(FILE *out, const crossval *cv, const validation_set *set)
{
    int f, i;
    fprintf(out, "\nsources (runs) per fold:\n");
    for (f = 0; f < cv->folds; f++)
        for (i = 0; i < cv->n_src; i++)
            if (cv->src_fold[i] == f)
                fprintf(out, "  %d  %s (%d)\n", f + 1, set->run[cv->src_first[i]].source,
                        cv->src_runs[i]);
    acc_table(out, &cv->total, cv->by_subset, "default");
}

void crossval_report_source_head(FILE *out, const char *runs_file, const crossval *cv,
                                 int subset, int n_cal, bool loso)
{
    if (!loso)
        fprintf(out, "crossval: %s, %d runs from %d sources, subset %s\n", runs_file,
                cv->n_runs, cv->n_src, subset_label(subset));
    fprintf(out, "%scalibrated on %d runs of each source of at least %d (the middles of %d "
            "equal slices in file order), the rest of the source predicted from %s\n",
            loso ? "\n" : "", n_cal, 2 * n_cal, n_cal,
            loso ? "the fit on the other sources (start) and from that fit calibrated"
                 : "the defaults (start) and from the defaults calibrated");
    fprintf(out, "%-6s %4s %5s %13s %16s  %s\n", "source", "runs", "test", "MAPE start",
            "MAPE calibrated", "fit");
}

void crossval_report_source(FILE *out, const crossval *cv, const validation_set *set, int k,
                            const crossval_fold_result *r)
{
    const crossval_acc *acc = &r->acc;
    fprintf(out, "%-6d %4d %5d %12.1f%% %15.1f%%  ", k + 1, cv->src_runs[k], acc->n,
            acc->n ? 100.0 * acc->sum_def / acc->n : 0.0,
            acc->n ? 100.0 * acc->sum_cal / acc->n : 0.0);
    if (r->fitted)
        fprintf(out, "%d parameter%s, train RMS %.1f%%; %s\n", r->fit.n_params,
                r->fit.n_params == 1 ? "" : "s", 100.0 * r->fit.rms_rel,
                set->run[cv->src_first[k]].source);
    else
        fprintf(out, "refused, start kept: %s; %s\n", r->refusal,
                set->run[cv->src_first[k]].source);
}

/* The MAPE / max lines of test runs, all and per subset; `what`: the two
 * columns' names. */
static void acc_table(FILE *out, const crossval_acc *total, const crossval_acc *by_subset,
                      const char *what)
{
    int i;
    fprintf(out, "\n%-16s %5s %13s %16s %12s %15s\n", "test runs", "runs",
            what[0] == 'd' ? "MAPE default" : "MAPE start", "MAPE calibrated",
            what[0] == 'd' ? "max default" : "max start", "max calibrated");
    if (total->n > 0)
        acc_line(out, "all", total);
    for (i = 0; i < SUBSET_COUNT; i++)
        if (by_subset[i].n > 0)
            acc_line(out, validation_subset_name((validation_subset)i), &by_subset[i]);
}

void crossval_report_source_tail(FILE *out, const crossval *cv)
{
    acc_table(out, &cv->src_total, cv->src_by_subset, "start");
    fprintf(out, "calibrated beats its start (lower MAPE on the rest of the source) on %d "
            "of %d sources\n", cv->src_better, cv->src_sources);
}
