/* SPDX-License-Identifier: MIT */
/* shtab.h: the token states the KDC's workers share (doc/design.md §4.10). */
#ifndef YK_SHTAB_H
#define YK_SHTAB_H

#include <stddef.h>
#include <stdint.h>
#include <krb5.h>

#define YK_SHTAB_SETS 512          /* sets of YK_SHTAB_WAYS slots: 4096 */
#define YK_SHTAB_WAYS 8            /* tokens per realm, the oldest evicted */
#define YK_SHTAB_RAW_MAX 256       /* a longer state value is not shared */
#define YK_SHTAB_KEY_LEN 32        /* SHA-256 */
#define YK_SHTAB_LOCK_TRIES 64     /* then the table is passed over */

/*
 * A table in memory shared by the KDC's workers: made in the module's
 * init, before krb5kdc forks them (an anonymous shared mapping each
 * worker inherits), it holds, per token, the last state value a worker
 * committed (or read from the write server) and its generation.  The
 * key is a hash of the principal, the public id and the exact secret
 * value, so a token enrolled again never meets its predecessor's state.
 *
 * Only a guess: the swap in the directory decides.  A worker that finds
 * a newer value here than in its own cache swaps from that and wins at
 * once, instead of losing and reading the entry again.  A worker never
 * waits for another: the lock is only tried (YK_SHTAB_LOCK_TRIES times,
 * yielding between), and a table that could not be locked is passed
 * over.  A worker that died holding the lock leaves the table emptied.
 * State values are no secrets (counters, a nonce, a time).
 */
typedef struct yk_shtab yk_shtab;

/* Map a new empty table.  Returns ENOMEM (or errno) when the system
 * refuses the mapping. */
krb5_error_code yk_shtab_new(yk_shtab **out);

/* Unmap t (in each process that holds it); NULL is accepted. */
void yk_shtab_free(yk_shtab *t);

/* The key of principal's token pubid whose secret value is secret
 * (secret_len bytes), in an entry whose policy is policy (-1: none set).
 * The policy is part of it because an administrator's policy change
 * rewrites the state values but not the secret (store_admin.c): a state
 * value held under one policy never serves a record of another.  0, or
 * ENOMEM. */
krb5_error_code yk_shtab_key(const char *principal, const char *pubid,
                             const char *secret, size_t secret_len,
                             int policy,
                             unsigned char key[YK_SHTAB_KEY_LEN]);

/* Copy the value held for key, if its generation is above gen, into raw
 * (rawmax bytes, not NUL-terminated; *len_out its length).  Returns 1
 * when copied, 0 when nothing newer is held (or the table is busy or
 * NULL). */
int yk_shtab_get(yk_shtab *t, const unsigned char key[YK_SHTAB_KEY_LEN],
                 uint64_t gen, char *raw, size_t rawmax, size_t *len_out);

/* Hold raw (len bytes) of generation gen for key, unless a value of a
 * generation as high is held already and force is 0 (force: what the
 * write server holds now, even below what is held: a directory restored
 * or failed over to a provider that is behind).  An empty slot of the
 * key's set, else its least recently written, takes it.  Nothing
 * happens when len is over YK_SHTAB_RAW_MAX or the table is busy or
 * NULL. */
void yk_shtab_put(yk_shtab *t, const unsigned char key[YK_SHTAB_KEY_LEN],
                  uint64_t gen, int force, const char *raw, size_t len);

#endif /* YK_SHTAB_H */
