/* knobs.c: the registry of plan knobs (model/knobs.h) and their Megatron-LM
 * rules.
 *
 * One row per knob: key, range, --fix slot, plan-table column, Megatron flag
 * and its place among the launch arguments.  The outputs (report.c's table
 * and JSON, sweep's CSV and JSON Lines, validate's JSON, emit's flags) and
 * constraints_parse() walk this table, so a knob added here shows up in all
 * of them.
 *
 * The rules are those of Megatron-LM core_v0.15.0 (arguments.py
 * validate_args, TransformerConfig.__post_init__; summarized in
 * ../shared/reference/cost-model.md "Megatron-LM rules"):
 *   heads % tp == 0; with GQA num_query_groups % tp == 0 (MLA has no query
 *   groups); gbs % (mbs dp) == 0; seq % (2 cp) == 0 with CP; experts % ep ==
 *   0 and ep divides tp cp dp; ep x etp divides tp cp dp (parallel_state.py:
 *   world % (etp ep pp) == 0), the expert ffn divides by etp
 *   (experts.py: divide(moe_ffn_hidden_size, etp)), etp > 1 only on MoE
 *   models without linear biases (TransformerConfig: "Bias in Moe is only
 *   supported when ETP==1"); vpp > 1 needs
 *   pp > 1 and micro-batches % pp == 0; --sequence-parallel needs tp > 1;
 *   --tp-comm-overlap needs SP; --overlap-param-gather needs the distributed
 *   optimizer and --overlap-grad-reduce.  The layer-split rules (stages
 *   cover the layers, vpp chunks, embedding/loss accounting) need the stages
 *   and stay in strategy_check() (strategy.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/suggest.h"
#include "inputs/cluster.h"
#include "inputs/model.h"
#include "model/knobs.h"

#define DEGREE_MAX (1 << 20)
#define FIELD(f) offsetof(strategy, f)
#define FIX(f) offsetof(strategy_constraints, f)

static const char *const recompute_methods[] = {"block", "uniform", NULL};
static const char *const opt_state_names[] = {"fp32", "bf16", "fp32_rem", NULL};
/* RC_MOD_ bit i's Megatron name */
static const char *const recompute_module_names[] = {"core_attn", "layernorm", "mlp", "moe_act",
                                                     "mla_up_proj", NULL};

static const knob_info knobs[KNOB_COUNT] = {
    [KNOB_TP] = {"tp", KNOB_KIND_INT, 1, DEGREE_MAX, FIELD(tp), FIX(tp), "tp", 3, false,
                 "--tensor-model-parallel-size", MEG_INT, KNOB_SEC_PARALLEL, 10,
                 "tensor-parallel degree", NULL},
    [KNOB_PP] = {"pp", KNOB_KIND_INT, 1, STRATEGY_MAX_STAGES, FIELD(pp), FIX(pp), "pp", 3, false,
                 "--pipeline-model-parallel-size", MEG_INT, KNOB_SEC_PARALLEL, 20,
                 "pipeline-parallel degree", NULL},
    [KNOB_DP] = {"dp", KNOB_KIND_INT, 1, DEGREE_MAX, FIELD(dp), FIX(dp), "dp", 5, false,
                 NULL, MEG_NONE, KNOB_SEC_PARALLEL, 0,
                 "data-parallel degree (Megatron: world / (tp cp pp))", NULL},
    [KNOB_CP] = {"cp", KNOB_KIND_INT, 1, DEGREE_MAX, FIELD(cp), FIX(cp), "cp", 3, false,
                 "--context-parallel-size", MEG_INT_ABOVE_1, KNOB_SEC_PARALLEL, 50,
                 "context-parallel degree", NULL},
    [KNOB_EP] = {"ep", KNOB_KIND_INT, 1, DEGREE_MAX, FIELD(ep), FIX(ep), "ep", 3, true,
                 "--expert-model-parallel-size", MEG_EMIT, KNOB_SEC_PARALLEL, 60,
                 "expert-parallel degree (carved out of tp cp dp)", NULL},
    [KNOB_ETP] = {"etp", KNOB_KIND_INT, 1, DEGREE_MAX, FIELD(etp), FIX(etp), "etp", 3, true,
                  "--expert-tensor-parallel-size", MEG_EMIT, KNOB_SEC_PARALLEL, 61,
                  "expert tensor-parallel degree: the routed experts' weights split over etp "
                  "ranks (Megatron's default: tp)", NULL},
    [KNOB_VPP] = {"vpp", KNOB_KIND_INT, 1, DEGREE_MAX, FIELD(vpp), FIX(vpp), "vpp", 3, false,
                  "--num-layers-per-virtual-pipeline-stage "
                  "--num-virtual-stages-per-pipeline-rank", MEG_EMIT, KNOB_SEC_PARALLEL, 33,
                  "virtual pipeline stages per rank (interleaving)", NULL},
    [KNOB_MBS] = {"mbs", KNOB_KIND_INT, 1, DEGREE_MAX, FIELD(mbs), FIX(mbs), "mbs", 4, false,
                  "--micro-batch-size", MEG_INT, KNOB_SEC_BATCH, 10,
                  "micro-batch, sequences", NULL},
    [KNOB_SP] = {"sp", KNOB_KIND_BOOL, 0, 1, FIELD(sp), FIX(sp), "sp", 3, false,
                 "--sequence-parallel", MEG_SWITCH, KNOB_SEC_PARALLEL, 40,
                 "sequence parallelism", NULL},
    [KNOB_RECOMPUTE] = {"recompute", KNOB_KIND_RECOMPUTE, 0, 2, FIELD(recompute), FIX(recompute),
                        "recomp", 7, false,
                        "--recompute-granularity --recompute-method --recompute-num-layers",
                        MEG_EMIT, KNOB_SEC_MEMORY, 10, "activation recomputation", NULL},
    [KNOB_RECOMPUTE_LAYERS] = {"recompute_layers", KNOB_KIND_INT, 0, DEGREE_MAX,
                               FIELD(recompute_layers), FIX(recompute_layers), "rcN", 3, false,
                               "--recompute-num-layers", MEG_EMIT, KNOB_SEC_MEMORY, 11,
                               "full recompute: layers per (virtual) pipeline chunk, 0 = all",
                               NULL},
    [KNOB_RECOMPUTE_METHOD] = {"recompute_method", KNOB_KIND_NAMED, 0, 1,
                               FIELD(recompute_method), FIX(recompute_method), NULL, 0, false,
                               "--recompute-method", MEG_EMIT, KNOB_SEC_MEMORY, 12,
                               "full recompute of recompute_layers: the first of each chunk "
                               "(block) or all in groups (uniform)",
                               .names = recompute_methods},
    [KNOB_RECOMPUTE_MODULES] = {"recompute_modules", KNOB_KIND_SET, 0, RC_MOD_ALL,
                                FIELD(recompute_modules), FIX(recompute_modules), NULL, 0,
                                false, "--recompute-modules", MEG_EMIT, KNOB_SEC_MEMORY, 13,
                                "selective recompute: the modules re-run",
                                .names = recompute_module_names},
    [KNOB_ZERO] = {"zero", KNOB_KIND_INT, 0, 3, FIELD(zero), FIX(zero), "zero", 4, false,
                   "--use-distributed-optimizer --use-megatron-fsdp", MEG_EMIT,
                   KNOB_SEC_MEMORY, 20, "ZeRO stage (1: distributed optimizer)", NULL},
    [KNOB_OVERLAP_GRAD_REDUCE] = {"overlap_grad_reduce", KNOB_KIND_BOOL, 0, 1,
                                  FIELD(overlap_grad_reduce), FIX(overlap_grad_reduce), NULL,
                                  0, false,
                                  "--overlap-grad-reduce", MEG_SWITCH, KNOB_SEC_MEMORY, 30,
                                  "DP gradient reduce overlapped with backward", NULL},
    [KNOB_OVERLAP_PARAM_GATHER] = {"overlap_param_gather", KNOB_KIND_BOOL, 0, 1,
                                   FIELD(overlap_param_gather), FIX(overlap_param_gather), NULL, 0,
                                   false, "--overlap-param-gather", MEG_SWITCH,
                                   KNOB_SEC_MEMORY, 40,
                                   "parameter all-gather overlapped with forward", NULL},
    [KNOB_TP_COMM_OVERLAP] = {"tp_comm_overlap", KNOB_KIND_BOOL, 0, 1, FIELD(tp_comm_overlap),
                              FIX(tp_comm_overlap), NULL, 0, false, "--tp-comm-overlap",
                              MEG_SWITCH, KNOB_SEC_PARALLEL, 70,
                              "TP collectives overlapped with GEMMs", NULL},
    [KNOB_EP_COMM_OVERLAP] = {"ep_comm_overlap", KNOB_KIND_BOOL, 0, 1, FIELD(ep_comm_overlap),
                              FIX(ep_comm_overlap), NULL, 0, false,
                              "--overlap-moe-expert-parallel-comm", MEG_SWITCH,
                              KNOB_SEC_PARALLEL, 75,
                              "MoE all-to-alls overlapped with another micro-batch", NULL},
    [KNOB_ACCOUNT_EMBEDDING] = {"account_embedding", KNOB_KIND_BOOL, 0, 1,
                                FIELD(account_embedding), KNOB_NOT_FIXABLE, NULL, 0, false,
                                "--account-for-embedding-in-pipeline-split", MEG_SWITCH,
                                KNOB_SEC_PARALLEL, 31,
                                "the embedding counts as a layer of the split", NULL},
    [KNOB_ACCOUNT_LOSS] = {"account_loss", KNOB_KIND_BOOL, 0, 1, FIELD(account_loss),
                           KNOB_NOT_FIXABLE, NULL, 0, false,
                           "--account-for-loss-in-pipeline-split", MEG_SWITCH,
                           KNOB_SEC_PARALLEL, 32, "the loss counts as a layer of the split", NULL},
    [KNOB_CP_COMM] = {"cp_comm", KNOB_KIND_CP_COMM, 0, CP_COMM_COUNT - 1, FIELD(cp_comm),
                      FIX(cp_comm), NULL, 0, false, "--cp-comm-type", MEG_EMIT,
                      KNOB_SEC_PARALLEL, 51,
                      "context-parallel K/V exchange: p2p ring, a2a (Ulysses), all_gather, "
                      "a2a+p2p (hierarchical)", NULL},
    [KNOB_CP_A2A] = {"cp_a2a", KNOB_KIND_INT, 0, DEGREE_MAX, FIELD(cp_a2a), FIX(cp_a2a), NULL,
                     0, false, "--hierarchical-context-parallel-sizes", MEG_EMIT,
                     KNOB_SEC_PARALLEL, 52,
                     "a2a+p2p: cp ranks of the all-to-all level (0: not hierarchical)", NULL},
    [KNOB_GRAD_REDUCE_BF16] = {"grad_reduce_bf16", KNOB_KIND_BOOL, 0, 1, FIELD(grad_reduce_bf16),
                               FIX(grad_reduce_bf16), NULL, 0, false, "--grad-reduce-in-bf16",
                               MEG_SWITCH, KNOB_SEC_MEMORY, 45,
                               "main gradients accumulated and reduced in bf16, not fp32", NULL},
    [KNOB_CUDA_GRAPH] = {"cuda_graph", KNOB_KIND_BOOL, 0, 1, FIELD(cuda_graph), FIX(cuda_graph),
                         NULL, 0, false,
                         "--cuda-graph-impl local --cuda-graph-scope full_iteration",
                         MEG_EMIT, KNOB_SEC_MEMORY, 50,
                         "every micro-batch's forward and backward replayed as one CUDA graph",
                         NULL},
    [KNOB_SHARED_EXPERT_OVERLAP] = {"shared_expert_overlap", KNOB_KIND_BOOL, 0, 1,
                                    FIELD(shared_expert_overlap), FIX(shared_expert_overlap),
                                    NULL, 0, false, "--moe-shared-expert-overlap", MEG_SWITCH,
                                    KNOB_SEC_PARALLEL, 76,
                                    "MoE shared experts computed under the dispatch/combine "
                                    "communication", NULL},
    [KNOB_FLEX_DISPATCHER] = {"flex_dispatcher", KNOB_KIND_BOOL, 0, 1, FIELD(flex_dispatcher),
                              FIX(flex_dispatcher), NULL, 0, false,
                              "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend",
                              MEG_EMIT, KNOB_SEC_PARALLEL, 77,
                              "MoE tokens cross to each other NVLink domain once (DeepEP, "
                              "HybridEP)", NULL},
    [KNOB_OPT_STATE] = {"opt_state", KNOB_KIND_NAMED, 0, 2, FIELD(opt_state), FIX(opt_state), NULL,
                        0, false,
                        "--use-precision-aware-optimizer --exp-avg-dtype --exp-avg-sq-dtype",
                        MEG_EMIT, KNOB_SEC_MEMORY, 25,
                        "Adam's state: fp32 main weights and moments, or bf16 (fp32_rem: "
                        "fp32) moments with 16-bit main-weight storage (precision-aware "
                        "optimizer)",
                        .names = opt_state_names},
    [KNOB_TE_MOE_GRAPHS] = {"te_moe_graphs", KNOB_KIND_BOOL, 0, 1, FIELD(te_moe_graphs),
                            FIX(te_moe_graphs), NULL, 0, false,
                            "--cuda-graph-impl transformer_engine --cuda-graph-scope "
                            "moe_router moe_preprocess --te-rng-tracker",
                            MEG_EMIT, KNOB_SEC_MEMORY, 51,
                            "each MoE layer's router and dispatch preprocessing replayed as "
                            "Transformer Engine CUDA graphs", NULL},
};

/* The knobs a software stack restricts: the offset + 1 of the knob's mask in
 * stack_knobs (inputs/stack.h); 0: every stack has the knob's values
 * (tp, pp, dp, mbs, recompute_layers, the embedding/loss accounting). */
#define STACK_MASK(f) (offsetof(stack_knobs, f) + 1)
static const size_t stack_mask[KNOB_COUNT] = {
    [KNOB_CP] = STACK_MASK(cp), [KNOB_EP] = STACK_MASK(ep), [KNOB_VPP] = STACK_MASK(vpp),
    [KNOB_ETP] = STACK_MASK(ep),   /* expert tensor parallelism: where the stack has EP */
    [KNOB_SP] = STACK_MASK(sp), [KNOB_RECOMPUTE] = STACK_MASK(recompute),
    [KNOB_ZERO] = STACK_MASK(zero), [KNOB_OVERLAP_GRAD_REDUCE] = STACK_MASK(overlap_grad_reduce),
    [KNOB_OVERLAP_PARAM_GATHER] = STACK_MASK(overlap_param_gather),
    [KNOB_TP_COMM_OVERLAP] = STACK_MASK(tp_comm_overlap),
    [KNOB_EP_COMM_OVERLAP] = STACK_MASK(ep_comm_overlap),
    /* the shared-expert overlap: a Megatron-Core feature like the all-to-all overlap */
    [KNOB_SHARED_EXPERT_OVERLAP] = STACK_MASK(ep_comm_overlap),
    /* the flex dispatcher: a Megatron-Core token dispatcher likewise */
    [KNOB_FLEX_DISPATCHER] = STACK_MASK(ep_comm_overlap),
    [KNOB_CP_COMM] = STACK_MASK(cp_comm),
    [KNOB_GRAD_REDUCE_BF16] = STACK_MASK(grad_reduce_bf16),
    [KNOB_CUDA_GRAPH] = STACK_MASK(cuda_graph),
    /* the per-module graphs: Megatron-Core's CUDA graphs likewise */
    [KNOB_TE_MOE_GRAPHS] = STACK_MASK(cuda_graph),
    [KNOB_OPT_STATE] = STACK_MASK(opt_state),
    [KNOB_RECOMPUTE_MODULES] = STACK_MASK(recompute_modules),
};

bool knob_stack_allows(const stack_spec *st, knob_id k, int v)
{
    unsigned mask;
    int bit;
    if (st == NULL || stack_mask[k] == 0)
        return true;
    mask = *(const unsigned *)(const void *)((const char *)&st->knobs + stack_mask[k] - 1);
    bit = knobs[k].kind == KNOB_KIND_INT && k != KNOB_ZERO ? (v > 1) : v;
    return bit >= 0 && bit < 32 && (mask & (1u << bit)) != 0;
}

static const char *const recompute_short[] = {"none", "sel", "full"};
static const char *const cp_comm_names[CP_COMM_COUNT] = {"p2p", "a2a", "all_gather", "a2a+p2p"};

/* Which knob values the validation corpus exercises.  Its schema has no
 * field for the ZeRO stage, so each run's is read from its source:
 *   zero 0  Megatron-LM before the distributed optimizer (2020-2022): the
 *           SC21 (sc21_t1_*, sc21_t2_ptd_*), Megatron README
 *           (megatron2020_*, megatron_readme2021_*) and Korthikanti et al.
 *           (korthikanti_*) runs;
 *   zero 1  the distributed optimizer: Megatron-Core r0.8.0's benchmarks
 *           (mcore080_*: --overlap-param-gather, which needs it), the NeMo
 *           (nemo2407_*) and Megatron-Bridge (mbridge_*, FSDP 0 in its
 *           performance tables) recipes (use_distributed_optimizer);
 *   zero 2  Megatron-FSDP optim_grads: no run;
 *   zero 3  DeepSpeed ZeRO-3, SC21 Table 2 (sc21_t2_zero3_*), and
 *           Megatron-FSDP optim_grads_params: the Megatron-Bridge 25.11 rows
 *           with FSDP 64 or 8 in its docs/performance-summary-archive.md
 *           (mbridge_2511_gb300_llama370b_fp8cs_64gpu_*,
 *           mbridge_2511_gb200_llama370b_fp8cs_64gpu_*,
 *           mbridge_2511_h100_llama38b_fp8cs_8gpu_*), whose FSDP switch sets
 *           data_parallel_sharding_strategy = "optim_grads_params"
 *           (scripts/performance/utils/overrides.py).
 * The corpus's schema has no field for --cp-comm-type either; its nine cp 2
 * runs (nemo2407_h100_llama3_8b_8gpu, nemo2407_h100_llama3_70b_64gpu and the
 * seven Llama 3.1 405B Megatron-Bridge rows with cp2 in their id) ran
 * Megatron's default, p2p (the recipes set no cp_comm_type): a2a,
 * all_gather and a2a+p2p are exercised by no run.  The MoE all-to-all
 * overlap (--overlap-moe-expert-parallel-comm): the Megatron-Bridge rows'
 * tables do not list it; the recipes of the full-iteration-graph rows set
 * it (26.08 GB200/GB300 MXFP8, 26.06 DeepSeek-V3 GB300 MXFP8 and
 * Qwen3-30B-A3B B300 MXFP8: recipe facts of fit/run_stacks.c), and no
 * other row's recipe can be told for sure (the 25.11 and 26.02.01
 * Qwen3-235B recipes set it in some revisions and not in others).  Those
 * rows check it only under the graph, and their gpt-oss ones stay too fast
 * with it (docs/validation.md), so on stays
 * unvalidated ("none" validates it: the search does not rank it as a
 * validated knob, and validate leaves it off where no recipe sets it).
 * Gradients reduced in bf16 (grad_reduce_bf16): the NeMo 24.07 rows ran
 * NeMo-Framework-Launcher 24.07's examples/training/{gpt,llama}/h100/
 * *_fp8*.sh, which set optim.grad_sync_dtype=bf16 (and nemotron_340b.yaml
 * its own), and the Megatron-Bridge rows its scripts/performance configs
 * (v0.2.0-v0.5.0: set_llama3_common_configs and the DeepSeek, gpt-oss and
 * Qwen3 ones set ddp.grad_reduce_in_fp32 = False); every other run reduced
 * fp32 main gradients (Megatron-LM forces it with --bf16) or fp16 ones.
 * Expert tensor parallelism: the corpus's schema has no etp field; every
 * MoE row is a Megatron-Bridge performance recipe, and each sets
 * expert_tensor_parallel_size = 1 (v0.2.0-v0.5.0 scripts/performance/
 * configs/{deepseek,qwen3,gpt_oss} BASE_*_CONFIG, v0.6.0 perf_recipes/
 * <gpu>/ recipes), so etp 1 is validated (38 of the 39 rows run tp 1, where
 * Megatron's default etp = tp is 1 too) and no run exercises etp > 1.
 * A full-iteration CUDA graph (cuda_graph): the Megatron-Bridge 26.08 rows
 * (MXFP8 on GB200/GB300; v0.6.0 perf_recipes, _enable_hybridep_full_
 * iteration_mxfp8: cuda_graph_impl = "full_iteration"), from the recipe
 * fact of fit/run_stacks.c, and the 26.06 DeepSeek-V3 GB300 MXFP8 row (its
 * recipe, DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_MX_GBS15360, likewise) and
 * the 26.06 Qwen3-30B-A3B B300 MXFP8 row (v0.5.0 QWEN3_30B_A3B_PRETRAIN_
 * CONFIG_B300_FP8_MX_V1); no other run captured its iteration.
 * Shared-expert overlap (--moe-shared-expert-overlap): the schema has no
 * field for it.  Of the 11 DeepSeek-V3 rows (the corpus's only model with
 * shared experts) one ran it: mbridge_2511_b200_deepseekv3_fp8mx_* (v0.2.0:
 * no flex dispatcher backend on B200, so the alltoall dispatcher with
 * DeepSeekModelProvider's default moe_shared_expert_overlap = True); every
 * other row ran the flex dispatcher, whose setup turns it off
 * (flex_dispatcher_backend.py apply_flex_dispatcher_backend).  validate
 * cannot tell that row apart, so on stays unvalidated (and off there).
 * The flex token dispatcher (flex_dispatcher): one copy of a token per
 * destination rank, and across NVLink domains one per domain; one row runs
 * it across nodes, mbridge_2606_h100_qwen330ba3b_fp8_16gpu_* (ep 16 over
 * two nodes; v0.5.0 QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1:
 * moe_flex_dispatcher_backend "hybridep"), and 24 inside one NVLink domain
 * (the GB200/GB300 Qwen3 and DeepSeek-V3 rows, 26.04/26.06's B200/B300
 * DeepSeek-V3 rows, 26.06's B300 Qwen3-30B and gpt-oss rows, the 26.08
 * GB200/GB300 MXFP8 rows), from the recipe facts of fit/run_stacks.c --
 * every one with HybridEP (moe_flex_dispatcher_backend "hybridep"): DeepEP,
 * core_v0.15.0's only backend (knob_flex_deepep), is exercised by no run,
 * and the cost takes it as HybridEP (but for its SMs under an overlap,
 * COST_DEEPEP_SMS), so a DeepEP plan (strategy.flex_deepep)
 * is unvalidated (the FLEX_DEEPEP row).
 * 16-bit Adam state (opt_state bf16): the NeMo 24.07 Nemotron-4 340B row
 * (nemotron_340b.yaml: optim.dtype bf16, a rule of fit/run_stacks.c), which
 * fits without recompute with it and predicts within 1% (-20.9% with fp32
 * state and full recompute); the other NeMo 24.07 rows keep fp32 moments
 * and 16-bit main-weight remainders (opt_state fp32_rem: NeMo's
 * setup_optimization with the default fp32 optim.dtype and a bf16 model,
 * fit/run_stacks.c); every other run fp32 state.
 * Transformer Engine graphs of the router and dispatch preprocessing
 * (te_moe_graphs): the Megatron-Bridge rows whose recipes set
 * cuda_graph_impl "transformer_engine" with cuda_graph_scope moe_router
 * and moe_preprocess (recipe facts of fit/run_stacks.c: 25.11 GB200/GB300
 * Qwen3 and DeepSeek-V3, B200 Qwen3-30B-A3B, GB300 gpt-oss; 26.02 B200
 * Qwen3-30B-A3B, B300 gpt-oss; 26.02.01 GB200/GB300 Qwen3-235B-A22B MXFP8;
 * 26.06 B300 gpt-oss), all with the flex dispatcher but the B200 Qwen3
 * ones (alltoall: the cost keeps moe_host_s there); validate leaves it off
 * where no recipe sets it. */
static const knob_validation validation[] = {
    /* recompute: the corpus publishes none, selective (core attention) and
     * full of every layer; no run recomputes part of the layers */
    {KNOB_RECOMPUTE_LAYERS, 1, false, "full recompute of N layers per chunk (block)", "none",
     true},
    {KNOB_RECOMPUTE_METHOD, RECOMPUTE_UNIFORM, false, "uniform recompute in groups of layers",
     "none", false},
    {KNOB_RECOMPUTE_MODULES, RC_MOD_LAYERNORM, false,
     "selective recompute of modules beyond core attention", "none", true},
    /* ZeRO: each stack names its own mechanism (stack_spec.zero_names) */
    {KNOB_ZERO, 0, true, NULL,
     "sc21_t1_*, sc21_t2_ptd_*, megatron2020_*, megatron_readme2021_*, korthikanti_*", false},
    {KNOB_ZERO, 1, true, NULL, "mcore080_*, nemo2407_*, mbridge_* (FSDP 0)", false},
    {KNOB_ZERO, 2, false, NULL, "none", false},
    {KNOB_ZERO, 3, true, NULL,
     "sc21_t2_zero3_*, mbridge_2511_gb300_llama370b_fp8cs_64gpu_*, "
     "mbridge_2511_gb200_llama370b_fp8cs_64gpu_*, mbridge_2511_h100_llama38b_fp8cs_8gpu_*", false},
    {KNOB_CP_COMM, CP_COMM_P2P, true, "ring attention",
     "nemo2407_h100_llama3_8b_8gpu, nemo2407_h100_llama3_70b_64gpu, mbridge_*llama31405b*cp2*",
     false},
    {KNOB_CP_COMM, CP_COMM_A2A, false, "Ulysses all-to-all", "none", false},
    {KNOB_CP_COMM, CP_COMM_ALLGATHER, false, "K/V all-gather", "none", false},
    {KNOB_CP_COMM, CP_COMM_A2A_P2P, false, "hierarchical all-to-all + ring", "none", false},
    {KNOB_EP_COMM_OVERLAP, 1, false, "--overlap-moe-expert-parallel-comm", "none", false},
    {KNOB_GRAD_REDUCE_BF16, 1, true, "--grad-reduce-in-bf16", "nemo2407_*, mbridge_*", false},
    {KNOB_ETP, 2, false, "expert tensor parallelism", "none", true},
    {KNOB_CUDA_GRAPH, 1, true, "full-iteration CUDA graph",
     "mbridge_2608_* (MXFP8 on GB200/GB300), mbridge_2606_gb300_deepseekv3_mxfp8_*, "
     "mbridge_2606_b300_qwen330ba3b_mxfp8_*", false},
    {KNOB_SHARED_EXPERT_OVERLAP, 1, false, "--moe-shared-expert-overlap", "none", false},
    {KNOB_OPT_STATE, OPT_STATE_BF16, true, "16-bit Adam state",
     "nemo2407_h100_nemotron_340b_128gpu", false},
    {KNOB_OPT_STATE, OPT_STATE_FP32_REM, true, "fp32 moments, 16-bit main-weight remainders",
     "nemo2407_* but nemo2407_h100_nemotron_340b_128gpu", false},
    {KNOB_FLEX_DISPATCHER, 1, true, "flex token dispatcher (HybridEP)",
     "mbridge_2606_h100_qwen330ba3b_fp8_16gpu_* (ep across nodes), the GB200/GB300 Qwen3 and "
     "DeepSeek-V3 rows, mbridge_260[46]_b[23]00_deepseekv3_*, mbridge_2606_b300_*, "
     "mbridge_2608_gb*", false},
    {KNOB_FLEX_DISPATCHER, FLEX_DEEPEP, false,
     "flex token dispatcher with DeepEP (core_v0.15.0), costed as HybridEP", "none", false},
    {KNOB_TE_MOE_GRAPHS, 1, true, "TE CUDA graphs of the MoE router and preprocessing",
     "mbridge_2511_gb[23]00_{qwen3,deepseekv3}*, mbridge_2511_b200_qwen330ba3b_*, "
     "mbridge_2511_gb300_gptoss120b_*, mbridge_2602_b200_qwen330ba3b_*, "
     "mbridge_2602_b300_gptoss120b_*, mbridge_260201_gb[23]00_qwen3235b*, "
     "mbridge_2606_b300_gptoss120b_*", false},
};

/* Whether validation row r covers knob value v. */
static bool row_covers(const knob_validation *r, int v)
{
    return r->and_above ? v >= r->value : v == r->value;
}

/* Knob k's value in s as the validation rows read it: the flex dispatcher
 * with DeepEP (strategy.flex_deepep) is FLEX_DEEPEP, a row of its own. */
static int validation_value(const strategy *s, knob_id k)
{
    if (k == KNOB_FLEX_DISPATCHER && s->flex_dispatcher && s->flex_deepep)
        return FLEX_DEEPEP;
    return knob_value(s, k);
}

const knob_validation *knob_validation_of(knob_id k, int v)
{
    for (size_t i = 0; i < sizeof validation / sizeof validation[0]; i++)
        if (validation[i].knob == k && row_covers(&validation[i], v))
            return &validation[i];
    return NULL;
}

bool knob_value_validated(knob_id k, int v)
{
    const knob_validation *r = knob_validation_of(k, v);
    return r == NULL || r->validated;
}

const knob_validation *knob_validation_rows(int *n)
{
    *n = (int)(sizeof validation / sizeof validation[0]);
    return validation;
}

/* The index of the first validation row at or after i that no run
 * validates and that covers s's value of its knob; the rows' count when
 * none.  The one walk knobs_unvalidated_count, knobs_validated and
 * knobs_unvalidated share. */
static size_t next_unvalidated(const strategy *s, size_t i)
{
    for (; i < sizeof validation / sizeof validation[0]; i++)
        if (!validation[i].validated &&
            row_covers(&validation[i], validation_value(s, validation[i].knob)))
            break;
    return i;
}

int knobs_unvalidated_count(const strategy *s)
{
    int n = 0;
    for (size_t i = next_unvalidated(s, 0); i < sizeof validation / sizeof validation[0];
         i = next_unvalidated(s, i + 1))
        n++;
    return n;
}

bool knobs_validated(const strategy *s)
{
    return next_unvalidated(s, 0) == sizeof validation / sizeof validation[0];
}

/* What validation row r's value is on s's stack: the row's name, or for
 * the ZeRO stage the stack's own mechanism (stack_spec.zero_names;
 * megatron-core's where the stack has none of that stage). */
static const char *validation_name(const knob_validation *r, const strategy *s)
{
    int v = knob_value(s, r->knob);
    const char *name;
    if (r->knob != KNOB_ZERO || v < 0 || v > 3)
        return r->name;
    name = stack_get(s->stack)->zero_names[v];
    return name != NULL ? name : stack_get(STACK_MEGATRON_CORE)->zero_names[v];
}

int knobs_unvalidated(const strategy *s, bool names, const char *sep, char *buf, size_t size)
{
    size_t len = 0;
    int n = 0;
    char v[KNOB_TEXT_MAX];
    if (size > 0)
        buf[0] = '\0';
    for (size_t i = next_unvalidated(s, 0); i < sizeof validation / sizeof validation[0];
         i = next_unvalidated(s, i + 1)) {
        const knob_validation *r = &validation[i];
        int w;
        if (r->knob == KNOB_FLEX_DISPATCHER && r->value == FLEX_DEEPEP)
            snprintf(v, sizeof v, "deepep");
        else
            knob_text(s, r->knob, false, v, sizeof v);
        w = snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0, "%s%s=%s%s%s%s",
                     n ? sep : "", knobs[r->knob].key, v,
                     names ? " (" : "", names ? validation_name(r, s) : "", names ? ")" : "");
        if (w > 0)
            len += (size_t)w;
        n++;
    }
    return n;
}

const knob_info *knob_get_info(knob_id k)
{
    return &knobs[k];
}

int knob_find(const char *key)
{
    for (int k = 0; k < KNOB_COUNT; k++)
        if (strcmp(key, knobs[k].key) == 0)
            return k;
    return -1;
}

int knob_value(const strategy *s, knob_id k)
{
    const char *p = (const char *)s + knobs[k].offset;
    switch (knobs[k].kind) {
    case KNOB_KIND_BOOL: return *(const bool *)(const void *)p ? 1 : 0;
    case KNOB_KIND_RECOMPUTE: return (int)*(const recompute_mode *)(const void *)p;
    case KNOB_KIND_CP_COMM: return (int)*(const cp_comm_type *)(const void *)p;
    case KNOB_KIND_NAMED: case KNOB_KIND_SET: case KNOB_KIND_INT: break;
    }
    return *(const int *)(const void *)p;
}

void knob_set(strategy *s, knob_id k, int v)
{
    char *p = (char *)s + knobs[k].offset;
    switch (knobs[k].kind) {
    case KNOB_KIND_BOOL: *(bool *)(void *)p = v != 0; return;
    case KNOB_KIND_RECOMPUTE: *(recompute_mode *)(void *)p = (recompute_mode)v; return;
    case KNOB_KIND_CP_COMM: *(cp_comm_type *)(void *)p = (cp_comm_type)v; return;
    case KNOB_KIND_NAMED: case KNOB_KIND_SET: case KNOB_KIND_INT: *(int *)(void *)p = v; return;
    }
}

/* "a+b" for the bits of v named by ki->names, "none" for 0. */
static void set_text(const knob_info *ki, int v, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; ki->names[i] != NULL && len < size; i++)
        if (v & (1 << i))
            len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? "+" : "", ki->names[i]);
    if (len == 0)
        snprintf(buf, size, "none");
}

const char *knob_text(const strategy *s, knob_id k, bool short_form, char *buf, size_t size)
{
    int v = knob_value(s, k);
    switch (knobs[k].kind) {
    case KNOB_KIND_BOOL:
        snprintf(buf, size, "%s", v ? "on" : "off");
        break;
    case KNOB_KIND_RECOMPUTE:
        snprintf(buf, size, "%s", short_form && v >= 0 && v <= 2 ? recompute_short[v]
                                                                  : recompute_name(v));
        break;
    case KNOB_KIND_CP_COMM:
        snprintf(buf, size, "%s", cp_comm_name((cp_comm_type)v));
        break;
    case KNOB_KIND_NAMED:   /* a value out of range shows as its number */
        if (v >= knobs[k].min && v <= knobs[k].max)
            snprintf(buf, size, "%s", knobs[k].names[v]);
        else
            snprintf(buf, size, "%d", v);
        break;
    case KNOB_KIND_SET:
        set_text(&knobs[k], v, buf, size);
        break;
    case KNOB_KIND_INT:
        snprintf(buf, size, "%d", v);
        break;
    }
    return buf;
}

json_t *knob_json(const strategy *s, knob_id k)
{
    int v = knob_value(s, k);
    switch (knobs[k].kind) {
    case KNOB_KIND_BOOL: return json_boolean(v);
    case KNOB_KIND_RECOMPUTE: return json_string(recompute_name((recompute_mode)v));
    case KNOB_KIND_CP_COMM: return json_string(cp_comm_name((cp_comm_type)v));
    case KNOB_KIND_NAMED:
        if (v >= knobs[k].min && v <= knobs[k].max)
            return json_string(knobs[k].names[v]);
        break;
    case KNOB_KIND_SET: {
        char buf[128];
        set_text(&knobs[k], v, buf, sizeof buf);
        return json_string(buf);
    }
    case KNOB_KIND_INT: break;
    }
    return json_integer(v);
}

int knobs_json_set(json_t *o, const strategy *s, knob_id first, knob_id last)
{
    int bad = 0;
    for (int k = first; k < (int)last; k++)
        bad |= json_object_set_new(o, knobs[k].key, knob_json(s, (knob_id)k)) != 0;
    return bad ? -1 : 0;
}

int knobs_keys_join(char *buf, size_t size, const char *sep)
{
    size_t len = 0;
    for (int k = 0; k < KNOB_COUNT; k++) {
        int w = snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0, "%s%s",
                         k ? sep : "", knobs[k].key);
        len += (size_t)w;
    }
    return (int)len;
}

/* The int of knob k in f, or NULL when --fix does not take k. */
static const int *fix_slot(const strategy_constraints *f, knob_id k)
{
    if (knobs[k].fix_offset == KNOB_NOT_FIXABLE)
        return NULL;
    return (const int *)(const void *)((const char *)f + knobs[k].fix_offset);
}

/* The values of knob k stack st has, as --fix writes them, into buf: a
 * degree's "1" and "2 or more", each value of a switch or a list. */
static void stack_values_text(const stack_spec *st, knob_id k, char *buf, size_t size)
{
    bool degree = knobs[k].kind == KNOB_KIND_INT && k != KNOB_ZERO;
    int last = degree ? 2 : knobs[k].max;
    size_t len = 0;
    buf[0] = '\0';
    for (int v = degree ? 1 : knobs[k].min; v <= last && len < size; v++) {
        strategy s;
        char t[KNOB_TEXT_MAX];
        if (!knob_stack_allows(st, k, v))
            continue;
        memset(&s, 0, sizeof s);
        knob_set(&s, k, v);
        len += (size_t)snprintf(buf + len, size - len, "%s%s%s", len ? ", " : "",
                                knob_text(&s, k, false, t, sizeof t),
                                degree && v == 2 ? " or more" : "");
    }
    if (len == 0)
        snprintf(buf, size, "none");
}

planner_status constraints_stack_check(const strategy_constraints *f, const stack_spec *st,
                                       planner_error *err)
{
    for (int k = 0; k < KNOB_COUNT; k++) {
        const int *v = fix_slot(f, (knob_id)k);
        strategy s;
        char text[KNOB_TEXT_MAX], offered[128];
        if (v == NULL || *v < knobs[k].min || knob_stack_allows(st, (knob_id)k, *v))
            continue;
        memset(&s, 0, sizeof s);
        knob_set(&s, (knob_id)k, *v);
        knob_text(&s, (knob_id)k, false, text, sizeof text);
        stack_values_text(st, (knob_id)k, offered, sizeof offered);
        return error_set(err, PLANNER_E_USAGE, NULL, 0, 0, NULL,
                         "--fix %s=%s: the %s stack has no %s=%s (it has: %s)", knobs[k].key,
                         text, st->name, knobs[k].key, text, offered);
    }
    return PLANNER_OK;
}

bool knobs_any_fixed(const strategy_constraints *f)
{
    for (int k = 0; k < KNOB_COUNT; k++) {
        const int *v = fix_slot(f, (knob_id)k);
        if (v != NULL && *v >= knobs[k].min)
            return true;
    }
    return f->gpus > 0;
}

bool knobs_equal(const strategy *a, const strategy *b)
{
    for (int k = 0; k < KNOB_COUNT; k++)
        if (knob_value(a, (knob_id)k) != knob_value(b, (knob_id)k))
            return false;
    return true;
}

/* ---- rules ------------------------------------------------------------- */

bool knob_tp_splits_heads(const model *m, int tp)
{
    if (tp < 1 || m->heads % tp != 0)
        return false;
    return m->mla.kv_lora_rank > 0 || m->kv_heads % tp == 0;
}

/* A broken rule: PLANNER_E_INPUT with its message in *err (formatted only
 * when err is non-NULL: the search asks for no message on most candidates). */
#define FAIL(...) return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL, __VA_ARGS__)

/* The rules between knob values alone, no model: one place for a strategy
 * (knob_rule, each where its knob's rule is cited) and for --fix
 * (parse_list: a contradiction among the pins is the user's, exit 2; the
 * search would only refuse every candidate, exit 3).  A value < 0 is free
 * and breaks nothing. */
typedef enum pin_rule {
    PIN_SP_TP, PIN_TPO_SP, PIN_VPP_PP, PIN_OPG, PIN_EPO_EP, PIN_EPO_FULL, PIN_SEO_EPO,
    PIN_FLEX_EP, PIN_TMG_CG, PIN_TMG_FULL, PIN_TMG_LN, PIN_CP_COMM_CP, PIN_CP_A2A,
    PIN_CP_A2A_SIZE, PIN_RULES
} pin_rule;

typedef struct pin_vals {
    int tp, sp, tpo, pp, vpp, zero, ogr, opg, ep, epo, rc, seo, flex, cp, cp_comm, cp_a2a, tmg,
        cg, rcm;
} pin_vals;

static pin_vals pins_of_strategy(const strategy *s)
{
    pin_vals v = {s->tp, s->sp, s->tp_comm_overlap, s->pp, s->vpp, s->zero,
                  s->overlap_grad_reduce, s->overlap_param_gather, s->ep, s->ep_comm_overlap,
                  (int)s->recompute, s->shared_expert_overlap, s->flex_dispatcher, s->cp,
                  (int)s->cp_comm, s->cp_a2a, s->te_moe_graphs, s->cuda_graph,
                  s->recompute_modules};
    return v;
}

static pin_vals pins_of_fix(const strategy_constraints *c)
{
    pin_vals v = {c->tp, c->sp, c->tp_comm_overlap, c->pp, c->vpp, c->zero,
                  c->overlap_grad_reduce, c->overlap_param_gather, c->ep, c->ep_comm_overlap,
                  c->recompute, c->shared_expert_overlap, c->flex_dispatcher, c->cp,
                  c->cp_comm, c->cp_a2a, c->te_moe_graphs, c->cuda_graph, c->recompute_modules};
    return v;
}

/* Whether the router graphs keep each MoE layer's pre-MLP norm output, so
 * that selective recompute of layernorm re-runs nothing there: the graphs
 * (te_moe_graphs, scopes moe_router and moe_preprocess) with the flex
 * dispatcher, or with the shared-expert overlap -- the norm's output leaves
 * the graph as one of its outputs, a static buffer that cannot be freed, so
 * Megatron-Core logs "Disabling pre_mlp_layernorm recompute" and keeps it
 * (core_v0.16.0 .. core_v0.19.0 transformer_layer.py TransformerLayer
 * __init__, can_recompute_pre_mlp_layernorm_for_cudagraph: only the
 * alltoall dispatcher, or latent MoE, keeps the recompute).  Values > 0
 * are on (pins: < 0 free); seo only counts with shared experts. */
static bool graphs_keep_moe_norm(int tmg, int flex, int seo)
{
    return tmg > 0 && (flex > 0 || seo > 0);
}

bool knob_moe_norm_recomputed(const model *m, const strategy *s)
{
    return !graphs_keep_moe_norm(s->te_moe_graphs, s->flex_dispatcher,
                                 m->moe.shared_experts > 0 && s->shared_expert_overlap);
}

/* a pinned degree below 2 */
static bool pin_below2(int v)
{
    return v >= 0 && v < 2;
}

/* The --cp-comm-type the values give: cp_comm, or with it free a pinned
 * cp_a2a's a2a+p2p (the search's: cp_a2a is that type's a2a level); < 0 free. */
static int pin_cp_comm(const pin_vals *v)
{
    return v->cp_comm >= 0 ? v->cp_comm : v->cp_a2a > 0 ? (int)CP_COMM_A2A_P2P : -1;
}

/* whether cp has a divisor in 2..cp/2, an a2a level a2a+p2p can take
 * (rule_cp_comm: both levels > 1, their product cp); false for cp < 4 and
 * a prime cp */
static bool cp_has_a2a_level(int cp)
{
    for (int d = 2; d * d <= cp; d++)
        if (cp % d == 0)
            return true;
    return false;
}

/* sequence parallelism off: pinned off, or free under a pinned tp below 2
 * (which refuses it, PIN_SP_TP) */
static bool pin_sp_off(const pin_vals *v)
{
    return v->sp == 0 || (v->sp < 0 && pin_below2(v->tp));
}

static bool pin_broken(pin_rule r, const pin_vals *v)
{
    switch (r) {
    case PIN_SP_TP: return v->sp > 0 && pin_below2(v->tp);
    case PIN_TPO_SP: return v->tpo > 0 && pin_sp_off(v);
    case PIN_VPP_PP: return v->vpp > 1 && pin_below2(v->pp);
    case PIN_OPG: return v->opg > 0 && ((v->zero >= 0 && v->zero < 1) || v->ogr == 0);
    case PIN_EPO_EP: return v->epo > 0 && pin_below2(v->ep);
    case PIN_EPO_FULL: return v->epo > 0 && v->rc == RECOMPUTE_FULL;
    case PIN_SEO_EPO: return v->seo > 0 && v->epo > 0;
    case PIN_FLEX_EP: return v->flex > 0 && pin_below2(v->ep);
    case PIN_TMG_CG: return v->tmg > 0 && v->cg > 0;
    case PIN_TMG_FULL: return v->tmg > 0 && v->rc == RECOMPUTE_FULL;
    case PIN_TMG_LN:
        return v->rcm > 0 && (v->rcm & RC_MOD_LAYERNORM) &&
               (v->rc < 0 || v->rc == RECOMPUTE_SELECTIVE) &&
               graphs_keep_moe_norm(v->tmg, v->flex, v->seo);
    case PIN_CP_COMM_CP: return pin_cp_comm(v) > CP_COMM_P2P && pin_below2(v->cp);
    case PIN_CP_A2A: return v->cp_a2a > 0 && v->cp_comm >= 0 && v->cp_comm != CP_COMM_A2A_P2P;
    case PIN_CP_A2A_SIZE:   /* both levels > 1, their product cp (rule_cp_comm); a free
                             * cp_a2a must take one (a pinned cp 2 or 3 leaves none) */
        if (pin_cp_comm(v) != CP_COMM_A2A_P2P)
            return false;
        if (v->cp_a2a < 0)
            return v->cp > 1 && !cp_has_a2a_level(v->cp);
        return v->cp_a2a < 2 || (v->cp >= 0 && (v->cp_a2a >= v->cp || v->cp % v->cp_a2a != 0));
    default: return false;
    }
}

/* Rule r's message (into buf for the ones that name a value). */
static const char *pin_message(pin_rule r, const pin_vals *v, char *buf, size_t n)
{
    static const char *const msg[PIN_RULES] = {
        "sequence parallelism needs tp > 1",
        "--tp-comm-overlap needs sequence parallelism",
        "virtual stages need pp > 1",
        "--overlap-param-gather needs the distributed optimizer and --overlap-grad-reduce",
        "--overlap-moe-expert-parallel-comm needs expert parallelism (ep > 1)",
        "--overlap-moe-expert-parallel-comm cannot run with full recomputation",
        "--moe-shared-expert-overlap cannot run with --overlap-moe-expert-parallel-comm",
        "the flex token dispatcher needs expert parallelism (ep > 1)",
        "the MoE router and preprocessing graphs (--cuda-graph-impl transformer_engine) "
        "cannot run with the full-iteration graph (--cuda-graph-impl local)",
        "the MoE router and preprocessing graphs (--cuda-graph-impl transformer_engine) "
        "cannot run with full recomputation",
        "selective recompute of layernorm re-runs nothing under the MoE router graphs "
        "(te_moe_graphs) with the flex dispatcher or the shared-expert overlap: "
        "Megatron-Core keeps each MoE layer's pre-MLP norm output there; leave layernorm "
        "out of recompute_modules or the graphs off",
        NULL, NULL, NULL};
    if (r == PIN_TPO_SP && v->sp < 0)
        snprintf(buf, n, "%s, which needs tp > 1", msg[r]);
    else if (r == PIN_CP_COMM_CP)
        snprintf(buf, n, "--cp-comm-type %s needs cp > 1",
                 cp_comm_name((cp_comm_type)pin_cp_comm(v)));
    else if (r == PIN_CP_A2A)
        snprintf(buf, n, "cp_a2a %d needs --cp-comm-type a2a+p2p", v->cp_a2a);
    else if (r == PIN_CP_A2A_SIZE && v->cp_a2a < 0)
        snprintf(buf, n, "--cp-comm-type a2a+p2p needs cp_a2a in 2..cp/2 dividing cp; cp %d has "
                 "none", v->cp);
    else if (r == PIN_CP_A2A_SIZE && v->cp >= 0)
        snprintf(buf, n, "--cp-comm-type a2a+p2p needs cp_a2a in 2..cp/2 dividing cp %d, got %d",
                 v->cp, v->cp_a2a);
    else if (r == PIN_CP_A2A_SIZE)
        snprintf(buf, n, "--cp-comm-type a2a+p2p needs cp_a2a of at least 2, got %d", v->cp_a2a);
    else
        return msg[r];
    return buf;
}

/* Rule r on the values v: PLANNER_OK, or its message in *err. */
static planner_status pin_check(pin_rule r, const pin_vals *v, planner_error *err)
{
    char buf[96];
    if (!pin_broken(r, v))
        return PLANNER_OK;
    return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL, "%s",
                     pin_message(r, v, buf, sizeof buf));
}

/* Returns rule r's failure on the values v (a pin_vals pointer). */
#define PIN_FAIL(r, v)                                                              \
    do {                                                                            \
        planner_status st_ = pin_check((r), (v), err);                              \
        if (st_ != PLANNER_OK)                                                      \
            return st_;                                                             \
    } while (0)
/* ... on the strategy s */
#define PIN_FAIL_S(r)                                                               \
    do {                                                                            \
        pin_vals pv_ = pins_of_strategy(s);                                         \
        PIN_FAIL((r), &pv_);                                                        \
    } while (0)

/* The degrees' rules: tp, cp, ep. */
static planner_status rule_degree(const model *m, const strategy *s, knob_id k, planner_error *err)
{
    long tcd = (long)s->tp * s->cp * s->dp;
    if (k == KNOB_TP && m->heads % s->tp != 0)
        FAIL("%d attention heads are not divisible by tp=%d", m->heads, s->tp);
    if (k == KNOB_TP && !knob_tp_splits_heads(m, s->tp))
        FAIL("%d query groups are not divisible by tp=%d", m->kv_heads, s->tp);
    if (k == KNOB_CP && s->cp > 1 && s->seq_len % (2 * s->cp) != 0)
        FAIL("sequence %d is not a multiple of 2 x cp %d", s->seq_len, s->cp);
    if (k == KNOB_EP && s->ep > 1 && (m->moe.experts == 0 || m->moe.experts % s->ep != 0 ||
                                      tcd % s->ep != 0))
        FAIL("ep %d must divide the experts and tp x cp x dp", s->ep);
    return PLANNER_OK;
}

/* --expert-tensor-parallel-size (Megatron-Core core_v0.15.0): the expert
 * grid etp-ep-edp-pp covers the world (parallel_state.py
 * initialize_model_parallel: world % (etp ep pp) == 0, i.e. ep x etp
 * divides tp x cp x dp); the grouped experts split moe_ffn_hidden_size over
 * etp (moe/experts.py: divide(fc1/fc2 size, expt_tp size)); etp > 1 only
 * without linear biases (TransformerConfig.__post_init__: "Bias in Moe is
 * only supported when ETP==1"; the planner's MoE models with biases, e.g.
 * gpt-oss, keep etp 1) and only on MoE models (the planner's rule: a dense
 * model has no expert to split). */
static planner_status rule_etp(const model *m, const strategy *s, planner_error *err)
{
    long tcd = (long)s->tp * s->cp * s->dp;
    int ep = s->ep > 0 ? s->ep : 1;
    if (s->etp <= 1)
        return PLANNER_OK;
    if (m == NULL || m->moe.experts <= 0)
        FAIL("etp %d needs MoE layers", s->etp);
    if (tcd % ((long)ep * s->etp) != 0)
        FAIL("ep %d x etp %d must divide tp x cp x dp %ld", ep, s->etp, tcd);
    if (m->moe.expert_ffn % s->etp != 0)
        FAIL("etp %d does not divide the expert ffn %d", s->etp, m->moe.expert_ffn);
    if (model_biases(m) & (MODEL_BIAS_OUT | MODEL_BIAS_MLP))
        FAIL("etp %d needs a model without linear biases (Megatron: bias in MoE only with "
             "etp 1)", s->etp);
    return PLANNER_OK;
}

/* --cp-comm-type and --hierarchical-context-parallel-sizes: a type other
 * than p2p (the default) only with cp > 1; a2a scatters the attention heads
 * over the cp ranks, so the heads and the K/V heads of a TP rank must divide
 * by cp (Transformer Engine's flash_attn_a2a_communicate splits each of Q,
 * K, V into cp head groups).  a2a+p2p needs the sizes [cp_a2a, cp / cp_a2a]
 * (Megatron arguments.py: their product is cp), the a2a level's heads
 * divisible the same way; a level of 1 makes Transformer Engine fall back to
 * plain a2a or p2p (attn_forward_func_with_cp), so both levels are > 1. */
static planner_status rule_cp_comm(const model *m, const strategy *s, planner_error *err)
{
    int tp = s->tp > 0 ? s->tp : 1, kv = m->mla.kv_lora_rank > 0 ? m->heads : m->kv_heads;
    int a = s->cp_comm == CP_COMM_A2A ? s->cp : s->cp_a2a;
    PIN_FAIL_S(PIN_CP_COMM_CP);
    PIN_FAIL_S(PIN_CP_A2A);
    PIN_FAIL_S(PIN_CP_A2A_SIZE);
    if ((s->cp_comm == CP_COMM_A2A || s->cp_comm == CP_COMM_A2A_P2P) &&
        ((m->heads / tp) % a != 0 || (kv / tp) % a != 0))
        FAIL("--cp-comm-type %s needs the %d heads and %d K/V heads per TP rank divisible by "
             "%s %d", cp_comm_name(s->cp_comm), m->heads / tp, kv / tp,
             s->cp_comm == CP_COMM_A2A ? "cp" : "cp_a2a", a);
    return PLANNER_OK;
}

/* --recompute-num-layers and --recompute-method go with full recompute
 * only (TransformerConfig.__post_init__: selective takes neither); uniform
 * runs groups of N layers from each chunk's first, and core_v0.15.0 does
 * not clip the last group (_checkpointed_forward: custom(l, l + N)), so N
 * divides every chunk's layers. */
/* The recompute knobs' pairwise rule, for a strategy and for --fix (a value
 * < 0: free): recompute_layers > 0 and recompute_method uniform need full
 * recompute, recompute_modules (not the default 0) selective
 * (TransformerConfig.__post_init__).  NULL, or what is wrong. */
static const char *recompute_conflict(int recompute, int layers, int method, int modules)
{
    bool full = layers > 0 || method == RECOMPUTE_UNIFORM, sel = modules > 0;
    if (full && sel)
        return "recompute_modules needs selective recompute, recompute_layers and "
               "recompute_method full recompute";
    if (full && recompute >= 0 && recompute != RECOMPUTE_FULL)
        return "recompute_layers and recompute_method need full recompute";
    if (sel && recompute >= 0 && recompute != RECOMPUTE_SELECTIVE)
        return "recompute_modules needs selective recompute";
    return NULL;
}

static planner_status rule_recompute(const model *m, const strategy *s, planner_error *err)
{
    int n = s->recompute_layers;
    const char *why = recompute_conflict(s->recompute, n, s->recompute_method, -1);
    if (why != NULL)
        FAIL("%s", why);
    if (s->recompute_method == RECOMPUTE_UNIFORM && n > 0)
        for (int r = 0; r < s->pp && r < STRATEGY_MAX_STAGES; r++)
            for (int c = 0; c < (s->vpp > 0 ? s->vpp : 1); c++) {
                int lc = strategy_chunk_layers(s, m->layers, r, c, NULL);
                if (lc > 0 && lc % n != 0)
                    FAIL("uniform recompute of %d layers does not divide the %d layers of "
                         "pipeline rank %d chunk %d", n, lc, r, c);
            }
    return PLANNER_OK;
}

/* --overlap-moe-expert-parallel-comm (TransformerConfig.__post_init__,
 * core_v0.15.0 and later): expert parallelism on an MoE model; with pp > 1
 * virtual stages; no full recomputation (nor a recompute method or layer
 * count); a 16-bit model (bf16/fp16 parameters; FP8 recipes keep them). */
static planner_status ep_overlap_rule(const model *m, const strategy *s, planner_error *err)
{
    pin_vals pv;
    if (!s->ep_comm_overlap)
        return PLANNER_OK;
    pv = pins_of_strategy(s);
    if (m == NULL || m->moe.experts <= 0)
        pv.ep = 1;   /* no experts: as ep 1 */
    PIN_FAIL(PIN_EPO_EP, &pv);
    if (s->pp > 1 && s->vpp < 2)
        FAIL("--overlap-moe-expert-parallel-comm with pp %d needs virtual stages (vpp > 1)",
             s->pp);
    PIN_FAIL(PIN_EPO_FULL, &pv);
    if (m->prec == PREC_FP32)
        FAIL("--overlap-moe-expert-parallel-comm needs a bf16 or fp16 model");
    return PLANNER_OK;
}

/* --moe-shared-expert-overlap (TransformerConfig.__post_init__,
 * core_v0.15.0): shared experts (moe_shared_expert_intermediate_size); not
 * with --overlap-moe-expert-parallel-comm ("disable moe_shared_expert_overlap
 * when enabling overlap_moe_expert_parallel_comm"); shared_experts
 * recompute, which it also excludes, is not a planner module.  Its token
 * dispatcher depends on the release (knob_shared_overlap_flex_release). */
static planner_status shared_overlap_rule(const model *m, const strategy *s, planner_error *err)
{
    if (!s->shared_expert_overlap)
        return PLANNER_OK;
    if (m == NULL || m->moe.experts <= 0 || m->moe.shared_experts <= 0)
        FAIL("--moe-shared-expert-overlap needs shared experts");
    PIN_FAIL_S(PIN_SEO_EPO);
    PIN_FAIL_S(PIN_TMG_LN);
    return PLANNER_OK;
}

/* The shared-expert overlap's token dispatchers: core_v0.15.0 .. core_v0.17.x
 * alltoall only (transformer_config.py __post_init__: "moe_shared_expert_
 * overlap only works with alltoall token dispatcher"; moe/token_dispatcher.py
 * MoEFlexTokenDispatcher.set_shared_experts raises "Shared expert overlap is
 * not supported in Flex Token Dispatcher"); core_v0.18.0 and later alltoall
 * or flex ("... only works with alltoall or flex token dispatcher": Megatron-LM
 * ebfa13852f, #2207 "support shared expert overlap for FlexDispatcher", whose
 * MoEFlexTokenDispatcher launches the shared experts' fc1 after the dispatch
 * and their fc2 in combine_postprocess, as the alltoall dispatcher does). */
bool knob_shared_overlap_flex_release(megatron_version ver)
{
    return ver >= MEGATRON_0_18;
}

const char *knob_release_fix_conflict(const strategy_constraints *f, megatron_version ver)
{
    if (f->te_moe_graphs > 0 && !knob_te_moe_graphs_release(ver))
        return "te_moe_graphs=on: the MoE router and preprocessing graphs (--cuda-graph-scope "
               "moe_router moe_preprocess) come with core_v0.16.0 (--megatron-version 0.16)";
    if (f->shared_expert_overlap > 0 && f->flex_dispatcher > 0 &&
        !knob_shared_overlap_flex_release(ver))
        return "--moe-shared-expert-overlap runs with the flex token dispatcher from "
               "core_v0.18.0 (--megatron-version 0.18); earlier releases take it with the "
               "alltoall dispatcher only";
    return NULL;
}

/* The flex token dispatcher (core_v0.15.0 moe/token_dispatcher.py
 * MoEFlexTokenDispatcher, --moe-enable-deepep): MoE layers split over
 * tp x ep > 1 ranks ("Flex token dispatcher requires TPxEP > 1"); the
 * planner costs its node-aware dispatch, which needs ep > 1.  The
 * shared-expert overlap runs with it from core_v0.18.0
 * (knob_shared_overlap_flex_release; Megatron-Bridge's
 * apply_flex_dispatcher_backend turns the overlap off with it, a recipe's
 * choice). */
static planner_status flex_dispatcher_rule(const model *m, const strategy *s,
                                           planner_error *err)
{
    pin_vals pv = pins_of_strategy(s);
    if (m == NULL || m->moe.experts <= 0)
        pv.ep = 1;   /* no experts: as ep 1 */
    PIN_FAIL(PIN_FLEX_EP, &pv);
    return PLANNER_OK;
}

/* The flex dispatcher's backends, by release and GPU:
 *   DeepEP: core_v0.12.0 and later (CHANGELOG "DeepEP support"; up to
 *     core_v0.15.0 the only backend, --moe-enable-deepep).  Megatron-Bridge's
 *     apply_flex_dispatcher_backend (training/flex_dispatcher_backend.py)
 *     applies it on compute capability 8 and 9 and on B200/B300 only:
 *     "DeepEP is only applicable to Ampere, Hopper, and Blackwell
 *     (B200/B300) GPUs", not GB200/GB300's multi-node NVLink domain;
 *   HybridEP: core_v0.16.0 and later (Megatron-LM 3df200905e "Add the
 *     Hybrid-EP backend to the Flex Dispatcher", #2176;
 *     --moe-flex-dispatcher-backend), "Currently only "hybridep" backend
 *     supports the MNNVL case" (transformer_config.py), on compute
 *     capability 8 to 10: "GB200, GB300 with NVL72 and ... Ampere, Hopper,
 *     B200 and B300 GPUs" (apply_flex_dispatcher_backend), the backend of
 *     every Megatron-Bridge recipe the corpus ran with flex (fit/
 *     run_stacks.c: H100, B200, B300, GB200, GB300).
 * So: NVIDIA Ampere to Blackwell Ultra; HybridEP from core_v0.16.0;
 * core_v0.15.0 DeepEP, but not on an NVLink domain spanning nodes. */
static bool flex_gpu(const node_group *g)
{
    return g->gpu.gen >= GEN_AMPERE && g->gpu.gen <= GEN_BLACKWELL_ULTRA;
}

static bool mnnvl(const node_group *g)
{
    return g->gpu.nvlink_domain > g->gpus_per_node;
}

bool knob_flex_deepep(megatron_version ver)
{
    return ver < MEGATRON_0_16;
}

const char *knob_flex_backend(megatron_version ver, const node_group *g)
{
    if (g != NULL && !flex_gpu(g))
        return NULL;
    if (!knob_flex_deepep(ver))
        return "hybridep";
    return g != NULL && mnnvl(g) ? NULL : "deepep";
}

const char *knob_flex_backend_missing(megatron_version ver, const node_group *g)
{
    if (g != NULL && !flex_gpu(g))
        return "DeepEP and HybridEP run on NVIDIA Ampere to Blackwell GPUs only";
    if (knob_flex_backend(ver, g) == NULL)
        return "core_v0.15.0 has only DeepEP, which does not run across a multi-node "
               "NVLink domain; HybridEP, from core_v0.16.0, does";
    return "";
}

/* The router and preprocessing scopes came with core_v0.16.0 (its
 * --cuda-graph-scope takes a list of CudaGraphScope names, moe_router and
 * moe_preprocess among them); core_v0.15.0's takes one of full, attn and
 * full_iteration (arguments.py). */
bool knob_te_moe_graphs_release(megatron_version ver)
{
    return ver >= MEGATRON_0_16;
}

/* Transformer Engine graphs of the MoE router and dispatch preprocessing
 * (core_v0.16.0 transformer_config.py __post_init__): "moe cuda graph is only
 * supported for MoE"; moe_preprocess "only supported with moe_router";
 * scopes other than full_iteration "only supported with
 * --cuda-graph-impl=transformer_engine", full_iteration only with "local":
 * one --cuda-graph-impl, so not with the full-iteration graph (cuda_graph).
 * Both dispatchers take them: the alltoall one refuses moe_preprocess only
 * with a capacity factor or router padding for FP8 ("DtoH copies and
 * synchronizations in the preprocess step"), which the planner's dropless
 * MoE does not use; the cost model has a measured value with the flex
 * dispatcher only (layer_cost.c moe_host_fwd_s).  Not with full recompute:
 * "full recompute is only supported with full iteration CUDA graph"
 * (transformer_config.py __post_init__, core_v0.16.0 to core_v0.19.0). */
static planner_status te_moe_graphs_rule(const model *m, const strategy *s,
                                         planner_error *err)
{
    if (!s->te_moe_graphs)
        return PLANNER_OK;
    if (m == NULL || m->moe.experts <= 0)
        FAIL("the MoE router and preprocessing graphs (te_moe_graphs) need an MoE model");
    PIN_FAIL_S(PIN_TMG_CG);
    PIN_FAIL_S(PIN_TMG_FULL);
    PIN_FAIL_S(PIN_TMG_LN);
    return PLANNER_OK;
}

/* The decoder layers of s's largest model chunk. */
static int largest_chunk(const model *m, const strategy *s)
{
    int most = 0, vpp = s->vpp > 1 ? s->vpp : 1;
    for (int r = 0; r < s->pp && r < STRATEGY_MAX_STAGES; r++)
        for (int c = 0; c < vpp; c++) {
            int n = strategy_chunk_layers(s, m->layers, r, c, NULL);
            most = n > most ? n : most;
        }
    return most;
}

/* Whether full recompute re-makes every decoder layer of every chunk:
 * recompute_layers 0, uniform groups of 1, or a block covering the largest
 * chunk. */
static bool full_covers_all(const model *m, const strategy *s)
{
    if (s->recompute != RECOMPUTE_FULL || s->recompute_layers <= 0)
        return true;
    if (s->recompute_method == RECOMPUTE_UNIFORM)
        return s->recompute_layers == 1;
    return s->recompute_layers >= largest_chunk(m, s);
}

/* How many of the blocks rank r's chunk of n blocks holds that torchtitan's
 * layer-selective checkpointing wraps, `before` blocks of the rank's
 * earlier chunks counted (knob_ac_every_nth). */
static int nth_blocks(int before, int n, int every)
{
    return (before + n) / every - before / every;
}

/* Whether every N-th block (`every`) is s's block recompute on every rank:
 * each chunk's count of them is min(recompute_layers, its blocks). */
static bool every_nth_matches(const model *m, const strategy *s, int every)
{
    int vpp = s->vpp > 1 ? s->vpp : 1;
    for (int r = 0; r < s->pp && r < STRATEGY_MAX_STAGES; r++) {
        int before = 0;
        for (int c = 0; c < vpp; c++) {
            int n = strategy_chunk_layers(s, m->layers, r, c, NULL);
            int want = n < s->recompute_layers ? n : s->recompute_layers;
            if (n < 0 || nth_blocks(before, n, every) != want)
                return false;
            before += n;
        }
    }
    return true;
}

/* The blocks of the first chunk, rank-major, that holds any (0 when none):
 * the chunks before it on its rank hold none, so torchtitan's count starts
 * there (a user's layout may leave rank 0's first chunk to the embedding
 * alone). */
static int first_blocks(const model *m, const strategy *s)
{
    int vpp = s->vpp > 1 ? s->vpp : 1;
    for (int r = 0; r < s->pp && r < STRATEGY_MAX_STAGES; r++)
        for (int c = 0; c < vpp; c++) {
            int n = strategy_chunk_layers(s, m->layers, r, c, NULL);
            if (n != 0)
                return n > 0 ? n : 0;
        }
    return 0;
}

int knob_ac_every_nth(const model *m, const strategy *s)
{
    int n0, k0;
    if (m == NULL || s->recompute != RECOMPUTE_FULL)
        return 0;
    if (full_covers_all(m, s))
        return 1;
    if (s->recompute_method == RECOMPUTE_UNIFORM)
        return 0;
    n0 = first_blocks(m, s);
    k0 = n0 < s->recompute_layers ? n0 : s->recompute_layers;
    if (n0 <= 0 || k0 <= 0)
        return 0;
    /* that chunk, none before it: n0 / N = k0, so N in (n0 / (k0 + 1), n0 / k0] */
    for (int every = n0 / (k0 + 1) + 1; every <= n0 / k0; every++)
        if (every_nth_matches(m, s, every))
            return every;
    return 0;
}

/* The advice when s's full recompute is no every-N-th block of torchtitan
 * (STACK_RULE_FULL_EVERY_NTH): 0 (mode "full", every block) and, for block
 * recompute, the counts per chunk nearest s's below and above that are one
 * (recompute_layers is Megatron's --recompute-num-layers; each with its
 * selective_ac_option N, knob_ac_every_nth), into buf: "0, 26 (N 3) or 40
 * (N 2)". */
static void every_nth_advice(const model *m, const strategy *s, char *buf, size_t size)
{
    strategy t = *s;
    int most = largest_chunk(m, s), near[2] = {0, 0}, nth[2] = {0, 0}, n = 0;
    for (int k = 1; k < most && s->recompute_method != RECOMPUTE_UNIFORM; k++) {
        int side = k < s->recompute_layers ? 0 : 1;
        if (k == s->recompute_layers || (side == 1 && near[1] > 0))
            continue;
        t.recompute_layers = k;
        n = knob_ac_every_nth(m, &t);
        if (n > 1) {
            near[side] = k;
            nth[side] = n;
        }
    }
    n = (near[0] > 0) + (near[1] > 0);
    if (n == 0)
        snprintf(buf, size, "0");
    else if (n == 1)
        snprintf(buf, size, "0 or %d (N %d)", near[0] + near[1], nth[0] + nth[1]);
    else
        snprintf(buf, size, "0, %d (N %d) or %d (N %d)", near[0], nth[0], near[1], nth[1]);
}

/* Stack st's rules (stack_spec.rules, inputs/stack.h; sources in
 * inputs/stack.c) that knob k takes part in; every rule for k ==
 * KNOB_COUNT.  Messages name the stack's software (stack_spec.rules_by,
 * as the search's "refused by torchtitan's rules" does; the stack's own
 * name only for an input value: knob_stack_allows) and the --fix that
 * avoids the rule. */
static planner_status rule_stack(const model *m, const strategy *s, const stack_spec *st,
                                 knob_id k, planner_error *err)
{
    bool all = k == KNOB_COUNT, moe = m != NULL && m->moe.experts > 0;
    int cp = s->cp > 1 ? s->cp : 1, ep = moe && s->ep > 1 ? s->ep : 1;
    unsigned r = st != NULL ? st->rules : 0;
    const char *by = st != NULL ? st->rules_by : "";
    if ((r & STACK_RULE_DDP_ALONE) && (all || k == KNOB_ZERO) && s->zero == 0) {
        if (cp > 1)
            FAIL("%s shards the weights over the context-parallel ranks (FSDP over "
                 "dp_shard x cp): plan cp=%d with --fix zero=2 or 3", by, cp);
        if (ep > 1)
            FAIL("%s wraps a model with expert parallelism in FSDP (ep=%d): plan with "
                 "--fix zero=2 or 3", by, ep);
        if (s->dp > 1 && (s->tp > 1 || s->pp > 1))
            FAIL("%s runs DDP (zero=0) only as the sole parallelism (\"DDP has not "
                 "supported > 1D parallelism\"): plan with --fix zero=2 or 3", by);
    }
    if ((r & STACK_RULE_SP_WITH_TP) && (all || k == KNOB_SP) && s->tp > 1 && !s->sp)
        FAIL("%s's tensor parallelism always shards the sequence (SequenceParallel "
             "norms): plan tp=%d with --fix sp=on", by, s->tp);
    if ((r & STACK_RULE_ASYNC_TP_COMPILED) && (all || k == KNOB_TP_COMM_OVERLAP) &&
        s->tp_comm_overlap && !(m != NULL && m->torch_compile))
        FAIL("%s's async tensor parallelism (the plan's tp_comm_overlap) runs only with "
             "compiled blocks: plan with --torch-compile, or --fix tp_comm_overlap=off",
             by);
    if ((r & STACK_RULE_FULL_EVERY_NTH) && (all || k == KNOB_RECOMPUTE_LAYERS) &&
        m != NULL && s->recompute == RECOMPUTE_FULL && knob_ac_every_nth(m, s) == 0) {
        char fit[48] = "";
        if (err != NULL)
            every_nth_advice(m, s, fit, sizeof fit);
        FAIL("%s's full activation checkpointing wraps every block or every N-th "
             "(selective_ac_option N), not recompute_layers=%d%s: plan with --fix "
             "recompute_layers=%s", by, s->recompute_layers,
             s->recompute_method == RECOMPUTE_UNIFORM ? " (uniform)" : "", fit);
    }
    if ((r & STACK_RULE_SHARD_OVERLAPS) && (all || k == KNOB_OVERLAP_GRAD_REDUCE ||
                                             k == KNOB_OVERLAP_PARAM_GATHER) &&
        (s->dp > 1 || cp > 1)) {
        if (s->zero >= 2 && !s->overlap_grad_reduce)
            FAIL("%s's FSDP2 always overlaps its gradient reduce-scatter with the backward: "
                 "plan with --fix overlap_grad_reduce=on", by);
        if (s->zero == 3 && !s->overlap_param_gather)
            FAIL("%s's FSDP2 always prefetches the next block's all-gather: plan with "
                 "--fix overlap_param_gather=on", by);
    }
    if ((r & STACK_RULE_SHARD_NO_PIPE) && (all || k == KNOB_ZERO || k == KNOB_PP) &&
        s->pp > 1 && s->zero >= 2)
        FAIL("%s's pipeline engine refuses ZeRO-%d (\"ZeRO-2 and ZeRO-3 are incompatible "
             "with pipeline parallelism\"): plan pp=%d with --fix zero=0 or 1", by,
             s->zero, s->pp);
    if ((r & STACK_RULE_ETP_TP_OR_1) && (all || k == KNOB_ETP) && ep > 1 && s->etp > 1 &&
        s->etp != s->tp)
        FAIL("%s's expert tensor parallelism is tp or 1, not etp=%d with tp=%d", by,
             s->etp, s->tp);
    if ((r & STACK_RULE_ETP_1) && (all || k == KNOB_ETP) && moe && s->etp > 1)
        FAIL("%s's MoE keeps every expert whole on each tensor-parallel rank (no expert "
             "tensor parallelism): plan with --fix etp=1, not etp=%d", by, s->etp);
    if ((r & STACK_RULE_EP_IN_DP) && (all || k == KNOB_EP) && ep > 1 && s->dp % ep != 0)
        FAIL("%s takes the expert-parallel ranks from the data-parallel ones: ep=%d does not "
             "divide dp=%d", by, ep, s->dp);
    if ((r & STACK_RULE_OVERLAP_BY_ZERO) && (all || k == KNOB_OVERLAP_GRAD_REDUCE) &&
        s->overlap_grad_reduce && !stack_grad_reduce_overlaps(st, s->zero, s->pp))
        FAIL("%s does not overlap the gradient reduce at zero %d%s", by,
             s->zero, s->pp > 1 ? " with pipelining" : "");
    if ((r & STACK_RULE_TOPK_2) && (all || k == KNOB_EP) && moe && m->moe.top_k > 2)
        FAIL("%s's TopKGate routes top-1 or top-2 only (\"Only top-1 and top-2 gatings are "
             "supported.\"), not the model's top-%d", by, m->moe.top_k);
    return PLANNER_OK;
}

planner_status knob_stack_rule(const model *m, const strategy *s, knob_id k,
                               planner_error *err)
{
    return rule_stack(m, s, stack_get(s->stack), k, err);
}

planner_status knobs_stack_check(const model *m, const strategy *s, const stack_spec *st,
                                 planner_error *err)
{
    for (int k = 0; k < KNOB_COUNT; k++)
        if (!knob_stack_allows(st, (knob_id)k, knob_value(s, (knob_id)k))) {
            char v[KNOB_TEXT_MAX];
            FAIL("the %s stack has no %s=%s", st->name, knobs[k].key,
                 knob_text(s, (knob_id)k, false, v, sizeof v));
        }
    return rule_stack(m, s, st, KNOB_COUNT, err);
}

planner_status knob_rule(const model *m, const strategy *s, knob_id k, planner_error *err)
{
    const knob_info *ki = &knobs[k];
    int v = knob_value(s, k);
    if (v < ki->min || v > ki->max)
        FAIL("%s %d is not in %d..%d", ki->key, v, ki->min, ki->max);
    if (knob_stack_rule(m, s, k, err) != PLANNER_OK)
        return PLANNER_E_INPUT;
    switch (k) {
    case KNOB_TP: case KNOB_CP: case KNOB_EP:
        return rule_degree(m, s, k, err);
    case KNOB_ETP:
        return rule_etp(m, s, err);
    case KNOB_MBS:
        if (s->gbs % ((long)s->mbs * s->dp) != 0)
            FAIL("global batch %d is not a multiple of micro-batch %d x dp %d", s->gbs, s->mbs,
                 s->dp);
        return PLANNER_OK;
    case KNOB_VPP:
        PIN_FAIL_S(PIN_VPP_PP);
        if (s->vpp > 1 && strategy_microbatches(s) % s->pp != 0)
            FAIL("interleaving needs the micro-batches (%d) to be a multiple of pp %d",
                 strategy_microbatches(s), s->pp);
        return PLANNER_OK;
    case KNOB_SP:
        PIN_FAIL_S(PIN_SP_TP);
        /* MoE layers under tensor parallelism need sequence parallelism:
         * Megatron-Core's MoELayer.forward raises ValueError in training
         * when tensor_model_parallel_size > 1 without sequence_parallel
         * (moe/moe_layer.py, core_v0.15.0).  A stack without sequence
         * parallelism (DeepSpeed's MoE, Megatron-LM before 2022) runs its
         * own MoE layer, which has no such rule. */
        if (!s->sp && s->tp > 1 && m != NULL && m->moe.experts > 0 &&
            knob_stack_allows(stack_get(s->stack), KNOB_SP, 1))
            FAIL("MoE layers with tp %d need sequence parallelism (Megatron-Core MoELayer)",
                 s->tp);
        return PLANNER_OK;
    case KNOB_TP_COMM_OVERLAP:
        PIN_FAIL_S(PIN_TPO_SP);
        return PLANNER_OK;
    case KNOB_CP_COMM: case KNOB_CP_A2A:
        return rule_cp_comm(m, s, err);
    case KNOB_RECOMPUTE_LAYERS: case KNOB_RECOMPUTE_METHOD:
        return rule_recompute(m, s, err);
    case KNOB_RECOMPUTE_MODULES:
        if (recompute_conflict(s->recompute, -1, -1, s->recompute_modules) != NULL)
            FAIL("%s", recompute_conflict(s->recompute, -1, -1, s->recompute_modules));
        if ((s->recompute_modules & RC_MOD_MOE_ACT) && m->moe.experts == 0)
            FAIL("moe_act recompute needs MoE layers");
        if ((s->recompute_modules & RC_MOD_MLA_UP_PROJ) && m->mla.kv_lora_rank <= 0)
            FAIL("mla_up_proj recompute needs multi-latent attention");
        PIN_FAIL_S(PIN_TMG_LN);
        return PLANNER_OK;
    case KNOB_EP_COMM_OVERLAP:
        return ep_overlap_rule(m, s, err);
    case KNOB_SHARED_EXPERT_OVERLAP:
        return shared_overlap_rule(m, s, err);
    case KNOB_FLEX_DISPATCHER:
        return flex_dispatcher_rule(m, s, err);
    case KNOB_TE_MOE_GRAPHS:
        return te_moe_graphs_rule(m, s, err);
    case KNOB_GRAD_REDUCE_BF16:
        /* arguments.py validate_args reads --grad-reduce-in-bf16 under
         * --bf16 only (FP8 recipes keep bf16 parameters); fp16 models
         * reduce fp16 gradients anyway */
        if (s->grad_reduce_bf16 && m != NULL && (m->prec == PREC_FP16 || m->prec == PREC_FP32))
            FAIL("--grad-reduce-in-bf16 needs a bf16 model (bf16 parameters)");
        return PLANNER_OK;
    case KNOB_OPT_STATE:
        /* core_v0.15.0 optimizer_config.py __post_init__: the precision-
         * aware optimizer is "only supported with distributed optimizer";
         * its main-weight remainders need bf16 parameters, and an fp32
         * model has no lower-precision state to keep */
        if (s->opt_state != OPT_STATE_FP32 && s->zero != 1)
            FAIL("opt_state=bf16 or fp32_rem needs the distributed optimizer (zero 1)");
        if (s->opt_state != OPT_STATE_FP32 && m != NULL && m->prec == PREC_FP32)
            FAIL("opt_state=bf16 or fp32_rem needs a 16-bit model");
        return PLANNER_OK;
    case KNOB_OVERLAP_PARAM_GATHER:
        PIN_FAIL_S(PIN_OPG);
        return PLANNER_OK;
    default:
        return PLANNER_OK;
    }
}

/* ---- --fix ------------------------------------------------------------- */

/* "gpus" is a --fix key but not a knob. */
#define FIX_GPUS KNOB_COUNT

static int parse_whole(const char *text, long min, long max, int *out)
{
    char *end;
    long v;
    if (text[0] < '0' || text[0] > '9')
        return -1;
    v = strtol(text, &end, 10);
    if (*end != '\0' || v < min || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

/* A --fix spec the parser refuses: PLANNER_E_USAGE with the message in
 * *err (no position: the caller adds the option or the file's line). */
static planner_status fix_fail(planner_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static planner_status fix_fail(planner_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_vset(err, PLANNER_E_USAGE, NULL, 0, 0, NULL, fmt, ap);
    va_end(ap);
    return PLANNER_E_USAGE;
}

/* A KNOB_KIND_NAMED value: one of ki->names. */
static planner_status parse_named(const knob_info *ki, const char *val, int *out,
                                  planner_error *err)
{
    char list[128];
    size_t len = 0;
    const char *hint = suggest_closest(val, ki->names, (size_t)(ki->max + 1));
    for (int i = 0; i <= ki->max; i++) {
        if (strcmp(val, ki->names[i]) == 0) {
            *out = i;
            return PLANNER_OK;
        }
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i == 0 ? "" :
                                i == ki->max ? " or " : ", ", ki->names[i]);
    }
    return fix_fail(err, "%s: expected %s, got '%s'%s%s%s", ki->key, list, val,
                    hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
}

/* A KNOB_KIND_SET value: names of ki->names joined by '+', each at most once
 * (a repeated name is refused as a duplicate key is: a set names a member once). */
static planner_status parse_set(const knob_info *ki, const char *val, int *out,
                                planner_error *err)
{
    int v = 0, n = 0;
    const char *p = val;
    while (ki->names[n] != NULL)
        n++;
    for (;;) {
        const char *end = strchr(p, '+');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char word[32];
        int i;
        snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), p);
        for (i = 0; i < n && strcmp(word, ki->names[i]) != 0; i++)
            ;
        if (i == n || len >= sizeof word) {
            const char *hint = suggest_closest(word, ki->names, (size_t)n);
            char known[128];
            set_text(ki, (1 << n) - 1, known, sizeof known);
            return fix_fail(err, "%s: unknown name '%s' in '%s' (known: %s, joined by +)%s%s%s",
                            ki->key, word, val, known, hint ? " (did you mean '" : "",
                            hint ? hint : "", hint ? "'?)" : "");
        }
        if (v & (1 << i))
            return fix_fail(err, "%s: duplicate name '%s' in '%s'", ki->key, word, val);
        v |= 1 << i;
        if (end == NULL)
            break;
        p = end + 1;
    }
    *out = v;
    return PLANNER_OK;
}

/* Parses one VALUE of fix key `key` (a knob id, or FIX_GPUS) into *out. */
static planner_status parse_value(int key, const char *val, int *out, planner_error *err)
{
    static const char *const rc_names[] = {"none", "selective", "full"};
    static const char *const sw_names[] = {"on", "off"};
    const char *hint;
    if (key == FIX_GPUS) {
        if (parse_whole(val, 1, CLUSTER_MAX_GPUS, out) == 0)
            return PLANNER_OK;
        return fix_fail(err, "gpus: expected an integer in 1..%d, got '%s'", CLUSTER_MAX_GPUS,
                        val);
    }
    switch (knobs[key].kind) {
    case KNOB_KIND_BOOL:
        if (strcmp(val, "on") == 0 || strcmp(val, "true") == 0 || strcmp(val, "1") == 0) {
            *out = 1;
            return PLANNER_OK;
        }
        if (strcmp(val, "off") == 0 || strcmp(val, "false") == 0 || strcmp(val, "0") == 0) {
            *out = 0;
            return PLANNER_OK;
        }
        hint = suggest_closest(val, sw_names, 2);
        return fix_fail(err, "%s: expected on or off, got '%s'%s%s%s",
                        knobs[key].key, val, hint ? " (did you mean '" : "", hint ? hint : "",
                        hint ? "'?)" : "");
    case KNOB_KIND_RECOMPUTE:
        for (int i = 0; i < 3; i++)
            if (strcmp(val, rc_names[i]) == 0) {
                *out = i;
                return PLANNER_OK;
            }
        hint = suggest_closest(val, rc_names, 3);
        return fix_fail(err,
                        "%s: expected none, selective or full, got '%s'%s%s%s", knobs[key].key, val,
                        hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
    case KNOB_KIND_CP_COMM:
        for (int i = 0; i < CP_COMM_COUNT; i++)
            if (strcmp(val, cp_comm_names[i]) == 0) {
                *out = i;
                return PLANNER_OK;
            }
        hint = suggest_closest(val, cp_comm_names, CP_COMM_COUNT);
        return fix_fail(err,
                        "%s: expected p2p, a2a, all_gather or a2a+p2p, got '%s'%s%s%s",
                        knobs[key].key, val, hint ? " (did you mean '" : "", hint ? hint : "",
                        hint ? "'?)" : "");
    case KNOB_KIND_NAMED:
        return parse_named(&knobs[key], val, out, err);
    case KNOB_KIND_SET:
        return parse_set(&knobs[key], val, out, err);
    case KNOB_KIND_INT:
        break;
    }
    if (parse_whole(val, knobs[key].min, knobs[key].max, out) == 0)
        return PLANNER_OK;
    if (key == KNOB_ZERO)
        return fix_fail(err, "zero: expected 0, 1, 2 or 3, got '%s'", val);
    return fix_fail(err, "%s: expected an integer in %d..%d, got '%s'", knobs[key].key,
                    knobs[key].min, knobs[key].max, val);
}

/* The fix keys: the fixable knobs' keys, then "gpus"; ids[] their key ids. */
static int fix_keys(const char **names, int *ids)
{
    int n = 0;
    for (int k = 0; k < KNOB_COUNT; k++)
        if (knobs[k].fix_offset != KNOB_NOT_FIXABLE) {
            ids[n] = k;
            names[n++] = knobs[k].key;
        }
    ids[n] = FIX_GPUS;
    names[n++] = "gpus";
    return n;
}

int knobs_fix_keys_join(char *buf, size_t size, const char *sep)
{
    const char *names[KNOB_COUNT + 1];
    int ids[KNOB_COUNT + 1], n = fix_keys(names, ids);
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        int w = snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0, "%s%s",
                         i ? sep : "", names[i]);
        len += (size_t)w;
    }
    return (int)len;
}

/* Copies [b, e) into dst with surrounding blanks trimmed. */
static void trimmed(char *dst, size_t size, const char *b, const char *e)
{
    size_t n;
    while (b < e && (*b == ' ' || *b == '\t'))
        b++;
    while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    n = (size_t)(e - b);
    if (n >= size)
        n = size - 1;
    memcpy(dst, b, n);
    dst[n] = '\0';
}

/* Finds fix key `key` among names[0..n): its index, or -1 with the message
 * in *err. */
static int fix_key_index(const char *key, const char **names, int n, planner_error *err)
{
    char known[512];
    size_t len = 0;
    const char *hint;
    for (int i = 0; i < n; i++)
        if (strcmp(key, names[i]) == 0)
            return i;
    hint = suggest_closest(key, names, (size_t)n);
    if (hint != NULL) {
        fix_fail(err, "unknown key '%s' (did you mean '%s'?)", key, hint);
        return -1;
    }
    known[0] = '\0';
    for (int i = 0; i < n && len < sizeof known; i++)
        len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", i ? " " : "", names[i]);
    fix_fail(err, "unknown key '%s' (known: %s)", key, known);
    return -1;
}

/* The list into *out: PLANNER_OK, or PLANNER_E_USAGE with the message in
 * *err (*out untouched). */
static planner_status parse_list(const char *text, strategy_constraints *out,
                                 planner_error *err)
{
    strategy_constraints c = *out;
    const char *names[KNOB_COUNT + 1];
    int ids[KNOB_COUNT + 1], n = fix_keys(names, ids);
    bool seen[KNOB_COUNT + 1] = {false};
    const char *item = text, *why;
    int index = 0;
    pin_vals pins;
    char pin_buf[96];

    if (text == NULL || text[0] == '\0')
        return fix_fail(err, "empty constraint list (expected KEY=VALUE,...)");
    for (;;) {
        const char *comma = strchr(item, ',');
        const char *end = comma ? comma : item + strlen(item);
        const char *eq = memchr(item, '=', (size_t)(end - item));
        char whole[128], key[64], val[64];
        int i, v = 0;

        index++;
        trimmed(whole, sizeof whole, item, end);
        if (whole[0] == '\0')
            return fix_fail(err, "empty item %d in '%s' (expected KEY=VALUE)", index, text);
        if (eq == NULL)
            return fix_fail(err, "'%s': expected KEY=VALUE", whole);
        trimmed(key, sizeof key, item, eq);
        trimmed(val, sizeof val, eq + 1, end);
        if ((i = fix_key_index(key, names, n, err)) < 0)
            return PLANNER_E_USAGE;
        if (seen[i])
            return fix_fail(err, "duplicate key '%s'", key);
        seen[i] = true;
        if (val[0] == '\0')
            return fix_fail(err, "%s: missing value", key);
        if (parse_value(ids[i], val, &v, err) != PLANNER_OK)
            return PLANNER_E_USAGE;
        *(int *)(void *)((char *)&c + (ids[i] == FIX_GPUS ? offsetof(strategy_constraints, gpus)
                                                          : knobs[ids[i]].fix_offset)) = v;
        if (comma == NULL)
            break;
        item = comma + 1;
    }
    /* a contradiction among the pinned knobs is the user's: the search
     * would override one of them */
    if ((why = recompute_conflict(c.recompute, c.recompute_layers, c.recompute_method,
                                  c.recompute_modules)) != NULL)
        return fix_fail(err, "'%s': %s", text, why);
    /* pinned modules pin selective recompute: Megatron-Core reads
     * recompute_modules only under recompute_granularity "selective"
     * (transformer_layer.py TransformerLayer.__init__, core_v0.15.0 ..
     * core_v0.19.0), so a free recompute would search none and full, where
     * the pin does nothing */
    if (c.recompute < 0 && c.recompute_modules > 0)
        c.recompute = RECOMPUTE_SELECTIVE;
    pins = pins_of_fix(&c);
    for (int r = 0; r < PIN_RULES; r++)
        if (pin_broken((pin_rule)r, &pins))
            return fix_fail(err, "'%s': %s", text,
                            pin_message((pin_rule)r, &pins, pin_buf, sizeof pin_buf));
    *out = c;
    return PLANNER_OK;
}

planner_status constraints_parse(strategy_constraints *out, const char *text,
                                 planner_error *err)
{
    return parse_list(text, out, err);
}

void constraints_fill(strategy_constraints *dst, const strategy_constraints *src)
{
    for (int k = 0; k < KNOB_COUNT; k++) {
        const int *from = fix_slot(src, (knob_id)k);
        int *to;
        if (from == NULL || *from < knobs[k].min)
            continue;   /* not a --fix key, or free in src */
        to = (int *)(void *)((char *)dst + knobs[k].fix_offset);
        if (*to < knobs[k].min)
            *to = *from;
    }
    if (dst->gpus <= 0 && src->gpus > 0)
        dst->gpus = src->gpus;
}
