/* testutil.c: see testutil.h. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
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
