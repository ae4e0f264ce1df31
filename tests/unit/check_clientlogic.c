/* SPDX-License-Identifier: MIT */
/* check_clientlogic.c: unit tests of the client module's decisions. */
#include <config.h>

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clientlogic.h"
#include "padata.h"

#define OTP44 "vvccccdefghijklnrtuvcbdefghijklnrtuvcbdefghi"

START_TEST(test_mode_parse)
{
    int mode = -1;

    ck_assert_int_eq(yk_client_mode_parse("2fa", &mode), 0);
    ck_assert_int_eq(mode, YK_MODE_2FA);
    ck_assert_int_eq(yk_client_mode_parse("otp", &mode), 0);
    ck_assert_int_eq(mode, YK_MODE_OTP);
    ck_assert_int_eq(yk_client_mode_parse("OTP", &mode), EINVAL);
    ck_assert_int_eq(yk_client_mode_parse("", &mode), EINVAL);
    ck_assert_int_eq(yk_client_mode_parse("2fa ", &mode), EINVAL);
    ck_assert_int_eq(yk_client_mode_parse(NULL, &mode), EINVAL);
}
END_TEST

/* The whole table: every flag set, forced mode and armor. */
START_TEST(test_decide_table)
{
    static const int forced[] = { YK_MODE_AUTO, YK_MODE_2FA, YK_MODE_OTP };
    unsigned flags;
    size_t f;
    int armored, mode, pw, alone;
    yk_choice c, want;

    for (flags = 0; flags < 4; flags++) {
        pw = (flags & YK_HINT_PASSWORD_BOUND) != 0;
        alone = (flags & YK_HINT_OTP_ALONE_OK) != 0;
        for (f = 0; f < 3; f++) {
            for (armored = 0; armored < 2; armored++) {
                int want_mode = -1;

                mode = -1;
                c = yk_client_decide((uint8_t)flags, forced[f], armored,
                                     &mode);
                if (forced[f] == YK_MODE_OTP) {
                    want = !armored ? YK_CHOICE_NEEDS_ARMOR :
                        !alone ? YK_CHOICE_NO_OTP_ALONE : YK_CHOICE_OK;
                    want_mode = YK_MODE_OTP;
                } else if (forced[f] == YK_MODE_2FA) {
                    want = pw ? YK_CHOICE_OK : YK_CHOICE_NO_2FA;
                    want_mode = YK_MODE_2FA;
                } else if (alone && armored) {
                    want = YK_CHOICE_OK;
                    want_mode = YK_MODE_OTP;
                } else if (pw) {
                    want = YK_CHOICE_OK;
                    want_mode = YK_MODE_2FA;
                } else {
                    want = YK_CHOICE_NONE;
                }
                ck_assert_msg(c == want, "flags %u forced %d armored %d: "
                              "%d, want %d", flags, forced[f], armored,
                              (int)c, (int)want);
                if (want == YK_CHOICE_OK)
                    ck_assert_int_eq(mode, want_mode);
                else
                    ck_assert_int_eq(mode, -1);
            }
        }
    }
}
END_TEST

/* Parse json; the value on success, NULL on EINVAL (and then the buffer
 * must be wiped). */
static const char *
answer(const char *json)
{
    static char buf[80];
    size_t len = 0, i;

    memset(buf, 'x', sizeof(buf));
    if (yk_client_parse_answer(json, buf, sizeof(buf), &len) != 0) {
        for (i = 0; i < sizeof(buf); i++)
            ck_assert_msg(buf[i] == 0, "value not wiped after a failure");
        return NULL;
    }
    ck_assert_uint_eq(len, strlen(buf));
    return buf;
}

START_TEST(test_answer_good)
{
    ck_assert_str_eq(answer("{\"tokeninfo\":0,\"value\":\"" OTP44 "\"}"),
                     OTP44);
    ck_assert_str_eq(answer(" { \"value\" : \"" OTP44 "\" , \"tokeninfo\""
                            " : 0 } "), OTP44);
    ck_assert_str_eq(answer("{\"tokeninfo\":0,\"pin\":\"\",\"value\":\"a\"}"),
                     "a");
    ck_assert_str_eq(answer("{\"tokeninfo\":0,\"value\":\"p\\u0077\\\\\"}"),
                     "pw\\");
    /* Raw UTF-8 passes as bytes (only \u escapes must be ASCII). */
    ck_assert_str_eq(answer("{\"tokeninfo\":0,\"value\":\"a\xc3\xa9\"}"),
                     "a\xc3\xa9");
}
END_TEST

START_TEST(test_answer_bad)
{
    ck_assert_ptr_null(answer(""));
    ck_assert_ptr_null(answer("{}"));
    ck_assert_ptr_null(answer("{\"value\":\"" OTP44 "\"}"));
    ck_assert_ptr_null(answer("{\"tokeninfo\":0}"));
    ck_assert_ptr_null(answer("{\"tokeninfo\":1,\"value\":\"a\"}"));
    ck_assert_ptr_null(answer("{\"tokeninfo\":01,\"value\":\"a\"}"));
    ck_assert_ptr_null(answer("{\"tokeninfo\":0,\"value\":\"a\",\"value\":"
                              "\"b\"}"));
    ck_assert_ptr_null(answer("{\"tokeninfo\":0,\"value\":\"a\",\"x\":1}"));
    ck_assert_ptr_null(answer("{\"tokeninfo\":0,\"pin\":\"1\",\"value\":"
                              "\"a\"}"));
    ck_assert_ptr_null(answer("{\"tokeninfo\":0,\"value\":\"a\"} x"));
    ck_assert_ptr_null(answer("{\"tokeninfo\":0,\"value\":\"\\u0000\"}"));
    ck_assert_ptr_null(answer("{\"tokeninfo\":0,\"value\":\"\\u00e9\"}"));
    ck_assert_ptr_null(answer("{\"tokeninfo\":0,\"value\":\"\\q\"}"));
    ck_assert_ptr_null(answer("{\"tokeninfo\":0,\"value\":\"a\n\"}"));
    ck_assert_ptr_null(answer("{\"tokeninfo\":0,\"value\":\"a"));
    ck_assert_ptr_null(answer("{\"tokeninfo\":0 \"value\":\"a\"}"));
    /* A value that does not fit the buffer (80 bytes). */
    ck_assert_ptr_null(answer("{\"tokeninfo\":0,\"value\":\"" OTP44 OTP44
                              "\"}"));
}
END_TEST

static Suite *
clientlogic_suite(void)
{
    Suite *s = suite_create("clientlogic");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_mode_parse);
    tcase_add_test(tc, test_decide_table);
    tcase_add_test(tc, test_answer_good);
    tcase_add_test(tc, test_answer_bad);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(clientlogic_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
