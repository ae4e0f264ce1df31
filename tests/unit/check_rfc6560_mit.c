/* SPDX-License-Identifier: MIT */
/* check_rfc6560_mit.c: our RFC 6560 codec against MIT's own, at run time. */

#include <config.h>

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <krb5.h>

#include "padata.h"
#include "rfc6560.h"

/*
 * libkrb5.so.3 exports MIT's RFC 6560 encoders and decoders as private
 * symbols (encode_krb5_pa_otp_req and friends; `nm -D libkrb5.so.3 | grep
 * otp`).  Their structures are declared in k5-int.h, which is not
 * installed: the declarations below restate that layout as of krb5 1.20
 * (unchanged since the OTP code came in 1.12) under names of our own.  The
 * link against plain -lkrb5 is the check that the symbols still exist; a
 * krb5 whose layout changed would fail these tests, not pass them.
 *
 * For many values both sides can represent (MIT omits empty optional
 * strings and treats length/format/iterationCount -1 and kvno 0 as
 * absent), every test encodes with both codecs and wants the same bytes,
 * then decodes each side's bytes with the other codec.
 */

typedef struct {
    krb5_data algorithm;
    krb5_data parameters;
} mit_algid;

typedef struct {
    krb5_flags flags;
    krb5_data vendor;
    krb5_data challenge;
    krb5_int32 length;
    krb5_int32 format;
    krb5_data token_id;
    krb5_data alg_id;
    mit_algid **supported_hash_alg;
    krb5_int32 iteration_count;
} mit_tokeninfo;

typedef struct {
    krb5_data nonce;
    krb5_data service;
    mit_tokeninfo **tokeninfo;
    krb5_data salt;
    krb5_data s2kparams;
} mit_challenge;

typedef struct {
    krb5_int32 flags;
    krb5_data nonce;
    krb5_enc_data enc_data;
    mit_algid *hash_alg;
    krb5_int32 iteration_count;
    krb5_data otp_value;
    krb5_data pin;
    krb5_data challenge;
    krb5_timestamp time;
    krb5_data counter;
    krb5_int32 format;
    krb5_data token_id;
    krb5_data alg_id;
    krb5_data vendor;
} mit_request;

krb5_error_code encode_krb5_pa_otp_challenge(const mit_challenge *,
                                             krb5_data **);
krb5_error_code decode_krb5_pa_otp_challenge(const krb5_data *,
                                             mit_challenge **);
krb5_error_code encode_krb5_pa_otp_req(const mit_request *, krb5_data **);
krb5_error_code decode_krb5_pa_otp_req(const krb5_data *, mit_request **);
krb5_error_code encode_krb5_pa_otp_enc_req(const krb5_data *, krb5_data **);
krb5_error_code decode_krb5_pa_otp_enc_req(const krb5_data *, krb5_data **);
void k5_free_pa_otp_challenge(krb5_context, mit_challenge *);
void k5_free_pa_otp_req(krb5_context, mit_request *);

#define ROUNDS 400               /* random values per test */
#define MIT_ABSENT_INT (-1)      /* MIT's "unspecified" Int32 */

static krb5_context ctx;

/* A deterministic generator (xorshift32), one sequence per test. */
static uint32_t rng_state;

/* The next pseudo-random 32 bits. */
static uint32_t
rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

/* A length in 1..max, often at a length-form edge. */
static size_t
rng_len(size_t max)
{
    static const size_t edges[] = { 1, 2, 127, 128, 129, 255, 256 };
    size_t e = edges[rng() % (sizeof(edges) / sizeof(edges[0]))];

    if (rng() % 2 == 0 && e <= max)
        return e;
    return 1 + rng() % max;
}

/* An Int32 that MIT can carry (never its "absent" -1), of every size. */
static int32_t
rng_int(void)
{
    uint32_t u = rng() >> (rng() % 32);
    int32_t v;

    if (rng() % 2)
        u = ~u;
    memcpy(&v, &u, sizeof(v));
    return v == MIT_ABSENT_INT ? 0 : v;
}

/* Fill n bytes of buf with random bytes and return a krb5_data over them
 * (n at least 1: MIT drops empty optional strings). */
static krb5_data
rng_data(uint8_t *buf, size_t n)
{
    krb5_data d;
    size_t i;

    for (i = 0; i < n; i++)
        buf[i] = (uint8_t)rng();
    d.magic = KV5M_DATA;
    d.length = (unsigned int)n;
    d.data = (char *)buf;
    return d;
}

/* Maybe fill an optional string of up to max bytes into *ours and *mits
 * (both over buf); absent is an empty krb5_data for MIT. */
static void
rng_opt(uint8_t *buf, size_t max, yk_rfc6560_opt *ours, krb5_data *mits)
{
    memset(ours, 0, sizeof(*ours));
    memset(mits, 0, sizeof(*mits));
    if (rng() % 2)
        return;
    ours->present = TRUE;
    ours->data = rng_data(buf, rng_len(max));
    *mits = ours->data;
}

/* Maybe fill an optional Int32 into *ours and *mits (-1 when absent). */
static void
rng_optint(yk_rfc6560_optint *ours, krb5_int32 *mits)
{
    ours->present = (rng() % 2) ? TRUE : FALSE;
    ours->value = ours->present ? rng_int() : 0;
    *mits = ours->present ? ours->value : MIT_ABSENT_INT;
}

/* Assert that MIT's optional string m says what ours says. */
static void
assert_opt_mit(const yk_rfc6560_opt *o, const krb5_data *m)
{
    if (!o->present) {
        ck_assert_uint_eq(m->length, 0);
        return;
    }
    ck_assert_uint_eq(m->length, o->data.length);
    ck_assert_mem_eq(m->data, o->data.data, m->length);
}

/* Assert that MIT's optional Int32 m says what ours says. */
static void
assert_optint_mit(const yk_rfc6560_optint *o, krb5_int32 m)
{
    ck_assert_int_eq(m, o->present ? o->value : MIT_ABSENT_INT);
}

/* Assert that two optional strings of ours say the same. */
static void
assert_opt_same(const yk_rfc6560_opt *a, const yk_rfc6560_opt *b)
{
    ck_assert_int_eq(!!a->present, !!b->present);
    if (a->present) {
        ck_assert_uint_eq(a->data.length, b->data.length);
        ck_assert_mem_eq(a->data.data, b->data.data, a->data.length);
    }
}

/* Assert that the DER both codecs wrote is the same. */
static void
assert_same_der(const krb5_data *ours, const krb5_data *mits)
{
    ck_assert_uint_eq(ours->length, mits->length);
    ck_assert_mem_eq(ours->data, mits->data, ours->length);
}

/* Per-round buffers for the random strings. */
typedef struct {
    uint8_t nonce[YK_RFC6560_NONCE_MAX];
    uint8_t s[8][YK_RFC6560_VALUE_MAX];
    uint8_t ti[YK_RFC6560_TOKENINFO_MAX][4][YK_RFC6560_STRING_MAX];
} pool;

/* Open a krb5 context for MIT's free functions. */
static void
setup(void)
{
    ck_assert_int_eq(krb5_init_context(&ctx), 0);
}

/* Close it. */
static void
teardown(void)
{
    krb5_free_context(ctx);
    ctx = NULL;
}

START_TEST(test_request_agrees)
{
    static pool p;
    yk_rfc6560_request ours, back;
    mit_request mits, *mback = NULL;
    krb5_data der = { 0 }, *mder = NULL;
    uint32_t flags;
    int round;

    rng_state = 0x6560a001;
    for (round = 0; round < ROUNDS; round++) {
        memset(&ours, 0, sizeof(ours));
        memset(&mits, 0, sizeof(mits));
        flags = (round % 4 == 0) ? 0 : rng();
        ours.flags = flags;
        memcpy(&mits.flags, &flags, sizeof(flags));
        rng_opt(p.nonce, YK_RFC6560_NONCE_MAX, &ours.nonce, &mits.nonce);
        ours.enc_data.enctype = rng_int();
        ours.has_kvno = (rng() % 2) ? TRUE : FALSE;
        ours.enc_data.kvno = ours.has_kvno ? (rng() | 1) : 0;
        ours.enc_data.ciphertext =
            rng_data(p.s[0], rng_len(YK_RFC6560_CIPHERTEXT_MAX));
        mits.enc_data = ours.enc_data;
        mits.iteration_count = MIT_ABSENT_INT;
        rng_opt(p.s[1], YK_RFC6560_VALUE_MAX, &ours.otp_value,
                &mits.otp_value);
        rng_opt(p.s[2], YK_RFC6560_VALUE_MAX, &ours.pin, &mits.pin);
        rng_optint(&ours.format, &mits.format);
        rng_opt(p.s[3], YK_RFC6560_STRING_MAX, &ours.token_id,
                &mits.token_id);
        rng_opt(p.s[4], YK_RFC6560_STRING_MAX, &ours.alg_id, &mits.alg_id);
        rng_opt(p.s[5], YK_RFC6560_STRING_MAX, &ours.vendor, &mits.vendor);

        /* The same bytes from both encoders. */
        ck_assert_int_eq(yk_rfc6560_encode_request(&ours, &der), 0);
        ck_assert_int_eq(encode_krb5_pa_otp_req(&mits, &mder), 0);
        assert_same_der(&der, mder);

        /* MIT reads ours as we wrote it... */
        ck_assert_int_eq(decode_krb5_pa_otp_req(&der, &mback), 0);
        ck_assert_int_eq(mback->flags, mits.flags);
        ck_assert_int_eq(mback->enc_data.enctype, ours.enc_data.enctype);
        ck_assert_uint_eq(mback->enc_data.kvno, ours.enc_data.kvno);
        ck_assert_uint_eq(mback->enc_data.ciphertext.length,
                          ours.enc_data.ciphertext.length);
        ck_assert_mem_eq(mback->enc_data.ciphertext.data,
                         ours.enc_data.ciphertext.data,
                         ours.enc_data.ciphertext.length);
        assert_opt_mit(&ours.nonce, &mback->nonce);
        assert_opt_mit(&ours.otp_value, &mback->otp_value);
        assert_opt_mit(&ours.pin, &mback->pin);
        assert_optint_mit(&ours.format, mback->format);
        assert_opt_mit(&ours.token_id, &mback->token_id);
        assert_opt_mit(&ours.alg_id, &mback->alg_id);
        assert_opt_mit(&ours.vendor, &mback->vendor);
        ck_assert_int_eq(mback->iteration_count, MIT_ABSENT_INT);
        ck_assert_ptr_null(mback->hash_alg);
        ck_assert_uint_eq(mback->challenge.length, 0);
        ck_assert_uint_eq(mback->counter.length, 0);
        ck_assert_int_eq(mback->time, 0);

        /* ...and we read MIT's as it wrote it. */
        memset(&back, 0, sizeof(back));
        ck_assert_int_eq(yk_rfc6560_decode_request(mder, &back), 0);
        ck_assert_uint_eq(back.flags, ours.flags);
        ck_assert_int_eq(back.enc_data.enctype, ours.enc_data.enctype);
        ck_assert_int_eq(!!back.has_kvno, !!ours.has_kvno);
        ck_assert_uint_eq(back.enc_data.kvno, ours.enc_data.kvno);
        ck_assert_mem_eq(back.enc_data.ciphertext.data,
                         ours.enc_data.ciphertext.data,
                         ours.enc_data.ciphertext.length);
        assert_opt_same(&back.nonce, &ours.nonce);
        assert_opt_same(&back.otp_value, &ours.otp_value);
        assert_opt_same(&back.pin, &ours.pin);
        ck_assert_int_eq(!!back.format.present, !!ours.format.present);
        ck_assert_int_eq(back.format.value, ours.format.value);
        assert_opt_same(&back.token_id, &ours.token_id);
        assert_opt_same(&back.alg_id, &ours.alg_id);
        assert_opt_same(&back.vendor, &ours.vendor);

        k5_free_pa_otp_req(ctx, mback);
        mback = NULL;
        krb5_free_data(ctx, mder);
        mder = NULL;
        yk_data_free(&der);
    }
}
END_TEST

/* Fill a random tokenInfo into *ti and *m over the pool strings s. */
static void
rng_tokeninfo(uint8_t s[4][YK_RFC6560_STRING_MAX], yk_rfc6560_tokeninfo *ti,
              mit_tokeninfo *m)
{
    uint32_t flags = (rng() % 3 == 0) ? 0 : rng();

    memset(ti, 0, sizeof(*ti));
    memset(m, 0, sizeof(*m));
    ti->flags = flags;
    memcpy(&m->flags, &flags, sizeof(flags));
    rng_opt(s[0], YK_RFC6560_STRING_MAX, &ti->vendor, &m->vendor);
    rng_opt(s[1], YK_RFC6560_STRING_MAX, &ti->challenge, &m->challenge);
    rng_optint(&ti->length, &m->length);
    rng_optint(&ti->format, &m->format);
    rng_opt(s[2], YK_RFC6560_STRING_MAX, &ti->token_id, &m->token_id);
    rng_opt(s[3], YK_RFC6560_STRING_MAX, &ti->alg_id, &m->alg_id);
    m->iteration_count = MIT_ABSENT_INT;
}

START_TEST(test_challenge_agrees)
{
    static pool p;
    yk_rfc6560_challenge ours, back;
    mit_challenge mits, *mback = NULL;
    mit_tokeninfo mti[YK_RFC6560_TOKENINFO_MAX];
    mit_tokeninfo *mlist[YK_RFC6560_TOKENINFO_MAX + 1];
    krb5_data der = { 0 }, *mder = NULL;
    size_t i, k;
    int round;

    rng_state = 0x6560c001;
    for (round = 0; round < ROUNDS; round++) {
        memset(&ours, 0, sizeof(ours));
        memset(&mits, 0, sizeof(mits));
        ours.nonce = rng_data(p.nonce, rng_len(YK_RFC6560_NONCE_MAX));
        mits.nonce = ours.nonce;
        rng_opt(p.s[0], YK_RFC6560_STRING_MAX, &ours.service,
                &mits.service);
        rng_opt(p.s[1], YK_RFC6560_VALUE_MAX, &ours.salt, &mits.salt);
        rng_opt(p.s[2], YK_RFC6560_STRING_MAX, &ours.s2kparams,
                &mits.s2kparams);
        k = 1 + rng() % YK_RFC6560_TOKENINFO_MAX;
        ours.n_tokeninfo = k;
        for (i = 0; i < k; i++) {
            rng_tokeninfo(p.ti[i], &ours.tokeninfo[i], &mti[i]);
            mlist[i] = &mti[i];
        }
        mlist[k] = NULL;
        mits.tokeninfo = mlist;

        ck_assert_int_eq(yk_rfc6560_encode_challenge(&ours, &der), 0);
        ck_assert_int_eq(encode_krb5_pa_otp_challenge(&mits, &mder), 0);
        assert_same_der(&der, mder);

        ck_assert_int_eq(decode_krb5_pa_otp_challenge(&der, &mback), 0);
        ck_assert_uint_eq(mback->nonce.length, ours.nonce.length);
        ck_assert_mem_eq(mback->nonce.data, ours.nonce.data,
                         ours.nonce.length);
        assert_opt_mit(&ours.service, &mback->service);
        assert_opt_mit(&ours.salt, &mback->salt);
        assert_opt_mit(&ours.s2kparams, &mback->s2kparams);
        for (i = 0; i < k; i++) {
            const yk_rfc6560_tokeninfo *ti = &ours.tokeninfo[i];
            const mit_tokeninfo *m = mback->tokeninfo[i];

            ck_assert_ptr_nonnull(m);
            ck_assert_int_eq(m->flags, mti[i].flags);
            assert_opt_mit(&ti->vendor, &m->vendor);
            assert_opt_mit(&ti->challenge, &m->challenge);
            assert_optint_mit(&ti->length, m->length);
            assert_optint_mit(&ti->format, m->format);
            assert_opt_mit(&ti->token_id, &m->token_id);
            assert_opt_mit(&ti->alg_id, &m->alg_id);
        }
        ck_assert_ptr_null(mback->tokeninfo[k]);

        memset(&back, 0, sizeof(back));
        ck_assert_int_eq(yk_rfc6560_decode_challenge(mder, &back), 0);
        ck_assert_uint_eq(back.n_tokeninfo, k);
        ck_assert_mem_eq(back.nonce.data, ours.nonce.data,
                         ours.nonce.length);
        assert_opt_same(&back.service, &ours.service);
        assert_opt_same(&back.salt, &ours.salt);
        assert_opt_same(&back.s2kparams, &ours.s2kparams);
        for (i = 0; i < k; i++) {
            ck_assert_uint_eq(back.tokeninfo[i].flags,
                              ours.tokeninfo[i].flags);
            assert_opt_same(&back.tokeninfo[i].vendor,
                            &ours.tokeninfo[i].vendor);
            assert_opt_same(&back.tokeninfo[i].alg_id,
                            &ours.tokeninfo[i].alg_id);
            ck_assert_int_eq(back.tokeninfo[i].length.value,
                             ours.tokeninfo[i].length.value);
        }

        k5_free_pa_otp_challenge(ctx, mback);
        mback = NULL;
        krb5_free_data(ctx, mder);
        mder = NULL;
        yk_data_free(&der);
    }
}
END_TEST

START_TEST(test_build_challenge_agrees)
{
    static const char *const vendors[] = { NULL, "YubiKey", "Yubico",
                                           "~ !" };
    uint8_t nonce_buf[YK_RFC6560_NONCE_MAX];
    krb5_data nonce, der = { 0 }, *mder = NULL;
    mit_tokeninfo ti, *list[2] = { &ti, NULL };
    mit_challenge mits;
    size_t i, n;

    /* The KDC's challenge as MIT's otp module would fill the structure. */
    rng_state = 0x6560b001;
    for (n = 1; n <= YK_RFC6560_NONCE_MAX; n++) {
        for (i = 0; i < sizeof(vendors) / sizeof(vendors[0]); i++) {
            nonce = rng_data(nonce_buf, n);
            memset(&ti, 0, sizeof(ti));
            ti.length = ti.format = ti.iteration_count = MIT_ABSENT_INT;
            if (vendors[i] != NULL) {
                ti.vendor.length = (unsigned int)strlen(vendors[i]);
                ti.vendor.data = (char *)vendors[i];
            }
            memset(&mits, 0, sizeof(mits));
            mits.nonce = nonce;
            mits.tokeninfo = list;
            ck_assert_int_eq(yk_rfc6560_build_challenge(&nonce, vendors[i],
                                                        &der), 0);
            ck_assert_int_eq(encode_krb5_pa_otp_challenge(&mits, &mder), 0);
            assert_same_der(&der, mder);
            krb5_free_data(ctx, mder);
            mder = NULL;
            yk_data_free(&der);
        }
    }
}
END_TEST

START_TEST(test_enc_request_agrees)
{
    uint8_t buf[YK_RFC6560_NONCE_MAX];
    krb5_data nonce, der = { 0 }, got, *mder = NULL, *mback = NULL;
    size_t n;

    rng_state = 0x6560e001;
    for (n = 1; n <= YK_RFC6560_NONCE_MAX; n++) {
        nonce = rng_data(buf, n);
        ck_assert_int_eq(yk_rfc6560_encode_enc_request(&nonce, &der), 0);
        ck_assert_int_eq(encode_krb5_pa_otp_enc_req(&nonce, &mder), 0);
        assert_same_der(&der, mder);
        ck_assert_int_eq(decode_krb5_pa_otp_enc_req(&der, &mback), 0);
        ck_assert_uint_eq(mback->length, n);
        ck_assert_mem_eq(mback->data, buf, n);
        ck_assert_int_eq(yk_rfc6560_decode_enc_request(mder, &got), 0);
        ck_assert_uint_eq(got.length, n);
        ck_assert_mem_eq(got.data, buf, n);
        krb5_free_data(ctx, mback);
        mback = NULL;
        krb5_free_data(ctx, mder);
        mder = NULL;
        yk_data_free(&der);
    }
}
END_TEST

/* The suite: both codecs agree, byte for byte, both ways. */
static Suite *
rfc6560_mit_suite(void)
{
    Suite *s = suite_create("rfc6560-mit");
    TCase *tc = tcase_create("mit-agrees");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_request_agrees);
    tcase_add_test(tc, test_challenge_agrees);
    tcase_add_test(tc, test_build_challenge_agrees);
    tcase_add_test(tc, test_enc_request_agrees);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(rfc6560_mit_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
