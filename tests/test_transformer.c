/* test_transformer.c: per-layer FLOPs, GEMM shapes and activation bytes
 * against published formulas (Narayanan et al. SC21 eq. 3, Korthikanti et al.
 * 2022) and hand-derived values. */
#include <math.h>
#include <string.h>
#include "schedule/evaluate.h"
#include "testutil.h"
#include "model/transformer.h"

static layer_spec g_layers[128];

/* GPT-3 175B as in the Megatron papers: L 96, h 12288, a 96, f 4h, V 51200. */
static model gpt3(void)
{
    model m;
    int i;
    memset(&m, 0, sizeof m);
    strcpy(m.name, "gpt3-175b");
    m.layers = 96;
    m.hidden = 12288;
    m.heads = m.kv_heads = 96;
    m.head_dim = 128;
    m.ffn_hidden = 4 * 12288;
    m.vocab = 51200;
    m.max_position = 2048;
    m.act = ACT_GELU;
    m.norm = NORM_LAYERNORM;
    m.position = POS_LEARNED;
    m.tied_embeddings = true;
    m.prec = PREC_BF16;
    for (i = 0; i < m.layers; i++)
        g_layers[i] = (layer_spec){12288, 96, 96, 128, 4 * 12288, false, 0, 0};
    m.layer = g_layers;
    return m;
}

START_TEST(gpt3_model_flops_korthikanti)
{
    model m = gpt3();
    double B = 1536, s = 2048, L = 96, h = 12288, V = 51200;
    /* Korthikanti et al.: model FLOPs 72 B s L h^2 (1 + s/(6h) + V/(12 h L)) */
    double want = 72.0 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * h * L));
    ck_assert_rel(model_flops_per_step(&m, 1536, 2048), want, 1e-12);
}
END_TEST

START_TEST(gpt3_eq3_with_recompute)
{
    model m = gpt3();
    double B = 1536, s = 2048, L = 96, h = 12288, V = 51200;
    /* Narayanan eq. 3 counts the full-recompute re-forward of every layer:
     * 96 B s L h^2 (1 + s/(6h) + V/(16 L h)) */
    double eq3 = 96.0 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
    double refwd = L * tf_layer_flops_per_token(&m, &m.layer[0], 2048) * B * s;
    ck_assert_rel(model_flops_per_step(&m, 1536, 2048) + refwd, eq3, 1e-12);
    /* Megatron-LM README: 1024 A100 at 138 TFLOP/s per GPU -> about 32 s */
    ck_assert_rel(eq3 / (1024 * 138e12), 32.0, 0.02);
}
END_TEST

START_TEST(gemm_shapes_split_by_tp)
{
    model m = gpt3();
    tf_gemm g[TF_MAX_GEMMS];
    int n = tf_layer_gemms(&m, &m.layer[0], 2048, 8, g);
    double h = 12288;
    ck_assert_int_eq(n, 4);
    /* QKV column-parallel: 2048 x 3h/8 x h; proj row-parallel: k = h/8 */
    ck_assert_rel(g[0].n, 3 * h / 8, 1e-15);
    ck_assert_rel(g[0].k, h, 1e-15);
    ck_assert_rel(g[1].k, h / 8, 1e-15);
    ck_assert_rel(g[3].k, 4 * h / 8, 1e-15);
    /* 24 B s h^2 / t GEMM FLOPs per layer */
    ck_assert_rel(tf_gemm_flops(g, n), 24.0 * 2048 * h * h / 8, 1e-12);
}
END_TEST

START_TEST(swiglu_gqa_flops_are_twice_the_weights)
{
    /* Llama 3 8B layer: h 4096, 32 heads, 8 KV heads, f 14336: a GEMM does
     * 2 FLOPs per weight per token */
    model m;
    layer_spec l = {4096, 32, 8, 128, 14336, false, 0, 0};
    tf_gemm g[TF_MAX_GEMMS];
    double w = 4096.0 * (4096 + 2 * 1024) + 4096.0 * 4096 + 3.0 * 4096 * 14336;
    int n;
    memset(&m, 0, sizeof m);
    m.act = ACT_SWIGLU;
    m.norm = NORM_RMSNORM;
    n = tf_layer_gemms(&m, &l, 1.0, 1, g);
    ck_assert_rel(tf_gemm_flops(g, n), 2.0 * w, 1e-12);
}
END_TEST

/* Multi-latent attention (DeepSeek-V3's first, dense layer: h 7168, 128
 * heads, q_lora 1536, kv_lora 512, nope 128 + rope 64, v 128, f 18432;
 * Megatron-Core MLASelfAttention): q down 7168 x 1536, q up 1536 x 128 x
 * 192, kv down 7168 x (512 + 64), kv up 512 x 128 x (128 + 128), proj
 * 128 x 128 x 7168 = 187,105,280 weights, and the SwiGLU MLP 3 x 18432 x
 * 7168 = 396,361,728: 2 FLOPs per weight per token, 1,166,934,016.  At tp 8
 * the down-projections stay whole on every rank (duplicated): 2 x (11,010,048
 * + 4,128,768) + the rest / 8. */
START_TEST(mla_projections)
{
    model m;
    layer_spec l = {7168, 128, 128, 192, 18432, false, 0, 0};
    tf_gemm g[TF_MAX_GEMMS];
    double down = 7168.0 * 1536 + 7168.0 * 576, all = 187105280.0 + 396361728.0;
    int n;
    memset(&m, 0, sizeof m);
    m.act = ACT_SWIGLU;
    m.norm = NORM_RMSNORM;
    m.mla = (model_mla){1536, 512, 128, 64, 128};
    n = tf_layer_gemms(&m, &l, 1.0, 1, g);
    ck_assert_int_eq(n, 7);
    ck_assert_rel(tf_gemm_flops(g, n), 1166934016.0, 1e-12);
    n = tf_layer_gemms(&m, &l, 1.0, 8, g);
    ck_assert_rel(tf_gemm_flops(g, n), 2.0 * (down + (all - down) / 8), 1e-12);
}
END_TEST

/* Multi-latent attention's core attention (DeepSeek-V3: 128 heads, QK^T
 * over 128 + 64 = 192, PV over v_head_dim 128), 2 sequences of 4096: the
 * scores 2 B s^2 a 192 and the weighted sum 2 B s^2 a 128, counted in full,
 * 2 x 2 x 4096^2 x 128 x 320 = 2,748,779,069,440 (the equal-width count,
 * 4 B s^2 a 192, would be 1.2x that).  cuDNN's SDPA benchmark counts the
 * same (cudnn-frontend benchmark/sdpa_benchmark_training/results/dsv3/gb300,
 * cuDNN 9.26, bf16, causal, b 2, s 4096: 0.812 ms at 1,693 TFLOP/s, i.e.
 * half the full count for the causal mask). */
START_TEST(mla_attention_flops)
{
    model m;
    layer_spec l = {7168, 128, 128, 192, 18432, true, 0, 0};
    memset(&m, 0, sizeof m);
    m.mla = (model_mla){1536, 512, 128, 64, 128};
    ck_assert_rel(tf_attention_flops(&m, &l, 2, 4096, 1, 1), 2748779069440.0, 1e-12);
    ck_assert_rel(0.5 * tf_attention_flops(&m, &l, 2, 4096, 1, 1) / 0.812e-3, 1693e12, 1e-3);
    ck_assert_rel(tf_attention_flops(&m, &l, 2, 4096, 2, 4), 2748779069440.0 / 8, 1e-12);
    /* without MLA the equal-width count */
    ck_assert_rel(tf_attention_flops(NULL, &l, 2, 4096, 1, 1), 4.0 * 2 * 4096.0 * 4096 * 128 * 192,
                  1e-12);
}
END_TEST

START_TEST(korthikanti_activation_bytes)
{
    model m = gpt3();
    double s = 2048, b = 1, h = 12288, t = 8;
    const layer_spec *l = &m.layer[0];
    /* flash attention removes the 5 a s / h term; the rest is Korthikanti's:
     * TP + SP 34 s b h / t; TP only s b h (10 + 24/t); full recompute with SP
     * 2 s b h / t; no parallelism 34 s b h */
    ck_assert_rel(tf_layer_activation_bytes(&m, l, b, 2048, 1, 8, true, RECOMPUTE_NONE),
                  34 * s * b * h / t, 1e-12);
    ck_assert_rel(tf_layer_activation_bytes(&m, l, b, 2048, 1, 8, false, RECOMPUTE_NONE),
                  s * b * h * (10 + 24 / t), 1e-12);
    ck_assert_rel(tf_layer_activation_bytes(&m, l, b, 2048, 1, 8, true, RECOMPUTE_SELECTIVE),
                  34 * s * b * h / t, 1e-12);
    ck_assert_rel(tf_layer_activation_bytes(&m, l, b, 2048, 1, 8, true, RECOMPUTE_FULL),
                  2 * s * b * h / t, 1e-12);
    ck_assert_rel(tf_layer_activation_bytes(&m, l, 4, 2048, 1, 1, false, RECOMPUTE_NONE),
                  34 * s * 4 * h, 1e-12);
    /* 175B, s 2048, b 1, t 8, SP: 34 * 2048 * 12288 / 8 = 107 MB per layer */
    ck_assert_rel(tf_layer_activation_bytes(&m, l, 1, 2048, 1, 8, true, RECOMPUTE_NONE),
                  106954752.0, 1e-12);
}
END_TEST

/* Residual dropout 0 (Llama, every Megatron-Bridge provider): no masks, 2 of
 * the 10 s b h outside the TP region; 8 s b h with SP over t, plus the 24 s b
 * h / t inside: 32 s b h / t.  Any p > 0 keeps them (Megatron's default 0.1
 * when the model names none).  The element-wise traffic drops the two mask
 * writes: 2 s b h bytes (/ t with SP). */
START_TEST(dropout_masks_only_above_zero)
{
    model m = gpt3();
    double s = 2048, h = 12288, t = 8;
    const layer_spec *l = &m.layer[0];
    double with_masks = tf_layer_elementwise_bytes(&m, l, s, 8, true);
    ck_assert_rel(tf_dropout_mask_bytes(&m), 1.0, 0);
    m.hidden_dropout = 0.05;
    m.has_hidden_dropout = true;
    ck_assert_rel(tf_dropout_mask_bytes(&m), 1.0, 0);
    ck_assert_rel(tf_layer_activation_bytes(&m, l, 1, 2048, 1, 8, true, RECOMPUTE_NONE),
                  34 * s * h / t, 1e-12);
    m.hidden_dropout = 0;
    ck_assert_rel(tf_dropout_mask_bytes(&m), 0.0, 0);
    ck_assert_rel(tf_layer_activation_bytes(&m, l, 1, 2048, 1, 8, true, RECOMPUTE_NONE),
                  32 * s * h / t, 1e-12);
    ck_assert_rel(tf_layer_activation_bytes(&m, l, 1, 2048, 1, 8, false, RECOMPUTE_NONE),
                  s * h * (8 + 24 / t), 1e-12);
    ck_assert_rel(tf_layer_activation_bytes(&m, l, 1, 2048, 1, 8, true, RECOMPUTE_FULL),
                  2 * s * h / t, 1e-12);
    ck_assert_rel(with_masks - tf_layer_elementwise_bytes(&m, l, s, 8, true), 2 * s * h / t,
                  1e-9);
}
END_TEST

START_TEST(moe_layer_flops_topk_shared)
{
    /* h 1024, 8 heads of 128 (MHA), SwiGLU; 8 experts of ffn 512, top-2,
     * one shared expert of ffn 256.  Forward FLOPs per token, by hand:
     *   QKV + proj   2 (3 x 1024 + 1024) 1024        =  8,388,608
     *   router       2 x 1024 x 8                    =     16,384
     *   shared       6 x 1024 x 256 (SwiGLU)         =  1,572,864
     *   routed       2 experts x 6 x 1024 x 512      =  6,291,456
     *   total                                          16,269,312 */
    model m;
    layer_spec l = {1024, 8, 8, 128, 512, true, 0, 0};
    tf_gemm g[TF_MAX_GEMMS];
    int n;
    memset(&m, 0, sizeof m);
    m.hidden = 1024;
    m.act = ACT_SWIGLU;
    m.moe = (model_moe){8, 2, 512, 1, 256, 0, 1};
    n = tf_layer_gemms_ep(&m, &l, 4096, 1, 1, 1, g);
    ck_assert_int_eq(n, 7);
    ck_assert_rel(tf_gemm_flops(g, n), 16269312.0 * 4096, 1e-12);
    /* ep 4: 2 local experts, each over 4096 x 2 / 2 = 4096 routed tokens;
     * same FLOPs */
    n = tf_layer_gemms_ep(&m, &l, 4096, 1, 4, 1, g);
    ck_assert_rel(tf_gemm_flops(g, n), 16269312.0 * 4096, 1e-12);
    ck_assert_rel(g[n - 1].count, 2.0, 1e-12);
    ck_assert_rel(g[n - 1].m, 4096.0, 1e-12);
    ck_assert_rel(g[n - 1].k, 512.0, 1e-12);
    ck_assert_rel(g[n - 2].n, 1024.0, 1e-12);   /* fused gate + up */
    /* ep 8: one expert each, 8192 tokens */
    n = tf_layer_gemms_ep(&m, &l, 4096, 1, 8, 1, g);
    ck_assert_rel(g[n - 1].m, 8192.0, 1e-12);
    /* ep 4 x etp 2: the etp pair's copies gathered, 2 x 4096 = 8192 routed
     * tokens per local expert at half the ffn (fc1 n 2 x 512 / 2 = 512, fc2
     * k 256); the same FLOPs per GPU */
    n = tf_layer_gemms_ep(&m, &l, 4096, 1, 4, 2, g);
    ck_assert_rel(tf_gemm_flops(g, n), 16269312.0 * 4096, 1e-12);
    ck_assert_rel(g[n - 1].count, 2.0, 1e-12);
    ck_assert_rel(g[n - 1].m, 8192.0, 1e-12);
    ck_assert_rel(g[n - 1].k, 256.0, 1e-12);
    ck_assert_rel(g[n - 2].n, 512.0, 1e-12);
    /* a dense layer of the same model: no router, no experts */
    l.moe = false;
    n = tf_layer_gemms_ep(&m, &l, 4096, 1, 4, 1, g);
    ck_assert_int_eq(n, 4);
    ck_assert_rel(tf_gemm_flops(g, n), (8388608.0 + 6.0 * 1024 * 512) * 4096, 1e-12);
}
END_TEST

/* What a MoE layer keeps for its backward, per token (16-bit, no TP, no
 * recompute), gpt-oss-120b's shape (h 2880, 64 query heads and 8 KV heads
 * of 64, 128 experts of ffn 2880, top-4, SwiGLU, residual dropout 0), by
 * hand from Megatron-Core core_v0.15.0's saved tensors:
 *   outside the TP region, 8 h: the two norms' inputs and outputs  23,040
 *   attention 2 (2 qw + 2 kvw): Q, core attention's output, K, V   18,432
 *   routed experts 6 k f: fc1's output 4 k f (the GLU's saved input)
 *     and the activation output 2 k f (fc2's input)                69,120
 *   the dispatched copies 2 k h (fc1's input, moe/experts.py
 *     TEGroupedMLP: the permuted hidden states GroupedLinear saves)  23,040
 *   gpt-oss's clamp (glu_limit 7): fc1's output again, 4 k f
 *     (fused_bias_geglu.py weighted_bias_quick_geglu_impl: x.clamp
 *     saves the chunked halves, the cat'd copy is the fused op's)    46,080
 *   total                                                         179,712
 * Without the clamp (or under TE's fused grouped MLP) 133,632; full
 * recompute keeps the layer input, 2 h = 5,760. */
START_TEST(moe_layer_activation_bytes_by_hand)
{
    model m;
    layer_spec l = {2880, 64, 8, 64, 2880, true, 0, 0};
    double s = 4096;
    memset(&m, 0, sizeof m);
    m.hidden = 2880;
    m.act = ACT_SWIGLU;
    m.has_hidden_dropout = true;
    m.hidden_dropout = 0;
    m.glu_limit = 7.0;
    m.moe = (model_moe){128, 4, 2880, 0, 0, 0, 1};
    ck_assert_rel(tf_layer_activation_bytes(&m, &l, 1, 4096, 1, 1, false, RECOMPUTE_NONE),
                  179712.0 * s, 1e-12);
    /* two sequences, cp 2: the same tokens per rank */
    ck_assert_rel(tf_layer_activation_bytes(&m, &l, 2, 4096, 2, 1, false, RECOMPUTE_NONE),
                  179712.0 * s, 1e-12);
    m.fused_grouped_mlp = true;
    ck_assert_rel(tf_layer_activation_bytes(&m, &l, 1, 4096, 1, 1, false, RECOMPUTE_NONE),
                  133632.0 * s, 1e-12);
    m.fused_grouped_mlp = false;
    m.glu_limit = 0;
    ck_assert_rel(tf_layer_activation_bytes(&m, &l, 1, 4096, 1, 1, false, RECOMPUTE_NONE),
                  133632.0 * s, 1e-12);
    ck_assert_rel(tf_layer_activation_bytes(&m, &l, 1, 4096, 1, 1, false, RECOMPUTE_FULL),
                  5760.0 * s, 1e-12);
}
END_TEST

START_TEST(attention_flops)
{
    model m = gpt3();
    /* 4 B s^2 h, split by tp and cp */
    ck_assert_rel(tf_attention_flops(&m, &m.layer[0], 2, 2048, 1, 1),
                  4.0 * 2 * 2048.0 * 2048 * 12288, 1e-12);
    ck_assert_rel(tf_attention_flops(&m, &m.layer[0], 2, 2048, 2, 4),
                  4.0 * 2 * 2048.0 * 2048 * 12288 / 8, 1e-12);
}
END_TEST

START_TEST(windowed_attention_flops)
{
    /* Gemma 3 1B layer (4 heads x 256) at s = 4096.  A causal window of
     * w = 512 scores query i against min(i + 1, w) keys: w (w + 1) / 2 +
     * (s - w) w = 1,966,336 in all, of the full causal s (s + 1) / 2 =
     * 8,390,656; in the full count's units (s keys per query, halved by
     * the causal kernel) that is 2 w - w^2 / s = 960 keys per query (the
     * +1 terms dropped).  Chunks of c = 1024: c keys per query. */
    layer_spec l = {1152, 4, 1, 256, 6912, false, 512, 0};
    double full = 4.0 * 2 * 4096.0 * 4096 * 1024;
    ck_assert_rel(tf_attention_flops(NULL, &l, 2, 4096, 1, 1), full * 960.0 / 4096, 1e-12);
    ck_assert_rel(tf_attention_flops(NULL, &l, 2, 4096, 2, 4), full * 960.0 / 4096 / 8, 1e-12);
    ck_assert_rel(960.0 / 4096, 1966336.0 / 8390656.0, 2e-3);
    /* a window as long as the sequence is full attention, bit for bit */
    l.window = 4096;
    ck_assert(tf_attention_flops(NULL, &l, 2, 4096, 1, 1) == full);
    l.window = 0;
    l.chunk = 1024;
    ck_assert_rel(tf_attention_flops(NULL, &l, 2, 4096, 1, 1), full / 4, 1e-12);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("transformer");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, gpt3_model_flops_korthikanti);
    tcase_add_test(tc, windowed_attention_flops);
    tcase_add_test(tc, gpt3_eq3_with_recompute);
    tcase_add_test(tc, gemm_shapes_split_by_tp);
    tcase_add_test(tc, swiglu_gqa_flops_are_twice_the_weights);
    tcase_add_test(tc, korthikanti_activation_bytes);
    tcase_add_test(tc, dropout_masks_only_above_zero);
    tcase_add_test(tc, attention_flops);
    tcase_add_test(tc, moe_layer_flops_topk_shared);
    tcase_add_test(tc, moe_layer_activation_bytes_by_hand);
    tcase_add_test(tc, mla_projections);
    tcase_add_test(tc, mla_attention_flops);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
