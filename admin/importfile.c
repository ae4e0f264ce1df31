/* SPDX-License-Identifier: MIT */
/* importfile.c: parsers of token import files and of ykadmin's --map file. */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "importfile.h"
#include "otp.h"
#include "secmem.h"

/*
 * The formats, as their producers write them (one token per line, fields
 * separated by commas, no quoting):
 *
 * ykman CSV ("ykman otp yubiotp -O FILE") and the personalization tool's
 * "Yubico format", 7 fields, the last one empty (a trailing comma):
 *
 *   serial,public_id,private_id,aes_key,access_code,timestamp,
 *   4711,vvccccccccbb,0123456789ab,<32 hex>,,2024-05-01T12:00:00,
 *
 *   serial: decimal or empty; public id: modhex; private id: 12 hex; key:
 *   32 hex; access code: empty or 12 hex (twelve 0s: none; the tool pads
 *   an unset code with 0s); timestamp: YYYY-MM-DDThh:mm:ss or empty.  The
 *   tool logs rows of other modes too: a static password or Yubico
 *   challenge-response row has an empty private-id column, an HMAC
 *   challenge-response row "0", an OATH-HOTP row the moving factor seed
 *   (decimal) there; such rows are refused.
 *
 * The personalization tool's "Traditional" log: "LOGGING START,<local
 * time>" whenever the tool starts logging, then 18 fields per row:
 *
 *   event type, local time, slot, public id, private id, key, current
 *   access code, new access code, OATH fixed modhex 1, 2, all (0/1), HOTP
 *   digits (0/6/8), moving factor seed (decimal), strong password 1, 2,
 *   send reference, challenge button trigger, HMAC < 64 (0/1)
 *
 *   The local time is the system locale's date format and may itself hold
 *   commas: the row then has more than 18 fields, so fields are counted
 *   from the right.  Event types other than "Yubico OTP" (OATH-HOTP,
 *   Static Password, Challenge-Response: ..., Configuration Update/Swap)
 *   are refused.  The access code kept is the new one.
 *
 * yubikey-ksm's provisioning format (the text inside the OpenPGP file):
 * the first line "# ykksm 1", lines starting with '#' are comments, and
 * anything after a '#' on a data line too; then 7 or 8 fields:
 *
 *   serialNr,publicName,internalName,aesKey,lockCode,created,accessed
 *   [,progflags]
 *
 *   serial: decimal; public name: modhex; internal name: 12 hex (the
 *   private id); AES key: 32 hex (only AES-128 exists on a YubiKey); lock
 *   code: 12 hex (the access code; all 0s: none); created and accessed:
 *   YYYY-MM-DD[T ]hh:mm:ss or empty; progflags: decimal or empty.
 *
 * In every format a public id is 2..32 modhex characters, an even number,
 * folded to lower case; hex is read in either case.  Blank lines, CRLF,
 * trailing blanks and a leading UTF-8 BOM are tolerated; every other
 * deviation is an error naming the line and the field.  Messages never
 * quote a field that failed validation (a shifted column may hold a key).
 */

#define MAX_FIELDS 48           /* commas in a Traditional time included */
#define CSV_FIELDS 7
#define TRAD_FIELDS 18          /* with a comma-free time */
#define TRAD_TAIL 16            /* fields after the time */
#define KSM_FIELDS_MIN 7
#define KSM_FIELDS_MAX 8
#define HMAC_KEY_HEX 40         /* an OATH-HOTP / HMAC-SHA1 key in hex */
#define SEED_DIGITS_MAX 10
#define PROGFLAGS_DIGITS_MAX 10
#define SET_INITIAL_CAP 16
#define MAP_INITIAL_CAP 16

static const char ksm_header[] = "# ykksm 1";
static const char ksm_magic[] = "# ykksm";
static const char logging_start[] = "LOGGING START";
static const char armor_prefix[] = "-----BEGIN PGP";
static const char yubico_otp_event[] = "Yubico OTP";

/* The Traditional log's event types (yubikey-personalization-gui). */
static const char *const trad_events[] = {
    "Yubico OTP", "OATH-HOTP", "Static Password", "Static Password: Short",
    "Static Password: Scan Code", "Challenge-Response: Yubico OTP",
    "Challenge-Response: HMAC-SHA1", "Configuration Update",
    "Configuration Swap", "Unknown programming mode", NULL
};

/* What a field validator found. */
enum {
    V_OK = 0,
    V_EMPTY,        /* nothing where something is required */
    V_LENGTH,       /* wrong number of characters */
    V_ALPHABET,     /* a character outside the expected alphabet */
    V_VALUE         /* right shape, impossible value */
};

struct yk_import_set {
    int format;
    size_t count;
    size_t cap;
    yk_import_token *tokens;    /* cap slots, wiped when dropped */
};

typedef struct {
    char pubid[YK_PUBID_MODHEX_MAX + 1];
    char *principal;
    size_t line;
} map_entry;

struct yk_import_map {
    size_t count;
    size_t cap;
    map_entry *entries;         /* file order */
    map_entry **sorted;         /* by public id, for lookup */
};

/* A run of bytes inside the caller's buffer. */
typedef struct {
    const char *p;
    size_t len;
} span;

/* Walks the buffer line by line, counting lines as an editor does. */
typedef struct {
    const char *buf;
    size_t len;
    size_t pos;
    size_t lineno;
} cursor;

/* Where a parse reports its errors. */
typedef struct {
    char *errbuf;
    size_t errlen;
} errsink;

/* ---- messages -------------------------------------------------------- */

/* Format a message into the sink (if any) and return EINVAL. */
static krb5_error_code report(errsink *es, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static krb5_error_code
report(errsink *es, const char *fmt, ...)
{
    va_list ap;

    if (es->errbuf != NULL && es->errlen > 0) {
        va_start(ap, fmt);
        vsnprintf(es->errbuf, es->errlen, fmt, ap);
        va_end(ap);
    }
    return EINVAL;
}

/* Report field number fieldno (1-based) of line, called name, as failing
 * with verdict v against expect.  Quotes only the field's length. */
static krb5_error_code
field_fail(errsink *es, size_t line, size_t fieldno, const char *name,
           int v, const char *expect, span f)
{
    switch (v) {
    case V_EMPTY:
        return report(es, "line %zu, field %zu (%s): expected %s, found "
                      "nothing", line, fieldno, name, expect);
    case V_LENGTH:
        return report(es, "line %zu, field %zu (%s): expected %s, found %zu "
                      "characters", line, fieldno, name, expect, f.len);
    case V_ALPHABET:
        return report(es, "line %zu, field %zu (%s): expected %s, found "
                      "another character", line, fieldno, name, expect);
    default:
        return report(es, "line %zu, field %zu (%s): expected %s, found "
                      "another value", line, fieldno, name, expect);
    }
}

/* Report an allocation failure. */
static krb5_error_code
nomem(errsink *es)
{
    report(es, "out of memory");
    return ENOMEM;
}

/* ---- lines and fields ------------------------------------------------ */

/* Start a cursor over len bytes at buf, past a UTF-8 byte order mark. */
static void
cursor_init(cursor *c, const char *buf, size_t len)
{
    c->buf = buf;
    c->len = len;
    c->pos = 0;
    c->lineno = 0;
    if (len >= 3 && (unsigned char)buf[0] == 0xef &&
        (unsigned char)buf[1] == 0xbb && (unsigned char)buf[2] == 0xbf)
        c->pos = 3;
}

/* The next line into *line, without its LF and without trailing CR,
 * spaces and tabs; 0 at the end of the buffer, 1 otherwise. */
static int
next_line(cursor *c, span *line)
{
    const char *start, *nl;
    size_t rest, n;

    if (c->pos >= c->len)
        return 0;
    start = c->buf + c->pos;
    rest = c->len - c->pos;
    nl = memchr(start, '\n', rest);
    n = nl != NULL ? (size_t)(nl - start) : rest;
    c->pos += n + (nl != NULL ? 1 : 0);
    c->lineno++;
    while (n > 0 && (start[n - 1] == '\r' || start[n - 1] == ' ' ||
                     start[n - 1] == '\t'))
        n--;
    line->p = start;
    line->len = n;
    return 1;
}

/* The next line that is not blank, as next_line. */
static int
next_nonblank(cursor *c, span *line)
{
    while (next_line(c, line)) {
        if (line->len > 0)
            return 1;
    }
    return 0;
}

/* Split line at commas into f (room for max); returns the number of
 * fields, or max + 1 when there are more. */
static size_t
split_commas(span line, span *f, size_t max)
{
    const char *p = line.p, *end = line.p + line.len, *comma;
    size_t n = 0;

    for (;;) {
        if (n == max)
            return max + 1;
        comma = memchr(p, ',', (size_t)(end - p));
        f[n].p = p;
        f[n].len = comma != NULL ? (size_t)(comma - p) : (size_t)(end - p);
        n++;
        if (comma == NULL)
            return n;
        p = comma + 1;
    }
}

/* 1 if f holds exactly the NUL-terminated string s. */
static int
span_is(span f, const char *s)
{
    return f.len == strlen(s) && memcmp(f.p, s, f.len) == 0;
}

/* 1 if f starts with the NUL-terminated string s. */
static int
span_starts(span f, const char *s)
{
    size_t n = strlen(s);

    return f.len >= n && memcmp(f.p, s, n) == 0;
}

/* 1 if c is an ASCII decimal digit (no locale). */
static int
is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* 1 if c is an ASCII hex digit. */
static int
is_hex(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* 1 if f is non-empty and all decimal digits. */
static int
all_digits(span f)
{
    size_t i;

    if (f.len == 0)
        return 0;
    for (i = 0; i < f.len; i++) {
        if (!is_digit(f.p[i]))
            return 0;
    }
    return 1;
}

/* 1 if f is non-empty and all hex digits. */
static int
all_hex(span f)
{
    size_t i;

    if (f.len == 0)
        return 0;
    for (i = 0; i < f.len; i++) {
        if (!is_hex(f.p[i]))
            return 0;
    }
    return 1;
}

/* ---- field validators ------------------------------------------------ */

#define EXPECT_PUBID "2 to 32 modhex characters, an even number"
#define EXPECT_PRIVID "12 hex digits"
#define EXPECT_KEY "32 hex digits"
#define EXPECT_ACCESS "nothing or 12 hex digits"
#define EXPECT_LOCK "12 hex digits"
#define EXPECT_SERIAL "a decimal serial number of at most 15 digits"
#define EXPECT_SERIAL_OPT "nothing or " EXPECT_SERIAL
#define EXPECT_TIME "nothing or a time YYYY-MM-DDThh:mm:ss"
#define EXPECT_BOOL "0 or 1"

/* A public id: 2..32 modhex characters, even; out gets the canonical
 * lower-case form (written only on success). */
static int
v_pubid(span f, char out[YK_PUBID_MODHEX_MAX + 1])
{
    unsigned char raw[YK_PUBID_MAX];
    size_t rawlen = 0;

    if (f.len == 0)
        return V_EMPTY;
    if (f.len < 2 || f.len > YK_PUBID_MODHEX_MAX || f.len % 2 != 0)
        return V_LENGTH;
    if (yk_modhex_decode(f.p, f.len, raw, sizeof(raw), &rawlen) != 0)
        return V_ALPHABET;
    yk_modhex_encode(raw, rawlen, out);
    return V_OK;
}

/* Exactly 2 * outlen hex digits into out (wiped on failure). */
static int
v_hex(span f, unsigned char *out, size_t outlen)
{
    if (f.len == 0)
        return V_EMPTY;
    if (f.len != 2 * outlen)
        return V_LENGTH;
    if (yk_hex_decode(f.p, f.len, out, outlen) != 0)
        return V_ALPHABET;
    return V_OK;
}

/* An access code: empty (none) or 12 hex digits, twelve 0s meaning none
 * too.  *has and out are set on success; out is wiped otherwise. */
static int
v_access(span f, int allow_empty, int *has,
         unsigned char out[YK_IMPORT_ACCESS_CODE_LEN])
{
    static const unsigned char zero[YK_IMPORT_ACCESS_CODE_LEN];
    int v;

    *has = 0;
    if (f.len == 0 && allow_empty)
        return V_OK;
    v = v_hex(f, out, YK_IMPORT_ACCESS_CODE_LEN);
    if (v != V_OK)
        return v;
    if (memcmp(out, zero, YK_IMPORT_ACCESS_CODE_LEN) == 0)
        return V_OK;
    *has = 1;
    return V_OK;
}

/* A decimal number of at most max digits, or nothing when allow_empty;
 * copied NUL-terminated into out (max + 1 bytes) when out is not NULL. */
static int
v_digits(span f, size_t max, int allow_empty, char *out)
{
    if (f.len == 0)
        return allow_empty ? V_OK : V_EMPTY;
    if (f.len > max)
        return V_LENGTH;
    if (!all_digits(f))
        return V_ALPHABET;
    if (out != NULL) {
        memcpy(out, f.p, f.len);
        out[f.len] = '\0';
    }
    return V_OK;
}

/* The value of the n decimal digits at p (already checked). */
static int
dec(const char *p, size_t n)
{
    int v = 0;

    while (n-- > 0)
        v = v * 10 + (*p++ - '0');
    return v;
}

/* A time YYYY-MM-DDThh:mm:ss (a space may replace the T, a Z may
 * follow), or nothing. */
static int
v_time(span f)
{
    static const char pat[] = "dddd-dd-ddTdd:dd:dd";
    size_t n = f.len, i;
    int mon, day, hour, min, sec;

    if (n == 0)
        return V_OK;
    if (n == sizeof(pat) && f.p[n - 1] == 'Z')
        n--;
    if (n != sizeof(pat) - 1)
        return V_LENGTH;
    for (i = 0; i < n; i++) {
        if (pat[i] == 'd' ? !is_digit(f.p[i]) :
            pat[i] == 'T' ? (f.p[i] != 'T' && f.p[i] != ' ') :
            f.p[i] != pat[i])
            return V_ALPHABET;
    }
    mon = dec(f.p + 5, 2);
    day = dec(f.p + 8, 2);
    hour = dec(f.p + 11, 2);
    min = dec(f.p + 14, 2);
    sec = dec(f.p + 17, 2);
    if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 ||
        min > 59 || sec > 60)
        return V_VALUE;
    return V_OK;
}

/* "0" or "1". */
static int
v_bool(span f)
{
    if (f.len == 0)
        return V_EMPTY;
    return span_is(f, "0") || span_is(f, "1") ? V_OK : V_VALUE;
}

/* ---- the token set --------------------------------------------------- */

/* Make room for one more token in set; the new slot is zeroed.  Growth
 * copies into a fresh array and wipes the old one, so no key is left in
 * freed memory. */
static krb5_error_code
set_reserve(yk_import_set *set, errsink *es)
{
    yk_import_token *bigger = NULL;
    size_t newcap;

    if (set->count < set->cap)
        return 0;
    if (set->cap >= YK_IMPORT_MAX_TOKENS)
        return report(es, "more than %d tokens in one file",
                      YK_IMPORT_MAX_TOKENS);
    newcap = set->cap == 0 ? SET_INITIAL_CAP : set->cap * 2;
    if (newcap > YK_IMPORT_MAX_TOKENS)
        newcap = YK_IMPORT_MAX_TOKENS;
    bigger = calloc(newcap, sizeof(*bigger));
    if (bigger == NULL)
        return nomem(es);
    if (set->count > 0)
        memcpy(bigger, set->tokens, set->count * sizeof(*bigger));
    yk_zap(set->tokens, set->cap * sizeof(*set->tokens));
    free(set->tokens);
    set->tokens = bigger;
    set->cap = newcap;
    return 0;
}

/* Wipe every slot of set and free it; NULL is accepted. */
void
yk_import_set_free(yk_import_set *set)
{
    if (set == NULL)
        return;
    yk_zap(set->tokens, set->cap * sizeof(*set->tokens));
    free(set->tokens);
    yk_zap(set, sizeof(*set));
    free(set);
}

/* Number of tokens in set (0 for NULL). */
size_t
yk_import_set_count(const yk_import_set *set)
{
    return set != NULL ? set->count : 0;
}

/* Token i of set, or NULL out of range. */
const yk_import_token *
yk_import_set_get(const yk_import_set *set, size_t i)
{
    if (set == NULL || i >= set->count)
        return NULL;
    return &set->tokens[i];
}

/* The format set was parsed as. */
int
yk_import_set_format(const yk_import_set *set)
{
    return set != NULL ? set->format : YK_IMPORT_AUTO;
}

/* Order tokens by public id, then line (qsort callback). */
static int
cmp_token_ptr(const void *a, const void *b)
{
    const yk_import_token *ta = *(const yk_import_token *const *)a;
    const yk_import_token *tb = *(const yk_import_token *const *)b;
    int c = strcmp(ta->pubid, tb->pubid);

    if (c != 0)
        return c;
    return ta->line < tb->line ? -1 : ta->line > tb->line;
}

/* Refuse a public id that occurs twice in set, naming the earliest line
 * that repeats one and the line it repeats. */
static krb5_error_code
set_check_duplicates(const yk_import_set *set, errsink *es)
{
    const yk_import_token **idx = NULL;
    const yk_import_token *first = NULL, *second = NULL;
    krb5_error_code ret = 0;
    size_t i;

    if (set->count < 2)
        return 0;
    idx = calloc(set->count, sizeof(*idx));
    if (idx == NULL) {
        ret = nomem(es);
        goto cleanup;
    }
    for (i = 0; i < set->count; i++)
        idx[i] = &set->tokens[i];
    qsort(idx, set->count, sizeof(*idx), cmp_token_ptr);
    /* Sorted by id then line: the earliest repeat is the smallest later
     * line among equal neighbours (a group's second member). */
    for (i = 1; i < set->count; i++) {
        if (strcmp(idx[i]->pubid, idx[i - 1]->pubid) != 0)
            continue;
        if (second == NULL || idx[i]->line < second->line) {
            first = idx[i - 1];
            second = idx[i];
        }
    }
    if (second != NULL)
        ret = report(es, "line %zu: public id %s is already on line %zu "
                     "(one token, one principal: remove one of the lines)",
                     second->line, second->pubid, first->line);

cleanup:
    free(idx);
    return ret;
}

/* ---- ykman CSV / Yubico format --------------------------------------- */

/* Parse one data line of a ykman CSV into a new token of set.  first and
 * autodetected make a first line that is nowhere near a CSV row (fewer
 * than 5 fields) say that the format is not recognised at all. */
static krb5_error_code
parse_csv_row(yk_import_set *set, span line, size_t lineno,
              int first, int autodetected, errsink *es)
{
    krb5_error_code ret;
    span f[MAX_FIELDS];
    yk_import_token *t;
    size_t n;
    int v;

    n = split_commas(line, f, MAX_FIELDS);
    if (n != CSV_FIELDS) {
        if (first && autodetected && n < CSV_FIELDS - 2)
            return report(es, "line %zu: not a recognised import file "
                          "(expected ykman CSV rows of 7 fields, a "
                          "Traditional log starting with \"LOGGING START\" "
                          "or a yubikey-ksm file starting with \"# ykksm "
                          "1\")", lineno);
        return report(es, "line %zu: expected 7 fields (serial,public id,"
                      "private id,AES key,access code,timestamp, with a "
                      "trailing comma), found %s%zu", lineno,
                      n > MAX_FIELDS ? "more than " : "",
                      n > MAX_FIELDS ? (size_t)MAX_FIELDS : n);
    }
    if (f[6].len != 0)
        return report(es, "line %zu, field 7: expected nothing after the "
                      "timestamp's comma", lineno);

    /* The personalization tool logs other modes in this format too. */
    if (f[2].len == 0 || (all_digits(f[2]) && f[2].len <= SEED_DIGITS_MAX)
        || (all_hex(f[3]) && f[3].len == HMAC_KEY_HEX))
        return report(es, "line %zu: not a Yubico OTP row (an empty or "
                      "decimal private-id column or a 40-digit key: static "
                      "password, OATH-HOTP or challenge-response); remove "
                      "the row: nothing is imported unless the whole file "
                      "parses", lineno);

    ret = set_reserve(set, es);
    if (ret)
        return ret;
    t = &set->tokens[set->count];
    memset(t, 0, sizeof(*t));
    v = v_digits(f[0], YK_IMPORT_SERIAL_MAX, 1, t->serial);
    if (v != V_OK)
        return field_fail(es, lineno, 1, "serial", v, EXPECT_SERIAL_OPT,
                          f[0]);
    v = v_pubid(f[1], t->pubid);
    if (v != V_OK)
        return field_fail(es, lineno, 2, "public id", v, EXPECT_PUBID, f[1]);
    v = v_hex(f[2], t->private_id, YK_PRIVID_LEN);
    if (v != V_OK)
        return field_fail(es, lineno, 3, "private id", v, EXPECT_PRIVID,
                          f[2]);
    v = v_hex(f[3], t->aes_key, YK_AES_KEY_LEN);
    if (v != V_OK)
        return field_fail(es, lineno, 4, "AES key", v, EXPECT_KEY, f[3]);
    v = v_access(f[4], 1, &t->has_access_code, t->access_code);
    if (v != V_OK)
        return field_fail(es, lineno, 5, "access code", v, EXPECT_ACCESS,
                          f[4]);
    v = v_time(f[5]);
    if (v != V_OK)
        return field_fail(es, lineno, 6, "timestamp", v, EXPECT_TIME, f[5]);
    t->line = lineno;
    set->count++;
    return 0;
}

/* Parse every line from c as ykman CSV rows into set. */
static krb5_error_code
parse_csv(yk_import_set *set, cursor *c, int autodetected, errsink *es)
{
    krb5_error_code ret;
    span line;
    int first = 1;

    while (next_nonblank(c, &line)) {
        ret = parse_csv_row(set, line, c->lineno, first, autodetected, es);
        if (ret)
            return ret;
        first = 0;
    }
    return 0;
}

/* ---- Traditional log ------------------------------------------------- */

/* 1 if f is one of the Traditional log's event types. */
static int
trad_known_event(span f)
{
    size_t i;

    for (i = 0; trad_events[i] != NULL; i++) {
        if (span_is(f, trad_events[i]))
            return 1;
    }
    return 0;
}

/* 1 if line is a "LOGGING START" line. */
static int
trad_is_start(span line)
{
    span head = line;

    head.len = strlen(logging_start);
    return span_is(line, logging_start) ||
        (line.len > head.len && span_starts(line, logging_start) &&
         line.p[head.len] == ',');
}

/* 1 if line looks like a Traditional log line (for auto-detection). */
static int
trad_looks_like(span line)
{
    span f = line;
    const char *comma;

    if (trad_is_start(line))
        return 1;
    comma = memchr(line.p, ',', line.len);
    if (comma == NULL)
        return 0;
    f.len = (size_t)(comma - line.p);
    return trad_known_event(f);
}

/* Parse one row of a Traditional log into a new token of set: the event
 * type first, the 16 fields after the local time counted from the end. */
static krb5_error_code
parse_trad_row(yk_import_set *set, span line, size_t lineno, errsink *es)
{
    static const char *const bool_names[] = {
        "OATH fixed modhex 1", "OATH fixed modhex 2", "OATH fixed modhex"
    };
    static const char *const flag_names[] = {
        "strong password 1", "strong password 2", "send reference",
        "challenge button trigger", "HMAC less than 64"
    };
    span f[MAX_FIELDS];
    yk_import_token *t;
    int unused, v;
    size_t n, b, i;
    unsigned char scratch[YK_IMPORT_ACCESS_CODE_LEN];
    krb5_error_code ret = 0;

    n = split_commas(line, f, MAX_FIELDS);
    if (n > MAX_FIELDS)
        return report(es, "line %zu: more than %d fields", lineno,
                      MAX_FIELDS);
    if (n < TRAD_FIELDS)
        return report(es, "line %zu: expected 18 fields (more when the "
                      "time holds commas), found %zu", lineno, n);
    if (!span_is(f[0], yubico_otp_event)) {
        if (trad_known_event(f[0]))
            return report(es, "line %zu: a row of type \"%.*s\", not "
                          "\"Yubico OTP\"; remove the row: nothing is "
                          "imported unless the whole file parses", lineno,
                          (int)f[0].len, f[0].p);
        return report(es, "line %zu, field 1 (event type): expected "
                      "\"Yubico OTP\", found an unknown event type", lineno);
    }
    /* The time is fields 1 .. n - 17, commas and all. */
    if (n == TRAD_FIELDS && f[1].len == 0)
        return field_fail(es, lineno, 2, "time", V_EMPTY, "the local time",
                          f[1]);
    b = n - TRAD_TAIL;

    ret = set_reserve(set, es);
    if (ret)
        return ret;
    t = &set->tokens[set->count];
    memset(t, 0, sizeof(*t));
    if (span_is(f[b], "1") || span_is(f[b], "2")) {
        t->slot = f[b].p[0] - '0';
    } else {
        ret = field_fail(es, lineno, b + 1, "slot", f[b].len ? V_VALUE :
                         V_EMPTY, "1 or 2", f[b]);
        goto cleanup;
    }
    v = v_pubid(f[b + 1], t->pubid);
    if (v != V_OK) {
        ret = field_fail(es, lineno, b + 2, "public id", v, EXPECT_PUBID,
                         f[b + 1]);
        goto cleanup;
    }
    v = v_hex(f[b + 2], t->private_id, YK_PRIVID_LEN);
    if (v != V_OK) {
        ret = field_fail(es, lineno, b + 3, "private id", v, EXPECT_PRIVID,
                         f[b + 2]);
        goto cleanup;
    }
    v = v_hex(f[b + 3], t->aes_key, YK_AES_KEY_LEN);
    if (v != V_OK) {
        ret = field_fail(es, lineno, b + 4, "AES key", v, EXPECT_KEY,
                         f[b + 3]);
        goto cleanup;
    }
    /* The code the slot was programmed with: checked, not kept. */
    v = v_access(f[b + 4], 1, &unused, scratch);
    if (v != V_OK) {
        ret = field_fail(es, lineno, b + 5, "current access code", v,
                         EXPECT_ACCESS, f[b + 4]);
        goto cleanup;
    }
    v = v_access(f[b + 5], 1, &t->has_access_code, t->access_code);
    if (v != V_OK) {
        ret = field_fail(es, lineno, b + 6, "new access code", v,
                         EXPECT_ACCESS, f[b + 5]);
        goto cleanup;
    }
    for (i = 0; i < 3; i++) {
        v = v_bool(f[b + 6 + i]);
        if (v != V_OK) {
            ret = field_fail(es, lineno, b + 7 + i, bool_names[i], v,
                             EXPECT_BOOL, f[b + 6 + i]);
            goto cleanup;
        }
    }
    if (!span_is(f[b + 9], "0") && !span_is(f[b + 9], "6") &&
        !span_is(f[b + 9], "8")) {
        ret = field_fail(es, lineno, b + 10, "HOTP digits",
                         f[b + 9].len ? V_VALUE : V_EMPTY, "0, 6 or 8",
                         f[b + 9]);
        goto cleanup;
    }
    v = v_digits(f[b + 10], SEED_DIGITS_MAX, 0, NULL);
    if (v != V_OK) {
        ret = field_fail(es, lineno, b + 11, "moving factor seed", v,
                         "a decimal number", f[b + 10]);
        goto cleanup;
    }
    for (i = 0; i < 5; i++) {
        v = v_bool(f[b + 11 + i]);
        if (v != V_OK) {
            ret = field_fail(es, lineno, b + 12 + i, flag_names[i], v,
                             EXPECT_BOOL, f[b + 11 + i]);
            goto cleanup;
        }
    }
    t->line = lineno;
    set->count++;

cleanup:
    yk_zap(scratch, sizeof(scratch));
    return ret;
}

/* Parse every line from c as a Traditional log into set. */
static krb5_error_code
parse_traditional(yk_import_set *set, cursor *c, errsink *es)
{
    krb5_error_code ret;
    span line;

    while (next_nonblank(c, &line)) {
        if (trad_is_start(line))
            continue;
        ret = parse_trad_row(set, line, c->lineno, es);
        if (ret)
            return ret;
    }
    return 0;
}

/* ---- yubikey-ksm ----------------------------------------------------- */

/* Parse one data line (comment already cut) of a yubikey-ksm file into a
 * new token of set. */
static krb5_error_code
parse_ksm_row(yk_import_set *set, span line, size_t lineno, errsink *es)
{
    krb5_error_code ret;
    span f[MAX_FIELDS];
    yk_import_token *t;
    size_t n;
    int v;

    n = split_commas(line, f, MAX_FIELDS);
    if (n < KSM_FIELDS_MIN || n > KSM_FIELDS_MAX)
        return report(es, "line %zu: expected 7 or 8 fields (serialNr,"
                      "publicName,internalName,aesKey,lockCode,created,"
                      "accessed[,progflags]), found %s%zu", lineno,
                      n > MAX_FIELDS ? "more than " : "",
                      n > MAX_FIELDS ? (size_t)MAX_FIELDS : n);

    ret = set_reserve(set, es);
    if (ret)
        return ret;
    t = &set->tokens[set->count];
    memset(t, 0, sizeof(*t));
    v = v_digits(f[0], YK_IMPORT_SERIAL_MAX, 0, t->serial);
    if (v != V_OK)
        return field_fail(es, lineno, 1, "serialNr", v, EXPECT_SERIAL, f[0]);
    v = v_pubid(f[1], t->pubid);
    if (v != V_OK)
        return field_fail(es, lineno, 2, "publicName", v, EXPECT_PUBID,
                          f[1]);
    v = v_hex(f[2], t->private_id, YK_PRIVID_LEN);
    if (v != V_OK)
        return field_fail(es, lineno, 3, "internalName", v, EXPECT_PRIVID,
                          f[2]);
    v = v_hex(f[3], t->aes_key, YK_AES_KEY_LEN);
    if (v != V_OK)
        return field_fail(es, lineno, 4, "aesKey", v, EXPECT_KEY, f[3]);
    v = v_access(f[4], 0, &t->has_access_code, t->access_code);
    if (v != V_OK)
        return field_fail(es, lineno, 5, "lockCode", v, EXPECT_LOCK, f[4]);
    v = v_time(f[5]);
    if (v != V_OK)
        return field_fail(es, lineno, 6, "created", v, EXPECT_TIME, f[5]);
    v = v_time(f[6]);
    if (v != V_OK)
        return field_fail(es, lineno, 7, "accessed", v, EXPECT_TIME, f[6]);
    if (n == KSM_FIELDS_MAX) {
        v = v_digits(f[7], PROGFLAGS_DIGITS_MAX, 1, NULL);
        if (v != V_OK)
            return field_fail(es, lineno, 8, "progflags", v,
                              "nothing or a decimal number", f[7]);
    }
    t->line = lineno;
    set->count++;
    return 0;
}

/* Parse a yubikey-ksm file from c into set: the "# ykksm 1" line first,
 * then data lines; '#' starts a comment anywhere. */
static krb5_error_code
parse_ksm(yk_import_set *set, cursor *c, errsink *es)
{
    krb5_error_code ret;
    span line;
    const char *hash;

    if (!next_nonblank(c, &line))
        return 0;
    if (!span_is(line, ksm_header)) {
        if (span_starts(line, ksm_magic))
            return report(es, "line %zu: unsupported yubikey-ksm format "
                          "version (only \"# ykksm 1\" is known)",
                          c->lineno);
        return report(es, "line %zu: not a yubikey-ksm file (the first "
                      "line must be \"# ykksm 1\")", c->lineno);
    }
    while (next_nonblank(c, &line)) {
        hash = memchr(line.p, '#', line.len);
        if (hash != NULL) {
            line.len = (size_t)(hash - line.p);
            while (line.len > 0 && (line.p[line.len - 1] == ' ' ||
                                    line.p[line.len - 1] == '\t'))
                line.len--;
            if (line.len == 0)
                continue;
        }
        ret = parse_ksm_row(set, line, c->lineno, es);
        if (ret)
            return ret;
    }
    return 0;
}

/* ---- the entry points ------------------------------------------------ */

/* Map a format name to YK_IMPORT_*. */
krb5_error_code
yk_import_format_parse(const char *name, int *format_out)
{
    int format;

    if (name == NULL || format_out == NULL)
        return EINVAL;
    if (strcasecmp(name, "auto") == 0)
        format = YK_IMPORT_AUTO;
    else if (strcasecmp(name, "ykman") == 0 || strcasecmp(name, "csv") == 0
             || strcasecmp(name, "yubico") == 0)
        format = YK_IMPORT_YKMAN_CSV;
    else if (strcasecmp(name, "traditional") == 0)
        format = YK_IMPORT_TRADITIONAL;
    else if (strcasecmp(name, "ksm") == 0 || strcasecmp(name, "ykksm") == 0)
        format = YK_IMPORT_KSM;
    else
        return EINVAL;
    *format_out = format;
    return 0;
}

/* The canonical name of a format. */
const char *
yk_import_format_name(int format)
{
    switch (format) {
    case YK_IMPORT_AUTO:
        return "auto";
    case YK_IMPORT_YKMAN_CSV:
        return "ykman";
    case YK_IMPORT_TRADITIONAL:
        return "traditional";
    case YK_IMPORT_KSM:
        return "ksm";
    default:
        return "unknown";
    }
}

/* Refuse what is not text to parse at all: an OpenPGP file, armored or
 * binary (or another binary file).  line is the first non-blank line. */
static krb5_error_code
refuse_non_text(span line, size_t lineno, errsink *es)
{
    if ((unsigned char)line.p[0] >= 0x80 || line.p[0] == '\0')
        return report(es, "line %zu: binary data, not text (an OpenPGP-"
                      "encrypted file? decrypt it first with \"gpg "
                      "--decrypt\"; a UTF-16 file must be converted to "
                      "UTF-8)", lineno);
    if (span_starts(line, armor_prefix))
        return report(es, "line %zu: an OpenPGP-armored file (\"-----BEGIN "
                      "PGP ...\"): decrypt it first with \"gpg --decrypt\", "
                      "import the plain text, then wipe that copy", lineno);
    return 0;
}

/* Parse an import file; see importfile.h. */
krb5_error_code
yk_import_parse(const char *buf, size_t len, int format,
                yk_import_set **set_out, char *errbuf, size_t errlen)
{
    errsink es = { errbuf, errlen };
    yk_import_set *set = NULL;
    cursor c, peek;
    span first;
    krb5_error_code ret = 0;
    int detected;

    if (errbuf != NULL && errlen > 0)
        errbuf[0] = '\0';
    if (set_out == NULL || (buf == NULL && len > 0) ||
        format < YK_IMPORT_AUTO || format > YK_IMPORT_KSM) {
        ret = report(&es, "invalid arguments to the import parser");
        goto cleanup;
    }
    set = calloc(1, sizeof(*set));
    if (set == NULL) {
        ret = nomem(&es);
        goto cleanup;
    }

    cursor_init(&c, buf, len);
    peek = c;
    if (!next_nonblank(&peek, &first)) {
        ret = report(&es, "the file holds no tokens (it is empty)");
        goto cleanup;
    }
    ret = refuse_non_text(first, peek.lineno, &es);
    if (ret)
        goto cleanup;

    detected = format;
    if (format == YK_IMPORT_AUTO) {
        if (span_starts(first, ksm_magic))
            detected = YK_IMPORT_KSM;
        else if (trad_looks_like(first))
            detected = YK_IMPORT_TRADITIONAL;
        else
            detected = YK_IMPORT_YKMAN_CSV;
    }
    set->format = detected;

    if (detected == YK_IMPORT_KSM)
        ret = parse_ksm(set, &c, &es);
    else if (detected == YK_IMPORT_TRADITIONAL)
        ret = parse_traditional(set, &c, &es);
    else
        ret = parse_csv(set, &c, format == YK_IMPORT_AUTO, &es);
    if (ret)
        goto cleanup;
    if (set->count == 0) {
        ret = report(&es, "the file holds no tokens (a %s file without "
                     "data lines)", yk_import_format_name(detected));
        goto cleanup;
    }
    ret = set_check_duplicates(set, &es);
    if (ret)
        goto cleanup;

    *set_out = set;
    set = NULL;

cleanup:
    yk_import_set_free(set);
    return ret;
}

/* ---- the --map file -------------------------------------------------- */

/* Split line at runs of blanks into f (room for max); returns the number
 * of fields, or max + 1 when there are more. */
static size_t
split_blanks(span line, span *f, size_t max)
{
    size_t i = 0, n = 0, start;

    for (;;) {
        while (i < line.len && (line.p[i] == ' ' || line.p[i] == '\t'))
            i++;
        if (i == line.len)
            return n;
        if (n == max)
            return max + 1;
        start = i;
        while (i < line.len && line.p[i] != ' ' && line.p[i] != '\t')
            i++;
        f[n].p = line.p + start;
        f[n].len = i - start;
        n++;
    }
}

/* Free map; NULL is accepted. */
void
yk_import_map_free(yk_import_map *map)
{
    size_t i;

    if (map == NULL)
        return;
    for (i = 0; i < map->count; i++)
        free(map->entries[i].principal);
    free(map->entries);
    free(map->sorted);
    free(map);
}

/* Order map entries by public id, then line (qsort callback). */
static int
cmp_entry_ptr(const void *a, const void *b)
{
    const map_entry *ea = *(const map_entry *const *)a;
    const map_entry *eb = *(const map_entry *const *)b;
    int c = strcmp(ea->pubid, eb->pubid);

    if (c != 0)
        return c;
    return ea->line < eb->line ? -1 : ea->line > eb->line;
}

/* Parse one non-comment line of a map file into a new entry of map. */
static krb5_error_code
parse_map_line(yk_import_map *map, span line, size_t lineno, errsink *es)
{
    span f[2];
    map_entry *grown = NULL, *e;
    size_t n, i, newcap;
    int v;

    n = split_blanks(line, f, 2);
    if (n != 2)
        return report(es, "line %zu: expected \"PUBLIC-ID PRINCIPAL\", "
                      "found %s%zu field%s", lineno, n > 2 ? "more than " :
                      "", n > 2 ? (size_t)2 : n, n == 1 ? "" : "s");
    if (f[1].len > YK_IMPORT_PRINCIPAL_MAX)
        return report(es, "line %zu, field 2 (principal): longer than %d "
                      "bytes", lineno, YK_IMPORT_PRINCIPAL_MAX);
    for (i = 0; i < f[1].len; i++) {
        unsigned char ch = (unsigned char)f[1].p[i];

        if (ch < 0x20 || ch == 0x7f)
            return report(es, "line %zu, field 2 (principal): a control "
                          "character", lineno);
    }
    if (map->count == map->cap) {
        newcap = map->cap == 0 ? MAP_INITIAL_CAP : map->cap * 2;
        grown = realloc(map->entries, newcap * sizeof(*grown));
        if (grown == NULL)
            return nomem(es);
        map->entries = grown;
        map->cap = newcap;
    }
    e = &map->entries[map->count];
    memset(e, 0, sizeof(*e));
    v = v_pubid(f[0], e->pubid);
    if (v != V_OK)
        return field_fail(es, lineno, 1, "public id", v, EXPECT_PUBID, f[0]);
    e->principal = malloc(f[1].len + 1);
    if (e->principal == NULL)
        return nomem(es);
    memcpy(e->principal, f[1].p, f[1].len);
    e->principal[f[1].len] = '\0';
    e->line = lineno;
    map->count++;
    return 0;
}

/* Parse a --map file; see importfile.h. */
krb5_error_code
yk_import_parse_map(const char *buf, size_t len, yk_import_map **map_out,
                    char *errbuf, size_t errlen)
{
    errsink es = { errbuf, errlen };
    yk_import_map *map = NULL;
    krb5_error_code ret = 0;
    cursor c;
    span line;
    size_t i, skip;

    if (errbuf != NULL && errlen > 0)
        errbuf[0] = '\0';
    if (map_out == NULL || (buf == NULL && len > 0)) {
        ret = report(&es, "invalid arguments to the map parser");
        goto cleanup;
    }
    map = calloc(1, sizeof(*map));
    if (map == NULL) {
        ret = nomem(&es);
        goto cleanup;
    }
    cursor_init(&c, buf, len);
    while (next_nonblank(&c, &line)) {
        for (skip = 0; skip < line.len &&
                 (line.p[skip] == ' ' || line.p[skip] == '\t'); skip++)
            ;
        if (skip < line.len && line.p[skip] == '#')
            continue;
        if (map->count == 0 && (unsigned char)line.p[skip] >= 0x80) {
            ret = report(&es, "line %zu: binary data, not a text map file",
                         c.lineno);
            goto cleanup;
        }
        ret = parse_map_line(map, line, c.lineno, &es);
        if (ret)
            goto cleanup;
    }
    if (map->count == 0) {
        ret = report(&es, "the map file holds no \"PUBLIC-ID PRINCIPAL\" "
                     "lines");
        goto cleanup;
    }

    map->sorted = calloc(map->count, sizeof(*map->sorted));
    if (map->sorted == NULL) {
        ret = nomem(&es);
        goto cleanup;
    }
    for (i = 0; i < map->count; i++)
        map->sorted[i] = &map->entries[i];
    qsort(map->sorted, map->count, sizeof(*map->sorted), cmp_entry_ptr);
    /* Sorted by id then line: the earliest repeat is the smallest second
     * line among equal neighbours. */
    {
        const map_entry *first = NULL, *second = NULL;

        for (i = 1; i < map->count; i++) {
            if (strcmp(map->sorted[i]->pubid, map->sorted[i - 1]->pubid) != 0)
                continue;
            if (second == NULL || map->sorted[i]->line < second->line) {
                first = map->sorted[i - 1];
                second = map->sorted[i];
            }
        }
        if (second != NULL) {
            ret = report(&es, "line %zu: public id %s is already mapped on "
                         "line %zu", second->line, second->pubid,
                         first->line);
            goto cleanup;
        }
    }

    *map_out = map;
    map = NULL;

cleanup:
    yk_import_map_free(map);
    return ret;
}

/* Number of entries of map. */
size_t
yk_import_map_count(const yk_import_map *map)
{
    return map != NULL ? map->count : 0;
}

/* Public id of entry i, or NULL. */
const char *
yk_import_map_pubid(const yk_import_map *map, size_t i)
{
    if (map == NULL || i >= map->count)
        return NULL;
    return map->entries[i].pubid;
}

/* Principal of entry i, or NULL. */
const char *
yk_import_map_principal(const yk_import_map *map, size_t i)
{
    if (map == NULL || i >= map->count)
        return NULL;
    return map->entries[i].principal;
}

/* Line of entry i, or 0. */
size_t
yk_import_map_line(const yk_import_map *map, size_t i)
{
    if (map == NULL || i >= map->count)
        return 0;
    return map->entries[i].line;
}

/* Binary search of map's sorted entries for pubid. */
const char *
yk_import_map_lookup(const yk_import_map *map, const char *pubid)
{
    size_t lo = 0, hi, mid;
    int c;

    if (map == NULL || pubid == NULL || map->sorted == NULL)
        return NULL;
    hi = map->count;
    while (lo < hi) {
        mid = lo + (hi - lo) / 2;
        c = strcmp(pubid, map->sorted[mid]->pubid);
        if (c == 0)
            return map->sorted[mid]->principal;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

/* Check that every token of set has a map line. */
krb5_error_code
yk_import_map_check(const yk_import_map *map, const yk_import_set *set,
                    char *errbuf, size_t errlen)
{
    errsink es = { errbuf, errlen };
    size_t i;

    if (errbuf != NULL && errlen > 0)
        errbuf[0] = '\0';
    if (map == NULL || set == NULL)
        return report(&es, "invalid arguments to the map check");
    for (i = 0; i < set->count; i++) {
        if (yk_import_map_lookup(map, set->tokens[i].pubid) == NULL)
            return report(&es, "line %zu: public id %s has no line in the "
                          "map file", set->tokens[i].line,
                          set->tokens[i].pubid);
    }
    return 0;
}
