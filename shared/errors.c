/* SPDX-License-Identifier: MIT */
/* errors.c: English messages for krb5-yubikey's error codes. */
#include <config.h>

#include <string.h>
#include <com_err.h>

#include "errors.h"

/* errno values on every system we know are far below this; com_err tables
 * start at multiples of 256 above it. */
#define YK_ERRNO_LIMIT 256

/* Messages for YK_ERR_BASE + 1 .. YK_ERR_LAST - 1, in enum order, written
 * for the administrator reading the KDC log or ykadmin's output. */
static const char *const yk_messages[] = {
    /* YK_ERR_MODHEX */
    "Invalid character in modhex string (allowed: cbdefghijklnrtuv)",
    /* YK_ERR_OTP_LENGTH */
    "OTP length out of range (32 to 64 characters)",
    /* YK_ERR_OTP_ODD */
    "OTP has an odd number of characters",
    /* YK_ERR_OTP_CRC */
    "OTP CRC check failed (wrong AES key or corrupted OTP)",
    /* YK_ERR_OTP_PRIVID */
    "OTP private id does not match the enrolled token",
    /* YK_ERR_HEX */
    "Malformed hexadecimal string",
    /* YK_ERR_CRYPTO */
    "Cryptographic library (libgcrypt) failure",
    /* YK_ERR_KEYRING_PERMS */
    "Master keyring file is accessible by group or others (must be 0600)",
    /* YK_ERR_KEYRING_FORMAT */
    "Malformed master keyring file",
    /* YK_ERR_KEYRING_EMPTY */
    "Master keyring holds no key",
    /* YK_ERR_WRAP_FORMAT */
    "Malformed wrapped token secret record",
    /* YK_ERR_WRAP_BINDING */
    "Wrapped token secret belongs to another principal or public id",
    /* YK_ERR_WRAP_KVNO */
    "Wrapped token secret uses a master key version not in the keyring",
    /* YK_ERR_WRAP_INTEGRITY */
    "Token secret failed its integrity check (tampered or wrong master key)",
    /* YK_ERR_PADATA_FORMAT */
    "Malformed YubiKey preauthentication data",
    /* YK_ERR_PADATA_VERSION */
    "Unsupported YubiKey preauthentication version or mode",
    /* YK_ERR_RECORD_FORMAT */
    "Malformed YubiKey token record in the directory",
    /* YK_ERR_STORE_NOT_FOUND */
    "No directory entry found for the principal",
    /* YK_ERR_STORE_AMBIGUOUS */
    "More than one directory entry matches the principal",
    /* YK_ERR_STORE_CONFLICT */
    "Token state changed concurrently (compare-and-swap lost)",
    /* YK_ERR_STORE_UNAVAILABLE */
    "LDAP directory unavailable or refusing the operation",
    /* YK_ERR_STORE_TIMEOUT */
    "LDAP directory did not answer in time",
    /* YK_ERR_STORE_ACCESS */
    "Insufficient access rights in the LDAP directory (check the ACLs)",
    /* YK_ERR_STORE_READONLY */
    "LDAP write server is a read-only replica",
    /* YK_ERR_STORE_EXISTS */
    "Public id already enrolled",
    /* YK_ERR_TOKEN_UNKNOWN */
    "No such YubiKey token",
    /* YK_ERR_CONFIG */
    "Invalid YubiKey module configuration",
    /* YK_ERR_EMU_EXHAUSTED */
    "Emulated YubiKey's usage counter is exhausted",
    /* YK_ERR_RFC6560_FORMAT */
    "Malformed OTP preauthentication data (RFC 6560): not strict DER or "
    "not the expected structure",
    /* YK_ERR_RFC6560_TOO_LONG */
    "OTP preauthentication data (RFC 6560) holds a value over its size "
    "limit",
    /* YK_ERR_RFC6560_UNSUPPORTED */
    "OTP preauthentication data (RFC 6560) uses an unsupported field "
    "(hash algorithm, iteration count, challenge, time or counter)",
    /* YK_ERR_KEYRING_OWNER */
    "Master keyring file is owned by another user (must be owned by the "
    "user that reads it, e.g. the KDC's, or by root)",
    /* YK_ERR_STORE_TLS */
    "TLS with the LDAP directory failed: the server's certificate was "
    "refused or StartTLS was refused (check yubikey_ldap_tls_cacert and "
    "the host name in the URI)",
    /* YK_ERR_STORE_RIVAL */
    "Another provider swapped this token's counter too: replication "
    "brought in a state value as high as the new one",
};

_Static_assert(sizeof(yk_messages) / sizeof(yk_messages[0]) ==
               (size_t)(YK_ERR_LAST - YK_ERR_BASE - 1),
               "one message per YK_ERR_* code");

/* Return a static English message for code: ours from the table above,
 * errno values from strerror, anything else (krb5 and other com_err codes)
 * from com_err's error_message.  Never NULL. */
const char *
yk_strerror(krb5_error_code code)
{
    if (code > YK_ERR_BASE && code < YK_ERR_LAST)
        return yk_messages[code - YK_ERR_BASE - 1];
    if (code >= 0 && code < YK_ERRNO_LIMIT)
        return strerror(code);
    return error_message(code);
}
