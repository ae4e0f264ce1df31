/* SPDX-License-Identifier: MIT */
/* postread.h: what the post-read of a counter swap shows (RFC 4527). */
#ifndef YK_POSTREAD_H
#define YK_POSTREAD_H

#include <stddef.h>
#include <krb5.h>
#include "record.h"

/* Beside the value just written, the entry holds another state value of
 * the same token with ... (the strongest one found): */
#define YK_RIVAL_NONE 0            /* nothing as high: the swap stands */
#define YK_RIVAL_RETRANSMISSION 1  /* the same counter and request nonce */
#define YK_RIVAL_REPLAY 2          /* the same counter, another request */
#define YK_RIVAL_OLDER 3           /* a higher counter */
/* (the store's, not the parser's: the post-read did not parse) */
#define YK_RIVAL_UNREADABLE 4

/* Parse a post-read control value (a SearchResultEntry, BER, len bytes)
 * strictly and say in *rival_out what it holds beside mine (the state
 * value just written, canonical text; mine_rec parsed).  Only the
 * yubikeyTokenState attribute counts; values that do not parse, or of
 * other tokens, or with lower counters are no rivals.  YK_ERR_RECORD_FORMAT
 * when the value is not such an entry, or lacks mine (the swap's own
 * value must be there). */
krb5_error_code yk_postread_rival(const char *value, size_t len,
                                  const char *mine,
                                  const yk_state_rec *mine_rec,
                                  int *rival_out);

/* The same entry's state values of mine's token with a lower counter
 * than mine (left over from a conflict: a value replication added after
 * the swap's read), copied into a NULL-terminated array in *vals_out
 * (NULL when none; yk_postread_free).  The same errors as
 * yk_postread_rival, and ENOMEM. */
krb5_error_code yk_postread_lower(const char *value, size_t len,
                                  const char *mine,
                                  const yk_state_rec *mine_rec,
                                  char ***vals_out);

/* Free what yk_postread_lower returned (NULL: nothing). */
void yk_postread_free(char **vals);

#endif /* YK_POSTREAD_H */
