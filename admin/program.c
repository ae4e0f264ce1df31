/* SPDX-License-Identifier: MIT */
/* program.c: programming a YubiKey slot with Yubico OTP via libykpers-1. */
/*
 * The configuration block: 52 bytes, what a YubiKey takes for a slot
 * (libykpers-1's struct config_st, packed, little-endian):
 *
 *   offset  size  field      what we put there
 *        0    16  fixed      the public id, then zeros up to 16 bytes
 *       16     6  uid        the private id
 *       22    16  key        the AES-128 key
 *       38     6  accCode    the access code protecting the slot from now
 *                            on, all zeros for none
 *       44     1  fixedSize  the public id's length (0..16)
 *       45     1  extFlags   SERIAL_API_VISIBLE (0x04) from firmware 2.2,
 *                            so the serial can be read for the record;
 *                            0 before
 *       46     1  tktFlags   APPEND_CR (0x20) only: neither OATH_HOTP
 *                            (0x40) nor CHAL_RESP, which is Yubico OTP mode
 *       47     1  cfgFlags   0: slot 2's defaults (a static password:
 *                            STATIC_TICKET, STRONG_PW1, STRONG_PW2,
 *                            MAN_UPDATE) cleared
 *       48     2  rfu        0
 *       50     2  crc        the complement of CRC-16/X-25 (reflected 0x8408,
 *                            init 0xffff) over bytes 0..49, little-endian;
 *                            the CRC over all 52 bytes is then 0xf0b8
 *
 * The slot is the write command (SLOT_CONFIG for slot 1, SLOT_CONFIG2 for
 * slot 2), not part of the block, so both slots get the same block.  A
 * write to a protected slot appends its current access code (6 bytes).
 * The device accepts a write by raising its programming sequence number
 * (status byte pgmSeq); a refused write (wrong access code) leaves the
 * slot and the number as they were.
 *
 * libykpers-1 builds the block (ykp_configure_for, then our changes);
 * yk_program_build_config returns it with the CRC that libykpers-1's
 * write path computes, and yk_program_device writes that very block.
 * ykp_free_config does not wipe the key: we wipe the block before.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#ifdef HAVE_YKPERS
#include <ykpers.h>
#include <ykcore.h>
#include <ykstatus.h>
#include <ykdef.h>
#endif

#include "errors.h"
#include "otp.h"
#include "secmem.h"
#include "program.h"

#define NO_DEVICE_MSG "no YubiKey found (use --emulate FILE for a " \
    "software token)"
#define NO_YKPERS_MSG "built without libykpers-1: this ykadmin cannot " \
    "program a YubiKey (use --emulate FILE for a software token)"
#define SLOT1_MSG "slot 1 holds the factory credential; --force " \
    "overwrites it for good"
#define REFUSED_MSG "the YubiKey did not accept the configuration: wrong " \
    "access code or locked slot?"
#define ACCESS_LINE_MAX 64      /* bytes of an access-code file, at most */
#define FIRMWARE_PART_MAX 255   /* each part of a version is one byte */

/* Write a printf-style message into errbuf (errlen bytes); nothing when
 * errbuf is NULL or errlen is 0. */
static void __attribute__((format(printf, 3, 4)))
set_error(char *errbuf, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (errbuf == NULL || errlen == 0)
        return;
    va_start(ap, fmt);
    (void)vsnprintf(errbuf, errlen, fmt, ap);
    va_end(ap);
}

/* Check the parts of p that do not depend on the device: 0 or EINVAL. */
static krb5_error_code
check_params(const yk_program_params *p)
{
    if (p == NULL || (p->slot != 1 && p->slot != 2) ||
        p->pubid_len > YK_PUBID_MAX)
        return EINVAL;
    return 0;
}

/* 1 when this build can program devices; see program.h. */
int
yk_program_available(void)
{
#ifdef HAVE_YKPERS
    return 1;
#else
    return 0;
#endif
}

#ifdef HAVE_YKPERS

_Static_assert(sizeof(struct config_st) == YK_PROGRAM_BLOCK_LEN,
               "libykpers-1's configuration block is not 52 bytes");

/* A flag that Yubico OTP mode must not have: libykpers-1's getter and
 * setter for it. */
typedef struct {
    bool (*get)(const YKP_CONFIG *cfg);
    int (*set)(YKP_CONFIG *cfg, bool state);
} unwanted_flag;

/* Slot 2's default static-password flags, and the other modes' flags.
 * Each is cleared only when set: the setters refuse firmware that lacks
 * the flag, even to clear it. */
static const unwanted_flag unwanted_flags[] = {
    { ykp_get_cfgflag_STATIC_TICKET, ykp_set_cfgflag_STATIC_TICKET },
    { ykp_get_cfgflag_STRONG_PW1, ykp_set_cfgflag_STRONG_PW1 },
    { ykp_get_cfgflag_STRONG_PW2, ykp_set_cfgflag_STRONG_PW2 },
    { ykp_get_cfgflag_MAN_UPDATE, ykp_set_cfgflag_MAN_UPDATE },
    { ykp_get_cfgflag_SHORT_TICKET, ykp_set_cfgflag_SHORT_TICKET },
    { ykp_get_tktflag_OATH_HOTP, ykp_set_tktflag_OATH_HOTP },
    { ykp_get_tktflag_CHAL_RESP, ykp_set_tktflag_CHAL_RESP },
};

/* 1 if firmware major.minor is at least want_major.want_minor. */
static int
firmware_at_least(unsigned int major, unsigned int minor,
                  unsigned int want_major, unsigned int want_minor)
{
    return major > want_major || (major == want_major && minor >= want_minor);
}

/* Wipe the configuration block inside cfg, then free cfg; NULL is
 * accepted. */
static void
free_ykp(YKP_CONFIG *cfg)
{
    YK_CONFIG *core;

    if (cfg == NULL)
        return;
    core = ykp_core_config(cfg);
    if (core != NULL)
        yk_zap(core, sizeof(struct config_st));
    ykp_free_config(cfg);
}

/* Build with libykpers-1 the configuration of p (already checked) for
 * firmware major.minor.build, CRC not yet set.  *cfg_out (the caller
 * frees it with free_ykp) is set only on success. */
static krb5_error_code
make_ykp(const yk_program_params *p, unsigned int major, unsigned int minor,
         unsigned int build, YKP_CONFIG **cfg_out)
{
    struct status_st status;
    const unsigned char *acc = NULL;
    YKP_CONFIG *cfg = NULL;
    krb5_error_code ret;
    size_t i;

    if (major > FIRMWARE_PART_MAX || minor > FIRMWARE_PART_MAX ||
        build > FIRMWARE_PART_MAX)
        return EINVAL;
    /* YubiKey 1 flags mean other things; every key in service is newer. */
    if (major < 2)
        return ENOTSUP;

    /* The status block carries the version; the public type is opaque,
     * ykdef.h's struct status_st is what it stands for. */
    memset(&status, 0, sizeof(status));
    status.versionMajor = (unsigned char)major;
    status.versionMinor = (unsigned char)minor;
    status.versionBuild = (unsigned char)build;

    cfg = ykp_alloc();
    if (cfg == NULL)
        return ENOMEM;
    /* The slot's defaults and command; refuses a slot the firmware lacks
     * (slot 2 on a NEO beta). */
    if (!ykp_configure_for(cfg, p->slot, (YK_STATUS *)&status)) {
        ret = (ykp_errno == YKP_EOLDYUBIKEY ||
               ykp_errno == YKP_EYUBIKEYVER) ? ENOTSUP : YK_ERR_CONFIG;
        goto cleanup;
    }
    ret = YK_ERR_CONFIG;
    for (i = 0; i < sizeof(unwanted_flags) / sizeof(unwanted_flags[0]);
         i++) {
        if (unwanted_flags[i].get(cfg) && !unwanted_flags[i].set(cfg, false))
            goto cleanup;
    }
    if (!ykp_set_tktflag_APPEND_CR(cfg, true))
        goto cleanup;
    if (firmware_at_least(major, minor, 2, 2) &&
        !ykp_set_extflag_SERIAL_API_VISIBLE(cfg, true))
        goto cleanup;

    /* libykpers-1 only reads these buffers, despite their types.
     * ykp_AES_key_from_raw returns 0 on success. */
    if (ykp_AES_key_from_raw(cfg, (const char *)p->aes_key) != 0)
        goto cleanup;
    if (!ykp_set_fixed(cfg, (unsigned char *)p->pubid, p->pubid_len))
        goto cleanup;
    if (!ykp_set_uid(cfg, (unsigned char *)p->private_id,
                     sizeof(p->private_id)))
        goto cleanup;
    if (p->set_new_access_code)
        acc = p->new_access_code;
    else if (p->has_access_code)
        acc = p->access_code;
    if (acc != NULL &&
        !ykp_set_access_code(cfg, (unsigned char *)acc,
                             YK_PROGRAM_ACCESS_CODE_LEN))
        goto cleanup;

    *cfg_out = cfg;
    cfg = NULL;
    ret = 0;

cleanup:
    free_ykp(cfg);
    return ret;
}

/* Build p's configuration block offline, CRC included, into block_out
 * (set only on success; the caller wipes it).  Every copy made here is
 * wiped. */
krb5_error_code
yk_program_build_config(const yk_program_params *p,
                        unsigned int firmware_major,
                        unsigned int firmware_minor,
                        unsigned int firmware_build,
                        unsigned char block_out[YK_PROGRAM_BLOCK_LEN])
{
    unsigned char block[YK_PROGRAM_BLOCK_LEN];
    YKP_CONFIG *cfg = NULL;
    krb5_error_code ret;
    uint16_t crc;

    if (block_out == NULL)
        return EINVAL;
    ret = check_params(p);
    if (ret)
        return ret;
    ret = make_ykp(p, firmware_major, firmware_minor, firmware_build, &cfg);
    if (ret)
        goto cleanup;

    /* The CRC as the write path sets it: complement, little-endian. */
    memcpy(block, ykp_core_config(cfg), sizeof(block));
    crc = (uint16_t)~yk_crc16(block, YK_PROGRAM_BLOCK_LEN - 2);
    block[YK_PROGRAM_BLOCK_LEN - 2] = (unsigned char)(crc & 0xff);
    block[YK_PROGRAM_BLOCK_LEN - 1] = (unsigned char)(crc >> 8);
    memcpy(block_out, block, sizeof(block));

cleanup:
    yk_zap(block, sizeof(block));
    free_ykp(cfg);
    return ret;
}

/* Describe libykpers-1's last device error (yk_errno), with libusb's
 * reason for a USB error.  Not libykpers-1's yk_strerror: errors.h's
 * function of the same name takes its place in every program that links
 * shared/, so the texts are ours. */
static const char *
device_error(void)
{
    switch (yk_errno) {
    case YK_EUSBERR:
        return yk_usb_strerror();
    case YK_EWRONGSIZ:
        return "the device answered with a wrong size";
    case YK_EWRITEERR:
        return "the device did not take the write";
    case YK_ETIMEOUT:
        return "the device did not answer in time";
    case YK_ENOKEY:
        return "no YubiKey present";
    case YK_EFIRMWARE:
        return "unsupported firmware";
    case YK_ENOMEM:
        return "out of memory";
    case YK_ENOSTATUS:
        return "the device returned no status";
    case YK_ECHECKSUM:
        return "checksum error in the device's answer";
    case YK_EWOULDBLOCK:
        return "the device is waiting for a touch";
    case YK_EINVALIDCMD:
        return "command not valid for this device";
    case YK_EMORETHANONE:
        return "more than one YubiKey present";
    case YK_ENODATA:
        return "the device returned no data";
    default:
        return "unknown libykpers-1 error";
    }
}

/* Open the only YubiKey attached into *yk_out (set only on success),
 * after yk_init.  Fails with ENODEV when there is none and EBUSY when
 * there are several: the operator must know which device is written. */
static krb5_error_code
open_only_key(YK_KEY **yk_out, char *errbuf, size_t errlen)
{
    YK_KEY *yk = NULL, *other = NULL;
    krb5_error_code ret;

    yk = yk_open_first_key();
    if (yk == NULL) {
        if (yk_errno == YK_ENOKEY) {
            set_error(errbuf, errlen, "%s", NO_DEVICE_MSG);
            return ENODEV;
        }
        set_error(errbuf, errlen, "cannot open the YubiKey: %s (nothing "
                  "was written)", device_error());
        return EIO;
    }
    other = yk_open_key(1);
    if (other != NULL || yk_errno != YK_ENOKEY) {
        set_error(errbuf, errlen, "more than one YubiKey is attached: "
                  "unplug all but the one to program (nothing was written)");
        ret = EBUSY;
        goto cleanup;
    }
    *yk_out = yk;
    yk = NULL;
    ret = 0;

cleanup:
    if (other != NULL)
        yk_close_key(other);
    if (yk != NULL)
        yk_close_key(yk);
    return ret;
}

/* Program p->slot of the one YubiKey attached and check that it took the
 * configuration; errbuf gets the operator's message on failure.  USB and
 * libykpers-1 are released, and every secret copy wiped, on every path. */
krb5_error_code
yk_program_device(const yk_program_params *p, int force_slot1,
                  char *errbuf, size_t errlen, unsigned int *serial_out)
{
    unsigned char acc[YK_PROGRAM_ACCESS_CODE_LEN];
    YKP_CONFIG *cfg = NULL;
    YK_STATUS *status = NULL;
    YK_KEY *yk = NULL;
    krb5_error_code ret;
    unsigned int major, minor, build, serial = 0;
    int usb = 0, seq_before;

    memset(acc, 0, sizeof(acc));
    set_error(errbuf, errlen, "%s", "");
    ret = check_params(p);
    if (ret) {
        set_error(errbuf, errlen, "invalid programming request: slot 1 or "
                  "2 and a public id of at most %d bytes", YK_PUBID_MAX);
        goto cleanup;
    }
    if (p->slot == 1 && !force_slot1) {
        set_error(errbuf, errlen, "%s", SLOT1_MSG);
        ret = EPERM;
        goto cleanup;
    }

    if (!yk_init()) {
        set_error(errbuf, errlen, "cannot use USB (%s): %s", device_error(),
                  NO_DEVICE_MSG);
        ret = ENODEV;
        goto cleanup;
    }
    usb = 1;
    ret = open_only_key(&yk, errbuf, errlen);
    if (ret)
        goto cleanup;

    status = ykds_alloc();
    if (status == NULL) {
        set_error(errbuf, errlen, "out of memory (nothing was written)");
        ret = ENOMEM;
        goto cleanup;
    }
    if (!yk_get_status(yk, status)) {
        set_error(errbuf, errlen, "cannot read the YubiKey's status: %s "
                  "(nothing was written)", device_error());
        ret = EIO;
        goto cleanup;
    }
    major = (unsigned int)ykds_version_major(status);
    minor = (unsigned int)ykds_version_minor(status);
    build = (unsigned int)ykds_version_build(status);
    seq_before = ykds_pgm_seq(status);

    ret = make_ykp(p, major, minor, build, &cfg);
    if (ret == ENOTSUP) {
        set_error(errbuf, errlen, "this YubiKey (firmware %u.%u.%u) cannot "
                  "hold a Yubico OTP credential in slot %d%s (nothing was "
                  "written)", major, minor, build, p->slot,
                  major < 2 ? ": firmware 2.0 or later is needed" : "");
        goto cleanup;
    } else if (ret) {
        set_error(errbuf, errlen, "cannot build the configuration for "
                  "firmware %u.%u.%u: %s (nothing was written)", major,
                  minor, build, yk_strerror(ret));
        goto cleanup;
    }

    /* The write: libykpers-1 sets the CRC, appends the current access
     * code and waits for the device to take it. */
    if (p->has_access_code)
        memcpy(acc, p->access_code, sizeof(acc));
    if (!yk_write_command(yk, ykp_core_config(cfg),
                          (uint8_t)ykp_command(cfg),
                          p->has_access_code ? acc : NULL)) {
        if (yk_errno == YK_EWRITEERR) {
            set_error(errbuf, errlen, "%s (slot %d is unchanged; %s)",
                      REFUSED_MSG, p->slot, p->has_access_code ?
                      "the access code given was not accepted" :
                      "a slot protected by an access code needs it");
            ret = EACCES;
        } else {
            set_error(errbuf, errlen, "writing slot %d failed: %s; the "
                      "slot's state is unknown (check it with ykinfo or "
                      "ykman before trying again)", p->slot,
                      device_error());
            ret = EIO;
        }
        goto cleanup;
    }

    /* Our own check that the device took it: a new programming
     * sequence number. */
    if (!yk_get_status(yk, status)) {
        set_error(errbuf, errlen, "slot %d was written but the YubiKey's "
                  "status cannot be read back (%s): the slot's state is "
                  "unknown", p->slot, device_error());
        ret = EIO;
        goto cleanup;
    }
    if (ykds_pgm_seq(status) == seq_before) {
        set_error(errbuf, errlen, "%s (slot %d is unchanged)", REFUSED_MSG,
                  p->slot);
        ret = EACCES;
        goto cleanup;
    }

    /* The serial, for the record; a device may hide it (not an error). */
    if (firmware_at_least(major, minor, 2, 2) &&
        !yk_get_serial(yk, 0, 0, &serial))
        serial = 0;
    if (serial_out != NULL)
        *serial_out = serial;
    ret = 0;

cleanup:
    yk_zap(acc, sizeof(acc));
    free_ykp(cfg);
    if (status != NULL)
        ykds_free(status);
    if (yk != NULL)
        yk_close_key(yk);
    if (usb)
        yk_release();
    return ret;
}

#else /* !HAVE_YKPERS */

/* Without libykpers-1 no block is built: EINVAL or ENOTSUP. */
krb5_error_code
yk_program_build_config(const yk_program_params *p,
                        unsigned int firmware_major,
                        unsigned int firmware_minor,
                        unsigned int firmware_build,
                        unsigned char block_out[YK_PROGRAM_BLOCK_LEN])
{
    if (block_out == NULL || check_params(p) != 0)
        return EINVAL;
    return ENOTSUP;
}

/* Without libykpers-1 no device is programmed: ENOTSUP and a message. */
krb5_error_code
yk_program_device(const yk_program_params *p, int force_slot1,
                  char *errbuf, size_t errlen, unsigned int *serial_out)
{
    set_error(errbuf, errlen, "%s", NO_YKPERS_MSG);
    return ENOTSUP;
}

#endif /* HAVE_YKPERS */

/* Read the first line of fd into buf (size bytes) and set *len_out: up to
 * and including the first newline on a terminal or pipe shared with
 * others (one_line), up to end of file otherwise.  YK_ERR_HEX when it
 * does not fit. */
static krb5_error_code
read_line(int fd, int one_line, char *buf, size_t size, size_t *len_out)
{
    size_t len = 0;
    ssize_t n;

    for (;;) {
        if (len == size)
            return YK_ERR_HEX;
        /* Byte by byte on standard input: what follows stays unread. */
        n = read(fd, buf + len, one_line ? 1 : size - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno;
        if (n == 0)
            break;
        len += (size_t)n;
        if (one_line && buf[len - 1] == '\n')
            break;
    }
    *len_out = len;
    return 0;
}

/* Read a 12-hex-digit access code from the file source or, for "-",
 * the first line of standard input; code_out is set only on success. */
krb5_error_code
yk_program_read_access_code(const char *source,
                            unsigned char
                            code_out[YK_PROGRAM_ACCESS_CODE_LEN])
{
    unsigned char code[YK_PROGRAM_ACCESS_CODE_LEN];
    char line[ACCESS_LINE_MAX];
    struct termios saved, quiet;
    krb5_error_code ret;
    size_t len = 0;
    int fd = -1, from_stdin, echo_off = 0;

    if (source == NULL || *source == '\0' || code_out == NULL)
        return EINVAL;
    from_stdin = strcmp(source, "-") == 0;
    if (from_stdin) {
        fd = STDIN_FILENO;
        /* A code typed at a terminal is not shown. */
        if (isatty(fd) && tcgetattr(fd, &saved) == 0) {
            quiet = saved;
            quiet.c_lflag &= ~(tcflag_t)ECHO;
            if (tcsetattr(fd, TCSAFLUSH, &quiet) == 0)
                echo_off = 1;
        }
    } else {
        fd = open(source, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
            return errno;
    }

    ret = read_line(fd, from_stdin, line, sizeof(line), &len);
    if (ret)
        goto cleanup;
    /* One line end, "\n" or "\r\n", and nothing else around the code. */
    if (len > 0 && line[len - 1] == '\n') {
        len--;
        if (len > 0 && line[len - 1] == '\r')
            len--;
    }
    ret = yk_hex_decode(line, len, code, sizeof(code));
    if (ret) {
        ret = YK_ERR_HEX;
        goto cleanup;
    }
    memcpy(code_out, code, sizeof(code));

cleanup:
    if (echo_off)
        (void)tcsetattr(fd, TCSAFLUSH, &saved);
    if (!from_stdin && fd >= 0)
        (void)close(fd);
    yk_zap(code, sizeof(code));
    yk_zap(line, sizeof(line));
    return ret;
}
