/* placement.c: pipeline stages on node groups (placements), and the layer
 * partition of a strategy's stages (placement.h).
 *
 * Model.  Stage s of a placement runs on its part's node group with its
 * part's TP degree; its per-micro-batch time is the sum of its layers'
 * forward + backward times from cost_layer_range() on that GPU type (the
 * embedding on stage 0, the output layer and loss on the last stage), and
 * its memory is evaluate()'s: memory_stage() (memory.c, the one formula)
 * gives each layer's terms of the partitioner's sum (layer_memory: its
 * states, with routed-expert states sharded over their expert-data-parallel
 * group; one micro-batch of activations, times memory_inflight(pipe, pp, 1, m,
 * s); its transient bytes, the largest counting) and each stage's fixed
 * bytes (the reserve, and the embedding / output layer on the end stages;
 * the loss's working set beyond the least layer-time buffers of any layer,
 * as cost_range_transient_bytes counts it).
 * ZeRO-3's gathered weights are memory_zero3_gathered_bytes(), the rule
 * evaluate() uses: its stage_params term per layer (FSDP2 under pipelining
 * keeps the whole stage gathered with fp32 gradients: 6 B per parameter),
 * its largest-unit term as each layer's transient (the largest counting),
 * the root on the end stages, so a split the partitioner accepts is one
 * evaluate() accepts (until 2026-11 the partitioner counted 2 x a layer's
 * parameters for every stack, far under FSDP2's whole stage at pp > 1).
 * Block recompute (cost_recompute_lead_layers N > 0): each layer is costed
 * both ways, re-run (a range of one layer: its first) and kept (without
 * recompute), and the partitioner puts each stage's first N on the first
 * (partition.h "Leading layers"), as evaluate()'s range_on splits a stage.
 * Uniform recompute in groups of N (cost_recompute_group_layers): the
 * partition's rows are whole groups, each costed as a range of N layers,
 * so every stage holds whole groups (Megatron's rule) costed as evaluate()
 * costs them.
 * The partitioner minimizes the largest stage time (1F1B's steady state is
 * paced by it); the search then evaluates the split
 * exactly (pipeline simulation, p2p on the links each boundary crosses).
 *
 * Per-layer costs are computed once per (group, tp, cp, mbs, seq, sp,
 * recompute, TP overlap) and kept in a small round-robin cache: a search
 * asks for the same tables for every ZeRO stage and data-parallel degree.
 * Identical consecutive layers are costed once.  No allocation after
 * placer_new() except the partition workspace's first growth and the ILP.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "cost/memory.h"
#include "model/transformer.h"
#include "partition/placement.h"

#define COST_CACHE 48
#define PLACER_ILP_GAP 1e-4      /* relative MIP gap of the search's ILP */

/* ---- placements ----------------------------------------------------------- */

int placement_stages(const placement *pl)
{
    int n = 0;
    if (pl->packed)
        return pl->pp;
    for (int k = 0; k < pl->n_parts; k++)
        n += pl->part[k].n_stages;
    return n;
}

long placement_gpus(const placement *pl, int tp, int cp, int dp)
{
    long n = 0;
    if (pl->packed)
        return (long)pl->pp * tp * cp * dp;
    for (int k = 0; k < pl->n_parts; k++)
        n += (long)pl->part[k].n_stages * (pl->part[k].tp > 0 ? pl->part[k].tp : tp) * cp * dp;
    return n;
}

/* A strategy with stages spanning groups: its groups in rank order. */
static int packed_from_strategy(const strategy *s, placement *out)
{
    out->packed = true;
    out->pp = s->pp;
    for (int i = 0; i < s->n_stages && i < STRATEGY_MAX_STAGES; i++) {
        int g[STAGE_MIX_MAX], n[STAGE_MIX_MAX];
        int m = strategy_stage_members(s, i, g, n, STAGE_MIX_MAX);
        for (int j = 0; j < m; j++) {
            if (out->n_parts > 0 && out->part[out->n_parts - 1].group == g[j])
                continue;
            if (out->n_parts == PLACEMENT_MAX_PACKED)
                return -1;
            out->part[out->n_parts++] = (placement_part){g[j], 0, 0};
        }
    }
    return 0;
}

int placement_from_strategy(const strategy *s, placement *out)
{
    memset(out, 0, sizeof *out);
    if (s->n_stages < 1)
        return -1;
    for (int i = 0; i < s->n_stages && i < STRATEGY_MAX_STAGES; i++)
        if (strategy_stage_mix(s, i) != NULL)
            return packed_from_strategy(s, out);
    for (int i = 0; i < s->n_stages && i < STRATEGY_MAX_STAGES; i++) {
        placement_part *last = out->n_parts > 0 ? &out->part[out->n_parts - 1] : NULL;
        int tp = s->stage[i].tp > 0 ? s->stage[i].tp : s->tp;
        if (last != NULL && last->group == s->stage[i].group && last->tp == tp) {
            last->n_stages++;
            continue;
        }
        if (out->n_parts == PLACEMENT_MAX_PARTS)
            return -1;
        out->part[out->n_parts++] = (placement_part){s->stage[i].group, 1, tp};
    }
    return 0;
}

void placement_describe(const cluster *c, const placement *pl, char *buf, size_t size)
{
    size_t len = 0;
    if (size == 0)
        return;
    buf[0] = '\0';
    for (int k = 0; k < pl->n_parts && len + 1 < size; k++) {
        int g = pl->part[k].group;
        const char *name = g >= 0 && g < c->n_groups ? c->group[g].name : "?";
        if (pl->packed)
            snprintf(buf + len, size - len, "%s%s%s", k ? " + " : "", name,
                     k == pl->n_parts - 1 ? " packed" : "");
        else
            snprintf(buf + len, size - len, "%s%s x%d", k ? " + " : "", name,
                     pl->part[k].n_stages);
        len = strlen(buf);
    }
}

int placement_stage_members(const cluster *c, const placement *pl, long unit, int q,
                            stage_mix *out)
{
    long start = (long)q * unit, end = start + unit, off = 0;
    memset(out, 0, sizeof *out);
    for (int k = 0; k < pl->n_parts && off < end; k++) {
        long g = group_total_gpus(&c->group[pl->part[k].group]);
        long lo = start > off ? start : off, hi = end < off + g ? end : off + g;
        if (hi > lo) {
            if (out->n == STAGE_MIX_MAX)
                return -1;
            out->group[out->n] = pl->part[k].group;
            out->gpus[out->n++] = (int)(hi - lo);
        }
        off += g;
    }
    return off >= end && out->n > 0 ? 0 : -1;
}

typedef struct enum_state {
    const cluster *c;
    int kmax[CLUSTER_MAX_GROUPS];
    int max_stages, want_pp;
    long unit;                  /* packed: GPUs per stage, else 0 */
    placement *out;
    int cap, n;
    placement cur;
} enum_state;

static void emit(enum_state *e)
{
    if (e->n < e->cap)
        e->out[e->n] = e->cur;
    e->n++;
}

/* Stage counts for parts [k, n_parts) adding up to `left` (want_pp). */
static void counts(enum_state *e, int k, int left)
{
    int n = e->cur.n_parts;
    if (e->n >= e->cap)
        return;   /* full: the first `cap` in this order are kept */
    if (k == n) {
        if (left == 0)
            emit(e);
        return;
    }
    for (int q = 1; q <= e->kmax[e->cur.part[k].group] && q <= left - (n - k - 1); q++) {
        e->cur.part[k].n_stages = q;
        counts(e, k + 1, left - q);
    }
}

/* Packed: the stages the ordered groups hold, kept when the last group is
 * used and a stage spans a boundary; one stage is kept in one rank order
 * (the groups ascending: another order is the same GPUs). */
static void finish_packed(enum_state *e)
{
    long total = 0, last = 0, pp;
    bool spans = false;
    for (int k = 0; k < e->cur.n_parts; k++) {
        last = group_total_gpus(&e->c->group[e->cur.part[k].group]);
        total += last;
    }
    pp = e->want_pp > 0 ? e->want_pp : total / e->unit;
    if (pp < 1 || pp > e->max_stages || pp * e->unit > total || pp * e->unit <= total - last)
        return;
    total = 0;
    for (int k = 0; k + 1 < e->cur.n_parts; k++) {
        total += group_total_gpus(&e->c->group[e->cur.part[k].group]);
        spans = spans || total % e->unit != 0;
        if (pp == 1 && e->cur.part[k + 1].group < e->cur.part[k].group)
            return;
    }
    if (!spans)
        return;
    e->cur.packed = true;
    e->cur.pp = (int)pp;
    emit(e);
    e->cur.packed = false;
    e->cur.pp = 0;
}

/* The current ordered group list is complete: give it its stage counts. */
static void finish(enum_state *e)
{
    if (e->unit > 0) {
        finish_packed(e);
        return;
    }
    if (e->want_pp > 0) {
        if (e->want_pp <= e->max_stages)
            counts(e, 0, e->want_pp);
        return;
    }
    {
        int total = 0;
        for (int k = 0; k < e->cur.n_parts; k++) {
            e->cur.part[k].n_stages = e->kmax[e->cur.part[k].group];
            total += e->cur.part[k].n_stages;
        }
        if (total <= e->max_stages)
            emit(e);
    }
}

/* Every ordered choice of distinct eligible groups, 2..depth long. */
static void orders(enum_state *e, int depth, unsigned used)
{
    if (e->n >= e->cap)
        return;
    if (e->cur.n_parts >= 2)
        finish(e);
    if (e->cur.n_parts == depth)
        return;
    for (int g = 0; g < e->c->n_groups; g++) {
        if ((used & (1u << g)) || e->kmax[g] < 1)
            continue;
        e->cur.part[e->cur.n_parts++] = (placement_part){g, 0, 0};
        orders(e, depth, used | (1u << g));
        e->cur.n_parts--;
    }
}

/* Ranks groups for placements over many groups: more usable memory first
 * (stage 0 holds the most micro-batches), then more peak FLOP/s, then index. */
static bool group_before(const cluster *c, int a, int b)
{
    const gpu_spec *x = &c->group[a].gpu, *y = &c->group[b].gpu;
    if (x->usable_mem_bytes != y->usable_mem_bytes)
        return x->usable_mem_bytes > y->usable_mem_bytes;
    if (x->peak_flops[PEAK_BF16] != y->peak_flops[PEAK_BF16])
        return x->peak_flops[PEAK_BF16] > y->peak_flops[PEAK_BF16];
    return a < b;
}

/* placement_enumerate's orders; packed when `packed`. */
static int enumerate(const cluster *c, int tp, int cp, int dp, int max_stages, int want_pp,
                     bool packed, placement *out, int cap)
{
    enum_state e;
    long unit = (long)tp * cp * dp;
    int eligible = 0, depth = packed ? PLACEMENT_MAX_PACKED : PLACEMENT_MAX_PARTS;

    if (c == NULL || c->n_groups < 2 || unit < 1 || max_stages < (packed ? 1 : 2))
        return 0;
    memset(&e, 0, sizeof e);
    e.c = c;
    e.max_stages = max_stages;
    e.want_pp = want_pp;
    e.unit = packed ? unit : 0;
    e.out = out;
    e.cap = cap;
    for (int g = 0; g < c->n_groups && g < CLUSTER_MAX_GROUPS; g++) {
        long k = group_total_gpus(&c->group[g]) / unit;
        e.kmax[g] = k > STRATEGY_MAX_STAGES ? STRATEGY_MAX_STAGES : (int)k;
        if (packed)   /* a group smaller than a stage may still hold part of one */
            e.kmax[g] = group_total_gpus(&c->group[g]) > 0;
        if (e.kmax[g] > 0)
            eligible++;
    }
    if (eligible < 2)
        return 0;
    if (c->n_groups <= 4) {
        orders(&e, c->n_groups, 0);
    } else {
        int rank[CLUSTER_MAX_GROUPS], n = 0;
        for (int g = 0; g < c->n_groups && g < CLUSTER_MAX_GROUPS; g++) {
            int at;
            if (e.kmax[g] < 1)
                continue;
            at = n;
            while (at > 0 && group_before(c, g, rank[at - 1])) {
                rank[at] = rank[at - 1];
                at--;
            }
            rank[at] = g;
            n++;
        }
        for (int len = 2; len <= n && len <= depth; len++) {
            e.cur.n_parts = len;
            for (int k = 0; k < len; k++)
                e.cur.part[k] = (placement_part){rank[k], 0, 0};
            finish(&e);
        }
    }
    return e.n < cap ? e.n : cap;
}

int placement_enumerate(const cluster *c, int tp, int cp, int dp, int max_stages,
                        int want_pp, placement *out, int cap)
{
    return enumerate(c, tp, cp, dp, max_stages, want_pp, false, out, cap);
}

int placement_enumerate_packed(const cluster *c, int tp, int cp, int dp, int max_stages,
                               int want_pp, placement *out, int cap)
{
    return enumerate(c, tp, cp, dp, max_stages, want_pp, true, out, cap);
}

/* ---- the placer ---------------------------------------------------------- */

/* span, share: a member of a stage spanning groups (cost_member_view):
 * the groups of the stage as a bit set and the member's GPUs; 0 otherwise.
 * Every knob cost_layer_range_on() reads is in the key (until 2026-11 ep,
 * etp, the CP exchange, the recompute modules, the flex dispatcher, CUDA
 * graphs and the shared-expert overlap were not: a search's second ep
 * reused the first's tables, so DeepSeek-V3's pp 8 split at ep 64 was
 * placed with ep 8's expert weights). */
typedef struct cost_key {
    int group, tp, cp, mbs, seq_len, rc;
    bool lead;          /* block recompute: the kept rows too (cost_entry.kt) */
    int unit;           /* layers per row: uniform recompute's groups, else 1 */
    bool sp, tpo, epo;
    unsigned long long span;
    int share;
    int ep, etp, cp_comm, cp_a2a, rmods;
    bool flex, graph, seo, tmg;
    cost_ep_span eps;   /* a member's EP groups (cost_member_ep_span); n 0 otherwise */
} cost_key;

/* Per-layer costs on one (group, tp, ...) and the end-stage extras:
 * ext[0] embedding (first stage), ext[1] output layer (last), ext[2] both
 * (a one-stage pipeline: tied embeddings counted once). */
typedef struct cost_entry {
    bool used;
    cost_key key;
    double *t, *params, *expert, *act, *peak;   /* [L] each */
    double *kt, *kact, *kpeak;  /* [L] each, key.lead: the layer without
                                   recompute (past a stage's leading layers) */
    double ext_t[3], ext_params[3], ext_vocab[3], ext_peak[3];   /* ext_vocab: of
                                   ext_params, the embedding / output matrices */
    double buf_min;             /* the least layer-time buffers of a layer */
} cost_entry;

struct placer {
    const model *m;
    const cluster *c;
    const cost_params *p;
    bool use_ilp;
    bool balance_misses;                    /* closest_split for misses */
    double ilp_limit_s;
    int L;
    int unit, n;                            /* this problem's layers per row
                                               (cost_recompute_group_layers)
                                               and rows, L / unit */
    cost_entry cache[COST_CACHE];
    int next;
    double *block;                          /* cache arrays */
    /* one partition problem */
    double *pt, *pst, *pact, *ppeak;        /* [PLACEMENT_MAX_PARTS * L] */
    double *plt, *plact, *plpeak, *pfreed;  /* the leading layers' (partition.h) */
    int cls[STRATEGY_MAX_STAGES];
    double ft[STRATEGY_MAX_STAGES], fb[STRATEGY_MAX_STAGES];
    double infl[STRATEGY_MAX_STAGES], cap[STRATEGY_MAX_STAGES], nocap[STRATEGY_MAX_STAGES];
    double scaled[STRATEGY_MAX_STAGES];     /* capacities x f (closest_split) */
    stage_mix mix[STRATEGY_MAX_STAGES];     /* each stage's groups */
    partition_ws ws;
    partition_result res;
    bool memory_shaped;                     /* placer_memory_shaped */
    placer_stats st;
};

placer *placer_new(const model *m, const cluster *c, const cost_params *p, bool use_ilp,
                   double ilp_time_limit_s)
{
    placer *pc = pl_calloc(1, sizeof *pc);
    size_t L;
    if (pc == NULL)
        return NULL;
    pc->m = m;
    pc->c = c;
    pc->p = p;
    pc->use_ilp = use_ilp;
    pc->balance_misses = true;
    pc->ilp_limit_s = ilp_time_limit_s > 0 ? ilp_time_limit_s : 10.0;
    pc->L = pc->n = m->layers;
    pc->unit = 1;
    L = (size_t)m->layers;
    pc->block = pl_calloc((size_t)COST_CACHE * 8 * L + (size_t)PLACEMENT_MAX_PARTS * 8 * L,
                          sizeof *pc->block);
    if (pc->block == NULL) {
        pl_free(pc);
        return NULL;
    }
    for (int k = 0; k < COST_CACHE; k++) {
        double *b = pc->block + (size_t)k * 8 * L;
        pc->cache[k].t = b;
        pc->cache[k].params = b + L;
        pc->cache[k].act = b + 2 * L;
        pc->cache[k].peak = b + 3 * L;
        pc->cache[k].expert = b + 4 * L;
        pc->cache[k].kt = b + 5 * L;
        pc->cache[k].kact = b + 6 * L;
        pc->cache[k].kpeak = b + 7 * L;
    }
    pc->pt = pc->block + (size_t)COST_CACHE * 8 * L;
    pc->pst = pc->pt + (size_t)PLACEMENT_MAX_PARTS * L;
    pc->pact = pc->pst + (size_t)PLACEMENT_MAX_PARTS * L;
    pc->ppeak = pc->pact + (size_t)PLACEMENT_MAX_PARTS * L;
    pc->plt = pc->ppeak + (size_t)PLACEMENT_MAX_PARTS * L;
    pc->plact = pc->plt + (size_t)PLACEMENT_MAX_PARTS * L;
    pc->plpeak = pc->plact + (size_t)PLACEMENT_MAX_PARTS * L;
    pc->pfreed = pc->plpeak + (size_t)PLACEMENT_MAX_PARTS * L;
    for (int s = 0; s < STRATEGY_MAX_STAGES; s++)
        pc->nocap[s] = HUGE_VAL;
    return pc;
}

void placer_free(placer *pc)
{
    if (pc == NULL)
        return;
    partition_ws_free(&pc->ws);
    pl_free(pc->block);
    pl_free(pc);
}

const placer_stats *placer_get_stats(const placer *pc)
{
    return &pc->st;
}

void placer_set_work_limit(placer *pc, long long steps)
{
    pc->ws.step_limit = steps > 0 ? steps : 0;
}

long long placer_work(const placer *pc)
{
    return pc->ws.steps;
}

void placer_forget(placer *pc)
{
    for (int q = 0; q < COST_CACHE; q++)
        pc->cache[q].used = false;
    pc->next = 0;
}

bool placer_memory_shaped(const placer *pc)
{
    return pc->memory_shaped;
}

void placer_balance_misses(placer *pc, bool on)
{
    pc->balance_misses = on;
}

static bool key_eq(const cost_key *a, const cost_key *b)
{
    return a->group == b->group && a->tp == b->tp && a->cp == b->cp && a->mbs == b->mbs &&
           a->seq_len == b->seq_len && a->rc == b->rc && a->lead == b->lead &&
           a->unit == b->unit &&
           a->sp == b->sp && a->tpo == b->tpo &&
           a->span == b->span && a->share == b->share && a->epo == b->epo && a->ep == b->ep &&
           a->etp == b->etp && a->cp_comm == b->cp_comm && a->cp_a2a == b->cp_a2a &&
           a->rmods == b->rmods && a->flex == b->flex && a->graph == b->graph &&
           a->seo == b->seo && a->tmg == b->tmg && a->eps.n == b->eps.n &&
           (a->eps.n == 0 || memcmp(&a->eps, &b->eps, sizeof a->eps) == 0);
}

/* Row i of table e from range cost rc (and the least layer-time buffers
 * of its rows so far). */
static void set_row(cost_entry *e, int i, const range_cost *rc)
{
    e->t[i] = rc->fwd_s + rc->bwd_s;
    e->params[i] = rc->params;
    e->expert[i] = rc->expert_params;
    e->act[i] = rc->act_bytes;
    e->peak[i] = cost_range_transient_bytes(rc);
    if (i == 0 || rc->layer_buf_bytes < e->buf_min)
        e->buf_min = rc->layer_buf_bytes;
}

/* The ends' extras of table e (ext_: embedding, output layer, both), for
 * key k on node group ng, its layers' buf_min set. */
static void ext_costs(placer *pc, const cost_key *k, const node_group *ng, const strategy *s,
                      cost_entry *e)
{
    range_cost rc;
    for (int x = 0; x < 3; x++) {
        cost_layer_range_member(pc->m, pc->c, ng, &k->eps, pc->p, s, k->tp, 0, 0, x != 1, x != 0,
                                &rc);
        e->ext_t[x] = rc.fwd_s + rc.bwd_s;
        e->ext_params[x] = rc.params;
        e->ext_vocab[x] = rc.vocab_params;
        /* the loss's working set beyond what the stage's layers' buffers
         * already count (cost_range_transient_bytes: ws + max(buf, loss)
         * = (ws + buf) + max(0, loss - buf)), against the least buffers of
         * any layer: exact on uniform layers, never below evaluate() */
        e->ext_peak[x] = rc.act_peak_extra_bytes - rc.loss_bytes +
                         (rc.loss_bytes > e->buf_min ? rc.loss_bytes - e->buf_min : 0) +
                         rc.embed_bwd_bytes;   /* summed: never below evaluate()'s larger */
    }
}

/* Table e's rows for uniform recompute (k->unit = N > 1): row u is the
 * group of layers [u N, u N + N) as a range, as evaluate() costs it inside
 * a chunk of whole groups (its input kept, its layers' activations the
 * transient while it re-runs). */
static void group_costs(placer *pc, const cost_key *k, const node_group *ng, const strategy *s,
                        cost_entry *e)
{
    range_cost rc;
    for (int u = 0; u < pc->L / k->unit; u++) {
        cost_layer_range_member(pc->m, pc->c, ng, &k->eps, pc->p, s, k->tp, u * k->unit,
                                k->unit, false, false, &rc);
        set_row(e, u, &rc);
    }
    ext_costs(pc, k, ng, s, e);
}

/* The cost table for key k on node group ng (computed on a miss, evicting
 * round-robin): each layer as a range of one (its first layer: under block
 * recompute a leading one) and, with k->lead, without recompute (kept). */
static const cost_entry *costs(placer *pc, const cost_key *k, const node_group *ng,
                               const strategy *s)
{
    cost_entry *e;
    range_cost rc;
    strategy kept = *s;
    kept.recompute = RECOMPUTE_NONE;
    kept.recompute_layers = 0;
    for (int q = 0; q < COST_CACHE; q++)
        if (pc->cache[q].used && key_eq(&pc->cache[q].key, k)) {
            pc->st.cost_hits++;
            return &pc->cache[q];
        }
    pc->st.cost_misses++;
    pc->ws.steps += pc->L;   /* a table costs about as much as L DP steps */
    e = &pc->cache[pc->next];
    pc->next = (pc->next + 1) % COST_CACHE;
    e->used = true;
    e->key = *k;
    if (k->unit > 1) {
        group_costs(pc, k, ng, s, e);
        return e;
    }
    for (int i = 0; i < pc->L; i++) {
        if (i > 0 && layer_spec_same(&pc->m->layer[i], &pc->m->layer[i - 1])) {
            e->t[i] = e->t[i - 1];
            e->params[i] = e->params[i - 1];
            e->expert[i] = e->expert[i - 1];
            e->act[i] = e->act[i - 1];
            e->peak[i] = e->peak[i - 1];
            e->kt[i] = e->kt[i - 1];
            e->kact[i] = e->kact[i - 1];
            e->kpeak[i] = e->kpeak[i - 1];
            continue;
        }
        if (k->lead) {
            cost_layer_range_member(pc->m, pc->c, ng, &k->eps, pc->p, &kept, k->tp, i, 1, false,
                                    false, &rc);
            e->kt[i] = rc.fwd_s + rc.bwd_s;
            e->kact[i] = rc.act_bytes;
            e->kpeak[i] = cost_range_transient_bytes(&rc);
        }
        cost_layer_range_member(pc->m, pc->c, ng, &k->eps, pc->p, s, k->tp, i, 1, false, false,
                                &rc);
        set_row(e, i, &rc);
    }
    ext_costs(pc, k, ng, s, e);
    return e;
}

/* Nothing fits: the split whose worst stage is the least over its GPU's
 * memory (the fastest among those), for evaluate() to report as a miss.
 * Scales every capacity by f, doubling f until a split fits, then halving
 * the interval 12 times (f within 0.03% of the least); a stage whose
 * fixed bytes alone exceed f x capacity never fits, so f is capped at 2^30
 * and then the fastest split ignoring memory is used. */
static partition_status closest_split(placer *pc, partition_problem *pb, int P)
{
    double lo = 1.0, hi = 2.0, *scaled = pc->scaled;
    partition_status st = PARTITION_INFEASIBLE;
    pb->capacity_bytes = scaled;
    while (hi < 1073741824.0) {
        for (int s = 0; s < P; s++)
            scaled[s] = pc->cap[s] * hi;
        st = partition_dp(pb, &pc->ws, &pc->res);
        if (st != PARTITION_INFEASIBLE)
            break;
        lo = hi;
        hi *= 2;
    }
    if (st == PARTITION_OK) {
        for (int k = 0; k < 12; k++) {
            double mid = 0.5 * (lo + hi);
            for (int s = 0; s < P; s++)
                scaled[s] = pc->cap[s] * mid;
            st = partition_dp(pb, &pc->ws, &pc->res);
            if (st == PARTITION_NOMEM)
                return st;
            if (st == PARTITION_OK)
                hi = mid;
            else
                lo = mid;
        }
        for (int s = 0; s < P; s++)
            scaled[s] = pc->cap[s] * hi;
    } else if (st == PARTITION_INFEASIBLE) {
        pb->capacity_bytes = pc->nocap;
    }
    return st == PARTITION_NOMEM ? st : partition_dp(pb, &pc->ws, &pc->res);
}

#define WHY(...) return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL, __VA_ARGS__)

planner_status placer_place(placer *pc, const placement *pl, strategy *s, planner_error *err)
{
    return placer_place_with(pc, pl, s, pc->use_ilp, err);
}

/* ZeRO-3's gathered weights as the partitioner needs them: whether they
 * are held (memory_zero3_gathers) and memory_zero3_gathered_bytes()'s
 * inputs that do not depend on the split. */
typedef struct gather_terms {
    bool on;
    stack_gather kind;
    precision prec;
    int pp, tp;
    double vocab;               /* V x h / tp */
    double layer_bytes;         /* per gathered decoder-layer parameter
                                   (memory_gathered_weight_bytes) */
} gather_terms;

static double gathered(const gather_terms *g, double stage_params, double layer_params,
                       double vocab, double root)
{
    return g->on ? memory_zero3_gathered_bytes(g->kind, g->prec, g->layer_bytes, g->pp, g->tp,
                                               stage_params, layer_params, vocab, root)
                 : 0;
}

/* The terms of one layer's memory as the partitioner sums them
 * (partition.h: state + inflight x act + max peak), each from
 * memory_stage() with that part alone (so the reserve's fragmentation share
 * lands on the activations and transient bytes, and routed-expert states
 * shard over their own group, as evaluate() has them): the states of its
 * parameters (with ZeRO-3 the gathered weights that grow with the stage's
 * parameters), one micro-batch of its activations, its transient bytes
 * (`peak`; with ZeRO-3 also the gathered unit of `unit` parameters per
 * GPU). */
static void layer_memory(const stage_memory_in *base, double params, double expert,
                         double act, double peak, double unit, const gather_terms *g,
                         double *st_out, double *act_out, double *peak_out)
{
    stage_memory_in in = *base;
    memory_breakdown mb;
    in.reserve_bytes = in.grad_transient_bytes = 0;   /* per stage, not per layer */
    in.params = params;
    in.expert_params = expert;
    in.act_bytes = in.inflight = 0;
    in.extra_bytes = gathered(g, params, 0, 0, 0);
    memory_stage(&in, &mb);
    *st_out = mb.total_bytes;
    in.params = in.expert_params = 0;
    in.act_bytes = act;
    in.inflight = 1;
    in.extra_bytes = 0;
    memory_stage(&in, &mb);
    *act_out = mb.total_bytes;
    in.act_bytes = in.inflight = 0;
    in.extra_bytes = peak + gathered(g, 0, unit, g->vocab, 0);
    memory_stage(&in, &mb);
    *peak_out = mb.total_bytes;
}

/* Layer i's terms of the partition problem (partition.h) from table e:
 * time, states and, through layer_memory(), its activations and transient
 * bytes, as a range of one layer (recomputed, with full recompute); with
 * `lead` (block recompute) those are the leading layers' and the plain
 * terms are the layer's without recompute (the kept rows), freed what it
 * frees of a leading layer's peak when the backward reaches the re-runs:
 * its activations beyond its input (layer_cost.c range_on's `freed`). */
enum { LT_TIME, LT_STATE, LT_ACT, LT_PEAK, LT_LTIME, LT_LACT, LT_LPEAK, LT_FREED, LT_N };

static void layer_row(const placer *pc, const cost_entry *e, bool lead, int i,
                      const stage_memory_in *base, const gather_terms *gt, int tp,
                      double v[LT_N])
{
    double unit = 0;   /* ZeRO-3's gathered unit: the row's largest layer */
    for (int l = i * pc->unit; l < (i + 1) * pc->unit && l < pc->L; l++)
        if (tf_layer_params(pc->m, l) / tp > unit)
            unit = tf_layer_params(pc->m, l) / tp;
    memset(v, 0, LT_N * sizeof *v);
    layer_memory(base, e->params[i], e->expert[i], e->act[i], e->peak[i], unit, gt,
                 &v[LT_STATE], &v[LT_ACT], &v[LT_PEAK]);
    v[LT_TIME] = e->t[i];
    if (!lead)
        return;
    v[LT_LTIME] = v[LT_TIME];
    v[LT_LACT] = v[LT_ACT];
    v[LT_LPEAK] = v[LT_PEAK];
    layer_memory(base, e->params[i], e->expert[i], e->kact[i], e->kpeak[i], unit, gt,
                 &v[LT_STATE], &v[LT_ACT], &v[LT_PEAK]);
    v[LT_TIME] = e->kt[i];
    v[LT_FREED] = v[LT_ACT] > v[LT_LACT] ? v[LT_ACT] - v[LT_LACT] : 0;
}

/* One member's layer terms into the problem's row o: the first member's
 * (keep), else each the larger of the two -- what a layer frees the
 * smaller (a stage spanning groups is bound by its fullest member). */
static void layer_terms(placer *pc, const cost_entry *e, bool lead, size_t o,
                        const stage_memory_in *base, const gather_terms *gt, int tp, bool keep)
{
    double *dst[LT_N] = {pc->pt, pc->pst, pc->pact, pc->ppeak,
                         pc->plt, pc->plact, pc->plpeak, pc->pfreed};
    for (int i = 0; i < pc->n; i++) {
        double v[LT_N];
        size_t at = o + (size_t)i;
        if (i > 0 && keep && e->params[i] == e->params[i - 1] &&
            e->expert[i] == e->expert[i - 1] && e->act[i] == e->act[i - 1] &&
            e->peak[i] == e->peak[i - 1] && e->t[i] == e->t[i - 1] &&
            (!lead || (e->kt[i] == e->kt[i - 1] && e->kact[i] == e->kact[i - 1] &&
                       e->kpeak[i] == e->kpeak[i - 1]))) {
            for (int q = 0; q < LT_N; q++)   /* a layer like the one before */
                v[q] = dst[q][at - 1];
        } else {
            layer_row(pc, e, lead, i, base, gt, tp, v);
        }
        for (int q = 0; q < LT_N; q++)
            if (keep || (q == LT_FREED ? v[q] < dst[q][at] : v[q] > dst[q][at]))
                dst[q][at] = v[q];
    }
}

/* One member's per-layer terms (the partition problem's row o), end-stage
 * terms and ZeRO-2 gradient buckets (*transient, a middle stage's fixed
 * bytes with the reserve); *first: the first member (set), else the larger kept (a
 * stage spanning groups is paced by its slowest member, bound by the
 * fullest: AMP's model). */
static void member_terms(placer *pc, const node_group *g, const cost_key *key, size_t o,
                         const strategy *s, int tp, bool *first, double *ext_t,
                         double *ext_fb, double *transient)
{
    const int L = pc->n, cp = s->cp > 0 ? s->cp : 1;
    const stack_gather kind = stack_get(pc->c->stack)->memory.gather;
    const gather_terms gt = {memory_zero3_gathers(s->zero, s->dp * cp), kind, pc->m->prec, s->pp,
                            tp, (double)pc->m->vocab * pc->m->hidden / tp,
                            memory_gathered_weight_bytes(kind, &g->gpu, pc->m->prec, s->zero,
                                                         s->opt_state,
                                                         pc->m->fsdp_fp8_gather && s->dp > 1)};
    stage_memory_in base = {pc->m->prec, s->zero, s->dp * cp, strategy_expert_dp(s, tp), 0, 0, 0,
                            0, 0, 0, pc->p->frag_fraction, g->gpu.usable_mem_bytes, 0,
                            s->grad_reduce_bf16,
                            memory_fp8_weights_single(&g->gpu, pc->m->prec, s->zero, s->opt_state),
                            s->opt_state,
                            memory_fp8_weight_cache_bytes(stack_get(pc->c->stack), &g->gpu,
                                                          pc->m->prec, s->zero, s->opt_state),
                            0};
    const cost_entry *e = costs(pc, key, g, s);   /* read at once: a later miss may evict it */
    const bool keep = *first;
    double stage_params = 0;
    /* ZeRO-2's gradient buckets in flight: a per-stage term, taken at the
     * average stage's parameters (the split is not known yet) */
    for (int i = 0; i < L; i++)
        stage_params += e->params[i] / (s->pp > 0 ? s->pp : 1);
    base.grad_transient_bytes = memory_grad_transient_bytes(stack_get(pc->c->stack), pc->m->prec,
                                                            s->grad_reduce_bf16,
                                                            s->zero, s->dp * cp, s->vpp,
                                                            stage_params);
    if (keep || base.grad_transient_bytes > *transient)
        *transient = base.grad_transient_bytes;
    layer_terms(pc, e, key->lead, o, &base, &gt, tp, keep);
    for (int x = 0; x < 3; x++) {
        memory_breakdown mb;
        stage_memory_in in = base;
        in.reserve_bytes = pc->p->reserve_bytes;
        in.params = e->ext_params[x];
        in.vocab_params = e->ext_vocab[x];
        in.extra_bytes =
            e->ext_peak[x] + gathered(&gt, e->ext_params[x], 0, 0, e->ext_params[x]) +
            (gt.on && x == 0 ? memory_fsdp2_embedding_grad_bytes(gt.kind, gt.pp, gt.tp, gt.vocab)
                             : 0);   /* the embedding's whole gradient */
        memory_stage(&in, &mb);
        if (keep || e->ext_t[x] > ext_t[x])
            ext_t[x] = e->ext_t[x];
        if (keep || mb.total_bytes > ext_fb[x])
            ext_fb[x] = mb.total_bytes;
    }
    *first = false;
}

/* Stage q's pipeline buffers (memory_pipe_buffers_bytes, the strategy's
 * vpp: 1 here, interleaving is refused), on every stage but the first the
 * input gradients its backwards leave (memory_pipe_input_grad_bytes) and,
 * on the last stage, the outputs it keeps (cost_kept_output_bytes;
 * both all m: no fewer than evaluate()'s schedule walk holds with the
 * rest) as memory_stage()
 * counts them: with the fragmentation share of activations, as evaluate()
 * has them.  FSDP2's accumulated gradients stay whole in the per-layer
 * terms (memory_zero3_gathered_bytes), at least what the walk holds. */
static double pipe_buffer_bytes(const placer *pc, const strategy *s, int tp, int mcount, int q,
                                double inflight)
{
    stage_memory_in in;
    memory_breakdown mb;
    const stack_pipe pipe = stack_get(pc->c->stack)->memory.pipe;
    const double boundary = cost_boundary_bytes(pc->m, s, tp, pc->c->stack);
    memset(&in, 0, sizeof in);
    in.prec = pc->m->prec;
    in.frag_fraction = pc->p->frag_fraction;
    in.extra_bytes = memory_pipe_buffers_bytes(pipe, boundary, mcount, inflight, s->pp, s->vpp, q);
    if (q > 0)   /* the input gradients its backwards leave, all m */
        in.extra_bytes += mcount * memory_pipe_input_grad_bytes(pipe, boundary);
    if (q == s->pp - 1)   /* the last stage's kept outputs */
        in.extra_bytes += mcount * cost_kept_output_bytes(pc->m, s, tp, pc->c->stack);
    memory_stage(&in, &mb);
    return mb.total_bytes;
}

/* Class k of the partition problem: stages [from, to) on the groups of
 * `mx` (mx->n 1: one group with all of its stages' GPUs) with TP degree
 * tp: the per-layer times and memory terms, and each stage's class, fixed
 * time (the embedding / output layer on the end stages), fixed bytes (the
 * reserve, and the end stages' extra states and transient bytes), micro-
 * batches in flight and capacity (the smallest member's). */
static void class_terms(placer *pc, const stage_mix *mx, int tp, int k, int from, int to,
                        const strategy *s, int mcount)
{
    const int P = s->pp, cp = s->cp > 0 ? s->cp : 1;
    size_t o = (size_t)k * (size_t)pc->n;
    double ext_t[3] = {0, 0, 0}, ext_fb[3] = {0, 0, 0}, cap = HUGE_VAL, transient = 0;
    unsigned long long span = 0;
    bool first = true;
    for (int j = 0; mx->n > 1 && j < mx->n; j++)
        span |= 1ull << (mx->group[j] % 64);
    for (int j = 0; j < mx->n; j++) {
        node_group view;
        const node_group *g = &pc->c->group[mx->group[j]];
        cost_key key = {mx->group[j], tp, cp, s->mbs, s->seq_len, (int)s->recompute,
                        cost_recompute_lead_layers(s) > 0, pc->unit, s->sp,
                        s->tp_comm_overlap, s->ep_comm_overlap, span,
                        mx->n > 1 ? mx->gpus[j] : 0, s->ep, s->etp, (int)s->cp_comm, s->cp_a2a,
                        s->recompute_modules, s->flex_dispatcher, s->cuda_graph,
                        s->shared_expert_overlap, s->te_moe_graphs, {0}};
        if (mx->n > 1) {
            cost_member_view(pc->c, mx, j, &view);
            cost_member_ep_span(mx, j, s, &key.eps);
            g = &view;
        }
        member_terms(pc, g, &key, o, s, tp, &first, ext_t, ext_fb, &transient);
        if (g->gpu.usable_mem_bytes < cap)
            cap = g->gpu.usable_mem_bytes;
    }
    for (int q = from; q < to; q++) {
        int x = P == 1 ? 2 : q == 0 ? 0 : q == P - 1 ? 1 : -1;
        pc->cls[q] = k;
        pc->ft[q] = x >= 0 ? ext_t[x] : 0;
        pc->fb[q] = x >= 0 ? ext_fb[x] : pc->p->reserve_bytes + transient;
        pc->infl[q] = memory_inflight(stack_get(pc->c->stack)->memory.pipe, P, 1, mcount, q);
        pc->fb[q] += pipe_buffer_bytes(pc, s, tp, mcount, q, pc->infl[q]);
        pc->cap[q] = cap;
    }
}

/* The classes of placement pl's stages into pc (one per part; packed: one
 * per run of stages on the same groups), each stage's groups into mix[],
 * and the class count; -1 when there are more than PLACEMENT_MAX_PARTS
 * classes or a stage cannot be laid out. */
static int place_terms(placer *pc, const placement *pl, const strategy *s, int mcount,
                       stage_mix *mix)
{
    int K = 0, stage = 0;
    long unit = (long)s->tp * (s->cp > 0 ? s->cp : 1) * s->dp;
    if (!pl->packed) {
        for (int k = 0; k < pl->n_parts; k++) {
            const placement_part *pp = &pl->part[k];
            stage_mix one = {0, 1, {pp->group, 0, 0, 0}, {0, 0, 0, 0}};
            class_terms(pc, &one, pp->tp > 0 ? pp->tp : s->tp, k, stage,
                        stage + pp->n_stages, s, mcount);
            for (int q = 0; q < pp->n_stages; q++)
                mix[stage++] = one;
        }
        return pl->n_parts;
    }
    for (int q = 0, from = 0; q <= pl->pp; q++) {
        if (q < pl->pp && placement_stage_members(pc->c, pl, unit, q, &mix[q]) != 0)
            return -1;
        if (q > 0 && (q == pl->pp || memcmp(&mix[q], &mix[q - 1], sizeof mix[q]) != 0)) {
            if (K == PLACEMENT_MAX_PARTS)
                return -1;
            class_terms(pc, &mix[q - 1], s->tp, K++, from, q, s, mcount);
            from = q;
        }
    }
    return K;
}

/* The ILP's split (--partition ilp): the DP's optimum first, which bounds
 * the bottleneck from below, so the ILP only has to trade the fill and
 * drain against it; the DP's split when the ILP gives none. */
static partition_status solve_ilp(placer *pc, partition_problem *pb, int mcount)
{
    partition_status st = partition_dp(pb, &pc->ws, &pc->res);
    if (st == PARTITION_NOMEM)
        return st;
    pb->bottleneck_lb = pc->res.bottleneck_s * (1 - 1e-9);
    pb->fill_weight = mcount > 1 ? 1.0 / (mcount - 1) : 0;
    pb->mip_gap = PLACER_ILP_GAP;
    if (st == PARTITION_OK) {
        pc->st.ilp_solves++;
        st = partition_ilp(pb, pc->ilp_limit_s, &pc->res);
    }
    if (st == PARTITION_OK && !pc->res.optimal)
        pc->st.ilp_not_optimal++;
    if (st == PARTITION_NOMEM)
        return st;
    pb->fill_weight = pb->bottleneck_lb = pb->mip_gap = 0;
    if (st != PARTITION_OK && st != PARTITION_INFEASIBLE) {
        pc->st.ilp_fallbacks++;
        st = partition_dp(pb, &pc->ws, &pc->res);
    }
    return st;
}

/* Solves pb with the chosen solver; when nothing fits, the closest miss
 * (placer_balance_misses) or the fastest split. */
static partition_status solve(placer *pc, partition_problem *pb, int P, int mcount,
                              bool use_ilp)
{
    partition_status st;
    pc->st.partitions++;
    if (use_ilp && P > 1 && pb->lead_layers == 0)   /* leading layers: the DP's */
        st = solve_ilp(pc, pb, mcount);
    else
        st = partition_dp(pb, &pc->ws, &pc->res);
    pc->memory_shaped = (use_ilp && P > 1 && pb->lead_layers == 0) || st != PARTITION_OK ||
                        pc->res.cut_time_s < pc->res.bottleneck_s;
    if (st == PARTITION_INFEASIBLE && pc->balance_misses) {
        st = closest_split(pc, pb, P);
    } else if (st == PARTITION_INFEASIBLE) {
        pb->capacity_bytes = pc->nocap;   /* the fastest split */
        st = partition_dp(pb, &pc->ws, &pc->res);
    }
    return st;
}

/* Writes the split into s's stages, each on its groups (mix[]) with the
 * TP degree of its part (packed: the strategy's). */
static void set_stages(placer *pc, const placement *pl, strategy *s, int P,
                       const stage_mix *mix)
{
    int first = 0, part = 0, in_part = 0;
    s->n_stages = P;
    s->n_mixes = 0;
    for (int q = 0; q < P; q++) {
        stage_spec *ss = &s->stage[q];
        int tp = s->tp;
        if (!pl->packed) {
            while (part < pl->n_parts - 1 && in_part >= pl->part[part].n_stages) {
                part++;
                in_part = 0;
            }
            in_part++;
            tp = pl->part[part].tp > 0 ? pl->part[part].tp : s->tp;
        }
        ss->group = mix[q].group[0];
        if (mix[q].n > 1 && s->n_mixes < STRATEGY_MAX_MIXES) {
            s->mix[s->n_mixes] = mix[q];
            s->mix[s->n_mixes++].stage = q;
        }
        ss->tp = tp;
        ss->dp = s->dp;
        ss->first_layer = first;
        ss->n_layers = pc->res.n_layers[q] * pc->unit;
        first += ss->n_layers;
    }
}

planner_status placer_place_with(placer *pc, const placement *pl, strategy *s, bool use_ilp,
                                 planner_error *err)
{
    const int L = pc->L, unit = cost_recompute_group_layers(s);
    int P = placement_stages(pl), K = pl->n_parts;
    int mcount = strategy_microbatches(s);
    partition_problem pb;
    partition_status st;

    if (L % unit != 0)
        WHY("uniform recompute of %d layers does not divide the %d layers", unit, L);
    pc->unit = unit;
    pc->n = L / unit;
    if (K < 1 || K > (pl->packed ? PLACEMENT_MAX_PACKED : PLACEMENT_MAX_PARTS))
        WHY("placement of %d parts", K);
    if (P != s->pp)
        WHY("placement has %d stages, pp is %d", P, s->pp);
    if (P < 1 || P > STRATEGY_MAX_STAGES || P > pc->n)
        WHY("pp %d: each of the %d stages needs %d layer%s (%d layers)", P, P, unit,
            unit > 1 ? "s" : "", L);
    if (s->vpp > 1)
        WHY("interleaving (vpp %d) needs an even split of the layers", s->vpp);
    if (mcount < 1)
        mcount = 1;
    for (int k = 0; k < K; k++)
        if (pl->part[k].group < 0 || pl->part[k].group >= pc->c->n_groups ||
            (!pl->packed && pl->part[k].n_stages < 1))
            WHY("placement part %d: no group %d or no stages", k, pl->part[k].group);
    K = place_terms(pc, pl, s, mcount, pc->mix);
    if (K < 1)
        WHY("a stage spans more than %d node groups, or the placement has more than %d "
            "classes", STAGE_MIX_MAX, PLACEMENT_MAX_PARTS);

    pb = (partition_problem){pc->n, P, K, pc->cls, pc->pt, pc->pst, pc->pact, pc->ppeak, pc->ft,
                             pc->fb, pc->infl, pc->cap, 1, NULL, 0, 0, 0,
                             cost_recompute_lead_layers(s), pc->plt, pc->plact, pc->plpeak,
                             pc->pfreed};
    if (pb.lead_layers > pc->n)
        pb.lead_layers = pc->n;
    st = solve(pc, &pb, P, mcount, use_ilp);
    if (st == PARTITION_NOMEM)
        return error_oom(err);
    if (st == PARTITION_LIMIT) {
        pc->st.limit_stops++;
        WHY("the search's work limit was reached");
    }
    if (st != PARTITION_OK)
        WHY("layer partition: %s", partition_status_name(st));
    set_stages(pc, pl, s, P, pc->mix);
    return PLANNER_OK;
}

#undef WHY
