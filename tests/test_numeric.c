/* test_numeric.c: numeric abuse, values at and past every limit.
 *
 * Each case is a model (our JSON) and a cluster (YAML) given inline, with
 * what must happen: the loader rejects the value with a positioned error
 * (exit 1 material), or the whole pipeline runs -- load, search, table and
 * JSON report, --show-inputs -- and ends with a plan or "no feasible plan",
 * where every figure printed is finite (no "nan" or "inf" anywhere in the
 * text), every recommended plan fits its GPUs' usable memory, and, under
 * `make sanitize`, UBSan sees no overflow and no bad float-to-int cast.
 *
 * JSON has no NaN or Infinity literal (jansson rejects them); the closest is
 * a number that overflows a double (1e999), which must be an error.  YAML has
 * .nan and .inf; the unit parser must refuse them. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "base/alloc.h"
#include "inputs/cluster.h"
#include "schedule/evaluate.h"
#include "inputs/model.h"
#include "out/report.h"
#include "search/search.h"
#include "out/show_inputs.h"
#include "testutil.h"

#define MODEL(fields) "{\"name\": \"t\", " fields "}"
#define BASE_MODEL_FIELDS                                                        \
    "\"hidden\": 1024, \"heads\": 16, \"ffn_hidden\": 4096, \"vocab\": 32000, " \
    "\"seq_len\": 2048"

static const char k_gpu1[] =
    "groups:\n  - name: g\n    gpu: H100-SXM\n    nodes: 1\n    gpus_per_node: 1\n";
static const char k_dgx8[] =
    "groups:\n  - name: g\n    gpu: H100-SXM\n    nodes: 1\n    gpus_per_node: 8\n";

typedef enum expect { REJECT_MODEL, REJECT_CLUSTER, PLAN, PLAN_OR_INFEASIBLE, INFEASIBLE } expect;

typedef struct numeric_case {
    const char *what;
    const char *model_json;
    const char *cluster_yaml;
    int gbs, seq;          /* overrides, 0 = the file's */
    expect want;
} numeric_case;

static const numeric_case k_cases[] = {
    /* The smallest model the schema allows: one layer, vocab 1, seq 1. */
    {"one layer, vocab 1, seq 1",
     MODEL("\"layers\": 1, \"hidden\": 64, \"heads\": 1, \"ffn_hidden\": 256, \"vocab\": 1, "
           "\"seq_len\": 1"), k_gpu1, 1, 1, PLAN},
    {"one layer, vocab 1, seq 1, gbs 1 on 8 GPUs: no layout uses them all",
     MODEL("\"layers\": 1, \"hidden\": 64, \"heads\": 1, \"ffn_hidden\": 256, \"vocab\": 1, "
           "\"seq_len\": 1"), k_dgx8, 1, 1, INFEASIBLE},
    {"one layer, gbs 1 on one GPU", MODEL("\"layers\": 1, " BASE_MODEL_FIELDS), k_gpu1, 1, 0,
     PLAN},
    {"seq 1 override", MODEL("\"layers\": 2, " BASE_MODEL_FIELDS), k_dgx8, 8, 1, PLAN},
    {"gbs 1e8", MODEL("\"layers\": 2, " BASE_MODEL_FIELDS), k_dgx8, 100000000, 0, PLAN},
    /* Zero, negative, fractional, overflowing, absurd. */
    {"zero layers", MODEL("\"layers\": 0, " BASE_MODEL_FIELDS), k_dgx8, 0, 0, REJECT_MODEL},
    {"negative layers", MODEL("\"layers\": -1, " BASE_MODEL_FIELDS), k_dgx8, 0, 0,
     REJECT_MODEL},
    {"layers past the limit", MODEL("\"layers\": 4097, " BASE_MODEL_FIELDS), k_dgx8, 0, 0,
     REJECT_MODEL},
    {"layers 2^31", MODEL("\"layers\": 2147483648, " BASE_MODEL_FIELDS), k_dgx8, 0, 0,
     REJECT_MODEL},
    {"layers 2^63", MODEL("\"layers\": 9223372036854775808, " BASE_MODEL_FIELDS), k_dgx8, 0,
     0, REJECT_MODEL},
    {"hidden 1e999", MODEL("\"layers\": 2, \"hidden\": 1e999, \"heads\": 16, "
                           "\"ffn_hidden\": 4096, \"vocab\": 32000, \"seq_len\": 2048"),
     k_dgx8, 0, 0, REJECT_MODEL},
    {"hidden fractional", MODEL("\"layers\": 2, \"hidden\": 1024.5, \"heads\": 16, "
                                "\"ffn_hidden\": 4096, \"vocab\": 32000, \"seq_len\": 2048"),
     k_dgx8, 0, 0, REJECT_MODEL},
    {"hidden zero", MODEL("\"layers\": 2, \"hidden\": 0, \"heads\": 16, \"ffn_hidden\": 4096, "
                          "\"vocab\": 32000, \"seq_len\": 2048"), k_dgx8, 0, 0, REJECT_MODEL},
    {"vocab negative", MODEL("\"layers\": 2, \"hidden\": 1024, \"heads\": 16, "
                             "\"ffn_hidden\": 4096, \"vocab\": -5, \"seq_len\": 2048"),
     k_dgx8, 0, 0, REJECT_MODEL},
    {"seq_len zero", MODEL("\"layers\": 2, \"hidden\": 1024, \"heads\": 16, "
                           "\"ffn_hidden\": 4096, \"vocab\": 32000, \"seq_len\": 0"),
     k_dgx8, 0, 0, REJECT_MODEL},
    {"global_batch negative", MODEL("\"layers\": 2, " BASE_MODEL_FIELDS
                                    ", \"global_batch\": -1"), k_dgx8, 0, 0, REJECT_MODEL},
    /* The largest model every limit allows: must end as "does not fit",
     * with finite figures and no integer overflow on the way. */
    {"every size at its limit",
     MODEL("\"layers\": 4096, \"hidden\": 1000000, \"heads\": 1000, \"ffn_hidden\": 10000000, "
           "\"vocab\": 10000000, \"seq_len\": 16777216"), k_dgx8, 0, 0, INFEASIBLE},
    {"huge vocab, tiny rest",
     MODEL("\"layers\": 1, \"hidden\": 64, \"heads\": 1, \"ffn_hidden\": 256, "
           "\"vocab\": 10000000, \"seq_len\": 16"), k_dgx8, 8, 0, PLAN},
    {"MoE at the expert limit",
     MODEL("\"layers\": 2, " BASE_MODEL_FIELDS ", \"moe\": {\"experts\": 65536, \"top_k\": 1, "
           "\"expert_ffn\": 64}"), k_dgx8, 8, 0, PLAN_OR_INFEASIBLE},
    /* Clusters: 10^7 GPUs, the GPU limit exactly, zero, non-finite units. */
    {"10^7 GPUs", MODEL("\"layers\": 2, " BASE_MODEL_FIELDS),
     "groups:\n  - name: g\n    gpu: H100\n    nodes: 1250000\n    gpus_per_node: 8\n", 0, 0,
     REJECT_CLUSTER},
    {"2^20 GPUs (the limit), gbs 1024: no layout uses them all",
     MODEL("\"layers\": 2, " BASE_MODEL_FIELDS),
     "groups:\n  - name: g\n    gpu: H100\n    nodes: 131072\n    gpus_per_node: 8\n", 0, 0,
     INFEASIBLE},
    {"2^20 GPUs (the limit), gbs 131072", MODEL("\"layers\": 2, " BASE_MODEL_FIELDS),
     "groups:\n  - name: g\n    gpu: H100\n    nodes: 131072\n    gpus_per_node: 8\n", 131072,
     0, PLAN},
    {"zero nodes", MODEL("\"layers\": 2, " BASE_MODEL_FIELDS),
     "groups:\n  - name: g\n    gpu: H100\n    nodes: 0\n    gpus_per_node: 8\n", 0, 0,
     REJECT_CLUSTER},
    {"negative GPUs per node", MODEL("\"layers\": 2, " BASE_MODEL_FIELDS),
     "groups:\n  - name: g\n    gpu: H100\n    nodes: 1\n    gpus_per_node: -8\n", 0, 0,
     REJECT_CLUSTER},
    {"bandwidth .inf", MODEL("\"layers\": 2, " BASE_MODEL_FIELDS),
     "groups:\n  - name: g\n    gpu: H100\n    nodes: 2\n    inter_node_bandwidth: .inf\n",
     0, 0, REJECT_CLUSTER},
    {"bandwidth .nan", MODEL("\"layers\": 2, " BASE_MODEL_FIELDS),
     "groups:\n  - name: g\n    gpu: H100\n    nodes: 2\n    inter_node_bandwidth: .nan\n",
     0, 0, REJECT_CLUSTER},
    {"bandwidth 1e999Gbps", MODEL("\"layers\": 2, " BASE_MODEL_FIELDS),
     "groups:\n  - name: g\n    gpu: H100\n    nodes: 2\n    inter_node_bandwidth: 1e999Gbps\n",
     0, 0, REJECT_CLUSTER},
    {"bandwidth zero", MODEL("\"layers\": 2, " BASE_MODEL_FIELDS),
     "groups:\n  - name: g\n    gpu: H100\n    nodes: 2\n    inter_node_bandwidth: 0Gbps\n",
     0, 0, REJECT_CLUSTER},
    {"bandwidth 1e-300 bps", MODEL("\"layers\": 2, " BASE_MODEL_FIELDS),
     "groups:\n  - name: g\n    gpu: H100\n    nodes: 2\n    inter_node_bandwidth: 1e-300bps\n"
     "    intra_node_bandwidth: 1e-300bps\n", 8, 0, REJECT_CLUSTER},
    {"latency 1e300 s", MODEL("\"layers\": 2, " BASE_MODEL_FIELDS),
     "groups:\n  - name: g\n    gpu: H100\n    nodes: 2\n    inter_node_latency: 1e300s\n"
     "    intra_node_latency: 1e300s\n", 8, 0, REJECT_CLUSTER},
    {"peak 1e-300 FLOP/s", MODEL("\"layers\": 2, " BASE_MODEL_FIELDS),
     "groups:\n  - name: g\n    gpu: H100\n    nodes: 1\n    peak_bf16: 1e-300FLOPS\n", 8, 0,
     REJECT_CLUSTER},
    {"memory 1 byte", MODEL("\"layers\": 2, " BASE_MODEL_FIELDS),
     "groups:\n  - name: g\n    gpu: H100\n    nodes: 1\n    memory: 1B\n"
     "    usable_memory: 1B\n", 8, 0, REJECT_CLUSTER},
    {"memory 1e300 bytes", MODEL("\"layers\": 2, " BASE_MODEL_FIELDS),
     "groups:\n  - name: g\n    gpu: H100\n    nodes: 1\n    memory: 1e300B\n"
     "    usable_memory: 1e300B\n", 8, 0, REJECT_CLUSTER},
    /* The plausible ranges' edges (cluster_load.c k_ranges) are accepted and
     * plan with finite figures: 10 MB/s links with 10 ms latency, 1 GiB of
     * memory, a 100 GFLOP/s peak and 10 GB/s of HBM. */
    {"slowest plausible hardware", MODEL("\"layers\": 2, " BASE_MODEL_FIELDS),
     "groups:\n  - name: g\n    gpu: H100\n    nodes: 2\n    inter_node_bandwidth: 10MB/s\n"
     "    intra_node_bandwidth: 10MB/s\n    inter_node_latency: 10ms\n"
     "    intra_node_latency: 10ms\n    peak_bf16: 100GFLOPS\n    hbm_bandwidth: 10GB/s\n",
     8, 0, PLAN_OR_INFEASIBLE},
    {"fastest plausible hardware", MODEL("\"layers\": 2, " BASE_MODEL_FIELDS),
     "groups:\n  - name: g\n    gpu: H100\n    nodes: 2\n    inter_node_bandwidth: 100TB/s\n"
     "    intra_node_bandwidth: 100TB/s\n    inter_node_latency: 1ns\n"
     "    intra_node_latency: 1ns\n    peak_bf16: 100PFLOPS\n    hbm_bandwidth: 1000TB/s\n"
     "    memory: 16TiB\n    usable_memory: 16TiB\n", 8, 0, PLAN},
    {"bandwidth just below the range", MODEL("\"layers\": 2, " BASE_MODEL_FIELDS),
     "groups:\n  - name: g\n    gpu: H100\n    nodes: 2\n    inter_node_bandwidth: 9.9MB/s\n",
     8, 0, REJECT_CLUSTER},
};

/* "nan" or "inf" as a word of its own (any case): never in the output. */
static const char *find_nonfinite(const char *s)
{
    for (const char *p = s; *p; p++) {
        if ((strncasecmp(p, "nan", 3) == 0 || strncasecmp(p, "inf", 3) == 0) &&
            (p == s || !isalpha((unsigned char)p[-1])) &&
            (!isalpha((unsigned char)p[3]) || strncasecmp(p, "infinity", 8) == 0))
            return p;
    }
    return NULL;
}

/* Runs `emit` into a memory buffer and checks the text. */
static void check_text(const char *what, const char *part, const char *text)
{
    const char *bad = find_nonfinite(text);
    ck_assert_msg(bad == NULL, "%s: %s prints a non-finite number: ...%.60s", what, part,
                  bad != NULL ? (bad - text > 30 ? bad - 30 : text) : "");
}

/* Output captured in memory: open_memstream sets buf and len at fclose. */
typedef struct capture {
    char *buf;
    size_t len;
} capture;

static FILE *capture_open(capture *cap)
{
    FILE *f;
    cap->buf = NULL;
    cap->len = 0;
    f = open_memstream(&cap->buf, &cap->len);
    ck_assert_ptr_nonnull(f);
    return f;
}

/* Closes the stream, checks the text, frees the buffer (malloc'd by libc). */
static void capture_check(capture *cap, FILE *f, const char *what, const char *part)
{
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_ptr_nonnull(cap->buf);
    check_text(what, part, cap->buf);
    free(cap->buf);
    cap->buf = NULL;
}

static void check_plan_figures(const char *what, const plan *pl)
{
    const evaluation *e = &pl->e;
    ck_assert_msg(isfinite(e->step_time_s) && e->step_time_s > 0 &&
                      isfinite(e->tokens_per_s) && e->tokens_per_s >= 0 &&
                      isfinite(e->tokens_per_s_per_gpu) && isfinite(e->tflops_per_gpu) &&
                      isfinite(e->mfu) && e->mfu >= 0 && e->mfu <= 1 &&
                      isfinite(e->peak_memory_bytes) && e->peak_memory_bytes > 0,
                  "%s: plan figures step %g tok/s %g mfu %g peak %g", what, e->step_time_s,
                  e->tokens_per_s, e->mfu, e->peak_memory_bytes);
    for (int i = 0; i < e->n_stages; i++) {
        const memory_breakdown *mb = &e->stage_memory[i];
        ck_assert_msg(isfinite(mb->total_bytes) && isfinite(mb->capacity_bytes) &&
                          isfinite(e->stage_fwd_s[i]) && isfinite(e->stage_bwd_s[i]),
                      "%s: stage %d: memory %g of %g, fwd %g bwd %g", what, i,
                      mb->total_bytes, mb->capacity_bytes, e->stage_fwd_s[i],
                      e->stage_bwd_s[i]);
        if (e->feasible)
            ck_assert_msg(mb->total_bytes <= mb->capacity_bytes,
                          "%s: a recommended plan's stage %d needs %g of %g bytes", what, i,
                          mb->total_bytes, mb->capacity_bytes);
    }
}

START_TEST(numeric_case_runs_clean)
{
    const numeric_case *tc = &k_cases[_i];
    planner_error err = PLANNER_ERROR_INIT;
    run_spec ov = {.seq_len = tc->seq, .global_batch = tc->gbs}, run;
    model *m = NULL;
    cluster *c = NULL;
    cost_params p;
    search_options o;
    search_result res;
    planner_status rc;
    FILE *f;
    capture cap;

    memset(&res, 0, sizeof res);
    rc = model_load_buffer(&m, &run, tc->model_json, strlen(tc->model_json), "m.json", &ov, &err);
    if (tc->want == REJECT_MODEL) {
        ck_assert_msg(rc == PLANNER_E_INPUT && m == NULL && err.line >= 1 && err.msg[0],
                      "%s: model accepted or badly rejected (status %d: %s)", tc->what,
                      (int)rc, err.msg);
        return;
    }
    ck_assert_msg(rc == PLANNER_OK, "%s: model rejected: %s", tc->what, err.msg);
    rc = cluster_load_buffer(&c, tc->cluster_yaml, strlen(tc->cluster_yaml), "c.yaml", &err);
    if (tc->want == REJECT_CLUSTER) {
        ck_assert_msg(rc == PLANNER_E_INPUT && c == NULL && err.line >= 1 && err.msg[0],
                      "%s: cluster accepted or badly rejected (status %d: %s)", tc->what,
                      (int)rc, err.msg);
        model_free(m);
        return;
    }
    ck_assert_msg(rc == PLANNER_OK, "%s: cluster rejected: %s", tc->what, err.msg);

    f = capture_open(&cap);
    show_inputs(f, m, &run, c);
    capture_check(&cap, f, tc->what, "--show-inputs");

    cost_params_default(&p);
    search_options_default(&o);
    o.top_n = 3;
    o.gbs = run.global_batch;
    o.seq_len = run.seq_len;
    rc = search_run(&res, m, c, &p, &o, &err);
    switch (tc->want) {
    case PLAN:
        ck_assert_msg(rc == PLANNER_OK, "%s: no plan (status %d: %s %s)", tc->what, (int)rc,
                      err.msg, res.advice);
        break;
    case INFEASIBLE:
        ck_assert_msg(rc == PLANNER_E_INFEASIBLE, "%s: status %d (expected no feasible plan)",
                      tc->what, (int)rc);
        break;
    default:
        ck_assert_msg(rc == PLANNER_OK || rc == PLANNER_E_INFEASIBLE, "%s: status %d: %s",
                      tc->what, (int)rc, err.msg);
        break;
    }
    if (rc == PLANNER_OK) {
        ck_assert_int_ge(res.n_top, 1);
        for (int i = 0; i < res.n_top; i++) {
            ck_assert_msg(res.top[i].e.feasible, "%s: plan %d recommended but infeasible",
                          tc->what, i);
            check_plan_figures(tc->what, &res.top[i]);
        }
        f = capture_open(&cap);
        report_table(f, m, c, &o, &res);
        capture_check(&cap, f, tc->what, "the table");
        f = capture_open(&cap);
        ck_assert_msg(report_json_write(f, m, c, &o, &res) == 0, "%s: JSON report failed",
                      tc->what);
        capture_check(&cap, f, tc->what, "the JSON report");
    } else {
        ck_assert_msg(res.advice[0] != '\0', "%s: no plan and no advice", tc->what);
        check_text(tc->what, "the advice", res.advice);
        if (res.have_miss)
            ck_assert_msg(isfinite(res.miss.e.peak_memory_bytes),
                          "%s: closest miss needs %g bytes", tc->what,
                          res.miss.e.peak_memory_bytes);
        f = capture_open(&cap);
        report_infeasible(f, m, c, &res);
        capture_check(&cap, f, tc->what, "the no-plan report");
    }
    search_result_free(&res);
    cluster_free(c);
    model_free(m);
}
END_TEST

START_TEST(nonfinite_detector)
{
    ck_assert_ptr_nonnull(find_nonfinite("step -nan s"));
    ck_assert_ptr_nonnull(find_nonfinite("{\"x\": inf}"));
    ck_assert_ptr_nonnull(find_nonfinite("NaN"));
    ck_assert_ptr_null(find_nonfinite("infeasible: information, nano, finance"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("numeric");
    TCase *tc = tcase_create("limits");
    alloc_init();
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, nonfinite_detector);
    tcase_add_loop_test(tc, numeric_case_runs_clean, 0,
                        (int)(sizeof k_cases / sizeof k_cases[0]));
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
