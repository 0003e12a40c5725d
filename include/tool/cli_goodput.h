/* cli_goodput.h: the options of time to train under failures, shared by the
 * commands that report it (plan, size): --tokens, --failure-rate,
 * --restart-time, --checkpoint-write-time, --checkpoint-interval,
 * --gpu-hour-price, --objective (docs/goodput.md). */
#ifndef PLANNER_CLI_GOODPUT_H
#define PLANNER_CLI_GOODPUT_H

#include <getopt.h>
#include "search/search.h"

/* Option ids, above every command's own. */
enum {
    OPT_GP_TOKENS = 512, OPT_GP_FAILURE_RATE, OPT_GP_RESTART, OPT_GP_CKPT_WRITE,
    OPT_GP_CKPT_INTERVAL, OPT_GP_PRICE, OPT_GP_OBJECTIVE
};

/* The getopt_long entries, to splice into a command's table. */
#define CLI_GOODPUT_LONGOPTS                                                   \
    {"tokens", required_argument, NULL, OPT_GP_TOKENS},                        \
    {"failure-rate", required_argument, NULL, OPT_GP_FAILURE_RATE},            \
    {"restart-time", required_argument, NULL, OPT_GP_RESTART},                 \
    {"checkpoint-write-time", required_argument, NULL, OPT_GP_CKPT_WRITE},     \
    {"checkpoint-interval", required_argument, NULL, OPT_GP_CKPT_INTERVAL},    \
    {"gpu-hour-price", required_argument, NULL, OPT_GP_PRICE},                 \
    {"objective", required_argument, NULL, OPT_GP_OBJECTIVE}

/* Handles option `id` of subcommand `cmd` ("" for plan, "size", "sweep":
 * the usage error's hint, cli_usage_error) with argument `arg` into *o
 * (o->goodput, o->obj, o->report_goodput).  Returns 0 when handled, 1 when
 * `id` is not one of these options, PLANNER_E_USAGE (message printed) on a
 * bad value. */
int cli_goodput_option(const char *cmd, int id, const char *arg, search_options *o);

/* Their --help lines. */
extern const char cli_goodput_help[];

#endif
