/* SPDX-License-Identifier: MIT */
/* check_postread.c: unit tests of the swap's post-read parser. */
#include <config.h>

#include <check.h>
#include <lber.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "postread.h"
#include "record.h"

#define MINE "yk1 id=vvccccdefghi ctr=300 gen=8 nonce=0badf00d used=1700000123"
#define SAME_NONCE "yk1 id=vvccccdefghi ctr=300 gen=9 nonce=0badf00d used=1"
#define OTHER_NONCE "yk1 id=vvccccdefghi ctr=300 gen=9 nonce=12345678 used=1"
#define HIGHER "yk1 id=vvccccdefghi ctr=301 gen=2 nonce=12345678 used=1"
#define LOWER "yk1 id=vvccccdefghi ctr=299 gen=99 nonce=12345678 used=1"
#define OTHER_TOKEN "yk1 id=vvccccdefghj ctr=999 gen=1 nonce=12345678 used=1"
#define LOWER2 "yk1 id=vvccccdefghi ctr=12 gen=3 nonce=00000001 used=1"
#define OTHER_LOW "yk1 id=vvccccdefghj ctr=1 gen=1 nonce=00000001 used=1"

/* A SearchResultEntry (BER, [APPLICATION 4] as slapd sends it) with
 * attribute attr holding the n values
 * vals, then optionally a second attribute; *len_out its size. */
static char *
entry(const char *attr, const char **vals, size_t n, int second,
      size_t *len_out)
{
    BerElement *ber = ber_alloc_t(LBER_USE_DER);
    struct berval *bv = NULL;
    char *out;
    size_t i;

    ck_assert_ptr_nonnull(ber);
    ck_assert_int_ne(ber_printf(ber, "t{s{{s[", (ber_tag_t)0x64U,
                                "uid=a,dc=example,dc=com", attr), -1);
    for (i = 0; i < n; i++)
        ck_assert_int_ne(ber_printf(ber, "s", vals[i]), -1);
    ck_assert_int_ne(ber_printf(ber, "]}"), -1);
    if (second)
        ck_assert_int_ne(ber_printf(ber, "{s[s]}", "cn", "a"), -1);
    ck_assert_int_ne(ber_printf(ber, "}}"), -1);
    ck_assert_int_ne(ber_flatten(ber, &bv), -1);
    out = malloc(bv->bv_len);
    ck_assert_ptr_nonnull(out);
    memcpy(out, bv->bv_val, bv->bv_len);
    *len_out = bv->bv_len;
    ber_bvfree(bv);
    ber_free(ber, 1);
    return out;
}

/* The rival kind for an entry of yubikeyTokenState values (or the error
 * code, negated). */
static int
rival_of(const char **vals, size_t n, int second)
{
    yk_state_rec mine;
    size_t len;
    char *e = entry("yubikeyTokenState", vals, n, second, &len);
    int rival = -1;
    krb5_error_code ret;

    ck_assert_int_eq(yk_state_rec_parse(MINE, strlen(MINE), &mine), 0);
    ret = yk_postread_rival(e, len, MINE, &mine, &rival);
    free(e);
    return ret == 0 ? rival : -(int)ret;
}

START_TEST(test_alone)
{
    const char *v[] = { MINE };

    ck_assert_int_eq(rival_of(v, 1, 0), YK_RIVAL_NONE);
    ck_assert_int_eq(rival_of(v, 1, 1), YK_RIVAL_NONE);
}
END_TEST

START_TEST(test_rivals)
{
    const char *retrans[] = { SAME_NONCE, MINE };
    const char *replay[] = { MINE, OTHER_NONCE };
    const char *older[] = { HIGHER, MINE, SAME_NONCE };
    const char *lower[] = { LOWER, MINE, OTHER_TOKEN, "not a record" };
    const char *both[] = { SAME_NONCE, OTHER_NONCE, MINE };

    ck_assert_int_eq(rival_of(retrans, 2, 0), YK_RIVAL_RETRANSMISSION);
    ck_assert_int_eq(rival_of(replay, 2, 1), YK_RIVAL_REPLAY);
    ck_assert_int_eq(rival_of(older, 3, 0), YK_RIVAL_OLDER);
    ck_assert_int_eq(rival_of(lower, 4, 0), YK_RIVAL_NONE);
    ck_assert_int_eq(rival_of(both, 3, 0), YK_RIVAL_REPLAY);
}
END_TEST

START_TEST(test_mine_missing)
{
    const char *v[] = { OTHER_NONCE };

    ck_assert_int_eq(rival_of(v, 1, 0), -(int)YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(rival_of(NULL, 0, 0), -(int)YK_ERR_RECORD_FORMAT);
}
END_TEST

START_TEST(test_other_attribute)
{
    const char *v[] = { MINE };
    yk_state_rec mine;
    size_t len;
    char *e = entry("cn", v, 1, 0, &len);
    int rival;

    ck_assert_int_eq(yk_state_rec_parse(MINE, strlen(MINE), &mine), 0);
    ck_assert_int_eq(yk_postread_rival(e, len, MINE, &mine, &rival),
                     YK_ERR_RECORD_FORMAT);
    free(e);
}
END_TEST

/* Every truncation, a trailing byte and a flipped tag: refused. */
START_TEST(test_malformed)
{
    const char *v[] = { MINE, OTHER_NONCE };
    yk_state_rec mine;
    size_t len, cut;
    char *e = entry("yubikeyTokenState", v, 2, 1, &len), *longer;
    int rival;

    ck_assert_int_eq(yk_state_rec_parse(MINE, strlen(MINE), &mine), 0);
    ck_assert_int_eq(yk_postread_rival(e, len, MINE, &mine, &rival), 0);
    ck_assert_int_eq(rival, YK_RIVAL_REPLAY);
    for (cut = 0; cut < len; cut++)
        ck_assert_int_eq(yk_postread_rival(e, cut, MINE, &mine, &rival),
                         YK_ERR_RECORD_FORMAT);
    longer = malloc(len + 1);
    ck_assert_ptr_nonnull(longer);
    memcpy(longer, e, len);
    longer[len] = 0x04;
    ck_assert_int_eq(yk_postread_rival(longer, len + 1, MINE, &mine, &rival),
                     YK_ERR_RECORD_FORMAT);
    e[0] = 0x30;   /* a SEQUENCE, not the entry's [APPLICATION 4] */
    ck_assert_int_eq(yk_postread_rival(e, len, MINE, &mine, &rival),
                     YK_ERR_RECORD_FORMAT);
    free(longer);
    free(e);
    ck_assert_int_eq(yk_postread_rival(NULL, 0, MINE, &mine, &rival),
                     YK_ERR_RECORD_FORMAT);
}
END_TEST

/* The lower values of mine's token: exactly those, copied; none is
 * NULL; a malformed entry is refused as by yk_postread_rival. */
START_TEST(test_lower)
{
    const char *v[] = { LOWER, MINE, OTHER_LOW, HIGHER, "not a record",
                        SAME_NONCE, LOWER2 };
    const char *alone[] = { MINE, OTHER_LOW };
    const char *nomine[] = { LOWER };
    yk_state_rec mine;
    size_t len;
    char *e, **lower = (char **)1;

    ck_assert_int_eq(yk_state_rec_parse(MINE, strlen(MINE), &mine), 0);
    e = entry("yubikeyTokenState", v, 7, 1, &len);
    ck_assert_int_eq(yk_postread_lower(e, len, MINE, &mine, &lower), 0);
    ck_assert_ptr_nonnull(lower);
    ck_assert_str_eq(lower[0], LOWER);
    ck_assert_str_eq(lower[1], LOWER2);
    ck_assert_ptr_null(lower[2]);
    yk_postread_free(lower);
    ck_assert_int_eq(yk_postread_lower(e, len - 1, MINE, &mine, &lower),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_ptr_null(lower);
    free(e);

    e = entry("yubikeyTokenState", alone, 2, 0, &len);
    lower = (char **)1;
    ck_assert_int_eq(yk_postread_lower(e, len, MINE, &mine, &lower), 0);
    ck_assert_ptr_null(lower);
    free(e);

    e = entry("yubikeyTokenState", nomine, 1, 0, &len);
    ck_assert_int_eq(yk_postread_lower(e, len, MINE, &mine, &lower),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_ptr_null(lower);
    free(e);
    yk_postread_free(NULL);
}
END_TEST

static Suite *
postread_suite(void)
{
    Suite *s = suite_create("postread");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_alone);
    tcase_add_test(tc, test_rivals);
    tcase_add_test(tc, test_mine_missing);
    tcase_add_test(tc, test_other_attribute);
    tcase_add_test(tc, test_malformed);
    tcase_add_test(tc, test_lower);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(postread_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
