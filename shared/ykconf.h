/* SPDX-License-Identifier: MIT */
/* ykconf.h: kdc.conf relations, shared by the KDC module and ykadmin. */
#ifndef YK_YKCONF_H
#define YK_YKCONF_H

#include <krb5.h>
#include <profile.h>

/* The kdc.conf relations of a realm's subsection ([realms] REALM),
 * named once (doc/admin-guide.md has each one's meaning). */
#define YK_CONF_LDAP_URI                 "yubikey_ldap_uri"
#define YK_CONF_LDAP_WRITE_URI           "yubikey_ldap_write_uri"
#define YK_CONF_LDAP_WRITE_FAILOVER_URI  "yubikey_ldap_write_failover_uri"
#define YK_CONF_LDAP_BIND_DN             "yubikey_ldap_bind_dn"
#define YK_CONF_LDAP_PASSWORD_FILE       "yubikey_ldap_password_file"
#define YK_CONF_LDAP_SASL_MECH           "yubikey_ldap_sasl_mech"
#define YK_CONF_LDAP_BASE                "yubikey_ldap_base"
#define YK_CONF_LDAP_TLS_CACERT          "yubikey_ldap_tls_cacert"
#define YK_CONF_LDAP_STARTTLS            "yubikey_ldap_starttls"
#define YK_CONF_LDAP_TIMEOUT             "yubikey_ldap_timeout"
#define YK_CONF_PRINCIPAL_FILTER         "yubikey_principal_filter"
#define YK_CONF_MASTER_KEY_FILE          "yubikey_master_key_file"
#define YK_CONF_CACHE_TTL                "yubikey_cache_ttl"
#define YK_CONF_BREAKER_TIME             "yubikey_breaker_time"
#define YK_CONF_REQUIRE_FAST             "yubikey_require_fast"
#define YK_CONF_INDICATOR                "yubikey_indicator"
#define YK_CONF_2FA_INDICATOR            "yubikey_2fa_indicator"
#define YK_CONF_PUBLIC_ID_PREFIX         "yubikey_public_id_prefix"
#define YK_CONF_HOOK_BIND_DN             "yubikey_hook_bind_dn"
#define YK_CONF_HOOK_PASSWORD_FILE       "yubikey_hook_password_file"
#define YK_CONF_HOOK_SASL_MECH           "yubikey_hook_sasl_mech"

#define YK_DEFAULT_FILTER "(krbPrincipalName=%p)"
#define YK_DEFAULT_TIMEOUT_MS 500
#define YK_DEFAULT_CACHE_TTL 5
#define YK_DEFAULT_BREAKER_SECONDS 10
#define YK_DEFAULT_INDICATOR "yubikey"
#define YK_DEFAULT_2FA_INDICATOR "yubikey-2fa"

/* How to reach the token directory. Strings malloc'd; NULL = unset. */
typedef struct {
    char *uri;              /* read server(s), space separated */
    char *write_uri;        /* the compare-and-swap server; NULL = uri */
    char *write_failover_uri; /* the second, ordered write server, taken
                             * only while the first is unreachable;
                             * NULL = none (fail closed) */
    int failover_hold_s;    /* seconds a failover connection is kept
                             * before the first is tried again (the
                             * breaker time) */
    int uri_from_kldap;     /* uri is kldap's ldap_servers (default) */
    char *bind_dn;          /* simple bind DN; NULL = anonymous or SASL */
    char *password;         /* secret (from the password file): in
                             * locked memory (yk_secret_strndup), wiped */
    char *sasl_mech;        /* e.g. EXTERNAL; overrides simple bind */
    char *base;             /* search base */
    char *filter;           /* principal filter, %p = escaped principal */
    int timeout_ms;         /* per operation */
    char *tls_cacert;       /* PEM CA bundle for TLS; NULL = libldap's
                             * default (ldap.conf TLS_CACERT) */
    int starttls;           /* StartTLS on ldap:// connections */
    char *kldap_realm_dn;   /* kldap realm container (cn=REALM,container):
                             * when set, principals are searched in it and
                             * in the subtrees it lists (krbSubTrees,
                             * krbSearchScope) instead of under base */
} yk_store_config;

/* Everything the module and ykadmin read from the realm's section. */
typedef struct {
    yk_store_config store;
    char *master_key_file;
    int cache_ttl;          /* seconds */
    int breaker_seconds;    /* circuit breaker open time */
    int require_fast;
    char *indicator;
    char *indicator_2fa;
} yk_config;

/* Read realm's relations from profile into *cfg_out (defaults filled in,
 * the password file read).  Unset required values are not an error here;
 * the callers check what they need. */
krb5_error_code yk_config_load(profile_t profile, const char *realm,
                               yk_config *cfg_out);

/* The server(s) that take the compare-and-swap and every write:
 * write_uri, else uri (NULL when neither is set). */
const char *yk_config_write_target(const yk_store_config *sc);

/* 0 when the write target names at most one server and the write
 * failover (yubikey_ldap_write_failover_uri) is unset or names one other
 * server; else YK_ERR_CONFIG and, in why (len bytes), what is wrong and
 * what to set. */
krb5_error_code yk_config_check_write_target(const yk_store_config *sc,
                                             char *why, size_t len);

/* Whether host (a URI's host part: a name, an IPv4 address or an IPv6
 * address without brackets; "" is libldap's default, localhost) is this
 * machine: localhost, 127.0.0.0/8, ::1 (or ::ffff:127.x.y.z). */
int yk_config_host_is_loopback(const char *host);

/* 1 when a URI of the read or the write target is ldap:// to a host that
 * is not loopback and yubikey_ldap_starttls is off (then in why, len
 * bytes, what crosses the network in clear and what to set); else 0. */
int yk_config_check_cleartext(const yk_store_config *sc, char *why,
                              size_t len);

/* Deep copy of a store configuration. */
krb5_error_code yk_store_config_copy(const yk_store_config *in,
                                     yk_store_config *out);

/* Free (and wipe the password of) a configuration; the struct itself is
 * caller-owned. */
void yk_store_config_clear(yk_store_config *sc);
void yk_config_clear(yk_config *cfg);

/* A profile laid over another: relations of [realms] REALM named here
 * read as the given value (NULL: as unset), every other relation as the
 * base profile says.  ykadmin lays its command line over kdc.conf, the
 * kadm5 hook its own LDAP identity, so that yk_config_load treats them
 * exactly as if kdc.conf said so. */
#define YK_OVERLAY_MAX 8
typedef struct {
    profile_t base;
    const char *realm;
    size_t n;
    const char *names[YK_OVERLAY_MAX];
    const char *values[YK_OVERLAY_MAX];  /* not copied: keep them alive */
} yk_overlay;

/* An empty overlay of base for realm. */
void yk_overlay_init(yk_overlay *ov, profile_t base, const char *realm);

/* From now on name reads as value (NULL: unset).  ENOMEM when full. */
krb5_error_code yk_overlay_set(yk_overlay *ov, const char *name,
                               const char *value);

/* The profile that reads ov (profile_release it before ov goes). */
krb5_error_code yk_overlay_profile(yk_overlay *ov, profile_t *profile_out);

/* Whether realm's LDAP settings come from kldap: yubikey_ldap_uri unset
 * and the realm's database module (database_module, default the realm's
 * name) has db_library = kldap.  *module_out: that module's name
 * (malloc'd), or NULL when not. */
krb5_error_code yk_config_kldap_module(profile_t profile, const char *realm,
                                       char **module_out);

/* A relation of kldap's module as kldap reads it: [dbmodules] MODULE,
 * then (use_defaults) [dbdefaults].  *out malloc'd, NULL when unset. */
krb5_error_code yk_config_kldap_string(profile_t profile, const char *module,
                                       const char *name, int use_defaults,
                                       char **out);

#endif /* YK_YKCONF_H */
