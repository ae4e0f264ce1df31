/* SPDX-License-Identifier: MIT */
/* check_secmem.c: unit tests of shared/secmem.c and shared/errors.c. */
#include <config.h>

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* Whether this is an AddressSanitizer build (its runtime intercepts
 * mlock and does nothing). */
static int
under_asan(void)
{
#if defined(__SANITIZE_ADDRESS__)
    return 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return 1;
#else
    return 0;
#endif
#else
    return 0;
#endif
}

/* The mapping of /proc/self/smaps that holds p: whether there is one, and
 * its Locked: kB and whether its VmFlags has dd (not dumped). */
static int
smaps_of(const void *p, long *locked_kb, int *dontdump)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    unsigned long lo, hi, at = (unsigned long)p;
    int in = 0, found = 0;

    *locked_kb = -1;
    *dontdump = 0;
    ck_assert_ptr_nonnull(f);
    while (fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
            strchr(line, '-') < strchr(line, ' ')) {
            in = at >= lo && at < hi;
            found |= in;
        } else if (in && strncmp(line, "Locked:", 7) == 0) {
            *locked_kb = atol(line + 7);
        } else if (in && strncmp(line, "VmFlags:", 8) == 0) {
            *dontdump = strstr(line, " dd") != NULL;
        }
    }
    fclose(f);
    return found;
}

START_TEST(test_secret_copy)
{
    char *s, *big, *src;
    size_t i, n = 5000;

    s = yk_secret_strndup("a bind password#junk", 15);
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s, "a bind password");
    ck_assert_uint_eq((uintptr_t)s % sizeof(max_align_t), 0);
    yk_secret_free(s);
    s = yk_secret_strndup("", 0);
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s, "");
    yk_secret_free(s);
    ck_assert_ptr_null(yk_secret_strndup(NULL, 3));
    yk_secret_free(NULL);
    s = yk_secret_alloc(10);
    ck_assert_ptr_nonnull(s);
    for (i = 0; i <= 10; i++)
        ck_assert_int_eq(s[i], 0);
    yk_secret_free(s);

    /* Longer than a page: all of it copied, terminated. */
    src = malloc(n);
    ck_assert_ptr_nonnull(src);
    for (i = 0; i < n; i++)
        src[i] = (char)('a' + i % 26);
    big = yk_secret_strndup(src, n);
    ck_assert_ptr_nonnull(big);
    ck_assert_uint_eq(strlen(big), n);
    ck_assert_int_eq(memcmp(big, src, n), 0);
    yk_secret_free(big);
    free(src);
}
END_TEST

/* What an administrator would check with /proc: the copy's pages are
 * locked (when the limit allows), also in a child forked after (as
 * krb5kdc's workers are), not dumped, and gone once freed. */
START_TEST(test_secret_pages)
{
    struct rlimit rl;
    char *s = yk_secret_strndup("a bind password", 15);
    long locked;
    int dd, check_lock, status;
    pid_t pid;

    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(smaps_of(s, &locked, &dd), 1);
    ck_assert_msg(dd, "the secret's mapping is not marked MADV_DONTDUMP");
    ck_assert_int_eq(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
    check_lock = 0;
    if (under_asan())
        fprintf(stderr, "SKIPPED: locking of the secret's pages not "
                "checked: AddressSanitizer makes mlock a no-op\n");
    else if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= 65536)
        check_lock = 1;
    else
        fprintf(stderr, "SKIPPED: locking of the secret's pages not "
                "checked: RLIMIT_MEMLOCK is %llu bytes\n",
                (unsigned long long)rl.rlim_cur);
    if (check_lock) {
        ck_assert_msg(locked > 0, "the secret's mapping is not locked "
                      "(Locked: %ld kB, RLIMIT_MEMLOCK %llu)", locked,
                      (unsigned long long)rl.rlim_cur);
        /* Linux does not pass locks to a child: locked again there. */
        fflush(NULL);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0)
            _exit(smaps_of(s, &locked, &dd) == 1 && locked > 0 && dd ? 0 : 1);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                      "in a forked child the secret's pages are not locked");
    }
    yk_secret_free(s);
    /* Whatever is mapped there now is not the secret's (not MADV_DONTDUMP). */
    ck_assert_msg(smaps_of(s, &locked, &dd) == 0 || !dd,
                  "the secret's mapping is still there after the free");
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
    tcase_add_test(tc, test_secret_copy);
    tcase_add_test(tc, test_secret_pages);
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
