/* TEMPORARY stub so the tree links; the validation work replaces it. */
#include "cli.h"
#include "commands.h"
int cmd_validate(int argc, char **argv)
{ (void)argc; (void)argv; return cli_usage_error("", "validate: not implemented"); }
