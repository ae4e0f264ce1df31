/* admin.h: what ykadmin's command files share (context, helpers, commands). */
#ifndef YK_ADMIN_H
#define YK_ADMIN_H

#include <stdarg.h>
#include <krb5.h>
#include "config.h"
#include "keywrap.h"
#include "store.h"

/* Exit statuses (documented in ykadmin(8)). */
#define YK_ADMIN_EXIT_OK 0
#define YK_ADMIN_EXIT_FAIL 1
#define YK_ADMIN_EXIT_USAGE 2

#define YK_ADMIN_OPERATOR_MAX 160   /* "login (sudo: user)" */
#define YK_ADMIN_DESCRIPTION_MAX 200 /* bytes of a token description */

/* One ykadmin run: the global options (borrowed from argv) and what is
 * loaded from them on demand.  Commands reach everything through it. */
typedef struct {
    krb5_context kctx;
    const char *config_path;     /* -c, else $KRB5_KDC_PROFILE, else default */
    int config_explicit;         /* named by -c or the environment */
    const char *realm_opt;       /* -r */
    char *realm;                 /* the realm in use (malloc'd) */
    /* Command-line overrides of kdc.conf relations; NULL = not given. */
    const char *uri;
    const char *write_uri;
    const char *bind_dn;
    const char *password_file;
    const char *base;
    const char *keyring;
    int config_loaded;
    yk_config cfg;               /* kdc.conf + overrides */
    yk_store *store;             /* opened by yk_admin_store */
    char operator_id[YK_ADMIN_OPERATOR_MAX]; /* who runs us, for the logs */
} yk_admin;

/* A subcommand: its name, argument synopsis, one-line summary, option
 * help (printed by "ykadmin COMMAND --help") and its entry point, which
 * gets argv[0] = the command name and returns an exit status. */
typedef struct {
    const char *name;
    const char *synopsis;
    const char *summary;
    const char *help;
    int (*run)(yk_admin *adm, int argc, char **argv);
} yk_admin_cmd;

/* The commands (admin_master.c, admin_tokens.c). */
extern const yk_admin_cmd yk_admin_cmd_init_master_key;
extern const yk_admin_cmd yk_admin_cmd_enroll;
extern const yk_admin_cmd yk_admin_cmd_import;
extern const yk_admin_cmd yk_admin_cmd_list;
extern const yk_admin_cmd yk_admin_cmd_disable;
extern const yk_admin_cmd yk_admin_cmd_enable;
extern const yk_admin_cmd yk_admin_cmd_policy;
extern const yk_admin_cmd yk_admin_cmd_verify;

/* --- helpers (ykadmin.c) ------------------------------------------------ */

/* Print "ykadmin: MESSAGE" as one line on standard error and return
 * YK_ADMIN_EXIT_FAIL. */
int yk_admin_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* Print a usage error for cmd ("ykadmin CMD: MESSAGE" and a pointer to
 * --help) and return YK_ADMIN_EXIT_USAGE. */
int yk_admin_usage(const yk_admin_cmd *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Print cmd's full help on standard output; returns YK_ADMIN_EXIT_OK. */
int yk_admin_help(const yk_admin_cmd *cmd);

/* Log a change to syslog (LOG_AUTHPRIV | LOG_NOTICE, ident "ykadmin") and
 * standard error, followed by " operator=WHO".  Callers pass principals
 * and public ids only, never a secret. */
void yk_admin_log(yk_admin *adm, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A message for code (ours, errno, krb5 or com_err); static or owned by
 * adm's krb5 context until the next call. */
const char *yk_admin_strerror(yk_admin *adm, krb5_error_code code);

/* Load kdc.conf (once) and apply the command-line overrides. */
krb5_error_code yk_admin_load_config(yk_admin *adm);

/* The path of the master keyring: --keyring, else yubikey_master_key_file
 * (loading kdc.conf).  NULL, after printing why, when neither is set. */
const char *yk_admin_keyring_path(yk_admin *adm);

/* Load the master keyring; prints the reason on failure.  The caller
 * frees *kr_out with yk_keyring_free. */
krb5_error_code yk_admin_load_keyring(yk_admin *adm, yk_keyring **kr_out);

/* The token store for the configured directory (owned by adm); prints the
 * reason on failure. */
krb5_error_code yk_admin_store(yk_admin *adm, yk_store **st_out);

/* Print a one-line error for a failed directory operation (what, e.g.
 * "cannot read alice@R") naming the server; returns YK_ADMIN_EXIT_FAIL. */
int yk_admin_store_fail(yk_admin *adm, krb5_error_code code,
                        const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Parse name with krb5 (default realm: the realm in use) and unparse it
 * into *canon_out (malloc'd), e.g. "alice" -> "alice@REALM".  Prints the
 * reason on failure. */
krb5_error_code yk_admin_principal(yk_admin *adm, const char *name,
                                   char **canon_out);

/* Copy s into out (outsize bytes; s == out is fine) for display: control
 * characters and non-ASCII bytes become '?', so that a value can never
 * forge a log line. */
void yk_admin_printable(const char *s, char *out, size_t outsize);

/* Format Unix time t as ISO 8601 UTC ("2024-05-01T12:00:00Z") into out
 * (at least 21 bytes); t == 0 gives "never". */
void yk_admin_isotime(int64_t t, char *out, size_t outsize);

#endif /* YK_ADMIN_H */
