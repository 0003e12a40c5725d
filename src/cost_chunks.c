/* cost_chunks.c: the pipeline schedule evaluate() simulates, rebuilt from a
 * plan and its evaluation, for the outputs that replay it (trace.c).
 *
 * evaluate() (cost.c) keeps the per-chunk times of an interleaved plan over
 * the embedding/loss-accounting split to itself: the chunks of one rank
 * hold different layer counts (Llama 3.1 405B, pp 8 vpp 8: 1 layer + the
 * embedding in rank 0's chunk 0, 2 in the others, 1 + the loss in rank 7's
 * last), so a replay over per-rank sums (the rank's time / vpp per chunk)
 * gives another span.  This file rebuilds them with the same calls and the
 * same arithmetic, in the same order (cost_layer_range per chunk, capped;
 * the rank's extra beyond its chunks -- ZeRO-3's per-tensor collectives --
 * spread in equal shares), and the p2p times and wrap-around crossing as
 * evaluate() passes them.  Invariant, tested (test_trace.c): the replay's
 * span + exposed DP + optimizer + overhead equals evaluate()'s step time.
 * If cost.c changes how it builds the schedule's inputs, change this file
 * with it.  No allocation.
 */
#include <math.h>
#include <string.h>
#include "cost_chunks.h"

#define TIME_CAP_S 1e30     /* cost.c's cap_time() */

static double cap_time(double t)
{
    return isfinite(t) && t < TIME_CAP_S ? (t > 0 ? t : 0) : TIME_CAP_S;
}

int cost_schedule_inputs(const model *m, const cluster *c, const cost_params *p,
                         const strategy *s, const evaluation *e, cost_schedule *out)
{
    int pp = s->pp > 0 ? s->pp : 1, v = s->vpp > 0 ? s->vpp : 1;
    int mcount = strategy_microbatches(s);

    memset(out, 0, sizeof *out);
    if (s->pp > STRATEGY_MAX_STAGES || c == NULL || c->n_groups < 1 || e->n_stages < pp)
        return -1;
    if (v > COST_CHUNKS_MAX / pp)
        v = COST_CHUNKS_MAX / pp;
    out->pp = pp;
    out->vpp = v;
    out->microbatches = mcount > 0 ? mcount : 1;
    out->chunked = v > 1 && (s->account_embedding || s->account_loss);
    for (int i = 0; i < pp; i++) {
        out->p2p_s[i] = i < pp - 1 || (v > 1 && pp > 1)
                            ? cap_time(cost_boundary_p2p_s(m, c, p, s, i)) : 0;
        if (!out->chunked) {
            out->fwd_s[i] = e->stage_fwd_s[i];
            out->bwd_s[i] = e->stage_bwd_s[i];
        }
    }
    out->p2p_wrap_s = pp > 1 ? out->p2p_s[pp - 1] : 0;
    if (!out->chunked)
        return 0;
    for (int i = 0; i < pp; i++) {
        const stage_spec *st = &s->stage[i];
        int g = st->group >= 0 && st->group < c->n_groups ? st->group : 0;
        int tp = st->tp > 0 ? st->tp : (s->tp > 0 ? s->tp : 1);
        double sf = 0, sb = 0, *fc = &out->fwd_s[i * v], *bc = &out->bwd_s[i * v];
        for (int j = 0; j < v; j++) {
            range_cost part;
            int first = 0, n = strategy_chunk_layers(s, m->layers, i, j, &first);
            if (n < 0)
                n = 0;
            cost_layer_range(m, c, p, s, g, tp, first, n, i == 0 && j == 0,
                             i == pp - 1 && j == v - 1, &part);
            fc[j] = cap_time(part.fwd_s);
            bc[j] = cap_time(part.bwd_s);
            sf += fc[j];
            sb += bc[j];
        }
        for (int j = 0; j < v; j++) {
            fc[j] = cap_time(fc[j] + (e->stage_fwd_s[i] - sf) / v);
            bc[j] = cap_time(bc[j] + (e->stage_bwd_s[i] - sb) / v);
        }
    }
    return 0;
}

double cost_schedule_simulate(const cost_schedule *in, double *rank_end_s, sched_events *events)
{
    if (in->chunked)
        return schedule_simulate_chunks(in->pp, in->vpp, in->microbatches, in->fwd_s, in->bwd_s,
                                        in->p2p_s, in->p2p_wrap_s, rank_end_s, events);
    return schedule_simulate_ex(in->pp, in->vpp, in->microbatches, in->fwd_s, in->bwd_s,
                                in->p2p_s, in->p2p_wrap_s, rank_end_s, events);
}
