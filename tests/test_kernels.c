/* test_kernels.c: the cost model's hardware physics on Hopper against kernels
 * measured on one H200 SXM (tests/data/h200-kernels.json, written by
 * bench/gpu/measure.py and bench/gpu/curate.py; what was measured and how:
 * docs/cost-model.md, "Measured kernels (H200)").
 *
 * The generation's efficiencies are fitted on published training runs, so
 * they absorb software; what the model must get right from the hardware is
 * checked here: the large-GEMM and FP8 rates a 700 W board sustains, how a
 * GEMM's time depends on its shape (the roofline sum and the per-kernel
 * cost), how a grouped expert GEMM's rate falls with its tokens per expert,
 * how attention scales with sequence length and head dim, and where the HBM
 * efficiency sits between measured element-wise kernels.  Each check
 * compares the model's compute.c terms for the catalog's H200-SXM and the
 * default Hopper constants with the measured times; the tolerances are
 * stated where they are asserted.  Without the file every check says SKIP.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cost/compute.h"
#include "cost/layer_cost.h"
#include "inputs/catalog.h"
#include "testutil.h"

#define KERNELS_FILE "tests/data/h200-kernels.json"
#define MAX_RATIOS 1024

typedef struct kdata {
    json_t *root;
    const gpu_spec *gpu;
    gen_constants k;        /* the default constants of the GPU's generation */
} kdata;

typedef struct table {
    json_t *cols, *rows;
} table;

/* Measured / modelled ratios and their summary. */
typedef struct ratios {
    double v[MAX_RATIOS];
    int n;
    double median, min, max, mean_abs_log;
} ratios;

static bool kdata_open(kdata *d, const char *test)
{
    json_error_t e;
    cost_params p;
    FILE *f = fopen(KERNELS_FILE, "r");
    const char *gpu;
    memset(d, 0, sizeof *d);
    if (f == NULL) {
        tu_skip(test, KERNELS_FILE " absent");
        return false;
    }
    fclose(f);
    d->root = json_load_file(KERNELS_FILE, JSON_REJECT_DUPLICATES, &e);
    ck_assert_msg(d->root != NULL, "%s:%d: %s", KERNELS_FILE, e.line, e.text);
    gpu = json_string_value(json_object_get(json_object_get(d->root, "provenance"),
                                            "catalog_gpu"));
    ck_assert_ptr_nonnull(gpu);
    d->gpu = catalog_find(gpu);
    ck_assert_ptr_nonnull(d->gpu);
    ck_assert_int_eq(d->gpu->gen, GEN_HOPPER);
    cost_params_default(&p);
    d->k = p.gen[d->gpu->gen];
    return true;
}

static table tab(const kdata *d, const char *name)
{
    json_t *t = json_object_get(d->root, name);
    table r = {json_object_get(t, "columns"), json_object_get(t, "rows")};
    ck_assert_msg(json_is_array(r.cols) && json_is_array(r.rows), "table %s", name);
    ck_assert_int_gt(json_array_size(r.rows), 0);
    return r;
}

static int col(const table *t, const char *name)
{
    size_t i;
    for (i = 0; i < json_array_size(t->cols); i++)
        if (strcmp(json_string_value(json_array_get(t->cols, i)), name) == 0)
            return (int)i;
    ck_abort_msg("no column %s", name);
    return -1;
}

static json_t *cell(const table *t, size_t row, int c)
{
    return json_array_get(json_array_get(t->rows, row), (size_t)c);
}

/* A number cell, NAN where null (not measured). */
static double num(const table *t, size_t row, int c)
{
    json_t *v = cell(t, row, c);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *str(const table *t, size_t row, int c)
{
    const char *s = json_string_value(cell(t, row, c));
    return s ? s : "";
}

/* The row of table `name` whose column `key` is `value`. */
static size_t row_where(const table *t, const char *key, const char *value)
{
    int c = col(t, key);
    size_t i;
    for (i = 0; i < json_array_size(t->rows); i++)
        if (strcmp(str(t, i, c), value) == 0)
            return i;
    ck_abort_msg("no row with %s %s", key, value);
    return 0;
}

/* The model's time of `count` GEMMs m x n x k (compute_gemms_s). */
static double model_gemm_s(const kdata *d, precision prec, double m, double n, double k,
                           double count)
{
    tf_gemm g = {m, n, k, count};
    return compute_gemms_s(d->gpu, &d->k, prec, prec == PREC_FP8 ? 1 : 2, &g, 1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void ratios_add(ratios *r, double v)
{
    ck_assert_int_lt(r->n, MAX_RATIOS);
    ck_assert_msg(v > 0 && isfinite(v), "ratio %g", v);
    r->v[r->n++] = v;
}

static void ratios_sum(ratios *r, const char *what)
{
    double s = 0;
    int i;
    ck_assert_int_gt(r->n, 0);
    qsort(r->v, (size_t)r->n, sizeof r->v[0], cmp_double);
    for (i = 0; i < r->n; i++)
        s += fabs(log(r->v[i]));
    r->min = r->v[0];
    r->max = r->v[r->n - 1];
    r->median = r->n % 2 ? r->v[r->n / 2] : 0.5 * (r->v[r->n / 2 - 1] + r->v[r->n / 2]);
    r->mean_abs_log = s / r->n;
    printf("%s: %d, measured/model median %.3f, min %.3f, max %.3f, mean |log| %.3f\n", what,
           r->n, r->median, r->min, r->max, r->mean_abs_log);
}

/* The sustained rate of a back-to-back loop: flops / sustained_s. */
static double sustained_rate(const kdata *d, const char *name)
{
    table t = tab(d, "sustained");
    size_t i = row_where(&t, "case", name);
    return num(&t, i, col(&t, "flops")) / num(&t, i, col(&t, "sustained_s"));
}

/* Long tensor-core loops pull the 700 W board down to ~1.4 GHz of its
 * 1.98 GHz boost (nvidia-smi: SW power cap): the rate a training step
 * sustains is that one, and gemm_eff x peak should be it (within 8%),
 * not the burst rate of a single 1.4 ms GEMM (at least 10% faster). */
START_TEST(large_gemm_rate_is_the_power_limited_one)
{
    kdata d;
    table t;
    double pred, sus, burst, fp8;
    if (!kdata_open(&d, "test_kernels large_gemm_rate_is_the_power_limited_one"))
        return;
    t = tab(&d, "sustained");
    pred = compute_gemm_rate(d.gpu, &d.k, PREC_BF16);
    sus = 0.5 * (sustained_rate(&d, "gemm_bf16_8192") + sustained_rate(&d, "gemm_bf16_16384"));
    burst = num(&t, row_where(&t, "case", "gemm_bf16_8192"), col(&t, "flops")) /
            num(&t, row_where(&t, "case", "gemm_bf16_8192"), col(&t, "burst_s"));
    printf("bf16 GEMM: model %.0f, sustained %.0f, burst %.0f TFLOP/s\n", pred / 1e12,
           sus / 1e12, burst / 1e12);
    ck_assert_rel(pred, sus, 0.08);
    ck_assert_double_gt(burst, 1.10 * pred);
    fp8 = compute_gemm_rate(d.gpu, &d.k, PREC_FP8);
    printf("FP8 GEMM: model %.0f, sustained %.0f TFLOP/s\n", fp8 / 1e12,
           sustained_rate(&d, "gemm_fp8_8192") / 1e12);
    ck_assert_rel(fp8, sustained_rate(&d, "gemm_fp8_8192"), 0.10);
    json_decref(d.root);
}
END_TEST

/* A whole layer's twelve GEMMs (Llama 3 70B at tp 8, 8,192 tokens: QKV,
 * output projection, fc1, fc2, each forward, dgrad and wgrad) back to back
 * for 3 s: the model's sum within 10% of the sustained time. */
START_TEST(layer_gemms_sustained)
{
    kdata d;
    table t;
    double m = 8192, h = 8192, tp = 8, pred = 0, meas;
    double nk[4][2] = {{(64 + 16) * 128 / tp, h}, {h, 64 * 128 / tp},
                       {2 * 28672 / tp, h}, {h, 28672 / tp}};
    int i;
    if (!kdata_open(&d, "test_kernels layer_gemms_sustained"))
        return;
    t = tab(&d, "sustained");
    for (i = 0; i < 4; i++)
        pred += model_gemm_s(&d, PREC_BF16, m, nk[i][0], nk[i][1], 3);
    meas = num(&t, row_where(&t, "case", "llama3-70b_tp8_m8192_layer_gemms"),
               col(&t, "sustained_s"));
    printf("70B tp 8 layer GEMMs: model %.3f ms, sustained %.3f ms\n", pred * 1e3,
           meas * 1e3);
    ck_assert_rel(pred, meas, 0.10);
    json_decref(d.root);
}
END_TEST

/* Measured / modelled time of each GEMM of table `name` (rows of precision
 * `prec`; FP8 rows with fast accumulation only) that ran between lo_s and
 * hi_s, relative to the same ratio for the 8,192-cubed square GEMM: the
 * shape dependence, free of the absolute rate.  hi_s keeps to GEMMs short
 * enough to run at the reference's clock (single GEMMs longer than a few ms
 * reach the power limit, large_gemm_rate_is_the_power_limited_one). */
static void shape_ratios(const kdata *d, const char *name, precision prec, double lo_s,
                         double hi_s, ratios *r)
{
    table t = tab(d, name);
    int cs = col(&t, "set"), cm = col(&t, "m"), cn = col(&t, "n"), ck = col(&t, "k");
    int ct = col(&t, "s"), cf = prec == PREC_FP8 ? col(&t, "fast_accum") : -1;
    double ref = 0;
    size_t i;
    memset(r, 0, sizeof *r);
    for (i = 0; i < json_array_size(t.rows); i++)
        if (strcmp(str(&t, i, cs), "square") == 0 && num(&t, i, cm) == 8192 &&
            (cf < 0 || json_is_true(cell(&t, i, cf))))
            ref = num(&t, i, ct) / model_gemm_s(d, prec, 8192, 8192, 8192, 1);
    ck_assert_double_gt(ref, 0);
    for (i = 0; i < json_array_size(t.rows); i++) {
        double s = num(&t, i, ct);
        if (s < lo_s || s > hi_s || (cf >= 0 && !json_is_true(cell(&t, i, cf))))
            continue;
        ratios_add(r, s / model_gemm_s(d, prec, num(&t, i, cm), num(&t, i, cn),
                                       num(&t, i, ck), 1) / ref);
    }
}

/* The bf16 GEMMs of the corpus's layers (Llama 3 8B/70B/405B and GPT-3 175B
 * at tp 1-8, 1k-32k tokens, forward, dgrad, wgrad; Qwen3 and DeepSeek-V3
 * attention projections; squares) from 20 us to 3 ms: relative to the
 * large square, the median within 5%, every one within 30%, mean |log|
 * under 0.065.  The roofline taken as a max, or no operand-traffic term,
 * puts the compute-bound shapes 34% off; kernel_s 0 or 20 us, or half the
 * HBM efficiency, the small ones 32-40% (measured before landing). */
START_TEST(gemm_shape_dependence)
{
    kdata d;
    ratios r;
    if (!kdata_open(&d, "test_kernels gemm_shape_dependence"))
        return;
    shape_ratios(&d, "gemm", PREC_BF16, 20e-6, 3e-3, &r);
    ratios_sum(&r, "bf16 GEMM shapes 20 us - 3 ms");
    ck_assert_int_ge(r.n, 400);
    ck_assert_double_ge(r.median, 0.95);
    ck_assert_double_le(r.median, 1.05);
    ck_assert_double_ge(r.min, 0.70);
    ck_assert_double_le(r.max, 1.30);
    ck_assert_double_le(r.mean_abs_log, 0.065);
    json_decref(d.root);
}
END_TEST

/* FP8 (per-tensor e4m3, fast accumulation) at the same shapes: cuBLASLt's
 * heuristics pick a few slow kernels (the 2,048-cubed square runs 2.3x
 * slower with fast accumulation than without), so the bound is on the
 * median (within 7%) and on nine in ten (within 25%). */
START_TEST(fp8_gemm_shape_dependence)
{
    kdata d;
    ratios r;
    int inside = 0, i;
    if (!kdata_open(&d, "test_kernels fp8_gemm_shape_dependence"))
        return;
    shape_ratios(&d, "fp8_gemm", PREC_FP8, 20e-6, 3e-3, &r);
    ratios_sum(&r, "FP8 GEMM shapes 20 us - 3 ms");
    for (i = 0; i < r.n; i++)
        inside += r.v[i] >= 0.8 && r.v[i] <= 1.25;
    ck_assert_int_ge(r.n, 150);
    ck_assert_double_ge(r.median, 0.93);
    ck_assert_double_le(r.median, 1.07);
    ck_assert_int_ge(10 * inside, 9 * r.n);
    json_decref(d.root);
}
END_TEST

/* The launch floor: the smallest square GEMMs (512-1,024, 6-9 us) take
 * about kernel_s; the model's time within 0.9-1.4x of theirs. */
START_TEST(small_gemm_floor_is_kernel_s)
{
    kdata d;
    table t;
    int cs, cm, ct, n = 0;
    size_t i;
    if (!kdata_open(&d, "test_kernels small_gemm_floor_is_kernel_s"))
        return;
    t = tab(&d, "gemm");
    cs = col(&t, "set");
    cm = col(&t, "m");
    ct = col(&t, "s");
    for (i = 0; i < json_array_size(t.rows); i++) {
        double m = num(&t, i, cm), meas = num(&t, i, ct), pred;
        if (strcmp(str(&t, i, cs), "square") != 0 || m > 1024)
            continue;
        pred = model_gemm_s(&d, PREC_BF16, m, m, m, 1);
        printf("square %.0f: model %.1f us, measured %.1f us\n", m, pred * 1e6, meas * 1e6);
        ck_assert_double_ge(pred / meas, 0.9);
        ck_assert_double_le(pred / meas, 1.4);
        if (m == 512)
            ck_assert_rel(d.k.kernel_s, meas, 0.25);
        n++;
    }
    ck_assert_int_eq(n, 3);
    json_decref(d.root);
}
END_TEST

/* Grouped expert GEMMs (torch._grouped_mm, one CUTLASS kernel for all local
 * experts) of Qwen3-30B-A3B, Qwen3-235B, gpt-oss-120b and DeepSeek-V3,
 * fc1 and fc2, 2-32 local experts: the rate falls from ~700 TFLOP/s at
 * 8,192 tokens per expert to ~300 at 128 as the expert weights' traffic
 * takes over.  The model costs experts_local GEMMs of tokens-per-expert
 * rows (tf_layer_gemms_ep) and a kernel_s each, since Transformer Engine's
 * grouped GEMM on Hopper launches one cuBLAS GEMM per expert: the single
 * kernel here pays one, so the check takes the other experts_local - 1
 * off.  Relative to the large square, the median of each tokens-per-expert
 * value from 128 to 16,384 within 0.8-1.25.  (At 64 tokens per expert the
 * model is ~1.3x fast: a 128-row tile half empty, not modelled.) */
START_TEST(grouped_gemm_tokens_per_expert)
{
    static const double tpes[] = {128, 256, 512, 1024, 2048, 4096, 8192, 16384};
    kdata d;
    table t, g;
    double ref;
    size_t i, j;
    if (!kdata_open(&d, "test_kernels grouped_gemm_tokens_per_expert"))
        return;
    g = tab(&d, "gemm");
    i = row_where(&g, "set", "square");
    for (; num(&g, i, col(&g, "m")) != 8192; i++)
        ;
    ref = num(&g, i, col(&g, "s")) / model_gemm_s(&d, PREC_BF16, 8192, 8192, 8192, 1);
    t = tab(&d, "grouped");
    for (j = 0; j < sizeof tpes / sizeof tpes[0]; j++) {
        ratios r;
        char what[64];
        memset(&r, 0, sizeof r);
        for (i = 0; i < json_array_size(t.rows); i++) {
            double e = num(&t, i, col(&t, "experts_local"));
            double tpe = num(&t, i, col(&t, "tokens_per_expert")), pred;
            if (tpe != tpes[j])
                continue;
            pred = model_gemm_s(&d, PREC_BF16, tpe, num(&t, i, col(&t, "n")),
                                 num(&t, i, col(&t, "k")), e) - (e - 1) * d.k.kernel_s;
            ratios_add(&r, num(&t, i, col(&t, "fwd_s")) / pred / ref);
        }
        snprintf(what, sizeof what, "grouped, %.0f tokens per expert", tpes[j]);
        ratios_sum(&r, what);
        ck_assert_int_ge(r.n, 8);
        ck_assert_double_ge(r.median, 0.8);
        ck_assert_double_le(r.median, 1.25);
    }
    json_decref(d.root);
}
END_TEST

/* The model's causal attention forward + backward (compute_attention_s on
 * the full forward FLOPs, times 1 + cost_attention_bwd_ratio). */
static double model_attention_s(const kdata *d, const table *t, size_t i)
{
    double b = num(t, i, col(t, "batch")), h = num(t, i, col(t, "heads_q"));
    double s = num(t, i, col(t, "seq"));
    double flops = 2.0 * b * h * s * s *
                   (num(t, i, col(t, "head_dim_qk")) + num(t, i, col(t, "head_dim_v")));
    return compute_attention_s(d->gpu, &d->k, PEAK_BF16, flops) *
           (1.0 + cost_attention_bwd_ratio());
}

/* The fwd+bwd row of `cs` under `backend` at sequence `seq`. */
static size_t attention_row_of(const table *t, const char *cs, const char *backend, double seq)
{
    size_t i;
    for (i = 0; i < json_array_size(t->rows); i++)
        if (strcmp(str(t, i, col(t, "case")), cs) == 0 &&
            strcmp(str(t, i, col(t, "backend")), backend) == 0 &&
            strcmp(str(t, i, col(t, "pass")), "fwd_bwd") == 0 &&
            num(t, i, col(t, "seq")) == seq)
            return i;
    return (size_t)-1;
}

/* SDPA's FlashAttention-2 against cuDNN, fwd+bwd: the model's attn_eff
 * ratio of the two stacks against the measured time ratio. */
static void fa2_against_cudnn(const kdata *d, const table *t)
{
    static const char *cases[] = {"llama-d128", "gpt-oss-d64"};
    static const double seqs[] = {8192, 16384, 32768};
    cost_params p;
    gen_constants fa2;
    size_t i, j;
    cost_params_default(&p);
    cost_constants(&fa2, &p, STACK_PYTORCH_FSDP2, GEN_HOPPER);
    for (j = 0; j < 2; j++)
        for (i = 0; i < 3; i++) {
            size_t f = attention_row_of(t, cases[j], "flash", seqs[i]);
            size_t c = attention_row_of(t, cases[j], "cudnn", seqs[i]);
            double meas;
            ck_assert_uint_ne(f, (size_t)-1);
            ck_assert_uint_ne(c, (size_t)-1);
            meas = num(t, f, col(t, "s")) / num(t, c, col(t, "s"));
            printf("attention %s %.0f: flash / cuDNN measured %.3f, model %.3f\n", cases[j],
                   seqs[i], meas, d->k.attn_eff / fa2.attn_eff);
            ck_assert_rel(d->k.attn_eff / fa2.attn_eff, meas, 0.15);
        }
}

/* Causal attention, cuDNN's SDPA forward + backward, 16k tokens a call:
 * head_dim 128 (32 query / 8 K/V heads), 64 (gpt-oss, 64 / 8) and MLA
 * 192/128 (DeepSeek-V3, 128 heads).  The model's time
 *   - at head_dim 128, 8k: within 15% of the 3-s sustained time;
 *   - relative to 16k, from 4k to 32k: within 0.9-1.15 for each head dim
 *     (time grows as s at fixed tokens);
 *   - MLA per FLOP relative to head_dim 128: within 15% (the model: equal);
 *   - never more than 5% faster than measured at 4k and beyond (head_dim
 *     128 and MLA);
 *   - under the pytorch-fsdp2 stack (SDPA's FlashAttention-2, layer_cost.c
 *     sdpa_fa2_factor) relative to cuDNN at head_dim 128 and 64, 8k-32k:
 *     within 15% of the measured flash / cuDNN time ratio.
 * Not asserted, documented: 2k runs 1.2-1.26x the model's scaling, head_dim
 * 64 ~1.23x the per-FLOP time of 128, the backward ~3x the forward (the
 * model: 2.5x the FLOP ratio). */
START_TEST(attention_seq_and_head_dim)
{
    static const char *cases[] = {"llama-d128", "gpt-oss-d64", "deepseek-v3-mla"};
    static const double seqs[] = {4096, 8192, 16384, 32768};
    kdata d;
    table t, su;
    size_t i, j, r16;
    double pred, meas, d128;
    if (!kdata_open(&d, "test_kernels attention_seq_and_head_dim"))
        return;
    t = tab(&d, "attention");
    su = tab(&d, "sustained");
    i = attention_row_of(&t, "llama-d128", "cudnn", 8192);
    ck_assert_uint_ne(i, (size_t)-1);
    pred = model_attention_s(&d, &t, i);
    meas = num(&su, row_where(&su, "case", "cudnn_attn_d128_s8192_fwd_bwd"),
               col(&su, "sustained_s"));
    printf("attention d128 8k fwd+bwd: model %.3f ms, sustained %.3f ms\n", pred * 1e3,
           meas * 1e3);
    ck_assert_rel(pred, meas, 0.15);
    r16 = attention_row_of(&t, "llama-d128", "cudnn", 16384);
    d128 = num(&t, r16, col(&t, "s")) / model_attention_s(&d, &t, r16);
    for (j = 0; j < 3; j++) {
        double at16;
        r16 = attention_row_of(&t, cases[j], "cudnn", 16384);
        ck_assert_uint_ne(r16, (size_t)-1);
        at16 = num(&t, r16, col(&t, "s")) / model_attention_s(&d, &t, r16);
        for (i = 0; i < 4; i++) {
            size_t k = attention_row_of(&t, cases[j], "cudnn", seqs[i]);
            double r;
            ck_assert_uint_ne(k, (size_t)-1);
            r = num(&t, k, col(&t, "s")) / model_attention_s(&d, &t, k);
            printf("attention %s %.0f: measured/model %.3f, vs 16k %.3f\n", cases[j], seqs[i],
                   r, r / at16);
            ck_assert_double_ge(r / at16, 0.90);
            ck_assert_double_le(r / at16, 1.15);
            if (strcmp(cases[j], "gpt-oss-d64") != 0)
                ck_assert_double_le(r, 1.05);
        }
        if (strcmp(cases[j], "deepseek-v3-mla") == 0)
            ck_assert_rel(at16, d128, 0.15);
    }
    fa2_against_cudnn(&d, &t);
    json_decref(d.root);
}
END_TEST

/* hbm_eff x 4.8 TB/s lies between the slowest and the fastest element-wise
 * implementations measured, both on the bytes the model counts (one read
 * of the inputs, one write of the outputs): eager SwiGLU (silu, then the
 * product: two kernels, 2.5 TB/s) and the device copy (4.3 TB/s); every
 * single-pass kernel reaches 0.85-0.95 of the datasheet's bandwidth. */
START_TEST(hbm_rate_between_eager_and_fused)
{
    kdata d;
    table t;
    double pred, lo, hi;
    size_t i;
    if (!kdata_open(&d, "test_kernels hbm_rate_between_eager_and_fused"))
        return;
    t = tab(&d, "hbm");
    pred = d.gpu->hbm_bytes_per_s * d.k.hbm_eff;
    i = row_where(&t, "kernel", "swiglu_eager");
    lo = num(&t, i, col(&t, "bytes")) / num(&t, i, col(&t, "s"));
    i = row_where(&t, "kernel", "copy");
    hi = num(&t, i, col(&t, "bytes")) / num(&t, i, col(&t, "s"));
    printf("HBM: model %.0f GB/s, eager SwiGLU %.0f, copy %.0f\n", pred / 1e9, lo / 1e9,
           hi / 1e9);
    ck_assert_double_gt(pred, lo);
    ck_assert_double_lt(pred, hi);
    for (i = 0; i < json_array_size(t.rows); i++) {
        double f;
        if (num(&t, i, col(&t, "kernels")) != 1 || strstr(str(&t, i, col(&t, "kernel")), "eager"))
            continue;
        f = num(&t, i, col(&t, "bytes")) / num(&t, i, col(&t, "s")) / d.gpu->hbm_bytes_per_s;
        /* the model's pass is not faster than a measured single pass */
        ck_assert_double_lt(pred, f * d.gpu->hbm_bytes_per_s);
        ck_assert_double_ge(f, 0.85);
        ck_assert_double_le(f, 0.95);
    }
    json_decref(d.root);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kernels");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, large_gemm_rate_is_the_power_limited_one);
    tcase_add_test(tc, layer_gemms_sustained);
    tcase_add_test(tc, gemm_shape_dependence);
    tcase_add_test(tc, fp8_gemm_shape_dependence);
    tcase_add_test(tc, small_gemm_floor_is_kernel_s);
    tcase_add_test(tc, grouped_gemm_tokens_per_expert);
    tcase_add_test(tc, attention_seq_and_head_dim);
    tcase_add_test(tc, hbm_rate_between_eager_and_fused);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
