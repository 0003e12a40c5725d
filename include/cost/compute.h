/* compute.h: seconds of the work transformer.c counts, on one GPU.
 *
 * Every time term is work / (peak x efficiency) -- linear in 1/efficiency, so
 * calibration can fit the per-generation efficiencies by least squares --
 * plus a fixed per-kernel cost.
 */
#ifndef PLANNER_COMPUTE_H
#define PLANNER_COMPUTE_H

#include "inputs/catalog.h"
#include "cost/params.h"
#include "model/transformer.h"

/* The dense peak the GEMMs run at for format `fmt` (FP16 where the GPU has
 * no BF16 path, FP32 where it has neither). */
double compute_peak_flops(const gpu_spec *gpu, peak_format fmt);

/* compute_peak_flops() at the clock a power-limited part sustains in long
 * GEMMs (gpu_spec.clock_fraction; 1 for the others): what kernels run at. */
double compute_sustained_flops(const gpu_spec *gpu, peak_format fmt);

/* The math rate of a GEMM whose operands are in precision `prec`, FLOP/s:
 * the sustained peak of its format x gemm_eff (fp8_gemm_eff for FP8/FP4),
 * x the block-scaled rate for MXFP8 on Blackwell (compute.c). */
double compute_gemm_rate(const gpu_spec *gpu, const gen_constants *k, precision prec);

/* One GEMM list on `gpu` with operands in precision `prec`, `elem_bytes`
 * per operand element:  2 m n k / compute_gemm_rate  +  (m k + k n + m n)
 * elem_bytes / (HBM x hbm_eff)  +  kernel_s, per GEMM.  The
 * operand-traffic term is what makes small and skinny GEMMs (large TP,
 * small micro-batch) run far below peak: their arithmetic intensity falls
 * towards the GPU's FLOP/byte ratio. */
double compute_gemms_s(const gpu_spec *gpu, const gen_constants *k, precision prec,
                       int elem_bytes, const tf_gemm *g, int n);

/* Flash attention, forward: `flops` counted in full (non-causal); a causal
 * kernel executes half of them.  flops / 2 / (peak x attn_eff) + kernel_s. */
double compute_attention_s(const gpu_spec *gpu, const gen_constants *k, peak_format fmt,
                           double flops);

/* Flash attention's forward runs one softmax exponential per score, on the
 * SM's special-function units, beside the tensor cores' 2 (qk + v) FLOPs
 * per score (score_flops: tf_attention_score_flops): where the tensor
 * cores do more FLOPs per clock than score_flops per exponential the
 * units can take, the forward waits on them.  The factor (>= 1) by which
 * the forward's time grows, at the kernel's same achieved fraction of
 * either pipe; 1 where the generation's ratio is not known here. */
double compute_attention_exp_factor(const gpu_spec *gpu, double score_flops);

/* Streaming multiprocessors of the generation's SXM part (Hopper 132,
 * Blackwell 148, Blackwell Ultra 160); 0 where not known here. */
int compute_sm_count(const gpu_spec *gpu);

/* FP8/FP4 recipes: Transformer Engine's quantization of each GEMM's
 * 16-bit input (forward: the activation A, m x k; backward: the output
 * gradient, m x n) into the low-precision copies its forward and backward
 * GEMMs read, with the amax reduction: compute_fp8_cast_bytes per element.
 * Weights are cast once per step (first micro-batch) and not counted. */
double compute_fp8_cast_bytes(const gpu_spec *gpu, precision prec);

/* Whether the GPU's per-tensor FP8 GEMMs read a row-wise FP8 tensor in any
 * layout, so that Transformer Engine keeps no FP8 transpose beside it
 * (!nvte_is_non_tn_fp8_gemm_supported() allocates one: compute capability
 * 10.x and >= 13.0 need none; compute_fp8_cast_bytes says where from). */
bool compute_fp8_any_layout(const gpu_spec *gpu);
double compute_fp8_cast_s(const gpu_spec *gpu, const gen_constants *k, precision prec,
                          const tf_gemm *g, int n, bool backward);

/* Memory-bound kernels: bytes / (HBM x hbm_eff) + kernels x kernel_s. */
double compute_memory_s(const gpu_spec *gpu, const gen_constants *k, double bytes,
                        int kernels);

/* Adam step over `params` local parameters (fp32 master, moments and grads
 * read, written back, 16-bit copy written, grads zeroed): 34 bytes/param. */
#define OPTIMIZER_BYTES_PER_PARAM 34.0
double compute_optimizer_s(const gpu_spec *gpu, const gen_constants *k, double params);

#endif
