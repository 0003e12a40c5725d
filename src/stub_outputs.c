/* TEMPORARY stubs so the tree links; the launch/sweep/trace work replaces them. */
#include "commands.h"
#include "cli.h"

int cmd_sweep(int argc, char **argv)
{ (void)argc; (void)argv; return cli_usage_error("", "sweep: not implemented"); }
