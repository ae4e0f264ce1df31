/* SPDX-License-Identifier: MIT */
/* ykconf.c: kdc.conf relations, shared by the KDC module and ykadmin. */

/*
 * Everything is read from the realm's subsection of [realms]
 * (doc/design.md §7).
 * When yubikey_ldap_uri is unset and the realm's database_module names a
 * [dbmodules] section whose db_library is kldap, the LDAP settings default
 * to kldap's own: ldap_servers (default ldapi://), ldap_kdc_dn,
 * ldap_kdc_sasl_mech, ldap_service_password_file (falling back to
 * [dbdefaults] as kldap does), and principals are searched in the realm
 * container cn=REALM,<ldap_kerberos_container_dn> and its krbSubTrees.
 * A yubikey_ldap_* relation that is set always wins; a set
 * yubikey_ldap_bind_dn or yubikey_ldap_sasl_mech also keeps both
 * ldap_kdc_dn and ldap_kdc_sasl_mech out.
 *
 * Password file: either the password on the first line, or kldap's stash
 * format, lines "DN#{HEX}<hex of the password>" (comment lines start with
 * '#' or '!'), of which the line whose DN equals the bind DN (compared
 * without regard to case) is used.  A file that holds stash lines but none
 * for the bind DN is an error, never a password.  With a SASL mechanism
 * set, no password file is read.
 *
 * TLS: ldaps:// URIs use TLS from the first byte; yubikey_ldap_starttls
 * = true makes ldap:// connections send StartTLS before the bind;
 * ldapi:// stays local and plain.  Whenever TLS is used the server's
 * certificate must chain to yubikey_ldap_tls_cacert (else libldap's
 * default CA file) and name the URI's host (store_conn.c).
 */

#include <config.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errors.h"
#include "secfile.h"
#include "secmem.h"
#include "ykconf.h"

#define YK_PASSWORD_FILE_MAX 65536   /* bytes: a larger file is refused */
#define YK_TIMEOUT_MAX_MS 3600000    /* one hour */
#define YK_HEX_TAG "{HEX}"

/* Free a string the profile library returned. */
static void
release(char *s)
{
    if (s != NULL)
        profile_release_string(s);
}

/* The profile's string v (NULL: unset) as a malloc'd copy into *out; v is
 * released either way. */
static krb5_error_code
own_string(char *v, char **out)
{
    *out = NULL;
    if (v == NULL)
        return 0;
    *out = strdup(v);
    release(v);
    return *out == NULL ? ENOMEM : 0;
}

/* Read [realms] realm name as a malloc'd string (NULL when unset). */
static krb5_error_code
realm_string(profile_t profile, const char *realm, const char *name,
             char **out)
{
    krb5_error_code ret;
    char *v = NULL;

    *out = NULL;
    ret = profile_get_string(profile, "realms", realm, name, NULL, &v);
    return ret ? ret : own_string(v, out);
}

/* Read a kldap relation as kldap does: [dbmodules] section first, then
 * [dbdefaults]. */
static krb5_error_code
kldap_string(profile_t profile, const char *section, const char *name,
             int use_defaults, char **out)
{
    krb5_error_code ret;
    char *v = NULL;

    *out = NULL;
    ret = profile_get_string(profile, "dbmodules", section, name, NULL, &v);
    if (ret == 0 && v == NULL && use_defaults)
        ret = profile_get_string(profile, "dbdefaults", name, NULL, NULL,
                                 &v);
    return ret ? ret : own_string(v, out);
}

/* Set *dst to src when *dst is unset (src is consumed either way). */
static void
take_default(char **dst, char *src)
{
    if (*dst == NULL)
        *dst = src;
    else
        free(src);
}

/* Parse a timeout in seconds with an optional decimal fraction ("0.5",
 * "2", "1.25") into milliseconds; digits past the millisecond are
 * ignored.  Zero, signs and garbage are refused. */
static krb5_error_code
parse_timeout(const char *s, int *ms_out)
{
    long ms = 0, scale = 100;
    const char *p = s;

    if (!isdigit((unsigned char)*p))
        return YK_ERR_CONFIG;
    for (; isdigit((unsigned char)*p); p++) {
        ms = ms * 10 + (*p - '0') * 1000;
        if (ms > YK_TIMEOUT_MAX_MS)
            return YK_ERR_CONFIG;
    }
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return YK_ERR_CONFIG;
        for (; isdigit((unsigned char)*p); p++) {
            ms += (*p - '0') * scale;
            scale /= 10;
        }
    }
    if (*p != '\0' || ms <= 0 || ms > YK_TIMEOUT_MAX_MS)
        return YK_ERR_CONFIG;
    *ms_out = (int)ms;
    return 0;
}

/* Read the whole password file at path (at most YK_PASSWORD_FILE_MAX
 * bytes; secfile.c); give it back with yk_secfile_free. */
static krb5_error_code
read_small_file(const char *path, char **buf_out, size_t *len_out)
{
    krb5_error_code ret;

    ret = yk_secfile_read(path, YK_PASSWORD_FILE_MAX, buf_out, len_out,
                          NULL);
    if (ret == EINVAL || ret == EFBIG || ret == EAGAIN)
        ret = YK_ERR_CONFIG;
    return ret;
}

/* The value of a hex digit (either case), or -1. */
static int
hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decode a stash secret "{HEX}<hex>" of n bytes into a string of
 * yk_secret_alloc (decoded in place: no other copy). */
static krb5_error_code
decode_stash_secret(const char *s, size_t n, char **out)
{
    size_t tag = strlen(YK_HEX_TAG), i;
    char *pw;
    int hi, lo;

    if (n < tag || memcmp(s, YK_HEX_TAG, tag) != 0)
        return YK_ERR_CONFIG;
    s += tag;
    n -= tag;
    if (n == 0 || n % 2 != 0)
        return YK_ERR_CONFIG;
    pw = yk_secret_alloc(n / 2);
    if (pw == NULL)
        return ENOMEM;
    for (i = 0; i < n; i += 2) {
        hi = hexval(s[i]);
        lo = hexval(s[i + 1]);
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
            yk_secret_free(pw);
            return YK_ERR_CONFIG;
        }
        pw[i / 2] = (char)(hi << 4 | lo);
    }
    *out = pw;
    return 0;
}

/* Find bind_dn's line in stash text; *found_out says whether the text has
 * any stash line at all.  *pw_out is set only when bind_dn's line is
 * there. */
static krb5_error_code
stash_lookup(const char *buf, size_t len, const char *bind_dn,
             int *stash_out, char **pw_out)
{
    const char *line = buf, *end = buf + len, *eol, *hash, *p;
    size_t n;

    *stash_out = 0;
    *pw_out = NULL;
    for (; line < end; line = eol + 1) {
        eol = memchr(line, '\n', (size_t)(end - line));
        if (eol == NULL)
            eol = end;
        n = (size_t)(eol - line);
        if (n > 0 && line[n - 1] == '\r')
            n--;
        for (p = line; p < line + n && (*p == ' ' || *p == '\t'); p++)
            ;
        if (p == line + n || *p == '#' || *p == '!')
            continue;
        hash = memchr(p, '#', (size_t)(line + n - p));
        if (hash == NULL || (size_t)(line + n - hash) <= strlen(YK_HEX_TAG))
            continue;
        if (memcmp(hash + 1, YK_HEX_TAG, strlen(YK_HEX_TAG)) != 0)
            continue;
        *stash_out = 1;
        if (bind_dn != NULL && (size_t)(hash - p) == strlen(bind_dn) &&
            strncasecmp(p, bind_dn, (size_t)(hash - p)) == 0)
            return decode_stash_secret(hash + 1,
                                       (size_t)(line + n - hash - 1),
                                       pw_out);
    }
    return 0;
}

/* Read the bind password from path: the bind DN's stash line, or else
 * the first line of a plain file. */
static krb5_error_code
read_password(const char *path, const char *bind_dn, char **pw_out)
{
    krb5_error_code ret;
    char *buf = NULL, *pw = NULL;
    size_t len = 0, n;
    int stash = 0;

    ret = read_small_file(path, &buf, &len);
    if (ret)
        return ret;
    ret = stash_lookup(buf, len, bind_dn, &stash, &pw);
    if (ret)
        goto cleanup;
    if (pw == NULL) {
        /* A stash without our DN: never send another DN's password. */
        if (stash) {
            ret = YK_ERR_CONFIG;
            goto cleanup;
        }
        n = strcspn(buf, "\r\n");
        if (n == 0 || memchr(buf, '\0', len) != NULL) {
            ret = YK_ERR_CONFIG;
            goto cleanup;
        }
        pw = yk_secret_strndup(buf, n);
        if (pw == NULL) {
            ret = ENOMEM;
            goto cleanup;
        }
    }
    *pw_out = pw;

cleanup:
    yk_secfile_free(buf, len);
    return ret;
}

/* The name of realm's database module when its db_library is kldap
 * (malloc'd into *module_out), else NULL. */
static krb5_error_code
kldap_module(profile_t profile, const char *realm, char **module_out)
{
    krb5_error_code ret;
    char *module = NULL, *lib = NULL;

    *module_out = NULL;
    ret = realm_string(profile, realm, "database_module", &module);
    if (ret == 0)
        ret = kldap_string(profile, module != NULL ? module : realm,
                           "db_library", 0, &lib);
    if (ret == 0 && lib != NULL && strcmp(lib, "kldap") == 0) {
        *module_out = module != NULL ? module : strdup(realm);
        module = NULL;
        if (*module_out == NULL)
            ret = ENOMEM;
    }
    free(module);
    free(lib);
    return ret;
}

krb5_error_code
yk_config_kldap_module(profile_t profile, const char *realm,
                       char **module_out)
{
    krb5_error_code ret;
    char *uri = NULL;

    *module_out = NULL;
    ret = realm_string(profile, realm, YK_CONF_LDAP_URI, &uri);
    if (ret == 0 && uri == NULL)
        ret = kldap_module(profile, realm, module_out);
    free(uri);
    return ret;
}

krb5_error_code
yk_config_kldap_string(profile_t profile, const char *module,
                       const char *name, int use_defaults, char **out)
{
    return kldap_string(profile, module, name, use_defaults, out);
}

/* profile get_values for an overlay: an override, else the base's. */
static long
overlay_get_values(void *cbdata, const char *const *names, char ***ret)
{
    yk_overlay *ov = cbdata;
    char **list;
    size_t i;

    if (names[0] != NULL && names[1] != NULL && names[2] != NULL &&
        names[3] == NULL && strcmp(names[0], "realms") == 0 &&
        strcmp(names[1], ov->realm) == 0) {
        for (i = 0; i < ov->n; i++) {
            if (strcmp(names[2], ov->names[i]) != 0)
                continue;
            if (ov->values[i] == NULL)
                return PROF_NO_RELATION;
            list = calloc(2, sizeof(*list));
            if (list == NULL)
                return ENOMEM;
            list[0] = strdup(ov->values[i]);
            if (list[0] == NULL) {
                free(list);
                return ENOMEM;
            }
            *ret = list;
            return 0;
        }
    }
    return profile_get_values(ov->base, names, ret);
}

/* profile free_values for an overlay: both kinds of list are malloc'd
 * strings in a malloc'd, NULL-terminated array. */
static void
overlay_free_values(void *cbdata, char **values)
{
    (void)cbdata;
    profile_free_list(values);
}

void
yk_overlay_init(yk_overlay *ov, profile_t base, const char *realm)
{
    memset(ov, 0, sizeof(*ov));
    ov->base = base;
    ov->realm = realm;
}

krb5_error_code
yk_overlay_set(yk_overlay *ov, const char *name, const char *value)
{
    if (ov->n >= YK_OVERLAY_MAX)
        return ENOMEM;
    ov->names[ov->n] = name;
    ov->values[ov->n] = value;
    ov->n++;
    return 0;
}

krb5_error_code
yk_overlay_profile(yk_overlay *ov, profile_t *profile_out)
{
    static struct profile_vtable vt = {
        .minor_ver = 1,
        .get_values = overlay_get_values,
        .free_values = overlay_free_values
    };

    return (krb5_error_code)profile_init_vtable(&vt, ov, profile_out);
}

/* Fill in the LDAP settings from the realm's kldap database module when
 * yubikey_ldap_uri is unset; a no-op for other back ends. */
static krb5_error_code
kldap_defaults(profile_t profile, const char *realm, yk_store_config *sc,
               char **pwfile)
{
    krb5_error_code ret;
    char *module = NULL, *v = NULL, *container = NULL;
    char *dn = NULL;
    size_t n;

    ret = kldap_module(profile, realm, &module);
    if (ret || module == NULL)
        goto cleanup;

    /* kldap reads ldap_servers from its section only (default ldapi://);
     * its list may use commas, which ldap_initialize accepts too. */
    ret = kldap_string(profile, module, "ldap_servers", 0, &v);
    if (ret)
        goto cleanup;
    take_default(&sc->uri, v != NULL ? v : strdup("ldapi://"));
    v = NULL;
    sc->uri_from_kldap = 1;
    if (sc->uri == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    /* The bind identity is taken whole: a yubikey_ldap_bind_dn or
     * yubikey_ldap_sasl_mech that is set is never mixed with kldap's
     * (its SASL mechanism would override an explicit bind DN). */
    if (sc->bind_dn == NULL && sc->sasl_mech == NULL) {
        ret = kldap_string(profile, module, "ldap_kdc_dn", 1, &v);
        if (ret)
            goto cleanup;
        take_default(&sc->bind_dn, v);
        ret = kldap_string(profile, module, "ldap_kdc_sasl_mech", 1, &v);
        if (ret)
            goto cleanup;
        take_default(&sc->sasl_mech, v);
    }
    ret = kldap_string(profile, module, "ldap_service_password_file", 1,
                       &v);
    if (ret)
        goto cleanup;
    take_default(pwfile, v);
    v = NULL;

    ret = kldap_string(profile, module, "ldap_kerberos_container_dn", 1,
                       &container);
    if (ret || container == NULL || sc->base != NULL)
        goto cleanup;
    n = strlen("cn=") + strlen(realm) + 1 + strlen(container) + 1;
    dn = malloc(n);
    if (dn == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    snprintf(dn, n, "cn=%s,%s", realm, container);
    sc->kldap_realm_dn = dn;
    sc->base = container;
    container = NULL;

cleanup:
    free(module);
    free(container);
    return ret;
}

/* Read the realm's relations (see the top of this file) into *cfg_out,
 * which is written only on success. */
krb5_error_code
yk_config_load(profile_t profile, const char *realm, yk_config *cfg_out)
{
    krb5_error_code ret;
    yk_config cfg;
    yk_store_config *sc = &cfg.store;
    char *pwfile = NULL, *timeout = NULL;
    int ival;

    memset(&cfg, 0, sizeof(cfg));
    if (profile == NULL || realm == NULL)
        return EINVAL;

    ret = realm_string(profile, realm, YK_CONF_LDAP_URI, &sc->uri);
    if (ret == 0)
        ret = realm_string(profile, realm, YK_CONF_LDAP_WRITE_URI,
                           &sc->write_uri);
    if (ret == 0)
        ret = realm_string(profile, realm, YK_CONF_LDAP_WRITE_FAILOVER_URI,
                           &sc->write_failover_uri);
    if (ret == 0)
        ret = realm_string(profile, realm, YK_CONF_LDAP_BIND_DN,
                           &sc->bind_dn);
    if (ret == 0)
        ret = realm_string(profile, realm, YK_CONF_LDAP_PASSWORD_FILE,
                           &pwfile);
    if (ret == 0)
        ret = realm_string(profile, realm, YK_CONF_LDAP_SASL_MECH,
                           &sc->sasl_mech);
    if (ret == 0)
        ret = realm_string(profile, realm, YK_CONF_LDAP_BASE, &sc->base);
    if (ret == 0)
        ret = realm_string(profile, realm, YK_CONF_PRINCIPAL_FILTER,
                           &sc->filter);
    if (ret == 0)
        ret = realm_string(profile, realm, YK_CONF_MASTER_KEY_FILE,
                           &cfg.master_key_file);
    if (ret == 0)
        ret = realm_string(profile, realm, YK_CONF_LDAP_TIMEOUT,
                           &timeout);
    if (ret == 0)
        ret = realm_string(profile, realm, YK_CONF_LDAP_TLS_CACERT,
                           &sc->tls_cacert);
    if (ret == 0)
        ret = realm_string(profile, realm, YK_CONF_INDICATOR,
                           &cfg.indicator);
    if (ret == 0)
        ret = realm_string(profile, realm, YK_CONF_2FA_INDICATOR,
                           &cfg.indicator_2fa);
    if (ret)
        goto cleanup;

    if (sc->uri == NULL) {
        ret = kldap_defaults(profile, realm, sc, &pwfile);
        if (ret)
            goto cleanup;
    }
    if (sc->filter == NULL)
        sc->filter = strdup(YK_DEFAULT_FILTER);
    if (cfg.indicator == NULL)
        cfg.indicator = strdup(YK_DEFAULT_INDICATOR);
    if (cfg.indicator_2fa == NULL)
        cfg.indicator_2fa = strdup(YK_DEFAULT_2FA_INDICATOR);
    if (sc->filter == NULL || cfg.indicator == NULL ||
        cfg.indicator_2fa == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }

    sc->timeout_ms = YK_DEFAULT_TIMEOUT_MS;
    if (timeout != NULL) {
        ret = parse_timeout(timeout, &sc->timeout_ms);
        if (ret)
            goto cleanup;
    }
    ret = profile_get_integer(profile, "realms", realm, YK_CONF_CACHE_TTL,
                              YK_DEFAULT_CACHE_TTL, &ival);
    if (ret)
        goto cleanup;
    if (ival < 0) {
        ret = YK_ERR_CONFIG;
        goto cleanup;
    }
    cfg.cache_ttl = ival;
    ret = profile_get_integer(profile, "realms", realm,
                              YK_CONF_BREAKER_TIME,
                              YK_DEFAULT_BREAKER_SECONDS, &ival);
    if (ret)
        goto cleanup;
    if (ival < 0) {
        ret = YK_ERR_CONFIG;
        goto cleanup;
    }
    cfg.breaker_seconds = ival;
    sc->failover_hold_s = ival;
    ret = profile_get_boolean(profile, "realms", realm,
                              YK_CONF_REQUIRE_FAST, 0, &cfg.require_fast);
    if (ret)
        goto cleanup;
    ret = profile_get_boolean(profile, "realms", realm,
                              YK_CONF_LDAP_STARTTLS, 0, &sc->starttls);
    if (ret)
        goto cleanup;

    /* SASL binds (EXTERNAL, GSSAPI) take no password from a file. */
    if (pwfile != NULL && sc->sasl_mech == NULL) {
        ret = read_password(pwfile, sc->bind_dn, &sc->password);
        if (ret)
            goto cleanup;
    }
    *cfg_out = cfg;
    memset(&cfg, 0, sizeof(cfg));

cleanup:
    yk_config_clear(&cfg);
    free(pwfile);
    free(timeout);
    return ret;
}

/* Duplicate an optional string: NULL stays NULL. */
static int
dup_opt(const char *in, char **out)
{
    *out = NULL;
    if (in == NULL)
        return 0;
    *out = strdup(in);
    return *out == NULL ? ENOMEM : 0;
}

/* Deep copy of a store configuration into *out (written only on
 * success). */
krb5_error_code
yk_store_config_copy(const yk_store_config *in, yk_store_config *out)
{
    krb5_error_code ret;
    yk_store_config cp;

    memset(&cp, 0, sizeof(cp));
    if (in == NULL || out == NULL)
        return EINVAL;
    ret = dup_opt(in->uri, &cp.uri);
    if (ret == 0)
        ret = dup_opt(in->write_uri, &cp.write_uri);
    if (ret == 0)
        ret = dup_opt(in->write_failover_uri, &cp.write_failover_uri);
    if (ret == 0)
        ret = dup_opt(in->bind_dn, &cp.bind_dn);
    if (ret == 0 && in->password != NULL) {
        cp.password = yk_secret_strndup(in->password, strlen(in->password));
        ret = cp.password == NULL ? ENOMEM : 0;
    }
    if (ret == 0)
        ret = dup_opt(in->sasl_mech, &cp.sasl_mech);
    if (ret == 0)
        ret = dup_opt(in->base, &cp.base);
    if (ret == 0)
        ret = dup_opt(in->filter, &cp.filter);
    if (ret == 0)
        ret = dup_opt(in->kldap_realm_dn, &cp.kldap_realm_dn);
    if (ret == 0)
        ret = dup_opt(in->tls_cacert, &cp.tls_cacert);
    if (ret) {
        yk_store_config_clear(&cp);
        return ret;
    }
    cp.timeout_ms = in->timeout_ms;
    cp.uri_from_kldap = in->uri_from_kldap;
    cp.starttls = in->starttls;
    cp.failover_hold_s = in->failover_hold_s;
    *out = cp;
    return 0;
}

/* Free a store configuration's strings (the password wiped first) and
 * zero the struct; NULL is accepted. */
void
yk_store_config_clear(yk_store_config *sc)
{
    if (sc == NULL)
        return;
    free(sc->uri);
    free(sc->write_uri);
    free(sc->write_failover_uri);
    free(sc->bind_dn);
    yk_secret_free(sc->password);
    free(sc->sasl_mech);
    free(sc->base);
    free(sc->filter);
    free(sc->kldap_realm_dn);
    free(sc->tls_cacert);
    memset(sc, 0, sizeof(*sc));
}

/* Free a whole configuration and zero it; NULL is accepted. */
void
yk_config_clear(yk_config *cfg)
{
    if (cfg == NULL)
        return;
    yk_store_config_clear(&cfg->store);
    free(cfg->master_key_file);
    free(cfg->indicator);
    free(cfg->indicator_2fa);
    memset(cfg, 0, sizeof(*cfg));
}

/* How many URIs list holds (separated by spaces or commas, as
 * ldap_initialize reads it); the first one's length into *first_len. */
static size_t
count_uris(const char *list, size_t *first_len)
{
    const char *p = list;
    size_t n = 0, len;

    *first_len = 0;
    while (*p != '\0') {
        p += strspn(p, " \t,");
        len = strcspn(p, " \t,");
        if (len == 0)
            break;
        if (n == 0)
            *first_len = len;
        n++;
        p += len;
    }
    return n;
}

/* The write failover's part of yk_config_check_write_target. */
static krb5_error_code
check_write_failover(const yk_store_config *sc, char *why, size_t len)
{
    const char *fo = sc->write_failover_uri, *target;
    size_t n, first_len, tlen;

    if (len > 0)
        why[0] = '\0';
    if (fo == NULL)
        return 0;
    n = count_uris(fo, &first_len);
    if (n > 1) {
        snprintf(why, len, "yubikey_ldap_write_failover_uri names %lu LDAP "
                 "servers (%s), but it must name exactly one: the provider "
                 "that takes the swaps while the write server is "
                 "unreachable, e.g. yubikey_ldap_write_failover_uri = %.*s",
                 (unsigned long)n, fo, (int)first_len,
                 fo + strspn(fo, " \t,"));
        return YK_ERR_CONFIG;
    }
    target = yk_config_write_target(sc);
    if (n == 0 || target == NULL) {
        snprintf(why, len, "yubikey_ldap_write_failover_uri is set (\"%s\") "
                 "but %s", fo, n == 0 ? "names no server" :
                 "there is no write server to fail over from");
        return YK_ERR_CONFIG;
    }
    tlen = strcspn(target + strspn(target, " \t,"), " \t,");
    if (tlen == first_len &&
        strncmp(target + strspn(target, " \t,"), fo + strspn(fo, " \t,"),
                tlen) == 0) {
        snprintf(why, len, "yubikey_ldap_write_failover_uri names the write "
                 "server itself (%.*s): name the second provider",
                 (int)first_len, fo + strspn(fo, " \t,"));
        return YK_ERR_CONFIG;
    }
    return 0;
}

const char *
yk_config_write_target(const yk_store_config *sc)
{
    return sc->write_uri != NULL ? sc->write_uri : sc->uri;
}

krb5_error_code
yk_config_check_write_target(const yk_store_config *sc, char *why,
                             size_t len)
{
    const char *target = yk_config_write_target(sc), *from;
    size_t n, first_len;

    if (len > 0)
        why[0] = '\0';
    if (target == NULL)
        return check_write_failover(sc, why, len);
    n = count_uris(target, &first_len);
    if (n <= 1)
        return check_write_failover(sc, why, len);
    if (sc->write_uri != NULL)
        from = YK_CONF_LDAP_WRITE_URI;
    else if (sc->uri_from_kldap)
        from = "yubikey_ldap_write_uri is unset, so writes would go to "
            "kldap's ldap_servers, which";
    else
        from = "yubikey_ldap_write_uri is unset, so writes would go to "
            "yubikey_ldap_uri, which";
    snprintf(why, len, "%s names %lu LDAP servers (%s), but every OTP's "
             "counter must be swapped on exactly one server, the same for "
             "every KDC (else two KDCs can each accept one OTP): set "
             "yubikey_ldap_write_uri to that one provider, e.g. "
             "yubikey_ldap_write_uri = %.*s", from, (unsigned long)n, target,
             (int)first_len, target + strspn(target, " \t,"));
    return YK_ERR_CONFIG;
}

/* Whether host is this machine; see ykconf.h. */
int
yk_config_host_is_loopback(const char *host)
{
    struct in_addr a4;
    struct in6_addr a6;
    size_t n = strlen(host);

    if (n == 0 || strcasecmp(host, "localhost") == 0 ||
        strcasecmp(host, "localhost.") == 0)
        return 1;
    if (inet_pton(AF_INET, host, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, host, &a6) == 1) {
        if (IN6_IS_ADDR_LOOPBACK(&a6))
            return 1;
        return IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127;
    }
    return 0;
}

#define YK_URI_HOST_MAX 256

/* The host of one URI (p, len bytes, "scheme://host[:port][/...]") into
 * host (YK_URI_HOST_MAX bytes; IPv6 brackets removed, %-escapes left as
 * they are).  0 when it does not fit or the URI has no "://". */
static int
uri_host(const char *p, size_t len, char *host)
{
    const char *h, *end = p + len, *e;

    h = strstr(p, "://");
    if (h == NULL || h >= end)
        return 0;
    h += 3;
    if (h < end && *h == '[') {
        h++;
        e = memchr(h, ']', (size_t)(end - h));
        if (e == NULL)
            return 0;
    } else {
        for (e = h; e < end && *e != ':' && *e != '/' && *e != '?'; e++)
            ;
    }
    if ((size_t)(e - h) >= YK_URI_HOST_MAX)
        return 0;
    memcpy(host, h, (size_t)(e - h));
    host[e - h] = '\0';
    return 1;
}

/* Append to why the hosts of list's plain ldap:// URIs that are not
 * loopback, as "host, host" (a host already named is not repeated); how
 * many were added to *n_io. */
static void
cleartext_hosts(const char *list, char *why, size_t len, int *n_io)
{
    const char *p = list;
    char host[YK_URI_HOST_MAX];
    size_t n, used;

    while (list != NULL && *p != '\0') {
        p += strspn(p, " \t,");
        n = strcspn(p, " \t,");
        if (n == 0)
            break;
        if (n > strlen("ldap://") && strncasecmp(p, "ldap://", 7) == 0 &&
            uri_host(p, n, host) && !yk_config_host_is_loopback(host) &&
            strstr(why, host) == NULL) {
            used = strlen(why);
            if (used < len)
                snprintf(why + used, len - used, "%s%s",
                         *n_io > 0 ? ", " : "", host);
            (*n_io)++;
        }
        p += n;
    }
}

/* Whether a read or write URI sends in clear over the network; see
 * ykconf.h. */
int
yk_config_check_cleartext(const yk_store_config *sc, char *why, size_t len)
{
    char hosts[YK_URI_HOST_MAX * 2] = "";
    int n = 0;

    if (len > 0)
        why[0] = '\0';
    if (sc->starttls)
        return 0;
    cleartext_hosts(sc->uri, hosts, sizeof(hosts), &n);
    cleartext_hosts(sc->write_uri, hosts, sizeof(hosts), &n);
    cleartext_hosts(sc->write_failover_uri, hosts, sizeof(hosts), &n);
    if (n == 0)
        return 0;
    snprintf(why, len, "ldap:// to %s without TLS: token records (the "
             "wrapped secrets and counters) and the bind password cross "
             "the network in clear; use ldaps:// or "
             "yubikey_ldap_starttls = true (with yubikey_ldap_tls_cacert), "
             "or ldapi:// to a local server", hosts);
    return 1;
}
