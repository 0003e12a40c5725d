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
 *   sum_i c[s][i] x[s][i] + y[s] <= R[s],                         (memory)
 *       y[s] >= peak[k][i] x[s][i]                                (its max)
 *   with c = state + inflight[s] act and R = capacity[s] - fixed_b[s]
 *   sum over stages of class k of sum_i x[s][i] <= cap[k]     (ILP only)
 *   minimize B + fill_weight sum_s time(s),  B >= bottleneck_lb
 *
 * Numerics.  partition.h's range lets coefficients span 1e-30..1e30; GLPK's
 * presolver, fed rows whose coefficients span such ratios (the fuzzer's
 * 1e-299 next to 1e-2), returned "optimal" splits with empty stages, splits
 * that do not fit, twice the DP's bottleneck, or "infeasible" on feasible
 * problems.  So every row is put on a scale where its meaningful values are
 * near 1 and what cannot matter is removed before GLPK sees it:
 *   - time rows in units of the largest layer time x L / P; coefficients
 *     below 1e-12 of a lower bound on the bottleneck are dropped (they move
 *     it by less than 4096 x 1e-12 of itself; the bottleneck returned is
 *     recomputed exactly) (set_time_scale());
 *   - memory rows in units of R[s], coefficients clipped at 2 (a layer that
 *     alone exceeds R cannot be on the stage, at 2 R or at 1e20 R alike),
 *     those below 1e-12 dropped; R[s] = 0 makes every positive coefficient 1;
 *     a stage whose fixed bytes exceed its capacity makes the problem
 *     infeasible before GLPK is called.
 * Before GLPK, the DP solves the problem without the ILP-only extras (a
 * relaxation): no split there means none here (INFEASIBLE, GLPK not run);
 * its optimum is a lower bound on the bottleneck, and its split, when it
 * obeys the class caps, bounds the optimum from above: layer times beyond
 * twice that bound are clipped (such a placement is never optimal), and
 * GLPK's "optimal" worse than it, or "infeasible", is refuted.
 * The integer solution read back is then verified exactly: every stage holds
 * >= min_layers, the stages cover the L layers, every stage fits by
 * partition_measure() and the class caps hold.  A split that fails (GLPK's
 * tolerances: 1e-7 on rows, 1e-5 on integrality) is PARTITION_SOLVER_ERROR,
 * never OK: the search then keeps the DP's split (placement.c).
 *
 * Time: time_limit_s covers the whole call.  Building a 2,048-layer x
 * 64-stage program takes seconds by itself, so the clock is read every 1,024
 * rows while building (TIMEOUT once it is spent) and GLPK's tm_lim gets only
 * what is left.
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
#include <time.h>
#include "base/alloc.h"
#include "partition/partition.h"

typedef struct ilp_ctx {
    const partition_problem *pb;
    int L, P, K, ml;
    int n_z, col_b, col_y0, n_cols;  /* columns: z, B, y (1-based) */
    bool has_peak;
    double tscale;                   /* time unit (set_time_scale) */
    double tdrop;                    /* time coefficients below: dropped */
    double lb;                       /* bottleneck lower bound (the DP's) */
    double ub;                       /* objective of a valid split, or inf */
    bool ref_obeys_caps;             /* the DP's split is a valid answer */
    double drop_below;               /* |coefficient| dropped below this */
    double t0, limit_s;              /* start (monotonic s), time limit */
    int rows_built;
    bool timed_out;                  /* the limit ran out while building */
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

#define ILP_DROP 1e-12      /* coefficients below this (row units) are dropped */
#define ILP_CLIP 2.0        /* memory coefficients above this (units of R) clip */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
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

/* Adds coef * x[s][i] to the row; drops it below the row's threshold. */
static void add_x(ilp_ctx *x, int s, int i, double coef)
{
    if (coef == 0 || fabs(coef) < x->drop_below)
        return;
    if (s < x->P - 1)
        acc_add(x, zcol(x, s, i), coef);
    if (s > 0)
        acc_add(x, zcol(x, s - 1, i), -coef);
    if (s == x->P - 1)
        x->constant += coef;
}

/* Starts a row; every 1,024 rows, checks the clock (the limit covers the
 * building too) and stops the build once the limit is spent. */
static void row_begin(ilp_ctx *x, double drop_below)
{
    x->row_id++;
    x->n_touched = 0;
    x->constant = 0;
    x->drop_below = drop_below;
    if (++x->rows_built % 1024 == 0 && now_s() - x->t0 > x->limit_s) {
        x->timed_out = true;
        x->bad = true;
    }
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

/* A memory coefficient in units of R (> 0), clipped; with R = 0 any
 * positive amount is 1 (see the file comment). */
static double mem_coef(double bytes, double R)
{
    double c;
    if (!(R > 0))
        return bytes > 0 ? 1.0 : 0.0;
    c = bytes / R;
    return c > ILP_CLIP ? ILP_CLIP : c;
}

/* A layer time in units of tscale; clipped at twice the objective of a
 * valid split: a split that puts such a layer on such a stage has a
 * bottleneck above that objective before and after, so it is never optimal
 * and the optimum does not move (a 1e30 s layer next to 1 s ones made a
 * 5e26 coefficient, and GLPK returned 4x the optimum as "optimal"). */
static double time_coef(const ilp_ctx *x, double t)
{
    return (t > 2 * x->ub ? 2 * x->ub : t) / x->tscale;
}

/* A time bound below the drop threshold is 0, as a coefficient would be
 * (a 5e-31 right-hand side next to the other rows' 1 made GLPK report a
 * feasible problem infeasible). */
static double tiny_to_zero(double v, double drop_below)
{
    return fabs(v) < drop_below ? 0.0 : v;
}

/* The columns: the binaries z (prefix indicators), B (the bottleneck, in
 * units of tscale, bounded below by bottleneck_lb) and, with transient
 * bytes, each stage's peak y >= 0. */
static void build_columns(ilp_ctx *x, glp_prob *lp)
{
    const partition_problem *pb = x->pb;
    glp_set_obj_dir(lp, GLP_MIN);
    if (glp_add_cols(lp, x->n_cols) != 1 || glp_get_num_cols(lp) != x->n_cols) {
        x->bad = true;
        return;
    }
    for (int c = 1; c <= x->n_z; c++)
        glp_set_col_kind(lp, c, GLP_BV);
    glp_set_col_bnds(lp, x->col_b, GLP_LO, tiny_to_zero(pb->bottleneck_lb / x->tscale, x->tdrop),
                     0.0);
    glp_set_obj_coef(lp, x->col_b, 1.0);
    if (x->has_peak)
        for (int s = 0; s < x->P; s++)
            glp_set_col_bnds(lp, x->col_y0 + s, GLP_LO, 0.0, 0.0);
}

/* The split's shape: prefixes nested (contiguity), every stage holding at
 * least min_layers. */
static void build_shape(ilp_ctx *x, glp_prob *lp)
{
    const int L = x->L, P = x->P;
    for (int s = 0; s < P - 1 && !x->bad; s++)
        for (int i = 0; i + 1 < L && !x->bad; i++) {
            row_begin(x, 0);
            acc_add(x, zcol(x, s, i + 1), 1.0);
            acc_add(x, zcol(x, s, i), -1.0);
            row_end(x, lp, -HUGE_VAL, 0.0);
        }
    for (int s = 0; s + 1 < P - 1 && !x->bad; s++)
        for (int i = 0; i < L && !x->bad; i++) {
            row_begin(x, 0);
            acc_add(x, zcol(x, s, i), 1.0);
            acc_add(x, zcol(x, s + 1, i), -1.0);
            row_end(x, lp, -HUGE_VAL, 0.0);
        }
    for (int s = 0; s < P && !x->bad; s++) {
        row_begin(x, 0);
        for (int i = 0; i < L; i++)
            add_x(x, s, i, 1.0);
        row_end(x, lp, x->ml, HUGE_VAL);
    }
}

/* Each stage's time bounds the bottleneck, in units of tscale. */
static void build_time_rows(ilp_ctx *x, glp_prob *lp)
{
    const partition_problem *pb = x->pb;
    for (int s = 0; s < x->P && !x->bad; s++) {
        const double *t = coef_row(pb->time_s, x, s);
        row_begin(x, x->tdrop);
        for (int i = 0; i < x->L; i++)
            add_x(x, s, i, time_coef(x, t[i]));
        acc_add(x, x->col_b, -1.0);
        row_end(x, lp, -HUGE_VAL, -tiny_to_zero(pb->fixed_time_s[s] / x->tscale, x->tdrop));
    }
}

/* Each stage's memory, in units of R = capacity - fixed bytes (> 0 here,
 * or 0); its transient peak y_s >= every layer's. */
static void build_memory_rows(ilp_ctx *x, glp_prob *lp)
{
    const partition_problem *pb = x->pb;
    for (int s = 0; s < x->P && !x->bad; s++) {
        const double *st = coef_row(pb->state_bytes, x, s), *ac = coef_row(pb->act_bytes, x, s);
        double cap = pb->capacity_bytes[s], R;
        if (!isfinite(cap))
            continue;
        R = cap - pb->fixed_bytes[s];
        row_begin(x, ILP_DROP);
        for (int i = 0; i < x->L; i++)
            add_x(x, s, i, mem_coef(st[i] + pb->inflight[s] * ac[i], R));
        if (x->has_peak)
            acc_add(x, x->col_y0 + s, 1.0);
        row_end(x, lp, -HUGE_VAL, R > 0 ? 1.0 : 0.0);
        if (x->has_peak) {
            const double *pk = coef_row(pb->peak_bytes, x, s);
            for (int i = 0; i < x->L && !x->bad; i++) {
                double c = mem_coef(pk[i], R);
                if (c < ILP_DROP)
                    continue;
                row_begin(x, ILP_DROP);
                add_x(x, s, i, c);
                acc_add(x, x->col_y0 + s, -1.0);
                row_end(x, lp, -HUGE_VAL, 0.0);
            }
        }
    }
}

/* ILP only: the layers per class, and the objective B + w sum_s time(s)
 * (constants dropped). */
static void build_ilp_extras(ilp_ctx *x, glp_prob *lp)
{
    const partition_problem *pb = x->pb;
    if (pb->class_layer_cap != NULL)
        for (int k = 0; k < x->K && !x->bad; k++) {
            if (pb->class_layer_cap[k] < 0)
                continue;
            row_begin(x, 0);
            for (int s = 0; s < x->P; s++)
                if (pb->stage_class[s] == k)
                    for (int i = 0; i < x->L; i++)
                        add_x(x, s, i, 1.0);
            row_end(x, lp, -HUGE_VAL, pb->class_layer_cap[k]);
        }
    if (pb->fill_weight > 0 && !x->bad) {
        row_begin(x, x->tdrop * pb->fill_weight);
        for (int s = 0; s < x->P; s++) {
            const double *t = coef_row(pb->time_s, x, s);
            for (int i = 0; i < x->L; i++)
                add_x(x, s, i, pb->fill_weight * time_coef(x, t[i]));
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

/* Builds rows, columns and objective into lp. */
static void build(ilp_ctx *x, glp_prob *lp)
{
    build_columns(x, lp);
    if (x->bad)
        return;
    build_shape(x, lp);
    build_time_rows(x, lp);
    build_memory_rows(x, lp);
    build_ilp_extras(x, lp);
}

/* The time rows' unit: the largest layer time (on a class that has a
 * stage, clipped as time_coef() does) x L / P, at most 1e3 x the lower
 * bound below (GLPK's branch and cut is fastest on this scale: on the
 * bench's 1,024-GPU case, 2.8 s in all, 12 s in units of the bottleneck's
 * lower bound); and the threshold below which a time coefficient is
 * dropped: 1e-12 of a lower bound on the bottleneck (the DP's optimum,
 * bottleneck_lb, the largest fixed time and sum_i (layer i's least time on
 * a class that has a stage) / P, whichever is largest), so what is dropped
 * moves the bottleneck by less than 4096 x 1e-12 of itself. */
static void set_time_scale(ilp_ctx *x)
{
    const partition_problem *pb = x->pb;
    double most = 0, lb = x->lb > pb->bottleneck_lb ? x->lb : pb->bottleneck_lb, total = 0;
    for (int i = 0; i < x->L; i++) {
        double least = HUGE_VAL;
        for (int s = 0; s < x->P; s++) {
            double t = pb->time_s[(size_t)pb->stage_class[s] * (size_t)x->L + (size_t)i];
            if (t < least)
                least = t;
            if (t > most)
                most = t;
        }
        total += least;
    }
    if (most > 2 * x->ub)
        most = 2 * x->ub;
    x->tscale = most > 0 ? most * x->L / x->P : 1.0;
    if (total / x->P > lb)
        lb = total / x->P;
    for (int s = 0; s < x->P; s++)
        if (pb->fixed_time_s[s] > lb)
            lb = pb->fixed_time_s[s];
    /* a layer far slower on one class than on others must not shrink the
     * others to nothing: the unit is at most 1e3 x the bound */
    if (lb > 0 && x->tscale > 1e3 * lb)
        x->tscale = 1e3 * lb;
    /* a bound of 0 (all least times 0): relative to the unit */
    x->tdrop = ILP_DROP * (lb > 0 ? lb / x->tscale : 1.0);
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

/* The exact check of a split read back from GLPK: min_layers per stage,
 * L covered, every stage fits (partition_measure(), the DP's own sums),
 * class caps hold.  True when it passes. */
static bool split_holds(const ilp_ctx *x, const int *n_layers)
{
    const partition_problem *pb = x->pb;
    bool fits;
    int sum = 0;
    for (int s = 0; s < x->P; s++) {
        if (n_layers[s] < x->ml)
            return false;
        sum += n_layers[s];
    }
    if (sum != x->L)
        return false;
    (void)partition_measure(pb, n_layers, &fits);
    if (!fits)
        return false;
    if (pb->class_layer_cap != NULL)
        for (int k = 0; k < x->K; k++) {
            int n = 0;
            for (int s = 0; s < x->P; s++)
                if (pb->stage_class[s] == k)
                    n += n_layers[s];
            if (pb->class_layer_cap[k] >= 0 && n > pb->class_layer_cap[k])
                return false;
        }
    return true;
}

/* Builds and solves the program (after setjmp: GLPK errors longjmp out). */
static partition_status solve(ilp_ctx *x, partition_result *out)
{
    const partition_problem *pb = x->pb;
    partition_status st = PARTITION_OK;
    glp_prob *lp;
    glp_iocp parm;
    double left_s;
    int ret, mst;

    glp_error_hook(on_glpk_error, x);
    lp = glp_create_prob();
    build(x, lp);
    left_s = x->limit_s - (now_s() - x->t0);
    if (x->timed_out || (!x->bad && !(left_s > 0))) {
        glp_delete_prob(lp);
        return PARTITION_TIMEOUT;
    }
    if (x->bad) {
        glp_delete_prob(lp);
        return PARTITION_SOLVER_ERROR;
    }
    glp_init_iocp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_ON;
    parm.mip_gap = pb->mip_gap;
    parm.tm_lim = left_s * 1000 >= 2e9 ? 2000000000 : (int)ceil(left_s * 1000);
    if (parm.tm_lim < 1)
        parm.tm_lim = 1;
    ret = glp_intopt(lp, &parm);
    mst = glp_mip_status(lp);
    if (ret == GLP_ENOPFS || mst == GLP_NOFEAS) {
        st = PARTITION_INFEASIBLE;
    } else if (mst == GLP_OPT || mst == GLP_FEAS) {
        read_split(x, lp, out->n_layers);
        if (!split_holds(x, out->n_layers)) {
            st = PARTITION_SOLVER_ERROR;   /* GLPK's answer is not a valid split */
        } else {
            out->optimal = ret == 0 && mst == GLP_OPT;
            out->bottleneck_s = partition_measure(pb, out->n_layers, NULL);
            out->objective = objective_of(pb, out->n_layers);
            /* "optimal" but worse than the DP's valid split: GLPK is wrong */
            if (out->optimal && out->objective > x->ub * (1 + pb->mip_gap + 1e-6))
                st = PARTITION_SOLVER_ERROR;
        }
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

/* The context's sizes and column layout for pb (file comment). */
static void ctx_layout(ilp_ctx *x, const partition_problem *pb, double t0, double time_limit_s)
{
    x->pb = pb;
    x->t0 = t0;
    x->limit_s = time_limit_s;
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
}

/* The DP on the problem without the ILP-only extras (a relaxation): no
 * split there, none here; else its optimum bounds the bottleneck from
 * below, and when its split obeys the caps, its objective bounds the
 * optimum from above.  PARTITION_OK, or the status to return. */
static partition_status relaxed_bounds(ilp_ctx *x)
{
    partition_problem relaxed = *x->pb;
    partition_result r;
    partition_status sd;
    relaxed.class_layer_cap = NULL;
    relaxed.fill_weight = 0;
    sd = partition_dp(&relaxed, NULL, &r);
    if (sd != PARTITION_OK)
        return sd == PARTITION_INFEASIBLE || sd == PARTITION_NOMEM ? sd : PARTITION_SOLVER_ERROR;
    x->lb = r.bottleneck_s;
    x->ub = HUGE_VAL;
    x->ref_obeys_caps = split_holds(x, r.n_layers);
    if (x->ref_obeys_caps)
        x->ub = objective_of(x->pb, r.n_layers);
    return PARTITION_OK;
}

/* The row accumulators, one slot per column.  0, or -1 when out of memory. */
static int ctx_alloc(ilp_ctx *x)
{
    size_t n = (size_t)x->n_cols + 1;
    x->acc = pl_calloc(n, sizeof *x->acc);
    x->val = pl_calloc(n, sizeof *x->val);
    x->touched = pl_calloc(n, sizeof *x->touched);
    x->mark = pl_calloc(n, sizeof *x->mark);
    x->ind = pl_calloc(n, sizeof *x->ind);
    return x->acc == NULL || x->val == NULL || x->touched == NULL || x->mark == NULL ||
                   x->ind == NULL
               ? -1
               : 0;
}

partition_status partition_ilp(const partition_problem *pb, double time_limit_s,
                               partition_result *out)
{
    ilp_ctx *x;
    volatile partition_status st = PARTITION_OK;

    double t0 = now_s();

    memset(out, 0, sizeof *out);
    if (partition_validate(pb, NULL) != PLANNER_OK || !(time_limit_s > 0)) {
        out->status = PARTITION_INVALID;
        return PARTITION_INVALID;
    }
    if (pb->lead_layers > 0) {   /* position-dependent costs: the DP's (partition.h) */
        out->status = PARTITION_UNSUPPORTED;
        return PARTITION_UNSUPPORTED;
    }
    if (pb->n_stages == 1)
        return one_stage(pb, out);
    /* a stage whose fixed bytes alone exceed its capacity never fits */
    for (int s = 0; s < pb->n_stages; s++)
        if (pb->fixed_bytes[s] > pb->capacity_bytes[s]) {
            out->status = PARTITION_INFEASIBLE;
            return PARTITION_INFEASIBLE;
        }
    x = pl_calloc(1, sizeof *x);
    if (x == NULL) {
        out->status = PARTITION_NOMEM;
        return PARTITION_NOMEM;
    }
    ctx_layout(x, pb, t0, time_limit_s);
    if ((st = relaxed_bounds(x)) != PARTITION_OK)
        goto cleanup;
    /* time unit and threshold (file comment) */
    set_time_scale(x);
    if (ctx_alloc(x) != 0) {
        st = PARTITION_NOMEM;
        goto cleanup;
    }

    glp_term_out(GLP_OFF);
    glp_term_hook(on_glpk_output, NULL);
    if (setjmp(x->jb) == 0)
        st = solve(x, out);
    else
        st = PARTITION_SOLVER_ERROR;
    /* frees whatever GLPK holds, after an error too; the hooks go with it */
    glp_error_hook(NULL, NULL);
    glp_term_hook(NULL, NULL);
    glp_free_env();
    if (st == PARTITION_INFEASIBLE && x->ref_obeys_caps)
        st = PARTITION_SOLVER_ERROR;   /* the DP's split refutes it */
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
