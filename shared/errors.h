/* SPDX-License-Identifier: MIT */
/* errors.h: krb5-yubikey's own error codes and their messages. */
#ifndef YK_ERRORS_H
#define YK_ERRORS_H

#include <krb5.h>

/*
 * Our codes live in a private range (0x594B00 + n, "YK") that collides with
 * neither errno values nor com_err tables.  Foreign codes (LDAP result
 * codes, gcry errors) are translated into these once, at the boundary.
 * Functions may also return plain errno values (ENOMEM, ENOENT, EACCES...).
 */
#define YK_ERR_BASE ((krb5_error_code)0x594B00)
enum {
    YK_ERR_MODHEX = YK_ERR_BASE + 1,  /* a character that is not modhex */
    YK_ERR_OTP_LENGTH,                /* OTP length outside 32..64 */
    YK_ERR_OTP_ODD,                   /* odd number of OTP characters */
    YK_ERR_OTP_CRC,                   /* CRC residue wrong: key or corrupt */
    YK_ERR_OTP_PRIVID,                /* private id does not match */
    YK_ERR_HEX,                       /* malformed hexadecimal */
    YK_ERR_CRYPTO,                    /* libgcrypt failed */
    YK_ERR_KEYRING_PERMS,             /* keyring readable by group/others */
    YK_ERR_KEYRING_FORMAT,            /* malformed keyring file */
    YK_ERR_KEYRING_EMPTY,             /* keyring holds no key */
    YK_ERR_WRAP_FORMAT,               /* malformed wrapped-secret record */
    YK_ERR_WRAP_BINDING,              /* record names another principal/id */
    YK_ERR_WRAP_KVNO,                 /* record's key version not loaded */
    YK_ERR_WRAP_INTEGRITY,            /* GCM tag failed: tamper/wrong key */
    YK_ERR_PADATA_FORMAT,             /* malformed padata */
    YK_ERR_PADATA_VERSION,            /* unknown padata version or mode */
    YK_ERR_RECORD_FORMAT,             /* malformed LDAP token record */
    YK_ERR_STORE_NOT_FOUND,           /* no directory entry for principal */
    YK_ERR_STORE_AMBIGUOUS,           /* more than one entry matched */
    YK_ERR_STORE_CONFLICT,            /* compare-and-swap lost the race */
    YK_ERR_STORE_UNAVAILABLE,         /* directory down or refusing */
    YK_ERR_STORE_TIMEOUT,             /* directory too slow */
    YK_ERR_STORE_ACCESS,              /* insufficient access (ACLs) */
    YK_ERR_STORE_READONLY,            /* write server is a read-only copy */
    YK_ERR_STORE_EXISTS,              /* public id already enrolled */
    YK_ERR_TOKEN_UNKNOWN,             /* no such token */
    YK_ERR_CONFIG,                    /* bad configuration */
    YK_ERR_EMU_EXHAUSTED,             /* emulated token's counter at max */
    YK_ERR_RFC6560_FORMAT,            /* not strict DER / wrong structure */
    YK_ERR_RFC6560_TOO_LONG,          /* a value over its bound */
    YK_ERR_RFC6560_UNSUPPORTED,       /* a field we refuse (hashAlg...) */
    YK_ERR_KEYRING_OWNER,             /* keyring owned by another user */
    YK_ERR_STORE_TLS,                 /* TLS refused the server's cert */
    YK_ERR_STORE_RIVAL,               /* swap won, a rival value came in */
    YK_ERR_LAST
};

/* Return a static English message for any code: ours, errno or com_err. */
const char *yk_strerror(krb5_error_code code);

#endif /* YK_ERRORS_H */
