/* harness.h: the fuzz targets' bodies, shared by the libFuzzer entry points
 * (tests/fuzz/fuzz_*.c, built by `make fuzz`) and by the replay test
 * (tests/test_replay.c, part of `make check`), so a corpus or regression file
 * goes through exactly the same code in both.
 *
 * A harness takes arbitrary bytes, runs one parser of untrusted input on them
 * and checks what came back: on success the result satisfies the invariants
 * the rest of planner relies on (counts > 0 and within limits, figures finite
 * and positive, indices in range); on failure the error is complete (a status,
 * a message, the file name).  It returns 0 when everything holds, else -1 and
 * a description in msg.  Crashes, leaks and undefined behaviour are caught by
 * the sanitizers the harness is built with, not by the harness.
 *
 * Inputs are handed to the parsers in an allocation of exactly `size` bytes
 * (no NUL after them), so reading past the end is an ASan report.
 */
#ifndef PLANNER_HARNESS_H
#define PLANNER_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef int (*harness_fn)(const uint8_t *data, size_t size, char *msg, int msg_size);

typedef struct harness_target {
    const char *name;     /* corpus folder: tests/fuzz/corpus/NAME, regress/NAME */
    harness_fn fn;
} harness_target;

/* Every target; the replay test walks this table. */
extern const harness_target harness_targets[];
extern const size_t harness_target_count;

/* A model description: our JSON or a HF config.json (model.h). */
int harness_model(const uint8_t *data, size_t size, char *msg, int msg_size);

/* A YAML cluster spec (cluster.h). */
int harness_cluster(const uint8_t *data, size_t size, char *msg, int msg_size);

/* --fix "tp=8,pp=16,..." (search.h constraints_parse). */
int harness_constraints(const uint8_t *data, size_t size, char *msg, int msg_size);

/* A quantity with a unit (units.h units_parse, then units_format).  The first
 * byte picks the kind (bits 0-1) and allow_zero (bit 2); the rest is the text. */
int harness_units(const uint8_t *data, size_t size, char *msg, int msg_size);

/* A sweep grid file (search/sweep_grid.h sweep_grid_parse_buffer), then point decoding. */
int harness_sweep(const uint8_t *data, size_t size, char *msg, int msg_size);

/* One sweep axis: the first byte picks the axis (mod SWEEP_DIM_COUNT), the
 * rest is the values text ("8,16..64x2"); the text also goes through
 * sweep_shard_parse ("i/n"). */
int harness_sweep_axis(const uint8_t *data, size_t size, char *msg, int msg_size);

/* A small layer-partition problem decoded from the bytes (up to 24 layers,
 * 8 stages, 3 GPU classes, edge values included), solved by the DP and by
 * GLPK's ILP (partition.h): neither may crash or abort, both must agree on
 * feasibility and on the optimal bottleneck (within 1e-4 relative), and every
 * split must fit.  TIMEOUT and SOLVER_ERROR are accepted non-answers. */
int harness_partition(const uint8_t *data, size_t size, char *msg, int msg_size);

/* A calibration file (calibration.h calibration_load, through a temporary
 * file): constants finite and in range; on error the defaults untouched. */
int harness_calibration(const uint8_t *data, size_t size, char *msg, int msg_size);

/* A runs file (validate.h validation_load, through a temporary file): every
 * run's model and cluster keep model.h's and cluster.h's invariants. */
int harness_runs(const uint8_t *data, size_t size, char *msg, int msg_size);

/* Hostile names into every emitted format (out/emit.h): the bytes are the
 * model, cluster, first and second node group and first GPU names,
 * NUL-separated.  The megatron, slurm and torchrun scripts of a fixed plan,
 * lexed as the shell reads them (shell_words.h), must equal the scripts
 * written with placeholder names but for the names, and every byte of a
 * name must be literal to the shell: the shell-word property. */
int harness_emit(const uint8_t *data, size_t size, char *msg, int msg_size);

/* One-time set-up for both users (routes jansson through alloc.h). */
void harness_init(void);

/* libFuzzer's entry points, defined by each fuzz_*.c through HARNESS_FUZZER. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Defines the libFuzzer entry points for one harness: an invariant failure
 * aborts, which libFuzzer records as a crash with its input. */
#define HARNESS_FUZZER(fn)                                                     \
    int LLVMFuzzerInitialize(int *argc, char ***argv)                          \
    {                                                                          \
        (void)argc;                                                            \
        (void)argv;                                                            \
        harness_init();                                                        \
        return 0;                                                              \
    }                                                                          \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)               \
    {                                                                          \
        char msg_[1024];                                                       \
        if (fn(data, size, msg_, (int)sizeof msg_) != 0) {                     \
            fprintf(stderr, "harness %s: %s\n", #fn, msg_);                    \
            abort();                                                           \
        }                                                                      \
        return 0;                                                              \
    }

#endif
