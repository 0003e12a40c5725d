/* cmd_calibrate.c: `planner calibrate` and `planner crossval`: their
 * command lines and their output on stdout.
 *
 * The fit is fit/calibrate.c's, the calibration file fit/calibration.c's,
 * the folds fit/crossval.c's, the tables out/calibrate_report.c's.  Both
 * commands run OpenBLAS on one thread, so the fits are deterministic. */
#include <cblas.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "base/fileio.h"
#include "fit/calibration.h"
#include "fit/crossval.h"
#include "out/calibrate_report.h"
#include "tool/cli.h"
#include "tool/commands.h"
#include "tool/progress.h"
#include "tool/shipped.h"

static int parse_subset(const char *s, int *out)
{
    if (strcmp(s, "all") == 0)
        *out = CALIB_SUBSET_ALL;
    else if (strcmp(s, "dense") == 0)
        *out = CALIB_SUBSET_DENSE;
    else if (strcmp(s, "dense16") == 0)
        *out = SUBSET_DENSE16;
    else if (strcmp(s, "fp8") == 0)
        *out = SUBSET_FP8;
    else if (strcmp(s, "moe") == 0)
        *out = SUBSET_MOE;
    else
        return -1;
    return 0;
}

static void calibrate_usage(FILE *out)
{
    char list[512], gens[256];
    int g;
    size_t used;
    calib_field_list(list, sizeof list);
    fprintf(out,
        "Usage: planner calibrate --runs FILE [-o CALIB.json] [--params LIST]\n"
        "                         [--subset dense|all|dense16|fp8|moe] [--max-iter N]\n"
        "                         [--prior W] [--models DIR|none]\n"
        "Fit the cost model's constants to measured runs (the schema of\n"
        "published-runs.json) by relatively weighted linear least squares (LAPACKE\n"
        "dgelsd), re-choosing each run's unpublished knobs until the fit is stable.\n"
        "Prints the fitted values, the residual of every run, the RMS relative error\n"
        "and the condition number; writes the fit with -o (use it with --calibration).\n"
        "\n"
        "      --runs FILE      measured runs\n"
        "  -o, --output FILE    write the calibration file (atomically)\n"
        "      --params LIST    parameters to fit, comma-separated (names below);\n"
        "                       default: per GPU generation in the runs, the\n"
        "                       constants its runs determine; dropped, with a note:\n"
        "                       those no run exercises, near-collinear ones (SVD of\n"
        "                       the generation's block), fits outside the plausible\n"
        "                       range\n"
        "      --subset NAME    runs to fit: dense (dense16 + fp8, the default), all\n"
        "                       (also MoE), dense16, fp8 or moe\n"
        "      --max-iter N     linearized fixed-point iterations (default 20)\n"
        "      --prior W        weight of a prior toward the defaults (ridge on the\n"
        "                       log-parameters; default 1, 0: none); with it the\n"
        "                       default list fits per generation the constants its\n"
        "                       runs exercise most, one per 3 runs\n"
        "      --models DIR|none  model definitions a run's model.name selects\n"
        "                       (default: the shipped configs; none: the row's\n"
        "                       dimensions only)\n"
        "  -h, --help           show this help and exit\n"
        "\nParameters:\n");
    cli_print_wrapped(out, list, 2, 80);
    for (g = 0, used = 0; g < GEN_COUNT && used < sizeof gens; g++)
        used += (size_t)snprintf(gens + used, sizeof gens - used, "%s%s", g ? " " : "",
                                 gpu_generation_name((gpu_generation)g));
    fprintf(out, "Generations:\n");
    cli_print_wrapped(out, gens, 2, 80);
    fprintf(out, "\n%s", cli_exit_codes_help);
}

/* The command line of calibrate and crossval.  Each command's longopts
 * name the options it takes (CALIB_COMMON_LONGOPTS, the ones both take,
 * then its own); parse_calib_args parses them all, the cases of the other
 * command's never come up. */
typedef struct calib_args {
    const char *cmd;        /* "calibrate" or "crossval": usage errors name it */
    const char *runs;       /* --runs FILE (required) */
    const char *output;     /* calibrate: -o, --output FILE; NULL if absent */
    int folds;              /* crossval: --folds K (default 5) */
    int calibrate_on;       /* crossval: --calibrate-on N (0: none) */
    bool folds_given;       /* crossval: --folds given */
    const char *models;     /* --models DIR|none; NULL if absent */
    calib_options opt;      /* --params, --subset, --max-iter; runs_file */
} calib_args;

/* The options calibrate and crossval share: --runs, --params, --subset,
 * --max-iter, --prior, --models, --help. */
#define CALIB_COMMON_LONGOPTS                                                  \
    {"runs", required_argument, NULL, 'r'},                                    \
    {"params", required_argument, NULL, 'p'},                                  \
    {"subset", required_argument, NULL, 's'},                                  \
    {"max-iter", required_argument, NULL, 'i'},                                \
    {"prior", required_argument, NULL, 'w'},                                   \
    {"models", required_argument, NULL, 'M'},                                  \
    {"help", no_argument, NULL, 'h'}

static void calib_args_default(calib_args *a, const char *cmd)
{
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    a->folds = 5;
    calib_options_default(&a->opt);
}

/* Parses argv into *a.  Returns -1 to go on, or the exit status to return
 * at once: PLANNER_OK after --help (usage printed), or a usage error
 * (cli_usage_error has printed it). */
static int parse_calib_args(calib_args *a, int argc, char **argv, const char *optstring,
                            const struct option *longopts, void (*usage)(FILE *))
{
    int ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
        switch (ch) {
        case 'r': a->runs = optarg; break;
        case 'o': a->output = optarg; break;
        case 'k':
            a->folds_given = true;
            if (strcmp(optarg, "loso") == 0)
                a->folds = CROSSVAL_LOSO;
            else if (cli_parse_int(optarg, 2, 100, &a->folds) != 0)
                return cli_usage_error(a->cmd, "--folds: expected 2..100 or loso, got '%s'",
                                       optarg);
            break;
        case 'c':
            if (cli_parse_int(optarg, 1, 50, &a->calibrate_on) != 0)
                return cli_usage_error(a->cmd, "--calibrate-on: expected 1..50, got '%s'",
                                       optarg);
            break;
        case 'w':
            if (cli_parse_double(optarg, 0, 100, &a->opt.prior) != 0)
                return cli_usage_error(a->cmd, "--prior: expected 0..100, got '%s'", optarg);
            break;
        case 'p': a->opt.params = optarg; break;
        case 'M':
            if (cli_check_models(optarg) != PLANNER_OK)
                return PLANNER_E_IO;
            a->models = optarg;
            break;
        case 's':
            if (parse_subset(optarg, &a->opt.subset) != 0)
                return cli_usage_error(a->cmd, "--subset: expected dense, all, dense16, fp8 "
                                               "or moe, got '%s'", optarg);
            break;
        case 'i':
            if (cli_parse_int(optarg, 1, 1000, &a->opt.max_iter) != 0)
                return cli_usage_error(a->cmd, "--max-iter: expected 1..1000, got '%s'",
                                       optarg);
            break;
        case 'h': usage(stdout); return PLANNER_OK;
        case ':':
            return cli_usage_error(a->cmd, "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error(a->cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc)
        return cli_usage_error(a->cmd, "unexpected argument '%s'", argv[optind]);
    if (a->runs == NULL)
        return cli_usage_error(a->cmd, "--runs FILE is required");
    if (a->calibrate_on && a->folds_given && a->folds != CROSSVAL_LOSO)
        return cli_usage_error(a->cmd, "--calibrate-on goes with --folds loso (each source "
                               "calibrated from the fit on the others) or alone (from the "
                               "defaults), not with --folds %d", a->folds);
    a->opt.runs_file = a->runs;
    return -1;
}

/* The runs of --runs, with the model library of --models. */
static planner_status load_runs(validation_set **set, const calib_args *a, planner_error *err)
{
    char lib[1200];
    return validation_load_library(set, a->runs, shipped_model_library(a->models, lib, sizeof lib),
                                   err);
}

int cmd_calibrate(int argc, char **argv)
{
    static const struct option longopts[] = {
        CALIB_COMMON_LONGOPTS,
        {"output", required_argument, NULL, 'o'},
        {NULL, 0, NULL, 0}};
    calib_args a;
    planner_error err = PLANNER_ERROR_INIT;
    planner_status st = PLANNER_OK;
    validation_set *set = NULL;
    cost_params start;
    calib_fit fit;
    int ch;

    memset(&fit, 0, sizeof fit);
    calib_args_default(&a, "calibrate");
    if ((ch = parse_calib_args(&a, argc, argv, ":o:h", longopts, calibrate_usage)) >= 0)
        return ch;
    openblas_set_num_threads(1);

    if (a.output != NULL) {   /* -o never replaces the runs file: refused before the fit */
        output_set os;
        int index;
        output_set_init(&os, stdout);
        if ((st = output_set_input(&os, a.runs, "--runs", &err)) == PLANNER_OK)
            st = output_set_add(&os, a.output, "-o", OUTPUT_STREAM, &index, &err);
        output_set_free(&os);
        if (st != PLANNER_OK)
            goto cleanup;
    }
    cost_params_default(&start);
    if ((st = load_runs(&set, &a, &err)) != PLANNER_OK)
        goto cleanup;
    {
        /* a fit on the whole corpus takes tens of seconds: the runs
         * re-predicted so far, on a terminal, after ~1 s */
        progress pr;
        progress_start(&pr, "planner: calibrate, runs predicted", progress_stderr_is_tty());
        a.opt.progress = progress_hook_of(&pr);
        st = calibrate_fit(&fit, set, NULL, &start, &a.opt, &err);
        progress_finish(&pr);
        a.opt.progress = (progress_hook)PROGRESS_HOOK_NONE;
    }
    /* one diagnostic per line, as everywhere: "planner: FILE: note: ..." */
    for (const char *line = fit.notes; *line != '\0';) {
        const char *nl = strchr(line, '\n');
        int len = nl != NULL ? (int)(nl - line) : (int)strlen(line);
        fprintf(stderr, "planner: %s: note: %.*s\n", a.runs, len, line);
        line += len + (nl != NULL);
    }
    if (st != PLANNER_OK) {
        if (st == PLANNER_E_USAGE) {
            cli_usage_error("calibrate", "%s", err.msg);
            error_clear(&err);
        }
        goto cleanup;
    }
    calibrate_report(stdout, &fit, set);
    if (a.output != NULL) {
        if ((st = calibration_write(a.output, stdout, &fit, set, a.runs, &err)) != PLANNER_OK)
            goto cleanup;
        if (strcmp(a.output, "-") != 0)
            printf("wrote %s\n", a.output);
    }
    if (fflush(stdout) != 0 || ferror(stdout))
        st = error_set(&err, PLANNER_E_IO, NULL, 0, 0, NULL, "cannot write to stdout");
cleanup:
    if (st != PLANNER_OK && err.status != PLANNER_OK)
        error_print(&err, stderr);
    calib_fit_free(&fit);
    validation_free(set);
    return st;
}


static void crossval_usage(FILE *out)
{
    fprintf(out,
        "Usage: planner crossval --runs FILE [--folds K|loso] [--calibrate-on N]\n"
        "                        [--params LIST] [--subset dense|all|dense16|fp8|moe]\n"
        "                        [--max-iter N] [--prior W] [--models DIR|none]\n"
        "K-fold cross-validation of 'planner calibrate': the runs are folded by their\n"
        "\"source\" (rows of one table never train and test together); each fold is\n"
        "predicted with the default constants and with constants fitted on the other\n"
        "folds, starting from (and, with the prior, pulled toward) unfitted constants\n"
        "that owe nothing to the runs, as the defaults do not: the fitted column is\n"
        "out of sample.  Prints per-fold and overall MAPE of tokens/s per GPU, per\n"
        "subset.\n"
        "\n"
        "      --runs FILE      measured runs\n"
        "      --folds K        folds, 2..100 (default 5; at most the number of sources),\n"
        "                       or loso: one fold per source (leave one source out)\n"
        "      --calibrate-on N per source of at least 2N runs: fit on N of its runs\n"
        "                       (the middles of N equal slices, in file order) and\n"
        "                       predict the rest of the source; starting from the\n"
        "                       defaults, or with --folds loso from the fit on the\n"
        "                       other sources\n"
        "      --params LIST    as for calibrate\n"
        "      --subset NAME    runs to train and test on: dense (dense16 + fp8, the\n"
        "                       default), all (also MoE), dense16, fp8 or moe\n"
        "      --max-iter N     as for calibrate\n"
        "      --prior W        as for calibrate\n"
        "      --models DIR|none  as for calibrate\n"
        "  -h, --help           show this help and exit\n"
        "\n%s", cli_exit_codes_help);
}

/* Source k calibrated on a->calibrate_on of its runs from *start, its line
 * printed (or a usage error printed). */
static planner_status calibrate_source(crossval *cv, const validation_set *set,
                                       const calib_args *a, const cost_params *start, int k,
                                       crossval_fold_result *r, planner_error *err)
{
    calib_options opt = a->opt;
    planner_status st;
    char label[96];
    progress pr;
    snprintf(label, sizeof label, "planner: crossval source %d of %d calibrated, runs predicted",
             k + 1, cv->n_src);
    progress_start(&pr, label, progress_stderr_is_tty());
    opt.progress = progress_hook_of(&pr);
    st = crossval_source(r, cv, set, &opt, start, k, a->calibrate_on, err);
    progress_finish(&pr);
    if (st == PLANNER_E_USAGE) {
        cli_usage_error("crossval", "%s", err->msg);
        error_clear(err);
    }
    return st;
}

/* crossval --calibrate-on N: each source of at least 2 N runs calibrated
 * from the defaults, or (fold_start: each fold's fit, --folds loso) from
 * the fit on the other sources, one line each, then the totals. */
static planner_status run_sources(crossval *cv, const validation_set *set, const calib_args *a,
                                  const cost_params *fold_start, planner_error *err)
{
    crossval_fold_result r;
    planner_status st = PLANNER_OK;
    int k;
    crossval_report_source_head(stdout, a->runs, cv, a->opt.subset, a->calibrate_on,
                                fold_start != NULL);
    fflush(stdout);
    for (k = 0; k < cv->n_src && st == PLANNER_OK; k++) {
        if (cv->src_runs[k] < 2 * a->calibrate_on)
            continue;
        /* leave one source out: fold src_fold[k] holds source k alone */
        st = calibrate_source(cv, set, a, fold_start ? &fold_start[cv->src_fold[k]] : NULL, k,
                              &r, err);
        if (st == PLANNER_OK) {
            crossval_report_source(stdout, cv, set, k, &r);
            fflush(stdout);
        }
        calib_fit_free(&r.fit);
    }
    if (st == PLANNER_OK)
        crossval_report_source_tail(stdout, cv);
    return st;
}

/* crossval's folds, each line printed as its fold is done; with
 * --calibrate-on (and --folds loso) each source of enough runs is then
 * calibrated from its fold's fit, the lines after the fold table.  Returns
 * the exit status; a usage error (a bad --params) is printed here. */
static planner_status run_folds(crossval *cv, const validation_set *set, const calib_args *a,
                                planner_error *err)
{
    crossval_fold_result r;
    planner_status st = PLANNER_OK;
    calib_options opt = a->opt;
    cost_params *start = NULL;
    char label[64];
    int f;
    if (a->calibrate_on && (start = pl_calloc((size_t)cv->folds, sizeof *start)) == NULL)
        return error_oom(err);
    crossval_report_head(stdout, a->runs, cv, a->opt.subset);
    fflush(stdout);
    for (f = 0; f < cv->folds && st == PLANNER_OK; f++) {
        /* each fold is a calibration (tens of seconds): its progress on a
         * terminal, erased before the fold's line */
        progress pr;
        snprintf(label, sizeof label, "planner: crossval fold %d of %d, runs predicted", f + 1,
                 cv->folds);
        progress_start(&pr, label, progress_stderr_is_tty());
        opt.progress = progress_hook_of(&pr);
        st = crossval_fold(&r, cv, set, &opt, f, err);
        progress_finish(&pr);
        if (st == PLANNER_E_USAGE) {
            cli_usage_error("crossval", "%s", err->msg);
            error_clear(err);
        }
        if (st == PLANNER_OK) {
            crossval_report_fold(stdout, cv, f, &r);
            fflush(stdout);
            if (start != NULL)
                start[f] = r.fitted ? r.fit.fitted : cv->start;
        }
        calib_fit_free(&r.fit);
    }
    if (st == PLANNER_OK)
        crossval_report_tail(stdout, cv, set);
    if (st == PLANNER_OK && start != NULL)
        st = run_sources(cv, set, a, start, err);
    pl_free(start);
    return st;
}

int cmd_crossval(int argc, char **argv)
{
    static const struct option longopts[] = {
        CALIB_COMMON_LONGOPTS,
        {"folds", required_argument, NULL, 'k'},
        {"calibrate-on", required_argument, NULL, 'c'},
        {NULL, 0, NULL, 0}};
    calib_args a;
    planner_error err = PLANNER_ERROR_INIT;
    planner_status st;
    validation_set *set = NULL;
    crossval cv;
    int ch;

    memset(&cv, 0, sizeof cv);
    calib_args_default(&a, "crossval");
    if ((ch = parse_calib_args(&a, argc, argv, ":h", longopts, crossval_usage)) >= 0)
        return ch;
    openblas_set_num_threads(1);
    if ((st = load_runs(&set, &a, &err)) != PLANNER_OK ||
        (st = crossval_prepare(&cv, set, &a.opt, a.calibrate_on ? CROSSVAL_LOSO : a.folds,
                               &err)) != PLANNER_OK ||
        (st = a.calibrate_on && !a.folds_given ? run_sources(&cv, set, &a, NULL, &err)
                                                : run_folds(&cv, set, &a, &err)) != PLANNER_OK)
        goto cleanup;
    if (fflush(stdout) != 0 || ferror(stdout))
        st = error_set(&err, PLANNER_E_IO, NULL, 0, 0, NULL, "cannot write to stdout");
cleanup:
    if (st != PLANNER_OK && err.status != PLANNER_OK)
        error_print(&err, stderr);
    crossval_free(&cv);
    validation_free(set);
    return st;
}
