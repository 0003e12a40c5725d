/* partition_dp.c: contiguous layers to pipeline stages by an exact dynamic
 * program (the problem is stated in partition.h).
 *
 * f[s][j] = the least bottleneck that places layers [0, j) on stages 0..s:
 *     f[0][j] = time(0, 0, j)                      if bytes(0, 0, j) fits
 *     f[s][j] = min over i of max(f[s-1][i], time(s, i, j))
 *               over the i with bytes(s, i, j) fitting,
 * the answer is f[P-1][L].  Stage costs come from per-class prefix sums (a
 * running maximum for the transient peak), so each (s, i, j) is O(1).  The
 * scan over i runs from the shortest range to longer ones; because every
 * coefficient is >= 0 a longer range is never faster nor smaller, so the
 * scan stops at the first range that is too big or already no better than
 * the best found: in practice O(L x range) per stage instead of O(L^2).
 * Ties keep the first found, i.e. the latest start (later stages shorter).
 * Invariant: the DP's optimum equals the ILP's on the same problem
 * (tests/test_partition.c checks it on random instances).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "alloc.h"
#include "partition.h"

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

static bool good_value(double v)
{
    return isfinite(v) && v >= 0;
}

#define FAIL(...) do { snprintf(why, (size_t)why_size, __VA_ARGS__); return -1; } while (0)

int partition_validate(const partition_problem *pb, char *why, int why_size)
{
    int L, P, K, ml;
    if (why_size > 0)
        why[0] = '\0';
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
            FAIL("stage %d: a fixed cost is negative or not finite", s);
        if (isnan(pb->capacity_bytes[s]) || pb->capacity_bytes[s] < 0)
            FAIL("stage %d: capacity is negative or NaN", s);
    }
    for (long i = 0; i < (long)K * L; i++) {
        if (!good_value(pb->time_s[i]) || !good_value(pb->state_bytes[i]) ||
            !good_value(pb->act_bytes[i]) ||
            (pb->peak_bytes != NULL && !good_value(pb->peak_bytes[i])))
            FAIL("class %ld layer %ld: a cost is negative or not finite", i / L, i % L);
    }
    if (pb->class_layer_cap != NULL)
        for (int k = 0; k < K; k++)
            if (pb->class_layer_cap[k] > L)
                FAIL("class %d: layer cap %d exceeds %d layers", k, pb->class_layer_cap[k], L);
    if (!good_value(pb->fill_weight) || !good_value(pb->bottleneck_lb) ||
        !good_value(pb->mip_gap))
        FAIL("fill weight, bottleneck bound or gap is negative or not finite");
    return 0;
}

double partition_stage_time(const partition_problem *pb, int s, int first, int n)
{
    const double *t = pb->time_s + (size_t)pb->stage_class[s] * (size_t)pb->n_layers;
    double sum = pb->fixed_time_s[s];
    for (int i = first; i < first + n; i++)
        sum += t[i];
    return sum;
}

double partition_stage_bytes(const partition_problem *pb, int s, int first, int n)
{
    size_t off = (size_t)pb->stage_class[s] * (size_t)pb->n_layers;
    double state = 0, act = 0, peak = 0;
    for (int i = first; i < first + n; i++) {
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

partition_status partition_dp(const partition_problem *pb, partition_ws *ws,
                              partition_result *out)
{
    partition_ws local = {NULL, 0, NULL, 0};
    partition_status st = PARTITION_OK;
    char why[160];
    int L, P, K, ml;
    size_t row;
    double *pt, *ps, *pa, *f;
    int *arg;

    memset(out, 0, sizeof *out);
    if (partition_validate(pb, why, sizeof why) != 0) {
        out->status = PARTITION_INVALID;
        return PARTITION_INVALID;
    }
    if (pb->fill_weight > 0)
        goto unsupported;
    for (int k = 0; pb->class_layer_cap != NULL && k < pb->n_classes; k++)
        if (pb->class_layer_cap[k] >= 0)
            goto unsupported;
    L = pb->n_layers;
    P = pb->n_stages;
    K = pb->n_classes;
    ml = min_layers_of(pb);
    row = (size_t)L + 1;
    if (ws == NULL)
        ws = &local;
    if (ws_reserve(ws, row * (3 * (size_t)K + (size_t)P), row * (size_t)P) != 0) {
        st = PARTITION_NOMEM;
        goto cleanup;
    }
    pt = ws->buf;
    ps = pt + row * (size_t)K;
    pa = ps + row * (size_t)K;
    f = pa + row * (size_t)K;
    arg = ws->arg;

    /* prefix sums per class */
    for (int k = 0; k < K; k++) {
        const size_t o = (size_t)k * (size_t)L, r = (size_t)k * row;
        pt[r] = ps[r] = pa[r] = 0;
        for (int i = 0; i < L; i++) {
            pt[r + (size_t)i + 1] = pt[r + (size_t)i] + pb->time_s[o + (size_t)i];
            ps[r + (size_t)i + 1] = ps[r + (size_t)i] + pb->state_bytes[o + (size_t)i];
            pa[r + (size_t)i + 1] = pa[r + (size_t)i] + pb->act_bytes[o + (size_t)i];
        }
    }

    for (int s = 0; s < P; s++) {
        const int k = pb->stage_class[s];
        const size_t r = (size_t)k * row, o = (size_t)k * (size_t)L;
        const double *peak = pb->peak_bytes != NULL ? pb->peak_bytes + o : NULL;
        const double ft = pb->fixed_time_s[s], fb = pb->fixed_bytes[s];
        const double inf = pb->inflight[s], cap = pb->capacity_bytes[s];
        double *fs = f + (size_t)s * row;
        const double *fp = s > 0 ? f + (size_t)(s - 1) * row : NULL;
        int *as = arg + (size_t)s * row;
        int jlo = (s + 1) * ml, jhi = L - (P - 1 - s) * ml;

        for (int j = 0; j <= L; j++) {
            fs[j] = HUGE_VAL;
            as[j] = -1;
        }
        if (s == P - 1)
            jlo = L;   /* only the whole model matters for the last stage */
        for (int j = jlo; j <= jhi; j++) {
            double best = HUGE_VAL, runmax = 0;
            int bi = -1, ilo = s * ml, ihi = j - ml;
            if (s == 0)
                ilo = ihi = 0;
            if (ihi < ilo)
                continue;
            if (peak != NULL)
                for (int q = ihi; q < j; q++)
                    if (peak[q] > runmax)
                        runmax = peak[q];
            for (int i = ihi; i >= ilo; i--) {
                double t, bytes, v;
                if (peak != NULL && i < ihi && peak[i] > runmax)
                    runmax = peak[i];
                t = ft + (pt[r + (size_t)j] - pt[r + (size_t)i]);
                if (t >= best)
                    break;
                bytes = fb + (ps[r + (size_t)j] - ps[r + (size_t)i]) +
                        inf * (pa[r + (size_t)j] - pa[r + (size_t)i]) + runmax;
                if (bytes > cap)
                    break;
                v = s == 0 ? t : (fp[i] > t ? fp[i] : t);
                if (v < best) {
                    best = v;
                    bi = i;
                }
            }
            fs[j] = best;
            as[j] = bi;
        }
    }

    if (!isfinite(f[(size_t)(P - 1) * row + (size_t)L])) {
        st = PARTITION_INFEASIBLE;
        goto cleanup;
    }
    {
        int j = L;
        for (int s = P - 1; s >= 0; s--) {
            int i = arg[(size_t)s * row + (size_t)j];
            out->n_layers[s] = j - i;
            j = i;
        }
    }
    out->bottleneck_s = partition_measure(pb, out->n_layers, NULL);
    out->objective = out->bottleneck_s;
    out->optimal = true;
cleanup:
    partition_ws_free(&local);
    out->status = st;
    return st;

unsupported:
    out->status = PARTITION_UNSUPPORTED;
    return PARTITION_UNSUPPORTED;
}
