/* jsonout.h: JSON output documents built with jansson and serialized once,
 * checked, before anything is written (house rule: no hand-rolled JSON).
 *
 * jsonout_real() makes a number node (null for NaN and inf, which jansson
 * refuses); jsonout_text() serializes a finished tree.  Commands build their
 * document, call jsonout_text(), and write the text in one go, so a failed
 * allocation writes nothing at all.
 */
#ifndef PLANNER_JSONOUT_H
#define PLANNER_JSONOUT_H

#include <jansson.h>
#include <stdbool.h>

/* A real, or null when v is not finite.  A NULL return means out of memory;
 * jansson's set/append calls take that (and fail) without leaking. */
json_t *jsonout_real(double v);

/* v rounded to six significant digits ("%.6g"), or with `decimals` to six
 * decimals ("%.6f", below 1e9 in magnitude; "%.6g" above), as a real (null
 * when not finite): the precision the output promises, and a value that
 * JSON_REAL_PRECISION(15) prints back as that same decimal (at most 15
 * significant digits). */
json_t *jsonout_rounded(double v, bool decimals);

/* Serializes `root` with `flags` (json_dump_callback) and a final newline
 * into a new text (pl_free it), or NULL when root is NULL or any allocation
 * fails: never a partial or damaged document (jansson 2.14's json_dumps can
 * lose an object key when an allocation fails and still succeed). */
char *jsonout_text(const json_t *root, size_t flags);

#endif
