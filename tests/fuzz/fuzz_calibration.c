/* fuzz_calibration.c: libFuzzer entry for the calibration file reader (harness.c). */
#include <stdio.h>
#include <stdlib.h>
#include "harness.h"

HARNESS_FUZZER(harness_calibration)
