/* SPDX-License-Identifier: MIT */
/* realm.h: what realm.c gives verify.c (not for others). */
#ifndef YK_REALM_H
#define YK_REALM_H

#include <stdint.h>

#include "verify.h"

/* Return 1 when r has a keyring.  At most every YK_KEYRING_CHECK_MS the
 * file is looked at: loaded while none is, reloaded when it changed. */
int yk_keyring_ready(yk_realm *r, int64_t now_ms);

/* Return 1 while r's circuit breaker is open. */
int yk_breaker_open(const yk_realm *r, int64_t now_ms);

/* React to a store failure: outages (timeouts, a spent time budget,
 * unreachable servers) and a refused bind trip the breaker, refusals that
 * only an administrator can fix are logged loudly. */
void yk_store_failed(yk_realm *r, krb5_error_code ret, const char *op);

/* Give r's store the time budget of one attempt (YK_BUDGET_FACTOR times
 * the per-operation timeout, for all its directory work together); 0
 * ends it (and reports a write failover). */
void yk_budget_set(yk_realm *r, int on);

/* What a store failure ret was, in words for a verdict's detail (static
 * text): a refused bind is told apart from the ACLs refusing a read. */
const char *yk_store_why(const yk_realm *r, krb5_error_code ret);

/* Read principal's entry (fresh: from the write server).  Cacheable
 * outcomes (found, no entry, ambiguous) return 0 with *entry_out (NULL
 * when none) and *code_out; a failure of the directory returns its code
 * after yk_store_failed. */
krb5_error_code yk_read_entry(yk_realm *r, const char *principal, int fresh,
                              yk_entry **entry_out, krb5_error_code *code_out);

#endif /* YK_REALM_H */
