/* cmd_validate.c: `planner validate FILE [--format table|json]
 * [--calibration FILE]`: the command line, and the output on stdout.
 *
 * The runs file and the predictions are fit/validate.c's, the table and the
 * JSON out/validate_report.c's; this file parses the options, ties them
 * together and prints the one error, if any. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "base/workers.h"
#include "fit/calibration.h"
#include "out/validate_report.h"
#include "tool/cli.h"
#include "tool/commands.h"
#include "tool/shipped.h"

typedef struct validate_args {
    const char *calibration;    /* --calibration FILE, NULL if absent */
    const char *path;           /* the runs FILE */
    const char *models;         /* --models DIR|none, NULL if absent */
    bool json;                  /* --format json */
    int jobs;                   /* -j: runs predicted at once */
} validate_args;

static void validate_usage(FILE *out)
{
    fprintf(out,
        "Usage: planner validate FILE [--format table|json] [--calibration FILE]\n"
        "                             [--models DIR|none] [-j N]\n"
        "Predict every run of FILE (the schema of published-runs.json) with its\n"
        "published knobs fixed and the rest searched; print predicted vs measured\n"
        "tokens/s per GPU, the error per run, and MAPE and max error per subset\n"
        "(dense 16-bit, FP8 family, MoE).\n"
        "\n"
        "      --format table|json  output format (default table)\n"
        "      --calibration FILE   cost-model constants from 'planner calibrate'\n"
        "      --models DIR|none    model definitions a run's model.name selects\n"
        "                           (default: the shipped configs; none: the row's\n"
        "                           dimensions only)\n"
        "  -j, --jobs N             predict N runs at once (default: the CPUs it may run\n"
        "                           on, at most 64); the output is the same for every N\n"
        "  -h, --help               show this help and exit\n"
        "\n%s", cli_exit_codes_help);
}

/* Parses argv into *a.  Returns -1 to go on, or the exit status to return
 * at once: PLANNER_OK after --help, or a usage error (printed). */
static int parse_validate_args(validate_args *a, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"format", required_argument, NULL, 'f'},
        {"calibration", required_argument, NULL, 'C'},
        {"models", required_argument, NULL, 'M'},
        {"jobs", required_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int ch;

    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":j:h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'f':
            if (strcmp(optarg, "json") == 0)
                a->json = true;
            else if (strcmp(optarg, "table") == 0)
                a->json = false;
            else
                return cli_usage_error("validate", "--format: expected table or json, got '%s'",
                                       optarg);
            break;
        case 'C': a->calibration = optarg; break;
        case 'M':
            if (cli_check_models(optarg) != PLANNER_OK)
                return PLANNER_E_IO;
            a->models = optarg;
            break;
        case 'j':
            if (cli_parse_jobs("validate", optarg, &a->jobs) != 0)
                return PLANNER_E_USAGE;
            break;
        case 'h': validate_usage(stdout); return PLANNER_OK;
        case ':':
            return cli_usage_error("validate", "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error("validate", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return cli_usage_error("validate", "expected one runs FILE");
    a->path = argv[optind];
    return -1;
}

int cmd_validate(int argc, char **argv)
{
    validate_args a = {NULL, NULL, NULL, false, 0};
    char lib[1200];
    planner_error err = PLANNER_ERROR_INIT;
    planner_status st;
    validation_set *set = NULL;
    validation_outcome *res = NULL;
    validation_summary sum;
    cost_params params;
    int parsed;

    a.jobs = workers_available();
    parsed = parse_validate_args(&a, argc, argv);

    if (parsed >= 0)
        return parsed;
    if ((st = calibration_params(&params, a.calibration, &err)) != PLANNER_OK)
        goto cleanup;
    if ((st = validation_load_library(&set, a.path,
                                      shipped_model_library(a.models, lib, sizeof lib), &err)) !=
        PLANNER_OK)
        goto cleanup;
    if ((st = validation_predict_all(&res, &sum, set, &params, a.jobs, &err)) != PLANNER_OK)
        goto cleanup;
    if (a.json) {
        if (validate_report_json(stdout, a.path, set, res, &sum) != 0) {
            st = error_oom(&err);
            goto cleanup;
        }
    } else {
        validate_report_table(stdout, set, res, &sum);
        validate_report_memory(stdout, set, res, &sum);
    }
    if (fflush(stdout) != 0 || ferror(stdout))
        st = error_set(&err, PLANNER_E_IO, NULL, 0, 0, NULL, "cannot write to stdout");

cleanup:
    if (st != PLANNER_OK)
        error_print(&err, stderr);
    pl_free(res);
    validation_free(set);
    return st;
}
