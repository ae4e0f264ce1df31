/* SPDX-License-Identifier: MIT */
/* ykresponder.c: answers libkrb5's "otp" responder question as SSSD does. */

/*
 * SSSD's krb5_child gets a TGT with krb5_get_init_creds_password, FAST
 * armor from a ccache (krb5_get_init_creds_opt_set_fast_ccache_name;
 * KRB5_FAST_REQUIRED for krb5_use_fast = demand) and a
 * responder callback; for the question "otp" it joins the first factor
 * (the password) and the second (the OTP) into one string and answers
 * krb5_responder_otp_set_answer(ctx, rctx, 0, value, NULL).  This program
 * does the same with no module of ours: MIT's built-in otp client turns
 * the KDC's PA-OTP-CHALLENGE (141) into the question and the answer into
 * a PA-OTP-REQUEST (142).  Use a stock krb5.conf.
 *
 * Standard input: line 1 the password (may be empty: the OTP alone),
 * line 2 the OTP.  --pin answers (ctx, rctx, 0, OTP, password) instead.
 * Before answering it checks the question: "otp" is asked, and its
 * challenge has exactly one tokeninfo with flags COLLECT_TOKEN only, no
 * challenge text, no length and no format (SSSD refuses a challenge text
 * and checks length and format against the whole joined string).
 *
 * Output: "question: QUESTIONS; tokeninfo flags=N vendor=V" and one line
 * "result: issued" (exit 0), "result: refused: MSG (KDC error N)" (exit
 * 1), "result: error: MSG" (exit 3) or "result: unexpected question: WHY"
 * (exit 5; nothing is answered).
 */

#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <krb5.h>

#include "secmem.h"

#define YKR_EXIT_ISSUED 0
#define YKR_EXIT_REFUSED 1
#define YKR_EXIT_ERROR 3
#define YKR_EXIT_QUESTION 5

#define YKR_FACTOR_LEN 256           /* longest factor read from stdin */
#define YKR_QUESTIONS_LEN 256        /* the question list as printed */
#define YKR_WHY_LEN 256              /* why a question was unexpected */
#define YKR_KDC_ERR_MAX 127          /* KRB-ERROR codes are 0..127 */

/* The command line, the two factors and what the responder saw. */
typedef struct {
    const char *principal;
    const char *armor;               /* FAST armor ccache */
    const char *out;                 /* where the TGT goes, or NULL */
    int pin;                         /* password in the pin argument */
    char password[YKR_FACTOR_LEN];
    char otp[YKR_FACTOR_LEN];
    char value[2 * YKR_FACTOR_LEN];  /* password || OTP */
    int asked;                       /* the responder ran */
    int answered;                    /* ... and answered "otp" */
    char why[YKR_WHY_LEN];           /* set when the question is wrong */
} ykr_state;

/* Print the usage text to f. */
static void
ykr_usage(FILE *f)
{
    fprintf(f,
"usage: ykresponder --armor CCACHE [--out CCACHE] [--pin] PRINCIPAL\n"
"Reads the password (line 1, may be empty) and the OTP (line 2) from\n"
"standard input and answers the \"otp\" responder question with\n"
"password||OTP as the value (SSSD's krb5_child), or with --pin the OTP as\n"
"the value and the password as the pin.  Prints the question, then\n"
"'result: issued' (exit 0), 'result: refused: MSG (KDC error N)' (exit\n"
"1), 'result: error: MSG' (exit 3) or 'result: unexpected question: WHY'\n"
"(exit 5).  Use a krb5.conf that loads no module of this project.\n");
}

/* Read one line of f (newline dropped) into buf of size n; -1 when it is
 * missing or too long. */
static int
ykr_read_line(FILE *f, char *buf, size_t n)
{
    size_t len;

    if (fgets(buf, (int)n, f) == NULL)
        return -1;
    len = strlen(buf);
    if (len > 0 && buf[len - 1] == '\n')
        buf[--len] = '\0';
    else if (!feof(f))
        return -1;
    if (len > 0 && buf[len - 1] == '\r')
        buf[--len] = '\0';
    return 0;
}

/* Check the OTP challenge of rctx; on a mismatch describe it in s->why.
 * Prints the question line either way. */
static int
ykr_check_question(krb5_context ctx, krb5_responder_context rctx,
                   ykr_state *s)
{
    const char *const *qs;
    krb5_responder_otp_challenge *chl = NULL;
    krb5_responder_otp_tokeninfo *ti;
    char list[YKR_QUESTIONS_LEN] = "";
    size_t i, n = 0;
    int has_otp = 0, ok = -1;

    qs = krb5_responder_list_questions(ctx, rctx);
    for (i = 0; qs != NULL && qs[i] != NULL; i++) {
        if (strcmp(qs[i], KRB5_RESPONDER_QUESTION_OTP) == 0)
            has_otp = 1;
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
                 i > 0 ? " " : "", qs[i]);
    }
    if (!has_otp) {
        printf("question: %s\n", list[0] ? list : "(none)");
        snprintf(s->why, sizeof(s->why), "no \"otp\" question (%.200s)",
                 list[0] ? list : "none");
        return -1;
    }
    if (krb5_responder_otp_get_challenge(ctx, rctx, &chl) != 0 ||
        chl == NULL) {
        printf("question: %s\n", list);
        snprintf(s->why, sizeof(s->why), "the otp challenge cannot be "
                 "decoded");
        return -1;
    }
    while (chl->tokeninfo != NULL && chl->tokeninfo[n] != NULL)
        n++;
    if (n == 0) {
        printf("question: %s; no tokeninfo\n", list);
        snprintf(s->why, sizeof(s->why), "no tokeninfo");
        goto cleanup;
    }
    ti = chl->tokeninfo[0];
    printf("question: %s; tokeninfo flags=%d vendor=%s\n", list,
           (int)ti->flags, ti->vendor != NULL ? ti->vendor : "-");
    if (n != 1)
        snprintf(s->why, sizeof(s->why), "%zu tokeninfos", n);
    else if (ti->flags != KRB5_RESPONDER_OTP_FLAGS_COLLECT_TOKEN)
        snprintf(s->why, sizeof(s->why), "flags %d, not COLLECT_TOKEN (%d)",
                 (int)ti->flags, KRB5_RESPONDER_OTP_FLAGS_COLLECT_TOKEN);
    else if (ti->challenge != NULL)
        snprintf(s->why, sizeof(s->why), "a challenge text (SSSD refuses "
                 "it)");
    else if (ti->length != -1 || ti->format != -1)
        snprintf(s->why, sizeof(s->why), "length %d / format %d (SSSD "
                 "checks them against password||OTP)", (int)ti->length,
                 (int)ti->format);
    else
        ok = 0;

cleanup:
    krb5_responder_otp_challenge_free(ctx, rctx, chl);
    return ok;
}

/* The responder: check the question, then answer "otp" as krb5_child
 * does.  A wrong question is answered with an error, which ends the
 * exchange. */
static krb5_error_code
ykr_responder(krb5_context ctx, void *data, krb5_responder_context rctx)
{
    ykr_state *s = data;
    size_t pw_len = strlen(s->password), otp_len = strlen(s->otp);

    s->asked++;
    if (s->asked > 1) {
        snprintf(s->why, sizeof(s->why), "asked a second time");
        return KRB5_LIBOS_CANTREADPWD;
    }
    if (ykr_check_question(ctx, rctx, s) != 0)
        return KRB5_LIBOS_CANTREADPWD;
    s->answered = 1;
    if (s->pin)
        return krb5_responder_otp_set_answer(ctx, rctx, 0, s->otp,
                                             pw_len > 0 ? s->password :
                                             NULL);
    memcpy(s->value, s->password, pw_len);
    memcpy(s->value + pw_len, s->otp, otp_len + 1);
    return krb5_responder_otp_set_answer(ctx, rctx, 0, s->value, NULL);
}

/* Print the result line for ret and return the exit code. */
static int
ykr_result(krb5_context ctx, krb5_error_code ret, const ykr_state *s)
{
    const char *msg;
    int code;

    if (s->why[0] != '\0') {
        printf("result: unexpected question: %s\n", s->why);
        return YKR_EXIT_QUESTION;
    }
    if (ret == 0) {
        printf("result: issued\n");
        return YKR_EXIT_ISSUED;
    }
    msg = krb5_get_error_message(ctx, ret);
    if (ret > ERROR_TABLE_BASE_krb5 &&
        ret <= ERROR_TABLE_BASE_krb5 + YKR_KDC_ERR_MAX) {
        printf("result: refused: %s (KDC error %ld)\n", msg,
               (long)(ret - ERROR_TABLE_BASE_krb5));
        code = YKR_EXIT_REFUSED;
    } else {
        printf("result: error: %s%s\n", msg,
               s->asked ? "" : " (no responder question)");
        code = YKR_EXIT_ERROR;
    }
    krb5_free_error_message(ctx, msg);
    return code;
}

/* Get the TGT with the armor, the responder and no prompter (the
 * password argument is NULL, as no password question is expected). */
static int
ykr_run(ykr_state *s)
{
    krb5_error_code ret;
    krb5_context ctx = NULL;
    krb5_principal client = NULL;
    krb5_get_init_creds_opt *opt = NULL;
    krb5_ccache out = NULL;
    krb5_creds creds;
    int code = YKR_EXIT_ERROR;

    memset(&creds, 0, sizeof(creds));
    ret = krb5_init_context(&ctx);
    if (ret) {
        printf("result: error: cannot initialise krb5 (%d)\n", (int)ret);
        return YKR_EXIT_ERROR;
    }
    ret = krb5_parse_name(ctx, s->principal, &client);
    if (ret == 0)
        ret = krb5_get_init_creds_opt_alloc(ctx, &opt);
    if (ret == 0)
        ret = krb5_get_init_creds_opt_set_fast_ccache_name(ctx, opt,
                                                           s->armor);
    if (ret == 0)        /* SSSD's krb5_use_fast = demand */
        ret = krb5_get_init_creds_opt_set_fast_flags(ctx, opt,
                                                     KRB5_FAST_REQUIRED);
    if (ret == 0)
        ret = krb5_get_init_creds_opt_set_responder(ctx, opt, ykr_responder,
                                                    s);
    if (ret == 0 && s->out != NULL) {
        ret = krb5_cc_resolve(ctx, s->out, &out);
        if (ret == 0)
            ret = krb5_cc_initialize(ctx, out, client);
        if (ret == 0)
            ret = krb5_get_init_creds_opt_set_out_ccache(ctx, opt, out);
    }
    if (ret) {
        code = ykr_result(ctx, ret, s);
        goto cleanup;
    }
    ret = krb5_get_init_creds_password(ctx, &creds, client, NULL, NULL,
                                       NULL, 0, NULL, opt);
    code = ykr_result(ctx, ret, s);

cleanup:
    krb5_free_cred_contents(ctx, &creds);
    krb5_get_init_creds_opt_free(ctx, opt);
    if (out != NULL)
        krb5_cc_close(ctx, out);
    krb5_free_principal(ctx, client);
    krb5_free_context(ctx);
    return code;
}

int
main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "armor", required_argument, NULL, 'a' },
        { "out", required_argument, NULL, 'c' },
        { "pin", no_argument, NULL, 'p' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    static ykr_state s;
    int c, code = YKR_EXIT_ERROR;

    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'a': s.armor = optarg; break;
        case 'c': s.out = optarg; break;
        case 'p': s.pin = 1; break;
        case 'h': ykr_usage(stdout); return 0;
        default: ykr_usage(stderr); return YKR_EXIT_ERROR;
        }
    }
    if (optind != argc - 1 || s.armor == NULL) {
        ykr_usage(stderr);
        return YKR_EXIT_ERROR;
    }
    s.principal = argv[optind];
    if (ykr_read_line(stdin, s.password, sizeof(s.password)) != 0 ||
        ykr_read_line(stdin, s.otp, sizeof(s.otp)) != 0 ||
        s.otp[0] == '\0') {
        fprintf(stderr, "ykresponder: standard input must hold the "
                "password line and a non-empty OTP line\n");
        goto cleanup;
    }
    code = ykr_run(&s);

cleanup:
    yk_zap(s.password, sizeof(s.password));
    yk_zap(s.otp, sizeof(s.otp));
    yk_zap(s.value, sizeof(s.value));
    return code;
}
