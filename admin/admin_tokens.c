/* admin_tokens.c: ykadmin's token commands (enroll, import, list, ...). */

/*
 * enroll, import, list, disable, enable, policy and verify.  Each parses
 * its own options, checks everything it can before touching the
 * directory, and logs every change (principal and public id, never a
 * secret) through yk_admin_log.  Token secrets (the AES key and private
 * id, and the standard input they are read from) live in fixed buffers
 * wiped on every path.
 *
 * import reads one line "AESKEYHEX PRIVIDHEX" from standard input: 32 and
 * 12 hexadecimal digits separated by white space, optionally surrounded by
 * white space, nothing else.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>  /* autoconf's, not shared/config.h: hence <> */
#endif

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <gcrypt.h>

#include "admin.h"
#include "emu.h"
#include "errors.h"
#include "otp.h"
#include "record.h"
#include "secmem.h"
#include "store.h"

#define SECRET_INPUT_MAX 512          /* bytes of standard input, at most */
#define AES_KEY_HEX_LEN (2 * YK_AES_KEY_LEN)
#define PRIVID_HEX_LEN (2 * YK_PRIVID_LEN)
#define GEN_PUBID_LEN 6               /* "cc" + 10 random modhex */
#define GEN_PUBID_TRIES 8             /* fresh public ids tried */
#define SWAP_TRIES 3                  /* re-reads after a lost swap */
#define USAGE_WARN_MARGIN 1000        /* list warns this close to 0x7fff */
#define PRINCIPAL_SHOW_MAX 256        /* display width caps for list */
#define TEXT_SHOW_MAX 256

/* The options the token commands know; each command allows a subset. */
enum {
    OPT_EMULATE = 1 << 0,
    OPT_PUBLIC_ID = 1 << 1,
    OPT_DESCRIPTION = 1 << 2
};

/* Parsed options and positional arguments of one command. */
typedef struct {
    const char *emulate;
    const char *public_id;
    const char *description;
    int nargs;
    char **args;
} tok_args;

/* Parse argv for cmd: the options in allowed, then between min_args and
 * max_args positional arguments.  Returns -1 to go on, or an exit status
 * (help printed, or a usage error). */
static int
parse_args(const yk_admin_cmd *cmd, int argc, char **argv,
           unsigned int allowed, int min_args, int max_args, tok_args *a)
{
    static const struct option opts[] = {
        { "emulate", required_argument, NULL, 'e' },
        { "public-id", required_argument, NULL, 'p' },
        { "description", required_argument, NULL, 'd' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    const char *name;
    unsigned int flag;
    int c;

    memset(a, 0, sizeof(*a));
    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'e':
            flag = OPT_EMULATE;
            a->emulate = optarg;
            break;
        case 'p':
            flag = OPT_PUBLIC_ID;
            a->public_id = optarg;
            break;
        case 'd':
            flag = OPT_DESCRIPTION;
            a->description = optarg;
            break;
        case 'h':
            return yk_admin_help(cmd);
        case ':':
            return yk_admin_usage(cmd, "option %s needs an argument",
                                  argv[optind - 1]);
        default:
            return yk_admin_usage(cmd, "unknown option %s",
                                  argv[optind - 1]);
        }
        if (!(allowed & flag)) {
            name = argv[optind - 1];
            if (strncmp(name, "--", 2) != 0)
                name = "this option";
            return yk_admin_usage(cmd, "%s is not an option of %s", name,
                                  cmd->name);
        }
    }
    a->nargs = argc - optind;
    a->args = argv + optind;
    if (a->nargs < min_args)
        return yk_admin_usage(cmd, "missing argument");
    if (a->nargs > max_args)
        return yk_admin_usage(cmd, "unexpected argument \"%s\"",
                              a->args[max_args]);
    return -1;
}

/* Canonicalize a public id given by an operator (modhex, either case)
 * into out; 0, or an exit status after printing why. */
static int
canon_pubid(const char *in, char out[YK_PUBID_MODHEX_MAX + 1])
{
    char shown[YK_PUBID_MODHEX_MAX + 1];
    size_t i, n = strlen(in);

    yk_admin_printable(in, shown, sizeof(shown));
    if (n > YK_PUBID_MODHEX_MAX)
        return yk_admin_fail("public id \"%s...\" is too long (at most %d "
                             "modhex characters)", shown,
                             YK_PUBID_MODHEX_MAX);
    for (i = 0; i < n; i++) {
        char c = in[i];

        out[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    out[n] = '\0';
    if (!yk_pubid_valid(out))
        return yk_admin_fail("invalid public id \"%s\": it must be an even "
                             "number (2 to %d) of modhex characters "
                             "(cbdefghijklnrtuv)", shown,
                             YK_PUBID_MODHEX_MAX);
    return 0;
}

/* Check a description: printable ASCII, at most YK_ADMIN_DESCRIPTION_MAX
 * bytes.  0, or an exit status after printing why. */
static int
check_description(const char *d)
{
    size_t i;

    if (d == NULL)
        return 0;
    if (strlen(d) > YK_ADMIN_DESCRIPTION_MAX)
        return yk_admin_fail("the description is too long (at most %d "
                             "bytes)", YK_ADMIN_DESCRIPTION_MAX);
    for (i = 0; d[i] != '\0'; i++) {
        unsigned char c = (unsigned char)d[i];

        if (c < 0x20 || c >= 0x7f)
            return yk_admin_fail("the description must be printable ASCII "
                                 "text");
    }
    return 0;
}

/* Fail unless pubid is free directory-wide (one token, one principal).
 * Returns 0 when free, or an exit status after printing why. */
static int
check_pubid_free(yk_admin *adm, yk_store *st, const char *pubid)
{
    char *holder = NULL, *dn = NULL;
    krb5_error_code ret;
    int status;

    ret = yk_store_find_pubid(st, pubid, &holder, &dn);
    if (ret == YK_ERR_TOKEN_UNKNOWN)
        return 0;
    if (ret)
        return yk_admin_store_fail(adm, ret, "cannot check whether public "
                                   "id %s is enrolled", pubid);
    status = yk_admin_fail("public id %s is already enrolled for %s: one "
                           "token, one principal", pubid, holder);
    free(holder);
    free(dn);
    return status;
}

/* Read principal's directory entry from the write server (what an
 * administrator changes next).  0, or an exit status after printing why. */
static int
read_entry(yk_admin *adm, yk_store *st, const char *principal,
           yk_entry **entry_out)
{
    krb5_error_code ret;

    ret = yk_store_lookup(st, principal, 1, entry_out);
    if (ret == YK_ERR_STORE_NOT_FOUND)
        return yk_admin_fail("%s has no entry in the directory (create the "
                             "principal first, e.g. with kadmin)",
                             principal);
    if (ret == YK_ERR_STORE_AMBIGUOUS)
        return yk_admin_fail("more than one directory entry matches %s: "
                             "fix the directory or the principal filter",
                             principal);
    if (ret)
        return yk_admin_store_fail(adm, ret, "cannot read %s", principal);
    return 0;
}

/* Build the secret and initial state records of a new token: secret
 * wrapped for (principal, pubid) under the keyring's newest key.  The
 * caller frees *rec_out with yk_secret_rec_free. */
static krb5_error_code
new_token_records(yk_admin *adm, const yk_keyring *kr,
                  const char *principal, const char *pubid,
                  const yk_token_secret *secret, int state,
                  const char *description, yk_secret_rec **rec_out,
                  yk_state_rec *state_out)
{
    yk_secret_rec *rec = NULL;
    krb5_error_code ret;

    rec = calloc(1, sizeof(*rec));
    if (rec == NULL)
        return ENOMEM;
    snprintf(rec->pubid, sizeof(rec->pubid), "%s", pubid);
    rec->state = state;
    rec->enrolled_at = (int64_t)time(NULL);
    rec->serial = strdup("");
    rec->enrolled_by = strdup(adm->operator_id);
    rec->description = strdup(description != NULL ? description : "");
    if (rec->serial == NULL || rec->enrolled_by == NULL ||
        rec->description == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    ret = yk_keywrap_wrap(kr, principal, pubid, secret, &rec->wrapped);
    if (ret)
        goto cleanup;

    memset(state_out, 0, sizeof(*state_out));
    snprintf(state_out->pubid, sizeof(state_out->pubid), "%s", pubid);
    state_out->counter = 0;
    state_out->gen = 0;
    state_out->has_nonce = 0;
    state_out->last_use = 0;
    *rec_out = rec;
    rec = NULL;

cleanup:
    yk_secret_rec_free(rec);
    return ret;
}

/* Add a new token to entry, naming the holder when its public id was
 * enrolled meanwhile.  0, or an exit status after printing why. */
static int
add_token(yk_admin *adm, yk_store *st, const yk_entry *entry,
          const yk_secret_rec *rec, const yk_state_rec *state)
{
    krb5_error_code ret;

    ret = yk_store_add_token(st, entry, rec, state);
    if (ret == YK_ERR_STORE_EXISTS)
        return check_pubid_free(adm, st, rec->pubid) ? YK_ADMIN_EXIT_FAIL :
            yk_admin_fail("public id %s is already enrolled", rec->pubid);
    if (ret)
        return yk_admin_store_fail(adm, ret, "cannot add token %s to %s",
                                   rec->pubid, entry->principal);
    return 0;
}

/* Set the state of principal's token pubid to new_state, re-reading and
 * retrying when a concurrent write wins the swap.  With from_pending set
 * only a pending token may change (enrolment), otherwise a pending token
 * is refused.  *old_out gets the previous state.  Returns a krb5 code,
 * after printing why on failure. */
static krb5_error_code
set_token_state(yk_admin *adm, yk_store *st, const char *principal,
                const char *pubid, int new_state, int from_pending,
                int *old_out)
{
    yk_secret_rec *rec = NULL;
    yk_entry *entry = NULL;
    yk_token *tok;
    krb5_error_code ret = YK_ERR_STORE_CONFLICT;
    int tries;

    for (tries = 0; tries < SWAP_TRIES && ret == YK_ERR_STORE_CONFLICT;
         tries++) {
        yk_entry_free(entry);
        entry = NULL;
        yk_secret_rec_free(rec);
        rec = NULL;
        if (read_entry(adm, st, principal, &entry) != 0) {
            ret = YK_ERR_STORE_NOT_FOUND;
            goto cleanup;
        }
        tok = yk_entry_find_token(entry, pubid);
        if (tok == NULL || tok->secret == NULL) {
            ret = YK_ERR_TOKEN_UNKNOWN;
            yk_admin_fail("%s holds no token record for public id %s",
                          principal, pubid);
            goto cleanup;
        }
        if (tok->malformed) {
            ret = YK_ERR_RECORD_FORMAT;
            yk_admin_fail("token %s of %s is damaged in the directory (%s): "
                          "left as it is", pubid, principal,
                          tok->malformed_reason != NULL ?
                          tok->malformed_reason : "malformed");
            goto cleanup;
        }
        if (from_pending != (tok->secret->state == YK_TOKEN_PENDING)) {
            ret = YK_ERR_TOKEN_UNKNOWN;
            yk_admin_fail("token %s of %s is %s%s", pubid, principal,
                          yk_token_state_name(tok->secret->state),
                          from_pending ? ", not pending: left as it is" :
                          " (its enrolment did not finish): enrol it again");
            goto cleanup;
        }
        *old_out = tok->secret->state;
        if (tok->secret->state == new_state) {
            ret = 0;
            goto cleanup;
        }
        ret = yk_secret_rec_copy(tok->secret, &rec);
        if (ret) {
            yk_admin_fail("out of memory");
            goto cleanup;
        }
        rec->state = new_state;
        ret = yk_store_update_token(st, entry, tok, rec, NULL);
    }
    if (ret)
        yk_admin_store_fail(adm, ret, "cannot change token %s of %s",
                            pubid, principal);

cleanup:
    yk_secret_rec_free(rec);
    yk_entry_free(entry);
    return ret;
}

/* Remove the pending token pubid of principal (an enrolment that failed
 * half way).  0 on success, otherwise a code (the reason printed). */
static krb5_error_code
remove_pending(yk_admin *adm, yk_store *st, const char *principal,
               const char *pubid)
{
    yk_entry *entry = NULL;
    yk_token *tok;
    krb5_error_code ret;

    if (read_entry(adm, st, principal, &entry) != 0)
        return YK_ERR_STORE_UNAVAILABLE;
    tok = yk_entry_find_token(entry, pubid);
    if (tok == NULL || tok->secret == NULL ||
        tok->secret->state != YK_TOKEN_PENDING) {
        ret = YK_ERR_TOKEN_UNKNOWN;
        goto cleanup;
    }
    ret = yk_store_delete_token(st, entry, tok);
    if (ret)
        yk_admin_store_fail(adm, ret, "cannot remove the pending token %s "
                            "of %s", pubid, principal);

cleanup:
    yk_entry_free(entry);
    return ret;
}

/* Pick a fresh public id: 0x00 ("cc", like Yubico's own range) and five
 * random bytes, retried while taken.  0, or an exit status. */
static int
generate_pubid(yk_admin *adm, yk_store *st,
               unsigned char pubid[GEN_PUBID_LEN],
               char pubid_mh[YK_PUBID_MODHEX_MAX + 1])
{
    char *holder = NULL, *dn = NULL;
    krb5_error_code ret;
    int tries;

    ret = yk_crypto_init();
    if (ret)
        return yk_admin_fail("cannot initialise libgcrypt: %s",
                             yk_strerror(ret));
    for (tries = 0; tries < GEN_PUBID_TRIES; tries++) {
        pubid[0] = 0;
        gcry_randomize(pubid + 1, GEN_PUBID_LEN - 1, GCRY_STRONG_RANDOM);
        yk_modhex_encode(pubid, GEN_PUBID_LEN, pubid_mh);
        ret = yk_store_find_pubid(st, pubid_mh, &holder, &dn);
        if (ret == YK_ERR_TOKEN_UNKNOWN)
            return 0;
        if (ret)
            return yk_admin_store_fail(adm, ret, "cannot check whether "
                                       "public id %s is enrolled", pubid_mh);
        free(holder);
        free(dn);
        holder = dn = NULL;
    }
    return yk_admin_fail("no free public id found in %d tries",
                         GEN_PUBID_TRIES);
}

/* Create path for the emulated token's state, refusing an existing file:
 * the state is written over this reservation later.  0, or an exit
 * status after printing why. */
static int
reserve_emulate_file(const char *path)
{
    int fd;

    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
              0600);
    if (fd < 0 && errno == EEXIST)
        return yk_admin_fail("%s already exists: refusing to overwrite a "
                             "token state file", path);
    if (fd < 0)
        return yk_admin_fail("cannot create the token state file %s: %s",
                             path, strerror(errno));
    close(fd);
    return 0;
}

/* enroll PRINCIPAL --emulate FILE: a pending record, the token's state
 * file, then the record made active.  A failure after the pending record
 * removes it and the file, and says what is left. */
static int
run_enroll(yk_admin *adm, int argc, char **argv)
{
    const yk_admin_cmd *cmd = &yk_admin_cmd_enroll;
    unsigned char pubid[YK_PUBID_MAX];
    char pubid_mh[YK_PUBID_MODHEX_MAX + 1];
    yk_token_secret secret;
    yk_secret_rec *rec = NULL;
    yk_state_rec state;
    yk_keyring *kr = NULL;
    yk_entry *entry = NULL;
    yk_store *st = NULL;
    char *principal = NULL;
    krb5_error_code ret;
    size_t pubid_len = 0;
    tok_args a;
    yk_emu emu;
    int status, reserved = 0, pending = 0, old = 0;

    memset(&emu, 0, sizeof(emu));
    memset(&secret, 0, sizeof(secret));
    (void)mlock(&emu, sizeof(emu));
    (void)mlock(&secret, sizeof(secret));
    status = parse_args(cmd, argc, argv,
                        OPT_EMULATE | OPT_PUBLIC_ID | OPT_DESCRIPTION, 1, 1,
                        &a);
    if (status >= 0)
        goto cleanup;
    status = YK_ADMIN_EXIT_FAIL;
    if (a.emulate == NULL) {
        yk_admin_fail("programming a real YubiKey is not available yet in "
                      "this version; use --emulate FILE");
        goto cleanup;
    }
    if (*a.emulate == '\0') {
        status = yk_admin_usage(cmd, "--emulate needs a file name");
        goto cleanup;
    }
    if (check_description(a.description) != 0)
        goto cleanup;
    if (a.public_id != NULL) {
        if (canon_pubid(a.public_id, pubid_mh) != 0)
            goto cleanup;
        ret = yk_modhex_decode(pubid_mh, strlen(pubid_mh), pubid,
                               sizeof(pubid), &pubid_len);
        if (ret) {
            yk_admin_fail("invalid public id %s: %s", pubid_mh,
                          yk_strerror(ret));
            goto cleanup;
        }
    }
    if (yk_admin_principal(adm, a.args[0], &principal) != 0)
        goto cleanup;

    /* Everything that can fail without a write, first. */
    if (yk_admin_load_keyring(adm, &kr) != 0 ||
        yk_admin_store(adm, &st) != 0 ||
        read_entry(adm, st, principal, &entry) != 0)
        goto cleanup;
    if (a.public_id != NULL) {
        if (check_pubid_free(adm, st, pubid_mh) != 0)
            goto cleanup;
    } else {
        if (generate_pubid(adm, st, pubid, pubid_mh) != 0)
            goto cleanup;
        pubid_len = GEN_PUBID_LEN;
    }
    if (reserve_emulate_file(a.emulate) != 0)
        goto cleanup;
    reserved = 1;

    /* The token: key and private id from libgcrypt's strong pool. */
    ret = yk_emu_init(&emu, pubid, pubid_len);
    if (ret) {
        yk_admin_fail("cannot generate the token's key: %s",
                      yk_strerror(ret));
        goto cleanup;
    }
    memcpy(secret.aes_key, emu.aes_key, sizeof(secret.aes_key));
    memcpy(secret.private_id, emu.private_id, sizeof(secret.private_id));
    ret = new_token_records(adm, kr, principal, pubid_mh, &secret,
                            YK_TOKEN_PENDING, a.description, &rec, &state);
    if (ret) {
        yk_admin_fail("cannot wrap the token's key: %s", yk_strerror(ret));
        goto cleanup;
    }

    /* Pending first: the KDC refuses a record whose device was never
     * programmed; a programmed device without a record would be worse. */
    if (add_token(adm, st, entry, rec, &state) != 0)
        goto cleanup;
    pending = 1;
    yk_admin_log(adm, "enroll principal=%s public_id=%s state=pending",
                 principal, pubid_mh);

    ret = yk_emu_save(&emu, a.emulate);
    if (ret) {
        yk_admin_fail("cannot write the token state file %s: %s", a.emulate,
                      yk_strerror(ret));
        goto cleanup;
    }
    if (set_token_state(adm, st, principal, pubid_mh, YK_TOKEN_ACTIVE, 1,
                        &old) != 0)
        goto cleanup;
    pending = 0;
    reserved = 0;
    yk_admin_log(adm, "enroll principal=%s public_id=%s state=active",
                 principal, pubid_mh);
    printf("Enrolled token %s for %s: active.\n"
           "Emulated: its state, AES key included, is in %s.\n", pubid_mh,
           principal, a.emulate);
    status = YK_ADMIN_EXIT_OK;

cleanup:
    if (pending) {
        /* The token never became usable: take its record back. */
        if (remove_pending(adm, st, principal, pubid_mh) == 0)
            yk_admin_log(adm, "enroll principal=%s public_id=%s "
                         "state=removed reason=enrolment-failed", principal,
                         pubid_mh);
        else
            yk_admin_fail("the pending token %s is left on %s: the KDC "
                          "refuses it; remove it once the directory "
                          "answers", pubid_mh, principal);
    }
    if (reserved && unlink(a.emulate) != 0 && errno != ENOENT)
        yk_admin_fail("cannot remove %s (holds no usable token): %s",
                      a.emulate, strerror(errno));
    yk_emu_clear(&emu);
    yk_zap(&secret, sizeof(secret));
    (void)munlock(&emu, sizeof(emu));
    (void)munlock(&secret, sizeof(secret));
    yk_secret_rec_free(rec);
    yk_entry_free(entry);
    yk_keyring_free(kr);
    free(principal);
    return status;
}

/* Turn echo off on the terminal fd; *saved_out keeps the old settings.
 * 1 when changed (restore later), 0 otherwise. */
static int
echo_off(int fd, struct termios *saved_out)
{
    struct termios t;

    if (tcgetattr(fd, saved_out) != 0)
        return 0;
    t = *saved_out;
    t.c_lflag &= ~(tcflag_t)ECHO;
    t.c_lflag |= ECHONL;
    return tcsetattr(fd, TCSAFLUSH, &t) == 0;
}

/* Read the secret input into buf (SECRET_INPUT_MAX bytes): from a
 * terminal one line without echo after a prompt, otherwise everything up
 * to end of file.  read(2), not stdio: no copy outside buf.  EFBIG when
 * longer. */
static krb5_error_code
read_secret_input(char *buf, size_t size, size_t *len_out)
{
    struct termios saved;
    krb5_error_code ret = 0;
    size_t len = 0;
    ssize_t n;
    int tty, restore = 0;
    char extra;

    tty = isatty(STDIN_FILENO);
    if (tty) {
        fprintf(stderr, "AES key (32 hex digits) and private id (12 hex "
                "digits): ");
        fflush(stderr);
        restore = echo_off(STDIN_FILENO, &saved);
    }
    for (;;) {
        if (len == size) {
            /* One byte more tells "exactly full" from "too long". */
            n = read(STDIN_FILENO, &extra, 1);
            if (n < 0 && errno == EINTR)
                continue;
            ret = (n == 0) ? 0 : (n < 0 ? errno : EFBIG);
            yk_zap(&extra, sizeof(extra));
            break;
        }
        n = read(STDIN_FILENO, buf + len, tty ? 1 : size - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            ret = errno;
            break;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (tty && buf[len - 1] == '\n')
            break;
    }
    if (restore)
        (void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
    if (!ret)
        *len_out = len;
    return ret;
}

/* Whether c is white space in the secret input. */
static int
is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
        c == '\f';
}

/* Parse "AESKEYHEX PRIVIDHEX" (white space around and between, nothing
 * else) from buf into *secret_out.  On failure *why_out names the problem
 * (never the input). */
static krb5_error_code
parse_secret_input(const char *buf, size_t len, yk_token_secret *secret_out,
                   const char **why_out)
{
    size_t i = 0, key_start, key_len, id_start, id_len;

    while (i < len && is_space(buf[i]))
        i++;
    key_start = i;
    while (i < len && !is_space(buf[i]))
        i++;
    key_len = i - key_start;
    while (i < len && is_space(buf[i]))
        i++;
    id_start = i;
    while (i < len && !is_space(buf[i]))
        i++;
    id_len = i - id_start;
    while (i < len && is_space(buf[i]))
        i++;

    if (key_len == 0) {
        *why_out = "standard input is empty";
        return EINVAL;
    }
    if (key_len != AES_KEY_HEX_LEN) {
        *why_out = "the AES key must be exactly 32 hex digits";
        return EINVAL;
    }
    if (yk_hex_decode(buf + key_start, key_len, secret_out->aes_key,
                      sizeof(secret_out->aes_key)) != 0) {
        *why_out = "the AES key is not hexadecimal";
        return EINVAL;
    }
    if (id_len == 0) {
        *why_out = "the private id (12 hex digits) is missing after the "
            "AES key";
        return EINVAL;
    }
    if (id_len != PRIVID_HEX_LEN) {
        *why_out = "the private id must be exactly 12 hex digits";
        return EINVAL;
    }
    if (yk_hex_decode(buf + id_start, id_len, secret_out->private_id,
                      sizeof(secret_out->private_id)) != 0) {
        *why_out = "the private id is not hexadecimal";
        return EINVAL;
    }
    if (i < len) {
        *why_out = "unexpected data after the private id";
        return EINVAL;
    }
    return 0;
}

/* import PRINCIPAL --public-id MODHEX: an existing token's AES key and
 * private id from standard input, stored active (counter 0). */
static int
run_import(yk_admin *adm, int argc, char **argv)
{
    const yk_admin_cmd *cmd = &yk_admin_cmd_import;
    char input[SECRET_INPUT_MAX];
    char pubid_mh[YK_PUBID_MODHEX_MAX + 1];
    yk_token_secret secret;
    yk_secret_rec *rec = NULL;
    yk_state_rec state;
    yk_keyring *kr = NULL;
    yk_entry *entry = NULL;
    yk_store *st = NULL;
    char *principal = NULL;
    const char *why = NULL;
    krb5_error_code ret;
    size_t len = 0;
    tok_args a;
    int status;

    memset(input, 0, sizeof(input));
    memset(&secret, 0, sizeof(secret));
    (void)mlock(input, sizeof(input));
    (void)mlock(&secret, sizeof(secret));
    status = parse_args(cmd, argc, argv, OPT_PUBLIC_ID | OPT_DESCRIPTION, 1,
                        1, &a);
    if (status >= 0)
        goto cleanup;
    if (a.public_id == NULL) {
        status = yk_admin_usage(cmd, "--public-id MODHEX is required");
        goto cleanup;
    }
    status = YK_ADMIN_EXIT_FAIL;
    if (canon_pubid(a.public_id, pubid_mh) != 0 ||
        check_description(a.description) != 0 ||
        yk_admin_principal(adm, a.args[0], &principal) != 0)
        goto cleanup;

    /* The secrets, before anything else is contacted. */
    ret = read_secret_input(input, sizeof(input), &len);
    if (ret == EFBIG) {
        yk_admin_fail("import %s: standard input is too long (expected "
                      "\"AESKEYHEX PRIVIDHEX\")", principal);
        goto cleanup;
    }
    if (ret) {
        yk_admin_fail("import %s: cannot read standard input: %s",
                      principal, strerror(ret));
        goto cleanup;
    }
    if (parse_secret_input(input, len, &secret, &why) != 0) {
        yk_admin_fail("import %s: %s (expected \"AESKEYHEX PRIVIDHEX\": 32 "
                      "and 12 hex digits on standard input)", principal,
                      why);
        goto cleanup;
    }
    yk_zap(input, sizeof(input));

    if (yk_admin_load_keyring(adm, &kr) != 0 ||
        yk_admin_store(adm, &st) != 0 ||
        read_entry(adm, st, principal, &entry) != 0 ||
        check_pubid_free(adm, st, pubid_mh) != 0)
        goto cleanup;
    ret = new_token_records(adm, kr, principal, pubid_mh, &secret,
                            YK_TOKEN_ACTIVE, a.description, &rec, &state);
    if (ret) {
        yk_admin_fail("cannot wrap the token's key: %s", yk_strerror(ret));
        goto cleanup;
    }
    if (add_token(adm, st, entry, rec, &state) != 0)
        goto cleanup;
    yk_admin_log(adm, "import principal=%s public_id=%s state=active",
                 principal, pubid_mh);
    printf("Imported token %s for %s: active (counter 0).\n", pubid_mh,
           principal);
    status = YK_ADMIN_EXIT_OK;

cleanup:
    yk_zap(input, sizeof(input));
    yk_zap(&secret, sizeof(secret));
    (void)munlock(input, sizeof(input));
    (void)munlock(&secret, sizeof(secret));
    yk_secret_rec_free(rec);
    yk_entry_free(entry);
    yk_keyring_free(kr);
    free(principal);
    return status;
}

/* One line of "ykadmin list", every field printable. */
typedef struct {
    char principal[PRINCIPAL_SHOW_MAX];
    char policy[8];
    char pubid[YK_PUBID_MODHEX_MAX + 1];
    char state[16];
    char counter[16];
    char split[16];              /* usage/session, "!" near the limit */
    char last_use[32];
    char enrolled_at[32];
    char enrolled_by[TEXT_SHOW_MAX];
    char description[TEXT_SHOW_MAX];
} list_row;

#define LIST_COLUMNS 10

static const char *const list_headers[LIST_COLUMNS] = {
    "PRINCIPAL", "POLICY", "PUBLIC_ID", "STATE", "COUNTER", "USAGE/SESS",
    "LAST_USE", "ENROLLED", "BY", "DESCRIPTION"
};

/* The fields of row r, in column order. */
static void
row_fields(const list_row *r, const char *f[LIST_COLUMNS])
{
    f[0] = r->principal;
    f[1] = r->policy;
    f[2] = r->pubid;
    f[3] = r->state;
    f[4] = r->counter;
    f[5] = r->split;
    f[6] = r->last_use;
    f[7] = r->enrolled_at;
    f[8] = r->enrolled_by;
    f[9] = r->description;
}

/* Fill row r from entry e's token t; returns 1 when the usage counter is
 * near its limit. */
static int
fill_row(const yk_entry *e, const yk_token *t, list_row *r)
{
    const char *name;
    unsigned int usage, session;
    int warn = 0;

    memset(r, 0, sizeof(*r));
    yk_admin_printable(e->principal, r->principal, sizeof(r->principal));
    name = yk_policy_name(e->has_policy ? e->policy : YK_POLICY_2FA);
    snprintf(r->policy, sizeof(r->policy), "%s", name ? name : "?");
    yk_admin_printable(t->pubid, r->pubid, sizeof(r->pubid));
    if (t->secret != NULL) {
        name = yk_token_state_name(t->secret->state);
        snprintf(r->state, sizeof(r->state), "%s", name ? name : "?");
        yk_admin_isotime(t->secret->enrolled_at, r->enrolled_at,
                         sizeof(r->enrolled_at));
        yk_admin_printable(t->secret->enrolled_by, r->enrolled_by,
                           sizeof(r->enrolled_by));
        yk_admin_printable(t->secret->description, r->description,
                           sizeof(r->description));
    } else {
        snprintf(r->state, sizeof(r->state), "no-secret");
        snprintf(r->enrolled_at, sizeof(r->enrolled_at), "-");
    }
    if (t->malformed) {
        snprintf(r->state, sizeof(r->state), "damaged");
        yk_admin_printable(t->malformed_reason != NULL ?
                           t->malformed_reason : "malformed record",
                           r->description, sizeof(r->description));
    }
    if (r->enrolled_by[0] == '\0')
        snprintf(r->enrolled_by, sizeof(r->enrolled_by), "-");
    if (t->has_state) {
        usage = (unsigned int)(t->state.counter >> 8);
        session = (unsigned int)(t->state.counter & 0xff);
        warn = usage + USAGE_WARN_MARGIN >= YK_USAGE_MAX;
        snprintf(r->counter, sizeof(r->counter), "%lu",
                 (unsigned long)t->state.counter);
        snprintf(r->split, sizeof(r->split), "%u/%u%s", usage, session,
                 warn ? "!" : "");
        yk_admin_isotime(t->state.last_use, r->last_use,
                         sizeof(r->last_use));
    } else {
        snprintf(r->counter, sizeof(r->counter), "-");
        snprintf(r->split, sizeof(r->split), "-");
        snprintf(r->last_use, sizeof(r->last_use), "-");
    }
    return warn;
}

/* Print rows as a table with columns as wide as their widest value; the
 * last column (free text) is not padded. */
static void
print_table(const list_row *rows, size_t n)
{
    size_t width[LIST_COLUMNS], i, j, w;
    const char *f[LIST_COLUMNS];

    for (j = 0; j < LIST_COLUMNS; j++)
        width[j] = strlen(list_headers[j]);
    for (i = 0; i < n; i++) {
        row_fields(&rows[i], f);
        for (j = 0; j < LIST_COLUMNS; j++) {
            w = strlen(f[j]);
            if (w > width[j])
                width[j] = w;
        }
    }
    for (i = 0; i <= n; i++) {
        if (i == 0)
            memcpy(f, list_headers, sizeof(f));
        else
            row_fields(&rows[i - 1], f);
        for (j = 0; j + 1 < LIST_COLUMNS; j++)
            printf("%-*s  ", (int)width[j], f[j]);
        printf("%s\n", f[LIST_COLUMNS - 1]);
    }
}

/* list [PRINCIPAL]: every token (or PRINCIPAL's) with its state and
 * counters.  Never shows a secret: the wrapped record is not printed. */
static int
run_list(yk_admin *adm, int argc, char **argv)
{
    const yk_admin_cmd *cmd = &yk_admin_cmd_list;
    yk_entry **entries = NULL;
    list_row *rows = NULL;
    yk_store *st = NULL;
    char *principal = NULL;
    krb5_error_code ret;
    size_t n = 0, nrows = 0, i, j;
    int status, warn = 0;
    tok_args a;

    status = parse_args(cmd, argc, argv, 0, 0, 1, &a);
    if (status >= 0)
        return status;
    status = YK_ADMIN_EXIT_FAIL;
    if (a.nargs == 1 && yk_admin_principal(adm, a.args[0], &principal) != 0)
        goto cleanup;
    if (yk_admin_store(adm, &st) != 0)
        goto cleanup;
    ret = yk_store_list(st, principal, &entries, &n);
    if (ret == YK_ERR_STORE_NOT_FOUND && principal != NULL) {
        yk_admin_fail("%s has no entry in the directory", principal);
        goto cleanup;
    }
    if (ret) {
        yk_admin_store_fail(adm, ret, "cannot list %s",
                            principal ? principal : "the tokens");
        goto cleanup;
    }

    for (i = 0; i < n; i++)
        nrows += entries[i]->ntokens;
    if (nrows == 0) {
        if (principal != NULL && n > 0)
            printf("%s has no token (policy %s).\n", principal,
                   yk_policy_name(entries[0]->has_policy ?
                                  entries[0]->policy : YK_POLICY_2FA));
        else
            printf("No token is enrolled.\n");
        status = YK_ADMIN_EXIT_OK;
        goto cleanup;
    }
    rows = calloc(nrows, sizeof(*rows));
    if (rows == NULL) {
        yk_admin_fail("out of memory");
        goto cleanup;
    }
    nrows = 0;
    for (i = 0; i < n; i++) {
        for (j = 0; j < entries[i]->ntokens; j++)
            warn |= fill_row(entries[i], &entries[i]->tokens[j],
                             &rows[nrows++]);
    }
    print_table(rows, nrows);
    for (i = 0; i < n; i++) {
        if (entries[i]->nmalformed > 0)
            printf("%s: %lu directory value(s) tied to no token could not "
                   "be parsed.\n", entries[i]->principal,
                   (unsigned long)entries[i]->nmalformed);
    }
    if (warn)
        printf("! usage counter within %d of its limit 0x%x: the token "
               "will soon stop producing OTPs; enrol a new one.\n",
               USAGE_WARN_MARGIN, YK_USAGE_MAX);
    status = YK_ADMIN_EXIT_OK;

cleanup:
    free(rows);
    yk_entries_free(entries, n);
    free(principal);
    return status;
}

/* disable / enable PUBLICID: find the holder, rewrite the token's state
 * (which also rewrites its state value, so KDC caches re-read). */
static int
change_state(yk_admin *adm, const yk_admin_cmd *cmd, int argc, char **argv,
             int new_state)
{
    char pubid_mh[YK_PUBID_MODHEX_MAX + 1];
    char *holder = NULL, *dn = NULL;
    yk_store *st = NULL;
    krb5_error_code ret;
    int status, old = 0;
    tok_args a;

    status = parse_args(cmd, argc, argv, 0, 1, 1, &a);
    if (status >= 0)
        return status;
    status = YK_ADMIN_EXIT_FAIL;
    if (canon_pubid(a.args[0], pubid_mh) != 0 ||
        yk_admin_store(adm, &st) != 0)
        goto cleanup;
    ret = yk_store_find_pubid(st, pubid_mh, &holder, &dn);
    if (ret == YK_ERR_TOKEN_UNKNOWN) {
        yk_admin_fail("no token with public id %s is enrolled", pubid_mh);
        goto cleanup;
    }
    if (ret) {
        yk_admin_store_fail(adm, ret, "cannot find the token %s", pubid_mh);
        goto cleanup;
    }
    if (set_token_state(adm, st, holder, pubid_mh, new_state, 0, &old) != 0)
        goto cleanup;
    if (old == new_state) {
        printf("Token %s of %s is already %s.\n", pubid_mh, holder,
               yk_token_state_name(new_state));
    } else {
        yk_admin_log(adm, "%s principal=%s public_id=%s state=%s",
                     cmd->name, holder, pubid_mh,
                     yk_token_state_name(new_state));
        printf("Token %s of %s: %s.\n", pubid_mh, holder,
               yk_token_state_name(new_state));
    }
    status = YK_ADMIN_EXIT_OK;

cleanup:
    free(holder);
    free(dn);
    return status;
}

/* disable PUBLICID: the KDC refuses the token from now on. */
static int
run_disable(yk_admin *adm, int argc, char **argv)
{
    return change_state(adm, &yk_admin_cmd_disable, argc, argv,
                        YK_TOKEN_DISABLED);
}

/* enable PUBLICID: a disabled token is accepted again. */
static int
run_enable(yk_admin *adm, int argc, char **argv)
{
    return change_state(adm, &yk_admin_cmd_enable, argc, argv,
                        YK_TOKEN_ACTIVE);
}

/* policy PRINCIPAL 2fa|otp: set the principal's policy (the store also
 * rewrites every token's state value). */
static int
run_policy(yk_admin *adm, int argc, char **argv)
{
    const yk_admin_cmd *cmd = &yk_admin_cmd_policy;
    yk_entry *entry = NULL;
    yk_store *st = NULL;
    char *principal = NULL;
    krb5_error_code ret;
    int status, policy = 0;
    tok_args a;

    status = parse_args(cmd, argc, argv, 0, 2, 2, &a);
    if (status >= 0)
        return status;
    if (yk_policy_parse(a.args[1], strlen(a.args[1]), &policy) != 0)
        return yk_admin_usage(cmd, "the policy must be 2fa or otp");
    status = YK_ADMIN_EXIT_FAIL;
    if (yk_admin_principal(adm, a.args[0], &principal) != 0 ||
        yk_admin_store(adm, &st) != 0 ||
        read_entry(adm, st, principal, &entry) != 0)
        goto cleanup;
    if (entry->ntokens == 0) {
        /* The policy lives with the tokens (their auxiliary class), and
         * matters only once the KDC offers a token. */
        yk_admin_fail("%s holds no token: enrol one first, then set its "
                      "policy", principal);
        goto cleanup;
    }
    if (entry->has_policy && entry->policy == policy) {
        printf("The policy of %s is already %s.\n", principal,
               yk_policy_name(policy));
        status = YK_ADMIN_EXIT_OK;
        goto cleanup;
    }
    ret = yk_store_set_policy(st, entry, policy);
    if (ret) {
        yk_admin_store_fail(adm, ret, "cannot set the policy of %s",
                            principal);
        goto cleanup;
    }
    yk_admin_log(adm, "policy principal=%s policy=%s", principal,
                 yk_policy_name(policy));
    printf("The policy of %s is now %s.\n", principal,
           yk_policy_name(policy));
    status = YK_ADMIN_EXIT_OK;

cleanup:
    yk_entry_free(entry);
    free(principal);
    return status;
}

/* The verdict on one OTP against principal's token tok: 0 with
 * *new_out filled when its counter is fresh, otherwise an exit status
 * after printing and logging why.  The unwrapped secret and the
 * decrypted fields are wiped here. */
static int
judge_otp(yk_admin *adm, const yk_keyring *kr, const char *principal,
          const yk_token *tok, const char *otp_str, yk_state_rec *new_out)
{
    yk_token_secret secret;
    yk_token_fields fields;
    krb5_error_code ret;
    uint32_t counter, stored;
    yk_otp otp;
    int status = YK_ADMIN_EXIT_FAIL;

    memset(&secret, 0, sizeof(secret));
    memset(&fields, 0, sizeof(fields));
    (void)mlock(&secret, sizeof(secret));
    if (tok == NULL || tok->secret == NULL) {
        yk_admin_fail("%s holds no token record for this public id",
                      principal);
        goto cleanup;
    }
    if (tok->malformed) {
        yk_admin_fail("token %s of %s is damaged in the directory (%s)",
                      tok->pubid, principal, tok->malformed_reason != NULL ?
                      tok->malformed_reason : "malformed");
        goto cleanup;
    }
    if (tok->secret->state != YK_TOKEN_ACTIVE) {
        yk_admin_log(adm, "verify principal=%s public_id=%s result=refused "
                     "reason=token-%s", principal, tok->pubid,
                     yk_token_state_name(tok->secret->state));
        yk_admin_fail("OTP refused: token %s of %s is %s", tok->pubid,
                      principal, yk_token_state_name(tok->secret->state));
        goto cleanup;
    }
    if (!tok->has_state) {
        yk_admin_fail("token %s of %s has no state record: the directory "
                      "entry is damaged", tok->pubid, principal);
        goto cleanup;
    }
    ret = yk_keywrap_unwrap(kr, tok->secret->wrapped, principal, tok->pubid,
                            &secret);
    if (ret) {
        yk_admin_fail("cannot unwrap the secret of token %s of %s: %s",
                      tok->pubid, principal, yk_strerror(ret));
        goto cleanup;
    }
    ret = yk_otp_verify(otp_str, strlen(otp_str), secret.aes_key,
                        secret.private_id, &otp, &fields);
    if (ret) {
        yk_admin_log(adm, "verify principal=%s public_id=%s result=refused "
                     "reason=bad-otp", principal, tok->pubid);
        yk_admin_fail("OTP refused for %s: %s", principal, yk_strerror(ret));
        goto cleanup;
    }
    counter = yk_otp_counter(&fields);
    stored = tok->state.counter;
    if (counter <= stored) {
        yk_admin_log(adm, "verify principal=%s public_id=%s counter=%lu "
                     "stored=%lu result=refused reason=%s", principal,
                     tok->pubid, (unsigned long)counter,
                     (unsigned long)stored,
                     counter == stored ? "replay" : "older-than-last-use");
        if (counter == stored)
            yk_admin_fail("OTP refused for %s: replayed (counter %lu was "
                          "already used)", principal,
                          (unsigned long)counter);
        else
            yk_admin_fail("OTP refused for %s: older than the token's last "
                          "use (counter %lu < %lu): an old OTP replayed, or "
                          "a cloned key", principal, (unsigned long)counter,
                          (unsigned long)stored);
        goto cleanup;
    }
    memset(new_out, 0, sizeof(*new_out));
    snprintf(new_out->pubid, sizeof(new_out->pubid), "%s", tok->pubid);
    new_out->counter = counter;
    new_out->gen = tok->state.gen + 1;
    new_out->has_nonce = 0;
    new_out->last_use = (int64_t)time(NULL);
    status = 0;

cleanup:
    yk_zap(&secret, sizeof(secret));
    yk_zap(&fields, sizeof(fields));
    (void)munlock(&secret, sizeof(secret));
    return status;
}

/* verify OTP: check an OTP as the KDC would and consume it (its counter
 * is stored with a compare-and-swap), for the helpdesk. */
static int
run_verify(yk_admin *adm, int argc, char **argv)
{
    const yk_admin_cmd *cmd = &yk_admin_cmd_verify;
    char *holder = NULL, *dn = NULL;
    yk_entry *entry = NULL;
    yk_keyring *kr = NULL;
    yk_store *st = NULL;
    yk_state_rec new_state;
    krb5_error_code ret;
    const char *s;
    yk_otp otp;
    int status, tries;
    tok_args a;

    status = parse_args(cmd, argc, argv, 0, 1, 1, &a);
    if (status >= 0)
        return status;
    status = YK_ADMIN_EXIT_FAIL;
    s = a.args[0];
    ret = yk_otp_parse(s, strlen(s), &otp);
    if (ret) {
        yk_admin_fail("not an OTP: %s", yk_strerror(ret));
        goto cleanup;
    }
    if (otp.pubid_len == 0) {
        yk_admin_fail("the OTP carries no public id");
        goto cleanup;
    }
    if (yk_admin_store(adm, &st) != 0)
        goto cleanup;
    ret = yk_store_find_pubid(st, otp.pubid_modhex, &holder, &dn);
    if (ret == YK_ERR_TOKEN_UNKNOWN) {
        yk_admin_fail("no token with public id %s is enrolled",
                      otp.pubid_modhex);
        goto cleanup;
    }
    if (ret) {
        yk_admin_store_fail(adm, ret, "cannot find the token %s",
                            otp.pubid_modhex);
        goto cleanup;
    }
    if (yk_admin_load_keyring(adm, &kr) != 0)
        goto cleanup;

    /* A lost swap means someone else used or changed the token: judge
     * the OTP again against what is there now. */
    ret = YK_ERR_STORE_CONFLICT;
    for (tries = 0; tries < SWAP_TRIES && ret == YK_ERR_STORE_CONFLICT;
         tries++) {
        yk_entry_free(entry);
        entry = NULL;
        if (read_entry(adm, st, holder, &entry) != 0 ||
            judge_otp(adm, kr, holder,
                      yk_entry_find_token(entry, otp.pubid_modhex), s,
                      &new_state) != 0)
            goto cleanup;
        ret = yk_store_cas_state(st, entry,
                                 yk_entry_find_token(entry,
                                                     otp.pubid_modhex),
                                 &new_state);
    }
    if (ret) {
        yk_admin_store_fail(adm, ret, "cannot store the counter of token "
                            "%s of %s (the OTP was not consumed)",
                            otp.pubid_modhex, holder);
        goto cleanup;
    }
    yk_admin_log(adm, "verify principal=%s public_id=%s counter=%lu "
                 "result=accepted", holder, otp.pubid_modhex,
                 (unsigned long)new_state.counter);
    printf("OTP accepted for %s: token %s, counter %lu (usage %lu, "
           "session %lu).\n", holder, otp.pubid_modhex,
           (unsigned long)new_state.counter,
           (unsigned long)(new_state.counter >> 8),
           (unsigned long)(new_state.counter & 0xff));
    status = YK_ADMIN_EXIT_OK;

cleanup:
    yk_entry_free(entry);
    yk_keyring_free(kr);
    free(holder);
    free(dn);
    return status;
}

const yk_admin_cmd yk_admin_cmd_enroll = {
    "enroll",
    "PRINCIPAL --emulate FILE [--public-id MODHEX] [--description TEXT]",
    "enrol a new token for a principal",
    "Generates the token's AES key and private id (libgcrypt's strong\n"
    "random pool), writes the token as pending into the principal's\n"
    "directory entry (wrapped with the master keyring), writes the token,\n"
    "then makes it active.  If a step fails, the pending record and the\n"
    "state file are removed again and the message says what is left.\n"
    "Programming a real YubiKey is not available yet in this version.\n\n"
    "Options:\n"
    "  --emulate FILE        write a software token state to FILE (for\n"
    "                        tests and demos: it holds the AES key); FILE\n"
    "                        must not exist; tests/emu/ykemu FILE prints\n"
    "                        the token's OTPs\n"
    "  --public-id MODHEX    the token's public id (default: cc followed by\n"
    "                        10 random modhex characters)\n"
    "  --description TEXT    free text shown by list (printable ASCII)\n",
    run_enroll
};

const yk_admin_cmd yk_admin_cmd_import = {
    "import",
    "PRINCIPAL --public-id MODHEX [--description TEXT]",
    "import a token, its key read from standard input",
    "Reads \"AESKEYHEX PRIVIDHEX\" from standard input: the token's AES key\n"
    "(32 hex digits) and private id (12 hex digits) separated by white\n"
    "space, nothing else (secrets never go on the command line).  From a\n"
    "terminal, one line is read without echo.  The token is stored active\n"
    "with counter 0.  A public id enrolled anywhere is refused.\n\n"
    "Options:\n"
    "  --public-id MODHEX    the token's public id (required)\n"
    "  --description TEXT    free text shown by list (printable ASCII)\n",
    run_import
};

const yk_admin_cmd yk_admin_cmd_list = {
    "list",
    "[PRINCIPAL]",
    "show tokens, their state and counters",
    "Prints one line per token (of every principal, or of PRINCIPAL):\n"
    "principal, policy, public id, state (pending, active, disabled),\n"
    "counter, usage/session counters, last use (UTC, or \"never\"),\n"
    "enrolment time, enrolled by, description.  A \"!\" after the\n"
    "usage/session counters marks a usage counter within 1000 of its\n"
    "limit 0x7fff.  Secrets are never shown.\n",
    run_list
};

const yk_admin_cmd yk_admin_cmd_disable = {
    "disable",
    "PUBLICID",
    "disable a token (the KDC refuses it at once)",
    "Marks the token disabled.  Its state value is rewritten too, so KDCs\n"
    "holding it in their cache re-read it before accepting an OTP.\n",
    run_disable
};

const yk_admin_cmd yk_admin_cmd_enable = {
    "enable",
    "PUBLICID",
    "enable a disabled token again",
    "Marks a disabled token active again.  A pending token (an enrolment\n"
    "that did not finish) cannot be enabled: enrol the token again.\n",
    run_enable
};

const yk_admin_cmd yk_admin_cmd_policy = {
    "policy",
    "PRINCIPAL 2fa|otp",
    "set a principal's policy: 2fa or otp",
    "2fa (the default): the KDC requires the password and an OTP.\n"
    "otp: the OTP alone is also accepted, over FAST armor only.\n"
    "The principal must hold a token (enrol it first).\n",
    run_policy
};

const yk_admin_cmd yk_admin_cmd_verify = {
    "verify",
    "OTP",
    "check and consume an OTP, as the KDC would",
    "Finds the token by the OTP's public id, decrypts the OTP with the\n"
    "token's key, and stores its counter, so the OTP cannot be used again.\n"
    "Refused: disabled or pending tokens, a wrong key or private id, a\n"
    "counter not above the stored one (a replay, or an old OTP).\n",
    run_verify
};
