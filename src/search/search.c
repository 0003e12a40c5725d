/* search.c: enumerate parallel layouts, evaluate each with the cost model,
 * keep the best feasible ones.
 *
 * THE SPACE (Megatron-LM core_v0.15.0 knobs; rules from strategy_check()).
 * GPUs N: every GPU of the node group planned on, or --fix gpus=N; when tp,
 * pp and dp are all fixed (and gpus is not), N = tp * cp * pp * dp.  Per node
 * group, then, with several groups, the placements across groups
 * (search_placements in the placement seam: stages on 2+ groups, layers
 * split by the partitioner; the best plan wins either way):
 *   tp   powers of two up to the group's NVLink domain (max of GPUs per node
 *        and the catalog's nvlink_domain), dividing heads and kv_heads
 *   cp   powers of two with seq % (2 cp) == 0 (Megatron's load-balanced
 *        causal CP: 2 cp chunks) and seq / cp >= SEARCH_CP_MIN_TOKENS
 *   ep   1 (dense); MoE: divisors of the experts
 *        that divide tp cp dp (knob_rule; ep_list), on placements across
 *        node groups too (an EP group spanning GPU types: its all-to-all at
 *        its slowest member's links, layer_cost.c ep_mixed_a2a_s)
 *   etp  1 (dense); MoE: 1 and tp (Megatron's two settings: experts not
 *        tensor-parallel, and its default etp = tp, the etp group then the
 *        TP group's consecutive ranks) where knob_rule admits it (etp_list);
 *        on placements across node groups 1 unless fixed.  Other etp
 *        (powers of two up to the NVLink domain) tripled the MoE searches
 *        and stopped DeepSeek-V3's on 2048 H800 at the work limit: --fix
 *        etp=N tries them
 *   pp   1..layers with tp * cp * pp dividing N;  dp = N / (tp cp pp); when
 *        pp does not divide the layers (or the model is uneven) the layers
 *        are split by the partitioner (placement.c, partition_dp.c)
 *   mbs  divisors of gbs / dp, ascending
 *   vpp  1, and with pp > 1 and microbatches % pp == 0 every divisor > 1 of
 *        layers / pp (layers per virtual chunk stays whole), and every
 *        d > 1 with (layers + 2) % (pp d) == 0: Megatron's
 *        --account-for-embedding/loss-in-pipeline-split, the embedding and
 *        the loss one layer each (strategy_split_account; Llama 3.1 405B's
 *        126 layers at pp 8: vpp 2, 4, 8, 16); on placements across node
 *        groups powers of two up to SEARCH_PLACED_VPP_MAX and layers / pp
 *        (place_interleaved)
 *   sp   on, off (tp > 1 only; with MoE layers on only: Megatron's rule,
 *        its candidates counted refused, sp_refused)
 *   recompute none, selective (core_attn; then the
 *        memory-saving modules of the model, rc_save_modules), full; with full
 *        recompute_layers 0 (every layer) and the fewest layers per chunk N
 *        of Megatron's block recompute that fit (P7); uniform only fixed
 *   zero 3, 2, 1, 0 (dp * cp > 1; otherwise 0 only, see P5)
 *   cp_comm p2p, a2a, all_gather, a2a+p2p with cp > 1 (the rules and the
 *   stack allowing; P6); a2a+p2p's cp_a2a the largest in one NVLink domain
 *   flex_dispatcher off (alltoall) and, on MoE blocks where its rule (ep > 1)
 *   and the stack allow it, on (DeepEP/HybridEP: search_block; P10);
 *   te_moe_graphs follows it (set_derived: on where it saves host time)
 *   overlap_grad_reduce when dp * cp > 1; overlap_param_gather when also
 *   zero >= 1; tp_comm_overlap when sp (unless --fix pins them; recompute_layers
 *   and recompute_method: their --fix values with full recompute).
 *   Every list and derived flag holds only the values the software stack has
 *   and, with opts.validated_only (validate), that a measured run validates
 *   (space_allows).  A --fix value replaces a knob's
 *   list by that one value (outside the limits above too: tp=16 on 8-GPU
 *   nodes is evaluated) and strategy_check() judges it.
 *
 * PRUNES.  Each skips only candidates that cannot rank, assuming what the
 * cost model guarantees physically: a stage's memory never grows when the
 * micro-batch shrinks, the ZeRO stage rises from 0 to 1, recompute goes
 * none -> selective -> full, SP turns on, or interleaving is off (vpp 1); and
 * recomputation never makes a step faster.  ZeRO-3 is a family of its own:
 * it shards the weights but holds gathered-parameter buffers, so it may need
 * more memory than ZeRO-2.  ZeRO-2 shards the gradients but holds unsharded
 * gradient buckets in flight (memory_grad_transient_bytes): it continues the
 * chain 0 -> 1 -> 2 when every stage holds enough parameters for the
 * sharding to outweigh the buckets (zero2_within_zero1), else it is a family
 * of its own too.  tests/test_search.c checks these assumptions on
 * the cost model and runs the pruned and the exhaustive search
 * (opts.exhaustive) side by side: same winner.
 *   P1 block probe: for each (group, tp, cp, pp, dp, ep) the memory-minimal
 *      variant of each ZeRO family (smallest mbs, vpp 1, sp on, full
 *      recompute, zero 3 / the highest of 2-0, or zero 3 / 2 / the highest of
 *      1-0 when ZeRO-2 is a family of its own, or the fixed values) is
 *      evaluated first; if none fits, no variant does and the block is
 *      skipped.
 *   P2/P3 known misses: a candidate is not evaluated when a variant that
 *      needs no more memory did not fit: the same knobs at a smaller or equal
 *      mbs, with vpp 1 instead of its vpp, sp on instead of off, a higher
 *      ZeRO stage in its family, or more recompute.  mbs runs up, zero 3, 2,
 *      1, 0.
 *   P4 recompute: recompute runs none, selective, full; once one fits, the
 *      later (slower on the same split, same everything else) ones are
 *      skipped when the one that fits cannot enter the top N (the most of
 *      its candidates' objectives, fit_ub: a slower level may still rank
 *      behind it) -- unless the one that fits uses an unvalidated
 *      recompute value and the later one a validated value (which may
 *      rank first: RANKING).  The split is the same when the rules make it (even,
 *      embedding/loss-accounting, layout), or when the placer's split of
 *      the level that fits is the least bottleneck of any split memory
 *      ignored (placer_memory_shaped false: the later level's split is no
 *      faster for it).  Where memory may have shaped it (a level that fits
 *      only on a memory-skewed split: Llama 3.1 405B at seq 8192, tp 8 pp 8
 *      vpp 1 on 1,024 H100 without dropout masks fits without recompute at
 *      141.1k tokens/s, block recompute of 7 layers on the balanced split
 *      runs 167.5k), the later level is placed: skipped on the same split,
 *      else screened by evaluate_bound like P8 (with its one K/V type; on
 *      memory alone for full recompute, whose block variants P7 searches)
 *      and evaluated.
 *   P6 cp_comm (cp > 1, not fixed): p2p, and each other K/V exchange
 *      type (a2a, all_gather, a2a+p2p) unless another type's attention
 *      layer is no slower and holds no more memory (kept and transient
 *      bytes) (cp_comm_list), or a type whose layer is no faster fits, and
 *      the types evaluated cannot enter the top N (try_comm_types); every
 *      type on models with uneven layers.
 *   P5 dp * cp = 1: ZeRO stages 1-3 shard over one rank, the same plan as
 *      zero 0; only zero 0 is enumerated (unless zero is fixed).
 *   P9 vpp > 1 on placements across node groups (interleaving the
 *      placer's vpp-1 split, place_interleaved; no full recompute, whose
 *      block variants P7 searches): a candidate is skipped when the vpp-1
 *      plan with the same other knobs -- its K/V exchange type and MoE
 *      overlaps too, and placed on the same split -- could not rank even
 *      without its pipeline bubble (flat_bound; throughput only).  A knob
 *      the rules tie to vpp is not the same: Megatron's all-to-all overlap
 *      needs vpp > 1 with pp > 1 (knobs.c ep_overlap_rule), so a vpp-1
 *      plan never bounds an overlapped one (Qwen3-30B-A3B on mixed3x1024:
 *      tp 1 pp 2 ep 16 vpp 2 without recompute, 6.75M tokens/s, was
 *      dropped by its vpp-1 plan's 5.6M); nor does a vpp-1 plan on the
 *      placer's memory-balanced split for a miss (placed_balanced), slower
 *      than the split a vpp > 1 plan gets once plans fit.
 *   P7 block recompute: once full recompute of every layer fits, block N
 *      for N = 1 .. n - 1 (n: the most layers of a chunk): memory is
 *      non-increasing and time non-decreasing in N, so the fewest that fit
 *      ranks first; bisection on memory alone (evaluate_bound) finds it,
 *      and it is evaluated unless a bound on its tokens/s cannot enter the
 *      top N, then N + 1, N + 2 ... while the last one evaluated could
 *      enter it (search_rc_layers).
 *   P9 the MoE overlaps (ep_comm_overlap, and where it cannot run
 *      shared_expert_overlap; not fixed; Megatron takes one or the other):
 *      the plan with the overlap is evaluated first; the same plan without
 *      it (no faster, the same memory) only when the first fits and could
 *      rank within the near-tie margin (overlap_off_cannot_rank).
 *   P10 the token dispatcher: each MoE block runs once with the alltoall
 *      dispatcher and once with the flex one (search_block: no cost
 *      ordering between them is guaranteed); the flex one needs no less
 *      memory (the same, but where the router graphs keep the MoE layers'
 *      pre-MLP norm: knobs.c knob_moe_norm_recomputed), so when P1 finds
 *      that no variant fits under the first, the second is skipped.
 *   P11 the flex pass of an MoE block (P10) bounded by its alltoall pass:
 *      a flex plan is no faster than its alltoall twin / (1 - share), share
 *      the largest fraction of a decoder layer's forward or backward the
 *      flex twin saves, on the same layer split (the argument of P7's
 *      recompute_share); a level of a cell whose bound (or no recompute's)
 *      cannot rank is skipped -- before it is placed where the split is the
 *      rules', after where the placer's matches its twin's -- and what it
 *      would have told P2-P8 comes from its twin (twin_skips); a level
 *      whose twin missed misses too (P10's premise) and is skipped unplaced
 *      once N plans fit (no miss is reported then).  Throughput,
 *      one node group.  tests/test_search.c flex_pass_skips_exactly: the
 *      same top 10 without it.  Before any bound, a level whose every K/V
 *      type and MoE overlap the rules refuse is not screened by
 *      evaluate_bound (level_refused: nothing there is evaluated).
 *   P8 selective recompute of the memory-saving modules is slower than no
 *      recompute: not tried when that variant's objective cannot rank (no
 *      recompute's miss, unless on the placer's memory-balanced split for a
 *      miss, which is no bound); and
 *      evaluate_bound (memory exactly, a lower bound on the step) screens
 *      it first: a miss, or a bound that cannot rank, is not evaluated.
 *
 * RANKING: objective (tokens/s; or, with --objective, goodput = tokens/s x
 * ETTR, time to train (the same order) or goodput per GPU-hour price: see
 * objective_score), higher first -- a plan counts its objective
 * SEARCH_VALIDATED_TIE (1%) lower for each knob value it uses that no
 * measured run validates (knobs_unvalidated_count, search_rank_score), so
 * near-ties go to the plan with fewer unvalidated knobs, and an exact tie of
 * the counted objectives too (search.h) -- then the deterministic
 * tie-break, in this order: lower peak memory per GPU, then the simpler plan:
 * smaller pp, smaller tp, smaller cp, smaller ep, smaller etp, smaller vpp, larger mbs,
 * sp on before off, less recompute, lower zero stage, the alltoall token
 * dispatcher before flex (Megatron's recipes' default: a flex plan must be
 * faster to rank first; one that only ties its alltoall twin is not kept,
 * flex_twin_kept), lower group index.
 * The top N are kept as strategies and evaluated again at the end
 * (evaluate() is deterministic), so a search holds N strategies, not N
 * evaluations; that final evaluation also keeps the schedule it simulated
 * (search_result.sched), which --trace and --svg replay.
 *
 * A prediction that is not finite and positive (absurd inputs: a bandwidth or
 * peak near 0) is not ranked; it counts as invalid and the advice says so.
 *
 * NOTHING FITS: the closest miss is the evaluated strategy with the smallest
 * peak memory / usable memory ratio; the advice re-evaluates its variants
 * (full recompute, mbs 1, ZeRO-3, all three) and searches the same space on
 * 2x, 4x ... 64x the nodes, and names catalog GPUs with enough memory.
 *
 * PARALLEL (-j N, search_options.jobs).  The blocks (group, tp, cp, pp, dp,
 * ep, etp; on placements across groups, each placement's) are listed in
 * the order above as units and searched in batches of 1, 2, 4, ... then
 * SEARCH_BATCH (32) units on the worker threads (base/workers.h; the first
 * small batches fill the top N before many units start without a bound;
 * the sizes never depend on -j).  Every unit of a batch starts from the
 * search as it stood at the batch's start: the kept plans (read-only,
 * shared: top_worst bounds cannot_rank by them and the unit's own), the
 * count of plans that fit (while none does, the placer splits a miss for
 * memory balance: placer_balance_misses), the work done; it
 * runs on its own copy of the state with its worker's placer (its cost
 * tables forgotten first, so a unit's work never depends on what the
 * placer served before) and memo (whose ranges cost the same remembered or
 * not).  After the batch, the units are merged in their order (unit_merge):
 * counts, the first refusal of each rule, the closest miss, the best plan
 * per kind of placement, and the plans each kept, offered to the ranking in
 * their order.  Nothing depends on the number of threads or the
 * scheduling: the report is the same for every N.  The prunes stay safe: a
 * unit prunes against the top N of a subset of the candidates the search
 * has evaluated, whose N-th is no better than the whole search's, so what
 * it drops cannot rank at the end (it prunes less than a search of one
 * block after another, and evaluates a few more candidates: DeepSeek-V3 on
 * 512 H100 81,002 instead of 80,726, GPT-3 175B 4,495 instead of 4,423;
 * the plans are the same).
 * The work limit: a unit that would take the search past it is searched
 * again from where the merged search stands, so it stops where a search
 * of one block after another would.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "base/alloc.h"
#include "base/workers.h"
#include "cost/memory.h"
#include "model/transformer.h"
#include "partition/placement.h"
#include "base/progress.h"
#include "model/layout.h"
#include "search/search.h"
#include "base/suggest.h"
#include "base/text.h"

#define MAX_LIST 128          /* values of one knob in one block */
/* The recompute levels, by the memory they need (most first; levels hold
 * their index in block_lists.rc): none; selective of core attention
 * (Megatron's default; with flash attention it keeps as much as none);
 * selective of the memory-saving modules the model has (rc_save_modules:
 * layernorm and moe_act for MoE layers, mlp for dense ones); full (every
 * layer, then block N: P7). */
enum { RC_LEVEL_NONE, RC_LEVEL_SEL_ATTN, RC_LEVEL_SEL_SAVE, RC_LEVEL_FULL, RC_COUNT };
#define ZERO_COUNT 4
#define ZERO_FAMILIES 3       /* prune families: zero 0-1, 2, 3 */
/* PARALLEL: blocks searched at a time, whatever -j is (after the first
 * batches of 1, 2, 4, ...) */
#define SEARCH_BATCH 32


/* P11: what the alltoall pass of a block found at one recompute level of
 * one (mbs, vpp, sp, zero) cell, for the block's flex pass (twin_skips). */
typedef struct twin_level {
    bool evaluated;           /* try_comm_types ran there */
    signed char fit;          /* its result: 1 a candidate fits, 0 none, -1 none valid */
    double ub;                /* a bound on the tokens/s of every flex twin of the
                                 level's candidates on its split (0: none found) */
} twin_level;

/* P11: the alltoall pass's levels of one block, [mbs][vpp][sp][zero][rc]
 * by list index, and each level's layer split (pp stages). */
typedef struct twin_table {
    int n_mbs, n_vpp, n_sp, n_zero, pp;
    twin_level *lv;
    short *split;
    double *share;            /* flex_share by [mbs][sp][rc][cp_comm][overlaps]
                                 (what a layer's cost reads of the cell), -1
                                 until found */
} twin_table;

/* One kept strategy and its ranking keys. */
typedef struct top_entry {
    strategy s;
    double score;             /* objective value, higher is better */
    double peak_bytes;
} top_entry;

/* The state of one search. */
typedef struct search_ctx {
    const model *m;
    const cluster *c;
    const cost_params *p;
    const search_options *o;
    strategy_constraints fix;
    double min_unit_params;   /* the fewest dense parameters a stage holds:
                                 one decoder layer or the embedding, tp 1 */
    int gbs, seq_len;
    int gpus;                 /* N, GPUs per plan */
    int group;                /* node group being planned on */
    bool flex;                /* the block's token dispatcher is flex
                                 (search_block's pass; set_derived) */
    bool twins_on;            /* P11: the block keeps its alltoall pass's levels */
    twin_table *twins;        /* ... here (NULL: none) */
    bool twin_tmg;            /* P11: the router graphs of x->s's flex twin */
    double twin_ub;           /* P11: the level's bound so far (try_comm_types) */
    const struct block_cell *twin_cell;   /* P11: the cell and level searched */
    int twin_rc;
    bool exhaustive;
    bool stop_at_feasible;    /* advice: any feasible plan ends the search */
    bool found;               /* stop_at_feasible: one was found */
    int top_cap;
    /* the kept plans: pool[order[0]] is the best */
    top_entry *pool;
    int *order;
    int n_top, pool_cap;
    long candidates, feasible, invalid, pruned;
    /* candidates the rules refused (invalid in all), [0] Megatron's and [1]
     * the stack's own (stack_spec.rules: knob_stack_rule), by the rule's
     * knob ([KNOB_COUNT]: the layer split), with the first one's message */
    long refused[2][KNOB_COUNT + 1];
    char refused_why[2][KNOB_COUNT + 1][ERROR_MSG_MAX];   /* a rule's first message */
    long invalid_stack;       /* of invalid, those the stack's rules refused */
    bool first_by_stack;      /* first_invalid is a stack rule's refusal */
    /* closest miss */
    bool have_miss;
    double miss_ratio, miss_score, miss_peak;
    strategy miss;
    char first_invalid[ERROR_MSG_MAX + 64];   /* the plan and its rule's whole message */
    /* placement seam: the placement of the block being searched (NULL:
     * every stage on x->group), the placer (per-layer cost cache, partition
     * workspace; made on first use), the best plan on one group [0] and
     * across groups [1] */
    const placement *placement;
    placer *placer;
    plan ilp;                 /* --partition ilp: a re-partitioned plan */
    bool have_best[2];
    double best_score[2];
    strategy best[2];
    /* the search's start */
    double t0;
    /* scratch */
    strategy s;
    evaluation e;
    planner_error *err;
    bool shaped;              /* the last place()'s split is the placer's,
                                 and memory may have shaped it
                                 (placer_memory_shaped: P4) */
    bool placed_balanced;     /* the placer was asked for the memory-balanced
                                 split of a miss (placer_balance_misses: P8) */
    short fit_split[STRATEGY_MAX_STAGES];   /* P4: the fitting level's split */
    int fit_split_n;
    bool oom;
    bool limited;             /* the work limit stopped the search */
    bool broken;              /* a prediction was not finite (first_invalid) */
    double eval_work;         /* the evaluations' share of the work */
    eval_memo *memo;          /* layer-range costs across the candidates
                                 (evaluate_with; made on first use, NULL
                                 with search_options.eval_memo_off) */
    /* PARALLEL: a block searched as a unit of a batch.  The kept plans as
     * of the batch's start (the search's, read-only while the batch runs):
     * the best base_live of them still rank among the top N with the
     * unit's own (pool, order, n_top); the search's plans and work then */
    const top_entry *base_pool;
    const int *base_order;
    int base_live;
    long feasible_before;
    double work_before;
    long long placer_start;   /* placer_work when the unit began */
    double work_limit;        /* the search's (search_options.work_limit);
                                 a unit's: its share of what is left */
    struct worker_scratch *scratch;   /* each worker's placer and memo
                                         (the search's; NULL: none yet) */
} search_ctx;

/* The search's work in DP steps (search_options.work_limit). */
static double search_work(const search_ctx *x)
{
    return x->work_before + x->eval_work +
           (x->placer != NULL ? (double)(placer_work(x->placer) - x->placer_start) : 0);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void search_options_default(search_options *opts)
{
    strategy_constraints none = STRATEGY_CONSTRAINTS_INIT;
    memset(opts, 0, sizeof *opts);
    opts->top_n = 10;
    opts->obj = OBJECTIVE_THROUGHPUT;
    opts->fix = none;
    opts->partition = PARTITION_DP;
    opts->ilp_time_limit_s = 10;
    opts->work_limit = SEARCH_WORK_LIMIT_DEFAULT;
    opts->megatron = MEGATRON_VERSION_DEFAULT;
    opts->jobs = 1;
}

void search_result_free(search_result *res)
{
    if (res == NULL)
        return;
    pl_free(res->top);
    pl_free(res->sched);
    res->top = NULL;
    res->sched = NULL;
    res->n_top = 0;
}

/* ---- placement seam ----------------------------------------------------- */

planner_status search_place_stages(const model *m, const cluster *c, int group, strategy *s,
                                   planner_error *err)
{
    int per_rank, per_chunk;
    if (group < 0 || group >= c->n_groups)
        return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL, "no node group %d", group);
    if (s->pp < 1 || s->pp > STRATEGY_MAX_STAGES)
        return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL, "pp %d is outside 1..%d", s->pp,
                         STRATEGY_MAX_STAGES);
    if (m->layers % s->pp != 0)
        return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL, "layers (%d) %% pp (%d) != 0",
                         m->layers, s->pp);
    per_rank = m->layers / s->pp;
    if (s->vpp < 1 || per_rank % s->vpp != 0)
        return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL,
                         "layers per pipeline rank (%d) %% vpp (%d) != 0", per_rank, s->vpp);
    per_chunk = per_rank / s->vpp;
    s->n_stages = s->pp;
    s->n_mixes = 0;
    for (int i = 0; i < s->pp; i++) {
        stage_spec *st = &s->stage[i];
        st->group = group;
        st->first_layer = i * per_chunk;   /* vpp 1: i * per_rank */
        st->n_layers = per_rank;
        st->tp = s->tp;
        st->dp = s->dp;
    }
    return PLANNER_OK;
}

/* The placement seam's failures: PLANNER_E_INPUT with the reason in *err
 * (err may be NULL: the search asks for the first invalid candidate's
 * message only). */
#define PLACE_FAIL(...) return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL, __VA_ARGS__)

/* A pinned layout (search_options.layout) on x->group: its pp and vpp
 * only, one node group. */
static planner_status place_layout(search_ctx *x, strategy *s, planner_error *err)
{
    const strategy *lay = x->o->layout;
    if (s->pp != lay->pp || s->vpp != lay->vpp || x->placement != NULL)
        PLACE_FAIL("the pinned layout is for pp %d vpp %d on one node group", lay->pp, lay->vpp);
    memcpy(s->layout_layers, lay->layout_layers, sizeof s->layout_layers);
    s->layout = true;
    strategy_stages_from_chunks(s, x->m->layers, x->group);
    return PLANNER_OK;
}

static planner_status place_split(search_ctx *x, strategy *s, const placement *pl,
                                  planner_error *err);
/* Interleaving on a placement across node groups: the placer splits the
 * layers over the pp ranks as without virtual stages (its balance of the
 * ranks' GPU types and memory), then each rank's n layers become vpp
 * chunks: n / vpp each when every rank's count divides (Megatron's uneven
 * split with equal chunks within a rank, strategy_chunk_layers), otherwise
 * a --pipeline-model-parallel-layout of n / vpp or n / vpp + 1 layers per
 * virtual stage (Megatron-Core pipeline_parallel_layer_layout.py takes any
 * count per virtual stage).  The evaluation then schedules the chunks
 * exactly; the split is the placer's choice for vpp 1, which ignores the
 * interleaved schedule's smaller bubble and larger in-flight memory.  A
 * rank with fewer layers than vpp cannot be placed. */
static planner_status place_interleaved(search_ctx *x, strategy *s, const placement *pl,
                                        planner_error *err)
{
    int v = s->vpp, pp = s->pp, even = 1, first = 0;
    planner_status st;
    s->vpp = 1;
    st = place_split(x, s, pl, err);
    s->vpp = v;
    if (st != PLANNER_OK)
        return st;
    if ((long)pp * v > STRATEGY_MAX_CHUNKS)
        PLACE_FAIL("pp %d x vpp %d virtual stages exceed %d", pp, v, STRATEGY_MAX_CHUNKS);
    for (int i = 0; i < pp; i++) {
        if (s->stage[i].n_layers < v)
            PLACE_FAIL("stage %d holds %d layers, fewer than vpp %d", i, s->stage[i].n_layers,
                       v);
        if (s->stage[i].n_layers % v != 0)
            even = 0;
    }
    if (!even) {
        s->layout = true;
        for (int j = 0; j < v; j++)
            for (int i = 0; i < pp; i++) {
                int n = s->stage[i].n_layers;
                s->layout_layers[j * pp + i] = (short)(n / v + (j < n % v ? 1 : 0));
            }
    }
    for (int i = 0; i < pp; i++) {
        strategy_chunk_layers(s, x->m->layers, i, 0, &first);
        s->stage[i].first_layer = first;
    }
    return PLANNER_OK;
}

/* Whether place() splits the layers of a plan with pp stages and vpp
 * chunks each by rules alone -- a pinned layout, the even split, or with
 * interleaving Megatron's embedding/loss accounting or a layout of
 * layout.c -- whatever its other knobs and the layers' costs; else by the
 * placer, whose split depends on them. */
static bool split_by_rules(const search_ctx *x, int pp, int vpp)
{
    int L = x->m->layers;
    if (x->o->layout != NULL)
        return true;
    if (x->placement != NULL || x->m->uneven || pp < 1)
        return false;
    return (L % pp == 0 && (vpp <= 1 || (L / pp) % vpp == 0)) || (pp > 1 && vpp > 1);
}

/* Places x->s's stages: the even split (search_place_stages) for a uniform
 * model on one group when pp divides the layers, as Megatron does by
 * default; otherwise the placer (placement.c): stages on the groups of
 * x->placement (or all on x->group), layers from the DP or ILP partition.
 * PLANNER_OK, or a failure with the reason in *err (x->oom when out of
 * memory, x->limited when the work limit stopped the placer). */
static planner_status place(search_ctx *x, strategy *s, planner_error *err)
{
    placement one;
    const placement *pl = x->placement;
    s->account_embedding = s->account_loss = s->layout = false;
    x->shaped = x->placed_balanced = false;
    if (x->o->layout != NULL)
        return place_layout(x, s, err);
    if (pl == NULL && split_by_rules(x, s->pp, s->vpp)) {
        int L = x->m->layers;
        if (L % s->pp == 0 && (s->vpp <= 1 || (L / s->pp) % s->vpp == 0))
            return search_place_stages(x->m, x->c, x->group, s, err);
        /* interleaving over an uneven split: Megatron's
         * --account-for-embedding/loss-in-pipeline-split rule */
        if (strategy_split_account(s, L, x->group) == 0)
            return PLANNER_OK;
        s->account_embedding = s->account_loss = false;
        /* else a --pipeline-model-parallel-layout (layout.c) */
        if (strategy_split_layout(s, L, x->m->mtp_layers, x->group) == 0)
            return PLANNER_OK;
        s->layout = false;
        PLACE_FAIL("pp %d x vpp %d virtual stages: more than the %d layers with the "
                   "embedding and loss", s->pp, s->vpp, L + 2 + x->m->mtp_layers);
    }
    if (pl == NULL) {
        memset(&one, 0, sizeof one);
        one.n_parts = 1;
        one.part[0].group = x->group;
        one.part[0].n_stages = s->pp;
        pl = &one;
    }
    if (s->vpp > 1 && x->placement != NULL)
        return place_interleaved(x, s, pl, err);
    return place_split(x, s, pl, err);
}

/* The placer's split of x->s's layers over placement pl (vpp 1).
 * PLANNER_OK, or a failure with the reason in *err (x->oom, x->limited). */
static planner_status place_split(search_ctx *x, strategy *s, const placement *pl,
                                  planner_error *err)
{
    planner_status r;
    long stops;
    if (x->placer == NULL) {
        /* screening uses the DP; seam_refine() re-partitions with the ILP */
        x->placer = placer_new(x->m, x->c, x->p, false, x->o->ilp_time_limit_s);
        if (x->placer == NULL) {
            x->oom = true;
            return error_oom(err);
        }
    }
    if (x->work_limit > 0)   /* what the rest of the work left of the limit */
        placer_set_work_limit(x->placer, (long long)(x->work_limit - x->work_before -
                                                     x->eval_work) + x->placer_start + 1);
    /* memory-balanced splits for misses only while no plan fits (a miss is
     * reported only then) */
    placer_balance_misses(x->placer, x->feasible + x->feasible_before == 0);
    x->placed_balanced = x->feasible + x->feasible_before == 0;
    stops = placer_get_stats(x->placer)->limit_stops;   /* a worker's placer: all its units' */
    r = placer_place(x->placer, pl, s, err);
    x->shaped = placer_memory_shaped(x->placer);
    if (r == PLANNER_E_INTERNAL)
        x->oom = true;
    if (placer_get_stats(x->placer)->limit_stops > stops)
        x->limited = true;
    return r;
}

/* Places x->s like the closest miss (the same groups in the same order). */
static planner_status place_like_miss(search_ctx *x, planner_error *err)
{
    placement pl;
    planner_status r;
    if (placement_from_strategy(&x->miss, &pl) != 0 || pl.n_parts <= 1)
        return place(x, &x->s, err);
    x->placement = &pl;
    r = place(x, &x->s, err);
    x->placement = NULL;
    return r;
}

#undef PLACE_FAIL

/* Keeps the best feasible plan on one group and across groups (for the
 * placement note). */
static void seam_offer(search_ctx *x, double score)
{
    int k = x->s.n_mixes > 0;
    for (int i = 1; i < x->s.n_stages; i++)
        if (x->s.stage[i].group != x->s.stage[0].group)
            k = 1;
    if (!x->have_best[k] || score > x->best_score[k]) {
        x->have_best[k] = true;
        x->best_score[k] = score;
        x->best[k] = x->s;
    }
}

/* ---- ranking ------------------------------------------------------------- */

static int cmp_int(int a, int b) { return (a > b) - (a < b); }

double search_rank_score(double score, int unvalidated)
{
    double f = 1.0;
    for (int k = 0; k < unvalidated; k++)
        f *= 1.0 + SEARCH_VALIDATED_TIE;
    return score / f;
}

int search_rank_cmp(double score_a, double peak_a, const strategy *a, double score_b,
                    double peak_b, const strategy *b)
{
    int r;
    int na = knobs_unvalidated_count(a), nb = knobs_unvalidated_count(b);
    double ra = search_rank_score(score_a, na), rb = search_rank_score(score_b, nb);
    /* One key per plan, compared in order (a strict weak order: the top N
     * is kept sorted by it): the objective less SEARCH_VALIDATED_TIE per
     * unvalidated knob value, then fewer of them, then the objective
     * itself, ... */
    if (ra != rb)
        return ra > rb ? -1 : 1;
    if (na != nb)
        return na < nb ? -1 : 1;
    if (score_a != score_b)
        return score_a > score_b ? -1 : 1;
    if (peak_a != peak_b)
        return peak_a < peak_b ? -1 : 1;
    if ((r = cmp_int(a->pp, b->pp)) != 0) return r;
    if ((r = cmp_int(a->tp, b->tp)) != 0) return r;
    if ((r = cmp_int(a->cp, b->cp)) != 0) return r;
    if ((r = cmp_int(a->ep, b->ep)) != 0) return r;
    if ((r = cmp_int(a->etp, b->etp)) != 0) return r;
    if ((r = cmp_int(a->vpp, b->vpp)) != 0) return r;
    if ((r = cmp_int(b->mbs, a->mbs)) != 0) return r;
    if ((r = cmp_int(b->sp, a->sp)) != 0) return r;
    if ((r = cmp_int((int)a->recompute, (int)b->recompute)) != 0) return r;
    if ((r = cmp_int(a->zero, b->zero)) != 0) return r;
    if ((r = cmp_int(a->flex_dispatcher, b->flex_dispatcher)) != 0) return r;
    return cmp_int(a->n_stages > 0 ? a->stage[0].group : 0,
                   b->n_stages > 0 ? b->stage[0].group : 0);
}

/* The objective's value for s predicted as e, higher is better.  The
 * goodput objectives (schedule/goodput.h) keep the prunes valid: a prune
 * compares variants on the same GPUs with the same dp and ZeRO stage, whose
 * failure rate and checkpoint are the same, so goodput follows tokens/s
 * (up to the checkpoint interval's rounding to whole steps). */
static double objective_score(const search_ctx *x, const strategy *s, const evaluation *e)
{
    goodput_options o;
    goodput g;

    if (x->o->obj == OBJECTIVE_THROUGHPUT)
        return e->tokens_per_s;
    o = x->o->goodput;
    o.tokens = 0;          /* the rate, not the time: no overflow to fail on */
    if (goodput_evaluate(&g, x->m, x->c, s, e, &o, NULL) != PLANNER_OK)
        return 0;
    if (x->o->obj == OBJECTIVE_COST)
        return g.goodput_tokens_per_s / (g.gpus * g.gpu_hour_price);
    return g.goodput_tokens_per_s;
}

const char *objective_name(objective obj)
{
    static const char *const names[] = {"throughput", "goodput", "time", "cost"};
    return (unsigned)obj < sizeof names / sizeof names[0] ? names[obj] : "throughput";
}

int objective_from_name(const char *name, objective *out)
{
    for (int i = OBJECTIVE_THROUGHPUT; i <= OBJECTIVE_COST; i++)
        if (strcmp(name, objective_name((objective)i)) == 0) {
            *out = (objective)i;
            return 0;
        }
    return -1;
}

/* Whether s runs the flex dispatcher and a kept plan is its alltoall twin
 * at the same objective and peak memory: every knob but the dispatcher and
 * the router graphs, and the layer split, the same (search_block offers
 * the alltoall pass of a block first; so the twin is among a unit's own
 * plans, never the batch's base). */
static bool flex_twin_kept(const search_ctx *x, const strategy *s, double score, double peak)
{
    if (!s->flex_dispatcher)
        return false;
    for (int i = 0; i < x->n_top; i++) {
        const top_entry *t = &x->pool[x->order[i]];
        bool same = t->score == score && t->peak_bytes == peak && !t->s.flex_dispatcher &&
                    t->s.n_stages == s->n_stages;
        for (int k = 0; k < KNOB_COUNT && same; k++)
            same = k == KNOB_FLEX_DISPATCHER || k == KNOB_TE_MOE_GRAPHS ||
                   knob_value(&t->s, (knob_id)k) == knob_value(s, (knob_id)k);
        for (int j = 0; j < s->n_stages && j < STRATEGY_MAX_STAGES && same; j++)
            same = t->s.stage[j].n_layers == s->stage[j].n_layers &&
                   t->s.stage[j].group == s->stage[j].group;
        if (same)
            return true;
    }
    return false;
}

/* The worst of the top N kept plans, or NULL while fewer than N are kept:
 * the batch's base's best base_live and the unit's own (PARALLEL; of two
 * that rank alike, the unit's came later, so it is the worse). */
static const top_entry *top_worst(const search_ctx *x)
{
    const top_entry *b, *u;
    if (x->base_live + x->n_top < x->top_cap)
        return NULL;
    b = x->base_live > 0 ? &x->base_pool[x->base_order[x->base_live - 1]] : NULL;
    u = x->n_top > 0 ? &x->pool[x->order[x->n_top - 1]] : NULL;
    if (b == NULL || u == NULL)
        return b != NULL ? b : u;
    return search_rank_cmp(b->score, b->peak_bytes, &b->s, u->score, u->peak_bytes, &u->s) > 0
               ? b
               : u;
}

/* Keeps s if it ranks among the top N; a flex plan that costs exactly what
 * its kept alltoall twin costs is that plan to the user, not kept again. */
static void top_offer(search_ctx *x, const strategy *s, double score, double peak)
{
    const top_entry *w = top_worst(x);
    int slot = -1, lo, hi;
    if (flex_twin_kept(x, s, score, peak))
        return;
    if (w != NULL) {
        if (search_rank_cmp(score, peak, s, w->score, w->peak_bytes, &w->s) >= 0)
            return;
        if (x->n_top > 0 && w == &x->pool[x->order[x->n_top - 1]])
            slot = x->order[--x->n_top];
        else
            x->base_live--;   /* a base plan drops out of the top N */
    }
    if (slot < 0) {
        if (x->n_top == x->pool_cap) {
            int cap = x->pool_cap ? 2 * x->pool_cap : 16;
            top_entry *np;
            int *no;
            if (cap > x->top_cap)
                cap = x->top_cap;
            np = pl_realloc(x->pool, (size_t)cap * sizeof *np);
            if (np == NULL) {
                x->oom = true;
                return;
            }
            x->pool = np;
            no = pl_realloc(x->order, (size_t)cap * sizeof *no);
            if (no == NULL) {
                x->oom = true;
                return;
            }
            x->order = no;
            x->pool_cap = cap;
        }
        slot = x->n_top;
    }
    x->pool[slot].s = *s;
    x->pool[slot].score = score;
    x->pool[slot].peak_bytes = peak;
    lo = 0;
    hi = x->n_top;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        top_entry *t = &x->pool[x->order[mid]];
        if (search_rank_cmp(t->score, t->peak_bytes, &t->s, score, peak, s) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(&x->order[lo + 1], &x->order[lo], (size_t)(x->n_top - lo) * sizeof(int));
    x->order[lo] = slot;
    x->n_top++;
}

static double miss_ratio(const evaluation *e)
{
    double cap;
    if (e->n_stages <= 0 || e->peak_stage < 0 || e->peak_stage >= e->n_stages)
        return HUGE_VAL;
    cap = e->stage_memory[e->peak_stage].capacity_bytes;
    if (!(cap > 0) || !isfinite(e->peak_memory_bytes))
        return HUGE_VAL;
    return e->peak_memory_bytes / cap;
}

/* Whether the rule of knob k (KNOB_COUNT: the layer split) that refuses s
 * is the stack's own (stack_spec.rules, which knob_rule checks first). */
static bool refused_by_stack(const search_ctx *x, const strategy *s, int k)
{
    return k < KNOB_COUNT && knob_stack_rule(x->m, s, (knob_id)k, NULL) != PLANNER_OK;
}

/* The software whose rules refused: the stack's (stack_spec.rules_by) or
 * Megatron's. */
static const char *refuser(const search_ctx *x, bool by_stack)
{
    return by_stack ? stack_get(x->c->stack)->rules_by : "Megatron";
}

/* Counts n candidates of x->s that the rule of knob k refused (KNOB_COUNT:
 * the layer split), the stack's own rule when by_stack; msg: the rule's
 * message, needed for the first refusal of k and of the search (the
 * advice's example, with vpp and mbs; mbs < 0: without). */
static void refuse(search_ctx *x, int k, bool by_stack, long n, int mbs, int vpp,
                   const char *msg)
{
    if (x->refused[by_stack][k] == 0)
        snprintf(x->refused_why[by_stack][k], sizeof x->refused_why[by_stack][k], "%s", msg);
    if (x->first_invalid[0] == '\0')
        x->first_by_stack = by_stack;
    if (x->first_invalid[0] == '\0' && mbs < 0)   /* placed before mbs matters */
        snprintf(x->first_invalid, sizeof x->first_invalid,
                 "tp %d, cp %d, pp %d, dp %d, vpp %d: %s", x->s.tp, x->s.cp, x->s.pp,
                 x->s.dp, vpp, msg);
    else if (x->first_invalid[0] == '\0')
        snprintf(x->first_invalid, sizeof x->first_invalid,
                 "tp %d, cp %d, pp %d, dp %d, vpp %d, mbs %d: %s", x->s.tp, x->s.cp,
                 x->s.pp, x->s.dp, vpp, mbs, msg);
    x->refused[by_stack][k] += n;
    x->invalid += n;
    x->invalid_stack += by_stack ? n : 0;
}

/* The memo of layer-range costs the search's evaluations share (NULL:
 * none, or no memory for one: the evaluations cost every range). */
static eval_memo *memo(search_ctx *x)
{
    if (x->memo == NULL && !x->o->eval_memo_off)
        x->memo = eval_memo_new(false);   /* x->e.reason is never read */
    return x->memo;
}

/* Whether the rules (Megatron's, the stack's) refuse x->s; counted
 * (refuse) when `count`. */
static bool rules_refuse(search_ctx *x, bool count)
{
    int k;
    if (strategy_check_rule(x->m, &x->s, &k, NULL) == PLANNER_OK)
        return false;
    if (count) {
        /* the message only for a first refusal: the others go without
         * formatting one */
        planner_error why;
        bool by_stack = refused_by_stack(x, &x->s, k);
        error_clear(&why);
        if (x->refused[by_stack][k] == 0 || x->first_invalid[0] == '\0')
            strategy_check(x->m, &x->s, &why);
        refuse(x, k, by_stack, 1, x->s.mbs, x->s.vpp, why.msg);
    }
    return true;
}

/* Checks x->s against the rules and evaluates it into x->e.
 * Returns 1 fits, 0 does not fit, -1 invalid (counted when `count`). */
static int check_eval(search_ctx *x, bool count)
{
    if (rules_refuse(x, count))
        return -1;
    evaluate_with(x->m, x->c, x->p, &x->s, &x->e, memo(x));
    if (!(isfinite(x->e.step_time_s) && x->e.step_time_s > 0 &&
          x->e.step_time_s < COST_TIME_CAP_S && isfinite(x->e.tokens_per_s) &&
          x->e.tokens_per_s > 0 && isfinite(x->e.peak_memory_bytes))) {
        /* The loaders keep every input inside its plausible range, so a
         * prediction that is not finite and positive (or hit the cost
         * model's cap) is a bug: the search ends with an internal error,
         * never a plan built on a clamped figure. */
        x->broken = true;
        snprintf(x->first_invalid, sizeof x->first_invalid,
                 "the cost model gives no finite step time for tp %d, pp %d, dp %d "
                 "(step %g s, peak %g B)", x->s.tp, x->s.pp, x->s.dp, x->e.step_time_s,
                 x->e.peak_memory_bytes);
        return -1;
    }
    return x->e.feasible && isfinite(objective_score(x, &x->s, &x->e)) ? 1 : 0;
}

/* Counts the evaluated x->s and offers it to the ranking or the closest miss. */
static void record(search_ctx *x, int fit)
{
    double score = objective_score(x, &x->s, &x->e), peak = x->e.peak_memory_bytes, ratio;

    x->candidates++;
    x->eval_work += SEARCH_EVAL_WORK_PER_LAYER * x->m->layers;
    if (x->work_limit > 0 && search_work(x) >= x->work_limit)
        x->limited = true;
    if (fit == 1) {
        x->feasible++;
        seam_offer(x, score);
        if (x->stop_at_feasible)
            x->found = true;
        top_offer(x, &x->s, score, peak);
        return;
    }
    ratio = miss_ratio(&x->e);
    if (!x->have_miss || ratio < x->miss_ratio ||
        (ratio == x->miss_ratio &&
         search_rank_cmp(score, peak, &x->s, x->miss_score, x->miss_peak, &x->miss) < 0)) {
        x->have_miss = true;
        x->miss_ratio = ratio;
        x->miss_score = score;
        x->miss_peak = peak;
        x->miss = x->s;
    }
}

/* Checks, evaluates and records x->s.  1 fits, 0 does not, -1 invalid. */
static int try_strategy(search_ctx *x)
{
    int fit = check_eval(x, true);
    if (fit >= 0)
        record(x, fit);
    return fit;
}

/* ---- enumeration ---------------------------------------------------------- */

typedef struct int_list {
    int n;
    int v[MAX_LIST];
} int_list;

static void list_push(int_list *l, int v)
{
    if (l->n < MAX_LIST)
        l->v[l->n++] = v;
}

/* Divisors of n in [lo, hi], ascending. */
static void divisors(int_list *l, int n, int lo, int hi)
{
    l->n = 0;
    for (int d = lo; d <= hi && d <= n; d++)
        if (n % d == 0)
            list_push(l, d);
}

static int group_tp_limit(const node_group *g)
{
    int lim = g->gpus_per_node;
    if (g->gpu.nvlink_domain > lim)
        lim = g->gpu.nvlink_domain;
    return lim < 1 ? 1 : lim;
}

/* Whether the search may give a free knob k the value v: the cluster's
 * software stack has it (inputs/stack.c), and, with
 * search_options.validated_only, a measured run validates it
 * (model/knobs.c's validation table). */
static bool space_allows(const search_ctx *x, knob_id k, int v)
{
    return knob_stack_allows(stack_get(x->c->stack), k, v) &&
           (!x->o->validated_only || knob_value_validated(k, v));
}

/* Drops from l the values of knob k outside the space (space_allows); a
 * list of a --fix value (`fixed`) is kept as given (search_run has checked
 * it against the stack: constraints_stack_check). */
static void stack_filter(const search_ctx *x, int_list *l, knob_id k, bool fixed)
{
    int n = 0;
    if (fixed)
        return;
    for (int i = 0; i < l->n; i++)
        if (space_allows(x, k, l->v[i]))
            l->v[n++] = l->v[i];
    l->n = n;
}

/* Drops from l the values of knob k that the stack's rules on knobs
 * together refuse with x->s's other knobs (knob_stack_rule: stack_spec.rules,
 * e.g. torchtitan's SP always with TP, DDP only alone); a --fix list is kept
 * (strategy_check refuses it with the reason). */
static void stack_rule_filter(const search_ctx *x, int_list *l, knob_id k, bool fixed)
{
    int n = 0;
    strategy t = x->s;
    if (fixed)
        return;
    for (int i = 0; i < l->n; i++) {
        knob_set(&t, k, l->v[i]);
        if (knob_stack_rule(x->m, &t, k, NULL) == PLANNER_OK)
            l->v[n++] = l->v[i];
    }
    l->n = n;
}

/* The all-to-all level of hierarchical CP (a2a+p2p) for x->s: the --fix
 * value, else the largest divisor a of cp below cp whose a x tp ranks stay
 * in one NVLink domain of the first stage's node group (Megatron-Core's
 * intent: "A2A communications in low-level CP groups (e.g., via NVLink),
 * P2P communications in high-level CP groups (e.g., via IBLink)",
 * TransformerConfig.cp_comm_type) and whose heads per TP rank divide by a;
 * 0 when none. */
static int hcp_a2a(const search_ctx *x)
{
    const strategy *s = &x->s;
    int g = s->n_stages > 0 ? s->stage[0].group : x->group;
    int tp = s->tp > 0 ? s->tp : 1;
    int kv = x->m->mla.kv_lora_rank > 0 ? x->m->heads : x->m->kv_heads;
    int domain = g >= 0 && g < x->c->n_groups ? comm_nvlink_domain(&x->c->group[g]) : 1;
    if (x->fix.cp_a2a >= 0)
        return x->fix.cp_a2a;
    for (int a = s->cp / 2; a >= 2; a--)
        if (s->cp % a == 0 && (long)a * tp <= domain && (x->m->heads / tp) % a == 0 &&
            (kv / tp) % a == 0)
            return a;
    return 0;
}

static int rc_save_modules(const model *m);

/* The searched memory-saving selective set (RC_LEVEL_SEL_SAVE, the modules
 * not pinned) under s's dispatcher, graphs and overlaps: rc_save_modules
 * less layernorm where Megatron-Core keeps the MoE norm
 * (knob_moe_norm_recomputed; the rules refuse it there, the plan would claim
 * a re-run that does not happen).  Other sets as they are. */
static void fit_save_modules(const search_ctx *x, strategy *s)
{
    if (x->fix.recompute_modules > 0 || s->recompute != RECOMPUTE_SELECTIVE ||
        s->recompute_modules == RC_MOD_CORE_ATTN)
        return;
    s->recompute_modules = rc_save_modules(x->m);
    if (!knob_moe_norm_recomputed(x->m, s))
        s->recompute_modules &= ~RC_MOD_LAYERNORM;
}

/* The MoE router and preprocessing graphs of s (its dispatcher and other
 * knobs set) where their rule and the space allow and they leave the first
 * stage's GPUs less host time than the uncaptured layer (with the flex
 * dispatcher: cost_te_moe_graphs_help), and the memory-saving set that
 * follows (fit_save_modules): set_derived's, and P11's for a flex twin. */
static void derive_graphs(const search_ctx *x, strategy *s)
{
    const strategy_constraints *f = &x->fix;
    s->te_moe_graphs = f->te_moe_graphs > 0;
    if (f->te_moe_graphs < 0 && x->m->moe.experts > 0 &&
        space_allows(x, KNOB_TE_MOE_GRAPHS, 1) && knob_te_moe_graphs_release(x->o->megatron)) {
        int g = x->group >= 0 && x->group < x->c->n_groups ? x->group : 0;
        s->te_moe_graphs = true;
        fit_save_modules(x, s);   /* (a pinned layernorm keeps them off: the rule) */
        s->te_moe_graphs = knob_rule(x->m, s, KNOB_TE_MOE_GRAPHS, NULL) == PLANNER_OK &&
                           cost_te_moe_graphs_help(x->m, x->p, s, x->c->group[g].gpu.gen);
    }
    fit_save_modules(x, s);
}

/* Fills the knobs of x->s that follow from the others: the overlap flags
 * are on where the rules and the space (space_allows) allow. */
static void set_derived(search_ctx *x)
{
    strategy *s = &x->s;
    const strategy_constraints *f = &x->fix;
    int shard = s->dp * s->cp;
    s->gbs = x->gbs;
    s->seq_len = x->seq_len;
    s->stack = x->c->stack;
    s->recompute_layers = s->recompute == RECOMPUTE_FULL && f->recompute_layers >= 0
                              ? f->recompute_layers : 0;
    s->recompute_method = s->recompute == RECOMPUTE_FULL && f->recompute_method >= 0
                              ? f->recompute_method : RECOMPUTE_BLOCK;
    s->recompute_modules = s->recompute != RECOMPUTE_SELECTIVE ? 0
                           : f->recompute_modules > 0 ? f->recompute_modules
                           : s->recompute_modules > 0 ? s->recompute_modules : RC_MOD_CORE_ATTN;
    s->overlap_grad_reduce = f->overlap_grad_reduce >= 0
                                 ? f->overlap_grad_reduce != 0
                                 : shard > 1 && space_allows(x, KNOB_OVERLAP_GRAD_REDUCE, 1);
    if (f->overlap_grad_reduce < 0 && s->overlap_grad_reduce &&
        knob_rule(x->m, s, KNOB_OVERLAP_GRAD_REDUCE, NULL) != PLANNER_OK)
        s->overlap_grad_reduce = false;   /* (the stack's, at this zero and pp) */
    s->overlap_param_gather =
        f->overlap_param_gather >= 0
            ? f->overlap_param_gather != 0
            : shard > 1 && s->zero >= 1 && space_allows(x, KNOB_OVERLAP_PARAM_GATHER, 1);
    s->tp_comm_overlap = f->tp_comm_overlap >= 0
                             ? f->tp_comm_overlap != 0
                             : s->sp && s->tp > 1 && space_allows(x, KNOB_TP_COMM_OVERLAP, 1);
    if (f->tp_comm_overlap < 0 &&
        knob_stack_rule(x->m, s, KNOB_TP_COMM_OVERLAP, NULL) != PLANNER_OK)
        s->tp_comm_overlap = false;   /* (torchtitan: async TP only when compiled) */
    s->cp_comm = f->cp_comm >= 0 ? (cp_comm_type)f->cp_comm
                 : f->cp_a2a > 0 ? CP_COMM_A2A_P2P : CP_COMM_P2P;
    s->cp_a2a = s->cp_comm == CP_COMM_A2A_P2P ? hcp_a2a(x) : 0;
    /* --overlap-moe-expert-parallel-comm wherever its rule and the space
     * allow (unvalidated: it ranks after a validated plan within a near-tie) */
    s->shared_expert_overlap = f->shared_expert_overlap > 0;   /* free: try_comm_types */
    s->ep_comm_overlap = f->ep_comm_overlap >= 0 ? f->ep_comm_overlap != 0
                                                 : space_allows(x, KNOB_EP_COMM_OVERLAP, 1);
    if (f->ep_comm_overlap < 0 && (knob_rule(x->m, s, KNOB_EP_COMM_OVERLAP, NULL) != PLANNER_OK ||
                                   s->shared_expert_overlap))
        s->ep_comm_overlap = false;   /* (Megatron: not with the shared-expert overlap) */
    /* --grad-reduce-in-bf16 only when fixed: reducing in bf16 trades
     * gradient precision for time and memory, the user's call (Megatron's
     * default with --bf16 is fp32) */
    s->grad_reduce_bf16 = f->grad_reduce_bf16 > 0;
    /* a full-iteration CUDA graph only when fixed: its static shapes are
     * the recipe's (capacity-bounded MoE dispatch), not a free choice */
    s->cuda_graph = f->cuda_graph > 0;
    /* the token dispatcher of the block's pass (search_block); DeepEP on
     * core_v0.15.0, which no run validates (knob_flex_deepep) */
    s->flex_dispatcher = x->flex;
    s->flex_deepep = x->flex && knob_flex_deepep(x->o->megatron);
    derive_graphs(x, s);
    /* 16-bit Adam state only when fixed: a numerics choice, the recipe's */
    s->opt_state = f->opt_state > 0 ? f->opt_state : OPT_STATE_FP32;
}

/* The first decoder layer of x->s under K/V exchange type t, one
 * micro-batch: its forward + backward (with any re-forward) and what it
 * holds (kept activations, transient bytes): P6's yardstick. */
typedef struct cp_probe {
    double s, act, peak;
} cp_probe;

static void cp_layer_probe(search_ctx *x, cp_comm_type t, int cp_a2a, cp_probe *out)
{
    range_cost r;
    cp_comm_type was = x->s.cp_comm;
    int was_a2a = x->s.cp_a2a;
    int g = x->s.n_stages > 0 ? x->s.stage[0].group : x->group;
    x->s.cp_comm = t;
    x->s.cp_a2a = cp_a2a;
    cost_layer_range(x->m, x->c, x->p, &x->s, g, x->s.tp, 0, 1, false, false, &r);
    x->s.cp_comm = was;
    x->s.cp_a2a = was_a2a;
    out->s = r.fwd_s + r.bwd_s;
    out->act = r.act_bytes;
    out->peak = cost_range_transient_bytes(&r);
}

/* Whether probe u is no slower and holds no more than probe t. */
static bool cp_dominates(const cp_probe *u, const cp_probe *t)
{
    return u->s <= t->s && u->act <= t->act && u->peak <= t->peak;
}

/* Whether x->s is evaluated with its one K/V exchange type: fixed, or cp 1
 * (P6). */
static bool cp_comm_single(const search_ctx *x)
{
    return x->fix.cp_comm >= 0 || x->fix.cp_a2a > 0 || x->s.cp <= 1;
}

/* P6: the K/V exchange types to evaluate for x->s (types[], returns their
 * count), each with its cp_a2a (hcp_a2a for a2a+p2p), and the layer time
 * of each (layer_s[], 0 when not probed).  Fixed, or cp 1: its one type.
 * Otherwise the type changes each attention layer's exposed CP time, the
 * activations it keeps (a2a's second output, cost_cp_saved_bytes) and its
 * transient bytes (cost_cp_transient_bytes).  On a uniform model a stage's
 * step time is monotone in its layers' time and its memory in their kept
 * and transient bytes (every layer alike), so a type that another is no
 * slower than and holds no more than (the first of equals kept) cannot
 * rank above it: p2p and the types no other dominates come first, p2p
 * first, the others fastest first, then the dominated ones (dominated[]);
 * try_comm_types skips a dominated type, or one slower than a type that
 * fits, once the level's candidates so far cannot enter the top N (a
 * slower plan may still rank behind them).  The types are unvalidated, so p2p (always evaluated)
 * may still rank first.  The exhaustive search and models with uneven
 * layers evaluate every type the rules and the software stack allow. */
static int cp_comm_list(search_ctx *x, int *types, double *layer_s, bool *dominated)
{
    int n = 0, cand[CP_COMM_COUNT], nc = 0, nd = 0, dom[CP_COMM_COUNT];
    cp_probe pr[CP_COMM_COUNT];
    layer_s[0] = 0;
    for (int j = 0; j < CP_COMM_COUNT; j++)
        dominated[j] = false;
    if (cp_comm_single(x)) {
        types[0] = x->s.cp_comm;
        return 1;
    }
    types[n++] = CP_COMM_P2P;
    cand[nc++] = CP_COMM_P2P;
    for (int t = CP_COMM_P2P + 1; t < CP_COMM_COUNT; t++) {
        x->s.cp_comm = (cp_comm_type)t;
        x->s.cp_a2a = t == CP_COMM_A2A_P2P ? hcp_a2a(x) : 0;
        if (!space_allows(x, KNOB_CP_COMM, t) ||
            knob_rule(x->m, &x->s, KNOB_CP_COMM, NULL) != PLANNER_OK)
            continue;
        cand[nc++] = t;
    }
    x->s.cp_comm = CP_COMM_P2P;
    x->s.cp_a2a = 0;
    if (x->exhaustive || x->m->uneven) {
        for (int j = 1; j < nc; j++) {
            layer_s[n] = 0;
            types[n++] = cand[j];
        }
        return n;
    }
    for (int j = 0; j < nc; j++)
        cp_layer_probe(x, (cp_comm_type)cand[j], cand[j] == CP_COMM_A2A_P2P ? hcp_a2a(x) : 0,
                       &pr[j]);
    layer_s[0] = pr[0].s;
    for (int j = 1; j < nc; j++) {
        bool under = false;
        int at;
        for (int u = 0; u < nc && !under; u++)
            under = u != j && cp_dominates(&pr[u], &pr[j]) &&
                    (u < j || !cp_dominates(&pr[j], &pr[u]));
        if (under) {
            dom[nd++] = j;
            continue;
        }
        for (at = n; at > 1 && layer_s[at - 1] > pr[j].s; at--) {   /* fastest first */
            types[at] = types[at - 1];
            layer_s[at] = layer_s[at - 1];
        }
        types[at] = cand[j];
        layer_s[at] = pr[j].s;
        n++;
    }
    for (int d = 0; d < nd; d++) {   /* after every type that dominates them */
        layer_s[n] = pr[dom[d]].s;
        dominated[n] = true;
        types[n++] = cand[dom[d]];
    }
    return n;
}

/* The recompute mode of level r. */
static recompute_mode rc_level_mode(int r)
{
    return r == RC_LEVEL_NONE ? RECOMPUTE_NONE
           : r == RC_LEVEL_FULL ? RECOMPUTE_FULL : RECOMPUTE_SELECTIVE;
}

/* The modules of RC_LEVEL_SEL_SAVE for m: those that drop something in its
 * layers (selective_saved_bytes, layer_cost.c): layernorm and moe_act with
 * MoE layers, mlp with dense ones, mla_up_proj with multi-latent attention.
 * Never core attention (no memory). */
static int rc_save_modules(const model *m)
{
    int mods = m->mla.kv_lora_rank > 0 ? RC_MOD_MLA_UP_PROJ : 0;
    for (int i = 0; i < m->layers; i++)
        mods |= m->layer[i].moe && m->moe.experts > 0 ? RC_MOD_LAYERNORM | RC_MOD_MOE_ACT
                                                      : RC_MOD_MLP;
    return mods;
}

/* Whether measured runs validate level r's recompute (model/knobs.c's
 * validation table): its mode, and for RC_LEVEL_SEL_SAVE its modules. */
static bool rc_level_validated(const model *m, int r)
{
    return knob_value_validated(KNOB_RECOMPUTE, (int)rc_level_mode(r)) &&
           (r != RC_LEVEL_SEL_SAVE ||
            knob_value_validated(KNOB_RECOMPUTE_MODULES, rc_save_modules(m)));
}

/* The values of one block's inner knobs; zero2_chain: ZeRO-2 needs no more
 * memory than ZeRO-1 here (zero2_within_zero1), so the prunes chain
 * 0 -> 1 -> 2; else ZeRO-2 is a family of its own. */
typedef struct block_lists {
    int_list mbs, vpp, sp, zero, rc;
    bool zero2_chain;
} block_lists;

/* Whether ZeRO-2 needs no more memory than ZeRO-1 on every stage of the
 * block: per dense parameter it holds g (1 - 1/d) bytes less (the main
 * gradients sharded over the dp x cp ranks), and the unsharded gradient
 * buckets in flight more (memory_grad_transient_bytes), so it does when
 * every stage holds at least buckets / (g (1 - 1/d)) dense parameters (with
 * vpp > 1 a chunk's bucket, 1/vpp of them, is within g (1 - 1/d) as well).  A
 * stage holds at least one decoder layer or the embedding (its dense
 * parameters / tp); with Megatron's even split (pp divides the layers of a
 * uniform model) L / pp layers, one less with the embedding or the loss
 * counted as a layer.  Placements across groups (their own tp per part):
 * false. */
static bool zero2_within_zero1(const search_ctx *x)
{
    const strategy *s = &x->s;
    const model *m = x->m;
    int d = s->dp * s->cp, units = 1;
    double g = memory_main_grad_bytes(m->prec, s->grad_reduce_bf16);
    if (x->placement != NULL || d < 2 || s->tp < 1 || s->pp < 1)
        return false;
    if (!m->uneven && m->layers % s->pp == 0 && m->layers / s->pp > 2)
        units = m->layers / s->pp - 1;
    double unit = units * x->min_unit_params / s->tp;
    return unit * g * (1.0 - 1.0 / d) >=
           memory_grad_transient_bytes(stack_get(x->c->stack), x->m->prec, s->grad_reduce_bf16, 2,
                                       d, 1, unit);
}

static void block_lists_make(const search_ctx *x, block_lists *b)
{
    const strategy *s = &x->s;
    const strategy_constraints *f = &x->fix;
    int per_dp = x->gbs / s->dp;

    if (f->mbs > 0) {
        b->mbs.n = 0;
        list_push(&b->mbs, f->mbs);
    } else {
        divisors(&b->mbs, per_dp, 1, per_dp);
    }
    b->vpp.n = 0;
    if (f->vpp > 0) {
        list_push(&b->vpp, f->vpp);
    } else {
        int L = x->m->layers;
        list_push(&b->vpp, 1);
        /* whole layers per chunk: the even split ((L / pp) % d == 0), or
         * with the embedding and loss counted as layers ((L + 2) % (pp d)
         * == 0, strategy_split_account), ascending */
        if (s->pp > 1 && !x->m->uneven && x->placement == NULL)
            for (int d = 2; d <= (L + 2) / s->pp; d++)
                if ((L % s->pp == 0 && (L / s->pp) % d == 0) || (L + 2) % (s->pp * d) == 0)
                    list_push(&b->vpp, d);
        /* placements across node groups: the placer's split, chunked
         * (place_interleaved), powers of two up to SEARCH_PLACED_VPP_MAX */
        if (s->pp > 1 && x->placement != NULL)
            for (int d = 2; d <= L / s->pp && d <= SEARCH_PLACED_VPP_MAX; d *= 2)
                list_push(&b->vpp, d);
        /* neither split interleaves at this pp: the layouts of layout.c
         * (strategy_split_layout), every d with pp d virtual stages of at
         * least two units each (DeepSeek-V3's 61 layers at pp 8: vpp 2-4) */
        if (s->pp > 1 && !x->m->uneven && x->placement == NULL && b->vpp.n == 1)
            for (int d = 2; s->pp * d * 2 <= L + 2 + x->m->mtp_layers &&
                            s->pp * d <= STRATEGY_MAX_CHUNKS; d++)
                list_push(&b->vpp, d);
    }
    b->sp.n = 0;
    if (f->sp >= 0) {
        list_push(&b->sp, f->sp);
    } else {
        if (s->tp > 1)
            list_push(&b->sp, 1);
        list_push(&b->sp, 0);
    }
    b->zero2_chain = zero2_within_zero1(x);
    b->zero.n = 0;
    if (f->zero >= 0) {
        list_push(&b->zero, f->zero);
    } else if (s->dp * s->cp > 1) {
        for (int z = 3; z >= 0; z--)
            list_push(&b->zero, z);
    } else {
        list_push(&b->zero, 0);
    }
    b->rc.n = 0;
    for (int r = 0; r < RC_COUNT; r++)   /* levels whose mode the space has (unless fixed) */
        if (f->recompute < 0 ? space_allows(x, KNOB_RECOMPUTE, (int)rc_level_mode(r))
                             : f->recompute == (int)rc_level_mode(r))
            if (r != RC_LEVEL_SEL_SAVE ||
                (f->recompute_modules <= 0 && x->placement == NULL &&
                 space_allows(x, KNOB_RECOMPUTE_MODULES, rc_save_modules(x->m))))
                list_push(&b->rc, r);
    stack_filter(x, &b->vpp, KNOB_VPP, f->vpp > 0);
    stack_filter(x, &b->sp, KNOB_SP, f->sp >= 0);
    stack_filter(x, &b->zero, KNOB_ZERO, f->zero >= 0);
    stack_rule_filter(x, &b->sp, KNOB_SP, f->sp >= 0);
    stack_rule_filter(x, &b->zero, KNOB_ZERO, f->zero >= 0);
}

/* Whether vpp v applies to micro-batch count mb (fixed values always do:
 * strategy_check judges them). */
static bool vpp_applies(const search_ctx *x, int v, int mb)
{
    if (x->fix.vpp > 0 || v == 1)
        return true;
    return x->s.pp > 1 && mb % x->s.pp == 0;
}

/* Builds x->s's inner knobs and stages.  0 or -1 (cannot place). */
static int build(search_ctx *x, int mbs, int vpp, int sp, int zero, int rc)
{
    /* the message only for a first refusal (as check_eval) */
    bool first = x->first_invalid[0] == '\0' || x->refused[0][KNOB_COUNT] == 0;
    planner_error why;
    strategy *s = &x->s;
    s->mbs = mbs;
    s->vpp = vpp;
    s->sp = sp != 0;
    s->zero = zero;
    s->recompute = rc_level_mode(rc);
    s->recompute_modules = rc == RC_LEVEL_SEL_SAVE ? rc_save_modules(x->m) : RC_MOD_CORE_ATTN;
    set_derived(x);
    if (x->twins != NULL && !x->flex) {   /* P11: the flex twin's graphs, as its build sets them */
        strategy f = *s;
        f.flex_dispatcher = true;
        f.flex_deepep = knob_flex_deepep(x->o->megatron);
        derive_graphs(x, &f);
        x->twin_tmg = f.te_moe_graphs;
    }
    if (first)
        error_clear(&why);
    if (place(x, s, first ? &why : NULL) != PLANNER_OK) {
        refuse(x, KNOB_COUNT, false, 1, -1, s->vpp, first ? why.msg : "");
        return -1;
    }
    return 0;
}

static bool stop(const search_ctx *x)
{
    return x->oom || x->broken || x->limited || (x->stop_at_feasible && x->found);
}

/* The inner knobs of one candidate of a block. */
typedef struct inner_key {
    int mbs, vpp, sp, zero, rc;
} inner_key;

static bool key_eq(const inner_key *k, int mbs, int vpp, int sp, int zero, int rc)
{
    return k->mbs == mbs && k->vpp == vpp && k->sp == sp && k->zero == zero && k->rc == rc;
}

/* P1: evaluates the memory-minimal variant of each ZeRO family of the block
 * (zero 3, zero 2 unless b->zero2_chain, and the highest stage of the
 * chain in the list).  Returns true when the
 * block may hold a plan that fits; false when no variant can (every probe
 * was valid and did not fit; the probes are recorded).  probe[] gets the
 * recorded probes, *n_probe their count. */
static bool block_may_fit(search_ctx *x, const block_lists *b, inner_key probe[ZERO_FAMILIES],
                          int *n_probe)
{
    int mb0 = b->mbs.v[0], v0 = x->fix.vpp > 0 ? x->fix.vpp : 1;
    int sp0 = b->sp.v[0], rc0 = b->rc.v[b->rc.n - 1];
    int fam[ZERO_FAMILIES], n_fam = 0;
    bool low = false;

    *n_probe = 0;
    for (int zi = 0; zi < b->zero.n; zi++)   /* the list runs 3, 2, 1, 0 */
        if (b->zero.v[zi] == 3 || (b->zero.v[zi] == 2 && !b->zero2_chain))
            fam[n_fam++] = b->zero.v[zi];
        else if (!low) {
            fam[n_fam++] = b->zero.v[zi];
            low = true;
        }
    for (int f = 0; f < n_fam; f++) {
        int fit;
        if (build(x, mb0, v0, sp0, fam[f], rc0) != 0)
            return true;
        fit = check_eval(x, false);
        if (fit != 0)
            return true;   /* fits, or invalid: no conclusion, enumerate */
        record(x, 0);
        probe[*n_probe] = (inner_key){mb0, v0, sp0, fam[f], rc0};
        (*n_probe)++;
    }
    return false;
}

typedef unsigned char dead_table[2][ZERO_COUNT][RC_COUNT];

/* P9's bound from x->e, a vpp-1 plan on a placement across node groups:
 * its throughput with no pipeline bubble, tokens / (step - bubble).  Its
 * interleaved variants (place_interleaved) keep the same split and every
 * per-rank time; virtual stages shrink the bubble and add p2p, so none
 * beats it.  -1 for other objectives (no bound). */
static double flat_bound(const search_ctx *x)
{
    double busy = x->e.step_time_s - x->e.time.bubble_s;
    if (x->o->obj != OBJECTIVE_THROUGHPUT || !(busy > 0))
        return -1;
    return x->e.tokens_per_s * x->e.step_time_s / busy * (1 + 1e-9);
}

/* P9: what the vpp-1 plans of one (sp, zero, recompute level) of a cell
 * row (one mbs) bound: flat_bound per K/V exchange type and MoE overlaps
 * (flat_key; -1: none), on the level's layer split. */
#define FLAT_KEYS (CP_COMM_COUNT * 4)
typedef struct flat_level {
    int n_stages;             /* 0: nothing recorded */
    short split[STRATEGY_MAX_STAGES];
    double ub[FLAT_KEYS];
} flat_level;

/* P9: the key of x->s among a level's candidates: its K/V exchange type
 * and MoE overlaps, the knobs try_comm_types sets after placing. */
static int flat_key(const search_ctx *x)
{
    return (int)x->s.cp_comm * 4 + (x->s.ep_comm_overlap ? 1 : 0) +
           (x->s.shared_expert_overlap ? 2 : 0);
}

/* P2/P3: whether (vpp index vi, sp, zero, rc) at the current mbs is known not
 * to fit, because a variant that needs no more memory did not fit at this or
 * a smaller mbs (dead[]): the same or vpp 1, the same or sp on, the same or a
 * higher ZeRO stage of its family (0-1, or 0-2 when b->zero2_chain; 3), the
 * same or more recompute. */
static bool known_not_to_fit(const block_lists *b, dead_table *dead, int vi, int sp,
                             int zero, int rc)
{
    int v1 = -1, top = b->zero2_chain ? 2 : (zero <= 1 ? 1 : zero);
    for (int i = 0; i < b->vpp.n; i++)
        if (b->vpp.v[i] == 1)
            v1 = i;
    for (int a = 0; a < 2; a++) {
        int v = a == 0 ? vi : v1;
        if (v < 0 || (a == 1 && v == vi))
            continue;
        for (int sq = sp; sq <= 1; sq++)
            for (int z = zero; z <= (zero == 3 ? 3 : top); z++)
                for (int r = rc; r < RC_COUNT; r++)
                    if (dead[v][sq][z][r])
                        return true;
    }
    return false;
}

/* The most layers a (virtual) pipeline chunk of x->s holds. */
static int chunk_layers_max(const search_ctx *x)
{
    int most = 0, n[64], first[64];
    for (int r = 0; r < x->s.pp && r < STRATEGY_MAX_STAGES; r++)
        for (int c = 0; c < x->s.vpp; c += 64) {
            int k = x->s.vpp - c < 64 ? x->s.vpp - c : 64;
            strategy_rank_chunks(&x->s, x->m->layers, r, c, k, n, first);
            while (k-- > 0)
                if (n[k] > most)
                    most = n[k];
        }
    return most;
}

/* Whether P7 searches block recompute's layer count (--fix leaves it free,
 * the method block, the space has it: space_allows). */
static bool rc_layers_searched(const search_ctx *x)
{
    return x->fix.recompute_layers < 0 && x->fix.recompute_method != RECOMPUTE_UNIFORM &&
           space_allows(x, KNOB_RECOMPUTE_LAYERS, 1);
}

/* Whether the stack's rules admit block recompute of k layers per chunk of
 * `all` (knob_stack_rule: torchtitan checkpoints every block or every N-th,
 * STACK_RULE_FULL_EVERY_NTH; the other stacks any k). */
static bool rc_layers_admit(const search_ctx *x, const strategy *all, int k)
{
    strategy t = *all;
    t.recompute_layers = k;
    return knob_stack_rule(x->m, &t, KNOB_RECOMPUTE_LAYERS, NULL) == PLANNER_OK;
}

/* Whether a plan of objective `score` or less cannot enter the top N. */
static bool cannot_rank(const search_ctx *x, double score)
{
    const top_entry *w = top_worst(x);
    /* against the last kept plan's objective less its unvalidated knobs'
     * margin (search_rank_cmp): a plan of `score` with none of them ranks
     * before it above that */
    return !x->exhaustive && w != NULL &&
           score < search_rank_score(w->score, knobs_unvalidated_count(&w->s));
}

/* Whether x->s fits, by evaluate_bound (exact memory, no pipeline
 * simulation; its work is counted as an evaluation's); the step's lower
 * bound in *score_ub as the objective's upper bound (throughput: that
 * bound's tokens/s; other objectives: -1, no bound). */
static bool bound_fits(search_ctx *x, double *score_ub)
{
    evaluate_bound_with(x->m, x->c, x->p, &x->s, &x->e, memo(x));
    x->eval_work += SEARCH_EVAL_WORK_PER_LAYER * x->m->layers;
    if (x->work_limit > 0 && search_work(x) >= x->work_limit)
        x->limited = true;
    *score_ub = x->o->obj == OBJECTIVE_THROUGHPUT ? x->e.tokens_per_s * (1 + 1e-9) : -1;
    return x->e.feasible;
}

/* bound_fits for block recompute of n layers per chunk of `all`. */
static bool rc_layers_fit(search_ctx *x, const strategy *all, int n, double *score_ub)
{
    x->s = *all;
    x->s.recompute_layers = n;
    return bound_fits(x, score_ub);
}

/* P7 block recompute: full recompute of every layer (x->s, x->e: just
 * evaluated) fits; the fewest layers per chunk N (block) that still fit
 * make the fastest variant, as a stage's memory is non-increasing and its
 * time non-decreasing in N (layer_cost.c).  Bisection over 1 .. n - 1 on
 * memory alone (evaluate_bound) finds that N; it is evaluated (and
 * recorded) unless an upper bound on its objective cannot rank: the same
 * knobs without recompute (`bound`, its objective when evaluated, else
 * -1), full recompute's tokens/s / (1 - evaluation.recompute_share), or
 * evaluate_bound's; then each larger N while the one before it may rank
 * (amp-gpt2 on amp-4xg4dn: N 2 and 3 in the exhaustive top 10 behind N 1;
 * full recompute of every layer is evaluated already).  The exhaustive
 * search evaluates every N.  Only when
 * --fix leaves recompute_layers free and the method block; only the N the
 * stack's rules admit (rc_layers_admit: on torchtitan the fewest admitted
 * at or above the bisection's). */
static void twin_note(search_ctx *x, double tokens);

/* (Returns the objective of the fewest N it evaluated, -1 when none: P4,
 * P6.) */
static double search_rc_layers(search_ctx *x, double bound)
{
    int lo = 1, n, hi, admitted = 0;
    double ub = -1, best, last;
    strategy all;
    if (!rc_layers_searched(x))
        return -1;
    if (x->o->obj == OBJECTIVE_THROUGHPUT && x->e.recompute_share < 1) {
        double b = x->e.tokens_per_s / (1 - x->e.recompute_share) * (1 + 1e-9);
        if (bound < 0 || b < bound)
            bound = b;
    }
    all = x->s;   /* placed: the layer split does not depend on N (placement.c) */
    n = hi = chunk_layers_max(x);   /* N >= n: every layer, evaluated */
    if (n <= 1)
        return -1;
    if (x->exhaustive) {
        for (int k = 1; k < n && !stop(x); k++) {
            if (!rc_layers_admit(x, &all, k))
                continue;
            x->s = all;
            x->s.recompute_layers = k;
            try_strategy(x);
        }
        return -1;
    }
    for (int k = 1; k < n; k++)
        admitted += rc_layers_admit(x, &all, k) ? 1 : 0;
    if (admitted == 0)
        return -1;
    x->pruned += admitted;   /* less the one evaluated below */
    if (bound >= 0 && cannot_rank(x, bound)) {
        twin_note(x, bound);   /* P11: every N's tokens/s is below it */
        return -1;
    }
    while (lo < hi && !stop(x)) {
        int mid = lo + (hi - lo) / 2;
        double u;
        if (rc_layers_fit(x, &all, mid, &u)) {
            hi = mid;
            ub = u;
        } else {
            lo = mid + 1;
        }
    }
    while (lo < n && !rc_layers_admit(x, &all, lo))
        lo++;   /* needs no more memory than the fewest that fit */
    if (stop(x) || lo >= n)
        return -1;
    if (ub >= 0 && cannot_rank(x, ub)) {
        twin_note(x, ub);   /* P11: N = lo's tokens/s is below it */
        return -1;
    }
    x->pruned--;
    x->s = all;
    x->s.recompute_layers = lo;
    if (try_strategy(x) < 0)
        return -1;
    twin_note(x, x->e.tokens_per_s);
    best = last = objective_score(x, &x->s, &x->e);
    /* the next N, each no faster than the last, while the last may rank:
     * a slower N may still enter the top N behind it */
    for (int k = lo + 1; k < n && !stop(x) && !cannot_rank(x, last); k++) {
        if (!rc_layers_admit(x, &all, k))
            continue;
        x->pruned--;
        x->s = all;
        x->s.recompute_layers = k;
        if (try_strategy(x) < 0)
            break;
        twin_note(x, x->e.tokens_per_s);
        last = objective_score(x, &x->s, &x->e);
    }
    return best;
}

/* P9: whether the plan without the MoE all-to-all overlap cannot enter the
 * top N, x->e holding the evaluation of the same plan with it (f1_on: its
 * try_strategy result).  The overlap only hides all-to-all time under
 * compute (layer_cost.c, cost_overlapped) and leaves memory as it is, so
 * the plan without it is no faster and fits alike: when the overlapped
 * plan fits and its tokens/s, counted SEARCH_VALIDATED_TIE higher (the
 * plan without the unvalidated knob wins a near-tie: RANKING), cannot
 * rank, neither can it.  Throughput objective only (the goodput objectives
 * have no such bound); never in the exhaustive search. */
static bool overlap_off_cannot_rank(const search_ctx *x, int f1_on)
{
    return !x->exhaustive && f1_on == 1 && x->o->obj == OBJECTIVE_THROUGHPUT &&
           cannot_rank(x, x->e.tokens_per_s * (1.0 + SEARCH_VALIDATED_TIE));
}

/* One (mbs, vpp, sp, zero) cell of a block, whose recompute levels are
 * tried in order (search_cell), and what the prunes carry from level to
 * level: whether a level fitted (P4), the fastest evaluated miss (P7, P8). */
typedef struct block_cell {
    const block_lists *b;
    dead_table *dead;                       /* P2, P3: dead[vi][sp][zero][rc] */
    struct flat_level *flat;                /* P9: vpp 1's levels [sp][zero][rc] */
    const inner_key *probe;                 /* P1's probes, evaluated and recorded */
    int n_probe;
    int mbs, vi, vpp, sp, zero;
    bool fitted, fitted_valid;              /* P4: a level fitted, and was validated */
    bool fitted_shaped;                     /* ... on a split memory may have shaped
                                               (x->fit_split) */
    double bound;                           /* P7: the fastest evaluated miss, or -1 */
    double level_ub;                        /* P4, P6: a bound on the objective of
                                               each candidate of the level being
                                               tried (HUGE_VAL: none) */
    double fit_ub;                          /* P4: level_ub of the level that fits */
    int mi, si, zi;                         /* P11: the cell's list indices */
} block_cell;

/* P4: whether a level of cell c that fits (and may rank ahead of level
 * rc: RANKING) makes level rc, later, redundant: each candidate of level rc
 * is no faster than the fitting level's with the same K/V type and
 * overlaps on the same split, so when the fitting level's bound (fit_ub)
 * cannot enter the top N, neither can it.  (Without the bound, a later
 * level that ranks behind the fitting one within the top N was dropped:
 * gpt-oss-120b on h100-a100-mixed, tp 1 pp 4 vpp 2 with selective
 * recompute, 2,824,154 tokens/s, third of the exhaustive top 10.) */
static bool later_level_redundant(const search_ctx *x, const block_cell *c, int rc)
{
    return !x->exhaustive && c->fitted && (c->fitted_valid || !rc_level_validated(x->m, rc)) &&
           cannot_rank(x, c->fit_ub);
}

/* P4: records that x->s, the cell's first level that fits, does (`valid`:
 * with a validated recompute value), and its layer split. */
static void note_fit(search_ctx *x, block_cell *c, bool valid)
{
    c->fitted = true;
    c->fitted_valid = valid;
    c->fit_ub = c->level_ub;
    c->fitted_shaped = x->shaped;
    x->fit_split_n = x->s.n_stages;
    for (int i = 0; i < x->s.n_stages && i < STRATEGY_MAX_STAGES; i++)
        x->fit_split[i] = (short)x->s.stage[i].n_layers;
}

/* P4: whether x->s, just built, has the layer split of the cell's level
 * that fits (x->fit_split). */
static bool same_split_as_fit(const search_ctx *x)
{
    if (x->s.n_stages != x->fit_split_n)
        return false;
    for (int i = 0; i < x->s.n_stages && i < STRATEGY_MAX_STAGES; i++)
        if (x->s.stage[i].n_layers != x->fit_split[i])
            return false;
    return true;
}

/* Whether recompute level rc of cell c is pruned before it is built (P4 on
 * a split of the rules, P8, P2/P3); counts it. */
static bool rc_level_pruned(search_ctx *x, const block_cell *c, int rc)
{
    if (x->exhaustive)
        return false;
    if (later_level_redundant(x, c, rc) && !c->fitted_shaped) {
        x->pruned++;                  /* P4 */
        return true;
    }
    if (rc == RC_LEVEL_SEL_SAVE && c->bound >= 0 && cannot_rank(x, c->bound)) {
        x->pruned++;   /* P8: slower than no recompute, which cannot rank */
        return true;
    }
    if (known_not_to_fit(c->b, c->dead, c->vi, c->sp, c->zero, rc)) {
        c->dead[c->vi][c->sp][c->zero][rc] = 1;
        x->pruned++;                  /* P2, P3 */
        return true;
    }
    return false;
}

/* The MoE overlaps of x->s that --fix leaves free, as modes for
 * try_comm_types: bit 0 the all-to-all overlap (x->s has it where its rule
 * and the space allow: build), bit 1 the shared-expert overlap where the
 * all-to-all overlap cannot run (a model with shared experts, dispatcher
 * traffic -- ep or etp > 1 -- and the space allowing it; its rule checked;
 * with the flex dispatcher from core_v0.18.0,
 * knob_shared_overlap_flex_release).
 * Where both could run the all-to-all overlap is the one searched: it hides
 * the same traffic under the other pass's whole layer, the shared overlap
 * under the shared experts alone (the search's limit; --fix
 * shared_expert_overlap=on tries it).  0: neither is free. */
static int moe_overlap_modes(search_ctx *x)
{
    int modes = x->s.ep_comm_overlap && x->fix.ep_comm_overlap < 0 ? 1 : 0;
    if (x->fix.shared_expert_overlap < 0 && !x->s.ep_comm_overlap &&
        x->m->moe.shared_experts > 0 && (x->s.ep > 1 || x->s.etp > 1) &&
        space_allows(x, KNOB_SHARED_EXPERT_OVERLAP, 1) &&
        (!x->s.flex_dispatcher || knob_shared_overlap_flex_release(x->o->megatron))) {
        bool epo = x->s.ep_comm_overlap;
        x->s.ep_comm_overlap = false;
        x->s.shared_expert_overlap = true;
        fit_save_modules(x, &x->s);
        if (knob_rule(x->m, &x->s, KNOB_SHARED_EXPERT_OVERLAP, NULL) == PLANNER_OK)
            modes |= 2;
        x->s.ep_comm_overlap = epo;
        x->s.shared_expert_overlap = false;
        fit_save_modules(x, &x->s);
    }
    return modes;
}

/* ---- P11: the flex pass bounded by the alltoall pass ------------------
 *
 * search_block runs a block with the alltoall dispatcher, then with the
 * flex one (P10).  A flex plan and its alltoall twin (every knob the same
 * but the dispatcher, the router graphs it derives and the memory-saving set
 * that follows, derive_graphs)
 * differ only in their decoder layers' time: every dispatcher term of
 * layer_cost.c (moe_comm, moe_sort_chunks_s, moe_host_fwd_s) is an MoE
 * layer's, and where Megatron-Core keeps the MoE norm the memory-saving set
 * loses layernorm (fit_save_modules: no layer re-runs it), and their memory
 * is the same (test_search flex_dispatcher_keeps_memory) but there
 * (RC_LEVEL_SEL_SAVE; knob_moe_norm_recomputed), where flex needs more.
 * Let `share` be the largest fraction of a decoder layer's forward or
 * backward that the flex twin saves (flex_share; each kind of layer costed
 * with and without its recompute).  On the same layer split every forward and
 * backward of the flex plan's schedule keeps >= 1 - share of its alltoall
 * time (the rest of a rank's pass -- embedding, loss, ZeRO-3 and ZeRO-2
 * collectives hidden under it -- is the same, or grows as less hides), so
 * its step, a longest path through those operations plus the same
 * after-pipeline parts, is >= (1 - share) x the twin's (the argument of
 * evaluation.recompute_share, P7): tokens/s <= twin / (1 - share).
 * The alltoall pass notes, per recompute level of a cell (twin_note), the
 * largest such bound over the level's candidates, which covers the flex
 * candidates it did not evaluate as the prunes' premises make them no
 * faster: the plan without an MoE overlap (P9, bounded from the overlapped
 * plan's tokens/s), a slower K/V exchange type (P6), block recompute's N
 * (P7's own bounds on it, or its evaluation), a level P8 screens with
 * evaluate_bound (its bound); and
 * every later level of the cell is no faster than no recompute on the same
 * split (P4, P8), so no recompute's bound covers them.  The flex pass
 * skips a level whose bound cannot rank (twin_skips): before placing it
 * when the split is the rules' (split_by_rules: the twin's), after placing
 * it when the placer's split is the twin's.  What the skipped level would
 * have told the prunes comes from the twin: a miss stays a miss (flex
 * needs no less memory), a fit is a fit where the memory is the same (not
 * RC_LEVEL_SEL_SAVE), and no recompute's miss bounds P7 and P8 with its
 * bound.  A level whose twin missed is skipped unplaced whatever its
 * bound once the top N is full (a miss is reported only when nothing
 * fits).  Throughput objective, one node group, not the exhaustive search
 * (twins_apply); test_search flex_pass_skips_exactly. */

/* Whether search_block keeps the alltoall pass's levels for the flex pass:
 * throughput (the bound is on tokens/s), one node group (the placement
 * note's best on one group is every plan's), not the exhaustive search nor
 * the advice's search for any feasible plan. */
static bool twins_apply(const search_ctx *x)
{
    return !x->exhaustive && !x->o->flex_twins_off && !x->stop_at_feasible &&
           x->o->obj == OBJECTIVE_THROUGHPUT &&
           x->c->n_groups == 1 && x->placement == NULL;
}

static size_t twin_index(const twin_table *t, const block_cell *c, int rc)
{
    return ((((size_t)c->mi * (size_t)t->n_vpp + (size_t)c->vi) * (size_t)t->n_sp +
             (size_t)c->si) * (size_t)t->n_zero + (size_t)c->zi) * RC_COUNT + (size_t)rc;
}

/* The table for block lists b (x->s.pp stages); NULL when out of memory. */
static twin_table *twin_new(const block_lists *b, int pp)
{
    twin_table *t = pl_calloc(1, sizeof *t);
    size_t n = (size_t)b->mbs.n * (size_t)b->vpp.n * (size_t)b->sp.n * (size_t)b->zero.n *
               RC_COUNT;
    size_t ns = (size_t)b->mbs.n * (size_t)b->sp.n * RC_COUNT * CP_COMM_COUNT * 4;
    if (t == NULL)
        return NULL;
    *t = (twin_table){b->mbs.n, b->vpp.n, b->sp.n, b->zero.n, pp, NULL, NULL, NULL};
    t->lv = pl_calloc(n, sizeof *t->lv);
    t->split = pl_calloc(n * (size_t)pp, sizeof *t->split);
    t->share = pl_calloc(ns, sizeof *t->share);
    if (t->lv == NULL || t->split == NULL || t->share == NULL) {
        pl_free(t->lv);
        pl_free(t->split);
        pl_free(t->share);
        pl_free(t);
        return NULL;
    }
    for (size_t i = 0; i < ns; i++)
        t->share[i] = -1;
    return t;
}

static void twin_free(search_ctx *x)
{
    if (x->twins != NULL) {
        pl_free(x->twins->lv);
        pl_free(x->twins->split);
        pl_free(x->twins->share);
        pl_free(x->twins);
    }
    x->twins = NULL;
}

/* The largest fraction of a decoder layer's forward or backward (one layer
 * of each kind, with x->s's recompute and, under full recompute, without:
 * block recompute's kept layers) that x->s's flex twin saves; >= 0. */
static double flex_share(search_ctx *x)
{
    const strategy *a = &x->s;
    int g = a->n_stages > 0 ? a->stage[0].group : x->group;
    double share = 0;
    for (int kept = 0; kept < (a->recompute == RECOMPUTE_FULL ? 2 : 1); kept++) {
        strategy sa = *a, sf;
        if (kept) {
            sa.recompute = RECOMPUTE_NONE;
            sa.recompute_layers = 0;
        }
        sf = sa;
        sf.flex_dispatcher = true;
        sf.flex_deepep = knob_flex_deepep(x->o->megatron);
        sf.te_moe_graphs = x->twin_tmg;
        fit_save_modules(x, &sf);   /* as the flex pass fits them to its overlaps */
        for (int i = 0; i < x->m->layers; i++) {
            range_cost ra, rf;
            if (i > 0 && layer_spec_same(&x->m->layer[i], &x->m->layer[i - 1]))
                continue;
            cost_layer_range(x->m, x->c, x->p, &sa, g, sa.tp, i, 1, false, false, &ra);
            cost_layer_range(x->m, x->c, x->p, &sf, g, sf.tp, i, 1, false, false, &rf);
            x->eval_work += 2;   /* two layers costed: about two DP steps */
            if (!(ra.fwd_s > 0 && ra.bwd_s > 0))
                return 1;
            share = fmax(share, fmax(1 - rf.fwd_s / ra.fwd_s, 1 - rf.bwd_s / ra.bwd_s));
        }
    }
    return share;
}

/* The alltoall pass: notes that the flex twin of x->s (as its candidate
 * stands, evaluated or covered; at x->twin_cell's level x->twin_rc) is no
 * faster than `tokens` / (1 - share) on the same split.  flex_share is kept per
 * (mbs, sp, level, K/V type, overlaps): a layer's cost reads no other knob
 * of the block's cells (zero, vpp: layer_cost.c), and the graphs of the
 * flex twin follow the same (derive_graphs). */
static void twin_note(search_ctx *x, double tokens)
{
    twin_table *t = x->twins;
    const struct block_cell *c = x->twin_cell;
    int rc = x->twin_rc;
    double share;
    size_t at;
    if (t == NULL || x->flex)
        return;
    at = ((((size_t)c->mi * (size_t)t->n_sp + (size_t)c->si) * RC_COUNT + (size_t)rc) *
              CP_COMM_COUNT + (size_t)x->s.cp_comm) * 4 +
         (size_t)x->s.ep_comm_overlap + 2 * (size_t)x->s.shared_expert_overlap;
    if (t->share[at] < 0)
        t->share[at] = flex_share(x);
    share = t->share[at];
    x->twin_ub = fmax(x->twin_ub, share < 1 && isfinite(tokens)
                                      ? tokens / (1 - share) * (1 + 1e-9) : HUGE_VAL);
}

/* The alltoall pass: keeps what level rc of cell c gave (try_comm_types's
 * fit) and its split. */
static void twin_record(search_ctx *x, const block_cell *c, int rc, int fit)
{
    twin_table *t = x->twins;
    size_t at;
    if (t == NULL || x->flex || x->s.n_stages != t->pp)
        return;
    at = twin_index(t, c, rc);
    t->lv[at] = (twin_level){true, (signed char)(fit > 0 ? 1 : fit), x->twin_ub};
    for (int i = 0; i < t->pp; i++)
        t->split[at * (size_t)t->pp + (size_t)i] = (short)x->s.stage[i].n_layers;
}

/* Whether the flex pass's x->s (placed) has the split of level rc. */
static bool twin_same_split(const search_ctx *x, const block_cell *c, int rc)
{
    const twin_table *t = x->twins;
    size_t at = twin_index(t, c, rc);
    if (x->s.n_stages != t->pp)
        return false;
    for (int i = 0; i < t->pp; i++)
        if (x->s.stage[i].n_layers != t->split[at * (size_t)t->pp + (size_t)i])
            return false;
    return true;
}

/* The flex pass: whether level rc of cell c is skipped -- `placed` false
 * before it is built (a split of the rules), true after (the placer's) --
 * because its twin's bound, or no recompute's, cannot rank (counted
 * pruned); *fit then the level's result for search_cell as its twin
 * gives it (1, 0, or -2: nothing to record). */
static bool twin_skips(search_ctx *x, block_cell *c, int rc, bool placed, int *fit)
{
    const twin_table *t = x->twins;
    const twin_level *lv, *none;
    bool own, cover, rules;
    double ub = HUGE_VAL;
    if (t == NULL || !x->flex)
        return false;
    rules = split_by_rules(x, x->s.pp, c->vpp);
    lv = &t->lv[twin_index(t, c, rc)];
    none = &t->lv[twin_index(t, c, RC_LEVEL_NONE)];
    if (!placed && lv->evaluated && lv->fit == 0 && top_worst(x) != NULL) {
        /* the twin level missed, so does this one (flex needs no less
         * memory: P10's premise), and plans fit: no miss is reported */
        x->pruned++;
        *fit = 0;
        x->shaped = false;
        if (rules && rc == RC_LEVEL_NONE && lv->ub > c->bound)
            c->bound = lv->ub;   /* P7, P8: no recompute's miss, bounded */
        return true;
    }
    if (rules == placed)
        return false;
    own = lv->evaluated && (!placed || twin_same_split(x, c, rc));
    cover = none->evaluated && (!placed || twin_same_split(x, c, RC_LEVEL_NONE));
    if (own && lv->fit >= 0 && lv->ub > 0)
        ub = lv->ub;
    if (cover && none->fit >= 0 && none->ub > 0 && none->ub < ub)
        ub = none->ub;
    if (!(ub < HUGE_VAL) || !cannot_rank(x, ub * (1 + SEARCH_VALIDATED_TIE)))
        return false;
    x->pruned++;
    c->level_ub = ub * (1 + SEARCH_VALIDATED_TIE);   /* P4: cannot rank */
    *fit = -2;
    if (own && lv->fit == 0)
        *fit = 0;
    else if (own && lv->fit == 1 && rc != RC_LEVEL_SEL_SAVE)
        *fit = 1;
    if (!placed)
        x->shaped = false;   /* a split of the rules: as place() leaves it (note_fit) */
    if (*fit == 0 && rc == RC_LEVEL_NONE && (!placed || !x->placed_balanced) && ub > c->bound)
        c->bound = ub;   /* P7, P8: no recompute's miss, bounded */
    return true;
}

/* P9: the vpp-1 level of x->s (cell c, level rc) as try_comm_types left it. */
static flat_level *flat_at(const block_cell *c, int rc)
{
    return &c->flat[((size_t)c->sp * ZERO_COUNT + (size_t)c->zero) * RC_COUNT + (size_t)rc];
}

/* P9: notes x->s, a vpp-1 plan just evaluated (cell c, level rc, on a
 * placement across node groups), as a bound on its interleaved variants:
 * its split, and flat_bound under its key.  Not on the placer's
 * memory-balanced split for a miss (placed_balanced: the split of the
 * variants placed once plans fit is another). */
static void flat_note(search_ctx *x, const block_cell *c, int rc)
{
    flat_level *f = flat_at(c, rc);
    double ub = flat_bound(x);
    int k = flat_key(x);
    if (x->placed_balanced || x->s.n_stages > STRATEGY_MAX_STAGES)
        return;
    if (f->n_stages != x->s.n_stages)   /* (one split per level: placed once) */
        for (int i = 0; i < FLAT_KEYS; i++)
            f->ub[i] = -1;
    f->n_stages = x->s.n_stages;
    for (int i = 0; i < x->s.n_stages; i++)
        f->split[i] = (short)x->s.stage[i].n_layers;
    if (ub > f->ub[k])
        f->ub[k] = ub;
}

/* P9: whether x->s, an interleaved plan (vpp > 1) of cell c at level rc on
 * a placement across node groups, cannot rank by the bound of its vpp-1
 * plan: the same key (flat_key), on the same split (the ranks' layers:
 * place_interleaved chunks the placer's vpp-1 split). */
static bool flat_cannot_rank(const search_ctx *x, const block_cell *c, int rc)
{
    const flat_level *f;
    if (c->vpp <= 1 || x->placement == NULL || x->exhaustive)
        return false;
    f = flat_at(c, rc);
    if (f->n_stages != x->s.n_stages || !(f->ub[flat_key(x)] >= 0))
        return false;
    for (int i = 0; i < x->s.n_stages; i++)
        if (x->s.stage[i].n_layers != f->split[i])
            return false;
    return cannot_rank(x, f->ub[flat_key(x)]);
}

/* Evaluates the built strategy x->s (recompute level rc) with each K/V
 * exchange type the cell may use (cp_comm_list) and, for an MoE plan whose
 * overlaps --fix leaves free (moe_overlap_modes), with its overlap on (the
 * all-to-all overlap, or the shared-expert overlap) and off: the overlaps
 * are unvalidated and the plan without them needs the same memory, so that
 * a near-tie goes to the validated; P9: the overlap first, then the plan
 * without it only when it may rank (the overlapped plan, no slower than
 * it, fits and could rank).  Updates the cell's bounds (P7, P9) and returns the best
 * try_strategy result (1 when any type fits; P6 skips a type slower than one
 * that fits). */
static int try_comm_types(search_ctx *x, block_cell *c, int rc)
{
    int types[CP_COMM_COUNT];
    double layer_s[CP_COMM_COUNT], fit_s = HUGE_VAL;
    bool dominated[CP_COMM_COUNT];
    int nt = cp_comm_list(x, types, layer_s, dominated);
    int fit = -1, layers = x->s.recompute_layers, f1_on = -1;
    int modes = moe_overlap_modes(x), mode[3], nm = 0;
    double on_tokens = 0;   /* P11: the overlapped plan's tokens/s */

    c->level_ub = -HUGE_VAL;   /* P4, P6: the most of what is evaluated (what is
                                  skipped cannot rank or is no faster) */
    if (modes & 1)
        mode[nm++] = 1;
    if (modes & 2)
        mode[nm++] = 2;
    mode[nm++] = modes ? 0 : -1;   /* -1: as built */
    for (int ti = 0; ti < nt * nm && !stop(x); ti++) {
        int f1, mo = mode[ti % nm];
        x->s.cp_comm = (cp_comm_type)types[ti / nm];
        x->s.cp_a2a = x->s.cp_comm == CP_COMM_A2A_P2P ? hcp_a2a(x) : 0;
        if (mo >= 0) {
            x->s.ep_comm_overlap = mo == 1;
            x->s.shared_expert_overlap = mo == 2;
            fit_save_modules(x, &x->s);
        }
        x->s.recompute_layers = layers;
        if (mo == 0 && overlap_off_cannot_rank(x, f1_on)) {
            x->pruned++;   /* P9 */
            twin_note(x, on_tokens);   /* no faster than the overlapped plan */
            continue;
        }
        if (flat_cannot_rank(x, c, rc)) {
            x->pruned++;   /* P9 */
            continue;
        }
        if (ti / nm > 0 && (dominated[ti / nm] ||
                            (layer_s[ti / nm] > 0 && layer_s[ti / nm] >= fit_s)) &&
            cannot_rank(x, c->level_ub)) {
            x->pruned++;   /* P6: no faster than a type evaluated, which cannot rank */
            continue;
        }
        if ((f1 = try_strategy(x)) > fit)
            fit = f1;
        if (f1 >= 0 && objective_score(x, &x->s, &x->e) > c->level_ub)
            c->level_ub = objective_score(x, &x->s, &x->e);
        if (f1 == 1 && layer_s[ti / nm] > 0 && layer_s[ti / nm] < fit_s)
            fit_s = layer_s[ti / nm];
        if (mo > 0) {
            f1_on = f1;
            on_tokens = x->e.tokens_per_s;
        }
        if (f1 >= 0)
            twin_note(x, x->e.tokens_per_s);
        /* P7, P8's bound: no recompute's miss, unless on the placer's
         * memory-balanced split for a miss (slower than the fastest) */
        if (f1 == 0 && rc == RC_LEVEL_NONE && !x->placed_balanced &&
            objective_score(x, &x->s, &x->e) > c->bound)
            c->bound = objective_score(x, &x->s, &x->e);
        if (f1 == 1 && rc == RC_LEVEL_FULL)   /* P7, per K/V type */
            c->level_ub = fmax(c->level_ub, search_rc_layers(x, c->bound));
        if (f1 >= 0 && c->vpp == 1 && rc != RC_LEVEL_FULL && x->placement != NULL)
            flat_note(x, c, rc);
    }
    return fit;
}

/* Whether the rules refuse x->s (built) with every K/V exchange type and
 * MoE overlap try_comm_types could give it: its one type (cp_comm_single)
 * or each, with each combination of the two overlaps. */
static bool level_refused(search_ctx *x)
{
    strategy built = x->s;
    bool all = true;
    int k;
    if (strategy_check_rule(x->m, &x->s, &k, NULL) == PLANNER_OK)
        return false;   /* (the built plan itself: the common case) */
    for (int t = 0; t < CP_COMM_COUNT && all; t++) {
        if (cp_comm_single(x) ? t != (int)built.cp_comm : false)
            continue;
        x->s.cp_comm = (cp_comm_type)t;
        x->s.cp_a2a = t == (int)built.cp_comm ? built.cp_a2a
                      : t == CP_COMM_A2A_P2P ? hcp_a2a(x) : 0;
        for (int mo = 0; mo < 4 && all; mo++) {
            x->s.ep_comm_overlap = (mo & 1) != 0;
            x->s.shared_expert_overlap = (mo & 2) != 0;
            all = strategy_check_rule(x->m, &x->s, &k, NULL) != PLANNER_OK;
        }
    }
    x->s = built;
    return all;
}

/* P8 (and P4 on the placer's split): whether evaluate_bound screens out
 * x->s, built at level rc of cell c: a miss, or (`rank`) a fit whose bound
 * cannot rank (counted pruned: a miss is recorded dead, a fit as the cell's
 * fit when it has none); or a plan the rules refuse (counted so; it says
 * nothing of the other levels).  Only where x->s is its one K/V exchange
 * type (cp_comm_single): the bound is the built type's. */
static bool screened_out(search_ctx *x, block_cell *c, int rc, bool rank)
{
    double ub;
    if (level_refused(x)) {   /* no bound needed: nothing would be evaluated */
        rules_refuse(x, true);
        return true;
    }
    if (bound_fits(x, &ub) && !(rank && ub >= 0 && cannot_rank(x, ub)))
        return false;
    if (rules_refuse(x, true))
        return true;
    x->pruned++;
    c->level_ub = ub >= 0 ? ub : HUGE_VAL;   /* P4: a fit here cannot rank */
    if (cp_comm_single(x)) {   /* P11: the level's one type, bounded */
        x->twin_ub = 0;
        twin_note(x, ub >= 0 ? ub : HUGE_VAL);
        twin_record(x, c, rc, x->e.feasible ? 1 : 0);
    }
    if (!x->e.feasible)
        c->dead[c->vi][c->sp][c->zero][rc] = 1;
    else if (!c->fitted)
        note_fit(x, c, false);
    return true;
}

/* Recompute level rc of cell c, not pruned: a P1 probe (evaluated and
 * recorded already) is a miss; else the strategy is built, P8 tried on
 * memory alone, and the K/V types evaluated.  Returns the fit for
 * search_cell to record (1 fits, 0 does not, -1 invalid), or -2 when there
 * is nothing to record. */
static int eval_rc_level(search_ctx *x, block_cell *c, int rc)
{
    int fit;
    x->twin_cell = c;
    x->twin_rc = rc;
    for (int q = 0; q < c->n_probe; q++)
        if (key_eq(&c->probe[q], c->mbs, c->vpp, c->sp, c->zero, rc))
            return 0;
    if (twin_skips(x, c, rc, false, &fit))
        return fit;   /* P11 */
    if (build(x, c->mbs, c->vpp, c->sp, c->zero, rc) != 0)
        return -2;
    if (twin_skips(x, c, rc, true, &fit))
        return fit;   /* P11 */
    if (later_level_redundant(x, c, rc)) {
        /* P4 on the placer's split: pruned on the fit's split; on another
         * (the fit's only where memory skewed it) screened like P8, on
         * memory alone when block recompute's N (P7, faster) follows */
        if (same_split_as_fit(x)) {
            x->pruned++;
            return -2;
        }
        if (cp_comm_single(x) && screened_out(x, c, rc, rc != RC_LEVEL_FULL ||
                                                         !rc_layers_searched(x)))
            return -2;
    }
    if (!x->exhaustive && rc == RC_LEVEL_SEL_SAVE && screened_out(x, c, rc, true))
        return -2;   /* P8 */
    x->twin_ub = 0;
    fit = try_comm_types(x, c, rc);
    twin_record(x, c, rc, fit);
    return fit;
}

/* The recompute levels of cell c, in the list's order (none first): each
 * pruned or evaluated, its fit recorded for P4 and P2/P3. */
static void search_cell(search_ctx *x, block_cell *c)
{
    c->fitted = c->fitted_valid = false;
    c->bound = -1;
    for (int ri = 0; ri < c->b->rc.n && !stop(x); ri++) {
        int rc = c->b->rc.v[ri], fit;
        if (rc_level_pruned(x, c, rc))
            continue;
        c->level_ub = HUGE_VAL;   /* (no bound unless the level's path gives one) */
        fit = eval_rc_level(x, c, rc);
        if (fit == 1 && !c->fitted)          /* P4 */
            note_fit(x, c, rc_level_validated(x->m, rc));
        else if (fit == 0)
            c->dead[c->vi][c->sp][c->zero][rc] = 1;   /* P2, P3 */
    }
}

/* The candidates of block b, every (mbs, vpp, sp, zero, rc) whose vpp
 * applies at its mbs: what P1 prunes when no variant fits. */
static long block_candidates(const search_ctx *x, const block_lists *b)
{
    long total = 0;
    for (int mi = 0; mi < b->mbs.n; mi++)
        for (int vi = 0; vi < b->vpp.n; vi++)
            if (vpp_applies(x, b->vpp.v[vi], x->gbs / (x->s.dp * b->mbs.v[mi])))
                total += (long)b->sp.n * b->zero.n * b->rc.n;
    return total;
}

static const char *flex_backend_missing_here(const search_ctx *x);

/* Whether a rule on the block's own degrees (tp, cp, ep, etp: knob_rule
 * reads nothing else of them) refuses every candidate of block b, or a
 * pinned flex dispatcher has no backend in the release on the block's GPUs
 * (knob_flex_backend: emit.c refuses such a plan); counts them under that
 * rule (refuse).  Reached under --fix (the search's own lists keep to
 * degrees the rules admit, and to flex where it runs: flex_searched). */
static bool block_refused(search_ctx *x, const block_lists *b)
{
    static const knob_id degrees[] = {KNOB_TP, KNOB_CP, KNOB_EP, KNOB_ETP};
    strategy t = x->s;
    t.seq_len = x->seq_len;
    t.gbs = x->gbs;
    for (size_t i = 0; i < sizeof degrees / sizeof degrees[0]; i++)
        if (knob_rule(x->m, &t, degrees[i], NULL) != PLANNER_OK) {
            planner_error why;
            error_clear(&why);
            knob_rule(x->m, &t, degrees[i], &why);
            refuse(x, degrees[i], refused_by_stack(x, &t, degrees[i]), block_candidates(x, b),
                   b->mbs.v[0],
                   x->fix.vpp > 0 ? x->fix.vpp : 1, why.msg);
            return true;
        }
    const char *no_backend = x->flex ? flex_backend_missing_here(x) : NULL;
    if (no_backend != NULL) {   /* pinned: a plan --emit refuses */
        refuse(x, KNOB_FLEX_DISPATCHER, false, block_candidates(x, b), b->mbs.v[0],
               x->fix.vpp > 0 ? x->fix.vpp : 1, no_backend);
        return true;
    }
    return false;
}

/* Drops from block b's sp list of an MoE model the values Megatron's rule
 * on sp refuses at the block's degrees (knob_rule reads tp, sp and the
 * model of them: MoE layers with tp > 1 need sequence parallelism; not the
 * stack's rules, knob_stack_rule), counting their candidates
 * under that rule (refuse) as block_refused does: none of them would be
 * valid, and placing each (the placer's DP) before the rules refused it
 * cost as much as a valid one.  A --fix sp is kept (strategy_check names
 * the rule). */
static void sp_refused(search_ctx *x, block_lists *b)
{
    strategy t = x->s;
    int n = 0;
    long each = b->sp.n > 0 ? block_candidates(x, b) / b->sp.n : 0;
    if (x->fix.sp >= 0 || x->m->moe.experts <= 0)
        return;
    t.seq_len = x->seq_len;
    t.gbs = x->gbs;
    t.stack = x->c->stack;
    for (int i = 0; i < b->sp.n; i++) {
        planner_error why;
        t.sp = b->sp.v[i] != 0;
        if (knob_rule(x->m, &t, KNOB_SP, NULL) == PLANNER_OK ||
            refused_by_stack(x, &t, KNOB_SP)) {   /* (the stack's rules: left as they were) */
            b->sp.v[n++] = b->sp.v[i];
            continue;
        }
        error_clear(&why);
        knob_rule(x->m, &t, KNOB_SP, &why);
        refuse(x, KNOB_SP, refused_by_stack(x, &t, KNOB_SP), each, b->mbs.v[0],
               x->fix.vpp > 0 ? x->fix.vpp : 1, why.msg);
    }
    b->sp.n = n;
}

/* Evaluates one (group, tp, cp, pp, dp, ep) block with prunes P1-P9 under
 * the token dispatcher x->flex: P1 first (block_may_fit), then every cell
 * in the order mbs, vpp, sp, zero.  `miss`: the block's other dispatcher
 * found by P1 that no variant fits (P10); returns whether P1 found so here
 * (false in the exhaustive search). */
static bool search_block_at(search_ctx *x, bool miss)
{
    block_lists b;
    dead_table *dead;   /* dead[vpp index][sp][zero][rc]: did not fit at a smaller mbs (P2) */
    flat_level *flat;   /* P9: [sp][zero][rc] at this mbs (placements across groups) */
    inner_key probe[ZERO_FAMILIES];
    int n_probe = 0;

    block_lists_make(x, &b);
    if (b.mbs.n == 0 || block_refused(x, &b))
        return false;
    sp_refused(x, &b);
    if (b.sp.n == 0)
        return false;
    if (!x->exhaustive && miss) {
        x->pruned += block_candidates(x, &b);   /* P10 */
        return true;
    }
    if (!x->exhaustive && !block_may_fit(x, &b, probe, &n_probe)) {
        x->pruned += block_candidates(x, &b) - n_probe;
        return true;
    }
    if (x->twins_on && !x->flex) {   /* P11: kept for the flex pass */
        twin_free(x);
        x->twins = twin_new(&b, x->s.pp);
    } else if (x->twins != NULL &&
               (x->twins->n_mbs != b.mbs.n || x->twins->n_vpp != b.vpp.n ||
                x->twins->n_sp != b.sp.n || x->twins->n_zero != b.zero.n)) {
        twin_free(x);   /* (the passes share the lists) */
    }
    dead = pl_calloc((size_t)b.vpp.n, sizeof *dead);
    flat = x->placement != NULL ? pl_calloc(2 * ZERO_COUNT * RC_COUNT, sizeof *flat) : NULL;
    if (dead == NULL || (x->placement != NULL && flat == NULL)) {
        pl_free(dead);
        pl_free(flat);
        x->oom = true;
        return false;
    }
    for (int mi = 0; mi < b.mbs.n && !stop(x); mi++) {
        int mb = x->gbs / (x->s.dp * b.mbs.v[mi]);
        for (int q = 0; flat != NULL && q < 2 * ZERO_COUNT * RC_COUNT; q++)
            flat[q].n_stages = 0;   /* P9: none yet at this mbs */
        for (int vi = 0; vi < b.vpp.n && !stop(x); vi++) {
            if (!vpp_applies(x, b.vpp.v[vi], mb))
                continue;
            for (int si = 0; si < b.sp.n && !stop(x); si++)
                for (int zi = 0; zi < b.zero.n && !stop(x); zi++) {
                    block_cell c = {&b, dead, flat, probe, n_probe, b.mbs.v[mi], vi,
                                    b.vpp.v[vi], b.sp.v[si], b.zero.v[zi], false, false,
                                    false, -1, HUGE_VAL, HUGE_VAL, mi, si, zi};
                    search_cell(x, &c);
                }
        }
    }
    pl_free(dead);
    pl_free(flat);
    return false;
}

/* Why the release planned for has no flex dispatcher backend on the GPUs
 * of the block (x->group, or a part of x->placement): knob_flex_backend_
 * missing's reason; NULL when it has one on all of them. */
static const char *flex_backend_missing_here(const search_ctx *x)
{
    for (int q = 0; q < (x->placement == NULL ? 1 : x->placement->n_parts); q++) {
        const node_group *g =
            &x->c->group[x->placement == NULL ? x->group : x->placement->part[q].group];
        if (knob_flex_backend(x->o->megatron, g) == NULL)
            return knob_flex_backend_missing(x->o->megatron, g);
    }
    return NULL;
}

static bool flex_backend_here(const search_ctx *x)
{
    return flex_backend_missing_here(x) == NULL;
}

/* Whether the block x->s (its degrees set) is searched with the flex token
 * dispatcher too: --fix leaves it free, the model has experts, its rule
 * (knob_rule: ep > 1), the space (space_allows: the stack) and the release
 * and GPUs (flex_backend_here) allow it, and a pinned shared-expert overlap
 * runs with it (knob_shared_overlap_flex_release). */
static bool flex_searched(search_ctx *x)
{
    bool ok;
    if (x->fix.flex_dispatcher >= 0 || x->m->moe.experts <= 0 ||
        !space_allows(x, KNOB_FLEX_DISPATCHER, 1) || !flex_backend_here(x) ||
        (x->fix.shared_expert_overlap > 0 && !knob_shared_overlap_flex_release(x->o->megatron)))
        return false;
    x->s.flex_dispatcher = true;
    ok = knob_rule(x->m, &x->s, KNOB_FLEX_DISPATCHER, NULL) == PLANNER_OK;
    x->s.flex_dispatcher = false;
    return ok;
}

/* One (group, tp, cp, pp, dp, ep, etp) block under each token dispatcher
 * it may run: the --fix value, else the alltoall dispatcher and, where
 * flex_searched, the flex one (DeepEP/HybridEP).  The cost model does not
 * make the flex dispatcher never slower (it sends a token once per
 * destination rank and NVLink domain, but forwards it over NVLink inside
 * each domain it reaches: comm.c), so both are evaluated; the flex pass
 * needs no less memory (the same, test_search flex_dispatcher_keeps_memory,
 * or more where the router graphs keep the MoE norm, router_graphs_keep_
 * moe_norm), so P10: when P1 finds no variant of the block fits under the
 * alltoall dispatcher, none fits under flex.  A tie goes to
 * alltoall, Megatron's recipes' default (RANKING). */
static void search_block(search_ctx *x)
{
    int passes = flex_searched(x) ? 2 : 1;
    bool miss = false;
    strategy degrees = x->s;
    x->twins_on = passes == 2 && twins_apply(x);
    for (int i = 0; i < passes && !stop(x); i++) {
        x->s = degrees;
        x->flex = passes == 2 ? i == 1 : x->fix.flex_dispatcher > 0;
        miss = search_block_at(x, miss);
    }
    x->flex = false;
    x->twins_on = false;
    twin_free(x);
}

/* The cp degrees to search on n GPUs: the --fix value, else powers of two
 * up to n with seq % (2 cp) == 0 and seq / cp >= min_tokens, those the
 * stack has. */
static void cp_list(const search_ctx *x, int_list *cps, int n, int min_tokens)
{
    const strategy_constraints *f = &x->fix;
    cps->n = 0;
    if (f->cp > 0)
        list_push(cps, f->cp);
    else
        for (int c = 1; c <= n && (c == 1 || x->seq_len / c >= min_tokens); c *= 2)
            if (c == 1 || x->seq_len % (2 * c) == 0)
                list_push(cps, c);
    stack_filter(x, cps, KNOB_CP, f->cp > 0);
}

/* The largest cp searched at min_tokens per rank (1 when none). */
static int cp_searched_max(const search_ctx *x, int min_tokens)
{
    int cp_max = 1;
    while (x->seq_len / (cp_max * 2) >= min_tokens)
        cp_max *= 2;
    return cp_max;
}

/* Expert parallelism for stages of tcd = tp cp dp ranks: the --fix value;
 * 1 on dense models; on MoE models every ep dividing both tcd (the EP group
 * is carved from the dp x cp ranks of a stage: Megatron-Core
 * parallel_state.py's expert rank generator) and the experts, that the
 * stack runs. */
static void ep_list(const search_ctx *x, int_list *out, long tcd)
{
    const strategy_constraints *f = &x->fix;
    out->n = 0;
    if (f->ep > 0)
        list_push(out, f->ep);
    else if (x->m->moe.experts > 0) {
        for (int e = 1; e <= x->m->moe.experts && e <= tcd; e++)
            if (tcd % e == 0 && x->m->moe.experts % e == 0)
                list_push(out, e);
    }
    else
        list_push(out, 1);
    stack_filter(x, out, KNOB_EP, f->ep > 0);
}

/* The expert tensor-parallel degrees of a block with tp cp dp = tcd ranks
 * per stage and expert parallelism ep: the --fix value; 1 on dense models;
 * on MoE models 1 and `limit` (the block's tp, within the node group's
 * NVLink domain) when etp's rule admits it (knob_rule: ep x etp divides
 * tcd, etp the expert ffn, no linear biases; the stack's rules on the
 * block's tp: torchtitan's etp of tp or 1, DeepSpeed's of 1), within the
 * space (space_allows: the stack, and validate's validated values). */
static void etp_list(const search_ctx *x, int_list *out, int tp, long tcd, int ep, int limit)
{
    strategy t;
    out->n = 0;
    if (x->fix.etp > 0) {
        list_push(out, x->fix.etp);
        return;
    }
    list_push(out, 1);
    memset(&t, 0, sizeof t);
    t.tp = tp;
    t.cp = 1;
    t.dp = (int)(tcd / tp);
    t.ep = ep;
    t.etp = limit;
    t.stack = x->c->stack;
    if (x->m->moe.experts > 0 && t.etp > 1 && knob_rule(x->m, &t, KNOB_ETP, NULL) == PLANNER_OK)
        list_push(out, t.etp);
    stack_filter(x, out, KNOB_ETP, false);
}

/* ---- parallel: units and batches (PARALLEL) ------------------------------ */

/* One block to search: its degrees, node group, GPUs and placement. */
typedef struct search_unit {
    int tp, cp, pp, dp, ep, etp;
    int group, gpus;
    bool placed;              /* on `where` (search_placements), else on group */
    placement where;
} search_unit;

typedef struct unit_list {
    search_unit *u;
    size_t n, cap;
} unit_list;

/* What a worker thread keeps from unit to unit: the placer (its cost
 * tables forgotten at each unit's start) and the memo of layer-range costs
 * (whose answers are the same computed or remembered). */
typedef struct worker_scratch {
    placer *placer;
    eval_memo *memo;
} worker_scratch;

/* Adds the block x->s (degrees set) on x->group / x->placement. */
static void unit_add(search_ctx *x, unit_list *l)
{
    search_unit *u;
    search_unit *grown = pl_grow(l->u, &l->cap, l->n + 1, sizeof *l->u, 64);
    if (grown == NULL) {
        x->oom = true;
        return;
    }
    l->u = grown;
    u = &l->u[l->n++];
    memset(u, 0, sizeof *u);
    u->tp = x->s.tp;
    u->cp = x->s.cp;
    u->pp = x->s.pp;
    u->dp = x->s.dp;
    u->ep = x->s.ep;
    u->etp = x->s.etp;
    u->group = x->group;
    u->gpus = x->gpus;
    u->placed = x->placement != NULL;
    if (u->placed)
        u->where = *x->placement;
}

/* u, a copy of the search x as of its batch's start, made a unit: its own
 * counts, refusals, plans and work start at nothing, its placer and memo
 * are its worker's, and it may do `share` of the work the limit leaves.
 * What only a better one replaces -- the first invalid candidate's
 * message, the closest miss, the best plan per kind of placement -- it
 * starts from x's, so it records only what beats them, and unit_merge
 * compares that again with x's as of the merge. */
static void unit_begin(search_ctx *u, const search_ctx *x, worker_scratch *w, double share)
{
    *u = *x;
    u->pool = NULL;
    u->order = NULL;
    u->n_top = u->pool_cap = 0;
    u->base_pool = x->pool;
    u->base_order = x->order;
    u->base_live = x->n_top;
    u->candidates = u->feasible = u->invalid = u->pruned = u->invalid_stack = 0;
    memset(u->refused, 0, sizeof u->refused);
    u->feasible_before = x->feasible;
    u->work_before = search_work(x);
    if (x->work_limit > 0)
        u->work_limit = u->work_before + share * (x->work_limit - u->work_before);
    u->eval_work = 0;
    u->placer = w->placer;
    if (u->placer != NULL)
        placer_forget(u->placer);
    u->placer_start = u->placer != NULL ? placer_work(u->placer) : 0;
    u->memo = w->memo;
    u->twins = NULL;
}

/* Searches unit su in u (a worker thread: it writes only u and w). */
static void unit_search(search_ctx *u, const search_unit *su, worker_scratch *w)
{
    memset(&u->s, 0, sizeof u->s);
    u->s.tp = su->tp;
    u->s.cp = su->cp;
    u->s.pp = su->pp;
    u->s.dp = su->dp;
    u->s.ep = su->ep;
    u->s.etp = su->etp;
    u->group = su->group;
    u->gpus = su->gpus;
    u->placement = su->placed ? &su->where : NULL;
    search_block(u);
    u->placement = NULL;
    /* the worker keeps its placer (made on first use) and memo; the unit
     * keeps its work, the placer's share folded in (units_run merges it
     * after the worker has gone on to other units) */
    u->eval_work = search_work(u) - u->work_before;
    w->placer = u->placer;
    w->memo = u->memo;
    u->placer = NULL;
    u->memo = NULL;
}

/* Adds unit u's findings to the search x, as if x had searched it:
 * counts, refusals and their first messages, the closest miss, the best
 * plan per kind of placement, the plans it kept (offered in its order). */
static void unit_merge(search_ctx *x, search_ctx *u)
{
    x->candidates += u->candidates;
    x->feasible += u->feasible;
    x->invalid += u->invalid;
    x->pruned += u->pruned;
    x->invalid_stack += u->invalid_stack;
    for (int b = 0; b < 2; b++)
        for (int k = 0; k <= KNOB_COUNT; k++) {
            if (x->refused[b][k] == 0 && u->refused[b][k] > 0)
                memcpy(x->refused_why[b][k], u->refused_why[b][k], sizeof x->refused_why[b][k]);
            x->refused[b][k] += u->refused[b][k];
        }
    if ((x->first_invalid[0] == '\0' && u->first_invalid[0] != '\0') || u->broken) {
        memcpy(x->first_invalid, u->first_invalid, sizeof x->first_invalid);
        x->first_by_stack = u->first_by_stack;
    }
    x->eval_work += search_work(u) - u->work_before;
    if (u->have_miss &&
        (!x->have_miss || u->miss_ratio < x->miss_ratio ||
         (u->miss_ratio == x->miss_ratio &&
          search_rank_cmp(u->miss_score, u->miss_peak, &u->miss, x->miss_score, x->miss_peak,
                          &x->miss) < 0))) {
        x->have_miss = true;
        x->miss_ratio = u->miss_ratio;
        x->miss_score = u->miss_score;
        x->miss_peak = u->miss_peak;
        x->miss = u->miss;
    }
    for (int k = 0; k < 2; k++)
        if (u->have_best[k] && (!x->have_best[k] || u->best_score[k] > x->best_score[k])) {
            x->have_best[k] = true;
            x->best_score[k] = u->best_score[k];
            x->best[k] = u->best[k];
        }
    for (int i = 0; i < u->n_top; i++) {
        const top_entry *t = &u->pool[u->order[i]];
        top_offer(x, &t->s, t->score, t->peak_bytes);
    }
    x->oom = x->oom || u->oom;
    x->broken = x->broken || u->broken;
    x->limited = x->limited || u->limited ||
                 (x->work_limit > 0 && search_work(x) >= x->work_limit);
    x->found = x->found || u->found;
}

/* One batch of n units on the worker threads. */
typedef struct unit_batch {
    const search_ctx *x;
    const search_unit *first;
    int n;
    search_ctx *u;            /* [SEARCH_BATCH] */
} unit_batch;

/* Unit i of the batch.  The first starts from the search as it stands when
 * it is merged, so it may do all the work the limit leaves; each other one
 * 1/n of it (what the batch spends on units the limit may discard stays
 * under what is left; units_run searches again a unit that its share
 * stopped). */
static void unit_item(void *arg, int i, int worker)
{
    unit_batch *b = arg;
    worker_scratch *w = &b->x->scratch[worker];
    unit_begin(&b->u[i], b->x, w, i == 0 ? 1.0 : 1.0 / b->n);
    unit_search(&b->u[i], &b->first[i], w);
}

/* Searches the units of l in batches of SEARCH_BATCH on x->o->jobs threads
 * (PARALLEL), merging each batch's units in order; stops where the search
 * stops (stop(x): the work limit, a feasible plan for the advice, ...). */
static void units_run(search_ctx *x, unit_list *l)
{
    unit_batch b = {x, NULL, 0, NULL};
    int jobs = x->o->jobs > 0 ? x->o->jobs : 1;
    if (x->scratch == NULL)
        x->scratch = pl_calloc(WORKERS_MAX, sizeof *x->scratch);
    b.u = pl_calloc(SEARCH_BATCH, sizeof *b.u);
    if (x->scratch == NULL || b.u == NULL)
        x->oom = true;
    /* batches of 1, 2, 4, ... SEARCH_BATCH units: the first blocks fill
     * the top N, the prunes' bound, before many start without one */
    for (size_t at = 0, size = 1; at < l->n && !stop(x); at += size, size *= 2) {
        int n;
        if (size > SEARCH_BATCH)
            size = SEARCH_BATCH;
        n = l->n - at < size ? (int)(l->n - at) : (int)size;
        b.first = &l->u[at];
        b.n = n;
        workers_run(n, jobs, unit_item, &b);
        for (int i = 0; i < n; i++) {
            if (i > 0 && !stop(x) && x->work_limit > 0 &&
                (b.u[i].limited || search_work(x) + b.u[i].eval_work >= x->work_limit)) {
                /* its share of the work stopped the unit, or it would take
                 * the search past the limit: it runs again from where the
                 * search now stands, so it stops where a search of one
                 * block after another would */
                pl_free(b.u[i].pool);
                pl_free(b.u[i].order);
                unit_begin(&b.u[i], x, &x->scratch[0], 1.0);
                unit_search(&b.u[i], &b.first[i], &x->scratch[0]);
            }
            if (!stop(x))
                unit_merge(x, &b.u[i]);
            pl_free(b.u[i].pool);
            pl_free(b.u[i].order);
        }
        progress_report(&x->o->progress, x->candidates, -1);
    }
    pl_free(b.u);
    pl_free(l->u);
    l->u = NULL;
    l->n = l->cap = 0;
}

/* Enumerates every block of node group x->group with N = x->gpus, then
 * searches them (units_run). */
static void search_group(search_ctx *x)
{
    const model *m = x->m;
    const node_group *g = &x->c->group[x->group];
    const strategy_constraints *f = &x->fix;
    int_list tps, cps, pps, eps, etps;
    int n = x->gpus;
    unit_list l = {NULL, 0, 0};

    tps.n = 0;
    if (f->tp > 0) {
        list_push(&tps, f->tp);
    } else {
        int lim = group_tp_limit(g);
        for (int t = 1; t <= lim && t <= n; t *= 2)
            if (knob_tp_splits_heads(m, t))
                list_push(&tps, t);
    }
    cp_list(x, &cps, n, SEARCH_CP_MIN_TOKENS);
    if (f->pp > 0) {
        pps.n = 0;
        list_push(&pps, f->pp);
    } else {
        /* any pp up to the layers: the placer splits them unevenly when
         * pp does not divide them */
        divisors(&pps, n, 1, m->layers < STRATEGY_MAX_STAGES ? m->layers : STRATEGY_MAX_STAGES);
    }

    /* cp outermost: cp 1's blocks come first, in the order they had before
     * cp was searched (what a work limit reaches first) */
    for (int ci = 0; ci < cps.n && !stop(x); ci++)
        for (int ti = 0; ti < tps.n && !stop(x); ti++)
            for (int pi = 0; pi < pps.n && !stop(x); pi++) {
                int tp = tps.v[ti], cp = cps.v[ci], pp = pps.v[pi];
                long tcp = (long)tp * cp * pp;
                int dp;
                if (tcp > n || n % tcp != 0)
                    continue;
                dp = (int)(n / tcp);
                if ((f->dp > 0 && dp != f->dp) || x->gbs % dp != 0)
                    continue;
                ep_list(x, &eps, (long)tp * cp * dp);
                for (int ei = 0; ei < eps.n && !stop(x); ei++) {
                    etp_list(x, &etps, tp, (long)tp * cp * dp, eps.v[ei],
                             tp < group_tp_limit(g) ? tp : group_tp_limit(g));
                    for (int xi = 0; xi < etps.n && !stop(x); xi++) {
                        memset(&x->s, 0, sizeof x->s);
                        x->s.tp = tp;
                        x->s.cp = cp;
                        x->s.pp = pp;
                        x->s.dp = dp;
                        x->s.ep = eps.v[ei];
                        x->s.etp = etps.v[xi];
                        unit_add(x, &l);
                    }
                }
            }
    units_run(x, &l);
}

/* Placement seam: the blocks whose stages span two or more node groups
 * (placement_enumerate: every order of every choice of groups, each group
 * hosting GPUs / (tp cp dp) stages, or counts adding up to a fixed pp).  tp
 * runs over the powers of two every group of the placement allows, dp over
 * the divisors of the global batch up to the cluster's GPUs, cp as on one group (cp_list), ep as
 * on one group (ep_list); interleaving chunks the placer's split
 * (place_interleaved).  Returns the blocks searched. */
#define MAX_PLACEMENTS 1024
static int search_placements(search_ctx *x)
{
    const model *m = x->m;
    const cluster *c = x->c;
    const strategy_constraints *f = &x->fix;
    int max_pp = m->layers < STRATEGY_MAX_STAGES ? m->layers : STRATEGY_MAX_STAGES;
    int searched = 0, total = 0;
    int_list tps, dps, cps, eps;
    placement *pls;
    unit_list l = {NULL, 0, 0};

    if (c->n_groups < 2)
        return 0;
    for (int g = 0; g < c->n_groups; g++)
        total += group_total_gpus(&c->group[g]);
    pls = pl_calloc(MAX_PLACEMENTS, sizeof *pls);
    if (pls == NULL) {
        x->oom = true;
        return 0;
    }
    tps.n = 0;
    if (f->tp > 0) {
        list_push(&tps, f->tp);
    } else {
        int lim = 1;
        for (int g = 0; g < c->n_groups; g++)
            if (group_tp_limit(&c->group[g]) > lim)
                lim = group_tp_limit(&c->group[g]);
        for (int t = 1; t <= lim; t *= 2)
            if (knob_tp_splits_heads(m, t))
                list_push(&tps, t);
    }
    dps.n = 0;
    if (f->dp > 0)
        list_push(&dps, f->dp);
    else   /* up to every GPU: a packed stage's DP group may span the groups
            * (until 2026-11 dp stopped at the largest group's GPUs, so AMP's
            * tp 1 pp 1 dp 16 on 12 V100 + 4 T4 was never searched) */
        divisors(&dps, x->gbs, 1, total);
    cp_list(x, &cps, total, SEARCH_PLACED_CP_MIN_TOKENS);
    for (int ci = 0; ci < cps.n && !stop(x); ci++)
    for (int ti = 0; ti < tps.n && !stop(x); ti++)
        for (int di = 0; di < dps.n && !stop(x); di++) {
            int tp = tps.v[ti], dp = dps.v[di], cp = cps.v[ci];
            /* a fixed pp admits many count vectors: the first 128 in
             * enumeration order (earlier groups with fewer stages first) */
            int n = placement_enumerate(c, tp, cp, dp, f->pp > 0 ? f->pp : max_pp, f->pp, pls,
                                        f->pp > 0 ? 128 : MAX_PLACEMENTS);
            if (n < MAX_PLACEMENTS)   /* stages spanning groups (AMP's mixed replicas) */
                n += placement_enumerate_packed(c, tp, cp, dp, f->pp > 0 ? f->pp : max_pp,
                                                f->pp, pls + n, MAX_PLACEMENTS - n);
            if (x->gbs % dp != 0)
                continue;
            for (int k = 0; k < n && !stop(x); k++) {
                long gpus = placement_gpus(&pls[k], tp, cp, dp);
                bool tp_ok = true;
                for (int q = 0; q < pls[k].n_parts && f->tp <= 0; q++)
                    if (tp > group_tp_limit(&c->group[pls[k].part[q].group]))
                        tp_ok = false;
                if (!tp_ok || (f->gpus > 0 && gpus != f->gpus) || gpus > CLUSTER_MAX_GPUS)
                    continue;
                ep_list(x, &eps, (long)tp * cp * dp);
                for (int ei = 0; ei < eps.n && !stop(x); ei++) {
                    memset(&x->s, 0, sizeof x->s);
                    x->s.tp = tp;
                    x->s.cp = cp;
                    x->s.pp = placement_stages(&pls[k]);
                    x->s.dp = dp;
                    x->s.ep = eps.v[ei];
                    x->s.etp = f->etp > 0 ? f->etp : 1;
                    x->placement = &pls[k];
                    x->group = pls[k].part[0].group;
                    x->gpus = (int)gpus;
                    searched++;
                    unit_add(x, &l);
                }
            }
        }
    x->placement = NULL;
    pl_free(pls);
    units_run(x, &l);
    return searched;
}

/* --partition ilp: each kept plan whose layers the placer split is
 * re-partitioned by the ILP (its fill objective, steady state plus fill and
 * drain, bounded below by the DP's bottleneck) and evaluated again; the
 * faster split stays, and the list is sorted again.  Only the kept plans
 * pay for an ILP solve; the search itself screens with the exact DP. */
static void seam_refine_top(search_ctx *x, search_result *res)
{
    cost_schedule *sched;
    planner_status r;
    if (x->o->partition != PARTITION_ILP)
        return;
    if (x->placer == NULL)   /* the blocks were placed by the workers' placers */
        x->placer = placer_new(x->m, x->c, x->p, false, x->o->ilp_time_limit_s);
    if (x->placer == NULL) {
        x->oom = true;
        return;
    }
    /* the re-partitioned plan's schedule, then a swap's; zeroed, as whole
     * structs are copied into res->sched (padding too) */
    sched = pl_calloc(1, sizeof *sched);
    if (sched == NULL) {
        x->oom = true;
        return;
    }
    for (int i = 0; i < res->n_top; i++) {
        plan *pl = &res->top[i];
        placement where;
        bool split = false;
        for (int k = 1; k < pl->s.n_stages && !split; k++)
            split = pl->s.stage[k].n_layers != pl->s.stage[0].n_layers ||
                    pl->s.stage[k].group != pl->s.stage[0].group || pl->s.n_mixes > 0;
        if (pl->s.pp < 2 || pl->s.vpp > 1 ||
            (!split && !x->m->uneven && x->m->layers % pl->s.pp == 0))
            continue;   /* the even split: Megatron's default, no partitioner */
        if (placement_from_strategy(&pl->s, &where) != 0)
            continue;
        x->ilp.s = pl->s;
        r = placer_place_with(x->placer, &where, &x->ilp.s, true, NULL);
        if (r == PLANNER_E_INTERNAL) {      /* out of memory: not a reason to keep the DP's split */
            x->oom = true;
            break;
        }
        if (r != PLANNER_OK)
            continue;
        memset(sched, 0, sizeof *sched);   /* a shorter pipeline leaves the last one's stages */
        evaluate_schedule(x->m, x->c, x->p, &x->ilp.s, &x->ilp.e, sched);
        if (x->ilp.e.feasible && isfinite(x->ilp.e.tokens_per_s) &&
            objective_score(x, &x->ilp.s, &x->ilp.e) > objective_score(x, &pl->s, &pl->e)) {
            *pl = x->ilp;
            res->sched[i] = *sched;
        }
    }
    for (int i = 1; i < res->n_top; i++)   /* insertion sort, stable */
        for (int k = i; k > 0; k--) {
            plan *a = &res->top[k - 1], *b = &res->top[k];
            if (search_rank_cmp(objective_score(x, &b->s, &b->e), b->e.peak_memory_bytes, &b->s,
                         objective_score(x, &a->s, &a->e), a->e.peak_memory_bytes, &a->s) >= 0)
                break;
            x->ilp = *a;
            *a = *b;
            *b = x->ilp;
            *sched = res->sched[k - 1];
            res->sched[k - 1] = res->sched[k];
            res->sched[k] = *sched;
        }
    pl_free(sched);
}

/* The line comparing the best plan across groups with the best on one
 * group (multi-group clusters). */
static void placement_note(search_ctx *x, search_result *res)
{
    char a[160];
    plan *pl = NULL;
    const evaluation *em, *es;
    placement pm, ps;
    if (x->c->n_groups < 2)
        return;
    if (!x->have_best[1]) {
        snprintf(res->placement_note, sizeof res->placement_note,
                 "no plan across node groups fits; the best runs on one group");
        return;
    }
    if (!x->have_best[0]) {
        snprintf(res->placement_note, sizeof res->placement_note,
                 "no plan on a single node group fits; the plans span groups");
        return;
    }
    pl = pl_calloc(2, sizeof *pl);
    if (pl == NULL) {
        x->oom = true;
        return;
    }
    pl[0].s = x->best[1];
    pl[1].s = x->best[0];
    evaluate(x->m, x->c, x->p, &pl[0].s, &pl[0].e);
    evaluate(x->m, x->c, x->p, &pl[1].s, &pl[1].e);
    em = &pl[0].e;
    es = &pl[1].e;
    placement_from_strategy(&pl[0].s, &pm);
    placement_from_strategy(&pl[1].s, &ps);
    placement_describe(x->c, &pm, a, sizeof a);
    snprintf(res->placement_note, sizeof res->placement_note,
             "best across groups (%.100s stages, %d GPUs) %.0f tokens/s vs best on one "
             "group (%.60s, %d GPUs) %.0f tokens/s: %s (%+.1f%%)",
             a, strategy_gpus(&pl[0].s), em->tokens_per_s, x->c->group[ps.part[0].group].name,
             strategy_gpus(&pl[1].s), es->tokens_per_s,
             em->tokens_per_s > es->tokens_per_s ? "mixing groups wins" : "one group wins",
             100.0 * (em->tokens_per_s / es->tokens_per_s - 1.0));
    pl_free(pl);
}

/* The GPUs a plan uses on group g, or 0 when the group is too small. */
static int plan_gpus(const search_ctx *x, const cluster *c, int g)
{
    const strategy_constraints *f = &x->fix;
    int have = group_total_gpus(&c->group[g]);
    long want = have;
    if (f->gpus > 0)
        want = f->gpus;
    else if (f->tp > 0 && f->pp > 0 && f->dp > 0)
        want = (long)f->tp * f->pp * f->dp * (f->cp > 0 ? f->cp : 1);
    return want <= have ? (int)want : 0;
}

static void ctx_init(search_ctx *x, const model *m, const cluster *c, const cost_params *p,
                     const search_options *o, planner_error *err)
{
    memset(x, 0, sizeof *x);
    x->m = m;
    x->c = c;
    x->p = p;
    x->o = o;
    x->min_unit_params = (double)m->vocab * m->hidden;
    for (int i = 0; i < m->layers; i++) {
        double dense = tf_layer_params(m, i) - tf_layer_expert_params(m, i);
        if (dense < x->min_unit_params)
            x->min_unit_params = dense;
    }
    x->fix = o->fix;
    x->gbs = o->gbs > 0 ? o->gbs : MODEL_DEFAULT_GLOBAL_BATCH;
    x->seq_len = o->seq_len > 0 ? o->seq_len : MODEL_DEFAULT_SEQ_LEN;
    x->exhaustive = o->exhaustive;
    x->top_cap = o->top_n > 0 ? o->top_n : 1;
    x->work_limit = o->work_limit;
    x->err = err;
}

static void ctx_free(search_ctx *x)
{
    for (int w = 0; x->scratch != NULL && w < WORKERS_MAX; w++) {
        placer_free(x->scratch[w].placer);
        eval_memo_free(x->scratch[w].memo);
    }
    pl_free(x->scratch);
    x->scratch = NULL;
    placer_free(x->placer);
    x->placer = NULL;
    eval_memo_free(x->memo);
    x->memo = NULL;
    pl_free(x->pool);
    pl_free(x->order);
    x->pool = NULL;
    x->order = NULL;
}

/* ---- advice ------------------------------------------------------------- */

/* Appends printf text to buf (truncating quietly). */
static void appendf(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void appendf(char *buf, size_t size, const char *fmt, ...)
{
    size_t len = strlen(buf);
    va_list ap;
    if (len + 1 >= size)
        return;
    va_start(ap, fmt);
    vsnprintf(buf + len, size - len, fmt, ap);
    va_end(ap);
}

#define GIB (1024.0 * 1024.0 * 1024.0)

static int miss_group(const search_ctx *x)
{
    return x->miss.n_stages > 0 ? x->miss.stage[0].group : 0;
}

/* Evaluates the closest miss with some knobs changed into x->s / x->e.
 * Returns 1 fits, 0 does not, -1 invalid or the same as the miss. */
static int try_variant(search_ctx *x, bool full_rc, bool mbs1, bool zero3)
{
    x->s = x->miss;
    if (full_rc)
        x->s.recompute = RECOMPUTE_FULL;
    if (zero3 && x->s.dp * x->s.cp > 1)
        x->s.zero = 3;
    if (mbs1 && x->s.mbs != 1) {
        x->s.mbs = 1;
        if (x->s.vpp > 1 && strategy_microbatches(&x->s) % x->s.pp != 0)
            x->s.vpp = 1;
    }
    if (x->s.recompute == x->miss.recompute && x->s.zero == x->miss.zero &&
        x->s.mbs == x->miss.mbs)
        return -1;
    set_derived(x);
    x->group = miss_group(x);
    if (place_like_miss(x, NULL) != PLANNER_OK)
        return -1;
    return check_eval(x, false);
}

/* Searches the same space (dp free) on k times the nodes of the closest
 * miss's group.  Returns 1 some plan fits, 0 none, -1 cannot try. */
static int fits_with_more_nodes(search_ctx *x, int k, int *gpus_out)
{
    const cluster *c0 = x->c;
    int g = miss_group(x);
    cluster big = *c0;
    node_group *groups = NULL;
    search_ctx *y = NULL;
    int found = -1;

    if ((long)group_total_gpus(&c0->group[g]) * k > CLUSTER_MAX_GPUS)
        return -1;
    groups = pl_calloc((size_t)c0->n_groups, sizeof *groups);
    y = pl_calloc(1, sizeof *y);
    if (groups == NULL || y == NULL) {
        x->oom = true;
        goto cleanup;
    }
    memcpy(groups, c0->group, (size_t)c0->n_groups * sizeof *groups);
    groups[g].nodes *= k;
    big.group = groups;
    ctx_init(y, x->m, &big, x->p, x->o, x->err);
    y->fix = x->fix;
    if (y->fix.gpus > 0)
        y->fix.gpus *= k;
    y->fix.dp = -1;            /* more GPUs means more data parallelism */
    y->stop_at_feasible = true;
    y->top_cap = 1;
    y->group = g;
    y->gpus = plan_gpus(y, &big, g);
    if (y->gpus > 0)
        search_group(y);
    if (y->oom)
        x->oom = true;
    found = y->found ? 1 : 0;
    *gpus_out = y->gpus;
cleanup:
    if (y != NULL)
        ctx_free(y);
    pl_free(y);
    pl_free(groups);
    return found;
}

/* Advice when no strategy could even be evaluated. */
static void advice_no_candidate(const search_ctx *x, char *a, size_t n)
{
    const strategy_constraints *f = &x->fix;
    bool fixed = knobs_any_fixed(f);
    long tcp = (long)(f->tp > 0 ? f->tp : 1) * (f->cp > 0 ? f->cp : 1) * (f->pp > 0 ? f->pp : 1);
    if (x->first_invalid[0] == '\0' && tcp > 1 && x->gpus % tcp != 0) {
        appendf(a, n, "the fixed tp x cp x pp = %ld does not divide the %d GPUs", tcp, x->gpus);
        return;
    }
    if (x->first_invalid[0] == '\0' && f->dp > 0 && x->gbs % f->dp != 0) {
        appendf(a, n, "dp %d does not divide the global batch of %d sequences", f->dp, x->gbs);
        return;
    }
    if (x->first_invalid[0] != '\0')
        appendf(a, n, "no strategy satisfies %s's rules%s; e.g. %s",
                refuser(x, x->first_by_stack), fixed ? " under --fix" : "", x->first_invalid);
    else
        appendf(a, n,
                "no layout tp x cp x pp x dp = %d GPUs meets the rules (tp divides heads %d "
                "and kv_heads %d, pp divides layers %d, dp divides the global batch %d)%s",
                x->gpus, x->m->heads, x->m->kv_heads, x->m->layers, x->gbs,
                fixed ? " and --fix" : "");
}

/* Writes the advice for an infeasible search into a (the closest miss is
 * x->miss).  Every claim comes from an evaluation or a search. */
static void make_advice(search_ctx *x, char *a, size_t n)
{
    static const struct { bool rc, mbs, zero; const char *what; } var[] = {
        {true, false, false, "full recompute"},
        {false, true, false, "mbs 1"},
        {false, false, true, "ZeRO-3"},
        {true, true, true, "full recompute + mbs 1 + ZeRO-3"},
    };
    const node_group *g = &x->c->group[miss_group(x)];
    bool fixed = knobs_any_fixed(&x->fix), layout_fixed;
    double best = HUGE_VAL, need, cap;
    int k, found = 0, gpus = 0, listed = 0;
    const gpu_spec *pick[3] = {NULL, NULL, NULL};

    a[0] = '\0';
    /* 1. Variants of the closest miss, cheapest change first. */
    for (size_t i = 0; i < sizeof var / sizeof var[0]; i++) {
        int fit = try_variant(x, var[i].rc, var[i].mbs, var[i].zero);
        if (fit == 1) {
            appendf(a, n, "%s makes the closest miss fit (%.1f GiB per GPU)%s; ", var[i].what,
                    x->e.peak_memory_bytes / GIB, fixed ? ", relax --fix" : "");
            best = -1;
            break;
        }
        if (fit == 0 && x->e.peak_memory_bytes < best)
            best = x->e.peak_memory_bytes;
    }
    if (best > 0 && isfinite(best))
        appendf(a, n, "with full recompute, mbs 1 and ZeRO-3 it still needs %.1f GiB per GPU; ",
                best / GIB);

    /* 2. More nodes of the same kind. */
    layout_fixed = x->fix.tp > 0 && x->fix.pp > 0 && x->fix.dp > 0 && x->fix.gpus <= 0;
    if (!layout_fixed) {
        for (k = 2; k <= 64 && !x->oom; k *= 2) {
            found = fits_with_more_nodes(x, k, &gpus);
            if (found != 0)
                break;
        }
        /* the nodes the scaled plan occupies: the group's k times over, or
         * with --fix gpus=N the N k GPUs' nodes */
        int gpn = g->gpus_per_node > 0 ? g->gpus_per_node : 1;
        if (found == 1)
            appendf(a, n, "%d nodes (%d GPUs, %dx) fit; ", (gpus + gpn - 1) / gpn, gpus, k);
        else if (found == 0)
            appendf(a, n, "even %d nodes (64x) do not fit; ",
                    x->fix.gpus > 0 ? (x->fix.gpus * 64 + gpn - 1) / gpn : g->nodes * 64);
    }

    /* 3. GPUs with more memory: the closest miss as it is. */
    x->s = x->miss;
    check_eval(x, false);
    need = x->e.peak_memory_bytes;
    cap = x->e.n_stages > 0 ? x->e.stage_memory[x->e.peak_stage].capacity_bytes : 0;
    appendf(a, n, "the closest miss needs %.1f GiB per GPU, %.1f usable", need / GIB, cap / GIB);
    for (size_t i = 0; i < catalog_count(); i++) {
        const gpu_spec *gs = catalog_at(i);
        if (gs == NULL || gs->usable_mem_bytes * (1 - x->o->mem_headroom) < need)
            continue;   /* its usable memory less the headroom, as searched */
        /* keep the three smallest that suffice, ascending */
        for (int j = 0; j < 3; j++) {
            if (pick[j] == NULL || gs->usable_mem_bytes < pick[j]->usable_mem_bytes) {
                for (int q = 2; q > j; q--)
                    pick[q] = pick[q - 1];
                pick[j] = gs;
                break;
            }
        }
    }
    for (int j = 0; j < 3 && pick[j] != NULL; j++, listed++)
        appendf(a, n, "%s%s (%.0f GiB)", listed == 0 ? "; it fits as is on " : ", ",
                pick[j]->name, pick[j]->usable_mem_bytes / GIB);
}

/* One entry of res->not_searched. */
static void not_searched(search_result *res, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void not_searched(search_result *res, const char *fmt, ...)
{
    va_list ap;
    if (res->n_not_searched >= SEARCH_NOT_SEARCHED_MAX)
        return;
    va_start(ap, fmt);
    vsnprintf(res->not_searched[res->n_not_searched++], SEARCH_NOT_SEARCHED_LEN, fmt, ap);
    va_end(ap);
}

/* The keys of the knobs --fix leaves free whose values the space leaves
 * out (space_allows: the software stack lacks them or, validate's
 * validated_only, no measured run validates them), joined into buf. */
static void space_lacks(const search_ctx *x, char *buf, size_t size)
{
    buf[0] = '\0';
    for (int k = 0; k < KNOB_COUNT; k++) {
        const knob_info *ki = knob_get_info((knob_id)k);
        int hi = ki->max < 3 ? ki->max : 3;   /* degrees: 1 and > 1 */
        if (ki->fix_offset != KNOB_NOT_FIXABLE &&
            *(const int *)(const void *)((const char *)&x->o->fix + ki->fix_offset) >= 0)
            continue;
        if (k == KNOB_GRAD_REDUCE_BF16 || k == KNOB_CUDA_GRAPH || k == KNOB_OPT_STATE)
            continue;   /* never searched on any stack: only --fix sets them */
        for (int v = ki->min; v <= hi; v++)
            if (!space_allows(x, (knob_id)k, v)) {
                appendf(buf, size, "%s%s", buf[0] ? ", " : "", ki->key);
                break;
            }
    }
}

/* Whether the stack's rules on knobs together (knob_stack_rule) admit
 * knob k with the values a Not-searched suggestion names, set on a
 * one-GPU probe (every degree 1, zero 0, no recompute) by `set`.  The
 * suggestions name only what the stack can run (stack_spec.rules, e.g.
 * torchtitan's full checkpointing of every block, its etp of tp or 1). */
static bool rules_admit(const search_ctx *x, knob_id k, int tp, int ep, int etp,
                        recompute_method method, int layers)
{
    strategy t;
    memset(&t, 0, sizeof t);
    t.tp = tp;
    t.pp = t.dp = t.cp = t.vpp = t.mbs = t.n_stages = 1;
    t.ep = ep;
    t.etp = etp;
    t.stack = x->c->stack;
    t.recompute = layers > 0 ? RECOMPUTE_FULL : RECOMPUTE_NONE;
    t.recompute_method = method;
    t.recompute_layers = layers;
    return knob_stack_rule(x->m, &t, k, NULL) == PLANNER_OK;
}

/* Whether the space has selective recompute of modules beyond core_attn
 * and `saved` (the searched sets): the stack's recompute_modules values
 * (torchtitan's op-level policy has none). */
static bool space_has_modules(const search_ctx *x, int saved)
{
    if (!space_allows(x, KNOB_RECOMPUTE, RECOMPUTE_SELECTIVE))
        return false;
    for (int v = 1; v <= RC_MOD_ALL; v++)
        if (v != RC_MOD_CORE_ATTN && v != saved && space_allows(x, KNOB_RECOMPUTE_MODULES, v))
            return true;
    return false;
}

/* The space's limits on knobs --fix leaves free: tp beyond a node, cp's
 * tokens per rank, the placements' limits, the selective modules, cp_a2a,
 * uniform recompute, what the stack (or the validated-only space) lacks.
 * Each names a value the stack has (space_allows) and its rules admit
 * (rules_admit). */
static void note_limits(const search_ctx *x, search_result *res)
{
    const strategy_constraints *f = &x->o->fix;
    char lacks[SEARCH_NOT_SEARCHED_LEN], v[KNOB_TEXT_MAX];
    int cp_max = cp_searched_max(x, SEARCH_CP_MIN_TOKENS), tp_max = 1;
    bool cp = f->cp <= 0 && space_allows(x, KNOB_CP, 2);
    for (int g = 0; g < x->c->n_groups; g++)
        if (group_tp_limit(&x->c->group[g]) > tp_max)
            tp_max = group_tp_limit(&x->c->group[g]);
    if (f->tp <= 0)
        not_searched(res, "tp > %d (beyond a node's NVLink domain; --fix tp=N tries it)", tp_max);
    if (cp)
        not_searched(res, "cp > %d (under %d tokens per rank; --fix cp=N tries it)", cp_max,
                     SEARCH_CP_MIN_TOKENS);
    if (cp && x->c->n_groups > 1 && cp_searched_max(x, SEARCH_PLACED_CP_MIN_TOKENS) < cp_max)
        not_searched(res, "cp > %d on stages across node groups (under %d tokens per rank "
                     "there; --fix cp=N tries it)", cp_searched_max(x, SEARCH_PLACED_CP_MIN_TOKENS),
                     SEARCH_PLACED_CP_MIN_TOKENS);
    if (f->vpp <= 0 && x->c->n_groups > 1 && space_allows(x, KNOB_VPP, 2))
        not_searched(res, "vpp > %d on stages across node groups (--fix vpp=N tries it)",
                     SEARCH_PLACED_VPP_MAX);
    if (f->cp_a2a < 0 && f->cp_comm < 0 && (f->cp >= 4 || (f->cp <= 0 && cp_max >= 4)) &&
        space_allows(x, KNOB_CP_COMM, CP_COMM_A2A_P2P))
        not_searched(res, "a2a+p2p with an all-to-all level other than the largest in one "
                     "NVLink domain (--fix cp_a2a=N tries it)");
    if (f->recompute_modules < 0 && (f->recompute < 0 || f->recompute == RECOMPUTE_SELECTIVE) &&
        space_has_modules(x, rc_save_modules(x->m))) {
        strategy s;
        memset(&s, 0, sizeof s);
        s.recompute_modules = rc_save_modules(x->m);
        knob_text(&s, KNOB_RECOMPUTE_MODULES, false, v, sizeof v);
        not_searched(res, "selective recompute of modules other than core_attn or %s "
                     "(--fix recompute_modules=A+B tries them)", v);
    }
    if (f->recompute_method < 0 && (f->recompute < 0 || f->recompute == RECOMPUTE_FULL) &&
        space_allows(x, KNOB_RECOMPUTE, RECOMPUTE_FULL) &&
        rules_admit(x, KNOB_RECOMPUTE_LAYERS, 1, 1, 1, RECOMPUTE_UNIFORM, 2))
        not_searched(res, "uniform recompute in groups of N layers (no faster than full "
                     "recompute; --fix recompute_method=uniform,recompute_layers=N)");
    if (x->c->n_groups > 1 && f->recompute_modules <= 0 && space_has_modules(x, 0))
        not_searched(res, "selective recompute beyond core attention on stages across node "
                     "groups");
    if (x->m->moe.experts > 0 && f->etp <= 0 && space_allows(x, KNOB_ETP, 2)) {
        bool other = rules_admit(x, KNOB_ETP, 2, 2, 4, RECOMPUTE_UNIFORM, 0);
        bool across = x->c->n_groups > 1 && rules_admit(x, KNOB_ETP, 2, 2, 2, RECOMPUTE_UNIFORM, 0);
        if (other || across)
            not_searched(res, "%s%s%s (--fix etp=N tries it)",
                         other ? "etp other than 1 and tp" : "", other && across ? ", and " : "",
                         across ? "etp > 1 on stages across node groups" : "");
    }
    if (x->m->moe.shared_experts > 0 && f->shared_expert_overlap < 0 &&
        f->ep_comm_overlap != 1 && space_allows(x, KNOB_SHARED_EXPERT_OVERLAP, 1))
        not_searched(res, "the shared-expert overlap where the all-to-all overlap can run "
                     "(--fix shared_expert_overlap=on tries it)");
    if (x->m->moe.experts > 0 && f->flex_dispatcher < 0 &&
        space_allows(x, KNOB_FLEX_DISPATCHER, 1))
        for (int g = 0; g < x->c->n_groups; g++)
            if (knob_flex_backend(x->o->megatron, &x->c->group[g]) == NULL) {
                /* the way to it: a release with a backend there (a pinned
                 * flex plan on this one is a plan emit refuses), else none */
                int rel = x->o->megatron + 1;
                while (rel < MEGATRON_VERSION_COUNT &&
                       knob_flex_backend((megatron_version)rel, &x->c->group[g]) == NULL)
                    rel++;
                if (rel < MEGATRON_VERSION_COUNT)   /* "core_v0.16.0": --megatron-version 0.16 */
                    not_searched(res, "the flex token dispatcher on %s (%s; --megatron-version "
                                 "%.4s plans it)", x->c->group[g].gpu.name,
                                 knob_flex_backend_missing(x->o->megatron, &x->c->group[g]),
                                 megatron_version_tag((megatron_version)rel) + 6);
                else
                    not_searched(res, "the flex token dispatcher on %s (%s)",
                                 x->c->group[g].gpu.name,
                                 knob_flex_backend_missing(x->o->megatron, &x->c->group[g]));
                break;
            }
    space_lacks(x, lacks, sizeof lacks);
    if (lacks[0])
        not_searched(res, "values of %s that the %s stack%s lacks (--stack NAME or --fix)",
                     lacks, stack_get(x->c->stack)->name,
                     x->o->validated_only ? " or the measured runs" : "");
}

/* What the search did not try, and why: the knobs --fix pinned (from the
 * registry), the space's limits (note_limits), the prunes, the rules that
 * refused candidates (refuse), the work limit. */
static void note_not_searched(const search_ctx *x, search_result *res)
{
    const strategy_constraints *f = &x->o->fix;
    char fixed[SEARCH_NOT_SEARCHED_LEN] = "", v[KNOB_TEXT_MAX], count[32];
    for (int k = 0; k < KNOB_COUNT; k++) {
        const knob_info *ki = knob_get_info((knob_id)k);
        strategy s;
        int val;
        if (ki->fix_offset == KNOB_NOT_FIXABLE)
            continue;
        val = *(const int *)(const void *)((const char *)f + ki->fix_offset);
        if (val < 0)
            continue;
        memset(&s, 0, sizeof s);
        knob_set(&s, (knob_id)k, val);
        appendf(fixed, sizeof fixed, "%s%s=%s", fixed[0] ? "," : "", ki->key,
                knob_text(&s, (knob_id)k, false, v, sizeof v));
    }
    if (f->gpus > 0)
        appendf(fixed, sizeof fixed, "%sgpus=%d", fixed[0] ? "," : "", f->gpus);
    if (fixed[0])
        not_searched(res, "other values of %s (--fix)", fixed);
    note_limits(x, res);
    /* counts as the report's "Search:" line writes them (text_count) */
    text_count((double)x->pruned, count, sizeof count);
    if (x->pruned > 0)
        not_searched(res, "%s pruned candidates (a variant needing no more memory did not "
                     "fit, or a faster one did)", count);
    for (int by = 0; by < 2; by++)
        for (int k = 0; k <= KNOB_COUNT; k++) {
            text_count((double)x->refused[by][k], count, sizeof count);
            if (x->refused[by][k] > 0)
                not_searched(res, "%s candidates %s's rules refuse (%s: %s)", count,
                             refuser(x, by == 1),
                             k < KNOB_COUNT ? knob_get_info((knob_id)k)->key : "the layer split",
                             x->refused_why[by][k]);
        }
    if (x->limited)
        not_searched(res, "the rest of the space (work limit; --search-limit N)");
}

/* The kept strategies as the result's plans, best first, each with its
 * evaluation and the schedule that evaluation simulated (36 KiB each, for
 * the top N only); the ILP re-partition and the placement note.  0, or -1
 * when out of memory. */
static int finish_top(search_ctx *x, search_result *res)
{
    res->top = pl_calloc((size_t)x->n_top, sizeof *res->top);
    res->sched = pl_calloc((size_t)x->n_top, sizeof *res->sched);
    if (res->top == NULL || res->sched == NULL)
        return -1;
    for (int i = 0; i < x->n_top; i++) {
        plan *pl = &res->top[i];
        pl->s = x->pool[x->order[i]].s;
        evaluate_schedule(x->m, x->c, x->p, &pl->s, &pl->e, &res->sched[i]);
    }
    res->n_top = x->n_top;
    seam_refine_top(x, res);
    res->gpus = strategy_gpus(&res->top[0].s);
    placement_note(x, res);
    return x->oom ? -1 : 0;
}

/* Nothing fits: the advice and the closest miss.  0, or -1 when out of
 * memory. */
static int finish_miss(search_ctx *x, search_result *res)
{
    if (x->have_miss)
        make_advice(x, res->advice, sizeof res->advice);
    else
        advice_no_candidate(x, res->advice, sizeof res->advice);
    if (x->oom)
        return -1;
    res->have_miss = x->have_miss;
    if (x->have_miss) {
        res->miss.s = x->miss;
        evaluate(x->m, x->c, x->p, &res->miss.s, &res->miss.e);
        res->gpus = strategy_gpus(&res->miss.s);
    }
    return 0;
}

static planner_status search_run_on(const model *m, const cluster *c, const cost_params *p,
                                    const search_options *opts, search_result *res,
                                    planner_error *err)
{
    search_ctx *x = NULL;
    planner_status rc = PLANNER_OK;
    int total, largest = 0, searched = 0;

    memset(res, 0, sizeof *res);
    if (m == NULL || c == NULL || p == NULL || opts == NULL || c->n_groups < 1)
        return error_set(err, PLANNER_E_INTERNAL, NULL, 0, 0, NULL,
                         "search_run: missing model, cluster or options");
    x = pl_calloc(1, sizeof *x);
    if (x == NULL)
        return error_oom(err);
    ctx_init(x, m, c, p, opts, err);
    x->t0 = now_s();
    res->gbs = x->gbs;
    res->seq_len = x->seq_len;

    total = cluster_total_gpus(c);
    if (x->fix.gpus > total) {
        rc = error_set(err, PLANNER_E_USAGE, NULL, 0, 0, NULL,
                       "--fix gpus=%d: the cluster has %d GPUs", x->fix.gpus, total);
        goto cleanup;
    }
    if ((rc = constraints_stack_check(&x->o->fix, stack_get(c->stack), err)) != PLANNER_OK)
        goto cleanup;
    for (int g = 0; g < c->n_groups && !stop(x); g++) {
        int n = plan_gpus(x, c, g);
        if (group_total_gpus(&c->group[g]) > largest)
            largest = group_total_gpus(&c->group[g]);
        if (n == 0)
            continue;
        x->group = g;
        x->gpus = n;
        searched++;
        search_group(x);
    }
    if (!stop(x))
        searched += search_placements(x);
    if (x->oom) {
        rc = error_oom(err);
        goto cleanup;
    }
    if (x->broken) {
        rc = error_set(err, PLANNER_E_INTERNAL, NULL, 0, 0, NULL, "%s", x->first_invalid);
        goto cleanup;
    }
    res->limited = x->limited;
    res->work = search_work(x);
    res->candidates = x->candidates;
    res->feasible = x->feasible;
    res->pruned = x->pruned;
    res->invalid = x->invalid;
    res->invalid_stack = x->invalid_stack;
    res->rules_by = refuser(x, true);
    res->gpus = x->gpus;
    note_not_searched(x, res);

    if (x->n_top > 0) {
        if (finish_top(x, res) != 0) {
            rc = error_oom(err);
            goto cleanup;
        }
    } else if (searched == 0) {
        snprintf(res->advice, sizeof res->advice,
                 "the plan needs more GPUs than any node group has (largest: %d) and no "
                 "placement across node groups matches it", largest);
        rc = PLANNER_E_INFEASIBLE;
    } else {
        rc = finish_miss(x, res) != 0 ? error_oom(err) : PLANNER_E_INFEASIBLE;
    }
    res->seconds = now_s() - x->t0;
cleanup:
    if (rc != PLANNER_OK && rc != PLANNER_E_INFEASIBLE)
        search_result_free(res);
    if (x != NULL)
        ctx_free(x);
    pl_free(x);
    return rc;
}

/* --mem-headroom F: the whole search (feasibility, the placer's memory
 * bounds, the closest miss and its advice) runs on a copy of the cluster
 * whose GPUs have usable x (1 - F), so a plan leaves F of its GPU's usable
 * memory free; the plans' stage capacities are those reduced figures. */
planner_status search_run(search_result *res, const model *m, const cluster *c,
                          const cost_params *p, const search_options *opts,
                          planner_error *err)
{
    cluster tight;
    node_group *groups;
    planner_status rc;
    double keep;

    if (opts == NULL || c == NULL || !(opts->mem_headroom > 0))
        return search_run_on(m, c, p, opts, res, err);
    if (!(opts->mem_headroom < 1))
        return error_set(err, PLANNER_E_USAGE, NULL, 0, 0, NULL,
                         "--mem-headroom %g: expected a fraction in 0..1 (exclusive)",
                         opts->mem_headroom);
    keep = 1 - opts->mem_headroom;
    groups = pl_calloc((size_t)(c->n_groups > 0 ? c->n_groups : 1), sizeof *groups);
    if (groups == NULL)
        return error_oom(err);
    memcpy(groups, c->group, (size_t)c->n_groups * sizeof *groups);
    for (int g = 0; g < c->n_groups; g++)
        groups[g].gpu.usable_mem_bytes *= keep;
    tight = *c;
    tight.group = groups;
    rc = search_run_on(m, &tight, p, opts, res, err);
    res->mem_headroom = opts->mem_headroom;
    pl_free(groups);
    return rc;
}
