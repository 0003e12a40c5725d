/* compute.c: GEMM, flash-attention, memory-bound and optimizer kernels on one
 * GPU, from peak FLOP/s and HBM bandwidth (catalog) and the generation's
 * efficiencies (cost_params).
 *
 * GEMM: a roofline taken as a sum, not a max -- math at gemm_eff x peak plus
 * the unavoidable operand traffic (read A and B, write C once) at hbm_eff x
 * HBM bandwidth, plus a fixed launch/tail cost.  For a GEMM of m x n x k the
 * achieved fraction of peak is then about
 *     gemm_eff / (1 + (peak gemm_eff / (HBM hbm_eff)) (1/m + 1/n + 1/k) b/2)
 * so efficiency falls when any dimension nears the GPU's FLOP/byte ratio
 * (A100: 312 TFLOP/s / 2 TB/s = 156 FLOP/byte): h/t = 512 loses ~20%.
 * FP8/FP4 recipes run the linear layers' GEMMs at that format's peak x
 * fp8_gemm_eff with 1-byte operands, and pay Transformer Engine's
 * cast-transpose kernels (compute_fp8_cast_s); attention, norms, logits and
 * communication stay 16-bit.
 * Power-limited parts (T4: 70 W) cannot hold their boost clock through long
 * tensor-core GEMMs: math runs at the catalog's clock_fraction of the peak
 * (compute_sustained_flops); memory-bound kernels and MFU's peak do not.
 * Attention: FlashAttention-2 style kernels at attn_eff x peak; causal masks
 * skip half the work; the backward re-computes the scores and does five
 * matmuls to the forward's two (2.5x).  The forward waits on the softmax's
 * exponentials where a score carries fewer FLOPs than the tensor cores do
 * per exponential the SFUs take (compute_attention_exp_factor: Blackwell
 * below head_dim 128).  Element-wise kernels and the
 * optimizer are HBM-bound.
 * Invariant: every term grows with work and falls with peak or bandwidth.
 */
#include "cost/compute.h"

double compute_peak_flops(const gpu_spec *gpu, peak_format fmt)
{
    double p = gpu->peak_flops[fmt];
    if (p <= 0 && fmt == PEAK_BF16)     /* no BF16 path (V100, T4): FP16 */
        p = gpu->peak_flops[PEAK_FP16];
    if (p <= 0)
        p = gpu->peak_flops[PEAK_FP32];
    return p > 0 ? p : 1e12;
}

double compute_sustained_flops(const gpu_spec *gpu, peak_format fmt)
{
    double f = gpu->clock_fraction;
    return compute_peak_flops(gpu, fmt) * (f > 0 && f < 1 ? f : 1.0);
}

static int low_precision(peak_format fmt)
{
    return fmt == PEAK_FP8 || fmt == PEAK_FP4;
}

/* Block-scaled (MX) FP8 GEMMs against per-tensor-scaled ones on the same
 * tensor cores: Blackwell's tcgen05 MMA takes a UE8M0 scale per 32 values
 * of each operand along K (cuBLASLt CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0)
 * and the kernel stages those scales into tensor memory beside the tiles.
 * Measured: Transformer Engine's GEMM profiling guide (docs/examples/
 * gemm_profiling, benchmarks/gemm/benchmark_gemm.py --pre-quantize, B300,
 * the 12 GEMMs of a layer at h 4096, ffn 16384, 15,872 tokens): 7.161 ms
 * MXFP8 against 6.812 ms per-tensor (current-scaling) FP8, the same
 * pre-quantized operands through tex.generic_gemm -- 0.951 of the rate
 * (fprop 0.912, dgrad 0.972, wgrad 0.969).  That timing includes the two
 * scale-swizzle kernels TE launches per MXFP8 GEMM whose scales were not
 * written in cuBLAS's layout (about 1% there).  The one published
 * measurement is on Blackwell Ultra; Blackwell (B200, GB200) has the same
 * MMA and takes it too.  Other generations run no MX GEMM. */
#define MX_GEMM_RATE 0.951

double compute_gemm_rate(const gpu_spec *gpu, const gen_constants *k, precision prec)
{
    peak_format fmt = precision_peak(prec);
    double r = compute_sustained_flops(gpu, fmt) *
               (low_precision(fmt) ? k->fp8_gemm_eff : k->gemm_eff);
    if (prec == PREC_MXFP8 && (gpu->gen == GEN_BLACKWELL || gpu->gen == GEN_BLACKWELL_ULTRA))
        r *= MX_GEMM_RATE;
    return r;
}

double compute_gemms_s(const gpu_spec *gpu, const gen_constants *k, precision prec,
                       int elem_bytes, const tf_gemm *g, int n)
{
    double flop_rate = compute_gemm_rate(gpu, k, prec);
    double byte_rate = gpu->hbm_bytes_per_s * k->hbm_eff;
    double t = 0;
    int i;
    for (i = 0; i < n; i++) {
        double flops = 2.0 * g[i].m * g[i].n * g[i].k;
        double bytes = (g[i].m * g[i].k + g[i].k * g[i].n + g[i].m * g[i].n) * elem_bytes;
        t += g[i].count * (flops / flop_rate + bytes / byte_rate + k->kernel_s);
    }
    return t;
}

double compute_attention_s(const gpu_spec *gpu, const gen_constants *k, peak_format fmt,
                           double flops)
{
    /* FlashAttention runs its matmuls at 16-bit even in FP8 recipes */
    peak_format f = low_precision(fmt) ? PEAK_BF16 : fmt;
    return 0.5 * flops / (compute_sustained_flops(gpu, f) * k->attn_eff) + k->kernel_s;
}

/* Dense 16-bit tensor-core FLOPs per clock and SM over the special-function
 * units' exponentials (MUFU.EX2) per clock and SM.  Hopper: 4,096 / 16
 * (H100 SXM 989 TFLOP/s dense over 132 SMs at 1.83 GHz; 16 MUFU ops per
 * clock and SM); Blackwell: 8,192 / 16 -- B200's 16-bit tensor throughput
 * is 2.25x H100's while its SFUs are unchanged at 16 per clock and SM, so
 * its attention forward is bound by the exponential at head_dim 128 and
 * below (Zadouri, Hoehnerbach, Shah, Liu, Thakkar, Dao 2026,
 * "FlashAttention-4", arXiv 2603.05451); Blackwell Ultra doubles the SFUs'
 * MUFU.EX2 throughput (NVIDIA technical blog "Making Softmax More
 * Efficient with NVIDIA Blackwell Ultra", 2026): 8,192 / 32.  Other
 * generations: not known here (no bound). */
static double tensor_flops_per_exp(gpu_generation gen)
{
    switch (gen) {
    case GEN_HOPPER: return 256.0;
    case GEN_BLACKWELL: return 512.0;
    case GEN_BLACKWELL_ULTRA: return 256.0;
    case GEN_VOLTA: case GEN_TURING: case GEN_AMPERE: case GEN_ADA: case GEN_CDNA2:
    case GEN_CDNA3: case GEN_COUNT: break;
    }
    return 0;
}

/* SMs per GPU, the SXM parts of a generation: H100/H800/H200 SXM 132 (NVIDIA
 * H100 Tensor Core GPU Architecture whitepaper; 989 TFLOP/s = 132 x 4,096
 * FLOPs per clock x 1.83 GHz); B200 and GB200's GPUs 148 (2.25 PFLOP/s =
 * 148 x 8,192 x 1.86 GHz); B300 and GB300's 160 (NVIDIA technical blog
 * "Inside NVIDIA Blackwell Ultra: The Chip Powering the AI Factory Era",
 * 2025: 160 SMs).  The PCIe H100 (114) is not told apart. */
int compute_sm_count(const gpu_spec *gpu)
{
    switch (gpu->gen) {
    case GEN_HOPPER: return 132;
    case GEN_BLACKWELL: return 148;
    case GEN_BLACKWELL_ULTRA: return 160;
    case GEN_VOLTA: case GEN_TURING: case GEN_AMPERE: case GEN_ADA: case GEN_CDNA2:
    case GEN_CDNA3: case GEN_COUNT: break;
    }
    return 0;
}

double compute_attention_exp_factor(const gpu_spec *gpu, double score_flops)
{
    double r = tensor_flops_per_exp(gpu->gen);
    return score_flops > 0 && r > score_flops ? r / score_flops : 1.0;
}

/* Bytes moved per element quantized: the 16-bit input read (2) and the
 * copies written.  Per-tensor scaling (PREC_FP8: delayed or current; the
 * amax is reduced in the same pass, a current-scaling amax pass is not
 * counted) writes the row-wise FP8 copy and, for the backward's GEMMs, its
 * transpose -- only on a GPU whose cuBLASLt runs FP8 GEMMs in the TN layout
 * alone: Transformer Engine allocates the transpose only when
 * !nvte_is_non_tn_fp8_gemm_supported() (NVIDIA/TransformerEngine
 * transformer_engine/pytorch/csrc/quantizer.cpp, Float8Quantizer and
 * Float8CurrentScalingQuantizer create_tensor), true for compute capability
 * 10.x and >= 13.0 (common/transformer_engine.cpp): the Blackwell
 * datacenter parts read the row-wise copy in any layout.  So 2 + 1 + 1 on
 * Hopper and Ada, 2 + 1 on Blackwell.  MXFP8 (1 x 32 blocks, one E8M0 scale
 * each, along the reduction axis) needs a column-wise copy with its own
 * scales for the GEMMs that reduce along the other axis, on every GPU
 * (MXFP8Quantizer: row-wise and column-wise data and scale_inv): 2 + 1 + 1,
 * the scales' 2/32 B ignored as in the saved activations (layer_cost.c).
 * NVFP4: 2 + 1 + 1, as before (not refined). */
bool compute_fp8_any_layout(const gpu_spec *gpu)
{
    return gpu->gen == GEN_BLACKWELL || gpu->gen == GEN_BLACKWELL_ULTRA;
}

double compute_fp8_cast_bytes(const gpu_spec *gpu, precision prec)
{
    if (prec == PREC_MXFP8)
        return 4.0;
    if (prec == PREC_FP8 && compute_fp8_any_layout(gpu))
        return 3.0;
    return 4.0;
}

double compute_fp8_cast_s(const gpu_spec *gpu, const gen_constants *k, precision prec,
                          const tf_gemm *g, int n, bool backward)
{
    double elems = 0;
    int i;
    for (i = 0; i < n; i++)
        elems += g[i].count * (backward ? g[i].m * g[i].n : g[i].m * g[i].k);
    return compute_memory_s(gpu, k, compute_fp8_cast_bytes(gpu, prec) * elems, n);
}

double compute_memory_s(const gpu_spec *gpu, const gen_constants *k, double bytes,
                        int kernels)
{
    return bytes / (gpu->hbm_bytes_per_s * k->hbm_eff) + kernels * k->kernel_s;
}

double compute_optimizer_s(const gpu_spec *gpu, const gen_constants *k, double params)
{
    return params * OPTIMIZER_BYTES_PER_PARAM / (gpu->hbm_bytes_per_s * k->hbm_eff);
}
