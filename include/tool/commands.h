/* commands.h: the subcommands of the planner binary; main.c dispatches.
 * Each returns a planner_status as the process exit code, having printed any
 * error itself.  argv[0] is the subcommand name (or "planner" for plan). */
#ifndef PLANNER_COMMANDS_H
#define PLANNER_COMMANDS_H

int cmd_plan(int argc, char **argv);        /* cmd_plan.c  (the default) */
int cmd_validate(int argc, char **argv);    /* cmd_validate.c  planner validate FILE */
int cmd_size(int argc, char **argv);        /* cmd_size.c  planner size ... */
int cmd_sweep(int argc, char **argv);       /* sweep.c     planner sweep ... */
int cmd_calibrate(int argc, char **argv);   /* cmd_calibrate.c  planner calibrate ... */
int cmd_crossval(int argc, char **argv);    /* cmd_calibrate.c  planner crossval ... */

#endif
