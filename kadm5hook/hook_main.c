/* SPDX-License-Identifier: MIT */
/* hook_main.c: kadm5_hook "yubikey": tokens follow delprinc and renprinc. */

/*
 * Loaded by kadmind and kadmin.local ([plugins] kadm5_hook = { module =
 * yubikey:PATH } in kdc.conf).  Tokens live on the principal's directory
 * entry and their secrets are bound to its name, so (doc/kadm5-hook.md):
 *
 * delprinc, precommit: look the principal up in the token directory (the
 *   write server).  If the directory cannot be read, the deletion is
 *   refused with the reason: without it we cannot tell whether tokens
 *   would outlive their principal.  Postcommit: remove every yubikey*
 *   attribute and the class yubikeyPrincipalAux from the entry found
 *   before (its DN is kept in between: kldap strips krbPrincipalName
 *   from a user entry, so the name no longer finds it); an entry that
 *   went with the principal (kldap's own entries) is fine.  Our class is
 *   independent of krbPrincipalAux, so what kldap leaves behind never
 *   makes its modify violate the schema.
 * renprinc, precommit: if the old name's entry holds tokens, check that
 *   the directory answers, that no other entry already claims the new
 *   name, that the keyring loads and that every secret unwraps; else the
 *   rename is refused.  Postcommit: find the entry (by the new name when
 *   the database moved it, as kldap does; else by the old name, and then
 *   its krbPrincipalName moves too, as a DB2 realm's directory needs),
 *   re-wrap every secret for the new name and write the records, the
 *   rewritten state values and the name in one modify.
 *
 * A postcommit failure cannot undo the commit: it is reported (kadmin's
 * standard error, kadmind's log) with what is left where.  init does
 * nothing that can fail on configuration, since a failing init stops
 * kadmind and kadmin.local altogether; connections are made per
 * operation.  Realms without a token directory are left alone.
 */

#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>

#include <com_err.h>
#include <krb5/kadm5_hook_plugin.h>

#include "errors.h"
#include "hook_ops.h"
#include "secmem.h"

#define YK_HOOK_MSG_MAX 1024     /* bytes of one message */

/* What a precommit found, for the postcommit of the same operation. */
enum { PENDING_NONE, PENDING_REMOVE, PENDING_RENAME };

struct kadm5_hook_modinfo_st {
    int op;                      /* PENDING_* */
    char *principal;             /* the (old) name, unparsed */
    char *target;                /* rename: the new name */
    char *dn;                    /* its token entry before the commit */
    size_t ntokens;
    int has_secrets;
};

/* One realm's token directory for one call. */
typedef struct {
    yk_config cfg;
    int active;                  /* a token directory is configured */
    yk_store *st;
} hook_realm;

krb5_error_code kadm5_hook_yubikey_initvt(krb5_context context, int maj_ver,
                                          int min_ver,
                                          krb5_plugin_vtable vtable);

/* Format a message into buf (YK_HOOK_MSG_MAX bytes). */
static void
fmt(char *buf, const char *f, ...) __attribute__((format(printf, 2, 3)));

static void
fmt(char *buf, const char *f, ...)
{
    va_list ap;

    va_start(ap, f);
    vsnprintf(buf, YK_HOOK_MSG_MAX, f, ap);
    va_end(ap);
}

/* Append a and b to the message buf (YK_HOOK_MSG_MAX), cut to fit. */
static void
append(char *buf, const char *a, const char *b)
{
    size_t used = strlen(buf), n;
    const char *parts[2] = { a, b };
    int i;

    for (i = 0; i < 2; i++) {
        n = strlen(parts[i]);
        if (n > YK_HOOK_MSG_MAX - 1 - used)
            n = YK_HOOK_MSG_MAX - 1 - used;
        memcpy(buf + used, parts[i], n);
        used += n;
    }
    buf[used] = '\0';
}

/* Refuse an operation (precommit): code with msg as its message, which
 * kadmin prints and kadmind logs. */
static kadm5_ret_t
refuse(krb5_context ctx, krb5_error_code code, const char *msg)
{
    if (code == 0)
        code = YK_ERR_CONFIG;
    krb5_set_error_message(ctx, code, "yubikey: %s", msg);
    return code;
}

/* Report a postcommit failure: on kadmin's standard error (kadmind's log;
 * kadmin.local then exits 1) and as code's message, which the hook
 * framework logs too. */
static kadm5_ret_t
report(krb5_context ctx, krb5_error_code code, const char *msg)
{
    com_err("yubikey", 0, "%s", msg);
    if (code == 0)
        code = YK_ERR_CONFIG;
    krb5_set_error_message(ctx, code, "yubikey: %s", msg);
    return code;
}

/* Log what was done to syslog.  Not com_err: kadmin.local counts every
 * com_err line as a failure and would exit 1. */
static void
note(const char *msg)
{
    syslog(LOG_AUTHPRIV | LOG_NOTICE, "yubikey: %s", msg);
}

/* Forget what the last precommit found. */
static void
pending_clear(kadm5_hook_modinfo *mi)
{
    free(mi->principal);
    free(mi->target);
    free(mi->dn);
    memset(mi, 0, sizeof(*mi));
}

/* Remember what a precommit found; *mi is cleared first. */
static krb5_error_code
pending_set(kadm5_hook_modinfo *mi, int op, const char *principal,
            const char *target, const yk_entry *e)
{
    pending_clear(mi);
    mi->principal = strdup(principal);
    mi->target = target != NULL ? strdup(target) : NULL;
    mi->dn = strdup(e->dn);
    if (mi->principal == NULL || mi->dn == NULL ||
        (target != NULL && mi->target == NULL)) {
        pending_clear(mi);
        return ENOMEM;
    }
    mi->op = op;
    mi->ntokens = e->ntokens;
    mi->has_secrets = yk_hook_entry_has_secrets(e);
    return 0;
}

/* The postcommit's match: whether the last precommit was op on these
 * names. */
static int
pending_is(const kadm5_hook_modinfo *mi, int op, const char *principal,
           const char *target)
{
    return mi->op == op && mi->principal != NULL &&
        strcmp(mi->principal, principal) == 0 &&
        (target == NULL || (mi->target != NULL &&
                            strcmp(mi->target, target) == 0));
}

/* A profile string as a malloc'd copy (NULL when unset): [section] sub
 * name, or [section] name when sub is NULL. */
static krb5_error_code
profile_dup(profile_t profile, const char *section, const char *sub,
            const char *name, char **out)
{
    krb5_error_code ret;
    char *v = NULL;

    *out = NULL;
    ret = sub != NULL ?
        profile_get_string(profile, section, sub, name, NULL, &v) :
        profile_get_string(profile, section, name, NULL, NULL, &v);
    if (ret)
        return ret;
    if (v != NULL) {
        *out = strdup(v);
        profile_release_string(v);
        if (*out == NULL)
            return ENOMEM;
    }
    return 0;
}

/* The hook's LDAP identity, laid over the realm's yubikey_ldap_bind_dn,
 * yubikey_ldap_password_file and yubikey_ldap_sasl_mech (NULL values read
 * as unset; ykconf.c's overlay), so that ykconf.c reads its password as
 * it reads the KDC's.  Strings malloc'd. */
typedef struct {
    int active;
    char *bind_dn;
    char *password_file;
    char *sasl_mech;
    const char *source;          /* where the identity came from (static
                                  * text, for the start line) */
} hook_overlay;

/* Free the overlay's strings. */
static void
overlay_clear(hook_overlay *ov)
{
    free(ov->bind_dn);
    free(ov->password_file);
    free(ov->sasl_mech);
    memset(ov, 0, sizeof(*ov));
}

/* Choose the hook's LDAP identity into ov.  It writes what only
 * administrators may (secrets, public ids, the class):
 * yubikey_hook_bind_dn with yubikey_hook_password_file, or
 * yubikey_hook_sasl_mech; when unset and the LDAP settings come from
 * kldap, kadmind's own (ldap_kadmind_dn or ldap_kadmind_sasl_mech, and
 * ldap_service_password_file); else the configured (KDC's) identity is
 * kept (ov->active 0). */
static krb5_error_code
hook_identity(profile_t profile, const char *realm, hook_overlay *ov,
              char *why)
{
    krb5_error_code ret;
    char *module = NULL;

    ret = profile_dup(profile, "realms", realm, YK_CONF_HOOK_BIND_DN,
                      &ov->bind_dn);
    if (ret == 0)
        ret = profile_dup(profile, "realms", realm,
                          YK_CONF_HOOK_PASSWORD_FILE, &ov->password_file);
    if (ret == 0)
        ret = profile_dup(profile, "realms", realm, YK_CONF_HOOK_SASL_MECH,
                          &ov->sasl_mech);
    ov->source = "yubikey_hook_*";
    if (ret == 0 && ov->bind_dn == NULL && ov->sasl_mech == NULL)
        ret = yk_config_kldap_module(profile, realm, &module);
    if (ret == 0 && module != NULL) {
        ov->source = "kadmind's kldap identity";
        ret = yk_config_kldap_string(profile, module, "ldap_kadmind_dn", 1,
                                     &ov->bind_dn);
        if (ret == 0)
            ret = yk_config_kldap_string(profile, module,
                                         "ldap_kadmind_sasl_mech", 1,
                                         &ov->sasl_mech);
        if (ret == 0 && ov->password_file == NULL)
            ret = yk_config_kldap_string(profile, module,
                                         "ldap_service_password_file", 1,
                                         &ov->password_file);
    }
    free(module);
    if (ret) {
        fmt(why, "cannot read the settings of realm %s: %s", realm,
            yk_strerror(ret));
        return ret;
    }
    if (ov->bind_dn == NULL && ov->sasl_mech == NULL)
        return 0;
    /* Never the KDC's password for another DN. */
    if (ov->sasl_mech == NULL && ov->password_file == NULL) {
        fmt(why, "no password file for the bind DN %s (set "
            "yubikey_hook_password_file)", ov->bind_dn);
        return YK_ERR_CONFIG;
    }
    ov->active = 1;
    return 0;
}

/* Close a realm opened by realm_open. */
static void
realm_close(hook_realm *hr)
{
    yk_store_free(hr->st);
    yk_config_clear(&hr->cfg);
    memset(hr, 0, sizeof(*hr));
}

/* Load the settings of realm, the hook's identity laid over them, and
 * make its store (no connection yet).  hr->active is 0 when the realm has
 * no token directory.  *source_out (may be NULL) says whose identity the
 * hook binds as.  On failure why says what is wrong. */
static krb5_error_code
realm_open_name(krb5_context ctx, const char *realm, hook_realm *hr,
                const char **source_out, char *why)
{
    krb5_error_code ret;
    profile_t base = NULL, profile = NULL;
    hook_overlay ov;
    yk_overlay lay;

    memset(hr, 0, sizeof(*hr));
    memset(&ov, 0, sizeof(ov));
    why[0] = '\0';
    ret = krb5_get_profile(ctx, &base);
    if (ret) {
        fmt(why, "cannot read the configuration: %s", yk_strerror(ret));
        goto cleanup;
    }
    ret = hook_identity(base, realm, &ov, why);
    if (ret)
        goto cleanup;
    yk_overlay_init(&lay, base, realm);
    if (ov.active) {
        (void)yk_overlay_set(&lay, YK_CONF_LDAP_BIND_DN, ov.bind_dn);
        (void)yk_overlay_set(&lay, YK_CONF_LDAP_PASSWORD_FILE,
                             ov.password_file);
        (void)yk_overlay_set(&lay, YK_CONF_LDAP_SASL_MECH, ov.sasl_mech);
    }
    ret = yk_overlay_profile(&lay, &profile);
    if (ret) {
        fmt(why, "cannot read the configuration: %s", yk_strerror(ret));
        goto cleanup;
    }
    ret = yk_config_load(profile, realm, &hr->cfg);
    if (ret) {
        fmt(why, "bad yubikey settings for realm %s, or an unreadable "
            "LDAP password file (%s): %s", realm, ov.password_file != NULL ?
            ov.password_file : YK_CONF_LDAP_PASSWORD_FILE,
            yk_strerror(ret));
        goto cleanup;
    }
    /* As the KDC module: both needed, else no tokens work here. */
    if (hr->cfg.store.uri == NULL || hr->cfg.store.base == NULL)
        goto cleanup;
    ret = yk_config_check_write_target(&hr->cfg.store, why,
                                       YK_HOOK_MSG_MAX);
    if (ret)
        goto cleanup;
    ret = yk_store_new(&hr->cfg.store, &hr->st);
    if (ret) {
        fmt(why, "cannot set up the token directory of realm %s: %s",
            realm, yk_strerror(ret));
        goto cleanup;
    }
    hr->active = 1;
    if (source_out != NULL) {
        *source_out = ov.active ? ov.source :
            "the KDC's identity (yubikey_hook_bind_dn is not set)";
    }

cleanup:
    if (ret)
        realm_close(hr);
    if (profile != NULL)
        profile_release(profile);
    profile_release(base);
    overlay_clear(&ov);
    return ret;
}

/* realm_open_name for princ's realm. */
static krb5_error_code
realm_open(krb5_context ctx, krb5_const_principal princ, hook_realm *hr,
           char *why)
{
    krb5_error_code ret;
    char *realm;

    realm = strndup(princ->realm.data, princ->realm.length);
    if (realm == NULL)
        return ENOMEM;
    ret = realm_open_name(ctx, realm, hr, NULL, why);
    free(realm);
    return ret;
}

/* Load hr's master keyring; on failure why says so. */
static krb5_error_code
realm_keyring(hook_realm *hr, yk_keyring **kr_out, char *why)
{
    krb5_error_code ret;

    if (hr->cfg.master_key_file == NULL) {
        fmt(why, "yubikey_master_key_file is not set");
        return YK_ERR_CONFIG;
    }
    ret = yk_keyring_load(hr->cfg.master_key_file, kr_out);
    if (ret)
        fmt(why, "cannot load the master keyring %s: %s",
            hr->cfg.master_key_file, yk_strerror(ret));
    return ret;
}

/* Describe a failed lookup of name into why. */
static void
lookup_failed(hook_realm *hr, const char *name, krb5_error_code code,
              char *why)
{
    if (code == YK_ERR_STORE_AMBIGUOUS)
        fmt(why, "several directory entries match %s (%s)", name,
            yk_store_last_error(hr->st));
    else
        fmt(why, "cannot read the token directory: %s (%s)",
            yk_strerror(code), yk_store_last_error(hr->st));
}

/* delprinc, precommit: find the principal's token entry, or refuse when
 * the directory cannot tell. */
static kadm5_ret_t
remove_pre(krb5_context ctx, kadm5_hook_modinfo *mi, const char *name,
           krb5_const_principal princ)
{
    krb5_error_code ret;
    hook_realm hr;
    yk_entry *e = NULL;
    char why[YK_HOOK_MSG_MAX], msg[YK_HOOK_MSG_MAX];

    ret = realm_open(ctx, princ, &hr, why);
    if (ret == 0 && !hr.active)
        goto cleanup;
    if (ret == 0)
        ret = yk_store_lookup(hr.st, name, 1, &e);
    if (ret == YK_ERR_STORE_NOT_FOUND) {
        ret = 0;
        goto cleanup;
    }
    if (ret) {
        if (hr.st != NULL)
            lookup_failed(&hr, name, ret, why);
        fmt(msg, "cannot check whether %s holds YubiKey tokens: "
            "%s; not deleted, so that no token outlives its principal "
            "(retry when the token directory answers)", name, why);
        ret = refuse(ctx, ret, msg);
        goto cleanup;
    }
    ret = pending_set(mi, PENDING_REMOVE, name, NULL, e);

cleanup:
    yk_entry_free(e);
    realm_close(&hr);
    return ret;
}

/* delprinc, postcommit: strip our data from the entry found before. */
static kadm5_ret_t
remove_post(krb5_context ctx, kadm5_hook_modinfo *mi, const char *name,
            krb5_const_principal princ)
{
    krb5_error_code ret;
    hook_realm hr;
    char why[YK_HOOK_MSG_MAX], msg[YK_HOOK_MSG_MAX];
    int removed = 0;

    if (!pending_is(mi, PENDING_REMOVE, name, NULL))
        return 0;
    ret = realm_open(ctx, princ, &hr, why);
    if (ret == 0 && hr.active) {
        ret = yk_store_strip_entry(hr.st, mi->dn, &removed);
        if (ret)
            fmt(why, "%s (%s)", yk_strerror(ret),
                yk_store_last_error(hr.st));
    }
    if (ret) {
        fmt(msg, "%s was deleted, but the YubiKey attributes of "
            "its directory entry %s (%lu token(s)) were not removed: %s; "
            "remove them by hand or with ykadmin purge", name, mi->dn,
            (unsigned long)mi->ntokens, why);
        ret = report(ctx, ret, msg);
    } else if (removed) {
        fmt(msg, "removed the YubiKey data of %s (%lu token(s)) from %s",
            name, (unsigned long)mi->ntokens, mi->dn);
        note(msg);
    }
    realm_close(&hr);
    pending_clear(mi);
    return ret;
}

/* Whether the entry that a krbPrincipalName search finds for name is the
 * one at dn (the postcommit of a DB2 rename moves that attribute). */
static krb5_error_code
check_name_attr(hook_realm *hr, const char *name, const char *dn, char *why)
{
    krb5_error_code ret;
    yk_store_config sc;
    yk_store *st = NULL;
    yk_entry *e = NULL;

    if (strcmp(hr->cfg.store.filter, YK_DEFAULT_FILTER) == 0)
        return 0;
    ret = yk_store_config_copy(&hr->cfg.store, &sc);
    if (ret)
        return ret;
    free(sc.filter);
    sc.filter = NULL;           /* yk_store_new uses the default */
    ret = yk_store_new(&sc, &st);
    yk_store_config_clear(&sc);
    if (ret == 0)
        ret = yk_store_lookup(st, name, 1, &e);
    if (ret == 0 && strcasecmp(e->dn, dn) != 0)
        ret = YK_ERR_STORE_AMBIGUOUS;
    if (ret == YK_ERR_STORE_NOT_FOUND || ret == YK_ERR_STORE_AMBIGUOUS)
        fmt(why, "the token entry %s does not carry krbPrincipalName %s, "
            "which is what a rename moves (yubikey_principal_filter is "
            "%s)", dn, name, hr->cfg.store.filter);
    else if (ret)
        fmt(why, "cannot read the token directory: %s (%s)",
            yk_strerror(ret), yk_store_last_error(st));
    yk_entry_free(e);
    yk_store_free(st);
    return ret;
}

/* renprinc, precommit: refuse unless the old name's tokens can follow. */
static kadm5_ret_t
rename_pre(krb5_context ctx, kadm5_hook_modinfo *mi, const char *oname,
           const char *nname, krb5_const_principal oprinc,
           krb5_const_principal nprinc)
{
    krb5_error_code ret;
    hook_realm hr;
    yk_entry *e = NULL, *other = NULL;
    yk_keyring *kr = NULL;
    yk_secret_rec **secrets = NULL;
    char why[YK_HOOK_MSG_MAX], msg[YK_HOOK_MSG_MAX];
    size_t n = 0;

    ret = realm_open(ctx, oprinc, &hr, why);
    if (ret == 0 && !hr.active)
        goto cleanup;
    if (ret == 0) {
        ret = yk_store_lookup(hr.st, oname, 1, &e);
        if (ret == YK_ERR_STORE_NOT_FOUND) {
            ret = 0;
            goto cleanup;
        }
        if (ret)
            lookup_failed(&hr, oname, ret, why);
    }
    if (ret == 0 && !yk_hook_entry_has_data(e))
        goto cleanup;
    if (ret == 0 && !krb5_realm_compare(ctx, oprinc, nprinc)) {
        ret = YK_ERR_CONFIG;
        fmt(why, "YubiKey tokens cannot move to another realm");
    }
    if (ret == 0) {
        /* Another entry already answering to the new name would take
         * the tokens' place in every lookup. */
        ret = yk_store_lookup(hr.st, nname, 1, &other);
        if (ret == 0) {
            ret = YK_ERR_STORE_EXISTS;
            fmt(why, "the token directory already has an entry for %s "
                "(%s)", nname, other->dn);
        } else if (ret == YK_ERR_STORE_NOT_FOUND) {
            ret = 0;
        } else {
            lookup_failed(&hr, nname, ret, why);
        }
    }
    if (ret == 0)
        ret = check_name_attr(&hr, oname, e->dn, why);
    if (ret == 0 && yk_hook_entry_has_secrets(e))
        ret = realm_keyring(&hr, &kr, why);
    /* Every secret must unwrap now: the postcommit cannot refuse. */
    if (ret == 0)
        ret = yk_hook_rewrap(kr, e, oname, nname, &secrets, &n, why,
                             sizeof(why));
    if (ret) {
        fmt(msg, "%s cannot be renamed: its YubiKey tokens could "
            "not follow it (%s); not renamed", oname, why);
        ret = refuse(ctx, ret, msg);
        goto cleanup;
    }
    ret = pending_set(mi, PENDING_RENAME, oname, nname, e);

cleanup:
    if (e != NULL)
        yk_hook_secrets_free(secrets, e->ntokens);
    yk_keyring_free(kr);
    yk_entry_free(other);
    yk_entry_free(e);
    realm_close(&hr);
    return ret;
}

/* renprinc, postcommit: re-bind the tokens to the new name. */
static kadm5_ret_t
rename_post(krb5_context ctx, kadm5_hook_modinfo *mi, const char *oname,
            const char *nname, krb5_const_principal oprinc)
{
    krb5_error_code ret;
    hook_realm hr;
    yk_keyring *kr = NULL;
    char why[YK_HOOK_MSG_MAX], msg[YK_HOOK_MSG_MAX];
    size_t n = 0;
    int moved = 0;

    if (!pending_is(mi, PENDING_RENAME, oname, nname))
        return 0;
    ret = realm_open(ctx, oprinc, &hr, why);
    if (ret == 0 && hr.active && mi->has_secrets)
        ret = realm_keyring(&hr, &kr, why);
    if (ret == 0 && hr.active)
        ret = yk_hook_rebind(hr.st, kr, oname, nname, mi->dn, &n, &moved,
                             why, sizeof(why));
    if (ret) {
        fmt(msg, "%s was renamed to %s, but its YubiKey tokens "
            "(entry %s) were not re-bound to the new name: %s; they still "
            "answer to %s only: rename the principal back, fix the cause "
            "and rename it again", oname, nname, mi->dn, why, oname);
        ret = report(ctx, ret, msg);
    } else {
        fmt(msg, "re-bound %lu token secret(s) of %s to %s%s",
            (unsigned long)n, oname, nname, moved ?
            " (and moved krbPrincipalName on the token entry)" : "");
        note(msg);
    }
    yk_keyring_free(kr);
    realm_close(&hr);
    pending_clear(mi);
    return ret;
}

/* kadm5 remove: see the top of this file. */
static kadm5_ret_t
hook_remove(krb5_context ctx, kadm5_hook_modinfo *mi, int stage,
            krb5_principal princ)
{
    krb5_error_code ret;
    char *name = NULL;

    if (mi == NULL || princ == NULL)
        return 0;
    ret = krb5_unparse_name(ctx, princ, &name);
    if (ret)
        return ret;
    if (stage == KADM5_HOOK_STAGE_PRECOMMIT) {
        pending_clear(mi);
        ret = remove_pre(ctx, mi, name, princ);
    } else {
        ret = remove_post(ctx, mi, name, princ);
    }
    krb5_free_unparsed_name(ctx, name);
    return ret;
}

/* kadm5 rename: see the top of this file. */
static kadm5_ret_t
hook_rename(krb5_context ctx, kadm5_hook_modinfo *mi, int stage,
            krb5_principal oprinc, krb5_principal nprinc)
{
    krb5_error_code ret;
    char *oname = NULL, *nname = NULL;

    if (mi == NULL || oprinc == NULL || nprinc == NULL)
        return 0;
    ret = krb5_unparse_name(ctx, oprinc, &oname);
    if (ret == 0)
        ret = krb5_unparse_name(ctx, nprinc, &nname);
    if (ret)
        goto cleanup;
    if (stage == KADM5_HOOK_STAGE_PRECOMMIT) {
        pending_clear(mi);
        ret = rename_pre(ctx, mi, oname, nname, oprinc, nprinc);
    } else {
        ret = rename_post(ctx, mi, oname, nname, oprinc);
    }

cleanup:
    krb5_free_unparsed_name(ctx, oname);
    krb5_free_unparsed_name(ctx, nname);
    return ret;
}

/*
 * libkrb5's trace entry point: exported by libkrb5 since 1.9 but declared
 * only in its private k5-trace.h.  Weak, so that a library without it
 * leaves it NULL and the module still loads.
 */
extern void krb5int_trace(krb5_context context, const char *fmt, ...)
    __attribute__((weak));

/* Say once, at start, what the hook will do in the default realm: to
 * syslog (with its other notes) and under KRB5_TRACE.  Never com_err:
 * kadmin.local would count the line as a failure.  Nothing here fails
 * init; an unusable configuration is described, not refused. */
static void
hook_announce(krb5_context ctx)
{
    char msg[YK_HOOK_MSG_MAX], why[YK_HOOK_MSG_MAX];
    char keyring[YK_HOOK_MSG_MAX + 16];
    const char *source = NULL;
    char *realm = NULL;
    hook_realm hr;
    yk_keyring *kr = NULL;

    memset(&hr, 0, sizeof(hr));
    if (krb5_get_default_realm(ctx, &realm) != 0) {
        fmt(msg, "krb5-yubikey %s kadm5_hook loaded (no default realm: "
            "realms are read at each delprinc and renprinc)",
            PACKAGE_VERSION);
    } else if (realm_open_name(ctx, realm, &hr, &source, why) != 0) {
        fmt(msg, "krb5-yubikey %s kadm5_hook loaded, realm %s: "
            "CONFIGURATION ERROR: %s; delprinc and renprinc of principals "
            "with tokens will be refused until it is fixed",
            PACKAGE_VERSION, realm, why);
    } else if (!hr.active) {
        fmt(msg, "krb5-yubikey %s kadm5_hook loaded, realm %s: no token "
            "directory configured: the hook does nothing in this realm",
            PACKAGE_VERSION, realm);
    } else {
        if (realm_keyring(&hr, &kr, why) == 0) {
            snprintf(keyring, sizeof(keyring), "%lu keys, newest version "
                     "%lu", (unsigned long)yk_keyring_count(kr),
                     (unsigned long)yk_keyring_newest(kr));
        } else {
            snprintf(keyring, sizeof(keyring), "NOT LOADED: %s", why);
        }
        fmt(msg, "krb5-yubikey %s kadm5_hook loaded, realm %s: token "
            "directory %s, writes to %s, bind as %s%s (%s); master keyring "
            "%s (%s)", PACKAGE_VERSION, realm, hr.cfg.store.uri,
            hr.cfg.store.write_uri != NULL ? hr.cfg.store.write_uri :
            hr.cfg.store.uri, hr.cfg.store.sasl_mech != NULL ? "SASL " :
            "DN ", hr.cfg.store.sasl_mech != NULL ? hr.cfg.store.sasl_mech :
            hr.cfg.store.bind_dn != NULL ? hr.cfg.store.bind_dn :
            "(anonymous)", source, hr.cfg.master_key_file != NULL ?
            hr.cfg.master_key_file : "(yubikey_master_key_file unset)",
            keyring);
        /* As loud as the KDC's start line (in the same line: it is the
         * one kadmin.local traces). */
        if (yk_config_check_cleartext(&hr.cfg.store, why, sizeof(why)))
            append(msg, "; WARNING: ", why);
    }
    note(msg);
    if (krb5int_trace != NULL)
        krb5int_trace(ctx, "yubikey: {str}", msg);
    yk_keyring_free(kr);
    realm_close(&hr);
    krb5_free_default_realm(ctx, realm);
}

/* init: the module data, and one line saying that the hook is loaded;
 * nothing that configuration can fail (a failing init stops kadmind and
 * kadmin.local). */
static kadm5_ret_t
hook_init(krb5_context ctx, kadm5_hook_modinfo **mi_out)
{
    kadm5_hook_modinfo *mi;

    mi = calloc(1, sizeof(*mi));
    if (mi == NULL)
        return ENOMEM;
    hook_announce(ctx);
    *mi_out = mi;
    return 0;
}

/* fini: free the module data; NULL is accepted. */
static void
hook_fini(krb5_context ctx, kadm5_hook_modinfo *mi)
{
    if (mi == NULL)
        return;
    pending_clear(mi);
    free(mi);
}

/* The module's entry point: kadm5_hook major version 1 (remove is in
 * minor version 1, rename in 2). */
krb5_error_code
kadm5_hook_yubikey_initvt(krb5_context context, int maj_ver, int min_ver,
                          krb5_plugin_vtable vtable)
{
    kadm5_hook_vftable_1 *vt;

    if (maj_ver != 1)
        return KRB5_PLUGIN_VER_NOTSUPP;
    vt = (kadm5_hook_vftable_1 *)vtable;
    vt->name = "yubikey";
    vt->init = hook_init;
    vt->fini = hook_fini;
    vt->remove = hook_remove;
    if (min_ver >= 2)
        vt->rename = hook_rename;
    return 0;
}
