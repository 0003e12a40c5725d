/* text.c: checks names from inputs for control characters and malformed
 * UTF-8 (text.h says why).  UTF-8 is decoded by RFC 3629's table: a lead
 * byte C2..F4, continuation bytes 80..BF, with E0 needing A0..BF, ED
 * 80..9F (no surrogates), F0 90..BF and F4 80..8F (nothing past U+10FFFF)
 * as its second byte.  And the one format of the counts the report prints
 * (text_count). */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "base/text.h"

/* Length of the UTF-8 sequence at p and its code point in *cp, or 0 when
 * malformed. */
static int utf8_decode(const unsigned char *p, unsigned long *cp)
{
    unsigned char b = p[0], lo = 0x80, hi = 0xbf;
    int n, i;
    if (b < 0x80) {
        *cp = b;
        return 1;
    }
    if (b >= 0xc2 && b <= 0xdf)
        n = 2;
    else if (b >= 0xe0 && b <= 0xef)
        n = 3;
    else if (b >= 0xf0 && b <= 0xf4)
        n = 4;
    else
        return 0;
    if (b == 0xe0)
        lo = 0xa0;
    else if (b == 0xed)
        hi = 0x9f;
    else if (b == 0xf0)
        lo = 0x90;
    else if (b == 0xf4)
        hi = 0x8f;
    *cp = b & (0xff >> (n + 1));
    for (i = 1; i < n; i++) {
        unsigned char c = p[i];
        if (c < (i == 1 ? lo : 0x80) || c > (i == 1 ? hi : 0xbf))
            return 0;
        *cp = (*cp << 6) | (c & 0x3f);
    }
    return n;
}

planner_status text_check_name(const char *s, planner_error *err)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t at = 0;
    while (p[at] != '\0') {
        unsigned long cp;
        int n = utf8_decode(p + at, &cp);
        if (n == 0)
            return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL,
                             "a byte that is not UTF-8 (0x%02x) at byte %zu", p[at], at + 1);
        if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f))
            return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL,
                             "a control character (U+%04lX) at byte %zu", cp, at + 1);
        at += (size_t)n;
    }
    return PLANNER_OK;
}

int text_equal_nocase(const char *a, const char *b)
{
    for (; *a != '\0' && *b != '\0'; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == '\0' && *b == '\0';
}

void text_vappendf(char *buf, size_t size, const char *fmt, va_list ap)
{
    size_t used = strlen(buf);
    if (used + 1 >= size)
        return;
    vsnprintf(buf + used, size - used, fmt, ap);
}

void text_appendf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    text_vappendf(buf, size, fmt, ap);
    va_end(ap);
}

void text_count(double v, char *buf, size_t size)
{
    char digits[32], out[48];
    int n, o = 0;
    if (!isfinite(v) || v < 0 || v > 9e18) {
        snprintf(buf, size, "%s", isfinite(v) ? "-" : "inf");
        return;
    }
    snprintf(digits, sizeof digits, "%.0f", v);
    n = (int)strlen(digits);
    if (n > 20)
        n = 20;
    for (int i = 0; i < n; i++) {
        out[o++] = digits[i];
        if ((n - 1 - i) % 3 == 0 && i != n - 1)
            out[o++] = ',';
    }
    out[o] = '\0';
    if (size > 0) {
        size_t len = strlen(out) < size - 1 ? strlen(out) : size - 1;
        memcpy(buf, out, len);
        buf[len] = '\0';
    }
}
