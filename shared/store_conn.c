/* SPDX-License-Identifier: MIT */
/* store_conn.c: the token store's LDAP connections, budget and errors. */

/*
 * Connections.  A store holds two: the read connection (cfg->uri) and the
 * write connection (cfg->write_uri, defaulting to uri), which takes the
 * compare-and-swap, the admin writes and every "fresh" read.  Both open
 * lazily on first use (the KDC forks its workers after loading the
 * module), are checked before each use (a peer that closed the socket is
 * noticed without sending anything), and are dropped after a server-down,
 * connect or timeout error so that the next call reconnects.  A connection
 * inherited across fork() is forgotten without touching the parent's
 * session.  In the KDC, inside an attempt, the opening (resolution,
 * connect, TLS, bind) runs in a thread while the attempt waits
 * (store_open.c); elsewhere it is done in place.  Every operation waits
 * at most cfg->timeout_ms, and less when
 * the caller's time budget (yk_store_set_budget: one KDC attempt, all its
 * operations together) has less left; nothing is sent once it is spent.
 * A simple bind is sent like any other operation (so the budget bounds
 * it after the connect); a SASL bind's steps each wait at most what was
 * left when it started.  libldap
 * writes to its socket with write(), and a process may let SIGPIPE kill
 * it (krb5kdc does until its loop is set up, ykadmin always): every LDAP
 * call here runs with SIGPIPE blocked, and a SIGPIPE it raised is
 * consumed before the mask is restored.  Once the process is seen to
 * catch SIGPIPE (yk_store_sigpipe_check: the KDC's loop catches and
 * drops it) the guards are skipped: a write to a closed socket then
 * fails with EPIPE, which libldap reports as the connection lost.
 *
 * TLS.  An ldaps:// URI, or yubikey_ldap_starttls with an ldap:// one,
 * makes the connection verify the server: certificate required
 * (LDAP_OPT_X_TLS_DEMAND), chaining to yubikey_ldap_tls_cacert (else
 * libldap's default CA file) and naming the URI's host, checked by
 * libldap; each handle gets its own TLS context.  Such a connection is
 * made explicitly before the bind: TCP (and the handshake for ldaps://),
 * then StartTLS when configured (never over ldapi://, never on a
 * connection that is TLS already), each step within the timeout and the
 * budget (the connect is asynchronous: libldap 2.5 bounds a handshake
 * by LDAP_OPT_NETWORK_TIMEOUT only then, and else spins for ever on a
 * server that accepts and says nothing).  A StartTLS the server
 * refuses, or a handshake that fails,
 * fails the connection: nothing falls back to plain.  libldap says
 * nothing useful about a failed handshake (with GnuTLS its text is
 * "(unknown error code)" for a wrong CA and a wrong name alike), so a
 * failed handshake is tried once more without verification: when that
 * one succeeds the server speaks TLS and its certificate is what was
 * refused (YK_ERR_STORE_TLS, a configuration error), and the error says
 * what to check; else it stays an outage.  The diagnostic connection is
 * closed at once; nothing but the handshake and an unbind goes over it.
 *
 * Write failover (cfg->write_failover_uri, off by default): when the
 * write connection must be opened and the write server is unreachable
 * (connect, name resolution or timeout; not a refused bind, which is a
 * configuration error), it is opened on the failover instead, within the
 * same budget, and kept there cfg->failover_hold_s seconds at most (the
 * breaker time): the next write after that tries the write server again.
 * Each switch, and each return, is reported once to the caller
 * (yk_store_failover_event), which logs it.
 *
 * LDAP result codes are translated here, once (yk_ldap_error).
 */

#define _GNU_SOURCE 1  /* getaddrinfo_a */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include <ldap.h>

#include "errors.h"
#include "store_int.h"
#include "store_io.h"

#define YK_URI_MAX 1024              /* one URI of a list, at most */


/* Set once SIGPIPE is known to be caught or ignored by the process (the
 * KDC's loop catches it): the guards are then skipped. */
static int sigpipe_caught;

/* See store_io.h. */
int
yk_store_sigpipe_check(void)
{
    struct sigaction sa;

    if (!sigpipe_caught && sigaction(SIGPIPE, NULL, &sa) == 0 &&
        ((sa.sa_flags & SA_SIGINFO) || sa.sa_handler != SIG_DFL))
        sigpipe_caught = 1;
    return sigpipe_caught;
}

/* See store_io.h. */
int
yk_store_sigpipe_caught(void)
{
    return sigpipe_caught;
}

/* Block SIGPIPE for the LDAP calls that follow (unless it is caught). */
void
yk_sigpipe_block(yk_sigpipe_guard *g)
{
    sigset_t set, pending;

    g->skip = sigpipe_caught;
    if (g->skip)
        return;
    sigemptyset(&pending);
    sigpending(&pending);
    g->was_pending = sigismember(&pending, SIGPIPE) == 1;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, &g->old);
}

/* Consume a SIGPIPE the LDAP calls raised, then restore the mask. */
void
yk_sigpipe_restore(yk_sigpipe_guard *g)
{
    sigset_t set, pending;
    struct timespec zero = { 0, 0 };

    if (g->skip)
        return;
    sigemptyset(&pending);
    sigpending(&pending);
    if (!g->was_pending && sigismember(&pending, SIGPIPE) == 1) {
        sigemptyset(&set);
        sigaddset(&set, SIGPIPE);
        while (sigtimedwait(&set, NULL, &zero) < 0 && errno == EINTR)
            ;
    }
    pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

/* The store's waits when they must not block (store_io.h); NULL: block. */
static const yk_store_io *store_io;

/* See store_io.h. */
void
yk_store_set_io(const yk_store_io *io)
{
    store_io = io;
}

/* Whether waits suspend the current attempt instead of blocking. */
static int
io_suspends(void)
{
    return store_io != NULL && !yk_store_in_opener() && store_io->active();
}

/* A timed-out wait (tv: what it could wait) described: the budget's end
 * or the per-operation timeout. */
static void
wait_timed_out(yk_store *st, yk_conn *c, const char *what,
               const struct timeval *tv)
{
    int ms = (int)(tv->tv_sec * 1000 + tv->tv_usec / 1000);

    if (ms < st->cfg.timeout_ms)
        yk_store_set_error(st, "%s on %s server: no answer within the %d ms "
                           "left of the attempt's time budget", what,
                           c->is_write ? "write" : "read", ms);
    else
        yk_store_set_error(st, "%s on %s server: no answer within %d ms",
                           what, c->is_write ? "write" : "read",
                           st->cfg.timeout_ms);
}

/* Remember a description of the last LDAP failure (no secrets in it). */
void
yk_store_set_error(yk_store *st, const char *fmt, ...)
{
    va_list ap;

    st->at.bind_refused = 0;
    va_start(ap, fmt);
    vsnprintf(st->at.errbuf, sizeof(st->at.errbuf), fmt, ap);
    va_end(ap);
}

/* Translate an LDAP result code (and its diagnostic text) into ours: the
 * one place where LDAP codes are interpreted. */
static krb5_error_code
yk_ldap_error(int rc, const char *diag, enum yk_op_kind kind)
{
    int write = kind != YK_OP_READ;

    switch (rc) {
    case LDAP_SUCCESS:
        return 0;
    case LDAP_NO_SUCH_ATTRIBUTE:
    case LDAP_ASSERTION_FAILED:
        /* A value read is gone, or the entry no longer holds the secret
         * asserted: someone else wrote first. */
        return YK_ERR_STORE_CONFLICT;
    case LDAP_TYPE_OR_VALUE_EXISTS:
    case LDAP_CONSTRAINT_VIOLATION:
        /* slapo-unique answers constraintViolation; the same entry
         * answers typeOrValueExists. */
        if (kind == YK_OP_ADD_TOKEN)
            return YK_ERR_STORE_EXISTS;
        return rc == LDAP_TYPE_OR_VALUE_EXISTS ? YK_ERR_STORE_CONFLICT :
            YK_ERR_STORE_UNAVAILABLE;
    case LDAP_NO_SUCH_OBJECT:
        return YK_ERR_STORE_NOT_FOUND;
    case LDAP_INSUFFICIENT_ACCESS:
    case LDAP_INVALID_CREDENTIALS:
    case LDAP_INAPPROPRIATE_AUTH:
    case LDAP_STRONG_AUTH_REQUIRED:
    case LDAP_CONFIDENTIALITY_REQUIRED:
    case LDAP_AUTH_METHOD_NOT_SUPPORTED:
        return YK_ERR_STORE_ACCESS;
    case LDAP_TIMEOUT:
    case LDAP_TIMELIMIT_EXCEEDED:
        return YK_ERR_STORE_TIMEOUT;
    case LDAP_UNWILLING_TO_PERFORM:
    case LDAP_REFERRAL:
        /* A replica answers writes with a referral or "shadow context". */
        return write ? YK_ERR_STORE_READONLY : YK_ERR_STORE_UNAVAILABLE;
    case LDAP_NO_MEMORY:
        return ENOMEM;
    case LDAP_PARAM_ERROR:
    case LDAP_FILTER_ERROR:
    case LDAP_INVALID_DN_SYNTAX:
    case LDAP_NOT_SUPPORTED:
        return YK_ERR_CONFIG;
    default:
        if (write && diag != NULL && strstr(diag, "shadow context") != NULL)
            return YK_ERR_STORE_READONLY;
        /* Server down, connect error, busy, unavailable and the rest. */
        return YK_ERR_STORE_UNAVAILABLE;
    }
}

/* Whether a result code means the connection is unusable from now on. */
static int
ldap_error_drops(int rc)
{
    return rc < 0 || rc == LDAP_BUSY || rc == LDAP_UNAVAILABLE;
}

/* This process's id, which a connection records when it is opened: a
 * handle inherited across a fork (krb5kdc -w forks its workers after
 * loading the module) belongs to the parent's session.  The check runs on
 * every use of a connection, and getpid is a system call: the id is
 * cached, and forgotten in a fork's child (atfork handler).  When the
 * handler cannot be registered, every call asks the kernel. */
static pthread_once_t pid_once = PTHREAD_ONCE_INIT;
static int pid_cacheable;
static pid_t pid_cached;

static void
pid_forget(void)
{
    __atomic_store_n(&pid_cached, (pid_t)0, __ATOMIC_RELAXED);
}

static void
pid_setup(void)
{
    pid_cacheable = pthread_atfork(NULL, NULL, pid_forget) == 0;
}

static pid_t
self_pid(void)
{
    pid_t pid;

    (void)pthread_once(&pid_once, pid_setup);
    if (!pid_cacheable)
        return getpid();
    pid = __atomic_load_n(&pid_cached, __ATOMIC_RELAXED);
    if (pid == 0) {
        pid = getpid();
        __atomic_store_n(&pid_cached, pid, __ATOMIC_RELAXED);
    }
    return pid;
}

/* Close c's connection (sending an unbind); a handle inherited from
 * another process is closed without writing to the parent's session. */
void
yk_conn_drop(yk_conn *c)
{
    yk_sigpipe_guard g;
    ber_socket_t fd = -1;
    int devnull;

    if (c->ld == NULL)
        return;
    if (store_io != NULL && !yk_store_in_opener())
        store_io->forget(c->ld);
    yk_sigpipe_block(&g);
    if (c->pid != self_pid() &&
        ldap_get_option(c->ld, LDAP_OPT_DESC, &fd) == LDAP_OPT_SUCCESS &&
        fd >= 0) {
        /* Point our copy of the socket at /dev/null: the unbind below
         * then goes nowhere and the parent's session stays intact. */
        devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (devnull >= 0) {
            (void)dup2(devnull, fd);
            close(devnull);
        }
    }
    ldap_unbind_ext_s(c->ld, NULL, NULL);
    c->ld = NULL;
    c->session = 0;
    yk_sigpipe_restore(&g);
}

/* Whether an idle connection's peer has closed it (EOF or error on the
 * socket).  Never sends anything.  An anonymous handle whose first
 * operation has not connected yet is alive; a bound or TLS one without a
 * socket is not: libldap closed it, and would reopen it on the next
 * operation without the bind, and in plain where StartTLS was used. */
static int
yk_conn_alive(yk_conn *c)
{
    ber_socket_t fd = -1;
    struct pollfd p;
    char byte;
    ssize_t n;

    if (ldap_get_option(c->ld, LDAP_OPT_DESC, &fd) != LDAP_OPT_SUCCESS ||
        fd < 0)
        return !c->session;
    p.fd = fd;
    p.events = POLLIN;
#ifdef POLLRDHUP
    p.events |= POLLRDHUP;
#endif
    p.revents = 0;
    if (poll(&p, 1, 0) <= 0)
        return 1;
    if (p.revents & (POLLERR | POLLHUP | POLLNVAL))
        return 0;
#ifdef POLLRDHUP
    /* The server shut its side: nothing more will come.  Over TLS its
     * close_notify may wait unread before the end of the stream, which
     * the peek below would take for data.  Unless an answer another
     * attempt waits for may be in what is left to read. */
    if ((p.revents & POLLRDHUP) && c->waiting == 0)
        return 0;
#endif
    /* Readable while idle: EOF means closed; data (a TLS record, a
     * notice of disconnection) is left for the library to handle. */
    n = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
                               errno == EINTR));
}

/* How long the next operation may wait, into *tv: the per-operation
 * timeout, or what is left of the budget when that is less (so never
 * zero, which libldap would refuse or read as "no limit").  With the
 * budget spent: YK_ERR_STORE_TIMEOUT, and the operation is not sent. */
krb5_error_code
yk_op_timeout(yk_store *st, struct timeval *tv)
{
    int64_t left;
    int ms = st->cfg.timeout_ms > 0 ? st->cfg.timeout_ms :
        YK_DEFAULT_TIMEOUT_MS;

    if (st->at.deadline_ms != 0) {
        left = st->at.deadline_ms - yk_mono_ms();
        if (left <= 0) {
            yk_store_set_error(st, "the attempt's time budget is spent: no further "
                      "LDAP operation sent");
            return YK_ERR_STORE_TIMEOUT;
        }
        if (left < ms)
            ms = (int)left;
    }
    tv->tv_sec = ms / 1000;
    tv->tv_usec = (ms % 1000) * 1000;
    return 0;
}

/* SASL interaction: answer nothing, so mechanisms that need no prompts
 * (EXTERNAL, GSSAPI) use their defaults. */
static int
sasl_no_prompts(LDAP *ld, unsigned flags, void *defaults, void *in)
{
    return LDAP_SUCCESS;
}

/* Record an LDAP failure on c: describe it, drop the connection when it
 * is unusable, and return our code. */
krb5_error_code
yk_conn_fail(yk_store *st, yk_conn *c, const char *what, int rc,
          const char *diag, enum yk_op_kind kind)
{
    yk_store_set_error(st, "%s on %s server: %s%s%s", what,
              c->is_write ? "write" : "read", ldap_err2string(rc),
              diag != NULL && *diag != '\0' ? ": " : "",
              diag != NULL ? diag : "");
    if (ldap_error_drops(rc))
        yk_conn_drop(c);
    return yk_ldap_error(rc, diag, kind);
}


/* Send a simple bind as cfg->bind_dn on c and wait for its result (within
 * the timeout and the budget, like any operation). */
static krb5_error_code
conn_simple_bind(yk_store *st, yk_conn *c)
{
    struct berval cred;
    int rc, msgid;

    cred.bv_val = st->cfg.password;
    cred.bv_len = strlen(st->cfg.password);
    rc = ldap_sasl_bind(c->ld, st->cfg.bind_dn, LDAP_SASL_SIMPLE, &cred,
                        NULL, NULL, &msgid);
    return yk_conn_finish(st, c, rc, msgid, "bind", YK_OP_READ);
}

/* The end of an operation sent without waiting (rc: what sending it
 * returned, msgid its id): its result awaited and checked. */
krb5_error_code
yk_conn_finish(yk_store *st, yk_conn *c, int rc, int msgid,
               const char *what, enum yk_op_kind kind)
{
    krb5_error_code ret;
    LDAPMessage *res = NULL;

    if (rc != LDAP_SUCCESS)
        return yk_conn_fail(st, c, what, rc, NULL, kind);
    ret = yk_conn_wait(st, c, msgid, what, kind, &res);
    if (ret)
        return ret;
    return yk_conn_check_result(st, c, res, what, kind);
}

/* Whether uri (a list) names an ldaps:// server. */
static int
uri_has_ldaps(const char *uri)
{
    const char *p;

    for (p = uri; *p != '\0'; p++) {
        if (strncasecmp(p, "ldaps://", 8) == 0)
            return 1;
    }
    return 0;
}

/* Whether c's socket is a local (ldapi://) one. */
static int
conn_is_local(yk_conn *c)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof(sa);
    ber_socket_t fd = -1;

    if (ldap_get_option(c->ld, LDAP_OPT_DESC, &fd) != LDAP_OPT_SUCCESS ||
        fd < 0 || getsockname(fd, (struct sockaddr *)&sa, &len) != 0)
        return 0;
    return sa.ss_family == AF_UNIX;
}

/* What the server's certificate must chain to, in words for errors. */
static const char *
tls_ca_words(const yk_store *st, char *buf, size_t len)
{
    if (st->cfg.tls_cacert == NULL)
        return "libldap's default CA file (ldap.conf TLS_CACERT; "
            "yubikey_ldap_tls_cacert is unset)";
    snprintf(buf, len, "yubikey_ldap_tls_cacert = %s", st->cfg.tls_cacert);
    return buf;
}

/* Give c its own TLS context: certificates checked as require says
 * (LDAP_OPT_X_TLS_DEMAND, or ALLOW for the diagnosis), the configured CA
 * file; and an asynchronous connect, so that the handshake is bounded.
 * A CA file libldap cannot load is YK_ERR_STORE_TLS. */
static krb5_error_code
conn_tls_options(yk_store *st, yk_conn *c, int require)
{
    char *diag = NULL, ca[YK_ERRBUF_LEN / 2];
    int zero = 0, rc;

    /* Asynchronous connect: libldap 2.5 bounds a TLS handshake by the
     * network timeout only then; without it a server that accepts and
     * stays silent keeps it spinning (100% CPU) for ever. */
    rc = ldap_set_option(c->ld, LDAP_OPT_CONNECT_ASYNC, LDAP_OPT_ON);
    if (rc == LDAP_OPT_SUCCESS)
        rc = ldap_set_option(c->ld, LDAP_OPT_X_TLS_REQUIRE_CERT, &require);
    if (rc == LDAP_OPT_SUCCESS && st->cfg.tls_cacert != NULL)
        rc = ldap_set_option(c->ld, LDAP_OPT_X_TLS_CACERTFILE,
                             st->cfg.tls_cacert);
    if (rc == LDAP_OPT_SUCCESS)
        rc = ldap_set_option(c->ld, LDAP_OPT_X_TLS_NEWCTX, &zero);
    if (rc == LDAP_OPT_SUCCESS)
        return 0;
    (void)ldap_get_option(c->ld, LDAP_OPT_DIAGNOSTIC_MESSAGE, &diag);
    yk_store_set_error(st, "TLS with the %s server: cannot load the CA "
                       "certificates of %s%s%s", c->is_write ? "write" :
                       "read", tls_ca_words(st, ca, sizeof(ca)),
                       diag != NULL ? ": " : "", diag != NULL ? diag : "");
    ldap_memfree(diag);
    return YK_ERR_STORE_TLS;
}

/* Set c's connect timeout to what the next step may wait (the handshake
 * is bounded by it too); YK_ERR_STORE_TIMEOUT when the budget is spent. */
static krb5_error_code
conn_step_timeout(yk_store *st, yk_conn *c)
{
    krb5_error_code ret;
    struct timeval tv;

    ret = yk_op_timeout(st, &tv);
    if (ret)
        return ret;
    if (ldap_set_option(c->ld, LDAP_OPT_NETWORK_TIMEOUT, &tv) !=
        LDAP_OPT_SUCCESS) {
        yk_store_set_error(st, "cannot set LDAP options");
        return YK_ERR_STORE_UNAVAILABLE;
    }
    return 0;
}

/* A TLS handshake on c failed (rc): describe it, set *handshake_out,
 * drop c. */
static krb5_error_code
conn_handshake_failed(yk_store *st, yk_conn *c, int rc, int *handshake_out)
{
    char *diag = NULL;

    (void)ldap_get_option(c->ld, LDAP_OPT_DIAGNOSTIC_MESSAGE, &diag);
    yk_store_set_error(st, "TLS handshake with the %s server failed: %s%s%s",
                       c->is_write ? "write" : "read", ldap_err2string(rc),
                       diag != NULL ? ": " : "", diag != NULL ? diag : "");
    ldap_memfree(diag);
    *handshake_out = 1;
    yk_conn_drop(c);
    return YK_ERR_STORE_UNAVAILABLE;
}

/* Connect c with TLS: TCP (with the handshake for ldaps://), then
 * StartTLS when configured, each step within the timeout and the budget.
 * On failure the caller drops c; *handshake_out says whether the server
 * was reached and a handshake failed (see the top of this file). */
static krb5_error_code
conn_tls_connect(yk_store *st, yk_conn *c, const char *uri,
                 int *handshake_out)
{
    krb5_error_code ret;
    LDAPMessage *res = NULL;
    char *diag = NULL;
    int rc, msgid, err = LDAP_SUCCESS;

    *handshake_out = 0;
    ret = conn_step_timeout(st, c);
    if (ret)
        return ret;
    rc = ldap_connect(c->ld);
    if (rc != LDAP_SUCCESS) {
        /* A refused TCP connect leaves no diagnostic; a handshake
         * that failed leaves one. */
        if (uri_has_ldaps(uri) &&
            ldap_get_option(c->ld, LDAP_OPT_DIAGNOSTIC_MESSAGE, &diag) ==
            LDAP_OPT_SUCCESS && diag != NULL && *diag != '\0') {
            ldap_memfree(diag);
            return conn_handshake_failed(st, c, rc, handshake_out);
        }
        ldap_memfree(diag);
        return yk_conn_fail(st, c, "connect", rc, NULL, YK_OP_READ);
    }
    if (!st->cfg.starttls || ldap_tls_inplace(c->ld) || conn_is_local(c))
        return 0;

    rc = ldap_extended_operation(c->ld, LDAP_EXOP_START_TLS, NULL, NULL,
                                 NULL, &msgid);
    if (rc != LDAP_SUCCESS)
        return yk_conn_fail(st, c, "StartTLS", rc, NULL, YK_OP_READ);
    ret = yk_conn_wait(st, c, msgid, "StartTLS", YK_OP_READ, &res);
    if (ret)
        return ret;
    rc = ldap_parse_result(c->ld, res, &err, NULL, &diag, NULL, NULL, 1);
    if (rc != LDAP_SUCCESS)
        err = rc;
    if (err != LDAP_SUCCESS) {
        yk_store_set_error(st, "StartTLS refused by the %s server: %s%s%s "
                           "(yubikey_ldap_starttls is set: does the server "
                           "have a certificate, TLSCertificateFile?)",
                           c->is_write ? "write" : "read",
                           ldap_err2string(err), diag != NULL ? ": " : "",
                           diag != NULL ? diag : "");
        ldap_memfree(diag);
        yk_conn_drop(c);
        return ldap_error_drops(err) ? YK_ERR_STORE_UNAVAILABLE :
            YK_ERR_STORE_TLS;
    }
    ldap_memfree(diag);
    ret = conn_step_timeout(st, c);
    if (ret) {
        yk_conn_drop(c);
        return ret;
    }
    rc = ldap_install_tls(c->ld);
    if (rc != LDAP_SUCCESS)
        return conn_handshake_failed(st, c, rc, handshake_out);
    return 0;
}

/* Handle options every connection gets; nonzero when one is refused. */
static int
conn_set_options(yk_conn *c, struct timeval *tv)
{
    int version = LDAP_VERSION3;

    return ldap_set_option(c->ld, LDAP_OPT_PROTOCOL_VERSION, &version) ||
        ldap_set_option(c->ld, LDAP_OPT_REFERRALS, LDAP_OPT_OFF) ||
        ldap_set_option(c->ld, LDAP_OPT_NETWORK_TIMEOUT, tv) ||
        ldap_set_option(c->ld, LDAP_OPT_TIMEOUT, tv);
}

/* c's handshake with uri failed (the error is in st): connect once more
 * without verifying the certificate.  When that succeeds, the server's
 * certificate is what was refused: say what to check and return
 * YK_ERR_STORE_TLS; else keep the handshake's error, an outage. */
static krb5_error_code
conn_tls_diagnose(yk_store *st, yk_conn *c, const char *uri)
{
    krb5_error_code ret;
    yk_conn d = { NULL, 0, c->is_write, 0, 0, 0 };
    char saved[YK_ERRBUF_LEN], ca[YK_ERRBUF_LEN / 2];
    struct timeval tv;
    int handshake = 0;

    memcpy(saved, st->at.errbuf, sizeof(saved));
    ret = yk_op_timeout(st, &tv);
    if (ret == 0 && ldap_initialize(&d.ld, uri) == LDAP_SUCCESS) {
        d.pid = self_pid();
        if (conn_set_options(&d, &tv) == 0 &&
            conn_tls_options(st, &d, LDAP_OPT_X_TLS_ALLOW) == 0 &&
            conn_tls_connect(st, &d, uri, &handshake) == 0) {
            yk_conn_drop(&d);
            yk_store_set_error(st, "TLS with the %s server %s: its "
                               "certificate was refused: check that it "
                               "chains to %s and that it names the URI's "
                               "host (subjectAltName)",
                               c->is_write ? "write" : "read", uri,
                               tls_ca_words(st, ca, sizeof(ca)));
            return YK_ERR_STORE_TLS;
        }
        yk_conn_drop(&d);
    }
    memcpy(st->at.errbuf, saved, sizeof(saved));
    return YK_ERR_STORE_UNAVAILABLE;
}

/* Open and bind a new connection on c to uri (with TLS when ldaps:// or
 * StartTLS is configured: see the top of this file).  A bind the
 * directory refuses (YK_ERR_STORE_ACCESS) is remembered:
 * yk_store_bind_refused. */
static krb5_error_code
conn_open(yk_store *st, yk_conn *c, const char *uri)
{
    krb5_error_code ret;
    const yk_store_config *cfg = &st->cfg;
    struct timeval tv;
    int rc, handshake = 0;

    c->session = 0;
    ret = yk_op_timeout(st, &tv);
    if (ret)
        return ret;
    rc = ldap_initialize(&c->ld, uri);
    if (rc != LDAP_SUCCESS) {
        yk_store_set_error(st, "bad LDAP URI \"%s\": %s", uri, ldap_err2string(rc));
        c->ld = NULL;
        return YK_ERR_CONFIG;
    }
    c->pid = self_pid();
    if (conn_set_options(c, &tv)) {
        yk_store_set_error(st, "cannot set LDAP options");
        yk_conn_drop(c);
        return YK_ERR_STORE_UNAVAILABLE;
    }
    if (cfg->starttls || uri_has_ldaps(uri)) {
        ret = conn_tls_options(st, c, LDAP_OPT_X_TLS_DEMAND);
        if (ret) {
            yk_conn_drop(c);
            return ret;
        }
        ret = conn_tls_connect(st, c, uri, &handshake);
        if (ret && handshake)
            ret = conn_tls_diagnose(st, c, uri);
        if (ret) {
            /* Never keep a handle whose TLS did not start: its next
             * operation would connect in plain. */
            yk_conn_drop(c);
            return ret;
        }
        c->session = 1;
    }

    if (cfg->sasl_mech != NULL) {
        rc = ldap_sasl_interactive_bind_s(c->ld, NULL, cfg->sasl_mech, NULL,
                                          NULL, LDAP_SASL_QUIET,
                                          sasl_no_prompts, NULL);
        ret = rc == LDAP_SUCCESS ? 0 :
            yk_conn_fail(st, c, "bind", rc, NULL, YK_OP_READ);
    } else if (cfg->bind_dn != NULL) {
        if (cfg->password == NULL) {
            yk_store_set_error(st, "no password for bind DN %s", cfg->bind_dn);
            yk_conn_drop(c);
            return YK_ERR_CONFIG;
        }
        ret = conn_simple_bind(st, c);
    } else {
        /* Anonymous: LDAPv3 needs no bind; the first operation connects. */
        return 0;
    }
    if (ret) {
        yk_conn_drop(c);
        st->at.bind_refused = ret == YK_ERR_STORE_ACCESS;
        return ret;
    }
    c->session = 1;
    return 0;
}

/* Whether host is an address literal (nothing to resolve). */
static int
host_is_literal(const char *host)
{
    unsigned char buf[sizeof(struct in6_addr)];

    return inet_pton(AF_INET, host, buf) == 1 ||
        inet_pton(AF_INET6, host, buf) == 1;
}

/* One asynchronous name lookup. */
typedef struct yk_lookup {
    struct gaicb cb;
    struct addrinfo hints;       /* read by the lookup's thread */
    struct yk_lookup *next;      /* on the abandoned list */
} yk_lookup;

/* The lookups abandoned while glibc's thread still ran them, freed once
 * it is done (the opening threads share the list). */
static yk_lookup *abandoned;
static pthread_mutex_t abandoned_mu = PTHREAD_MUTEX_INITIALIZER;

static void
abandon(yk_lookup *lk)
{
    pthread_mutex_lock(&abandoned_mu);
    lk->next = abandoned;
    abandoned = lk;
    pthread_mutex_unlock(&abandoned_mu);
}

/* Free the abandoned lookups glibc has finished: only once it has
 * dropped the request from its queue (gai_cancel: EAI_ALLDONE; its
 * result is written before that, and a block freed earlier could come
 * back as a new request glibc would confuse with the old one). */
static void
sweep_abandoned(void)
{
    yk_lookup **pp, *lk;

    pthread_mutex_lock(&abandoned_mu);
    for (pp = &abandoned; *pp != NULL;) {
        lk = *pp;
        if (gai_cancel(&lk->cb) != EAI_ALLDONE) {
            pp = &lk->next;
            continue;
        }
        *pp = lk->next;
        if (lk->cb.ar_result != NULL)
            freeaddrinfo(lk->cb.ar_result);
        free((char *)lk->cb.ar_name);
        free(lk);
    }
    pthread_mutex_unlock(&abandoned_mu);
}

/* Before a connection is opened: resolve the host names of uri within
 * the operation's time (what is left of the budget), so that a resolver
 * that does not answer cannot stall a KDC worker: libldap's own lookup
 * has no bound.  Every host of a list must resolve (libldap tries them
 * in order, and would look up a failed one again without a bound); its
 * own lookup right after then asks a resolver that just answered (fast
 * with a caching resolver; glibc alone keeps no cache).  IP literals and ldapi:// are
 * not looked up, nor anything while st->no_threads is set (the KDC's
 * start, before it forks: the asynchronous lookup runs in a thread).  A
 * lookup that does not finish is abandoned to its thread: its request
 * (glibc's until it is done) goes on a list the next lookup sweeps. */
static krb5_error_code
resolve_bounded(yk_store *st, yk_conn *c, const char *uri)
{
    krb5_error_code ret = 0;
    LDAPURLDesc *u = NULL;
    char one[YK_URI_MAX];
    const char *p = uri;
    size_t len;
    yk_lookup *lk;
    struct gaicb *req, *list[1];
    struct timeval tv;
    struct timespec ts;
    char failed[YK_URI_MAX] = "?";
    int rc, cancel, names = 0, resolved = 0, timed_out = 0, why = 0;
    int bad = 0;                     /* a name did not resolve: stop */

    if (st->no_threads)
        return 0;
    sweep_abandoned();
    /* The list as ldap_initialize reads it: separated by spaces or
     * commas.  A URI that does not parse is left to conn_open. */
    for (; *p != '\0' && ret == 0 && !bad; p += len) {
        p += strspn(p, " \t,");
        len = strcspn(p, " \t,");
        ldap_free_urldesc(u);
        u = NULL;
        if (len == 0 || len >= sizeof(one))
            continue;
        memcpy(one, p, len);
        one[len] = '\0';
        if (ldap_url_parse(one, &u) != LDAP_URL_SUCCESS)
            continue;
        if (u->lud_host == NULL || u->lud_host[0] == '\0' ||
            strcasecmp(u->lud_scheme, "ldapi") == 0 ||
            host_is_literal(u->lud_host))
            continue;
        names++;
        ret = yk_op_timeout(st, &tv);
        if (ret)
            break;
        lk = calloc(1, sizeof(*lk));
        if (lk == NULL) {
            ret = ENOMEM;
            break;
        }
        req = &lk->cb;
        lk->hints.ai_socktype = SOCK_STREAM;
        req->ar_name = strdup(u->lud_host);
        req->ar_request = &lk->hints;
        list[0] = req;
        if (req->ar_name == NULL ||
            getaddrinfo_a(GAI_NOWAIT, list, 1, NULL) != 0) {
            free((char *)req->ar_name);
            free(lk);
            snprintf(failed, sizeof(failed), "%s", u->lud_host);
            bad = 1;
            continue;
        }
        ts.tv_sec = tv.tv_sec;
        ts.tv_nsec = tv.tv_usec * 1000;
        while ((rc = gai_suspend((const struct gaicb *const *)list, 1,
                                 &ts)) == EAI_INTR)
            ;
        rc = gai_error(req);
        if (rc == EAI_INPROGRESS) {
            cancel = gai_cancel(req);
            if (cancel == EAI_ALLDONE) {
                rc = gai_error(req);
            } else if (cancel != EAI_CANCELED) {
                /* Still running in its thread: leave it the request. */
                abandon(lk);
                timed_out = 1;
                snprintf(failed, sizeof(failed), "%s", u->lud_host);
                bad = 1;
                continue;
            }
        }
        if (rc == 0) {
            resolved++;
            freeaddrinfo(req->ar_result);
        } else {
            snprintf(failed, sizeof(failed), "%s", u->lud_host);
            bad = 1;
            why = rc;
            timed_out |= rc == EAI_INPROGRESS || rc == EAI_CANCELED;
        }
        free((char *)req->ar_name);
        free(lk);
    }
    if (ret == 0 && names > 0 && resolved < names) {
        if (timed_out) {
            yk_store_set_error(st, "connect to %s server: the name %s was "
                               "not resolved within %ld ms",
                               c->is_write ? "write" : "read", failed,
                               (long)(tv.tv_sec * 1000 + tv.tv_usec / 1000));
            ret = YK_ERR_STORE_TIMEOUT;
        } else {
            yk_store_set_error(st, "connect to %s server: cannot resolve "
                               "%s: %s", c->is_write ? "write" : "read",
                               failed,
                               why != 0 ? gai_strerror(why) :
                               "lookup not started");
            ret = YK_ERR_STORE_UNAVAILABLE;
        }
    }
    ldap_free_urldesc(u);
    return ret;
}

/* Open c on uri: its name resolved within the budget, then connected
 * and bound. */
static krb5_error_code
conn_resolve_open(yk_store *st, yk_conn *c, const char *uri)
{
    krb5_error_code ret;

    ret = resolve_bounded(st, c, uri);
    if (ret == 0)
        ret = conn_open(st, c, uri);
    return ret;
}

/* Open the write connection: on the write server, or, when it is
 * unreachable (not when it refuses the bind) and a failover is set, on
 * the failover, which is kept failover_hold_s seconds at most so that the
 * write server is tried again soon.  Switches are noted for
 * yk_store_failover_event. */
static krb5_error_code
conn_open_write(yk_store *st, yk_conn *c, const char *uri)
{
    krb5_error_code ret;
    const char *fo = st->cfg.write_failover_uri;
    char fo_err[YK_ERRBUF_LEN];

    st->wr_failover = 0;
    ret = conn_resolve_open(st, c, uri);
    if (ret == 0) {
        if (st->wr_was_failover)
            st->failover_event = YK_FAILOVER_OFF;
        st->wr_was_failover = 0;
        return 0;
    }
    if (fo == NULL ||
        (ret != YK_ERR_STORE_UNAVAILABLE && ret != YK_ERR_STORE_TIMEOUT))
        return ret;
    snprintf(st->failover_why, sizeof(st->failover_why), "%s: %.200s",
             yk_strerror(ret), st->at.errbuf);
    ret = conn_resolve_open(st, c, fo);
    if (ret) {
        snprintf(fo_err, sizeof(fo_err), "%s", st->at.errbuf);
        yk_store_set_error(st, "write server %s: %s; write failover %s: "
                           "%s", uri, st->failover_why, fo, fo_err);
        return ret;
    }
    st->wr_failover = 1;
    st->wr_failover_ms = yk_mono_ms();
    st->wr_was_failover = 1;
    st->failover_event = YK_FAILOVER_ON;
    return 0;
}

/* See store_int.h. */
krb5_error_code
yk_conn_open_blocking(yk_store *st, int write, const char *uri)
{
    return write ? conn_open_write(st, &st->wr, uri) :
        conn_resolve_open(st, &st->rd, uri);
}

/* Wait until the attempt opening c is done (or this one's time is up:
 * then the per-operation timeout or the budget's end, as an operation's
 * wait). */
static krb5_error_code
conn_wait_opening(yk_store *st, yk_conn *c)
{
    __typeof__(st->at) saved;
    struct timeval tv;
    krb5_error_code ret;
    int64_t ms;
    int woken;

    ret = yk_op_timeout(st, &tv);
    if (ret)
        return ret;
    if (!io_suspends()) {
        /* Only an attempt can be suspended while opening. */
        c->opening = 0;
        return 0;
    }
    ms = (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
    memcpy(&saved, &st->at, sizeof(saved));
    woken = store_io->wait(c, yk_mono_ms() + ms);
    memcpy(&st->at, &saved, sizeof(saved));
    explicit_bzero(&saved, sizeof(saved));
    if (woken)
        return 0;
    wait_timed_out(st, c, "connect (opened by another attempt)", &tv);
    return YK_ERR_STORE_TIMEOUT;
}

/* A usable handle for c (read or write side), connecting if needed. */
krb5_error_code
yk_conn_get(yk_store *st, int write, yk_conn **c_out)
{
    krb5_error_code ret;
    yk_conn *c = write ? &st->wr : &st->rd;
    const char *uri = st->cfg.uri;

    if (write && st->cfg.write_uri != NULL)
        uri = st->cfg.write_uri;
    /* Another attempt is opening c (its bind may be in flight): wait for
     * it, within this attempt's time. */
    while (c->opening) {
        ret = conn_wait_opening(st, c);
        if (ret)
            return ret;
    }
    if (c->ld != NULL && (c->pid != self_pid() || !yk_conn_alive(c)))
        yk_conn_drop(c);
    /* Back to the write server once the failover had its time. */
    if (write && c->ld != NULL && st->wr_failover &&
        yk_mono_ms() - st->wr_failover_ms >=
        (int64_t)st->cfg.failover_hold_s * 1000)
        yk_conn_drop(c);
    if (c->ld == NULL) {
        c->opening = 1;
        /* In an attempt that may be suspended, the opening's blocking
         * steps run in a thread while the worker serves others. */
        if (io_suspends() && !st->no_threads && store_io->wait_fd != NULL)
            ret = yk_conn_open_async(st, c, write, uri, store_io);
        else
            ret = yk_conn_open_blocking(st, write, uri);
        c->opening = 0;
        if (store_io != NULL)
            store_io->wake(c);
        if (ret)
            return ret;
    }
    *c_out = c;
    return 0;
}

/* What happened to the write connection since the last call. */
int
yk_store_failover_event(yk_store *st, char *why, size_t len)
{
    int ev;

    if (st == NULL)
        return YK_FAILOVER_NONE;
    ev = st->failover_event;
    st->failover_event = YK_FAILOVER_NONE;
    if (len > 0)
        snprintf(why, len, "%s", ev == YK_FAILOVER_ON ? st->failover_why :
                 "");
    return ev;
}

/* yk_conn_wait inside an attempt that may be suspended: other attempts
 * run meanwhile, on the same connection, so this one keeps its own state
 * (st->at) across the wait, and the connection may be gone (or another
 * one opened) when it resumes.  A timeout abandons the operation; it
 * drops the connection only when the whole per-operation timeout passed
 * (the server does not answer), not when this attempt's budget ran out. */
static krb5_error_code
conn_wait_suspended(yk_store *st, yk_conn *c, int msgid, const char *what,
                    enum yk_op_kind kind, const struct timeval *tv,
                    LDAPMessage **res_out)
{
    __typeof__(st->at) saved;
    LDAP *ld = c->ld;
    LDAPMessage *res = NULL;
    int64_t wait_ms = (int64_t)tv->tv_sec * 1000 + tv->tv_usec / 1000;
    int rc, full;

    memcpy(&saved, &st->at, sizeof(saved));
    c->waiting++;
    rc = store_io->result(ld, msgid, yk_mono_ms() + wait_ms, &res);
    c->waiting--;
    memcpy(&st->at, &saved, sizeof(saved));
    explicit_bzero(&saved, sizeof(saved));
    if (rc == 1 && c->ld != ld) {
        /* Answered, but the connection was closed meanwhile (another
         * attempt's failure): its handle is gone, and with it what the
         * result needs to be read. */
        ldap_msgfree(res);
        yk_store_set_error(st, "%s on %s server: the connection was closed "
                           "while the answer waited", what,
                           c->is_write ? "write" : "read");
        return YK_ERR_STORE_UNAVAILABLE;
    }
    if (rc == 1) {
        *res_out = res;
        return 0;
    }
    if (rc == 0) {
        wait_timed_out(st, c, what, tv);
        full = wait_ms >= (st->cfg.timeout_ms > 0 ? st->cfg.timeout_ms :
                           YK_DEFAULT_TIMEOUT_MS);
        if (c->ld == ld) {
            ldap_abandon_ext(ld, msgid, NULL, NULL);
            if (full)
                yk_conn_drop(c);
        }
        return YK_ERR_STORE_TIMEOUT;
    }
    if (c->ld != ld) {
        yk_store_set_error(st, "%s on %s server: the connection was closed "
                           "while waiting", what,
                           c->is_write ? "write" : "read");
        return YK_ERR_STORE_UNAVAILABLE;
    }
    if (ldap_get_option(ld, LDAP_OPT_RESULT_CODE, &rc) != LDAP_OPT_SUCCESS ||
        rc == LDAP_SUCCESS)
        rc = LDAP_SERVER_DOWN;
    return yk_conn_fail(st, c, what, rc, NULL, kind);
}

/* Wait for the whole result of msgid on c, at most the timeout; on a
 * timeout abandon it and drop the connection.  Inside an attempt that
 * may be suspended (the KDC), the attempt waits and others run: see
 * conn_wait_suspended. */
krb5_error_code
yk_conn_wait(yk_store *st, yk_conn *c, int msgid, const char *what,
          enum yk_op_kind kind, LDAPMessage **res_out)
{
    struct timeval tv = { 0, 0 };
    LDAPMessage *res = NULL;
    int rc = 0;

    if (yk_op_timeout(st, &tv) == 0) {
        if (io_suspends())
            return conn_wait_suspended(st, c, msgid, what, kind, &tv,
                                       res_out);
        rc = ldap_result(c->ld, msgid, LDAP_MSG_ALL, &tv, &res);
    }
    if (rc == 0) {
        /* Timed out, or the budget was spent before the wait. */
        wait_timed_out(st, c, what, &tv);
        ldap_abandon_ext(c->ld, msgid, NULL, NULL);
        yk_conn_drop(c);
        return YK_ERR_STORE_TIMEOUT;
    }
    if (rc < 0 || res == NULL) {
        if (ldap_get_option(c->ld, LDAP_OPT_RESULT_CODE, &rc) !=
            LDAP_OPT_SUCCESS || rc == LDAP_SUCCESS)
            rc = LDAP_SERVER_DOWN;
        ldap_msgfree(res);
        return yk_conn_fail(st, c, what, rc, NULL, kind);
    }
    *res_out = res;
    return 0;
}

/* See store_int.h. */
void
yk_store_sleep_ms(yk_store *st, int ms)
{
    __typeof__(st->at) saved;
    struct timespec ts;
    char key;

    if (io_suspends()) {
        memcpy(&saved, &st->at, sizeof(saved));
        (void)store_io->wait(&key, yk_mono_ms() + ms);
        memcpy(&st->at, &saved, sizeof(saved));
        explicit_bzero(&saved, sizeof(saved));
        return;
    }
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Check the final result of res (freed here); translate its code. */
krb5_error_code
yk_conn_check_result(yk_store *st, yk_conn *c, LDAPMessage *res,
                  const char *what, enum yk_op_kind kind)
{
    return yk_conn_check_result_ctrls(st, c, res, what, kind, NULL);
}

/* See store_int.h. */
krb5_error_code
yk_conn_check_result_ctrls(yk_store *st, yk_conn *c, LDAPMessage *res,
                           const char *what, enum yk_op_kind kind,
                           LDAPControl ***ctrls_out)
{
    krb5_error_code ret;
    char *diag = NULL;
    LDAPControl **ctrls = NULL;
    int rc, err = LDAP_SUCCESS;

    if (ctrls_out != NULL)
        *ctrls_out = NULL;
    rc = ldap_parse_result(c->ld, res, &err, NULL, &diag, NULL,
                           ctrls_out != NULL ? &ctrls : NULL, 1);
    if (rc != LDAP_SUCCESS)
        err = rc;
    if (err == LDAP_SUCCESS) {
        ldap_memfree(diag);
        if (ctrls_out != NULL)
            *ctrls_out = ctrls;
        return 0;
    }
    ldap_controls_free(ctrls);
    ret = yk_conn_fail(st, c, what, err, diag, kind);
    ldap_memfree(diag);
    return ret;
}

/* The last LDAP failure described in words (never holds a secret). */
const char *
yk_store_last_error(const yk_store *st)
{
    if (st == NULL || st->at.errbuf[0] == '\0')
        return "no LDAP error";
    return st->at.errbuf;
}

/* Start (or, with budget_ms <= 0, remove) a time budget; see store.h. */
void
yk_store_set_budget(yk_store *st, int budget_ms)
{
    if (st == NULL)
        return;
    st->at.deadline_ms = budget_ms > 0 ? yk_mono_ms() + budget_ms : 0;
    /* 0 means "no budget": a clock at 0 must not make one vanish. */
    if (budget_ms > 0 && st->at.deadline_ms == 0)
        st->at.deadline_ms = 1;
}

/* Whether the last failure was a refused bind; see store.h. */
int
yk_store_bind_refused(const yk_store *st)
{
    return st != NULL && st->at.bind_refused;
}
