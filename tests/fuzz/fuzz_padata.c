/* SPDX-License-Identifier: MIT */
/* fuzz_padata.c: libFuzzer target for the padata decoders, and mode 1's
 * sealing and opening under fixed keys. */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <krb5.h>

#include "errors.h"
#include "padata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort unless out holds exactly the n bytes at p. */
static void
expect_same(const krb5_data *out, const uint8_t *p, size_t n)
{
    if (out->length != n || memcmp(out->data, p, n) != 0)
        abort();
}

/* Abort unless ret is success or one of the decoders' documented errors. */
static void
expect_known_error(krb5_error_code ret)
{
    if (ret != 0 && ret != YK_ERR_PADATA_FORMAT &&
        ret != YK_ERR_PADATA_VERSION)
        abort();
}

/* Abort unless otp holds exactly len printable characters (32..64) and a
 * terminating NUL. */
static void
check_otp(const char *otp, size_t len)
{
    size_t i;

    if (len < 32 || len > 64 || otp[len] != '\0')
        abort();
    for (i = 0; i < len; i++) {
        if ((unsigned char)otp[i] < 0x20 || (unsigned char)otp[i] > 0x7e)
            abort();
    }
}

/* The hint: a success re-encodes to the input, but for reserved flag
 * bits, which the decoder drops. */
static void
fuzz_hint(const krb5_data *in, const uint8_t *data, size_t size)
{
    krb5_error_code ret;
    krb5_data out = { 0 };
    uint8_t flags = 0xee;

    ret = yk_padata_decode_hint(in, &flags);
    expect_known_error(ret);
    if (ret) {
        if (flags != 0xee)
            abort();
        return;
    }
    if (size != 4 || (flags & ~(YK_HINT_PASSWORD_BOUND |
                                YK_HINT_OTP_ALONE_OK)) != 0)
        abort();
    if (yk_padata_encode_hint(flags, &out) != 0 || out.length != 4)
        abort();
    if (memcmp(out.data, data, 3) != 0 ||
        (uint8_t)out.data[3] != (data[3] & 0x03))
        abort();
    yk_data_free(&out);
}

/* A krb5 context and two fixed aes256-cts keys: the one sealing and
 * another (a wrong password's). */
static krb5_context fuzz_ctx;
static unsigned char key_bytes[2][32];
static krb5_keyblock fuzz_keys[2];

static void
fuzz_keys_init(void)
{
    int k, i;

    if (fuzz_ctx != NULL)
        return;
    setenv("KRB5_CONFIG", "/dev/null", 1);
    if (krb5_init_context(&fuzz_ctx) != 0)
        abort();
    for (k = 0; k < 2; k++) {
        for (i = 0; i < 32; i++)
            key_bytes[k][i] = (unsigned char)(i * 7 + k * 101 + 1);
        fuzz_keys[k].magic = KV5M_KEYBLOCK;
        fuzz_keys[k].enctype = ENCTYPE_AES256_CTS_HMAC_SHA1_96;
        fuzz_keys[k].length = 32;
        fuzz_keys[k].contents = key_bytes[k];
    }
}

/* Mode 1 sealing of a decoded plaintext: opened with the same key it is
 * the same plaintext; with the other key, or under another enctype, it is
 * refused. */
static void
fuzz_seal_open(const yk_bound *b)
{
    yk_request req;
    yk_bound got;
    krb5_error_code ret;

    memset(&req, 0, sizeof(req));
    if (yk_padata_seal(fuzz_ctx, &fuzz_keys[0], b, &req) != 0 ||
        req.mode != YK_MODE_2FA || req.enctype != fuzz_keys[0].enctype)
        abort();
    memset(&got, 0xee, sizeof(got));
    if (yk_padata_open(fuzz_ctx, &fuzz_keys[0], &req, &got) != 0 ||
        got.sec != b->sec || got.usec != b->usec || got.nonce != b->nonce ||
        got.otp_len != b->otp_len ||
        memcmp(got.otp, b->otp, b->otp_len + 1) != 0)
        abort();
    ret = yk_padata_open(fuzz_ctx, &fuzz_keys[1], &req, &got);
    if (ret != KRB5KRB_AP_ERR_BAD_INTEGRITY)
        abort();
    req.enctype = ENCTYPE_AES128_CTS_HMAC_SHA1_96;
    if (yk_padata_open(fuzz_ctx, &fuzz_keys[0], &req, &got) !=
        KRB5_BAD_ENCTYPE)
        abort();
    yk_request_clear(&req, 1);
}

/* Mode 1 opening of a request's ciphertext from the input: no input can
 * forge the integrity check of the key it never saw. */
static void
fuzz_open(const yk_request *req)
{
    yk_bound b, untouched;
    krb5_error_code ret;

    memset(&b, 0xee, sizeof(b));
    memset(&untouched, 0xee, sizeof(untouched));
    ret = yk_padata_open(fuzz_ctx, &fuzz_keys[0], req, &b);
    if (req->enctype != fuzz_keys[0].enctype) {
        if (ret != KRB5_BAD_ENCTYPE)
            abort();
    } else if (ret != KRB5KRB_AP_ERR_BAD_INTEGRITY) {
        abort();
    }
    if (memcmp(&b, &untouched, sizeof(b)) != 0)
        abort();
}

/* The request: a success lies within the input and re-encodes to it. */
static void
fuzz_request(const krb5_data *in, const uint8_t *data, size_t size)
{
    krb5_error_code ret;
    krb5_data out = { 0 };
    yk_request req;
    const char *base = (const char *)data;

    memset(&req, 0, sizeof(req));
    ret = yk_padata_decode_request(in, &req);
    expect_known_error(ret);
    if (ret)
        return;
    if (req.mode == YK_MODE_2FA) {
        /* The borrowed ciphertext must end exactly at the input's end. */
        if (req.ciphertext.length < 1 || req.ciphertext.length > 2048 ||
            req.ciphertext.data != base + 10 ||
            10 + (size_t)req.ciphertext.length != size)
            abort();
    } else if (req.mode == YK_MODE_OTP) {
        check_otp(req.otp, req.otp_len);
        if (req.ciphertext.data != NULL || 5 + req.otp_len != size)
            abort();
    } else {
        abort();
    }
    if (yk_padata_encode_request(&req, &out) != 0)
        abort();
    expect_same(&out, data, size);
    yk_data_free(&out);
    if (req.mode == YK_MODE_2FA)
        fuzz_open(&req);
    yk_request_clear(&req, 0);
}

/* The mode 1 plaintext: a success re-encodes to the input. */
static void
fuzz_bound(const krb5_data *in, const uint8_t *data, size_t size)
{
    krb5_error_code ret;
    krb5_data out = { 0 };
    yk_bound b;

    memset(&b, 0, sizeof(b));
    ret = yk_padata_decode_bound(in, &b);
    expect_known_error(ret);
    if (ret)
        return;
    check_otp(b.otp, b.otp_len);
    if (b.usec >= 1000000 || 16 + b.otp_len != size)
        abort();
    if (yk_padata_encode_bound(&b, &out) != 0)
        abort();
    expect_same(&out, data, size);
    yk_data_free(&out);
    fuzz_seal_open(&b);
}

/* Feed the same bytes to all three decoders (and the sealing and opening
 * of mode 1 to what they decode). */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    krb5_data in;

    if (size > 0xffffffffU)
        return 0;
    in.magic = KV5M_DATA;
    in.length = (unsigned int)size;
    in.data = (char *)data;
    fuzz_keys_init();
    fuzz_hint(&in, data, size);
    fuzz_request(&in, data, size);
    fuzz_bound(&in, data, size);
    return 0;
}
