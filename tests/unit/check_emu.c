/* SPDX-License-Identifier: MIT */
/* check_emu.c: unit tests of the software YubiKey (emu/emu.c). */

#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <check.h>
#include <gcrypt.h>

#include "emu.h"
#include "errors.h"
#include "otp.h"
#include "secmem.h"

#define TS_MASK 0xffffffu
#define ROUNDTRIP_TOKENS 150        /* per public-id length: 17 x 150 */
#define ROUNDTRIP_OTPS 4            /* OTPs per token */
#define STATE_HEADER "# ykemu software YubiKey state: holds the token's " \
    "AES key (tests and demos only)"

/* Fail unless two states hold the same fields. */
static void
assert_emu_equal(const yk_emu *a, const yk_emu *b)
{
    ck_assert(memcmp(a->aes_key, b->aes_key, YK_AES_KEY_LEN) == 0);
    ck_assert(memcmp(a->private_id, b->private_id, YK_PRIVID_LEN) == 0);
    ck_assert_uint_eq(a->pubid_len, b->pubid_len);
    ck_assert(memcmp(a->pubid, b->pubid, a->pubid_len) == 0);
    ck_assert_uint_eq(a->usage, b->usage);
    ck_assert_uint_eq(a->session, b->session);
    ck_assert_uint_eq(a->timestamp, b->timestamp);
    ck_assert_int_eq(a->fresh, b->fresh);
    ck_assert_int_eq(a->last, b->last);
}

/* Verify otp as the KDC would, with emu's key and private id; check the
 * public id and the length; return the decrypted fields in *f. */
static void
verify_otp(const yk_emu *emu, const char *otp, yk_token_fields *f)
{
    yk_otp parsed;
    krb5_error_code ret;

    ck_assert_uint_eq(strlen(otp), 2 * emu->pubid_len + YK_TOKEN_MODHEX_LEN);
    ret = yk_otp_verify(otp, strlen(otp), emu->aes_key, emu->private_id,
                        &parsed, f);
    ck_assert_msg(ret == 0, "OTP %s refused: %s", otp, yk_strerror(ret));
    ck_assert_uint_eq(parsed.pubid_len, emu->pubid_len);
    ck_assert(memcmp(parsed.pubid, emu->pubid, emu->pubid_len) == 0);
    ck_assert((f->usage & YK_USAGE_TRIGGER_FLAG) == 0);
    ck_assert_uint_le(f->timestamp, TS_MASK);
}

/* Produce the next OTP of emu, verify it and return its fields. */
static void
next_verified(yk_emu *emu, yk_token_fields *f)
{
    char otp[YK_OTP_MAX_LEN + 1];
    krb5_error_code ret;

    ret = yk_emu_next(emu, otp);
    ck_assert_msg(ret == 0, "yk_emu_next: %s", yk_strerror(ret));
    verify_otp(emu, otp, f);
}

/* Forward distance from timestamp a to b, modulo 2^24. */
static uint32_t
ts_dist(uint32_t a, uint32_t b)
{
    return (b - a) & TS_MASK;
}

/* Thousands of random tokens, every public-id length: each OTP verifies
 * with the token's key and private id, carries its public id, and the
 * counters strictly increase (with random replugs in between). */
START_TEST(test_roundtrip_all_lengths)
{
    yk_emu emu, other;
    yk_token_fields f;
    unsigned char pubid[YK_PUBID_MAX], coin;
    char otp[YK_OTP_MAX_LEN + 1];
    yk_otp parsed;
    uint32_t prev;
    size_t len;
    int t, i;

    ck_assert_int_eq(yk_crypto_init(), 0);
    ck_assert_int_eq(yk_emu_init(&other, NULL, 0), 0);
    for (len = 0; len <= YK_PUBID_MAX; len++) {
        for (t = 0; t < ROUNDTRIP_TOKENS; t++) {
            gcry_create_nonce(pubid, sizeof(pubid));
            ck_assert_int_eq(yk_emu_init(&emu, pubid, len), 0);
            ck_assert_uint_eq(emu.pubid_len, len);
            prev = 0;
            for (i = 0; i < ROUNDTRIP_OTPS; i++) {
                gcry_create_nonce(&coin, 1);
                if (i > 0 && (coin & 3) == 0)
                    yk_emu_replug(&emu);
                ck_assert_int_eq(yk_emu_next(&emu, otp), 0);
                verify_otp(&emu, otp, &f);
                if (i == 0) {
                    /* A new token's first OTP: usage 1, session 0. */
                    ck_assert_uint_eq(f.usage, 1);
                    ck_assert_uint_eq(f.session, 0);
                } else {
                    ck_assert_msg(yk_otp_counter(&f) > prev,
                                  "len %zu token %d otp %d: counter %u "
                                  "after %u", len, t, i,
                                  yk_otp_counter(&f), prev);
                }
                prev = yk_otp_counter(&f);
            }
            /* Another token's key must not decrypt it. */
            ck_assert_int_ne(yk_otp_verify(otp, strlen(otp), other.aes_key,
                                           emu.private_id, &parsed, &f), 0);
        }
    }
    yk_emu_clear(&emu);
    yk_emu_clear(&other);
}
END_TEST

/* Within one power-up: usage stays, session counts 0, 1, 2...; the
 * timestamp moves forward by a little; the random field varies. */
START_TEST(test_within_session)
{
    yk_emu emu;
    yk_token_fields f, first;
    uint32_t prev_ts = 0;
    int i, random_varies = 0;

    ck_assert_int_eq(yk_emu_init(&emu, (const unsigned char *)"\x01\x02",
                                 2), 0);
    ck_assert_int_eq(emu.fresh, 1);
    ck_assert_uint_eq(emu.usage, 0);
    for (i = 0; i < 20; i++) {
        next_verified(&emu, &f);
        if (i == 0)
            first = f;
        ck_assert_uint_eq(f.usage, 1);
        ck_assert_uint_eq(f.session, i);
        ck_assert(memcmp(f.private_id, emu.private_id, YK_PRIVID_LEN) == 0);
        if (i > 0) {
            ck_assert_uint_ge(ts_dist(prev_ts, f.timestamp), 1);
            ck_assert_uint_le(ts_dist(prev_ts, f.timestamp), 2 * 8);
        }
        if (f.random != first.random)
            random_varies = 1;
        prev_ts = f.timestamp;
    }
    ck_assert(random_varies);
    ck_assert_int_eq(emu.fresh, 0);
    ck_assert_uint_eq(emu.session, 20);
    yk_emu_clear(&emu);
}
END_TEST

/* After a replug the first OTP has usage + 1, session 0 and a counter
 * above every earlier one; several replugs without an OTP count once. */
START_TEST(test_replug)
{
    yk_emu emu;
    yk_token_fields f;
    uint32_t max = 0;
    int i;

    ck_assert_int_eq(yk_emu_init(&emu, NULL, 0), 0);
    for (i = 0; i < 7; i++) {
        next_verified(&emu, &f);
        ck_assert_uint_gt(yk_otp_counter(&f), max);
        max = yk_otp_counter(&f);
    }
    yk_emu_replug(&emu);
    ck_assert_int_eq(emu.fresh, 1);
    next_verified(&emu, &f);
    ck_assert_uint_eq(f.usage, 2);
    ck_assert_uint_eq(f.session, 0);
    ck_assert_uint_gt(yk_otp_counter(&f), max);
    max = yk_otp_counter(&f);
    next_verified(&emu, &f);
    ck_assert_uint_eq(f.usage, 2);
    ck_assert_uint_eq(f.session, 1);

    yk_emu_replug(&emu);
    yk_emu_replug(&emu);
    yk_emu_replug(&emu);
    next_verified(&emu, &f);
    ck_assert_uint_eq(f.usage, 3);
    ck_assert_uint_eq(f.session, 0);
    ck_assert_uint_gt(yk_otp_counter(&f), max);
    yk_emu_clear(&emu);
}
END_TEST

/* 256 OTPs use sessions 0..255; the 257th raises usage, session 0. */
START_TEST(test_session_wrap)
{
    yk_emu emu;
    yk_token_fields f;
    uint32_t prev = 0;
    int i;

    ck_assert_int_eq(yk_emu_init(&emu, NULL, 0), 0);
    for (i = 0; i < 256; i++) {
        next_verified(&emu, &f);
        ck_assert_uint_eq(f.usage, 1);
        ck_assert_uint_eq(f.session, i);
        if (i > 0)
            ck_assert_uint_gt(yk_otp_counter(&f), prev);
        prev = yk_otp_counter(&f);
    }
    ck_assert_uint_eq(prev, (1u << 8) | 0xff);
    next_verified(&emu, &f);
    ck_assert_uint_eq(f.usage, 2);
    ck_assert_uint_eq(f.session, 0);
    ck_assert_uint_gt(yk_otp_counter(&f), prev);
    next_verified(&emu, &f);
    ck_assert_uint_eq(f.usage, 2);
    ck_assert_uint_eq(f.session, 1);
    yk_emu_clear(&emu);
}
END_TEST

/* The usage counter stops at 0x7fff: the last power-up's 256 OTPs work,
 * then yk_emu_next fails and changes nothing, replug or not. */
START_TEST(test_exhaustion)
{
    yk_emu emu, before;
    yk_token_fields f;
    char otp[YK_OTP_MAX_LEN + 1], otp_before[YK_OTP_MAX_LEN + 1];
    int i;

    ck_assert_int_eq(yk_emu_init(&emu, NULL, 0), 0);
    emu.usage = YK_USAGE_MAX - 1;
    for (i = 0; i < 256; i++) {
        next_verified(&emu, &f);
        ck_assert_uint_eq(f.usage, YK_USAGE_MAX);
        ck_assert_uint_eq(f.session, i);
    }
    ck_assert_uint_eq(yk_otp_counter(&f), 0x7fffffu);

    memset(otp, 'x', sizeof(otp));
    memcpy(otp_before, otp, sizeof(otp));
    before = emu;
    ck_assert_int_eq(yk_emu_next(&emu, otp), YK_ERR_EMU_EXHAUSTED);
    assert_emu_equal(&emu, &before);
    ck_assert(memcmp(otp, otp_before, sizeof(otp)) == 0);

    yk_emu_replug(&emu);
    ck_assert_int_eq(yk_emu_next(&emu, otp), YK_ERR_EMU_EXHAUSTED);
    ck_assert_uint_eq(emu.usage, YK_USAGE_MAX);

    /* A token at 0x7fff in mid-session finishes that session only. */
    emu.fresh = 0;
    emu.session = 0xfe;
    next_verified(&emu, &f);
    next_verified(&emu, &f);
    ck_assert_uint_eq(f.session, 0xff);
    ck_assert_int_eq(yk_emu_next(&emu, otp), YK_ERR_EMU_EXHAUSTED);
    yk_emu_clear(&emu);
    yk_emu_clear(&before);
}
END_TEST

/* The timestamp follows the wall clock at 8 Hz since the last OTP, wraps
 * at 2^24, and still moves by one when the clock went backwards. */
START_TEST(test_timestamp)
{
    yk_emu emu;
    yk_token_fields f;
    uint32_t start;

    ck_assert_int_eq(yk_emu_init(&emu, NULL, 0), 0);
    start = emu.timestamp;
    emu.last -= 10;
    next_verified(&emu, &f);
    ck_assert_uint_ge(ts_dist(start, f.timestamp), 10 * 8);
    ck_assert_uint_le(ts_dist(start, f.timestamp), 12 * 8);
    ck_assert_uint_eq(emu.timestamp, f.timestamp);

    emu.timestamp = TS_MASK;
    emu.last = (int64_t)time(NULL);
    next_verified(&emu, &f);
    ck_assert_uint_le(f.timestamp, 2 * 8);

    start = emu.timestamp;
    emu.last = (int64_t)time(NULL) + 1000;
    next_verified(&emu, &f);
    ck_assert_uint_eq(f.timestamp, (start + 1) & TS_MASK);

    /* Power-up picks a new random start: two in a row rarely agree. */
    start = emu.timestamp;
    yk_emu_replug(&emu);
    if (emu.timestamp == start)
        yk_emu_replug(&emu);
    ck_assert_uint_ne(emu.timestamp, start);
    yk_emu_clear(&emu);
}
END_TEST

/* Bad arguments are refused, and fresh tokens have fresh secrets. */
START_TEST(test_init_args)
{
    yk_emu a, b, keep;
    unsigned char pubid[YK_PUBID_MAX + 1];
    char otp[YK_OTP_MAX_LEN + 1];

    memset(pubid, 0x11, sizeof(pubid));
    memset(&keep, 0x5a, sizeof(keep));
    a = keep;
    ck_assert_int_eq(yk_emu_init(&a, pubid, YK_PUBID_MAX + 1), EINVAL);
    ck_assert_int_eq(yk_emu_init(&a, NULL, 3), EINVAL);
    ck_assert_int_eq(yk_emu_init(NULL, pubid, 3), EINVAL);
    ck_assert(memcmp(&a, &keep, sizeof(a)) == 0);

    ck_assert_int_eq(yk_emu_init(&a, pubid, YK_PUBID_MAX), 0);
    ck_assert_int_eq(yk_emu_init(&b, pubid, YK_PUBID_MAX), 0);
    ck_assert(memcmp(a.aes_key, b.aes_key, YK_AES_KEY_LEN) != 0);
    ck_assert(memcmp(a.private_id, b.private_id, YK_PRIVID_LEN) != 0);
    ck_assert_uint_eq(a.usage, 0);
    ck_assert_uint_eq(a.session, 0);
    ck_assert_int_eq(a.fresh, 1);
    ck_assert_uint_le(a.timestamp, TS_MASK);

    /* yk_emu_next refuses NULL and out-of-range states. */
    ck_assert_int_eq(yk_emu_next(NULL, otp), EINVAL);
    ck_assert_int_eq(yk_emu_next(&a, NULL), EINVAL);
    b = a;
    b.pubid_len = YK_PUBID_MAX + 1;
    ck_assert_int_eq(yk_emu_next(&b, otp), EINVAL);
    b = a;
    b.timestamp = TS_MASK + 1;
    ck_assert_int_eq(yk_emu_next(&b, otp), EINVAL);
    b = a;
    b.fresh = 2;
    ck_assert_int_eq(yk_emu_next(&b, otp), EINVAL);

    yk_emu_clear(&a);
    memset(&keep, 0, sizeof(keep));
    ck_assert(memcmp(&a, &keep, sizeof(a)) == 0);
    yk_emu_clear(NULL);
    yk_emu_replug(NULL);
    yk_emu_clear(&b);
}
END_TEST

/* A private temp directory and the path of a file in it. */
typedef struct {
    char dir[64];
    char path[128];
} tmpdir;

/* Make a fresh temp directory with a state-file path inside. */
static void
tmpdir_make(tmpdir *t)
{
    snprintf(t->dir, sizeof(t->dir), "/tmp/check_emu.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(t->dir));
    snprintf(t->path, sizeof(t->path), "%s/token", t->dir);
}

/* Count the entries of t's directory (not . and ..). */
static int
tmpdir_count(const tmpdir *t)
{
    DIR *d = opendir(t->dir);
    struct dirent *e;
    int n = 0;

    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    }
    closedir(d);
    return n;
}

/* Remove the state file and the directory. */
static void
tmpdir_remove(const tmpdir *t)
{
    (void)unlink(t->path);
    ck_assert_int_eq(rmdir(t->dir), 0);
}

/* Write len bytes of text to t's state file, replacing it. */
static void
write_state(const tmpdir *t, const char *text, size_t len)
{
    int fd = open(t->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
    ck_assert_int_eq(close(fd), 0);
}

/* Save, check mode and content, load back equal; the loaded state goes on
 * counting where the saved one stopped. */
START_TEST(test_save_load)
{
    tmpdir t;
    yk_emu emu, loaded;
    yk_token_fields f;
    struct stat st;
    char text[1024], line[128], hex[2 * YK_AES_KEY_LEN + 1];
    uint32_t prev;
    FILE *fp;
    size_t n;

    tmpdir_make(&t);
    ck_assert_int_eq(yk_emu_init(&emu, (const unsigned char *)"\0\1\2\3\4\5",
                                 6), 0);
    next_verified(&emu, &f);
    next_verified(&emu, &f);
    prev = yk_otp_counter(&f);

    /* An existing file (mode 0644) is replaced by a 0600 one. */
    write_state(&t, "old", 3);
    ck_assert_int_eq(chmod(t.path, 0644), 0);
    ck_assert_int_eq(yk_emu_save(&emu, t.path), 0);
    ck_assert_int_eq(stat(t.path, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    ck_assert_uint_eq(st.st_mode & 07777, 0600);
    ck_assert_int_eq(tmpdir_count(&t), 1);

    fp = fopen(t.path, "r");
    ck_assert_ptr_nonnull(fp);
    n = fread(text, 1, sizeof(text) - 1, fp);
    fclose(fp);
    text[n] = '\0';
    ck_assert(strncmp(text, STATE_HEADER "\n", strlen(STATE_HEADER) + 1)
              == 0);
    yk_hex_encode(emu.aes_key, YK_AES_KEY_LEN, hex);
    snprintf(line, sizeof(line), "\naes_key %s\n", hex);
    ck_assert_ptr_nonnull(strstr(text, line));
    ck_assert_ptr_nonnull(strstr(text, "\npublic_id cccbcdcecfcg\n"));
    snprintf(line, sizeof(line), "\nusage 1\nsession 2\ntimestamp %lu\n"
             "fresh 0\nlast %lld\n", (unsigned long)emu.timestamp,
             (long long)emu.last);
    ck_assert_ptr_nonnull(strstr(text, line));
    yk_zap(text, sizeof(text));
    yk_zap(hex, sizeof(hex));

    memset(&loaded, 0, sizeof(loaded));
    ck_assert_int_eq(yk_emu_load(t.path, &loaded), 0);
    assert_emu_equal(&loaded, &emu);

    /* Continue from the file: no counter is repeated. */
    next_verified(&loaded, &f);
    ck_assert_uint_gt(yk_otp_counter(&f), prev);
    prev = yk_otp_counter(&f);
    ck_assert_int_eq(yk_emu_save(&loaded, t.path), 0);
    ck_assert_int_eq(yk_emu_load(t.path, &emu), 0);
    next_verified(&emu, &f);
    ck_assert_uint_gt(yk_otp_counter(&f), prev);

    /* An empty public id and a fresh (replugged) state round trip too. */
    ck_assert_int_eq(yk_emu_init(&emu, NULL, 0), 0);
    ck_assert_int_eq(yk_emu_save(&emu, t.path), 0);
    ck_assert_int_eq(yk_emu_load(t.path, &loaded), 0);
    assert_emu_equal(&loaded, &emu);
    ck_assert_int_eq(tmpdir_count(&t), 1);

    yk_emu_clear(&emu);
    yk_emu_clear(&loaded);
    tmpdir_remove(&t);
}
END_TEST

/* Saving refuses bad states and missing directories, leaving no file. */
START_TEST(test_save_errors)
{
    tmpdir t;
    yk_emu emu;
    char path[160];

    tmpdir_make(&t);
    ck_assert_int_eq(yk_emu_init(&emu, NULL, 0), 0);
    snprintf(path, sizeof(path), "%s/nodir/token", t.dir);
    ck_assert_int_eq(yk_emu_save(&emu, path), ENOENT);
    ck_assert_int_eq(yk_emu_save(NULL, t.path), EINVAL);
    ck_assert_int_eq(yk_emu_save(&emu, NULL), EINVAL);
    emu.usage = YK_USAGE_MAX + 1;
    ck_assert_int_eq(yk_emu_save(&emu, t.path), EINVAL);
    emu.usage = 0;
    emu.fresh = 0;
    ck_assert_int_eq(yk_emu_save(&emu, t.path), EINVAL);
    ck_assert_int_eq(tmpdir_count(&t), 0);
    ck_assert_int_eq(yk_emu_load(t.path, &emu), ENOENT);

    /* A rename that fails (the path is a directory) leaves no temp file. */
    emu.usage = 1;
    ck_assert_int_eq(mkdir(t.path, 0700), 0);
    ck_assert_int_eq(yk_emu_save(&emu, t.path), EISDIR);
    ck_assert_int_eq(tmpdir_count(&t), 1);
    ck_assert_int_eq(rmdir(t.path), 0);
    yk_emu_clear(&emu);
    tmpdir_remove(&t);
}
END_TEST

/* A valid state file; malformed cases change one line of it. */
static const char *const base_lines[] = {
    STATE_HEADER,
    "aes_key 000102030405060708090a0b0c0d0e0f",
    "private_id 010203040506",
    "public_id vvcccccccccc",
    "usage 5",
    "session 3",
    "timestamp 1000",
    "fresh 0",
    "last 1700000000",
};
#define N_BASE (sizeof(base_lines) / sizeof(base_lines[0]))

/* One variant of the base file: the line starting with key is replaced by
 * repl (dropped when repl is NULL); key NULL appends repl instead. */
typedef struct {
    const char *name;
    const char *key;
    const char *repl;
    krb5_error_code expect;
} variant;

static const variant malformed[] = {
    { "unknown key", NULL, "colour blue", YK_ERR_CONFIG },
    { "duplicate key", NULL, "usage 6", YK_ERR_CONFIG },
    { "duplicate empty public id", NULL, "public_id", YK_ERR_CONFIG },
    { "missing aes_key", "aes_key ", NULL, YK_ERR_CONFIG },
    { "missing private_id", "private_id ", NULL, YK_ERR_CONFIG },
    { "missing public_id", "public_id ", NULL, YK_ERR_CONFIG },
    { "missing usage", "usage ", NULL, YK_ERR_CONFIG },
    { "missing session", "session ", NULL, YK_ERR_CONFIG },
    { "missing timestamp", "timestamp ", NULL, YK_ERR_CONFIG },
    { "missing fresh", "fresh ", NULL, YK_ERR_CONFIG },
    { "missing last", "last ", NULL, YK_ERR_CONFIG },
    { "number without value", "usage ", "usage", YK_ERR_CONFIG },
    { "two spaces", "usage ", "usage  5", YK_ERR_CONFIG },
    { "tab separator", "usage ", "usage\t5", YK_ERR_CONFIG },
    { "leading space", "usage ", " usage 5", YK_ERR_CONFIG },
    { "carriage return", "usage ", "usage 5\r", YK_ERR_CONFIG },
    { "upper-case key", "usage ", "USAGE 5", YK_ERR_CONFIG },
    { "negative number", "usage ", "usage -1", YK_ERR_CONFIG },
    { "plus sign", "usage ", "usage +5", YK_ERR_CONFIG },
    { "trailing garbage", "usage ", "usage 5x", YK_ERR_CONFIG },
    { "hex number", "timestamp ", "timestamp 0x10", YK_ERR_CONFIG },
    { "usage out of range", "usage ", "usage 32768", ERANGE },
    { "huge number", "usage ", "usage 99999999999999999999999", ERANGE },
    { "session out of range", "session ", "session 256", ERANGE },
    { "timestamp out of range", "timestamp ", "timestamp 16777216",
      ERANGE },
    { "fresh out of range", "fresh ", "fresh 2", ERANGE },
    { "last out of range", "last ", "last 9223372036854775808", ERANGE },
    { "fresh with a session", "fresh ", "fresh 1", YK_ERR_CONFIG },
    { "used token with usage 0", "usage ", "usage 0", YK_ERR_CONFIG },
    { "non-hex key", "aes_key ",
      "aes_key 000102030405060708090a0b0c0d0e0g", YK_ERR_HEX },
    { "short key", "aes_key ", "aes_key 000102030405060708090a0b0c0d0e",
      YK_ERR_HEX },
    { "long key", "aes_key ",
      "aes_key 000102030405060708090a0b0c0d0e0f10", YK_ERR_HEX },
    { "empty key", "aes_key ", "aes_key", YK_ERR_HEX },
    { "key with trailing space", "aes_key ",
      "aes_key 000102030405060708090a0b0c0d0e0f ", YK_ERR_HEX },
    { "short private id", "private_id ", "private_id 0102030405",
      YK_ERR_HEX },
    { "non-hex private id", "private_id ", "private_id 01020304050z",
      YK_ERR_HEX },
    { "non-modhex public id", "public_id ", "public_id vvccccccccca",
      YK_ERR_MODHEX },
    { "odd public id", "public_id ", "public_id vvc", YK_ERR_MODHEX },
    { "public id of 17 bytes", "public_id ",
      "public_id cccccccccccccccccccccccccccccccccc", YK_ERR_MODHEX },
};

static const variant accepted[] = {
    { "as saved", NULL, NULL, 0 },
    { "extra comment", NULL, "# a comment", 0 },
    { "blank line", NULL, "", 0 },
    { "empty public id", "public_id ", "public_id", 0 },
    { "empty public id, space", "public_id ", "public_id ", 0 },
    { "upper-case hex", "aes_key ",
      "aes_key 000102030405060708090A0B0C0D0E0F", 0 },
    { "leading zeros", "usage ", "usage 00005", 0 },
    { "public id of 16 bytes", "public_id ",
      "public_id vvcccccccccccccccccccccccccccccc", 0 },
};

/* Build the base file with variant v applied into buf; return its length
 * (the last line has no newline when nonl is set). */
static size_t
build_variant(const variant *v, char *buf, size_t size, int nonl)
{
    size_t i, len = 0;
    const char *line;
    int n;

    for (i = 0; i <= N_BASE; i++) {
        if (i < N_BASE) {
            line = base_lines[i];
            if (v->key != NULL && strncmp(line, v->key, strlen(v->key)) == 0)
                line = v->repl;
        } else {
            line = (v->key == NULL) ? v->repl : NULL;
        }
        if (line == NULL)
            continue;
        n = snprintf(buf + len, size - len, "%s\n", line);
        ck_assert(n > 0 && (size_t)n < size - len);
        len += (size_t)n;
    }
    if (nonl && len > 0)
        len--;
    return len;
}

/* Each malformed variant is refused with its own error and leaves the
 * output untouched. */
START_TEST(test_load_malformed)
{
    const variant *v = &malformed[_i];
    tmpdir t;
    yk_emu emu, keep;
    krb5_error_code ret;
    char buf[1024];
    size_t len;

    tmpdir_make(&t);
    len = build_variant(v, buf, sizeof(buf), 0);
    write_state(&t, buf, len);
    memset(&keep, 0xa5, sizeof(keep));
    emu = keep;
    ret = yk_emu_load(t.path, &emu);
    ck_assert_msg(ret == v->expect, "%s: got %s, expected %s", v->name,
                  yk_strerror(ret), yk_strerror(v->expect));
    ck_assert_msg(memcmp(&emu, &keep, sizeof(emu)) == 0,
                  "%s: output changed", v->name);
    tmpdir_remove(&t);
}
END_TEST

/* Comments, blank lines, missing final newline and other legal forms. */
START_TEST(test_load_accepted)
{
    const variant *v = &accepted[_i];
    tmpdir t;
    yk_emu emu;
    krb5_error_code ret;
    char buf[1024];
    size_t len;
    int nonl;

    tmpdir_make(&t);
    for (nonl = 0; nonl <= 1; nonl++) {
        len = build_variant(v, buf, sizeof(buf), nonl);
        write_state(&t, buf, len);
        ret = yk_emu_load(t.path, &emu);
        ck_assert_msg(ret == 0, "%s (nonl %d): %s", v->name, nonl,
                      yk_strerror(ret));
        ck_assert_uint_eq(emu.aes_key[15], 0x0f);
        ck_assert_uint_eq(emu.private_id[5], 0x06);
        ck_assert_uint_le(emu.pubid_len, YK_PUBID_MAX);
        ck_assert_uint_eq(emu.timestamp, 1000);
        ck_assert_int_eq(emu.last, 1700000000);
    }
    if (_i == 0) {
        ck_assert_uint_eq(emu.pubid_len, 6);
        ck_assert_uint_eq(emu.pubid[0], 0xff);
        ck_assert_uint_eq(emu.usage, 5);
        ck_assert_uint_eq(emu.session, 3);
        ck_assert_int_eq(emu.fresh, 0);
    }
    yk_emu_clear(&emu);
    tmpdir_remove(&t);
}
END_TEST

/* Odd files: empty, a NUL byte inside, too large, a directory. */
START_TEST(test_load_odd_files)
{
    static const variant as_saved = { "as saved", NULL, NULL, 0 };
    tmpdir t;
    yk_emu emu;
    char buf[5000];
    size_t len;

    tmpdir_make(&t);
    write_state(&t, "", 0);
    ck_assert_int_eq(yk_emu_load(t.path, &emu), YK_ERR_CONFIG);

    len = build_variant(&as_saved, buf, sizeof(buf), 0);
    buf[strlen(STATE_HEADER) + 5] = '\0';
    write_state(&t, buf, len);
    ck_assert_int_eq(yk_emu_load(t.path, &emu), YK_ERR_CONFIG);

    len = build_variant(&as_saved, buf, sizeof(buf), 0);
    memset(buf + len, '#', sizeof(buf) - len);
    buf[sizeof(buf) - 1] = '\n';
    write_state(&t, buf, sizeof(buf));
    ck_assert_int_eq(yk_emu_load(t.path, &emu), EFBIG);

    ck_assert_int_eq(yk_emu_load(t.dir, &emu), EISDIR);
    ck_assert_int_eq(yk_emu_load(NULL, &emu), EINVAL);
    ck_assert_int_eq(yk_emu_load(t.path, NULL), EINVAL);
    tmpdir_remove(&t);
}
END_TEST

/* The emulator's suite. */
static Suite *
emu_suite(void)
{
    Suite *s = suite_create("emu");
    TCase *tc = tcase_create("core");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_roundtrip_all_lengths);
    tcase_add_test(tc, test_within_session);
    tcase_add_test(tc, test_replug);
    tcase_add_test(tc, test_session_wrap);
    tcase_add_test(tc, test_exhaustion);
    tcase_add_test(tc, test_timestamp);
    tcase_add_test(tc, test_init_args);
    tcase_add_test(tc, test_save_load);
    tcase_add_test(tc, test_save_errors);
    tcase_add_loop_test(tc, test_load_malformed, 0,
                        (int)(sizeof(malformed) / sizeof(malformed[0])));
    tcase_add_loop_test(tc, test_load_accepted, 0,
                        (int)(sizeof(accepted) / sizeof(accepted[0])));
    tcase_add_test(tc, test_load_odd_files);
    suite_add_tcase(s, tc);
    return s;
}

/* Run the suite; check prints its summary line. */
int
main(void)
{
    SRunner *sr = srunner_create(emu_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
