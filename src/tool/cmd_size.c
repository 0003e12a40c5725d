/* cmd_size.c: `planner size`, how many GPUs (search/size.h, docs/goodput.md).
 *
 * Flow: options (the model, the cluster, the batch, --fix, --calibration,
 * the time-to-train options of cli_goodput.h, --deadline) -> size_run ->
 * the table of node counts (out/report.h report_size_table), or JSON.  Exit
 * 3 when nothing fits or no node count meets the deadline (the table is
 * printed, the note on stderr). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "base/units.h"
#include "base/workers.h"
#include "fit/calibration.h"
#include "out/report.h"
#include "search/size.h"
#include "tool/cli.h"
#include "tool/cli_goodput.h"
#include "tool/commands.h"
#include "tool/shipped.h"

typedef struct size_args {
    const char *model_path, *cluster_path, *calibration_path;
    char model_buf[1300], cluster_buf[1300];   /* a shipped name's file */
    bool json;
    double deadline_s;
    run_spec ov;
    search_options opts;
    int stack;                  /* --stack's stack_id, -1: the cluster file's */
    bool torch_compile;         /* --torch-compile */
} size_args;

static void size_usage(FILE *out)
{
    fprintf(out,
        "Usage: planner size --model FILE --cluster FILE [--tokens N --deadline T] [OPTION]...\n"
        "How many GPUs: the fewest nodes of the cluster's node group with a plan that fits\n"
        "and, with --tokens and --deadline, the node count that meets the deadline at the\n"
        "lowest cost; a table of node count -> time to train, ETTR, cost.\n"
        "\n"
        "  -m, --model FILE|NAME   model: planner JSON, a HuggingFace config.json, or a\n"
        "                          shipped one's name (as for planning)\n"
        "  -c, --cluster FILE|NAME cluster spec (YAML, one node group: its node count is\n"
        "                          varied), or a shipped one's name\n"
        "      --calibration FILE  cost-model constants fitted by 'planner calibrate'\n"
        "      --stack NAME        software stack, as for planning\n"
        "      --torch-compile     blocks compiled with torch.compile, as for planning\n"
        "      --gbs N             global batch size in sequences\n"
        "      --seq N             sequence length\n"
        "      --fix SPEC          pin knobs, as for planning\n"
        "      --mem-headroom F    fraction of each GPU's usable memory a plan must leave\n"
        "                          free (0..0.99, as for planning)\n"
        "      --deadline T        wall-clock limit, e.g. 90d or 2000h (needs --tokens)\n"
        "      --format table|json report format (default table)\n"
        "  -j, --jobs N            search on N threads (default: the CPUs it may run on,\n"
        "                          at most 64); the table is the same for every N\n"
        "%s"
        "  -h, --help              show this help and exit\n"
        "\n%s", cli_goodput_help, cli_exit_codes_help);
}

enum { OPT_S_GBS = 256, OPT_S_SEQ, OPT_S_FIX, OPT_S_DEADLINE, OPT_S_FORMAT, OPT_S_CAL,
       OPT_S_HEADROOM, OPT_S_STACK, OPT_S_COMPILE };

static int parse_size_args(int argc, char **argv, size_args *a)
{
    static const struct option longopts[] = {
        {"model", required_argument, NULL, 'm'},
        {"cluster", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {"gbs", required_argument, NULL, OPT_S_GBS},
        {"seq", required_argument, NULL, OPT_S_SEQ},
        {"fix", required_argument, NULL, OPT_S_FIX},
        {"deadline", required_argument, NULL, OPT_S_DEADLINE},
        {"format", required_argument, NULL, OPT_S_FORMAT},
        {"calibration", required_argument, NULL, OPT_S_CAL},
        {"mem-headroom", required_argument, NULL, OPT_S_HEADROOM},
        {"stack", required_argument, NULL, OPT_S_STACK},
        {"torch-compile", no_argument, NULL, OPT_S_COMPILE},
        {"jobs", required_argument, NULL, 'j'},
        CLI_GOODPUT_LONGOPTS,
        {NULL, 0, NULL, 0}};
    planner_error perr = PLANNER_ERROR_INIT;
    int ch, rc;

    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":m:c:j:h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'm': a->model_path = optarg; break;
        case 'c': a->cluster_path = optarg; break;
        case 'h': size_usage(stdout); return -1;
        case OPT_S_GBS:
            if (cli_parse_int(optarg, 1, 100000000, &a->ov.global_batch) != 0)
                return cli_usage_error("size", "--gbs: expected an integer in 1..1e8, got '%s'",
                                       optarg);
            break;
        case OPT_S_SEQ:
            if (cli_parse_int(optarg, 1, 16777216, &a->ov.seq_len) != 0)
                return cli_usage_error("size", "--seq: expected an integer in 1..16777216, "
                                               "got '%s'", optarg);
            break;
        case OPT_S_FIX:
            if (constraints_parse(&a->opts.fix, optarg, &perr) != PLANNER_OK)
                return cli_usage_error("size", "--fix: %s", perr.msg);
            break;
        case OPT_S_DEADLINE:
            if (units_parse(&a->deadline_s, optarg, UNIT_TIME, false, NULL) != PLANNER_OK ||
                a->deadline_s > 1e9)
                return cli_usage_error("size", "--deadline: expected a time such as 90d or "
                                               "2000h (at most 1e9 s), got '%s'", optarg);
            break;
        case OPT_S_FORMAT:
            if (strcmp(optarg, "table") != 0 && strcmp(optarg, "json") != 0)
                return cli_usage_error("size", "--format: expected table or json, got '%s'",
                                       optarg);
            a->json = strcmp(optarg, "json") == 0;
            break;
        case OPT_S_CAL: a->calibration_path = optarg; break;
        case OPT_S_STACK:
            if (cli_parse_stack("size", optarg, &a->stack) != 0)
                return PLANNER_E_USAGE;
            break;
        case OPT_S_COMPILE: a->torch_compile = true; break;
        case 'j':
            if (cli_parse_jobs("size", optarg, &a->opts.jobs) != 0)
                return PLANNER_E_USAGE;
            break;
        case OPT_S_HEADROOM:
            if (cli_parse_double(optarg, 0, 0.99, &a->opts.mem_headroom) != 0)
                return cli_usage_error("size", "--mem-headroom: expected a fraction in 0..0.99, "
                                               "got '%s'", optarg);
            break;
        case ':':
            return cli_usage_error("size", "option '%s' needs an argument", argv[optind - 1]);
        default:
            if ((rc = cli_goodput_option("size", ch, optarg, &a->opts)) == 0)
                break;
            if (rc != 1)
                return rc;
            return cli_usage_error("size", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage_error("size", "unexpected argument '%s'", argv[optind]);
    if (a->model_path == NULL || a->cluster_path == NULL)
        return cli_usage_error("size", "missing --%s FILE", a->model_path ? "cluster" : "model");
    if (a->deadline_s > 0 && !(a->opts.goodput.tokens > 0))
        return cli_usage_error("size", "--deadline needs --tokens N (the tokens to train)");
    if (shipped_resolve_run(&a->model_path, a->model_buf, &a->cluster_path, a->cluster_buf,
                            sizeof a->model_buf, &perr) != PLANNER_OK) {
        error_print(&perr, stderr);
        return perr.status;
    }
    return 0;
}

int cmd_size(int argc, char **argv)
{
    size_args a;
    planner_error err = PLANNER_ERROR_INIT;
    cost_params params;
    model *m = NULL;
    run_spec run;   /* the model file's run under --gbs/--seq */
    cluster *c = NULL;
    size_result res;
    planner_status rc;
    int parsed;

    memset(&a, 0, sizeof a);
    a.stack = -1;
    memset(&res, 0, sizeof res);
    search_options_default(&a.opts);
    a.opts.jobs = workers_available();
    a.opts.obj = OBJECTIVE_TIME;
    a.opts.report_goodput = true;
    if ((parsed = parse_size_args(argc, argv, &a)) != 0)
        return parsed > 0 ? parsed : PLANNER_OK;
    if ((rc = calibration_params(&params, a.calibration_path, &err)) != PLANNER_OK)
        goto cleanup;
    if ((rc = model_load(&m, &run, a.model_path, &a.ov, &err)) != PLANNER_OK)
        goto cleanup;
    cli_model_warnings(a.model_path, m);
    if ((rc = cluster_load(&c, a.cluster_path, &err)) != PLANNER_OK)
        goto cleanup;
    if (a.stack >= 0)
        c->stack = a.stack;
    if ((rc = (planner_status)cli_apply_torch_compile("size", a.torch_compile, m, c)) !=
        PLANNER_OK)
        goto cleanup;
    a.opts.gbs = run.global_batch;
    a.opts.seq_len = run.seq_len;
    rc = size_run(m, c, &params, &a.opts, a.deadline_s, &res, &err);
    if (rc != PLANNER_OK && rc != PLANNER_E_INFEASIBLE)
        goto cleanup;
    if (a.json ? report_size_json(stdout, m, c, &a.opts, &res) != 0
               : (report_size_table(stdout, m, c, &a.opts, &res), 0)) {
        rc = error_oom(&err);
        goto cleanup;
    }
    if (fflush(stdout) != 0 || ferror(stdout))
        rc = error_set(&err, PLANNER_E_IO, NULL, 0, 0, NULL, "write error on standard output");
    else if (res.note[0] != '\0')
        fprintf(stderr, "planner: %s\n", res.note);
cleanup:
    if (err.status != PLANNER_OK)
        error_print(&err, stderr);
    size_result_free(&res);
    cluster_free(c);
    model_free(m);
    return rc;
}
