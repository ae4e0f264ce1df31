/* SPDX-License-Identifier: MIT */
/* emu.h: a software YubiKey (Yubico OTP mode) for tests and the demo. */
#ifndef YK_EMU_H
#define YK_EMU_H

#include <stdint.h>
#include <krb5.h>
#include "otp.h"

/* The token's state; holds its AES key and private id (a secret). */
typedef struct {
    unsigned char aes_key[YK_AES_KEY_LEN];
    unsigned char private_id[YK_PRIVID_LEN];
    unsigned char pubid[YK_PUBID_MAX];
    size_t pubid_len;
    uint16_t usage;          /* usage counter of the current power-up */
    uint8_t session;         /* next session counter value */
    uint32_t timestamp;      /* 24-bit, ~8 Hz; the last OTP's (or start) */
    int fresh;               /* powered up, no OTP yet: next OTP bumps usage
                              * (also set when the session counter wraps) */
    int64_t last;            /* unix time (s) of the last OTP or power-up */
} yk_emu;

/* Fill emu with random key, private id and timestamp, public id from
 * pubid (pubid_len bytes; may be 0), counters at power-up. */
krb5_error_code yk_emu_init(yk_emu *emu, const unsigned char *pubid,
                            size_t pubid_len);

/* Produce the next OTP (NUL-terminated, otp_out holds YK_OTP_MAX_LEN+1)
 * and advance the counters as the device does: the usage counter rises at
 * the first OTP after power-up and when the session counter wraps.
 * YK_ERR_EMU_EXHAUSTED once the usage counter is at 0x7fff and would
 * rise. */
krb5_error_code yk_emu_next(yk_emu *emu, char *otp_out);

/* Simulate a power cycle: the next OTP bumps the usage counter and starts
 * the session counter at 0. */
void yk_emu_replug(yk_emu *emu);

/* Load / save a state file (text; mode 0600, written atomically with a
 * temp file and rename).  The format is described at the top of emu.c;
 * yk_emu_load is strict: YK_ERR_CONFIG (bad line, unknown, repeated or
 * missing key, inconsistent counters), YK_ERR_HEX, YK_ERR_MODHEX, ERANGE,
 * EFBIG or an errno from open/read.  yk_emu_save replaces an existing
 * file. */
krb5_error_code yk_emu_load(const char *path, yk_emu *emu_out);
krb5_error_code yk_emu_save(const yk_emu *emu, const char *path);

/* Wipe the state. */
void yk_emu_clear(yk_emu *emu);

#endif /* YK_EMU_H */
