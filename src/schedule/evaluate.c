/* evaluate.c: evaluate() -- one strategy's step time, throughput and per-stage
 * memory: the step model.
 *
 * Per pipeline rank i (its node group's GPU, its own tp and layers, chunk by
 * chunk with vpp > 1): the forward and backward of one micro-batch are the
 * sums of its layers' costs (cost/layer_cost.c has the per-layer model:
 * kernels, TP/SP and MoE collectives, recompute, the embedding and loss on
 * the end ranks), the p2p time to the next rank cost_boundary_p2p_s().
 * The schedule (pipeline.c) turns these into each rank's finish time.  Then
 * the data-parallel gradient reduce over the dp x cp ranks (all-reduce, or
 * reduce-scatter with the distributed optimizer; routed-expert gradients
 * over the expert-data-parallel group of tp cp dp / ep ranks) is exposed
 * beyond the last backward unless overlapped with it -- ZeRO-2
 * (Megatron-FSDP optim_grads) reduce-scatters after every micro-batch's
 * backward instead (rank_zero2_grads); the optimizer step (HBM-bound)
 * and the parameter all-gather (ZeRO >= 1, hidden behind the next forward
 * when overlapped) follow; ZeRO-3 gathers weights and reduces grads per
 * micro-batch inside each forward/backward.  step = max_i(finish_i +
 * exposed reduce_i) + max_i(optimizer_i + step sync_i) + max_i(exposed
 * gather_i) + max_i(step_overhead_s of rank i's GPU generation), where step
 * sync is the grad-norm (and fp16 unscale / inf-check) pass and the
 * job-wide scalar all-reduces (step_sync_s).
 * Memory per rank: memory.c (memory_stage(); expert states sharded
 * over their expert-data-parallel group) with memory_inflight()
 * micro-batches, or the schedule's own peak when the chunks of a rank keep
 * different activations (memory_inflight_chunks).
 * Sources: ../shared/reference/cost-model.md.  evaluate() allocates only in
 * the schedule simulation.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "cost/comm.h"
#include "cost/compute.h"
#include "cost/memory.h"
#include "model/transformer.h"
#include "schedule/evaluate.h"

#define GIB (1073741824.0)
/* The per-step work outside the layers that the step waits for, besides
 * the optimizer's Adam pass (compute_optimizer_s):
 *   - the gradient-norm pass for clipping: read every local main gradient
 *     (4 B/param; fp32 models too), one multi-tensor kernel;
 *   - fp16 only (runs_fp16: also bf16 on a GPU without BF16): unscale the
 *     gradients by the loss scale and check them for inf/NaN (read and
 *     write 4 B/param, one kernel);
 *   - the scalar all-reduces that synchronize every rank once per step:
 *     the gradient norm and the loss average (and fp16's found-inf flag)
 *     over the whole job -- latency-bound collectives of a few bytes on
 *     the job's hierarchical ring/tree (NCCL), with their launch.
 * Megatron's optimizer.step() and training_step() (megatron/core/optimizer,
 * megatron/training/training.py). */
/* True when the step runs in fp16 with loss scaling: an fp16 model, or a
 * bf16 one on a GPU without BF16 tensor cores (V100, T4: the frameworks
 * fall back to fp16 with a dynamic loss scaler there). */
static bool runs_fp16(const model *m, const gpu_spec *gpu)
{
    return m->prec == PREC_FP16 || (m->prec == PREC_BF16 && gpu->peak_flops[PEAK_BF16] <= 0);
}

static double step_sync_s(const model *m, const node_group *ng, const gen_constants *k,
                          int world, double local_params)
{
    comm_link wl = comm_group_link(ng, k, world, 1);
    bool fp16 = runs_fp16(m, &ng->gpu);
    int scalars = fp16 ? 3 : 2;
    double extra = fp16 ? 4.0 + 8.0 : 4.0;
    return compute_memory_s(&ng->gpu, k, extra * local_params, fp16 ? 2 : 1) +
           scalars * (comm_allreduce_s(&wl, world, 8.0) + k->kernel_s);
}

/* Bytes per parameter of the data-parallel gradient reduction: the main
 * gradients' dtype (memory_main_grad_bytes: fp32 for bf16 and the FP8
 * recipes, whose --accumulate-allreduce-grads-in-fp32 Megatron turns on
 * with bf16, unless --grad-reduce-in-bf16 (grad_reduce_bf16); fp16 models
 * reduce in fp16), for plain DDP, the distributed optimizer and
 * Megatron-FSDP alike: Megatron-FSDP reduce-scatters its main_grad_buffer,
 * fp32 when grad_reduce_in_fp32 (core_v0.15.0
 * megatron/core/distributed/fsdp/src/megatron_fsdp/param_and_grad_buffer.py,
 * ParamAndGradBuffer._init_each_parameter_group_buffers).  ZeRO-3 keeps
 * 16-bit reduces: its costs are those of the DeepSpeed ZeRO-3 runs it was
 * checked on (SC21 Table 2, bf16 communication); Megatron-FSDP's and FSDP2's
 * (zero3_prefetch stacks) reduce the main gradients like ZeRO-2.  A bf16 model on a GPU
 * without BF16 runs fp16 (runs_fp16): fp16 gradients. */
static double grad_reduce_bytes(const model *m, const gpu_spec *gpu, const strategy *s,
                                bool zero3_prefetch)
{
    if (s->zero >= 3 && !zero3_prefetch)
        return precision_16bit_bytes(m->prec);
    return memory_main_grad_bytes(runs_fp16(m, gpu) ? PREC_FP16 : m->prec, s->grad_reduce_bf16);
}

/* The largest decoder layer of stage st, parameters on all TP ranks (0
 * for a stage without layers). */
static double stage_block_params(const model *m, const stage_spec *st)
{
    double block = 0;
    for (int i = st->first_layer; i < st->first_layer + st->n_layers && i < m->layers; i++) {
        if (i > st->first_layer && layer_spec_same(&m->layer[i], &m->layer[i - 1]))
            continue;   /* like the layer before: no larger */
        if (tf_layer_params(m, i) > block)
            block = tf_layer_params(m, i);
    }
    return block;
}

/* The first stage's row-wise embedding gradient beyond its shard
 * (memory_fsdp2_embedding_grad_bytes). */
static double embedding_grad_bytes(const model *m, stack_gather kind, int pp, int tp)
{
    return memory_fsdp2_embedding_grad_bytes(kind, pp, tp, (double)m->vocab * m->hidden / tp);
}

/* ZeRO-3's gathered weights on pipeline rank `rank` of a pp-stage pipeline
 * (memory_zero3_gathered_bytes, the partitioner's rule too): its largest
 * decoder layer, the embedding matrix, the root parameters it holds -- the
 * embedding on the first rank, the final norm and an untied output layer
 * on the last -- per TP rank, and all of its parameters (`params`, per
 * GPU), at the bytes the stack gathers them in (memory_gathered_weight_
 * bytes); the run's seq_len sizes learned positions
 * (model_embedding_params). */
static double stage_gather_bytes(const model *m, const cluster *c, const strategy *s,
                                 const gpu_spec *gpu, int rank, int tp, double params)
{
    const stack_gather kind = stack_get(c->stack)->memory.gather;
    const int pp = s->pp > 0 ? s->pp : 1;
    double block = stage_block_params(m, &s->stage[rank]), root = 0;
    if (rank == 0)
        root += model_embedding_params(m, s->seq_len);
    if (rank == pp - 1)
        root += m->hidden + (m->tied_embeddings ? 0 : (double)m->vocab * m->hidden);
    return memory_zero3_gathered_bytes(
               kind, m->prec,
               memory_gathered_weight_bytes(kind, gpu, m->prec, s->zero, s->opt_state,
                                            m->fsdp_fp8_gather && s->dp > 1),
               pp, tp,
               params, block / tp, (double)m->vocab * m->hidden / tp, root / tp) +
           (rank == 0 ? embedding_grad_bytes(m, kind, pp, tp) : 0);
}

static const char *binding_of(const time_breakdown *t)
{
    struct { double v; const char *name; } parts[] = {
        {t->compute_s, "compute"},      {t->recompute_s, "recompute"},
        {t->tp_comm_s, "tp-comm"},      {t->cp_comm_s, "cp-comm"},
        {t->ep_comm_s, "ep-comm"},
        {t->pp_comm_s, "pp-comm"},      {t->bubble_s, "pipeline-bubble"},
        {t->dp_comm_s, "dp-comm"},      {t->optimizer_s, "optimizer"},
        {t->overhead_s, "overhead"}};
    size_t i, best = 0;
    for (i = 1; i < sizeof parts / sizeof parts[0]; i++)
        if (parts[i].v > parts[best].v)
            best = i;
    return parts[best].name;
}

void evaluate(const model *m, const cluster *c, const cost_params *p,
              const strategy *s, evaluation *out)
{
    evaluate_schedule(m, c, p, s, out, NULL);
}

double cost_schedule_simulate(const cost_schedule *in, double *rank_end_s, sched_events *events)
{
    if (in->chunked)
        return schedule_simulate_chunks(in->pipe, in->pp, in->vpp, in->microbatches, in->fwd_s,
                                        in->bwd_s, in->p2p_s, in->p2p_wrap_s, rank_end_s,
                                        events);
    return schedule_simulate_ex(in->pipe, in->pp, in->vpp, in->microbatches, in->fwd_s,
                                in->bwd_s, in->p2p_s, in->p2p_wrap_s, rank_end_s, events);
}

/* One layer range costed in this evaluation (rank_range): the range's
 * cost is a function of its layers' specs, the end-stage flags, the node
 * group and the TP degree alone (cost_layer_range_on; the strategy, model
 * and parameters are the evaluation's), so a pipeline's chunks over like
 * layers are costed once. */
#define RANGE_MEMO_MAX 4
typedef struct range_memo {
    const node_group *ng;
    int tp, first, n;
    bool first_stage, last_stage;
    range_cost rc;
} range_memo;

/* The memo across evaluations (evaluate_with).  Its key is a range's
 * node group, TP degree, layers and end-stage flags, and the strategy's
 * knobs as bytes (memo_knobs): every field before its layout arrays --
 * so a knob added later is in the key unless it is taken out here -- less
 * those cost_layer_range_on() never reads, zeroed.  range_on (layer_cost.c)
 * and the strategy helpers it calls (knob_moe_norm_recomputed,
 * strategy_expert_split, cost_recompute_group/lead_layers) read tp, cp,
 * ep, etp, mbs, seq_len, stack, sp, the recompute fields, the overlaps of
 * TP, EP and the shared experts, the K/V exchange, the CUDA graphs and
 * the flex dispatcher; the ZeRO stage, the DP overlaps, dp, pp, vpp, gbs
 * and the pipeline-split flags only evaluate.c reads (the range's layers
 * carry the split).  The stages, the layout and the mixes lie past the
 * key; a member of a stage spanning groups is never memoized (rank_range).
 * Direct-mapped: a slot's new range replaces the old one.  The same range
 * gets the same bits from the memo as from cost_layer_range_on, so the
 * memo changes no result (tests/test_search.c eval_memo_changes_nothing). */
#define MEMO_KNOB_BYTES offsetof(strategy, layout_layers)
#define MEMO_SLOTS 4096
typedef struct memo_slot {
    bool used;
    const node_group *ng;
    int tp, first, n;
    bool first_stage, last_stage;
    unsigned char knobs[MEMO_KNOB_BYTES];
    range_cost rc;
} memo_slot;

/* A rank's activation peak through the schedule (memory_inflight_chunks),
 * a function of the pipeline, its shape, the rank and its chunks'
 * activations alone: kept by those inputs, compared bit for bit (the ZeRO
 * variants of a plan keep the same activations).  Up to PEAK_CHUNKS
 * chunks a rank. */
#define PEAK_SLOTS 1024
#define PEAK_CHUNKS 16
typedef struct peak_slot {
    bool used;
    stack_pipe pipe;
    int pp, v, m, rank;
    double ca[PEAK_CHUNKS];
    double peak;
} peak_slot;

struct eval_memo {
    const model *m;
    const cluster *c;
    const cost_params *p;
    bool reasons;               /* eval_memo_new's */
    long hits;
    int flops_gbs, flops_seq;   /* model_flops_per_step's last inputs (0: none) */
    double flops;               /* and its value */
    memo_slot slot[MEMO_SLOTS];
    peak_slot peak[PEAK_SLOTS];
};

eval_memo *eval_memo_new(bool reasons)
{
    eval_memo *memo = pl_calloc(1, sizeof(eval_memo));
    if (memo != NULL)
        memo->reasons = reasons;
    return memo;
}

void eval_memo_free(eval_memo *memo)
{
    pl_free(memo);
}

long eval_memo_hits(const eval_memo *memo)
{
    return memo != NULL ? memo->hits : 0;
}

/* s's knobs as the memo's key (see above). */
static void memo_knobs(const strategy *s, unsigned char *k)
{
    memcpy(k, s, MEMO_KNOB_BYTES);
#define MEMO_DROP(f) memset(k + offsetof(strategy, f), 0, sizeof s->f)
    MEMO_DROP(pp);
    MEMO_DROP(dp);
    MEMO_DROP(vpp);
    MEMO_DROP(gbs);
    MEMO_DROP(zero);
    MEMO_DROP(overlap_grad_reduce);
    MEMO_DROP(overlap_param_gather);
    MEMO_DROP(account_embedding);
    MEMO_DROP(account_loss);
    MEMO_DROP(layout);
#undef MEMO_DROP
}

/* FNV-1a's 64-bit offset basis and prime (Fowler, Noll and Vo; IETF
 * draft-eastlake-fnv). */
#define MEMO_HASH_SEED 14695981039346656037ull
#define MEMO_HASH_PRIME 1099511628211ull

/* FNV-1a over n bytes from h (MEMO_HASH_SEED to start), a word of 8 at a
 * time (then the rest). */
static uint64_t memo_hash(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, sizeof w);
        h = (h ^ w) * MEMO_HASH_PRIME;
    }
    for (; i < n; i++)
        h = (h ^ b[i]) * MEMO_HASH_PRIME;
    return h;
}

/* The slot of hash h among n: a word's high bits reach only the high bits
 * of memo_hash's products, so they are folded down first (splitmix64's
 * finalizer). */
static size_t memo_slot_of(uint64_t h, size_t n)
{
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    return (size_t)((h ^ (h >> 31)) % n);
}

/* memory_inflight_chunks(), through memo's peaks when there is one. */
static double memo_peak(eval_memo *memo, stack_pipe pipe, int pp, int v, int m, int rank,
                        const double *ca)
{
    int key[5] = {(int)pipe, pp, v, m, rank};
    peak_slot *q;
    if (memo == NULL || v > PEAK_CHUNKS)
        return memory_inflight_chunks(pipe, pp, v, m, rank, ca);
    q = &memo->peak[memo_slot_of(memo_hash(memo_hash(MEMO_HASH_SEED, key, sizeof key),
                                           ca, (size_t)v * sizeof *ca),
                                 PEAK_SLOTS)];
    if (q->used && q->pipe == pipe && q->pp == pp && q->v == v && q->m == m &&
        q->rank == rank && memcmp(q->ca, ca, (size_t)v * sizeof *ca) == 0)
        return q->peak;
    q->used = true;
    q->pipe = pipe;
    q->pp = pp;
    q->v = v;
    q->m = m;
    q->rank = rank;
    memcpy(q->ca, ca, (size_t)v * sizeof *ca);
    q->peak = memory_inflight_chunks(pipe, pp, v, m, rank, ca);
    return q->peak;
}

/* A strategy's knobs as the memo's key (memo_knobs) and their hash. */
typedef struct memo_key {
    unsigned char knobs[MEMO_KNOB_BYTES];
    uint64_t hash;
} memo_key;

static void memo_key_of(const strategy *s, memo_key *k)
{
    memo_knobs(s, k->knobs);
    k->hash = memo_hash(MEMO_HASH_SEED, k->knobs, MEMO_KNOB_BYTES);
}

/* A memo serves one model, cluster and parameter set: given others, it
 * starts over. */
static void memo_use(eval_memo *memo, const model *m, const cluster *c, const cost_params *p)
{
    if (memo->m != m || memo->c != c || memo->p != p) {
        memset(memo->slot, 0, sizeof memo->slot);
        memset(memo->peak, 0, sizeof memo->peak);
        memo->flops_gbs = memo->flops_seq = 0;
        memo->m = m;
        memo->c = c;
        memo->p = p;
    }
}

/* The state of one evaluation (on the caller's stack, about 80 KiB): the
 * inputs, each rank's costs as they are found, and the step-wide maxima. */
typedef struct eval_state {
    const model *m;
    const cluster *c;
    const cost_params *p;
    const strategy *s;
    evaluation *out;
    int pp, v, mcount, cp, dp;
    int dpcp;                   /* the data-parallel group with context
                                   parallelism, dp x cp ranks: see eval_init */
    bool chunked;               /* per-chunk schedule times (see eval_init) */
    double fwd[STRATEGY_MAX_STAGES], bwd[STRATEGY_MAX_STAGES], p2p[STRATEGY_MAX_STAGES];
    double rank_end[STRATEGY_MAX_STAGES], grad_exp[STRATEGY_MAX_STAGES];
    double dp_mb[STRATEGY_MAX_STAGES];   /* DP comm in each micro-batch's backward */
    double pp_mb[STRATEGY_MAX_STAGES];   /* blocking chunk-step p2p in each
                                            micro-batch (rank_chunk_p2p) */
    double param_exp, opt, overhead, peak_flops;
    range_cost rc[STRATEGY_MAX_STAGES];
    double fc[COST_CHUNKS_MAX], bc[COST_CHUNKS_MAX];
    const cost_ep_span *eps;    /* the member being costed of a stage spanning
                                   groups: its EP groups (else NULL) */
    range_memo memo[RANGE_MEMO_MAX];
    int n_memo, next_memo;      /* entries filled; the one to replace next */
    eval_memo *across;          /* the memo across evaluations, or NULL */
    memo_key key;               /* s's knobs in it */
} eval_state;

static void eval_init(eval_state *x, const model *m, const cluster *c, const cost_params *p,
                      const strategy *s, evaluation *out, eval_memo *memo)
{
    x->across = memo;
    if (memo != NULL) {
        memo_use(memo, m, c, p);
        memo_key_of(s, &x->key);
    }
    x->m = m;
    x->c = c;
    x->p = p;
    x->s = s;
    x->out = out;
    x->eps = NULL;
    x->n_memo = x->next_memo = 0;
    x->param_exp = x->opt = x->overhead = x->peak_flops = 0;
    x->pp = s->pp > 0 ? s->pp : 1;
    x->v = s->vpp > 0 ? s->vpp : 1;
    x->mcount = strategy_microbatches(s);
    x->cp = s->cp > 0 ? s->cp : 1;
    x->dp = s->dp > 0 ? s->dp : 1;
    /* Megatron reduces the dense gradients over the data-parallel group
     * WITH the context-parallel ranks (they hold the same weights) and the
     * distributed optimizer shards over it (core_v0.15.0
     * megatron/core/distributed/distributed_data_parallel.py: the buffers'
     * intra_dp_cp_group; megatron/core/optimizer/__init__.py:
     * data_parallel_group=dp_cp_group); Megatron-FSDP likewise (its DP
     * shard group is dp-cp) */
    x->dpcp = x->dp * x->cp;
    memset(out, 0, sizeof *out);
    memset(x->dp_mb, 0, sizeof x->dp_mb);
    memset(x->pp_mb, 0, sizeof x->pp_mb);
    if (x->pp > STRATEGY_MAX_STAGES)
        x->pp = STRATEGY_MAX_STAGES;
    if (x->v > COST_CHUNKS_MAX / x->pp)   /* beyond any model's layers */
        x->v = COST_CHUNKS_MAX / x->pp;
    /* per-chunk schedule times where the chunks of a rank hold different
     * layer counts (the embedding/loss-accounting split, a layout); the
     * even and the first/last splits keep per-rank times (chunk = rank / vpp) */
    x->chunked = x->v > 1 && (s->account_embedding || s->account_loss || s->layout);
    if (x->mcount < 1)
        x->mcount = 1;
    out->n_stages = x->pp;
    out->gpus = strategy_gpus(s);
}

/* cost_layer_range_on() of layers [first, first + n) on ng at TP degree
 * tp, through the memo across evaluations when there is one. */
static void memo_range(eval_state *x, const node_group *ng, int tp, int first, int n,
                       bool first_stage, bool last_stage, range_cost *part)
{
    int at[4] = {tp, first, n, (first_stage ? 1 : 0) + (last_stage ? 2 : 0)};
    eval_memo *memo = x->across;
    memo_slot *q;
    if (memo == NULL) {
        cost_layer_range_on(x->m, ng, x->p, x->c->stack, x->s, tp, first, n, first_stage,
                            last_stage, part);
        return;
    }
    q = &memo->slot[memo_slot_of(memo_hash(memo_hash(x->key.hash, &ng, sizeof ng), at,
                                           sizeof at),
                                 MEMO_SLOTS)];
    if (q->used && q->ng == ng && q->tp == tp && q->first == first && q->n == n &&
        q->first_stage == first_stage && q->last_stage == last_stage &&
        memcmp(q->knobs, x->key.knobs, MEMO_KNOB_BYTES) == 0) {
        *part = q->rc;
        memo->hits++;
        return;
    }
    cost_layer_range_on(x->m, ng, x->p, x->c->stack, x->s, tp, first, n, first_stage,
                        last_stage, part);
    q->used = true;
    q->ng = ng;
    q->tp = tp;
    q->first = first;
    q->n = n;
    q->first_stage = first_stage;
    q->last_stage = last_stage;
    memcpy(q->knobs, x->key.knobs, MEMO_KNOB_BYTES);
    q->rc = *part;
}

/* Layers [first, first + n) on node group ng at TP degree tp into *part
 * (cost_layer_range_on, memo_range; a member of a stage spanning groups:
 * cost_layer_range_member), or a like range's cost already found in this
 * evaluation (range_memo). */
static void rank_range(eval_state *x, const node_group *ng, int tp, int first, int n,
                       bool first_stage, bool last_stage, range_cost *part)
{
    range_memo *e;
    if (x->eps != NULL) {
        cost_layer_range_member(x->m, x->c, ng, x->eps, x->p, x->s, tp, first, n, first_stage,
                                last_stage, part);
        return;
    }
    for (int k = 0; k < x->n_memo; k++) {
        e = &x->memo[k];
        if (e->ng == ng && e->tp == tp && e->n == n && e->first_stage == first_stage &&
            e->last_stage == last_stage && model_layers_same(x->m, e->first, first, n)) {
            *part = e->rc;
            return;
        }
    }
    memo_range(x, ng, tp, first, n, first_stage, last_stage, part);
    e = &x->memo[x->next_memo];
    *e = (range_memo){ng, tp, first, n, first_stage, last_stage, *part};
    x->next_memo = (x->next_memo + 1) % RANGE_MEMO_MAX;
    if (x->n_memo < RANGE_MEMO_MAX)
        x->n_memo++;
}

/* Rank i's layers, chunk by chunk (strategy_chunk_layers' rule: the
 * embedding in rank 0's chunk 0, the output layer and loss in rank pp-1's
 * last), summed into *r; per-chunk times into fc/bc when chunked, each
 * chunk's activations, parameters and working set into ca[], cparams[] and
 * ctrans[].  Returns whether the (chunked) chunks keep different
 * activations. */
static bool rank_layers(eval_state *x, int i, const node_group *ng, int tp, range_cost *r,
                        double *ca, double *cparams, double *ctrans)
{
    const int v = x->v, pp = x->pp;
    bool act_uneven = false;
    double peak = 0;
    int cn[COST_CHUNKS_MAX], cfirst[COST_CHUNKS_MAX];
    memset(r, 0, sizeof *r);
    strategy_rank_chunks(x->s, x->m->layers, i, 0, v, cn, cfirst);
    for (int j = 0; j < v; j++) {
        range_cost part;
        int first = cfirst[j], n = cn[j] < 0 ? 0 : cn[j];
        rank_range(x, ng, tp, first, n, i == 0 && j == 0, i == pp - 1 && j == v - 1, &part);
        range_cost_add_work(r, &part);
        r->params += part.params;
        r->expert_params += part.expert_params;
        r->vocab_params += part.vocab_params;
        ca[j] = part.act_bytes;
        cparams[j] = part.params;
        ctrans[j] = cost_range_transient_bytes(&part);
        if (ctrans[j] > peak)   /* chunks run one at a time */
            peak = ctrans[j];
        if (x->chunked) {
            x->fc[i * v + j] = cost_cap_time(part.fwd_s);
            x->bc[i * v + j] = cost_cap_time(part.bwd_s);
            if (part.act_bytes != ca[0])
                act_uneven = true;
        }
    }
    r->act_peak_extra_bytes = peak;   /* the rank's transient, combined */
    return act_uneven;
}

/* ZeRO-3 on rank i: every weight tensor is gathered before its forward and
 * again before its backward, its gradient reduce-scattered after: one ring
 * collective per tensor (NCCL's hierarchical latency) on the critical path
 * (each layer waits for its weights; measured ZeRO-3 runs scale as if
 * little were hidden, Narayanan et al. SC21 Table 2).  Each per-tensor
 * collective also flattens or unflattens one chunk per rank (list
 * all-gather / reduce-scatter: dp copy kernels), the term that grows
 * linearly with the ranks as SC21's 384 -> 1,536 GPU runs do.  Added to the
 * rank's forward and backward; nothing is exposed after the pipeline. */
static void rank_zero3(eval_state *x, int i, const comm_link *dpl, const gen_constants *k,
                       double gb, range_cost *r)
{
    const int dp = x->dpcp;
    double lat = r->n_tensors * (comm_ring_latency_s(dpl, dp) + dp * k->kernel_s);
    double ag = comm_allgather_s(dpl, dp, r->params * 2.0) - comm_ring_latency_s(dpl, dp);
    double rs = comm_reducescatter_s(dpl, dp, r->params * gb) - comm_ring_latency_s(dpl, dp);
    if (dp > 1) {
        r->fwd_s += lat + ag;
        r->bwd_s += 2.0 * lat + ag + rs;
    }
    x->grad_exp[i] = 0;
}

/* ZeRO-3 with prefetched units on rank i: Megatron-FSDP optim_grads_params
 * (core_v0.15.0 megatron/core/distributed/fsdp/src/megatron_fsdp/
 * megatron_fsdp.py: _pre_forward_param_unshard / _pre_backward all-gather a
 * module's parameter buckets with prefetch=True, in forward and backward
 * pass order, on the all-gather pipeline's side stream; grad_reduce_every_
 * bprop reduce-scatters each module's gradients after its backward) and
 * FSDP2 (fully_shard's pre-forward/backward hooks with implicit prefetch).
 * Per micro-batch the rank's parameters are gathered twice (16-bit) and its
 * gradients reduce-scattered once (the main gradients' dtype), one
 * collective per decoder layer (its ring latency each); the gathers run
 * ahead of the compute that needs them, so only the first unit's gather
 * waits, and the rest of the forward's gathers (the backward's gathers and
 * reduces) hide under the forward (backward) as any overlapped
 * communication does (cost_overlapped: what does not fit shows, what fits
 * slows the compute by overlap_exposed).  FSDP2: after the last backward
 * the last unit's reduce-scatter is exposed.  Megatron-FSDP
 * (stack_zero3_syncs_each_backward) frees a layer's gathered parameters
 * after its forward and after its backward (megatron_fsdp.py _post_forward,
 * _post_backward -> release_module_parameters); prefetch runs in pass order
 * and stops at the chunk's ends (param_and_grad_buffer.py AllGatherPipeline
 * .all_gather_params next_bucket_id), and the schedule pre-launches a
 * chunk's first gather only for its first micro-batch (training.py
 * param_sync_func, align_param_gather).  So in every micro-batch each of
 * the rank's v chunks (each its own FSDP root) waits for its first layer's
 * gather in the forward, for its last layer's gather at the start of its
 * backward (_pre_backward) and, at the end of that backward, for the last
 * layer's reduce-scatter (_root_post_backward -> grad_reduce_pipeline
 * .reset() -> wait_for_previous_grad_reduce(0)); the rest hides as above,
 * nothing is left after the last backward.  Routed experts shard over their
 * expert-data-parallel group (edpl, edp ranks), the rest over dp x cp.
 * DeepSpeed's ZeRO-3 of 2021 is rank_zero3. */
static void rank_zero3_prefetch(eval_state *x, int i, const comm_link *dpl,
                                const comm_link *edpl, int edp, const gen_constants *k,
                                double gb, range_cost *r)
{
    const int dp = x->dpcp;
    const stage_spec *st = &x->s->stage[i];
    int tp = st->tp > 0 ? st->tp : (x->s->tp > 0 ? x->s->tp : 1);
    int units = st->n_layers > 1 ? st->n_layers : 1;
    double dense = r->params - r->expert_params, ex = r->expert_params;
    double unit = memory_zero3_unit_params(stage_block_params(x->m, st),
                                           (double)x->m->vocab * x->m->hidden) / tp;
    double lat = (units - 1) * comm_ring_latency_s(dpl, dp);
    double ag = comm_allgather_s(dpl, dp, dense * 2.0) + lat;
    double rs = comm_reducescatter_s(dpl, dp, dense * gb) + lat;
    double first = comm_allgather_s(dpl, dp, (unit < dense ? unit : dense) * 2.0);
    double last = comm_reducescatter_s(dpl, dp, (unit < dense ? unit : dense) * gb);
    x->grad_exp[i] = 0;
    if (ex > 0 && edp > 1) {
        ag += comm_allgather_s(edpl, edp, ex * 2.0);
        rs += comm_reducescatter_s(edpl, edp, ex * gb);
    }
    if (dp <= 1)
        return;
    if (stack_zero3_syncs_each_backward(stack_get(x->c->stack))) {
        double u = unit < dense / x->v ? unit : dense / x->v;
        double fg = x->v * comm_allgather_s(dpl, dp, u * 2.0);
        double bw = fg + x->v * comm_reducescatter_s(dpl, dp, u * gb);
        r->fwd_s += fg + cost_overlapped_on(ag > fg ? ag - fg : 0, r->fwd_s, k, dpl->inter_node);
        r->bwd_s += bw + cost_overlapped_on(ag + rs > bw ? ag + rs - bw : 0, r->bwd_s, k,
                                            dpl->inter_node);
        return;
    }
    r->fwd_s += first + cost_overlapped_on(ag > first ? ag - first : 0, r->fwd_s, k,
                                           dpl->inter_node);
    r->bwd_s += cost_overlapped_on(ag + rs, r->bwd_s, k, dpl->inter_node);
    x->grad_exp[i] = last;
}

/* ZeRO-2, Megatron-FSDP optim_grads, as Megatron-LM core_v0.15.0 runs it
 * (megatron/core/distributed/fsdp/src/megatron_fsdp/megatron_fsdp.py,
 * param_and_grad_buffer.py; megatron/training/training.py get_model):
 *   - every micro-batch: _post_backward reduce-scatters a bucket's
 *     gradients as soon as the backward has produced all of them
 *     (grad_reduce_every_bprop for optim_grads; the distributed optimizer
 *     reduces once, in the last micro-batch), on a side stream, in the main
 *     gradients' dtype (main_grad_buffer fp32 when grad_reduce_in_fp32,
 *     which training.py sets from --accumulate-allreduce-grads-in-fp32, on
 *     for bf16), into the sharded main-gradient buffer;
 *   - the buckets: with no FSDP unit modules (the adapter's default for
 *     optim_grads) the parameters are cut in order into buckets of
 *     bucket_size = max(40M, 1M x dp) (cost_dp_bucket_params) on the first
 *     model chunk only: get_model wraps chunks 2..vpp with
 *     disable_bucketing, so each of them is ONE bucket, reduced after its
 *     whole backward;
 *   - at the end of each chunk's backward _root_post_backward calls
 *     grad_reduce_pipeline.reset() -> wait_for_previous_grad_reduce(0): the
 *     compute stream waits for every reduce-scatter of that backward
 *     (DeepSpeed's ZeRO-2, stage_1_and_2.py independent_gradient_partition_
 *     epilogue, synchronizes the device there under overlap_comm alike).
 * So per micro-batch a reduce hides only under the rest of its own chunk's
 * backward, never under the next forward.  Over the rank's nb bucketed
 * chunks (1 of v here; every chunk under FSDP2, whose units are blocks:
 * stack_zero2_whole_chunks) with tb = t_grad nb / v of reduce and bw =
 * bwd nb / v of backward, cut into n = tb / g buckets of g = last_grad
 * seconds (at most one chunk's), each chunk shows its last bucket and, when
 * a bucket reduces slower than its layers' backward (b = bw / n), the
 * backlog -- nb g + (n - nb) max(0, g - b) in all -- and the rest slows the
 * compute (cost_overlapped); the whole-bucket chunks' reduces show in full.
 * Added to the rank's backward (the schedule carries it, m times a step);
 * nothing is left after the last backward.  (Megatron-FSDP asserts
 * overlap_grad_reduce for optim_grads; without it each reduce is exposed in
 * full.)  Returns the per-micro-batch addition (the time breakdown's
 * dp-comm). */
static double rank_zero2_grads(eval_state *x, int i, double t_grad, double last_grad,
                               const gen_constants *k, bool network, range_cost *r)
{
    int nb = x->v - stack_zero2_whole_chunks(stack_get(x->c->stack), x->v);
    double tb = t_grad * nb / x->v, bw = r->bwd_s * nb / x->v, g = last_grad, n, exposed;
    double per_mb;
    x->grad_exp[i] = 0;
    if (!x->s->overlap_grad_reduce) {
        r->bwd_s += t_grad;
        return t_grad;
    }
    if (!(g > 0) || g > tb / nb)
        g = tb / nb;
    n = tb / g;
    exposed = nb * g + (n - nb) * (g > bw / n ? g - bw / n : 0);
    per_mb = exposed + cost_overlapped_on(tb - exposed, bw, k, network) + (t_grad - tb);
    r->bwd_s += per_mb;
    return per_mb;
}

/* The parameters of rank i's bucket that reduces last and gathers first
 * (ZeRO 0-1: Megatron-Core's DDP buffers).  The buffer cuts its buckets
 * walking the parameters in reverse registration order, a bucket closing
 * once it holds bucket_size (core_v0.15.0 megatron/core/distributed/
 * param_and_grad_buffer.py, _ParamAndGradBuffer.__init__), so the input
 * embedding, registered first, lands whole in the last bucket whatever its
 * size (alone when shared with the output layer: _does_param_require_
 * new_bucket); its gradient is the backward's last, and the forward's first
 * pre-hook waits for its gather (finish_param_sync).  On the first rank
 * that bucket is the embedding (/ tp: vocabulary-parallel) when larger
 * than a bucket; elsewhere, and under Megatron-FSDP (ZeRO-2: its own
 * units), one bucket.  The gradient half holds on every stack whose reduce
 * is bucketed (checked 2026-11): DeepSpeed's ZeRO-1/2 with overlap_comm
 * fills its ipg bucket in gradient-ready order from the accumulate-grad
 * hooks, reduces a bucket when the next gradient would overflow
 * reduce_bucket_size, puts a larger parameter in a bucket alone
 * (extra_large_param_to_reduce) and reduces the last bucket after the
 * backward (stage_1_and_2.py reduce_independent_p_g_buckets_and_remove_
 * grads, independent_gradient_partition_epilogue); torch DDP, the
 * pytorch-fsdp2 stack's zero 0 (torchtitan's replicate()), closes a bucket
 * once a whole tensor takes it past bucket_cap_mb, in reverse registration
 * order and then in gradient-ready order (reducer.cpp compute_bucket_
 * assignment_by_size): both end the backward with the embedding's
 * gradient, whole.  Megatron-LM 2020-2022 reduce no buckets and overlap
 * nothing (their masks). */
static double rank_lead_bucket(const eval_state *x, int i, int tp, double dense, double bucket)
{
    double emb = i == 0 && x->s->zero <= 1 ? model_embedding_params(x->m, x->s->seq_len) / tp : 0;
    if (emb > dense)
        emb = dense;
    return emb > bucket ? emb : bucket;
}

/* Rank i's data-parallel gradient reduce (exposed part into grad_exp[i])
 * and parameter gather (returned, exposed part), ZeRO 0-2: all-reduce, or
 * with the distributed optimizer reduce-scatter + all-gather (ZeRO-2: the
 * reduce-scatter per micro-batch, rank_zero2_grads); the routed experts'
 * over their expert-data-parallel group (edpl, edp ranks). */
static double rank_dp_comm(eval_state *x, int i, int tp, const comm_link *dpl,
                           const comm_link *edpl, int edp, const gen_constants *k, double gb,
                           range_cost *r)
{
    const int dp = x->dpcp;
    double dense = r->params - r->expert_params, ex = r->expert_params;
    double bucket_max = cost_dp_bucket_params(stack_get(x->c->stack), dp, x->s->zero, gb);
    double bucket = dense < bucket_max ? dense : bucket_max;
    double lead = rank_lead_bucket(x, i, tp, dense, bucket);
    double t_grad, t_param, last_grad, first_param = 0;
    if (x->s->zero >= 1) {
        t_grad = comm_reducescatter_s(dpl, dp, dense * gb);
        t_param = comm_allgather_s(dpl, dp, dense * 2.0);
        first_param = comm_allgather_s(dpl, dp, lead * 2.0);
        if (ex > 0) {
            t_grad += comm_reducescatter_s(edpl, edp, ex * gb);
            t_param += comm_allgather_s(edpl, edp, ex * 2.0);
        }
        last_grad = comm_reducescatter_s(dpl, dp, lead * gb);
    } else {
        t_grad = comm_allreduce_s(dpl, dp, dense * gb);
        if (ex > 0)
            t_grad += comm_allreduce_s(edpl, edp, ex * gb);
        t_param = 0;
        last_grad = comm_allreduce_s(dpl, dp, lead * gb);
    }
    /* overlapped with the last micro-batch's backward (forward): the last
     * (first) bucket always shows */
    if (x->s->zero == 2 && t_grad > 0) {
        x->dp_mb[i] = rank_zero2_grads(x, i, t_grad, last_grad, k, dpl->inter_node, r);
    } else if (x->s->overlap_grad_reduce && t_grad > 0) {
        double rest = t_grad - last_grad;
        x->grad_exp[i] = last_grad + cost_overlapped_on(rest, r->bwd_s, k, dpl->inter_node);
    } else {
        x->grad_exp[i] = t_grad;
    }
    if (x->s->overlap_param_gather && t_param > 0)
        t_param = first_param +
                  cost_overlapped_on(t_param - first_param, r->fwd_s, k, dpl->inter_node);
    return t_param;
}

/* Rank i's optimizer step and step sync: the distributed optimizer shards
 * the states (the experts' over their expert-data-parallel group). */
static double rank_optimizer_s(const eval_state *x, const node_group *ng,
                               const gen_constants *k, int edp, const range_cost *r)
{
    double local = r->params;
    if (x->s->zero >= 1)
        local = r->expert_params > 0
                    ? (r->params - r->expert_params) / x->dpcp + r->expert_params / edp
                    : r->params / x->dpcp;
    return compute_optimizer_s(&ng->gpu, k, local) +
           step_sync_s(x->m, ng, k, x->out->gpus > 0 ? x->out->gpus : 1, local);
}

/* What the interleaved schedule's blocking p2p costs rank i per micro-batch
 * (vpp > 1, pp > 1, a stack_p2p_blocking stack: Megatron-LM 2021-2022).
 * The schedule simulation carries each transfer as the delay between a
 * chunk and its consumer on the neighbour (pipeline.c), the sender running
 * on; Megatron-LM v2.5's interleaved steady state instead exchanges after
 * every forward + backward pair (send_forward_backward_recv_forward_backward:
 * the forward's output to rank i + 1, the backward's gradient to rank i - 1,
 * both receives) and waits for all four and a torch.cuda.synchronize()
 * before its next chunk, so each of the v pairs per micro-batch holds the
 * rank for the slower of its two links (cost_boundary_p2p_s; the wrap-around
 * link on the end ranks), counted on the backward.  Megatron-Core and
 * torch.distributed.pipelining overlap the transfers with the next chunks
 * (stack_p2p_blocking false): nothing here (docs/validation.md, "The
 * interleaved schedule's per-chunk-step costs"). */
static void rank_chunk_p2p(eval_state *x, int i, range_cost *r)
{
    const int v = x->v, pp = x->pp;
    double pin, pout;
    if (v < 2 || pp < 2 || !stack_p2p_blocking(stack_get(x->c->stack)))
        return;
    pin = cost_cap_time(cost_boundary_p2p_s(x->m, x->c, x->p, x->s, (i + pp - 1) % pp));
    pout = cost_cap_time(cost_boundary_p2p_s(x->m, x->c, x->p, x->s, i));
    x->pp_mb[i] = v * (pin > pout ? pin : pout);
    r->bwd_s += x->pp_mb[i];
}

/* Rank i's times capped and stored (schedule inputs, evaluation); chunked:
 * what the rank pays beyond its chunks' layers (ZeRO-3's per-tensor
 * collectives) spread over its chunks in equal shares. */
static void rank_times(eval_state *x, int i, range_cost *r)
{
    const int v = x->v;
    r->fwd_s = cost_cap_time(r->fwd_s);
    r->bwd_s = cost_cap_time(r->bwd_s);
    r->compute_s = cost_cap_time(r->compute_s);
    r->recompute_s = cost_cap_time(r->recompute_s);
    r->tp_comm_s = cost_cap_time(r->tp_comm_s);
    r->cp_comm_s = cost_cap_time(r->cp_comm_s);
    x->grad_exp[i] = cost_cap_time(x->grad_exp[i]);
    x->fwd[i] = r->fwd_s;
    x->bwd[i] = r->bwd_s;
    if (x->chunked) {
        double sf = 0, sbw = 0;
        for (int j = 0; j < v; j++) {
            sf += x->fc[i * v + j];
            sbw += x->bc[i * v + j];
        }
        for (int j = 0; j < v; j++) {
            x->fc[i * v + j] = cost_cap_time(x->fc[i * v + j] + (x->fwd[i] - sf) / v);
            x->bc[i * v + j] = cost_cap_time(x->bc[i * v + j] + (x->bwd[i] - sbw) / v);
        }
    }
    x->out->stage_fwd_s[i] = r->fwd_s;
    x->out->stage_bwd_s[i] = r->bwd_s;
    if (r->recompute_share > x->out->recompute_share)
        x->out->recompute_share = r->recompute_share;
}

/* Rank i's activations under torch.distributed.pipelining as
 * memory_schedule_peak_bytes() follows them through the step: the last
 * stage's kept outputs (cost_kept_output_bytes: its logits, one
 * micro-batch of tokens on this GPU), the gradients its backwards leave on
 * the stage inputs (memory_pipe_input_grad_bytes, one boundary each), each
 * chunk's working set (ctrans[], in place of the rank's largest,
 * r->act_peak_extra_bytes) and, where FSDP2
 * gathers the stage, its accumulated fp32 gradients per chunk
 * (memory_fsdp2_accum_grad_bytes of cparams[], each chunk's parameters per
 * GPU; rank 0's first chunk with the embedding's whole gradient,
 * memory_fsdp2_embedding_grad_bytes), taken out of the gathered figure;
 * the peak becomes in->inflight
 * whole-rank micro-batches. */
static void rank_torch_schedule_memory(const eval_state *x, int i, int tp, bool gathers,
                                       const double *ca, const double *cparams,
                                       const double *ctrans, const range_cost *r,
                                       stage_memory_in *in)
{
    const strategy *s = x->s;
    double cg[COST_CHUNKS_MAX];
    const bool fsdp2 = gathers && stack_get(x->c->stack)->memory.gather == STACK_GATHER_FSDP2;
    const schedule_held acc = {fsdp2 ? cg : NULL,
                               cost_kept_output_bytes(x->m, s, tp, x->c->stack),
                               ctrans,
                               memory_pipe_input_grad_bytes(
                                   STACK_PIPE_TORCH,
                                   cost_boundary_bytes(x->m, s, tp, x->c->stack))};
    const double eg = i == 0 ? embedding_grad_bytes(x->m, stack_get(x->c->stack)->memory.gather,
                                                    x->pp, tp)
                             : 0;   /* chunk 0 of rank 0 holds the embedding */
    for (int j = 0; j < x->v; j++)
        cg[j] = memory_fsdp2_accum_grad_bytes(x->pp, cparams[j]) + (j == 0 ? eg : 0);
    if (fsdp2)
        in->extra_bytes -= memory_fsdp2_accum_grad_bytes(x->pp, in->params) + eg;
    in->extra_bytes -= r->act_peak_extra_bytes;
    in->inflight =
        memory_schedule_peak_bytes(STACK_PIPE_TORCH, x->pp, x->v, x->mcount, i, ca, &acc) /
        in->act_bytes;
}

/* Rank i's memory (memory_stage), with memory_inflight() micro-batches or,
 * when its chunks keep different activations (ca[]), the schedule's own
 * peak as whole-rank micro-batches; ZeRO-3 adds its gathered weights (the
 * stack's way: DeepSpeed's prefetch or FSDP2's root and blocks), the
 * stack's pipeline its per-micro-batch buffers (memory_pipe_buffers_bytes);
 * the warm-up is the stack's schedule's (memory_inflight's `pipe`).
 * torch.distributed.pipelining: the schedule walk over the whole step
 * (memory_schedule_peak_bytes) with the last stage's kept outputs and, with
 * FSDP2's gathered stage, its fp32 gradients chunk by chunk (cparams[]:
 * each chunk's parameters per GPU), in place of the whole stage's. */
static void rank_memory(eval_state *x, int i, const node_group *ng, int tp, int edp,
                        const range_cost *r, bool act_uneven, const double *ca,
                        const double *cparams, const double *ctrans)
{
    const strategy *s = x->s;
    const stack_pipe pipe = stack_get(x->c->stack)->memory.pipe;
    const bool gathers = memory_zero3_gathers(s->zero, x->dpcp) && s->stage[i].n_layers > 0;
    stage_memory_in in = {x->m->prec, s->zero, x->dpcp, edp, r->params, r->expert_params,
                          r->act_bytes, memory_inflight(pipe, x->pp, x->v, x->mcount, i),
                          r->act_peak_extra_bytes, x->p->reserve_bytes, x->p->frag_fraction,
                          ng->gpu.usable_mem_bytes,
                          memory_grad_transient_bytes(
                              stack_get(x->c->stack), x->m->prec, s->grad_reduce_bf16, s->zero,
                              x->dpcp, x->v, r->params),
                          s->grad_reduce_bf16,
                          memory_fp8_weights_single(&ng->gpu, x->m->prec, s->zero, s->opt_state),
                          s->opt_state,
                          memory_fp8_weight_cache_bytes(stack_get(x->c->stack), &ng->gpu,
                                                        x->m->prec, s->zero, s->opt_state),
                          r->vocab_params};
    if (gathers)
        in.extra_bytes += stage_gather_bytes(x->m, x->c, s, &ng->gpu, i, tp, r->params);
    if (act_uneven && in.act_bytes > 0)
        in.inflight = memo_peak(x->across, pipe, x->pp, x->v, x->mcount, i, ca) / in.act_bytes;
    in.extra_bytes += memory_pipe_buffers_bytes(pipe, cost_boundary_bytes(x->m, s, tp, x->c->stack),
                                                x->mcount, in.inflight, x->pp, x->v, i);
    if (pipe == STACK_PIPE_TORCH && x->pp > 1 && in.act_bytes > 0)
        rank_torch_schedule_memory(x, i, tp, gathers, ca, cparams, ctrans, r, &in);
    memory_stage(&in, &x->out->stage_memory[i]);
    if (x->out->stage_memory[i].total_bytes > x->out->peak_memory_bytes) {
        x->out->peak_memory_bytes = x->out->stage_memory[i].total_bytes;
        x->out->peak_stage = i;
    }
}

/* Pipeline rank i on node group ng (a member view when the stage spans
 * groups, `gpus` of its GPUs there; 0: all tp cp dp on ng): its layers,
 * data-parallel communication, optimizer, p2p to the next rank and memory. */
static void eval_rank_on(eval_state *x, int i, const node_group *ng, int gpus)
{
    const strategy *s = x->s;
    const stage_spec *st = &s->stage[i];
    int tp = st->tp > 0 ? st->tp : (s->tp > 0 ? s->tp : 1);
    gen_constants kc;
    cost_constants(&kc, x->p, x->c->stack, ng->gpu.gen);
    const gen_constants *k = &kc;
    comm_link dpl = comm_group_link(ng, k, x->dpcp, tp);
    /* routed experts: expert-data-parallel group of tp cp dp / (ep etp)
     * ranks, ep etp apart (the expert grid etp-ep-edp) */
    int edp = strategy_expert_dp(s, tp);
    comm_link edpl = comm_group_link(ng, k, edp, strategy_expert_split(s));
    const stack_spec *stk = stack_get(x->c->stack);
    double gb = grad_reduce_bytes(x->m, &ng->gpu, s, stk->zero3_prefetch), t_param = 0, opt_i;
    double ca[COST_CHUNKS_MAX], cparams[COST_CHUNKS_MAX], ctrans[COST_CHUNKS_MAX];
    range_cost *r = &x->rc[i];
    bool act_uneven = rank_layers(x, i, ng, tp, r, ca, cparams, ctrans);

    if (s->zero >= 3 && stk->zero3_prefetch)
        rank_zero3_prefetch(x, i, &dpl, &edpl, edp, k, gb, r);
    else if (s->zero >= 3)
        rank_zero3(x, i, &dpl, k, gb, r);
    else
        t_param = rank_dp_comm(x, i, tp, &dpl, &edpl, edp, k, gb, r);
    if (t_param > x->param_exp)
        x->param_exp = t_param;
    opt_i = rank_optimizer_s(x, ng, k, edp, r);
    if (opt_i > x->opt)
        x->opt = opt_i;
    /* the slowest host sets the pace; not clamped at 0 so that
     * `planner calibrate` sees its slope through a negative trial */
    if (i == 0 || k->step_overhead_s > x->overhead)
        x->overhead = k->step_overhead_s;
    rank_chunk_p2p(x, i, r);
    rank_times(x, i, r);
    /* p2p to the next rank */
    x->p2p[i] = i < x->pp - 1 || (x->v > 1 && x->pp > 1)
                    ? cost_cap_time(cost_boundary_p2p_s(x->m, x->c, x->p, s, i))
                    : 0;
    rank_memory(x, i, ng, tp, edp, r, act_uneven, ca, cparams, ctrans);
    if (gpus > 0)
        x->peak_flops += compute_peak_flops(&ng->gpu, precision_peak(x->m->prec)) * gpus;
    else
        x->peak_flops += compute_peak_flops(&ng->gpu, precision_peak(x->m->prec)) * tp *
                         x->cp * x->dp;
}

/* What one member of a rank spanning groups left in x (the slowest kept). */
typedef struct rank_member {
    range_cost rc;
    double fwd, bwd, grad_exp, param_exp, overhead, dp_mb, pp_mb;
    memory_breakdown mem;
} rank_member;

/* Rank i spanning node groups (AMP's model, Li et al., NeurIPS 2022, with
 * a uniform data split as Megatron and AMP run): each member's share costed
 * on its own GPU and on cost_member_view()'s links (every network hop at
 * the slowest link of the stage; the MoE all-to-alls over the links their
 * EP groups cross, cost_member_ep_span); the slowest member (forward + backward)
 * paces the rank: its times, and its gradient reduce exposed beyond its own
 * backward (the collective starts when the last member's buckets are
 * ready); the step waits for the slowest member's optimizer, parameter
 * gather and fixed overhead; the member with the least free memory bounds
 * the rank (every member must fit). */
static void eval_rank_mixed(eval_state *x, int i, const stage_mix *mx)
{
    rank_member worst;
    double mem_slack = 0, param_before = x->param_exp;
    int n = mx->n < STAGE_MIX_MAX ? mx->n : STAGE_MIX_MAX;
    memset(&worst, 0, sizeof worst);
    for (int j = 0; j < n; j++) {
        node_group view;
        cost_ep_span eps;
        const memory_breakdown *mb = &x->out->stage_memory[i];
        cost_member_view(x->c, mx, j, &view);
        cost_member_ep_span(mx, j, x->s, &eps);
        x->param_exp = param_before;
        x->eps = &eps;
        eval_rank_on(x, i, &view, mx->gpus[j]);
        x->eps = NULL;
        if (j == 0 || x->fwd[i] + x->bwd[i] > worst.fwd + worst.bwd) {
            worst.rc = x->rc[i];
            worst.fwd = x->fwd[i];
            worst.bwd = x->bwd[i];
            worst.grad_exp = x->grad_exp[i];
            worst.param_exp = x->param_exp;
            worst.dp_mb = x->dp_mb[i];
            worst.pp_mb = x->pp_mb[i];
        }
        if (j == 0 || x->overhead > worst.overhead)
            worst.overhead = x->overhead;
        if (j == 0 || mb->total_bytes - mb->capacity_bytes > mem_slack) {
            mem_slack = mb->total_bytes - mb->capacity_bytes;
            worst.mem = *mb;
        }
    }
    x->rc[i] = worst.rc;
    x->fwd[i] = x->out->stage_fwd_s[i] = worst.fwd;
    x->bwd[i] = x->out->stage_bwd_s[i] = worst.bwd;
    x->grad_exp[i] = worst.grad_exp;
    x->dp_mb[i] = worst.dp_mb;
    x->pp_mb[i] = worst.pp_mb;
    x->param_exp = worst.param_exp;
    x->overhead = worst.overhead;
    x->out->stage_memory[i] = worst.mem;
}

/* Pipeline rank i on its node group, or on each of the groups it spans. */
static void eval_rank(eval_state *x, int i)
{
    const strategy *s = x->s;
    const stage_spec *st = &s->stage[i];
    int g = st->group >= 0 && st->group < x->c->n_groups ? st->group : 0;
    const stage_mix *mx = strategy_stage_mix(s, i);
    if (mx != NULL && cost_mix_valid(x->c, mx))
        eval_rank_mixed(x, i, mx);
    else
        eval_rank_on(x, i, &x->c->group[g], 0);
}

/* The pipeline schedule over the ranks' times (into *sched when not NULL):
 * the span from the first forward to the last backward, each rank's finish
 * in rank_end[]; the closed form when the simulation runs out of memory. */
static double eval_schedule(eval_state *x, cost_schedule *sched)
{
    const int pp = x->pp, v = x->v, mcount = x->mcount;
    const stack_pipe pipe = stack_get(x->c->stack)->memory.pipe;   /* memory's schedule too */
    double span;
    if (x->chunked)
        span = schedule_simulate_chunks(pipe, pp, v, mcount, x->fc, x->bc, x->p2p,
                                        pp > 1 ? x->p2p[pp - 1] : 0, x->rank_end, NULL);
    else
        span = schedule_simulate_ex(pipe, pp, v, mcount, x->fwd, x->bwd, x->p2p,
                                    pp > 1 ? x->p2p[pp - 1] : 0, x->rank_end, NULL);
    if (sched != NULL) {
        int n = x->chunked ? pp * v : pp;
        sched->pipe = pipe;
        sched->pp = pp;
        sched->vpp = v;
        sched->microbatches = mcount;
        sched->chunked = x->chunked;
        memcpy(sched->fwd_s, x->chunked ? x->fc : x->fwd, (size_t)n * sizeof(double));
        memcpy(sched->bwd_s, x->chunked ? x->bc : x->bwd, (size_t)n * sizeof(double));
        memcpy(sched->p2p_s, x->p2p, (size_t)pp * sizeof(double));
        sched->p2p_wrap_s = pp > 1 ? x->p2p[pp - 1] : 0;
    }
    if (span < 0) {   /* out of memory in the simulation: the closed form */
        double fb = 0;
        for (int i = 0; i < pp; i++)
            if (x->fwd[i] + x->bwd[i] > fb)
                fb = x->fwd[i] + x->bwd[i];
        span = (mcount + (pp - 1.0) / v) * fb;
        for (int i = 0; i < pp; i++)
            x->rank_end[i] = span;
    }
    return span;
}

/* Where the step's time goes, on the slowest rank `worst`; `done` is the
 * last rank's finish with its exposed reduce. */
static void eval_breakdown(const eval_state *x, int worst, double span, double done)
{
    time_breakdown *t = &x->out->time;
    const range_cost *rw = &x->rc[worst];
    double steady = x->mcount * (x->fwd[worst] + x->bwd[worst]);
    double pp_fill = 0;
    t->compute_s = x->mcount * rw->compute_s;
    t->recompute_s = x->mcount * rw->recompute_s;
    t->tp_comm_s = x->mcount * rw->tp_comm_s;
    t->cp_comm_s = x->mcount * rw->cp_comm_s;
    t->ep_comm_s = x->mcount * rw->ep_comm_s;
    for (int i = 0; i < x->pp - 1; i++)
        pp_fill += 2.0 * x->p2p[i];
    t->pp_comm_s = pp_fill < span - steady ? pp_fill : (span > steady ? span - steady : 0);
    t->bubble_s = span - steady - t->pp_comm_s;
    if (t->bubble_s < 0)
        t->bubble_s = 0;
    t->pp_comm_s += x->mcount * x->pp_mb[worst];   /* inside steady */
    t->dp_comm_s = (done - span) + x->param_exp + x->mcount * x->dp_mb[worst];
    if (x->s->zero >= 3)
        t->dp_comm_s += steady - (t->compute_s + t->recompute_s + t->tp_comm_s + t->cp_comm_s +
                                  t->ep_comm_s);
    if (t->dp_comm_s < 0)
        t->dp_comm_s = 0;
    t->optimizer_s = x->opt;
    t->overhead_s = x->overhead;
    t->compute_s = cost_cap_time(t->compute_s);
    t->recompute_s = cost_cap_time(t->recompute_s);
    t->tp_comm_s = cost_cap_time(t->tp_comm_s);
    t->cp_comm_s = cost_cap_time(t->cp_comm_s);
    t->ep_comm_s = cost_cap_time(t->ep_comm_s);
    t->pp_comm_s = cost_cap_time(t->pp_comm_s);
    t->bubble_s = cost_cap_time(t->bubble_s);
    t->dp_comm_s = cost_cap_time(t->dp_comm_s);
    t->optimizer_s = cost_cap_time(t->optimizer_s);
}

/* Throughput and MFU from the step time. */
static void eval_rates(const eval_state *x)
{
    evaluation *out = x->out;
    double tokens = (double)x->s->gbs * x->s->seq_len;
    double mf;
    eval_memo *memo = x->across;
    if (memo == NULL) {
        mf = model_flops_per_step(x->m, x->s->gbs, x->s->seq_len);
    } else {   /* the run's, the same for every candidate: found once */
        if (memo->flops_gbs != x->s->gbs || memo->flops_seq != x->s->seq_len) {
            memo->flops = model_flops_per_step(x->m, x->s->gbs, x->s->seq_len);
            memo->flops_gbs = x->s->gbs;
            memo->flops_seq = x->s->seq_len;
        }
        mf = memo->flops;
    }
    int gpus = out->gpus > 0 ? out->gpus : 1;
    out->tokens_per_s = tokens / out->step_time_s;
    out->tokens_per_s_per_gpu = out->tokens_per_s / gpus;
    out->tflops_per_gpu = mf / out->step_time_s / gpus / 1e12;
    out->mfu = x->peak_flops > 0 ? mf / out->step_time_s / x->peak_flops : 0;
    if (!isfinite(out->mfu) || out->mfu < 0)
        out->mfu = 0;
    if (out->mfu > 1)   /* only with inputs beyond physics (peaks ~0) */
        out->mfu = 1;
}

/* Feasible when every stage fits its GPU's usable memory; else the first
 * that does not, as the reason. */
static void eval_feasible(const eval_state *x)
{
    evaluation *out = x->out;
    const cluster *c = x->c;
    out->feasible = true;
    for (int i = 0; i < x->pp; i++) {
        const memory_breakdown *mb = &out->stage_memory[i];
        if (mb->total_bytes > mb->capacity_bytes) {
            int g = x->s->stage[i].group >= 0 && x->s->stage[i].group < c->n_groups
                        ? x->s->stage[i].group : 0;
            int mg[STAGE_MIX_MAX], mn[STAGE_MIX_MAX];
            int n = strategy_stage_members(x->s, i, mg, mn, STAGE_MIX_MAX);
            for (int j = 1; j < n; j++)   /* spanning groups: the smallest memory */
                if (mg[j] >= 0 && mg[j] < c->n_groups &&
                    c->group[mg[j]].gpu.usable_mem_bytes < c->group[g].gpu.usable_mem_bytes)
                    g = mg[j];
            out->feasible = false;
            if (x->across == NULL || x->across->reasons)
                snprintf(out->reason, sizeof out->reason,
                         "stage %d needs %.1f GiB, %s has %.1f GiB usable", i,
                         mb->total_bytes / GIB, c->group[g].gpu.name,
                         mb->capacity_bytes / GIB);
            break;
        }
    }
    out->binding = out->feasible ? binding_of(&out->time) : "memory";
}

/* The step's parts after the pipeline: the optimizer, the exposed
 * parameter gather and the host overhead. */
static double eval_after_pipeline(const eval_state *x)
{
    return cost_cap_time(x->opt) + cost_cap_time(x->param_exp) + x->overhead;
}

void evaluate_bound(const model *m, const cluster *c, const cost_params *p,
                    const strategy *s, evaluation *out)
{
    evaluate_bound_with(m, c, p, s, out, NULL);
}

void evaluate_bound_with(const model *m, const cluster *c, const cost_params *p,
                         const strategy *s, evaluation *out, eval_memo *memo)
{
    eval_state x;
    double steady = 0;
    eval_init(&x, m, c, p, s, out, memo);
    for (int i = 0; i < x.pp; i++) {
        eval_rank(&x, i);
        if (x.mcount * (x.fwd[i] + x.bwd[i]) > steady)
            steady = x.mcount * (x.fwd[i] + x.bwd[i]);
    }
    out->step_time_s = cost_cap_time(steady + eval_after_pipeline(&x));
    if (!(out->step_time_s > 0))
        out->step_time_s = 1e-9;
    eval_rates(&x);
    eval_feasible(&x);
}

/* evaluate_schedule() with a memo across evaluations (or NULL). */
static void evaluate_memo(const model *m, const cluster *c, const cost_params *p,
                          const strategy *s, evaluation *out, cost_schedule *sched,
                          eval_memo *memo)
{
    eval_state x;
    double span, done = 0;
    int worst = 0;

    eval_init(&x, m, c, p, s, out, memo);
    for (int i = 0; i < x.pp; i++)
        eval_rank(&x, i);
    span = eval_schedule(&x, sched);
    for (int i = 0; i < x.pp; i++) {
        double d = x.rank_end[i] + x.grad_exp[i];
        if (d > done)
            done = d;
        if (x.fwd[i] + x.bwd[i] > x.fwd[worst] + x.bwd[worst])
            worst = i;
    }
    out->step_time_s = cost_cap_time(done + eval_after_pipeline(&x));
    if (!(out->step_time_s > 0))
        out->step_time_s = 1e-9;
    eval_breakdown(&x, worst, span, done);
    eval_rates(&x);
    eval_feasible(&x);
}

void evaluate_schedule(const model *m, const cluster *c, const cost_params *p,
                       const strategy *s, evaluation *out, cost_schedule *sched)
{
    evaluate_memo(m, c, p, s, out, sched, NULL);
}

void evaluate_with(const model *m, const cluster *c, const cost_params *p,
                   const strategy *s, evaluation *out, eval_memo *memo)
{
    evaluate_memo(m, c, p, s, out, NULL, memo);
}
