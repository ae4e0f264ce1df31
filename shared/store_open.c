/* SPDX-License-Identifier: MIT */
/* store_open.c: a new connection opened in a thread, off the KDC's loop. */

/*
 * Opening a connection means name resolution, a TCP connect, a TLS
 * handshake (ldaps:// or StartTLS) and a bind, simple or SASL.  libldap
 * does the connect, the handshake and a SASL bind's exchange in calls
 * that block (each bounded by the timeout: store_conn.c), and a KDC
 * worker blocked there serves nobody.  So when the store runs inside an
 * attempt that may be suspended (store_io.h: the KDC), the whole opening
 * runs in a thread of its own, on a private copy of the store (its
 * configuration copied, the attempt's budget and error buffer its own),
 * while the attempt waits on an eventfd the thread signals when it is
 * done; the worker's loop serves other requests meanwhile.  Then the
 * attempt takes the handle, the error text and the failover state from
 * the copy.  Nothing else of the store is touched by the thread, and the
 * thread never calls the store's io functions (yk_store_in_opener).
 *
 * Every step in the thread is bounded by the same budget the attempt
 * had, so the thread is normally done when the attempt's wait ends.  An
 * attempt that waited its budget and one more timeout gives the opening
 * up: the thread, when it ends, closes what it opened and frees its copy.
 *
 * The thread runs with every signal blocked (krb5kdc's handlers are the
 * loop's business), and is detached.  Before the KDC forks
 * (st->no_threads) and outside an attempt the opening is done in place,
 * as before.
 */

#include <config.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "errors.h"
#include "store_int.h"
#include "store_io.h"

/* Set in an opening's thread: the store blocks there (store_conn.c). */
static __thread int in_opener;

/* See store_int.h. */
int
yk_store_in_opener(void)
{
    return in_opener;
}

enum { OPEN_RUNNING, OPEN_DONE, OPEN_ABANDONED };

typedef struct {
    pthread_mutex_t mu;
    int state;                   /* OPEN_* */
    int efd;                     /* written once when done */
    int write;
    char *uri;
    yk_store st;                 /* the private copy */
    krb5_error_code ret;
} yk_opener;

/* Free an opening's copy: the handle it holds closed, the configuration
 * (and its password) wiped. */
static void
opener_free(yk_opener *op)
{
    yk_conn_drop(op->write ? &op->st.wr : &op->st.rd);
    yk_store_config_clear(&op->st.cfg);
    explicit_bzero(&op->st.at, sizeof(op->st.at));
    free(op->uri);
    if (op->efd >= 0)
        close(op->efd);
    pthread_mutex_destroy(&op->mu);
    free(op);
}

/* The thread: open, then hand over (or clean up when given up). */
static void *
opener_main(void *arg)
{
    yk_opener *op = arg;
    uint64_t one = 1;
    int abandoned;

    in_opener = 1;
    op->ret = yk_conn_open_blocking(&op->st, op->write, op->uri);
    pthread_mutex_lock(&op->mu);
    abandoned = op->state == OPEN_ABANDONED;
    op->state = OPEN_DONE;
    if (!abandoned) {
        while (write(op->efd, &one, sizeof(one)) < 0 && errno == EINTR)
            ;
    }
    pthread_mutex_unlock(&op->mu);
    if (abandoned)
        opener_free(op);
    return NULL;
}

/* A copy of st for an opening of its write (or read) connection. */
static yk_opener *
opener_new(yk_store *st, int write, const char *uri)
{
    yk_opener *op = calloc(1, sizeof(*op));

    if (op == NULL)
        return NULL;
    op->efd = -1;
    if (pthread_mutex_init(&op->mu, NULL) != 0) {
        free(op);
        return NULL;
    }
    op->write = write;
    op->state = OPEN_RUNNING;
    op->st.no_threads = 0;
    op->st.rd.is_write = 0;
    op->st.wr.is_write = 1;
    memcpy(&op->st.at, &st->at, sizeof(st->at));
    op->st.wr_failover = st->wr_failover;
    op->st.wr_failover_ms = st->wr_failover_ms;
    op->st.wr_was_failover = st->wr_was_failover;
    op->uri = strdup(uri);
    op->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (op->uri == NULL || op->efd < 0 ||
        yk_store_config_copy(&st->cfg, &op->st.cfg) != 0) {
        opener_free(op);
        return NULL;
    }
    return op;
}

/* Take what the finished opening op made into st and c. */
static krb5_error_code
opener_take(yk_store *st, yk_conn *c, yk_opener *op)
{
    yk_conn *oc = op->write ? &op->st.wr : &op->st.rd;

    c->ld = oc->ld;
    c->pid = oc->pid;
    c->session = oc->session;
    oc->ld = NULL;
    memcpy(st->at.errbuf, op->st.at.errbuf, sizeof(st->at.errbuf));
    st->at.bind_refused = op->st.at.bind_refused;
    if (op->write) {
        st->wr_failover = op->st.wr_failover;
        st->wr_failover_ms = op->st.wr_failover_ms;
        st->wr_was_failover = op->st.wr_was_failover;
        if (op->st.failover_event != YK_FAILOVER_NONE) {
            st->failover_event = op->st.failover_event;
            memcpy(st->failover_why, op->st.failover_why,
                   sizeof(st->failover_why));
        }
    }
    return op->ret;
}

/* See store_int.h. */
krb5_error_code
yk_conn_open_async(yk_store *st, yk_conn *c, int write, const char *uri,
                   const yk_store_io *io)
{
    krb5_error_code ret;
    struct timeval tv;
    pthread_attr_t attr;
    pthread_t tid;
    sigset_t all, old;
    yk_opener *op;
    int64_t deadline;
    int rc, done;

    ret = yk_op_timeout(st, &tv);
    if (ret)
        return ret;
    op = opener_new(st, write, uri);
    if (op == NULL)
        return yk_conn_open_blocking(st, write, uri);
    if (pthread_attr_init(&attr) != 0) {
        opener_free(op);
        return yk_conn_open_blocking(st, write, uri);
    }
    (void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&tid, &attr, opener_main, op);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        /* No thread (EAGAIN): open in place, as outside the KDC. */
        opener_free(op);
        return yk_conn_open_blocking(st, write, uri);
    }

    /* Every step in the thread ends within what this attempt may wait
     * (tv); one more timeout covers a step that overruns a little. */
    deadline = yk_mono_ms() + (int64_t)tv.tv_sec * 1000 +
        tv.tv_usec / 1000 + st->cfg.timeout_ms;
    if (io->wait_fd(op->efd, deadline) < 0) {
        /* Cannot be watched (ENOMEM): wait here, as outside the KDC. */
        struct pollfd p = { op->efd, POLLIN, 0 };
        int64_t left = deadline - yk_mono_ms();

        if (left > 0)
            (void)poll(&p, 1, (int)left);
    }
    pthread_mutex_lock(&op->mu);
    done = op->state == OPEN_DONE;
    if (!done)
        op->state = OPEN_ABANDONED;
    pthread_mutex_unlock(&op->mu);
    if (!done) {
        yk_store_set_error(st, "connect to %s server: not done within "
                           "%ld ms (given up)", write ? "write" : "read",
                           (long)(tv.tv_sec * 1000 + tv.tv_usec / 1000 +
                                  st->cfg.timeout_ms));
        return YK_ERR_STORE_TIMEOUT;   /* the thread frees op */
    }
    ret = opener_take(st, c, op);
    opener_free(op);
    return ret;
}
