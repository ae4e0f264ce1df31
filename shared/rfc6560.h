/* SPDX-License-Identifier: MIT */
/* rfc6560.h: RFC 6560 OTP padata codec (wire layout: in rfc6560.c only). */
#ifndef YK_RFC6560_H
#define YK_RFC6560_H

#include <stdint.h>
#include <krb5.h>

/*
 * The padata types and the key usage are krb5.h's:
 * KRB5_PADATA_OTP_CHALLENGE (141, KDC to client),
 * KRB5_PADATA_OTP_REQUEST (142, client to KDC) and
 * KRB5_KEYUSAGE_PA_OTP_REQUEST (45, encData under the FAST armor key).
 *
 * Decoded messages borrow the input: every krb5_data below that a decoder
 * fills points into the buffer it decoded (nothing is copied, so the
 * password and OTP in otp-value / otp-pin exist only in that buffer, which
 * the caller wipes).  They are valid while that buffer is.  Encoders return
 * malloc'd DER; free it with yk_data_free (padata.h), which wipes it.
 */

/* OTPFlags, as the 32-bit value of the BIT STRING (RFC 6560 bit 0 is the
 * most significant bit); the same values as MIT's KRB5_OTP_FLAG_*. */
#define YK_RFC6560_FLAG_RESERVED       0x80000000U
#define YK_RFC6560_FLAG_NEXTOTP        0x40000000U
#define YK_RFC6560_FLAG_COMBINE        0x20000000U
#define YK_RFC6560_FLAG_COLLECT_PIN    0x10000000U
#define YK_RFC6560_FLAG_NO_COLLECT_PIN 0x08000000U
#define YK_RFC6560_FLAG_ENCRYPT_NONCE  0x04000000U
#define YK_RFC6560_FLAG_SEPARATE_PIN   0x02000000U
#define YK_RFC6560_FLAG_CHECK_DIGIT    0x01000000U

/* Bounds, the same for encoders (EINVAL) and decoders (a longer value gives
 * YK_ERR_RFC6560_TOO_LONG).  Nonces are 1..NONCE_MAX bytes. */
#define YK_RFC6560_NONCE_MAX 64        /* every nonce */
#define YK_RFC6560_VALUE_MAX 256       /* otp-value, otp-pin, salt */
#define YK_RFC6560_STRING_MAX 64       /* vendor, service, otp-challenge,
                                        * tokenID, algID, s2kparams */
#define YK_RFC6560_CIPHERTEXT_MAX 256  /* encData's cipher, 1..this */
#define YK_RFC6560_TOKENINFO_MAX 8     /* tokenInfo entries, 1..this */

/* An optional string field: when present, its bytes (borrowed from the
 * decoded input, or the caller's memory when encoding; may be empty). */
typedef struct {
    krb5_boolean present;
    krb5_data data;
} yk_rfc6560_opt;

/* An optional Int32 field. */
typedef struct {
    krb5_boolean present;
    int32_t value;
} yk_rfc6560_optint;

/* One OTP-TOKENINFO (supportedHashAlg and iterationCount are refused). */
typedef struct {
    uint32_t flags;                /* [0] OTPFlags */
    yk_rfc6560_opt vendor;         /* [1] UTF8String */
    yk_rfc6560_opt challenge;      /* [2] OCTET STRING */
    yk_rfc6560_optint length;      /* [3] */
    yk_rfc6560_optint format;      /* [4] */
    yk_rfc6560_opt token_id;       /* [5] OCTET STRING */
    yk_rfc6560_opt alg_id;         /* [6] UTF8String */
} yk_rfc6560_tokeninfo;

/* A PA-OTP-CHALLENGE (padata 141). */
typedef struct {
    krb5_data nonce;               /* [0], 1..NONCE_MAX bytes */
    yk_rfc6560_opt service;        /* [1] UTF8String */
    size_t n_tokeninfo;            /* [2], 1..TOKENINFO_MAX entries */
    yk_rfc6560_tokeninfo tokeninfo[YK_RFC6560_TOKENINFO_MAX];
    yk_rfc6560_opt salt;           /* [3] KerberosString */
    yk_rfc6560_opt s2kparams;      /* [4] OCTET STRING */
} yk_rfc6560_challenge;

/*
 * A PA-OTP-REQUEST (padata 142).  hashAlg [3], otp-challenge [7],
 * otp-time [8] and otp-counter [9] are refused with
 * YK_ERR_RFC6560_UNSUPPORTED: they answer tokenInfo fields our KDC never
 * sends, and MIT's client never sends them.  iterationCount [4] is read:
 * MIT 1.20's client sends 0 in every request (its zero-filled request
 * encodes every value but -1); without hashAlg it means nothing.
 */
typedef struct {
    uint32_t flags;                /* [0] OTPFlags (MIT's client: 0) */
    yk_rfc6560_opt nonce;          /* [1], 1..NONCE_MAX bytes */
    krb5_enc_data enc_data;        /* [2] enctype, kvno, ciphertext */
    krb5_boolean has_kvno;         /* enc_data.kvno is 0 when absent */
    yk_rfc6560_optint iteration_count; /* [4] (MIT's client: 0) */
    yk_rfc6560_opt otp_value;      /* [5] OCTET STRING: a secret */
    yk_rfc6560_opt pin;            /* [6] UTF8String: a secret */
    yk_rfc6560_optint format;      /* [10] */
    yk_rfc6560_opt token_id;       /* [11] OCTET STRING */
    yk_rfc6560_opt alg_id;         /* [12] UTF8String */
    yk_rfc6560_opt vendor;         /* [13] UTF8String */
} yk_rfc6560_request;

/* The KDC's challenge: nonce (1..NONCE_MAX bytes) and one tokenInfo with
 * flags 0 and, when vendor is not NULL, that vendor (1..STRING_MAX
 * printable ASCII characters; MIT's client drops a tokenInfo whose vendor
 * is not printable).  Sets *der_out only on success; EINVAL for bad
 * arguments. */
krb5_error_code yk_rfc6560_build_challenge(const krb5_data *nonce,
                                           const char *vendor,
                                           krb5_data *der_out);

/* Encode any challenge the decoder accepts (tests, fuzzing).  EINVAL when
 * a field is out of bounds. */
krb5_error_code yk_rfc6560_encode_challenge(const yk_rfc6560_challenge *ch,
                                            krb5_data *der_out);

/* Decode a challenge strictly into *ch_out (untouched on failure; its
 * strings borrow der's memory). */
krb5_error_code yk_rfc6560_decode_challenge(const krb5_data *der,
                                            yk_rfc6560_challenge *ch_out);

/* Encode a request (a test client's, or a decoded one).  EINVAL when a
 * field is out of bounds. */
krb5_error_code yk_rfc6560_encode_request(const yk_rfc6560_request *req,
                                          krb5_data *der_out);

/* Decode a request strictly into *req_out (untouched on failure; its
 * ciphertext and strings borrow der's memory, otp-value and otp-pin
 * included: the caller wipes der when done). */
krb5_error_code yk_rfc6560_decode_request(const krb5_data *der,
                                          yk_rfc6560_request *req_out);

/* Encode the PA-OTP-ENC-REQUEST plaintext {nonce} (1..NONCE_MAX bytes). */
krb5_error_code yk_rfc6560_encode_enc_request(const krb5_data *nonce,
                                              krb5_data *der_out);

/* Decode a decrypted PA-OTP-ENC-REQUEST strictly; *nonce_out (untouched on
 * failure) borrows der's memory. */
krb5_error_code yk_rfc6560_decode_enc_request(const krb5_data *der,
                                              krb5_data *nonce_out);

#endif /* YK_RFC6560_H */
