/* bench_pipeline.c: wall time of the pipeline-schedule simulation alone, on
 * the calls a real search makes.
 *
 * Usage: bench_pipeline [-r REPEATS] MODEL CLUSTER [MODEL CLUSTER]...
 * Linked with -Wl,--wrap=schedule_simulate_ex (bench/run.sh), so every call
 * evaluate() makes during one full search of each pair (default options, as
 * bench_search) is recorded: the stack's schedule, pp, vpp, micro-batches
 * and the stage times.
 * Then the recorded calls are replayed REPEATS times (default 5) and the
 * best and median time of one replay are printed, with calls, calls per
 * second and the schedule operations per call (2 pp m vpp, what a full
 * event-by-event simulation computes).  Then the same through a
 * sched_cache (schedule_simulate_cached: repeats of the last 8 inputs are
 * answered from it), with its hits.  Each replay must give back the
 * recorded results bit for bit.  Exits 1 when an input fails to load, a
 * search errs, or a replay differs. */
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "bench_common.h"
#include "schedule/pipeline.h"

typedef struct call {
    stack_pipe pipe;
    int pp, vpp, m;
    double wrap_s, span_s;
    double *t;          /* fwd[pp], bwd[pp], p2p[pp] */
} call;

typedef struct recorder {
    call *c;
    size_t n, cap;
    int failed;
} recorder;

/* The wrapper sees no context argument: the recorder is the one mutable
 * global of this benchmark program (not of planner). */
static recorder rec;

double __real_schedule_simulate_ex(stack_pipe pipe, int pp, int vpp, int microbatches,
                                   const double *fwd_s, const double *bwd_s, const double *p2p_s,
                                   double p2p_wrap_s, double *rank_end_s, sched_events *out);
double __wrap_schedule_simulate_ex(stack_pipe pipe, int pp, int vpp, int microbatches,
                                   const double *fwd_s, const double *bwd_s, const double *p2p_s,
                                   double p2p_wrap_s, double *rank_end_s, sched_events *out);

double __wrap_schedule_simulate_ex(stack_pipe pipe, int pp, int vpp, int microbatches,
                                   const double *fwd_s, const double *bwd_s, const double *p2p_s,
                                   double p2p_wrap_s, double *rank_end_s, sched_events *out)
{
    double span = __real_schedule_simulate_ex(pipe, pp, vpp, microbatches, fwd_s, bwd_s, p2p_s,
                                              p2p_wrap_s, rank_end_s, out);
    call *c;
    int i;

    if (out != NULL || pp < 1 || pp > STRATEGY_MAX_STAGES || rec.failed)
        return span;
    if (rec.n == rec.cap) {
        size_t cap = rec.cap ? 2 * rec.cap : 1024;
        call *p = pl_realloc(rec.c, cap * sizeof *p);
        if (p == NULL) {
            rec.failed = 1;
            return span;
        }
        rec.c = p;
        rec.cap = cap;
    }
    c = &rec.c[rec.n];
    c->t = pl_malloc(3 * (size_t)pp * sizeof *c->t);
    if (c->t == NULL) {
        rec.failed = 1;
        return span;
    }
    for (i = 0; i < pp; i++) {
        c->t[i] = fwd_s[i];
        c->t[pp + i] = bwd_s[i];
        c->t[2 * pp + i] = p2p_s != NULL && i < pp - 1 ? p2p_s[i] : 0;
    }
    c->pipe = pipe;
    c->pp = pp;
    c->vpp = vpp;
    c->m = microbatches;
    c->wrap_s = p2p_wrap_s;
    c->span_s = span;
    rec.n++;
    return span;
}

static void rec_clear(void)
{
    size_t i;
    for (i = 0; i < rec.n; i++)
        pl_free(rec.c[i].t);
    pl_free(rec.c);
    memset(&rec, 0, sizeof rec);
}

static int bench_one(const char *model_path, const char *cluster_path, int repeats)
{
    planner_error err = PLANNER_ERROR_INIT;
    bench_case bc;
    search_result r;
    double t[BENCH_MAX_REPEATS], tc[BENCH_MAX_REPEATS], median, median_c, ops = 0;
    sched_cache *cache = NULL;
    double end[STRATEGY_MAX_STAGES];
    planner_status st;
    size_t i;
    int k, rc = 1;

    if (bench_case_load(&bc, model_path, cluster_path) != 0)
        goto cleanup;
    st = search_run(&r, bc.m, bc.c, &bc.p, &bc.o, &err);
    if (st != PLANNER_OK && st != PLANNER_E_INFEASIBLE) {
        error_print(&err, stderr);
        goto cleanup;
    }
    search_result_free(&r);
    if (rec.failed || rec.n == 0) {
        fprintf(stderr, "bench_pipeline: nothing recorded\n");
        goto cleanup;
    }
    for (i = 0; i < rec.n; i++)
        ops += 2.0 * rec.c[i].pp * rec.c[i].m * rec.c[i].vpp;
    for (k = 0; k < repeats; k++) {
        double t0 = bench_now_s();
        for (i = 0; i < rec.n; i++) {
            const call *x = &rec.c[i];
            double s = __real_schedule_simulate_ex(x->pipe, x->pp, x->vpp, x->m, x->t,
                                                   x->t + x->pp, x->t + 2 * x->pp, x->wrap_s,
                                                   end, NULL);
            if (memcmp(&s, &x->span_s, sizeof s) != 0) {
                fprintf(stderr, "bench_pipeline: call %zu (pp %d vpp %d m %d) gave %.17g, "
                        "recorded %.17g\n", i, x->pp, x->vpp, x->m, s, x->span_s);
                goto cleanup;
            }
        }
        t[k] = bench_now_s() - t0;
    }
    cache = pl_malloc(sizeof *cache);
    if (cache == NULL) {
        fprintf(stderr, "bench_pipeline: out of memory\n");
        goto cleanup;
    }
    for (k = 0; k < repeats; k++) {
        double t0 = bench_now_s();
        sched_cache_init(cache);
        for (i = 0; i < rec.n; i++) {
            const call *x = &rec.c[i];
            double s = schedule_simulate_cached(cache, x->pipe, x->pp, x->vpp, x->m, x->t,
                                                x->t + x->pp, x->t + 2 * x->pp, x->wrap_s, end);
            if (memcmp(&s, &x->span_s, sizeof s) != 0) {
                fprintf(stderr, "bench_pipeline: cached call %zu differs\n", i);
                goto cleanup;
            }
        }
        tc[k] = bench_now_s() - t0;
    }
    median = bench_sort_median(t, repeats);
    median_c = bench_sort_median(tc, repeats);
    printf("schedule simulation of planner --model %s --cluster %s\n", model_path, cluster_path);
    printf("  %zu calls, %d replays: best %.1f ms, median %.1f ms; %.0f calls/s, "
           "%.2f us per call; %.0f schedule operations per call\n",
           rec.n, repeats, 1e3 * t[0], 1e3 * median, median > 0 ? (double)rec.n / median : 0.0,
           1e6 * median / (double)rec.n, ops / (double)rec.n);
    printf("  through a sched_cache: best %.1f ms, median %.1f ms; %ld hits of %zu calls\n",
           1e3 * tc[0], 1e3 * median_c, cache->hits, rec.n);
    rc = 0;
cleanup:
    pl_free(cache);
    rec_clear();
    bench_case_free(&bc);
    return rc;
}

int main(int argc, char **argv)
{
    int repeats = 5, rc = 0, i;
    alloc_init();
    if ((i = bench_pair_args(argc, argv, "bench_pipeline", BENCH_MAX_REPEATS, &repeats)) < 0)
        return 2;
    for (; i + 1 < argc; i += 2)
        rc |= bench_one(argv[i], argv[i + 1], repeats);
    return rc;
}
