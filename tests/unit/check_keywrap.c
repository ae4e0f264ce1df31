/* SPDX-License-Identifier: MIT */
/* check_keywrap.c: unit tests for the master keyring and secret wrapping. */

#include <config.h>

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errors.h"
#include "keywrap.h"

/* Two fixed master keys (hex), so tests can build rings as text. */
#define KEY_A "000102030405060708090a0b0c0d0e0f" \
              "101112131415161718191a1b1c1d1e1f"
#define KEY_B "f0e1d2c3b4a5968778695a4b3c2d1e0f" \
              "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
#define HDR "yk-keyring 1\n"
#define ALICE "alice@EXAMPLE.COM"
#define PUBID "cccccccccccb"

static char tmpdir[64];

/* Remove everything inside the temporary directory. */
static void
empty_tmpdir(void)
{
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    char p[512];

    if (d == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof(p), "%s/%s", tmpdir, e->d_name);
        if (unlink(p) != 0)
            rmdir(p);
    }
    closedir(d);
}

/* Unchecked fixture (runs in the parent, so also after a failed test): a
 * private temporary directory per test case. */
static void
setup_tmpdir(void)
{
    strcpy(tmpdir, "/tmp/check_keywrap.XXXXXX");
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        exit(EXIT_FAILURE);
    }
}

/* Unchecked fixture: remove the temporary directory and its contents. */
static void
teardown_tmpdir(void)
{
    empty_tmpdir();
    rmdir(tmpdir);
}

/* The path of name inside the temporary directory (static buffer). */
static const char *
tmppath(const char *name)
{
    static char p[512];

    snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
    return p;
}

/* How many entries the temporary directory holds (no temp leftovers). */
static int
tmpdir_entries(void)
{
    DIR *d = opendir(tmpdir);
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

/* Read a whole small file into a malloc'd NUL-terminated string. */
static char *
slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = calloc(1, 16384);
    size_t n;

    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(buf);
    n = fread(buf, 1, 16383, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Write text to path with the given mode. */
static void
spit(const char *path, const char *text, size_t len, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
    ck_assert_int_eq(fchmod(fd, mode), 0);
    close(fd);
}

/* Parse text that must be a good keyring. */
static yk_keyring *
ring_from_text(const char *text)
{
    yk_keyring *kr = NULL;

    ck_assert_int_eq(yk_keyring_parse(text, strlen(text), &kr), 0);
    ck_assert_ptr_nonnull(kr);
    return kr;
}

/* A recognisable token secret. */
static void
sample_secret(yk_token_secret *s, unsigned char seed)
{
    size_t i;

    for (i = 0; i < sizeof(s->aes_key); i++)
        s->aes_key[i] = (unsigned char)(seed + i);
    for (i = 0; i < sizeof(s->private_id); i++)
        s->private_id[i] = (unsigned char)(0xa0 + seed + i);
}

/* Wrap a sample secret that must succeed. */
static char *
wrap_ok(const yk_keyring *kr, const char *principal, const char *pubid)
{
    yk_token_secret s;
    char *rec = NULL;

    sample_secret(&s, 1);
    ck_assert_int_eq(yk_keywrap_wrap(kr, principal, pubid, &s, &rec), 0);
    ck_assert_ptr_nonnull(rec);
    return rec;
}

/* Unwrap expecting code; on failure the output must stay untouched, on
 * success it must hold the sample secret. */
static void
unwrap_expect(const yk_keyring *kr, const char *rec, const char *principal,
              const char *pubid, krb5_error_code code)
{
    yk_token_secret out, want;

    memset(&out, 0x5a, sizeof(out));
    ck_assert_int_eq(yk_keywrap_unwrap(kr, rec, principal, pubid, &out),
                     code);
    if (code == 0) {
        sample_secret(&want, 1);
    } else {
        memset(&want, 0x5a, sizeof(want));
    }
    ck_assert_mem_eq(&out, &want, sizeof(out));
}

/* --- keyring text ------------------------------------------------------ */

START_TEST(test_parse_good)
{
    const char *text =
        "# a comment\n"
        "\n"
        HDR
        "# versions need not be in order\n"
        "key 2 " KEY_B "\n"
        "   \t\n"
        "key 7 " KEY_A "\n"
        "#key 9 " KEY_A "\n"
        "key 4294967295 " KEY_A "\n"
        "key 3 " KEY_A;         /* no final newline */
    yk_keyring *kr = ring_from_text(text);
    char *rec;
    uint32_t kvno = 0;

    ck_assert_uint_eq(yk_keyring_count(kr), 4);
    ck_assert_uint_eq(yk_keyring_newest(kr), 4294967295u);
    rec = wrap_ok(kr, ALICE, PUBID);
    ck_assert_int_eq(yk_keywrap_record_kvno(rec, &kvno), 0);
    ck_assert_uint_eq(kvno, 4294967295u);
    ck_assert(strncmp(rec, "yk1:4294967295:" PUBID ":", 28) == 0);
    free(rec);
    yk_keyring_free(kr);

    /* The smallest good file. */
    kr = ring_from_text(HDR "key 1 " KEY_A "\n");
    ck_assert_uint_eq(yk_keyring_count(kr), 1);
    ck_assert_uint_eq(yk_keyring_newest(kr), 1);
    yk_keyring_free(kr);
}
END_TEST

START_TEST(test_new_add_free)
{
    yk_keyring *kr = NULL;
    uint32_t v = 0;

    ck_assert_int_eq(yk_keyring_new(&kr), 0);
    ck_assert_uint_eq(yk_keyring_count(kr), 0);
    ck_assert_uint_eq(yk_keyring_newest(kr), 0);
    ck_assert_int_eq(yk_keyring_add_key(kr, &v), 0);
    ck_assert_uint_eq(v, 1);
    ck_assert_int_eq(yk_keyring_add_key(kr, &v), 0);
    ck_assert_uint_eq(v, 2);
    ck_assert_uint_eq(yk_keyring_count(kr), 2);
    ck_assert_uint_eq(yk_keyring_newest(kr), 2);
    yk_keyring_free(kr);
    yk_keyring_free(NULL);
    ck_assert_uint_eq(yk_keyring_count(NULL), 0);
    ck_assert_uint_eq(yk_keyring_newest(NULL), 0);

    /* add_key continues after the newest, wherever it sits. */
    kr = ring_from_text(HDR "key 9 " KEY_A "\nkey 4 " KEY_B "\n");
    ck_assert_int_eq(yk_keyring_add_key(kr, &v), 0);
    ck_assert_uint_eq(v, 10);
    yk_keyring_free(kr);
}
END_TEST

START_TEST(test_add_key_limits)
{
    yk_keyring *kr = NULL;
    uint32_t v = 77;
    char *text = malloc(8192);
    size_t len = 0, i;

    kr = ring_from_text(HDR "key 4294967295 " KEY_A "\n");
    ck_assert_int_eq(yk_keyring_add_key(kr, &v), EOVERFLOW);
    ck_assert_uint_eq(v, 77);
    ck_assert_uint_eq(yk_keyring_count(kr), 1);
    yk_keyring_free(kr);

    ck_assert_ptr_nonnull(text);
    len = (size_t)sprintf(text, HDR);
    for (i = 1; i <= YK_KEYRING_MAX_KEYS; i++)
        len += (size_t)sprintf(text + len, "key %zu " KEY_A "\n", i);
    ck_assert_int_eq(yk_keyring_parse(text, len, &kr), 0);
    ck_assert_uint_eq(yk_keyring_count(kr), YK_KEYRING_MAX_KEYS);
    ck_assert_int_eq(yk_keyring_add_key(kr, &v), ENOSPC);
    ck_assert_uint_eq(yk_keyring_count(kr), YK_KEYRING_MAX_KEYS);
    yk_keyring_free(kr);
    free(text);
}
END_TEST

START_TEST(test_empty_ring)
{
    yk_keyring *kr = NULL;
    yk_token_secret s;
    char *rec = NULL;

    sample_secret(&s, 1);
    ck_assert_int_eq(yk_keyring_new(&kr), 0);
    ck_assert_int_eq(yk_keywrap_wrap(kr, ALICE, PUBID, &s, &rec),
                     YK_ERR_KEYRING_EMPTY);
    ck_assert_ptr_null(rec);
    ck_assert_int_eq(yk_keyring_write(kr, tmppath("k"), 1),
                     YK_ERR_KEYRING_EMPTY);
    ck_assert_int_eq(tmpdir_entries(), 0);
    yk_keyring_free(kr);
}
END_TEST

/* Each malformed keyring text and its error. */
static const struct {
    const char *name;
    const char *text;
    size_t len;                 /* 0: strlen(text) */
    krb5_error_code code;
} bad_rings[] = {
    { "bad header", "yk-keyring 2\nkey 1 " KEY_A "\n", 0,
      YK_ERR_KEYRING_FORMAT },
    { "header case", "YK-KEYRING 1\nkey 1 " KEY_A "\n", 0,
      YK_ERR_KEYRING_FORMAT },
    { "header space", "yk-keyring 1 \nkey 1 " KEY_A "\n", 0,
      YK_ERR_KEYRING_FORMAT },
    { "no header", "# c\nkey 1 " KEY_A "\n", 0, YK_ERR_KEYRING_FORMAT },
    { "header after key", "key 1 " KEY_A "\n" HDR, 0,
      YK_ERR_KEYRING_FORMAT },
    { "second header", HDR "key 1 " KEY_A "\n" HDR, 0,
      YK_ERR_KEYRING_FORMAT },
    { "empty file", "", 0, YK_ERR_KEYRING_FORMAT },
    { "comments only", "# nothing\n\n", 0, YK_ERR_KEYRING_FORMAT },
    { "header only", "# c\n" HDR "# no key\n", 0, YK_ERR_KEYRING_EMPTY },
    { "duplicate version", HDR "key 1 " KEY_A "\nkey 1 " KEY_B "\n", 0,
      YK_ERR_KEYRING_FORMAT },
    { "short key", HDR "key 1 " "0001020304050607080910111213141516171819"
      "2021222324252627282930" "\n", 0, YK_ERR_KEYRING_FORMAT },
    { "long key", HDR "key 1 " KEY_A "00\n", 0, YK_ERR_KEYRING_FORMAT },
    { "non-hex key", HDR "key 1 " "g00102030405060708090a0b0c0d0e0f"
      "101112131415161718191a1b1c1d1e1f\n", 0, YK_ERR_KEYRING_FORMAT },
    { "upper-case key", HDR "key 1 " "000102030405060708090A0B0C0D0E0F"
      "101112131415161718191a1b1c1d1e1f\n", 0, YK_ERR_KEYRING_FORMAT },
    { "no key", HDR "key 1\n", 0, YK_ERR_KEYRING_FORMAT },
    { "empty key", HDR "key 1 \n", 0, YK_ERR_KEYRING_FORMAT },
    { "leading zero version", HDR "key 01 " KEY_A "\n", 0,
      YK_ERR_KEYRING_FORMAT },
    { "version zero", HDR "key 0 " KEY_A "\n", 0, YK_ERR_KEYRING_FORMAT },
    { "version too large", HDR "key 4294967296 " KEY_A "\n", 0,
      YK_ERR_KEYRING_FORMAT },
    { "negative version", HDR "key -1 " KEY_A "\n", 0,
      YK_ERR_KEYRING_FORMAT },
    { "plus version", HDR "key +1 " KEY_A "\n", 0, YK_ERR_KEYRING_FORMAT },
    { "no version", HDR "key  " KEY_A "\n", 0, YK_ERR_KEYRING_FORMAT },
    { "double space", HDR "key 1  " KEY_A "\n", 0, YK_ERR_KEYRING_FORMAT },
    { "tab separator", HDR "key\t1 " KEY_A "\n", 0, YK_ERR_KEYRING_FORMAT },
    { "leading space", HDR " key 1 " KEY_A "\n", 0, YK_ERR_KEYRING_FORMAT },
    { "CRLF", HDR "key 1 " KEY_A "\r\n", 0, YK_ERR_KEYRING_FORMAT },
    { "trailing field", HDR "key 1 " KEY_A " x\n", 0,
      YK_ERR_KEYRING_FORMAT },
    { "unknown keyword", HDR "kee 1 " KEY_A "\n", 0,
      YK_ERR_KEYRING_FORMAT },
    { "NUL byte", HDR "key 1 " KEY_A "\n\0# x\n",
      sizeof(HDR "key 1 " KEY_A "\n\0# x\n") - 1, YK_ERR_KEYRING_FORMAT },
};

START_TEST(test_parse_bad)
{
    yk_keyring *kr = NULL;
    size_t len = bad_rings[_i].len ? bad_rings[_i].len :
        strlen(bad_rings[_i].text);
    krb5_error_code ret;

    ret = yk_keyring_parse(bad_rings[_i].text, len, &kr);
    ck_assert_msg(ret == bad_rings[_i].code, "%s: got %d, want %d",
                  bad_rings[_i].name, (int)ret, (int)bad_rings[_i].code);
    ck_assert_ptr_null(kr);
}
END_TEST

/* Build a good keyring text of exactly len bytes (comment padding). */
static char *
ring_text_of_size(size_t len)
{
    const char *base = HDR "key 1 " KEY_A "\n";
    size_t blen = strlen(base);
    char *t = malloc(len + 1);

    ck_assert_ptr_nonnull(t);
    ck_assert_uint_ge(len, blen + 2);
    memcpy(t, base, blen);
    t[blen] = '#';
    memset(t + blen + 1, 'x', len - blen - 2);
    t[len - 1] = '\n';
    t[len] = '\0';
    return t;
}

START_TEST(test_parse_size_limit)
{
    yk_keyring *kr = NULL;
    char *t = ring_text_of_size(YK_KEYRING_MAX_FILE);

    ck_assert_int_eq(yk_keyring_parse(t, YK_KEYRING_MAX_FILE, &kr), 0);
    yk_keyring_free(kr);
    kr = NULL;
    free(t);
    t = ring_text_of_size(YK_KEYRING_MAX_FILE + 1);
    ck_assert_int_eq(yk_keyring_parse(t, YK_KEYRING_MAX_FILE + 1, &kr),
                     YK_ERR_KEYRING_FORMAT);
    ck_assert_ptr_null(kr);

    /* The same on disk. */
    spit(tmppath("big"), t, strlen(t), 0600);
    ck_assert_int_eq(yk_keyring_load(tmppath("big"), &kr),
                     YK_ERR_KEYRING_FORMAT);
    ck_assert_ptr_null(kr);
    free(t);
}
END_TEST

START_TEST(test_parse_too_many_keys)
{
    yk_keyring *kr = NULL;
    char *text = malloc(8192);
    size_t len, i;

    ck_assert_ptr_nonnull(text);
    /* 65 short lines fit in the file limit: the key count refuses it. */
    len = (size_t)sprintf(text, HDR);
    for (i = 1; i <= YK_KEYRING_MAX_KEYS + 1; i++)
        len += (size_t)sprintf(text + len, "key %zu " KEY_A "\n", i);
    ck_assert_uint_le(len, YK_KEYRING_MAX_FILE);
    ck_assert_int_eq(yk_keyring_parse(text, len, &kr),
                     YK_ERR_KEYRING_FORMAT);
    ck_assert_ptr_null(kr);
    free(text);
}
END_TEST

/* --- keyring files ------------------------------------------------------ */

START_TEST(test_write_load_roundtrip)
{
    static const char head[] =
        "# krb5-yubikey master keyring: secret. Copy to every KDC (owned "
        "by the KDC's user, mode 0600) and keep an offline copy.\n"
        "yk-keyring 1\nkey 1 ";
    yk_keyring *kr = NULL, *back = NULL;
    struct stat st;
    char *text, *rec;
    uint32_t v;

    ck_assert_int_eq(yk_keyring_new(&kr), 0);
    ck_assert_int_eq(yk_keyring_add_key(kr, &v), 0);
    ck_assert_int_eq(yk_keyring_add_key(kr, &v), 0);
    ck_assert_int_eq(yk_keyring_write(kr, tmppath("keyring"), 1), 0);

    ck_assert_int_eq(stat(tmppath("keyring"), &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0600);
    ck_assert(S_ISREG(st.st_mode));
    ck_assert_int_eq(tmpdir_entries(), 1);      /* no temp file left */

    text = slurp(tmppath("keyring"));
    ck_assert(strncmp(text, head, strlen(head)) == 0);
    ck_assert_ptr_nonnull(strstr(text, "\nkey 2 "));
    free(text);

    ck_assert_int_eq(yk_keyring_load(tmppath("keyring"), &back), 0);
    ck_assert_uint_eq(yk_keyring_count(back), 2);
    ck_assert_uint_eq(yk_keyring_newest(back), 2);

    /* Same key bytes: each ring unwraps what the other wrapped. */
    rec = wrap_ok(kr, ALICE, PUBID);
    unwrap_expect(back, rec, ALICE, PUBID, 0);
    free(rec);
    rec = wrap_ok(back, ALICE, PUBID);
    unwrap_expect(kr, rec, ALICE, PUBID, 0);
    free(rec);
    yk_keyring_free(back);
    yk_keyring_free(kr);
}
END_TEST

START_TEST(test_write_replaces)
{
    yk_keyring *kr = NULL, *back = NULL;
    struct stat st;

    spit(tmppath("keyring"), "old junk\n", 9, 0644);
    kr = ring_from_text(HDR "key 5 " KEY_A "\n");
    ck_assert_int_eq(yk_keyring_write(kr, tmppath("keyring"), 0), 0);
    ck_assert_int_eq(stat(tmppath("keyring"), &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0600);
    ck_assert_int_eq(tmpdir_entries(), 1);
    ck_assert_int_eq(yk_keyring_load(tmppath("keyring"), &back), 0);
    ck_assert_uint_eq(yk_keyring_newest(back), 5);
    yk_keyring_free(back);
    yk_keyring_free(kr);
}
END_TEST

START_TEST(test_write_exclusive_refused)
{
    yk_keyring *kr = NULL, *other = NULL, *back = NULL;
    char *before, *after;

    kr = ring_from_text(HDR "key 1 " KEY_A "\n");
    other = ring_from_text(HDR "key 1 " KEY_B "\nkey 2 " KEY_A "\n");
    ck_assert_int_eq(yk_keyring_write(kr, tmppath("keyring"), 1), 0);
    before = slurp(tmppath("keyring"));

    ck_assert_int_eq(yk_keyring_write(other, tmppath("keyring"), 1), EEXIST);
    after = slurp(tmppath("keyring"));
    ck_assert_str_eq(before, after);
    ck_assert_int_eq(tmpdir_entries(), 1);
    ck_assert_int_eq(yk_keyring_load(tmppath("keyring"), &back), 0);
    ck_assert_uint_eq(yk_keyring_count(back), 1);
    yk_keyring_free(back);

    /* Any existing file counts, even an empty one. */
    spit(tmppath("empty"), "", 0, 0600);
    ck_assert_int_eq(yk_keyring_write(kr, tmppath("empty"), 1), EEXIST);
    ck_assert_int_eq(tmpdir_entries(), 2);

    free(before);
    free(after);
    yk_keyring_free(other);
    yk_keyring_free(kr);
}
END_TEST

START_TEST(test_load_perms)
{
    static const mode_t bad[] = { 0640, 0604, 0620, 0602, 0610, 0601, 0660,
                                  0644, 0666 };
    const char *text = HDR "key 1 " KEY_A "\n";
    yk_keyring *kr = NULL;
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        spit(tmppath("keyring"), text, strlen(text), bad[i]);
        ck_assert_msg(yk_keyring_load(tmppath("keyring"), &kr) ==
                      YK_ERR_KEYRING_PERMS, "mode %o accepted",
                      (unsigned)bad[i]);
        ck_assert_ptr_null(kr);
    }
    /* The same file at 0600 (and 0400) loads. */
    ck_assert_int_eq(chmod(tmppath("keyring"), 0600), 0);
    ck_assert_int_eq(yk_keyring_load(tmppath("keyring"), &kr), 0);
    yk_keyring_free(kr);
    kr = NULL;
    ck_assert_int_eq(chmod(tmppath("keyring"), 0400), 0);
    ck_assert_int_eq(yk_keyring_load(tmppath("keyring"), &kr), 0);
    yk_keyring_free(kr);
}
END_TEST

/* The owner rule on plain inputs: the reader's own file or root's; root
 * also the user it names (the KDC's, for ykadmin). */
START_TEST(test_owner_rule)
{
    ck_assert_int_eq(yk_keyring_owner_ok(1000, 1000, (uid_t)-1), 1);
    ck_assert_int_eq(yk_keyring_owner_ok(0, 1000, (uid_t)-1), 1);
    ck_assert_int_eq(yk_keyring_owner_ok(0, 0, (uid_t)-1), 1);
    ck_assert_int_eq(yk_keyring_owner_ok(1001, 1000, (uid_t)-1), 0);
    ck_assert_int_eq(yk_keyring_owner_ok(1000, 0, (uid_t)-1), 0);
    /* also counts for root only, and only the user it names. */
    ck_assert_int_eq(yk_keyring_owner_ok(1000, 0, 1000), 1);
    ck_assert_int_eq(yk_keyring_owner_ok(1001, 0, 1000), 0);
    ck_assert_int_eq(yk_keyring_owner_ok(1000, 1001, 1000), 0);
    ck_assert_int_eq(yk_keyring_mode_ok(S_IFREG | 0600), 1);
    ck_assert_int_eq(yk_keyring_mode_ok(S_IFREG | 0400), 1);
    ck_assert_int_eq(yk_keyring_mode_ok(S_IFREG | 0604), 0);
    ck_assert_int_eq(yk_keyring_mode_ok(S_IFREG | 0610), 0);
}
END_TEST

/* A real file given to another user: refused with YK_ERR_KEYRING_OWNER (mode 0600 does
 * not help), accepted again once it is the reader's; root also accepts
 * the user named by yk_keyring_load_for.  Needs root to chown. */
START_TEST(test_load_owner)
{
    const char *text = HDR "key 1 " KEY_A "\n";
    const uid_t other = 54321;   /* a uid no test machine gives anyone */
    yk_keyring *kr = NULL;

    if (geteuid() != 0) {
        fprintf(stderr, "check_keywrap: SKIP test_load_owner: not root, "
                "cannot give a file to another user (the rule itself is "
                "tested by test_owner_rule)\n");
        return;
    }
    spit(tmppath("keyring"), text, strlen(text), 0600);
    ck_assert_int_eq(chown(tmppath("keyring"), other, 0), 0);
    ck_assert_int_eq(yk_keyring_load(tmppath("keyring"), &kr), YK_ERR_KEYRING_OWNER);
    ck_assert_ptr_null(kr);
    ck_assert_int_eq(yk_keyring_load_for(tmppath("keyring"), other + 1,
                                         &kr), YK_ERR_KEYRING_OWNER);
    ck_assert_ptr_null(kr);
    /* The mode is judged first: a file wrong in both says the mode. */
    ck_assert_int_eq(chmod(tmppath("keyring"), 0640), 0);
    ck_assert_int_eq(yk_keyring_load(tmppath("keyring"), &kr),
                     YK_ERR_KEYRING_PERMS);
    ck_assert_int_eq(chmod(tmppath("keyring"), 0600), 0);
    /* root loading on behalf of the file's owner (the KDC's user). */
    ck_assert_int_eq(yk_keyring_load_for(tmppath("keyring"), other, &kr),
                     0);
    ck_assert_uint_eq(yk_keyring_count(kr), 1);
    yk_keyring_free(kr);
    kr = NULL;
    /* Given back to root: loads. */
    ck_assert_int_eq(chown(tmppath("keyring"), 0, 0), 0);
    ck_assert_int_eq(yk_keyring_load(tmppath("keyring"), &kr), 0);
    yk_keyring_free(kr);
}
END_TEST

START_TEST(test_load_errors)
{
    yk_keyring *kr = NULL;
    const char *bad = "yk-keyring 1\nkey 1 nothex\n";

    ck_assert_int_eq(yk_keyring_load(tmppath("missing"), &kr), ENOENT);
    ck_assert_ptr_null(kr);
    ck_assert_int_eq(mkdir(tmppath("dir"), 0700), 0);
    ck_assert_int_eq(yk_keyring_load(tmppath("dir"), &kr),
                     YK_ERR_KEYRING_FORMAT);
    ck_assert_ptr_null(kr);
    rmdir(tmppath("dir"));
    spit(tmppath("bad"), bad, strlen(bad), 0600);
    ck_assert_int_eq(yk_keyring_load(tmppath("bad"), &kr),
                     YK_ERR_KEYRING_FORMAT);
    ck_assert_ptr_null(kr);
    spit(tmppath("hdr"), HDR, strlen(HDR), 0600);
    ck_assert_int_eq(yk_keyring_load(tmppath("hdr"), &kr),
                     YK_ERR_KEYRING_EMPTY);
    ck_assert_ptr_null(kr);
}
END_TEST

/* --- wrapping ----------------------------------------------------------- */

START_TEST(test_wrap_roundtrip)
{
    static const struct { const char *principal, *pubid; } cases[] = {
        { ALICE, PUBID },
        { "host/web.example.com:8080 odd name@EXAMPLE.COM", "" },
        { "bob@EXAMPLE.COM", "cbdefghijklnrtuvcbdefghijklnrtuv" },
        { "\xc3\xa9lo\xc3\xafse@EXAMPLE.COM", "vv" },
    };
    yk_keyring *kr = ring_from_text(HDR "key 1 " KEY_A "\n");
    char *rec, *rec2, want[128];
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        rec = wrap_ok(kr, cases[i].principal, cases[i].pubid);
        snprintf(want, sizeof(want), "yk1:1:%s:", cases[i].pubid);
        ck_assert(strncmp(rec, want, strlen(want)) == 0);
        ck_assert_uint_eq(strlen(rec), strlen(want) + 24 + 1 + 76 + 1 +
                          strlen(cases[i].principal));
        ck_assert_str_eq(rec + strlen(rec) - strlen(cases[i].principal),
                         cases[i].principal);
        unwrap_expect(kr, rec, cases[i].principal, cases[i].pubid, 0);

        /* A fresh IV each time: the same input never wraps the same. */
        rec2 = wrap_ok(kr, cases[i].principal, cases[i].pubid);
        ck_assert_str_ne(rec, rec2);
        ck_assert(strncmp(rec + strlen(want), rec2 + strlen(want), 24) != 0);
        unwrap_expect(kr, rec2, cases[i].principal, cases[i].pubid, 0);
        free(rec);
        free(rec2);
    }
    yk_keyring_free(kr);
}
END_TEST

START_TEST(test_wrap_principal_limit)
{
    yk_keyring *kr = ring_from_text(HDR "key 1 " KEY_A "\n");
    yk_token_secret s;
    char big[1026], *rec = NULL;

    sample_secret(&s, 1);
    memset(big, 'p', 1024);
    big[1024] = '\0';
    rec = wrap_ok(kr, big, PUBID);
    unwrap_expect(kr, rec, big, PUBID, 0);
    free(rec);
    rec = NULL;
    big[1024] = 'p';
    big[1025] = '\0';
    ck_assert_int_eq(yk_keywrap_wrap(kr, big, PUBID, &s, &rec), EINVAL);
    ck_assert_ptr_null(rec);
    yk_keyring_free(kr);
}
END_TEST

START_TEST(test_wrap_bad_args)
{
    static const struct { const char *principal, *pubid; } bad[] = {
        { "", PUBID },
        { "alice\n@EXAMPLE.COM", PUBID },
        { "alice\x7f", PUBID },
        { ALICE, "CCCCCCCCCCCB" },
        { ALICE, "ccccccccccc" },
        { ALICE, "aaaaaaaaaaaa" },
        { ALICE, "cccccccccccccccccccccccccccccccccc" },
        { ALICE, "cccc:ccc" },
    };
    yk_keyring *kr = ring_from_text(HDR "key 1 " KEY_A "\n");
    yk_token_secret s;
    char *rec = NULL;
    size_t i;

    sample_secret(&s, 1);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_int_eq(yk_keywrap_wrap(kr, bad[i].principal, bad[i].pubid,
                                         &s, &rec), EINVAL);
        ck_assert_ptr_null(rec);
    }
    yk_keyring_free(kr);
}
END_TEST

/* Drop the "key 1 " line from a keyring file's text, in place. */
static void
drop_key1(char *text)
{
    char *l = strstr(text, "\nkey 1 "), *nl;

    ck_assert_ptr_nonnull(l);
    nl = strchr(l + 1, '\n');
    ck_assert_ptr_nonnull(nl);
    memmove(l, nl, strlen(nl) + 1);
}

START_TEST(test_rotation)
{
    yk_keyring *kr = ring_from_text(HDR "key 1 " KEY_A "\n");
    yk_keyring *only2 = NULL;
    char *rec1, *rec2, *text;
    uint32_t v = 0, kvno = 0;

    rec1 = wrap_ok(kr, ALICE, PUBID);
    ck_assert_int_eq(yk_keywrap_record_kvno(rec1, &kvno), 0);
    ck_assert_uint_eq(kvno, 1);

    ck_assert_int_eq(yk_keyring_add_key(kr, &v), 0);
    ck_assert_uint_eq(v, 2);
    rec2 = wrap_ok(kr, ALICE, PUBID);
    ck_assert_int_eq(yk_keywrap_record_kvno(rec2, &kvno), 0);
    ck_assert_uint_eq(kvno, 2);
    ck_assert(strncmp(rec2, "yk1:2:" PUBID ":", 19) == 0);
    unwrap_expect(kr, rec1, ALICE, PUBID, 0);
    unwrap_expect(kr, rec2, ALICE, PUBID, 0);

    /* Retire version 1: the keyring file without its line. */
    ck_assert_int_eq(yk_keyring_write(kr, tmppath("keyring"), 1), 0);
    text = slurp(tmppath("keyring"));
    drop_key1(text);
    only2 = ring_from_text(text);
    ck_assert_uint_eq(yk_keyring_count(only2), 1);
    ck_assert_uint_eq(yk_keyring_newest(only2), 2);
    unwrap_expect(only2, rec1, ALICE, PUBID, YK_ERR_WRAP_KVNO);
    unwrap_expect(only2, rec2, ALICE, PUBID, 0);

    free(text);
    free(rec1);
    free(rec2);
    yk_keyring_free(only2);
    yk_keyring_free(kr);
}
END_TEST

/* Replace the part of rec after its n-th colon up to the next one (or the
 * end, for the principal) with repl; returns a new string. */
static char *
replace_field(const char *rec, int n, const char *repl)
{
    const char *start = rec, *stop;
    char *out;
    int i;

    for (i = 0; i < n; i++) {
        start = strchr(start, ':');
        ck_assert_ptr_nonnull(start);
        start++;
    }
    stop = (n == 5) ? start + strlen(start) : strchr(start, ':');
    ck_assert_ptr_nonnull(stop);
    out = malloc(strlen(rec) + strlen(repl) + 1);
    ck_assert_ptr_nonnull(out);
    memcpy(out, rec, (size_t)(start - rec));
    strcpy(out + (start - rec), repl);
    strcat(out, stop);
    return out;
}

START_TEST(test_binding)
{
    yk_keyring *kr = ring_from_text(HDR "key 1 " KEY_A "\nkey 2 " KEY_A
                                    "\n");
    yk_keyring *kr3 = ring_from_text(HDR "key 3 " KEY_A "\n");
    char *rec = NULL, *moved = NULL;

    /* Wrapped under version 1 (a ring holding only 1, same key bytes). */
    {
        yk_keyring *kr1 = ring_from_text(HDR "key 1 " KEY_A "\n");
        rec = wrap_ok(kr1, ALICE, PUBID);
        yk_keyring_free(kr1);
    }
    unwrap_expect(kr, rec, ALICE, PUBID, 0);

    /* Asked for another principal or token: refused by name. */
    unwrap_expect(kr, rec, "bob@EXAMPLE.COM", PUBID, YK_ERR_WRAP_BINDING);
    unwrap_expect(kr, rec, "alice@EXAMPLE.CO", PUBID, YK_ERR_WRAP_BINDING);
    unwrap_expect(kr, rec, ALICE "x", PUBID, YK_ERR_WRAP_BINDING);
    unwrap_expect(kr, rec, ALICE, "cccccccccccd", YK_ERR_WRAP_BINDING);
    unwrap_expect(kr, rec, ALICE, "", YK_ERR_WRAP_BINDING);
    unwrap_expect(kr, rec, ALICE, PUBID "cc", YK_ERR_WRAP_BINDING);
    /* The binding is checked before the key version is looked up. */
    unwrap_expect(kr3, rec, "bob@EXAMPLE.COM", PUBID, YK_ERR_WRAP_BINDING);
    unwrap_expect(kr3, rec, ALICE, PUBID, YK_ERR_WRAP_KVNO);

    /* A record relabelled for bob: names match, the tag does not. */
    moved = replace_field(rec, 5, "bob@EXAMPLE.COM");
    unwrap_expect(kr, moved, "bob@EXAMPLE.COM", PUBID,
                  YK_ERR_WRAP_INTEGRITY);
    free(moved);
    moved = replace_field(rec, 2, "cccccccccccd");
    unwrap_expect(kr, moved, ALICE, "cccccccccccd", YK_ERR_WRAP_INTEGRITY);
    free(moved);
    /* Relabelled key version: version 2 holds the same key bytes, so only
     * the associated data can catch it. */
    moved = replace_field(rec, 1, "2");
    unwrap_expect(kr, moved, ALICE, PUBID, YK_ERR_WRAP_INTEGRITY);
    free(moved);

    free(rec);
    yk_keyring_free(kr3);
    yk_keyring_free(kr);
}
END_TEST

START_TEST(test_tamper)
{
    yk_keyring *kr = ring_from_text(HDR "key 1 " KEY_A "\n");
    char *rec = wrap_ok(kr, ALICE, PUBID);
    char *field = strchr(strchr(strchr(rec, ':') + 1, ':') + 1, ':') + 1;
    size_t i;
    char saved;
    int flips = 0;

    /* Every hex digit of iv, ciphertext and tag (the colon between iv and
     * ciphertext excepted). */
    for (i = 0; i < 24 + 1 + 76; i++) {
        if (i == 24) {
            ck_assert_int_eq(field[i], ':');
            continue;
        }
        saved = field[i];
        field[i] = (saved == '0') ? 'f' : '0';
        unwrap_expect(kr, rec, ALICE, PUBID, YK_ERR_WRAP_INTEGRITY);
        field[i] = saved;
        flips++;
    }
    ck_assert_int_eq(flips, 100);
    unwrap_expect(kr, rec, ALICE, PUBID, 0);
    free(rec);
    yk_keyring_free(kr);
}
END_TEST

START_TEST(test_wrong_master_key)
{
    yk_keyring *kr = ring_from_text(HDR "key 1 " KEY_A "\n");
    yk_keyring *wrong = ring_from_text(HDR "key 1 " KEY_B "\n");
    char *rec = wrap_ok(kr, ALICE, PUBID);

    unwrap_expect(wrong, rec, ALICE, PUBID, YK_ERR_WRAP_INTEGRITY);
    unwrap_expect(kr, rec, ALICE, PUBID, 0);
    free(rec);
    yk_keyring_free(wrong);
    yk_keyring_free(kr);
}
END_TEST

/*
 * Malformed records, built from a good one by a template: %K kvno, %P
 * public id, %I iv, %C ciphertext+tag, %N principal; %U iv with an
 * upper-case digit, %V ct with an upper-case digit, %S iv two digits
 * short, %T ct two digits short, %G ct with a 'g', %Q public id upper
 * case, %L a 1025-byte principal.
 */
static const struct {
    const char *name;
    const char *tmpl;
} bad_records[] = {
    { "control (good)", "yk1:%K:%P:%I:%C:%N" },     /* must succeed */
    { "missing iv", "yk1:%K:%P:%C:%N" },
    { "missing principal field", "yk1:%K:%P:%I:%C" },
    { "missing kvno", "yk1:%P:%I:%C:%N" },
    { "missing prefix", "%K:%P:%I:%C:%N" },
    { "empty", "" },
    { "prefix only", "yk1:" },
    { "wrong version tag", "yk2:%K:%P:%I:%C:%N" },
    { "upper-case tag", "YK1:%K:%P:%I:%C:%N" },
    { "upper-case iv hex", "yk1:%K:%P:%U:%C:%N" },
    { "upper-case ct hex", "yk1:%K:%P:%I:%V:%N" },
    { "upper-case pubid", "yk1:%K:%Q:%I:%C:%N" },
    { "non-modhex pubid", "yk1:%K:abcdef:%I:%C:%N" },
    { "odd pubid", "yk1:%K:ccc:%I:%C:%N" },
    { "long pubid", "yk1:%K:cccccccccccccccccccccccccccccccccc:%I:%C:%N" },
    { "leading zero kvno", "yk1:0%K:%P:%I:%C:%N" },
    { "zero kvno", "yk1:0:%P:%I:%C:%N" },
    { "kvno too large", "yk1:4294967296:%P:%I:%C:%N" },
    { "signed kvno", "yk1:+%K:%P:%I:%C:%N" },
    { "empty kvno", "yk1::%P:%I:%C:%N" },
    { "short iv", "yk1:%K:%P:%S:%C:%N" },
    { "long iv", "yk1:%K:%P:%I00:%C:%N" },
    { "short ct", "yk1:%K:%P:%I:%T:%N" },
    { "long ct", "yk1:%K:%P:%I:%C00:%N" },
    { "non-hex ct", "yk1:%K:%P:%I:%G:%N" },
    { "empty principal", "yk1:%K:%P:%I:%C:" },
    { "newline in principal", "yk1:%K:%P:%I:%C:%N\n" },
    { "tab in principal", "yk1:%K:%P:%I:%C:al\tice" },
    { "DEL in principal", "yk1:%K:%P:%I:%C:%N\x7f" },
    { "ESC in principal", "yk1:%K:%P:%I:%C:\x1b%N" },
    { "principal too long", "yk1:%K:%P:%I:%C:%L" },
};

/* Expand a bad_records template against the fields of good record rec. */
static char *
expand_record(const char *tmpl, const char *rec)
{
    char kvno[16], pubid[40], iv[32], ct[96];
    const char *principal;
    char *out = malloc(4096), *o;
    const char *t;
    char tmp[128];
    size_t k;

    ck_assert_ptr_nonnull(out);
    ck_assert_int_eq(sscanf(rec, "yk1:%15[0-9]:%39[a-z]:%31[0-9a-f]:"
                            "%95[0-9a-f]:", kvno, pubid, iv, ct), 4);
    principal = rec + 4 + strlen(kvno) + 1 + strlen(pubid) + 1 + 24 + 1 +
        76 + 1;
    o = out;
    for (t = tmpl; *t != '\0'; t++) {
        const char *piece = tmp;

        if (*t != '%') {
            *o++ = *t;
            continue;
        }
        t++;
        switch (*t) {
        case 'K': piece = kvno; break;
        case 'P': piece = pubid; break;
        case 'I': piece = iv; break;
        case 'C': piece = ct; break;
        case 'N': piece = principal; break;
        case 'U': strcpy(tmp, iv); tmp[0] = 'A'; break;
        case 'V': strcpy(tmp, ct); tmp[0] = 'F'; break;
        case 'S': strcpy(tmp, iv); tmp[22] = '\0'; break;
        case 'T': strcpy(tmp, ct); tmp[74] = '\0'; break;
        case 'G': strcpy(tmp, ct); tmp[10] = 'g'; break;
        case 'Q':
            strcpy(tmp, pubid);
            for (k = 0; tmp[k] != '\0'; k++)
                tmp[k] = (char)(tmp[k] - 'a' + 'A');
            break;
        case 'L':
            piece = NULL;
            memset(o, 'p', 1025);
            o += 1025;
            break;
        default:
            ck_abort_msg("bad template %s", tmpl);
        }
        if (piece != NULL) {
            strcpy(o, piece);
            o += strlen(piece);
        }
    }
    *o = '\0';
    return out;
}

START_TEST(test_record_bad)
{
    yk_keyring *kr = ring_from_text(HDR "key 1 " KEY_A "\n");
    char *good = wrap_ok(kr, ALICE, PUBID);
    char *rec = expand_record(bad_records[_i].tmpl, good);
    krb5_error_code want = (_i == 0) ? 0 : YK_ERR_WRAP_FORMAT;
    krb5_error_code got;
    uint32_t kvno = 99;
    yk_token_secret out;

    memset(&out, 0x5a, sizeof(out));
    got = yk_keywrap_unwrap(kr, rec, ALICE, PUBID, &out);
    ck_assert_msg(got == want, "%s: unwrap gave %d, want %d (%s)",
                  bad_records[_i].name, (int)got, (int)want, rec);
    got = yk_keywrap_record_kvno(rec, &kvno);
    ck_assert_msg(got == want, "%s: record_kvno gave %d", bad_records[_i].name,
                  (int)got);
    if (want == 0) {
        ck_assert_uint_eq(kvno, 1);
    } else {
        ck_assert_uint_eq(kvno, 99);
        ck_assert_int_eq(out.aes_key[0], 0x5a);
    }
    free(rec);
    free(good);
    yk_keyring_free(kr);
}
END_TEST

START_TEST(test_record_null)
{
    yk_keyring *kr = ring_from_text(HDR "key 1 " KEY_A "\n");
    yk_token_secret out;
    uint32_t kvno;

    ck_assert_int_eq(yk_keywrap_unwrap(kr, NULL, ALICE, PUBID, &out),
                     YK_ERR_WRAP_FORMAT);
    ck_assert_int_eq(yk_keywrap_record_kvno(NULL, &kvno),
                     YK_ERR_WRAP_FORMAT);
    yk_keyring_free(kr);
}
END_TEST

/* The keywrap suite: keyring text, files, then wrapping. */
static Suite *
keywrap_suite(void)
{
    Suite *s = suite_create("keywrap");
    TCase *tc;

    tc = tcase_create("keyring");
    tcase_add_unchecked_fixture(tc, setup_tmpdir, teardown_tmpdir);
    tcase_add_checked_fixture(tc, empty_tmpdir, NULL);
    tcase_add_test(tc, test_parse_good);
    tcase_add_test(tc, test_new_add_free);
    tcase_add_test(tc, test_add_key_limits);
    tcase_add_test(tc, test_empty_ring);
    tcase_add_loop_test(tc, test_parse_bad, 0,
                        sizeof(bad_rings) / sizeof(bad_rings[0]));
    tcase_add_test(tc, test_parse_size_limit);
    tcase_add_test(tc, test_parse_too_many_keys);
    suite_add_tcase(s, tc);

    tc = tcase_create("files");
    tcase_add_unchecked_fixture(tc, setup_tmpdir, teardown_tmpdir);
    tcase_add_checked_fixture(tc, empty_tmpdir, NULL);
    tcase_add_test(tc, test_write_load_roundtrip);
    tcase_add_test(tc, test_write_replaces);
    tcase_add_test(tc, test_write_exclusive_refused);
    tcase_add_test(tc, test_load_perms);
    tcase_add_test(tc, test_load_errors);
    tcase_add_test(tc, test_owner_rule);
    tcase_add_test(tc, test_load_owner);
    suite_add_tcase(s, tc);

    tc = tcase_create("wrap");
    tcase_add_unchecked_fixture(tc, setup_tmpdir, teardown_tmpdir);
    tcase_add_checked_fixture(tc, empty_tmpdir, NULL);
    tcase_add_test(tc, test_wrap_roundtrip);
    tcase_add_test(tc, test_wrap_principal_limit);
    tcase_add_test(tc, test_wrap_bad_args);
    tcase_add_test(tc, test_rotation);
    tcase_add_test(tc, test_binding);
    tcase_add_test(tc, test_tamper);
    tcase_add_test(tc, test_wrong_master_key);
    tcase_add_loop_test(tc, test_record_bad, 0,
                        sizeof(bad_records) / sizeof(bad_records[0]));
    tcase_add_test(tc, test_record_null);
    suite_add_tcase(s, tc);
    return s;
}

int
main(void)
{
    SRunner *sr = srunner_create(keywrap_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
