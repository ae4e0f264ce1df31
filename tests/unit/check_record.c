/* SPDX-License-Identifier: MIT */
/* check_record.c: unit tests of the LDAP token record encodings. */
#include <config.h>

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "record.h"

#define SECRET_A "yk1 id=vvccccdefghi st=active serial=1234567 " \
    "at=1700000000 by=admin/admin@EXAMPLE.COM desc=Alice%27s%20key " \
    "wrap=ykw1 kvno=1 data"
#define STATE_A "yk1 id=vvccccdefghi ctr=65793 gen=7 nonce=0badf00d " \
    "used=1700000123"
#define STATE_ADMIN "yk1 id=cccc ctr=0 gen=0 nonce=- used=0"

/* Parse s as a secret record; the return code. */
static krb5_error_code
secret_code(const char *s)
{
    yk_secret_rec *rec = NULL;
    krb5_error_code ret = yk_secret_rec_parse(s, strlen(s), &rec);

    if (ret == 0)
        ck_assert_ptr_nonnull(rec);
    yk_secret_rec_free(rec);
    return ret;
}

/* Parse s as a state record; the return code. */
static krb5_error_code
state_code(const char *s)
{
    yk_state_rec rec;

    return yk_state_rec_parse(s, strlen(s), &rec);
}

/* Assert that a secret value (with desc) parses and formats back. */
static void
assert_secret_round_trip(const char *s)
{
    yk_secret_rec *rec = NULL;
    char *out = NULL;

    ck_assert_int_eq(yk_secret_rec_parse(s, strlen(s), &rec), 0);
    ck_assert_int_eq(yk_secret_rec_format(rec, &out), 0);
    ck_assert_str_eq(out, s);
    free(out);
    yk_secret_rec_free(rec);
}

START_TEST(test_secret_known)
{
    yk_secret_rec *rec = NULL;

    ck_assert_int_eq(yk_secret_rec_parse(SECRET_A, strlen(SECRET_A), &rec),
                     0);
    ck_assert_str_eq(rec->pubid, "vvccccdefghi");
    ck_assert_int_eq(rec->state, YK_TOKEN_ACTIVE);
    ck_assert_str_eq(rec->serial, "1234567");
    ck_assert_int_eq(rec->enrolled_at, 1700000000);
    ck_assert_str_eq(rec->enrolled_by, "admin/admin@EXAMPLE.COM");
    ck_assert_str_eq(rec->description, "Alice's key");
    ck_assert_str_eq(rec->wrapped, "ykw1 kvno=1 data");
    yk_secret_rec_free(rec);
    assert_secret_round_trip(SECRET_A);
}
END_TEST

START_TEST(test_secret_format)
{
    yk_secret_rec rec;
    char *out = NULL;

    memset(&rec, 0, sizeof(rec));
    strcpy(rec.pubid, "cbdefghijklnrtuv");
    rec.state = YK_TOKEN_PENDING;
    rec.serial = "";
    rec.enrolled_at = 0;
    rec.enrolled_by = "root";
    /* Space, percent, UTF-8 (e-acute), a tab and the plain set. */
    rec.description = "a b%c\xc3\xa9\td._~@/+:=-Z9";
    rec.wrapped = "x";
    ck_assert_int_eq(yk_secret_rec_format(&rec, &out), 0);
    ck_assert_str_eq(out, "yk1 id=cbdefghijklnrtuv st=pending serial= at=0 "
                     "by=root desc=a%20b%25c%C3%A9%09d._~@/+:=-Z9 wrap=x");
    assert_secret_round_trip(out);
    free(out);

    /* NULL strings are written as empty and read back as "". */
    rec.serial = NULL;
    rec.enrolled_by = NULL;
    rec.description = NULL;
    rec.state = YK_TOKEN_DISABLED;
    rec.enrolled_at = INT64_MAX;
    ck_assert_int_eq(yk_secret_rec_format(&rec, &out), 0);
    ck_assert_str_eq(out, "yk1 id=cbdefghijklnrtuv st=disabled serial= "
                     "at=9223372036854775807 by= desc= wrap=x");
    assert_secret_round_trip(out);
    free(out);
}
END_TEST

START_TEST(test_secret_copy)
{
    yk_secret_rec *rec = NULL, *cp = NULL;
    char *a = NULL, *b = NULL;

    ck_assert_int_eq(yk_secret_rec_parse(SECRET_A, strlen(SECRET_A), &rec),
                     0);
    ck_assert_int_eq(yk_secret_rec_copy(rec, &cp), 0);
    ck_assert_ptr_ne(cp->wrapped, rec->wrapped);
    ck_assert_int_eq(yk_secret_rec_format(rec, &a), 0);
    yk_secret_rec_free(rec);
    ck_assert_int_eq(yk_secret_rec_format(cp, &b), 0);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
    yk_secret_rec_free(cp);
    yk_secret_rec_free(NULL);
}
END_TEST

START_TEST(test_state_round_trip)
{
    yk_state_rec rec;
    char *out = NULL;

    ck_assert_int_eq(state_code(STATE_A), 0);
    ck_assert_int_eq(yk_state_rec_parse(STATE_A, strlen(STATE_A), &rec), 0);
    ck_assert_str_eq(rec.pubid, "vvccccdefghi");
    ck_assert_uint_eq(rec.counter, 65793);
    ck_assert_uint_eq(rec.gen, 7);
    ck_assert_int_eq(rec.has_nonce, 1);
    ck_assert_uint_eq(rec.nonce, 0x0badf00d);
    ck_assert_int_eq(rec.last_use, 1700000123);
    ck_assert_int_eq(yk_state_rec_format(&rec, &out), 0);
    ck_assert_str_eq(out, STATE_A);
    free(out);

    ck_assert_int_eq(yk_state_rec_parse(STATE_ADMIN, strlen(STATE_ADMIN),
                                        &rec), 0);
    ck_assert_int_eq(rec.has_nonce, 0);
    ck_assert_uint_eq(rec.nonce, YK_NONCE_NONE);
    ck_assert_int_eq(rec.last_use, 0);
    ck_assert_int_eq(yk_state_rec_format(&rec, &out), 0);
    ck_assert_str_eq(out, STATE_ADMIN);
    free(out);
}
END_TEST

START_TEST(test_state_limits)
{
    const char *max = "yk1 id=cccccccccccccccccccccccccccccccc "
        "ctr=4294967295 gen=18446744073709551615 nonce=ffffffff "
        "used=9223372036854775807";
    yk_state_rec rec;
    char *out = NULL;

    ck_assert_int_eq(yk_state_rec_parse(max, strlen(max), &rec), 0);
    ck_assert_uint_eq(rec.counter, UINT32_MAX);
    ck_assert_uint_eq(rec.gen, UINT64_MAX);
    ck_assert_int_eq(rec.last_use, INT64_MAX);
    ck_assert_int_eq(yk_state_rec_format(&rec, &out), 0);
    ck_assert_str_eq(out, max);
    free(out);
}
END_TEST

/* --- one test per malformed kind --------------------------------------- */

START_TEST(test_bad_version)
{
    ck_assert_int_eq(state_code("yk2 id=cccc ctr=0 gen=0 nonce=- used=0"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(state_code("YK1 id=cccc ctr=0 gen=0 nonce=- used=0"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(secret_code(""), YK_ERR_RECORD_FORMAT);
}
END_TEST

START_TEST(test_bad_field_order)
{
    ck_assert_int_eq(state_code("yk1 id=cccc gen=0 ctr=0 nonce=- used=0"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(secret_code("yk1 id=cccc serial= st=active at=0 by= "
                                 "desc= wrap=x"), YK_ERR_RECORD_FORMAT);
    /* A field missing. */
    ck_assert_int_eq(state_code("yk1 id=cccc ctr=0 gen=0 used=0"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(secret_code("yk1 id=cccc st=active serial= at=0 by= "
                                 "desc="), YK_ERR_RECORD_FORMAT);
}
END_TEST

START_TEST(test_bad_spacing)
{
    ck_assert_int_eq(state_code("yk1 id=cccc  ctr=0 gen=0 nonce=- used=0"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(state_code("yk1 id=cccc ctr=0 gen=0 nonce=- used=0 "),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(state_code(" yk1 id=cccc ctr=0 gen=0 nonce=- used=0"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(state_code("yk1 id=cccc ctr=0 gen=0 nonce=- used=0\n"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(secret_code("yk1 id=cccc st=active serial= at=0 by= "
                                 " desc= wrap=x"), YK_ERR_RECORD_FORMAT);
}
END_TEST

START_TEST(test_bad_trailing)
{
    ck_assert_int_eq(state_code("yk1 id=cccc ctr=0 gen=0 nonce=- used=0 x=1"),
                     YK_ERR_RECORD_FORMAT);
}
END_TEST

START_TEST(test_bad_leading_zero)
{
    ck_assert_int_eq(state_code("yk1 id=cccc ctr=01 gen=0 nonce=- used=0"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(state_code("yk1 id=cccc ctr=0 gen=00 nonce=- used=0"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(secret_code("yk1 id=cccc st=active serial=007 at=0 by= "
                                 "desc= wrap=x"), YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(secret_code("yk1 id=cccc st=active serial= at=01 by= "
                                 "desc= wrap=x"), YK_ERR_RECORD_FORMAT);
}
END_TEST

START_TEST(test_bad_range)
{
    ck_assert_int_eq(state_code("yk1 id=cccc ctr=4294967296 gen=0 nonce=- "
                                "used=0"), YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(state_code("yk1 id=cccc ctr=0 gen=18446744073709551616 "
                                "nonce=- used=0"), YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(state_code("yk1 id=cccc ctr=0 gen=0 nonce=- "
                                "used=9223372036854775808"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(state_code("yk1 id=cccc ctr=0 gen=0 nonce=- "
                                "used=99999999999999999999999"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(secret_code("yk1 id=cccc st=active serial=4294967296 "
                                 "at=0 by= desc= wrap=x"),
                     YK_ERR_RECORD_FORMAT);
}
END_TEST

START_TEST(test_bad_decimal)
{
    ck_assert_int_eq(state_code("yk1 id=cccc ctr= gen=0 nonce=- used=0"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(state_code("yk1 id=cccc ctr=-1 gen=0 nonce=- used=0"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(state_code("yk1 id=cccc ctr=+1 gen=0 nonce=- used=0"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(state_code("yk1 id=cccc ctr=1a gen=0 nonce=- used=0"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(state_code("yk1 id=cccc ctr=0x1 gen=0 nonce=- used=0"),
                     YK_ERR_RECORD_FORMAT);
}
END_TEST

START_TEST(test_bad_pct_needless)
{
    /* %41 is "A", which needs no escape. */
    ck_assert_int_eq(secret_code("yk1 id=cccc st=active serial= at=0 "
                                 "by=%41 desc= wrap=x"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(secret_code("yk1 id=cccc st=active serial= at=0 by= "
                                 "desc=%2F wrap=x"), YK_ERR_RECORD_FORMAT);
}
END_TEST

START_TEST(test_bad_pct_lower)
{
    ck_assert_int_eq(secret_code("yk1 id=cccc st=active serial= at=0 by= "
                                 "desc=%c3%a9 wrap=x"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(secret_code("yk1 id=cccc st=active serial= at=0 by= "
                                 "desc=%C3%A9 wrap=x"), 0);
}
END_TEST

START_TEST(test_bad_pct_escape)
{
    ck_assert_int_eq(secret_code("yk1 id=cccc st=active serial= at=0 by= "
                                 "desc=%G1 wrap=x"), YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(secret_code("yk1 id=cccc st=active serial= at=0 by= "
                                 "desc=%2 wrap=x"), YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(secret_code("yk1 id=cccc st=active serial= at=0 by= "
                                 "desc=% wrap=x"), YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(secret_code("yk1 id=cccc st=active serial= at=0 by= "
                                 "desc=%00 wrap=x"), YK_ERR_RECORD_FORMAT);
}
END_TEST

START_TEST(test_bad_pct_raw)
{
    ck_assert_int_eq(secret_code("yk1 id=cccc st=active serial= at=0 by= "
                                 "desc=a!b wrap=x"), YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(secret_code("yk1 id=cccc st=active serial= at=0 by= "
                                 "desc=\xc3\xa9 wrap=x"),
                     YK_ERR_RECORD_FORMAT);
}
END_TEST

START_TEST(test_bad_pubid)
{
    ck_assert_int_eq(state_code("yk1 id=CCCC ctr=0 gen=0 nonce=- used=0"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(state_code("yk1 id=ccc ctr=0 gen=0 nonce=- used=0"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(state_code("yk1 id=ccca ctr=0 gen=0 nonce=- used=0"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(state_code("yk1 id= ctr=0 gen=0 nonce=- used=0"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(state_code("yk1 id=cccccccccccccccccccccccccccccccccc "
                                "ctr=0 gen=0 nonce=- used=0"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(yk_pubid_valid("cccc"), 1);
    ck_assert_int_eq(yk_pubid_valid("cbdefghijklnrtuvcbdefghijklnrtuv"), 1);
    ck_assert_int_eq(yk_pubid_valid("cbdefghijklnrtuvcbdefghijklnrtuvcc"), 0);
    ck_assert_int_eq(yk_pubid_valid("c"), 0);
    ck_assert_int_eq(yk_pubid_valid(""), 0);
    ck_assert_int_eq(yk_pubid_valid("cCcc"), 0);
    ck_assert_int_eq(yk_pubid_valid(NULL), 0);
}
END_TEST

START_TEST(test_bad_nonce)
{
    ck_assert_int_eq(state_code("yk1 id=cccc ctr=0 gen=0 nonce=0BADF00D "
                                "used=0"), YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(state_code("yk1 id=cccc ctr=0 gen=0 nonce=badf00d "
                                "used=0"), YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(state_code("yk1 id=cccc ctr=0 gen=0 nonce=00badf00d "
                                "used=0"), YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(state_code("yk1 id=cccc ctr=0 gen=0 nonce= used=0"),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(state_code("yk1 id=cccc ctr=0 gen=0 nonce=-- used=0"),
                     YK_ERR_RECORD_FORMAT);
}
END_TEST

START_TEST(test_bad_state_name)
{
    int st;

    ck_assert_int_eq(secret_code("yk1 id=cccc st=Active serial= at=0 by= "
                                 "desc= wrap=x"), YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(secret_code("yk1 id=cccc st=revoked serial= at=0 by= "
                                 "desc= wrap=x"), YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(yk_token_state_parse("pending", &st), 0);
    ck_assert_int_eq(st, YK_TOKEN_PENDING);
    ck_assert_int_eq(yk_token_state_parse("disabled", &st), 0);
    ck_assert_int_eq(st, YK_TOKEN_DISABLED);
    ck_assert_int_eq(yk_token_state_parse("active ", &st),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_str_eq(yk_token_state_name(YK_TOKEN_ACTIVE), "active");
    ck_assert_ptr_null(yk_token_state_name(7));
}
END_TEST

START_TEST(test_bad_nul)
{
    static const char v[] = "yk1 id=cccc ctr=0 gen=0 nonce=- used=0\0";
    static const char s[] = "yk1 id=cccc st=active serial= at=0 by= desc= "
        "wrap=a\0b";
    yk_secret_rec *rec = NULL;
    yk_state_rec st;

    ck_assert_int_eq(yk_state_rec_parse(v, sizeof(v) - 1, &st),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(yk_state_rec_parse(v, sizeof(v) - 2, &st), 0);
    ck_assert_int_eq(yk_secret_rec_parse(s, sizeof(s) - 1, &rec),
                     YK_ERR_RECORD_FORMAT);
}
END_TEST

START_TEST(test_bad_length)
{
    char *big = NULL;
    const char *head = "yk1 id=cccc st=active serial= at=0 by= desc= wrap=";
    size_t hl = strlen(head);
    yk_secret_rec *rec = NULL;

    big = malloc(YK_RECORD_MAX + 2);
    ck_assert_ptr_nonnull(big);
    memcpy(big, head, hl);
    memset(big + hl, 'x', YK_RECORD_MAX + 1 - hl);
    big[YK_RECORD_MAX + 1] = '\0';
    ck_assert_int_eq(yk_secret_rec_parse(big, YK_RECORD_MAX + 1, &rec),
                     YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(yk_secret_rec_parse(big, YK_RECORD_MAX, &rec), 0);
    yk_secret_rec_free(rec);
    free(big);
}
END_TEST

START_TEST(test_bad_wrap)
{
    ck_assert_int_eq(secret_code("yk1 id=cccc st=active serial= at=0 by= "
                                 "desc= wrap="), YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(secret_code("yk1 id=cccc st=active serial= at=0 by= "
                                 "desc= wrap=a\tb"), YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(secret_code("yk1 id=cccc st=active serial= at=0 by= "
                                 "desc= wrap=a\x7f"), YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(secret_code("yk1 id=cccc st=active serial= at=0 by= "
                                 "desc= wrap=\xc3\xa9"), YK_ERR_RECORD_FORMAT);
    /* Spaces belong to the opaque rest. */
    ck_assert_int_eq(secret_code("yk1 id=cccc st=active serial= at=0 by= "
                                 "desc= wrap=a b "), 0);
}
END_TEST

START_TEST(test_format_refusals)
{
    yk_secret_rec rec;
    yk_state_rec st;
    char *out = NULL, *desc;

    memset(&rec, 0, sizeof(rec));
    strcpy(rec.pubid, "cccc");
    rec.state = YK_TOKEN_ACTIVE;
    rec.wrapped = "w";
    ck_assert_int_eq(yk_secret_rec_format(&rec, &out), 0);
    free(out);
    out = NULL;

    strcpy(rec.pubid, "CCCC");
    ck_assert_int_eq(yk_secret_rec_format(&rec, &out), YK_ERR_RECORD_FORMAT);
    strcpy(rec.pubid, "cccc");
    rec.state = 3;
    ck_assert_int_eq(yk_secret_rec_format(&rec, &out), YK_ERR_RECORD_FORMAT);
    rec.state = YK_TOKEN_ACTIVE;
    rec.enrolled_at = -1;
    ck_assert_int_eq(yk_secret_rec_format(&rec, &out), YK_ERR_RECORD_FORMAT);
    rec.enrolled_at = 0;
    rec.serial = "007";
    ck_assert_int_eq(yk_secret_rec_format(&rec, &out), YK_ERR_RECORD_FORMAT);
    rec.serial = "";
    rec.wrapped = "a\nb";
    ck_assert_int_eq(yk_secret_rec_format(&rec, &out), YK_ERR_RECORD_FORMAT);
    rec.wrapped = "";
    ck_assert_int_eq(yk_secret_rec_format(&rec, &out), YK_ERR_RECORD_FORMAT);
    rec.wrapped = "w";

    /* Escaping triples the description: too long for a value. */
    desc = malloc(YK_RECORD_MAX / 2);
    ck_assert_ptr_nonnull(desc);
    memset(desc, ' ', YK_RECORD_MAX / 2 - 1);
    desc[YK_RECORD_MAX / 2 - 1] = '\0';
    rec.description = desc;
    ck_assert_int_eq(yk_secret_rec_format(&rec, &out), YK_ERR_RECORD_FORMAT);
    free(desc);
    ck_assert_ptr_null(out);

    memset(&st, 0, sizeof(st));
    strcpy(st.pubid, "cccc");
    st.has_nonce = 2;
    ck_assert_int_eq(yk_state_rec_format(&st, &out), YK_ERR_RECORD_FORMAT);
    st.has_nonce = 0;
    st.last_use = -5;
    ck_assert_int_eq(yk_state_rec_format(&st, &out), YK_ERR_RECORD_FORMAT);
    st.last_use = 0;
    strcpy(st.pubid, "ccc");
    ck_assert_int_eq(yk_state_rec_format(&st, &out), YK_ERR_RECORD_FORMAT);
    ck_assert_ptr_null(out);
}
END_TEST

START_TEST(test_policy)
{
    int p = -1;

    ck_assert_int_eq(yk_policy_parse("2fa", 3, &p), 0);
    ck_assert_int_eq(p, YK_POLICY_2FA);
    ck_assert_int_eq(yk_policy_parse("otp", 3, &p), 0);
    ck_assert_int_eq(p, YK_POLICY_OTP);
    ck_assert_int_eq(yk_policy_parse("OTP", 3, &p), YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(yk_policy_parse("otp ", 4, &p), YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(yk_policy_parse("2f", 2, &p), YK_ERR_RECORD_FORMAT);
    ck_assert_int_eq(yk_policy_parse("otp\0", 4, &p), YK_ERR_RECORD_FORMAT);
    ck_assert_str_eq(yk_policy_name(YK_POLICY_2FA), "2fa");
    ck_assert_str_eq(yk_policy_name(YK_POLICY_OTP), "otp");
    ck_assert_ptr_null(yk_policy_name(9));
}
END_TEST

/* The record suite. */
static Suite *
record_suite(void)
{
    Suite *s = suite_create("record");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_secret_known);
    tcase_add_test(tc, test_secret_format);
    tcase_add_test(tc, test_secret_copy);
    tcase_add_test(tc, test_state_round_trip);
    tcase_add_test(tc, test_state_limits);
    tcase_add_test(tc, test_bad_version);
    tcase_add_test(tc, test_bad_field_order);
    tcase_add_test(tc, test_bad_spacing);
    tcase_add_test(tc, test_bad_trailing);
    tcase_add_test(tc, test_bad_leading_zero);
    tcase_add_test(tc, test_bad_range);
    tcase_add_test(tc, test_bad_decimal);
    tcase_add_test(tc, test_bad_pct_needless);
    tcase_add_test(tc, test_bad_pct_lower);
    tcase_add_test(tc, test_bad_pct_escape);
    tcase_add_test(tc, test_bad_pct_raw);
    tcase_add_test(tc, test_bad_pubid);
    tcase_add_test(tc, test_bad_nonce);
    tcase_add_test(tc, test_bad_state_name);
    tcase_add_test(tc, test_bad_nul);
    tcase_add_test(tc, test_bad_length);
    tcase_add_test(tc, test_bad_wrap);
    tcase_add_test(tc, test_format_refusals);
    tcase_add_test(tc, test_policy);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(record_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
