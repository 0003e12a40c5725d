/* run_stacks.c: which software stack each source of the validation corpus
 * ran, for runs whose record has no "stack" (a run's own "stack" wins:
 * validate.c).  One rule per source (or per part of a source whose rows ran
 * different software), in order, first match wins; the reason is the
 * evidence, from the source itself (docs/validation.md "Stacks").  Text
 * matching is plain substring of the run's "source" and prefix of its "id",
 * so runs files that quote the same sources get the same stacks; unknown
 * sources are megatron-core (the default).  A rule may also name what its
 * source's recipes set that the runs schema has no field for (`recipe`, as
 * --fix text), with where the recipe says so.
 */
#include <string.h>
#include "fit/run_stacks.h"

typedef struct run_stack_rule {
    const char *source_has;     /* substring of the run's source */
    const char *id_prefix;      /* NULL: any id */
    const char *stack;
    const char *why;
    const char *recipe;         /* --fix text of the recipes' settings, or NULL */
} run_stack_rule;

static const run_stack_rule k_rules[] = {
    /* Megatron-LM v1.x checkpointed every layer's activations: the README's
     * pretrain_gpt2 examples pass --checkpoint-activations, and the v1.0
     * release note (nv-adlr.github.io/MegatronLMV1, 2020-05-15) counts the
     * 1.2B model at batch 8 on one DGX-2H V100 as 62.4 TFLOP/s over its
     * 1288 ms iteration: 80.4 TFLOP, which is Megatron's FLOPs formula with
     * the recompute's extra forward, 96 B s l h^2 (1 + s/6h + V/16lh) =
     * 80.6 TFLOP at B 8, s 1024, l 24, h 1920, V 51200 (61.7 without the
     * re-run forward).  Megatron-LM v1.1 had no micro-batches: the batch is
     * one micro-batch, which needs the recompute to fit. */
    {"Megatron-LM README (Sep 2020)", NULL, "megatron-lm-2020",
     "the README's scaling tables as of Sep 2020 (Megatron-LM v1.1: tensor parallelism, "
     "checkpointed activations, local DDP, unfused attention)",
     "recompute=full"},
    {"Narayanan et al.", "sc21_t2_zero3_", "deepspeed",
     "SC21 Table 2 compares PTD-P with DeepSpeed's ZeRO-3 without model parallelism: these "
     "rows ran DeepSpeed", NULL},
    {"Narayanan et al.", NULL, "megatron-lm-2021",
     "the SC21 paper's own PTD-P runs (interleaved 1F1B, scatter/gather, no sequence "
     "parallelism, no distributed optimizer)", NULL},
    /* The README's GPT-3 Example text (each iteration around 32 s, 138
     * TFLOP/s per GPU on 1024 A100) and examples/pretrain_gpt3_175B.sh came
     * in Megatron-LM 152aab304d (2021-01-11), before the interleaved
     * schedule (dcef906978, 2021-02-13: the script never passes
     * --num-layers-per-virtual-pipeline-stage) and the scatter/gather of
     * pipeline activations (27fc468964, 2021-01-20; on by default from
     * 72e4230bb5, 2021-02-16): its training.py ran 1F1B without
     * interleaving, communicate() sent the whole (seq, mbs, hidden) tensor
     * from every TP rank, local DDP after the backward, with the script's
     * --fp16 --checkpoint-activations: the knobs of megatron-lm-2020 */
    {"'GPT-3 Example' section (2021 onward)", NULL, "megatron-lm-2020",
     "the README's GPT-3 175B figure (32 s per iteration on 1024 A100) and its script came "
     "in Jan 2021 (152aab304d), before interleaving and the scatter/gather of activations",
     NULL},
    {"Korthikanti et al.", NULL, "megatron-lm-2022",
     "the paper introduces sequence parallelism and selective recompute (Megatron-LM v3.0); "
     "its runs predate the distributed optimizer and flash attention", NULL},
    {"Megatron-Core r0.8.0", NULL, "megatron-core",
     "Megatron-Core r0.8.0 (TE, distributed optimizer, overlaps; Megatron-LM's --bf16 turns "
     "--accumulate-allreduce-grads-in-fp32 on: fp32 gradients)", NULL},
    /* Megatron-LM's functional tests (tests/functional_tests/test_cases,
     * golden values of 2025-10 to 2026-07) run pretrain_gpt.py of the
     * commit under test with Transformer Engine: Megatron-Core of the
     * stack's releases; their configs name every knob the rows use, and
     * --bf16 keeps the gradients in fp32 (the rows say so themselves) */
    {"NVIDIA/Megatron-LM functional tests", NULL, "megatron-core",
     "Megatron-LM's CI runs pretrain_gpt.py (Megatron-Core, Transformer Engine) of the commit "
     "under test on the model_config.yaml of each test case", NULL},
    /* torchtitan 9dec370 torchtitan/config_manager.py:
     * --experimental.context_parallel_rotate_method defaults to "allgather"
     * (PyTorch's _ContextParallelOptions.rotate_method, torch/distributed/
     * tensor/experimental/_attention.py, defaults to ALL_GATHER too): its
     * CP runs all-gather K and V (_AllGatherRotater); the type applies to
     * runs with cp > 1 only (validate.c load_recipe) */
    {"pytorch/torchtitan", NULL, "pytorch-fsdp2",
     "torchtitan's benchmarks ran its own trainer: FSDP2 fully_shard, DTensor TP, torch "
     "pipelining and context parallel (K/V all-gathered: its default rotate method), its "
     "activation-checkpointing policies", "cp_comm=all_gather"},
    /* NeMo-Framework-Launcher 24.07 examples/training/gpt/h100/5b_fp8_8node.sh,
     * 20b_fp8_8node.sh, 175b_fp8_16node.sh and llama/h100/llama{2_7b,2_13b,
     * 2_70b,3_8b,3_70b}_fp8.sh: +training.model.optim.grad_sync_dtype=bf16 (apex
     * DistributedFusedAdam: the gradient buffer and its reduce-scatter in
     * bf16, once per step under no_sync); conf/training/nemotron/
     * nemotron_340b.yaml sets grad_sync_dtype: bf16 itself */
    /* NeMo-Framework-Launcher 24.07 launcher_scripts/conf/training/nemotron/
     * nemotron_340b.yaml (the corpus's Nemotron-4 340B row, which names no
     * model definition, hence a rule by id rather than a model fact): optim
     * name distributed_fused_adam with dtype bf16 and grad_sync_dtype bf16.
     * NeMo r2.0.0rc1 (the 24.07 container) nemo/core/optim/distributed_adam.py
     * MegatronDistributedFusedAdam passes dtype to Apex's DistributedFusedAdam
     * as the optimizer state's dtype (bf16 moments; megatron_base_model.py
     * setup_optimization: no main-weight copy, store_params False, as the
     * dtype equals the bf16 model's), 4 bytes per parameter, which
     * opt_state=bf16 counts as Megatron's precision-aware 6
     * (memory_optimizer_bytes).  The launcher's
     * GPT and Llama H100 scripts and configs of the release set no
     * optim.dtype (fp32 state), megatron_amp_O2 true with bf16 precision and
     * no fp8_params (conf/training/gpt3/{5b,20b,175b}.yaml, llama/
     * llama{2_7b,2_13b,2_70b,3_8b,3_70b}.yaml): NeMo's setup_optimization
     * then stores the fp32 main weights as 16-bit remainders beside the bf16
     * parameters (store_params False, store_param_remainders True), fp32
     * moments: opt_state=fp32_rem, 10 bytes a parameter
     * (memory_optimizer_bytes). */
    {"NeMo 24.07", "nemo2407_h100_nemotron_340b", "megatron-core",
     "NeMo 24.07 runs Megatron-Core models with NeMo's distributed Adam; nemotron_340b.yaml "
     "keeps its state in bf16 (optim.dtype bf16) and reduces gradients in bf16 "
     "(grad_sync_dtype bf16)",
     "grad_reduce_bf16=on,opt_state=bf16"},
    {"NeMo 24.07", NULL, "megatron-core",
     "NeMo 24.07 runs Megatron-Core models with NeMo's distributed Adam; its H100 performance "
     "scripts reduce gradients in bf16 (optim.grad_sync_dtype=bf16), and it keeps the fp32 "
     "main weights as 16-bit remainders of the bf16 parameters (store_param_remainders)",
     "grad_reduce_bf16=on,opt_state=fp32_rem"},
    /* Megatron-Bridge v0.2.0-v0.5.0 (the 25.11-26.06 containers)
     * scripts/performance/configs: set_llama3_common_configs (llama3 and
     * llama31) and the DeepSeek, gpt-oss and Qwen3 configs set
     * mixed_precision.grad_reduce_in_fp32 = ddp.grad_reduce_in_fp32 = False */
    {"Megatron-Bridge", NULL, "megatron-core",
     "Megatron-Bridge containers run Megatron-Core with tuned recipes; their performance "
     "configs turn grad_reduce_in_fp32 off (bf16 gradients)", "grad_reduce_bf16=on"},
    {"NeMo", NULL, "megatron-core",
     "NeMo / Megatron-Bridge containers run Megatron-Core with tuned recipes", NULL},
};

#define N_RULES (sizeof k_rules / sizeof k_rules[0])

/* What a release's recipes set for some systems and precisions only: a
 * source's rule cannot say it, since one table mixes GPUs and formats. */
typedef struct run_recipe_fact {
    const char *source_has;     /* substring of the run's source */
    const char *model_has;      /* substring of the run's model name; NULL: any */
    const char *gpus;           /* the catalog names it applies to, ' '-separated */
    const char *precisions;     /* the run's precision, ' '-separated */
    const char *recipe;         /* --fix text */
    const char *why;
} run_recipe_fact;

static const run_recipe_fact k_facts[] = {
    /* Megatron-Bridge v0.6.0 (the 26.08 container), perf_recipes: the
     * GB200/GB300 MXFP8 configs of Qwen3 (qwen/common.py
     * _enable_hybridep_full_iteration_mxfp8), DeepSeek-V3 and gpt-oss set
     * cuda_graph_impl = "full_iteration" (Megatron-Core's
     * FullCudaGraphWrapper: every micro-batch's forward and backward in one
     * graph), with moe_expert_rank_capacity_factor 1.5 and moe_paged_stash
     * for the static shapes a graph needs, the HybridEP flex dispatcher and
     * the all-to-all overlap.  Their B200/B300 and bf16 configs keep
     * per-module TE graphs (router, preprocessing) or none. */
    /* The same helpers (qwen/common.py _enable_hybridep_full_iteration_mxfp8,
     * deepseek/common.py _enable_deepseek_full_iteration_mxfp8, gpt_oss/
     * common.py _apply_gpt_oss_120b_full_iter_fp8mx_configs) also set
     * comm_overlap.overlap_moe_expert_parallel_comm = True (Megatron-Core's
     * combined 1F1B schedule: one micro-batch's dispatch and combine under
     * another's compute, ep_comm_overlap) with delay_wgrad_compute, and
     * moe_flex_dispatcher_backend = "hybridep" (the flex dispatcher). */
    {"26.08 NeMo container", NULL, "GB200 GB300", "mxfp8",
     "cuda_graph=on,ep_comm_overlap=on,flex_dispatcher=on",
     "Megatron-Bridge 26.08's GB200/GB300 MXFP8 recipes capture the whole iteration in a CUDA "
     "graph (cuda_graph_impl = \"full_iteration\"), overlap the MoE all-to-alls "
     "(overlap_moe_expert_parallel_comm) and run HybridEP's flex token dispatcher"},
    /* Megatron-Bridge scripts/performance/configs/deepseek/
     * deepseek_workload_base_configs.py (2026, the revision with the 26.06
     * GB300 row's own config, DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_MX_
     * GBS15360, v0.5.0): the GB300 FP8_MX config it derives from sets
     * cuda_graph_impl = "full_iteration" and moe_a2a_overlap=True (the
     * all-to-all overlap, ep_comm_overlap) */
    {"26.06 NeMo container", "DeepSeek-V3", "GB300", "mxfp8", "cuda_graph=on,ep_comm_overlap=on",
     "Megatron-Bridge 26.06's DeepSeek-V3 GB300 MXFP8 recipe captures the whole iteration in a "
     "CUDA graph (cuda_graph_impl = \"full_iteration\") and overlaps the MoE all-to-alls "
     "(moe_a2a_overlap)"},
    /* Megatron-Bridge v0.5.0 (the 26.06 container) scripts/performance/
     * configs/qwen/qwen3_workload_base_configs.py: QWEN3_30B_A3B_PRETRAIN_
     * CONFIG_B300_FP8_MX_V1 (8 GPUs, ep 8, mbs 8, gbs 512: the corpus's
     * mbridge_2606_b300_qwen330ba3b_mxfp8_8gpu_* row) derives from the
     * FP8_CS one with cuda_graph_impl = "full_iteration" and
     * moe_a2a_overlap = True (set_moe_a2a_overlap_overrides:
     * overlap_moe_expert_parallel_comm, delay_wgrad_compute), as its GB200
     * and GB300 FP8_MX configs do; its B300 BF16 and FP8_CS configs keep the
     * TE graphs of the router and preprocessing. */
    {"26.06 NeMo container", "Qwen3-30B-A3B", "B300", "mxfp8", "cuda_graph=on,ep_comm_overlap=on",
     "Megatron-Bridge 26.06's Qwen3-30B-A3B B300 MXFP8 recipe captures the whole iteration in a "
     "CUDA graph (cuda_graph_impl = \"full_iteration\") and overlaps the MoE all-to-alls "
     "(moe_a2a_overlap)"},
    /* Megatron-Bridge scripts/performance/configs/deepseek/: both
     * revisions read, workload_base_configs.py (2025: DEEPSEEK_V3_GB200_*
     * and _B200_* BASE_CONFIG) and deepseek_workload_base_configs.py (2026:
     * _GB200_BF16, _GB200_FP8_MX, every _B200_ and _B300_ V1 config), have
     * the DeepSeek-V3 recipes on GB200, B200 and B300 recompute MLA's
     * up-projections (recompute_modules with "mla_up_proj"; the 2025 GB200
     * FP8_MX one "mlp" too: not given here, the module both revisions
     * share is).  GB300's differ between revisions ("mlp" + "moe_act",
     * "moe_act", "mla_up_proj", none): no fact, the search chooses */
    {"Megatron-Bridge", "DeepSeek-V3", "GB200 B200 B300", "bf16 mxfp8",
     "recompute=selective,recompute_modules=mla_up_proj",
     "Megatron-Bridge's DeepSeek-V3 recipes on GB200, B200 and B300 recompute MLA's "
     "up-projections (recompute_modules mla_up_proj)"},
    /* Megatron-Bridge v0.3.0 (the 26.02 container) scripts/performance/
     * configs/gpt_oss/gpt_oss_workload_base_configs.py: GPT_OSS_120B_
     * PRETRAIN_CONFIG_B200_BF16_V2 (64 GPUs, ep 64, mbs 4, gbs 1280: the
     * corpus's mbridge_2602_b200_gptoss120b_bf16_* row, knob for knob) sets
     * recompute_modules ["layernorm", "moe_act"], which utils/overrides.py
     * _set_recompute_overrides makes selective (recompute_granularity =
     * "selective"; Megatron-Core core_v0.15.0 transformer_config.py reads
     * recompute_modules only then).  v0.2.0 (25.11) set the modules without
     * the granularity (scripts/performance/utils/helpers.py
     * set_recompute_overrides, fixed in v0.2.1 by c9dd05869 "selective
     * granularity recompute"): its gpt-oss recipes recomputed nothing but
     * through --recompute_num_layers (full): no fact there.  The B300 and
     * GB300 configs recompute nothing; the 26.02 B300 row has none. */
    {"26.02 NeMo container", "gpt-oss", "B200", "bf16",
     "recompute=selective,recompute_modules=layernorm+moe_act",
     "Megatron-Bridge 26.02's gpt-oss-120b B200 BF16 recipe recomputes the pre-MLP norm and the "
     "experts' activation (recompute_modules layernorm, moe_act)"},
    /* Megatron-Bridge v0.5.0 (the 26.06 container) scripts/performance/
     * configs/qwen/qwen3_workload_base_configs.py: QWEN3_30B_A3B_PRETRAIN_
     * CONFIG_H100_FP8_CS_V1 (16 GPUs, ep 16, gbs 1024) sets
     * moe_flex_dispatcher_backend = "hybridep", which
     * apply_flex_dispatcher_backend (src/megatron/bridge/training/
     * flex_dispatcher_backend.py) turns into the flex token dispatcher on
     * Hopper.  The 25.11 and 26.02.01 H100 configs of the model keep the
     * alltoall dispatcher, as do the H100 Qwen3-235B ones of 25.11 (no
     * backend set). */
    {"26.06 NeMo container", "Qwen3-30B-A3B", "H100-SXM", "fp8", "flex_dispatcher=on",
     "Megatron-Bridge 26.06's Qwen3-30B-A3B H100 FP8 recipe runs the flex token dispatcher with "
     "HybridEP (moe_flex_dispatcher_backend = \"hybridep\")"},
    /* moe_flex_dispatcher_backend = "hybridep" (apply_flex_dispatcher_backend:
     * the flex token dispatcher), per scripts/performance/configs (v0.2.0 ..
     * v0.5.0; the 26.08 GB200/GB300 MXFP8 recipes' helpers likewise, above):
     * every GB200/GB300 config of Qwen3-235B-A22B, Qwen3-30B-A3B and
     * DeepSeek-V3 from 2025-11-20 on; DeepSeek-V3 on B200/B300 from v0.4.0
     * (26.04; v0.2.0's B200 config sets none: the alltoall dispatcher);
     * v0.5.0's (26.06) B300 Qwen3-30B-A3B and gpt-oss-120b configs.  The
     * B200/H100 Qwen3 and the other gpt-oss configs set none. */
    {"Megatron-Bridge", "Qwen3", "GB200 GB300", "bf16 fp8 mxfp8", "flex_dispatcher=on",
     "Megatron-Bridge's GB200/GB300 Qwen3 recipes run the flex token dispatcher with HybridEP "
     "(moe_flex_dispatcher_backend = \"hybridep\")"},
    {"Megatron-Bridge", "DeepSeek-V3", "GB200 GB300", "bf16 fp8 mxfp8", "flex_dispatcher=on",
     "Megatron-Bridge's GB200/GB300 DeepSeek-V3 recipes run the flex token dispatcher with "
     "HybridEP (moe_flex_dispatcher_backend = \"hybridep\")"},
    {"26.04 NeMo container", "DeepSeek-V3", "B200 B300", "bf16 fp8 mxfp8", "flex_dispatcher=on",
     "Megatron-Bridge 26.04's B200/B300 DeepSeek-V3 recipes run the flex token dispatcher with "
     "HybridEP"},
    {"26.06 NeMo container", "DeepSeek-V3", "B200 B300", "bf16 fp8 mxfp8", "flex_dispatcher=on",
     "Megatron-Bridge 26.06's B200/B300 DeepSeek-V3 recipes run the flex token dispatcher with "
     "HybridEP"},
    {"26.06 NeMo container", "Qwen3-30B", "B300", "bf16 fp8 mxfp8", "flex_dispatcher=on",
     "Megatron-Bridge 26.06's B300 Qwen3-30B-A3B recipes run the flex token dispatcher with "
     "HybridEP"},
    {"26.06 NeMo container", "gpt-oss", "B300", "bf16 mxfp8", "flex_dispatcher=on",
     "Megatron-Bridge 26.06's B300 gpt-oss recipes run the flex token dispatcher with HybridEP"},
    /* Megatron-Bridge v0.3.1 (the 26.02.01 container) scripts/performance/
     * configs/qwen3/qwen3_workload_base_configs.py: QWEN3_235B_A22B_PRETRAIN_
     * CONFIG_GB200_FP8_MX_V2 and _GB300_FP8_MX_V2 are the corpus's 26.02.01
     * GB200 / GB300 rows knob for knob (pp 8 ep 32 mbs 1 / pp 4 ep 32 mbs 2,
     * gbs 8192) and set no virtual_pipeline_model_parallel_size, which
     * set_workload_base_configs writes over the recipe's: no interleaving,
     * the table's vp n/a (docs/validation.md MoE) */
    {"26.02.01 NeMo container", "Qwen3-235B", "GB200 GB300", "mxfp8", "vpp=1",
     "Megatron-Bridge 26.02.01's Qwen3-235B-A22B GB200/GB300 MXFP8 configs set no virtual "
     "pipeline size (the table's vp n/a): no interleaving"},
    /* Megatron-Bridge v0.2.0 (the 25.11 container) scripts/performance/
     * configs/qwen3/workload_base_configs.py: QWEN3_235B_A22B_H100_FP8_CS_
     * BASE_CONFIG (256 GPUs, tp 2, pp 8, vpp 4, ep 32, etp 1, gbs 2048,
     * mbs 1: the corpus's mbridge_2511_h100_qwen3235ba22b_fp8cs_* row, knob
     * for knob) sets moe_a2a_overlap=True, which utils/helpers.py turns
     * into comm_overlap.overlap_moe_expert_parallel_comm (with
     * delay_wgrad_compute); "cp: cuda graph fine grained scope | hybridEP |
     * a2a overlap (1348) into r0.2.0" (2025-11-21) put it in the release.
     * The 25.11 table's other H100/B200 Qwen3 rows are not their configs
     * (B200 Qwen3-235B vp 2 against 4, H100 Qwen3-30B vp 24 mbs 2 against
     * vp 12 mbs 1): no fact. */
    {"25.11 NeMo container", "Qwen3-235B", "H100-SXM", "fp8", "ep_comm_overlap=on",
     "Megatron-Bridge 25.11's Qwen3-235B-A22B H100 FP8 recipe overlaps the MoE all-to-alls "
     "(moe_a2a_overlap=True)"},
    /* Megatron-Bridge v0.2.0-v0.5.1 (the 25.11-26.06 containers) scripts/
     * performance/configs/llama{31,}/llama31_llm_pretrain.py: every
     * llama31_405b_pretrain_config_<gpu> ends with
     * cfg.comm_overlap.tp_comm_overlap = False if precision == "nvfp4" (the
     * userbuffers TP overlap stays on for bf16 and FP8): NVFP4's TP
     * all-gathers and reduce-scatters are not hidden under its GEMMs */
    {"Megatron-Bridge", "Llama 3.1 405B", "GB200 GB300 B200 B300", "nvfp4", "tp_comm_overlap=off",
     "Megatron-Bridge's Llama 3.1 405B NVFP4 recipes turn the TP communication overlap off "
     "(tp_comm_overlap = False if precision == \"nvfp4\")"},
    /* Per-module Transformer Engine CUDA graphs (cuda_graph_impl =
     * "transformer_engine", cuda_graph_scope ["moe_router",
     * "moe_preprocess"], some with "attn"), per Megatron-Bridge's
     * scripts/performance/configs of each release: v0.2.0 (25.11)
     * qwen3/workload_base_configs.py every GB200/GB300 Qwen3-235B-A22B and
     * Qwen3-30B-A3B config and the B200 Qwen3-30B-A3B ones,
     * deepseek/workload_base_configs.py DEEPSEEK_V3_GB200/GB300_BASE_CONFIG,
     * gpt_oss/workload_base_configs.py GPT_OSS_120B_GB300_BF16_BASE_CONFIG;
     * v0.3.0 (26.02) qwen/qwen3_workload_base_configs.py QWEN3_30B_A3B_
     * PRETRAIN_CONFIG_B200_FP8_CS_V1 (= FP8_MX) and gpt_oss/gpt_oss_workload_
     * base_configs.py GPT_OSS_120B_PRETRAIN_CONFIG_B300_BF16_V1/V2; v0.3.1
     * (26.02.01) QWEN3_235B_A22B_PRETRAIN_CONFIG_GB200/GB300_FP8_MX_V2 (from
     * their V1); v0.5.0 (26.06) GPT_OSS_120B_PRETRAIN_CONFIG_B300_BF16_V1
     * (= FP8_MX_V1; V2 from V1).  None in the H100 Qwen3-30B-A3B FP8
     * configs of any release, the B200/B300 DeepSeek-V3 ones (v0.2.0-v0.5.0),
     * the GB200/B200/H100 gpt-oss ones or the B200/H100 Qwen3-235B-A22B ones.
     * (The 26.08 GB200/GB300 MXFP8 rows capture the whole iteration:
     * cuda_graph, above.)  The knob te_moe_graphs (model/knobs.c). */
    {"25.11 NeMo container", "Qwen3", "GB200 GB300", "bf16 fp8 mxfp8", "te_moe_graphs=on",
     "Megatron-Bridge 25.11's GB200/GB300 Qwen3 recipes capture the router and the dispatch "
     "preprocessing in Transformer Engine CUDA graphs (cuda_graph_scope moe_router, "
     "moe_preprocess)"},
    {"25.11 NeMo container", "Qwen3-30B", "B200", "bf16 fp8 mxfp8", "te_moe_graphs=on",
     "Megatron-Bridge 25.11's B200 Qwen3-30B-A3B recipes capture the router and the dispatch "
     "preprocessing in Transformer Engine CUDA graphs"},
    {"25.11 NeMo container", "DeepSeek-V3", "GB200 GB300", "bf16 fp8 mxfp8", "te_moe_graphs=on",
     "Megatron-Bridge 25.11's GB200/GB300 DeepSeek-V3 recipes capture the router and the "
     "dispatch preprocessing in Transformer Engine CUDA graphs"},
    {"25.11 NeMo container", "gpt-oss", "GB300", "bf16", "te_moe_graphs=on",
     "Megatron-Bridge 25.11's GB300 gpt-oss-120b recipe captures attention, the router and the "
     "dispatch preprocessing in Transformer Engine CUDA graphs"},
    {"26.02 NeMo container", "Qwen3-30B", "B200", "bf16 fp8 mxfp8", "te_moe_graphs=on",
     "Megatron-Bridge 26.02's B200 Qwen3-30B-A3B recipes capture the router and the dispatch "
     "preprocessing in Transformer Engine CUDA graphs"},
    {"26.02 NeMo container", "gpt-oss", "B300", "bf16", "te_moe_graphs=on",
     "Megatron-Bridge 26.02's B300 gpt-oss-120b recipe captures attention, the router and the "
     "dispatch preprocessing in Transformer Engine CUDA graphs"},
    {"26.02.01 NeMo container", "Qwen3-235B", "GB200 GB300", "mxfp8", "te_moe_graphs=on",
     "Megatron-Bridge 26.02.01's GB200/GB300 Qwen3-235B-A22B MXFP8 recipes capture the router "
     "and the dispatch preprocessing in Transformer Engine CUDA graphs"},
    {"26.06 NeMo container", "gpt-oss", "B300", "bf16 mxfp8", "te_moe_graphs=on",
     "Megatron-Bridge 26.06's B300 gpt-oss-120b recipes capture attention, the router and the "
     "dispatch preprocessing in Transformer Engine CUDA graphs"},
};

#define N_FACTS (sizeof k_facts / sizeof k_facts[0])

/* What a source says about the model variant a row ran that the runs
 * schema has no field for: the multi-token-prediction layers of its
 * published model (the library's definition carries them; -1: not said),
 * whether its recipe runs core attention in FP8 (model.fp8_attention) and
 * the routed experts as Transformer Engine's fused grouped MLP
 * (model.fused_grouped_mlp; false: not said), whether its config
 * all-gathers the Float8Linear weights in FP8 under FSDP2
 * (model.fsdp_fp8_gather; false: not said) and whether it runs the output
 * layer in MXFP8 (model.fp8_output_proj; false: not said). */
typedef struct run_model_fact {
    const char *source_has, *model_has, *gpus, *precisions;
    int mtp_layers;
    bool fp8_attention, fused_grouped_mlp, fsdp_fp8_gather, fp8_output_proj;
    const char *why;
} run_model_fact;

static const run_model_fact k_model_facts[] = {
    /* Megatron-Bridge docs/performance-summary-archive.md, "25.11 NeMo
     * Container": the GB300 and GB200 DeepSeek-V3 rows are "DeepSeekV3
     * (w/o MTP)", the B200 one "(w/ MTP)"; their Model TFLOP/s over
     * tokens/s agree: 249.7 GFLOP per token (961 / 3848) without, 260.4
     * (557 / 2139) with, as 26.04-26.08's rows (260.0) */
    {"25.11 NeMo container", "DeepSeek-V3", "GB200 GB300", "bf16 mxfp8", 0, false, false, false,
     false,
     "Megatron-Bridge 25.11's GB200/GB300 DeepSeek-V3 rows ran without MTP (\"DeepSeekV3 (w/o "
     "MTP)\")"},
    /* Megatron-Bridge v0.6.0 (the 26.08 container) src/megatron/bridge/
     * perf_recipes/gpt_oss/common.py _apply_gpt_oss_120b_full_iter_fp8mx_
     * configs, which the GB200 and GB300 MXFP8 recipes of gpt-oss-120b
     * apply (perf_recipes/gpt_oss/{gb200,gb300}/gpt_oss.py), sets
     * mixed_precision.fp8_dot_product_attention = True (as v0.5.0's
     * GPT_OSS_120B_PRETRAIN_CONFIG_GB200/GB300_FP8_MX_V2 do; its B300
     * FP8_MX config is the BF16 one: none).  The same release's Qwen3 and
     * DeepSeek-V3 GB300 full-iteration helpers set it too (the facts
     * below). */
    {"26.08 NeMo container", "gpt-oss", "GB200 GB300", "mxfp8", -1, true, false, false, false,
     "Megatron-Bridge 26.08's gpt-oss-120b GB200/GB300 MXFP8 recipes run attention in FP8 "
     "(fp8_dot_product_attention = True)"},
    /* FP8 attention where no window makes it slower (layer_cost.c
     * cost_fp8_attention_ratio: cuDNN's published SDPA benchmark at the
     * layer's shape).  Megatron-Bridge v0.6.0 perf_recipes/deepseek/gb300/
     * deepseek_v3.py deepseek_v3_pretrain_256gpu_gb300_fp8mx_config calls
     * common.py _enable_deepseek_full_iteration_mxfp8(cfg,
     * fp8_dot_product_attention=True, ...) (the GB200 one leaves the
     * default, False); v0.5.0 (26.06) scripts/performance/configs/deepseek/
     * deepseek_workload_base_configs.py DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_
     * FP8_MX_V1 sets fp8_dot_product_attention=True, and its _V2 and
     * _GBS15360 (the 26.06 row) derive from it; v0.6.0 perf_recipes/qwen/
     * common.py _enable_hybridep_full_iteration_mxfp8, which the GB200 and
     * GB300 Qwen3-30B-A3B and Qwen3-235B-A22B MXFP8 recipes call after
     * _benchmark_common (qwen/{gb200,gb300}/qwen3_moe.py), sets
     * mixed_precision.fp8_dot_product_attention = True; v0.5.0
     * qwen3_workload_base_configs.py QWEN3_30B_A3B_PRETRAIN_CONFIG_B300_
     * FP8_MX_V1 (the 26.06 B300 row) sets it too. */
    {"26.08 NeMo container", "DeepSeek-V3", "GB300", "mxfp8", -1, true, false, false, false,
     "Megatron-Bridge 26.08's DeepSeek-V3 GB300 MXFP8 recipe runs attention in FP8 "
     "(fp8_dot_product_attention=True)"},
    {"26.06 NeMo container", "DeepSeek-V3", "GB300", "mxfp8", -1, true, false, false, false,
     "Megatron-Bridge 26.06's DeepSeek-V3 GB300 MXFP8 config runs attention in FP8 "
     "(fp8_dot_product_attention=True)"},
    {"26.08 NeMo container", "Qwen3", "GB200 GB300", "mxfp8", -1, true, false, false, false,
     "Megatron-Bridge 26.08's Qwen3 GB200/GB300 MXFP8 recipes run attention in FP8 "
     "(fp8_dot_product_attention = True)"},
    {"26.06 NeMo container", "Qwen3-30B", "B300", "mxfp8", -1, true, false, false, false,
     "Megatron-Bridge 26.06's Qwen3-30B-A3B B300 MXFP8 config runs attention in FP8 "
     "(fp8_dot_product_attention=True)"},
    /* The same helper sets model.use_transformer_engine_op_fuser = True
     * after _benchmark_common (perf_recipes/_common.py), which turns it off
     * for every other recipe of the release: Megatron-Core's TEGroupedMLP
     * then runs the experts as Transformer Engine's fused grouped MLP
     * (moe/experts.py _with_fused_impl: the GLU with its clamp, the
     * probabilities and the biases inside the grouped kernels,
     * te.pytorch.ops.ScaledClampedQGeGLU), not the eager passes layer_cost.c
     * moe_eager_glu_bytes counts.  Its Qwen3 and DeepSeek-V3 helpers set it
     * too; their experts have neither clamp nor bias: no fact needed. */
    {"26.08 NeMo container", "gpt-oss", "GB200 GB300", "mxfp8", -1, false, true, false, false,
     "Megatron-Bridge 26.08's gpt-oss-120b GB200/GB300 MXFP8 recipes run Transformer Engine's "
     "fused grouped MLP (use_transformer_engine_op_fuser = True)"},
    /* The output layer (LM head) in MXFP8: Megatron-Core's fp8_output_proj
     * (transformer_config.py, "run the LM-head output projection with a TE
     * ColumnParallelLinear under the MXFP8 autocast context", active only
     * with fp8_recipe mxfp8: fp8_utils.py is_mxfp8_output_proj_active;
     * Megatron-LM 3f6a2ed844, #4825, 2026-05-31).  Megatron-Bridge v0.6.0
     * (26.08) perf_recipes/deepseek/{gb200,gb300}/deepseek_v3.py call
     * common.py _enable_deepseek_full_iteration_mxfp8(cfg, ...,
     * fp8_output_proj=True) in their MXFP8 recipes, and gpt_oss/common.py
     * _apply_gpt_oss_120b_full_iter_fp8mx_configs sets model.fp8_output_proj
     * = True for the GB200/GB300 gpt-oss-120b MXFP8 ones; v0.5.0 (26.06)
     * scripts/performance/configs/deepseek/deepseek_llm_pretrain.py
     * deepseek_v3_pretrain_config_gb300 sets it when the recipe is mxfp8 (its
     * B300 one does not; no 26.06 gpt-oss GB row). */
    {"26.08 NeMo container", "DeepSeek-V3", "GB200 GB300", "mxfp8", -1, false, false, false, true,
     "Megatron-Bridge 26.08's DeepSeek-V3 GB200/GB300 MXFP8 recipes run the output layer in "
     "MXFP8 (fp8_output_proj=True)"},
    {"26.06 NeMo container", "DeepSeek-V3", "GB300", "mxfp8", -1, false, false, false, true,
     "Megatron-Bridge 26.06's DeepSeek-V3 GB300 MXFP8 config runs the output layer in MXFP8 "
     "(fp8_output_proj = True)"},
    {"26.08 NeMo container", "gpt-oss", "GB200 GB300", "mxfp8", -1, false, false, false, true,
     "Megatron-Bridge 26.08's gpt-oss-120b GB200/GB300 MXFP8 recipes run the output layer in "
     "MXFP8 (fp8_output_proj = True)"},
    /* torchtitan 9dec370 train_configs/llama3_405b.toml, [float8]:
     * enable_fsdp_float8_all_gather = true (with precompute_float8_dynamic_
     * scale_for_fsdp), the config of the benchmark's 405B tables (5 and 6
     * of llama3_h100_202412_torchtitan.md, the only ones with PP; matched
     * by their titles, as a row without the library's definition has no
     * model name here); float8.py applies it only where FSDP shards over
     * data parallelism (parallel_dims.dp_shard_enabled:
     * memory_gathered_weight_bytes) */
    {"Table 5 (FSDP + TP + PP + torch.compile + Float8", NULL, "H100-SXM-96GB-500W", "fp8", -1,
     false, false, true, false,
     "torchtitan's llama3_405b.toml all-gathers the Float8Linear weights in FP8 "
     "(enable_fsdp_float8_all_gather = true)"},
    {"Table 6 (FSDP + TP + PP + CP + torch.compile + Float8", NULL, "H100-SXM-96GB-500W", "fp8",
     -1, false, false, true, false,
     "torchtitan's llama3_405b.toml all-gathers the Float8Linear weights in FP8 "
     "(enable_fsdp_float8_all_gather = true)"},
    /* torchtitan benchmarks/llama3-8b_h200_202506_trainy-whitefiber.md: the
     * runs' config sets enable_fsdp_float8_all_gather (with precomputed
     * scales and force_recompute_fp8_weight_in_bwd) */
    {"llama3-8b_h200_202506_trainy-whitefiber", NULL, "H200-SXM", "fp8", -1, false, false, true,
     false,
     "the Trainy runs all-gather the Float8Linear weights in FP8 "
     "(enable_fsdp_float8_all_gather)"},
};

#define N_MODEL_FACTS (sizeof k_model_facts / sizeof k_model_facts[0])

/* What a source's recipes set as the model's residual dropout (Megatron's
 * hidden_dropout, whose masks are saved activations when it is > 0:
 * tf_dropout_mask_bytes); the row's model name contains model_has (NULL:
 * any model of the source). */
typedef struct run_dropout_fact {
    const char *source_has, *model_has;
    double hidden_dropout;
    const char *why;
} run_dropout_fact;

static const run_dropout_fact k_dropout_facts[] = {
    /* Megatron-Bridge v0.2.0 (the 25.11 container) and later: the model
     * providers of every model in its performance tables set
     * hidden_dropout: float = 0.0 (src/megatron/bridge/models/llama/
     * llama_provider.py, qwen/qwen_provider.py, deepseek/
     * deepseek_provider.py, gpt_oss/gpt_oss_provider.py, nemotron/
     * nemotron_provider.py) */
    {"Megatron-Bridge", NULL, 0.0,
     "Megatron-Bridge's model providers (Llama, Qwen3, DeepSeek, gpt-oss) set hidden_dropout 0.0"},
    /* NeMo-Framework-Launcher 24.07 launcher_scripts/conf/training/llama/
     * llama{2_7b,2_70b,3_8b,3_70b}.yaml and nemotron/nemotron_{8b,22b,
     * 340b}.yaml: hidden_dropout: 0.0 (its gpt3/{5b,20b,175b}.yaml keep 0.1) */
    {"NeMo 24.07", "Llama", 0.0, "NeMo 24.07's Llama configs set hidden_dropout: 0.0"},
    /* torchtitan 9dec370 torchtitan/models/llama/model.py: TransformerBlock
     * adds attention's and the feed-forward's outputs to the residual with
     * no dropout module */
    {"pytorch/torchtitan", NULL, 0.0, "torchtitan's Llama blocks have no dropout"},
    {"NeMo 24.07", "Nemotron", 0.0, "NeMo 24.07's Nemotron configs set hidden_dropout: 0.0"},
};

/* The sources whose rows name torch.compile where they ran it: the row's
 * source contains source_has and compiled_has; `loss`: the release's
 * training.compile compiles the loss function too (model.loss_compiled). */
typedef struct run_compile_fact {
    const char *source_has, *compiled_has;
    bool loss;
    const char *why;
} run_compile_fact;

static const run_compile_fact k_compile_facts[] = {
    /* torchtitan e7c0cae (2025-06-13, the Trainy runs' pin) components/
     * loss.py build_cross_entropy_loss: `if job_config.training.compile:
     * loss_fn = torch.compile(loss_fn)`, since bbb1b616e (2025-04-02,
     * "Enable compiling the loss function ... reduction of memory");
     * parallelize_llama.py apply_compile still compiles each
     * TransformerBlock.  First: the rule below matches these rows too. */
    {"torchtitan e7c0cae", "torch.compile", true,
     "torchtitan e7c0cae compiles each transformer block and the loss function "
     "(training.compile; build_cross_entropy_loss since bbb1b616e)"},
    /* torchtitan benchmarks/llama3_h100_202412_torchtitan.md names
     * torch.compile in the tables (2, 4, 5, 6) and rows (1, 3) that ran it;
     * 9dec370 parallelize_llama.py applies activation checkpointing, then
     * (training.compile) apply_compile: torch.compile on each
     * TransformerBlock, fullgraph */
    {"pytorch/torchtitan", "torch.compile", false,
     "torchtitan's rows naming torch.compile compile each transformer block (training.compile)"},
};

/* Whether `name` is one of the ' '-separated words of `list`. */
static int in_words(const char *list, const char *name)
{
    size_t n = strlen(name);
    if (n == 0)
        return 0;   /* no word is empty (and strstr would not advance) */
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

/* Whether run r's source contains source_has and its model name model_has
 * (NULL: any model).  The matching rule every fact below starts from. */
static bool source_model_match(const run_system *r, const char *source_has,
                               const char *model_has)
{
    return r->source != NULL && strstr(r->source, source_has) != NULL &&
           (model_has == NULL || (r->model != NULL && strstr(r->model, model_has) != NULL));
}

/* Whether a fact on (source_has, model_has: NULL any model, gpus,
 * precisions) applies to run r: source_model_match, and its GPU and
 * precision are words of the lists.  The one matching rule of the recipe
 * and model-variant facts. */
static bool fact_applies(const run_system *r, const char *source_has, const char *model_has,
                         const char *gpus, const char *precisions)
{
    if (r->gpu == NULL || r->precision == NULL || r->gpu[0] == '\0')
        return false;
    return source_model_match(r, source_has, model_has) && in_words(gpus, r->gpu) &&
           in_words(precisions, r->precision);
}

const char *run_recipe_for_system(const run_system *r, size_t *at, const char **why)
{
    *why = NULL;
    for (; *at < N_FACTS; (*at)++) {
        const run_recipe_fact *f = &k_facts[*at];
        if (fact_applies(r, f->source_has, f->model_has, f->gpus, f->precisions)) {
            *why = f->why;
            return k_facts[(*at)++].recipe;
        }
    }
    return NULL;
}

void run_model_for_system(const run_system *r, run_model_variant *out)
{
    *out = (run_model_variant){-1, false, false, false, false, NULL, NULL, NULL, NULL, NULL};
    for (size_t i = 0; i < N_MODEL_FACTS; i++) {
        const run_model_fact *f = &k_model_facts[i];
        if (!fact_applies(r, f->source_has, f->model_has, f->gpus, f->precisions))
            continue;
        if (f->mtp_layers >= 0 && out->mtp_why == NULL) {
            out->mtp_layers = f->mtp_layers;
            out->mtp_why = f->why;
        }
        if (f->fp8_attention && out->fp8_attention_why == NULL) {
            out->fp8_attention = true;
            out->fp8_attention_why = f->why;
        }
        if (f->fused_grouped_mlp && out->fused_grouped_mlp_why == NULL) {
            out->fused_grouped_mlp = true;
            out->fused_grouped_mlp_why = f->why;
        }
        if (f->fsdp_fp8_gather && out->fsdp_fp8_gather_why == NULL) {
            out->fsdp_fp8_gather = true;
            out->fsdp_fp8_gather_why = f->why;
        }
        if (f->fp8_output_proj && out->fp8_output_proj_why == NULL) {
            out->fp8_output_proj = true;
            out->fp8_output_proj_why = f->why;
        }
    }
}

double run_hidden_dropout_for_system(const run_system *r, const char **why)
{
    *why = NULL;
    for (size_t i = 0; i < sizeof k_dropout_facts / sizeof k_dropout_facts[0]; i++) {
        const run_dropout_fact *f = &k_dropout_facts[i];
        if (source_model_match(r, f->source_has, f->model_has)) {
            *why = f->why;
            return f->hidden_dropout;
        }
    }
    return -1;
}

const stack_spec *run_stack_from_source(const char *source, const char *id, const char **why,
                                        const char **recipe)
{
    *why = NULL;
    *recipe = NULL;
    if (source == NULL)
        return NULL;
    for (size_t i = 0; i < N_RULES; i++) {
        const run_stack_rule *r = &k_rules[i];
        if (strstr(source, r->source_has) == NULL)
            continue;
        if (r->id_prefix != NULL &&
            (id == NULL || strncmp(id, r->id_prefix, strlen(r->id_prefix)) != 0))
            continue;
        *why = r->why;
        *recipe = r->recipe;
        return stack_find(r->stack);
    }
    return NULL;
}

bool run_compiled_for_system(const run_system *r, bool *loss, const char **why)
{
    *why = NULL;
    *loss = false;
    for (size_t i = 0; i < sizeof k_compile_facts / sizeof k_compile_facts[0]; i++) {
        const run_compile_fact *f = &k_compile_facts[i];
        if (source_model_match(r, f->source_has, NULL) &&
            strstr(r->source, f->compiled_has) != NULL) {
            *why = f->why;
            *loss = f->loss;
            return true;
        }
    }
    return false;
}
