/* fuzz_constraints.c: libFuzzer entry for the --fix parser (harness.c). */
#include <stdio.h>
#include <stdlib.h>
#include "harness.h"

HARNESS_FUZZER(harness_constraints)
