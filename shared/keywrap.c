/* SPDX-License-Identifier: MIT */
/* keywrap.c: the master keyring file and AES-256-GCM wrapping of secrets. */

/*
 * Keyring file (text, secret, mode 0600, at most YK_KEYRING_MAX_FILE bytes,
 * read whole; lines end with LF, the last one may lack it):
 *
 *     # krb5-yubikey master keyring: secret. Copy to every KDC (owned by
 *     the KDC's user, mode 0600) and keep an offline copy.
 *     yk-keyring 1
 *     key <version> <64 lower-case hex digits: the AES-256 key>
 *     ...
 *
 * (the comment is one line in the file, folded here).  Lines starting
 * with '#' and empty lines (or lines of spaces and tabs only) are ignored
 * anywhere.  "yk-keyring 1" must be the first other line.  Each key line
 * is exactly "key", one space, the version, one space, the key: the
 * version is decimal 1..4294967295 without leading zeros, unique in the
 * file; at most YK_KEYRING_MAX_KEYS keys.  Anything else (a NUL byte, a
 * CR, a tab separator, upper-case hex, a larger file...) refuses the
 * whole file with YK_ERR_KEYRING_FORMAT, which names nothing secret; the
 * header without a key is YK_ERR_KEYRING_EMPTY.  Loading refuses a file
 * on which group or others hold any permission (YK_ERR_KEYRING_PERMS) and
 * a file owned by anyone but the reading process's effective uid or root
 * (YK_ERR_KEYRING_OWNER: its owner could replace the keys), both checked
 * with fstat on the opened descriptor.  The highest version wraps, every version
 * unwraps.
 *
 * Wrapped record (one string, stored in LDAP; strict and canonical, so the
 * same secret record always has exactly one spelling):
 *
 *     yk1:<kvno>:<pubid>:<iv>:<ct>:<principal>
 *
 * kvno      the keyring version, decimal 1..4294967295, no leading zeros;
 * pubid     the token's public id, lower-case modhex, even length, 0..32
 *           characters (may be empty);
 * iv        the 12-byte GCM nonce (random per record), 24 lower-case hex;
 * ct        AES-256-GCM ciphertext of aes_key (16) || private_id (6),
 *           followed by the 16-byte tag: 38 bytes, 76 lower-case hex;
 * principal everything after the fifth colon (may hold colons and spaces):
 *           non-empty, at most 1024 bytes, no control character.
 *
 * The GCM associated data is the exact string "yk1:<kvno>:<pubid>:"
 * followed by the principal, so a record moved to another entry or token,
 * or relabelled with another key version, fails the tag.  Unwrapping
 * checks, in order: the syntax (YK_ERR_WRAP_FORMAT), the principal and
 * public id against the requested ones (YK_ERR_WRAP_BINDING, before any
 * decryption), the key version (YK_ERR_WRAP_KVNO), the tag
 * (YK_ERR_WRAP_INTEGRITY).
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gcrypt.h>

#include "errors.h"
#include "keywrap.h"
#include "otp.h"
#include "secfile.h"
#include "secmem.h"

#define KR_COMMENT "# krb5-yubikey master keyring: secret. Copy to every " \
    "KDC (owned by the KDC's user, mode 0600) and keep an offline copy."
#define KR_MAGIC "yk-keyring 1"
#define KR_KEY_PREFIX "key "
#define KR_KEY_HEX_LEN (2 * YK_MASTER_KEY_LEN)
#define KR_KEY_LINE_MAX (sizeof(KR_KEY_PREFIX) + DEC_DIGITS_MAX + 1 + \
                         KR_KEY_HEX_LEN + 1)

#define DEC_DIGITS_MAX 10           /* 4294967295 */

#define WRAP_PREFIX "yk1:"
#define WRAP_PREFIX_LEN (sizeof(WRAP_PREFIX) - 1)
#define WRAP_IV_LEN 12
#define WRAP_IV_HEX_LEN (2 * WRAP_IV_LEN)
#define WRAP_TAG_LEN 16
#define WRAP_PT_LEN (YK_AES_KEY_LEN + YK_PRIVID_LEN)
#define WRAP_CT_LEN (WRAP_PT_LEN + WRAP_TAG_LEN)
#define WRAP_CT_HEX_LEN (2 * WRAP_CT_LEN)
#define WRAP_PRINCIPAL_MAX 1024
#define WRAP_AAD_MAX (WRAP_PREFIX_LEN + DEC_DIGITS_MAX + 1 + \
                      YK_PUBID_MODHEX_MAX + 1 + WRAP_PRINCIPAL_MAX)
#define WRAP_RECORD_MAX (WRAP_AAD_MAX + WRAP_IV_HEX_LEN + 1 + \
                         WRAP_CT_HEX_LEN + 1)

/* Keys and versions in one fixed block, page-aligned so that mlock and
 * munlock touch no one else's memory. */
struct yk_keyring {
    size_t count;
    uint32_t versions[YK_KEYRING_MAX_KEYS];
    unsigned char keys[YK_KEYRING_MAX_KEYS][YK_MASTER_KEY_LEN];
    size_t alloc_size;
    int locked;
};

/* A record's fields; pubid and principal point into the record string. */
typedef struct {
    uint32_t kvno;
    const char *pubid;
    size_t pubid_len;
    const char *principal;
    size_t principal_len;
    unsigned char iv[WRAP_IV_LEN];
    unsigned char ct[WRAP_CT_LEN];      /* ciphertext, then the tag */
} wrap_fields;

/* Parse n decimal digits at s (1..4294967295, no sign, no leading zero)
 * into *out; bad is returned when the text is not such a number. */
static krb5_error_code
decimal_parse(const char *s, size_t n, krb5_error_code bad, uint32_t *out)
{
    uint64_t v = 0;
    size_t i;

    if (n == 0 || n > DEC_DIGITS_MAX || s[0] == '0')
        return bad;
    for (i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return bad;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > UINT32_MAX)
        return bad;
    *out = (uint32_t)v;
    return 0;
}

/* True when the n characters at s are all lower-case hex digits. */
static int
is_lower_hex(const char *s, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    }
    return 1;
}

/* True when the n characters at s are a canonical public id: even length,
 * at most YK_PUBID_MODHEX_MAX, lower-case modhex (decoding and
 * re-encoding gives the same text). */
static int
pubid_is_canonical(const char *s, size_t n)
{
    unsigned char raw[YK_PUBID_MAX];
    char enc[YK_PUBID_MODHEX_MAX + 1];
    size_t rawlen = 0;

    if (n == 0)
        return 1;
    if (n % 2 != 0 || n > YK_PUBID_MODHEX_MAX)
        return 0;
    if (yk_modhex_decode(s, n, raw, sizeof(raw), &rawlen) != 0 ||
        rawlen * 2 != n)
        return 0;
    yk_modhex_encode(raw, rawlen, enc);
    return memcmp(enc, s, n) == 0;
}

/* True when the n bytes at s are a principal a record may carry:
 * non-empty, at most WRAP_PRINCIPAL_MAX bytes, no control character. */
static int
principal_is_valid(const char *s, size_t n)
{
    size_t i;
    unsigned char c;

    if (n == 0 || n > WRAP_PRINCIPAL_MAX)
        return 0;
    for (i = 0; i < n; i++) {
        c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            return 0;
    }
    return 1;
}

/* Index of version in kr, or -1 when the ring does not hold it. */
static long
keyring_find(const yk_keyring *kr, uint32_t version)
{
    size_t i;

    for (i = 0; i < kr->count; i++) {
        if (kr->versions[i] == version)
            return (long)i;
    }
    return -1;
}

/* Index of the highest version in a non-empty ring. */
static size_t
keyring_newest_index(const yk_keyring *kr)
{
    size_t i, best = 0;

    for (i = 1; i < kr->count; i++) {
        if (kr->versions[i] > kr->versions[best])
            best = i;
    }
    return best;
}

/* A new, empty keyring in its own locked (when possible) pages, kept out
 * of core dumps where the system allows it. */
krb5_error_code
yk_keyring_new(yk_keyring **kr_out)
{
    yk_keyring *kr = NULL;
    long page;
    size_t size;
    void *mem = NULL;

    if (kr_out == NULL)
        return EINVAL;
    page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        page = 4096;
    size = (sizeof(*kr) + (size_t)page - 1) / (size_t)page * (size_t)page;
    if (posix_memalign(&mem, (size_t)page, size) != 0)
        return ENOMEM;
    memset(mem, 0, size);
    kr = mem;
    kr->alloc_size = size;
    /* A failing mlock (RLIMIT_MEMLOCK) is not an error: the keys are
     * still wiped on free. */
    kr->locked = yk_mem_lock(kr, size);
    *kr_out = kr;
    return 0;
}

/* Wipe every key, unlock and free the ring; NULL is accepted. */
void
yk_keyring_free(yk_keyring *kr)
{
    size_t size;
    int locked;

    if (kr == NULL)
        return;
    size = kr->alloc_size;
    locked = kr->locked;
    yk_zap(kr, size);
    yk_mem_unlock(kr, size, locked);
    free(kr);
}

/* The highest version in kr; 0 for an empty ring or NULL. */
uint32_t
yk_keyring_newest(const yk_keyring *kr)
{
    if (kr == NULL || kr->count == 0)
        return 0;
    return kr->versions[keyring_newest_index(kr)];
}

/* The number of keys in kr; 0 for NULL. */
size_t
yk_keyring_count(const yk_keyring *kr)
{
    return (kr == NULL) ? 0 : kr->count;
}

/* Parse one keyring line of n bytes (no LF) into kr; *seen_header tracks
 * whether the "yk-keyring 1" line has been read. */
static krb5_error_code
keyring_parse_line(yk_keyring *kr, const char *line, size_t n,
                   int *seen_header)
{
    const char *num, *sp, *hex;
    size_t i, numlen;
    uint32_t version = 0;
    krb5_error_code ret;

    if (n > 0 && line[0] == '#')
        return 0;
    for (i = 0; i < n && (line[i] == ' ' || line[i] == '\t'); i++)
        ;
    if (i == n)
        return 0;

    if (!*seen_header) {
        if (n != sizeof(KR_MAGIC) - 1 || memcmp(line, KR_MAGIC, n) != 0)
            return YK_ERR_KEYRING_FORMAT;
        *seen_header = 1;
        return 0;
    }

    /* "key <version> <hex>", single spaces, nothing else. */
    if (n < sizeof(KR_KEY_PREFIX) - 1 ||
        memcmp(line, KR_KEY_PREFIX, sizeof(KR_KEY_PREFIX) - 1) != 0)
        return YK_ERR_KEYRING_FORMAT;
    num = line + sizeof(KR_KEY_PREFIX) - 1;
    sp = memchr(num, ' ', n - (size_t)(num - line));
    if (sp == NULL)
        return YK_ERR_KEYRING_FORMAT;
    numlen = (size_t)(sp - num);
    ret = decimal_parse(num, numlen, YK_ERR_KEYRING_FORMAT, &version);
    if (ret)
        return ret;
    hex = sp + 1;
    if (n - (size_t)(hex - line) != KR_KEY_HEX_LEN ||
        !is_lower_hex(hex, KR_KEY_HEX_LEN))
        return YK_ERR_KEYRING_FORMAT;
    if (keyring_find(kr, version) >= 0 || kr->count >= YK_KEYRING_MAX_KEYS)
        return YK_ERR_KEYRING_FORMAT;

    /* Decode straight into the ring: no other copy of the key. */
    if (yk_hex_decode(hex, KR_KEY_HEX_LEN, kr->keys[kr->count],
                      YK_MASTER_KEY_LEN) != 0) {
        yk_zap(kr->keys[kr->count], YK_MASTER_KEY_LEN);
        return YK_ERR_KEYRING_FORMAT;
    }
    kr->versions[kr->count] = version;
    kr->count++;
    return 0;
}

/* Parse len bytes of keyring text (see the top of this file) into a new
 * ring; buf is only read, the caller wipes it.  *kr_out is set only on
 * success; on failure every key parsed so far is wiped. */
krb5_error_code
yk_keyring_parse(const char *buf, size_t len, yk_keyring **kr_out)
{
    yk_keyring *kr = NULL;
    const char *p, *end, *nl;
    size_t n;
    int seen_header = 0;
    krb5_error_code ret;

    if (kr_out == NULL || (buf == NULL && len > 0))
        return EINVAL;
    if (len == 0 || len > YK_KEYRING_MAX_FILE ||
        memchr(buf, '\0', len) != NULL)
        return YK_ERR_KEYRING_FORMAT;

    ret = yk_keyring_new(&kr);
    if (ret)
        goto cleanup;
    p = buf;
    end = buf + len;
    while (p < end) {
        nl = memchr(p, '\n', (size_t)(end - p));
        n = (size_t)((nl != NULL ? nl : end) - p);
        ret = keyring_parse_line(kr, p, n, &seen_header);
        if (ret)
            goto cleanup;
        p += n + (nl != NULL ? 1 : 0);
    }
    if (!seen_header) {
        ret = YK_ERR_KEYRING_FORMAT;
        goto cleanup;
    }
    if (kr->count == 0) {
        ret = YK_ERR_KEYRING_EMPTY;
        goto cleanup;
    }
    *kr_out = kr;
    kr = NULL;

cleanup:
    yk_keyring_free(kr);
    return ret;
}

/* Whether mode (st_mode bits) gives group or others no permission at
 * all: 1 or 0. */
int
yk_keyring_mode_ok(unsigned int mode)
{
    return (mode & (S_IRWXG | S_IRWXO)) == 0;
}

/* Whether a keyring owned by owner may be loaded by a process whose
 * effective uid is reader, or by root on behalf of the user also (the
 * KDC's, for ykadmin; (uid_t)-1 for none): owned by reader, by root, or
 * by also when reader is root.  1 or 0. */
int
yk_keyring_owner_ok(uid_t owner, uid_t reader, uid_t also)
{
    if (owner == reader || owner == 0)
        return 1;
    return reader == 0 && also != (uid_t)-1 && owner == also;
}

/* Read the keyring file at path whole and parse it (see keywrap.h).  Mode
 * and owner are checked on the opened descriptor (no race with a chmod or
 * a swapped path); the read buffer is wiped on every path.  *kr_out is
 * set only on success. */
krb5_error_code
yk_keyring_load(const char *path, yk_keyring **kr_out)
{
    return yk_keyring_load_for(path, (uid_t)-1, kr_out);
}

/* yk_keyring_load, also accepting a file owned by also when the process
 * runs as root (see keywrap.h). */
krb5_error_code
yk_keyring_load_for(const char *path, uid_t also, yk_keyring **kr_out)
{
    yk_keyring *kr = NULL;
    struct stat st;
    char *buf = NULL;
    size_t len = 0;
    krb5_error_code ret;

    if (path == NULL || kr_out == NULL)
        return EINVAL;
    memset(&st, 0, sizeof(st));
    /* secfile.c: no FIFO hangs us, the size is bounded, the bytes live
     * in locked memory and are wiped. */
    ret = yk_secfile_read(path, YK_KEYRING_MAX_FILE, &buf, &len, &st);
    if (ret == EINVAL) {
        ret = YK_ERR_KEYRING_FORMAT;        /* not a regular file */
        goto cleanup;
    }
    if (ret != 0 && ret != EFBIG && ret != EAGAIN)
        goto cleanup;                       /* it did not open */
    /* Opened: its mode and owner come first, on the descriptor read. */
    if (!yk_keyring_mode_ok((unsigned int)st.st_mode)) {
        ret = YK_ERR_KEYRING_PERMS;
        goto cleanup;
    }
    if (!yk_keyring_owner_ok(st.st_uid, geteuid(), also)) {
        ret = YK_ERR_KEYRING_OWNER;
        goto cleanup;
    }
    if (ret) {
        ret = YK_ERR_KEYRING_FORMAT;        /* too large, or changing */
        goto cleanup;
    }
    ret = yk_keyring_parse(buf, len, &kr);
    if (ret)
        goto cleanup;
    *kr_out = kr;
    kr = NULL;

cleanup:
    yk_secfile_free(buf, len);
    yk_keyring_free(kr);
    return ret;
}

/* Add a fresh random key (libgcrypt's very strong pool) with version
 * newest + 1.  ENOSPC when the ring holds YK_KEYRING_MAX_KEYS keys,
 * EOVERFLOW when the newest version is already 4294967295.  version_out
 * may be NULL. */
krb5_error_code
yk_keyring_add_key(yk_keyring *kr, uint32_t *version_out)
{
    uint32_t version;
    krb5_error_code ret;

    if (kr == NULL)
        return EINVAL;
    if (kr->count >= YK_KEYRING_MAX_KEYS)
        return ENOSPC;
    version = yk_keyring_newest(kr);
    if (version == UINT32_MAX)
        return EOVERFLOW;
    version++;
    ret = yk_crypto_init();
    if (ret)
        return ret;
    gcry_randomize(kr->keys[kr->count], YK_MASTER_KEY_LEN,
                   GCRY_VERY_STRONG_RANDOM);
    kr->versions[kr->count] = version;
    kr->count++;
    if (version_out != NULL)
        *version_out = version;
    return 0;
}

/* Render kr as keyring text into buf (size bytes); its length in
 * *len_out.  The caller wipes buf. */
static krb5_error_code
keyring_format(const yk_keyring *kr, char *buf, size_t size, size_t *len_out)
{
    size_t i, len;
    int n;

    n = snprintf(buf, size, "%s\n%s\n", KR_COMMENT, KR_MAGIC);
    if (n < 0 || (size_t)n >= size)
        return ENOSPC;
    len = (size_t)n;
    for (i = 0; i < kr->count; i++) {
        if (size - len < KR_KEY_LINE_MAX + 1)
            return ENOSPC;
        n = snprintf(buf + len, size - len, "%s%lu ", KR_KEY_PREFIX,
                     (unsigned long)kr->versions[i]);
        if (n < 0)
            return ENOSPC;
        len += (size_t)n;
        yk_hex_encode(kr->keys[i], YK_MASTER_KEY_LEN, buf + len);
        len += KR_KEY_HEX_LEN;
        buf[len++] = '\n';
    }
    *len_out = len;
    return 0;
}

/* Write len bytes to fd, retrying short writes and EINTR. */
static krb5_error_code
write_all(int fd, const char *p, size_t len)
{
    ssize_t n;

    while (len > 0) {
        n = write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Flush the directory holding path, so that a rename survives a crash.
 * Best effort: some file systems refuse fsync on directories. */
static void
sync_parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = NULL;
    size_t n;
    int fd;

    if (slash == NULL) {
        dir = strdup(".");
    } else {
        n = (slash == path) ? 1 : (size_t)(slash - path);
        dir = strndup(path, n);
    }
    if (dir == NULL)
        return;
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        (void)close(fd);
    }
    free(dir);
}

/* Write kr to path: a temporary file in the same directory (O_EXCL, mode
 * 0600), fsync, then rename over path, or, with exclusive set, link() to
 * path, which fails with EEXIST instead of replacing an existing file.
 * An empty ring is refused with YK_ERR_KEYRING_EMPTY. */
krb5_error_code
yk_keyring_write(const yk_keyring *kr, const char *path, int exclusive)
{
    char text[YK_KEYRING_MAX_FILE];
    char *tmp = NULL;
    size_t len = 0, pathlen;
    int fd = -1, created = 0;
    krb5_error_code ret;

    if (kr == NULL || path == NULL || *path == '\0')
        return EINVAL;
    if (kr->count == 0)
        return YK_ERR_KEYRING_EMPTY;
    ret = keyring_format(kr, text, sizeof(text), &len);
    if (ret)
        goto cleanup;

    pathlen = strlen(path);
    tmp = malloc(pathlen + sizeof(".XXXXXX"));
    if (tmp == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    memcpy(tmp, path, pathlen);
    memcpy(tmp + pathlen, ".XXXXXX", sizeof(".XXXXXX"));
    /* mkstemp opens with O_CREAT | O_EXCL and mode 0600. */
    fd = mkstemp(tmp);
    if (fd < 0) {
        ret = errno;
        goto cleanup;
    }
    created = 1;
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (fchmod(fd, S_IRUSR | S_IWUSR) != 0) {
        ret = errno;
        goto cleanup;
    }
    ret = write_all(fd, text, len);
    if (ret)
        goto cleanup;
    if (fsync(fd) != 0) {
        ret = errno;
        goto cleanup;
    }
    ret = close(fd) != 0 ? errno : 0;
    fd = -1;
    if (ret)
        goto cleanup;

    if (exclusive) {
        /* link() never replaces: an existing keyring stays untouched. */
        if (link(tmp, path) != 0) {
            ret = errno;
            goto cleanup;
        }
    } else {
        if (rename(tmp, path) != 0) {
            ret = errno;
            goto cleanup;
        }
        created = 0;
    }
    sync_parent_dir(path);

cleanup:
    yk_zap(text, sizeof(text));
    if (fd >= 0)
        (void)close(fd);
    if (created)
        (void)unlink(tmp);
    free(tmp);
    return ret;
}

/* Build the associated data "yk1:<kvno>:<pubid>:<principal>" into aad
 * (WRAP_AAD_MAX + 1 bytes); its length in *len_out. */
static krb5_error_code
aad_build(uint32_t kvno, const char *pubid, size_t pubid_len,
          const char *principal, size_t principal_len, char *aad,
          size_t *len_out)
{
    int n;

    n = snprintf(aad, WRAP_AAD_MAX + 1, "%s%lu:%.*s:%.*s", WRAP_PREFIX,
                 (unsigned long)kvno, (int)pubid_len, pubid,
                 (int)principal_len, principal);
    if (n < 0 || (size_t)n > WRAP_AAD_MAX)
        return YK_ERR_WRAP_FORMAT;
    *len_out = (size_t)n;
    return 0;
}

/* Parse record strictly (see the top of this file) into *f; pubid and
 * principal in f point into record.  YK_ERR_WRAP_FORMAT when malformed. */
static krb5_error_code
wrap_parse(const char *record, wrap_fields *f)
{
    const char *p, *end, *colon;
    size_t len;
    krb5_error_code ret;

    if (record == NULL)
        return YK_ERR_WRAP_FORMAT;
    len = strnlen(record, WRAP_RECORD_MAX + 1);
    if (len > WRAP_RECORD_MAX || len < WRAP_PREFIX_LEN ||
        memcmp(record, WRAP_PREFIX, WRAP_PREFIX_LEN) != 0)
        return YK_ERR_WRAP_FORMAT;
    p = record + WRAP_PREFIX_LEN;
    end = record + len;

    colon = memchr(p, ':', (size_t)(end - p));
    if (colon == NULL)
        return YK_ERR_WRAP_FORMAT;
    ret = decimal_parse(p, (size_t)(colon - p), YK_ERR_WRAP_FORMAT,
                        &f->kvno);
    if (ret)
        return ret;
    p = colon + 1;

    colon = memchr(p, ':', (size_t)(end - p));
    if (colon == NULL || !pubid_is_canonical(p, (size_t)(colon - p)))
        return YK_ERR_WRAP_FORMAT;
    f->pubid = p;
    f->pubid_len = (size_t)(colon - p);
    p = colon + 1;

    if ((size_t)(end - p) <= WRAP_IV_HEX_LEN || p[WRAP_IV_HEX_LEN] != ':' ||
        !is_lower_hex(p, WRAP_IV_HEX_LEN) ||
        yk_hex_decode(p, WRAP_IV_HEX_LEN, f->iv, WRAP_IV_LEN) != 0)
        return YK_ERR_WRAP_FORMAT;
    p += WRAP_IV_HEX_LEN + 1;

    if ((size_t)(end - p) <= WRAP_CT_HEX_LEN || p[WRAP_CT_HEX_LEN] != ':' ||
        !is_lower_hex(p, WRAP_CT_HEX_LEN) ||
        yk_hex_decode(p, WRAP_CT_HEX_LEN, f->ct, WRAP_CT_LEN) != 0)
        return YK_ERR_WRAP_FORMAT;
    p += WRAP_CT_HEX_LEN + 1;

    if (!principal_is_valid(p, (size_t)(end - p)))
        return YK_ERR_WRAP_FORMAT;
    f->principal = p;
    f->principal_len = (size_t)(end - p);
    return 0;
}

/* Map a libgcrypt error to ours: a failed tag is YK_ERR_WRAP_INTEGRITY,
 * anything else YK_ERR_CRYPTO. */
static krb5_error_code
gcry_to_krb5(gcry_error_t err)
{
    if (err == 0)
        return 0;
    if (gcry_err_code(err) == GPG_ERR_CHECKSUM)
        return YK_ERR_WRAP_INTEGRITY;
    return YK_ERR_CRYPTO;
}

/* AES-256-GCM: encrypt (encrypt set) pt into ct and append the tag, or
 * decrypt ct into pt and check the tag.  On any failure pt is wiped. */
static krb5_error_code
gcm_run(int encrypt, const unsigned char key[YK_MASTER_KEY_LEN],
        const unsigned char iv[WRAP_IV_LEN], const char *aad, size_t aadlen,
        unsigned char pt[WRAP_PT_LEN], unsigned char ct[WRAP_CT_LEN])
{
    gcry_cipher_hd_t h = NULL;
    gcry_error_t err;
    krb5_error_code ret;

    err = gcry_cipher_open(&h, GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_GCM, 0);
    if (err) {
        h = NULL;
        goto cleanup;
    }
    err = gcry_cipher_setkey(h, key, YK_MASTER_KEY_LEN);
    if (!err)
        err = gcry_cipher_setiv(h, iv, WRAP_IV_LEN);
    if (!err)
        err = gcry_cipher_authenticate(h, aad, aadlen);
    if (err)
        goto cleanup;
    if (encrypt) {
        err = gcry_cipher_encrypt(h, ct, WRAP_PT_LEN, pt, WRAP_PT_LEN);
        if (!err)
            err = gcry_cipher_gettag(h, ct + WRAP_PT_LEN, WRAP_TAG_LEN);
    } else {
        err = gcry_cipher_decrypt(h, pt, WRAP_PT_LEN, ct, WRAP_PT_LEN);
        if (!err)
            err = gcry_cipher_checktag(h, ct + WRAP_PT_LEN, WRAP_TAG_LEN);
    }

cleanup:
    ret = gcry_to_krb5(err);
    if (ret && !encrypt)
        yk_zap(pt, WRAP_PT_LEN);
    if (h != NULL)
        gcry_cipher_close(h);   /* libgcrypt wipes the key schedule */
    return ret;
}

/* Wrap secret for (principal, pubid_modhex) under the newest key of kr
 * into a malloc'd record (caller frees).  EINVAL when the principal or
 * public id cannot appear in a record; YK_ERR_KEYRING_EMPTY for an empty
 * ring.  *record_out is set only on success. */
krb5_error_code
yk_keywrap_wrap(const yk_keyring *kr, const char *principal,
                const char *pubid_modhex, const yk_token_secret *secret,
                char **record_out)
{
    unsigned char pt[WRAP_PT_LEN];
    unsigned char iv[WRAP_IV_LEN];
    unsigned char ct[WRAP_CT_LEN];
    char iv_hex[WRAP_IV_HEX_LEN + 1];
    char ct_hex[WRAP_CT_HEX_LEN + 1];
    char aad[WRAP_AAD_MAX + 1];
    char *record = NULL;
    size_t idx, aadlen = 0, plen, idlen;
    uint32_t kvno;
    krb5_error_code ret;

    if (kr == NULL || principal == NULL || pubid_modhex == NULL ||
        secret == NULL || record_out == NULL)
        return EINVAL;
    plen = strnlen(principal, WRAP_PRINCIPAL_MAX + 1);
    idlen = strnlen(pubid_modhex, YK_PUBID_MODHEX_MAX + 1);
    if (!principal_is_valid(principal, plen) ||
        !pubid_is_canonical(pubid_modhex, idlen))
        return EINVAL;
    if (kr->count == 0)
        return YK_ERR_KEYRING_EMPTY;
    ret = yk_crypto_init();
    if (ret)
        return ret;

    idx = keyring_newest_index(kr);
    kvno = kr->versions[idx];
    ret = aad_build(kvno, pubid_modhex, idlen, principal, plen, aad,
                    &aadlen);
    if (ret)
        goto cleanup;
    gcry_randomize(iv, WRAP_IV_LEN, GCRY_STRONG_RANDOM);
    memcpy(pt, secret->aes_key, YK_AES_KEY_LEN);
    memcpy(pt + YK_AES_KEY_LEN, secret->private_id, YK_PRIVID_LEN);
    ret = gcm_run(1, kr->keys[idx], iv, aad, aadlen, pt, ct);
    if (ret)
        goto cleanup;

    yk_hex_encode(iv, WRAP_IV_LEN, iv_hex);
    yk_hex_encode(ct, WRAP_CT_LEN, ct_hex);
    /* The record is the associated data with iv and ct spliced in. */
    record = malloc(WRAP_RECORD_MAX + 1);
    if (record == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    (void)snprintf(record, WRAP_RECORD_MAX + 1, "%s%lu:%s:%s:%s:%s",
                   WRAP_PREFIX, (unsigned long)kvno, pubid_modhex, iv_hex,
                   ct_hex, principal);
    *record_out = record;
    record = NULL;

cleanup:
    yk_zap(pt, sizeof(pt));
    free(record);
    return ret;
}

/* Unwrap record for (principal, pubid_modhex) with kr: syntax, binding,
 * key version, then the tag (see the top of this file).  The plaintext is
 * wiped on every path; *secret_out is written only on success. */
krb5_error_code
yk_keywrap_unwrap(const yk_keyring *kr, const char *record,
                  const char *principal, const char *pubid_modhex,
                  yk_token_secret *secret_out)
{
    wrap_fields f;
    unsigned char pt[WRAP_PT_LEN];
    char aad[WRAP_AAD_MAX + 1];
    size_t aadlen = 0;
    long idx;
    krb5_error_code ret;

    memset(pt, 0, sizeof(pt));
    if (kr == NULL || principal == NULL || pubid_modhex == NULL ||
        secret_out == NULL)
        return EINVAL;
    ret = wrap_parse(record, &f);
    if (ret)
        goto cleanup;

    /* The names in clear first: a record copied to another entry is
     * refused by name, without touching a key. */
    if (strlen(principal) != f.principal_len ||
        memcmp(principal, f.principal, f.principal_len) != 0 ||
        strlen(pubid_modhex) != f.pubid_len ||
        memcmp(pubid_modhex, f.pubid, f.pubid_len) != 0) {
        ret = YK_ERR_WRAP_BINDING;
        goto cleanup;
    }
    idx = keyring_find(kr, f.kvno);
    if (idx < 0) {
        ret = YK_ERR_WRAP_KVNO;
        goto cleanup;
    }

    ret = yk_crypto_init();
    if (ret)
        goto cleanup;
    ret = aad_build(f.kvno, f.pubid, f.pubid_len, f.principal,
                    f.principal_len, aad, &aadlen);
    if (ret)
        goto cleanup;
    ret = gcm_run(0, kr->keys[idx], f.iv, aad, aadlen, pt, f.ct);
    if (ret)
        goto cleanup;
    memcpy(secret_out->aes_key, pt, YK_AES_KEY_LEN);
    memcpy(secret_out->private_id, pt + YK_AES_KEY_LEN, YK_PRIVID_LEN);

cleanup:
    yk_zap(pt, sizeof(pt));
    return ret;
}

/* The key version record names, after a full syntax check; no key is
 * needed.  *kvno_out is set only on success. */
krb5_error_code
yk_keywrap_record_kvno(const char *record, uint32_t *kvno_out)
{
    wrap_fields f;
    krb5_error_code ret;

    if (kvno_out == NULL)
        return EINVAL;
    ret = wrap_parse(record, &f);
    if (ret)
        return ret;
    *kvno_out = f.kvno;
    return 0;
}
