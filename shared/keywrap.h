/* SPDX-License-Identifier: MIT */
/* keywrap.h: the master keyring and AES-256-GCM wrapping of token secrets. */
#ifndef YK_KEYWRAP_H
#define YK_KEYWRAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <krb5.h>
#include "otp.h"

#define YK_MASTER_KEY_LEN 32     /* AES-256 */
#define YK_KEYRING_MAX_KEYS 64   /* versions one keyring file may hold */
#define YK_KEYRING_MAX_FILE 8192 /* bytes: a larger file is refused */

/* A token's secret: wipe with yk_zap after use. */
typedef struct {
    unsigned char aes_key[YK_AES_KEY_LEN];
    unsigned char private_id[YK_PRIVID_LEN];
} yk_token_secret;

/* The master keyring: versioned 32-byte keys held in locked memory when
 * possible, wiped on free.  Opaque. */
typedef struct yk_keyring yk_keyring;

/* Load the keyring file at path (read whole).  Refused with
 * YK_ERR_KEYRING_PERMS when group or others hold any permission on it
 * (yk_keyring_mode_ok), EPERM when it is owned by neither the process's
 * effective uid nor root (yk_keyring_owner_ok: its owner could replace
 * the keys), YK_ERR_KEYRING_FORMAT when malformed (or not a regular
 * file), YK_ERR_KEYRING_EMPTY when it holds no key.  *kr_out is set only
 * on success. */
krb5_error_code yk_keyring_load(const char *path, yk_keyring **kr_out);

/* yk_keyring_load, but a process running as root also accepts a file
 * owned by the user also (the KDC's user, for ykadmin run by root on a
 * KDC that runs as its own user); (uid_t)-1 = nobody else. */
krb5_error_code yk_keyring_load_for(const char *path, uid_t also,
                                    yk_keyring **kr_out);

/* The rule on a keyring's mode bits (st_mode): group and others hold no
 * permission.  1 when it is met, else 0. */
int yk_keyring_mode_ok(unsigned int mode);

/* The rule on a keyring's owner: owned by reader (the effective uid of
 * the process loading it), by root, or, when reader is root, by also
 * ((uid_t)-1: nobody).  1 when it is met, else 0. */
int yk_keyring_owner_ok(uid_t owner, uid_t reader, uid_t also);

/* Parse keyring text (the file's contents) of len bytes. */
krb5_error_code yk_keyring_parse(const char *buf, size_t len,
                                 yk_keyring **kr_out);

/* A new, empty keyring. */
krb5_error_code yk_keyring_new(yk_keyring **kr_out);

/* Add a fresh random key (libgcrypt's strong pool) with version
 * newest + 1 (1 for an empty ring); its version in *version_out. */
krb5_error_code yk_keyring_add_key(yk_keyring *kr, uint32_t *version_out);

/* Write the keyring to path atomically (temp file + rename), mode 0600.
 * With exclusive set, an existing path is refused with EEXIST. */
krb5_error_code yk_keyring_write(const yk_keyring *kr, const char *path,
                                 int exclusive);

/* The newest (highest) version, 0 for an empty ring. */
uint32_t yk_keyring_newest(const yk_keyring *kr);

/* Number of keys in the ring. */
size_t yk_keyring_count(const yk_keyring *kr);

/* Wipe and free; NULL is accepted. */
void yk_keyring_free(yk_keyring *kr);

/* Wrap secret for (principal, pubid_modhex) under the newest key.  The
 * record (a NUL-terminated string, malloc'd, caller frees) names the key
 * version, the public id and the principal in clear; the same are bound
 * as GCM associated data. */
krb5_error_code yk_keywrap_wrap(const yk_keyring *kr, const char *principal,
                                const char *pubid_modhex,
                                const yk_token_secret *secret,
                                char **record_out);

/* Unwrap a record for (principal, pubid_modhex).  Errors, distinct:
 * YK_ERR_WRAP_FORMAT (malformed), YK_ERR_WRAP_BINDING (the record names
 * another principal or public id: checked before decryption),
 * YK_ERR_WRAP_KVNO (key version not in the ring), YK_ERR_WRAP_INTEGRITY
 * (tampered or wrong key).  *secret_out is written only on success. */
krb5_error_code yk_keywrap_unwrap(const yk_keyring *kr, const char *record,
                                  const char *principal,
                                  const char *pubid_modhex,
                                  yk_token_secret *secret_out);

/* The key version a record names (for rewrap and listing), without
 * decrypting it. */
krb5_error_code yk_keywrap_record_kvno(const char *record,
                                       uint32_t *kvno_out);

#endif /* YK_KEYWRAP_H */
