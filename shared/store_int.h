/* SPDX-License-Identifier: MIT */
/* store_int.h: what store.c and store_conn.c share (not for others). */
#ifndef YK_STORE_INT_H
#define YK_STORE_INT_H

#include <signal.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/types.h>

#include <ldap.h>

#include "store.h"

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
    int64_t deadline_ms;         /* the caller's budget ends (monotonic
                                  * ms), 0 = no budget */
    int bind_refused;            /* the last failure was a refused bind */
    int wr_failover;             /* wr is open on write_failover_uri */
    int64_t wr_failover_ms;      /* ... since then (monotonic ms) */
    int wr_was_failover;         /* the last write connection opened was
                                  * the failover's */
    int failover_event;          /* YK_FAILOVER_*, not yet reported */
    int rival;                   /* YK_RIVAL_* of the last swap */
    char failover_why[YK_ERRBUF_LEN]; /* why the write server failed */
    char errbuf[YK_ERRBUF_LEN];  /* the last LDAP error, for logs */
};

/* The signal mask to restore after an LDAP call, and whether SIGPIPE
 * was already pending (then it is not ours to consume). */
typedef struct {
    sigset_t old;
    int was_pending;
} yk_sigpipe_guard;

/* Block SIGPIPE for the LDAP calls that follow (libldap writes with
 * write(), and krb5kdc does not ignore SIGPIPE). */
void yk_sigpipe_block(yk_sigpipe_guard *g);

/* Consume a SIGPIPE the LDAP calls raised, then restore the mask. */
void yk_sigpipe_restore(yk_sigpipe_guard *g);

/* Remember a description of the last LDAP failure (no secrets in it). */
void yk_store_set_error(yk_store *st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Close c's connection; see store_conn.c. */
void yk_conn_drop(yk_conn *c);

/* Milliseconds on the monotonic clock (the budget's time base). */
int64_t yk_mono_ms(void);

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

#endif /* YK_STORE_INT_H */
