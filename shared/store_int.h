/* SPDX-License-Identifier: MIT */
/* store_int.h: what the store's files share (not for others). */
#ifndef YK_STORE_INT_H
#define YK_STORE_INT_H

#include <signal.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/types.h>

#include <ldap.h>

#include "store.h"
#include "store_io.h"
#include "ykclock.h"   /* yk_mono_ms: the budget's time base */

#define YK_ERRBUF_LEN 512

/* What an LDAP operation was, for translating its result code. */
enum yk_op_kind {
    YK_OP_READ,         /* search or bind */
    YK_OP_WRITE,        /* modify */
    YK_OP_ADD_TOKEN     /* modify adding a public id (uniqueness) */
};

/* One connection: the handle and the process that opened it. */
typedef struct {
    LDAP *ld;
    pid_t pid;
    int is_write;
    int opening;                 /* an attempt is opening it (others
                                  * wait: store_io.h) */
    int session;                 /* bound or TLS started: its socket is
                                  * ours, and gone means closed */
    int waiting;                 /* attempts waiting for an answer on it
                                  * (suspended: store_io.h) */
} yk_conn;

/* Where principals are searched: a base and a scope. */
typedef struct {
    char *base;
    int scope;
} yk_target;

struct yk_store {
    yk_store_config cfg;
    yk_conn rd;
    yk_conn wr;
    yk_target *targets;          /* resolved search bases */
    size_t ntargets;
    int no_threads;              /* no name lookup in a thread (before
                                  * the KDC forks) */
    /* One attempt's part: kept by each attempt across its waits when
     * several are in flight (store_io.h; store_conn.c, yk_conn_wait). */
    struct {
        int64_t deadline_ms;     /* the caller's budget ends (monotonic
                                  * ms), 0 = no budget */
        int bind_refused;        /* the last failure was a refused bind */
        int rival;               /* YK_RIVAL_* of the last swap */
        size_t leftovers;        /* lower state values the last swap's
                                  * clean-up removed */
        char errbuf[YK_ERRBUF_LEN]; /* the last LDAP error, for logs */
    } at;
    int wr_failover;             /* wr is open on write_failover_uri */
    int64_t wr_failover_ms;      /* ... since then (monotonic ms) */
    int wr_was_failover;         /* the last write connection opened was
                                  * the failover's */
    int failover_event;          /* YK_FAILOVER_*, not yet reported */
    char failover_why[YK_ERRBUF_LEN]; /* why the write server failed */
};

/* The signal mask to restore after an LDAP call, and whether SIGPIPE
 * was already pending (then it is not ours to consume). */
typedef struct {
    sigset_t old;
    int was_pending;
    int skip;                    /* SIGPIPE is caught: nothing to do */
} yk_sigpipe_guard;

/* Block SIGPIPE for the LDAP calls that follow (libldap writes with
 * write(), and SIGPIPE may kill the process), unless the process is
 * known to catch it (yk_store_sigpipe_check). */
void yk_sigpipe_block(yk_sigpipe_guard *g);

/* Consume a SIGPIPE the LDAP calls raised, then restore the mask. */
void yk_sigpipe_restore(yk_sigpipe_guard *g);

/* Remember a description of the last LDAP failure (no secrets in it). */
void yk_store_set_error(yk_store *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Close c's connection; see store_conn.c. */
void yk_conn_drop(yk_conn *c);

/* How long the next operation may wait, into *tv (the per-operation
 * timeout or what is left of the budget); YK_ERR_STORE_TIMEOUT when the
 * budget is spent (then nothing may be sent). */
krb5_error_code yk_op_timeout(yk_store *st, struct timeval *tv);

/* Record the failure of what (an LDAP code rc, its diagnostic diag) on c,
 * drop c when the code says it is unusable; our error code. */
krb5_error_code yk_conn_fail(yk_store *st, yk_conn *c, const char *what,
                             int rc, const char *diag,
                             enum yk_op_kind kind);

/* A usable handle for the read (write 0) or write side, connecting (and
 * binding) if needed. */
krb5_error_code yk_conn_get(yk_store *st, int write, yk_conn **c_out);

/* Open (connect and bind) the write (or read) connection of st on uri
 * in place, blocking: resolution, connect, TLS and bind (store_conn.c). */
krb5_error_code yk_conn_open_blocking(yk_store *st, int write,
                                      const char *uri);
/* The same, in a thread, while the current attempt waits through io
 * (store_open.c); falls back to yk_conn_open_blocking when no thread can
 * be made. */
krb5_error_code yk_conn_open_async(yk_store *st, yk_conn *c, int write,
                                   const char *uri, const yk_store_io *io);
/* Nonzero in an opening's thread (store_open.c): the store blocks, and
 * never calls its io functions. */
int yk_store_in_opener(void);
/* Wait for the whole result of msgid on c, at most the timeout. */
krb5_error_code yk_conn_wait(yk_store *st, yk_conn *c, int msgid,
                             const char *what, enum yk_op_kind kind,
                             LDAPMessage **res_out);

/* Check the final result of res (freed here); translate its code. */
krb5_error_code yk_conn_check_result(yk_store *st, yk_conn *c,
                                     LDAPMessage *res, const char *what,
                                     enum yk_op_kind kind);

/* yk_conn_check_result that also hands back the result's controls
 * (*ctrls_out, NULL when none; free with ldap_controls_free) when the
 * operation succeeded. */
krb5_error_code yk_conn_check_result_ctrls(yk_store *st, yk_conn *c,
                                           LDAPMessage *res,
                                           const char *what,
                                           enum yk_op_kind kind,
                                           LDAPControl ***ctrls_out);

/* The result of an operation sent (rc: what sending returned, msgid its
 * id), awaited and checked: yk_conn_fail, yk_conn_wait and
 * yk_conn_check_result in one. */
krb5_error_code yk_conn_finish(yk_store *st, yk_conn *c, int rc, int msgid,
                               const char *what, enum yk_op_kind kind);

/* The token attributes (ldap-schema/yubikey.schema). */
#define YK_AUX_CLASS "yubikeyPrincipalAux"
#define YK_ATTR_PUBID "yubikeyPublicId"
#define YK_ATTR_SECRET "yubikeyTokenSecret"
#define YK_ATTR_STATE "yubikeyTokenState"
#define YK_ATTR_POLICY "yubikeyPolicy"

/* A modification list under construction; values point to the caller's
 * strings, the list owns only its arrays. */
typedef struct {
    LDAPMod **mods;
    size_t n;
} yk_modlist;

/* --- store.c, store_entry.c and store_admin.c share these ----------- */

/* A malloc'd NUL-terminated copy of n bytes. */
char *yk_dup_bytes(const char *v, size_t n);

/* Parse one search result entry into a new yk_entry. */
krb5_error_code yk_entry_parse(LDAP *ld, LDAPMessage *msg,
                               const char *principal, yk_entry **out);

/* Append a modification op on attr with nvals values (lens NULL: the
 * values are NUL-terminated). */
krb5_error_code yk_modlist_add(yk_modlist *ml, int op, const char *attr,
                               size_t nvals, char *const *vals,
                               const size_t *lens);

/* Append a modification with a single NUL-terminated value. */
krb5_error_code yk_modlist_add1(yk_modlist *ml, int op, const char *attr,
                                const char *val);

/* Free a modification list (not the values it points to). */
void yk_modlist_free(yk_modlist *ml);

/* Send one modify of dn on the write server and wait for its result.
 * With assertion set (a filter), the modify carries the LDAP assertion
 * control (RFC 4528, critical): the server applies it only while the
 * entry matches the filter, else assertionFailed (a conflict).  With
 * postread_out set, it asks for the state values as the modify left
 * them (post-read); *postread_out holds the result's controls (NULL
 * when none; ldap_controls_free). */
krb5_error_code yk_modify_entry(yk_store *st, const char *dn, yk_modlist *ml,
                                const char *assertion,
                                LDAPControl ***postread_out,
                                enum yk_op_kind kind);

/* yk_modify_entry with SIGPIPE blocked, without an assertion. */
krb5_error_code yk_store_modify(yk_store *st, const char *dn, yk_modlist *ml,
                                enum yk_op_kind kind);

/* Add to ml the deletion of every state value of tok read (the winner
 * and the extras); *n_out says how many. */
krb5_error_code yk_modlist_del_states(yk_modlist *ml, const yk_token *tok,
                                      size_t *n_out);

/* Add to ml the deletion of every secret value of tok read. */
krb5_error_code yk_modlist_del_secrets(yk_modlist *ml, const yk_token *tok,
                                       size_t *n_out);

#endif /* YK_STORE_INT_H */
