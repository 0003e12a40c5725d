/* test_cluster_load.c: the YAML cluster loader and the cluster helpers.
 * Expected figures by hand: 400 Gb/s per GPU = 50e9 B/s; AMP's g4dn.12xlarge
 * has 50 Gb/s per instance of 4 T4, so 6.25e9 / 4 = 1.5625e9 B/s per GPU;
 * p3.8xlarge 10 Gb/s per 4 GPUs = 312.5e6 B/s per GPU. */
#include <math.h>
#include <string.h>
#include "inputs/cluster.h"
#include "testutil.h"

static cluster *load(const char *path)
{
    planner_error err = PLANNER_ERROR_INIT;
    cluster *c = NULL;
    char buf[1400];
    planner_status rc = cluster_load(&c, path, &err);
    error_format(&err, buf, sizeof buf);
    ck_assert_msg(rc == PLANNER_OK, "%s: %s", path, buf);
    ck_assert_ptr_nonnull(c);
    return c;
}

static cluster *load_text(const char *text)
{
    planner_error err = PLANNER_ERROR_INIT;
    cluster *c = NULL;
    char buf[1400];
    planner_status rc = cluster_load_buffer(&c, text, strlen(text), "t.yaml", &err);
    error_format(&err, buf, sizeof buf);
    ck_assert_msg(rc == PLANNER_OK, "%s", buf);
    return c;
}

static void load_bad(const char *text, const char *expect)
{
    planner_error err = PLANNER_ERROR_INIT;
    cluster *c = NULL;
    char buf[1400];
    ck_assert_int_eq(cluster_load_buffer(&c, text, strlen(text), "t.yaml", &err),
                     PLANNER_E_INPUT);
    ck_assert_ptr_null(c);
    error_format(&err, buf, sizeof buf);
    ck_assert_str_eq(buf, expect);
}

START_TEST(every_cluster_loads)
{
    static const struct {
        const char *file;
        int gpus, groups;
    } cases[] = {
        {"clusters/h100x512.yaml", 512, 1},     {"clusters/h100x16384.yaml", 16384, 1},
        {"clusters/a100x1024.yaml", 1024, 1},   {"clusters/h200x64.yaml", 64, 1},
        {"clusters/amp-4xg4dn.yaml", 16, 1},    {"clusters/amp-3xp3-1xg4dn.yaml", 16, 2},
        {"clusters/h100-a100-mixed.yaml", 512, 2}, {"clusters/gb200x576.yaml", 576, 1}};
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cluster *c = load(cases[i].file);
        ck_assert_int_eq(cluster_total_gpus(c), cases[i].gpus);
        ck_assert_int_eq(c->n_groups, cases[i].groups);
        cluster_free(c);
    }
}
END_TEST

START_TEST(h100x512)
{
    cluster *c = load("clusters/h100x512.yaml");
    const node_group *g = &c->group[0];
    double bw, lat;
    ck_assert_str_eq(c->name, "h100x512");
    ck_assert_str_eq(g->gpu.name, "H100-SXM");
    ck_assert_int_eq(g->nodes, 64);
    ck_assert_int_eq(g->gpus_per_node, 8);
    ck_assert_int_eq(group_total_gpus(g), 512);
    ck_assert_rel(g->intra_bytes_per_s, 450e9, 1e-12);
    ck_assert_rel(g->inter_bytes_per_s, 50e9, 1e-12);
    ck_assert_rel(g->intra_latency_s, 3.4e-6, 1e-12);
    ck_assert_rel(g->inter_latency_s, 14e-6, 1e-12);
    ck_assert_rel(g->gpu.peak_flops[PEAK_BF16], 989.4e12, 1e-12);
    cluster_link_between(c, 0, 0, &bw, &lat);
    ck_assert_rel(bw, 50e9, 1e-12);
    cluster_free(c);
}
END_TEST

START_TEST(amp_clusters)
{
    cluster *c = load("clusters/amp-4xg4dn.yaml");
    double bw, lat;
    ck_assert_str_eq(c->group[0].gpu.name, "T4");
    ck_assert_rel(c->group[0].inter_bytes_per_s, 50e9 / 8 / 4, 1e-12);
    cluster_free(c);
    c = load("clusters/amp-3xp3-1xg4dn.yaml");
    ck_assert_str_eq(c->group[0].gpu.name, "V100-SXM2-16GB");
    ck_assert_int_eq(group_total_gpus(&c->group[0]), 12);
    ck_assert_rel(c->group[0].inter_bytes_per_s, 10e9 / 8 / 4, 1e-12);
    ck_assert_rel(c->group[1].inter_bytes_per_s, 50e9 / 8 / 4, 1e-12);
    ck_assert_int_eq(c->n_links, 1);
    cluster_link_between(c, 1, 0, &bw, &lat);
    ck_assert_rel(bw, 2.5e9 / 8, 1e-12);
    ck_assert_rel(lat, 30e-6, 1e-12);
    cluster_free(c);
}
END_TEST

START_TEST(defaults_overrides_links)
{
    cluster *c = load_text("name: t\n"
                           "groups:\n"
                           "  - name: a\n    gpu: h100\n    nodes: 2\n"
                           "    memory: 96GiB\n    peak_bf16: 800TFLOPS\n    peak_fp8: 0TFLOPS\n"
                           "  - name: b\n    gpu: A100-SXM-80GB\n    nodes: 1\n"
                           "    inter_node_latency: 20us\n"
                           "  - name: c\n    gpu: GB200\n    nodes: 1\n    gpus_per_node: 2\n");
    const node_group *a = &c->group[0], *b = &c->group[1];
    const gpu_spec *h100 = catalog_find("H100-SXM");
    double bw, lat;
    /* catalog defaults */
    ck_assert_int_eq(a->gpus_per_node, 8);
    ck_assert_rel(a->inter_bytes_per_s, 50e9, 1e-12);
    ck_assert_rel(b->inter_bytes_per_s, 25e9, 1e-12);
    ck_assert_rel(a->intra_latency_s, 3.4e-6, 1e-12);
    /* overrides; usable memory keeps the catalog's reserve */
    ck_assert_rel(a->gpu.mem_bytes, 96.0 * 1073741824.0, 1e-12);
    ck_assert_rel(a->gpu.usable_mem_bytes,
                  96.0 * 1073741824.0 - (h100->mem_bytes - h100->usable_mem_bytes), 1e-12);
    ck_assert_rel(a->gpu.peak_flops[PEAK_BF16], 800e12, 1e-12);
    ck_assert(a->gpu.peak_flops[PEAK_FP8] == 0);
    ck_assert_int_eq(c->group[2].gpu.nvlink_domain, 72);   /* NVL72 kept */
    /* no listed link: the slower bandwidth and the larger latency */
    cluster_link_between(c, 0, 1, &bw, &lat);
    ck_assert_rel(bw, 25e9, 1e-12);
    ck_assert_rel(lat, 20e-6, 1e-12);
    cluster_link_between(c, 0, 7, &bw, &lat);
    ck_assert(bw == 0 && lat == 0);
    ck_assert_int_eq(cluster_total_gpus(c), 16 + 8 + 2);
    cluster_free(c);
    cluster_free(NULL);
    ck_assert_int_eq(cluster_total_gpus(NULL), 0);
}
END_TEST

START_TEST(per_node_bandwidth)
{
    cluster *c = load_text("name: t\ngroups:\n  - gpu: H100-SXM\n    nodes: 4\n"
                           "    inter_node_bandwidth_per_node: 3200Gbps\n");
    ck_assert_str_eq(c->group[0].name, "group0");
    ck_assert_rel(c->group[0].inter_bytes_per_s, 3200e9 / 8 / 8, 1e-12);
    cluster_free(c);
}
END_TEST

START_TEST(errors_point_at_keys)
{
    load_bad("name: t\ngroups:\n  - name: a\n    gpu: H100-SXM\n    nodes: 1000000000\n",
             "planner: t.yaml:5:12: cluster.groups[0].nodes: must be at most 1048576, got "
             "1000000000");
    load_bad("name: t\ngroups:\n  - name: a\n    gpu: H100-SXM\n    nodes: 131073\n",
             "planner: t.yaml:5:12: cluster.groups[0].nodes: 131073 nodes x 8 GPUs is more "
             "than the limit of 1048576 GPUs");
    load_bad("name: t\ngroups:\n  - name: a\n    gpu: H100-SXM\n    nodes: 2\n"
             "    inter_node_bandwidth: 400Gbps\n    inter_node_bandwidth_per_node: 800Gbps\n",
             "planner: t.yaml:7:36: cluster.groups[0].inter_node_bandwidth_per_node: give "
             "inter_node_bandwidth (per GPU) or inter_node_bandwidth_per_node, not both");
    load_bad("name: t\ngroups:\n  - name: a\n    gpu: H100-SXM\n    nodes: 2\n"
             "  - name: a\n    gpu: H100-SXM\n    nodes: 2\n",
             "planner: t.yaml:6:11: cluster.groups[1].name: duplicate group name 'a'");
    load_bad("name: t\ngroups:\n  - name: a\n    gpu: H100-SXM\n    nodes: 2\n"
             "links:\n  - between: [a, a]\n    bandwidth: 1Gbps\n",
             "planner: t.yaml:7:14: cluster.links[0].between: names the same group twice");
    load_bad("name: t\ngroups: []\n",
             "planner: t.yaml:2:9: cluster.groups: must be a non-empty list of node groups");
    load_bad("- a\n- b\n",
             "planner: t.yaml:1:1: cluster: a cluster file must be a mapping with name and "
             "groups, got a list");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cluster_load");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, every_cluster_loads);
    tcase_add_test(tc, h100x512);
    tcase_add_test(tc, amp_clusters);
    tcase_add_test(tc, defaults_overrides_links);
    tcase_add_test(tc, per_node_bandwidth);
    tcase_add_test(tc, errors_point_at_keys);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
