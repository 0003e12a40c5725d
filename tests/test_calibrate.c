/* test_calibrate.c: the calibration fit and file.
 *
 * Recovery: runs whose "measured" throughput is the cost model's own
 * prediction under chosen constants must give those constants back to 1e-6
 * (relative), from the defaults, whether the knobs are published or searched.
 * Degenerate inputs are refused with their messages; the calibration file
 * round-trips bit for bit; bad calibration files give FILE:LINE:COL errors.
 */
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/alloc.h"
#include "fit/calibrate.h"
#include "fit/calibration.h"
#include "fit/crossval.h"
#include "testutil.h"

/* One run: id, gpu, gpus, layers, hidden, heads, ffn, seq, activation,
 * tp, pp, dp, mbs (or null), gbs. */
static void run_json(char *buf, size_t n, const char *id, const char *source, const char *gpu,
                     int gpus, int layers, int hidden, int heads, int ffn, int seq,
                     const char *act, int tp, int pp, int dp, int mbs, int gbs)
{
    char mbs_s[16];
    if (mbs > 0)
        snprintf(mbs_s, sizeof mbs_s, "%d", mbs);
    else
        snprintf(mbs_s, sizeof mbs_s, "null");
    snprintf(buf, n,
             "{\"id\": \"%s\", \"source\": \"%s\", \"gpu\": \"%s\", \"num_gpus\": %d,"
             " \"gpus_per_node\": 8, \"model\": {\"layers\": %d, \"hidden\": %d, \"heads\": %d,"
             " \"kv_heads\": %d, \"ffn_hidden\": %d, \"vocab\": 51200, \"seq_len\": %d,"
             " \"activation\": \"%s\"}, \"parallel\": {\"tp\": %d, \"pp\": %d, \"dp\": %d,"
             " \"cp\": 1, \"ep\": 1, \"vpp\": null, \"mbs\": %s, \"gbs\": %d,"
             " \"sequence_parallel\": %s, \"recompute\": \"selective\"}, \"precision\": \"bf16\","
             " \"measured\": {\"tokens_per_s_per_gpu\": 1000}, \"unpublished\": [%s]}",
             id, source, gpu, gpus, layers, hidden, heads, heads, ffn, seq, act, tp, pp, dp,
             mbs_s, gbs, tp > 1 ? "true" : "false", mbs > 0 ? "\"vpp\"" : "\"mbs\", \"vpp\"");
}

/* A varied set on one GPU type: sizes, sequence lengths, tp inside a node,
 * pp and dp across nodes. */
static char *runs_text(const char *gpu, int unpublished_mbs)
{
    static const struct {
        int gpus, layers, hidden, heads, ffn, seq, tp, pp, dp, mbs, gbs;
        const char *act;
    } k[] = {
        {8, 24, 2048, 16, 8192, 2048, 1, 1, 8, 4, 256, "gelu"},
        {8, 24, 2048, 16, 8192, 8192, 2, 1, 4, 1, 64, "gelu"},
        {16, 32, 4096, 32, 11008, 4096, 8, 1, 2, 1, 128, "swiglu"},
        {64, 32, 4096, 32, 11008, 4096, 4, 2, 8, 1, 512, "swiglu"},
        {32, 16, 1024, 16, 4096, 1024, 1, 1, 32, 8, 1024, "gelu"},
        {128, 40, 5120, 40, 20480, 2048, 8, 4, 4, 1, 512, "gelu"},
        {16, 12, 768, 12, 3072, 1024, 1, 2, 8, 16, 512, "gelu"},
        {64, 48, 6144, 48, 24576, 2048, 8, 8, 1, 1, 128, "gelu"},
        {256, 80, 8192, 64, 28672, 4096, 8, 8, 4, 1, 256, "swiglu"},
        {8, 16, 2048, 16, 5632, 16384, 4, 1, 2, 1, 32, "swiglu"},
        {32, 24, 3072, 24, 12288, 2048, 2, 1, 16, 2, 512, "gelu"},
        {64, 24, 2048, 16, 8192, 2048, 1, 1, 64, 2, 2048, "gelu"},
    };
    size_t cap = 64 * 1024, used = 0, i;
    char *out = pl_malloc(cap);
    ck_assert_ptr_nonnull(out);
    used += (size_t)snprintf(out, cap, "{\"runs\": [\n");
    for (i = 0; i < sizeof k / sizeof k[0]; i++) {
        char id[32], src[32];
        snprintf(id, sizeof id, "%s_%zu", gpu, i);
        snprintf(src, sizeof src, "table %zu", i % 4);
        run_json(out + used, cap - used, id, src, gpu, k[i].gpus, k[i].layers, k[i].hidden,
                 k[i].heads, k[i].ffn, k[i].seq, k[i].act, k[i].tp, k[i].pp, k[i].dp,
                 unpublished_mbs ? 0 : k[i].mbs, k[i].gbs);
        used += strlen(out + used);
        used += (size_t)snprintf(out + used, cap - used, "%s\n",
                                 i + 1 < sizeof k / sizeof k[0] ? "," : "");
    }
    snprintf(out + used, cap - used, "]}\n");
    return out;
}

static char *write_tmp(const char *text)
{
    char *path = pl_strdup("/tmp/planner-test-calib-XXXXXX");
    int fd = mkstemp(path);
    FILE *f;
    ck_assert_int_ge(fd, 0);
    f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* The whole of a file, NUL-terminated (free it). */
static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf;
    long n;
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    n = ftell(f);
    rewind(f);
    buf = calloc((size_t)n + 1, 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_int_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    return buf;
}

static validation_set *load_runs(const char *text)
{
    char *path = write_tmp(text);
    validation_set *v = NULL;
    planner_error err = PLANNER_ERROR_INIT;
    planner_status st = validation_load(&v, path, &err);
    ck_assert_msg(st == PLANNER_OK, "%s", err.msg);
    unlink(path);
    pl_free(path);
    return v;
}

/* Sets every run's measured throughput to the model's prediction under p
 * (the strategy the search picks with p), scaled by `factor`. */
static void synthesize(validation_set *v, const cost_params *p, double factor)
{
    int i;
    plan *pl = pl_malloc(sizeof *pl);
    ck_assert_ptr_nonnull(pl);
    for (i = 0; i < v->n; i++) {
        planner_error err = PLANNER_ERROR_INIT;
        ck_assert_msg(validation_predict(pl, &v->run[i], p, &err) == PLANNER_OK, "run %s: %s",
                      v->run[i].id, err.msg);
        v->run[i].measured_tokens_per_s_per_gpu = pl->e.tokens_per_s_per_gpu * factor;
    }
    pl_free(pl);
}

/* The chosen "true" constants of a generation: far enough from the defaults
 * that a fit which did nothing would fail. */
static void truth(cost_params *p, gpu_generation g)
{
    cost_params_default(p);
    p->gen[g].gemm_eff = 0.62;
    p->gen[g].attn_eff = 0.41;
    p->gen[g].hbm_eff = 0.73;
    p->gen[g].intra_eff = 0.74;     /* inside every plausible range (cost.h) */
    p->gen[g].inter_eff = 0.57;
    p->gen[g].kernel_s = 7.5e-6;
    p->gen[g].step_overhead_s = 0.21;
}

static void check_recovered(const calib_fit *f, const cost_params *want)
{
    int j;
    for (j = 0; j < f->n_params; j++) {
        char name[CALIB_NAME_MAX];
        double got = f->value[j], exp = calib_param_get(want, &f->param[j]);
        calib_param_name(&f->param[j], name, sizeof name);
        ck_assert_msg(fabs(got - exp) <= 1e-6 * fabs(exp), "%s = %.12g, expected %.12g", name,
                      got, exp);
    }
}

/* A parameter's name (a static buffer: one at a time). */
static const char *k_name(const calib_param *p)
{
    static char name[CALIB_NAME_MAX];
    calib_param_name(p, name, sizeof name);
    return name;
}

/* The progress hook (issue 16: calibrate and crossval run for tens of
 * seconds): called once per re-predicted run, counting up by one. */
typedef struct hook_log {
    long calls, last;
    bool counts_up;
} hook_log;

static void log_progress(void *ctx, long done, long total)
{
    hook_log *h = ctx;
    h->counts_up &= done == h->last + 1 && total <= 0;
    h->last = done;
    h->calls++;
}

static void recover(const char *gpu, gpu_generation g, int unpublished, const char *params,
                    int expect_params)
{
    hook_log log = {0, 0, true};
    char *text = runs_text(gpu, unpublished);
    validation_set *v = load_runs(text);
    cost_params want, start;
    calib_options opt;
    calib_fit fit;
    planner_error err = PLANNER_ERROR_INIT;
    planner_status st;
    int j;

    truth(&want, g);
    synthesize(v, &want, 1.0);
    cost_params_default(&start);
    calib_options_default(&opt);
    opt.prior = 0;   /* plain least squares */
    opt.params = params;
    opt.progress.update = log_progress;
    opt.progress.ctx = &log;
    st = calibrate_fit(&fit, v, NULL, &start, &opt, &err);
    ck_assert_msg(st == PLANNER_OK, "%s", err.msg);
    /* every run predicted at least once per iteration but the last (which
     * finds nothing left to move), plus the selection */
    ck_assert_msg(log.counts_up && log.calls >= (long)v->n * fit.iterations,
                  "progress: %ld calls, counting up %d, %d runs, %d iterations", log.calls,
                  (int)log.counts_up, v->n, fit.iterations);
    ck_assert_int_eq(fit.n_params, expect_params);
    ck_assert_int_eq(fit.n_runs, v->n);
    ck_assert(fit.converged);
    ck_assert_int_eq(fit.rank, fit.n_params);
    for (j = 0; j < 7; j++) {
        static const char *const names[7] = {"gemm_eff", "attn_eff", "hbm_eff", "intra_eff",
                                             "inter_eff", "kernel_s", "step_overhead_s"};
        char want_name[CALIB_NAME_MAX], name[CALIB_NAME_MAX];
        int k, found = 0;
        snprintf(want_name, sizeof want_name, "%s.%s", gpu_generation_name(g), names[j]);
        for (k = 0; k < fit.n_params; k++) {
            calib_param_name(&fit.param[k], name, sizeof name);
            found |= strcmp(name, want_name) == 0;
        }
        ck_assert_msg(found, "%s not fitted", want_name);
    }
    check_recovered(&fit, &want);
    ck_assert_double_le(fit.rms_rel, 1e-9);
    ck_assert_double_le(fit.max_rel, 1e-9);
    calib_fit_free(&fit);
    validation_free(v);
    pl_free(text);
}

/* the seven constants truth() moves, as bare names (every generation in
 * the runs): with exact data all seven are determined */
#define SEVEN "gemm_eff,attn_eff,hbm_eff,intra_eff,inter_eff,kernel_s,step_overhead_s"

START_TEST(recovers_every_hopper_constant)
{
    recover("H100-SXM", GEN_HOPPER, 0, SEVEN, 7);
}
END_TEST

START_TEST(recovers_every_ampere_constant)
{
    recover("A100-SXM-80GB", GEN_AMPERE, 0, SEVEN, 7);
}
END_TEST

START_TEST(recovers_with_searched_knobs)
{
    /* mbs unpublished: the search picks it with the current constants; the
     * fixed point must land on the truth anyway */
    recover("H100-SXM", GEN_HOPPER, 1, SEVEN, 7);
}
END_TEST

START_TEST(recovers_two_generations)
{
    char *a = runs_text("H100-SXM", 0), *b = runs_text("A100-SXM-80GB", 0);
    size_t la = strlen(a);
    char *both = pl_malloc(la + strlen(b) + 8);
    validation_set *v;
    cost_params want, start;
    calib_options opt;
    calib_fit fit;
    planner_error err = PLANNER_ERROR_INIT;

    /* splice: a's runs, b's runs */
    memcpy(both, a, la);
    both[la - 4] = ',';    /* "]}\n" -> "," */
    strcpy(both + la - 3, strchr(b, '[') + 1);
    v = load_runs(both);
    ck_assert_int_eq(v->n, 24);
    cost_params_default(&want);
    want.gen[GEN_HOPPER].gemm_eff = 0.62;
    want.gen[GEN_HOPPER].hbm_eff = 0.73;
    want.gen[GEN_HOPPER].attn_eff = 0.41;
    want.gen[GEN_AMPERE].gemm_eff = 0.71;
    want.gen[GEN_AMPERE].hbm_eff = 0.8;
    want.gen[GEN_HOPPER].step_overhead_s = 0.21;
    want.gen[GEN_AMPERE].step_overhead_s = 0.15;
    synthesize(v, &want, 1.0);
    cost_params_default(&start);
    calib_options_default(&opt);
    opt.prior = 0;   /* plain least squares */
    /* step_overhead_s is per generation: both are recovered */
    opt.params = "gemm_eff,hbm_eff,hopper.attn_eff,step_overhead_s";
    ck_assert_msg(calibrate_fit(&fit, v, NULL, &start, &opt, &err) == PLANNER_OK, "%s", err.msg);
    ck_assert_int_eq(fit.n_params, 7);
    check_recovered(&fit, &want);
    calib_fit_free(&fit);
    validation_free(v);
    pl_free(a);
    pl_free(b);
    pl_free(both);
}
END_TEST

/* Fits `params` to the first `nruns` synthetic H100 runs (measured scaled by
 * `factor`); returns the status and the message. */
static planner_status fit_msg(int nruns, const char *params, double factor, int dup,
                              char *msg, size_t n)
{
    char *text = runs_text("H100-SXM", 0);
    validation_set *v = load_runs(text);
    cost_params want, start;
    calib_options opt;
    calib_fit fit;
    planner_error err = PLANNER_ERROR_INIT;
    planner_status st;
    bool use[64];
    int i;

    truth(&want, GEN_HOPPER);
    if (dup)        /* every run a copy of run 0 */
        for (i = 1; i < v->n; i++) {
            model_free(v->run[i].m);
            cluster_free(v->run[i].c);
            v->run[i].m = NULL;
            v->run[i].c = NULL;
        }
    for (i = 1; dup && i < v->n; i++) {
        validation_set *one = load_runs(text);
        v->run[i].m = one->run[0].m;
        v->run[i].c = one->run[0].c;
        v->run[i].fix = one->run[0].fix;
        v->run[i].gbs = one->run[0].gbs;
        v->run[i].seq_len = one->run[0].seq_len;
        v->run[i].num_gpus = one->run[0].num_gpus;
        one->run[0].m = NULL;
        one->run[0].c = NULL;
        validation_free(one);
    }
    synthesize(v, &want, factor);
    for (i = 0; i < v->n; i++)
        use[i] = i < nruns;
    cost_params_default(&start);
    calib_options_default(&opt);
    opt.prior = 0;   /* plain least squares */
    opt.runs_file = "runs.json";
    opt.params = params;
    st = calibrate_fit(&fit, v, use, &start, &opt, &err);
    snprintf(msg, n, "%s", err.msg);
    if (st == PLANNER_OK)
        ck_assert_str_eq(msg, "");
    else if (st == PLANNER_E_INPUT)
        ck_assert_str_eq(err.file, "runs.json");
    calib_fit_free(&fit);
    validation_free(v);
    pl_free(text);
    return st;
}

START_TEST(refuses_fewer_runs_than_parameters)
{
    char msg[ERROR_MSG_MAX];
    ck_assert_int_eq(fit_msg(2, "gemm_eff,attn_eff,hbm_eff", 1.0, 0, msg, sizeof msg),
                     PLANNER_E_INPUT);
    ck_assert_str_eq(msg, "calibrate: 2 runs for 3 parameters: a fit needs at least as many "
                          "runs as parameters (add runs or name fewer with --params)");
}
END_TEST

START_TEST(refuses_rank_deficiency)
{
    char msg[ERROR_MSG_MAX];
    /* twelve copies of one run cannot tell GEMM from attention efficiency */
    ck_assert_int_eq(fit_msg(12, "gemm_eff,attn_eff", 1.0, 1, msg, sizeof msg),
                     PLANNER_E_INPUT);
    ck_assert_msg(strstr(msg, "calibrate: rank deficient: 12 runs determine only 1 of 2 "
                              "parameters") == msg, "%s", msg);
    /* attention is a small part of this run: the undetermined direction is
     * almost all attention efficiency */
    ck_assert_msg(strstr(msg, "; undetermined: hopper.attn_eff (") != NULL, "%s", msg);
}
END_TEST

START_TEST(refuses_unexercised_named_parameter)
{
    char msg[ERROR_MSG_MAX];
    /* runs 0 and 1 fit in one node: nothing crosses the NIC */
    ck_assert_int_eq(fit_msg(2, "hopper.gemm_eff,hopper.inter_eff", 1.0, 0, msg, sizeof msg),
                     PLANNER_E_INPUT);
    ck_assert_msg(strncmp(msg, "calibrate: hopper.inter_eff: no run exercises it", 48) == 0,
                  "%s", msg);
}
END_TEST

START_TEST(drops_unexercised_default_parameter)
{
    char *text = runs_text("H100-SXM", 0);
    validation_set *v = load_runs(text);
    cost_params want, start;
    calib_options opt;
    calib_fit fit;
    planner_error err = PLANNER_ERROR_INIT;
    bool use[12] = {true, true, false, false, false, false, false, false, false, true, false,
                    false};
    int j;

    truth(&want, GEN_HOPPER);
    synthesize(v, &want, 1.0);
    cost_params_default(&start);
    calib_options_default(&opt);
    opt.prior = 0;   /* plain least squares */
    opt.params = "gemm_eff,inter_eff";     /* bare names: dropped when unexercised */
    ck_assert_msg(calibrate_fit(&fit, v, use, &start, &opt, &err) == PLANNER_OK, "%s", err.msg);
    ck_assert_int_eq(fit.n_runs, 3);
    ck_assert_int_eq(fit.n_params, 1);
    ck_assert_str_eq(fit.notes, "dropped hopper.inter_eff: no run exercises it\n");
    for (j = 0; j < fit.n_params; j++) {
        char name[CALIB_NAME_MAX];
        calib_param_name(&fit.param[j], name, sizeof name);
        ck_assert_str_eq(name, "hopper.gemm_eff");
    }
    calib_fit_free(&fit);
    validation_free(v);
    pl_free(text);
}
END_TEST

START_TEST(refuses_absurd_values)
{
    char msg[ERROR_MSG_MAX];
    /* measured 2.5x faster than the model at 0.62 of peak: GEMMs beyond
     * peak, or (when the rest of the step alone exceeds the measurement) a
     * negative inverse efficiency */
    ck_assert_int_eq(fit_msg(12, "gemm_eff", 2.5, 0, msg, sizeof msg), PLANNER_E_INPUT);
    ck_assert_msg(strncmp(msg, "calibrate: absurd fit: hopper.gemm_eff = ", 41) == 0 ||
                  strncmp(msg, "calibrate: absurd fit: 1/hopper.gemm_eff = -", 44) == 0, "%s",
                  msg);
    ck_assert_msg(strstr(msg, "is out of range (accepted 0.01..1)") != NULL ||
                  strstr(msg, "(an efficiency must be positive)") != NULL, "%s", msg);
    /* just beyond peak */
    {
        char *text = runs_text("H100-SXM", 0);
        validation_set *v = load_runs(text);
        cost_params want, start;
        calib_options opt;
        calib_fit fit;
        planner_error err = PLANNER_ERROR_INIT;
        truth(&want, GEN_HOPPER);
        want.gen[GEN_HOPPER].gemm_eff = 1.2;      /* the truth itself is absurd */
        synthesize(v, &want, 1.0);
        calib_options_default(&opt);
        opt.prior = 0;   /* plain least squares */
        opt.params = "hopper.gemm_eff";
        start = want;
        start.gen[GEN_HOPPER].gemm_eff = 0.7;
        ck_assert_int_eq(calibrate_fit(&fit, v, NULL, &start, &opt, &err), PLANNER_E_INPUT);
        ck_assert_msg(strstr(err.msg, "calibrate: absurd fit: hopper.gemm_eff = 1.2 is out of "
                                      "range (accepted 0.01..1)") == err.msg, "%s", err.msg);
        validation_free(v);
        pl_free(text);
    }
    /* and a fixed overhead that would have to be negative */
    ck_assert_int_eq(fit_msg(12, "step_overhead_s", 3.0, 0, msg, sizeof msg), PLANNER_E_INPUT);
    ck_assert_msg(strstr(msg, "step_overhead_s = -") != NULL, "%s", msg);
    ck_assert_msg(strstr(msg, "is negative") != NULL, "%s", msg);
}
END_TEST

START_TEST(unknown_parameter_is_a_usage_error)
{
    char msg[ERROR_MSG_MAX];
    ck_assert_int_eq(fit_msg(12, "gemm_ef", 1.0, 0, msg, sizeof msg), PLANNER_E_USAGE);
    ck_assert_msg(strstr(msg, "unknown parameter 'gemm_ef' (did you mean 'gemm_eff'?)") != NULL,
                  "%s", msg);
    ck_assert_int_eq(fit_msg(12, "ampere.gemm_eff", 1.0, 0, msg, sizeof msg), PLANNER_E_INPUT);
    ck_assert_str_eq(msg, "calibrate: ampere.gemm_eff: no run uses a GPU of generation "
                          "ampere, nothing can fit it");
}
END_TEST

START_TEST(parameter_names_round_trip)
{
    static const char *const names[] = {"volta.gemm_eff", "hopper.attn_eff", "ampere.hbm_eff",
                                        "blackwell-ultra.intra_eff", "cdna3.inter_eff",
                                        "hopper.kernel_s", "ampere.step_overhead_s"};
    size_t i;
    cost_params p;
    cost_params_default(&p);
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        calib_param cp;
        char back[CALIB_NAME_MAX];
        ck_assert_int_eq(calib_param_parse(&cp, names[i]), 0);
        calib_param_name(&cp, back, sizeof back);
        ck_assert_str_eq(back, names[i]);
        calib_param_set(&p, &cp, 0.5e-6 * (double)(i + 1));
        ck_assert_double_eq(calib_param_get(&p, &cp), 0.5e-6 * (double)(i + 1));
    }
    ck_assert_double_eq(p.gen[GEN_HOPPER].attn_eff, 1e-6);
    ck_assert_double_eq(p.gen[GEN_AMPERE].step_overhead_s, 3.5e-6);
    {
        calib_param cp;
        ck_assert_int_eq(calib_param_parse(&cp, "hopper.gemm"), -1);
        ck_assert_int_eq(calib_param_parse(&cp, "gemm_eff"), -1);   /* needs a generation */
        ck_assert_int_eq(calib_param_parse(&cp, "pascal.gemm_eff"), -1);
        ck_assert_int_eq(calib_param_parse(&cp, "step_overhead_s"), -1);   /* no global */
    }
}
END_TEST

START_TEST(file_round_trip)
{
    char *text = runs_text("H100-SXM", 0);
    validation_set *v = load_runs(text);
    cost_params want, start, loaded;
    calib_options opt;
    calib_fit fit;
    planner_error err = PLANNER_ERROR_INIT;
    char *path = write_tmp("");
    int j;

    truth(&want, GEN_HOPPER);
    synthesize(v, &want, 1.0);
    cost_params_default(&start);
    calib_options_default(&opt);
    opt.prior = 0;   /* plain least squares */
    ck_assert_msg(calibrate_fit(&fit, v, NULL, &start, &opt, &err) == PLANNER_OK, "%s", err.msg);
    ck_assert_int_eq(calibration_write(path, stdout, &fit, v, "runs \"x\".json", &err), PLANNER_OK);
    cost_params_default(&loaded);
    ck_assert_msg(calibration_load(&loaded, path, &err) == PLANNER_OK, "%s", err.msg);
    /* bit for bit: every fitted value, and the rest left at the defaults */
    ck_assert(memcmp(&loaded, &fit.fitted, sizeof loaded) == 0);
    for (j = 0; j < fit.n_params; j++)
        ck_assert_double_eq(calib_param_get(&loaded, &fit.param[j]), fit.value[j]);
    ck_assert_double_eq(loaded.gen[GEN_AMPERE].gemm_eff, start.gen[GEN_AMPERE].gemm_eff);
    calib_fit_free(&fit);
    validation_free(v);
    unlink(path);
    pl_free(path);
    pl_free(text);
}
END_TEST

/* A calibration file's text -> the formatted error, with FILE replaced by F. */
static planner_status load_bad(const char *text, char *buf, size_t n)
{
    char *path = write_tmp(text), *at;
    planner_error err = PLANNER_ERROR_INIT;
    cost_params p, before;
    planner_status st;
    cost_params_default(&p);
    before = p;
    st = calibration_load(&p, path, &err);
    ck_assert(memcmp(&p, &before, sizeof p) == 0);   /* nothing applied on error */
    error_format(&err, buf, n);
    at = strstr(buf, path);
    if (at != NULL) {
        size_t pl = strlen(path);
        *at = 'F';
        memmove(at + 1, at + pl, strlen(at + pl) + 1);
    }
    unlink(path);
    pl_free(path);
    return st;
}

START_TEST(bad_files_give_positions)
{
    static const struct {
        const char *text, *msg;
    } k[] = {
        {"{\"version\": 1, \"params\": {\"hopper.gemm_eff\": 1.5}}",
         "planner: F:1:27: params.hopper.gemm_eff: 1.5 is out of range (accepted 0.01..1)"},
        {"{\"version\": 1,\n \"parms\": {}}",
         "planner: F:2:2: parms: unknown key (did you mean 'params'?)"},
        {"{\"version\": 1,\n \"params\": {\n  \"hoper.gemm_eff\": 0.7}}",
         "planner: F:3:3: params.hoper.gemm_eff: unknown key (did you mean "
         "'hopper.gemm_eff'?)"},
        {"{\"version\": 2, \"params\": {}}",
         "planner: F:1:2: version: unsupported version (expected 1)"},
        {"{\"params\": {}}", "planner: F:1:1: missing \"version\" (expected 1)"},
        {"{\"version\": 1}",
         "planner: F:1:1: missing \"params\" (an object of fitted constants)"},
        {"{\"version\": 1, \"params\": {\"step_overhead_s\": \"0.1\"}}",
         "planner: F:1:27: params.step_overhead_s: expected a number"},
        {"{\"version\": 1, \"params\": {\"ampere.kernel_s\": -1e-6}}",
         "planner: F:1:27: params.ampere.kernel_s: -1e-06 is out of range (accepted 0..0.0001)"},
        {"{\"version\": 1, \"params\": {},\n \"fit\": {\"runs\": 3, \"rms\": 0.1}}",
         "planner: F:2:21: fit.rms: unknown key"},
        {"{\"version\": 1, \"params\": {},\n \"fit\": {\"residuals\": [{\"id\": \"a\"},"
         " {\"id\": 3}]}}",
         "planner: F:2:38: fit.residuals[1].id: expected a string"},
        {"[1, 2]",
         "planner: F:1:1: a calibration file is a JSON object (from 'planner calibrate')"},
        {"{\"version\": 1,\n \"params\": {\"hopper.gemm_eff\": 0.7,\n}}",
         "planner: F:2:35: a comma before '}': JSON allows no trailing comma"},
        /* jansson points at the duplicate key's closing quote */
        {"{\"version\": 1, \"params\": {}, \"version\": 1}",
         "planner: F:1:38: duplicate object key near '\"version\"'"},
    };
    size_t i;
    for (i = 0; i < sizeof k / sizeof k[0]; i++) {
        char buf[1024];
        ck_assert_int_eq(load_bad(k[i].text, buf, sizeof buf), PLANNER_E_INPUT);
        ck_assert_msg(strcmp(buf, k[i].msg) == 0, "case %zu: got '%s'\nexpected '%s'", i, buf,
                      k[i].msg);
    }
}
END_TEST

/* Files written while step_overhead_s was one global constant name it bare:
 * it applies to every generation; a GEN.NAME overrides it in either order;
 * any bare per-generation field name reads the same way. */
START_TEST(bare_field_applies_to_every_generation)
{
    static const char *const texts[] = {
        "{\"version\": 1, \"params\": {\"step_overhead_s\": 0.3, "
        "\"hopper.step_overhead_s\": 0.05, \"gemm_eff\": 0.6}}",
        "{\"version\": 1, \"params\": {\"hopper.step_overhead_s\": 0.05, "
        "\"gemm_eff\": 0.6, \"step_overhead_s\": 0.3}}"};
    size_t i;
    int g;
    for (i = 0; i < 2; i++) {
        char *path = write_tmp(texts[i]);
        planner_error err = PLANNER_ERROR_INIT;
        cost_params p, d;
        cost_params_default(&p);
        cost_params_default(&d);
        ck_assert_msg(calibration_load(&p, path, &err) == PLANNER_OK, "%s", err.msg);
        for (g = 0; g < GEN_COUNT; g++) {
            ck_assert_double_eq(p.gen[g].step_overhead_s, g == GEN_HOPPER ? 0.05 : 0.3);
            ck_assert_double_eq(p.gen[g].gemm_eff, 0.6);
            ck_assert_double_eq(p.gen[g].attn_eff, d.gen[g].attn_eff);
        }
        unlink(path);
        pl_free(path);
    }
}
END_TEST

START_TEST(missing_file_is_io)
{
    planner_error err = PLANNER_ERROR_INIT;
    cost_params p;
    cost_params_default(&p);
    ck_assert_int_eq(calibration_load(&p, "/nonexistent/calib.json", &err), PLANNER_E_IO);
}
END_TEST

START_TEST(allocation_failures)
{
    /* every allocation of a fit, of writing and of reading the file fails
     * in turn: out of memory (exit 70) or, where the search absorbs it, the
     * same answer -- never a crash or a leak (the sanitizer tier checks) */
    char *text = runs_text("H100-SXM", 0);
    validation_set *v = load_runs(text);
    cost_params want, start, loaded;
    calib_options opt;
    calib_fit fit;
    char *path = write_tmp("");
    bool use[12] = {true, true, true, false, false, false, false, false, false, false, false,
                    false};
    long nth;
    int failures = 0;

    truth(&want, GEN_HOPPER);
    synthesize(v, &want, 1.0);
    cost_params_default(&start);
    calib_options_default(&opt);
    opt.prior = 0;   /* plain least squares */
    opt.params = "gemm_eff,step_overhead_s";
    for (nth = 1; nth < 100000; nth++) {
        planner_error err = PLANNER_ERROR_INIT;
        planner_status st;
        alloc_fail_at(nth);
        st = calibrate_fit(&fit, v, use, &start, &opt, &err);
        if (st == PLANNER_OK)
            st = calibration_write(path, stdout, &fit, v, "runs.json", &err);
        if (st == PLANNER_OK) {
            cost_params_default(&loaded);
            st = calibration_load(&loaded, path, &err);
            if (st == PLANNER_OK)
                ck_assert(memcmp(&loaded, &fit.fitted, sizeof loaded) == 0);
        }
        calib_fit_free(&fit);
        if (!alloc_failed()) {
            alloc_fail_at(0);
            ck_assert_int_eq(st, PLANNER_OK);
            break;
        }
        alloc_fail_at(0);
        if (st != PLANNER_OK) {
            ck_assert_msg(st == PLANNER_E_INTERNAL, "allocation %ld: status %d: %s", nth, st,
                          err.msg);
            failures++;
        }
    }
    ck_assert_int_gt(failures, 10);
    unlink(path);
    pl_free(path);
    validation_free(v);
    pl_free(text);
}
END_TEST

/* The writer alone with jansson's allocations failing in turn as well
 * (alloc_init routes them through pl_malloc): out of memory and the file
 * left as it was, or the whole file, identical to the one written without
 * failures.  (The loader is left out: jansson 2.14's json_loads can drop a
 * byte of a key when an allocation fails and still succeed.) */
START_TEST(write_allocation_failures)
{
    char *text = runs_text("H100-SXM", 0);
    validation_set *v = load_runs(text);
    cost_params want, start;
    calib_options opt;
    calib_fit fit;
    planner_error err = PLANNER_ERROR_INIT;
    char *path = write_tmp("old"), *full_path = write_tmp(""), *full, *got;
    int failures = 0;

    truth(&want, GEN_HOPPER);
    synthesize(v, &want, 1.0);
    cost_params_default(&start);
    calib_options_default(&opt);
    opt.prior = 0;   /* plain least squares */
    ck_assert_msg(calibrate_fit(&fit, v, NULL, &start, &opt, &err) == PLANNER_OK, "%s", err.msg);
    alloc_init();
    ck_assert_int_eq(calibration_write(full_path, stdout, &fit, v, "runs.json", &err), PLANNER_OK);
    full = read_file(full_path);
    ck_assert(strstr(full, "\"params\": {") != NULL && strstr(full, "nan") == NULL);
    for (long nth = 1; nth < 100000; nth++) {
        planner_status st;
        bool failed;
        alloc_fail_at(nth);
        st = calibration_write(path, stdout, &fit, v, "runs.json", &err);
        failed = alloc_failed();
        alloc_fail_at(0);
        got = read_file(path);
        if (st == PLANNER_OK) {
            ck_assert_msg(strcmp(got, full) == 0, "allocation %ld: a different file", nth);
        } else {
            ck_assert_msg(st == PLANNER_E_INTERNAL, "allocation %ld: status %d", nth, st);
            ck_assert_msg(strcmp(got, "old") == 0, "allocation %ld: the file changed", nth);
            failures++;
        }
        free(got);
        if (!failed)
            break;
    }
    ck_assert_int_gt(failures, 10);
    json_set_alloc_funcs(malloc, free);
    free(full);
    calib_fit_free(&fit);
    validation_free(v);
    unlink(path);
    unlink(full_path);
    pl_free(path);
    pl_free(full_path);
    pl_free(text);
}
END_TEST

/* The default list (no --params) on exact synthetic runs: every constant it
 * keeps is recovered to 1e-6 (those it drops hold the truth already), the
 * two that differ from the defaults are kept, and what no run exercises or
 * the runs cannot tell apart is dropped with a note. */
START_TEST(default_list_keeps_what_runs_determine)
{
    char *text = runs_text("H100-SXM", 0);
    validation_set *v = load_runs(text);
    cost_params want, start;
    calib_options opt;
    calib_fit fit;
    planner_error err = PLANNER_ERROR_INIT;
    int j, kept = 0;

    cost_params_default(&want);
    want.gen[GEN_HOPPER].gemm_eff = 0.62;
    want.gen[GEN_HOPPER].step_overhead_s = 0.21;
    synthesize(v, &want, 1.0);
    cost_params_default(&start);
    calib_options_default(&opt);
    opt.prior = 0;   /* plain least squares */
    ck_assert_msg(calibrate_fit(&fit, v, NULL, &start, &opt, &err) == PLANNER_OK, "%s", err.msg);
    ck_assert_int_eq(fit.rank, fit.n_params);
    for (j = 0; j < fit.n_params; j++) {
        char name[CALIB_NAME_MAX];
        calib_param_name(&fit.param[j], name, sizeof name);
        kept += strcmp(name, "hopper.gemm_eff") == 0 || strcmp(name, "hopper.step_overhead_s") == 0;
    }
    ck_assert_int_eq(kept, 2);
    check_recovered(&fit, &want);
    ck_assert_double_le(fit.rms_rel, 1e-9);
    /* bf16 runs: FP8 GEMMs never run */
    ck_assert_msg(strstr(fit.notes, "dropped hopper.fp8_gemm_eff: no run exercises it\n") != NULL,
                  "%s", fit.notes);
    calib_fit_free(&fit);
    validation_free(v);
    pl_free(text);
}
END_TEST

/* Three runs cannot pin down a generation's eight constants: the default
 * list keeps at most three (the rank the runs have), each dropped one with
 * a note naming its undetermined direction; named, the same list is
 * refused. */
START_TEST(default_list_fits_fewer_runs_than_constants)
{
    char *text = runs_text("H100-SXM", 0);
    validation_set *v = load_runs(text);
    cost_params want, start;
    calib_options opt;
    calib_fit fit;
    planner_error err = PLANNER_ERROR_INIT;
    bool use[12] = {false, false, true, true, false, true, false, false, false, false, false,
                    false};

    cost_params_default(&want);
    want.gen[GEN_HOPPER].gemm_eff = 0.62;
    synthesize(v, &want, 1.0);
    cost_params_default(&start);
    calib_options_default(&opt);
    opt.prior = 0;   /* plain least squares */
    ck_assert_msg(calibrate_fit(&fit, v, use, &start, &opt, &err) == PLANNER_OK, "%s", err.msg);
    ck_assert_int_eq(fit.n_runs, 3);
    ck_assert_int_le(fit.n_params, 3);
    ck_assert_int_ge(fit.n_params, 1);
    ck_assert_int_eq(fit.rank, fit.n_params);
    ck_assert_msg(strstr(fit.notes, "the 3 hopper runs do not determine it") != NULL, "%s",
                  fit.notes);
    check_recovered(&fit, &want);
    calib_fit_free(&fit);
    opt.params = "gemm_eff,attn_eff,hbm_eff,intra_eff,inter_eff,step_overhead_s";
    ck_assert_int_eq(calibrate_fit(&fit, v, use, &start, &opt, &err), PLANNER_E_INPUT);
    ck_assert_msg(strstr(err.msg, "calibrate: 3 runs for ") == err.msg ||
                  strstr(err.msg, "calibrate: rank deficient") == err.msg, "%s", err.msg);
    validation_free(v);
    pl_free(text);
}
END_TEST

START_TEST(default_list_on_the_corpus)
{
    /* the public corpus, when present: without --params the fit is well
     * posed (it was refused as rank deficient while every constant of
     * every generation was fitted: 4 Volta runs, 8 Volta constants); Volta
     * keeps at most its 4 runs' worth and every kept value is plausible */
    const char *shared = tu_shared_dir();
    char path[1024];
    validation_set *v = NULL;
    planner_error err = PLANNER_ERROR_INIT;
    cost_params start;
    calib_options opt;
    calib_fit fit;
    int j, volta = 0;
    if (shared == NULL) {
        tu_skip("test_calibrate default_list_on_the_corpus", "../shared absent");
        return;
    }
    snprintf(path, sizeof path, "%s/validation/published-runs.json", shared);
    ck_assert_int_eq(validation_load(&v, path, &err), PLANNER_OK);
    cost_params_default(&start);
    calib_options_default(&opt);
    opt.prior = 0;   /* plain least squares */
    ck_assert_msg(calibrate_fit(&fit, v, NULL, &start, &opt, &err) == PLANNER_OK, "%s", err.msg);
    ck_assert_int_eq(fit.rank, fit.n_params);
    ck_assert_int_ge(fit.n_params, 4);
    ck_assert_double_lt(fit.condition, 1e3);
    for (j = 0; j < fit.n_params; j++)
        volta += fit.param[j].gen == GEN_VOLTA;
    ck_assert_int_le(volta, 4);
    /* the software stacks' constants are parameters too (STACK.NAME):
     * megatron-lm-2020 has no host time of its own (its runs pay their
     * generation's, stack.c), so its step_overhead_s is exercised by no
     * run */
    ck_assert_msg(strstr(fit.notes, "dropped megatron-lm-2020.step_overhead_s: no run exercises "
                                    "it") != NULL,
                  "%s", fit.notes);
    ck_assert_msg(strstr(fit.notes, "dropped volta.") != NULL, "%s", fit.notes);
    calib_fit_free(&fit);
    validation_free(v);
}
END_TEST

START_TEST(crossval_on_the_corpus)
{
    /* the public corpus, when present: a fit on the dense 16-bit runs is
     * well posed with per-generation GEMM efficiency and the host time of
     * Hopper (its runs are on megatron-core) and of Ampere (the 2020 stack's
     * A100 runs pay their generation's; Volta's 4 runs could not separate
     * its GEMM efficiency from its overhead) */
    const char *shared = tu_shared_dir();
    char path[1024];
    validation_set *v = NULL;
    planner_error err = PLANNER_ERROR_INIT;
    cost_params start;
    calib_options opt;
    calib_fit fit;
    if (shared == NULL) {
        tu_skip("test_calibrate crossval_on_the_corpus", "../shared absent");
        return;
    }
    snprintf(path, sizeof path, "%s/validation/published-runs.json", shared);
    ck_assert_int_eq(validation_load(&v, path, &err), PLANNER_OK);
    cost_params_default(&start);
    calib_options_default(&opt);
    opt.prior = 0;   /* plain least squares */
    opt.params = "gemm_eff,ampere.step_overhead_s,hopper.step_overhead_s";
    opt.subset = SUBSET_DENSE16;
    ck_assert_msg(calibrate_fit(&fit, v, NULL, &start, &opt, &err) == PLANNER_OK, "%s", err.msg);
    ck_assert_int_eq(fit.n_runs + fit.skipped_infeasible, 53);
    ck_assert_int_ge(fit.n_runs, 45);
    ck_assert_int_eq(fit.n_params, 5);   /* volta, ampere, hopper; 2 overheads */
    ck_assert_double_lt(fit.condition, 100);
    calib_fit_free(&fit);
    validation_free(v);
}
END_TEST


/* The synthetic runs (unpublished micro-batch or not), measured as the
 * model predicts them with Hopper's GEMM efficiency at `gemm_eff`; the
 * defaults in *start. */
static validation_set *hopper_runs(int unpublished_mbs, double gemm_eff, cost_params *start)
{
    char *text = runs_text("H100-SXM", unpublished_mbs);
    validation_set *v = load_runs(text);
    cost_params want;
    pl_free(text);
    cost_params_default(start);
    want = *start;
    want.gen[GEN_HOPPER].gemm_eff = gemm_eff;
    synthesize(v, &want, 1.0);
    return v;
}

/* Runs 0, 4, 8 of the synthetic set (one per table size class; use[12]),
 * measured as the model predicts them with Hopper's GEMM efficiency at 0.55
 * (default 0.684), and the default options with the prior at 0.3. */
static validation_set *three_hopper_runs(cost_params *start, bool *use, calib_options *opt)
{
    validation_set *v = hopper_runs(0, 0.55, start);
    memset(use, 0, 12 * sizeof *use);
    use[0] = use[4] = use[8] = true;
    calib_options_default(opt);
    opt->prior = 0.3;
    return v;
}

/* The prior's fit of three_hopper_runs moves only the constant they
 * exercise most, toward the truth but not all the way. */
START_TEST(prior_moves_the_most_exercised_constant)
{
    cost_params start;
    calib_options opt;
    bool use[12];
    validation_set *v = three_hopper_runs(&start, use, &opt);
    calib_fit fit;
    planner_error err = PLANNER_ERROR_INIT;
    double def, got;
    int j;
    ck_assert_msg(calibrate_fit(&fit, v, use, &start, &opt, &err) == PLANNER_OK, "%s", err.msg);
    ck_assert_int_eq(fit.n_runs, 3);
    ck_assert_int_eq(fit.n_params, 1);          /* one per 3 runs */
    ck_assert_int_eq(fit.param[0].gen, GEN_HOPPER);
    ck_assert_str_eq(k_name(&fit.param[0]), "hopper.gemm_eff");
    ck_assert_msg(strstr(fit.notes, "kept hopper.attn_eff at its default: the 3 hopper runs "
                                    "exercise it less than the 1 constant fitted") != NULL,
                  "%s", fit.notes);
    def = start.gen[GEN_HOPPER].gemm_eff;
    got = fit.value[0];
    /* shrunk toward the default, yet most of the way to the truth */
    ck_assert_msg(got < def && got > 0.55, "gemm_eff %g", got);
    ck_assert_msg(got - 0.55 < 0.25 * (def - 0.55), "gemm_eff %g", got);
    for (j = 0; j < GEN_COUNT; j++)
        if (j != GEN_HOPPER)
            ck_assert_double_eq(fit.fitted.gen[j].gemm_eff, start.gen[j].gemm_eff);
    ck_assert_double_eq(fit.fitted.gen[GEN_HOPPER].attn_eff, start.gen[GEN_HOPPER].attn_eff);
    calib_fit_free(&fit);
    /* a stronger prior keeps it nearer the default */
    opt.prior = 3.0;
    ck_assert_msg(calibrate_fit(&fit, v, use, &start, &opt, &err) == PLANNER_OK, "%s", err.msg);
    ck_assert_msg(fit.value[0] > got && fit.value[0] < def, "gemm_eff %g", fit.value[0]);
    calib_fit_free(&fit);
    validation_free(v);
}
END_TEST

/* The fit's objective (calibrate.c fit_objective): the runs' squared
 * relative errors plus w^2 sum_j ln(x_j / x0_j)^2 (x = 1/eff: the square
 * of ln(v / v0) alike; every fitted value here is positive). */
static double fit_objective_of(const calib_fit *f, double w)
{
    double sum = 0;
    int i, j;
    for (i = 0; i < f->n_runs; i++)
        sum += f->run[i].rel_error * f->run[i].rel_error;
    for (j = 0; j < f->n_params; j++) {
        double d = log(f->value[j] / f->start[j]);
        ck_assert(f->value[j] > 0 && f->start[j] > 0);
        sum += w * w * d * d;
    }
    return sum;
}

/* The fit never raises its objective (the line search of fit_iteration):
 * stopped after 1, 2, ... iterations, its objective never goes up, and a
 * single iteration already lowers it (0.037 -> 0.0039).  The three runs of
 * three_hopper_runs with the default list: the first iteration drops the
 * constants the runs exercise least.  Its full step, solved with the dropped
 * constants' share of the step times left out of the linearization, did
 * not lower the objective: after one iteration the fit kept the start. */
START_TEST(fit_never_raises_its_objective)
{
    double start_obj = 0, last = INFINITY;
    int k, i;
    plan *pl = pl_malloc(sizeof *pl);
    calib_fit fit;
    planner_error err = PLANNER_ERROR_INIT;
    cost_params start;
    bool use[12];
    calib_options opt;
    validation_set *v = three_hopper_runs(&start, use, &opt);
    ck_assert_ptr_nonnull(pl);
    for (i = 0; i < v->n; i++) {
        /* the start's errors of step time (tokens/s measured at 0.55 over
         * predicted at the start's 0.684) */
        double e;
        if (!use[i])
            continue;
        ck_assert_int_eq(validation_predict(pl, &v->run[i], &start, &err), PLANNER_OK);
        e = v->run[i].measured_tokens_per_s_per_gpu / pl->e.tokens_per_s_per_gpu - 1.0;
        start_obj += e * e;
    }
    pl_free(pl);
    for (k = 1; k <= 6; k++) {
        double obj;
        opt.max_iter = k;
        ck_assert_msg(calibrate_fit(&fit, v, use, &start, &opt, &err) == PLANNER_OK, "%s",
                      err.msg);
        ck_assert_int_eq(fit.n_params, 1);
        ck_assert_str_eq(k_name(&fit.param[0]), "hopper.gemm_eff");
        obj = fit_objective_of(&fit, opt.prior);
        ck_assert_msg(obj <= last, "after %d iterations: objective %.9g, after %d: %.9g", k, obj,
                      k - 1, last);
        ck_assert_msg(obj < 0.5 * start_obj, "after %d iterations: objective %.9g, start %.9g",
                      k, obj, start_obj);
        ck_assert_msg(fit.value[0] < start.gen[GEN_HOPPER].gemm_eff && fit.value[0] > 0.55,
                      "after %d iterations: gemm_eff %g", k, fit.value[0]);
        last = obj;
        calib_fit_free(&fit);
    }
    validation_free(v);
}
END_TEST

/* With a prior, a named list longer than the runs is well posed (the
 * prior fixes the directions the runs leave open): not refused. */
START_TEST(prior_fits_fewer_runs_than_parameters)
{
    cost_params start;
    validation_set *v = hopper_runs(0, 0.55, &start);
    calib_options opt;
    calib_fit fit;
    planner_error err = PLANNER_ERROR_INIT;
    bool use[12] = {false};
    use[0] = use[1] = true;
    calib_options_default(&opt);
    opt.params = "gemm_eff,attn_eff,hbm_eff";
    opt.prior = 0.3;
    ck_assert_msg(calibrate_fit(&fit, v, use, &start, &opt, &err) == PLANNER_OK, "%s", err.msg);
    ck_assert_int_eq(fit.n_params, 3);
    ck_assert_int_eq(fit.rank, 3);
    /* slower runs: the GEMM efficiency comes down */
    ck_assert_double_lt(fit.value[0], start.gen[GEN_HOPPER].gemm_eff);
    calib_fit_free(&fit);
    validation_free(v);
}
END_TEST

/* The robust loss (calibrate.c robust_rho; Huber's): three runs of one
 * configuration, two measured as the model predicts them at the defaults
 * and one 1.5x slower, prior 0, hopper.gemm_eff fitted.  All three have
 * the same predicted step time T, so with u = T / t - 1 the error of the
 * two is u and the third's (1 + u) / 1.5 - 1.  Least squares: 2 (2 u) +
 * (2 / 1.5) ((1 + u) / 1.5 - 1) = 0, u = 1/11.  Huber at k = 1.345 x 0.09
 * = 0.12105 (the third beyond -k, its slope -2 k): 2 (2 u) - (2 k) / 1.5 =
 * 0, u = k / 3 = 0.04035 (the third at -0.3064, beyond -k indeed), and its
 * weight k / 0.3064 = 0.395 in the fit's note. */
START_TEST(robust_loss_bounds_one_far_run)
{
    char text[8192], run[3][1400];
    validation_set *v;
    cost_params start;
    calib_options opt;
    calib_fit fit;
    planner_error err = PLANNER_ERROR_INIT;
    const double k = CALIB_HUBER_K_DEFAULT * CALIB_SCATTER_DEFAULT;
    int i;
    for (i = 0; i < 3; i++) {
        char id[16];
        snprintf(id, sizeof id, "same_%d", i);
        run_json(run[i], sizeof run[i], id, "one table", "H100-SXM", 64, 32, 4096, 32, 11008,
                 4096, "swiglu", 4, 2, 8, 1, 512);
    }
    snprintf(text, sizeof text, "{\"runs\": [%s,\n%s,\n%s]}\n", run[0], run[1], run[2]);
    v = load_runs(text);
    cost_params_default(&start);
    synthesize(v, &start, 1.0);
    v->run[2].measured_tokens_per_s_per_gpu /= 1.5;
    calib_options_default(&opt);
    opt.params = "hopper.gemm_eff";
    opt.prior = 0;
    ck_assert_double_eq(opt.huber_k, 1.345);
    ck_assert_msg(calibrate_fit(&fit, v, NULL, &start, &opt, &err) == PLANNER_OK, "%s", err.msg);
    ck_assert_int_eq(fit.n_runs, 3);
    ck_assert_double_eq_tol(fit.run[0].rel_error, k / 3, 1e-6);
    ck_assert_double_eq_tol(fit.run[1].rel_error, k / 3, 1e-6);
    ck_assert_double_eq_tol(fit.run[2].rel_error, (1 + k / 3) / 1.5 - 1, 1e-6);
    /* slower measured: the efficiency comes down */
    ck_assert_double_lt(fit.value[0], start.gen[GEN_HOPPER].gemm_eff);
    ck_assert_msg(strstr(fit.notes, "same_2: its step-time error -30.6% is beyond the robust "
                                    "loss's 12.1% (3 runs): it counts with weight 0.40") != NULL,
                  "%s", fit.notes);
    calib_fit_free(&fit);
    /* least squares: the far run pulls the others 1/11 off */
    opt.huber_k = 0;
    ck_assert_msg(calibrate_fit(&fit, v, NULL, &start, &opt, &err) == PLANNER_OK, "%s", err.msg);
    ck_assert_double_eq_tol(fit.run[0].rel_error, 1.0 / 11, 1e-6);
    ck_assert_double_eq_tol(fit.run[2].rel_error, (1 + 1.0 / 11) / 1.5 - 1, 1e-6);
    ck_assert_ptr_null(strstr(fit.notes, "robust"));
    calib_fit_free(&fit);
    validation_free(v);
}
END_TEST

/* Leave one source out makes one fold per source; --calibrate-on picks the
 * middles of N equal slices of a source (8 runs, N = 3: positions 1, 4, 6)
 * and predicts its other runs better than the defaults when they are off
 * by one common factor. */
START_TEST(loso_and_calibrate_on_three)
{
    cost_params start;
    validation_set *v = hopper_runs(1, 0.55, &start);
    calib_options opt;
    crossval cv;
    crossval_fold_result r;
    planner_error err = PLANNER_ERROR_INIT;
    int i;
    for (i = 0; i < v->n; i++)
        snprintf(v->run[i].source, sizeof v->run[i].source, "%s", i < 8 ? "A" : "B");
    calib_options_default(&opt);
    opt.prior = 0.3;
    ck_assert_msg(crossval_prepare(&cv, v, &opt, CROSSVAL_LOSO, &err) == PLANNER_OK, "%s",
                  err.msg);
    ck_assert_int_eq(cv.n_src, 2);
    ck_assert_int_eq(cv.folds, 2);
    ck_assert_int_eq(cv.fold_srcs[0], 1);
    ck_assert_int_eq(cv.fold_srcs[1], 1);
    ck_assert_int_eq(cv.fold_runs[cv.src_fold[0]], 8);
    ck_assert_msg(crossval_source(&r, &cv, v, &opt, NULL, 0, 3, &err) == PLANNER_OK, "%s",
                  err.msg);
    for (i = 0; i < 8; i++)
        ck_assert_int_eq(cv.use[i], i == 1 || i == 4 || i == 6);
    ck_assert_int_eq(r.acc.n, 5);
    ck_assert(r.fitted);
    ck_assert_double_lt(r.acc.sum_cal, 0.5 * r.acc.sum_def);
    ck_assert_int_eq(cv.src_sources, 1);
    ck_assert_int_eq(cv.src_better, 1);
    calib_fit_free(&r.fit);
    /* source B has 4 runs: too few to calibrate on 3 and test the rest */
    ck_assert_int_eq(crossval_source(&r, &cv, v, &opt, NULL, 1, 3, &err), PLANNER_E_USAGE);
    crossval_free(&cv);
    validation_free(v);
}
END_TEST


/* A fold of crossval never sees its left-out source through its start:
 * it starts from the unfitted constants (cost_params_unfitted: one value
 * per constant for every generation and stack, inside the accepted
 * ranges), its prior pulls toward them, a refused fit falls back to them,
 * and the left-out runs' measurements do not move its fit. */
START_TEST(loso_folds_start_unfitted)
{
    cost_params def, unf;
    validation_set *v = hopper_runs(0, 0.55, &def);
    calib_options opt;
    crossval cv;
    crossval_fold_result r;
    calib_name_list names;
    planner_error err = PLANNER_ERROR_INIT;
    plan *pl = pl_malloc(sizeof *pl);
    double value[CALIB_MAX_PARAMS], sum = 0;
    size_t k;
    int i, j, f, n;
    ck_assert_ptr_nonnull(pl);
    cost_params_unfitted(&unf);
    for (j = 1; j < GEN_COUNT; j++)
        ck_assert_mem_eq(&unf.gen[j], &unf.gen[0], sizeof unf.gen[0]);
    for (j = 1; j < STACK_COUNT; j++)
        ck_assert_mem_eq(&unf.stack[j], &unf.stack[0], sizeof unf.stack[0]);
    calib_param_names(&names);
    for (k = 0; k < names.n; k++) {
        calib_param p;
        if (calib_param_parse(&p, names.ptr[k]) != 0)
            continue;   /* a bare name */
        ck_assert_msg(calib_param_check(&p, calib_param_get(&unf, &p), NULL) == PLANNER_OK,
                      "%s", names.ptr[k]);
    }
    ck_assert_double_eq(unf.reserve_bytes, def.reserve_bytes);
    for (i = 0; i < v->n; i++)
        snprintf(v->run[i].source, sizeof v->run[i].source, "%s", i < 8 ? "A" : "B");
    calib_options_default(&opt);
    ck_assert_msg(crossval_prepare(&cv, v, &opt, CROSSVAL_LOSO, &err) == PLANNER_OK, "%s",
                  err.msg);
    ck_assert_mem_eq(&cv.start, &unf, sizeof unf);
    f = cv.src_fold[cv.src[8]];     /* source B left out, trained on A */
    ck_assert_msg(crossval_fold(&r, &cv, v, &opt, f, &err) == PLANNER_OK, "%s", err.msg);
    ck_assert(r.fitted);
    ck_assert_int_eq(r.ntrain, 8);
    ck_assert_int_ge(r.fit.n_params, 1);
    n = r.fit.n_params;
    for (j = 0; j < n; j++) {
        ck_assert_double_eq(r.fit.start[j], calib_param_get(&unf, &r.fit.param[j]));
        value[j] = r.fit.value[j];
    }
    ck_assert_double_eq(r.fit.fitted.gen[GEN_HOPPER].kernel_s, unf.gen[GEN_HOPPER].kernel_s);
    calib_fit_free(&r.fit);
    /* B measured 30% faster: the fold trained on A fits the same constants */
    for (i = 8; i < v->n; i++)
        v->run[i].measured_tokens_per_s_per_gpu *= 1.3;
    ck_assert_msg(crossval_fold(&r, &cv, v, &opt, f, &err) == PLANNER_OK, "%s", err.msg);
    ck_assert_int_eq(r.fit.n_params, n);
    for (j = 0; j < n; j++)
        ck_assert_double_eq(r.fit.value[j], value[j]);
    calib_fit_free(&r.fit);
    /* a refused fit (no Volta run) predicts B with the unfitted constants */
    opt.params = "volta.gemm_eff";
    ck_assert_msg(crossval_fold(&r, &cv, v, &opt, f, &err) == PLANNER_OK, "%s", err.msg);
    ck_assert(!r.fitted);
    for (i = 8; i < v->n; i++) {
        ck_assert_int_eq(validation_predict(pl, &v->run[i], &unf, &err), PLANNER_OK);
        sum += fabs(pl->e.tokens_per_s_per_gpu / v->run[i].measured_tokens_per_s_per_gpu - 1);
    }
    ck_assert_int_eq(r.acc.n, 4);
    ck_assert_double_eq_tol(r.acc.sum_cal, sum, 1e-12);
    ck_assert_double_ne(r.acc.sum_cal, r.acc.sum_def);
    crossval_free(&cv);
    pl_free(pl);
    validation_free(v);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("calibrate");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, recovers_every_hopper_constant);
    tcase_add_test(tc, recovers_every_ampere_constant);
    tcase_add_test(tc, recovers_with_searched_knobs);
    tcase_add_test(tc, recovers_two_generations);
    tcase_add_test(tc, refuses_fewer_runs_than_parameters);
    tcase_add_test(tc, refuses_rank_deficiency);
    tcase_add_test(tc, refuses_unexercised_named_parameter);
    tcase_add_test(tc, drops_unexercised_default_parameter);
    tcase_add_test(tc, refuses_absurd_values);
    tcase_add_test(tc, unknown_parameter_is_a_usage_error);
    tcase_add_test(tc, parameter_names_round_trip);
    tcase_add_test(tc, file_round_trip);
    tcase_add_test(tc, bad_files_give_positions);
    tcase_add_test(tc, bare_field_applies_to_every_generation);
    tcase_add_test(tc, missing_file_is_io);
    tcase_add_test(tc, allocation_failures);
    tcase_add_test(tc, write_allocation_failures);
    tcase_add_test(tc, crossval_on_the_corpus);
    tcase_add_test(tc, loso_folds_start_unfitted);
    tcase_add_test(tc, default_list_keeps_what_runs_determine);
    tcase_add_test(tc, default_list_fits_fewer_runs_than_constants);
    tcase_add_test(tc, default_list_on_the_corpus);
    tcase_add_test(tc, prior_moves_the_most_exercised_constant);
    tcase_add_test(tc, prior_fits_fewer_runs_than_parameters);
    tcase_add_test(tc, fit_never_raises_its_objective);
    tcase_add_test(tc, robust_loss_bounds_one_far_run);
    tcase_add_test(tc, loso_and_calibrate_on_three);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
