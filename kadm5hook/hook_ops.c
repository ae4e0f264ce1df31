/* SPDX-License-Identifier: MIT */
/* hook_ops.c: what the kadm5_hook does to a principal's tokens. */

/*
 * Plain functions on a store, a keyring and principal names (no krb5
 * context, no kadm5 types), called by hook_main.c.  A token's wrapped
 * secret is bound to its principal's name (keywrap.h), so a rename
 * unwraps each one with the old name and wraps it again with the new;
 * the clear secret lives in a fixed buffer, wiped on every path.
 */

#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

#include "errors.h"
#include "hook_ops.h"
#include "secmem.h"

/* Format an explanation into why (whylen bytes; why may be NULL). */
static void
say(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
say(char *why, size_t whylen, const char *fmt, ...)
{
    va_list ap;

    if (why == NULL || whylen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
}

/* Whether entry holds a token, a policy or unparseable values of ours. */
int
yk_hook_entry_has_data(const yk_entry *entry)
{
    return entry != NULL && (entry->ntokens > 0 || entry->has_policy ||
                             entry->nmalformed > 0);
}

/* Whether some token of entry holds a secret record. */
int
yk_hook_entry_has_secrets(const yk_entry *entry)
{
    size_t i;

    for (i = 0; entry != NULL && i < entry->ntokens; i++) {
        if (entry->tokens[i].secret != NULL ||
            entry->tokens[i].nsecret_extra > 0)
            return 1;
    }
    return 0;
}

/* Free the records of yk_hook_rewrap; NULL is accepted. */
void
yk_hook_secrets_free(yk_secret_rec **secrets, size_t n)
{
    size_t i;

    if (secrets == NULL)
        return;
    for (i = 0; i < n; i++)
        yk_secret_rec_free(secrets[i]);
    free(secrets);
}

/* Re-bind one token's secret record: *rec_out is the new record, or NULL
 * when the record is already bound to new_name. */
static krb5_error_code
rewrap_one(const yk_keyring *kr, const yk_token *tok, const char *old_name,
           const char *new_name, yk_secret_rec **rec_out, char *why,
           size_t whylen)
{
    krb5_error_code ret;
    yk_token_secret secret;
    yk_secret_rec *rec = NULL;
    char *wrapped = NULL;

    *rec_out = NULL;
    memset(&secret, 0, sizeof(secret));
    (void)mlock(&secret, sizeof(secret));
    if (kr == NULL) {
        ret = YK_ERR_KEYRING_EMPTY;
        say(why, whylen, "token %s: no master keyring loaded", tok->pubid);
        goto cleanup;
    }
    ret = yk_keywrap_unwrap(kr, tok->secret->wrapped, old_name, tok->pubid,
                            &secret);
    if (ret == YK_ERR_WRAP_BINDING &&
        yk_keywrap_unwrap(kr, tok->secret->wrapped, new_name, tok->pubid,
                          &secret) == 0) {
        /* Re-bound by an earlier attempt: nothing to do. */
        ret = 0;
        goto cleanup;
    }
    if (ret) {
        say(why, whylen, "token %s: its secret does not unwrap for %s: %s",
            tok->pubid, old_name, yk_strerror(ret));
        goto cleanup;
    }
    ret = yk_keywrap_wrap(kr, new_name, tok->pubid, &secret, &wrapped);
    if (ret) {
        say(why, whylen, "token %s: cannot wrap its secret for %s: %s",
            tok->pubid, new_name, yk_strerror(ret));
        goto cleanup;
    }
    ret = yk_secret_rec_copy(tok->secret, &rec);
    if (ret)
        goto cleanup;
    free(rec->wrapped);
    rec->wrapped = wrapped;
    wrapped = NULL;
    *rec_out = rec;
    rec = NULL;

cleanup:
    yk_zap(&secret, sizeof(secret));
    (void)munlock(&secret, sizeof(secret));
    free(wrapped);
    yk_secret_rec_free(rec);
    return ret;
}

/* Re-wrap every secret of entry for new_name (see hook_ops.h). */
krb5_error_code
yk_hook_rewrap(const yk_keyring *kr, const yk_entry *entry,
               const char *old_name, const char *new_name,
               yk_secret_rec ***secrets_out, size_t *n_out, char *why,
               size_t whylen)
{
    krb5_error_code ret = 0;
    yk_secret_rec **secrets = NULL;
    const yk_token *tok;
    size_t i, n = 0;

    if (entry == NULL || old_name == NULL || new_name == NULL)
        return EINVAL;
    secrets = calloc(entry->ntokens + 1, sizeof(*secrets));
    if (secrets == NULL)
        return ENOMEM;
    for (i = 0; i < entry->ntokens; i++) {
        tok = &entry->tokens[i];
        /* A damaged token cannot be re-bound; moving it half-bound would
         * leave a record that no name unwraps. */
        if (tok->malformed) {
            ret = YK_ERR_RECORD_FORMAT;
            say(why, whylen, "token %s is damaged in the directory (%s)",
                tok->pubid, tok->malformed_reason != NULL ?
                tok->malformed_reason : "malformed");
            goto cleanup;
        }
        if (tok->secret == NULL)
            continue;
        ret = rewrap_one(kr, tok, old_name, new_name, &secrets[i], why,
                         whylen);
        if (ret)
            goto cleanup;
        if (secrets[i] != NULL)
            n++;
    }
    *secrets_out = secrets;
    *n_out = n;
    secrets = NULL;

cleanup:
    yk_hook_secrets_free(secrets, entry->ntokens);
    return ret;
}

/* Find the entry to re-bind: by new_name (*move_out 0), else by old_name
 * at old_dn (*move_out 1). */
static krb5_error_code
find_renamed(yk_store *st, const char *old_name, const char *new_name,
             const char *old_dn, yk_entry **entry_out, int *move_out,
             char *why, size_t whylen)
{
    krb5_error_code ret;
    yk_entry *e = NULL;

    *move_out = 0;
    ret = yk_store_lookup(st, new_name, 1, &e);
    if (ret == YK_ERR_STORE_NOT_FOUND) {
        *move_out = 1;
        ret = yk_store_lookup(st, old_name, 1, &e);
        if (ret == YK_ERR_STORE_NOT_FOUND) {
            say(why, whylen, "neither %s nor %s has an entry in the token "
                "directory any more", new_name, old_name);
            return ret;
        }
        if (ret == 0 && old_dn != NULL && strcasecmp(e->dn, old_dn) != 0) {
            say(why, whylen, "the entry of %s is now %s, not %s as before "
                "the rename", old_name, e->dn, old_dn);
            yk_entry_free(e);
            return YK_ERR_STORE_CONFLICT;
        }
    }
    if (ret) {
        say(why, whylen, "cannot read the token directory: %s (%s)",
            yk_strerror(ret), yk_store_last_error(st));
        return ret;
    }
    *entry_out = e;
    return 0;
}

/* Re-bind the renamed principal's tokens (see hook_ops.h). */
krb5_error_code
yk_hook_rebind(yk_store *st, const yk_keyring *kr, const char *old_name,
               const char *new_name, const char *old_dn, size_t *n_out,
               int *moved_out, char *why, size_t whylen)
{
    krb5_error_code ret = YK_ERR_STORE_CONFLICT;
    yk_secret_rec **secrets = NULL;
    yk_entry *e = NULL;
    size_t n = 0;
    int move = 0, tries;

    if (st == NULL || old_name == NULL || new_name == NULL)
        return EINVAL;
    for (tries = 0; tries < YK_HOOK_REBIND_TRIES &&
             ret == YK_ERR_STORE_CONFLICT; tries++) {
        yk_hook_secrets_free(secrets, e != NULL ? e->ntokens : 0);
        secrets = NULL;
        yk_entry_free(e);
        e = NULL;
        ret = find_renamed(st, old_name, new_name, old_dn, &e, &move, why,
                           whylen);
        if (ret)
            goto cleanup;
        ret = yk_hook_rewrap(kr, e, old_name, new_name, &secrets, &n, why,
                             whylen);
        if (ret)
            goto cleanup;
        ret = yk_store_rebind_tokens(st, e, secrets,
                                     move ? old_name : NULL,
                                     move ? new_name : NULL);
    }
    if (ret) {
        say(why, whylen, "cannot write the re-bound tokens to %s: %s (%s)",
            e != NULL ? e->dn : "the entry", yk_strerror(ret),
            yk_store_last_error(st));
        goto cleanup;
    }
    *n_out = n;
    *moved_out = move;

cleanup:
    yk_hook_secrets_free(secrets, e != NULL ? e->ntokens : 0);
    yk_entry_free(e);
    return ret;
}
