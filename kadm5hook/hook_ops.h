/* SPDX-License-Identifier: MIT */
/* hook_ops.h: what the kadm5_hook does to a principal's tokens. */
#ifndef YK_HOOK_OPS_H
#define YK_HOOK_OPS_H

#include <stddef.h>
#include <krb5.h>
#include "keywrap.h"
#include "store.h"

#define YK_HOOK_REBIND_TRIES 3   /* re-reads after a racing writer */

/* Whether entry holds any of our data: a token, a policy, or values that
 * do not parse. */
int yk_hook_entry_has_data(const yk_entry *entry);

/* Whether a token of entry holds a secret record (needs the keyring). */
int yk_hook_entry_has_secrets(const yk_entry *entry);

/* Re-wrap every secret of entry from old_name to new_name under kr's
 * newest key.  (*secrets_out)[i] belongs to entry->tokens[i]: the re-bound
 * record, or NULL for a token without a secret or already bound to
 * new_name; *n_out counts the records re-bound.  A damaged token or a
 * secret that unwraps for neither name fails, with why (whylen bytes)
 * naming the token and the reason.  kr may be NULL when no token holds a
 * secret.  Free with yk_hook_secrets_free(*secrets_out, entry->ntokens). */
krb5_error_code yk_hook_rewrap(const yk_keyring *kr, const yk_entry *entry,
                               const char *old_name, const char *new_name,
                               yk_secret_rec ***secrets_out, size_t *n_out,
                               char *why, size_t whylen);

/* Free what yk_hook_rewrap made; NULL is accepted. */
void yk_hook_secrets_free(yk_secret_rec **secrets, size_t n);

/* After a rename: find the token entry (by new_name when the database
 * moved it, as kldap does; else by old_name, which must be the entry at
 * old_dn, and then its krbPrincipalName moves too, as a DB2 realm's
 * directory needs), re-bind its tokens and write everything in one
 * modify, re-reading after a racing writer.  *n_out: tokens re-bound;
 * *moved_out: whether krbPrincipalName was moved.  On failure why says
 * what is left where. */
krb5_error_code yk_hook_rebind(yk_store *st, const yk_keyring *kr,
                               const char *old_name, const char *new_name,
                               const char *old_dn, size_t *n_out,
                               int *moved_out, char *why, size_t whylen);

#endif /* YK_HOOK_OPS_H */
