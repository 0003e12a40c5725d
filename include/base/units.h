/* units.h: the one parser for quantities with units in input files.
 *
 * Accepted (case-sensitive suffixes, optional space before the unit):
 *   bandwidth  "400Gbps" "400 Gb/s" (bits)  "450GB/s" "450GBps" (bytes), also
 *              K/M/G/T prefixes; a bare number is bytes/s.  -> bytes per second
 *   time       "5us" "5 µs" "2ms" "1s" "10ns" "5min" "2h" "90d"; bare number is
 *              seconds -> seconds
 *   size       "80GB" (10^9) "80GiB" (2^30) "512MiB" ...; bare = bytes -> bytes
 *   flops      "989TFLOPS" "989 TFLOP/s" "1.9PFLOPS"; bare = FLOP/s  -> FLOP/s
 * Values must be finite and > 0 (zero is allowed where `allow_zero`).
 */
#ifndef PLANNER_UNITS_H
#define PLANNER_UNITS_H

#include <stdbool.h>
#include "base/error.h"

typedef enum unit_kind {
    UNIT_BANDWIDTH,  /* -> bytes/s */
    UNIT_TIME,       /* -> seconds */
    UNIT_SIZE,       /* -> bytes */
    UNIT_FLOPS       /* -> FLOP/s */
} unit_kind;

/* Parses `text` as a quantity of `kind` into *out (SI base units above).
 * PLANNER_E_INPUT with the message in *err (no file or line: the caller
 * knows where the text came from); *out is untouched on failure. */
planner_status units_parse(double *out, const char *text, unit_kind kind, bool allow_zero,
                           planner_error *err);

/* Formats a value for people: "1.23 TB/s", "450 GB/s", "5.0 us", "79.6 GiB". */
void units_format(double value, unit_kind kind, char *buf, int size);

#endif
