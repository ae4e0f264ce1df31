/* SPDX-License-Identifier: MIT */
/* async.h: attempts as coroutines on the KDC worker's event loop. */
#ifndef YK_ASYNC_H
#define YK_ASYNC_H

#include <stdint.h>

#include "store_io.h"

struct verto_ctx;

/* The store's waits, suspending the current coroutine (store_io.h). */
extern const yk_store_io yk_async_io;

/* Run fn(arg) as a coroutine on ctx, the worker's event loop: it runs at
 * once until it first waits, and is resumed from the loop when what it
 * waits for arrives; when it returns, fin(arg) runs on the loop's own
 * stack (where the KDC expects its respond callback to be called, since
 * responding goes on to encode and send the reply).  0, or ENOMEM
 * (nothing ran: the caller runs fn(arg) and fin(arg) itself, blocking).
 * Called from inside a coroutine, both run there at once. */
int yk_async_run(struct verto_ctx *ctx, void (*fn)(void *),
                 void (*fin)(void *), void *arg);

/* Nonzero inside a coroutine. */
int yk_async_active(void);

/* Suspend the current coroutine for ms milliseconds (block outside
 * one). */
void yk_async_sleep(int ms);

/* How many coroutines are alive (running or suspended): for tests and
 * the log. */
unsigned yk_async_inflight(void);

/* Forget everything at the module's end: suspended attempts are freed
 * without being resumed (the KDC is stopping). */
void yk_async_fini(void);

#endif /* YK_ASYNC_H */
