/* report.c: the search's result for people (a ranked table and the winner's
 * time and memory breakdowns), for programs (JSON, schema in
 * docs/json-schema.md) and, when nothing fits, the closest miss and advice.
 *
 * Invariants: the table and the JSON show the same plans in the same order
 * (search_result.top, best first); every number printed comes from the
 * evaluation, nothing is recomputed here except sums and ratios of it.  JSON
 * is built with jansson and serialized by jsonout_text() (the whole text or
 * nothing, then one write), so escaping is right and a failed allocation
 * writes nothing; non-finite numbers become null (jsonout_real).  Sizes are
 * printed in GiB (2^30 bytes), JSON carries bytes and seconds.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "base/jsonout.h"
#include "base/text.h"
#include "base/units.h"
#include "cost/layer_cost.h"
#include "model/knobs.h"
#include "out/report.h"

#define GIB (1024.0 * 1024.0 * 1024.0)


/* ---- helpers -------------------------------------------------------------- */

/* The plan table's knob columns (model/knobs.c: those with a table_head;
 * ep only for MoE models): the headers when s is NULL, else s's values. */
static void table_knobs(FILE *out, const strategy *s, bool moe)
{
    char v[KNOB_TEXT_MAX];
    for (int k = 0; k < KNOB_COUNT; k++) {
        const knob_info *ki = knob_get_info((knob_id)k);
        if (ki->table_head == NULL || (ki->table_moe_only && !moe))
            continue;
        fprintf(out, " %*s", ki->table_width,
                s == NULL ? ki->table_head : knob_text(s, (knob_id)k, true, v, sizeof v));
    }
}

static double pct(double part, double whole)
{
    return whole > 0 ? 100.0 * part / whole : 0.0;
}

static const memory_breakdown *peak_memory(const evaluation *e)
{
    if (e->n_stages <= 0 || e->peak_stage < 0 || e->peak_stage >= e->n_stages)
        return NULL;
    return &e->stage_memory[e->peak_stage];
}

static void header(FILE *out, const model *m, const cluster *c, const search_result *res)
{
    int gpus = cluster_total_gpus(c);
    fprintf(out, "%s on %s: %d GPUs (", m->name, c->name, gpus);
    for (int g = 0; g < c->n_groups; g++)
        fprintf(out, "%s%d x %d %s", g ? " + " : "", c->group[g].nodes,
                c->group[g].gpus_per_node, c->group[g].gpu.name);
    fprintf(out, "), global batch %d, sequence %d, %s, stack %s", res->gbs, res->seq_len,
            precision_name(m->prec), stack_get(c->stack)->name);
    if (m->torch_compile)
        fprintf(out, " (torch.compile)");
    if (res->mem_headroom > 0)
        fprintf(out, ", memory headroom %g%% (plans fit in %g%% of usable memory)",
                res->mem_headroom * 100, (1 - res->mem_headroom) * 100);
    fputc('\n', out);
}

void report_stage_gpus(const cluster *c, const strategy *s, int i, char *buf, size_t size)
{
    int g[STAGE_MIX_MAX], n[STAGE_MIX_MAX];
    int k = strategy_stage_members(s, i, g, n, STAGE_MIX_MAX);
    size_t len = 0;
    if (size == 0)
        return;
    buf[0] = '\0';
    for (int j = 0; j < k && len + 1 < size; j++) {
        const char *name = g[j] >= 0 && g[j] < c->n_groups ? c->group[g[j]].gpu.name : "?";
        if (k == 1)
            snprintf(buf, size, "%s", name);
        else
            snprintf(buf + len, size - len, "%s%sx%d", j ? "+" : "", name, n[j]);
        len = strlen(buf);
    }
}

/* Stage i's node groups and GPUs: "p3 (V100-SXM2-16GB)", spanning groups
 * "p3+g4dn (V100-SXM2-16GBx4+T4x4)". */
static void stage_where(const cluster *c, const strategy *s, int i, char *buf, size_t size)
{
    int g[STAGE_MIX_MAX], n[STAGE_MIX_MAX];
    int k = strategy_stage_members(s, i, g, n, STAGE_MIX_MAX);
    char gpus[160];
    size_t len = 0;
    buf[0] = '\0';
    for (int j = 0; j < k && len + 1 < size; j++) {
        int q = g[j] >= 0 && g[j] < c->n_groups ? g[j] : 0;
        snprintf(buf + len, size - len, "%s%s", j ? "+" : "", c->group[q].name);
        len = strlen(buf);
    }
    report_stage_gpus(c, s, i, gpus, sizeof gpus);
    if (len + 1 < size)
        snprintf(buf + len, size - len, " (%s)", gpus);
}

/* The node groups a plan's stages sit on, in stage order, runs merged:
 * "dgx-h100 (H100-SXM)" or "a (A100) stages 0-3, b (H100) stages 4-7". */
static void stage_groups(const cluster *c, const strategy *s, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < s->n_stages && len + 1 < size;) {
        char here[320], next[320];
        int j = i;
        stage_where(c, s, i, here, sizeof here);
        while (j + 1 < s->n_stages) {
            stage_where(c, s, j + 1, next, sizeof next);
            if (strcmp(next, here) != 0)
                break;
            j++;
        }
        if (i == 0 && j == s->n_stages - 1)
            snprintf(buf + len, size - len, "%s", here);
        else
            snprintf(buf + len, size - len, "%s%s stages %d-%d", i ? ", " : "", here, i, j);
        len = strlen(buf);
        i = j + 1;
    }
}

/* Whether s's stages split the layers unevenly or span node groups: its
 * stage map is then worth printing. */
static bool stage_map_matters(const strategy *s)
{
    for (int i = 1; i < s->n_stages && i < STRATEGY_MAX_STAGES; i++)
        if (s->stage[i].n_layers != s->stage[0].n_layers ||
            s->stage[i].group != s->stage[0].group || s->stage[i].tp != s->stage[0].tp)
            return true;
    return s->n_mixes > 0;
}

/* "28/52" (layers per stage; long pipelines elided in the middle). */
static void layer_split(const strategy *s, char *buf, size_t size)
{
    size_t len = 0;
    int n = s->n_stages < STRATEGY_MAX_STAGES ? s->n_stages : STRATEGY_MAX_STAGES;
    buf[0] = '\0';
    for (int i = 0; i < n && len + 1 < size; i++) {
        if (n > 8 && i == 3) {
            snprintf(buf + len, size - len, "/...");
            i = n - 3;
        } else {
            snprintf(buf + len, size - len, "%s%d", i ? "/" : "", s->stage[i].n_layers);
        }
        len = strlen(buf);
    }
}

/* The layers of rank `rank`'s virtual chunks, "0 | 15-16 | 31-32 | ..."
 * (strategy_chunk_layers' rule; "-" for a chunk holding only the embedding
 * or the loss; more than 8 chunks: the first 4, "...", the last 2). */
static void chunk_ranges(const model *m, const strategy *s, int rank, char *buf, size_t size)
{
    size_t len = 0;
    int v = s->vpp > 0 ? s->vpp : 1;
    buf[0] = '\0';
    for (int j = 0; j < v && len + 1 < size; j++) {
        int first = 0, n = strategy_chunk_layers(s, m->layers, rank, j, &first);
        const char *sep = j ? " | " : "";
        if (v > 8 && j == 4) {
            snprintf(buf + len, size - len, " | ...");
            j = v - 3;
        } else if (n <= 0) {
            snprintf(buf + len, size - len, "%s-", sep);
        } else if (n == 1) {
            snprintf(buf + len, size - len, "%s%d", sep, first);
        } else {
            snprintf(buf + len, size - len, "%s%d-%d", sep, first, first + n - 1);
        }
        len = strlen(buf);
    }
}

/* The best plan's stages: layers, GPU, TP, time per micro-batch, memory;
 * with interleaving, each rank's chunks (its layers are not contiguous). */
static void stage_map(FILE *out, const model *m, const cluster *c, const plan *pl)
{
    const strategy *s = &pl->s;
    const evaluation *e = &pl->e;
    int n = s->n_stages < e->n_stages ? s->n_stages : e->n_stages;
    char chunks[160];
    if (s->vpp > 1)
        fprintf(out, "  stage map (layers, GPU, tp, forward + backward of one micro-batch, "
                     "memory per GPU, the rank's %d chunks in pipeline order):\n", s->vpp);
    else
        fprintf(out, "  stage map (layers, GPU, tp, forward + backward of one micro-batch, "
                     "memory per GPU):\n");
    for (int i = 0; i < n && i < STRATEGY_MAX_STAGES; i++) {
        const stage_spec *st = &s->stage[i];
        char gpus[160];
        if (n > 16 && i == 8) {
            fprintf(out, "    ...\n");
            i = n - 5;
            continue;
        }
        /* an EP group across GPU types: its all-to-all at the slowest member's links */
        const char *epx = cost_stage_ep_mixed(s, i) ? "  EP groups across the GPU types" : "";
        report_stage_gpus(c, s, i, gpus, sizeof gpus);
        if (s->vpp > 1) {
            chunk_ranges(m, s, i, chunks, sizeof chunks);
            fprintf(out, "    %3d  %3d layers  %-16s tp %-2d %9.2f ms %7.2f GiB  layers %s%s\n",
                    i, st->n_layers, gpus, st->tp > 0 ? st->tp : s->tp,
                    1e3 * (e->stage_fwd_s[i] + e->stage_bwd_s[i]),
                    e->stage_memory[i].total_bytes / GIB, chunks, epx);
            continue;
        }
        fprintf(out, "    %3d  layers %3d-%-3d (%3d)  %-16s tp %-2d %9.2f ms %7.2f GiB%s\n", i,
                st->first_layer, st->first_layer + st->n_layers - 1, st->n_layers,
                gpus, st->tp > 0 ? st->tp : s->tp,
                1e3 * (e->stage_fwd_s[i] + e->stage_bwd_s[i]),
                e->stage_memory[i].total_bytes / GIB, epx);
    }
}

/* "tp 8, pp 16, dp 4, ..." for one strategy. */
static void describe(const strategy *s, char *buf, size_t size)
{
    char ep[24] = "", rc[96] = "", mods[KNOB_TEXT_MAX];
    if (s->ep > 1)
        snprintf(ep, sizeof ep, ", ep %d", s->ep);
    if (s->recompute == RECOMPUTE_FULL && s->recompute_layers > 0)
        snprintf(rc, sizeof rc, " (%s of %d layer%s per %s)",
                 s->recompute_method == RECOMPUTE_UNIFORM ? "uniform groups" : "block",
                 s->recompute_layers, s->recompute_layers == 1 ? "" : "s",
                 s->vpp > 1 ? "virtual stage" : "stage");
    else if (s->recompute == RECOMPUTE_SELECTIVE && s->recompute_modules > 0 &&
             s->recompute_modules != RC_MOD_CORE_ATTN)
        snprintf(rc, sizeof rc, " (%s)",
                 knob_text(s, KNOB_RECOMPUTE_MODULES, false, mods, sizeof mods));
    int mb = strategy_microbatches(s);
    snprintf(buf, size,
             "tp %d, pp %d, dp %d, cp %d%s, vpp %d, mbs %d (%d micro-batch%s), sp %s, "
             "recompute %s%s, zero %d%s",
             s->tp, s->pp, s->dp, s->cp, ep, s->vpp, s->mbs, mb, mb == 1 ? "" : "es",
             s->sp ? "on" : "off",
             recompute_name(s->recompute), rc, s->zero,
             s->zero == 1 ? " (distributed optimizer)" : "");
}

/* ", N refused by Megatron's rules" and / or ", M by torchtitan's rules"
 * (the stack's own, stack_spec.rules_by), or "" when nothing was refused. */
static void refused_text(const search_result *res, char *buf, size_t size)
{
    char megatron[32], own[32];
    long own_n = res->invalid_stack, megatron_n = res->invalid - own_n;
    text_count((double)megatron_n, megatron, sizeof megatron);
    text_count((double)own_n, own, sizeof own);
    snprintf(buf, size, "%s%s%s%s%s%s%s%s", megatron_n > 0 ? ", " : "",
             megatron_n > 0 ? megatron : "", megatron_n > 0 ? " refused by Megatron's rules" : "",
             own_n > 0 ? ", " : "", own_n > 0 ? own : "",
             own_n > 0 ? (megatron_n > 0 ? " by " : " refused by ") : "",
             own_n > 0 && res->rules_by != NULL ? res->rules_by : "", own_n > 0 ? "'s rules" : "");
}

static void search_stats(FILE *out, const search_result *res)
{
    char cand[32], feas[32], pruned[32], refused[128], rate[32];
    text_count((double)res->candidates, cand, sizeof cand);
    text_count((double)res->feasible, feas, sizeof feas);
    text_count((double)res->pruned, pruned, sizeof pruned);
    refused_text(res, refused, sizeof refused);
    text_count(res->seconds > 0 ? (double)res->candidates / res->seconds : 0, rate, sizeof rate);
    fprintf(out, "Search: %s candidates evaluated (%s feasible, %s pruned as unable to win%s), "
            "%.3f s, %s candidates/s\n", cand, feas, pruned, refused, res->seconds, rate);
    if (res->limited) {
        char work[32];
        text_count(res->work, work, sizeof work);
        fprintf(out, "Search stopped at its work limit (%s steps): %s %s candidates evaluated, "
                "not the whole space (--search-limit raises the limit)\n", work,
                res->n_top > 0 ? "the plans above are the best of the" : "nothing fit among the",
                cand);
    }
    if (res->n_not_searched > 0) {
        fputs("Not searched:", out);
        for (int i = 0; i < res->n_not_searched; i++)
            fprintf(out, "%s %s", i ? ";" : "", res->not_searched[i]);
        fputc('\n', out);
    }
}

static void memory_lines(FILE *out, const memory_breakdown *mb, const char *indent)
{
    fprintf(out, "%sweights       %8.2f GiB\n", indent, mb->weights_bytes / GIB);
    fprintf(out, "%sgradients     %8.2f GiB\n", indent, mb->grads_bytes / GIB);
    fprintf(out, "%soptimizer     %8.2f GiB\n", indent, mb->optimizer_bytes / GIB);
    fprintf(out, "%sactivations   %8.2f GiB\n", indent, mb->activations_bytes / GIB);
    fprintf(out, "%sreserve       %8.2f GiB\n", indent, mb->reserve_bytes / GIB);
    fprintf(out, "%stotal         %8.2f GiB of %.2f GiB usable (%.0f%%)\n", indent,
            mb->total_bytes / GIB, mb->capacity_bytes / GIB,
            pct(mb->total_bytes, mb->capacity_bytes));
}

/* ---- table ------------------------------------------------------------------ */

/* ---- time to train (schedule/goodput.h, docs/goodput.md) ---------------------- */

/* "106.5 days", "3.09 h", "12.5 min", "2.80 s", "14.2 ms". */
static void fmt_duration(double s, char *buf, size_t size)
{
    if (!isfinite(s) || s < 0)
        snprintf(buf, size, "-");
    else if (s >= 2 * 86400.0)
        snprintf(buf, size, "%.1f days", s / 86400.0);
    else if (s >= 2 * 3600.0)
        snprintf(buf, size, "%.2f h", s / 3600.0);
    else if (s >= 120)
        snprintf(buf, size, "%.1f min", s / 60.0);
    else if (s >= 1)
        snprintf(buf, size, "%.2f s", s);
    else
        snprintf(buf, size, "%.3g ms", s * 1e3);
}

static const char *checkpoint_mode_name(checkpoint_mode mode)
{
    switch (mode) {
    case CHECKPOINT_SYNC: return "synchronous";
    case CHECKPOINT_FIXED: return "--checkpoint-write-time";
    case CHECKPOINT_ASYNC:
    default: return "asynchronous: the device-to-host copy";
    }
}

/* The time to train, GPU-hours, cost and energy of `n` tokens. */
static void time_to_train_lines(FILE *out, const goodput *g, double tokens)
{
    char a[48], b[48];
    fmt_duration(g->time_to_train_s, a, sizeof a);
    fmt_duration(g->time_failure_free_s, b, sizeof b);
    fprintf(out, "Time to train %.4g tokens: %s (%s without failures)\n", tokens, a, b);
    text_count(g->gpu_hours, a, sizeof a);
    fprintf(out, "  GPU-hours           %s on %d GPUs\n", a, g->gpus);
    text_count(g->cost, a, sizeof a);
    fprintf(out, "  cost                %s at %.2f per GPU-hour%s\n", a, g->gpu_hour_price,
            g->price_default ? " (the GPU generation's reference price in USD; "
                               "--gpu-hour-price)" : "");
    fprintf(out, "  energy              %.4g MWh (%.0f W per GPU: board power + node "
            "overhead, an upper bound)\n", g->energy_kwh / 1000.0, g->power_w / g->gpus);
}

/* The best plan under failures: MTTF, checkpoints, ETTR, goodput, and with
 * --tokens the time to train. */
static void goodput_lines(FILE *out, const model *m, const cluster *c,
                          const search_options *opts, const plan *best)
{
    const goodput_options *o = &opts->goodput;
    goodput g;
    char a[48], b[48], d[48];
    planner_error why = PLANNER_ERROR_INIT;
    planner_status rc = goodput_evaluate(&g, m, c, &best->s, &best->e, o, &why);

    if (!(g.mttf_s > 0)) {
        fprintf(out, "Failures: %s\n", why.msg);
        return;
    }
    fmt_duration(g.mttf_s, a, sizeof a);
    fprintf(out, "Failures and checkpoints (docs/goodput.md):\n");
    fprintf(out, "  job MTTF            %s (%d nodes x %.3g failures per 1000 node-days%s)\n", a,
            g.nodes, g.failures_per_node_day * 1000.0,
            g.rate_default ? ", the GPU generation's default" : "");
    units_format(g.checkpoint_bytes, UNIT_SIZE, a, sizeof a);
    fmt_duration(g.checkpoint_write_s, b, sizeof b);
    fmt_duration(g.checkpoint_persist_s, d, sizeof d);
    fprintf(out, "  checkpoint          %s, blocks %s (%s), written in %s\n", a, b,
            checkpoint_mode_name(o->mode), d);
    fmt_duration(g.checkpoint_interval_s, a, sizeof a);
    fprintf(out, "  interval            every %s of training (%s)\n", a,
            g.interval_auto ? "auto: Daly's optimum" : "--checkpoint-interval");
    fmt_duration(g.restart_s, a, sizeof a);
    fmt_duration(g.checkpoint_load_s, b, sizeof b);
    fprintf(out, "  restart             %s (loading the checkpoint: %s)\n", a, b);
    text_count(g.goodput_tokens_per_s, a, sizeof a);
    fprintf(out, "  ETTR                %.3f: goodput %s tokens/s\n", g.ettr, a);
    if (o->tokens > 0) {
        if (rc != PLANNER_OK)
            fprintf(out, "Time to train %.4g tokens: %s\n", o->tokens, why.msg);
        else
            time_to_train_lines(out, &g, o->tokens);
    }
}


void report_table(FILE *out, const model *m, const cluster *c,
                  const search_options *opts, const search_result *res)
{
    char buf[512], tps[32], tpg[32];
    const plan *best;
    const evaluation *e;
    const time_breakdown *t;
    const memory_breakdown *mb;
    (void)opts;

    header(out, m, c, res);
    if (res->n_top <= 0) {
        fprintf(out, "No feasible plan.\n");
        search_stats(out, res);
        return;
    }
    bool moe = m->moe.experts > 0;   /* MoE: an ep column, and a caution */
    if (moe)
        fprintf(out, "note: MoE costs (routed experts, all-to-all, host time) are less certain "
                     "than dense ones: on\n      the published MoE runs the error goes both ways "
                     "and is several times the dense\n      models' (docs/validation.md); "
                     "calibrate with your own runs (planner calibrate --subset moe).\n");
    fputs("\n rank", out);
    table_knobs(out, NULL, moe);
    fprintf(out, "   step s     tokens/s tok/s/GPU TFLOP/s    MFU  peak mem (stage)%s\n",
            c->n_groups > 1 ? "  on" : "");
    for (int i = 0; i < res->n_top; i++) {
        const strategy *s = &res->top[i].s;
        const evaluation *ev = &res->top[i].e;
        text_count(ev->tokens_per_s, tps, sizeof tps);
        text_count(ev->tokens_per_s_per_gpu, tpg, sizeof tpg);
        fprintf(out, "%5d", i + 1);
        table_knobs(out, s, moe);
        fprintf(out, " %8.3f %12s %9s %7.1f %5.1f%%  %5.1f GiB (%d)", ev->step_time_s, tps, tpg,
                ev->tflops_per_gpu, 100.0 * ev->mfu, ev->peak_memory_bytes / GIB,
                ev->peak_stage);
        if (c->n_groups > 1) {
            stage_groups(c, s, buf, sizeof buf);
            fprintf(out, "  %s", buf);
        }
        if (stage_map_matters(s)) {
            layer_split(s, buf, sizeof buf);
            fprintf(out, "  layers %s", buf);
        }
        if (s->flex_dispatcher)   /* not a column: MoE plans only */
            fputs("  flex dispatcher", out);
        if (knobs_unvalidated(s, false, " ", buf, sizeof buf) > 0)
            fprintf(out, "  unvalidated: %s", buf);
        fputc('\n', out);
    }

    best = &res->top[0];
    e = &best->e;
    t = &e->time;
    describe(&best->s, buf, sizeof buf);
    fprintf(out, "\nBest plan: %s\n", buf);
    stage_groups(c, &best->s, buf, sizeof buf);
    fprintf(out, "  on %d GPUs: %s\n", strategy_gpus(&best->s), buf);
    if (stage_map_matters(&best->s))
        stage_map(out, m, c, best);
    if (res->placement_note[0] != '\0')
        fprintf(out, "  placement: %s\n", res->placement_note);
    fprintf(out, "  overlap: grad reduce %s, param gather %s, TP comm %s\n",
            best->s.overlap_grad_reduce ? "on" : "off",
            best->s.overlap_param_gather ? "on" : "off", best->s.tp_comm_overlap ? "on" : "off");
    if (best->s.flex_dispatcher)
        fprintf(out, "  token dispatcher: flex (DeepEP/HybridEP: a token crosses to each other "
                     "NVLink domain once; flex_dispatcher)\n");
    if (best->s.te_moe_graphs)
        fprintf(out, "  CUDA graphs: each MoE layer's router and dispatch preprocessing "
                     "(Transformer Engine; te_moe_graphs)\n");
    fprintf(out, "Time per step: %.3f s\n", e->step_time_s);
    {
        const struct { const char *name; double v; bool always; } rows[] = {
            {"compute", t->compute_s, true},
            {"recompute", t->recompute_s, true},
            {"TP comm (exposed)", t->tp_comm_s, true},
            {"CP comm (exposed)", t->cp_comm_s, false},
            {"EP comm (exposed)", t->ep_comm_s, false},
            {"PP comm (exposed)", t->pp_comm_s, true},
            {"DP comm (exposed)", t->dp_comm_s, true},
            {"pipeline bubble", t->bubble_s, true},
            {"optimizer step", t->optimizer_s, true},
            {"fixed overhead", t->overhead_s, true},
        };
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
            if (rows[i].always || rows[i].v > 0)
                fprintf(out, "  %-19s %9.3f s %6.1f%%\n", rows[i].name, rows[i].v,
                        pct(rows[i].v, e->step_time_s));
    }
    mb = peak_memory(e);
    if (mb != NULL) {
        fprintf(out, "Memory per GPU on stage %d (the peak, %s):\n", e->peak_stage,
                c->group[best->s.stage[e->peak_stage].group].gpu.name);
        memory_lines(out, mb, "  ");
    }
    fprintf(out, "Bound by: %s\n", e->binding != NULL ? e->binding : "-");
    if (knobs_unvalidated(&best->s, true, ", ", buf, sizeof buf) > 0)
        fprintf(out, "Unvalidated: %s -- no measured run checks this cost; counted %.0f%% slower "
                     "per such knob in the ranking\n", buf, 100.0 * SEARCH_VALIDATED_TIE);
    if (opts != NULL && opts->report_goodput)
        goodput_lines(out, m, c, opts, best);
    search_stats(out, res);
}

/* ---- JSON ------------------------------------------------------------------- */

/* Builder state: any failed allocation marks the whole document failed. */
typedef struct jb {
    bool failed;
} jb;

/* Sets obj[key] = v, taking v over in every case (jansson's _new calls
 * release v when they fail; a NULL obj releases it here). */
static void jset(jb *b, json_t *obj, const char *key, json_t *v)
{
    if (obj == NULL) {
        json_decref(v);
        b->failed = true;
    } else if (json_object_set_new(obj, key, v) != 0) {
        b->failed = true;
    }
}

static void jpush(jb *b, json_t *arr, json_t *v)
{
    if (arr == NULL) {
        json_decref(v);
        b->failed = true;
    } else if (json_array_append_new(arr, v) != 0) {
        b->failed = true;
    }
}

/* A stage spanning groups: [{"group", "gpu", "gpus"}] in rank order. */
static json_t *j_members(jb *b, const cluster *c, const strategy *s, int i)
{
    int g[STAGE_MIX_MAX], n[STAGE_MIX_MAX];
    int k = strategy_stage_members(s, i, g, n, STAGE_MIX_MAX);
    json_t *a = json_array();
    for (int j = 0; j < k; j++) {
        json_t *o = json_object();
        int q = g[j] >= 0 && g[j] < c->n_groups ? g[j] : 0;
        jset(b, o, "group", json_integer(q));
        jset(b, o, "gpu", json_string(c->group[q].gpu.name));
        jset(b, o, "gpus", json_integer(n[j]));
        jpush(b, a, o);
    }
    return a;
}

/* The model, with the figures of the run planned: its sequence (seq_len,
 * and the learned positions it sizes in "parameters"). */
static json_t *j_model(jb *b, const model *m, int seq_len)
{
    json_t *o = json_object();
    char src[64];
    model_source_name(m, src, sizeof src);
    jset(b, o, "name", json_string(m->name));
    jset(b, o, "format", json_string(src));
    jset(b, o, "layers", json_integer(m->layers));
    jset(b, o, "hidden", json_integer(m->hidden));
    jset(b, o, "heads", json_integer(m->heads));
    jset(b, o, "kv_heads", json_integer(m->kv_heads));
    jset(b, o, "head_dim", json_integer(m->head_dim));
    jset(b, o, "ffn_hidden", json_integer(m->ffn_hidden));
    jset(b, o, "vocab", json_integer(m->vocab));
    jset(b, o, "seq_len", json_integer(seq_len));
    jset(b, o, "activation", json_string(activation_name(m->act)));
    jset(b, o, "precision", json_string(precision_name(m->prec)));
    jset(b, o, "tied_embeddings", json_boolean(m->tied_embeddings));
    jset(b, o, "hidden_dropout", jsonout_real(model_hidden_dropout(m)));
    jset(b, o, "experts", json_integer(m->moe.experts));
    jset(b, o, "parameters", jsonout_real(model_param_count(m, seq_len)));
    return o;
}

/* The cluster and the stack it runs; "torch_compile" only when the blocks
 * are compiled (--torch-compile), so an eager run's document is unchanged. */
static json_t *j_cluster(jb *b, const cluster *c, bool torch_compile)
{
    json_t *o = json_object(), *groups = json_array();
    jset(b, o, "name", json_string(c->name));
    jset(b, o, "stack", json_string(stack_get(c->stack)->name));
    if (torch_compile)
        jset(b, o, "torch_compile", json_true());
    jset(b, o, "gpus", json_integer(cluster_total_gpus(c)));
    for (int g = 0; g < c->n_groups; g++) {
        const node_group *ng = &c->group[g];
        json_t *go = json_object();
        jset(b, go, "name", json_string(ng->name));
        jset(b, go, "gpu", json_string(ng->gpu.name));
        jset(b, go, "nodes", json_integer(ng->nodes));
        jset(b, go, "gpus_per_node", json_integer(ng->gpus_per_node));
        jset(b, go, "usable_memory_bytes", jsonout_real(ng->gpu.usable_mem_bytes));
        jpush(b, groups, go);
    }
    jset(b, o, "groups", groups);
    return o;
}

static json_t *j_memory(jb *b, const memory_breakdown *mb)
{
    json_t *o = json_object();
    jset(b, o, "weights_bytes", jsonout_real(mb->weights_bytes));
    jset(b, o, "grads_bytes", jsonout_real(mb->grads_bytes));
    jset(b, o, "optimizer_bytes", jsonout_real(mb->optimizer_bytes));
    jset(b, o, "activations_bytes", jsonout_real(mb->activations_bytes));
    jset(b, o, "reserve_bytes", jsonout_real(mb->reserve_bytes));
    jset(b, o, "total_bytes", jsonout_real(mb->total_bytes));
    jset(b, o, "capacity_bytes", jsonout_real(mb->capacity_bytes));
    return o;
}

static json_t *j_time(jb *b, const time_breakdown *t)
{
    json_t *o = json_object();
    jset(b, o, "compute_s", jsonout_real(t->compute_s));
    jset(b, o, "recompute_s", jsonout_real(t->recompute_s));
    jset(b, o, "tp_comm_s", jsonout_real(t->tp_comm_s));
    jset(b, o, "cp_comm_s", jsonout_real(t->cp_comm_s));
    jset(b, o, "ep_comm_s", jsonout_real(t->ep_comm_s));
    jset(b, o, "pp_comm_s", jsonout_real(t->pp_comm_s));
    jset(b, o, "bubble_s", jsonout_real(t->bubble_s));
    jset(b, o, "dp_comm_s", jsonout_real(t->dp_comm_s));
    jset(b, o, "optimizer_s", jsonout_real(t->optimizer_s));
    jset(b, o, "overhead_s", jsonout_real(t->overhead_s));
    return o;
}

/* ["zero=2", ...]: the knob values of s no measured run validates
 * (model/knobs.c's validation rows), [] when none. */
static json_t *j_unvalidated(jb *b, const strategy *s)
{
    json_t *a = json_array();
    char buf[256], *item, *save = NULL;
    knobs_unvalidated(s, false, " ", buf, sizeof buf);
    for (item = strtok_r(buf, " ", &save); item != NULL; item = strtok_r(NULL, " ", &save))
        jpush(b, a, json_string(item));
    return a;
}

static json_t *j_plan(jb *b, const model *m, const cluster *c, const plan *pl, int rank)
{
    const strategy *s = &pl->s;
    const evaluation *e = &pl->e;
    const memory_breakdown *mb = peak_memory(e);
    json_t *o = json_object(), *stages = json_array();

    if (rank > 0)
        jset(b, o, "rank", json_integer(rank));
    /* the knobs (model/knobs.c), the batch after the degrees and mbs */
    if (knobs_json_set(o, s, KNOB_TP, KNOB_SP) != 0)
        b->failed = true;
    jset(b, o, "gbs", json_integer(s->gbs));
    jset(b, o, "seq_len", json_integer(s->seq_len));
    jset(b, o, "microbatches", json_integer(strategy_microbatches(s)));
    jset(b, o, "gpus", json_integer(strategy_gpus(s)));
    if (knobs_json_set(o, s, KNOB_SP, KNOB_COUNT) != 0)
        b->failed = true;
    jset(b, o, "unvalidated", j_unvalidated(b, s));
    jset(b, o, "step_time_s", jsonout_real(e->step_time_s));
    jset(b, o, "tokens_per_s", jsonout_real(e->tokens_per_s));
    jset(b, o, "tokens_per_s_per_gpu", jsonout_real(e->tokens_per_s_per_gpu));
    jset(b, o, "tflops_per_gpu", jsonout_real(e->tflops_per_gpu));
    jset(b, o, "mfu", jsonout_real(e->mfu));
    jset(b, o, "peak_memory_bytes", jsonout_real(e->peak_memory_bytes));
    jset(b, o, "peak_stage", json_integer(e->peak_stage));
    jset(b, o, "feasible", json_boolean(e->feasible));
    if (!e->feasible)
        jset(b, o, "reason", json_string(e->reason));
    jset(b, o, "binding", e->binding != NULL ? json_string(e->binding) : json_null());
    jset(b, o, "time", j_time(b, &e->time));
    if (mb != NULL)
        jset(b, o, "memory", j_memory(b, mb));
    for (int i = 0; i < s->n_stages && i < STRATEGY_MAX_STAGES; i++) {
        const stage_spec *st = &s->stage[i];
        json_t *so = json_object();
        int g = st->group >= 0 && st->group < c->n_groups ? st->group : 0;
        char gpus[160];
        report_stage_gpus(c, s, i, gpus, sizeof gpus);
        jset(b, so, "stage", json_integer(i));
        jset(b, so, "gpu", json_string(gpus));
        jset(b, so, "group", json_integer(g));
        if (strategy_stage_mix(s, i) != NULL) {
            jset(b, so, "members", j_members(b, c, s, i));
            /* as the stage map's note: its all-to-all at the slowest member's links */
            jset(b, so, "ep_across_types", json_boolean(cost_stage_ep_mixed(s, i)));
        }
        jset(b, so, "first_layer", json_integer(st->first_layer));
        jset(b, so, "layers", json_integer(st->n_layers));
        jset(b, so, "tp", json_integer(st->tp));
        jset(b, so, "dp", json_integer(st->dp));
        {
            /* the rank's virtual chunks in pipeline order (one without
             * interleaving): contiguous layer ranges */
            json_t *cl = json_array();
            for (int j = 0; j < (s->vpp > 0 ? s->vpp : 1); j++) {
                int first = 0, nl = strategy_chunk_layers(s, m->layers, i, j, &first);
                json_t *co = json_object();
                jset(b, co, "first_layer", json_integer(first));
                jset(b, co, "layers", json_integer(nl > 0 ? nl : 0));
                jpush(b, cl, co);
            }
            jset(b, so, "chunks", cl);
        }
        if (i < e->n_stages) {
            jset(b, so, "peak_memory_bytes", jsonout_real(e->stage_memory[i].total_bytes));
            jset(b, so, "forward_s", jsonout_real(e->stage_fwd_s[i]));
            jset(b, so, "backward_s", jsonout_real(e->stage_bwd_s[i]));
            jset(b, so, "memory", j_memory(b, &e->stage_memory[i]));
        }
        jpush(b, stages, so);
    }
    jset(b, o, "stages", stages);
    return o;
}

/* The whole text or nothing (jsonout_text), then one write: 0 or -1. */
static int jb_write(const jb *b, json_t *root, FILE *out)
{
    char *text = b->failed ? NULL : jsonout_text(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    int rc = text != NULL && fputs(text, out) != EOF ? 0 : -1;
    pl_free(text);
    return rc;
}

/* The goodput keys of a plan's JSON object (docs/json-schema.md). */
static void j_goodput(jb *b, json_t *po, const model *m, const cluster *c,
                      const search_options *opts, const plan *pl)
{
    goodput g;
    planner_error why = PLANNER_ERROR_INIT;
    planner_status rc = goodput_evaluate(&g, m, c, &pl->s, &pl->e, &opts->goodput, &why);
    json_t *o = json_object();
    jset(b, o, "ettr", jsonout_real(g.ettr));
    jset(b, o, "mttf_s", jsonout_real(g.mttf_s));
    jset(b, o, "checkpoint_interval_s", jsonout_real(g.checkpoint_interval_s));
    jset(b, o, "checkpoint_write_s", jsonout_real(g.checkpoint_write_s));
    jset(b, o, "restart_s", jsonout_real(g.restart_s));
    jset(b, o, "checkpoint_bytes", jsonout_real(g.checkpoint_bytes));
    jset(b, o, "checkpoint_persist_s", jsonout_real(g.checkpoint_persist_s));
    jset(b, o, "checkpoint_load_s", jsonout_real(g.checkpoint_load_s));
    jset(b, o, "nodes", json_integer(g.nodes));
    jset(b, o, "failures_per_1000_node_days", jsonout_real(g.failures_per_node_day * 1000.0));
    jset(b, o, "goodput_tokens_per_s", jsonout_real(g.goodput_tokens_per_s));
    if (rc != PLANNER_OK)
        jset(b, o, "error", json_string(why.msg));
    jset(b, po, "goodput", o);
    if (opts->goodput.tokens > 0) {
        jset(b, po, "tokens", jsonout_real(opts->goodput.tokens));
        jset(b, po, "time_failure_free_s",
             g.have_time ? jsonout_real(g.time_failure_free_s) : json_null());
        jset(b, po, "time_to_train_s", g.have_time ? jsonout_real(g.time_to_train_s) : json_null());
        jset(b, po, "gpu_hours", g.have_time ? jsonout_real(g.gpu_hours) : json_null());
        jset(b, po, "gpu_hour_price", jsonout_real(g.gpu_hour_price));
        jset(b, po, "cost", g.have_time ? jsonout_real(g.cost) : json_null());
        jset(b, po, "energy_kwh", g.have_time ? jsonout_real(g.energy_kwh) : json_null());
    }
}

int report_json_write(FILE *out, const model *m, const cluster *c,
                      const search_options *opts, const search_result *res)
{
    jb b = {false};
    json_t *root = json_object(), *search = json_object(), *list = json_array();
    int rc = -1;

    jset(&b, root, "planner_version", json_string(PLANNER_VERSION));
    jset(&b, root, "model", j_model(&b, m, res->seq_len));
    jset(&b, root, "cluster", j_cluster(&b, c, m->torch_compile));
    jset(&b, search, "objective",
         json_string(objective_name(opts != NULL ? opts->obj : OBJECTIVE_THROUGHPUT)));
    jset(&b, search, "top", json_integer(opts != NULL ? opts->top_n : res->n_top));
    jset(&b, search, "gbs", json_integer(res->gbs));
    jset(&b, search, "seq_len", json_integer(res->seq_len));
    jset(&b, search, "gpus", json_integer(res->gpus));
    jset(&b, search, "candidates", json_integer(res->candidates));
    jset(&b, search, "feasible", json_integer(res->feasible));
    jset(&b, search, "pruned", json_integer(res->pruned));
    jset(&b, search, "invalid", json_integer(res->invalid));
    jset(&b, search, "seconds", jsonout_real(res->seconds));
    jset(&b, search, "candidates_per_s",
         jsonout_real(res->seconds > 0 ? (double)res->candidates / res->seconds : 0));
    if (res->placement_note[0] != '\0')
        jset(&b, search, "placement_note", json_string(res->placement_note));
    jset(&b, search, "limited", json_boolean(res->limited));
    jset(&b, search, "mem_headroom", jsonout_real(res->mem_headroom));
    {
        json_t *ns = json_array();
        for (int i = 0; i < res->n_not_searched; i++)
            jpush(&b, ns, json_string(res->not_searched[i]));
        jset(&b, search, "not_searched", ns);
    }
    jset(&b, root, "search", search);
    search = NULL;
    for (int i = 0; i < res->n_top; i++) {
        json_t *po = j_plan(&b, m, c, &res->top[i], i + 1);
        if (opts != NULL && opts->report_goodput)
            j_goodput(&b, po, m, c, opts, &res->top[i]);
        jpush(&b, list, po);
    }
    jset(&b, root, "strategies", list);
    list = NULL;
    if (res->n_top <= 0) {
        jset(&b, root, "closest_miss",
             res->have_miss ? j_plan(&b, m, c, &res->miss, 0) : json_null());
        jset(&b, root, "advice", json_string(res->advice));
    }
    rc = jb_write(&b, root, out);
    json_decref(search);
    json_decref(list);
    json_decref(root);
    return rc;
}

void report_json(FILE *out, const model *m, const cluster *c,
                 const search_options *opts, const search_result *res)
{
    (void)report_json_write(out, m, c, opts, res);
}

/* ---- nothing fits ----------------------------------------------------------- */

void report_infeasible(FILE *out, const model *m, const cluster *c, const search_result *res)
{
    char buf[512];
    fprintf(out, "planner: no feasible plan: ");
    header(out, m, c, res);
    if (res->have_miss) {
        const plan *pl = &res->miss;
        const evaluation *e = &pl->e;
        const memory_breakdown *mb = peak_memory(e);
        describe(&pl->s, buf, sizeof buf);
        fprintf(out, "closest miss: %s\n", buf);
        if (mb != NULL)
            fprintf(out, "  needs %.2f GiB per GPU on stage %d, %.2f GiB usable (%.2fx)\n",
                    e->peak_memory_bytes / GIB, e->peak_stage, mb->capacity_bytes / GIB,
                    mb->capacity_bytes > 0 ? e->peak_memory_bytes / mb->capacity_bytes : 0);
        if (e->reason[0] != '\0')
            fprintf(out, "  %s\n", e->reason);
        fprintf(out, "  stage layers  weights    grads optimizer activations  reserve    total"
                     "   usable (GiB)\n");
        for (int i = 0; i < e->n_stages && i < STRATEGY_MAX_STAGES; i++) {
            const memory_breakdown *sm = &e->stage_memory[i];
            if (e->n_stages > 8 && i >= 3 && i < e->n_stages - 2 && i != e->peak_stage) {
                if (i == 3 || i == e->peak_stage + 1)
                    fprintf(out, "    ...\n");
                continue;
            }
            fprintf(out, "  %5d %6d %8.2f %8.2f %9.2f %11.2f %8.2f %8.2f %8.2f%s\n", i,
                    pl->s.stage[i].n_layers, sm->weights_bytes / GIB, sm->grads_bytes / GIB,
                    sm->optimizer_bytes / GIB, sm->activations_bytes / GIB,
                    sm->reserve_bytes / GIB, sm->total_bytes / GIB, sm->capacity_bytes / GIB,
                    sm->total_bytes > sm->capacity_bytes ? "  over" : "");
        }
    }
    if (res->advice[0] != '\0')
        fprintf(out, "advice: %s\n", res->advice);
    search_stats(out, res);
}

/* ---- sizing (search/size.h) ------------------------------------------------ */

void report_size_table(FILE *out, const model *m, const cluster *c,
                       const search_options *opts, const size_result *res)
{
    const node_group *g = &c->group[0];
    char a[48], b[48], d[48];
    (void)m;
    fprintf(out, "Sizing %s on %s: %s, %d per node, up to %d nodes; gbs %d, seq %d", m->name,
            c->name, g->gpu.name, g->gpus_per_node, res->group_nodes, opts->gbs, opts->seq_len);
    if (opts->goodput.tokens > 0)
        fprintf(out, ", %.4g tokens", opts->goodput.tokens);
    if (res->deadline_s > 0) {
        fmt_duration(res->deadline_s, a, sizeof a);
        fprintf(out, ", deadline %s", a);
    }
    fprintf(out, "\n\n nodes    GPUs  tp  pp     dp     tokens/s   ETTR  time to train"
                 "             cost\n");
    for (int i = 0; i < res->n_rows; i++) {
        const size_row *w = &res->row[i];
        if (!w->fits) {
            fprintf(out, "%6d %7d  no plan fits\n", w->nodes, w->nodes * g->gpus_per_node);
            continue;
        }
        text_count(w->best.e.tokens_per_s, a, sizeof a);
        fprintf(out, "%6d %7d %3d %3d %6d %12s %6.3f", w->nodes, w->gpus, w->best.s.tp,
                w->best.s.pp, w->best.s.dp, a, w->g.ettr);
        fmt_duration(w->g.time_to_train_s, b, sizeof b);
        text_count(w->g.cost, d, sizeof d);
        if (w->finishes)
            fprintf(out, " %14s %16s", b, d);
        else
            fprintf(out, " %14s %16s", "-", "-");
        fprintf(out, "%s%s%s\n", i == res->min_fit ? "  fewest that fit" : "",
                i == res->choice ? "  cheapest meeting the deadline" : "",
                res->deadline_s > 0 && w->finishes && !w->meets ? "  misses" : "");
    }
    if (res->min_fit >= 0) {
        const size_row *w = &res->row[res->min_fit];
        fprintf(out, "\nFewest GPUs that fit: %d (%d nodes), tp %d pp %d dp %d\n", w->gpus,
                w->nodes, w->best.s.tp, w->best.s.pp, w->best.s.dp);
    }
    if (res->choice >= 0) {
        const size_row *w = &res->row[res->choice];
        fmt_duration(w->g.time_to_train_s, a, sizeof a);
        text_count(w->g.cost, b, sizeof b);
        fprintf(out, "For the deadline: %d nodes (%d GPUs), tp %d pp %d dp %d: %s, ETTR %.3f, "
                "cost %s at %.2f per GPU-hour\n", w->nodes, w->gpus, w->best.s.tp,
                w->best.s.pp, w->best.s.dp, a, w->g.ettr, b, w->g.gpu_hour_price);
    }
}

int report_size_json(FILE *out, const model *m, const cluster *c,
                     const search_options *opts, const size_result *res)
{
    jb b = {false};
    json_t *root = json_object(), *rows = json_array();
    int rc = -1;

    jset(&b, root, "planner_version", json_string(PLANNER_VERSION));
    jset(&b, root, "model", j_model(&b, m, opts->seq_len));
    jset(&b, root, "cluster", j_cluster(&b, c, m->torch_compile));
    jset(&b, root, "deadline_s", res->deadline_s > 0 ? jsonout_real(res->deadline_s) : json_null());
    for (int i = 0; i < res->n_rows; i++) {
        const size_row *w = &res->row[i];
        json_t *o = json_object();
        jset(&b, o, "nodes", json_integer(w->nodes));
        jset(&b, o, "fits", json_boolean(w->fits));
        if (w->fits) {
            jset(&b, o, "plan", j_plan(&b, m, c, &w->best, 0));
            j_goodput(&b, o, m, c, opts, &w->best);
            if (res->deadline_s > 0)
                jset(&b, o, "meets_deadline", json_boolean(w->meets));
        }
        jpush(&b, rows, o);
    }
    jset(&b, root, "rows", rows);
    rows = NULL;
    jset(&b, root, "fewest_nodes_that_fit",
         res->min_fit >= 0 ? json_integer(res->row[res->min_fit].nodes) : json_null());
    jset(&b, root, "deadline_nodes",
         res->choice >= 0 ? json_integer(res->row[res->choice].nodes) : json_null());
    jset(&b, root, "note", res->note[0] != '\0' ? json_string(res->note) : json_null());
    rc = jb_write(&b, root, out);
    json_decref(rows);
    json_decref(root);
    return rc;
}
