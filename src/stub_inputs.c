/* TEMPORARY stubs so the tree links; the inputs work replaces them. */
#include <string.h>
#include "catalog.h"
#include "cluster.h"
#include "model.h"
#include "show_inputs.h"
#include "units.h"

planner_status cluster_load(const char *path, cluster **out, planner_error *err)
{
    *out = NULL;
    return error_set(err, PLANNER_E_INPUT, path, 0, 0, NULL, "cluster loader not implemented");
}
void cluster_free(cluster *c) { (void)c; }
void show_inputs(FILE *out, const model *m, const cluster *c) { (void)out; (void)m; (void)c; }
