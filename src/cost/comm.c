/* comm.c: alpha-beta collectives over the link each process group crosses.
 *
 * Megatron orders ranks tp-cp-ep-dp-pp (TP fastest), so a TP group of t <= 8
 * sits on one node's NVLink, a DP group of stride t*cp spans nodes once
 * t*cp*dp exceeds the node, and PP neighbours are t*cp*dp ranks apart.  A
 * group crossing nodes runs NCCL rings through every member; its node
 * boundary carries the ring's traffic over the NICs of the k members on that
 * node, so the bus bandwidth is k NICs' worth, never more than NVLink.
 * Bus bandwidths are the link rates times the generation's efficiencies
 * (nccl-tests: A100 NVLink3 235 of 300 GB/s, NDR 400 Gb/s ~47 of 50 GB/s);
 * inside a node without a GPU fabric (gpu_spec.intra_link) the PCIe rate
 * times PCIe's efficiency, halved through host memory
 * (comm_intra_bytes_per_s).
 * Latency: NCCL's model (src/graph/tuning.cc): a ring phase of n ranks on N
 * nodes has n-1 steps, N-1 of them over the network (the cluster's
 * inter-node latency), n-N over NVLink (intra-node latency); all-reduce is two
 * ring phases or a tree, 2 ((n/N - 1) intra + ceil(log2 N) inter), whichever
 * is cheaper.  So 1,536 ranks on 192 nodes pay 191 network steps per phase,
 * not 1,535.
 * All-to-all (MoE dispatch/combine, comm_alltoall_s): the shares to peers in
 * the NVLink domain and those over the rank's own NIC move concurrently.
 * The flex dispatcher's (comm_alltoall_node_dedup_s: DeepEP, HybridEP)
 * sends a token once per destination rank (DeepEP's get_dispatch_layout:
 * num_tokens_per_rank, is_token_in_rank; the receiving rank permutes it to
 * its local experts, and the combine returns one partial sum per rank) and,
 * across NVLink domains, once per domain, forwarded over NVLink there.
 * Invariant: times grow with bytes and fall with bandwidth; n = 1 costs 0.
 */
#include <math.h>
#include "cost/comm.h"

/* PCIe: a ring's bus bandwidth over the one-way x16 rate.  128b/130b is in
 * the rate already; TLP/DLLP headers at a 256 B max payload, flow control
 * and NCCL's protocol leave ~0.75 (nccl-tests all_reduce on PCIe Gen3 x16
 * P2P: ~11-12 of 15.75 GB/s).  Through the host (no P2P: NCCL's SHM
 * transport) every chunk is written to pinned host memory by the sender and
 * read back by the receiver, two PCIe transfers serialised per slice of
 * the FIFO: half that. */
#define PCIE_BUS_EFF 0.75

double comm_intra_bytes_per_s(const node_group *g, const gen_constants *k)
{
    switch (g->gpu.intra_link) {
    case INTRA_PCIE_P2P: return g->intra_bytes_per_s * PCIE_BUS_EFF;
    case INTRA_PCIE_HOST: return g->intra_bytes_per_s * PCIE_BUS_EFF / 2.0;
    case INTRA_FABRIC: case INTRA_LINK_COUNT: break;
    }
    return g->intra_bytes_per_s * (k->intra_eff > 0 ? k->intra_eff : 1.0);
}

int comm_nvlink_domain(const node_group *g)
{
    int d = g->gpus_per_node;
    if (g->gpu.nvlink_domain > d)
        d = g->gpu.nvlink_domain;
    return d > 0 ? d : 1;
}

comm_link comm_group_link(const node_group *g, const gen_constants *k, int size,
                          int stride)
{
    comm_link l;
    int dom = comm_nvlink_domain(g);
    double intra = comm_intra_bytes_per_s(g, k);
    if (stride < 1)
        stride = 1;
    l.intra_latency_s = g->intra_latency_s;
    if ((double)size * stride <= dom) {
        l.bytes_per_s = intra;
        l.latency_s = g->intra_latency_s;
        l.ranks_per_node = size > 0 ? size : 1;
        l.inter_node = false;
    } else {
        int per_node = stride >= dom ? 1 : dom / stride;
        double inter;
        if (per_node > size)
            per_node = size;
        l.ranks_per_node = per_node > 0 ? per_node : 1;
        inter = per_node * g->inter_bytes_per_s * k->inter_eff;
        l.bytes_per_s = inter < intra ? inter : intra;
        l.latency_s = g->inter_latency_s;
        l.inter_node = true;
    }
    if (!(l.bytes_per_s > 0))
        l.bytes_per_s = 1.0;
    return l;
}

/* Nodes (NVLink domains) a group of n ranks spans on l. */
static double nodes_spanned(const comm_link *l, int n)
{
    int k = l->ranks_per_node > 0 ? l->ranks_per_node : 1;
    if (!l->inter_node || k >= n)
        return 1;
    return ceil((double)n / k);
}

double comm_ring_latency_s(const comm_link *l, int n)
{
    double nn;
    if (n <= 1)
        return 0;
    nn = nodes_spanned(l, n);
    if (nn <= 1)
        return (n - 1) * l->latency_s;
    return (nn - 1) * l->latency_s + (n - nn) * l->intra_latency_s;
}

double comm_allreduce_s(const comm_link *l, int n, double bytes)
{
    double ring, tree, nn;
    if (n <= 1 || bytes <= 0)
        return 0;
    nn = nodes_spanned(l, n);
    ring = 2.0 * comm_ring_latency_s(l, n);
    if (nn <= 1)
        tree = 2.0 * ceil(log2((double)n)) * l->latency_s;
    else
        tree = 2.0 * ((n / nn - 1) * l->intra_latency_s + ceil(log2(nn)) * l->latency_s);
    return 2.0 * (n - 1) / n * bytes / l->bytes_per_s + (ring < tree ? ring : tree);
}

double comm_allgather_s(const comm_link *l, int n, double bytes)
{
    if (n <= 1 || bytes <= 0)
        return 0;
    return (double)(n - 1) / n * bytes / l->bytes_per_s + comm_ring_latency_s(l, n);
}

double comm_reducescatter_s(const comm_link *l, int n, double bytes)
{
    return comm_allgather_s(l, n, bytes);
}

double comm_p2p_s(double bytes_per_s, double latency_s, double bytes)
{
    if (bytes <= 0)
        return 0;
    return bytes / (bytes_per_s > 0 ? bytes_per_s : 1.0) + latency_s;
}

/* The members of an all-to-all group of n ranks `stride` apart that share
 * one NVLink domain of g (1 .. n). */
static int alltoall_domain_ranks(const node_group *g, int n, int stride)
{
    int dom = comm_nvlink_domain(g), kd;
    if (stride < 1)
        stride = 1;
    kd = stride >= dom ? 1 : dom / stride;
    return kd > n ? n : kd;
}

/* The busier of a rank's NVLink (intra_bytes) and NIC (inter_bytes), both
 * moving at once. */
static double alltoall_busy_s(const node_group *g, const gen_constants *k, double intra_bytes,
                              double inter_bytes)
{
    double intra = comm_intra_bytes_per_s(g, k);
    double inter = g->inter_bytes_per_s * k->inter_eff;
    double t_intra, t_inter;
    if (!(intra > 0))
        intra = 1.0;
    if (!(inter > 0))
        inter = 1.0;
    t_intra = intra_bytes / intra;
    t_inter = inter_bytes / inter;
    return t_intra > t_inter ? t_intra : t_inter;
}

/* An all-to-all moving intra_bytes over NVLink and inter_bytes over the
 * rank's NIC at once; the network's latency when the group leaves the
 * domain (kd < n). */
static double alltoall_split_s(const node_group *g, const gen_constants *k, int n, int kd,
                               double intra_bytes, double inter_bytes)
{
    return alltoall_busy_s(g, k, intra_bytes, inter_bytes) +
           (kd < n ? g->inter_latency_s : g->intra_latency_s);
}

double comm_alltoall_s(const node_group *g, const gen_constants *k, int n, int stride,
                       double bytes)
{
    int kd;
    if (n <= 1 || bytes <= 0)
        return 0;
    kd = alltoall_domain_ranks(g, n, stride);
    return alltoall_split_s(g, k, n, kd, bytes * (kd - 1.0) / n,
                            bytes * (double)(n - kd) / n);
}

/* P(none of a token's top_k distinct experts, of `experts`, is among `m`
 * given ones): balanced routing draws them uniformly */
static double miss_all(int experts, double m, int top_k)
{
    double none = 1.0;
    for (int i = 0; i < top_k; i++)
        none *= experts - m - i > 0 ? (experts - m - i) / (experts - i) : 0.0;
    return none;
}

double comm_alltoall_node_dedup_s(const node_group *g, const gen_constants *k, int n, int stride,
                                  double bytes, int experts, int top_k)
{
    int kd;
    double domains, ranks;
    if (n <= 1 || bytes <= 0)
        return 0;
    kd = alltoall_domain_ranks(g, n, stride);
    if (experts <= 0 || top_k <= 0)
        return comm_alltoall_s(g, k, n, stride, bytes);
    /* one copy per destination rank (DeepEP's and HybridEP's dispatch
     * layout, is_token_in_rank): a token reaches n (1 - miss) ranks of the
     * n its top_k experts span, where the alltoall dispatcher sends top_k */
    ranks = n * (1.0 - miss_all(experts, (double)experts / n, top_k));
    if (kd >= n)
        return comm_alltoall_s(g, k, n, stride, bytes * ranks / top_k);
    domains = (double)n / kd;
    /* a token reaches a given other domain unless none of its top_k
     * experts is among that domain's experts / domains */
    return alltoall_split_s(g, k, n, kd, bytes * ranks / top_k * (n - 1.0) / n,
                            bytes / top_k * (domains - 1.0) *
                                (1.0 - miss_all(experts, experts / domains, top_k)));
}

/* Rank j's side of comm_alltoall_mixed_s: its NVLink and NIC (as the
 * one-group forms), then each other part's share over the link to it. */
static double alltoall_mixed_rank_s(const cluster *c, const comm_a2a_part *part, int n_parts,
                                    int j, const int *kd, int n, double domains, double hit,
                                    double dest, double bytes, int top_k)
{
    const comm_a2a_part *pj = &part[j];
    double t, lat;
    if (top_k > 0)
        t = alltoall_busy_s(pj->g, pj->k, bytes * dest / top_k * (n - 1.0) / n,
                            bytes / top_k * (domains - 1.0) * hit);
    else
        t = alltoall_busy_s(pj->g, pj->k, bytes * (kd[j] - 1.0) / n,
                            bytes * (double)(n - kd[j]) / n);
    lat = kd[j] < n ? pj->g->inter_latency_s : pj->g->intra_latency_s;
    for (int i = 0; i < n_parts; i++) {
        double bw, l, share;
        if (i == j)
            continue;
        cluster_link_between(c, pj->group, part[i].group, &bw, &l);
        bw *= pj->k->inter_eff;
        share = top_k > 0 ? bytes / top_k * ((double)part[i].ranks / kd[i]) * hit
                          : bytes * part[i].ranks / n;
        if (share / (bw > 0 ? bw : 1.0) > t)
            t = share / (bw > 0 ? bw : 1.0);
        if (l > lat)
            lat = l;
    }
    return t + lat;
}

double comm_alltoall_mixed_s(const cluster *c, const comm_a2a_part *part, int n_parts,
                             int stride, double bytes, int experts, int top_k)
{
    int kd[COMM_A2A_PARTS_MAX], n = 0;
    double domains = 0, hit = 0, dest = 0, worst = 0;
    if (n_parts < 1 || n_parts > COMM_A2A_PARTS_MAX)
        return 0;
    for (int j = 0; j < n_parts; j++) {
        n += part[j].ranks;
        kd[j] = alltoall_domain_ranks(part[j].g, part[j].ranks, stride);
        domains += (double)part[j].ranks / kd[j];
    }
    if (n <= 1 || bytes <= 0)
        return 0;
    if (experts <= 0)
        top_k = 0;
    if (top_k > 0)   /* destination ranks a token reaches (comm_alltoall_node_dedup_s) */
        dest = n * (1.0 - miss_all(experts, (double)experts / n, top_k));
    if (top_k > 0 && domains <= 1) {   /* one domain: one copy per rank, over NVLink */
        bytes = bytes * dest / top_k;
        top_k = 0;
    }
    if (top_k > 0)   /* P(a token reaches a given other domain) */
        hit = 1.0 - miss_all(experts, experts / domains, top_k);
    for (int j = 0; j < n_parts; j++) {
        double t = alltoall_mixed_rank_s(c, part, n_parts, j, kd, n, domains, hit, dest, bytes,
                                         top_k);
        if (t > worst)
            worst = t;
    }
    return worst;
}
