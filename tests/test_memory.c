/* test_memory.c: model-state bytes per parameter (Megatron distributed
 * optimizer docs, ZeRO) and micro-batches in flight under 1F1B and
 * interleaving (Megatron theoretical_memory_usage.py). */
#include <math.h>
#include "cost/memory.h"
#include "testutil.h"

/* Model-state bytes per parameter (memory_state_bytes: weights, gradients
 * and optimizer) with main gradients in bf16 or not and Adam state
 * opt_state. */
static double state_total(precision p, bool grads_bf16, int opt_state, int zero, int dp)
{
    state_bytes sb;
    memory_state_bytes(p, grads_bf16, opt_state, zero, dp, &sb);
    return sb.weights + sb.grads + sb.optimizer;
}

/* The same with fp32 main gradients and Adam state. */
static double total(precision p, int zero, int dp)
{
    return state_total(p, false, OPT_STATE_FP32, zero, dp);
}

/* Per-parameter bytes by precision and one more setting (`arg`: the bf16
 * flag or the opt_state) from one of memory.c's rules, against a table. */
typedef struct {
    precision prec;
    int arg;
    double bytes;
} bytes_case;

static void assert_bytes(double (*rule)(precision, int), const bytes_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ck_assert_rel(rule(cases[i].prec, cases[i].arg), cases[i].bytes, 1e-15);
}

static double main_grad_bytes(precision p, int bf16)
{
    return memory_main_grad_bytes(p, bf16 != 0);
}

START_TEST(bytes_per_param_megatron)
{
    /* bf16: 18, distributed optimizer 6 + 12/d; fp16: 20 vs 4 + 16/d;
     * fp32: 16 vs 8 + 8/d */
    ck_assert_rel(total(PREC_BF16, 0, 8), 18.0, 1e-15);
    ck_assert_rel(total(PREC_BF16, 1, 8), 6.0 + 12.0 / 8, 1e-15);
    ck_assert_rel(total(PREC_FP16, 0, 4), 20.0, 1e-15);
    ck_assert_rel(total(PREC_FP16, 1, 4), 4.0 + 16.0 / 4, 1e-15);
    ck_assert_rel(total(PREC_FP32, 0, 2), 16.0, 1e-15);
    ck_assert_rel(total(PREC_FP32, 1, 2), 8.0 + 8.0 / 2, 1e-15);
    /* dp 1: the distributed optimizer shards nothing */
    ck_assert_rel(total(PREC_BF16, 1, 1), 18.0, 1e-15);
}
END_TEST

START_TEST(bytes_per_param_zero)
{
    state_bytes sb;
    /* ZeRO-2 = Megatron-FSDP optim_grads: bf16 weights replicated (2), the
     * fp32 main grads (4, grad_reduce_in_fp32) and fp32 main weights +
     * Adam moments (12) sharded: 2 + 16/d (was 2 + 14/d, DeepSpeed's
     * 16-bit grads); fp16 keeps fp16 main grads: 2 + 14/d; fp32 4 + 12/d */
    ck_assert_rel(total(PREC_BF16, 2, 16), 2.0 + 16.0 / 16, 1e-15);
    memory_state_bytes(PREC_BF16, false, OPT_STATE_FP32, 2, 16, &sb);
    ck_assert_rel(sb.grads, 4.0 / 16, 1e-15);
    ck_assert_rel(total(PREC_FP8, 2, 8), 2.0 + 16.0 / 8, 1e-15);
    ck_assert_rel(total(PREC_FP16, 2, 16), 2.0 + 14.0 / 16, 1e-15);
    ck_assert_rel(total(PREC_FP32, 2, 4), 4.0 + 12.0 / 4, 1e-15);
    /* ZeRO-3 as DeepSpeed ran it (SC21): 2 + 2 + 12 sharded */
    ck_assert_rel(total(PREC_BF16, 3, 16), 16.0 / 16, 1e-15);
    memory_state_bytes(PREC_BF16, false, OPT_STATE_FP32, 3, 64, &sb);
    ck_assert_rel(sb.weights, 2.0 / 64, 1e-15);
    /* a higher stage never needs more */
    ck_assert(total(PREC_BF16, 1, 8) >= total(PREC_BF16, 2, 8));
    ck_assert(total(PREC_BF16, 2, 8) >= total(PREC_BF16, 3, 8));
    ck_assert(total(PREC_BF16, 0, 8) >= total(PREC_BF16, 1, 8));
}
END_TEST

/* --grad-reduce-in-bf16 (Megatron-Core DDP grad_reduce_in_fp32 off): the
 * main-gradient buffer is allocated in the parameters' dtype, so a bf16 or
 * FP8-recipe model keeps 2 B of gradients per parameter, not 4: zero 0
 * 2 + 2 + 12 = 16, distributed optimizer 4 + 12/d, ZeRO-2 2 + 14/d; fp16
 * and fp32 models are unchanged (fp16 grads already; the rule refuses the
 * flag there), ZeRO-3 keeps its 16-bit layout. */
START_TEST(bytes_per_param_bf16_grads)
{
    static const bytes_case grads[] = {
        {PREC_BF16, true, 2.0}, {PREC_FP8, true, 2.0}, {PREC_BF16, false, 4.0},
        {PREC_FP16, true, 2.0}, {PREC_FP32, true, 4.0},
    };
    state_bytes sb;
    assert_bytes(main_grad_bytes, grads, sizeof grads / sizeof grads[0]);
    ck_assert_rel(state_total(PREC_BF16, true, OPT_STATE_FP32, 0, 8), 16.0, 1e-15);
    memory_state_bytes(PREC_MXFP8, true, OPT_STATE_FP32, 1, 8, &sb);
    ck_assert_rel(sb.grads, 2.0, 1e-15);
    ck_assert_rel(state_total(PREC_MXFP8, true, OPT_STATE_FP32, 1, 8), 4.0 + 12.0 / 8, 1e-15);
    ck_assert_rel(state_total(PREC_BF16, true, OPT_STATE_FP32, 2, 16), 2.0 + 14.0 / 16, 1e-15);
    ck_assert_rel(state_total(PREC_BF16, true, OPT_STATE_FP32, 3, 16), 16.0 / 16, 1e-15);
    /* ZeRO-2's buckets in flight in bf16: 2 x 40M x 2 B */
    ck_assert_rel(memory_grad_transient_bytes(NULL, PREC_BF16, true, 2, 8, 1, 1e9), 2 * 40e6 * 2,
                  1e-15);
}
END_TEST

/* Adam's state per parameter (opt_state): fp32 main weights and moments
 * 4 + 4 + 4 = 12 (fp32 models 8); bf16 moments (--exp-avg-dtype bf16
 * --exp-avg-sq-dtype bf16) with the main weights' 16-bit remainders beside
 * bf16 parameters (TE FusedAdam store_param_remainders): 2 + 2 + 2 = 6 for
 * bf16 and per-tensor FP8 models; 4 + 2 + 2 = 8 where the main weights stay
 * fp32 (MXFP8/NVFP4: Megatron-Core's own fp32 copy; fp16 parameters).
 * fp32 moments with the remainders (opt_state fp32_rem, NeMo 24.07's
 * distributed Adam on a bf16 model): 4 + 4 + 2 = 10, 4 + 4 + 4 = 12 where
 * the main weights stay fp32.
 * Sharded by the distributed optimizer: bf16 at d 8, 2 + 4 + 6/8; fp32_rem
 * at d 4, 2 + 4 + 10/4. */
START_TEST(bytes_per_param_opt_state)
{
    static const bytes_case opt[] = {
        {PREC_BF16, OPT_STATE_FP32, 12.0},      {PREC_FP8, OPT_STATE_FP32, 12.0},
        {PREC_FP32, OPT_STATE_FP32, 8.0},       {PREC_BF16, OPT_STATE_BF16, 6.0},
        {PREC_FP8, OPT_STATE_BF16, 6.0},        {PREC_MXFP8, OPT_STATE_BF16, 8.0},
        {PREC_NVFP4, OPT_STATE_BF16, 8.0},      {PREC_FP16, OPT_STATE_BF16, 8.0},
        {PREC_BF16, OPT_STATE_FP32_REM, 10.0},  {PREC_FP8, OPT_STATE_FP32_REM, 10.0},
        {PREC_MXFP8, OPT_STATE_FP32_REM, 12.0}, {PREC_FP16, OPT_STATE_FP32_REM, 12.0},
        {PREC_FP32, OPT_STATE_FP32_REM, 8.0},
    };
    state_bytes sb;
    assert_bytes(memory_optimizer_bytes, opt, sizeof opt / sizeof opt[0]);
    memory_state_bytes(PREC_FP8, true, OPT_STATE_FP32_REM, 1, 4, &sb);
    ck_assert_rel(sb.weights, 2.0, 1e-15);
    ck_assert_rel(sb.grads, 2.0, 1e-15);
    ck_assert_rel(sb.optimizer, 10.0 / 4, 1e-15);
    memory_state_bytes(PREC_BF16, false, OPT_STATE_BF16, 1, 8, &sb);
    ck_assert_rel(sb.weights, 2.0, 1e-15);
    ck_assert_rel(sb.grads, 4.0, 1e-15);
    ck_assert_rel(sb.optimizer, 6.0 / 8, 1e-15);
    memory_state_bytes(PREC_BF16, false, OPT_STATE_FP32, 1, 8, &sb);
    ck_assert_rel(sb.optimizer, 12.0 / 8, 1e-15);
    /* fp16: the fp32 gradient copy (4) shards with the state, 4 + 2 + 2 */
    memory_state_bytes(PREC_FP16, false, OPT_STATE_BF16, 1, 4, &sb);
    ck_assert_rel(sb.optimizer, (8.0 + 4.0) / 4, 1e-15);
}
END_TEST

START_TEST(zero2_gradient_buckets)
{
    /* Megatron-FSDP optim_grads holds two unsharded main-gradient buckets
     * of max(40M, 1M x dp) parameters while reducing: bf16 -> fp32 4 B */
    memory_breakdown mb;
    ck_assert_rel(memory_grad_transient_bytes(NULL, PREC_BF16, false, 2, 8, 1, 1e9), 2 * 40e6 * 4,
                  1e-15);
    ck_assert_rel(memory_grad_transient_bytes(NULL, PREC_BF16, false, 2, 64, 1, 1e9), 2 * 64e6 * 4,
                  1e-15);
    ck_assert_rel(memory_grad_transient_bytes(NULL, PREC_FP16, false, 2, 8, 1, 1e9), 2 * 40e6 * 2,
                  1e-15);
    /* none for the distributed optimizer (its full fp32 buffer is the
     * grads), ZeRO-3 or a single rank */
    ck_assert(memory_grad_transient_bytes(NULL, PREC_BF16, false, 1, 8, 1, 1e9) == 0);
    ck_assert(memory_grad_transient_bytes(NULL, PREC_BF16, false, 3, 8, 1, 1e9) == 0);
    ck_assert(memory_grad_transient_bytes(NULL, PREC_BF16, false, 2, 1, 1, 1e9) == 0);
    /* vpp 4: chunks 2..4 are one bucket each (disable_bucketing), 1e9 / 4
     * parameters in fp32 held while it reduces; a small chunk keeps the two
     * buckets; a stack that buckets every chunk (FSDP2, per block) keeps
     * the two buckets at any vpp */
    const stack_spec *mcore = stack_get(STACK_MEGATRON_CORE);
    ck_assert_rel(memory_grad_transient_bytes(mcore, PREC_BF16, false, 2, 8, 4, 1e9), 250e6 * 4,
                  1e-15);
    ck_assert_rel(memory_grad_transient_bytes(mcore, PREC_BF16, false, 2, 8, 20, 1e9), 2 * 40e6 * 4,
                  1e-15);
    const stack_spec *fsdp2 = stack_get(STACK_PYTORCH_FSDP2);
    ck_assert_rel(memory_grad_transient_bytes(fsdp2, PREC_BF16, false, 2, 8, 4, 1e9), 2 * 40e6 * 4,
                  1e-15);
    /* the buckets hold no more than the stage's parameters */
    ck_assert_rel(memory_grad_transient_bytes(NULL, PREC_BF16, false, 2, 8, 1, 5e6), 5e6 * 4,
                  1e-15);
    /* each stack's own bucket (stack.c dp_bucket_params): DeepSpeed's ZeRO
     * reduce_bucket_size, 5e8 elements by default (deepspeed/runtime/zero/
     * config.py), at any dp; megatron-core and FSDP2 Megatron's rule; at
     * zero 0 torchtitan's DDP, torch DDP's bucket_cap_mb = 100 (replicate
     * in parallelize.py apply_ddp): 100 x 2^20 B of gradients, 26,214,400
     * fp32 ones, 52,428,800 bf16 ones (it was Megatron's 64 M at dp 64) */
    ck_assert_rel(cost_dp_bucket_params(stack_get(STACK_DEEPSPEED), 8, 1, 2), 5e8, 0);
    ck_assert_rel(cost_dp_bucket_params(stack_get(STACK_DEEPSPEED), 1024, 0, 2), 5e8, 0);
    ck_assert_rel(cost_dp_bucket_params(stack_get(STACK_MEGATRON_CORE), 8, 0, 4), 40e6, 0);
    ck_assert_rel(cost_dp_bucket_params(stack_get(STACK_MEGATRON_CORE), 64, 0, 4), 64e6, 0);
    ck_assert_rel(cost_dp_bucket_params(NULL, 8, 0, 4), 40e6, 0);
    ck_assert_rel(cost_dp_bucket_params(fsdp2, 64, 0, 4), 26214400, 0);
    ck_assert_rel(cost_dp_bucket_params(fsdp2, 64, 0, 2), 52428800, 0);
    ck_assert_rel(cost_dp_bucket_params(fsdp2, 64, 2, 4), 64e6, 0);
    /* DeepSpeed's two ipg buffers hold 16-bit gradients (stage_1_and_2.py
     * torch.empty(reduce_bucket_size, dtype=self.dtype)): 2 x 5e8 x 2 B for
     * a bf16 model, not its fp32 main gradients' 4; an fp32 model 4 */
    ck_assert_rel(memory_grad_transient_bytes(stack_get(STACK_DEEPSPEED), PREC_BF16, false, 2, 8,
                                              1, 1e10), 2 * 5e8 * 2, 1e-15);
    ck_assert_rel(memory_grad_transient_bytes(stack_get(STACK_DEEPSPEED), PREC_FP32, false, 2, 8,
                                              1, 1e10), 2 * 5e8 * 4, 1e-15);
    ck_assert(stack_buckets_in_param_dtype(stack_get(STACK_DEEPSPEED)) &&
              !stack_buckets_in_param_dtype(stack_get(STACK_MEGATRON_CORE)) &&
              !stack_buckets_in_param_dtype(stack_get(STACK_PYTORCH_FSDP2)) &&
              !stack_buckets_in_param_dtype(NULL));
    /* counted with the gradients: 1e9 params at dp 8, 4/8 B + 320 MB */
    stage_memory_in in = {PREC_BF16, 2, 8, 8, 1e9, 0, 0, 1, 0, 0, 0.1, 80e9,
                          memory_grad_transient_bytes(NULL, PREC_BF16, false, 2, 8, 1, 1e9), false,
                          false, OPT_STATE_FP32, 0, 0};
    memory_stage(&in, &mb);
    ck_assert_rel(mb.grads_bytes, 0.5e9 + 320e6, 1e-15);
    ck_assert_rel(mb.weights_bytes, 2e9, 1e-15);
    ck_assert_rel(mb.optimizer_bytes, 1.5e9, 1e-15);
    /* why the search's prunes may keep ZeRO-2 a family of its own: on a
     * small stage (50M parameters, dp 2) its one bucket in flight (the whole
     * stage's fp32 grads) outweighs what it shards: 2 + 4/2 + 12/2 B + 4 B
     * > ZeRO-1's 2 + 4 + 12/2 B per parameter */
    in.params = 50e6;
    in.dp = in.edp = 2;
    in.grad_transient_bytes =
        memory_grad_transient_bytes(NULL, PREC_BF16, false, 2, 2, 1, in.params);
    memory_stage(&in, &mb);
    {
        double z2 = mb.total_bytes;
        in.zero = 1;
        in.grad_transient_bytes =
            memory_grad_transient_bytes(NULL, PREC_BF16, false, 1, 2, 1, in.params);
        memory_stage(&in, &mb);
        ck_assert_rel(z2 - mb.total_bytes, 50e6 * 2.0, 1e-12);
    }
}
END_TEST

START_TEST(inflight_1f1b)
{
    /* rank r holds min(pp - r, m) micro-batches */
    ck_assert_rel(memory_inflight(STACK_PIPE_MEGATRON, 8, 1, 64, 0), 8.0, 1e-15);
    ck_assert_rel(memory_inflight(STACK_PIPE_MEGATRON, 8, 1, 64, 7), 1.0, 1e-15);
    ck_assert_rel(memory_inflight(STACK_PIPE_MEGATRON, 8, 1, 64, 3), 5.0, 1e-15);
    ck_assert_rel(memory_inflight(STACK_PIPE_MEGATRON, 8, 1, 4, 0), 4.0, 1e-15);
}
END_TEST

START_TEST(inflight_interleaved)
{
    /* rank 0: pp (1 + (pp - 1)/(pp vpp)) */
    ck_assert_rel(memory_inflight(STACK_PIPE_MEGATRON, 8, 3, 64, 0), 8.0 * (1 + 7.0 / 24), 1e-12);
    ck_assert_rel(memory_inflight(STACK_PIPE_MEGATRON, 4, 2, 16, 0), 4.0 * (1 + 3.0 / 8), 1e-12);
    /* interleaving never holds less than 1F1B */
    ck_assert(memory_inflight(STACK_PIPE_MEGATRON, 4, 2, 16, 3) >=
              memory_inflight(STACK_PIPE_MEGATRON, 4, 1, 16, 3));
    /* m == pp 8, vpp 2: Megatron runs all 8 forwards first on every rank;
     * PyTorch's ScheduleInterleaved1F1B warms its last rank up with (2 - 1)
     * x 8 + 0 = 8 chunk-forwards, then one steady: (8 + 1) / 2 = 4.5 whole
     * micro-batches; its rank 0 (8 + 14 = 22 > 16) holds all 8 too */
    ck_assert_rel(memory_inflight(STACK_PIPE_MEGATRON, 8, 2, 8, 7), 8.0, 1e-15);
    ck_assert_rel(memory_inflight(STACK_PIPE_TORCH, 8, 2, 8, 7), 4.5, 1e-15);
    ck_assert_rel(memory_inflight(STACK_PIPE_TORCH, 8, 2, 8, 0), 8.0, 1e-15);
    /* Megatron-Core dropped the m == pp case in core_r0.10.0 (4295be1a6c):
     * 2 (pp - 1 - r) + (v - 1) pp warm-up forwards, as PyTorch.  The
     * Megatron-LM functional test gpt3_7b_tp1_pp4_memory_speed (pp 4, vpp
     * 8, m 4): its last rank 28 + 1 chunk-forwards, 29 / 8 = 3.625 whole
     * micro-batches (4 before: +8.3% against its measured peak, +2.7%
     * with it, tests/data/memory-runs.json); rank 0 6 + 28 >= 32: all 4 */
    ck_assert_rel(memory_inflight(STACK_PIPE_MEGATRON_CORE, 8, 2, 8, 7), 4.5, 1e-15);
    ck_assert_rel(memory_inflight(STACK_PIPE_MEGATRON_CORE, 4, 8, 4, 3), 3.625, 1e-15);
    ck_assert_rel(memory_inflight(STACK_PIPE_MEGATRON_CORE, 4, 8, 4, 0), 4.0, 1e-15);
    /* the stacks: the current one is Megatron-Core's, 2021-2022 keep the case */
    ck_assert_int_eq(stack_find("megatron-core")->memory.pipe, STACK_PIPE_MEGATRON_CORE);
    ck_assert_int_eq(stack_find("megatron-lm-2021")->memory.pipe, STACK_PIPE_MEGATRON);
    ck_assert_int_eq(stack_find("megatron-lm-2022")->memory.pipe, STACK_PIPE_MEGATRON);
}
END_TEST

START_TEST(stage_breakdown_sums)
{
    memory_breakdown mb;
    stage_memory_in in = {PREC_BF16, 0, 1, 1, 1e9, 0, 1e8, 4, 5e7, 1e9, 0.1, 80e9, 0, false,
                          false, OPT_STATE_FP32, 0, 0};
    memory_stage(&in, &mb);
    ck_assert_rel(mb.weights_bytes, 2e9, 1e-15);
    ck_assert_rel(mb.grads_bytes, 4e9, 1e-15);
    ck_assert_rel(mb.optimizer_bytes, 12e9, 1e-15);
    ck_assert_rel(mb.activations_bytes, 4.5e8, 1e-15);
    ck_assert_rel(mb.reserve_bytes, 1e9 + 4.5e7, 1e-15);
    ck_assert_rel(mb.total_bytes, 18e9 + 4.5e8 + 1.045e9, 1e-15);
}
END_TEST

/* Routed experts' states shard over their expert-data-parallel group, the
 * rest over dp: bf16 with the distributed optimizer, dp 8, edp 2, half of
 * 1e9 parameters experts: 0.5e9 x (2 + 4 + 12/8) + 0.5e9 x (2 + 4 + 12/2)
 * = 3.75e9 + 6e9 bytes; optimizer 0.5e9 x 1.5 + 0.5e9 x 6 = 3.75e9. */
START_TEST(stage_expert_states_shard_over_edp)
{
    static const struct { int edp; double expert, optimizer, total; } cases[] = {
        {2, 0.5e9, 3.75e9, 9.75e9},   /* the example above */
        {8, 0.5e9, 1.5e9, 7.5e9},     /* edp = dp: no difference */
        {2, 0, 1.5e9, 7.5e9},         /* no experts: the dense figure */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memory_breakdown mb;
        stage_memory_in in = {PREC_BF16, 1, 8, cases[i].edp, 1e9, cases[i].expert,
                              0, 0, 0, 0, 0.1, 80e9, 0, false, false,
                              OPT_STATE_FP32, 0, 0};
        memory_stage(&in, &mb);
        ck_assert_rel(mb.weights_bytes + mb.grads_bytes, 6e9, 1e-15);
        ck_assert_rel(mb.optimizer_bytes, cases[i].optimizer, 1e-15);
        ck_assert_rel(mb.total_bytes, cases[i].total, 1e-15);
    }
}
END_TEST

/* torchtitan's op-level SAC (memory_op_sac_bytes), per token by hand:
 * Llama 3.1 8B (h 4096, 32 heads of 128, kv 8, f 14336), t 1: input 8192,
 * wq 8192, wv 2048, w1 28672, w2 8192 (the 1st, 3rd, 5th, 7th mm), SDPA
 * output 8192 + logsumexp 4 x 32 = 128: 63,616 B.  Llama 3.1 70B (h 8192,
 * 64 heads, kv 8, f 28672) at t 8 with SP: input 2048, wq 2048, wv 256,
 * w1 7168, w2 16384 (its partial sums, full width), SDPA 2048 + 32, the two
 * reduce-scatter outputs 4096: 34,080 B.  A GeLU MLP has 6 mms: wq, wv, w1
 * saved, w2 not: 8192 + 8192 + 2048 + 28672 + 8192 + 128 = 55,424 B.
 * Under torch.compile (model.torch_compile) the partitioner drops the saved
 * values the backward never reads: w2's output and, with SP, its
 * reduce-scatter's (the residual add's inputs): 8B 63,616 - 8,192 = 55,424 B;
 * 70B 34,080 - 16,384 - 2,048 = 15,648 B; the GeLU MLP kept no w2 output:
 * 55,424 B still. */
START_TEST(op_sac_bytes)
{
    model m = {0};
    layer_spec l8 = {4096, 32, 8, 128, 14336, false, 0, 0};
    layer_spec l70 = {8192, 64, 8, 128, 28672, false, 0, 0};
    m.act = ACT_SWIGLU;
    ck_assert_rel(memory_op_sac_bytes(&m, &l8, 16384, 1, false), 63616.0 * 16384, 1e-15);
    ck_assert_rel(memory_op_sac_bytes(&m, &l70, 131072, 8, true), 34080.0 * 131072, 1e-15);
    m.act = ACT_GELU;
    ck_assert_rel(memory_op_sac_bytes(&m, &l8, 1, 1, false), 55424.0, 1e-15);
    m.torch_compile = true;
    ck_assert_rel(memory_op_sac_bytes(&m, &l8, 1, 1, false), 55424.0, 1e-15);
    m.act = ACT_SWIGLU;
    ck_assert_rel(memory_op_sac_bytes(&m, &l8, 16384, 1, false), 55424.0 * 16384, 1e-15);
    ck_assert_rel(memory_op_sac_bytes(&m, &l70, 131072, 8, true), 15648.0 * 131072, 1e-15);
}
END_TEST

/* The loss's working set (memory_loss_bytes).  Megatron: 4 B per fp32
 * logit.  torchtitan, t 1, Llama 3.1 8B at 16,384 tokens: 12 B x 16384 x
 * 128256 logits + the final norm's 8 h = 32,768 B per token: 25,753,026,560
 * B.  t 8 with SP, Llama 3.1 70B at 131,072 tokens: 16 B x 131072 x 16032
 * = 33,621,540,864 + (8 x 8192 / 8 + 2 x 8192) x 131072 = 36,842,766,336 B.
 * The loss under torch.compile (torchtitan from bbb1b616e), t 1, the same
 * 8B micro-batch: 4 B x 16384 x 128256 + 32,768 x 16384 = 8,942,256,128 B;
 * at t 8 loss_parallel's eager figure stays. */
START_TEST(loss_bytes)
{
    ck_assert_rel(memory_loss_bytes(STACK_LOSS_FP32_LOGITS, 4096, 50000, 4096, 2, true, false),
                  4.0 * 4096 * 25000, 1e-15);
    ck_assert_rel(memory_loss_bytes(STACK_LOSS_EAGER_UPCAST, 16384, 128256, 4096, 1, false,
                                    false),
                  25753026560.0, 1e-15);
    ck_assert_rel(memory_loss_bytes(STACK_LOSS_EAGER_UPCAST, 131072, 128256, 8192, 8, true,
                                    false),
                  36842766336.0, 1e-15);
    ck_assert_rel(memory_loss_bytes(STACK_LOSS_EAGER_UPCAST, 16384, 128256, 4096, 1, false, true),
                  8942256128.0, 1e-15);
    ck_assert_rel(memory_loss_bytes(STACK_LOSS_EAGER_UPCAST, 131072, 128256, 8192, 8, true, true),
                  36842766336.0, 1e-15);
    /* Megatron's fused loss has no such switch */
    ck_assert_rel(memory_loss_bytes(STACK_LOSS_FP32_LOGITS, 4096, 50000, 4096, 2, true, true),
                  4.0 * 4096 * 25000, 1e-15);
}
END_TEST

/* FSDP2's gathered 16-bit weights: at pp 1 the root and the block in use
 * (Llama 3.1 8B: 1,050,677,248 root + 218,112,000 block parameters, 2 B:
 * 2,537,578,496 B) and the copy-in stream's all-gather outputs, the root's
 * kept while the first block's is gathered (the same 2,537,578,496 B):
 * 5,075,156,992 B; at pp > 1 the whole stage, its 16-bit weights and fp32
 * accumulated gradients (1e9 parameters: 6e9 B), the last block's fp32
 * reduce-scatter input kept through the step (218,112,000 x 4 =
 * 872,448,000 B) and the same pool. */
START_TEST(fsdp2_unsharded)
{
    ck_assert_rel(memory_fsdp2_unsharded_bytes(PREC_BF16, 2, 1050677248.0, 218112000.0, 8e9, 1),
                  5075156992.0, 1e-15);
    ck_assert_rel(memory_fsdp2_unsharded_bytes(PREC_BF16, 2, 1050677248.0, 218112000.0, 1e9, 4),
                  6e9 + 872448000.0 + 2537578496.0, 1e-15);
    /* 1-byte blocks, the root 16-bit: at pp 4 0.2e9 root + 0.8e9 block
     * parameters: 0.8e9 + 0.4e9 + 4e9, the last block's reduce-scatter
     * input 0.4e9 x 4 = 1.6e9, and the pool: the root's 0.4e9 (not larger
     * than a block's 0.4e9) and a block's, 0.8e9 */
    ck_assert_rel(memory_fsdp2_unsharded_bytes(PREC_BF16, 1, 0.2e9, 0.4e9, 1e9, 4), 7.6e9, 1e-15);
}
END_TEST

/* torch.distributed.pipelining's per-micro-batch stage buffers, hand-
 * derived for Llama 3.1 405B at mbs 4 x 8192 tokens, tp 8: one boundary is
 * 32768 x 16384 x 2 B / 8 = 2^27 B.  First of pp 8 at m 8 (all 8 in
 * flight): 8 gradient receive buffers + 8 kept outputs = 16 x 2^27 = 2 GiB;
 * rank 1 (7 in flight): 8 + 7 outputs + 1 idle activation buffer = 16;
 * the last (1 in flight): 7 idle activation buffers; an interleaved last
 * rank (2 chunks, 8 in flight): 8 + 8 for its first chunk, none idle;
 * Megatron's schedules keep none. */
START_TEST(pipe_buffers)
{
    const double b = 134217728.0;
    ck_assert_rel(memory_pipe_buffers_bytes(STACK_PIPE_TORCH, b, 8, 8, 8, 1, 0), 2147483648.0,
                  1e-15);
    ck_assert_rel(memory_pipe_buffers_bytes(STACK_PIPE_TORCH, b, 8, 7, 8, 1, 1), 16 * b, 1e-15);
    ck_assert_rel(memory_pipe_buffers_bytes(STACK_PIPE_TORCH, b, 8, 1, 8, 1, 7), 7 * b, 1e-15);
    /* interleaved (vpp 2): the last rank's first chunk 8 + 8 and its last
     * chunk (the pipeline's last) its 0 idle activation buffers; rank 0's
     * second chunk (not the first) 16 + 0 idle, its first 16: 32 */
    ck_assert_rel(memory_pipe_buffers_bytes(STACK_PIPE_TORCH, b, 8, 8, 8, 2, 7), 16 * b, 1e-15);
    ck_assert_rel(memory_pipe_buffers_bytes(STACK_PIPE_TORCH, b, 8, 8, 8, 2, 0), 32 * b, 1e-15);
    /* rank 3 of 8 at vpp 2, 5 in flight: 2 x (8 + 5) + 2 x (8 - 5) */
    ck_assert_rel(memory_pipe_buffers_bytes(STACK_PIPE_TORCH, b, 8, 5, 8, 2, 3), 32 * b, 1e-15);
    ck_assert(memory_pipe_buffers_bytes(STACK_PIPE_TORCH, b, 8, 8, 1, 1, 0) == 0);
    ck_assert(memory_pipe_buffers_bytes(STACK_PIPE_MEGATRON, b, 8, 8, 8, 1, 0) == 0);
}
END_TEST

/* ZeRO-3's gathered weights, the one rule of evaluate() and the placer:
 * prefetch (Megatron-FSDP, DeepSpeed) holds the unit in use, the larger of
 * the layer (0.4e9 parameters per GPU) and the embedding matrix (0.26e9),
 * and a prefetched one capped at 1e9 / tp 8 = 0.125e9: 2 x 0.525e9 =
 * 1.05e9 B, whatever the stage's size; FSDP2 at pp 4 the whole stage at
 * 6 B (1e9: 6e9 B), additive, with two blocks' all-gather outputs (1.6e9 B)
 * and the last block's fp32 reduce-scatter input (1.6e9 B), and at pp 1
 * the root and a block and the all-gather outputs, the root's and a
 * block's (2 x (0.5e9 + 0.4e9) at 2 B: 3.6e9 B); nothing gathered at dp 1
 * or ZeRO < 3. */
START_TEST(zero3_gathered_one_rule)
{
    ck_assert_rel(memory_zero3_gathered_bytes(STACK_GATHER_PREFETCH, PREC_BF16, 2, 4, 8, 5e9, 0.4e9,
                                              0.26e9, 0), 1.05e9, 1e-15);
    ck_assert_rel(memory_zero3_gathered_bytes(STACK_GATHER_PREFETCH, PREC_BF16, 2, 4, 8, 1e9, 0.1e9,
                                              0.26e9, 0), 2.0 * (0.26e9 + 0.125e9), 1e-15);
    ck_assert_rel(memory_zero3_gathered_bytes(STACK_GATHER_FSDP2, PREC_BF16, 2, 4, 8, 1e9, 0.4e9,
                                              0.26e9, 0), 9.2e9, 1e-15);
    ck_assert_rel(memory_zero3_gathered_bytes(STACK_GATHER_FSDP2, PREC_BF16, 2, 4, 8, 0.5e9, 0, 0,
                                              0) +
                      memory_zero3_gathered_bytes(STACK_GATHER_FSDP2, PREC_BF16, 2, 4, 8, 0.5e9, 0,
                                                  0, 0), 6e9, 1e-15);
    ck_assert_rel(memory_zero3_gathered_bytes(STACK_GATHER_FSDP2, PREC_BF16, 2, 1, 8, 9e9, 0.4e9,
                                              0.26e9, 0.5e9), 3.6e9, 1e-15);
    ck_assert(memory_zero3_gathers(3, 2) && !memory_zero3_gathers(3, 1) &&
              !memory_zero3_gathers(2, 8));
    /* the unit, the one rule evaluate()'s exposed gather uses too: the
     * larger of the layer and the embedding matrix */
    ck_assert_double_eq(memory_zero3_unit_params(0.4e9, 0.26e9), 0.4e9);
    ck_assert_double_eq(memory_zero3_unit_params(0.1e9, 0.26e9), 0.26e9);
}
END_TEST

/* The bytes ZeRO-3 gathers a decoder-layer parameter in: FP8 primary
 * weights on B200 (per-tensor FP8, --fp8-param-gather, no transpose) 1 B,
 * where the rule counted 2; with their transpose on H100 2; MXFP8 2; bf16
 * 2; an fp32 model 4 (the rule counted 2); FSDP2 bf16 2.  Hand-derived, the
 * prefetch rule at tp 8 with a 0.4e9-parameter layer (the unit: larger
 * than the 0.26e9 embedding) and a prefetch capped at 0.125e9: 1 x 0.525e9
 * on B200 FP8, 4 x 0.525e9 for fp32; the embedding as the unit stays 16-bit
 * (0.1e9 layers: 2 x (0.26e9 + 0.125e9)). */
/* ZeRO-3's gathered bytes per parameter with fp32 Adam state */
#define GW(kind, gpu, prec) memory_gathered_weight_bytes(kind, gpu, prec, 3, OPT_STATE_FP32, false)

/* The first pipeline stage's row-wise TP-sharded embedding under FSDP2
 * (memory_fsdp2_embedding_grad_bytes): its accumulated fp32 gradient is
 * the whole V x h, (tp - 1) x its shard more -- Llama 3.1 405B at tp 8:
 * 128,256 x 16,384 / 8 = 262,668,288 parameters per GPU, 4 B x 7 x that =
 * 7,354,712,064 B (6.85 GiB, what the 405B first-stage emulations of
 * tests/data/allocator-runs.json hold beyond the model's from the first
 * backward on); nothing without accumulation (pp 1), at tp 1 or on
 * another stack's gather.  Its backward's working set
 * (memory_fsdp2_embedding_bwd_bytes) at 32,768 tokens: 2 x 32,768 x
 * 16,384 + 2 x 128,256 x 16,384 + 4 x 32,768 x 16,384 = 7,423,918,080 B. */
START_TEST(fsdp2_embedding_grad)
{
    const double shard = 128256.0 * 16384 / 8;
    ck_assert_double_eq(shard, 262668288.0);
    ck_assert_double_eq(memory_fsdp2_embedding_grad_bytes(STACK_GATHER_FSDP2, 8, 8, shard),
                        7354712064.0);
    ck_assert_double_eq(memory_fsdp2_embedding_grad_bytes(STACK_GATHER_FSDP2, 1, 8, shard), 0);
    ck_assert_double_eq(memory_fsdp2_embedding_grad_bytes(STACK_GATHER_FSDP2, 8, 1, shard), 0);
    ck_assert_double_eq(memory_fsdp2_embedding_grad_bytes(STACK_GATHER_PREFETCH, 8, 8, shard), 0);
    ck_assert_double_eq(memory_fsdp2_embedding_bwd_bytes(STACK_GATHER_FSDP2, 8, 32768, 128256,
                                                         16384),
                        7423918080.0);
    ck_assert_double_eq(memory_fsdp2_embedding_bwd_bytes(STACK_GATHER_FSDP2, 1, 32768, 128256,
                                                         16384),
                        0);
    ck_assert_double_eq(memory_fsdp2_embedding_bwd_bytes(STACK_GATHER_PREFETCH, 8, 32768, 128256,
                                                         16384),
                        0);
}
END_TEST

START_TEST(zero3_gathered_weight_bytes)
{
    const gpu_spec *h100 = catalog_find("H100-SXM"), *b200 = catalog_find("B200");
    ck_assert_ptr_nonnull(h100);
    ck_assert_ptr_nonnull(b200);
    ck_assert_double_eq(GW(STACK_GATHER_PREFETCH, b200, PREC_FP8), 1);
    ck_assert_double_eq(GW(STACK_GATHER_PREFETCH, h100, PREC_FP8), 2);
    ck_assert_double_eq(GW(STACK_GATHER_PREFETCH, b200, PREC_MXFP8), 2);
    ck_assert_double_eq(GW(STACK_GATHER_PREFETCH, b200, PREC_BF16), 2);
    ck_assert_double_eq(GW(STACK_GATHER_PREFETCH, h100, PREC_FP32), 4);
    ck_assert_double_eq(GW(STACK_GATHER_FSDP2, h100, PREC_FP8), 2);
    ck_assert_double_eq(GW(STACK_GATHER_FSDP2, h100, PREC_FP32), 4);
    /* torchao's FP8 all-gather (model.fsdp_fp8_gather, dp > 1): 1 B in an
     * FP8 model, nothing else moves */
    ck_assert_double_eq(memory_gathered_weight_bytes(STACK_GATHER_FSDP2, h100, PREC_FP8, 3,
                                                     OPT_STATE_FP32, true),
                        1);
    ck_assert_double_eq(memory_gathered_weight_bytes(STACK_GATHER_FSDP2, h100, PREC_BF16, 3,
                                                     OPT_STATE_FP32, true),
                        2);
    ck_assert_double_eq(memory_gathered_weight_bytes(STACK_GATHER_PREFETCH, h100, PREC_FP8, 3,
                                                     OPT_STATE_FP32, true),
                        2);
    ck_assert_rel(memory_zero3_gathered_bytes(STACK_GATHER_PREFETCH, PREC_FP8,
                                              memory_gathered_weight_bytes(
                                                  STACK_GATHER_PREFETCH, b200, PREC_FP8, 3,
                                                  OPT_STATE_FP32, false),
                                              4, 8, 5e9, 0.4e9, 0.26e9, 0),
                  0.525e9, 1e-15);
    ck_assert_rel(memory_zero3_gathered_bytes(STACK_GATHER_PREFETCH, PREC_FP32, 4, 4, 8, 5e9, 0.4e9,
                                              0.26e9, 0),
                  4 * 0.525e9, 1e-15);
    ck_assert_rel(memory_zero3_gathered_bytes(STACK_GATHER_PREFETCH, PREC_FP8, 1, 4, 8, 1e9, 0.1e9,
                                              0.26e9, 0),
                  2.0 * (0.26e9 + 0.125e9), 1e-15);
}
END_TEST

/* FP8 primary weights (Megatron-Bridge fp8_param_gather) on a GPU whose FP8
 * GEMMs take any layout keep no transpose: 1 byte a parameter on B200 and
 * GB200 with per-tensor FP8, 2 (weight + transpose) on H100, 2 for MXFP8's
 * row-wise and column-wise copies.  Hand-derived: 1e9 parameters, zero 1, dp
 * 4, bf16 gradients: weights 1e9 B (2e9 before), gradients 2e9 B, optimizer
 * 12e9 / 4 = 3e9 B; total 6e9 B (7e9 before). */
START_TEST(fp8_weights_without_transpose)
{
    const gpu_spec *h100 = catalog_find("H100-SXM"), *b200 = catalog_find("B200");
    const gpu_spec *gb200 = catalog_find("GB200");
    memory_breakdown mb;
    stage_memory_in in = {PREC_FP8, 1, 4, 4, 1e9, 0, 0, 0, 0, 0, 0.1, 180e9, 0, true, false,
                          OPT_STATE_FP32, 0, 0};
    ck_assert_ptr_nonnull(h100);
    ck_assert_ptr_nonnull(b200);
    ck_assert_ptr_nonnull(gb200);
    ck_assert(memory_fp8_weights_single(b200, PREC_FP8, 1, OPT_STATE_FP32));
    ck_assert(memory_fp8_weights_single(gb200, PREC_FP8, 3, OPT_STATE_FP32));
    ck_assert(!memory_fp8_weights_single(h100, PREC_FP8, 1, OPT_STATE_FP32));
    ck_assert(!memory_fp8_weights_single(b200, PREC_MXFP8, 1, OPT_STATE_FP32));
    ck_assert(!memory_fp8_weights_single(b200, PREC_BF16, 1, OPT_STATE_FP32));
    /* zero 0: no FP8 primary weights (Megatron-LM refuses
     * --fp8-param-gather without the distributed optimizer or FSDP): bf16
     * weights, 2 B */
    ck_assert(!memory_fp8_primary_weights(PREC_FP8, 0, OPT_STATE_FP32));
    ck_assert(memory_fp8_primary_weights(PREC_MXFP8, 1, OPT_STATE_FP32));
    ck_assert(!memory_fp8_primary_weights(PREC_BF16, 1, OPT_STATE_FP32));
    ck_assert(!memory_fp8_weights_single(b200, PREC_FP8, 0, OPT_STATE_FP32));
    memory_stage(&in, &mb);
    ck_assert_rel(mb.weights_bytes, 2e9, 1e-15);
    ck_assert_rel(mb.total_bytes, 7e9, 1e-15);
    in.fp8_weights_single = memory_fp8_weights_single(gb200, PREC_FP8, in.zero, OPT_STATE_FP32);
    memory_stage(&in, &mb);
    ck_assert_rel(mb.weights_bytes, 1e9, 1e-15);
    ck_assert_rel(mb.grads_bytes, 2e9, 1e-15);
    ck_assert_rel(mb.optimizer_bytes, 3e9, 1e-15);
    ck_assert_rel(mb.total_bytes, 6e9, 1e-15);
    /* routed experts' weights likewise, their states over their own group */
    in.expert_params = 5e8;
    in.edp = 2;
    memory_stage(&in, &mb);
    ck_assert_rel(mb.weights_bytes, 1e9, 1e-15);
}
END_TEST

/* Transformer Engine's cached FP8 weights beside bf16 primary weights
 * (memory_fp8_weight_cache_bytes): Megatron-Core's TE modules keep the
 * quantized weight through the step -- per-tensor FP8 1 + 1 (transpose) on
 * H100, 1 on B200, MXFP8 2 --; none with FP8 primary weights (zero >= 1,
 * fp32 state), for bf16 models, or on torchtitan (torchao's Float8Linear).
 * opt_state fp32_rem (16-bit remainders of bf16 parameters) keeps bf16
 * primary weights at zero 1.  Hand-derived, a NeMo 24.07-like H100 stage:
 * 1e9 parameters of which 0.1e9 embedding (no TE module), FP8, zero 1 over
 * dp 4, bf16 gradients, fp32_rem: weights 2 x 1e9 + 2 x 0.9e9 = 3.8e9 B,
 * gradients 2e9 B, optimizer 10e9 / 4 = 2.5e9 B, total 8.3e9 B (6.5e9 B
 * without the cache). */
START_TEST(fp8_weight_cache)
{
    const gpu_spec *h100 = catalog_find("H100-SXM"), *b200 = catalog_find("B200");
    const stack_spec *mc = stack_find("megatron-core"), *tt = stack_find("pytorch-fsdp2");
    memory_breakdown mb;
    stage_memory_in in = {PREC_FP8, 1, 4, 4, 1e9, 0, 0, 0, 0, 0, 0, 180e9, 0, true, false,
                          OPT_STATE_FP32_REM, 0, 0.1e9};
    ck_assert_ptr_nonnull(h100);
    ck_assert_ptr_nonnull(b200);
    ck_assert_ptr_nonnull(mc);
    ck_assert_ptr_nonnull(tt);
    ck_assert_double_eq(memory_fp8_weight_cache_bytes(mc, h100, PREC_FP8, 0, OPT_STATE_FP32), 2);
    ck_assert_double_eq(memory_fp8_weight_cache_bytes(mc, b200, PREC_FP8, 0, OPT_STATE_FP32), 1);
    ck_assert_double_eq(memory_fp8_weight_cache_bytes(mc, b200, PREC_MXFP8, 0, OPT_STATE_FP32), 2);
    ck_assert_double_eq(memory_fp8_weight_cache_bytes(mc, h100, PREC_FP8, 1, OPT_STATE_FP32), 0);
    ck_assert_double_eq(memory_fp8_weight_cache_bytes(mc, b200, PREC_MXFP8, 3, OPT_STATE_FP32), 0);
    ck_assert_double_eq(memory_fp8_weight_cache_bytes(mc, h100, PREC_FP8, 1, OPT_STATE_FP32_REM),
                        2);
    ck_assert_double_eq(memory_fp8_weight_cache_bytes(mc, h100, PREC_BF16, 0, OPT_STATE_FP32), 0);
    ck_assert_double_eq(memory_fp8_weight_cache_bytes(tt, h100, PREC_FP8, 0, OPT_STATE_FP32), 0);
    ck_assert(!memory_fp8_primary_weights(PREC_FP8, 1, OPT_STATE_FP32_REM));
    ck_assert(memory_fp8_primary_weights(PREC_FP8, 1, OPT_STATE_BF16));
    memory_stage(&in, &mb);
    ck_assert_rel(mb.weights_bytes, 2e9, 1e-15);
    ck_assert_rel(mb.total_bytes, 6.5e9, 1e-15);
    in.fp8_cache_bytes = memory_fp8_weight_cache_bytes(mc, h100, PREC_FP8, 1, OPT_STATE_FP32_REM);
    memory_stage(&in, &mb);
    ck_assert_rel(mb.weights_bytes, 3.8e9, 1e-15);
    ck_assert_rel(mb.grads_bytes, 2e9, 1e-15);
    ck_assert_rel(mb.optimizer_bytes, 2.5e9, 1e-15);
    ck_assert_rel(mb.total_bytes, 8.3e9, 1e-15);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("memory");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, bytes_per_param_megatron);
    tcase_add_test(tc, bytes_per_param_zero);
    tcase_add_test(tc, bytes_per_param_bf16_grads);
    tcase_add_test(tc, bytes_per_param_opt_state);
    tcase_add_test(tc, zero2_gradient_buckets);
    tcase_add_test(tc, inflight_1f1b);
    tcase_add_test(tc, inflight_interleaved);
    tcase_add_test(tc, stage_breakdown_sums);
    tcase_add_test(tc, stage_expert_states_shard_over_edp);
    tcase_add_test(tc, fp8_weights_without_transpose);
    tcase_add_test(tc, fp8_weight_cache);
    tcase_add_test(tc, op_sac_bytes);
    tcase_add_test(tc, loss_bytes);
    tcase_add_test(tc, fsdp2_unsharded);
    tcase_add_test(tc, zero3_gathered_one_rule);
    tcase_add_test(tc, zero3_gathered_weight_bytes);
    tcase_add_test(tc, fsdp2_embedding_grad);
    tcase_add_test(tc, pipe_buffers);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
