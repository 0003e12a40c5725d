/* test_replay.c: every fuzz corpus and regression input, replayed through the
 * fuzz harnesses (tests/fuzz/harness.c) without libFuzzer.
 *
 * For each target in harness_targets, every file under
 * tests/fuzz/corpus/NAME/ and tests/fuzz/regress/NAME/ is read and handed to
 * the harness; the test fails if a harness reports a broken invariant, and,
 * under `make sanitize`, on any sanitizer report.  A target without a single
 * corpus file fails too, so a lost corpus cannot pass silently.  Files are
 * taken in name order; each path is printed before it runs, so the log names
 * the input of a crash.
 *
 * tests/fuzz/known/NAME/ holds open findings in code owned elsewhere (broken
 * invariants, never crashes: see tests/fuzz/known/README): they are replayed
 * and reported in the log, without failing the test; one that passes is
 * reported as fixed, to be moved into regress/. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "harness.h"
#include "testutil.h"

#define REPLAY_MAX_BYTES (4L * 1024 * 1024)

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads `path` into an exact-size allocation; -1 on error. */
static int read_file(const char *path, uint8_t **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    long n;
    uint8_t *buf = NULL;
    int rc = -1;

    if (f == NULL)
        return -1;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || n > REPLAY_MAX_BYTES ||
        fseek(f, 0, SEEK_SET) != 0)
        goto cleanup;
    buf = pl_malloc(n > 0 ? (size_t)n : 1);
    if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n)
        goto cleanup;
    *out = buf;
    *len = (size_t)n;
    buf = NULL;
    rc = 0;
cleanup:
    pl_free(buf);
    fclose(f);
    return rc;
}

/* Replays every regular file of `dir` through `t`; returns the file count.
 * `known`: report broken invariants instead of failing on them. */
static int replay_dir(const harness_target *t, const char *dir, int known)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int count = 0;

    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            names = pl_realloc(names, cap * sizeof *names);
            ck_assert_ptr_nonnull(names);
        }
        names[n] = pl_strdup(e->d_name);
        ck_assert_ptr_nonnull(names[n]);
        n++;
    }
    closedir(d);
    if (n > 0)
        qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        char path[1024], msg[1024];
        uint8_t *data = NULL;
        size_t len = 0;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        fprintf(stderr, "replay %s\n", path);
        ck_assert_msg(read_file(path, &data, &len) == 0, "cannot read %s", path);
        msg[0] = '\0';
        int rc = t->fn(data, len, msg, (int)sizeof msg);
        if (known)
            fprintf(stderr, "replay %s: %s\n", path,
                    rc == 0 ? "FIXED, move it to regress/" : msg);
        else
            ck_assert_msg(rc == 0, "%s: %s", path, msg);
        pl_free(data);
        pl_free(names[i]);
        count++;
    }
    pl_free(names);
    return count;
}

START_TEST(replay_target)
{
    const harness_target *t = &harness_targets[_i];
    char dir[512];
    int corpus, regress, known;

    snprintf(dir, sizeof dir, "tests/fuzz/corpus/%s", t->name);
    corpus = replay_dir(t, dir, 0);
    snprintf(dir, sizeof dir, "tests/fuzz/regress/%s", t->name);
    regress = replay_dir(t, dir, 0);
    snprintf(dir, sizeof dir, "tests/fuzz/known/%s", t->name);
    known = replay_dir(t, dir, 1);
    fprintf(stderr, "replay %s: %d corpus + %d regression inputs (+ %d known findings)\n",
            t->name, corpus, regress, known);
    ck_assert_msg(corpus > 0, "no corpus files for target %s", t->name);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("replay");
    TCase *tc = tcase_create("corpus");
    harness_init();
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, replay_target, 0, (int)harness_target_count);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
