/* SPDX-License-Identifier: MIT */
/* ykclient_common.h: what the test client and the benchmark share. */
#ifndef YK_CLIENT_COMMON_H
#define YK_CLIENT_COMMON_H

#include <krb5.h>
#include <krb5/clpreauth_plugin.h>

/* The in-memory input ccache for client whose "pa_type" configuration
 * (for the realm's TGS) restricts the exchange to padata type pa_type. */
krb5_error_code yk_tc_make_in_ccache(krb5_context ctx, krb5_principal client,
                                     krb5_preauthtype pa_type,
                                     krb5_ccache *cc_out);

/* clpreauth tryagain: never retry after a KDC error. */
krb5_error_code yk_tc_tryagain(krb5_context ctx,
                               krb5_clpreauth_moddata moddata,
                               krb5_clpreauth_modreq modreq,
                               krb5_get_init_creds_opt *opt,
                               krb5_clpreauth_callbacks cb,
                               krb5_clpreauth_rock rock,
                               krb5_kdc_req *request,
                               krb5_data *encoded_request_body,
                               krb5_data *encoded_previous_request,
                               krb5_preauthtype pa_type, krb5_error *error,
                               krb5_pa_data **error_padata,
                               krb5_prompter_fct prompter,
                               void *prompter_data,
                               krb5_pa_data ***pa_data_out);

/* clpreauth flags: a real mechanism. */
int yk_tc_flags(krb5_context ctx, krb5_preauthtype pa_type);

#endif /* YK_CLIENT_COMMON_H */
