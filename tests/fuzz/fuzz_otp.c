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
#include "secmem.h"

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

/* The private id of the seeds' key (yubico-tv-1). */
static const unsigned char fuzz_privid[YK_PRIVID_LEN] = {
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06
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
static int
check_decrypt(const yk_otp *otp, yk_token_fields *out)
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
        return 0;
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
    *out = f;
    return 1;
}

#define MODHEX "cbdefghijklnrtuv"

/* Whether two decrypted blocks have the same fields (the CRC too when
 * with_crc). */
static int
same_fields(const yk_token_fields *a, const yk_token_fields *b, int with_crc)
{
    return memcmp(a->private_id, b->private_id, YK_PRIVID_LEN) == 0 &&
        a->usage == b->usage && a->timestamp == b->timestamp &&
        a->session == b->session && a->random == b->random &&
        (!with_crc || a->crc == b->crc);
}

/* yk_otp_verify on s with the fixed key and privid: its verdict must be
 * the chain's (parse, decrypt, private id: parse_ret and the decrypted
 * fields, or NULL when decryption failed), and its outputs are set on
 * success only. */
static void
check_verify(const char *s, size_t len, const unsigned char *privid,
             krb5_error_code parse_ret, const yk_token_fields *want)
{
    yk_otp otp, untouched_otp, parsed;
    yk_token_fields f, untouched_f;
    krb5_error_code ret;

    memset(&otp, 0xee, sizeof(otp));
    memset(&f, 0xee, sizeof(f));
    untouched_otp = otp;
    untouched_f = f;
    ret = yk_otp_verify(s, len, fuzz_key, privid, &otp, &f);
    if (parse_ret != 0) {
        CHECK(ret == parse_ret);
    } else if (want == NULL) {
        CHECK(ret == YK_ERR_OTP_CRC);
    } else if (memcmp(want->private_id, privid, YK_PRIVID_LEN) != 0) {
        CHECK(ret == YK_ERR_OTP_PRIVID);
    } else {
        CHECK(ret == 0);
        CHECK(same_fields(&f, want, 1));
        /* The OTP given back is the parser's (checked in check_parse). */
        memset(&parsed, 0, sizeof(parsed));
        CHECK(yk_otp_parse(s, len, &parsed) == 0);
        CHECK(otp.pubid_len == parsed.pubid_len &&
              memcmp(otp.pubid, parsed.pubid, parsed.pubid_len) == 0 &&
              strcmp(otp.pubid_modhex, parsed.pubid_modhex) == 0 &&
              memcmp(otp.token, parsed.token, YK_TOKEN_LEN) == 0);
        return;
    }
    CHECK(memcmp(&otp, &untouched_otp, sizeof(otp)) == 0);
    CHECK(memcmp(&f, &untouched_f, sizeof(f)) == 0);
}

/* An OTP made from the input, as a YubiKey would: public id length and
 * bytes, then the 14 bytes of fields (the CRC is computed); verified with
 * its own private id (accepted, same fields), with one byte of it changed
 * (refused: private id) and with one token character changed (refused by
 * the CRC unless the residual happens to hold). */
static void
check_built(const uint8_t *data, size_t size)
{
    yk_token_fields f, got;
    unsigned char token[YK_TOKEN_LEN], pub[YK_PUBID_MAX], other[YK_PRIVID_LEN];
    char s[YK_OTP_MAX_LEN + 1];
    yk_otp otp;
    size_t publen, len, pos;
    krb5_error_code ret;

    if (size < 1 + 14 + 2)
        return;
    publen = data[0] % (YK_PUBID_MAX + 1);
    memset(&f, 0, sizeof(f));
    memcpy(f.private_id, data + 1, YK_PRIVID_LEN);
    f.usage = (uint16_t)(data[7] | (data[8] << 8));
    f.timestamp = (uint32_t)(data[9] | (data[10] << 8) | (data[11] << 16));
    f.session = data[12];
    f.random = (uint16_t)(data[13] | (data[14] << 8));
    memset(pub, 0, sizeof(pub));
    memcpy(pub, data + 17, size - 17 < publen ? size - 17 : publen);
    CHECK(yk_token_encrypt(&f, fuzz_key, token) == 0);
    yk_modhex_encode(pub, publen, s);
    yk_modhex_encode(token, YK_TOKEN_LEN, s + 2 * publen);
    len = 2 * publen + YK_TOKEN_MODHEX_LEN;

    /* The fields as decryption gives them back (the CRC filled in). */
    memset(&otp, 0, sizeof(otp));
    memcpy(otp.token, token, YK_TOKEN_LEN);
    CHECK(yk_otp_decrypt(&otp, fuzz_key, &got) == 0);
    CHECK(same_fields(&got, &f, 0));
    CHECK(yk_otp_check_privid(&got, f.private_id) == 0);
    check_verify(s, len, f.private_id, 0, &got);

    memcpy(other, f.private_id, YK_PRIVID_LEN);
    other[data[15] % YK_PRIVID_LEN] ^= (unsigned char)(data[16] | 1);
    CHECK(yk_otp_check_privid(&got, other) == YK_ERR_OTP_PRIVID);
    check_verify(s, len, other, 0, &got);

    /* One token character changed to the next letter of the alphabet. */
    pos = 2 * publen + data[16] % YK_TOKEN_MODHEX_LEN;
    s[pos] = MODHEX[(strchr(MODHEX, s[pos]) - MODHEX + 1) % 16];
    ret = yk_otp_verify(s, len, fuzz_key, f.private_id, NULL, NULL);
    /* Accepted only if the residual and the 48-bit private id both held
     * by chance (2^-64): an acceptance is a defect. */
    CHECK(ret == YK_ERR_OTP_CRC || ret == YK_ERR_OTP_PRIVID);
    yk_zap(&f, sizeof(f));
    yk_zap(&got, sizeof(got));
}

/* yk_otp_parse: the verdict must follow from length, parity and alphabet
 * (in that order); a parsed OTP re-encodes to the lower-cased input. */
static void
check_parse(const uint8_t *data, size_t size, int all_modhex)
{
    yk_otp otp;
    yk_token_fields f;
    char enc[YK_OTP_MAX_LEN + 1], low[YK_OTP_MAX_LEN + 1];
    krb5_error_code ret;
    size_t publen;
    int decrypted;

    ret = yk_otp_parse((const char *)data, size, &otp);
    if (size < YK_OTP_MIN_LEN || size > YK_OTP_MAX_LEN) {
        CHECK(ret == YK_ERR_OTP_LENGTH);
    } else if (size % 2 != 0) {
        CHECK(ret == YK_ERR_OTP_ODD);
    } else if (!all_modhex) {
        CHECK(ret == YK_ERR_MODHEX);
    } else {
        CHECK(ret == 0);
    }
    if (ret != 0) {
        check_verify((const char *)data, size, fuzz_privid, ret, NULL);
        return;
    }

    publen = size - YK_TOKEN_MODHEX_LEN;
    CHECK(otp.pubid_len == publen / 2);
    yk_modhex_encode(otp.pubid, otp.pubid_len, enc);
    yk_modhex_encode(otp.token, YK_TOKEN_LEN, enc + publen);
    lower(data, size, low);
    CHECK(memcmp(enc, low, size) == 0);
    CHECK(strlen(otp.pubid_modhex) == publen);
    CHECK(memcmp(otp.pubid_modhex, low, publen) == 0);

    decrypted = check_decrypt(&otp, &f);
    check_verify((const char *)data, size, fuzz_privid, 0,
                 decrypted ? &f : NULL);
    if (decrypted)
        check_verify((const char *)data, size, f.private_id, 0, &f);
    yk_zap(&f, sizeof(f));
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
    yk_token_fields f;
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
        if (check_decrypt(&raw, &f))
            yk_zap(&f, sizeof(f));
    }
    check_built(data, size);
    return 0;
}
