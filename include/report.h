/* report.h: the plan's output for people (a table and the winner's
 * breakdowns) and for programs (JSON, schema in README "JSON output"). */
#ifndef PLANNER_REPORT_H
#define PLANNER_REPORT_H

#include <stdio.h>
#include "search.h"

void report_table(FILE *out, const model *m, const cluster *c,
                  const search_options *opts, const search_result *res);
void report_json(FILE *out, const model *m, const cluster *c,
                 const search_options *opts, const search_result *res);
/* No plan fits: the closest miss and what would make it fit. */
void report_infeasible(FILE *out, const model *m, const cluster *c,
                       const search_result *res);

#endif
