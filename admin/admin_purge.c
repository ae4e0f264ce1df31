/* SPDX-License-Identifier: MIT */
/* admin_purge.c: ykadmin purge: tokens of gone principals, stale pendings. */

/*
 * Three kinds of leftovers.  Tokens on directory entries whose principal
 * is no longer in the KDC database: with a DB2 realm "kadmin delprinc"
 * leaves the directory entry (and its token attributes) behind unless the
 * yubikey kadm5_hook module runs.  Tokens on entries that hold no
 * principal name any more: on a kldap realm, delprinc of a principal put
 * on an existing entry (addprinc -x dn=...) removes krbPrincipalName and
 * the keys but leaves the entry, and our attributes on it; no KDC can
 * use them, but a principal put on that entry later would inherit them.
 * Such an entry is stripped of every token attribute, its policy and
 * our class (what the hook does at delprinc), after a fresh read on the
 * write server shows it still nameless.  And pending tokens older than
 * an hour: an enrolment that failed half way and could not take its
 * record back (the KDC refuses them anyway).
 *
 * Guards.  The database is read through kadm5's server library
 * (admin_kdb.c); against a wrong database (which would make every
 * principal look gone), the realm's krbtgt principal must be found
 * first.  Against an identity that may read our attributes but not
 * krbPrincipalName (which would make every entry look nameless), nameless
 * entries are removed only when that identity is seen to have access to
 * principal names: some listed entry shows one, or the realm's krbtgt
 * entry (kldap) is found by its name.  Entries of principals of other
 * realms are left alone.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "admin.h"
#include "errors.h"
#include "record.h"
#include "store.h"

#define PENDING_MAX_AGE 3600          /* seconds before a pending is stale */
#define PRINCIPAL_SHOW_MAX 256        /* a principal name, as printed */

/* What purge found and did. */
typedef struct {
    size_t removed;
    size_t failures;
    size_t foreign;              /* entries of other realms, skipped */
    size_t nameless;             /* entries without a principal name */
} purge_counts;

/* Whether principal (a full, unparsed name) belongs to realm: it ends
 * with an unescaped "@REALM". */
static int
in_realm(const char *principal, const char *realm)
{
    size_t pl = strlen(principal), rl = strlen(realm);

    return pl > rl + 1 && principal[pl - rl - 1] == '@' &&
        principal[pl - rl - 2] != '\\' &&
        strcmp(principal + pl - rl, realm) == 0;
}

/* Remove principal's token pubid (fresh read, retried after a lost
 * swap), or say what it would do with dry_run.  Counts into *c. */
static void
remove_token(yk_admin *adm, yk_store *st, const char *principal,
             const char *pubid, const char *reason, int dry_run,
             purge_counts *c)
{
    yk_entry *entry = NULL;
    const yk_token *tok;
    krb5_error_code ret = YK_ERR_STORE_CONFLICT;
    char shown[PRINCIPAL_SHOW_MAX];
    int tries;

    /* A name read from the directory: printable, as in the log lines. */
    yk_admin_printable(principal, shown, sizeof(shown));
    if (dry_run) {
        printf("Would remove token %s of %s (%s).\n", pubid, shown,
               reason);
        c->removed++;
        return;
    }
    for (tries = 0; tries < YK_ADMIN_SWAP_TRIES &&
             ret == YK_ERR_STORE_CONFLICT; tries++) {
        yk_entry_free(entry);
        entry = NULL;
        if (yk_admin_read_entry(adm, st, principal, &entry) != 0) {
            c->failures++;
            return;
        }
        tok = yk_entry_find_token(entry, pubid);
        if (tok == NULL) {
            ret = 0;            /* gone meanwhile */
            goto cleanup;
        }
        ret = yk_store_delete_token(st, entry, tok);
    }
    if (ret) {
        yk_admin_store_fail(adm, ret, "cannot remove token %s of %s", pubid,
                            principal);
        c->failures++;
        goto cleanup;
    }
    yk_admin_log(adm, "purge principal=%s public_id=%s reason=%s",
                 principal, pubid, reason);
    printf("Removed token %s of %s (%s).\n", pubid, shown, reason);
    c->removed++;

cleanup:
    yk_entry_free(entry);
}

/* Strip entry e, which showed no principal name, of every token
 * attribute (or say what would go with dry_run), once a fresh read of
 * one of its public ids on the write server shows it still nameless.
 * Counts into *c. */
static void
purge_nameless(yk_admin *adm, yk_store *st, const yk_entry *e, int dry_run,
               purge_counts *c)
{
    char dn[PRINCIPAL_SHOW_MAX], *holder = NULL, *where = NULL;
    const char *reason = "principal-name-gone";
    krb5_error_code ret = 0;
    size_t i;
    int removed = 0;

    yk_admin_printable(e->dn, dn, sizeof(dn));
    if (!dry_run) {
        for (i = 0; i < e->ntokens && !e->tokens[i].has_pubid; i++)
            ;
        if (i < e->ntokens)
            ret = yk_store_find_pubid(st, e->tokens[i].pubid, &holder,
                                      &where);
        if (ret == 0 && holder != NULL &&
            (holder[0] != '\0' || strcmp(where, e->dn) != 0)) {
            printf("Entry %s holds a principal again: left alone.\n", dn);
            goto cleanup;
        }
        if (ret != 0 && ret != YK_ERR_TOKEN_UNKNOWN) {
            yk_admin_store_fail(adm, ret, "cannot re-read entry %s", e->dn);
            c->failures++;
            goto cleanup;
        }
        ret = yk_store_strip_entry(st, e->dn, &removed);
        if (ret) {
            yk_admin_store_fail(adm, ret, "cannot remove the tokens of "
                                "entry %s", e->dn);
            c->failures++;
            goto cleanup;
        }
    }
    for (i = 0; i < e->ntokens; i++) {
        const char *pubid = e->tokens[i].has_pubid ? e->tokens[i].pubid :
            "(no public id)";

        if (dry_run) {
            printf("Would remove token %s of entry %s (no principal name "
                   "left: %s).\n", pubid, dn, reason);
        } else {
            yk_admin_log(adm, "purge dn=%s public_id=%s reason=%s", e->dn,
                         pubid, reason);
            printf("Removed token %s of entry %s (no principal name left: "
                   "%s).\n", pubid, dn, reason);
        }
        c->removed++;
    }

cleanup:
    free(holder);
    free(where);
}

/* Purge one entry: every token when its principal is gone, else its
 * stale pending tokens. */
static void
purge_entry(yk_admin *adm, yk_store *st, yk_admin_kdb *kdb,
            const yk_entry *e, int64_t now, int dry_run, purge_counts *c)
{
    const yk_token *t;
    size_t i;
    int exists = 1;

    if (e->principal == NULL || !in_realm(e->principal, adm->realm)) {
        c->foreign++;
        return;
    }
    if (yk_admin_kdb_exists(kdb, e->principal, &exists) != 0) {
        c->failures++;
        return;
    }
    for (i = 0; i < e->ntokens; i++) {
        t = &e->tokens[i];
        if (!exists)
            remove_token(adm, st, e->principal, t->pubid,
                         "principal-not-in-kdb", dry_run, c);
        else if (t->secret != NULL && !t->malformed &&
                 t->secret->state == YK_TOKEN_PENDING &&
                 t->secret->enrolled_at + PENDING_MAX_AGE < now)
            remove_token(adm, st, e->principal, t->pubid, "stale-pending",
                         dry_run, c);
    }
}

/* Whether st's identity is seen to have access to principal names: an
 * entry of entries (n of them) shows one, or tgs (the realm's krbtgt, an
 * entry of kldap's realm container) is found by its name (slapd matches
 * a filter only on an attribute the identity may search).  1 or 0. */
static int
names_shown(yk_store *st, const char *tgs, yk_entry **entries, size_t n)
{
    yk_entry *e = NULL;
    size_t i;
    int shown;

    for (i = 0; i < n; i++) {
        if (entries[i]->principal != NULL &&
            entries[i]->principal[0] != '\0')
            return 1;
    }
    if (yk_store_lookup(st, tgs, 0, &e) != 0)
        return 0;
    shown = e->principal != NULL;
    yk_entry_free(e);
    return shown;
}

/* purge [--dry-run]: see the top of this file. */
static int
run_purge(yk_admin *adm, int argc, char **argv)
{
    const yk_admin_cmd *cmd = &yk_admin_cmd_purge;
    yk_entry **entries = NULL;
    yk_admin_kdb *kdb = NULL;
    yk_store *st = NULL;
    char *tgs = NULL;
    krb5_error_code ret;
    purge_counts c;
    size_t n = 0, i;
    int status, exists = 0, names_readable;
    char who[PRINCIPAL_SHOW_MAX * 2];
    yk_admin_args a;

    memset(&c, 0, sizeof(c));
    status = yk_admin_parse_args(cmd, argc, argv, YK_OPT_DRY_RUN, 0, 0, &a);
    if (status >= 0)
        return status;
    status = YK_ADMIN_EXIT_FAIL;
    if (yk_admin_kdb_open(adm, &kdb) != 0)
        goto cleanup;
    if (asprintf(&tgs, "krbtgt/%s@%s", adm->realm, adm->realm) < 0) {
        tgs = NULL;
        yk_admin_fail("out of memory");
        goto cleanup;
    }
    if (yk_admin_kdb_exists(kdb, tgs, &exists) != 0)
        goto cleanup;
    if (!exists) {
        yk_admin_fail("the KDC database opened has no %s: not the realm's "
                      "database? nothing was removed", tgs);
        goto cleanup;
    }
    if (yk_admin_store(adm, &st) != 0)
        goto cleanup;
    ret = yk_store_list(st, NULL, &entries, &n);
    if (ret) {
        yk_admin_store_fail(adm, ret, "cannot list the tokens");
        goto cleanup;
    }
    names_readable = names_shown(st, tgs, entries, n);
    for (i = 0; i < n; i++) {
        if (entries[i]->principal != NULL &&
            entries[i]->principal[0] != '\0')
            purge_entry(adm, st, kdb, entries[i], (int64_t)time(NULL),
                        a.dry_run, &c);
        else if (names_readable)
            purge_nameless(adm, st, entries[i], a.dry_run, &c);
        else
            c.nameless++;
    }
    if (c.nameless > 0) {
        yk_admin_identity(adm, who, sizeof(who));
        yk_admin_fail("%lu entr%s hold%s tokens but no principal name that "
                      "%s can read, and no other entry shows one: either "
                      "their principals were deleted or this identity may "
                      "not read krbPrincipalName; left alone (let it read "
                      "krbPrincipalName, then run purge again)",
                      (unsigned long)c.nameless,
                      c.nameless == 1 ? "y" : "ies",
                      c.nameless == 1 ? "s" : "", who);
        c.failures++;
    }
    if (c.foreign > 0)
        printf("%lu entr%s of other realms left alone.\n",
               (unsigned long)c.foreign, c.foreign == 1 ? "y" : "ies");
    printf("%s %lu token%s%s.\n", a.dry_run ? "Would remove" : "Removed",
           (unsigned long)c.removed, c.removed == 1 ? "" : "s",
           c.failures > 0 ? "; some checks or removals failed (see above)" :
           "");
    status = c.failures > 0 ? YK_ADMIN_EXIT_FAIL : YK_ADMIN_EXIT_OK;

cleanup:
    yk_entries_free(entries, n);
    yk_admin_kdb_close(kdb);
    free(tgs);
    return status;
}

const yk_admin_cmd yk_admin_cmd_purge = {
    "purge",
    "[--dry-run]",
    "remove tokens of gone principals and stale enrolments",
    "Removes the tokens of directory entries whose principal is no longer\n"
    "in the KDC database (kadmin delprinc leaves them with a DB2 realm),\n"
    "the tokens of entries left without a principal name (kldap's\n"
    "delprinc of a principal on a user entry: the entry loses every token\n"
    "attribute, its policy and class), and pending tokens older than an\n"
    "hour (enrolments that failed half way).  Reads the KDC database\n"
    "through kadm5's server library, as kadmin.local does: run it on a\n"
    "KDC.  Entries of other realms are left alone.\n\n"
    "Options:\n"
    "  --dry-run             show what would be removed, write nothing\n",
    run_purge
};
