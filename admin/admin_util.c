/* SPDX-License-Identifier: MIT */
/* admin_util.c: what the token commands share: options, checks, writes. */

/*
 * One option parser for every command (each allows a subset), the checks
 * of operator input (public ids, prefixes, descriptions), and the
 * directory steps several commands take: reading an entry, checking that
 * a public id is free, building and adding a token's records, changing a
 * token's state with the swap retried.  Every function prints the reason
 * of a failure itself (one line on standard error), so that a command
 * only decides what to do next.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <gcrypt.h>

#include "admin.h"
#include "errors.h"
#include "otp.h"
#include "record.h"
#include "secmem.h"
#include "store.h"

#define GEN_PUBID_TRIES 8             /* fresh public ids tried */

/* Long option names, their YK_OPT_* bit and whether they take a value. */
typedef struct {
    const char *name;
    unsigned int bit;
    int has_arg;
} opt_def;

static const opt_def opt_defs[] = {
    { "emulate", YK_OPT_EMULATE, 1 },
    { "public-id", YK_OPT_PUBLIC_ID, 1 },
    { "description", YK_OPT_DESCRIPTION, 1 },
    { "slot", YK_OPT_SLOT, 1 },
    { "force", YK_OPT_FORCE, 0 },
    { "require", YK_OPT_REQUIRE, 0 },
    { "access-code-file", YK_OPT_ACCESS_CODE_FILE, 1 },
    { "add", YK_OPT_ADD, 0 },
    { "replace", YK_OPT_REPLACE, 0 },
    { "public-id-prefix", YK_OPT_PREFIX, 1 },
    { "file", YK_OPT_FILE, 1 },
    { "principal", YK_OPT_PRINCIPAL, 1 },
    { "map", YK_OPT_MAP, 1 },
    { "format", YK_OPT_FORMAT, 1 },
    { "dry-run", YK_OPT_DRY_RUN, 0 },
    { "first-otp", YK_OPT_FIRST_OTP, 1 },
    { "json", YK_OPT_JSON, 0 },
    { "by", YK_OPT_BY, 1 },
    { "all", YK_OPT_ALL, 0 },
    { "resync", YK_OPT_RESYNC, 0 },
    { "keyring", YK_OPT_KEYRING, 1 },
    { "kdc-user", YK_OPT_KDC_USER, 1 },
    { "add-key", YK_OPT_ADD_KEY, 0 },
    { "counter", YK_OPT_COUNTER, 1 },
};
#define NOPT_DEFS (sizeof(opt_defs) / sizeof(opt_defs[0]))
#define OPT_HELP 'h'

/* Store the value of option bit (argument arg) into a.  0, or -1 when
 * --first-otp or --counter is given too often. */
static int
opt_store(yk_admin_args *a, unsigned int bit, const char *arg)
{
    switch (bit) {
    case YK_OPT_EMULATE: a->emulate = arg; break;
    case YK_OPT_PUBLIC_ID: a->public_id = arg; break;
    case YK_OPT_DESCRIPTION: a->description = arg; break;
    case YK_OPT_SLOT: a->slot = arg; break;
    case YK_OPT_FORCE: a->force = 1; break;
    case YK_OPT_REQUIRE: a->require = 1; break;
    case YK_OPT_ACCESS_CODE_FILE: a->access_code_file = arg; break;
    case YK_OPT_ADD: a->add = 1; break;
    case YK_OPT_REPLACE: a->replace = 1; break;
    case YK_OPT_PREFIX: a->public_id_prefix = arg; break;
    case YK_OPT_FILE: a->file = arg; break;
    case YK_OPT_PRINCIPAL: a->principal = arg; break;
    case YK_OPT_MAP: a->map = arg; break;
    case YK_OPT_FORMAT: a->format = arg; break;
    case YK_OPT_DRY_RUN: a->dry_run = 1; break;
    case YK_OPT_FIRST_OTP:
        if (a->nfirst_otp == YK_ADMIN_FIRST_OTP_MAX)
            return -1;
        a->first_otp[a->nfirst_otp++] = arg;
        break;
    case YK_OPT_JSON: a->json = 1; break;
    case YK_OPT_BY: a->by = arg; break;
    case YK_OPT_ALL: a->all = 1; break;
    case YK_OPT_RESYNC: a->resync = 1; break;
    case YK_OPT_KEYRING: a->keyring = arg; break;
    case YK_OPT_KDC_USER: a->kdc_user = arg; break;
    case YK_OPT_ADD_KEY: a->add_key = 1; break;
    case YK_OPT_COUNTER:
        if (a->ncounter == YK_ADMIN_COUNTER_MAX)
            return -1;
        a->counter[a->ncounter++] = arg;
        break;
    default: break;
    }
    return 0;
}

/* Parse argv for cmd; see admin.h.  getopt_long permutes, so options may
 * follow the positional arguments; "--" ends the options. */
int
yk_admin_parse_args(const yk_admin_cmd *cmd, int argc, char **argv,
                    unsigned int allowed, int min_args, int max_args,
                    yk_admin_args *a)
{
    struct option opts[NOPT_DEFS + 2];
    const char *name;
    size_t i;
    int c;

    memset(a, 0, sizeof(*a));
    memset(opts, 0, sizeof(opts));
    for (i = 0; i < NOPT_DEFS; i++) {
        opts[i].name = opt_defs[i].name;
        opts[i].has_arg = opt_defs[i].has_arg ? required_argument :
            no_argument;
        opts[i].val = (int)(i + 1000);
    }
    opts[NOPT_DEFS].name = "help";
    opts[NOPT_DEFS].val = OPT_HELP;

    optind = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == OPT_HELP)
            return yk_admin_help(cmd);
        if (c == ':')
            return yk_admin_usage(cmd, "option %s needs an argument",
                                  argv[optind - 1]);
        if (c < 1000 || c >= 1000 + (int)NOPT_DEFS)
            return yk_admin_usage(cmd, "unknown option %s",
                                  argv[optind - 1]);
        i = (size_t)(c - 1000);
        if (!(allowed & opt_defs[i].bit)) {
            name = argv[optind - 1];
            if (strncmp(name, "--", 2) != 0)
                name = "this option";
            return yk_admin_usage(cmd, "%s is not an option of %s", name,
                                  cmd->name);
        }
        if (opt_store(a, opt_defs[i].bit, optarg) != 0)
            return yk_admin_usage(cmd, "--%s given more than %d times",
                                  opt_defs[i].name,
                                  opt_defs[i].bit == YK_OPT_COUNTER ?
                                  YK_ADMIN_COUNTER_MAX :
                                  YK_ADMIN_FIRST_OTP_MAX);
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

/* Fold in (at most maxlen characters) to lower case into out; 0, or -1
 * when longer. */
static int
fold_lower(const char *in, size_t maxlen, char *out)
{
    size_t i, n = strlen(in);

    if (n > maxlen)
        return -1;
    for (i = 0; i < n; i++) {
        char c = in[i];

        out[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
    }
    out[n] = '\0';
    return 0;
}

/* Canonical public id, or an exit status after printing why. */
int
yk_admin_canon_pubid(const char *in, char out[YK_PUBID_MODHEX_MAX + 1])
{
    char shown[YK_PUBID_MODHEX_MAX + 1];

    yk_admin_printable(in, shown, sizeof(shown));
    if (fold_lower(in, YK_PUBID_MODHEX_MAX, out) != 0)
        return yk_admin_fail("public id \"%s...\" is too long (at most %d "
                             "modhex characters)", shown,
                             YK_PUBID_MODHEX_MAX);
    if (!yk_pubid_valid(out))
        return yk_admin_fail("invalid public id \"%s\": it must be an even "
                             "number (2 to %d) of modhex characters "
                             "(cbdefghijklnrtuv)", shown,
                             YK_PUBID_MODHEX_MAX);
    return 0;
}

/* Canonical prefix (possibly empty), or an exit status. */
int
yk_admin_check_prefix(const char *in, const char *what,
                      char out[YK_ADMIN_PREFIX_MAX + 1])
{
    char shown[YK_ADMIN_PREFIX_MAX + 4];
    size_t i, n;

    yk_admin_printable(in, shown, sizeof(shown));
    if (fold_lower(in, YK_ADMIN_PREFIX_MAX, out) != 0)
        return yk_admin_fail("%s \"%s...\" is too long (at most %d modhex "
                             "characters: generated public ids are %d "
                             "bytes)", what, shown, YK_ADMIN_PREFIX_MAX,
                             YK_ADMIN_GEN_PUBID_LEN);
    n = strlen(out);
    for (i = 0; i < n; i++) {
        if (strchr("cbdefghijklnrtuv", out[i]) == NULL)
            break;
    }
    if (i < n || n % 2 != 0)
        return yk_admin_fail("invalid %s \"%s\": it must be an even number "
                             "(0 to %d) of modhex characters "
                             "(cbdefghijklnrtuv)", what, shown,
                             YK_ADMIN_PREFIX_MAX);
    return 0;
}

/* Printable ASCII of bounded length, or an exit status. */
int
yk_admin_check_description(const char *d)
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

/* Fail unless pubid is free directory-wide; names the holder. */
int
yk_admin_pubid_free(yk_admin *adm, yk_store *st, const char *pubid)
{
    char *holder = NULL, *dn = NULL;
    krb5_error_code ret;
    int status;

    ret = yk_store_find_pubid(st, pubid, &holder, &dn);
    if (ret == YK_ERR_TOKEN_UNKNOWN)
        return 0;
    if (ret == YK_ERR_STORE_AMBIGUOUS)
        return yk_admin_fail("public id %s is already enrolled on several "
                             "entries: one token, one principal", pubid);
    if (ret)
        return yk_admin_store_fail(adm, ret, "cannot check whether public "
                                   "id %s is enrolled", pubid);
    status = yk_admin_fail("public id %s is already enrolled for %s: one "
                           "token, one principal", pubid, holder);
    free(holder);
    free(dn);
    return status;
}

/* The principal's entry, read fresh, or an exit status. */
int
yk_admin_read_entry(yk_admin *adm, yk_store *st, const char *principal,
                    yk_entry **entry_out)
{
    krb5_error_code ret;

    ret = yk_store_lookup(st, principal, 1, entry_out);
    if (ret == YK_ERR_STORE_NOT_FOUND)
        return yk_admin_no_entry(adm, NULL, principal);
    if (ret == YK_ERR_STORE_AMBIGUOUS)
        return yk_admin_fail("more than one directory entry matches %s: "
                             "fix the directory or the principal filter",
                             principal);
    if (ret)
        return yk_admin_store_fail(adm, ret, "cannot read %s", principal);
    return 0;
}

/* Who holds pubid, or an exit status. */
int
yk_admin_find_holder(yk_admin *adm, yk_store *st, const char *pubid,
                     char **holder_out)
{
    char *dn = NULL;
    krb5_error_code ret;

    ret = yk_store_find_pubid(st, pubid, holder_out, &dn);
    free(dn);
    if (ret == YK_ERR_TOKEN_UNKNOWN)
        return yk_admin_fail("no token with public id %s is enrolled",
                             pubid);
    if (ret == YK_ERR_STORE_AMBIGUOUS)
        return yk_admin_fail("public id %s is on several directory entries: "
                             "remove the wrong one with ldapmodify", pubid);
    if (ret)
        return yk_admin_store_fail(adm, ret, "cannot find the token %s",
                                   pubid);
    return 0;
}

/* The records of a new token; see admin.h. */
krb5_error_code
yk_admin_new_records(yk_admin *adm, const yk_keyring *kr,
                     const char *principal, const char *pubid,
                     const yk_token_secret *secret, int state,
                     const char *description, const char *serial,
                     uint32_t counter, int64_t last_use,
                     yk_secret_rec **rec_out, yk_state_rec *state_out)
{
    yk_secret_rec *rec = NULL;
    krb5_error_code ret;
    uint64_t gen;

    rec = calloc(1, sizeof(*rec));
    if (rec == NULL)
        return ENOMEM;
    snprintf(rec->pubid, sizeof(rec->pubid), "%s", pubid);
    rec->state = state;
    rec->enrolled_at = (int64_t)time(NULL);
    rec->serial = strdup(serial != NULL ? serial : "");
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
    state_out->counter = counter;
    /* A random first generation (62 bits, room for every later + 1):
     * a public id deleted and enrolled again never starts from a state
     * value a KDC may still hold cached for the old token, whose swap
     * would otherwise find that value and win (the ABA of issue 10;
     * the swap asserts the secret value too). */
    gcry_create_nonce(&gen, sizeof(gen));
    state_out->gen = gen & YK_ADMIN_GEN_MASK;
    state_out->has_nonce = 0;
    state_out->nonce = YK_NONCE_NONE;
    state_out->last_use = last_use;
    *rec_out = rec;
    rec = NULL;

cleanup:
    yk_secret_rec_free(rec);
    return ret;
}

/* Add a token; a public id enrolled meanwhile names its holder. */
int
yk_admin_add_token(yk_admin *adm, yk_store *st, const yk_entry *entry,
                   const yk_secret_rec *rec, const yk_state_rec *state)
{
    krb5_error_code ret;

    ret = yk_store_add_token(st, entry, rec, state);
    if (ret == YK_ERR_STORE_EXISTS)
        return yk_admin_pubid_free(adm, st, rec->pubid) ?
            YK_ADMIN_EXIT_FAIL :
            yk_admin_fail("public id %s is already enrolled", rec->pubid);
    if (ret)
        return yk_admin_store_fail(adm, ret, "cannot add token %s to %s",
                                   rec->pubid, entry->principal);
    return 0;
}

/* Change a token's state with the swap retried; see admin.h. */
krb5_error_code
yk_admin_set_token_state(yk_admin *adm, yk_store *st, const char *principal,
                         const char *pubid, int new_state, int from_pending,
                         const char *serial, int *old_out)
{
    yk_secret_rec *rec = NULL;
    yk_entry *entry = NULL;
    yk_token *tok;
    krb5_error_code ret = YK_ERR_STORE_CONFLICT;
    int tries;

    for (tries = 0; tries < YK_ADMIN_SWAP_TRIES &&
             ret == YK_ERR_STORE_CONFLICT; tries++) {
        yk_entry_free(entry);
        entry = NULL;
        yk_secret_rec_free(rec);
        rec = NULL;
        if (yk_admin_read_entry(adm, st, principal, &entry) != 0) {
            ret = YK_ERR_STORE_NOT_FOUND;
            goto cleanup;
        }
        tok = yk_entry_find_token(entry, pubid);
        if (tok == NULL || tok->secret == NULL) {
            ret = YK_ERR_TOKEN_UNKNOWN;
            yk_admin_no_record(adm, principal, pubid);
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
        if (tok->secret->state == new_state && serial == NULL) {
            ret = 0;
            goto cleanup;
        }
        ret = yk_secret_rec_copy(tok->secret, &rec);
        if (ret) {
            yk_admin_fail("out of memory");
            goto cleanup;
        }
        rec->state = new_state;
        if (serial != NULL) {
            free(rec->serial);
            rec->serial = strdup(serial);
            if (rec->serial == NULL) {
                ret = ENOMEM;
                yk_admin_fail("out of memory");
                goto cleanup;
            }
        }
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

/* A fresh public id: prefix + random bytes, retried while taken. */
int
yk_admin_generate_pubid(yk_admin *adm, yk_store *st, const char *prefix,
                        unsigned char pubid[YK_PUBID_MAX],
                        size_t *pubid_len_out,
                        char pubid_mh[YK_PUBID_MODHEX_MAX + 1])
{
    char *holder = NULL, *dn = NULL;
    krb5_error_code ret;
    size_t plen = 0;
    int tries;

    ret = yk_crypto_init();
    if (ret)
        return yk_admin_fail("cannot initialise libgcrypt: %s",
                             yk_strerror(ret));
    ret = yk_modhex_decode(prefix, strlen(prefix), pubid,
                           YK_ADMIN_GEN_PUBID_LEN, &plen);
    if (ret || plen >= YK_ADMIN_GEN_PUBID_LEN)
        return yk_admin_fail("invalid public id prefix \"%s\"", prefix);
    for (tries = 0; tries < GEN_PUBID_TRIES; tries++) {
        /* Public ids are not secret: the strong (not "very strong") pool
         * is plenty. */
        gcry_randomize(pubid + plen, YK_ADMIN_GEN_PUBID_LEN - plen,
                       GCRY_STRONG_RANDOM);
        yk_modhex_encode(pubid, YK_ADMIN_GEN_PUBID_LEN, pubid_mh);
        ret = yk_store_find_pubid(st, pubid_mh, &holder, &dn);
        if (ret == YK_ERR_TOKEN_UNKNOWN) {
            *pubid_len_out = YK_ADMIN_GEN_PUBID_LEN;
            return 0;
        }
        if (ret && ret != YK_ERR_STORE_AMBIGUOUS)
            return yk_admin_store_fail(adm, ret, "cannot check whether "
                                       "public id %s is enrolled", pubid_mh);
        free(holder);
        free(dn);
        holder = dn = NULL;
    }
    return yk_admin_fail("no free public id with prefix \"%s\" found in %d "
                         "tries: use a shorter prefix", prefix,
                         GEN_PUBID_TRIES);
}
