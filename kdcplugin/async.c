/* SPDX-License-Identifier: MIT */
/* async.c: attempts as coroutines on the KDC worker's event loop. */

/*
 * MIT's KDC answers preauth verify and edata asynchronously: a module may
 * return before it calls respond, and the worker goes back to its event
 * loop (libverto, cb->event_context) meanwhile.  The pipeline of one
 * attempt (verify.c) is written as plain sequential code that waits for
 * LDAP results; rather than cut it into callbacks, each attempt runs as a
 * coroutine with a stack of its own (see "stacks and switches" for how a
 * switch is made).  When the
 * store waits for a result (store_io.h), the coroutine is suspended and
 * the worker serves other requests; it is resumed from the loop when
 * slapd answers, the deadline passes, or the connection fails.
 *
 * One thread, no locks: only the loop (the main context) resumes a
 * coroutine, a coroutine only ever switches back to the loop, and
 * between two switches nothing else runs.  What is in flight:
 *
 *   - a watch per LDAP handle that has had waiters (verto io, read;
 *     kept between operations): it drains every complete result
 *     libldap can read without blocking
 *     (ldap_result on LDAP_RES_ANY) and hands each to the waiter of its
 *     message id, so that many operations share one connection and may
 *     be answered in any order;
 *   - a timer per waiter (its deadline: the per-operation timeout, or
 *     what is left of the attempt's budget);
 *   - the run queue: waiters whose result, deadline, failure or wake-up
 *     came, resumed in that order from a zero timer.  The watch and the
 *     timers never resume anything themselves: a resumed attempt may
 *     close a connection, and a watch must not be deleted from inside
 *     its own callback while its descriptor is closed.
 *
 * A connection that fails wakes every waiter on it with -1 (the store
 * then answers an outage and reconnects on the next use).  Stacks are
 * mmap'd with a guard page below them and kept for reuse.  Under ASan the
 * switches are announced to it (fiber annotations); under valgrind the
 * stacks are registered with it.
 */

#include <config.h>

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <ldap.h>
#include <verto.h>

#include "async.h"
#include "ykclock.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define YK_HAVE_VALGRIND 1
#endif
#endif

#if defined(__SANITIZE_ADDRESS__)
#define YK_ASAN_FIBERS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define YK_ASAN_FIBERS 1
#endif
#endif
#ifdef YK_ASAN_FIBERS
void __sanitizer_start_switch_fiber(void **fake_stack_save,
                                    const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save,
                                     const void **bottom_old,
                                     size_t *size_old);
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#endif

#define YK_CO_STACK (256 * 1024)  /* one attempt's stack (with TLS, SASL,
                                   * string-to-key and the KDC's reply
                                   * encoding, which respond runs on it) */
#define YK_CO_SPARE 16            /* stacks kept for reuse */

enum yk_wait_kind { YK_W_NONE, YK_W_RESULT, YK_W_KEY, YK_W_FD };

typedef struct yk_co yk_co;
struct yk_co {
    ucontext_t uc;               /* the swapcontext switch */
    void *sp;                    /* the switch of our own: saved stack */
    void *map;                   /* guard page + stack */
    size_t map_len;
    unsigned vg_id;              /* valgrind's stack id */
    void (*fn)(void *);
    void (*fin)(void *);         /* after fn, on the loop's stack */
    void *arg;
    int done;
    /* What it waits for. */
    enum yk_wait_kind kind;
    LDAP *ld;
    int msgid;
    const void *key;
    LDAPMessage *res;
    int status;                  /* what the wait returns */
    verto_ev *timer;
    verto_ev *fdev;              /* YK_W_FD: the descriptor's event */
    int ready;                   /* on the run queue */
    yk_co *next_wait;            /* all waiters */
    yk_co *next_ready;           /* the run queue */
    yk_co *next_free;            /* spare stacks */
#ifdef YK_ASAN_FIBERS
    void *fake_stack;
#endif
};

/* A watched LDAP handle: its descriptor's read events. */
typedef struct yk_watch yk_watch;
struct yk_watch {
    LDAP *ld;
    int fd;
    verto_ev *ev;
    yk_watch *next;
};

static struct {
    verto_ctx *vctx;
    ucontext_t main_uc;
    void *main_sp;
    yk_co *cur;                  /* running coroutine, NULL: the loop */
    yk_co *waiters;
    yk_co *rq_head, *rq_tail;
    verto_ev *rq_ev;
    yk_watch *watches;
    yk_co *spare;
    unsigned nspare;
    unsigned inflight;
#ifdef YK_ASAN_FIBERS
    const void *main_bottom;
    size_t main_size;
#endif
} A;

/* ---- stacks and switches ------------------------------------------------ */

/*
 * A switch by swapcontext also saves and restores the signal mask: one
 * rt_sigprocmask per switch, five per OTP login.  Once the loop catches
 * SIGPIPE the store's guards are off (store_conn.c) and no code of an
 * attempt changes the mask, so on x86-64 the switch is our own:
 * switch_to saves what the ABI makes callee-saved (rbx, rbp, r12-r15, the
 * MXCSR and the x87 control word) on the current stack, stores the stack
 * pointer in *save and takes up the stack at to, no system call.  A new
 * coroutine's stack is made to look as if it had switched away just
 * before entering co_main.  Elsewhere (other machines, or a process
 * running with shadow stacks, whose returns must match calls: rdsspq
 * reads a nonzero shadow stack pointer, and is a no-op without CET),
 * while the guards are on, and in a test build with YK_TEST_UCONTEXT=1
 * in the environment: swapcontext.  The choice is made once per process,
 * before its first coroutine, and never changes.
 */
#if defined(__x86_64__) && defined(__ELF__)
#define YK_OWN_SWITCH 1
void yk_async_switch_to(void **save, void *to)
    __attribute__((visibility("hidden")));
__asm__(
    ".pushsection .text\n"
    ".globl yk_async_switch_to\n"
    ".hidden yk_async_switch_to\n"
    ".type yk_async_switch_to, @function\n"
    "yk_async_switch_to:\n"
    "    pushq %rbp\n"
    "    pushq %rbx\n"
    "    pushq %r12\n"
    "    pushq %r13\n"
    "    pushq %r14\n"
    "    pushq %r15\n"
    "    subq $16, %rsp\n"
    "    stmxcsr 8(%rsp)\n"
    "    fnstcw (%rsp)\n"
    "    movq %rsp, (%rdi)\n"
    "    movq %rsi, %rsp\n"
    "    ldmxcsr 8(%rsp)\n"
    "    fldcw (%rsp)\n"
    "    addq $16, %rsp\n"
    "    popq %r15\n"
    "    popq %r14\n"
    "    popq %r13\n"
    "    popq %r12\n"
    "    popq %rbx\n"
    "    popq %rbp\n"
    "    ret\n"
    ".size yk_async_switch_to, .-yk_async_switch_to\n"
    ".popsection\n");

static void co_main(void);

/* co's first stack for switch_to: at the 16-aligned top, a zero return
 * address for co_main (which never returns) and co_main as the address
 * switch_to returns to (so that co_main starts as if called: the stack
 * pointer 8 past a multiple of 16), and below it zero registers and the
 * current MXCSR and x87 control word. */
static void
own_prepare(yk_co *co)
{
    uintptr_t top = ((uintptr_t)co->uc.uc_stack.ss_sp +
                     co->uc.uc_stack.ss_size) & ~(uintptr_t)15;
    uint64_t *f = (uint64_t *)(top - 80);
    uint32_t mxcsr;
    uint16_t fpucw;

#ifdef YK_ASAN_FIBERS
    /* A reused stack may keep the poisoning of its last frames (ASan's
     * swapcontext interceptor clears it; this switch is not seen). */
    __asan_unpoison_memory_region(co->uc.uc_stack.ss_sp,
                                  co->uc.uc_stack.ss_size);
#endif
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(fpucw));
    memset(f, 0, 80);
    memcpy(&f[0], &fpucw, sizeof(fpucw));
    memcpy(&f[1], &mxcsr, sizeof(mxcsr));
    /* f[2..7]: r15, r14, r13, r12, rbx, rbp = 0 (the end of the frame
     * chain for a debugger) */
    f[8] = (uint64_t)(uintptr_t)co_main;
    f[9] = 0;
    co->sp = f;
}
#endif

/* Which switch this process uses (1: switch_to, 0: swapcontext),
 * decided before its first coroutine and kept (yk_async_fini clears A,
 * not this): -1 until then. */
static int own_switch = -1;

/* Switch from the loop to co, or (to_main) from co back to the loop. */
static void
co_switch(yk_co *co, int to_main)
{
#ifdef YK_OWN_SWITCH
    if (own_switch == 1) {
        if (to_main)
            yk_async_switch_to(&co->sp, A.main_sp);
        else
            yk_async_switch_to(&A.main_sp, co->sp);
        return;
    }
#endif
    if (to_main)
        (void)swapcontext(&co->uc, &A.main_uc);
    else
        (void)swapcontext(&A.main_uc, &co->uc);
}

static void
choose_switch(void)
{
    if (own_switch >= 0)
        return;
    own_switch = 0;
#ifdef YK_OWN_SWITCH
    {
        uint64_t ssp = 0;

        __asm__ volatile("rdsspq %0" : "+r"(ssp));
        own_switch = ssp == 0 && yk_store_sigpipe_caught();
    }
#ifdef YK_TEST_HOOKS
    {
        const char *s = getenv("YK_TEST_UCONTEXT");

        if (s != NULL && strcmp(s, "1") == 0) {
            own_switch = 0;
            fprintf(stderr, "yubikey: test hook: coroutines switch by "
                    "swapcontext\n");
        }
    }
#endif
#endif
}

/* A coroutine with a stack (reused when one is spare); NULL on ENOMEM. */
static yk_co *
co_alloc(void)
{
    yk_co *co;
    long page = sysconf(_SC_PAGESIZE);
    size_t guard = page > 0 ? (size_t)page : 4096;

    if (A.spare != NULL) {
        co = A.spare;
        A.spare = co->next_free;
        A.nspare--;
        co->next_free = NULL;
        return co;
    }
    co = calloc(1, sizeof(*co));
    if (co == NULL)
        return NULL;
    co->map_len = guard + YK_CO_STACK;
    co->map = mmap(NULL, co->map_len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (co->map == MAP_FAILED) {
        free(co);
        return NULL;
    }
    /* The lowest page stays unmapped for access: an overflow faults. */
    if (mprotect(co->map, guard, PROT_NONE) != 0) {
        munmap(co->map, co->map_len);
        free(co);
        return NULL;
    }
    co->uc.uc_stack.ss_sp = (char *)co->map + guard;
    co->uc.uc_stack.ss_size = YK_CO_STACK;
#ifdef YK_HAVE_VALGRIND
    co->vg_id = VALGRIND_STACK_REGISTER(co->uc.uc_stack.ss_sp,
                                        (char *)co->uc.uc_stack.ss_sp +
                                        YK_CO_STACK);
#endif
    return co;
}

/* Unmap co's stack and free it. */
static void
co_destroy(yk_co *co)
{
#ifdef YK_HAVE_VALGRIND
    VALGRIND_STACK_DEREGISTER(co->vg_id);
#endif
    munmap(co->map, co->map_len);
    free(co);
}

/* A finished coroutine: keep its stack for the next, or free it. */
static void
co_release(yk_co *co)
{
    A.inflight--;
    if (A.nspare >= YK_CO_SPARE) {
        co_destroy(co);
        return;
    }
    co->fn = NULL;
    co->fin = NULL;
    co->arg = NULL;
    co->done = 0;
    co->next_free = A.spare;
    A.spare = co;
    A.nspare++;
}

/* From the loop: run co until it waits or ends (then it is released). */
static void
co_resume(yk_co *co)
{
#ifdef YK_ASAN_FIBERS
    void *fake = NULL;
#endif

    A.cur = co;
#ifdef YK_ASAN_FIBERS
    __sanitizer_start_switch_fiber(&fake, co->uc.uc_stack.ss_sp,
                                   co->uc.uc_stack.ss_size);
#endif
    co_switch(co, 0);
#ifdef YK_ASAN_FIBERS
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
    A.cur = NULL;
    if (co->done) {
        void (*fin)(void *) = co->fin;
        void *arg = co->arg;

        co_release(co);
        if (fin != NULL)
            fin(arg);
    }
}

/* A SIGPIPE our LDAP calls raised (blocked by the store's guard while they
 * ran) must not reach the loop, whose mask lets it through: consume it
 * before switching.  Only a coroutine's own calls can have raised it
 * since it last ran. */
static void
consume_sigpipe(void)
{
    sigset_t set, pending, cur;
    struct timespec zero = { 0, 0 };

    if (yk_store_sigpipe_caught())
        return;   /* never blocked: nothing pending of ours */
    sigemptyset(&pending);
    if (sigpending(&pending) != 0 || sigismember(&pending, SIGPIPE) != 1)
        return;
    if (pthread_sigmask(SIG_BLOCK, NULL, &cur) != 0 ||
        sigismember(&cur, SIGPIPE) != 1)
        return;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    while (sigtimedwait(&set, NULL, &zero) < 0 && errno == EINTR)
        ;
}

/* From a coroutine: back to the loop until resumed. */
static void
co_yield(void)
{
    yk_co *co = A.cur;

    consume_sigpipe();
#ifdef YK_ASAN_FIBERS
    __sanitizer_start_switch_fiber(&co->fake_stack, A.main_bottom,
                                   A.main_size);
#endif
    co_switch(co, 1);
#ifdef YK_ASAN_FIBERS
    __sanitizer_finish_switch_fiber(co->fake_stack, NULL, NULL);
#endif
}

/* Every coroutine starts here (A.cur is it). */
static void
co_main(void)
{
    yk_co *co = A.cur;

#ifdef YK_ASAN_FIBERS
    __sanitizer_finish_switch_fiber(NULL, &A.main_bottom, &A.main_size);
#endif
    co->fn(co->arg);
    co->done = 1;
    consume_sigpipe();
#ifdef YK_ASAN_FIBERS
    __sanitizer_start_switch_fiber(NULL, A.main_bottom, A.main_size);
#endif
    co_switch(co, 1);
    abort();   /* a finished coroutine is never resumed */
}

/* Make co's context start in co_main on its own stack; -1 on failure.
 * Apart from yk_async_run, as getcontext returns twice in principle. */
static int __attribute__((noinline))
co_prepare(yk_co *co)
{
    void *sp = co->uc.uc_stack.ss_sp;
    size_t size = co->uc.uc_stack.ss_size;

#ifdef YK_OWN_SWITCH
    if (own_switch == 1) {
        own_prepare(co);
        return 0;
    }
#endif
    if (getcontext(&co->uc) != 0)
        return -1;
    co->uc.uc_stack.ss_sp = sp;
    co->uc.uc_stack.ss_size = size;
    co->uc.uc_link = NULL;
    makecontext(&co->uc, co_main, 0);
    return 0;
}

/* See async.h. */
int
yk_async_run(verto_ctx *ctx, void (*fn)(void *), void (*fin)(void *),
             void *arg)
{
    yk_co *co;

    if (A.cur != NULL) {
        /* Called from an attempt: run on its stack; a wait suspends
         * both. */
        fn(arg);
        if (fin != NULL)
            fin(arg);
        return 0;
    }
    if (ctx == NULL)
        return ENOMEM;
    if (A.vctx != NULL && A.vctx != ctx)
        return ENOMEM;   /* one loop per process: never seen */
    if (A.vctx == NULL) {
        /* Attempts come from the loop, set up by now: it catches
         * SIGPIPE (net-server.c), so the store's guards can go. */
        (void)yk_store_sigpipe_check();
        choose_switch();
    }
    A.vctx = ctx;
    co = co_alloc();
    if (co == NULL)
        return ENOMEM;
    if (co_prepare(co) != 0) {
        co_destroy(co);
        return ENOMEM;
    }
    co->fn = fn;
    co->fin = fin;
    co->arg = arg;
    co->done = 0;
    A.inflight++;
    co_resume(co);
    return 0;
}

/* See async.h. */
int
yk_async_active(void)
{
    return A.cur != NULL;
}

/* See async.h. */
unsigned
yk_async_inflight(void)
{
    return A.inflight;
}

/* ---- the run queue ------------------------------------------------------ */

static void rq_fire(verto_ctx *ctx, verto_ev *ev);

/* Put co on the run queue (its wait is over: status set). */
static void
rq_push(yk_co *co)
{
    if (co->ready)
        return;
    co->ready = 1;
    co->next_ready = NULL;
    if (A.rq_tail != NULL)
        A.rq_tail->next_ready = co;
    else
        A.rq_head = co;
    A.rq_tail = co;
    if (A.rq_ev == NULL)
        A.rq_ev = verto_add_timeout(A.vctx, VERTO_EV_FLAG_NONE, rq_fire, 0);
    /* Without an event (ENOMEM) the queue runs at the next wait's end:
     * every waiter has a timer, and rq_fire runs from those too. */
}

/* Remove co from the list of waiters and cancel its timer. */
static void
wait_end(yk_co *co)
{
    yk_co **p;

    for (p = &A.waiters; *p != NULL; p = &(*p)->next_wait) {
        if (*p == co) {
            *p = co->next_wait;
            break;
        }
    }
    co->next_wait = NULL;
    if (co->timer != NULL) {
        verto_del(co->timer);
        co->timer = NULL;
    }
    if (co->fdev != NULL) {
        verto_del(co->fdev);
        co->fdev = NULL;
    }
    co->kind = YK_W_NONE;
}

/* Resume every coroutine on the run queue, in order. */
static void
rq_drain(void)
{
    yk_co *co;

    while ((co = A.rq_head) != NULL) {
        A.rq_head = co->next_ready;
        if (A.rq_head == NULL)
            A.rq_tail = NULL;
        co->ready = 0;
        co->next_ready = NULL;
        co_resume(co);
    }
}

/* The run queue's zero timer. */
static void
rq_fire(verto_ctx *ctx, verto_ev *ev)
{
    A.rq_ev = NULL;   /* not persistent: freed after this callback */
    rq_drain();
}

/* A waiter's deadline passed. */
static void
timer_fire(verto_ctx *ctx, verto_ev *ev)
{
    yk_co *co = verto_get_private(ev);

    co->timer = NULL;   /* freed after this callback */
    if (co->kind == YK_W_NONE || co->ready)
        return;
    co->status = 0;
    wait_end(co);
    rq_push(co);
    if (A.rq_ev == NULL)
        rq_drain();   /* no zero timer could be made */
}

/* ---- watches on LDAP handles -------------------------------------------- */

static void watch_fire(verto_ctx *ctx, verto_ev *ev);

/* Whether a waiter waits on ld. */
static int
has_waiters(LDAP *ld)
{
    yk_co *co;

    for (co = A.waiters; co != NULL; co = co->next_wait) {
        if (co->kind == YK_W_RESULT && co->ld == ld)
            return 1;
    }
    return 0;
}

/* Stop watching ld (if watched). */
static void
watch_del(LDAP *ld)
{
    yk_watch **p, *w;

    for (p = &A.watches; *p != NULL; p = &(*p)->next) {
        if ((*p)->ld == ld) {
            w = *p;
            *p = w->next;
            verto_del(w->ev);
            free(w);
            return;
        }
    }
}

/* Watch ld's descriptor for reading; -1 when it has none or on ENOMEM. */
static int
watch_add(LDAP *ld)
{
    yk_watch *w;
    ber_socket_t fd = -1;

    if (ldap_get_option(ld, LDAP_OPT_DESC, &fd) != LDAP_OPT_SUCCESS ||
        fd < 0)
        return -1;
    for (w = A.watches; w != NULL; w = w->next) {
        if (w->ld == ld && w->fd == fd)
            return 0;
    }
    watch_del(ld);
    w = calloc(1, sizeof(*w));
    if (w == NULL)
        return -1;
    w->ev = verto_add_io(A.vctx, VERTO_EV_FLAG_PERSIST |
                         VERTO_EV_FLAG_IO_READ, watch_fire, fd);
    if (w->ev == NULL) {
        free(w);
        return -1;
    }
    verto_set_private(w->ev, w, NULL);
    w->ld = ld;
    w->fd = fd;
    w->next = A.watches;
    A.watches = w;
    return 0;
}

/* End the wait of every waiter on ld with status. */
static void
fail_waiters(LDAP *ld, int status)
{
    yk_co *co, *next;

    for (co = A.waiters; co != NULL; co = next) {
        next = co->next_wait;
        if (co->kind != YK_W_RESULT || co->ld != ld)
            continue;
        co->status = status;
        wait_end(co);
        rq_push(co);
    }
}

/* Hand every complete result libldap has for ld (read now without
 * blocking, or queued by an earlier call) to its waiter; self (about to
 * wait, not yet a waiter) takes its own at once.  Reads only while
 * someone waits on ld, so that libldap always has a request outstanding
 * (it answers an error when it has none).  A result nobody waits for
 * (its attempt gave up) is freed.  -1 when the connection failed (its
 * waiters then fail).  Never resumes anything. */
static int
drain(LDAP *ld, yk_co *self)
{
    struct timeval zero = { 0, 0 };
    LDAPMessage *m;
    sigset_t set, old;
    yk_co *co;
    int rc, id, ret = 0;

    int guard = !yk_store_sigpipe_caught();

    if (guard) {
        sigemptyset(&set);
        sigaddset(&set, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &set, &old);
    }
    while ((self != NULL && self->res == NULL) || has_waiters(ld)) {
        m = NULL;
        rc = ldap_result(ld, LDAP_RES_ANY, LDAP_MSG_ALL, &zero, &m);
        if (rc == 0)
            break;
        if (rc < 0 || m == NULL) {
            ldap_msgfree(m);
            fail_waiters(ld, -1);
            ret = -1;
            break;
        }
        id = ldap_msgid(m);
        if (self != NULL && self->res == NULL && self->msgid == id) {
            self->res = m;
            continue;
        }
        for (co = A.waiters; co != NULL; co = co->next_wait) {
            if (co->kind == YK_W_RESULT && co->ld == ld && co->msgid == id)
                break;
        }
        if (co == NULL) {
            ldap_msgfree(m);
            continue;
        }
        co->res = m;
        co->status = 1;
        wait_end(co);
        rq_push(co);
    }
    if (guard) {
        consume_sigpipe();
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    return ret;
}

/* ld's descriptor is readable: drain it.  The watch stays for the next
 * operation on ld (adding and removing it each time costs two epoll_ctl
 * per operation); it ends when it fires while nobody waits on ld (data or
 * EOF on an idle connection: left for the next use, which checks the
 * connection, and a level-triggered watch kept would fire again at
 * once), and when ld is forgotten or its descriptor changes. */
static void
watch_fire(verto_ctx *ctx, verto_ev *ev)
{
    yk_watch *w = verto_get_private(ev);
    LDAP *ld = w->ld;

    if (!has_waiters(ld)) {
        watch_del(ld);   /* deferred by libverto: we are its callback */
        return;
    }
    /* A failed connection: libldap may have closed the descriptor, whose
     * number the next socket can take; the watch goes with it. */
    if (drain(ld, NULL) < 0)
        watch_del(ld);
    if (A.rq_ev == NULL)
        rq_drain();
}

/* ---- the store's waits (store_io.h) ------------------------------------- */

/* Arm co's timer for deadline_ms (none when 0); -1 on ENOMEM. */
static int
arm_timer(yk_co *co, int64_t deadline_ms)
{
    int64_t left;

    if (deadline_ms == 0)
        return 0;
    left = deadline_ms - yk_mono_ms();
    if (left < 0)
        left = 0;
    co->timer = verto_add_timeout(A.vctx, VERTO_EV_FLAG_NONE, timer_fire,
                                  (time_t)left);
    if (co->timer == NULL)
        return -1;
    verto_set_private(co->timer, co, NULL);
    return 0;
}

/* Suspend the current coroutine as a waiter (co's wait fields set) until
 * its wait ends; its status. */
static int
wait_here(yk_co *co, int64_t deadline_ms)
{
    co->status = 0;
    co->next_wait = A.waiters;
    A.waiters = co;
    if (arm_timer(co, deadline_ms) != 0) {
        wait_end(co);
        return -1;
    }
    co_yield();
    return co->status;
}

/* See store_io.h. */
static int
io_active(void)
{
    return A.cur != NULL;
}

/* See store_io.h: a result already read is taken at once, else the
 * coroutine waits for it. */
static int
io_result(LDAP *ld, int msgid, int64_t deadline_ms, LDAPMessage **res_out)
{
    yk_co *co = A.cur;
    int rc;

    *res_out = NULL;
    if (co == NULL)
        return -1;
    co->ld = ld;
    co->msgid = msgid;
    co->res = NULL;
    /* Already read (by another attempt's call, or just now)? */
    rc = drain(ld, co);
    if (co->res != NULL) {
        *res_out = co->res;
        co->res = NULL;
        co->ld = NULL;
        return 1;
    }
    if (rc < 0 || watch_add(ld) != 0) {
        if (rc < 0)
            watch_del(ld);   /* as in watch_fire */
        co->ld = NULL;
        return -1;
    }
    co->kind = YK_W_RESULT;
    rc = wait_here(co, deadline_ms);
    co->ld = NULL;
    if (rc == 1) {
        *res_out = co->res;
        co->res = NULL;
        return 1;
    }
    ldap_msgfree(co->res);
    co->res = NULL;
    return rc;
}

/* See store_io.h. */
static void
io_forget(LDAP *ld)
{
    fail_waiters(ld, -1);
    watch_del(ld);
}

/* See store_io.h. */
static int
io_wait(const void *key, int64_t deadline_ms)
{
    yk_co *co = A.cur;

    if (co == NULL)
        return 0;
    co->kind = YK_W_KEY;
    co->key = key;
    return wait_here(co, deadline_ms);
}

/* See store_io.h. */
static void
io_wake(const void *key)
{
    yk_co *co, *next;

    for (co = A.waiters; co != NULL; co = next) {
        next = co->next_wait;
        if (co->kind != YK_W_KEY || co->key != key)
            continue;
        co->status = 1;
        wait_end(co);
        rq_push(co);
    }
}

/* A waited descriptor is readable. */
static void
fd_fire(verto_ctx *ctx, verto_ev *ev)
{
    yk_co *co = verto_get_private(ev);

    co->fdev = NULL;   /* not persistent: freed after this callback */
    if (co->kind != YK_W_FD || co->ready)
        return;
    co->status = 1;
    wait_end(co);
    rq_push(co);
    if (A.rq_ev == NULL)
        rq_drain();
}

/* See store_io.h. */
static int
io_wait_fd(int fd, int64_t deadline_ms)
{
    yk_co *co = A.cur;

    if (co == NULL)
        return -1;
    co->fdev = verto_add_io(A.vctx, VERTO_EV_FLAG_IO_READ, fd_fire, fd);
    if (co->fdev == NULL)
        return -1;
    verto_set_private(co->fdev, co, NULL);
    co->kind = YK_W_FD;
    return wait_here(co, deadline_ms);
}

const yk_store_io yk_async_io = {
    io_active, io_result, io_forget, io_wait, io_wake, io_wait_fd
};

/* See async.h. */
void
yk_async_sleep(int ms)
{
    struct timespec ts;

    if (A.cur != NULL) {
        (void)io_wait(A.cur, yk_mono_ms() + ms);
        return;
    }
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* See async.h.  The loop's events belong to the KDC's context, which may
 * be gone already: none is touched. */
void
yk_async_fini(void)
{
    yk_co *co;
    yk_watch *w;

    while ((co = A.spare) != NULL) {
        A.spare = co->next_free;
        co_destroy(co);
    }
    while ((w = A.watches) != NULL) {
        A.watches = w->next;
        free(w);
    }
    memset(&A, 0, sizeof(A));
}
