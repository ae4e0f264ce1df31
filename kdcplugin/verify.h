/* SPDX-License-Identifier: MIT */
/* verify.h: the KDC module's logic as plain functions (doc/design.md §4). */
#ifndef YK_VERIFY_H
#define YK_VERIFY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <krb5.h>
#include <profile.h>

#include "cache.h"
#include "ykconf.h"
#include "keywrap.h"
#include "otp.h"
#include "shtab.h"
#include "store.h"

#define YK_RECHECK_AGE_MS 2000     /* a rejection on an older record is
                                    * re-read before it is final */
#define YK_KEYRING_CHECK_MS 5000   /* the keyring file is looked at (for a
                                    * change, or while unreadable) at most
                                    * this often */
#define YK_BUDGET_FACTOR 2         /* one attempt's directory work takes at
                                    * most this many yubikey_ldap_timeout */
#define YK_CAS_MAX_ROUNDS 4        /* swaps lost to others, at most */
#define YK_DETAIL_LEN 160          /* a verdict's free-text detail */
#define YK_CONFIG_ERROR_LEN 512    /* why a realm is misconfigured */
#define YK_LOG_LINE_LEN 1024       /* one KDC log line */

/* One realm's state: its configuration, store, cache, keyring and circuit
 * breaker.  Owned by the module data (kdc_main.c). */
typedef struct {
    char *name;                  /* the realm */
    int active;                  /* a token directory is configured */
    int misconfigured;           /* its yubikey settings are invalid: OTP
                                  * logins are discarded (never active) */
    char config_error[YK_CONFIG_ERROR_LEN]; /* why, when misconfigured */
    yk_config cfg;               /* (the bind password is only in store) */
    yk_store *store;             /* connects lazily, after the fork */
    yk_cache *cache;
    yk_shtab *shared;            /* the workers' token states (NULL: none) */
    yk_keyring *keyring;         /* NULL while unreadable */
    krb5_error_code keyring_err; /* why it is NULL */
    struct stat keyring_st;      /* the file the keyring was loaded from */
    krb5_error_code reload_err;  /* the last failed reload, logged once */
    struct stat reload_st;       /* ... of this file (st_ino 0: unknown) */
    int64_t keyring_check_ms;    /* next look at the file (monotonic) */
    int64_t breaker_until_ms;    /* circuit breaker open until */
} yk_realm;

/* The verdict of one attempt: the reason in its log line. */
typedef enum {
    YK_V_ACCEPTED = 0,
    YK_V_REPLAY,                 /* counter equal to the stored one */
    YK_V_RETRANSMISSION,         /* equal, and the same request nonce */
    YK_V_OLDER,                  /* counter below the stored one */
    YK_V_BAD_OTP,                /* bad CRC or key, private id mismatch */
    YK_V_UNKNOWN_TOKEN,          /* no such token for this principal */
    YK_V_PENDING_TOKEN,
    YK_V_DISABLED_TOKEN,
    YK_V_BAD_RECORD,             /* the token's record is unusable */
    YK_V_WRONG_PASSWORD,         /* mode 1 did not decrypt */
    YK_V_STALE_TIME,             /* mode 1 client time outside the skew */
    YK_V_NONCE_MISMATCH,         /* mode 1 nonce is not the request's */
    YK_V_NOT_ARMORED,            /* mode 2, or require_fast, without FAST */
    YK_V_POLICY,                 /* mode 2 for a 2fa principal */
    YK_V_MALFORMED,              /* padata or OTP malformed */
    YK_V_DUPLICATE,              /* two padata of ours in one request */
    YK_V_NOT_CONFIGURED,         /* no token directory for this realm */
    YK_V_BACKEND                 /* directory or keyring outage */
} yk_verdict;

/* What verify needs to know about one request. */
typedef struct {
    const char *principal;       /* the client, unparsed (log, lookup) */
    const krb5_data *padata;     /* our padata's contents */
    int duplicate;               /* another padata of ours is present */
    int other_auth;              /* another authenticating padata too */
    int armored;                 /* the request came inside FAST */
    /* The client's long-term keys (ending with enctype 0), fetched only
     * when a mode 1 request needs them: asking the KDC decrypts every
     * key of the principal, which mode 2 never uses.  NULL: none. */
    const krb5_keyblock *(*get_client_keys)(void *arg);
    void *keys_arg;
    krb5_deltat max_skew;        /* the KDC's clock skew (s) */
    krb5_timestamp now;          /* the KDC's time (s) */
    uint32_t nonce;              /* the (inner) request's nonce */
    /* RFC 6560: padata is a PA-OTP-REQUEST (142) instead of ours. */
    int rfc6560;
    const krb5_keyblock *armor_key;  /* FAST armor key, NULL: none */
    const krb5_data *challenge_nonce; /* the nonce of our PA-OTP-CHALLENGE,
                                       * from the KDC cookie; NULL: none */
    /* Check password against the client's long-term key (string-to-key
     * with the entry's salt): 0 when it matches, KRB5KDC_ERR_PREAUTH_FAILED
     * when it does not, another code for a failure.  Called at most once,
     * only once the OTP passed every check but the swap. */
    krb5_error_code (*check_password)(void *arg, const char *pw,
                                      size_t len);
    void *password_arg;
} yk_verify_in;

/* The outcome: what to answer and what to log. */
typedef struct {
    krb5_error_code code;        /* 0, KRB5KDC_ERR_PREAUTH_FAILED or
                                  * KRB5KDC_ERR_DISCARD */
    int mode;                    /* YK_MODE_*, 0 when not decoded */
    yk_verdict verdict;
    char pubid[YK_PUBID_MODHEX_MAX + 1]; /* "" until the OTP is parsed */
    int has_counter;             /* set once the OTP decrypted */
    uint32_t counter;
    char detail[YK_DETAIL_LEN];  /* extra words for the log, may be "" */
} yk_verify_out;

/* Make realm's state from profile: configuration, cache, a store that
 * has not connected, the keyring (a load failure is logged and retried
 * later, not an error).  A realm without yubikey_ldap_uri is inactive.
 * A realm whose yubikey settings are invalid (malformed values, only one
 * of yubikey_ldap_uri and yubikey_ldap_base, a SASL mechanism the KDC
 * cannot use: GSSAPI, GSS-SPNEGO) is logged loudly and made misconfigured,
 * so that the other realms work.  Errors: memory only. */
krb5_error_code yk_realm_new(profile_t profile, const char *realm,
                             yk_realm **realm_out);

/* Free a realm's state (wipes the keyring and the bind password); NULL
 * is accepted. */
void yk_realm_free(yk_realm *r);

/* Decide the hint for principal: 0 with *flags_out set when it has an
 * active token (PASSWORD_BOUND, plus OTP_ALONE_OK when armored and its
 * policy is otp), ENOENT for no hint (also for unarmored requests under
 * yubikey_require_fast).  Answered from the cache, with at most one
 * directory lookup per principal per cache TTL and none while the
 * circuit breaker is open (a stale record then serves) -- except that a
 * record without an active token is read again at once when the
 * principal has tokens or requires_hw (+requires_hwauth), so that an
 * enabled token is offered at the next attempt.  No hint for such a
 * principal is logged with the reason ("hint=none principal=P
 * reason=..."). */
krb5_error_code yk_hint_flags(yk_realm *r, const char *principal,
                              int armored, int requires_hw,
                              uint8_t *flags_out);

/* The hint again, for a second padata type of the same request: from the
 * cache only (no directory read, no log line): 0 when principal has an
 * active token, else ENOENT. */
krb5_error_code yk_hint_cached(yk_realm *r, const char *principal,
                               int armored);

/* Run doc/design.md §4 steps 1-6 on one padata of ours; fills *out on
 * every path.
 * out->code 0 means the OTP's counter is committed and the caller must
 * now set the ticket flags, indicators and (mode 2) reply key.  The
 * circuit breaker, the keyring and the principal's record are checked
 * before the password, so that an outage answers alike for any password;
 * the directory work of one call is bounded by YK_BUDGET_FACTOR times
 * yubikey_ldap_timeout, and running out of it is an outage. */
void yk_verify_run(krb5_context ctx, yk_realm *r, const yk_verify_in *in,
                   yk_verify_out *out);

/* An internal failure around the pipeline (why: the error), e.g. a KDC
 * callback failing after the swap: make out an internal failure,
 * answered like an outage.  A committed OTP stays consumed. */
void yk_verify_late_failure(const yk_verify_in *in, yk_verify_out *out,
                            krb5_error_code why);

/* Log one line to the KDC's log, prefixed "yubikey: " (printf format;
 * never pass a secret). */
void yk_kdc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The reason of a verdict, in words (static). */
const char *yk_verdict_reason(yk_verdict v);

/* Format the KDC log line of an attempt into buf (len bytes):
 * "principal=P pubid=ID counter=N mode=M verdict=V reason=R[: detail]",
 * with "-" for an unknown public id, counter or mode; V is accepted,
 * refused or discarded (from out->code).  Holds no secret. */
void yk_verify_format_log(const char *principal, const yk_verify_out *out,
                          char *buf, size_t len);

#endif /* YK_VERIFY_H */
