/* SPDX-License-Identifier: MIT */
/* yktestclient.c: a test client that sends what stock kinit never sends. */

/*
 * It gets initial credentials with the krb5_init_creds step API (the
 * exchange krb5_get_init_creds_password runs, without its hidden second
 * try against the primary KDC) and registers its own in-process clpreauth
 * module "yktest" for padata type -22859 (k5_plugin_register), which
 * answers the KDC's hint (or, with --optimistic, the first AS-REQ) with
 * the request chosen with --send: correct ones
 * (mode 1 and mode 2), unarmored mode 2, malformed, truncated or doubled
 * padata, a stale time, a wrong nonce, a correct one after an encrypted
 * timestamp made with a wrong password (a password guess that our padata
 * must not hide from lockout), and a verbatim replay of an accepted
 * AS-REQ (through the KDC send hook).  Only our mechanism is allowed in
 * the exchange (the "pa_type" configuration of an in-memory input ccache),
 * so a refusal never turns into an encrypted-timestamp login.
 *
 * The otp-* kinds speak RFC 6560 instead, as stock clients do: a second
 * in-process module "yktest-otp" for padata 141 answers the KDC's
 * PA-OTP-CHALLENGE with a PA-OTP-REQUEST (142) built with the project's
 * codec (shared/rfc6560.h): encData is PA-OTP-ENC-REQUEST{nonce} under
 * the FAST armor key (cb->fast_armor, key usage 45), otp-value is the
 * password (if any) followed by the OTP.  Padata inside FAST is
 * encrypted, so the bad requests (garbage, malformed, truncated, wrong
 * nonce or key, a nonce of an earlier exchange, unarmored, over-long)
 * are made here, not in the send hook.  Registered before libkrb5's
 * built-in modules, it takes 141 from MIT's own "otp" module (the trace
 * says "conflicts with module"); the exchange is restricted to 141.
 *
 * Output: one line "result: issued", "result: refused: <message> (KDC
 * error N)", "result: no reply", "result: resent ..." or "result: error:
 * <message>" per exchange; exit 0, 1, 2, 4 or 3 accordingly (for --send
 * replay*: the replay's).  A "hint: ..." line shows the KDC's hint, a
 * "challenge: ..." line its PA-OTP-CHALLENGE.
 *
 * krb5kdc answers a byte-identical request seen in the last two minutes
 * from its lookaside cache, before any preauth module runs; the replay
 * kinds report that as "resent".  To reach the KDC module, replay to
 * another KDC (--replay-config) or after the cache entry went stale
 * (--replay-wait 121; stale entries are purged when krb5kdc stores the
 * next request, here the replay exchange's first, padata-less AS-REQ).
 */

#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <krb5.h>
#include <krb5/clpreauth_plugin.h>
#include <profile.h>

#include "emu.h"
#include "errors.h"
#include "padata.h"
#include "rfc6560.h"
#include "secmem.h"
#include "ykclient_common.h"

/*
 * libkrb5 exports k5_plugin_register (MIT's own tests use it) but installs
 * no header for it; the interface number is PLUGIN_INTERFACE_CLPREAUTH of
 * krb5 1.20's k5-int.h.
 */
krb5_error_code k5_plugin_register(krb5_context context, int interface_id,
                                   const char *modname,
                                   krb5_plugin_initvt_fn module);
#define YKT_INTERFACE_CLPREAUTH 2

#define YKT_EXIT_ISSUED 0
#define YKT_EXIT_REFUSED 1
#define YKT_EXIT_NO_REPLY 2
#define YKT_EXIT_ERROR 3
#define YKT_EXIT_RESENT 4            /* the lookaside cache's old reply */

#define YKT_STALE_SECONDS 600        /* --send stale: 10 minutes back */
#define YKT_PASSWORD_LEN 256         /* longest password accepted */
#define YKT_ABORT ECANCELED          /* recv hook: stop after the replay */
#define YKT_ASN1_AS_REP 0x6b         /* [APPLICATION 11] */
#define YKT_ASN1_KRB_ERROR 0x7e      /* [APPLICATION 30] */
#define YKT_WRONG_SUFFIX "x"         /* wrong-ts: password + this */
#define YKT_GENTIME_LEN 15           /* "YYYYMMDDHHMMSSZ" */
#define YKT_DER_MAX 256              /* wrong-ts: the EncryptedData */
#define YKT_LONG_PAD 4096            /* otp-long: default --pad */
#define YKT_PAD_MAX 65000            /* --pad: a DER length below 64 KiB */
#define YKT_NONCE_LEN 32             /* otp-unarmored: its made-up nonce */
#define YKT_DER_HEAD_MAX 4           /* tag and a length below 64 KiB */
#define YKT_UNKNOWN_FIELD 0x8e       /* otp-malformed: [14], not in 6560 */

/* What --send can ask for. */
enum ykt_kind_id {
    K_GOOD2FA, K_GOODOTP, K_UNARMORED_OTP, K_MALFORMED, K_TRUNCATED,
    K_DOUBLE, K_STALE, K_WRONG_NONCE, K_WRONG_TS, K_REPLAY, K_REPLAY_OTP,
    K_OTP_GOOD, K_OTP_GARBAGE, K_OTP_MALFORMED, K_OTP_TRUNCATED,
    K_OTP_WRONG_NONCE, K_OTP_WRONG_KEY, K_OTP_REUSED_NONCE,
    K_OTP_UNARMORED, K_OTP_LONG
};

/* One --send kind: its name, the request mode it uses, whether it runs a
 * second (replayed) exchange, whether it speaks RFC 6560. */
typedef struct {
    const char *name;
    enum ykt_kind_id id;
    int mode;                /* YK_MODE_2FA, YK_MODE_OTP, 0: none; RFC
                              * 6560: YK_MODE_OTP when it carries the
                              * OTP (the password is optional) */
    int replay;              /* two exchanges, the second replayed */
    int rfc6560;             /* answers 141 with a 142 */
} ykt_kind;

static const ykt_kind ykt_kinds[] = {
    { "good2fa", K_GOOD2FA, YK_MODE_2FA, 0, 0 },
    { "goodotp", K_GOODOTP, YK_MODE_OTP, 0, 0 },
    { "unarmored-otp", K_UNARMORED_OTP, YK_MODE_OTP, 0, 0 },
    { "malformed", K_MALFORMED, 0, 0, 0 },
    { "truncated", K_TRUNCATED, YK_MODE_2FA, 0, 0 },
    { "double", K_DOUBLE, YK_MODE_2FA, 0, 0 },
    { "stale", K_STALE, YK_MODE_2FA, 0, 0 },
    { "wrong-nonce", K_WRONG_NONCE, YK_MODE_2FA, 0, 0 },
    { "wrong-ts", K_WRONG_TS, YK_MODE_2FA, 0, 0 },
    { "replay", K_REPLAY, YK_MODE_2FA, 1, 0 },
    { "replay-otp", K_REPLAY_OTP, YK_MODE_OTP, 1, 0 },
    { "otp-good", K_OTP_GOOD, YK_MODE_OTP, 0, 1 },
    { "otp-garbage", K_OTP_GARBAGE, 0, 0, 1 },
    { "otp-malformed", K_OTP_MALFORMED, YK_MODE_OTP, 0, 1 },
    { "otp-truncated", K_OTP_TRUNCATED, YK_MODE_OTP, 0, 1 },
    { "otp-wrong-nonce", K_OTP_WRONG_NONCE, YK_MODE_OTP, 0, 1 },
    { "otp-wrong-key", K_OTP_WRONG_KEY, YK_MODE_OTP, 0, 1 },
    { "otp-reused-nonce", K_OTP_REUSED_NONCE, YK_MODE_OTP, 0, 1 },
    { "otp-unarmored", K_OTP_UNARMORED, YK_MODE_OTP, 0, 1 },
    { "otp-long", K_OTP_LONG, YK_MODE_OTP, 0, 1 },
};

/* What came back for the request that carried our padata. */
enum ykt_answer {
    ANS_UNSEEN,              /* our request never went out */
    ANS_NO_REPLY,            /* sent, nothing came back */
    ANS_AS_REP,              /* a ticket */
    ANS_ERROR,               /* a KRB-ERROR */
    ANS_OTHER                /* something else */
};

/* Command-line settings. */
typedef struct {
    const char *principal;
    const char *password_file;
    const char *emu_file;
    const char *armor;
    const char *out;
    const char *replay_config;
    unsigned int replay_wait;
    size_t pad;              /* otp-long: bytes of 'x' before the value */
    const char *pin;         /* --pin: otp-pin of the otp-* kinds, or NULL */
    const ykt_kind *kind;
    int optimistic;
    int have_password;
    char password[YKT_PASSWORD_LEN];
    char otp[YK_OTP_BUF];
    size_t otp_len;
} ykt_args;

/* What the module and the hooks share with main (one exchange at a time;
 * the library calls them from this thread). */
typedef struct {
    const ykt_args *args;
    int produced;            /* our padata went into a request */
    int capture;             /* the next AS-REQ sent carries our padata */
    int ours_in_flight;      /* the AS-REQ in flight carries our padata */
    krb5_data captured;      /* the last AS-REQ that carried our padata */
    int substitute;          /* send captured in place of our next one */
    int substituted;
    enum ykt_answer answer;  /* the KDC's answer to our padata */
    int answer_error;        /* its KRB-ERROR code (ANS_ERROR) */
    krb5_data reply;         /* that answer's bytes */
    krb5_data first_reply;   /* the first exchange's, for replays */
    int take_nonce;          /* otp-reused-nonce, first exchange: keep
                              * the challenge's nonce, send nothing */
    krb5_data taken_nonce;   /* that nonce */
} ykt_state;

static ykt_state ykt;
static krb5_preauthtype ykt_pa_types[] = { YK_PADATA_TYPE, 0 };
static krb5_preauthtype ykt_otp_pa_types[] = { KRB5_PADATA_OTP_CHALLENGE, 0 };

/* Print the usage text to f. */
static void
ykt_usage(FILE *f)
{
    fprintf(f,
"usage: yktestclient [options] PRINCIPAL\n"
"  --password PW | --password-file FILE   the password (mode 1 kinds)\n"
"  --otp OTP | --emu STATEFILE   the OTP, or the next one of an emulated\n"
"                                token (its state file is saved)\n"
"  --armor CCACHE    FAST armor ccache (ignored by unarmored-otp and\n"
"                    otp-unarmored)\n"
"  --out CCACHE      store the TGT there\n"
"  --optimistic      send our padata in the first AS-REQ instead of\n"
"                    answering the KDC's hint\n"
"  --send KIND       good2fa (default), goodotp, unarmored-otp, malformed,\n"
"                    truncated, double, stale, wrong-nonce, wrong-ts,\n"
"                    replay, replay-otp; RFC 6560: otp-good, otp-garbage,\n"
"                    otp-malformed, otp-truncated, otp-wrong-nonce,\n"
"                    otp-wrong-key, otp-reused-nonce, otp-unarmored,\n"
"                    otp-long\n"
"  --pin PIN         the otp-* kinds: send PIN as otp-pin (the password\n"
"                    of policy 2fa, as RFC 6560 allows)\n"
"  --pad N           otp-long: N bytes of 'x' before the value (default\n"
"                    %d, at most %d)\n"
"  --replay-config KRB5CONF   send the replay with this krb5.conf (e.g.\n"
"                    naming another KDC of the realm)\n"
"  --replay-wait SECONDS      wait before the replay\n"
"Kinds: good2fa/goodotp are correct mode 1/mode 2 requests; unarmored-otp\n"
"is goodotp without armor; malformed has the right magic and version but\n"
"impossible lengths; truncated is good2fa minus its last byte; double puts\n"
"two good2fa padata in one request; stale is good2fa dated %d s back;\n"
"wrong-nonce is good2fa with nonce+1; wrong-ts is good2fa preceded, in\n"
"the same request, by a PA-ENC-TIMESTAMP made with a wrong password (the\n"
"password with \"%s\" appended; first, since the KDC keeps the last\n"
"mechanism's error); replay/replay-otp send a good\n"
"request, then the byte-identical AS-REQ again in a second exchange\n"
"(in place of its request carrying our padata).\n"
"RFC 6560 kinds answer the KDC's PA-OTP-CHALLENGE (141, armored requests\n"
"only: give --armor) with a PA-OTP-REQUEST (142) whose otp-value is the\n"
"password, if given, then the OTP: otp-good is correct (as stock kinit\n"
"sends it); otp-garbage is bytes that are no DER at all; otp-malformed is\n"
"otp-good with a field RFC 6560 does not have ([14]) appended; otp-\n"
"truncated is otp-good minus its last byte; otp-wrong-nonce encrypts the\n"
"challenge's nonce with its last bit flipped; otp-wrong-key encrypts it\n"
"under a random key instead of the armor key; otp-reused-nonce runs a\n"
"first exchange that only takes its challenge's nonce (line 'challenge:\n"
"nonce taken', nothing sent), then sends that nonce in a second exchange;\n"
"otp-unarmored sends a 142 (a made-up nonce under a random key) in the\n"
"first AS-REQ, without armor (--optimistic implied, --armor ignored);\n"
"otp-long is otp-good with --pad bytes before the value, over the\n"
"codec's limits (built by hand: the codec refuses to encode it).\n"
"Prints 'result: issued' (exit 0), 'result: refused: MSG' (exit 1),\n"
"'result: no reply' (exit 2) or 'result: error: MSG' (exit 3), one line\n"
"per exchange (replay kinds exit with the replay's).  krb5kdc answers a\n"
"byte-identical request of the last 2 minutes from its lookaside cache\n"
"before any preauth module sees it: 'result: resent' (exit 4); replay to\n"
"another KDC, or wait 121 s (not with --optimistic: the purge of stale\n"
"entries needs the replay exchange's first AS-REQ), to reach the module.\n"
"A KDC that answers\n"
"DISCARD sends nothing: that shows as 'no reply', after libkrb5's own\n"
"retry schedule (krb5 1.20 has no timeout setting; over TCP the KDC\n"
"closes the connection and the answer comes at once).  Use a krb5.conf\n"
"that does not load yubikey_client.so.\n", YKT_LONG_PAD, YKT_PAD_MAX,
            YKT_STALE_SECONDS, YKT_WRONG_SUFFIX);
}

/* Read the first line of path (newline dropped) into the fixed password
 * buffer of a.  The buffer is wiped by main on every path. */
static int
ykt_read_password(ykt_args *a, const char *path)
{
    FILE *f = NULL;
    size_t n;

    f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "yktestclient: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (fgets(a->password, sizeof(a->password), f) == NULL)
        a->password[0] = '\0';
    fclose(f);
    n = strlen(a->password);
    while (n > 0 && (a->password[n - 1] == '\n' ||
                     a->password[n - 1] == '\r'))
        a->password[--n] = '\0';
    a->have_password = 1;
    return 0;
}

/* Take the OTP: --otp as given, or the next OTP of the emulated token
 * (whose state file is saved at once, as a device's counter moves). */
static int
ykt_take_otp(ykt_args *a, const char *otp_arg)
{
    krb5_error_code ret;
    yk_emu emu;
    size_t n;

    if (otp_arg != NULL) {
        n = strlen(otp_arg);
        if (n >= sizeof(a->otp)) {
            fprintf(stderr, "yktestclient: --otp is too long\n");
            return -1;
        }
        memcpy(a->otp, otp_arg, n + 1);
        a->otp_len = n;
        return 0;
    }
    if (a->emu_file == NULL)
        return 0;
    memset(&emu, 0, sizeof(emu));
    ret = yk_emu_load(a->emu_file, &emu);
    if (ret == 0)
        ret = yk_emu_next(&emu, a->otp);
    if (ret == 0)
        ret = yk_emu_save(&emu, a->emu_file);
    yk_emu_clear(&emu);
    if (ret) {
        fprintf(stderr, "yktestclient: %s: %s\n", a->emu_file,
                yk_strerror(ret));
        yk_zap(a->otp, sizeof(a->otp));
        return -1;
    }
    a->otp_len = strlen(a->otp);
    return 0;
}

/* Print the KDC's hint, if this padata is one. */
static void
ykt_show_hint(const krb5_pa_data *pa)
{
    krb5_data d;
    uint8_t flags = 0;

    if (pa == NULL || pa->length == 0)
        return;
    d.magic = KV5M_DATA;
    d.length = pa->length;
    d.data = (char *)pa->contents;
    if (yk_padata_decode_hint(&d, &flags) != 0) {
        printf("hint: malformed\n");
        return;
    }
    printf("hint: flags 0x%02x%s%s\n", flags,
           (flags & YK_HINT_PASSWORD_BOUND) ? " password-bound" : "",
           (flags & YK_HINT_OTP_ALONE_OK) ? " otp-alone" : "");
    fflush(stdout);
}

/* A mode 1 request into *enc_out (malloc'd): the OTP sealed under the AS
 * key with the preauth time moved by dt seconds and the nonce by dn. */
static krb5_error_code
ykt_mode1(krb5_context ctx, krb5_clpreauth_callbacks cb,
          krb5_clpreauth_rock rock, krb5_kdc_req *request, long dt,
          uint32_t dn, krb5_data *enc_out)
{
    krb5_error_code ret;
    krb5_keyblock *as_key = NULL;
    krb5_timestamp now = 0;
    krb5_int32 usec = 0;
    yk_bound b;
    yk_request req;

    memset(&b, 0, sizeof(b));
    memset(&req, 0, sizeof(req));
    ret = cb->get_as_key(ctx, rock, &as_key);
    if (ret)
        goto cleanup;
    ret = cb->get_preauth_time(ctx, rock, TRUE, &now, &usec);
    if (ret)
        goto cleanup;
    b.sec = (uint32_t)((long)now + dt);
    b.usec = (uint32_t)usec;
    b.nonce = (uint32_t)request->nonce + dn;
    memcpy(b.otp, ykt.args->otp, ykt.args->otp_len);
    b.otp_len = ykt.args->otp_len;
    ret = yk_padata_seal(ctx, as_key, &b, &req);
    if (ret == 0)
        ret = yk_padata_encode_request(&req, enc_out);

cleanup:
    yk_zap(&b, sizeof(b));
    yk_request_clear(&req, 1);
    return ret;
}

/* A mode 2 request into *enc_out (malloc'd); with armor, the armor key
 * becomes the AS key as the real client does. */
static krb5_error_code
ykt_mode2(krb5_context ctx, krb5_clpreauth_callbacks cb,
          krb5_clpreauth_rock rock, krb5_data *enc_out)
{
    krb5_error_code ret;
    krb5_keyblock *armor = NULL;
    yk_request req;

    memset(&req, 0, sizeof(req));
    req.mode = YK_MODE_OTP;
    memcpy(req.otp, ykt.args->otp, ykt.args->otp_len);
    req.otp_len = ykt.args->otp_len;
    ret = yk_padata_encode_request(&req, enc_out);
    yk_request_clear(&req, 0);
    if (ret)
        return ret;
    armor = cb->fast_armor(ctx, rock);
    if (armor != NULL)
        ret = cb->set_as_key(ctx, rock, armor);
    return ret;
}

/* Bytes of our type that no decoder may accept: the right magic, version
 * and mode 1, then a ciphertext length beyond both the limit and the
 * bytes present. */
static krb5_error_code
ykt_malformed(krb5_data *enc_out)
{
    static const unsigned char bad[] = {
        0x59, 0x4b, 0x01, 0x01, 0x00, 0x00, 0x00, 0x12, 0xff, 0xff,
        0xde, 0xad, 0xbe, 0xef, 0x00, 0x01, 0x02, 0x03
    };

    enc_out->data = malloc(sizeof(bad));
    if (enc_out->data == NULL)
        return ENOMEM;
    memcpy(enc_out->data, bad, sizeof(bad));
    enc_out->length = sizeof(bad);
    enc_out->magic = KV5M_DATA;
    return 0;
}

/* Prepend len bytes of p to the DER being written backwards into buf
 * (free space: buf[0 .. *pos)); -1 when it does not fit. */
static int
ykt_der_put(unsigned char *buf, size_t *pos, const void *p, size_t len)
{
    if (len > *pos)
        return -1;
    *pos -= len;
    memcpy(buf + *pos, p, len);
    return 0;
}

/* Prepend a tag and the DER length len (below 65536). */
static int
ykt_der_head(unsigned char *buf, size_t *pos, unsigned char tag, size_t len)
{
    unsigned char h[4];
    size_t n = 0;

    h[n++] = tag;
    if (len >= 0x100) {
        h[n++] = 0x82;
        h[n++] = (unsigned char)(len >> 8);
    } else if (len >= 0x80) {
        h[n++] = 0x81;
    }
    h[n++] = (unsigned char)len;
    return ykt_der_put(buf, pos, h, n);
}

/* Prepend an INTEGER holding v (minimal two's complement). */
static int
ykt_der_int(unsigned char *buf, size_t *pos, int32_t v)
{
    unsigned char b[4];
    size_t n = 4, i;

    for (i = 0; i < 4; i++)
        b[i] = (unsigned char)((uint32_t)v >> (24 - 8 * i));
    while (n > 1 && ((b[4 - n] == 0x00 && !(b[5 - n] & 0x80)) ||
                     (b[4 - n] == 0xff && (b[5 - n] & 0x80))))
        n--;
    if (ykt_der_put(buf, pos, b + 4 - n, n) != 0)
        return -1;
    return ykt_der_head(buf, pos, 0x02, n);
}

/* A PA-ENC-TIMESTAMP (RFC 4120 5.2.7.2) under the key of a wrong password
 * (the password with YKT_WRONG_SUFFIX appended, for the request's enctype
 * and the principal's default salt) into *enc_out (malloc'd):
 * EncryptedData { etype [0], cipher [2] } of PA-ENC-TS-ENC
 * { patimestamp [0] }. */
static krb5_error_code
ykt_wrong_ts(krb5_context ctx, krb5_clpreauth_callbacks cb,
             krb5_clpreauth_rock rock, krb5_kdc_req *request,
             krb5_data *enc_out)
{
    krb5_error_code ret;
    krb5_keyblock key = { 0 };
    krb5_data salt = { 0 }, pw, plain;
    krb5_enc_data ct = { 0 };
    krb5_timestamp now = 0;
    krb5_int32 usec = 0;
    krb5_enctype etype = cb->get_etype(ctx, rock);
    char wrong[YKT_PASSWORD_LEN + sizeof(YKT_WRONG_SUFFIX)];
    unsigned char ts[6 + YKT_GENTIME_LEN + 1], der[YKT_DER_MAX];
    size_t clen, pos = sizeof(der), mark;
    time_t t;
    struct tm tm;

    /* PA-ENC-TS-ENC with the time libkrb5 uses for preauth. */
    ret = cb->get_preauth_time(ctx, rock, TRUE, &now, &usec);
    if (ret)
        goto cleanup;
    t = (time_t)(uint32_t)now;
    if (gmtime_r(&t, &tm) == NULL ||
        strftime((char *)ts + 6, YKT_GENTIME_LEN + 1, "%Y%m%d%H%M%SZ",
                 &tm) != YKT_GENTIME_LEN) {
        ret = EINVAL;
        goto cleanup;
    }
    memcpy(ts, "\x30\x13\xa0\x11\x18\x0f", 6);
    plain.magic = KV5M_DATA;
    plain.data = (char *)ts;
    plain.length = 6 + YKT_GENTIME_LEN;

    /* The key a wrong password gives. */
    snprintf(wrong, sizeof(wrong), "%s%s", ykt.args->password,
             YKT_WRONG_SUFFIX);
    pw.magic = KV5M_DATA;
    pw.data = wrong;
    pw.length = (unsigned int)strlen(wrong);
    ret = krb5_principal2salt(ctx, request->client, &salt);
    if (ret == 0)
        ret = krb5_c_string_to_key(ctx, etype, &pw, &salt, &key);
    if (ret == 0)
        ret = krb5_c_encrypt_length(ctx, etype, plain.length, &clen);
    if (ret)
        goto cleanup;
    ct.ciphertext.data = malloc(clen);
    if (ct.ciphertext.data == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    ct.ciphertext.length = (unsigned int)clen;
    ret = krb5_c_encrypt(ctx, &key, KRB5_KEYUSAGE_AS_REQ_PA_ENC_TS, NULL,
                         &plain, &ct);
    if (ret)
        goto cleanup;

    /* EncryptedData, written backwards. */
    if (ykt_der_put(der, &pos, ct.ciphertext.data, clen) != 0 ||
        ykt_der_head(der, &pos, 0x04, clen) != 0 ||
        ykt_der_head(der, &pos, 0xa2, sizeof(der) - pos) != 0) {
        ret = EOVERFLOW;
        goto cleanup;
    }
    mark = pos;
    if (ykt_der_int(der, &pos, etype) != 0 ||
        ykt_der_head(der, &pos, 0xa0, mark - pos) != 0 ||
        ykt_der_head(der, &pos, 0x30, sizeof(der) - pos) != 0) {
        ret = EOVERFLOW;
        goto cleanup;
    }
    enc_out->data = malloc(sizeof(der) - pos);
    if (enc_out->data == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    memcpy(enc_out->data, der + pos, sizeof(der) - pos);
    enc_out->length = (unsigned int)(sizeof(der) - pos);
    enc_out->magic = KV5M_DATA;

cleanup:
    yk_zap(wrong, sizeof(wrong));
    krb5_free_keyblock_contents(ctx, &key);
    krb5_free_data_contents(ctx, &salt);
    free(ct.ciphertext.data);
    return ret;
}

/* Append enc (ownership taken) as a padata of type to the list *list of
 * *n items. */
static krb5_error_code
ykt_add_padata(krb5_pa_data ***list, size_t *n, krb5_preauthtype type,
               krb5_data *enc)
{
    krb5_pa_data **l = NULL, *pa = NULL;

    pa = calloc(1, sizeof(*pa));
    l = realloc(*list, (*n + 2) * sizeof(*l));
    if (pa == NULL || l == NULL) {
        free(pa);
        if (l != NULL)
            *list = l;
        yk_data_free(enc);
        return ENOMEM;
    }
    pa->magic = KV5M_PA_DATA;
    pa->pa_type = type;
    pa->length = enc->length;
    pa->contents = (krb5_octet *)enc->data;
    enc->data = NULL;
    l[(*n)++] = pa;
    l[*n] = NULL;
    *list = l;
    return 0;
}

/* The test module's process: build the padata --send asked for, once per
 * exchange, and disable fallback as the real client does. */
static krb5_error_code
ykt_process(krb5_context ctx, krb5_clpreauth_moddata moddata,
            krb5_clpreauth_modreq modreq, krb5_get_init_creds_opt *opt,
            krb5_clpreauth_callbacks cb, krb5_clpreauth_rock rock,
            krb5_kdc_req *request, krb5_data *encoded_request_body,
            krb5_data *encoded_previous_request, krb5_pa_data *pa_data,
            krb5_prompter_fct prompter, void *prompter_data,
            krb5_pa_data ***pa_data_out)
{
    krb5_error_code ret = 0;
    krb5_pa_data **list = NULL;
    krb5_data enc = { 0 }, enc2 = { 0 };
    krb5_preauthtype type = YK_PADATA_TYPE;
    size_t n = 0, i;

    *pa_data_out = NULL;
    ykt_show_hint(pa_data);
    if (ykt.produced) {
        krb5_set_error_message(ctx, KRB5_PREAUTH_FAILED, "yktest: the KDC "
                               "asked again after our request");
        return KRB5_PREAUTH_FAILED;
    }
    switch (ykt.args->kind->id) {
    case K_GOOD2FA:
    case K_REPLAY:
        ret = ykt_mode1(ctx, cb, rock, request, 0, 0, &enc);
        break;
    case K_STALE:
        ret = ykt_mode1(ctx, cb, rock, request, -YKT_STALE_SECONDS, 0, &enc);
        break;
    case K_WRONG_NONCE:
        ret = ykt_mode1(ctx, cb, rock, request, 0, 1, &enc);
        break;
    case K_WRONG_TS:
        /* The guess first: the KDC answers with the last error. */
        type = KRB5_PADATA_ENC_TIMESTAMP;
        ret = ykt_wrong_ts(ctx, cb, rock, request, &enc);
        if (ret == 0)
            ret = ykt_mode1(ctx, cb, rock, request, 0, 0, &enc2);
        break;
    case K_TRUNCATED:
        ret = ykt_mode1(ctx, cb, rock, request, 0, 0, &enc);
        if (ret == 0)
            enc.length--;    /* yk_data_free below wipes one byte less */
        break;
    case K_DOUBLE:
        ret = ykt_mode1(ctx, cb, rock, request, 0, 0, &enc);
        if (ret == 0)
            ret = ykt_mode1(ctx, cb, rock, request, 0, 0, &enc2);
        break;
    case K_GOODOTP:
    case K_UNARMORED_OTP:
    case K_REPLAY_OTP:
        ret = ykt_mode2(ctx, cb, rock, &enc);
        break;
    case K_MALFORMED:
        ret = ykt_malformed(&enc);
        break;
    default:
        /* The RFC 6560 kinds: "yktest-otp" answers, not this module. */
        krb5_set_error_message(ctx, KRB5_PREAUTH_FAILED, "yktest: --send "
                               "%s is not for padata -22859",
                               ykt.args->kind->name);
        return KRB5_PREAUTH_FAILED;
    }
    if (ret == 0)
        ret = ykt_add_padata(&list, &n, type, &enc);
    if (ret == 0 && enc2.data != NULL)
        ret = ykt_add_padata(&list, &n, YK_PADATA_TYPE, &enc2);
    if (ret) {
        for (i = 0; i < n; i++) {
            free(list[i]->contents);
            free(list[i]);
        }
        free(list);
        yk_data_free(&enc);
        yk_data_free(&enc2);
        return ret;
    }
    ykt.produced = 1;
    ykt.capture = 1;
    cb->disable_fallback(ctx, rock);
    *pa_data_out = list;
    return 0;
}

/* Fill the vtable of an in-process test module: name, its padata types,
 * its process; always a real mechanism that never tries again. */
static krb5_error_code
ykt_fill_vtable(int maj_ver, krb5_plugin_vtable vtable, const char *name,
                krb5_preauthtype *types, krb5_clpreauth_process_fn process)
{
    krb5_clpreauth_vtable vt;

    if (maj_ver != 1)
        return KRB5_PLUGIN_VER_NOTSUPP;
    vt = (krb5_clpreauth_vtable)vtable;
    vt->name = name;
    vt->pa_type_list = types;
    vt->flags = yk_tc_flags;
    vt->process = process;
    vt->tryagain = yk_tc_tryagain;
    return 0;
}

/* The in-process module's vtable: "yktest" for our padata type. */
static krb5_error_code
ykt_initvt(krb5_context ctx, int maj_ver, int min_ver,
           krb5_plugin_vtable vtable)
{
    return ykt_fill_vtable(maj_ver, vtable, "yktest", ykt_pa_types,
                           ykt_process);
}

/* Wipe and free d's bytes (malloc'd here) and empty it. */
static void
ykt_data_clear(krb5_data *d)
{
    if (d->data != NULL)
        yk_zap(d->data, d->length);
    free(d->data);
    d->data = NULL;
    d->length = 0;
}

/* Replace *dst with a malloc'd copy of src; ENOMEM leaves *dst empty. */
static krb5_error_code
ykt_data_set(krb5_data *dst, const krb5_data *src)
{
    ykt_data_clear(dst);
    dst->data = malloc(src->length > 0 ? src->length : 1);
    if (dst->data == NULL)
        return ENOMEM;
    if (src->length > 0)
        memcpy(dst->data, src->data, src->length);
    dst->length = src->length;
    dst->magic = KV5M_DATA;
    return 0;
}

/* ---- RFC 6560: the module "yktest-otp" for padata 141 ------------------ */

/* The otp-value into *value_out (malloc'd; free with yk_data_free, which
 * wipes it): pad bytes of 'x', the password when given, the OTP. */
static krb5_error_code
ykt_otp_value(size_t pad, krb5_data *value_out)
{
    const ykt_args *a = ykt.args;
    size_t pw_len = a->have_password ? strlen(a->password) : 0;
    size_t len = pad + pw_len + a->otp_len;

    value_out->data = malloc(len > 0 ? len : 1);
    if (value_out->data == NULL)
        return ENOMEM;
    memset(value_out->data, 'x', pad);
    memcpy(value_out->data + pad, a->password, pw_len);
    memcpy(value_out->data + pad + pw_len, a->otp, a->otp_len);
    value_out->length = (unsigned int)len;
    value_out->magic = KV5M_DATA;
    return 0;
}

/* encData: PA-OTP-ENC-REQUEST{nonce} encrypted under key with key usage
 * 45 into *ct_out (its ciphertext malloc'd, the enctype key's). */
static krb5_error_code
ykt_otp_enc(krb5_context ctx, const krb5_keyblock *key,
            const krb5_data *nonce, krb5_enc_data *ct_out)
{
    krb5_error_code ret;
    krb5_data plain = { 0 };
    size_t clen;

    ret = yk_rfc6560_encode_enc_request(nonce, &plain);
    if (ret == 0)
        ret = krb5_c_encrypt_length(ctx, key->enctype, plain.length, &clen);
    if (ret)
        goto cleanup;
    ct_out->magic = KV5M_ENC_DATA;
    ct_out->enctype = key->enctype;
    ct_out->kvno = 0;
    ct_out->ciphertext.data = malloc(clen);
    if (ct_out->ciphertext.data == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    ct_out->ciphertext.length = (unsigned int)clen;
    ret = krb5_c_encrypt(ctx, key, KRB5_KEYUSAGE_PA_OTP_REQUEST, NULL,
                         &plain, ct_out);
    if (ret) {
        free(ct_out->ciphertext.data);
        ct_out->ciphertext.data = NULL;
    }

cleanup:
    yk_data_free(&plain);
    return ret;
}

/* A PA-OTP-REQUEST into *der_out (malloc'd): flags 0, encData of nonce
 * under key, otp-value value (absent when NULL), as MIT's client sends
 * it (less its iterationCount 0, which the KDC ignores). */
static krb5_error_code
ykt_otp_request(krb5_context ctx, const krb5_keyblock *key,
                const krb5_data *nonce, const krb5_data *value,
                krb5_data *der_out)
{
    krb5_error_code ret;
    yk_rfc6560_request req;

    memset(&req, 0, sizeof(req));
    ret = ykt_otp_enc(ctx, key, nonce, &req.enc_data);
    if (ret)
        return ret;
    if (value != NULL) {
        req.otp_value.present = TRUE;
        req.otp_value.data = *value;
    }
    if (ykt.args->pin != NULL) {
        req.pin.present = TRUE;
        req.pin.data.data = (char *)ykt.args->pin;
        req.pin.data.length = (unsigned int)strlen(ykt.args->pin);
    }
    ret = yk_rfc6560_encode_request(&req, der_out);
    free(req.enc_data.ciphertext.data);
    return ret;
}

/* Append the primitive field tag (contents field) at the end of the outer
 * SEQUENCE of *der, which is replaced (the old bytes wiped): fields and
 * sizes the codec refuses to encode. */
static krb5_error_code
ykt_der_append(krb5_data *der, unsigned char tag, const krb5_data *field)
{
    const unsigned char *d = (const unsigned char *)der->data;
    unsigned char *buf = NULL;
    size_t hdr, body, cap, pos;

    if (der->length < 2 || d[0] != 0x30)
        return EINVAL;
    hdr = d[1] < 0x80 ? 2 : (size_t)2 + (d[1] & 0x7f);
    if (hdr > YKT_DER_HEAD_MAX || hdr > der->length)
        return EINVAL;
    body = der->length - hdr;
    cap = body + field->length + 2 * YKT_DER_HEAD_MAX;
    buf = malloc(cap);
    if (buf == NULL)
        return ENOMEM;
    pos = cap;
    if (ykt_der_put(buf, &pos, field->data, field->length) != 0 ||
        ykt_der_head(buf, &pos, tag, field->length) != 0 ||
        ykt_der_put(buf, &pos, d + hdr, body) != 0 ||
        ykt_der_head(buf, &pos, 0x30, cap - pos) != 0) {
        yk_zap(buf, cap);
        free(buf);
        return EOVERFLOW;
    }
    memmove(buf, buf + pos, cap - pos);
    yk_data_free(der);
    der->data = (char *)buf;
    der->length = (unsigned int)(cap - pos);
    der->magic = KV5M_DATA;
    return 0;
}

/* Bytes that are no DER at all into *der_out (malloc'd). */
static krb5_error_code
ykt_otp_garbage(krb5_data *der_out)
{
    static const char bad[] = "\xff\x00 this is not DER \x30\x80";

    der_out->data = malloc(sizeof(bad) - 1);
    if (der_out->data == NULL)
        return ENOMEM;
    memcpy(der_out->data, bad, sizeof(bad) - 1);
    der_out->length = sizeof(bad) - 1;
    der_out->magic = KV5M_DATA;
    return 0;
}

/* The nonce of the KDC's PA-OTP-CHALLENGE pa into *nonce_out (malloc'd;
 * printed on a "challenge:" line). */
static krb5_error_code
ykt_challenge_nonce(krb5_context ctx, const krb5_pa_data *pa,
                    krb5_data *nonce_out)
{
    krb5_error_code ret;
    yk_rfc6560_challenge ch;
    krb5_data d;

    if (pa == NULL || pa->length == 0) {
        krb5_set_error_message(ctx, KRB5_PREAUTH_FAILED, "yktest-otp: no "
                               "PA-OTP-CHALLENGE from the KDC");
        return KRB5_PREAUTH_FAILED;
    }
    d.magic = KV5M_DATA;
    d.length = pa->length;
    d.data = (char *)pa->contents;
    ret = yk_rfc6560_decode_challenge(&d, &ch);
    if (ret) {
        printf("challenge: malformed\n");
        return ret;
    }
    printf("challenge: PA-OTP-CHALLENGE, nonce of %u bytes, %lu "
           "tokenInfo\n", ch.nonce.length, (unsigned long)ch.n_tokeninfo);
    fflush(stdout);
    return ykt_data_set(nonce_out, &ch.nonce);
}

/* otp-unarmored: a 142 with a made-up nonce under a random key (there is
 * no armor key to use), carrying the value, into *der_out. */
static krb5_error_code
ykt_otp_unarmored(krb5_context ctx, const krb5_data *value,
                  krb5_data *der_out)
{
    krb5_error_code ret;
    krb5_keyblock key = { 0 };
    unsigned char buf[YKT_NONCE_LEN];
    krb5_data nonce;

    nonce.magic = KV5M_DATA;
    nonce.length = sizeof(buf);
    nonce.data = (char *)buf;
    ret = krb5_c_random_make_octets(ctx, &nonce);
    if (ret == 0)
        ret = krb5_c_make_random_key(ctx, ENCTYPE_AES256_CTS_HMAC_SHA1_96,
                                     &key);
    if (ret == 0)
        ret = ykt_otp_request(ctx, &key, &nonce, value, der_out);
    krb5_free_keyblock_contents(ctx, &key);
    return ret;
}

/* The armored kinds: the PA-OTP-REQUEST --send asked for, answering the
 * challenge pa under the armor key, into *der_out. */
static krb5_error_code
ykt_otp_armored(krb5_context ctx, const krb5_keyblock *armor,
                const krb5_pa_data *pa, const krb5_data *value,
                krb5_data *der_out)
{
    krb5_error_code ret;
    krb5_keyblock other = { 0 };
    krb5_data nonce = { 0 }, extra;
    const krb5_keyblock *key = armor;
    enum ykt_kind_id id = ykt.args->kind->id;

    ret = ykt_challenge_nonce(ctx, pa, &nonce);
    if (ret)
        goto cleanup;
    if (ykt.take_nonce) {
        /* otp-reused-nonce, first exchange: keep it, send nothing. */
        ret = ykt_data_set(&ykt.taken_nonce, &nonce);
        if (ret == 0) {
            printf("challenge: nonce taken, no request sent\n");
            ret = KRB5_PREAUTH_FAILED;
            krb5_set_error_message(ctx, ret, "yktest-otp: nonce taken");
        }
        goto cleanup;
    }
    switch (id) {
    case K_OTP_WRONG_NONCE:
        nonce.data[nonce.length - 1] ^= 0x01;
        break;
    case K_OTP_REUSED_NONCE:
        if (ykt.taken_nonce.length == 0 ||
            (ykt.taken_nonce.length == nonce.length &&
             memcmp(ykt.taken_nonce.data, nonce.data, nonce.length) == 0)) {
            ret = KRB5_PREAUTH_FAILED;
            krb5_set_error_message(ctx, ret, "yktest-otp: no earlier nonce, "
                                   "or the KDC sent the same one again");
            goto cleanup;
        }
        ret = ykt_data_set(&nonce, &ykt.taken_nonce);
        break;
    case K_OTP_WRONG_KEY:
        ret = krb5_c_make_random_key(ctx, armor->enctype, &other);
        key = &other;
        break;
    default:
        break;
    }
    if (ret)
        goto cleanup;
    if (id == K_OTP_GARBAGE) {
        ret = ykt_otp_garbage(der_out);
    } else if (id == K_OTP_LONG) {
        /* The codec refuses a value over its limit: append it by hand. */
        ret = ykt_otp_request(ctx, key, &nonce, NULL, der_out);
        if (ret == 0)
            ret = ykt_der_append(der_out, 0x85, value);
    } else {
        ret = ykt_otp_request(ctx, key, &nonce, value, der_out);
    }
    if (ret)
        goto cleanup;
    if (id == K_OTP_TRUNCATED) {
        der_out->length--;   /* yk_data_free wipes one byte less */
    } else if (id == K_OTP_MALFORMED) {
        extra.magic = KV5M_DATA;
        extra.length = 1;
        extra.data = "x";
        ret = ykt_der_append(der_out, YKT_UNKNOWN_FIELD, &extra);
    }

cleanup:
    krb5_free_keyblock_contents(ctx, &other);
    ykt_data_clear(&nonce);
    return ret;
}

/* The RFC 6560 module's process: answer the KDC's PA-OTP-CHALLENGE (or,
 * for otp-unarmored, the first AS-REQ) with the PA-OTP-REQUEST --send
 * asked for, once per exchange; then, as MIT's client does, the armor key
 * becomes the AS key and fallback is disabled. */
static krb5_error_code
ykt_otp_process(krb5_context ctx, krb5_clpreauth_moddata moddata,
                krb5_clpreauth_modreq modreq, krb5_get_init_creds_opt *opt,
                krb5_clpreauth_callbacks cb, krb5_clpreauth_rock rock,
                krb5_kdc_req *request, krb5_data *encoded_request_body,
                krb5_data *encoded_previous_request, krb5_pa_data *pa_data,
                krb5_prompter_fct prompter, void *prompter_data,
                krb5_pa_data ***pa_data_out)
{
    krb5_error_code ret;
    krb5_keyblock *armor;
    krb5_pa_data **list = NULL;
    krb5_data value = { 0 }, der = { 0 };
    size_t n = 0;

    *pa_data_out = NULL;
    if (ykt.produced) {
        krb5_set_error_message(ctx, KRB5_PREAUTH_FAILED, "yktest-otp: the "
                               "KDC asked again after our request");
        return KRB5_PREAUTH_FAILED;
    }
    armor = cb->fast_armor(ctx, rock);
    ret = ykt_otp_value(ykt.args->kind->id == K_OTP_LONG ? ykt.args->pad : 0,
                        &value);
    if (ret)
        goto cleanup;
    if (ykt.args->kind->id == K_OTP_UNARMORED) {
        ret = ykt_otp_unarmored(ctx, &value, &der);
    } else if (armor == NULL) {
        ret = KRB5_PREAUTH_FAILED;
        krb5_set_error_message(ctx, ret, "yktest-otp: the exchange is not "
                               "armored (--armor)");
    } else {
        ret = ykt_otp_armored(ctx, armor, pa_data, &value, &der);
    }
    if (ret == 0 && armor != NULL)
        ret = cb->set_as_key(ctx, rock, armor);
    if (ret == 0)
        ret = ykt_add_padata(&list, &n, KRB5_PADATA_OTP_REQUEST, &der);
    if (ret)
        goto cleanup;
    ykt.produced = 1;
    ykt.capture = 1;
    cb->disable_fallback(ctx, rock);
    *pa_data_out = list;

cleanup:
    yk_data_free(&value);
    yk_data_free(&der);
    return ret;
}

/* The in-process RFC 6560 module's vtable: "yktest-otp" for padata 141
 * (registered before MIT's "otp", which then conflicts and is dropped). */
static krb5_error_code
ykt_otp_initvt(krb5_context ctx, int maj_ver, int min_ver,
               krb5_plugin_vtable vtable)
{
    return ykt_fill_vtable(maj_ver, vtable, "yktest-otp", ykt_otp_pa_types,
                           ykt_otp_process);
}

/* Send hook: remember the AS-REQ that carries our padata; in the replay
 * exchange, send the remembered one in its place (the exchange's first,
 * padata-less AS-REQ has gone out before, and made krb5kdc purge its
 * stale lookaside entries). */
static krb5_error_code KRB5_CALLCONV
ykt_send_hook(krb5_context ctx, void *data, const krb5_data *realm,
              const krb5_data *message, krb5_data **new_message_out,
              krb5_data **new_reply_out)
{
    ykt.ours_in_flight = ykt.capture;
    if (!ykt.capture)
        return 0;
    ykt.capture = 0;
    if (ykt.substitute) {
        ykt.substituted = 1;
        return krb5_copy_data(ctx, &ykt.captured, new_message_out);
    }
    return ykt_data_set(&ykt.captured, message);
}

/* Receive hook: note the KDC's answer to the request that carried our
 * padata (or that none came); in the replay exchange, stop there: the
 * reply answers an old request this exchange cannot use. */
static krb5_error_code KRB5_CALLCONV
ykt_recv_hook(krb5_context ctx, void *data, krb5_error_code code,
              const krb5_data *realm, const krb5_data *message,
              const krb5_data *reply, krb5_data **new_reply_out)
{
    krb5_error *err = NULL;
    unsigned char tag;

    if (!ykt.ours_in_flight)
        return code;
    ykt.ours_in_flight = 0;
    if (code != 0 || reply == NULL || reply->length == 0) {
        ykt.answer = ANS_NO_REPLY;
        return code;
    }
    if (ykt_data_set(&ykt.reply, reply) != 0)
        return ENOMEM;
    tag = (unsigned char)reply->data[0];
    if (tag == YKT_ASN1_AS_REP) {
        ykt.answer = ANS_AS_REP;
    } else if (tag == YKT_ASN1_KRB_ERROR &&
               krb5_rd_error(ctx, reply, &err) == 0) {
        ykt.answer = ANS_ERROR;
        ykt.answer_error = (int)err->error;
        krb5_free_error(ctx, err);
    } else {
        ykt.answer = ANS_OTHER;
    }
    return ykt.substituted ? YKT_ABORT : 0;
}

/* Print "result: error: <what>: <message of ret>" and return the exit
 * code for other errors. */
static int
ykt_error(krb5_context ctx, const char *what, krb5_error_code ret)
{
    const char *msg = krb5_get_error_message(ctx, ret);

    printf("result: error: %s%s%s\n", what, ret ? ": " : "",
           ret ? msg : "");
    krb5_free_error_message(ctx, msg);
    return YKT_EXIT_ERROR;
}

/* Print the result line of an exchange that ended with ret, judged by the
 * KDC's answer to our padata; return the exit code. */
static int
ykt_report(krb5_context ctx, krb5_error_code ret)
{
    const char *msg = NULL;

    if (ykt.take_nonce && ykt.taken_nonce.length > 0 && !ykt.produced)
        return YKT_EXIT_ISSUED;     /* its "challenge:" lines said it */
    if (!ykt.produced)
        return ykt_error(ctx, ret == 0 ? "a ticket was issued without our "
                         "padata (the principal needs no preauth?)" :
                         ykt.args->kind->rfc6560 ? "no PA-OTP-REQUEST was "
                         "sent (no PA-OTP-CHALLENGE from the KDC: --armor?)" :
                         "no yubikey padata was sent (no hint from the KDC: "
                         "try --optimistic)", ret);
    if (ykt.substituted && (ykt.answer == ANS_AS_REP ||
                            ykt.answer == ANS_ERROR) &&
        ykt.reply.length == ykt.first_reply.length &&
        memcmp(ykt.reply.data, ykt.first_reply.data, ykt.reply.length) == 0) {
        printf("result: resent (the first reply, byte for byte: krb5kdc's "
               "lookaside cache)\n");
        return YKT_EXIT_RESENT;
    }
    switch (ykt.answer) {
    case ANS_AS_REP:
        if (ret != 0 && ret != YKT_ABORT) {
            msg = krb5_get_error_message(ctx, ret);
            fprintf(stderr, "yktestclient: the KDC issued a ticket the "
                    "client could not use: %s\n", msg);
            krb5_free_error_message(ctx, msg);
        }
        printf("result: issued\n");
        return YKT_EXIT_ISSUED;
    case ANS_ERROR:
        msg = krb5_get_error_message(ctx, ERROR_TABLE_BASE_krb5 +
                                     ykt.answer_error);
        printf("result: refused: %s (KDC error %d)\n", msg,
               ykt.answer_error);
        krb5_free_error_message(ctx, msg);
        return YKT_EXIT_REFUSED;
    case ANS_NO_REPLY:
        printf("result: no reply\n");
        return YKT_EXIT_NO_REPLY;
    case ANS_OTHER:
        return ykt_error(ctx, "unrecognised reply from the KDC", 0);
    case ANS_UNSEEN:
        break;
    }
    return ykt_error(ctx, "our request was never sent", ret);
}

/* Run one AS exchange (storing the ticket in out_cc when not NULL) and
 * print its result line; returns the exit code.  Only our mechanism is
 * allowed: in_cc carries the "pa_type" configuration. */
static int
ykt_exchange(krb5_context ctx, const ykt_args *a, krb5_principal client,
             krb5_ccache in_cc, krb5_ccache out_cc)
{
    krb5_error_code ret;
    krb5_get_init_creds_opt *opt = NULL;
    krb5_init_creds_context icc = NULL;
    int code = YKT_EXIT_ERROR;

    ykt.produced = ykt.capture = ykt.ours_in_flight = 0;
    ykt.answer = ANS_UNSEEN;
    ykt.answer_error = 0;

    ret = krb5_get_init_creds_opt_alloc(ctx, &opt);
    if (ret == 0)
        ret = krb5_get_init_creds_opt_set_in_ccache(ctx, opt, in_cc);
    if (ret == 0 && out_cc != NULL)
        ret = krb5_get_init_creds_opt_set_out_ccache(ctx, opt, out_cc);
    if (ret == 0 && a->armor != NULL && a->kind->id != K_UNARMORED_OTP &&
        a->kind->id != K_OTP_UNARMORED)
        ret = krb5_get_init_creds_opt_set_fast_ccache_name(ctx, opt,
                                                           a->armor);
    if (ret) {
        code = ykt_error(ctx, "cannot set the options", ret);
        goto cleanup;
    }
    if (a->optimistic)
        krb5_get_init_creds_opt_set_preauth_list(opt, a->kind->rfc6560 ?
                                                 ykt_otp_pa_types :
                                                 ykt_pa_types, 1);

    /* The step API: krb5_get_init_creds_password would run a second,
     * hidden exchange against the primary KDC after a refusal. */
    ret = krb5_init_creds_init(ctx, client, NULL, NULL, 0, opt, &icc);
    if (ret == 0 && a->have_password)
        ret = krb5_init_creds_set_password(ctx, icc, a->password);
    if (ret) {
        code = ykt_error(ctx, "cannot start the exchange", ret);
        goto cleanup;
    }
    ret = krb5_init_creds_get(ctx, icc);
    code = ykt_report(ctx, ret);

cleanup:
    krb5_init_creds_free(ctx, icc);
    krb5_get_init_creds_opt_free(ctx, opt);
    fflush(stdout);
    return code;
}

/* 1 if krb5.conf loads a clpreauth module named yubikey: the real client
 * module would take our padata type and this test module would be dropped
 * as a conflict. */
static int
ykt_real_module_loaded(krb5_context ctx)
{
    static const char *const names[] = { "plugins", "clpreauth", "module",
                                         NULL };
    profile_t profile = NULL;
    char **values = NULL;
    int found = 0, i;

    if (krb5_get_profile(ctx, &profile) != 0)
        return 0;
    if (profile_get_values(profile, names, &values) == 0) {
        for (i = 0; values[i] != NULL; i++) {
            if (strncmp(values[i], "yubikey:", 8) == 0)
                found = 1;
        }
        profile_free_list(values);
    }
    profile_release(profile);
    return found;
}

/* Parse the command line into a; -1 after printing a usage error. */
static int
ykt_parse_args(int argc, char **argv, ykt_args *a, const char **otp_out)
{
    static const struct option longopts[] = {
        { "password", required_argument, NULL, 'p' },
        { "password-file", required_argument, NULL, 'P' },
        { "otp", required_argument, NULL, 'o' },
        { "emu", required_argument, NULL, 'e' },
        { "armor", required_argument, NULL, 'a' },
        { "out", required_argument, NULL, 'c' },
        { "send", required_argument, NULL, 's' },
        { "optimistic", no_argument, NULL, 'O' },
        { "replay-config", required_argument, NULL, 'R' },
        { "replay-wait", required_argument, NULL, 'W' },
        { "pad", required_argument, NULL, 'L' },
        { "pin", required_argument, NULL, 'N' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    const char *password = NULL, *send = "good2fa";
    char *end = NULL;
    unsigned long pad = YKT_LONG_PAD;
    size_t i;
    int c;

    *otp_out = NULL;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'p': password = optarg; break;
        case 'P': a->password_file = optarg; break;
        case 'o': *otp_out = optarg; break;
        case 'e': a->emu_file = optarg; break;
        case 'a': a->armor = optarg; break;
        case 'c': a->out = optarg; break;
        case 's': send = optarg; break;
        case 'O': a->optimistic = 1; break;
        case 'R': a->replay_config = optarg; break;
        case 'W': a->replay_wait = (unsigned int)strtoul(optarg, NULL, 10);
            break;
        case 'N': a->pin = optarg; break;
        case 'L':
            pad = strtoul(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || pad > YKT_PAD_MAX) {
                fprintf(stderr, "yktestclient: --pad takes 0..%d\n",
                        YKT_PAD_MAX);
                return -1;
            }
            break;
        case 'h': ykt_usage(stdout); exit(0);
        default: ykt_usage(stderr); return -1;
        }
    }
    if (optind != argc - 1) {
        ykt_usage(stderr);
        return -1;
    }
    a->principal = argv[optind];
    for (i = 0; i < sizeof(ykt_kinds) / sizeof(ykt_kinds[0]); i++) {
        if (strcmp(send, ykt_kinds[i].name) == 0)
            a->kind = &ykt_kinds[i];
    }
    if (a->kind == NULL) {
        fprintf(stderr, "yktestclient: unknown --send kind \"%s\"\n", send);
        return -1;
    }
    if ((password != NULL && a->password_file != NULL) ||
        (*otp_out != NULL && a->emu_file != NULL)) {
        fprintf(stderr, "yktestclient: --password/--password-file and "
                "--otp/--emu are each one or the other\n");
        return -1;
    }
    if (a->kind->mode != 0 && *otp_out == NULL && a->emu_file == NULL) {
        fprintf(stderr, "yktestclient: --send %s needs --otp or --emu\n",
                a->kind->name);
        return -1;
    }
    if (a->kind->mode == YK_MODE_2FA && password == NULL &&
        a->password_file == NULL) {
        fprintf(stderr, "yktestclient: --send %s needs a password\n",
                a->kind->name);
        return -1;
    }
    a->pad = (size_t)pad;
    if ((a->kind->id == K_UNARMORED_OTP ||
         a->kind->id == K_OTP_UNARMORED) && a->armor != NULL)
        fprintf(stderr, "yktestclient: %s: ignoring --armor\n",
                a->kind->name);
    if (a->kind->id == K_OTP_UNARMORED)
        a->optimistic = 1;    /* no challenge comes without armor */
    if (password != NULL) {
        if (strlen(password) >= sizeof(a->password)) {
            fprintf(stderr, "yktestclient: --password is too long\n");
            return -1;
        }
        strcpy(a->password, password);
        a->have_password = 1;
    }
    if (a->password_file != NULL &&
        ykt_read_password(a, a->password_file) != 0)
        return -1;
    return 0;
}

/*
 * One exchange in a context of its own: from config_path (a krb5.conf)
 * when not NULL, else from the environment; the ticket goes to --out when
 * store is set.  Prints the result line; returns the exit code.
 */
static int
ykt_session(const ykt_args *a, const char *config_path, int store)
{
    krb5_error_code ret;
    krb5_context ctx = NULL;
    profile_t profile = NULL;
    krb5_principal client = NULL;
    krb5_ccache in_cc = NULL, out_cc = NULL;
    const char *step = "initialise krb5";
    int code = YKT_EXIT_ERROR;

    if (config_path != NULL) {
        ret = profile_init_path(config_path, &profile);
        if (ret == 0)
            ret = krb5_init_context_profile(profile, 0, &ctx);
        profile_release(profile);
    } else {
        ret = krb5_init_context(&ctx);
    }
    if (ret) {
        fprintf(stderr, "yktestclient: cannot initialise krb5%s%s: %s\n",
                config_path ? " from " : "", config_path ? config_path : "",
                yk_strerror(ret));
        ctx = NULL;
        goto cleanup;
    }
    if (ykt_real_module_loaded(ctx)) {
        fprintf(stderr, "yktestclient: krb5.conf loads the yubikey "
                "clpreauth module; use a krb5.conf without it\n");
        goto cleanup;
    }
    step = "register the test module";
    ret = k5_plugin_register(ctx, YKT_INTERFACE_CLPREAUTH, "yktest",
                             ykt_initvt);
    if (ret == 0 && a->kind->rfc6560)
        ret = k5_plugin_register(ctx, YKT_INTERFACE_CLPREAUTH, "yktest-otp",
                                 ykt_otp_initvt);
    if (ret == 0) {
        step = "parse the principal";
        ret = krb5_parse_name(ctx, a->principal, &client);
    }
    if (ret == 0) {
        step = "make the input ccache";
        ret = yk_tc_make_in_ccache(ctx, client, a->kind->rfc6560 ?
                                 KRB5_PADATA_OTP_CHALLENGE : YK_PADATA_TYPE,
                                 &in_cc);
    }
    if (ret == 0 && store && a->out != NULL) {
        step = "open --out";
        ret = krb5_cc_resolve(ctx, a->out, &out_cc);
    }
    if (ret) {
        code = ykt_error(ctx, step, ret);
        goto cleanup;
    }
    krb5_set_kdc_send_hook(ctx, ykt_send_hook, NULL);
    krb5_set_kdc_recv_hook(ctx, ykt_recv_hook, NULL);
    code = ykt_exchange(ctx, a, client, in_cc, out_cc);

cleanup:
    if (ctx != NULL) {
        if (in_cc != NULL)
            krb5_cc_destroy(ctx, in_cc);
        if (out_cc != NULL)
            krb5_cc_close(ctx, out_cc);
        krb5_free_principal(ctx, client);
        krb5_free_context(ctx);
    }
    return code;
}

int
main(int argc, char **argv)
{
    ykt_args args;
    const char *otp_arg = NULL;
    int code = YKT_EXIT_ERROR;

    memset(&args, 0, sizeof(args));
    memset(&ykt, 0, sizeof(ykt));
    ykt.args = &args;
    if (ykt_parse_args(argc, argv, &args, &otp_arg) != 0 ||
        ykt_take_otp(&args, otp_arg) != 0)
        goto cleanup;

    if (args.kind->id == K_OTP_REUSED_NONCE) {
        /* A first exchange only for its challenge's nonce. */
        ykt.take_nonce = 1;
        code = ykt_session(&args, NULL, 0);
        ykt.take_nonce = 0;
        if (code != YKT_EXIT_ISSUED)
            goto cleanup;
    }
    code = ykt_session(&args, NULL, 1);
    if (args.kind->replay && code == YKT_EXIT_ISSUED) {
        /* The same bytes again, in place of the next exchange's AS-REQ
         * that carries our padata. */
        ykt.first_reply = ykt.reply;
        memset(&ykt.reply, 0, sizeof(ykt.reply));
        ykt.substitute = 1;
        ykt.substituted = 0;
        if (args.replay_wait > 0)
            sleep(args.replay_wait);
        code = ykt_session(&args, args.replay_config, 0);
    }

cleanup:
    ykt_data_clear(&ykt.captured);
    ykt_data_clear(&ykt.reply);
    ykt_data_clear(&ykt.first_reply);
    ykt_data_clear(&ykt.taken_nonce);
    yk_zap(args.password, sizeof(args.password));
    yk_zap(args.otp, sizeof(args.otp));
    return code;
}
