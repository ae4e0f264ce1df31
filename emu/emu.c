/* SPDX-License-Identifier: MIT */
/* emu.c: a software YubiKey (Yubico OTP mode) and its state file. */

/*
 * The token counts the way a device does (see shared/notes): at power-up the
 * session counter restarts at 0 and the timestamp at a random value; the
 * first OTP after power-up raises the usage counter, every further OTP the
 * session counter; when the session counter would wrap past 0xff the usage
 * counter rises instead.  The usage counter stops at 0x7fff: then
 * yk_emu_next fails rather than repeat a counter.  The 24-bit timestamp
 * advances by 8 per second of wall-clock time since the last OTP, and by at
 * least 1 per OTP.
 *
 * State file: text, mode 0600, replaced atomically (temp file, fsync,
 * rename).  One "key value" line per field, key and value separated by one
 * space, each key exactly once, in any order; lines starting with '#' and
 * empty lines are skipped:
 *
 *   # ykemu software YubiKey state: holds the token's AES key (...)
 *   aes_key <32 hex>
 *   private_id <12 hex>
 *   public_id <0..32 modhex; the line may end after the key>
 *   usage <decimal 0..32767>
 *   session <decimal 0..255>
 *   timestamp <decimal 0..16777215>
 *   fresh <0|1: the next OTP raises usage and uses session 0>
 *   last <unix time in seconds of the last OTP or power-up>
 *
 * A fresh state has session 0; a state that is not fresh has usage >= 1.
 * Errors: YK_ERR_CONFIG for a malformed line, an unknown, repeated or
 * missing key or inconsistent counters; YK_ERR_HEX and YK_ERR_MODHEX for bad
 * encodings; ERANGE for a number out of range; EFBIG for a huge file.
 */

#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <gcrypt.h>

#include "emu.h"
#include "errors.h"
#include "secmem.h"

#define EMU_TS_MASK 0xffffffu        /* the timestamp has 24 bits */
#define EMU_TS_HZ 8                  /* timestamp ticks per second */
#define EMU_SESSION_MAX 0xff         /* the session counter has 8 bits */
#define EMU_FILE_MAX 4096            /* a state file is about 200 bytes */
#define EMU_TMP_SUFFIX ".XXXXXX"     /* mkstemp template suffix */
#define EMU_HEADER "# ykemu software YubiKey state: holds the token's " \
    "AES key (tests and demos only)"

/* The state file's keys; each has a bit in the "seen" mask. */
enum {
    F_AES_KEY, F_PRIVATE_ID, F_PUBLIC_ID, F_USAGE, F_SESSION, F_TIMESTAMP,
    F_FRESH, F_LAST, F_COUNT
};
static const char *const field_names[F_COUNT] = {
    "aes_key", "private_id", "public_id", "usage", "session", "timestamp",
    "fresh", "last"
};

/* Check that emu's fields are in range and its counters consistent:
 * 0, or EINVAL. */
static krb5_error_code
check_state(const yk_emu *emu)
{
    if (emu->pubid_len > YK_PUBID_MAX || emu->usage > YK_USAGE_MAX ||
        emu->timestamp > EMU_TS_MASK || (emu->fresh != 0 && emu->fresh != 1)
        || emu->last < 0)
        return EINVAL;
    /* After its first OTP a token's usage is >= 1; power-up and a session
     * wrap both restart the session at 0. */
    if ((!emu->fresh && emu->usage == 0) || (emu->fresh && emu->session != 0))
        return EINVAL;
    return 0;
}

/* Simulate power-up on emu: random timestamp start, session 0, and the
 * next OTP raises the usage counter. */
static void
power_up(yk_emu *emu)
{
    unsigned char ts[3];

    (void)yk_crypto_init();
    gcry_randomize(ts, sizeof(ts), GCRY_STRONG_RANDOM);
    emu->timestamp = (uint32_t)ts[0] | (uint32_t)ts[1] << 8 |
        (uint32_t)ts[2] << 16;
    emu->session = 0;
    emu->fresh = 1;
    emu->last = (int64_t)time(NULL);
}

/* Create a new token: random key, private id and timestamp, the given
 * public id (pubid may be NULL when pubid_len is 0).  emu is written only on
 * success. */
krb5_error_code
yk_emu_init(yk_emu *emu, const unsigned char *pubid, size_t pubid_len)
{
    krb5_error_code ret;
    yk_emu e;

    memset(&e, 0, sizeof(e));
    if (emu == NULL || pubid_len > YK_PUBID_MAX ||
        (pubid == NULL && pubid_len > 0))
        return EINVAL;
    ret = yk_crypto_init();
    if (ret)
        goto cleanup;

    gcry_randomize(e.aes_key, sizeof(e.aes_key), GCRY_STRONG_RANDOM);
    gcry_randomize(e.private_id, sizeof(e.private_id), GCRY_STRONG_RANDOM);
    if (pubid_len > 0)
        memcpy(e.pubid, pubid, pubid_len);
    e.pubid_len = pubid_len;
    e.usage = 0;
    power_up(&e);
    *emu = e;

cleanup:
    yk_zap(&e, sizeof(e));
    return ret;
}

/* Produce the next OTP into otp_out (YK_OTP_MAX_LEN + 1 bytes) and advance
 * emu; on failure neither is changed. */
krb5_error_code
yk_emu_next(yk_emu *emu, char *otp_out)
{
    krb5_error_code ret;
    yk_emu e;
    yk_token_fields f;
    unsigned char token[YK_TOKEN_LEN], rnd[2];
    char otp[YK_OTP_MAX_LEN + 1];
    int64_t now, elapsed;
    uint64_t delta;

    memset(&e, 0, sizeof(e));
    memset(&f, 0, sizeof(f));
    memset(token, 0, sizeof(token));
    if (emu == NULL || otp_out == NULL || check_state(emu) != 0)
        return EINVAL;
    ret = yk_crypto_init();
    if (ret)
        goto cleanup;
    e = *emu;

    /* First OTP after power-up or a session wrap: usage rises, unless it
     * is at its maximum, where a real key would repeat counters. */
    if (e.fresh) {
        if (e.usage >= YK_USAGE_MAX) {
            ret = YK_ERR_EMU_EXHAUSTED;
            goto cleanup;
        }
        e.usage++;
        e.session = 0;
        e.fresh = 0;
    }

    /* ~8 Hz since the last OTP (a clock that went back counts as 0), and
     * at least one tick; unsigned arithmetic wraps modulo 2^24 anyway. */
    now = (int64_t)time(NULL);
    elapsed = now > e.last ? now - e.last : 0;
    delta = elapsed > 0 ? (uint64_t)elapsed * EMU_TS_HZ : 1;
    e.timestamp = (uint32_t)((e.timestamp + delta) & EMU_TS_MASK);

    memcpy(f.private_id, e.private_id, sizeof(f.private_id));
    f.usage = e.usage;
    f.timestamp = e.timestamp;
    f.session = e.session;
    gcry_create_nonce(rnd, sizeof(rnd));
    f.random = (uint16_t)(rnd[0] | rnd[1] << 8);
    ret = yk_token_encrypt(&f, e.aes_key, token);
    if (ret)
        goto cleanup;
    yk_modhex_encode(e.pubid, e.pubid_len, otp);
    yk_modhex_encode(token, sizeof(token), otp + 2 * e.pubid_len);

    /* The session counter wraps into the next usage value. */
    if (e.session == EMU_SESSION_MAX) {
        e.session = 0;
        e.fresh = 1;
    } else {
        e.session++;
    }
    e.last = now;

    *emu = e;
    memcpy(otp_out, otp, strlen(otp) + 1);

cleanup:
    yk_zap(&e, sizeof(e));
    yk_zap(&f, sizeof(f));
    yk_zap(token, sizeof(token));
    return ret;
}

/* Simulate unplugging and plugging the token back in; NULL is ignored. */
void
yk_emu_replug(yk_emu *emu)
{
    if (emu == NULL)
        return;
    power_up(emu);
}

/* Decode exactly 2 * outlen hex characters of val into out. */
static krb5_error_code
parse_hex(const char *val, size_t vlen, unsigned char *out, size_t outlen)
{
    if (vlen != 2 * outlen)
        return YK_ERR_HEX;
    return yk_hex_decode(val, vlen, out, outlen);
}

/* Parse a decimal number (digits only) of at most max into *v_out. */
static krb5_error_code
parse_uint(const char *val, size_t vlen, uint64_t max, uint64_t *v_out)
{
    uint64_t v = 0, d;
    size_t i;
    int over = 0;

    if (vlen == 0)
        return YK_ERR_CONFIG;
    for (i = 0; i < vlen; i++) {
        if (val[i] < '0' || val[i] > '9')
            return YK_ERR_CONFIG;
        d = (uint64_t)(val[i] - '0');
        if (over || d > max || v > (max - d) / 10)
            over = 1;
        else
            v = v * 10 + d;
    }
    if (over)
        return ERANGE;
    *v_out = v;
    return 0;
}

/* Parse the public id (even-length modhex, possibly empty) into e. */
static krb5_error_code
parse_pubid(const char *val, size_t vlen, yk_emu *e)
{
    if (vlen % 2 != 0 || vlen > YK_PUBID_MODHEX_MAX)
        return YK_ERR_MODHEX;
    e->pubid_len = 0;
    if (vlen == 0)
        return 0;
    return yk_modhex_decode(val, vlen, e->pubid, sizeof(e->pubid),
                            &e->pubid_len);
}

/* Parse one line (without its newline) of a state file into e, recording
 * its key in *seen. */
static krb5_error_code
parse_line(const char *line, size_t len, yk_emu *e, unsigned int *seen)
{
    krb5_error_code ret;
    const char *sp, *val;
    size_t klen, vlen;
    uint64_t v = 0;
    int id;

    if (len == 0 || line[0] == '#')
        return 0;
    sp = memchr(line, ' ', len);
    klen = (sp != NULL) ? (size_t)(sp - line) : len;
    val = (sp != NULL) ? sp + 1 : line + len;
    vlen = len - (size_t)(val - line);
    for (id = 0; id < F_COUNT; id++) {
        if (strlen(field_names[id]) == klen &&
            memcmp(field_names[id], line, klen) == 0)
            break;
    }
    if (id == F_COUNT || (*seen & (1u << id)))
        return YK_ERR_CONFIG;
    *seen |= 1u << id;

    switch (id) {
    case F_AES_KEY:
        return parse_hex(val, vlen, e->aes_key, sizeof(e->aes_key));
    case F_PRIVATE_ID:
        return parse_hex(val, vlen, e->private_id, sizeof(e->private_id));
    case F_PUBLIC_ID:
        return parse_pubid(val, vlen, e);
    case F_USAGE:
        ret = parse_uint(val, vlen, YK_USAGE_MAX, &v);
        e->usage = (uint16_t)v;
        return ret;
    case F_SESSION:
        ret = parse_uint(val, vlen, EMU_SESSION_MAX, &v);
        e->session = (uint8_t)v;
        return ret;
    case F_TIMESTAMP:
        ret = parse_uint(val, vlen, EMU_TS_MASK, &v);
        e->timestamp = (uint32_t)v;
        return ret;
    case F_FRESH:
        ret = parse_uint(val, vlen, 1, &v);
        e->fresh = (int)v;
        return ret;
    default:
        ret = parse_uint(val, vlen, INT64_MAX, &v);
        e->last = (int64_t)v;
        return ret;
    }
}

/* Read and parse the state file at path into *emu_out (written only on
 * success).  The read buffer is wiped on every path. */
krb5_error_code
yk_emu_load(const char *path, yk_emu *emu_out)
{
    krb5_error_code ret = 0;
    char buf[EMU_FILE_MAX + 1];
    const char *nl;
    yk_emu e;
    size_t len = 0, pos, end;
    ssize_t n;
    unsigned int seen = 0;
    int fd = -1;

    memset(&e, 0, sizeof(e));
    if (path == NULL || emu_out == NULL)
        return EINVAL;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        ret = errno;
        goto cleanup;
    }
    while (len < sizeof(buf)) {
        n = read(fd, buf + len, sizeof(buf) - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            ret = errno;
            goto cleanup;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    if (len > EMU_FILE_MAX) {
        ret = EFBIG;
        goto cleanup;
    }
    if (memchr(buf, '\0', len) != NULL) {
        ret = YK_ERR_CONFIG;
        goto cleanup;
    }

    for (pos = 0; pos < len; pos = end + 1) {
        nl = memchr(buf + pos, '\n', len - pos);
        end = (nl != NULL) ? (size_t)(nl - buf) : len;
        ret = parse_line(buf + pos, end - pos, &e, &seen);
        if (ret)
            goto cleanup;
    }
    if (seen != (1u << F_COUNT) - 1 || check_state(&e) != 0) {
        ret = YK_ERR_CONFIG;
        goto cleanup;
    }
    *emu_out = e;

cleanup:
    if (fd >= 0)
        close(fd);
    yk_zap(buf, sizeof(buf));
    yk_zap(&e, sizeof(e));
    return ret;
}

/* Write all len bytes of buf to fd. */
static krb5_error_code
write_all(int fd, const char *buf, size_t len)
{
    ssize_t n;

    while (len > 0) {
        n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Flush the directory holding path, so that a rename in it is durable. */
static krb5_error_code
sync_dir(const char *path)
{
    krb5_error_code ret = 0;
    const char *slash = strrchr(path, '/');
    char *dir = NULL;
    int fd = -1;

    if (slash == NULL)
        dir = strdup(".");
    else if (slash == path)
        dir = strdup("/");
    else
        dir = strndup(path, (size_t)(slash - path));
    if (dir == NULL)
        return ENOMEM;
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fsync(fd) != 0)
        ret = errno;
    if (fd >= 0)
        close(fd);
    free(dir);
    return ret;
}

/* Write emu to path atomically: a new 0600 file next to it (mkstemp: O_EXCL),
 * fsync, rename over path.  The formatted text is wiped on every path. */
krb5_error_code
yk_emu_save(const yk_emu *emu, const char *path)
{
    krb5_error_code ret;
    char text[EMU_FILE_MAX];
    char key_hex[2 * YK_AES_KEY_LEN + 1], priv_hex[2 * YK_PRIVID_LEN + 1];
    char pub_mh[YK_PUBID_MODHEX_MAX + 1];
    char *tmp = NULL;
    int fd = -1, len, created = 0, renamed = 0;
    size_t plen;

    memset(key_hex, 0, sizeof(key_hex));
    memset(priv_hex, 0, sizeof(priv_hex));
    memset(text, 0, sizeof(text));
    if (emu == NULL || path == NULL || *path == '\0' ||
        check_state(emu) != 0)
        return EINVAL;

    yk_hex_encode(emu->aes_key, sizeof(emu->aes_key), key_hex);
    yk_hex_encode(emu->private_id, sizeof(emu->private_id), priv_hex);
    yk_modhex_encode(emu->pubid, emu->pubid_len, pub_mh);
    len = snprintf(text, sizeof(text),
                   "%s\naes_key %s\nprivate_id %s\npublic_id%s%s\n"
                   "usage %u\nsession %u\ntimestamp %lu\nfresh %d\n"
                   "last %lld\n", EMU_HEADER, key_hex, priv_hex,
                   emu->pubid_len > 0 ? " " : "", pub_mh,
                   (unsigned int)emu->usage, (unsigned int)emu->session,
                   (unsigned long)emu->timestamp, emu->fresh,
                   (long long)emu->last);
    if (len < 0 || (size_t)len >= sizeof(text)) {
        ret = EINVAL;
        goto cleanup;
    }

    plen = strlen(path);
    tmp = malloc(plen + sizeof(EMU_TMP_SUFFIX));
    if (tmp == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, EMU_TMP_SUFFIX, sizeof(EMU_TMP_SUFFIX));
    fd = mkstemp(tmp);
    if (fd < 0) {
        ret = errno;
        goto cleanup;
    }
    created = 1;
    if (fchmod(fd, S_IRUSR | S_IWUSR) != 0) {
        ret = errno;
        goto cleanup;
    }
    ret = write_all(fd, text, (size_t)len);
    if (ret)
        goto cleanup;
    if (fsync(fd) != 0) {
        ret = errno;
        goto cleanup;
    }
    if (close(fd) != 0) {
        fd = -1;
        ret = errno;
        goto cleanup;
    }
    fd = -1;
    if (rename(tmp, path) != 0) {
        ret = errno;
        goto cleanup;
    }
    renamed = 1;
    ret = sync_dir(path);

cleanup:
    if (fd >= 0)
        close(fd);
    if (created && !renamed)
        (void)unlink(tmp);
    free(tmp);
    yk_zap(text, sizeof(text));
    yk_zap(key_hex, sizeof(key_hex));
    yk_zap(priv_hex, sizeof(priv_hex));
    return ret;
}

/* Wipe the whole state (key and private id included); NULL is ignored. */
void
yk_emu_clear(yk_emu *emu)
{
    if (emu != NULL)
        yk_zap(emu, sizeof(*emu));
}
