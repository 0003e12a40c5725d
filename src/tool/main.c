/* main.c: the planner binary.  Dispatches to a subcommand; plan is the
 * default.  Every command returns its exit status (error.h's table). */
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "tool/commands.h"

int main(int argc, char **argv)
{
    alloc_init();
    if (argc >= 2) {
        const char *sub = argv[1];
        if (strcmp(sub, "plan") == 0)
            return cmd_plan(argc - 1, argv + 1);
        if (strcmp(sub, "validate") == 0)
            return cmd_validate(argc - 1, argv + 1);
        if (strcmp(sub, "sweep") == 0)
            return cmd_sweep(argc - 1, argv + 1);
        if (strcmp(sub, "calibrate") == 0)
            return cmd_calibrate(argc - 1, argv + 1);
        if (strcmp(sub, "crossval") == 0)
            return cmd_crossval(argc - 1, argv + 1);
    }
    return cmd_plan(argc, argv);
}
