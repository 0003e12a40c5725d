/* pipeline.c: 1F1B and interleaved pipeline schedules, simulated event by
 * event over the real per-stage times.
 *
 * Megatron's schedules (core/pipeline_parallel/schedules.py): every rank runs
 * the same sequence of forward "virtual micro-batches" k = 0 .. m v - 1, in
 * groups of pp micro-batches: within a group all micro-batches of chunk 0,
 * then of chunk 1, ... (backwards: chunks in reverse).  Rank r first runs
 * warm = min((pp - r - 1) * 2 + (vpp - 1) * pp, m v) forwards (without
 * interleaving: min(pp - r - 1, m)), then alternates one forward and one
 * backward, then drains the remaining backwards.  An operation starts when
 * its rank is free and its input has arrived:
 *   F(mb, c) on rank r    after F(mb, c) on r - 1 plus the p2p time
 *                         (rank 0, c > 0: F(mb, c - 1) on rank pp - 1, wrap)
 *   B(mb, c) on rank r    after B(mb, c) on r + 1 plus the p2p time
 *                         (last rank: after its own F(mb, vpp - 1), or
 *                          B(mb, c + 1) on rank 0 plus the wrap time)
 * A chunk takes fwd_s[r] / vpp (bwd_s[r] / vpp).  With equal stages and no
 * p2p time this reproduces the closed forms: (m + pp - 1)(t_f + t_b) for
 * 1F1B, bubble (pp - 1)/(vpp m) interleaved.
 *
 * Many micro-batches: once the schedule is in its periodic steady state,
 * adding pp micro-batches adds a constant time, so without an event list we
 * simulate m1 = 2 pp + m % pp and m1 + pp micro-batches and extrapolate.
 * Invariant: every rank's operations complete in its own order; the
 * simulation needs one workspace of 2 pp m vpp doubles, on the stack when
 * it fits in SIM_STACK_DOUBLES, else allocated.
 */
#include <math.h>
#include <string.h>
#include "alloc.h"
#include "pipeline.h"
#include "strategy.h"

#define STRATEGY_MAX_STAGES_PIPE STRATEGY_MAX_STAGES
/* Workspace kept on the stack (256 KiB): pp <= 16 with any vpp <= 8 and
 * the steady-state extrapolation needs no allocation. */
#define SIM_STACK_DOUBLES 32768

void sched_events_free(sched_events *e)
{
    if (e == NULL)
        return;
    pl_free(e->ev);
    e->ev = NULL;
    e->n = e->cap = 0;
}

static int push_event(sched_events *e, sched_kind kind, int stage, int mb, int chunk,
                      double start, double end)
{
    if (e->n == e->cap) {
        int cap = e->cap > 0 ? 2 * e->cap : 256;
        sched_event *ev = pl_realloc(e->ev, (size_t)cap * sizeof *ev);
        if (ev == NULL)
            return -1;
        e->ev = ev;
        e->cap = cap;
    }
    e->ev[e->n++] = (sched_event){kind, stage, mb, chunk, start, end};
    return 0;
}

/* Position k of the forward (or backward) sequence -> micro-batch, chunk,
 * and the size of its group. */
static void seq_decode(int k, int pp, int vpp, int m, int backward, int *mb, int *chunk,
                       int *group_size)
{
    int g = k / (pp * vpp);
    int size = m - g * pp < pp ? m - g * pp : pp;
    int off = k - g * pp * vpp;
    int c = off / size;
    *mb = g * pp + off % size;
    *chunk = backward ? vpp - 1 - c : c;
    *group_size = size;
}

/* One full simulation; fend/bend hold pp * m * vpp doubles.  Returns the
 * makespan, -1 if out of memory, -2 if the schedule cannot proceed. */
static double simulate(int pp, int vpp, int m, const double *fwd_s, const double *bwd_s,
                       const double *p2p_s, double wrap_s, double *fend, double *bend,
                       double *rank_end, sched_events *out)
{
    int n = m * vpp, r, progress, done = 0;
    int jpos[STRATEGY_MAX_STAGES_PIPE];
    double freet[STRATEGY_MAX_STAGES_PIPE];
    double span = 0;

    for (r = 0; r < pp * n; r++)
        fend[r] = bend[r] = -1;
    for (r = 0; r < pp; r++) {
        jpos[r] = 0;
        freet[r] = 0;
    }
    do {
        progress = 0;
        for (r = 0; r < pp; r++) {
            int warm = vpp > 1 ? (pp - r - 1) * 2 + (vpp - 1) * pp : pp - r - 1;
            if (vpp > 1 && m == pp)   /* Megatron: all forwards first */
                warm = n;
            if (warm > n)
                warm = n;
            while (jpos[r] < 2 * n) {
                int j = jpos[r], isf, k, mb, chunk, gs;
                double dep = 0, dur, start;
                if (j < warm) {
                    isf = 1;
                    k = j;
                } else if (j < warm + 2 * (n - warm)) {
                    int q = j - warm;
                    isf = q % 2 == 0;
                    k = isf ? warm + q / 2 : q / 2;
                } else {
                    isf = 0;
                    k = (n - warm) + (j - warm - 2 * (n - warm));
                }
                seq_decode(k, pp, vpp, m, !isf, &mb, &chunk, &gs);
                if (isf) {
                    if (r > 0) {
                        if (fend[(r - 1) * n + k] < 0)
                            break;
                        dep = fend[(r - 1) * n + k] + p2p_s[r - 1];
                    } else if (chunk > 0) {
                        if (fend[(pp - 1) * n + k - gs] < 0)
                            break;
                        dep = fend[(pp - 1) * n + k - gs] + wrap_s;
                    }
                    dur = fwd_s[r] / vpp;
                } else {
                    if (r < pp - 1) {
                        if (bend[(r + 1) * n + k] < 0)
                            break;
                        dep = bend[(r + 1) * n + k] + p2p_s[r];
                    } else if (chunk < vpp - 1) {
                        if (bend[k - gs] < 0)
                            break;
                        dep = bend[k - gs] + wrap_s;
                    } else {
                        /* own forward of (mb, last chunk) */
                        int g = k / (pp * vpp);
                        int fk = g * pp * vpp + (vpp - 1) * gs + (mb - g * pp);
                        if (fend[r * n + fk] < 0)
                            break;
                        dep = fend[r * n + fk];
                    }
                    dur = bwd_s[r] / vpp;
                }
                start = dep > freet[r] ? dep : freet[r];
                freet[r] = start + dur;
                if (isf)
                    fend[r * n + k] = freet[r];
                else
                    bend[r * n + k] = freet[r];
                if (out != NULL) {
                    int last_chunk_rank = r == pp - 1 && chunk == vpp - 1;
                    if (push_event(out, isf ? SCHED_FORWARD : SCHED_BACKWARD, r, mb, chunk,
                                   start, freet[r]) != 0)
                        return -1;
                    if (isf && !last_chunk_rank) {
                        double p = r < pp - 1 ? p2p_s[r] : wrap_s;
                        if (p > 0 && push_event(out, SCHED_SEND, r, mb, chunk, freet[r],
                                                freet[r] + p) != 0)
                            return -1;
                    } else if (!isf && !(r == 0 && chunk == 0)) {
                        double p = r > 0 ? p2p_s[r - 1] : wrap_s;
                        if (p > 0 && push_event(out, SCHED_SEND, r, mb, chunk, freet[r],
                                                freet[r] + p) != 0)
                            return -1;
                    }
                }
                jpos[r]++;
                progress = 1;
                if (jpos[r] == 2 * n)
                    done++;
            }
        }
    } while (done < pp && progress);
    if (done < pp)
        return -2;
    for (r = 0; r < pp; r++) {
        if (rank_end != NULL)
            rank_end[r] = freet[r];
        if (freet[r] > span)
            span = freet[r];
    }
    return span;
}

double schedule_simulate_ex(int pp, int vpp, int microbatches, const double *fwd_s,
                            const double *bwd_s, const double *p2p_s, double p2p_wrap_s,
                            double *rank_end_s, sched_events *out)
{
    double *work, span;
    double zero_p2p[STRATEGY_MAX_STAGES_PIPE];
    double stack_work[SIM_STACK_DOUBLES];
    int m = microbatches, msim, r;

    if (pp < 1 || pp > STRATEGY_MAX_STAGES_PIPE || m < 1)
        return 0;
    if (vpp < 1)
        vpp = 1;
    if (p2p_s == NULL) {
        memset(zero_p2p, 0, sizeof zero_p2p);
        p2p_s = zero_p2p;
    }
    msim = m;
    if (out == NULL && m > 3 * pp + m % pp)
        msim = 3 * pp + m % pp;
    if (2 * (size_t)pp * (size_t)msim * (size_t)vpp <= SIM_STACK_DOUBLES) {
        work = stack_work;   /* the common case allocates nothing */
    } else {
        work = pl_malloc(2 * (size_t)pp * (size_t)msim * (size_t)vpp * sizeof *work);
        if (work == NULL)
            return -1;
    }
    if (msim == m) {
        span = simulate(pp, vpp, m, fwd_s, bwd_s, p2p_s, p2p_wrap_s, work,
                        work + (size_t)pp * m * vpp, rank_end_s, out);
    } else {
        double end1[STRATEGY_MAX_STAGES_PIPE], end2[STRATEGY_MAX_STAGES_PIPE];
        int m2 = msim, m1 = msim - pp;
        double s1 = simulate(pp, vpp, m1, fwd_s, bwd_s, p2p_s, p2p_wrap_s, work,
                             work + (size_t)pp * m1 * vpp, end1, NULL);
        double s2 = simulate(pp, vpp, m2, fwd_s, bwd_s, p2p_s, p2p_wrap_s, work,
                             work + (size_t)pp * m2 * vpp, end2, NULL);
        double steps = (double)(m - m2) / pp;
        if (s1 < 0 || s2 < 0) {
            span = s1 < 0 ? s1 : s2;
        } else {
            span = s2 + steps * (s2 - s1);
            if (rank_end_s != NULL)
                for (r = 0; r < pp; r++)
                    rank_end_s[r] = end2[r] + steps * (end2[r] - end1[r]);
        }
    }
    if (work != stack_work)
        pl_free(work);
    return span == -2 ? -1 : span;
}

double schedule_simulate(int pp, int vpp, int microbatches, const double *fwd_s,
                         const double *bwd_s, const double *p2p_s, sched_events *out)
{
    double wrap = p2p_s != NULL && pp > 1 ? p2p_s[0] : 0;
    return schedule_simulate_ex(pp, vpp, microbatches, fwd_s, bwd_s, p2p_s, wrap, NULL, out);
}

double schedule_bubble_fraction(int pp, int vpp, int microbatches)
{
    if (microbatches < 1 || vpp < 1)
        return 0;
    return (double)(pp - 1) / ((double)vpp * microbatches);
}
