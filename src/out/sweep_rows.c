/* sweep_rows.c: the lines of `planner sweep` (out/sweep_rows.h): the CSV
 * header and one line per point, CSV or JSON Lines.
 *
 * One fact, one place: the knob columns come from the knob registry
 * (model/knobs.c: knobs_keys_join, knob_text, knobs_json_set), so every knob
 * is in both formats; sweep --merge (out/sweep_merge.c) checks shard lines
 * against this header.  CSV quoting: a field with , " or a line break is
 * "..." with "" for a quote (RFC 4180), line breaks replaced by spaces.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "model/knobs.h"
#include "out/sweep_rows.h"

const char *sweep_csv_header(char *buf, size_t size)
{
    char knobs[SWEEP_CSV_HEADER_MAX / 2];
    knobs_keys_join(knobs, sizeof knobs, ",");
    snprintf(buf, size, "point,points,model,cluster,gpu,nodes,gpus,gbs,seq,intra_bw_scale,"
             "inter_bw_scale,peak_scale,status,%s,step_time_s,tokens_per_s,"
             "tokens_per_s_per_gpu,mfu,peak_memory_bytes,ettr,goodput_tokens_per_s,"
             "time_to_train_s,gpu_hours,cost,energy_kwh,reason",
             knobs);
    return buf;
}

static void csv_field(FILE *out, const char *s)
{
    if (strpbrk(s, ",\"\n\r") == NULL) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, out);
    }
    fputc('"', out);
}

/* Rounded figures, the same text in CSV and JSON Lines. */
static double r6(double v)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.6g", v);
    return strtod(buf, NULL);
}

static void write_row_csv(FILE *out, long k, long points, const sweep_row *r)
{
    fprintf(out, "%ld,%ld,", k, points);
    csv_field(out, r->model);
    fputc(',', out);
    csv_field(out, r->cluster);
    fputc(',', out);
    csv_field(out, r->gpu);
    fprintf(out, ",%d,%d,%d,%d,%.6g,%.6g,%.6g,%s,", r->nodes, r->gpus, r->gbs, r->seq,
            r->intra, r->inter, r->peak, r->status);
    if (r->best != NULL) {
        const strategy *s = &r->best->s;
        const evaluation *e = &r->best->e;
        char v[KNOB_TEXT_MAX];
        for (int kn = 0; kn < KNOB_COUNT; kn++)   /* the knobs (model/knobs.c) */
            fprintf(out, "%s,", knob_text(s, (knob_id)kn, false, v, sizeof v));
        fprintf(out, "%.6g,%.6g,%.6g,%.6g,%.0f,", e->step_time_s, e->tokens_per_s,
                e->tokens_per_s_per_gpu, e->mfu, e->peak_memory_bytes);
        fprintf(out, "%.6g,%.6g,", r->g.ettr, r->g.goodput_tokens_per_s);
        if (r->g.have_time)
            fprintf(out, "%.6g,%.6g,%.6g,%.6g,", r->g.time_to_train_s, r->g.gpu_hours,
                    r->g.cost, r->g.energy_kwh);
        else
            fputs(",,,,", out);   /* no --tokens */
    } else {
        for (int kn = 0; kn < KNOB_COUNT + 11; kn++)   /* the knobs and 11 figures */
            fputc(',', out);
    }
    csv_field(out, r->reason);
    fputc('\n', out);
}

/* The goodput figures of a JSON Lines row (the CSV's columns). */
static int jsonl_goodput(json_t *o, const goodput *g)
{
    if (json_object_set_new(o, "ettr", json_real(r6(g->ettr))) != 0 ||
        json_object_set_new(o, "goodput_tokens_per_s", json_real(r6(g->goodput_tokens_per_s))) != 0)
        return -1;
    if (!g->have_time)   /* no --tokens: no time-to-train keys */
        return 0;
    return json_object_set_new(o, "time_to_train_s", json_real(r6(g->time_to_train_s))) != 0 ||
                   json_object_set_new(o, "gpu_hours", json_real(r6(g->gpu_hours))) != 0 ||
                   json_object_set_new(o, "cost", json_real(r6(g->cost))) != 0 ||
                   json_object_set_new(o, "energy_kwh", json_real(r6(g->energy_kwh))) != 0
               ? -1
               : 0;
}

static int write_row_jsonl(FILE *out, long k, long points, const sweep_row *r)
{
    json_t *o = json_pack("{s:I, s:I, s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:f, s:f, s:f, s:s}",
                          "point", (json_int_t)k, "points", (json_int_t)points, "model",
                          r->model, "cluster", r->cluster, "gpu", r->gpu, "nodes", r->nodes,
                          "gpus", r->gpus, "gbs", r->gbs, "seq", r->seq, "intra_bw_scale",
                          r6(r->intra), "inter_bw_scale", r6(r->inter), "peak_scale",
                          r6(r->peak), "status", r->status);
    int rc = -1;
    if (o == NULL)
        return -1;
    if (r->best != NULL) {
        const strategy *s = &r->best->s;
        const evaluation *e = &r->best->e;
        json_t *p = json_pack("{s:f, s:f, s:f, s:f, s:I}", "step_time_s",
                              r6(e->step_time_s), "tokens_per_s", r6(e->tokens_per_s),
                              "tokens_per_s_per_gpu", r6(e->tokens_per_s_per_gpu), "mfu",
                              r6(e->mfu), "peak_memory_bytes",
                              (json_int_t)llround(e->peak_memory_bytes));
        if (p == NULL || knobs_json_set(o, s, KNOB_TP, KNOB_COUNT) != 0 ||
            json_object_update(o, p) != 0 || jsonl_goodput(o, &r->g) != 0) {
            json_decref(p);
            goto cleanup;
        }
        json_decref(p);
    }
    if (json_object_set_new(o, "reason", r->reason[0] ? json_string(r->reason) : json_null()) != 0)
        goto cleanup;
    if (json_dumpf(o, out, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)) != 0)
        goto cleanup;
    fputc('\n', out);
    rc = 0;
cleanup:
    json_decref(o);
    return rc;
}

planner_status sweep_row_write(FILE *out, sweep_format fmt, long points, const sweep_row *r,
                               planner_error *err)
{
    if (fmt == SWEEP_CSV)
        write_row_csv(out, r->point, points, r);
    else if (write_row_jsonl(out, r->point, points, r) != 0 && !ferror(out))
        return error_oom(err);   /* a failed write is the caller's to report, with the path */
    return PLANNER_OK;
}
