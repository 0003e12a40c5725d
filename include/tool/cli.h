/* cli.h: small helpers shared by the subcommands' option parsers. */
#ifndef PLANNER_CLI_H
#define PLANNER_CLI_H

#include <stdio.h>
#include "base/error.h"
#include "inputs/cluster.h"
#include "inputs/model.h"
#include "out/emit.h"

/* Parses a whole decimal integer in [min, max]; -1 if not. */
int cli_parse_int(const char *text, long min, long max, int *out);
/* Parses a finite double in [min, max]; -1 if not. */
int cli_parse_double(const char *text, double min, double max, double *out);

/* -j N / --jobs N of plan, size, sweep and validate: *out the threads, N in
 * 1..CLI_JOBS_MAX (more than base/workers.h's WORKERS_MAX run as that
 * many), or a usage error of command `cmd` ("" for plan): PLANNER_E_USAGE.
 * The default, without the option, is workers_available(). */
#define CLI_JOBS_MAX 1024
int cli_parse_jobs(const char *cmd, const char *arg, int *out);

/* Usage error of subcommand `cmd` (its bare name, "size"; "" or NULL for
 * plan, the main command): prints "planner: MESSAGE" and "Try 'planner CMD
 * --help' for more information." ("Try 'planner --help' ..." for plan) on
 * stderr and returns PLANNER_E_USAGE.  The spacing is this function's. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* --stack NAME of command `cmd` ("" for plan): *out the stack's id (0), or
 * a usage error naming the closest stack and the known ones
 * (PLANNER_E_USAGE). */
int cli_parse_stack(const char *cmd, const char *name, int *out);

/* --torch-compile of command `cmd` ("" for plan), once the stack is known
 * (the cluster file's, or --stack): marks each transformer block of m as
 * compiled with torch.compile (model.torch_compile; torchtitan's
 * --training.compile).  Only a stack whose blocks otherwise run eagerly
 * takes it (inputs/stack.h stack_eager_blocks); on any other a usage error
 * names the cluster, its stack and the stacks that do (PLANNER_E_USAGE).
 * 0 when `on` is false. */
int cli_apply_torch_compile(const char *cmd, bool on, model *m, const cluster *c);

/* --emit KIND of plan (EMIT_NONE: no --emit), once the stack is known: 0
 * when KIND launches the stack (out/emit.h emit_kind_supported); else a
 * usage error naming the cluster, its stack, the stacks KIND launches and
 * the kinds the stack has (PLANNER_E_USAGE). */
int cli_check_emit_stack(emit_kind kind, const cluster *c);

/* What the model reader assumed or left out (model.notes), one line each on
 * stderr: "planner: PATH: warning: NOTE".  Every command that plans from a
 * model file (plan, size) prints them. */
void cli_model_warnings(const char *path, const model *m);

/* --models ARG of validate, calibrate and crossval: PLANNER_OK for NULL,
 * "none" or a folder; else prints why ARG cannot be the model library and
 * returns PLANNER_E_IO (a missing folder is never read as "no library"). */
int cli_check_models(const char *arg);

/* Prints the blank-separated words of `text` to out, each line indented
 * by `indent` blanks and, where the words allow, no wider than `width`. */
void cli_print_wrapped(FILE *out, const char *text, int indent, int width);

/* The exit-code table, as printed at the end of every --help. */
extern const char cli_exit_codes_help[];

#endif
