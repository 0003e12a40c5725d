/* fuzz_cluster.c: libFuzzer entry for the cluster loader (harness.c). */
#include <stdio.h>
#include <stdlib.h>
#include "harness.h"

HARNESS_FUZZER(harness_cluster)
