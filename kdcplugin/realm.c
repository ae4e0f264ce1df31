/* SPDX-License-Identifier: MIT */
/* realm.c: a realm's state: settings, keyring, directory, breaker. */

/*
 * One yk_realm per Kerberos realm the KDC serves, made at init from
 * kdc.conf (a misconfigured realm is kept, marked, and discards its OTP
 * logins, so that one realm's mistake stops no other).  It holds the
 * store (shared/store*.c), the master keyring (loaded at the first
 * attempt, looked at again at most every YK_KEYRING_CHECK_MS and
 * reloaded whole when the file changed; a file that does not load
 * leaves the old keyring in use), the record cache, and the circuit
 * breaker that stops asking a directory that failed for
 * yubikey_breaker_time seconds.  The verdicts are verify.c's.
 */

#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <com_err.h>

#include "errors.h"
#include "padata.h"
#include "postread.h"
#include "rfc6560.h"
#include "secmem.h"
#include "realm.h"
#include "verify.h"

#define YK_TEST_DELAY_MAX_MS 60000  /* the test hook sleeps at most this */

/* Log one line to the KDC's log (krb5kdc routes com_err there, dropping
 * the whoami argument: hence the prefix in the text). */
void
yk_kdc_log(const char *fmt, ...)
{
    char buf[YK_LOG_LINE_LEN];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    com_err("yubikey", 0, "yubikey: %s", buf);
}

/* ---- realm state ------------------------------------------------------ */

/* Whether a and b describe the same version of a file: same inode, size,
 * modification and status-change times (a copy, a rename over it, an
 * edit in place and a chmod all change one of them). */
static int
same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
        a->st_size == b->st_size &&
        a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
        a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
        a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
        a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* A loaded keyring's file changed and did not load (ret; st is the file's
 * stat, st_ino 0 when it could not be taken): keep the old ring, and say
 * so loudly, once per failure and file version. */
static void
keyring_reload_failed(yk_realm *r, krb5_error_code ret, const struct stat *st)
{
    if (ret == r->reload_err && (st->st_ino == 0 ||
                                 same_file(st, &r->reload_st)))
        return;
    r->reload_err = ret;
    r->reload_st = *st;
    yk_kdc_log("KEYRING NOT RELOADED: realm %s: the master keyring %s "
               "changed but cannot be loaded: %s; still using the keyring "
               "loaded before (%lu keys, newest version %lu): fix the file "
               "(mode 0600, owned by the KDC's user), it is tried again "
               "every %d s", r->name, r->cfg.master_key_file,
               yk_strerror(ret), (unsigned long)yk_keyring_count(r->keyring),
               (unsigned long)yk_keyring_newest(r->keyring),
               YK_KEYRING_CHECK_MS / 1000);
}

/* Load r's keyring file now, whole: the first load, a retry while it is
 * unreadable, or a reload when the file changed since it was loaded (an
 * unchanged file is not read again).  A new ring replaces the old one
 * only once it loaded; failures are remembered and logged when they
 * change. */
static void
keyring_load(yk_realm *r)
{
    krb5_error_code ret;
    yk_keyring *kr = NULL;
    struct stat st;
    int reload = r->keyring != NULL;

    memset(&st, 0, sizeof(st));
    if (r->cfg.master_key_file == NULL) {
        ret = YK_ERR_CONFIG;
    } else if (stat(r->cfg.master_key_file, &st) != 0) {
        ret = errno;
        memset(&st, 0, sizeof(st));
    } else if (reload && same_file(&st, &r->keyring_st)) {
        return;
    } else {
        /* Stat first, load second: a change made in between is seen as
         * a change at the next look. */
        ret = yk_keyring_load(r->cfg.master_key_file, &kr);
    }
    if (ret == 0) {
        if (reload || r->keyring_err != 0) {
            yk_kdc_log("realm %s: master keyring %s %s (%lu keys, newest "
                       "version %lu)", r->name, r->cfg.master_key_file,
                       reload ? "changed: reloaded" : "loaded",
                       (unsigned long)yk_keyring_count(kr),
                       (unsigned long)yk_keyring_newest(kr));
        }
        yk_keyring_free(r->keyring);
        r->keyring = kr;
        r->keyring_st = st;
        r->keyring_err = 0;
        r->reload_err = 0;
        return;
    }
    if (reload) {
        keyring_reload_failed(r, ret, &st);
        return;
    }
    if (ret != r->keyring_err) {
        yk_kdc_log("realm %s: cannot load the master keyring %s: %s; "
                   "OTP logins are answered as during a directory outage "
                   "until it loads (retried every %d s)", r->name,
                   r->cfg.master_key_file != NULL ?
                   r->cfg.master_key_file :
                   "(yubikey_master_key_file is not set)",
                   yk_strerror(ret), YK_KEYRING_CHECK_MS / 1000);
    }
    r->keyring_err = ret;
}

/* See realm.h. */
int
yk_keyring_ready(yk_realm *r, int64_t now_ms)
{
    if (now_ms >= r->keyring_check_ms) {
        r->keyring_check_ms = now_ms + YK_KEYRING_CHECK_MS;
        keyring_load(r);
    }
    return r->keyring != NULL;
}

/* Mark r misconfigured (why: a printf text for the log lines): it never
 * becomes active, and its OTP logins are discarded with that reason. */
static void
realm_misconfigured(yk_realm *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
realm_misconfigured(yk_realm *r, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(r->config_error, sizeof(r->config_error), fmt, ap);
    va_end(ap);
    r->misconfigured = 1;
    r->active = 0;
}

/* Say once, at start, what the module does in r: the line an
 * administrator looks for to see that the module loaded and with which
 * settings (no secret: the bind password is never named). */
static void
realm_announce(const yk_realm *r)
{
    const yk_store_config *sc = &r->cfg.store;
    char keyring[YK_DETAIL_LEN], bind[YK_DETAIL_LEN];
    char why[YK_CONFIG_ERROR_LEN];
    char failover[YK_DETAIL_LEN + 160];

    if (r->misconfigured) {
        yk_kdc_log("CONFIGURATION ERROR: realm %s: %s; YubiKey logins in "
                   "this realm are discarded (never accepted, never "
                   "counted) until the KDC is restarted with a fixed "
                   "kdc.conf (krb5-yubikey %s)", r->name, r->config_error,
                   PACKAGE_VERSION);
        return;
    }
    if (!r->active) {
        yk_kdc_log("krb5-yubikey %s, realm %s: no token directory (neither "
                   "yubikey_ldap_uri nor a kldap database is configured): "
                   "the module does nothing in this realm", PACKAGE_VERSION,
                   r->name);
        return;
    }
    if (r->keyring != NULL) {
        snprintf(keyring, sizeof(keyring), "%lu keys, newest version %lu",
                 (unsigned long)yk_keyring_count(r->keyring),
                 (unsigned long)yk_keyring_newest(r->keyring));
    } else {
        snprintf(keyring, sizeof(keyring), "NOT LOADED: %s",
                 yk_strerror(r->keyring_err));
    }
    if (sc->sasl_mech != NULL)
        snprintf(bind, sizeof(bind), "SASL %s", sc->sasl_mech);
    else if (sc->bind_dn != NULL)
        snprintf(bind, sizeof(bind), "DN %s", sc->bind_dn);
    else
        snprintf(bind, sizeof(bind), "anonymous");
    if (sc->write_failover_uri != NULL)
        snprintf(failover, sizeof(failover), "; write failover %s (while "
                 "the write provider is unreachable, %d s at a time: an OTP "
                 "not yet replicated there can be accepted once more)",
                 sc->write_failover_uri, r->cfg.breaker_seconds);
    else
        failover[0] = '\0';
    yk_kdc_log("krb5-yubikey %s, realm %s: token directory %s, writes to "
               "%s, principals under %s%s, bind as %s%s%s%s; master keyring "
               "%s (%s); cache TTL %d s, LDAP timeout %d ms, circuit "
               "breaker %d s%s%s", PACKAGE_VERSION, r->name, sc->uri,
               yk_config_write_target(sc),
               sc->kldap_realm_dn != NULL ? sc->kldap_realm_dn : sc->base,
               sc->kldap_realm_dn != NULL ? " (kldap realm container and "
               "its subtrees)" : "", bind, sc->starttls ? ", StartTLS" : "",
               sc->tls_cacert != NULL ? ", TLS CA " : "",
               sc->tls_cacert != NULL ? sc->tls_cacert : "",
               r->cfg.master_key_file != NULL ?
               r->cfg.master_key_file : "(yubikey_master_key_file unset)",
               keyring, r->cfg.cache_ttl, sc->timeout_ms > 0 ?
               sc->timeout_ms : YK_DEFAULT_TIMEOUT_MS,
               r->cfg.breaker_seconds, r->cfg.require_fast ?
               ", FAST required" : "", failover);
    /* Loud: the records and the bind password would cross the network
     * in clear. */
    if (yk_config_check_cleartext(sc, why, sizeof(why)))
        yk_kdc_log("WARNING: realm %s: %s", r->name, why);
}

/* Ask r's write server, once at start, whether it is replicated, and say
 * so loudly when it is (store_probe.c).  Bounded by the LDAP timeout; the
 * connection is closed again before the KDC forks its workers. */
static void
realm_probe(yk_realm *r)
{
    krb5_error_code ret;
    char report[YK_CONFIG_ERROR_LEN];

    yk_store_set_budget(r->store, r->cfg.store.timeout_ms > 0 ?
                        r->cfg.store.timeout_ms : YK_DEFAULT_TIMEOUT_MS);
    ret = yk_store_probe_replication(r->store, report, sizeof(report));
    if (ret == YK_ERR_STORE_TLS)
        yk_kdc_log("CONFIGURATION ERROR: realm %s: %s; OTP logins are "
                   "discarded until TLS with the directory works",
                   r->name, yk_store_last_error(r->store));
    else if (ret != 0)
        yk_kdc_log("realm %s: could not ask the write server at start "
                   "whether it is replicated: %s (logins will connect "
                   "again)", r->name, yk_store_last_error(r->store));
    else if (report[0] != '\0')
        yk_kdc_log("WARNING: realm %s: %s", r->name, report);
    yk_store_set_budget(r->store, 0);
    yk_store_disconnect(r->store);
}

/* Whether mech is a SASL mechanism that needs a Kerberos ticket: the KDC
 * would have to get one from itself. */
static int
sasl_needs_ticket(const char *mech)
{
    return mech != NULL && (strcasecmp(mech, "GSSAPI") == 0 ||
                            strcasecmp(mech, "GSS-SPNEGO") == 0);
}

/* Map r's table of token states shared by the workers (shtab.h).  Without
 * it each worker swaps from its own cache only: logged, not fatal. */
static void
shared_new(yk_realm *r)
{
    krb5_error_code ret;

#ifdef YK_TEST_HOOKS
    /* Test hook: YK_TEST_SHARED=0 runs without it, for comparison. */
    const char *s = getenv("YK_TEST_SHARED");

    if (s != NULL && strcmp(s, "0") == 0)
        return;
#endif
    ret = yk_shtab_new(&r->shared);
    if (ret) {
        yk_kdc_log("realm %s: no table of token states shared by the KDC's "
                   "workers (%s): each swaps from its own cache", r->name,
                   yk_strerror(ret));
    }
}

/* Make realm's state; see verify.h. */
krb5_error_code
yk_realm_new(profile_t profile, const char *realm, yk_realm **realm_out)
{
    krb5_error_code ret;
    yk_realm *r = NULL;

    r = calloc(1, sizeof(*r));
    if (r == NULL)
        return ENOMEM;
    r->name = strdup(realm);
    if (r->name == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    ret = yk_cache_new(0, &r->cache);
    if (ret)
        goto cleanup;
    ret = yk_config_load(profile, realm, &r->cfg);
    if (ret == ENOMEM)
        goto cleanup;
    if (ret) {
        /* One realm's mistake must not take the module from the others. */
        realm_misconfigured(r, "bad yubikey configuration: %s",
                            yk_strerror(ret));
        ret = 0;
        goto cleanup;
    }

    if (r->cfg.store.uri == NULL && r->cfg.store.base == NULL)
        goto cleanup;   /* not configured: stay out of this realm's way */
    if (r->cfg.store.uri == NULL || r->cfg.store.base == NULL) {
        realm_misconfigured(r, "yubikey_ldap_uri and yubikey_ldap_base "
                            "must both be set");
        goto cleanup;
    }
    if (yk_config_check_write_target(&r->cfg.store, r->config_error,
                                     sizeof(r->config_error)) != 0) {
        r->misconfigured = 1;
        goto cleanup;
    }
    if (sasl_needs_ticket(r->cfg.store.sasl_mech)) {
        realm_misconfigured(r, "yubikey_ldap_sasl_mech = %s cannot work in "
                            "the KDC (it needs a ticket from the KDC "
                            "itself): use EXTERNAL over ldapi://",
                            r->cfg.store.sasl_mech);
        goto cleanup;
    }

    /* The store only remembers its settings: connections open lazily,
     * in each worker after the KDC forks. */
    ret = yk_store_new(&r->cfg.store, &r->store);
    if (ret == ENOMEM)
        goto cleanup;
    if (ret) {
        realm_misconfigured(r, "cannot set up the token directory: %s",
                            yk_strerror(ret));
        ret = 0;
        goto cleanup;
    }
    /* The store holds its own copy of the bind password. */
    yk_secret_free(r->cfg.store.password);
    r->cfg.store.password = NULL;
    /* Made before the fork, so that every worker maps the same table. */
    shared_new(r);
    r->active = 1;
    r->keyring_check_ms = yk_mono_ms() + YK_KEYRING_CHECK_MS;
    keyring_load(r);

cleanup:
    if (ret == 0) {
        realm_announce(r);
        if (r->active)
            realm_probe(r);
        *realm_out = r;
        r = NULL;
    }
    yk_realm_free(r);
    return ret;
}

/* Free everything r owns. */
void
yk_realm_free(yk_realm *r)
{
    if (r == NULL)
        return;
    yk_keyring_free(r->keyring);
    yk_store_free(r->store);
    yk_shtab_free(r->shared);
    yk_cache_free(r->cache);
    yk_config_clear(&r->cfg);
    free(r->name);
    free(r);
}

/* ---- directory access, breaker ------------------------------------- */

/* See realm.h. */
int
yk_breaker_open(const yk_realm *r, int64_t now_ms)
{
    return now_ms < r->breaker_until_ms;
}

/* Open r's circuit breaker for yubikey_breaker_time seconds.  Logged
 * once per opening (nothing asks the directory while it is open): as a
 * configuration error when config is set. */
static void
breaker_trip(yk_realm *r, krb5_error_code why, int config)
{
    int seconds = r->cfg.breaker_seconds;

    if (why == YK_ERR_STORE_TLS) {
        yk_kdc_log("CONFIGURATION ERROR: realm %s: %s; circuit breaker "
                   "open for %d s, OTP logins are discarded meanwhile",
                   r->name, yk_store_last_error(r->store), seconds);
    } else if (config) {
        yk_kdc_log("CONFIGURATION ERROR: realm %s: the token directory "
                   "refused the KDC's bind (%s): check "
                   "yubikey_ldap_bind_dn, the password file or the SASL "
                   "identity; circuit breaker open for %d s, OTP logins "
                   "are discarded meanwhile", r->name,
                   yk_store_last_error(r->store), seconds);
    } else if (seconds > 0) {
        yk_kdc_log("realm %s: token directory failed (%s: %s): circuit "
                   "breaker open for %d s, OTP logins are discarded "
                   "meanwhile", r->name, yk_strerror(why),
                   yk_store_last_error(r->store), seconds);
    }
    if (seconds > 0)
        r->breaker_until_ms = yk_mono_ms() + (int64_t)seconds * 1000;
}

/* See realm.h. */
void
yk_store_failed(yk_realm *r, krb5_error_code ret, const char *op)
{
    if (ret == YK_ERR_STORE_TIMEOUT || ret == YK_ERR_STORE_UNAVAILABLE) {
        breaker_trip(r, ret, 0);
    } else if (ret == YK_ERR_STORE_TLS ||
               (ret == YK_ERR_STORE_ACCESS &&
                yk_store_bind_refused(r->store))) {
        /* Every request would be refused alike: stop asking a while. */
        breaker_trip(r, ret, 1);
    } else if (ret == YK_ERR_STORE_ACCESS) {
        yk_kdc_log("CONFIGURATION ERROR: realm %s: the token directory "
                   "refused the %s: %s; the KDC's DN needs the access the "
                   "shipped ACLs give it", r->name, op, yk_strerror(ret));
    } else if (ret == YK_ERR_STORE_READONLY) {
        yk_kdc_log("CONFIGURATION ERROR: realm %s: the token directory "
                   "refused the %s: %s; yubikey_ldap_write_uri must name "
                   "the writable master", r->name, op, yk_strerror(ret));
    }
}

/* Say loudly when the store moved the writes to the write failover, or
 * back (store_conn.c): once per switch, after the operation.  A failover
 * that took the write is no store failure: the breaker stays closed. */
static void
failover_report(yk_realm *r)
{
    const yk_store_config *sc = &r->cfg.store;
    char why[YK_DETAIL_LEN];

    switch (yk_store_failover_event(r->store, why, sizeof(why))) {
    case YK_FAILOVER_ON:
        yk_kdc_log("WRITE FAILOVER: realm %s: write provider %s "
                   "unreachable (%s): swapping on %s for %d s; an OTP "
                   "accepted on %s and not yet replicated to %s can be "
                   "accepted once more", r->name, yk_config_write_target(sc),
                   why, sc->write_failover_uri, sc->failover_hold_s,
                   yk_config_write_target(sc), sc->write_failover_uri);
        break;
    case YK_FAILOVER_OFF:
        yk_kdc_log("WRITE FAILOVER ended: realm %s: write provider %s "
                   "reachable again, swapping on it (no longer on %s)",
                   r->name, yk_config_write_target(sc),
                   sc->write_failover_uri);
        break;
    default:
        break;
    }
}

/* See realm.h. */
void
yk_budget_set(yk_realm *r, int on)
{
    int ms = r->cfg.store.timeout_ms > 0 ? r->cfg.store.timeout_ms :
        YK_DEFAULT_TIMEOUT_MS;

    yk_store_set_budget(r->store, on ? YK_BUDGET_FACTOR * ms : 0);
    if (!on)
        failover_report(r);
}

/* See realm.h. */
const char *
yk_store_why(const yk_realm *r, krb5_error_code ret)
{
    if (ret == YK_ERR_STORE_ACCESS && yk_store_bind_refused(r->store))
        return "the directory refused the KDC's bind";
    return yk_strerror(ret);
}

/* See realm.h. */
krb5_error_code
yk_read_entry(yk_realm *r, const char *principal, int fresh,
           yk_entry **entry_out, krb5_error_code *code_out)
{
    krb5_error_code ret;
    yk_entry *entry = NULL;

    ret = yk_store_lookup(r->store, principal, fresh, &entry);
    if (ret == 0 || ret == YK_ERR_STORE_NOT_FOUND ||
        ret == YK_ERR_STORE_AMBIGUOUS) {
        if (ret == YK_ERR_STORE_AMBIGUOUS) {
            yk_kdc_log("CONFIGURATION ERROR: realm %s: more than one "
                       "directory entry matches %s", r->name, principal);
        }
        *entry_out = entry;
        *code_out = ret;
        return 0;
    }
    yk_store_failed(r, ret, "read");
    return ret;
}
