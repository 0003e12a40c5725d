/* jsonin.c: parsing JSON input files and locating keys in them
 * (include/jsonin.h).  jansson 2.14 is wrapped here, once, for every loader.
 *
 * Parsing: a pre-scan refuses a NUL byte (2.14 skips one that follows a
 * token, and the locator below assumes none) and nesting deeper than
 * JSONIN_MAX_DEPTH (before jansson recurses), then json_loadb with
 * JSON_REJECT_DUPLICATES.  When json_loadb fails, an allocation failure is
 * told apart from bad input: 2.14 sets json_error_out_of_memory only in some
 * places, leaves the text empty in most others and reports a bogus syntax
 * error in a few (an injected failure, alloc_failed(), says which).
 * 2.14 also ignores a failed growth of its token buffer (16 bytes, doubled
 * as needed) and drops that byte; for a string of 14, 30, 62... characters
 * the byte is the closing quote and its decoder then reads and writes past
 * the buffer (reproduced: {"abcdefghijklmn": 1} with the 4th allocation
 * failing, under ASan).  Handled by bracketing the parse with
 * alloc_json_parse_begin/end (alloc.c): once one allocation of the parse has
 * failed, the rest fail too, so jansson stops at its next allocation.
 *
 * Locating: jansson keeps no positions in the tree, so jsonin_locate()
 * re-scans the text, which jsonin_parse() has accepted (valid JSON, no NUL),
 * along the key path.  Keys in the text are compared after decoding their
 * escapes (\n, \", \uXXXX with surrogate pairs), as jansson decoded them.
 * Positions are 1-based lines (counted at '\n') and columns in characters
 * (UTF-8 continuation bytes do not count).  Every scan is bounded by the
 * text's length, so malformed text cannot make it loop or read past the end.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "base/jsonin.h"

/* ---- positions -------------------------------------------------------------- */

static void offset_position(const char *t, size_t len, size_t at, int *line, int *col)
{
    size_t k;
    *line = 1;
    *col = 1;
    for (k = 0; k < at && k < len; k++) {
        if (t[k] == '\n') {
            (*line)++;
            *col = 1;
        } else if (((unsigned char)t[k] & 0xC0) != 0x80) {
            (*col)++;
        }
    }
}

static size_t skip_ws(const char *t, size_t len, size_t i)
{
    while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
        i++;
    return i;
}

/* i at an opening quote: the offset just past the closing one. */
static size_t skip_string(const char *t, size_t len, size_t i)
{
    for (i++; i < len && t[i] != '"'; i++)
        if (t[i] == '\\')
            i++;
    return i < len ? i + 1 : len;
}

/* i at a value: the offset just past it. */
static size_t skip_value(const char *t, size_t len, size_t i)
{
    size_t depth = 0;
    if (i < len && t[i] == '"')
        return skip_string(t, len, i);
    if (i < len && (t[i] == '{' || t[i] == '[')) {
        while (i < len) {
            if (t[i] == '"') {
                i = skip_string(t, len, i);
                continue;
            }
            if (t[i] == '{' || t[i] == '[') {
                depth++;
            } else if (t[i] == '}' || t[i] == ']') {
                if (--depth == 0)
                    return i + 1;
            }
            i++;
        }
        return len;
    }
    while (i < len && strchr(",]} \t\r\n", t[i]) == NULL)
        i++;
    return i;
}

static int hex4(const char *t, size_t len, size_t i, unsigned *out)
{
    unsigned v = 0;
    size_t k;
    if (i + 4 > len)
        return -1;
    for (k = i; k < i + 4; k++) {
        char c = t[k];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

/* The JSON string at t[i] (its opening quote), decoded, equals `key`. */
static bool key_equals(const char *t, size_t len, size_t i, const char *key)
{
    size_t kn = strlen(key), kp = 0;
    for (i++; i < len && t[i] != '"'; i++) {
        char buf[4];
        size_t n = 1;
        buf[0] = t[i];
        if (t[i] == '\\') {
            char e = ++i < len ? t[i] : '\0';
            unsigned cp;
            switch (e) {
            case 'b': buf[0] = '\b'; break;
            case 'f': buf[0] = '\f'; break;
            case 'n': buf[0] = '\n'; break;
            case 'r': buf[0] = '\r'; break;
            case 't': buf[0] = '\t'; break;
            case 'u':
                if (hex4(t, len, i + 1, &cp) != 0)
                    return false;
                i += 4;
                if (cp >= 0xD800 && cp < 0xDC00) {
                    unsigned lo;
                    if (i + 2 >= len || t[i + 1] != '\\' || t[i + 2] != 'u' ||
                        hex4(t, len, i + 3, &lo) != 0 || lo < 0xDC00 || lo > 0xDFFF)
                        return false;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    i += 6;
                }
                if (cp < 0x80) {
                    buf[0] = (char)cp;
                } else if (cp < 0x800) {
                    buf[0] = (char)(0xC0 | (cp >> 6));
                    buf[1] = (char)(0x80 | (cp & 0x3F));
                    n = 2;
                } else if (cp < 0x10000) {
                    buf[0] = (char)(0xE0 | (cp >> 12));
                    buf[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
                    buf[2] = (char)(0x80 | (cp & 0x3F));
                    n = 3;
                } else {
                    buf[0] = (char)(0xF0 | (cp >> 18));
                    buf[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
                    buf[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
                    buf[3] = (char)(0x80 | (cp & 0x3F));
                    n = 4;
                }
                break;
            default: buf[0] = e; break;   /* \" \\ \/ */
            }
        }
        if (kp + n > kn || memcmp(key + kp, buf, n) != 0)
            return false;
        kp += n;
    }
    return i < len && kp == kn;
}

/* i at an object's '{': the offset of `key`'s opening quote, and in *value
 * of its value; false when the object has no such key. */
static bool find_key(const char *t, size_t len, size_t i, const char *key, size_t *at,
                     size_t *value)
{
    i = skip_ws(t, len, i + 1);
    while (i < len && t[i] == '"') {
        size_t k = i;
        i = skip_ws(t, len, skip_string(t, len, i));
        if (i < len && t[i] == ':')
            i = skip_ws(t, len, i + 1);
        if (key_equals(t, len, k, key)) {
            *at = k;
            *value = i;
            return true;
        }
        i = skip_ws(t, len, skip_value(t, len, i));
        if (i >= len || t[i] != ',')
            return false;
        i = skip_ws(t, len, i + 1);
    }
    return false;
}

/* i at an array's '[': in *at the offset of element `index`; false when
 * the array is shorter. */
static bool find_index(const char *t, size_t len, size_t i, size_t index, size_t *at)
{
    size_t j;
    i = skip_ws(t, len, i + 1);
    for (j = 0; j < index; j++) {
        if (i >= len || t[i] == ']')
            return false;
        i = skip_ws(t, len, skip_value(t, len, i));
        if (i >= len || t[i] != ',')
            return false;
        i = skip_ws(t, len, i + 1);
    }
    if (i >= len || t[i] == ']')
        return false;
    *at = i;
    return true;
}

void jsonin_locate(const jsonin_doc *doc, const jsonin_path *p, int *line, int *col)
{
    const char *t = doc->text;
    size_t len = doc->len;
    size_t value = skip_ws(t, len, 0), found = value;
    int k;

    for (k = 0; k < p->n && value < len; k++) {
        size_t at, next = value;
        bool hit;
        if (p->e[k].key != NULL)
            hit = t[value] == '{' && find_key(t, len, value, p->e[k].key, &at, &next);
        else
            hit = t[value] == '[' && find_index(t, len, value, p->e[k].index, &at);
        if (!hit) {
            found = value;
            break;
        }
        found = at;
        value = p->e[k].key != NULL ? next : at;
    }
    offset_position(t, len, found, line, col);
}

/* ---- paths ------------------------------------------------------------------ */

jsonin_path jsonin_key(const jsonin_path *p, const char *key)
{
    jsonin_path q = *p;
    if (q.n < JSONIN_PATH_MAX) {
        q.e[q.n].key = key;
        q.e[q.n].index = 0;
        q.n++;
    }
    return q;
}

jsonin_path jsonin_index(const jsonin_path *p, size_t index)
{
    jsonin_path q = *p;
    if (q.n < JSONIN_PATH_MAX) {
        q.e[q.n].key = NULL;
        q.e[q.n].index = index;
        q.n++;
    }
    return q;
}

void jsonin_path_format(const jsonin_path *p, const char *root, char *buf, size_t size)
{
    size_t used;
    int i;
    if (size == 0)
        return;
    snprintf(buf, size, "%s", root != NULL ? root : "");
    for (i = 0; i < p->n; i++) {
        used = strlen(buf);
        if (used + 1 >= size)
            return;
        if (p->e[i].key != NULL)
            snprintf(buf + used, size - used, "%s%s", used > 0 ? "." : "", p->e[i].key);
        else
            snprintf(buf + used, size - used, "[%zu]", p->e[i].index);
    }
}

planner_status jsonin_fail(const jsonin_doc *doc, const jsonin_path *p, const char *fmt, ...)
{
    char path[ERROR_PATH_MAX], msg[ERROR_MSG_MAX];
    int line, col;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    jsonin_path_format(p, doc->path_root, path, sizeof path);
    jsonin_locate(doc, p, &line, &col);
    if (path[0] == '\0')
        return error_set(doc->err, PLANNER_E_INPUT, doc->file, line, col, NULL, "%s", msg);
    return error_set(doc->err, PLANNER_E_INPUT, doc->file, line, col, path, "%s: %s", path,
                     msg);
}

/* ---- parsing ---------------------------------------------------------------- */

/* The error at offset i of t. */
static planner_status fail_at(const char *t, size_t len, size_t i, const char *file,
                              planner_error *err, const char *msg)
{
    int line, col;
    offset_position(t, len, i, &line, &col);
    return error_set(err, PLANNER_E_INPUT, file, line, col, NULL, "%s", msg);
}

/* Refuses a NUL byte, nesting deeper than JSONIN_MAX_DEPTH, and an empty
 * file (jansson: "'[' or '{' expected near end of file"). */
static planner_status prescan(const char *t, size_t len, const char *file, planner_error *err)
{
    const char *nul = memchr(t, '\0', len);
    int depth = 0;
    size_t i;

    if (nul != NULL)
        return fail_at(t, len, (size_t)(nul - t), file, err,
                       "a NUL byte is not allowed in JSON");
    if (skip_ws(t, len, 0) == len)
        return fail_at(t, len, 0, file, err, "empty file (expected a JSON object)");
    for (i = 0; i < len; i++) {
        char ch = t[i];
        if (ch == '"') {
            /* to the closing quote, or to a newline (malformed: jansson
             * reports it) */
            for (i++; i < len && t[i] != '"' && t[i] != '\n'; i++)
                if (t[i] == '\\')
                    i++;
            if (i < len && t[i] == '\n')
                i--;
        } else if (ch == '{' || ch == '[') {
            if (++depth > JSONIN_MAX_DEPTH) {
                char msg[64];
                snprintf(msg, sizeof msg, "nesting deeper than %d levels", JSONIN_MAX_DEPTH);
                return fail_at(t, len, i, file, err, msg);
            }
        } else if (ch == '}' || ch == ']') {
            depth--;
        }
    }
    return PLANNER_OK;
}

/* What people write that JSON (RFC 8259) lacks and jansson reports only as
 * a token it did not expect ("string or '}' expected near '/'"): the offset
 * of the first comment (JSONC, JSON5) or trailing comma before '}' or ']'
 * outside strings, its message in *msg; len when there is none. */
static size_t first_slip(const char *t, size_t len, const char **msg)
{
    for (size_t i = 0; i < len; i++) {
        size_t k;
        if (t[i] == '"') {
            i = skip_string(t, len, i) - 1;
        } else if (t[i] == '/' && i + 1 < len && (t[i + 1] == '/' || t[i + 1] == '*')) {
            *msg = t[i + 1] == '/' ? "a '//' comment: JSON has no comments (remove it)"
                                   : "a '/*' comment: JSON has no comments (remove it)";
            return i;
        } else if (t[i] == ',' && (k = skip_ws(t, len, i + 1)) < len &&
                   (t[k] == '}' || t[k] == ']')) {
            *msg = t[k] == '}' ? "a comma before '}': JSON allows no trailing comma"
                               : "a comma before ']': JSON allows no trailing comma";
            return i;
        }
    }
    return len;
}

planner_status jsonin_parse(jsonin_doc *doc, const char *text, size_t len, const char *file,
                            const char *path_root, planner_error *err)
{
    json_error_t jerr;
    planner_status rc;

    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        text += 3;   /* a UTF-8 byte-order mark, which RFC 8259 section 8.1 lets a */
        len -= 3;    /* parser ignore (Windows editors write one): positions after it */
    }
    doc->file = file;
    doc->text = text;
    doc->len = len;
    doc->root = NULL;
    doc->path_root = path_root != NULL ? path_root : "";
    doc->err = err;
    if ((rc = prescan(text, len, file, err)) != PLANNER_OK)
        return rc;
    memset(&jerr, 0, sizeof jerr);
    alloc_json_parse_begin();
    doc->root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    alloc_json_parse_end();
    if (doc->root != NULL)
        return PLANNER_OK;
    if (json_error_code(&jerr) == json_error_out_of_memory || jerr.text[0] == '\0' ||
        alloc_failed())
        return error_oom(err);
    {   /* a comment or trailing comma where jansson stopped, or before */
        const char *msg = NULL;
        size_t at = first_slip(text, len, &msg);
        if (at < len && jerr.position >= 0 && at <= (size_t)jerr.position)
            return fail_at(text, len, at, file, err, msg);
    }
    return error_set(err, PLANNER_E_INPUT, file, jerr.line > 0 ? jerr.line : 1,
                     jerr.column > 0 ? jerr.column : 1, NULL, "%s", jerr.text);
}

void jsonin_close(jsonin_doc *doc)
{
    if (doc == NULL)
        return;
    json_decref(doc->root);
    doc->root = NULL;
}
