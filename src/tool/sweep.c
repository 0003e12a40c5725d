/* sweep.c: `planner sweep`, the command line of a grid of what-ifs: options
 * (axes, --grid, --fix, --shard, --merge, -o, the time-to-train options),
 * usage errors, the output set, the progress line and the loop over this
 * shard's points.  The grid is search/sweep_grid.c, a point's plan
 * search/sweep_point.c, its line out/sweep_rows.c, the merge
 * out/sweep_merge.c.
 *
 * Inputs are validated before the first point runs (every model and cluster
 * file loads; the grid is within SWEEP_MAX_POINTS), so a bad file fails fast
 * with exit 1 instead of a sweep of "invalid" lines.  Output goes through an
 * output set (fileio.h): -o FILE appears only complete, and never over one of
 * the sweep's inputs (model, cluster, grid, calibration, or a shard being
 * merged: same device and inode).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "base/fileio.h"
#include "base/workers.h"
#include "fit/calibration.h"
#include "out/sweep_merge.h"
#include "out/sweep_rows.h"
#include "search/sweep_point.h"
#include "tool/cli.h"
#include "tool/cli_goodput.h"
#include "tool/commands.h"
#include "tool/progress.h"
#include "tool/shipped.h"
#include "tool/sweep.h"

planner_status sweep_shard_parse(long *i, long *n, const char *text, planner_error *err)
{
    const char *slash = strchr(text, '/');
    char a[32];
    int vi, vn;
    if (slash == NULL || (size_t)(slash - text) >= sizeof a)
        goto bad;
    memcpy(a, text, (size_t)(slash - text));
    a[slash - text] = '\0';
    if (cli_parse_int(a, 0, SWEEP_MAX_POINTS, &vi) != 0 ||
        cli_parse_int(slash + 1, 1, SWEEP_MAX_POINTS, &vn) != 0 || vi >= vn)
        goto bad;
    *i = vi;
    *n = vn;
    return PLANNER_OK;
bad:
    return error_set(err, PLANNER_E_USAGE, NULL, 0, 0, NULL,
                     "expected I/N with 0 <= I < N <= %ld, got '%s'", SWEEP_MAX_POINTS, text);
}

/* ---- the command -------------------------------------------------------------- */

static void sweep_usage(FILE *out)
{
    fprintf(out,
        "Usage: planner sweep --model FILE|NAME[,...] --cluster FILE|NAME[,...]\n"
        "                     [AXIS VALUES]... [OPTION]...\n"
        "       planner sweep --grid FILE [OPTION]...\n"
        "       planner sweep --merge FILE... [-o FILE]\n"
        "Find the best plan at every point of a grid of what-ifs; print one line per\n"
        "point (CSV with a header, or JSON Lines), in point order.\n"
        "\n"
        "Axes (each a list 'a,b,c' or a range 'A..B', 'A..B:STEP', 'A..BxFACTOR'):\n"
        "  -m, --model FILE|NAME[,...]\n"
        "                          models: files or shipped names, as for planning\n"
        "                          (comma list; option may repeat)\n"
        "  -c, --cluster FILE|NAME[,...]\n"
        "                          clusters: files or shipped names (comma list; option\n"
        "                          may repeat)\n"
        "      --gpu NAMES         catalog GPU replacing the GPU of every node group\n"
        "      --nodes N           node count (clusters with one node group)\n"
        "      --gbs N             global batch size in sequences\n"
        "      --seq N             sequence length\n"
        "      --intra-bw-scale F  multiply intra-node bandwidth\n"
        "      --inter-bw-scale F  multiply inter-node bandwidth (and links between groups)\n"
        "      --peak-scale F      multiply every peak FLOP/s\n"
        "      --grid FILE         axes from a file of 'key = values' lines (keys as the\n"
        "                          options above without '--', and 'fix'); options on the\n"
        "                          command line replace the file's axis\n"
        "Search and output:\n"
        "      --fix SPEC          pin knobs at every point, as for 'planner --fix'\n"
        "      --calibration FILE  cost-model constants fitted by 'planner calibrate'\n"
        "      --torch-compile     blocks compiled with torch.compile at every point, as for\n"
        "                          planning (every cluster's stack: must be pytorch-fsdp2)\n"
        "      --format csv|jsonl  output format (default csv)\n"
        "      --shard I/N         run only the points k with k %% N == I (Slurm arrays)\n"
        "      --merge FILE...     combine shard outputs into the unsharded output\n"
        "  -j, --jobs N            search N points at once (default: the CPUs it may run\n"
        "                          on, at most 64); the output is the same for every N\n"
        "  -o, --output FILE       write to FILE (atomically) instead of standard output\n"
        "%s"
        "  -h, --help              show this help and exit\n"
        "At most %ld points per grid.\n"
        "\n%s", cli_goodput_help, SWEEP_MAX_POINTS, cli_exit_codes_help);
}

enum { OPT_GPU = 300, OPT_NODES, OPT_GBS, OPT_SEQ, OPT_INTRA, OPT_INTER, OPT_PEAK, OPT_GRID,
       OPT_FIX, OPT_CALIB, OPT_FORMAT, OPT_SHARD, OPT_MERGE, OPT_TORCH_COMPILE };

typedef struct sweep_args {
    char *axis_text[SWEEP_DIM_COUNT];   /* owned; command-line values per axis */
    const char *grid_path, *fix, *calibration, *output;
    sweep_format format;
    bool merge, shard, torch_compile;
    long shard_i, shard_n;
    int jobs;                           /* -j: points searched at once */
    search_options gp;                  /* the time-to-train options and --objective */
} sweep_args;

static void sweep_args_free(sweep_args *a)
{
    for (int d = 0; d < SWEEP_DIM_COUNT; d++)
        pl_free(a->axis_text[d]);
}

/* Appends ",text" to an axis's command-line values (repeated options). */
static int append_axis(sweep_args *a, sweep_dim d, const char *text)
{
    size_t old = a->axis_text[d] != NULL ? strlen(a->axis_text[d]) : 0;
    char *n = pl_realloc(a->axis_text[d], old + strlen(text) + 2);
    if (n == NULL)
        return -1;
    if (old > 0)
        n[old++] = ',';
    memcpy(n + old, text, strlen(text) + 1);
    a->axis_text[d] = n;
    return 0;
}

static int parse_sweep_args(int argc, char **argv, sweep_args *a)
{
    static const struct option longopts[] = {
        {"model", required_argument, NULL, 'm'},
        {"cluster", required_argument, NULL, 'c'},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {"gpu", required_argument, NULL, OPT_GPU},
        {"nodes", required_argument, NULL, OPT_NODES},
        {"gbs", required_argument, NULL, OPT_GBS},
        {"seq", required_argument, NULL, OPT_SEQ},
        {"intra-bw-scale", required_argument, NULL, OPT_INTRA},
        {"inter-bw-scale", required_argument, NULL, OPT_INTER},
        {"peak-scale", required_argument, NULL, OPT_PEAK},
        {"grid", required_argument, NULL, OPT_GRID},
        {"fix", required_argument, NULL, OPT_FIX},
        {"calibration", required_argument, NULL, OPT_CALIB},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"shard", required_argument, NULL, OPT_SHARD},
        {"merge", no_argument, NULL, OPT_MERGE},
        {"torch-compile", no_argument, NULL, OPT_TORCH_COMPILE},
        {"jobs", required_argument, NULL, 'j'},
        CLI_GOODPUT_LONGOPTS,
        {NULL, 0, NULL, 0}};
    planner_error perr = PLANNER_ERROR_INIT;
    int ch, gp;
    sweep_dim d;

    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":m:c:o:j:h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'm': d = SWEEP_MODEL; goto axis;
        case 'c': d = SWEEP_CLUSTER; goto axis;
        case OPT_GPU: d = SWEEP_GPU; goto axis;
        case OPT_NODES: d = SWEEP_NODES; goto axis;
        case OPT_GBS: d = SWEEP_GBS; goto axis;
        case OPT_SEQ: d = SWEEP_SEQ; goto axis;
        case OPT_INTRA: d = SWEEP_INTRA_BW; goto axis;
        case OPT_INTER: d = SWEEP_INTER_BW; goto axis;
        case OPT_PEAK: d = SWEEP_PEAK;
        axis:
            if (append_axis(a, d, optarg) != 0) {
                fprintf(stderr, "planner: out of memory\n");
                return PLANNER_E_INTERNAL;
            }
            break;
        case 'o': a->output = optarg; break;
        case 'h': sweep_usage(stdout); return -1;
        case OPT_GRID: a->grid_path = optarg; break;
        case OPT_FIX: a->fix = optarg; break;
        case OPT_CALIB: a->calibration = optarg; break;
        case OPT_FORMAT:
            if (strcmp(optarg, "csv") == 0)
                a->format = SWEEP_CSV;
            else if (strcmp(optarg, "jsonl") == 0)
                a->format = SWEEP_JSONL;
            else
                return cli_usage_error("sweep", "--format: expected csv or jsonl, got '%s'",
                                       optarg);
            break;
        case OPT_SHARD:
            if (sweep_shard_parse(&a->shard_i, &a->shard_n, optarg, &perr) != PLANNER_OK)
                return cli_usage_error("sweep", "--shard: %s", perr.msg);
            a->shard = true;
            break;
        case OPT_MERGE: a->merge = true; break;
        case OPT_TORCH_COMPILE: a->torch_compile = true; break;
        case 'j':
            if (cli_parse_jobs("sweep", optarg, &a->jobs) != 0)
                return PLANNER_E_USAGE;
            break;
        case ':':
            return cli_usage_error("sweep", "option '%s' needs an argument", argv[optind - 1]);
        default:        /* the time-to-train options (tool/cli_goodput.h) */
            if ((gp = cli_goodput_option("sweep", ch, optarg, &a->gp)) == 0)
                break;
            if (gp != 1)
                return gp;
            return cli_usage_error("sweep", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (a->merge) {
        bool other = a->grid_path || a->fix || a->calibration || a->shard || a->torch_compile;
        for (int k = 0; k < SWEEP_DIM_COUNT; k++)
            other = other || a->axis_text[k] != NULL;
        if (other)
            return cli_usage_error("sweep", "--merge takes only shard files and -o FILE");
        if (optind >= argc)
            return cli_usage_error("sweep", "--merge needs at least one shard file");
        return 0;
    }
    if (optind < argc)
        return cli_usage_error("sweep", "unexpected argument '%s'", argv[optind]);
    return 0;
}

/* The output of a sweep or a merge: an output set of one output, streamed
 * (lines appear as points finish), never one of the run's inputs. */
static planner_status sweep_output_add(output_set *os, const sweep_args *a, int *index,
                                       planner_error *err)
{
    output_set_init(os, stdout);
    return output_set_add(os, a->output != NULL ? a->output : "-",
                          a->output != NULL ? "-o" : "standard output", OUTPUT_STREAM, index,
                          err);
}

static int cmd_merge(const sweep_args *a, int n_files, char *const *paths)
{
    planner_error err = PLANNER_ERROR_INIT;
    output_set os;
    int out = 0;
    planner_status rc = sweep_output_add(&os, a, &out, &err);
    for (int i = 0; i < n_files && rc == PLANNER_OK; i++)
        rc = output_set_input(&os, paths[i], "the shard", &err);
    /* sweep_merge writes nothing unless the shards are whole */
    if (rc == PLANNER_OK && (rc = output_set_open(&os, out, &err)) == PLANNER_OK &&
        (rc = sweep_merge(os.out[out].fp, n_files, paths, &err)) == PLANNER_OK)
        rc = output_set_commit(&os, &err);
    output_set_free(&os);
    if (err.status != PLANNER_OK)
        error_print(&err, stderr);
    return rc;
}

/* Registers the sweep's input files (grid, calibration, models, clusters) in os. */
static planner_status sweep_inputs_add(output_set *os, const sweep_args *a,
                                       const sweep_run *run, planner_error *err)
{
    planner_status rc;
    if ((rc = output_set_input(os, a->grid_path, "--grid", err)) != PLANNER_OK ||
        (rc = output_set_input(os, a->calibration, "--calibration", err)) != PLANNER_OK)
        return rc;
    for (int i = 0; i < run->grid.axis[SWEEP_MODEL].n; i++)
        if ((rc = output_set_input(os, run->model_files[i], "--model", err)) != PLANNER_OK)
            return rc;
    for (int i = 0; i < run->grid.axis[SWEEP_CLUSTER].n; i++)
        if ((rc = output_set_input(os, run->cluster_files[i], "--cluster", err)) != PLANNER_OK)
            return rc;
    return PLANNER_OK;
}

/* Each model and cluster value's file into run->model_files and
 * run->cluster_files: the value, or the file of the shipped model or
 * cluster it names (shipped_resolve, as plan and size take --model and
 * --cluster); the lines keep the values as given. */
static planner_status sweep_files_resolve(sweep_run *run, planner_error *err)
{
    static const struct { sweep_dim d; const char *kind, *ext; } in[] = {
        {SWEEP_MODEL, "configs", ".json"}, {SWEEP_CLUSTER, "clusters", ".yaml"}};
    for (size_t k = 0; k < sizeof in / sizeof in[0]; k++) {
        const sweep_axis *ax = &run->grid.axis[in[k].d];
        char **files = pl_calloc((size_t)ax->n, sizeof *files), buf[1300];
        if (files == NULL)
            return error_oom(err);
        *(in[k].d == SWEEP_MODEL ? &run->model_files : &run->cluster_files) = files;
        for (int i = 0; i < ax->n; i++) {
            const char *f = shipped_resolve(ax->str[i], in[k].kind, in[k].ext, buf, sizeof buf,
                                            err);
            if (f == NULL)
                return err->status;
            if ((files[i] = pl_strdup(f)) == NULL)
                return error_oom(err);
        }
    }
    return PLANNER_OK;
}

/* The grid: the file first, then the command line replaces whole axes and
 * the fix.  A usage error is printed here (err stays clear). */
static int sweep_grid_build(sweep_run *run, const sweep_args *a, planner_error *err)
{
    planner_error perr = PLANNER_ERROR_INIT;
    planner_status rc;
    if (a->grid_path != NULL &&
        (rc = sweep_grid_parse_file(a->grid_path, &run->grid, err)) != PLANNER_OK)
        return rc;
    for (int d = 0; d < SWEEP_DIM_COUNT; d++) {
        int off;
        if (a->axis_text[d] == NULL)
            continue;
        sweep_axis_free(&run->grid.axis[d]);
        if (sweep_axis_parse(&run->grid.axis[d], &off, (sweep_dim)d, a->axis_text[d],
                             &perr) != PLANNER_OK)
            return cli_usage_error("sweep", "--%.511s", perr.msg);
    }
    if (a->fix != NULL) {
        pl_free(run->grid.fix);
        run->grid.fix = pl_strdup(a->fix);
        if (run->grid.fix == NULL)
            return error_oom(err);
    }
    run->fix = (strategy_constraints)STRATEGY_CONSTRAINTS_INIT;
    if (run->grid.fix != NULL && constraints_parse(&run->fix, run->grid.fix, &perr) != PLANNER_OK)
        return cli_usage_error("sweep", "--fix: %.511s", perr.msg);
    if (run->grid.axis[SWEEP_MODEL].n == 0 || run->grid.axis[SWEEP_CLUSTER].n == 0)
        return cli_usage_error("sweep", "missing %s (give --%s FILE or a grid file with '%s = "
                               "FILE')",
                               run->grid.axis[SWEEP_MODEL].n == 0 ? "the model" : "the cluster",
                               run->grid.axis[SWEEP_MODEL].n == 0 ? "model" : "cluster",
                               run->grid.axis[SWEEP_MODEL].n == 0 ? "model" : "cluster");
    if (sweep_grid_points(&run->grid) > (double)SWEEP_MAX_POINTS)
        return cli_usage_error("sweep", "the grid has %.0f points, more than the limit of %ld",
                               sweep_grid_points(&run->grid), SWEEP_MAX_POINTS);
    return PLANNER_OK;
}

/* SWEEP_BATCH points are searched at a time, each on a worker thread
 * (base/workers.h), then written in point order: the output is the same
 * for every -j, and no more than a batch of rows is held at once. */
#define SWEEP_BATCH 64

/* One batch: point first + i * step into rows[i], its status and error. */
typedef struct sweep_batch {
    const sweep_run *run;
    long first, step;
    sweep_row rows[SWEEP_BATCH];
    planner_status st[SWEEP_BATCH];
    planner_error err[SWEEP_BATCH];
} sweep_batch;

static void sweep_point_item(void *arg, int i, int worker)
{
    sweep_batch *b = arg;
    (void)worker;
    b->st[i] = sweep_point_run(&b->rows[i], b->run, b->first + i * b->step, &b->err[i]);
}

/* Runs this shard's points (k = shard_i, shard_i + shard_n, ...) into the
 * output set's stream `out`, one line each, with the progress line. */
static planner_status sweep_points(const sweep_run *run, const sweep_args *a, output_set *os,
                                   int out, planner_error *err)
{
    FILE *fp = os->out[out].fp;
    long shard_i = a->shard ? a->shard_i : 0, shard_n = a->shard ? a->shard_n : 1;
    long todo = run->points > shard_i ? (run->points - shard_i + shard_n - 1) / shard_n : 0;
    long done = 0;
    planner_status rc = PLANNER_OK;
    sweep_batch *b = pl_calloc(1, sizeof *b);
    progress pr;
    if (b == NULL)
        return error_oom(err);
    if (a->format == SWEEP_CSV) {
        char header[SWEEP_CSV_HEADER_MAX];
        fprintf(fp, "%s\n", sweep_csv_header(header, sizeof header));
    }
    progress_start(&pr, "planner: sweep, points", progress_stderr_is_tty());
    b->run = run;
    b->step = shard_n;
    while (done < todo && rc == PLANNER_OK) {
        int n = todo - done < SWEEP_BATCH ? (int)(todo - done) : SWEEP_BATCH, i;
        b->first = shard_i + done * shard_n;
        workers_run(n, a->jobs, sweep_point_item, b);
        for (i = 0; i < n && rc == PLANNER_OK; i++) {
            if ((rc = b->st[i]) != PLANNER_OK)
                *err = b->err[i];
            else
                rc = sweep_row_write(fp, a->format, run->points, &b->rows[i], err);
            if (rc == PLANNER_OK)
                rc = output_set_stream_error(os, out, err);
            if (rc == PLANNER_OK)
                progress_update(&pr, ++done, todo);
        }
        for (i = 0; i < n; i++)
            sweep_row_free(&b->rows[i]);
    }
    progress_finish(&pr);
    pl_free(b);
    return rc;
}

int cmd_sweep(int argc, char **argv)
{
    sweep_args a;
    sweep_run run;
    planner_error err = PLANNER_ERROR_INIT;
    int rc;
    output_set os;
    int out = 0;

    memset(&a, 0, sizeof a);
    a.jobs = workers_available();
    memset(&run, 0, sizeof run);
    output_set_init(&os, stdout);
    int parsed = parse_sweep_args(argc, argv, &a);   /* -1: --help done */
    if (parsed != 0) {
        sweep_args_free(&a);
        return parsed > 0 ? parsed : PLANNER_OK;
    }
    if (a.merge) {
        rc = cmd_merge(&a, argc - optind, argv + optind);
        sweep_args_free(&a);
        return rc;
    }
    if ((rc = sweep_grid_build(&run, &a, &err)) != PLANNER_OK)
        goto cleanup;
    run.obj = a.gp.obj;
    run.goodput = a.gp.goodput;
    if ((rc = calibration_params(&run.params, a.calibration, &err)) != PLANNER_OK)
        goto cleanup;
    if ((rc = sweep_files_resolve(&run, &err)) != PLANNER_OK ||
        (rc = sweep_run_load(&run, &err)) != PLANNER_OK)
        goto cleanup;
    for (int j = 0; j < run.grid.axis[SWEEP_MODEL].n; j++)   /* as planning does */
        cli_model_warnings(run.model_files[j], run.models[j]);
    for (int i = 0; i < run.grid.axis[SWEEP_CLUSTER].n; i++)   /* every point's pair */
        for (int j = 0; j < run.grid.axis[SWEEP_MODEL].n; j++)
            if ((rc = cli_apply_torch_compile("sweep", a.torch_compile, run.models[j],
                                              run.clusters[i])) != PLANNER_OK)
                goto cleanup;
    if ((rc = sweep_output_add(&os, &a, &out, &err)) != PLANNER_OK ||
        (rc = sweep_inputs_add(&os, &a, &run, &err)) != PLANNER_OK ||
        (rc = output_set_open(&os, out, &err)) != PLANNER_OK)
        goto cleanup;
    if ((rc = sweep_points(&run, &a, &os, out, &err)) == PLANNER_OK)
        rc = output_set_commit(&os, &err);
cleanup:
    if (err.status != PLANNER_OK)   /* usage errors are printed where found */
        error_print(&err, stderr);
    output_set_free(&os);
    sweep_run_free(&run);
    sweep_args_free(&a);
    return rc;
}
