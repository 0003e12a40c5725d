/* jsonout.c: serializing JSON output documents (include/jsonout.h).
 *
 * What it guards against: jansson refuses NaN and inf (json_real returns
 * NULL), so non-finite numbers become null here; and jansson 2.14's dump
 * ignores the failure of some of its writes (an object key's), so json_dumps
 * can return valid-looking JSON with a key lost when an allocation fails.
 * The dump therefore goes through our own callback, which remembers any
 * failed append.  (Parsing the text back to check it is no way out: 2.14's
 * json_loads itself writes out of bounds when an allocation fails on a
 * 30-character key, e.g. "predicted_tokens_per_s_per_gpu".)  Invariant:
 * jsonout_text() returns the whole document or NULL.
 */
#include <math.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "base/jsonout.h"

json_t *jsonout_real(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *jsonout_rounded(double v, bool decimals)
{
    char buf[64];
    if (!isfinite(v))
        return json_null();
    if (decimals && fabs(v) < 1e9)
        snprintf(buf, sizeof buf, "%.6f", v);
    else
        snprintf(buf, sizeof buf, "%.6g", v);
    return json_real(strtod(buf, NULL));
}

/* The dump's output: a growing text.  `failed` remembers a failed append
 * even where jansson ignores the callback's -1 (an object key's). */
typedef struct sink {
    char *text;
    size_t len, cap;
    bool failed;
} sink;

static int sink_put(const char *data, size_t size, void *data_sink)
{
    sink *s = data_sink;
    if (s->failed)
        return -1;
    if (size >= s->cap - s->len) {
        char *p = size < SIZE_MAX - s->len ? pl_grow(s->text, &s->cap, s->len + size + 1, 1, 256)
                                           : NULL;
        if (p == NULL) {
            s->failed = true;
            return -1;
        }
        s->text = p;
    }
    memcpy(s->text + s->len, data, size);
    s->len += size;
    s->text[s->len] = '\0';
    return 0;
}

char *jsonout_text(const json_t *root, size_t flags)
{
    sink s = {NULL, 0, 0, false};

    if (root == NULL)
        return NULL;
    if (json_dump_callback(root, sink_put, &s, flags) != 0 || sink_put("\n", 1, &s) != 0 ||
        s.failed) {
        pl_free(s.text);
        return NULL;
    }
    return s.text;
}
