/* calibrate.c: fitting the cost model's constants to measured step times
 * (the library half of `planner calibrate`: the command is
 * tool/cmd_calibrate.c, its tables out/calibrate_report.c, the calibration
 * file fit/calibration.c, cross-validation fit/crossval.c), and the table
 * of fitted parameters.
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
 * strategies and values no longer move (a linearized fixed point).  Each
 * step goes only as far as it lowers the objective with the strategies
 * re-chosen at the new constants (a backtracking line search,
 * fit_iteration: the search's discrete choices make a full step able to
 * raise it), so the objective never rises from one iteration to the next.  When
 * the data were produced by the model itself, the first iteration on the
 * right piece recovers the constants exactly.
 * A fit of fewer than CALIB_ROBUST_MAX_RUNS runs minimizes Huber's loss of
 * the relative errors instead of their squares (robust_rho: one far-off
 * run among three no longer sets the constants), by iteratively reweighted
 * least squares inside the same iteration.
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
 * Everything is deterministic: fixed orders (the tool runs OpenBLAS on one
 * thread).
 */
#include <lapacke.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "base/text.h"
#include "base/alloc.h"
#include "base/suggest.h"
#include "fit/calibrate.h"
#include "model/knobs.h"

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
    bool per_stack;         /* in stack_constants: named STACK.NAME */
} param_field;

/* A parameter's scope (calib_param.gen): a GPU generation below GEN_COUNT,
 * a software stack (GEN_COUNT + stack_id) from there. */
#define SCOPE_COUNT (GEN_COUNT + STACK_COUNT)

static const char *scope_name(int g)
{
    return g < GEN_COUNT ? gpu_generation_name((gpu_generation)g)
                         : stack_get(g - GEN_COUNT)->name;
}

/* True when field f has one value per scope g (a generation for a
 * per-generation field, a stack for a per-stack one). */
static bool field_in_scope(int f, int g);

static const param_field k_fields[] = {
    {"gemm_eff", CALIB_INV_EFF, true, offsetof(gen_constants, gemm_eff), 0.01, 1.0, 1.0, 0.5, 0.85,
     false},
    {"attn_eff", CALIB_INV_EFF, true, offsetof(gen_constants, attn_eff), 0.01, 1.0, 1.0, 0.05, 0.8,
     false},
    {"hbm_eff", CALIB_INV_EFF, true, offsetof(gen_constants, hbm_eff), 0.01, 1.0, 1.0, 0.6, 0.9,
     false},
    {"intra_eff", CALIB_INV_EFF, true, offsetof(gen_constants, intra_eff), 0.01, 1.0, 1.0, 0.7, 0.9,
     false},
    {"inter_eff", CALIB_INV_EFF, true, offsetof(gen_constants, inter_eff), 0.01, 1.0, 1.0, 0.5,
     0.95, false},
    {"kernel_s", CALIB_DIRECT, true, offsetof(gen_constants, kernel_s), 0.0, 1e-4, 1e-5, 2e-6, 2e-5,
     false},
    {"fp8_gemm_eff", CALIB_INV_EFF, true, offsetof(gen_constants, fp8_gemm_eff), 0.01, 1.0, 1.0,
     0.3, 0.8, false},
    {"overlap_exposed", CALIB_DIRECT, true, offsetof(gen_constants, overlap_exposed), 0.0, 1.0,
     0.1, 0.05, 0.5, false},
    /* plausible: up to 1 s (a slow host or data loader); a current stack
     * pays ~0.07 s, Megatron-LM 2020 0.25 s (layer_cost.c) */
    {"step_overhead_s", CALIB_DIRECT, true, offsetof(gen_constants, step_overhead_s), 0.0, 10.0,
     0.1, 0.0, 1.0, false},
    {"moe_host_s", CALIB_DIRECT, true, offsetof(gen_constants, moe_host_s), 0.0, 0.1, 1e-3, 0.0,
     5e-3, false},
    {"overlap_exposed_net", CALIB_DIRECT, true, offsetof(gen_constants, overlap_exposed_net), 0.0,
     1.0, 0.1, 0.02, 0.5, false},
    /* per software stack (inputs/stack.c): what the stack's software pays
     * on any GPU; the generation's value where the stack has none */
    {"attn_eff", CALIB_INV_EFF, false, offsetof(stack_constants, attn_eff), 0.01, 1.0, 1.0, 0.05,
     0.5, true},
    {"step_overhead_s", CALIB_DIRECT, false, offsetof(stack_constants, step_overhead_s), 0.0,
     10.0, 0.1, 0.0, 1.0, true},
};
#define N_FIELDS ((int)(sizeof k_fields / sizeof k_fields[0]))

#define FD_REL_STEP 1e-6        /* central-difference step, relative */
#define RANK_RCOND 1e-8         /* singular values below this x the largest: rank lost */
#define COLLINEAR_RCOND 1e-3    /* default list: a generation's block below this: drop */
/* default list: RMS relative step-time change per unit of the weakest direction */
#define MIN_EFFECT 0.01
#define ZERO_COLUMN 1e-9        /* column norm below this x the largest: unexercised */
#define CONVERGED_REL 1e-9      /* largest relative change of a variable */
#define CONVERGED_PRED 1e-12    /* predicted decrease of the objective, relative to it */
#define CALIB_RUNS_PER_PARAM 3  /* with a prior: runs per fitted constant */

static bool field_in_scope(int f, int g)
{
    return g < GEN_COUNT ? k_fields[f].per_gen : k_fields[f].per_stack;
}

static double *field_ptr(cost_params *cp, const calib_param *p)
{
    const param_field *f = &k_fields[p->field];
    char *base = f->per_gen     ? (char *)&cp->gen[p->gen]
                 : f->per_stack ? (char *)&cp->stack[p->gen - GEN_COUNT]
                                : (char *)cp;
    return (double *)(void *)(base + f->offset);
}

int calib_param_parse(calib_param *out, const char *name)
{
    const char *dot = strchr(name, '.');
    int f, g;
    for (f = 0; f < N_FIELDS; f++) {
        if (!k_fields[f].per_gen && !k_fields[f].per_stack) {
            if (strcmp(name, k_fields[f].field) == 0) {
                out->field = f;
                out->gen = -1;
                return 0;
            }
            continue;
        }
        if (dot == NULL || strcmp(dot + 1, k_fields[f].field) != 0)
            continue;
        for (g = 0; g < SCOPE_COUNT; g++) {
            const char *gn = scope_name(g);
            if (!field_in_scope(f, g))
                continue;
            if (strlen(gn) == (size_t)(dot - name) &&
                strncmp(name, gn, (size_t)(dot - name)) == 0) {
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
    if (k_fields[p->field].per_gen || k_fields[p->field].per_stack)
        snprintf(buf, size, "%s.%s", scope_name(p->gen), k_fields[p->field].field);
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

/* p's accepted range, or its plausible range (params.h), as "LO..HI". */
static void param_range(const calib_param *p, bool plausible, char *buf, size_t size)
{
    const param_field *f = &k_fields[p->field];
    snprintf(buf, size, "%.6g..%.6g", plausible ? f->plo : f->lo, plausible ? f->phi : f->hi);
}

/* PLANNER_OK when in_range, else PLANNER_E_INPUT: value is outside p's
 * accepted (or plausible) range. */
static planner_status range_check(const calib_param *p, bool plausible, double value,
                                  bool in_range, planner_error *err)
{
    char range[64];
    if (in_range)
        return PLANNER_OK;
    if (err == NULL)
        return PLANNER_E_INPUT;
    param_range(p, plausible, range, sizeof range);
    return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL,
                     "%.6g is out of range (accepted %s)", value, range);
}

planner_status calib_param_check(const calib_param *p, double value, planner_error *err)
{
    const param_field *f = &k_fields[p->field];
    return range_check(p, false, value,
                       isfinite(value) && value >= f->lo && value <= f->hi &&
                           !(f->kind == CALIB_INV_EFF && value <= 0),
                       err);
}

/* The same check against p's plausible range (params.h). */
static planner_status plausible_check(const calib_param *p, double value, planner_error *err)
{
    const param_field *f = &k_fields[p->field];
    return range_check(p, true, value, isfinite(value) && value >= f->plo && value <= f->phi,
                       err);
}

_Static_assert(SCOPE_COUNT * N_FIELDS + N_FIELDS <= CALIB_NAMES_MAX, "CALIB_NAMES_MAX too small");

void calib_param_names(calib_name_list *l)
{
    int f, g;
    l->n = 0;
    for (f = 0; f < N_FIELDS; f++) {
        bool scoped = k_fields[f].per_gen || k_fields[f].per_stack;
        for (g = 0; g < (scoped ? SCOPE_COUNT : 1); g++) {
            calib_param p = {f, scoped ? g : -1};
            if (scoped && !field_in_scope(f, g))
                continue;
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

int calib_field_bare(const char *name)
{
    int fi, bare = -1;
    for (fi = 0; fi < N_FIELDS; fi++)
        if (k_fields[fi].per_gen && strcmp(name, k_fields[fi].field) == 0)
            bare = fi;
    return bare;
}

/* Which part of the field list f belongs to: 0 per generation, 1 per
 * stack, 2 global. */
static int field_pass(int f)
{
    return k_fields[f].per_gen ? 0 : k_fields[f].per_stack ? 1 : 2;
}

void calib_field_list(char *buf, size_t size)
{
    int f, pass;
    size_t used = 0;
    buf[0] = '\0';
    static const char *const heads[3] = {
        "per generation, as GEN.NAME or NAME for every generation: ",
        "; per software stack, as STACK.NAME: ", "; global: "};
    for (pass = 0; pass < 3; pass++) {
        int first = 1, any = 0;
        for (f = 0; f < N_FIELDS; f++)
            any |= field_pass(f) == pass;
        if (!any)
            continue;
        used += (size_t)snprintf(buf + used, size - used, "%s", heads[pass]);
        for (f = 0; f < N_FIELDS && used < size; f++)
            if (field_pass(f) == pass) {
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

bool calib_subset_wanted(int subset, validation_subset s)
{
    if (subset == CALIB_SUBSET_ALL)
        return true;
    if (subset == CALIB_SUBSET_DENSE)
        return s != SUBSET_MOE;
    return (int)s == subset;
}

void calib_options_default(calib_options *o)
{
    memset(o, 0, sizeof *o);
    o->runs_file = "";
    o->params = NULL;
    o->subset = CALIB_SUBSET_DENSE;
    o->max_iter = 20;
    o->prior = CALIB_PRIOR_DEFAULT;
    o->huber_k = CALIB_HUBER_K_DEFAULT;
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
    return (double)r->gbs * r->seq_len / (r->measured_tokens_per_s_per_gpu * r->num_gpus);
}

static void note(calib_fit *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(calib_fit *f, const char *fmt, ...)
{
    size_t used = strlen(f->notes);
    va_list ap;
    if (used + 2 >= sizeof f->notes)
        return;
    va_start(ap, fmt);   /* one byte kept for the line's newline */
    text_vappendf(f->notes, sizeof f->notes - 1, fmt, ap);
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
        for (g = 0; g < SCOPE_COUNT; g++)
            for (fi = 0; fi < N_FIELDS; fi++)
                if (gen_used[g] && field_in_scope(fi, g))
                    add_param(f, named, (calib_param){fi, g}, false);
        for (fi = 0; fi < N_FIELDS; fi++)
            if (!k_fields[fi].per_gen && !k_fields[fi].per_stack)
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
            if (calib_param_parse(&p, tok) != 0) {
                calib_name_list *names = pl_malloc(sizeof *names);
                char hint[CALIB_NAME_MAX + 32] = "";
                if (names == NULL)
                    return error_oom(err);
                calib_param_names(names);
                suggest_format(tok, names->ptr, names->n, hint, sizeof hint);
                pl_free(names);
                {
                    char list[512];
                    calib_field_list(list, sizeof list);
                    return error_set(err, PLANNER_E_USAGE, NULL, 0, 0, NULL,
                                     "--params: unknown parameter '%s'%s (%s)", tok, hint, list);
                }
            }
            if (p.gen >= 0 && !gen_used[p.gen])
                return error_set(err, PLANNER_E_INPUT, opt->runs_file, 0, 0, NULL,
                                 "calibrate: %s: no run uses %s %s, nothing can fit it", tok,
                                 p.gen < GEN_COUNT ? "a GPU of generation" : "the software stack",
                                 scope_name(p.gen));
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
    plan *keep;         /* theirs at the iterate, during a line search */
    double *t;          /* measured step times */
    double *A, *Acopy, *b, *c0;
    evaluation *ev;     /* scratch */
    const progress_hook *progress;   /* calib_options.progress */
    long predicted;     /* runs re-predicted, for progress */
} fit_state;

/* validation_predict, counted for the progress hook. */
static planner_status predict_run(fit_state *s, plan *out, const validation_run *r,
                                  const cost_params *p, planner_error *err)
{
    planner_status st = validation_predict(out, r, p, err);
    progress_report(s->progress, ++s->predicted, -1);
    return st;
}

static void fit_state_free(fit_state *s)
{
    pl_free(s->idx);
    pl_free(s->pl);
    pl_free(s->keep);
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
        bool gen_used[GEN_COUNT] = {false};
        int g;
        for (g = 0; g < r->c->n_groups; g++)
            gen_used[r->c->group[g].gpu.gen] = true;
        for (j = 0; j < n; j++) {
            const calib_param *cpj = &f->param[j];
            double v = calib_param_get(p, cpj), x = to_var(cpj, v);
            double h = FD_REL_STEP * (fabs(x) > k_fields[cpj->field].typical
                                          ? fabs(x) : k_fields[cpj->field].typical);
            double tp, tm, a;
            if ((k_fields[cpj->field].per_gen && !gen_used[cpj->gen]) ||
                (k_fields[cpj->field].per_stack && cpj->gen - GEN_COUNT != r->c->stack)) {
                /* the cost model reads only the constants of the run's own
                 * GPUs (p->gen[gpu.gen]) and software stack
                 * (p->stack[c->stack]): this column is exactly 0, and
                 * skipping its two evaluations saves most of a fit's time */
                s->A[i + (size_t)j * s->m] = 0.0;
                continue;
            }
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
        planner_status st = predict_run(s, &s->pl[i], r, p, &e2);
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

/* With a prior, the default list keeps per generation (and per software
 * stack) the constants its runs exercise most: at most one per CALIB_RUNS_PER_PARAM runs (at least
 * one), ranked by the norm of their column of the scaled system (how much
 * a relative change of the constant moves the runs' relative step times).
 * The others keep their defaults, with a note. */
static void keep_most_exercised(fit_state *s, calib_fit *f, bool *named, double *scale)
{
    int g, i, j;
    for (g = 0; g < SCOPE_COUNT; g++) {
        double norm[CALIB_MAX_PARAMS];
        int runs = 0, keep, k = 0;
        for (i = 0; i < s->m; i++) {
            const cluster *c = s->set->run[s->idx[i]].c;
            runs += g < GEN_COUNT ? c->group[0].gpu.gen == (gpu_generation)g
                                  : c->stack == g - GEN_COUNT;
        }
        keep = runs / CALIB_RUNS_PER_PARAM > 1 ? runs / CALIB_RUNS_PER_PARAM : 1;
        for (j = 0; j < f->n_params; j++) {
            double sq = 0;
            norm[j] = 0;
            if (f->param[j].gen != g)
                continue;
            for (i = 0; i < s->m; i++)
                sq += s->A[i + (size_t)j * s->m] * s->A[i + (size_t)j * s->m];
            norm[j] = sqrt(sq);
            k++;
        }
        while (k > keep) {
            int drop = -1;
            char name[CALIB_NAME_MAX];
            for (j = 0; j < f->n_params; j++)
                if (f->param[j].gen == g && !named[j] && (drop < 0 || norm[j] < norm[drop]))
                    drop = j;
            if (drop < 0)
                break;
            calib_param_name(&f->param[drop], name, sizeof name);
            note(f, "kept %s at its default: the %d %s run%s exercise it less than the %d "
                 "constant%s fitted (one per %d runs)", name, runs,
                 scope_name(g), runs == 1 ? "" : "s", keep,
                 keep == 1 ? "" : "s", CALIB_RUNS_PER_PARAM);
            memmove(&norm[drop], &norm[drop + 1],
                    (size_t)(f->n_params - 1 - drop) * sizeof norm[0]);
            drop_column(s, f, named, scale, drop);
            k--;
        }
    }
}

/* The default parameter list keeps, per generation, only what that
 * generation's runs determine.  The scaled system is block-diagonal by
 * generation (a run's step time depends on the constants of its own GPUs),
 * so each generation's block (its runs, its constants) is judged alone:
 * while its smallest singular value is below COLLINEAR_RCOND x its largest
 * (fewer runs than constants makes it 0), the constant with the largest
 * component in that singular vector (the undetermined direction) is
 * dropped, with a note naming the others in the direction.  Only
 * parameters the user did not name are dropped.  A run's step time depends
 * on its software stack's constants too, so the blocks of a generation and
 * of a stack share runs: a last pass (g == SCOPE_COUNT) judges the whole
 * system the same way (3 runs of one Ampere stack determine at most 3 of
 * the Ampere and the stack constants together, though each block alone
 * may look determined). */
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
    for (g = 0; g <= SCOPE_COUNT; g++) {
        for (;;) {
            double v[CALIB_MAX_PARAMS], sv[CALIB_MAX_PARAMS], big = 0;
            char list[512] = "", name[CALIB_NAME_MAX];
            int k = 0, r = 0, drop = -1, c;
            for (j = 0; j < f->n_params; j++)
                if (g == SCOPE_COUNT || f->param[j].gen == g)
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
                               g == SCOPE_COUNT ? "whole" : scope_name(g));
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
                 g == SCOPE_COUNT ? "fitted" : scope_name(g), r == 1 ? " does" : "s do",
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

/* What one fit carries besides the linear system: the user's naming of
 * each parameter, the column scales, whether the list is the default one,
 * the runs file for messages, and where to report a parameter to drop. */
typedef struct fit_ctx {
    fit_state s;
    const calib_options *opt;
    bool auto_list;                     /* opt->params == NULL */
    const char *file;                   /* the runs file, for messages */
    bool named[CALIB_MAX_PARAMS];       /* the user named param j itself */
    double scale[CALIB_MAX_PARAMS];     /* column scales */
    calib_param *bad;                   /* a default-list parameter to drop */
    double *bad_value;
    double obj;                         /* fit_objective at the current iterate */
    double huber;                       /* the robust loss's threshold (0: squares) */
    bool stalled;                       /* no step along the last direction helped */
} fit_ctx;

/* Allocates the fit state's arrays for the runs of `set`. */
static planner_status fit_state_alloc(fit_state *s, const validation_set *set,
                                      planner_error *err)
{
    memset(s, 0, sizeof *s);
    s->set = set;
    if (set->n > 0) {
        s->idx = pl_calloc((size_t)set->n, sizeof *s->idx);
        s->pl = pl_calloc((size_t)set->n, sizeof *s->pl);
        s->keep = pl_calloc((size_t)set->n, sizeof *s->keep);
        s->t = pl_calloc((size_t)set->n, sizeof *s->t);
        s->b = pl_calloc((size_t)set->n + CALIB_MAX_PARAMS, sizeof *s->b);
        s->c0 = pl_calloc((size_t)set->n, sizeof *s->c0);
        s->A = pl_calloc((size_t)set->n * CALIB_MAX_PARAMS, sizeof *s->A);
        /* room for the prior's rows (calib_options.prior) */
        s->Acopy = pl_calloc(((size_t)set->n + CALIB_MAX_PARAMS) * CALIB_MAX_PARAMS,
                             sizeof *s->Acopy);
    }
    s->ev = pl_malloc(sizeof *s->ev);
    if (s->ev == NULL || (set->n > 0 && (s->idx == NULL || s->pl == NULL || s->keep == NULL ||
                                         s->t == NULL || s->b == NULL || s->c0 == NULL ||
                                         s->A == NULL || s->Acopy == NULL)))
        return error_oom(err);
    return PLANNER_OK;
}

/* The runs of the fit: supported, in the subset, predictable with p; the
 * GPU generations they use in gen_used. */
static planner_status select_runs(fit_ctx *c, calib_fit *f, const bool *use,
                                  const cost_params *p, bool *gen_used, planner_error *err)
{
    const validation_set *set = c->s.set;
    fit_state *s = &c->s;
    int i;
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
        if (!calib_subset_wanted(c->opt->subset, r->subset)) {
            f->skipped_subset++;
            continue;
        }
        ps = predict_run(s, &s->pl[s->m], r, p, &e2);
        if (ps == PLANNER_E_INTERNAL)
            return error_set(err, ps, NULL, 0, 0, NULL, "%s", e2.msg);
        if (ps != PLANNER_OK) {
            /* memory does not depend on the fitted constants: a run no
             * strategy fits stays unpredictable */
            f->skipped_infeasible++;
            continue;
        }
        s->idx[s->m] = i;
        s->t[s->m] = measured_step_s(r);
        gen_used[r->c->group[0].gpu.gen] = true;
        gen_used[GEN_COUNT + stack_get(r->c->stack)->id] = true;
        s->m++;
    }
    if (s->m == 0)
        return error_set(err, PLANNER_E_INPUT, c->file, 0, 0, NULL,
                         "calibrate: no run can be used (%d unsupported, %d in other subsets, "
                         "%d with no feasible plan)%s", f->skipped_unsupported, f->skipped_subset,
                         f->skipped_infeasible,
                         f->skipped_subset > 0 && c->opt->subset == CALIB_SUBSET_DENSE
                             ? "; MoE runs are left out unless --subset all or moe" : "");
    return PLANNER_OK;
}

/* Removes the parameters of `excl` the user did not name from the list. */
static void exclude_params(calib_fit *f, bool *named, const calib_param *excl, int n_excl)
{
    int i, j;
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
}

/* Drops the columns no run exercises (a note each), or refuses a named
 * one. */
static planner_status drop_unexercised(fit_ctx *c, calib_fit *f, planner_error *err)
{
    fit_state *s = &c->s;
    double colmax = 0, col[CALIB_MAX_PARAMS];
    int i, j, n = f->n_params;
    for (j = 0; j < n; j++) {
        double sq = 0;
        for (i = 0; i < s->m; i++)
            sq += s->A[i + (size_t)j * s->m] * s->A[i + (size_t)j * s->m];
        col[j] = sqrt(sq);
        if (col[j] > colmax)
            colmax = col[j];
    }
    for (j = n - 1; j >= 0; j--) {
        char name[CALIB_NAME_MAX];
        if (col[j] > ZERO_COLUMN * colmax && colmax > 0)
            continue;
        calib_param_name(&f->param[j], name, sizeof name);
        if (c->named[j])
            return error_set(err, PLANNER_E_INPUT, c->file, 0, 0, NULL,
                             "calibrate: %s: no run exercises it (no run's step time "
                             "depends on it, e.g. inter_eff when every run fits in one node "
                             "or hides its traffic); drop it from --params", name);
        note(f, "dropped %s: no run exercises it", name);
        drop_column(s, f, c->named, c->scale, j);
    }
    return PLANNER_OK;
}

/* Rank deficiency: the refusal names the parameters of the undetermined
 * direction (of s->Acopy). */
static planner_status rank_error(fit_ctx *c, const calib_fit *f, int rank, planner_error *err)
{
    double v[CALIB_MAX_PARAMS];
    char list[1024] = "";
    int j, n = f->n_params;
    if (null_direction(c->s.Acopy, c->s.m, n, v, NULL) == 0) {
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
    return error_set(err, PLANNER_E_INPUT, c->file, 0, 0, NULL,
                     "calibrate: rank deficient: %d runs determine only %d of %d "
                     "parameters (condition number %.3g); undetermined: %s; fit fewer with "
                     "--params, or leave --params out (the default list keeps what the "
                     "runs determine)",
                     c->s.m, rank, n, f->condition, list[0] ? list : "?");
}

/* The prior's deviation d_j of fitted value x from its start x0 (in the
 * fitted variables; add_prior): ln(x / x0), or (x - x0) / typical where x
 * or x0 is not positive. */
static double prior_dev(const calib_param *cp, double x, double x0)
{
    return x > 0 && x0 > 0 ? log(x / x0) : (x - x0) / k_fields[cp->field].typical;
}

/* The robust loss (calib_options.huber_k): Huber's, Robust Statistics
 * (Huber & Ronchetti, 2nd ed., 2009, section 7.8, the M-estimator of
 * regression; Huber, Ann. Math. Statist. 35(1), 1964): rho(e) = e^2 for
 * |e| <= k, 2 k |e| - k^2 beyond, so a run far off the others (a system the
 * model does not describe) pulls on the constants with a bounded force
 * instead of with its full squared error.  It is minimized by iteratively
 * reweighted least squares (Holland & Welsch, Commun. Statist. A6(9), 1977):
 * each Gauss-Newton step is a least-squares one with run i's row weighted
 * by w(e_i) = rho'(e_i) / (2 e_i) = min(1, k / |e_i|) at its current error,
 * the same direction as the Gauss-Newton step of the loss itself (its slope
 * along the step is the weighted model's), so the line search below applies
 * unchanged.  k <= 0: least squares. */
static double robust_rho(double k, double e)
{
    return k <= 0 || fabs(e) <= k ? e * e : 2.0 * k * fabs(e) - k * k;
}

static double robust_weight(double k, double e)
{
    return k <= 0 || fabs(e) <= k ? 1.0 : k / fabs(e);
}

/* The robust loss's threshold for the fit's runs: huber_k x
 * CALIB_SCATTER_DEFAULT (the relative scatter of a run about the model that
 * the published corpus shows within a source) for a fit of fewer than
 * CALIB_ROBUST_MAX_RUNS runs, where one far-off run sets the constants;
 * 0 (least squares) for more, where a run's pull is 1/m of the fit's and
 * the runs far off are whole sources the model misdescribes, not single
 * runs (docs/calibration.md, "The robust loss": bounding them biased the
 * shared constants, leave one source out of the MoE runs 15.7% -> 16.3%). */
static double robust_threshold(const fit_state *s, const calib_options *opt)
{
    return s->m < CALIB_ROBUST_MAX_RUNS && opt->huber_k > 0
               ? opt->huber_k * CALIB_SCATTER_DEFAULT : 0.0;
}

/* The fit's objective at p: the runs' squared relative step-time errors
 * (their strategies as last predicted, s->pl) plus the prior's w^2 sum_j
 * d_j^2 over the fitted constants (add_prior's rows). */
static double fit_objective(const fit_ctx *c, const calib_fit *f, const cost_params *p)
{
    const fit_state *s = &c->s;
    double sum = 0, w = c->opt->prior;
    for (int i = 0; i < s->m; i++)
        sum += robust_rho(c->huber, s->pl[i].e.step_time_s / s->t[i] - 1.0);
    for (int j = 0; w > 0 && j < f->n_params; j++) {
        const calib_param *cp = &f->param[j];
        double d = prior_dev(cp, to_var(cp, calib_param_get(p, cp)), to_var(cp, f->start[j]));
        sum += w * w * d * d;
    }
    return sum;
}

/* The prior (calib_options.prior = w > 0): n rows below the m runs' rows
 * of the system in s->A, so that the solve minimizes
 *   sum_i (relative step-time error of run i)^2 + w^2 sum_j d_j^2,
 * d_j = ln(x_j / x0_j) (x0_j: the start value, the defaults; a ridge on the
 * log-parameters: halving and doubling a constant cost alike) or, where
 * x0_j or x_j is not positive, (x_j - x0_j) / typical_j.  The log is
 * linearized at the current x (ln x ~ ln x_cur + (x - x_cur) / x_cur), so
 * each iteration is a Gauss-Newton step of the penalized problem.  With
 * many runs the data outweigh it; with 3 runs a constant moves only as far
 * as the runs insist, and the system is never rank deficient.  Writes the
 * (m + n) x n system into s->Acopy and the right-hand side into s->b. */
static void add_prior(fit_ctx *c, const calib_fit *f, const cost_params *p)
{
    fit_state *s = &c->s;
    int i, j, k, m = s->m, n = f->n_params, M = m + n;
    double w = c->opt->prior;
    for (j = 0; j < n; j++) {
        const calib_param *cp = &f->param[j];
        double x = to_var(cp, calib_param_get(p, cp)), x0 = to_var(cp, f->start[j]);
        double typical = k_fields[cp->field].typical, coef, rhs;
        for (i = 0; i < m; i++)
            s->Acopy[i + (size_t)j * M] = s->A[i + (size_t)j * m];
        /* the row w d_j linearized at x: coef z_j - rhs, z_j = x_j / scale_j */
        coef = w * c->scale[j] / (x > 0 && x0 > 0 ? x : typical);
        rhs = coef * (x / c->scale[j]) - w * prior_dev(cp, x, x0);
        for (k = 0; k < n; k++)
            s->Acopy[m + k + (size_t)j * M] = k == j ? coef : 0.0;
        s->b[m + j] = rhs;
    }
}

/* Solves the linearized system at p: the new variables in y, the largest
 * relative move in *move, and in *pred the decrease of the objective the
 * linearization predicts for the full step (c->obj, the objective at p,
 * less the least-squares residual: dgelsd leaves it in the right-hand
 * side's rows beyond n).  Refuses too few runs (without a prior), rank
 * deficiency and a non-positive inverse efficiency. */
static planner_status solve_step(fit_ctx *c, calib_fit *f, const cost_params *p, double *y,
                                 double *move, double *pred, planner_error *err)
{
    fit_state *s = &c->s;
    int i, j, rank = 0, n = f->n_params;
    double m0;
    planner_status st;
    if (n == 0)
        return error_set(err, PLANNER_E_INPUT, c->file, 0, 0, NULL,
                         "calibrate: no parameter is exercised by the runs");
    if (s->m < n && c->opt->prior <= 0)
        return error_set(err, PLANNER_E_INPUT, c->file, 0, 0, NULL,
                         "calibrate: %d run%s for %d parameters: a fit needs at least as "
                         "many runs as parameters (add runs or name fewer with --params)",
                         s->m, s->m == 1 ? "" : "s", n);
    /* the robust loss as iteratively reweighted least squares: run i's row
     * and right-hand side scaled by sqrt(w_i) at its current error; the
     * weighted model's value at the current point, m0, replaces the
     * objective in the predicted decrease (its slope is the loss's) */
    m0 = fit_objective(c, f, p);
    for (i = 0; i < s->m; i++) {
        double e = s->pl[i].e.step_time_s / s->t[i] - 1.0;
        double sw = sqrt(robust_weight(c->huber, e));
        m0 += sw * sw * e * e - robust_rho(c->huber, e);
        s->b[i] *= sw;
        for (j = 0; j < n; j++)
            s->A[i + (size_t)j * s->m] *= sw;
    }
    if (c->opt->prior > 0) {
        add_prior(c, f, p);
        st = lsq_solve(s->Acopy, s->b, s->m + n, n, f->sv, &rank, err);
    } else {
        memcpy(s->Acopy, s->A, (size_t)s->m * n * sizeof *s->A);
        st = lsq_solve(s->A, s->b, s->m, n, f->sv, &rank, err);
    }
    if (st != PLANNER_OK)
        return st;
    f->rank = rank;
    f->condition = f->sv[n - 1] > 0 ? f->sv[0] / f->sv[n - 1] : INFINITY;
    if (rank < n)
        return rank_error(c, f, rank, err);
    *pred = m0;
    for (j = n; j < s->m + (c->opt->prior > 0 ? n : 0); j++)
        *pred -= s->b[j] * s->b[j];
    *move = 0;
    for (j = 0; j < n; j++) {
        double x_old = to_var(&f->param[j], calib_param_get(p, &f->param[j]));
        double x = s->b[j] * c->scale[j], d = fabs(x - x_old) / c->scale[j];
        if (!isfinite(x) || (calib_param_kind(&f->param[j]) == CALIB_INV_EFF && x <= 0)) {
            char name[CALIB_NAME_MAX];
            calib_param_name(&f->param[j], name, sizeof name);
            if (c->auto_list && !c->named[j]) {
                *c->bad = f->param[j];
                *c->bad_value = 1.0 / x;
            }
            return error_set(err, PLANNER_E_INPUT, c->file, 0, 0, NULL,
                             "calibrate: absurd fit: 1/%s = %.4g (an efficiency must be "
                             "positive); the runs do not pin it down: drop it from --params",
                             name, x);
        }
        y[j] = x;
        if (d > *move)
            *move = d;
    }
    return PLANNER_OK;
}

/* The backtracking line search (Nocedal & Wright, Numerical Optimization,
 * 2nd ed., 2006, Algorithm 3.1 with the sufficient-decrease condition
 * (3.4), applied to the Gauss-Newton direction as in their section 10.3's
 * damped Gauss-Newton method; the same safeguard as Marquardt's, SIAM J.
 * Appl. Math. 11(2), 1963, which accepts a step only if it lowers the sum
 * of squares): the full step first, halved at most LS_HALVINGS times. */
#define LS_HALVINGS 5
#define ARMIJO_C 1e-4   /* the fraction of the predicted decrease a step must achieve */

/* Sets the fitted values of p to x + alpha (y - x) (in the fitted
 * variables; x: their values at the start of the iteration). */
static void set_trial(const calib_fit *f, cost_params *p, const double *x, const double *y,
                      double alpha)
{
    for (int j = 0; j < f->n_params; j++)
        calib_param_set(p, &f->param[j], from_var(&f->param[j], x[j] + alpha * (y[j] - x[j])));
}

/* Iteration `it`: linearize at *p (the runs' strategies as predicted at
 * *p), solve for the Gauss-Newton step, and move *p along it as far as
 * the objective, with every run's strategy re-chosen at the trial point,
 * decreases enough (the line search above).  The objective is therefore
 * non-increasing over the iterations: the search's discrete choices make
 * it piecewise smooth, and a full step that switches strategies can raise
 * it.  Sets f->converged when the step no longer moves anything, and
 * c->stalled when no shortened step lowers the objective (*p is then left
 * where it was). */
static planner_status fit_iteration(fit_ctx *c, calib_fit *f, int it, cost_params *p,
                                    planner_error *err)
{
    fit_state *s = &c->s;
    double x[CALIB_MAX_PARAMS], y[CALIB_MAX_PARAMS], move = 0, pred = 0, alpha = 1.0;
    cost_params p0;
    planner_status st;
    int i, j, k, n;

    linearize(s, f, p, c->scale);
    if ((st = drop_unexercised(c, f, err)) != PLANNER_OK)
        return st;
    n = f->n_params;
    /* with a prior every direction is determined (toward the defaults):
     * every exercised constant stays, each moving as far as the runs ask */
    if (it == 1 && c->auto_list && c->opt->prior > 0)
        keep_most_exercised(s, f, c->named, c->scale);
    if (it == 1 && c->auto_list && c->opt->prior <= 0 &&
        (st = keep_determined(s, f, c->named, c->scale, err)) != PLANNER_OK)
        return st;
    /* a constant dropped above leaves its share of the step times out of
     * the right-hand side (c0 = T - a.x): linearize the kept list alone */
    if (f->n_params != n)
        linearize(s, f, p, c->scale);
    /* the line search's reference, at every iteration (a constant dropped
     * takes its prior term out of the objective) */
    c->obj = fit_objective(c, f, p);
    if ((st = solve_step(c, f, p, y, &move, &pred, err)) != PLANNER_OK)
        return st;
    f->iterations = it;
    if (move < CONVERGED_REL || pred <= CONVERGED_PRED * c->obj) {
        f->converged = true;    /* a linearized fixed point */
        return PLANNER_OK;
    }
    for (j = 0; j < f->n_params; j++)
        x[j] = to_var(&f->param[j], calib_param_get(p, &f->param[j]));
    p0 = *p;
    memcpy(s->keep, s->pl, (size_t)s->m * sizeof *s->pl);
    for (k = 0; k <= LS_HALVINGS; k++, alpha *= 0.5) {
        double obj;
        set_trial(f, p, x, y, alpha);
        if ((st = predict_all(s, p, err)) != PLANNER_OK) {
            if (err->file[0] == '\0')
                snprintf(err->file, sizeof err->file, "%s", c->file);
            return st;
        }
        /* the slope of the objective along the step is -2 pred (the
         * Gauss-Newton model's decrease, solve_step) */
        obj = fit_objective(c, f, p);
        if (obj <= c->obj - ARMIJO_C * 2.0 * alpha * pred) {
            c->obj = obj;
            for (i = 0; i < s->m && knobs_equal(&s->keep[i].s, &s->pl[i].s); i++)
                ;
            if (i == s->m && alpha * move < CONVERGED_REL)
                f->converged = true;
            return PLANNER_OK;
        }
    }
    *p = p0;
    memcpy(s->pl, s->keep, (size_t)s->m * sizeof *s->pl);
    c->stalled = true;
    return PLANNER_OK;
}

/* The final values: each in its accepted range (a default-list parameter
 * outside its plausible range is reported in *c->bad instead). */
static planner_status check_ranges(fit_ctx *c, calib_fit *f, const cost_params *p,
                                   planner_error *err)
{
    int j;
    for (j = 0; j < f->n_params; j++) {
        double v = calib_param_get(p, &f->param[j]);
        char name[CALIB_NAME_MAX], why[64];
        f->value[j] = v;
        if (c->auto_list && !c->named[j] && plausible_check(&f->param[j], v, NULL) != PLANNER_OK) {
            *c->bad = f->param[j];
            *c->bad_value = v;
            return error_set(err, PLANNER_E_INPUT, c->file, 0, 0, NULL, "implausible");
        }
        if (calib_param_check(&f->param[j], v, NULL) != PLANNER_OK) {
            calib_param_name(&f->param[j], name, sizeof name);
            param_range(&f->param[j], false, why, sizeof why);
            return error_set(err, PLANNER_E_INPUT, c->file, 0, 0, NULL,
                             "calibrate: absurd fit: %s = %.4g %s (accepted %s); the runs do "
                             "not pin it down: drop it from --params or add runs that "
                             "exercise it", name, v, v < 0 ? "is negative" : "is out of range",
                             why);
        }
    }
    return PLANNER_OK;
}

/* Residuals with the final strategies, and their statistics. */
static planner_status residuals(calib_fit *f, const fit_state *s, planner_error *err)
{
    double sum2 = 0, sum1 = 0;
    int i;
    f->run = pl_calloc((size_t)s->m, sizeof *f->run);
    if (f->run == NULL)
        return error_oom(err);
    f->n_runs = s->m;
    for (i = 0; i < s->m; i++) {
        calib_run_fit *o = &f->run[i];
        o->run = s->idx[i];
        o->measured_step_s = s->t[i];
        o->predicted_step_s = s->pl[i].e.step_time_s;
        o->rel_error = o->predicted_step_s / o->measured_step_s - 1.0;
        sum2 += o->rel_error * o->rel_error;
        sum1 += fabs(o->rel_error);
        if (fabs(o->rel_error) > f->max_rel)
            f->max_rel = fabs(o->rel_error);
    }
    f->rms_rel = sqrt(sum2 / s->m);
    f->mean_abs_rel = sum1 / s->m;
    return PLANNER_OK;
}

/* A note for each run the robust loss counts at less than its full
 * squared error at the fit. */
static void note_robust(const fit_ctx *c, calib_fit *f)
{
    for (int i = 0; i < c->s.m; i++) {
        double e = c->s.pl[i].e.step_time_s / c->s.t[i] - 1.0;
        if (c->huber > 0 && fabs(e) > c->huber)
            note(f, "%s: its step-time error %+.1f%% is beyond the robust loss's %.1f%% (%d "
                 "runs): it counts with weight %.2f", c->s.set->run[c->s.idx[i]].id, 100 * e,
                 100 * c->huber, c->s.m, robust_weight(c->huber, e));
    }
}

/* One fit of the parameter list less the `n_excl` in `excl`.  When the
 * fit of a parameter the user did not name leaves its range, *bad is that
 * parameter (else bad->field is -1) and the fit is refused as absurd. */
static planner_status fit_once(calib_fit *f, const validation_set *set, const bool *use,
                               const cost_params *start, const calib_options *opt,
                               const calib_param *excl, int n_excl, calib_param *bad,
                               double *bad_value, planner_error *err)
{
    fit_ctx c;
    bool gen_used[SCOPE_COUNT] = {false};
    cost_params p = *start;
    planner_status st;
    int j, it;

    bad->field = -1;          /* no parameter to blame unless a fit is absurd */
    bad->gen = -1;
    memset(f, 0, sizeof *f);
    memset(&c, 0, sizeof c);
    f->fitted = *start;
    c.opt = opt;
    c.auto_list = opt->params == NULL;
    c.file = opt->runs_file != NULL ? opt->runs_file : "";
    c.bad = bad;
    c.bad_value = bad_value;
    if ((st = fit_state_alloc(&c.s, set, err)) == PLANNER_OK)
        c.s.progress = &opt->progress;
    if (st != PLANNER_OK ||
        (st = select_runs(&c, f, use, &p, gen_used, err)) != PLANNER_OK ||
        (st = choose_params(opt, gen_used, f, c.named, err)) != PLANNER_OK)
        goto cleanup;
    exclude_params(f, c.named, excl, n_excl);
    c.huber = robust_threshold(&c.s, opt);
    for (j = 0; j < f->n_params; j++)
        f->start[j] = calib_param_get(start, &f->param[j]);

    for (it = 1; it <= (opt->max_iter > 0 ? opt->max_iter : 1) && !f->converged && !c.stalled;
         it++)
        if ((st = fit_iteration(&c, f, it, &p, err)) != PLANNER_OK)
            goto cleanup;
    /* the objective never rose: the last iterate is the best one */
    if (c.stalled)
        note(f, "stopped after %d iteration%s: no step along the Gauss-Newton direction, down "
             "to 1/%d of it, lowers the objective (the runs' strategies switch under it)",
             f->iterations, f->iterations == 1 ? "" : "s", 1 << LS_HALVINGS);
    else if (!f->converged)
        note(f, "not converged after %d iterations (the runs' strategies keep changing); "
             "kept the last, the lowest objective", f->iterations);
    if ((st = check_ranges(&c, f, &p, err)) != PLANNER_OK)
        goto cleanup;
    note_robust(&c, f);
    f->fitted = p;
    st = residuals(f, &c.s, err);

cleanup:
    fit_state_free(&c.s);
    if (st != PLANNER_OK)
        calib_fit_free(f);
    return st;
}

/* The fit; a parameter of the default list whose fit leaves its range is
 * not determined by the runs either: it is dropped, with a note, and the
 * fit repeated from the start without it. */
planner_status calibrate_fit(calib_fit *f, const validation_set *set, const bool *use,
                             const cost_params *start, const calib_options *opt,
                             planner_error *err)
{
    calib_param excl[CALIB_MAX_PARAMS], bad;
    char dropped[sizeof f->notes] = "";
    int n_excl = 0;
    for (;;) {
        double bad_value = 0;
        planner_status st = fit_once(f, set, use, start, opt, excl, n_excl, &bad, &bad_value,
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
        param_range(&bad, true, why, sizeof why);
        snprintf(dropped + used, sizeof dropped - used,
                 "dropped %s: its fit (%.3g) leaves the plausible range %s: the runs do not "
                 "determine it; refitted without it\n", name, bad_value, why);
        error_clear(err);
    }
}

