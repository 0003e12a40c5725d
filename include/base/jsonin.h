/* jsonin.h: the one JSON input layer.  Every loader of a JSON file (model
 * descriptions, validation runs, calibration files) parses through it, so
 * jansson's quirks are handled here once:
 *   - duplicate keys are refused (JSON_REJECT_DUPLICATES);
 *   - nesting deeper than JSONIN_MAX_DEPTH is refused before jansson
 *     recurses (its own limit is 2048 levels);
 *   - a NUL byte is refused (jansson 2.14 skips one that follows a token);
 *   - an allocation failure inside json_loadb is "out of memory" (exit 70),
 *     never a syntax error (2.14 reports it inconsistently: an empty text,
 *     or a bogus syntax error);
 *   - jansson gives positions for syntax errors only: jsonin_locate() turns
 *     a key path into the 1-based line and column of that key in the text,
 *     so schema errors print as `planner: FILE:LINE:COL: path: message`.
 * Columns count characters (UTF-8 continuation bytes do not count).
 */
#ifndef PLANNER_JSONIN_H
#define PLANNER_JSONIN_H

#include <jansson.h>
#include <stddef.h>
#include "base/error.h"

#define JSONIN_MAX_DEPTH 64   /* nested objects and arrays */
#define JSONIN_PATH_MAX 16    /* elements of a key path kept; deeper ones ignored */

/* A key path into a document: object keys and array indices.  Keys are
 * borrowed (from the parsed tree or string literals), never copied. */
typedef struct jsonin_path {
    int n;
    struct {
        const char *key;   /* NULL: array element `index` */
        size_t index;
    } e[JSONIN_PATH_MAX];
} jsonin_path;

#define JSONIN_PATH_ROOT {0, {{NULL, 0}}}

/* A parsed document: the text it came from (borrowed: it must outlive the
 * document), the tree (owned; jsonin_close releases it), and where its
 * errors go. */
typedef struct jsonin_doc {
    const char *file;        /* the name in messages */
    const char *text;
    size_t len;
    json_t *root;
    const char *path_root;   /* first word of key paths in messages ("model"), or "" */
    planner_error *err;
} jsonin_doc;

/* Parses text[0..len) as one JSON value into *doc.  Errors (a NUL byte,
 * nesting, syntax, a duplicate key: PLANNER_E_INPUT with the position; out
 * of memory: PLANNER_E_INTERNAL) go to *err and leave doc->root NULL.
 * `path_root` (may be NULL) starts the key paths jsonin_fail() writes.
 * jsonin_close(doc) is safe after success and failure alike. */
planner_status jsonin_parse(jsonin_doc *doc, const char *text, size_t len, const char *file,
                            const char *path_root, planner_error *err);

/* Releases doc->root (NULL-safe). */
void jsonin_close(jsonin_doc *doc);

/* The path p with one more element: object key `key`, or array element
 * `index`.  A path already JSONIN_PATH_MAX long comes back unchanged. */
jsonin_path jsonin_key(const jsonin_path *p, const char *key);
jsonin_path jsonin_index(const jsonin_path *p, size_t index);

/* Writes p as text: `root` (may be NULL or "") then ".key" and "[index]"
 * for each element (no dot before a first key when root is empty):
 * ("model", hidden) -> "model.hidden"; ("", runs[0].id) -> "runs[0].id". */
void jsonin_path_format(const jsonin_path *p, const char *root, char *buf, size_t size);

/* The 1-based line and column in doc->text (valid JSON: a document
 * jsonin_parse accepted) of the last element of p: the key's opening quote,
 * or the array element's first character; the empty path gives the root
 * value.  Where the path stops matching (a key that is not there, an index
 * past the end, a scalar where a container was expected), the innermost
 * value found on it. */
void jsonin_locate(const jsonin_doc *doc, const jsonin_path *p, int *line, int *col);

/* Sets an input error (PLANNER_E_INPUT) in doc->err at p's position, with
 * the message "PATH: message" (PATH from jsonin_path_format(p,
 * doc->path_root)), or just the message when PATH is empty (an error
 * already set is kept: the first error wins).  Returns PLANNER_E_INPUT. */
planner_status jsonin_fail(const jsonin_doc *doc, const jsonin_path *p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
