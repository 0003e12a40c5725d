/* report.h: the plan's output for people (a table and the winner's
 * breakdowns) and for programs (JSON, schema in docs/json-schema.md). */
#ifndef PLANNER_REPORT_H
#define PLANNER_REPORT_H

#include <stdio.h>
#include "search/search.h"
#include "search/size.h"

void report_table(FILE *out, const model *m, const cluster *c,
                  const search_options *opts, const search_result *res);
void report_json(FILE *out, const model *m, const cluster *c,
                 const search_options *opts, const search_result *res);
/* report_json, returning 0, or -1 when the document could not be built
 * (out of memory: nothing is written then) or written. */
int report_json_write(FILE *out, const model *m, const cluster *c,
                      const search_options *opts, const search_result *res);
/* The GPUs of stage i of s: its group's GPU ("T4"), or for a stage
 * spanning groups each group's GPU and count in rank order
 * ("V100-SXM2-16GBx4+T4x4"). */
void report_stage_gpus(const cluster *c, const strategy *s, int i, char *buf, size_t size);

/* No plan fits: the closest miss and what would make it fit. */
void report_infeasible(FILE *out, const model *m, const cluster *c,
                       const search_result *res);

/* planner size: the node counts tried (search/size.h) as a table, or as
 * JSON (0, or -1 when it could not be built or written). */
void report_size_table(FILE *out, const model *m, const cluster *c,
                       const search_options *opts, const size_result *res);
int report_size_json(FILE *out, const model *m, const cluster *c,
                     const search_options *opts, const size_result *res);

#endif
