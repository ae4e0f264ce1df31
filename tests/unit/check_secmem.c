/* SPDX-License-Identifier: MIT */
/* check_secmem.c: unit tests of shared/secmem.c and shared/errors.c. */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <com_err.h>

#include "errors.h"
#include "secmem.h"

#define BUF_LEN 64

/* ---- secmem ------------------------------------------------------------ */

START_TEST(test_memeq_equal)
{
    unsigned char a[BUF_LEN], b[BUF_LEN];
    size_t n, i;

    for (i = 0; i < BUF_LEN; i++)
        a[i] = b[i] = (unsigned char)(i * 37 + 11);
    for (n = 1; n <= BUF_LEN; n++)
        ck_assert_int_eq(yk_memeq(a, b, n), 1);
    ck_assert_int_eq(yk_memeq(a, a, BUF_LEN), 1);
}
END_TEST

START_TEST(test_memeq_differs_everywhere)
{
    unsigned char a[BUF_LEN], b[BUF_LEN];
    size_t n, pos;
    int bit;

    for (pos = 0; pos < BUF_LEN; pos++)
        a[pos] = (unsigned char)(pos ^ 0x5a);

    /* Every position, every single-bit difference, every length that
     * covers the position: unequal.  A length that stops before the
     * difference: equal. */
    for (n = 1; n <= BUF_LEN; n++) {
        for (pos = 0; pos < n; pos++) {
            for (bit = 0; bit < 8; bit++) {
                memcpy(b, a, sizeof(b));
                b[pos] ^= (unsigned char)(1U << bit);
                ck_assert_int_eq(yk_memeq(a, b, n), 0);
                ck_assert_int_eq(yk_memeq(b, a, n), 0);
                ck_assert_int_eq(yk_memeq(a, b, pos), 1);
            }
            /* All bits flipped at once. */
            memcpy(b, a, sizeof(b));
            b[pos] = (unsigned char)~b[pos];
            ck_assert_int_eq(yk_memeq(a, b, n), 0);
        }
    }
}
END_TEST

START_TEST(test_memeq_zero_length)
{
    unsigned char a[1] = { 1 }, b[1] = { 2 };

    ck_assert_int_eq(yk_memeq(a, b, 0), 1);
    ck_assert_int_eq(yk_memeq(NULL, NULL, 0), 1);
}
END_TEST

START_TEST(test_zap_zeroes)
{
    unsigned char buf[BUF_LEN];
    size_t i, off, n;

    for (off = 0; off < 8; off++) {
        for (n = 0; n + off + 8 <= BUF_LEN; n += 7) {
            memset(buf, 0xa5, sizeof(buf));
            yk_zap(buf + off, n);
            for (i = 0; i < BUF_LEN; i++) {
                if (i >= off && i < off + n)
                    ck_assert_uint_eq(buf[i], 0);
                else
                    ck_assert_uint_eq(buf[i], 0xa5);
            }
        }
    }
    yk_zap(NULL, 0);
}
END_TEST

START_TEST(test_zap_struct)
{
    struct {
        unsigned char key[16];
        unsigned long counter;
    } s;
    unsigned char zero[sizeof(s)];

    memset(&s, 0xff, sizeof(s));
    memset(zero, 0, sizeof(zero));
    yk_zap(&s, sizeof(s));
    ck_assert_mem_eq(&s, zero, sizeof(s));
}
END_TEST

START_TEST(test_free_string_zap)
{
    char *s = strdup("a bind password");

    ck_assert_ptr_nonnull(s);
    yk_free_string_zap(s);
    yk_free_string_zap(NULL);
    s = strdup("");
    ck_assert_ptr_nonnull(s);
    yk_free_string_zap(s);
}
END_TEST

/* ---- errors ------------------------------------------------------------ */

START_TEST(test_strerror_own_codes)
{
    krb5_error_code c, d;
    const char *m;

    for (c = YK_ERR_BASE + 1; c < YK_ERR_LAST; c++) {
        m = yk_strerror(c);
        ck_assert_ptr_nonnull(m);
        ck_assert_msg(strlen(m) > 10, "code %ld: short message", (long)c);
        ck_assert_msg(strstr(m, "nknown") == NULL,
                      "code %ld has no message of its own", (long)c);
        for (d = YK_ERR_BASE + 1; d < c; d++)
            ck_assert_str_ne(m, yk_strerror(d));
    }
    ck_assert_str_eq(yk_strerror(YK_ERR_OTP_CRC),
                     "OTP CRC check failed (wrong AES key or corrupted OTP)");
}
END_TEST

START_TEST(test_strerror_errno)
{
    ck_assert_str_eq(yk_strerror(ENOENT), strerror(ENOENT));
    ck_assert_str_eq(yk_strerror(ENOMEM), strerror(ENOMEM));
    ck_assert_str_eq(yk_strerror(EACCES), strerror(EACCES));
}
END_TEST

START_TEST(test_strerror_com_err)
{
    krb5_context ctx = NULL;
    char want[256];

    /* Loading libkrb5 registers its com_err tables. */
    ck_assert_int_eq(krb5_init_context(&ctx), 0);
    snprintf(want, sizeof(want), "%s",
             error_message(KRB5KDC_ERR_PREAUTH_FAILED));
    ck_assert_str_eq(yk_strerror(KRB5KDC_ERR_PREAUTH_FAILED), want);
    ck_assert_ptr_nonnull(strstr(want, "reauthentication"));
    krb5_free_context(ctx);

    /* Codes just outside our range are not ours. */
    ck_assert_ptr_nonnull(yk_strerror(YK_ERR_BASE));
    ck_assert_ptr_nonnull(yk_strerror(YK_ERR_LAST));
    ck_assert_str_ne(yk_strerror(YK_ERR_LAST),
                     yk_strerror(YK_ERR_LAST - 1));
}
END_TEST

static Suite *
secmem_suite(void)
{
    Suite *s = suite_create("secmem");
    TCase *tc = tcase_create("secmem");

    tcase_add_test(tc, test_memeq_equal);
    tcase_add_test(tc, test_memeq_differs_everywhere);
    tcase_add_test(tc, test_memeq_zero_length);
    tcase_add_test(tc, test_zap_zeroes);
    tcase_add_test(tc, test_zap_struct);
    tcase_add_test(tc, test_free_string_zap);
    suite_add_tcase(s, tc);
    return s;
}

static Suite *
errors_suite(void)
{
    Suite *s = suite_create("errors");
    TCase *tc = tcase_create("errors");

    tcase_add_test(tc, test_strerror_own_codes);
    tcase_add_test(tc, test_strerror_errno);
    tcase_add_test(tc, test_strerror_com_err);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(secmem_suite());
    int failed;

    srunner_add_suite(sr, errors_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
