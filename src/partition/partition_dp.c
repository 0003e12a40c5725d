/* partition_dp.c: contiguous layers to pipeline stages by an exact dynamic
 * program (the problem is stated in partition.h).
 *
 * f[s][j] = the least bottleneck that places layers [0, j) on stages 0..s:
 *     f[0][j] = time(0, 0, j)                      if bytes(0, 0, j) fits
 *     f[s][j] = min over i of max(f[s-1][i], time(s, i, j))
 *               over the i with bytes(s, i, j) fitting,
 * the answer is f[P-1][L].  For each end j the scan over the start i runs
 * from the shortest range to longer ones, adding layer i to running sums of
 * time, state and activation bytes (and a running maximum of the transient
 * peak), so each (s, i, j) is O(1).  The sums are taken directly, from layer
 * j - 1 down to i, never as differences of prefix sums: with coefficients
 * of 1e30 next to 1e9 (partition.h's range) prefix differences cancel
 * (1e30 + 5e9 - 1e30 = 0) and a stage that does not fit looked as if it
 * did.  partition_stage_time/bytes() sum in the same order with the same
 * expression, so the DP's verdict on a range is bit for bit the one
 * partition_measure() gives.  Because every coefficient is >= 0 a longer
 * range is never faster nor smaller, so the scan stops at the first range
 * that is too big or already no better than the best found: in practice
 * O(L x range) per stage instead of O(L^2).  The least time of a range
 * memory stopped is kept (partition_result.cut_time_s): when it is no less
 * than the optimum B, the DP without capacities has the optimum B too (by
 * induction over the stages, min(f[s][j], B) is the same in both: a range
 * only memory refuses, and every longer one, takes at least B).  Ties keep the first found,
 * i.e. the latest start (later stages shorter).
 * Invariants: every coefficient passed partition_validate(); the DP's
 * optimum equals the ILP's on the same problem (tests/test_partition.c
 * checks it on random instances).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "partition/partition.h"

const char *partition_status_name(partition_status st)
{
    switch (st) {
    case PARTITION_OK: return "ok";
    case PARTITION_INFEASIBLE: return "infeasible";
    case PARTITION_TIMEOUT: return "time limit reached without a solution";
    case PARTITION_INVALID: return "invalid problem";
    case PARTITION_UNSUPPORTED: return "constraint not supported by the DP";
    case PARTITION_NOMEM: return "out of memory";
    case PARTITION_SOLVER_ERROR: return "solver error";
    case PARTITION_LIMIT: return "work limit reached";
    }
    return "unknown";
}

void partition_ws_free(partition_ws *ws)
{
    if (ws == NULL)
        return;
    pl_free(ws->buf);
    pl_free(ws->arg);
    ws->buf = NULL;
    ws->arg = NULL;
    ws->cap = ws->arg_cap = 0;
}

static int min_layers_of(const partition_problem *pb)
{
    return pb->min_layers > 0 ? pb->min_layers : 1;
}

/* partition.h's valid range: finite, 0 or within [COEF_MIN, COEF_MAX]. */
static bool good_value(double v)
{
    return v == 0 || (v >= PARTITION_COEF_MIN && v <= PARTITION_COEF_MAX);
}

#define FAIL(...) return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL, __VA_ARGS__)

planner_status partition_validate(const partition_problem *pb, planner_error *err)
{
    int L, P, K, ml;
    if (pb == NULL)
        FAIL("no problem");
    L = pb->n_layers;
    P = pb->n_stages;
    K = pb->n_classes;
    ml = min_layers_of(pb);
    if (L < 1 || L > PARTITION_MAX_LAYERS)
        FAIL("layers %d outside 1..%d", L, PARTITION_MAX_LAYERS);
    if (P < 1 || P > PARTITION_MAX_STAGES)
        FAIL("stages %d outside 1..%d", P, PARTITION_MAX_STAGES);
    if (pb->min_layers < 0 || (long)P * ml > L)
        FAIL("%d stages of at least %d layers do not fit %d layers", P, ml, L);
    if (K < 1 || K > PARTITION_MAX_STAGES)
        FAIL("classes %d outside 1..%d", K, PARTITION_MAX_STAGES);
    if (pb->stage_class == NULL || pb->time_s == NULL || pb->state_bytes == NULL ||
        pb->act_bytes == NULL || pb->fixed_time_s == NULL || pb->fixed_bytes == NULL ||
        pb->inflight == NULL || pb->capacity_bytes == NULL)
        FAIL("missing array");
    for (int s = 0; s < P; s++) {
        if (pb->stage_class[s] < 0 || pb->stage_class[s] >= K)
            FAIL("stage %d: class %d outside 0..%d", s, pb->stage_class[s], K - 1);
        if (!good_value(pb->fixed_time_s[s]) || !good_value(pb->fixed_bytes[s]) ||
            !good_value(pb->inflight[s]))
            FAIL("stage %d: a fixed cost is outside 0 or [%g, %g]", s, PARTITION_COEF_MIN,
                 PARTITION_COEF_MAX);
        if (pb->capacity_bytes[s] != HUGE_VAL && !good_value(pb->capacity_bytes[s]))
            FAIL("stage %d: capacity is outside 0, [%g, %g] or HUGE_VAL", s,
                 PARTITION_COEF_MIN, PARTITION_COEF_MAX);
    }
    for (long i = 0; i < (long)K * L; i++) {
        if (!good_value(pb->time_s[i]) || !good_value(pb->state_bytes[i]) ||
            !good_value(pb->act_bytes[i]) ||
            (pb->peak_bytes != NULL && !good_value(pb->peak_bytes[i])))
            FAIL("class %ld layer %ld: a cost is outside 0 or [%g, %g]", i / L, i % L,
                 PARTITION_COEF_MIN, PARTITION_COEF_MAX);
    }
    if (pb->lead_layers < 0 || pb->lead_layers > L)
        FAIL("leading layers %d outside 0..%d", pb->lead_layers, L);
    if (pb->lead_layers > 0 && (pb->lead_time_s == NULL || pb->lead_act_bytes == NULL ||
                                pb->lead_peak_bytes == NULL || pb->freed_bytes == NULL))
        FAIL("missing leading-layer array");
    for (long i = 0; pb->lead_layers > 0 && i < (long)K * L; i++)
        if (!good_value(pb->lead_time_s[i]) || !good_value(pb->lead_act_bytes[i]) ||
            !good_value(pb->lead_peak_bytes[i]) || !good_value(pb->freed_bytes[i]))
            FAIL("class %ld layer %ld: a leading-layer cost is outside 0 or [%g, %g]", i / L,
                 i % L, PARTITION_COEF_MIN, PARTITION_COEF_MAX);
    if (pb->class_layer_cap != NULL)
        for (int k = 0; k < K; k++)
            if (pb->class_layer_cap[k] > L)
                FAIL("class %d: layer cap %d exceeds %d layers", k, pb->class_layer_cap[k], L);
    if (!good_value(pb->fill_weight) || !good_value(pb->bottleneck_lb))
        FAIL("fill weight or bottleneck bound is outside 0 or [%g, %g]", PARTITION_COEF_MIN,
             PARTITION_COEF_MAX);
    if (!(pb->mip_gap >= 0 && pb->mip_gap <= 1))
        FAIL("gap %g is outside [0, 1]", pb->mip_gap);
    return PLANNER_OK;
}

#undef FAIL

/* The sums of a stage with leading layers (partition.h), each from its
 * range's last layer down to its first: the rest [first + N, first + n)
 * and the leading [first, first + min(n, N)), in dp_row_lead()'s order. */
typedef struct lead_sums {
    double time, act, peak, freed, peak_rest;           /* the rest's */
    double lead_time, lead_act, lead_peak;              /* the leading layers' */
} lead_sums;

static void lead_range(const partition_problem *pb, size_t off, int first, int n, lead_sums *o)
{
    int nl = n < pb->lead_layers ? n : pb->lead_layers;
    memset(o, 0, sizeof *o);
    for (int i = first + n - 1; i >= first + nl; i--) {
        o->time += pb->time_s[off + (size_t)i];
        o->act += pb->act_bytes[off + (size_t)i];
        o->freed += pb->freed_bytes[off + (size_t)i];
        if (pb->peak_bytes != NULL && pb->peak_bytes[off + (size_t)i] > o->peak_rest)
            o->peak_rest = pb->peak_bytes[off + (size_t)i];
    }
    for (int i = first + nl - 1; i >= first; i--) {
        o->lead_time += pb->lead_time_s[off + (size_t)i];
        o->lead_act += pb->lead_act_bytes[off + (size_t)i];
        if (pb->lead_peak_bytes[off + (size_t)i] > o->lead_peak)
            o->lead_peak = pb->lead_peak_bytes[off + (size_t)i];
    }
    o->peak = n <= pb->lead_layers ? o->lead_peak
                                   : fmax(o->lead_peak - o->freed, o->peak_rest);
}

/* Both sum from the range's last layer down to its first and combine the
 * sums with the fixed costs in the expression partition_dp() uses. */
double partition_stage_time(const partition_problem *pb, int s, int first, int n)
{
    const double *t = pb->time_s + (size_t)pb->stage_class[s] * (size_t)pb->n_layers;
    double sum = 0;
    if (pb->lead_layers > 0) {
        lead_sums ls;
        lead_range(pb, (size_t)pb->stage_class[s] * (size_t)pb->n_layers, first, n, &ls);
        return pb->fixed_time_s[s] + (ls.time + ls.lead_time);
    }
    for (int i = first + n - 1; i >= first; i--)
        sum += t[i];
    return pb->fixed_time_s[s] + sum;
}

double partition_stage_bytes(const partition_problem *pb, int s, int first, int n)
{
    size_t off = (size_t)pb->stage_class[s] * (size_t)pb->n_layers;
    double state = 0, act = 0, peak = 0;
    if (pb->lead_layers > 0) {
        lead_sums ls;
        for (int i = first + n - 1; i >= first; i--)
            state += pb->state_bytes[off + (size_t)i];
        lead_range(pb, off, first, n, &ls);
        return pb->fixed_bytes[s] + state + pb->inflight[s] * (ls.act + ls.lead_act) + ls.peak;
    }
    for (int i = first + n - 1; i >= first; i--) {
        state += pb->state_bytes[off + (size_t)i];
        act += pb->act_bytes[off + (size_t)i];
        if (pb->peak_bytes != NULL && pb->peak_bytes[off + (size_t)i] > peak)
            peak = pb->peak_bytes[off + (size_t)i];
    }
    return pb->fixed_bytes[s] + state + pb->inflight[s] * act + peak;
}

double partition_measure(const partition_problem *pb, const int *n_layers, bool *fits)
{
    double worst = 0;
    bool ok = true;
    int first = 0;
    for (int s = 0; s < pb->n_stages; s++) {
        double t = partition_stage_time(pb, s, first, n_layers[s]);
        if (t > worst)
            worst = t;
        if (n_layers[s] < 1 ||
            partition_stage_bytes(pb, s, first, n_layers[s]) > pb->capacity_bytes[s])
            ok = false;
        first += n_layers[s];
    }
    if (first != pb->n_layers)
        ok = false;
    if (fits != NULL)
        *fits = ok;
    return worst;
}

/* Grows the workspace to hold `doubles` doubles and `ints` ints. */
static int ws_reserve(partition_ws *ws, size_t doubles, size_t ints)
{
    if (ws->cap < doubles) {
        double *b = pl_realloc(ws->buf, doubles * sizeof *b);
        if (b == NULL)
            return -1;
        ws->buf = b;
        ws->cap = doubles;
    }
    if (ws->arg_cap < ints) {
        int *a = pl_realloc(ws->arg, ints * sizeof *a);
        if (a == NULL)
            return -1;
        ws->arg = a;
        ws->arg_cap = ints;
    }
    return 0;
}

/* Row s of the dynamic program as dp_row() and dp_row_lead() fill it: its
 * values and arguments (fs, as), the row before (fp; NULL for stage 0), and
 * the ends j it tries, [jlo, jhi] (every stage at least ml layers; the last
 * stage only the whole model).  Starts with nothing placed (HUGE_VAL, arg
 * -1). */
typedef struct dp_row_frame {
    double *fs;
    const double *fp;
    int *as;
    int jlo, jhi;
} dp_row_frame;

static dp_row_frame row_frame(const partition_problem *pb, int s, int ml, size_t row,
                              partition_ws *ws)
{
    const int L = pb->n_layers, P = pb->n_stages;
    dp_row_frame f = {ws->buf + (size_t)s * row, s > 0 ? ws->buf + (size_t)(s - 1) * row : NULL,
                      ws->arg + (size_t)s * row, (s + 1) * ml, L - (P - 1 - s) * ml};
    for (int j = 0; j <= L; j++) {
        f.fs[j] = HUGE_VAL;
        f.as[j] = -1;
    }
    if (s == P - 1)
        f.jlo = L;
    return f;
}

/* The starts of stage s's ranges ending at j, [*ilo, *ihi] (every stage
 * at least ml layers; stage 0 from layer 0): 1 when there are some, 0 when
 * none, -1 when the workspace's step limit is past. */
static int range_starts(const partition_ws *ws, int s, int ml, int j, int *ilo, int *ihi)
{
    *ilo = s == 0 ? 0 : s * ml;
    *ihi = s == 0 ? 0 : j - ml;
    if (*ihi < *ilo)
        return 0;
    return ws->step_limit > 0 && ws->steps > ws->step_limit ? -1 : 1;
}

/* Offers the range [i, j) of time t and `bytes` to stage s (fp: row s - 1,
 * NULL for s 0): false when memory refuses it, which ends the scan (*cut_s
 * lowered to t); else max(fp[i], t) kept in *best, *bi when lower. */
static bool offer(double t, double bytes, double cap, const double *fp, int i, double *best,
                  int *bi, double *cut_s)
{
    double v;
    if (bytes > cap) {
        if (t < *cut_s)
            *cut_s = t;
        return false;
    }
    v = fp == NULL ? t : (fp[i] > t ? fp[i] : t);
    if (v < *best) {
        *best = v;
        *bi = i;
    }
    return true;
}

/* Row s of the dynamic program: f[s][j] = the least bottleneck of the
 * layers [0, j) on stages 0..s, stage s holding [i, j) (its best i in
 * arg[s][j]), from row s - 1; HUGE_VAL (arg -1) where nothing fits.  Rows
 * are `row` = L + 1 wide; every stage holds at least ml layers.  Counts
 * its inner steps in ws->steps: PARTITION_LIMIT once past ws->step_limit
 * (when > 0), else PARTITION_OK.  Lowers *cut_s to the time of a range
 * memory refuses. */
static partition_status dp_row(const partition_problem *pb, int s, int ml, size_t row,
                               partition_ws *ws, double *cut_s)
{
    const int L = pb->n_layers;
    const size_t o = (size_t)pb->stage_class[s] * (size_t)L;
    const double *tt = pb->time_s + o, *sb = pb->state_bytes + o, *ab = pb->act_bytes + o;
    const double *peak = pb->peak_bytes != NULL ? pb->peak_bytes + o : NULL;
    const double ft = pb->fixed_time_s[s], fb = pb->fixed_bytes[s];
    const double inf = pb->inflight[s], cap = pb->capacity_bytes[s];
    const dp_row_frame f = row_frame(pb, s, ml, row, ws);

    for (int j = f.jlo; j <= f.jhi; j++) {
        /* sums over [i, j), grown one layer at a time as i decreases,
         * in partition_stage_time/bytes()'s order */
        double best = HUGE_VAL, tsum = 0, ssum = 0, asum = 0, runmax = 0;
        int bi = -1, ilo, ihi, go = range_starts(ws, s, ml, j, &ilo, &ihi);
        if (go < 0)
            return PARTITION_LIMIT;
        if (go == 0)
            continue;
        for (int i = j - 1; i >= ilo; i--) {
            double t, bytes;
            ws->steps++;
            tsum += tt[i];
            ssum += sb[i];
            asum += ab[i];
            if (peak != NULL && peak[i] > runmax)
                runmax = peak[i];
            if (i > ihi)
                continue;   /* shorter than min_layers */
            t = ft + tsum;
            if (t >= best)
                break;
            bytes = fb + ssum + inf * asum + runmax;
            if (!offer(t, bytes, cap, f.fp, i, &best, &bi, cut_s))
                break;
        }
        f.fs[j] = best;
        f.as[j] = bi;
    }
    return PARTITION_OK;
}

/* The leading windows of class offset o: for each start i with i + N <= L,
 * the time, act and largest peak of layers [i, i + N) on leading costs,
 * summed from i + N - 1 down to i (lead_range()'s order). */
static void lead_windows(const partition_problem *pb, size_t o, double *wt, double *wa,
                         double *wp)
{
    const int L = pb->n_layers, N = pb->lead_layers;
    for (int i = 0; i + N <= L; i++) {
        double t = 0, a = 0, p = 0;
        for (int x = i + N - 1; x >= i; x--) {
            t += pb->lead_time_s[o + (size_t)x];
            a += pb->lead_act_bytes[o + (size_t)x];
            if (pb->lead_peak_bytes[o + (size_t)x] > p)
                p = pb->lead_peak_bytes[o + (size_t)x];
        }
        wt[i] = t;
        wa[i] = a;
        wp[i] = p;
    }
}

/* dp_row() for a problem with leading layers (partition.h): over [i, j)
 * the rest [i + N, j) grows by layer i + N as i falls, in
 * partition_stage_time/bytes()'s order; the leading layers are the running
 * sums while j - i <= N, then the window at i (lead_windows, into the 3 L
 * doubles at `win`).  The same early stops as dp_row(). */
static partition_status dp_row_lead(const partition_problem *pb, int s, int ml, size_t row,
                                    partition_ws *ws, double *win, double *cut_s)
{
    const int L = pb->n_layers, N = pb->lead_layers;
    const size_t o = (size_t)pb->stage_class[s] * (size_t)L;
    const double *tt = pb->time_s + o, *sb = pb->state_bytes + o, *ab = pb->act_bytes + o;
    const double *peak = pb->peak_bytes != NULL ? pb->peak_bytes + o : NULL;
    const double *lt = pb->lead_time_s + o, *la = pb->lead_act_bytes + o;
    const double *lp = pb->lead_peak_bytes + o, *fr = pb->freed_bytes + o;
    const double ft = pb->fixed_time_s[s], fb = pb->fixed_bytes[s];
    const double inf = pb->inflight[s], cap = pb->capacity_bytes[s];
    double *wt = win, *wa = win + L, *wp = win + 2 * L;
    const dp_row_frame f = row_frame(pb, s, ml, row, ws);

    lead_windows(pb, o, wt, wa, wp);
    for (int j = f.jlo; j <= f.jhi; j++) {
        double best = HUGE_VAL, tsum = 0, ssum = 0, asum = 0, fsum = 0, kmax = 0;
        double lsum = 0, lasum = 0, lpmax = 0;
        int bi = -1, ilo, ihi, go = range_starts(ws, s, ml, j, &ilo, &ihi);
        if (go < 0)
            return PARTITION_LIMIT;
        if (go == 0)
            continue;
        for (int i = j - 1; i >= ilo; i--) {
            bool lead = j - i <= N;
            double t, bytes;
            ws->steps++;
            ssum += sb[i];
            if (lead) {
                lsum += lt[i];
                lasum += la[i];
                lpmax = lp[i] > lpmax ? lp[i] : lpmax;
            } else {
                tsum += tt[i + N];
                asum += ab[i + N];
                fsum += fr[i + N];
                if (peak != NULL && peak[i + N] > kmax)
                    kmax = peak[i + N];
            }
            if (i > ihi)
                continue;   /* shorter than min_layers */
            t = ft + (tsum + (lead ? lsum : wt[i]));
            if (t >= best)
                break;
            bytes = fb + ssum + inf * (asum + (lead ? lasum : wa[i])) +
                    (lead ? lpmax : fmax(wp[i] - fsum, kmax));
            if (!offer(t, bytes, cap, f.fp, i, &best, &bi, cut_s))
                break;
        }
        f.fs[j] = best;
        f.as[j] = bi;
    }
    return PARTITION_OK;
}

/* Whether pb sets a constraint or objective only the ILP takes. */
static bool ilp_only(const partition_problem *pb)
{
    if (pb->fill_weight > 0)
        return true;
    for (int k = 0; pb->class_layer_cap != NULL && k < pb->n_classes; k++)
        if (pb->class_layer_cap[k] >= 0)
            return true;
    return false;
}

partition_status partition_dp(const partition_problem *pb, partition_ws *ws,
                              partition_result *out)
{
    partition_ws local = {NULL, 0, NULL, 0, 0, 0};
    partition_status st = PARTITION_OK;
    int L, P, ml;
    size_t row;

    memset(out, 0, sizeof *out);
    if (partition_validate(pb, NULL) != PLANNER_OK) {
        out->status = PARTITION_INVALID;
        return PARTITION_INVALID;
    }
    if (ilp_only(pb)) {
        out->status = PARTITION_UNSUPPORTED;
        return PARTITION_UNSUPPORTED;
    }
    L = pb->n_layers;
    P = pb->n_stages;
    ml = min_layers_of(pb);
    row = (size_t)L + 1;
    if (ws == NULL)
        ws = &local;
    if (ws_reserve(ws, row * (size_t)P + (pb->lead_layers > 0 ? 3 * (size_t)L : 0),
                   row * (size_t)P) != 0) {
        st = PARTITION_NOMEM;
        goto cleanup;
    }
    out->cut_time_s = HUGE_VAL;
    for (int s = 0; s < P && st == PARTITION_OK; s++)
        st = pb->lead_layers > 0
                 ? dp_row_lead(pb, s, ml, row, ws, ws->buf + row * (size_t)P, &out->cut_time_s)
                 : dp_row(pb, s, ml, row, ws, &out->cut_time_s);
    if (st != PARTITION_OK)
        goto cleanup;
    if (!isfinite(ws->buf[(size_t)(P - 1) * row + (size_t)L])) {
        st = PARTITION_INFEASIBLE;
        goto cleanup;
    }
    for (int s = P - 1, j = L; s >= 0; s--) {   /* the split, from the last stage */
        int i = ws->arg[(size_t)s * row + (size_t)j];
        out->n_layers[s] = j - i;
        j = i;
    }
    out->bottleneck_s = partition_measure(pb, out->n_layers, NULL);
    out->objective = out->bottleneck_s;
    out->optimal = true;
cleanup:
    partition_ws_free(&local);
    out->status = st;
    return st;
}
