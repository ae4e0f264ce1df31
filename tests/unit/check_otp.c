/* SPDX-License-Identifier: MIT */
/* check_otp.c: unit tests of shared/otp.c (known answers, then bad input). */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <check.h>
#include <gcrypt.h>

#include "errors.h"
#include "otp.h"

#ifndef YK_TEST_DATA
#error "YK_TEST_DATA must name the tests/data directory"
#endif

#define VECTORS_FILE YK_TEST_DATA "/otp-vectors.tsv"
#define VECTORS_MIN_ROWS 21     /* rows in otp-vectors.tsv today */
#define MAX_COLUMNS 16
#define ROUND_TRIPS 3000

/* yubico-tv-1: key 000102..0f, private id 010203040506, usage 1,
 * timestamp 0x010001, session 1, random 0. */
static const char tv1_otp[] = "dvgtiblfkbgturecfllberrvkinnctnn";
static const unsigned char tv1_key[YK_AES_KEY_LEN] = {
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
    0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f
};
static const unsigned char tv1_privid[YK_PRIVID_LEN] = {
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06
};
/* Its decrypted block (from the vectors file's note). */
static const unsigned char tv1_plain[YK_TOKEN_LEN] = {
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x01, 0x00,
    0x01, 0x00, 0x01, 0x01, 0x00, 0x00, 0x36, 0xfe
};
/* A 44-character OTP with a public id (ykksm-selftest-ok). */
static const char ksm_otp[] =
    "idkfefrdhtrutjduvtcjbfeuvhehdvjjlbchtlenfgku";

/* ---- helpers --------------------------------------------------------- */

/* A small deterministic generator (xorshift64*), so failures reproduce. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t
rng_next(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dULL;
}

static void
rng_bytes(unsigned char *p, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        p[i] = (unsigned char)(rng_next() >> 56);
}

/* A CRC-16/X-25 core written the textbook way, to cross-check yk_crc16. */
static uint16_t
ref_crc16(const unsigned char *p, size_t n)
{
    uint16_t crc = 0xffff;
    size_t i;
    int b;

    for (i = 0; i < n; i++) {
        crc ^= p[i];
        for (b = 0; b < 8; b++) {
            if (crc & 1)
                crc = (uint16_t)((crc >> 1) ^ 0x8408);
            else
                crc = (uint16_t)(crc >> 1);
        }
    }
    return crc;
}

/* Decode hex that a test itself supplies; aborts the test if malformed. */
static void
must_hex(const char *hex, unsigned char *out, size_t outlen)
{
    ck_assert_msg(yk_hex_decode(hex, strlen(hex), out, outlen) == 0,
                  "bad hex in test data: '%s'", hex);
}

/* Lower-case copy of n characters of s into out (n + 1 bytes). */
static void
lower_copy(const char *s, size_t n, char *out)
{
    size_t i;

    for (i = 0; i < n; i++)
        out[i] = (char)tolower((unsigned char)s[i]);
    out[n] = '\0';
}

/* Parse a whole decimal field; -1 when it is "-", empty or malformed. */
static long
parse_num(const char *s)
{
    char *end = NULL;
    unsigned long v;

    if (s == NULL || *s == '\0' || strcmp(s, "-") == 0)
        return -1;
    errno = 0;
    v = strtoul(s, &end, 10);
    ck_assert_msg(errno == 0 && *end == '\0' && v <= 0xffffffUL,
                  "bad number in vectors file: '%s'", s);
    return (long)v;
}

/* The error a "fail" row expects, from its note's "Reject reason:". */
static krb5_error_code
expected_error(const char *name, const char *note)
{
    const char *r = strstr(note, "Reject reason:");

    ck_assert_msg(r != NULL, "%s: fail row without a reject reason", name);
    if (strstr(r, "non-modhex") != NULL)
        return YK_ERR_MODHEX;
    if (strstr(r, "odd length") != NULL)
        return YK_ERR_OTP_ODD;
    if (strstr(r, "length out of range") != NULL)
        return YK_ERR_OTP_LENGTH;
    if (strstr(r, "CRC") != NULL)
        return YK_ERR_OTP_CRC;
    if (strstr(r, "private id mismatch") != NULL)
        return YK_ERR_OTP_PRIVID;
    ck_abort_msg("%s: unknown reject reason: %s", name, r);
    return 0;
}

/* Split line at tabs in place (empty fields kept); the field count. */
static int
split_tabs(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line, *tab;

    while (n < max) {
        fields[n++] = p;
        tab = strchr(p, '\t');
        if (tab == NULL)
            break;
        *tab = '\0';
        p = tab + 1;
    }
    return n;
}

/* Index of column name in the header, aborting if it is missing. */
static int
column(char **hdr, int ncols, const char *name)
{
    int i;

    for (i = 0; i < ncols; i++) {
        if (strcmp(hdr[i], name) == 0)
            return i;
    }
    ck_abort_msg("vectors file has no column '%s'", name);
    return -1;
}

/* ---- known-answer vectors ---------------------------------------------- */

enum { C_NAME, C_KEY, C_OTP, C_EXPECT, C_PRIVID, C_USAGE, C_SESSION,
       C_TS, C_NOTE, C_COUNT };
static const char *const column_names[C_COUNT] = {
    "name", "aes_key_hex", "otp", "expect", "private_id_hex",
    "usage_counter", "session_counter", "timestamp", "note"
};

/* Check one "ok" row: it verifies, and every field it states matches. */
static void
check_ok_row(char **v, const unsigned char *key, const unsigned char *privid)
{
    const char *name = v[C_NAME], *s = v[C_OTP], *cnt;
    size_t len = strlen(s);
    yk_otp otp;
    yk_token_fields f;
    unsigned char token[YK_TOKEN_LEN];
    char lower[YK_OTP_MAX_LEN + 1];
    krb5_error_code ret;
    long usage, session, ts;

    ret = yk_otp_verify(s, len, key, privid, &otp, &f);
    ck_assert_msg(ret == 0, "%s: refused: %s", name, yk_strerror(ret));
    ck_assert_msg(memcmp(f.private_id, privid, YK_PRIVID_LEN) == 0,
                  "%s: private id", name);

    usage = parse_num(v[C_USAGE]);
    session = parse_num(v[C_SESSION]);
    ts = parse_num(v[C_TS]);
    ck_assert_msg(usage >= 0 && session >= 0 && ts >= 0,
                  "%s: ok row without its fields", name);
    ck_assert_msg(f.usage == usage, "%s: usage %u, expected %ld", name,
                  (unsigned)f.usage, usage);
    ck_assert_msg(f.session == session, "%s: session %u, expected %ld",
                  name, (unsigned)f.session, session);
    ck_assert_msg(f.timestamp == (uint32_t)ts, "%s: timestamp %lu, "
                  "expected %ld", name, (unsigned long)f.timestamp, ts);

    /* The note states the comparison value as "...<<8|session=N". */
    cnt = strstr(v[C_NOTE], "<<8|session=");
    if (cnt != NULL) {
        ck_assert_uint_eq(yk_otp_counter(&f),
                          strtoul(cnt + strlen("<<8|session="), NULL, 10));
    }

    /* Public id: the leading characters, canonical lower case. */
    lower_copy(s, len - YK_TOKEN_MODHEX_LEN, lower);
    ck_assert_str_eq(otp.pubid_modhex, lower);
    ck_assert_uint_eq(otp.pubid_len, (len - YK_TOKEN_MODHEX_LEN) / 2);

    /* Re-encrypting the fields gives back the very same token. */
    ck_assert_int_eq(yk_token_encrypt(&f, key, token), 0);
    ck_assert_mem_eq(token, otp.token, YK_TOKEN_LEN);
}

/* Check one "fail" row: refused for exactly the reason its note gives, and
 * the outputs are left alone. */
static void
check_fail_row(char **v, const unsigned char *key,
               const unsigned char *privid)
{
    const char *name = v[C_NAME], *s = v[C_OTP];
    krb5_error_code want = expected_error(name, v[C_NOTE]), ret;
    yk_otp otp, otp_before;
    yk_token_fields f, f_before;

    memset(&otp, 0xa5, sizeof(otp));
    memset(&f, 0x5a, sizeof(f));
    otp_before = otp;
    f_before = f;
    ret = yk_otp_verify(s, strlen(s), key, privid, &otp, &f);
    ck_assert_msg(ret == want, "%s: got %ld (%s), expected %ld (%s)", name,
                  (long)ret, yk_strerror(ret), (long)want,
                  yk_strerror(want));
    ck_assert_mem_eq(&otp, &otp_before, sizeof(otp));
    ck_assert_mem_eq(&f, &f_before, sizeof(f));
}

START_TEST(test_vectors_file)
{
    FILE *fp;
    char *line = NULL, *hdr_line = NULL;
    char *hdr[MAX_COLUMNS], *fields[MAX_COLUMNS], *v[C_COUNT];
    int col[C_COUNT];
    int nhdr, n, i, rows = 0, ok_rows = 0, fail_rows = 0;
    size_t cap = 0;
    ssize_t got;
    unsigned char key[YK_AES_KEY_LEN], privid[YK_PRIVID_LEN];

    fp = fopen(VECTORS_FILE, "r");
    ck_assert_msg(fp != NULL, "cannot open %s: %s", VECTORS_FILE,
                  strerror(errno));

    /* The header names the columns. */
    got = getline(&hdr_line, &cap, fp);
    ck_assert_msg(got > 0, "%s: no header line", VECTORS_FILE);
    hdr_line[strcspn(hdr_line, "\r\n")] = '\0';
    nhdr = split_tabs(hdr_line, hdr, MAX_COLUMNS);
    for (i = 0; i < C_COUNT; i++)
        col[i] = column(hdr, nhdr, column_names[i]);

    cap = 0;
    while ((got = getline(&line, &cap, fp)) > 0) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '\0' || line[0] == '#')
            continue;
        n = split_tabs(line, fields, MAX_COLUMNS);
        ck_assert_msg(n == nhdr, "row %d has %d columns, header %d",
                      rows + 1, n, nhdr);
        for (i = 0; i < C_COUNT; i++)
            v[i] = fields[col[i]];

        must_hex(v[C_KEY], key, sizeof(key));
        must_hex(v[C_PRIVID], privid, sizeof(privid));
        if (strcmp(v[C_EXPECT], "ok") == 0) {
            check_ok_row(v, key, privid);
            ok_rows++;
        } else if (strcmp(v[C_EXPECT], "fail") == 0) {
            check_fail_row(v, key, privid);
            fail_rows++;
        } else {
            ck_abort_msg("%s: expect is '%s'", v[C_NAME], v[C_EXPECT]);
        }
        rows++;
    }
    fclose(fp);
    free(line);
    free(hdr_line);

    ck_assert_msg(rows >= VECTORS_MIN_ROWS, "only %d vector rows checked",
                  rows);
    ck_assert_int_gt(ok_rows, 0);
    ck_assert_int_gt(fail_rows, 0);
}
END_TEST

START_TEST(test_encrypt_known_answer)
{
    yk_token_fields f;
    unsigned char token[YK_TOKEN_LEN], want[YK_TOKEN_LEN];
    size_t outlen = 0;

    memset(&f, 0, sizeof(f));
    memcpy(f.private_id, tv1_privid, YK_PRIVID_LEN);
    f.usage = 1;
    f.timestamp = 0x010001;
    f.session = 1;
    f.random = 0;
    f.crc = 0x1234;     /* ignored: computed */
    ck_assert_int_eq(yk_token_encrypt(&f, tv1_key, token), 0);
    ck_assert_int_eq(yk_modhex_decode(tv1_otp, strlen(tv1_otp), want,
                                      sizeof(want), &outlen), 0);
    ck_assert_uint_eq(outlen, YK_TOKEN_LEN);
    ck_assert_mem_eq(token, want, YK_TOKEN_LEN);
}
END_TEST

/* ---- round trips ------------------------------------------------------- */

START_TEST(test_roundtrip_random)
{
    unsigned char key[YK_AES_KEY_LEN], pubid[YK_PUBID_MAX];
    unsigned char token[YK_TOKEN_LEN], badid[YK_PRIVID_LEN];
    unsigned char block[YK_TOKEN_LEN];
    char s[YK_OTP_MAX_LEN + 1], lower[YK_OTP_MAX_LEN + 1];
    yk_token_fields f, g;
    yk_otp otp;
    size_t publen, len, k;
    int iter;

    for (iter = 0; iter < ROUND_TRIPS; iter++) {
        rng_bytes(key, sizeof(key));
        memset(&f, 0, sizeof(f));
        rng_bytes(f.private_id, YK_PRIVID_LEN);
        f.usage = (uint16_t)rng_next();
        f.timestamp = (uint32_t)rng_next() & 0xffffff;
        f.session = (uint8_t)rng_next();
        f.random = (uint16_t)rng_next();
        publen = (size_t)iter % (YK_PUBID_MAX + 1);
        rng_bytes(pubid, publen);

        ck_assert_int_eq(yk_token_encrypt(&f, key, token), 0);
        yk_modhex_encode(pubid, publen, s);
        yk_modhex_encode(token, YK_TOKEN_LEN, s + 2 * publen);
        len = strlen(s);
        ck_assert_uint_eq(len, 2 * publen + YK_TOKEN_MODHEX_LEN);
        lower_copy(s, len, lower);
        if (iter % 3 == 0) {
            /* Caps Lock: validators fold case. */
            for (k = 0; k < len; k++)
                s[k] = (char)toupper((unsigned char)s[k]);
        }

        memset(&g, 0, sizeof(g));
        ck_assert_int_eq(yk_otp_verify(s, len, key, f.private_id, &otp, &g),
                         0);
        ck_assert_mem_eq(g.private_id, f.private_id, YK_PRIVID_LEN);
        ck_assert_uint_eq(g.usage, f.usage);
        ck_assert_uint_eq(g.timestamp, f.timestamp);
        ck_assert_uint_eq(g.session, f.session);
        ck_assert_uint_eq(g.random, f.random);
        ck_assert_uint_eq(yk_otp_counter(&g),
                          ((uint32_t)(f.usage & 0x7fff) << 8) | f.session);

        /* The stored CRC is the complement of the CRC of bytes 0..13. */
        memcpy(block, f.private_id, 6);
        block[6] = (unsigned char)f.usage;
        block[7] = (unsigned char)(f.usage >> 8);
        block[8] = (unsigned char)f.timestamp;
        block[9] = (unsigned char)(f.timestamp >> 8);
        block[10] = (unsigned char)(f.timestamp >> 16);
        block[11] = f.session;
        block[12] = (unsigned char)f.random;
        block[13] = (unsigned char)(f.random >> 8);
        ck_assert_uint_eq(g.crc, (uint16_t)~ref_crc16(block, 14));

        ck_assert_uint_eq(otp.pubid_len, publen);
        ck_assert_mem_eq(otp.pubid, pubid, publen);
        ck_assert_mem_eq(otp.token, token, YK_TOKEN_LEN);
        lower[2 * publen] = '\0';
        ck_assert_str_eq(otp.pubid_modhex, lower);

        /* Another private id is refused. */
        memcpy(badid, f.private_id, YK_PRIVID_LEN);
        badid[(size_t)iter % YK_PRIVID_LEN] ^=
            (unsigned char)(1U << (iter % 8));
        ck_assert_int_eq(yk_otp_verify(s, len, key, badid, NULL, NULL),
                         YK_ERR_OTP_PRIVID);
    }
}
END_TEST

START_TEST(test_modhex_hex_roundtrip)
{
    unsigned char in[YK_OTP_MAX_LEN], out[YK_OTP_MAX_LEN];
    char enc[2 * YK_OTP_MAX_LEN + 1], upper[2 * YK_OTP_MAX_LEN + 1];
    size_t n, k, outlen;
    int iter;

    for (iter = 0; iter < 500; iter++) {
        n = (size_t)iter % (sizeof(in) + 1);
        rng_bytes(in, n);

        yk_modhex_encode(in, n, enc);
        ck_assert_uint_eq(strlen(enc), 2 * n);
        ck_assert_uint_eq(strspn(enc, "cbdefghijklnrtuv"), 2 * n);
        memset(out, 0, sizeof(out));
        outlen = 999;
        ck_assert_int_eq(yk_modhex_decode(enc, 2 * n, out, sizeof(out),
                                          &outlen), 0);
        ck_assert_uint_eq(outlen, n);
        ck_assert_mem_eq(out, in, n);
        for (k = 0; k <= 2 * n; k++)
            upper[k] = (char)toupper((unsigned char)enc[k]);
        memset(out, 0, sizeof(out));
        ck_assert_int_eq(yk_modhex_decode(upper, 2 * n, out, sizeof(out),
                                          &outlen), 0);
        ck_assert_mem_eq(out, in, n);

        yk_hex_encode(in, n, enc);
        ck_assert_uint_eq(strlen(enc), 2 * n);
        ck_assert_uint_eq(strspn(enc, "0123456789abcdef"), 2 * n);
        memset(out, 0, sizeof(out));
        ck_assert_int_eq(yk_hex_decode(enc, 2 * n, out, n), 0);
        ck_assert_mem_eq(out, in, n);
        for (k = 0; k <= 2 * n; k++)
            upper[k] = (char)toupper((unsigned char)enc[k]);
        memset(out, 0, sizeof(out));
        ck_assert_int_eq(yk_hex_decode(upper, 2 * n, out, n), 0);
        ck_assert_mem_eq(out, in, n);
    }
}
END_TEST

START_TEST(test_codec_known_answers)
{
    static const unsigned char nibbles[8] = {
        0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef
    };
    unsigned char out[8];
    char enc[17];
    size_t outlen = 0;

    yk_modhex_encode(nibbles, sizeof(nibbles), enc);
    ck_assert_str_eq(enc, "cbdefghijklnrtuv");
    yk_hex_encode(nibbles, sizeof(nibbles), enc);
    ck_assert_str_eq(enc, "0123456789abcdef");
    ck_assert_int_eq(yk_modhex_decode("CBDEFGHIJKLNRTUV", 16, out,
                                      sizeof(out), &outlen), 0);
    ck_assert_uint_eq(outlen, 8);
    ck_assert_mem_eq(out, nibbles, 8);
    ck_assert_int_eq(yk_hex_decode("0123456789ABCDEF", 16, out, 8), 0);
    ck_assert_mem_eq(out, nibbles, 8);

    /* Empty input is valid for both. */
    yk_modhex_encode(nibbles, 0, enc);
    ck_assert_str_eq(enc, "");
    ck_assert_int_eq(yk_modhex_decode("", 0, out, sizeof(out), &outlen), 0);
    ck_assert_uint_eq(outlen, 0);
}
END_TEST

START_TEST(test_counter_masks_trigger_bit)
{
    yk_token_fields f;

    memset(&f, 0, sizeof(f));
    f.usage = 0x8001;
    f.session = 5;
    ck_assert_uint_eq(yk_otp_counter(&f), (1U << 8) | 5);
    f.usage = 0x0001;
    ck_assert_uint_eq(yk_otp_counter(&f), (1U << 8) | 5);
    f.usage = 0xffff;
    f.session = 0xff;
    ck_assert_uint_eq(yk_otp_counter(&f), 0x7fffffU);
    f.usage = 0x8000;
    f.session = 0;
    ck_assert_uint_eq(yk_otp_counter(&f), 0);
}
END_TEST

START_TEST(test_crc_known_block)
{
    /* CRC-16/X-25 of "123456789" is 0x906e after the final complement. */
    ck_assert_uint_eq(yk_crc16((const unsigned char *)"123456789", 9),
                      0x906e ^ 0xffff);
    ck_assert_uint_eq(yk_crc16(tv1_plain, 16), YK_CRC_RESIDUAL);
    ck_assert_uint_eq((uint16_t)~yk_crc16(tv1_plain, 14), 0xfe36);
    ck_assert_uint_eq(yk_crc16(tv1_plain, 0), 0xffff);
}
END_TEST

START_TEST(test_crc_matches_reference)
{
    unsigned char buf[64];
    size_t n;

    memset(buf, 0, sizeof(buf));
    for (n = 0; n <= sizeof(buf); n++) {
        rng_bytes(buf, n);
        ck_assert_uint_eq(yk_crc16(buf, n), ref_crc16(buf, n));
    }
}
END_TEST

START_TEST(test_timestamp_24_bits)
{
    yk_token_fields f, g;
    yk_otp otp;
    unsigned char token[YK_TOKEN_LEN];

    memset(&f, 0, sizeof(f));
    memcpy(f.private_id, tv1_privid, YK_PRIVID_LEN);
    f.timestamp = 0xab123456;
    ck_assert_int_eq(yk_token_encrypt(&f, tv1_key, token), 0);
    memset(&otp, 0, sizeof(otp));
    memcpy(otp.token, token, YK_TOKEN_LEN);
    ck_assert_int_eq(yk_otp_decrypt(&otp, tv1_key, &g), 0);
    ck_assert_uint_eq(g.timestamp, 0x123456);
}
END_TEST

/* ---- malformed input, one test each ------------------------------------ */

/* Parse s (len characters) and return the code; on failure also check
 * that *out was left alone. */
static krb5_error_code
parse_code(const char *s, size_t len)
{
    yk_otp otp, before;
    krb5_error_code ret;

    memset(&otp, 0x77, sizeof(otp));
    before = otp;
    ret = yk_otp_parse(s, len, &otp);
    if (ret)
        ck_assert_mem_eq(&otp, &before, sizeof(otp));
    return ret;
}

START_TEST(test_bad_empty)
{
    ck_assert_int_eq(parse_code("", 0), YK_ERR_OTP_LENGTH);
    ck_assert_int_eq(parse_code(NULL, 0), YK_ERR_OTP_LENGTH);
}
END_TEST

START_TEST(test_bad_31_chars)
{
    ck_assert_int_eq(parse_code(tv1_otp, 31), YK_ERR_OTP_LENGTH);
}
END_TEST

START_TEST(test_bad_33_chars)
{
    char s[40];

    snprintf(s, sizeof(s), "c%s", tv1_otp);
    ck_assert_uint_eq(strlen(s), 33);
    ck_assert_int_eq(parse_code(s, 33), YK_ERR_OTP_ODD);
}
END_TEST

START_TEST(test_bad_too_long)
{
    char s[80];
    yk_otp otp;

    /* 64 characters (a 16-byte public id) is the longest accepted. */
    memset(s, 'v', 32);
    memcpy(s + 32, tv1_otp, 32);
    s[64] = '\0';
    ck_assert_int_eq(yk_otp_parse(s, 64, &otp), 0);
    ck_assert_uint_eq(otp.pubid_len, YK_PUBID_MAX);

    /* 65: length is checked before parity; 66: whole bytes, still too
     * long. */
    memset(s, 'c', 33);
    memcpy(s + 33, tv1_otp, 32);
    s[65] = '\0';
    ck_assert_int_eq(parse_code(s, 65), YK_ERR_OTP_LENGTH);
    memset(s, 'c', 34);
    memcpy(s + 34, tv1_otp, 32);
    s[66] = '\0';
    ck_assert_int_eq(parse_code(s, 66), YK_ERR_OTP_LENGTH);
}
END_TEST

START_TEST(test_bad_hex_not_modhex)
{
    /* Hex digits outside modhex (b..f are in both alphabets). */
    static const char hexonly[] = "0123456789aA";
    char s[sizeof(ksm_otp)];
    size_t i, pos[3] = { 0, 12, 43 };   /* public id, token start, last */
    int p;

    for (p = 0; p < 3; p++) {
        for (i = 0; hexonly[i] != '\0'; i++) {
            memcpy(s, ksm_otp, sizeof(s));
            s[pos[p]] = hexonly[i];
            ck_assert_int_eq(parse_code(s, strlen(s)), YK_ERR_MODHEX);
        }
    }
}
END_TEST

START_TEST(test_bad_nul_inside)
{
    char s[sizeof(ksm_otp)];
    size_t len = strlen(ksm_otp);

    memcpy(s, ksm_otp, sizeof(s));
    s[5] = '\0';
    ck_assert_int_eq(parse_code(s, len), YK_ERR_MODHEX);
    memcpy(s, ksm_otp, sizeof(s));
    s[30] = '\0';
    ck_assert_int_eq(parse_code(s, len), YK_ERR_MODHEX);
}
END_TEST

START_TEST(test_bad_high_bit)
{
    char s[sizeof(ksm_otp)];
    size_t len = strlen(ksm_otp);

    /* UTF-8 "é" where the public id starts, Latin-1 bytes in the token. */
    memcpy(s, ksm_otp, sizeof(s));
    s[0] = (char)0xc3;
    s[1] = (char)0xa9;
    ck_assert_int_eq(parse_code(s, len), YK_ERR_MODHEX);
    memcpy(s, ksm_otp, sizeof(s));
    s[20] = (char)0xe3;     /* 0xe3 | 0x20 is not 'c' */
    ck_assert_int_eq(parse_code(s, len), YK_ERR_MODHEX);
    memcpy(s, ksm_otp, sizeof(s));
    s[43] = (char)0xff;
    ck_assert_int_eq(parse_code(s, len), YK_ERR_MODHEX);
}
END_TEST

START_TEST(test_every_byte_value)
{
    char s[sizeof(tv1_otp)];
    unsigned char out[1];
    char hx[2];
    size_t outlen;
    int c, modhex_ok = 0, hex_ok = 0;
    krb5_error_code ret;

    for (c = 0; c < 256; c++) {
        memcpy(s, tv1_otp, sizeof(s));
        s[7] = (char)c;
        ret = parse_code(s, 32);
        if (c != 0 && strchr("cbdefghijklnrtuvCBDEFGHIJKLNRTUV", c)) {
            ck_assert_int_eq(ret, 0);
            modhex_ok++;
        } else {
            ck_assert_int_eq(ret, YK_ERR_MODHEX);
        }

        hx[0] = '0';
        hx[1] = (char)c;
        ret = yk_hex_decode(hx, 2, out, 1);
        if (c != 0 && strchr("0123456789abcdefABCDEF", c)) {
            ck_assert_int_eq(ret, 0);
            hex_ok++;
        } else {
            ck_assert_int_eq(ret, YK_ERR_HEX);
        }
        ret = yk_modhex_decode(hx + 1, 1, out, 1, &outlen);
        ck_assert_int_eq(ret, YK_ERR_OTP_ODD);
    }
    ck_assert_int_eq(modhex_ok, 32);
    ck_assert_int_eq(hex_ok, 22);
}
END_TEST

START_TEST(test_bad_decoder_sizes)
{
    unsigned char out[4];
    size_t outlen = 42;

    ck_assert_int_eq(yk_modhex_decode("cbdefghijk", 10, out, sizeof(out),
                                      &outlen), EOVERFLOW);
    ck_assert_int_eq(yk_modhex_decode("cbd", 3, out, sizeof(out), &outlen),
                     YK_ERR_OTP_ODD);
    ck_assert_uint_eq(outlen, 42);
    ck_assert_int_eq(yk_hex_decode("0011223344", 10, out, 4), YK_ERR_HEX);
    ck_assert_int_eq(yk_hex_decode("001122", 6, out, 4), YK_ERR_HEX);
    ck_assert_int_eq(yk_hex_decode("001122334", 9, out, 4), YK_ERR_HEX);
    ck_assert_int_eq(yk_hex_decode("0011223g", 8, out, 4), YK_ERR_HEX);
}
END_TEST

START_TEST(test_bad_wrong_key)
{
    unsigned char key[YK_AES_KEY_LEN];
    yk_token_fields f, before;
    int i;

    ck_assert_int_eq(yk_otp_verify(tv1_otp, 32, tv1_key, tv1_privid, NULL,
                                   NULL), 0);
    for (i = 0; i < YK_AES_KEY_LEN * 8; i++) {
        memcpy(key, tv1_key, sizeof(key));
        key[i / 8] ^= (unsigned char)(1U << (i % 8));
        memset(&f, 0x33, sizeof(f));
        before = f;
        ck_assert_int_eq(yk_otp_verify(tv1_otp, 32, key, tv1_privid, NULL,
                                       &f), YK_ERR_OTP_CRC);
        ck_assert_mem_eq(&f, &before, sizeof(f));
    }
}
END_TEST

START_TEST(test_bad_flipped_bit)
{
    yk_otp otp, bad;
    yk_token_fields f, before;
    int i;

    ck_assert_int_eq(yk_otp_parse(tv1_otp, 32, &otp), 0);
    ck_assert_int_eq(yk_otp_decrypt(&otp, tv1_key, &f), 0);
    for (i = 0; i < YK_TOKEN_LEN * 8; i++) {
        bad = otp;
        bad.token[i / 8] ^= (unsigned char)(1U << (i % 8));
        memset(&f, 0x44, sizeof(f));
        before = f;
        ck_assert_int_eq(yk_otp_decrypt(&bad, tv1_key, &f), YK_ERR_OTP_CRC);
        ck_assert_mem_eq(&f, &before, sizeof(f));
    }
}
END_TEST

START_TEST(test_bad_private_id)
{
    unsigned char id[YK_PRIVID_LEN];
    yk_token_fields f;
    int i;

    ck_assert_int_eq(yk_otp_verify(tv1_otp, 32, tv1_key, tv1_privid, NULL,
                                   &f), 0);
    ck_assert_int_eq(yk_otp_check_privid(&f, tv1_privid), 0);
    for (i = 0; i < YK_PRIVID_LEN; i++) {
        memcpy(id, tv1_privid, sizeof(id));
        id[i] ^= 0x80;
        ck_assert_int_eq(yk_otp_check_privid(&f, id), YK_ERR_OTP_PRIVID);
        ck_assert_int_eq(yk_otp_verify(tv1_otp, 32, tv1_key, id, NULL, NULL),
                         YK_ERR_OTP_PRIVID);
    }
}
END_TEST

/* ---- libgcrypt initialisation (each test needs a fresh process) -------- */

/* Decrypt yubico-tv-1 and check its counter: the crypto path works. */
static void
assert_tv1_decrypts(void)
{
    yk_token_fields f;

    ck_assert_int_eq(yk_otp_verify(tv1_otp, 32, tv1_key, tv1_privid, NULL,
                                   &f), 0);
    ck_assert_uint_eq(yk_otp_counter(&f), 257);
}

START_TEST(test_init_own_is_silent)
{
    FILE *err = tmpfile();
    int saved;
    long size;

    ck_assert_int_eq(gcry_control(GCRYCTL_ANY_INITIALIZATION_P), 0);
    ck_assert_ptr_nonnull(err);
    fflush(stderr);
    saved = dup(STDERR_FILENO);
    ck_assert_int_ge(saved, 0);
    ck_assert_int_ge(dup2(fileno(err), STDERR_FILENO), 0);

    ck_assert_int_eq(yk_crypto_init(), 0);
    assert_tv1_decrypts();

    fflush(stderr);
    ck_assert_int_ge(dup2(saved, STDERR_FILENO), 0);
    close(saved);
    ck_assert_int_eq(fseek(err, 0, SEEK_END), 0);
    size = ftell(err);
    fclose(err);
    ck_assert_msg(size == 0, "libgcrypt wrote %ld bytes to stderr", size);
    ck_assert(gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P));
}
END_TEST

START_TEST(test_init_host_finished)
{
    /* The host disabled secure memory and finished: we still work. */
    ck_assert_int_eq(gcry_control(GCRYCTL_ANY_INITIALIZATION_P), 0);
    ck_assert_ptr_nonnull(gcry_check_version(NULL));
    gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
    gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
    ck_assert_int_eq(yk_crypto_init(), 0);
    assert_tv1_decrypts();
}
END_TEST

START_TEST(test_init_host_started)
{
    /* The host began initialising: its sequence is left unfinished. */
    ck_assert_int_eq(gcry_control(GCRYCTL_ANY_INITIALIZATION_P), 0);
    ck_assert_ptr_nonnull(gcry_check_version(NULL));
    ck_assert_int_eq(yk_crypto_init(), 0);
    ck_assert(!gcry_control(GCRYCTL_INITIALIZATION_FINISHED_P));
    assert_tv1_decrypts();
}
END_TEST

START_TEST(test_crypto_init_idempotent)
{
    ck_assert_int_eq(yk_crypto_init(), 0);
    ck_assert_int_eq(yk_crypto_init(), 0);
}
END_TEST

static Suite *
otp_suite(int forking)
{
    Suite *s = suite_create("otp");
    TCase *tc;

    tc = tcase_create("vectors");
    tcase_add_test(tc, test_vectors_file);
    tcase_add_test(tc, test_encrypt_known_answer);
    tcase_add_test(tc, test_crc_known_block);
    tcase_add_test(tc, test_codec_known_answers);
    suite_add_tcase(s, tc);

    tc = tcase_create("roundtrip");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_roundtrip_random);
    tcase_add_test(tc, test_modhex_hex_roundtrip);
    tcase_add_test(tc, test_crc_matches_reference);
    tcase_add_test(tc, test_counter_masks_trigger_bit);
    tcase_add_test(tc, test_timestamp_24_bits);
    tcase_add_test(tc, test_crypto_init_idempotent);
    suite_add_tcase(s, tc);

    tc = tcase_create("malformed");
    tcase_add_test(tc, test_bad_empty);
    tcase_add_test(tc, test_bad_31_chars);
    tcase_add_test(tc, test_bad_33_chars);
    tcase_add_test(tc, test_bad_too_long);
    tcase_add_test(tc, test_bad_hex_not_modhex);
    tcase_add_test(tc, test_bad_nul_inside);
    tcase_add_test(tc, test_bad_high_bit);
    tcase_add_test(tc, test_every_byte_value);
    tcase_add_test(tc, test_bad_decoder_sizes);
    tcase_add_test(tc, test_bad_wrong_key);
    tcase_add_test(tc, test_bad_flipped_bit);
    tcase_add_test(tc, test_bad_private_id);
    suite_add_tcase(s, tc);

    /* These need libgcrypt untouched: only in check's fork mode. */
    if (forking) {
        tc = tcase_create("init");
        tcase_add_test(tc, test_init_own_is_silent);
        tcase_add_test(tc, test_init_host_finished);
        tcase_add_test(tc, test_init_host_started);
        suite_add_tcase(s, tc);
    }
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(NULL);
    int failed;

    srunner_add_suite(sr, otp_suite(srunner_fork_status(sr) != CK_NOFORK));

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
