/* test_report.c: the table, the JSON document (schema in docs/json-schema.md)
 * and the infeasible report.  The JSON is read back with jansson and checked
 * key by key against the plans it was written from. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "out/report.h"
#include "testutil.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

typedef struct fixture {
    model *m;
    run_spec run;   /* the model file's */
    cluster c;
    node_group g;
    search_options o;
    search_result r;
    planner_status rc;
} fixture;

/* GPT-3 175B on `nodes` DGX H100 (usable memory overridden if gib > 0). */
static void plan_gpt3(fixture *f, int nodes, double gib, const char *fix)
{
    planner_error err = PLANNER_ERROR_INIT;
    cost_params p;
    const gpu_spec *h100 = catalog_find("H100-SXM");
    memset(f, 0, sizeof *f);
    ck_assert_int_eq(model_load(&f->m, &f->run, "configs/gpt3-175b.json", NULL, &err), PLANNER_OK);
    ck_assert_ptr_nonnull(h100);
    snprintf(f->c.name, sizeof f->c.name, "dgx-h100-x%d", nodes);
    f->c.n_groups = 1;
    f->c.group = &f->g;
    snprintf(f->g.name, sizeof f->g.name, "dgx");
    f->g.gpu = *h100;
    if (gib > 0)
        f->g.gpu.usable_mem_bytes = gib * GIB;
    f->g.nodes = nodes;
    f->g.gpus_per_node = 8;
    f->g.intra_bytes_per_s = h100->intra_node_bytes_per_s;
    f->g.inter_bytes_per_s = h100->inter_node_bytes_per_s;
    f->g.intra_latency_s = 3e-6;
    f->g.inter_latency_s = 10e-6;
    search_options_default(&f->o);
    f->o.top_n = 5;
    f->o.gbs = f->run.global_batch;
    f->o.seq_len = f->run.seq_len;
    if (fix != NULL)
        ck_assert_int_eq(constraints_parse(&f->o.fix, fix, NULL), 0);
    cost_params_default(&p);
    f->rc = search_run(&f->r, f->m, &f->c, &p, &f->o, &err);
    ck_assert_msg(f->rc == PLANNER_OK || f->rc == PLANNER_E_INFEASIBLE, "%s", err.msg);
}

static void fixture_free(fixture *f)
{
    search_result_free(&f->r);
    model_free(f->m);
}

/* Writes with `fn`-like report_json_write into memory, NUL-terminated. */
static char *json_text(fixture *f, int *rc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(fp);
    *rc = report_json_write(fp, f->m, &f->c, &f->o, &f->r);
    fclose(fp);
    return buf;
}

static json_t *parse(const char *text)
{
    json_error_t je;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    ck_assert_msg(root != NULL, "JSON does not parse: %s at line %d", je.text, je.line);
    return root;
}

static double num(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    ck_assert_msg(json_is_number(v), "'%s' is not a number", key);
    return json_number_value(v);
}

START_TEST(json_has_the_schema)
{
    static const char *const plan_keys[] = {
        "tp", "pp", "dp", "cp", "ep", "vpp", "mbs", "gbs", "sp", "recompute", "zero",
        "step_time_s", "tokens_per_s", "tokens_per_s_per_gpu", "tflops_per_gpu", "mfu",
        "peak_memory_bytes", "feasible", "time", "memory", "stages"};
    fixture f;
    int rc;
    char *text;
    json_t *root, *list, *search;
    plan_gpt3(&f, 64, 0, NULL);
    ck_assert_int_eq(f.rc, PLANNER_OK);
    text = json_text(&f, &rc);
    ck_assert_int_eq(rc, 0);
    root = parse(text);
    ck_assert_str_eq(json_string_value(json_object_get(root, "planner_version")), PLANNER_VERSION);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(root, "model"), "name")),
                     "gpt3-175b");
    ck_assert_int_eq((int)num(json_object_get(root, "cluster"), "gpus"), 512);
    search = json_object_get(root, "search");
    ck_assert_int_eq((long)num(search, "candidates"), f.r.candidates);
    ck_assert_int_eq((long)num(search, "feasible"), f.r.feasible);
    ck_assert(num(search, "seconds") == f.r.seconds);
    list = json_object_get(root, "strategies");
    ck_assert(json_is_array(list));
    ck_assert_int_eq((int)json_array_size(list), f.r.n_top);
    ck_assert_ptr_null(json_object_get(root, "closest_miss"));
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *s = json_array_get(list, i), *stages = json_object_get(s, "stages");
        const plan *pl = &f.r.top[i];
        int layers = 0;
        for (size_t k = 0; k < sizeof plan_keys / sizeof plan_keys[0]; k++)
            ck_assert_msg(json_object_get(s, plan_keys[k]) != NULL, "missing %s", plan_keys[k]);
        ck_assert_int_eq((int)num(s, "tp"), pl->s.tp);
        ck_assert_int_eq((int)num(s, "pp"), pl->s.pp);
        ck_assert_int_eq((int)num(s, "gbs"), 1536);
        ck_assert(num(s, "tokens_per_s") == pl->e.tokens_per_s);
        ck_assert(num(s, "peak_memory_bytes") == pl->e.peak_memory_bytes);
        ck_assert(json_is_true(json_object_get(s, "feasible")));
        ck_assert(json_is_boolean(json_object_get(s, "sp")));
        if (i > 0)
            ck_assert(num(json_array_get(list, i - 1), "tokens_per_s") >= num(s, "tokens_per_s"));
        ck_assert_int_eq((int)json_array_size(stages), pl->s.pp);
        for (size_t k = 0; k < json_array_size(stages); k++) {
            json_t *st = json_array_get(stages, k);
            ck_assert_str_eq(json_string_value(json_object_get(st, "gpu")), "H100-SXM");
            ck_assert(num(st, "peak_memory_bytes") <= f.g.gpu.usable_mem_bytes);
            layers += (int)num(st, "layers");
        }
        ck_assert_int_eq(layers, 96);
    }
    json_decref(root);
    free(text);
    fixture_free(&f);
}
END_TEST

START_TEST(json_when_nothing_fits)
{
    fixture f;
    int rc;
    char *text;
    json_t *root, *miss;
    plan_gpt3(&f, 1, 0, NULL);      /* 8 GPUs cannot hold GPT-3 */
    ck_assert_int_eq(f.rc, PLANNER_E_INFEASIBLE);
    text = json_text(&f, &rc);
    ck_assert_int_eq(rc, 0);
    root = parse(text);
    ck_assert_int_eq((int)json_array_size(json_object_get(root, "strategies")), 0);
    miss = json_object_get(root, "closest_miss");
    ck_assert(json_is_object(miss));
    ck_assert(json_is_false(json_object_get(miss, "feasible")));
    ck_assert(num(miss, "peak_memory_bytes") > f.g.gpu.usable_mem_bytes);
    ck_assert_str_eq(json_string_value(json_object_get(root, "advice")), f.r.advice);
    ck_assert(strlen(f.r.advice) > 0);
    json_decref(root);
    free(text);
    fixture_free(&f);
}
END_TEST

/* Names with quotes, backslashes and control characters round-trip, and
 * numbers that are not finite become null instead of invalid JSON. */
START_TEST(json_escapes_and_nonfinite)
{
    fixture f;
    int rc;
    char *text;
    json_t *root, *s;
    const char *name = "gpt \"3\" \\ 175b\n\t";
    plan_gpt3(&f, 64, 0, NULL);
    snprintf(f.m->name, sizeof f.m->name, "%s", name);
    f.r.top[0].e.mfu = NAN;
    f.r.top[0].e.tokens_per_s = INFINITY;
    text = json_text(&f, &rc);
    ck_assert_int_eq(rc, 0);
    root = parse(text);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(root, "model"), "name")),
                     name);
    s = json_array_get(json_object_get(root, "strategies"), 0);
    ck_assert(json_is_null(json_object_get(s, "mfu")));
    ck_assert(json_is_null(json_object_get(s, "tokens_per_s")));
    json_decref(root);
    free(text);
    fixture_free(&f);
}
END_TEST

/* Every allocation of the JSON writer fails in turn: the writer returns -1
 * and writes nothing (jsonout_text: the whole text or nothing; the text is
 * no longer parsed back, which jansson 2.14 did out of bounds when an
 * allocation failed). */
START_TEST(json_allocation_failures)
{
    fixture f;
    int rc, failures = 0;
    long n;
    char *full, *text;
    plan_gpt3(&f, 64, 0, NULL);
    full = json_text(&f, &rc);
    ck_assert_int_eq(rc, 0);
    for (n = 1; n < 100000; n++) {
        bool failed;
        alloc_fail_at(n);
        text = json_text(&f, &rc);
        failed = alloc_failed();
        alloc_fail_at(0);
        if (!failed) {
            ck_assert_int_eq(rc, 0);
            ck_assert_msg(strcmp(text, full) == 0, "no failure: a different document");
            free(text);
            break;
        }
        ck_assert_msg(rc == -1 && text[0] == '\0', "allocation %ld: rc %d, wrote %zu bytes", n,
                      rc, strlen(text));
        free(text);
        failures++;
    }
    /* every allocation of the document was failed once */
    ck_assert_int_eq(failures, n - 1);
    ck_assert(failures > 100);
    free(full);
    fixture_free(&f);
}
END_TEST

static char *table_text(fixture *f, bool infeasible)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(fp);
    if (infeasible)
        report_infeasible(fp, f->m, &f->c, &f->r);
    else
        report_table(fp, f->m, &f->c, &f->o, &f->r);
    fclose(fp);
    return buf;
}

START_TEST(table_shows_the_winner)
{
    fixture f;
    char *text, line[128];
    const plan *b;
    plan_gpt3(&f, 64, 0, NULL);
    text = table_text(&f, false);
    b = &f.r.top[0];
    ck_assert_msg(strstr(text, "gpt3-175b on dgx-h100-x64: 512 GPUs (64 x 8 H100-SXM), global "
                               "batch 1536, sequence 2048, bf16") != NULL, "%s", text);
    snprintf(line, sizeof line, "Best plan: tp %d, pp %d, dp %d", b->s.tp, b->s.pp, b->s.dp);
    ck_assert_msg(strstr(text, line) != NULL, "%s", text);
    snprintf(line, sizeof line, "Time per step: %.3f s", b->e.step_time_s);
    ck_assert_msg(strstr(text, line) != NULL, "%s", text);
    ck_assert(strstr(text, "pipeline bubble") != NULL);
    ck_assert(strstr(text, "activations") != NULL);
    ck_assert(strstr(text, "GiB usable") != NULL);
    ck_assert(strstr(text, "Bound by: ") != NULL);
    ck_assert(strstr(text, "candidates evaluated") != NULL);
    /* one table row per plan: "    1 ", "    2 " ... */
    for (int i = 1; i <= f.r.n_top; i++) {
        snprintf(line, sizeof line, "\n%5d ", i);
        ck_assert_msg(strstr(text, line) != NULL, "row %d missing", i);
    }
    free(text);
    fixture_free(&f);
}
END_TEST

/* A plan using a knob value no measured run validates is marked: the table
 * row ends "unvalidated: zero=2", the best plan's section says so with the
 * value's Megatron name, and the JSON plan lists it ("unvalidated":
 * ["zero=2"]); a validated plan has none of these ([] in JSON). */
START_TEST(unvalidated_knobs_marked)
{
    fixture f;
    char *text;
    int rc;
    json_t *root, *plans;
    plan_gpt3(&f, 64, 0, "zero=2,recompute_layers=0");   /* no block recompute either */
    ck_assert_int_eq(f.r.top[0].s.zero, 2);
    text = table_text(&f, false);
    ck_assert_msg(strstr(text, "  unvalidated: zero=2\n") != NULL, "%s", text);
    ck_assert_msg(strstr(text, "Unvalidated: zero=2 (Megatron-FSDP optim_grads) -- no measured "
                               "run checks this cost; counted 1% slower per such knob in the "
                               "ranking\n") != NULL, "%s", text);
    free(text);
    text = json_text(&f, &rc);
    ck_assert_int_eq(rc, 0);
    root = parse(text);
    plans = json_object_get(root, "strategies");
    for (size_t i = 0; i < json_array_size(plans); i++) {
        json_t *u = json_object_get(json_array_get(plans, i), "unvalidated");
        ck_assert_int_eq(json_array_size(u), 1);
        ck_assert_str_eq(json_string_value(json_array_get(u, 0)), "zero=2");
    }
    json_decref(root);
    free(text);
    fixture_free(&f);
    plan_gpt3(&f, 64, 0, "zero=1");
    text = table_text(&f, false);
    ck_assert(strstr(text, "nvalidated") == NULL);
    free(text);
    text = json_text(&f, &rc);
    root = parse(text);
    ck_assert_int_eq(json_array_size(json_object_get(json_array_get(json_object_get(root,
                         "strategies"), 0), "unvalidated")), 0);
    json_decref(root);
    free(text);
    fixture_free(&f);
}
END_TEST

/* Llama 3.1 405B, tp 8 pp 8 vpp 8 on the shipped 16,384-GPU cluster, over
 * Megatron's --account-for-embedding/loss-in-pipeline-split: (126 + 2) /
 * (8 x 8) = 2 layer units per chunk, chunk c of rank r is pipeline position
 * k = 8 c + r and holds layers 2k - 1 and 2k (k = 0: the embedding and
 * layer 0; k = 63: layer 125 and the loss).  The stage map and JSON
 * `stages[].chunks` show these ranges, not one contiguous range per rank. */
START_TEST(interleaved_chunks_shown)
{
    fixture f;
    cluster *c = NULL;
    planner_error err = PLANNER_ERROR_INIT;
    cost_params p;
    char *text;
    int rc;
    memset(&f, 0, sizeof f);
    ck_assert_int_eq(model_load(&f.m, NULL, "configs/llama3.1-405b.json", NULL, &err), PLANNER_OK);
    ck_assert_int_eq(cluster_load(&c, "clusters/h100x16384.yaml", &err), PLANNER_OK);
    f.c = *c;   /* borrows c's groups */
    search_options_default(&f.o);
    f.o.top_n = 1;
    f.o.gbs = 2048;
    f.o.seq_len = 8192;
    ck_assert_int_eq(constraints_parse(&f.o.fix, "tp=8,pp=8,vpp=8,mbs=1", NULL), 0);
    cost_params_default(&p);
    ck_assert_int_eq(search_run(&f.r, f.m, &f.c, &p, &f.o, &err), PLANNER_OK);
    ck_assert(f.r.top[0].s.account_embedding && f.r.top[0].s.account_loss);

    text = table_text(&f, false);
    ck_assert_msg(strstr(text, "layers 0 | 15-16 | 31-32 | 47-48 | 63-64 | 79-80 | 95-96 | "
                               "111-112\n") != NULL, "%s", text);
    ck_assert_msg(strstr(text, "layers 13-14 | 29-30 | 45-46 | 61-62 | 77-78 | 93-94 | "
                               "109-110 | 125\n") != NULL, "%s", text);
    ck_assert_msg(strstr(text, "layers   1-16") == NULL, "%s", text);   /* not contiguous */
    free(text);

    text = json_text(&f, &rc);
    ck_assert_int_eq(rc, 0);
    json_t *root = parse(text);
    json_t *stages = json_object_get(json_array_get(json_object_get(root, "strategies"), 0),
                                     "stages");
    ck_assert_int_eq(json_array_size(stages), 8);
    int seen[126] = {0};
    for (int r = 0; r < 8; r++) {
        json_t *st = json_array_get(stages, r), *chunks = json_object_get(st, "chunks");
        int sum = 0;
        ck_assert_int_eq(json_array_size(chunks), 8);
        for (int ci = 0; ci < 8; ci++) {
            json_t *ch = json_array_get(chunks, ci);
            int k = 8 * ci + r, first = (int)json_integer_value(json_object_get(ch, "first_layer"));
            int n = (int)json_integer_value(json_object_get(ch, "layers"));
            ck_assert_int_eq(first, k == 0 ? 0 : 2 * k - 1);
            ck_assert_int_eq(n, k == 0 || k == 63 ? 1 : 2);
            for (int l = first; l < first + n; l++)
                seen[l]++;
            sum += n;
        }
        ck_assert_int_eq(sum, json_integer_value(json_object_get(st, "layers")));
    }
    for (int l = 0; l < 126; l++)
        ck_assert_int_eq(seen[l], 1);   /* every layer on exactly one chunk */
    json_decref(root);
    free(text);
    search_result_free(&f.r);
    model_free(f.m);
    cluster_free(c);
}
END_TEST

START_TEST(infeasible_text)
{
    fixture f;
    char *text;
    plan_gpt3(&f, 64, 0, "tp=8,pp=8,recompute=none,mbs=8,sp=off,zero=0");
    ck_assert_int_eq(f.rc, PLANNER_E_INFEASIBLE);
    text = table_text(&f, true);
    ck_assert_msg(strncmp(text, "planner: no feasible plan: gpt3-175b", 36) == 0, "%s", text);
    ck_assert_msg(strstr(text, "closest miss: tp 8, pp 8, dp 8") != NULL, "%s", text);
    ck_assert(strstr(text, "recompute none") != NULL);
    ck_assert(strstr(text, "  over\n") != NULL);          /* a stage over capacity */
    ck_assert(strstr(text, "advice: ") != NULL);
    free(text);
    fixture_free(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("core");
    alloc_init();
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, json_has_the_schema);
    tcase_add_test(tc, json_when_nothing_fits);
    tcase_add_test(tc, json_escapes_and_nonfinite);
    tcase_add_test(tc, json_allocation_failures);
    tcase_add_test(tc, table_shows_the_winner);
    tcase_add_test(tc, unvalidated_knobs_marked);
    tcase_add_test(tc, infeasible_text);
    tcase_add_test(tc, interleaved_chunks_shown);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
