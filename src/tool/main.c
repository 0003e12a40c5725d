/* main.c: the planner binary.  Dispatches to a subcommand; plan is the
 * default.  Every command returns its exit status (error.h's table).
 *
 * Standard streams (jq's rule): a closed stdin/stdout/stderr is held on
 * /dev/null in a mode that makes its use fail (stdio_guard), so no output
 * file takes its number; at exit a failed write of stdout (a full disk, a
 * closed stdout) is an error, exit 4, even for --help and --version, unless
 * the command already failed with its own code. */
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "base/fileio.h"
#include "tool/commands.h"

static int dispatch(int argc, char **argv)
{
    if (argc >= 2) {
        const char *sub = argv[1];
        if (strcmp(sub, "plan") == 0)
            return cmd_plan(argc - 1, argv + 1);
        if (strcmp(sub, "validate") == 0)
            return cmd_validate(argc - 1, argv + 1);
        if (strcmp(sub, "size") == 0)
            return cmd_size(argc - 1, argv + 1);
        if (strcmp(sub, "sweep") == 0)
            return cmd_sweep(argc - 1, argv + 1);
        if (strcmp(sub, "calibrate") == 0)
            return cmd_calibrate(argc - 1, argv + 1);
        if (strcmp(sub, "crossval") == 0)
            return cmd_crossval(argc - 1, argv + 1);
    }
    return cmd_plan(argc, argv);
}

int main(int argc, char **argv)
{
    planner_error err = PLANNER_ERROR_INIT;
    int rc;

    stdio_guard();
    alloc_init();
    rc = dispatch(argc, argv);
    if (stdout_close_checked(&err) != PLANNER_OK && rc == PLANNER_OK) {
        error_print(&err, stderr);
        rc = PLANNER_E_IO;
    }
    return rc;
}
