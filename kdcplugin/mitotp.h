/* SPDX-License-Identifier: MIT */
/* mitotp.h: MIT's RADIUS "otp" module beside ours, sharing padata 142. */

#ifndef YK_MITOTP_H
#define YK_MITOTP_H

#include <krb5/kdcpreauth_plugin.h>

/* MIT's otp module, found loaded in the KDC, with a state of our own. */
typedef struct yk_mitotp yk_mitotp;

/* If the KDC loaded MIT's otp module (Debian's krb5-otp, not disabled in
 * [plugins] kdcpreauth), an instance of it into *mit_out and 0 (one that
 * only discards when MIT's init failed here); else *mit_out = NULL and 0.
 * Logs one line saying which. */
krb5_error_code yk_mitotp_new(krb5_context context, const char **realmnames,
                              yk_mitotp **mit_out);

/* Free the instance (its module state too); NULL is accepted. */
void yk_mitotp_free(krb5_context context, yk_mitotp *mit);

/* Whether the request's principal is MIT's: mit is not NULL and the
 * principal has the string attribute "otp". */
int yk_mitotp_owns(yk_mitotp *mit, krb5_context context,
                   krb5_kdcpreauth_callbacks cb, krb5_kdcpreauth_rock rock);

/* Hand a PA-OTP-REQUEST to MIT's module: it calls respond, once (when
 * our copy of it did not start: KRB5KDC_ERR_DISCARD, at once). */
void yk_mitotp_verify(yk_mitotp *mit, krb5_context context,
                      krb5_data *req_pkt, krb5_kdc_req *request,
                      krb5_enc_tkt_part *enc_tkt_reply, krb5_pa_data *pa,
                      krb5_kdcpreauth_callbacks cb,
                      krb5_kdcpreauth_rock rock,
                      krb5_kdcpreauth_verify_respond_fn respond, void *arg);

#endif /* YK_MITOTP_H */
