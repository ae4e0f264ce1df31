/* SPDX-License-Identifier: MIT */
/* rfc6560.c: strict DER codec of the RFC 6560 OTP padata (141, 142). */

/*
 * Wire layout (RFC 6560 section 4, with the tagging of MIT krb5 1.20's
 * ASN.1 module, checked against MIT's own encoder; this comment is the only
 * description in the tree).  TLV notation, hexadecimal tag bytes; L is one
 * octet below 128, else 0x81 xx (128..255) or 0x82 xx xx (256..65535).
 *
 * The RFC 6560 fields carry IMPLICIT context tags: [n] replaces the
 * field's universal tag, giving 8n for a primitive value and An for a
 * SEQUENCE.  The EncryptedData inside PA-OTP-REQUEST keeps RFC 4120's
 * EXPLICIT tags inside its implicit [2].  OTPFlags is a KerberosFlags BIT
 * STRING: 05 00 b0 b1 b2 b3, always 32 bits, bit 0 (reserved) being the
 * top bit of b0: nextOTP 0x40000000, combine 0x20000000, collect-pin
 * 0x10000000, do-not-collect-pin 0x08000000, must-encrypt-nonce
 * 0x04000000, separate-pin-required 0x02000000, check-digit 0x01000000.
 *
 * PA-OTP-CHALLENGE (padata 141, KDC to client):
 *   30 L
 *     80 L nonce             OCTET STRING, 1..64 bytes
 *     81 L otp-service       UTF8String, optional, <= 64
 *     A2 L                   otp-tokenInfo, SEQUENCE OF, 1..8 entries of
 *       30 L                   OTP-TOKENINFO
 *         80 05 00 b0..b3        flags
 *         81 L otp-vendor        UTF8String, optional, <= 64
 *         82 L otp-challenge     OCTET STRING, optional, <= 64
 *         83 L otp-length        INTEGER, optional
 *         84 L otp-format        INTEGER, optional
 *         85 L otp-tokenID       OCTET STRING, optional, <= 64
 *         86 L otp-algID         UTF8String, optional, <= 64
 *         [7] supportedHashAlg, [8] iterationCount: refused
 *     83 L salt              KerberosString, optional, <= 256
 *     84 L s2kparams         OCTET STRING, optional, <= 64
 *
 *   Ours is 30 L | 80 L nonce | A2 L 30 L 80 05 00 00 00 00 00
 *   [81 L vendor]: one tokenInfo, flags 0, at most a printable vendor.
 *
 * PA-OTP-REQUEST (padata 142, client to KDC):
 *   30 L
 *     80 05 00 b0..b3        flags (MIT's client sends 0)
 *     81 L nonce             OCTET STRING, optional, 1..64 bytes
 *     A2 L                   encData, an EncryptedData:
 *       A0 L 02 L etype        [0] INTEGER (Int32)
 *       A1 L 02 L kvno         [1] INTEGER, optional (MIT: absent)
 *       A2 L 04 L cipher       [2] OCTET STRING, 1..256 bytes
 *     [3] hashAlg: refused
 *     84 L iterationCount    INTEGER, optional: MIT's client always sends
 *                            0 (its request is zero-filled, and only -1
 *                            means absent); meaningless without hashAlg,
 *                            so accepted and ignored
 *     85 L otp-value         OCTET STRING, optional, <= 256
 *     86 L otp-pin           UTF8String, optional, <= 256
 *     [7] otp-challenge, [8] otp-time, [9] otp-counter: refused
 *     8A L otp-format        INTEGER, optional
 *     8B L otp-tokenID       OCTET STRING, optional, <= 64
 *     8C L otp-algID         UTF8String, optional, <= 64
 *     8D L otp-vendor        UTF8String, optional, <= 64
 *
 * PA-OTP-ENC-REQUEST, the plaintext of encData (encrypted by the client
 * under the FAST armor key, key usage 45):
 *   30 L 80 L nonce          OCTET STRING, 1..64 bytes
 *
 * Strictness: the decoders accept exactly what the encoders write, so
 * every accepted message re-encodes to the same bytes.
 * - Lengths definite and minimal; the indefinite form (80) is refused;
 *   three or more length octets are TOO_LONG (nothing here nears 64 KiB).
 * - Every tag byte is checked whole, class and constructed bit included
 *   (a constructed OCTET STRING is BER, not DER); high tag numbers (1F)
 *   are refused.
 * - Fields in increasing tag order, each at most once, none unknown (the
 *   RFC's extension markers are not honoured), nothing after the outer
 *   SEQUENCE or after the value inside an explicit tag.
 * - INTEGERs: 1..4 octets of minimal two's complement (Int32).  kvno too:
 *   MIT writes its unsigned kvno as a signed 32-bit INTEGER.
 * - OTPFlags: exactly the five octets above (RFC 4120 5.2.8 has senders
 *   send 32 bits; X.690's trimming of trailing zero bits is not applied,
 *   as nowhere in Kerberos).  Any flag value is accepted: policy is the
 *   caller's.
 * - Strings are bytes: UTF8String contents are not validated (MIT does
 *   not either, and a password typed on a Latin-1 terminal must reach the
 *   KDC as typed).  Present but empty optional strings are accepted (MIT
 *   omits them instead).
 * Errors: YK_ERR_RFC6560_FORMAT for anything malformed (truncation
 * included), YK_ERR_RFC6560_TOO_LONG for a value over its bound or a
 * ninth tokenInfo, YK_ERR_RFC6560_UNSUPPORTED for the refused fields.
 */

#include <config.h>

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "rfc6560.h"

/* Tag bytes: class | constructed | number. */
#define DER_INTEGER 0x02
#define DER_OCTET_STRING 0x04
#define DER_SEQUENCE 0x30
#define DER_CLASS_MASK 0xC0
#define DER_CONTEXT 0x80
#define DER_CONSTRUCTED 0x20
#define DER_NUMBER_MASK 0x1F      /* also the high-tag-number form */
#define CTX(n) ((uint8_t)(DER_CONTEXT | (n)))
#define CTX_CONS(n) ((uint8_t)(DER_CONTEXT | DER_CONSTRUCTED | (n)))

/* Length octets. */
#define DER_LEN_SHORT_MAX 0x7F
#define DER_LEN_INDEFINITE 0x80
#define DER_LEN_ONE_OCTET 0x81
#define DER_LEN_TWO_OCTETS 0x82
#define DER_LEN_RESERVED 0xFF
#define DER_LEN_MAX 0xFFFF

#define DER_INT32_LEN 4
#define DER_FLAGS_LEN 5           /* unused-bits octet (0) + 32 bits */

/* EncryptedData's etype and kvno are read and written as 32 bits. */
_Static_assert(sizeof(krb5_enctype) == 4 && sizeof(krb5_kvno) == 4,
               "etype and kvno are 32-bit");

/* A read cursor over DER. */
typedef struct {
    const uint8_t *p;
    size_t left;
} der_reader;

/* One TLV: its tag byte and its contents (inside the input). */
typedef struct {
    uint8_t tag;
    const uint8_t *v;
    size_t len;
} der_tlv;

/* A write cursor; with buf NULL it only counts (to measure a body). */
typedef struct {
    uint8_t *buf;
    size_t cap;
    size_t len;
} der_writer;

/* Writes the contents of a constructed value from arg. */
typedef void (*der_body_fn)(der_writer *w, const void *arg);

/* --- the messages as field tables ---------------------------------------- */

/*
 * Each SEQUENCE is a table of its fields in tag order; one decoder, one
 * encoder and one bounds check walk every table.  A field's value lives at
 * offset off of the C structure the table describes.
 */
enum field_kind {
    F_FLAGS,      /* [n] IMPLICIT OTPFlags: uint32_t */
    F_DATA,       /* [n] IMPLICIT string, required: krb5_data */
    F_OPT,        /* [n] IMPLICIT string, optional: yk_rfc6560_opt */
    F_OPTINT,     /* [n] IMPLICIT INTEGER, optional: yk_rfc6560_optint */
    F_XINT,       /* [n] EXPLICIT INTEGER: 32 bits (optional when has_off
                   * names its krb5_boolean) */
    F_XDATA,      /* [n] EXPLICIT OCTET STRING, required: krb5_data */
    F_SEQ,        /* [n] IMPLICIT SEQUENCE of the fields of sub, whose
                   * offsets are in the same structure */
    F_LIST,       /* [n] IMPLICIT SEQUENCE OF SEQUENCE { sub }: the
                   * challenge's tokenInfo list */
    F_REFUSED     /* known, not supported: YK_ERR_RFC6560_UNSUPPORTED */
};

#define NO_OFF ((size_t)-1)
#define FIELDS_MAX 32             /* fields per table: bits of a mask */

typedef struct fieldset fieldset;

/* One field of a SEQUENCE. */
typedef struct {
    int num;                      /* context tag number */
    enum field_kind kind;
    krb5_boolean required;
    size_t off;                   /* where the value is */
    size_t has_off;               /* F_XINT: its presence flag, or NO_OFF */
    size_t min, max;              /* string bounds */
    const fieldset *sub;          /* F_SEQ, F_LIST */
} field;

/* A SEQUENCE: its fields in tag order. */
struct fieldset {
    const field *f;
    size_t n;
};

/* A table and the structure it describes, as one body_fields argument. */
typedef struct {
    const fieldset *set;
    const void *obj;
} fieldset_arg;

#define FLAGS(num, type, m) \
    { (num), F_FLAGS, TRUE, offsetof(type, m), NO_OFF, 0, 0, NULL }
#define DATA(num, type, m, min, max) \
    { (num), F_DATA, TRUE, offsetof(type, m), NO_OFF, (min), (max), NULL }
#define OPT(num, type, m, min, max) \
    { (num), F_OPT, FALSE, offsetof(type, m), NO_OFF, (min), (max), NULL }
#define OPTINT(num, type, m) \
    { (num), F_OPTINT, FALSE, offsetof(type, m), NO_OFF, 0, 0, NULL }
#define REFUSED(num) \
    { (num), F_REFUSED, FALSE, 0, NO_OFF, 0, 0, NULL }
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* OTP-TOKENINFO. */
static const field tokeninfo_fields[] = {
    FLAGS(0, yk_rfc6560_tokeninfo, flags),
    OPT(1, yk_rfc6560_tokeninfo, vendor, 0, YK_RFC6560_STRING_MAX),
    OPT(2, yk_rfc6560_tokeninfo, challenge, 0, YK_RFC6560_STRING_MAX),
    OPTINT(3, yk_rfc6560_tokeninfo, length),
    OPTINT(4, yk_rfc6560_tokeninfo, format),
    OPT(5, yk_rfc6560_tokeninfo, token_id, 0, YK_RFC6560_STRING_MAX),
    OPT(6, yk_rfc6560_tokeninfo, alg_id, 0, YK_RFC6560_STRING_MAX),
    REFUSED(7),                   /* supportedHashAlg */
    REFUSED(8),                   /* iterationCount */
};
static const fieldset tokeninfo_set = { tokeninfo_fields,
                                        COUNT(tokeninfo_fields) };

/* PA-OTP-CHALLENGE. */
static const field challenge_fields[] = {
    DATA(0, yk_rfc6560_challenge, nonce, 1, YK_RFC6560_NONCE_MAX),
    OPT(1, yk_rfc6560_challenge, service, 0, YK_RFC6560_STRING_MAX),
    { 2, F_LIST, TRUE, 0, NO_OFF, 0, 0, &tokeninfo_set },
    OPT(3, yk_rfc6560_challenge, salt, 0, YK_RFC6560_VALUE_MAX),
    OPT(4, yk_rfc6560_challenge, s2kparams, 0, YK_RFC6560_STRING_MAX),
};
static const fieldset challenge_set = { challenge_fields,
                                        COUNT(challenge_fields) };

/* EncryptedData (RFC 4120, explicit tags), inside a request. */
static const field enc_data_fields[] = {
    { 0, F_XINT, TRUE, offsetof(yk_rfc6560_request, enc_data.enctype),
      NO_OFF, 0, 0, NULL },
    { 1, F_XINT, FALSE, offsetof(yk_rfc6560_request, enc_data.kvno),
      offsetof(yk_rfc6560_request, has_kvno), 0, 0, NULL },
    { 2, F_XDATA, TRUE, offsetof(yk_rfc6560_request, enc_data.ciphertext),
      NO_OFF, 1, YK_RFC6560_CIPHERTEXT_MAX, NULL },
};
static const fieldset enc_data_set = { enc_data_fields,
                                       COUNT(enc_data_fields) };

/* PA-OTP-REQUEST.  The refused fields answer tokenInfo fields we never
 * send; MIT's client never sends them at all. */
static const field request_fields[] = {
    FLAGS(0, yk_rfc6560_request, flags),
    OPT(1, yk_rfc6560_request, nonce, 1, YK_RFC6560_NONCE_MAX),
    { 2, F_SEQ, TRUE, 0, NO_OFF, 0, 0, &enc_data_set },
    REFUSED(3),                   /* hashAlg */
    OPTINT(4, yk_rfc6560_request, iteration_count),
    OPT(5, yk_rfc6560_request, otp_value, 0, YK_RFC6560_VALUE_MAX),
    OPT(6, yk_rfc6560_request, pin, 0, YK_RFC6560_VALUE_MAX),
    REFUSED(7),                   /* otp-challenge */
    REFUSED(8),                   /* otp-time */
    REFUSED(9),                   /* otp-counter */
    OPTINT(10, yk_rfc6560_request, format),
    OPT(11, yk_rfc6560_request, token_id, 0, YK_RFC6560_STRING_MAX),
    OPT(12, yk_rfc6560_request, alg_id, 0, YK_RFC6560_STRING_MAX),
    OPT(13, yk_rfc6560_request, vendor, 0, YK_RFC6560_STRING_MAX),
};
static const fieldset request_set = { request_fields,
                                      COUNT(request_fields) };

/* PA-OTP-ENC-REQUEST: the structure is the nonce's krb5_data itself. */
static const field enc_request_fields[] = {
    { 0, F_DATA, TRUE, 0, NO_OFF, 1, YK_RFC6560_NONCE_MAX, NULL },
};
static const fieldset enc_request_set = { enc_request_fields,
                                          COUNT(enc_request_fields) };

_Static_assert(COUNT(request_fields) <= FIELDS_MAX, "seen mask too small");

/* The tag byte field f must carry. */
static uint8_t
field_tag(const field *f)
{
    switch (f->kind) {
    case F_XINT:
    case F_XDATA:
    case F_SEQ:
    case F_LIST:
        return CTX_CONS(f->num);
    default:
        return CTX(f->num);
    }
}

/* --- reading ------------------------------------------------------------- */

/* Start a cursor over n bytes at p. */
static void
reader_init(der_reader *r, const void *p, size_t n)
{
    r->p = p;
    r->left = (p == NULL) ? 0 : n;
}

/* Read one TLV strictly into *t (see the layout comment for the rules). */
static krb5_error_code
der_get(der_reader *r, der_tlv *t)
{
    uint8_t tag, first;
    size_t len;

    if (r->left < 2)
        return YK_ERR_RFC6560_FORMAT;
    tag = r->p[0];
    first = r->p[1];
    r->p += 2;
    r->left -= 2;
    if ((tag & DER_NUMBER_MASK) == DER_NUMBER_MASK)
        return YK_ERR_RFC6560_FORMAT;

    if (first <= DER_LEN_SHORT_MAX) {
        len = first;
    } else if (first == DER_LEN_ONE_OCTET) {
        if (r->left < 1 || r->p[0] <= DER_LEN_SHORT_MAX)
            return YK_ERR_RFC6560_FORMAT;
        len = r->p[0];
        r->p++;
        r->left--;
    } else if (first == DER_LEN_TWO_OCTETS) {
        /* A leading zero octet would make the length non-minimal. */
        if (r->left < 2 || r->p[0] == 0)
            return YK_ERR_RFC6560_FORMAT;
        len = ((size_t)r->p[0] << 8) | r->p[1];
        r->p += 2;
        r->left -= 2;
    } else if (first == DER_LEN_INDEFINITE || first == DER_LEN_RESERVED) {
        return YK_ERR_RFC6560_FORMAT;
    } else {
        return YK_ERR_RFC6560_TOO_LONG;
    }

    if (len > r->left)
        return YK_ERR_RFC6560_FORMAT;
    t->tag = tag;
    t->v = r->p;
    t->len = len;
    r->p += len;
    r->left -= len;
    return 0;
}

/* The single TLV inside t's contents, which must have tag byte tag. */
static krb5_error_code
der_get_only(const der_tlv *t, uint8_t tag, der_tlv *inner)
{
    krb5_error_code ret;
    der_reader r;

    reader_init(&r, t->v, t->len);
    ret = der_get(&r, inner);
    if (ret)
        return ret;
    if (inner->tag != tag || r.left != 0)
        return YK_ERR_RFC6560_FORMAT;
    return 0;
}

/* A string of min..max bytes, as a view into the input. */
static krb5_error_code
get_string(const der_tlv *t, size_t min, size_t max, krb5_data *out)
{
    if (t->len > max)
        return YK_ERR_RFC6560_TOO_LONG;
    if (t->len < min)
        return YK_ERR_RFC6560_FORMAT;
    out->magic = KV5M_DATA;
    out->length = (unsigned int)t->len;
    out->data = (char *)t->v;
    return 0;
}

/* The contents of an INTEGER that fits an Int32, minimally encoded. */
static krb5_error_code
get_int32(const der_tlv *t, int32_t *out)
{
    const uint8_t *v = t->v;
    uint32_t u;
    size_t i;

    if (t->len < 1 || t->len > DER_INT32_LEN)
        return YK_ERR_RFC6560_FORMAT;
    /* A leading octet that only repeats the next one's sign bit. */
    if (t->len > 1 && ((v[0] == 0x00 && (v[1] & 0x80) == 0) ||
                       (v[0] == 0xFF && (v[1] & 0x80) != 0)))
        return YK_ERR_RFC6560_FORMAT;
    u = (v[0] & 0x80) ? 0xFFFFFFFFU : 0;
    for (i = 0; i < t->len; i++)
        u = (u << 8) | v[i];
    /* int32_t is two's complement by definition: copy the bits. */
    memcpy(out, &u, sizeof(*out));
    return 0;
}

/* OTPFlags: exactly 32 bits, none unused. */
static krb5_error_code
get_flags(const der_tlv *t, uint32_t *out)
{
    if (t->len != DER_FLAGS_LEN || t->v[0] != 0)
        return YK_ERR_RFC6560_FORMAT;
    *out = ((uint32_t)t->v[1] << 24) | ((uint32_t)t->v[2] << 16) |
        ((uint32_t)t->v[3] << 8) | (uint32_t)t->v[4];
    return 0;
}

static krb5_error_code get_fields(const der_tlv *t, const fieldset *set,
                                  void *obj);

/* The tokenInfo list (1..TOKENINFO_MAX SEQUENCEs) into the challenge
 * obj. */
static krb5_error_code
get_list(const der_tlv *t, const fieldset *sub, yk_rfc6560_challenge *ch)
{
    krb5_error_code ret;
    der_reader r;
    der_tlv e;

    reader_init(&r, t->v, t->len);
    while (r.left > 0) {
        if (ch->n_tokeninfo == YK_RFC6560_TOKENINFO_MAX)
            return YK_ERR_RFC6560_TOO_LONG;
        ret = der_get(&r, &e);
        if (ret)
            return ret;
        if (e.tag != DER_SEQUENCE)
            return YK_ERR_RFC6560_FORMAT;
        ret = get_fields(&e, sub, &ch->tokeninfo[ch->n_tokeninfo]);
        if (ret)
            return ret;
        ch->n_tokeninfo++;
    }
    /* SIZE (1..MAX): a challenge offers at least one token. */
    return (ch->n_tokeninfo > 0) ? 0 : YK_ERR_RFC6560_FORMAT;
}

/* Decode the value of field f (its tag already checked) into obj. */
static krb5_error_code
get_field(const der_tlv *t, const field *f, void *obj)
{
    krb5_error_code ret;
    char *p = (char *)obj + f->off;
    yk_rfc6560_opt *o = (yk_rfc6560_opt *)p;
    yk_rfc6560_optint *oi = (yk_rfc6560_optint *)p;
    der_tlv v;
    int32_t i32 = 0;

    switch (f->kind) {
    case F_FLAGS:
        return get_flags(t, (uint32_t *)p);
    case F_DATA:
        return get_string(t, f->min, f->max, (krb5_data *)p);
    case F_OPT:
        o->present = TRUE;
        return get_string(t, f->min, f->max, &o->data);
    case F_OPTINT:
        oi->present = TRUE;
        return get_int32(t, &oi->value);
    case F_XINT:
        ret = der_get_only(t, DER_INTEGER, &v);
        if (ret == 0)
            ret = get_int32(&v, &i32);
        /* Bit for bit: MIT writes its unsigned kvno as signed. */
        memcpy(p, &i32, sizeof(i32));
        if (f->has_off != NO_OFF)
            *(krb5_boolean *)((char *)obj + f->has_off) = TRUE;
        return ret;
    case F_XDATA:
        ret = der_get_only(t, DER_OCTET_STRING, &v);
        return ret ? ret : get_string(&v, f->min, f->max, (krb5_data *)p);
    case F_SEQ:
        return get_fields(t, f->sub, obj);
    case F_LIST:
        return get_list(t, f->sub, obj);
    default:
        return YK_ERR_RFC6560_UNSUPPORTED;
    }
}

/* The field of set numbered num, or NULL. */
static const field *
find_field(const fieldset *set, int num)
{
    size_t i;

    for (i = 0; i < set->n; i++) {
        if (set->f[i].num == num)
            return &set->f[i];
    }
    return NULL;
}

/* Decode the contents of t, a SEQUENCE of the fields of set, into obj:
 * context tags only, in increasing order, each known and at most once,
 * the required ones present. */
static krb5_error_code
get_fields(const der_tlv *t, const fieldset *set, void *obj)
{
    krb5_error_code ret;
    der_reader r;
    der_tlv v;
    const field *f;
    uint32_t seen = 0;
    int last = -1, num;
    size_t i;

    reader_init(&r, t->v, t->len);
    while (r.left > 0) {
        ret = der_get(&r, &v);
        if (ret)
            return ret;
        if ((v.tag & DER_CLASS_MASK) != DER_CONTEXT)
            return YK_ERR_RFC6560_FORMAT;
        /* A number not above the last one: out of order or repeated. */
        num = v.tag & DER_NUMBER_MASK;
        if (num <= last)
            return YK_ERR_RFC6560_FORMAT;
        last = num;
        f = find_field(set, num);
        if (f == NULL)
            return YK_ERR_RFC6560_FORMAT;
        if (f->kind == F_REFUSED)
            return YK_ERR_RFC6560_UNSUPPORTED;
        if (v.tag != field_tag(f))
            return YK_ERR_RFC6560_FORMAT;
        ret = get_field(&v, f, obj);
        if (ret)
            return ret;
        seen |= 1U << (f - set->f);
    }
    for (i = 0; i < set->n; i++) {
        if (set->f[i].required && (seen & (1U << i)) == 0)
            return YK_ERR_RFC6560_FORMAT;
    }
    return 0;
}

/* Decode der, which must be exactly one SEQUENCE of the fields of set,
 * into *out, a structure of size bytes (untouched on failure).  EINVAL for
 * a NULL argument. */
static krb5_error_code
der_decode(const krb5_data *der, const fieldset *set, void *out,
           size_t size)
{
    krb5_error_code ret;
    der_reader r;
    der_tlv t;
    union {
        yk_rfc6560_challenge ch;
        yk_rfc6560_request req;
        krb5_data data;
    } tmp;

    if (der == NULL || out == NULL)
        return EINVAL;
    if (size > sizeof(tmp))
        abort();
    memset(&tmp, 0, sizeof(tmp));
    reader_init(&r, der->data, der->length);
    ret = der_get(&r, &t);
    if (ret)
        return ret;
    if (t.tag != DER_SEQUENCE || r.left != 0)
        return YK_ERR_RFC6560_FORMAT;
    ret = get_fields(&t, set, &tmp);
    if (ret)
        return ret;
    memcpy(out, &tmp, size);
    return 0;
}

/* --- writing ------------------------------------------------------------- */

/* Append one byte (or count it). */
static void
put_byte(der_writer *w, uint8_t b)
{
    if (w->buf != NULL) {
        if (w->len >= w->cap)
            abort();
        w->buf[w->len] = b;
    }
    w->len++;
}

/* Append n bytes (or count them). */
static void
put_bytes(der_writer *w, const void *p, size_t n)
{
    if (w->buf != NULL) {
        if (n > w->cap - w->len)
            abort();
        if (n > 0)
            memcpy(w->buf + w->len, p, n);
    }
    w->len += n;
}

/* Append a tag byte and a minimal definite length.  The bounds checked
 * before encoding keep every length far below DER_LEN_MAX. */
static void
put_header(der_writer *w, uint8_t tag, size_t len)
{
    put_byte(w, tag);
    if (len <= DER_LEN_SHORT_MAX) {
        put_byte(w, (uint8_t)len);
    } else if (len <= 0xFF) {
        put_byte(w, DER_LEN_ONE_OCTET);
        put_byte(w, (uint8_t)len);
    } else if (len <= DER_LEN_MAX) {
        put_byte(w, DER_LEN_TWO_OCTETS);
        put_byte(w, (uint8_t)(len >> 8));
        put_byte(w, (uint8_t)len);
    } else {
        abort();
    }
}

/* Append a string value under tag. */
static void
put_string(der_writer *w, uint8_t tag, const krb5_data *d)
{
    put_header(w, tag, d->length);
    put_bytes(w, d->data, d->length);
}

/* Append an INTEGER under tag, in minimal two's complement. */
static void
put_int32(der_writer *w, uint8_t tag, int32_t v)
{
    uint8_t b[DER_INT32_LEN];
    uint32_t u;
    size_t skip = 0;

    memcpy(&u, &v, sizeof(u));
    b[0] = (uint8_t)(u >> 24);
    b[1] = (uint8_t)(u >> 16);
    b[2] = (uint8_t)(u >> 8);
    b[3] = (uint8_t)u;
    /* Drop leading octets that only repeat the next one's sign bit. */
    while (skip < DER_INT32_LEN - 1 &&
           ((b[skip] == 0x00 && (b[skip + 1] & 0x80) == 0) ||
            (b[skip] == 0xFF && (b[skip + 1] & 0x80) != 0)))
        skip++;
    put_header(w, tag, DER_INT32_LEN - skip);
    put_bytes(w, b + skip, DER_INT32_LEN - skip);
}

/* Append an OTPFlags value: 32 bits, no unused bit. */
static void
put_flags(der_writer *w, uint8_t tag, uint32_t flags)
{
    put_header(w, tag, DER_FLAGS_LEN);
    put_byte(w, 0);
    put_byte(w, (uint8_t)(flags >> 24));
    put_byte(w, (uint8_t)(flags >> 16));
    put_byte(w, (uint8_t)(flags >> 8));
    put_byte(w, (uint8_t)flags);
}

/* Append a constructed value: body runs once to measure, once to write. */
static void
put_nested(der_writer *w, uint8_t tag, der_body_fn body, const void *arg)
{
    der_writer m = { NULL, 0, 0 };

    body(&m, arg);
    put_header(w, tag, m.len);
    body(w, arg);
}

/* Contents of an explicit tag: an INTEGER; arg: an int32_t. */
static void
body_int32(der_writer *w, const void *arg)
{
    put_int32(w, DER_INTEGER, *(const int32_t *)arg);
}

/* Contents of an explicit tag: an OCTET STRING; arg: a krb5_data. */
static void
body_octets(der_writer *w, const void *arg)
{
    put_string(w, DER_OCTET_STRING, arg);
}

static void body_fields(der_writer *w, const void *arg);

/* Contents of the tokenInfo list; arg: a fieldset_arg whose obj is the
 * challenge and whose set is the tokenInfo table. */
static void
body_list(der_writer *w, const void *arg)
{
    const fieldset_arg *a = arg;
    const yk_rfc6560_challenge *ch = a->obj;
    fieldset_arg one;
    size_t i;

    for (i = 0; i < ch->n_tokeninfo; i++) {
        one.set = a->set;
        one.obj = &ch->tokeninfo[i];
        put_nested(w, DER_SEQUENCE, body_fields, &one);
    }
}

/* Append field f of obj (nothing for an absent optional field). */
static void
put_field(der_writer *w, const field *f, const void *obj)
{
    const char *p = (const char *)obj + f->off;
    const yk_rfc6560_opt *o = (const yk_rfc6560_opt *)p;
    const yk_rfc6560_optint *oi = (const yk_rfc6560_optint *)p;
    fieldset_arg a = { f->sub, obj };
    int32_t i32;

    switch (f->kind) {
    case F_FLAGS:
        put_flags(w, field_tag(f), *(const uint32_t *)p);
        break;
    case F_DATA:
        put_string(w, field_tag(f), (const krb5_data *)p);
        break;
    case F_OPT:
        if (o->present)
            put_string(w, field_tag(f), &o->data);
        break;
    case F_OPTINT:
        if (oi->present)
            put_int32(w, field_tag(f), oi->value);
        break;
    case F_XINT:
        if (f->has_off != NO_OFF &&
            !*(const krb5_boolean *)((const char *)obj + f->has_off))
            break;
        memcpy(&i32, p, sizeof(i32));
        put_nested(w, field_tag(f), body_int32, &i32);
        break;
    case F_XDATA:
        put_nested(w, field_tag(f), body_octets, p);
        break;
    case F_SEQ:
        put_nested(w, field_tag(f), body_fields, &a);
        break;
    case F_LIST:
        put_nested(w, field_tag(f), body_list, &a);
        break;
    default:
        break;
    }
}

/* Contents of a SEQUENCE; arg: a fieldset_arg. */
static void
body_fields(der_writer *w, const void *arg)
{
    const fieldset_arg *a = arg;
    size_t i;

    for (i = 0; i < a->set->n; i++)
        put_field(w, &a->set->f[i], a->obj);
}

/* 1 if d holds min..max bytes (and a pointer when it holds any). */
static int
data_ok(const krb5_data *d, size_t min, size_t max)
{
    return d->length >= min && d->length <= max &&
        (d->length == 0 || d->data != NULL);
}

/* 1 if every field of obj is within the bounds of set. */
static int
fields_ok(const fieldset *set, const void *obj)
{
    const yk_rfc6560_challenge *ch = obj;
    const yk_rfc6560_opt *o;
    const field *f;
    const char *p;
    size_t i, k;

    for (i = 0; i < set->n; i++) {
        f = &set->f[i];
        p = (const char *)obj + f->off;
        o = (const yk_rfc6560_opt *)p;
        if ((f->kind == F_DATA || f->kind == F_XDATA) &&
            !data_ok((const krb5_data *)p, f->min, f->max))
            return 0;
        if (f->kind == F_OPT && o->present &&
            !data_ok(&o->data, f->min, f->max))
            return 0;
        if (f->kind == F_SEQ && !fields_ok(f->sub, obj))
            return 0;
        if (f->kind == F_LIST) {
            if (ch->n_tokeninfo < 1 ||
                ch->n_tokeninfo > YK_RFC6560_TOKENINFO_MAX)
                return 0;
            for (k = 0; k < ch->n_tokeninfo; k++) {
                if (!fields_ok(f->sub, &ch->tokeninfo[k]))
                    return 0;
            }
        }
    }
    return 1;
}

/* Encode obj as a SEQUENCE of the fields of set into *der_out (malloc'd;
 * set only on success).  EINVAL for a NULL argument or a field out of
 * bounds. */
static krb5_error_code
der_encode(const fieldset *set, const void *obj, krb5_data *der_out)
{
    fieldset_arg a = { set, obj };
    der_writer m = { NULL, 0, 0 }, w = { NULL, 0, 0 };

    if (obj == NULL || der_out == NULL || !fields_ok(set, obj))
        return EINVAL;
    put_nested(&m, DER_SEQUENCE, body_fields, &a);
    w.buf = malloc(m.len);
    if (w.buf == NULL)
        return ENOMEM;
    w.cap = m.len;
    put_nested(&w, DER_SEQUENCE, body_fields, &a);
    if (w.len != w.cap)
        abort();
    der_out->magic = KV5M_DATA;
    der_out->length = (unsigned int)w.len;
    der_out->data = (char *)w.buf;
    return 0;
}

/* --- the API ------------------------------------------------------------- */

/* Encode the KDC's challenge for nonce and vendor (NULL: none) into
 * *der_out (malloc'd; set only on success).  EINVAL for a NULL argument,
 * a nonce outside 1..NONCE_MAX bytes or a vendor that is empty, longer
 * than STRING_MAX or not printable ASCII. */
krb5_error_code
yk_rfc6560_build_challenge(const krb5_data *nonce, const char *vendor,
                           krb5_data *der_out)
{
    yk_rfc6560_challenge ch;
    size_t n, i;

    if (nonce == NULL || der_out == NULL)
        return EINVAL;
    memset(&ch, 0, sizeof(ch));
    ch.nonce = *nonce;
    ch.n_tokeninfo = 1;
    if (vendor != NULL) {
        n = strnlen(vendor, YK_RFC6560_STRING_MAX + 1);
        if (n == 0 || n > YK_RFC6560_STRING_MAX)
            return EINVAL;
        /* MIT's client drops a tokenInfo whose vendor fails isprint. */
        for (i = 0; i < n; i++) {
            if ((unsigned char)vendor[i] < 0x20 ||
                (unsigned char)vendor[i] > 0x7E)
                return EINVAL;
        }
        ch.tokeninfo[0].vendor.present = TRUE;
        ch.tokeninfo[0].vendor.data.magic = KV5M_DATA;
        ch.tokeninfo[0].vendor.data.length = (unsigned int)n;
        ch.tokeninfo[0].vendor.data.data = (char *)vendor;
    }
    return yk_rfc6560_encode_challenge(&ch, der_out);
}

/* Encode ch into *der_out (malloc'd; set only on success).  EINVAL for a
 * NULL argument or a field out of bounds. */
krb5_error_code
yk_rfc6560_encode_challenge(const yk_rfc6560_challenge *ch,
                            krb5_data *der_out)
{
    return der_encode(&challenge_set, ch, der_out);
}

/* Decode a challenge strictly into *ch_out (untouched on failure; its
 * strings point into der). */
krb5_error_code
yk_rfc6560_decode_challenge(const krb5_data *der,
                            yk_rfc6560_challenge *ch_out)
{
    return der_decode(der, &challenge_set, ch_out, sizeof(*ch_out));
}

/* Encode req into *der_out (malloc'd, holding otp-value and otp-pin: free
 * with yk_data_free; set only on success).  EINVAL for a NULL argument or
 * a field out of bounds. */
krb5_error_code
yk_rfc6560_encode_request(const yk_rfc6560_request *req, krb5_data *der_out)
{
    return der_encode(&request_set, req, der_out);
}

/* Decode a request strictly into *req_out (untouched on failure).  Nothing
 * is copied: the ciphertext, otp-value and otp-pin point into der. */
krb5_error_code
yk_rfc6560_decode_request(const krb5_data *der, yk_rfc6560_request *req_out)
{
    krb5_error_code ret;

    ret = der_decode(der, &request_set, req_out, sizeof(*req_out));
    if (ret == 0)
        req_out->enc_data.magic = KV5M_ENC_DATA;
    return ret;
}

/* Encode the PA-OTP-ENC-REQUEST plaintext for nonce into *der_out
 * (malloc'd; set only on success).  EINVAL for a NULL argument or a nonce
 * outside 1..NONCE_MAX bytes. */
krb5_error_code
yk_rfc6560_encode_enc_request(const krb5_data *nonce, krb5_data *der_out)
{
    return der_encode(&enc_request_set, nonce, der_out);
}

/* Decode a PA-OTP-ENC-REQUEST plaintext strictly; *nonce_out (untouched
 * on failure) points into der. */
krb5_error_code
yk_rfc6560_decode_enc_request(const krb5_data *der, krb5_data *nonce_out)
{
    return der_decode(der, &enc_request_set, nonce_out, sizeof(*nonce_out));
}
