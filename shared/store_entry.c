/* SPDX-License-Identifier: MIT */
/* store_entry.c: a principal's directory entry into token records. */

/*
 * One entry holds, per token, a public id, a secret record and a state
 * record (several state values after a crashed write or a replication
 * conflict: the highest counter wins, the others become the token's
 * extras, which the next swap deletes).  Values that do not parse make
 * their token unusable, never the entry; the raw values are kept for
 * the compare-and-swap, which deletes exactly what was read.
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


/* --- parsing an entry into tokens ------------------------------------- */

/* The token for pubid in e, appended when new. */
static krb5_error_code
token_get(yk_entry *e, const char *pubid, yk_token **tok_out)
{
    yk_token *grown;
    size_t i;

    for (i = 0; i < e->ntokens; i++) {
        if (strcmp(e->tokens[i].pubid, pubid) == 0) {
            *tok_out = &e->tokens[i];
            return 0;
        }
    }
    grown = realloc(e->tokens, (e->ntokens + 1) * sizeof(*grown));
    if (grown == NULL)
        return ENOMEM;
    e->tokens = grown;
    memset(&grown[e->ntokens], 0, sizeof(*grown));
    snprintf(grown[e->ntokens].pubid, sizeof(grown->pubid), "%s", pubid);
    *tok_out = &grown[e->ntokens++];
    return 0;
}

/* Append a copy of n bytes at v to a raw-value list. */
static krb5_error_code
raw_push(char ***vals, size_t **lens, size_t *count, const char *v,
         size_t n)
{
    char **nv;
    size_t *nl;
    char *copy;

    copy = malloc(n + 1);
    if (copy == NULL)
        return ENOMEM;
    memcpy(copy, v, n);
    copy[n] = '\0';
    nv = realloc(*vals, (*count + 1) * sizeof(*nv));
    if (nv == NULL) {
        free(copy);
        return ENOMEM;
    }
    *vals = nv;
    nl = realloc(*lens, (*count + 1) * sizeof(*nl));
    if (nl == NULL) {
        free(copy);
        return ENOMEM;
    }
    *lens = nl;
    nv[*count] = copy;
    nl[*count] = n;
    (*count)++;
    return 0;
}

/* See store_int.h. */
char *
yk_dup_bytes(const char *v, size_t n)
{
    char *s = malloc(n + 1);

    if (s != NULL) {
        memcpy(s, v, n);
        s[n] = '\0';
    }
    return s;
}

/* The public id named by a record that does not parse, when its prefix
 * "yk1 id=<pubid> " is intact (so the value can be tied to its token). */
static int
salvage_pubid(const char *v, size_t n, char pubid[YK_PUBID_MODHEX_MAX + 1])
{
    static const char prefix[] = "yk1 id=";
    size_t plen = sizeof(prefix) - 1, i;

    if (n <= plen || memcmp(v, prefix, plen) != 0)
        return 0;
    for (i = plen; i < n && v[i] != ' '; i++) {
        if (i - plen >= YK_PUBID_MODHEX_MAX || v[i] == '\0')
            return 0;
        pubid[i - plen] = v[i];
    }
    pubid[i - plen] = '\0';
    return yk_pubid_valid(pubid);
}

/* Mark tok unusable with a reason (the first reason is kept). */
static void
token_mark(yk_token *tok, const char *why)
{
    if (!tok->malformed)
        tok->malformed_reason = why;
    tok->malformed = 1;
}

/* Add one yubikeyTokenSecret value to e. */
static krb5_error_code
entry_add_secret(yk_entry *e, const struct berval *bv)
{
    krb5_error_code ret;
    yk_secret_rec *rec = NULL;
    yk_token *tok = NULL;
    char pubid[YK_PUBID_MODHEX_MAX + 1];

    ret = yk_secret_rec_parse(bv->bv_val, bv->bv_len, &rec);
    if (ret == ENOMEM)
        return ret;
    if (ret != 0) {
        if (!salvage_pubid(bv->bv_val, bv->bv_len, pubid)) {
            e->nmalformed++;
            return 0;
        }
        ret = token_get(e, pubid, &tok);
        if (ret)
            return ret;
        token_mark(tok, "a secret value does not parse");
        return raw_push(&tok->secret_extra_raw, &tok->secret_extra_raw_len,
                        &tok->nsecret_extra, bv->bv_val, bv->bv_len);
    }
    ret = token_get(e, rec->pubid, &tok);
    if (ret)
        goto cleanup;
    if (tok->secret != NULL) {
        token_mark(tok, "two secret values");
        ret = raw_push(&tok->secret_extra_raw, &tok->secret_extra_raw_len,
                       &tok->nsecret_extra, bv->bv_val, bv->bv_len);
        goto cleanup;
    }
    tok->secret_raw = yk_dup_bytes(bv->bv_val, bv->bv_len);
    if (tok->secret_raw == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    tok->secret_raw_len = bv->bv_len;
    tok->secret = rec;
    rec = NULL;

cleanup:
    yk_secret_rec_free(rec);
    return ret;
}

/* Whether state a outranks state b: higher counter, then generation,
 * then last use. */
static int
state_newer(const yk_state_rec *a, const yk_state_rec *b)
{
    if (a->counter != b->counter)
        return a->counter > b->counter;
    if (a->gen != b->gen)
        return a->gen > b->gen;
    return a->last_use > b->last_use;
}

/* Add one yubikeyTokenState value to e: the highest counter becomes the
 * token's state, every other value goes to its extras. */
static krb5_error_code
entry_add_state(yk_entry *e, const struct berval *bv)
{
    krb5_error_code ret;
    yk_state_rec rec;
    yk_token *tok = NULL;
    char pubid[YK_PUBID_MODHEX_MAX + 1];
    char *raw = NULL;

    ret = yk_state_rec_parse(bv->bv_val, bv->bv_len, &rec);
    if (ret != 0) {
        if (!salvage_pubid(bv->bv_val, bv->bv_len, pubid)) {
            e->nmalformed++;
            return 0;
        }
        ret = token_get(e, pubid, &tok);
        if (ret)
            return ret;
        token_mark(tok, "a state value does not parse");
        return raw_push(&tok->extra_raw, &tok->extra_raw_len, &tok->nextra,
                        bv->bv_val, bv->bv_len);
    }
    ret = token_get(e, rec.pubid, &tok);
    if (ret)
        return ret;
    if (tok->has_state && !state_newer(&rec, &tok->state))
        return raw_push(&tok->extra_raw, &tok->extra_raw_len, &tok->nextra,
                        bv->bv_val, bv->bv_len);

    /* The new value wins: demote the previous one to the extras. */
    raw = yk_dup_bytes(bv->bv_val, bv->bv_len);
    if (raw == NULL)
        return ENOMEM;
    if (tok->has_state) {
        ret = raw_push(&tok->extra_raw, &tok->extra_raw_len, &tok->nextra,
                       tok->state_raw, tok->state_raw_len);
        if (ret) {
            free(raw);
            return ret;
        }
        free(tok->state_raw);
    }
    tok->state_raw = raw;
    tok->state_raw_len = bv->bv_len;
    tok->state = rec;
    tok->has_state = 1;
    return 0;
}

/* Set e's principal name from the entry when the caller gave none:
 * krbCanonicalName, else the first krbPrincipalName, else "". */
static krb5_error_code
entry_set_principal(LDAP *ld, LDAPMessage *msg, const char *given,
                    char **out)
{
    struct berval **v = NULL;

    if (given == NULL) {
        v = ldap_get_values_len(ld, msg, "krbCanonicalName");
        if (v == NULL || v[0] == NULL) {
            ldap_value_free_len(v);
            v = ldap_get_values_len(ld, msg, "krbPrincipalName");
        }
    }
    if (v != NULL && v[0] != NULL &&
        memchr(v[0]->bv_val, '\0', v[0]->bv_len) == NULL)
        *out = yk_dup_bytes(v[0]->bv_val, v[0]->bv_len);
    else
        *out = strdup(given != NULL ? given : "");
    ldap_value_free_len(v);
    return *out == NULL ? ENOMEM : 0;
}

/* Check every token of e once all values are in: a record without a
 * yubikeyPublicId value escapes the uniqueness check, and a secret
 * without a state value cannot be swapped. */
static void
entry_finish(yk_entry *e)
{
    size_t i;
    yk_token *tok;

    for (i = 0; i < e->ntokens; i++) {
        tok = &e->tokens[i];
        if (!tok->has_pubid && (tok->secret_raw != NULL || tok->has_state ||
                                tok->nextra > 0 || tok->nsecret_extra > 0))
            token_mark(tok, "no yubikeyPublicId value");
        if (tok->secret != NULL && !tok->has_state)
            token_mark(tok, "no state value");
    }
}

/* See store_int.h. */
krb5_error_code
yk_entry_parse(LDAP *ld, LDAPMessage *msg, const char *principal,
               yk_entry **out)
{
    krb5_error_code ret = 0;
    yk_entry *e = NULL;
    yk_token *tok;
    struct berval **v = NULL;
    char *dn = NULL, pubid[YK_PUBID_MODHEX_MAX + 1];
    size_t i;

    e = calloc(1, sizeof(*e));
    if (e == NULL)
        return ENOMEM;
    dn = ldap_get_dn(ld, msg);
    e->dn = dn != NULL ? strdup(dn) : NULL;
    ldap_memfree(dn);
    if (e->dn == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    ret = entry_set_principal(ld, msg, principal, &e->principal);
    if (ret)
        goto cleanup;

    /* Public ids first, so tokens keep the order of that attribute. */
    v = ldap_get_values_len(ld, msg, YK_ATTR_PUBID);
    for (i = 0; v != NULL && v[i] != NULL; i++) {
        if (v[i]->bv_len > YK_PUBID_MODHEX_MAX ||
            memchr(v[i]->bv_val, '\0', v[i]->bv_len) != NULL) {
            e->nmalformed++;
            continue;
        }
        memcpy(pubid, v[i]->bv_val, v[i]->bv_len);
        pubid[v[i]->bv_len] = '\0';
        if (!yk_pubid_valid(pubid)) {
            e->nmalformed++;
            continue;
        }
        ret = token_get(e, pubid, &tok);
        if (ret)
            goto cleanup;
        tok->has_pubid = 1;
    }
    ldap_value_free_len(v);
    v = NULL;

    v = ldap_get_values_len(ld, msg, YK_ATTR_SECRET);
    for (i = 0; ret == 0 && v != NULL && v[i] != NULL; i++)
        ret = entry_add_secret(e, v[i]);
    ldap_value_free_len(v);
    v = NULL;
    if (ret)
        goto cleanup;

    v = ldap_get_values_len(ld, msg, YK_ATTR_STATE);
    for (i = 0; ret == 0 && v != NULL && v[i] != NULL; i++)
        ret = entry_add_state(e, v[i]);
    ldap_value_free_len(v);
    v = NULL;
    if (ret)
        goto cleanup;

    /* No policy value means the default; a bad one means the stricter. */
    e->policy = YK_POLICY_2FA;
    v = ldap_get_values_len(ld, msg, YK_ATTR_POLICY);
    if (v != NULL && v[0] != NULL) {
        e->has_policy = 1;
        if (v[1] != NULL ||
            yk_policy_parse(v[0]->bv_val, v[0]->bv_len, &e->policy) != 0) {
            e->policy = YK_POLICY_2FA;
            e->nmalformed++;
        }
    }
    entry_finish(e);
    *out = e;
    e = NULL;

cleanup:
    ldap_value_free_len(v);
    yk_entry_free(e);
    return ret;
}

/* The token with public id pubid in entry, or NULL. */
yk_token *
yk_entry_find_token(const yk_entry *entry, const char *pubid)
{
    size_t i;

    if (entry == NULL || pubid == NULL)
        return NULL;
    for (i = 0; i < entry->ntokens; i++) {
        if (strcmp(entry->tokens[i].pubid, pubid) == 0)
            return &entry->tokens[i];
    }
    return NULL;
}

/* Free a raw-value list. */
static void
raw_free(char **vals, size_t *lens, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        free(vals[i]);
    free(vals);
    free(lens);
}

/* A copy of n raw values (and their lengths) into *vals_out, *lens_out;
 * -1 on ENOMEM (nothing left allocated). */
static int
raw_copy(char *const *vals, const size_t *lens, size_t n, char ***vals_out,
         size_t **lens_out)
{
    size_t i;

    *vals_out = NULL;
    *lens_out = NULL;
    if (n == 0)
        return 0;
    *vals_out = calloc(n, sizeof(**vals_out));
    *lens_out = calloc(n, sizeof(**lens_out));
    if (*vals_out == NULL || *lens_out == NULL)
        goto fail;
    for (i = 0; i < n; i++) {
        (*vals_out)[i] = yk_dup_bytes(vals[i], lens[i]);
        if ((*vals_out)[i] == NULL) {
            raw_free(*vals_out, *lens_out, i);
            *vals_out = NULL;
            *lens_out = NULL;
            return -1;
        }
        (*lens_out)[i] = lens[i];
    }
    return 0;

fail:
    free(*vals_out);
    free(*lens_out);
    *vals_out = NULL;
    *lens_out = NULL;
    return -1;
}

/* Copy token src into dst (zeroed): -1 on ENOMEM (dst then holds what
 * was copied, for yk_entry_free). */
static int
token_copy(const yk_token *src, yk_token *dst)
{
    *dst = *src;
    dst->secret = NULL;
    dst->secret_raw = NULL;
    dst->state_raw = NULL;
    dst->nextra = 0;
    dst->extra_raw = NULL;
    dst->extra_raw_len = NULL;
    dst->nsecret_extra = 0;
    dst->secret_extra_raw = NULL;
    dst->secret_extra_raw_len = NULL;
    if (src->secret != NULL &&
        yk_secret_rec_copy(src->secret, &dst->secret) != 0)
        return -1;
    if (src->secret_raw != NULL) {
        dst->secret_raw = yk_dup_bytes(src->secret_raw, src->secret_raw_len);
        if (dst->secret_raw == NULL)
            return -1;
    }
    if (src->state_raw != NULL) {
        dst->state_raw = yk_dup_bytes(src->state_raw, src->state_raw_len);
        if (dst->state_raw == NULL)
            return -1;
    }
    if (raw_copy(src->extra_raw, src->extra_raw_len, src->nextra,
                 &dst->extra_raw, &dst->extra_raw_len) != 0)
        return -1;
    dst->nextra = src->nextra;
    if (raw_copy(src->secret_extra_raw, src->secret_extra_raw_len,
                 src->nsecret_extra, &dst->secret_extra_raw,
                 &dst->secret_extra_raw_len) != 0)
        return -1;
    dst->nsecret_extra = src->nsecret_extra;
    return 0;
}

/* A deep copy of entry; see store.h. */
krb5_error_code
yk_entry_copy(const yk_entry *entry, yk_entry **out)
{
    yk_entry *e;
    size_t i;

    *out = NULL;
    e = calloc(1, sizeof(*e));
    if (e == NULL)
        return ENOMEM;
    e->policy = entry->policy;
    e->has_policy = entry->has_policy;
    e->nmalformed = entry->nmalformed;
    if ((entry->dn != NULL && (e->dn = strdup(entry->dn)) == NULL) ||
        (entry->principal != NULL &&
         (e->principal = strdup(entry->principal)) == NULL))
        goto fail;
    if (entry->ntokens > 0) {
        e->tokens = calloc(entry->ntokens, sizeof(*e->tokens));
        if (e->tokens == NULL)
            goto fail;
    }
    for (i = 0; i < entry->ntokens; i++) {
        e->ntokens = i + 1;
        if (token_copy(&entry->tokens[i], &e->tokens[i]) != 0)
            goto fail;
    }
    *out = e;
    return 0;

fail:
    yk_entry_free(e);
    return ENOMEM;
}

/* Free an entry and its tokens; NULL is accepted. */
void
yk_entry_free(yk_entry *entry)
{
    size_t i;
    yk_token *tok;

    if (entry == NULL)
        return;
    for (i = 0; i < entry->ntokens; i++) {
        tok = &entry->tokens[i];
        yk_secret_rec_free(tok->secret);
        free(tok->secret_raw);
        free(tok->state_raw);
        raw_free(tok->extra_raw, tok->extra_raw_len, tok->nextra);
        raw_free(tok->secret_extra_raw, tok->secret_extra_raw_len,
                 tok->nsecret_extra);
    }
    free(entry->tokens);
    free(entry->dn);
    free(entry->principal);
    free(entry);
}

/* Free a list of entries; NULL is accepted. */
void
yk_entries_free(yk_entry **entries, size_t n)
{
    size_t i;

    if (entries == NULL)
        return;
    for (i = 0; i < n; i++)
        yk_entry_free(entries[i]);
    free(entries);
}
