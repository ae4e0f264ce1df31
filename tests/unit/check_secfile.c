/* SPDX-License-Identifier: MIT */
/* check_secfile.c: unit tests of the secret-file reader. */
#include <config.h>

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "secfile.h"

#define DIR_TEMPLATE "/tmp/check_secfile.XXXXXX"
static char dir[sizeof(DIR_TEMPLATE)];

/* dir/name, in a static buffer. */
static const char *
path_of(const char *name)
{
    static char p[256];

    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return p;
}

/* Write n bytes of s to dir/name. */
static const char *
write_file(const char *name, const char *s, size_t n)
{
    const char *p = path_of(name);
    FILE *f = fopen(p, "wb");

    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(s, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
    return p;
}

static void
setup(void)
{
    memcpy(dir, DIR_TEMPLATE, sizeof(DIR_TEMPLATE));
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

START_TEST(test_read)
{
    char *buf = NULL;
    size_t len = 99;
    struct stat st;
    const char *p = write_file("pw", "secret\n", 7);

    ck_assert_int_eq(yk_secfile_read(p, 64, &buf, &len, &st), 0);
    ck_assert_uint_eq(len, 7);
    ck_assert_str_eq(buf, "secret\n");
    ck_assert(S_ISREG(st.st_mode));
    yk_secfile_free(buf, len);
    ck_assert_int_eq(yk_secfile_read(p, 7, &buf, &len, NULL), 0);
    yk_secfile_free(buf, len);
    p = write_file("empty", "", 0);
    ck_assert_int_eq(yk_secfile_read(p, 7, &buf, &len, NULL), 0);
    ck_assert_uint_eq(len, 0);
    ck_assert_str_eq(buf, "");
    yk_secfile_free(buf, len);
    yk_secfile_free(NULL, 0);
}
END_TEST

START_TEST(test_refused)
{
    char *buf = (char *)1;
    size_t len = 99;
    struct stat st;
    const char *p = write_file("big", "12345678", 8);

    ck_assert_int_eq(yk_secfile_read(p, 7, &buf, &len, &st), EFBIG);
    ck_assert_ptr_null(buf);
    ck_assert_uint_eq(len, 0);
    ck_assert_int_eq(st.st_size, 8);   /* the stat, for the caller */
    ck_assert_int_eq(yk_secfile_read(dir, 64, &buf, &len, NULL), EINVAL);
    ck_assert_int_eq(yk_secfile_read(path_of("none"), 64, &buf, &len,
                                     NULL), ENOENT);
    ck_assert_int_eq(yk_secfile_read(NULL, 64, &buf, &len, NULL), EINVAL);
    /* A FIFO is refused at once: nothing writes to it, and the open does
     * not wait for a writer. */
    ck_assert_int_eq(mkfifo(path_of("fifo"), 0600), 0);
    ck_assert_int_eq(yk_secfile_read(path_of("fifo"), 64, &buf, &len,
                                     NULL), EINVAL);
    ck_assert_ptr_null(buf);
}
END_TEST

static void
teardown(void)
{
    const char *names[] = { "pw", "empty", "big", "fifo" };
    size_t i;

    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        (void)unlink(path_of(names[i]));
    (void)rmdir(dir);
}

static Suite *
secfile_suite(void)
{
    Suite *s = suite_create("secfile");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_read);
    tcase_add_test(tc, test_refused);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(secfile_suite());
    int failed;

    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
