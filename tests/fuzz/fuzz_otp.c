/* SPDX-License-Identifier: MIT */
/* fuzz_otp.c: libFuzzer target for OTP parsing, the codecs and decryption. */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gcrypt.h>

#include "errors.h"
#include "otp.h"

#define FUZZ_DECODE_MAX 40      /* output bytes offered to the decoders */

/* Abort with a message when an invariant does not hold. */
#define CHECK(cond)                                                     \
    do {                                                                \
        if (!(cond)) {                                                  \
            fprintf(stderr, "fuzz_otp: invariant failed: %s (line %d)\n", \
                    #cond, __LINE__);                                   \
            abort();                                                    \
        }                                                               \
    } while (0)

/* The key of the seeds (yubico-tv-1 in tests/data/otp-vectors.tsv). */
static const unsigned char fuzz_key[YK_AES_KEY_LEN] = {
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
    0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f
};

/* Our own idea of the alphabets, independent of otp.c. */
static int
is_modhex(uint8_t c)
{
    return c != 0 && memchr("cbdefghijklnrtuvCBDEFGHIJKLNRTUV", c, 32)
        != NULL;
}

static int
is_hex(uint8_t c)
{
    return c != 0 && memchr("0123456789abcdefABCDEF", c, 22) != NULL;
}

/* ASCII lower case of n bytes into out. */
static void
lower(const uint8_t *in, size_t n, char *out)
{
    size_t i;

    for (i = 0; i < n; i++)
        out[i] = (char)((in[i] >= 'A' && in[i] <= 'Z') ? in[i] + 32 : in[i]);
}

/* Textbook CRC-16/X-25 core, to judge yk_otp_decrypt's verdict. */
static uint16_t
ref_crc16(const unsigned char *p, size_t n)
{
    uint16_t crc = 0xffff;
    size_t i;
    int b;

    for (i = 0; i < n; i++) {
        crc ^= p[i];
        for (b = 0; b < 8; b++)
            crc = (crc & 1) ? (uint16_t)((crc >> 1) ^ 0x8408) :
                (uint16_t)(crc >> 1);
    }
    return crc;
}

/* Decrypt otp with the fixed key both through otp.c and directly through
 * libgcrypt: success must mean the CRC residual holds, the fields must be
 * the block's little-endian bytes, and re-encryption must give the token
 * back; failure must mean the residual does not hold. */
static void
check_decrypt(const yk_otp *otp)
{
    gcry_cipher_hd_t hd = NULL;
    unsigned char plain[YK_TOKEN_LEN], again[YK_TOKEN_LEN];
    yk_token_fields f;
    krb5_error_code ret;
    int residual_ok;

    CHECK(gcry_cipher_open(&hd, GCRY_CIPHER_AES128, GCRY_CIPHER_MODE_ECB,
                           0) == 0);
    CHECK(gcry_cipher_setkey(hd, fuzz_key, sizeof(fuzz_key)) == 0);
    CHECK(gcry_cipher_decrypt(hd, plain, sizeof(plain), otp->token,
                              YK_TOKEN_LEN) == 0);
    gcry_cipher_close(hd);
    residual_ok = ref_crc16(plain, sizeof(plain)) == YK_CRC_RESIDUAL;

    memset(&f, 0xee, sizeof(f));
    ret = yk_otp_decrypt(otp, fuzz_key, &f);
    if (ret != 0) {
        CHECK(ret == YK_ERR_OTP_CRC);
        CHECK(!residual_ok);
        return;
    }
    CHECK(residual_ok);
    CHECK(memcmp(f.private_id, plain, YK_PRIVID_LEN) == 0);
    CHECK(f.usage == (plain[6] | (plain[7] << 8)));
    CHECK(f.timestamp == (uint32_t)(plain[8] | (plain[9] << 8) |
                                    (plain[10] << 16)));
    CHECK(f.session == plain[11]);
    CHECK(f.random == (plain[12] | (plain[13] << 8)));
    CHECK(f.crc == (plain[14] | (plain[15] << 8)));
    CHECK(yk_otp_counter(&f) ==
          (((uint32_t)(f.usage & 0x7fff) << 8) | f.session));
    CHECK(yk_token_encrypt(&f, fuzz_key, again) == 0);
    CHECK(memcmp(again, otp->token, YK_TOKEN_LEN) == 0);
}

/* yk_otp_parse: the verdict must follow from length, parity and alphabet
 * (in that order); a parsed OTP re-encodes to the lower-cased input. */
static void
check_parse(const uint8_t *data, size_t size, int all_modhex)
{
    yk_otp otp;
    char enc[YK_OTP_MAX_LEN + 1], low[YK_OTP_MAX_LEN + 1];
    krb5_error_code ret;
    size_t publen;

    ret = yk_otp_parse((const char *)data, size, &otp);
    if (size < YK_OTP_MIN_LEN || size > YK_OTP_MAX_LEN) {
        CHECK(ret == YK_ERR_OTP_LENGTH);
        return;
    }
    if (size % 2 != 0) {
        CHECK(ret == YK_ERR_OTP_ODD);
        return;
    }
    if (!all_modhex) {
        CHECK(ret == YK_ERR_MODHEX);
        return;
    }
    CHECK(ret == 0);

    publen = size - YK_TOKEN_MODHEX_LEN;
    CHECK(otp.pubid_len == publen / 2);
    yk_modhex_encode(otp.pubid, otp.pubid_len, enc);
    yk_modhex_encode(otp.token, YK_TOKEN_LEN, enc + publen);
    lower(data, size, low);
    CHECK(memcmp(enc, low, size) == 0);
    CHECK(strlen(otp.pubid_modhex) == publen);
    CHECK(memcmp(otp.pubid_modhex, low, publen) == 0);

    check_decrypt(&otp);
}

/* yk_modhex_decode and yk_hex_decode on the whole input: verdicts follow
 * from parity, room and alphabet; decoded data re-encodes to the input. */
static void
check_codecs(const uint8_t *data, size_t size, int all_modhex, int all_hex)
{
    unsigned char out[FUZZ_DECODE_MAX];
    char enc[2 * FUZZ_DECODE_MAX + 1], low[2 * FUZZ_DECODE_MAX];
    size_t outlen = 0;
    krb5_error_code ret;

    ret = yk_modhex_decode((const char *)data, size, out, sizeof(out),
                           &outlen);
    if (size % 2 != 0) {
        CHECK(ret == YK_ERR_OTP_ODD);
    } else if (size / 2 > sizeof(out)) {
        CHECK(ret == EOVERFLOW);
    } else if (!all_modhex) {
        CHECK(ret == YK_ERR_MODHEX);
    } else {
        CHECK(ret == 0 && outlen == size / 2);
        yk_modhex_encode(out, outlen, enc);
        lower(data, size, low);
        CHECK(strlen(enc) == size && memcmp(enc, low, size) == 0);
    }

    if (size / 2 > sizeof(out))
        return;
    ret = yk_hex_decode((const char *)data, size, out, size / 2);
    if (size % 2 != 0 || !all_hex) {
        CHECK(ret == YK_ERR_HEX);
    } else {
        CHECK(ret == 0);
        yk_hex_encode(out, size / 2, enc);
        lower(data, size, low);
        CHECK(strlen(enc) == size && memcmp(enc, low, size) == 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One input: parse it as an OTP, decode it with both codecs, and decrypt
 * its first 16 bytes as a raw token. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    yk_otp raw;
    int all_modhex = 1, all_hex = 1;
    size_t i;

    CHECK(yk_crypto_init() == 0);
    for (i = 0; i < size; i++) {
        all_modhex &= is_modhex(data[i]);
        all_hex &= is_hex(data[i]);
    }

    check_parse(data, size, all_modhex);
    check_codecs(data, size, all_modhex, all_hex);

    if (size >= YK_TOKEN_LEN) {
        memset(&raw, 0, sizeof(raw));
        memcpy(raw.token, data, YK_TOKEN_LEN);
        check_decrypt(&raw);
    }
    return 0;
}
