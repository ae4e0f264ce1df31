/* SPDX-License-Identifier: MIT */
/* kdc_main.c: the kdcpreauth module "yubikey": adapts krb5's callbacks. */

/*
 * Thin on purpose: the decisions live in verify.c.  Here the KDC's
 * callbacks are read into plain inputs (client name, keys, armor, skew,
 * nonce, the other padata of the request) and the outcome is applied:
 * flags, indicators, reply key, one log line, one respond call.
 */

#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <kdb.h>
#include <krb5/kdcpreauth_plugin.h>

#include "async.h"
#include "errors.h"
#include "mitotp.h"
#include "otp.h"
#include "padata.h"
#include "rfc6560.h"
#include "secmem.h"
#include "verify.h"

#define YK_MIN_CALLBACKS_VERSION 6  /* replace_reply_key: krb5 1.20 */
#define YK_CHALLENGE_NONCE_LEN 32   /* random bytes of a PA-OTP-CHALLENGE */

/* The module data: one state per realm the KDC serves, and MIT's otp
 * module when the KDC loaded it (mitotp.c). */
typedef struct {
    size_t nrealms;
    yk_realm **realms;
    yk_mitotp *mit;
} yk_moddata;

/* Ours (-22859), and RFC 6560's PA-OTP-REQUEST (142) for stock clients,
 * whose hint is a PA-OTP-CHALLENGE (141). */
static krb5_preauthtype yk_pa_types[] = {
    YK_PADATA_TYPE, KRB5_PADATA_OTP_REQUEST, 0
};

/* Whether type is a padata of ours. */
static int
is_ours(krb5_preauthtype type)
{
    return type == YK_PADATA_TYPE || type == KRB5_PADATA_OTP_REQUEST;
}

krb5_error_code kdcpreauth_yubikey_initvt(krb5_context context, int maj_ver,
                                          int min_ver,
                                          krb5_plugin_vtable vtable);

/* Free the module data; NULL is accepted. */
static void
moddata_free(krb5_context context, yk_moddata *md)
{
    size_t i;

    if (md == NULL)
        return;
    yk_mitotp_free(context, md->mit);
    for (i = 0; i < md->nrealms; i++)
        yk_realm_free(md->realms[i]);
    free(md->realms);
    free(md);
}

/* init: one realm state per realm, from the KDC's profile (kdc.conf
 * included).  Nothing connects here: the KDC forks its workers later.  A
 * realm with invalid yubikey settings is logged and left misconfigured by
 * yk_realm_new (its OTP logins are discarded), so the other realms work;
 * only a failure to allocate fails init. */
static krb5_error_code
yk_init(krb5_context context, krb5_kdcpreauth_moddata *moddata_out,
        const char **realmnames)
{
    krb5_error_code ret;
    yk_moddata *md = NULL;
    profile_t profile = NULL;
    size_t n = 0, i;

    ret = yk_crypto_init();
    if (ret)
        return ret;
    /* Inside an attempt (yk_verify, yk_edata) the store's waits suspend
     * it and the worker goes on serving (async.c). */
    yk_store_set_io(&yk_async_io);
    ret = krb5_get_profile(context, &profile);
    if (ret)
        return ret;
    while (realmnames != NULL && realmnames[n] != NULL)
        n++;
    md = calloc(1, sizeof(*md));
    if (md == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    md->realms = calloc(n + 1, sizeof(*md->realms));
    if (md->realms == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    for (i = 0; i < n; i++) {
        ret = yk_realm_new(profile, realmnames[i], &md->realms[i]);
        if (ret)
            goto cleanup;
        md->nrealms++;
    }
    ret = yk_mitotp_new(context, realmnames, &md->mit);
    if (ret)
        goto cleanup;
    *moddata_out = (krb5_kdcpreauth_moddata)md;
    md = NULL;

cleanup:
    moddata_free(context, md);
    profile_release(profile);
    return ret;
}

/* fini: free everything (keyrings and passwords wiped). */
static void
yk_fini(krb5_context context, krb5_kdcpreauth_moddata moddata)
{
    /* The loop's events may be freed already (krb5 before 1.19.4 and
     * 1.20.1 frees the loop before the modules): the store closes its
     * connections without touching their watches. */
    yk_store_set_io(NULL);
    moddata_free(context, (yk_moddata *)moddata);
    yk_async_fini();
}

/* flags: offered to +requires_hwauth principals; replaces the reply key
 * (mode 2). */
static int
yk_flags(krb5_context context, krb5_preauthtype pa_type)
{
    return PA_HARDWARE | PA_REPLACES_KEY;
}

/* The realm state for the client's realm, or NULL. */
static yk_realm *
find_realm(yk_moddata *md, krb5_const_principal client)
{
    size_t i, len;

    if (md == NULL || client == NULL)
        return NULL;
    for (i = 0; i < md->nrealms; i++) {
        len = strlen(md->realms[i]->name);
        if (client->realm.length == len &&
            memcmp(client->realm.data, md->realms[i]->name, len) == 0)
            return md->realms[i];
    }
    return NULL;
}

/* Return 1 for padata types that authenticate the client (any type not
 * known to be mere request decoration counts, so that lockout errs on the
 * side of counting). */
static int
is_authenticating(krb5_preauthtype type)
{
    switch (type) {
    case KRB5_PADATA_NONE:
    case KRB5_PADATA_AP_REQ:
    case KRB5_PADATA_PW_SALT:
    case KRB5_PADATA_AFS3_SALT:
    case KRB5_PADATA_ETYPE_INFO:
    case KRB5_PADATA_ETYPE_INFO2:
    case KRB5_PADATA_PK_AS_REP_OLD:
    case KRB5_PADATA_PK_AS_REP:
    case KRB5_PADATA_SVR_REFERRAL_INFO:
    case KRB5_PADATA_GET_FROM_TYPED_DATA:
    case KRB5_PADATA_REFERRAL:
    case KRB5_PADATA_PAC_REQUEST:
    case KRB5_PADATA_FOR_USER:
    case KRB5_PADATA_S4U_X509_USER:
    case KRB5_PADATA_AS_CHECKSUM:
    case KRB5_PADATA_FX_COOKIE:
    case KRB5_PADATA_FX_FAST:
    case KRB5_PADATA_FX_ERROR:
    case KRB5_PADATA_OTP_CHALLENGE:
    case KRB5_PADATA_PKINIT_KX:
    case KRB5_ENCPADATA_REQ_ENC_PA_REP:
    case KRB5_PADATA_AS_FRESHNESS:
    case KRB5_PADATA_PAC_OPTIONS:
        return 0;
    default:
        return 1;
    }
}

/* Survey the request's padata: how many are ours, the first of ours, and
 * whether another authenticating padata is present. */
static void
survey_padata(krb5_pa_data **padata, int *n_ours_out,
              const krb5_pa_data **first_out, int *other_auth_out)
{
    const krb5_pa_data *first = NULL;
    int n = 0, other = 0;

    for (; padata != NULL && *padata != NULL; padata++) {
        if (is_ours((*padata)->pa_type)) {
            if (first == NULL)
                first = *padata;
            n++;
        } else if (is_authenticating((*padata)->pa_type)) {
            other = 1;
        }
    }
    *n_ours_out = n;
    *first_out = first;
    *other_auth_out = other;
}

/* A PA-OTP-CHALLENGE (RFC 6560) into *der_out: a fresh random nonce,
 * kept in the KDC cookie (encrypted by the KDC, bound to the client) for
 * verify to compare, and one tokenInfo with flags 0 and nothing else (what
 * MIT's client and SSSD both accept: notes in doc/protocol.md). */
static krb5_error_code
make_challenge(krb5_context context, krb5_kdcpreauth_callbacks cb,
               krb5_kdcpreauth_rock rock, krb5_data *der_out)
{
    krb5_error_code ret;
    unsigned char buf[YK_CHALLENGE_NONCE_LEN];
    krb5_data nonce;

    nonce.magic = KV5M_DATA;
    nonce.length = sizeof(buf);
    nonce.data = (char *)buf;
    ret = krb5_c_random_make_octets(context, &nonce);
    if (ret == 0)
        ret = cb->set_cookie(context, rock, KRB5_PADATA_OTP_REQUEST, &nonce);
    if (ret == 0)
        ret = yk_rfc6560_build_challenge(&nonce, NULL, der_out);
    return ret;
}

/* One edata call, run as an attempt (async.c): its arguments, and what
 * it answers. */
typedef struct {
    krb5_context context;
    krb5_kdcpreauth_callbacks cb;
    krb5_kdcpreauth_rock rock;
    krb5_kdcpreauth_moddata moddata;
    krb5_preauthtype pa_type;
    krb5_kdcpreauth_edata_respond_fn respond;
    void *arg;
    krb5_error_code code;
    krb5_pa_data *pa;
    int heap;                    /* malloc'd (else on the caller's stack) */
} yk_edata_call;

/* edata's work: the hint, only for principals with an active token (for
 * 142: a PA-OTP-CHALLENGE, only in armored requests), into ec. */
static void
edata_body(void *p)
{
    yk_edata_call *ec = p;
    krb5_context context = ec->context;
    krb5_kdcpreauth_callbacks cb = ec->cb;
    krb5_kdcpreauth_rock rock = ec->rock;
    krb5_error_code ret = ENOENT;
    krb5_principal client = NULL;
    krb5_pa_data *pa = NULL;
    krb5_data hint = { 0 };
    char *name = NULL;
    const krb5_db_entry *entry;
    yk_realm *r;
    uint8_t flags = 0;
    int armored, requires_hw;

    client = cb->client_name(context, rock);
    r = find_realm((yk_moddata *)ec->moddata, client);
    if (r == NULL)
        goto cleanup;
    ret = krb5_unparse_name(context, client, &name);
    if (ret)
        goto cleanup;
    armored = cb->fast_armor(context, rock) != NULL;
    if (ec->pa_type == KRB5_PADATA_OTP_REQUEST) {
        /* Called after our own type's edata, which read the record: the
         * cache decides.  Only armored requests get a challenge, and not
         * MIT's principals: its module sends theirs. */
        ret = armored ? yk_hint_cached(r, name, armored) : ENOENT;
        if (ret == 0 && yk_mitotp_owns(((yk_moddata *)ec->moddata)->mit,
                                       context, cb, rock))
            ret = ENOENT;
        if (ret == 0)
            ret = make_challenge(context, cb, rock, &hint);
        if (ret)
            goto cleanup;
    } else {
        entry = cb->client_entry(context, rock);
        requires_hw = entry != NULL &&
            (entry->attributes & KRB5_KDB_REQUIRES_HW_AUTH) != 0;
        ret = yk_hint_flags(r, name, armored, requires_hw, &flags);
        if (ret)
            goto cleanup;
        ret = yk_padata_encode_hint(flags, &hint);
        if (ret)
            goto cleanup;
    }
    pa = calloc(1, sizeof(*pa));
    if (pa == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    pa->magic = KV5M_PA_DATA;
    pa->pa_type = ec->pa_type == KRB5_PADATA_OTP_REQUEST ?
        KRB5_PADATA_OTP_CHALLENGE : YK_PADATA_TYPE;
    pa->length = hint.length;
    pa->contents = (krb5_octet *)hint.data;
    hint.data = NULL;
    hint.length = 0;

cleanup:
    yk_data_free(&hint);
    krb5_free_unparsed_name(context, name);
    ec->code = ret;
    ec->pa = ret ? NULL : pa;
}

/* edata's answer, on the worker loop's stack: respond exactly once. */
static void
edata_fin(void *p)
{
    yk_edata_call *ec = p;

    (*ec->respond)(ec->arg, ec->code, ec->pa);
    if (ec->code)
        free(ec->pa);
    if (ec->heap)
        free(ec);
}

/* edata: the hint (edata_body), as an attempt on the worker's event loop
 * (async.c) so that its directory read does not block the worker; when
 * no attempt can be started (memory), at once. */
static void
yk_edata(krb5_context context, krb5_kdc_req *request,
         krb5_kdcpreauth_callbacks cb, krb5_kdcpreauth_rock rock,
         krb5_kdcpreauth_moddata moddata, krb5_preauthtype pa_type,
         krb5_kdcpreauth_edata_respond_fn respond, void *arg)
{
    yk_edata_call local, *ec;

    if (cb->vers < YK_MIN_CALLBACKS_VERSION) {
        (*respond)(arg, ENOENT, NULL);
        return;
    }
    ec = calloc(1, sizeof(*ec));
    if (ec == NULL) {
        memset(&local, 0, sizeof(local));
        ec = &local;
    } else {
        ec->heap = 1;
    }
    ec->context = context;
    ec->cb = cb;
    ec->rock = rock;
    ec->moddata = moddata;
    ec->pa_type = pa_type;
    ec->respond = respond;
    ec->arg = arg;
    if (!ec->heap || yk_async_run(cb->event_context(context, rock),
                                  edata_body, edata_fin, ec) != 0) {
        edata_body(ec);
        edata_fin(ec);
    }
}

/* After a committed OTP: the indicators, then the reply key (mode 2),
 * then the ticket flags.  The KDC rolls nothing back, so the step that
 * changes the most (the reply key) comes last but for the flags: a
 * failing callback leaves at most indicators behind on a refused
 * request. */
static krb5_error_code
finish_success(krb5_context context, krb5_enc_tkt_part *enc_tkt_reply,
               krb5_kdcpreauth_callbacks cb, krb5_kdcpreauth_rock rock,
               const yk_realm *r, int mode, int rfc6560,
               const krb5_keyblock *armor)
{
    krb5_error_code ret;
    int replace = mode == YK_MODE_OTP || rfc6560;

    if (replace && armor == NULL)
        return KRB5KDC_ERR_PREAUTH_FAILED;
    ret = cb->add_auth_indicator(context, rock, r->cfg.indicator);
    if (ret)
        return ret;
    if (mode == YK_MODE_2FA) {
        ret = cb->add_auth_indicator(context, rock, r->cfg.indicator_2fa);
        if (ret)
            return ret;
    }
    if (replace) {
        /* The armor key: RFC 6560 always, mode 2 (the OTP alone). */
        ret = cb->replace_reply_key(context, rock, armor, FALSE);
        if (ret)
            return ret;
    }
    enc_tkt_reply->flags |= TKT_FLG_PRE_AUTH | TKT_FLG_HW_AUTH;
    return 0;
}

/* What get_client_keys needs: the KDC's callbacks and the keys, once
 * fetched (freed by yk_verify). */
typedef struct {
    krb5_context context;
    krb5_kdcpreauth_callbacks cb;
    krb5_kdcpreauth_rock rock;
    krb5_keyblock *keys;
    int fetched;
} yk_keys_ctx;

/* Fetch the client's keys from the KDC on first use (mode 1 only). */
static const krb5_keyblock *
get_client_keys(void *arg)
{
    yk_keys_ctx *kc = arg;

    if (!kc->fetched) {
        kc->fetched = 1;
        if (kc->cb->client_keys(kc->context, kc->rock, &kc->keys) != 0)
            kc->keys = NULL;
    }
    return kc->keys;
}

/* The client's long-term key checked against a typed password (RFC
 * 6560, two factors): string-to-key with the entry's salt for the
 * enctype of the first key the KDC gives (the newest key version),
 * compared in constant time.  KRB5KDC_ERR_PREAUTH_FAILED when it does not
 * match (or the principal has no key: a random-key principal has no
 * password). */
static krb5_error_code
check_password(void *arg, const char *pw, size_t len)
{
    yk_keys_ctx *kc = arg;
    krb5_context ctx = kc->context;
    const krb5_keyblock *key;
    krb5_db_entry *entry;
    krb5_key_data *kd = NULL;
    krb5_data *salt = NULL, pwd;
    krb5_keyblock derived;
    krb5_int16 salttype;
    krb5_error_code ret;

    memset(&derived, 0, sizeof(derived));
    key = get_client_keys(kc);
    entry = kc->cb->client_entry(ctx, kc->rock);
    if (key == NULL || key->enctype == 0 || entry == NULL)
        return KRB5KDC_ERR_PREAUTH_FAILED;
    ret = krb5_dbe_find_enctype(ctx, entry, key->enctype, -1, 0, &kd);
    if (ret)
        return KRB5KDC_ERR_PREAUTH_FAILED;
    ret = krb5_dbe_compute_salt(ctx, kd, entry->princ, &salttype, &salt);
    if (ret)
        return ret;
    pwd.magic = KV5M_DATA;
    pwd.length = (unsigned int)len;
    pwd.data = (char *)pw;
    ret = krb5_c_string_to_key(ctx, key->enctype, &pwd, salt, &derived);
    if (ret == 0 && (derived.length != key->length ||
                     !yk_memeq(derived.contents, key->contents,
                               key->length)))
        ret = KRB5KDC_ERR_PREAUTH_FAILED;
    krb5_free_keyblock_contents(ctx, &derived);
    krb5_free_data(ctx, salt);
    return ret;
}

/* One verify call, run as an attempt (async.c): its arguments, and what
 * it answers. */
typedef struct {
    krb5_context context;
    krb5_kdc_req *request;
    krb5_enc_tkt_part *enc_tkt_reply;
    krb5_pa_data *data;
    krb5_kdcpreauth_callbacks cb;
    krb5_kdcpreauth_rock rock;
    krb5_kdcpreauth_moddata moddata;
    krb5_kdcpreauth_verify_respond_fn respond;
    void *arg;
    char *name;                  /* the client, unparsed */
    krb5_error_code code;
    int heap;                    /* malloc'd (else on the caller's stack) */
} yk_verify_call;

/* verify's work: run the pipeline on our padata, apply its outcome and
 * log one line per attempt; the code to answer into vc. */
static void
verify_body(void *p)
{
    yk_verify_call *vc = p;
    krb5_context context = vc->context;
    krb5_kdcpreauth_callbacks cb = vc->cb;
    krb5_kdcpreauth_rock rock = vc->rock;
    krb5_pa_data *data = vc->data;
    krb5_error_code ret;
    krb5_principal client;
    krb5_keyblock *armor = NULL;
    yk_keys_ctx kc;
    const krb5_pa_data *first = NULL;
    krb5_data contents, cookie = { 0 };
    yk_verify_in in;
    yk_verify_out out;
    char line[YK_LOG_LINE_LEN];
    int n_ours = 0;

    memset(&in, 0, sizeof(in));
    memset(&out, 0, sizeof(out));
    memset(&kc, 0, sizeof(kc));
    kc.context = context;
    kc.cb = cb;
    kc.rock = rock;
    client = cb->client_name(context, rock);
    survey_padata(vc->request->padata, &n_ours, &first, &in.other_auth);
    armor = cb->fast_armor(context, rock);
    contents.magic = KV5M_DATA;
    contents.length = data->length;
    contents.data = (char *)data->contents;
    in.principal = vc->name;
    in.padata = &contents;
    in.duplicate = n_ours > 1;
    in.armored = armor != NULL;
    in.get_client_keys = get_client_keys;
    in.keys_arg = &kc;
    in.max_skew = cb->max_time_skew(context, rock);
    in.nonce = (uint32_t)vc->request->nonce;
    if (data->pa_type == KRB5_PADATA_OTP_REQUEST) {
        in.rfc6560 = 1;
        in.armor_key = armor;
        if (cb->get_cookie(context, rock, KRB5_PADATA_OTP_REQUEST,
                           &cookie))
            in.challenge_nonce = &cookie;
        in.check_password = check_password;
        in.password_arg = &kc;
    }
    ret = krb5_timeofday(context, &in.now);
    if (ret) {
        yk_verify_late_failure(&in, &out, ret);
    } else {
        yk_verify_run(context, find_realm((yk_moddata *)vc->moddata, client),
                      &in, &out);
    }

    if (out.code == 0) {
        ret = finish_success(context, vc->enc_tkt_reply, cb, rock,
                             find_realm((yk_moddata *)vc->moddata, client),
                             out.mode, in.rfc6560, armor);
        if (ret)
            yk_verify_late_failure(&in, &out, ret);
    }

    /* One line per attempt: a doubled padata is logged once. */
    if (!in.duplicate || data == first) {
        yk_verify_format_log(vc->name, &out, line, sizeof(line));
        yk_kdc_log("%s", line);
    }
    if (kc.keys != NULL)
        cb->free_keys(context, rock, kc.keys);
    vc->code = out.code;
}

/* verify's answer, on the worker loop's stack: respond exactly once. */
static void
verify_fin(void *p)
{
    yk_verify_call *vc = p;

    krb5_free_unparsed_name(vc->context, vc->name);
    vc->name = NULL;
    (*vc->respond)(vc->arg, vc->code, NULL, NULL, NULL);
    if (vc->heap)
        free(vc);
}

/* verify: MIT's principals handed to its module; ours run verify_body as
 * an attempt on the worker's event loop (async.c), so that its directory
 * operations do not block the worker (at once when no attempt can be
 * started: memory); respond is called exactly once. */
static void
yk_verify(krb5_context context, krb5_data *req_pkt, krb5_kdc_req *request,
          krb5_enc_tkt_part *enc_tkt_reply, krb5_pa_data *data,
          krb5_kdcpreauth_callbacks cb, krb5_kdcpreauth_rock rock,
          krb5_kdcpreauth_moddata moddata,
          krb5_kdcpreauth_verify_respond_fn respond, void *arg)
{
    krb5_error_code ret;
    yk_verify_call local, *vc;
    char *name = NULL;

    if (cb->vers < YK_MIN_CALLBACKS_VERSION) {
        yk_kdc_log("KDC callbacks version %d < %d: refusing", cb->vers,
                   YK_MIN_CALLBACKS_VERSION);
        (*respond)(arg, KRB5KDC_ERR_PREAUTH_FAILED, NULL, NULL, NULL);
        return;
    }
    ret = krb5_unparse_name(context, cb->client_name(context, rock), &name);
    if (ret) {
        (*respond)(arg, ret, NULL, NULL, NULL);
        return;
    }
    if (data->pa_type == KRB5_PADATA_OTP_REQUEST &&
        yk_mitotp_owns(((yk_moddata *)moddata)->mit, context, cb, rock)) {
        yk_kdc_log("principal=%s padata=142: otp string attribute, handed "
                   "to MIT's otp module", name);
        krb5_free_unparsed_name(context, name);
        yk_mitotp_verify(((yk_moddata *)moddata)->mit, context, req_pkt,
                         request, enc_tkt_reply, data, cb, rock, respond,
                         arg);
        return;
    }
    vc = calloc(1, sizeof(*vc));
    if (vc == NULL) {
        memset(&local, 0, sizeof(local));
        vc = &local;
    } else {
        vc->heap = 1;
    }
    vc->context = context;
    vc->request = request;
    vc->enc_tkt_reply = enc_tkt_reply;
    vc->data = data;
    vc->cb = cb;
    vc->rock = rock;
    vc->moddata = moddata;
    vc->respond = respond;
    vc->arg = arg;
    vc->name = name;
    if (!vc->heap || yk_async_run(cb->event_context(context, rock),
                                  verify_body, verify_fin, vc) != 0) {
        verify_body(vc);
        verify_fin(vc);
    }
}

/* The module's only exported symbol: fill the kdcpreauth vtable. */
krb5_error_code
kdcpreauth_yubikey_initvt(krb5_context context, int maj_ver, int min_ver,
                          krb5_plugin_vtable vtable)
{
    krb5_kdcpreauth_vtable vt;

    if (maj_ver != 1)
        return KRB5_PLUGIN_VER_NOTSUPP;
    vt = (krb5_kdcpreauth_vtable)vtable;
    vt->name = "yubikey";
    vt->pa_type_list = yk_pa_types;
    vt->init = yk_init;
    vt->fini = yk_fini;
    vt->flags = yk_flags;
    vt->edata = yk_edata;
    vt->verify = yk_verify;
    return 0;
}
