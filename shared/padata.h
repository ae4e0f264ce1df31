/* SPDX-License-Identifier: MIT */
/* padata.h: the wire codec of the yubikey padata (doc/design.md §3). */
#ifndef YK_PADATA_H
#define YK_PADATA_H

#include <stddef.h>
#include <stdint.h>
#include <krb5.h>

/* Protocol constants: fixed, other hosts speak them. */
#define YK_PADATA_TYPE ((krb5_preauthtype)-22859)  /* -0x594B, "YK" */
#define YK_KEY_USAGE 1113        /* mode 1 encryption key usage */
#define YK_PROTO_VERSION 1

/* Hint flags (KDC to client). */
#define YK_HINT_PASSWORD_BOUND 0x01  /* mode 1 accepted */
#define YK_HINT_OTP_ALONE_OK   0x02  /* mode 2 accepted (armored) */

/* Request modes (client to KDC). */
#define YK_MODE_2FA 1            /* password-bound: encrypted */
#define YK_MODE_OTP 2            /* OTP alone, inside FAST */

#define YK_OTP_BUF 65            /* an OTP (at most 64 chars) + NUL */

/* A decoded request.  Mode 1: enctype and ciphertext (ciphertext points
 * into the decoded input buffer: valid while that buffer is).  Mode 2:
 * the OTP in clear (a secret until its counter is committed: wipe). */
typedef struct {
    int mode;
    krb5_enctype enctype;
    krb5_data ciphertext;
    char otp[YK_OTP_BUF];
    size_t otp_len;
} yk_request;

/* The mode 1 plaintext: client time, the AS-REQ nonce, the OTP. */
typedef struct {
    uint32_t sec;
    uint32_t usec;
    uint32_t nonce;
    char otp[YK_OTP_BUF];
    size_t otp_len;
} yk_bound;

/* Encode the hint for flags into *out (malloc'd data; free with
 * yk_data_free). */
krb5_error_code yk_padata_encode_hint(uint8_t flags, krb5_data *out);

/* Decode a hint; sets *flags_out. */
krb5_error_code yk_padata_decode_hint(const krb5_data *in,
                                      uint8_t *flags_out);

/* Encode a request (mode 1 or 2) into *out (malloc'd). */
krb5_error_code yk_padata_encode_request(const yk_request *req,
                                         krb5_data *out);

/* Decode a request strictly; *req_out borrows in's memory for the
 * ciphertext.  Any length mismatch, unknown version or mode, or OTP
 * length outside 32..64 is refused. */
krb5_error_code yk_padata_decode_request(const krb5_data *in,
                                         yk_request *req_out);

/* Encode/decode the mode 1 plaintext (malloc'd; holds the OTP: the
 * caller wipes it with yk_data_free). */
krb5_error_code yk_padata_encode_bound(const yk_bound *b, krb5_data *out);
krb5_error_code yk_padata_decode_bound(const krb5_data *in,
                                       yk_bound *b_out);

/* Mode 1 sealing: encrypt the plaintext of b with key (key usage 1113)
 * into req (mode 1; req->ciphertext malloc'd, free with yk_request_clear).
 */
krb5_error_code yk_padata_seal(krb5_context ctx, const krb5_keyblock *key,
                               const yk_bound *b, yk_request *req_out);

/* Mode 1 opening: decrypt req's ciphertext with key and decode it.
 * A wrong key (a wrong password) gives KRB5KRB_AP_ERR_BAD_INTEGRITY. */
krb5_error_code yk_padata_open(krb5_context ctx, const krb5_keyblock *key,
                               const yk_request *req, yk_bound *b_out);

/* Wipe and free data allocated by this module; NULL is accepted. */
void yk_data_free(krb5_data *d);

/* Wipe a request; free its ciphertext when it was allocated by
 * yk_padata_seal. */
void yk_request_clear(yk_request *req, int owns_ciphertext);

#endif /* YK_PADATA_H */
