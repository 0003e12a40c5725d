/* TEMPORARY stubs so the tree links; the search work replaces them. */
#include <string.h>
#include "report.h"
#include "search.h"

int constraints_parse(const char *text, strategy_constraints *out, char *msg, int msg_size)
{
    (void)text; (void)out;
    snprintf(msg, (size_t)msg_size, "not implemented");
    return -1;
}
void search_options_default(search_options *opts)
{
    strategy_constraints none = STRATEGY_CONSTRAINTS_INIT;
    memset(opts, 0, sizeof *opts);
    opts->top_n = 10;
    opts->fix = none;
    opts->ilp_time_limit_s = 10;
}
planner_status search_run(const model *m, const cluster *c, const cost_params *p,
                          const search_options *opts, search_result *res,
                          planner_error *err)
{
    (void)m; (void)c; (void)p; (void)opts;
    memset(res, 0, sizeof *res);
    return error_set(err, PLANNER_E_INTERNAL, NULL, 0, 0, NULL, "search not implemented");
}
void search_result_free(search_result *res) { (void)res; }
void report_table(FILE *out, const model *m, const cluster *c,
                  const search_options *opts, const search_result *res)
{ (void)out; (void)m; (void)c; (void)opts; (void)res; }
void report_json(FILE *out, const model *m, const cluster *c,
                 const search_options *opts, const search_result *res)
{ (void)out; (void)m; (void)c; (void)opts; (void)res; }
void report_infeasible(FILE *out, const model *m, const cluster *c, const search_result *res)
{ (void)out; (void)m; (void)c; (void)res; }
