/* fuzz_runs.c: libFuzzer entry for the runs file reader (harness.c). */
#include <stdio.h>
#include <stdlib.h>
#include "harness.h"

HARNESS_FUZZER(harness_runs)
