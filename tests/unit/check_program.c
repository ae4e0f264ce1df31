/* SPDX-License-Identifier: MIT */
/* check_program.c: unit tests of admin/program.c (offline, no device). */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#ifdef HAVE_YKPERS
#include <ykpers.h>
#include <ykcore.h>
#endif

#include "errors.h"
#include "program.h"

#define BLOCK_LEN YK_PROGRAM_BLOCK_LEN
#define ACC_LEN YK_PROGRAM_ACCESS_CODE_LEN
#define SENTINEL 0xa5

/* Field offsets of the configuration block, from ykdef.h's layout. */
#define OFF_FIXED 0
#define OFF_UID 16
#define OFF_KEY 22
#define OFF_ACC 38
#define OFF_FIXED_SIZE 44
#define OFF_EXT 45
#define OFF_TKT 46
#define OFF_CFG 47
#define OFF_RFU 48
#define OFF_CRC 50

/* Flag values, from the YubiKey's documentation (ykdef.h). */
#define T_APPEND_CR 0x20
#define T_OATH_HOTP 0x40
#define T_CHAL_RESP 0x40
#define C_STATIC_TICKET 0x20
#define C_STRONG_PW1 0x10
#define C_STRONG_PW2 0x40
#define C_MAN_UPDATE 0x80
#define E_SERIAL_API_VISIBLE 0x04

#define NO_DEVICE_MSG "no YubiKey found (use --emulate FILE for a " \
    "software token)"
#define SLOT1_MSG "slot 1 holds the factory credential; --force " \
    "overwrites it for good"

static const unsigned char test_key[16] = {
    0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,
    0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c
};
static const unsigned char test_uid[6] = {
    0x0a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f
};
static const unsigned char test_pubid[6] = {
    0x28, 0x42, 0x6f, 0x9a, 0xc3, 0x71
};
static const unsigned char test_acc[6] = {
    0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6
};

/* The usual parameters: test key, private id and public id in slot. */
static void
init_params(yk_program_params *p, int slot)
{
    memset(p, 0, sizeof(*p));
    memcpy(p->aes_key, test_key, sizeof(test_key));
    memcpy(p->private_id, test_uid, sizeof(test_uid));
    memcpy(p->pubid, test_pubid, sizeof(test_pubid));
    p->pubid_len = sizeof(test_pubid);
    p->slot = slot;
}

#ifdef HAVE_YKPERS

/* Golden blocks, worked out by hand from the layout (CRC computed
 * separately): test_key, test_uid, test_pubid, either slot. */

/* Firmware 5.4.3: SERIAL_API_VISIBLE, APPEND_CR, no access code. */
static const unsigned char golden_fw5[BLOCK_LEN] = {
    0x28, 0x42, 0x6f, 0x9a, 0xc3, 0x71, 0x00, 0x00,   /* fixed */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x0a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f,               /* uid */
    0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,   /* key */
    0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00,               /* accCode */
    0x06, 0x04, 0x20, 0x00,                           /* size ext tkt cfg */
    0x00, 0x00,                                       /* rfu */
    0x71, 0xe9                                        /* crc */
};

/* Firmware 2.0.2: no serial flag before 2.2. */
static const unsigned char golden_fw20[BLOCK_LEN] = {
    0x28, 0x42, 0x6f, 0x9a, 0xc3, 0x71, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x0a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f,
    0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,
    0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x06, 0x00, 0x20, 0x00,
    0x00, 0x00,
    0x61, 0xc4
};

/* Firmware 5.4.3 with test_acc as the slot's access code. */
static const unsigned char golden_fw5_acc[BLOCK_LEN] = {
    0x28, 0x42, 0x6f, 0x9a, 0xc3, 0x71, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x0a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f,
    0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,
    0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c,
    0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6,
    0x06, 0x04, 0x20, 0x00,
    0x00, 0x00,
    0x9d, 0x66
};

/* CRC-16/X-25 without the final complement, written here independently
 * of shared/otp.c: reflected polynomial 0x8408, initial value 0xffff. */
static unsigned int
test_crc16(const unsigned char *p, size_t n)
{
    unsigned int crc = 0xffff;
    size_t i;
    int bit;

    for (i = 0; i < n; i++) {
        crc ^= p[i];
        for (bit = 0; bit < 8; bit++) {
            if (crc & 1)
                crc = (crc >> 1) ^ 0x8408;
            else
                crc >>= 1;
        }
    }
    return crc;
}

/* Assemble the expected block field by field. */
static void
expect_block(const unsigned char *pubid, size_t pubid_len,
             const unsigned char *acc, unsigned char ext, unsigned char tkt,
             unsigned char cfg, unsigned char out[BLOCK_LEN])
{
    unsigned int crc;

    memset(out, 0, BLOCK_LEN);
    memcpy(out + OFF_FIXED, pubid, pubid_len);
    memcpy(out + OFF_UID, test_uid, sizeof(test_uid));
    memcpy(out + OFF_KEY, test_key, sizeof(test_key));
    if (acc != NULL)
        memcpy(out + OFF_ACC, acc, ACC_LEN);
    out[OFF_FIXED_SIZE] = (unsigned char)pubid_len;
    out[OFF_EXT] = ext;
    out[OFF_TKT] = tkt;
    out[OFF_CFG] = cfg;
    crc = ~test_crc16(out, OFF_CRC) & 0xffff;
    out[OFF_CRC] = (unsigned char)(crc & 0xff);
    out[OFF_CRC + 1] = (unsigned char)(crc >> 8);
}

/* Print both blocks when they differ, so a failure shows the bytes. */
static void
assert_block_eq(const unsigned char *got, const unsigned char *want,
                const char *what)
{
    size_t i;

    if (memcmp(got, want, BLOCK_LEN) == 0)
        return;
    for (i = 0; i < BLOCK_LEN; i++) {
        if (got[i] != want[i])
            fprintf(stderr, "%s: byte %zu is 0x%02x, expected 0x%02x\n",
                    what, i, got[i], want[i]);
    }
    ck_abort_msg("%s: configuration block differs", what);
}

/* ---- the configuration block ----------------------------------------- */

START_TEST(test_block_golden)
{
    yk_program_params p;
    unsigned char block[BLOCK_LEN];
    int slot;

    for (slot = 1; slot <= 2; slot++) {
        init_params(&p, slot);
        ck_assert_int_eq(yk_program_build_config(&p, 5, 4, 3, block), 0);
        assert_block_eq(block, golden_fw5, "firmware 5.4.3");
        ck_assert_int_eq(yk_program_build_config(&p, 2, 0, 2, block), 0);
        assert_block_eq(block, golden_fw20, "firmware 2.0.2");
        p.set_new_access_code = 1;
        memcpy(p.new_access_code, test_acc, ACC_LEN);
        ck_assert_int_eq(yk_program_build_config(&p, 5, 4, 3, block), 0);
        assert_block_eq(block, golden_fw5_acc, "access code");
    }
}
END_TEST

/* Every firmware family, both slots: the block assembled from the
 * layout.  The serial flag from 2.2 on; nothing else changes. */
START_TEST(test_block_by_layout)
{
    static const unsigned int fw[][3] = {
        { 2, 0, 0 }, { 2, 1, 1 }, { 2, 2, 3 }, { 2, 3, 0 }, { 2, 4, 3 },
        { 3, 0, 1 }, { 3, 4, 9 }, { 4, 3, 7 }, { 5, 1, 2 }, { 5, 7, 1 },
    };
    yk_program_params p;
    unsigned char block[BLOCK_LEN], want[BLOCK_LEN];
    unsigned char ext;
    size_t i;
    int slot;

    for (i = 0; i < sizeof(fw) / sizeof(fw[0]); i++) {
        ext = (fw[i][0] > 2 || fw[i][1] >= 2) ? E_SERIAL_API_VISIBLE : 0;
        expect_block(test_pubid, sizeof(test_pubid), NULL, ext, T_APPEND_CR,
                     0, want);
        for (slot = 1; slot <= 2; slot++) {
            init_params(&p, slot);
            ck_assert_int_eq(yk_program_build_config(&p, fw[i][0], fw[i][1],
                                                     fw[i][2], block), 0);
            assert_block_eq(block, want, "by layout");
        }
    }
}
END_TEST

/* The slot is the command, not part of the block: both slots' blocks are
 * byte for byte the same, so slot 2's defaults (a static password) left
 * nothing behind. */
START_TEST(test_slots_same_block)
{
    yk_program_params p1, p2;
    unsigned char b1[BLOCK_LEN], b2[BLOCK_LEN];

    init_params(&p1, 1);
    init_params(&p2, 2);
    ck_assert_int_eq(yk_program_build_config(&p1, 4, 3, 7, b1), 0);
    ck_assert_int_eq(yk_program_build_config(&p2, 4, 3, 7, b2), 0);
    assert_block_eq(b2, b1, "slot 2 against slot 1");
}
END_TEST

START_TEST(test_slot2_static_flags_clear)
{
    yk_program_params p;
    unsigned char block[BLOCK_LEN];

    init_params(&p, 2);
    ck_assert_int_eq(yk_program_build_config(&p, 5, 4, 3, block), 0);
    ck_assert_int_eq(block[OFF_CFG] & (C_STATIC_TICKET | C_STRONG_PW1 |
                                       C_STRONG_PW2 | C_MAN_UPDATE), 0);
    ck_assert_int_eq(block[OFF_CFG], 0);
    /* Yubico OTP mode: neither OATH-HOTP nor challenge-response. */
    ck_assert_int_eq(block[OFF_TKT] & (T_OATH_HOTP | T_CHAL_RESP), 0);
    ck_assert_int_eq(block[OFF_TKT], T_APPEND_CR);
}
END_TEST

/* Which access code protects the slot afterwards. */
START_TEST(test_access_code)
{
    static const unsigned char other[ACC_LEN] = {
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06
    };
    static const unsigned char zero[ACC_LEN] = { 0 };
    yk_program_params p;
    unsigned char block[BLOCK_LEN], want[BLOCK_LEN];

    /* A new code only. */
    init_params(&p, 2);
    p.set_new_access_code = 1;
    memcpy(p.new_access_code, test_acc, ACC_LEN);
    ck_assert_int_eq(yk_program_build_config(&p, 3, 4, 3, block), 0);
    ck_assert_mem_eq(block + OFF_ACC, test_acc, ACC_LEN);
    expect_block(test_pubid, sizeof(test_pubid), test_acc,
                 E_SERIAL_API_VISIBLE, T_APPEND_CR, 0, want);
    assert_block_eq(block, want, "new access code");

    /* The current code only: the slot stays protected by it. */
    init_params(&p, 2);
    p.has_access_code = 1;
    memcpy(p.access_code, test_acc, ACC_LEN);
    ck_assert_int_eq(yk_program_build_config(&p, 3, 4, 3, block), 0);
    assert_block_eq(block, want, "current access code kept");

    /* Both: the new one wins. */
    p.set_new_access_code = 1;
    memcpy(p.new_access_code, other, ACC_LEN);
    ck_assert_int_eq(yk_program_build_config(&p, 3, 4, 3, block), 0);
    ck_assert_mem_eq(block + OFF_ACC, other, ACC_LEN);

    /* A new code of zeros removes the protection. */
    memcpy(p.new_access_code, zero, ACC_LEN);
    ck_assert_int_eq(yk_program_build_config(&p, 3, 4, 3, block), 0);
    expect_block(test_pubid, sizeof(test_pubid), NULL,
                 E_SERIAL_API_VISIBLE, T_APPEND_CR, 0, want);
    assert_block_eq(block, want, "access code removed");
}
END_TEST

/* The CRC a device checks: residual 0xf0b8 over the 52 bytes, and any
 * single changed bit breaks it. */
START_TEST(test_block_crc)
{
    yk_program_params p;
    unsigned char block[BLOCK_LEN];
    size_t i;
    int bit;

    init_params(&p, 2);
    p.set_new_access_code = 1;
    memcpy(p.new_access_code, test_acc, ACC_LEN);
    ck_assert_int_eq(yk_program_build_config(&p, 5, 4, 3, block), 0);
    ck_assert_uint_eq(test_crc16(block, BLOCK_LEN), 0xf0b8);
    for (i = 0; i < BLOCK_LEN; i++) {
        for (bit = 0; bit < 8; bit++) {
            block[i] ^= (unsigned char)(1U << bit);
            ck_assert_uint_ne(test_crc16(block, BLOCK_LEN), 0xf0b8);
            block[i] ^= (unsigned char)(1U << bit);
        }
    }
}
END_TEST

/* Public ids of every allowed length: the size byte and zero padding. */
START_TEST(test_pubid_lengths)
{
    yk_program_params p;
    unsigned char pubid[YK_PUBID_MAX];
    unsigned char block[BLOCK_LEN], want[BLOCK_LEN];
    size_t len, i;

    for (i = 0; i < sizeof(pubid); i++)
        pubid[i] = (unsigned char)(0xf0 - i);
    for (len = 0; len <= YK_PUBID_MAX; len++) {
        init_params(&p, 2);
        memcpy(p.pubid, pubid, sizeof(pubid));
        p.pubid_len = len;
        ck_assert_int_eq(yk_program_build_config(&p, 5, 4, 3, block), 0);
        expect_block(pubid, len, NULL, E_SERIAL_API_VISIBLE, T_APPEND_CR,
                     0, want);
        assert_block_eq(block, want, "public id length");
        ck_assert_uint_eq(block[OFF_FIXED_SIZE], len);
    }
}
END_TEST

/* A refused request leaves block_out as it was. */
static void
assert_refused(const yk_program_params *p, unsigned int major,
               unsigned int minor, unsigned int build, krb5_error_code want)
{
    unsigned char block[BLOCK_LEN];
    size_t i;

    memset(block, SENTINEL, sizeof(block));
    ck_assert_int_eq(yk_program_build_config(p, major, minor, build, block),
                     want);
    for (i = 0; i < BLOCK_LEN; i++)
        ck_assert_uint_eq(block[i], SENTINEL);
}

START_TEST(test_bad_params)
{
    yk_program_params p;
    unsigned char block[BLOCK_LEN];

    init_params(&p, 2);
    p.pubid_len = YK_PUBID_MAX + 1;
    assert_refused(&p, 5, 4, 3, EINVAL);
    p.pubid_len = (size_t)-1;
    assert_refused(&p, 5, 4, 3, EINVAL);

    init_params(&p, 3);
    assert_refused(&p, 5, 4, 3, EINVAL);
    p.slot = 0;
    assert_refused(&p, 5, 4, 3, EINVAL);
    p.slot = -1;
    assert_refused(&p, 5, 4, 3, EINVAL);

    assert_refused(NULL, 5, 4, 3, EINVAL);
    init_params(&p, 2);
    ck_assert_int_eq(yk_program_build_config(&p, 5, 4, 3, NULL), EINVAL);

    /* Version parts are bytes. */
    assert_refused(&p, 256, 0, 0, EINVAL);
    assert_refused(&p, 5, 256, 0, EINVAL);
    assert_refused(&p, 5, 4, 256, EINVAL);

    /* Firmware 1.x is refused; so is slot 2 on a NEO beta (2.1.4+),
     * which has only one slot. */
    assert_refused(&p, 1, 3, 0, ENOTSUP);
    assert_refused(&p, 0, 0, 0, ENOTSUP);
    assert_refused(&p, 2, 1, 5, ENOTSUP);
    init_params(&p, 1);
    assert_refused(&p, 1, 3, 0, ENOTSUP);
    ck_assert_int_eq(yk_program_build_config(&p, 2, 1, 5, block), 0);
}
END_TEST

/* ---- the device --------------------------------------------------------- */

/* These tests must never reach a real YubiKey: stop if one is attached. */
static void
assert_no_device_attached(void)
{
    YK_KEY *yk;

    if (!yk_init())
        return;
    yk = yk_open_first_key();
    if (yk != NULL) {
        yk_close_key(yk);
        yk_release();
        ck_abort_msg("a YubiKey is attached: unplug it, this test would "
                     "try to program it");
    }
    yk_release();
}

START_TEST(test_device_none)
{
    yk_program_params p;
    char errbuf[YK_PROGRAM_ERRBUF_LEN];
    unsigned int serial = 12345;

    assert_no_device_attached();
    init_params(&p, 2);
    memset(errbuf, 'x', sizeof(errbuf));
    ck_assert_int_eq(yk_program_device(&p, 0, errbuf, sizeof(errbuf),
                                       &serial), ENODEV);
    ck_assert_str_eq(errbuf, NO_DEVICE_MSG);
    ck_assert_uint_eq(serial, 12345);

    /* Slot 1 with --force gets as far as looking for the device. */
    init_params(&p, 1);
    ck_assert_int_eq(yk_program_device(&p, 1, errbuf, sizeof(errbuf),
                                       &serial), ENODEV);
    ck_assert_str_eq(errbuf, NO_DEVICE_MSG);

    /* Twice in a row: USB is released between calls. */
    init_params(&p, 2);
    ck_assert_int_eq(yk_program_device(&p, 0, errbuf, sizeof(errbuf),
                                       NULL), ENODEV);
    ck_assert_str_eq(errbuf, NO_DEVICE_MSG);
}
END_TEST

START_TEST(test_device_slot1_refused)
{
    yk_program_params p;
    char errbuf[YK_PROGRAM_ERRBUF_LEN];
    unsigned int serial = 7;

    /* Refused before any USB access, so safe with a device attached. */
    init_params(&p, 1);
    ck_assert_int_eq(yk_program_device(&p, 0, errbuf, sizeof(errbuf),
                                       &serial), EPERM);
    ck_assert_str_eq(errbuf, SLOT1_MSG);
    ck_assert_uint_eq(serial, 7);
}
END_TEST

START_TEST(test_device_bad_params)
{
    yk_program_params p;
    char errbuf[YK_PROGRAM_ERRBUF_LEN], small[12];

    init_params(&p, 3);
    ck_assert_int_eq(yk_program_device(&p, 1, errbuf, sizeof(errbuf), NULL),
                     EINVAL);
    ck_assert_ptr_nonnull(strstr(errbuf, "slot 1 or 2"));
    init_params(&p, 2);
    p.pubid_len = YK_PUBID_MAX + 1;
    ck_assert_int_eq(yk_program_device(&p, 0, errbuf, sizeof(errbuf), NULL),
                     EINVAL);
    ck_assert_int_eq(yk_program_device(NULL, 0, errbuf, sizeof(errbuf),
                                       NULL), EINVAL);

    /* No buffer, and a short one: truncated, terminated. */
    init_params(&p, 1);
    ck_assert_int_eq(yk_program_device(&p, 0, NULL, 0, NULL), EPERM);
    memset(small, 'x', sizeof(small));
    ck_assert_int_eq(yk_program_device(&p, 0, small, sizeof(small), NULL),
                     EPERM);
    ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
    ck_assert_int_eq(strncmp(small, SLOT1_MSG, sizeof(small) - 1), 0);
}
END_TEST

#else /* !HAVE_YKPERS */

START_TEST(test_without_ykpers)
{
    yk_program_params p;
    unsigned char block[BLOCK_LEN];
    char errbuf[YK_PROGRAM_ERRBUF_LEN];

    init_params(&p, 2);
    ck_assert_int_eq(yk_program_available(), 0);
    ck_assert_int_eq(yk_program_build_config(&p, 5, 4, 3, block), ENOTSUP);
    ck_assert_int_eq(yk_program_device(&p, 0, errbuf, sizeof(errbuf), NULL),
                     ENOTSUP);
    ck_assert_ptr_nonnull(strstr(errbuf, "built without libykpers-1"));
}
END_TEST

#endif /* HAVE_YKPERS */

/* ---- access codes ------------------------------------------------------- */

#define TEST_DIR_TEMPLATE "/tmp/check_program.XXXXXX"
static char test_dir[] = TEST_DIR_TEMPLATE;

/* Write len bytes of data to a fresh file in test_dir; returns its path
 * (static storage, overwritten by the next call). */
static const char *
write_file(const char *data, size_t len)
{
    static char path[sizeof(test_dir) + 32];
    static int serial;
    FILE *f;

    snprintf(path, sizeof(path), "%s/code%d", test_dir, serial++);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
    return path;
}

/* A fresh directory for each test (mkdtemp rewrites the template). */
static void
setup_dir(void)
{
    memcpy(test_dir, TEST_DIR_TEMPLATE, sizeof(test_dir));
    ck_assert_ptr_nonnull(mkdtemp(test_dir));
}

/* Remove the files write_file made, then the directory. */
static void
teardown_dir(void)
{
    char path[sizeof(test_dir) + 32];
    int i;

    for (i = 0; i < 64; i++) {
        snprintf(path, sizeof(path), "%s/code%d", test_dir, i);
        (void)unlink(path);
    }
    (void)rmdir(test_dir);
}

/* Read an access code from a file holding data: the result code, and
 * code_out unchanged unless it succeeded. */
static krb5_error_code
read_code_from(const char *data, unsigned char code[ACC_LEN])
{
    unsigned char out[ACC_LEN];
    krb5_error_code ret;
    size_t i;

    memset(out, SENTINEL, sizeof(out));
    ret = yk_program_read_access_code(write_file(data, strlen(data)), out);
    if (ret) {
        for (i = 0; i < ACC_LEN; i++)
            ck_assert_uint_eq(out[i], SENTINEL);
    }
    memcpy(code, out, ACC_LEN);
    return ret;
}

START_TEST(test_access_code_good)
{
    static const char *good[] = {
        "a1b2c3d4e5f6\n", "a1b2c3d4e5f6", "a1b2c3d4e5f6\r\n",
        "A1B2C3D4E5F6\n", "A1b2C3d4E5f6",
    };
    unsigned char code[ACC_LEN];
    size_t i;

    for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        ck_assert_int_eq(read_code_from(good[i], code), 0);
        ck_assert_mem_eq(code, test_acc, ACC_LEN);
    }
    ck_assert_int_eq(read_code_from("000000000000\n", code), 0);
    ck_assert_mem_eq(code, "\0\0\0\0\0\0", ACC_LEN);
}
END_TEST

START_TEST(test_access_code_bad)
{
    static const char *bad[] = {
        "",                         /* empty */
        "\n",
        "a1b2c3d4e5\n",             /* short */
        "a1b2c3d4e5f\n",            /* odd */
        "a1b2c3d4e5f6a7\n",         /* long */
        "a1b2c3d4e5g6\n",           /* not hex */
        "a1b2c3d4-5f6\n",
        "0xa1b2c3d4e5\n",
        "a1b2c3d4e5f6 \n",          /* trailing garbage */
        "a1b2c3d4e5f6 x\n",
        "a1b2c3d4e5f6\n\n",
        "a1b2c3d4e5f6\nextra\n",
        "a1b2c3d4e5f6\r",
        "a1b2c3d4e5f6\n\r",
        " a1b2c3d4e5f6\n",          /* leading garbage */
        "\na1b2c3d4e5f6\n",
        "cbdefghijkln\n",           /* modhex is not accepted */
        ("a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6"
         "a1b2c3d4e5f6\n"),          /* longer than the reader's buffer */
    };
    unsigned char code[ACC_LEN];
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (read_code_from(bad[i], code) != YK_ERR_HEX)
            ck_abort_msg("access code file %zu accepted or odd error", i);
    }
}
END_TEST

START_TEST(test_access_code_source)
{
    unsigned char code[ACC_LEN];
    char path[sizeof(test_dir) + 32];

    snprintf(path, sizeof(path), "%s/missing", test_dir);
    ck_assert_int_eq(yk_program_read_access_code(path, code), ENOENT);
    ck_assert_int_eq(yk_program_read_access_code(test_dir, code), EISDIR);
    ck_assert_int_eq(yk_program_read_access_code(NULL, code), EINVAL);
    ck_assert_int_eq(yk_program_read_access_code("", code), EINVAL);
    ck_assert_int_eq(yk_program_read_access_code(path, NULL), EINVAL);
}
END_TEST

/* "-" reads the first line of standard input and leaves the rest. */
START_TEST(test_access_code_stdin)
{
    static const char input[] = "a1b2c3d4e5f6\nnext line\n";
    unsigned char code[ACC_LEN];
    char rest[32];
    ssize_t n;
    int fd;

    fd = open(write_file(input, strlen(input)), O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(dup2(fd, STDIN_FILENO), STDIN_FILENO);
    close(fd);
    ck_assert_int_eq(yk_program_read_access_code("-", code), 0);
    ck_assert_mem_eq(code, test_acc, ACC_LEN);
    n = read(STDIN_FILENO, rest, sizeof(rest) - 1);
    ck_assert_int_eq(n, (ssize_t)strlen("next line\n"));
    rest[n] = '\0';
    ck_assert_str_eq(rest, "next line\n");

    /* A bad first line on standard input is refused too. */
    fd = open(write_file("a1b2c3\n", 7), O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(dup2(fd, STDIN_FILENO), STDIN_FILENO);
    close(fd);
    ck_assert_int_eq(yk_program_read_access_code("-", code), YK_ERR_HEX);
}
END_TEST

static Suite *
program_suite(void)
{
    Suite *s = suite_create("program");
    TCase *tc = tcase_create("program");
    TCase *tc_acc = tcase_create("access_code");

#ifdef HAVE_YKPERS
    tcase_add_test(tc, test_block_golden);
    tcase_add_test(tc, test_block_by_layout);
    tcase_add_test(tc, test_slots_same_block);
    tcase_add_test(tc, test_slot2_static_flags_clear);
    tcase_add_test(tc, test_access_code);
    tcase_add_test(tc, test_block_crc);
    tcase_add_test(tc, test_pubid_lengths);
    tcase_add_test(tc, test_bad_params);
    tcase_add_test(tc, test_device_none);
    tcase_add_test(tc, test_device_slot1_refused);
    tcase_add_test(tc, test_device_bad_params);
#else
    tcase_add_test(tc, test_without_ykpers);
#endif
    suite_add_tcase(s, tc);

    tcase_add_checked_fixture(tc_acc, setup_dir, teardown_dir);
    tcase_add_test(tc_acc, test_access_code_good);
    tcase_add_test(tc_acc, test_access_code_bad);
    tcase_add_test(tc_acc, test_access_code_source);
    tcase_add_test(tc_acc, test_access_code_stdin);
    suite_add_tcase(s, tc_acc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(program_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
