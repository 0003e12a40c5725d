/* cli_goodput.c: the time-to-train options (tool/cli_goodput.h).  Every
 * value is checked here: rates, times, prices and token counts must be
 * finite and > 0 (a blocking time may be 0: non-blocking), so the model
 * (schedule/goodput.c) never sees a value that would make NaN or inf. */
#include <string.h>
#include "base/units.h"
#include "tool/cli.h"
#include "tool/cli_goodput.h"

const char cli_goodput_help[] =
    "Time to train (docs/goodput.md):\n"
    "      --tokens N          tokens to train (e.g. 15e12): time with and without failures,\n"
    "                          GPU-hours, cost, energy\n"
    "      --failure-rate R    failures per 1000 node-days (default: per GPU generation)\n"
    "      --restart-time T    fixed restart time, e.g. 5min (default 5min; + checkpoint load)\n"
    "      --checkpoint-write-time T|sync|async\n"
    "                          blocking time per checkpoint (0 = non-blocking; default async:\n"
    "                          the device-to-host copy; sync: the write to storage)\n"
    "      --checkpoint-interval T|auto\n"
    "                          compute time between checkpoints (default auto: Daly)\n"
    "      --gpu-hour-price P  price per GPU-hour (default: a reference price per generation)\n"
    "      --objective NAME    ranking: throughput (default), goodput (tokens/s after\n"
    "                          failures), time (to train --tokens), cost (tokens per dollar)\n";

/* A time: "300", "5min", "2h", "90d". */
static int parse_time(const char *arg, bool allow_zero, double *out)
{
    return units_parse(out, arg, UNIT_TIME, allow_zero, NULL) == PLANNER_OK &&
                   *out <= 1e9
               ? 0
               : -1;
}

static int parse_objective(const char *cmd, const char *arg, search_options *o)
{
    if (objective_from_name(arg, &o->obj) != 0)
        return cli_usage_error(cmd, "--objective: unknown objective '%s' (known: throughput, "
                                   "goodput, time, cost)", arg);
    if (o->obj != OBJECTIVE_THROUGHPUT)
        o->report_goodput = true;
    return 0;
}

int cli_goodput_option(const char *cmd, int id, const char *arg, search_options *o)
{
    goodput_options *g = &o->goodput;
    switch (id) {
    case OPT_GP_TOKENS:
        if (cli_parse_double(arg, 1, 1e18, &g->tokens) != 0)
            return cli_usage_error(cmd, "--tokens: expected a count in 1..1e18, got '%s'", arg);
        break;
    case OPT_GP_FAILURE_RATE:
        if (cli_parse_double(arg, 1e-3, 1e4, &g->failures_per_1000_node_days) != 0)
            return cli_usage_error(cmd, "--failure-rate: expected failures per 1000 node-days "
                                       "in 0.001..10000, got '%s'", arg);
        break;
    case OPT_GP_RESTART:
        if (parse_time(arg, false, &g->restart_s) != 0)
            return cli_usage_error(cmd, "--restart-time: expected a time > 0 such as 300, 5min "
                                       "or 1h, got '%s'", arg);
        break;
    case OPT_GP_CKPT_WRITE:
        if (strcmp(arg, "sync") == 0 || strcmp(arg, "async") == 0) {
            g->mode = arg[0] == 's' ? CHECKPOINT_SYNC : CHECKPOINT_ASYNC;
            break;
        }
        if (parse_time(arg, true, &g->checkpoint_write_s) != 0)
            return cli_usage_error(cmd, "--checkpoint-write-time: expected a time >= 0 "
                                       "(0 = non-blocking), sync or async, got '%s'", arg);
        g->mode = CHECKPOINT_FIXED;
        break;
    case OPT_GP_CKPT_INTERVAL:
        if (strcmp(arg, "auto") == 0) {
            g->checkpoint_interval_s = 0;
            break;
        }
        if (parse_time(arg, false, &g->checkpoint_interval_s) != 0)
            return cli_usage_error(cmd, "--checkpoint-interval: expected a time > 0 such as "
                                       "30min, or auto, got '%s'", arg);
        break;
    case OPT_GP_PRICE:
        if (cli_parse_double(arg, 1e-6, 1e6, &g->gpu_hour_price) != 0)
            return cli_usage_error(cmd, "--gpu-hour-price: expected a price in 0.000001..1e6, "
                                       "got '%s'", arg);
        break;
    case OPT_GP_OBJECTIVE:
        return parse_objective(cmd, arg, o);
    default:
        return 1;
    }
    o->report_goodput = true;
    return 0;
}
