/* SPDX-License-Identifier: MIT */
/* client_main.c: the clpreauth module "yubikey" (hint, prompts, request). */

/*
 * The client half of doc/design.md §3.  The KDC offers padata type -22859
 * with a hint (shared/padata.c); this module answers with one request:
 *
 *   mode 1 (two factors): the password through get_as_key, then the OTP
 *     through the prompter ("YubiKey OTP for alice@REALM"), sealed with the
 *     long-term key together with the preauth time and the request nonce;
 *   mode 2 (OTP alone): only when the hint offers it and the request is
 *     FAST-armored; the OTP comes from the responder question "otp" or the
 *     prompter, and the armor key becomes the AS key.
 *
 * `kinit -X yubikey_mode=2fa|otp` forces a mode.  After sending its request
 * the module disables fallback, so a refusal by the KDC ends the login
 * instead of a password-only retry.  OTPs and plaintexts are wiped on every
 * path.  libkrb5 1.20 calls the initvt with minor version 1; prep_questions
 * (minor version 2) is filled anyway, and 1.20 calls it.
 */

#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <krb5.h>
#include <krb5/clpreauth_plugin.h>

#include "errors.h"
#include "clientlogic.h"
#include "modhex.h"      /* the OTP lengths, the alphabet: no libgcrypt */
#include "padata.h"
#include "secmem.h"

#define YK_OPT_MODE "yubikey_mode"   /* the gic option: kinit -X */
#define YK_INPUT_LEN 128             /* prompt buffer; longer is refused */

/*
 * The OTP length announced to responders: 12 modhex characters of public id
 * (the YubiKey default) + 32 of token.  The client cannot know the
 * enrolled public id's length; a responder that enforces the length (as
 * MIT's own helper does) accepts only default-length OTPs.
 */
#define YK_RESPONDER_OTP_LEN 44

/*
 * libkrb5 1.20 (preauth2.c) tries no further mechanism after this one
 * code.  We return it once the user has engaged with the YubiKey login
 * (a forced mode, a typed OTP) and it cannot go on, so that kinit stops
 * with our message instead of silently trying encrypted timestamp with
 * the password just typed.  The message set with it says what happened.
 */
#define YK_CLIENT_STOP KRB5_LIBOS_PWDINTR

/* Per-request state. */
typedef struct {
    int sent;                /* our request went out in this exchange */
} yk_client_req;

static krb5_preauthtype yk_client_pa_types[] = { YK_PADATA_TYPE, 0 };

/* Map a yubikey_mode option value to a mode; EINVAL with a message for
 * anything but "2fa" and "otp". */
static krb5_error_code
yk_client_parse_mode(krb5_context ctx, const char *value, int *mode_out)
{
    if (yk_client_mode_parse(value, mode_out) == 0)
        return 0;
    krb5_set_error_message(ctx, EINVAL,
                           "yubikey_mode must be \"2fa\" or \"otp\", not "
                           "\"%s\"", value == NULL ? "" : value);
    return EINVAL;
}

/* Find the mode forced for this request with -X yubikey_mode (the last
 * setting wins); YK_MODE_AUTO when there is none or opt is not an
 * extended option set. */
static krb5_error_code
yk_client_forced_mode(krb5_context ctx, krb5_get_init_creds_opt *opt,
                      int *mode_out)
{
    krb5_error_code ret;
    krb5_gic_opt_pa_data *pa = NULL;
    int npa = 0, i, mode = YK_MODE_AUTO;

    ret = krb5_get_init_creds_opt_get_pa(ctx, opt, &npa, &pa);
    if (ret == EINVAL) {
        /* NULL or non-extended options carry no preauth options. */
        *mode_out = YK_MODE_AUTO;
        return 0;
    }
    if (ret)
        return ret;
    for (i = 0; i < npa; i++) {
        if (strcmp(pa[i].attr, YK_OPT_MODE) != 0)
            continue;
        ret = yk_client_parse_mode(ctx, pa[i].value, &mode);
        if (ret)
            goto cleanup;
    }
    *mode_out = mode;

cleanup:
    krb5_get_init_creds_opt_free_pa(ctx, npa, pa);
    return ret;
}

/*
 * Choose the mode for this request from the KDC's hint, the armor and a
 * forced mode.  A malformed hint or a hint offering nothing usable gives
 * KRB5_PREAUTH_FAILED (other mechanisms may go on); a forced mode that
 * cannot be honoured gives YK_CLIENT_STOP.  Both set a message.
 */
static krb5_error_code
yk_client_choose(krb5_context ctx, krb5_get_init_creds_opt *opt,
                 krb5_clpreauth_callbacks cb, krb5_clpreauth_rock rock,
                 krb5_pa_data *pa_data, int *mode_out)
{
    krb5_error_code ret;
    krb5_data hint;
    uint8_t flags = 0;
    int forced = YK_MODE_AUTO, armored;

    hint.magic = KV5M_DATA;
    hint.length = (pa_data == NULL) ? 0 : pa_data->length;
    hint.data = (pa_data == NULL) ? NULL : (char *)pa_data->contents;
    ret = yk_padata_decode_hint(&hint, &flags);
    if (ret) {
        krb5_set_error_message(ctx, KRB5_PREAUTH_FAILED,
                               "Malformed YubiKey hint from the KDC: %s",
                               yk_strerror(ret));
        return KRB5_PREAUTH_FAILED;
    }
    ret = yk_client_forced_mode(ctx, opt, &forced);
    if (ret)
        return ret;
    armored = (cb->fast_armor(ctx, rock) != NULL);

    switch (yk_client_decide(flags, forced, armored, mode_out)) {
    case YK_CHOICE_OK:
        return 0;
    case YK_CHOICE_NEEDS_ARMOR:
        krb5_set_error_message(ctx, YK_CLIENT_STOP,
                               "YubiKey OTP-only login needs FAST "
                               "armor (kinit -T)");
        return YK_CLIENT_STOP;
    case YK_CHOICE_NO_OTP_ALONE:
        krb5_set_error_message(ctx, YK_CLIENT_STOP,
                               "The KDC does not offer YubiKey "
                               "OTP-only login for this principal");
        return YK_CLIENT_STOP;
    case YK_CHOICE_NO_2FA:
        krb5_set_error_message(ctx, YK_CLIENT_STOP,
                               "The KDC does not offer YubiKey "
                               "password + OTP login for this "
                               "principal");
        return YK_CLIENT_STOP;
    default:
        break;
    }
    krb5_set_error_message(ctx, KRB5_PREAUTH_FAILED,
                           "The KDC offers no YubiKey login this client "
                           "can use%s", armored ? "" :
                           " (OTP-only login needs FAST armor)");
    return KRB5_PREAUTH_FAILED;
}

/* Ask the prompter for the OTP, echo off, into buf (bufsize bytes,
 * NUL-terminated).  The prompter (MIT's adds ": ") shows "YubiKey OTP for
 * <client principal>".  ENOENT when there is no prompter. */
static krb5_error_code
yk_client_prompt(krb5_context ctx, krb5_kdc_req *request,
                 krb5_prompter_fct prompter, void *prompter_data,
                 char *buf, size_t bufsize, size_t *len_out)
{
    krb5_error_code ret;
    krb5_prompt prompt;
    krb5_data reply;
    char *name = NULL, *text = NULL;

    if (prompter == NULL) {
        krb5_set_error_message(ctx, ENOENT, "No prompter to ask for the "
                               "YubiKey OTP");
        return ENOENT;
    }
    ret = krb5_unparse_name(ctx, request->client, &name);
    if (ret)
        goto cleanup;
    if (asprintf(&text, "YubiKey OTP for %s", name) < 0) {
        text = NULL;
        ret = ENOMEM;
        goto cleanup;
    }

    memset(buf, 0, bufsize);
    reply.magic = KV5M_DATA;
    reply.data = buf;
    reply.length = (unsigned int)(bufsize - 1);
    prompt.prompt = text;
    prompt.hidden = 1;
    prompt.reply = &reply;
    ret = (*prompter)(ctx, prompter_data, NULL, NULL, 1, &prompt);
    if (ret)
        goto cleanup;
    /* The prompter may or may not update reply.length: trust the NUL. */
    *len_out = strnlen(buf, bufsize - 1);

cleanup:
    if (ret)
        yk_zap(buf, bufsize);
    krb5_free_unparsed_name(ctx, name);
    free(text);
    return ret;
}

/*
 * Get the OTP for this request: from the responder's answer to the "otp"
 * question when use_responder is set and there is one, else from the
 * prompter.  A trailing newline/CR (a YubiKey types Enter) is dropped;
 * anything but 32..64 modhex characters (an even count) is refused with
 * YK_CLIENT_STOP.  otp_out (YK_OTP_BUF bytes) is set only on success; all
 * buffers are wiped.
 */
static krb5_error_code
yk_client_get_otp(krb5_context ctx, krb5_clpreauth_callbacks cb,
                  krb5_clpreauth_rock rock, krb5_kdc_req *request,
                  int use_responder, krb5_prompter_fct prompter,
                  void *prompter_data, char *otp_out, size_t *len_out)
{
    krb5_error_code ret;
    const char *answer = NULL;
    char buf[YK_INPUT_LEN];
    size_t len = 0, i;

    memset(buf, 0, sizeof(buf));
    if (use_responder)
        answer = cb->get_responder_answer(ctx, rock,
                                          KRB5_RESPONDER_QUESTION_OTP);
    if (answer != NULL) {
        ret = yk_client_parse_answer(answer, buf, sizeof(buf), &len);
        if (ret) {
            krb5_set_error_message(ctx, YK_CLIENT_STOP,
                                   "Malformed answer to the YubiKey OTP "
                                   "question");
            ret = YK_CLIENT_STOP;
            goto cleanup;
        }
    } else {
        ret = yk_client_prompt(ctx, request, prompter, prompter_data, buf,
                               sizeof(buf), &len);
        if (ret)
            goto cleanup;
    }

    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
        buf[--len] = '\0';
    for (i = 0; i < len && yk_modhex_char(buf[i]); i++)
        ;
    if (len < YK_OTP_MIN_LEN || len > YK_OTP_MAX_LEN || len % 2 != 0 ||
        i != len) {
        krb5_set_error_message(ctx, YK_CLIENT_STOP,
                               "That is not a YubiKey OTP (expected %d to "
                               "%d modhex characters, got %lu characters)",
                               YK_OTP_MIN_LEN, YK_OTP_MAX_LEN,
                               (unsigned long)len);
        ret = YK_CLIENT_STOP;
        goto cleanup;
    }
    memcpy(otp_out, buf, len);
    otp_out[len] = '\0';
    *len_out = len;
    ret = 0;

cleanup:
    yk_zap(buf, sizeof(buf));
    return ret;
}

/*
 * Mode 1: the long-term key (the password prompt comes first), then the
 * OTP, sealed with the preauth time and the request nonce into *enc_out
 * (malloc'd encoded request).  The OTP and the plaintext are wiped.
 */
static krb5_error_code
yk_client_mode1(krb5_context ctx, krb5_clpreauth_callbacks cb,
                krb5_clpreauth_rock rock, krb5_kdc_req *request,
                krb5_prompter_fct prompter, void *prompter_data,
                krb5_data *enc_out)
{
    krb5_error_code ret;
    krb5_keyblock *as_key = NULL;
    krb5_timestamp now = 0;
    krb5_int32 usec = 0;
    yk_bound b;
    yk_request req;
    krb5_data enc = { 0 };

    memset(&b, 0, sizeof(b));
    memset(&req, 0, sizeof(req));
    ret = cb->get_as_key(ctx, rock, &as_key);
    if (ret)
        goto cleanup;
    ret = yk_client_get_otp(ctx, cb, rock, request, 0, prompter,
                            prompter_data, b.otp, &b.otp_len);
    if (ret)
        goto cleanup;
    /* As encrypted timestamp does: the KDC's clock if it told us. */
    ret = cb->get_preauth_time(ctx, rock, TRUE, &now, &usec);
    if (ret)
        goto cleanup;
    b.sec = (uint32_t)now;
    b.usec = (uint32_t)usec;
    b.nonce = (uint32_t)request->nonce;
    ret = yk_padata_seal(ctx, as_key, &b, &req);
    if (ret) {
        krb5_set_error_message(ctx, ret, "Cannot seal the YubiKey "
                               "request: %s", yk_strerror(ret));
        goto cleanup;
    }
    ret = yk_padata_encode_request(&req, &enc);
    if (ret) {
        krb5_set_error_message(ctx, ret, "Cannot encode the YubiKey "
                               "request: %s", yk_strerror(ret));
        goto cleanup;
    }
    *enc_out = enc;

cleanup:
    yk_zap(&b, sizeof(b));
    yk_request_clear(&req, 1);
    return ret;
}

/*
 * Mode 2: the OTP alone (responder answer or prompt) into *enc_out
 * (malloc'd encoded request; it holds the OTP, which only the FAST armor
 * protects), and the armor key as the AS key.
 */
static krb5_error_code
yk_client_mode2(krb5_context ctx, krb5_clpreauth_callbacks cb,
                krb5_clpreauth_rock rock, krb5_kdc_req *request,
                krb5_prompter_fct prompter, void *prompter_data,
                krb5_data *enc_out)
{
    krb5_error_code ret;
    krb5_keyblock *armor_key = NULL;
    yk_request req;
    krb5_data enc = { 0 };

    memset(&req, 0, sizeof(req));
    armor_key = cb->fast_armor(ctx, rock);
    if (armor_key == NULL) {
        /* yk_client_choose checked; the armor cannot vanish. */
        ret = KRB5_PREAUTH_FAILED;
        krb5_set_error_message(ctx, ret, "YubiKey OTP-only login needs "
                               "FAST armor (kinit -T)");
        goto cleanup;
    }
    ret = yk_client_get_otp(ctx, cb, rock, request, 1, prompter,
                            prompter_data, req.otp, &req.otp_len);
    if (ret)
        goto cleanup;
    req.mode = YK_MODE_OTP;
    ret = yk_padata_encode_request(&req, &enc);
    if (ret) {
        krb5_set_error_message(ctx, ret, "Cannot encode the YubiKey "
                               "request: %s", yk_strerror(ret));
        goto cleanup;
    }
    /* The KDC replaces the reply key with the armor key (doc/design.md
     * §3). */
    ret = cb->set_as_key(ctx, rock, armor_key);
    if (ret)
        goto cleanup;
    *enc_out = enc;
    enc.data = NULL;

cleanup:
    yk_data_free(&enc);
    yk_request_clear(&req, 0);
    return ret;
}

/* Wrap enc (ownership taken: its data is freed on failure) into a one-item
 * padata list of our type. */
static krb5_error_code
yk_client_make_padata(krb5_data *enc, krb5_pa_data ***list_out)
{
    krb5_pa_data **list = NULL;

    list = calloc(2, sizeof(*list));
    if (list == NULL)
        goto fail;
    list[0] = calloc(1, sizeof(*list[0]));
    if (list[0] == NULL)
        goto fail;
    list[0]->magic = KV5M_PA_DATA;
    list[0]->pa_type = YK_PADATA_TYPE;
    list[0]->length = enc->length;
    list[0]->contents = (krb5_octet *)enc->data;
    enc->data = NULL;
    enc->length = 0;
    *list_out = list;
    return 0;

fail:
    free(list);
    yk_data_free(enc);
    return ENOMEM;
}

/* Always a real mechanism. */
static int
yk_client_flags(krb5_context ctx, krb5_preauthtype pa_type)
{
    return PA_REAL;
}

/* Allocate the per-request state; NULL on allocation failure (process
 * then fails with ENOMEM). */
static void
yk_client_request_init(krb5_context ctx, krb5_clpreauth_moddata moddata,
                       krb5_clpreauth_modreq *modreq_out)
{
    *modreq_out = (krb5_clpreauth_modreq)calloc(1, sizeof(yk_client_req));
}

/* Free the per-request state; NULL is accepted. */
static void
yk_client_request_fini(krb5_context ctx, krb5_clpreauth_moddata moddata,
                       krb5_clpreauth_modreq modreq)
{
    free(modreq);
}

/* Check a -X yubikey_mode value when it is set, so kinit refuses a bad
 * one at once; other attributes belong to other modules.  The value is
 * read back from the options per request (yk_client_forced_mode). */
static krb5_error_code
yk_client_gic_opts(krb5_context ctx, krb5_clpreauth_moddata moddata,
                   krb5_get_init_creds_opt *opt, const char *attr,
                   const char *value)
{
    int mode = YK_MODE_AUTO;

    if (attr == NULL || strcmp(attr, YK_OPT_MODE) != 0)
        return 0;
    return yk_client_parse_mode(ctx, value, &mode);
}

/*
 * Tell the responder what this request will need: the password (mode 1,
 * need_as_key) or the "otp" question with a challenge in the form of MIT's
 * otp module (mode 2).  Problems with the hint are left for process to
 * report: an error here would stop every other mechanism.
 */
static krb5_error_code
yk_client_prep_questions(krb5_context ctx, krb5_clpreauth_moddata moddata,
                         krb5_clpreauth_modreq modreq,
                         krb5_get_init_creds_opt *opt,
                         krb5_clpreauth_callbacks cb,
                         krb5_clpreauth_rock rock, krb5_kdc_req *request,
                         krb5_data *encoded_request_body,
                         krb5_data *encoded_previous_request,
                         krb5_pa_data *pa_data)
{
    char challenge[160];
    int mode = YK_MODE_AUTO;

    if (yk_client_choose(ctx, opt, cb, rock, pa_data, &mode) != 0) {
        krb5_clear_error_message(ctx);
        return 0;
    }
    if (mode == YK_MODE_2FA) {
        cb->need_as_key(ctx, rock);
        return 0;
    }
    snprintf(challenge, sizeof(challenge),
             "{\"service\":\"YubiKey\",\"tokenInfo\":[{\"flags\":%d,"
             "\"vendor\":\"Yubico\",\"length\":%d,\"format\":%d}]}",
             KRB5_RESPONDER_OTP_FLAGS_COLLECT_TOKEN, YK_RESPONDER_OTP_LEN,
             KRB5_RESPONDER_OTP_FORMAT_ALPHANUMERIC);
    return cb->ask_responder_question(ctx, rock, KRB5_RESPONDER_QUESTION_OTP,
                                      challenge);
}

/*
 * Answer the KDC's hint with one request of our type (mode 1 or 2, see the
 * top of the file), then disable fallback.  A second call in the same
 * exchange means the KDC did not take our request: stop, never resend.
 */
static krb5_error_code
yk_client_process(krb5_context ctx, krb5_clpreauth_moddata moddata,
                  krb5_clpreauth_modreq modreq, krb5_get_init_creds_opt *opt,
                  krb5_clpreauth_callbacks cb, krb5_clpreauth_rock rock,
                  krb5_kdc_req *request, krb5_data *encoded_request_body,
                  krb5_data *encoded_previous_request, krb5_pa_data *pa_data,
                  krb5_prompter_fct prompter, void *prompter_data,
                  krb5_pa_data ***pa_data_out)
{
    krb5_error_code ret;
    yk_client_req *st = (yk_client_req *)modreq;
    krb5_pa_data **list = NULL;
    krb5_data enc = { 0 };
    int mode = YK_MODE_AUTO;

    *pa_data_out = NULL;
    if (st == NULL)
        return ENOMEM;
    if (st->sent) {
        krb5_set_error_message(ctx, YK_CLIENT_STOP,
                               "The KDC did not accept the YubiKey "
                               "request");
        return YK_CLIENT_STOP;
    }
    ret = yk_client_choose(ctx, opt, cb, rock, pa_data, &mode);
    if (ret)
        return ret;

    if (mode == YK_MODE_OTP)
        ret = yk_client_mode2(ctx, cb, rock, request, prompter,
                              prompter_data, &enc);
    else
        ret = yk_client_mode1(ctx, cb, rock, request, prompter,
                              prompter_data, &enc);
    if (ret)
        return ret;
    ret = yk_client_make_padata(&enc, &list);
    if (ret)
        return ret;

    st->sent = 1;
    /* A refusal by the KDC must not turn into a password-only login. */
    cb->disable_fallback(ctx, rock);
    *pa_data_out = list;
    return 0;
}

/* A KDC error after our request: never retry (a retry would need a new
 * OTP, and anything else would be a fallback). */
static krb5_error_code
yk_client_tryagain(krb5_context ctx, krb5_clpreauth_moddata moddata,
                   krb5_clpreauth_modreq modreq, krb5_get_init_creds_opt *opt,
                   krb5_clpreauth_callbacks cb, krb5_clpreauth_rock rock,
                   krb5_kdc_req *request, krb5_data *encoded_request_body,
                   krb5_data *encoded_previous_request,
                   krb5_preauthtype pa_type, krb5_error *error,
                   krb5_pa_data **error_padata, krb5_prompter_fct prompter,
                   void *prompter_data, krb5_pa_data ***pa_data_out)
{
    *pa_data_out = NULL;
    krb5_set_error_message(ctx, KRB5_PREAUTH_FAILED,
                           "The KDC refused the YubiKey request");
    return KRB5_PREAUTH_FAILED;
}

/*
 * libkrb5's trace entry point: exported by libkrb5 since 1.9 but declared
 * only in its private k5-trace.h.  Weak, so that a library without it
 * leaves it NULL and the module still loads.  It writes only when
 * tracing is on (KRB5_TRACE, krb5_set_trace_callback).
 */
extern void krb5int_trace(krb5_context context, const char *fmt, ...)
    __attribute__((weak));

/* init: no module data; under KRB5_TRACE, one line saying that the module
 * is loaded (its version and padata type), so an administrator can tell
 * a wrong module path in krb5.conf (krb5 ignores it silently). */
static krb5_error_code
yk_client_init(krb5_context ctx, krb5_clpreauth_moddata *moddata_out)
{
    *moddata_out = NULL;
    if (krb5int_trace != NULL) {
        krb5int_trace(ctx, "yubikey: krb5-yubikey {str} client module "
                      "loaded (padata {int}: password + YubiKey OTP, or "
                      "the OTP alone over FAST)", PACKAGE_VERSION,
                      (int)YK_PADATA_TYPE);
    }
    return 0;
}

/* The module's entry point: fill the clpreauth vtable (major version 1;
 * prep_questions too, whatever minor version the library names). */
krb5_error_code
clpreauth_yubikey_initvt(krb5_context ctx, int maj_ver, int min_ver,
                         krb5_plugin_vtable vtable);

krb5_error_code
clpreauth_yubikey_initvt(krb5_context ctx, int maj_ver, int min_ver,
                         krb5_plugin_vtable vtable)
{
    krb5_clpreauth_vtable vt;

    if (maj_ver != 1)
        return KRB5_PLUGIN_VER_NOTSUPP;
    vt = (krb5_clpreauth_vtable)vtable;
    vt->name = "yubikey";
    vt->pa_type_list = yk_client_pa_types;
    vt->init = yk_client_init;
    vt->flags = yk_client_flags;
    vt->request_init = yk_client_request_init;
    vt->request_fini = yk_client_request_fini;
    vt->process = yk_client_process;
    vt->tryagain = yk_client_tryagain;
    vt->gic_opts = yk_client_gic_opts;
    vt->prep_questions = yk_client_prep_questions;
    return 0;
}
