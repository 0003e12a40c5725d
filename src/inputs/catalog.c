/* catalog.c: the built-in accelerator catalog, one constant table.
 *
 * What a row models: one GPU (or one accelerator package) as the cost model
 * sees it.  Every peak is DENSE tensor-core throughput (no 2:4 sparsity):
 * NVIDIA's headline Hopper/Blackwell figures include sparsity and are halved
 * here (H100 SXM: 1979 "BF16" -> 989 dense).  0 means the format has no
 * tensor-core path on that part (V100 and T4 have no BF16, no FP8).
 *
 * Memory: mem_bytes is the physical capacity as sold (NVIDIA's "80GB" A100 or
 * H100 is 80 GiB of HBM, of which the driver exposes a little less).
 * usable_mem_bytes = what torch.cuda reports as total_memory on that part,
 * minus CATALOG_RESERVE (2 GiB) for the CUDA context, NCCL buffers and
 * fragmentation (cost-model.md: "leave 1-3 GiB"); e.g. A100-80GB shows
 * 79.3 GiB -> 77.3 GiB usable.
 *
 * Links (all one-way, per GPU, bytes/s): intra_node is the aggregate of the
 * GPU's NVLink/xGMI links (or its PCIe x16 slot where there is no NVLink,
 * with intra_link saying whether the GPUs reach each other by PCIe P2P or
 * only through host memory, as the row's source says);
 * inter_node is the default scale-out NIC bandwidth per GPU of the usual
 * server (DGX A100: 200 Gb/s HDR per GPU; DGX H100/H200/B200: 400 Gb/s NDR;
 * B300/GB300: 800 Gb/s ConnectX-8).  A cluster file overrides any of these.
 *
 * clock_fraction: the sustained / boost clock of a power-limited part in
 * long tensor-core GEMMs (T4 under 70 W); the peaks stay the datasheet's.
 *
 * Sources: ../shared/reference/cost-model.md (accelerator table) and the
 * vendor datasheets named per row.  Invariants: names unique, every figure
 * finite and >= 0, mem >= usable > 0, gpus_per_node >= 1.
 */
#include <stddef.h>
#include <string.h>
#include "base/text.h"
#include "inputs/catalog.h"

#define T (1e12)
#define GB (1e9)
#define GIB (1073741824.0)
#define GBIT (1e9 / 8.0)
#define CATALOG_RESERVE (2.0 * GIB)
#define USABLE(visible_gib) ((visible_gib) * GIB - CATALOG_RESERVE)

/* Peaks in TFLOP/s, in peak_format order: FP32, TF32, BF16, FP16, FP8, FP4. */
#define PEAKS(fp32, tf32, bf16, fp16, fp8, fp4)                                \
    { (fp32) * T, (tf32) * T, (bf16) * T, (fp16) * T, (fp8) * T, (fp4) * T }

static const gpu_spec k_catalog[] = {
    {"V100-SXM2-16GB", GEN_VOLTA, PEAKS(15.7, 0, 0, 125, 0, 0),
     16 * GIB, USABLE(15.78), 900 * GB, 150 * GB, 50 * GBIT, 8, 8, 300, 1.0, INTRA_FABRIC,
     "NVIDIA V100 datasheet (SXM2: 125 TFLOPS tensor FP16, 15.7 FP32, 900 GB/s, "
     "NVLink2 6 x 25 GB/s one-way); DGX-1 4 x 100 Gb/s EDR per 8 GPUs; AWS p3; "
     "board power: V100 SXM2 datasheet 300 W"},
    {"V100-SXM2-32GB", GEN_VOLTA, PEAKS(15.7, 0, 0, 125, 0, 0),
     32 * GIB, USABLE(31.74), 900 * GB, 150 * GB, 50 * GBIT, 16, 16, 300, 1.0, INTRA_FABRIC,
     "NVIDIA V100 datasheet; cost-model.md; node = DGX-2/DGX-2H (16 GPUs on "
     "NVSwitch, 8 x 100 Gb/s EDR per 16 GPUs), as in Megatron-LM's 2019-2020 runs; "
     "board power: V100 SXM2 datasheet 300 W"},
    {"T4", GEN_TURING, PEAKS(8.1, 0, 0, 65, 0, 0),
     16 * GIB, USABLE(14.75), 320 * GB, 15.75 * GB, 12.5 * GBIT, 4, 4, 70, 0.43, INTRA_PCIE_HOST,
     "NVIDIA T4 datasheet (65 TFLOPS FP16 tensor at the 1590 MHz boost clock, "
     "8.1 FP32, 16 GB GDDR6 320 GB/s, PCIe3 x16); node = AWS g4dn.12xlarge "
     "(4 x T4, 50 Gb/s); board power: T4 datasheet 70 W.  Power-limited: "
     "cuBLAS fp16 4096^3 GEMMs sustain ~24 TFLOPS under the 70 W cap (NVIDIA "
     "developer forum 'About GPU peak performance', 2023; Jia et al. 2019, "
     "'Dissecting the NVidia Turing T4 GPU via Microbenchmarking', "
     "throttling): 37% of peak, i.e. ~0.43 of the boost clock at cuBLAS's "
     "~85% steady-clock efficiency; no P2P between g4dn's T4s (separate CPU "
     "root ports): NCCL goes through host memory (SHM); no BF16: fp16 with "
     "dynamic loss scaling (evaluate.c's unscale/inf-check pass)"},
    {"A10G", GEN_AMPERE, PEAKS(31.2, 62.5, 125, 125, 0, 0),
     24 * GIB, USABLE(22.1), 600 * GB, 31.5 * GB, 12.5 * GBIT, 8, 8, 300, 1.0, INTRA_PCIE_HOST,
     "cost-model.md (~125 dense BF16, the A10 datasheet figure; AWS's A10G "
     "clocks lower: calibrate); 24 GB GDDR6 600 GB/s, PCIe4 x16, no NVLink and "
     "no P2P assumed (collectives through host memory; intra_node_link in the "
     "cluster file overrides); node = AWS g5.48xlarge (8 x A10G, 100 Gb/s); "
     "board power: nvidia-smi power limit on AWS g5, 300 W (A10 datasheet: 150 W)"},
    {"A100-SXM-40GB", GEN_AMPERE, PEAKS(19.5, 156, 312, 312, 0, 0),
     40 * GIB, USABLE(39.39), 1555 * GB, 300 * GB, 200 * GBIT, 8, 8, 400, 1.0, INTRA_FABRIC,
     "NVIDIA A100 datasheet (312 dense BF16/FP16, 156 TF32, 19.5 FP32, "
     "1555 GB/s HBM2, NVLink3 600 GB/s bidirectional); DGX A100 1 x 200 Gb/s HDR per GPU; "
     "board power: A100 SXM datasheet 400 W"},
    {"A100-SXM-80GB", GEN_AMPERE, PEAKS(19.5, 156, 312, 312, 0, 0),
     80 * GIB, USABLE(79.3), 2039 * GB, 300 * GB, 200 * GBIT, 8, 8, 400, 1.0, INTRA_FABRIC,
     "NVIDIA A100 datasheet (80GB SXM: 2039 GB/s HBM2e); cost-model.md "
     "(79.3 GiB visible); DGX A100 1 x 200 Gb/s HDR per GPU; "
     "board power: A100 SXM datasheet 400 W"},
    {"A100-PCIE-40GB", GEN_AMPERE, PEAKS(19.5, 156, 312, 312, 0, 0),
     40 * GIB, USABLE(39.39), 1555 * GB, 31.5 * GB, 200 * GBIT, 8, 8, 250, 1.0, INTRA_PCIE_P2P,
     "NVIDIA A100 datasheet (PCIe 40GB: 1555 GB/s, PCIe4 x16 ~31.5 GB/s one-way, "
     "P2P behind a PCIe switch assumed; NVLink bridges: set intra_node_link); "
     "board power: A100 PCIe 40GB datasheet 250 W"},
    {"A100-PCIE-80GB", GEN_AMPERE, PEAKS(19.5, 156, 312, 312, 0, 0),
     80 * GIB, USABLE(79.15), 1935 * GB, 31.5 * GB, 200 * GBIT, 8, 8, 300, 1.0, INTRA_PCIE_P2P,
     "NVIDIA A100 datasheet (PCIe 80GB: 1935 GB/s, PCIe4 x16, P2P assumed); "
     "cost-model.md; "
     "board power: A100 PCIe 80GB datasheet 300 W"},
    {"L40S", GEN_ADA, PEAKS(91.6, 183, 362, 362, 733, 0),
     48 * GIB, USABLE(44.4), 864 * GB, 31.5 * GB, 100 * GBIT, 8, 8, 350, 1.0, INTRA_PCIE_P2P,
     "NVIDIA L40S datasheet (dense: 362 BF16, 733 FP8, 183 TF32, 91.6 FP32; "
     "48 GB GDDR6 864 GB/s; PCIe4 x16, P2P assumed); NIC per GPU typical, "
     "override it; "
     "board power: L40S datasheet 350 W"},
    {"H100-SXM", GEN_HOPPER, PEAKS(67, 494.7, 989.4, 989.4, 1978.9, 0),
     80 * GIB, USABLE(79.19), 3350 * GB, 450 * GB, 400 * GBIT, 8, 8, 700, 1.0, INTRA_FABRIC,
     "NVIDIA H100 datasheet halved for dense (1979 sparse BF16 -> 989), 3.35 TB/s "
     "HBM3, NVLink4 900 GB/s bidirectional; DGX H100 1 x 400 Gb/s NDR per GPU; "
     "board power: H100 SXM datasheet up to 700 W"},
    {"H100-PCIE", GEN_HOPPER, PEAKS(51, 378, 756, 756, 1513, 0),
     80 * GIB, USABLE(79.19), 2000 * GB, 63 * GB, 400 * GBIT, 8, 8, 350, 1.0, INTRA_PCIE_P2P,
     "NVIDIA H100 PCIe datasheet halved for dense (756 BF16, 1513 FP8); "
     "2.0 TB/s HBM2e; PCIe5 x16 ~63 GB/s one-way, P2P assumed; "
     "board power: H100 PCIe datasheet 350 W"},
    {"H800-SXM", GEN_HOPPER, PEAKS(67, 494.7, 989.4, 989.4, 1978.9, 0),
     80 * GIB, USABLE(79.19), 3350 * GB, 200 * GB, 400 * GBIT, 8, 8, 700, 1.0, INTRA_FABRIC,
     "H100 SXM compute; export variant with NVLink 400 GB/s bidirectional "
     "(cost-model.md); 400 Gb/s IB per GPU (DeepSeek-V3 report); "
     "board power: as H100 SXM, 700 W"},
    {"H100-SXM-96GB-500W", GEN_HOPPER, PEAKS(67, 494.7, 989.4, 989.4, 1978.9, 0),
     96 * GIB, USABLE(95.0), 2400 * GB, 450 * GB, 400 * GBIT, 8, 8, 500, 1.0, INTRA_FABRIC,
     "cost-model.md: H100 SXM with 96 GB HBM2e at ~2.4 TB/s, power-capped at "
     "500 W (Meta Grand Teton); peaks are the nominal H100 SXM clocks, the cap "
     "lowers sustained clocks (calibrate); "
     "board power: power cap 500 W"},
    {"H200-SXM", GEN_HOPPER, PEAKS(67, 494.7, 989.4, 989.4, 1978.9, 0),
     141 * GIB, USABLE(139.8), 4800 * GB, 450 * GB, 400 * GBIT, 8, 8, 700, 1.0, INTRA_FABRIC,
     "NVIDIA H200 datasheet halved for dense; 141 GB HBM3e 4.8 TB/s "
     "(cost-model.md: ~139 GiB visible); DGX H200 1 x 400 Gb/s NDR per GPU; "
     "board power: H200 SXM datasheet up to 700 W"},
    {"B200", GEN_BLACKWELL, PEAKS(75, 1125, 2250, 2250, 4500, 9000),
     180 * GIB, USABLE(178.4), 8000 * GB, 900 * GB, 400 * GBIT, 8, 8, 1000, 1.0, INTRA_FABRIC,
     "NVIDIA HGX/DGX B200 datasheet per GPU (72 PF FP8 and 144 PF FP4 sparse "
     "per 8 GPUs -> 4.5 / 9 PF dense; 36 PF BF16 sparse -> 2.25 dense); 180 GB "
     "HBM3e 8 TB/s; NVLink5 1.8 TB/s bidirectional; 400 Gb/s ConnectX-7 per GPU; "
     "board power: HGX B200 1000 W per GPU"},
    {"B300", GEN_BLACKWELL_ULTRA, PEAKS(75, 1125, 2250, 2250, 4500, 13500),
     288 * GB, USABLE(268.0), 8000 * GB, 900 * GB, 800 * GBIT, 8, 8, 1100, 1.0, INTRA_FABRIC,
     "NVIDIA HGX/DGX B300 datasheet per GPU (36 PF BF16 and 72 PF FP8 sparse "
     "per 8 -> 2.25 / 4.5 dense; FP4 108 PF dense per 8 -> 13.5); 288 GB HBM3e "
     "8 TB/s; NVLink5; 800 Gb/s ConnectX-8 per GPU; "
     "board power: HGX B300 1100 W per GPU"},
    {"GB200", GEN_BLACKWELL, PEAKS(80, 1250, 2500, 2500, 5000, 10000),
     186 * GIB, USABLE(184.5), 8000 * GB, 900 * GB, 400 * GBIT, 4, 72, 1200, 1.0, INTRA_FABRIC,
     "NVIDIA GB200 NVL72 datasheet per GPU (/72: 360 PF BF16 and 720 PF FP8 "
     "sparse -> 2.5 / 5 PF dense, FP4 10 PF dense; 13.4 TB HBM3e -> 186 GB); "
     "cost-model.md; 4 GPUs per compute tray, 72 per NVLink domain; 400 Gb/s CX-7; "
     "board power: GB200 NVL72 ~1200 W per GPU"},
    {"GB300", GEN_BLACKWELL_ULTRA, PEAKS(80, 1250, 2500, 2500, 5000, 15000),
     288 * GB, USABLE(268.0), 8000 * GB, 900 * GB, 800 * GBIT, 4, 72, 1400, 1.0, INTRA_FABRIC,
     "NVIDIA GB300 NVL72 datasheet per GPU (/72: 360 PF BF16 and 720 PF FP8 "
     "sparse -> 2.5 / 5 PF dense; 1080 PF FP4 dense -> 15 PF); 288 GB HBM3e "
     "8 TB/s; 4 GPUs per tray, 72 per NVLink domain; 800 Gb/s ConnectX-8 per GPU; "
     "board power: GB300 NVL72 ~1400 W per GPU"},
    {"MI250X", GEN_CDNA2, PEAKS(95.7, 0, 383, 383, 0, 0),
     128 * GIB, USABLE(127.98), 3276.8 * GB, 200 * GB, 200 * GBIT, 4, 4, 560, 1.0, INTRA_FABRIC,
     "AMD Instinct MI250X datasheet (one package = 2 GCDs: 383 TFLOPS "
     "BF16/FP16 matrix, 95.7 FP32 matrix, 128 GB HBM2e 3.2768 TB/s); Frontier "
     "node: 4 packages, 4 x 200 Gb/s Slingshot; xGMI aggregate approximate; "
     "board power: MI250X datasheet 560 W peak"},
    {"MI250X-GCD", GEN_CDNA2, PEAKS(47.85, 0, 191.5, 191.5, 0, 0),
     64 * GIB, USABLE(63.98), 1638.4 * GB, 100 * GB, 100 * GBIT, 8, 8, 280, 1.0, INTRA_FABRIC,
     "half an MI250X: one GCD, as ROCm and the frameworks see it (Frontier: "
     "8 GCDs per node); "
     "board power: half an MI250X"},
    {"MI300X", GEN_CDNA3, PEAKS(163.4, 653.7, 1307.4, 1307.4, 2614.9, 0),
     192 * GIB, USABLE(191.5), 5300 * GB, 448 * GB, 400 * GBIT, 8, 8, 750, 1.0, INTRA_FABRIC,
     "AMD Instinct MI300X datasheet (dense: 1307.4 BF16, 2614.9 FP8, 653.7 "
     "TF32, 163.4 FP32; 192 GB HBM3 5.3 TB/s; xGMI 7 links x 64 GB/s one-way); "
     "board power: MI300X datasheet 750 W"},
    {"MI325X", GEN_CDNA3, PEAKS(163.4, 653.7, 1307.4, 1307.4, 2614.9, 0),
     256 * GIB, USABLE(255.5), 6000 * GB, 448 * GB, 400 * GBIT, 8, 8, 1000, 1.0, INTRA_FABRIC,
     "AMD Instinct MI325X datasheet (MI300X compute; 256 GB HBM3E 6 TB/s; "
     "xGMI 7 x 64 GB/s); "
     "board power: MI325X datasheet 1000 W"},
};

#define CATALOG_N (sizeof k_catalog / sizeof k_catalog[0])

/* Other spellings people use for a row. */
static const struct {
    const char *alias, *name;
} k_aliases[] = {
    {"V100", "V100-SXM2-32GB"},        {"V100-16GB", "V100-SXM2-16GB"},
    {"V100-32GB", "V100-SXM2-32GB"},   {"V100-SXM2", "V100-SXM2-32GB"},
    {"A100", "A100-SXM-80GB"},         {"A100-40GB", "A100-SXM-40GB"},
    {"A100-80GB", "A100-SXM-80GB"},    {"A100-SXM4-40GB", "A100-SXM-40GB"},
    {"A100-SXM4-80GB", "A100-SXM-80GB"}, {"A100-PCIE", "A100-PCIE-80GB"},
    {"H100", "H100-SXM"},              {"H100-SXM5", "H100-SXM"},
    {"H100-80GB", "H100-SXM"},         {"H100-SXM5-80GB", "H100-SXM"},
    {"H800", "H800-SXM"},              {"H200", "H200-SXM"},
    {"H100-96GB", "H100-SXM-96GB-500W"},
};

#define ALIASES_N (sizeof k_aliases / sizeof k_aliases[0])

const gpu_spec *catalog_find(const char *name)
{
    size_t i;
    if (name == NULL)
        return NULL;
    for (i = 0; i < CATALOG_N; i++)
        if (text_equal_nocase(name, k_catalog[i].name))
            return &k_catalog[i];
    for (i = 0; i < ALIASES_N; i++)
        if (text_equal_nocase(name, k_aliases[i].alias))
            return catalog_find(k_aliases[i].name);
    return NULL;
}

size_t catalog_count(void)
{
    return CATALOG_N;
}

const gpu_spec *catalog_at(size_t i)
{
    return i < CATALOG_N ? &k_catalog[i] : NULL;
}

const char *gpu_generation_name(gpu_generation gen)
{
    static const char *const names[GEN_COUNT] = {
        "volta", "turing", "ampere", "ada", "hopper", "blackwell",
        "blackwell-ultra", "cdna2", "cdna3"};
    return (unsigned)gen < GEN_COUNT ? names[gen] : "unknown";
}

const char *gpu_intra_link_name(gpu_intra_link l)
{
    static const char *const names[INTRA_LINK_COUNT] = {"fabric", "pcie-p2p", "pcie-host"};
    return (unsigned)l < INTRA_LINK_COUNT ? names[l] : "unknown";
}

const char *peak_format_name(peak_format f)
{
    static const char *const names[PEAK_COUNT] = {"fp32", "tf32", "bf16", "fp16",
                                                  "fp8", "fp4"};
    return (unsigned)f < PEAK_COUNT ? names[f] : "unknown";
}
