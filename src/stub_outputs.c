/* TEMPORARY stubs so the tree links; the launch/sweep/trace work replaces them. */
#include "commands.h"
#include "trace.h"
#include "cli.h"

int trace_write_chrome(FILE *out, const model *m, const cluster *c,
                       const cost_params *p, const plan *pl)
{ (void)out; (void)m; (void)c; (void)p; (void)pl; return -1; }
int trace_write_svg(FILE *out, const model *m, const cluster *c,
                    const cost_params *p, const plan *pl)
{ (void)out; (void)m; (void)c; (void)p; (void)pl; return -1; }
int cmd_sweep(int argc, char **argv)
{ (void)argc; (void)argv; return cli_usage_error("", "sweep: not implemented"); }
