/* SPDX-License-Identifier: MIT */
/* store.c: the LDAP token store: lookups and the compare-and-swap. */

/*
 * With store_conn.c (connections, binds, the time budget), store_entry.c
 * (an entry's attributes into records) and store_admin.c (the writes of
 * ykadmin and the kadm5 hook), the only files that include <ldap.h>.
 * Everything above them sees plain records and YK_ERR_STORE_* codes;
 * LDAP result codes are translated once, in store_conn.c.
 *
 * Compare-and-swap: one modify that deletes the exact state value(s) read
 * (octetStringMatch compares bytes) and adds the new one.  If another
 * writer got there first the delete fails with noSuchAttribute and the
 * whole modify is rejected: YK_ERR_STORE_CONFLICT.  The swap also carries
 * the assertion control with the exact secret value read, so a token
 * deleted and enrolled again under the same public id (whose first state
 * value may equal the old one's) fails it too.  Never REPLACE, never
 * the Permissive Modify control.  Administrative writes rewrite the
 * token's state value the same way (gen + 1), so a KDC swapping from a
 * cached value loses and re-reads.  The only REPLACE is on the
 * single-valued, administrator-only yubikeyPolicy.
 */

#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ldap.h>

#include "errors.h"
#include "postread.h"
#include "secmem.h"
#include "store.h"
#include "store_int.h"

#define YK_PUBID_FILTER "(yubikeyPublicId=%p)"
#define YK_LIST_FILTER "(|(yubikeyPublicId=*)(yubikeyTokenSecret=*)" \
    "(yubikeyTokenState=*))"

static const char *entry_attrs[] = {
    YK_ATTR_PUBID, YK_ATTR_SECRET, YK_ATTR_STATE, YK_ATTR_POLICY,
    "krbPrincipalName", "krbCanonicalName", NULL
};

/* Build principal's search filter: cfg->filter with each %p replaced by
 * the principal escaped for a filter value (RFC 4515). */
static krb5_error_code
make_filter(const char *pattern, const char *value, char **out)
{
    krb5_error_code ret = 0;
    struct berval in, esc = { 0, NULL };
    const char *p;
    size_t n = 0, count = 0;
    char *f = NULL, *o;

    in.bv_val = (char *)value;
    in.bv_len = strlen(value);
    if (ldap_bv2escaped_filter_value(&in, &esc) != 0)
        return ENOMEM;
    for (p = pattern; (p = strstr(p, "%p")) != NULL; p += 2)
        count++;
    n = strlen(pattern) - 2 * count + count * esc.bv_len + 1;
    f = malloc(n);
    if (f == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    for (o = f, p = pattern; *p != '\0';) {
        if (p[0] == '%' && p[1] == 'p') {
            memcpy(o, esc.bv_val, esc.bv_len);
            o += esc.bv_len;
            p += 2;
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    *out = f;

cleanup:
    ber_memfree(esc.bv_val);
    return ret;
}

/* --- searching ---------------------------------------------------------- */

/* Called for each entry found; arg is the caller's. */
typedef krb5_error_code (*entry_fn)(LDAP *ld, LDAPMessage *msg, void *arg);

/* Free the resolved search targets. */
static void
targets_clear(yk_store *st)
{
    size_t i;

    for (i = 0; i < st->ntargets; i++)
        free(st->targets[i].base);
    free(st->targets);
    st->targets = NULL;
    st->ntargets = 0;
}

/* Append a search target. */
static krb5_error_code
targets_add(yk_store *st, const char *base, size_t len, int scope)
{
    yk_target *grown;

    grown = realloc(st->targets, (st->ntargets + 1) * sizeof(*grown));
    if (grown == NULL)
        return ENOMEM;
    st->targets = grown;
    grown[st->ntargets].base = yk_dup_bytes(base, len);
    if (grown[st->ntargets].base == NULL)
        return ENOMEM;
    grown[st->ntargets].scope = scope;
    st->ntargets++;
    return 0;
}

/* Resolve where principals live: cfg->base (subtree), or for a kldap
 * realm the realm container and the subtrees it lists (krbSubTrees,
 * krbSearchScope), read once per store. */
static krb5_error_code
targets_load(yk_store *st, yk_conn *c)
{
    krb5_error_code ret;
    const char *attrs[] = { "krbSubTrees", "krbSearchScope", NULL };
    struct timeval tv;
    struct berval **v = NULL, **sc = NULL;
    LDAPMessage *res = NULL, *msg;
    int rc, msgid, scope = LDAP_SCOPE_SUBTREE;
    size_t i;

    if (st->ntargets > 0)
        return 0;
    if (st->cfg.kldap_realm_dn == NULL) {
        if (st->cfg.base == NULL) {
            yk_store_set_error(st, "no search base configured");
            return YK_ERR_CONFIG;
        }
        return targets_add(st, st->cfg.base, strlen(st->cfg.base),
                           LDAP_SCOPE_SUBTREE);
    }

    ret = yk_op_timeout(st, &tv);
    if (ret)
        return ret;
    rc = ldap_search_ext(c->ld, st->cfg.kldap_realm_dn, LDAP_SCOPE_BASE,
                         "(objectClass=*)", (char **)attrs, 0, NULL, NULL,
                         &tv, 1, &msgid);
    if (rc != LDAP_SUCCESS)
        return yk_conn_fail(st, c, "reading the realm container", rc, NULL,
                         YK_OP_READ);
    ret = yk_conn_wait(st, c, msgid, "reading the realm container",
                    YK_OP_READ, &res);
    if (ret)
        return ret;
    msg = ldap_first_entry(c->ld, res);
    if (msg != NULL) {
        v = ldap_get_values_len(c->ld, msg, "krbSubTrees");
        sc = ldap_get_values_len(c->ld, msg, "krbSearchScope");
        if (sc != NULL && sc[0] != NULL && sc[0]->bv_len == 1 &&
            sc[0]->bv_val[0] == '1')
            scope = LDAP_SCOPE_ONELEVEL;
    }
    ret = yk_conn_check_result(st, c, res, "reading the realm container",
                            YK_OP_READ);
    res = NULL;
    if (ret == 0 && msg == NULL) {
        yk_store_set_error(st, "realm container %s not found",
                  st->cfg.kldap_realm_dn);
        ret = YK_ERR_STORE_NOT_FOUND;
    }
    if (ret)
        goto cleanup;
    ret = targets_add(st, st->cfg.kldap_realm_dn,
                      strlen(st->cfg.kldap_realm_dn), LDAP_SCOPE_SUBTREE);
    for (i = 0; ret == 0 && v != NULL && v[i] != NULL; i++)
        ret = targets_add(st, v[i]->bv_val, v[i]->bv_len, scope);
    if (ret)
        targets_clear(st);

cleanup:
    ldap_value_free_len(v);
    ldap_value_free_len(sc);
    return ret;
}

/* Check a search's final result (res is freed).  The entries count even
 * when the size limit cut the search; a base that does not exist (a
 * missing subtree) simply holds no entry. */
static krb5_error_code
search_check_result(yk_store *st, yk_conn *c, LDAPMessage *res,
                    int sizelimit)
{
    krb5_error_code ret = 0;
    char *diag = NULL;
    int rc, err = LDAP_SUCCESS;

    rc = ldap_parse_result(c->ld, res, &err, NULL, &diag, NULL, NULL, 1);
    if (rc != LDAP_SUCCESS)
        err = rc;
    if (err == LDAP_SIZELIMIT_EXCEEDED && sizelimit > 0)
        err = LDAP_SUCCESS;
    if (err == LDAP_NO_SUCH_OBJECT)
        err = LDAP_SUCCESS;
    if (err != LDAP_SUCCESS)
        ret = yk_conn_fail(st, c, "search", err, diag, YK_OP_READ);
    ldap_memfree(diag);
    return ret;
}

/* Whether dn was already seen in this search (overlapping targets). */
static int
dn_seen(char **seen, size_t nseen, const char *dn)
{
    size_t i;

    for (i = 0; i < nseen; i++) {
        if (strcasecmp(seen[i], dn) == 0)
            return 1;
    }
    return 0;
}

/* Search every target with filter on the read (or, with write set, the
 * write) server and call fn for each distinct entry.  sizelimit 0 = no
 * limit; a search cut by it still delivers its entries.  *count_out gets
 * the number of distinct entries. */
static krb5_error_code
search_targets(yk_store *st, int write, const char *filter, int sizelimit,
               entry_fn fn, void *arg, size_t *count_out)
{
    krb5_error_code ret;
    yk_conn *c = NULL;
    struct timeval tv;
    LDAPMessage *res = NULL, *msg;
    char **seen = NULL, **grown, *dn;
    size_t nseen = 0, t, i;
    int rc, msgid;

    ret = yk_conn_get(st, write, &c);
    if (ret)
        return ret;
    ret = targets_load(st, c);
    if (ret)
        return ret;
    for (t = 0; t < st->ntargets; t++) {
        ret = yk_op_timeout(st, &tv);
        if (ret)
            goto cleanup;
        rc = ldap_search_ext(c->ld, st->targets[t].base,
                             st->targets[t].scope, filter,
                             (char **)entry_attrs, 0, NULL, NULL, &tv,
                             sizelimit, &msgid);
        if (rc != LDAP_SUCCESS) {
            ret = yk_conn_fail(st, c, "search", rc, NULL, YK_OP_READ);
            goto cleanup;
        }
        ret = yk_conn_wait(st, c, msgid, "search", YK_OP_READ, &res);
        if (ret)
            goto cleanup;
        for (msg = ldap_first_entry(c->ld, res); msg != NULL;
             msg = ldap_next_entry(c->ld, msg)) {
            dn = ldap_get_dn(c->ld, msg);
            if (dn == NULL) {
                ret = ENOMEM;
                goto cleanup;
            }
            if (dn_seen(seen, nseen, dn)) {
                ldap_memfree(dn);
                continue;
            }
            grown = realloc(seen, (nseen + 1) * sizeof(*seen));
            if (grown == NULL) {
                ldap_memfree(dn);
                ret = ENOMEM;
                goto cleanup;
            }
            seen = grown;
            seen[nseen] = strdup(dn);
            ldap_memfree(dn);
            if (seen[nseen] == NULL) {
                ret = ENOMEM;
                goto cleanup;
            }
            nseen++;
            ret = fn(c->ld, msg, arg);
            if (ret)
                goto cleanup;
        }
        ret = search_check_result(st, c, res, sizelimit);
        res = NULL;
        if (ret)
            goto cleanup;
    }
    *count_out = nseen;

cleanup:
    ldap_msgfree(res);
    for (i = 0; i < nseen; i++)
        free(seen[i]);
    free(seen);
    return ret;
}

/* search_targets with SIGPIPE blocked. */
static krb5_error_code
store_search(yk_store *st, int write, const char *filter, int sizelimit,
             entry_fn fn, void *arg, size_t *count_out)
{
    krb5_error_code ret;
    yk_sigpipe_guard g;

    yk_sigpipe_block(&g);
    ret = search_targets(st, write, filter, sizelimit, fn, arg, count_out);
    yk_sigpipe_restore(&g);
    return ret;
}

/* --- reading ------------------------------------------------------------ */

/* Lookup state: the first entry parsed, and the principal asked for. */
typedef struct {
    const char *principal;
    yk_entry *entry;
} lookup_arg;

/* entry_fn for lookups: parse the first entry only. */
static krb5_error_code
lookup_entry(LDAP *ld, LDAPMessage *msg, void *arg)
{
    lookup_arg *la = arg;

    if (la->entry != NULL)
        return 0;
    return yk_entry_parse(ld, msg, la->principal, &la->entry);
}

/* Make a store for a copy of cfg; no connection yet. */
krb5_error_code
yk_store_new(const yk_store_config *cfg, yk_store **out)
{
    krb5_error_code ret;
    yk_store *st = NULL;

    if (cfg == NULL || cfg->uri == NULL || cfg->uri[0] == '\0')
        return YK_ERR_CONFIG;
    st = calloc(1, sizeof(*st));
    if (st == NULL)
        return ENOMEM;
    ret = yk_store_config_copy(cfg, &st->cfg);
    if (ret) {
        free(st);
        return ret;
    }
    if (st->cfg.filter == NULL) {
        st->cfg.filter = strdup(YK_DEFAULT_FILTER);
        if (st->cfg.filter == NULL) {
            yk_store_free(st);
            return ENOMEM;
        }
    }
    if (st->cfg.timeout_ms <= 0)
        st->cfg.timeout_ms = YK_DEFAULT_TIMEOUT_MS;
    st->rd.is_write = 0;
    st->wr.is_write = 1;
    *out = st;
    return 0;
}

/* Close both connections, wipe the configuration's password and free;
 * NULL is accepted. */
void
yk_store_free(yk_store *st)
{
    if (st == NULL)
        return;
    yk_conn_drop(&st->rd);
    yk_conn_drop(&st->wr);
    targets_clear(st);
    yk_store_config_clear(&st->cfg);
    free(st);
}

/* Find principal's one entry and parse its tokens. */
krb5_error_code
yk_store_lookup(yk_store *st, const char *principal, int fresh,
                yk_entry **entry_out)
{
    krb5_error_code ret;
    lookup_arg la = { principal, NULL };
    char *filter = NULL;
    size_t n = 0;

    if (st == NULL || principal == NULL)
        return EINVAL;
    ret = make_filter(st->cfg.filter, principal, &filter);
    if (ret)
        return ret;
    /* A limit of 2 is enough to tell one match from several. */
    ret = store_search(st, fresh, filter, 2, lookup_entry, &la, &n);
    if (ret)
        goto cleanup;
    if (n == 0) {
        yk_store_set_error(st, "no entry matches %s", filter);
        ret = YK_ERR_STORE_NOT_FOUND;
        goto cleanup;
    }
    if (n > 1) {
        yk_store_set_error(st, "several entries match %s", filter);
        ret = YK_ERR_STORE_AMBIGUOUS;
        goto cleanup;
    }
    *entry_out = la.entry;
    la.entry = NULL;

cleanup:
    yk_entry_free(la.entry);
    free(filter);
    return ret;
}

/* --- writing ------------------------------------------------------------ */

/* See store_int.h. */
krb5_error_code
yk_modlist_add(yk_modlist *ml, int op, const char *attr, size_t nvals,
               char *const *vals, const size_t *lens)
{
    LDAPMod **grown, *m = NULL;
    size_t i;

    grown = realloc(ml->mods, (ml->n + 2) * sizeof(*grown));
    if (grown == NULL)
        return ENOMEM;
    ml->mods = grown;
    grown[ml->n] = NULL;
    m = calloc(1, sizeof(*m));
    if (m == NULL)
        return ENOMEM;
    m->mod_op = op | LDAP_MOD_BVALUES;
    m->mod_type = (char *)attr;
    m->mod_bvalues = calloc(nvals + 1, sizeof(struct berval *));
    if (m->mod_bvalues == NULL) {
        free(m);
        return ENOMEM;
    }
    grown[ml->n++] = m;
    grown[ml->n] = NULL;
    for (i = 0; i < nvals; i++) {
        m->mod_bvalues[i] = malloc(sizeof(struct berval));
        if (m->mod_bvalues[i] == NULL)
            return ENOMEM;
        m->mod_bvalues[i]->bv_val = vals[i];
        m->mod_bvalues[i]->bv_len = lens != NULL ? lens[i] :
            strlen(vals[i]);
    }
    return 0;
}

/* See store_int.h. */
krb5_error_code
yk_modlist_add1(yk_modlist *ml, int op, const char *attr, const char *val)
{
    char *v = (char *)val;

    return yk_modlist_add(ml, op, attr, 1, &v, NULL);
}

/* See store_int.h. */
void
yk_modlist_free(yk_modlist *ml)
{
    size_t i, j;

    for (i = 0; i < ml->n; i++) {
        for (j = 0; ml->mods[i]->mod_bvalues[j] != NULL; j++)
            free(ml->mods[i]->mod_bvalues[j]);
        free(ml->mods[i]->mod_bvalues);
        free(ml->mods[i]);
    }
    free(ml->mods);
    ml->mods = NULL;
    ml->n = 0;
}

/* The post-read control (RFC 4527) asking for the state values, not
 * critical: a server without it answers the modify as before. */
static int
make_postread(LDAPControl **ctrl_out)
{
    BerElement *ber;
    struct berval bv;
    int rc = LDAP_NO_MEMORY;

    *ctrl_out = NULL;
    ber = ber_alloc_t(LBER_USE_DER);
    if (ber == NULL)
        return rc;
    if (ber_printf(ber, "{s}", YK_ATTR_STATE) != -1 &&
        ber_flatten2(ber, &bv, 0) != -1)
        rc = ldap_control_create(LDAP_CONTROL_POST_READ, 0, &bv, 1,
                                 ctrl_out);
    ber_free(ber, 1);
    return rc;
}

/* See store_int.h. */
krb5_error_code
yk_modify_entry(yk_store *st, const char *dn, yk_modlist *ml,
                const char *assertion, LDAPControl ***postread_out,
                enum yk_op_kind kind)
{
    krb5_error_code ret;
    yk_conn *c = NULL;
    struct timeval tv;
    LDAPMessage *res = NULL;
    LDAPControl *ctrls[3] = { NULL, NULL, NULL };
    size_t n = 0;
    int rc, msgid;

    if (postread_out != NULL)
        *postread_out = NULL;
    if (ml->n == 0)
        return 0;
    ret = yk_conn_get(st, 1, &c);
    if (ret == 0)
        ret = yk_op_timeout(st, &tv);   /* a spent budget sends no write */
    if (ret)
        return ret;
    rc = LDAP_SUCCESS;
    if (assertion != NULL) {
        rc = ldap_create_assertion_control(c->ld, (char *)assertion, 1,
                                           &ctrls[n]);
        if (rc == LDAP_SUCCESS)
            n++;
    }
    if (rc == LDAP_SUCCESS && postread_out != NULL) {
        rc = make_postread(&ctrls[n]);
        if (rc == LDAP_SUCCESS)
            n++;
    }
    if (rc == LDAP_SUCCESS)
        rc = ldap_modify_ext(c->ld, dn, ml->mods, n > 0 ? ctrls : NULL,
                             NULL, &msgid);
    ldap_control_free(ctrls[0]);
    ldap_control_free(ctrls[1]);
    if (rc != LDAP_SUCCESS)
        return yk_conn_fail(st, c, "modify", rc, NULL, kind);
    ret = yk_conn_wait(st, c, msgid, "modify", kind, &res);
    if (ret)
        return ret;
    return yk_conn_check_result_ctrls(st, c, res, "modify", kind,
                                      postread_out);
}

/* See store_int.h. */
krb5_error_code
yk_store_modify(yk_store *st, const char *dn, yk_modlist *ml,
                enum yk_op_kind kind)
{
    krb5_error_code ret;
    yk_sigpipe_guard g;

    yk_sigpipe_block(&g);
    ret = yk_modify_entry(st, dn, ml, NULL, NULL, kind);
    yk_sigpipe_restore(&g);
    return ret;
}

/* See store_int.h. */
krb5_error_code
yk_modlist_del_states(yk_modlist *ml, const yk_token *tok, size_t *n_out)
{
    krb5_error_code ret;

    *n_out = 0;
    if (tok->state_raw != NULL) {
        ret = yk_modlist_add(ml, LDAP_MOD_DELETE, YK_ATTR_STATE, 1,
                          &tok->state_raw, &tok->state_raw_len);
        if (ret)
            return ret;
        (*n_out)++;
    }
    if (tok->nextra > 0) {
        ret = yk_modlist_add(ml, LDAP_MOD_DELETE, YK_ATTR_STATE, tok->nextra,
                          tok->extra_raw, tok->extra_raw_len);
        if (ret)
            return ret;
        *n_out += tok->nextra;
    }
    return 0;
}

/* See store_int.h. */
krb5_error_code
yk_modlist_del_secrets(yk_modlist *ml, const yk_token *tok, size_t *n_out)
{
    krb5_error_code ret;

    *n_out = 0;
    if (tok->secret_raw != NULL) {
        ret = yk_modlist_add(ml, LDAP_MOD_DELETE, YK_ATTR_SECRET, 1,
                          &tok->secret_raw, &tok->secret_raw_len);
        if (ret)
            return ret;
        (*n_out)++;
    }
    if (tok->nsecret_extra > 0) {
        ret = yk_modlist_add(ml, LDAP_MOD_DELETE, YK_ATTR_SECRET,
                          tok->nsecret_extra, tok->secret_extra_raw,
                          tok->secret_extra_raw_len);
        if (ret)
            return ret;
        *n_out += tok->nsecret_extra;
    }
    return 0;
}

/* What the post-read entry (RFC 4527) in ctrls holds beside mine, the
 * value just added (postread.c): YK_RIVAL_* into st->at.rival, and 0; or a
 * post-read that is not there (a server without the control: the swap
 * of before) 0 too; or one that does not parse, YK_ERR_RECORD_FORMAT. */
static krb5_error_code
postread_check(yk_store *st, LDAPControl **ctrls, const char *mine,
               const yk_state_rec *new_state)
{
    LDAPControl *ctrl;

    st->at.rival = YK_RIVAL_NONE;
    ctrl = ldap_control_find(LDAP_CONTROL_POST_READ, ctrls, NULL);
    if (ctrl == NULL)
        return 0;
    return yk_postread_rival(ctrl->ldctl_value.bv_val,
                             ctrl->ldctl_value.bv_len, mine, new_state,
                             &st->at.rival);
}

/* After a swap that stands: delete the lower state values of the token
 * the post-read in ctrls shows beside mine (a conflict's leftover that
 * came in by replication after the swap's read), exact values, in a
 * modify of their own; counted in st->at.leftovers when it lands.  Any
 * failure leaves them: they are below the new counter, so harmless, and
 * the next swap's post-read finds them again. */
static void
remove_leftovers(yk_store *st, const char *dn, LDAPControl **ctrls,
                 const char *mine, const yk_state_rec *new_state)
{
    LDAPControl *ctrl;
    yk_modlist ml = { NULL, 0 };
    char **lower = NULL;
    size_t n = 0;

    ctrl = ldap_control_find(LDAP_CONTROL_POST_READ, ctrls, NULL);
    if (ctrl == NULL ||
        yk_postread_lower(ctrl->ldctl_value.bv_val, ctrl->ldctl_value.bv_len,
                          mine, new_state, &lower) != 0 || lower == NULL)
        return;
    while (lower[n] != NULL)
        n++;
    if (yk_modlist_add(&ml, LDAP_MOD_DELETE, YK_ATTR_STATE, n, lower,
                       NULL) == 0 &&
        yk_store_modify(st, dn, &ml, YK_OP_WRITE) == 0)
        st->at.leftovers = n;
    yk_modlist_free(&ml);
    yk_postread_free(lower);
}

/* Compare-and-swap tok's state: delete the exact values read, add the
 * new one, in one modify on the write server; then, from the post-read
 * of that modify, make sure that no other provider's swap of the same
 * counter came in meanwhile (YK_ERR_STORE_RIVAL). */
krb5_error_code
yk_store_cas_state(yk_store *st, const yk_entry *entry, const yk_token *tok,
                   const yk_state_rec *new_state)
{
    krb5_error_code ret;
    yk_modlist ml = { NULL, 0 };
    yk_sigpipe_guard g;
    char *value = NULL, *assertion = NULL;
    LDAPControl **postread = NULL;
    size_t ndel;

    if (st == NULL || entry == NULL || tok == NULL || new_state == NULL ||
        strcmp(new_state->pubid, tok->pubid) != 0)
        return EINVAL;
    /* Without a value to delete there is nothing to compare against: an
     * add alone would let two writers both win. */
    if (!tok->has_state || tok->state_raw == NULL)
        return YK_ERR_RECORD_FORMAT;
    ret = yk_state_rec_format(new_state, &value);
    if (ret)
        return ret;
    ret = yk_modlist_del_states(&ml, tok, &ndel);
    if (ret == 0)
        ret = yk_modlist_add1(&ml, LDAP_MOD_ADD, YK_ATTR_STATE, value);
    /* The state alone could be equal to the value of a token deleted and
     * enrolled again under the same public id (ABA): the swap also
     * asserts the exact secret value read, whose wrapped key differs. */
    if (ret == 0 && tok->secret_raw != NULL)
        ret = make_filter("(" YK_ATTR_SECRET "=%p)", tok->secret_raw,
                          &assertion);
    if (ret == 0) {
        yk_sigpipe_block(&g);
        ret = yk_modify_entry(st, entry->dn, &ml, assertion, &postread,
                           YK_OP_WRITE);
        yk_sigpipe_restore(&g);
    }
    /* Only a swap that raises the counter (an OTP used) can be raced
     * by a replay; an administrator's rewrite keeps it. */
    st->at.rival = YK_RIVAL_NONE;
    st->at.leftovers = 0;
    if (ret == 0 && new_state->counter > tok->state.counter) {
        if (postread_check(st, postread, value, new_state) != 0) {
            yk_store_set_error(st, "the post-read of the swap of token %s "
                               "to counter %lu does not parse",
                               tok->pubid,
                               (unsigned long)new_state->counter);
            st->at.rival = YK_RIVAL_UNREADABLE;
            ret = YK_ERR_STORE_RIVAL;
        } else if (st->at.rival != YK_RIVAL_NONE) {
            yk_store_set_error(st, "a state value as high came in by "
                               "replication after the swap of token %s to "
                               "counter %lu", tok->pubid,
                               (unsigned long)new_state->counter);
            ret = YK_ERR_STORE_RIVAL;
        } else {
            remove_leftovers(st, entry->dn, postread, value, new_state);
        }
    }
    ldap_controls_free(postread);
    yk_modlist_free(&ml);
    free(assertion);
    free(value);
    return ret;
}

/* entry_fn for yk_store_find_pubid: keep the first entry, count all. */
static krb5_error_code
pubid_entry(LDAP *ld, LDAPMessage *msg, void *arg)
{
    yk_entry **first = arg;

    if (*first != NULL)
        return 0;
    return yk_entry_parse(ld, msg, NULL, first);
}

/* Which principal holds pubid (searched on the write server, the
 * freshest copy). */
krb5_error_code
yk_store_find_pubid(yk_store *st, const char *pubid, char **principal_out,
                    char **dn_out)
{
    krb5_error_code ret;
    yk_entry *e = NULL;
    char *filter = NULL, *principal = NULL, *dn = NULL;
    size_t n = 0;

    if (st == NULL || !yk_pubid_valid(pubid))
        return EINVAL;
    ret = make_filter(YK_PUBID_FILTER, pubid, &filter);
    if (ret)
        return ret;
    ret = store_search(st, 1, filter, 2, pubid_entry, &e, &n);
    if (ret)
        goto cleanup;
    if (n == 0) {
        ret = YK_ERR_TOKEN_UNKNOWN;
        goto cleanup;
    }
    if (n > 1) {
        yk_store_set_error(st, "public id %s is on several entries", pubid);
        ret = YK_ERR_STORE_AMBIGUOUS;
        goto cleanup;
    }
    principal = strdup(e->principal);
    dn = strdup(e->dn);
    if (principal == NULL || dn == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    if (principal_out != NULL) {
        *principal_out = principal;
        principal = NULL;
    }
    if (dn_out != NULL) {
        *dn_out = dn;
        dn = NULL;
    }

cleanup:
    free(principal);
    free(dn);
    free(filter);
    yk_entry_free(e);
    return ret;
}

/* List state: every entry parsed so far. */
typedef struct {
    yk_entry **entries;
    size_t n;
} list_arg;

/* entry_fn for listing: parse and collect every entry. */
static krb5_error_code
list_entry(LDAP *ld, LDAPMessage *msg, void *arg)
{
    krb5_error_code ret;
    list_arg *la = arg;
    yk_entry *e = NULL, **grown;

    ret = yk_entry_parse(ld, msg, NULL, &e);
    if (ret)
        return ret;
    grown = realloc(la->entries, (la->n + 1) * sizeof(*grown));
    if (grown == NULL) {
        yk_entry_free(e);
        return ENOMEM;
    }
    la->entries = grown;
    la->entries[la->n++] = e;
    return 0;
}

/* Every entry holding token values (principal NULL), or principal's
 * entry alone; *entries_out malloc'd, free with yk_entries_free. */
krb5_error_code
yk_store_list(yk_store *st, const char *principal, yk_entry ***entries_out,
              size_t *n_out)
{
    krb5_error_code ret;
    list_arg la = { NULL, 0 };
    yk_entry *one = NULL;
    size_t n = 0;

    if (st == NULL)
        return EINVAL;
    if (principal != NULL) {
        ret = yk_store_lookup(st, principal, 0, &one);
        if (ret)
            return ret;
        la.entries = malloc(sizeof(*la.entries));
        if (la.entries == NULL) {
            yk_entry_free(one);
            return ENOMEM;
        }
        la.entries[0] = one;
        la.n = 1;
    } else {
        ret = store_search(st, 0, YK_LIST_FILTER, 0, list_entry, &la, &n);
        if (ret) {
            yk_entries_free(la.entries, la.n);
            return ret;
        }
    }
    *entries_out = la.entries;
    *n_out = la.n;
    return 0;
}

int
yk_store_last_rival(const yk_store *st)
{
    return st != NULL ? st->at.rival : YK_RIVAL_NONE;
}

size_t
yk_store_last_leftovers(const yk_store *st)
{
    return st != NULL ? st->at.leftovers : 0;
}
