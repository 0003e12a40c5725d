/* strategy.c: derived figures of a strategy and Megatron-LM's validity rules
 * (arguments.py, core_v0.15.0; ../shared/reference/cost-model.md):
 *   world = tp cp dp pp; gbs % (mbs dp) == 0; heads % tp == 0; kv_heads % tp
 *   == 0 (GQA groups split across TP); layers % pp == 0 unless the stages list
 *   an uneven split; vpp > 1 needs pp > 1, (layers / pp) % vpp == 0 and
 *   micro-batches % pp == 0; SP needs tp > 1; tp_comm_overlap needs SP;
 *   overlap_param_gather needs the distributed optimizer and
 *   overlap_grad_reduce; seq % (2 cp) == 0 with CP; experts % ep == 0 with EP
 *   and ep divides tp cp dp (experts not tensor-parallel,
 *   --expert-tensor-parallel-size 1: the expert grid etp-ep-edp spans the
 *   same tp cp dp ranks as the dense layers, edp = tp cp dp / ep); stages
 *   cover every layer exactly once.
 * Uneven virtual chunks (transformer_config.py / arguments.py): with
 *   --account-for-embedding-in-pipeline-split and/or
 *   --account-for-loss-in-pipeline-split the embedding / the loss count as a
 *   layer, (layers + e + l) % pp == 0 and the per-rank count % vpp == 0,
 *   i.e. (layers + e + l) % (pp vpp) == 0, every chunk holding that many
 *   units (strategy_chunk_layers); they cannot be combined with an explicit
 *   uneven split.  Otherwise with vpp > 1 every rank's layers % vpp == 0
 *   (--decoder-first/last-pipeline-num-layers: the middle ranks even, the
 *   first and last counts each divisible by vpp; any other split per rank
 *   is a --pipeline-model-parallel-layout), chunks equal within a rank.
 */
#include <stdio.h>
#include "schedule/evaluate.h"

int strategy_microbatches(const strategy *s)
{
    long d = (long)(s->mbs > 0 ? s->mbs : 1) * (s->dp > 0 ? s->dp : 1);
    return d > 0 ? (int)(s->gbs / d) : 0;
}

int strategy_gpus(const strategy *s)
{
    int cp = s->cp > 0 ? s->cp : 1, dp = s->dp > 0 ? s->dp : 1;
    int i, n = 0;
    if (s->n_stages == s->pp && s->pp > 0) {
        for (i = 0; i < s->pp && i < STRATEGY_MAX_STAGES; i++)
            n += (s->stage[i].tp > 0 ? s->stage[i].tp : s->tp) * cp * dp;
        return n;
    }
    return s->tp * cp * dp * s->pp;
}

const char *recompute_name(recompute_mode r)
{
    switch (r) {
    case RECOMPUTE_NONE: return "none";
    case RECOMPUTE_SELECTIVE: return "selective";
    case RECOMPUTE_FULL: return "full";
    }
    return "unknown";
}

int strategy_chunk_layers(const strategy *s, int layers, int rank, int chunk, int *first_layer)
{
    int pp = s->pp > 0 ? s->pp : 1, vpp = s->vpp > 0 ? s->vpp : 1;
    int r, c, n = 0, first = 0;
    if (rank < 0 || rank >= pp || rank >= STRATEGY_MAX_STAGES || chunk < 0 || chunk >= vpp)
        return -1;
    if (s->account_embedding || s->account_loss) {
        int e = s->account_embedding ? 1 : 0, l = s->account_loss ? 1 : 0;
        int base = (layers + e + l) / (pp * vpp), idx = chunk * pp + rank;
        n = base - (idx == 0 ? e : 0) - (idx == pp * vpp - 1 ? l : 0);
        first = idx * base - (idx > 0 ? e : 0);
    } else if (vpp == 1) {
        n = s->stage[rank].n_layers;
        first = s->stage[rank].first_layer;
    } else {
        for (c = 0; c <= chunk; c++)
            for (r = 0; r < pp && (c < chunk || r < rank); r++)
                first += s->stage[r].n_layers / vpp;
        n = s->stage[rank].n_layers / vpp;
    }
    if (first_layer != NULL)
        *first_layer = first;
    return n;
}

int strategy_split_account(strategy *s, int layers, int group)
{
    int pp = s->pp, vpp = s->vpp > 0 ? s->vpp : 1, i, c;
    if (pp < 1 || pp > STRATEGY_MAX_STAGES || (layers + 2) % (pp * vpp) != 0 ||
        (layers + 2) / (pp * vpp) < 1)
        return -1;
    s->account_embedding = s->account_loss = true;
    s->n_stages = pp;
    for (i = 0; i < pp; i++) {
        stage_spec *st = &s->stage[i];
        st->group = group;
        st->tp = s->tp;
        st->dp = s->dp;
        st->n_layers = 0;
        for (c = 0; c < vpp; c++)
            st->n_layers += strategy_chunk_layers(s, layers, i, c, c == 0 ? &st->first_layer
                                                                          : NULL);
        if (st->n_layers < 0)
            return -1;
    }
    return 0;
}

#define FAIL(...) do { snprintf(why, (size_t)why_size, __VA_ARGS__); return -1; } while (0)

int strategy_check(const model *m, const strategy *s, char *why, int why_size)
{
    int i, covered = 0, uneven = 0;
    bool account = s->account_embedding || s->account_loss;
    if (why_size > 0)
        why[0] = '\0';
    if (s->tp < 1 || s->pp < 1 || s->dp < 1 || s->cp < 1 || s->ep < 1 || s->vpp < 1 ||
        s->mbs < 1 || s->gbs < 1 || s->seq_len < 1)
        FAIL("every degree, the micro-batch, the global batch and the sequence must be >= 1");
    if (s->pp > STRATEGY_MAX_STAGES)
        FAIL("pp %d exceeds %d stages", s->pp, STRATEGY_MAX_STAGES);
    if (s->gbs % (s->mbs * s->dp) != 0)
        FAIL("global batch %d is not a multiple of micro-batch %d x dp %d", s->gbs, s->mbs,
             s->dp);
    if (s->zero < 0 || s->zero > 3)
        FAIL("zero stage %d is not 0..3", s->zero);
    if (s->sp && s->tp < 2)
        FAIL("sequence parallelism needs tp > 1");
    if (s->tp_comm_overlap && !s->sp)
        FAIL("tp_comm_overlap needs sequence parallelism");
    if (s->overlap_param_gather && (s->zero < 1 || !s->overlap_grad_reduce))
        FAIL("overlap_param_gather needs the distributed optimizer and overlap_grad_reduce");
    if (s->cp > 1 && s->seq_len % (2 * s->cp) != 0)
        FAIL("sequence %d is not a multiple of 2 x cp %d", s->seq_len, s->cp);
    if (s->ep > 1 && (m->moe.experts == 0 || m->moe.experts % s->ep != 0 ||
                      ((long)s->tp * s->cp * s->dp) % s->ep != 0))
        FAIL("ep %d must divide the experts and tp x cp x dp", s->ep);
    if (s->n_stages != s->pp)
        FAIL("%d stages listed for pp %d", s->n_stages, s->pp);
    if (account) {
        int units = m->layers + (s->account_embedding ? 1 : 0) + (s->account_loss ? 1 : 0);
        if (units % (s->pp * s->vpp) != 0)
            FAIL("layers %d + embedding/loss %d are not a multiple of pp %d x vpp %d",
                 m->layers, units - m->layers, s->pp, s->vpp);
        for (i = 0; i < s->pp; i++) {
            int c, n = 0, first = 0;
            for (c = 0; c < s->vpp; c++)
                n += strategy_chunk_layers(s, m->layers, i, c, c == 0 ? &first : NULL);
            if (s->stage[i].n_layers != n || s->stage[i].first_layer != first)
                FAIL("stage %d holds %d layers from %d; the embedding/loss split gives %d "
                     "from %d", i, s->stage[i].n_layers, s->stage[i].first_layer, n, first);
        }
    }
    for (i = 0; i < s->pp; i++) {
        const stage_spec *st = &s->stage[i];
        int tp = st->tp > 0 ? st->tp : s->tp;
        if (st->n_layers < 0)
            FAIL("stage %d has %d layers", i, st->n_layers);
        if (st->n_layers != m->layers / s->pp)
            uneven = 1;
        covered += st->n_layers;
        if (m->heads % tp != 0)
            FAIL("heads %d are not a multiple of tp %d", m->heads, tp);
        if (m->kv_heads % tp != 0 && tp % m->kv_heads != 0)
            FAIL("kv_heads %d and tp %d: one must divide the other", m->kv_heads, tp);
        if (s->vpp > 1 && !account && st->n_layers % s->vpp != 0)
            FAIL("stage %d: %d layers do not split into %d virtual stages", i,
                 st->n_layers, s->vpp);
        if (s->vpp > 1 && !account && st->n_layers % s->vpp == 0) {
            int first = 0;
            strategy_chunk_layers(s, m->layers, i, 0, &first);
            if (st->first_layer != first)
                FAIL("stage %d starts at layer %d, its first virtual chunk at %d", i,
                     st->first_layer, first);
        }
        if (s->vpp == 1 && !account && i > 0 && st->first_layer !=
                s->stage[i - 1].first_layer + s->stage[i - 1].n_layers)
            FAIL("stage %d does not start where stage %d ends", i, i - 1);
    }
    if (covered != m->layers)
        FAIL("stages hold %d layers, the model has %d", covered, m->layers);
    if (!uneven && !account && m->layers % s->pp != 0)
        FAIL("layers %d are not a multiple of pp %d", m->layers, s->pp);
    if (s->vpp > 1) {
        int mb = strategy_microbatches(s);
        if (s->pp < 2)
            FAIL("virtual stages need pp > 1");
        if (mb % s->pp != 0)
            FAIL("interleaving needs the micro-batches (%d) to be a multiple of pp %d", mb,
                 s->pp);
    }
    return 0;
}
