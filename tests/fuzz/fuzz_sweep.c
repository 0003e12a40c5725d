/* fuzz_sweep.c: libFuzzer entry for the sweep grid parser (harness.c). */
#include <stdio.h>
#include <stdlib.h>
#include "harness.h"

HARNESS_FUZZER(harness_sweep)
