/* fuzz_emit.c: libFuzzer entry for the emitters with hostile names (harness.c). */
#include <stdio.h>
#include <stdlib.h>
#include "harness.h"

HARNESS_FUZZER(harness_emit)
