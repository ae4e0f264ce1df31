/* SPDX-License-Identifier: MIT */
/* ykclient_common.c: what the test client and the benchmark share. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "ykclient_common.h"

/* Make the in-memory input ccache for client whose "pa_type"
 * configuration restricts the exchange to pa_type. */
krb5_error_code
yk_tc_make_in_ccache(krb5_context ctx, krb5_principal client,
                     krb5_preauthtype pa_type, krb5_ccache *cc_out)
{
    krb5_error_code ret;
    krb5_ccache cc = NULL;
    krb5_principal tgs = NULL;
    krb5_data value;
    char type[16];

    snprintf(type, sizeof(type), "%d", (int)pa_type);
    value.magic = KV5M_DATA;
    value.data = type;
    value.length = (unsigned int)strlen(type);
    ret = krb5_build_principal_ext(ctx, &tgs, client->realm.length,
                                   client->realm.data,
                                   (unsigned int)strlen(KRB5_TGS_NAME),
                                   KRB5_TGS_NAME, client->realm.length,
                                   client->realm.data, 0);
    if (ret)
        goto cleanup;
    ret = krb5_cc_new_unique(ctx, "MEMORY", NULL, &cc);
    if (ret)
        goto cleanup;
    ret = krb5_cc_initialize(ctx, cc, client);
    if (ret == 0)
        ret = krb5_cc_set_config(ctx, cc, tgs, "pa_type", &value);
    if (ret)
        goto cleanup;
    *cc_out = cc;
    cc = NULL;

cleanup:
    if (cc != NULL)
        krb5_cc_destroy(ctx, cc);
    krb5_free_principal(ctx, tgs);
    return ret;
}

/* Never retry after a KDC error. */
krb5_error_code
yk_tc_tryagain(krb5_context ctx, krb5_clpreauth_moddata moddata,
               krb5_clpreauth_modreq modreq, krb5_get_init_creds_opt *opt,
               krb5_clpreauth_callbacks cb, krb5_clpreauth_rock rock,
               krb5_kdc_req *request, krb5_data *encoded_request_body,
               krb5_data *encoded_previous_request, krb5_preauthtype pa_type,
               krb5_error *error, krb5_pa_data **error_padata,
               krb5_prompter_fct prompter, void *prompter_data,
               krb5_pa_data ***pa_data_out)
{
    *pa_data_out = NULL;
    return KRB5_PREAUTH_FAILED;
}

/* Always a real mechanism. */
int
yk_tc_flags(krb5_context ctx, krb5_preauthtype pa_type)
{
    return PA_REAL;
}
