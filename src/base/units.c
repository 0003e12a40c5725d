/* units.c: the one parser for quantities with units (see units.h).
 *
 * A quantity is a plain decimal number ([+]digits[.digits][e[+-]digits], no
 * hex, inf or nan), optional spaces, then a unit from the table of its kind.
 * Units are case-sensitive, so "Gbps" (bits) and "GBps" (bytes) never mix up.
 * Results are SI base units: bytes/s, seconds, bytes, FLOP/s.  Invariant: a
 * successful parse gives a finite value > 0 (or == 0 when allow_zero).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/units.h"

typedef struct unit_def {
    const char *suffix;
    double scale;
} unit_def;

static const unit_def k_bandwidth[] = {
    {"bps", 1.0 / 8}, {"b/s", 1.0 / 8}, {"Kbps", 1e3 / 8}, {"Kb/s", 1e3 / 8},
    {"Mbps", 1e6 / 8}, {"Mb/s", 1e6 / 8}, {"Gbps", 1e9 / 8}, {"Gb/s", 1e9 / 8},
    {"Tbps", 1e12 / 8}, {"Tb/s", 1e12 / 8},
    {"Bps", 1}, {"B/s", 1}, {"KBps", 1e3}, {"KB/s", 1e3}, {"MBps", 1e6},
    {"MB/s", 1e6}, {"GBps", 1e9}, {"GB/s", 1e9}, {"TBps", 1e12}, {"TB/s", 1e12},
    {"GiB/s", 1073741824.0}, {NULL, 0}};

static const unit_def k_time[] = {
    {"ns", 1e-9}, {"us", 1e-6}, {"\xC2\xB5s", 1e-6}, {"\xCE\xBCs", 1e-6},
    {"ms", 1e-3}, {"s", 1}, {"min", 60}, {"h", 3600}, {"d", 86400}, {NULL, 0}};

static const unit_def k_size[] = {
    {"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
    {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
    {"TiB", 1099511627776.0}, {NULL, 0}};

static const unit_def k_flops[] = {
    {"FLOPS", 1}, {"FLOP/s", 1}, {"KFLOPS", 1e3}, {"KFLOP/s", 1e3},
    {"MFLOPS", 1e6}, {"MFLOP/s", 1e6}, {"GFLOPS", 1e9}, {"GFLOP/s", 1e9},
    {"TFLOPS", 1e12}, {"TFLOP/s", 1e12}, {"PFLOPS", 1e15}, {"PFLOP/s", 1e15},
    {NULL, 0}};

static const unit_def *unit_table(unit_kind kind)
{
    switch (kind) {
    case UNIT_BANDWIDTH: return k_bandwidth;
    case UNIT_TIME: return k_time;
    case UNIT_SIZE: return k_size;
    case UNIT_FLOPS: return k_flops;
    }
    return k_size;
}

static const char *unit_example(unit_kind kind)
{
    switch (kind) {
    case UNIT_BANDWIDTH: return "a bandwidth such as 400Gbps or 450GB/s";
    case UNIT_TIME: return "a time such as 5us or 2ms";
    case UNIT_SIZE: return "a size such as 80GB or 80GiB";
    case UNIT_FLOPS: return "a rate such as 989TFLOPS";
    }
    return "a quantity";
}

static const char *unit_known(unit_kind kind)
{
    switch (kind) {
    case UNIT_BANDWIDTH:
        return "bps b/s (bits) or Bps B/s (bytes), with K M G T prefixes";
    case UNIT_TIME: return "ns us ms s min h d";
    case UNIT_SIZE: return "B KB MB GB TB KiB MiB GiB TiB";
    case UNIT_FLOPS: return "FLOPS or FLOP/s, with K M G T P prefixes";
    }
    return "";
}

/* Length of the plain decimal number at the start of s, 0 if none. */
static size_t scan_number(const char *s)
{
    size_t i = 0, digits = 0;
    if (s[i] == '+' || s[i] == '-')
        i++;
    while (s[i] >= '0' && s[i] <= '9') {
        i++;
        digits++;
    }
    if (s[i] == '.') {
        i++;
        while (s[i] >= '0' && s[i] <= '9') {
            i++;
            digits++;
        }
    }
    if (digits == 0)
        return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t j = i + 1, exp_digits = 0;
        if (s[j] == '+' || s[j] == '-')
            j++;
        while (s[j] >= '0' && s[j] <= '9') {
            j++;
            exp_digits++;
        }
        if (exp_digits > 0)
            i = j;
    }
    return i;
}

planner_status units_parse(double *out, const char *text, unit_kind kind, bool allow_zero,
                           planner_error *err)
{
    char num[64];
    size_t n;
    const char *p, *unit;
    const unit_def *u;
    double v, scale = 1.0;

    if (text == NULL)
        text = "";
    p = text;
    while (*p == ' ' || *p == '\t')
        p++;
    n = scan_number(p);
    if (n == 0 || n >= sizeof num) {
        return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL, "expected %s, got '%s'",
                         unit_example(kind), text);
    }
    memcpy(num, p, n);
    num[n] = '\0';
    v = strtod(num, NULL);
    unit = p + n;
    while (*unit == ' ')
        unit++;
    if (*unit != '\0') {
        size_t ulen = strlen(unit);
        while (ulen > 0 && (unit[ulen - 1] == ' ' || unit[ulen - 1] == '\t'))
            ulen--;
        for (u = unit_table(kind); u->suffix != NULL; u++)
            if (strlen(u->suffix) == ulen && strncmp(u->suffix, unit, ulen) == 0)
                break;
        if (u->suffix == NULL) {
            return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL,
                             "unknown unit in '%s' (known: %s)", text, unit_known(kind));
        }
        scale = u->scale;
    }
    v *= scale;
    if (!isfinite(v)) {
        return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL, "'%s' is out of range", text);
    }
    if (v < 0 || (v == 0 && !allow_zero)) {
        return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL, "must be %s, got '%s'",
                         allow_zero ? ">= 0" : "> 0", text);
    }
    *out = v;
    return PLANNER_OK;
}

/* Writes value/scale with three significant figures and the unit. */
static void fmt3(char *buf, int size, double v, const char *unit)
{
    double a = fabs(v);
    int decimals = a >= 99.95 ? 0 : a >= 9.995 ? 1 : 2;
    snprintf(buf, (size_t)size, "%.*f %s", decimals, v, unit);
}

void units_format(double value, unit_kind kind, char *buf, int size)
{
    static const char *const bw[] = {"B/s", "KB/s", "MB/s", "GB/s", "TB/s", "PB/s"};
    static const char *const fl[] = {"FLOP/s", "KFLOP/s", "MFLOP/s", "GFLOP/s",
                                     "TFLOP/s", "PFLOP/s", "EFLOP/s"};
    static const char *const sz[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double a = fabs(value);
    int i = 0;

    if (size <= 0)
        return;
    switch (kind) {
    case UNIT_BANDWIDTH:
        while (a >= 999.5 && i < 5) {
            a /= 1000;
            value /= 1000;
            i++;
        }
        fmt3(buf, size, value, bw[i]);
        return;
    case UNIT_FLOPS:
        while (a >= 999.5 && i < 6) {
            a /= 1000;
            value /= 1000;
            i++;
        }
        fmt3(buf, size, value, fl[i]);
        return;
    case UNIT_SIZE:
        while (a >= 1023.5 && i < 5) {
            a /= 1024;
            value /= 1024;
            i++;
        }
        fmt3(buf, size, value, sz[i]);
        return;
    case UNIT_TIME:
        if (a == 0 || a >= 1)
            fmt3(buf, size, value, "s");
        else if (a >= 1e-3)
            fmt3(buf, size, value * 1e3, "ms");
        else if (a >= 1e-6)
            fmt3(buf, size, value * 1e6, "us");
        else
            fmt3(buf, size, value * 1e9, "ns");
        return;
    }
    snprintf(buf, (size_t)size, "%g", value);
}
