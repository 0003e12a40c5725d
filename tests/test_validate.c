/* test_validate.c: the runs-file reader (good input, positioned errors) and
 * accuracy on ../shared/validation/published-runs.json (skipped without
 * ../shared).  The target for the 53 dense 16-bit runs is MAPE <= 10%
 * and no run worse than 25%; the default constants (round 5: each run on its
 * software stack) reach MAPE 6.6%, max 20.6% (round 4: 7.3%, 21.4%), and the 24 predictable FP8
 * runs MAPE 8.9%, max 25.8%; with the 14 Llama 3.1 405B runs (interleaved
 * over the embedding/loss-accounting split) all 38 FP8 runs, 8.8% / 25.8%,
 * and with Transformer Engine's FP8-saved activations 8.0% / 20.6%
 * (docs/validation.md).  This asserts those
 * figures with about a point of margin, so a regression shows. */
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/alloc.h"
#include "tool/commands.h"
#include "inputs/model_library.h"
#include "testutil.h"
#include "fit/run_stacks.h"
#include "fit/validate.h"
#include "search/search.h"

static const char k_run[] =
    "{\"runs\": [{\"id\": \"t1\", \"source\": \"test\", \"gpu\": \"%s\", \"num_gpus\": 64,"
    " \"gpus_per_node\": 8, \"model\": {\"layers\": 96, \"hidden\": 12288, \"heads\": 96,"
    " \"kv_heads\": 96, \"ffn_hidden\": 49152, \"vocab\": 51200, \"seq_len\": 2048,"
    " \"activation\": \"gelu\"}, \"parallel\": {\"tp\": 8, \"pp\": 8, \"dp\": 1, \"cp\": 1,"
    " \"ep\": 1, \"vpp\": 3, \"mbs\": 1, \"gbs\": 64, \"sequence_parallel\": true,"
    " \"recompute\": \"selective\"}, \"precision\": \"bf16\","
    " \"measured\": {\"tokens_per_s_per_gpu\": 148.945, \"step_time_s\": 13.75},"
    " \"unpublished\": []}]}";

static char *write_tmp(const char *text)
{
    char *path = pl_strdup("/tmp/planner-test-runs-XXXXXX");
    int fd = mkstemp(path);
    FILE *f;
    ck_assert_int_ge(fd, 0);
    f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

static planner_status load_text(const char *text, validation_set **v, planner_error *err)
{
    char *path = write_tmp(text);
    planner_status st = validation_load(v, path, err);
    unlink(path);
    pl_free(path);
    return st;
}

START_TEST(reads_a_run)
{
    char buf[4096];
    validation_set *v = NULL;
    planner_error err = PLANNER_ERROR_INIT;
    snprintf(buf, sizeof buf, k_run, "A100-SXM-80GB");
    ck_assert_int_eq(load_text(buf, &v, &err), PLANNER_OK);
    ck_assert_int_eq(v->n, 1);
    ck_assert_str_eq(v->run[0].id, "t1");
    ck_assert_int_eq(v->run[0].subset, SUBSET_DENSE16);
    ck_assert_int_eq(v->run[0].fix.tp, 8);
    ck_assert_int_eq(v->run[0].fix.vpp, 3);
    ck_assert_int_eq(v->run[0].fix.sp, 1);
    ck_assert_int_eq(v->run[0].fix.recompute, RECOMPUTE_SELECTIVE);
    ck_assert_int_eq(v->run[0].fix.gpus, 64);
    ck_assert_int_eq(v->run[0].m->layers, 96);
    ck_assert_int_eq(v->run[0].c->group[0].nodes, 8);
    ck_assert_str_eq(v->run[0].unsupported, "");
    validation_free(v);
}
END_TEST

START_TEST(predicts_a_run)
{
    char buf[4096];
    validation_set *v = NULL;
    planner_error err = PLANNER_ERROR_INIT;
    cost_params p;
    plan best;
    snprintf(buf, sizeof buf, k_run, "A100-SXM-80GB");
    ck_assert_int_eq(load_text(buf, &v, &err), PLANNER_OK);
    cost_params_default(&p);
    ck_assert_int_eq(validation_predict(&best, &v->run[0], &p, &err), PLANNER_OK);
    /* everything was published: the plan is the published one */
    ck_assert_int_eq(best.s.tp, 8);
    ck_assert_int_eq(best.s.pp, 8);
    ck_assert_int_eq(best.s.vpp, 3);
    ck_assert_int_eq(best.s.mbs, 1);
    /* Korthikanti et al. Table 5: 13.75 s */
    ck_assert_rel(best.e.step_time_s, 13.75, 0.25);
    validation_free(v);
}
END_TEST

/* A MoE run that does not say whether it overlapped its all-to-alls, nor
 * its ZeRO stage or recompute (Qwen3-30B-A3B's shapes, 8 B200, ep 8).  The
 * search alone turns the all-to-all overlap on (faster by more than the
 * near-tie); validate pins every knob value no measured run validates
 * (model/knobs.c's table: the overlap, ZeRO-2, block recompute, selective
 * modules beyond core attention, the non-p2p CP exchanges) off unless the
 * run publishes it.  Before the pin, 34 of the 39 MoE rows of the corpus
 * were predicted with the overlap. */
static const char k_moe_run[] =
    "{\"runs\": [{\"id\": \"m1\", \"source\": \"test\", \"gpu\": \"B200\", \"num_gpus\": 8,"
    " \"gpus_per_node\": 8, \"model\": {\"layers\": 48, \"hidden\": 2048, \"heads\": 32,"
    " \"kv_heads\": 4, \"ffn_hidden\": 6144, \"vocab\": 151936, \"seq_len\": 4096,"
    " \"activation\": \"swiglu\", \"moe\": {\"moe_experts\": 128, \"moe_topk\": 8,"
    " \"moe_ffn_hidden\": 768}}, \"parallel\": {\"tp\": 1, \"pp\": 1, \"dp\": 8, \"cp\": 1,"
    " \"ep\": 8, \"vpp\": null, \"mbs\": 1, \"gbs\": 256, \"sequence_parallel\": null,"
    " \"recompute\": null}, \"precision\": \"bf16\","
    " \"measured\": {\"tokens_per_s_per_gpu\": 9299, \"step_time_s\": 14.1},"
    " \"unpublished\": [\"vpp\", \"recompute\", \"sequence_parallel\"]}]}";

START_TEST(unvalidated_knobs_pinned_off)
{
    validation_set *v = NULL;
    planner_error err = PLANNER_ERROR_INIT;
    cost_params p;
    plan best;
    search_options opts;
    search_result res;
    ck_assert_int_eq(load_text(k_moe_run, &v, &err), PLANNER_OK);
    cost_params_default(&p);
    ck_assert_int_eq(validation_predict(&best, &v->run[0], &p, &err), PLANNER_OK);
    ck_assert(!best.s.ep_comm_overlap);
    ck_assert(knobs_validated(&best.s));
    ck_assert_int_eq(best.s.ep, 8);
    /* the same search without the pin: the overlap wins */
    search_options_default(&opts);
    opts.top_n = 1;
    opts.fix = v->run[0].fix;
    opts.gbs = v->run[0].gbs;
    opts.seq_len = v->run[0].seq_len;
    memset(&res, 0, sizeof res);
    ck_assert_int_eq(search_run(&res, v->run[0].m, v->run[0].c, &p, &opts, &err), PLANNER_OK);
    ck_assert(res.top[0].s.ep_comm_overlap);
    ck_assert_double_gt(res.top[0].e.tokens_per_s_per_gpu, best.e.tokens_per_s_per_gpu * 1.01);
    search_result_free(&res);
    validation_free(v);
}
END_TEST

/* A run names its model; the model library (configs/, what the tool passes)
 * holds its published config: a Qwen3-30B-A3B row as the corpus writes it
 * (GeLU, no head size, so head_dim = 2048 / 32 = 64) is predicted on the
 * config's gated experts and head_dim 128, its dimensions agreeing; one
 * whose dimensions disagree (47 layers) keeps the row's, and says why.
 * Names match by their letters and digits, a parenthetical dropped. */
static const char k_lib_run[] =
    "{\"runs\": [{\"id\": \"q1\", \"source\": \"test\", \"gpu\": \"B200\", \"num_gpus\": 8,"
    " \"gpus_per_node\": 8, \"model\": {\"name\": \"Qwen3-30B-A3B\", \"layers\": 48,"
    " \"hidden\": 2048, \"heads\": 32, \"kv_heads\": 4, \"ffn_hidden\": 6144,"
    " \"vocab\": 151936, \"seq_len\": 4096, \"activation\": \"gelu\", \"moe\":"
    " {\"moe_experts\": 128, \"moe_topk\": 8, \"moe_ffn_hidden\": 768}}, \"parallel\":"
    " {\"tp\": 1, \"pp\": 1, \"dp\": 8, \"cp\": 1, \"ep\": 8, \"vpp\": null, \"mbs\": 1,"
    " \"gbs\": 256, \"sequence_parallel\": null, \"recompute\": null},"
    " \"precision\": \"mxfp8\", \"measured\": {\"tokens_per_s_per_gpu\": 9299,"
    " \"step_time_s\": 14.1}, \"unpublished\": [\"vpp\", \"recompute\"]}]}";

static planner_status load_text_library(const char *text, validation_set **v,
                                        planner_error *err)
{
    char *path = write_tmp(text);
    planner_status st = validation_load_library(v, path, "configs", err);
    unlink(path);
    pl_free(path);
    return st;
}

START_TEST(model_library_shapes_a_run)
{
    validation_set *v = NULL;
    planner_error err = PLANNER_ERROR_INIT;
    char key[64], text[sizeof k_lib_run + 8], *at;
    const model *m;
    model_library_key("DeepSeek-V3 (671B total / 37B active)", key, sizeof key);
    ck_assert_str_eq(key, "deepseekv3");
    model_library_key("Llama 3 / 3.1 8B", key, sizeof key);
    ck_assert_str_eq(key, "llama3318b");   /* two models: no file has it */
    /* without the library: the row's shapes */
    ck_assert_int_eq(load_text(k_lib_run, &v, &err), PLANNER_OK);
    ck_assert_int_eq(v->run[0].m->head_dim, 64);
    ck_assert_int_eq(v->run[0].m->act, ACT_GELU);
    ck_assert_str_eq(v->run[0].definition, "");
    validation_free(v);
    /* with it: the config's, the run's name, sequence and precision */
    ck_assert_int_eq(load_text_library(k_lib_run, &v, &err), PLANNER_OK);
    m = v->run[0].m;
    ck_assert_str_eq(v->run[0].definition, "qwen3-30b-a3b.json");
    ck_assert_str_eq(v->run[0].shape_note,
                     "model from qwen3-30b-a3b.json: head_dim 64 -> 128, "
                     "activation gelu -> swiglu");
    ck_assert_str_eq(m->name, "Qwen3-30B-A3B");
    ck_assert_int_eq(m->head_dim, 128);
    ck_assert_int_eq(m->act, ACT_SWIGLU);
    ck_assert_int_eq(m->qk_norm, QK_NORM_HEAD);
    ck_assert_int_eq(m->prec, PREC_MXFP8);
    ck_assert_int_eq(v->run[0].seq_len, 4096);
    ck_assert_int_eq(v->run[0].subset, SUBSET_MOE);
    /* 30,532,122,624 parameters (Qwen: 30.5 B), 3,353,362,432 active */
    ck_assert_rel(model_param_count(m, 4096), 30.53e9, 1e-3);
    ck_assert_rel(model_active_param_count(m, 4096), 3.353e9, 1e-3);
    validation_free(v);
    /* a row that disagrees keeps its own dimensions */
    snprintf(text, sizeof text, "%s", k_lib_run);
    at = strstr(text, "\"layers\": 48");
    ck_assert_ptr_nonnull(at);
    memcpy(at, "\"layers\": 47", 12);
    ck_assert_int_eq(load_text_library(text, &v, &err), PLANNER_OK);
    ck_assert_str_eq(v->run[0].definition, "");
    ck_assert_str_eq(v->run[0].shape_note,
                     "qwen3-30b-a3b.json differs (layers 47 -> 48): the row's dimensions");
    ck_assert_int_eq(v->run[0].m->head_dim, 64);
    validation_free(v);
}
END_TEST

/* A recipe fact of one release, system and precision (fit/run_stacks.c
 * run_recipe_for_system): Megatron-Bridge 26.08's GB200/GB300 MXFP8 recipes
 * capture the whole iteration in a CUDA graph; the same release's bf16 and
 * B200 rows, another release's, or a run that names its stack, do not get
 * it.  Predicted with it, the Qwen3-30B-A3B row's MoE layers pay no host
 * time: 48 layers x 3 x moe_host_s less per micro-batch (gbs 256 / (dp 8 x
 * mbs 1) = 32 micro-batches). */
START_TEST(recipe_cuda_graph_from_system)
{
    static const char src[] = "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md, "
                              "26.08 NeMo container, pre-training table";
    static const struct { const char *gpu, *prec, *source, *stack; int want; } cases[] = {
        {"GB200", "mxfp8", src, NULL, 1},
        {"GB300", "mxfp8", src, NULL, 1},
        {"GB200", "bf16", src, NULL, -1},
        {"B200", "mxfp8", src, NULL, -1},
        {"GB200", "mxfp8", "NVIDIA-NeMo/Megatron-Bridge, 25.11 NeMo container", NULL, -1},
        {"GB200", "mxfp8", src, "megatron-core", -1},
    };
    double step[2] = {0, 0};
    cost_params p;
    cost_params_default(&p);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[4096], head[512], *at;
        validation_set *v = NULL;
        planner_error err = PLANNER_ERROR_INIT;
        plan best;
        snprintf(head, sizeof head, "{\"runs\": [{\"id\": \"g1\", \"source\": \"%s\",%s%s%s"
                 " \"gpu\": \"%s\",", cases[i].source, cases[i].stack ? " \"stack\": \"" : "",
                 cases[i].stack ? cases[i].stack : "", cases[i].stack ? "\"," : "", cases[i].gpu);
        at = strstr(k_lib_run, "\"num_gpus\"");
        ck_assert_ptr_nonnull(at);
        snprintf(buf, sizeof buf, "%s %s", head, at);
        at = strstr(buf, "\"mxfp8\"");
        ck_assert_ptr_nonnull(at);
        if (strcmp(cases[i].prec, "bf16") == 0)
            memcpy(at, "\"bf16\" ", 7);
        ck_assert_msg(load_text(buf, &v, &err) == PLANNER_OK, "case %zu: %s", i, err.msg);
        ck_assert_msg(v->run[0].fix.cuda_graph == cases[i].want, "case %zu: %d", i,
                      v->run[0].fix.cuda_graph);
        if (i == 0) {
            /* the fact's all-to-all overlap off in both: under it the host
             * time hides under the other pass (layer_cost.c moe_host_paced) */
            v->run[0].fix.ep_comm_overlap = 0;
            ck_assert_int_eq(validation_predict(&best, &v->run[0], &p, &err), PLANNER_OK);
            ck_assert(best.s.cuda_graph);
            step[0] = best.e.step_time_s;
            v->run[0].fix.cuda_graph = 0;
            ck_assert_int_eq(validation_predict(&best, &v->run[0], &p, &err), PLANNER_OK);
            ck_assert(!best.s.cuda_graph);
            step[1] = best.e.step_time_s;
        }
        validation_free(v);
    }
    ck_assert_rel(step[1] - step[0], 32 * 48 * 3.0 * p.gen[GEN_BLACKWELL].moe_host_s, 1e-9);
}
END_TEST

/* How many of the recipe facts for `sys` (run_stacks.c
 * run_recipe_for_system) hold `setting` in their --fix text. */
static int recipes_setting(const run_system *sys, const char *setting)
{
    const char *rec, *why;
    size_t at = 0;
    int n = 0;
    while ((rec = run_recipe_for_system(sys, &at, &why)) != NULL)
        n += strstr(rec, setting) != NULL;
    return n;
}

/* Facts of fit/run_stacks.c a row's schema cannot say: Megatron-Bridge's
 * Llama 3.1 405B configs turn the TP overlap off for NVFP4 only
 * (llama31_llm_pretrain.py); the residual dropout of Megatron-Bridge's
 * providers, NeMo 24.07's Llama and Nemotron configs and torchtitan's Llama
 * is 0, NeMo 24.07's GPT-3 configs keep 0.1 (no fact: the model's, else
 * Megatron's), and so do the SC21 runs. */
START_TEST(recipe_facts_nvfp4_tp_overlap_and_dropout)
{
    static const char mb[] = "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md, "
                             "26.06 NeMo container, pre-training table";
    static const char nemo[] = "NVIDIA NeMo Framework Performance Summary, NeMo 24.07 container";
    static const struct {
        const char *source, *model, *gpu, *prec;
        int tp_off;
        double drop;
    } cases[] = {
        {mb, "Llama 3.1 405B", "GB300", "nvfp4", 1, 0.0},
        {mb, "Llama 3.1 405B", "GB200", "nvfp4", 1, 0.0},
        {mb, "Llama 3.1 405B", "GB300", "mxfp8", 0, 0.0},
        {mb, "Llama 3 / 3.1 70B", "GB300", "nvfp4", 0, 0.0},
        {mb, "Qwen3-30B-A3B", "B200", "mxfp8", 0, 0.0},
        {nemo, "Llama 3 8B", "H100-SXM", "fp8", 0, 0.0},
        {nemo, "Nemotron-4 340B", "H100-SXM", "fp8", 0, 0.0},
        {nemo, "NeMo GPT3-175B", "H100-SXM", "fp8", 0, -1},
        {"pytorch/torchtitan benchmarks", "Llama 3.1 8B", "H100-SXM", "bf16", 0, 0.0},
        {"Narayanan et al., SC21", "GPT 1.7B", "A100-SXM-80GB", "fp16", 0, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_system sys = {cases[i].source, cases[i].model, cases[i].gpu, cases[i].prec};
        const char *why;
        int tp_off = recipes_setting(&sys, "tp_comm_overlap=off");
        ck_assert_msg(tp_off == cases[i].tp_off, "case %zu: %d", i, tp_off);
        ck_assert_msg(run_hidden_dropout_for_system(&sys, &why) == cases[i].drop, "case %zu", i);
        ck_assert(cases[i].drop < 0 ? why == NULL : why != NULL);
    }
}
END_TEST

/* The MoE all-to-all overlap where a row is its release's config
 * (run_stacks.c): Megatron-Bridge v0.2.0's (25.11) H100 Qwen3-235B-A22B FP8
 * config sets moe_a2a_overlap=True; the same table's B200 Qwen3-235B and
 * H100 Qwen3-30B-A3B rows are not their configs, and 26.02.01's GB200 row
 * has no overlap (v0.3.1: none); 26.08's GB200 MXFP8 recipes do. */
START_TEST(recipe_a2a_overlap_h100_qwen3_235b)
{
    static const char r2511[] = "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md, "
                                "25.11 NeMo container, pre-training table";
    static const struct { const char *source, *model, *gpu, *prec; int ovl; } cases[] = {
        {r2511, "Qwen3-235B-A22B", "H100-SXM", "fp8", 1},
        {r2511, "Qwen3-235B-A22B", "B200", "mxfp8", 0},
        {r2511, "Qwen3-30B-A3B", "H100-SXM", "fp8", 0},
        {"Megatron-Bridge, 26.02.01 NeMo container", "Qwen3-235B-A22B", "GB200", "mxfp8", 0},
        {"Megatron-Bridge, 26.08 NeMo container", "Qwen3-235B-A22B", "GB200", "mxfp8", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_system sys = {cases[i].source, cases[i].model, cases[i].gpu, cases[i].prec};
        int ovl = recipes_setting(&sys, "ep_comm_overlap=on");
        ck_assert_msg(ovl == cases[i].ovl, "case %zu: %d", i, ovl);
    }
}
END_TEST

/* The gpt-oss recipes' recompute where a row is its release's config
 * (run_stacks.c): Megatron-Bridge v0.3.0's (26.02) B200 BF16_V2 config
 * recomputes layernorm + moe_act; its B300 config nothing; v0.2.0's (25.11)
 * modules were inert (no granularity), 26.02.01 is another release. */
START_TEST(recipe_recompute_gptoss_b200_2602)
{
    static const char r2602[] = "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md, "
                                "26.02 NeMo container, pre-training table";
    static const struct { const char *source, *model, *gpu, *prec; int sel; } cases[] = {
        {r2602, "gpt-oss-120b", "B200", "bf16", 1},
        {r2602, "gpt-oss-120b", "B300", "bf16", 0},
        {r2602, "Qwen3-30B-A3B", "B200", "bf16", 0},
        {"Megatron-Bridge, 25.11 NeMo container", "gpt-oss-120b", "B200", "bf16", 0},
        {"Megatron-Bridge, 26.02.01 NeMo container", "gpt-oss-120b", "B200", "bf16", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_system sys = {cases[i].source, cases[i].model, cases[i].gpu, cases[i].prec};
        int sel = recipes_setting(&sys, "recompute=selective,recompute_modules=layernorm+moe_act");
        ck_assert_msg(sel == cases[i].sel, "case %zu: %d", i, sel);
    }
}
END_TEST

/* Megatron-Bridge 26.02.01's Qwen3-235B-A22B GB200/GB300 MXFP8 configs set
 * no virtual pipeline size: those rows are not interleaved; the B300 row of
 * the release (its vp 4 published), 26.08's rows and Qwen3-30B get no such
 * fact. */
START_TEST(recipe_no_interleave_260201_qwen3_235b)
{
    static const char r260201[] = "Megatron-Bridge, 26.02.01 NeMo container";
    static const struct { const char *source, *model, *gpu; int vpp1; } cases[] = {
        {r260201, "Qwen3-235B-A22B", "GB200", 1},
        {r260201, "Qwen3-235B-A22B", "GB300", 1},
        {r260201, "Qwen3-235B-A22B", "B300", 0},
        {r260201, "Qwen3-30B-A3B", "GB200", 0},
        {"Megatron-Bridge, 26.08 NeMo container", "Qwen3-235B-A22B", "GB200", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_system sys = {cases[i].source, cases[i].model, cases[i].gpu, "mxfp8"};
        int vpp1 = recipes_setting(&sys, "vpp=1");
        ck_assert_msg(vpp1 == cases[i].vpp1, "case %zu: %d", i, vpp1);
    }
}
END_TEST

/* k_lib_run as a Megatron-Bridge row of container `release` on `gpu`. */
static void bridge_row(char *buf, size_t size, const char *release, const char *gpu)
{
    const char *at = strstr(k_lib_run, "\"num_gpus\"");
    ck_assert_ptr_nonnull(at);
    snprintf(buf, size, "{\"runs\": [{\"id\": \"d1\", \"source\": \"NVIDIA-NeMo/"
             "Megatron-Bridge, %s NeMo container\", \"gpu\": \"%s\", %s", release, gpu, at);
}

/* A recipe fact of one model: Megatron-Bridge's DeepSeek-V3 recipes on
 * GB200, B200 and B300 recompute MLA's up-projections (both revisions of
 * scripts/performance/configs/deepseek read); on GB300 the revisions differ
 * and no fact applies; another model's row gets none, and so does a
 * DeepSeek-V3 row predicted on its own dimensions (no MLA: --models none,
 * last case).  The 25.11 table's GB200/GB300 DeepSeek-V3 rows ran without
 * the MTP layer deepseek-v3.json has ("w/o MTP"; mtp), the B300 and 26.06
 * ones with it; 26.06's GB300 MXFP8 recipe overlaps the all-to-alls (ovl). */
START_TEST(recipe_recompute_from_model)
{
    static const struct {
        const char *name, *gpu, *release;
        int rc, mods, graph, mtp, ovl;
    } cases[] = {
        {"DeepSeek-V3 (671B total / 37B active)", "GB200", "25.11", RECOMPUTE_SELECTIVE,
         RC_MOD_MLA_UP_PROJ, -1, 0, -1},
        {"DeepSeek-V3 (671B total / 37B active)", "B300", "25.11", RECOMPUTE_SELECTIVE,
         RC_MOD_MLA_UP_PROJ, -1, 1, -1},
        {"DeepSeek-V3 (671B total / 37B active)", "GB300", "25.11", -1, -1, -1, 0, -1},
        {"Qwen3-30B-A3B", "GB200", "25.11", -1, -1, -1, 0, -1},
        /* 26.06's GB300 MXFP8 DeepSeek-V3 recipe: a full-iteration graph */
        {"DeepSeek-V3 (671B total / 37B active)", "GB300", "26.06", -1, -1, 1, 1, 1},
        {"Qwen3-30B-A3B", "GB300", "26.06", -1, -1, -1, 0, -1},
        {"DeepSeek-V3 (671B total / 37B active)", "GB200", "25.11", -1, -1, -1, 0, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[4096], *at;
        validation_set *v = NULL;
        planner_error err = PLANNER_ERROR_INIT;
        bridge_row(buf, sizeof buf, cases[i].release, cases[i].gpu);
        if (strncmp(cases[i].name, "DeepSeek", 8) == 0) {   /* the corpus's DeepSeek-V3 row */
            char rest[4096];
            at = strstr(buf, "\"model\": {");
            ck_assert_ptr_nonnull(at);
            snprintf(rest, sizeof rest, "%s", strstr(at, "}}") + 2);
            snprintf(at, sizeof buf - (size_t)(at - buf), "\"model\": {\"name\": \"%s\", "
                     "\"layers\": 61, \"hidden\": 7168, \"heads\": 128, \"kv_heads\": 128, "
                     "\"ffn_hidden\": 28672, \"vocab\": 128000, \"seq_len\": 4096, "
                     "\"activation\": \"gelu\", \"moe\": {\"moe_experts\": 256, \"moe_topk\": 8, "
                     "\"moe_ffn_hidden\": 2048, \"shared_experts\": 1, \"dense_layers\": 3}}%s",
                     cases[i].name, rest);
        }
        ck_assert_msg((i + 1 < sizeof cases / sizeof cases[0] ? load_text_library(buf, &v, &err)
                                                              : load_text(buf, &v, &err)) ==
                          PLANNER_OK, "case %zu: %s", i, err.msg);
        ck_assert_msg(v->run[0].fix.recompute == cases[i].rc, "case %zu: %d", i,
                      v->run[0].fix.recompute);
        ck_assert_msg(v->run[0].fix.recompute_modules == cases[i].mods, "case %zu: %d", i,
                      v->run[0].fix.recompute_modules);
        ck_assert_msg(v->run[0].fix.cuda_graph == cases[i].graph, "case %zu: %d", i,
                      v->run[0].fix.cuda_graph);
        ck_assert_msg(v->run[0].m->mtp_layers == cases[i].mtp, "case %zu: %d", i,
                      v->run[0].m->mtp_layers);
        ck_assert_msg(v->run[0].fix.ep_comm_overlap == cases[i].ovl, "case %zu: %d", i,
                      v->run[0].fix.ep_comm_overlap);
        validation_free(v);
    }
}
END_TEST

/* What a source says of the model variant is no recipe knob: a row that
 * names its stack gets it too.  A Megatron-Bridge row (its providers' residual
 * dropout 0) with "stack": "megatron-core" kept Megatron's 0.1 and its masks
 * before. */
START_TEST(model_facts_whatever_the_stack)
{
    char buf[4096], named[4200];
    validation_set *v = NULL;
    planner_error err = PLANNER_ERROR_INIT;
    const char *at;
    bridge_row(buf, sizeof buf, "26.06", "GB200");
    at = strstr(buf, "\"source\"");
    ck_assert_ptr_nonnull(at);
    snprintf(named, sizeof named, "%.*s\"stack\": \"megatron-core\", %s", (int)(at - buf), buf, at);
    /* on the row's own dimensions (no library definition): the providers' 0, not Megatron's 0.1 */
    ck_assert_msg(load_text(named, &v, &err) == PLANNER_OK, "%s", err.msg);
    ck_assert_msg(model_hidden_dropout(v->run[0].m) == 0.0, "%g",
                  model_hidden_dropout(v->run[0].m));
    /* and says so in the run's note, like the MTP and FP8-attention facts */
    ck_assert_ptr_nonnull(strstr(v->run[0].shape_note,
                                 "hidden_dropout 0.1 -> 0 (the source's recipe)"));
    validation_free(v);
}
END_TEST

/* k_lib_run as a Megatron-Bridge row of `release` on `gpu` in precision
 * `prec` (mxfp8, fp8 or bf16), loaded with the model library. */
static validation_set *bridge_row_loaded(const char *release, const char *gpu, const char *prec)
{
    char buf[4096], *at;
    validation_set *v = NULL;
    planner_error err = PLANNER_ERROR_INIT;
    bridge_row(buf, sizeof buf, release, gpu);
    at = strstr(buf, "\"mxfp8\"");
    ck_assert_ptr_nonnull(at);
    if (strcmp(prec, "mxfp8") != 0)
        memcpy(at, strcmp(prec, "fp8") == 0 ? "\"fp8\"  " : "\"bf16\" ", 7);
    ck_assert_msg(load_text_library(buf, &v, &err) == PLANNER_OK, "%s %s %s: %s", release, gpu,
                  prec, err.msg);
    return v;
}

/* The recipes' Transformer Engine graphs of the router and the dispatch
 * preprocessing (run_stacks.c run_recipe_for_system: the knob
 * te_moe_graphs=on as --fix text),
 * per release, model and system as Megatron-Bridge's performance configs
 * set them: 25.11's GB200/GB300 Qwen3 and DeepSeek-V3 configs, its B200
 * Qwen3-30B-A3B and GB300 gpt-oss ones, 26.02's B200 Qwen3-30B-A3B and B300
 * gpt-oss, 26.02.01's GB200/GB300 Qwen3-235B-A22B, 26.06's B300 gpt-oss;
 * not 25.11's B200 DeepSeek-V3 or Qwen3-235B, GB200 gpt-oss or H100
 * Qwen3-30B-A3B FP8, 26.04's B200/B300 DeepSeek-V3, 26.06's H100
 * Qwen3-30B-A3B FP8, nor Llama. */
START_TEST(recipe_fact_te_moe_graphs)
{
    static const struct { const char *release, *model, *gpu, *prec; bool want; } cases[] = {
        {"25.11", "Qwen3-235B-A22B", "GB200", "bf16", true},
        {"25.11", "Qwen3-30B-A3B", "GB300", "mxfp8", true},
        {"25.11", "Qwen3-30B-A3B", "B200", "mxfp8", true},
        {"25.11", "DeepSeek-V3", "GB300", "mxfp8", true},
        {"25.11", "gpt-oss-120b", "GB300", "bf16", true},
        {"26.02", "Qwen3-30B-A3B", "B200", "mxfp8", true},
        {"26.02", "gpt-oss-120b", "B300", "bf16", true},
        {"26.02.01", "Qwen3-235B-A22B", "GB200", "mxfp8", true},
        {"26.06", "gpt-oss-120b", "B300", "mxfp8", true},
        {"25.11", "DeepSeek-V3", "B200", "mxfp8", false},
        {"25.11", "Qwen3-235B-A22B", "B200", "mxfp8", false},
        {"25.11", "gpt-oss-120b", "GB200", "bf16", false},
        {"25.11", "Qwen3-30B-A3B", "H100-SXM", "fp8", false},
        {"26.04", "DeepSeek-V3", "B300", "mxfp8", false},
        {"26.06", "Qwen3-30B-A3B", "H100-SXM", "fp8", false},
        {"26.02", "gpt-oss-120b", "B200", "bf16", false},
        {"25.11", "Llama 3.1 405B", "GB200", "fp8", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char src[160];
        snprintf(src, sizeof src,
                 "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md, %s NeMo container, "
                 "pre-training table", cases[i].release);
        run_system sys = {src, cases[i].model, cases[i].gpu, cases[i].prec};
        const char *rec, *why, *said = NULL;
        size_t at = 0;
        while ((rec = run_recipe_for_system(&sys, &at, &why)) != NULL)
            if (strstr(rec, "te_moe_graphs=on") != NULL)
                said = why;
        ck_assert_msg((said != NULL) == cases[i].want, "case %zu", i);
    }
}
END_TEST

/* The FP8 attention and MXFP8 output-layer facts of the DeepSeek-V3 and
 * Qwen3 rows, row by row, as Megatron-Bridge's recipes set them
 * (run_stacks.c k_model_facts): v0.6.0 (26.08) perf_recipes/deepseek
 * gb300/deepseek_v3.py fp8mx _enable_deepseek_full_iteration_mxfp8(cfg,
 * fp8_dot_product_attention=True, fp8_output_proj=True), gb200's
 * (cfg, fp8_output_proj=True) only; qwen/common.py
 * _enable_hybridep_full_iteration_mxfp8 sets fp8_dot_product_attention and
 * no fp8_output_proj; v0.5.0 (26.06) DEEPSEEK_V3_PRETRAIN_CONFIG_GB300_FP8_
 * MX_V1 FP8 attention and deepseek_v3_pretrain_config_gb300 the MXFP8 head,
 * its B300 one neither (v0.5.1 added both); QWEN3_30B_A3B_PRETRAIN_CONFIG_
 * B300_FP8_MX_V1 FP8 attention; 26.04 (v0.4.x) neither anywhere. */
START_TEST(model_facts_by_row)
{
    static const struct {
        const char *release, *model, *gpu, *prec;
        bool attn, head;
    } cases[] = {
        {"26.08", "DeepSeek-V3 (671B total / 37B active)", "GB300", "mxfp8", true, true},
        {"26.08", "DeepSeek-V3 (671B total / 37B active)", "GB200", "mxfp8", false, true},
        {"26.06", "DeepSeek-V3 (671B total / 37B active)", "GB300", "mxfp8", true, true},
        {"26.06", "DeepSeek-V3 (671B total / 37B active)", "B300", "mxfp8", false, false},
        {"26.04", "DeepSeek-V3 (671B total / 37B active)", "B300", "mxfp8", false, false},
        {"26.04", "DeepSeek-V3 (671B total / 37B active)", "B200", "mxfp8", false, false},
        {"26.08", "Qwen3-30B-A3B", "GB300", "mxfp8", true, false},
        {"26.08", "Qwen3-30B-A3B", "GB200", "mxfp8", true, false},
        {"26.08", "Qwen3-235B-A22B", "GB300", "mxfp8", true, false},
        {"26.08", "Qwen3-235B-A22B", "GB200", "mxfp8", true, false},
        {"26.06", "Qwen3-30B-A3B", "B300", "mxfp8", true, false},
        {"26.06", "Qwen3-30B-A3B", "H100-SXM", "fp8", false, false},
        {"26.08", "DeepSeek-V3 (671B total / 37B active)", "GB300", "bf16", false, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char source[256];
        run_model_variant var;
        run_system r;
        snprintf(source, sizeof source,
                 "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md + "
                 "docs/performance-summary-archive.md, %s NeMo container, pre-training table",
                 cases[i].release);
        r = (run_system){source, cases[i].model, cases[i].gpu, cases[i].prec};
        run_model_for_system(&r, &var);
        ck_assert_msg(var.fp8_attention == cases[i].attn, "case %zu: fp8_attention", i);
        ck_assert_msg(var.fp8_output_proj == cases[i].head, "case %zu: fp8_output_proj", i);
        ck_assert_msg((var.fp8_output_proj_why != NULL) == cases[i].head, "case %zu", i);
    }
}
END_TEST

/* A model fact of one release, model, system and precision (run_stacks.c
 * run_model_for_system): Megatron-Bridge 26.08's gpt-oss-120b GB200/GB300
 * MXFP8 recipes run attention in FP8 (fp8_dot_product_attention); the same
 * rows in bf16, 26.06's B300 MXFP8 one (its BF16 config) and a 26.08 B300
 * row do not.  The row is predicted on gpt-oss-120b.json (a 128-token
 * window on every other layer), whose windowed layers' FP8 backward scores
 * every causal key (layer_cost.c attention_bwd_s): slower with it. */
START_TEST(model_fact_fp8_attention_gptoss)
{
    static const struct { const char *release, *gpu, *prec; bool want; } cases[] = {
        {"26.08", "GB300", "mxfp8", true},
        {"26.08", "GB200", "mxfp8", true},
        {"26.08", "GB300", "bf16", false},
        {"26.06", "B300", "mxfp8", false},
        {"26.08", "B300", "mxfp8", false},
    };
    cost_params p;
    cost_params_default(&p);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[2048];
        validation_set *v = NULL;
        planner_error err = PLANNER_ERROR_INIT;
        plan with, without;
        snprintf(buf, sizeof buf,
                 "{\"runs\": [{\"id\": \"o1\", \"source\": \"NVIDIA-NeMo/Megatron-Bridge "
                 "docs/performance-summary.md, %s NeMo container, pre-training table\", \"gpu\":"
                 " \"%s\", \"num_gpus\": 64, \"gpus_per_node\": 4, \"model\": {\"name\":"
                 " \"gpt-oss-120b\", \"layers\": 36, \"hidden\": 2880, \"heads\": 64,"
                 " \"kv_heads\": 8, \"ffn_hidden\": 11520, \"vocab\": 201088, \"seq_len\": 4096,"
                 " \"activation\": \"gelu\", \"moe\": {\"moe_experts\": 128, \"moe_topk\": 4,"
                 " \"moe_ffn_hidden\": 2880}}, \"parallel\": {\"tp\": 1, \"pp\": 1, \"dp\": 64,"
                 " \"cp\": 1, \"ep\": 16, \"vpp\": null, \"mbs\": 4, \"gbs\": 1280,"
                 " \"sequence_parallel\": null, \"recompute\": null}, \"precision\": \"%s\","
                 " \"measured\": {\"tokens_per_s_per_gpu\": 33024, \"step_time_s\": 2.4806},"
                 " \"unpublished\": [\"vpp\", \"recompute\", \"sequence_parallel\"]}]}",
                 cases[i].release, cases[i].gpu, cases[i].prec);
        ck_assert_msg(load_text_library(buf, &v, &err) == PLANNER_OK, "case %zu: %s", i, err.msg);
        ck_assert_str_eq(v->run[0].definition, "gpt-oss-120b.json");
        ck_assert_msg(v->run[0].m->fp8_attention == cases[i].want, "case %zu", i);
        ck_assert_msg((strstr(v->run[0].shape_note, "; attention in FP8") != NULL) ==
                          cases[i].want, "case %zu: %s", i, v->run[0].shape_note);
        if (i == 0) {
            ck_assert_int_eq(v->run[0].m->layer[0].window, 128);
            ck_assert_int_eq(validation_predict(&with, &v->run[0], &p, &err), PLANNER_OK);
            v->run[0].m->fp8_attention = false;
            ck_assert_int_eq(validation_predict(&without, &v->run[0], &p, &err), PLANNER_OK);
            ck_assert(with.e.step_time_s > without.e.step_time_s);
        }
        validation_free(v);
    }
}
END_TEST

/* A recipe fact of one model, GPU, precision and release: Megatron-Bridge
 * 26.06's Qwen3-30B-A3B H100 FP8 recipe runs the flex token dispatcher
 * (HybridEP); the same row of 26.02.01, or of bf16, has the alltoall one;
 * so do B200's, while 26.06's B300 recipes and every GB200/GB300 Qwen3
 * recipe run HybridEP.  Where no recipe sets it the row is pinned to the
 * alltoall dispatcher (0), which the search would otherwise choose. */
START_TEST(recipe_flex_dispatcher)
{
    static const struct { const char *gpu, *release, *prec; int flex; } cases[] = {
        {"H100-SXM", "26.06", "fp8", 1},
        {"H100-SXM", "26.02.01", "fp8", 0},
        {"B300", "26.06", "fp8", 1},
        {"H100-SXM", "26.06", "bf16", 0},
        {"B200", "26.06", "fp8", 0},
        {"B300", "26.02.01", "fp8", 0},
        {"GB200", "25.11", "fp8", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        validation_set *v = bridge_row_loaded(cases[i].release, cases[i].gpu, cases[i].prec);
        ck_assert_msg(v->run[0].fix.flex_dispatcher == cases[i].flex, "case %zu: %d", i,
                      v->run[0].fix.flex_dispatcher);
        validation_free(v);
    }
}
END_TEST

/* A recipe fact of one release, model, system and precision: Megatron-Bridge
 * 26.06's Qwen3-30B-A3B B300 FP8_MX config (v0.5.0 QWEN3_30B_A3B_PRETRAIN_
 * CONFIG_B300_FP8_MX_V1) captures the whole iteration and overlaps the MoE
 * all-to-alls; its FP8_CS config (precision fp8), the B200 one and 26.02's
 * B300 row keep neither.  Predicted with them, the row (ep 8 in one node,
 * mbs 1 here) pays no host time and hides its all-to-alls: faster. */
START_TEST(recipe_full_iteration_b300_qwen3)
{
    static const struct { const char *gpu, *release, *prec; int want; } cases[] = {
        {"B300", "26.06", "mxfp8", 1},
        {"B300", "26.06", "fp8", -1},
        {"B200", "26.06", "mxfp8", -1},
        {"B300", "26.02", "mxfp8", -1},
    };
    cost_params p;
    cost_params_default(&p);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        validation_set *v = bridge_row_loaded(cases[i].release, cases[i].gpu, cases[i].prec);
        planner_error err = PLANNER_ERROR_INIT;
        plan with, without;
        ck_assert_msg(v->run[0].fix.cuda_graph == cases[i].want, "case %zu: graph %d", i,
                      v->run[0].fix.cuda_graph);
        ck_assert_msg(v->run[0].fix.ep_comm_overlap == cases[i].want, "case %zu: ovl %d", i,
                      v->run[0].fix.ep_comm_overlap);
        if (i == 0) {
            ck_assert_int_eq(validation_predict(&with, &v->run[0], &p, &err), PLANNER_OK);
            ck_assert(with.s.cuda_graph && with.s.ep_comm_overlap);
            v->run[0].fix.cuda_graph = v->run[0].fix.ep_comm_overlap = 0;
            ck_assert_int_eq(validation_predict(&without, &v->run[0], &p, &err), PLANNER_OK);
            ck_assert(!without.s.cuda_graph && !without.s.ep_comm_overlap);
            ck_assert(with.e.step_time_s < without.e.step_time_s);
        }
        validation_free(v);
    }
}
END_TEST

/* The Megatron-LM README of Sep 2020 (v1.1) ran every layer under
 * --checkpoint-activations (fit/run_stacks.c): its rows, which leave
 * recompute unpublished, get full recompute, and are predicted with it;
 * a published value wins; another source's row stays free. */
START_TEST(recipe_recompute_megatron2020)
{
    static const char run[] =
        "{\"runs\": [{\"id\": \"t1\", \"source\": \"%s\", \"gpu\": \"V100-SXM2-32GB\","
        " \"num_gpus\": 1, \"gpus_per_node\": 16, \"model\": {\"layers\": 24,"
        " \"hidden\": 1920, \"heads\": 15, \"kv_heads\": 15, \"ffn_hidden\": 7680,"
        " \"vocab\": 51200, \"seq_len\": 1024, \"activation\": \"gelu\"}, \"parallel\": {"
        "\"tp\": 1, \"pp\": 1, \"dp\": 1, \"cp\": 1, \"ep\": 1, \"vpp\": null, \"mbs\": null,"
        " \"gbs\": 8, \"sequence_parallel\": null, \"recompute\": %s},"
        " \"precision\": \"fp16\", \"measured\": {\"tokens_per_s_per_gpu\": 7307.761},"
        " \"unpublished\": [\"mbs\", \"vpp\", \"sequence_parallel\"%s]}]}";
    static const char *const src2020 = "NVIDIA/Megatron-LM README (Sep 2020), model-parallel and "
                                       "data-parallel scaling tables";
    static const struct { const char *source, *rc, *unpub; int want; } cases[] = {
        {src2020, "null", ", \"recompute\"", RECOMPUTE_FULL},
        {src2020, "\"none\"", "", RECOMPUTE_NONE},
        {"test", "null", ", \"recompute\"", -1},
    };
    cost_params p;
    cost_params_default(&p);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[4096];
        validation_set *v = NULL;
        planner_error err = PLANNER_ERROR_INIT;
        plan best;
        snprintf(buf, sizeof buf, run, cases[i].source, cases[i].rc, cases[i].unpub);
        ck_assert_msg(load_text(buf, &v, &err) == PLANNER_OK, "case %zu: %s", i, err.msg);
        ck_assert_msg(v->run[0].fix.recompute == cases[i].want, "case %zu: %d", i,
                      v->run[0].fix.recompute);
        if (i == 0) {
            ck_assert_int_eq(validation_predict(&best, &v->run[0], &p, &err), PLANNER_OK);
            ck_assert_int_eq(best.s.recompute, RECOMPUTE_FULL);
            ck_assert_int_eq(best.s.mbs, 8);   /* v1.1: the batch is one micro-batch */
        }
        validation_free(v);
    }
}
END_TEST

/* A measurement outside the plausible range (0.01..1e7 tokens/s per GPU)
 * is refused with the run and key, never turned into "+inf%" (issue 15);
 * a run's model name is checked like any name.  The corpus' extremes
 * (11 and 44,544) are well inside. */
START_TEST(implausible_measurement_refused)
{
    static const struct { const char *from, *to, *want; } cases[] = {
        {"148.945", "1e-308", "runs[0].measured.tokens_per_s_per_gpu: 1e-308 outside 0.01..1e+07"},
        {"148.945", "2e7", "runs[0].measured.tokens_per_s_per_gpu: 2e+07 outside 0.01..1e+07"},
        {"\"layers\": 96", "\"name\": \"m\\u001b[31m\", \"layers\": 96",
         "runs[0].model.name: holds a control character (U+001B) at byte 2"},
        {"148.945", "0.01", NULL},
        {"\"step_time_s\": 13.75", "\"step_time_s\": 13.75, \"peak_memory_gib\": -3",
         "runs[0].measured.peak_memory_gib: expected a number in (0, 100000]"},
        {"\"step_time_s\": 13.75", "\"step_time_s\": 13.75, \"peak_memory_gib\": \"80\"",
         "runs[0].measured.peak_memory_gib: expected a number in (0, 100000]"},
        {"\"step_time_s\": 13.75", "\"step_time_s\": 13.75, \"peak_memory_gib\": 80.5", NULL},
        {"\"dp\": 1,", "\"dp\": 1, \"zero\": 4,",
         "runs[0].parallel.zero: expected a whole number in 0..3"},
        {"\"layers\": 96", "\"tied_embeddings\": 1, \"layers\": 96",
         "runs[0].model.tied_embeddings: expected true, false or null"},
        {"\"layers\": 96", "\"tied_embeddings\": false, \"layers\": 96", NULL},
    };
    char run[4096], text[4096];
    snprintf(run, sizeof run, k_run, "A100-SXM-80GB");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        validation_set *v = NULL;
        planner_error err = PLANNER_ERROR_INIT;
        const char *at = strstr(run, cases[i].from);
        ck_assert_ptr_nonnull(at);
        snprintf(text, sizeof text, "%.*s%s%s", (int)(at - run), run, cases[i].to,
                 at + strlen(cases[i].from));
        if (cases[i].want == NULL) {
            ck_assert_msg(load_text(text, &v, &err) == PLANNER_OK, "%s", err.msg);
            validation_free(v);
            continue;
        }
        ck_assert_int_eq(load_text(text, &v, &err), PLANNER_E_INPUT);
        ck_assert_str_eq(err.msg, cases[i].want);
    }
}
END_TEST

START_TEST(bad_inputs_located)
{
    static const struct { const char *text; const char *path; } cases[] = {
        {"{\"runs\": 3}", "runs"},
        {"{\"runs\": [{\"id\": \"x\"}]}", "runs[0].gpu"},
        {"{\"runs\": [1]}", "runs[0]"},
    };
    char buf[4096];
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        validation_set *v = NULL;
        planner_error err = PLANNER_ERROR_INIT;
        ck_assert_int_eq(load_text(cases[i].text, &v, &err), PLANNER_E_INPUT);
        ck_assert_ptr_null(v);
        ck_assert_str_eq(err.path, cases[i].path);
    }
    {
        validation_set *v = NULL;
        planner_error err = PLANNER_ERROR_INIT;
        snprintf(buf, sizeof buf, k_run, "NoSuchGPU");
        ck_assert_int_eq(load_text(buf, &v, &err), PLANNER_E_INPUT);
        ck_assert_str_eq(err.path, "runs[0].gpu");
        ck_assert(strstr(err.msg, "NoSuchGPU") != NULL);
    }
    {
        validation_set *v = NULL;
        planner_error err = PLANNER_ERROR_INIT;
        ck_assert_int_eq(load_text("{\"runs\": [\n  {\"id\": }]}", &v, &err), PLANNER_E_INPUT);
        ck_assert_int_eq(err.line, 2);
        ck_assert(err.col > 0);
    }
}
END_TEST

/* Every error points at its key: "LINE:COL: path: message", positions
 * counted by hand (columns in characters, 1-based). */
/* The run's software stack: its own "stack" wins; without one, its source
 * names it (fit/run_stacks.c: SC21's PTD-P rows Megatron-LM 2021, its
 * ZeRO-3 rows DeepSpeed by their ids, torchtitan's benchmarks pytorch-fsdp2);
 * an unknown source is megatron-core;
 * an unknown name is an error at its position with a suggestion. */
START_TEST(run_stack_from_field_or_source)
{
    static const struct { const char *field, *source, *id; int want; } cases[] = {
        {"", "test", "t1", STACK_MEGATRON_CORE},
        {"", "Narayanan et al., SC21, Table 2", "sc21_t2_ptd_1", STACK_MEGATRON_LM_2021},
        {"", "Narayanan et al., SC21, Table 2", "sc21_t2_zero3_1", STACK_DEEPSPEED},
        {"", "NVIDIA/Megatron-LM README (Sep 2020), tables", "x", STACK_MEGATRON_LM_2020},
        {"", "NVIDIA/Megatron-LM README, 'GPT-3 Example' section (2021 onward), README text",
         "x", STACK_MEGATRON_LM_2020},
        {"\"stack\": \"pytorch-fsdp2\", ", "Narayanan et al.", "x", STACK_PYTORCH_FSDP2},
        {"", "pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md", "x",
         STACK_PYTORCH_FSDP2},
        {"", "NVIDIA/Megatron-LM functional tests, tests/functional_tests/test_cases/gpt/x", "x",
         STACK_MEGATRON_CORE},
    };
    char run[4096], buf[4600];
    const char *at;
    snprintf(run, sizeof run, k_run, "A100-SXM-80GB");
    at = strstr(run, "\"source\": \"test\", ");
    ck_assert_ptr_nonnull(at);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        validation_set *v = NULL;
        planner_error err = PLANNER_ERROR_INIT;
        snprintf(buf, sizeof buf, "{\"runs\": [{\"id\": \"%s\", %s\"source\": \"%s\", %s",
                 cases[i].id, cases[i].field, cases[i].source,
                 at + strlen("\"source\": \"test\", "));
        ck_assert_msg(load_text(buf, &v, &err) == PLANNER_OK, "case %zu: %s", i, err.msg);
        ck_assert_int_eq(v->run[0].c->stack, cases[i].want);
        validation_free(v);
    }
    {
        validation_set *v = NULL;
        planner_error err = PLANNER_ERROR_INIT;
        snprintf(buf, sizeof buf, "{\"runs\": [{\"stack\": \"deepspeeed\", %s", run + 11);
        ck_assert_int_eq(load_text(buf, &v, &err), PLANNER_E_INPUT);
        ck_assert_int_eq(err.line, 1);
        ck_assert_msg(err.col == 12, "col %d: %s", err.col, err.msg);
        ck_assert_msg(strstr(err.msg, "runs[0].stack: unknown software stack 'deepspeeed' "
                                      "(did you mean 'deepspeed'?)") != NULL, "%s", err.msg);
    }
}
END_TEST

/* What a source's recipes set that the schema has no field for
 * (run_stacks.c): NeMo 24.07's and Megatron-Bridge's performance recipes
 * reduce bf16 gradients (grad_sync_dtype=bf16, grad_reduce_in_fp32 =
 * False), Megatron-LM's --bf16 runs fp32 ones; a run's own
 * parallel.grad_reduce_bf16 wins.  Predicted on the published plan (Table 5
 * of Korthikanti et al. at dp 1 has nothing to reduce, so dp 8 here): bf16
 * gradients take 2 bytes a parameter off the memory (16-bit weights and
 * optimizer unchanged) and halve the exposed gradient reduce. */
START_TEST(recipe_grad_reduce_from_source)
{
    static const char run[] =
        "{\"runs\": [{\"id\": \"t1\", \"source\": \"%s\", \"gpu\": \"A100-SXM-80GB\","
        " \"num_gpus\": 512, \"gpus_per_node\": 8, \"model\": {\"layers\": 96,"
        " \"hidden\": 12288, \"heads\": 96, \"kv_heads\": 96, \"ffn_hidden\": 49152,"
        " \"vocab\": 51200, \"seq_len\": 2048, \"activation\": \"gelu\"}, \"parallel\": {%s"
        "\"tp\": 8, \"pp\": 8, \"dp\": 8, \"cp\": 1, \"ep\": 1, \"vpp\": 3, \"mbs\": 1,"
        " \"gbs\": 512, \"sequence_parallel\": true, \"recompute\": \"selective\"},"
        " \"precision\": \"bf16\", \"measured\": {\"tokens_per_s_per_gpu\": 148.945},"
        " \"unpublished\": []}]}";
    static const struct { const char *field, *source; int want; } cases[] = {
        {"", "test", -1},
        {"", "NVIDIA NeMo Framework Performance Summary, NeMo 24.07 container", 1},
        {"", "NVIDIA-NeMo/Megatron-Bridge docs/performance-summary.md, 25.11 NeMo container", 1},
        {"", "NVIDIA/Megatron-LM README (Megatron-Core r0.8.0, H100)", -1},
        {"\"grad_reduce_bf16\": false, ", "NeMo 24.07", 0},
        {"\"grad_reduce_bf16\": true, ", "test", 1},
    };
    double step[2] = {0, 0}, mem[2] = {0, 0};
    cost_params p;
    cost_params_default(&p);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[4096];
        validation_set *v = NULL;
        planner_error err = PLANNER_ERROR_INIT;
        plan best;
        snprintf(buf, sizeof buf, run, cases[i].source, cases[i].field);
        ck_assert_msg(load_text(buf, &v, &err) == PLANNER_OK, "case %zu: %s", i, err.msg);
        ck_assert_msg(v->run[0].fix.grad_reduce_bf16 == cases[i].want, "case %zu: %d", i,
                      v->run[0].fix.grad_reduce_bf16);
        if (i < 2) {
            ck_assert_int_eq(validation_predict(&best, &v->run[0], &p, &err), PLANNER_OK);
            ck_assert_int_eq(best.s.grad_reduce_bf16, i == 1);
            ck_assert_int_eq(best.s.dp, 8);
            step[i] = best.e.step_time_s;
            mem[i] = best.e.stage_memory[0].grads_bytes;
        }
        validation_free(v);
    }
    /* the same plan (all published): fp32 gradients 4 B a parameter, bf16 2 */
    ck_assert_rel(mem[1] / mem[0], 0.5, 1e-12);
    ck_assert_msg(step[1] < step[0], "bf16 reduce %.3f s, fp32 %.3f s", step[1], step[0]);
}
END_TEST

START_TEST(errors_positioned)
{
    static const char moe_model[] = "\"activation\": \"gelu\"}";
    char range[64], moe[4096], run[4096], want_moe[128];
    const char *at;
    struct { const char *text; const char *want; } cases[] = {
        /* the example: "id" is the 12th character */
        {"{\"runs\": [{\"id\": 5}]}", "1:12: runs[0].id: expected a string"},
        /* a missing key: the object that lacks it */
        {"{\"runs\": [{\"id\": \"a\"},\n  {\"id\": \"b\"}]}",
         "1:11: runs[0].gpu: missing (a string is required)"},
        /* the second run, on its own line; a non-ASCII id counts as one column */
        {"{\"runs\": [\n  [],\n  {\"id\": \"\xc3\xa9\", \"gpu\": 7}\n]}",
         "2:3: runs[0]: expected an object"},
        {"{\"runs\": [\n  {\"id\": \"\xc3\xa9\", \"gpu\": 7}\n]}",
         "2:15: runs[0].gpu: expected a string"},
        {"{\n  \"runs\": {}\n}", "2:3: expected an object with a \"runs\" array"},
        {"[1, 2]", "1:1: expected an object with a \"runs\" array"},
        /* an escaped key is found as jansson decoded it */
        {"{\"r\\u0075ns\": [{\"id\": 1}]}", "1:17: runs[0].id: expected a string"},
        /* a run id is printed in the table: no terminal escapes, no newline */
        {"{\"runs\": [{\"id\": \"a\\n\\u001b[2J\", \"gpu\": \"H100-SXM\", \"precision\": "
         "\"bf16\", \"num_gpus\": 8, \"gpus_per_node\": 8}]}",
         "1:12: runs[0].id: holds a control character (U+000A) at byte 2"},
        {NULL, NULL},
        {NULL, NULL},
    };
    size_t i, n = sizeof cases / sizeof cases[0];

    /* num_gpus out of range on line 3 */
    snprintf(range, sizeof range, "3:4: runs[0].num_gpus: expected a whole number in 1..%d",
             CLUSTER_MAX_GPUS);
    cases[n - 2].text = "{\"runs\": [\n  {\"id\": \"a\", \"gpu\": \"A100-SXM-80GB\", "
                        "\"precision\": \"bf16\",\n   \"num_gpus\": 0, \"gpus_per_node\": 8}\n]}";
    cases[n - 2].want = range;
    /* nested: runs[0].model.moe.moe_topk, one line: its column is its offset + 1 */
    snprintf(run, sizeof run, k_run, "A100-SXM-80GB");
    at = strstr(run, moe_model);
    ck_assert_ptr_nonnull(at);
    snprintf(moe, sizeof moe, "%.*s\"activation\": \"gelu\", \"moe\": {\"moe_experts\": 8, "
             "\"moe_topk\": 9, \"moe_ffn_hidden\": 1024}}%s", (int)(at - run), run,
             at + strlen(moe_model));
    cases[n - 1].text = moe;
    snprintf(want_moe, sizeof want_moe,
             "1:%d: runs[0].model.moe.moe_topk: more experts per token than experts",
             (int)(strstr(moe, "\"moe_topk\"") - moe) + 1);
    cases[n - 1].want = want_moe;
    for (i = 0; i < n; i++) {
        validation_set *v = NULL;
        planner_error err = PLANNER_ERROR_INIT;
        char got[1024];
        ck_assert_int_eq(load_text(cases[i].text, &v, &err), PLANNER_E_INPUT);
        ck_assert_ptr_null(v);
        snprintf(got, sizeof got, "%d:%d: %s", err.line, err.col, err.msg);
        ck_assert_msg(strcmp(got, cases[i].want) == 0, "case %zu:\n  got    %s\n  expect %s", i,
                      got, cases[i].want);
    }
}
END_TEST

/* The published-runs corpus with the shipped model library, as `planner
 * validate` reads it, into *v; false (a SKIP line for `what`) without it. */
static bool corpus_load(validation_set **v, const char *what)
{
    const char *shared = tu_shared_dir();
    char path[1024];
    planner_error err = PLANNER_ERROR_INIT;
    *v = NULL;
    if (shared == NULL) {
        tu_skip(what, "../shared absent");
        return false;
    }
    snprintf(path, sizeof path, "%s/validation/published-runs.json", shared);
    if (access(path, R_OK) != 0) {
        tu_skip(what, "../shared/validation/published-runs.json unreadable");
        return false;
    }
    ck_assert_int_eq(validation_load_library(v, path, "configs", &err), PLANNER_OK);
    return true;
}

/* NeMo-Framework-Launcher 24.07's nemotron_340b.yaml keeps Adam's state in
 * bf16 (optim.dtype bf16): the corpus's Nemotron-4 340B row gets
 * opt_state=bf16 from run_stacks.c and no other row does (the GPT-3,
 * Llama and Nemotron 8B/22B rows of the same source keep fp32 moments, with
 * the main weights as 16-bit remainders: opt_state=fp32_rem, every other
 * nemo2407_ row and no row of another source).
 * With it the row fits without recompute: -20.9% (full recompute) ->
 * -0.5%. */
START_TEST(recipe_opt_state_nemotron_340b_only)
{
    validation_set *v;
    planner_error err = PLANNER_ERROR_INIT;
    cost_params p;
    int hits = 0;
    if (!corpus_load(&v, "test_validate recipe_opt_state"))
        return;
    cost_params_default(&p);
    for (int i = 0; i < v->n; i++) {
        bool want = strcmp(v->run[i].id, "nemo2407_h100_nemotron_340b_128gpu") == 0;
        bool nemo = strncmp(v->run[i].id, "nemo2407_", 9) == 0;
        ck_assert_msg((v->run[i].fix.opt_state == OPT_STATE_BF16) == want, "%s: opt_state %d",
                      v->run[i].id, v->run[i].fix.opt_state);
        ck_assert_msg((v->run[i].fix.opt_state == OPT_STATE_FP32_REM) == (nemo && !want),
                      "%s: opt_state %d", v->run[i].id, v->run[i].fix.opt_state);
        if (want) {
            plan best;
            hits++;
            ck_assert_int_eq(validation_predict(&best, &v->run[i], &p, &err), PLANNER_OK);
            ck_assert_int_eq(best.s.opt_state, OPT_STATE_BF16);
            ck_assert_int_eq(best.s.recompute, RECOMPUTE_NONE);
            ck_assert_msg(fabs(best.e.tokens_per_s_per_gpu / 326.0 - 1) < 0.05, "%.1f tokens/s",
                          best.e.tokens_per_s_per_gpu);
        }
    }
    ck_assert_int_eq(hits, 1);
    validation_free(v);
}
END_TEST

/* The Megatron-LM README's GPT-3 Example (175B, tp 8 pp 16 on 1024 A100,
 * about 32 s per iteration) was measured with the code of Jan 2021
 * (run_stacks.c): megatron-lm-2020, so no interleaving (vpp 1) and every TP
 * rank sends the whole activation to the next stage.  On megatron-lm-2021
 * (vpp 6 by the search, scatter/gather) it was +10.8%; vpp 1 alone +4.5%;
 * both +2.3% (98.2 against 96.0 tokens/s per GPU). */
START_TEST(gpt3_example_jan_2021_stack)
{
    validation_set *v;
    planner_error err = PLANNER_ERROR_INIT;
    cost_params p;
    plan best;
    int at = -1;
    if (!corpus_load(&v, "test_validate gpt3_example"))
        return;
    cost_params_default(&p);
    for (int i = 0; i < v->n && at < 0; i++)
        if (strcmp(v->run[i].id, "megatron_readme2021_gpt3_175b_1024gpu") == 0)
            at = i;
    ck_assert_int_ge(at, 0);
    ck_assert_int_eq(v->run[at].c->stack, STACK_MEGATRON_LM_2020);
    ck_assert_int_eq(validation_predict(&best, &v->run[at], &p, &err), PLANNER_OK);
    ck_assert_int_eq(best.s.vpp, 1);
    ck_assert_int_eq(best.s.pp, 16);
    ck_assert_msg(fabs(best.e.tokens_per_s_per_gpu / 96.0 - 1) < 0.04, "%.1f tokens/s",
                  best.e.tokens_per_s_per_gpu);
    validation_free(v);
}
END_TEST

/* MAPE and max error of `subset` over the corpus with the defaults; *n the
 * runs predicted.  Every dense 16-bit run must be predictable. */
static void corpus_errors(validation_subset subset, double *mape, double *worst, int *n)
{
    validation_set *v;
    cost_params p;
    double sum = 0;
    int i;
    *mape = *worst = 0;
    *n = 0;
    if (!corpus_load(&v, "test_validate published_runs"))
        return;
    cost_params_default(&p);
    for (i = 0; i < v->n; i++) {
        plan best;
        planner_error e2 = PLANNER_ERROR_INIT;
        planner_status st;
        double e;
        if (v->run[i].subset != subset || v->run[i].unsupported[0])
            continue;
        st = validation_predict(&best, &v->run[i], &p, &e2);
        if (subset == SUBSET_DENSE16)
            ck_assert_msg(st == PLANNER_OK, "%s: %s", v->run[i].id, e2.msg);
        if (st != PLANNER_OK)
            continue;
        e = fabs(best.e.tokens_per_s_per_gpu - v->run[i].measured_tokens_per_s_per_gpu) /
            v->run[i].measured_tokens_per_s_per_gpu;
        sum += e;
        if (e > *worst)
            *worst = e;
        (*n)++;
    }
    *mape = *n > 0 ? sum / *n : 0;
    validation_free(v);
}

START_TEST(published_runs_dense16_target)
{
    double mape, worst;
    int n;
    corpus_errors(SUBSET_DENSE16, &mape, &worst, &n);
    if (n == 0)
        return;
    ck_assert_int_eq(n, 53);
    /* the issue: MAPE <= 10%, max <= 25%; reached: 7.3%, 21.4% while ZeRO-2
     * was costed as one 16-bit reduce a step and chosen for most runs;
     * 7.6%, 26.2% with ZeRO-2 costed as Megatron-FSDP runs it (a fp32
     * reduce-scatter per micro-batch) and the runs on the distributed
     * optimizer they used: the worst, mcore080_h100_weak_32b (-26.2%), is
     * one micro-batch per step whose fp32 gradient reduce shows; with each
     * run on its software stack (fit/run_stacks.c): 6.9%, 26.2%; 6.2%, 20.5%
     * with the network collectives' own overlap share (overlap_exposed_net:
     * the Megatron-Core r0.8.0 weak-scaling rows' DP reduce over the NICs,
     * 32B -26.2% -> -5.8%); 6.4%, 20.5% after the refit of the tensor-core
     * and attention efficiencies (Blackwell's own); 5.1%, 20.3% with the
     * Megatron-LM 2020 runs on the full recompute they ran (the 2020
     * stack's host time and Volta's gemm_eff refitted, layer_cost.c round
     * 7); 4.9%, 20.3% with the README's GPT-3 Example on the Jan 2021 code
     * it ran (megatron-lm-2020: no interleaving, no scatter/gather; +10.8%
     * -> +2.3%).  Bounds half a point above */
    ck_assert_msg(mape <= 0.054, "MAPE %.2f%% (max %.1f%%)", 100 * mape, 100 * worst);
    ck_assert_msg(worst <= 0.208, "max %.1f%% (MAPE %.2f%%)", 100 * worst, 100 * mape);
}
END_TEST

START_TEST(published_runs_fp8_guard)
{
    double mape, worst;
    int n;
    corpus_errors(SUBSET_FP8, &mape, &worst, &n);
    if (n == 0)
        return;
    /* every FP8 run but MoE: the 14 Llama 3.1 405B runs interleave over the
     * embedding/loss-accounting split (126 layers) */
    ck_assert_int_ge(n, 38);
    /* reached: 8.0%, 20.6% on 38 runs with FP8-saved GEMM inputs (cost.c
     * layer_act_bytes); 8.8%, 25.8% before; 8.9%, 25.8% on 24 runs before
     * the 405B runs.  11.3%, 30.2% with ZeRO-2 costed from Megatron-FSDP's
     * mechanism: the NeMo 24.07 runs (GPT-3 20B/175B, Nemotron 340B) no
     * longer fit without recompute on the distributed optimizer's fp32
     * gradients (-24%); the FSDP Llama 3 70B rows (-30%) pick ZeRO-3.
     * 14.1%, 38.3% since validate pins unvalidated knob values off
     * (ZeRO-2, which 11 rows had taken: the FSDP rows now run ZeRO-3 as
     * their recipes do, the Llama 3.1 405B GB300 rows full recompute).
     * 11.0%, 38.3% with the gradients their recipes reduce in bf16
     * (grad_reduce_bf16 from run_stacks.c: NeMo 24.07's grad_sync_dtype=bf16,
     * Megatron-Bridge's grad_reduce_in_fp32 = False): GPT-3 20B and 175B at
     * 512 GPUs fit without recompute again (-24.6% -> +0.0%, -24.9% ->
     * -0.0%), the GB300 405B rows too; 8.6%, 21.1% with Megatron-FSDP's
     * ZeRO-3 costed as it runs (layers gathered ahead, hidden under the
     * compute: evaluate.c rank_zero3_prefetch): the four FSDP rows -38.3,
     * -33.4, -30.2, -21.5% -> -9.7, -14.6, -10.4, -7.7%.  9.0%, 20.6% with
     * the network collectives' own overlap share (the NeMo 24.07 rows'
     * exposed DP reduce shrinks: +5..+14% -> +6..+14%), 8.5%, 20.9% after
     * the refit (Blackwell's and Blackwell Ultra's own FP8 GEMM and
     * attention efficiencies); 7.8%, 20.9% with per-tensor FP8 weights at
     * 1 B on Blackwell (memory_fp8_weights_single: the GB200 405B rows fit
     * without recompute, -14.6/-11.5% -> +1.0/+4.7%); 8.1%, 20.9% with
     * ZeRO-3 waiting per micro-batch and FP8 primary weights only with the
     * distributed optimizer or FSDP; 7.5%, 19.6% with the Nemotron-4 340B
     * row's bf16 Adam state (opt_state=bf16 from run_stacks.c: it fits
     * without recompute, -20.9% -> -0.5%).  6.4%, 16.1% with no
     * residual-dropout masks at the recipes' dropout 0 (the GB200 405B rows
     * fit their recipe's distributed optimizer without recompute), the
     * NVFP4 405B recipes' TP overlap off and the FP8 GEMM efficiencies
     * refitted.  5.8%, 17.2% with MXFP8's block-scaled GEMM rate on
     * Blackwell (compute.c MX_GEMM_RATE) and Blackwell's two FP8 GEMM
     * efficiencies refitted (the GB200 Llama 3 70B row -16.1% -> -17.2%).
     * Bounds half a point above */
    ck_assert_msg(mape <= 0.063, "FP8 MAPE %.2f%% (max %.1f%%)", 100 * mape, 100 * worst);
    ck_assert_msg(worst <= 0.177, "FP8 max %.1f%% (MAPE %.2f%%)", 100 * worst, 100 * mape);
}
END_TEST

START_TEST(published_runs_moe_guard)
{
    double mape, worst;
    int n;
    corpus_errors(SUBSET_MOE, &mape, &worst, &n);
    if (n == 0)
        return;
    /* 39 MoE runs (Megatron-Bridge tables), all predicted: the 7 DeepSeek-V3
     * rows with virtual stages over 61 layers run on a
     * --pipeline-model-parallel-layout (model/layout.c; before it they were
     * unsupported: 32 predicted, 27.6% / 91.7%; then 26.1% / 91.7%; 24.9%,
     * 83.5% with ZeRO-2 costed per micro-batch: the runs on the distributed
     * optimizer).  With the all-to-alls overlapped where Megatron allows it
     * (ep_comm_overlap, the search's choice on these rows, which do not
     * say): 23.6%, max 101.0% (H100 Qwen3-30B pp 2 vpp 24, measured 1.7x
     * slower than the same model at vpp 12 a release later); 24.9%, 83.5%
     * since validate pins unvalidated knob values off (the rows do not say
     * they overlapped); 25.9%, 91.7% with the bf16 gradient reduce their
     * recipes set (the DeepSeek, gpt-oss and Qwen3 performance configs of
     * Megatron-Bridge v0.2-v0.5 turn grad_reduce_in_fp32 off): the too-fast
     * rows get faster (B200 gpt-oss 120B bf16 +57.3% -> +91.7%: two
     * micro-batches a step, its expert-gradient reduce halves).  The host-paced
     * MoE layer (moe_host_s; 67.0% / 210.6% without, on the 32) as before;
     * the same knobs measured up to 1.7x apart
     * between container releases (docs/validation.md).  On the models'
     * published configs (the model library: gated experts, head_dim
     * 128/64, MLA, windows, dense layers, MTP) and moe_host_s refitted
     * 2.25 -> 1.5 ms: 26.2%, 47.9% (29.2%, 54.3% at 2.25 ms).  26.3%, 50.5%
     * with the network collectives' own overlap share and the round-6 refit:
     * the too-fast rows' DP reduce over the NICs hides more (B200 gpt-oss
     * 120B bf16 +47.9% -> +50.5%, its cause not established).  23.7%, 50.5%
     * with the full-iteration CUDA graph of Megatron-Bridge 26.08's GB200/
     * GB300 MXFP8 recipes (run_stacks.c run_recipe_for_system: no host time
     * in their MoE layers; the eight 26.08 rows -35.5% -> -10.4% on average,
     * MAPE 35.5% -> 22.0%).  22.3%, 50.5% with the selective recompute of
     * MLA's up-projections that Megatron-Bridge's DeepSeek-V3 recipes on
     * GB200, B200 and B300 set (run_stacks.c): those rows no longer need
     * full recompute or an unbalanced split to fit (GB200 -13.0..-22.5%,
     * from -32.6..-38.7%); 21.8%, 50.5% with 26.06's GB300 MXFP8 DeepSeek-V3
     * recipe's full-iteration graph (-44.5% -> -26.7%); 21.1%, 50.5% with
     * the flex token dispatcher (HybridEP) of 26.06's Qwen3-30B-A3B H100
     * FP8 recipe: each token crosses to the other node once (ep 16 over
     * two nodes: -43.2% -> -15.8%); 19.3%, 50.5% with the all-to-all
     * overlap the full-iteration recipes set (26.06/26.08 GB200/GB300 MXFP8)
     * and 25.11's GB200/GB300 DeepSeek-V3 rows without MTP ("w/o MTP" in
     * the source's table); 18.6%, 50.5% with 26.06's Qwen3-30B-A3B B300
     * MXFP8 recipe's full-iteration graph and all-to-all overlap (-33.7% ->
     * -5.6%); 17.9%, 50.5% with the HybridEP flex dispatcher the GB200/
     * GB300 Qwen3 and DeepSeek-V3 recipes (and 26.04/26.06's B200/B300
     * DeepSeek-V3, 26.06's B300 Qwen3-30B and gpt-oss ones) run, one copy
     * of a token per destination rank (GB200 Qwen3-30B 25.11 -5.8% ->
     * -0.2%, GB300 Qwen3-235B 25.11 -28.4% -> -26.6%); 17.5%, 50.5% with
     * the FP8 attention of 26.08's gpt-oss GB200/GB300 MXFP8 recipes, whose
     * windowed layers' backward scores every causal key (+46.4% -> +38.7%,
     * +27.8% -> +21.6%).  Bounds half a point above.  The max is 68.1%
     * since the FP8 MoE activations' GroupedLinear copies
     * (layer_cost.c moe_fp8_saved_delta): 25.11's H100 Qwen3-30B-A3B row
     * (recompute unpublished) fits without recompute, where the model
     * predicts 8,865 tokens/s against the 5,275 measured (25.09's table:
     * 10,494 at the same layout).  12.8% with the host time the recipes'
     * Transformer Engine graphs of the router and the dispatch
     * preprocessing leave with the flex dispatcher (layer_cost.c
     * MOE_HOST_GRAPHED_S: the GB200/GB300 Qwen3 and DeepSeek-V3 rows of
     * 25.11 and 26.02.01, GB200 Qwen3-235B 26.02.01 -30.1% -> -4.2%); 12.4%
     * with it in proportion to the local experts (0.53 ms at 8); 11.7%
     * with moe_host_s refitted 1.5 -> 1.75 ms; 11.4% with FP8 attention at
     * cuDNN's measured rate for its shape where the recipes set it
     * (layer_cost.c cost_fp8_attention_ratio: GB300 DeepSeek-V3 26.08
     * -14.3% -> -10.0%, 26.06 -15.2% -> -10.9%); 11.3% with the output
     * layer in MXFP8 where the recipes set fp8_output_proj (layer_cost.c
     * add_output_cost: DeepSeek-V3 GB200/GB300 26.06/26.08 4-5 points
     * faster, gpt-oss GB200/GB300 26.08 +20.5% -> +24.2%, +14.3% -> +19.4%);
     * 11.1% with HybridEP's overlapped all-to-all costing the compute the
     * share of its 32 SMs (layer_cost.c ep_overlap_constants: the 10
     * overlapped flex rows 3.5-5.5 points faster) */
    ck_assert_int_ge(n, 39);
    ck_assert_msg(mape <= 0.113, "MoE MAPE %.2f%% (max %.1f%%)", 100 * mape, 100 * worst);
    ck_assert_msg(worst <= 0.620, "MoE max %.1f%% (MAPE %.2f%%)", 100 * worst, 100 * mape);
}
END_TEST

/* `planner validate --format json`: the document jansson writes (keys of
 * docs/validation.md, the measured figure of the input, null
 * for subsets without a predicted run), and every allocation failing in
 * turn: out of memory (exit 70) with nothing on stdout, or the same text. */
static int run_validate_json(const char *runs_path, char **text)
{
    char *argv[] = {"validate", "--format", "json", (char *)runs_path, NULL};
    char out_path[] = "/tmp/planner-test-out-XXXXXX";
    int fd = mkstemp(out_path), saved_out, saved_err, devnull, rc;
    long n;
    FILE *f;

    ck_assert_int_ge(fd, 0);
    fflush(stdout);
    fflush(stderr);
    saved_out = dup(STDOUT_FILENO);
    saved_err = dup(STDERR_FILENO);
    devnull = open("/dev/null", O_WRONLY);
    ck_assert(saved_out >= 0 && saved_err >= 0 && devnull >= 0);
    dup2(fd, STDOUT_FILENO);
    dup2(devnull, STDERR_FILENO);
    rc = cmd_validate(4, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, STDOUT_FILENO);
    dup2(saved_err, STDERR_FILENO);
    close(saved_out);
    close(saved_err);
    close(devnull);
    close(fd);
    f = fopen(out_path, "r");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    *text = calloc((size_t)n + 1, 1);
    ck_assert_ptr_nonnull(*text);
    ck_assert_int_eq(fread(*text, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    unlink(out_path);
    return rc;
}


/* torchtitan's CP runs all-gather K and V (its default rotate method,
 * run_stacks.c): the memory corpus's Table 2 rows at cp 2, 4, 8 get
 * cp_comm all_gather, the cp 1 row keeps the type free (it exists only with
 * CP: pinned at cp 1 the run would be refused). */
START_TEST(recipe_torchtitan_cp_allgather)
{
    validation_set *v = NULL;
    planner_error err = PLANNER_ERROR_INIT;
    ck_assert_msg(validation_load(&v, "tests/data/memory-runs.json", &err) == PLANNER_OK, "%s",
                  err.msg);
    ck_assert_str_eq(v->run[2].id, "torchtitan_h100_llama31_8b_fsdp8_cp1_seq32768");
    ck_assert_int_eq(v->run[2].fix.cp, 1);
    ck_assert_int_eq(v->run[2].fix.cp_comm, -1);
    for (int i = 3; i <= 5; i++) {
        ck_assert_int_gt(v->run[i].fix.cp, 1);
        ck_assert_int_eq(v->run[i].fix.cp_comm, CP_COMM_ALLGATHER);
    }
    validation_free(v);
}
END_TEST

/* The memory corpus (tests/data/memory-runs.json, in the repository: no
 * SKIP): every run has a measured peak, and validate reports the error of
 * the chosen plan's peak (of the closest miss when no plan fits).  The
 * figures are the model's today (docs/validation.md, "Memory"): the
 * torchtitan runs on the pytorch-fsdp2 stack's memory mechanisms (its
 * op-level selective checkpointing, the eager cross-entropy on upcast
 * logits, FSDP2's gathered root and, with pipelining, the whole stage's
 * weights and fp32 accumulated gradients: cost/memory.c). */
/* The Megatron-LM functional tests' rows of tests/data/memory-runs.json
 * (runs 18-23: gpt3_7b_tp1_pp4 and gpt3_7b_tp4_pp1 memory_speed on H100,
 * A100, GB200), whose golden values give the last rank's peak allocated
 * bytes (mem-max-allocated-bytes).  Their last pipeline rank holds 8
 * layers of 176,207,872 parameters (QKV 4096 x 6144, projection 4096^2,
 * fc1 and fc2 4096 x 16384, with biases and two LayerNorms) and the untied
 * output layer 131,200 x 4096: 1,947,058,176 (the final LayerNorm's 8,192
 * are counted with the model, not the stage), at
 * 2 (bf16) + 4 (fp32 gradients) + 12 / dp 2 (the distributed optimizer's
 * fp32 main weights and moments) = 12 B each.  Predicted over what was
 * allocated by +2.7..+4.5% (the reserve and fragmentation share
 * included); +8.3..+8.8% (tp1 pp4) when Megatron-Core was costed with
 * Megatron-LM's all-forwards-first at m == pp (memory_inflight). */
static void memory_corpus_megatron(const validation_set *v, const validation_outcome *res)
{
    static const double k_measured[6] = {60720852992.0, 60489064448.0, 60519342080.0,
                                         57143791616.0, 58188115968.0, 58217476096.0};
    for (int i = 18; i < 24; i++) {
        const validation_run *r = &v->run[i];
        const evaluation *e = &res[i].pl.e;
        ck_assert_msg(strncmp(r->id, "mlm_functest_gpt3_7b_", 21) == 0, "%s", r->id);
        ck_assert_int_eq(r->c->stack, STACK_MEGATRON_CORE);
        ck_assert_int_eq(res[i].status, VALIDATION_OK);
        ck_assert(!r->m->tied_embeddings);
        /* the golden file's bytes, as GiB to 3 decimals in the corpus */
        ck_assert_double_eq_tol(r->measured_peak_memory_bytes, k_measured[i - 18],
                                0.0006 * 1073741824.0);
        ck_assert_msg(res[i].mem_error > 0.0 && res[i].mem_error < 0.05, "%s %+.1f%%", r->id,
                      100 * res[i].mem_error);
        if (i < 21) {
            const memory_breakdown *mb = &e->stage_memory[3];
            ck_assert_int_eq(res[i].pl.s.pp, 4);
            ck_assert_int_eq(res[i].pl.s.vpp, 8);
            ck_assert_int_eq(e->peak_stage, 3);
            ck_assert_double_eq_tol((mb->weights_bytes + mb->grads_bytes + mb->optimizer_bytes),
                                    12.0 * 1947058176.0, 1e3);
            ck_assert_msg(res[i].mem_error < 0.035, "%s %+.1f%%", r->id, 100 * res[i].mem_error);
        }
    }
}

/* memory_corpus' torchtitan Tables 1 and 2 (rows 0, 7 and 2-5): the
 * mechanisms each figure is derived from. */
static void memory_corpus_tables(const validation_set *v, const validation_outcome *res)
{
    /* torchtitan Table 1, FSDP on 8 GPUs: 82.4 GiB measured (reserved),
     * refused at 105.9 GiB while the pytorch-fsdp2 stack was costed with
     * Megatron's selective recompute and fp32 logits; with torchtitan's
     * op-level SAC, its eager cross-entropy and FSDP2's gathered root and
     * blocks (cost/memory.c) it runs, at 80.96 GiB (86.933 GB); torchtitan's
     * Llama has no dropout (fit/run_stacks.c), so the layer at work keeps no
     * residual-dropout masks: 2 x 2 x 8192 tokens x 4096 x 1 B = 128 MiB, with
     * the 10% fragmentation share 147.7 MB less, 86.786 GB (80.83 GiB); FSDP2's
     * copy-in stream keeps the root's all-gather output (1,050,677,248 x 2 B)
     * while the first block's is gathered (memory_fsdp2_unsharded_bytes),
     * 2.1 GB more with its share, 89.097 GB (82.98 GiB) */
    ck_assert_str_eq(v->run[0].id, "torchtitan_h100_llama31_8b_fsdp8");
    ck_assert_int_eq(res[0].status, VALIDATION_OK);
    ck_assert_double_eq_tol(res[0].mem_predicted_bytes,
                            86.9332e9 - 1.1 * 134217728.0 + 1.1 * 2101354496.0, 1e6);
    ck_assert_double_eq_tol(v->run[0].measured_peak_memory_bytes / 1073741824.0, 82.4, 1e-9);
    /* the same run under torch.compile (Table 1, 77.0 GiB; the source names
     * it: run_compiled_for_system): the blocks' partitioner keeps no w2
     * output, 2 h = 8,192 B per token and layer less (memory_op_sac_bytes),
     * which the recompute's working set (full - saved) takes back for the
     * one layer at work: 31 x 8192 x 16,384 tokens x 1.1 (the fragmentation
     * share) = 4,576,824,525 B less than the eager row's 89.097 GB, 78.72
     * GiB (+2.2%; 83.0 GiB, +7.8% before) */
    ck_assert_str_eq(v->run[7].id, "torchtitan_h100_llama31_8b_fsdp8_compile");
    ck_assert(!v->run[0].m->torch_compile);
    ck_assert(v->run[7].m->torch_compile);
    /* and the run's note says so, like the other model facts */
    ck_assert_ptr_null(strstr(v->run[0].shape_note, "torch.compile"));
    ck_assert_ptr_nonnull(strstr(v->run[7].shape_note,
                                 "blocks under torch.compile (the source's row)"));
    ck_assert_double_eq_tol(res[7].mem_predicted_bytes,
                            res[0].mem_predicted_bytes - 1.1 * 31 * 8192.0 * 16384, 1e3);
    /* Table 2: 32,768 tokens per GPU at CP 1, 2, 4, 8 (FSDP 8, 4, 2, 1), the
     * same 84 GiB measured: the states shard over dp x cp, so the four are
     * predicted alike and none is refused (FSDP 1 CP 8 was refused at 151
     * GiB when they sharded over dp alone) */
    for (int i = 3; i <= 5; i++) {
        ck_assert_int_eq(res[i].status, VALIDATION_OK);
        ck_assert_double_eq_tol(res[i].mem_predicted_bytes / res[2].mem_predicted_bytes, 1.0,
                                0.005);
    }
}

/* The Trainy team's torchtitan runs (rows 24-25: Llama 3.1 8B, FSDP 32 and
 * 64 on H200, local batch 2, compile + Float8; 47.96 and 46.97 GiB
 * reserved): torchtitan e7c0cae compiles the loss with training.compile
 * (run_stacks.c, model.loss_compiled), 4 B per logit in place of the eager
 * 12 (memory_loss_bytes): 8 x 16384 x 128256 B less, with the 10%
 * fragmentation share 18.49 GB.  Predicted +40.1% / +39.1% with the eager
 * loss, +4.2% / +2.4% with it; the Dec 2024 rows (whose 9dec370 left the
 * loss eager) have no compiled loss. */
static void memory_corpus_trainy(validation_set *v, const validation_outcome *res,
                                 const cost_params *p)
{
    static const double k_gib[2] = {47.96, 46.97};
    planner_error err = PLANNER_ERROR_INIT;
    plan eager;
    for (int i = 0; i < 24; i++)
        ck_assert_msg(!v->run[i].m->loss_compiled, "%s", v->run[i].id);
    for (int i = 24; i < 26; i++) {
        validation_run *r = &v->run[i];
        ck_assert_msg(strstr(r->id, "torchtitan_trainy_h200_llama31_8b_fsdp") == r->id, "%s",
                      r->id);
        ck_assert_int_eq(r->c->stack, STACK_PYTORCH_FSDP2);
        ck_assert(r->m->torch_compile && r->m->loss_compiled);
        ck_assert_double_eq_tol(r->measured_peak_memory_bytes / 1073741824.0, k_gib[i - 24],
                                1e-9);
        ck_assert_msg(res[i].mem_error > 0.0 && res[i].mem_error < 0.05, "%s %+.1f%%", r->id,
                      100 * res[i].mem_error);
        r->m->loss_compiled = false;
        ck_assert_int_eq(validation_predict(&eager, r, p, &err), PLANNER_OK);
        r->m->loss_compiled = true;
        ck_assert_double_eq_tol(eager.e.peak_memory_bytes - res[i].mem_predicted_bytes,
                                1.1 * 8.0 * 16384 * 128256, 1e6);
        ck_assert_msg(eager.e.peak_memory_bytes / r->measured_peak_memory_bytes - 1.0 > 0.35,
                      "%s eager", r->id);
    }
}

START_TEST(memory_corpus)
{
    validation_set *v = NULL;
    validation_outcome *res = NULL;
    validation_summary sum;
    planner_error err = PLANNER_ERROR_INIT;
    cost_params p;
    int i;
    ck_assert_msg(validation_load(&v, "tests/data/memory-runs.json", &err) == PLANNER_OK, "%s",
                  err.msg);
    cost_params_default(&p);
    ck_assert_int_eq(validation_predict_all(&res, &sum, v, &p, 1, &err), PLANNER_OK);
    ck_assert_int_eq(sum.mem_cnt, v->n);
    for (i = 0; i < v->n; i++) {
        ck_assert(v->run[i].measured_peak_memory_bytes > 0);
        ck_assert_msg(res[i].mem_have, "%s", v->run[i].id);
        ck_assert_double_eq_tol(res[i].mem_error, res[i].mem_predicted_bytes /
                                v->run[i].measured_peak_memory_bytes - 1.0, 1e-12);
    }
    memory_corpus_tables(v, res);
    /* issue 12's target: mean <= 5%, none under-predicted by more than 5%,
     * none refused -- met since the first stage's embedding holds its whole
     * V x h gradient (memory_fsdp2_embedding_grad_bytes) and its backward's
     * working set (memory_fsdp2_embedding_bwd_bytes), with llama3_405b.toml's
     * FP8 all-gather (model.fsdp_fp8_gather): MAPE 3.1% over all 26, the
     * most under-predicted -4.0% (Table 5 1F1B; 3.3%, -5.7% before, with
     * Table 5 1F1B -5.6% and Table 6 FSDP 1 CP 8 -5.7%; 3.1%, -7.6% before
     * the last FSDP group's reduce-scatter input kept through the step
     * under torch's pipelining, memory_fsdp2_unsharded_bytes; 4.5%
     * before the compiled blocks' saved set, memory_op_sac_bytes), the
     * most under-predicted -7.6% (3.5%, -10.7% before FSDP2's all-gather
     * outputs in the copy-in stream's pool, memory_fsdp2_unsharded_bytes;
     * 4.4%, -8.7% before the input gradients torch's pipeline stages keep,
     * memory_pipe_input_grad_bytes).  Table 6 FSDP 8 CP 1 was -7.7% before
     * the pipeline stage's per-micro-batch buffers (memory_pipe_buffers_bytes),
     * -4.8% with them, -2.1% with the last stage's kept outputs and FSDP2's
     * gradients followed through the schedule (memory_schedule_peak_bytes;
     * MAPE 4.0%, Table 5 1F1B -13.3% before) */
    ck_assert_int_eq(v->n, 26);
    for (i = 0; i < v->n; i++)
        ck_assert_msg(res[i].mem_error > -0.05 && res[i].mem_error < 0.07, "%s %+.1f%%",
                      v->run[i].id, 100 * res[i].mem_error);
    /* the 1F1B rows run one stage per rank (vpp 1, as the corpus says) */
    ck_assert_str_eq(v->run[12].id, "torchtitan_h100_llama31_405b_fsdp8_tp8_pp8_1f1b");
    ck_assert_int_eq(v->run[12].fix.vpp, 1);
    ck_assert_int_eq(res[12].pl.s.vpp, 1);
    /* its peak is now rank 0 (the embedding's stage: 79.2 GiB), not the
     * last rank's kept logits (77.9 GiB before) */
    ck_assert_int_eq(res[12].pl.e.peak_stage, 0);
    /* the FP8 all-gather: the 405B tables' config and the Trainy runs', not
     * the 8B / 70B rows of Tables 1-4 (their configs do not say) */
    ck_assert(v->run[12].m->fsdp_fp8_gather && v->run[17].m->fsdp_fp8_gather);
    ck_assert(v->run[24].m->fsdp_fp8_gather && v->run[25].m->fsdp_fp8_gather);
    ck_assert(!v->run[8].m->fsdp_fp8_gather && !v->run[11].m->fsdp_fp8_gather);
    ck_assert_ptr_nonnull(strstr(v->run[12].shape_note, "FSDP all-gathers Float8Linear"));
    ck_assert_int_eq(sum.mem_refused, 0);
    /* Table 5 Interleaved 1F1B at m == pp: PyTorch's warm-up, not
     * Megatron's all forwards first (memory_inflight's pipe): its last rank
     * +12.7% before (82.0 GiB of 72.7), +4.7% with it; -1.2% since its
     * ranks' first chunks get their FSDP2 gradients after the warm-up's
     * peak and its last rank's working set is the chunk's at work
     * (memory_schedule_peak_bytes); +5.0% with the kept reduce-scatter
     * input; +2.9% with the embedding's terms and the FP8 all-gather */
    ck_assert_str_eq(v->run[13].id, "torchtitan_h100_llama31_405b_fsdp8_tp8_pp8_interleaved");
    ck_assert_msg(res[13].mem_error < 0.035, "interleaved %+.1f%%", 100 * res[13].mem_error);
    ck_assert_msg(sum.mem_sum / sum.mem_cnt <= 0.0315, "memory MAPE %.1f%%",
                  100 * sum.mem_sum / sum.mem_cnt);
    ck_assert_msg(sum.mem_min_signed >= -0.0405, "most under %.1f%%", 100 * sum.mem_min_signed);
    memory_corpus_megatron(v, res);
    memory_corpus_trainy(v, res, &p);
    pl_free(res);
    validation_free(v);
}
END_TEST

/* The caching allocator measured (tests/data/allocator-runs.json, written by
 * bench/gpu/alloc_gap.py on one H200: one rank of torchtitan-shaped steps
 * over torch's fake process group, bf16 eager, expandable segments;
 * docs/validation.md "The caching allocator, measured").  What the model
 * must get right against them: the peak it predicts is never under what was
 * reserved by more than 5% (an OOM) nor over by more than 7%, and what it
 * counts as allocated (the peak stage's total less its reserve) is never
 * under what was allocated -- the reserve term cannot stand in for an
 * allocation.  Measured: 66.74 / 67.67 / 36.72 GiB allocated, 79.51 /
 * 84.36 / 45.04 reserved (Table 1's 8B shape, Table 2's 8B at 32k, Table
 * 4's 70B per-rank shape with 8 layers); predicted 83.1 / 87.7 / 47.9
 * (+4.5 / +3.9 / +6.3%), of which reserve (1 GiB + 10% of the
 * activations) 7.1 / 7.5 / 5.2 against the measured gaps of 12.8 / 16.7 /
 * 8.3 GiB: the totals hold because the allocated part is over by 9.3 /
 * 12.5 / 5.9 GiB. */
START_TEST(allocator_runs)
{
    static const char *path = "tests/data/allocator-runs.json";
    validation_set *v = NULL;
    validation_outcome *res = NULL;
    validation_summary sum;
    planner_error err = PLANNER_ERROR_INIT;
    cost_params p;
    json_t *root, *runs;
    if (access(path, R_OK) != 0) {
        tu_skip("allocator_runs", "tests/data/allocator-runs.json absent");
        return;
    }
    root = json_load_file(path, 0, NULL);
    ck_assert_ptr_nonnull(root);
    runs = json_object_get(root, "runs");
    ck_assert_msg(validation_load(&v, path, &err) == PLANNER_OK, "%s", err.msg);
    ck_assert_int_eq(v->n, 3);
    ck_assert_int_eq((int)json_array_size(runs), v->n);
    cost_params_default(&p);
    ck_assert_int_eq(validation_predict_all(&res, &sum, v, &p, 1, &err), PLANNER_OK);
    for (int i = 0; i < v->n; i++) {
        const validation_run *r = &v->run[i];
        const evaluation *e = &res[i].pl.e;
        const memory_breakdown *mb = &e->stage_memory[e->peak_stage];
        json_t *m = json_object_get(json_array_get(runs, (size_t)i), "measured");
        double alloc = json_number_value(json_object_get(m, "allocated_gib")) * 1073741824.0;
        ck_assert_int_eq(r->c->stack, STACK_PYTORCH_FSDP2);
        ck_assert_int_eq(res[i].status, VALIDATION_OK);
        ck_assert_msg(alloc > 0 && alloc < r->measured_peak_memory_bytes, "%s", r->id);
        ck_assert_msg(res[i].mem_error >= -0.05 && res[i].mem_error <= 0.07, "%s %+.1f%%", r->id,
                      100 * res[i].mem_error);
        ck_assert_msg(mb->total_bytes - mb->reserve_bytes >= alloc, "%s allocated %.2f < %.2f GiB",
                      r->id, (mb->total_bytes - mb->reserve_bytes) / 1073741824.0,
                      alloc / 1073741824.0);
    }
    json_decref(root);
    pl_free(res);
    validation_free(v);
}
END_TEST

START_TEST(json_output)
{
    char buf[4096], *path, *full, *text;
    json_t *root, *run, *jplan, *summary;
    int failures = 0;

    alloc_init();
    snprintf(buf, sizeof buf, k_run, "A100-SXM-80GB");
    path = write_tmp(buf);
    ck_assert_int_eq(run_validate_json(path, &full), PLANNER_OK);
    root = json_loads(full, JSON_REJECT_DUPLICATES, NULL);
    ck_assert_ptr_nonnull(root);
    ck_assert_str_eq(json_string_value(json_object_get(root, "file")), path);
    ck_assert_int_eq(json_array_size(json_object_get(root, "runs")), 1);
    run = json_array_get(json_object_get(root, "runs"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(run, "id")), "t1");
    ck_assert_str_eq(json_string_value(json_object_get(run, "subset")), "dense 16-bit");
    ck_assert_str_eq(json_string_value(json_object_get(run, "status")), "ok");
    /* the input's figure, at six significant digits */
    ck_assert_double_eq(json_real_value(json_object_get(run, "measured_tokens_per_s_per_gpu")),
                        148.945);
    ck_assert(json_real_value(json_object_get(run, "predicted_tokens_per_s_per_gpu")) > 0);
    ck_assert(json_is_real(json_object_get(run, "error")));
    jplan = json_object_get(run, "plan");
    /* every knob was published: the plan is Korthikanti et al.'s */
    ck_assert_int_eq(json_integer_value(json_object_get(jplan, "tp")), 8);
    ck_assert_int_eq(json_integer_value(json_object_get(jplan, "pp")), 8);
    ck_assert_int_eq(json_integer_value(json_object_get(jplan, "vpp")), 3);
    ck_assert(json_is_true(json_object_get(jplan, "sp")));
    ck_assert_str_eq(json_string_value(json_object_get(jplan, "recompute")), "selective");
    summary = json_object_get(root, "summary");
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(summary, "dense16"),
                                                        "predicted")), 1);
    ck_assert(json_is_null(json_object_get(json_object_get(summary, "fp8"), "mape")));
    ck_assert(json_is_null(json_object_get(json_object_get(summary, "moe"), "max_error")));
    ck_assert(strstr(full, "nan") == NULL && strstr(full, "inf") == NULL);
    json_decref(root);

    for (long nth = 1; nth < 1000000; nth++) {
        int rc;
        bool failed;
        alloc_fail_at(nth);
        rc = run_validate_json(path, &text);
        failed = alloc_failed();
        alloc_fail_at(0);
        if (rc == PLANNER_OK)
            ck_assert_msg(strcmp(text, full) == 0, "allocation %ld: a different document", nth);
        else
            ck_assert_msg(rc == PLANNER_E_INTERNAL && text[0] == '\0',
                          "allocation %ld: exit %d, %zu bytes written", nth, rc, strlen(text));
        free(text);
        if (!failed)
            break;
        failures += rc != PLANNER_OK;
    }
    ck_assert_int_gt(failures, 10);
    free(full);
    unlink(path);
    pl_free(path);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("validate");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, reads_a_run);
    tcase_add_test(tc, predicts_a_run);
    tcase_add_test(tc, unvalidated_knobs_pinned_off);
    tcase_add_test(tc, model_library_shapes_a_run);
    tcase_add_test(tc, recipe_cuda_graph_from_system);
    tcase_add_test(tc, recipe_facts_nvfp4_tp_overlap_and_dropout);
    tcase_add_test(tc, recipe_a2a_overlap_h100_qwen3_235b);
    tcase_add_test(tc, recipe_recompute_gptoss_b200_2602);
    tcase_add_test(tc, recipe_no_interleave_260201_qwen3_235b);
    tcase_add_test(tc, recipe_opt_state_nemotron_340b_only);
    tcase_add_test(tc, gpt3_example_jan_2021_stack);
    tcase_add_test(tc, recipe_recompute_from_model);
    tcase_add_test(tc, model_facts_whatever_the_stack);
    tcase_add_test(tc, recipe_flex_dispatcher);
    tcase_add_test(tc, model_fact_fp8_attention_gptoss);
    tcase_add_test(tc, model_facts_by_row);
    tcase_add_test(tc, recipe_full_iteration_b300_qwen3);
    tcase_add_test(tc, recipe_recompute_megatron2020);
    tcase_add_test(tc, bad_inputs_located);
    tcase_add_test(tc, implausible_measurement_refused);
    tcase_add_test(tc, errors_positioned);
    tcase_add_test(tc, run_stack_from_field_or_source);
    tcase_add_test(tc, recipe_grad_reduce_from_source);
    tcase_add_test(tc, json_output);
    tcase_add_test(tc, memory_corpus);
    tcase_add_test(tc, allocator_runs);
    tcase_add_test(tc, recipe_torchtitan_cp_allgather);
    tcase_add_test(tc, published_runs_dense16_target);
    tcase_add_test(tc, published_runs_fp8_guard);
    tcase_add_test(tc, published_runs_moe_guard);
    tcase_add_test(tc, recipe_fact_te_moe_graphs);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
