/* SPDX-License-Identifier: MIT */
/* otp.c: Yubico OTP (AES-128 mode): modhex, decryption, CRC, fields. */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <gcrypt.h>

#include "errors.h"
#include "otp.h"
#include "secmem.h"

/*
 * An OTP is the public id (0..16 bytes) followed by the 16-byte token, both
 * in modhex: the alphabet "cbdefghijklnrtuv" stands for the hex digits
 * 0..f, most significant nibble first.  The token is one AES-128-ECB block;
 * decrypted, it holds these little-endian fields:
 *
 *   offset  size  field
 *        0     6  private id
 *        6     2  usage counter (bit 15: triggered from the keyboard)
 *        8     3  timestamp (8 Hz, wraps after 24 bits)
 *       11     1  session counter
 *       12     2  random
 *       14     2  CRC: ~CRC-16/X-25 of bytes 0..13
 *
 * Over all 16 bytes of a valid block the CRC-16 leaves YK_CRC_RESIDUAL.
 */
#define YK_OFF_PRIVID 0
#define YK_OFF_USAGE 6
#define YK_OFF_TIMESTAMP 8
#define YK_OFF_SESSION 11
#define YK_OFF_RANDOM 12
#define YK_OFF_CRC 14
#define YK_TIMESTAMP_MASK 0xffffffU

#define YK_CRC_INIT 0xffff
#define YK_CRC_POLY 0x8408

/* Size of the locked secure-memory pool when we initialise libgcrypt. */
#define YK_SECMEM_POOL 32768

static const char modhex_alphabet[] = "cbdefghijklnrtuv";

static pthread_once_t crypto_once = PTHREAD_ONCE_INIT;
static krb5_error_code crypto_status = YK_ERR_CRYPTO;
static int crypto_own_secmem;   /* we set up libgcrypt's secure memory */

/* The one-time body of yk_crypto_init; records its verdict in
 * crypto_status.  A host program that already started initialising
 * libgcrypt keeps its settings: only the version is checked, and our key
 * schedules stay out of its secure memory, which might not be set up. */
static void
crypto_init_once(void)
{
    if (gcry_control(GCRYCTL_ANY_INITIALIZATION_P)) {
        crypto_status = gcry_check_version(GCRYPT_VERSION) != NULL ?
            0 : YK_ERR_CRYPTO;
        return;
    }
    if (gcry_check_version(GCRYPT_VERSION) == NULL) {
        crypto_status = YK_ERR_CRYPTO;
        return;
    }

    /* Locked memory for key schedules; no warning on stderr when mlock is
     * not permitted, and never touch the host's user ids. */
    gcry_control(GCRYCTL_DISABLE_SECMEM_WARN);
    gcry_control(GCRYCTL_DISABLE_PRIV_DROP);
#if GCRYPT_VERSION_NUMBER >= 0x010802
    gcry_control(GCRYCTL_AUTO_EXPAND_SECMEM, (unsigned int)YK_SECMEM_POOL);
#endif
    gcry_control(GCRYCTL_INIT_SECMEM, YK_SECMEM_POOL, 0);
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    if (!gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P)) {
        crypto_status = YK_ERR_CRYPTO;
        return;
    }
    crypto_own_secmem = 1;
    crypto_status = 0;
}

/* Initialise libgcrypt once per process, thread-safe; later calls return
 * the first call's verdict.  0 or YK_ERR_CRYPTO. */
krb5_error_code
yk_crypto_init(void)
{
    if (pthread_once(&crypto_once, crypto_init_once) != 0)
        return YK_ERR_CRYPTO;
    return crypto_status;
}

/* Open an AES-128-ECB handle keyed with key into *hd_out.  The handle (and
 * so the key schedule) lives in secure memory when we set it up and the
 * pool allows it; gcry_cipher_close wipes it either way. */
static krb5_error_code
aes_open(const unsigned char key[YK_AES_KEY_LEN], gcry_cipher_hd_t *hd_out)
{
    gcry_cipher_hd_t hd = NULL;
    gcry_error_t gerr;
    krb5_error_code ret;

    ret = yk_crypto_init();
    if (ret)
        goto cleanup;

    gerr = gcry_cipher_open(&hd, GCRY_CIPHER_AES128, GCRY_CIPHER_MODE_ECB,
                            crypto_own_secmem ? GCRY_CIPHER_SECURE : 0);
    if (crypto_own_secmem && gcry_err_code(gerr) == GPG_ERR_ENOMEM) {
        /* Secure memory refused (e.g. unlocked in FIPS mode): plain
         * memory, still wiped on close. */
        hd = NULL;
        gerr = gcry_cipher_open(&hd, GCRY_CIPHER_AES128,
                                GCRY_CIPHER_MODE_ECB, 0);
    }
    if (gerr) {
        hd = NULL;
        ret = YK_ERR_CRYPTO;
        goto cleanup;
    }
    if (gcry_cipher_setkey(hd, key, YK_AES_KEY_LEN)) {
        ret = YK_ERR_CRYPTO;
        goto cleanup;
    }
    *hd_out = hd;
    hd = NULL;

cleanup:
    if (hd != NULL)
        gcry_cipher_close(hd);
    return ret;
}

/* Encrypt (encrypt != 0) or decrypt the single block in with key into out.
 * out is written only on success. */
static krb5_error_code
aes_block(const unsigned char key[YK_AES_KEY_LEN],
          const unsigned char in[YK_TOKEN_LEN], int encrypt,
          unsigned char out[YK_TOKEN_LEN])
{
    gcry_cipher_hd_t hd = NULL;
    unsigned char block[YK_TOKEN_LEN];
    gcry_error_t gerr;
    krb5_error_code ret;

    ret = aes_open(key, &hd);
    if (ret)
        goto cleanup;
    if (encrypt)
        gerr = gcry_cipher_encrypt(hd, block, sizeof(block), in,
                                   YK_TOKEN_LEN);
    else
        gerr = gcry_cipher_decrypt(hd, block, sizeof(block), in,
                                   YK_TOKEN_LEN);
    if (gerr) {
        ret = YK_ERR_CRYPTO;
        goto cleanup;
    }
    memcpy(out, block, YK_TOKEN_LEN);

cleanup:
    if (hd != NULL)
        gcry_cipher_close(hd);
    yk_zap(block, sizeof(block));
    return ret;
}

/* The value of modhex character c (upper case folded), or -1. */
static int
modhex_value(unsigned char c)
{
    const char *p;

    if (c >= 'A' && c <= 'Z')
        c = (unsigned char)(c - 'A' + 'a');
    if (c == '\0')
        return -1;
    p = strchr(modhex_alphabet, c);
    return p != NULL ? (int)(p - modhex_alphabet) : -1;
}

/* The value of hex digit c (either case), or -1.  No table and no branch
 * on the value: hex strings often carry keys. */
static int
hex_value(unsigned char c)
{
    int digit = (int)c - '0';
    int alpha = (int)(c | 0x20) - 'a' + 10;
    int is_digit = (digit >= 0) & (digit <= 9);
    int is_alpha = (alpha >= 10) & (alpha <= 15);

    return (digit & -is_digit) | (alpha & -is_alpha) |
        -(1 - (is_digit | is_alpha));
}

/* The lower-case hex digit for nibble n (0..15), without a branch. */
static char
hex_digit(unsigned int n)
{
    /* (9 - n) wraps for n > 9, setting the bits that add 'a' - '0' - 10. */
    return (char)('0' + n + (((9U - n) >> 8) & ('a' - '0' - 10)));
}

/* Decode len modhex characters at in (upper case folded) into out, which
 * holds outsize bytes; *outlen gets len / 2.  YK_ERR_OTP_ODD for an odd
 * len, EOVERFLOW when the result would not fit, YK_ERR_MODHEX for any
 * other character (out is wiped then).  in may be NULL when len is 0. */
krb5_error_code
yk_modhex_decode(const char *in, size_t len, unsigned char *out,
                 size_t outsize, size_t *outlen)
{
    const unsigned char *s = (const unsigned char *)in;
    size_t i;
    int hi, lo;

    if (len % 2 != 0)
        return YK_ERR_OTP_ODD;
    if (len / 2 > outsize)
        return EOVERFLOW;
    for (i = 0; i < len / 2; i++) {
        hi = modhex_value(s[2 * i]);
        lo = modhex_value(s[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            yk_zap(out, i);
            return YK_ERR_MODHEX;
        }
        out[i] = (unsigned char)((hi << 4) | lo);
    }
    *outlen = len / 2;
    return 0;
}

/* Encode len bytes at in as lower-case modhex into out (2 * len + 1
 * bytes, NUL-terminated). */
void
yk_modhex_encode(const unsigned char *in, size_t len, char *out)
{
    size_t i;

    for (i = 0; i < len; i++) {
        out[2 * i] = modhex_alphabet[in[i] >> 4];
        out[2 * i + 1] = modhex_alphabet[in[i] & 0x0f];
    }
    out[2 * len] = '\0';
}

/* Decode exactly 2 * outlen hex characters (either case) at in into out.
 * YK_ERR_HEX for a different length or a non-hex character (out is wiped
 * then). */
krb5_error_code
yk_hex_decode(const char *in, size_t len, unsigned char *out, size_t outlen)
{
    const unsigned char *s = (const unsigned char *)in;
    size_t i;
    int hi, lo;

    if (len % 2 != 0 || len / 2 != outlen)
        return YK_ERR_HEX;
    for (i = 0; i < outlen; i++) {
        hi = hex_value(s[2 * i]);
        lo = hex_value(s[2 * i + 1]);
        if ((hi | lo) < 0) {
            yk_zap(out, outlen);
            return YK_ERR_HEX;
        }
        out[i] = (unsigned char)((hi << 4) | lo);
    }
    return 0;
}

/* Encode len bytes at in as lower-case hex into out (2 * len + 1 bytes,
 * NUL-terminated). */
void
yk_hex_encode(const unsigned char *in, size_t len, char *out)
{
    size_t i;

    for (i = 0; i < len; i++) {
        out[2 * i] = hex_digit(in[i] >> 4);
        out[2 * i + 1] = hex_digit(in[i] & 0x0fU);
    }
    out[2 * len] = '\0';
}

/* Parse the OTP s of len characters into *out: the last 32 characters are
 * the token, the leading ones (0..32) the public id.  Checked in this
 * order: YK_ERR_OTP_LENGTH (outside 32..64), YK_ERR_OTP_ODD, YK_ERR_MODHEX.
 * *out is written only on success. */
krb5_error_code
yk_otp_parse(const char *s, size_t len, yk_otp *out)
{
    yk_otp otp;
    size_t publen, toklen;
    krb5_error_code ret;

    memset(&otp, 0, sizeof(otp));
    if (len < YK_OTP_MIN_LEN || len > YK_OTP_MAX_LEN) {
        ret = YK_ERR_OTP_LENGTH;
        goto cleanup;
    }
    if (len % 2 != 0) {
        ret = YK_ERR_OTP_ODD;
        goto cleanup;
    }
    if (s == NULL) {
        ret = EINVAL;
        goto cleanup;
    }

    publen = len - YK_TOKEN_MODHEX_LEN;
    ret = yk_modhex_decode(s, publen, otp.pubid, sizeof(otp.pubid),
                           &otp.pubid_len);
    if (ret)
        goto cleanup;
    ret = yk_modhex_decode(s + publen, YK_TOKEN_MODHEX_LEN, otp.token,
                           sizeof(otp.token), &toklen);
    if (ret)
        goto cleanup;
    yk_modhex_encode(otp.pubid, otp.pubid_len, otp.pubid_modhex);
    *out = otp;

cleanup:
    yk_zap(&otp, sizeof(otp));
    return ret;
}

/* Decode the fields of the decrypted block b (little-endian, no struct
 * overlay) into *f. */
static void
token_fields_get(const unsigned char b[YK_TOKEN_LEN], yk_token_fields *f)
{
    memcpy(f->private_id, b + YK_OFF_PRIVID, YK_PRIVID_LEN);
    f->usage = (uint16_t)(b[YK_OFF_USAGE] |
                          ((unsigned int)b[YK_OFF_USAGE + 1] << 8));
    f->timestamp = (uint32_t)b[YK_OFF_TIMESTAMP] |
        ((uint32_t)b[YK_OFF_TIMESTAMP + 1] << 8) |
        ((uint32_t)b[YK_OFF_TIMESTAMP + 2] << 16);
    f->session = b[YK_OFF_SESSION];
    f->random = (uint16_t)(b[YK_OFF_RANDOM] |
                           ((unsigned int)b[YK_OFF_RANDOM + 1] << 8));
    f->crc = (uint16_t)(b[YK_OFF_CRC] |
                        ((unsigned int)b[YK_OFF_CRC + 1] << 8));
}

/* Store a 16-bit value little-endian at p. */
static void
put_le16(unsigned char *p, unsigned int v)
{
    p[0] = (unsigned char)(v & 0xff);
    p[1] = (unsigned char)((v >> 8) & 0xff);
}

/* Decrypt otp's token with key, check the CRC residual (YK_ERR_OTP_CRC:
 * wrong key or corrupt OTP) and decode the fields into *fields_out, which
 * is written only on success.  The plaintext is wiped on every path. */
krb5_error_code
yk_otp_decrypt(const yk_otp *otp, const unsigned char key[YK_AES_KEY_LEN],
               yk_token_fields *fields_out)
{
    unsigned char block[YK_TOKEN_LEN];
    yk_token_fields f;
    krb5_error_code ret;

    memset(block, 0, sizeof(block));
    memset(&f, 0, sizeof(f));
    ret = aes_block(key, otp->token, 0, block);
    if (ret)
        goto cleanup;
    if (yk_crc16(block, sizeof(block)) != YK_CRC_RESIDUAL) {
        ret = YK_ERR_OTP_CRC;
        goto cleanup;
    }
    token_fields_get(block, &f);
    *fields_out = f;

cleanup:
    yk_zap(block, sizeof(block));
    yk_zap(&f, sizeof(f));
    return ret;
}

/* Compare f's private id with privid in constant time: 0 if equal,
 * YK_ERR_OTP_PRIVID otherwise. */
krb5_error_code
yk_otp_check_privid(const yk_token_fields *f,
                    const unsigned char privid[YK_PRIVID_LEN])
{
    return yk_memeq(f->private_id, privid, YK_PRIVID_LEN) ? 0 :
        YK_ERR_OTP_PRIVID;
}

/* The value counters are compared by: the 15-bit usage counter (the
 * keyboard-trigger bit masked off) above the 8-bit session counter. */
uint32_t
yk_otp_counter(const yk_token_fields *f)
{
    return ((uint32_t)(f->usage & YK_USAGE_MAX) << 8) | f->session;
}

/* Parse s, decrypt it with key and check the private id against privid.
 * On success *otp_out and *fields_out (either may be NULL) get the parsed
 * OTP and its fields; on failure neither is written.  The fields are wiped
 * from the stack on every path. */
krb5_error_code
yk_otp_verify(const char *s, size_t len,
              const unsigned char key[YK_AES_KEY_LEN],
              const unsigned char privid[YK_PRIVID_LEN],
              yk_otp *otp_out, yk_token_fields *fields_out)
{
    yk_otp otp;
    yk_token_fields f;
    krb5_error_code ret;

    memset(&otp, 0, sizeof(otp));
    memset(&f, 0, sizeof(f));
    ret = yk_otp_parse(s, len, &otp);
    if (ret)
        goto cleanup;
    ret = yk_otp_decrypt(&otp, key, &f);
    if (ret)
        goto cleanup;
    ret = yk_otp_check_privid(&f, privid);
    if (ret)
        goto cleanup;
    if (otp_out != NULL)
        *otp_out = otp;
    if (fields_out != NULL)
        *fields_out = f;

cleanup:
    yk_zap(&otp, sizeof(otp));
    yk_zap(&f, sizeof(f));
    return ret;
}

/* CRC-16/X-25 core over n bytes at p: reflected polynomial 0x8408, initial
 * value 0xffff, no final complement.  Branch-free in the data, since it
 * runs over decrypted tokens. */
uint16_t
yk_crc16(const unsigned char *p, size_t n)
{
    unsigned int crc = YK_CRC_INIT;
    size_t i;
    int bit;

    for (i = 0; i < n; i++) {
        crc ^= p[i];
        for (bit = 0; bit < 8; bit++)
            crc = (crc >> 1) ^ (YK_CRC_POLY & (0U - (crc & 1U)));
    }
    return (uint16_t)crc;
}

/* Build the token block from *f as a YubiKey does (the CRC is computed,
 * f->crc ignored; the timestamp keeps its low 24 bits) and encrypt it with
 * key into out, which is written only on success. */
krb5_error_code
yk_token_encrypt(const yk_token_fields *f,
                 const unsigned char key[YK_AES_KEY_LEN],
                 unsigned char out[YK_TOKEN_LEN])
{
    unsigned char block[YK_TOKEN_LEN];
    uint32_t ts = f->timestamp & YK_TIMESTAMP_MASK;
    krb5_error_code ret;

    memcpy(block + YK_OFF_PRIVID, f->private_id, YK_PRIVID_LEN);
    put_le16(block + YK_OFF_USAGE, f->usage);
    block[YK_OFF_TIMESTAMP] = (unsigned char)(ts & 0xff);
    block[YK_OFF_TIMESTAMP + 1] = (unsigned char)((ts >> 8) & 0xff);
    block[YK_OFF_TIMESTAMP + 2] = (unsigned char)((ts >> 16) & 0xff);
    block[YK_OFF_SESSION] = f->session;
    put_le16(block + YK_OFF_RANDOM, f->random);
    put_le16(block + YK_OFF_CRC,
             (unsigned int)(~yk_crc16(block, YK_OFF_CRC) & 0xffff));

    ret = aes_block(key, block, 1, out);

    yk_zap(block, sizeof(block));
    return ret;
}
