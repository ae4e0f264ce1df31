/* SPDX-License-Identifier: MIT */
/* store_admin.c: the directory writes of ykadmin and the kadm5 hook. */

/*
 * Enrolment, state changes, deletion, policy, re-binding a principal's
 * tokens to a new name, stripping an entry.  None of them runs in the
 * KDC.  Each rewrites the token's state value (gen + 1) in the same
 * modify, deleting the exact values read, so a KDC swapping from a
 * cached value loses and re-reads (store.c).
 */

#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ldap.h>

#include "errors.h"
#include "secmem.h"
#include "store.h"
#include "store_int.h"


/* Our attributes, in the order of the presence bits below. */
static const char *const strip_attrs[] = {
    YK_ATTR_PUBID, YK_ATTR_SECRET, YK_ATTR_STATE, YK_ATTR_POLICY, NULL
};
#define YK_STRIP_CLASS_BIT (1u << 4)

/* Which of our attributes (bit i for strip_attrs[i]) and whether our
 * class (YK_STRIP_CLASS_BIT) the entry at dn holds, read from the write
 * server.  YK_ERR_STORE_NOT_FOUND when the entry does not exist. */
static krb5_error_code
read_presence(yk_store *st, const char *dn, unsigned *mask_out)
{
    krb5_error_code ret;
    yk_conn *c = NULL;
    const char *attrs[] = { "objectClass", YK_ATTR_PUBID, YK_ATTR_SECRET,
                            YK_ATTR_STATE, YK_ATTR_POLICY, NULL };
    struct timeval tv;
    LDAPMessage *res = NULL, *msg;
    struct berval **v = NULL;
    unsigned mask = 0;
    int rc, msgid;
    size_t i;

    ret = yk_conn_get(st, 1, &c);
    if (ret == 0)
        ret = yk_op_timeout(st, &tv);
    if (ret)
        return ret;
    rc = ldap_search_ext(c->ld, dn, LDAP_SCOPE_BASE, "(objectClass=*)",
                         (char **)attrs, 0, NULL, NULL, &tv, 1, &msgid);
    if (rc != LDAP_SUCCESS)
        return yk_conn_fail(st, c, "search", rc, NULL, YK_OP_READ);
    ret = yk_conn_wait(st, c, msgid, "search", YK_OP_READ, &res);
    if (ret)
        return ret;
    msg = ldap_first_entry(c->ld, res);
    for (i = 0; msg != NULL && strip_attrs[i] != NULL; i++) {
        v = ldap_get_values_len(c->ld, msg, strip_attrs[i]);
        if (v != NULL && v[0] != NULL)
            mask |= 1u << i;
        ldap_value_free_len(v);
    }
    v = msg != NULL ? ldap_get_values_len(c->ld, msg, "objectClass") : NULL;
    for (i = 0; v != NULL && v[i] != NULL; i++) {
        if (v[i]->bv_len == strlen(YK_AUX_CLASS) &&
            strncasecmp(v[i]->bv_val, YK_AUX_CLASS, v[i]->bv_len) == 0)
            mask |= YK_STRIP_CLASS_BIT;
    }
    ldap_value_free_len(v);
    /* A base that does not exist answers noSuchObject. */
    ret = yk_conn_check_result(st, c, res, "search", YK_OP_READ);
    if (ret == 0 && msg == NULL)
        ret = YK_ERR_STORE_NOT_FOUND;
    if (ret == 0)
        *mask_out = mask;
    return ret;
}

/* Whether the entry at dn already has the auxiliary class (read from the
 * write server, SIGPIPE blocked). */
static krb5_error_code
entry_has_aux(yk_store *st, const char *dn, int *has_out)
{
    krb5_error_code ret;
    yk_sigpipe_guard g;
    unsigned mask = 0;

    yk_sigpipe_block(&g);
    ret = read_presence(st, dn, &mask);
    yk_sigpipe_restore(&g);
    if (ret == 0)
        *has_out = (mask & YK_STRIP_CLASS_BIT) != 0;
    return ret;
}

/* Add a token (public id, secret, initial state) to entry in one modify,
 * with the auxiliary class when the entry lacks it. */
krb5_error_code
yk_store_add_token(yk_store *st, const yk_entry *entry,
                   const yk_secret_rec *secret, const yk_state_rec *state)
{
    krb5_error_code ret;
    yk_modlist ml = { NULL, 0 };
    char *sec = NULL, *sta = NULL;
    int has_aux = 0;

    if (st == NULL || entry == NULL || secret == NULL || state == NULL ||
        strcmp(secret->pubid, state->pubid) != 0)
        return EINVAL;
    ret = yk_secret_rec_format(secret, &sec);
    if (ret == 0)
        ret = yk_state_rec_format(state, &sta);
    if (ret)
        goto cleanup;

    /* Our own check; slapo-unique enforces it against races. */
    ret = yk_store_find_pubid(st, secret->pubid, NULL, NULL);
    if (ret == 0) {
        yk_store_set_error(st, "public id %s is already enrolled",
                           secret->pubid);
        ret = YK_ERR_STORE_EXISTS;
    }
    if (ret == YK_ERR_STORE_AMBIGUOUS)
        ret = YK_ERR_STORE_EXISTS;
    if (ret != YK_ERR_TOKEN_UNKNOWN)
        goto cleanup;
    ret = entry_has_aux(st, entry->dn, &has_aux);
    if (ret)
        goto cleanup;

    if (!has_aux)
        ret = yk_modlist_add1(&ml, LDAP_MOD_ADD, "objectClass", YK_AUX_CLASS);
    if (ret == 0)
        ret = yk_modlist_add1(&ml, LDAP_MOD_ADD, YK_ATTR_PUBID, secret->pubid);
    if (ret == 0)
        ret = yk_modlist_add1(&ml, LDAP_MOD_ADD, YK_ATTR_SECRET, sec);
    if (ret == 0)
        ret = yk_modlist_add1(&ml, LDAP_MOD_ADD, YK_ATTR_STATE, sta);
    if (ret == 0)
        ret = yk_store_modify(st, entry->dn, &ml, YK_OP_ADD_TOKEN);

cleanup:
    yk_modlist_free(&ml);
    free(sec);
    free(sta);
    return ret;
}

/* The state an administrative write leaves: new_state when given (its
 * generation raised past the old one), else the old counter and last use
 * with gen + 1 and no nonce (an administrator wrote it).  *has_out is 0
 * when there is neither (the token has no valid state). */
static void
admin_state(const yk_token *tok, const yk_state_rec *new_state,
            yk_state_rec *out, int *has_out)
{
    *has_out = 1;
    if (new_state != NULL) {
        *out = *new_state;
        if (tok->has_state && out->gen <= tok->state.gen)
            out->gen = tok->state.gen + 1;
    } else if (tok->has_state) {
        *out = tok->state;
        out->gen++;
        out->has_nonce = 0;
        out->nonce = YK_NONCE_NONE;
    } else {
        *has_out = 0;
    }
}

/* Replace tok's secret record and rewrite its state value in one modify;
 * every value read for the token (extras included) is deleted exactly. */
krb5_error_code
yk_store_update_token(yk_store *st, const yk_entry *entry,
                      const yk_token *tok, const yk_secret_rec *secret,
                      const yk_state_rec *new_state)
{
    krb5_error_code ret;
    yk_modlist ml = { NULL, 0 };
    yk_state_rec next;
    char *sec = NULL, *sta = NULL;
    size_t ndel;
    int has_next;

    if (st == NULL || entry == NULL || tok == NULL || secret == NULL ||
        strcmp(secret->pubid, tok->pubid) != 0 ||
        (new_state != NULL && strcmp(new_state->pubid, tok->pubid) != 0))
        return EINVAL;
    admin_state(tok, new_state, &next, &has_next);
    ret = yk_secret_rec_format(secret, &sec);
    if (ret == 0 && has_next)
        ret = yk_state_rec_format(&next, &sta);
    if (ret == 0)
        ret = yk_modlist_del_secrets(&ml, tok, &ndel);
    if (ret == 0)
        ret = yk_modlist_add1(&ml, LDAP_MOD_ADD, YK_ATTR_SECRET, sec);
    if (ret == 0)
        ret = yk_modlist_del_states(&ml, tok, &ndel);
    if (ret == 0 && sta != NULL)
        ret = yk_modlist_add1(&ml, LDAP_MOD_ADD, YK_ATTR_STATE, sta);
    if (ret == 0 && !tok->has_pubid)
        ret = yk_modlist_add1(&ml, LDAP_MOD_ADD, YK_ATTR_PUBID, tok->pubid);
    if (ret == 0)
        ret = yk_store_modify(st, entry->dn, &ml, YK_OP_WRITE);
    yk_modlist_free(&ml);
    free(sec);
    free(sta);
    return ret;
}

/* Remove tok's public id and every secret and state value read for it. */
krb5_error_code
yk_store_delete_token(yk_store *st, const yk_entry *entry,
                      const yk_token *tok)
{
    krb5_error_code ret = 0;
    yk_modlist ml = { NULL, 0 };
    size_t nsec = 0, nsta = 0;

    if (st == NULL || entry == NULL || tok == NULL)
        return EINVAL;
    if (tok->has_pubid)
        ret = yk_modlist_add1(&ml, LDAP_MOD_DELETE, YK_ATTR_PUBID, tok->pubid);
    if (ret == 0)
        ret = yk_modlist_del_secrets(&ml, tok, &nsec);
    if (ret == 0)
        ret = yk_modlist_del_states(&ml, tok, &nsta);
    if (ret == 0 && ml.n == 0)
        ret = YK_ERR_TOKEN_UNKNOWN;
    if (ret == 0)
        ret = yk_store_modify(st, entry->dn, &ml, YK_OP_WRITE);
    yk_modlist_free(&ml);
    return ret;
}

/* Set the policy (REPLACE on the single-valued attribute) and rewrite the
 * state value of every token that has one, in one modify. */
krb5_error_code
yk_store_set_policy(yk_store *st, const yk_entry *entry, int policy)
{
    krb5_error_code ret;
    yk_modlist ml = { NULL, 0 };
    const char *name = yk_policy_name(policy);
    char **vals = NULL;
    yk_state_rec next;
    size_t i, nvals = 0, ndel;
    int has_next;

    if (st == NULL || entry == NULL || name == NULL)
        return EINVAL;
    ret = yk_modlist_add1(&ml, LDAP_MOD_REPLACE, YK_ATTR_POLICY, name);
    if (ret)
        goto cleanup;
    vals = calloc(entry->ntokens + 1, sizeof(*vals));
    if (vals == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    for (i = 0; i < entry->ntokens; i++) {
        const yk_token *tok = &entry->tokens[i];

        admin_state(tok, NULL, &next, &has_next);
        if (!has_next)
            continue;
        ret = yk_state_rec_format(&next, &vals[nvals]);
        if (ret)
            goto cleanup;
        nvals++;
        ret = yk_modlist_del_states(&ml, tok, &ndel);
        if (ret)
            goto cleanup;
    }
    if (nvals > 0) {
        ret = yk_modlist_add(&ml, LDAP_MOD_ADD, YK_ATTR_STATE, nvals, vals,
                          NULL);
        if (ret)
            goto cleanup;
    }
    ret = yk_store_modify(st, entry->dn, &ml, YK_OP_WRITE);

cleanup:
    yk_modlist_free(&ml);
    for (i = 0; i < nvals; i++)
        free(vals[i]);
    free(vals);
    return ret;
}

/* --- kadm5_hook: delprinc and renprinc ----------------------------------- */

#define YK_STRIP_TRIES 3         /* re-reads after a racing writer */


/* Re-bind entry's tokens (new secret records, rewritten states) and
 * optionally move krbPrincipalName, in one modify. */
krb5_error_code
yk_store_rebind_tokens(yk_store *st, const yk_entry *entry,
                       yk_secret_rec *const *secrets, const char *old_name,
                       const char *new_name)
{
    krb5_error_code ret = 0;
    yk_modlist ml = { NULL, 0 };
    yk_state_rec next;
    char **vals = NULL;
    size_t i, nvals = 0, ndel;
    int has_next;

    if (st == NULL || entry == NULL || (secrets == NULL &&
                                        entry->ntokens > 0) ||
        (old_name == NULL) != (new_name == NULL))
        return EINVAL;
    /* At most a secret and a state value per token. */
    vals = calloc(2 * entry->ntokens + 1, sizeof(*vals));
    if (vals == NULL)
        return ENOMEM;
    for (i = 0; i < entry->ntokens; i++) {
        const yk_token *tok = &entry->tokens[i];

        if (secrets[i] == NULL)
            continue;
        if (strcmp(secrets[i]->pubid, tok->pubid) != 0) {
            ret = EINVAL;
            goto cleanup;
        }
        ret = yk_secret_rec_format(secrets[i], &vals[nvals]);
        if (ret)
            goto cleanup;
        ret = yk_modlist_del_secrets(&ml, tok, &ndel);
        if (ret == 0)
            ret = yk_modlist_add1(&ml, LDAP_MOD_ADD, YK_ATTR_SECRET,
                               vals[nvals]);
        nvals++;
        if (ret)
            goto cleanup;
        admin_state(tok, NULL, &next, &has_next);
        if (!has_next)
            continue;
        ret = yk_state_rec_format(&next, &vals[nvals]);
        if (ret)
            goto cleanup;
        ret = yk_modlist_del_states(&ml, tok, &ndel);
        if (ret == 0)
            ret = yk_modlist_add1(&ml, LDAP_MOD_ADD, YK_ATTR_STATE,
                               vals[nvals]);
        nvals++;
        if (ret)
            goto cleanup;
    }
    if (old_name != NULL) {
        /* Delete the exact old value: gone means someone else moved it. */
        ret = yk_modlist_add1(&ml, LDAP_MOD_DELETE, "krbPrincipalName",
                           old_name);
        if (ret == 0)
            ret = yk_modlist_add1(&ml, LDAP_MOD_ADD, "krbPrincipalName",
                               new_name);
        if (ret)
            goto cleanup;
    }
    ret = yk_store_modify(st, entry->dn, &ml, YK_OP_WRITE);

cleanup:
    yk_modlist_free(&ml);
    for (i = 0; i < nvals; i++)
        free(vals[i]);
    free(vals);
    return ret;
}

/* One attempt at stripping dn: read what is there, delete it. */
static krb5_error_code
strip_once(yk_store *st, const char *dn, int *removed_out)
{
    krb5_error_code ret;
    yk_modlist ml = { NULL, 0 };
    unsigned mask = 0;
    size_t i;

    *removed_out = 0;
    ret = read_presence(st, dn, &mask);
    if (ret)
        return ret;
    /* An empty value list deletes the whole attribute. */
    for (i = 0; ret == 0 && strip_attrs[i] != NULL; i++) {
        if (mask & (1u << i))
            ret = yk_modlist_add(&ml, LDAP_MOD_DELETE, strip_attrs[i], 0,
                              NULL, NULL);
    }
    if (ret == 0 && (mask & YK_STRIP_CLASS_BIT))
        ret = yk_modlist_add1(&ml, LDAP_MOD_DELETE, "objectClass",
                           YK_AUX_CLASS);
    if (ret == 0 && ml.n > 0) {
        ret = yk_modify_entry(st, dn, &ml, NULL, NULL, YK_OP_WRITE);
        if (ret == 0)
            *removed_out = 1;
    }
    yk_modlist_free(&ml);
    return ret;
}

/* Remove all our attributes and the class from dn (see store.h). */
krb5_error_code
yk_store_strip_entry(yk_store *st, const char *dn, int *removed_out)
{
    krb5_error_code ret = YK_ERR_STORE_CONFLICT;
    yk_sigpipe_guard g;
    int removed = 0, tries;

    if (st == NULL || dn == NULL)
        return EINVAL;
    yk_sigpipe_block(&g);
    /* noSuchAttribute: a value vanished between the read and the modify
     * (a KDC's swap, an administrator): read again. */
    for (tries = 0; tries < YK_STRIP_TRIES && ret == YK_ERR_STORE_CONFLICT;
         tries++)
        ret = strip_once(st, dn, &removed);
    yk_sigpipe_restore(&g);
    if (ret == YK_ERR_STORE_NOT_FOUND)
        ret = 0;
    if (ret == 0 && removed_out != NULL)
        *removed_out = removed;
    return ret;
}
