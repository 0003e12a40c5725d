/* testutil.h: helpers shared by the Check test programs.
 * Tests run from the repository root (tests/run_tests.sh makes sure). */
#ifndef PLANNER_TESTUTIL_H
#define PLANNER_TESTUTIL_H

#include <check.h>
#include <stdbool.h>
#include "base/error.h"
#include "inputs/cluster.h"
#include "inputs/model.h"
#include "search/search.h"

/* The shared data folder (../shared, or $PLANNER_SHARED), or NULL if absent:
 * tests that need it report a SKIP then (tu_skip). */
const char *tu_shared_dir(void);

/* A check that cannot run here: prints "SKIP NAME: REASON" on stdout, which
 * tests/run_tests.sh counts as skipped (docs/testing.md, "Skipped checks").
 * The test that calls it returns without asserting. */
void tu_skip(const char *name, const char *reason);

/* Exit status of a test program none of whose checks could run (automake's
 * convention): counted as skipped, never as passed. */
#define TU_EXIT_SKIP 77

/* Clears *err and returns it: the error argument of a check whose message
 * the test reads (the first error set wins, so each check gets a fresh one):
 *     ck_assert_int_eq(strategy_check(m, &s, tu_err(&why)), PLANNER_E_INPUT);
 *     ck_assert_ptr_nonnull(strstr(why.msg, "tp > 1")); */
planner_error *tu_err(planner_error *err);

/* Loads model file `path` (our JSON or a HF config.json), asserting that it
 * loads; the run the file gives (its sequence and global batch, else the
 * defaults) into *run, which may be NULL.  Free with model_free. */
model *tu_model_load(const char *path, run_spec *run);

/* Loads cluster file `path`, asserting that it loads.  Free with
 * cluster_free. */
cluster *tu_cluster_load(const char *path);

/* The search the tests run: m on c for `run`'s global batch and sequence,
 * under --fix spec `fix` (NULL: none), the default cost constants, `top`
 * plans kept, pruned or `exhaustive`.  Asserts that it ran (a plan, or none
 * feasible) and returns that status; the result in *res (free with
 * search_result_free), its best plan res->top[0] when PLANNER_OK. */
planner_status tu_search(search_result *res, const model *m, const run_spec *run,
                         const cluster *c, const char *fix, bool exhaustive, int top);

/* The options tu_search() runs with: the defaults, the run's global batch
 * and sequence, the knobs `fix` pins (a --fix spec, asserted to parse; NULL:
 * none), `top` plans kept.  For tests that change an option tu_search does
 * not take, or run search_run themselves. */
void tu_search_options(search_options *o, const run_spec *run, const char *fix, int top);

/* tu_search() with --mem-headroom `mem_headroom` (tu_search: 0). */
planner_status tu_search_headroom(search_result *res, const model *m, const run_spec *run,
                                  const cluster *c, const char *fix, bool exhaustive, int top,
                                  double mem_headroom);

/* Runs one suite with CK_NORMAL output; returns the process exit status. */
int tu_run_suite(Suite *s);

/* |a - b| <= rel * |b| */
#define ck_assert_rel(a, b, rel)                                               \
    do {                                                                       \
        double tu_a_ = (a), tu_b_ = (b);                                       \
        ck_assert_msg(fabs(tu_a_ - tu_b_) <= (rel) * fabs(tu_b_),              \
                      "%s = %.9g, expected %.9g within %.3g%%", #a, tu_a_,     \
                      tu_b_, 100.0 * (rel));                                   \
    } while (0)

#endif
