/* test_cost.c: evaluate() invariants -- more bandwidth, memory or peak never
 * predicts worse; memory grows with the micro-batch; an infeasible plan is
 * reported as such; ranges add up; Megatron's rules (strategy_check). */
#include <math.h>
#include <string.h>
#include "cost/comm.h"
#include "cost/compute.h"
#include "cost/layer_cost.h"
#include "model/knobs.h"
#include "model/strategy.h"
#include "model/transformer.h"
#include "schedule/evaluate.h"
#include "testutil.h"

typedef struct fixture {
    model m;
    layer_spec layers[96];
    cluster c;
    node_group g;
    cost_params p;
} fixture;

/* GPT-3 175B on 8 DGX A100 (64 GPUs). */
static void setup(fixture *f)
{
    int i;
    const gpu_spec *gpu = catalog_find("A100-SXM-80GB");
    memset(f, 0, sizeof *f);
    ck_assert_ptr_nonnull(gpu);
    strcpy(f->m.name, "gpt3-175b");
    f->m.layers = 96;
    f->m.hidden = 12288;
    f->m.heads = f->m.kv_heads = 96;
    f->m.head_dim = 128;
    f->m.ffn_hidden = 49152;
    f->m.vocab = 51200;
    f->m.max_position = 2048;
    f->m.act = ACT_GELU;
    f->m.norm = NORM_LAYERNORM;
    f->m.position = POS_LEARNED;
    f->m.tied_embeddings = true;
    f->m.prec = PREC_BF16;
    for (i = 0; i < 96; i++)
        f->layers[i] = (layer_spec){12288, 96, 96, 128, 49152, false, 0, 0};
    f->m.layer = f->layers;
    f->g.gpu = *gpu;
    strcpy(f->g.name, "a100");
    f->g.nodes = 8;
    f->g.gpus_per_node = 8;
    f->g.intra_bytes_per_s = gpu->intra_node_bytes_per_s;
    f->g.intra_latency_s = 3.4e-6;
    f->g.inter_bytes_per_s = gpu->inter_node_bytes_per_s;
    f->g.inter_latency_s = 14e-6;
    f->c.n_groups = 1;
    f->c.group = &f->g;
    cost_params_default(&f->p);
}

static strategy make(int tp, int pp, int dp, int vpp, int mbs, int gbs, bool sp,
                     recompute_mode rc, int zero)
{
    strategy s;
    int i;
    memset(&s, 0, sizeof s);
    s.tp = tp;
    s.pp = pp;
    s.dp = dp;
    s.cp = s.ep = s.etp = 1;
    s.vpp = vpp;
    s.mbs = mbs;
    s.gbs = gbs;
    s.seq_len = 2048;
    s.sp = sp;
    s.recompute = rc;
    s.zero = zero;
    s.overlap_grad_reduce = zero > 0;
    s.n_stages = pp;
    for (i = 0; i < pp; i++)
        s.stage[i] = (stage_spec){0, i * (96 / pp / vpp), 96 / pp, tp, dp};
    return s;
}

START_TEST(korthikanti_175b_plan)
{
    fixture f;
    evaluation e;
    planner_error rule;
    strategy s = make(8, 8, 1, 3, 1, 64, true, RECOMPUTE_SELECTIVE, 0);
    setup(&f);
    ck_assert_int_eq(strategy_check(&f.m, &s, tu_err(&rule)), 0);
    evaluate(&f.m, &f.c, &f.p, &s, &e);
    ck_assert(e.feasible);
    ck_assert_int_eq(e.gpus, 64);
    ck_assert_int_eq(e.n_stages, 8);
    ck_assert_rel(e.tokens_per_s_per_gpu, 64.0 * 2048 / e.step_time_s / 64, 1e-12);
    ck_assert_rel(e.tflops_per_gpu,
                  model_flops_per_step(&f.m, 64, 2048) / e.step_time_s / 64 / 1e12, 1e-12);
    ck_assert(e.mfu > 0.2 && e.mfu < 1.0);
    /* published: 13.75 s per iteration (Korthikanti et al. Table 5) */
    ck_assert_rel(e.step_time_s, 13.75, 0.25);
    ck_assert(e.peak_memory_bytes < e.stage_memory[e.peak_stage].capacity_bytes);
    ck_assert_ptr_nonnull(e.binding);
}
END_TEST

START_TEST(more_hardware_never_slower)
{
    static const int knobs = 5;
    fixture f;
    evaluation base, better;
    strategy s = make(4, 4, 4, 2, 1, 256, true, RECOMPUTE_FULL, 1);
    int k;
    setup(&f);
    evaluate(&f.m, &f.c, &f.p, &s, &base);
    for (k = 0; k < knobs; k++) {
        fixture g;
        setup(&g);
        switch (k) {
        case 0: g.g.inter_bytes_per_s *= 2; break;
        case 1: g.g.intra_bytes_per_s *= 2; break;
        case 2: g.g.gpu.hbm_bytes_per_s *= 2; break;
        case 3: g.g.gpu.peak_flops[PEAK_BF16] *= 2; break;
        case 4: g.g.gpu.usable_mem_bytes *= 2; break;
        }
        evaluate(&g.m, &g.c, &g.p, &s, &better);
        ck_assert_msg(better.step_time_s <= base.step_time_s * (1 + 1e-12),
                      "knob %d: %g > %g", k, better.step_time_s, base.step_time_s);
        ck_assert(better.feasible || !base.feasible);
    }
    /* faster links strictly help a plan with exposed communication */
    {
        fixture g;
        setup(&g);
        g.g.intra_bytes_per_s *= 4;
        evaluate(&g.m, &g.c, &g.p, &s, &better);
        ck_assert(better.step_time_s < base.step_time_s);
    }
}
END_TEST

START_TEST(memory_grows_with_microbatch)
{
    fixture f;
    evaluation e1, e2, e4;
    strategy s1 = make(8, 8, 1, 1, 1, 64, true, RECOMPUTE_SELECTIVE, 0);
    strategy s2 = make(8, 8, 1, 1, 2, 64, true, RECOMPUTE_SELECTIVE, 0);
    strategy s4 = make(8, 8, 1, 1, 4, 64, true, RECOMPUTE_SELECTIVE, 0);
    setup(&f);
    evaluate(&f.m, &f.c, &f.p, &s1, &e1);
    evaluate(&f.m, &f.c, &f.p, &s2, &e2);
    evaluate(&f.m, &f.c, &f.p, &s4, &e4);
    ck_assert(e2.stage_memory[0].activations_bytes > e1.stage_memory[0].activations_bytes);
    ck_assert(e4.peak_memory_bytes > e2.peak_memory_bytes);
    ck_assert(e2.peak_memory_bytes > e1.peak_memory_bytes);
    /* weights do not depend on the micro-batch */
    ck_assert_rel(e4.stage_memory[3].weights_bytes, e1.stage_memory[3].weights_bytes, 1e-12);
    /* full recompute needs less than selective */
    {
        strategy sf = make(8, 8, 1, 1, 4, 64, true, RECOMPUTE_FULL, 0);
        evaluation ef;
        evaluate(&f.m, &f.c, &f.p, &sf, &ef);
        ck_assert(ef.peak_memory_bytes < e4.peak_memory_bytes);
        ck_assert(ef.step_time_s > e4.step_time_s);
    }
}
END_TEST

START_TEST(infeasible_reported)
{
    fixture f;
    evaluation e;
    /* 175B replicated on every GPU: 18 bytes x 175e9 = 3.1 TB per GPU */
    strategy s = make(1, 1, 64, 1, 1, 64, false, RECOMPUTE_FULL, 0);
    setup(&f);
    evaluate(&f.m, &f.c, &f.p, &s, &e);
    ck_assert(!e.feasible);
    ck_assert(strlen(e.reason) > 0);
    ck_assert_str_eq(e.binding, "memory");
    ck_assert(e.stage_memory[0].weights_bytes + e.stage_memory[0].grads_bytes +
              e.stage_memory[0].optimizer_bytes > 3.0e12);
}
END_TEST

START_TEST(embedding_and_logits_on_end_stages)
{
    fixture f;
    evaluation e;
    strategy s = make(8, 8, 1, 1, 1, 64, true, RECOMPUTE_SELECTIVE, 0);
    setup(&f);
    evaluate(&f.m, &f.c, &f.p, &s, &e);
    /* the last stage computes the logits: slowest; middle stages equal */
    ck_assert(e.stage_fwd_s[7] > e.stage_fwd_s[3]);
    ck_assert_rel(e.stage_fwd_s[3], e.stage_fwd_s[4], 1e-12);
    /* stage 0 holds the (V + positions) h / t embedding, in 16 bits */
    ck_assert_rel(e.stage_memory[0].weights_bytes - e.stage_memory[3].weights_bytes,
                  2.0 * (51200 + 2048) * 12288 / 8, 1e-9);
}
END_TEST

START_TEST(uneven_stages_honoured)
{
    fixture f;
    evaluation even, uneven;
    strategy s = make(8, 4, 2, 1, 1, 64, true, RECOMPUTE_SELECTIVE, 1);
    setup(&f);
    evaluate(&f.m, &f.c, &f.p, &s, &even);
    s.stage[0].n_layers = 20;
    s.stage[1].first_layer = 20;
    s.stage[1].n_layers = 28;
    evaluate(&f.m, &f.c, &f.p, &s, &uneven);
    ck_assert(uneven.stage_fwd_s[1] > even.stage_fwd_s[1]);
    ck_assert(uneven.stage_fwd_s[0] < even.stage_fwd_s[0]);
    ck_assert(uneven.step_time_s > even.step_time_s);
}
END_TEST

START_TEST(ranges_add_up)
{
    fixture f;
    range_cost a, b, ab;
    strategy s = make(8, 1, 8, 1, 2, 64, true, RECOMPUTE_NONE, 1);
    setup(&f);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 10, 30, false, false, &a);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 40, 20, false, false, &b);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 10, 50, false, false, &ab);
    ck_assert_rel(a.fwd_s + b.fwd_s, ab.fwd_s, 1e-12);
    ck_assert_rel(a.bwd_s + b.bwd_s, ab.bwd_s, 1e-12);
    ck_assert_rel(a.params + b.params, ab.params, 1e-12);
    ck_assert_rel(a.act_bytes + b.act_bytes, ab.act_bytes, 1e-12);
}
END_TEST

/* A range's cost depends on its layers only through their specs, in order
 * (what evaluate() relies on to cost a pipeline's alike chunks once): with
 * 128-token windows on the odd layers and block recompute of 3 layers,
 * layers 10-17 and 20-27 cost the same to the bit, 11-18 (windows on the
 * other layers) differently. */
START_TEST(alike_ranges_cost_alike)
{
    fixture f;
    range_cost a, b, odd;
    strategy s = make(8, 4, 2, 1, 1, 64, true, RECOMPUTE_FULL, 1);
    s.recompute_method = RECOMPUTE_BLOCK;
    s.recompute_layers = 3;
    setup(&f);
    for (int i = 1; i < 96; i += 2)
        f.layers[i].window = 128;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 10, 8, false, false, &a);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 20, 8, false, false, &b);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 11, 8, false, false, &odd);
    ck_assert(memcmp(&a, &b, sizeof a) == 0);
    ck_assert(a.fwd_s > 0 && a.recompute_s > 0);
    ck_assert(odd.fwd_s != a.fwd_s);
}
END_TEST

/* evaluate() costs a pipeline's alike chunks once (evaluate.c rank_range's
 * memo of the evaluation's ranges): a stage whose layers differ from an
 * earlier stage's of the same length and end-stage flags is costed apart.
 * GPT-3 175B at pp 4, 128-token windows on stage 1's layers 24-47: stages
 * 1 and 2 (both middle, 24 layers) each cost what cost_layer_range gives
 * their own layers, stage 1 less (128 of 2048 keys per query); stage 3
 * (windowless like 2, but the last) its own. */
START_TEST(evaluate_costs_unlike_stages_apart)
{
    fixture f;
    range_cost mid1, mid2, last;
    evaluation e;
    strategy s = make(8, 4, 2, 1, 1, 64, true, RECOMPUTE_NONE, 1);
    setup(&f);
    for (int i = 24; i < 48; i++)
        f.layers[i].window = 128;
    evaluate(&f.m, &f.c, &f.p, &s, &e);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 24, 24, false, false, &mid1);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 48, 24, false, false, &mid2);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 72, 24, false, true, &last);
    ck_assert(mid1.fwd_s < mid2.fwd_s);
    ck_assert_rel(e.stage_fwd_s[1], mid1.fwd_s, 1e-12);
    ck_assert_rel(e.stage_fwd_s[2], mid2.fwd_s, 1e-12);
    ck_assert_rel(e.stage_fwd_s[3], last.fwd_s, 1e-12);
}
END_TEST

/* A sliding-window layer after a full-attention one is costed as itself:
 * the range's per-layer reuse compares the attention span too (gpt-oss
 * alternates 128-token windows with full attention; before, every layer of
 * a range took its first layer's attention: the range's forward was 2 x
 * the full layer's). */
START_TEST(window_layers_costed_apart)
{
    fixture f;
    range_cost full, win, both;
    strategy s = make(8, 1, 8, 1, 2, 64, true, RECOMPUTE_NONE, 1);
    setup(&f);
    f.layers[11].window = 128;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 10, 1, false, false, &full);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 11, 1, false, false, &win);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 10, 2, false, false, &both);
    ck_assert(win.fwd_s < full.fwd_s);   /* 128 of 2048 keys per query */
    ck_assert_rel(full.fwd_s + win.fwd_s, both.fwd_s, 1e-12);
    ck_assert_rel(full.bwd_s + win.bwd_s, both.bwd_s, 1e-12);
}
END_TEST

/* With the attention in FP8 (model.fp8_attention, layer_cost.c
 * attention_bwd_s) a sliding-window layer's backward scores every causal
 * key: cuDNN's FP8 SDPA backward does not skip the tiles outside the
 * window.  By hand, one GPT-3 175B layer (96 heads x 128) with a 128-token
 * window on GB300 (bf16 peak 2,500 TFLOP/s, Blackwell Ultra attn_eff
 * 0.470), MXFP8, tp 8, micro-batch 2 x 2048: full causal 4 x 2 x 2048 x
 * 2048 x 12288 / 8 = 51,539,607,552 FLOP, the window's 2 x 128 - 128^2 /
 * 2048 = 248 keys 6,241,124,352; the backward grows by 2.5 x 0.5 x their
 * difference / (2.5e15 x 0.47) = 48.19 us; and at head_dim 128 both
 * passes scale by cuDNN's MXFP8 over bf16 time for llama3.1's shape on GB300
 * (cost_fp8_attention_ratio: forward 0.242 / 0.323, backward 1.203 /
 * 1.101), the windowed forward over its 248 keys, the backward over all;
 * a layer without a window scales alike; in bf16 the flag changes
 * nothing. */
START_TEST(fp8_attention_window_backward_full)
{
    fixture f;
    range_cost off, on;
    const gpu_spec *gpu = catalog_find("GB300");
    strategy s = make(8, 1, 8, 1, 2, 64, true, RECOMPUTE_NONE, 1);
    double rate = 2.5e15 * 0.47, ks, rf = 0.242 / 0.323, rb = 1.203 / 1.101;
    double win, full;
    setup(&f);
    ck_assert_ptr_nonnull(gpu);
    f.g.gpu = *gpu;
    ks = f.p.gen[GEN_BLACKWELL_ULTRA].kernel_s;
    win = 0.5 * 6241124352.0 / rate + ks;
    full = 0.5 * 51539607552.0 / rate + ks;
    f.m.prec = PREC_MXFP8;
    f.layers[11].window = 128;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 11, 1, false, false, &off);
    f.m.fp8_attention = true;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 11, 1, false, false, &on);
    ck_assert_rel(on.fwd_s - off.fwd_s, (rf - 1.0) * win, 1e-9);
    ck_assert_rel(on.bwd_s - off.bwd_s, 2.5 * (rb * full - win), 1e-9);
    /* a layer without a window */
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 10, 1, false, false, &on);
    f.m.fp8_attention = false;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 10, 1, false, false, &off);
    ck_assert_rel(on.fwd_s - off.fwd_s, (rf - 1.0) * full, 1e-9);
    ck_assert_rel(on.bwd_s - off.bwd_s, 2.5 * (rb - 1.0) * full, 1e-9);
    /* 16-bit: no FP8 attention */
    f.m.prec = PREC_BF16;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 11, 1, false, false, &off);
    f.m.fp8_attention = true;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 11, 1, false, false, &on);
    ck_assert_rel(on.bwd_s, off.bwd_s, 1e-12);
}
END_TEST

/* FP8 attention's backward at head_dim 64 (layer_cost.c FP8_SDPA_BWD_D64*,
 * cudnn-frontend's gpt_oss against llama3.1 backward at equal FLOPs): the
 * same GPT-3 layer recut into 192 heads x 64 (the
 * FLOPs unchanged, 51,539,607,552 at tp 8, micro-batch 2 x 2048) on GB300,
 * no window: the backward without the flag 2.5 x (0.5 x F / (2.5e15 x
 * 0.47) + kernel_s); with it 1.57 x that in MXFP8, 1.49 x in per-tensor
 * FP8; at head_dim 128 the llama3.1 shape's MXFP8 backward, 1.203 / 1.101 x
 * (cost_fp8_attention_ratio); on H100 nothing changes (the benchmark ran
 * Blackwell only). */
START_TEST(fp8_attention_d64_backward)
{
    fixture f;
    range_cost off, on;
    const gpu_spec *gpu = catalog_find("GB300");
    strategy s = make(8, 1, 8, 1, 2, 64, true, RECOMPUTE_NONE, 1);
    double bwd;
    setup(&f);
    f.g.gpu = *gpu;
    bwd = 2.5 * (0.5 * 51539607552.0 / (2.5e15 * 0.47) + f.p.gen[GEN_BLACKWELL_ULTRA].kernel_s);
    f.m.prec = PREC_MXFP8;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 10, 1, false, false, &off);
    f.m.fp8_attention = true;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 10, 1, false, false, &on);
    ck_assert_rel(on.bwd_s - off.bwd_s, (1.203 / 1.101 - 1.0) * bwd, 1e-9);   /* head_dim 128 */
    for (int i = 0; i < 96; i++)
        f.layers[i] = (layer_spec){12288, 192, 192, 64, 49152, false, 0, 0};
    f.m.fp8_attention = false;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 10, 1, false, false, &off);
    f.m.fp8_attention = true;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 10, 1, false, false, &on);
    ck_assert_rel(on.bwd_s - off.bwd_s, 0.57 * bwd, 1e-9);
    ck_assert_rel(on.fwd_s, off.fwd_s, 1e-12);
    f.m.prec = PREC_FP8;
    f.m.fp8_attention = false;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 10, 1, false, false, &off);
    f.m.fp8_attention = true;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 10, 1, false, false, &on);
    ck_assert_rel(on.bwd_s - off.bwd_s, 0.49 * bwd, 1e-9);
    f.g.gpu = *catalog_find("H100-SXM");
    f.m.fp8_attention = false;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 10, 1, false, false, &off);
    f.m.fp8_attention = true;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 10, 1, false, false, &on);
    ck_assert_rel(on.bwd_s, off.bwd_s, 1e-12);
}
END_TEST

/* FP8 attention's time over the 16-bit one's above head_dim 64
 * (cost_fp8_attention_ratio), cudnn-frontend's published SDPA benchmark
 * at b 2, s 4096, causal: DeepSeek-V3's multi-latent attention (qk 192)
 * on GB300 in MXFP8, forward 0.546 / 0.864 = 0.632 and backward 2.348 /
 * 3.127 = 0.751 of bf16; head_dim 128 on GB200 (B200 alike) in per-tensor
 * FP8, 0.305 / 0.391 = 0.780 and 1.167 / 1.198 = 0.974; 1 on H100, in
 * bf16, without the flag, and at head_dim 64 (FP8_SDPA_BWD_D64's). */
START_TEST(fp8_attention_shape_ratio)
{
    fixture f;
    layer_spec mla = {7168, 128, 128, 192, 18432, true, 0, 0};
    layer_spec d128 = {12288, 96, 96, 128, 49152, false, 0, 0};
    layer_spec d64 = {12288, 192, 192, 64, 49152, false, 0, 0};
    const gpu_spec *gb300 = catalog_find("GB300"), *b200 = catalog_find("B200");
    const gpu_spec *h100 = catalog_find("H100-SXM");
    setup(&f);
    f.m.prec = PREC_MXFP8;
    f.m.fp8_attention = true;
    ck_assert_rel(cost_fp8_attention_ratio(&f.m, &mla, gb300, false), 0.546 / 0.864, 1e-12);
    ck_assert_rel(cost_fp8_attention_ratio(&f.m, &mla, gb300, true), 2.348 / 3.127, 1e-12);
    ck_assert_rel(cost_fp8_attention_ratio(&f.m, &d64, gb300, true), 1.0, 1e-12);
    ck_assert_rel(cost_fp8_attention_ratio(&f.m, &mla, h100, true), 1.0, 1e-12);
    f.m.prec = PREC_FP8;
    ck_assert_rel(cost_fp8_attention_ratio(&f.m, &d128, b200, false), 0.305 / 0.391, 1e-12);
    ck_assert_rel(cost_fp8_attention_ratio(&f.m, &d128, b200, true), 1.167 / 1.198, 1e-12);
    f.m.fp8_attention = false;
    ck_assert_rel(cost_fp8_attention_ratio(&f.m, &d128, b200, false), 1.0, 1e-12);
    f.m.fp8_attention = true;
    f.m.prec = PREC_BF16;
    ck_assert_rel(cost_fp8_attention_ratio(&f.m, &mla, gb300, true), 1.0, 1e-12);
}
END_TEST

/* The output layer in MXFP8 (model.fp8_output_proj, layer_cost.c
 * add_output_cost): by hand, the GPT-3 fixture's last stage on GB300 at tp
 * 8, micro-batch 2 x 2048 (4,096 tokens), its vocabulary GEMM 4,096 x 6,400
 * (51,200 / 8) x 12,288, 644,245,094,400 FLOP.  16-bit: / (2.5e15 x
 * gemm_eff) + (4,096 x 12,288 + 12,288 x 6,400 + 4,096 x 6,400) x 2 B /
 * (8e12 x hbm_eff) + kernel_s; MXFP8: / (5e15 x fp8_gemm_eff x 0.951) + the
 * same operands at 1 B + kernel_s, with the quantization of the input
 * forward (4 B x 4,096 x 12,288) and of the logits' gradient backward (4 B
 * x 4,096 x 6,400), one kernel each.  The forward changes by MXFP8 GEMM +
 * input cast - 16-bit GEMM, the backward by twice the GEMMs' difference +
 * the gradient's cast; in per-tensor FP8 or bf16 the flag changes nothing
 * (Megatron-Core's is_mxfp8_output_proj_active). */
START_TEST(fp8_output_proj_mxfp8_head)
{
    fixture f;
    range_cost off, on;
    const gen_constants *k;
    strategy s = make(8, 1, 8, 1, 2, 64, true, RECOMPUTE_NONE, 1);
    double flops = 2.0 * 4096 * 6400 * 12288;
    double opnd = 4096.0 * 12288 + 12288.0 * 6400 + 4096.0 * 6400;
    double hbm, bf, mx, cf, cb;
    setup(&f);
    f.g.gpu = *catalog_find("GB300");
    k = &f.p.gen[GEN_BLACKWELL_ULTRA];
    hbm = 8e12 * k->hbm_eff;
    bf = flops / (2.5e15 * k->gemm_eff) + 2.0 * opnd / hbm + k->kernel_s;
    mx = flops / (5e15 * k->fp8_gemm_eff * 0.951) + opnd / hbm + k->kernel_s;
    cf = 4.0 * 4096 * 12288 / hbm + k->kernel_s;
    cb = 4.0 * 4096 * 6400 / hbm + k->kernel_s;
    f.m.prec = PREC_MXFP8;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 95, 1, false, true, &off);
    f.m.fp8_output_proj = true;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 95, 1, false, true, &on);
    ck_assert_rel(on.fwd_s - off.fwd_s, mx + cf - bf, 1e-9);
    ck_assert_rel(on.bwd_s - off.bwd_s, 2.0 * (mx - bf) + cb, 1e-9);
    f.m.prec = PREC_FP8;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 95, 1, false, true, &on);
    f.m.fp8_output_proj = false;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 95, 1, false, true, &off);
    ck_assert_rel(on.fwd_s, off.fwd_s, 1e-12);
    ck_assert_rel(on.bwd_s, off.bwd_s, 1e-12);
}
END_TEST

/* Activations kept per layer, FP8 vs BF16, by hand for one Llama 3 70B
 * layer (h 8192, 64 heads x 128, 8 KV heads, f 28672 SwiGLU) at tp 4 with
 * SP, micro-batch 1, sequence 8192 (sb = 8192 tokens, / tp 4):
 *   16-bit (Korthikanti, flash attention): outside 10 h = 81,920; Q, O, K,
 *     V 2 (2 x 8192 + 2 x 1024) = 36,864; fc1 out + act out 6 f = 172,032:
 *     290,816 B per token (35.5 h) -> x 8192 / 4 = 595,591,168 B;
 *   FP8 (Transformer Engine saves its GEMM inputs in FP8): the two LN
 *     outputs -8192 each, the fc2 input -28,672, the FP8 copy of the proj
 *     input +8192: 253,952 B per token (31.0 h) -> 520,093,696 B.
 * Full recompute keeps the 16-bit layer input either way: 2 h sb / t. */
START_TEST(fp8_saved_activations)
{
    fixture f;
    range_cost a;
    strategy s = make(4, 1, 1, 1, 1, 1, true, RECOMPUTE_NONE, 0);
    setup(&f);
    f.m.layers = 1;
    f.m.hidden = 8192;
    f.m.heads = 64;
    f.m.kv_heads = 8;
    f.m.head_dim = 128;
    f.m.ffn_hidden = 28672;
    f.m.act = ACT_SWIGLU;
    f.m.vocab = 128256;
    f.layers[0] = (layer_spec){8192, 64, 8, 128, 28672, false, 0, 0};
    s.seq_len = 8192;
    s.stage[0] = (stage_spec){0, 0, 1, 4, 1};
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 4, 0, 1, false, false, &a);
    ck_assert_rel(a.act_bytes, 595591168.0, 1e-12);
    f.m.prec = PREC_FP8;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 4, 0, 1, false, false, &a);
    ck_assert_rel(a.act_bytes, 520093696.0, 1e-12);
    s.recompute = RECOMPUTE_FULL;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 4, 0, 1, false, false, &a);
    ck_assert_rel(a.act_bytes, 2.0 * 8192 * 8192 / 4, 1e-12);
}
END_TEST

/* A small GPT of 4 layers (h 1024, 16 heads x 64, f 4096 GeLU) in f, on
 * one pipeline rank of s. */
static void small_gpt(fixture *f, strategy *s)
{
    setup(f);
    f->m.layers = 4;
    f->m.hidden = 1024;
    f->m.heads = f->m.kv_heads = 16;
    f->m.head_dim = 64;
    f->m.ffn_hidden = 4096;
    for (int i = 0; i < 4; i++)
        f->layers[i] = (layer_spec){1024, 16, 16, 64, 4096, false, 0, 0};
    s->stage[0] = (stage_spec){0, 0, 4, 1, 1};
}

/* Block and uniform recompute by hand on a small GPT (4 layers, h 1024, 16
 * heads x 64, f 4096 GeLU, tp 1, no SP, micro-batch 1, sequence 2048: sb =
 * 2048 tokens).  A layer keeps 34 s b h = 71,303,168 B (Korthikanti with
 * flash attention: 10 sbh outside, Q K V O 8 sbh, fc1 out + GeLU out 16
 * sbh); a checkpointed one its input, 2 s b h = 4,194,304 B.  Over the
 * 4-layer range (one pipeline chunk):
 *   block 1: 3 x 71,303,168 + 4,194,304 = 218,103,808 B kept; re-running
 *     layer 0 needs its 71,303,168 B, the 3 kept layers above it freed 3 x
 *     67,108,864 first: no transient bytes;
 *   block 3: 71,303,168 + 3 x 4,194,304 = 83,886,080 B; transient
 *     71,303,168 - 67,108,864 = 4,194,304 B;
 *   every layer (N = 0, or N >= 4): 16,777,216 B kept, 71,303,168 B transient;
 *   uniform 2: two group inputs, 8,388,608 B; a group re-run holds 2 layers,
 *     142,606,336 B.
 * Time: each checkpointed layer runs its forward once more (a quarter of
 * the range's forward here: no TP, no embedding): block N adds N / 4 of it
 * to the backward, uniform and N = 0 all of it. */
START_TEST(block_recompute_by_hand)
{
    fixture f;
    range_cost none, r;
    strategy s = make(1, 1, 1, 1, 1, 1, false, RECOMPUTE_NONE, 0);
    const double full = 71303168.0, in = 4194304.0;
    static const struct { int n; int method; double act, extra; } want[] = {
        {1, RECOMPUTE_BLOCK, 218103808.0, 0},
        {2, RECOMPUTE_BLOCK, 2 * 71303168.0 + 2 * 4194304.0, 0},
        {3, RECOMPUTE_BLOCK, 83886080.0, 4194304.0},
        {4, RECOMPUTE_BLOCK, 16777216.0, 71303168.0},
        {9, RECOMPUTE_BLOCK, 16777216.0, 71303168.0},
        {0, RECOMPUTE_BLOCK, 16777216.0, 71303168.0},
        {2, RECOMPUTE_UNIFORM, 8388608.0, 142606336.0},
        {1, RECOMPUTE_UNIFORM, 16777216.0, 71303168.0},
    };
    small_gpt(&f, &s);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 4, false, false, &none);
    ck_assert_rel(none.act_bytes, 4 * full, 1e-12);
    ck_assert(none.act_peak_extra_bytes == 0 && none.recompute_s == 0);
    ck_assert(in == 2.0 * 2048 * 1024);
    s.recompute = RECOMPUTE_FULL;
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        int n = want[k].n <= 0 || want[k].n > 4 || want[k].method == RECOMPUTE_UNIFORM
                    ? 4 : want[k].n;
        s.recompute_layers = want[k].n;
        s.recompute_method = want[k].method;
        cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 4, false, false, &r);
        ck_assert_msg(fabs(r.act_bytes - want[k].act) < 1, "N %d method %d: kept %.0f B, want %.0f",
                      want[k].n, want[k].method, r.act_bytes, want[k].act);
        ck_assert_msg(fabs(r.act_peak_extra_bytes - want[k].extra) < 1,
                      "N %d method %d: transient %.0f B, want %.0f", want[k].n, want[k].method,
                      r.act_peak_extra_bytes, want[k].extra);
        ck_assert_rel(r.recompute_s, n / 4.0 * none.fwd_s, 1e-12);
        ck_assert_rel(r.bwd_s, none.bwd_s + n / 4.0 * none.fwd_s, 1e-12);
        ck_assert_rel(r.fwd_s, none.fwd_s, 1e-12);
        /* the re-forward's share of a recomputed layer's backward */
        ck_assert_rel(r.recompute_share, none.fwd_s / (none.bwd_s + none.fwd_s), 1e-12);
    }
}
END_TEST

/* Selective recompute by module on the same small GPT (h 1024, f 4096
 * GeLU, sb = 2048 tokens, tp 1): mlp drops fc1's input 2 s b h, its output
 * 2 s b f and the GeLU output 2 s b f: 4,194,304 + 2 x 16,777,216 =
 * 37,748,736 B per layer, so a layer keeps 71,303,168 - 37,748,736 =
 * 33,554,432 B (16 s b h), one layer's dropped bytes re-made at a time;
 * core_attn keeps everything (flash attention) and re-runs the attention;
 * layernorm and moe_act drop nothing in a dense layer with Transformer
 * Engine's fused norms, and re-run nothing.  Re-run times add up. */
START_TEST(selective_modules_by_hand)
{
    fixture f;
    range_cost none, attn, mlp, both, ln;
    strategy s = make(1, 1, 1, 1, 1, 1, false, RECOMPUTE_NONE, 0);
    small_gpt(&f, &s);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 4, false, false, &none);
    s.recompute = RECOMPUTE_SELECTIVE;
    s.recompute_modules = RC_MOD_CORE_ATTN;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 4, false, false, &attn);
    s.recompute_modules = RC_MOD_MLP;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 4, false, false, &mlp);
    s.recompute_modules = RC_MOD_MLP | RC_MOD_CORE_ATTN;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 4, false, false, &both);
    s.recompute_modules = RC_MOD_LAYERNORM | RC_MOD_MOE_ACT;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 4, false, false, &ln);
    ck_assert_rel(attn.act_bytes, 4 * 71303168.0, 1e-12);
    ck_assert(attn.act_peak_extra_bytes == 0 && attn.recompute_s > 0);
    ck_assert_rel(mlp.act_bytes, 4 * 33554432.0, 1e-12);
    ck_assert_rel(mlp.act_peak_extra_bytes, 37748736.0, 1e-12);
    ck_assert_rel(both.act_bytes, mlp.act_bytes, 1e-12);
    ck_assert_rel(both.recompute_s, attn.recompute_s + mlp.recompute_s, 1e-12);
    ck_assert(mlp.recompute_s > 0 && mlp.recompute_s < none.fwd_s);
    ck_assert_rel(mlp.bwd_s, none.bwd_s + mlp.recompute_s, 1e-12);
    ck_assert_rel(ln.act_bytes, none.act_bytes, 1e-12);
    ck_assert(ln.recompute_s == 0 && ln.act_peak_extra_bytes == 0);
}
END_TEST

/* mla_up_proj on the small GPT given multi-latent attention (q LoRA 256,
 * kv LoRA 128, 16 heads of q/k 48 + 16 RoPE and v 64; sb = 2048 tokens,
 * tp 1): Megatron-Core discards the checkpointed up-projections' Q, K, V
 * once core attention has used them, 2 s b heads (2 x 64 + 64) =
 * 2 x 2048 x 16 x 192 = 12,582,912 B per layer (one layer's re-made at a
 * time), and re-runs q up (2048 x 1024 x 256) and kv up (2048 x 16 (48 +
 * 64) = 1792 x 128) in the backward, 4 layers in the range.  The dense
 * MLP's re-run is its fc1 and fc2, after MLA's five attention GEMMs (it
 * re-ran the kv projections while the MLP was taken to start at the third
 * GEMM). */
START_TEST(selective_mla_up_proj_by_hand)
{
    fixture f;
    range_cost none, mla, mlp;
    strategy s = make(1, 1, 1, 1, 1, 1, false, RECOMPUTE_NONE, 0);
    const gen_constants *k;
    tf_gemm up[2] = {{2048, 1024, 256, 1}, {2048, 1792, 128, 1}};
    tf_gemm fc[2] = {{2048, 4096, 1024, 1}, {2048, 1024, 4096, 1}};
    small_gpt(&f, &s);
    k = &f.p.gen[f.g.gpu.gen];
    f.m.mla = (model_mla){256, 128, 48, 16, 64};
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 4, false, false, &none);
    s.recompute = RECOMPUTE_SELECTIVE;
    s.recompute_modules = RC_MOD_MLA_UP_PROJ;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 4, false, false, &mla);
    ck_assert_rel(mla.act_bytes, none.act_bytes - 4 * 12582912.0, 1e-12);
    ck_assert_rel(mla.act_peak_extra_bytes, 12582912.0, 1e-12);
    ck_assert_rel(mla.recompute_s, 4 * compute_gemms_s(&f.g.gpu, k, PREC_BF16, 2, up, 2), 1e-12);
    ck_assert_rel(mla.bwd_s, none.bwd_s + mla.recompute_s, 1e-12);
    s.recompute_modules = RC_MOD_MLP;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 4, false, false, &mlp);
    ck_assert(mlp.recompute_s > 4 * compute_gemms_s(&f.g.gpu, k, PREC_BF16, 2, fc, 2));
    ck_assert(mlp.recompute_s < 4 * compute_gemms_s(&f.g.gpu, k, PREC_BF16, 2, fc, 2) * 1.5);
    /* the rule: only with MLA */
    s.recompute_modules = RC_MOD_MLA_UP_PROJ;
    ck_assert_int_eq(knob_rule(&f.m, &s, KNOB_RECOMPUTE_MODULES, NULL), PLANNER_OK);
    f.m.mla.kv_lora_rank = 0;
    ck_assert_int_ne(knob_rule(&f.m, &s, KNOB_RECOMPUTE_MODULES, NULL), PLANNER_OK);
    s.recompute_modules = RC_MOD_MLP;
    ck_assert_int_eq(knob_rule(&f.m, &s, KNOB_RECOMPUTE_MODULES, NULL), PLANNER_OK);
}
END_TEST

/* Block recompute of N layers per chunk on GPT-3 175B (tp 8, pp 8: 12
 * layers per rank; vpp 1, 2, 3: 12, 6, 4 per chunk; several micro-batches
 * in flight): the peak memory never grows and the step never shrinks as N
 * grows, and N >= the chunk's layers is every layer (N = 0). */
START_TEST(block_recompute_monotone_in_n)
{
    fixture f;
    evaluation prev, e, all;
    setup(&f);
    for (int vpp = 1; vpp <= 3; vpp++)
        for (int mbs = 1; mbs <= 2; mbs++) {
            strategy s = make(8, 8, 1, vpp, mbs, 192, true, RECOMPUTE_FULL, 0);
            int per = 12 / vpp;
            s.recompute_layers = 0;
            evaluate(&f.m, &f.c, &f.p, &s, &all);
            s.recompute = RECOMPUTE_NONE;
            evaluate(&f.m, &f.c, &f.p, &s, &prev);
            s.recompute = RECOMPUTE_FULL;
            for (int n = 1; n <= per + 1; n++) {
                s.recompute_layers = n;
                evaluate(&f.m, &f.c, &f.p, &s, &e);
                ck_assert_msg(e.peak_memory_bytes <= prev.peak_memory_bytes * (1 + 1e-12),
                              "vpp %d mbs %d: block %d needs %.4g B, block %d %.4g", vpp, mbs,
                              n, e.peak_memory_bytes, n - 1, prev.peak_memory_bytes);
                ck_assert(e.step_time_s >= prev.step_time_s * (1 - 1e-12));
                ck_assert(e.peak_memory_bytes >= all.peak_memory_bytes * (1 - 1e-12));
                ck_assert(e.step_time_s <= all.step_time_s * (1 + 1e-12));
                if (n >= per) {
                    ck_assert_rel(e.peak_memory_bytes, all.peak_memory_bytes, 1e-12);
                    ck_assert_rel(e.step_time_s, all.step_time_s, 1e-12);
                } else {
                    ck_assert(e.peak_memory_bytes < prev.peak_memory_bytes);
                    ck_assert(e.step_time_s > prev.step_time_s);
                }
                prev = e;
            }
        }
}
END_TEST

/* moe_host_s: each MoE layer pays the host-paced time of Megatron's token
 * dispatcher (device-to-host sync of the tokens per expert) once in the
 * forward and twice in the backward, per micro-batch; the full-recompute
 * re-forward pays it again; dense layers never.  Qwen3-30B-A3B-like: one
 * dense layer then one MoE layer (128 experts, top-8, expert ffn 768), ep 8
 * over one DGX, 4 micro-batches on one pipeline rank. */
/* A Qwen3-30B-A3B-like model of `n` layers (h 2048, 32 heads, 4 query
 * groups, top-8 of 128 experts of width 768): the last layer MoE, the others
 * dense SwiGLU MLPs of 6144. */
static void moe_model(fixture *f, int n)
{
    f->m.layers = n;
    f->m.hidden = 2048;
    f->m.heads = 32;
    f->m.kv_heads = 4;
    f->m.head_dim = 128;
    f->m.ffn_hidden = 6144;
    f->m.act = ACT_SWIGLU;
    f->m.moe.experts = 128;
    f->m.moe.top_k = 8;
    f->m.moe.expert_ffn = 768;
    for (int i = 0; i < n; i++)
        f->layers[i] = (layer_spec){2048, 32, 4, 128, 6144, i == n - 1, 0, 0};
}

/* An FP8 recipe's MoE layer, by hand against its 16-bit count, on the
 * Qwen3-30B-A3B-like MoE layer of moe_model (h 2048, 32 heads x 128: q 4096;
 * top-8 of 128 experts of width 768), tp 1 without SP, ep 8, micro-batch 1,
 * sequence 4096 (4096 tokens).  Per token: Transformer Engine keeps its
 * GEMM inputs in FP8, the dense rule's -2 h + q (fp8_saved_activations:
 * the two normed inputs, the projection's input; no dense MLP here); a MoE
 * layer's pre-MLP norm feeds the router in 16 bits, + h back; GroupedLinear
 * keeps FP8 copies of the k dispatched inputs, - k h, and of the k
 * activation outputs, - k f_e: -4096 + 4096 + 2048 - 16384 - 6144 = -20,480
 * B.  Under moe_act recompute neither count keeps fc2's input: -14,336 B. */
START_TEST(fp8_moe_saved_activations)
{
    fixture f;
    range_cost bf16, fp8;
    strategy s = make(1, 1, 8, 1, 1, 32, false, RECOMPUTE_NONE, 1);
    const double tokens = 4096;
    setup(&f);
    moe_model(&f, 1);
    s.ep = 8;
    s.seq_len = 4096;
    s.stage[0] = (stage_spec){0, 0, 1, 1, 8};
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &bf16);
    f.m.prec = PREC_FP8;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &fp8);
    ck_assert_rel(fp8.act_bytes - bf16.act_bytes, -20480.0 * tokens, 1e-9);
    s.recompute = RECOMPUTE_SELECTIVE;
    s.recompute_modules = RC_MOD_MOE_ACT;
    f.m.prec = PREC_BF16;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &bf16);
    f.m.prec = PREC_FP8;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &fp8);
    ck_assert_rel(fp8.act_bytes - bf16.act_bytes, -14336.0 * tokens, 1e-9);
    /* torchtitan's float8 experts (torchao's grouped GEMM) save their 16-bit
     * inputs: -4096 + 4096 + 2048 = +2048 B (it was -20,480 B: Transformer
     * Engine's GroupedLinear copies) */
    f.c.stack = STACK_PYTORCH_FSDP2;
    s.recompute = RECOMPUTE_NONE;
    s.recompute_modules = 0;
    f.m.prec = PREC_BF16;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &bf16);
    f.m.prec = PREC_FP8;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &fp8);
    ck_assert_rel(fp8.act_bytes - bf16.act_bytes, 2048.0 * tokens, 1e-9);
}
END_TEST

START_TEST(moe_host_time)
{
    fixture f;
    range_cost d0, d1, m0, m1;
    evaluation a, b;
    strategy s = make(1, 1, 8, 1, 1, 32, false, RECOMPUTE_NONE, 1);
    double hs;
    int g;
    setup(&f);
    for (g = 0; g < GEN_COUNT; g++)      /* a property of the host path */
        ck_assert_double_eq(f.p.gen[g].moe_host_s, 1.75e-3);
    moe_model(&f, 2);
    s.ep = 8;
    s.seq_len = 4096;
    s.stage[0] = (stage_spec){0, 0, 2, 1, 8};
    hs = f.p.gen[GEN_AMPERE].moe_host_s;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &d1);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 1, 1, false, false, &m1);
    evaluate(&f.m, &f.c, &f.p, &s, &b);
    f.p.gen[GEN_AMPERE].moe_host_s = 0;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &d0);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 1, 1, false, false, &m0);
    evaluate(&f.m, &f.c, &f.p, &s, &a);
    ck_assert_double_eq(d1.fwd_s, d0.fwd_s);
    ck_assert_double_eq(d1.bwd_s, d0.bwd_s);
    ck_assert_rel(m1.fwd_s - m0.fwd_s, hs, 1e-9);
    ck_assert_rel(m1.bwd_s - m0.bwd_s, 2.0 * hs, 1e-9);
    /* 32 / (8 x 1) = 4 micro-batches through one rank: 4 x 3 x 1.75 ms */
    ck_assert_rel(b.step_time_s - a.step_time_s, 4 * 3.0 * hs, 1e-9);
    s.recompute = RECOMPUTE_FULL;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 1, 1, false, false, &m0);
    f.p.gen[GEN_AMPERE].moe_host_s = hs;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 1, 1, false, false, &m1);
    ck_assert_rel(m1.bwd_s - m0.bwd_s, 3.0 * hs, 1e-9);
}
END_TEST

/* The interleaved schedule's blocking p2p (evaluate.c rank_chunk_p2p), by
 * hand on GPT-3 175B, tp 8 pp 8 dp 1 on the 8 DGX A100 of the fixture: a
 * stage is one node (stride 8 = the NVLink domain), so every boundary
 * crosses the NIC.  One micro-batch's boundary activation: 1 x 2048 x 12288
 * x 2 B / 8 = 6,291,456 B at 25 GB/s x inter_eff 0.5 + 14 us = 503.31648 +
 * 14 = 517.31648 us.  Megatron-LM 2021 exchanges after each of a rank's 2
 * forward + backward chunk pairs per micro-batch and waits for it: 2 x
 * 517.31648 us more on the backward than at vpp 1, nothing on the forward.
 * Megatron-Core overlaps the transfers: no difference. */
START_TEST(interleaved_chunk_p2p_by_hand)
{
    fixture f;
    evaluation e1, e2;
    strategy s1 = make(8, 8, 1, 1, 1, 64, false, RECOMPUTE_FULL, 0);
    strategy s2 = make(8, 8, 1, 2, 1, 64, false, RECOMPUTE_FULL, 0);
    const double p2p = 6291456.0 / 12.5e9 + 14e-6;
    setup(&f);
    f.g.inter_bytes_per_s = 25e9;
    f.p.gen[GEN_AMPERE].inter_eff = 0.5;
    f.c.stack = STACK_MEGATRON_LM_2021;   /* its scatter/gather: 1/tp a rank */
    ck_assert_rel(cost_boundary_p2p_s(&f.m, &f.c, &f.p, &s2, 3), 517.31648e-6, 1e-9);
    ck_assert_rel(cost_boundary_p2p_s(&f.m, &f.c, &f.p, &s2, 7), 517.31648e-6, 1e-9);
    evaluate(&f.m, &f.c, &f.p, &s1, &e1);
    evaluate(&f.m, &f.c, &f.p, &s2, &e2);
    ck_assert_double_eq_tol(e2.stage_fwd_s[3] - e1.stage_fwd_s[3], 0, 1e-12);
    ck_assert_rel(e2.stage_bwd_s[3] - e1.stage_bwd_s[3], 2 * p2p, 1e-6);
    ck_assert_rel(e2.stage_bwd_s[0] - e1.stage_bwd_s[0], 2 * p2p, 1e-6);   /* the wrap */
    /* the breakdown's pp-comm carries it: 64 micro-batches x 2 exchanges */
    ck_assert(e2.time.pp_comm_s >= 64 * 2 * p2p);
    f.c.stack = STACK_MEGATRON_CORE;
    evaluate(&f.m, &f.c, &f.p, &s1, &e1);
    evaluate(&f.m, &f.c, &f.p, &s2, &e2);
    ck_assert_double_eq_tol(e2.stage_fwd_s[3] - e1.stage_fwd_s[3], 0, 1e-12);
    ck_assert_double_eq_tol(e2.stage_bwd_s[3] - e1.stage_bwd_s[3], 0, 1e-12);
}
END_TEST

/* A software stack's constants (cost_constants): a stack with unfused
 * attention (Megatron-LM 2021) runs core attention at its own attn_eff, not
 * the generation's flash-attention one, so a lower efficiency makes the
 * layer slower by exactly the attention time it adds: forward 0.5 F / peak x
 * (1/e1 - 1/e0), backward 2.5 x that; with its attn_eff equal to the
 * generation's the layer costs the same as on megatron-core.  Its host time
 * per step is the generation's, a current stack's (no built-in stack has
 * its own since 2026-11-25: stack.c), and its own constant does not enter;
 * megatron-core ignores the older stacks' constants too. */
START_TEST(stack_constants_move_the_prediction)
{
    fixture f;
    range_cost core, old, slow;
    evaluation a, b;
    strategy s = make(8, 8, 1, 1, 1, 64, false, RECOMPUTE_NONE, 0);
    stack_constants *sc;
    double attn, peak;
    setup(&f);
    sc = &f.p.stack[STACK_MEGATRON_LM_2021];
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 0, 1, false, false, &core);
    f.c.stack = STACK_MEGATRON_LM_2021;
    sc->attn_eff = f.p.gen[GEN_AMPERE].attn_eff;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 0, 1, false, false, &old);
    ck_assert_double_eq(old.fwd_s, core.fwd_s);
    ck_assert_double_eq(old.bwd_s, core.bwd_s);
    sc->attn_eff = 0.2;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 0, 1, false, false, &slow);
    peak = 312e12;
    attn = 0.5 * tf_attention_flops(&f.m, &f.m.layer[0], 1, 2048, 1, 8) / peak *
           (1.0 / 0.2 - 1.0 / f.p.gen[GEN_AMPERE].attn_eff);
    ck_assert(attn > 0);
    ck_assert_rel(slow.fwd_s - core.fwd_s, attn, 1e-9);
    ck_assert_rel(slow.bwd_s - core.bwd_s, 2.5 * attn, 1e-9);

    ck_assert(!stack_get(STACK_MEGATRON_LM_2021)->own_host_time);
    sc->step_overhead_s = 0.25;
    evaluate(&f.m, &f.c, &f.p, &s, &a);
    ck_assert_double_eq(a.time.overhead_s, f.p.gen[GEN_AMPERE].step_overhead_s);
    sc->step_overhead_s = 0.35;                      /* not the stack's */
    evaluate(&f.m, &f.c, &f.p, &s, &b);
    ck_assert_double_eq(b.step_time_s, a.step_time_s);
    f.p.gen[GEN_AMPERE].step_overhead_s += 0.1;     /* the generation's */
    evaluate(&f.m, &f.c, &f.p, &s, &b);
    ck_assert_rel(b.step_time_s - a.step_time_s, 0.1, 1e-9);
    f.p.gen[GEN_AMPERE].step_overhead_s -= 0.1;

    f.c.stack = STACK_MEGATRON_CORE;
    evaluate(&f.m, &f.c, &f.p, &s, &a);
    ck_assert_double_eq(a.time.overhead_s, f.p.gen[GEN_AMPERE].step_overhead_s);
    sc->step_overhead_s = 5.0;
    sc->attn_eff = 0.05;
    evaluate(&f.m, &f.c, &f.p, &s, &b);
    ck_assert_double_eq(b.step_time_s, a.step_time_s);
}
END_TEST

/* Parts without BF16 tensor cores (V100, T4) train a bf16 model in fp16
 * with loss scaling: the same step as the fp16 model (the unscale and
 * inf-check pass, the found-inf all-reduce, 2-byte gradient reduction); on
 * A100 bf16 differs (fp32 main-gradient reduction, no loss scaling). */
START_TEST(bf16_on_volta_runs_fp16_with_loss_scaling)
{
    fixture f;
    evaluation a, b;
    strategy s = make(8, 8, 1, 1, 1, 64, false, RECOMPUTE_FULL, 0);
    setup(&f);
    s.dp = 2;
    s.gbs = 64;
    f.g.nodes = 16;
    evaluate(&f.m, &f.c, &f.p, &s, &a);
    f.m.prec = PREC_FP16;
    evaluate(&f.m, &f.c, &f.p, &s, &b);
    ck_assert(a.step_time_s != b.step_time_s);
    f.g.gpu = *catalog_find("V100-SXM2-32GB");
    f.g.gpu.usable_mem_bytes = 1e15;     /* time only */
    evaluate(&f.m, &f.c, &f.p, &s, &b);
    f.m.prec = PREC_BF16;
    evaluate(&f.m, &f.c, &f.p, &s, &a);
    ck_assert_double_eq(a.step_time_s, b.step_time_s);
    ck_assert(a.step_time_s > 0);
}
END_TEST

/* step_overhead_s is per GPU generation: a fixed time added once per step,
 * the generation's own on a homogeneous cluster, the largest of the stages'
 * generations when a plan spans several (the slowest host sets the pace). */
/* MTP layers on the last stage (DeepSeek-V3 report section 2.2; Megatron
 * gpt_model.py): GPT-3 175B's last stage of 2 layers at tp 8 with one MTP
 * layer holds, per GPU, one more layer's parameters (tf_layer_params / tp),
 * the 2h -> h projection (2 h^2 / tp = 37,748,736)
 * and its own embedding copy (51200 h / tp = 78,643,200, tied embeddings:
 * the first stage's otherwise); its forward is one more layer, one more
 * output head + loss, and the projection GEMM (positive). */
START_TEST(mtp_on_last_stage)
{
    fixture f;
    range_cost a, b, one, head;
    strategy s = make(8, 8, 1, 1, 1, 8, true, RECOMPUTE_NONE, 1);
    double h = 12288;
    setup(&f);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 94, 2, false, true, &a);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 95, 1, false, false, &one);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 95, 0, false, true, &head);
    f.m.mtp_layers = 1;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 94, 2, false, true, &b);
    ck_assert_rel(b.params - a.params, tf_layer_params(&f.m, 95) / 8 + 2.0 * h * h / 8, 1e-12);
    ck_assert_double_gt(b.fwd_s - a.fwd_s - one.fwd_s - head.fwd_s, 0);
    ck_assert_double_lt(b.fwd_s - a.fwd_s - one.fwd_s - head.fwd_s, 0.2 * one.fwd_s);
    ck_assert_rel(b.act_bytes - a.act_bytes, one.act_bytes, 1e-12);
    f.m.tied_embeddings = false;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 94, 2, false, true, &b);
    ck_assert_rel(b.params - a.params,
                  tf_layer_params(&f.m, 95) / 8 + 2.0 * h * h / 8 + (51200.0 + 2048) * h / 8,
                  1e-12);
}
END_TEST

/* MoE dispatch/combine all-to-all (layer_cost.c, comm.c): Qwen3-30B-A3B-like
 * layer (h 2048, top-8 of 128 experts) at mbs 1, seq 4096, tp 1, ep 8 in one
 * 8-GPU A100 node.  Each all-to-all moves the k copies of the tokens:
 * 4096 x 8 x 2048 x 2 B = 134,217,728 B, 7/8 of it to the other 7 GPUs over
 * NVLink at intra_bytes_per_s x intra_eff; dispatch + combine, forward and
 * backward: 4 x (t + kernel_s) exposed.  --overlap-moe-expert-parallel-comm
 * (ep_comm_overlap) hides each under the other pass's compute: what is
 * hidden costs overlap_exposed of itself, so the exposed time lies between
 * overlap_exposed x and 1 x the plain one.  Its rule: ep > 1, vpp > 1 when
 * pp > 1, no full recompute. */
/* One RoPE MoE layer (moe_model) at mbs 1, seq 4096, tp 1, dp 8 on one DGX
 * A100, expert parallelism ep. */
static strategy moe_layer_case(fixture *f, int ep)
{
    strategy s = make(1, 1, 8, 1, 1, 32, false, RECOMPUTE_NONE, 1);
    setup(f);
    moe_model(f, 1);
    f->m.position = POS_ROPE;
    s.ep = ep;
    s.seq_len = 4096;
    s.stage[0] = (stage_spec){0, 0, 1, 1, 8};
    return s;
}

START_TEST(moe_alltoall_volume_and_overlap)
{
    fixture f;
    range_cost off, on;
    planner_error rule;
    strategy s = moe_layer_case(&f, 8);
    const gen_constants *k = &f.p.gen[GEN_AMPERE];
    double bytes = 4096.0 * 8 * 2048 * 2, t;
    ck_assert_double_eq(tf_moe_dispatch_bytes(&f.m, &f.layers[0], 4096, 1), 134217728.0);
    t = bytes * 7.0 / 8.0 / (f.g.intra_bytes_per_s * k->intra_eff) + f.g.intra_latency_s;
    ck_assert_rel(comm_alltoall_s(&f.g, k, 8, 1, bytes), t, 1e-12);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &off);
    ck_assert_rel(off.ep_comm_s, 4.0 * (t + k->kernel_s), 1e-12);
    s.ep_comm_overlap = true;
    ck_assert_msg(strategy_check(&f.m, &s, tu_err(&rule)) == 0, "%s", rule.msg);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &on);
    ck_assert_double_lt(on.ep_comm_s, off.ep_comm_s);
    ck_assert_double_ge(on.ep_comm_s, k->overlap_exposed * off.ep_comm_s * (1 - 1e-12));
    /* and the layer's host time (3 x moe_host_s) hides under the other
     * pass's GPU work (moe_host_time_under_a2a_overlap) */
    ck_assert_rel(off.fwd_s + off.bwd_s - on.fwd_s - on.bwd_s,
                  off.ep_comm_s - on.ep_comm_s + 3.0 * k->moe_host_s, 1e-9);
    /* Megatron's rules */
    s.recompute = RECOMPUTE_FULL;
    ck_assert_int_eq(strategy_check(&f.m, &s, tu_err(&rule)), PLANNER_E_INPUT);
    ck_assert_ptr_nonnull(strstr(rule.msg, "full recomputation"));
    s.recompute = RECOMPUTE_NONE;
    s.ep = 1;
    ck_assert_int_eq(strategy_check(&f.m, &s, tu_err(&rule)), PLANNER_E_INPUT);
    ck_assert_ptr_nonnull(strstr(rule.msg, "ep > 1"));
}
END_TEST

/* The overlapped all-to-all's share by its link (layer_cost.c moe_comm,
 * cost_overlapped_on): inside the NVLink domain (ep 8 on one DGX A100) what
 * it hides costs overlap_exposed of itself, so moving overlap_exposed_net
 * changes nothing; an EP group over two nodes (ep 16, dp 16) is NIC-bound
 * and takes overlap_exposed_net, so overlap_exposed changes nothing.  With
 * the all-to-all longer than the compute it hides under (the NIC one), the
 * exposed time grows by exactly the hidden time x the share's change. */
START_TEST(moe_alltoall_overlap_share_by_link)
{
    for (int ep = 8; ep <= 16; ep += 8) {
        fixture f;
        strategy s = moe_layer_case(&f, ep);
        gen_constants *k = &f.p.gen[GEN_AMPERE];
        range_cost r[3];
        s.dp = ep;
        s.stage[0].dp = ep;
        s.ep_comm_overlap = true;
        cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &r[0]);
        double share = k->overlap_exposed;
        k->overlap_exposed = share + 0.1;
        cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &r[1]);
        k->overlap_exposed = share;
        k->overlap_exposed_net += 0.1;
        cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &r[2]);
        if (ep == 8) {
            ck_assert_double_gt(r[1].ep_comm_s, r[0].ep_comm_s);
            ck_assert_double_eq(r[2].ep_comm_s, r[0].ep_comm_s);
        } else {
            ck_assert_double_eq(r[1].ep_comm_s, r[0].ep_comm_s);
            ck_assert_double_gt(r[2].ep_comm_s, r[0].ep_comm_s);
        }
    }
}
END_TEST

/* HybridEP's overlapped all-to-all (layer_cost.c ep_overlap_constants): the
 * flex dispatcher inside the NVLink domain holds 32 SMs (COST_HYBRIDEP_SMS)
 * of the GPU's, so its hidden part costs 32 / 148 of itself on GB200,
 * 32 / 160 on GB300 and 32 / 132 on H100 (compute_sm_count), not
 * overlap_exposed; core_v0.15.0's DeepEP (flex_deepep) 20 / the SMs
 * (COST_DEEPEP_SMS); the alltoall dispatcher keeps overlap_exposed.  The layer of
 * moe_layer_case at ep 8 (one 8-GPU node of the fixture, every all-to-all
 * far shorter than the compute it hides under): the overlapped EP time over
 * the plain one is exactly the share.  The shared-expert overlap takes the
 * same share (one rule): overlap_exposed does not move it under HybridEP. */
START_TEST(hybridep_overlap_sm_share)
{
    const char *gpus[3] = {"GB200", "GB300", "H100-SXM"};
    const double sms[3] = {148.0, 160.0, 132.0};
    for (int g = 0; g < 3; g++) {
        fixture f;
        strategy s = moe_layer_case(&f, 8);
        range_cost off, on;
        f.g.gpu = *catalog_find(gpus[g]);
        ck_assert_int_eq(compute_sm_count(&f.g.gpu), (int)sms[g]);
        s.flex_dispatcher = true;
        cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &off);
        s.ep_comm_overlap = true;
        cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &on);
        ck_assert_rel(on.ep_comm_s, 32.0 / sms[g] * off.ep_comm_s, 1e-9);
        s.flex_deepep = true;   /* DeepEP: its own 20 SMs, the same traffic */
        cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &on);
        ck_assert_rel(on.ep_comm_s, 20.0 / sms[g] * off.ep_comm_s, 1e-9);
        s.flex_deepep = false;
        s.flex_dispatcher = false;
        s.ep_comm_overlap = false;
        cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &off);
        s.ep_comm_overlap = true;
        cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &on);
        ck_assert_rel(on.ep_comm_s,
                      f.p.gen[f.g.gpu.gen].overlap_exposed * off.ep_comm_s, 1e-9);
        /* the shared-expert overlap (flex from core_v0.18.0) hides HybridEP's
         * traffic at the same SM share: overlap_exposed no longer counts */
        s.ep_comm_overlap = false;
        s.flex_dispatcher = true;
        s.shared_expert_overlap = true;
        f.m.moe.shared_experts = 1;
        f.m.moe.shared_expert_ffn = 1536;
        cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &on);
        f.p.gen[f.g.gpu.gen].overlap_exposed = 0.9;
        cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &off);
        ck_assert_double_eq(on.ep_comm_s, off.ep_comm_s);
        s.flex_dispatcher = false;  /* alltoall: overlap_exposed as before */
        cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &off);
        f.p.gen[f.g.gpu.gen].overlap_exposed = 0.408;
        cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &on);
        ck_assert_double_lt(on.ep_comm_s, off.ep_comm_s);
    }
    ck_assert_int_eq(compute_sm_count(catalog_find("H100-SXM")), 132);
    ck_assert_int_eq(compute_sm_count(catalog_find("A100-SXM-80GB")), 0);
}
END_TEST

/* The recipes' Transformer Engine graphs of the router and the dispatch
 * preprocessing (the te_moe_graphs knob) leave 0.53 ms of host-paced time per
 * MoE-layer forward at 8 local experts with the flex dispatcher (NVIDIA's
 * GB200 DeepSeek-V3 write-up: removing the remaining sync is worth at least
 * 10%, one tenth of the GPU time at its layout of 8 local experts:
 * layer_cost.c MOE_HOST_GRAPHED_S), in proportion to the local experts,
 * whatever moe_host_s is; with the alltoall dispatcher the layer keeps
 * moe_host_s; a full-iteration graph none.  The MoE layer of moe_host_time
 * (128 experts), one micro-batch: at ep 8 (16 local experts) forward 1.06
 * ms, backward 2.12 ms over the layer without host time; at ep 4 (32 local
 * experts) 2.12 and 4.24 ms. */
START_TEST(moe_host_time_te_graphs)
{
    fixture f;
    range_cost none, a2a, flex, full;
    strategy s = make(1, 1, 8, 1, 1, 32, false, RECOMPUTE_NONE, 1);
    setup(&f);
    moe_model(&f, 1);
    s.ep = 8;
    s.seq_len = 4096;
    s.stage[0] = (stage_spec){0, 0, 1, 1, 8};
    s.te_moe_graphs = true;
    s.cuda_graph = true;            /* no host time at all: the GPU work */
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &full);
    s.cuda_graph = false;
    f.p.gen[GEN_AMPERE].moe_host_s = 0;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &none);
    f.p.gen[GEN_AMPERE].moe_host_s = 1.5e-3;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &a2a);
    ck_assert_rel(a2a.fwd_s - none.fwd_s, 1.5e-3, 1e-9);     /* alltoall: moe_host_s */
    ck_assert_rel(a2a.bwd_s - none.bwd_s, 3.0e-3, 1e-9);
    ck_assert_double_eq(none.fwd_s, full.fwd_s);
    s.flex_dispatcher = true;
    s.cuda_graph = true;            /* the flex layer's GPU work */
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &none);
    s.cuda_graph = false;
    for (int i = 0; i < 2; i++) {   /* not moe_host_s: 1.5 ms and 4 ms alike */
        f.p.gen[GEN_AMPERE].moe_host_s = i ? 4e-3 : 1.5e-3;
        cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &flex);
        ck_assert_rel(flex.fwd_s - none.fwd_s, 1.06e-3, 1e-9);
        ck_assert_rel(flex.bwd_s - none.bwd_s, 2.12e-3, 1e-9);
    }
    {                               /* ep 4: 32 local experts */
        range_cost g4, n4;
        s.ep = 4;
        s.cuda_graph = true;
        cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &n4);
        s.cuda_graph = false;
        cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &g4);
        ck_assert_rel(g4.fwd_s - n4.fwd_s, 2.12e-3, 1e-9);
        ck_assert_rel(g4.bwd_s - n4.bwd_s, 4.24e-3, 1e-9);
        s.ep = 8;
    }
    /* the search's test (cost_te_moe_graphs_help): 1.06 ms at 16 local
     * experts against moe_host_s 4 ms (helps) and 1 ms (does not); the
     * alltoall dispatcher keeps moe_host_s (no help) */
    ck_assert(cost_te_moe_graphs_help(&f.m, &f.p, &s, GEN_AMPERE));
    f.p.gen[GEN_AMPERE].moe_host_s = 1e-3;
    ck_assert(!cost_te_moe_graphs_help(&f.m, &f.p, &s, GEN_AMPERE));
    f.p.gen[GEN_AMPERE].moe_host_s = 4e-3;
    s.flex_dispatcher = false;
    ck_assert(!cost_te_moe_graphs_help(&f.m, &f.p, &s, GEN_AMPERE));
    s.flex_dispatcher = true;
    s.te_moe_graphs = false;      /* flex without the graphs: moe_host_s */
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &flex);
    ck_assert_rel(flex.fwd_s - none.fwd_s, 4e-3, 1e-9);
}
END_TEST

/* Under the all-to-all overlap (layer_cost.c moe_host_paced: Megatron-Core's
 * combined 1F1B queues the other micro-batch's pass before the dispatcher's
 * sync) a MoE layer's host time hides under the other pass's GPU work: the
 * forward's h under the backward's, the backward's 2 h under the forward's.
 * The MoE layer of moe_host_time at ep 8: a host time below its GPU work
 * costs nothing (without the overlap 3 h); one of 1 s costs 3 s less the
 * layer's GPU forward + backward (compute_s at no host time). */
START_TEST(moe_host_time_under_a2a_overlap)
{
    fixture f;
    strategy s = moe_layer_case(&f, 8);
    gen_constants *k = &f.p.gen[GEN_AMPERE];
    range_cost r0, r1, r2, plain0, plain1;
    s.ep_comm_overlap = true;
    k->moe_host_s = 0;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &r0);
    k->moe_host_s = 1e-5;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &r1);
    k->moe_host_s = 1.0;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &r2);
    ck_assert_double_eq(r1.fwd_s, r0.fwd_s);
    ck_assert_double_eq(r1.bwd_s, r0.bwd_s);
    ck_assert_rel(r2.fwd_s + r2.bwd_s - r0.fwd_s - r0.bwd_s, 3.0 - r0.compute_s, 1e-9);
    s.ep_comm_overlap = false;
    k->moe_host_s = 0;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &plain0);
    k->moe_host_s = 1e-5;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &plain1);
    ck_assert_rel(plain1.fwd_s + plain1.bwd_s - plain0.fwd_s - plain0.bwd_s, 3e-5, 1e-6);
}
END_TEST

/* The alltoall dispatcher's second permutation (layer_cost.c
 * moe_sort_chunks_s; Megatron-Core MoEAlltoAllTokenDispatcher
 * sort_chunks_by_idxs): the same layer at ep 8 holds 128 / 8 = 16 experts a
 * rank, so the received copies, D = 134,217,728 B, are sorted by local
 * expert before the experts and back after them: 2 passes reading and
 * writing D, 4 D = 536,870,912 B at hbm_bytes_per_s x hbm_eff + 2 kernels in
 * the forward, twice that in the backward (the element-wise rule).  The flex
 * dispatcher (DeepEP, HybridEP) permutes once, as the element-wise bytes
 * count already: its compute is 3 x that less.  With 8 experts (one a
 * rank) the alltoall dispatcher does not sort: the two cost the same
 * compute. */
START_TEST(moe_alltoall_sort_chunks_by_hand)
{
    fixture f;
    strategy s = moe_layer_case(&f, 8);
    range_cost r[4];   /* alltoall, flex; then with one expert a rank */
    double sort = 4.0 * 134217728.0 /
                      (f.g.gpu.hbm_bytes_per_s * f.p.gen[GEN_AMPERE].hbm_eff) +
                  2 * f.p.gen[GEN_AMPERE].kernel_s;
    for (int i = 0; i < 4; i++) {
        if (i == 2) {
            f.m.moe.experts = 8;
            f.m.moe.top_k = 2;
        }
        s.flex_dispatcher = i % 2 == 1;
        cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &r[i]);
    }
    ck_assert_rel(r[0].compute_s - r[1].compute_s, 3.0 * sort, 1e-9);
    ck_assert_double_eq(r[2].compute_s, r[3].compute_s);
}
END_TEST

/* The eager passes around the routed experts (layer_cost.c
 * moe_eager_glu_bytes; Megatron-Core moe/experts.py TEGroupedMLP,
 * fusions/fused_bias_geglu.py weighted_bias_quick_geglu_impl): the same
 * layer (h 2048, 128 experts of ffn 768, top 8) at ep 8, 16 experts a
 * rank, 4096 x 8 = 32,768 routed copies.  By hand, at hbm_bytes_per_s x
 * hbm_eff:
 *   a clamped GLU (glu_limit 7, gpt-oss's swiglu_limit): 16 f = 12,288 B a
 *     copy forward (402,653,184 B, 3 kernels), 20 f = 15,360 B backward
 *     (503,316,480 B, 3 kernels); fc1's output kept for the clamps'
 *     backward, 4 x 32,768 x 768 = 100,663,296 B more activations;
 *   fc2's bias (MODEL_BIAS_MLP), added per local expert by _apply_bias:
 *     12 h = 24,576 B a copy forward (805,306,368 B, 1 + 2 x 16 kernels),
 *     16 h = 32,768 B backward (1,073,741,824 B, 1 + 4 x 16 kernels);
 *   moe_act recompute re-runs the clamp (402,653,184 B, 3 kernels) and
 *     drops the clamped copy with the activation output;
 *   Transformer Engine's fused grouped MLP (fused_grouped_mlp) runs none. */
START_TEST(moe_eager_glu_by_hand)
{
    fixture f;
    strategy s = moe_layer_case(&f, 8);
    const gen_constants *k = &f.p.gen[GEN_AMPERE];
    double rate = f.g.gpu.hbm_bytes_per_s * k->hbm_eff;
    range_cost plain, clamp, both, fused, rc_plain, rc_clamp;
    f.m.norm = NORM_RMSNORM;   /* no linear biases */
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &plain);
    f.m.glu_limit = 7.0;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &clamp);
    ck_assert_rel(clamp.fwd_s - plain.fwd_s, 402653184.0 / rate + 3 * k->kernel_s, 1e-9);
    ck_assert_rel(clamp.bwd_s - plain.bwd_s, 503316480.0 / rate + 3 * k->kernel_s, 1e-9);
    ck_assert_double_eq(clamp.act_bytes - plain.act_bytes, 100663296.0);
    f.m.bias = MODEL_BIAS_SET | MODEL_BIAS_MLP;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &both);
    ck_assert_rel(both.fwd_s - clamp.fwd_s, 805306368.0 / rate + 33 * k->kernel_s, 1e-9);
    ck_assert_rel(both.bwd_s - clamp.bwd_s, 1073741824.0 / rate + 65 * k->kernel_s, 1e-9);
    f.m.fused_grouped_mlp = true;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &fused);
    ck_assert_double_eq(fused.compute_s, plain.compute_s);
    ck_assert_double_eq(fused.act_bytes, plain.act_bytes);
    /* moe_act recompute */
    f.m.fused_grouped_mlp = false;
    f.m.bias = 0;
    s.recompute = RECOMPUTE_SELECTIVE;
    s.recompute_modules = RC_MOD_MOE_ACT;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &rc_clamp);
    f.m.glu_limit = 0;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &rc_plain);
    ck_assert_rel(rc_clamp.recompute_s - rc_plain.recompute_s, 402653184.0 / rate + 3 * k->kernel_s,
                  1e-9);
    ck_assert_double_eq(rc_clamp.act_bytes, rc_plain.act_bytes);
}
END_TEST

/* The softmax's exponentials (compute.c compute_attention_exp_factor):
 * 16-bit tensor FLOPs per clock and SM over MUFU.EX2 ops, Hopper 4,096 /
 * 16 = 256, Blackwell 8,192 / 16 = 512, Blackwell Ultra 8,192 / 32 = 256;
 * a score costs 2 (qk + v) forward FLOPs: 256 at head_dim 64, 512 at 128,
 * 640 for DeepSeek-V3's MLA (192 + 128; tf_attention_score_flops).  So
 * the forward waits 512 / 256 = 2x on B200 at head_dim 64, not on GB300 or
 * H100, nor at 128 or MLA; H100 at head_dim 32 (128 FLOPs) 2x; A100 not
 * modelled.  A GPT-3 layer recut into 192 heads of 64 on B200, against the
 * same layer on a B200 labelled Hopper (Blackwell's constants): the
 * forward grows by the causal half of the attention FLOPs once more,
 * F / 2 / (2.25 PFLOP/s x attn_eff); the backward is unchanged.  Not so for
 * unfused attention (the stack's own softmax kernel), nor for SDPA's
 * FlashAttention-2 (pytorch-fsdp2, compiled blocks), whose sm80 mma.sync
 * runs far below the SFUs' bound: its B200 layer at head_dim 64 costs what
 * the same layer at 96 heads of 128 does (the same FLOPs and bytes; until
 * 2026-11 its forward took the 2x). */
START_TEST(attention_exp_bound_by_hand)
{
    fixture f;
    range_cost b, h;
    strategy s = make(1, 1, 8, 1, 1, 64, false, RECOMPUTE_NONE, 1);
    double fl;
    model mla;
    setup(&f);
    memset(&mla, 0, sizeof mla);
    mla.mla = (model_mla){1536, 512, 128, 64, 128};
    ck_assert_double_eq(tf_attention_score_flops(&mla, &(layer_spec){7168, 128, 128, 192, 0,
                                                                     true, 0, 0}), 640.0);
    ck_assert_double_eq(tf_attention_score_flops(NULL, &(layer_spec){2880, 64, 8, 64, 0, true,
                                                                     0, 0}), 256.0);
    ck_assert_double_eq(compute_attention_exp_factor(catalog_find("B200"), 256.0), 2.0);
    ck_assert_double_eq(compute_attention_exp_factor(catalog_find("GB200"), 512.0), 1.0);
    ck_assert_double_eq(compute_attention_exp_factor(catalog_find("B200"), 640.0), 1.0);
    ck_assert_double_eq(compute_attention_exp_factor(catalog_find("GB300"), 256.0), 1.0);
    ck_assert_double_eq(compute_attention_exp_factor(catalog_find("H100-SXM"), 256.0), 1.0);
    ck_assert_double_eq(compute_attention_exp_factor(catalog_find("H100-SXM"), 128.0), 2.0);
    ck_assert_double_eq(compute_attention_exp_factor(&f.g.gpu, 256.0), 1.0);
    for (int i = 0; i < 96; i++)
        f.layers[i] = (layer_spec){12288, 192, 192, 64, 49152, false, 0, 0};
    f.g.gpu = *catalog_find("B200");
    f.p.gen[GEN_HOPPER] = f.p.gen[GEN_BLACKWELL];
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &b);
    f.g.gpu.gen = GEN_HOPPER;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &h);
    fl = tf_attention_flops(&f.m, &f.layers[0], 1, 2048, 1, 1);
    ck_assert_rel(fl, 4.0 * 2048 * 2048 * 12288, 1e-12);
    ck_assert_rel(b.fwd_s - h.fwd_s, fl / 2 / (2250e12 * f.p.gen[GEN_BLACKWELL].attn_eff), 1e-9);
    ck_assert_double_eq(b.bwd_s, h.bwd_s);
    /* unfused attention (megatron-lm-2020: QK^T and PV batched GEMMs, the
     * softmax a kernel of its own) has no exponential in its matmul loop */
    f.c.stack = STACK_MEGATRON_LM_2020;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &h);
    f.g.gpu.gen = GEN_BLACKWELL;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &b);
    ck_assert_double_eq(b.fwd_s, h.fwd_s);
    f.c.stack = STACK_PYTORCH_FSDP2;
    f.m.torch_compile = true;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &b);
    for (int i = 0; i < 96; i++)
        f.layers[i] = (layer_spec){12288, 96, 96, 128, 49152, false, 0, 0};
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &h);
    ck_assert_rel(b.fwd_s, h.fwd_s, 1e-12);
    ck_assert_rel(b.bwd_s, h.bwd_s, 1e-12);
    f.c.stack = STACK_MEGATRON_CORE;   /* cuDNN's: 2x at 64, not at 128 */
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &h);
    for (int i = 0; i < 96; i++)
        f.layers[i] = (layer_spec){12288, 192, 192, 64, 49152, false, 0, 0};
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &b);
    ck_assert_rel(b.fwd_s - h.fwd_s, fl / 2 / (2250e12 * f.p.gen[GEN_BLACKWELL].attn_eff), 1e-9);
}
END_TEST

/* Expert tensor parallelism (Megatron-Core core_v0.15.0 moe/token_dispatcher.py
 * MoEAlltoAllTokenDispatcher, moe/experts.py): Qwen3-30B-A3B's MoE layer
 * (h 2048, 128 experts of ffn 768, top 8, SwiGLU, no biases) at mbs 1, seq
 * 4096, tp 1, dp 8 on one DGX A100, ep 4, etp 1 vs 2.  By hand:
 *   expert weights 128 x 3 x 2048 x 768 = 603,979,776 parameters per layer;
 *     per GPU / (ep etp): 150,994,944 at etp 1, 75,497,472 at etp 2; the
 *     expert-data-parallel group 8 / (4 x 2) = 1 rank (2 at etp 1);
 *   the routed copies D = 4096 x 8 x 2048 x 2 = 134,217,728 B a rank
 *     dispatches; etp 2 all-gathers the pair's copies (a 2 D output) before
 *     the experts and reduce-scatters their partial sums (a 2 D input) after,
 *     in the forward and again in the backward: ep_comm_s grows by 2 x
 *     (AG(2 D) + RS(2 D) + 2 kernels) over 2 consecutive ranks, and the
 *     all-to-all runs over ep 4 ranks 2 apart (one node: NVLink, 3/4 of D
 *     leaves the GPU);
 *   the gathered copies are the experts' fc1 input, kept for the weight
 *     gradient: + (etp - 1) D = 134,217,728 B of activations per layer; the
 *     transient working set adds the partial outputs, 2 D: 4 D in all. */
START_TEST(moe_etp_by_hand)
{
    fixture f;
    range_cost one, two;
    planner_error rule;
    strategy s = moe_layer_case(&f, 4);
    const gen_constants *k = &f.p.gen[GEN_AMPERE];
    double d = 4096.0 * 8 * 2048 * 2, a2a, pair;
    comm_link el;
    evaluation e1, e2;
    f.m.norm = NORM_RMSNORM;   /* no linear biases */
    ck_assert_msg(strategy_check(&f.m, &s, tu_err(&rule)) == PLANNER_OK, "%s", rule.msg);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &one);
    evaluate(&f.m, &f.c, &f.p, &s, &e1);
    s.etp = 2;
    ck_assert_msg(strategy_check(&f.m, &s, tu_err(&rule)) == PLANNER_OK, "%s", rule.msg);
    ck_assert_int_eq(strategy_expert_dp(&s, 1), 1);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &two);
    evaluate(&f.m, &f.c, &f.p, &s, &e2);
    ck_assert_double_eq(tf_layer_expert_params(&f.m, 0), 603979776.0);
    ck_assert_double_eq(one.expert_params, 150994944.0);
    ck_assert_double_eq(two.expert_params, 75497472.0);
    ck_assert_rel(one.params - two.params, 75497472.0, 1e-12);
    /* the collectives: the all-to-all 4 ranks 2 apart, the etp pair's gather
     * and reduce-scatter, forward and backward */
    el = comm_group_link(&f.g, k, 2, 1);
    a2a = d * 3.0 / 4.0 / (f.g.intra_bytes_per_s * k->intra_eff) + f.g.intra_latency_s;
    ck_assert_rel(comm_alltoall_s(&f.g, k, 4, 2, d), a2a, 1e-12);
    pair = comm_allgather_s(&el, 2, 2.0 * d) + comm_reducescatter_s(&el, 2, 2.0 * d) +
           2.0 * k->kernel_s;
    ck_assert_rel(two.ep_comm_s, 2.0 * (2.0 * (a2a + k->kernel_s) + pair), 1e-12);
    ck_assert_rel(one.ep_comm_s, 2.0 * 2.0 * (comm_alltoall_s(&f.g, k, 4, 1, d) + k->kernel_s),
                  1e-12);
    /* memory: the gathered copies kept, the partial outputs transient */
    ck_assert_rel(two.act_bytes - one.act_bytes, d, 1e-12);
    ck_assert_rel(cost_range_transient_bytes(&two) - cost_range_transient_bytes(&one), 2.0 * d,
                  1e-12);
    ck_assert_double_lt(e2.stage_memory[0].weights_bytes, e1.stage_memory[0].weights_bytes);
    ck_assert_rel(e1.stage_memory[0].weights_bytes - e2.stage_memory[0].weights_bytes,
                  2.0 * 75497472.0, 1e-9);   /* bf16 weights, replicated (ZeRO-1) */
    /* Megatron's rules */
    s.etp = 4;
    ck_assert_int_eq(strategy_check(&f.m, &s, tu_err(&rule)), PLANNER_E_INPUT);
    ck_assert_str_eq(rule.msg, "ep 4 x etp 4 must divide tp x cp x dp 8");
    s.ep = 1;
    s.etp = 5;
    ck_assert_int_eq(strategy_check(&f.m, &s, tu_err(&rule)), PLANNER_E_INPUT);
    ck_assert_str_eq(rule.msg, "ep 1 x etp 5 must divide tp x cp x dp 8");
    f.m.moe.expert_ffn = 770;
    s.etp = 4;
    ck_assert_int_eq(strategy_check(&f.m, &s, tu_err(&rule)), PLANNER_E_INPUT);
    ck_assert_str_eq(rule.msg, "etp 4 does not divide the expert ffn 770");
    f.m.moe.expert_ffn = 768;
    f.m.norm = NORM_LAYERNORM;   /* biases as LayerNorm models have them */
    ck_assert_int_eq(strategy_check(&f.m, &s, tu_err(&rule)), PLANNER_E_INPUT);
    ck_assert_ptr_nonnull(strstr(rule.msg, "without linear biases"));
    s.etp = 1;
    ck_assert_msg(strategy_check(&f.m, &s, tu_err(&rule)) == PLANNER_OK, "%s", rule.msg);
    f.m.moe.experts = 0;
    s.etp = 2;
    ck_assert_int_eq(strategy_check(&f.m, &s, tu_err(&rule)), PLANNER_E_INPUT);
    ck_assert_str_eq(rule.msg, "etp 2 needs MoE layers");
}
END_TEST

/* More expert tensor parallelism never increases the expert weights a GPU
 * holds (their states with them): etp 1, 2, 4, 8 at ep 1 and 2 on 8 ranks. */
START_TEST(moe_etp_weights_monotone)
{
    fixture f;
    strategy s = make(1, 1, 8, 1, 1, 32, false, RECOMPUTE_NONE, 1);
    setup(&f);
    moe_model(&f, 2);
    f.m.norm = NORM_RMSNORM;
    f.m.position = POS_ROPE;
    s.seq_len = 4096;
    s.stage[0] = (stage_spec){0, 0, 2, 1, 8};
    for (s.ep = 1; s.ep <= 2; s.ep++) {
        double prev_ex = HUGE_VAL, prev_w = HUGE_VAL;
        for (s.etp = 1; s.etp * s.ep <= 8; s.etp *= 2) {
            range_cost r;
            evaluation e;
            ck_assert_int_eq(strategy_check(&f.m, &s, NULL), PLANNER_OK);
            cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 2, false, false, &r);
            evaluate(&f.m, &f.c, &f.p, &s, &e);
            ck_assert_double_le(r.expert_params, prev_ex);
            ck_assert_double_le(e.stage_memory[0].weights_bytes + e.stage_memory[0].grads_bytes +
                                e.stage_memory[0].optimizer_bytes, prev_w);
            prev_ex = r.expert_params;
            prev_w = e.stage_memory[0].weights_bytes + e.stage_memory[0].grads_bytes +
                     e.stage_memory[0].optimizer_bytes;
        }
    }
}
END_TEST

/* The shared-expert overlap (--moe-shared-expert-overlap; Megatron-Core
 * moe/shared_experts.py, moe/token_dispatcher.py): the moe_layer_case layer
 * with one shared expert of ffn 1536 at ep 8.  Without it the all-to-alls
 * show in full (t forward, t backward); with it the shared expert's GEMMs
 * and activation, by hand S = fc1 (4096 x 3072 x 2048) + fc2 (4096 x 2048 x
 * 1536) + the SwiGLU pass over 4096 x 1536 (3 x 2 B x 4096 x 1536 read and
 * written), hide them at overlap_exposed: forward cost_overlapped(t, S),
 * backward cost_overlapped(t, 2 S).  The layer's compute and memory do not
 * change.  Its rules: shared experts, not with the all-to-all overlap. */
START_TEST(shared_expert_overlap_by_hand)
{
    fixture f;
    range_cost off, on;
    planner_error rule;
    strategy s = moe_layer_case(&f, 8);
    const gen_constants *k = &f.p.gen[GEN_AMPERE];
    tf_gemm sg[2] = {{4096, 3072, 2048, 1}, {4096, 2048, 1536, 1}};
    double t, sh;
    f.m.moe.shared_experts = 1;
    f.m.moe.shared_expert_ffn = 1536;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &off);
    t = 2.0 * (comm_alltoall_s(&f.g, k, 8, 1, 4096.0 * 8 * 2048 * 2) + k->kernel_s);
    ck_assert_rel(off.ep_comm_s, 2.0 * t, 1e-12);
    s.shared_expert_overlap = true;
    ck_assert_msg(strategy_check(&f.m, &s, tu_err(&rule)) == PLANNER_OK, "%s", rule.msg);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &on);
    sh = compute_gemms_s(&f.g.gpu, k, PREC_BF16, 2, sg, 2) +
         compute_memory_s(&f.g.gpu, k, 3.0 * 2.0 * 4096 * 1536, 1);
    ck_assert_rel(on.ep_comm_s, cost_overlapped(t, sh, k) + cost_overlapped(t, 2.0 * sh, k),
                  1e-12);
    ck_assert_double_lt(on.ep_comm_s, off.ep_comm_s);
    ck_assert_rel(off.fwd_s + off.bwd_s - on.fwd_s - on.bwd_s, off.ep_comm_s - on.ep_comm_s,
                  1e-9);
    ck_assert_double_eq(on.compute_s, off.compute_s);
    ck_assert_double_eq(on.act_bytes, off.act_bytes);
    ck_assert_double_eq(on.act_peak_extra_bytes, off.act_peak_extra_bytes);
    /* the rules */
    s.ep_comm_overlap = true;
    ck_assert_int_eq(strategy_check(&f.m, &s, tu_err(&rule)), PLANNER_E_INPUT);
    ck_assert_str_eq(rule.msg, "--moe-shared-expert-overlap cannot run with "
                               "--overlap-moe-expert-parallel-comm");
    s.ep_comm_overlap = false;
    f.m.moe.shared_experts = 0;
    ck_assert_int_eq(strategy_check(&f.m, &s, tu_err(&rule)), PLANNER_E_INPUT);
    ck_assert_str_eq(rule.msg, "--moe-shared-expert-overlap needs shared experts");
}
END_TEST

/* The CP K/V exchange types (layer_cost.c cost_cp_exchange; Transformer
 * Engine context_parallel.py): GPT-3 175B's layer (96 heads, no GQA, head
 * dim 128) at mbs 1, seq 32768, tp 1, cp 16 over 2 DGX A100 nodes: 2,048
 * tokens per rank, K and V 2,048 x 2 x 12,288 x 2 B = 100,663,296 B.
 *   p2p: the ring's forward keeps the 16 K/V blocks and 16 partial outputs
 *     (Q = O = 2,048 x 12,288 x 2 = 50,331,648 B): 16 x 150,994,944 =
 *     2,415,919,104 B of transient memory (the backward's 2 Q + 5 KV is
 *     less), nothing more kept.
 *   all_gather: the backward holds the gathered K, V and their gradients,
 *     2 x 16 x 100,663,296 = 3,221,225,472 B (3 GiB) of transient memory,
 *     805,306,368 B more than p2p, nothing more kept; its backward gathers
 *     again and reduce-scatters.
 *   a2a+p2p transient: the ring over 2 groups with the caller's Q K V held,
 *     150,994,944 + max(2 x 150,994,944, 2 Q + 5 KV = 603,979,776) =
 *     754,974,720 B (the all-to-all's, 2 x 150,994,944, is less).
 *   a2a+p2p, cp_a2a 8 (one node): per pass the Q, K, V all-to-all (2,048 x
 *     3 x 12,288 x 2 = 150,994,944 B) and the output's (50,331,648 B) over
 *     NVLink, 7/8 leaving the GPU; then a ring of cp / 8 = 2 groups, one
 *     step of 100,663,296 B over the rank's own NIC (stride 8: one rank a
 *     node), overlapped with attention like p2p's. */
START_TEST(cp_exchange_by_hand)
{
    fixture f;
    gen_constants kc;
    const gen_constants *k = &kc;
    strategy s = make(1, 1, 4, 1, 1, 64, false, RECOMPUTE_NONE, 1);
    range_cost p2p, ag;
    comm_link cpl, ring;
    double kv = 2048.0 * 2 * 12288 * 2, intra, a2a, t, attn, fwd, bwd;
    planner_error rule;
    setup(&f);
    cost_constants(&kc, &f.p, f.c.stack, GEN_AMPERE);
    f.m.position = POS_ROPE;
    s.cp = 16;
    s.seq_len = 32768;
    s.stage[0] = (stage_spec){0, 0, 96, 1, 4};
    ck_assert_msg(strategy_check(&f.m, &s, tu_err(&rule)) == PLANNER_OK, "%s", rule.msg);
    ck_assert_double_eq(cost_cp_transient_bytes(&f.layers[0], &s, 1, f.c.stack), 2415919104.0);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &p2p);
    s.cp_comm = CP_COMM_ALLGATHER;
    ck_assert_double_eq(cost_cp_transient_bytes(&f.layers[0], &s, 1, f.c.stack), 3221225472.0);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &ag);
    ck_assert_double_eq(cost_range_transient_bytes(&ag) - cost_range_transient_bytes(&p2p),
                        805306368.0);
    ck_assert_double_eq(ag.act_bytes, p2p.act_bytes);
    cpl = comm_group_link(&f.g, k, 16, 1);
    cost_cp_exchange(&f.m, &f.layers[0], &f.g, k, &cpl, &s, 1, f.c.stack, 1.0, &fwd, &bwd);
    ck_assert_rel(fwd, comm_allgather_s(&cpl, 16, 16 * kv) + k->kernel_s, 1e-12);
    ck_assert_rel(bwd, fwd + comm_reducescatter_s(&cpl, 16, 16 * kv) + k->kernel_s, 1e-12);

    s.cp_comm = CP_COMM_A2A_P2P;
    s.cp_a2a = 8;
    ck_assert_msg(strategy_check(&f.m, &s, tu_err(&rule)) == PLANNER_OK, "%s", rule.msg);
    ck_assert_double_eq(cost_cp_transient_bytes(&f.layers[0], &s, 1, f.c.stack), 754974720.0);
    intra = f.g.intra_bytes_per_s * k->intra_eff;
    a2a = 150994944.0 * 7 / 8 / intra + f.g.intra_latency_s + 50331648.0 * 7 / 8 / intra +
          f.g.intra_latency_s + 2 * k->kernel_s;
    ring = comm_group_link(&f.g, k, 2, 8);
    ck_assert(ring.inter_node);
    ck_assert_rel(ring.bytes_per_s, f.g.inter_bytes_per_s * k->inter_eff, 1e-12);
    t = kv / ring.bytes_per_s + f.g.inter_latency_s;
    attn = compute_attention_s(&f.g.gpu, k, PEAK_BF16,
                               tf_attention_flops(&f.m, &f.layers[0], 1, 32768, 16, 1));
    cost_cp_exchange(&f.m, &f.layers[0], &f.g, k, &cpl, &s, 1, f.c.stack, attn, &fwd, &bwd);
    ck_assert_rel(fwd, a2a + cost_overlapped(t, attn, k), 1e-12);
    ck_assert_rel(bwd, a2a + cost_overlapped(2 * t, 2.5 * attn, k), 1e-12);  /* ATTN_BWD_RATIO */
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &ag);
    ck_assert_rel(ag.cp_comm_s, fwd + bwd, 1e-12);
    ck_assert_rel(ag.fwd_s + ag.bwd_s - ag.cp_comm_s, p2p.fwd_s + p2p.bwd_s - p2p.cp_comm_s,
                  1e-12);
    ck_assert_double_eq(ag.tp_comm_s, 0);
    /* the rules: cp_a2a divides cp, below it; only with a2a+p2p */
    s.cp_a2a = 16;
    ck_assert_int_eq(strategy_check(&f.m, &s, tu_err(&rule)), PLANNER_E_INPUT);
    ck_assert_msg(strstr(rule.msg, "cp_a2a in 2..cp/2 dividing cp 16, got 16") != NULL, "%s",
                  rule.msg);
    s.cp_a2a = 3;
    ck_assert_int_eq(strategy_check(&f.m, &s, tu_err(&rule)), PLANNER_E_INPUT);
    s.cp_a2a = 8;
    s.cp_comm = CP_COMM_P2P;
    ck_assert_int_eq(strategy_check(&f.m, &s, tu_err(&rule)), PLANNER_E_INPUT);
    ck_assert_msg(strstr(rule.msg, "cp_a2a 8 needs --cp-comm-type a2a+p2p") != NULL, "%s",
                  rule.msg);
}
END_TEST

/* MXFP8's second gather of the row-parallel output gradients (Transformer
 * Engine linear.py backward under the userbuffers overlap: the row-scaled
 * copy gathered for dgrad cannot serve the column-scaled wgrad), one
 * GPT-3 175B layer at tp 8 with SP on a DGX A100, by hand: two all-gathers
 * of 2,048 x 12,288 = 25,165,824 1-byte values over 8 ranks on NVLink (300
 * GB/s x intra_eff 0.78), 7/8 x 25,165,824 / 234e9 = 94.103 us + 7 x 3.4 us
 * of ring latency + 6.3 us of launch, 124.203 us each: 248.406 us, hidden
 * behind the backward GEMMs but for overlap_exposed 0.408: 101.350 us more
 * than the same layer in per-tensor FP8 (on Ampere both casts write 4 B per
 * element and both GEMMs run at the FP8 column: nothing else differs).
 * None without SP or without the overlap. */
START_TEST(mxfp8_wgrad_regather_by_hand)
{
    fixture f;
    strategy s = make(8, 1, 8, 1, 1, 64, true, RECOMPUTE_NONE, 1);
    range_cost fp8, mx;
    setup(&f);
    s.tp_comm_overlap = true;
    f.m.prec = PREC_FP8;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 0, 1, false, false, &fp8);
    f.m.prec = PREC_MXFP8;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 0, 1, false, false, &mx);
    ck_assert_rel(mx.tp_comm_s - fp8.tp_comm_s, 101.350e-6, 1e-4);
    ck_assert_rel(mx.bwd_s - fp8.bwd_s, 101.350e-6, 1e-4);
    ck_assert_double_eq(mx.fwd_s, fp8.fwd_s);
    s.tp_comm_overlap = false;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 0, 1, false, false, &mx);
    f.m.prec = PREC_FP8;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 0, 1, false, false, &fp8);
    ck_assert_double_eq(mx.bwd_s, fp8.bwd_s);
}
END_TEST

/* mx_wgrad_regather_s on a MoE layer: the routed experts' TEGroupedLinear
 * runs without TP collectives (explicit_expert_comm), so only attention's
 * projection re-gathers, and a shared expert's fc2 unless the shared-expert
 * overlap takes it off TE's userbuffers.  The Qwen3-30B-A3B-like pair of
 * moe_model (h 2048) on B200, tp 4 SP with the TP overlap, 2,048 tokens:
 * one re-gather R = all-gather of 2,048 x 2,048 1-byte values over 4 NVLink
 * ranks + a kernel launch; with overlap_exposed 1 MXFP8 less FP8 is R on
 * the MoE layer (2R with a shared expert outside the overlap), 2R on the
 * dense one. */
START_TEST(mxfp8_wgrad_regather_moe_layer)
{
    fixture f;
    strategy s = make(4, 1, 2, 1, 1, 64, true, RECOMPUTE_NONE, 1);
    gen_constants kc;
    comm_link tpl;
    range_cost fp8[2], mx[2];
    double r;
    int i;
    setup(&f);
    moe_model(&f, 2);
    f.g.gpu = *catalog_find("B200");
    f.g.intra_bytes_per_s = f.g.gpu.intra_node_bytes_per_s;
    f.g.inter_bytes_per_s = f.g.gpu.inter_node_bytes_per_s;
    s.tp_comm_overlap = true;
    s.stage[0] = (stage_spec){0, 0, 2, 4, 2};
    f.p.gen[GEN_BLACKWELL].overlap_exposed = 1.0;   /* hidden or not, R shows whole */
    cost_constants(&kc, &f.p, f.c.stack, GEN_BLACKWELL);
    tpl = comm_group_link(&f.g, &kc, 4, 1);
    r = comm_allgather_s(&tpl, 4, 2048.0 * 2048) + kc.kernel_s;
    ck_assert_rel(r, 3 / 4.0 * 2048.0 * 2048 / tpl.bytes_per_s + 3 * tpl.latency_s +
                         kc.kernel_s, 1e-12);
    for (int shared = 0; shared < 3; shared++) {
        f.m.moe.shared_experts = shared > 0;
        s.shared_expert_overlap = shared == 2;
        for (i = 0; i < 2; i++) {
            f.m.prec = PREC_FP8;
            cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 4, i, 1, false, false, &fp8[i]);
            f.m.prec = PREC_MXFP8;
            cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 4, i, 1, false, false, &mx[i]);
        }
        ck_assert_rel(mx[0].tp_comm_s - fp8[0].tp_comm_s, 2.0 * r, 1e-9);
        ck_assert_rel(mx[1].tp_comm_s - fp8[1].tp_comm_s, (shared == 1 ? 2.0 : 1.0) * r, 1e-9);
    }
}
END_TEST

/* The CP variants' memory by hand (Transformer Engine context_parallel.py;
 * PyTorch _attention.py), the layer of cp_exchange_by_hand: 2,048 tokens a
 * rank, Q = O = 50,331,648 B, K + V = 100,663,296 B, tp 1, cp 16.
 *   a2a (Ulysses, 96 heads / 16): the caller's Q K V and their send copies
 *     (or the caller's Q K V, the output's send copy and receive buffer,
 *     150,994,944 + 2 x 50,331,648 = 251,658,240, less): 301,989,888 B of
 *     transient memory; and the attention's head-scattered output saved
 *     beside the projection's input, 50,331,648 B more kept -- without
 *     recompute, or with selective recompute of the MLP only; not when
 *     core attention is recomputed (selective's default) or the layer is.
 *   PyTorch's ring (torchtitan's stack), K/V already at the query heads
 *     (no GQA): 3 Q + (9 + 1) KV = 1,157,627,904 B with the all-to-all
 *     rotater (p2p), 3 Q + (9 + 16) KV = 2,667,577,344 B all-gathered. */
START_TEST(cp_memory_by_hand)
{
    fixture f;
    strategy s = make(1, 1, 4, 1, 1, 64, false, RECOMPUTE_NONE, 1);
    range_cost p2p, a2a;
    planner_error rule;
    setup(&f);
    f.m.position = POS_ROPE;
    s.cp = 16;
    s.seq_len = 32768;
    s.stage[0] = (stage_spec){0, 0, 96, 1, 4};
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &p2p);
    s.cp_comm = CP_COMM_A2A;
    ck_assert_msg(strategy_check(&f.m, &s, tu_err(&rule)) == PLANNER_OK, "%s", rule.msg);
    ck_assert_double_eq(cost_cp_transient_bytes(&f.layers[0], &s, 1, f.c.stack), 301989888.0);
    ck_assert_double_eq(cost_cp_saved_bytes(&f.layers[0], &s, 1), 50331648.0);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &a2a);
    ck_assert_double_eq(a2a.act_bytes - p2p.act_bytes, 50331648.0);
    ck_assert_double_eq(a2a.layer_buf_bytes, 301989888.0);
    ck_assert_double_eq(cost_range_transient_bytes(&a2a), 301989888.0);
    s.recompute = RECOMPUTE_SELECTIVE;   /* core_attn: the saved tensors dropped */
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &a2a);
    s.cp_comm = CP_COMM_P2P;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &p2p);
    ck_assert_double_eq(a2a.act_bytes, p2p.act_bytes);
    s.recompute_modules = RC_MOD_MLP;   /* core attention's tensors kept */
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &p2p);
    s.cp_comm = CP_COMM_A2A;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &a2a);
    ck_assert_double_eq(a2a.act_bytes - p2p.act_bytes, 50331648.0);
    s.recompute = RECOMPUTE_FULL;
    s.recompute_modules = 0;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &a2a);
    s.cp_comm = CP_COMM_P2P;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &p2p);
    ck_assert_double_eq(a2a.act_bytes, p2p.act_bytes);
    ck_assert_double_eq(cost_cp_saved_bytes(&f.layers[0], &s, 1), 0);
    ck_assert_double_eq(cost_cp_transient_bytes(&f.layers[0], &s, 1, STACK_PYTORCH_FSDP2),
                        1157627904.0);
    s.cp_comm = CP_COMM_ALLGATHER;
    ck_assert_double_eq(cost_cp_transient_bytes(&f.layers[0], &s, 1, STACK_PYTORCH_FSDP2),
                        2667577344.0);
    s.cp = 1;
    s.cp_comm = CP_COMM_P2P;
    ck_assert_double_eq(cost_cp_transient_bytes(&f.layers[0], &s, 1, f.c.stack), 0);
    ck_assert_double_eq(cost_cp_transient_bytes(&f.layers[0], &s, 1, STACK_PYTORCH_FSDP2), 0);
}
END_TEST

/* PyTorch SDPA's FlashAttention-2 (the pytorch-fsdp2 stack, STACK_ATTN_SDPA_FA2;
 * layer_cost.c sdpa_fa2_factor): on Hopper the generation's attn_eff (Transformer
 * Engine's cuDNN attention) x 0.62, FlashAttention-3's Figs. 5-6 FA2 / cuDNN at
 * head dim 128 (370 / 595 forward, 322 / 516 backward): 0.445 x 0.62 = 0.2759;
 * Ampere keeps FlashAttention-2's own 0.55; megatron-core keeps 0.445.  On
 * Blackwell the sm80 kernels run at cudnn-frontend's measured FA2 / cuDNN, B200
 * 27.062 / 91.021 ms -> 0.30, GB300 22.512 / 83.085 -> 0.27 (until 2026-11 at
 * cuDNN's own rate: factor 1). */
START_TEST(sdpa_fa2_attention_on_hopper)
{
    cost_params p;
    gen_constants k;
    cost_params_default(&p);
    cost_constants(&k, &p, STACK_PYTORCH_FSDP2, GEN_HOPPER);
    ck_assert_double_eq_tol(k.attn_eff, 0.2759, 1e-12);
    ck_assert_double_eq(k.gemm_eff, p.gen[GEN_HOPPER].gemm_eff);
    cost_constants(&k, &p, STACK_PYTORCH_FSDP2, GEN_AMPERE);
    ck_assert_double_eq_tol(k.attn_eff, 0.55, 1e-12);
    cost_constants(&k, &p, STACK_MEGATRON_CORE, GEN_HOPPER);
    ck_assert_double_eq_tol(k.attn_eff, 0.445, 1e-12);
    cost_constants(&k, &p, STACK_PYTORCH_FSDP2, GEN_BLACKWELL);
    ck_assert_double_eq_tol(k.attn_eff, p.gen[GEN_BLACKWELL].attn_eff * 0.30, 1e-12);
    cost_constants(&k, &p, STACK_PYTORCH_FSDP2, GEN_BLACKWELL_ULTRA);
    ck_assert_double_eq_tol(k.attn_eff, p.gen[GEN_BLACKWELL_ULTRA].attn_eff * 0.27, 1e-12);
}
END_TEST

/* The fixture made Llama-style for the pytorch-fsdp2 tests: RMSNorm, RoPE,
 * SwiGLU, layer 0 with 8 K/V heads, s's one stage over all 96 layers. */
static void setup_llama_style(fixture *f, strategy *s)
{
    setup(f);
    f->m.norm = NORM_RMSNORM;
    f->m.position = POS_ROPE;
    f->m.act = ACT_SWIGLU;
    f->layers[0].kv_heads = 8;
    s->stage[0] = (stage_spec){0, 0, 96, 1, 4};
}

/* torchtitan's eager Llama block (layer_cost.c eager_extra_bytes): the
 * fixture's layer made Llama-style (RMSNorm, RoPE, SwiGLU at f 49,152, 8
 * K/V heads), tp 1, seq 2048, mbs 1, no recompute, on pytorch-fsdp2 without
 * torch.compile, moves per token 64 x 12,288 (the two eager RMSNorms) +
 * 16 x (12,288 + 1,024) (RoPE in fp32) + 2 x (2 x 1,024 + 2 x 12,288)
 * (repeat_kv) + 4 x 12,288 (the output's transpose copy) + 4 x 49,152
 * (silu and the product apart) = 1,298,432 B more than the fused kernels,
 * 2,659,188,736 B for 2,048 tokens, in 20 more kernels: the forward that
 * much slower at the HBM rate, the backward twice it; compiled, or on
 * megatron-core, nothing. */
START_TEST(eager_blocks_by_hand)
{
    fixture f;
    gen_constants k;
    strategy s = make(1, 1, 4, 1, 1, 64, false, RECOMPUTE_NONE, 1);
    range_cost eager, compiled, core;
    double x;
    setup_llama_style(&f, &s);
    cost_constants(&k, &f.p, STACK_PYTORCH_FSDP2, GEN_AMPERE);
    x = 2659188736.0 / (f.g.gpu.hbm_bytes_per_s * k.hbm_eff) + 20 * k.kernel_s;
    f.c.stack = STACK_PYTORCH_FSDP2;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &eager);
    f.m.torch_compile = true;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &compiled);
    ck_assert_rel(eager.fwd_s - compiled.fwd_s, x, 1e-9);
    ck_assert_rel(eager.bwd_s - compiled.bwd_s, 2 * x, 1e-9);
    f.m.torch_compile = false;
    f.c.stack = STACK_MEGATRON_CORE;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &core);
    ck_assert_rel(core.fwd_s - compiled.fwd_s, 0, 1e-12);
}
END_TEST

/* torchtitan's op-level selective checkpointing in time (layer_cost.c
 * op_sac_rerun_s): the Llama-style layer of eager_blocks_by_hand, compiled,
 * tp 1, 2,048 tokens, bf16.  The policy saves SDPA and the odd-numbered mm
 * (wq, wv, w1, w2), so the backward re-runs wk (2,048 x 1,024 x 12,288:
 * 1/14 of the fused QKV's 2,048 x 14,336 x 12,288), wo (2,048 x 12,288 x
 * 12,288), w3 (2,048 x 49,152 x 12,288: half the fused fc1's 98,304) and
 * the forward's element-wise kernels, not the attention; Megatron's
 * selective (core_attn) re-runs the attention alone. */
START_TEST(op_sac_rerun_by_hand)
{
    fixture f;
    gen_constants k;
    strategy s = make(1, 1, 4, 1, 1, 64, false, RECOMPUTE_SELECTIVE, 1);
    range_cost op, mc;
    tf_gemm qkv = {2048, 14336, 12288, 1}, wo = {2048, 12288, 12288, 1};
    tf_gemm fc1 = {2048, 98304, 12288, 1};
    double rerun, attn;
    setup_llama_style(&f, &s);
    f.m.torch_compile = true;
    cost_constants(&k, &f.p, STACK_PYTORCH_FSDP2, GEN_AMPERE);
    rerun = compute_gemms_s(&f.g.gpu, &k, PREC_BF16, 2, &qkv, 1) / 14.0 +
            compute_gemms_s(&f.g.gpu, &k, PREC_BF16, 2, &wo, 1) +
            0.5 * compute_gemms_s(&f.g.gpu, &k, PREC_BF16, 2, &fc1, 1) +
            compute_memory_s(&f.g.gpu, &k, tf_layer_elementwise_bytes(&f.m, &f.layers[0], 2048, 1,
                                                                      false), 6);
    f.c.stack = STACK_PYTORCH_FSDP2;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &op);
    ck_assert_rel(op.recompute_s, rerun, 1e-9);
    f.c.stack = STACK_MEGATRON_CORE;
    cost_constants(&k, &f.p, STACK_MEGATRON_CORE, GEN_AMPERE);
    attn = compute_attention_s(&f.g.gpu, &k, PEAK_BF16,
                               tf_attention_flops(&f.m, &f.layers[0], 1, 2048, 1, 1));
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, false, &mc);
    ck_assert_rel(mc.recompute_s, attn, 1e-9);
}
END_TEST

/* PyTorch's ring attention in time (layer_cost.c cp_torch_exchange; torch
 * 2.5-2.6 _attention.py as torchtitan runs it).  The fixture's layer with 8
 * K/V heads at seq 32768, tp 1, cp 4 on one DGX A100: 8,192 tokens a rank,
 * Q = 8,192 x 12,288 x 2 = 201,326,592 B; torchtitan repeats K and V to the
 * 96 query heads before SDPA, so the ring moves 2 Q = 402,653,184 B a rank
 * (12 x the GQA layer's 33,554,432, which Transformer Engine's all-gather
 * on megatron-core still moves).  The allgather rotater gathers 4 x that
 * once, behind the first of 4 steps (attn / 4; backward 2.5 attn / 4); the
 * fp32 dK dV (805,306,368 B) go round 4 times, 3 behind a backward step and
 * the last exposed; the alltoall rotater (p2p) sends one block a step, 3
 * steps.  HBM: forward 3 Q + 2 KV + 3 (19 Q + 2 KV) = 76 Q = 15,300,820,992
 * B in 21 kernels, backward 10 Q + 16 KV + 3 (5 Q + 12.5 KV) = 132 Q =
 * 26,575,110,144 B in 33. */
START_TEST(cp_torch_ring_by_hand)
{
    double kv = 402653184.0, attn = 0.1, hbm, ag, dkv, blk, fwd, bwd;
    layer_spec gqa;
    comm_link cpl;
    fixture f;
    gen_constants kc;
    const gen_constants *k = &kc;
    strategy s = make(1, 1, 4, 1, 1, 64, false, RECOMPUTE_NONE, 1);
    setup(&f);
    cost_constants(&kc, &f.p, STACK_PYTORCH_FSDP2, GEN_AMPERE);
    gqa = f.layers[0];
    gqa.kv_heads = 8;
    s.cp = 4;
    s.seq_len = 32768;
    s.cp_comm = CP_COMM_ALLGATHER;
    cpl = comm_group_link(&f.g, k, 4, 1);
    ck_assert(!cpl.inter_node);
    hbm = f.g.gpu.hbm_bytes_per_s * k->hbm_eff;
    ag = comm_allgather_s(&cpl, 4, 4 * kv) + k->kernel_s;
    dkv = comm_p2p_s(cpl.bytes_per_s, cpl.latency_s, 2 * kv) + k->kernel_s;
    cost_cp_exchange(&f.m, &gqa, &f.g, k, &cpl, &s, 1, STACK_PYTORCH_FSDP2, attn, &fwd, &bwd);
    ck_assert_rel(fwd, cost_overlapped(ag, attn / 4, k) + 15300820992.0 / hbm + 21 * k->kernel_s,
                  1e-12);
    ck_assert_rel(bwd, cost_overlapped(ag, 2.5 * attn / 4, k) +
                           3 * cost_overlapped(dkv, 2.5 * attn / 4, k) + dkv +
                           26575110144.0 / hbm + 33 * k->kernel_s, 1e-12);
    s.cp_comm = CP_COMM_P2P;
    blk = comm_p2p_s(cpl.bytes_per_s, cpl.latency_s, kv) + k->kernel_s;
    cost_cp_exchange(&f.m, &gqa, &f.g, k, &cpl, &s, 1, STACK_PYTORCH_FSDP2, attn, &fwd, &bwd);
    ck_assert_rel(fwd, 3 * cost_overlapped(blk, attn / 4, k) + 15300820992.0 / hbm +
                           21 * k->kernel_s, 1e-12);
    ck_assert_rel(bwd, 3 * cost_overlapped(blk, 2.5 * attn / 4, k) +
                           3 * cost_overlapped(dkv, 2.5 * attn / 4, k) + dkv +
                           26575110144.0 / hbm + 33 * k->kernel_s, 1e-12);
    s.cp_comm = CP_COMM_ALLGATHER;
    cost_constants(&kc, &f.p, f.c.stack, GEN_AMPERE);
    cost_cp_exchange(&f.m, &gqa, &f.g, k, &cpl, &s, 1, f.c.stack, attn, &fwd, &bwd);
    ck_assert_rel(fwd, comm_allgather_s(&cpl, 4, 4 * 33554432.0) + k->kernel_s, 1e-12);
}
END_TEST

/* The layer-time buffers never meet the loss's working set
 * (cost_range_transient_bytes: ws + max(buffers, loss)): the layer of
 * cp_exchange_by_hand as the last stage, tp 1, cp 16 all_gather (buffers
 * 3,221,225,472 B), fp32 logits of 2,048 tokens x the fixture's vocabulary
 * (4 B each), full recompute of the one layer (its working set ws).  The
 * loss is smaller than the gathered K/V: the range holds ws + the buffers;
 * with 64 x the tokens' logits (a vocabulary 64 x larger) ws + the loss. */
/* The first stage's embedding backward on the pytorch-fsdp2 stack at tp 8
 * (memory_fsdp2_embedding_bwd_bytes): the output's gradient gathered over
 * the whole sequence (2 B x 2,048 tokens x 12,288), the replicated V x h
 * weight gradient (2 B x 51,200 x 12,288) and ATen's fp32 per-index
 * partial sums (4 B x 2,048 x 12,288) = 1,409,286,144 B; it runs after the
 * layers' backwards: the range's transient is the larger of it and one
 * layer's recompute, not their sum; none on Megatron-Core's stack or at
 * tp 1 (a plain tensor's gradient is its own shard). */
START_TEST(embedding_backward_apart_from_layers)
{
    fixture f;
    strategy s = make(8, 1, 4, 1, 1, 64, true, RECOMPUTE_FULL, 1);
    range_cost r, none;
    const double e = 2.0 * 2048 * 12288 + 2.0 * 51200 * 12288 + 4.0 * 2048 * 12288;
    setup(&f);
    f.c.stack = STACK_PYTORCH_FSDP2;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 0, 1, true, false, &r);
    ck_assert_double_eq(r.embed_bwd_bytes, e);
    ck_assert_double_eq(e, 1409286144.0);
    ck_assert(r.act_peak_extra_bytes > 0);
    ck_assert_double_eq(cost_range_transient_bytes(&r),
                        r.act_peak_extra_bytes > e ? r.act_peak_extra_bytes : e);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 1, 1, false, false, &none);
    ck_assert_double_eq(none.embed_bwd_bytes, 0);   /* not the first stage */
    f.c.stack = STACK_MEGATRON_CORE;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 8, 0, 1, true, false, &none);
    ck_assert_double_eq(none.embed_bwd_bytes, 0);
    f.c.stack = STACK_PYTORCH_FSDP2;
    s = make(1, 1, 4, 1, 1, 64, false, RECOMPUTE_FULL, 1);
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, true, false, &none);
    ck_assert_double_eq(none.embed_bwd_bytes, 0);
    /* larger than the layer's working set: it alone */
    r.act_peak_extra_bytes = 0.5 * e;
    r.layer_buf_bytes = 0.25 * e;
    ck_assert_double_eq(cost_range_transient_bytes(&r), e);
    r.layer_buf_bytes = e;   /* 1.5 e at the layer's attention */
    ck_assert_double_eq(cost_range_transient_bytes(&r), 1.5 * e);
}
END_TEST

START_TEST(layer_buffers_apart_from_loss)
{
    fixture f;
    strategy s = make(1, 1, 4, 1, 1, 64, false, RECOMPUTE_FULL, 1);
    range_cost r;
    double loss, ws;
    setup(&f);
    f.m.position = POS_ROPE;
    s.cp = 16;
    s.seq_len = 32768;
    s.cp_comm = CP_COMM_ALLGATHER;
    s.stage[0] = (stage_spec){0, 0, 96, 1, 4};
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, true, &r);
    loss = 4.0 * 2048 * f.m.vocab;
    ck_assert_double_eq(r.loss_bytes, loss);
    ck_assert_double_eq(r.layer_buf_bytes, 3221225472.0);
    ws = r.act_peak_extra_bytes - loss;
    ck_assert(ws > 0 && loss < 3221225472.0);
    ck_assert_double_eq(cost_range_transient_bytes(&r), ws + 3221225472.0);
    f.m.vocab *= 64;
    cost_layer_range(&f.m, &f.c, &f.p, &s, 0, 1, 0, 1, false, true, &r);
    ck_assert(64.0 * loss > 3221225472.0);
    ck_assert_double_eq(cost_range_transient_bytes(&r), ws + 64.0 * loss);
}
END_TEST

/* Transformer Engine's quantization traffic per element (compute.c,
 * compute_fp8_cast_bytes): the 16-bit input read (2 B) and the copies
 * written.  Per-tensor FP8 writes a row-wise copy and, on Hopper, whose
 * FP8 GEMMs take the TN layout only, its transpose (2 + 1 + 1); Blackwell
 * reads the row-wise copy in any layout (2 + 1).  MXFP8 writes a row-wise
 * and a column-wise copy on any GPU (2 + 1 + 1; their 1-per-32 scales are
 * not counted).  One forward cast of a 4096 x 4096 input on B200 (8 TB/s
 * at hbm_eff 0.75, kernel 5 us): 16,777,216 x 3 B / 6e12 B/s + 5 us =
 * 13.389 us per-tensor, 16,777,216 x 4 / 6e12 + 5 us = 16.185 us MXFP8. */
START_TEST(fp8_cast_bytes_by_layout)
{
    const gpu_spec *h100 = catalog_find("H100-SXM"), *b200 = catalog_find("B200");
    const gpu_spec *gb300 = catalog_find("GB300");
    gen_constants k = {0};
    tf_gemm g = {4096, 1024, 4096, 1};
    ck_assert_ptr_nonnull(h100);
    ck_assert_ptr_nonnull(b200);
    ck_assert_ptr_nonnull(gb300);
    ck_assert_double_eq(compute_fp8_cast_bytes(h100, PREC_FP8), 4.0);
    ck_assert_double_eq(compute_fp8_cast_bytes(b200, PREC_FP8), 3.0);
    ck_assert_double_eq(compute_fp8_cast_bytes(gb300, PREC_FP8), 3.0);
    ck_assert_double_eq(compute_fp8_cast_bytes(h100, PREC_MXFP8), 4.0);
    ck_assert_double_eq(compute_fp8_cast_bytes(b200, PREC_MXFP8), 4.0);
    ck_assert_double_eq(compute_fp8_cast_bytes(b200, PREC_NVFP4), 4.0);
    k.hbm_eff = 0.75;
    k.kernel_s = 5e-6;
    ck_assert_rel(compute_fp8_cast_s(b200, &k, PREC_FP8, &g, 1, false), 13.389e-6, 1e-4);
    ck_assert_rel(compute_fp8_cast_s(b200, &k, PREC_MXFP8, &g, 1, false), 16.185e-6, 1e-4);
    /* the backward casts the output gradient, m x n */
    ck_assert_rel(compute_fp8_cast_s(b200, &k, PREC_FP8, &g, 1, true),
                  4096.0 * 1024 * 3 / 6e12 + 5e-6, 1e-12);
}
END_TEST

START_TEST(step_overhead_per_generation)
{
    fixture f;
    evaluation a, b;
    node_group groups[2];
    strategy s = make(8, 2, 4, 1, 1, 64, true, RECOMPUTE_SELECTIVE, 1);
    setup(&f);
    evaluate(&f.m, &f.c, &f.p, &s, &a);
    ck_assert_double_eq(a.time.overhead_s, f.p.gen[GEN_AMPERE].step_overhead_s);
    f.p.gen[GEN_AMPERE].step_overhead_s += 0.1;
    evaluate(&f.m, &f.c, &f.p, &s, &b);
    ck_assert_rel(b.step_time_s - a.step_time_s, 0.1, 1e-9);
    f.p.gen[GEN_HOPPER].step_overhead_s += 5.0;     /* no Hopper GPU in the plan */
    evaluate(&f.m, &f.c, &f.p, &s, &a);
    ck_assert_double_eq(a.step_time_s, b.step_time_s);

    /* stage 0 on A100s, stage 1 on H100s */
    groups[0] = f.g;
    groups[1] = f.g;
    ck_assert_ptr_nonnull(catalog_find("H100-SXM"));
    groups[1].gpu = *catalog_find("H100-SXM");
    f.c.group = groups;
    f.c.n_groups = 2;
    s.stage[1].group = 1;
    f.p.gen[GEN_AMPERE].step_overhead_s = 0.1;
    f.p.gen[GEN_HOPPER].step_overhead_s = 0.3;
    evaluate(&f.m, &f.c, &f.p, &s, &a);
    ck_assert_double_eq(a.time.overhead_s, 0.3);
    f.p.gen[GEN_HOPPER].step_overhead_s = 0.5;
    evaluate(&f.m, &f.c, &f.p, &s, &b);
    ck_assert_double_eq(b.time.overhead_s, 0.5);
    ck_assert_rel(b.step_time_s - a.step_time_s, 0.2, 1e-9);
    f.p.gen[GEN_AMPERE].step_overhead_s = 0.7;
    evaluate(&f.m, &f.c, &f.p, &s, &b);
    ck_assert_double_eq(b.time.overhead_s, 0.7);
    ck_assert_rel(b.step_time_s - a.step_time_s, 0.4, 1e-9);
}
END_TEST

START_TEST(megatron_rules)
{
    fixture f;
    planner_error rule;
    strategy s;
    setup(&f);
    s = make(8, 8, 1, 3, 1, 64, true, RECOMPUTE_SELECTIVE, 0);
    ck_assert_int_eq(strategy_check(&f.m, &s, tu_err(&rule)), 0);
    s = make(1, 8, 8, 1, 1, 64, true, RECOMPUTE_NONE, 0);       /* SP needs tp > 1 */
    ck_assert_int_eq(strategy_check(&f.m, &s, tu_err(&rule)), PLANNER_E_INPUT);
    ck_assert(strstr(rule.msg, "tp > 1") != NULL);
    s = make(8, 8, 1, 3, 1, 12, true, RECOMPUTE_NONE, 0);       /* 12 % 8 micro-batches */
    ck_assert_int_eq(strategy_check(&f.m, &s, tu_err(&rule)), PLANNER_E_INPUT);
    s = make(8, 8, 2, 1, 3, 64, true, RECOMPUTE_NONE, 0);       /* 64 % (3 x 2) */
    ck_assert_int_eq(strategy_check(&f.m, &s, tu_err(&rule)), PLANNER_E_INPUT);
    s = make(16, 8, 1, 1, 1, 64, true, RECOMPUTE_NONE, 0);      /* fine: 96 % 16 == 0 */
    ck_assert_int_eq(strategy_check(&f.m, &s, tu_err(&rule)), 0);
    s = make(64, 1, 1, 1, 1, 64, true, RECOMPUTE_NONE, 0);      /* 96 heads % 64 */
    ck_assert_int_eq(strategy_check(&f.m, &s, tu_err(&rule)), PLANNER_E_INPUT);
    s = make(8, 8, 1, 1, 1, 64, true, RECOMPUTE_NONE, 0);
    s.stage[7].n_layers = 11;                                    /* covers 95 layers */
    ck_assert_int_eq(strategy_check(&f.m, &s, tu_err(&rule)), PLANNER_E_INPUT);
    ck_assert_int_eq(strategy_microbatches(&s), 64);
    ck_assert_int_eq(strategy_gpus(&s), 64);
    ck_assert_str_eq(recompute_name(RECOMPUTE_SELECTIVE), "selective");
}
END_TEST

/* An overlapped collective of 1 s behind 0.6 s of compute: 0.4 s shows in
 * full and the hidden 0.6 s slows the compute by the link's share: NVLink's
 * overlap_exposed (0.408: 0.4 + 0.2448), the network's overlap_exposed_net
 * (0.1: 0.4 + 0.06); fully hidden (window 2 s) only the share shows.  The
 * defaults: the network share below NVLink's on every generation. */
START_TEST(overlap_share_by_link)
{
    cost_params p;
    gen_constants k;
    cost_params_default(&p);
    k = p.gen[GEN_HOPPER];
    k.overlap_exposed = 0.408;
    k.overlap_exposed_net = 0.1;
    ck_assert_rel(cost_overlapped_on(1.0, 0.6, &k, false), 0.6448, 1e-12);
    ck_assert_rel(cost_overlapped_on(1.0, 0.6, &k, true), 0.46, 1e-12);
    ck_assert_rel(cost_overlapped_on(1.0, 2.0, &k, true), 0.1, 1e-12);
    ck_assert_rel(cost_overlapped(1.0, 0.6, &k), cost_overlapped_on(1.0, 0.6, &k, false), 1e-15);
    for (int g = 0; g < GEN_COUNT; g++)
        ck_assert(p.gen[g].overlap_exposed_net < p.gen[g].overlap_exposed);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cost");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, korthikanti_175b_plan);
    tcase_add_test(tc, block_recompute_by_hand);
    tcase_add_test(tc, block_recompute_monotone_in_n);
    tcase_add_test(tc, selective_modules_by_hand);
    tcase_add_test(tc, selective_mla_up_proj_by_hand);
    tcase_add_test(tc, more_hardware_never_slower);
    tcase_add_test(tc, fp8_cast_bytes_by_layout);
    tcase_add_test(tc, step_overhead_per_generation);
    tcase_add_test(tc, stack_constants_move_the_prediction);
    tcase_add_test(tc, bf16_on_volta_runs_fp16_with_loss_scaling);
    tcase_add_test(tc, memory_grows_with_microbatch);
    tcase_add_test(tc, infeasible_reported);
    tcase_add_test(tc, embedding_and_logits_on_end_stages);
    tcase_add_test(tc, uneven_stages_honoured);
    tcase_add_test(tc, ranges_add_up);
    tcase_add_test(tc, evaluate_costs_unlike_stages_apart);
    tcase_add_test(tc, fp8_saved_activations);
    tcase_add_test(tc, fp8_moe_saved_activations);
    tcase_add_test(tc, moe_host_time);
    tcase_add_test(tc, moe_host_time_under_a2a_overlap);
    tcase_add_test(tc, moe_host_time_te_graphs);
    tcase_add_test(tc, mtp_on_last_stage);
    tcase_add_test(tc, moe_alltoall_volume_and_overlap);
    tcase_add_test(tc, moe_alltoall_overlap_share_by_link);
    tcase_add_test(tc, hybridep_overlap_sm_share);
    tcase_add_test(tc, moe_etp_by_hand);
    tcase_add_test(tc, moe_alltoall_sort_chunks_by_hand);
    tcase_add_test(tc, moe_eager_glu_by_hand);
    tcase_add_test(tc, attention_exp_bound_by_hand);
    tcase_add_test(tc, moe_etp_weights_monotone);
    tcase_add_test(tc, shared_expert_overlap_by_hand);
    tcase_add_test(tc, cp_exchange_by_hand);
    tcase_add_test(tc, cp_memory_by_hand);
    tcase_add_test(tc, cp_torch_ring_by_hand);
    tcase_add_test(tc, sdpa_fa2_attention_on_hopper);
    tcase_add_test(tc, eager_blocks_by_hand);
    tcase_add_test(tc, op_sac_rerun_by_hand);
    tcase_add_test(tc, layer_buffers_apart_from_loss);
    tcase_add_test(tc, embedding_backward_apart_from_layers);
    tcase_add_test(tc, overlap_share_by_link);
    tcase_add_test(tc, megatron_rules);
    tcase_add_test(tc, alike_ranges_cost_alike);
    tcase_add_test(tc, window_layers_costed_apart);
    tcase_add_test(tc, fp8_attention_window_backward_full);
    tcase_add_test(tc, fp8_attention_d64_backward);
    tcase_add_test(tc, fp8_attention_shape_ratio);
    tcase_add_test(tc, fp8_output_proj_mxfp8_head);
    tcase_add_test(tc, interleaved_chunk_p2p_by_hand);
    tcase_add_test(tc, mxfp8_wgrad_regather_by_hand);
    tcase_add_test(tc, mxfp8_wgrad_regather_moe_layer);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
