/* SPDX-License-Identifier: MIT */
/* check_importfile.c: unit tests of admin/importfile.c (import, map files). */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <check.h>

#include "importfile.h"
#include "otp.h"

#define ERRLEN YK_IMPORT_ERRBUF_SIZE
#define MAX_EXPECT 3

/* ---- the sample tokens ------------------------------------------------ */

/* Token A: a 12-character public id, no access code. */
#define A_PUBID "vvcbdefghijk"
#define A_PRIV "8a3f9b1c2d4e"
#define A_KEY "2b7e151628aed2a6abf7158809cf4f3c"
/* Token B: written in upper case, with an access code. */
#define B_PUBID_UP "VVLNRTUVCBDE"
#define B_PUBID "vvlnrtuvcbde"
#define B_PRIV_UP "0123456789AB"
#define B_KEY_UP "000102030405060708090A0B0C0D0E0F"
#define B_ACCESS "a1b2c3d4e5f6"
/* Token C: the longest public id (32 characters). */
#define C_PUBID "cccccccccccccccccccccccccccccccb"
#define C_PRIV "c55773192393"
#define C_KEY "7387b5f6bede83f64a9cd75b2023826a"
#define C_LOCK "d70c937bbbff"

static const unsigned char a_priv[6] = { 0x8a, 0x3f, 0x9b, 0x1c, 0x2d, 0x4e };
static const unsigned char a_key[16] = {
    0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,
    0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c
};
static const unsigned char b_priv[6] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab };
static const unsigned char b_key[16] = {
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
    0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f
};
static const unsigned char b_access[6] = {
    0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6
};
static const unsigned char c_priv[6] = { 0xc5, 0x57, 0x73, 0x19, 0x23, 0x93 };
static const unsigned char c_key[16] = {
    0x73, 0x87, 0xb5, 0xf6, 0xbe, 0xde, 0x83, 0xf6,
    0x4a, 0x9c, 0xd7, 0x5b, 0x20, 0x23, 0x82, 0x6a
};
static const unsigned char c_lock[6] = { 0xd7, 0x0c, 0x93, 0x7b, 0xbb, 0xff };
static const unsigned char zero6[6];

/* Every secret the samples and the malformed variants hold, in hex: no
 * error message may contain one (compared case-insensitively). */
static const char *const secrets[] = {
    A_PRIV, A_KEY, B_PRIV_UP, B_KEY_UP, B_ACCESS, C_PRIV, C_KEY, C_LOCK,
    "2b7e151628aed2a6abf7158809cf4f", "8a3f9b1c2d4", NULL
};

/* ---- good samples, one per format ----------------------------------- */

/* ykman -O: LF, an empty serial, upper case. */
static const char ykman_csv[] =
    "4711," A_PUBID "," A_PRIV "," A_KEY ",,2024-05-01T12:00:00,\n"
    "," B_PUBID_UP "," B_PRIV_UP "," B_KEY_UP "," B_ACCESS
    ",2024-05-01T12:01:30,\n";

/* The personalization tool's Yubico format: CRLF, padded access codes,
 * a blank line. */
static const char yubico_csv[] =
    "12345678," A_PUBID "," A_PRIV "," A_KEY
    ",000000000000,2013-03-12T14:02:11,\r\n"
    "\r\n"
    "12345679," B_PUBID_UP "," B_PRIV_UP "," B_KEY_UP "," B_ACCESS
    ",2013-03-12T14:03:40,\r\n";

/* The Traditional log: CRLF, a time without and one with commas, two
 * logging sessions. */
static const char trad_log[] =
    "LOGGING START,3/12/13 2:02 PM\r\n"
    "Yubico OTP,3/12/13 2:02 PM,2," A_PUBID "," A_PRIV "," A_KEY
    ",,,0,0,0,0,0,0,0,0,0,0\r\n"
    "LOGGING START,Tuesday, March 12, 2013 2:03:31 PM\r\n"
    "Yubico OTP,Tuesday, March 12, 2013 2:03:40 PM,1," B_PUBID_UP ","
    B_PRIV_UP "," B_KEY_UP ",," B_ACCESS ",0,0,0,0,0,0,0,0,0,0\r\n";

/* yubikey-ksm: header, comment lines, a trailing comment, 7 and 8 fields,
 * a space-separated time. */
static const char ksm_file[] =
    "# ykksm 1\n"
    "# serialnr,identity,internaluid,aeskey,lockpw,created,accessed"
    "[,progflags]\n"
    "1," A_PUBID "," A_PRIV "," A_KEY ",000000000000,2009-12-14T16:40:57,\n"
    "4712," B_PUBID_UP "," B_PRIV_UP "," B_KEY_UP "," B_ACCESS
    ",2009-01-22 00:25:11,2009-02-13 00:05:40,0 # re-issued\n"
    "4713," C_PUBID "," C_PRIV "," C_KEY "," C_LOCK
    ",2009-12-14T16:40:57,\n"
    "# the end\n";

/* ---- helpers --------------------------------------------------------- */

/* 1 if needle occurs in hay, ignoring ASCII case. */
static int
contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);

    for (; *hay != '\0'; hay++) {
        if (strncasecmp(hay, needle, n) == 0)
            return 1;
    }
    return 0;
}

/* Assert that msg quotes no secret of the samples, and no run of 12 or
 * more hex digits that could not be a public id (modhex). */
static void
assert_no_secret(const char *msg)
{
    size_t i, run = 0, nonmodhex = 0;

    for (i = 0; secrets[i] != NULL; i++)
        ck_assert_msg(!contains_nocase(msg, secrets[i]),
                      "message leaks a secret: %s", msg);
    for (i = 0; ; i++) {
        char ch = msg[i];

        if (ch != '\0' && strchr("0123456789abcdefABCDEF", ch) != NULL) {
            run++;
            if (strchr("bcdefBCDEF", ch) == NULL)
                nonmodhex++;
            continue;
        }
        ck_assert_msg(run < 12 || nonmodhex == 0,
                      "message holds a hex run: %s", msg);
        run = nonmodhex = 0;
        if (ch == '\0')
            break;
    }
}

/* Parse text (len bytes) as format, which must succeed. */
static yk_import_set *
parse_ok(const char *text, size_t len, int format)
{
    yk_import_set *set = NULL;
    char err[ERRLEN] = "";
    krb5_error_code ret;

    ret = yk_import_parse(text, len, format, &set, err, sizeof(err));
    ck_assert_msg(ret == 0, "parse failed (%d): %s", (int)ret, err);
    ck_assert_ptr_nonnull(set);
    return set;
}

/* Parse text as format, which must fail with EINVAL without touching the
 * output, and with a message that holds every string of expect and no
 * secret.  The message is copied to msg_out when it is not NULL. */
static void
parse_fail(const char *text, size_t len, int format,
           const char *const expect[MAX_EXPECT], char *msg_out)
{
    static char sentinel;
    yk_import_set *set = (yk_import_set *)(void *)&sentinel;
    char err[ERRLEN] = "";
    krb5_error_code ret;
    size_t i;

    ret = yk_import_parse(text, len, format, &set, err, sizeof(err));
    ck_assert_msg(ret == EINVAL, "expected EINVAL, got %d for:\n%s",
                  (int)ret, text);
    ck_assert_msg(set == (yk_import_set *)(void *)&sentinel,
                  "output written on failure");
    for (i = 0; i < MAX_EXPECT && expect[i] != NULL; i++)
        ck_assert_msg(strstr(err, expect[i]) != NULL,
                      "message \"%s\" lacks \"%s\"", err, expect[i]);
    assert_no_secret(err);
    if (msg_out != NULL)
        strcpy(msg_out, err);
}

/* Check token t against the expected values. */
static void
check_token(const yk_import_token *t, const char *pubid,
            const unsigned char priv[6], const unsigned char key[16],
            const char *serial, const unsigned char *access, int slot,
            size_t line)
{
    ck_assert_ptr_nonnull(t);
    ck_assert_str_eq(t->pubid, pubid);
    ck_assert(memcmp(t->private_id, priv, 6) == 0);
    ck_assert(memcmp(t->aes_key, key, 16) == 0);
    ck_assert_str_eq(t->serial, serial);
    if (access != NULL) {
        ck_assert_int_eq(t->has_access_code, 1);
        ck_assert(memcmp(t->access_code, access, 6) == 0);
    } else {
        ck_assert_int_eq(t->has_access_code, 0);
        ck_assert(memcmp(t->access_code, zero6, 6) == 0);
    }
    ck_assert_int_eq(t->slot, slot);
    ck_assert_uint_eq(t->line, line);
}

/* Parse text both forced and auto-detected and require the same result:
 * the forced parse is returned. */
static yk_import_set *
parse_both(const char *text, int format)
{
    yk_import_set *forced, *autod;
    size_t i, len = strlen(text);

    forced = parse_ok(text, len, format);
    autod = parse_ok(text, len, YK_IMPORT_AUTO);
    ck_assert_int_eq(yk_import_set_format(forced), format);
    ck_assert_int_eq(yk_import_set_format(autod), format);
    ck_assert_uint_eq(yk_import_set_count(forced),
                      yk_import_set_count(autod));
    for (i = 0; i < yk_import_set_count(forced); i++) {
        const yk_import_token *x = yk_import_set_get(forced, i);
        const yk_import_token *y = yk_import_set_get(autod, i);

        ck_assert_str_eq(x->pubid, y->pubid);
        ck_assert(memcmp(x->aes_key, y->aes_key, 16) == 0);
        ck_assert(memcmp(x->private_id, y->private_id, 6) == 0);
        ck_assert_uint_eq(x->line, y->line);
    }
    yk_import_set_free(autod);
    return forced;
}

/* A copy of base with the first occurrence of from replaced by to;
 * malloc'd. */
static char *
replace(const char *base, const char *from, const char *to)
{
    const char *at = strstr(base, from);
    size_t pre, n;
    char *out;

    ck_assert_msg(at != NULL, "\"%s\" not in the base text", from);
    pre = (size_t)(at - base);
    n = strlen(base) - strlen(from) + strlen(to);
    out = malloc(n + 1);
    ck_assert_ptr_nonnull(out);
    memcpy(out, base, pre);
    strcpy(out + pre, to);
    strcat(out, at + strlen(from));
    return out;
}

/* ---- good files ------------------------------------------------------ */

START_TEST(test_ykman_csv)
{
    yk_import_set *set = parse_both(ykman_csv, YK_IMPORT_YKMAN_CSV);

    ck_assert_uint_eq(yk_import_set_count(set), 2);
    check_token(yk_import_set_get(set, 0), A_PUBID, a_priv, a_key, "4711",
                NULL, 0, 1);
    check_token(yk_import_set_get(set, 1), B_PUBID, b_priv, b_key, "",
                b_access, 0, 2);
    ck_assert_ptr_null(yk_import_set_get(set, 2));
    yk_import_set_free(set);
}
END_TEST

START_TEST(test_yubico_csv)
{
    yk_import_set *set = parse_both(yubico_csv, YK_IMPORT_YKMAN_CSV);

    ck_assert_uint_eq(yk_import_set_count(set), 2);
    check_token(yk_import_set_get(set, 0), A_PUBID, a_priv, a_key,
                "12345678", NULL, 0, 1);
    check_token(yk_import_set_get(set, 1), B_PUBID, b_priv, b_key,
                "12345679", b_access, 0, 3);
    yk_import_set_free(set);
}
END_TEST

START_TEST(test_traditional)
{
    yk_import_set *set = parse_both(trad_log, YK_IMPORT_TRADITIONAL);

    ck_assert_uint_eq(yk_import_set_count(set), 2);
    check_token(yk_import_set_get(set, 0), A_PUBID, a_priv, a_key, "",
                NULL, 2, 2);
    check_token(yk_import_set_get(set, 1), B_PUBID, b_priv, b_key, "",
                b_access, 1, 4);
    yk_import_set_free(set);
}
END_TEST

START_TEST(test_traditional_no_start_line)
{
    /* A log whose LOGGING START line was cut off is still recognised by
     * its event type. */
    const char *text = strstr(trad_log, "Yubico OTP");
    yk_import_set *set = parse_both(text, YK_IMPORT_TRADITIONAL);

    ck_assert_uint_eq(yk_import_set_count(set), 2);
    ck_assert_uint_eq(yk_import_set_get(set, 0)->line, 1);
    yk_import_set_free(set);
}
END_TEST

START_TEST(test_ksm)
{
    yk_import_set *set = parse_both(ksm_file, YK_IMPORT_KSM);

    ck_assert_uint_eq(yk_import_set_count(set), 3);
    check_token(yk_import_set_get(set, 0), A_PUBID, a_priv, a_key, "1",
                NULL, 0, 3);
    check_token(yk_import_set_get(set, 1), B_PUBID, b_priv, b_key, "4712",
                b_access, 0, 4);
    check_token(yk_import_set_get(set, 2), C_PUBID, c_priv, c_key, "4713",
                c_lock, 0, 5);
    yk_import_set_free(set);
}
END_TEST

START_TEST(test_tolerated)
{
    /* A BOM, leading blank lines, trailing blanks, no final newline, a
     * two-character public id. */
    static const char text[] =
        "\xef\xbb\xbf\n  \n"
        "7,vv," A_PRIV "," A_KEY ",,, \t\r\n"
        "8,cb," C_PRIV "," C_KEY ",,2020-02-29 23:59:60Z,";
    yk_import_set *set = parse_both(text, YK_IMPORT_YKMAN_CSV);

    ck_assert_uint_eq(yk_import_set_count(set), 2);
    check_token(yk_import_set_get(set, 0), "vv", a_priv, a_key, "7", NULL,
                0, 3);
    check_token(yk_import_set_get(set, 1), "cb", c_priv, c_key, "8", NULL,
                0, 4);
    yk_import_set_free(set);
}
END_TEST

START_TEST(test_formats)
{
    int f = -1;

    ck_assert_int_eq(yk_import_format_parse("auto", &f), 0);
    ck_assert_int_eq(f, YK_IMPORT_AUTO);
    ck_assert_int_eq(yk_import_format_parse("YKMAN", &f), 0);
    ck_assert_int_eq(f, YK_IMPORT_YKMAN_CSV);
    ck_assert_int_eq(yk_import_format_parse("csv", &f), 0);
    ck_assert_int_eq(f, YK_IMPORT_YKMAN_CSV);
    ck_assert_int_eq(yk_import_format_parse("yubico", &f), 0);
    ck_assert_int_eq(f, YK_IMPORT_YKMAN_CSV);
    ck_assert_int_eq(yk_import_format_parse("traditional", &f), 0);
    ck_assert_int_eq(f, YK_IMPORT_TRADITIONAL);
    ck_assert_int_eq(yk_import_format_parse("ykksm", &f), 0);
    ck_assert_int_eq(f, YK_IMPORT_KSM);
    f = -1;
    ck_assert_int_eq(yk_import_format_parse("pskc", &f), EINVAL);
    ck_assert_int_eq(f, -1);
    ck_assert_str_eq(yk_import_format_name(YK_IMPORT_KSM), "ksm");
    ck_assert_str_eq(yk_import_format_name(YK_IMPORT_YKMAN_CSV), "ykman");
    ck_assert_str_eq(yk_import_format_name(YK_IMPORT_TRADITIONAL),
                     "traditional");
    ck_assert_str_eq(yk_import_format_name(42), "unknown");
    ck_assert_uint_eq(yk_import_set_count(NULL), 0);
    ck_assert_ptr_null(yk_import_set_get(NULL, 0));
    yk_import_set_free(NULL);
    yk_import_map_free(NULL);
}
END_TEST

/* ---- malformed rows --------------------------------------------------- */

/* One malformed variant: the good text with one substring replaced, the
 * format to force (AUTO works too) and what the message must name. */
typedef struct {
    const char *base;
    int format;
    const char *from;
    const char *to;
    const char *expect[MAX_EXPECT];
} variant;

/* The good CSV row of A at line 1, the variants rewrite line 2 (B). */
#define B_ROW "," B_PUBID_UP "," B_PRIV_UP "," B_KEY_UP "," B_ACCESS \
    ",2024-05-01T12:01:30,"
#define T_ROW2 "1," B_PUBID_UP "," B_PRIV_UP "," B_KEY_UP ",," B_ACCESS \
    ",0,0,0,0,0,0,0,0,0,0"
#define K_ROW2 "4712," B_PUBID_UP "," B_PRIV_UP "," B_KEY_UP "," B_ACCESS \
    ",2009-01-22 00:25:11,2009-02-13 00:05:40,0"

static const variant variants[] = {
    /* ykman CSV, line 2 */
    { ykman_csv, YK_IMPORT_YKMAN_CSV, B_KEY_UP,
      "000102030405060708090A0B0C0D0E", { "line 2, field 4 (AES key)",
                                          "found 30 characters" } },
    { ykman_csv, YK_IMPORT_AUTO, B_KEY_UP,
      "000102030405060708090A0B0C0D0E0F00", { "line 2, field 4" } },
    { ykman_csv, YK_IMPORT_YKMAN_CSV, B_KEY_UP,
      "000102030405060708090A0B0C0D0E0G", { "line 2, field 4",
                                            "another character" } },
    { ykman_csv, YK_IMPORT_YKMAN_CSV, "," B_PUBID_UP ",", ",VVLNRTUVCBD,",
      { "line 2, field 2 (public id)", "found 11 characters" } },
    { ykman_csv, YK_IMPORT_YKMAN_CSV, "," B_PUBID_UP ",",
      ",cccccccccccccccccccccccccccccccccc,", { "line 2, field 2",
                                              "found 34 characters" } },
    { ykman_csv, YK_IMPORT_YKMAN_CSV, "," B_PUBID_UP ",", ",VVLNRTUVCBDA,",
      { "line 2, field 2", "modhex" } },
    { ykman_csv, YK_IMPORT_YKMAN_CSV, "," B_PUBID_UP ",", ",,",
      { "line 2, field 2", "found nothing" } },
    { ykman_csv, YK_IMPORT_YKMAN_CSV, B_PRIV_UP, "0123456789ABC",
      { "line 2, field 3 (private id)", "found 13 characters" } },
    { ykman_csv, YK_IMPORT_YKMAN_CSV, B_PRIV_UP, "0123456789A",
      { "line 2, field 3", "found 11 characters" } },
    { ykman_csv, YK_IMPORT_YKMAN_CSV, B_PRIV_UP, "0123456789AX",
      { "line 2, field 3", "another character" } },
    { ykman_csv, YK_IMPORT_YKMAN_CSV, "," B_PRIV_UP ",", ",0,",
      { "line 2: not a Yubico OTP row", "nothing is imported" } },
    { ykman_csv, YK_IMPORT_AUTO, "," B_PRIV_UP ",", ",,",
      { "line 2: not a Yubico OTP row" } },
    { ykman_csv, YK_IMPORT_YKMAN_CSV, "," B_PRIV_UP ",", ",16,",
      { "line 2: not a Yubico OTP row" } },
    { ykman_csv, YK_IMPORT_YKMAN_CSV, B_KEY_UP,
      "000102030405060708090A0B0C0D0E0F10111213",
      { "line 2: not a Yubico OTP row" } },
    { ykman_csv, YK_IMPORT_YKMAN_CSV, ",2024-05-01T12:01:30,\n",
      ",2024-05-01T12:01:30\n", { "line 2: expected 7 fields", "found 6" } },
    { ykman_csv, YK_IMPORT_YKMAN_CSV, "," B_ACCESS ",", ",",
      { "line 2: expected 7 fields", "found 6" } },
    { ykman_csv, YK_IMPORT_YKMAN_CSV, ",2024-05-01T12:01:30,\n",
      ",2024-05-01T12:01:30,,\n", { "line 2: expected 7 fields",
                                    "found 8" } },
    { ykman_csv, YK_IMPORT_YKMAN_CSV, ",2024-05-01T12:01:30,\n",
      ",2024-05-01T12:01:30,x\n", { "line 2, field 7" } },
    { ykman_csv, YK_IMPORT_YKMAN_CSV, "\n," B_PUBID_UP, "\n47a1," B_PUBID_UP,
      { "line 2, field 1 (serial)" } },
    { ykman_csv, YK_IMPORT_YKMAN_CSV, "\n," B_PUBID_UP,
      "\n1234567890123456," B_PUBID_UP, { "line 2, field 1",
                                          "found 16 characters" } },
    { ykman_csv, YK_IMPORT_YKMAN_CSV, B_ACCESS, "a1b2c3d4e5",
      { "line 2, field 5 (access code)", "found 10 characters" } },
    { ykman_csv, YK_IMPORT_YKMAN_CSV, B_ACCESS, "a1b2c3d4e5fz",
      { "line 2, field 5" } },
    { ykman_csv, YK_IMPORT_YKMAN_CSV, "2024-05-01T12:01:30",
      "2024-13-01T12:01:30", { "line 2, field 6 (timestamp)" } },
    { ykman_csv, YK_IMPORT_YKMAN_CSV, "2024-05-01T12:01:30", "yesterday",
      { "line 2, field 6" } },
    { ykman_csv, YK_IMPORT_YKMAN_CSV, "\n," B_PUBID_UP,
      "\n# a comment\n," B_PUBID_UP, { "line 2: expected 7 fields" } },
    { ykman_csv, YK_IMPORT_AUTO, "4711,", "serial,public_id,x\n4711,",
      { "line 1: not a recognised import file" } },
    /* Traditional log, line 4 (the row after the second LOGGING START) */
    { trad_log, YK_IMPORT_TRADITIONAL, ",0,0,0,0,0,0,0,0,0,0\r\n"
      "LOGGING", ",0,0,0,0,0,0,0,0,0\r\nLOGGING",
      { "line 2: expected 18 fields", "found 17" } },
    { trad_log, YK_IMPORT_AUTO, "Yubico OTP,Tuesday",
      "OATH-HOTP,Tuesday", { "line 4: a row of type \"OATH-HOTP\"",
                             "nothing is imported" } },
    { trad_log, YK_IMPORT_TRADITIONAL, "Yubico OTP,Tuesday",
      "Static Password,Tuesday",
      { "line 4: a row of type \"Static Password\", not" } },
    { trad_log, YK_IMPORT_TRADITIONAL, "Yubico OTP,Tuesday",
      "Challenge-Response: HMAC-SHA1,Tuesday", { "line 4",
                                                 "Challenge-Response" } },
    { trad_log, YK_IMPORT_TRADITIONAL, "Yubico OTP,Tuesday", "Foo,Tuesday",
      { "line 4, field 1 (event type)" } },
    { trad_log, YK_IMPORT_TRADITIONAL, "PM,1,", "PM,3,",
      { "line 4, field 5 (slot)" } },
    { trad_log, YK_IMPORT_TRADITIONAL, B_PUBID_UP, "VVLNRTUVCBD",
      { "line 4, field 6 (public id)" } },
    { trad_log, YK_IMPORT_TRADITIONAL, B_KEY_UP,
      "000102030405060708090A0B0C0D0E", { "line 4, field 8 (AES key)" } },
    { trad_log, YK_IMPORT_TRADITIONAL, B_PRIV_UP, "0123456789ABC",
      { "line 4, field 7 (private id)" } },
    { trad_log, YK_IMPORT_TRADITIONAL, B_ACCESS ",0,", "a1b2c3d4e5f,0,",
      { "line 4, field 10 (new access code)" } },
    { trad_log, YK_IMPORT_TRADITIONAL, B_ACCESS ",0,", B_ACCESS ",2,",
      { "line 4, field 11 (OATH fixed modhex 1)" } },
    { trad_log, YK_IMPORT_TRADITIONAL, "0,0,0,0\r\nLOGGING",
      "0,0,0,x\r\nLOGGING", { "line 2, field 18 (HMAC less than 64)" } },
    { trad_log, YK_IMPORT_TRADITIONAL, "3/12/13 2:02 PM,2",
      ",2", { "line 2, field 2 (time)" } },
    { trad_log, YK_IMPORT_TRADITIONAL, "LOGGING START,Tuesday",
      "LOGGING STARTED,Tuesday", { "line 3: expected 18 fields" } },
    { trad_log, YK_IMPORT_TRADITIONAL, "Yubico OTP,3/12/13 2:02 PM,2,",
      "Yubico OTP,3/12/13 2:02 PM,2,x,", { "line 2, field 4 (slot)" } },
    /* yubikey-ksm, line 4 */
    { ksm_file, YK_IMPORT_AUTO, "# ykksm 1", "# ykksm 2",
      { "line 1: unsupported yubikey-ksm format version" } },
    { ksm_file, YK_IMPORT_KSM, "# ykksm 1\n", "",
      { "line 1: not a yubikey-ksm file" } },
    { ksm_file, YK_IMPORT_KSM, K_ROW2, "4712," B_PUBID_UP "," B_PRIV_UP ","
      B_KEY_UP "," B_ACCESS, { "line 4: expected 7 or 8 fields",
                               "found 5" } },
    { ksm_file, YK_IMPORT_KSM, K_ROW2, K_ROW2 ",1",
      { "line 4: expected 7 or 8 fields", "found 9" } },
    { ksm_file, YK_IMPORT_KSM, "4712,", ",", { "line 4, field 1 (serialNr)",
                                               "found nothing" } },
    { ksm_file, YK_IMPORT_KSM, "4712," B_PUBID_UP, "4712,",
      { "line 4, field 2 (publicName)" } },
    { ksm_file, YK_IMPORT_KSM, B_PRIV_UP, "0123456789",
      { "line 4, field 3 (internalName)" } },
    { ksm_file, YK_IMPORT_KSM, B_KEY_UP, B_KEY_UP B_KEY_UP,
      { "line 4, field 4 (aesKey)", "found 64 characters" } },
    { ksm_file, YK_IMPORT_KSM, "," B_ACCESS ",", ",,",
      { "line 4, field 5 (lockCode)" } },
    { ksm_file, YK_IMPORT_KSM, "2009-01-22 00:25:11", "2009-01-22 25:25:11",
      { "line 4, field 6 (created)" } },
    { ksm_file, YK_IMPORT_KSM, "2009-02-13 00:05:40", "2009-02-13",
      { "line 4, field 7 (accessed)" } },
    { ksm_file, YK_IMPORT_KSM, "05:40,0 #", "05:40,x #",
      { "line 4, field 8 (progflags)" } },
};

START_TEST(test_variant)
{
    const variant *v = &variants[_i];
    char *text = replace(v->base, v->from, v->to);

    parse_fail(text, strlen(text), v->format, v->expect, NULL);
    free(text);
}
END_TEST

START_TEST(test_duplicates)
{
    static const char two[] =
        "1," A_PUBID "," A_PRIV "," A_KEY ",,,\n"
        "2," C_PUBID "," C_PRIV "," C_KEY ",,,\n"
        "3,VVCBDEFGHIJK," C_PRIV "," C_KEY ",,,\n";
    /* Groups on lines 2/4/5 and 3/6: the earliest repeat is line 4. */
    static const char many[] =
        "1," B_PUBID "," A_PRIV "," A_KEY ",,,\n"
        "2," A_PUBID "," A_PRIV "," A_KEY ",,,\n"
        "3," C_PUBID "," C_PRIV "," C_KEY ",,,\n"
        "4," A_PUBID "," A_PRIV "," A_KEY ",,,\n"
        "5," A_PUBID "," A_PRIV "," A_KEY ",,,\n"
        "6," C_PUBID "," C_PRIV "," C_KEY ",,,\n";
    static const char ksm[] =
        "# ykksm 1\n"
        "1," A_PUBID "," A_PRIV "," A_KEY "," C_LOCK ",,\n"
        "2," A_PUBID "," C_PRIV "," C_KEY "," C_LOCK ",,\n";
    const char *const e1[MAX_EXPECT] = {
        "line 3: public id " A_PUBID " is already on line 1"
    };
    const char *const e2[MAX_EXPECT] = {
        "line 4: public id " A_PUBID " is already on line 2"
    };
    const char *const e3[MAX_EXPECT] = {
        "line 3: public id " A_PUBID " is already on line 2"
    };

    parse_fail(two, strlen(two), YK_IMPORT_AUTO, e1, NULL);
    parse_fail(many, strlen(many), YK_IMPORT_YKMAN_CSV, e2, NULL);
    parse_fail(ksm, strlen(ksm), YK_IMPORT_AUTO, e3, NULL);
}
END_TEST

START_TEST(test_openpgp)
{
    static const char armored[] =
        "-----BEGIN PGP MESSAGE-----\n"
        "Version: GnuPG v1.4.9 (GNU/Linux)\n\n"
        "jA0EAwMClfljrWYVfm5gycDMIpZXLnzKtUfeEsqXRp63IdAghBzAfdIt4aeJ2kdV\n"
        "=d54w\n"
        "-----END PGP MESSAGE-----\n";
    static const char binary[] = "\x85\x02\x0c\x03\x6a\x1b\x00\x01x,y\n";
    const char *const armor_expect[MAX_EXPECT] = {
        "line 1: an OpenPGP-armored file", "gpg --decrypt"
    };
    const char *const bin_expect[MAX_EXPECT] = {
        "line 1: binary data", "gpg --decrypt"
    };
    int f;

    for (f = YK_IMPORT_AUTO; f <= YK_IMPORT_KSM; f++) {
        parse_fail(armored, sizeof(armored) - 1, f, armor_expect, NULL);
        parse_fail(binary, sizeof(binary) - 1, f, bin_expect, NULL);
    }
}
END_TEST

START_TEST(test_empty)
{
    const char *const none[MAX_EXPECT] = { "holds no tokens" };
    static const char blank[] = "\n  \r\n\t\n";
    static const char header_only[] = "# ykksm 1\n# nothing yet\n";
    static const char start_only[] = "LOGGING START,3/12/13 2:02 PM\n";
    int f;

    for (f = YK_IMPORT_AUTO; f <= YK_IMPORT_KSM; f++) {
        parse_fail("", 0, f, none, NULL);
        parse_fail(NULL, 0, f, none, NULL);
        parse_fail(blank, strlen(blank), f, none, NULL);
    }
    parse_fail(header_only, strlen(header_only), YK_IMPORT_AUTO, none, NULL);
    parse_fail(start_only, strlen(start_only), YK_IMPORT_TRADITIONAL, none,
               NULL);
}
END_TEST

START_TEST(test_bad_arguments)
{
    yk_import_set *set = NULL;
    char err[ERRLEN];

    ck_assert_int_eq(yk_import_parse(ykman_csv, strlen(ykman_csv), 7, &set,
                                     err, sizeof(err)), EINVAL);
    ck_assert_ptr_null(set);
    ck_assert_int_eq(yk_import_parse(ykman_csv, strlen(ykman_csv),
                                     YK_IMPORT_AUTO, NULL, NULL, 0), EINVAL);
    /* No error buffer is fine. */
    ck_assert_int_eq(yk_import_parse("x", 1, YK_IMPORT_AUTO, &set, NULL, 0),
                     EINVAL);
    ck_assert_ptr_null(set);
}
END_TEST

START_TEST(test_truncated)
{
    /* Every cut inside the last line (the file's last row, cut mid-field
     * as an interrupted copy leaves it) is refused; the whole line
     * without its newline is a complete file. */
    const char *const samples[] = { ykman_csv, trad_log, ksm_file };
    const char *const lastrow[] = {
        ("," B_PUBID_UP), "Yubico OTP,Tuesday", "4713,"
    };
    const char *const any[MAX_EXPECT] = { "line " };
    char msg[ERRLEN], prefix[16];
    size_t s, start, end, k;

    for (s = 0; s < 3; s++) {
        const char *text = samples[s];
        size_t nlines = 0;

        start = (size_t)(strstr(text, lastrow[s]) - text);
        end = start + strcspn(text + start, "\r\n");
        for (k = 0; k < start; k++)
            nlines += text[k] == '\n';
        snprintf(prefix, sizeof(prefix), "line %zu", nlines + 1);
        for (k = start + 1; k < end; k++) {
            parse_fail(text, k, YK_IMPORT_AUTO, any, msg);
            ck_assert_msg(strncmp(msg, prefix, strlen(prefix)) == 0,
                          "cut at %zu: %s", k, msg);
        }
        yk_import_set_free(parse_ok(text, end, YK_IMPORT_AUTO));
    }
}
END_TEST

START_TEST(test_error_truncation)
{
    /* A small error buffer gets a truncated, terminated message. */
    yk_import_set *set = NULL;
    char err[12];

    memset(err, 'x', sizeof(err));
    ck_assert_int_eq(yk_import_parse("1,2,3\n", 6, YK_IMPORT_YKMAN_CSV,
                                     &set, err, sizeof(err)), EINVAL);
    ck_assert_ptr_null(set);
    ck_assert_uint_eq(strlen(err), sizeof(err) - 1);
    ck_assert(strncmp(err, "line 1: exp", 11) == 0);
}
END_TEST

/* ---- the map file ---------------------------------------------------- */

static const char map_text[] =
    "# March batch\r\n"
    "\r\n"
    A_PUBID " alice@EXAMPLE.ORG\r\n"
    "  " B_PUBID_UP "\talice/sign@EXAMPLE.ORG   \r\n"
    "   # indented comment\n"
    C_PUBID "  bob";

/* Parse text as a map, which must fail with EINVAL naming expect. */
static void
map_fail(const char *text, const char *expect)
{
    static char sentinel;
    yk_import_map *map = (yk_import_map *)(void *)&sentinel;
    char err[ERRLEN] = "";

    ck_assert_int_eq(yk_import_parse_map(text, strlen(text), &map, err,
                                         sizeof(err)), EINVAL);
    ck_assert(map == (yk_import_map *)(void *)&sentinel);
    ck_assert_msg(strstr(err, expect) != NULL, "message \"%s\" lacks \"%s\"",
                  err, expect);
}

START_TEST(test_map_good)
{
    yk_import_map *map = NULL;
    char err[ERRLEN] = "";

    ck_assert_int_eq(yk_import_parse_map(map_text, strlen(map_text), &map,
                                         err, sizeof(err)), 0);
    ck_assert_uint_eq(yk_import_map_count(map), 3);
    ck_assert_str_eq(yk_import_map_pubid(map, 0), A_PUBID);
    ck_assert_str_eq(yk_import_map_principal(map, 0), "alice@EXAMPLE.ORG");
    ck_assert_uint_eq(yk_import_map_line(map, 0), 3);
    ck_assert_str_eq(yk_import_map_pubid(map, 1), B_PUBID);
    ck_assert_str_eq(yk_import_map_principal(map, 1),
                     "alice/sign@EXAMPLE.ORG");
    ck_assert_uint_eq(yk_import_map_line(map, 1), 4);
    ck_assert_str_eq(yk_import_map_principal(map, 2), "bob");
    ck_assert_uint_eq(yk_import_map_line(map, 2), 6);
    ck_assert_ptr_null(yk_import_map_pubid(map, 3));
    ck_assert_ptr_null(yk_import_map_principal(map, 3));
    ck_assert_uint_eq(yk_import_map_line(map, 3), 0);

    ck_assert_str_eq(yk_import_map_lookup(map, B_PUBID),
                     "alice/sign@EXAMPLE.ORG");
    ck_assert_str_eq(yk_import_map_lookup(map, C_PUBID), "bob");
    ck_assert_str_eq(yk_import_map_lookup(map, A_PUBID),
                     "alice@EXAMPLE.ORG");
    ck_assert_ptr_null(yk_import_map_lookup(map, "vvvvvvvvvvvv"));
    ck_assert_ptr_null(yk_import_map_lookup(map, B_PUBID_UP));
    yk_import_map_free(map);
}
END_TEST

START_TEST(test_map_bad)
{
    map_fail("vvcbdefghijk\n", "line 1: expected \"PUBLIC-ID PRINCIPAL\"");
    map_fail("# x\nvvcbdefghijk alice extra\n",
             "line 2: expected \"PUBLIC-ID PRINCIPAL\", found more than 2");
    map_fail("vvcbdefghij alice\n", "line 1, field 1 (public id)");
    map_fail("vvcbdefghija alice\n", "line 1, field 1 (public id)");
    map_fail("vv alice\n\nvv bob\n", "line 3: public id vv is already "
             "mapped on line 1");
    map_fail("vvcbdefghijk alice\nVVCBDEFGHIJK alice\n",
             "line 2: public id vvcbdefghijk is already mapped on line 1");
    map_fail("vvcbdefghijk ali\x01" "ce\n", "line 1, field 2 (principal): "
             "a control character");
    map_fail("", "holds no");
    map_fail("# only comments\n\n", "holds no");
    map_fail("\x85\x02\x0c", "line 1: binary data");
}
END_TEST

START_TEST(test_map_check)
{
    yk_import_map *map = NULL, *partial = NULL;
    yk_import_set *set = parse_ok(ksm_file, strlen(ksm_file),
                                  YK_IMPORT_AUTO);
    static const char partial_text[] = A_PUBID " alice\n" C_PUBID " bob\n";
    char err[ERRLEN] = "";

    ck_assert_int_eq(yk_import_parse_map(map_text, strlen(map_text), &map,
                                         NULL, 0), 0);
    ck_assert_int_eq(yk_import_map_check(map, set, err, sizeof(err)), 0);
    ck_assert_int_eq(yk_import_parse_map(partial_text, strlen(partial_text),
                                         &partial, NULL, 0), 0);
    ck_assert_int_eq(yk_import_map_check(partial, set, err, sizeof(err)),
                     EINVAL);
    ck_assert_str_eq(err, "line 4: public id " B_PUBID " has no line in the "
                     "map file");
    yk_import_map_free(partial);
    yk_import_map_free(map);
    yk_import_set_free(set);
}
END_TEST

/* ---- a large file ---------------------------------------------------- */

START_TEST(test_many)
{
    /* 3000 rows with distinct 32-character public ids: growth of the
     * token array and the sort-based duplicate check; then one repeat. */
    enum { ROWS = 3000 };
    static const char row_tail[] = "," A_PRIV "," A_KEY ",,,\n";
    size_t rowlen = 1 + 1 + 32 + sizeof(row_tail) - 1, i;
    char *text = malloc(ROWS * rowlen + rowlen + 1), *p;
    unsigned char raw[16];
    const char *const dup[MAX_EXPECT] = {
        "line 3001: public id", "is already on line 1235"
    };
    yk_import_set *set;

    ck_assert_ptr_nonnull(text);
    p = text;
    for (i = 0; i < ROWS; i++) {
        memset(raw, 0, sizeof(raw));
        raw[0] = (unsigned char)(i >> 8);
        raw[15] = (unsigned char)i;
        *p++ = '9';
        *p++ = ',';
        yk_modhex_encode(raw, sizeof(raw), p);
        p += 32;
        memcpy(p, row_tail, sizeof(row_tail) - 1);
        p += sizeof(row_tail) - 1;
    }
    set = parse_ok(text, (size_t)(p - text), YK_IMPORT_AUTO);
    ck_assert_uint_eq(yk_import_set_count(set), ROWS);
    ck_assert_uint_eq(yk_import_set_get(set, ROWS - 1)->line, ROWS);
    yk_import_set_free(set);

    /* Row 1235 again at the end. */
    memcpy(p, text + 1234 * rowlen, rowlen);
    p += rowlen;
    parse_fail(text, (size_t)(p - text), YK_IMPORT_YKMAN_CSV, dup, NULL);
    free(text);
}
END_TEST

/* ---- the suite ------------------------------------------------------- */

static Suite *
importfile_suite(void)
{
    Suite *s = suite_create("importfile");
    TCase *good = tcase_create("good"), *bad = tcase_create("bad");
    TCase *map = tcase_create("map");

    tcase_add_test(good, test_ykman_csv);
    tcase_add_test(good, test_yubico_csv);
    tcase_add_test(good, test_traditional);
    tcase_add_test(good, test_traditional_no_start_line);
    tcase_add_test(good, test_ksm);
    tcase_add_test(good, test_tolerated);
    tcase_add_test(good, test_formats);
    tcase_add_test(good, test_many);
    suite_add_tcase(s, good);

    tcase_add_loop_test(bad, test_variant, 0,
                        (int)(sizeof(variants) / sizeof(variants[0])));
    tcase_add_test(bad, test_duplicates);
    tcase_add_test(bad, test_openpgp);
    tcase_add_test(bad, test_empty);
    tcase_add_test(bad, test_bad_arguments);
    tcase_add_test(bad, test_truncated);
    tcase_add_test(bad, test_error_truncation);
    suite_add_tcase(s, bad);

    tcase_add_test(map, test_map_good);
    tcase_add_test(map, test_map_bad);
    tcase_add_test(map, test_map_check);
    suite_add_tcase(s, map);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(importfile_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
