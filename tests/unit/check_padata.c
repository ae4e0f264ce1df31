/* SPDX-License-Identifier: MIT */
/* check_padata.c: unit tests of the padata wire codec and mode 1 sealing. */

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

#define OTP32 "dvgtiblfkbgturecfllberrvkinnctnn"
#define OTP40 "dteffujehknhfjbrjnlnldnhcujvddbikngjrtgh"
#define OTP64 "cccccccccccccccccccccccccccccccc" OTP32

/* Golden vectors, written out byte by byte from the documented layout
 * (doc/protocol.md): a layout change must fail these. */
static const uint8_t golden_hint_both[] = { 0x59, 0x4b, 0x01, 0x03 };
static const uint8_t golden_hint_bound[] = { 0x59, 0x4b, 0x01, 0x01 };

/* Mode 2 request carrying OTP40 (40 = 0x28 characters). */
static const uint8_t golden_req2[] = {
    0x59, 0x4b, 0x01, 0x02, 0x28, 0x64, 0x74, 0x65, 0x66, 0x66, 0x75, 0x6a,
    0x65, 0x68, 0x6b, 0x6e, 0x68, 0x66, 0x6a, 0x62, 0x72, 0x6a, 0x6e, 0x6c,
    0x6e, 0x6c, 0x64, 0x6e, 0x68, 0x63, 0x75, 0x6a, 0x76, 0x64, 0x64, 0x62,
    0x69, 0x6b, 0x6e, 0x67, 0x6a, 0x72, 0x74, 0x67, 0x68
};

/* Mode 1 request: enctype 18 (aes256-cts-hmac-sha1-96), 4 bytes. */
static const uint8_t golden_req1[] = {
    0x59, 0x4b, 0x01, 0x01, 0x00, 0x00, 0x00, 0x12, 0x00, 0x04,
    0xde, 0xad, 0xbe, 0xef
};

/* Mode 1 request with a negative enctype (-1) and 1 byte. */
static const uint8_t golden_req1_neg[] = {
    0x59, 0x4b, 0x01, 0x01, 0xff, 0xff, 0xff, 0xff, 0x00, 0x01, 0x00
};

/* Bound plaintext: sec 0x5f5e0ff1, usec 999999, nonce 0xa1b2c3d4, OTP32. */
static const uint8_t golden_bound[] = {
    0x59, 0x4b, 0x01, 0x5f, 0x5e, 0x0f, 0xf1, 0x00, 0x0f, 0x42, 0x3f, 0xa1,
    0xb2, 0xc3, 0xd4, 0x20, 0x64, 0x76, 0x67, 0x74, 0x69, 0x62, 0x6c, 0x66,
    0x6b, 0x62, 0x67, 0x74, 0x75, 0x72, 0x65, 0x63, 0x66, 0x6c, 0x6c, 0x62,
    0x65, 0x72, 0x72, 0x76, 0x6b, 0x69, 0x6e, 0x6e, 0x63, 0x74, 0x6e, 0x6e
};

/* Decode p[0..n) as a hint; return the code, checking that *flags_out is
 * left alone on failure. */
static krb5_error_code
try_hint(const uint8_t *p, size_t n)
{
    krb5_data d = exact(p, n);
    uint8_t flags = 0xa5;
    krb5_error_code ret = yk_padata_decode_hint(&d, &flags);

    if (ret)
        ck_assert_uint_eq(flags, 0xa5);
    free_exact(&d);
    return ret;
}

/* Decode p[0..n) as a request; return the code, checking that *req_out is
 * left alone on failure. */
static krb5_error_code
try_request(const uint8_t *p, size_t n)
{
    krb5_data d = exact(p, n);
    yk_request req, before;
    krb5_error_code ret;

    memset(&req, 0x5a, sizeof(req));
    before = req;
    ret = yk_padata_decode_request(&d, &req);
    if (ret)
        ck_assert_mem_eq(&req, &before, sizeof(req));
    free_exact(&d);
    return ret;
}

/* Decode p[0..n) as a bound plaintext; return the code, checking that
 * *b_out is left alone on failure. */
static krb5_error_code
try_bound(const uint8_t *p, size_t n)
{
    krb5_data d = exact(p, n);
    yk_bound b, before;
    krb5_error_code ret;

    memset(&b, 0x5a, sizeof(b));
    before = b;
    ret = yk_padata_decode_bound(&d, &b);
    if (ret)
        ck_assert_mem_eq(&b, &before, sizeof(b));
    free_exact(&d);
    return ret;
}

/* Fill a mode 2 request with otp. */
static void
make_req2(yk_request *req, const char *otp)
{
    memset(req, 0, sizeof(*req));
    req->mode = YK_MODE_OTP;
    req->otp_len = strlen(otp);
    memcpy(req->otp, otp, req->otp_len + 1);
}

/* Fill a bound plaintext. */
static void
make_bound(yk_bound *b, uint32_t sec, uint32_t usec, uint32_t nonce,
           const char *otp)
{
    memset(b, 0, sizeof(*b));
    b->sec = sec;
    b->usec = usec;
    b->nonce = nonce;
    b->otp_len = strlen(otp);
    memcpy(b->otp, otp, b->otp_len + 1);
}

/* Encode a mode 2 request for otp into a malloc'd buffer; *len_out gets
 * its length. */
static uint8_t *
wire_req2(const char *otp, size_t *len_out)
{
    yk_request req;
    krb5_data out = { 0 };
    uint8_t *copy;

    make_req2(&req, otp);
    ck_assert_int_eq(yk_padata_encode_request(&req, &out), 0);
    copy = malloc(out.length);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, out.data, out.length);
    *len_out = out.length;
    yk_data_free(&out);
    return copy;
}

/* Encode a mode 1 request of ctlen bytes (all 0x77, enctype 18) into a
 * malloc'd buffer. */
static uint8_t *
wire_req1(size_t ctlen, size_t *len_out)
{
    yk_request req;
    krb5_data out = { 0 };
    uint8_t *ct = malloc(ctlen), *copy;

    ck_assert_ptr_nonnull(ct);
    memset(ct, 0x77, ctlen);
    memset(&req, 0, sizeof(req));
    req.mode = YK_MODE_2FA;
    req.enctype = ENCTYPE_AES256_CTS_HMAC_SHA1_96;
    req.ciphertext.length = (unsigned int)ctlen;
    req.ciphertext.data = (char *)ct;
    ck_assert_int_eq(yk_padata_encode_request(&req, &out), 0);
    copy = malloc(out.length);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, out.data, out.length);
    *len_out = out.length;
    yk_data_free(&out);
    free(ct);
    return copy;
}

/* --- known answers ------------------------------------------------------ */

START_TEST(test_hint_golden)
{
    krb5_data out = { 0 };
    uint8_t flags = 0;

    ck_assert_int_eq(yk_padata_encode_hint(YK_HINT_PASSWORD_BOUND |
                                           YK_HINT_OTP_ALONE_OK, &out), 0);
    ck_assert_uint_eq(out.length, sizeof(golden_hint_both));
    ck_assert_mem_eq(out.data, golden_hint_both, sizeof(golden_hint_both));
    yk_data_free(&out);
    ck_assert_ptr_null(out.data);
    ck_assert_uint_eq(out.length, 0);

    ck_assert_int_eq(yk_padata_encode_hint(YK_HINT_PASSWORD_BOUND, &out), 0);
    ck_assert_uint_eq(out.length, sizeof(golden_hint_bound));
    ck_assert_mem_eq(out.data, golden_hint_bound, sizeof(golden_hint_bound));
    yk_data_free(&out);

    ck_assert_int_eq(try_hint(golden_hint_both, 4), 0);
    {
        krb5_data d = exact(golden_hint_bound, 4);
        ck_assert_int_eq(yk_padata_decode_hint(&d, &flags), 0);
        ck_assert_uint_eq(flags, YK_HINT_PASSWORD_BOUND);
        free_exact(&d);
    }
    ck_assert_int_eq(YK_PADATA_TYPE, -22859);
    ck_assert_int_eq(YK_PADATA_TYPE, -0x594B);
    ck_assert_int_eq(YK_KEY_USAGE, 1113);
}
END_TEST

START_TEST(test_req2_golden)
{
    yk_request req;
    krb5_data out = { 0 }, in;

    make_req2(&req, OTP40);
    ck_assert_int_eq(yk_padata_encode_request(&req, &out), 0);
    ck_assert_uint_eq(out.length, sizeof(golden_req2));
    ck_assert_mem_eq(out.data, golden_req2, sizeof(golden_req2));
    yk_data_free(&out);

    memset(&req, 0, sizeof(req));
    in = exact(golden_req2, sizeof(golden_req2));
    ck_assert_int_eq(yk_padata_decode_request(&in, &req), 0);
    ck_assert_int_eq(req.mode, YK_MODE_OTP);
    ck_assert_uint_eq(req.otp_len, 40);
    ck_assert_str_eq(req.otp, OTP40);
    yk_request_clear(&req, 0);
    free_exact(&in);
}
END_TEST

START_TEST(test_req1_golden)
{
    yk_request req;
    krb5_data out = { 0 }, in;
    uint8_t ct[4] = { 0xde, 0xad, 0xbe, 0xef };

    memset(&req, 0, sizeof(req));
    req.mode = YK_MODE_2FA;
    req.enctype = ENCTYPE_AES256_CTS_HMAC_SHA1_96;
    req.ciphertext.length = 4;
    req.ciphertext.data = (char *)ct;
    ck_assert_int_eq(yk_padata_encode_request(&req, &out), 0);
    ck_assert_uint_eq(out.length, sizeof(golden_req1));
    ck_assert_mem_eq(out.data, golden_req1, sizeof(golden_req1));
    yk_data_free(&out);

    /* The ciphertext borrows the input buffer. */
    memset(&req, 0, sizeof(req));
    in = exact(golden_req1, sizeof(golden_req1));
    ck_assert_int_eq(yk_padata_decode_request(&in, &req), 0);
    ck_assert_int_eq(req.mode, YK_MODE_2FA);
    ck_assert_int_eq(req.enctype, 18);
    ck_assert_uint_eq(req.ciphertext.length, 4);
    ck_assert_ptr_eq(req.ciphertext.data, in.data + 10);
    free_exact(&in);

    /* A negative enctype survives the trip. */
    in = exact(golden_req1_neg, sizeof(golden_req1_neg));
    ck_assert_int_eq(yk_padata_decode_request(&in, &req), 0);
    ck_assert_int_eq(req.enctype, -1);
    ck_assert_int_eq(yk_padata_encode_request(&req, &out), 0);
    ck_assert_uint_eq(out.length, sizeof(golden_req1_neg));
    ck_assert_mem_eq(out.data, golden_req1_neg, sizeof(golden_req1_neg));
    yk_data_free(&out);
    free_exact(&in);
}
END_TEST

START_TEST(test_bound_golden)
{
    yk_bound b;
    krb5_data out = { 0 }, in;

    make_bound(&b, 0x5f5e0ff1, 999999, 0xa1b2c3d4, OTP32);
    ck_assert_int_eq(yk_padata_encode_bound(&b, &out), 0);
    ck_assert_uint_eq(out.length, sizeof(golden_bound));
    ck_assert_mem_eq(out.data, golden_bound, sizeof(golden_bound));
    yk_data_free(&out);

    memset(&b, 0, sizeof(b));
    in = exact(golden_bound, sizeof(golden_bound));
    ck_assert_int_eq(yk_padata_decode_bound(&in, &b), 0);
    ck_assert_uint_eq(b.sec, 0x5f5e0ff1);
    ck_assert_uint_eq(b.usec, 999999);
    ck_assert_uint_eq(b.nonce, 0xa1b2c3d4);
    ck_assert_uint_eq(b.otp_len, 32);
    ck_assert_str_eq(b.otp, OTP32);
    free_exact(&in);
}
END_TEST

/* --- round trips -------------------------------------------------------- */

START_TEST(test_hint_roundtrip)
{
    uint8_t flags, got;
    krb5_data out = { 0 };

    for (flags = 0; flags <= 3; flags++) {
        ck_assert_int_eq(yk_padata_encode_hint(flags, &out), 0);
        ck_assert_uint_eq(out.length, 4);
        got = 0xff;
        ck_assert_int_eq(yk_padata_decode_hint(&out, &got), 0);
        ck_assert_uint_eq(got, flags);
        yk_data_free(&out);
    }
}
END_TEST

START_TEST(test_hint_reserved_bits)
{
    static const uint8_t all[] = { 0x59, 0x4b, 0x01, 0xff };
    static const uint8_t none[] = { 0x59, 0x4b, 0x01, 0xfc };
    krb5_data in, out = { 0 };
    uint8_t flags = 0;

    /* Receivers ignore reserved bits... */
    in = exact(all, 4);
    ck_assert_int_eq(yk_padata_decode_hint(&in, &flags), 0);
    ck_assert_uint_eq(flags, 0x03);
    free_exact(&in);
    in = exact(none, 4);
    ck_assert_int_eq(yk_padata_decode_hint(&in, &flags), 0);
    ck_assert_uint_eq(flags, 0x00);
    free_exact(&in);
    /* ...and senders never set them. */
    ck_assert_int_eq(yk_padata_encode_hint(0x04, &out), EINVAL);
    ck_assert_int_eq(yk_padata_encode_hint(0x80, &out), EINVAL);
    ck_assert_ptr_null(out.data);
}
END_TEST

START_TEST(test_req1_roundtrip)
{
    static const size_t lens[] = { 1, 2, 2048 };
    static const krb5_enctype etypes[] = {
        ENCTYPE_AES256_CTS_HMAC_SHA1_96, ENCTYPE_AES128_CTS_HMAC_SHA256_128,
        -1, INT32_MIN, INT32_MAX
    };
    size_t i, j, k;

    for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        for (j = 0; j < sizeof(etypes) / sizeof(etypes[0]); j++) {
            uint8_t *ct = malloc(lens[i]);
            yk_request req, dec;
            krb5_data out = { 0 }, again = { 0 };

            ck_assert_ptr_nonnull(ct);
            for (k = 0; k < lens[i]; k++)
                ct[k] = (uint8_t)(k * 7 + j);
            memset(&req, 0, sizeof(req));
            req.mode = YK_MODE_2FA;
            req.enctype = etypes[j];
            req.ciphertext.length = (unsigned int)lens[i];
            req.ciphertext.data = (char *)ct;
            ck_assert_int_eq(yk_padata_encode_request(&req, &out), 0);
            ck_assert_uint_eq(out.length, 10 + lens[i]);

            memset(&dec, 0, sizeof(dec));
            ck_assert_int_eq(yk_padata_decode_request(&out, &dec), 0);
            ck_assert_int_eq(dec.mode, YK_MODE_2FA);
            ck_assert_int_eq(dec.enctype, etypes[j]);
            ck_assert_uint_eq(dec.ciphertext.length, lens[i]);
            ck_assert_mem_eq(dec.ciphertext.data, ct, lens[i]);
            ck_assert_int_eq(yk_padata_encode_request(&dec, &again), 0);
            ck_assert_uint_eq(again.length, out.length);
            ck_assert_mem_eq(again.data, out.data, out.length);
            yk_data_free(&again);
            yk_data_free(&out);
            free(ct);
        }
    }
}
END_TEST

START_TEST(test_req2_roundtrip)
{
    static const char *otps[] = { OTP32, OTP40, OTP64 };
    size_t i;

    for (i = 0; i < sizeof(otps) / sizeof(otps[0]); i++) {
        yk_request req, dec;
        krb5_data out = { 0 }, again = { 0 };
        size_t n = strlen(otps[i]);

        make_req2(&req, otps[i]);
        ck_assert_int_eq(yk_padata_encode_request(&req, &out), 0);
        ck_assert_uint_eq(out.length, 5 + n);
        memset(&dec, 0x5a, sizeof(dec));
        ck_assert_int_eq(yk_padata_decode_request(&out, &dec), 0);
        ck_assert_int_eq(dec.mode, YK_MODE_OTP);
        ck_assert_uint_eq(dec.otp_len, n);
        ck_assert_str_eq(dec.otp, otps[i]);
        ck_assert_ptr_null(dec.ciphertext.data);
        ck_assert_uint_eq(dec.ciphertext.length, 0);
        ck_assert_int_eq(yk_padata_encode_request(&dec, &again), 0);
        ck_assert_uint_eq(again.length, out.length);
        ck_assert_mem_eq(again.data, out.data, out.length);
        yk_data_free(&again);
        yk_data_free(&out);
        yk_request_clear(&dec, 0);
    }
}
END_TEST

START_TEST(test_bound_roundtrip)
{
    static const char *otps[] = { OTP32, OTP64 };
    static const uint32_t usecs[] = { 0, 1, 999999 };
    static const uint32_t secs[] = { 0, 1700000000U, 0xffffffffU };
    size_t i, j;

    for (i = 0; i < 2; i++) {
        for (j = 0; j < 3; j++) {
            yk_bound b, dec;
            krb5_data out = { 0 }, again = { 0 };

            make_bound(&b, secs[j], usecs[j], 0xdeadbeefU - (uint32_t)j,
                       otps[i]);
            ck_assert_int_eq(yk_padata_encode_bound(&b, &out), 0);
            ck_assert_uint_eq(out.length, 16 + strlen(otps[i]));
            memset(&dec, 0, sizeof(dec));
            ck_assert_int_eq(yk_padata_decode_bound(&out, &dec), 0);
            ck_assert_uint_eq(dec.sec, secs[j]);
            ck_assert_uint_eq(dec.usec, usecs[j]);
            ck_assert_uint_eq(dec.nonce, 0xdeadbeefU - (uint32_t)j);
            ck_assert_uint_eq(dec.otp_len, strlen(otps[i]));
            ck_assert_str_eq(dec.otp, otps[i]);
            ck_assert_int_eq(yk_padata_encode_bound(&dec, &again), 0);
            ck_assert_uint_eq(again.length, out.length);
            ck_assert_mem_eq(again.data, out.data, out.length);
            yk_data_free(&again);
            yk_data_free(&out);
        }
    }
}
END_TEST

/* --- malformed input: one test per kind --------------------------------- */

START_TEST(test_empty)
{
    krb5_data null_data = { KV5M_DATA, 0, NULL };
    uint8_t flags = 0;
    yk_request req;
    yk_bound b;

    ck_assert_int_eq(try_hint(golden_hint_both, 0), YK_ERR_PADATA_FORMAT);
    ck_assert_int_eq(try_request(golden_req2, 0), YK_ERR_PADATA_FORMAT);
    ck_assert_int_eq(try_bound(golden_bound, 0), YK_ERR_PADATA_FORMAT);
    ck_assert_int_eq(yk_padata_decode_hint(&null_data, &flags),
                     YK_ERR_PADATA_FORMAT);
    ck_assert_int_eq(yk_padata_decode_request(&null_data, &req),
                     YK_ERR_PADATA_FORMAT);
    ck_assert_int_eq(yk_padata_decode_bound(&null_data, &b),
                     YK_ERR_PADATA_FORMAT);
    ck_assert_int_eq(yk_padata_decode_hint(NULL, &flags), EINVAL);
    ck_assert_int_eq(yk_padata_decode_request(NULL, &req), EINVAL);
    ck_assert_int_eq(yk_padata_decode_bound(NULL, &b), EINVAL);
}
END_TEST

/* Loop index: which valid message to truncate. */
enum { T_HINT, T_REQ1_1, T_REQ1_2048, T_REQ2_32, T_REQ2_64, T_BOUND_32,
       T_BOUND_64, T_COUNT };

START_TEST(test_truncated)
{
    uint8_t *msg = NULL;
    size_t len = 0, n;
    yk_bound b;
    krb5_data out = { 0 };
    krb5_error_code (*try)(const uint8_t *, size_t) = try_request;

    switch (_i) {
    case T_HINT:
        ck_assert_int_eq(yk_padata_encode_hint(3, &out), 0);
        try = try_hint;
        break;
    case T_REQ1_1:
        msg = wire_req1(1, &len);
        break;
    case T_REQ1_2048:
        msg = wire_req1(2048, &len);
        break;
    case T_REQ2_32:
        msg = wire_req2(OTP32, &len);
        break;
    case T_REQ2_64:
        msg = wire_req2(OTP64, &len);
        break;
    default:
        make_bound(&b, 1, 2, 3, _i == T_BOUND_32 ? OTP32 : OTP64);
        ck_assert_int_eq(yk_padata_encode_bound(&b, &out), 0);
        try = try_bound;
        break;
    }
    if (msg == NULL) {
        msg = malloc(out.length);
        ck_assert_ptr_nonnull(msg);
        memcpy(msg, out.data, out.length);
        len = out.length;
        yk_data_free(&out);
    }

    /* The whole message decodes; every proper prefix is refused. */
    ck_assert_int_eq(try(msg, len), 0);
    for (n = 0; n < len; n++)
        ck_assert_msg(try(msg, n) == YK_ERR_PADATA_FORMAT,
                      "message %d truncated to %zu bytes accepted", _i, n);
    free(msg);
}
END_TEST

START_TEST(test_trailing_byte)
{
    uint8_t buf[2048 + 16];
    uint8_t *msg;
    size_t len;

    memcpy(buf, golden_hint_both, 4);
    buf[4] = 0;
    ck_assert_int_eq(try_hint(buf, 5), YK_ERR_PADATA_FORMAT);

    memcpy(buf, golden_req2, sizeof(golden_req2));
    buf[sizeof(golden_req2)] = 'c';
    ck_assert_int_eq(try_request(buf, sizeof(golden_req2) + 1),
                     YK_ERR_PADATA_FORMAT);

    memcpy(buf, golden_req1, sizeof(golden_req1));
    buf[sizeof(golden_req1)] = 0;
    ck_assert_int_eq(try_request(buf, sizeof(golden_req1) + 1),
                     YK_ERR_PADATA_FORMAT);

    msg = wire_req1(2048, &len);
    memcpy(buf, msg, len);
    buf[len] = 0;
    ck_assert_int_eq(try_request(buf, len + 1), YK_ERR_PADATA_FORMAT);
    free(msg);

    memcpy(buf, golden_bound, sizeof(golden_bound));
    buf[sizeof(golden_bound)] = 'c';
    ck_assert_int_eq(try_bound(buf, sizeof(golden_bound) + 1),
                     YK_ERR_PADATA_FORMAT);
}
END_TEST

START_TEST(test_wrong_magic)
{
    uint8_t buf[sizeof(golden_bound)];
    int pos;

    for (pos = 0; pos < 2; pos++) {
        memcpy(buf, golden_hint_both, 4);
        buf[pos] ^= 0x20;                /* "yK", "Yk" */
        ck_assert_int_eq(try_hint(buf, 4), YK_ERR_PADATA_FORMAT);
        memcpy(buf, golden_req2, sizeof(golden_req2));
        buf[pos] ^= 0x20;
        ck_assert_int_eq(try_request(buf, sizeof(golden_req2)),
                         YK_ERR_PADATA_FORMAT);
        memcpy(buf, golden_bound, sizeof(golden_bound));
        buf[pos] ^= 0x20;
        ck_assert_int_eq(try_bound(buf, sizeof(golden_bound)),
                         YK_ERR_PADATA_FORMAT);
    }
    /* The two magic bytes swapped. */
    memcpy(buf, golden_hint_both, 4);
    buf[0] = 0x4b;
    buf[1] = 0x59;
    ck_assert_int_eq(try_hint(buf, 4), YK_ERR_PADATA_FORMAT);
}
END_TEST

START_TEST(test_wrong_version)
{
    static const uint8_t versions[] = { 0x00, 0x02, 0xff };
    uint8_t buf[sizeof(golden_bound) + 1];
    size_t i;

    for (i = 0; i < sizeof(versions); i++) {
        memcpy(buf, golden_hint_both, 4);
        buf[2] = versions[i];
        ck_assert_int_eq(try_hint(buf, 4), YK_ERR_PADATA_VERSION);
        /* A future hint may be longer: still a version error. */
        buf[4] = 0;
        ck_assert_int_eq(try_hint(buf, 5), YK_ERR_PADATA_VERSION);
        memcpy(buf, golden_req2, sizeof(golden_req2));
        buf[2] = versions[i];
        ck_assert_int_eq(try_request(buf, sizeof(golden_req2)),
                         YK_ERR_PADATA_VERSION);
        memcpy(buf, golden_req1, sizeof(golden_req1));
        buf[2] = versions[i];
        ck_assert_int_eq(try_request(buf, sizeof(golden_req1)),
                         YK_ERR_PADATA_VERSION);
        memcpy(buf, golden_bound, sizeof(golden_bound));
        buf[2] = versions[i];
        ck_assert_int_eq(try_bound(buf, sizeof(golden_bound)),
                         YK_ERR_PADATA_VERSION);
    }
}
END_TEST

START_TEST(test_unknown_mode)
{
    static const uint8_t modes[] = { 0x00, 0x03, 0x80, 0xff };
    uint8_t buf[sizeof(golden_req2)];
    size_t i;

    for (i = 0; i < sizeof(modes); i++) {
        memcpy(buf, golden_req2, sizeof(golden_req2));
        buf[3] = modes[i];
        ck_assert_int_eq(try_request(buf, sizeof(golden_req2)),
                         YK_ERR_PADATA_VERSION);
        ck_assert_int_eq(try_request(buf, 4), YK_ERR_PADATA_VERSION);
    }
}
END_TEST

START_TEST(test_ctlen_zero)
{
    static const uint8_t msg[] = {
        0x59, 0x4b, 0x01, 0x01, 0x00, 0x00, 0x00, 0x12, 0x00, 0x00
    };

    ck_assert_int_eq(try_request(msg, sizeof(msg)), YK_ERR_PADATA_FORMAT);
}
END_TEST

START_TEST(test_ctlen_too_big)
{
    uint8_t *msg = NULL;
    size_t len = 0;
    uint8_t *big;

    /* 2049 declared and 2049 present. */
    msg = wire_req1(2048, &len);
    big = malloc(len + 1);
    ck_assert_ptr_nonnull(big);
    memcpy(big, msg, len);
    big[len] = 0x77;
    big[8] = 0x08;
    big[9] = 0x01;
    ck_assert_int_eq(try_request(big, len + 1), YK_ERR_PADATA_FORMAT);
    /* 0xffff declared, 2048 present. */
    big[8] = 0xff;
    big[9] = 0xff;
    ck_assert_int_eq(try_request(big, len), YK_ERR_PADATA_FORMAT);
    free(big);
    free(msg);
}
END_TEST

START_TEST(test_ctlen_past_end)
{
    uint8_t buf[sizeof(golden_req1)];

    /* 5 declared, 4 present; and 0x0400 declared, 4 present. */
    memcpy(buf, golden_req1, sizeof(buf));
    buf[9] = 0x05;
    ck_assert_int_eq(try_request(buf, sizeof(buf)), YK_ERR_PADATA_FORMAT);
    buf[8] = 0x04;
    buf[9] = 0x00;
    ck_assert_int_eq(try_request(buf, sizeof(buf)), YK_ERR_PADATA_FORMAT);
    /* 3 declared, 4 present: a trailing byte. */
    buf[8] = 0x00;
    buf[9] = 0x03;
    ck_assert_int_eq(try_request(buf, sizeof(buf)), YK_ERR_PADATA_FORMAT);
}
END_TEST

START_TEST(test_otplen_out_of_range)
{
    uint8_t buf[128];
    static const uint8_t lens[] = { 0, 1, 31, 65, 255 };
    size_t i;

    for (i = 0; i < sizeof(lens); i++) {
        /* Request: otplen declared and exactly that many 'c' present. */
        memcpy(buf, golden_req2, 4);
        buf[4] = lens[i];
        memset(buf + 5, 'c', sizeof(buf) - 5);
        if (5 + (size_t)lens[i] <= sizeof(buf))
            ck_assert_int_eq(try_request(buf, 5 + lens[i]),
                             YK_ERR_PADATA_FORMAT);
        /* Bound plaintext likewise. */
        memcpy(buf, golden_bound, 15);
        buf[15] = lens[i];
        memset(buf + 16, 'c', sizeof(buf) - 16);
        if (16 + (size_t)lens[i] <= sizeof(buf))
            ck_assert_int_eq(try_bound(buf, 16 + lens[i]),
                             YK_ERR_PADATA_FORMAT);
    }
    /* otplen 40 declared in the golden request, 39 present. */
    ck_assert_int_eq(try_request(golden_req2, sizeof(golden_req2) - 1),
                     YK_ERR_PADATA_FORMAT);
}
END_TEST

START_TEST(test_otp_not_printable)
{
    static const uint8_t bad[] = { 0x00, 0x09, 0x1f, 0x7f, 0x80, 0xff };
    static const size_t where[] = { 0, 20, 39 };
    uint8_t buf[sizeof(golden_bound)];
    size_t i, j;

    for (i = 0; i < sizeof(bad); i++) {
        for (j = 0; j < 3; j++) {
            memcpy(buf, golden_req2, sizeof(golden_req2));
            buf[5 + where[j]] = bad[i];
            ck_assert_int_eq(try_request(buf, sizeof(golden_req2)),
                             YK_ERR_PADATA_FORMAT);
            memcpy(buf, golden_bound, sizeof(golden_bound));
            buf[16 + where[j] % 32] = bad[i];
            ck_assert_int_eq(try_bound(buf, sizeof(golden_bound)),
                             YK_ERR_PADATA_FORMAT);
        }
    }
}
END_TEST

START_TEST(test_usec_out_of_range)
{
    uint8_t buf[sizeof(golden_bound)];
    yk_bound b;
    krb5_data out = { 0 };

    /* 1000000 = 0x000f4240. */
    memcpy(buf, golden_bound, sizeof(buf));
    buf[7] = 0x00;
    buf[8] = 0x0f;
    buf[9] = 0x42;
    buf[10] = 0x40;
    ck_assert_int_eq(try_bound(buf, sizeof(buf)), YK_ERR_PADATA_FORMAT);
    buf[7] = buf[8] = buf[9] = buf[10] = 0xff;
    ck_assert_int_eq(try_bound(buf, sizeof(buf)), YK_ERR_PADATA_FORMAT);
    /* 999999 is the largest accepted value (golden_bound). */
    ck_assert_int_eq(try_bound(golden_bound, sizeof(golden_bound)), 0);

    make_bound(&b, 1, 1000000, 2, OTP32);
    ck_assert_int_eq(yk_padata_encode_bound(&b, &out), EINVAL);
    ck_assert_ptr_null(out.data);
}
END_TEST

START_TEST(test_encode_refuses_invalid)
{
    yk_request req;
    yk_bound b;
    krb5_data out = { 0 };
    char ct[2049];

    memset(ct, 1, sizeof(ct));
    memset(&req, 0, sizeof(req));
    req.mode = 3;
    ck_assert_int_eq(yk_padata_encode_request(&req, &out), EINVAL);
    req.mode = YK_MODE_2FA;
    req.ciphertext.data = ct;
    req.ciphertext.length = 0;
    ck_assert_int_eq(yk_padata_encode_request(&req, &out), EINVAL);
    req.ciphertext.length = 2049;
    ck_assert_int_eq(yk_padata_encode_request(&req, &out), EINVAL);
    req.ciphertext.data = NULL;
    req.ciphertext.length = 16;
    ck_assert_int_eq(yk_padata_encode_request(&req, &out), EINVAL);

    make_req2(&req, OTP32);
    req.otp_len = 31;
    ck_assert_int_eq(yk_padata_encode_request(&req, &out), EINVAL);
    make_req2(&req, OTP64);
    req.otp_len = 65;
    ck_assert_int_eq(yk_padata_encode_request(&req, &out), EINVAL);
    make_req2(&req, OTP32);
    req.otp[3] = '\n';
    ck_assert_int_eq(yk_padata_encode_request(&req, &out), EINVAL);

    make_bound(&b, 1, 2, 3, OTP32);
    b.otp_len = 31;
    ck_assert_int_eq(yk_padata_encode_bound(&b, &out), EINVAL);
    ck_assert_ptr_null(out.data);
    ck_assert_int_eq(yk_padata_encode_request(NULL, &out), EINVAL);
    ck_assert_int_eq(yk_padata_encode_bound(NULL, &out), EINVAL);
    ck_assert_int_eq(yk_padata_encode_hint(1, NULL), EINVAL);
}
END_TEST

/* --- mode 1 sealing with real krb5 keys --------------------------------- */

static const krb5_enctype seal_etypes[] = {
    ENCTYPE_AES256_CTS_HMAC_SHA1_96, ENCTYPE_AES128_CTS_HMAC_SHA256_128
};

START_TEST(test_seal_open)
{
    krb5_context ctx = NULL;
    krb5_keyblock key, other;
    krb5_enctype et = seal_etypes[_i];
    yk_bound b, got, before;
    yk_request req, req2, wire_req;
    krb5_data wire = { 0 };
    size_t ctlen = 0;

    ck_assert_int_eq(krb5_init_context(&ctx), 0);
    ck_assert_int_eq(krb5_c_make_random_key(ctx, et, &key), 0);
    ck_assert_int_eq(krb5_c_make_random_key(ctx, et, &other), 0);

    make_bound(&b, 1700000000U, 123456, 0x01020304, OTP40);
    memset(&req, 0, sizeof(req));
    ck_assert_int_eq(yk_padata_seal(ctx, &key, &b, &req), 0);
    ck_assert_int_eq(req.mode, YK_MODE_2FA);
    ck_assert_int_eq(req.enctype, et);
    ck_assert_int_eq(krb5_c_encrypt_length(ctx, et, 16 + 40, &ctlen), 0);
    ck_assert_uint_eq(req.ciphertext.length, ctlen);
    /* The OTP does not appear in clear in what goes on the wire. */
    ck_assert_ptr_null(memmem(req.ciphertext.data, req.ciphertext.length,
                              OTP40, 8));

    /* Open directly, and after a trip through the wire codec. */
    memset(&got, 0, sizeof(got));
    ck_assert_int_eq(yk_padata_open(ctx, &key, &req, &got), 0);
    ck_assert_uint_eq(got.sec, 1700000000U);
    ck_assert_uint_eq(got.usec, 123456);
    ck_assert_uint_eq(got.nonce, 0x01020304);
    ck_assert_uint_eq(got.otp_len, 40);
    ck_assert_str_eq(got.otp, OTP40);

    ck_assert_int_eq(yk_padata_encode_request(&req, &wire), 0);
    memset(&wire_req, 0, sizeof(wire_req));
    ck_assert_int_eq(yk_padata_decode_request(&wire, &wire_req), 0);
    memset(&got, 0, sizeof(got));
    ck_assert_int_eq(yk_padata_open(ctx, &key, &wire_req, &got), 0);
    ck_assert_str_eq(got.otp, OTP40);
    ck_assert_uint_eq(got.nonce, 0x01020304);
    yk_data_free(&wire);

    /* A second seal of the same plaintext differs (random confounder). */
    memset(&req2, 0, sizeof(req2));
    ck_assert_int_eq(yk_padata_seal(ctx, &key, &b, &req2), 0);
    ck_assert_uint_eq(req2.ciphertext.length, req.ciphertext.length);
    ck_assert(memcmp(req2.ciphertext.data, req.ciphertext.data,
                     req.ciphertext.length) != 0);
    yk_request_clear(&req2, 1);

    /* Another key of the same enctype: a wrong password. */
    memset(&got, 0x5a, sizeof(got));
    before = got;
    ck_assert_int_eq(yk_padata_open(ctx, &other, &req, &got),
                     KRB5KRB_AP_ERR_BAD_INTEGRITY);
    ck_assert_mem_eq(&got, &before, sizeof(got));

    /* One flipped bit anywhere is tampering. */
    req.ciphertext.data[req.ciphertext.length / 2] ^= 0x01;
    ck_assert_int_eq(yk_padata_open(ctx, &key, &req, &got),
                     KRB5KRB_AP_ERR_BAD_INTEGRITY);
    req.ciphertext.data[req.ciphertext.length / 2] ^= 0x01;

    /* A ciphertext too short to hold anything. */
    req2 = req;
    req2.ciphertext.length = 1;
    ck_assert_int_eq(yk_padata_open(ctx, &key, &req2, &got),
                     KRB5KRB_AP_ERR_BAD_INTEGRITY);
    ck_assert_mem_eq(&got, &before, sizeof(got));

    /* Still opens after all that. */
    ck_assert_int_eq(yk_padata_open(ctx, &key, &req, &got), 0);
    ck_assert_str_eq(got.otp, OTP40);

    yk_request_clear(&req, 1);
    ck_assert_ptr_null(req.ciphertext.data);
    krb5_free_keyblock_contents(ctx, &key);
    krb5_free_keyblock_contents(ctx, &other);
    krb5_free_context(ctx);
}
END_TEST

START_TEST(test_open_enctype_mismatch)
{
    krb5_context ctx = NULL;
    krb5_keyblock k256, k128;
    yk_bound b, got, before;
    yk_request req;

    ck_assert_int_eq(krb5_init_context(&ctx), 0);
    ck_assert_int_eq(krb5_c_make_random_key(
                         ctx, ENCTYPE_AES256_CTS_HMAC_SHA1_96, &k256), 0);
    ck_assert_int_eq(krb5_c_make_random_key(
                         ctx, ENCTYPE_AES128_CTS_HMAC_SHA256_128, &k128), 0);
    make_bound(&b, 1, 2, 3, OTP64);
    memset(&req, 0, sizeof(req));
    ck_assert_int_eq(yk_padata_seal(ctx, &k256, &b, &req), 0);

    memset(&got, 0x5a, sizeof(got));
    before = got;
    ck_assert_int_eq(yk_padata_open(ctx, &k128, &req, &got),
                     KRB5_BAD_ENCTYPE);
    ck_assert_mem_eq(&got, &before, sizeof(got));
    /* A request lying about its enctype does not decrypt either. */
    req.enctype = ENCTYPE_AES128_CTS_HMAC_SHA256_128;
    ck_assert_int_eq(yk_padata_open(ctx, &k128, &req, &got),
                     KRB5KRB_AP_ERR_BAD_INTEGRITY);
    ck_assert_int_eq(yk_padata_open(ctx, &k256, &req, &got),
                     KRB5_BAD_ENCTYPE);
    /* A mode 2 request cannot be opened. */
    req.mode = YK_MODE_OTP;
    ck_assert_int_eq(yk_padata_open(ctx, &k128, &req, &got), EINVAL);

    yk_request_clear(&req, 1);
    krb5_free_keyblock_contents(ctx, &k256);
    krb5_free_keyblock_contents(ctx, &k128);
    krb5_free_context(ctx);
}
END_TEST

START_TEST(test_seal_refuses_invalid)
{
    krb5_context ctx = NULL;
    krb5_keyblock key;
    yk_bound b;
    yk_request req, before;

    ck_assert_int_eq(krb5_init_context(&ctx), 0);
    ck_assert_int_eq(krb5_c_make_random_key(
                         ctx, ENCTYPE_AES256_CTS_HMAC_SHA1_96, &key), 0);
    make_bound(&b, 1, 1000000, 3, OTP32);
    memset(&req, 0x5a, sizeof(req));
    before = req;
    ck_assert_int_eq(yk_padata_seal(ctx, &key, &b, &req), EINVAL);
    ck_assert_mem_eq(&req, &before, sizeof(req));
    krb5_free_keyblock_contents(ctx, &key);
    krb5_free_context(ctx);
}
END_TEST

START_TEST(test_free_and_clear)
{
    krb5_data out = { 0 };
    yk_request req;
    size_t i;

    yk_data_free(NULL);
    yk_data_free(&out);
    yk_request_clear(NULL, 1);
    yk_request_clear(NULL, 0);

    make_req2(&req, OTP64);
    yk_request_clear(&req, 0);
    for (i = 0; i < sizeof(req.otp); i++)
        ck_assert_int_eq(req.otp[i], 0);
    ck_assert_uint_eq(req.otp_len, 0);
    ck_assert_int_eq(req.mode, 0);
}
END_TEST

/* The suite: known answers, round trips, malformed input, sealing. */
static Suite *
padata_suite(void)
{
    Suite *s = suite_create("padata");
    TCase *tc;

    tc = tcase_create("known-answers");
    tcase_add_test(tc, test_hint_golden);
    tcase_add_test(tc, test_req2_golden);
    tcase_add_test(tc, test_req1_golden);
    tcase_add_test(tc, test_bound_golden);
    suite_add_tcase(s, tc);

    tc = tcase_create("round-trips");
    tcase_add_test(tc, test_hint_roundtrip);
    tcase_add_test(tc, test_hint_reserved_bits);
    tcase_add_test(tc, test_req1_roundtrip);
    tcase_add_test(tc, test_req2_roundtrip);
    tcase_add_test(tc, test_bound_roundtrip);
    suite_add_tcase(s, tc);

    tc = tcase_create("malformed");
    tcase_add_test(tc, test_empty);
    tcase_add_loop_test(tc, test_truncated, 0, T_COUNT);
    tcase_add_test(tc, test_trailing_byte);
    tcase_add_test(tc, test_wrong_magic);
    tcase_add_test(tc, test_wrong_version);
    tcase_add_test(tc, test_unknown_mode);
    tcase_add_test(tc, test_ctlen_zero);
    tcase_add_test(tc, test_ctlen_too_big);
    tcase_add_test(tc, test_ctlen_past_end);
    tcase_add_test(tc, test_otplen_out_of_range);
    tcase_add_test(tc, test_otp_not_printable);
    tcase_add_test(tc, test_usec_out_of_range);
    tcase_add_test(tc, test_encode_refuses_invalid);
    suite_add_tcase(s, tc);

    tc = tcase_create("seal");
    tcase_add_loop_test(tc, test_seal_open, 0,
                        sizeof(seal_etypes) / sizeof(seal_etypes[0]));
    tcase_add_test(tc, test_open_enctype_mismatch);
    tcase_add_test(tc, test_seal_refuses_invalid);
    tcase_add_test(tc, test_free_and_clear);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(padata_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
