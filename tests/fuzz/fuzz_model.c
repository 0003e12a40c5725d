/* fuzz_model.c: libFuzzer entry for the model loader (harness.c). */
#include <stdio.h>
#include <stdlib.h>
#include "harness.h"

HARNESS_FUZZER(harness_model)
