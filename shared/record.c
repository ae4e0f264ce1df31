/* SPDX-License-Identifier: MIT */
/* record.c: canonical text encodings of the LDAP token records. */

/*
 * Two records live on a principal's entry, one value per token each.  Both
 * are compared byte for byte by the directory (octetStringMatch): the
 * compare-and-swap deletes the exact value it read.  So every record has
 * exactly one encoding, and the parsers refuse every other spelling.
 *
 * Secret record (yubikeyTokenSecret), fields in this order, separated by
 * one space:
 *
 *   yk1 id=<pubid> st=<pending|active|disabled> serial=<dec or empty>
 *       at=<dec> by=<pct> desc=<pct> wrap=<keywrap record>
 *
 * State record (yubikeyTokenState):
 *
 *   yk1 id=<pubid> ctr=<dec> gen=<dec> nonce=<8 lower hex or -> used=<dec>
 *
 * - pubid: 2..32 lower-case modhex characters, an even number.
 * - dec: decimal digits, no sign, no leading zero ("0" itself is fine),
 *   within the field's range: serial 32 bits, at and used 0..2^63-1
 *   (Unix seconds; used=0 means never), ctr 32 bits, gen 64 bits.
 * - pct: bytes in [A-Za-z0-9._~@/+:=-] as they are, every other byte as
 *   %XX with upper-case hex.  Refused: %XX for a byte that needs no
 *   escaping, lower-case hex, a truncated or non-hex escape, %00, and any
 *   raw byte outside the set.  May be empty.
 * - nonce: the AS-REQ nonce of the request that set the counter, or "-"
 *   when an administrator wrote the value.
 * - wrap: the rest of the value, opaque here (shared/keywrap.c owns it):
 *   at least one byte, printable ASCII (0x20..0x7e).
 *
 * A value longer than YK_RECORD_MAX bytes or holding a NUL is refused.
 */

#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "record.h"

#define YK_RECORD_VERSION "yk1"
#define YK_DEC_MAX_DIGITS 20      /* UINT64_MAX has 20 digits */
#define YK_NONCE_HEX_LEN 8
#define YK_SERIAL_MAX UINT32_MAX
#define YK_TIME_MAX ((uint64_t)INT64_MAX)

static const char modhex_chars[] = "cbdefghijklnrtuv";
static const char upper_hex[] = "0123456789ABCDEF";

/* A cursor over the value being parsed. */
typedef struct {
    const char *p;
    const char *end;
} cursor;

/* A growing output buffer for the formatters; data is NUL-terminated. */
typedef struct {
    char *data;
    size_t len;
    size_t cap;
    int failed;
} outbuf;

/* Append n bytes to b; sets b->failed on allocation failure or when the
 * record would exceed YK_RECORD_MAX. */
static void
out_append(outbuf *b, const char *s, size_t n)
{
    char *grown;
    size_t need;

    if (b->failed)
        return;
    need = b->len + n + 1;
    if (need > YK_RECORD_MAX + 1) {
        b->failed = EOVERFLOW;
        return;
    }
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : 128;

        while (cap < need)
            cap *= 2;
        grown = realloc(b->data, cap);
        if (grown == NULL) {
            b->failed = ENOMEM;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

/* Append a NUL-terminated string. */
static void
out_str(outbuf *b, const char *s)
{
    out_append(b, s, strlen(s));
}

/* Append an unsigned decimal number. */
static void
out_dec(outbuf *b, uint64_t v)
{
    char num[YK_DEC_MAX_DIGITS + 1];

    snprintf(num, sizeof(num), "%" PRIu64, v);
    out_str(b, num);
}

/* Whether byte c may appear unescaped in a pct field. */
static int
pct_plain(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
        (c >= '0' && c <= '9') || strchr("._~@/+:=-", c) != NULL;
}

/* Append s pct-encoded. */
static void
out_pct(outbuf *b, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    char esc[3];

    for (; *u != '\0'; u++) {
        if (pct_plain(*u)) {
            out_append(b, (const char *)u, 1);
        } else {
            esc[0] = '%';
            esc[1] = upper_hex[*u >> 4];
            esc[2] = upper_hex[*u & 0x0f];
            out_append(b, esc, 3);
        }
    }
}

/* Hand the buffer over as *out, or free it and return the failure. */
static krb5_error_code
out_finish(outbuf *b, char **out)
{
    krb5_error_code ret = b->failed;

    if (ret == EOVERFLOW)
        ret = YK_ERR_RECORD_FORMAT;
    if (ret == 0 && b->data == NULL)
        ret = YK_ERR_RECORD_FORMAT;
    if (ret != 0) {
        free(b->data);
        return ret;
    }
    *out = b->data;
    return 0;
}

/* Consume the literal lit at the cursor; 0 if it is not there. */
static int
take_lit(cursor *c, const char *lit)
{
    size_t n = strlen(lit);

    if ((size_t)(c->end - c->p) < n || memcmp(c->p, lit, n) != 0)
        return 0;
    c->p += n;
    return 1;
}

/* The bytes up to the next space (or the end): *start, *n; the cursor
 * stops on the space. */
static void
take_word(cursor *c, const char **start, size_t *n)
{
    const char *q = c->p;

    while (q < c->end && *q != ' ')
        q++;
    *start = c->p;
    *n = (size_t)(q - c->p);
    c->p = q;
}

/* Parse n bytes at s as a canonical decimal no larger than max. */
static int
parse_dec(const char *s, size_t n, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    size_t i;

    if (n == 0 || n > YK_DEC_MAX_DIGITS || (n > 1 && s[0] == '0'))
        return 0;
    for (i = 0; i < n; i++) {
        unsigned d;

        if (s[i] < '0' || s[i] > '9')
            return 0;
        d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    if (v > max)
        return 0;
    *out = v;
    return 1;
}

/* The value of an upper-case hex digit, or -1. */
static int
upper_hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decode a pct field of n bytes at s strictly into a malloc'd string. */
static krb5_error_code
parse_pct(const char *s, size_t n, char **out)
{
    krb5_error_code ret = YK_ERR_RECORD_FORMAT;
    char *dec = NULL;
    size_t i, o = 0;

    dec = malloc(n + 1);
    if (dec == NULL)
        return ENOMEM;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];

        if (c == '%') {
            int hi, lo;

            if (n - i < 3)
                goto cleanup;
            hi = upper_hex_value(s[i + 1]);
            lo = upper_hex_value(s[i + 2]);
            if (hi < 0 || lo < 0)
                goto cleanup;
            c = (unsigned char)(hi << 4 | lo);
            /* One spelling per byte: no NUL, no needless escape. */
            if (c == '\0' || pct_plain(c))
                goto cleanup;
            i += 2;
        } else if (!pct_plain(c)) {
            goto cleanup;
        }
        dec[o++] = (char)c;
    }
    dec[o] = '\0';
    *out = dec;
    dec = NULL;
    ret = 0;

cleanup:
    free(dec);
    return ret;
}

/* Whether n bytes at s hold a NUL. */
static int
has_nul(const char *s, size_t n)
{
    return memchr(s, '\0', n) != NULL;
}

/* Whether the n bytes at s are a canonical public id. */
static int
pubid_valid_n(const char *s, size_t n)
{
    size_t i;

    if (n < 2 || n > YK_PUBID_MODHEX_MAX || n % 2 != 0)
        return 0;
    for (i = 0; i < n; i++) {
        if (s[i] == '\0' || strchr(modhex_chars, s[i]) == NULL)
            return 0;
    }
    return 1;
}

/* Check that a public id is in canonical form (see record.h). */
int
yk_pubid_valid(const char *s)
{
    return s != NULL && pubid_valid_n(s, strnlen(s, YK_PUBID_MODHEX_MAX + 1));
}

/* Whether s (NUL-terminated) is a valid wrap field. */
static int
wrap_valid_n(const char *s, size_t n)
{
    size_t i;

    if (n == 0)
        return 0;
    for (i = 0; i < n; i++) {
        if (s[i] < 0x20 || s[i] > 0x7e)
            return 0;
    }
    return 1;
}

/* Whether a serial string is empty or a canonical 32-bit decimal. */
static int
serial_valid_n(const char *s, size_t n)
{
    uint64_t v;

    return n == 0 || parse_dec(s, n, YK_SERIAL_MAX, &v);
}

/* Parse "id=<pubid>" after the version prefix into pubid (33 bytes). */
static int
parse_id(cursor *c, char *pubid)
{
    const char *w;
    size_t n;

    if (!take_lit(c, YK_RECORD_VERSION " id="))
        return 0;
    take_word(c, &w, &n);
    if (!pubid_valid_n(w, n))
        return 0;
    memcpy(pubid, w, n);
    pubid[n] = '\0';
    return 1;
}

/* Parse " key=<decimal>" with the given maximum. */
static int
parse_dec_field(cursor *c, const char *key, uint64_t max, uint64_t *out)
{
    const char *w;
    size_t n;

    if (!take_lit(c, key))
        return 0;
    take_word(c, &w, &n);
    return parse_dec(w, n, max, out);
}

/* Parse a secret record strictly; see the top of this file. */
krb5_error_code
yk_secret_rec_parse(const char *s, size_t len, yk_secret_rec **rec_out)
{
    krb5_error_code ret = YK_ERR_RECORD_FORMAT;
    yk_secret_rec *rec = NULL;
    cursor c;
    const char *w;
    size_t n;
    char word[16];
    uint64_t v;

    if (s == NULL || len > YK_RECORD_MAX || has_nul(s, len))
        return YK_ERR_RECORD_FORMAT;
    c.p = s;
    c.end = s + len;
    rec = calloc(1, sizeof(*rec));
    if (rec == NULL)
        return ENOMEM;

    if (!parse_id(&c, rec->pubid))
        goto cleanup;

    if (!take_lit(&c, " st="))
        goto cleanup;
    take_word(&c, &w, &n);
    if (n >= sizeof(word))
        goto cleanup;
    memcpy(word, w, n);
    word[n] = '\0';
    if (yk_token_state_parse(word, &rec->state) != 0)
        goto cleanup;

    if (!take_lit(&c, " serial="))
        goto cleanup;
    take_word(&c, &w, &n);
    if (!serial_valid_n(w, n))
        goto cleanup;
    rec->serial = strndup(w, n);
    if (rec->serial == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }

    if (!parse_dec_field(&c, " at=", YK_TIME_MAX, &v))
        goto cleanup;
    rec->enrolled_at = (int64_t)v;

    if (!take_lit(&c, " by="))
        goto cleanup;
    take_word(&c, &w, &n);
    ret = parse_pct(w, n, &rec->enrolled_by);
    if (ret != 0)
        goto cleanup;
    ret = YK_ERR_RECORD_FORMAT;

    if (!take_lit(&c, " desc="))
        goto cleanup;
    take_word(&c, &w, &n);
    ret = parse_pct(w, n, &rec->description);
    if (ret != 0)
        goto cleanup;
    ret = YK_ERR_RECORD_FORMAT;

    /* The wrapped secret is the rest of the value. */
    if (!take_lit(&c, " wrap="))
        goto cleanup;
    n = (size_t)(c.end - c.p);
    if (!wrap_valid_n(c.p, n))
        goto cleanup;
    rec->wrapped = strndup(c.p, n);
    if (rec->wrapped == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }

    *rec_out = rec;
    rec = NULL;
    ret = 0;

cleanup:
    yk_secret_rec_free(rec);
    return ret;
}

/* Format a secret record canonically into a malloc'd string; refuses a
 * record that could not be parsed back.  NULL serial, enrolled_by and
 * description are written as empty. */
krb5_error_code
yk_secret_rec_format(const yk_secret_rec *rec, char **out)
{
    outbuf b = { NULL, 0, 0, 0 };
    const char *serial, *by, *desc, *state;

    if (rec == NULL || !yk_pubid_valid(rec->pubid) || rec->enrolled_at < 0 ||
        rec->wrapped == NULL || !wrap_valid_n(rec->wrapped,
                                              strlen(rec->wrapped)))
        return YK_ERR_RECORD_FORMAT;
    state = yk_token_state_name(rec->state);
    serial = rec->serial != NULL ? rec->serial : "";
    by = rec->enrolled_by != NULL ? rec->enrolled_by : "";
    desc = rec->description != NULL ? rec->description : "";
    if (state == NULL || !serial_valid_n(serial, strlen(serial)))
        return YK_ERR_RECORD_FORMAT;

    out_str(&b, YK_RECORD_VERSION " id=");
    out_str(&b, rec->pubid);
    out_str(&b, " st=");
    out_str(&b, state);
    out_str(&b, " serial=");
    out_str(&b, serial);
    out_str(&b, " at=");
    out_dec(&b, (uint64_t)rec->enrolled_at);
    out_str(&b, " by=");
    out_pct(&b, by);
    out_str(&b, " desc=");
    out_pct(&b, desc);
    out_str(&b, " wrap=");
    out_str(&b, rec->wrapped);
    return out_finish(&b, out);
}

/* Duplicate s, or "" for NULL, into *out. */
static krb5_error_code
dup_or_empty(const char *s, char **out)
{
    *out = strdup(s != NULL ? s : "");
    return *out == NULL ? ENOMEM : 0;
}

/* Deep copy of a secret record into *out (malloc'd). */
krb5_error_code
yk_secret_rec_copy(const yk_secret_rec *rec, yk_secret_rec **out)
{
    krb5_error_code ret;
    yk_secret_rec *cp = NULL;

    if (rec == NULL)
        return EINVAL;
    cp = calloc(1, sizeof(*cp));
    if (cp == NULL)
        return ENOMEM;
    memcpy(cp->pubid, rec->pubid, sizeof(cp->pubid));
    cp->state = rec->state;
    cp->enrolled_at = rec->enrolled_at;
    ret = dup_or_empty(rec->serial, &cp->serial);
    if (ret == 0)
        ret = dup_or_empty(rec->enrolled_by, &cp->enrolled_by);
    if (ret == 0)
        ret = dup_or_empty(rec->description, &cp->description);
    if (ret == 0)
        ret = dup_or_empty(rec->wrapped, &cp->wrapped);
    if (ret != 0)
        goto cleanup;
    *out = cp;
    cp = NULL;

cleanup:
    yk_secret_rec_free(cp);
    return ret;
}

/* Free a secret record and its strings; NULL is accepted. */
void
yk_secret_rec_free(yk_secret_rec *rec)
{
    if (rec == NULL)
        return;
    free(rec->serial);
    free(rec->enrolled_by);
    free(rec->description);
    free(rec->wrapped);
    free(rec);
}

/* Parse the nonce field ("-" or 8 lower-case hex digits). */
static int
parse_nonce(cursor *c, yk_state_rec *rec)
{
    const char *w;
    size_t n, i;
    uint32_t v = 0;

    if (!take_lit(c, " nonce="))
        return 0;
    take_word(c, &w, &n);
    if (n == 1 && w[0] == '-') {
        rec->has_nonce = 0;
        rec->nonce = YK_NONCE_NONE;
        return 1;
    }
    if (n != YK_NONCE_HEX_LEN)
        return 0;
    for (i = 0; i < n; i++) {
        const char *d = strchr("0123456789abcdef", w[i]);

        if (w[i] == '\0' || d == NULL)
            return 0;
        v = v << 4 | (uint32_t)(d - "0123456789abcdef");
    }
    rec->has_nonce = 1;
    rec->nonce = v;
    return 1;
}

/* Parse a state record strictly into *rec_out (written only on
 * success); see the top of this file. */
krb5_error_code
yk_state_rec_parse(const char *s, size_t len, yk_state_rec *rec_out)
{
    yk_state_rec rec;
    cursor c;
    uint64_t v;

    if (s == NULL || len > YK_RECORD_MAX || has_nul(s, len))
        return YK_ERR_RECORD_FORMAT;
    memset(&rec, 0, sizeof(rec));
    c.p = s;
    c.end = s + len;
    if (!parse_id(&c, rec.pubid))
        return YK_ERR_RECORD_FORMAT;
    if (!parse_dec_field(&c, " ctr=", UINT32_MAX, &v))
        return YK_ERR_RECORD_FORMAT;
    rec.counter = (uint32_t)v;
    if (!parse_dec_field(&c, " gen=", UINT64_MAX, &rec.gen))
        return YK_ERR_RECORD_FORMAT;
    if (!parse_nonce(&c, &rec))
        return YK_ERR_RECORD_FORMAT;
    if (!parse_dec_field(&c, " used=", YK_TIME_MAX, &v))
        return YK_ERR_RECORD_FORMAT;
    rec.last_use = (int64_t)v;
    if (c.p != c.end)
        return YK_ERR_RECORD_FORMAT;
    *rec_out = rec;
    return 0;
}

/* Format a state record canonically into a malloc'd string; refuses an
 * invalid public id, a negative time or has_nonce other than 0/1. */
krb5_error_code
yk_state_rec_format(const yk_state_rec *rec, char **out)
{
    outbuf b = { NULL, 0, 0, 0 };
    char nonce[YK_NONCE_HEX_LEN + 1];

    if (rec == NULL || !yk_pubid_valid(rec->pubid) || rec->last_use < 0 ||
        (rec->has_nonce != 0 && rec->has_nonce != 1))
        return YK_ERR_RECORD_FORMAT;
    out_str(&b, YK_RECORD_VERSION " id=");
    out_str(&b, rec->pubid);
    out_str(&b, " ctr=");
    out_dec(&b, rec->counter);
    out_str(&b, " gen=");
    out_dec(&b, rec->gen);
    out_str(&b, " nonce=");
    if (rec->has_nonce) {
        snprintf(nonce, sizeof(nonce), "%08" PRIx32, rec->nonce);
        out_str(&b, nonce);
    } else {
        out_str(&b, "-");
    }
    out_str(&b, " used=");
    out_dec(&b, (uint64_t)rec->last_use);
    return out_finish(&b, out);
}

/* Parse a policy value: exactly "2fa" or "otp". */
krb5_error_code
yk_policy_parse(const char *s, size_t len, int *policy_out)
{
    if (s == NULL || len != 3)
        return YK_ERR_RECORD_FORMAT;
    if (memcmp(s, "2fa", 3) == 0) {
        *policy_out = YK_POLICY_2FA;
        return 0;
    }
    if (memcmp(s, "otp", 3) == 0) {
        *policy_out = YK_POLICY_OTP;
        return 0;
    }
    return YK_ERR_RECORD_FORMAT;
}

/* The stored name of a policy, or NULL for an unknown value. */
const char *
yk_policy_name(int policy)
{
    switch (policy) {
    case YK_POLICY_2FA:
        return "2fa";
    case YK_POLICY_OTP:
        return "otp";
    default:
        return NULL;
    }
}

/* Parse a token state name (NUL-terminated, exact spelling). */
krb5_error_code
yk_token_state_parse(const char *s, int *state_out)
{
    if (s == NULL)
        return YK_ERR_RECORD_FORMAT;
    if (strcmp(s, "pending") == 0)
        *state_out = YK_TOKEN_PENDING;
    else if (strcmp(s, "active") == 0)
        *state_out = YK_TOKEN_ACTIVE;
    else if (strcmp(s, "disabled") == 0)
        *state_out = YK_TOKEN_DISABLED;
    else
        return YK_ERR_RECORD_FORMAT;
    return 0;
}

/* The stored name of a token state, or NULL for an unknown value. */
const char *
yk_token_state_name(int state)
{
    switch (state) {
    case YK_TOKEN_PENDING:
        return "pending";
    case YK_TOKEN_ACTIVE:
        return "active";
    case YK_TOKEN_DISABLED:
        return "disabled";
    default:
        return NULL;
    }
}
