/* SPDX-License-Identifier: MIT */
/* check_shtab.c: unit tests of kdcplugin/shtab.c (the token states the
 * KDC's workers share).  The source is included to reach the lock. */
#include <config.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "otp.h"
#include "shtab.c"

static void
key_pol(const char *principal, const char *pubid, const char *secret,
        int policy, unsigned char key[YK_SHTAB_KEY_LEN])
{
    ck_assert_int_eq(yk_shtab_key(principal, pubid, secret, strlen(secret),
                                  policy, key), 0);
}

static void
key_of(const char *principal, const char *pubid, const char *secret,
       unsigned char key[YK_SHTAB_KEY_LEN])
{
    key_pol(principal, pubid, secret, -1, key);
}

/* The value held for key above gen, as a string ("" when none). */
static const char *
value(yk_shtab *t, const unsigned char *key, uint64_t gen)
{
    static char buf[YK_SHTAB_RAW_MAX + 1];
    size_t len = 99;

    if (!yk_shtab_get(t, key, gen, buf, YK_SHTAB_RAW_MAX, &len)) {
        ck_assert_uint_eq(len, 0);
        return "";
    }
    buf[len] = '\0';
    return buf;
}

START_TEST(test_keys_differ)
{
    unsigned char a[YK_SHTAB_KEY_LEN], b[YK_SHTAB_KEY_LEN];

    key_of("alice@R", "vvcc", "secret", a);
    key_of("alice@R", "vvcc", "secret", b);
    ck_assert_mem_eq(a, b, YK_SHTAB_KEY_LEN);
    /* Each part counts, and the boundaries between them. */
    key_of("alice@R", "vvcc", "secreT", b);
    ck_assert(memcmp(a, b, YK_SHTAB_KEY_LEN) != 0);
    key_of("alice@R", "vvcd", "secret", b);
    ck_assert(memcmp(a, b, YK_SHTAB_KEY_LEN) != 0);
    key_of("alice/sign@R", "vvcc", "secret", b);
    ck_assert(memcmp(a, b, YK_SHTAB_KEY_LEN) != 0);
    key_of("alice@Rv", "vcc", "secret", b);
    ck_assert(memcmp(a, b, YK_SHTAB_KEY_LEN) != 0);
    /* The policy too: a policy change keeps the secret value. */
    key_pol("alice@R", "vvcc", "secret", 0, b);
    ck_assert(memcmp(a, b, YK_SHTAB_KEY_LEN) != 0);
    key_pol("alice@R", "vvcc", "secret", 1, a);
    ck_assert(memcmp(a, b, YK_SHTAB_KEY_LEN) != 0);
}
END_TEST

START_TEST(test_put_get_generations)
{
    yk_shtab *t = NULL;
    unsigned char k[YK_SHTAB_KEY_LEN], other[YK_SHTAB_KEY_LEN];

    ck_assert_int_eq(yk_shtab_new(&t), 0);
    key_of("alice@R", "vvcc", "s1", k);
    key_of("alice@R", "vvcc", "s2", other);
    ck_assert_str_eq(value(t, k, 0), "");
    yk_shtab_put(t, k, 10, 0, "gen10", 5);
    ck_assert_str_eq(value(t, k, 0), "gen10");
    ck_assert_str_eq(value(t, k, 9), "gen10");
    /* Nothing newer than what the caller holds. */
    ck_assert_str_eq(value(t, k, 10), "");
    ck_assert_str_eq(value(t, k, 11), "");
    /* Another secret (a token enrolled again) never meets it. */
    ck_assert_str_eq(value(t, other, 0), "");
    /* An older or equal generation does not replace it; a newer does. */
    yk_shtab_put(t, k, 9, 0, "gen9", 4);
    yk_shtab_put(t, k, 10, 0, "again", 5);
    ck_assert_str_eq(value(t, k, 0), "gen10");
    yk_shtab_put(t, k, 12, 0, "gen12", 5);
    ck_assert_str_eq(value(t, k, 0), "gen12");
    /* What the write server holds now replaces it, even if lower (a
     * restored directory). */
    yk_shtab_put(t, k, 7, 1, "gen7", 4);
    ck_assert_str_eq(value(t, k, 0), "gen7");
    ck_assert_str_eq(value(t, k, 7), "");
    yk_shtab_free(t);
    yk_shtab_free(NULL);
    /* A NULL table holds nothing and takes nothing. */
    yk_shtab_put(NULL, k, 1, 0, "x", 1);
    ck_assert_str_eq(value(NULL, k, 0), "");
}
END_TEST

START_TEST(test_sizes)
{
    yk_shtab *t = NULL;
    unsigned char k[YK_SHTAB_KEY_LEN];
    char big[YK_SHTAB_RAW_MAX + 1], small[8];
    size_t len = 0;

    ck_assert_int_eq(yk_shtab_new(&t), 0);
    key_of("bob@R", "vvcc", "s", k);
    memset(big, 'x', sizeof(big));
    yk_shtab_put(t, k, 1, 0, big, sizeof(big));     /* too long: not held */
    ck_assert_str_eq(value(t, k, 0), "");
    yk_shtab_put(t, k, 1, 0, "", 0);                /* empty: not held */
    ck_assert_str_eq(value(t, k, 0), "");
    yk_shtab_put(t, k, 2, 0, big, YK_SHTAB_RAW_MAX);
    ck_assert_uint_eq(strlen(value(t, k, 0)), YK_SHTAB_RAW_MAX);
    /* A value that does not fit the caller's buffer is not copied. */
    ck_assert_int_eq(yk_shtab_get(t, k, 0, small, sizeof(small), &len), 0);
    ck_assert_uint_eq(len, 0);
    yk_shtab_free(t);
}
END_TEST

/* More keys than a set holds: the least recently written go, the others
 * stay; nothing is lost beyond a set's capacity. */
START_TEST(test_eviction)
{
    yk_shtab *t = NULL;
    unsigned char keys[3 * YK_SHTAB_WAYS][YK_SHTAB_KEY_LEN];
    char pubid[16];
    size_t n = 0, i, held = 0;
    uint32_t h, want = 0;

    ck_assert_int_eq(yk_shtab_new(&t), 0);
    /* Keys that fall into one set. */
    for (i = 0; n < 3 * YK_SHTAB_WAYS && i < 100000; i++) {
        snprintf(pubid, sizeof(pubid), "p%zu", i);
        key_of("carol@R", pubid, "s", keys[n]);
        memcpy(&h, keys[n], sizeof(h));
        if (n == 0)
            want = h % YK_SHTAB_SETS;
        if (h % YK_SHTAB_SETS == want)
            n++;
    }
    ck_assert_uint_eq(n, 3 * YK_SHTAB_WAYS);
    for (i = 0; i < n; i++) {
        yk_shtab_put(t, keys[i], 1, 0, "v", 1);
        usleep(1500);      /* distinct write times (milliseconds) */
    }
    for (i = 0; i < n; i++) {
        if (*value(t, keys[i], 0) != '\0') {
            held++;
            ck_assert_uint_ge(i, n - YK_SHTAB_WAYS);   /* the newest */
        }
    }
    ck_assert_uint_eq(held, YK_SHTAB_WAYS);
    yk_shtab_free(t);
}
END_TEST

/* What one worker puts, another (a forked child, as krb5kdc's workers
 * are) finds, and the other way round. */
START_TEST(test_shared_across_fork)
{
    yk_shtab *t = NULL;
    unsigned char k1[YK_SHTAB_KEY_LEN], k2[YK_SHTAB_KEY_LEN];
    pid_t pid;
    int status;

    ck_assert_int_eq(yk_shtab_new(&t), 0);
    key_of("dave@R", "vvcc", "s", k1);
    key_of("erin@R", "vvcc", "s", k2);
    yk_shtab_put(t, k1, 5, 0, "parent", 6);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int ok = strcmp(value(t, k1, 0), "parent") == 0;

        yk_shtab_put(t, k2, 7, 0, "child", 5);
        yk_shtab_put(t, k1, 6, 0, "child6", 6);
        _exit(ok ? 0 : 1);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_str_eq(value(t, k2, 0), "child");
    ck_assert_str_eq(value(t, k1, 0), "child6");
    yk_shtab_free(t);
}
END_TEST

/* A worker holding the lock is never waited for; one that died holding
 * it leaves the table emptied and usable. */
START_TEST(test_busy_and_dead_owner)
{
    yk_shtab *t = NULL;
    unsigned char k[YK_SHTAB_KEY_LEN];
    int fds[2], status;
    char c;
    pid_t pid;

    ck_assert_int_eq(yk_shtab_new(&t), 0);
    key_of("fred@R", "vvcc", "s", k);
    yk_shtab_put(t, k, 3, 0, "three", 5);
    ck_assert_int_eq(pipe(fds), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (pthread_mutex_lock(&t->map->lock) != 0)
            _exit(1);
        if (write(fds[1], "L", 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    ck_assert_int_eq(read(fds[0], &c, 1), 1);
    /* Busy: passed over, nothing waits (the put is dropped). */
    ck_assert_str_eq(value(t, k, 0), "");
    yk_shtab_put(t, k, 4, 0, "four", 4);
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    /* The owner died: emptied (a slot may be half written), usable. */
    ck_assert_str_eq(value(t, k, 0), "");
    yk_shtab_put(t, k, 4, 0, "four", 4);
    ck_assert_str_eq(value(t, k, 0), "four");
    close(fds[0]);
    close(fds[1]);
    yk_shtab_free(t);
}
END_TEST

static Suite *
shtab_suite(void)
{
    Suite *s = suite_create("shtab");
    TCase *tc = tcase_create("shtab");

    tcase_add_test(tc, test_keys_differ);
    tcase_add_test(tc, test_put_get_generations);
    tcase_add_test(tc, test_sizes);
    tcase_add_test(tc, test_eviction);
    tcase_add_test(tc, test_shared_across_fork);
    tcase_add_test(tc, test_busy_and_dead_owner);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr;
    int failed;

    if (yk_crypto_init() != 0)
        return EXIT_FAILURE;
    sr = srunner_create(shtab_suite());
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
