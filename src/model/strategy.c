/* strategy.c: derived figures of a strategy and Megatron-LM's validity rules
 * (arguments.py, core_v0.15.0; ../shared/reference/cost-model.md).  The
 * rules on single knobs (divisibility, SP, overlaps, interleaving) are
 * knob_rule()'s (knobs.c); strategy_check() runs them, then the layer split:
 *   layers % pp == 0 unless the stages list an uneven split; every stage
 *   holds a layer; stages cover every layer exactly once; a stage with its
 *   own tp splits the heads too; learned positions cover the sequence.
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
 * --pipeline-model-parallel-layout (s->layout; Megatron-Core
 *   transformer/pipeline_parallel_layer_layout.py): any decoder count per
 *   virtual stage, listed chunk-major (k = chunk * pp + rank), the embedding
 *   in the first virtual stage, the loss (and MTP layers) in the last; a
 *   virtual stage, and a rank, may hold no decoder layer.  The string's
 *   grammar is parse_str_to_list's, its rules validate_layer_layout's
 *   (strategy_layout_parse).
 */
#include <stdio.h>
#include "inputs/model.h"
#include "model/knobs.h"
#include "model/strategy.h"

int strategy_microbatches(const strategy *s)
{
    long d = (long)(s->mbs > 0 ? s->mbs : 1) * (s->dp > 0 ? s->dp : 1);
    return d > 0 ? (int)(s->gbs / d) : 0;
}

int strategy_expert_split(const strategy *s)
{
    return (s->ep > 0 ? s->ep : 1) * (s->etp > 1 ? s->etp : 1);
}

int strategy_expert_dp(const strategy *s, int tp)
{
    int cp = s->cp > 0 ? s->cp : 1, dp = s->dp > 0 ? s->dp : 1;
    int edp = (tp * cp * dp) / strategy_expert_split(s);
    return edp > 0 ? edp : 1;
}

const stage_mix *strategy_stage_mix(const strategy *s, int i)
{
    for (int k = 0; k < s->n_mixes && k < STRATEGY_MAX_MIXES; k++)
        if (s->mix[k].stage == i)
            return &s->mix[k];
    return NULL;
}

int strategy_stage_members(const strategy *s, int i, int *group, int *gpus, int cap)
{
    const stage_spec *st;
    if (i < 0 || i >= s->n_stages || i >= STRATEGY_MAX_STAGES || cap < 1)
        return 0;
    st = &s->stage[i];
    if (strategy_stage_mix(s, i) != NULL) {
        const stage_mix *mx = strategy_stage_mix(s, i);
        int n = mx->n < cap ? mx->n : cap;
        for (int j = 0; j < n; j++) {
            group[j] = mx->group[j];
            gpus[j] = mx->gpus[j];
        }
        return n;
    }
    group[0] = st->group;
    gpus[0] = (st->tp > 0 ? st->tp : s->tp) * (s->cp > 0 ? s->cp : 1) *
              (st->dp > 0 ? st->dp : (s->dp > 0 ? s->dp : 1));
    return 1;
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

const char *cp_comm_name(cp_comm_type t)
{
    switch (t) {
    case CP_COMM_P2P: return "p2p";
    case CP_COMM_A2A: return "a2a";
    case CP_COMM_ALLGATHER: return "all_gather";
    case CP_COMM_A2A_P2P: return "a2a+p2p";
    case CP_COMM_COUNT: break;
    }
    return "unknown";
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

/* What the stage split's chunks of rank `rank` start after (vpp > 1, no
 * layout or accounting flags): the layers of one round of chunks (every
 * rank's n_layers / vpp) and of the ranks before it in a round. */
static void chunk_rounds(const strategy *s, int pp, int vpp, int rank, int *per_round,
                         int *before)
{
    *per_round = *before = 0;
    for (int r = 0; r < pp; r++) {
        *per_round += s->stage[r].n_layers / vpp;
        if (r < rank)
            *before += s->stage[r].n_layers / vpp;
    }
}

/* strategy_chunk_layers() for a rank and chunk in range, with the stage
 * split's rounds (chunk_rounds) given where they apply. */
static int chunk_layers(const strategy *s, int layers, int pp, int vpp, int rank, int chunk,
                        int per_round, int before, int *first_layer)
{
    int n = 0, first = 0;
    if (s->layout) {
        int idx = chunk * pp + rank;
        if (idx >= STRATEGY_MAX_CHUNKS)
            return -1;
        for (int k = 0; k < idx; k++)
            first += s->layout_layers[k];
        n = s->layout_layers[idx];
    } else if (s->account_embedding || s->account_loss) {
        int e = s->account_embedding ? 1 : 0, l = s->account_loss ? 1 : 0;
        int base = (layers + e + l) / (pp * vpp), idx = chunk * pp + rank;
        n = base - (idx == 0 ? e : 0) - (idx == pp * vpp - 1 ? l : 0);
        first = idx * base - (idx > 0 ? e : 0);
    } else if (vpp == 1) {
        n = s->stage[rank].n_layers;
        first = s->stage[rank].first_layer;
    } else {
        /* chunk c of every rank holds that rank's n_layers / vpp; the
         * chunks run round by round (all ranks' chunk 0, then chunk 1 ...) */
        first = chunk * per_round + before;
        n = s->stage[rank].n_layers / vpp;
    }
    if (first_layer != NULL)
        *first_layer = first;
    return n;
}

/* Whether the stage split's rounds apply (chunk_layers' last case). */
static bool uses_rounds(const strategy *s, int vpp)
{
    return !s->layout && !s->account_embedding && !s->account_loss && vpp > 1;
}

int strategy_chunk_layers(const strategy *s, int layers, int rank, int chunk, int *first_layer)
{
    int pp = s->pp > 0 ? s->pp : 1, vpp = s->vpp > 0 ? s->vpp : 1, per_round = 0, before = 0;
    if (rank < 0 || rank >= pp || rank >= STRATEGY_MAX_STAGES || chunk < 0 || chunk >= vpp)
        return -1;
    if (uses_rounds(s, vpp))
        chunk_rounds(s, pp, vpp, rank, &per_round, &before);
    return chunk_layers(s, layers, pp, vpp, rank, chunk, per_round, before, first_layer);
}

void strategy_rank_chunks(const strategy *s, int layers, int rank, int from, int chunks, int *n,
                          int *first_layer)
{
    int pp = s->pp > 0 ? s->pp : 1, vpp = s->vpp > 0 ? s->vpp : 1, per_round = 0, before = 0;
    bool in_range = rank >= 0 && rank < pp && rank < STRATEGY_MAX_STAGES;
    if (in_range && uses_rounds(s, vpp))
        chunk_rounds(s, pp, vpp, rank, &per_round, &before);
    for (int k = 0; k < chunks; k++) {
        int c = from + k;
        first_layer[k] = 0;
        n[k] = in_range && c >= 0 && c < vpp
                   ? chunk_layers(s, layers, pp, vpp, rank, c, per_round, before, &first_layer[k])
                   : -1;
    }
}

int strategy_stages_from_chunks(strategy *s, int layers, int group)
{
    int pp = s->pp, vpp = s->vpp > 0 ? s->vpp : 1, rc = 0;
    s->n_stages = pp;
    for (int i = 0; i < pp && i < STRATEGY_MAX_STAGES; i++) {
        stage_spec *st = &s->stage[i];
        st->group = group;
        st->tp = s->tp;
        st->dp = s->dp;
        st->n_layers = 0;
        for (int c = 0; c < vpp; c++) {
            int n = strategy_chunk_layers(s, layers, i, c, c == 0 ? &st->first_layer : NULL);
            st->n_layers += n > 0 ? n : 0;
            rc = n < 0 ? -1 : rc;
        }
    }
    return rc;
}

int strategy_split_account(strategy *s, int layers, int group)
{
    int pp = s->pp, vpp = s->vpp > 0 ? s->vpp : 1;
    if (pp < 1 || pp > STRATEGY_MAX_STAGES || (layers + 2) % (pp * vpp) != 0 ||
        (layers + 2) / (pp * vpp) < 1)
        return -1;
    s->account_embedding = s->account_loss = true;
    s->n_mixes = 0;
    return strategy_stages_from_chunks(s, layers, group);
}

/* A broken rule: PLANNER_E_INPUT, message formatted only when err is non-NULL. */
#define FAIL(...) return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL, __VA_ARGS__)

planner_status strategy_check(const model *m, const strategy *s, planner_error *err)
{
    return strategy_check_rule(m, s, NULL, err);
}

planner_status strategy_check_rule(const model *m, const strategy *s, int *knob,
                                   planner_error *err)
{
    int i, covered = 0, uneven = 0, unused;
    planner_status rc;
    bool account = s->account_embedding || s->account_loss;
    if (knob == NULL)
        knob = &unused;
    *knob = KNOB_COUNT;
    if (s->gbs < 1 || s->seq_len < 1)
        FAIL("the global batch and the sequence must be >= 1");
    for (i = 0; i < KNOB_COUNT; i++)   /* ranges first: the rules divide by them */
        if (knob_value(s, (knob_id)i) < knob_get_info((knob_id)i)->min) {
            *knob = i;
            return knob_rule(m, s, (knob_id)i, err);
        }
    for (i = 0; i < KNOB_COUNT; i++)
        if ((rc = knob_rule(m, s, (knob_id)i, err)) != PLANNER_OK) {
            *knob = i;
            return rc;
        }
    if (s->n_stages != s->pp)
        FAIL("%d stages listed for pp %d", s->n_stages, s->pp);
    if (s->layout && account)
        FAIL("a --pipeline-model-parallel-layout cannot be combined with the "
             "embedding/loss-accounting split");
    if (s->layout && (long)s->pp * s->vpp > STRATEGY_MAX_CHUNKS)
        FAIL("pp %d x vpp %d virtual stages exceed the %d a layout may hold", s->pp, s->vpp,
             STRATEGY_MAX_CHUNKS);
    if (s->layout) {
        for (i = 0; i < s->pp * s->vpp; i++)
            if (s->layout_layers[i] < 0)
                FAIL("virtual stage %d of the layout holds %d layers", i, s->layout_layers[i]);
    } else if (account) {
        int units = m->layers + (s->account_embedding ? 1 : 0) + (s->account_loss ? 1 : 0);
        if (units % (s->pp * s->vpp) != 0)
            FAIL("layers %d + embedding/loss %d are not a multiple of pp %d x vpp %d",
                 m->layers, units - m->layers, s->pp, s->vpp);
    }
    if (s->layout || account) {
        account = true;   /* per-chunk counts: the stages must agree with them */
        for (i = 0; i < s->pp; i++) {
            int c, n = 0, first = 0;
            for (c = 0; c < s->vpp; c++)
                n += strategy_chunk_layers(s, m->layers, i, c, c == 0 ? &first : NULL);
            if (s->stage[i].n_layers != n || s->stage[i].first_layer != first)
                FAIL("stage %d holds %d layers from %d; the %s gives %d from %d", i,
                     s->stage[i].n_layers, s->stage[i].first_layer,
                     s->layout ? "layout" : "embedding/loss split", n, first);
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
        if (st->n_layers < 1)
            FAIL("pipeline stage %d holds no decoder layer", i);
        if (tp != s->tp && !knob_tp_splits_heads(m, tp))
            FAIL("stage %d: %d attention heads and %d query groups do not split over tp=%d",
                 i, m->heads, m->kv_heads, tp);
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
    if (m->position == POS_LEARNED && m->max_position > 0 && m->max_position < s->seq_len)
        FAIL("sequence length %d exceeds the %d learned positions", s->seq_len, m->max_position);
    return PLANNER_OK;
}
