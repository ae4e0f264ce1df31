/* SPDX-License-Identifier: MIT */
/* store_probe.c: what the write server tells of its replication. */

/*
 * Replay safety rests on every KDC swapping on the same server.  A write
 * server that is one of several replicated providers (or a consumer)
 * works, but writes elsewhere reach it only with the replication delay:
 * worth a loud line at start.  Two sources, each read when the bind
 * identity may:
 *
 *   - the contextCSN values of the naming context holding the base: one
 *     per server ID that changed it ("YYYYmmddHHMMSS.uuuuuuZ#cnt#SID#mod");
 *     several server IDs mean changes made on several providers;
 *   - cn=config: the database with that suffix, its olcSyncrepl (it pulls
 *     from another server) and olcMultiProvider / olcMirrorMode (it is a
 *     provider too).
 *
 * Nothing found (or nothing readable) says nothing: the probe only warns.
 */

#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <ldap.h>

#include "errors.h"
#include "store.h"
#include "store_int.h"

#define YK_PROBE_SIDS_MAX 8          /* server IDs listed in the report */
#define YK_CSN_SID_LEN 3             /* the SID field of a CSN: 3 hex */

/* What the probe saw. */
typedef struct {
    char suffix[512];                /* the naming context of the base */
    char sids[YK_PROBE_SIDS_MAX][YK_CSN_SID_LEN + 1];
    size_t nsids;
    int config_read;                 /* cn=config answered for suffix */
    int syncrepl;                    /* the database pulls from another */
    int multiprovider;               /* ... and is a provider too */
} probe_seen;

/* Run a search on the write connection; *res_out holds the entries (the
 * caller frees it).  Refusals and absences come back as errors. */
static krb5_error_code
probe_search(yk_store *st, yk_conn *c, const char *base, int scope,
             const char *filter, const char **attrs, LDAPMessage **res_out)
{
    krb5_error_code ret;
    struct timeval tv;
    LDAPMessage *res = NULL;
    int rc, msgid, err = LDAP_SUCCESS;

    ret = yk_op_timeout(st, &tv);
    if (ret)
        return ret;
    rc = ldap_search_ext(c->ld, base, scope, filter, (char **)attrs, 0,
                         NULL, NULL, &tv, 0, &msgid);
    if (rc != LDAP_SUCCESS)
        return yk_conn_fail(st, c, "probe", rc, NULL, YK_OP_READ);
    ret = yk_conn_wait(st, c, msgid, "probe", YK_OP_READ, &res);
    if (ret)
        return ret;
    rc = ldap_parse_result(c->ld, res, &err, NULL, NULL, NULL, NULL, 0);
    if (rc != LDAP_SUCCESS || err != LDAP_SUCCESS) {
        ldap_msgfree(res);
        return YK_ERR_STORE_UNAVAILABLE;
    }
    *res_out = res;
    return 0;
}

/* Whether dn is suffix or lies under it (DNs compared without regard to
 * case, as written: the probe is a hint, not an access decision). */
static int
dn_under(const char *dn, const char *suffix)
{
    size_t n = strlen(dn), m = strlen(suffix);

    if (m == 0 || m > n)
        return 0;
    if (strcasecmp(dn + n - m, suffix) != 0)
        return 0;
    return n == m || dn[n - m - 1] == ',';
}

/* The root DSE's naming context that holds base, into seen->suffix. */
static void
probe_suffix(yk_store *st, yk_conn *c, const char *base, probe_seen *seen)
{
    static const char *attrs[] = { "namingContexts", NULL };
    LDAPMessage *res = NULL, *msg;
    struct berval **v = NULL;
    size_t i;

    if (probe_search(st, c, "", LDAP_SCOPE_BASE, "(objectClass=*)", attrs,
                     &res) != 0)
        return;
    msg = ldap_first_entry(c->ld, res);
    v = msg != NULL ? ldap_get_values_len(c->ld, msg, "namingContexts") :
        NULL;
    for (i = 0; v != NULL && v[i] != NULL; i++) {
        if (v[i]->bv_len >= sizeof(seen->suffix))
            continue;
        memcpy(seen->suffix, v[i]->bv_val, v[i]->bv_len);
        seen->suffix[v[i]->bv_len] = '\0';
        if (dn_under(base, seen->suffix))
            break;
        seen->suffix[0] = '\0';
    }
    ldap_value_free_len(v);
    ldap_msgfree(res);
}

/* The server IDs of the suffix entry's contextCSN values. */
static void
probe_csns(yk_store *st, yk_conn *c, probe_seen *seen)
{
    static const char *attrs[] = { "contextCSN", NULL };
    LDAPMessage *res = NULL, *msg;
    struct berval **v = NULL;
    const char *sid;
    size_t i, k;

    if (probe_search(st, c, seen->suffix, LDAP_SCOPE_BASE,
                     "(objectClass=*)", attrs, &res) != 0)
        return;
    msg = ldap_first_entry(c->ld, res);
    v = msg != NULL ? ldap_get_values_len(c->ld, msg, "contextCSN") : NULL;
    for (i = 0; v != NULL && v[i] != NULL; i++) {
        /* time#count#SID#mod: the SID follows the second '#'. */
        sid = memchr(v[i]->bv_val, '#', v[i]->bv_len);
        if (sid != NULL)
            sid = memchr(sid + 1, '#', v[i]->bv_len -
                         (size_t)(sid + 1 - v[i]->bv_val));
        if (sid == NULL || (size_t)(sid + 1 - v[i]->bv_val) +
            YK_CSN_SID_LEN > v[i]->bv_len)
            continue;
        sid++;
        for (k = 0; k < seen->nsids; k++) {
            if (strncasecmp(seen->sids[k], sid, YK_CSN_SID_LEN) == 0)
                break;
        }
        if (k == seen->nsids && seen->nsids < YK_PROBE_SIDS_MAX) {
            memcpy(seen->sids[k], sid, YK_CSN_SID_LEN);
            seen->sids[k][YK_CSN_SID_LEN] = '\0';
            seen->nsids++;
        }
    }
    ldap_value_free_len(v);
    ldap_msgfree(res);
}

/* Whether an LDAP boolean value is TRUE. */
static int
value_true(struct berval **v)
{
    return v != NULL && v[0] != NULL && v[0]->bv_len == 4 &&
        strncasecmp(v[0]->bv_val, "TRUE", 4) == 0;
}

/* The suffix's database in cn=config, when the identity may read it. */
static void
probe_config(yk_store *st, yk_conn *c, probe_seen *seen)
{
    static const char *attrs[] = {
        "olcSyncrepl", "olcMultiProvider", "olcMirrorMode", NULL
    };
    LDAPMessage *res = NULL, *msg;
    struct berval **v;
    struct berval sv, esc = { 0, NULL };
    char *filter = NULL;
    size_t n;

    sv.bv_val = seen->suffix;
    sv.bv_len = strlen(seen->suffix);
    if (ldap_bv2escaped_filter_value(&sv, &esc) != 0)
        return;
    n = strlen("(olcSuffix=)") + esc.bv_len + 1;
    filter = malloc(n);
    if (filter != NULL) {
        snprintf(filter, n, "(olcSuffix=%s)", esc.bv_val);
        if (probe_search(st, c, "cn=config", LDAP_SCOPE_ONELEVEL, filter,
                         attrs, &res) == 0) {
            msg = ldap_first_entry(c->ld, res);
            if (msg != NULL) {
                seen->config_read = 1;
                v = ldap_get_values_len(c->ld, msg, "olcSyncrepl");
                seen->syncrepl = v != NULL && v[0] != NULL;
                ldap_value_free_len(v);
                v = ldap_get_values_len(c->ld, msg, "olcMultiProvider");
                seen->multiprovider = value_true(v);
                ldap_value_free_len(v);
                v = ldap_get_values_len(c->ld, msg, "olcMirrorMode");
                seen->multiprovider |= value_true(v);
                ldap_value_free_len(v);
            }
            ldap_msgfree(res);
        }
    }
    free(filter);
    ldap_memfree(esc.bv_val);
}

krb5_error_code
yk_store_probe_replication(yk_store *st, char *report, size_t len)
{
    krb5_error_code ret;
    yk_sigpipe_guard g;
    yk_conn *c = NULL;
    probe_seen seen;
    char sids[YK_PROBE_SIDS_MAX * (YK_CSN_SID_LEN + 2) + 1];
    const char *base = st->cfg.kldap_realm_dn != NULL ?
        st->cfg.kldap_realm_dn : st->cfg.base;
    const char *uri = st->cfg.write_uri != NULL ? st->cfg.write_uri :
        st->cfg.uri;
    size_t i, off = 0;

    if (len > 0)
        report[0] = '\0';
    if (base == NULL || uri == NULL)
        return 0;
    memset(&seen, 0, sizeof(seen));
    yk_sigpipe_block(&g);
    st->no_threads = 1;         /* the KDC forks after this */
    ret = yk_conn_get(st, 1, &c);
    if (ret == 0)
        probe_suffix(st, c, base, &seen);
    if (ret == 0 && seen.suffix[0] != '\0' && c->ld != NULL)
        probe_csns(st, c, &seen);
    if (ret == 0 && seen.suffix[0] != '\0' && c->ld != NULL)
        probe_config(st, c, &seen);
    st->no_threads = 0;
    yk_sigpipe_restore(&g);
    if (ret)
        return ret;

    sids[0] = '\0';
    for (i = 0; i < seen.nsids; i++) {
        off += (size_t)snprintf(sids + off, sizeof(sids) - off, "%s%s",
                                i > 0 ? ", " : "", seen.sids[i]);
    }
    if (seen.config_read && seen.syncrepl && !seen.multiprovider) {
        snprintf(report, len, "the write server %s is a replica (a "
                 "syncrepl consumer of %s): it refuses or forwards the "
                 "counter swap; point yubikey_ldap_write_uri at its "
                 "provider", uri, seen.suffix);
    } else if ((seen.config_read && seen.multiprovider) || seen.nsids > 1) {
        snprintf(report, len, "the write server %s is one of several "
                 "replicated providers of %s (%s%s%s): every KDC must swap "
                 "on this same server (the same yubikey_ldap_write_uri), "
                 "else an OTP can be accepted once on each before "
                 "replication catches up", uri, seen.suffix,
                 seen.nsids > 1 ? "changes from server IDs " :
                 "multi-provider in cn=config",
                 seen.nsids > 1 ? sids : "",
                 seen.nsids > 1 && seen.config_read && seen.multiprovider ?
                 "; multi-provider in cn=config" : "");
    }
    return 0;
}

void
yk_store_disconnect(yk_store *st)
{
    if (st == NULL)
        return;
    yk_conn_drop(&st->rd);
    yk_conn_drop(&st->wr);
}
