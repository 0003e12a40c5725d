/* memory.h: bytes per GPU on a pipeline stage (memory.c). */
#ifndef PLANNER_MEMORY_H
#define PLANNER_MEMORY_H

#include "inputs/catalog.h"
#include "inputs/model.h"
#include "inputs/stack.h"
#include "model/strategy.h"

/* Model-state bytes per parameter on one GPU. */
typedef struct state_bytes {
    double weights, grads, optimizer;
} state_bytes;

/* Megatron mixed precision with Adam (distributed-optimizer docs):
 *   zero 0   (optimizer: memory_optimizer_bytes) bf16 2 + 4 + 12 = 18,
 *            fp16 2 + 2 + 16 = 20, fp32 4 + 4 + 8 = 16
 *   zero 1   (distributed optimizer) the optimizer part / dp: bf16 6 + 12/d,
 *            fp16 4 + 16/d, fp32 8 + 8/d
 * zero 2   Megatron-FSDP --data-parallel-sharding-strategy optim_grads:
 *            the 16-bit weights replicated (w), the main gradients in their
 *            dtype (memory_main_grad_bytes) and the optimizer sharded:
 *            bf16 2 + 4/d + 12/d, fp16 2 + 2/d + 12/d, fp32 4 + 4/d + 8/d
 *            (core_v0.15.0 megatron/core/distributed/fsdp/src/megatron_fsdp/
 *            param_and_grad_buffer.py: main_grad_buffer fp32 when
 *            grad_reduce_in_fp32, distributed; model weights not
 *            distributed but for optim_grads_params); plus the unsharded
 *            gradient buckets in flight, memory_grad_transient_bytes()
 * zero 3   (Rajbhandari et al., DeepSpeed layout 2 + 2 + 12 for 16-bit
 *            training, as the SC21 ZeRO-3 runs it is checked on): weights,
 *            grads and optimizer / d.
 * FP8 recipes: 2 bytes of weights per parameter -- with FP8 primary
 * weights (NeMo / Megatron-Bridge fp8_param(_gather)) the FP8 weight and its
 * FP8 transpose that Transformer Engine keeps for the backward GEMM (1 + 1
 * byte), with bf16 weights their 2 bytes (TE's cached FP8 copies beside
 * them are memory_fp8_weight_cache_bytes', added by memory_stage) -- but 1 byte for per-tensor
 * FP8 primary weights (PREC_FP8, zero >= 1: memory_fp8_primary_weights) on
 * a GPU whose FP8 GEMMs take any layout, where TE keeps no
 * transpose (stage_memory_in.fp8_weights_single, memory_fp8_weights_single).
 * MXFP8 keeps a row-wise and a column-wise copy on every GPU: 2. */
void memory_state_bytes(precision prec, bool grads_bf16, int opt_state, int zero, int dp,
                        state_bytes *out);

/* Adam's state per parameter before sharding: fp32 main weights and two
 * fp32 moments, 12 (fp32 models: the two moments, 8); with opt_state
 * OPT_STATE_BF16 the moments in bf16 (2 + 2) and the main weights as
 * Megatron-Core's precision-aware optimizer keeps them (core_v0.15.0
 * optimizer/__init__.py: TE FusedAdam with store_param_remainders, default
 * True in optimizer_config.py; distrib_optimizer.py allocates the
 * "master_param" state as int16 under bf16): the 16 low bits of the fp32
 * main weight beside the bf16 parameter, 2 -- 6 for bf16 models and
 * per-tensor FP8 (delayed scaling: use_precision_aware_optimizer_no_fp8_or_
 * ds_fp8 lets TE keep the main weights); MXFP8/NVFP4 (Megatron-Core keeps
 * fp32 main weights itself: 4 + 4) and fp16 (remainders need bf16
 * parameters: TE keeps fp32 main weights) 8.  With OPT_STATE_FP32_REM
 * the moments in fp32 (4 + 4) and the main weights' 16-bit remainders, 10
 * for bf16 models and per-tensor FP8 on bf16 parameters (12 otherwise):
 * NeMo 24.07's distributed Adam with the default fp32 optim.dtype on a
 * bf16 model (megatron_amp_O2) -- NeMo r2.0.0rc1 megatron_base_model.py
 * setup_optimization passes store_params False and store_param_remainders
 * True to Apex's DistributedFusedAdam when the optimizer dtype is fp32, the
 * model's bf16 and fp8_params is off ("store bits required to reconstruct
 * FP32 params", apex/contrib/optimizers/distributed_fused_adam.py), and
 * Megatron-Core's --use-precision-aware-optimizer with its fp32 default
 * moments (store_param_remainders as above).  NeMo 24.07's distributed
 * Adam with optim.dtype bf16 holds less, 2 + 2 = 4: Apex DistributedFused-
 * Adam keeps its state in that dtype, and setup_optimization sets
 * store_params False where it equals the model's (no main-weight copy);
 * counted here as Megatron's 6 (an over-count of 2/d a parameter on such
 * a run). */
double memory_optimizer_bytes(precision prec, int opt_state);

/* Bytes per parameter of the main gradients Megatron accumulates and
 * reduces: fp16 models 2 (fp16 grads); bf16 models and the FP8 recipes 4
 * (fp32: Megatron turns --accumulate-allreduce-grads-in-fp32 on with
 * --bf16, core_v0.15.0 megatron/training/arguments.py validate_args), or 2
 * with grads_bf16 (--grad-reduce-in-bf16; Megatron-Core's DDP config
 * grad_reduce_in_fp32 = False: _ParamAndGradBuffer allocates the gradient
 * buffer in the parameters' dtype, core_v0.15.0 megatron/core/distributed/
 * distributed_data_parallel.py, so the buffer, the accumulation and the
 * reduce are all bf16); fp32 models 4. */
double memory_main_grad_bytes(precision prec, bool grads_bf16);

/* ZeRO-2 (Megatron-FSDP optim_grads): the unsharded main-gradient buckets
 * a GPU holding `params` parameters keeps while their reduce-scatter runs --
 * the bucket the backward fills and the one being reduced, 2 x max(40M, 1M x
 * dp) parameters, or stack st's bucket (cost_dp_bucket_params: DeepSpeed's
 * reduce_bucket_size; NULL: Megatron's; the buckets hold no more than the
 * GPU's parameters) in the main gradients' dtype (DeepSpeed's in the
 * parameters' 16 bits: stack_buckets_in_param_dtype), allocated per micro-batch
 * from the temporary bucket allocator and freed after each reduce-scatter;
 * with vpp > 1 virtual stages at least one chunk's params / vpp, the single
 * bucket of chunks 2..vpp (core_v0.15.0 training.py get_model wraps them
 * with disable_bucketing; evaluate.c rank_zero2_grads), where the stack
 * has such chunks (stack_zero2_whole_chunks).
 * 0 for other stages or dp 1.  (Megatron-FSDP may queue up to
 * suggested_RS_queue_capacity = 1e9 elements of pending reduces when the
 * network lags the backward: not counted.) */
double memory_grad_transient_bytes(const stack_spec *st, precision prec, bool grads_bf16,
                                   int zero, int dp, int vpp, double params);

/* Micro-batches of a whole stage's activations held at once by pipeline rank
 * `rank` (0-based) under the stack's schedule `pipe`: its warm-up
 * (stack_pipe_warmup, inputs/stack.h) and the steady state's first forward,
 * in chunks, divided by vpp, at most m: 1F1B min(pp - rank, m); interleaved
 * min(((pp - rank - 1) 2 + (vpp - 1) pp + 1) / vpp, m) -- rank 0 holds
 * pp (1 + (pp - 1)/(pp vpp)) (Megatron theoretical_memory_usage.py) -- or
 * m where the warm-up runs all forwards first (Megatron-LM before
 * core_r0.10.0 at m == pp). */
double memory_inflight(stack_pipe pipe, int pp, int vpp, int microbatches, int rank);

/* Peak activation bytes held by pipeline rank `rank` under the interleaved
 * schedule when its vpp chunks keep different amounts (chunk_act_bytes[c]:
 * one micro-batch of chunk c): rank r runs its warm-up forwards, then one
 * forward and one backward alternately, then the remaining backwards
 * (stack_pipe_op, stack_pipe_chunk: the order pipeline.c simulates); each
 * forward adds its chunk's activations, each backward frees them.  The
 * running maximum over the warm-up and the first steady groups (the
 * pattern repeats per group).  Equal chunks: memory_inflight() x their sum.
 * `pipe`: the stack's schedule, whose warm-up (stack_pipe_warmup) the
 * pipeline simulation runs too. */
double memory_inflight_chunks(stack_pipe pipe, int pp, int vpp, int microbatches, int rank,
                              const double *chunk_act_bytes);

/* What PyTorch's stacks accumulate on a rank during the step, per model
 * chunk c of the rank (bytes on one GPU; NULL / 0 for none), for
 * memory_schedule_peak_bytes():
 *   grad_bytes[c]: the unsharded gradients FSDP2 accumulates for chunk c
 *     under pipelining (memory_fsdp2_accum_grad_bytes), allocated by the
 *     chunk's first backward of the step -- FSDPParam.
 *     to_accumulated_grad_if_needed upcasts the first micro-batch's
 *     gradient at the block's post_backward, later ones are added to it --
 *     and freed after the last backward's reduce-scatter: they appear while
 *     that backward frees the chunk's activations, and a chunk whose
 *     backwards come later (an interleaved rank's first chunk) has none
 *     during the warm-up;
 *   kept_output_bytes: each micro-batch's output of the pipeline's last
 *     stage (its logits), kept after its backward until the next step
 *     (memory_pipe_kept_output_bytes), on the last rank;
 *   transient_bytes[c]: chunk c's working set (cost_range_transient_bytes:
 *     the recompute of a layer, the loss on the pipeline's last chunk),
 *     counted with what is held while one of its backwards runs, instead
 *     of with the rank's peak whatever runs then;
 *   kept_input_grad_bytes: the gradient each backward of a chunk that is not
 *     the pipeline's first stage leaves on its input, kept until the next
 *     step (memory_pipe_input_grad_bytes). */
typedef struct schedule_held {
    const double *grad_bytes;
    double kept_output_bytes;
    const double *transient_bytes;
    double kept_input_grad_bytes;
} schedule_held;

/* The schedule walk of memory_inflight_chunks() over the whole step with
 * what `acc` accumulates (NULL: memory_inflight_chunks() itself): after
 * each forward the held activations, around each backward the larger of
 * what is held before and after it (its activations freed, the chunk's
 * gradients and the last stage's kept output added) plus the chunk's
 * working set.  The running maximum. */
double memory_schedule_peak_bytes(stack_pipe pipe, int pp, int vpp, int microbatches, int rank,
                                  const double *chunk_act_bytes, const schedule_held *acc);

/* One micro-batch's output the pipeline's last stage keeps after its
 * backward (STACK_PIPE_TORCH; 0 for Megatron's schedules, which free it):
 * torch.distributed.pipelining of torch 2.5-2.6 (stage.py, the torch of
 * torchtitan's Dec 2024 benchmark) appends every forward_one_chunk output
 * to output_chunks for the schedule's returned merge, cleared only by
 * clear_runtime_states when the next step() starts; on the last stage the
 * output is the logits, `tokens` x vocab / tp per GPU (loss parallel's
 * vocabulary shard; torchtitan 9dec370 model.py returns them in the
 * parameters' 16 bits), 2 B each (fp32 models 4): m of them after the
 * step's last backward.  (That torch kept every stage's outputs so; the
 * other stages' add one boundary per micro-batch beyond the in-flight ones
 * memory_pipe_buffers_bytes counts, after the warm-up: not counted.  Later
 * torch keeps the last stage's only when the schedule returns them.)  0 at
 * pp 1, which runs no pipeline schedule. */
double memory_pipe_kept_output_bytes(stack_pipe kind, int pp, precision prec, double tokens,
                                     double vocab, int tp);

/* The gradient one micro-batch's backward leaves on a pipeline stage's
 * input (STACK_PIPE_TORCH, every stage but the first; 0 for Megatron's
 * schedules, which send the input's gradient and free it), `boundary_bytes`
 * one micro-batch's activations crossing a stage boundary
 * (cost_boundary_bytes): torch.distributed.pipelining of torch 2.5-2.6
 * (stage.py) makes each micro-batch's activation receive buffer a leaf that
 * requires grad, stage_backward runs torch.autograd.backward and reads the
 * gradient from the buffer's .grad to send it, and only
 * clear_runtime_states at the next step() sets the buffers' .grad to None:
 * one per backward so far stays. */
double memory_pipe_input_grad_bytes(stack_pipe kind, double boundary_bytes);

/* FSDP2's unsharded fp32 gradients accumulated under pipelining (pp > 1;
 * memory_fsdp2_unsharded_bytes), 4 B per parameter of `params`; 0 at pp 1,
 * where each block's gradients are reduce-scattered in its backward. */
double memory_fsdp2_accum_grad_bytes(int pp, double params);

/* The accumulated gradient of torchtitan's row-wise TP-sharded token
 * embedding beyond its shard, on the first pipeline stage (FSDP2, pp > 1,
 * tp > 1): torchtitan 9dec370 parallelize_llama.py apply_tp shards
 * tok_embeddings with RowwiseParallel (weight Shard(0) over tp); DTensor
 * has no row-wise rule for the embedding's backward (torch/distributed/
 * tensor/_ops/_embedding_ops.py embedding_dense_backward_strategy, torch
 * 2.4 to 2.11: replicate, column-wise, batch-sharded and partial only;
 * Redistribute.backward turns the output's partial into Replicate), so the
 * weight's gradient is the whole V x h on every TP rank, and FSDP2's
 * FSDPParam.to_accumulated_grad_if_needed upcasts that DTensor as it is to
 * the fp32 reduce dtype; it is redistributed to the parameter's Shard(0)
 * only when the last backward's reduce reads it (_get_grad_inner_tensor,
 * PR #136237, Sep 2024).  `embed_params`: the embedding's parameters per
 * GPU (V x h / tp); 4 B x (tp - 1) x that, 6.85 GiB at Llama 3.1 405B
 * tp 8 (measured: tests/data/allocator-runs.json's 405B first-stage rows
 * hold it from the first backward to the last). */
double memory_fsdp2_embedding_grad_bytes(stack_gather gather, int pp, int tp,
                                         double embed_params);

/* The working set of that embedding's backward (FSDP2, tp > 1; any pp),
 * `tokens` one micro-batch's on this GPU, the vocabulary and hidden
 * width: Redistribute.backward all-gathers the output's gradient to the
 * whole sequence (Replicate, 2 B x tokens x h); embedding_dense_backward
 * runs on it with the replicated indices and returns the whole V x h
 * gradient (2 B); past 3072 indices ATen's embedding_backward_cuda_kernel
 * (aten/src/ATen/native/cuda/EmbeddingBackwardKernel.cu, read at
 * 01b9dc5) sums each run of equal indices into grad_weight_per_segment,
 * allocated at {numel, stride} in the fp32 accumulation type because the
 * segment count stays on the device (4 B x tokens x h, whatever the data).
 * 6.9 GiB at Llama 3.1 405B, 32,768 tokens; it runs after the stage's
 * layers' backwards (cost_range_transient_bytes takes the larger).
 * Measured: the 1-layer 405B first-stage emulation (bench/gpu/alloc_gap.py
 * q_405b_first, 4,096 tokens) peaks about 4.1 GiB over its held memory
 * where this gives 4.3. */
double memory_fsdp2_embedding_bwd_bytes(stack_gather gather, int tp, double tokens,
                                        double vocab, double hidden);

/* torchtitan's op-level selective activation checkpointing (stack memory
 * kind STACK_SEL_OP_POLICY; torchtitan 9dec370 torchtitan/parallelisms/
 * parallelize_llama.py _apply_ac_to_transformer_block, selective_ac_option
 * "op"): each transformer block runs under torch.utils.checkpoint with a
 * policy that saves (MUST_SAVE) the outputs of aten.mm except every second
 * one counted from the block's start, of SDPA (flash or efficient) and of
 * reduce_scatter_tensor, and recomputes the rest; the checkpoint keeps its
 * input.  Bytes one dense block keeps per micro-batch of `tokens` tokens on
 * one GPU, 16-bit outputs (a Float8 linear's mm returns 16 bits):
 *   input 2 h / (sp ? t : 1);
 *   the mm outputs in the block's order (torchtitan models/llama/model.py:
 *     wq, wk, wv, wo, w1, [w3 if gated], w2), the 1st, 3rd, 5th and 7th
 *     saved: the column-parallel ones 2 width / t, the row-parallel wo and
 *     w2 2 h (their partial sums before the reduce, full width);
 *   SDPA: its output 2 q / t and the fp32 logsumexp 4 heads / t;
 *   with SP at t > 1 the two reduce-scatter outputs, 2 h / t each.
 * Llama 3.1 8B (h 4096, q 4096, kv 1024, f 14336, 32 heads), t 1, per token:
 * 8192 + 8192 (wq) + 2048 (wv) + 28672 (w1) + 8192 (w2) + 8192 + 128 (SDPA)
 * = 63,616 B (a layer without recompute keeps 147,456 B by Korthikanti's
 * count, transformer.c).  With the blocks under torch.compile
 * (model.torch_compile; torchtitan 9dec370 apply_compile compiles each
 * block, its checkpoint inside the graph) AOTAutograd's partitioner keeps
 * only the saved values the backward reads (torch/_functorch/partitioners.py
 * _extract_fwd_bwd_modules drops saved values with no user in the backward
 * graph; MUST_SAVE only bans their recomputation, solve_min_cut), where
 * eager SAC caches every MUST_SAVE output (torch/utils/checkpoint.py
 * _CachingTorchDispatchMode): the FFN's last mm (w2) and, with SP at t > 1,
 * its reduce-scatter feed only the residual add that ends the block, whose
 * backward reads nothing, so their outputs are not kept: 2 h (+ 2 h / t)
 * less -- Llama 3.1 8B 55,424 B.  MoE layers are not covered (the caller
 * keeps Megatron's selective for them). */
double memory_op_sac_bytes(const model *m, const layer_spec *l, double tokens, int tp, bool sp);

/* The loss's working set on the last stage, one micro-batch of `tokens`
 * tokens on one GPU, by the stack's loss kind:
 *   STACK_LOSS_FP32_LOGITS: the fp32 logits, 4 B x tokens x vocab / t;
 *   STACK_LOSS_EAGER_UPCAST (torchtitan 9dec370 train.py loss_fn:
 *     cross_entropy(pred.flatten(0, 1).float(), labels), `del pred` before
 *     backward): at t 1 the backward holds the saved fp32 log-softmax, the
 *     nll_loss gradient and the log_softmax gradient, 12 B per logit (the
 *     forward's bf16 logits + fp32 copy + log-softmax, 10 B, is less); at
 *     t > 1 PyTorch's loss_parallel (torch/distributed/tensor/parallel/
 *     loss.py): the forward's bf16 + fp32 copy + shifted + exp(shifted),
 *     14 B, the backward's saved log-softmax + zeros + exp(x) + their sum,
 *     16 B per logit.  Plus the final RMSNorm's saved tensors (torchtitan
 *     models/norms.py RMSNorm in eager: the fp32 input, the 16-bit
 *     normalized and output, 8 h / (sp ? t : 1) B per token) and at t > 1
 *     the output layer's all-gathered input (ColwiseParallel from Shard(1)),
 *     2 h per token.  `compiled` (model.loss_compiled: torchtitan from
 *     bbb1b616e, 2025-04, components/loss.py build_cross_entropy_loss
 *     wraps the same loss in torch.compile with training.compile; 9dec370
 *     had it commented out): at t 1 AOTAutograd's min-cut partitioner
 *     (torch/_functorch/partitioners.py min_cut_rematerialization_
 *     partition) saves the graph's bf16 input and the rows' log-sum-exp
 *     rather than the fp32 log-softmax, and Inductor fuses the upcast,
 *     softmax and gradient into kernels writing the bf16 gradient: 2 + 2 B
 *     per logit, 4 in all; at t > 1 loss_parallel's figures are kept (not
 *     modelled compiled). */
double memory_loss_bytes(stack_loss kind, double tokens, double vocab, double hidden, int tp,
                         bool sp, bool compiled);

/* The unit ZeRO-3 gathers at once on a stage (Megatron-FSDP's and
 * DeepSpeed's module at work, whose all-gather the rank waits for): the
 * larger of the stage's largest decoder layer (layer_params) and the
 * embedding / output matrix (vocab_params), in the caller's units (per
 * GPU, or on all TP ranks).  The one rule: memory_zero3_gathered_bytes()
 * sizes its buffers by it and evaluate() the exposed first gather and last
 * reduce-scatter. */
double memory_zero3_unit_params(double layer_params, double vocab_params);

/* ZeRO-3's gathered weights on one pipeline stage, per GPU: the one rule
 * evaluate() (a stage's exact figure) and the partitioner (its per-layer
 * terms: placement.c layer_memory) both call, so a split the partitioner
 * accepts is the split evaluate() accepts.  Parameter counts per GPU (after
 * tp): stage_params the stage's, layer_params its largest decoder layer's,
 * vocab_params the embedding matrix's (V x h / tp), root_params the root
 * module's it holds (the embedding, final norm and output layer on the end
 * stages), of stage_params.  Decoder-layer parameters are gathered at
 * layer_weight_bytes each (memory_gathered_weight_bytes), the embedding /
 * output matrices and the root in 16 bits (fp32 models 4).  By the stack's
 * way (stack_gather):
 *   STACK_GATHER_PREFETCH (Megatron-FSDP, DeepSpeed): the unit in use (the
 *     larger of layer_params and vocab_params) and the next one prefetched,
 *     the prefetch capped at ZeRO-3's 1e9 parameters (DeepSpeed's
 *     stage3_max_live_parameters default) over tp, at the unit's bytes:
 *       bytes x (unit + min(unit, 1e9 / tp));
 *   STACK_GATHER_FSDP2: as below.
 * Additive in stage_params (and root_params) and monotone in the rest, so a
 * stage's figure is the sum of its layers' stage_params terms plus the
 * largest of their layer_params terms. */
double memory_zero3_gathered_bytes(stack_gather gather, precision prec, double layer_weight_bytes,
                                   int pp, int tp, double stage_params, double layer_params,
                                   double vocab_params, double root_params);

/* Bytes per decoder-layer parameter ZeRO-3 gathers (all-gathers and holds
 * unsharded) on one GPU: the parameters' 16 bits (fp32 models 4) but
 *   FP8 primary weights (Megatron-FSDP with --fp8-param-gather,
 *     memory_fp8_primary_weights): the FP8 weight (1 B) and the transpose
 *     Transformer Engine makes of it on Hopper (1 B), 1 where it keeps none
 *     (memory_fp8_weights_single);
 *   FSDP2 (STACK_GATHER_FSDP2): param_dtype bf16, 2; 1 with `fp8_gather`
 *     in an FP8 model: under torchao's float8 training torchtitan casts each
 *     Float8Linear weight to FP8 before the all-gather
 *     (--float8.enable_fsdp_float8_all_gather, docs/float8.md; set in
 *     train_configs/llama3_405b.toml: model.fsdp_fp8_gather) and holds the
 *     gathered FP8 data (torchao WeightWithDynamicFloat8CastTensor
 *     fsdp_post_all_gather wraps it in a Float8Tensor), 1 B, only where
 *     FSDP shards over data parallelism (torchtitan 9dec370 float8.py:
 *     parallel_dims.dp_shard_enabled): the caller passes
 *     model.fsdp_fp8_gather && dp > 1. */
double memory_gathered_weight_bytes(stack_gather gather, const gpu_spec *gpu, precision prec,
                                    int zero, int opt_state, bool fp8_gather);

/* Whether ZeRO-`zero` gathers weights at all: stage 3 over more than one
 * data-parallel rank (dp x cp). */
bool memory_zero3_gathers(int zero, int dp);

/* FSDP2's unsharded parameters on one GPU (STACK_GATHER_FSDP2;
 * torch.distributed.fsdp fully_shard with MixedPrecisionPolicy param_dtype
 * bf16, as torchtitan 9dec370 apply_fsdp wraps it): at pp 1 the root module
 * (embedding, final norm, output: "for the root, do not reshard after
 * forward", torch/distributed/_composable/fsdp/_fsdp_state.py
 * FSDPState._lazy_init, now under torch/distributed/fsdp/_fully_shard/)
 * stays gathered through the step, and
 * one block is gathered while the next is prefetched:
 *   root_bytes x root_params + layer_weight_bytes x block_params + pool,
 * root_bytes 2 (param_dtype bf16), 4 for an fp32 model, layer_weight_bytes
 * memory_gathered_weight_bytes'; pool the all-gather outputs, which
 * foreach_all_gather allocates on the all_gather_copy_in_stream (so in that
 * stream's blocks of the caching allocator, which the default stream never
 * reuses, and which torchtitan's max_reserved counts) and
 * FSDPParamGroup.wait_for_unshard keeps in comm_ctx.all_gather_state in
 * forward, freed by the next group's wait_for_unshard after that group's
 * all-gather has allocated its own (torch 2.5-2.6 _fsdp_param_group.py,
 * "Overlapping all-gather copy-in and all-gather"): two at once, the
 * root's (first) or a block's with the next block's,
 *   max(root_bytes x root_params, layer_weight_bytes x block_params)
 *     + layer_weight_bytes x block_params
 * (the 16-bit copy of the local shard the copy-in makes, 1/dp of a block,
 * not counted);
 * with pipelining torchtitan sets reshard_after_forward=False (no
 * all-gather per micro-batch): the whole stage stays gathered, and its
 * gradients accumulate unsharded over the micro-batches in fp32 (torch/
 * distributed/pipelining/stage.py backward_maybe_with_nosync turns
 * requires_gradient_sync and reshard_after_backward off for every backward
 * but the last; FSDP2's FSDPParam.to_accumulated_grad_if_needed upcasts each
 * unsharded gradient to the reduce dtype, torchtitan's
 * mixed_precision_reduce float32, to accumulate it):
 *   layer_weight_bytes x (stage_params - root_params)
 *     + root_bytes x root_params + 4 x stage_params + 4 x block_params + pool
 * (the pool filled once, by the step's first micro-batch; 4 x stage_params
 * memory_fsdp2_accum_grad_bytes, which evaluate() follows through the
 * schedule instead, memory_schedule_peak_bytes).  4 x block_params: the
 * reduce-scatter input of the stage's last FSDP group, kept through the
 * next step -- torch's PipelineStage of Dec 2024 (torch 1963fc8, the
 * benchmark's; stage.py backward_maybe_with_nosync, from PR #134052) runs
 * every backward with FSDP's gradient sync and resharding off, then calls
 * each group's post_backward in forward order after the last one
 * (run_post_backward) but not the root's _root_post_backward_final_
 * callback (added by PR #144535, Jan 2025), the only place that drops
 * comm_ctx.reduce_scatter_state at the end of a backward; each group's
 * post_backward drops the previous group's, and foreach_reduce
 * (_fsdp_collectives.py) returns the fp32 reduce-scatter input it
 * allocated on the default stream to be kept there, so the last block's
 * (a block's parameters at the reduce dtype) stays referenced until the
 * next step's first post_backward.  (With vpp model chunks each chunk's
 * root keeps its own, as each has its own all-gather pool: one counted.)
 * Parameter counts per GPU (after tp). */
double memory_fsdp2_unsharded_bytes(precision prec, double layer_weight_bytes, double root_params,
                                    double block_params, double stage_params, int pp);

/* The per-micro-batch buffers a pipeline stage of the stack keeps on one
 * GPU (STACK_PIPE_TORCH; 0 for STACK_PIPE_MEGATRON), `boundary_bytes` one
 * micro-batch's activations crossing a stage boundary (cost_boundary_bytes).
 * torch.distributed.pipelining (torch 2.5-2.6, stage.py, the torch of
 * torchtitan's Dec 2024 benchmark): _prepare_backward_infra allocates a
 * gradient receive buffer for every micro-batch of the step
 * (_create_grad_recv_info: _make_tensor_from_meta of each output) on every
 * stage but the last, and _prepare_forward_infra an activation receive
 * buffer for every micro-batch on every stage but the first; they persist
 * across steps.  forward_one_chunk keeps the stage's output in fwd_cache
 * (output_tuple, with the inputs) until backward_one_chunk pops it, after
 * the send.  A received buffer in flight is the first layer's input, held
 * with the activations already.  Per model chunk of the rank:
 *   not the pipeline's last:  (m + f) x boundary_bytes
 *   not the pipeline's first: (m - f) x boundary_bytes
 * m micro-batches per step, f = min(inflight, m) in flight (the rank's
 * memory_inflight).  Rank `rank` of pp holds vpp chunks (stages rank,
 * rank + pp, ...): one per chunk, the pipeline's first only on rank 0, its
 * last only on rank pp - 1; 0 at pp 1.  The one rule evaluate() and the
 * partitioner (placement.c, vpp 1) call.  The input gradients autograd
 * accumulates into the receive buffers' .grad (cleared by
 * clear_runtime_states after the step) appear as activations are freed,
 * after the warm-up's peak: not counted. */
double memory_pipe_buffers_bytes(stack_pipe kind, double boundary_bytes, int microbatches,
                                 double inflight, int pp, int vpp, int rank);

/* What a pipeline stage holds on one GPU: the inputs of memory_stage(). */
typedef struct stage_memory_in {
    precision prec;
    int zero;                   /* 0..3 (1: distributed optimizer) */
    int dp;                     /* ranks the dense states shard over */
    int edp;                    /* ranks the routed experts' states shard
                                   over: the expert-data-parallel group,
                                   tp cp dp / ep (strategy_expert_dp) */
    double params;              /* parameters held by one GPU */
    double expert_params;       /* of which routed-expert parameters */
    double act_bytes;           /* activations kept, one micro-batch */
    double inflight;            /* micro-batches of activations held at once */
    double extra_bytes;         /* transient working set */
    double reserve_bytes;       /* fixed reserve (cost_params.reserve_bytes) */
    double frag_fraction;       /* allocator fragmentation, x activations */
    double capacity_bytes;      /* usable memory of the GPU */
    double grad_transient_bytes;   /* gradient buckets in flight
                                      (memory_grad_transient_bytes) */
    bool grads_bf16;            /* main gradients in bf16 (memory_main_grad_bytes) */
    bool fp8_weights_single;    /* FP8 primary weights without a transpose
                                   copy: 1 byte each (memory_fp8_weights_single) */
    int opt_state;              /* Adam's state dtype (memory_optimizer_bytes) */
    double fp8_cache_bytes;     /* per parameter, unsharded: Transformer
                                   Engine's cached quantized weights beside
                                   bf16 primary weights
                                   (memory_fp8_weight_cache_bytes) */
    double vocab_params;        /* of params, the embedding and output
                                   matrices: no such cache */
} stage_memory_in;

/* Whether an FP8 recipe's weights are FP8 primary weights (Megatron-LM
 * --fp8-param-gather, which the emitted launch sets where this holds): the
 * FP8 recipes (PREC_FP8, PREC_MXFP8) under the distributed optimizer or
 * Megatron-FSDP (zero >= 1); Megatron-LM's validate_args refuses the flag
 * without them ("--fp8-param-gather only supported with distributed
 * optimizer, ..."), so with zero 0 the weights stay bf16.  Not with
 * opt_state OPT_STATE_FP32_REM either: the 16-bit remainders are the low
 * half of an fp32 main weight whose high half is the bf16 parameter (TE
 * FusedAdam store_param_remainders "works only when param type is BF16";
 * NeMo r2.0.0rc1 setup_optimization sets store_params True, no remainders,
 * with fp8_params), so such a run keeps bf16 parameters. */
bool memory_fp8_primary_weights(precision prec, int zero, int opt_state);

/* Per-tensor FP8 primary weights need no FP8 transpose beside them on this
 * GPU (compute_fp8_any_layout): Megatron-Bridge's FP8 recipes gather FP8
 * parameters (megatron/bridge/training/mixed_precision.py
 * bf16_with_fp8_current_scaling_mixed and the delayed-scaling one:
 * fp8_param_gather = True), Megatron-Core keeps them in its uint8 parameter
 * buffer (param_and_grad_buffer.py), and Transformer Engine's
 * Float8Quantizer / Float8CurrentScalingQuantizer allocate the column-wise
 * copy only where !nvte_is_non_tn_fp8_gemm_supported()
 * (transformer_engine/pytorch/csrc/quantizer.cpp).  Only with FP8 primary
 * weights (memory_fp8_primary_weights: zero >= 1). */
bool memory_fp8_weights_single(const gpu_spec *gpu, precision prec, int zero, int opt_state);

/* Bytes per parameter of the quantized weight copies Transformer Engine
 * keeps beside bf16 primary weights through the step (an FP8 recipe,
 * PREC_FP8 or PREC_MXFP8, without memory_fp8_primary_weights), on a stack
 * whose linear layers are TE modules that cache them
 * (stack_fp8_te): Megatron-Core's TELinear, TELayerNormColumn-
 * ParallelLinear and TEGroupedLinear pass is_first_microbatch to TE unless
 * --disable-parameter-transpose-cache (core_v0.15.0 megatron/core/
 * extensions/transformer_engine.py), and TE's Linear then quantizes the
 * weight once per step into its "weight" workspace and keeps it in
 * self._fp8_workspaces (TE v1.8 module/base.py get_fp8_workspace with
 * with_transpose under grad: the FP8 weight and its FP8 transpose; v2.x
 * linear.py quantize_weight with cache_weight, the quantizer set to row-
 * and column-wise usage when the input needs a gradient).  Per parameter:
 * per-tensor FP8 1 + 1 (the transpose) where the FP8 GEMMs need TN layouts
 * (Hopper), 1 where they take any layout (compute_fp8_any_layout: the
 * column-wise usage reuses the row-wise data, Float8Quantizer in
 * transformer_engine/pytorch/csrc/quantizer.cpp); MXFP8 a row-wise and a
 * column-wise copy, 1 + 1 (their 1/32 scales not counted, as for MXFP8
 * primary weights).  Unsharded: each GPU caches its own TP shard.  0 with
 * FP8 primary weights (the weight is quantized already: its transpose is
 * memory_state_bytes'), for 16-bit recipes and on other stacks (torchao's
 * Float8Linear under pytorch-fsdp2 casts per forward).  Counted on a
 * stage's parameters but the embedding and the output layer (not TE
 * modules: stage_memory_in.vocab_params). */
double memory_fp8_weight_cache_bytes(const stack_spec *st, const gpu_spec *gpu, precision prec,
                                     int zero, int opt_state);

/* The stage-memory formula, the only place it is written (evaluate() calls
 * it per stage, the placer per layer for the partitioner's terms):
 *   weights, grads, optimizer = params x memory_state_bytes(zero, dp), the
 *     weights + (params - vocab_params) x fp8_cache_bytes (TE's cached FP8
 *     weights), the
 *     expert share (expert_params / params) at memory_state_bytes(zero, edp)
 *     (the distributed optimizer shards expert states over their own group);
 *     grads + grad_transient_bytes;
 *   activations = act_bytes x inflight + extra_bytes;
 *   reserve = reserve_bytes + frag_fraction x activations. */
void memory_stage(const stage_memory_in *in, memory_breakdown *out);

#endif
