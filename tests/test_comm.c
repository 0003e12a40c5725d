/* test_comm.c: hand-derived communication, FP8 GEMM, context-parallel and
 * memory-reserve figures, and their invariants.
 *
 * The fixture pins round constants (not the fitted defaults) so every value
 * below is checked against arithmetic written in the comments:
 *   NVLink 400 GB/s x intra_eff 0.75 = 300 GB/s bus, 3 us per NVLink step;
 *   NIC 50 GB/s x inter_eff 0.5 = 25 GB/s per GPU, 10 us per network step;
 *   H100 peaks (catalog): BF16 989.4 TFLOP/s, FP8 1978.9, HBM 3350 GB/s;
 *   gemm_eff 0.8, fp8_gemm_eff 0.6, hbm_eff 0.8, attn_eff 0.5,
 *   overlap_exposed 0.25, kernel_s 0.
 * Tolerances: 1e-9 relative where the formula is exact; the stated bound
 * where a comparison is an inequality. */
#include <math.h>
#include <string.h>
#include "cost/comm.h"
#include "cost/compute.h"
#include "schedule/evaluate.h"
#include "cost/memory.h"
#include "model/transformer.h"
#include "testutil.h"

static const gen_constants k_round = {0.8, 0.5, 0.8, 0.75, 0.5, 0.0, 0.6, 0.25, 0.0, 0.0, 0.25};

static node_group h100_group(int nodes)
{
    node_group g;
    const gpu_spec *gpu = catalog_find("H100-SXM");
    memset(&g, 0, sizeof g);
    ck_assert_ptr_nonnull(gpu);
    g.gpu = *gpu;
    strcpy(g.name, "h100");
    g.nodes = nodes;
    g.gpus_per_node = 8;
    g.intra_bytes_per_s = 400e9;
    g.intra_latency_s = 3e-6;
    g.inter_bytes_per_s = 50e9;
    g.inter_latency_s = 10e-6;
    return g;
}

static void round_params(cost_params *p)
{
    int g;
    cost_params_default(p);
    for (g = 0; g < GEN_COUNT; g++)
        p->gen[g] = k_round;
}

/* A Llama-style dense model: h 8192, 64 heads of 128, 8 KV heads, bf16. */
static void llama_model(model *m, layer_spec *layers, int n)
{
    int i;
    memset(m, 0, sizeof *m);
    strcpy(m->name, "llama-test");
    m->layers = n;
    m->hidden = 8192;
    m->heads = 64;
    m->kv_heads = 8;
    m->head_dim = 128;
    m->ffn_hidden = 28672;
    m->vocab = 128256;
    m->max_position = 4096;
    m->act = ACT_SWIGLU;
    m->norm = NORM_RMSNORM;
    m->position = POS_ROPE;
    m->prec = PREC_BF16;
    for (i = 0; i < n; i++)
        layers[i] = (layer_spec){8192, 64, 8, 128, 28672, false, 0, 0};
    m->layer = layers;
}

static strategy pipeline(int tp, int pp, int dp, int vpp, int n_layers)
{
    strategy s;
    int i;
    memset(&s, 0, sizeof s);
    s.tp = tp;
    s.pp = pp;
    s.dp = dp;
    s.cp = s.ep = s.etp = 1;
    s.vpp = vpp;
    s.mbs = 2;
    s.gbs = 2 * dp * pp * 4;
    s.seq_len = 4096;
    s.n_stages = pp;
    for (i = 0; i < pp; i++)
        s.stage[i] = (stage_spec){0, i * (n_layers / pp), n_layers / pp, tp, dp};
    return s;
}

/* PCIe-only nodes (gpu_spec.intra_link): a collective inside a node runs at
 * the PCIe rate x 0.75 with P2P and half that through host memory (NCCL's
 * SHM transport), not at the NVLink efficiency: 15.75 GB/s x 0.75 = 11.8125
 * GB/s, 5.90625 GB/s through the host; a 4-GPU all-reduce of 16 MB through
 * the host moves 2 x 3/4 x 16e6 B / 5.90625e9 B/s = 4.0635 ms + the tree's 2
 * x log2 4 steps of 3 us.  The T4 row assumes the host path (g4dn: no P2P). */
START_TEST(pcie_intra_node_links)
{
    node_group g = h100_group(1);
    comm_link l;
    double bytes = 16e6;
    g.intra_bytes_per_s = 15.75e9;
    g.gpus_per_node = 4;
    g.gpu.nvlink_domain = 4;
    ck_assert_double_eq(comm_intra_bytes_per_s(&g, &k_round), 15.75e9 * 0.75);   /* intra_eff */
    g.gpu.intra_link = INTRA_PCIE_P2P;
    ck_assert_rel(comm_intra_bytes_per_s(&g, &k_round), 11.8125e9, 1e-12);
    g.gpu.intra_link = INTRA_PCIE_HOST;
    ck_assert_rel(comm_intra_bytes_per_s(&g, &k_round), 5.90625e9, 1e-12);
    l = comm_group_link(&g, &k_round, 4, 1);
    ck_assert(!l.inter_node);
    ck_assert_rel(comm_allreduce_s(&l, 4, bytes), 2.0 * 0.75 * bytes / 5.90625e9 + 4 * 3e-6,
                  1e-9);
    ck_assert_int_eq(catalog_find("T4")->intra_link, INTRA_PCIE_HOST);
    ck_assert_int_eq(catalog_find("H100-PCIE")->intra_link, INTRA_PCIE_P2P);
    ck_assert_int_eq(catalog_find("H100-SXM")->intra_link, INTRA_FABRIC);
}
END_TEST

/* A power-limited part (T4 under 70 W) runs GEMM and attention math at its
 * sustained clock: with HBM out of the way and no launch cost, a GEMM takes
 * exactly 1/clock_fraction as long as at the boost clock; MFU's peak is the
 * datasheet's. */
START_TEST(power_limited_clock)
{
    gpu_spec t4 = *catalog_find("T4"), boost = t4;
    tf_gemm gm = {8192, 8192, 8192, 1};
    double a, b;
    ck_assert_double_eq(t4.clock_fraction, 0.43);
    boost.clock_fraction = 1.0;
    t4.hbm_bytes_per_s = boost.hbm_bytes_per_s = 1e18;
    a = compute_gemms_s(&boost, &k_round, PREC_FP16, 2, &gm, 1);
    b = compute_gemms_s(&t4, &k_round, PREC_FP16, 2, &gm, 1);
    ck_assert_rel(b / a, 1.0 / 0.43, 1e-6);     /* operand traffic at 1e18 B/s: ~1e-8 */
    ck_assert_rel(a, 2.0 * 8192.0 * 8192 * 8192 / (65e12 * 0.8), 1e-6);
    ck_assert_double_eq(compute_peak_flops(&t4, PEAK_FP16), 65e12);
    ck_assert_rel(compute_sustained_flops(&t4, PEAK_FP16), 0.43 * 65e12, 1e-12);
}
END_TEST

START_TEST(ring_latency_hierarchical)
{
    node_group g = h100_group(32);
    comm_link l;
    /* 32 ranks, stride 1: 4 nodes of 8.  Bus: min(300, 8 x 25 = 200) GB/s.
     * One ring phase: (4 - 1) network steps x 10 us + (32 - 4) NVLink steps
     * x 3 us = 30 + 84 = 114 us. */
    l = comm_group_link(&g, &k_round, 32, 1);
    ck_assert(l.inter_node);
    ck_assert_int_eq(l.ranks_per_node, 8);
    ck_assert_rel(l.bytes_per_s, 200e9, 1e-12);
    ck_assert_rel(comm_ring_latency_s(&l, 32), 114e-6, 1e-9);
    /* all-gather of 64 MB: 31/32 x 64e6 / 200e9 = 310 us, + 114 us */
    ck_assert_rel(comm_allgather_s(&l, 32, 64e6), 424e-6, 1e-9);
    ck_assert_rel(comm_reducescatter_s(&l, 32, 64e6), 424e-6, 1e-9);
    /* all-reduce: 620 us of bytes + min(ring 2 x 114, tree 2 ((32/4 - 1) 3 +
     * log2(4) 10) = 2 (21 + 20) = 82) us = 702 us */
    ck_assert_rel(comm_allreduce_s(&l, 32, 64e6), 702e-6, 1e-9);

    /* DP over tp 8: stride 8, one member per node on 32 nodes, one NIC:
     * 25 GB/s; ring phase 31 x 10 us = 310 us (no NVLink step) */
    l = comm_group_link(&g, &k_round, 32, 8);
    ck_assert_int_eq(l.ranks_per_node, 1);
    ck_assert_rel(l.bytes_per_s, 25e9, 1e-12);
    ck_assert_rel(comm_ring_latency_s(&l, 32), 310e-6, 1e-9);
    /* 1 MB all-reduce: 2 x 31/32 x 1e6 / 25e9 = 77.5 us + min(620, tree
     * 2 (0 + log2(32) x 10) = 100) us = 177.5 us */
    ck_assert_rel(comm_allreduce_s(&l, 32, 1e6), 177.5e-6, 1e-9);

    /* 8 ranks in one node: NVLink 300 GB/s, 7 x 3 us per phase; all-reduce
     * takes the tree, 2 x log2(8) x 3 = 18 us < 42 us */
    l = comm_group_link(&g, &k_round, 8, 1);
    ck_assert(!l.inter_node);
    ck_assert_rel(comm_ring_latency_s(&l, 8), 21e-6, 1e-9);
    ck_assert_rel(comm_allreduce_s(&l, 8, 3e6), 2.0 * 7 / 8 * 3e6 / 300e9 + 18e-6, 1e-9);
    /* one rank: nothing to do */
    ck_assert(comm_allreduce_s(&l, 1, 1e9) == 0);
    ck_assert(comm_allgather_s(&l, 1, 1e9) == 0);
}
END_TEST

START_TEST(collectives_monotone_in_bandwidth)
{
    node_group g = h100_group(64);
    int sizes[] = {2, 8, 16, 64, 512}, strides[] = {1, 8}, i, j;
    for (i = 0; i < 5; i++)
        for (j = 0; j < 2; j++) {
            comm_link slow = comm_group_link(&g, &k_round, sizes[i], strides[j]), fast;
            node_group f = g;
            double b;
            f.intra_bytes_per_s *= 2;
            f.inter_bytes_per_s *= 2;
            fast = comm_group_link(&f, &k_round, sizes[i], strides[j]);
            for (b = 1e3; b < 1e11; b *= 10) {
                ck_assert(comm_allreduce_s(&fast, sizes[i], b) <=
                          comm_allreduce_s(&slow, sizes[i], b));
                ck_assert(comm_allgather_s(&fast, sizes[i], b) <=
                          comm_allgather_s(&slow, sizes[i], b));
                /* more bytes never faster */
                ck_assert(comm_allreduce_s(&slow, sizes[i], 2 * b) >=
                          comm_allreduce_s(&slow, sizes[i], b));
            }
        }
}
END_TEST

/* boundary_p2p_intra_inter_wrap_hetero's stages on two node groups (c's
 * groups[0] and [1], h100_group(4) each), one micro-batch's activations
 * `bytes` per TP rank. */
static void boundary_p2p_hetero(const model *m, cluster *c, const cost_params *p,
                                node_group *groups, double bytes)
{
    group_link link = {0, 1, 12.5e9, 20e-6};
    strategy s;
    /* heterogeneous: stage 0 on group 0, stage 1 on group 1 joined by a
     * 12.5 GB/s, 20 us link; x inter_eff 0.5 = 6.25 GB/s: 5,388.7 us */
    c->n_groups = 2;
    c->n_links = 1;
    c->link = &link;
    s = pipeline(4, 2, 1, 1, 8);
    s.sp = true;
    s.stage[1].group = 1;
    ck_assert_rel(cost_boundary_p2p_s(m, c, p, &s, 0), bytes / 6.25e9 + 20e-6, 1e-9);
    /* no explicit link: the slower of the two groups' NICs, the larger
     * latency */
    c->n_links = 0;
    groups[1].inter_bytes_per_s = 20e9;
    groups[1].inter_latency_s = 15e-6;
    ck_assert_rel(cost_boundary_p2p_s(m, c, p, &s, 0), bytes / 10e9 + 15e-6, 1e-9);
    /* more bandwidth never slower */
    groups[1].inter_bytes_per_s = 40e9;
    ck_assert(cost_boundary_p2p_s(m, c, p, &s, 0) <= bytes / 10e9 + 15e-6);
}

START_TEST(boundary_p2p_intra_inter_wrap_hetero)
{
    node_group groups[2];
    cluster c;
    model m;
    layer_spec layers[8];
    cost_params p;
    strategy s;
    /* one micro-batch's activations: 2 x 4096 x 8192 x 2 B / tp 4 =
     * 33,554,432 B */
    const double bytes = 2.0 * 4096 * 8192 * 2 / 4;
    llama_model(&m, layers, 8);
    round_params(&p);
    groups[0] = h100_group(4);
    groups[1] = h100_group(4);
    memset(&c, 0, sizeof c);
    c.n_groups = 1;
    c.group = groups;

    /* tp 4 x pp 2 = 8 GPUs: one node, NVLink 300 GB/s + 3 us (megatron-core
     * with SP: (s / t, b, h) on each TP rank) */
    s = pipeline(4, 2, 1, 1, 8);
    s.sp = true;
    ck_assert_rel(cost_boundary_p2p_s(&m, &c, &p, &s, 0), bytes / 300e9 + 3e-6, 1e-9);
    /* the interleaved wrap-around (rank 1 -> rank 0) stays in the node */
    s = pipeline(4, 2, 1, 2, 8);
    s.sp = true;
    ck_assert_rel(cost_boundary_p2p_s(&m, &c, &p, &s, 1), bytes / 300e9 + 3e-6, 1e-9);
    /* tp 4 x pp 4 = 16 GPUs: the pipeline spans nodes, the NIC's 25 GB/s +
     * 10 us = 1,352.2 us (both the boundary and the wrap-around) */
    s = pipeline(4, 4, 1, 2, 8);
    s.sp = true;
    ck_assert_rel(cost_boundary_p2p_s(&m, &c, &p, &s, 1), bytes / 25e9 + 10e-6, 1e-9);
    ck_assert_rel(cost_boundary_p2p_s(&m, &c, &p, &s, 3), bytes / 25e9 + 10e-6, 1e-9);
    ck_assert_rel(cost_boundary_p2p_s(&m, &c, &p, &s, 3), 1352.17728e-6, 1e-8);
    /* ... but stages 0 and 1 (GPUs 0-3, 4-7) share node 0 and stages 2 and 3
     * node 1 (Megatron's tp-cp-ep-dp-pp order: stage i on GPUs 4i .. 4i+3):
     * those boundaries stay on NVLink (the NIC above: the boundary 1 -> 2 and
     * the wrap-around 3 -> 0) */
    ck_assert_rel(cost_boundary_p2p_s(&m, &c, &p, &s, 0), bytes / 300e9 + 3e-6, 1e-9);
    ck_assert_rel(cost_boundary_p2p_s(&m, &c, &p, &s, 2), bytes / 300e9 + 3e-6, 1e-9);
    /* tp 2 dp 3, a stage of 6 GPUs: stage 0 on GPUs 0-5, stage 1 on 6-11;
     * the first replicas' pairs (0, 6) and (1, 7) share node 0 but (2, 8)
     * .. (5, 11) cross to node 1, and the slowest pair paces the step:
     * 67,108,864 B over the NIC (was NVLink: only GPUs 0 and 6 were looked
     * at) */
    s = pipeline(2, 2, 3, 1, 8);
    s.sp = true;
    ck_assert_rel(cost_boundary_p2p_s(&m, &c, &p, &s, 0), 2 * bytes / 25e9 + 10e-6, 1e-9);
    /* tp 8: a stage fills its node, every boundary crosses */
    s = pipeline(8, 4, 1, 2, 8);
    s.sp = true;
    ck_assert_rel(cost_boundary_p2p_s(&m, &c, &p, &s, 0), 2.0 * 4096 * 8192 * 2 / 8 / 25e9 + 10e-6,
                  1e-9);
    s = pipeline(4, 4, 1, 2, 8);
    /* megatron-core without SP (core_v0.15.0 schedules.py get_tensor_shapes:
     * seq / tp only with sequence_parallel; no scatter/gather): each of the
     * 4 TP ranks sends the whole b s h activation, 4 x 33,554,432 B over
     * the NIC: 5,368.7 + 10 us */
    s.sp = false;
    ck_assert_rel(cost_boundary_bytes(&m, &s, 4, STACK_MEGATRON_CORE), 4 * bytes, 1e-15);
    ck_assert_rel(cost_boundary_p2p_s(&m, &c, &p, &s, 1), 5378.70912e-6, 1e-8);
    /* megatron-lm-2020 (Megatron-LM before the scatter/gather of Jan-Feb
     * 2021): the whole b s h activation as well */
    s = pipeline(4, 4, 1, 1, 8);
    c.stack = STACK_MEGATRON_LM_2020;
    ck_assert_rel(cost_boundary_p2p_s(&m, &c, &p, &s, 1), 4 * bytes / 25e9 + 10e-6, 1e-9);
    ck_assert_rel(cost_boundary_p2p_s(&m, &c, &p, &s, 1), 5378.70912e-6, 1e-8);
    /* SC21's scatter/gather (2021, 2022 without SP) and DeepSpeed's
     * partitioned pipe tensors: b s h / t whatever SP; 2022's SP: b s h / t */
    c.stack = STACK_MEGATRON_LM_2021;
    ck_assert_rel(cost_boundary_p2p_s(&m, &c, &p, &s, 1), bytes / 25e9 + 10e-6, 1e-9);
    ck_assert_rel(cost_boundary_bytes(&m, &s, 4, STACK_MEGATRON_LM_2022), bytes, 1e-15);
    ck_assert_rel(cost_boundary_bytes(&m, &s, 4, STACK_DEEPSPEED), bytes, 1e-15);
    s.sp = true;
    ck_assert_rel(cost_boundary_bytes(&m, &s, 4, STACK_MEGATRON_LM_2022), bytes, 1e-15);
    /* torch pipelining sends the stage output as torchtitan's TP leaves it:
     * Shard(1) with SP (b s h / t), whole without */
    ck_assert_rel(cost_boundary_bytes(&m, &s, 4, STACK_PYTORCH_FSDP2), bytes, 1e-15);
    s.sp = false;
    ck_assert_rel(cost_boundary_bytes(&m, &s, 4, STACK_PYTORCH_FSDP2), 4 * bytes, 1e-15);
    /* tp 1: the whole activation on every stack; cp 2 halves it */
    ck_assert_rel(cost_boundary_bytes(&m, &s, 1, STACK_DEEPSPEED), 4 * bytes, 1e-15);
    s.cp = 2;
    ck_assert_rel(cost_boundary_bytes(&m, &s, 1, STACK_MEGATRON_CORE), 2 * bytes, 1e-15);
    c.stack = STACK_MEGATRON_CORE;
    s = pipeline(4, 4, 1, 2, 8);
    /* out of range: nothing */
    ck_assert(cost_boundary_p2p_s(&m, &c, &p, &s, 4) == 0);
    ck_assert(cost_boundary_p2p_s(&m, &c, &p, &s, -1) == 0);

    boundary_p2p_hetero(&m, &c, &p, groups, bytes);
}
END_TEST

START_TEST(fp8_gemm_faster_not_twice)
{
    const gpu_spec *gpu = catalog_find("H100-SXM");
    tf_gemm g = {8192, 8192, 8192, 1};
    double t8, t16;
    ck_assert_ptr_nonnull(gpu);
    /* FP8: 2 x 8192^3 = 1.0995e12 FLOP / (1978.9e12 x 0.6) = 926.1 us, +
     * 3 x 8192^2 x 1 B / (3350e9 x 0.8) = 75.1 us -> 1,001.2 us */
    t8 = compute_gemms_s(gpu, &k_round, PREC_FP8, 1, &g, 1);
    ck_assert_rel(t8, 2.0 * 8192.0 * 8192 * 8192 / (1978.9e12 * 0.6) +
                          3.0 * 8192 * 8192 / (3350e9 * 0.8), 1e-9);
    ck_assert_rel(t8, 1001.2e-6, 1e-3);
    /* BF16: / (989.4e12 x 0.8) = 1,389.1 us + 2-byte operands 150.2 us */
    t16 = compute_gemms_s(gpu, &k_round, PREC_BF16, 2, &g, 1);
    ck_assert_rel(t16, 1539.3e-6, 1e-3);
    ck_assert(t8 < t16);
    ck_assert(t8 > 0.5 * t16);
    /* more peak or bandwidth never slower */
    {
        gpu_spec faster = *gpu;
        faster.peak_flops[PEAK_FP8] *= 1.5;
        ck_assert(compute_gemms_s(&faster, &k_round, PREC_FP8, 1, &g, 1) < t8);
        faster.hbm_bytes_per_s *= 2;
        ck_assert(compute_gemms_s(&faster, &k_round, PREC_FP8, 1, &g, 1) < t8);
    }
}
END_TEST

/* MXFP8 GEMMs on Blackwell run at 0.951 of the per-tensor FP8 rate
 * (Transformer Engine's GEMM profiling guide, B300: 7.161 against 6.812 ms
 * for a layer's 12 pre-quantized GEMMs; compute.c MX_GEMM_RATE); on Hopper,
 * which runs no MX GEMM, the rate is FP8's. */
START_TEST(mxfp8_gemm_rate_on_blackwell)
{
    const gpu_spec *b300 = catalog_find("B300"), *h100 = catalog_find("H100-SXM");
    ck_assert_ptr_nonnull(b300);
    ck_assert_ptr_nonnull(h100);
    ck_assert_rel(compute_gemm_rate(b300, &k_round, PREC_MXFP8),
                  0.951 * compute_gemm_rate(b300, &k_round, PREC_FP8), 1e-12);
    ck_assert_rel(compute_gemm_rate(b300, &k_round, PREC_MXFP8), 6.812 / 7.161 *
                  compute_sustained_flops(b300, PEAK_FP8) * k_round.fp8_gemm_eff, 1e-3);
    ck_assert_double_eq(compute_gemm_rate(h100, &k_round, PREC_MXFP8),
                        compute_gemm_rate(h100, &k_round, PREC_FP8));
    ck_assert_rel(compute_gemm_rate(h100, &k_round, PREC_FP8), 1978.9e12 * 0.6, 1e-9);
}
END_TEST

START_TEST(fp8_layer_between_half_and_bf16)
{
    node_group g = h100_group(1);
    cluster c;
    model m;
    layer_spec layers[8];
    cost_params p;
    strategy s = pipeline(1, 1, 1, 1, 8);
    range_cost r16, r8;
    llama_model(&m, layers, 8);
    round_params(&p);
    memset(&c, 0, sizeof c);
    c.n_groups = 1;
    c.group = &g;
    cost_layer_range(&m, &c, &p, &s, 0, 1, 0, 8, false, false, &r16);
    m.prec = PREC_FP8;
    cost_layer_range(&m, &c, &p, &s, 0, 1, 0, 8, false, false, &r8);
    /* the linear layers run ~1.5x faster, attention, norms and casts do
     * not: the whole layer lands strictly between half and the bf16 time */
    ck_assert(r8.fwd_s < r16.fwd_s && r8.fwd_s > 0.5 * r16.fwd_s);
    ck_assert(r8.bwd_s < r16.bwd_s && r8.bwd_s > 0.5 * r16.bwd_s);
}
END_TEST

/* All-to-all (MoE dispatch/combine), S = 24 MB per rank, round fixture:
 * NVLink 300 GB/s bus, 3 us; NIC 25 GB/s, 10 us; 8 GPUs per node. */
START_TEST(alltoall_intra_inter)
{
    node_group g = h100_group(4);
    double S = 24e6;
    /* 8 ranks on one node: 7/8 of S over NVLink: 70 us + 3 us */
    ck_assert_rel(comm_alltoall_s(&g, &k_round, 8, 1, S), 70e-6 + 3e-6, 1e-9);
    /* 16 ranks on two nodes: 7/16 S over NVLink (35 us) while 8/16 S leave
     * through the rank's NIC (480 us): 480 + 10 us */
    ck_assert_rel(comm_alltoall_s(&g, &k_round, 16, 1, S), 480e-6 + 10e-6, 1e-9);
    /* 4 ranks 8 apart: one per node, 3/4 S over the NIC: 720 + 10 us */
    ck_assert_rel(comm_alltoall_s(&g, &k_round, 4, 8, S), 720e-6 + 10e-6, 1e-9);
    ck_assert(comm_alltoall_s(&g, &k_round, 1, 1, S) == 0);
    g.inter_bytes_per_s *= 2;
    ck_assert(comm_alltoall_s(&g, &k_round, 16, 1, S) < 490e-6);
}
END_TEST

/* The node-aware dispatch (flex dispatcher: DeepEP / HybridEP) of the same
 * S = 24 MB of top-8 copies of 128 experts (S / 8 = 3 MB of tokens), round
 * fixture.  A token is sent once per rank holding one of its experts
 * (DeepEP's / HybridEP's dispatch layout): with e experts per rank it
 * misses a given rank with P = (128 - e .. 121 - e) / (128 .. 121).
 * 16 ranks on two nodes: a token reaches the other node unless its 8
 * experts all sit among this node's 64, P = (64 .. 57) / (128 .. 121) =
 * 0.0030959, so 3 MB x 0.9969041 = 2.990712 MB leave through the NIC
 * (119.628 us) while NVLink carries the copies for 16 (1 - P_rank) =
 * 6.5965 ranks (e = 8: P_rank 0.5877179), 15/16 of them elsewhere (61.8
 * us): 119.628 + 10 us, a quarter of the alltoall dispatcher's 480 us.
 * 4 ranks 8 apart, one per node: 3 other nodes of 32 experts each,
 * P = (96 .. 89) / (128 .. 121) = 0.0927473: 3 MB x 3 x 0.9072527 over the
 * NIC (326.611 us) + 10 us.  In one node (8 ranks, e = 16): P_rank =
 * (112 .. 105) / (128 .. 121) = 0.3325804, 8 x 0.6674196 = 5.339357 of the
 * 8 copies, 7/8 of them to other ranks: 3 MB x 5.339357 x 7/8 over NVLink
 * (46.719 us) + 3 us, where the alltoall dispatcher sends all 8 (73 us). */
START_TEST(alltoall_node_dedup)
{
    node_group g = h100_group(4);
    double S = 24e6;
    ck_assert_rel(comm_alltoall_node_dedup_s(&g, &k_round, 16, 1, S, 128, 8),
                  119.628496e-6 + 10e-6, 1e-6);
    ck_assert_rel(comm_alltoall_node_dedup_s(&g, &k_round, 4, 8, S, 128, 8),
                  326.610983e-6 + 10e-6, 1e-6);
    ck_assert_rel(comm_alltoall_node_dedup_s(&g, &k_round, 8, 1, S, 128, 8),
                  46.719373e-6 + 3e-6, 1e-6);
    /* 8 experts over 8 ranks, top-8: each token uses every expert, one per
     * rank, so every copy goes to a rank of its own: the plain all-to-all */
    ck_assert_rel(comm_alltoall_node_dedup_s(&g, &k_round, 8, 1, S, 8, 8),
                  comm_alltoall_s(&g, &k_round, 8, 1, S), 1e-12);
    ck_assert(comm_alltoall_node_dedup_s(&g, &k_round, 1, 1, S, 128, 8) == 0);
    /* top-1: every copy is one token, nothing to merge */
    ck_assert_rel(comm_alltoall_node_dedup_s(&g, &k_round, 16, 1, S, 128, 1),
                  comm_alltoall_s(&g, &k_round, 16, 1, S), 1e-9);
}
END_TEST

/* A small MoE model: h 1024, 8 heads of 128, SwiGLU, RMSNorm; 8 experts of
 * ffn 512, top-2, one shared expert of ffn 256; every layer MoE. */
static void moe_model(model *m, layer_spec *layers, int n)
{
    int i;
    memset(m, 0, sizeof *m);
    strcpy(m->name, "moe-test");
    m->layers = n;
    m->hidden = 1024;
    m->heads = m->kv_heads = 8;
    m->head_dim = 128;
    m->ffn_hidden = 512;
    m->vocab = 32000;
    m->max_position = 4096;
    m->act = ACT_SWIGLU;
    m->norm = NORM_RMSNORM;
    m->position = POS_ROPE;
    m->prec = PREC_BF16;
    m->moe = (model_moe){8, 2, 512, 1, 256, 0, 1};
    for (i = 0; i < n; i++)
        layers[i] = (layer_spec){1024, 8, 8, 128, 512, true, 0, 0};
    m->layer = layers;
}

START_TEST(moe_expert_params_over_ep_and_a2a)
{
    node_group g = h100_group(1);
    cluster c;
    model m;
    layer_spec layers[2];
    cost_params p;
    strategy s = pipeline(1, 1, 8, 1, 2);
    range_cost r1, r4;
    double S = 8192.0 * 2 * 1024 * 2;   /* mbs 2 x 4096 tokens, top-2, 2 bytes */
    double a2a = S * 3.0 / 4.0 / 300e9 + 3e-6;
    moe_model(&m, layers, 2);
    round_params(&p);
    memset(&c, 0, sizeof c);
    c.n_groups = 1;
    c.group = &g;
    /* routed experts of one layer: 8 x 3 x 1024 x 512 (no biases) */
    ck_assert_rel(tf_layer_expert_params(&m, 0), 12582912.0, 1e-12);
    ck_assert_rel(tf_moe_dispatch_bytes(&m, &layers[0], 8192, 1), S, 1e-12);
    cost_layer_range(&m, &c, &p, &s, 0, 1, 0, 2, false, false, &r1);
    s.ep = 4;
    cost_layer_range(&m, &c, &p, &s, 0, 1, 0, 2, false, false, &r4);
    /* ep 4: two experts per GPU, 2 x 12,582,912 / 4 expert parameters; the
     * GPU holds 3/4 of both layers' experts fewer */
    ck_assert_rel(r4.expert_params, 6291456.0, 1e-12);
    ck_assert_rel(r1.params - r4.params, 18874368.0, 1e-12);
    /* no all-to-all at ep 1; at ep 4 per layer a dispatch and a combine in
     * the forward and the backward, 3/4 of S over NVLink each: 4 x
     * (83.886 us + 3 us) per layer, two layers */
    ck_assert(r1.ep_comm_s == 0);
    ck_assert_rel(r4.ep_comm_s, 2.0 * 4.0 * a2a, 1e-9);
    /* the routed FLOPs do not depend on ep; their GEMMs run over fewer
     * experts with 4x the tokens each: no slower per GPU */
    ck_assert(r4.compute_s <= r1.compute_s);
}
END_TEST

START_TEST(cp_ring_exposed_fraction)
{
    node_group g = h100_group(1);
    cluster c;
    model m;
    layer_spec layers[1];
    cost_params p;
    strategy s = pipeline(1, 1, 1, 1, 1);
    range_cost r;
    double t;
    llama_model(&m, layers, 1);
    m.hidden = 4096;
    m.heads = 32;
    layers[0] = (layer_spec){4096, 32, 8, 128, 14336, false, 0, 0};
    round_params(&p);
    memset(&c, 0, sizeof c);
    c.n_groups = 1;
    c.group = &g;
    s.mbs = 1;
    s.seq_len = 8192;
    s.cp = 2;
    /* each rank holds 4,096 tokens; its K and V (8 KV heads x 128, 16 bits)
     * are 4096 x 2 x 1024 x 2 B = 16,777,216 B, one step round a ring of 2
     * on NVLink: 16777216 / 300e9 + 3 us = 58.92 us.  Attention forward:
     * 4 x 4096 x 8192 x 4096 / 2 / (989.4e12 x 0.5) = 1,111 us hides it
     * (backward 2.5x hides twice the bytes); overlap_exposed 0.25 of each
     * still shows: 0.25 x (t + 2 t) = 44.19 us of CP time, TP being 1 */
    t = 16777216.0 / 300e9 + 3e-6;
    cost_layer_range(&m, &c, &p, &s, 0, 1, 0, 1, false, false, &r);
    ck_assert_rel(r.cp_comm_s, 0.25 * 3.0 * t, 1e-9);
    ck_assert_rel(r.cp_comm_s, 44.19e-6, 1e-3);
    ck_assert(r.tp_comm_s == 0);
    /* cp 1: no ring */
    s.cp = 1;
    cost_layer_range(&m, &c, &p, &s, 0, 1, 0, 1, false, false, &r);
    ck_assert(r.cp_comm_s == 0);
}
END_TEST

START_TEST(memory_reserve_and_fragmentation)
{
    state_bytes sb;
    memory_breakdown mb;
    /* bf16, no ZeRO: 2 + 4 + 12 bytes per parameter */
    memory_state_bytes(PREC_BF16, false, OPT_STATE_FP32, 0, 8, &sb);
    ck_assert_rel(sb.weights + sb.grads + sb.optimizer, 18.0, 1e-12);
    /* 1e9 params, 2e9 B activations x 3 in flight + 1e9 transient = 7e9;
     * reserve 1 GiB + 10% of 7e9 = 1,773,741,824 B; total 18e9 + 7e9 +
     * 1.7737e9 */
    memory_stage(&(stage_memory_in){PREC_BF16, 0, 8, 8, 1e9, 0, 2e9, 3, 1e9, 1073741824.0,
                                    0.10, 80e9, 0, false, false, OPT_STATE_FP32, 0, 0}, &mb);
    ck_assert_rel(mb.activations_bytes, 7e9, 1e-12);
    ck_assert_rel(mb.reserve_bytes, 1773741824.0, 1e-12);
    ck_assert_rel(mb.total_bytes, 18e9 + 7e9 + 1773741824.0, 1e-12);
    ck_assert_rel(mb.capacity_bytes, 80e9, 1e-12);
    /* distributed optimizer over 8: 2 + 4 + 12/8 */
    memory_state_bytes(PREC_BF16, false, OPT_STATE_FP32, 1, 8, &sb);
    ck_assert_rel(sb.weights + sb.grads + sb.optimizer, 7.5, 1e-12);
    /* fp16 ZeRO-3 over 8: (2 + 2 + 12) / 8 */
    memory_state_bytes(PREC_FP16, false, OPT_STATE_FP32, 3, 8, &sb);
    ck_assert_rel(sb.weights + sb.grads + sb.optimizer, 2.0, 1e-12);
}
END_TEST

START_TEST(evaluate_reserve_and_zero3_buffers)
{
    node_group g = h100_group(8);
    cluster c;
    model m;
    layer_spec layers[8];
    cost_params p;
    strategy s = pipeline(8, 1, 8, 1, 8);
    evaluation e2, e3;
    double layer_params, unit;
    int i;
    llama_model(&m, layers, 8);
    m.vocab = 32000;
    cost_params_default(&p);
    memset(&c, 0, sizeof c);
    c.n_groups = 1;
    c.group = &g;
    s.gbs = 16;
    s.zero = 2;
    s.overlap_grad_reduce = true;
    evaluate(&m, &c, &p, &s, &e2);
    /* the reserve is reserve_bytes + frag_fraction x activations, per stage */
    for (i = 0; i < e2.n_stages; i++)
        ck_assert_rel(e2.stage_memory[i].reserve_bytes,
                      p.reserve_bytes + p.frag_fraction * e2.stage_memory[i].activations_bytes,
                      1e-12);
    /* ZeRO-3 holds, beyond ZeRO-2's activations, the gathered 16-bit
     * weights of the layer in use and the prefetched one (capped at 1e9
     * parameters), per TP rank.  A Llama layer: q, o 2 h^2, k, v 2 h x 1024,
     * SwiGLU 3 h f, two RMSNorm h: 134,217,728 + 16,777,216 + 704,643,072 +
     * 16,384 = 855,654,400 parameters, larger than the 32000 x 8192
     * embedding (262,144,000): 2 x 2 x 855,654,400 / 8 = 427,827,200 B */
    layer_params = 2.0 * 8192 * 8192 + 2.0 * 8192 * 1024 + 3.0 * 8192 * 28672 + 2.0 * 8192;
    ck_assert_rel(tf_layer_params(&m, 0), layer_params, 1e-12);
    unit = layer_params;
    s.zero = 3;
    evaluate(&m, &c, &p, &s, &e3);
    ck_assert_rel(e3.stage_memory[0].activations_bytes - e2.stage_memory[0].activations_bytes,
                  2.0 * (unit + unit) / 8, 1e-9);
    ck_assert_rel(2.0 * (unit + unit) / 8, 427827200.0, 1e-9);
    /* ZeRO-3 shards the weights: 2 B / 8 per parameter instead of 2 */
    ck_assert_rel(e3.stage_memory[0].weights_bytes, e2.stage_memory[0].weights_bytes / 8, 1e-9);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("comm");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, ring_latency_hierarchical);
    tcase_add_test(tc, collectives_monotone_in_bandwidth);
    tcase_add_test(tc, boundary_p2p_intra_inter_wrap_hetero);
    tcase_add_test(tc, fp8_gemm_faster_not_twice);
    tcase_add_test(tc, mxfp8_gemm_rate_on_blackwell);
    tcase_add_test(tc, fp8_layer_between_half_and_bf16);
    tcase_add_test(tc, cp_ring_exposed_fraction);
    tcase_add_test(tc, alltoall_intra_inter);
    tcase_add_test(tc, alltoall_node_dedup);
    tcase_add_test(tc, moe_expert_params_over_ep_and_a2a);
    tcase_add_test(tc, memory_reserve_and_fragmentation);
    tcase_add_test(tc, evaluate_reserve_and_zero3_buffers);
    tcase_add_test(tc, pcie_intra_node_links);
    tcase_add_test(tc, power_limited_clock);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
