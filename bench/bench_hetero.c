/* bench_hetero.c: wall time of searches on heterogeneous clusters (issue 4).
 *
 * Usage: bench_hetero [-r REPEATS] [-t ILP_SECONDS]
 * Runs, for each case below, the full search REPEATS times (default 5) with
 * the DP partition and with the ILP partition (--partition ilp, time limit
 * ILP_SECONDS per solve, default 10 as the CLI), and prints the equivalent
 * command, best and median wall time (search_result.seconds), candidates,
 * the best plan's throughput and stage map, and the placement note:
 *   AMP GPT-2 on 16 T4 and on 12 V100 + 4 T4       target < 20 ms
 *   Llama 3 70B on 32 DGX H100 + 32 DGX A100
 *   Llama 3 70B on 256 H200 + 384 H100 + 384 A100   target < 10 s (ILP)
 * Exits 1 when an input fails to load or a search errs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "bench_common.h"

#define MAX_REPEATS 50

static int bench_one(const char *model_path, const char *cluster_path, partition_solver ps,
                     double ilp_s, int repeats)
{
    bench_case bc;
    search_result keep;
    double t[MAX_REPEATS], median;
    int rc = 1;

    memset(&keep, 0, sizeof keep);
    if (bench_case_load(&bc, model_path, cluster_path) != 0)
        goto cleanup;
    bc.o.partition = ps;
    bc.o.ilp_time_limit_s = ilp_s;
    if (bench_search_repeat(&bc, repeats, t, &keep) != 0)
        goto cleanup;
    median = bench_sort_median(t, repeats);
    printf("planner --model %s --cluster %s --partition %s", model_path, cluster_path,
           ps == PARTITION_ILP ? "ilp" : "dp");
    if (ps == PARTITION_ILP)
        printf(" --ilp-time-limit %g", ilp_s);
    printf("\n");
    printf("  %d GPUs, %d runs: best %.1f ms, median %.1f ms; %ld candidates (%ld feasible)\n",
           cluster_total_gpus(bc.c), repeats, 1e3 * t[0], 1e3 * median, keep.candidates,
           keep.feasible);
    if (keep.n_top > 0) {
        const strategy *s = &keep.top[0].s;
        printf("  best: tp %d pp %d dp %d mbs %d, %.0f tokens/s; layers", s->tp, s->pp, s->dp,
               s->mbs, keep.top[0].e.tokens_per_s);
        for (int i = 0; i < s->n_stages; i++)
            printf("%s%d@%s", i ? " " : " ", s->stage[i].n_layers,
                   bc.c->group[s->stage[i].group].gpu.name);
        printf("\n");
    }
    if (keep.placement_note[0] != '\0')
        printf("  %s\n", keep.placement_note);
    rc = 0;
cleanup:
    search_result_free(&keep);
    bench_case_free(&bc);
    return rc;
}

int main(int argc, char **argv)
{
    static const char *const cases[][2] = {
        {"configs/amp-gpt2.json", "clusters/amp-4xg4dn.yaml"},
        {"configs/amp-gpt2.json", "clusters/amp-3xp3-1xg4dn.yaml"},
        {"configs/llama3-70b.json", "clusters/h100-a100-mixed.yaml"},
        {"configs/llama3-70b.json", "clusters/mixed3x1024.yaml"},
    };
    int repeats = 5, rc = 0;
    double ilp_s = 10.0;
    alloc_init();
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc || (strcmp(argv[i], "-r") != 0 && strcmp(argv[i], "-t") != 0)) {
            fprintf(stderr, "usage: bench_hetero [-r REPEATS] [-t ILP_SECONDS]\n");
            return 2;
        }
        if (strcmp(argv[i], "-r") == 0) {
            if (bench_parse_int(argv[i + 1], 1, MAX_REPEATS, &repeats) != 0)
                repeats = 0;   /* refused below */
        } else {
            char *end;
            ilp_s = strtod(argv[i + 1], &end);
            if (end == argv[i + 1] || *end != '\0')
                ilp_s = 0;     /* refused below */
        }
    }
    if (repeats < 1 || repeats > MAX_REPEATS || !(ilp_s > 0)) {
        fprintf(stderr, "bench_hetero: -r takes 1..%d, -t a positive time\n", MAX_REPEATS);
        return 2;
    }
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (int ps = 0; ps < 2; ps++)
            rc |= bench_one(cases[k][0], cases[k][1], ps ? PARTITION_ILP : PARTITION_DP, ilp_s,
                            repeats);
    return rc;
}
