/* calibrate.c: fitting the cost model's constants to measured step times
 * (`planner calibrate`), k-fold cross-validation by source (`planner
 * crossval`), and the calibration file (calibration_write/_load).
 *
 * The model: with a run's strategy fixed, evaluate()'s step time is a sum
 * and max of terms each of which is work / (peak x eff) for one efficiency,
 * a count of fixed times (kernel_s, step_overhead_s), or a constant
 * (latencies).  In the variables x = (1/eff..., times...) it is therefore
 * piecewise linear: T(x) = c0 + sum_j a_j x_j on the piece around x, with
 * a_j = dT/dx_j (central differences; exact inside a piece up to rounding)
 * and c0 = T(x) - a.x.  A constant that scales a modelled time (a fraction
 * of an overlapped collective left exposed) makes a term bilinear; the same
 * linearization is then a Gauss-Newton step, and the iteration below
 * converges to the fit all the same.  Relative weighting: each run i contributes the row
 * a_i / t_i with right-hand side 1 - c0_i / t_i (t_i its measured step
 * time), so a 20 s step and a 0.5 s step count alike.  Columns are scaled by
 * the current x_j, so singular values and the condition number speak of
 * relative changes.  LAPACKE_dgelsd (column-major, workspace from
 * pl_malloc) solves it; the runs' unpublished knobs are then re-chosen by the
 * search with the new constants and the linearization repeated until the
 * strategies and values no longer move (a linearized fixed point).  When
 * the data were produced by the model itself, the first iteration on the
 * right piece recovers the constants exactly.
 * Refused (exit 1): fewer runs than parameters; a parameter named with
 * --params that no run exercises (its column is zero; without --params such
 * parameters are dropped with a note); rank deficiency (singular values
 * below 1e-8 of the largest; the message names the parameters of the
 * undetermined direction, from LAPACKE_dgesvd); efficiencies outside
 * 0.01..1 and times outside their range (negative or absurd fits).
 * Without --params the default list is made well posed instead of refused:
 * per generation, what no run exercises is dropped; then, while the
 * generation's block of the scaled system (its runs x its constants) has a
 * smallest singular value below 1e-3 of its largest or below 0.01 x
 * sqrt(runs) (a unit relative change along it moves the runs' step times by
 * under 1% RMS: below what published throughputs resolve), the constant
 * with the largest component in that direction (LAPACKE_dgesvd) is dropped;
 * finally a constant whose fit leaves its plausible range (cost.h, the
 * table below) is dropped and the fit repeated from the start.  Each drop
 * is a note on stderr.
 * Cross-validation folds by the runs' "source" (a table never trains and
 * tests together); sources go, largest first, to the fold with fewest runs.
 * Everything is deterministic: fixed orders, OpenBLAS on one thread.
 */
#include <cblas.h>
#include <getopt.h>
#include <jansson.h>
#include <lapacke.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "fit/calibrate.h"
#include "fit/calibration.h"
#include "tool/cli.h"
#include "tool/commands.h"
#include "base/fileio.h"
#include "base/jsonin.h"
#include "base/jsonout.h"
#include "base/suggest.h"

/* ---- the parameter table: one line per fitted constant of cost_params ---- */

typedef struct param_field {
    const char *field;
    calib_kind kind;
    bool per_gen;           /* in gen_constants (else cost_params) */
    size_t offset;
    double lo, hi;          /* accepted range of the value */
    double typical;         /* scale of the fitted variable when it is 0 */
    double plo, phi;        /* plausible range (cost.h): the default list drops a
                               constant whose fit leaves it */
} param_field;

static const param_field k_fields[] = {
    {"gemm_eff", CALIB_INV_EFF, true, offsetof(gen_constants, gemm_eff), 0.01, 1.0, 1.0, 0.5, 0.85},
    {"attn_eff", CALIB_INV_EFF, true, offsetof(gen_constants, attn_eff), 0.01, 1.0, 1.0, 0.05, 0.8},
    {"hbm_eff", CALIB_INV_EFF, true, offsetof(gen_constants, hbm_eff), 0.01, 1.0, 1.0, 0.6, 0.9},
    {"intra_eff", CALIB_INV_EFF, true, offsetof(gen_constants, intra_eff), 0.01, 1.0, 1.0, 0.7, 0.9},
    {"inter_eff", CALIB_INV_EFF, true, offsetof(gen_constants, inter_eff), 0.01, 1.0, 1.0, 0.5, 0.95},
    {"kernel_s", CALIB_DIRECT, true, offsetof(gen_constants, kernel_s), 0.0, 1e-4, 1e-5, 2e-6, 2e-5},
    {"fp8_gemm_eff", CALIB_INV_EFF, true, offsetof(gen_constants, fp8_gemm_eff), 0.01, 1.0, 1.0, 0.3, 0.8},
    {"overlap_exposed", CALIB_DIRECT, true, offsetof(gen_constants, overlap_exposed), 0.0, 1.0,
     0.1, 0.05, 0.5},
    /* plausible: up to 1 s, as the Ampere default (0.324 s) absorbs what the
     * 2020-2021 stacks paid beyond a tuned stack's ~0.05 s (cost.c) */
    {"step_overhead_s", CALIB_DIRECT, true, offsetof(gen_constants, step_overhead_s), 0.0, 10.0,
     0.1, 0.0, 1.0},
    {"moe_host_s", CALIB_DIRECT, true, offsetof(gen_constants, moe_host_s), 0.0, 0.1, 1e-3, 0.0, 5e-3},
};
#define N_FIELDS ((int)(sizeof k_fields / sizeof k_fields[0]))

#define FD_REL_STEP 1e-6        /* central-difference step, relative */
#define RANK_RCOND 1e-8         /* singular values below this x the largest: rank lost */
#define COLLINEAR_RCOND 1e-3    /* default list: a generation's block below this: drop */
#define MIN_EFFECT 0.01        /* default list: RMS relative step-time change per unit of the weakest direction */
#define ZERO_COLUMN 1e-9        /* column norm below this x the largest: unexercised */
#define CONVERGED_REL 1e-9      /* largest relative change of a variable */

static double *field_ptr(cost_params *cp, const calib_param *p)
{
    const param_field *f = &k_fields[p->field];
    char *base = f->per_gen ? (char *)&cp->gen[p->gen] : (char *)cp;
    return (double *)(void *)(base + f->offset);
}

int calib_param_parse(const char *name, calib_param *out)
{
    const char *dot = strchr(name, '.');
    int f, g;
    for (f = 0; f < N_FIELDS; f++) {
        if (!k_fields[f].per_gen) {
            if (strcmp(name, k_fields[f].field) == 0) {
                out->field = f;
                out->gen = -1;
                return 0;
            }
            continue;
        }
        if (dot == NULL || strcmp(dot + 1, k_fields[f].field) != 0)
            continue;
        for (g = 0; g < GEN_COUNT; g++) {
            const char *gn = gpu_generation_name((gpu_generation)g);
            if (strlen(gn) == (size_t)(dot - name) && strncmp(name, gn, (size_t)(dot - name)) == 0) {
                out->field = f;
                out->gen = g;
                return 0;
            }
        }
    }
    return -1;
}

void calib_param_name(const calib_param *p, char *buf, size_t size)
{
    if (k_fields[p->field].per_gen)
        snprintf(buf, size, "%s.%s", gpu_generation_name((gpu_generation)p->gen),
                 k_fields[p->field].field);
    else
        snprintf(buf, size, "%s", k_fields[p->field].field);
}

calib_kind calib_param_kind(const calib_param *p)
{
    return k_fields[p->field].kind;
}

double calib_param_get(const cost_params *cp, const calib_param *p)
{
    return *field_ptr((cost_params *)(void *)(size_t)cp, p);
}

void calib_param_set(cost_params *cp, const calib_param *p, double value)
{
    *field_ptr(cp, p) = value;
}

int calib_param_check(const calib_param *p, double value, char *why, size_t size)
{
    const param_field *f = &k_fields[p->field];
    snprintf(why, size, "%.6g..%.6g", f->lo, f->hi);
    return isfinite(value) && value >= f->lo && value <= f->hi && !(f->kind == CALIB_INV_EFF &&
                                                                     value <= 0) ? 0 : -1;
}

/* The plausible range (cost.h) of p: 0 if value lies in it, else -1 with
 * the range in why. */
static int plausible_check(const calib_param *p, double value, char *why, size_t size)
{
    const param_field *f = &k_fields[p->field];
    snprintf(why, size, "%.6g..%.6g", f->plo, f->phi);
    return isfinite(value) && value >= f->plo && value <= f->phi ? 0 : -1;
}

/* Every parameter name, for did-you-mean. */
typedef struct name_list {
    char text[GEN_COUNT * N_FIELDS + N_FIELDS][CALIB_NAME_MAX];
    const char *ptr[GEN_COUNT * N_FIELDS + N_FIELDS];
    size_t n;
} name_list;

static void all_names(name_list *l)
{
    int f, g;
    l->n = 0;
    for (f = 0; f < N_FIELDS; f++) {
        for (g = 0; g < (k_fields[f].per_gen ? GEN_COUNT : 1); g++) {
            calib_param p = {f, k_fields[f].per_gen ? g : -1};
            calib_param_name(&p, l->text[l->n], CALIB_NAME_MAX);
            l->ptr[l->n] = l->text[l->n];
            l->n++;
        }
    }
    /* bare field names too: --params accepts them */
    for (f = 0; f < N_FIELDS; f++)
        if (k_fields[f].per_gen) {
            snprintf(l->text[l->n], CALIB_NAME_MAX, "%s", k_fields[f].field);
            l->ptr[l->n] = l->text[l->n];
            l->n++;
        }
}

/* "per generation (GEN.NAME or NAME for all): a, b; global: c" */
static void field_list(char *buf, size_t size)
{
    int f, pass;
    size_t used = 0;
    buf[0] = '\0';
    for (pass = 0; pass < 2; pass++) {
        int first = 1, any = 0;
        for (f = 0; f < N_FIELDS; f++)
            any |= k_fields[f].per_gen == (pass == 0);
        if (!any)
            continue;
        used += (size_t)snprintf(buf + used, size - used, "%s",
                                 pass == 0 ? "per generation, as GEN.NAME or NAME for every "
                                             "generation: " : "; global: ");
        for (f = 0; f < N_FIELDS && used < size; f++)
            if (k_fields[f].per_gen == (pass == 0)) {
                used += (size_t)snprintf(buf + used, size - used, "%s%s", first ? "" : ", ",
                                         k_fields[f].field);
                first = 0;
            }
        if (used >= size)
            return;
    }
}

/* The fitted variable of a value, and back. */
static double to_var(const calib_param *p, double v)
{
    return k_fields[p->field].kind == CALIB_INV_EFF ? 1.0 / v : v;
}

static double from_var(const calib_param *p, double x)
{
    return k_fields[p->field].kind == CALIB_INV_EFF ? 1.0 / x : x;
}

/* Whether a run of subset `s` takes part under the --subset choice `subset`
 * (a validation_subset, CALIB_SUBSET_ALL or CALIB_SUBSET_DENSE).  The default,
 * CALIB_SUBSET_DENSE, leaves the MoE runs out: their cost model is not
 * validated yet (docs/validation.md), and fitting the shared per-generation
 * constants to them would degrade the dense predictions. */
static bool subset_wanted(int subset, validation_subset s)
{
    if (subset == CALIB_SUBSET_ALL)
        return true;
    if (subset == CALIB_SUBSET_DENSE)
        return s != SUBSET_MOE;
    return (int)s == subset;
}

static const char *subset_label(int subset)
{
    if (subset == CALIB_SUBSET_ALL)
        return "all";
    if (subset == CALIB_SUBSET_DENSE)
        return "dense (dense16 + fp8)";
    return validation_subset_name((validation_subset)subset);
}

void calib_options_default(calib_options *o)
{
    memset(o, 0, sizeof *o);
    o->runs_file = "";
    o->params = NULL;
    o->subset = CALIB_SUBSET_DENSE;
    o->max_iter = 20;
}

void calib_fit_free(calib_fit *f)
{
    if (f == NULL)
        return;
    pl_free(f->run);
    f->run = NULL;
    f->n_runs = 0;
}

/* ---- the fit ---- */

static double step_time(const validation_run *r, const strategy *s, const cost_params *p,
                        evaluation *scratch)
{
    evaluate(r->m, r->c, p, s, scratch);
    return scratch->step_time_s;
}

static double measured_step_s(const validation_run *r)
{
    return (double)r->gbs * r->m->seq_len / (r->measured_tokens_per_s_per_gpu * r->num_gpus);
}

static void note(calib_fit *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(calib_fit *f, const char *fmt, ...)
{
    size_t used = strlen(f->notes);
    va_list ap;
    if (used + 2 >= sizeof f->notes)
        return;
    va_start(ap, fmt);
    vsnprintf(f->notes + used, sizeof f->notes - used - 1, fmt, ap);
    va_end(ap);
    used = strlen(f->notes);
    f->notes[used] = '\n';
    f->notes[used + 1] = '\0';
}

/* Adds p to the list unless present; `named`: the user named this very
 * parameter (GEN.NAME or a global), so it may not be dropped. */
static void add_param(calib_fit *f, bool *named, calib_param p, bool is_named)
{
    int i;
    for (i = 0; i < f->n_params; i++)
        if (f->param[i].field == p.field && f->param[i].gen == p.gen) {
            named[i] = named[i] || is_named;
            return;
        }
    if (f->n_params < CALIB_MAX_PARAMS) {
        named[f->n_params] = is_named;
        f->param[f->n_params++] = p;
    }
}

/* The parameter list from opt->params (or the default), over the generations
 * in gen_used; named[j]: the user named param j itself.  Returns 0, or a
 * status with *err. */
static planner_status choose_params(const calib_options *opt, const bool *gen_used,
                                    calib_fit *f, bool *named, planner_error *err)
{
    int fi, g;
    if (opt->params == NULL) {
        for (g = 0; g < GEN_COUNT; g++)
            for (fi = 0; fi < N_FIELDS; fi++)
                if (gen_used[g] && k_fields[fi].per_gen)
                    add_param(f, named, (calib_param){fi, g}, false);
        for (fi = 0; fi < N_FIELDS; fi++)
            if (!k_fields[fi].per_gen)
                add_param(f, named, (calib_param){fi, -1}, false);
        return PLANNER_OK;
    }
    {
        const char *s = opt->params;
        while (*s) {
            char tok[CALIB_NAME_MAX + 16];
            size_t n = strcspn(s, ",");
            calib_param p;
            bool bare = false;
            if (n == 0 || n >= CALIB_NAME_MAX) {
                if (n == 0)
                    return error_set(err, PLANNER_E_USAGE, NULL, 0, 0, NULL,
                                     "--params: empty parameter name in '%s'", opt->params);
                return error_set(err, PLANNER_E_USAGE, NULL, 0, 0, NULL,
                                 "--params: name too long in '%s'", opt->params);
            }
            memcpy(tok, s, n);
            tok[n] = '\0';
            s += n;
            if (*s == ',')
                s++;
            for (fi = 0; fi < N_FIELDS; fi++)
                if (k_fields[fi].per_gen && strcmp(tok, k_fields[fi].field) == 0) {
                    bare = true;
                    for (g = 0; g < GEN_COUNT; g++)
                        if (gen_used[g])
                            add_param(f, named, (calib_param){fi, g}, false);
                }
            if (bare)
                continue;
            if (calib_param_parse(tok, &p) != 0) {
                name_list *names = pl_malloc(sizeof *names);
                char hint[CALIB_NAME_MAX + 32] = "";
                if (names == NULL)
                    return error_oom(err);
                all_names(names);
                suggest_format(tok, names->ptr, names->n, hint, sizeof hint);
                pl_free(names);
                {
                    char list[512];
                    field_list(list, sizeof list);
                    return error_set(err, PLANNER_E_USAGE, NULL, 0, 0, NULL,
                                     "--params: unknown parameter '%s'%s (%s)", tok, hint, list);
                }
            }
            if (p.gen >= 0 && !gen_used[p.gen])
                return error_set(err, PLANNER_E_INPUT, opt->runs_file, 0, 0, NULL,
                                 "calibrate: %s: no run uses a GPU of generation %s, nothing can "
                                 "fit it", tok,
                                 gpu_generation_name((gpu_generation)p.gen));
            add_param(f, named, p, true);
        }
    }
    if (f->n_params == 0)
        return error_set(err, PLANNER_E_USAGE, NULL, 0, 0, NULL, "--params: no parameter given");
    return PLANNER_OK;
}

/* Solves min ||A y - b|| (A m x n column-major, m >= n, both overwritten; y in
 * b[0..n)) with dgelsd; singular values in sv, rank in *rank. */
static planner_status lsq_solve(double *A, double *b, int m, int n, double *sv, int *rank,
                                planner_error *err)
{
    lapack_int r = 0, info;
    double wq = 0;
    lapack_int iwq = 0;
    double *work = NULL;
    lapack_int *iwork = NULL;
    planner_status st = PLANNER_OK;

    info = LAPACKE_dgelsd_work(LAPACK_COL_MAJOR, m, n, 1, A, m, b, m, sv, RANK_RCOND, &r, &wq,
                               -1, &iwq);
    if (info != 0)
        return error_set(err, PLANNER_E_INTERNAL, NULL, 0, 0, NULL,
                         "dgelsd workspace query failed (info %d)", (int)info);
    work = pl_calloc((size_t)wq + 1, sizeof *work);
    iwork = pl_calloc((size_t)(iwq > 0 ? iwq : 1) + 1, sizeof *iwork);
    if (work == NULL || iwork == NULL) {
        st = error_oom(err);
        goto cleanup;
    }
    info = LAPACKE_dgelsd_work(LAPACK_COL_MAJOR, m, n, 1, A, m, b, m, sv, RANK_RCOND, &r, work,
                               (lapack_int)wq, iwork);
    if (info != 0) {
        st = error_set(err, PLANNER_E_INTERNAL, NULL, 0, 0, NULL,
                       "dgelsd: the SVD did not converge (info %d)", (int)info);
        goto cleanup;
    }
    *rank = (int)r;
cleanup:
    pl_free(work);
    pl_free(iwork);
    return st;
}

/* The right singular vector of A's smallest singular value (A m x n
 * column-major, overwritten) into v[0..n), and the singular values, largest
 * first, into sv[0..n) when sv is not NULL (those beyond m are 0).  Returns
 * 0, or -1 on failure. */
static int null_direction(double *A, int m, int n, double *v, double *sv)
{
    double wq = 0, *work = NULL, *s = NULL, *vt = NULL;
    lapack_int info;
    int j, rc = -1;
    s = pl_calloc((size_t)n, sizeof *s);
    vt = pl_calloc((size_t)n * (size_t)n, sizeof *vt);
    if (s == NULL || vt == NULL)
        goto cleanup;
    info = LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, 'N', 'A', m, n, A, m, s, NULL, 1, vt, n, &wq,
                               -1);
    if (info != 0 || (work = pl_calloc((size_t)wq + 1, sizeof *work)) == NULL)
        goto cleanup;
    info = LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, 'N', 'A', m, n, A, m, s, NULL, 1, vt, n, work,
                               (lapack_int)wq);
    if (info != 0)
        goto cleanup;
    for (j = 0; j < n; j++)        /* last row of V^T */
        v[j] = vt[(n - 1) + (size_t)j * n];
    if (sv != NULL)
        for (j = 0; j < n; j++)
            sv[j] = j < m ? s[j] : 0.0;
    rc = 0;
cleanup:
    pl_free(work);
    pl_free(s);
    pl_free(vt);
    return rc;
}

typedef struct fit_state {
    const validation_set *set;
    int m;              /* runs in the fit */
    int *idx;           /* their indices in set */
    plan *pl;           /* their current strategies */
    strategy *prev;     /* the previous iteration's */
    double *t;          /* measured step times */
    double *A, *Acopy, *b, *c0;
    evaluation *ev;     /* scratch */
} fit_state;

static void fit_state_free(fit_state *s)
{
    pl_free(s->idx);
    pl_free(s->pl);
    pl_free(s->prev);
    pl_free(s->t);
    pl_free(s->A);
    pl_free(s->Acopy);
    pl_free(s->b);
    pl_free(s->c0);
    pl_free(s->ev);
}

/* Builds the relatively weighted, column-scaled system at the current
 * params for the runs' current strategies: A (m x n col-major), b, and the
 * column scales. */
static void linearize(fit_state *s, const calib_fit *f, const cost_params *p, double *scale)
{
    int i, j, n = f->n_params;
    cost_params q = *p;
    for (j = 0; j < n; j++) {
        double x = to_var(&f->param[j], calib_param_get(p, &f->param[j]));
        scale[j] = fabs(x) > 0 ? fabs(x) : k_fields[f->param[j].field].typical;
    }
    for (i = 0; i < s->m; i++) {
        const validation_run *r = &s->set->run[s->idx[i]];
        const strategy *st = &s->pl[i].s;
        double t0 = step_time(r, st, p, s->ev), c0 = t0;
        for (j = 0; j < n; j++) {
            const calib_param *cpj = &f->param[j];
            double v = calib_param_get(p, cpj), x = to_var(cpj, v);
            double h = FD_REL_STEP * (fabs(x) > k_fields[cpj->field].typical
                                          ? fabs(x) : k_fields[cpj->field].typical);
            double tp, tm, a;
            calib_param_set(&q, cpj, from_var(cpj, x + h));
            tp = step_time(r, st, &q, s->ev);
            calib_param_set(&q, cpj, from_var(cpj, x - h));
            tm = step_time(r, st, &q, s->ev);
            calib_param_set(&q, cpj, v);
            a = (tp - tm) / (2.0 * h);
            c0 -= a * x;
            s->A[i + (size_t)j * s->m] = a * scale[j] / s->t[i];
        }
        s->c0[i] = c0;
        s->b[i] = 1.0 - c0 / s->t[i];
    }
}

/* Re-chooses every run's strategy with params p. */
static planner_status predict_all(fit_state *s, const cost_params *p, planner_error *err)
{
    int i;
    for (i = 0; i < s->m; i++) {
        const validation_run *r = &s->set->run[s->idx[i]];
        planner_error e2 = PLANNER_ERROR_INIT;
        planner_status st = validation_predict(r, p, &s->pl[i], &e2);
        if (st == PLANNER_E_INTERNAL)
            return error_set(err, st, NULL, 0, 0, NULL, "%s", e2.msg);
        if (st != PLANNER_OK)
            return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL,
                             "calibrate: run %s can no longer be predicted: %s", r->id,
                             st == PLANNER_E_INFEASIBLE ? "no plan fits" : e2.msg);
    }
    return PLANNER_OK;
}

/* Removes parameter j (its column of s->A and its entries). */
static void drop_column(fit_state *s, calib_fit *f, bool *named, double *scale, int j)
{
    int n = f->n_params;
    memmove(&s->A[(size_t)j * s->m], &s->A[(size_t)(j + 1) * s->m],
            (size_t)(n - 1 - j) * s->m * sizeof *s->A);
    memmove(&f->param[j], &f->param[j + 1], (size_t)(n - 1 - j) * sizeof f->param[0]);
    memmove(&f->start[j], &f->start[j + 1], (size_t)(n - 1 - j) * sizeof f->start[0]);
    memmove(&named[j], &named[j + 1], (size_t)(n - 1 - j) * sizeof named[0]);
    memmove(&scale[j], &scale[j + 1], (size_t)(n - 1 - j) * sizeof scale[0]);
    f->n_params = n - 1;
}

/* The default parameter list keeps, per generation, only what that
 * generation's runs determine.  The scaled system is block-diagonal by
 * generation (a run's step time depends on the constants of its own GPUs),
 * so each generation's block (its runs, its constants) is judged alone:
 * while its smallest singular value is below COLLINEAR_RCOND x its largest
 * (fewer runs than constants makes it 0), the constant with the largest
 * component in that singular vector (the undetermined direction) is
 * dropped, with a note naming the others in the direction.  Only
 * parameters the user did not name are dropped. */
static planner_status keep_determined(fit_state *s, calib_fit *f, bool *named, double *scale,
                                      planner_error *err)
{
    double *B = NULL;
    int *rows = NULL, cols[CALIB_MAX_PARAMS];
    planner_status st = PLANNER_OK;
    int g, i, j;

    B = pl_calloc((size_t)s->m * CALIB_MAX_PARAMS, sizeof *B);
    rows = pl_calloc((size_t)s->m, sizeof *rows);
    if (B == NULL || rows == NULL) {
        st = error_oom(err);
        goto cleanup;
    }
    for (g = 0; g < GEN_COUNT; g++) {
        for (;;) {
            double v[CALIB_MAX_PARAMS], sv[CALIB_MAX_PARAMS], big = 0;
            char list[512] = "", name[CALIB_NAME_MAX];
            int k = 0, r = 0, drop = -1, c;
            for (j = 0; j < f->n_params; j++)
                if (f->param[j].gen == g)
                    cols[k++] = j;
            if (k == 0)
                break;
            for (i = 0; i < s->m; i++) {
                bool any = false;
                for (c = 0; c < k; c++)
                    any |= s->A[i + (size_t)cols[c] * s->m] != 0;
                if (any)
                    rows[r++] = i;
            }
            for (c = 0; c < k; c++)
                for (i = 0; i < r; i++)
                    B[i + (size_t)c * r] = s->A[rows[i] + (size_t)cols[c] * s->m];
            if (null_direction(B, r, k, v, sv) != 0) {
                st = error_set(err, PLANNER_E_INTERNAL, NULL, 0, 0, NULL,
                               "calibrate: dgesvd failed on the %s block",
                               gpu_generation_name((gpu_generation)g));
                goto cleanup;
            }
            if (sv[k - 1] >= COLLINEAR_RCOND * sv[0] && sv[k - 1] >= MIN_EFFECT * sqrt((double)r))
                break;
            for (c = 0; c < k; c++)
                if (!named[cols[c]] && (drop < 0 || fabs(v[c]) > big)) {
                    drop = c;
                    big = fabs(v[c]);
                }
            if (drop < 0)
                break;      /* all named: the rank check refuses it */
            for (c = 0; c < k; c++) {
                size_t used = strlen(list);
                if (c == drop || fabs(v[c]) < 0.2)
                    continue;
                calib_param_name(&f->param[cols[c]], name, sizeof name);
                snprintf(list + used, sizeof list - used, "%s%s (%+.2f)", used ? ", " : "",
                         name, v[c] * (v[drop] < 0 ? -1 : 1));
            }
            calib_param_name(&f->param[cols[drop]], name, sizeof name);
            note(f, "dropped %s: the %d %s run%s not determine it%s%s (of %d constants: "
                 "smallest singular value %.2g, %.2g of the largest)", name, r,
                 gpu_generation_name((gpu_generation)g), r == 1 ? " does" : "s do",
                 list[0] ? " apart from " : "", list, k, sv[k - 1] / sqrt((double)r),
                 sv[k - 1] / sv[0]);
            drop_column(s, f, named, scale, cols[drop]);
        }
    }
cleanup:
    pl_free(B);
    pl_free(rows);
    return st;
}

/* One fit of the parameter list less the `n_excl` in `excl`.  When the
 * fit of a parameter the user did not name leaves its range, *bad is that
 * parameter (else bad->field is -1) and the fit is refused as absurd. */
static planner_status fit_once(const validation_set *set, const bool *use,
                               const cost_params *start, const calib_options *opt,
                               const calib_param *excl, int n_excl, calib_param *bad,
                               double *bad_value, calib_fit *f, planner_error *err)
{
    const bool auto_list = opt->params == NULL;
    fit_state s;
    bool gen_used[GEN_COUNT] = {false}, named[CALIB_MAX_PARAMS] = {false};
    bool changed = true, admissible;
    double scale[CALIB_MAX_PARAMS], y[CALIB_MAX_PARAMS], best_sv[CALIB_MAX_PARAMS];
    double rms, best_rms = 0;
    cost_params p = *start, best_p = *start;
    int best_it = 0, best_n = 0;
    planner_status st = PLANNER_OK;
    const char *file = opt->runs_file != NULL ? opt->runs_file : "";
    int i, j, it, n = 0;

    bad->field = -1;          /* no parameter to blame unless a fit is absurd */
    bad->gen = -1;
    memset(f, 0, sizeof *f);
    memset(&s, 0, sizeof s);
    f->fitted = *start;
    s.set = set;
    if (set->n > 0) {
        s.idx = pl_calloc((size_t)set->n, sizeof *s.idx);
        s.pl = pl_calloc((size_t)set->n, sizeof *s.pl);
        s.prev = pl_calloc((size_t)set->n, sizeof *s.prev);
        s.t = pl_calloc((size_t)set->n, sizeof *s.t);
        s.b = pl_calloc((size_t)set->n + CALIB_MAX_PARAMS, sizeof *s.b);
        s.c0 = pl_calloc((size_t)set->n, sizeof *s.c0);
        s.A = pl_calloc((size_t)set->n * CALIB_MAX_PARAMS, sizeof *s.A);
        s.Acopy = pl_calloc((size_t)set->n * CALIB_MAX_PARAMS, sizeof *s.Acopy);
    }
    s.ev = pl_malloc(sizeof *s.ev);
    if (s.ev == NULL || (set->n > 0 && (s.idx == NULL || s.pl == NULL || s.prev == NULL ||
                                        s.t == NULL || s.b == NULL || s.c0 == NULL ||
                                        s.A == NULL || s.Acopy == NULL))) {
        st = error_oom(err);
        goto cleanup;
    }

    /* the runs: supported, in the subset, predictable */
    for (i = 0; i < set->n; i++) {
        const validation_run *r = &set->run[i];
        planner_error e2 = PLANNER_ERROR_INIT;
        planner_status ps;
        if (use != NULL && !use[i])
            continue;
        if (r->unsupported[0]) {
            f->skipped_unsupported++;
            continue;
        }
        if (!subset_wanted(opt->subset, r->subset)) {
            f->skipped_subset++;
            continue;
        }
        ps = validation_predict(r, &p, &s.pl[s.m], &e2);
        if (ps == PLANNER_E_INTERNAL) {
            st = error_set(err, ps, NULL, 0, 0, NULL, "%s", e2.msg);
            goto cleanup;
        }
        if (ps != PLANNER_OK) {
            /* memory does not depend on the fitted constants: a run no
             * strategy fits stays unpredictable */
            f->skipped_infeasible++;
            continue;
        }
        s.idx[s.m] = i;
        s.t[s.m] = measured_step_s(r);
        gen_used[r->c->group[0].gpu.gen] = true;
        s.m++;
    }
    if (s.m == 0) {
        st = error_set(err, PLANNER_E_INPUT, file, 0, 0, NULL,
                       "calibrate: no run can be used (%d unsupported, %d in other subsets, "
                       "%d with no feasible plan)%s", f->skipped_unsupported, f->skipped_subset,
                       f->skipped_infeasible,
                       f->skipped_subset > 0 && opt->subset == CALIB_SUBSET_DENSE
                           ? "; MoE runs are left out unless --subset all or moe" : "");
        goto cleanup;
    }
    bad->field = -1;
    bad->gen = -1;
    if ((st = choose_params(opt, gen_used, f, named, err)) != PLANNER_OK)
        goto cleanup;
    for (j = f->n_params - 1; j >= 0; j--)
        for (i = 0; i < n_excl; i++)
            if (!named[j] && f->param[j].field == excl[i].field &&
                f->param[j].gen == excl[i].gen) {
                memmove(&f->param[j], &f->param[j + 1],
                        (size_t)(f->n_params - 1 - j) * sizeof f->param[0]);
                memmove(&named[j], &named[j + 1], (size_t)(f->n_params - 1 - j) * sizeof named[0]);
                f->n_params--;
                break;
            }
    for (j = 0; j < f->n_params; j++)
        f->start[j] = calib_param_get(start, &f->param[j]);

    for (it = 1; it <= (opt->max_iter > 0 ? opt->max_iter : 1); it++) {
        double colmax = 0, col[CALIB_MAX_PARAMS], move = 0;
        int rank = 0;

        n = f->n_params;
        linearize(&s, f, &p, scale);
        /* columns no run exercises */
        for (j = 0; j < n; j++) {
            double c = 0;
            for (i = 0; i < s.m; i++)
                c += s.A[i + (size_t)j * s.m] * s.A[i + (size_t)j * s.m];
            col[j] = sqrt(c);
            if (col[j] > colmax)
                colmax = col[j];
        }
        for (j = n - 1; j >= 0; j--) {
            char name[CALIB_NAME_MAX];
            if (col[j] > ZERO_COLUMN * colmax && colmax > 0)
                continue;
            calib_param_name(&f->param[j], name, sizeof name);
            if (named[j]) {
                st = error_set(err, PLANNER_E_INPUT, file, 0, 0, NULL,
                               "calibrate: %s: no run exercises it (no run's step time "
                               "depends on it, e.g. inter_eff when every run fits in one node "
                               "or hides its traffic); drop it from --params", name);
                goto cleanup;
            }
            note(f, "dropped %s: no run exercises it", name);
            drop_column(&s, f, named, scale, j);
            n = f->n_params;
        }
        if (it == 1 && auto_list) {
            if ((st = keep_determined(&s, f, named, scale, err)) != PLANNER_OK)
                goto cleanup;
            n = f->n_params;
        }
        if (n == 0) {
            st = error_set(err, PLANNER_E_INPUT, file, 0, 0, NULL,
                           "calibrate: no parameter is exercised by the runs");
            goto cleanup;
        }
        if (s.m < n) {
            st = error_set(err, PLANNER_E_INPUT, file, 0, 0, NULL,
                           "calibrate: %d run%s for %d parameters: a fit needs at least as "
                           "many runs as parameters (add runs or name fewer with --params)",
                           s.m, s.m == 1 ? "" : "s", n);
            goto cleanup;
        }
        memcpy(s.Acopy, s.A, (size_t)s.m * n * sizeof *s.A);
        if ((st = lsq_solve(s.A, s.b, s.m, n, f->sv, &rank, err)) != PLANNER_OK)
            goto cleanup;
        f->rank = rank;
        f->condition = f->sv[n - 1] > 0 ? f->sv[0] / f->sv[n - 1] : INFINITY;
        if (rank < n) {
            double v[CALIB_MAX_PARAMS];
            char list[1024] = "";
            if (null_direction(s.Acopy, s.m, n, v, NULL) == 0) {
                for (j = 0; j < n; j++) {
                    char name[CALIB_NAME_MAX];
                    size_t used = strlen(list);
                    if (fabs(v[j]) < 0.2)
                        continue;
                    calib_param_name(&f->param[j], name, sizeof name);
                    snprintf(list + used, sizeof list - used, "%s%s (%+.2f)", used ? ", " : "",
                             name, v[j]);
                }
            }
            st = error_set(err, PLANNER_E_INPUT, file, 0, 0, NULL,
                           "calibrate: rank deficient: %d runs determine only %d of %d "
                           "parameters (condition number %.3g); undetermined: %s; fit fewer with "
                           "--params, or leave --params out (the default list keeps what the "
                           "runs determine)",
                           s.m, rank, n, f->condition, list[0] ? list : "?");
            goto cleanup;
        }
        for (j = 0; j < n; j++) {
            double x_old = to_var(&f->param[j], calib_param_get(&p, &f->param[j]));
            double x = s.b[j] * scale[j], d = fabs(x - x_old) / scale[j];
            if (!isfinite(x) || (calib_param_kind(&f->param[j]) == CALIB_INV_EFF && x <= 0)) {
                char name[CALIB_NAME_MAX];
                calib_param_name(&f->param[j], name, sizeof name);
                if (auto_list && !named[j]) {
                    *bad = f->param[j];
                    *bad_value = 1.0 / x;
                }
                st = error_set(err, PLANNER_E_INPUT, file, 0, 0, NULL,
                               "calibrate: absurd fit: 1/%s = %.4g (an efficiency must be "
                               "positive); the runs do not pin it down: drop it from --params",
                               name, x);
                goto cleanup;
            }
            y[j] = x;
            if (d > move)
                move = d;
        }
        for (j = 0; j < n; j++)
            calib_param_set(&p, &f->param[j], from_var(&f->param[j], y[j]));
        f->iterations = it;
        /* new strategies for the new constants */
        for (i = 0; i < s.m; i++)
            s.prev[i] = s.pl[i].s;
        if ((st = predict_all(&s, &p, err)) != PLANNER_OK) {
            if (err->file[0] == '\0')
                snprintf(err->file, sizeof err->file, "%s", file);
            goto cleanup;
        }
        changed = false;
        rms = 0;
        for (i = 0; i < s.m; i++) {
            double e = s.pl[i].e.step_time_s / s.t[i] - 1.0;
            rms += e * e;
            if (!knobs_equal(&s.prev[i], &s.pl[i].s))
                changed = true;
        }
        if (!changed && move < CONVERGED_REL) {
            f->converged = true;
            break;
        }
        /* the best admissible iterate so far, by the true (re-searched) error */
        admissible = true;
        for (j = 0; j < n; j++) {
            char why[64];
            double v = calib_param_get(&p, &f->param[j]);
            if ((auto_list ? plausible_check(&f->param[j], v, why, sizeof why)
                           : calib_param_check(&f->param[j], v, why, sizeof why)) != 0)
                admissible = false;
        }
        if (admissible && (best_it == 0 || rms < best_rms)) {
            best_it = it;
            best_rms = rms;
            best_p = p;
            best_n = n;
            memcpy(best_sv, f->sv, sizeof best_sv);
        }
    }
    if (!f->converged && best_it > 0) {
        /* the strategies keep switching (the search's choice flips with the
         * constants): keep the iterate with the lowest error */
        note(f, "not converged after %d iterations (the runs' strategies keep changing); "
             "kept iteration %d, the one with the lowest RMS error", f->iterations, best_it);
        p = best_p;
        if (best_n == f->n_params)
            memcpy(f->sv, best_sv, sizeof best_sv);
        if ((st = predict_all(&s, &p, err)) != PLANNER_OK)
            goto cleanup;
    }

    /* ranges */
    for (j = 0; j < f->n_params; j++) {
        double v = calib_param_get(&p, &f->param[j]);
        char name[CALIB_NAME_MAX], why[64];
        f->value[j] = v;
        if (auto_list && !named[j] && plausible_check(&f->param[j], v, why, sizeof why) != 0) {
            *bad = f->param[j];
            *bad_value = v;
            st = error_set(err, PLANNER_E_INPUT, file, 0, 0, NULL, "implausible");
            goto cleanup;
        }
        if (calib_param_check(&f->param[j], v, why, sizeof why) != 0) {
            calib_param_name(&f->param[j], name, sizeof name);
            st = error_set(err, PLANNER_E_INPUT, file, 0, 0, NULL,
                           "calibrate: absurd fit: %s = %.4g %s (accepted %s); the runs do not "
                           "pin it down: drop it from --params or add runs that exercise it",
                           name, v, v < 0 ? "is negative" : "is out of range", why);
            goto cleanup;
        }
    }
    f->fitted = p;

    /* residuals with the final strategies */
    f->run = pl_calloc((size_t)s.m, sizeof *f->run);
    if (f->run == NULL) {
        st = error_oom(err);
        goto cleanup;
    }
    f->n_runs = s.m;
    {
        double sum2 = 0, sum1 = 0;
        for (i = 0; i < s.m; i++) {
            calib_run_fit *o = &f->run[i];
            o->run = s.idx[i];
            o->measured_step_s = s.t[i];
            o->predicted_step_s = s.pl[i].e.step_time_s;
            o->rel_error = o->predicted_step_s / o->measured_step_s - 1.0;
            sum2 += o->rel_error * o->rel_error;
            sum1 += fabs(o->rel_error);
            if (fabs(o->rel_error) > f->max_rel)
                f->max_rel = fabs(o->rel_error);
        }
        f->rms_rel = sqrt(sum2 / s.m);
        f->mean_abs_rel = sum1 / s.m;
    }

cleanup:
    fit_state_free(&s);
    if (st != PLANNER_OK)
        calib_fit_free(f);
    return st;
}

/* The fit; a parameter of the default list whose fit leaves its range is
 * not determined by the runs either: it is dropped, with a note, and the
 * fit repeated from the start without it. */
planner_status calibrate_fit(const validation_set *set, const bool *use,
                             const cost_params *start, const calib_options *opt,
                             calib_fit *f, planner_error *err)
{
    calib_param excl[CALIB_MAX_PARAMS], bad;
    char dropped[sizeof f->notes] = "";
    int n_excl = 0;
    for (;;) {
        double bad_value = 0;
        planner_status st = fit_once(set, use, start, opt, excl, n_excl, &bad, &bad_value, f,
                                     err);
        char name[CALIB_NAME_MAX], why[64];
        size_t used;
        if (st == PLANNER_OK || bad.field < 0 || n_excl >= CALIB_MAX_PARAMS) {
            /* the notes of the earlier attempts first */
            if (dropped[0]) {
                char tmp[sizeof f->notes];
                snprintf(tmp, sizeof tmp, "%s%s", dropped, f->notes);
                memcpy(f->notes, tmp, sizeof tmp);
            }
            return st;
        }
        excl[n_excl++] = bad;
        used = strlen(dropped);
        calib_param_name(&bad, name, sizeof name);
        plausible_check(&bad, bad_value, why, sizeof why);
        snprintf(dropped + used, sizeof dropped - used,
                 "dropped %s: its fit (%.3g) leaves the plausible range %s: the runs do not "
                 "determine it; refitted without it\n", name, bad_value, why);
        error_clear(err);
    }
}

/* ---- the calibration file ---- */

/* The file as a jansson tree: every number at full precision, so that
 * JSON_REAL_PRECISION(17) writes text that reads back bit for bit; non-finite
 * numbers become null.  Returns NULL when an allocation fails. */
static json_t *calibration_json(const calib_fit *f, const validation_set *set,
                                const char *runs_file)
{
    json_t *root = json_object(), *params = json_object(), *fit = json_object();
    json_t *sv = json_array(), *residuals = json_array();
    bool bad = false;
    int j, i;

    bad |= json_object_set_new(root, "version", json_integer(CALIBRATION_VERSION)) != 0;
    bad |= json_object_set_new(root, "runs_file",
                               json_string(runs_file != NULL ? runs_file : "")) != 0;
    for (j = 0; j < f->n_params; j++) {
        char name[CALIB_NAME_MAX];
        calib_param_name(&f->param[j], name, sizeof name);
        bad |= json_object_set_new(params, name, jsonout_real(f->value[j])) != 0;
        bad |= json_array_append_new(sv, jsonout_real(f->sv[j])) != 0;
    }
    bad |= json_object_set_new(fit, "runs", json_integer(f->n_runs)) != 0;
    bad |= json_object_set_new(fit, "parameters", json_integer(f->n_params)) != 0;
    bad |= json_object_set_new(fit, "iterations", json_integer(f->iterations)) != 0;
    bad |= json_object_set_new(fit, "converged", json_boolean(f->converged)) != 0;
    bad |= json_object_set_new(fit, "rms_relative_error", jsonout_real(f->rms_rel)) != 0;
    bad |= json_object_set_new(fit, "max_relative_error", jsonout_real(f->max_rel)) != 0;
    bad |= json_object_set_new(fit, "condition_number", jsonout_real(f->condition)) != 0;
    bad |= json_object_set_new(fit, "singular_values", sv) != 0;
    for (i = 0; i < f->n_runs; i++) {
        const calib_run_fit *r = &f->run[i];
        json_t *jr = json_object();
        bad |= json_object_set_new(jr, "id", json_string(set != NULL && r->run < set->n
                                                         ? set->run[r->run].id : "")) != 0;
        bad |= json_object_set_new(jr, "measured_step_s", jsonout_real(r->measured_step_s)) != 0;
        bad |= json_object_set_new(jr, "predicted_step_s",
                                   jsonout_real(r->predicted_step_s)) != 0;
        bad |= json_object_set_new(jr, "relative_error", jsonout_real(r->rel_error)) != 0;
        bad |= json_array_append_new(residuals, jr) != 0;
    }
    bad |= json_object_set_new(fit, "residuals", residuals) != 0;
    /* the set_new calls take params and fit over even when they fail */
    bad |= json_object_set_new(root, "params", params) != 0;
    bad |= json_object_set_new(root, "fit", fit) != 0;
    if (bad) {
        json_decref(root);
        return NULL;
    }
    return root;
}

planner_status calibration_write(const char *path, const calib_fit *f,
                                 const validation_set *set, const char *runs_file,
                                 planner_error *err)
{
    json_t *root = calibration_json(f, set, runs_file);
    char *text = jsonout_text(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
                                    JSON_REAL_PRECISION(17));
    atomic_file af;
    planner_status st;

    json_decref(root);
    if (text == NULL)
        return error_oom(err);
    if ((st = atomic_open(&af, path, err)) != PLANNER_OK)
        goto cleanup;
    (void)fputs(text, af.fp);   /* a write error shows in atomic_commit (ferror) */
    if ((st = atomic_commit(&af, err)) != PLANNER_OK)
        atomic_abort(&af);
cleanup:
    pl_free(text);
    return st;
}

/* An unknown key: a message with did-you-mean. */
static planner_status unknown_key(const jsonin_doc *doc, const jsonin_path *p,
                                  const char *const *known, size_t n)
{
    char hint[128];
    suggest_format(p->e[p->n - 1].key, known, n, hint, sizeof hint);
    return jsonin_fail(doc, p, "unknown key%s", hint);
}

static int key_known(const char *key, const char *const *known, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (strcmp(key, known[i]) == 0)
            return 1;
    return 0;
}

static planner_status check_fit(const jsonin_doc *doc, json_t *fit)
{
    static const char *const keys[] = {"runs", "parameters", "iterations", "converged",
                                       "rms_relative_error", "max_relative_error",
                                       "condition_number", "singular_values", "residuals"};
    static const char *const rkeys[] = {"id", "measured_step_s", "predicted_step_s",
                                        "relative_error"};
    const size_t nk = sizeof keys / sizeof keys[0], nr = sizeof rkeys / sizeof rkeys[0];
    const jsonin_path root = JSONIN_PATH_ROOT, fp = jsonin_key(&root, "fit");
    const char *key;
    json_t *v;

    if (!json_is_object(fit))
        return jsonin_fail(doc, &fp, "expected an object");
    json_object_foreach(fit, key, v) {
        jsonin_path kp = jsonin_key(&fp, key);
        if (!key_known(key, keys, nk))
            return unknown_key(doc, &kp, keys, nk);
        if (strcmp(key, "converged") == 0) {
            if (!json_is_boolean(v))
                return jsonin_fail(doc, &kp, "expected true or false");
        } else if (strcmp(key, "singular_values") == 0) {
            size_t i;
            json_t *e;
            if (!json_is_array(v))
                return jsonin_fail(doc, &kp, "expected an array of numbers");
            json_array_foreach(v, i, e) {
                if (!json_is_number(e) || json_number_value(e) < 0) {
                    jsonin_path ep = jsonin_index(&kp, i);
                    return jsonin_fail(doc, &ep, "expected a number >= 0");
                }
            }
        } else if (strcmp(key, "residuals") == 0) {
            size_t i;
            json_t *e;
            if (!json_is_array(v))
                return jsonin_fail(doc, &kp, "expected an array of objects");
            json_array_foreach(v, i, e) {
                jsonin_path ep = jsonin_index(&kp, i);
                const char *rk;
                json_t *rv;
                if (!json_is_object(e))
                    return jsonin_fail(doc, &ep, "expected an object");
                json_object_foreach(e, rk, rv) {
                    jsonin_path rp = jsonin_key(&ep, rk);
                    if (!key_known(rk, rkeys, nr))
                        return unknown_key(doc, &rp, rkeys, nr);
                    if (strcmp(rk, "id") == 0 ? !json_is_string(rv) : !json_is_number(rv))
                        return jsonin_fail(doc, &rp, strcmp(rk, "id") == 0
                                                         ? "expected a string"
                                                         : "expected a number");
                }
            }
        } else if (strcmp(key, "condition_number") == 0 ||
                   strcmp(key, "rms_relative_error") == 0 ||
                   strcmp(key, "max_relative_error") == 0) {
            if (!json_is_number(v) && !json_is_null(v))
                return jsonin_fail(doc, &kp, "expected a number");
        } else {
            if (!json_is_integer(v) || json_integer_value(v) < 0)
                return jsonin_fail(doc, &kp, "expected a whole number >= 0");
        }
    }
    return PLANNER_OK;
}

planner_status calibration_load(const char *path, cost_params *p, planner_error *err)
{
    static const char *const top[] = {"version", "runs_file", "params", "fit"};
    const size_t ntop = sizeof top / sizeof top[0];
    const jsonin_path rootp = JSONIN_PATH_ROOT;
    jsonin_path kp;
    char *text = NULL;
    size_t len = 0;
    json_t *root, *v;
    jsonin_doc doc = {path, NULL, 0, NULL, "", err};
    planner_status st;
    cost_params q = *p;
    const char *key;
    name_list *names = NULL;

    if ((st = file_read_all(path, INPUT_MAX_BYTES, &text, &len, err)) != PLANNER_OK)
        return st;
    if ((st = jsonin_parse(&doc, text, len, path, NULL, err)) != PLANNER_OK)
        goto cleanup;
    root = doc.root;
    if (!json_is_object(root)) {
        st = jsonin_fail(&doc, &rootp,
                         "a calibration file is a JSON object (from 'planner calibrate')");
        goto cleanup;
    }
    json_object_foreach(root, key, v) {
        if (!key_known(key, top, ntop)) {
            kp = jsonin_key(&rootp, key);
            st = unknown_key(&doc, &kp, top, ntop);
            goto cleanup;
        }
    }
    kp = jsonin_key(&rootp, "version");
    v = json_object_get(root, "version");
    if (v == NULL) {
        st = jsonin_fail(&doc, &rootp, "missing \"version\" (expected %d)", CALIBRATION_VERSION);
        goto cleanup;
    }
    if (!json_is_integer(v) || json_integer_value(v) != CALIBRATION_VERSION) {
        st = jsonin_fail(&doc, &kp, "unsupported version (expected %d)", CALIBRATION_VERSION);
        goto cleanup;
    }
    kp = jsonin_key(&rootp, "runs_file");
    v = json_object_get(root, "runs_file");
    if (v != NULL && !json_is_string(v)) {
        st = jsonin_fail(&doc, &kp, "expected a string");
        goto cleanup;
    }
    v = json_object_get(root, "fit");
    if (v != NULL && (st = check_fit(&doc, v)) != PLANNER_OK)
        goto cleanup;
    kp = jsonin_key(&rootp, "params");
    v = json_object_get(root, "params");
    if (v == NULL) {
        st = jsonin_fail(&doc, &rootp, "missing \"params\" (an object of fitted constants)");
        goto cleanup;
    }
    if (!json_is_object(v)) {
        st = jsonin_fail(&doc, &kp, "expected an object of fitted constants");
        goto cleanup;
    }
    /* A bare per-generation field name ("step_overhead_s", as files written
     * before it became per generation name it) sets that field for every
     * generation, as --params reads it; a "GEN.NAME" overrides it whatever
     * the order: pass 0 applies the bare names, pass 1 the others. */
    {
        json_t *pv;
        int pass;
        for (pass = 0; pass < 2; pass++) {
            json_object_foreach(v, key, pv) {
                calib_param cp;
                char why[64];
                double x;
                int fi, g, bare = -1;
                jsonin_path pp = jsonin_key(&kp, key);
                for (fi = 0; fi < N_FIELDS; fi++)
                    if (k_fields[fi].per_gen && strcmp(key, k_fields[fi].field) == 0)
                        bare = fi;
                if (bare >= 0) {
                    cp.field = bare;
                    cp.gen = 0;
                } else if (calib_param_parse(key, &cp) != 0) {
                    names = pl_malloc(sizeof *names);
                    if (names == NULL) {
                        st = error_oom(err);
                        goto cleanup;
                    }
                    all_names(names);
                    st = unknown_key(&doc, &pp, names->ptr, names->n);
                    goto cleanup;
                }
                if (!json_is_number(pv)) {
                    st = jsonin_fail(&doc, &pp, "expected a number");
                    goto cleanup;
                }
                x = json_number_value(pv);
                if (calib_param_check(&cp, x, why, sizeof why) != 0) {
                    st = jsonin_fail(&doc, &pp, "%.6g is out of range (accepted %s)", x, why);
                    goto cleanup;
                }
                if (bare >= 0 && pass == 0) {
                    for (g = 0; g < GEN_COUNT; g++) {
                        cp.gen = g;
                        calib_param_set(&q, &cp, x);
                    }
                } else if (bare < 0 && pass == 1) {
                    calib_param_set(&q, &cp, x);
                }
            }
        }
    }
    *p = q;
    st = PLANNER_OK;
cleanup:
    pl_free(names);
    jsonin_close(&doc);
    pl_free(text);
    return st;
}

/* ---- the commands ---- */

static int parse_subset(const char *s, int *out)
{
    if (strcmp(s, "all") == 0)
        *out = CALIB_SUBSET_ALL;
    else if (strcmp(s, "dense") == 0)
        *out = CALIB_SUBSET_DENSE;
    else if (strcmp(s, "dense16") == 0)
        *out = SUBSET_DENSE16;
    else if (strcmp(s, "fp8") == 0)
        *out = SUBSET_FP8;
    else if (strcmp(s, "moe") == 0)
        *out = SUBSET_MOE;
    else
        return -1;
    return 0;
}

static void calibrate_usage(FILE *out)
{
    char list[512];
    int g;
    field_list(list, sizeof list);
    fprintf(out,
        "Usage: planner calibrate --runs FILE [-o CALIB.json] [--params LIST]\n"
        "                         [--subset dense|all|dense16|fp8|moe] [--max-iter N]\n"
        "Fit the cost model's constants to measured runs (the schema of\n"
        "published-runs.json) by relatively weighted linear least squares (LAPACKE\n"
        "dgelsd), re-choosing each run's unpublished knobs until the fit is stable.\n"
        "Prints the fitted values, the residual of every run, the RMS relative error\n"
        "and the condition number; writes the fit with -o (use it with --calibration).\n"
        "\n"
        "      --runs FILE      measured runs\n"
        "  -o, --output FILE    write the calibration file (atomically)\n"
        "      --params LIST    parameters to fit, comma-separated (names below);\n"
        "                       default: per GPU generation in the runs, the\n"
        "                       constants its runs determine; dropped, with a note:\n"
        "                       those no run exercises, near-collinear ones (SVD of\n"
        "                       the generation's block), fits outside the plausible\n"
        "                       range\n"
        "      --subset NAME    runs to fit: dense (dense16 + fp8, the default), all\n"
        "                       (also MoE), dense16, fp8 or moe\n"
        "      --max-iter N     linearized fixed-point iterations (default 20)\n"
        "  -h, --help           show this help and exit\n"
        "\nParameters: %s.\nGenerations:", list);
    for (g = 0; g < GEN_COUNT; g++)
        fprintf(out, " %s", gpu_generation_name((gpu_generation)g));
    fprintf(out, ".\n\n%s", cli_exit_codes_help);
}

/* The command line of calibrate and crossval.  Each command's longopts
 * name the options it takes; the cases of the others never come up. */
typedef struct calib_args {
    const char *cmd;        /* "calibrate " or "crossval ": messages' prefix */
    const char *runs;       /* --runs FILE (required) */
    const char *output;     /* calibrate: -o, --output FILE; NULL if absent */
    int folds;              /* crossval: --folds K (default 5) */
    calib_options opt;      /* --params, --subset, --max-iter; runs_file */
} calib_args;

static void calib_args_default(calib_args *a, const char *cmd)
{
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    a->folds = 5;
    calib_options_default(&a->opt);
}

/* Parses argv into *a.  Returns -1 to go on, or the exit status to return
 * at once: PLANNER_OK after --help (usage printed), or a usage error
 * (cli_usage_error has printed it). */
static int parse_calib_args(calib_args *a, int argc, char **argv, const char *optstring,
                            const struct option *longopts, void (*usage)(FILE *))
{
    int ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
        switch (ch) {
        case 'r': a->runs = optarg; break;
        case 'o': a->output = optarg; break;
        case 'k':
            if (cli_parse_int(optarg, 2, 100, &a->folds) != 0)
                return cli_usage_error(a->cmd, "--folds: expected 2..100, got '%s'", optarg);
            break;
        case 'p': a->opt.params = optarg; break;
        case 's':
            if (parse_subset(optarg, &a->opt.subset) != 0)
                return cli_usage_error(a->cmd,
                                       "--subset: expected dense, all, dense16, fp8 or moe, got '%s'", optarg);
            break;
        case 'i':
            if (cli_parse_int(optarg, 1, 1000, &a->opt.max_iter) != 0)
                return cli_usage_error(a->cmd, "--max-iter: expected 1..1000, got '%s'",
                                       optarg);
            break;
        case 'h': usage(stdout); return PLANNER_OK;
        case ':':
            return cli_usage_error(a->cmd, "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error(a->cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc)
        return cli_usage_error(a->cmd, "unexpected argument '%s'", argv[optind]);
    if (a->runs == NULL)
        return cli_usage_error(a->cmd, "--runs FILE is required");
    a->opt.runs_file = a->runs;
    return -1;
}

static void print_fit(const calib_fit *f, const validation_set *set)
{
    int j, i;
    printf("%-28s %14s %14s %8s\n", "parameter", "start", "fitted", "change");
    for (j = 0; j < f->n_params; j++) {
        char name[CALIB_NAME_MAX];
        calib_param_name(&f->param[j], name, sizeof name);
        printf("%-28s %14.6g %14.6g ", name, f->start[j], f->value[j]);
        if (f->start[j] != 0)
            printf("%+7.1f%%\n", 100.0 * (f->value[j] / f->start[j] - 1.0));
        else
            printf("%8s\n", "-");
    }
    printf("\n%-36s %-14s %12s %12s %8s\n", "run", "gpu", "measured_s", "predicted_s", "error");
    for (i = 0; i < f->n_runs; i++) {
        const calib_run_fit *r = &f->run[i];
        const validation_run *vr = &set->run[r->run];
        printf("%-36.36s %-14.14s %12.4f %12.4f %+7.1f%%\n", vr->id, vr->c->group[0].gpu.name,
               r->measured_step_s, r->predicted_step_s, 100.0 * r->rel_error);
    }
    printf("\nruns fitted: %d (skipped: %d unsupported, %d in other subsets, %d infeasible)\n",
           f->n_runs, f->skipped_unsupported, f->skipped_subset, f->skipped_infeasible);
    printf("step time error: RMS %.2f%%, mean |error| %.2f%%, max %.2f%%\n", 100.0 * f->rms_rel,
           100.0 * f->mean_abs_rel, 100.0 * f->max_rel);
    printf("condition number %.4g (rank %d of %d); singular values:", f->condition, f->rank,
           f->n_params);
    for (j = 0; j < f->n_params; j++)
        printf(" %.4g", f->sv[j]);
    printf("\niterations: %d (%s)\n", f->iterations, f->converged ? "converged" : "not converged");
}

int cmd_calibrate(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"runs", required_argument, NULL, 'r'},
        {"output", required_argument, NULL, 'o'},
        {"params", required_argument, NULL, 'p'},
        {"subset", required_argument, NULL, 's'},
        {"max-iter", required_argument, NULL, 'i'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    calib_args a;
    planner_error err = PLANNER_ERROR_INIT;
    planner_status st = PLANNER_OK;
    validation_set *set = NULL;
    cost_params start;
    calib_fit fit;
    int ch;

    memset(&fit, 0, sizeof fit);
    calib_args_default(&a, "calibrate ");
    if ((ch = parse_calib_args(&a, argc, argv, ":o:h", longopts, calibrate_usage)) >= 0)
        return ch;
    openblas_set_num_threads(1);

    if (a.output != NULL) {   /* -o never replaces the runs file: refused before the fit */
        output_set os;
        int index;
        output_set_init(&os);
        if ((st = output_set_input(&os, a.runs, "--runs", &err)) == PLANNER_OK)
            st = output_set_add(&os, a.output, "-o", OUTPUT_STREAM, &index, &err);
        output_set_free(&os);
        if (st != PLANNER_OK)
            goto cleanup;
    }
    cost_params_default(&start);
    if ((st = validation_load(a.runs, &set, &err)) != PLANNER_OK)
        goto cleanup;
    st = calibrate_fit(set, NULL, &start, &a.opt, &fit, &err);
    if (fit.notes[0])
        fprintf(stderr, "%s", fit.notes);
    if (st != PLANNER_OK) {
        if (st == PLANNER_E_USAGE) {
            cli_usage_error("calibrate ", "%s", err.msg);
            error_clear(&err);
        }
        goto cleanup;
    }
    print_fit(&fit, set);
    if (a.output != NULL) {
        if ((st = calibration_write(a.output, &fit, set, a.runs, &err)) != PLANNER_OK)
            goto cleanup;
        if (strcmp(a.output, "-") != 0)
            printf("wrote %s\n", a.output);
    }
    if (fflush(stdout) != 0 || ferror(stdout))
        st = error_set(&err, PLANNER_E_IO, NULL, 0, 0, NULL, "cannot write to stdout");
cleanup:
    if (st != PLANNER_OK && err.status != PLANNER_OK)
        error_print(&err, stderr);
    calib_fit_free(&fit);
    validation_free(set);
    return st;
}

/* ---- cross-validation ---- */

static void crossval_usage(FILE *out)
{
    fprintf(out,
        "Usage: planner crossval --runs FILE [--folds K] [--params LIST]\n"
        "                        [--subset dense|all|dense16|fp8|moe] [--max-iter N]\n"
        "K-fold cross-validation of 'planner calibrate': the runs are folded by their\n"
        "\"source\" (rows of one table never train and test together); each fold is\n"
        "predicted with the default constants and with constants fitted on the other\n"
        "folds.  Prints per-fold and overall MAPE of tokens/s per GPU, per subset.\n"
        "\n"
        "      --runs FILE      measured runs\n"
        "      --folds K        folds, 2..100 (default 5; at most the number of sources)\n"
        "      --params LIST    as for calibrate\n"
        "      --subset NAME    runs to train and test on: dense (dense16 + fp8, the\n"
        "                       default), all (also MoE), dense16, fp8 or moe\n"
        "      --max-iter N     as for calibrate\n"
        "  -h, --help           show this help and exit\n"
        "\n%s", cli_exit_codes_help);
}

typedef struct cv_acc {
    double sum_def, sum_cal, max_def, max_cal;
    int n;
} cv_acc;

static void cv_add(cv_acc *a, double e_def, double e_cal)
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
    planner_status st = validation_predict(r, p, scratch, &e2);
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

int cmd_crossval(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"runs", required_argument, NULL, 'r'},
        {"folds", required_argument, NULL, 'k'},
        {"params", required_argument, NULL, 'p'},
        {"subset", required_argument, NULL, 's'},
        {"max-iter", required_argument, NULL, 'i'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int folds, ch, i, f, n_src = 0;
    calib_args a;
    planner_error err = PLANNER_ERROR_INIT;
    planner_status st = PLANNER_OK;
    validation_set *set = NULL;
    cost_params def;
    int *src = NULL, *fold = NULL, *src_runs = NULL, *src_first = NULL, *order = NULL;
    int fold_runs[100] = {0}, fold_srcs[100] = {0};
    bool *eligible = NULL, *use = NULL, *def_ok = NULL;
    double *def_err = NULL;
    plan *scratch = NULL;
    cv_acc total = {0, 0, 0, 0, 0}, by_subset[SUBSET_COUNT];
    calib_fit fit;

    memset(&fit, 0, sizeof fit);
    memset(by_subset, 0, sizeof by_subset);
    calib_args_default(&a, "crossval ");
    if ((ch = parse_calib_args(&a, argc, argv, ":h", longopts, crossval_usage)) >= 0)
        return ch;
    folds = a.folds;
    openblas_set_num_threads(1);
    cost_params_default(&def);

    if ((st = validation_load(a.runs, &set, &err)) != PLANNER_OK)
        goto cleanup;
    if (set->n > 0) {
        src = pl_calloc((size_t)set->n, sizeof *src);
        fold = pl_calloc((size_t)set->n, sizeof *fold);
        src_runs = pl_calloc((size_t)set->n, sizeof *src_runs);
        src_first = pl_calloc((size_t)set->n, sizeof *src_first);
        order = pl_calloc((size_t)set->n, sizeof *order);
        eligible = pl_calloc((size_t)set->n, sizeof *eligible);
        use = pl_calloc((size_t)set->n, sizeof *use);
        def_ok = pl_calloc((size_t)set->n, sizeof *def_ok);
        def_err = pl_calloc((size_t)set->n, sizeof *def_err);
    }
    scratch = pl_malloc(sizeof *scratch);
    if (scratch == NULL ||
        (set->n > 0 && (src == NULL || fold == NULL || src_runs == NULL || src_first == NULL ||
                        order == NULL || eligible == NULL || use == NULL || def_ok == NULL ||
                        def_err == NULL))) {
        st = error_oom(&err);
        goto cleanup;
    }

    /* eligible runs (supported, in the subset, a plan fits) and their sources */
    for (i = 0; i < set->n; i++) {
        const validation_run *r = &set->run[i];
        int k;
        if (r->unsupported[0] || !subset_wanted(a.opt.subset, r->subset))
            continue;
        if ((st = cv_error(r, &def, &def_err[i], &def_ok[i], scratch, &err)) != PLANNER_OK)
            goto cleanup;
        if (!def_ok[i])
            continue;
        eligible[i] = true;
        for (k = 0; k < n_src; k++)
            if (strcmp(set->run[src_first[k]].source, r->source) == 0)
                break;
        if (k == n_src) {
            src_first[n_src] = i;
            src_runs[n_src] = 0;
            n_src++;
        }
        src[i] = k;
        src_runs[k]++;
    }
    if (n_src < folds) {
        st = error_set(&err, PLANNER_E_INPUT, a.runs, 0, 0, NULL,
                       "crossval: %d source%s with predictable runs cannot make %d folds "
                       "(folds never split a source)", n_src, n_src == 1 ? "" : "s", folds);
        goto cleanup;
    }
    /* sources, largest first (then in file order), each to the fold with
     * the fewest runs (then the lowest index) */
    for (i = 0; i < n_src; i++)
        order[i] = i;
    for (i = 1; i < n_src; i++) {
        int k = order[i], j = i - 1;
        while (j >= 0 && src_runs[order[j]] < src_runs[k]) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = k;
    }
    for (i = 0; i < n_src; i++) {
        int k = order[i], best = 0;
        for (f = 1; f < folds; f++)
            if (fold_runs[f] < fold_runs[best])
                best = f;
        fold_runs[best] += src_runs[k];
        fold_srcs[best]++;
        src_runs[k] = -1 - best;    /* now: the source's fold, encoded */
    }
    for (i = 0; i < set->n; i++)
        fold[i] = eligible[i] ? -1 - src_runs[src[i]] : -1;

    for (i = 0, ch = 0; i < folds; i++)
        ch += fold_runs[i];
    printf("crossval: %s, %d runs from %d sources, %d folds by source, subset %s\n", a.runs,
           ch, n_src, folds,
           subset_label(a.opt.subset));
    printf("%-5s %7s %6s %5s %13s %16s  %s\n", "fold", "sources", "train", "test",
           "MAPE default", "MAPE calibrated", "fit");
    for (f = 0; f < folds; f++) {
        cv_acc acc = {0, 0, 0, 0, 0};
        bool fitted;
        int ntrain = 0;
        for (i = 0; i < set->n; i++) {
            use[i] = eligible[i] && fold[i] != f;
            ntrain += use[i];
        }
        calib_fit_free(&fit);
        error_clear(&err);
        st = calibrate_fit(set, use, &def, &a.opt, &fit, &err);
        if (st == PLANNER_E_INTERNAL || st == PLANNER_E_USAGE) {
            if (st == PLANNER_E_USAGE) {
                cli_usage_error("crossval ", "%s", err.msg);
                error_clear(&err);
            }
            goto cleanup;
        }
        fitted = st == PLANNER_OK;
        for (i = 0; i < set->n; i++) {
            double e;
            bool ok;
            if (!eligible[i] || fold[i] != f)
                continue;
            if ((st = cv_error(&set->run[i], fitted ? &fit.fitted : &def, &e, &ok, scratch,
                               &err)) != PLANNER_OK)
                goto cleanup;
            if (!ok)
                e = def_err[i];     /* cannot happen: memory does not depend on the fit */
            cv_add(&acc, def_err[i], e);
            cv_add(&total, def_err[i], e);
            cv_add(&by_subset[set->run[i].subset], def_err[i], e);
        }
        printf("%-5d %7d %6d %5d %12.1f%% %15.1f%%  ", f + 1, fold_srcs[f], ntrain, acc.n,
               acc.n ? 100.0 * acc.sum_def / acc.n : 0.0,
               acc.n ? 100.0 * acc.sum_cal / acc.n : 0.0);
        if (fitted)
            printf("%d parameters, train RMS %.1f%%\n", fit.n_params, 100.0 * fit.rms_rel);
        else
            printf("refused, defaults kept: %s\n", err.msg);
        st = PLANNER_OK;
        error_clear(&err);
    }
    printf("\nsources (runs) per fold:\n");
    for (f = 0; f < folds; f++)
        for (i = 0; i < n_src; i++)
            if (-1 - src_runs[i] == f) {
                int k, cnt = 0;
                for (k = 0; k < set->n; k++)
                    cnt += eligible[k] && src[k] == i;
                printf("  %d  %s (%d)\n", f + 1, set->run[src_first[i]].source, cnt);
            }
    printf("\n%-16s %5s %13s %16s %12s %15s\n", "test runs", "runs", "MAPE default",
           "MAPE calibrated", "max default", "max calibrated");
    if (total.n > 0)
        printf("%-16s %5d %12.1f%% %15.1f%% %11.1f%% %14.1f%%\n", "all", total.n,
               100.0 * total.sum_def / total.n, 100.0 * total.sum_cal / total.n,
               100.0 * total.max_def, 100.0 * total.max_cal);
    for (i = 0; i < SUBSET_COUNT; i++)
        if (by_subset[i].n > 0)
            printf("%-16s %5d %12.1f%% %15.1f%% %11.1f%% %14.1f%%\n",
                   validation_subset_name((validation_subset)i), by_subset[i].n,
                   100.0 * by_subset[i].sum_def / by_subset[i].n,
                   100.0 * by_subset[i].sum_cal / by_subset[i].n, 100.0 * by_subset[i].max_def,
                   100.0 * by_subset[i].max_cal);
    if (fflush(stdout) != 0 || ferror(stdout))
        st = error_set(&err, PLANNER_E_IO, NULL, 0, 0, NULL, "cannot write to stdout");
cleanup:
    if (st != PLANNER_OK && err.status != PLANNER_OK)
        error_print(&err, stderr);
    calib_fit_free(&fit);
    pl_free(src);
    pl_free(fold);
    pl_free(src_runs);
    pl_free(src_first);
    pl_free(order);
    pl_free(eligible);
    pl_free(use);
    pl_free(def_ok);
    pl_free(def_err);
    pl_free(scratch);
    validation_free(set);
    return st;
}
