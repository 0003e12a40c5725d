/* test_knobs.c: the knob registry (model/knobs.h) and the outputs it drives.
 *
 * Every knob of the registry must appear in every output: the plan JSON
 * (strategies[], and docs/json-schema.md, and the table's columns for the
 * knobs that have one), the
 * sweep's CSV header and rows and its JSON Lines, validate's JSON, and in
 * emit's Megatron arguments for the knobs that have a flag.  The outputs
 * come from ./planner (tests run from the repository root after `make`),
 * except emit, which is called on hand-built plans that set every knob.
 * Also: the registry's own consistency (unique keys, setters, ranges) and
 * --fix parsing from the registry. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "inputs/cluster.h"
#include "inputs/model.h"
#include "model/knobs.h"
#include "model/layout.h"
#include "out/emit.h"
#include "testutil.h"

/* Runs `cmd` (a shell command line) and returns its stdout (free it). */
static char *run(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    size_t len = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(buf);
    for (size_t n; (n = fread(buf + len, 1, cap - len - 1, p)) > 0;) {
        len += n;
        if (cap - len < 2) {
            cap *= 2;
            buf = realloc(buf, cap);
            ck_assert_ptr_nonnull(buf);
        }
    }
    buf[len] = '\0';
    ck_assert_msg(pclose(p) == 0, "'%s' failed", cmd);
    return buf;
}

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, JSON_DISABLE_EOF_CHECK, &e);
    ck_assert_msg(j != NULL, "not JSON: %s: %.200s", e.text, text);
    return j;
}

/* Every knob's key is a key of object o (`where` names it in a failure). */
static void has_every_knob(const json_t *o, const char *where)
{
    ck_assert_msg(json_is_object(o), "%s: not an object", where);
    for (int k = 0; k < KNOB_COUNT; k++) {
        const char *key = knob_get_info((knob_id)k)->key;
        ck_assert_msg(json_object_get(o, key) != NULL, "%s: no '%s'", where, key);
    }
}

/* Field `col` of CSV line `line` (no quoted commas in the fields we read). */
static int csv_column(const char *header, const char *key)
{
    int col = 0;
    size_t kl = strlen(key);
    for (const char *p = header; *p; col++) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strcspn(p, "\n");
        if (n == kl && strncmp(p, key, kl) == 0)
            return col;
        if (e == NULL)
            break;
        p = e + 1;
    }
    return -1;
}

START_TEST(registry_consistent)
{
    strategy s;
    memset(&s, 0, sizeof s);
    for (int k = 0; k < KNOB_COUNT; k++) {
        const knob_info *ki = knob_get_info((knob_id)k);
        ck_assert_ptr_nonnull(ki->key);
        ck_assert_int_eq(knob_find(ki->key), k);
        ck_assert_int_le(ki->min, ki->max);
        ck_assert_msg(ki->meg == MEG_NONE || ki->megatron != NULL, "%s: no flag", ki->key);
        ck_assert_msg(ki->table_head == NULL || ki->table_width >= (int)strlen(ki->table_head),
                      "%s: column narrower than its head", ki->key);
        /* the setter and the getter reach the same field, and only it */
        for (int v = ki->min; v <= ki->max && v <= ki->min + 2; v++) {
            strategy t = s;
            knob_set(&t, (knob_id)k, v);
            ck_assert_int_eq(knob_value(&t, (knob_id)k), v);
            for (int j = 0; j < KNOB_COUNT; j++)
                if (j != k)
                    ck_assert_int_eq(knob_value(&t, (knob_id)j), knob_value(&s, (knob_id)j));
        }
    }
    s.tp = 8;
    s.recompute = RECOMPUTE_SELECTIVE;
    s.sp = true;
    char buf[32];
    ck_assert_str_eq(knob_text(&s, KNOB_TP, false, buf, sizeof buf), "8");
    ck_assert_str_eq(knob_text(&s, KNOB_RECOMPUTE, false, buf, sizeof buf), "selective");
    ck_assert_str_eq(knob_text(&s, KNOB_RECOMPUTE, true, buf, sizeof buf), "sel");
    ck_assert_str_eq(knob_text(&s, KNOB_SP, false, buf, sizeof buf), "on");
}
END_TEST

/* Which knob values measured runs validate: one row per knob and value,
 * each inside its knob's range (but the flex dispatcher with DeepEP,
 * FLEX_DEEPEP) with a name and its corpus runs; ZeRO 0, 1
 * and 3 are exercised by ../shared/validation runs, ZeRO-2 (Megatron-FSDP
 * optim_grads) by none, named by each stack (stack_spec.zero_names); a
 * value without a row counts as validated. */
START_TEST(validation_rows)
{
    int n = 0;
    const knob_validation *rows = knob_validation_rows(&n);
    strategy s;
    char buf[128];
    ck_assert_int_gt(n, 0);
    for (int i = 0; i < n; i++) {
        const knob_info *ki = knob_get_info(rows[i].knob);
        bool deepep = rows[i].knob == KNOB_FLEX_DISPATCHER && rows[i].value == FLEX_DEEPEP;
        ck_assert(deepep || (rows[i].value >= ki->min && rows[i].value <= ki->max));
        ck_assert((rows[i].name != NULL) == (rows[i].knob != KNOB_ZERO) && rows[i].runs != NULL);
        ck_assert_ptr_eq(knob_validation_of(rows[i].knob, rows[i].value), &rows[i]);
        ck_assert_msg(rows[i].validated == (strcmp(rows[i].runs, "none") != 0), "%s=%d", ki->key,
                      rows[i].value);
    }
    ck_assert(knob_value_validated(KNOB_ZERO, 0));
    ck_assert(knob_value_validated(KNOB_ZERO, 1));
    ck_assert(!knob_value_validated(KNOB_ZERO, 2));
    ck_assert(knob_value_validated(KNOB_ZERO, 3));
    ck_assert(knob_value_validated(KNOB_TP, 8));   /* no row */
    /* full recompute of every layer is validated, of part of them not */
    ck_assert(knob_value_validated(KNOB_RECOMPUTE_LAYERS, 0));
    ck_assert(!knob_value_validated(KNOB_RECOMPUTE_LAYERS, 1));
    ck_assert(!knob_value_validated(KNOB_RECOMPUTE_LAYERS, 17));
    ck_assert(knob_value_validated(KNOB_RECOMPUTE_METHOD, RECOMPUTE_BLOCK));
    ck_assert(!knob_value_validated(KNOB_RECOMPUTE_METHOD, RECOMPUTE_UNIFORM));
    /* no corpus run says it overlapped the MoE all-to-alls */
    ck_assert(knob_value_validated(KNOB_EP_COMM_OVERLAP, 0));
    ck_assert(!knob_value_validated(KNOB_EP_COMM_OVERLAP, 1));
    /* the recipes' router and preprocessing graphs: 15 MoE rows */
    ck_assert(knob_value_validated(KNOB_TE_MOE_GRAPHS, 1));
    ck_assert_ptr_nonnull(knob_validation_of(KNOB_TE_MOE_GRAPHS, 1));
    memset(&s, 0, sizeof s);
    s.zero = 1;
    ck_assert(knobs_validated(&s));
    ck_assert_int_eq(knobs_unvalidated(&s, true, ", ", buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "");
    s.zero = 2;
    ck_assert(!knobs_validated(&s));
    ck_assert_int_eq(knobs_unvalidated(&s, false, " ", buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "zero=2");
    ck_assert_int_eq(knobs_unvalidated(&s, true, ", ", buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "zero=2 (Megatron-FSDP optim_grads)");
    /* each stack names its own ZeRO-2 (it was Megatron-FSDP's on every one) */
    s.stack = STACK_PYTORCH_FSDP2;
    ck_assert_int_eq(knobs_unvalidated(&s, true, ", ", buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "zero=2 (FSDP2 reshard_after_forward=False)");
    s.stack = STACK_DEEPSPEED;
    ck_assert_int_eq(knobs_unvalidated(&s, true, ", ", buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "zero=2 (ZeRO stage 2)");
    s.stack = STACK_MEGATRON_CORE;
    s.recompute = RECOMPUTE_FULL;
    s.recompute_layers = 3;
    ck_assert_int_eq(knobs_unvalidated(&s, false, " ", buf, sizeof buf), 2);
    ck_assert_str_eq(buf, "recompute_layers=3 zero=2");
    s.ep_comm_overlap = true;
    ck_assert_int_eq(knobs_unvalidated(&s, false, " ", buf, sizeof buf), 3);
    ck_assert_str_eq(buf, "recompute_layers=3 zero=2 ep_comm_overlap=on");
    ck_assert_int_eq(knobs_unvalidated_count(&s), 3);   /* the ranking's count, the same */
    s.zero = 1;
    ck_assert_int_eq(knobs_unvalidated_count(&s), 2);
    s.zero = 2;
    /* the flex dispatcher: HybridEP validated, DeepEP (core_v0.15.0's
     * backend, costed as HybridEP) not */
    memset(&s, 0, sizeof s);
    s.zero = 1;
    s.flex_dispatcher = true;
    ck_assert(knobs_validated(&s));
    s.flex_deepep = true;
    ck_assert(!knobs_validated(&s));
    ck_assert(!knob_value_validated(KNOB_FLEX_DISPATCHER, FLEX_DEEPEP));
    ck_assert_int_eq(knobs_unvalidated(&s, false, " ", buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "flex_dispatcher=deepep");
    ck_assert_int_eq(knobs_unvalidated(&s, true, ", ", buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "flex_dispatcher=deepep (flex token dispatcher with DeepEP "
                          "(core_v0.15.0), costed as HybridEP)");
    s.flex_dispatcher = false;   /* the backend of no dispatcher */
    ck_assert(knobs_validated(&s));
    /* the longest value whole (it was cut at 31 characters) */
    s.recompute = RECOMPUTE_SELECTIVE;
    s.recompute_modules = RC_MOD_ALL;
    ck_assert_int_eq(knobs_unvalidated(&s, false, " ", buf, sizeof buf), 1);
    ck_assert_str_eq(buf, "recompute_modules=core_attn+layernorm+mlp+moe_act+mla_up_proj");
    ck_assert_int_lt(strlen(buf + strlen("recompute_modules=")), KNOB_TEXT_MAX);
    ck_assert(knob_flex_deepep(MEGATRON_0_15) && !knob_flex_deepep(MEGATRON_0_16));
}
END_TEST

/* The shared-expert overlap with the flex dispatcher: refused up to
 * core_v0.17 ("only works with alltoall token dispatcher"), taken from
 * core_v0.18.0 ("alltoall or flex"): no release-free rule, --fix takes the
 * pair, and the release check (knob_shared_overlap_flex_release,
 * knob_release_fix_conflict) tells the releases apart. */
START_TEST(shared_overlap_flex_by_release)
{
    strategy_constraints c = STRATEGY_CONSTRAINTS_INIT;
    planner_error err = PLANNER_ERROR_INIT;
    ck_assert_int_eq(constraints_parse(&c, "flex_dispatcher=on,shared_expert_overlap=on", &err),
                     PLANNER_OK);
    for (int v = 0; v < MEGATRON_VERSION_COUNT; v++) {
        bool has = v >= MEGATRON_0_18;
        ck_assert(knob_shared_overlap_flex_release((megatron_version)v) == has);
        ck_assert((knob_release_fix_conflict(&c, (megatron_version)v) == NULL) == has);
    }
    ck_assert_ptr_nonnull(strstr(knob_release_fix_conflict(&c, MEGATRON_0_17), "core_v0.18.0"));
    c.flex_dispatcher = 0;   /* with alltoall: every release */
    ck_assert_ptr_null(knob_release_fix_conflict(&c, MEGATRON_0_15));
    /* the router graphs pinned: from core_v0.16.0, as the search and emit
     * have them (knob_te_moe_graphs_release) */
    ck_assert_int_eq(constraints_parse(&c, "te_moe_graphs=on", &err), PLANNER_OK);
    for (int v = 0; v < MEGATRON_VERSION_COUNT; v++)
        ck_assert((knob_release_fix_conflict(&c, (megatron_version)v) == NULL) ==
                  (v >= MEGATRON_0_16));
    ck_assert_ptr_nonnull(strstr(knob_release_fix_conflict(&c, MEGATRON_0_15), "core_v0.16.0"));
}
END_TEST

START_TEST(fix_from_registry)
{
    strategy_constraints c = STRATEGY_CONSTRAINTS_INIT;
    planner_error e = PLANNER_ERROR_INIT;
    ck_assert_int_eq(constraints_parse(&c, "tp=8, pp=16,sp=off,recompute=full,zero=1,ep=2,gpus=64",
                                       NULL), PLANNER_OK);
    ck_assert_int_eq(c.tp, 8);
    ck_assert_int_eq(c.pp, 16);
    ck_assert_int_eq(c.sp, 0);
    ck_assert_int_eq(c.recompute, RECOMPUTE_FULL);
    ck_assert_int_eq(c.zero, 1);
    ck_assert_int_eq(c.ep, 2);
    ck_assert_int_eq(c.gpus, 64);
    ck_assert_int_eq(c.dp, -1);
    error_clear(&e);
    ck_assert_int_eq(constraints_parse(&c, "pp=257", &e), PLANNER_E_USAGE);
    ck_assert_str_eq(e.msg, "pp: expected an integer in 1..256, got '257'");
    error_clear(&e);
    ck_assert_int_eq(constraints_parse(&c, "tq=8", &e), PLANNER_E_USAGE);
    ck_assert_str_eq(e.msg, "unknown key 'tq' (did you mean 'tp'?)");
    error_clear(&e);
    ck_assert_int_eq(constraints_parse(&c, "zebra=1", &e), PLANNER_E_USAGE);
    ck_assert_str_eq(e.msg, "unknown key 'zebra' (known: tp pp dp cp ep etp vpp mbs sp recompute "
                          "recompute_layers recompute_method recompute_modules zero "
                          "overlap_grad_reduce overlap_param_gather "
                          "tp_comm_overlap cp_comm ep_comm_overlap cp_a2a grad_reduce_bf16 "
                          "cuda_graph shared_expert_overlap flex_dispatcher opt_state "
                          "te_moe_graphs gpus)");
    /* every knob but the split accounting is a --fix key */
    c = (strategy_constraints)STRATEGY_CONSTRAINTS_INIT;
    ck_assert(!knobs_any_fixed(&c));
    ck_assert_int_eq(constraints_parse(&c, "overlap_grad_reduce=off,tp_comm_overlap=on,"
                                       "recompute_layers=0", NULL), 0);
    ck_assert_int_eq(c.overlap_grad_reduce, 0);
    ck_assert_int_eq(c.tp_comm_overlap, 1);
    ck_assert_int_eq(c.recompute_layers, 0);
    ck_assert_int_eq(c.overlap_param_gather, -1);
    ck_assert(knobs_any_fixed(&c));
    error_clear(&e);
    ck_assert_int_eq(constraints_parse(&c, "account_loss=on", &e), PLANNER_E_USAGE);
    error_clear(&e);
    ck_assert_int_eq(constraints_parse(&c, "sp=maybe", &e), PLANNER_E_USAGE);
    error_clear(&e);
    ck_assert_int_eq(constraints_parse(&c, "recompute_modules=mlp+layernorm", &e), PLANNER_OK);
    ck_assert_int_eq(c.recompute_modules, RC_MOD_MLP | RC_MOD_LAYERNORM);
    ck_assert_int_eq(c.recompute, RECOMPUTE_SELECTIVE);   /* the modules' granularity */
    c.recompute_modules = -1;
    error_clear(&e);
    ck_assert_int_eq(constraints_parse(&c, "recompute_modules=mlp+mla_up_proj", &e), PLANNER_OK);
    ck_assert_int_eq(c.recompute_modules, RC_MOD_MLP | RC_MOD_MLA_UP_PROJ);
    c.recompute_modules = -1;
    error_clear(&e);
    ck_assert_int_eq(constraints_parse(&c, "recompute_modules=mlp+shared_experts", &e),
                     PLANNER_E_USAGE);
    ck_assert_str_eq(e.msg, "recompute_modules: unknown name 'shared_experts' in "
                            "'mlp+shared_experts' (known: core_attn+layernorm+mlp+moe_act+"
                            "mla_up_proj, joined by +)");
    error_clear(&e);
    ck_assert_int_eq(constraints_parse(&c, "recompute_modules=layernorm+mlp+layernorm", &e),
                     PLANNER_E_USAGE);
    ck_assert_str_eq(e.msg, "recompute_modules: duplicate name 'layernorm' in "
                            "'layernorm+mlp+layernorm'");
    error_clear(&e);
    ck_assert_int_eq(constraints_parse(&c, "tp=8,tp=4", &e), PLANNER_E_USAGE);
    ck_assert_str_eq(e.msg, "duplicate key 'tp'");
}
END_TEST

#define PLAN "./planner --model configs/mixtral-8x7b.json --cluster clusters/h100x512.yaml " \
             "--fix gpus=64 --top 2"

START_TEST(plan_json_and_table)
{
    char *text = run(PLAN " --format json 2>/dev/null");
    json_t *d = parse(text), *list = json_object_get(d, "strategies");
    ck_assert_int_ge((int)json_array_size(list), 1);
    for (size_t i = 0; i < json_array_size(list); i++)
        has_every_knob(json_array_get(list, i), "plan --format json strategies[]");
    json_decref(d);
    free(text);

    /* and docs/json-schema.md names each */
    FILE *doc = fopen("docs/json-schema.md", "r");
    ck_assert_ptr_nonnull(doc);
    char schema[1 << 16];
    size_t n = fread(schema, 1, sizeof schema - 1, doc);
    fclose(doc);
    schema[n] = '\0';
    for (int k = 0; k < KNOB_COUNT; k++) {
        char quoted[64];
        snprintf(quoted, sizeof quoted, "\"%s\"", knob_get_info((knob_id)k)->key);
        ck_assert_msg(strstr(schema, quoted) != NULL, "json-schema.md: no %s", quoted);
    }

    /* the table: a column per knob with a table head (MoE: ep too) */
    text = run(PLAN " 2>/dev/null");
    const char *head = strstr(text, "\n rank ");
    ck_assert_ptr_nonnull(head);
    for (int k = 0; k < KNOB_COUNT; k++) {
        const knob_info *ki = knob_get_info((knob_id)k);
        char col[32];
        if (ki->table_head == NULL)
            continue;
        snprintf(col, sizeof col, " %*s ", ki->table_width, ki->table_head);
        ck_assert_msg(strstr(head, col) != NULL, "table: no column '%s'", ki->table_head);
    }
    free(text);
}
END_TEST

/* --fix pins the knobs the search would otherwise derive: the overlap
 * flags (on where the rules allow) and full recompute's layer count */
START_TEST(fix_derived_knobs)
{
    char *text = run(PLAN " --fix overlap_grad_reduce=off,overlap_param_gather=off,"
                     "tp_comm_overlap=off,recompute=full,recompute_layers=3 --format json "
                     "2>/dev/null");
    json_t *d = parse(text), *list = json_object_get(d, "strategies");
    ck_assert_int_ge((int)json_array_size(list), 1);
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *o = json_array_get(list, i);
        ck_assert(json_is_false(json_object_get(o, "overlap_grad_reduce")));
        ck_assert(json_is_false(json_object_get(o, "overlap_param_gather")));
        ck_assert(json_is_false(json_object_get(o, "tp_comm_overlap")));
        ck_assert_str_eq(json_string_value(json_object_get(o, "recompute")), "full");
        ck_assert_int_eq(json_integer_value(json_object_get(o, "recompute_layers")), 3);
    }
    json_decref(d);
    free(text);
    /* unpinned, the same search turns them on (dp > 1, sp with tp > 1) and
     * recomputes the fewest layers that fit: tp 1 pp 1 dp 64 ep 8 mbs 2
     * zero 2 with 8 layers recomputed (12.652 s): Mixtral's HF config has no
     * residual dropout, so its layers keep no dropout masks (2 of the 10 s b
     * h outside the TP region: transformer.h, 2026-11-25); with them, 9
     * (12.790 s).  Since Megatron-FSDP's
     * ZeRO-3 waits each micro-batch for its last layer's gather at the start
     * of the backward and its reduce-scatter at the end (evaluate.c
     * rank_zero3_prefetch, 2026-11) the ZeRO-3 plan with 4 of 32 layers
     * recomputed at 77.0 GiB takes 12.933 s (12.737 s before, first).  Since the
     * MoE all-to-all buffers no longer count on top of the loss's working
     * set (they never meet: layer_cost.c cost_range_transient_bytes,
     * 2026-11) ZeRO-3 fits with 4 layers recomputed and beats ZeRO-2 with 9
     * (12.737 s against 12.783 s a step); before it: zero 2, 9 of them
     * recomputed.  Since a DP reduce over
     * the NICs slows the compute it hides behind by overlap_exposed_net
     * (0.1, not 0.408: evaluate.c), ZeRO-2's per-micro-batch reduce-scatter
     * costs little and its sharded gradients buy the memory of mbs 2; before
     * it: tp 1 pp 2 dp 32 ep 8 mbs 2 zero 1 with 5 of 16 layers per stage
     * recomputed.  Before moe_host_s went 2.25 -> 1.5 ms (the MoE rows on
     * their models' configs) the ep 1 ZeRO-3 plan ranked first and the same
     * with 31 of 32 layers recomputed second; before ZeRO-3 was costed as
     * Megatron-FSDP runs it: zero 2, ep 8, 31 first.  (The alltoall
     * dispatcher pinned: the flex one, searched since 2026-11-25, wins
     * otherwise.) */
    text = run(PLAN " --fix recompute=full,flex_dispatcher=off --format json 2>/dev/null");
    d = parse(text);
    const json_t *o = json_array_get(json_object_get(d, "strategies"), 0);
    ck_assert(json_is_true(json_object_get(o, "overlap_grad_reduce")));
    ck_assert(json_is_true(json_object_get(o, "overlap_param_gather")));
    ck_assert_int_eq(json_integer_value(json_object_get(o, "pp")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "ep")), 8);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "mbs")), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "zero")), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(o, "recompute_layers")), 8);
    ck_assert_str_eq(json_string_value(json_object_get(o, "recompute_method")), "block");
    json_decref(d);
    free(text);
    text = run(PLAN " --fix tp=1,pp=1,dp=64,cp=1,ep=8,vpp=1,mbs=16,sp=off,zero=2,recompute=full,"
               "recompute_layers=30 >/dev/null 2>&1; echo $?");
    ck_assert_str_eq(text, "3\n");   /* no feasible plan */
    free(text);
}
END_TEST

/* Every switch --fix takes reaches the plan: with the winner's degrees,
 * micro-batch, ZeRO stage and recompute pinned and one switch pinned to the
 * other value than the winner's, the search returns plans with that value,
 * or none (its rule or the stack refuses it); never the unpinned value (a
 * fixed-only knob whose value the search forgets to carry: search.c
 * set_derived). */
START_TEST(fix_reaches_the_plan)
{
    static const knob_id pinned[] = {KNOB_TP, KNOB_PP, KNOB_DP, KNOB_CP, KNOB_EP, KNOB_ETP,
                                     KNOB_VPP, KNOB_MBS, KNOB_ZERO, KNOB_RECOMPUTE};
    run_spec rs;
    model *m = tu_model_load("configs/mixtral-8x7b.json", &rs);
    cluster *c = NULL;
    planner_error err;
    search_result r;
    strategy best;
    cost_params p;
    int checked = 0;
    ck_assert_int_eq(cluster_load(&c, "clusters/h100x512.yaml", tu_err(&err)), PLANNER_OK);
    ck_assert_int_eq(tu_search(&r, m, &rs, c, NULL, false, 1), PLANNER_OK);
    best = r.top[0].s;
    search_result_free(&r);
    cost_params_default(&p);
    for (int k = 0; k < KNOB_COUNT; k++) {
        const knob_info *ki = knob_get_info((knob_id)k);
        char fix[512], v[64];
        size_t len = 0;
        search_options o;
        strategy flipped;
        if (ki->kind != KNOB_KIND_BOOL || ki->fix_offset == KNOB_NOT_FIXABLE)
            continue;
        for (size_t i = 0; i < sizeof pinned / sizeof pinned[0]; i++)
            len += (size_t)snprintf(fix + len, sizeof fix - len, "%s=%s,",
                                    knob_get_info(pinned[i])->key,
                                    knob_text(&best, pinned[i], false, v, sizeof v));
        flipped = best;
        knob_set(&flipped, (knob_id)k, !knob_value(&best, (knob_id)k));
        snprintf(fix + len, sizeof fix - len, "%s=%s", ki->key,
                 knob_text(&flipped, (knob_id)k, false, v, sizeof v));
        tu_search_options(&o, &rs, NULL, 3);
        /* a pin Megatron's rules refuse with another pin (sp on at tp 1):
         * the parser's usage error (knobs.c pin_broken), else the search's */
        if (constraints_parse(&o.fix, fix, tu_err(&err)) == PLANNER_OK &&
            search_run(&r, m, c, &p, &o, tu_err(&err)) == PLANNER_OK) {
            for (int i = 0; i < r.n_top; i++)
                ck_assert_msg(knob_value(&r.top[i].s, (knob_id)k) ==
                                  knob_value(&flipped, (knob_id)k),
                              "--fix %s: plan %d has %s=%d", fix, i + 1, ki->key,
                              knob_value(&r.top[i].s, (knob_id)k));
            checked++;
        }
        search_result_free(&r);
    }
    /* Mixtral's winner has tp 1, so sp and tp_comm_overlap on are refused
     * (they need tp > 1), and overlaps the param gather, which
     * overlap_grad_reduce off refuses; the other switches flip and plan */
    ck_assert_int_ge(checked, 3);
    cluster_free(c);
    model_free(m);
}
END_TEST

/* MoE layers under tensor parallelism need sequence parallelism
 * (Megatron-Core MoELayer.forward raises without it in training): the rule
 * refuses tp 2 without sp on Mixtral, accepts it with sp and accepts a
 * dense model without sp; the search's winner with tp 2 pinned has sp.
 * Stacks without sequence parallelism (DeepSpeed) run their own MoE layer:
 * no such rule there. */
START_TEST(moe_tp_needs_sp)
{
    run_spec rs, rs8;
    model *moe = tu_model_load("configs/mixtral-8x7b.json", &rs);
    model *dense = tu_model_load("configs/llama3-8b.json", &rs8);
    strategy s;
    planner_error err;
    cluster *c = NULL;
    search_result r;
    memset(&s, 0, sizeof s);
    s.tp = 2;
    s.sp = false;
    ck_assert_int_eq(knob_rule(moe, &s, KNOB_SP, tu_err(&err)), PLANNER_E_INPUT);
    ck_assert_str_eq(err.msg,
                     "MoE layers with tp 2 need sequence parallelism (Megatron-Core MoELayer)");
    ck_assert_int_eq(knob_rule(dense, &s, KNOB_SP, tu_err(&err)), PLANNER_OK);
    s.stack = STACK_DEEPSPEED;   /* no sequence parallelism: its own MoE layer */
    ck_assert_int_eq(knob_rule(moe, &s, KNOB_SP, tu_err(&err)), PLANNER_OK);
    s.stack = STACK_MEGATRON_CORE;
    s.sp = true;
    ck_assert_int_eq(knob_rule(moe, &s, KNOB_SP, tu_err(&err)), PLANNER_OK);
    ck_assert_int_eq(cluster_load(&c, "clusters/h100x512.yaml", tu_err(&err)), PLANNER_OK);
    ck_assert_int_eq(tu_search(&r, moe, &rs, c, "tp=2", false, 5), PLANNER_OK);
    for (int i = 0; i < r.n_top; i++)
        ck_assert_msg(r.top[i].s.sp, "plan %d: tp 2 without sp", i + 1);
    search_result_free(&r);
    ck_assert_int_eq(tu_search(&r, moe, &rs, c, "tp=2,sp=off", false, 5), PLANNER_E_INFEASIBLE);
    search_result_free(&r);
    c->stack = STACK_DEEPSPEED;   /* tp 2 without sp ranks there */
    ck_assert_int_eq(tu_search(&r, moe, &rs, c, "tp=2", false, 5), PLANNER_OK);
    ck_assert(!r.top[0].s.sp && r.top[0].s.tp == 2);
    search_result_free(&r);
    cluster_free(c);
    model_free(moe);
    model_free(dense);
}
END_TEST

/* planner --help lists every key --fix takes, from the registry (it was a
 * hand-written subset without etp, cuda_graph and the overlap switches). */
START_TEST(help_lists_fix_keys)
{
    char *text = run("./planner --help");
    char keys[1024], *save = NULL, *block = strstr(text, "keys:\n"), *end;
    ck_assert_ptr_nonnull(block);   /* the words under --fix's "keys:", up to the next option */
    end = strstr(block, "\n      --");
    ck_assert_ptr_nonnull(end);
    end[1] = '\0';
    ck_assert_int_lt(knobs_fix_keys_join(keys, sizeof keys, " "), (int)sizeof keys);
    ck_assert_ptr_nonnull(strstr(keys, "etp"));
    ck_assert_ptr_nonnull(strstr(keys, "gpus"));
    for (char *k = strtok_r(keys, " ", &save); k != NULL; k = strtok_r(NULL, " ", &save)) {
        char word[80];
        snprintf(word, sizeof word, " %s", k);
        const char *at = strstr(block, word);
        while (at != NULL && at[strlen(word)] != ' ' && at[strlen(word)] != '\n')
            at = strstr(at + 1, word);
        ck_assert_msg(at != NULL, "--help lacks the --fix key '%s'", k);
    }
    free(text);
}
END_TEST

#define SWEEP "./planner sweep -m configs/llama3-8b.json -c clusters/h100x512.yaml " \
              "--nodes 1,2 --gbs 256"

START_TEST(sweep_csv_and_jsonl)
{
    char *text = run(SWEEP " 2>/dev/null"), *row = strchr(text, '\n');
    ck_assert_ptr_nonnull(row);
    int fields = 1;
    for (const char *p = row + 1; *p && *p != '\n'; p++)
        fields += *p == ',';
    int header_fields = 1;
    for (const char *p = text; p < row; p++)
        header_fields += *p == ',';
    ck_assert_int_eq(fields, header_fields);
    for (int k = 0; k < KNOB_COUNT; k++)
        ck_assert_msg(csv_column(text, knob_get_info((knob_id)k)->key) >= 0,
                      "sweep CSV header: no '%s'", knob_get_info((knob_id)k)->key);
    free(text);

    text = run(SWEEP " --format jsonl 2>/dev/null");
    int lines = 0;
    for (char *line = text; *line; lines++) {
        char *nl = strchr(line, '\n');
        ck_assert_ptr_nonnull(nl);
        *nl = '\0';
        json_t *o = parse(line);
        ck_assert_str_eq(json_string_value(json_object_get(o, "status")), "ok");
        has_every_knob(o, "sweep JSON Lines");
        json_decref(o);
        line = nl + 1;
    }
    ck_assert_int_eq(lines, 2);
    free(text);
}
END_TEST

START_TEST(validate_json)
{
    char path[] = "/tmp/test_knobs_runsXXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"runs\": [{\"id\": \"moe1\", \"source\": \"test\", \"gpu\": \"H100-SXM\", "
          "\"num_gpus\": 8, \"gpus_per_node\": 8, \"model\": {\"layers\": 4, \"hidden\": 1024, "
          "\"heads\": 8, \"kv_heads\": 8, \"ffn_hidden\": 4096, \"vocab\": 32000, "
          "\"seq_len\": 1024, \"activation\": \"swiglu\", \"moe\": {\"moe_experts\": 8, "
          "\"moe_topk\": 2, \"moe_ffn_hidden\": 4096}}, \"parallel\": {\"tp\": 1, \"pp\": 1, "
          "\"dp\": 8, \"cp\": 1, \"ep\": 8, \"vpp\": null, \"mbs\": null, \"gbs\": 64, "
          "\"sequence_parallel\": null, \"recompute\": null}, \"precision\": \"bf16\", "
          "\"measured\": {\"tokens_per_s_per_gpu\": 1000, \"step_time_s\": 1}, "
          "\"unpublished\": [\"mbs\", \"vpp\"]}]}\n", f);
    fclose(f);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "./planner validate --format json %s 2>/dev/null", path);
    char *text = run(cmd);
    unlink(path);
    json_t *d = parse(text), *r = json_array_get(json_object_get(d, "runs"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(r, "status")), "ok");
    has_every_knob(json_object_get(r, "plan"), "validate --format json runs[].plan");
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(r, "plan"), "ep")), 8);
    json_decref(d);
    free(text);
}
END_TEST

/* Emits `s` for m on c as Megatron arguments and appends them to *all. */
static void emit_append(const model *m, const cluster *c, const strategy *s, char **all)
{
    plan pl;
    char *text = NULL;
    planner_error why = PLANNER_ERROR_INIT;
    size_t len = 0;
    memset(&pl, 0, sizeof pl);
    pl.s = *s;
    FILE *fp = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(fp);
    planner_status rc = emit_write(fp, EMIT_MEGATRON, MEGATRON_VERSION_DEFAULT, m, c, &pl, &why);
    fclose(fp);
    ck_assert_msg(rc == PLANNER_OK, "emit: %s", why.msg);
    size_t have = *all ? strlen(*all) : 0;
    *all = realloc(*all, have + len + 1);
    ck_assert_ptr_nonnull(*all);
    memcpy(*all + have, text, len + 1);
    free(text);
}

/* A one-stage plan of `layers` layers at tp, dp, ep, etp (mbs 1 of a global
 * batch of 64, sequence 4096, everything else off). */
static strategy one_stage(int tp, int dp, int ep, int etp, int layers)
{
    strategy s;
    memset(&s, 0, sizeof s);
    s.tp = tp; s.pp = 1; s.dp = dp; s.cp = 1; s.ep = ep; s.etp = etp; s.vpp = 1; s.mbs = 1;
    s.gbs = 64; s.seq_len = 4096;
    s.n_stages = 1;
    s.stage[0].n_layers = layers;
    s.stage[0].tp = tp;
    s.stage[0].dp = dp;
    return s;
}

/* The pytorch-fsdp2 stack's rules on knobs together (inputs/stack.c
 * stack_spec.rules, from torchtitan's parallelize_llama, tensor_parallel.py,
 * apply_ac): each refused on pytorch-fsdp2 and allowed on megatron-core; the
 * search's best plan of Llama 3 70B on 512 H100 keeps every rule (before
 * the rules it ran DDP with TP or async TP without compile). */
/* The top 5 plans of m on 64 H100 nodes running stack st under `fix` are
 * all ones st runs (knobs_stack_check). */
static void search_keeps_to(const model *m, const run_spec *rs, const stack_spec *st,
                            const char *fix)
{
    planner_error err;
    cluster *c = NULL;
    search_result r;
    ck_assert_int_eq(cluster_load(&c, "clusters/h100x512.yaml", tu_err(&err)), PLANNER_OK);
    c->stack = st->id;
    ck_assert_int_eq(tu_search(&r, m, rs, c, fix, false, 5), PLANNER_OK);
    for (int i = 0; i < r.n_top; i++)
        ck_assert_msg(knobs_stack_check(m, &r.top[i].s, st, tu_err(&err)) == PLANNER_OK,
                      "plan %d: %s", i + 1, err.msg);
    search_result_free(&r);
    cluster_free(c);
}

START_TEST(fsdp2_stack_rules)
{
    run_spec rs;
    model *m = tu_model_load("configs/llama3-70b.json", &rs);
    const stack_spec *tt = stack_get(STACK_PYTORCH_FSDP2), *mc = stack_get(STACK_MEGATRON_CORE);
    planner_error err;
    struct { knob_id k; const char *why; } cases[] = {
        {KNOB_SP, "always shards the sequence"}, {KNOB_ZERO, "DDP (zero=0) only as the sole"},
        {KNOB_TP_COMM_OVERLAP, "only with compiled blocks"},
        {KNOB_RECOMPUTE_LAYERS, "every N-th (selective_ac_option N), not recompute_layers=30: "
                                "plan with --fix recompute_layers=0, 26 (N 3) or 40 (N 2)"},
        {KNOB_OVERLAP_GRAD_REDUCE, "always overlaps its gradient reduce-scatter"},
        {KNOB_ZERO, "over the context-parallel ranks"}};
    for (int i = 0; i < 6; i++) {
        strategy s = one_stage(8, 8, 1, 1, 80);
        s.sp = true;
        s.zero = 3;
        s.overlap_grad_reduce = s.overlap_param_gather = true;
        switch (i) {
        case 0: s.sp = false; break;
        case 1: s.zero = 0; s.overlap_param_gather = false; break;
        case 2: s.tp_comm_overlap = true; break;
        case 3: s.recompute = RECOMPUTE_FULL; s.recompute_layers = 30; break;
        case 4: s.zero = 2; s.overlap_grad_reduce = false; break;
        default: s.tp = 1; s.stage[0].tp = 1; s.dp = 1; s.stage[0].dp = 1; s.cp = 8;
            s.zero = 0; s.overlap_param_gather = false; break;
        }
        s.stack = STACK_PYTORCH_FSDP2;
        ck_assert_int_eq(knob_rule(m, &s, cases[i].k, tu_err(&err)), PLANNER_E_INPUT);
        ck_assert_msg(strstr(err.msg, cases[i].why) != NULL, "case %d: %s", i, err.msg);
        ck_assert_int_eq(knobs_stack_check(m, &s, tt, NULL), PLANNER_E_INPUT);
        ck_assert_int_eq(knobs_stack_check(m, &s, mc, NULL), PLANNER_OK);
        s.stack = STACK_MEGATRON_CORE;
        ck_assert_int_eq(knob_rule(m, &s, cases[i].k, NULL), PLANNER_OK);
        if (i == 2) {   /* compiled blocks run async TP */
            m->torch_compile = true;
            s.stack = STACK_PYTORCH_FSDP2;
            ck_assert_int_eq(knob_rule(m, &s, KNOB_TP_COMM_OVERLAP, NULL), PLANNER_OK);
            m->torch_compile = false;
        }
    }
    /* full recompute of every layer (0, or a block covering the chunk) is
     * torchtitan's "full"; of 2 of the 80 blocks its selective_ac_option N
     * for the smallest N with 80 / N = 2, 27 (blocks 27 and 54); 30 of 80
     * no N (80 / 2 = 40, 80 / 3 = 26) */
    {
        strategy s = one_stage(8, 8, 1, 1, 80);
        s.sp = true; s.zero = 3; s.overlap_grad_reduce = s.overlap_param_gather = true;
        s.stack = STACK_PYTORCH_FSDP2;
        s.recompute = RECOMPUTE_FULL;
        s.recompute_layers = 80;
        ck_assert_int_eq(knobs_stack_check(m, &s, tt, NULL), PLANNER_OK);
        ck_assert_int_eq(knob_ac_every_nth(m, &s), 1);
        s.recompute_layers = 2;
        ck_assert_int_eq(knobs_stack_check(m, &s, tt, NULL), PLANNER_OK);
        ck_assert_int_eq(knob_ac_every_nth(m, &s), 27);
        s.recompute_layers = 30;
        ck_assert_int_eq(knob_ac_every_nth(m, &s), 0);
        s.recompute_layers = 2;
        s.recompute_method = RECOMPUTE_UNIFORM;   /* groups of 2 blocks: no torchtitan form */
        ck_assert_int_eq(knob_ac_every_nth(m, &s), 0);
        s.recompute_method = RECOMPUTE_BLOCK;
        s.recompute = RECOMPUTE_SELECTIVE;   /* Megatron's modules: not torchtitan's op policy */
        s.recompute_layers = 0;
        s.recompute_modules = RC_MOD_LAYERNORM;
        ck_assert_int_eq(knobs_stack_check(m, &s, tt, tu_err(&err)), PLANNER_E_INPUT);
        ck_assert_str_eq(err.msg, "the pytorch-fsdp2 stack has no recompute_modules=layernorm");
        s.recompute_modules = RC_MOD_CORE_ATTN;
        ck_assert_int_eq(knobs_stack_check(m, &s, tt, NULL), PLANNER_OK);
    }
    search_keeps_to(m, &rs, tt, "mbs=1");
    model_free(m);
}
END_TEST

/* The search plans torchtitan's every-N-th-block checkpointing on
 * pytorch-fsdp2 (it searched only every block): GPT-3 175B on 64 H100
 * nodes at tp 4, pp 4, mbs 3 under ZeRO-2 fits with 2 of each 4-block
 * chunk (vpp 6) checkpointed, selective_ac_option 2, faster than every
 * block; each of the top plans is one the stack runs. */
START_TEST(fsdp2_every_nth_searched)
{
    run_spec rs;
    model *m = tu_model_load("configs/gpt3-175b.json", &rs);
    const stack_spec *tt = stack_get(STACK_PYTORCH_FSDP2);
    planner_error err;
    cluster *c = NULL;
    search_result r;
    const strategy *best;
    ck_assert_int_eq(cluster_load(&c, "clusters/h100x512.yaml", tu_err(&err)), PLANNER_OK);
    c->stack = STACK_PYTORCH_FSDP2;
    ck_assert_int_eq(tu_search(&r, m, &rs, c, "tp=4,pp=4,mbs=3,zero=2", false, 3), PLANNER_OK);
    best = &r.top[0].s;
    ck_assert_int_eq(best->recompute, RECOMPUTE_FULL);
    ck_assert_int_eq(best->recompute_method, RECOMPUTE_BLOCK);
    ck_assert_int_eq(best->vpp, 6);
    ck_assert_int_eq(best->recompute_layers, 2);
    ck_assert_int_eq(knob_ac_every_nth(m, best), 2);
    for (int i = 0; i < r.n_top; i++) {
        ck_assert_msg(knobs_stack_check(m, &r.top[i].s, tt, tu_err(&err)) == PLANNER_OK,
                      "plan %d: %s", i + 1, err.msg);
        ck_assert_int_gt(knob_ac_every_nth(m, &r.top[i].s), 1);
    }
    search_result_free(&r);
    cluster_free(c);
    model_free(m);
}
END_TEST

/* torchtitan's every-N-th-block count starts at a rank's first chunk that
 * holds blocks: with a user's layout whose first virtual stage is the
 * embedding alone (pp 2, vpp 2: "E|tttt|tttttt|ttttttL", rank 0's chunks 0
 * and 6 blocks, rank 1's 4 and 6), one block per chunk is every 4th block
 * (rank 0: block 4 of 6; rank 1: block 4 of its first 4, block 8 of the
 * next 6) and 2 per chunk none (4 blocks: N 2; 6 more: 3 of them); before,
 * rank 0's empty first chunk gave 0 (refused). */
START_TEST(every_nth_first_chunk_empty)
{
    run_spec rs;
    model *m = tu_model_load("configs/gpt3-175b.json", &rs);
    const stack_spec *tt = stack_get(STACK_PYTORCH_FSDP2);
    planner_error err;
    strategy s = one_stage(1, 8, 1, 1, 16);
    m->layers = 16;
    s.pp = 2;
    ck_assert_msg(strategy_layout_parse(&s, "E|tttt|tttttt|ttttttL", 16, 0, tu_err(&err)) ==
                  PLANNER_OK, "%s", err.msg);
    strategy_stages_from_chunks(&s, 16, 0);
    ck_assert_int_eq(s.vpp, 2);
    ck_assert_int_eq(strategy_chunk_layers(&s, 16, 0, 0, NULL), 0);
    s.stack = STACK_PYTORCH_FSDP2;
    s.zero = 3;
    s.overlap_grad_reduce = s.overlap_param_gather = true;
    s.recompute = RECOMPUTE_FULL;
    s.recompute_layers = 1;
    ck_assert_int_eq(knob_ac_every_nth(m, &s), 4);
    ck_assert_msg(knobs_stack_check(m, &s, tt, tu_err(&err)) == PLANNER_OK, "%s", err.msg);
    s.recompute_layers = 2;
    ck_assert_int_eq(knob_ac_every_nth(m, &s), 0);
    ck_assert_int_eq(knobs_stack_check(m, &s, tt, NULL), PLANNER_E_INPUT);
    s.recompute_layers = 6;   /* covers every chunk: mode "full" */
    ck_assert_int_eq(knob_ac_every_nth(m, &s), 1);
    model_free(m);
}
END_TEST

/* DeepSpeed-MoE's limits are the deepspeed stack's rules (inputs/stack.c:
 * v0.6.0 groups.py, sharded_moe.py TopKGate), so the search never plans
 * what only --emit deepspeed refused before (etp > 1), nor ep beyond the
 * data-parallel ranks or routing beyond top-2; megatron-core runs all
 * three.  Mixtral routes top-2; Qwen3-30B-A3B top-8. */
START_TEST(deepspeed_moe_rules)
{
    run_spec rs, rq;
    model *m = tu_model_load("configs/mixtral-8x7b.json", &rs);
    model *q = tu_model_load("configs/qwen3-30b-a3b.json", &rq);
    const stack_spec *ds = stack_get(STACK_DEEPSPEED), *mc = stack_get(STACK_MEGATRON_CORE);
    planner_error err;
    cluster *c = NULL;
    search_result r;
    strategy s = one_stage(2, 4, 2, 2, 32);   /* etp 2 = tp */
    s.stack = STACK_DEEPSPEED;
    ck_assert_int_eq(knob_rule(m, &s, KNOB_ETP, tu_err(&err)), PLANNER_E_INPUT);
    ck_assert_str_eq(err.msg, "DeepSpeed's MoE keeps every expert whole on each tensor-parallel "
                              "rank (no expert tensor parallelism): plan with --fix etp=1, not "
                              "etp=2");
    ck_assert_int_eq(knobs_stack_check(m, &s, ds, NULL), PLANNER_E_INPUT);
    ck_assert_int_eq(knobs_stack_check(m, &s, mc, NULL), PLANNER_OK);
    s.etp = 1;
    ck_assert_int_eq(knobs_stack_check(m, &s, ds, NULL), PLANNER_OK);
    s.ep = 8;   /* divides tp x dp = 8 (Megatron's rule), not dp = 4 */
    ck_assert_int_eq(knob_rule(m, &s, KNOB_EP, tu_err(&err)), PLANNER_E_INPUT);
    ck_assert_str_eq(err.msg, "DeepSpeed takes the expert-parallel ranks from the data-parallel "
                              "ones: ep=8 does not divide dp=4");
    s.stack = STACK_MEGATRON_CORE;
    ck_assert_int_eq(knob_rule(m, &s, KNOB_EP, NULL), PLANNER_OK);
    s.ep = 1;
    ck_assert_int_eq(knobs_stack_check(q, &s, ds, tu_err(&err)), PLANNER_E_INPUT);
    ck_assert_msg(strstr(err.msg, "routes top-1 or top-2 only") != NULL &&
                      strstr(err.msg, "top-8") != NULL, "%s", err.msg);
    ck_assert_int_eq(knobs_stack_check(q, &s, mc, NULL), PLANNER_OK);
    search_keeps_to(m, &rs, ds, "tp=2,pp=1");   /* the search's plans keep to them */
    ck_assert_int_eq(cluster_load(&c, "clusters/h100x512.yaml", tu_err(&err)), PLANNER_OK);
    c->stack = STACK_DEEPSPEED;
    ck_assert_int_eq(tu_search(&r, q, &rq, c, NULL, false, 1), PLANNER_E_INFEASIBLE);
    ck_assert_msg(strstr(r.advice, "no strategy satisfies DeepSpeed's rules") != NULL &&
                      strstr(r.advice, "top-8") != NULL, "%s", r.advice);
    search_result_free(&r);
    cluster_free(c);
    model_free(q);
    model_free(m);
}
END_TEST

/* The Transformer Engine graphs of the MoE router and dispatch
 * preprocessing (te_moe_graphs): --fix takes them; Megatron-Core only
 * (megatron-core's CUDA graphs: not torchtitan, DeepSpeed or Megatron-LM
 * 2020-2022); MoE models only; not with the full-iteration graph (one
 * --cuda-graph-impl), as pins a usage error; the search turns them on with
 * the flex dispatcher where they leave less host time (Qwen3-235B-A22B on
 * GB200 NVL72, ep 64: 2 local experts, 0.13 ms against moe_host_s) and
 * not with the alltoall dispatcher (no cost difference). */
START_TEST(te_moe_graphs_knob)
{
    run_spec rs, rd;
    model *m = tu_model_load("configs/qwen3-235b-a22b.json", &rs);
    model *d = tu_model_load("configs/llama3-70b.json", &rd);
    strategy_constraints f = STRATEGY_CONSTRAINTS_INIT;
    planner_error err = PLANNER_ERROR_INIT;
    strategy s = one_stage(1, 64, 64, 1, m->layers);
    cluster *c = NULL;
    search_result r, off;
    ck_assert_int_eq(constraints_parse(&f, "te_moe_graphs=on", NULL), PLANNER_OK);
    ck_assert_int_eq(f.te_moe_graphs, 1);
    ck_assert_int_eq(constraints_parse(&f, "cuda_graph=on", tu_err(&err)), PLANNER_E_USAGE);
    ck_assert_msg(strstr(err.msg, "cannot run with the full-iteration graph") != NULL, "%s",
                  err.msg);
    ck_assert_int_eq(f.cuda_graph, -1);   /* untouched on failure */
    for (int st = 0; st < STACK_COUNT; st++)
        ck_assert_int_eq(knob_stack_allows(stack_get(st), KNOB_TE_MOE_GRAPHS, 1),
                         st == STACK_MEGATRON_CORE);
    s.te_moe_graphs = true;
    ck_assert_int_eq(knob_rule(m, &s, KNOB_TE_MOE_GRAPHS, NULL), PLANNER_OK);
    ck_assert_int_eq(knob_rule(d, &s, KNOB_TE_MOE_GRAPHS, tu_err(&err)), PLANNER_E_INPUT);
    ck_assert_msg(strstr(err.msg, "need an MoE model") != NULL, "%s", err.msg);
    s.cuda_graph = true;
    ck_assert_int_eq(knob_rule(m, &s, KNOB_TE_MOE_GRAPHS, NULL), PLANNER_E_INPUT);
    ck_assert_int_eq(knobs_stack_check(m, &s, stack_get(STACK_PYTORCH_FSDP2), NULL),
                     PLANNER_E_INPUT);
    ck_assert_int_eq(cluster_load(&c, "clusters/gb200x576.yaml", tu_err(&err)), PLANNER_OK);
    /* searched: on with the flex dispatcher, and faster than pinned off */
    ck_assert_int_eq(tu_search(&r, m, &rs, c, "flex_dispatcher=on", false, 1), PLANNER_OK);
    ck_assert(r.top[0].s.te_moe_graphs);
    ck_assert_int_eq(tu_search(&off, m, &rs, c, "flex_dispatcher=on,te_moe_graphs=off", false,
                               1), PLANNER_OK);
    ck_assert(!off.top[0].s.te_moe_graphs);
    ck_assert_msg(r.top[0].e.step_time_s < 0.9 * off.top[0].e.step_time_s, "%g vs %g",
                  r.top[0].e.step_time_s, off.top[0].e.step_time_s);
    search_result_free(&r);
    search_result_free(&off);
    /* the alltoall dispatcher keeps moe_host_s: not turned on */
    ck_assert_int_eq(tu_search(&r, m, &rs, c, "flex_dispatcher=off", false, 1), PLANNER_OK);
    ck_assert(!r.top[0].s.te_moe_graphs);
    search_result_free(&r);
    /* a pin refused on the other stacks (search_run's check) */
    ck_assert_int_eq(constraints_stack_check(&f, stack_get(STACK_DEEPSPEED), tu_err(&err)),
                     PLANNER_E_USAGE);
    ck_assert_msg(strstr(err.msg, "te_moe_graphs=on") != NULL, "%s", err.msg);
    ck_assert_int_eq(constraints_stack_check(&f, stack_get(STACK_MEGATRON_CORE), NULL),
                     PLANNER_OK);
    cluster_free(c);
    model_free(d);
    model_free(m);
}
END_TEST

/* Megatron-Core refuses the router and preprocessing graphs under full
 * recompute ("full recompute is only supported with full iteration CUDA
 * graph", transformer_config.py, core_v0.16.0 to core_v0.19.0): the rule
 * refuses the pair, --fix refuses it as a usage error, and a search with
 * full recompute pinned leaves the graphs off where it would have turned
 * them on (Qwen3-235B-A22B on GB200 NVL72 with the flex dispatcher). */
START_TEST(te_moe_graphs_not_with_full_recompute)
{
    run_spec rs;
    model *m = tu_model_load("configs/qwen3-235b-a22b.json", &rs);
    strategy_constraints f = STRATEGY_CONSTRAINTS_INIT;
    planner_error err = PLANNER_ERROR_INIT;
    strategy s = one_stage(1, 64, 64, 1, m->layers);
    cluster *c = NULL;
    search_result r;
    s.te_moe_graphs = true;
    s.recompute = RECOMPUTE_SELECTIVE;
    ck_assert_int_eq(knob_rule(m, &s, KNOB_TE_MOE_GRAPHS, NULL), PLANNER_OK);
    s.recompute = RECOMPUTE_FULL;
    ck_assert_int_eq(knob_rule(m, &s, KNOB_TE_MOE_GRAPHS, tu_err(&err)), PLANNER_E_INPUT);
    ck_assert_msg(strstr(err.msg, "cannot run with full recomputation") != NULL, "%s", err.msg);
    ck_assert_int_eq(constraints_parse(&f, "te_moe_graphs=on,recompute=full", tu_err(&err)),
                     PLANNER_E_USAGE);
    ck_assert_int_eq(cluster_load(&c, "clusters/gb200x576.yaml", tu_err(&err)), PLANNER_OK);
    ck_assert_int_eq(tu_search(&r, m, &rs, c, "flex_dispatcher=on,recompute=full", false, 1),
                     PLANNER_OK);
    ck_assert_int_eq(r.n_top >= 1, 1);
    ck_assert_int_eq(r.top[0].s.recompute, RECOMPUTE_FULL);
    ck_assert(r.top[0].s.flex_dispatcher && !r.top[0].s.te_moe_graphs);
    search_result_free(&r);
    cluster_free(c);
    model_free(m);
}
END_TEST

/* The flex token dispatcher in the default search (P10): its backends by
 * release and GPU (knob_flex_backend: HybridEP from core_v0.16.0 on Ampere
 * to Blackwell, GB200 NVL72 included; core_v0.15.0's DeepEP not on a
 * multi-node NVLink domain; none on V100 or AMD GPUs); Qwen3-235B-A22B on
 * GB200 NVL72 now runs it with the router graphs (te_moe_graphs) and is
 * faster than the best alltoall plan (1.98 s against 3.52 s a step at
 * moe_host_s 1.75 ms: the graphs leave 0.53 ms x 2 local experts / 8 of
 * host time); core_v0.15.0 (no HybridEP) never gets it there, and the
 * Not-searched list says why; DeepSpeed's stack never gets it; a tie goes
 * to the alltoall dispatcher, and the tied flex plan is not listed. */
START_TEST(flex_dispatcher_searched)
{
    run_spec rs, rx;
    model *m = tu_model_load("configs/qwen3-235b-a22b.json", &rs);
    model *x = tu_model_load("configs/mixtral-8x7b.json", &rx);
    planner_error err = PLANNER_ERROR_INIT;
    cluster *gb = NULL, *h = NULL;
    search_result r, off;
    search_options o;
    cost_params p;
    node_group v;
    strategy a, b;
    bool named = false;
    ck_assert_int_eq(cluster_load(&gb, "clusters/gb200x576.yaml", tu_err(&err)), PLANNER_OK);
    ck_assert_int_eq(cluster_load(&h, "clusters/h100x512.yaml", tu_err(&err)), PLANNER_OK);
    ck_assert_ptr_null(knob_flex_backend(MEGATRON_0_15, &gb->group[0]));
    ck_assert_str_eq(knob_flex_backend(MEGATRON_0_16, &gb->group[0]), "hybridep");
    ck_assert_str_eq(knob_flex_backend(MEGATRON_0_19, &gb->group[0]), "hybridep");
    ck_assert_str_eq(knob_flex_backend(MEGATRON_0_15, &h->group[0]), "deepep");
    ck_assert_str_eq(knob_flex_backend(MEGATRON_0_19, &h->group[0]), "hybridep");
    v = h->group[0];
    v.gpu = *catalog_find("V100-SXM2-32GB");
    ck_assert_ptr_null(knob_flex_backend(MEGATRON_0_19, &v));
    v.gpu = *catalog_find("MI300X");
    ck_assert_ptr_null(knob_flex_backend(MEGATRON_0_19, &v));
    ck_assert_str_eq(knob_flex_backend_missing(MEGATRON_0_19, &h->group[0]), "");
    /* the default search: flex with the graphs, faster than alltoall */
    ck_assert_int_eq(tu_search(&r, m, &rs, gb, NULL, false, 1), PLANNER_OK);
    ck_assert_int_eq(tu_search(&off, m, &rs, gb, "flex_dispatcher=off", false, 1), PLANNER_OK);
    ck_assert(r.top[0].s.flex_dispatcher && r.top[0].s.te_moe_graphs);
    ck_assert(!off.top[0].s.flex_dispatcher && !off.top[0].s.te_moe_graphs);
    ck_assert_msg(r.top[0].e.step_time_s < 0.7 * off.top[0].e.step_time_s, "%g vs %g",
                  r.top[0].e.step_time_s, off.top[0].e.step_time_s);
    search_result_free(&r);
    search_result_free(&off);
    /* core_v0.15.0: DeepEP only, not on NVL72 */
    tu_search_options(&o, &rs, NULL, 10);
    o.megatron = MEGATRON_0_15;
    cost_params_default(&p);
    ck_assert_int_eq(search_run(&r, m, gb, &p, &o, tu_err(&err)), PLANNER_OK);
    for (int i = 0; i < r.n_top; i++)
        ck_assert_msg(!r.top[i].s.flex_dispatcher, "plan %d runs flex on core_v0.15.0", i + 1);
    for (int i = 0; i < r.n_not_searched; i++)
        if (strstr(r.not_searched[i], "the flex token dispatcher on GB200 (core_v0.15.0 "
                                      "has only DeepEP") != NULL) {
            /* the way to it is the release with HybridEP, not a pin this
             * release cannot run (emit refuses it) */
            named = true;
            ck_assert_msg(strstr(r.not_searched[i], "; --megatron-version 0.16 plans it)") !=
                              NULL && strstr(r.not_searched[i], "--fix") == NULL,
                          "%s", r.not_searched[i]);
        }
    ck_assert(named);
    search_result_free(&r);
    /* Mixtral on 64 H100 nodes: ep 8 (its 8 experts in one node) without the
     * all-to-all overlap and the router graphs costs the same with either
     * dispatcher (one node's traffic either way): the alltoall plan ranks
     * first, its flex twin is not kept.  (Under the overlap HybridEP's
     * kernels hold 32 of the 132 SMs, a smaller share than overlap_exposed,
     * and the graphs cut host time: flex wins there.  Selective recompute of
     * moe_act alone: with layernorm too the flex plan's router graphs keep
     * the norm and skip its re-run.) */
    ck_assert_int_eq(tu_search(&r, x, &rx, h,
                               "recompute_modules=moe_act,ep_comm_overlap=off,te_moe_graphs=off",
                               false, 10),
                     PLANNER_OK);
    ck_assert(!r.top[0].s.flex_dispatcher);
    for (int i = 0; i < r.n_top; i++)
        for (int j = 0; j < r.n_top; j++) {
            const strategy *u = &r.top[i].s, *w = &r.top[j].s;
            ck_assert_msg(!(u->flex_dispatcher && !w->flex_dispatcher && u->tp == w->tp &&
                            u->pp == w->pp && u->dp == w->dp && u->cp == w->cp &&
                            u->ep == w->ep && u->etp == w->etp && u->vpp == w->vpp &&
                            u->mbs == w->mbs && u->zero == w->zero &&
                            u->recompute == w->recompute &&
                            r.top[i].e.tokens_per_s == r.top[j].e.tokens_per_s),
                          "plan %d is plan %d's flex twin", i + 1, j + 1);
        }
    search_result_free(&r);
    /* DeepSpeed has no flex dispatcher */
    h->stack = STACK_DEEPSPEED;
    ck_assert_int_eq(tu_search(&r, x, &rx, h, "ep=8,etp=1", false, 10), PLANNER_OK);
    for (int i = 0; i < r.n_top; i++)
        ck_assert(!r.top[i].s.flex_dispatcher);
    search_result_free(&r);
    /* a tie goes to the alltoall dispatcher */
    memset(&a, 0, sizeof a);
    a.tp = a.pp = a.dp = a.cp = a.vpp = a.mbs = 1;
    a.ep = 8;
    b = a;
    b.flex_dispatcher = true;
    ck_assert_int_lt(search_rank_cmp(1.0, 1.0, &a, 1.0, 1.0, &b), 0);
    ck_assert_int_gt(search_rank_cmp(1.0, 1.0, &b, 1.0, 1.0, &a), 0);
    cluster_free(h);
    cluster_free(gb);
    model_free(x);
    model_free(m);
}
END_TEST

/* emit_every_flag's plan A on m (Mixtral 8x7B): every knob but the
 * embedding/loss accounting off its minimum. */
static void every_flag_plan_a(strategy *a, const model *m)
{
    memset(a, 0, sizeof *a);
    a->tp = 8; a->pp = 4; a->dp = 2; a->cp = 2; a->ep = 2; a->etp = 1; a->vpp = 2; a->mbs = 2;
    a->gbs = 128; a->seq_len = 4096;
    a->sp = true; a->tp_comm_overlap = true;
    a->recompute = RECOMPUTE_FULL; a->recompute_layers = 2;
    a->recompute_method = RECOMPUTE_UNIFORM;   /* 32 layers / (pp 4 x vpp 2): groups of 2 */
    a->zero = 1; a->overlap_grad_reduce = true; a->overlap_param_gather = true;
    a->grad_reduce_bf16 = true;
    a->opt_state = OPT_STATE_BF16;   /* the precision-aware optimizer: three flags */
    a->cp_comm = CP_COMM_ALLGATHER;   /* a2a: 1 K/V head per TP rank, not / cp 2 */
    a->n_stages = a->pp;
    for (int i = 0; i < a->pp; i++) {
        a->stage[i].n_layers = m->layers / a->pp;
        a->stage[i].tp = a->tp;
        a->stage[i].dp = a->dp;
    }
    for (int i = 0; i < a->pp; i++)
        strategy_chunk_layers(a, m->layers, i, 0, &a->stage[i].first_layer);
}

START_TEST(emit_every_flag)
{
    planner_error err = PLANNER_ERROR_INIT;
    model *m = NULL, *q = NULL;
    cluster *c = NULL;
    char *all = NULL;
    strategy a, b, e, h, g;
    bool set[KNOB_COUNT] = {false};
    ck_assert_int_eq(model_load(&m, NULL, "configs/mixtral-8x7b.json", NULL, &err), PLANNER_OK);
    ck_assert_int_eq(cluster_load(&c, "clusters/h100x512.yaml", &err), PLANNER_OK);
    every_flag_plan_a(&a, m);
    emit_append(m, c, &a, &all);
    /* B: the embedding and the loss counted as layers ((32 + 2) / 2 each) */
    memset(&b, 0, sizeof b);
    b.tp = 8; b.pp = 2; b.dp = 1; b.cp = 1; b.ep = 1; b.etp = 1; b.vpp = 1; b.mbs = 1;
    b.gbs = 64; b.seq_len = 4096;
    b.sp = true;   /* MoE layers at tp > 1 need sp (moe_tp_needs_sp) */
    b.recompute = RECOMPUTE_SELECTIVE;
    b.recompute_modules = RC_MOD_LAYERNORM | RC_MOD_MOE_ACT;
    ck_assert_int_eq(strategy_split_account(&b, m->layers, 0), 0);
    emit_append(m, c, &b, &all);
    /* E: the MoE all-to-alls overlapped (needs ep > 1, no full recompute,
     * vpp > 1 with pp > 1: here pp 1); the experts split over etp 2 (ep 2 x
     * etp 2 divides tp 8: --expert-tensor-parallel-size 2, not tp's 8) */
    e = one_stage(8, 1, 2, 2, m->layers);
    e.sp = true;
    e.ep_comm_overlap = true;
    e.cuda_graph = true;   /* a full-iteration graph: two flags */
    e.flex_dispatcher = true;   /* the flex dispatcher with DeepEP: two flags */
    emit_append(m, c, &e, &all);
    /* F: hierarchical CP, all-to-all over 2 cp ranks, the ring over 2 (4 K/V
     * heads a TP rank) */
    h = e;
    h.tp = 2; h.cp = 4; h.dp = 8; h.ep = 1; h.etp = 1; h.ep_comm_overlap = false;
    h.cuda_graph = false;
    h.flex_dispatcher = false;
    h.cp_comm = CP_COMM_A2A_P2P; h.cp_a2a = 2;
    h.stage[0].tp = 2;
    h.stage[0].dp = 8;
    emit_append(m, c, &h, &all);
    ck_assert_msg(strstr(all, "--cp-comm-type a2a+p2p \\\n"
                              "--hierarchical-context-parallel-sizes 2 2 ") != NULL,
                  "%s", all);
    /* etp: the flag where it differs from tp (Megatron's default), right
     * after --expert-model-parallel-size; h (tp 2, etp 1) says 1 */
    ck_assert_msg(strstr(all, "--expert-model-parallel-size 2 \\\n--expert-tensor-parallel-size 2 ")
                  != NULL, "%s", all);
    ck_assert_msg(strstr(all, "--expert-tensor-parallel-size 1 ") != NULL, "%s", all);
    ck_assert_msg(strstr(all, "--cuda-graph-impl local \\\n--cuda-graph-scope full_iteration ")
                  != NULL, "%s", all);
    /* the flex dispatcher: its type with the experts' flags, the newest
     * release's backend (HybridEP) with the parallel ones */
    ck_assert_msg(strstr(all, "--moe-token-dispatcher-type flex \\\n--moe-grouped-gemm ")
                  != NULL, "%s", all);
    ck_assert_msg(strstr(all, "--moe-flex-dispatcher-backend hybridep ") != NULL, "%s", all);
    ck_assert_msg(strstr(all, "--moe-enable-deepep") == NULL, "%s", all);
    ck_assert_msg(strstr(all, "--use-precision-aware-optimizer \\\n--exp-avg-dtype bf16 \\\n"
                              "--exp-avg-sq-dtype bf16 ") != NULL, "%s", all);
    /* G: the shared-expert overlap, on a model with shared experts
     * (Qwen1.5-MoE-A2.7B: 24 layers, 60 experts, 16 heads), ep 4 */
    ck_assert_int_eq(model_load(&q, NULL, "tests/data/qwen1.5-moe-a2.7b.json", NULL, &err),
                     PLANNER_OK);
    g = one_stage(1, 8, 4, 1, q->layers);
    g.shared_expert_overlap = true;
    g.te_moe_graphs = true;   /* the router and preprocessing graphs: three flags */
    emit_append(q, c, &g, &all);
    ck_assert_msg(strstr(all, "--moe-shared-expert-overlap") != NULL, "%s", all);
    ck_assert_msg(strstr(all, "--cuda-graph-impl transformer_engine \\\n"
                              "--cuda-graph-scope moe_router moe_preprocess \\\n"
                              "--te-rng-tracker ") != NULL, "%s", all);
    for (int k = 0; k < KNOB_COUNT; k++) {
        const knob_info *ki = knob_get_info((knob_id)k);
        char flag[96];
        set[k] = knob_value(&a, (knob_id)k) > ki->min || knob_value(&b, (knob_id)k) > ki->min ||
                 knob_value(&e, (knob_id)k) > ki->min || knob_value(&h, (knob_id)k) > ki->min ||
                 knob_value(&g, (knob_id)k) > ki->min;
        if (ki->meg == MEG_NONE)
            continue;
        /* a knob added to the registry needs a value here, so that its
         * flags are checked */
        ck_assert_msg(set[k], "%s: at its minimum in both test plans", ki->key);
        snprintf(flag, sizeof flag, "%.*s", (int)strcspn(ki->megatron, " "), ki->megatron);
        ck_assert_msg(strstr(all, flag) != NULL, "%s: %s not emitted", ki->key, flag);
    }
    free(all);
    model_free(m);
    model_free(q);
    cluster_free(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("knobs");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, registry_consistent);
    tcase_add_test(tc, validation_rows);
    tcase_add_test(tc, fix_from_registry);
    tcase_add_test(tc, shared_overlap_flex_by_release);
    tcase_add_test(tc, plan_json_and_table);
    tcase_add_test(tc, fix_derived_knobs);
    tcase_add_test(tc, fix_reaches_the_plan);
    tcase_add_test(tc, sweep_csv_and_jsonl);
    tcase_add_test(tc, validate_json);
    tcase_add_test(tc, emit_every_flag);
    tcase_add_test(tc, moe_tp_needs_sp);
    tcase_add_test(tc, fsdp2_stack_rules);
    tcase_add_test(tc, deepspeed_moe_rules);
    tcase_add_test(tc, te_moe_graphs_knob);
    tcase_add_test(tc, te_moe_graphs_not_with_full_recompute);
    tcase_add_test(tc, flex_dispatcher_searched);
    tcase_add_test(tc, fsdp2_every_nth_searched);
    tcase_add_test(tc, every_nth_first_chunk_empty);
    tcase_add_test(tc, help_lists_fix_keys);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
