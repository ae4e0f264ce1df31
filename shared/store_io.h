/* SPDX-License-Identifier: MIT */
/* store_io.h: how the store waits, when it must not block (the KDC). */
#ifndef YK_STORE_IO_H
#define YK_STORE_IO_H

#include <stdint.h>

#include <ldap.h>

/*
 * The store sends every LDAP operation without waiting and then waits
 * for its result (store_conn.c, yk_conn_wait).  By default it waits in
 * ldap_result(), blocking the process.  The KDC module runs each attempt
 * as a coroutine on the worker's event loop (kdcplugin/async.c) and
 * installs these functions: inside such a coroutine a wait suspends the
 * attempt, and the worker serves other requests until slapd answers or
 * the deadline passes.  Outside one (ykadmin, the kadm5 hook, the KDC's
 * start) the store blocks as before.
 *
 * Deadlines are yk_mono_ms() times.  Only the coroutine that waits is
 * suspended: the store keeps the per-attempt part of its state (budget,
 * last error, rival verdict) across each wait itself.
 */
typedef struct {
    /* Nonzero inside a coroutine that may be suspended. */
    int (*active)(void);
    /* The whole result of msgid on ld into *res_out: 1, or 0 when the
     * deadline passed first, or -1 when the connection failed (or was
     * forgotten) meanwhile. */
    int (*result)(LDAP *ld, int msgid, int64_t deadline_ms,
                  LDAPMessage **res_out);
    /* ld is about to be closed: whoever waits on it gets -1. */
    void (*forget)(LDAP *ld);
    /* Wait until wake(key) or the deadline: 1 woken, 0 deadline. */
    int (*wait)(const void *key, int64_t deadline_ms);
    /* Wake every waiter on key. */
    void (*wake)(const void *key);
    /* Wait until fd is readable or the deadline: 1 readable, 0
     * deadline, -1 when it cannot be watched. */
    int (*wait_fd)(int fd, int64_t deadline_ms);
} yk_store_io;

/* Whether the process catches or ignores SIGPIPE now; once it is seen
 * to, the store no longer blocks SIGPIPE around its LDAP calls.  For a
 * process that never lets SIGPIPE kill it again once it is caught (the
 * KDC after its loop's setup). */
int yk_store_sigpipe_check(void);
/* What yk_store_sigpipe_check saw last (no system call). */
int yk_store_sigpipe_caught(void);

/* Install io for every store of the process (NULL: block). */
void yk_store_set_io(const yk_store_io *io);

#endif /* YK_STORE_IO_H */
