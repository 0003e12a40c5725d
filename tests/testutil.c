/* testutil.c: see testutil.h. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include "cost/params.h"
#include "model/knobs.h"
#include "testutil.h"

const char *tu_shared_dir(void)
{
    struct stat st;
    const char *env = getenv("PLANNER_SHARED");
    if (env != NULL && stat(env, &st) == 0 && S_ISDIR(st.st_mode))
        return env;
    if (stat("../shared", &st) == 0 && S_ISDIR(st.st_mode))
        return "../shared";
    return NULL;
}

void tu_skip(const char *name, const char *reason)
{
    printf("SKIP %s: %s\n", name, reason);
    fflush(stdout);
}

int tu_run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

planner_error *tu_err(planner_error *err)
{
    error_clear(err);
    return err;
}

model *tu_model_load(const char *path, run_spec *run)
{
    planner_error err = PLANNER_ERROR_INIT;
    model *m = NULL;
    ck_assert_msg(model_load(&m, run, path, NULL, &err) == PLANNER_OK, "%s: %s", path, err.msg);
    return m;
}

cluster *tu_cluster_load(const char *path)
{
    planner_error err = PLANNER_ERROR_INIT;
    cluster *c = NULL;
    ck_assert_msg(cluster_load(&c, path, &err) == PLANNER_OK, "%s: %s", path, err.msg);
    return c;
}

planner_status tu_search(search_result *res, const model *m, const run_spec *run,
                         const cluster *c, const char *fix, bool exhaustive, int top)
{
    return tu_search_headroom(res, m, run, c, fix, exhaustive, top, 0.0);
}

void tu_search_options(search_options *o, const run_spec *run, const char *fix, int top)
{
    planner_error err = PLANNER_ERROR_INIT;
    search_options_default(o);
    o->top_n = top;
    o->gbs = run->global_batch;
    o->seq_len = run->seq_len;
    if (fix != NULL)
        ck_assert_msg(constraints_parse(&o->fix, fix, &err) == PLANNER_OK, "%s", err.msg);
}

planner_status tu_search_headroom(search_result *res, const model *m, const run_spec *run,
                                  const cluster *c, const char *fix, bool exhaustive, int top,
                                  double mem_headroom)
{
    search_options o;
    cost_params p;
    planner_error err = PLANNER_ERROR_INIT;
    planner_status rc;
    tu_search_options(&o, run, fix, top);
    o.exhaustive = exhaustive;
    o.mem_headroom = mem_headroom;
    cost_params_default(&p);
    rc = search_run(res, m, c, &p, &o, &err);
    ck_assert_msg(rc == PLANNER_OK || rc == PLANNER_E_INFEASIBLE, "search: %s", err.msg);
    return rc;
}
