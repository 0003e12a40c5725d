/* test_catalog.c: the accelerator catalog against vendor datasheet figures
 * (dense, no sparsity), its invariants, names and aliases, and every GPU name
 * used by ../shared/validation/published-runs.json. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "inputs/catalog.h"
#include "testutil.h"

#define T 1e12
#define GIB 1073741824.0

static const gpu_spec *must_find(const char *name)
{
    const gpu_spec *g = catalog_find(name);
    ck_assert_msg(g != NULL, "catalog has no '%s'", name);
    return g;
}

START_TEST(validation_names_resolve)
{
    static const char *const names[] = {"V100-SXM2-32GB", "A100-SXM-40GB", "A100-SXM-80GB",
                                        "H100-SXM", "H800-SXM", "H100-SXM-96GB-500W", "B200",
                                        "B300", "GB200", "GB300"};
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        ck_assert_str_eq(must_find(names[i])->name, names[i]);
}
END_TEST

START_TEST(issue_list_present)
{
    static const char *const names[] = {"V100-SXM2-16GB", "A100-PCIE-40GB", "A100-PCIE-80GB",
                                        "H100-PCIE", "H200-SXM", "L40S", "A10G", "T4",
                                        "MI250X", "MI300X", "MI325X"};
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        must_find(names[i]);
}
END_TEST

/* Dense peaks: the vendor's sparse headline halved where it includes 2:4. */
START_TEST(dense_peaks)
{
    const gpu_spec *h100 = must_find("H100-SXM"), *a100 = must_find("A100-SXM-80GB");
    const gpu_spec *v100 = must_find("V100-SXM2-32GB"), *b200 = must_find("B200");
    const gpu_spec *gb200 = must_find("GB200"), *mi300 = must_find("MI300X");
    const gpu_spec *gb300 = must_find("GB300"), *b300 = must_find("B300");
    ck_assert_rel(h100->peak_flops[PEAK_BF16], 1979 * T / 2, 0.001);   /* 989 */
    ck_assert_rel(h100->peak_flops[PEAK_FP8], 3958 * T / 2, 0.001);    /* 1979 */
    ck_assert(h100->peak_flops[PEAK_FP4] == 0);
    ck_assert_rel(a100->peak_flops[PEAK_BF16], 312 * T, 1e-9);
    ck_assert_rel(a100->peak_flops[PEAK_TF32], 156 * T, 1e-9);
    ck_assert(a100->peak_flops[PEAK_FP8] == 0);
    ck_assert_rel(v100->peak_flops[PEAK_FP16], 125 * T, 1e-9);
    ck_assert(v100->peak_flops[PEAK_BF16] == 0);                      /* no BF16 on Volta */
    ck_assert_rel(b200->peak_flops[PEAK_BF16], 2250 * T, 1e-9);
    ck_assert_rel(b200->peak_flops[PEAK_FP8], 4500 * T, 1e-9);
    ck_assert_rel(gb200->peak_flops[PEAK_BF16], 2500 * T, 1e-9);
    ck_assert_rel(gb200->peak_flops[PEAK_FP8], 5000 * T, 1e-9);
    ck_assert_rel(b300->peak_flops[PEAK_FP8], 4500 * T, 1e-9);
    ck_assert_rel(gb300->peak_flops[PEAK_FP4], 15000 * T, 1e-9);
    ck_assert_rel(mi300->peak_flops[PEAK_BF16], 1307.4 * T, 1e-9);
    ck_assert_rel(must_find("T4")->peak_flops[PEAK_FP16], 65 * T, 1e-9);
    ck_assert_rel(must_find("H100-PCIE")->peak_flops[PEAK_BF16], 756 * T, 1e-9);
}
END_TEST

START_TEST(memory_and_links)
{
    const gpu_spec *h100 = must_find("H100-SXM"), *a100 = must_find("A100-SXM-80GB");
    const gpu_spec *h800 = must_find("H800-SXM"), *gb200 = must_find("GB200");
    /* A100-80GB shows 79.3 GiB; usable keeps 2 GiB back (cost-model.md) */
    ck_assert_rel(a100->usable_mem_bytes, 77.3 * GIB, 1e-9);
    /* datasheet board power: H100 SXM up to 700 W, A100 SXM 400 W */
    ck_assert_rel(h100->board_power_w, 700, 1e-12);
    ck_assert_rel(a100->board_power_w, 400, 1e-12);
    ck_assert_rel(a100->hbm_bytes_per_s, 2039e9, 1e-9);
    ck_assert_rel(h100->hbm_bytes_per_s, 3350e9, 1e-9);
    ck_assert_rel(h100->intra_node_bytes_per_s, 450e9, 1e-9);   /* 900 GB/s bidirectional */
    ck_assert_rel(h100->inter_node_bytes_per_s, 400e9 / 8, 1e-9);
    ck_assert_rel(a100->inter_node_bytes_per_s, 200e9 / 8, 1e-9);
    ck_assert_rel(h800->intra_node_bytes_per_s, 200e9, 1e-9);
    ck_assert_int_eq(gb200->gpus_per_node, 4);
    ck_assert_int_eq(gb200->nvlink_domain, 72);
    ck_assert_int_eq(must_find("V100-SXM2-32GB")->gpus_per_node, 16);   /* DGX-2 */
}
END_TEST

START_TEST(invariants)
{
    size_t i, j, n = catalog_count();
    ck_assert_uint_ge(n, 21);
    ck_assert_ptr_null(catalog_at(n));
    for (i = 0; i < n; i++) {
        const gpu_spec *g = catalog_at(i);
        int f, any = 0;
        ck_assert_msg(g->usable_mem_bytes > 0 && g->usable_mem_bytes <= g->mem_bytes,
                      "%s: usable memory", g->name);
        ck_assert_msg(g->hbm_bytes_per_s > 0 && g->intra_node_bytes_per_s > 0 &&
                          g->inter_node_bytes_per_s > 0, "%s: bandwidths", g->name);
        ck_assert_msg(g->gpus_per_node >= 1 && g->nvlink_domain >= 1, "%s: layout", g->name);
        ck_assert_msg(g->source != NULL && strlen(g->source) > 10, "%s: source", g->name);
        /* board power, for energy: 70 W (T4) .. 1400 W (GB300), source given */
        ck_assert_msg(g->board_power_w >= 70 && g->board_power_w <= 1400 &&
                          strstr(g->source, "board power") != NULL, "%s: power", g->name);
        ck_assert_msg(strcmp(gpu_generation_name(g->gen), "unknown") != 0, "%s: gen", g->name);
        /* a sustained-clock fraction in (0, 1]; PCIe-only rows say how their
         * GPUs reach each other, and a GPU fabric is faster than PCIe x16 */
        ck_assert_msg(g->clock_fraction > 0 && g->clock_fraction <= 1, "%s: clock", g->name);
        ck_assert_msg(strcmp(gpu_intra_link_name(g->intra_link), "unknown") != 0, "%s: link",
                      g->name);
        ck_assert_msg((g->intra_link == INTRA_FABRIC) == (g->intra_node_bytes_per_s > 64e9),
                      "%s: intra link %s at %g B/s", g->name, gpu_intra_link_name(g->intra_link),
                      g->intra_node_bytes_per_s);
        for (f = 0; f < PEAK_COUNT; f++) {
            ck_assert_msg(isfinite(g->peak_flops[f]) && g->peak_flops[f] >= 0, "%s", g->name);
            any |= g->peak_flops[f] > 0;
        }
        ck_assert(any);
        /* fp8 is 2x bf16 where present (L40S: 733 vs 362, within 2%) */
        if (g->peak_flops[PEAK_FP8] > 0 && g->peak_flops[PEAK_BF16] > 0)
            ck_assert_rel(g->peak_flops[PEAK_FP8], 2 * g->peak_flops[PEAK_BF16], 0.02);
        for (j = 0; j < i; j++)
            ck_assert_msg(strcmp(catalog_at(j)->name, g->name) != 0, "duplicate %s", g->name);
        ck_assert_ptr_eq(catalog_find(g->name), g);
    }
}
END_TEST

START_TEST(aliases_and_case)
{
    ck_assert_ptr_eq(catalog_find("h100"), catalog_find("H100-SXM"));
    ck_assert_ptr_eq(catalog_find("H100"), catalog_find("H100-SXM"));
    ck_assert_ptr_eq(catalog_find("a100-sxm-80gb"), catalog_find("A100-SXM-80GB"));
    ck_assert_ptr_eq(catalog_find("A100-40GB"), catalog_find("A100-SXM-40GB"));
    ck_assert_ptr_eq(catalog_find("H200"), catalog_find("H200-SXM"));
    ck_assert_ptr_null(catalog_find("H100-SXX"));
    ck_assert_ptr_null(catalog_find(""));
    ck_assert_ptr_null(catalog_find(NULL));
    ck_assert_str_eq(peak_format_name(PEAK_FP8), "fp8");
    ck_assert_str_eq(gpu_generation_name(GEN_BLACKWELL_ULTRA), "blackwell-ultra");
}
END_TEST

/* Every "gpu" of the validation corpus names a catalog row. */
START_TEST(published_runs_gpus)
{
    const char *dir = tu_shared_dir();
    char path[1024];
    json_t *root, *runs, *run;
    json_error_t jerr;
    size_t i;
    if (dir == NULL) {
        tu_skip("test_catalog published_runs_gpus", "../shared absent");
        return;
    }
    snprintf(path, sizeof path, "%s/validation/published-runs.json", dir);
    root = json_load_file(path, 0, &jerr);
    if (root == NULL) {
        tu_skip("test_catalog published_runs_gpus",
                "../shared/validation/published-runs.json unreadable");
        return;
    }
    runs = json_object_get(root, "runs");
    ck_assert(json_is_array(runs));
    json_array_foreach(runs, i, run) {
        const char *gpu = json_string_value(json_object_get(run, "gpu"));
        ck_assert_msg(gpu != NULL && catalog_find(gpu) != NULL, "run %zu: gpu '%s'", i,
                      gpu ? gpu : "(none)");
        ck_assert_str_eq(catalog_find(gpu)->name, gpu);
    }
    json_decref(root);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("catalog");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, validation_names_resolve);
    tcase_add_test(tc, issue_list_present);
    tcase_add_test(tc, dense_peaks);
    tcase_add_test(tc, memory_and_links);
    tcase_add_test(tc, invariants);
    tcase_add_test(tc, aliases_and_case);
    tcase_add_test(tc, published_runs_gpus);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
