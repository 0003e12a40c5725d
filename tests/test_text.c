/* test_text.c: text_check_name -- names with control characters or
 * malformed UTF-8 are refused, every well-formed printable name passes.
 * The byte sequences are RFC 3629's own examples and edge cases. */
#include <string.h>
#include "base/text.h"
#include "testutil.h"

typedef struct name_case {
    const char *text;
    const char *why;    /* NULL: valid */
} name_case;

static const name_case k_cases[] = {
    {"Llama-3.1-405B", NULL},
    {"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80", NULL},   /* é, 日本, U+1F600 */
    {"\xc2\xa0 \xef\xbf\xbd \xf4\x8f\xbf\xbf", NULL},   /* U+00A0, U+FFFD, U+10FFFF */
    {"x\x1b[2J", "a control character (U+001B) at byte 2"},
    {"gpt\ntouch x #", "a control character (U+000A) at byte 4"},
    {"\t", "a control character (U+0009) at byte 1"},
    {"del\x7f", "a control character (U+007F) at byte 4"},
    {"a\xc2\x9b" "31m", "a control character (U+009B) at byte 2"},      /* C1 CSI */
    {"\xc2\x80", "a control character (U+0080) at byte 1"},
    {"a\x9b", "a byte that is not UTF-8 (0x9b) at byte 2"},            /* bare continuation */
    {"\xc0\xaf", "a byte that is not UTF-8 (0xc0) at byte 1"},         /* overlong '/' */
    {"\xe0\x80\xaf", "a byte that is not UTF-8 (0xe0) at byte 1"},     /* overlong, 3 bytes */
    {"\xed\xa0\x80", "a byte that is not UTF-8 (0xed) at byte 1"},     /* surrogate U+D800 */
    {"\xf4\x90\x80\x80", "a byte that is not UTF-8 (0xf4) at byte 1"}, /* U+110000 */
    {"ok\xe2\x82", "a byte that is not UTF-8 (0xe2) at byte 3"},       /* truncated */
    {"\xff", "a byte that is not UTF-8 (0xff) at byte 1"},
};

START_TEST(names)
{
    const name_case *tc = &k_cases[_i];
    planner_error why = PLANNER_ERROR_INIT;
    planner_status r = text_check_name(tc->text, &why);
    if (tc->why == NULL) {
        ck_assert_msg(r == PLANNER_OK, "case %d refused: %s", _i, why.msg);
    } else {
        ck_assert_msg(r == PLANNER_E_INPUT, "case %d accepted", _i);
        ck_assert_str_eq(why.msg, tc->why);
    }
    ck_assert_int_eq(text_check_name(tc->text, NULL), r);   /* no message asked: same verdict */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("text");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, names, 0, (int)(sizeof k_cases / sizeof k_cases[0]));
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
