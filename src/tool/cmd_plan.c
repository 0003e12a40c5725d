/* cmd_plan.c: `planner --model FILE --cluster FILE [options]`, the main job.
 *
 * Flow: parse options -> load model and cluster (and a calibration) ->
 * --show-inputs, or search -> report (table or JSON) or launch material
 * (--emit) -> optional --trace / --svg of the winner.  The outputs form one
 * output set (fileio.h): checked against the inputs and each other before any
 * work, all written, then committed together -- all of them or none. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "base/workers.h"
#include "fit/calibration.h"
#include "inputs/stack.h"
#include "model/knobs.h"
#include "model/layout.h"
#include "tool/cli.h"
#include "tool/cli_goodput.h"
#include "tool/shipped.h"
#include "tool/commands.h"
#include "tool/progress.h"
#include "out/emit.h"
#include "base/fileio.h"
#include "out/report.h"
#include "search/search.h"
#include "out/show_inputs.h"
#include "out/trace.h"

typedef enum output_format { FORMAT_TABLE, FORMAT_JSON } output_format;

typedef struct plan_args {
    const char *model_path, *cluster_path, *calibration_path;
    char model_buf[1300], cluster_buf[1300];   /* a shipped name's file */
    const char *output_path, *trace_path, *svg_path;
    bool show_inputs;
    output_format format;
    emit_kind emit;
    run_spec ov;
    search_options opts;
    int stack;                  /* --stack's stack_id, -1: the cluster file's */
    bool torch_compile;         /* --torch-compile */
    const char *layout_text;    /* --pipeline-layout, or NULL */
} plan_args;

/* The --stack names (the stack table's, the default marked) and the --fix
 * keys (the knob registry's), wrapped under their option: each comes from
 * its one table, so the help lists what exists. */
static void print_stacks(FILE *out)
{
    char words[1024];
    size_t used = 0;
    for (size_t i = 0; i < stack_count(); i++)
        used += (size_t)snprintf(used < sizeof words ? words + used : NULL,
                                 used < sizeof words ? sizeof words - used : 0,
                                 "%s%s%s", i ? ", " : "", stack_at(i)->name,
                                 i == STACK_MEGATRON_CORE ? " (default)" : "");
    cli_print_wrapped(out, words, 26, 80);
}

static void print_fix_keys(FILE *out)
{
    char keys[1024];
    knobs_fix_keys_join(keys, sizeof keys, " ");
    cli_print_wrapped(out, keys, 26, 80);
}

/* The help; PLANNER_E_INTERNAL with *err set when the shipped lists cannot
 * be printed (out of memory). */
static planner_status plan_usage(FILE *out, planner_error *err)
{
    planner_status rc;
    fprintf(out,
        "Usage: planner --model FILE --cluster FILE [OPTION]...\n"
        "       planner size|validate|sweep|calibrate|crossval ... (see 'planner CMD --help')\n"
        "Plan the parallel layout of a transformer training run on a GPU cluster:\n"
        "search data/tensor/pipeline/sequence parallelism, micro-batch, recompute and\n"
        "optimizer sharding, rank feasible plans by predicted throughput.\n"
        "\n"
        "Inputs:\n"
        "  -m, --model FILE|NAME   model: planner JSON or a HuggingFace config.json, or\n"
        "                          the name of a shipped one (listed below)\n"
        "      --guess-model-type  read an unknown HF model_type by its keys (warns)\n"
        "  -c, --cluster FILE|NAME cluster spec (YAML), or a shipped one's name\n"
        "      --calibration FILE  cost-model constants fitted by 'planner calibrate'\n"
        "      --stack NAME        software stack (overrides the cluster's 'stack:'):\n");
    print_stacks(out);
    fprintf(out,
        "      --torch-compile     each transformer block compiled with torch.compile\n"
        "                          (torchtitan's --training.compile; pytorch-fsdp2 only)\n"
        "      --gbs N             global batch size in sequences (default: model file, or 1024)\n"
        "      --seq N             sequence length (default: model file, or 4096)\n"
        "      --precision P       bf16, fp16, fp8, mxfp8 or nvfp4 (default: model file, or bf16)\n"
        "Search:\n"
        "      --fix SPEC          pin knobs, e.g. "
        "tp=8,pp=16,mbs=1,sp=on,recompute=selective,zero=1;\n"
        "                          keys:\n");
    print_fix_keys(out);
    fprintf(out,
        "      --top N             plans to list (default 10)\n"
        "      --partition dp|ilp  layer partitioner: exact DP (default) or GLPK ILP\n"
        "      --ilp-time-limit S  time limit per ILP solve in seconds (default 10)\n"
        "      --mem-headroom F    fraction of each GPU's usable memory a plan must leave\n"
        "                          free, 0..0.99 (default 0)\n"
        "  -j, --jobs N            search on N threads (default: the CPUs it may run on,\n"
        "                          at most 64); the plans and the report are the same for\n"
        "                          every N\n"
        "      --search-limit N    stop placing and partitioning after N DP steps (default\n"
        "                          2e9, a few seconds; the report says when it stopped)\n"
        "      --pipeline-layout L pin Megatron's --pipeline-model-parallel-layout, e.g.\n"
        "                          'Et|(tt|)*30mL' (needs --fix pp=N; vpp = stages / pp)\n"
        "Output:\n"
        "      --show-inputs       print the model and cluster as understood, then exit\n"
        "      --format table|json report format (default table)\n"
        "      --emit KIND         print launch material for the best plan instead of the\n"
        "                          report: megatron (arguments; Megatron-LM stacks), torchtitan\n"
        "                          (job config TOML; pytorch-fsdp2), deepspeed (DeepSpeed JSON;\n"
        "                          deepspeed), slurm (sbatch script), torchrun (script run on\n"
        "                          each node)\n"
        "      --megatron-version V  the Megatron-LM release to plan and emit for: 0.15,\n"
        "                          0.16, 0.17, 0.18 or 0.19 (default 0.19)\n"
        "  -o, --output FILE       write the report or launch material to FILE (atomically)\n"
        "      --trace FILE        write the best plan's simulated schedule (Chrome trace JSON)\n"
        "      --svg FILE          write the best plan's timeline and memory as SVG\n"
        "%s"
        "  -h, --help              show this help and exit\n"
        "  -V, --version           show the version and exit\n"
        "\n", cli_goodput_help);
    if ((rc = shipped_list(out, "Shipped models", "configs", ".json", err)) != PLANNER_OK ||
        (rc = shipped_list(out, "Shipped clusters", "clusters", ".yaml", err)) != PLANNER_OK)
        return rc;
    fprintf(out, "\n%s", cli_exit_codes_help);
    return PLANNER_OK;
}

enum { OPT_SHOW_INPUTS = 256, OPT_GBS, OPT_SEQ, OPT_FIX, OPT_TOP, OPT_OBJECTIVE,
       OPT_FORMAT, OPT_EMIT, OPT_TRACE, OPT_SVG, OPT_PARTITION, OPT_ILP_LIMIT,
       OPT_CALIBRATION, OPT_SEARCH_LIMIT, OPT_MEGATRON_VERSION,
       OPT_PRECISION, OPT_GUESS_TYPE, OPT_MEM_HEADROOM, OPT_STACK,
       OPT_PIPELINE_LAYOUT, OPT_TORCH_COMPILE };

static const struct option plan_longopts[] = {
    {"model", required_argument, NULL, 'm'},
    {"cluster", required_argument, NULL, 'c'},
    {"output", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {"show-inputs", no_argument, NULL, OPT_SHOW_INPUTS},
    {"gbs", required_argument, NULL, OPT_GBS},
    {"seq", required_argument, NULL, OPT_SEQ},
    {"fix", required_argument, NULL, OPT_FIX},
    {"top", required_argument, NULL, OPT_TOP},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"emit", required_argument, NULL, OPT_EMIT},
    {"megatron-version", required_argument, NULL, OPT_MEGATRON_VERSION},
    {"trace", required_argument, NULL, OPT_TRACE},
    {"svg", required_argument, NULL, OPT_SVG},
    {"partition", required_argument, NULL, OPT_PARTITION},
    {"ilp-time-limit", required_argument, NULL, OPT_ILP_LIMIT},
    {"calibration", required_argument, NULL, OPT_CALIBRATION},
    {"search-limit", required_argument, NULL, OPT_SEARCH_LIMIT},
    {"precision", required_argument, NULL, OPT_PRECISION},
    {"guess-model-type", no_argument, NULL, OPT_GUESS_TYPE},
    {"mem-headroom", required_argument, NULL, OPT_MEM_HEADROOM},
    {"stack", required_argument, NULL, OPT_STACK},
    {"torch-compile", no_argument, NULL, OPT_TORCH_COMPILE},
    {"pipeline-layout", required_argument, NULL, OPT_PIPELINE_LAYOUT},
    {"jobs", required_argument, NULL, 'j'},
    CLI_GOODPUT_LONGOPTS,
    {NULL, 0, NULL, 0}};

/* The options that say what to plan: the input files, the run's batch,
 * sequence and precision, the software stack.  Returns 0 when handled, 1 when
 * `ch` is not one of them, PLANNER_E_USAGE (message printed) on a bad value
 * (the protocol of cli_goodput_option). */
static int plan_input_option(int ch, const char *arg, plan_args *a)
{
    switch (ch) {
    case 'm': a->model_path = arg; return 0;
    case 'c': a->cluster_path = arg; return 0;
    case OPT_CALIBRATION: a->calibration_path = arg; return 0;
    case OPT_GUESS_TYPE: a->ov.guess_family = true; return 0;
    case OPT_GBS:
        if (cli_parse_int(arg, 1, 100000000, &a->ov.global_batch) != 0)
            return cli_usage_error("", "--gbs: expected an integer in 1..1e8, got '%s'", arg);
        return 0;
    case OPT_SEQ:
        if (cli_parse_int(arg, 1, 16777216, &a->ov.seq_len) != 0)
            return cli_usage_error("", "--seq: expected an integer in 1..16777216, got '%s'", arg);
        return 0;
    case OPT_PRECISION:
        if (precision_parse(arg, &a->ov.prec) != 0 || a->ov.prec == PREC_FP32)
            return cli_usage_error("", "--precision: expected bf16, fp16, fp8, mxfp8 or "
                                       "nvfp4, got '%s'", arg);
        a->ov.has_prec = true;
        return 0;
    case OPT_STACK:
        return cli_parse_stack("", arg, &a->stack) != 0 ? PLANNER_E_USAGE : 0;
    case OPT_TORCH_COMPILE: a->torch_compile = true; return 0;
    default:
        return 1;
    }
}

/* The options that steer the search: --fix, --top, the partitioner and its
 * limits, the memory headroom, a pinned pipeline layout.  Same protocol. */
static int plan_search_option(int ch, const char *arg, plan_args *a)
{
    planner_error perr = PLANNER_ERROR_INIT;

    switch (ch) {
    case OPT_FIX:
        if (constraints_parse(&a->opts.fix, arg, &perr) != PLANNER_OK)
            return cli_usage_error("", "--fix: %s", perr.msg);
        return 0;
    case OPT_TOP:
        if (cli_parse_int(arg, 1, 10000, &a->opts.top_n) != 0)
            return cli_usage_error("", "--top: expected an integer in 1..10000, got '%s'", arg);
        return 0;
    case OPT_PARTITION:
        if (strcmp(arg, "dp") == 0)
            a->opts.partition = PARTITION_DP;
        else if (strcmp(arg, "ilp") == 0)
            a->opts.partition = PARTITION_ILP;
        else
            return cli_usage_error("", "--partition: expected dp or ilp, got '%s'", arg);
        return 0;
    case OPT_ILP_LIMIT:
        if (cli_parse_double(arg, 0.001, 86400, &a->opts.ilp_time_limit_s) != 0)
            return cli_usage_error("", "--ilp-time-limit: expected seconds in 0.001..86400, "
                                       "got '%s'", arg);
        return 0;
    case OPT_SEARCH_LIMIT:
        if (cli_parse_double(arg, 1e3, 1e15, &a->opts.work_limit) != 0)
            return cli_usage_error("", "--search-limit: expected steps in 1e3..1e15, got '%s'",
                                   arg);
        return 0;
    case OPT_MEM_HEADROOM:
        if (cli_parse_double(arg, 0, 0.99, &a->opts.mem_headroom) != 0)
            return cli_usage_error("", "--mem-headroom: expected a fraction in 0..0.99, got '%s'",
                                   arg);
        return 0;
    case OPT_PIPELINE_LAYOUT: a->layout_text = arg; return 0;
    case 'j': return cli_parse_jobs("", arg, &a->opts.jobs) != 0 ? PLANNER_E_USAGE : 0;
    default:
        return 1;
    }
}

/* The options that say what to write: the report's format, launch material,
 * the output files.  Same protocol. */
static int plan_output_option(int ch, const char *arg, plan_args *a)
{
    switch (ch) {
    case 'o': a->output_path = arg; return 0;
    case OPT_SHOW_INPUTS: a->show_inputs = true; return 0;
    case OPT_TRACE: a->trace_path = arg; return 0;
    case OPT_SVG: a->svg_path = arg; return 0;
    case OPT_FORMAT:
        if (strcmp(arg, "table") == 0)
            a->format = FORMAT_TABLE;
        else if (strcmp(arg, "json") == 0)
            a->format = FORMAT_JSON;
        else
            return cli_usage_error("", "--format: expected table or json, got '%s'", arg);
        return 0;
    case OPT_EMIT:   /* the kinds by their names (emit_kind_name) */
        for (int k = EMIT_MEGATRON; k <= EMIT_DEEPSPEED; k++)
            if (strcmp(arg, emit_kind_name((emit_kind)k)) == 0) {
                a->emit = (emit_kind)k;
                return 0;
            }
        return cli_usage_error("", "--emit: expected megatron, torchtitan, deepspeed, slurm "
                               "or torchrun, got '%s'", arg);
    case OPT_MEGATRON_VERSION:
        if (megatron_version_parse(arg, &a->opts.megatron) != 0)
            return cli_usage_error("", "--megatron-version: expected 0.15, 0.16, 0.17, 0.18 or "
                                   "0.19, got '%s'", arg);
        return 0;
    default:
        return 1;
    }
}

/* What the options must add up to once all are read: no operand, both input
 * files (a shipped name resolved to its file), a pipeline layout only with its
 * pp.  Returns 0, PLANNER_E_USAGE or, for an input neither a file nor a shipped
 * name, PLANNER_E_IO (message printed). */
static int plan_args_finish(int argc, char **argv, plan_args *a)
{
    planner_error perr = PLANNER_ERROR_INIT;
    if (optind < argc)
        return cli_usage_error("", "unexpected argument '%s'", argv[optind]);
    if (a->model_path == NULL)
        return cli_usage_error("", "missing --model FILE");
    if (a->cluster_path == NULL)
        return cli_usage_error("", "missing --cluster FILE");
    if (a->layout_text != NULL && a->opts.fix.pp < 1)
        return cli_usage_error("", "--pipeline-layout needs --fix pp=N (the layout's ranks)");
    if (knob_release_fix_conflict(&a->opts.fix, a->opts.megatron) != NULL)
        return cli_usage_error("", "--fix: %s: %s", megatron_version_tag(a->opts.megatron),
                               knob_release_fix_conflict(&a->opts.fix, a->opts.megatron));
    if (shipped_resolve_run(&a->model_path, a->model_buf, &a->cluster_path, a->cluster_buf,
                            sizeof a->model_buf, &perr) != PLANNER_OK) {
        error_print(&perr, stderr);
        return perr.status;
    }
    return 0;
}

/* Reads the command line into *a.  Returns 0, -1 when --help or --version was
 * printed (nothing more to do), or PLANNER_E_USAGE (message printed), or
 * PLANNER_E_INTERNAL when the help ran out of memory (message printed). */
static int parse_plan_args(int argc, char **argv, plan_args *a)
{
    int ch, rc;

    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":m:c:o:j:hV", plan_longopts, NULL)) != -1) {
        switch (ch) {
        case 'h': {
            planner_error err = PLANNER_ERROR_INIT;
            if ((rc = plan_usage(stdout, &err)) == PLANNER_OK)
                return -1;
            error_print(&err, stderr);
            return rc;
        }
        case 'V':
            printf("planner %s\n"
                   "License GPL-3.0-or-later <https://gnu.org/licenses/gpl.html> (it links GLPK,\n"
                   "GPL-3.0): you may redistribute and change it; there is NO WARRANTY.\n",
                   PLANNER_VERSION);
            return -1;
        case ':':
            return cli_usage_error("", "option '%s' needs an argument", argv[optind - 1]);
        default:
            if ((rc = plan_input_option(ch, optarg, a)) == 1 &&
                (rc = plan_search_option(ch, optarg, a)) == 1 &&
                (rc = plan_output_option(ch, optarg, a)) == 1)
                rc = cli_goodput_option("", ch, optarg, &a->opts);   /* tool/cli_goodput.h */
            if (rc == 1)
                return cli_usage_error("", "unknown option '%s'", argv[optind - 1]);
            if (rc != 0)
                return rc;
        }
    }
    return plan_args_finish(argc, argv, a);
}

/* The run's files, registered before any work: the inputs, and the outputs
 * checked against them and each other (fileio.h's output set). */
typedef struct plan_files {
    output_set set;
    int main, trace, svg;      /* output indices; -1 when not written */
} plan_files;

static planner_status plan_files_register(const plan_args *a, plan_files *f,
                                          planner_error *err)
{
    planner_status rc;
    output_set_init(&f->set, stdout);
    f->main = f->trace = f->svg = -1;
    if ((rc = output_set_input(&f->set, a->model_path, "--model", err)) != PLANNER_OK ||
        (rc = output_set_input(&f->set, a->cluster_path, "--cluster", err)) != PLANNER_OK ||
        (rc = output_set_input(&f->set, a->calibration_path, "--calibration", err)) !=
            PLANNER_OK)
        return rc;
    if (a->show_inputs)
        return PLANNER_OK;   /* prints to stdout, nothing else */
    if ((rc = output_set_add(&f->set, a->output_path ? a->output_path : "-",
                             a->output_path ? "-o" : "the report on standard output",
                             OUTPUT_BUFFERED, &f->main, err)) != PLANNER_OK)
        return rc;
    if (a->trace_path != NULL &&
        (rc = output_set_add(&f->set, a->trace_path, "--trace", OUTPUT_BUFFERED, &f->trace,
                             err)) != PLANNER_OK)
        return rc;
    if (a->svg_path != NULL)
        rc = output_set_add(&f->set, a->svg_path, "--svg", OUTPUT_BUFFERED, &f->svg, err);
    return rc;
}

/* Writes the chosen output (report or launch material) into the set. */
static planner_status write_main_output(const plan_args *a, plan_files *f, const model *m,
                                        const cluster *c, const search_result *res,
                                        planner_error *err)
{
    planner_error why = PLANNER_ERROR_INIT;
    planner_status rc = output_set_open(&f->set, f->main, err);
    FILE *out = f->set.out[f->main].fp;
    if (rc != PLANNER_OK)
        return rc;
    if (a->emit != EMIT_NONE) {
        if (emit_write(out, a->emit, a->opts.megatron, m, c, &res->top[0], &why) != PLANNER_OK &&
            (rc = output_set_stream_error(&f->set, f->main, err)) == PLANNER_OK)
            rc = error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL,
                           "cannot emit launch material: %.511s", why.msg);
    } else if (a->format == FORMAT_JSON) {
        if (report_json_write(out, m, c, &a->opts, res) != 0 &&
            (rc = output_set_stream_error(&f->set, f->main, err)) == PLANNER_OK)
            rc = error_oom(err);
    } else {
        report_table(out, m, c, &a->opts, res);
    }
    return rc;
}

typedef planner_status (*plan_writer)(FILE *, const model *, const cluster *, const plan *,
                                      const cost_schedule *, planner_error *);

static planner_status write_plan_file(plan_files *f, int index, plan_writer fn,
                                      const model *m, const cluster *c, const plan *pl,
                                      const cost_schedule *sched, planner_error *err)
{
    planner_status rc;
    if (index < 0)
        return PLANNER_OK;
    if ((rc = output_set_open(&f->set, index, err)) != PLANNER_OK)
        return rc;
    planner_error werr = PLANNER_ERROR_INIT;
    char note[256];
    if ((rc = fn(f->set.out[index].fp, m, c, pl, sched, &werr)) == PLANNER_OK) {
        if (trace_note(sched, note, sizeof note))
            fprintf(stderr, "planner: %s: note: %s\n", f->set.out[index].id.path, note);
        return PLANNER_OK;
    }
    /* a failed write is the file's (its path and errno); else the writer's error */
    if (output_set_stream_error(&f->set, index, err) != PLANNER_OK)
        return err->status;
    if (werr.file[0] == '\0')   /* name the file it was for */
        snprintf(werr.file, sizeof werr.file, "%s", f->set.out[index].id.path);
    if (err->status == PLANNER_OK)
        *err = werr;
    return rc;
}

/* --pipeline-layout parsed for model m into *lay (the caller's), pinned in
 * a->opts with vpp fixed to it.  0, or the usage error's exit status. */
static int pin_layout(plan_args *a, const model *m, strategy *lay)
{
    planner_error why = PLANNER_ERROR_INIT;
    memset(lay, 0, sizeof *lay);
    lay->pp = a->opts.fix.pp;
    if (strategy_layout_parse(lay, a->layout_text, m->layers, m->mtp_layers, &why) != PLANNER_OK)
        return cli_usage_error("", "--pipeline-layout: character %d: %.200s", why.col, why.msg);
    if (a->opts.fix.vpp > 0 && a->opts.fix.vpp != lay->vpp)
        return cli_usage_error("", "--pipeline-layout: %d stages over pp %d give vpp %d, "
                               "--fix says vpp=%d", lay->pp * lay->vpp, lay->pp, lay->vpp,
                               a->opts.fix.vpp);
    a->opts.fix.vpp = lay->vpp;
    a->opts.layout = lay;
    return 0;
}

int cmd_plan(int argc, char **argv)
{
    plan_args a;
    planner_error err = PLANNER_ERROR_INIT;
    cost_params params;
    strategy *layout = NULL;   /* --pipeline-layout's, heap (7 kB) */
    model *m = NULL;
    run_spec run;   /* the model file's run under --gbs/--seq/--precision */
    cluster *c = NULL;
    search_result res;
    plan_files files;
    progress pr;
    planner_status rc;

    memset(&a, 0, sizeof a);
    memset(&res, 0, sizeof res);
    output_set_init(&files.set, stdout);
    search_options_default(&a.opts);
    a.opts.jobs = workers_available();
    a.stack = -1;
    int parsed = parse_plan_args(argc, argv, &a);   /* -1: --help/--version done */
    if (parsed != 0)
        return parsed > 0 ? parsed : PLANNER_OK;

    if ((rc = plan_files_register(&a, &files, &err)) != PLANNER_OK)
        goto cleanup;
    if ((rc = calibration_params(&params, a.calibration_path, &err)) != PLANNER_OK)
        goto cleanup;
    if ((rc = model_load(&m, &run, a.model_path, &a.ov, &err)) != PLANNER_OK)
        goto cleanup;
    cli_model_warnings(a.model_path, m);
    if ((rc = cluster_load(&c, a.cluster_path, &err)) != PLANNER_OK)
        goto cleanup;
    if (a.stack >= 0)
        c->stack = a.stack;
    if ((rc = (planner_status)cli_apply_torch_compile("", a.torch_compile, m, c)) != PLANNER_OK ||
        (rc = (planner_status)cli_check_emit_stack(a.emit, c)) != PLANNER_OK)
        goto cleanup;
    if (a.layout_text != NULL && (layout = pl_malloc(sizeof *layout)) == NULL) {
        rc = error_oom(&err);
        goto cleanup;
    }
    if (a.layout_text != NULL && (rc = (planner_status)pin_layout(&a, m, layout)) != PLANNER_OK)
        goto cleanup;

    if (a.show_inputs) {
        if (a.format == FORMAT_JSON ? show_inputs_json(stdout, m, &run, c) != 0
                                    : (show_inputs(stdout, m, &run, c), 0))
            rc = error_oom(&err);
        else if (fflush(stdout) != 0 || ferror(stdout))
            rc = error_set(&err, PLANNER_E_IO, NULL, 0, 0, NULL,
                           "write error on standard output");
        goto cleanup;
    }

    a.opts.gbs = run.global_batch;
    a.opts.seq_len = run.seq_len;
    progress_start(&pr, "planner: search, candidates evaluated",
                   progress_stderr_is_tty());   /* shown after ~1 s only */
    a.opts.progress = progress_hook_of(&pr);
    rc = search_run(&res, m, c, &params, &a.opts, &err);
    progress_finish(&pr);
    if (rc == PLANNER_E_INFEASIBLE) {
        /* exit 3 is an answer: the JSON document says so (strategies empty,
         * closest_miss, advice) and is written; a table goes to stderr; there
         * is no plan to emit, trace or draw. */
        if (a.format == FORMAT_JSON && a.emit == EMIT_NONE) {
            planner_status wrc = write_main_output(&a, &files, m, c, &res, &err);
            if (wrc == PLANNER_OK)
                wrc = output_set_commit(&files.set, &err);
            if (wrc != PLANNER_OK)
                rc = wrc;
        }
        report_infeasible(stderr, m, c, &res);
        goto cleanup;
    }
    if (rc != PLANNER_OK)
        goto cleanup;
    /* every output complete, then all committed together */
    if ((rc = write_main_output(&a, &files, m, c, &res, &err)) != PLANNER_OK ||
        (rc = write_plan_file(&files, files.trace, trace_write_chrome, m, c, &res.top[0],
                              &res.sched[0], &err)) != PLANNER_OK ||
        (rc = write_plan_file(&files, files.svg, trace_write_svg, m, c, &res.top[0],
                              &res.sched[0], &err)) != PLANNER_OK)
        goto cleanup;
    rc = output_set_commit(&files.set, &err);

cleanup:
    if (err.status != PLANNER_OK)
        error_print(&err, stderr);
    output_set_free(&files.set);
    search_result_free(&res);
    cluster_free(c);
    model_free(m);
    pl_free(layout);
    return rc;
}
