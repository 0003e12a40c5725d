/* text.h: what a name read from an input may contain (and the format of a
 * printed count, text_count).
 *
 * Names (of a model, a cluster, a node group, a validation run) are data
 * that the planner prints: on terminals, in CSV, JSON, SVG, traces and
 * shell scripts.  A control character there could clear or recolour the
 * user's terminal (ESC sequences), break a CSV row or a script line, and
 * bytes that are not UTF-8 make JSON invalid.  So names are refused at load
 * when they hold any of them: C0 controls and DEL (bytes 0x00-0x1f, 0x7f),
 * C1 controls (U+0080-U+009F: 0x9b is a one-byte CSI on some terminals) and
 * malformed UTF-8 (overlong forms, surrogates, code points past U+10FFFF,
 * truncated sequences) -- RFC 3629 section 4's syntax.
 */
#ifndef PLANNER_BASE_TEXT_H
#define PLANNER_BASE_TEXT_H

#include <stdarg.h>
#include <stddef.h>
#include "base/error.h"

/* PLANNER_OK when `s` is a valid name; PLANNER_E_INPUT with what is wrong
 * (e.g. "a control character (U+001B) at byte 3", no position: the caller
 * adds the key's) in *err.  err may be NULL (no message is formatted). */
planner_status text_check_name(const char *s, planner_error *err);

/* 1 when a and b are equal ignoring ASCII case (catalog and stack names),
 * else 0. */
int text_equal_nocase(const char *a, const char *b);

/* Appends printf-style text to the NUL-terminated string in buf (size
 * bytes), cut at the buffer's end; nothing when it is already full. */
void text_vappendf(char *buf, size_t size, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
void text_appendf(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A non-negative count with thousands separators and no decimals
 * ("863,199"), "-" when negative or past 9e18, "inf" when not finite: the
 * one format of the counts the report prints (search statistics, the "Not
 * searched" list, tokens/s). */
void text_count(double v, char *buf, size_t size);

#endif
