/* memory.c: per-GPU memory of a pipeline stage.
 *
 * Model states: bytes per parameter from Megatron's distributed-optimizer
 * documentation (zero 0/1) and ZeRO (stages 2/3), see memory.h; routed
 * experts' states shard over their expert-data-parallel group.
 * memory_stage() is the one stage-memory formula: evaluate() and the placer
 * (the partitioner's per-layer terms) both call it.  Activations:
 * per layer from transformer.c (Korthikanti et al. 2022 with flash
 * attention), times the micro-batches in flight under the schedule, plus the
 * transient working set (fp32 logits on the last stage, one layer's full
 * activations while recomputing; a layer's CP and all-to-all buffers in
 * place of the loss's where larger, layer_cost.c
 * cost_range_transient_bytes).  Reserve: a fixed amount for NCCL buffers
 * and workspaces on top of the catalog's usable memory (which already leaves
 * 2 GiB for the CUDA context) plus a fragmentation fraction of activations.
 * Uneven virtual chunks (the embedding or the loss counted as a layer): the
 * peak is followed through the schedule's order (memory_inflight_chunks).
 * Software stacks hold memory their own way (inputs/stack.h stack_memory):
 * torchtitan's op-level selective checkpointing, its eager cross-entropy on
 * upcast logits and FSDP2's gathered root and blocks are implemented here
 * from their source (memory.h says which file each follows), and
 * torch.distributed.pipelining's per-micro-batch stage buffers
 * (memory_pipe_buffers_bytes), and the whole V x h gradient of its
 * row-wise TP-sharded embedding (memory_fsdp2_embedding_grad_bytes,
 * memory_fsdp2_embedding_bwd_bytes).
 * Invariant: every figure is >= 0 and grows with its inputs.
 */
#include "cost/compute.h"
#include "cost/layer_cost.h"
#include "cost/memory.h"

double memory_main_grad_bytes(precision prec, bool grads_bf16)
{
    if (prec == PREC_FP16)
        return 2.0;
    return grads_bf16 && prec != PREC_FP32 ? 2.0 : 4.0;
}

double memory_optimizer_bytes(precision prec, int opt_state)
{
    double moments = opt_state == OPT_STATE_BF16 ? 4.0 : 8.0;
    if (prec == PREC_FP32)
        return 8.0;
    if (opt_state == OPT_STATE_FP32)
        return 12.0;
    /* the moments and the main weights: their 16-bit remainders where the
     * parameters are bf16 (FP8 with delayed scaling keeps bf16 ones), fp32
     * otherwise */
    return moments + (prec == PREC_BF16 || prec == PREC_FP8 ? 2.0 : 4.0);
}

void memory_state_bytes(precision prec, bool grads_bf16, int opt_state, int zero, int dp,
                        state_bytes *out)
{
    double d = dp > 0 ? dp : 1;
    double w, g = memory_main_grad_bytes(prec, grads_bf16), g_shardable;
    double opt = memory_optimizer_bytes(prec, opt_state);
    switch (prec) {
    case PREC_FP16: w = 2; g_shardable = 4; break;
    case PREC_FP32: w = 4; g_shardable = 0; break;
    default:        w = 2; g_shardable = 0; break;
    }
    if (zero <= 0) {
        out->weights = w;
        out->grads = g + g_shardable;
        out->optimizer = opt;
    } else if (zero == 1) {
        out->weights = w;
        out->grads = g;
        out->optimizer = (opt + g_shardable) / d;
    } else if (zero == 2) {
        /* Megatron-FSDP optim_grads: the 16-bit weights replicated, the
         * main gradients (their dtype: fp32 for bf16) and the fp32 main
         * weights and moments sharded */
        out->weights = w;
        out->grads = g / d;
        out->optimizer = opt / d;
    } else if (prec == PREC_FP32) {
        out->weights = w / d;
        out->grads = g / d;
        out->optimizer = opt / d;
    } else {
        out->weights = 2.0 / d;
        out->grads = 2.0 / d;
        out->optimizer = opt / d;
    }
}

double memory_grad_transient_bytes(const stack_spec *st, precision prec, bool grads_bf16,
                                   int zero, int dp, int vpp, double params)
{
    double bytes = memory_main_grad_bytes(prec, grads_bf16), held;
    if (stack_buckets_in_param_dtype(st))
        bytes = precision_16bit_bytes(prec);   /* the 16-bit gradients */
    held = 2.0 * cost_dp_bucket_params(st, dp, zero, bytes);
    if (stack_zero2_whole_chunks(st, vpp) > 0 && params / vpp > held)
        held = params / vpp;   /* a later chunk's one bucket */
    if (zero != 2 || dp <= 1)
        return 0;
    return (params < held ? params : held) * bytes;
}

double memory_inflight(stack_pipe pipe, int pp, int vpp, int microbatches, int rank)
{
    /* the warm-up's chunks and the steady state's first forward, as whole
     * stages: at most the m micro-batches */
    double f = (stack_pipe_warmup(pipe, pp, vpp, microbatches, rank) + 1.0) / (vpp > 1 ? vpp : 1);
    if (f > microbatches)
        f = microbatches;
    return f < 1 ? 1 : f;
}

/* A place in a rank's forward (or backward) sequence: micro-batch i of
 * chunk c of group g. */
typedef struct pipe_pos {
    int i, c, g;
} pipe_pos;

/* The chunk (counted in the forward order) of the operation at *d, and *d
 * moved to the next one: stack_pipe_chunk's groups (pp micro-batches, the
 * last one the rest; vpp chunks each) followed op by op without its
 * divisions, the chunk it gives each operation's number. */
static int pipe_chunk_next(pipe_pos *d, int pp, int vpp, int microbatches)
{
    int c = d->c, gs = microbatches - d->g * pp < pp ? microbatches - d->g * pp : pp;
    if (++d->i < gs)
        return c;
    d->i = 0;
    if (++d->c == vpp) {
        d->c = 0;
        d->g++;
    }
    return c;
}

double memory_schedule_peak_bytes(stack_pipe pipe, int pp, int vpp, int microbatches, int rank,
                                  const double *chunk_act_bytes, const schedule_held *acc)
{
    int n, warm, j, nf = 0, nb = 0, end, gs;
    pipe_pos fpos = {0, 0, 0}, bpos = {0, 0, 0};
    double held = 0, peak = 0;
    if (pp < 1)
        pp = 1;
    if (vpp < 1)
        vpp = 1;
    if (microbatches < 1)
        microbatches = 1;
    n = microbatches * vpp;
    gs = microbatches < pp ? microbatches : pp;   /* the first group's size */
    warm = stack_pipe_warmup(pipe, pp, vpp, microbatches, rank);
    end = warm + 4 * pp * vpp + 2;   /* the warm-up and two steady groups */
    if (end > 2 * n || acc != NULL)  /* what accumulates: the whole step */
        end = 2 * n;
    for (j = 0; j < end; j++) {
        bool fwd = stack_pipe_op(j, warm, n, NULL);
        double at;
        if (fwd) {
            held += chunk_act_bytes[pipe_chunk_next(&fpos, pp, vpp, microbatches)];
            nf++;
            at = held;
        } else {
            int c = vpp - 1 - pipe_chunk_next(&bpos, pp, vpp, microbatches);
            double before = held;
            held -= chunk_act_bytes[c];
            if (acc != NULL && acc->grad_bytes != NULL && nb < vpp * gs && nb % gs == 0)
                held += acc->grad_bytes[c];   /* the chunk's first backward */
            if (acc != NULL && rank == pp - 1 && c == vpp - 1)
                held += acc->kept_output_bytes;
            if (acc != NULL && (rank > 0 || c > 0))   /* not the first stage */
                held += acc->kept_input_grad_bytes;
            at = (held > before ? held : before) +
                 (acc != NULL && acc->transient_bytes != NULL ? acc->transient_bytes[c] : 0);
            nb++;
        }
        if (at > peak)
            peak = at;
    }
    return peak;
}

double memory_inflight_chunks(stack_pipe pipe, int pp, int vpp, int microbatches, int rank,
                              const double *chunk_act_bytes)
{
    return memory_schedule_peak_bytes(pipe, pp, vpp, microbatches, rank, chunk_act_bytes, NULL);
}

double memory_pipe_kept_output_bytes(stack_pipe kind, int pp, precision prec, double tokens,
                                     double vocab, int tp)
{
    if (kind != STACK_PIPE_TORCH || pp <= 1)
        return 0;
    return tokens * vocab / (tp > 0 ? tp : 1) * precision_16bit_bytes(prec);
}

double memory_pipe_input_grad_bytes(stack_pipe kind, double boundary_bytes)
{
    return kind == STACK_PIPE_TORCH && boundary_bytes > 0 ? boundary_bytes : 0;
}

double memory_fsdp2_accum_grad_bytes(int pp, double params)
{
    return pp > 1 ? 4.0 * params : 0;
}

double memory_fsdp2_embedding_grad_bytes(stack_gather gather, int pp, int tp,
                                         double embed_params)
{
    if (gather != STACK_GATHER_FSDP2 || pp <= 1 || tp <= 1)
        return 0;
    return memory_fsdp2_accum_grad_bytes(pp, embed_params * (tp - 1));
}

double memory_fsdp2_embedding_bwd_bytes(stack_gather gather, int tp, double tokens,
                                        double vocab, double hidden)
{
    if (gather != STACK_GATHER_FSDP2 || tp <= 1)
        return 0;
    /* the output's gradient gathered to the whole sequence, the weight's
     * whole V x h gradient, the per-index fp32 partial sums */
    return 2.0 * tokens * hidden + 2.0 * vocab * hidden + 4.0 * tokens * hidden;
}

double memory_op_sac_bytes(const model *m, const layer_spec *l, double tokens, int tp, bool sp)
{
    double t = tp > 0 ? tp : 1, h = l->hidden;
    double qw = (double)l->heads * l->head_dim, kvw = (double)l->kv_heads * l->head_dim;
    double f = l->ffn_hidden;
    /* the block's mm outputs in order, 16-bit bytes per token */
    double mm[7] = {2.0 * qw / t, 2.0 * kvw / t, 2.0 * kvw / t, 2.0 * h, 2.0 * f / t, 2.0 * f / t,
                    2.0 * h};
    int n = activation_gated(m->act) ? 7 : 6;
    double kept = 2.0 * h / (sp ? t : 1.0) + 2.0 * qw / t + 4.0 * l->heads / t;
    if (n == 6)
        mm[5] = mm[6];   /* w1, w2: no gate */
    /* compiled: the FFN output (w2, the last mm) and its reduce-scatter
     * feed only the residual add, which the backward does not read */
    for (int i = 0; i < (m->torch_compile ? n - 1 : n); i += 2)
        kept += mm[i];   /* the 1st, 3rd, ... (mm_count odd) */
    if (sp && t > 1)
        kept += (m->torch_compile ? 1.0 : 2.0) * 2.0 * h / t;
    return kept * tokens;
}

double memory_loss_bytes(stack_loss kind, double tokens, double vocab, double hidden, int tp,
                         bool sp, bool compiled)
{
    double t = tp > 0 ? tp : 1;
    double logits = tokens * vocab / t;
    double per_logit = t > 1 ? 16.0 : (compiled ? 4.0 : 12.0);
    if (kind != STACK_LOSS_EAGER_UPCAST)
        return 4.0 * logits;
    return per_logit * logits + 8.0 * hidden * tokens / (sp ? t : 1.0) +
           (t > 1 ? 2.0 * hidden * tokens : 0);
}

#define ZERO3_MAX_PREFETCH_PARAMS 1e9

double memory_zero3_unit_params(double layer_params, double vocab_params)
{
    return layer_params > vocab_params ? layer_params : vocab_params;
}

double memory_gathered_weight_bytes(stack_gather gather, const gpu_spec *gpu, precision prec,
                                    int zero, int opt_state, bool fp8_gather)
{
    if (prec == PREC_FP32)
        return 4.0;
    if (gather == STACK_GATHER_FSDP2)
        return fp8_gather && prec == PREC_FP8 ? 1.0 : 2.0;
    return memory_fp8_weights_single(gpu, prec, zero, opt_state) ? 1.0 : 2.0;
}

double memory_zero3_gathered_bytes(stack_gather gather, precision prec, double layer_weight_bytes,
                                   int pp, int tp, double stage_params, double layer_params,
                                   double vocab_params, double root_params)
{
    double unit, cap = ZERO3_MAX_PREFETCH_PARAMS / (tp > 0 ? tp : 1);
    double root_bytes = precision_16bit_bytes(prec);
    if (gather == STACK_GATHER_FSDP2)
        return memory_fsdp2_unsharded_bytes(prec, layer_weight_bytes, root_params, layer_params,
                                            stage_params, pp);
    unit = memory_zero3_unit_params(layer_params, vocab_params);
    return (layer_params >= vocab_params ? layer_weight_bytes : root_bytes) *
           (unit + (unit < cap ? unit : cap));
}

bool memory_zero3_gathers(int zero, int dp)
{
    return zero >= 3 && dp > 1;
}

double memory_fsdp2_unsharded_bytes(precision prec, double layer_weight_bytes, double root_params,
                                    double block_params, double stage_params, int pp)
{
    const double root = precision_16bit_bytes(prec) * root_params;
    const double block = layer_weight_bytes * block_params;
    /* the copy-in stream's all-gather outputs: the one kept for the next
     * copy-out (the root's first) and the next one's */
    const double pool = (root > block ? root : block) + block;
    if (pp > 1)   /* the blocks at their gathered dtype, the root 16-bit;
                     the last group's reduce-scatter input, in the reduce
                     dtype, kept through the next step */
        return layer_weight_bytes * (stage_params - root_params) + root +
               memory_fsdp2_accum_grad_bytes(pp, stage_params) +
               memory_fsdp2_accum_grad_bytes(pp, block_params) + pool;
    return root + block + pool;
}

double memory_pipe_buffers_bytes(stack_pipe kind, double boundary_bytes, int microbatches,
                                 double inflight, int pp, int vpp, int rank)
{
    double m = microbatches > 0 ? microbatches : 1;
    double f = inflight < m ? inflight : m;
    int v = vpp > 1 ? vpp : 1;
    int not_first = v - (rank == 0), not_last = v - (rank == pp - 1);
    if (kind != STACK_PIPE_TORCH || boundary_bytes <= 0 || pp <= 1)
        return 0;
    if (f < 0)
        f = 0;
    return boundary_bytes * (not_last * (m + f) + not_first * (m - f));
}

bool memory_fp8_primary_weights(precision prec, int zero, int opt_state)
{
    return (prec == PREC_FP8 || prec == PREC_MXFP8) && zero >= 1 &&
           opt_state != OPT_STATE_FP32_REM;
}

bool memory_fp8_weights_single(const gpu_spec *gpu, precision prec, int zero, int opt_state)
{
    return prec == PREC_FP8 && memory_fp8_primary_weights(prec, zero, opt_state) &&
           compute_fp8_any_layout(gpu);
}

double memory_fp8_weight_cache_bytes(const stack_spec *st, const gpu_spec *gpu, precision prec,
                                     int zero, int opt_state)
{
    if (!stack_fp8_te(st) || (prec != PREC_FP8 && prec != PREC_MXFP8) ||
        memory_fp8_primary_weights(prec, zero, opt_state))
        return 0;
    /* the FP8 weight, and its transpose where the GEMMs need one (Hopper);
     * MXFP8 a row-wise and a column-wise copy everywhere */
    return prec == PREC_FP8 && compute_fp8_any_layout(gpu) ? 1.0 : 2.0;
}

void memory_stage(const stage_memory_in *in, memory_breakdown *out)
{
    state_bytes sb;
    memory_state_bytes(in->prec, in->grads_bf16, in->opt_state, in->zero, in->dp, &sb);
    if (in->fp8_weights_single)
        sb.weights /= 2;   /* the FP8 weight without its transpose */
    if (in->expert_params > 0 && in->params > 0) {
        /* expert states sharded over edp, the rest over dp */
        state_bytes dense = sb, ex;
        double fe = in->expert_params / in->params;
        memory_state_bytes(in->prec, in->grads_bf16, in->opt_state, in->zero, in->edp, &ex);
        if (in->fp8_weights_single)
            ex.weights /= 2;
        sb.weights = (1.0 - fe) * dense.weights + fe * ex.weights;
        sb.grads = (1.0 - fe) * dense.grads + fe * ex.grads;
        sb.optimizer = (1.0 - fe) * dense.optimizer + fe * ex.optimizer;
    }
    out->weights_bytes = in->params * sb.weights +
                         (in->params - in->vocab_params) * in->fp8_cache_bytes;
    out->grads_bytes = in->params * sb.grads + in->grad_transient_bytes;
    out->optimizer_bytes = in->params * sb.optimizer;
    out->activations_bytes = in->act_bytes * in->inflight + in->extra_bytes;
    out->reserve_bytes = in->reserve_bytes + in->frag_fraction * out->activations_bytes;
    out->total_bytes = out->weights_bytes + out->grads_bytes + out->optimizer_bytes +
                       out->activations_bytes + out->reserve_bytes;
    out->capacity_bytes = in->capacity_bytes;
}
