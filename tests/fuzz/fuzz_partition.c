/* fuzz_partition.c: libFuzzer entry for the layer partitioners, DP vs GLPK ILP (harness.c). */
#include <stdio.h>
#include <stdlib.h>
#include "harness.h"

HARNESS_FUZZER(harness_partition)
