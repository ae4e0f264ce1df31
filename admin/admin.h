/* SPDX-License-Identifier: MIT */
/* admin.h: what ykadmin's command files share (context, helpers, commands). */
#ifndef YK_ADMIN_H
#define YK_ADMIN_H

#include <stdarg.h>
#include <stdint.h>
#include <krb5.h>
#include "ykconf.h"
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
    /* ykadmin's own kdc.conf relations and the KDC's database path, read
     * with the configuration (malloc'd; NULL = unset). */
    char *public_id_prefix;      /* yubikey_public_id_prefix */
    char *database_name;         /* the realm's KDB (database_name) */
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

/* The commands: admin_master.c (init-master-key, rewrap), admin_enroll.c,
 * admin_import.c, admin_tokens.c (list, disable, enable, delete, policy,
 * verify, raise-counters), admin_purge.c. */
extern const yk_admin_cmd yk_admin_cmd_init_master_key;
extern const yk_admin_cmd yk_admin_cmd_rewrap;
extern const yk_admin_cmd yk_admin_cmd_enroll;
extern const yk_admin_cmd yk_admin_cmd_import;
extern const yk_admin_cmd yk_admin_cmd_list;
extern const yk_admin_cmd yk_admin_cmd_disable;
extern const yk_admin_cmd yk_admin_cmd_enable;
extern const yk_admin_cmd yk_admin_cmd_delete;
extern const yk_admin_cmd yk_admin_cmd_policy;
extern const yk_admin_cmd yk_admin_cmd_verify;
extern const yk_admin_cmd yk_admin_cmd_raise_counters;
extern const yk_admin_cmd yk_admin_cmd_purge;

/* --- command options (admin_util.c) ------------------------------------ */

/* The options of the token commands; each command allows a subset (a
 * mask of these bits). */
enum {
    YK_OPT_EMULATE = 1u << 0,
    YK_OPT_PUBLIC_ID = 1u << 1,
    YK_OPT_DESCRIPTION = 1u << 2,
    YK_OPT_SLOT = 1u << 3,
    YK_OPT_FORCE = 1u << 4,
    YK_OPT_REQUIRE = 1u << 5,
    YK_OPT_ACCESS_CODE_FILE = 1u << 6,
    YK_OPT_ADD = 1u << 7,
    YK_OPT_REPLACE = 1u << 8,
    YK_OPT_PREFIX = 1u << 9,
    YK_OPT_FILE = 1u << 10,
    YK_OPT_PRINCIPAL = 1u << 11,
    YK_OPT_MAP = 1u << 12,
    YK_OPT_FORMAT = 1u << 13,
    YK_OPT_DRY_RUN = 1u << 14,
    YK_OPT_FIRST_OTP = 1u << 15,
    YK_OPT_JSON = 1u << 16,
    YK_OPT_BY = 1u << 17,
    YK_OPT_ALL = 1u << 18,
    YK_OPT_RESYNC = 1u << 19,
    YK_OPT_KEYRING = 1u << 20,
    YK_OPT_KDC_USER = 1u << 21,
    YK_OPT_ADD_KEY = 1u << 22,
    YK_OPT_COUNTER = 1u << 23
};

#define YK_ADMIN_FIRST_OTP_MAX 64   /* --first-otp options, at most */
#define YK_ADMIN_COUNTER_MAX 64     /* --counter options, at most */

/* Parsed options (borrowed from argv) and positional arguments. */
typedef struct {
    const char *emulate;
    const char *public_id;
    const char *description;
    const char *slot;
    const char *access_code_file;
    const char *public_id_prefix;
    const char *file;
    const char *principal;
    const char *map;
    const char *format;
    const char *by;
    const char *keyring;
    const char *kdc_user;
    const char *first_otp[YK_ADMIN_FIRST_OTP_MAX];
    size_t nfirst_otp;
    const char *counter[YK_ADMIN_COUNTER_MAX];
    size_t ncounter;
    int force, require, add, replace, dry_run, json, all, resync, add_key;
    int nargs;
    char **args;
} yk_admin_args;

/* Parse argv (argv[0] = the command name) for cmd: the options in allowed
 * (YK_OPT_* bits), then min_args..max_args positional arguments, into *a.
 * Returns -1 to go on, or an exit status (help printed, or a usage
 * error). */
int yk_admin_parse_args(const yk_admin_cmd *cmd, int argc, char **argv,
                        unsigned int allowed, int min_args, int max_args,
                        yk_admin_args *a);

/* --- helpers (ykadmin.c) ------------------------------------------------ */

/* Print "ykadmin: MESSAGE" as one line on standard error and return
 * YK_ADMIN_EXIT_FAIL. */
int yk_admin_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* Describe into buf (len bytes) the LDAP identity ykadmin binds as, with
 * where it came from (--bind-dn, or kdc.conf: the KDC's identity).  Needs
 * the configuration loaded. */
void yk_admin_identity(const yk_admin *adm, char *buf, size_t len);

/* Print that principal holds no record for pubid (NULL: "this public
 * id") that ykadmin can read, naming its identity; returns
 * YK_ADMIN_EXIT_FAIL. */
int yk_admin_no_record(yk_admin *adm, const char *principal,
                       const char *pubid);

/* Print that principal has no directory entry (where: a prefix such as
 * "FILE line N", or NULL) and what to create; returns
 * YK_ADMIN_EXIT_FAIL. */
int yk_admin_no_entry(yk_admin *adm, const char *where,
                      const char *principal);

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

/* Whether every file of the configuration path (kdc.conf, or a
 * colon-separated list as in KRB5_KDC_PROFILE) is readable: 1 or 0. */
int yk_admin_config_readable(const yk_admin *adm);

/* Load kdc.conf (once) and apply the command-line overrides. */
krb5_error_code yk_admin_load_config(yk_admin *adm);

/* The path of the master keyring: --keyring, else yubikey_master_key_file
 * (loading kdc.conf).  NULL, after printing why, when neither is set. */
const char *yk_admin_keyring_path(yk_admin *adm);

/* Load the master keyring; prints the reason on failure (for a wrong
 * mode or owner: the file's and what to do).  Run by root, it also
 * accepts a file owned by the KDC's user (yk_admin_kdc_user_find without
 * --kdc-user), as that KDC does.  The caller frees *kr_out with
 * yk_keyring_free. */
krb5_error_code yk_admin_load_keyring(yk_admin *adm, yk_keyring **kr_out);

#define YK_ADMIN_USER_SHOWN_MAX 64  /* a user name, as printed */
#define YK_ADMIN_HOW_MAX 512        /* how the KDC's user was found */

/* Who the KDC runs as, and how we know. */
typedef struct {
    uid_t uid;
    char name[YK_ADMIN_USER_SHOWN_MAX];
    char how[YK_ADMIN_HOW_MAX];
} yk_admin_kdc_user;

/* Fill *u with the KDC's user: opt (a user name, from --kdc-user) when not
 * NULL, else the owner of the directory holding the KDC database
 * (database_name of the realm, default /var/lib/krb5kdc/principal), else
 * root.  0, or an exit status after printing why (an unknown opt). */
int yk_admin_kdc_user_find(yk_admin *adm, const char *opt,
                           yk_admin_kdc_user *u);

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

/* --- token helpers (admin_util.c) ------------------------------------ */

#define YK_ADMIN_SWAP_TRIES 3       /* re-reads after a lost swap */
#define YK_ADMIN_GEN_PUBID_LEN 6    /* generated public ids: bytes */
#define YK_ADMIN_GEN_MASK 0x3fffffffffffffffULL  /* a first generation */
#define YK_ADMIN_PREFIX_MAX 8       /* modhex characters of a prefix */
#define YK_ADMIN_DEFAULT_PREFIX "vv" /* Yubico's range for ids programmed
                                      * by their owners ("cc": factory) */

/* Canonicalize a public id given by an operator (modhex, either case)
 * into out; 0, or an exit status after printing why. */
int yk_admin_canon_pubid(const char *in, char out[YK_PUBID_MODHEX_MAX + 1]);

/* Check a description: printable ASCII, at most YK_ADMIN_DESCRIPTION_MAX
 * bytes; NULL is fine.  0, or an exit status after printing why. */
int yk_admin_check_description(const char *d);

/* 0 when pubid is enrolled nowhere in the directory (one token, one
 * principal), else an exit status after printing who holds it. */
int yk_admin_pubid_free(yk_admin *adm, yk_store *st, const char *pubid);

/* Read principal's entry from the write server (what an administrator
 * changes next).  0, or an exit status after printing why. */
int yk_admin_read_entry(yk_admin *adm, yk_store *st, const char *principal,
                        yk_entry **entry_out);

/* The principal holding pubid (malloc'd into *holder_out).  0, or an exit
 * status after printing why (unknown public id, directory failure). */
int yk_admin_find_holder(yk_admin *adm, yk_store *st, const char *pubid,
                         char **holder_out);

/* Build the secret and initial state records of a new token: secret
 * wrapped for (principal, pubid) under the keyring's newest key, state
 * YK_TOKEN_*, the serial (NULL = unknown), counter and last use given,
 * a random first generation (never a deleted token's state value).
 * The caller frees *rec_out with yk_secret_rec_free. */
krb5_error_code yk_admin_new_records(yk_admin *adm, const yk_keyring *kr,
                                     const char *principal,
                                     const char *pubid,
                                     const yk_token_secret *secret,
                                     int state, const char *description,
                                     const char *serial, uint32_t counter,
                                     int64_t last_use,
                                     yk_secret_rec **rec_out,
                                     yk_state_rec *state_out);

/* Add a new token to entry, naming the holder when its public id was
 * enrolled meanwhile.  0, or an exit status after printing why. */
int yk_admin_add_token(yk_admin *adm, yk_store *st, const yk_entry *entry,
                       const yk_secret_rec *rec, const yk_state_rec *state);

/* Set the state of principal's token pubid to new_state (and its serial
 * when serial is not NULL), re-reading and retrying when a concurrent
 * write wins the swap.  With from_pending set only a pending token may
 * change (enrolment); otherwise a pending token is refused.  *old_out
 * gets the previous state.  Returns a krb5 code, after printing why. */
krb5_error_code yk_admin_set_token_state(yk_admin *adm, yk_store *st,
                                         const char *principal,
                                         const char *pubid, int new_state,
                                         int from_pending,
                                         const char *serial, int *old_out);

/* Generate a public id that is free in the directory: prefix (canonical
 * modhex, 0..YK_ADMIN_PREFIX_MAX characters) then random bytes up to
 * YK_ADMIN_GEN_PUBID_LEN bytes.  0, or an exit status after printing. */
int yk_admin_generate_pubid(yk_admin *adm, yk_store *st, const char *prefix,
                            unsigned char pubid[YK_PUBID_MAX],
                            size_t *pubid_len_out,
                            char pubid_mh[YK_PUBID_MODHEX_MAX + 1]);

/* Check a public id prefix: even-length modhex, at most
 * YK_ADMIN_PREFIX_MAX characters; canonical form into out.  0, or an exit
 * status after printing why (what names where it came from). */
int yk_admin_check_prefix(const char *in, const char *what,
                          char out[YK_ADMIN_PREFIX_MAX + 1]);

/* --- the KDC's database, through kadm5's server library (admin_kdb.c) -- */

typedef struct yk_admin_kdb yk_admin_kdb;

/* Open the realm's database as kadmin.local does (on a KDC, with its
 * stash).  0, or a code after printing why; free with
 * yk_admin_kdb_close. */
krb5_error_code yk_admin_kdb_open(yk_admin *adm, yk_admin_kdb **kdb_out);

/* Whether principal (a full name) exists in the database: *exists_out 1
 * or 0.  Other failures return a code after printing why. */
krb5_error_code yk_admin_kdb_exists(yk_admin_kdb *kdb,
                                    const char *principal, int *exists_out);

/* Set +requires_preauth +requires_hwauth on principal; *changed_out is 0
 * when both were set already.  A code after printing why on failure. */
krb5_error_code yk_admin_kdb_require_hwauth(yk_admin_kdb *kdb,
                                            const char *principal,
                                            int *changed_out);

/* Close the database; NULL is accepted. */
void yk_admin_kdb_close(yk_admin_kdb *kdb);

#endif /* YK_ADMIN_H */
