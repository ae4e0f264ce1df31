/* SPDX-License-Identifier: MIT */
/* otp.h: Yubico OTP (AES-128 mode): modhex, decryption, CRC, fields. */
#ifndef YK_OTP_H
#define YK_OTP_H

#include <stddef.h>
#include <stdint.h>
#include <krb5.h>

#include "modhex.h"   /* the lengths, the alphabet */

#define YK_CRC_RESIDUAL 0xf0b8     /* CRC-16 over a valid 16-byte token */
#define YK_USAGE_MAX 0x7fff        /* the device's usage counter stops here */
#define YK_USAGE_TRIGGER_FLAG 0x8000 /* bit 15: keyboard-triggered OTP */

/* Initialise libgcrypt once (thread-safe, harmless when the host program
 * already did): version check, no secure-memory warnings.  Every entry
 * point of otp.c and keywrap.c calls it; callers may too. */
krb5_error_code yk_crypto_init(void);

/* A parsed (still encrypted) OTP. */
typedef struct {
    unsigned char pubid[YK_PUBID_MAX];
    size_t pubid_len;
    char pubid_modhex[YK_PUBID_MODHEX_MAX + 1];  /* canonical lower case */
    unsigned char token[YK_TOKEN_LEN];
} yk_otp;

/* The fields of a decrypted token; holds the private id: wipe after use. */
typedef struct {
    unsigned char private_id[YK_PRIVID_LEN];
    uint16_t usage;         /* raw, bit 15 included */
    uint32_t timestamp;     /* 24 bits */
    uint8_t session;
    uint16_t random;
    uint16_t crc;
} yk_token_fields;

/* Decode modhex (upper case folded) of len characters into out (outsize
 * bytes): len must be even and len/2 <= outsize. Sets *outlen. */
krb5_error_code yk_modhex_decode(const char *in, size_t len,
                                 unsigned char *out, size_t outsize,
                                 size_t *outlen);

/* Encode len bytes as lower-case modhex into out, which must hold
 * 2*len+1 bytes (NUL-terminated). */
void yk_modhex_encode(const unsigned char *in, size_t len, char *out);

/* Decode hex (either case) of exactly 2*outlen characters into out. */
krb5_error_code yk_hex_decode(const char *in, size_t len,
                              unsigned char *out, size_t outlen);

/* Encode len bytes as lower-case hex into out (2*len+1 bytes). */
void yk_hex_encode(const unsigned char *in, size_t len, char *out);

/* Parse an OTP string of len characters (32..64, even): split the public
 * id (0..16 bytes, the leading characters) from the 16-byte token. */
krb5_error_code yk_otp_parse(const char *s, size_t len, yk_otp *out);

/* Decrypt otp's token with key (AES-128-ECB), check the CRC residual and
 * decode the fields (little-endian).  Fields are set only on success. */
krb5_error_code yk_otp_decrypt(const yk_otp *otp,
                               const unsigned char key[YK_AES_KEY_LEN],
                               yk_token_fields *fields_out);

/* Compare the private id in constant time: 0 if equal, YK_ERR_OTP_PRIVID
 * otherwise. */
krb5_error_code yk_otp_check_privid(const yk_token_fields *f,
                                    const unsigned char
                                    privid[YK_PRIVID_LEN]);

/* The comparison value ((usage & 0x7fff) << 8) | session. */
uint32_t yk_otp_counter(const yk_token_fields *f);

/* Parse, decrypt and check the private id in one call. */
krb5_error_code yk_otp_verify(const char *s, size_t len,
                              const unsigned char key[YK_AES_KEY_LEN],
                              const unsigned char privid[YK_PRIVID_LEN],
                              yk_otp *otp_out, yk_token_fields *fields_out);

/* CRC-16/X-25 core (reflected 0x8408, init 0xffff, no final complement)
 * over n bytes; a valid token gives YK_CRC_RESIDUAL over all 16 bytes. */
uint16_t yk_crc16(const unsigned char *p, size_t n);

/* Build a token block from fields (the CRC is computed, f->crc ignored)
 * and encrypt it with key: what a YubiKey does. Used by the emulator. */
krb5_error_code yk_token_encrypt(const yk_token_fields *f,
                                 const unsigned char key[YK_AES_KEY_LEN],
                                 unsigned char out[YK_TOKEN_LEN]);

#endif /* YK_OTP_H */
