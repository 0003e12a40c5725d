/* crossval.c: k-fold cross-validation of the calibration by source
 * (crossval.h).
 *
 * Folds by the runs' "source" (a table never trains and tests together);
 * sources go, largest first, to the fold with fewest runs (leave one source
 * out, --folds loso: one fold per source, the same dealing).  Each fold's
 * test runs are predicted with the default constants (once, up front: they
 * were fitted on every source, an in-sample reference) and with constants
 * fitted on the other folds (calibrate_fit) from the unfitted constants
 * (cost_params_unfitted: start, prior centre and fallback alike, so no
 * fold sees its test runs); the errors are those of tokens/s per GPU.
 * Everything is deterministic: fixed orders.
 */
#include <math.h>
#include <string.h>
#include "base/alloc.h"
#include "fit/crossval.h"

static void cv_add(crossval_acc *a, double e_def, double e_cal)
{
    a->sum_def += fabs(e_def);
    a->sum_cal += fabs(e_cal);
    if (fabs(e_def) > a->max_def)
        a->max_def = fabs(e_def);
    if (fabs(e_cal) > a->max_cal)
        a->max_cal = fabs(e_cal);
    a->n++;
}

/* Tokens/s error (predicted / measured - 1) of run r under p; 0 with *ok
 * false when no plan fits. */
static planner_status cv_error(const validation_run *r, const cost_params *p, double *e,
                               bool *ok, plan *scratch, planner_error *err)
{
    planner_error e2 = PLANNER_ERROR_INIT;
    planner_status st = validation_predict(scratch, r, p, &e2);
    *ok = false;
    *e = 0;
    if (st == PLANNER_E_INTERNAL)
        return error_set(err, st, NULL, 0, 0, NULL, "%s", e2.msg);
    if (st != PLANNER_OK)
        return PLANNER_OK;
    *ok = true;
    *e = scratch->e.tokens_per_s_per_gpu / r->measured_tokens_per_s_per_gpu - 1.0;
    return PLANNER_OK;
}

void crossval_free(crossval *cv)
{
    if (cv == NULL)
        return;
    pl_free(cv->eligible);
    pl_free(cv->def_err);
    pl_free(cv->src);
    pl_free(cv->fold);
    pl_free(cv->src_first);
    pl_free(cv->src_runs);
    pl_free(cv->src_fold);
    pl_free(cv->use);
    pl_free(cv->test);
    pl_free(cv->order);
    pl_free(cv->scratch);
    memset(cv, 0, sizeof *cv);
}

static planner_status cv_alloc(crossval *cv, int n, planner_error *err)
{
    if (n > 0) {
        cv->eligible = pl_calloc((size_t)n, sizeof *cv->eligible);
        cv->def_err = pl_calloc((size_t)n, sizeof *cv->def_err);
        cv->src = pl_calloc((size_t)n, sizeof *cv->src);
        cv->fold = pl_calloc((size_t)n, sizeof *cv->fold);
        cv->src_first = pl_calloc((size_t)n, sizeof *cv->src_first);
        cv->src_runs = pl_calloc((size_t)n, sizeof *cv->src_runs);
        cv->src_fold = pl_calloc((size_t)n, sizeof *cv->src_fold);
        cv->use = pl_calloc((size_t)n, sizeof *cv->use);
        cv->test = pl_calloc((size_t)n, sizeof *cv->test);
        cv->order = pl_calloc((size_t)n, sizeof *cv->order);
    }
    cv->scratch = pl_malloc(sizeof *cv->scratch);
    if (cv->scratch == NULL ||
        (n > 0 && (cv->eligible == NULL || cv->def_err == NULL || cv->src == NULL ||
                   cv->fold == NULL || cv->src_first == NULL || cv->src_runs == NULL ||
                   cv->src_fold == NULL || cv->use == NULL || cv->test == NULL ||
                   cv->order == NULL)))
        return error_oom(err);
    return PLANNER_OK;
}

/* Eligible runs (supported, in the subset, a plan fits) and their sources. */
static planner_status find_sources(crossval *cv, const validation_set *set,
                                   const calib_options *opt, planner_error *err)
{
    planner_status st;
    int i, k;
    for (i = 0; i < set->n; i++) {
        const validation_run *r = &set->run[i];
        bool ok;
        if (r->unsupported[0] || !calib_subset_wanted(opt->subset, r->subset))
            continue;
        if ((st = cv_error(r, &cv->def, &cv->def_err[i], &ok, cv->scratch, err)) != PLANNER_OK)
            return st;
        if (!ok)
            continue;
        cv->eligible[i] = true;
        for (k = 0; k < cv->n_src; k++)
            if (strcmp(set->run[cv->src_first[k]].source, r->source) == 0)
                break;
        if (k == cv->n_src) {
            cv->src_first[cv->n_src] = i;
            cv->src_runs[cv->n_src] = 0;
            cv->n_src++;
        }
        cv->src[i] = k;
        cv->src_runs[k]++;
    }
    return PLANNER_OK;
}

/* Sources, largest first (then in file order), each to the fold with the
 * fewest runs (then the lowest index); then each eligible run's fold. */
static void deal_sources(crossval *cv, int n_runs_in_set)
{
    int *order = cv->order;
    int i, f;
    for (i = 0; i < cv->n_src; i++)
        order[i] = i;
    for (i = 1; i < cv->n_src; i++) {
        int k = order[i], j = i - 1;
        while (j >= 0 && cv->src_runs[order[j]] < cv->src_runs[k]) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = k;
    }
    for (i = 0; i < cv->n_src; i++) {
        int k = order[i], best = 0;
        for (f = 1; f < cv->folds; f++)
            if (cv->fold_runs[f] < cv->fold_runs[best])
                best = f;
        cv->fold_runs[best] += cv->src_runs[k];
        cv->fold_srcs[best]++;
        cv->src_fold[k] = best;
    }
    for (i = 0; i < n_runs_in_set; i++)
        cv->fold[i] = cv->eligible[i] ? cv->src_fold[cv->src[i]] : -1;
    for (f = 0; f < cv->folds; f++)
        cv->n_runs += cv->fold_runs[f];
}

planner_status crossval_prepare(crossval *cv, const validation_set *set,
                                const calib_options *opt, int folds, planner_error *err)
{
    planner_status st;

    memset(cv, 0, sizeof *cv);
    cv->folds = folds;
    cost_params_default(&cv->def);
    cost_params_unfitted(&cv->start);
    if (folds != CROSSVAL_LOSO && (folds < 2 || folds > CROSSVAL_MAX_FOLDS))
        return error_set(err, PLANNER_E_USAGE, NULL, 0, 0, NULL,
                         "crossval: %d folds (expected 2..%d)", folds, CROSSVAL_MAX_FOLDS);
    if ((st = cv_alloc(cv, set->n, err)) != PLANNER_OK ||
        (st = find_sources(cv, set, opt, err)) != PLANNER_OK)
        return st;
    if (folds == CROSSVAL_LOSO) {
        if (cv->n_src < 2 || cv->n_src > CROSSVAL_MAX_FOLDS)
            return error_set(err, PLANNER_E_INPUT, opt->runs_file, 0, 0, NULL,
                             "crossval: leave-one-source-out needs 2..%d sources with "
                             "predictable runs, the runs have %d", CROSSVAL_MAX_FOLDS,
                             cv->n_src);
        folds = cv->folds = cv->n_src;
    }
    if (cv->n_src < folds)
        return error_set(err, PLANNER_E_INPUT, opt->runs_file, 0, 0, NULL,
                         "crossval: %d source%s with predictable runs cannot make %d folds "
                         "(folds never split a source)", cv->n_src, cv->n_src == 1 ? "" : "s",
                         folds);
    deal_sources(cv, set->n);
    return PLANNER_OK;
}

/* Fits on the runs cv->use marks, starting from *start, then predicts the
 * eligible runs `test` marks with *ref (the "default" column) and with the
 * fit (*start when the fit is refused), adding their errors to out->acc
 * and to the accumulators `total` and `by_subset` (SUBSET_COUNT). */
static planner_status fit_and_test(crossval_fold_result *out, crossval *cv,
                                   const validation_set *set, const calib_options *opt,
                                   const cost_params *start, const cost_params *ref,
                                   const bool *test,
                                   crossval_acc *total, crossval_acc *by_subset,
                                   planner_error *err)
{
    planner_status st;
    int i;
    st = calibrate_fit(&out->fit, set, cv->use, start, opt, err);
    if (st == PLANNER_E_INTERNAL || st == PLANNER_E_USAGE)
        return st;
    out->fitted = st == PLANNER_OK;
    if (!out->fitted)
        snprintf(out->refusal, sizeof out->refusal, "%s", err->msg);
    error_clear(err);
    for (i = 0; i < set->n; i++) {
        double e, e0 = cv->def_err[i];
        bool ok;
        if (!cv->eligible[i] || !test[i])
            continue;
        if (ref != &cv->def &&
            (st = cv_error(&set->run[i], ref, &e0, &ok, cv->scratch, err)) != PLANNER_OK)
            return st;
        if ((st = cv_error(&set->run[i], out->fitted ? &out->fit.fitted : start, &e, &ok,
                           cv->scratch, err)) != PLANNER_OK)
            return st;
        if (!ok)
            e = e0;     /* cannot happen: memory does not depend on the fit */
        cv_add(&out->acc, e0, e);
        cv_add(total, e0, e);
        cv_add(&by_subset[set->run[i].subset], e0, e);
    }
    return PLANNER_OK;
}

planner_status crossval_source(crossval_fold_result *out, crossval *cv,
                               const validation_set *set, const calib_options *opt,
                               const cost_params *start, int k, int n_cal, planner_error *err)
{
    bool *test = cv->test;
    planner_status st;
    int i, pos = 0, pick = 0, n = cv->src_runs[k];

    memset(out, 0, sizeof *out);
    if (n_cal < 1 || n < 2 * n_cal)
        return error_set(err, PLANNER_E_USAGE, NULL, 0, 0, NULL,
                         "crossval: source %d has %d runs, calibrating on %d needs %d", k + 1,
                         n, n_cal, 2 * n_cal);
    for (i = 0; i < set->n; i++) {
        cv->use[i] = false;
        test[i] = false;
        if (!cv->eligible[i] || cv->src[i] != k)
            continue;
        /* the pick-th of the N: position floor((2 pick + 1) n / (2 N)) */
        if (pick < n_cal && pos == (2 * pick + 1) * n / (2 * n_cal)) {
            cv->use[i] = true;
            pick++;
        } else {
            test[i] = true;
        }
        pos++;
    }
    out->ntrain = n_cal;
    if (start == NULL)
        start = &cv->def;
    if ((st = fit_and_test(out, cv, set, opt, start, start, test, &cv->src_total,
                           cv->src_by_subset, err)) != PLANNER_OK)
        return st;
    cv->src_sources++;
    cv->src_better += out->acc.sum_cal < out->acc.sum_def;
    return PLANNER_OK;
}

planner_status crossval_fold(crossval_fold_result *out, crossval *cv,
                             const validation_set *set, const calib_options *opt, int f,
                             planner_error *err)
{
    int i;

    memset(out, 0, sizeof *out);
    for (i = 0; i < set->n; i++) {
        cv->use[i] = cv->eligible[i] && cv->fold[i] != f;
        cv->test[i] = cv->eligible[i] && cv->fold[i] == f;
        out->ntrain += cv->use[i];
    }
    return fit_and_test(out, cv, set, opt, &cv->start, &cv->def, cv->test, &cv->total,
                        cv->by_subset, err);
}
