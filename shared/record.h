/* SPDX-License-Identifier: MIT */
/* record.h: the canonical text encodings of the LDAP token records. */
#ifndef YK_RECORD_H
#define YK_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <krb5.h>
#include "otp.h"

/* Token states (in the secret record). */
#define YK_TOKEN_PENDING 0
#define YK_TOKEN_ACTIVE 1
#define YK_TOKEN_DISABLED 2

/* Per-principal policy. */
#define YK_POLICY_2FA 0          /* password + OTP (the default) */
#define YK_POLICY_OTP 1          /* the OTP alone is enough, over FAST */

#define YK_RECORD_MAX 4096       /* bytes: a longer value is refused */
#define YK_NONCE_NONE 0          /* has_nonce == 0: written by an admin */

/* The secret record (yubikeyTokenSecret): written by administrators,
 * read by the KDC.  Strings are malloc'd and NUL-terminated. */
typedef struct {
    char pubid[YK_PUBID_MODHEX_MAX + 1];
    int state;                   /* YK_TOKEN_* */
    char *serial;                /* device serial, decimal, "" if unknown */
    int64_t enrolled_at;         /* Unix time */
    char *enrolled_by;           /* operator identity */
    char *description;           /* free text, may be "" */
    char *wrapped;               /* keywrap record (names its kvno) */
} yk_secret_rec;

/* The state record (yubikeyTokenState): swapped by the KDC. */
typedef struct {
    char pubid[YK_PUBID_MODHEX_MAX + 1];
    uint32_t counter;            /* ((usage & 0x7fff) << 8) | session */
    uint64_t gen;                /* bumped by every write, KDC or admin */
    int has_nonce;               /* 0 when written by an administrator */
    uint32_t nonce;              /* AS-REQ nonce of the accepting request */
    int64_t last_use;            /* Unix time, 0 = never */
} yk_state_rec;

/* Parse a secret record of len bytes strictly (canonical form only);
 * *rec_out malloc'd, free with yk_secret_rec_free. */
krb5_error_code yk_secret_rec_parse(const char *s, size_t len,
                                    yk_secret_rec **rec_out);

/* Format a secret record canonically (malloc'd string). */
krb5_error_code yk_secret_rec_format(const yk_secret_rec *rec,
                                     char **out);

/* Deep copy. */
krb5_error_code yk_secret_rec_copy(const yk_secret_rec *rec,
                                   yk_secret_rec **out);

/* Free a secret record; NULL is accepted. */
void yk_secret_rec_free(yk_secret_rec *rec);

/* Parse / format a state record (canonical form only). */
krb5_error_code yk_state_rec_parse(const char *s, size_t len,
                                   yk_state_rec *rec_out);
krb5_error_code yk_state_rec_format(const yk_state_rec *rec, char **out);

/* Policy values "2fa" and "otp". */
krb5_error_code yk_policy_parse(const char *s, size_t len, int *policy_out);
const char *yk_policy_name(int policy);

/* State names "pending", "active", "disabled". */
krb5_error_code yk_token_state_parse(const char *s, int *state_out);
const char *yk_token_state_name(int state);

/* A public id in canonical form: even-length lower-case modhex of
 * 2..32 characters (empty public ids cannot be enrolled). */
int yk_pubid_valid(const char *s);

#endif /* YK_RECORD_H */
