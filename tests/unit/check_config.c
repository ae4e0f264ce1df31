/* SPDX-License-Identifier: MIT */
/* check_config.c: unit tests of shared/ykconf.c's cleartext decision. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "store.h"  /* and shared/ykconf.h */

#define WHY_LEN 512

/* ---- the loopback decision --------------------------------------------- */

START_TEST(test_loopback_hosts)
{
    static const char *const local[] = {
        "", "localhost", "LOCALHOST", "localhost.", "127.0.0.1",
        "127.1.2.3", "127.255.255.254", "::1", "0:0:0:0:0:0:0:1",
        "::ffff:127.0.0.1"
    };
    size_t i;

    for (i = 0; i < sizeof(local) / sizeof(local[0]); i++)
        ck_assert_msg(yk_config_host_is_loopback(local[i]), "%s", local[i]);
}
END_TEST

START_TEST(test_remote_hosts)
{
    static const char *const remote[] = {
        "192.0.2.1", "10.0.0.1", "128.0.0.1", "126.255.255.255",
        "ldap.example.com", "localhost.example.com", "localhostx",
        "127.0.0.1.example.com", "::2", "2001:db8::1", "::ffff:10.0.0.1",
        "0.0.0.0", "::"
    };
    size_t i;

    for (i = 0; i < sizeof(remote) / sizeof(remote[0]); i++)
        ck_assert_msg(!yk_config_host_is_loopback(remote[i]), "%s",
                      remote[i]);
}
END_TEST

/* ---- the warning over URI lists ---------------------------------------- */

/* yk_config_check_cleartext on uri (read) and write_uri, starttls. */
static int
cleartext(const char *uri, const char *write_uri, int starttls, char *why)
{
    yk_store_config sc;

    memset(&sc, 0, sizeof(sc));
    sc.uri = (char *)uri;
    sc.write_uri = (char *)write_uri;
    sc.starttls = starttls;
    return yk_config_check_cleartext(&sc, why, WHY_LEN);
}

START_TEST(test_no_warning)
{
    char why[WHY_LEN];

    ck_assert_int_eq(cleartext("ldapi://", NULL, 0, why), 0);
    ck_assert_str_eq(why, "");
    ck_assert_int_eq(cleartext("ldapi://%2Fvar%2Frun%2Fslapd%2Fldapi",
                               NULL, 0, why), 0);
    ck_assert_int_eq(cleartext("ldap://127.0.0.1:3890/", NULL, 0, why), 0);
    ck_assert_int_eq(cleartext("ldap://localhost", "ldap:///", 0, why), 0);
    ck_assert_int_eq(cleartext("ldap://[::1]:389/", NULL, 0, why), 0);
    ck_assert_int_eq(cleartext("ldaps://ldap.example.com/",
                               "LDAPS://ldap2.example.com:636", 0, why), 0);
    /* StartTLS protects ldap:// anywhere. */
    ck_assert_int_eq(cleartext("ldap://ldap.example.com/",
                               "ldap://192.0.2.1", 1, why), 0);
    ck_assert_int_eq(cleartext(NULL, NULL, 0, why), 0);
}
END_TEST

START_TEST(test_warning)
{
    char why[WHY_LEN];

    ck_assert_int_eq(cleartext("ldap://192.0.2.1/", NULL, 0, why), 1);
    ck_assert_ptr_nonnull(strstr(why, "ldap:// to 192.0.2.1 without TLS"));
    ck_assert_ptr_nonnull(strstr(why, "yubikey_ldap_starttls = true"));
    /* A list: only the remote plain ones are named, each once. */
    ck_assert_int_eq(cleartext("ldapi:// ldap://a.example:389,ldaps://b "
                               "LDAP://[2001:db8::1]:389/", "ldap://a.example",
                               0, why), 1);
    ck_assert_ptr_nonnull(strstr(why, "to a.example, 2001:db8::1 without"));
    /* The write target alone. */
    ck_assert_int_eq(cleartext("ldapi://", "ldap://kdc-master.example", 0,
                               why), 1);
    ck_assert_ptr_nonnull(strstr(why, "to kdc-master.example without"));
}
END_TEST

static Suite *
config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("cleartext");

    tcase_add_test(tc, test_loopback_hosts);
    tcase_add_test(tc, test_remote_hosts);
    tcase_add_test(tc, test_no_warning);
    tcase_add_test(tc, test_warning);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(config_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
