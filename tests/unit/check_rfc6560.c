/* SPDX-License-Identifier: MIT */
/* check_rfc6560.c: unit tests of the RFC 6560 OTP padata DER codec. */

#include <config.h>

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <krb5.h>

#include "errors.h"
#include "exact.h"
#include "padata.h"
#include "rfc6560.h"

/*
 * Known answers: the exact bytes MIT krb5 1.20.1's own encoder produces.
 * They were printed by a throwaway program (not kept in the tree) that
 * called the private encoders libkrb5.so.3 exports
 * (encode_krb5_pa_otp_challenge, encode_krb5_pa_otp_req,
 * encode_krb5_pa_otp_enc_req; Debian 12's libkrb5-3 1.20.1-2+deb12u5)
 * with MIT's structures declared as in k5-int.h of krb5-1.20.1-final, and
 * filled as each comment says.  Unset optional fields were left as MIT's
 * own code leaves them (empty krb5_data, -1 for length, format and
 * iterationCount, kvno 0).  Common inputs:
 *   NONCE36: the 36 bytes 0xa0, 0xa1, ... 0xc3 (MIT's otp KDC module makes
 *            4 bytes of time and as many random bytes as the armor key);
 *   CT68:    the 68 bytes (i * 37 + 11) mod 256 for i = 0..67 (the size of
 *            an aes256-cts-hmac-sha1-96 encryption of a PA-OTP-ENC-REQUEST
 *            holding NONCE36; any bytes do for the codec);
 *   OTP44:   "ccccccjlkgjhvhbtnvdnkudiuttikiirlgktbhcvkrhe".
 */
#define OTP44 "ccccccjlkgjhvhbtnvdnkudiuttikiirlgktbhcvkrhe"
#define NONCE_LEN 36
#define CT_LEN 68

/* Challenge {nonce NONCE36, tokenInfo {flags 0}}: what our KDC and MIT's
 * otp module send. */
static const uint8_t mit_challenge_plain[] = {
    0x30, 0x31, 0x80, 0x24, 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
    0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf, 0xb0, 0xb1, 0xb2, 0xb3,
    0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd, 0xbe, 0xbf,
    0xc0, 0xc1, 0xc2, 0xc3, 0xa2, 0x09, 0x30, 0x07, 0x80, 0x05, 0x00, 0x00,
    0x00, 0x00, 0x00
};

/* The same with otp-vendor "YubiKey" in the tokenInfo. */
static const uint8_t mit_challenge_vendor[] = {
    0x30, 0x3a, 0x80, 0x24, 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
    0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf, 0xb0, 0xb1, 0xb2, 0xb3,
    0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd, 0xbe, 0xbf,
    0xc0, 0xc1, 0xc2, 0xc3, 0xa2, 0x12, 0x30, 0x10, 0x80, 0x05, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x81, 0x07, 0x59, 0x75, 0x62, 0x69, 0x4b, 0x65, 0x79
};

/* Every field the decoder reads: nonce NONCE36, otp-service "yk", two
 * tokenInfos ({flags COLLECT_PIN|SEPARATE_PIN, vendor "YubiKey", challenge
 * "1234", length 44, format 2, tokenID 01 02, algID "yubico-otp"} and
 * {flags NEXTOTP}), salt "EXAMPLE.ORGalice", s2kparams 00 00 10 00. */
static const uint8_t mit_challenge_full[] = {
    0x30, 0x7b, 0x80, 0x24, 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
    0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf, 0xb0, 0xb1, 0xb2, 0xb3,
    0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd, 0xbe, 0xbf,
    0xc0, 0xc1, 0xc2, 0xc3, 0x81, 0x02, 0x79, 0x6b, 0xa2, 0x37, 0x30, 0x2c,
    0x80, 0x05, 0x00, 0x12, 0x00, 0x00, 0x00, 0x81, 0x07, 0x59, 0x75, 0x62,
    0x69, 0x4b, 0x65, 0x79, 0x82, 0x04, 0x31, 0x32, 0x33, 0x34, 0x83, 0x01,
    0x2c, 0x84, 0x01, 0x02, 0x85, 0x02, 0x01, 0x02, 0x86, 0x0a, 0x79, 0x75,
    0x62, 0x69, 0x63, 0x6f, 0x2d, 0x6f, 0x74, 0x70, 0x30, 0x07, 0x80, 0x05,
    0x00, 0x40, 0x00, 0x00, 0x00, 0x83, 0x10, 0x45, 0x58, 0x41, 0x4d, 0x50,
    0x4c, 0x45, 0x2e, 0x4f, 0x52, 0x47, 0x61, 0x6c, 0x69, 0x63, 0x65, 0x84,
    0x04, 0x00, 0x00, 0x10, 0x00
};

/* Request as MIT's client builds it for our challenge: flags 0, encData
 * {etype 18, kvno 0 (absent), CT68}, otp-value "pw" OTP44. */
static const uint8_t mit_request_plain[] = {
    0x30, 0x81, 0x86, 0x80, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0xa2, 0x4d,
    0xa0, 0x03, 0x02, 0x01, 0x12, 0xa2, 0x46, 0x04, 0x44, 0x0b, 0x30, 0x55,
    0x7a, 0x9f, 0xc4, 0xe9, 0x0e, 0x33, 0x58, 0x7d, 0xa2, 0xc7, 0xec, 0x11,
    0x36, 0x5b, 0x80, 0xa5, 0xca, 0xef, 0x14, 0x39, 0x5e, 0x83, 0xa8, 0xcd,
    0xf2, 0x17, 0x3c, 0x61, 0x86, 0xab, 0xd0, 0xf5, 0x1a, 0x3f, 0x64, 0x89,
    0xae, 0xd3, 0xf8, 0x1d, 0x42, 0x67, 0x8c, 0xb1, 0xd6, 0xfb, 0x20, 0x45,
    0x6a, 0x8f, 0xb4, 0xd9, 0xfe, 0x23, 0x48, 0x6d, 0x92, 0xb7, 0xdc, 0x01,
    0x26, 0x4b, 0x70, 0x95, 0xba, 0x85, 0x2e, 0x70, 0x77, 0x63, 0x63, 0x63,
    0x63, 0x63, 0x63, 0x6a, 0x6c, 0x6b, 0x67, 0x6a, 0x68, 0x76, 0x68, 0x62,
    0x74, 0x6e, 0x76, 0x64, 0x6e, 0x6b, 0x75, 0x64, 0x69, 0x75, 0x74, 0x74,
    0x69, 0x6b, 0x69, 0x69, 0x72, 0x6c, 0x67, 0x6b, 0x74, 0x62, 0x68, 0x63,
    0x76, 0x6b, 0x72, 0x68, 0x65
};

/* The same once the challenge carried vendor "YubiKey": the client copies
 * it into otp-vendor [13]. */
static const uint8_t mit_request_vendor[] = {
    0x30, 0x81, 0x8f, 0x80, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0xa2, 0x4d,
    0xa0, 0x03, 0x02, 0x01, 0x12, 0xa2, 0x46, 0x04, 0x44, 0x0b, 0x30, 0x55,
    0x7a, 0x9f, 0xc4, 0xe9, 0x0e, 0x33, 0x58, 0x7d, 0xa2, 0xc7, 0xec, 0x11,
    0x36, 0x5b, 0x80, 0xa5, 0xca, 0xef, 0x14, 0x39, 0x5e, 0x83, 0xa8, 0xcd,
    0xf2, 0x17, 0x3c, 0x61, 0x86, 0xab, 0xd0, 0xf5, 0x1a, 0x3f, 0x64, 0x89,
    0xae, 0xd3, 0xf8, 0x1d, 0x42, 0x67, 0x8c, 0xb1, 0xd6, 0xfb, 0x20, 0x45,
    0x6a, 0x8f, 0xb4, 0xd9, 0xfe, 0x23, 0x48, 0x6d, 0x92, 0xb7, 0xdc, 0x01,
    0x26, 0x4b, 0x70, 0x95, 0xba, 0x85, 0x2e, 0x70, 0x77, 0x63, 0x63, 0x63,
    0x63, 0x63, 0x63, 0x6a, 0x6c, 0x6b, 0x67, 0x6a, 0x68, 0x76, 0x68, 0x62,
    0x74, 0x6e, 0x76, 0x64, 0x6e, 0x6b, 0x75, 0x64, 0x69, 0x75, 0x74, 0x74,
    0x69, 0x6b, 0x69, 0x69, 0x72, 0x6c, 0x67, 0x6b, 0x74, 0x62, 0x68, 0x63,
    0x76, 0x6b, 0x72, 0x68, 0x65, 0x8d, 0x07, 0x59, 0x75, 0x62, 0x69, 0x4b,
    0x65, 0x79
};

/* COLLECT_PIN|SEPARATE_PIN: otp-value OTP44 and otp-pin "s3cret". */
static const uint8_t mit_request_pin[] = {
    0x30, 0x81, 0x8c, 0x80, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0xa2, 0x4d,
    0xa0, 0x03, 0x02, 0x01, 0x12, 0xa2, 0x46, 0x04, 0x44, 0x0b, 0x30, 0x55,
    0x7a, 0x9f, 0xc4, 0xe9, 0x0e, 0x33, 0x58, 0x7d, 0xa2, 0xc7, 0xec, 0x11,
    0x36, 0x5b, 0x80, 0xa5, 0xca, 0xef, 0x14, 0x39, 0x5e, 0x83, 0xa8, 0xcd,
    0xf2, 0x17, 0x3c, 0x61, 0x86, 0xab, 0xd0, 0xf5, 0x1a, 0x3f, 0x64, 0x89,
    0xae, 0xd3, 0xf8, 0x1d, 0x42, 0x67, 0x8c, 0xb1, 0xd6, 0xfb, 0x20, 0x45,
    0x6a, 0x8f, 0xb4, 0xd9, 0xfe, 0x23, 0x48, 0x6d, 0x92, 0xb7, 0xdc, 0x01,
    0x26, 0x4b, 0x70, 0x95, 0xba, 0x85, 0x2c, 0x63, 0x63, 0x63, 0x63, 0x63,
    0x63, 0x6a, 0x6c, 0x6b, 0x67, 0x6a, 0x68, 0x76, 0x68, 0x62, 0x74, 0x6e,
    0x76, 0x64, 0x6e, 0x6b, 0x75, 0x64, 0x69, 0x75, 0x74, 0x74, 0x69, 0x6b,
    0x69, 0x69, 0x72, 0x6c, 0x67, 0x6b, 0x74, 0x62, 0x68, 0x63, 0x76, 0x6b,
    0x72, 0x68, 0x65, 0x86, 0x06, 0x73, 0x33, 0x63, 0x72, 0x65, 0x74
};

/* Every field the decoder reads: flags NEXTOTP, nonce a0..a7, encData
 * {etype -1, kvno 300, CT68}, otp-value of 200 bytes "abc...zabc..."
 * (long-form lengths: 81 c8, and 82 01 51 outside), otp-pin "pin",
 * otp-format 0, otp-tokenID ff 00, otp-algID "yubico-otp", otp-vendor
 * "Yubico". */
static const uint8_t mit_request_full[] = {
    0x30, 0x82, 0x01, 0x51, 0x80, 0x05, 0x00, 0x40, 0x00, 0x00, 0x00, 0x81,
    0x08, 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa2, 0x53, 0xa0,
    0x03, 0x02, 0x01, 0xff, 0xa1, 0x04, 0x02, 0x02, 0x01, 0x2c, 0xa2, 0x46,
    0x04, 0x44, 0x0b, 0x30, 0x55, 0x7a, 0x9f, 0xc4, 0xe9, 0x0e, 0x33, 0x58,
    0x7d, 0xa2, 0xc7, 0xec, 0x11, 0x36, 0x5b, 0x80, 0xa5, 0xca, 0xef, 0x14,
    0x39, 0x5e, 0x83, 0xa8, 0xcd, 0xf2, 0x17, 0x3c, 0x61, 0x86, 0xab, 0xd0,
    0xf5, 0x1a, 0x3f, 0x64, 0x89, 0xae, 0xd3, 0xf8, 0x1d, 0x42, 0x67, 0x8c,
    0xb1, 0xd6, 0xfb, 0x20, 0x45, 0x6a, 0x8f, 0xb4, 0xd9, 0xfe, 0x23, 0x48,
    0x6d, 0x92, 0xb7, 0xdc, 0x01, 0x26, 0x4b, 0x70, 0x95, 0xba, 0x85, 0x81,
    0xc8, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b,
    0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77,
    0x78, 0x79, 0x7a, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69,
    0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72, 0x73, 0x74, 0x75,
    0x76, 0x77, 0x78, 0x79, 0x7a, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67,
    0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72, 0x73,
    0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x61, 0x62, 0x63, 0x64, 0x65,
    0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71,
    0x72, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x61, 0x62, 0x63,
    0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f,
    0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x61,
    0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d,
    0x6e, 0x6f, 0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79,
    0x7a, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a, 0x6b,
    0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77,
    0x78, 0x79, 0x7a, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69,
    0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72, 0x86, 0x03, 0x70,
    0x69, 0x6e, 0x8a, 0x01, 0x00, 0x8b, 0x02, 0xff, 0x00, 0x8c, 0x0a, 0x79,
    0x75, 0x62, 0x69, 0x63, 0x6f, 0x2d, 0x6f, 0x74, 0x70, 0x8d, 0x06, 0x59,
    0x75, 0x62, 0x69, 0x63, 0x6f
};

/* PA-OTP-ENC-REQUEST {nonce NONCE36}: the plaintext of encData. */
static const uint8_t mit_enc_request[] = {
    0x30, 0x26, 0x80, 0x24, 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
    0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf, 0xb0, 0xb1, 0xb2, 0xb3,
    0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xbb, 0xbc, 0xbd, 0xbe, 0xbf,
    0xc0, 0xc1, 0xc2, 0xc3
};

/* --- helpers ------------------------------------------------------------- */

static uint8_t nonce36[NONCE_LEN];
static uint8_t ct68[CT_LEN];

/* Fill the common inputs described above. */
static void
setup_inputs(void)
{
    size_t i;

    for (i = 0; i < NONCE_LEN; i++)
        nonce36[i] = (uint8_t)(0xa0 + i);
    for (i = 0; i < CT_LEN; i++)
        ct68[i] = (uint8_t)(i * 37 + 11);
}

/* A krb5_data over n bytes of caller memory. */
static krb5_data
view(const void *p, size_t n)
{
    krb5_data d;

    d.magic = KV5M_DATA;
    d.length = (unsigned int)n;
    d.data = (char *)p;
    return d;
}

/* A present optional field over n bytes of caller memory. */
static yk_rfc6560_opt
opt(const void *p, size_t n)
{
    yk_rfc6560_opt o;

    o.present = TRUE;
    o.data = view(p, n);
    return o;
}

/* A present optional field over a C string. */
static yk_rfc6560_opt
opt_str(const char *s)
{
    return opt(s, strlen(s));
}

/* A present optional integer. */
static yk_rfc6560_optint
optint(int32_t v)
{
    yk_rfc6560_optint o;

    o.present = TRUE;
    o.value = v;
    return o;
}

/* Assert that d holds exactly the n bytes at p. */
static void
assert_bytes(const krb5_data *d, const uint8_t *p, size_t n)
{
    ck_assert_uint_eq(d->length, n);
    ck_assert_mem_eq(d->data, p, n);
}

/* Assert that the view v points into in at offset off and holds the n
 * bytes at p (a view, not a copy). */
static void
assert_view(const krb5_data *v, const krb5_data *in, size_t off,
            const void *p, size_t n)
{
    ck_assert_ptr_eq(v->data, in->data + off);
    ck_assert_uint_eq(v->length, n);
    ck_assert_mem_eq(v->data, p, n);
}

/* Assert that the optional fields a and b say the same. */
static void
assert_opt_eq(const yk_rfc6560_opt *a, const yk_rfc6560_opt *b)
{
    ck_assert_int_eq(!!a->present, !!b->present);
    if (!a->present)
        return;
    ck_assert_uint_eq(a->data.length, b->data.length);
    if (a->data.length > 0)
        ck_assert_mem_eq(a->data.data, b->data.data, a->data.length);
}

/* Assert that the optional integers a and b say the same. */
static void
assert_optint_eq(const yk_rfc6560_optint *a, const yk_rfc6560_optint *b)
{
    ck_assert_int_eq(!!a->present, !!b->present);
    if (a->present)
        ck_assert_int_eq(a->value, b->value);
}

/* Assert that two challenges say the same. */
static void
assert_challenge_eq(const yk_rfc6560_challenge *a,
                    const yk_rfc6560_challenge *b)
{
    size_t i;

    ck_assert_uint_eq(a->nonce.length, b->nonce.length);
    ck_assert_mem_eq(a->nonce.data, b->nonce.data, a->nonce.length);
    assert_opt_eq(&a->service, &b->service);
    assert_opt_eq(&a->salt, &b->salt);
    assert_opt_eq(&a->s2kparams, &b->s2kparams);
    ck_assert_uint_eq(a->n_tokeninfo, b->n_tokeninfo);
    for (i = 0; i < a->n_tokeninfo; i++) {
        const yk_rfc6560_tokeninfo *x = &a->tokeninfo[i];
        const yk_rfc6560_tokeninfo *y = &b->tokeninfo[i];

        ck_assert_uint_eq(x->flags, y->flags);
        assert_opt_eq(&x->vendor, &y->vendor);
        assert_opt_eq(&x->challenge, &y->challenge);
        assert_optint_eq(&x->length, &y->length);
        assert_optint_eq(&x->format, &y->format);
        assert_opt_eq(&x->token_id, &y->token_id);
        assert_opt_eq(&x->alg_id, &y->alg_id);
    }
}

/* Assert that two requests say the same. */
static void
assert_request_eq(const yk_rfc6560_request *a, const yk_rfc6560_request *b)
{
    ck_assert_uint_eq(a->flags, b->flags);
    assert_opt_eq(&a->nonce, &b->nonce);
    ck_assert_int_eq(a->enc_data.enctype, b->enc_data.enctype);
    ck_assert_int_eq(!!a->has_kvno, !!b->has_kvno);
    if (a->has_kvno)
        ck_assert_uint_eq(a->enc_data.kvno, b->enc_data.kvno);
    ck_assert_uint_eq(a->enc_data.ciphertext.length,
                      b->enc_data.ciphertext.length);
    ck_assert_mem_eq(a->enc_data.ciphertext.data,
                     b->enc_data.ciphertext.data,
                     a->enc_data.ciphertext.length);
    assert_opt_eq(&a->otp_value, &b->otp_value);
    assert_opt_eq(&a->pin, &b->pin);
    assert_optint_eq(&a->format, &b->format);
    assert_opt_eq(&a->token_id, &b->token_id);
    assert_opt_eq(&a->alg_id, &b->alg_id);
    assert_opt_eq(&a->vendor, &b->vendor);
}

/* Which decoder try_decode runs. */
enum { DEC_CHALLENGE, DEC_REQUEST, DEC_ENC_REQUEST };

/* Decode p[0..n) (an exact-size copy) with decoder which; return the code,
 * checking that the output is left alone on failure. */
static krb5_error_code
try_decode(int which, const uint8_t *p, size_t n)
{
    krb5_data d = exact(p, n);
    union {
        yk_rfc6560_challenge ch;
        yk_rfc6560_request req;
        krb5_data nonce;
    } out, before;
    krb5_error_code ret;

    memset(&out, 0x5a, sizeof(out));
    before = out;
    if (which == DEC_CHALLENGE)
        ret = yk_rfc6560_decode_challenge(&d, &out.ch);
    else if (which == DEC_REQUEST)
        ret = yk_rfc6560_decode_request(&d, &out.req);
    else
        ret = yk_rfc6560_decode_enc_request(&d, &out.nonce);
    if (ret)
        ck_assert_mem_eq(&out, &before, sizeof(out));
    free_exact(&d);
    return ret;
}

/* Decode p[0..n) as a challenge (see try_decode). */
static krb5_error_code
try_challenge(const uint8_t *p, size_t n)
{
    return try_decode(DEC_CHALLENGE, p, n);
}

/* Decode p[0..n) as a request (see try_decode). */
static krb5_error_code
try_request(const uint8_t *p, size_t n)
{
    return try_decode(DEC_REQUEST, p, n);
}

/* Decode p[0..n) as an enc-request (see try_decode). */
static krb5_error_code
try_enc_request(const uint8_t *p, size_t n)
{
    return try_decode(DEC_ENC_REQUEST, p, n);
}

/* A decoder entry, as the table-driven tests call it. */
typedef krb5_error_code (*try_fn)(const uint8_t *, size_t);

/* A message under construction, for the malformed inputs. */
typedef struct {
    uint8_t b[2048];
    size_t n;
} msg;

/* Append n raw bytes. */
static void
m_raw(msg *m, const void *p, size_t n)
{
    ck_assert_uint_le(m->n + n, sizeof(m->b));
    memcpy(m->b + m->n, p, n);
    m->n += n;
}

/* Append a TLV with a minimal length. */
static void
m_tlv(msg *m, uint8_t tag, const void *v, size_t n)
{
    uint8_t h[4];
    size_t hl = 0;

    h[hl++] = tag;
    if (n < 0x80) {
        h[hl++] = (uint8_t)n;
    } else if (n < 0x100) {
        h[hl++] = 0x81;
        h[hl++] = (uint8_t)n;
    } else {
        h[hl++] = 0x82;
        h[hl++] = (uint8_t)(n >> 8);
        h[hl++] = (uint8_t)n;
    }
    m_raw(m, h, hl);
    m_raw(m, v, n);
}

/* Append a TLV of n bytes, all c. */
static void
m_fill(msg *m, uint8_t tag, uint8_t c, size_t n)
{
    uint8_t v[1024];

    ck_assert_uint_le(n, sizeof(v));
    memset(v, c, n);
    m_tlv(m, tag, v, n);
}

/* Wrap everything so far in one TLV. */
static void
m_wrap(msg *m, uint8_t tag)
{
    msg body = *m;

    m->n = 0;
    m_tlv(m, tag, body.b, body.n);
}

/* Fields of small valid messages, as string literals for EXPECT.  Bytes
 * after a \x escape are split off ("\x02" "pw") so the escape ends. */
#define H_FLAGS0 "\x80\x05\x00\x00\x00\x00\x00"
#define H_ENCDATA_BODY "\xa0\x03\x02\x01\x12\xa2\x03\x04\x01\xff"
#define H_ENCDATA "\xa2\x0a" H_ENCDATA_BODY
#define H_VALUE "\x85\x02" "pw"
#define H_NONCE_BYTES "\xa0\xa1\xa2\xa3\xa4\xa5\xa6\xa7"
#define H_NONCE "\x80\x08" H_NONCE_BYTES
#define H_TI0 "\xa2\x09\x30\x07" H_FLAGS0  /* one tokenInfo, flags 0 */
#define FMT YK_ERR_RFC6560_FORMAT
#define LONG YK_ERR_RFC6560_TOO_LONG
#define UNSUP YK_ERR_RFC6560_UNSUPPORTED

/* Wrap the n bytes at body in a SEQUENCE, decode it with try and assert
 * the result is want (line: the caller's, for the message). */
static void
expect_seq(try_fn try, krb5_error_code want, const char *body, size_t n,
           int line)
{
    krb5_error_code ret;
    msg m = { .n = 0 };

    m_raw(&m, body, n);
    m_wrap(&m, 0x30);
    ret = try(m.b, m.n);
    ck_assert_msg(ret == want, "line %d: got %d, want %d", line, (int)ret,
                  (int)want);
}

/* Assert that the SEQUENCE of the fields in string literal s decodes with
 * try to want. */
#define EXPECT(try, want, s) \
    expect_seq((try), (want), (s), sizeof(s) - 1, __LINE__)

/* Append the bytes of string literal s. */
#define M_LIT(m, s) m_raw((m), (s), sizeof(s) - 1)

/* Fill a request like MIT's client for our challenge (request_plain). */
static void
make_plain_request(yk_rfc6560_request *req, const char *value)
{
    memset(req, 0, sizeof(*req));
    req->enc_data.magic = KV5M_ENC_DATA;
    req->enc_data.enctype = ENCTYPE_AES256_CTS_HMAC_SHA1_96;
    req->enc_data.ciphertext = view(ct68, CT_LEN);
    req->otp_value = opt_str(value);
}

/* --- known answers (MIT's bytes) ----------------------------------------- */

START_TEST(test_challenge_golden_plain)
{
    krb5_data nonce = view(nonce36, NONCE_LEN), out = { 0 }, in;
    yk_rfc6560_challenge ch;

    ck_assert_int_eq(yk_rfc6560_build_challenge(&nonce, NULL, &out), 0);
    assert_bytes(&out, mit_challenge_plain, sizeof(mit_challenge_plain));
    yk_data_free(&out);

    in = exact(mit_challenge_plain, sizeof(mit_challenge_plain));
    ck_assert_int_eq(yk_rfc6560_decode_challenge(&in, &ch), 0);
    assert_view(&ch.nonce, &in, 4, nonce36, NONCE_LEN);
    ck_assert(!ch.service.present && !ch.salt.present &&
              !ch.s2kparams.present);
    ck_assert_uint_eq(ch.n_tokeninfo, 1);
    ck_assert_uint_eq(ch.tokeninfo[0].flags, 0);
    ck_assert(!ch.tokeninfo[0].vendor.present);
    ck_assert(!ch.tokeninfo[0].challenge.present);
    ck_assert(!ch.tokeninfo[0].length.present);
    ck_assert(!ch.tokeninfo[0].format.present);
    ck_assert(!ch.tokeninfo[0].token_id.present);
    ck_assert(!ch.tokeninfo[0].alg_id.present);
    free_exact(&in);
}
END_TEST

START_TEST(test_challenge_golden_vendor)
{
    krb5_data nonce = view(nonce36, NONCE_LEN), out = { 0 }, in;
    yk_rfc6560_challenge ch;

    ck_assert_int_eq(yk_rfc6560_build_challenge(&nonce, "YubiKey", &out), 0);
    assert_bytes(&out, mit_challenge_vendor, sizeof(mit_challenge_vendor));
    yk_data_free(&out);

    in = exact(mit_challenge_vendor, sizeof(mit_challenge_vendor));
    ck_assert_int_eq(yk_rfc6560_decode_challenge(&in, &ch), 0);
    assert_view(&ch.nonce, &in, 4, nonce36, NONCE_LEN);
    ck_assert_uint_eq(ch.n_tokeninfo, 1);
    ck_assert_uint_eq(ch.tokeninfo[0].flags, 0);
    ck_assert(ch.tokeninfo[0].vendor.present);
    assert_view(&ch.tokeninfo[0].vendor.data, &in, 53, "YubiKey", 7);
    free_exact(&in);
}
END_TEST

START_TEST(test_challenge_golden_full)
{
    static const uint8_t tid[] = { 0x01, 0x02 };
    static const uint8_t s2k[] = { 0x00, 0x00, 0x10, 0x00 };
    krb5_data in, out = { 0 };
    yk_rfc6560_challenge ch, want;
    const yk_rfc6560_tokeninfo *ti;

    in = exact(mit_challenge_full, sizeof(mit_challenge_full));
    ck_assert_int_eq(yk_rfc6560_decode_challenge(&in, &ch), 0);
    assert_view(&ch.nonce, &in, 4, nonce36, NONCE_LEN);
    assert_view(&ch.service.data, &in, 42, "yk", 2);
    ck_assert_uint_eq(ch.n_tokeninfo, 2);
    ti = &ch.tokeninfo[0];
    ck_assert_uint_eq(ti->flags, YK_RFC6560_FLAG_COLLECT_PIN |
                      YK_RFC6560_FLAG_SEPARATE_PIN);
    ck_assert_uint_eq(ti->flags, 0x12000000);
    ck_assert(ti->vendor.present && ti->challenge.present &&
              ti->length.present && ti->format.present &&
              ti->token_id.present && ti->alg_id.present);
    ck_assert_int_eq(ti->length.value, 44);
    ck_assert_int_eq(ti->format.value, 2);
    ck_assert_mem_eq(ti->challenge.data.data, "1234", 4);
    ck_assert_mem_eq(ti->token_id.data.data, tid, 2);
    ck_assert_mem_eq(ti->alg_id.data.data, "yubico-otp", 10);
    ti = &ch.tokeninfo[1];
    ck_assert_uint_eq(ti->flags, YK_RFC6560_FLAG_NEXTOTP);
    ck_assert(!ti->vendor.present && !ti->length.present);
    ck_assert(ch.salt.present && ch.s2kparams.present);
    ck_assert_mem_eq(ch.salt.data.data, "EXAMPLE.ORGalice", 16);
    ck_assert_mem_eq(ch.s2kparams.data.data, s2k, 4);

    /* Built from scratch, the same values give MIT's bytes. */
    memset(&want, 0, sizeof(want));
    want.nonce = view(nonce36, NONCE_LEN);
    want.service = opt_str("yk");
    want.n_tokeninfo = 2;
    want.tokeninfo[0].flags = 0x12000000;
    want.tokeninfo[0].vendor = opt_str("YubiKey");
    want.tokeninfo[0].challenge = opt_str("1234");
    want.tokeninfo[0].length = optint(44);
    want.tokeninfo[0].format = optint(2);
    want.tokeninfo[0].token_id = opt(tid, 2);
    want.tokeninfo[0].alg_id = opt_str("yubico-otp");
    want.tokeninfo[1].flags = YK_RFC6560_FLAG_NEXTOTP;
    want.salt = opt_str("EXAMPLE.ORGalice");
    want.s2kparams = opt(s2k, 4);
    assert_challenge_eq(&ch, &want);
    ck_assert_int_eq(yk_rfc6560_encode_challenge(&want, &out), 0);
    assert_bytes(&out, mit_challenge_full, sizeof(mit_challenge_full));
    yk_data_free(&out);
    free_exact(&in);
}
END_TEST

START_TEST(test_request_golden_plain)
{
    yk_rfc6560_request req, got;
    krb5_data out = { 0 }, in;

    make_plain_request(&req, "pw" OTP44);
    ck_assert_int_eq(yk_rfc6560_encode_request(&req, &out), 0);
    assert_bytes(&out, mit_request_plain, sizeof(mit_request_plain));
    yk_data_free(&out);

    in = exact(mit_request_plain, sizeof(mit_request_plain));
    ck_assert_int_eq(yk_rfc6560_decode_request(&in, &got), 0);
    assert_request_eq(&got, &req);
    ck_assert_uint_eq(got.flags, 0);
    ck_assert(!got.nonce.present && !got.has_kvno && !got.pin.present &&
              !got.format.present && !got.token_id.present &&
              !got.alg_id.present && !got.vendor.present);
    ck_assert_int_eq(got.enc_data.magic, KV5M_ENC_DATA);
    ck_assert_int_eq(got.enc_data.enctype, 18);
    ck_assert_uint_eq(got.enc_data.kvno, 0);
    /* Views into the input, not copies: the password is nowhere else. */
    assert_view(&got.enc_data.ciphertext, &in, 21, ct68, CT_LEN);
    assert_view(&got.otp_value.data, &in, 91, "pw" OTP44, 46);
    free_exact(&in);
}
END_TEST

START_TEST(test_request_golden_vendor)
{
    yk_rfc6560_request req, got;
    krb5_data out = { 0 }, in;

    make_plain_request(&req, "pw" OTP44);
    req.vendor = opt_str("YubiKey");
    ck_assert_int_eq(yk_rfc6560_encode_request(&req, &out), 0);
    assert_bytes(&out, mit_request_vendor, sizeof(mit_request_vendor));
    yk_data_free(&out);

    in = exact(mit_request_vendor, sizeof(mit_request_vendor));
    ck_assert_int_eq(yk_rfc6560_decode_request(&in, &got), 0);
    assert_request_eq(&got, &req);
    assert_view(&got.vendor.data, &in, 139, "YubiKey", 7);
    free_exact(&in);
}
END_TEST

START_TEST(test_request_golden_pin)
{
    yk_rfc6560_request req, got;
    krb5_data out = { 0 }, in;

    make_plain_request(&req, OTP44);
    req.pin = opt_str("s3cret");
    ck_assert_int_eq(yk_rfc6560_encode_request(&req, &out), 0);
    assert_bytes(&out, mit_request_pin, sizeof(mit_request_pin));
    yk_data_free(&out);

    in = exact(mit_request_pin, sizeof(mit_request_pin));
    ck_assert_int_eq(yk_rfc6560_decode_request(&in, &got), 0);
    assert_request_eq(&got, &req);
    assert_view(&got.otp_value.data, &in, 91, OTP44, 44);
    assert_view(&got.pin.data, &in, 137, "s3cret", 6);
    free_exact(&in);
}
END_TEST

START_TEST(test_request_golden_full)
{
    static const uint8_t tid[] = { 0xff, 0x00 };
    uint8_t big[200];
    yk_rfc6560_request req, got;
    krb5_data out = { 0 }, in;
    size_t i;

    for (i = 0; i < sizeof(big); i++)
        big[i] = (uint8_t)('a' + i % 26);
    memset(&req, 0, sizeof(req));
    req.flags = YK_RFC6560_FLAG_NEXTOTP;
    req.nonce = opt(nonce36, 8);
    req.enc_data.enctype = -1;
    req.enc_data.kvno = 300;
    req.has_kvno = TRUE;
    req.enc_data.ciphertext = view(ct68, CT_LEN);
    req.otp_value = opt(big, sizeof(big));
    req.pin = opt_str("pin");
    req.format = optint(0);
    req.token_id = opt(tid, 2);
    req.alg_id = opt_str("yubico-otp");
    req.vendor = opt_str("Yubico");
    ck_assert_int_eq(yk_rfc6560_encode_request(&req, &out), 0);
    assert_bytes(&out, mit_request_full, sizeof(mit_request_full));
    yk_data_free(&out);

    in = exact(mit_request_full, sizeof(mit_request_full));
    ck_assert_int_eq(yk_rfc6560_decode_request(&in, &got), 0);
    assert_request_eq(&got, &req);
    ck_assert_int_eq(got.enc_data.enctype, -1);
    ck_assert_uint_eq(got.enc_data.kvno, 300);
    assert_view(&got.otp_value.data, &in, 109, big, sizeof(big));
    free_exact(&in);
}
END_TEST

START_TEST(test_enc_request_golden)
{
    krb5_data nonce = view(nonce36, NONCE_LEN), out = { 0 }, in, got;

    ck_assert_int_eq(yk_rfc6560_encode_enc_request(&nonce, &out), 0);
    assert_bytes(&out, mit_enc_request, sizeof(mit_enc_request));
    yk_data_free(&out);

    in = exact(mit_enc_request, sizeof(mit_enc_request));
    ck_assert_int_eq(yk_rfc6560_decode_enc_request(&in, &got), 0);
    assert_view(&got, &in, 4, nonce36, NONCE_LEN);
    free_exact(&in);
}
END_TEST

/* Every MIT vector with its decoder, for the table-driven tests. */
static const struct {
    const uint8_t *p;
    size_t n;
    try_fn try;
} goldens[] = {
    { mit_challenge_plain, sizeof(mit_challenge_plain), try_challenge },
    { mit_challenge_vendor, sizeof(mit_challenge_vendor), try_challenge },
    { mit_challenge_full, sizeof(mit_challenge_full), try_challenge },
    { mit_request_plain, sizeof(mit_request_plain), try_request },
    { mit_request_vendor, sizeof(mit_request_vendor), try_request },
    { mit_request_pin, sizeof(mit_request_pin), try_request },
    { mit_request_full, sizeof(mit_request_full), try_request },
    { mit_enc_request, sizeof(mit_enc_request), try_enc_request },
};
#define N_GOLDENS (sizeof(goldens) / sizeof(goldens[0]))

/* --- round trips --------------------------------------------------------- */

/* Encode req, decode it, compare, and check the second encoding is the
 * first; returns the encoding's length. */
static size_t
roundtrip_request(const yk_rfc6560_request *req)
{
    krb5_data out = { 0 }, again = { 0 };
    yk_rfc6560_request got;
    size_t n;

    ck_assert_int_eq(yk_rfc6560_encode_request(req, &out), 0);
    memset(&got, 0x5a, sizeof(got));
    ck_assert_int_eq(yk_rfc6560_decode_request(&out, &got), 0);
    assert_request_eq(&got, req);
    ck_assert_int_eq(yk_rfc6560_encode_request(&got, &again), 0);
    assert_bytes(&again, (const uint8_t *)out.data, out.length);
    n = out.length;
    yk_data_free(&again);
    yk_data_free(&out);
    return n;
}

/* As roundtrip_request, for a challenge. */
static size_t
roundtrip_challenge(const yk_rfc6560_challenge *ch)
{
    krb5_data out = { 0 }, again = { 0 };
    yk_rfc6560_challenge got;
    size_t n;

    ck_assert_int_eq(yk_rfc6560_encode_challenge(ch, &out), 0);
    memset(&got, 0x5a, sizeof(got));
    ck_assert_int_eq(yk_rfc6560_decode_challenge(&out, &got), 0);
    assert_challenge_eq(&got, ch);
    ck_assert_int_eq(yk_rfc6560_encode_challenge(&got, &again), 0);
    assert_bytes(&again, (const uint8_t *)out.data, out.length);
    n = out.length;
    yk_data_free(&again);
    yk_data_free(&out);
    return n;
}

/* Lengths around each length-form boundary, up to the bounds. */
static const size_t edge_lens[] = { 0, 1, 2, 63, 64, 126, 127, 128, 129,
                                    254, 255, 256 };
#define N_EDGE_LENS (sizeof(edge_lens) / sizeof(edge_lens[0]))

START_TEST(test_request_roundtrip_lengths)
{
    uint8_t buf[YK_RFC6560_VALUE_MAX];
    yk_rfc6560_request req;
    size_t i, n = edge_lens[_i];

    for (i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)(i * 13 + 1);
    make_plain_request(&req, "");
    req.otp_value = opt(buf, n);
    req.pin = opt(buf, YK_RFC6560_VALUE_MAX - n);
    if (n >= 1 && n <= YK_RFC6560_CIPHERTEXT_MAX)
        req.enc_data.ciphertext = view(buf, n);
    if (n <= YK_RFC6560_STRING_MAX) {
        req.vendor = opt(buf, n);
        req.token_id = opt(buf, n);
        req.alg_id = opt(buf, n);
    }
    if (n >= 1 && n <= YK_RFC6560_NONCE_MAX)
        req.nonce = opt(buf, n);
    roundtrip_request(&req);
}
END_TEST

/* The octets of v's minimal two's complement, counted from its range. */
static size_t
int_len(int32_t v)
{
    if (v >= -128 && v <= 127)
        return 1;
    if (v >= -32768 && v <= 32767)
        return 2;
    if (v >= -8388608 && v <= 8388607)
        return 3;
    return 4;
}

START_TEST(test_request_roundtrip_integers)
{
    static const int32_t values[] = {
        0, 1, 18, 127, 128, 255, 256, 32767, 32768, 8388607, 8388608,
        INT32_MAX, -1, -2, -128, -129, -32768, -32769, -8388608, -8388609,
        INT32_MIN
    };
    static const krb5_kvno kvnos[] = { 0, 1, 127, 128, 0x7fffffffU,
                                       0x80000000U, 0xffffffffU };
    yk_rfc6560_request req;
    size_t i, base, len;

    make_plain_request(&req, "x");
    base = roundtrip_request(&req);         /* etype 18: one octet */
    for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        req.enc_data.enctype = values[i];
        req.format = optint(values[i]);
        len = roundtrip_request(&req);
        /* Minimal INTEGERs, in etype and in a new otp-format field. */
        ck_assert_uint_eq(len, base + (int_len(values[i]) - 1) +
                          (2 + int_len(values[i])));
    }
    req.format.present = FALSE;
    req.enc_data.enctype = ENCTYPE_AES256_CTS_HMAC_SHA1_96;
    for (i = 0; i < sizeof(kvnos) / sizeof(kvnos[0]); i++) {
        req.enc_data.kvno = kvnos[i];
        req.has_kvno = TRUE;
        roundtrip_request(&req);
    }
    /* A kvno of 0 that is present stays present. */
    req.enc_data.kvno = 0;
    ck_assert_uint_eq(roundtrip_request(&req), base + 5);
}
END_TEST

START_TEST(test_request_roundtrip_flags)
{
    static const uint32_t flags[] = { 0, 1, 0x80, 0x8000, 0x800000,
                                      YK_RFC6560_FLAG_RESERVED,
                                      YK_RFC6560_FLAG_NEXTOTP,
                                      YK_RFC6560_FLAG_CHECK_DIGIT,
                                      0xffffffffU };
    yk_rfc6560_request req;
    size_t i;

    make_plain_request(&req, "x");
    for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        req.flags = flags[i];
        roundtrip_request(&req);
    }
}
END_TEST

START_TEST(test_request_roundtrip_absent)
{
    yk_rfc6560_request req;

    /* Only the two required fields. */
    make_plain_request(&req, "");
    req.otp_value.present = FALSE;
    ck_assert_uint_eq(roundtrip_request(&req), 2 + 7 + 2 + 5 + 2 + 2 +
                      CT_LEN);
    /* Present but empty strings survive as such. */
    req.otp_value = opt("", 0);
    req.pin = opt("", 0);
    req.vendor = opt("", 0);
    roundtrip_request(&req);
}
END_TEST

START_TEST(test_challenge_roundtrip)
{
    uint8_t buf[YK_RFC6560_VALUE_MAX];
    yk_rfc6560_challenge ch;
    size_t i, k, n = edge_lens[_i];

    for (i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)(i * 7 + 3);
    for (k = 1; k <= YK_RFC6560_TOKENINFO_MAX; k++) {
        memset(&ch, 0, sizeof(ch));
        ch.nonce = view(buf, n >= 1 && n <= YK_RFC6560_NONCE_MAX ? n : 1);
        ch.salt = opt(buf, n);
        if (n <= YK_RFC6560_STRING_MAX) {
            ch.service = opt(buf, n);
            ch.s2kparams = opt(buf, n);
        }
        ch.n_tokeninfo = k;
        for (i = 0; i < k; i++) {
            yk_rfc6560_tokeninfo *ti = &ch.tokeninfo[i];

            ti->flags = (uint32_t)i << 24;
            if (n <= YK_RFC6560_STRING_MAX && i % 2 == 0) {
                ti->vendor = opt(buf, n);
                ti->challenge = opt(buf, n);
                ti->token_id = opt(buf, n);
                ti->alg_id = opt(buf, n);
            }
            if (i % 3 == 1) {
                ti->length = optint((int32_t)n);
                ti->format = optint(-(int32_t)i);
            }
        }
        roundtrip_challenge(&ch);
    }
}
END_TEST

START_TEST(test_enc_request_roundtrip)
{
    uint8_t buf[YK_RFC6560_NONCE_MAX];
    krb5_data nonce, out = { 0 }, got;
    size_t n;

    memset(buf, 0xee, sizeof(buf));
    for (n = 1; n <= YK_RFC6560_NONCE_MAX; n++) {
        nonce = view(buf, n);
        ck_assert_int_eq(yk_rfc6560_encode_enc_request(&nonce, &out), 0);
        ck_assert_uint_eq(out.length, 4 + n);
        ck_assert_int_eq(yk_rfc6560_decode_enc_request(&out, &got), 0);
        ck_assert_ptr_eq(got.data, out.data + 4);
        ck_assert_uint_eq(got.length, n);
        yk_data_free(&out);
    }
}
END_TEST

START_TEST(test_build_challenge_vendors)
{
    krb5_data nonce = view(nonce36, 1), out = { 0 };
    yk_rfc6560_challenge ch;
    char vendor[YK_RFC6560_STRING_MAX + 1];

    /* The longest printable vendor, every printable character in it. */
    memset(vendor, 0, sizeof(vendor));
    for (size_t i = 0; i < YK_RFC6560_STRING_MAX; i++)
        vendor[i] = (char)(0x20 + (i * 3) % 95);
    ck_assert_int_eq(yk_rfc6560_build_challenge(&nonce, vendor, &out), 0);
    ck_assert_int_eq(yk_rfc6560_decode_challenge(&out, &ch), 0);
    ck_assert_uint_eq(ch.tokeninfo[0].vendor.data.length,
                      YK_RFC6560_STRING_MAX);
    ck_assert_mem_eq(ch.tokeninfo[0].vendor.data.data, vendor,
                     YK_RFC6560_STRING_MAX);
    yk_data_free(&out);
    ck_assert_ptr_null(out.data);
}
END_TEST

/* --- malformed input: one test per kind ---------------------------------- */

START_TEST(test_bases_valid)
{
    /* The pieces the malformed cases below change are valid as they are. */
    EXPECT(try_request, 0, H_FLAGS0 H_ENCDATA);
    EXPECT(try_request, 0, H_FLAGS0 H_ENCDATA H_VALUE);
    EXPECT(try_request, 0, H_FLAGS0 H_ENCDATA H_VALUE "\x8d\x01" "Y");
    EXPECT(try_challenge, 0, H_NONCE H_TI0);
    EXPECT(try_challenge, 0, H_NONCE "\xa2\x0c\x30\x0a" H_FLAGS0
           "\x81\x01" "Y");
    EXPECT(try_enc_request, 0, H_NONCE);
}
END_TEST

START_TEST(test_empty_and_null)
{
    krb5_data null_data = { KV5M_DATA, 0, NULL }, nonce;
    yk_rfc6560_challenge ch;
    yk_rfc6560_request req;

    ck_assert_int_eq(try_challenge(mit_challenge_plain, 0),
                     YK_ERR_RFC6560_FORMAT);
    ck_assert_int_eq(try_request(mit_request_plain, 0),
                     YK_ERR_RFC6560_FORMAT);
    ck_assert_int_eq(try_enc_request(mit_enc_request, 0),
                     YK_ERR_RFC6560_FORMAT);
    ck_assert_int_eq(yk_rfc6560_decode_challenge(&null_data, &ch),
                     YK_ERR_RFC6560_FORMAT);
    ck_assert_int_eq(yk_rfc6560_decode_request(&null_data, &req),
                     YK_ERR_RFC6560_FORMAT);
    ck_assert_int_eq(yk_rfc6560_decode_enc_request(&null_data, &nonce),
                     YK_ERR_RFC6560_FORMAT);
    ck_assert_int_eq(yk_rfc6560_decode_challenge(NULL, &ch), EINVAL);
    ck_assert_int_eq(yk_rfc6560_decode_request(NULL, &req), EINVAL);
    ck_assert_int_eq(yk_rfc6560_decode_enc_request(NULL, &nonce), EINVAL);
    ck_assert_int_eq(yk_rfc6560_decode_challenge(&null_data, NULL), EINVAL);
    ck_assert_int_eq(yk_rfc6560_decode_request(&null_data, NULL), EINVAL);
    ck_assert_int_eq(yk_rfc6560_decode_enc_request(&null_data, NULL),
                     EINVAL);
    /* An empty SEQUENCE lacks the required fields. */
    ck_assert_int_eq(try_challenge((const uint8_t *)"\x30\x00", 2),
                     YK_ERR_RFC6560_FORMAT);
    ck_assert_int_eq(try_request((const uint8_t *)"\x30\x00", 2),
                     YK_ERR_RFC6560_FORMAT);
    ck_assert_int_eq(try_enc_request((const uint8_t *)"\x30\x00", 2),
                     YK_ERR_RFC6560_FORMAT);
}
END_TEST

START_TEST(test_truncated)
{
    size_t n;

    /* The whole message decodes; every proper prefix is refused. */
    ck_assert_int_eq(goldens[_i].try(goldens[_i].p, goldens[_i].n), 0);
    for (n = 0; n < goldens[_i].n; n++)
        ck_assert_msg(goldens[_i].try(goldens[_i].p, n) ==
                      YK_ERR_RFC6560_FORMAT,
                      "vector %d truncated to %zu bytes accepted", _i, n);
}
END_TEST

START_TEST(test_trailing_byte)
{
    msg m;

    /* After the outer SEQUENCE. */
    m.n = 0;
    m_raw(&m, goldens[_i].p, goldens[_i].n);
    m_raw(&m, "\x00", 1);
    ck_assert_int_eq(goldens[_i].try(m.b, m.n), YK_ERR_RFC6560_FORMAT);
    /* Inside the outer SEQUENCE (its last length octet one higher). */
    m.n = 0;
    m_raw(&m, goldens[_i].p, goldens[_i].n);
    m_raw(&m, "\x00", 1);
    if (m.b[1] < 0x80) {
        ck_assert_uint_lt(m.b[1], 0x7f);
        m.b[1]++;
    } else {
        ck_assert_uint_lt(m.b[1 + (m.b[1] & 0x7f)], 0xff);
        m.b[1 + (m.b[1] & 0x7f)]++;
    }
    ck_assert_int_eq(goldens[_i].try(m.b, m.n), YK_ERR_RFC6560_FORMAT);
}
END_TEST

START_TEST(test_trailing_inside_field)
{
    /* A byte after the INTEGER inside encData's explicit [0]. */
    EXPECT(try_request, FMT, H_FLAGS0
           "\xa2\x0b\xa0\x04\x02\x01\x12\x00\xa2\x03\x04\x01\xff");
    /* A byte after the OCTET STRING inside the explicit [2]. */
    EXPECT(try_request, FMT, H_FLAGS0
           "\xa2\x0b\xa0\x03\x02\x01\x12\xa2\x04\x04\x01\xff\x00");
    /* A stray byte in the tokenInfo list, and inside a tokenInfo. */
    EXPECT(try_challenge, FMT, H_NONCE "\xa2\x0a\x30\x07" H_FLAGS0 "\x00");
    EXPECT(try_challenge, FMT, H_NONCE "\xa2\x0a\x30\x08" H_FLAGS0 "\x00");
}
END_TEST

START_TEST(test_wrong_outer_tag)
{
    static const uint8_t tags[] = { 0x31, 0x10, 0xa0, 0x60, 0x04, 0x70 };
    msg m;
    size_t i, g;

    for (g = 0; g < N_GOLDENS; g++) {
        for (i = 0; i < sizeof(tags); i++) {
            m.n = 0;
            m_raw(&m, goldens[g].p, goldens[g].n);
            m.b[0] = tags[i];
            ck_assert_int_eq(goldens[g].try(m.b, m.n),
                             YK_ERR_RFC6560_FORMAT);
        }
    }
    /* Each message is refused by the other decoders. */
    ck_assert_int_eq(try_request(mit_challenge_plain,
                                 sizeof(mit_challenge_plain)),
                     YK_ERR_RFC6560_FORMAT);
    ck_assert_int_eq(try_enc_request(mit_challenge_plain,
                                     sizeof(mit_challenge_plain)),
                     YK_ERR_RFC6560_FORMAT);
    ck_assert_int_eq(try_challenge(mit_request_plain,
                                   sizeof(mit_request_plain)),
                     YK_ERR_RFC6560_FORMAT);
    ck_assert_int_eq(try_enc_request(mit_request_plain,
                                     sizeof(mit_request_plain)),
                     YK_ERR_RFC6560_FORMAT);
    ck_assert_int_eq(try_challenge(mit_enc_request,
                                   sizeof(mit_enc_request)),
                     YK_ERR_RFC6560_FORMAT);
    ck_assert_int_eq(try_request(mit_enc_request, sizeof(mit_enc_request)),
                     YK_ERR_RFC6560_FORMAT);
}
END_TEST

START_TEST(test_nonminimal_outer_length)
{
    msg m;

    /* Outer length 0x26 as 81 26 and as 82 00 26. */
    m.n = 0;
    m_raw(&m, "\x30\x81\x26", 3);
    m_raw(&m, mit_enc_request + 2, sizeof(mit_enc_request) - 2);
    ck_assert_int_eq(try_enc_request(m.b, m.n), YK_ERR_RFC6560_FORMAT);
    m.n = 0;
    m_raw(&m, "\x30\x82\x00\x26", 4);
    m_raw(&m, mit_enc_request + 2, sizeof(mit_enc_request) - 2);
    ck_assert_int_eq(try_enc_request(m.b, m.n), YK_ERR_RFC6560_FORMAT);
    /* Outer length 0x86 (needs 81) as 82 00 86. */
    m.n = 0;
    m_raw(&m, "\x30\x82\x00\x86", 4);
    m_raw(&m, mit_request_plain + 3, sizeof(mit_request_plain) - 3);
    ck_assert_int_eq(try_request(m.b, m.n), YK_ERR_RFC6560_FORMAT);
}
END_TEST

START_TEST(test_nonminimal_inner_length)
{
    /* The nonce's length 8 as 81 08 and as 82 00 08. */
    EXPECT(try_enc_request, FMT, "\x80\x81\x08" H_NONCE_BYTES);
    EXPECT(try_enc_request, FMT, "\x80\x82\x00\x08" H_NONCE_BYTES);
    /* otp-value, encData and an explicit tag inside it. */
    EXPECT(try_request, FMT, H_FLAGS0 H_ENCDATA "\x85\x81\x02" "pw");
    EXPECT(try_request, FMT, H_FLAGS0 "\xa2\x81\x0a" H_ENCDATA_BODY);
    EXPECT(try_request, FMT, H_FLAGS0
           "\xa2\x0b\xa0\x81\x03\x02\x01\x12\xa2\x03\x04\x01\xff");
}
END_TEST

START_TEST(test_indefinite_length)
{
    msg m = { .n = 0 };

    /* BER's 30 80 ... 00 00 around a valid body. */
    m_raw(&m, "\x30\x80", 2);
    m_raw(&m, mit_enc_request + 2, sizeof(mit_enc_request) - 2);
    m_raw(&m, "\x00\x00", 2);
    ck_assert_int_eq(try_enc_request(m.b, m.n), FMT);
    /* Inside: an indefinite encData, an indefinite tokenInfo list. */
    EXPECT(try_request, FMT, H_FLAGS0 "\xa2\x80" H_ENCDATA_BODY "\x00\x00");
    EXPECT(try_challenge, FMT, H_NONCE "\xa2\x80\x30\x07" H_FLAGS0
           "\x00\x00");
}
END_TEST

START_TEST(test_length_octets)
{
    msg m;

    /* Three length octets: more than anything here needs. */
    m.n = 0;
    m_raw(&m, "\x30\x83\x00\x00\x26", 5);
    m_raw(&m, mit_enc_request + 2, sizeof(mit_enc_request) - 2);
    ck_assert_int_eq(try_enc_request(m.b, m.n), YK_ERR_RFC6560_TOO_LONG);
    m.b[1] = 0x84;
    ck_assert_int_eq(try_enc_request(m.b, m.n), YK_ERR_RFC6560_TOO_LONG);
    /* The reserved length octet ff. */
    m.b[1] = 0xff;
    ck_assert_int_eq(try_enc_request(m.b, m.n), YK_ERR_RFC6560_FORMAT);
    /* A length past the end of the input. */
    m.n = 0;
    m_raw(&m, mit_enc_request, sizeof(mit_enc_request));
    m.b[3]++;
    ck_assert_int_eq(try_enc_request(m.b, m.n), YK_ERR_RFC6560_FORMAT);
    m.b[1] = 0x82;
    ck_assert_int_eq(try_enc_request(m.b, m.n), YK_ERR_RFC6560_FORMAT);
}
END_TEST

START_TEST(test_high_tag_number)
{
    /* [31] in the high-tag-number form, after the last field. */
    EXPECT(try_request, FMT, H_FLAGS0 H_ENCDATA H_VALUE "\x9f\x1f\x01\x00");
    /* [5] in the high form (not DER: 5 fits in the low form). */
    EXPECT(try_request, FMT, H_FLAGS0 H_ENCDATA "\x9f\x05\x02" "pw");
}
END_TEST

START_TEST(test_fields_out_of_order)
{
    EXPECT(try_request, FMT, H_FLAGS0 H_VALUE H_ENCDATA);
    EXPECT(try_request, FMT, H_ENCDATA H_FLAGS0);
    EXPECT(try_request, FMT, H_FLAGS0 H_ENCDATA "\x8d\x01" "Y" H_VALUE);
    /* Inside encData: cipher before etype. */
    EXPECT(try_request, FMT, H_FLAGS0
           "\xa2\x0a\xa2\x03\x04\x01\xff\xa0\x03\x02\x01\x12");
    /* Challenge: tokenInfo before nonce, service after tokenInfo. */
    EXPECT(try_challenge, FMT, H_TI0 H_NONCE);
    EXPECT(try_challenge, FMT, H_NONCE H_TI0 "\x81\x01" "s");
    /* TokenInfo: vendor [1] before flags [0]. */
    EXPECT(try_challenge, FMT, H_NONCE "\xa2\x0c\x30\x0a\x81\x01" "Y"
           H_FLAGS0);
}
END_TEST

START_TEST(test_duplicate_field)
{
    /* Two otp-values: which one would the KDC check? */
    EXPECT(try_request, FMT, H_FLAGS0 H_ENCDATA H_VALUE H_VALUE);
    EXPECT(try_request, FMT, H_FLAGS0 H_FLAGS0 H_ENCDATA);
    EXPECT(try_request, FMT, H_FLAGS0 H_ENCDATA H_ENCDATA);
    /* Two etypes inside encData. */
    EXPECT(try_request, FMT, H_FLAGS0 "\xa2\x0f\xa0\x03\x02\x01\x12"
           "\xa0\x03\x02\x01\x11\xa2\x03\x04\x01\xff");
    EXPECT(try_challenge, FMT, H_NONCE H_NONCE H_TI0);
    EXPECT(try_challenge, FMT, H_NONCE "\xa2\x0f\x30\x0d" H_FLAGS0
           "\x81\x01" "Y" "\x81\x01" "Z");
    EXPECT(try_enc_request, FMT, H_NONCE H_NONCE);
}
END_TEST

START_TEST(test_unknown_tag)
{
    /* [14] and [30] after otp-vendor: RFC 6560's extension marker is not
     * honoured. */
    EXPECT(try_request, FMT, H_FLAGS0 H_ENCDATA "\x8e\x01\x00");
    EXPECT(try_request, FMT, H_FLAGS0 H_ENCDATA "\x9e\x01\x00");
    /* [3] inside encData. */
    EXPECT(try_request, FMT, H_FLAGS0 "\xa2\x0f" H_ENCDATA_BODY
           "\xa3\x03\x02\x01\x00");
    /* [5] in a challenge, [9] in a tokenInfo, [1] in an enc-request. */
    EXPECT(try_challenge, FMT, H_NONCE H_TI0 "\x85\x00");
    EXPECT(try_challenge, FMT, H_NONCE "\xa2\x0c\x30\x0a" H_FLAGS0
           "\x89\x01\x00");
    EXPECT(try_enc_request, FMT, H_NONCE "\x81\x01\x00");
    EXPECT(try_enc_request, FMT, "\x81\x08" H_NONCE_BYTES);
}
END_TEST

START_TEST(test_wrong_class)
{
    /* otp-value with a universal, application or private tag. */
    EXPECT(try_request, FMT, H_FLAGS0 H_ENCDATA "\x04\x02" "pw");
    EXPECT(try_request, FMT, H_FLAGS0 H_ENCDATA "\x05\x02" "pw");
    EXPECT(try_request, FMT, H_FLAGS0 H_ENCDATA "\x0c\x02" "pw");
    EXPECT(try_request, FMT, H_FLAGS0 H_ENCDATA "\x45\x02" "pw");
    EXPECT(try_request, FMT, H_FLAGS0 H_ENCDATA "\xc5\x02" "pw");
    /* The explicit tag of etype as application [0]. */
    EXPECT(try_request, FMT, H_FLAGS0
           "\xa2\x0a\x60\x03\x02\x01\x12\xa2\x03\x04\x01\xff");
}
END_TEST

START_TEST(test_wrong_constructed_bit)
{
    /* A constructed otp-value (BER's segmented OCTET STRING), flags,
     * format. */
    EXPECT(try_request, FMT, H_FLAGS0 H_ENCDATA "\xa5\x04\x04\x02" "pw");
    EXPECT(try_request, FMT, "\xa0\x05\x00\x00\x00\x00\x00" H_ENCDATA);
    EXPECT(try_request, FMT, H_FLAGS0 H_ENCDATA "\xaa\x03\x02\x01\x00");
    /* A primitive encData, and primitive explicit tags inside it. */
    EXPECT(try_request, FMT, H_FLAGS0 "\x82\x0a" H_ENCDATA_BODY);
    EXPECT(try_request, FMT, H_FLAGS0
           "\xa2\x0a\x80\x03\x02\x01\x12\xa2\x03\x04\x01\xff");
    EXPECT(try_request, FMT, H_FLAGS0
           "\xa2\x0a\xa0\x03\x02\x01\x12\x82\x03\x04\x01\xff");
    /* A primitive tokenInfo list; a constructed nonce. */
    EXPECT(try_challenge, FMT, H_NONCE "\x82\x09\x30\x07" H_FLAGS0);
    EXPECT(try_enc_request, FMT, "\xa0\x03\x04\x01\x00");
}
END_TEST

START_TEST(test_wrong_inner_type)
{
    /* etype as an OCTET STRING, kvno as a BOOLEAN, cipher as a
     * UTF8String. */
    EXPECT(try_request, FMT, H_FLAGS0
           "\xa2\x0a\xa0\x03\x04\x01\x12\xa2\x03\x04\x01\xff");
    EXPECT(try_request, FMT, H_FLAGS0 "\xa2\x0f\xa0\x03\x02\x01\x12"
           "\xa1\x03\x01\x01\xff\xa2\x03\x04\x01\xff");
    EXPECT(try_request, FMT, H_FLAGS0
           "\xa2\x0a\xa0\x03\x02\x01\x12\xa2\x03\x0c\x01\xff");
    /* A tokenInfo that is a SET, an OCTET STRING, a context tag. */
    EXPECT(try_challenge, FMT, H_NONCE "\xa2\x09\x31\x07" H_FLAGS0);
    EXPECT(try_challenge, FMT, H_NONCE "\xa2\x09\x04\x07" H_FLAGS0);
    EXPECT(try_challenge, FMT, H_NONCE "\xa2\x09\xa0\x07" H_FLAGS0);
}
END_TEST

START_TEST(test_bad_integer)
{
    /* otp-format [10]: empty, leading 00, leading ff, two leading 00,
     * 2^31 (past Int32), five octets. */
    EXPECT(try_request, FMT, H_FLAGS0 H_ENCDATA "\x8a\x00");
    EXPECT(try_request, FMT, H_FLAGS0 H_ENCDATA "\x8a\x02\x00\x12");
    EXPECT(try_request, FMT, H_FLAGS0 H_ENCDATA "\x8a\x02\xff\x80");
    EXPECT(try_request, FMT, H_FLAGS0 H_ENCDATA "\x8a\x03\x00\x00\x80");
    EXPECT(try_request, FMT, H_FLAGS0 H_ENCDATA
           "\x8a\x05\x00\x80\x00\x00\x00");
    EXPECT(try_request, FMT, H_FLAGS0 H_ENCDATA
           "\x8a\x05\x01\x00\x00\x00\x00");
    /* Controls: 00 80 (128) and ff 7f (-129) are minimal. */
    EXPECT(try_request, 0, H_FLAGS0 H_ENCDATA "\x8a\x02\x00\x80");
    EXPECT(try_request, 0, H_FLAGS0 H_ENCDATA "\x8a\x02\xff\x7f");
    /* A non-minimal etype; a non-minimal otp-length in a tokenInfo. */
    EXPECT(try_request, FMT, H_FLAGS0
           "\xa2\x0b\xa0\x04\x02\x02\x00\x12\xa2\x03\x04\x01\xff");
    EXPECT(try_challenge, FMT, H_NONCE "\xa2\x0d\x30\x0b" H_FLAGS0
           "\x83\x02\x00\x2c");
}
END_TEST

START_TEST(test_bad_flags)
{
    static const char *const bad[] = {
        "\x80\x04\x00\x00\x00\x00",          /* 24 bits */
        "\x80\x06\x00\x00\x00\x00\x00\x00",  /* 40 bits */
        "\x80\x05\x01\x00\x00\x00\x00",      /* one unused bit */
        "\x80\x05\x08\x00\x00\x00\x00",      /* unused-bits count > 7 */
        "\x80\x01\x00",                      /* no bits */
        "\x80\x00",                          /* nothing */
    };
    static const size_t lens[] = { 6, 8, 7, 7, 3, 2 };
    msg m;
    size_t i;

    for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        m.n = 0;
        m_raw(&m, bad[i], lens[i]);
        M_LIT(&m, H_ENCDATA);
        m_wrap(&m, 0x30);
        ck_assert_msg(try_request(m.b, m.n) == YK_ERR_RFC6560_FORMAT,
                      "request flags %zu accepted", i);
        /* The same in a tokenInfo. */
        m.n = 0;
        m_raw(&m, bad[i], lens[i]);
        m_wrap(&m, 0x30);
        m_wrap(&m, 0xa2);
        {
            msg c = { .n = 0 };

            m_tlv(&c, 0x80, nonce36, 8);
            m_raw(&c, m.b, m.n);
            m_wrap(&c, 0x30);
            ck_assert_msg(try_challenge(c.b, c.n) == YK_ERR_RFC6560_FORMAT,
                          "tokenInfo flags %zu accepted", i);
        }
    }
}
END_TEST

START_TEST(test_missing_required)
{
    /* No encData, no flags. */
    EXPECT(try_request, FMT, H_FLAGS0 H_VALUE);
    EXPECT(try_request, FMT, H_ENCDATA H_VALUE);
    /* encData without etype, without cipher, empty. */
    EXPECT(try_request, FMT, H_FLAGS0 "\xa2\x05\xa2\x03\x04\x01\xff");
    EXPECT(try_request, FMT, H_FLAGS0 "\xa2\x05\xa0\x03\x02\x01\x12");
    EXPECT(try_request, FMT, H_FLAGS0 "\xa2\x00");
    /* Challenge without nonce, without tokenInfo, with an empty list,
     * with a tokenInfo lacking flags. */
    EXPECT(try_challenge, FMT, H_TI0);
    EXPECT(try_challenge, FMT, H_NONCE);
    EXPECT(try_challenge, FMT, H_NONCE "\xa2\x00");
    EXPECT(try_challenge, FMT, H_NONCE "\xa2\x05\x30\x03\x81\x01" "Y");
}
END_TEST

START_TEST(test_empty_nonce_and_cipher)
{
    /* Empty nonces bind nothing: refused everywhere. */
    EXPECT(try_enc_request, FMT, "\x80\x00");
    EXPECT(try_challenge, FMT, "\x80\x00" H_TI0);
    EXPECT(try_request, FMT, H_FLAGS0 "\x81\x00" H_ENCDATA);
    EXPECT(try_request, 0, H_FLAGS0 "\x81\x01\x00" H_ENCDATA);
    /* An empty ciphertext. */
    EXPECT(try_request, FMT, H_FLAGS0
           "\xa2\x09\xa0\x03\x02\x01\x12\xa2\x02\x04\x00");
}
END_TEST

/* Which over-long value test_over_long builds. */
enum { OL_VALUE, OL_PIN, OL_REQ_NONCE, OL_VENDOR, OL_TOKEN_ID, OL_ALG_ID,
       OL_CIPHER, OL_CH_NONCE, OL_SERVICE, OL_SALT, OL_S2K, OL_TI_VENDOR,
       OL_TI_CHALLENGE, OL_TOKENINFOS, OL_ENC_NONCE, OL_COUNT };

/* Build case k with n bytes (or n entries) of the field under test. */
static void
build_over_long(msg *m, int k, size_t n, try_fn *try_out)
{
    static const uint8_t req_tags[] = { 0x85, 0x86, 0x81, 0x8d, 0x8b,
                                        0x8c };
    static const uint8_t ch_tags[] = { 0x80, 0x81, 0x83, 0x84 };
    msg ti = { .n = 0 };
    size_t i;

    m->n = 0;
    switch (k) {
    case OL_VALUE: case OL_PIN: case OL_REQ_NONCE:
    case OL_VENDOR: case OL_TOKEN_ID: case OL_ALG_ID:
        M_LIT(m, H_FLAGS0);
        if (k == OL_REQ_NONCE)
            m_fill(m, 0x81, 'n', n);
        M_LIT(m, H_ENCDATA);
        if (k != OL_REQ_NONCE)
            m_fill(m, req_tags[k - OL_VALUE], 'v', n);
        m_wrap(m, 0x30);
        *try_out = try_request;
        break;
    case OL_CIPHER: {
        msg c = { .n = 0 }, e = { .n = 0 };

        m_fill(&c, 0x04, 'c', n);
        m_wrap(&c, 0xa2);
        m_raw(&e, "\xa0\x03\x02\x01\x12", 5);
        m_raw(&e, c.b, c.n);
        m_wrap(&e, 0xa2);
        M_LIT(m, H_FLAGS0);
        m_raw(m, e.b, e.n);
        m_wrap(m, 0x30);
        *try_out = try_request;
        break;
    }
    case OL_CH_NONCE: case OL_SERVICE: case OL_SALT: case OL_S2K:
        m_fill(m, 0x80, 'n', k == OL_CH_NONCE ? n : 8);
        if (k == OL_SERVICE)
            m_fill(m, 0x81, 's', n);
        m_raw(m, "\xa2\x09\x30\x07\x80\x05\x00\x00\x00\x00\x00", 11);
        if (k == OL_SALT || k == OL_S2K)
            m_fill(m, ch_tags[k - OL_CH_NONCE], 's', n);
        m_wrap(m, 0x30);
        *try_out = try_challenge;
        break;
    case OL_TI_VENDOR: case OL_TI_CHALLENGE: case OL_TOKENINFOS:
        m_fill(m, 0x80, 'n', 8);
        for (i = 0; i < (k == OL_TOKENINFOS ? n : 1); i++) {
            msg one = { .n = 0 };

            M_LIT(&one, H_FLAGS0);
            if (k == OL_TI_VENDOR)
                m_fill(&one, 0x81, 'v', n);
            if (k == OL_TI_CHALLENGE)
                m_fill(&one, 0x82, 'c', n);
            m_wrap(&one, 0x30);
            m_raw(&ti, one.b, one.n);
        }
        m_wrap(&ti, 0xa2);
        m_raw(m, ti.b, ti.n);
        m_wrap(m, 0x30);
        *try_out = try_challenge;
        break;
    default:
        m_fill(m, 0x80, 'n', n);
        m_wrap(m, 0x30);
        *try_out = try_enc_request;
        break;
    }
}

/* The bound of case k. */
static size_t
over_long_bound(int k)
{
    switch (k) {
    case OL_VALUE: case OL_PIN: case OL_SALT:
        return YK_RFC6560_VALUE_MAX;
    case OL_CIPHER:
        return YK_RFC6560_CIPHERTEXT_MAX;
    case OL_REQ_NONCE: case OL_CH_NONCE: case OL_ENC_NONCE:
        return YK_RFC6560_NONCE_MAX;
    case OL_TOKENINFOS:
        return YK_RFC6560_TOKENINFO_MAX;
    default:
        return YK_RFC6560_STRING_MAX;
    }
}

START_TEST(test_over_long)
{
    size_t bound = over_long_bound(_i);
    try_fn try = NULL;
    msg m;

    /* At the bound: accepted; one more: TOO_LONG. */
    build_over_long(&m, _i, bound, &try);
    ck_assert_msg(try(m.b, m.n) == 0, "case %d at its bound refused", _i);
    build_over_long(&m, _i, bound + 1, &try);
    ck_assert_msg(try(m.b, m.n) == YK_ERR_RFC6560_TOO_LONG,
                  "case %d over its bound not TOO_LONG", _i);
}
END_TEST

START_TEST(test_unsupported_fields)
{
    /* hashAlg [3], otp-challenge [7], otp-time [8], otp-counter [9]. */
    EXPECT(try_request, UNSUP, H_FLAGS0 H_ENCDATA "\xa3\x02\x30\x00");
    EXPECT(try_request, UNSUP, H_FLAGS0 H_ENCDATA "\x87\x01\x00");
    EXPECT(try_request, UNSUP, H_FLAGS0 H_ENCDATA
           "\x88\x0f" "20261203120000Z");
    EXPECT(try_request, UNSUP, H_FLAGS0 H_ENCDATA "\x89\x01\x00");
    /* supportedHashAlg [7] and iterationCount [8] in a tokenInfo. */
    EXPECT(try_challenge, UNSUP, H_NONCE "\xa2\x0d\x30\x0b" H_FLAGS0
           "\xa7\x02\x30\x00");
    EXPECT(try_challenge, UNSUP, H_NONCE "\xa2\x0c\x30\x0a" H_FLAGS0
           "\x88\x01\x01");
}
END_TEST

/* MIT 1.20's client zero-fills its request, and its encoder omits
 * iterationCount only for -1: every stock request carries iterationCount
 * 0 (seen from a real kinit against our KDC; the golden vectors above set
 * -1).  It is read, and re-encoded as it came. */
START_TEST(test_iteration_count_as_mit_sends)
{
    static const char body[] = H_FLAGS0 H_ENCDATA "\x84\x01\x00" H_VALUE;
    uint8_t der[64];
    krb5_data in, out = { 0 };
    yk_rfc6560_request req;

    der[0] = 0x30;
    der[1] = sizeof(body) - 1;
    memcpy(der + 2, body, sizeof(body) - 1);
    in = view(der, sizeof(body) + 1);
    ck_assert_int_eq(yk_rfc6560_decode_request(&in, &req), 0);
    ck_assert(req.iteration_count.present);
    ck_assert_int_eq(req.iteration_count.value, 0);
    ck_assert(req.otp_value.present);
    ck_assert_int_eq(req.otp_value.data.length, 2);
    ck_assert_int_eq(yk_rfc6560_encode_request(&req, &out), 0);
    ck_assert_int_eq(out.length, in.length);
    ck_assert(memcmp(out.data, in.data, in.length) == 0);
    yk_data_free(&out);
}
END_TEST

START_TEST(test_encode_refuses_invalid)
{
    uint8_t buf[YK_RFC6560_VALUE_MAX + 1];
    krb5_data nonce = view(nonce36, NONCE_LEN), out = { 0 };
    krb5_data empty = view(NULL, 0);
    yk_rfc6560_request req;
    yk_rfc6560_challenge ch;
    char vendor[YK_RFC6560_STRING_MAX + 2];

    memset(buf, 'x', sizeof(buf));
    /* build_challenge: NULL arguments, nonce length, vendor. */
    ck_assert_int_eq(yk_rfc6560_build_challenge(NULL, NULL, &out), EINVAL);
    ck_assert_int_eq(yk_rfc6560_build_challenge(&nonce, NULL, NULL), EINVAL);
    ck_assert_int_eq(yk_rfc6560_build_challenge(&empty, NULL, &out), EINVAL);
    nonce = view(buf, YK_RFC6560_NONCE_MAX + 1);
    ck_assert_int_eq(yk_rfc6560_build_challenge(&nonce, NULL, &out), EINVAL);
    nonce = view(NULL, 8);
    ck_assert_int_eq(yk_rfc6560_build_challenge(&nonce, NULL, &out), EINVAL);
    nonce = view(nonce36, NONCE_LEN);
    ck_assert_int_eq(yk_rfc6560_build_challenge(&nonce, "", &out), EINVAL);
    ck_assert_int_eq(yk_rfc6560_build_challenge(&nonce, "Yubi\tKey", &out),
                     EINVAL);
    ck_assert_int_eq(yk_rfc6560_build_challenge(&nonce, "Yubi\x7f", &out),
                     EINVAL);
    ck_assert_int_eq(yk_rfc6560_build_challenge(&nonce, "Y\xc3\xbc", &out),
                     EINVAL);
    memset(vendor, 'v', sizeof(vendor));
    vendor[YK_RFC6560_STRING_MAX + 1] = '\0';
    ck_assert_int_eq(yk_rfc6560_build_challenge(&nonce, vendor, &out),
                     EINVAL);
    ck_assert_ptr_null(out.data);

    /* encode_challenge: no tokenInfo, too many, a long field. */
    memset(&ch, 0, sizeof(ch));
    ch.nonce = nonce;
    ck_assert_int_eq(yk_rfc6560_encode_challenge(&ch, &out), EINVAL);
    ch.n_tokeninfo = YK_RFC6560_TOKENINFO_MAX + 1;
    ck_assert_int_eq(yk_rfc6560_encode_challenge(&ch, &out), EINVAL);
    ch.n_tokeninfo = 1;
    ch.tokeninfo[0].alg_id = opt(buf, YK_RFC6560_STRING_MAX + 1);
    ck_assert_int_eq(yk_rfc6560_encode_challenge(&ch, &out), EINVAL);
    ch.tokeninfo[0].alg_id.present = FALSE;
    ch.salt = opt(buf, YK_RFC6560_VALUE_MAX + 1);
    ck_assert_int_eq(yk_rfc6560_encode_challenge(&ch, &out), EINVAL);
    ch.salt = opt(NULL, 1);
    ck_assert_int_eq(yk_rfc6560_encode_challenge(&ch, &out), EINVAL);
    ch.salt.present = FALSE;
    ck_assert_int_eq(yk_rfc6560_encode_challenge(&ch, &out), 0);
    yk_data_free(&out);
    ck_assert_int_eq(yk_rfc6560_encode_challenge(NULL, &out), EINVAL);
    ck_assert_int_eq(yk_rfc6560_encode_challenge(&ch, NULL), EINVAL);

    /* encode_request: cipher, values, nonce. */
    make_plain_request(&req, "pw");
    req.enc_data.ciphertext = view(buf, 0);
    ck_assert_int_eq(yk_rfc6560_encode_request(&req, &out), EINVAL);
    req.enc_data.ciphertext = view(buf, YK_RFC6560_CIPHERTEXT_MAX + 1);
    ck_assert_int_eq(yk_rfc6560_encode_request(&req, &out), EINVAL);
    req.enc_data.ciphertext = view(ct68, CT_LEN);
    req.otp_value = opt(buf, YK_RFC6560_VALUE_MAX + 1);
    ck_assert_int_eq(yk_rfc6560_encode_request(&req, &out), EINVAL);
    req.otp_value = opt_str("pw");
    req.pin = opt(buf, YK_RFC6560_VALUE_MAX + 1);
    ck_assert_int_eq(yk_rfc6560_encode_request(&req, &out), EINVAL);
    req.pin.present = FALSE;
    req.nonce = opt(buf, 0);
    ck_assert_int_eq(yk_rfc6560_encode_request(&req, &out), EINVAL);
    req.nonce.present = FALSE;
    req.vendor = opt(buf, YK_RFC6560_STRING_MAX + 1);
    ck_assert_int_eq(yk_rfc6560_encode_request(&req, &out), EINVAL);
    ck_assert_ptr_null(out.data);
    ck_assert_int_eq(yk_rfc6560_encode_request(NULL, &out), EINVAL);

    /* encode_enc_request: nonce length. */
    ck_assert_int_eq(yk_rfc6560_encode_enc_request(&empty, &out), EINVAL);
    nonce = view(buf, YK_RFC6560_NONCE_MAX + 1);
    ck_assert_int_eq(yk_rfc6560_encode_enc_request(&nonce, &out), EINVAL);
    ck_assert_int_eq(yk_rfc6560_encode_enc_request(NULL, &out), EINVAL);
    ck_assert_ptr_null(out.data);
}
END_TEST

START_TEST(test_error_messages)
{
    /* The new codes have their own messages. */
    ck_assert_ptr_nonnull(strstr(yk_strerror(YK_ERR_RFC6560_FORMAT),
                                 "RFC 6560"));
    ck_assert_ptr_nonnull(strstr(yk_strerror(YK_ERR_RFC6560_TOO_LONG),
                                 "size limit"));
    ck_assert_ptr_nonnull(strstr(yk_strerror(YK_ERR_RFC6560_UNSUPPORTED),
                                 "unsupported"));
}
END_TEST

/* The suite: known answers, round trips, malformed input. */
static Suite *
rfc6560_suite(void)
{
    Suite *s = suite_create("rfc6560");
    TCase *tc;

    setup_inputs();
    tc = tcase_create("known-answers");
    tcase_add_test(tc, test_challenge_golden_plain);
    tcase_add_test(tc, test_challenge_golden_vendor);
    tcase_add_test(tc, test_challenge_golden_full);
    tcase_add_test(tc, test_request_golden_plain);
    tcase_add_test(tc, test_request_golden_vendor);
    tcase_add_test(tc, test_request_golden_pin);
    tcase_add_test(tc, test_request_golden_full);
    tcase_add_test(tc, test_enc_request_golden);
    suite_add_tcase(s, tc);

    tc = tcase_create("round-trips");
    tcase_add_loop_test(tc, test_request_roundtrip_lengths, 0, N_EDGE_LENS);
    tcase_add_test(tc, test_request_roundtrip_integers);
    tcase_add_test(tc, test_request_roundtrip_flags);
    tcase_add_test(tc, test_request_roundtrip_absent);
    tcase_add_loop_test(tc, test_challenge_roundtrip, 0, N_EDGE_LENS);
    tcase_add_test(tc, test_enc_request_roundtrip);
    tcase_add_test(tc, test_build_challenge_vendors);
    suite_add_tcase(s, tc);

    tc = tcase_create("malformed");
    tcase_add_test(tc, test_bases_valid);
    tcase_add_test(tc, test_empty_and_null);
    tcase_add_loop_test(tc, test_truncated, 0, N_GOLDENS);
    tcase_add_loop_test(tc, test_trailing_byte, 0, N_GOLDENS);
    tcase_add_test(tc, test_trailing_inside_field);
    tcase_add_test(tc, test_wrong_outer_tag);
    tcase_add_test(tc, test_nonminimal_outer_length);
    tcase_add_test(tc, test_nonminimal_inner_length);
    tcase_add_test(tc, test_indefinite_length);
    tcase_add_test(tc, test_length_octets);
    tcase_add_test(tc, test_high_tag_number);
    tcase_add_test(tc, test_fields_out_of_order);
    tcase_add_test(tc, test_duplicate_field);
    tcase_add_test(tc, test_unknown_tag);
    tcase_add_test(tc, test_wrong_class);
    tcase_add_test(tc, test_wrong_constructed_bit);
    tcase_add_test(tc, test_wrong_inner_type);
    tcase_add_test(tc, test_bad_integer);
    tcase_add_test(tc, test_bad_flags);
    tcase_add_test(tc, test_missing_required);
    tcase_add_test(tc, test_empty_nonce_and_cipher);
    tcase_add_loop_test(tc, test_over_long, 0, OL_COUNT);
    tcase_add_test(tc, test_unsupported_fields);
    tcase_add_test(tc, test_iteration_count_as_mit_sends);
    tcase_add_test(tc, test_encode_refuses_invalid);
    tcase_add_test(tc, test_error_messages);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(rfc6560_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
