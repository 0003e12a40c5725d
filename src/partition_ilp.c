/* partition_ilp.c: contiguous layers to pipeline stages as a mixed-integer
 * program solved by GLPK's branch and cut (problem in partition.h).
 *
 * Formulation ("staircase"): z[s][i] = 1 when layer i sits on a stage <= s,
 * for s < P - 1 (stage P - 1 takes the rest), binary.  Layer i is on stage s
 * exactly when x[s][i] = z[s][i] - z[s-1][i] = 1 (z[-1] = 0, z[P-1] = 1).
 *   z[s][i+1] <= z[s][i]          each stage set is a prefix: contiguity
 *   z[s][i]   <= z[s+1][i]        stages in order
 *   sum_i x[s][i] >= min_layers
 *   fixed_t[s] + sum_i t[k][i] x[s][i] <= B                    (bottleneck)
 *   fixed_b[s] + sum_i (state + inflight[s] act)[k][i] x[s][i] + y[s]
 *       <= capacity[s],   y[s] >= peak[k][i] x[s][i]          (memory, max)
 *   sum over stages of class k of sum_i x[s][i] <= cap[k]     (ILP only)
 *   minimize B + fill_weight sum_s time(s),  B >= bottleneck_lb
 * Rows are scaled (time by the mean stage time, bytes by the capacity) so
 * GLPK sees numbers near 1.  The integer solution is read back and measured
 * exactly with partition_measure().
 *
 * GLPK aborts the process on misuse; here that cannot happen: every row and
 * column index is checked before glp_set_* / glp_set_mat_row, values are
 * finite, and glp_error_hook longjmps back to partition_ilp(), which frees
 * GLPK's environment (glp_free_env) and returns PARTITION_SOLVER_ERROR.  Our
 * own arrays are allocated before setjmp, so nothing of ours leaks then.
 * Terminal output is off (glp_term_out, and a terminal hook that swallows
 * what GLPK's error routine prints anyway); the time limit is tm_lim.
 */
#include <glpk.h>
#include <math.h>
#include <setjmp.h>
#include <string.h>
#include "alloc.h"
#include "partition.h"

typedef struct ilp_ctx {
    const partition_problem *pb;
    int L, P, K, ml;
    int n_z, col_b, col_y0, n_cols;  /* columns: z, B, y (1-based) */
    bool has_peak;
    double tscale, bscale;
    /* row builder (dense accumulator over columns) */
    double *acc;                     /* [n_cols + 1] */
    int *touched;                    /* [n_cols + 1] */
    int *mark;                       /* [n_cols + 1]: row that touched it */
    int n_touched, row_id;
    int *ind;                        /* [n_cols + 1], GLPK 1-based */
    double *val;                     /* [n_cols + 1] */
    double constant;                 /* constant part of the row */
    bool bad;                        /* an index or value failed a check */
    jmp_buf jb;
} ilp_ctx;

/* GLPK's terminal hook: swallows everything (its error routine turns the
 * terminal output back on before printing; this keeps stderr clean). */
static int on_glpk_output(void *info, const char *text)
{
    (void)info;
    (void)text;
    return 1;
}

static void on_glpk_error(void *info)
{
    ilp_ctx *x = info;
    longjmp(x->jb, 1);
}

static int zcol(const ilp_ctx *x, int s, int i)
{
    return 1 + s * x->L + i;
}

static void acc_add(ilp_ctx *x, int col, double v)
{
    if (col < 1 || col > x->n_cols || !isfinite(v)) {
        x->bad = true;
        return;
    }
    if (x->mark[col] != x->row_id) {
        x->mark[col] = x->row_id;
        x->touched[x->n_touched++] = col;
    }
    x->acc[col] += v;
}

/* Adds coef * x[s][i] to the row. */
static void add_x(ilp_ctx *x, int s, int i, double coef)
{
    if (coef == 0)
        return;
    if (s < x->P - 1)
        acc_add(x, zcol(x, s, i), coef);
    if (s > 0)
        acc_add(x, zcol(x, s - 1, i), -coef);
    if (s == x->P - 1)
        x->constant += coef;
}

static void row_begin(ilp_ctx *x)
{
    x->row_id++;
    x->n_touched = 0;
    x->constant = 0;
}

/* Writes the accumulated row as `lo <= row + constant <= hi` (either bound
 * infinite means none) into a new GLPK row, then clears the accumulator. */
static void row_end(ilp_ctx *x, glp_prob *lp, double lo, double hi)
{
    int n = 0, r, type;
    for (int q = 0; q < x->n_touched; q++) {
        int col = x->touched[q];
        if (x->acc[col] != 0) {
            n++;
            x->ind[n] = col;
            x->val[n] = x->acc[col];
        }
        x->acc[col] = 0;
    }
    x->n_touched = 0;
    lo -= x->constant;
    hi -= x->constant;
    if (x->bad || isnan(lo) || isnan(hi) || n > x->n_cols)
        return;
    if (n == 0) {
        /* a constant row: infeasible when its constant breaks a bound */
        if (lo > 1e-9 || hi < -1e-9) {
            /* 0 <= -1 : an empty row GLPK accepts, infeasible */
            r = glp_add_rows(lp, 1);
            glp_set_row_bnds(lp, r, GLP_UP, 0.0, -1.0);
        }
        return;
    }
    if (isfinite(lo) && isfinite(hi))
        type = lo == hi ? GLP_FX : GLP_DB;
    else if (isfinite(lo))
        type = GLP_LO;
    else if (isfinite(hi))
        type = GLP_UP;
    else
        return;
    r = glp_add_rows(lp, 1);
    if (r < 1 || r != glp_get_num_rows(lp)) {
        x->bad = true;
        return;
    }
    glp_set_row_bnds(lp, r, type, isfinite(lo) ? lo : 0.0, isfinite(hi) ? hi : 0.0);
    glp_set_mat_row(lp, r, n, x->ind, x->val);
}

static const double *coef_row(const double *a, const ilp_ctx *x, int s)
{
    return a + (size_t)x->pb->stage_class[s] * (size_t)x->L;
}

/* Builds rows, columns and objective into lp. */
static void build(ilp_ctx *x, glp_prob *lp)
{
    const partition_problem *pb = x->pb;
    int L = x->L, P = x->P;

    glp_set_obj_dir(lp, GLP_MIN);
    if (glp_add_cols(lp, x->n_cols) != 1 || glp_get_num_cols(lp) != x->n_cols) {
        x->bad = true;
        return;
    }
    for (int c = 1; c <= x->n_z; c++)
        glp_set_col_kind(lp, c, GLP_BV);
    glp_set_col_bnds(lp, x->col_b, GLP_LO, pb->bottleneck_lb / x->tscale, 0.0);
    glp_set_obj_coef(lp, x->col_b, 1.0);
    if (x->has_peak)
        for (int s = 0; s < P; s++)
            glp_set_col_bnds(lp, x->col_y0 + s, GLP_LO, 0.0, 0.0);

    /* contiguity: prefixes, nested */
    for (int s = 0; s < P - 1 && !x->bad; s++)
        for (int i = 0; i + 1 < L; i++) {
            row_begin(x);
            acc_add(x, zcol(x, s, i + 1), 1.0);
            acc_add(x, zcol(x, s, i), -1.0);
            row_end(x, lp, -HUGE_VAL, 0.0);
        }
    for (int s = 0; s + 1 < P - 1 && !x->bad; s++)
        for (int i = 0; i < L; i++) {
            row_begin(x);
            acc_add(x, zcol(x, s, i), 1.0);
            acc_add(x, zcol(x, s + 1, i), -1.0);
            row_end(x, lp, -HUGE_VAL, 0.0);
        }
    /* every stage holds at least min_layers */
    for (int s = 0; s < P && !x->bad; s++) {
        row_begin(x);
        for (int i = 0; i < L; i++)
            add_x(x, s, i, 1.0);
        row_end(x, lp, x->ml, HUGE_VAL);
    }
    /* bottleneck */
    for (int s = 0; s < P && !x->bad; s++) {
        const double *t = coef_row(pb->time_s, x, s);
        row_begin(x);
        for (int i = 0; i < L; i++)
            add_x(x, s, i, t[i] / x->tscale);
        acc_add(x, x->col_b, -1.0);
        row_end(x, lp, -HUGE_VAL, -pb->fixed_time_s[s] / x->tscale);
    }
    /* memory */
    for (int s = 0; s < P && !x->bad; s++) {
        const double *st = coef_row(pb->state_bytes, x, s), *ac = coef_row(pb->act_bytes, x, s);
        double cap = pb->capacity_bytes[s], unit;
        if (!isfinite(cap))
            continue;
        unit = cap > 1 ? cap : 1;
        row_begin(x);
        for (int i = 0; i < L; i++)
            add_x(x, s, i, (st[i] + pb->inflight[s] * ac[i]) / unit);
        if (x->has_peak)
            acc_add(x, x->col_y0 + s, x->bscale / unit);
        row_end(x, lp, -HUGE_VAL, (cap - pb->fixed_bytes[s]) / unit);
        if (x->has_peak) {
            const double *pk = coef_row(pb->peak_bytes, x, s);
            for (int i = 0; i < L && !x->bad; i++) {
                if (pk[i] <= 0)
                    continue;
                row_begin(x);
                add_x(x, s, i, pk[i] / x->bscale);
                acc_add(x, x->col_y0 + s, -1.0);
                row_end(x, lp, -HUGE_VAL, 0.0);
            }
        }
    }
    /* ILP only: layers per class */
    if (pb->class_layer_cap != NULL)
        for (int k = 0; k < x->K && !x->bad; k++) {
            if (pb->class_layer_cap[k] < 0)
                continue;
            row_begin(x);
            for (int s = 0; s < P; s++)
                if (pb->stage_class[s] == k)
                    for (int i = 0; i < L; i++)
                        add_x(x, s, i, 1.0);
            row_end(x, lp, -HUGE_VAL, pb->class_layer_cap[k]);
        }
    /* objective: B + w sum_s time(s) (constants dropped) */
    if (pb->fill_weight > 0 && !x->bad) {
        row_begin(x);
        for (int s = 0; s < P; s++) {
            const double *t = coef_row(pb->time_s, x, s);
            for (int i = 0; i < L; i++)
                add_x(x, s, i, pb->fill_weight * t[i] / x->tscale);
        }
        for (int q = 0; q < x->n_touched; q++) {
            int col = x->touched[q];
            if (col >= 1 && col <= x->n_cols)
                glp_set_obj_coef(lp, col, x->acc[col]);
            x->acc[col] = 0;
        }
        x->n_touched = 0;
    }
}

/* Reads the split back from the integer solution. */
static void read_split(const ilp_ctx *x, glp_prob *lp, int *n_layers)
{
    for (int s = 0; s < x->P; s++)
        n_layers[s] = 0;
    for (int i = 0; i < x->L; i++) {
        int s = 0;
        while (s < x->P - 1 && glp_mip_col_val(lp, zcol(x, s, i)) < 0.5)
            s++;
        n_layers[s]++;
    }
}

static double objective_of(const partition_problem *pb, const int *n_layers)
{
    double b = partition_measure(pb, n_layers, NULL), sum = 0;
    int first = 0;
    if (pb->fill_weight <= 0)
        return b;
    for (int s = 0; s < pb->n_stages; s++) {
        sum += partition_stage_time(pb, s, first, n_layers[s]);
        first += n_layers[s];
    }
    return b + pb->fill_weight * sum;
}

/* Builds and solves the program (after setjmp: GLPK errors longjmp out). */
static partition_status solve(ilp_ctx *x, double time_limit_s, partition_result *out)
{
    const partition_problem *pb = x->pb;
    partition_status st = PARTITION_OK;
    glp_prob *lp;
    glp_iocp parm;
    int ret, mst;

    glp_error_hook(on_glpk_error, x);
    lp = glp_create_prob();
    build(x, lp);
    if (x->bad) {
        glp_delete_prob(lp);
        return PARTITION_SOLVER_ERROR;
    }
    glp_init_iocp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_ON;
    parm.mip_gap = pb->mip_gap;
    parm.tm_lim = time_limit_s * 1000 >= 2e9 ? 2000000000 : (int)ceil(time_limit_s * 1000);
    if (parm.tm_lim < 1)
        parm.tm_lim = 1;
    ret = glp_intopt(lp, &parm);
    mst = glp_mip_status(lp);
    if (ret == GLP_ENOPFS || mst == GLP_NOFEAS) {
        st = PARTITION_INFEASIBLE;
    } else if (mst == GLP_OPT || mst == GLP_FEAS) {
        read_split(x, lp, out->n_layers);
        out->optimal = ret == 0 && mst == GLP_OPT;
        out->bottleneck_s = partition_measure(pb, out->n_layers, NULL);
        out->objective = objective_of(pb, out->n_layers);
    } else if (ret == GLP_ETMLIM) {
        st = PARTITION_TIMEOUT;
    } else {
        st = PARTITION_SOLVER_ERROR;
    }
    glp_delete_prob(lp);
    return st;
}

/* The one-stage problem: nothing to choose. */
static partition_status one_stage(const partition_problem *pb, partition_result *out)
{
    bool fits;
    int k = pb->stage_class[0];
    out->n_layers[0] = pb->n_layers;
    out->bottleneck_s = partition_measure(pb, out->n_layers, &fits);
    out->objective = objective_of(pb, out->n_layers);
    if (pb->class_layer_cap != NULL && pb->class_layer_cap[k] >= 0 &&
        pb->class_layer_cap[k] < pb->n_layers)
        fits = false;
    out->optimal = true;
    out->status = fits ? PARTITION_OK : PARTITION_INFEASIBLE;
    return out->status;
}

partition_status partition_ilp(const partition_problem *pb, double time_limit_s,
                               partition_result *out)
{
    ilp_ctx *x;
    char why[160];
    volatile partition_status st = PARTITION_OK;
    size_t n;

    memset(out, 0, sizeof *out);
    if (partition_validate(pb, why, sizeof why) != 0 || !(time_limit_s > 0)) {
        out->status = PARTITION_INVALID;
        return PARTITION_INVALID;
    }
    if (pb->n_stages == 1)
        return one_stage(pb, out);
    x = pl_calloc(1, sizeof *x);
    if (x == NULL) {
        out->status = PARTITION_NOMEM;
        return PARTITION_NOMEM;
    }
    x->pb = pb;
    x->L = pb->n_layers;
    x->P = pb->n_stages;
    x->K = pb->n_classes;
    x->ml = pb->min_layers > 0 ? pb->min_layers : 1;
    x->n_z = (x->P - 1) * x->L;
    x->col_b = x->n_z + 1;
    x->has_peak = false;
    if (pb->peak_bytes != NULL)
        for (long i = 0; i < (long)x->K * x->L && !x->has_peak; i++)
            x->has_peak = pb->peak_bytes[i] > 0;
    x->col_y0 = x->col_b + 1;
    x->n_cols = x->col_b + (x->has_peak ? x->P : 0);
    /* scales: the largest layer time x layers per stage, the largest peak */
    for (long i = 0; i < (long)x->K * x->L; i++) {
        if (pb->time_s[i] > x->tscale)
            x->tscale = pb->time_s[i];
        if (pb->peak_bytes != NULL && pb->peak_bytes[i] > x->bscale)
            x->bscale = pb->peak_bytes[i];
    }
    x->tscale = x->tscale > 0 ? x->tscale * x->L / x->P : 1.0;
    if (!(x->bscale > 0))
        x->bscale = 1.0;

    n = (size_t)x->n_cols + 1;
    x->acc = pl_calloc(n, sizeof *x->acc);
    x->val = pl_calloc(n, sizeof *x->val);
    x->touched = pl_calloc(n, sizeof *x->touched);
    x->mark = pl_calloc(n, sizeof *x->mark);
    x->ind = pl_calloc(n, sizeof *x->ind);
    if (x->acc == NULL || x->val == NULL || x->touched == NULL || x->mark == NULL ||
        x->ind == NULL) {
        st = PARTITION_NOMEM;
        goto cleanup;
    }

    glp_term_out(GLP_OFF);
    glp_term_hook(on_glpk_output, NULL);
    if (setjmp(x->jb) == 0)
        st = solve(x, time_limit_s, out);
    else
        st = PARTITION_SOLVER_ERROR;
    /* frees whatever GLPK holds, after an error too; the hooks go with it */
    glp_error_hook(NULL, NULL);
    glp_term_hook(NULL, NULL);
    glp_free_env();
cleanup:
    pl_free(x->acc);
    pl_free(x->val);
    pl_free(x->touched);
    pl_free(x->mark);
    pl_free(x->ind);
    pl_free(x);
    if (st != PARTITION_OK)
        memset(out->n_layers, 0, sizeof out->n_layers);
    out->status = st;
    return st;
}
