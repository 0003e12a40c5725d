/* test_jsonin.c: the JSON input layer every loader uses (src/jsonin.c).
 * The locator on nested objects and arrays (positions counted by hand,
 * 1-based, columns in characters), paths as text, and the parser's refusals:
 * a NUL byte, nesting over JSONIN_MAX_DEPTH, a duplicate key, a syntax error,
 * and every allocation failing in turn (out of memory, never a syntax
 * error). */
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "base/jsonin.h"
#include "testutil.h"

/* line:col of `p` in `text` (which must parse). */
static void where(const char *text, const jsonin_path *p, int *line, int *col)
{
    planner_error err = PLANNER_ERROR_INIT;
    jsonin_doc doc;
    ck_assert_int_eq(jsonin_parse(&doc, text, strlen(text), "t.json", NULL, &err), PLANNER_OK);
    jsonin_locate(&doc, p, line, col);
    jsonin_close(&doc);
}

#define ASSERT_AT(text, path, want_line, want_col)                                     \
    do {                                                                               \
        int l_, c_;                                                                    \
        where((text), (path), &l_, &c_);                                               \
        ck_assert_msg(l_ == (want_line) && c_ == (want_col), "%s: %d:%d, expected %d:%d", \
                      #path, l_, c_, (want_line), (want_col));                         \
    } while (0)

/* Line 1..5 of the nested document, with the columns of its keys:
 *   {"a": [1, {"b": [[], [10, {"c": true}]]}],      a 2, b 12, c 28
 *    "s": "x\"y",                                    s 2
 *    "a2": {"d": {}, "e": [[0], ["x", {"f": 1}]]},   d 9, e 18, f 36
 *    "t\u00e9": 1, "é": {"g": 2}}                    escaped 2, é 16, g 22 */
static const char k_doc[] =
    "{\"a\": [1, {\"b\": [[], [10, {\"c\": true}]]}],\n"
    " \"s\": \"x\\\"y\",\n"
    " \"a2\": {\"d\": {}, \"e\": [[0], [\"x\", {\"f\": 1}]]},\n"
    " \"t\\u00e9\": 1, \"\xc3\xa9\": {\"g\": 2}}";

START_TEST(locates_nested_paths)
{
    const jsonin_path r = JSONIN_PATH_ROOT;
    jsonin_path a = jsonin_key(&r, "a"), a1 = jsonin_index(&a, 1), b = jsonin_key(&a1, "b");
    jsonin_path b1 = jsonin_index(&b, 1), b11 = jsonin_index(&b1, 1), c = jsonin_key(&b11, "c");
    jsonin_path b0 = jsonin_index(&b, 0), b10 = jsonin_index(&b1, 0);
    jsonin_path a2 = jsonin_key(&r, "a2"), d = jsonin_key(&a2, "d"), e = jsonin_key(&a2, "e");
    jsonin_path e1 = jsonin_index(&e, 1), e11 = jsonin_index(&e1, 1), f = jsonin_key(&e11, "f");
    jsonin_path e00 = jsonin_index(&e, 0), s = jsonin_key(&r, "s");
    jsonin_path te = jsonin_key(&r, "t\xc3\xa9"), ea = jsonin_key(&r, "\xc3\xa9");
    jsonin_path g = jsonin_key(&ea, "g");

    e00 = jsonin_index(&e00, 0);
    ASSERT_AT(k_doc, &r, 1, 1);
    ASSERT_AT(k_doc, &a, 1, 2);
    ASSERT_AT(k_doc, &a1, 1, 11);
    ASSERT_AT(k_doc, &b, 1, 12);
    ASSERT_AT(k_doc, &b0, 1, 18);
    ASSERT_AT(k_doc, &b1, 1, 22);
    ASSERT_AT(k_doc, &b10, 1, 23);
    ASSERT_AT(k_doc, &b11, 1, 27);
    ASSERT_AT(k_doc, &c, 1, 28);
    ASSERT_AT(k_doc, &s, 2, 2);
    ASSERT_AT(k_doc, &a2, 3, 2);
    ASSERT_AT(k_doc, &d, 3, 9);
    ASSERT_AT(k_doc, &e, 3, 18);
    ASSERT_AT(k_doc, &e00, 3, 25);
    ASSERT_AT(k_doc, &e1, 3, 29);
    ASSERT_AT(k_doc, &e11, 3, 35);
    ASSERT_AT(k_doc, &f, 3, 36);
    /* a key written with escapes is found as decoded; é is one column */
    ASSERT_AT(k_doc, &te, 4, 2);
    ASSERT_AT(k_doc, &ea, 4, 16);
    ASSERT_AT(k_doc, &g, 4, 22);
}
END_TEST

/* Where the path leaves the document: the innermost value found on it. */
START_TEST(partial_paths_stop_at_the_innermost_value)
{
    const jsonin_path r = JSONIN_PATH_ROOT;
    jsonin_path a = jsonin_key(&r, "a"), a1 = jsonin_index(&a, 1), a1x = jsonin_key(&a1, "x");
    jsonin_path a9 = jsonin_index(&a, 9), ax = jsonin_key(&a, "x"), zz = jsonin_key(&r, "zz");
    jsonin_path a2 = jsonin_key(&r, "a2"), d = jsonin_key(&a2, "d"), dq = jsonin_key(&d, "q");
    jsonin_path s = jsonin_key(&r, "s"), s0 = jsonin_index(&s, 0);

    ASSERT_AT(k_doc, &zz, 1, 1);    /* missing at the top: the root */
    ASSERT_AT(k_doc, &a1x, 1, 11);  /* the object a[1] */
    ASSERT_AT(k_doc, &a9, 1, 7);    /* past the end: the array a */
    ASSERT_AT(k_doc, &ax, 1, 7);    /* a key in an array: the array */
    ASSERT_AT(k_doc, &dq, 3, 14);   /* in an empty object */
    ASSERT_AT(k_doc, &s0, 2, 7);    /* an index into a string: the string */
    /* leading white space and an empty document */
    ASSERT_AT("\n\n   {\"k\": 1}", &r, 3, 4);
    ASSERT_AT("\n\n   {\"k\": 1}", &zz, 3, 4);
    ASSERT_AT("[[], [], [\n 7]]", &a, 1, 1);
    {
        jsonin_path i2 = jsonin_index(&r, 2), i20 = jsonin_index(&i2, 0);
        ASSERT_AT("[[], [], [\n 7]]", &i20, 2, 2);
    }
}
END_TEST

START_TEST(paths_as_text)
{
    const jsonin_path r = JSONIN_PATH_ROOT;
    jsonin_path p = jsonin_key(&r, "runs"), q;
    char buf[64];
    int i;
    p = jsonin_index(&p, 3);
    p = jsonin_key(&p, "model");
    jsonin_path_format(&p, NULL, buf, sizeof buf);
    ck_assert_str_eq(buf, "runs[3].model");
    jsonin_path_format(&p, "model", buf, sizeof buf);
    ck_assert_str_eq(buf, "model.runs[3].model");
    jsonin_path_format(&r, "model", buf, sizeof buf);
    ck_assert_str_eq(buf, "model");
    q = jsonin_index(&r, 0);
    jsonin_path_format(&q, "", buf, sizeof buf);
    ck_assert_str_eq(buf, "[0]");
    /* deeper than JSONIN_PATH_MAX: the extra elements are dropped */
    q = r;
    for (i = 0; i < JSONIN_PATH_MAX + 5; i++)
        q = jsonin_index(&q, 1);
    ck_assert_int_eq(q.n, JSONIN_PATH_MAX);
    /* a small buffer is truncated, never overrun */
    jsonin_path_format(&p, "model", buf, 8);
    ck_assert_str_eq(buf, "model.r");
}
END_TEST

static void parse_fails(const char *text, size_t len, planner_status st, const char *want)
{
    planner_error err = PLANNER_ERROR_INIT;
    jsonin_doc doc;
    char got[1024];
    ck_assert_int_eq(jsonin_parse(&doc, text, len, "t.json", NULL, &err), st);
    ck_assert_ptr_null(doc.root);
    jsonin_close(&doc);
    error_format(&err, got, sizeof got);
    ck_assert_str_eq(got, want);
}

START_TEST(refusals)
{
    char deep[256];
    int i;
    parse_fails("{\"a\": 1}\n\0", 10, PLANNER_E_INPUT,
                "planner: t.json:2:1: a NUL byte is not allowed in JSON");
    /* jansson's positions: the last character of the offending token */
    parse_fails("{\"a\": 1,\n \"a\": 2}", 17, PLANNER_E_INPUT,
                "planner: t.json:2:4: duplicate object key near '\"a\"'");
    parse_fails("{\"a\" 1}", 7, PLANNER_E_INPUT,
                "planner: t.json:1:6: ':' expected near '1'");
    parse_fails("", 0, PLANNER_E_INPUT, "planner: t.json:1:1: empty file (expected a JSON object)");
    parse_fails(" \n", 2, PLANNER_E_INPUT,
                "planner: t.json:1:1: empty file (expected a JSON object)");
    /* what JSON lacks, named (jansson: "string or '}' expected near '/'"),
     * never inside a string, and only where jansson stopped or before */
    parse_fails("{\"a\": 1, // one\n \"b\": 2}", 24, PLANNER_E_INPUT,
                "planner: t.json:1:10: a '//' comment: JSON has no comments (remove it)");
    parse_fails("{\"a\": [1, 2,]}", 14, PLANNER_E_INPUT,
                "planner: t.json:1:12: a comma before ']': JSON allows no trailing comma");
    parse_fails("{\"a\" 1, \"b\": 2,}", 16, PLANNER_E_INPUT,
                "planner: t.json:1:6: ':' expected near '1'");
    /* 64 levels parse, the 65th '[' (column 66 after one space) is refused */
    deep[0] = ' ';
    for (i = 0; i < JSONIN_MAX_DEPTH + 1; i++) {
        deep[1 + i] = '[';
        deep[2 + JSONIN_MAX_DEPTH + i] = ']';
    }
    deep[1 + JSONIN_MAX_DEPTH + 1 + JSONIN_MAX_DEPTH + 1] = '\0';
    parse_fails(deep, strlen(deep), PLANNER_E_INPUT,
                "planner: t.json:1:66: nesting deeper than 64 levels");
    {
        planner_error err = PLANNER_ERROR_INIT;
        jsonin_doc doc;
        /* 64 levels parse */
        ck_assert_int_eq(jsonin_parse(&doc, deep + 2, strlen(deep + 2) - 1, "t.json", NULL, &err),
                         PLANNER_OK);
        jsonin_close(&doc);
        /* brackets inside strings do not count */
        memset(deep, '[', 100);   /* ["[[[...[["] */
        deep[1] = '"';
        deep[98] = '"';
        deep[99] = ']';
        deep[100] = '\0';
        ck_assert_int_eq(jsonin_parse(&doc, deep, 100, "t.json", NULL, &err), PLANNER_OK);
        jsonin_close(&doc);
        /* '//', ',}' inside strings are text */
        ck_assert_int_eq(jsonin_parse(&doc, "{\"u\": \"http://x\", \"v\": \",}\"}", 28,
                                      "t.json", NULL, &err), PLANNER_OK);
        jsonin_close(&doc);
        /* a UTF-8 byte-order mark is skipped (RFC 8259 8.1), positions after it */
        ck_assert_int_eq(jsonin_parse(&doc, "\xEF\xBB\xBF{\"a\": 1}", 11, "t.json", NULL, &err),
                         PLANNER_OK);
        ck_assert(json_is_object(doc.root));
        jsonin_close(&doc);
    }
    parse_fails("\xEF\xBB\xBF{\"a\" 1}", 10, PLANNER_E_INPUT,
                "planner: t.json:1:6: ':' expected near '1'");
}
END_TEST

/* jsonin_fail: "PATH: message" at the key, the path's first word from the
 * document. */
START_TEST(fail_names_and_locates)
{
    const char text[] = "{\n  \"layers\": [\n    {\"hidden\": -1}\n  ]\n}";
    const jsonin_path r = JSONIN_PATH_ROOT;
    jsonin_path p = jsonin_key(&r, "layers");
    planner_error err = PLANNER_ERROR_INIT;
    jsonin_doc doc;
    char got[1024];
    p = jsonin_index(&p, 0);
    p = jsonin_key(&p, "hidden");
    ck_assert_int_eq(jsonin_parse(&doc, text, strlen(text), "m.json", "model", &err), PLANNER_OK);
    ck_assert_int_eq(jsonin_fail(&doc, &p, "must be > 0, got %d", -1), PLANNER_E_INPUT);
    jsonin_close(&doc);
    error_format(&err, got, sizeof got);
    ck_assert_str_eq(got, "planner: m.json:3:6: model.layers[0].hidden: must be > 0, got -1");
    ck_assert_str_eq(err.path, "model.layers[0].hidden");
}
END_TEST

/* Every allocation of the parse failing in turn: out of memory (exit 70) or
 * success, never an input error, never a leak (LeakSanitizer in make
 * sanitize).  The strings of 14, 30 and 62 characters are the ones jansson
 * 2.14 damages when a growth of its token buffer fails (the closing quote is
 * dropped and its decoder ran past the buffer, caught by ASan), which the
 * sticky failure of alloc_json_parse_begin/end prevents (see jsonin.c). */
START_TEST(out_of_memory_is_not_a_syntax_error)
{
    static const char text[] =
        "{\"tokens\": [1, 2.5, \"a string\", -7e3],"
        " \"b\": {\"c\": {\"d\": [true, null, false]}}, \"e\": \"\\u00e9\","
        " \"abcdefghijklmn\": \"abcdefghijklmnopqrstuvwxyz0123\","
        " \"k62\": \"abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz\"}";
    long n;
    int ok = 0, oom = 0;
    alloc_init();
    for (n = 1; n < 200; n++) {
        planner_error err = PLANNER_ERROR_INIT;
        jsonin_doc doc;
        planner_status st;
        int failed;
        alloc_fail_at(n);
        st = jsonin_parse(&doc, text, strlen(text), "t.json", NULL, &err);
        failed = alloc_failed();
        alloc_fail_at(0);
        jsonin_close(&doc);
        ck_assert_msg(st == PLANNER_OK || st == PLANNER_E_INTERNAL, "allocation %ld: %d %s", n,
                      st, err.msg);
        if (st == PLANNER_OK) {
            ok++;
            if (!failed)
                break;
        } else {
            ck_assert_str_eq(err.msg, "out of memory");
            oom++;
        }
    }
    ck_assert_int_gt(oom, 5);
    ck_assert_int_ge(ok, 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("jsonin");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, locates_nested_paths);
    tcase_add_test(tc, partial_paths_stop_at_the_innermost_value);
    tcase_add_test(tc, paths_as_text);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, fail_names_and_locates);
    tcase_add_test(tc, out_of_memory_is_not_a_syntax_error);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
