/* catalog.h: the built-in accelerator catalog (one constant table, catalog.c).
 *
 * Every figure is per GPU and dense (no 2:4 sparsity).  Each row of the table
 * carries its source.  A cluster file names a row and may override any field.
 */
#ifndef PLANNER_CATALOG_H
#define PLANNER_CATALOG_H

#include <stddef.h>

/* Number formats a GPU has a dense peak for (catalog columns). */
typedef enum peak_format {
    PEAK_FP32, PEAK_TF32, PEAK_BF16, PEAK_FP16, PEAK_FP8, PEAK_FP4, PEAK_COUNT
} peak_format;

/* GPU generations: the cost model keeps one set of constants per generation. */
typedef enum gpu_generation {
    GEN_VOLTA, GEN_TURING, GEN_AMPERE, GEN_ADA, GEN_HOPPER, GEN_BLACKWELL,
    GEN_BLACKWELL_ULTRA, GEN_CDNA2, GEN_CDNA3, GEN_COUNT
} gpu_generation;

/* The intra-node path between GPUs: a GPU fabric (NVLink/NVSwitch, AMD
 * xGMI), PCIe peer-to-peer (both GPUs behind one PCIe switch), or PCIe
 * through host memory (no P2P between the GPUs: NCCL's SHM transport). */
typedef enum gpu_intra_link {
    INTRA_FABRIC, INTRA_PCIE_P2P, INTRA_PCIE_HOST, INTRA_LINK_COUNT
} gpu_intra_link;

/* "fabric", "pcie-p2p", "pcie-host". */
const char *gpu_intra_link_name(gpu_intra_link l);

#define GPU_NAME_MAX 40

typedef struct gpu_spec {
    char name[GPU_NAME_MAX];          /* catalog name, e.g. "H100-SXM" */
    gpu_generation gen;
    double peak_flops[PEAK_COUNT];    /* dense FLOP/s; 0 = format not supported */
    double mem_bytes;                 /* physical HBM */
    double usable_mem_bytes;          /* what the framework can allocate */
    double hbm_bytes_per_s;
    double intra_node_bytes_per_s;    /* NVLink/xGMI/PCIe, one-way per GPU */
    double inter_node_bytes_per_s;    /* default NIC bandwidth per GPU */
    int gpus_per_node;                /* usual node layout */
    int nvlink_domain;                /* GPUs sharing the fast link (72 for NVL72) */
    double board_power_w;             /* board power (TDP / max power), for energy */
    double clock_fraction;            /* sustained / boost clock in long tensor-core
                                         GEMMs under the board power limit: the
                                         peaks are at boost clock; 0 or 1: no cap */
    gpu_intra_link intra_link;        /* how GPUs of a node reach each other */
    const char *source;               /* where the figures come from */
} gpu_spec;

/* Looks a GPU up by name, case-insensitive; also accepts the aliases listed in
 * catalog.c ("H100" -> "H100-SXM").  NULL if unknown. */
const gpu_spec *catalog_find(const char *name);

/* The rows, for listing and did-you-mean. */
size_t catalog_count(void);
const gpu_spec *catalog_at(size_t i);

const char *gpu_generation_name(gpu_generation gen);
const char *peak_format_name(peak_format f);

#endif
