/* test_trace.c: Chrome trace JSON and SVG of hand-built plans.
 *
 * Equal stages, t_f = 1 ms, t_b = 2 ms, pp = 4, m = 8 micro-batches, no p2p
 * time: 1F1B takes (m + pp - 1)(t_f + t_b) = 11 x 3 ms = 33 ms (Narayanan et
 * al. 2021, the pipeline-flush closed form), then the exposed DP
 * communication (4 ms) and the optimizer (1 ms) follow: 38 ms.  With a p2p
 * time d per boundary the fill and the drain each cross pp - 1 boundaries,
 * so the step can be no shorter than 33 + 2 (pp - 1) d.
 *
 * A real plan with uneven interleaved chunks (Llama 3.1 405B, tp 8 pp 8 vpp
 * 8 over Megatron's --account-for-embedding/loss-in-pipeline-split: 2
 * layers per chunk, 1 in rank 0's first and rank 7's last): the trace
 * replays evaluate()'s per-chunk schedule, so its simulated step IS the
 * predicted step (a replay over per-rank times / vpp ended 3 ms late). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "inputs/catalog.h"
#include "inputs/cluster.h"
#include "inputs/model.h"
#include "out/trace.h"
#include "testutil.h"

typedef struct fixture {
    model m;
    layer_spec layer[64];
    cluster c;
    node_group group[1];
    plan pl;
    cost_schedule sched;    /* what the evaluation simulated: the trace's input */
} fixture;

static void make(fixture *f, int pp, int microbatches)
{
    memset(f, 0, sizeof *f);
    snprintf(f->m.name, sizeof f->m.name, "test <model> & co");
    f->m.layers = 4 * pp;
    f->m.hidden = 4096;
    f->m.heads = 32;
    f->m.kv_heads = 32;
    f->m.head_dim = 128;
    f->m.ffn_hidden = 16384;
    f->m.prec = PREC_BF16;
    f->m.layer = f->layer;
    snprintf(f->c.name, sizeof f->c.name, "one-node");
    f->c.n_groups = 1;
    f->c.group = f->group;
    f->group[0].gpu = *catalog_find("H100-SXM");
    f->group[0].nodes = 1;
    f->group[0].gpus_per_node = 8;
    f->group[0].intra_bytes_per_s = 1e30;   /* p2p ~ 0 */
    f->group[0].inter_bytes_per_s = 1e30;
    strategy *s = &f->pl.s;
    s->tp = 1; s->pp = pp; s->dp = 1; s->cp = 1; s->ep = 1; s->etp = 1; s->vpp = 1;
    s->mbs = 1; s->gbs = microbatches; s->seq_len = 2048;
    s->n_stages = pp;
    evaluation *e = &f->pl.e;
    e->n_stages = pp;
    for (int i = 0; i < pp; i++) {
        s->stage[i].n_layers = 4;
        s->stage[i].first_layer = 4 * i;
        e->stage_fwd_s[i] = 1e-3;
        e->stage_bwd_s[i] = 2e-3;
        e->stage_memory[i].weights_bytes = 10e9;
        e->stage_memory[i].grads_bytes = 5e9;
        e->stage_memory[i].optimizer_bytes = 20e9;
        e->stage_memory[i].activations_bytes = (pp - i) * 5e9;
        e->stage_memory[i].reserve_bytes = 3e9;
        e->stage_memory[i].total_bytes = 38e9 + (pp - i) * 5e9;
        e->stage_memory[i].capacity_bytes = 80e9;
    }
    f->sched.pp = pp;
    f->sched.vpp = 1;
    f->sched.microbatches = microbatches;
    for (int i = 0; i < pp; i++) {
        f->sched.fwd_s[i] = 1e-3;
        f->sched.bwd_s[i] = 2e-3;
        f->sched.p2p_s[i] = i < pp - 1 ? 1e-12 : 0;   /* sends of ~0 s */
    }
    e->time.dp_comm_s = 4e-3;
    e->time.optimizer_s = 1e-3;
    e->step_time_s = (microbatches + pp - 1) * 3e-3 + 5e-3;
    e->feasible = true;
}

typedef planner_status (*writer)(FILE *, const model *, const cluster *, const plan *,
                                 const cost_schedule *, planner_error *);

static char *render(writer fn, const fixture *f, int *rc)
{
    char *text = NULL;
    size_t len = 0;
    planner_error err = PLANNER_ERROR_INIT;
    FILE *fp = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(fp);
    *rc = (int)fn(fp, &f->m, &f->c, &f->pl, &f->sched, &err);
    ck_assert_int_eq((int)err.status, *rc);   /* a failure says why */
    fclose(fp);
    return text;
}

typedef struct tally {
    int fwd, bwd, send, dp, opt, procs, threads;
    double compute_end_us, dp_start_us, dp_end_us, opt_end_us, first_f_dur_us;
} tally;

static json_t *load_trace(const char *text, tally *t)
{
    json_error_t jerr;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    ck_assert_msg(root != NULL, "trace is not JSON: %s at line %d", jerr.text, jerr.line);
    json_t *evs = json_object_get(root, "traceEvents");
    ck_assert(json_is_array(evs));
    memset(t, 0, sizeof *t);
    t->first_f_dur_us = -1;
    size_t i;
    json_t *ev;
    json_array_foreach(evs, i, ev) {
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        const char *name = json_string_value(json_object_get(ev, "name"));
        ck_assert_ptr_nonnull(ph);
        ck_assert_ptr_nonnull(name);
        ck_assert(json_is_integer(json_object_get(ev, "pid")));
        ck_assert(json_is_integer(json_object_get(ev, "tid")));
        if (strcmp(ph, "M") == 0) {
            t->procs += strcmp(name, "process_name") == 0;
            t->threads += strcmp(name, "thread_name") == 0;
            continue;
        }
        ck_assert_str_eq(ph, "X");
        const char *cat = json_string_value(json_object_get(ev, "cat"));
        double ts = json_number_value(json_object_get(ev, "ts"));
        double dur = json_number_value(json_object_get(ev, "dur"));
        ck_assert(dur >= 0);
        if (strcmp(cat, "forward") == 0) {
            t->fwd++;
            if (ts == 0 && json_integer_value(json_object_get(ev, "pid")) == 0)
                t->first_f_dur_us = dur;
        } else if (strcmp(cat, "backward") == 0) {
            t->bwd++;
        } else if (strcmp(cat, "p2p") == 0) {
            t->send++;
        } else if (strcmp(cat, "dp-comm") == 0) {
            t->dp++;
            t->dp_start_us = ts;
            t->dp_end_us = ts + dur;
        } else if (strcmp(cat, "optimizer") == 0) {
            t->opt++;
            t->opt_end_us = ts + dur;
        }
        if (strcmp(cat, "forward") == 0 || strcmp(cat, "backward") == 0)
            if (ts + dur > t->compute_end_us)
                t->compute_end_us = ts + dur;
    }
    return root;
}

START_TEST(chrome_1f1b_closed_form)
{
    fixture f;
    tally t;
    int rc;
    make(&f, 4, 8);
    char *text = render(trace_write_chrome, &f, &rc);
    ck_assert_int_eq(rc, 0);
    json_t *root = load_trace(text, &t);
    ck_assert_int_eq(t.procs, 4);          /* one process per pipeline rank */
    ck_assert_int_eq(t.threads, 12);       /* compute, p2p, DP + optimizer */
    ck_assert_int_eq(t.fwd, 32);           /* pp x m */
    ck_assert_int_eq(t.bwd, 32);
    ck_assert_int_eq(t.send, 2 * 3 * 8);   /* F and B sends, 3 boundaries, 8 mb, ~0 s */
    ck_assert_rel(t.first_f_dur_us, 1000.0, 1e-9);   /* microseconds */
    ck_assert_rel(t.compute_end_us, 33000.0, 1e-9);  /* (8 + 4 - 1) x 3 ms */
    ck_assert_int_eq(t.dp, 4);
    ck_assert_rel(t.dp_start_us, 33000.0, 1e-9);
    ck_assert_rel(t.dp_end_us, 37000.0, 1e-9);
    ck_assert_int_eq(t.opt, 4);
    ck_assert_rel(t.opt_end_us, 38000.0, 1e-9);
    json_t *other = json_object_get(root, "otherData");
    ck_assert_rel(json_real_value(json_object_get(other, "simulated_step_s")), 0.038, 1e-9);
    ck_assert_str_eq(json_string_value(json_object_get(root, "displayTimeUnit")), "ms");
    json_decref(root);
    free(text);
}
END_TEST

START_TEST(chrome_p2p_sends)
{
    fixture f;
    tally t;
    int rc;
    make(&f, 4, 8);
    /* 1 ms per boundary crossing (what 16,777,216 bytes of 1 x 2048 x 4096
     * 16-bit activations take over a 16.777 GB/s link) */
    for (int i = 0; i < 3; i++)
        f.sched.p2p_s[i] = 1e-3;
    char *text = render(trace_write_chrome, &f, &rc);
    ck_assert_int_eq(rc, 0);
    json_t *root = load_trace(text, &t);
    ck_assert_int_eq(t.send, 2 * 3 * 8);   /* forward and backward, 3 boundaries, 8 mb */
    ck_assert(t.compute_end_us >= 33000.0 + 2 * 3 * 1000.0 - 1e-6);
    json_decref(root);
    free(text);
}
END_TEST

START_TEST(chrome_refuses_bad_plan)
{
    fixture f;
    int rc;
    make(&f, 4, 8);
    f.pl.s.pp = 0;
    char *text = render(trace_write_chrome, &f, &rc);
    ck_assert_int_eq(rc, PLANNER_E_INTERNAL);
    ck_assert_uint_eq(strlen(text), 0);   /* nothing written */
    free(text);
    /* a schedule that is not the plan's (pp 4 vs 3) */
    make(&f, 4, 8);
    f.sched.pp = 3;
    text = render(trace_write_svg, &f, &rc);
    ck_assert_int_eq(rc, PLANNER_E_INTERNAL);
    ck_assert_uint_eq(strlen(text), 0);
    free(text);
}
END_TEST

/* One forward event's duration (us) of (rank, chunk, micro-batch 0). */
static double fwd_dur_us(json_t *root, int rank, int chunk)
{
    size_t i;
    json_t *ev;
    json_array_foreach(json_object_get(root, "traceEvents"), i, ev) {
        json_t *args = json_object_get(ev, "args");
        const char *cat = json_string_value(json_object_get(ev, "cat"));
        if (cat != NULL && strcmp(cat, "forward") == 0 &&
            json_integer_value(json_object_get(ev, "pid")) == rank &&
            json_integer_value(json_object_get(args, "chunk")) == chunk &&
            json_integer_value(json_object_get(args, "microbatch")) == 0)
            return json_number_value(json_object_get(ev, "dur"));
    }
    return -1;
}

START_TEST(chrome_uneven_chunks_match_evaluate)
{
    model *m = NULL;
    cluster *c = NULL;
    planner_error err;
    cost_params p;
    plan pl;
    tally t;
    char *text = NULL;
    planner_error rule;
    size_t len = 0;
    if (model_load(&m, NULL, "configs/llama3.1-405b.json", NULL, &err) != 0 ||
        cluster_load(&c, "clusters/h100x16384.yaml", &err) != 0)
        ck_abort_msg("cannot load the shipped 405B config or cluster: %s", err.msg);
    cost_params_default(&p);
    memset(&pl, 0, sizeof pl);
    strategy *s = &pl.s;
    s->tp = 8; s->pp = 8; s->dp = 256; s->cp = 1; s->ep = 1; s->etp = 1; s->vpp = 8;
    s->mbs = 1; s->gbs = 2048; s->seq_len = 8192; s->sp = true;
    s->recompute = RECOMPUTE_FULL; s->zero = 1;
    s->overlap_grad_reduce = s->overlap_param_gather = s->tp_comm_overlap = true;
    s->n_stages = 8;
    for (int i = 0; i < 8; i++) {
        s->stage[i].tp = 8;
        s->stage[i].dp = 256;
    }
    ck_assert_int_eq(strategy_split_account(s, m->layers, 0), 0);
    ck_assert_int_eq(strategy_chunk_layers(s, m->layers, 0, 0, NULL), 1);
    ck_assert_int_eq(strategy_chunk_layers(s, m->layers, 0, 1, NULL), 2);
    ck_assert_msg(strategy_check(m, s, tu_err(&rule)) == 0, "%s", rule.msg);
    cost_schedule *sched = malloc(sizeof *sched);
    ck_assert_ptr_nonnull(sched);
    evaluate_schedule(m, c, &p, s, &pl.e, sched);
    ck_assert(pl.e.feasible);
    ck_assert(sched->chunked);

    FILE *fp = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(fp);
    ck_assert_int_eq(trace_write_chrome(fp, m, c, &pl, sched, &err), 0);
    fclose(fp);
    free(sched);
    json_t *root = load_trace(text, &t);
    /* 2048 / 256 = 8 micro-batches x 8 chunks x 8 ranks */
    ck_assert_int_eq(t.fwd, 512);
    ck_assert_int_eq(t.bwd, 512);
    json_t *other = json_object_get(root, "otherData");
    ck_assert_rel(json_real_value(json_object_get(other, "simulated_step_s")),
                  pl.e.step_time_s, 1e-9);
    /* the chunks are timed one by one: rank 0's chunk 0 (the embedding and
     * 1 layer) is shorter than its chunk 1 (2 layers); rank 3's chunks, 2
     * layers each, are equal, and equal to rank 0's chunk 1 */
    double f00 = fwd_dur_us(root, 0, 0), f01 = fwd_dur_us(root, 0, 1);
    double f30 = fwd_dur_us(root, 3, 0), f35 = fwd_dur_us(root, 3, 5);
    ck_assert(f00 > 0 && f01 > 0);
    ck_assert_msg(f00 < 0.6 * f01, "chunk 0 %.1f us, chunk 1 %.1f us", f00, f01);
    ck_assert_rel(f35, f30, 1e-6);
    ck_assert_rel(f01, f30, 1e-6);
    json_decref(root);
    free(text);
    model_free(m);
    cluster_free(c);
}
END_TEST

/* Writes text to a file and parses it with Python's XML parser; returns 1
 * parsed, 0 failed, -1 no python3. */
static int python_xml_ok(const char *text)
{
    char path[] = "/tmp/planner-svg-XXXXXX", cmd[256];
    if (system("command -v python3 >/dev/null 2>&1") != 0) {
        tu_skip("test_trace SVG parses as XML", "python3 not installed");
        return -1;
    }
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *fp = fdopen(fd, "w");
    fputs(text, fp);
    fclose(fp);
    snprintf(cmd, sizeof cmd,
             "python3 -c 'import sys, xml.etree.ElementTree as E; "
             "r = E.parse(sys.argv[1]).getroot(); "
             "sys.exit(0 if r.tag == \"{http://www.w3.org/2000/svg}svg\" else 1)' %s", path);
    int rc = system(cmd);
    unlink(path);
    return rc == 0;
}

static int count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

START_TEST(svg_events_and_memory)
{
    fixture f;
    int rc;
    make(&f, 4, 8);
    char *text = render(trace_write_svg, &f, &rc);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_ne(python_xml_ok(text), 0);
    /* 32 forward and 32 backward rectangles (+1 legend swatch each) */
    ck_assert_int_eq(count(text, "fill=\"#4c78a8\"><title>forward"), 32);
    ck_assert_int_eq(count(text, "fill=\"#54a24b\"><title>backward"), 32);
    /* memory bars: one stacked segment per component per stage */
    ck_assert_int_eq(count(text, " weights: "), 4);
    ck_assert_int_eq(count(text, " activations: "), 4);
    ck_assert_int_eq(count(text, " optimizer states: "), 4);
    ck_assert_ptr_nonnull(strstr(text, "stage 3"));
    ck_assert_ptr_nonnull(strstr(text, "usable capacity"));
    ck_assert_ptr_nonnull(strstr(text, "test &lt;model&gt; &amp; co"));   /* escaped */
    ck_assert_ptr_null(strstr(text, "<model>"));
    free(text);
}
END_TEST

START_TEST(svg_many_microbatches_bounded)
{
    fixture f;
    int rc;
    make(&f, 8, 4000);   /* 64,000 compute events: drawn per pixel run */
    char *text = render(trace_write_svg, &f, &rc);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_ne(python_xml_ok(text), 0);
    ck_assert_uint_lt(strlen(text), 2000000);
    ck_assert_int_eq(count(text, "<title>forward micro-batch"), 0);
    free(text);
}
END_TEST

/* The index of the event of full matching (kind, stage, micro-batch, chunk) of e. */
static int find_event(const sched_events *full, const sched_event *e)
{
    for (int k = 0; k < full->n; k++) {
        const sched_event *x = &full->ev[k];
        if (x->kind == e->kind && x->stage == e->stage && x->microbatch == e->microbatch &&
            x->chunk == e->chunk && (e->kind != SCHED_SEND || fabs(x->start_s - e->start_s) < 1e-9))
            return k;
    }
    return -1;
}

/* A bounded trace (issue 16: every valid plan renders) shows the first and
 * last H micro-batches of the step exactly: each shown event is the full
 * simulation's, same start and end, and every full event of those
 * micro-batches is shown.  Uneven stages and real p2p times, 1F1B and
 * interleaved. */
static void check_bounded(int pp, int vpp, int m)
{
    fixture f;
    sched_events full = {NULL, 0, 0}, part = {NULL, 0, 0};
    planner_error err = PLANNER_ERROR_INIT;
    int shown = -1, h = 2 * pp;
    long budget = 12L * pp * vpp * h;   /* H = 2 pp */
    make(&f, pp, m);
    f.pl.s.vpp = f.sched.vpp = vpp;
    for (int i = 0; i < pp; i++) {
        f.sched.fwd_s[i] = (1.0 + 0.3 * i) * 1e-3;   /* the last stage slowest */
        f.sched.bwd_s[i] = (2.0 + 0.5 * (i % 2)) * 1e-3;
        f.sched.p2p_s[i] = i < pp - 1 ? 0.05e-3 : 0;
    }
    f.sched.p2p_wrap_s = 0.07e-3;
    ck_assert_int_eq(trace_events(&f.pl, &f.sched, 1L << 40, &full, &shown, &err), PLANNER_OK);
    ck_assert_int_eq(shown, 0);
    ck_assert_int_eq(trace_events(&f.pl, &f.sched, budget, &part, &shown, &err), PLANNER_OK);
    ck_assert_int_eq(shown, h);
    ck_assert_int_eq(trace_shown_microbatches(&f.sched, budget), h);
    int want = 0;
    for (int k = 0; k < full.n; k++)
        want += full.ev[k].microbatch < h || full.ev[k].microbatch >= m - h;
    ck_assert_int_eq(part.n, want);
    ck_assert_int_le(part.n, budget);
    for (int k = 0; k < part.n; k++) {
        const sched_event *e = &part.ev[k];
        int j = find_event(&full, e);
        ck_assert_msg(j >= 0, "pp %d vpp %d: event mb %d stage %d chunk %d not in the step",
                      pp, vpp, e->microbatch, e->stage, e->chunk);
        ck_assert_msg(fabs(full.ev[j].start_s - e->start_s) < 1e-9 &&
                          fabs(full.ev[j].end_s - e->end_s) < 1e-9,
                      "pp %d vpp %d: mb %d stage %d: %.9f-%.9f shown, %.9f-%.9f in the step",
                      pp, vpp, e->microbatch, e->stage, e->start_s, e->end_s,
                      full.ev[j].start_s, full.ev[j].end_s);
    }
    sched_events_free(&full);
    sched_events_free(&part);
}

START_TEST(bounded_trace_shows_both_ends_exactly)
{
    check_bounded(4, 1, 96);
    check_bounded(4, 2, 96);
    check_bounded(3, 1, 200);
    check_bounded(4, 3, 64);
}
END_TEST

/* GPT-3's shape at gbs 32768, mbs 1, pp 32, vpp 3 (16,384 micro-batches,
 * over 6 million events): it renders, bounded, with the note, as valid JSON
 * and SVG. */
START_TEST(huge_step_renders_bounded)
{
    fixture f;
    int rc;
    make(&f, 32, 16384);
    f.pl.s.vpp = f.sched.vpp = 3;
    char *text = render(trace_write_chrome, &f, &rc);
    ck_assert_int_eq(rc, 0);
    json_error_t jerr;
    json_t *root = json_loads(text, 0, &jerr);
    ck_assert_msg(root != NULL, "trace is not JSON: %s", jerr.text);
    ck_assert_uint_le(json_array_size(json_object_get(root, "traceEvents")),
                      (size_t)TRACE_MAX_EVENTS + 32 * 20);
    json_t *other = json_object_get(root, "otherData");
    ck_assert_int_eq(json_integer_value(json_object_get(other, "microbatches")), 16384);
    ck_assert_int_gt(json_integer_value(json_object_get(other, "elided_microbatches")), 0);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(other, "note")), "elided"));
    json_decref(root);
    free(text);
    text = render(trace_write_svg, &f, &rc);
    ck_assert_int_eq(rc, 0);
    ck_assert_ptr_nonnull(strstr(text, "elided (more than"));
    free(text);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, chrome_1f1b_closed_form);
    tcase_add_test(tc, chrome_p2p_sends);
    tcase_add_test(tc, chrome_refuses_bad_plan);
    tcase_add_test(tc, chrome_uneven_chunks_match_evaluate);
    tcase_add_test(tc, svg_events_and_memory);
    tcase_add_test(tc, svg_many_microbatches_bounded);
    tcase_add_test(tc, bounded_trace_shows_both_ends_exactly);
    tcase_add_test(tc, huge_step_renders_bounded);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
