/* validate_report.c: `planner validate`'s output (validate_report.h).
 *
 * The table: one line per run (predicted vs measured tokens/s per GPU, the
 * error in percent and the chosen plan, or the reason there is none), then
 * one line per subset (runs, runs predicted, MAPE, max error).  The JSON
 * document carries the same figures at the precision the text shows them
 * (six significant digits, errors to six decimals), non-finite ones null;
 * it is built with jansson and written whole or not at all (jsonout_text).
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include "base/alloc.h"
#include "base/jsonout.h"
#include "model/knobs.h"
#include "out/validate_report.h"

static void plan_text(const plan *pl, char *buf, size_t n)
{
    const strategy *s = &pl->s;
    char layers[24] = "";
    if (s->recompute == RECOMPUTE_FULL && s->recompute_layers > 0)   /* block N, uniform N */
        snprintf(layers, sizeof layers, ":%s%d",
                 s->recompute_method == RECOMPUTE_UNIFORM ? "u" : "b", s->recompute_layers);
    snprintf(buf, n, "tp%d pp%d dp%d vpp%d mbs%d%s rc=%s%s z%d%s", s->tp, s->pp, s->dp, s->vpp,
             s->mbs, s->sp ? " sp" : "", recompute_name(s->recompute), layers, s->zero,
             s->overlap_grad_reduce ? " ovl" : "");
}

/* The "plan" object of a predicted run. */
static json_t *plan_json(const plan *pl)
{
    const strategy *ps = &pl->s;
    json_t *jp = json_object();
    bool bad = jp == NULL;
    bad |= knobs_json_set(jp, ps, KNOB_TP, KNOB_COUNT) != 0;
    bad |= json_object_set_new(jp, "step_time_s",
                               jsonout_rounded(pl->e.step_time_s, false)) != 0;
    bad |= json_object_set_new(jp, "peak_memory_bytes",
                               jsonout_rounded(pl->e.peak_memory_bytes, false)) != 0;
    bad |= json_object_set_new(jp, "binding",
                               json_string(pl->e.binding ? pl->e.binding : "")) != 0;
    if (bad) {
        json_decref(jp);
        return NULL;
    }
    return jp;
}

/* One element of "runs"; NULL when an allocation fails. */
static json_t *run_json(const validation_run *r, const validation_outcome *o)
{
    json_t *jr = json_object();
    bool bad = jr == NULL;
    bad |= json_object_set_new(jr, "id", json_string(r->id)) != 0;
    bad |= json_object_set_new(jr, "subset",
                               json_string(validation_subset_name(r->subset))) != 0;
    bad |= json_object_set_new(jr, "model_definition",
                               r->definition[0] ? json_string(r->definition) : json_null()) != 0;
    if (r->shape_note[0])
        bad |= json_object_set_new(jr, "model_note", json_string(r->shape_note)) != 0;
    bad |= json_object_set_new(jr, "status",
                               json_string(validation_status_name(o->status))) != 0;
    bad |= json_object_set_new(jr, "measured_tokens_per_s_per_gpu",
                               jsonout_rounded(r->measured_tokens_per_s_per_gpu, false)) != 0;
    if (o->mem_have) {
        json_t *jm = json_object();
        bad |= jm == NULL;
        bad |= json_object_set_new(jm, "measured_bytes",
                                   jsonout_rounded(r->measured_peak_memory_bytes, false)) != 0;
        bad |= json_object_set_new(jm, "predicted_bytes",
                                   jsonout_rounded(o->mem_predicted_bytes, false)) != 0;
        bad |= json_object_set_new(jm, "error", jsonout_rounded(o->mem_error, true)) != 0;
        bad |= json_object_set_new(jr, "memory", jm) != 0;
    }
    if (o->status == VALIDATION_OK) {
        bad |= json_object_set_new(jr, "predicted_tokens_per_s_per_gpu",
                                   jsonout_rounded(o->predicted, false)) != 0;
        bad |= json_object_set_new(jr, "error", jsonout_rounded(o->error, true)) != 0;
        bad |= json_object_set_new(jr, "plan", plan_json(&o->pl)) != 0;
    } else {
        bad |= json_object_set_new(jr, "predicted_tokens_per_s_per_gpu", json_null()) != 0;
        bad |= json_object_set_new(jr, "error", json_null()) != 0;
        bad |= json_object_set_new(jr, "reason", json_string(o->reason)) != 0;
    }
    if (bad) {
        json_decref(jr);
        return NULL;
    }
    return jr;
}

/* The --format json document (keys documented in docs/validation.md).
 * Returns the text (pl_free it), or NULL when an allocation
 * fails: nothing is written then. */
static char *validation_json_text(const char *path, const validation_set *set,
                                  const validation_outcome *res, const validation_summary *sm)
{
    static const char *const keys[SUBSET_COUNT] = {"dense16", "fp8", "moe"};
    json_t *root = json_object(), *runs = json_array(), *summary = json_object();
    char *text = NULL;
    bool bad = root == NULL;
    int i, s;

    bad |= json_object_set_new(root, "file", json_string(path)) != 0;
    for (i = 0; i < set->n; i++)
        bad |= json_array_append_new(runs, run_json(&set->run[i], &res[i])) != 0;
    for (s = 0; s < SUBSET_COUNT; s++) {
        const int cnt = sm->cnt[s];
        json_t *js = json_object();
        bad |= json_object_set_new(js, "runs", json_integer(sm->total[s])) != 0;
        bad |= json_object_set_new(js, "predicted", json_integer(cnt)) != 0;
        bad |= json_object_set_new(js, "mape", cnt > 0 ? jsonout_rounded(sm->sum[s] / cnt, true)
                                                       : json_null()) != 0;
        bad |= json_object_set_new(js, "max_error",
                                   cnt > 0 ? jsonout_rounded(sm->maxe[s], true) : json_null()) != 0;
        bad |= json_object_set_new(summary, keys[s], js) != 0;
    }
    if (sm->mem_cnt > 0) {
        json_t *jm = json_object();
        bad |= jm == NULL;
        bad |= json_object_set_new(jm, "runs", json_integer(sm->mem_cnt)) != 0;
        bad |= json_object_set_new(jm, "mape", jsonout_rounded(sm->mem_sum / sm->mem_cnt,
                                                               true)) != 0;
        bad |= json_object_set_new(jm, "max_error", jsonout_rounded(sm->mem_max, true)) != 0;
        bad |= json_object_set_new(jm, "most_under", jsonout_rounded(sm->mem_min_signed,
                                                                     true)) != 0;
        bad |= json_object_set_new(jm, "refused", json_integer(sm->mem_refused)) != 0;
        bad |= json_object_set_new(summary, "memory", jm) != 0;
    }
    /* the set_new calls take runs and summary over even when they fail */
    bad |= json_object_set_new(root, "runs", runs) != 0;
    bad |= json_object_set_new(root, "summary", summary) != 0;
    if (!bad)
        text = jsonout_text(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
    json_decref(root);
    return text;
}

int validate_report_json(FILE *out, const char *path, const validation_set *set,
                         const validation_outcome *res, const validation_summary *sum)
{
    char *text = validation_json_text(path, set, res, sum);
    if (text == NULL)
        return -1;
    fputs(text, out);
    pl_free(text);
    return 0;
}

void validate_report_table(FILE *out, const validation_set *set,
                           const validation_outcome *res, const validation_summary *sum)
{
    int i, s;
    fprintf(out, "%-36s %-14s %6s %12s %12s %8s  %s\n", "run", "gpu", "gpus", "predicted",
            "measured", "error", "plan (tokens/s per GPU)");
    for (i = 0; i < set->n; i++) {
        const validation_run *r = &set->run[i];
        const validation_outcome *o = &res[i];
        char pt[160];
        fprintf(out, "%-36.36s %-14.14s %6d ", r->id, r->c->group[0].gpu.name, r->num_gpus);
        if (o->status == VALIDATION_OK) {
            plan_text(&o->pl, pt, sizeof pt);
            fprintf(out, "%12.1f %12.1f %+7.1f%%  %s\n", o->predicted,
                    r->measured_tokens_per_s_per_gpu, 100.0 * o->error, pt);
        } else {
            fprintf(out, "%12s %12.1f %8s  %s: %s\n", "-", r->measured_tokens_per_s_per_gpu, "-",
                    validation_status_name(o->status), o->reason);
        }
        if (r->shape_note[0])
            fprintf(out, "%-36s %s\n", "", r->shape_note);
    }
    fprintf(out, "\n%-14s %6s %9s %8s %8s\n", "subset", "runs", "predicted", "MAPE", "max");
    for (s = 0; s < SUBSET_COUNT; s++) {
        if (sum->cnt[s] > 0)
            fprintf(out, "%-14s %6d %9d %7.1f%% %7.1f%%\n",
                    validation_subset_name((validation_subset)s), sum->total[s], sum->cnt[s],
                    100.0 * sum->sum[s] / sum->cnt[s], 100.0 * sum->maxe[s]);
        else
            fprintf(out, "%-14s %6d %9d %8s %8s\n", validation_subset_name((validation_subset)s),
                    sum->total[s], 0, "-", "-");
    }
}

void validate_report_memory(FILE *out, const validation_set *set, const validation_outcome *res,
                            const validation_summary *sum)
{
    int i;
    if (sum->mem_cnt == 0)
        return;
    fprintf(out, "\n%-36s %12s %12s %8s  %s\n", "run (peak memory per GPU)", "predicted",
            "measured", "error", "GiB");
    for (i = 0; i < set->n; i++) {
        const validation_outcome *o = &res[i];
        if (!o->mem_have)
            continue;
        fprintf(out, "%-36.36s %12.1f %12.1f %+7.1f%%%s\n", set->run[i].id,
                o->mem_predicted_bytes / 1073741824.0,
                set->run[i].measured_peak_memory_bytes / 1073741824.0, 100.0 * o->mem_error,
                o->status == VALIDATION_INFEASIBLE ? "  refused: no plan fits" : "");
    }
    fprintf(out, "memory: %d runs, MAPE %.1f%%, max %.1f%%, ", sum->mem_cnt,
            100.0 * sum->mem_sum / sum->mem_cnt, 100.0 * sum->mem_max);
    if (sum->mem_min_signed < 0)
        fprintf(out, "most under-predicted %+.1f%%", 100.0 * sum->mem_min_signed);
    else
        fprintf(out, "none under-predicted");
    fprintf(out, ", refused %d\n", sum->mem_refused);
}
