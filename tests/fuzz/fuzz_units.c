/* fuzz_units.c: libFuzzer entry for the units parser (harness.c). */
#include <stdio.h>
#include <stdlib.h>
#include "harness.h"

HARNESS_FUZZER(harness_units)
