/* SPDX-License-Identifier: MIT */
/* store.h: the LDAP token store (read, compare-and-swap, admin writes). */
#ifndef YK_STORE_H
#define YK_STORE_H

#include <stddef.h>
#include <krb5.h>
#include "ykconf.h"
#include "record.h"

/* One token of an entry, with the exact values read (the swap deletes
 * them byte for byte).  secret may be NULL (a state without a secret). */
typedef struct {
    char pubid[YK_PUBID_MODHEX_MAX + 1];
    yk_secret_rec *secret;
    char *secret_raw;
    size_t secret_raw_len;
    int has_state;
    yk_state_rec state;          /* the highest-counter state value */
    char *state_raw;
    size_t state_raw_len;
    size_t nextra;               /* further state values (to remove) */
    char **extra_raw;
    size_t *extra_raw_len;
    int has_pubid;               /* a yubikeyPublicId value names it */
    int malformed;               /* a value of this token did not parse,
                                  * or two secrets, or no yubikeyPublicId:
                                  * unusable, log malformed_reason */
    const char *malformed_reason;  /* static text, NULL when well-formed */
    size_t nsecret_extra;        /* further secret values (update and
                                  * delete remove them) */
    char **secret_extra_raw;
    size_t *secret_extra_raw_len;
} yk_token;

/* A principal's directory entry and its tokens. */
typedef struct {
    char *dn;
    char *principal;
    int policy;                  /* YK_POLICY_* */
    int has_policy;
    size_t ntokens;
    yk_token *tokens;
    size_t nmalformed;           /* values tied to no token (unparseable
                                  * public id or record, bad policy) */
} yk_entry;

/* The store: read and write connections, opened lazily (after the KDC
 * forks), reconnected after a failure.  Opaque. */
typedef struct yk_store yk_store;

/* Make a store for cfg (copied); no connection is opened yet. */
krb5_error_code yk_store_new(const yk_store_config *cfg, yk_store **out);

/* Close connections and free; NULL is accepted. */
void yk_store_free(yk_store *st);

/* The last LDAP failure of st in words, for the caller's log line (names
 * the server side and LDAP's message; never a secret).  Valid until the
 * next call on st. */
const char *yk_store_last_error(const yk_store *st);

/* Limit st's directory work from now on to budget_ms milliseconds in all
 * (one KDC attempt: its connects, binds, searches and swaps): each
 * operation then waits at most the smaller of the per-operation timeout
 * and what is left, and one started with nothing left fails at once,
 * sending nothing, with YK_ERR_STORE_TIMEOUT.  0 (or less) removes the
 * limit. */
void yk_store_set_budget(yk_store *st, int budget_ms);

/* Wait ms milliseconds: inside a KDC attempt that may be suspended
 * (store_io.h) other attempts run meanwhile, and st's per-attempt state
 * is kept across it; else the process sleeps.  For test hooks. */
void yk_store_sleep_ms(yk_store *st, int ms);

/* Whether st's last failure was the directory refusing its bind (wrong
 * DN, password or SASL identity; returned as YK_ERR_STORE_ACCESS) rather
 * than an operation refused by the access rules.  Valid until the next
 * call on st. */
int yk_store_bind_refused(const yk_store *st);

/* What happened to st's write connection since the last call, for the
 * caller's log (the store does not log): YK_FAILOVER_NONE, or
 * YK_FAILOVER_ON (the write server was unreachable, why into why: the
 * write connection was opened on yubikey_ldap_write_failover_uri), or
 * YK_FAILOVER_OFF (the write server took the writes back).  Reported
 * once. */
#define YK_FAILOVER_NONE 0
#define YK_FAILOVER_ON 1
#define YK_FAILOVER_OFF 2
int yk_store_failover_event(yk_store *st, char *why, size_t len);

/* Ask the write server whether it is replicated (store_probe.c): a
 * warning for the log into report (len bytes), "" when there is nothing
 * to say or nothing could be read.  Opens the write connection: call
 * yk_store_disconnect before the KDC forks. */
krb5_error_code yk_store_probe_replication(yk_store *st, char *report,
                                           size_t len);

/* Close st's connections (they reopen on the next use). */
void yk_store_disconnect(yk_store *st);

/* Find principal's entry (exactly one match) on the read server and parse
 * its tokens.  YK_ERR_STORE_NOT_FOUND when no entry matches,
 * YK_ERR_STORE_AMBIGUOUS when several do.  With fresh set, read from the
 * write server (the re-read after a lost swap). */
krb5_error_code yk_store_lookup(yk_store *st, const char *principal,
                                int fresh, yk_entry **entry_out);

/* What the last yk_store_cas_state's post-read showed: YK_RIVAL_NONE,
 * _RETRANSMISSION, _REPLAY, _OLDER (postread.h), or YK_RIVAL_UNREADABLE. */
int yk_store_last_rival(const yk_store *st);

/* How many lower state values of the token the last yk_store_cas_state
 * found beside its own in the post-read and removed (a conflict's
 * leftovers the swap's read did not hold). */
size_t yk_store_last_leftovers(const yk_store *st);

/* Compare-and-swap token tok's state on the write server: in one modify,
 * delete the exact value read (and any extra state values), add
 * new_state.  YK_ERR_STORE_CONFLICT when the old value is gone
 * (noSuchAttribute: someone else got there first).  A swap that raises
 * the counter also reads the entry back (post-read, postread.c):
 * YK_ERR_STORE_RIVAL when the modify landed but another value of the
 * token as high stands beside the new one, or the post-read does not
 * parse; yk_store_last_rival says which (YK_RIVAL_*).  Lower values of
 * the token seen there (a value replication added after the read) are
 * deleted by a second modify, whose failure leaves them (the next swap's
 * post-read tries again) and does not change the result. */
krb5_error_code yk_store_cas_state(yk_store *st, const yk_entry *entry,
                                   const yk_token *tok,
                                   const yk_state_rec *new_state);

/* The token with public id pubid in entry, or NULL. */
yk_token *yk_entry_find_token(const yk_entry *entry, const char *pubid);

/* A deep copy of entry into *out (free with yk_entry_free): the KDC's
 * attempts each work on their own while the cache keeps the original for
 * the others.  ENOMEM. */
krb5_error_code yk_entry_copy(const yk_entry *entry, yk_entry **out);

/* Free an entry; NULL is accepted. */
void yk_entry_free(yk_entry *entry);

/* --- administrative writes (ykadmin); each rewrites the state value ---- */

/* Which principal holds pubid anywhere under the base (uniqueness).
 * YK_ERR_TOKEN_UNKNOWN when none; *principal_out malloc'd. */
krb5_error_code yk_store_find_pubid(yk_store *st, const char *pubid,
                                    char **principal_out, char **dn_out);

/* Add a token (secret + initial state) to entry; adds the auxiliary
 * class when missing.  YK_ERR_STORE_EXISTS when pubid is enrolled. */
krb5_error_code yk_store_add_token(yk_store *st, const yk_entry *entry,
                                   const yk_secret_rec *secret,
                                   const yk_state_rec *state);

/* Replace tok's secret record by secret (state change, rewrap...) and
 * rewrite its state value (gen + 1, counter kept unless new_state is
 * given), in one modify. */
krb5_error_code yk_store_update_token(yk_store *st, const yk_entry *entry,
                                      const yk_token *tok,
                                      const yk_secret_rec *secret,
                                      const yk_state_rec *new_state);

/* Remove tok (public id, secret and state values) from entry. */
krb5_error_code yk_store_delete_token(yk_store *st, const yk_entry *entry,
                                      const yk_token *tok);

/* Set the principal's policy and rewrite every token's state value. */
krb5_error_code yk_store_set_policy(yk_store *st, const yk_entry *entry,
                                    int policy);

/* Every entry holding tokens (principal NULL) or principal's entry. */
krb5_error_code yk_store_list(yk_store *st, const char *principal,
                              yk_entry ***entries_out, size_t *n_out);
void yk_entries_free(yk_entry **entries, size_t n);

/* --- kadm5_hook (kadm5hook/): delprinc and renprinc -------------------- */

/* Re-bind entry's tokens in one modify on the write server: for each
 * token i (entry->tokens order) with secrets[i] set, every secret value
 * read is replaced by secrets[i] and the state value rewritten (gen + 1,
 * counter kept); with old_name and new_name set (both or neither), the
 * entry's krbPrincipalName value old_name becomes new_name too (a DB2
 * realm's directory; kldap renames its own entries).  Nothing to change
 * sends nothing.  YK_ERR_STORE_CONFLICT when a value read (or old_name)
 * is gone: re-read and try again. */
krb5_error_code yk_store_rebind_tokens(yk_store *st, const yk_entry *entry,
                                       yk_secret_rec *const *secrets,
                                       const char *old_name,
                                       const char *new_name);

/* Remove every yubikeyPublicId, yubikeyTokenSecret, yubikeyTokenState and
 * yubikeyPolicy value and the class yubikeyPrincipalAux from the entry at
 * dn, in one modify on the write server, whatever the values.  Success
 * when the entry holds none of them or no longer exists (kldap deleted
 * it); *removed_out (may be NULL) says whether a modify was made. */
krb5_error_code yk_store_strip_entry(yk_store *st, const char *dn,
                                     int *removed_out);

#endif /* YK_STORE_H */
