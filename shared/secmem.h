/* SPDX-License-Identifier: MIT */
/* secmem.h: wiping secrets, comparing them in constant time, keeping
 * long-lived ones in locked memory. */
#ifndef YK_SECMEM_H
#define YK_SECMEM_H

#include <stddef.h>

/* Overwrite n bytes at p with zeros in a way the compiler cannot elide.
 * p may be NULL when n is 0. */
void yk_zap(void *p, size_t n);

/* Compare n bytes in time independent of their contents: 1 if equal,
 * 0 otherwise. */
int yk_memeq(const void *a, const void *b, size_t n);

/* Keep the pages of [p, p + size) (page-aligned, holding nothing but
 * secrets) out of core dumps and locked in memory when RLIMIT_MEMLOCK
 * allows, in this process and in every child forked later.  Whether they
 * are locked. */
int yk_mem_lock(void *p, size_t size);

/* Undo yk_mem_lock (locked: what it returned), after the caller wiped
 * the pages. */
void yk_mem_unlock(void *p, size_t size, int locked);

/* A long-lived secret string (the LDAP bind password): n + 1 zero bytes
 * in pages of their own, yk_mem_lock'ed (never swapped when the limit
 * allows, also in forked children; out of core dumps).  NULL on ENOMEM.
 * Free with yk_secret_free only. */
char *yk_secret_alloc(size_t n);

/* The same holding a NUL-terminated copy of the n bytes at s. */
char *yk_secret_strndup(const char *s, size_t n);

/* Wipe, unlock and unmap a string of yk_secret_alloc; NULL accepted. */
void yk_secret_free(char *s);

#endif /* YK_SECMEM_H */
