/* SPDX-License-Identifier: MIT */
/* ykbench.c: load generator: concurrent AS exchanges in six login modes. */

/*
 * bench/run drives it: one invocation measures one cell (one mode at one
 * concurrency) against a running KDC and prints one "result" line of
 * key=value pairs on standard output.
 *
 * Modes.  Each login is a whole AS exchange (the PREAUTH_REQUIRED round
 * included) run with the krb5_init_creds step API, as kinit runs it:
 *   password       (a) the password: encrypted timestamp
 *   2fa            (b) password + OTP: our mode 1 request
 *   otp            (c) the OTP alone inside FAST armor: our mode 2
 *   fast-password  (d) the password inside FAST: encrypted challenge
 *   stock-2fa      (e) password + OTP typed as one value, sent by
 *                  libkrb5's own RFC 6560 client (otp, padata 141/142)
 *                  inside FAST armor: a stock MIT client, see below
 *   mit-otp        the anchors (f), (g): the OTP alone, sent by the same
 *                  stock client to principals of MIT's own otp module
 *                  (string attribute "otp"), which asks a RADIUS server
 *                  (bench/run: FreeRADIUS with rlm_yubikey); MIT's module
 *                  does not set the hardware-authentication flag
 *   bad-otp        mode 1 with the right password and an OTP whose CRC
 *                  fails: a login counts when the KDC refuses it
 *   replay         mode 1, then the same OTP again at once (the soak's
 *                  replays, tools/soak): a login counts when the first
 *                  exchange gets its ticket and the second is refused
 * Every exchange may use only the mode's mechanism (the "pa_type"
 * configuration of an in-memory input ccache) and never falls back, and
 * an issued ticket must carry the hardware-authentication flag exactly
 * when the mode's server sets it (ours: whenever an OTP was sent):
 * anything else counts as an error.
 *
 * Keys.  Each principal's long-term key is derived once, before the clock
 * starts (krb5_c_string_to_key with the default salt, the realm followed
 * by the name's components, as kadmin made it), and put in a MEMORY
 * keytab of the thread that owns the principal; every exchange gets that
 * keytab with krb5_init_creds_set_keytab.  All mechanisms, ours and the
 * library's, obtain the AS key through the same get_as_key callback,
 * which then reads the keytab instead of running PBKDF2: modes (a)-(d)
 * pay the same (negligible) client-side key cost, as a client that
 * cached its key would.
 *
 * Our padata.  An in-process clpreauth module "ykbench" for type -22859,
 * registered in each context with k5_plugin_register (declared as in
 * tests/client/yktestclient.c), seals the OTP under the AS key with
 * yk_padata_seal (mode 1), or sends it in clear and makes the armor key
 * the AS key (mode 2).  The real yubikey_client.so must not be loaded:
 * KRB5_CONFIG must name a krb5.conf without it.
 *
 * The stock client (stock-2fa).  No module of ours, no keytab: the
 * context has only libkrb5's built-in mechanisms (KRB5_CONFIG names a
 * krb5.conf with nothing of this project), and the value the user would
 * type, password then OTP, is the answer to the otp mechanism's responder
 * question (krb5_responder_otp_set_answer, as SSSD answers it); the armor
 * is set by name (krb5_get_init_creds_opt_set_fast_ccache_name, the
 * thread's MEMORY copy).  The client derives no key (the otp mechanism's
 * reply key is the armor key); the KDC runs the password's string-to-key
 * on every login.  The passwords are kept, in fixed buffers, for this
 * mode only.  mit-otp is the same client answering with the OTP alone (no
 * password: its principals have random keys, "-" in the principals
 * file).
 *
 * OTPs.  Each principal's emulated token (emu/) is loaded from its
 * state file, advanced in memory with yk_emu_next just before a login's
 * clock starts, and saved back at the end.  Each thread owns its
 * principals (principal i belongs to thread i mod T), so every token's
 * OTPs reach the KDC in order.
 *
 * Measures.  The cell ends after --seconds or --logins, whichever comes
 * first.  Latency is the wall time of one exchange; the rate counts the
 * logins that ended as expected over the cell's wall time; CPU time is
 * utime+stime from /proc/PID/stat (this process, and each --pid group)
 * between the start and the end of the cell.  Two machine-wide figures
 * show what else happened meanwhile: the busy cores (/proc/stat: other
 * work on a shared machine) and TCP listen-queue overflows
 * (/proc/net/netstat: connections dropped by a full listen queue, which
 * the client retries a second later).
 */

#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <krb5.h>
#include <krb5/clpreauth_plugin.h>

#include "emu.h"
#include "errors.h"
#include "otp.h"
#include "padata.h"
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
#define YKB_INTERFACE_CLPREAUTH 2

#define YKB_MAX_THREADS 256
#define YKB_MAX_PRINCIPALS 4096
#define YKB_MAX_GROUPS 4             /* --pid groups */
#define YKB_MAX_GROUP_PIDS 8         /* pids in one group */
#define YKB_DEFAULT_LIMIT 500000     /* logins per cell, at most */
#define YKB_LINE_LEN 1024            /* a line of the principals file */
#define YKB_PASSWORD_LEN 256
#define YKB_VALUE_LEN (YKB_PASSWORD_LEN + YK_OTP_BUF) /* password + OTP */
#define YKB_MSG_LEN 256              /* the first error's message */
#define YKB_STAT_LEN 1024            /* /proc/PID/stat */
#define YKB_NETSTAT_LEN 8192         /* a line of /proc/net/netstat */
#define YKB_DEFAULT_ENCTYPE "aes256-cts-hmac-sha1-96"

/* The login modes. */
typedef enum {
    M_PASSWORD, M_2FA, M_OTP, M_FAST_PASSWORD, M_STOCK_2FA, M_MIT_OTP,
    M_BAD_OTP, M_REPLAY
} ykb_mode;

/* One mode: its name, the only padata type the exchange may use, whether
 * it is armored, sends an OTP, expects a refusal, is the stock client
 * (libkrb5's otp mechanism through the responder), types the password
 * before the OTP (stock client), and gets a ticket flagged for hardware
 * authentication. */
typedef struct {
    const char *name;
    ykb_mode id;
    krb5_preauthtype pa_type;
    int armored;
    int sends_otp;
    int expect_refusal;
    int stock;
    int stock_password;
    int hw_flag;
} ykb_mode_info;

static const ykb_mode_info ykb_modes[] = {
    { "password", M_PASSWORD, KRB5_PADATA_ENC_TIMESTAMP, 0, 0, 0, 0, 0, 0 },
    { "2fa", M_2FA, YK_PADATA_TYPE, 0, 1, 0, 0, 0, 1 },
    { "otp", M_OTP, YK_PADATA_TYPE, 1, 1, 0, 0, 0, 1 },
    { "fast-password", M_FAST_PASSWORD, KRB5_PADATA_ENCRYPTED_CHALLENGE,
      1, 0, 0, 0, 0, 0 },
    { "stock-2fa", M_STOCK_2FA, KRB5_PADATA_OTP_CHALLENGE, 1, 1, 0, 1, 1, 1 },
    { "mit-otp", M_MIT_OTP, KRB5_PADATA_OTP_CHALLENGE, 1, 1, 0, 1, 0, 0 },
    { "bad-otp", M_BAD_OTP, YK_PADATA_TYPE, 0, 1, 1, 0, 0, 1 },
    { "replay", M_REPLAY, YK_PADATA_TYPE, 0, 1, 0, 0, 0, 1 },
};

/* One principal: its name, its derived key (or, for the stock client,
 * its password), its token. */
typedef struct {
    char *name;
    char *token_path;
    krb5_keyblock key;           /* derived in the main context */
    char password[YKB_PASSWORD_LEN]; /* stock-2fa only, else empty */
    yk_emu emu;                  /* in memory while the cell runs */
    int emu_loaded;
    /* Owned by the thread's context: */
    krb5_principal client;
    krb5_ccache in_cc;           /* the "pa_type" configuration */
    krb5_get_init_creds_opt *opt;
} ykb_principal;

/* What the in-process module (or the stock client's responder) needs for
 * the exchange in progress: one per thread, reached through a
 * thread-local pointer (the responder gets its thread's). */
typedef struct {
    int proto_mode;              /* YK_MODE_2FA or YK_MODE_OTP */
    char otp[YK_OTP_BUF];
    size_t otp_len;
    char value[YKB_VALUE_LEN];   /* the stock client's answer: password
                                  * then OTP (stock-2fa), the OTP alone
                                  * (mit-otp) */
    int produced;                /* our padata, or the responder's
                                  * answer, went out */
} ykb_request;

/* A --pid group: a name and the processes whose CPU time it sums. */
typedef struct {
    char name[32];
    pid_t pids[YKB_MAX_GROUP_PIDS];
    size_t npids;
    long long ticks0, ticks1;    /* -1: unreadable */
} ykb_group;

struct ykb_run;

/* One client thread: its context, keytab, armor and principals. */
typedef struct {
    struct ykb_run *run;
    pthread_t tid;
    krb5_context ctx;
    krb5_keytab keytab;
    krb5_ccache armor;
    ykb_principal **princ;
    size_t nprinc;
    ykb_request req;
    unsigned long ok, refused, errors, flag_errors, unexpected_ok;
    krb5_error_code first_code;
    char first_msg[YKB_MSG_LEN];
} ykb_thread;

/* The cell: settings, the shared counters and the latencies. */
typedef struct ykb_run {
    const ykb_mode_info *mode;
    size_t nthreads;
    double seconds;
    unsigned long logins;        /* 0: no fixed count */
    unsigned long limit;
    const char *principals_path;
    const char *armor_name;
    const char *enctype_name;
    krb5_enctype enctype;
    ykb_principal *princ;
    size_t nprinc;
    ykb_thread *threads;
    ykb_group groups[YKB_MAX_GROUPS];
    size_t ngroups;
    pthread_mutex_t lock;        /* guards go */
    pthread_cond_t cond;         /* signalled when go is set */
    int go;                      /* the threads may start */
    int64_t deadline_ns;
    unsigned long started;       /* atomic */
    uint64_t *lat_ns;            /* latencies of logins that went as
                                  * expected */
    unsigned long nlat;          /* atomic */
} ykb_run;

static __thread ykb_request *ykb_cur;
static krb5_preauthtype ykb_pa_types[] = { YK_PADATA_TYPE, 0 };

/* Print the usage text to f. */
static void
ykb_usage(FILE *f)
{
    fprintf(f,
"usage: ykbench --mode MODE --principals FILE [options]\n"
"  --mode MODE        password | 2fa | otp | fast-password | stock-2fa |\n"
"                     mit-otp | bad-otp | replay\n"
"  --principals FILE  lines \"NAME PASSWORD TOKENFILE\" (token states are\n"
"                     read, and saved back when the mode sends OTPs)\n"
"  --threads N        concurrent clients (default 1)\n"
"  --seconds S        stop after S seconds (default 5)\n"
"  --logins N         stop after N logins (default: no fixed count)\n"
"  --limit N          never more than N logins (default %d)\n"
"  --armor CCACHE     FAST armor ccache (otp, fast-password, stock-2fa,\n"
"                     mit-otp)\n"
"  --enctype NAME     the long-term key to derive (default %s)\n"
"  --pid NAME=PID[,PID...]  report the CPU time of these processes\n"
"KRB5_CONFIG must name a krb5.conf that does not load yubikey_client.so\n"
"(for stock-2fa and mit-otp: one with nothing of this project).\n"
"Prints one line: result mode=... ok=... rate=... p50_ms=... p99_ms=...\n"
"cpu_us_per_login.client=... (and per --pid group) machine_busy_cores=...\n"
"listen_overflows=...  Exit 0 when every login ended as expected, 1\n"
"otherwise, 2 on a setup error.\n",
            YKB_DEFAULT_LIMIT, YKB_DEFAULT_ENCTYPE);
}

/* Monotonic time in nanoseconds. */
static int64_t
ykb_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* utime+stime of process pid in clock ticks, or -1 when unreadable. */
static long long
ykb_proc_ticks(pid_t pid)
{
    char path[64], buf[YKB_STAT_LEN];
    unsigned long long ut = 0, st = 0;
    const char *p;
    FILE *f = NULL;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The command name may hold spaces and parentheses: skip to the
     * last ')'; utime and stime are fields 14 and 15. */
    p = strrchr(buf, ')');
    if (p == NULL ||
        sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
               "%llu %llu", &ut, &st) != 2)
        return -1;
    return (long long)(ut + st);
}

/* The machine's busy ticks (all cores: user, nice, system, irq, softirq,
 * steal) from /proc/stat, or -1 when unreadable. */
static long long
ykb_machine_busy_ticks(void)
{
    unsigned long long v[8] = { 0 };
    FILE *f = NULL;
    int n;

    f = fopen("/proc/stat", "r");
    if (f == NULL)
        return -1;
    n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
               &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (n != 8)
        return -1;
    /* user nice system idle iowait irq softirq steal: all but idle and
     * iowait. */
    return (long long)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]);
}

/* The machine's TCP ListenOverflows counter (connections dropped because
 * a listen queue was full: the client retries its SYN after a second),
 * from /proc/net/netstat, or -1 when unreadable. */
static long long
ykb_listen_overflows(void)
{
    char head[YKB_NETSTAT_LEN], vals[YKB_NETSTAT_LEN];
    char *hs = NULL, *vs = NULL, *h, *v;
    long long found = -1;
    FILE *f = NULL;

    f = fopen("/proc/net/netstat", "r");
    if (f == NULL)
        return -1;
    /* Pairs of lines: "TcpExt: Name ..." then "TcpExt: value ...". */
    while (fgets(head, sizeof(head), f) != NULL &&
           fgets(vals, sizeof(vals), f) != NULL) {
        if (strncmp(head, "TcpExt:", 7) != 0)
            continue;
        h = strtok_r(head, " \n", &hs);
        v = strtok_r(vals, " \n", &vs);
        while (h != NULL && v != NULL) {
            if (strcmp(h, "ListenOverflows") == 0) {
                found = strtoll(v, NULL, 10);
                break;
            }
            h = strtok_r(NULL, " \n", &hs);
            v = strtok_r(NULL, " \n", &vs);
        }
        break;
    }
    fclose(f);
    return found;
}

/* The summed ticks of a group's processes, -1 if one is unreadable. */
static long long
ykb_group_ticks(const ykb_group *g)
{
    long long sum = 0, t;
    size_t i;

    for (i = 0; i < g->npids; i++) {
        t = ykb_proc_ticks(g->pids[i]);
        if (t < 0)
            return -1;
        sum += t;
    }
    return sum;
}

/* ---- the in-process clpreauth module --------------------------------- */

/* Build our padata for the exchange in progress (ykb_cur): mode 1 sealed
 * under the AS key (from the keytab), or mode 2 with the armor key made
 * the AS key; disable fallback as the real client does. */
static krb5_error_code
ykb_process(krb5_context ctx, krb5_clpreauth_moddata moddata,
            krb5_clpreauth_modreq modreq, krb5_get_init_creds_opt *opt,
            krb5_clpreauth_callbacks cb, krb5_clpreauth_rock rock,
            krb5_kdc_req *request, krb5_data *encoded_request_body,
            krb5_data *encoded_previous_request, krb5_pa_data *pa_data,
            krb5_prompter_fct prompter, void *prompter_data,
            krb5_pa_data ***pa_data_out)
{
    krb5_error_code ret;
    ykb_request *st = ykb_cur;
    krb5_keyblock *as_key = NULL, *armor = NULL;
    krb5_timestamp now = 0;
    krb5_int32 usec = 0;
    krb5_pa_data **list = NULL;
    krb5_data enc = { 0 };
    yk_bound b;
    yk_request req;

    memset(&b, 0, sizeof(b));
    memset(&req, 0, sizeof(req));
    *pa_data_out = NULL;
    if (st == NULL || st->produced) {
        ret = KRB5_PREAUTH_FAILED;
        goto cleanup;
    }
    if (st->proto_mode == YK_MODE_2FA) {
        ret = cb->get_as_key(ctx, rock, &as_key);
        if (ret)
            goto cleanup;
        ret = cb->get_preauth_time(ctx, rock, TRUE, &now, &usec);
        if (ret)
            goto cleanup;
        b.sec = (uint32_t)now;
        b.usec = (uint32_t)usec;
        b.nonce = (uint32_t)request->nonce;
        memcpy(b.otp, st->otp, st->otp_len);
        b.otp_len = st->otp_len;
        ret = yk_padata_seal(ctx, as_key, &b, &req);
    } else {
        armor = cb->fast_armor(ctx, rock);
        if (armor == NULL) {
            ret = KRB5_PREAUTH_FAILED;
            goto cleanup;
        }
        req.mode = YK_MODE_OTP;
        memcpy(req.otp, st->otp, st->otp_len);
        req.otp_len = st->otp_len;
        ret = cb->set_as_key(ctx, rock, armor);
    }
    if (ret == 0)
        ret = yk_padata_encode_request(&req, &enc);
    if (ret)
        goto cleanup;

    list = calloc(2, sizeof(*list));
    if (list != NULL)
        list[0] = calloc(1, sizeof(**list));
    if (list == NULL || list[0] == NULL) {
        free(list);
        ret = ENOMEM;
        goto cleanup;
    }
    list[0]->magic = KV5M_PA_DATA;
    list[0]->pa_type = YK_PADATA_TYPE;
    list[0]->length = enc.length;
    list[0]->contents = (krb5_octet *)enc.data;
    enc.data = NULL;
    st->produced = 1;
    cb->disable_fallback(ctx, rock);
    *pa_data_out = list;

cleanup:
    yk_data_free(&enc);
    yk_zap(&b, sizeof(b));
    yk_request_clear(&req, st != NULL && st->proto_mode == YK_MODE_2FA);
    return ret;
}

/* The in-process module's vtable: "ykbench" for our padata type. */
static krb5_error_code
ykb_initvt(krb5_context ctx, int maj_ver, int min_ver,
           krb5_plugin_vtable vtable)
{
    krb5_clpreauth_vtable vt;

    if (maj_ver != 1)
        return KRB5_PLUGIN_VER_NOTSUPP;
    vt = (krb5_clpreauth_vtable)vtable;
    vt->name = "ykbench";
    vt->pa_type_list = ykb_pa_types;
    vt->flags = yk_tc_flags;
    vt->process = ykb_process;
    vt->tryagain = yk_tc_tryagain;
    return 0;
}

/* ---- the stock client's responder ------------------------------------ */

/* Answer libkrb5's otp question with the value the user would type
 * (password then OTP, one string, or the OTP alone), as SSSD answers
 * it; any other question stays unanswered.  data is the thread's
 * ykb_request. */
static krb5_error_code KRB5_CALLCONV
ykb_responder(krb5_context ctx, void *data, krb5_responder_context rctx)
{
    ykb_request *st = data;
    krb5_error_code ret;

    if (krb5_responder_get_challenge(ctx, rctx,
                                     KRB5_RESPONDER_QUESTION_OTP) == NULL)
        return 0;
    ret = krb5_responder_otp_set_answer(ctx, rctx, 0, st->value, NULL);
    if (ret == 0)
        st->produced = 1;
    return ret;
}

/* ---- setup ------------------------------------------------------------ */

/* Read the principals file into run->princ (names and token paths;
 * passwords go to pw, one fixed buffer per principal, wiped by the
 * caller). */
static krb5_error_code
ykb_read_principals(ykb_run *run, char (**pw_out)[YKB_PASSWORD_LEN])
{
    krb5_error_code ret = 0;
    char line[YKB_LINE_LEN], name[YKB_LINE_LEN], tok[YKB_LINE_LEN];
    char (*pw)[YKB_PASSWORD_LEN] = NULL;
    char pass[YKB_PASSWORD_LEN];
    FILE *f = NULL;
    ykb_principal *p;
    size_t n = 0;

    run->princ = calloc(YKB_MAX_PRINCIPALS, sizeof(*run->princ));
    pw = calloc(YKB_MAX_PRINCIPALS, sizeof(*pw));
    if (run->princ == NULL || pw == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    f = fopen(run->principals_path, "r");
    if (f == NULL) {
        ret = errno;
        fprintf(stderr, "ykbench: %s: %s\n", run->principals_path,
                strerror(ret));
        goto cleanup;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (n == YKB_MAX_PRINCIPALS ||
            sscanf(line, "%1023s %255s %1023s", name, pass, tok) != 3) {
            fprintf(stderr, "ykbench: %s: bad or too many lines\n",
                    run->principals_path);
            ret = EINVAL;
            goto cleanup;
        }
        p = &run->princ[n];
        p->name = strdup(name);
        p->token_path = strdup(tok);
        if (p->name == NULL || p->token_path == NULL) {
            ret = ENOMEM;
            goto cleanup;
        }
        memcpy(pw[n], pass, sizeof(pass));
        n++;
    }
    if (n == 0) {
        fprintf(stderr, "ykbench: %s: no principal\n", run->principals_path);
        ret = EINVAL;
        goto cleanup;
    }
    run->nprinc = n;
    *pw_out = pw;
    pw = NULL;

cleanup:
    if (f != NULL)
        fclose(f);
    yk_zap(line, sizeof(line));
    yk_zap(pass, sizeof(pass));
    if (pw != NULL) {
        yk_zap(pw, YKB_MAX_PRINCIPALS * sizeof(*pw));
        free(pw);
    }
    return ret;
}

/* Derive p's long-term key from password with the default salt (the
 * realm, then each component of the name), in ctx. */
static krb5_error_code
ykb_derive_key(krb5_context ctx, krb5_enctype enctype, ykb_principal *p,
               const char *password)
{
    krb5_error_code ret;
    krb5_principal princ = NULL;
    krb5_data salt = { 0 }, pw;
    size_t len;
    krb5_int32 i;
    char *s;

    ret = krb5_parse_name(ctx, p->name, &princ);
    if (ret)
        goto cleanup;
    len = princ->realm.length;
    for (i = 0; i < princ->length; i++)
        len += princ->data[i].length;
    salt.data = malloc(len + 1);
    if (salt.data == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    salt.magic = KV5M_DATA;
    salt.length = (unsigned int)len;
    s = salt.data;
    memcpy(s, princ->realm.data, princ->realm.length);
    s += princ->realm.length;
    for (i = 0; i < princ->length; i++) {
        memcpy(s, princ->data[i].data, princ->data[i].length);
        s += princ->data[i].length;
    }
    pw.magic = KV5M_DATA;
    pw.data = (char *)password;
    pw.length = (unsigned int)strlen(password);
    ret = krb5_c_string_to_key(ctx, enctype, &pw, &salt, &p->key);

cleanup:
    free(salt.data);
    krb5_free_principal(ctx, princ);
    return ret;
}

/* Copy the armor ccache name into a new MEMORY ccache of ctx (the armor
 * TGT is then read from memory on every exchange). */
static krb5_error_code
ykb_copy_armor(krb5_context ctx, const char *name, krb5_ccache *cc_out)
{
    krb5_error_code ret;
    krb5_ccache file = NULL, mem = NULL;
    krb5_principal princ = NULL;

    ret = krb5_cc_resolve(ctx, name, &file);
    if (ret == 0)
        ret = krb5_cc_get_principal(ctx, file, &princ);
    if (ret == 0)
        ret = krb5_cc_new_unique(ctx, "MEMORY", NULL, &mem);
    if (ret == 0)
        ret = krb5_cc_initialize(ctx, mem, princ);
    if (ret == 0)
        ret = krb5_cc_copy_creds(ctx, file, mem);
    if (ret)
        goto cleanup;
    *cc_out = mem;
    mem = NULL;

cleanup:
    if (mem != NULL)
        krb5_cc_destroy(ctx, mem);
    if (file != NULL)
        krb5_cc_close(ctx, file);
    krb5_free_principal(ctx, princ);
    return ret;
}

/* Set up thread t (index idx): its context with the in-process module,
 * its MEMORY keytab with its principals' keys, the armor, and per
 * principal the parsed name, input ccache and options.  On failure
 * prints what failed; ykb_thread_free undoes whatever was done. */
static krb5_error_code
ykb_thread_setup(ykb_run *run, ykb_thread *t, size_t idx)
{
    krb5_error_code ret;
    krb5_keytab_entry entry;
    ykb_principal *p;
    const char *step = "register the in-process module";
    const char *msg;
    char ktname[64], *armor_name = NULL;
    size_t i;

    memset(&entry, 0, sizeof(entry));
    t->run = run;
    t->req.proto_mode = run->mode->id == M_OTP ? YK_MODE_OTP : YK_MODE_2FA;
    ret = krb5_init_context(&t->ctx);
    if (ret) {
        t->ctx = NULL;
        fprintf(stderr, "ykbench: cannot initialise krb5: %s\n",
                yk_strerror(ret));
        return ret;
    }
    /* The stock client: libkrb5's mechanisms only (and its keytab
     * stays empty, never set on an exchange). */
    if (!run->mode->stock)
        ret = k5_plugin_register(t->ctx, YKB_INTERFACE_CLPREAUTH, "ykbench",
                                 ykb_initvt);
    if (ret == 0) {
        step = "make the keytab";
        snprintf(ktname, sizeof(ktname), "MEMORY:ykbench-%lu-%lu",
                 (unsigned long)getpid(), (unsigned long)idx);
        ret = krb5_kt_resolve(t->ctx, ktname, &t->keytab);
    }
    if (ret == 0 && run->mode->armored) {
        step = "copy the armor ccache";
        ret = ykb_copy_armor(t->ctx, run->armor_name, &t->armor);
    }
    if (ret == 0 && t->armor != NULL && run->mode->stock) {
        step = "name the armor ccache";
        ret = krb5_cc_get_full_name(t->ctx, t->armor, &armor_name);
    }
    for (i = 0; ret == 0 && i < t->nprinc; i++) {
        p = t->princ[i];
        step = p->name;
        ret = krb5_parse_name(t->ctx, p->name, &p->client);
        if (ret)
            break;
        entry.principal = p->client;
        entry.vno = 1;
        entry.key = p->key;
        if (!run->mode->stock)
            ret = krb5_kt_add_entry(t->ctx, t->keytab, &entry);
        if (ret == 0)
            ret = yk_tc_make_in_ccache(t->ctx, p->client, run->mode->pa_type,
                                     &p->in_cc);
        if (ret == 0)
            ret = krb5_get_init_creds_opt_alloc(t->ctx, &p->opt);
        if (ret == 0)
            ret = krb5_get_init_creds_opt_set_in_ccache(t->ctx, p->opt,
                                                        p->in_cc);
        if (ret == 0 && armor_name != NULL) {
            /* As a stock application sets it (SSSD does): by name. */
            ret = krb5_get_init_creds_opt_set_fast_ccache_name(t->ctx,
                                                               p->opt,
                                                               armor_name);
            if (ret == 0)
                ret = krb5_get_init_creds_opt_set_responder(t->ctx, p->opt,
                                                            ykb_responder,
                                                            &t->req);
        } else if (ret == 0 && t->armor != NULL) {
            ret = krb5_get_init_creds_opt_set_fast_ccache(t->ctx, p->opt,
                                                          t->armor);
        }
    }
    krb5_free_string(t->ctx, armor_name);
    if (ret) {
        msg = krb5_get_error_message(t->ctx, ret);
        fprintf(stderr, "ykbench: thread %lu: %s: %s\n", (unsigned long)idx,
                step, msg);
        krb5_free_error_message(t->ctx, msg);
    }
    return ret;
}

/* Free thread t's krb5 objects (its principals' too) and its context. */
static void
ykb_thread_free(ykb_thread *t)
{
    ykb_principal *p;
    size_t i;

    if (t->ctx == NULL)
        return;
    for (i = 0; i < t->nprinc; i++) {
        p = t->princ[i];
        krb5_get_init_creds_opt_free(t->ctx, p->opt);
        if (p->in_cc != NULL)
            krb5_cc_destroy(t->ctx, p->in_cc);
        krb5_free_principal(t->ctx, p->client);
        p->opt = NULL;
        p->in_cc = NULL;
        p->client = NULL;
    }
    if (t->armor != NULL)
        krb5_cc_destroy(t->ctx, t->armor);
    if (t->keytab != NULL)
        krb5_kt_close(t->ctx, t->keytab);
    krb5_free_context(t->ctx);
    t->ctx = NULL;
}

/* ---- the logins ------------------------------------------------------- */

/* Remember the first failure of thread t (code and message). */
static void
ykb_note_error(ykb_thread *t, krb5_error_code code, const char *what)
{
    const char *msg;

    if (t->first_code != 0 || t->first_msg[0] != '\0')
        return;
    t->first_code = code;
    if (what != NULL) {
        snprintf(t->first_msg, sizeof(t->first_msg), "%s", what);
        return;
    }
    msg = krb5_get_error_message(t->ctx, code);
    snprintf(t->first_msg, sizeof(t->first_msg), "%s", msg);
    krb5_free_error_message(t->ctx, msg);
}

/* Give the OTP of bad-otp a bad CRC: change the last modhex character
 * (the token's last nibble) to another one. */
static void
ykb_spoil_otp(char *otp, size_t len)
{
    if (len > 0)
        otp[len - 1] = otp[len - 1] == 'c' ? 'b' : 'c';
}

/* One AS exchange of principal p by thread t with the request in t->req;
 * on success *icc is the finished exchange. */
static krb5_error_code
ykb_exchange(ykb_thread *t, ykb_principal *p, krb5_init_creds_context *icc)
{
    krb5_error_code ret;

    ret = krb5_init_creds_init(t->ctx, p->client, NULL, NULL, 0, p->opt,
                               icc);
    if (ret == 0 && !t->run->mode->stock)
        ret = krb5_init_creds_set_keytab(t->ctx, *icc, t->keytab);
    if (ret == 0)
        ret = krb5_init_creds_get(t->ctx, *icc);
    return ret;
}

/* replay: the OTP of the exchange that just got its ticket, sent again at
 * once; 1 when the KDC refuses it. */
static int
ykb_replay(ykb_thread *t, ykb_principal *p)
{
    krb5_error_code ret;
    krb5_init_creds_context icc = NULL;

    t->req.produced = 0;
    ret = ykb_exchange(t, p, &icc);
    krb5_init_creds_free(t->ctx, icc);
    if (ret == KRB5KDC_ERR_PREAUTH_FAILED && t->req.produced)
        return 1;
    if (ret == 0) {
        t->unexpected_ok++;
        ykb_note_error(t, 0, "a ticket for a replayed OTP");
    } else {
        t->errors++;
        ykb_note_error(t, ret, NULL);
    }
    return 0;
}

/* One login of principal p by thread t: take the token's next OTP (before
 * the clock starts), run the exchange, judge and time it. */
static void
ykb_login(ykb_thread *t, ykb_principal *p)
{
    krb5_error_code ret;
    const ykb_mode_info *mode = t->run->mode;
    krb5_init_creds_context icc = NULL;
    krb5_creds creds;
    unsigned long slot;
    int64_t t0, t1;
    int hw, good = 0;

    memset(&creds, 0, sizeof(creds));
    t->req.produced = 0;
    t->req.otp_len = 0;
    if (mode->sends_otp) {
        ret = yk_emu_next(&p->emu, t->req.otp);
        if (ret) {
            t->errors++;
            ykb_note_error(t, ret, yk_strerror(ret));
            goto cleanup;
        }
        t->req.otp_len = strlen(t->req.otp);
        if (mode->expect_refusal)
            ykb_spoil_otp(t->req.otp, t->req.otp_len);
        if (mode->stock)
            snprintf(t->req.value, sizeof(t->req.value), "%s%s",
                     mode->stock_password ? p->password : "", t->req.otp);
    }

    t0 = ykb_now_ns();
    ret = ykb_exchange(t, p, &icc);
    t1 = ykb_now_ns();

    if (ret == 0) {
        ret = krb5_init_creds_get_creds(t->ctx, icc, &creds);
        if (ret) {
            t->errors++;
            ykb_note_error(t, ret, NULL);
        } else if (mode->expect_refusal) {
            t->unexpected_ok++;
            ykb_note_error(t, 0, "a ticket for an OTP with a bad CRC");
        } else {
            hw = (creds.ticket_flags & TKT_FLG_HW_AUTH) != 0;
            if (hw != mode->hw_flag || mode->sends_otp != t->req.produced) {
                t->flag_errors++;
                ykb_note_error(t, 0, "ticket flags do not match the mode");
            } else {
                good = mode->id != M_REPLAY || ykb_replay(t, p);
                t1 = ykb_now_ns();
            }
        }
    } else if (ret == KRB5KDC_ERR_PREAUTH_FAILED) {
        if (mode->expect_refusal && t->req.produced) {
            good = 1;
        } else {
            t->refused++;
            ykb_note_error(t, ret, NULL);
        }
    } else {
        t->errors++;
        ykb_note_error(t, ret, NULL);
    }
    if (good) {
        t->ok++;
        slot = __atomic_fetch_add(&t->run->nlat, 1, __ATOMIC_RELAXED);
        if (slot < t->run->limit)
            t->run->lat_ns[slot] = (uint64_t)(t1 - t0);
    }

cleanup:
    krb5_free_cred_contents(t->ctx, &creds);
    krb5_init_creds_free(t->ctx, icc);
    yk_zap(t->req.otp, sizeof(t->req.otp));
    yk_zap(t->req.value, sizeof(t->req.value));
}

/* A client thread: wait for the start, then log in with its principals
 * in turn until the deadline or the login count is reached. */
static void *
ykb_thread_main(void *arg)
{
    ykb_thread *t = arg;
    ykb_run *run = t->run;
    unsigned long n, want;
    size_t i = 0;

    ykb_cur = &t->req;
    pthread_mutex_lock(&run->lock);
    while (!run->go)
        pthread_cond_wait(&run->cond, &run->lock);
    pthread_mutex_unlock(&run->lock);
    want = run->logins > 0 && run->logins < run->limit ? run->logins :
        run->limit;
    for (;;) {
        if (ykb_now_ns() >= run->deadline_ns)
            break;
        n = __atomic_fetch_add(&run->started, 1, __ATOMIC_RELAXED);
        if (n >= want)
            break;
        ykb_login(t, t->princ[i]);
        i = (i + 1) % t->nprinc;
    }
    ykb_cur = NULL;
    return NULL;
}

/* ---- results ---------------------------------------------------------- */

/* Order two latencies. */
static int
ykb_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* The q-quantile (0..1, nearest rank) of the n sorted values, in ms. */
static double
ykb_quantile_ms(const uint64_t *v, unsigned long n, double q)
{
    unsigned long k;

    if (n == 0)
        return 0.0;
    k = (unsigned long)(q * (double)n + 0.999999);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return (double)v[k - 1] / 1e6;
}

/* Print the result line of the cell: counts, rate, latencies, and the
 * CPU time per expected login of this process and each --pid group. */
static void
ykb_report(ykb_run *run, double elapsed, long long self0, long long self1,
           long long busy0, long long busy1, long long drops0,
           long long drops1)
{
    unsigned long ok = 0, refused = 0, errors = 0, flags = 0, unexp = 0;
    unsigned long n = run->nlat < run->limit ? run->nlat : run->limit;
    double tick_ms = 1000.0 / (double)sysconf(_SC_CLK_TCK), sum = 0;
    const ykb_group *g;
    size_t i;

    for (i = 0; i < run->nthreads; i++) {
        ok += run->threads[i].ok;
        refused += run->threads[i].refused;
        errors += run->threads[i].errors;
        flags += run->threads[i].flag_errors;
        unexp += run->threads[i].unexpected_ok;
    }
    qsort(run->lat_ns, n, sizeof(*run->lat_ns), ykb_cmp_u64);
    for (i = 0; i < n; i++)
        sum += (double)run->lat_ns[i];
    printf("result mode=%s threads=%lu principals=%lu logins=%lu ok=%lu "
           "refused=%lu errors=%lu flag_errors=%lu unexpected_ok=%lu "
           "seconds=%.3f rate=%.1f p50_ms=%.3f p99_ms=%.3f mean_ms=%.3f",
           run->mode->name, (unsigned long)run->nthreads,
           (unsigned long)run->nprinc, ok + refused + errors + flags + unexp,
           ok, refused, errors, flags, unexp, elapsed,
           elapsed > 0 ? (double)ok / elapsed : 0.0,
           ykb_quantile_ms(run->lat_ns, n, 0.50),
           ykb_quantile_ms(run->lat_ns, n, 0.99),
           n > 0 ? sum / (double)n / 1e6 : 0.0);
    if (self0 >= 0 && self1 >= 0 && ok > 0)
        printf(" cpu_us_per_login.client=%.0f",
               (double)(self1 - self0) * tick_ms * 1000.0 / (double)ok);
    else
        printf(" cpu_us_per_login.client=na");
    for (i = 0; i < run->ngroups; i++) {
        g = &run->groups[i];
        if (g->ticks0 >= 0 && g->ticks1 >= 0 && ok > 0)
            printf(" cpu_us_per_login.%s=%.0f", g->name,
                   (double)(g->ticks1 - g->ticks0) * tick_ms * 1000.0 /
                   (double)ok);
        else
            printf(" cpu_us_per_login.%s=na", g->name);
    }
    /* How many cores the whole machine kept busy meanwhile: with the
     * figures above, shows what other work was running. */
    if (busy0 >= 0 && busy1 >= 0 && elapsed > 0)
        printf(" machine_busy_cores=%.2f", (double)(busy1 - busy0) *
               tick_ms / 1000.0 / elapsed);
    else
        printf(" machine_busy_cores=na");
    if (drops0 >= 0 && drops1 >= 0)
        printf(" listen_overflows=%lld", drops1 - drops0);
    else
        printf(" listen_overflows=na");
    printf("\n");
    fflush(stdout);
    for (i = 0; i < run->nthreads; i++) {
        if (run->threads[i].first_msg[0] != '\0') {
            fprintf(stderr, "ykbench: thread %lu, first failure: %s\n",
                    (unsigned long)i, run->threads[i].first_msg);
        }
    }
}

/* ---- main ------------------------------------------------------------- */

/* Parse "NAME=PID[,PID...]" into a new group of run. */
static int
ykb_parse_group(ykb_run *run, const char *arg)
{
    const char *eq = strchr(arg, '=');
    ykb_group *g;
    char *end;
    long v;

    if (eq == NULL || eq == arg || (size_t)(eq - arg) >= sizeof(g->name) ||
        run->ngroups == YKB_MAX_GROUPS)
        return -1;
    g = &run->groups[run->ngroups];
    memcpy(g->name, arg, (size_t)(eq - arg));
    g->name[eq - arg] = '\0';
    end = (char *)eq;
    do {
        v = strtol(end + 1, &end, 10);
        if (v <= 0 || g->npids == YKB_MAX_GROUP_PIDS ||
            (*end != ',' && *end != '\0'))
            return -1;
        g->pids[g->npids++] = (pid_t)v;
    } while (*end == ',');
    run->ngroups++;
    return 0;
}

/* Parse the command line into run; -1 after printing the problem. */
static int
ykb_parse_args(int argc, char **argv, ykb_run *run)
{
    static const struct option longopts[] = {
        { "mode", required_argument, NULL, 'm' },
        { "principals", required_argument, NULL, 'P' },
        { "threads", required_argument, NULL, 't' },
        { "seconds", required_argument, NULL, 's' },
        { "logins", required_argument, NULL, 'n' },
        { "limit", required_argument, NULL, 'l' },
        { "armor", required_argument, NULL, 'a' },
        { "enctype", required_argument, NULL, 'e' },
        { "pid", required_argument, NULL, 'p' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    const char *mode = NULL;
    size_t i;
    int c;

    run->nthreads = 1;
    run->seconds = 5;
    run->limit = YKB_DEFAULT_LIMIT;
    run->enctype_name = YKB_DEFAULT_ENCTYPE;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'm': mode = optarg; break;
        case 'P': run->principals_path = optarg; break;
        case 't': run->nthreads = strtoul(optarg, NULL, 10); break;
        case 's': run->seconds = strtod(optarg, NULL); break;
        case 'n': run->logins = strtoul(optarg, NULL, 10); break;
        case 'l': run->limit = strtoul(optarg, NULL, 10); break;
        case 'a': run->armor_name = optarg; break;
        case 'e': run->enctype_name = optarg; break;
        case 'p':
            if (ykb_parse_group(run, optarg) != 0) {
                fprintf(stderr, "ykbench: bad --pid %s\n", optarg);
                return -1;
            }
            break;
        case 'h': ykb_usage(stdout); exit(0);
        default: ykb_usage(stderr); return -1;
        }
    }
    for (i = 0; mode != NULL && i < sizeof(ykb_modes) / sizeof(*ykb_modes);
         i++) {
        if (strcmp(mode, ykb_modes[i].name) == 0)
            run->mode = &ykb_modes[i];
    }
    if (optind != argc || run->mode == NULL ||
        run->principals_path == NULL) {
        ykb_usage(stderr);
        return -1;
    }
    if (run->nthreads < 1 || run->nthreads > YKB_MAX_THREADS ||
        run->seconds <= 0 || run->limit < 1) {
        fprintf(stderr, "ykbench: --threads 1..%d, --seconds and --limit "
                "above 0\n", YKB_MAX_THREADS);
        return -1;
    }
    if (run->mode->armored && run->armor_name == NULL) {
        fprintf(stderr, "ykbench: --mode %s needs --armor\n",
                run->mode->name);
        return -1;
    }
    return 0;
}

/* Load the principals, derive their keys (wiping the passwords), load
 * their tokens and share them out to the threads. */
static krb5_error_code
ykb_prepare(ykb_run *run)
{
    krb5_error_code ret;
    krb5_context ctx = NULL;
    char (*pw)[YKB_PASSWORD_LEN] = NULL;
    ykb_principal *p;
    ykb_thread *t;
    size_t i;

    ret = ykb_read_principals(run, &pw);
    if (ret)
        return ret;
    if (run->nprinc < run->nthreads) {
        fprintf(stderr, "ykbench: %lu principals for %lu threads: each "
                "thread needs its own\n", (unsigned long)run->nprinc,
                (unsigned long)run->nthreads);
        ret = EINVAL;
        goto cleanup;
    }
    ret = krb5_init_context(&ctx);
    if (ret) {
        ctx = NULL;
        goto cleanup;
    }
    ret = krb5_string_to_enctype((char *)run->enctype_name, &run->enctype);
    if (ret) {
        fprintf(stderr, "ykbench: unknown enctype %s\n", run->enctype_name);
        goto cleanup;
    }
    for (i = 0; i < run->nprinc; i++) {
        p = &run->princ[i];
        if (run->mode->stock) {
            /* Typed at every login (stock-2fa): the KDC derives the
             * key; mit-otp types none. */
            if (run->mode->stock_password)
                memcpy(p->password, pw[i], sizeof(p->password));
            ret = 0;
        } else {
            ret = ykb_derive_key(ctx, run->enctype, p, pw[i]);
        }
        if (ret) {
            fprintf(stderr, "ykbench: %s: cannot derive the key: %s\n",
                    p->name, yk_strerror(ret));
            goto cleanup;
        }
        if (run->mode->sends_otp) {
            ret = yk_emu_load(p->token_path, &p->emu);
            if (ret) {
                fprintf(stderr, "ykbench: %s: %s\n", p->token_path,
                        yk_strerror(ret));
                goto cleanup;
            }
            p->emu_loaded = 1;
        }
    }

    run->threads = calloc(run->nthreads, sizeof(*run->threads));
    if (run->threads == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    for (i = 0; i < run->nthreads; i++) {
        t = &run->threads[i];
        t->princ = calloc(run->nprinc / run->nthreads + 1,
                          sizeof(*t->princ));
        if (t->princ == NULL) {
            ret = ENOMEM;
            goto cleanup;
        }
    }
    for (i = 0; i < run->nprinc; i++) {
        t = &run->threads[i % run->nthreads];
        t->princ[t->nprinc++] = &run->princ[i];
    }

cleanup:
    yk_zap(pw, YKB_MAX_PRINCIPALS * sizeof(*pw));
    free(pw);
    krb5_free_context(ctx);
    return ret;
}

/* Save the tokens that moved back to their files; -1 if one failed. */
static int
ykb_save_tokens(ykb_run *run)
{
    krb5_error_code ret;
    int status = 0;
    size_t i;

    for (i = 0; i < run->nprinc; i++) {
        if (!run->princ[i].emu_loaded)
            continue;
        ret = yk_emu_save(&run->princ[i].emu, run->princ[i].token_path);
        if (ret) {
            fprintf(stderr, "ykbench: cannot save %s: %s\n",
                    run->princ[i].token_path, yk_strerror(ret));
            status = -1;
        }
    }
    return status;
}

/* Free everything run holds, wiping keys and token states. */
static void
ykb_run_free(ykb_run *run)
{
    size_t i;

    for (i = 0; run->threads != NULL && i < run->nthreads; i++) {
        ykb_thread_free(&run->threads[i]);
        free(run->threads[i].princ);
    }
    free(run->threads);
    for (i = 0; run->princ != NULL && i < run->nprinc; i++) {
        free(run->princ[i].name);
        free(run->princ[i].token_path);
        if (run->princ[i].key.contents != NULL) {
            yk_zap(run->princ[i].key.contents, run->princ[i].key.length);
            free(run->princ[i].key.contents);
        }
        yk_emu_clear(&run->princ[i].emu);
        yk_zap(run->princ[i].password, sizeof(run->princ[i].password));
    }
    free(run->princ);
    free(run->lat_ns);
}

/* Let the threads go (deadline already set). */
static void
ykb_start(ykb_run *run)
{
    pthread_mutex_lock(&run->lock);
    run->go = 1;
    pthread_cond_broadcast(&run->cond);
    pthread_mutex_unlock(&run->lock);
}

int
main(int argc, char **argv)
{
    ykb_run run;
    long long self0, self1, busy0, busy1, drops0, drops1;
    int64_t start, end;
    size_t i, started = 0;
    int status = 2, bad;
    krb5_error_code ret;

    memset(&run, 0, sizeof(run));
    pthread_mutex_init(&run.lock, NULL);
    pthread_cond_init(&run.cond, NULL);
    if (ykb_parse_args(argc, argv, &run) != 0)
        goto cleanup;
    ret = yk_crypto_init();
    if (ret == 0)
        ret = ykb_prepare(&run);
    if (ret)
        goto cleanup;
    run.lat_ns = calloc(run.limit, sizeof(*run.lat_ns));
    if (run.lat_ns == NULL)
        goto cleanup;
    for (i = 0; i < run.nthreads; i++) {
        if (ykb_thread_setup(&run, &run.threads[i], i) != 0)
            goto cleanup;
    }
    run.deadline_ns = INT64_MAX;
    for (i = 0; i < run.nthreads; i++) {
        if (pthread_create(&run.threads[i].tid, NULL, ykb_thread_main,
                           &run.threads[i]) != 0) {
            fprintf(stderr, "ykbench: cannot start thread %lu\n",
                    (unsigned long)i);
            break;
        }
        started++;
    }
    if (started < run.nthreads) {
        /* Release the threads that started, with a deadline passed. */
        run.deadline_ns = 0;
        ykb_start(&run);
        for (i = 0; i < started; i++)
            pthread_join(run.threads[i].tid, NULL);
        goto cleanup;
    }

    /* The cell: CPU counters read just before the start, after the end. */
    for (i = 0; i < run.ngroups; i++)
        run.groups[i].ticks0 = ykb_group_ticks(&run.groups[i]);
    self0 = ykb_proc_ticks(getpid());
    busy0 = ykb_machine_busy_ticks();
    drops0 = ykb_listen_overflows();
    start = ykb_now_ns();
    run.deadline_ns = start + (int64_t)(run.seconds * 1e9);
    ykb_start(&run);
    for (i = 0; i < started; i++)
        pthread_join(run.threads[i].tid, NULL);
    end = ykb_now_ns();
    self1 = ykb_proc_ticks(getpid());
    busy1 = ykb_machine_busy_ticks();
    drops1 = ykb_listen_overflows();
    for (i = 0; i < run.ngroups; i++)
        run.groups[i].ticks1 = ykb_group_ticks(&run.groups[i]);

    ykb_report(&run, (double)(end - start) / 1e9, self0, self1, busy0,
               busy1, drops0, drops1);
    bad = ykb_save_tokens(&run) != 0;
    for (i = 0; i < run.nthreads; i++) {
        if (run.threads[i].refused || run.threads[i].errors ||
            run.threads[i].flag_errors || run.threads[i].unexpected_ok)
            bad = 1;
    }
    status = bad ? 1 : 0;

cleanup:
    ykb_run_free(&run);
    pthread_cond_destroy(&run.cond);
    pthread_mutex_destroy(&run.lock);
    return status;
}
