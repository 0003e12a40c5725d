/* TEMPORARY stubs so the tree links; the calibration work replaces them. */
#include "calibration.h"
#include "cli.h"
#include "commands.h"
int cmd_calibrate(int argc, char **argv)
{ (void)argc; (void)argv; return cli_usage_error("", "calibrate: not implemented"); }
int cmd_crossval(int argc, char **argv)
{ (void)argc; (void)argv; return cli_usage_error("", "crossval: not implemented"); }
planner_status calibration_load(const char *path, cost_params *p, planner_error *err)
{
    (void)p;
    return error_set(err, PLANNER_E_INPUT, path, 0, 0, NULL, "calibration not implemented");
}
