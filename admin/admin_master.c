/* SPDX-License-Identifier: MIT */
/* admin_master.c: ykadmin init-master-key and rewrap (the master keyring). */

/*
 * The keyring is a file on every KDC, loaded whole (and again within 5 s
 * when it changes); every key version in it unwraps, the newest wraps.
 * Rotation is two steps, with the file copied to every KDC in between,
 * so that no KDC ever meets a record wrapped with a key it has not
 * loaded:
 *
 *   rewrap --add-key   adds version N+1 to the file (old ones kept);
 *   (copy the file to every KDC: each loads it within 5 s)
 *   rewrap             re-wraps every record under an older version with
 *                      version N+1, one modify per token.
 *
 * Old versions stay in the file: a directory backup made before the
 * rotation is wrapped with them.
 *
 * The KDC's user, for the ownership warnings: --kdc-user NAME, else the
 * owner of the directory holding the KDC database (yk_admin_kdc_user).
 * The rules on the file's mode and owner are keywrap.c's, which the KDC
 * applies when it loads the file.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "admin.h"
#include "errors.h"
#include "keywrap.h"
#include "record.h"
#include "secmem.h"
#include "store.h"

/* Warn (standard error, not a failure) when the keyring at path can be
 * read or replaced by others, or is not owned as the KDC needs it (the
 * rules of yk_keyring_mode_ok and yk_keyring_owner_ok); returns the
 * number of warnings. */
static int
check_keyring_file(const char *path, const yk_admin_kdc_user *u)
{
    char *copy = NULL, *dir;
    struct stat sb;
    int warnings = 0;

    if (stat(path, &sb) != 0) {
        fprintf(stderr, "ykadmin: warning: cannot check %s: %s\n", path,
                strerror(errno));
        return 1;
    }
    if (!yk_keyring_mode_ok((unsigned int)sb.st_mode)) {
        fprintf(stderr, "ykadmin: warning: %s is readable or writable by "
                "group or others (mode %04o): \"chmod 600 %s\" (the KDC "
                "refuses it as it is)\n", path,
                (unsigned int)(sb.st_mode & 07777), path);
        warnings++;
    }
    if (getxattr(path, "system.posix_acl_access", NULL, 0) > 0) {
        fprintf(stderr, "ykadmin: warning: %s has a POSIX ACL that may let "
                "others read it (getfacl %s; setfacl -b %s)\n", path, path,
                path);
        warnings++;
    }
    if (!yk_keyring_owner_ok(sb.st_uid, u->uid, (uid_t)-1)) {
        fprintf(stderr, "ykadmin: warning: %s is owned by uid %lu, not by "
                "the KDC's user %s (%s) nor root: the KDC refuses it (its "
                "owner could replace the keys): \"chown %s %s\" (or name "
                "the KDC's user with --kdc-user)\n", path,
                (unsigned long)sb.st_uid, u->name, u->how, u->name, path);
        warnings++;
    } else if (sb.st_uid != u->uid) {
        fprintf(stderr, "ykadmin: warning: %s is owned by root, not by "
                "the KDC's user %s (%s): the KDC cannot open it (mode "
                "0600): \"chown %s %s\" (or name the KDC's user with "
                "--kdc-user)\n", path, u->name, u->how, u->name, path);
        warnings++;
    }
    copy = strdup(path);
    if (copy != NULL) {
        dir = dirname(copy);
        if (stat(dir, &sb) == 0 && (sb.st_mode & 022) != 0 &&
            (sb.st_mode & S_ISVTX) == 0) {
            fprintf(stderr, "ykadmin: warning: the directory %s is writable "
                    "by group or others: they can replace the keyring\n",
                    dir);
            warnings++;
        }
        free(copy);
    }
    return warnings;
}

/* Create a keyring holding one fresh key (version 1) at the configured
 * path; an existing file is never replaced. */
static int
run_init_master_key(yk_admin *adm, int argc, char **argv)
{
    const yk_admin_cmd *cmd = &yk_admin_cmd_init_master_key;
    const char *path;
    yk_keyring *kr = NULL;
    krb5_error_code ret;
    uint32_t version = 0;
    yk_admin_args a;
    yk_admin_kdc_user u;
    int status;

    status = yk_admin_parse_args(cmd, argc, argv,
                                 YK_OPT_KEYRING | YK_OPT_KDC_USER, 0, 0, &a);
    if (status >= 0)
        return status;
    path = a.keyring != NULL ? a.keyring : yk_admin_keyring_path(adm);
    if (path == NULL || yk_admin_kdc_user_find(adm, a.kdc_user, &u) != 0)
        return YK_ADMIN_EXIT_FAIL;

    ret = yk_keyring_new(&kr);
    if (!ret)
        ret = yk_keyring_add_key(kr, &version);
    if (ret) {
        status = yk_admin_fail("cannot generate a master key: %s",
                               yk_strerror(ret));
        goto cleanup;
    }
    ret = yk_keyring_write(kr, path, 1);
    if (ret == EEXIST) {
        status = yk_admin_fail("%s already exists: refusing to overwrite a "
                               "master keyring (every token wrapped with "
                               "it would be lost)", path);
        goto cleanup;
    }
    if (ret) {
        status = yk_admin_fail("cannot write the master keyring %s: %s",
                               path, yk_strerror(ret));
        goto cleanup;
    }
    yk_admin_log(adm, "init-master-key keyring=%s version=%lu", path,
                 (unsigned long)version);
    printf("Created the master keyring %s (key version %lu, mode 0600).\n"
           "Copy it to every KDC (owned by the KDC's user, mode 0600) and "
           "keep an\noffline copy: losing it means re-enrolling every "
           "token.\n", path, (unsigned long)version);
    (void)check_keyring_file(path, &u);
    status = YK_ADMIN_EXIT_OK;

cleanup:
    yk_keyring_free(kr);
    return status;
}

/* rewrap --add-key: a new key version in the keyring file, written
 * atomically with its owner and group kept. */
static int
add_key(yk_admin *adm, const char *kdc_user_opt)
{
    const char *path;
    yk_keyring *kr = NULL;
    krb5_error_code ret;
    struct stat sb;
    uint32_t version = 0;
    yk_admin_kdc_user u;
    int status = YK_ADMIN_EXIT_FAIL;

    path = yk_admin_keyring_path(adm);
    if (path == NULL || yk_admin_kdc_user_find(adm, kdc_user_opt, &u) != 0)
        return YK_ADMIN_EXIT_FAIL;
    if (stat(path, &sb) != 0)
        return yk_admin_fail("cannot read the master keyring %s: %s", path,
                             strerror(errno));
    if (yk_admin_load_keyring(adm, &kr) != 0)
        return YK_ADMIN_EXIT_FAIL;
    if (yk_keyring_count(kr) >= YK_KEYRING_MAX_KEYS) {
        yk_admin_fail("%s holds %d key versions already, the most a keyring "
                      "may hold", path, YK_KEYRING_MAX_KEYS);
        goto cleanup;
    }
    ret = yk_keyring_add_key(kr, &version);
    if (ret) {
        yk_admin_fail("cannot generate a master key: %s", yk_strerror(ret));
        goto cleanup;
    }
    ret = yk_keyring_write(kr, path, 0);
    if (ret) {
        yk_admin_fail("cannot write the master keyring %s: %s (it is "
                      "unchanged)", path, yk_strerror(ret));
        goto cleanup;
    }
    /* The new file is ours: give it back to the old owner. */
    if (geteuid() == 0 && chown(path, sb.st_uid, sb.st_gid) != 0)
        fprintf(stderr, "ykadmin: warning: cannot give %s back to uid %lu: "
                "%s\n", path, (unsigned long)sb.st_uid, strerror(errno));
    yk_admin_log(adm, "rewrap add-key keyring=%s version=%lu", path,
                 (unsigned long)version);
    printf("Added key version %lu to the master keyring %s (%lu versions).\n"
           "Next: copy it to every KDC (owned by the KDC's user, mode 0600; "
           "krb5kdc\nloads a changed keyring within 5 s, no restart), then "
           "run \"ykadmin rewrap\"\nto wrap every token with version %lu.  "
           "Keep an offline copy.\n",
           (unsigned long)version, path,
           (unsigned long)yk_keyring_count(kr), (unsigned long)version);
    (void)check_keyring_file(path, &u);
    status = YK_ADMIN_EXIT_OK;

cleanup:
    yk_keyring_free(kr);
    return status;
}

/* What rewrap found and did. */
typedef struct {
    size_t rewrapped;
    size_t current;
    size_t failures;
} rewrap_counts;

/* Re-wrap token tok of entry e under the newest key in one modify (the
 * secret replaced, the state rewritten).  Returns a krb5 code; prints
 * why on failure other than a lost swap. */
static krb5_error_code
rewrap_token(yk_admin *adm, yk_store *st, const yk_keyring *kr,
             const yk_entry *e, const yk_token *tok, uint32_t old_kvno,
             int dry_run)
{
    yk_token_secret *secret = NULL;
    yk_secret_rec *rec = NULL;
    krb5_error_code ret;

    secret = calloc(1, sizeof(*secret));
    if (secret == NULL) {
        yk_admin_fail("out of memory");
        return ENOMEM;
    }
    (void)mlock(secret, sizeof(*secret));
    ret = yk_keywrap_unwrap(kr, tok->secret->wrapped, e->principal,
                            tok->pubid, secret);
    if (ret) {
        yk_admin_fail("cannot unwrap token %s of %s (key version %lu): %s",
                      tok->pubid, e->principal, (unsigned long)old_kvno,
                      yk_strerror(ret));
        goto cleanup;
    }
    if (dry_run)
        goto cleanup;
    ret = yk_secret_rec_copy(tok->secret, &rec);
    if (ret) {
        yk_admin_fail("out of memory");
        goto cleanup;
    }
    free(rec->wrapped);
    rec->wrapped = NULL;
    ret = yk_keywrap_wrap(kr, e->principal, tok->pubid, secret,
                          &rec->wrapped);
    if (ret) {
        yk_admin_fail("cannot wrap token %s of %s: %s", tok->pubid,
                      e->principal, yk_strerror(ret));
        goto cleanup;
    }
    ret = yk_store_update_token(st, e, tok, rec, NULL);
    if (ret && ret != YK_ERR_STORE_CONFLICT)
        yk_admin_store_fail(adm, ret, "cannot store token %s of %s",
                            tok->pubid, e->principal);

cleanup:
    yk_secret_rec_free(rec);
    yk_zap(secret, sizeof(*secret));
    (void)munlock(secret, sizeof(*secret));
    free(secret);
    return ret;
}

/* Re-wrap every token of principal that is not under the newest key,
 * each on a fresh read (the swap retried). */
static void
rewrap_principal(yk_admin *adm, yk_store *st, const yk_keyring *kr,
                 const char *principal, int dry_run, rewrap_counts *c)
{
    uint32_t newest = yk_keyring_newest(kr), kvno = 0;
    yk_entry *entry = NULL;
    const yk_token *tok;
    krb5_error_code ret;
    size_t i;
    int tries;

    for (i = 0;; i++) {
        ret = YK_ERR_STORE_CONFLICT;
        for (tries = 0; tries < YK_ADMIN_SWAP_TRIES &&
                 ret == YK_ERR_STORE_CONFLICT; tries++) {
            yk_entry_free(entry);
            entry = NULL;
            if (yk_admin_read_entry(adm, st, principal, &entry) != 0) {
                c->failures++;
                return;
            }
            if (i >= entry->ntokens)
                goto done;
            tok = &entry->tokens[i];
            if (tok->malformed || tok->secret == NULL ||
                yk_keywrap_record_kvno(tok->secret->wrapped, &kvno) != 0) {
                yk_admin_fail("token %s of %s has no sound secret record: "
                              "not re-wrapped", tok->pubid, principal);
                c->failures++;
                ret = 0;
                break;
            }
            if (kvno == newest) {
                c->current++;
                ret = 0;
                break;
            }
            ret = rewrap_token(adm, st, kr, entry, tok, kvno, dry_run);
            if (ret == 0) {
                if (!dry_run)
                    yk_admin_log(adm, "rewrap principal=%s public_id=%s "
                                 "kvno=%lu new_kvno=%lu", principal,
                                 tok->pubid, (unsigned long)kvno,
                                 (unsigned long)newest);
                c->rewrapped++;
            } else if (ret != YK_ERR_STORE_CONFLICT) {
                c->failures++;
                ret = 0;
            }
        }
        if (ret == YK_ERR_STORE_CONFLICT) {
            yk_admin_fail("token %s of %s kept changing: not re-wrapped "
                          "(run rewrap again)", entry->tokens[i].pubid,
                          principal);
            c->failures++;
        }
    }

done:
    yk_entry_free(entry);
}

/* rewrap: every record under an older key version wrapped again with the
 * newest one. */
static int
rewrap_records(yk_admin *adm, int dry_run)
{
    yk_entry **entries = NULL;
    yk_keyring *kr = NULL;
    yk_store *st = NULL;
    krb5_error_code ret;
    rewrap_counts c;
    size_t n = 0, i;
    int status = YK_ADMIN_EXIT_FAIL;

    memset(&c, 0, sizeof(c));
    if (yk_admin_load_keyring(adm, &kr) != 0 ||
        yk_admin_store(adm, &st) != 0)
        goto cleanup;
    ret = yk_store_list(st, NULL, &entries, &n);
    if (ret) {
        yk_admin_store_fail(adm, ret, "cannot list the tokens");
        goto cleanup;
    }
    for (i = 0; i < n; i++) {
        if (entries[i]->ntokens > 0)
            rewrap_principal(adm, st, kr, entries[i]->principal, dry_run,
                             &c);
    }
    printf("%s %lu token record%s with key version %lu; %lu already %s; "
           "%lu failed.\n", dry_run ? "Would re-wrap" : "Re-wrapped",
           (unsigned long)c.rewrapped, c.rewrapped == 1 ? "" : "s",
           (unsigned long)yk_keyring_newest(kr), (unsigned long)c.current,
           c.current == 1 ? "was" : "were", (unsigned long)c.failures);
    if (c.rewrapped == 0 && c.failures == 0 && yk_keyring_count(kr) == 1)
        printf("The keyring holds one key version: to rotate, add one "
               "with \"ykadmin rewrap --add-key\" first.\n");
    status = c.failures > 0 ? YK_ADMIN_EXIT_FAIL : YK_ADMIN_EXIT_OK;

cleanup:
    yk_entries_free(entries, n);
    yk_keyring_free(kr);
    return status;
}

/* rewrap [--add-key [--kdc-user NAME]] [--dry-run]: see the top of this
 * file. */
static int
run_rewrap(yk_admin *adm, int argc, char **argv)
{
    const yk_admin_cmd *cmd = &yk_admin_cmd_rewrap;
    yk_admin_args a;
    int status;

    status = yk_admin_parse_args(cmd, argc, argv,
                                 YK_OPT_ADD_KEY | YK_OPT_KDC_USER |
                                 YK_OPT_DRY_RUN | YK_OPT_KEYRING, 0, 0, &a);
    if (status >= 0)
        return status;
    if (a.kdc_user != NULL && !a.add_key)
        return yk_admin_usage(cmd, "--kdc-user goes with --add-key");
    if (a.add_key && a.dry_run)
        return yk_admin_usage(cmd, "--dry-run goes without --add-key");
    if (a.keyring != NULL)
        adm->keyring = a.keyring;
    if (a.add_key)
        return add_key(adm, a.kdc_user);
    return rewrap_records(adm, a.dry_run);
}

const yk_admin_cmd yk_admin_cmd_init_master_key = {
    "init-master-key",
    "[--keyring FILE] [--kdc-user NAME]",
    "create the master keyring that wraps token secrets",
    "Creates a new master keyring holding one random AES-256 key (version\n"
    "1, from libgcrypt's strong random pool), mode 0600.  An existing file\n"
    "is never overwritten.  Warns when the file can be read or replaced by\n"
    "others, or is not owned by the KDC's user.\n\n"
    "Options:\n"
    "  --keyring FILE   where to create it (default: the global --keyring,\n"
    "                   else yubikey_master_key_file of kdc.conf)\n"
    "  --kdc-user NAME  the user the KDC runs as (default: the owner of the\n"
    "                   KDC database's directory, from database_name of\n"
    "                   kdc.conf or /var/lib/krb5kdc; root when it does\n"
    "                   not exist)\n",
    run_init_master_key
};

const yk_admin_cmd yk_admin_cmd_rewrap = {
    "rewrap",
    "--add-key [--kdc-user NAME] [--keyring FILE] | [--dry-run] "
    "[--keyring FILE]",
    "rotate the master key: add a version, re-wrap every token",
    "Rotation takes two runs, with the keyring copied to every KDC in\n"
    "between (a KDC must hold a key before any record is wrapped with it):\n"
    "  1. ykadmin rewrap --add-key   adds a new key version to the keyring\n"
    "  2. copy the keyring to every KDC (owned by the KDC's user, mode\n"
    "     0600): krb5kdc loads a changed keyring within 5 s (no restart;\n"
    "     the kadm5 hook reads it at each use) and accepts both versions\n"
    "  3. ykadmin rewrap             re-wraps every token record under an\n"
    "     older version with the newest one (one modify per token; safe to\n"
    "     run again)\n"
    "Old versions stay in the keyring: backups of the directory made\n"
    "before the rotation need them.\n\n"
    "Options:\n"
    "  --add-key        step 1: add a key version, touch no record\n"
    "  --kdc-user NAME  with --add-key: the KDC's user, for the ownership\n"
    "                   warning (as for init-master-key)\n"
    "  --keyring FILE   the keyring (default: the global --keyring, else\n"
    "                   yubikey_master_key_file of kdc.conf)\n"
    "  --dry-run        step 3: check that every record unwraps, say what\n"
    "                   would be re-wrapped, write nothing\n",
    run_rewrap
};
