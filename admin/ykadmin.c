/* SPDX-License-Identifier: MIT */
/* ykadmin.c: ykadmin's entry point: global options, dispatch, config, logs. */

/*
 * ykadmin [GLOBAL OPTIONS] COMMAND [ARGS]
 *
 * The global options select the realm and override kdc.conf relations; the
 * command files (admin_master.c, admin_enroll.c, admin_import.c,
 * admin_tokens.c, admin_purge.c) parse their own options
 * and call back into the helpers below, which load the configuration, the
 * master keyring and the LDAP store on demand, so that "--help" or a usage
 * error never needs a configuration.  Exit status: 0 success, 1 failure,
 * 2 usage error.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "admin.h"
#include "errors.h"

#define DEFAULT_KDC_PROFILE "/etc/krb5kdc/kdc.conf"
#define DEFAULT_KRB5_CONFIG "/etc/krb5.conf"
#define DEFAULT_DATABASE_NAME "/var/lib/krb5kdc/principal"
#define SUDO_USER_MAX 64             /* characters of SUDO_USER we log */
#define LOG_LINE_MAX 1024            /* one syslog line */

/* Every command, in the order "ykadmin --help" lists them. */
static const yk_admin_cmd *const commands[] = {
    &yk_admin_cmd_init_master_key,
    &yk_admin_cmd_rewrap,
    &yk_admin_cmd_enroll,
    &yk_admin_cmd_import,
    &yk_admin_cmd_list,
    &yk_admin_cmd_disable,
    &yk_admin_cmd_enable,
    &yk_admin_cmd_delete,
    &yk_admin_cmd_policy,
    &yk_admin_cmd_verify,
    &yk_admin_cmd_raise_counters,
    &yk_admin_cmd_purge,
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char global_help[] =
    "Global options (before COMMAND):\n"
    "  -c, --config FILE         kdc.conf to read (default: "
    "$KRB5_KDC_PROFILE,\n"
    "                            else " DEFAULT_KDC_PROFILE ")\n"
    "  -r, --realm REALM         realm (default: the default realm of "
    "krb5.conf)\n"
    "      --uri URI             LDAP server(s) (yubikey_ldap_uri); also "
    "for\n"
    "                            writes unless --write-uri is given\n"
    "      --write-uri URI       LDAP server for writes "
    "(yubikey_ldap_write_uri)\n"
    "      --bind-dn DN          DN to bind as (yubikey_ldap_bind_dn)\n"
    "      --password-file FILE  bind password "
    "(yubikey_ldap_password_file)\n"
    "      --base DN             search base (yubikey_ldap_base)\n"
    "      --keyring FILE        master keyring "
    "(yubikey_master_key_file)\n"
    "  -h, --help                show this help\n"
    "  -V, --version             show the version\n";

enum {
    OPT_URI = 256, OPT_WRITE_URI, OPT_BIND_DN, OPT_PASSWORD_FILE, OPT_BASE,
    OPT_KEYRING
};

static const struct option global_options[] = {
    { "config", required_argument, NULL, 'c' },
    { "realm", required_argument, NULL, 'r' },
    { "uri", required_argument, NULL, OPT_URI },
    { "write-uri", required_argument, NULL, OPT_WRITE_URI },
    { "bind-dn", required_argument, NULL, OPT_BIND_DN },
    { "password-file", required_argument, NULL, OPT_PASSWORD_FILE },
    { "base", required_argument, NULL, OPT_BASE },
    { "keyring", required_argument, NULL, OPT_KEYRING },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { NULL, 0, NULL, 0 }
};

/* Print the program's usage (commands and global options) to out. */
static void
print_usage(FILE *out)
{
    size_t i;

    fprintf(out, "Usage: ykadmin [GLOBAL OPTIONS] COMMAND [ARGS]\n"
            "Manage the YubiKey OTP tokens of Kerberos principals "
            "(krb5-yubikey).\n\nCommands:\n");
    for (i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-17s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(out, "\n%s\n", global_help);
    fprintf(out, "\"ykadmin COMMAND --help\" describes a command.\n"
            "Exit status: 0 success, 1 failure, 2 usage error.\n");
}

/* Print "ykadmin: MESSAGE" on standard error; returns the failure status. */
int
yk_admin_fail(const char *fmt, ...)
{
    char line[LOG_LINE_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    /* Values from the command line or the directory end up in here: one
     * line, whatever they hold. */
    yk_admin_printable(line, line, sizeof(line));
    fflush(stdout);
    fprintf(stderr, "ykadmin: %s\n", line);
    return YK_ADMIN_EXIT_FAIL;
}

/* Print a usage error about cmd; returns the usage status. */
int
yk_admin_usage(const yk_admin_cmd *cmd, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "ykadmin %s: ", cmd->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nUsage: ykadmin [GLOBAL OPTIONS] %s %s\n"
            "Try \"ykadmin %s --help\".\n", cmd->name, cmd->synopsis,
            cmd->name);
    return YK_ADMIN_EXIT_USAGE;
}

/* Print cmd's help on standard output. */
int
yk_admin_help(const yk_admin_cmd *cmd)
{
    printf("Usage: ykadmin [GLOBAL OPTIONS] %s %s\n%s.\n\n%s",
           cmd->name, cmd->synopsis, cmd->summary, cmd->help);
    printf("\nGlobal options: see \"ykadmin --help\".\n"
           "Exit status: 0 success, 1 failure, 2 usage error.\n");
    return YK_ADMIN_EXIT_OK;
}

/* Copy s for display, replacing control and non-ASCII bytes by '?' and
 * truncating to outsize - 1 bytes; s may be out itself. */
void
yk_admin_printable(const char *s, char *out, size_t outsize)
{
    size_t i;

    if (outsize == 0)
        return;
    for (i = 0; s != NULL && s[i] != '\0' && i + 1 < outsize; i++) {
        unsigned char c = (unsigned char)s[i];

        out[i] = (c < 0x20 || c >= 0x7f) ? '?' : (char)c;
    }
    out[i] = '\0';
}

/* Format t (Unix time) as ISO 8601 UTC, or "never" for 0. */
void
yk_admin_isotime(int64_t t, char *out, size_t outsize)
{
    struct tm tm;
    time_t tt = (time_t)t;

    if (t == 0 || gmtime_r(&tt, &tm) == NULL ||
        strftime(out, outsize, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(out, outsize, "%s", t == 0 ? "never" : "?");
}

/* Log one change: syslog (and, through LOG_PERROR, standard error), with
 * the operator appended. */
void
yk_admin_log(yk_admin *adm, const char *fmt, ...)
{
    char line[LOG_LINE_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    yk_admin_printable(line, line, sizeof(line));
    fflush(stdout);
    syslog(LOG_NOTICE, "%s operator=%s", line, adm->operator_id);
}

/* A message for code: krb5's own (with its context detail) for krb5 and
 * com_err codes, ours and errno's from yk_strerror. */
const char *
yk_admin_strerror(yk_admin *adm, krb5_error_code code)
{
    static char buf[256];
    const char *msg;

    if ((code > YK_ERR_BASE && code < YK_ERR_LAST) || code < 256 ||
        adm == NULL || adm->kctx == NULL)
        return yk_strerror(code);
    msg = krb5_get_error_message(adm->kctx, code);
    snprintf(buf, sizeof(buf), "%s", msg != NULL ? msg : yk_strerror(code));
    krb5_free_error_message(adm->kctx, msg);
    return buf;
}

/* Who runs us: the login name of the real uid, and SUDO_USER when set
 * (shown as given, restricted to a safe character set). */
static void
operator_identity(char *out, size_t outsize)
{
    char login[64], sudo[SUDO_USER_MAX + 1];
    struct passwd *pw;
    const char *su;
    size_t i, n = 0;

    pw = getpwuid(getuid());
    if (pw != NULL && pw->pw_name != NULL)
        yk_admin_printable(pw->pw_name, login, sizeof(login));
    else
        snprintf(login, sizeof(login), "uid%lu", (unsigned long)getuid());

    su = getenv("SUDO_USER");
    for (i = 0; su != NULL && su[i] != '\0' && n < SUDO_USER_MAX; i++) {
        unsigned char c = (unsigned char)su[i];

        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
            (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' ||
            c == '@')
            sudo[n++] = (char)c;
        else
            sudo[n++] = '?';
    }
    sudo[n] = '\0';
    if (n > 0)
        snprintf(out, outsize, "%s(sudo:%s)", login, sudo);
    else
        snprintf(out, outsize, "%s", login);
}

/* A command-line override, when given (ykconf.c's overlay). */
static void
overlay_set(yk_overlay *ov, const char *name, const char *value)
{
    if (value != NULL)
        (void)yk_overlay_set(ov, name, value);
}

/* Set up krb5 and the realm once: -r (made the default realm, so that
 * principal names without a realm get it), else krb5's default realm. */
static krb5_error_code
setup_realm(yk_admin *adm)
{
    krb5_error_code ret;
    char *def = NULL;

    if (adm->realm != NULL)
        return 0;
    if (adm->kctx != NULL)
        return YK_ERR_CONFIG;   /* failed before, and said why */
    ret = krb5_init_context(&adm->kctx);
    if (ret) {
        adm->kctx = NULL;
        yk_admin_fail("cannot initialise Kerberos: %s", yk_strerror(ret));
        return ret;
    }
    if (adm->realm_opt != NULL) {
        if (*adm->realm_opt == '\0') {
            yk_admin_fail("empty realm name");
            return EINVAL;
        }
        ret = krb5_set_default_realm(adm->kctx, adm->realm_opt);
        if (ret) {
            yk_admin_fail("cannot use the realm %s: %s", adm->realm_opt,
                          yk_admin_strerror(adm, ret));
            return ret;
        }
    }
    ret = krb5_get_default_realm(adm->kctx, &def);
    if (ret) {
        yk_admin_fail("no realm: give -r REALM or set default_realm in "
                      "krb5.conf (%s)", yk_admin_strerror(adm, ret));
        return ret;
    }
    adm->realm = strdup(def);
    krb5_free_default_realm(adm->kctx, def);
    if (adm->realm == NULL) {
        yk_admin_fail("out of memory");
        return ENOMEM;
    }
    return 0;
}

/* Whether every file of path (a colon-separated list, as krb5kdc takes
 * in KRB5_KDC_PROFILE) is readable: 0, or the errno of the first that is
 * not, with its name in bad (len bytes). */
static int
config_unreadable(const char *path, char *bad, size_t len)
{
    const char *p = path, *end;
    char file[PATH_MAX];
    size_t n;

    for (;;) {
        end = strchr(p, ':');
        n = end != NULL ? (size_t)(end - p) : strlen(p);
        if (n > 0) {
            if (n >= sizeof(file)) {
                snprintf(bad, len, "%.*s", (int)n, p);
                return ENAMETOOLONG;
            }
            memcpy(file, p, n);
            file[n] = '\0';
            if (access(file, R_OK) != 0) {
                snprintf(bad, len, "%s", file);
                return errno;
            }
        }
        if (end == NULL)
            return 0;
        p = end + 1;
    }
}

/* Whether the configuration (every file of adm's path) is readable. */
int
yk_admin_config_readable(const yk_admin *adm)
{
    char bad[PATH_MAX];

    return config_unreadable(adm->config_path, bad, sizeof(bad)) == 0;
}

/* Open the profile: kdc.conf, then krb5.conf (as the KDC reads them), so
 * that [dbmodules] is found in either.  An explicitly named kdc.conf (or
 * each file of a colon-separated list) must be readable. */
static krb5_error_code
open_profile(yk_admin *adm, profile_t *profile_out)
{
    const char *krb5conf;
    char *spec = NULL, bad[PATH_MAX];
    krb5_error_code ret;

    if (adm->config_explicit) {
        ret = config_unreadable(adm->config_path, bad, sizeof(bad));
        if (ret) {
            yk_admin_fail("cannot read the configuration %s: %s", bad,
                          yk_strerror(ret));
            return ret;
        }
    }
    krb5conf = secure_getenv("KRB5_CONFIG");
    if (krb5conf == NULL || *krb5conf == '\0')
        krb5conf = DEFAULT_KRB5_CONFIG;
    if (asprintf(&spec, "%s:%s", adm->config_path, krb5conf) < 0)
        return ENOMEM;
    ret = (krb5_error_code)profile_init_path(spec, profile_out);
    if (ret)
        yk_admin_fail("cannot read the configuration %s: %s", spec,
                      yk_admin_strerror(adm, ret));
    free(spec);
    return ret;
}

/* Say why yk_config_load failed.  The one file it reads is the bind
 * password file, so a system error is about that file. */
static void
config_fail(yk_admin *adm, profile_t profile, krb5_error_code code)
{
    char *pwfile = NULL;

    if (code > 0 && code < 256 && code != ENOMEM) {
        (void)profile_get_string(profile, "realms", adm->realm,
                                 YK_CONF_LDAP_PASSWORD_FILE, NULL,
                                 &pwfile);
        yk_admin_fail("cannot read the LDAP password file %s: %s",
                      pwfile != NULL ? pwfile :
                      "(kldap's ldap_service_password_file)",
                      yk_strerror(code));
        profile_release_string(pwfile);
        return;
    }
    yk_admin_fail("cannot load the settings of realm %s from %s: %s%s",
                  adm->realm, adm->config_path, yk_admin_strerror(adm, code),
                  code == YK_ERR_CONFIG ? " (a bad yubikey_* value, or a "
                  "password file that is empty or has no line for the bind "
                  "DN)" : "");
}

/* Copy the string relation names (NULL-terminated path) of profile into
 * *out (malloc'd), leaving *out NULL when unset.  0 or ENOMEM. */
static krb5_error_code
profile_copy(profile_t profile, const char *const *names, char **out)
{
    char **values = NULL;

    *out = NULL;
    if (profile_get_values(profile, names, &values) != 0 || values == NULL ||
        values[0] == NULL) {
        profile_free_list(values);
        return 0;
    }
    *out = strdup(values[0]);
    profile_free_list(values);
    return *out == NULL ? ENOMEM : 0;
}

/* ykadmin's own relations: yubikey_public_id_prefix, and the KDC
 * database's path (database_name of the realm, else of its [dbmodules]
 * section, else of [dbdefaults]), for the keyring ownership check. */
static krb5_error_code
load_own_relations(yk_admin *adm, profile_t profile)
{
    const char *prefix[] = { "realms", adm->realm,
                             YK_CONF_PUBLIC_ID_PREFIX, NULL };
    const char *rdb[] = { "realms", adm->realm, "database_name", NULL };
    const char *rmod[] = { "realms", adm->realm, "database_module", NULL };
    const char *ddb[] = { "dbdefaults", "database_name", NULL };
    const char *mdb[] = { "dbmodules", NULL, "database_name", NULL };
    char *module = NULL;
    krb5_error_code ret;

    ret = profile_copy(profile, prefix, &adm->public_id_prefix);
    if (ret == 0)
        ret = profile_copy(profile, rdb, &adm->database_name);
    if (ret == 0 && adm->database_name == NULL) {
        ret = profile_copy(profile, rmod, &module);
        mdb[1] = module != NULL ? module : adm->realm;
        if (ret == 0)
            ret = profile_copy(profile, mdb, &adm->database_name);
    }
    if (ret == 0 && adm->database_name == NULL)
        ret = profile_copy(profile, ddb, &adm->database_name);
    free(module);
    return ret;
}

#define YK_ADMIN_WHY_LEN 512       /* a configuration error's text */

/* Load kdc.conf's relations for the realm, the overrides laid over it;
 * a write target of several servers is refused. */
krb5_error_code
yk_admin_load_config(yk_admin *adm)
{
    profile_t base = NULL, profile = NULL;
    krb5_error_code ret;
    yk_overlay ov;
    char why[YK_ADMIN_WHY_LEN];

    if (adm->config_loaded)
        return 0;
    ret = setup_realm(adm);
    if (ret)
        return ret;
    ret = open_profile(adm, &base);
    if (ret)
        return ret;

    yk_overlay_init(&ov, base, adm->realm);
    overlay_set(&ov, YK_CONF_LDAP_URI, adm->uri);
    /* --uri alone moves writes too: the one server named on the command
     * line is the one meant. */
    overlay_set(&ov, YK_CONF_LDAP_WRITE_URI,
                adm->write_uri != NULL ? adm->write_uri : adm->uri);
    overlay_set(&ov, YK_CONF_LDAP_BIND_DN, adm->bind_dn);
    overlay_set(&ov, YK_CONF_LDAP_PASSWORD_FILE, adm->password_file);
    overlay_set(&ov, YK_CONF_LDAP_BASE, adm->base);
    overlay_set(&ov, YK_CONF_MASTER_KEY_FILE, adm->keyring);
    ret = yk_overlay_profile(&ov, &profile);
    if (ret) {
        yk_admin_fail("cannot read the configuration: %s",
                      yk_admin_strerror(adm, ret));
        goto cleanup;
    }

    ret = yk_config_load(profile, adm->realm, &adm->cfg);
    if (ret) {
        config_fail(adm, profile, ret);
        goto cleanup;
    }
    ret = load_own_relations(adm, profile);
    if (ret) {
        yk_config_clear(&adm->cfg);
        yk_admin_fail("out of memory");
        goto cleanup;
    }
    ret = yk_config_check_write_target(&adm->cfg.store, why, sizeof(why));
    if (ret) {
        yk_config_clear(&adm->cfg);
        yk_admin_fail("realm %s in %s: %s", adm->realm, adm->config_path,
                      why);
        goto cleanup;
    }
    /* As loud as the KDC's start line: the wrapped secrets and the bind
     * password would cross the network in clear. */
    if (yk_config_check_cleartext(&adm->cfg.store, why, sizeof(why)))
        fprintf(stderr, "ykadmin: WARNING: realm %s: %s\n", adm->realm,
                why);
    adm->config_loaded = 1;

cleanup:
    if (profile != NULL)
        profile_release(profile);
    profile_release(base);
    return ret;
}

/* The keyring path: the global --keyring, else yubikey_master_key_file. */
const char *
yk_admin_keyring_path(yk_admin *adm)
{
    if (adm->keyring != NULL)
        return adm->keyring;
    if (yk_admin_load_config(adm) != 0)
        return NULL;
    if (adm->cfg.master_key_file == NULL) {
        yk_admin_fail("no master keyring: set yubikey_master_key_file in "
                      "[realms] %s of %s, or use --keyring FILE", adm->realm,
                      adm->config_path);
        return NULL;
    }
    return adm->cfg.master_key_file;
}

/* The name of uid (printable) into out, else "uid N". */
static void
user_name(uid_t uid, char *out, size_t size)
{
    struct passwd *pw = getpwuid(uid);

    if (pw != NULL && pw->pw_name != NULL)
        yk_admin_printable(pw->pw_name, out, size);
    else
        snprintf(out, size, "uid %lu", (unsigned long)uid);
}

/* The KDC's user; see admin.h. */
int
yk_admin_kdc_user_find(yk_admin *adm, const char *opt, yk_admin_kdc_user *u)
{
    const char *dbname = DEFAULT_DATABASE_NAME;
    char *copy = NULL, *dir;
    struct passwd *pw;
    struct stat sb;

    memset(u, 0, sizeof(*u));
    if (opt != NULL) {
        pw = getpwnam(opt);
        if (pw == NULL)
            return yk_admin_fail("--kdc-user: no user \"%s\"", opt);
        u->uid = pw->pw_uid;
        snprintf(u->how, sizeof(u->how), "given by --kdc-user");
    } else {
        if ((adm->config_loaded || yk_admin_config_readable(adm)) &&
            yk_admin_load_config(adm) == 0 && adm->database_name != NULL)
            dbname = adm->database_name;
        copy = strdup(dbname);
        if (copy == NULL)
            return yk_admin_fail("out of memory");
        dir = dirname(copy);
        if (stat(dir, &sb) == 0) {
            u->uid = sb.st_uid;
            snprintf(u->how, sizeof(u->how), "the owner of %s, the KDC "
                     "database's directory", dir);
        } else {
            u->uid = 0;
            snprintf(u->how, sizeof(u->how), "root: %s, the KDC database's "
                     "directory, does not exist here", dir);
        }
        free(copy);
    }
    user_name(u->uid, u->name, sizeof(u->name));
    return 0;
}

/* Say why the keyring at path did not load (code from
 * yk_keyring_load_for), naming its mode or owner and what to do.  kdc is
 * the KDC's user that root also accepts, NULL when not root. */
static void
keyring_fail(const char *path, krb5_error_code code,
             const yk_admin_kdc_user *kdc)
{
    char owner[YK_ADMIN_USER_SHOWN_MAX], me[YK_ADMIN_USER_SHOWN_MAX];
    struct stat sb;

    if ((code != YK_ERR_KEYRING_OWNER && code != YK_ERR_KEYRING_PERMS) ||
        stat(path, &sb) != 0) {
        yk_admin_fail("cannot load the master keyring %s: %s", path,
                      yk_strerror(code));
        return;
    }
    if (code == YK_ERR_KEYRING_PERMS) {
        yk_admin_fail("cannot load the master keyring %s: group or others "
                      "may access it (mode %04o, must be 0600), and it "
                      "holds every token's key: \"chmod 600 %s\" (the KDC "
                      "refuses it too)", path,
                      (unsigned int)(sb.st_mode & 07777), path);
        return;
    }
    user_name(sb.st_uid, owner, sizeof(owner));
    user_name(geteuid(), me, sizeof(me));
    if (kdc != NULL && kdc->uid == 0)
        yk_admin_fail("cannot load the master keyring %s: it is owned by "
                      "%s, not root (who runs ykadmin, and the KDC's user "
                      "too: %s), and its owner could replace the keys: "
                      "\"chown root %s\" (the KDC refuses it too)", path,
                      owner, kdc->how, path);
    else if (kdc != NULL)
        yk_admin_fail("cannot load the master keyring %s: it is owned by "
                      "%s, neither root nor the KDC's user %s (%s), and its "
                      "owner could replace the keys: \"chown %s %s\" (the "
                      "KDC refuses it too)", path, owner, kdc->name,
                      kdc->how, kdc->name, path);
    else
        yk_admin_fail("cannot load the master keyring %s: it is owned by "
                      "%s, neither %s (who runs ykadmin) nor root, and its "
                      "owner could replace the keys: run ykadmin as its "
                      "owner, or have root \"chown %s %s\"", path, owner,
                      me, me, path);
}

/* Load the master keyring named by the configuration; see admin.h. */
krb5_error_code
yk_admin_load_keyring(yk_admin *adm, yk_keyring **kr_out)
{
    yk_admin_kdc_user kdc;
    const char *path;
    krb5_error_code ret;
    int as_root = geteuid() == 0;

    path = yk_admin_keyring_path(adm);
    if (path == NULL)
        return YK_ERR_CONFIG;
    if (as_root && yk_admin_kdc_user_find(adm, NULL, &kdc) != 0)
        return YK_ERR_CONFIG;
    ret = yk_keyring_load_for(path, as_root ? kdc.uid : (uid_t)-1, kr_out);
    if (ret)
        keyring_fail(path, ret, as_root ? &kdc : NULL);
    return ret;
}

/* Describe the LDAP identity ykadmin binds as; see admin.h. */
void
yk_admin_identity(const yk_admin *adm, char *buf, size_t len)
{
    const yk_store_config *sc = &adm->cfg.store;

    if (sc->sasl_mech != NULL) {
        snprintf(buf, len, "SASL %s (from %s)", sc->sasl_mech,
                 adm->config_path);
    } else if (sc->bind_dn == NULL) {
        snprintf(buf, len, "nobody (an anonymous bind: no --bind-dn, and no "
                 "bind DN in %s)", adm->config_path);
    } else if (adm->bind_dn != NULL) {
        snprintf(buf, len, "DN %s (--bind-dn)", sc->bind_dn);
    } else {
        snprintf(buf, len, "DN %s (yubikey_ldap_bind_dn, or kldap's "
                 "ldap_kdc_dn, of %s: the identity the KDC uses)",
                 sc->bind_dn, adm->config_path);
    }
}

/* Open (lazily: the store connects on first use) the configured store.
 * Without --bind-dn, say on standard error which identity is used. */
krb5_error_code
yk_admin_store(yk_admin *adm, yk_store **st_out)
{
    char who[512];

    krb5_error_code ret;

    if (adm->store == NULL) {
        ret = yk_admin_load_config(adm);
        if (ret)
            return ret;
        if (adm->cfg.store.uri == NULL) {
            yk_admin_fail("no LDAP server: set yubikey_ldap_uri (or use the "
                          "kldap back end) in %s, or use --uri URI",
                          adm->config_path);
            return YK_ERR_CONFIG;
        }
        if (adm->cfg.store.base == NULL) {
            yk_admin_fail("no LDAP search base: set yubikey_ldap_base in "
                          "%s, or use --base DN", adm->config_path);
            return YK_ERR_CONFIG;
        }
        ret = yk_store_new(&adm->cfg.store, &adm->store);
        if (ret) {
            yk_admin_fail("cannot set up the LDAP store: %s",
                          yk_strerror(ret));
            return ret;
        }
        if (adm->bind_dn == NULL) {
            yk_admin_identity(adm, who, sizeof(who));
            fprintf(stderr, "ykadmin: note: no --bind-dn: binding to %s as "
                    "%s; changing tokens needs a token administrator "
                    "(--bind-dn DN --password-file FILE)\n",
                    adm->cfg.store.uri, who);
        }
    }
    *st_out = adm->store;
    return 0;
}

/* Print a failed directory operation: what failed, why, the store's own
 * account of the LDAP failure and the server(s) concerned. */
int
yk_admin_store_fail(yk_admin *adm, krb5_error_code code, const char *fmt,
                    ...)
{
    char what[512], detail[1400], who[512], access[1024];
    const char *server, *wserver;
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    detail[0] = '\0';
    access[0] = '\0';
    if (adm->store != NULL)
        snprintf(detail, sizeof(detail), " (%s)",
                 yk_store_last_error(adm->store));
    if (code == YK_ERR_STORE_ACCESS && adm->config_loaded) {
        /* Name the identity: an ACL refusal is about who we are. */
        yk_admin_identity(adm, who, sizeof(who));
        if (adm->store != NULL && yk_store_bind_refused(adm->store)) {
            snprintf(access, sizeof(access), "; the directory refused the "
                     "bind as %s: check --bind-dn and --password-file",
                     who);
        } else {
            snprintf(access, sizeof(access), "; ykadmin bound as %s, which "
                     "the directory's access rules do not allow this: "
                     "token changes need a member of the token "
                     "administrators' group (ldap-schema/acl.conf)", who);
        }
        strncat(detail, access, sizeof(detail) - strlen(detail) - 1);
    }
    server = adm->cfg.store.uri != NULL ? adm->cfg.store.uri : "?";
    wserver = adm->cfg.store.write_uri;
    if (wserver != NULL && strcmp(wserver, server) != 0)
        return yk_admin_fail("%s: %s%s; LDAP %s, writes %s", what,
                             yk_strerror(code), detail, server, wserver);
    return yk_admin_fail("%s: %s%s; LDAP %s", what, yk_strerror(code),
                         detail, server);
}

/* Say that principal holds no readable record for its token pubid (NULL:
 * "this public id"): missing, or hidden from ykadmin's identity. */
int
yk_admin_no_record(yk_admin *adm, const char *principal, const char *pubid)
{
    char who[512];

    yk_admin_identity(adm, who, sizeof(who));
    return yk_admin_fail("%s holds no token record for %s%s that ykadmin can "
                         "read: none was enrolled, or the directory hides "
                         "yubikeyTokenSecret from %s (only the KDC and token "
                         "administrators may read it)", principal,
                         pubid != NULL ? "public id " : "this public id",
                         pubid != NULL ? pubid : "", who);
}

/* Say that principal has no directory entry, and what to add where (a
 * DB2 realm's entries are the site's to make; kldap makes its own). */
int
yk_admin_no_entry(yk_admin *adm, const char *where, const char *principal)
{
    const yk_store_config *sc = &adm->cfg.store;
    const char *sep = where != NULL ? ": " : "";

    if (where == NULL)
        where = "";
    if (sc->kldap_realm_dn != NULL) {
        return yk_admin_fail("%s%s%s has no entry in the kldap realm "
                             "container %s or its subtrees: create the "
                             "principal first (kadmin addprinc)", where, sep,
                             principal, sc->kldap_realm_dn);
    }
    return yk_admin_fail("%s%s%s has no entry in the directory: no entry "
                         "matches %s (%%p = %s) under %s on %s.  Tokens "
                         "live on the principal's LDAP entry: add one with "
                         "objectClass krbPrincipalAux and krbPrincipalName: "
                         "%s (README, \"Principals and tokens\"), or fix "
                         "yubikey_ldap_base / yubikey_principal_filter",
                         where, sep, principal,
                         sc->filter != NULL ? sc->filter :
                         "(krbPrincipalName=%p)", principal,
                         sc->base != NULL ? sc->base : "?",
                         sc->uri != NULL ? sc->uri : "?", principal);
}

/* Canonical principal name: parsed and unparsed by krb5. */
krb5_error_code
yk_admin_principal(yk_admin *adm, const char *name, char **canon_out)
{
    krb5_principal princ = NULL;
    krb5_error_code ret;
    char *s = NULL, *canon = NULL;

    if (*name == '\0') {
        yk_admin_fail("empty principal name");
        return EINVAL;
    }
    ret = setup_realm(adm);
    if (ret)
        return ret;
    ret = krb5_parse_name(adm->kctx, name, &princ);
    if (ret) {
        yk_admin_fail("cannot parse the principal name \"%s\": %s", name,
                      yk_admin_strerror(adm, ret));
        goto cleanup;
    }
    ret = krb5_unparse_name(adm->kctx, princ, &s);
    if (ret) {
        yk_admin_fail("cannot unparse the principal name \"%s\": %s", name,
                      yk_admin_strerror(adm, ret));
        goto cleanup;
    }
    canon = strdup(s);
    if (canon == NULL) {
        ret = ENOMEM;
        yk_admin_fail("out of memory");
        goto cleanup;
    }
    *canon_out = canon;

cleanup:
    krb5_free_unparsed_name(adm->kctx, s);
    krb5_free_principal(adm->kctx, princ);
    return ret;
}

/* Keep secrets out of core dumps and other processes' reach. */
static void
harden_process(void)
{
    struct rlimit rl = { 0, 0 };

    (void)setrlimit(RLIMIT_CORE, &rl);
    (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

/* Parse the global options into adm; *cmd_index_out gets the index of
 * COMMAND in argv.  Returns -1 to go on, or an exit status. */
static int
parse_global(yk_admin *adm, int argc, char **argv, int *cmd_index_out)
{
    int c;

    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:c:r:hV", global_options,
                            NULL)) != -1) {
        switch (c) {
        case 'c':
            adm->config_path = optarg;
            adm->config_explicit = 1;
            break;
        case 'r':
            adm->realm_opt = optarg;
            break;
        case OPT_URI:
            adm->uri = optarg;
            break;
        case OPT_WRITE_URI:
            adm->write_uri = optarg;
            break;
        case OPT_BIND_DN:
            adm->bind_dn = optarg;
            break;
        case OPT_PASSWORD_FILE:
            adm->password_file = optarg;
            break;
        case OPT_BASE:
            adm->base = optarg;
            break;
        case OPT_KEYRING:
            adm->keyring = optarg;
            break;
        case 'h':
            print_usage(stdout);
            return YK_ADMIN_EXIT_OK;
        case 'V':
            printf("ykadmin (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
            return YK_ADMIN_EXIT_OK;
        case ':':
            fprintf(stderr, "ykadmin: option %s needs an argument\n"
                    "Try \"ykadmin --help\".\n", argv[optind - 1]);
            return YK_ADMIN_EXIT_USAGE;
        default:
            fprintf(stderr, "ykadmin: unknown option %s\n"
                    "Try \"ykadmin --help\".\n", argv[optind - 1]);
            return YK_ADMIN_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "ykadmin: no command given\n"
                "Try \"ykadmin --help\".\n");
        return YK_ADMIN_EXIT_USAGE;
    }
    *cmd_index_out = optind;
    return -1;
}

/* Find the command called name, or NULL. */
static const yk_admin_cmd *
find_command(const char *name)
{
    size_t i;

    for (i = 0; i < NCOMMANDS; i++) {
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    }
    return NULL;
}

/* Parse the global options, then run the command.  Kerberos and the
 * configuration are set up on demand, so "ykadmin COMMAND --help" and
 * usage errors need neither. */
int
main(int argc, char **argv)
{
    const yk_admin_cmd *cmd;
    const char *env;
    yk_admin adm;
    int status, cmd_index = 0;

    memset(&adm, 0, sizeof(adm));
    harden_process();
    openlog("ykadmin", LOG_PID | LOG_PERROR, LOG_AUTHPRIV);
    operator_identity(adm.operator_id, sizeof(adm.operator_id));

    env = secure_getenv("KRB5_KDC_PROFILE");
    adm.config_path = DEFAULT_KDC_PROFILE;
    if (env != NULL && *env != '\0') {
        adm.config_path = env;
        adm.config_explicit = 1;
    }

    status = parse_global(&adm, argc, argv, &cmd_index);
    if (status >= 0)
        goto cleanup;
    cmd = find_command(argv[cmd_index]);
    if (cmd == NULL) {
        fprintf(stderr, "ykadmin: unknown command \"%s\"\n"
                "Try \"ykadmin --help\".\n", argv[cmd_index]);
        status = YK_ADMIN_EXIT_USAGE;
        goto cleanup;
    }

    status = cmd->run(&adm, argc - cmd_index, argv + cmd_index);

cleanup:
    yk_store_free(adm.store);
    if (adm.config_loaded)
        yk_config_clear(&adm.cfg);
    free(adm.public_id_prefix);
    free(adm.database_name);
    free(adm.realm);
    if (adm.kctx != NULL)
        krb5_free_context(adm.kctx);
    closelog();
    if (fflush(stdout) != 0 && status == YK_ADMIN_EXIT_OK)
        status = yk_admin_fail("cannot write the output: %s",
                               strerror(errno));
    return status;
}
