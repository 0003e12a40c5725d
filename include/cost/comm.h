/* comm.h: collectives and point-to-point transfers, alpha-beta, over the
 * link a process group actually crosses.
 *
 * Bytes follow nccl-tests' PERFORMANCE.md: with S the full buffer and n ranks,
 * each GPU moves 2 (n-1)/n S for an all-reduce, (n-1)/n S for an all-gather or
 * a reduce-scatter, S for a send.  Time = bytes / bus bandwidth + latency,
 * with NCCL's hierarchical latency structure (src/graph/tuning.cc): a ring
 * phase of n ranks over N nodes takes n-1 steps, of which N-1 cross the
 * network (inter-node latency) and n-N stay on NVLink (intra-node latency);
 * an all-reduce is two phases, or a tree: 2 ((n/N - 1) intra + log2 N inter),
 * whichever is cheaper.
 */
#ifndef PLANNER_COMM_H
#define PLANNER_COMM_H

#include "inputs/cluster.h"
#include <stdbool.h>
#include "cost/params.h"

/* What one rank of a group sees: bus bandwidth (efficiency applied) and the
 * latency of one step. */
typedef struct comm_link {
    double bytes_per_s;
    double latency_s;       /* per network step (inter-node), or per NVLink
                               step when the group stays in one domain */
    double intra_latency_s; /* per NVLink step */
    int ranks_per_node;     /* members of the group inside one NVLink domain */
    bool inter_node;        /* the group spans nodes (NVLink domains) */
} comm_link;

/* The link of a group of `size` ranks spaced `stride` apart in Megatron's
 * rank order (tp-cp-ep-dp-pp) on node group `g`.  Inside one NVLink domain:
 * the NVLink rate x intra_eff.  Across domains: the k members per node share
 * the node's NICs, so the bus bandwidth is min(NVLink x intra_eff,
 * k x NIC x inter_eff), k = max(1, domain / stride) (at most size). */
comm_link comm_group_link(const node_group *g, const gen_constants *k, int size,
                          int stride);

double comm_allreduce_s(const comm_link *l, int n, double bytes);
double comm_allgather_s(const comm_link *l, int n, double bytes);      /* S = output */
double comm_reducescatter_s(const comm_link *l, int n, double bytes);  /* S = input */
/* Latency of one ring phase (n-1 steps) of a group of n ranks on `l`. */
double comm_ring_latency_s(const comm_link *l, int n);

/* All-to-all of a group of n ranks spaced `stride` apart on node group `g`
 * (MoE token dispatch / combine), `bytes` = S, the buffer each rank sends,
 * 1/n of it to each member (itself included, not moved).  Of the n - 1
 * remote shares, the kd - 1 to members in the same NVLink domain (kd =
 * min(n, max(1, domain / stride))) cross NVLink at intra x intra_eff, the
 * n - kd others the rank's own NIC at inter x inter_eff; both run at once:
 *     max(S (kd-1)/n / intra, S (n-kd)/n / inter) + one step's latency
 * (network when the group leaves the domain).  n = 1 costs 0. */
double comm_alltoall_s(const node_group *g, const gen_constants *k, int n, int stride,
                       double bytes);

/* The MoE token dispatch (or combine) of a node-aware dispatcher (Megatron-
 * Core's flex dispatcher: DeepEP's internode kernels, HybridEP): a token
 * crosses the network once to each other NVLink domain holding one of its
 * top_k experts, and is forwarded over NVLink there (the combine reduces in
 * the domain first, then sends one sum back).  `bytes` = S, the top-k copies
 * a rank sends, as for comm_alltoall_s; the experts, spread evenly over the
 * group, are drawn uniformly without replacement (force-balanced routing).
 * Over the NIC go S / top_k x R, R the expected number of other domains
 * hit, (D - 1)(1 - C(E - E/D, k) / C(E, k)) for D domains of the group;
 * over NVLink the copies to the rank's own domain and the forwarding of the
 * arrived ones, S (n - 1) / n.  A group inside one domain costs as
 * comm_alltoall_s. */
double comm_alltoall_node_dedup_s(const node_group *g, const gen_constants *k, int n, int stride,
                                  double bytes, int experts, int top_k);

/* One node group's part of an all-to-all group that spans node groups: the
 * group's `ranks` members on node group `g` (cluster index `group`), whose
 * kernels and NICs run at generation constants `k`. */
#define COMM_A2A_PARTS_MAX 4      /* node groups one all-to-all group may span */
typedef struct comm_a2a_part {
    const node_group *g;
    const gen_constants *k;
    int group;
    int ranks;
} comm_a2a_part;

/* The all-to-all (top_k 0: Megatron-Core's alltoall dispatcher) or the
 * node-aware dispatch (top_k > 0, `experts` experts: the flex dispatcher)
 * of a group whose n = sum ranks members, `stride` apart, lie on the
 * node groups of part[0 .. n_parts) (MoE expert parallelism over a stage
 * spanning GPU types).  A rank on part j sends as in comm_alltoall_s /
 * comm_alltoall_node_dedup_s with its own NVLink domain and NIC (kd_j =
 * min(ranks_j, domain_j / stride) members in its domain, the group's other
 * n - kd_j through its NIC), and the share bound for each other part i
 * (S ranks_i / n; the flex dispatcher: one copy per destination rank in
 * the domain, S / top_k x the domains of part i reached across them)
 * also through the link between the two groups (cluster_link_between, at
 * rank j's inter_eff); the slowest of the three, plus the largest latency
 * of the links it crosses, is rank j's time.  Every member waits for every
 * other's tokens, so the group takes its slowest rank's time: a slow
 * group's NVLink, NIC or link paces the whole group.  One part is
 * comm_alltoall_s (or comm_alltoall_node_dedup_s) on that group, to the
 * bit. */
double comm_alltoall_mixed_s(const cluster *c, const comm_a2a_part *part, int n_parts,
                             int stride, double bytes, int experts, int top_k);

/* A send of `bytes` over a link of `bytes_per_s` (efficiency applied by the
 * caller) and `latency_s`. */
double comm_p2p_s(double bytes_per_s, double latency_s, double bytes);

/* GPUs of group `g` joined by the fast intra-node link (NVL72: 72). */
/* The bus bandwidth of a collective inside one node of g: NVLink/xGMI at
 * the generation's intra_eff, PCIe P2P at PCIe's efficiency, half that
 * through host memory (gpu_spec.intra_link). */
double comm_intra_bytes_per_s(const node_group *g, const gen_constants *k);

int comm_nvlink_domain(const node_group *g);

#endif
