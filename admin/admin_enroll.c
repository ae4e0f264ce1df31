/* SPDX-License-Identifier: MIT */
/* admin_enroll.c: ykadmin enroll: a new token key, written into a YubiKey. */

/*
 * The order makes every failure leave a state that says what happened:
 *
 *   1. everything that can fail without a write: options, the access
 *      code, the KDC database (--require), the keyring, the directory
 *      entry, the public id;
 *   2. the token's records written as pending (a new token: one modify
 *      adding them; --replace: one modify replacing the secret and
 *      resetting the counter) -- the KDC refuses a pending token;
 *   3. the slot programmed (libykpers-1), or the software token's state
 *      file written (--emulate);
 *   4. the record made active (with the device's serial);
 *   5. with --require, +requires_preauth +requires_hwauth set.
 *
 * A failure at 3 with the device unchanged takes step 2 back (the pending
 * record removed, or the replaced token's previous record and counter
 * restored); when the device's state is unknown, or step 4 fails, the
 * message says what the slot and the directory hold and how to finish.
 * The AES key and private id come from libgcrypt's very strong random
 * pool into one locked buffer, wiped on every path; they are never
 * printed (the emulated token's state file holds them, and says so).
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <gcrypt.h>

#include "admin.h"
#include "emu.h"
#include "errors.h"
#include "otp.h"
#include "program.h"
#include "record.h"
#include "secmem.h"
#include "store.h"

#define SERIAL_TEXT_MAX 16            /* a 32-bit serial in decimal */

/* Every secret of one enrolment, in one locked, wiped buffer. */
typedef struct {
    yk_token_secret secret;      /* the AES key and private id */
    yk_program_params prog;      /* what goes into the slot */
    yk_emu emu;                  /* or the software token */
} enroll_secrets;

/* One enrolment: the options and what was done so far. */
typedef struct {
    yk_admin *adm;
    yk_admin_args a;
    yk_store *st;
    char *principal;
    int slot;
    char prefix[YK_ADMIN_PREFIX_MAX + 1];
    unsigned char pubid[YK_PUBID_MAX];
    size_t pubid_len;
    char pubid_mh[YK_PUBID_MODHEX_MAX + 1];
    int replacing;               /* --replace: an existing token re-keyed */
    yk_secret_rec *old_rec;      /* its record before (NULL: damaged) */
    yk_state_rec old_state;      /* and its state, when has_old_state */
    int has_old_state;
    int reserved;                /* the --emulate file was created */
} enroll_ctx;

/* Check the options that need nothing else; -1 to go on, or an exit
 * status. */
static int
check_options(enroll_ctx *c)
{
    const yk_admin_cmd *cmd = &yk_admin_cmd_enroll;
    const yk_admin_args *a = &c->a;
    const char *prefix;

    c->slot = 2;
    if (a->slot != NULL) {
        if (strcmp(a->slot, "1") == 0)
            c->slot = 1;
        else if (strcmp(a->slot, "2") != 0)
            return yk_admin_usage(cmd, "--slot must be 1 or 2");
    }
    if (a->add && a->replace)
        return yk_admin_usage(cmd, "--add and --replace exclude each other");
    if (a->public_id != NULL && a->public_id_prefix != NULL)
        return yk_admin_usage(cmd, "--public-id and --public-id-prefix "
                              "exclude each other");
    if (a->replace && a->public_id_prefix != NULL)
        return yk_admin_usage(cmd, "--replace keeps the token's public id: "
                              "no --public-id-prefix");
    if (a->emulate != NULL && *a->emulate == '\0')
        return yk_admin_usage(cmd, "--emulate needs a file name");
    if (a->emulate != NULL && a->access_code_file != NULL)
        return yk_admin_usage(cmd, "--access-code-file unlocks a YubiKey "
                              "slot: not with --emulate");
    if (c->slot == 1 && !a->force)
        return yk_admin_fail("slot 1 holds Yubico's factory credential (the "
                             "one YubiCloud knows); overwriting it cannot "
                             "be undone: give --force to do it anyway, or "
                             "use slot 2");
    if (yk_admin_check_description(a->description) != 0)
        return YK_ADMIN_EXIT_FAIL;
    if (a->public_id != NULL &&
        yk_admin_canon_pubid(a->public_id, c->pubid_mh) != 0)
        return YK_ADMIN_EXIT_FAIL;

    /* The prefix of generated public ids: the option, else kdc.conf,
     * else Yubico's range for owner-programmed keys. */
    prefix = a->public_id_prefix;
    if (prefix != NULL) {
        if (yk_admin_check_prefix(prefix, "--public-id-prefix",
                                  c->prefix) != 0)
            return YK_ADMIN_EXIT_FAIL;
    }
    return -1;
}

/* The prefix from kdc.conf or the default, once the configuration is
 * loaded; 0, or an exit status. */
static int
config_prefix(enroll_ctx *c)
{
    if (c->a.public_id_prefix != NULL || c->a.public_id != NULL)
        return 0;
    if (yk_admin_load_config(c->adm) != 0)
        return YK_ADMIN_EXIT_FAIL;
    if (c->adm->public_id_prefix != NULL)
        return yk_admin_check_prefix(c->adm->public_id_prefix,
                                     "yubikey_public_id_prefix (kdc.conf)",
                                     c->prefix);
    snprintf(c->prefix, sizeof(c->prefix), "%s", YK_ADMIN_DEFAULT_PREFIX);
    return 0;
}

/* Describe entry's tokens in out ("vvcc... (active), ..."). */
static void
describe_tokens(const yk_entry *entry, char *out, size_t size)
{
    size_t i, len = 0;
    const char *state;

    out[0] = '\0';
    for (i = 0; i < entry->ntokens && len + 1 < size; i++) {
        const yk_token *t = &entry->tokens[i];

        state = t->malformed ? "damaged" : t->secret == NULL ? "no secret" :
            yk_token_state_name(t->secret->state);
        snprintf(out + len, size - len, "%s%s (%s)", i > 0 ? ", " : "",
                 t->pubid, state != NULL ? state : "?");
        len = strlen(out);
    }
}

/* Decide which public id the token gets: the replaced token's, the one
 * given, or a generated one.  0, or an exit status. */
static int
choose_pubid(enroll_ctx *c, const yk_entry *entry)
{
    char list[512];
    const yk_token *target = NULL;
    krb5_error_code ret;

    describe_tokens(entry, list, sizeof(list));
    if (c->a.replace) {
        if (entry->ntokens == 0)
            return yk_admin_fail("%s holds no token to replace: enrol "
                                 "without --replace", c->principal);
        if (c->a.public_id != NULL) {
            target = yk_entry_find_token(entry, c->pubid_mh);
            if (target == NULL)
                return yk_admin_fail("%s holds no token %s (it holds %s)",
                                     c->principal, c->pubid_mh, list);
        } else if (entry->ntokens > 1) {
            return yk_admin_fail("%s holds %lu tokens (%s): name the one to "
                                 "replace with --public-id",
                                 c->principal,
                                 (unsigned long)entry->ntokens, list);
        } else {
            target = &entry->tokens[0];
        }
        snprintf(c->pubid_mh, sizeof(c->pubid_mh), "%s", target->pubid);
        c->replacing = 1;
        if (target->secret != NULL && !target->malformed &&
            yk_secret_rec_copy(target->secret, &c->old_rec) != 0)
            return yk_admin_fail("out of memory");
        c->has_old_state = target->has_state;
        c->old_state = target->state;
    } else {
        if (entry->ntokens > 0 && !c->a.add)
            return yk_admin_fail("%s already holds %s: give --add to enrol "
                                 "another token, or --replace to replace "
                                 "it", c->principal, list);
        if (c->a.public_id == NULL)
            return yk_admin_generate_pubid(c->adm, c->st, c->prefix,
                                           c->pubid, &c->pubid_len,
                                           c->pubid_mh);
        if (yk_admin_pubid_free(c->adm, c->st, c->pubid_mh) != 0)
            return YK_ADMIN_EXIT_FAIL;
    }
    ret = yk_modhex_decode(c->pubid_mh, strlen(c->pubid_mh), c->pubid,
                           sizeof(c->pubid), &c->pubid_len);
    if (ret)
        return yk_admin_fail("invalid public id %s: %s", c->pubid_mh,
                             yk_strerror(ret));
    return 0;
}

/* Create the --emulate file exclusively (the state is written over it
 * later).  0, or an exit status. */
static int
reserve_emulate_file(enroll_ctx *c)
{
    const char *path = c->a.emulate;
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
    c->reserved = 1;
    return 0;
}

/* Write the token's records as pending: added, or (--replace) replacing
 * the old token's secret with its counter reset, in one modify.  0, or
 * an exit status. */
static int
write_pending(enroll_ctx *c, const yk_entry *entry, const yk_secret_rec *rec,
              const yk_state_rec *state)
{
    yk_entry *fresh = NULL;
    const yk_entry *e = entry;
    const yk_token *tok;
    krb5_error_code ret = YK_ERR_STORE_CONFLICT;
    int tries;

    if (!c->replacing)
        return yk_admin_add_token(c->adm, c->st, entry, rec, state);
    for (tries = 0; tries < YK_ADMIN_SWAP_TRIES &&
             ret == YK_ERR_STORE_CONFLICT; tries++) {
        if (tries > 0) {
            /* A KDC used the token meanwhile: take the values now
             * there. */
            yk_entry_free(fresh);
            fresh = NULL;
            if (yk_admin_read_entry(c->adm, c->st, c->principal,
                                    &fresh) != 0) {
                ret = YK_ERR_STORE_UNAVAILABLE;
                break;
            }
            e = fresh;
        }
        tok = yk_entry_find_token(e, c->pubid_mh);
        if (tok == NULL) {
            yk_entry_free(fresh);
            return yk_admin_fail("token %s of %s disappeared meanwhile: "
                                 "nothing was written", c->pubid_mh,
                                 c->principal);
        }
        ret = yk_store_update_token(c->st, e, tok, rec, state);
    }
    yk_entry_free(fresh);
    if (ret == YK_ERR_STORE_UNAVAILABLE)
        return YK_ADMIN_EXIT_FAIL;
    if (ret)
        return yk_admin_store_fail(c->adm, ret, "cannot replace token %s "
                                   "of %s (nothing was written)",
                                   c->pubid_mh, c->principal);
    return 0;
}

/* Take the pending write back after the device was left unchanged:
 * remove the new token, or restore the replaced one's record and
 * counter.  Returns 0 when done (printing nothing), else a code after
 * printing why. */
static krb5_error_code
undo_pending(enroll_ctx *c)
{
    yk_entry *entry = NULL;
    yk_token *tok;
    krb5_error_code ret;

    if (yk_admin_read_entry(c->adm, c->st, c->principal, &entry) != 0)
        return YK_ERR_STORE_UNAVAILABLE;
    tok = yk_entry_find_token(entry, c->pubid_mh);
    if (tok == NULL || tok->secret == NULL ||
        tok->secret->state != YK_TOKEN_PENDING) {
        ret = YK_ERR_TOKEN_UNKNOWN;
        yk_admin_fail("token %s of %s is no longer the pending record "
                      "written: left as it is", c->pubid_mh, c->principal);
        goto cleanup;
    }
    if (!c->replacing)
        ret = yk_store_delete_token(c->st, entry, tok);
    else if (c->old_rec != NULL)
        ret = yk_store_update_token(c->st, entry, tok, c->old_rec,
                                    c->has_old_state ? &c->old_state :
                                    NULL);
    else
        ret = YK_ERR_RECORD_FORMAT;     /* nothing sound to restore */
    if (ret && ret != YK_ERR_RECORD_FORMAT)
        yk_admin_store_fail(c->adm, ret, "cannot take back the pending "
                            "record of token %s of %s", c->pubid_mh,
                            c->principal);

cleanup:
    yk_entry_free(entry);
    return ret;
}

/* Say what the directory holds after programming failed with the device
 * unchanged, taking the pending write back first. */
static void
report_unchanged(enroll_ctx *c)
{
    const char *dev = c->a.emulate != NULL ? "no token state file was "
        "written" : "the YubiKey was not changed";

    if (undo_pending(c) == 0) {
        if (c->replacing) {
            yk_admin_log(c->adm, "enroll principal=%s public_id=%s "
                         "state=restored reason=programming-failed",
                         c->principal, c->pubid_mh);
            yk_admin_fail("%s; token %s of %s has its previous key and "
                          "counter again: it works as before", dev,
                          c->pubid_mh, c->principal);
        } else {
            yk_admin_log(c->adm, "enroll principal=%s public_id=%s "
                         "state=removed reason=programming-failed",
                         c->principal, c->pubid_mh);
            yk_admin_fail("%s, and the pending record of token %s was "
                          "removed from %s: nothing is enrolled", dev,
                          c->pubid_mh, c->principal);
        }
        return;
    }
    yk_admin_fail("%s; token %s of %s is left pending (the KDC refuses it): "
                  "\"ykadmin %s\" once the directory answers", dev,
                  c->pubid_mh, c->principal, c->replacing ?
                  "enroll --replace" : "delete PUBLICID, or purge");
}

/* Write the software token's state file; 0, or an exit status after
 * saying what the directory holds. */
static int
program_emulated(enroll_ctx *c, enroll_secrets *s)
{
    krb5_error_code ret;

    ret = yk_emu_init(&s->emu, c->pubid, c->pubid_len);
    if (ret == 0) {
        memcpy(s->emu.aes_key, s->secret.aes_key, sizeof(s->emu.aes_key));
        memcpy(s->emu.private_id, s->secret.private_id,
               sizeof(s->emu.private_id));
        ret = yk_emu_save(&s->emu, c->a.emulate);
    }
    if (ret) {
        yk_admin_fail("cannot write the token state file %s: %s",
                      c->a.emulate, yk_strerror(ret));
        report_unchanged(c);
        return YK_ADMIN_EXIT_FAIL;
    }
    return 0;
}

/* Program the YubiKey's slot; 0 with *serial_out set, or an exit status
 * after saying what the device and the directory hold. */
static int
program_device(enroll_ctx *c, enroll_secrets *s, unsigned int *serial_out)
{
    char errbuf[YK_PROGRAM_ERRBUF_LEN];
    krb5_error_code ret;

    memcpy(s->prog.aes_key, s->secret.aes_key, sizeof(s->prog.aes_key));
    memcpy(s->prog.private_id, s->secret.private_id,
           sizeof(s->prog.private_id));
    memcpy(s->prog.pubid, c->pubid, c->pubid_len);
    s->prog.pubid_len = c->pubid_len;
    s->prog.slot = c->slot;
    errbuf[0] = '\0';
    ret = yk_program_device(&s->prog, c->a.force, errbuf, sizeof(errbuf),
                            serial_out);
    if (ret == 0)
        return 0;
    yk_admin_fail("%s", errbuf[0] != '\0' ? errbuf : yk_strerror(ret));
    if (ret != EIO) {
        report_unchanged(c);
        return YK_ADMIN_EXIT_FAIL;
    }
    /* The write may or may not have reached the slot. */
    if (!c->replacing && undo_pending(c) == 0) {
        yk_admin_log(c->adm, "enroll principal=%s public_id=%s "
                     "state=removed reason=device-state-unknown",
                     c->principal, c->pubid_mh);
        yk_admin_fail("slot %d's state is unknown; the pending record of "
                      "token %s was removed from %s: nothing is enrolled, "
                      "enrol again", c->slot, c->pubid_mh, c->principal);
    } else {
        yk_admin_fail("slot %d's state is unknown; token %s of %s is "
                      "pending with the new key (the KDC refuses it): run "
                      "\"ykadmin enroll %s --replace --public-id %s\" to "
                      "program the slot again", c->slot, c->pubid_mh,
                      c->principal, c->principal, c->pubid_mh);
    }
    return YK_ADMIN_EXIT_FAIL;
}

/* Read the access code that unlocks the slot; 0, or an exit status. */
static int
read_access_code(enroll_ctx *c, enroll_secrets *s)
{
    krb5_error_code ret;
    const char *src = c->a.access_code_file;

    if (src == NULL)
        return 0;
    ret = yk_program_read_access_code(src, s->prog.access_code);
    if (ret == YK_ERR_HEX)
        return yk_admin_fail("the access code in %s must be exactly 12 "
                             "hexadecimal digits on one line",
                             strcmp(src, "-") == 0 ? "standard input" : src);
    if (ret)
        return yk_admin_fail("cannot read the access code from %s: %s",
                             strcmp(src, "-") == 0 ? "standard input" : src,
                             yk_strerror(ret));
    s->prog.has_access_code = 1;
    return 0;
}

/* Set the KDC flags after the token became active; 0, or an exit
 * status. */
static int
require_hwauth(enroll_ctx *c, yk_admin_kdb *kdb)
{
    int changed = 0;

    if (yk_admin_kdb_require_hwauth(kdb, c->principal, &changed) != 0)
        return yk_admin_fail("token %s of %s is active, but the principal "
                             "does not require it: run \"kadmin.local "
                             "modprinc +requires_preauth +requires_hwauth "
                             "%s\"", c->pubid_mh, c->principal,
                             c->principal);
    if (changed)
        yk_admin_log(c->adm, "require principal=%s "
                     "attributes=+requires_preauth,+requires_hwauth",
                     c->principal);
    return 0;
}

/* enroll PRINCIPAL: see the top of this file. */
static int
run_enroll(yk_admin *adm, int argc, char **argv)
{
    const yk_admin_cmd *cmd = &yk_admin_cmd_enroll;
    unsigned int allowed = YK_OPT_EMULATE | YK_OPT_PUBLIC_ID |
        YK_OPT_DESCRIPTION | YK_OPT_SLOT | YK_OPT_FORCE | YK_OPT_REQUIRE |
        YK_OPT_ACCESS_CODE_FILE | YK_OPT_ADD | YK_OPT_REPLACE |
        YK_OPT_PREFIX;
    char serial_text[SERIAL_TEXT_MAX];
    enroll_secrets *s = NULL;
    yk_secret_rec *rec = NULL;
    yk_admin_kdb *kdb = NULL;
    yk_keyring *kr = NULL;
    yk_entry *entry = NULL;
    yk_state_rec state;
    krb5_error_code ret;
    unsigned int serial = 0;
    int status, pending = 0, old = 0;
    enroll_ctx c;

    memset(&c, 0, sizeof(c));
    c.adm = adm;
    status = yk_admin_parse_args(cmd, argc, argv, allowed, 1, 1, &c.a);
    if (status >= 0)
        return status;
    status = check_options(&c);
    if (status >= 0)
        return status;
    status = YK_ADMIN_EXIT_FAIL;

    /* Every secret in one locked buffer (mlock may be refused to an
     * unprivileged user: then it is only wiped). */
    s = calloc(1, sizeof(*s));
    if (s == NULL) {
        yk_admin_fail("out of memory");
        goto cleanup;
    }
    (void)mlock(s, sizeof(*s));

    if (c.a.emulate == NULL && !yk_program_available()) {
        yk_admin_fail("this ykadmin was built without libykpers-1 and "
                      "cannot program a YubiKey: use --emulate FILE for a "
                      "software token");
        goto cleanup;
    }
    if (yk_admin_principal(adm, c.a.args[0], &c.principal) != 0 ||
        read_access_code(&c, s) != 0 || config_prefix(&c) != 0)
        goto cleanup;

    /* Everything that can fail without a write, first. */
    if (c.a.require) {
        int exists = 0;

        if (yk_admin_kdb_open(adm, &kdb) != 0 ||
            yk_admin_kdb_exists(kdb, c.principal, &exists) != 0)
            goto cleanup;
        if (!exists) {
            yk_admin_fail("%s is not in the KDC database: create it first "
                          "(kadmin addprinc)", c.principal);
            goto cleanup;
        }
    }
    if (yk_admin_load_keyring(adm, &kr) != 0 ||
        yk_admin_store(adm, &c.st) != 0 ||
        yk_admin_read_entry(adm, c.st, c.principal, &entry) != 0 ||
        choose_pubid(&c, entry) != 0)
        goto cleanup;
    if (c.a.emulate != NULL && reserve_emulate_file(&c) != 0)
        goto cleanup;

    /* The token: key and private id from the very strong pool. */
    ret = yk_crypto_init();
    if (ret) {
        yk_admin_fail("cannot initialise libgcrypt: %s", yk_strerror(ret));
        goto cleanup;
    }
    gcry_randomize(s->secret.aes_key, sizeof(s->secret.aes_key),
                   GCRY_VERY_STRONG_RANDOM);
    gcry_randomize(s->secret.private_id, sizeof(s->secret.private_id),
                   GCRY_VERY_STRONG_RANDOM);
    ret = yk_admin_new_records(adm, kr, c.principal, c.pubid_mh, &s->secret,
                               YK_TOKEN_PENDING, c.a.description, NULL, 0,
                               0, &rec, &state);
    if (ret) {
        yk_admin_fail("cannot wrap the token's key: %s", yk_strerror(ret));
        goto cleanup;
    }

    /* Pending first: the KDC refuses a record whose device was never
     * programmed; a programmed device without a record would be worse. */
    if (write_pending(&c, entry, rec, &state) != 0)
        goto cleanup;
    pending = 1;
    yk_admin_log(adm, "enroll principal=%s public_id=%s state=pending%s",
                 c.principal, c.pubid_mh, c.replacing ? " replace=yes" : "");

    if (c.a.emulate != NULL) {
        if (program_emulated(&c, s) != 0) {
            pending = 0;           /* reported: taken back or left */
            goto cleanup;
        }
    } else {
        if (program_device(&c, s, &serial) != 0) {
            pending = 0;
            goto cleanup;
        }
        yk_admin_log(adm, "enroll principal=%s public_id=%s slot=%d "
                     "serial=%u programmed", c.principal, c.pubid_mh,
                     c.slot, serial);
    }

    snprintf(serial_text, sizeof(serial_text), "%u", serial);
    if (yk_admin_set_token_state(adm, c.st, c.principal, c.pubid_mh,
                                 YK_TOKEN_ACTIVE, 1,
                                 serial != 0 ? serial_text : NULL,
                                 &old) != 0) {
        if (c.a.emulate == NULL) {
            pending = 0;
            yk_admin_fail("slot %d of the YubiKey now holds token %s, but "
                          "its record could not be made active: it is "
                          "pending in %s's entry (the KDC refuses it); run "
                          "\"ykadmin enroll %s --replace --public-id %s\" "
                          "once the directory answers", c.slot, c.pubid_mh,
                          c.principal, c.principal, c.pubid_mh);
        }
        goto cleanup;
    }
    pending = 0;
    c.reserved = 0;
    yk_admin_log(adm, "enroll principal=%s public_id=%s state=active",
                 c.principal, c.pubid_mh);
    if (c.a.emulate != NULL)
        printf("Enrolled token %s for %s: active.\n"
               "Emulated: its state, AES key included, is in %s.\n",
               c.pubid_mh, c.principal, c.a.emulate);
    else
        printf("Enrolled token %s for %s in slot %d of YubiKey %s: "
               "active.\n", c.pubid_mh, c.principal, c.slot,
               serial != 0 ? serial_text : "(serial hidden)");

    status = YK_ADMIN_EXIT_OK;
    if (kdb != NULL && require_hwauth(&c, kdb) != 0)
        status = YK_ADMIN_EXIT_FAIL;
    else if (kdb != NULL)
        printf("%s now requires a hardware token "
               "(+requires_preauth +requires_hwauth).\n", c.principal);

cleanup:
    if (pending) {
        /* The token never became usable: take its record back. */
        if (undo_pending(&c) == 0)
            yk_admin_log(adm, "enroll principal=%s public_id=%s "
                         "state=%s reason=enrolment-failed", c.principal,
                         c.pubid_mh, c.replacing ? "restored" : "removed");
        else
            yk_admin_fail("the pending token %s is left on %s: the KDC "
                          "refuses it; \"ykadmin delete %s\" once the "
                          "directory answers", c.pubid_mh, c.principal,
                          c.pubid_mh);
    }
    if (c.reserved && unlink(c.a.emulate) != 0 && errno != ENOENT)
        yk_admin_fail("cannot remove %s (holds no usable token): %s",
                      c.a.emulate, strerror(errno));
    if (s != NULL) {
        yk_emu_clear(&s->emu);
        yk_zap(s, sizeof(*s));
        (void)munlock(s, sizeof(*s));
        free(s);
    }
    yk_admin_kdb_close(kdb);
    yk_secret_rec_free(c.old_rec);
    yk_secret_rec_free(rec);
    yk_entry_free(entry);
    yk_keyring_free(kr);
    free(c.principal);
    return status;
}

const yk_admin_cmd yk_admin_cmd_enroll = {
    "enroll",
    "PRINCIPAL [--slot 1|2] [--force] [--public-id MODHEX | "
    "--public-id-prefix MODHEX] [--description TEXT] [--add | --replace] "
    "[--require] [--access-code-file FILE|-] [--emulate FILE]",
    "enrol a new token: program a YubiKey slot",
    "Generates the token's AES key and private id (libgcrypt's very strong\n"
    "random pool, in locked memory), writes the token as pending into the\n"
    "principal's directory entry (wrapped with the master keyring),\n"
    "programs the slot of the one YubiKey attached (or writes an emulated\n"
    "token), then makes the record active.  If a step fails, the message\n"
    "says what the device and the directory hold; a pending record left\n"
    "behind is refused by the KDC and removed by purge.\n\n"
    "Options:\n"
    "  --slot 1|2            the slot to program (default 2, long touch)\n"
    "  --force               allow slot 1: it holds Yubico's factory\n"
    "                        credential, lost for good when overwritten\n"
    "  --public-id MODHEX    the token's public id (default: generated)\n"
    "  --public-id-prefix MODHEX\n"
    "                        prefix of a generated public id, 0-8 modhex\n"
    "                        characters (default: yubikey_public_id_prefix\n"
    "                        of kdc.conf, else vv); random bytes fill it up\n"
    "                        to 6 bytes (12 modhex characters)\n"
    "  --description TEXT    free text shown by list (printable ASCII)\n"
    "  --add                 enrol another token for a principal that holds\n"
    "                        one already\n"
    "  --replace             replace the principal's token (the one named by\n"
    "                        --public-id when it holds several): same public\n"
    "                        id, new key, counter reset, in one modify\n"
    "  --require             then make the principal +requires_preauth\n"
    "                        +requires_hwauth in the KDC database (kadm5\n"
    "                        server library: run on a KDC)\n"
    "  --access-code-file FILE|-\n"
    "                        the slot's current access code (12 hex digits)\n"
    "                        from FILE or standard input (never argv); the\n"
    "                        slot stays protected by it\n"
    "  --emulate FILE        write a software token state to FILE instead\n"
    "                        (tests and demos: it holds the AES key); FILE\n"
    "                        must not exist; emu/ykemu FILE prints\n"
    "                        the token's OTPs\n",
    run_enroll
};
