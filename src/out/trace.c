/* trace.c: the simulated step of a plan, as Chrome trace-event JSON and as an
 * SVG (pipeline timeline and per-stage memory).
 *
 * What it shows: the pipeline schedule evaluate() simulated, replayed from
 * the inputs it kept (cost_schedule, search_result.sched: per-rank forward
 * and backward times of one micro-batch, or per-chunk times for an
 * interleaved plan over the embedding/loss-accounting split, whose chunks
 * differ; the p2p time of each rank boundary and of the interleaved
 * wrap-around); every forward, backward and send, per rank.  Nothing here
 * runs the cost model.  After the last backward the step's exposed
 * data-parallel communication (time_breakdown.dp_comm_s), the optimizer step
 * (optimizer_s) and the fixed overhead follow on every rank, so the trace
 * ends at pipeline span + dp_comm_s + optimizer_s + overhead_s, which is the
 * cost model's step time (evaluate.c: step = max_i(finish_i + exposed
 * reduce_i) + optimizer + exposed gather + overhead, dp_comm_s = the exposed
 * parts).
 *
 * ZeRO-3's gathers and reduces run inside each forward and backward, so
 * for it nothing but the optimizer and the overhead follows the pipeline.
 *
 * Formats: Chrome's "Trace Event Format" (JSON object with traceEvents;
 * complete events ph "X" with ts/dur in microseconds; metadata ph "M" naming
 * processes and threads).  One process per pipeline rank, threads "compute",
 * "p2p send", "data parallel + optimizer", so no two events on a thread
 * overlap.  Written with jansson, one event per line.  The SVG is SVG 1.1,
 * self-contained, every text XML-escaped.  Invariants: nothing is written
 * before the simulation succeeded; output size is bounded, so every valid
 * plan renders (the SVG draws at most TRACE_SVG_MAX_RECTS event rectangles,
 * beyond that one rectangle per pixel run).
 *
 * The bound (trace.h, TRACE_MAX_EVENTS): a step whose events (forward,
 * backward and up to two sends per micro-batch, rank and chunk: 4 m pp vpp)
 * exceed it shows its first and last H micro-batches (H a multiple of pp, the
 * most that fit: 12 H pp vpp <= TRACE_MAX_EVENTS, at least pp) and elides the
 * middle, marked on every rank ("micro-batches a..b elided") and in
 * otherData.  The shown events are exact: the schedule of 3H micro-batches
 * is simulated; its first H micro-batches run as in the full step (each
 * rank's operations up to them are the same prefix: warm-up, then 1F1B
 * pairs, the drain comes later), and its last H, shifted in time by the
 * difference of the two spans (span(m) from the exact, allocation-free
 * simulation) and renumbered, are the full step's last H, because the steady
 * state repeats with a fixed period per micro-batch (pipeline.c's jump relies
 * on the same fact).  tests/test_trace.c compares both against the full
 * event list.
 */
#include <jansson.h>
#include <math.h>
#include <string.h>
#include "base/alloc.h"
#include "schedule/pipeline.h"
#include "out/report.h"
#include "out/trace.h"

#define TRACE_SVG_MAX_RECTS 6000
#define GIB 1073741824.0

/* ---- the simulated step --------------------------------------------------- */

typedef struct step_sim {
    sched_events ev;
    double span_s;          /* first forward to last backward */
    double dp_s, opt_s, overhead_s;
    double end_s;           /* span + dp + opt + overhead */
    double p2p_s[STRATEGY_MAX_STAGES];
    int pp, vpp, microbatches;
    bool chunked;           /* per-chunk times (uneven interleaved chunks) */
    int shown;              /* micro-batches shown at each end; 0: all are */
    long max_events;        /* the bound it was simulated under */
    double elided_from_s[STRATEGY_MAX_STAGES], elided_to_s[STRATEGY_MAX_STAGES];
} step_sim;

/* The SVG's colours. */
static const char *const col_f = "#4c78a8", *const col_b = "#54a24b",
                         *const col_dp = "#e45756", *const col_opt = "#b279a2",
                         *const col_over = "#9d755d", *const col_idle = "#ececec",
                         *const col_elided = "#c9c9e8";

/* The phases after the pipeline span, in their order on every rank: the
 * Chrome trace's event name and category, the SVG's title and colour. */
enum { TAIL_PHASES = 3 };
typedef struct tail_phase {
    const char *name, *cat, *title;
    const char *const *fill;
} tail_phase;
static const tail_phase k_tail[TAIL_PHASES] = {
    {"DP comm (exposed)", "dp-comm", "exposed data-parallel communication", &col_dp},
    {"optimizer step", "optimizer", "optimizer step", &col_opt},
    {"step overhead", "overhead", "fixed step overhead", &col_over}};

/* Phase k's seconds (k_tail's order). */
static double tail_s(const step_sim *sim, int k)
{
    return k == 0 ? sim->dp_s : k == 1 ? sim->opt_s : sim->overhead_s;
}

static int clamp_group(const cluster *c, int g)
{
    return (g >= 0 && g < c->n_groups) ? g : 0;
}

int trace_shown_microbatches(const cost_schedule *sched, long max_events)
{
    long m = sched->microbatches, pp = sched->pp, vpp = sched->vpp > 1 ? sched->vpp : 1;
    long h;
    if (pp < 1 || 4.0 * (double)m * (double)pp * (double)vpp <= (double)max_events)
        return 0;
    h = max_events / (12 * pp * vpp);
    h -= h % pp;
    if (h < pp)
        h = pp;
    return 3 * h < m ? (int)h : 0;
}

/* Keeps the events of the 3H-micro-batch schedule that the full step shows
 * (see the top comment): the first H as they are, the last H shifted by
 * shift_s and renumbered; notes each rank's elided interval. */
static void keep_ends(step_sim *sim, int h, int short_m, double shift_s)
{
    int n = 0, off = sim->microbatches - short_m;
    for (int r = 0; r < sim->pp; r++) {
        sim->elided_from_s[r] = 0;
        sim->elided_to_s[r] = sim->span_s;
    }
    for (int k = 0; k < sim->ev.n; k++) {
        sched_event ev = sim->ev.ev[k];
        bool compute = ev.kind == SCHED_FORWARD || ev.kind == SCHED_BACKWARD;
        if (ev.microbatch >= h && ev.microbatch < short_m - h)
            continue;
        if (ev.microbatch >= h) {
            ev.microbatch += off;
            ev.start_s += shift_s;
            ev.end_s += shift_s;
        }
        if (compute && ev.stage >= 0 && ev.stage < sim->pp) {
            if (ev.microbatch < h && ev.end_s > sim->elided_from_s[ev.stage])
                sim->elided_from_s[ev.stage] = ev.end_s;
            if (ev.microbatch >= h && ev.start_s < sim->elided_to_s[ev.stage])
                sim->elided_to_s[ev.stage] = ev.start_s;
        }
        sim->ev.ev[n++] = ev;
    }
    sim->ev.n = n;
    sim->shown = h;
}

/* The pipeline's events, bounded: all of them, or both ends (keep_ends). */
static planner_status simulate_events(const cost_schedule *sched, long max_events,
                                      step_sim *out, planner_error *err)
{
    int h = trace_shown_microbatches(sched, max_events);
    cost_schedule *part;
    double short_span;
    out->span_s = cost_schedule_simulate(sched, NULL, h > 0 ? NULL : &out->ev);
    if (h == 0 || out->span_s < 0)
        return out->span_s < 0 ? error_oom(err) : PLANNER_OK;
    part = pl_malloc(sizeof *part);
    if (part == NULL)
        return error_oom(err);
    *part = *sched;
    part->microbatches = 3 * h;
    short_span = cost_schedule_simulate(part, NULL, &out->ev);
    pl_free(part);
    if (short_span < 0)
        return error_oom(err);
    keep_ends(out, h, 3 * h, out->span_s - short_span);
    return PLANNER_OK;
}

/* Replays the schedule behind pl's evaluation (`sched`, which the search
 * kept: search_result.sched), at most max_events pipeline events.  0, or a
 * status with *err (a schedule that does not belong to the plan, out of
 * memory). */
static planner_status step_simulate(const plan *pl, const cost_schedule *sched,
                                    long max_events, step_sim *out, planner_error *err)
{
    const strategy *s = &pl->s;
    const evaluation *e = &pl->e;
    planner_status rc;

    memset(out, 0, sizeof *out);
    if (sched->pp != s->pp || s->pp < 1 || s->pp > STRATEGY_MAX_STAGES || sched->vpp < 1 ||
        sched->microbatches < 1 || sched->microbatches > 100000000)
        return error_set(err, PLANNER_E_INTERNAL, NULL, 0, 0, NULL,
                         "trace: the schedule (pp %d) does not belong to the plan (pp %d)",
                         sched->pp, s->pp);
    out->pp = sched->pp;
    out->max_events = max_events;
    out->microbatches = sched->microbatches;
    out->vpp = sched->vpp;
    out->chunked = sched->chunked;
    memcpy(out->p2p_s, sched->p2p_s, sizeof out->p2p_s);
    if ((rc = simulate_events(sched, max_events, out, err)) != PLANNER_OK) {
        sched_events_free(&out->ev);
        return rc;
    }
    /* ZeRO-3's collectives run inside each forward and backward (the
     * breakdown's dp_comm_s counts them): nothing follows the pipeline.
     * ZeRO-2's per-micro-batch reduce-scatters are inside the backwards
     * too (evaluate.c rank_zero2_grads), so what follows the pipeline is
     * the step less the simulated span, the optimizer and the overhead:
     * the exposed last reduce and the parameter gather, never dp_comm_s
     * whole (that counted ZeRO-2's per-micro-batch part twice) */
    out->opt_s = e->time.optimizer_s > 0 ? e->time.optimizer_s : 0;
    out->overhead_s = e->time.overhead_s > 0 ? e->time.overhead_s : 0;
    out->dp_s = s->zero < 3 ? e->step_time_s - out->span_s - out->opt_s - out->overhead_s : 0;
    if (out->dp_s < 0 || (s->zero < 3 && e->time.dp_comm_s <= 0))
        out->dp_s = 0;
    out->end_s = out->span_s + out->dp_s + out->opt_s + out->overhead_s;
    return PLANNER_OK;
}

/* "micro-batches a..b elided ..." for a step of m micro-batches showing
 * `shown` at each end. */
static void elided_text(int shown, int m, long max_events, char *buf, size_t size)
{
    snprintf(buf, size, "micro-batches %d..%d elided (more than %ld events): the first and "
                        "last %d are shown at their times in the step",
             shown, m - shown - 1, max_events, shown);
}

static void elided_note(const step_sim *sim, char *buf, size_t size)
{
    elided_text(sim->shown, sim->microbatches, sim->max_events, buf, size);
}

bool trace_note(const cost_schedule *sched, char *buf, size_t size)
{
    int shown = trace_shown_microbatches(sched, TRACE_MAX_EVENTS);
    if (shown > 0)
        elided_text(shown, sched->microbatches, TRACE_MAX_EVENTS, buf, size);
    return shown > 0;
}

planner_status trace_events(const plan *pl, const cost_schedule *sched, long max_events,
                            sched_events *out, int *shown, planner_error *err)
{
    step_sim *sim = pl_malloc(sizeof *sim);
    planner_status rc;
    if (sim == NULL)
        return error_oom(err);
    if ((rc = step_simulate(pl, sched, max_events, sim, err)) == PLANNER_OK) {
        *out = sim->ev;
        *shown = sim->shown;
    }
    pl_free(sim);
    return rc;
}

static const char *kind_name(sched_kind k)
{
    switch (k) {
    case SCHED_FORWARD: return "forward";
    case SCHED_BACKWARD: return "backward";
    case SCHED_SEND: return "p2p";
    case SCHED_DP_COMM: return "dp-comm";
    case SCHED_OPTIMIZER: return "optimizer";
    }
    return "?";
}

/* Stage i's GPU ("H100-SXM"; spanning groups "V100-SXM2-16GBx12+T4x4"). */
static const char *gpu_of_stage(const cluster *c, const strategy *s, int i, char *buf,
                                size_t size)
{
    if (strategy_stage_mix(s, i) == NULL)
        return c->group[clamp_group(c, s->stage[i].group)].gpu.name;
    report_stage_gpus(c, s, i, buf, size);
    return buf;
}

static void plan_line(const model *m, const plan *pl, char *buf, size_t size)
{
    const strategy *s = &pl->s;
    snprintf(buf, size, "%s: tp=%d pp=%d dp=%d cp=%d vpp=%d mbs=%d gbs=%d seq=%d sp=%s "
                        "recompute=%s zero=%d",
             m->name[0] ? m->name : "model", s->tp, s->pp, s->dp, s->cp > 0 ? s->cp : 1,
             s->vpp > 0 ? s->vpp : 1, s->mbs, s->gbs, s->seq_len, s->sp ? "on" : "off",
             s->recompute == RECOMPUTE_FULL ? "full"
             : s->recompute == RECOMPUTE_SELECTIVE ? "selective" : "none", s->zero);
}

/* ---- Chrome trace JSON ------------------------------------------------------- */

static double us(double s)
{
    return round(s * 1e9) / 1e3;   /* microseconds, to the nanosecond */
}

/* Dumps one event and a separator; -1 on allocation or write failure. */
static int put_event(FILE *out, json_t *ev, bool *first)
{
    int rc;
    if (ev == NULL)
        return -1;
    if (!*first)
        fputs(",\n", out);
    *first = false;
    rc = json_dumpf(ev, out, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
    json_decref(ev);
    return rc == 0 ? 0 : -1;
}

static json_t *meta_event(const char *what, int pid, int tid, const char *key, json_t *val)
{
    return json_pack("{s:s, s:s, s:i, s:i, s:{s:o}}", "name", what, "ph", "M", "pid", pid,
                     "tid", tid, "args", key, val);
}

static json_t *span_event(const char *name, const char *cat, int pid, int tid, double t0,
                          double t1, json_t *args)
{
    json_t *ev = json_pack("{s:s, s:s, s:s, s:f, s:f, s:i, s:i}", "name", name, "cat", cat,
                           "ph", "X", "ts", us(t0), "dur", us(t1) - us(t0), "pid", pid,
                           "tid", tid);
    if (ev == NULL) {
        json_decref(args);
        return NULL;
    }
    if (args != NULL && json_object_set_new(ev, "args", args) != 0) {
        json_decref(ev);
        return NULL;
    }
    return ev;
}

enum { TID_COMPUTE = 0, TID_P2P = 1, TID_DP = 2 };

/* The metadata events naming each rank's process and its three threads. */
static int chrome_metadata(FILE *out, const cluster *c, const strategy *s, bool *first)
{
    static const char *const tname[3] = {"compute", "p2p send", "data parallel + optimizer"};
    char line[512], gpus[160];
    for (int i = 0; i < s->pp; i++) {
        int last = s->stage[i].first_layer + s->stage[i].n_layers - 1;
        if (s->vpp > 1)
            snprintf(line, sizeof line, "stage %d: %d layers in %d chunks, %s x %d", i,
                     s->stage[i].n_layers, s->vpp, gpu_of_stage(c, s, i, gpus, sizeof gpus),
                     s->tp * s->dp);
        else
            snprintf(line, sizeof line, "stage %d: layers %d-%d, %s x %d", i,
                     s->stage[i].first_layer, last, gpu_of_stage(c, s, i, gpus, sizeof gpus),
                     s->tp * s->dp);
        if (put_event(out, meta_event("process_name", i, 0, "name", json_string(line)),
                      first) != 0 ||
            put_event(out, meta_event("process_sort_index", i, 0, "sort_index",
                                      json_integer(i)), first) != 0)
            return -1;
        for (int t = 0; t < 3; t++)
            if (put_event(out, meta_event("thread_name", i, t, "name", json_string(tname[t])),
                          first) != 0 ||
                put_event(out, meta_event("thread_sort_index", i, t, "sort_index",
                                          json_integer(t)), first) != 0)
                return -1;
    }
    return 0;
}

/* Every forward, backward and send of the pipeline, then per rank the
 * phases after it (exposed DP communication, optimizer, overhead). */
static int chrome_events(FILE *out, const step_sim *sim, int pp, bool *first)
{
    char name[96];
    for (int k = 0; k < sim->ev.n; k++) {
        const sched_event *ev = &sim->ev.ev[k];
        int tid = ev->kind == SCHED_SEND ? TID_P2P : TID_COMPUTE;
        const char *tag = ev->kind == SCHED_FORWARD ? "F" : ev->kind == SCHED_BACKWARD ? "B"
                                                                                       : "send";
        if (sim->vpp > 1)
            snprintf(name, sizeof name, "%s%d.%d", tag, ev->microbatch, ev->chunk);
        else
            snprintf(name, sizeof name, "%s%d", tag, ev->microbatch);
        if (put_event(out, span_event(name, kind_name(ev->kind), ev->stage, tid, ev->start_s,
                                      ev->end_s,
                                      json_pack("{s:i, s:i}", "microbatch", ev->microbatch,
                                                "chunk", ev->chunk)),
                      first) != 0)
            return -1;
    }
    for (int i = 0; i < pp && sim->shown > 0; i++) {
        snprintf(name, sizeof name, "micro-batches %d..%d elided", sim->shown,
                 sim->microbatches - sim->shown - 1);
        if (put_event(out, span_event(name, "elided", i, TID_COMPUTE, sim->elided_from_s[i],
                                      sim->elided_to_s[i], NULL), first) != 0)
            return -1;
    }
    for (int i = 0; i < pp; i++) {
        double t = sim->span_s;
        for (int k = 0; k < TAIL_PHASES; t += tail_s(sim, k), k++)
            if (tail_s(sim, k) > 0 &&
                put_event(out, span_event(k_tail[k].name, k_tail[k].cat, i, TID_DP, t,
                                          t + tail_s(sim, k), NULL), first) != 0)
                return -1;
    }
    return 0;
}

/* The closing otherData object: generator, plan, predicted and simulated
 * step. */
static int chrome_other(FILE *out, const model *m, const cluster *c, const plan *pl,
                        const step_sim *sim)
{
    char line[512];
    json_t *other;
    int rc;
    plan_line(m, pl, line, sizeof line);
    other = json_pack("{s:s, s:s, s:s, s:f, s:f, s:i}", "generator", "planner " PLANNER_VERSION,
                      "cluster", c->name, "plan", line, "step_time_s", pl->e.step_time_s,
                      "simulated_step_s", sim->end_s, "microbatches", sim->microbatches);
    if (other == NULL)
        return -1;
    if (sim->shown > 0) {
        elided_note(sim, line, sizeof line);
        if (json_object_set_new(other, "elided_microbatches",
                                json_integer(sim->microbatches - 2 * sim->shown)) != 0 ||
            json_object_set_new(other, "note", json_string(line)) != 0) {
            json_decref(other);
            return -1;
        }
    }
    rc = json_dumpf(other, out, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12));
    json_decref(other);
    return rc == 0 ? 0 : -1;
}

/* What every writer checks first. */
static planner_status check_args(FILE *out, const model *m, const cluster *c, const plan *pl,
                                 const cost_schedule *sched, planner_error *err)
{
    if (out == NULL || m == NULL || c == NULL || c->n_groups < 1 || pl == NULL || sched == NULL)
        return error_set(err, PLANNER_E_INTERNAL, NULL, 0, 0, NULL,
                         "trace: missing output, model, cluster, plan or schedule");
    return PLANNER_OK;
}

/* A write that failed (ferror) or a JSON value that could not be built. */
static planner_status write_failed(FILE *out, planner_error *err)
{
    if (ferror(out))
        return error_set(err, PLANNER_E_IO, NULL, 0, 0, NULL, "trace: write failed");
    return error_oom(err);
}

planner_status trace_write_chrome(FILE *out, const model *m, const cluster *c, const plan *pl,
                                  const cost_schedule *sched, planner_error *err)
{
    step_sim sim;
    bool first = true;
    planner_status rc = check_args(out, m, c, pl, sched, err);

    if (rc != PLANNER_OK ||
        (rc = step_simulate(pl, sched, TRACE_MAX_EVENTS, &sim, err)) != PLANNER_OK)
        return rc;
    fputs("{\"traceEvents\":[\n", out);
    if (chrome_metadata(out, c, &pl->s, &first) != 0 ||
        chrome_events(out, &sim, pl->s.pp, &first) != 0) {
        rc = write_failed(out, err);
        goto cleanup;
    }
    fputs("\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":", out);
    if (chrome_other(out, m, c, pl, &sim) != 0) {
        rc = write_failed(out, err);
        goto cleanup;
    }
    fputs("}\n", out);
    if (ferror(out))
        rc = write_failed(out, err);
cleanup:
    sched_events_free(&sim.ev);
    return rc;
}

/* ---- SVG ------------------------------------------------------------------------ */

#define SVG_W 1200
#define SVG_LEFT 110
#define SVG_RIGHT 30
#define PLOT_W (SVG_W - SVG_LEFT - SVG_RIGHT)

static void xml_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&apos;", out); break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t')
                fputc(*s, out);
        }
    }
}

/* A "nice" tick step (1, 2 or 5 x 10^k) giving about `want` ticks over range. */
static double nice_step(double range, int want)
{
    double raw = range / (want > 0 ? want : 1), mag, f;
    if (!(raw > 0))
        return 1;
    mag = pow(10.0, floor(log10(raw)));
    f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

static void fmt_time(double t, double step, char *buf, size_t size)
{
    if (step >= 1.0)
        snprintf(buf, size, "%g s", t);
    else if (step >= 1e-3)
        snprintf(buf, size, "%g ms", round(t * 1e6) / 1e3);
    else
        snprintf(buf, size, "%g us", round(t * 1e9) / 1e3);
}

static void rect(FILE *out, double x, double y, double w, double h, const char *fill,
                 const char *title)
{
    fprintf(out, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"", x, y,
            w, h, fill);
    if (title != NULL) {
        fputs("><title>", out);
        xml_text(out, title);
        fputs("</title></rect>\n", out);
    } else {
        fputs("/>\n", out);
    }
}

static void legend_item(FILE *out, double x, double y, const char *fill, const char *label)
{
    rect(out, x, y - 10, 12, 12, fill, NULL);
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">", x + 17, y);
    xml_text(out, label);
    fputs("</text>\n", out);
}

/* Draws the rows at pixel resolution: per rank, runs of pixels whose busiest
 * kind (forward / backward / idle) is the same become one rectangle. */
static int draw_rows_raster(FILE *out, const step_sim *sim, double scale, double y0,
                            double row_h)
{
    int pp = sim->pp, w = PLOT_W;
    double *busy = pl_calloc((size_t)pp * (size_t)w * 2, sizeof *busy);
    if (busy == NULL)
        return -1;
    for (int k = 0; k < sim->ev.n; k++) {
        const sched_event *ev = &sim->ev.ev[k];
        int kind = ev->kind == SCHED_FORWARD ? 0 : ev->kind == SCHED_BACKWARD ? 1 : -1;
        double x0 = ev->start_s * scale, x1 = ev->end_s * scale;
        if (kind < 0 || ev->stage < 0 || ev->stage >= pp)
            continue;
        for (int px = (int)floor(x0); px < w && px <= (int)floor(x1); px++) {
            double a = px > x0 ? px : x0, b = px + 1 < x1 ? px + 1 : x1;
            if (px >= 0 && b > a)
                busy[((size_t)ev->stage * w + px) * 2 + kind] += b - a;
        }
    }
    for (int r = 0; r < pp; r++) {
        int start = 0, cls = -1;
        for (int px = 0; px <= w; px++) {
            int c2 = -1;
            if (px < w) {
                double f = busy[((size_t)r * w + px) * 2], b = busy[((size_t)r * w + px) * 2 + 1];
                c2 = (f + b < 0.5) ? 2 : (f >= b ? 0 : 1);
                if (px >= (int)ceil(sim->span_s * scale))
                    c2 = 3;   /* past the pipeline: drawn separately */
            }
            if (c2 != cls) {
                if (cls == 0 || cls == 1)
                    rect(out, SVG_LEFT + start, y0 + r * row_h + 1, px - start, row_h - 2,
                         cls == 0 ? col_f : col_b, NULL);
                cls = c2;
                start = px;
            }
        }
    }
    pl_free(busy);
    return 0;
}

static void draw_rows_events(FILE *out, const step_sim *sim, double scale, double y0,
                             double row_h)
{
    char title[96];
    for (int k = 0; k < sim->ev.n; k++) {
        const sched_event *ev = &sim->ev.ev[k];
        double x, w;
        if (ev->kind != SCHED_FORWARD && ev->kind != SCHED_BACKWARD)
            continue;
        x = SVG_LEFT + ev->start_s * scale;
        w = (ev->end_s - ev->start_s) * scale;
        if (sim->vpp > 1)
            snprintf(title, sizeof title, "%s micro-batch %d chunk %d: %.3f-%.3f ms",
                     ev->kind == SCHED_FORWARD ? "forward" : "backward", ev->microbatch,
                     ev->chunk, ev->start_s * 1e3, ev->end_s * 1e3);
        else
            snprintf(title, sizeof title, "%s micro-batch %d: %.3f-%.3f ms",
                     ev->kind == SCHED_FORWARD ? "forward" : "backward", ev->microbatch,
                     ev->start_s * 1e3, ev->end_s * 1e3);
        rect(out, x, y0 + ev->stage * row_h + 1, w > 0.3 ? w : 0.3, row_h - 2,
             ev->kind == SCHED_FORWARD ? col_f : col_b, title);
        if (w >= 16 && row_h >= 12)
            fprintf(out, "<text class=\"mb\" x=\"%.2f\" y=\"%.2f\">%d</text>\n", x + w / 2,
                    y0 + ev->stage * row_h + row_h / 2 + 4, ev->microbatch);
    }
}

/* Where the parts of the SVG go: the timeline rows (one per rank) from
 * tl_top, the memory chart from mem_top; scale is pixels per second. */
typedef struct svg_layout {
    int pp;
    double row_h, tl_top, tl_h, mem_top, mem_h, height, scale;
} svg_layout;

static void svg_layout_of(const step_sim *sim, int pp, svg_layout *l)
{
    l->pp = pp;
    l->row_h = pp <= 8 ? 28 : pp <= 32 ? 14 : 480.0 / pp;
    if (l->row_h < 2)
        l->row_h = 2;
    l->tl_top = 92;
    l->tl_h = l->row_h * pp;
    l->mem_h = 260;
    l->mem_top = l->tl_top + l->tl_h + 110;
    l->height = l->mem_top + l->mem_h + 90;
    l->scale = PLOT_W / (sim->end_s > 0 ? sim->end_s : 1.0);
}

/* The document's opening, the title lines and the timeline's legend. */
static void svg_head(FILE *out, const model *m, const cluster *c, const plan *pl,
                     const step_sim *sim, const svg_layout *l)
{
    const evaluation *e = &pl->e;
    char line[512];
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
                 "height=\"%.0f\" viewBox=\"0 0 %d %.0f\" font-family=\"Helvetica, Arial, "
                 "sans-serif\" font-size=\"12\">\n", SVG_W, l->height, SVG_W, l->height);
    fputs("<style>text.mb{font-size:9px;fill:#fff;text-anchor:middle}"
          "text.ax{fill:#444}text.r{text-anchor:end}text.c{text-anchor:middle}"
          "text.h{font-size:15px;font-weight:bold}</style>\n", out);
    fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" fill=\"#fff\"/>\n", SVG_W,
            l->height);

    /* title */
    plan_line(m, pl, line, sizeof line);
    fputs("<text class=\"h\" x=\"16\" y=\"24\">", out);
    xml_text(out, line);
    fputs("</text>\n<text x=\"16\" y=\"44\">", out);
    snprintf(line, sizeof line,
             "%s: step %.3f s predicted (%.3f s simulated here), %.0f tokens/s, MFU %.1f%%, "
             "%d micro-batches",
             c->name[0] ? c->name : "cluster", e->step_time_s, sim->end_s, e->tokens_per_s,
             100.0 * e->mfu, sim->microbatches);
    xml_text(out, line);
    fputs("</text>\n", out);
    if (sim->shown > 0) {
        elided_note(sim, line, sizeof line);
        fputs("<text x=\"16\" y=\"58\">", out);
        xml_text(out, line);
        fputs("</text>\n", out);
    }

    /* timeline legend */
    legend_item(out, SVG_LEFT, 70, col_f, "forward");
    legend_item(out, SVG_LEFT + 90, 70, col_b, "backward");
    legend_item(out, SVG_LEFT + 185, 70, col_idle, "idle (pipeline bubble)");
    legend_item(out, SVG_LEFT + 355, 70, col_dp, "exposed DP communication");
    legend_item(out, SVG_LEFT + 545, 70, col_opt, "optimizer step");
    legend_item(out, SVG_LEFT + 665, 70, col_over, "step overhead");
}

/* The timeline: idle background, events, after-pipeline phases, time axis.
 * 0, or -1 when out of memory. */
static int svg_timeline(FILE *out, const step_sim *sim, const svg_layout *l)
{
    const double tl_top = l->tl_top, tl_h = l->tl_h, row_h = l->row_h, scale = l->scale;
    double step, x = SVG_LEFT + sim->span_s * scale;
    char lab[64], lab2[256];
    for (int r = 0; r < l->pp; r++) {
        double y = tl_top + r * row_h;
        rect(out, SVG_LEFT, y + 1, sim->span_s * scale, row_h - 2, col_idle, NULL);
        if (row_h >= 9 && (l->pp <= 32 || r % (l->pp / 16) == 0)) {
            fprintf(out, "<text class=\"r\" x=\"%d\" y=\"%.1f\">stage %d</text>\n",
                    SVG_LEFT - 8, y + row_h / 2 + 4, r);
        }
    }
    for (int r = 0; r < l->pp && sim->shown > 0; r++) {
        elided_note(sim, lab2, sizeof lab2);
        rect(out, SVG_LEFT + sim->elided_from_s[r] * scale, tl_top + r * row_h + 1,
             (sim->elided_to_s[r] - sim->elided_from_s[r]) * scale, row_h - 2, col_elided,
             lab2);
    }
    if (sim->ev.n <= TRACE_SVG_MAX_RECTS)
        draw_rows_events(out, sim, scale, tl_top, row_h);
    else if (draw_rows_raster(out, sim, scale, tl_top, row_h) != 0)
        return -1;
    for (int k = 0; k < TAIL_PHASES; x += tail_s(sim, k) * scale, k++)
        if (tail_s(sim, k) > 0)
            rect(out, x, tl_top + 1, tail_s(sim, k) * scale, tl_h - 2, *k_tail[k].fill,
                 k_tail[k].title);
    /* time axis */
    step = nice_step(sim->end_s, 8);
    fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#444\"/>\n",
            SVG_LEFT, tl_top + tl_h + 2, SVG_LEFT + PLOT_W, tl_top + tl_h + 2);
    for (double t = 0; t <= sim->end_s * 1.0000001 && step > 0; t += step) {
        double xt = SVG_LEFT + t * scale;
        fmt_time(t, step, lab, sizeof lab);
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"/>\n"
                     "<text class=\"ax c\" x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                xt, tl_top + tl_h + 2, xt, tl_top + tl_h + 7, xt, tl_top + tl_h + 20, lab);
    }
    fprintf(out, "<text class=\"c\" x=\"%d\" y=\"%.1f\">time within one training step "
                 "(pipeline rank per row)</text>\n",
            SVG_LEFT + PLOT_W / 2, tl_top + tl_h + 38);
    return 0;
}

/* The memory chart's top in GiB: the largest stage total or capacity. */
static double svg_memory_max_gib(const evaluation *e, int pp)
{
    double max_gib = 0;
    for (int i = 0; i < pp && i < e->n_stages; i++) {
        const memory_breakdown *mb = &e->stage_memory[i];
        double tot = mb->total_bytes > 0 ? mb->total_bytes
                                         : mb->weights_bytes + mb->grads_bytes +
                                               mb->optimizer_bytes + mb->activations_bytes +
                                               mb->reserve_bytes;
        if (tot / GIB > max_gib)
            max_gib = tot / GIB;
        if (mb->capacity_bytes / GIB > max_gib)
            max_gib = mb->capacity_bytes / GIB;
    }
    return max_gib > 0 ? max_gib : 1;
}

/* Stage i's stacked bar (weights, gradients, optimizer states, activations,
 * reserve) with its capacity line, bar_w wide, on the baseline `base`. */
static void svg_memory_bar(FILE *out, const evaluation *e, int i, int pp, double bar_w,
                           double base, double ys)
{
    const memory_breakdown *mb = &e->stage_memory[i];
    const double part[5] = {mb->weights_bytes, mb->grads_bytes, mb->optimizer_bytes,
                            mb->activations_bytes, mb->reserve_bytes};
    static const char *const fill[5] = {"#4c78a8", "#72b7b2", "#f58518", "#54a24b",
                                        "#bab0ac"};
    static const char *const what[5] = {"weights", "gradients", "optimizer states",
                                        "activations", "reserve"};
    double w = bar_w * 0.7 < 90 ? bar_w * 0.7 : 90;
    double x = SVG_LEFT + i * bar_w + (bar_w - w) / 2, y = base;
    char line[512];
    for (int k = 0; k < 5; k++) {
        double h = part[k] / GIB * ys;
        if (!(h > 0))
            continue;
        y -= h;
        snprintf(line, sizeof line, "stage %d %s: %.2f GiB", i, what[k], part[k] / GIB);
        rect(out, x, y, w, h, fill[k], line);
    }
    if (mb->capacity_bytes > 0) {
        double yc = base - mb->capacity_bytes / GIB * ys;
        fprintf(out, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                     "stroke=\"#d62728\" stroke-dasharray=\"5,3\" stroke-width=\"2\"/>\n",
                x - w * 0.15, yc, x + w * 1.15, yc);
    }
    if (pp <= 32 || i % (pp / 16) == 0)
        fprintf(out, "<text class=\"ax c\" x=\"%.1f\" y=\"%.1f\">%d</text>\n", x + w / 2,
                base + 16, i);
}

/* Memory: stacked bars per stage against usable capacity. */
static void svg_memory(FILE *out, const evaluation *e, const svg_layout *l)
{
    const int pp = l->pp;
    const double mem_top = l->mem_top;
    double max_gib = svg_memory_max_gib(e, pp);
    double ystep = nice_step(max_gib, 6), top = ceil(max_gib / ystep) * ystep;
    double ys = l->mem_h / top, base = mem_top + l->mem_h;
    double bar_w = (double)PLOT_W / (pp > 0 ? pp : 1);
    fputs("<text class=\"h\" x=\"16\" y=\"", out);
    fprintf(out, "%.1f\">Memory per GPU, by pipeline stage</text>\n", mem_top - 50);
    legend_item(out, SVG_LEFT, mem_top - 24, "#4c78a8", "weights");
    legend_item(out, SVG_LEFT + 85, mem_top - 24, "#72b7b2", "gradients");
    legend_item(out, SVG_LEFT + 180, mem_top - 24, "#f58518", "optimizer states");
    legend_item(out, SVG_LEFT + 310, mem_top - 24, "#54a24b", "activations");
    legend_item(out, SVG_LEFT + 415, mem_top - 24, "#bab0ac", "reserve");
    fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#d62728\" "
                 "stroke-dasharray=\"5,3\" stroke-width=\"2\"/>\n"
                 "<text x=\"%d\" y=\"%.1f\">usable capacity</text>\n",
            SVG_LEFT + 500, mem_top - 28, SVG_LEFT + 520, mem_top - 28, SVG_LEFT + 525,
            mem_top - 24);
    for (double g = 0; g <= top * 1.0000001; g += ystep) {
        double y = base - g * ys;
        fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
                     "<text class=\"ax r\" x=\"%d\" y=\"%.1f\">%g GiB</text>\n",
                SVG_LEFT, y, SVG_LEFT + PLOT_W, y, SVG_LEFT - 8, y + 4, g);
    }
    for (int i = 0; i < pp && i < e->n_stages; i++)
        svg_memory_bar(out, e, i, pp, bar_w, base, ys);
    fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#444\"/>\n",
            SVG_LEFT, base, SVG_LEFT + PLOT_W, base);
    fprintf(out, "<text class=\"c\" x=\"%d\" y=\"%.1f\">pipeline stage (peak %.1f GiB on "
                 "stage %d)</text>\n",
            SVG_LEFT + PLOT_W / 2, base + 36, e->peak_memory_bytes / GIB, e->peak_stage);
}

planner_status trace_write_svg(FILE *out, const model *m, const cluster *c, const plan *pl,
                               const cost_schedule *sched, planner_error *err)
{
    step_sim sim;
    svg_layout l;
    planner_status rc = check_args(out, m, c, pl, sched, err);

    if (rc != PLANNER_OK ||
        (rc = step_simulate(pl, sched, TRACE_MAX_EVENTS, &sim, err)) != PLANNER_OK)
        return rc;
    svg_layout_of(&sim, pl->s.pp, &l);
    svg_head(out, m, c, pl, &sim, &l);
    if (svg_timeline(out, &sim, &l) != 0) {
        rc = error_oom(err);
        goto cleanup;
    }
    svg_memory(out, &pl->e, &l);
    fputs("</svg>\n", out);
    if (ferror(out))
        rc = write_failed(out, err);
cleanup:
    sched_events_free(&sim.ev);
    return rc;
}
