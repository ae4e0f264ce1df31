/* SPDX-License-Identifier: MIT */
/* program.h: writing a Yubico OTP (AES) credential into a YubiKey slot. */
#ifndef YK_PROGRAM_H
#define YK_PROGRAM_H

#include <stddef.h>
#include <krb5.h>
#include "otp.h"

#define YK_PROGRAM_BLOCK_LEN 52      /* the device's configuration block */
#define YK_PROGRAM_ACCESS_CODE_LEN 6 /* bytes of a slot's access code */
#define YK_PROGRAM_ACCESS_CODE_HEX 12 /* its hexadecimal form */
#define YK_PROGRAM_ERRBUF_LEN 256    /* enough for every message we write */

/* What to write into a slot.  It holds the token's secrets: the caller
 * owns it and wipes it with yk_zap; program.c wipes every copy it makes.
 *
 * access_code is the code that currently protects the slot (used to
 * unlock it, when has_access_code).  The slot is protected afterwards by
 * new_access_code when set_new_access_code (all zeros: no protection),
 * else by the current code when has_access_code (as ykpersonalize does),
 * else by none. */
typedef struct {
    unsigned char aes_key[YK_AES_KEY_LEN];
    unsigned char private_id[YK_PRIVID_LEN];
    unsigned char pubid[YK_PUBID_MAX];
    size_t pubid_len;                        /* 0..YK_PUBID_MAX */
    int slot;                                /* 1 or 2 */
    int has_access_code;
    unsigned char access_code[YK_PROGRAM_ACCESS_CODE_LEN];
    int set_new_access_code;
    unsigned char new_access_code[YK_PROGRAM_ACCESS_CODE_LEN];
} yk_program_params;

/* 1 if this build can program devices (it was built with libykpers-1),
 * 0 otherwise; then every yk_program_* function but
 * yk_program_read_access_code fails with ENOTSUP. */
int yk_program_available(void);

/* Build, offline, the configuration block that yk_program_device writes
 * for p on a YubiKey with firmware major.minor.build, CRC included (the
 * layout is described at the top of program.c).  block_out is set only on
 * success and then holds the key: the caller wipes it.  Errors: EINVAL
 * (NULL, slot not 1 or 2, public id over 16 bytes, version over 255),
 * ENOTSUP (firmware too old for this, or built without libykpers-1),
 * YK_ERR_CONFIG (libykpers-1 refused the configuration), ENOMEM. */
krb5_error_code yk_program_build_config(const yk_program_params *p,
                                        unsigned int firmware_major,
                                        unsigned int firmware_minor,
                                        unsigned int firmware_build,
                                        unsigned char
                                        block_out[YK_PROGRAM_BLOCK_LEN]);

/* Program slot p->slot of the one YubiKey attached with p's credential
 * and check that the device took it.  Slot 1 is refused unless
 * force_slot1.  On failure errbuf (errlen bytes, YK_PROGRAM_ERRBUF_LEN is
 * enough; may be NULL if errlen is 0) gets one sentence for the operator
 * that says whether the device was changed; on success it is emptied.
 * *serial_out (may be NULL) is set on success to the device's serial
 * number, 0 when the device does not tell it.  Nothing is printed.
 * Errors, the slot unchanged unless said otherwise: EINVAL (bad p), EPERM
 * (slot 1 without force_slot1), ENODEV (no YubiKey found), EBUSY (more
 * than one YubiKey attached), ENOTSUP (firmware too old, or built without
 * libykpers-1), EACCES (the device refused the write: a wrong or missing
 * access code), EIO (USB failure; after the write was sent, the slot's
 * state is unknown and the message says so), YK_ERR_CONFIG, ENOMEM. */
krb5_error_code yk_program_device(const yk_program_params *p,
                                  int force_slot1, char *errbuf,
                                  size_t errlen, unsigned int *serial_out);

/* Read an access code, 12 hexadecimal digits on the first line, from the
 * file at source, or from standard input when source is "-" (echo is off
 * while a terminal is read).  A file must hold nothing else but one line
 * end.  code_out is set only on success; the caller wipes it.  Errors:
 * EINVAL (source NULL or empty), YK_ERR_HEX (not exactly 12 hexadecimal
 * digits, or anything after them), errno values from open and read. */
krb5_error_code yk_program_read_access_code(const char *source,
                                            unsigned char
                                            code_out
                                            [YK_PROGRAM_ACCESS_CODE_LEN]);

#endif /* YK_PROGRAM_H */
