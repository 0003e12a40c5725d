/* emit_torchtitan.c: the torchtitan job config of a plan on the
 * pytorch-fsdp2 stack.
 *
 * What it models: the TOML file torchtitan's trainer reads
 * (`python -m torchtitan.train --job.config_file FILE`, run by torchrun),
 * for torchtitan v0.2.2, the last release configured by TOML files (later
 * main builds configs from Python registries, `--module --config`).  Every
 * option name and section is that release's torchtitan/config/job_config.py
 * (JobConfig's dataclasses: [job], [model], [training], [parallelism],
 * [activation_checkpoint], [compile], [quantize.linear.float8],
 * [quantize.linear.mx], [quantize.grouped_mm.*]); the mechanisms behind them
 * are read from the same tag:
 *   - distributed/parallel_dims.py: world = dp_replicate dp_shard cp tp pp,
 *     the mesh ["pp", "dp_replicate", "fsdp", "cp", "tp"] (pp outermost, tp
 *     fastest: Megatron's order, so emit.c's launch components hold); the
 *     batch degree is dp_replicate x dp_shard; seq_len % (tp x 2 cp) == 0;
 *     EP with etp = tp or 1 only;
 *   - models/llama3/infra/parallelize.py: TP always with sequence parallel
 *     norms (SequenceParallel, no option to leave it out); FSDP over
 *     dp_shard x cp whenever either is > 1 (so ZeRO 0 with cp > 1 cannot
 *     be had), and whenever ep > 1 (llama4's and deepseek_v3's
 *     parallelize.py: fsdp_enabled or ep_enabled); DDP (dp_replicate
 *     alone) only when it is the whole world
 *     ("DDP has not supported > 1D parallelism"); reshard_after_forward
 *     "always" is ZeRO-3, "never" ZeRO-2 (the "default" policy picks by
 *     pp, so the config names it); mixed_precision_reduce only "float32";
 *   - distributed/tensor_parallel.py: async TP raises unless
 *     compile.enable with "model" in compile.components;
 *   - distributed/pipeline_parallel.py: module_fqns_per_model_part lists
 *     each virtual stage's modules, stage k on pp rank k % pp for looped
 *     schedules (Interleaved1F1B), chunk-major as strategy_chunk_layers
 *     numbers them; local_batch_size / pipeline_parallel_microbatch_size
 *     micro-batches; train.py: gradient accumulation = global_batch_size /
 *     (local_batch_size x batch degree);
 *   - components/quantization/float8.py, mx.py: converters
 *     "quantize.linear.float8" (torchao Float8Linear, tensorwise; FP8
 *     weights all-gathered by FSDP with enable_fsdp_float8_all_gather) and
 *     "quantize.linear.mx" (no FP8 all-gather), grouped_mm variants for MoE
 *     experts; the output layer filtered out (the cost model runs it in 16
 *     bits).
 * The activation checkpointing the cost model gives this stack is
 * torchtitan's: "full" wraps every block, "selective" with option "op" is
 * the op-level policy (layer_cost.c op_sac_rerun_s, memory_op_sac_bytes),
 * "selective" with an integer N fully checkpoints every N-th block
 * (distributed/activation_checkpoint.py _apply_layer_sac: the plan's block
 * recompute of the same count per chunk, model/knobs.c knob_ac_every_nth).
 *
 * Invariants: emit_torchtitan_check refuses, with the reason, a plan whose
 * knobs torchtitan has no option for or would run with another mechanism
 * (so nothing is printed for it); a value is written only when the plan
 * sets it; user text reaches the TOML only as an escaped TOML string. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "base/text.h"
#include "cost/memory.h"
#include "inputs/stack.h"
#include "model/knobs.h"
#include "out/emit_torchtitan.h"

/* What the job config cannot carry: PLANNER_E_INPUT with the reason in
 * *err (err may be NULL), in a function with `err` in scope. */
#define TT_FAIL(...) error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL, __VA_ARGS__)

/* The torchtitan v0.2.2 model flavors planner recognizes by shape
 * (torchtitan/models/llama3/__init__.py llama3_args; the FFN width is
 * model/args.py's rule: 2/3 of 4 dim, times ffn_dim_multiplier, rounded up
 * to multiple_of; vocab_size 128256; Llama 3.1's RoPE scaling). */
typedef struct tt_flavor {
    const char *name, *flavor;
    int layers, hidden, heads, kv_heads, ffn, vocab;
    double rope_theta;
} tt_flavor;

static const tt_flavor k_flavors[] = {
    {"llama3", "8B", 32, 4096, 32, 8, 14336, 128256, 500000},
    {"llama3", "70B", 80, 8192, 64, 8, 28672, 128256, 500000},
    {"llama3", "405B", 126, 16384, 128, 8, 53248, 128256, 500000},
};

/* The flavor whose architecture is model m's, or NULL: a dense SwiGLU,
 * RMSNorm, RoPE decoder without biases, untied, every layer alike. */
static const tt_flavor *find_flavor(const model *m)
{
    if (m->moe.experts > 0 || m->mla.kv_lora_rank > 0 || m->act != ACT_SWIGLU ||
        m->norm != NORM_RMSNORM || m->position != POS_ROPE || m->tied_embeddings ||
        (model_biases(m) & ~(unsigned)MODEL_BIAS_SET) != 0 || m->parallel_block ||
        m->qk_norm != QK_NORM_NONE || m->rotary_dim != 0 || m->heads <= 0 ||
        m->head_dim * m->heads != m->hidden)
        return NULL;
    for (int i = 0; m->layer != NULL && i < m->layers; i++) {
        const layer_spec *y = &m->layer[i];
        if (y->hidden != m->hidden || y->heads != m->heads || y->kv_heads != m->kv_heads ||
            y->ffn_hidden != m->ffn_hidden || y->window > 0 || y->chunk > 0)
            return NULL;
    }
    for (size_t i = 0; i < sizeof k_flavors / sizeof k_flavors[0]; i++) {
        const tt_flavor *f = &k_flavors[i];
        if (f->layers == m->layers && f->hidden == m->hidden && f->heads == m->heads &&
            f->kv_heads == m->kv_heads && f->ffn == m->ffn_hidden && f->vocab == m->vocab &&
            f->rope_theta == m->rope.theta)
            return f;
    }
    return NULL;
}

/* The precision rules (see the file comment). */
static planner_status precision_check(const strategy *s, precision prec, planner_error *err)
{
    if (prec == PREC_FP16 || prec == PREC_NVFP4)
        return TT_FAIL("torchtitan trains in bf16 or fp32 (training.mixed_precision_param)"
                       " with FP8 and MXFP8 converters, not in %s", precision_name(prec));
    if (prec == PREC_MXFP8 && memory_fp8_primary_weights(prec, s->zero, s->opt_state))
        return TT_FAIL("the plan keeps MXFP8 primary weights (zero=%d), and torchtitan's "
                       "MX converter all-gathers 16-bit weights: plan with --fix zero=0 or "
                       "another precision", s->zero);
    if (prec == PREC_FP8 && memory_fp8_primary_weights(prec, s->zero, s->opt_state) &&
        s->dp <= 1)
        return TT_FAIL("the plan keeps FP8 primary weights (zero=%d), which torchtitan has "
                       "only as FSDP's float8 all-gather over data_parallel_shard_degree > 1 "
                       "(dp=%d)", s->zero, s->dp);
    if (s->grad_reduce_bf16)
        return TT_FAIL("torchtitan %s reduces gradients in fp32 only "
                       "(training.mixed_precision_reduce): plan with --fix grad_reduce_bf16=off",
                       TORCHTITAN_RELEASE);
    return PLANNER_OK;
}

planner_status emit_torchtitan_check(const model *m, const plan *pl, precision prec,
                                     planner_error *err)
{
    const strategy *s = &pl->s;
    int cp = s->cp > 1 ? s->cp : 1;
    /* the knobs torchtitan has and its rules on them: the pytorch-fsdp2
     * stack's declarations, which the search plans by (inputs/stack.c) */
    if (precision_check(s, prec, err) != PLANNER_OK ||
        knobs_stack_check(m, s, stack_get(STACK_PYTORCH_FSDP2), err) != PLANNER_OK)
        return PLANNER_E_INPUT;
    if (s->seq_len % (s->tp * 2 * cp) != 0)
        return TT_FAIL("torchtitan needs the sequence (%d) divisible by tp x 2 cp = %d",
                       s->seq_len, s->tp * 2 * cp);
    if (m->mtp_layers > 0)
        return TT_FAIL("torchtitan %s has no multi-token prediction layers (%d)",
                       TORCHTITAN_RELEASE, m->mtp_layers);
    return PLANNER_OK;
}

/* ---- printing -------------------------------------------------------------- */

/* `v` as a TOML basic string: '"' and '\' escaped, controls as \uXXXX;
 * in a name that is not valid UTF-8 every byte from 0x80 up too (TOML is
 * UTF-8), so any bytes give a valid string. */
static void toml_string(FILE *out, const char *v)
{
    bool utf8 = text_check_name(v, NULL) == PLANNER_OK;
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f || (*p >= 0x80 && !utf8))
            fprintf(out, "\\u%04X", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

/* [model]: a known flavor, or placeholders and the shape and architecture
 * (positions: RoPE's theta only with RoPE; MLP, norm, biases, tying) the
 * user's flavor must have; the converters of the FP8 recipes. */
static void model_section(FILE *out, const model *m, precision prec)
{
    const tt_flavor *f = find_flavor(m);
    bool fp8 = prec == PREC_FP8, mx = prec == PREC_MXFP8, moe = m->moe.experts > 0;
    fputs("\n[model]\n", out);
    if (f != NULL) {
        fprintf(out, "name = \"%s\"\nflavor = \"%s\"\n", f->name, f->flavor);
    } else {
        fprintf(out, "# PLACEHOLDER: no torchtitan %s flavor has this model's shape: register "
                     "one with\n# %d layers, dim %d, %d heads, %d KV heads, ", TORCHTITAN_RELEASE,
                m->layers, m->hidden, m->heads, m->kv_heads > 0 ? m->kv_heads : m->heads);
        if (moe)
            fprintf(out, "%d experts (top %d) of width %d,", m->moe.experts, m->moe.top_k,
                    m->moe.expert_ffn);
        else
            fprintf(out, "FFN %d,", m->ffn_hidden);
        fprintf(out, "\n# vocabulary %d, ", m->vocab);
        if (m->position == POS_ROPE)
            fprintf(out, "RoPE theta %g", m->rope.theta > 0 ? m->rope.theta : 10000.0);
        else
            fputs("learned absolute positions", out);
        fprintf(out, ", %s MLP, %s%s%s,\n# and name its model and flavor here\n"
                     "name = \"PLACEHOLDER-model\"\nflavor = \"PLACEHOLDER-flavor\"\n",
                activation_name(m->act), m->norm == NORM_RMSNORM ? "RMSNorm" : "LayerNorm",
                (model_biases(m) & ~(unsigned)MODEL_BIAS_SET) != 0 ? ", biases" : "",
                m->tied_embeddings ? ", tied embeddings" : "");
    }
    fputs("hf_assets_path = \"PLACEHOLDER-hf-assets\"   # the tokenizer; the scripts set it\n",
          out);
    if (fp8 || mx)
        fprintf(out, "converters = [\"quantize.linear.%s\"%s]\n", fp8 ? "float8" : "mx",
                !moe ? "" : fp8 ? ", \"quantize.grouped_mm.float8\""
                                : ", \"quantize.grouped_mm.mx\"");
}

/* [training]: batch (pp > 1: the DP rank's whole batch, split into
 * micro-batches by the schedule; else one micro-batch, accumulated),
 * sequence, mixed precision, and typical values to edit. */
static void training_section(FILE *out, const strategy *s, precision prec)
{
    long local = s->pp > 1 ? (long)s->gbs / s->dp : s->mbs;
    fprintf(out, "\n[training]\nlocal_batch_size = %ld\nglobal_batch_size = %d\nseq_len = %d\n",
            local, s->gbs, s->seq_len);
    if (prec == PREC_FP32)
        fputs("mixed_precision_param = \"float32\"\n", out);
    else
        fputs("mixed_precision_param = \"bfloat16\"\n", out);
    fputs("# typical values: edit\nsteps = 1000\ndataset = \"c4\"\nmax_norm = 1.0\n", out);
}

/* module_fqns_per_model_part: virtual stage k = chunk x pp + rank, its
 * decoder layers (strategy_chunk_layers), the embedding in the first and
 * the final norm and output layer in the last. */
static void model_parts(FILE *out, const model *m, const strategy *s)
{
    int vpp = s->vpp > 1 ? s->vpp : 1, stages = s->pp * vpp;
    fputs("module_fqns_per_model_part = [\n", out);
    for (int k = 0; k < stages; k++) {
        int first = 0, n = strategy_chunk_layers(s, m->layers, k % s->pp, k / s->pp, &first);
        const char *sep = "";
        fputs("    [", out);
        if (k == 0) {
            fputs("\"tok_embeddings\"", out);
            sep = ", ";
        }
        for (int i = 0; i < n; i++, sep = ", ")
            fprintf(out, "%s\"layers.%d\"", sep, first + i);
        if (k == stages - 1)
            fprintf(out, "%s\"norm\", \"output\"", sep);
        fputs(k + 1 < stages ? "],\n" : "],\n]\n", out);
    }
}

static void parallelism_section(FILE *out, const model *m, const strategy *s)
{
    bool ddp = s->zero == 0;
    int cp = s->cp > 1 ? s->cp : 1;
    fprintf(out, "\n[parallelism]\ndata_parallel_replicate_degree = %d\n"
                 "data_parallel_shard_degree = %d\n", ddp ? s->dp : 1, ddp ? 1 : s->dp);
    if (!ddp && (s->dp > 1 || cp > 1))   /* ZeRO-3 reshards after forward, ZeRO-2 not */
        fprintf(out, "fsdp_reshard_after_forward = \"%s\"\n", s->zero == 3 ? "always" : "never");
    fprintf(out, "tensor_parallel_degree = %d\n", s->tp);
    if (s->tp_comm_overlap && s->tp > 1)
        fputs("enable_async_tensor_parallel = true\n", out);
    fprintf(out, "pipeline_parallel_degree = %d\n", s->pp);
    if (s->pp > 1) {
        fprintf(out, "pipeline_parallel_schedule = \"%s\"\n"
                     "pipeline_parallel_microbatch_size = %d\n",
                s->vpp > 1 ? "Interleaved1F1B" : "1F1B", s->mbs);
        model_parts(out, m, s);
    }
    fprintf(out, "context_parallel_degree = %d\n", cp);
    if (cp > 1)   /* PyTorch's ring rotation is its all-to-all method */
        fprintf(out, "context_parallel_rotate_method = \"%s\"\n",
                s->cp_comm == CP_COMM_ALLGATHER ? "allgather" : "alltoall");
    if (m->moe.experts > 0 && s->ep > 1)
        fprintf(out, "expert_parallel_degree = %d\nexpert_tensor_parallel_degree = %d\n", s->ep,
                s->etp > 1 ? s->etp : 1);
}

/* The FP8 recipes' sections: tensorwise float8 with FP8 weight all-gather
 * where the plan keeps FP8 primary weights (memory_fp8_primary_weights),
 * MX; the output layer left in 16 bits. */
static void quantize_sections(FILE *out, const model *m, const strategy *s, precision prec)
{
    bool fp8_weights = memory_fp8_primary_weights(prec, s->zero, s->opt_state);
    if (prec == PREC_FP8) {
        fputs("\n[quantize.linear.float8]\n", out);
        if (fp8_weights)   /* dp > 1: precision_check */
            fputs("enable_fsdp_float8_all_gather = true\n"
                  "precompute_float8_dynamic_scale_for_fsdp = true\n", out);
        fputs("filter_fqns = [\"output\"]\n", out);
        if (m->moe.experts > 0)
            fputs("\n[quantize.grouped_mm.float8]\nfqns = [\"experts\"]\n", out);
    } else if (prec == PREC_MXFP8) {
        fputs("\n[quantize.linear.mx]\nrecipe_name = \"mxfp8_cublas\"\n"
              "filter_fqns = [\"output\"]\n", out);
        if (m->moe.experts > 0)
            fputs("\n[quantize.grouped_mm.mx]\nfqns = [\"experts\"]\nrecipe_name = \"mxfp8\"\n",
                  out);
    }
}

void emit_torchtitan_toml(FILE *out, const model *m, const plan *pl, precision prec,
                          const char *description)
{
    const strategy *s = &pl->s;
    static const char *const ac_mode[] = {
        [RECOMPUTE_NONE] = "none", [RECOMPUTE_SELECTIVE] = "selective",
        [RECOMPUTE_FULL] = "full"};
    fputs("\n[job]\ndescription = ", out);
    toml_string(out, description);
    fputc('\n', out);
    model_section(out, m, prec);
    training_section(out, s, prec);
    parallelism_section(out, m, s);
    if (s->recompute == RECOMPUTE_FULL && knob_ac_every_nth(m, s) > 1)
        fprintf(out, "\n[activation_checkpoint]\nmode = \"selective\"\n"
                     "selective_ac_option = \"%d\"\n", knob_ac_every_nth(m, s));
    else
        fprintf(out, "\n[activation_checkpoint]\nmode = \"%s\"\n", ac_mode[s->recompute]);
    if (s->recompute == RECOMPUTE_SELECTIVE)
        fputs("selective_ac_option = \"op\"\n", out);
    if (m->torch_compile)   /* the blocks, as the cost model compiles them (not the loss) */
        fputs("\n[compile]\nenable = true\ncomponents = [\"model\"]\n", out);
    quantize_sections(out, m, s, prec);
    fputs("\n# typical values: edit\n[optimizer]\nname = \"AdamW\"\nlr = 3e-4\n"
          "weight_decay = 0.1\n\n[lr_scheduler]\nwarmup_steps = 200\n\n"
          "[checkpoint]\nenable = true\ninterval = 1000\n", out);
}
