/* SPDX-License-Identifier: MIT */
/* padata.c: the wire codec of the yubikey padata and mode 1 sealing. */

/*
 * Wire format (doc/design.md §3; doc/protocol.md says the same for other
 * readers).
 * Padata type -22859 (-0x594B).  All integers are big-endian, unsigned
 * unless said otherwise.  Every message starts with the magic 0x59 0x4B
 * ("YK") and the version byte 0x01.
 *
 * Hint, KDC to client (METHOD-DATA of PREAUTH_REQUIRED/PREAUTH_FAILED),
 * exactly 4 bytes:
 *     0x59 0x4B | version 0x01 | flags
 *     flags: 0x01 PASSWORD_BOUND (mode 1 accepted),
 *            0x02 OTP_ALONE_OK (mode 2 accepted, armored only);
 *            other bits reserved: senders set 0, receivers ignore them.
 *
 * Request, client to KDC:
 *     0x59 0x4B | version 0x01 | mode (1 or 2) | body
 *   mode 1 (password-bound) body, 6 + ctlen bytes:
 *     enctype int32 (two's complement) | ctlen uint16 (1..2048) |
 *     ciphertext[ctlen]
 *   mode 2 (OTP alone, FAST only) body, 1 + otplen bytes:
 *     otplen uint8 (32..64) | otp[otplen] (printable ASCII 0x20..0x7E)
 *
 * Mode 1 plaintext ("bound"), encrypted with krb5_c_encrypt under the
 * client's long-term key of that enctype, key usage 1113; 16 + otplen
 * bytes:
 *     0x59 0x4B | version 0x01 | sec uint32 | usec uint32 (< 1000000) |
 *     nonce uint32 | otplen uint8 (32..64) | otp[otplen] (printable)
 *
 * Decoding is strict: a short message, a wrong magic, a length outside
 * its range or bytes left over give YK_ERR_PADATA_FORMAT; an unknown
 * version or mode gives YK_ERR_PADATA_VERSION.  Every accepted message
 * re-encodes to the same bytes (for the hint: once reserved flag bits
 * are cleared).
 */

#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "padata.h"
#include "secmem.h"

#define YK_MAGIC0 0x59           /* 'Y' */
#define YK_MAGIC1 0x4B           /* 'K' */
#define YK_HEADER_LEN 3          /* magic (2) + version (1) */
#define YK_HINT_LEN 4            /* header + flags */
#define YK_HINT_KNOWN_FLAGS (YK_HINT_PASSWORD_BOUND | YK_HINT_OTP_ALONE_OK)
#define YK_REQ_HEAD_LEN 4        /* header + mode */
#define YK_REQ1_FIXED_LEN 6      /* enctype (4) + ctlen (2) */
#define YK_CT_MIN 1
#define YK_CT_MAX 2048
#define YK_OTP_MIN 32
#define YK_OTP_MAX 64
#define YK_BOUND_FIXED_LEN 16    /* header + sec + usec + nonce + otplen */
#define YK_USEC_LIMIT 1000000U

/* A read cursor over an input buffer: every get checks the bytes left
 * before it reads. */
typedef struct {
    const uint8_t *p;
    size_t left;
} yk_cursor;

/* A write cursor over an output buffer sized exactly beforehand. */
typedef struct {
    uint8_t *p;
    size_t left;
} yk_writer;

/* Start a read cursor over in (a NULL data pointer reads as empty). */
static void
cursor_init(yk_cursor *c, const krb5_data *in)
{
    c->p = (const uint8_t *)in->data;
    c->left = (in->data == NULL) ? 0 : in->length;
}

/* Read one byte; 0 when none is left. */
static int
get_u8(yk_cursor *c, uint8_t *v)
{
    if (c->left < 1)
        return 0;
    *v = c->p[0];
    c->p++;
    c->left--;
    return 1;
}

/* Read a big-endian uint16; 0 when fewer than 2 bytes are left. */
static int
get_u16(yk_cursor *c, uint16_t *v)
{
    if (c->left < 2)
        return 0;
    *v = (uint16_t)(((unsigned)c->p[0] << 8) | c->p[1]);
    c->p += 2;
    c->left -= 2;
    return 1;
}

/* Read a big-endian uint32; 0 when fewer than 4 bytes are left. */
static int
get_u32(yk_cursor *c, uint32_t *v)
{
    if (c->left < 4)
        return 0;
    *v = ((uint32_t)c->p[0] << 24) | ((uint32_t)c->p[1] << 16) |
        ((uint32_t)c->p[2] << 8) | (uint32_t)c->p[3];
    c->p += 4;
    c->left -= 4;
    return 1;
}

/* Borrow n bytes at the cursor; 0 when fewer than n are left. */
static int
get_bytes(yk_cursor *c, size_t n, const uint8_t **v)
{
    if (c->left < n)
        return 0;
    *v = c->p;
    c->p += n;
    c->left -= n;
    return 1;
}

/* Append one byte (the caller sized the buffer exactly). */
static void
put_u8(yk_writer *w, uint8_t v)
{
    if (w->left < 1)
        abort();
    *w->p++ = v;
    w->left--;
}

/* Append a big-endian uint16. */
static void
put_u16(yk_writer *w, uint16_t v)
{
    put_u8(w, (uint8_t)(v >> 8));
    put_u8(w, (uint8_t)v);
}

/* Append a big-endian uint32. */
static void
put_u32(yk_writer *w, uint32_t v)
{
    put_u8(w, (uint8_t)(v >> 24));
    put_u8(w, (uint8_t)(v >> 16));
    put_u8(w, (uint8_t)(v >> 8));
    put_u8(w, (uint8_t)v);
}

/* Append n bytes. */
static void
put_bytes(yk_writer *w, const void *v, size_t n)
{
    if (w->left < n)
        abort();
    if (n > 0)
        memcpy(w->p, v, n);
    w->p += n;
    w->left -= n;
}

/* Convert a wire uint32 to a signed enctype without relying on
 * implementation-defined conversions. */
static krb5_enctype
enctype_from_u32(uint32_t u)
{
    if (u <= 0x7fffffffU)
        return (krb5_enctype)u;
    return (krb5_enctype)(-(int32_t)(0xffffffffU - u) - 1);
}

/* 1 if the n bytes of otp are a plausible OTP: 32..64 printable ASCII
 * characters (its own syntax is the OTP parser's job). */
static int
otp_ok(const char *otp, size_t n)
{
    size_t i;

    if (n < YK_OTP_MIN || n > YK_OTP_MAX)
        return 0;
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)otp[i];
        if (ch < 0x20 || ch > 0x7e)
            return 0;
    }
    return 1;
}

/* Read and check the magic and the version; FORMAT when short or when the
 * magic is wrong, VERSION for any version but ours. */
static krb5_error_code
get_header(yk_cursor *c)
{
    const uint8_t *magic = NULL;
    uint8_t version = 0;

    if (!get_bytes(c, 2, &magic) || magic[0] != YK_MAGIC0 ||
        magic[1] != YK_MAGIC1)
        return YK_ERR_PADATA_FORMAT;
    if (!get_u8(c, &version))
        return YK_ERR_PADATA_FORMAT;
    if (version != YK_PROTO_VERSION)
        return YK_ERR_PADATA_VERSION;
    return 0;
}

/* Read otplen and the OTP into otp (a YK_OTP_BUF buffer, NUL-terminated on
 * success); FORMAT for a bad length, a short buffer or a non-printable
 * byte.  otp may hold part of an OTP on failure: the caller wipes it. */
static krb5_error_code
get_otp(yk_cursor *c, char *otp, size_t *len_out)
{
    uint8_t len = 0;
    const uint8_t *bytes = NULL;

    if (!get_u8(c, &len) || len < YK_OTP_MIN || len > YK_OTP_MAX)
        return YK_ERR_PADATA_FORMAT;
    if (!get_bytes(c, len, &bytes))
        return YK_ERR_PADATA_FORMAT;
    memcpy(otp, bytes, len);
    otp[len] = '\0';
    if (!otp_ok(otp, len))
        return YK_ERR_PADATA_FORMAT;
    *len_out = len;
    return 0;
}

/* Allocate out->data of len bytes and start a writer over it; *out is set
 * only on success. */
static krb5_error_code
alloc_out(size_t len, krb5_data *out, yk_writer *w)
{
    uint8_t *buf = NULL;

    buf = malloc(len);
    if (buf == NULL)
        return ENOMEM;
    w->p = buf;
    w->left = len;
    out->magic = KV5M_DATA;
    out->length = (unsigned int)len;
    out->data = (char *)buf;
    return 0;
}

/* Append the common header (magic and version). */
static void
put_header(yk_writer *w)
{
    put_u8(w, YK_MAGIC0);
    put_u8(w, YK_MAGIC1);
    put_u8(w, YK_PROTO_VERSION);
}

/* Encode the hint for flags into *out (malloc'd; free with yk_data_free).
 * Reserved flag bits must be 0 (EINVAL otherwise). */
krb5_error_code
yk_padata_encode_hint(uint8_t flags, krb5_data *out)
{
    krb5_error_code ret;
    krb5_data d = { 0 };
    yk_writer w = { NULL, 0 };

    if (out == NULL || (flags & ~YK_HINT_KNOWN_FLAGS) != 0)
        return EINVAL;
    ret = alloc_out(YK_HINT_LEN, &d, &w);
    if (ret)
        return ret;
    put_header(&w);
    put_u8(&w, flags);
    *out = d;
    return 0;
}

/* Decode a 4-byte hint; *flags_out gets the known flags only (reserved
 * bits are ignored) and is left alone on failure. */
krb5_error_code
yk_padata_decode_hint(const krb5_data *in, uint8_t *flags_out)
{
    krb5_error_code ret;
    yk_cursor c;
    uint8_t flags = 0;

    if (in == NULL || flags_out == NULL)
        return EINVAL;
    cursor_init(&c, in);
    ret = get_header(&c);
    if (ret)
        return ret;
    if (!get_u8(&c, &flags) || c.left != 0)
        return YK_ERR_PADATA_FORMAT;
    *flags_out = flags & YK_HINT_KNOWN_FLAGS;
    return 0;
}

/* Encode req (mode 1: enctype and 1..2048 bytes of ciphertext; mode 2:
 * a 32..64 character printable OTP) into *out (malloc'd; holds the OTP
 * in mode 2: free with yk_data_free).  An invalid req gives EINVAL. */
krb5_error_code
yk_padata_encode_request(const yk_request *req, krb5_data *out)
{
    krb5_error_code ret;
    krb5_data d = { 0 };
    yk_writer w = { NULL, 0 };
    size_t len;

    if (req == NULL || out == NULL)
        return EINVAL;
    if (req->mode == YK_MODE_2FA) {
        if (req->ciphertext.length < YK_CT_MIN ||
            req->ciphertext.length > YK_CT_MAX ||
            req->ciphertext.data == NULL)
            return EINVAL;
        len = YK_REQ_HEAD_LEN + YK_REQ1_FIXED_LEN + req->ciphertext.length;
    } else if (req->mode == YK_MODE_OTP) {
        if (req->otp_len >= YK_OTP_BUF || !otp_ok(req->otp, req->otp_len))
            return EINVAL;
        len = YK_REQ_HEAD_LEN + 1 + req->otp_len;
    } else {
        return EINVAL;
    }

    ret = alloc_out(len, &d, &w);
    if (ret)
        return ret;
    put_header(&w);
    put_u8(&w, (uint8_t)req->mode);
    if (req->mode == YK_MODE_2FA) {
        put_u32(&w, (uint32_t)req->enctype);
        put_u16(&w, (uint16_t)req->ciphertext.length);
        put_bytes(&w, req->ciphertext.data, req->ciphertext.length);
    } else {
        put_u8(&w, (uint8_t)req->otp_len);
        put_bytes(&w, req->otp, req->otp_len);
    }
    *out = d;
    return 0;
}

/* Decode a request strictly into *req_out (untouched on failure).  Mode 1
 * borrows in's memory for the ciphertext; mode 2 copies the OTP, which the
 * caller wipes (yk_request_clear). */
krb5_error_code
yk_padata_decode_request(const krb5_data *in, yk_request *req_out)
{
    krb5_error_code ret;
    yk_cursor c;
    yk_request req;
    uint8_t mode = 0;
    uint32_t etype = 0;
    uint16_t ctlen = 0;
    const uint8_t *ct = NULL;

    memset(&req, 0, sizeof(req));
    if (in == NULL || req_out == NULL)
        return EINVAL;
    cursor_init(&c, in);
    ret = get_header(&c);
    if (ret)
        goto cleanup;
    ret = YK_ERR_PADATA_FORMAT;
    if (!get_u8(&c, &mode))
        goto cleanup;

    if (mode == YK_MODE_2FA) {
        if (!get_u32(&c, &etype) || !get_u16(&c, &ctlen))
            goto cleanup;
        if (ctlen < YK_CT_MIN || ctlen > YK_CT_MAX)
            goto cleanup;
        if (!get_bytes(&c, ctlen, &ct))
            goto cleanup;
        req.enctype = enctype_from_u32(etype);
        req.ciphertext.magic = KV5M_DATA;
        req.ciphertext.length = ctlen;
        req.ciphertext.data = (char *)ct;
    } else if (mode == YK_MODE_OTP) {
        ret = get_otp(&c, req.otp, &req.otp_len);
        if (ret)
            goto cleanup;
        ret = YK_ERR_PADATA_FORMAT;
    } else {
        ret = YK_ERR_PADATA_VERSION;
        goto cleanup;
    }
    /* Trailing bytes would make two encodings of one request. */
    if (c.left != 0)
        goto cleanup;

    req.mode = mode;
    *req_out = req;
    ret = 0;

cleanup:
    yk_zap(&req, sizeof(req));
    return ret;
}

/* Encode the mode 1 plaintext of b into *out (malloc'd; it holds the OTP:
 * free with yk_data_free).  usec >= 1000000 or a bad OTP gives EINVAL. */
krb5_error_code
yk_padata_encode_bound(const yk_bound *b, krb5_data *out)
{
    krb5_error_code ret;
    krb5_data d = { 0 };
    yk_writer w = { NULL, 0 };

    if (b == NULL || out == NULL)
        return EINVAL;
    if (b->usec >= YK_USEC_LIMIT || b->otp_len >= YK_OTP_BUF ||
        !otp_ok(b->otp, b->otp_len))
        return EINVAL;
    ret = alloc_out(YK_BOUND_FIXED_LEN + b->otp_len, &d, &w);
    if (ret)
        return ret;
    put_header(&w);
    put_u32(&w, b->sec);
    put_u32(&w, b->usec);
    put_u32(&w, b->nonce);
    put_u8(&w, (uint8_t)b->otp_len);
    put_bytes(&w, b->otp, b->otp_len);
    *out = d;
    return 0;
}

/* Decode the mode 1 plaintext strictly into *b_out (untouched on failure;
 * on success it holds the OTP: the caller wipes it). */
krb5_error_code
yk_padata_decode_bound(const krb5_data *in, yk_bound *b_out)
{
    krb5_error_code ret;
    yk_cursor c;
    yk_bound b;

    memset(&b, 0, sizeof(b));
    if (in == NULL || b_out == NULL)
        return EINVAL;
    cursor_init(&c, in);
    ret = get_header(&c);
    if (ret)
        goto cleanup;
    ret = YK_ERR_PADATA_FORMAT;
    if (!get_u32(&c, &b.sec) || !get_u32(&c, &b.usec) ||
        !get_u32(&c, &b.nonce))
        goto cleanup;
    if (b.usec >= YK_USEC_LIMIT)
        goto cleanup;
    ret = get_otp(&c, b.otp, &b.otp_len);
    if (ret)
        goto cleanup;
    ret = YK_ERR_PADATA_FORMAT;
    if (c.left != 0)
        goto cleanup;

    *b_out = b;
    ret = 0;

cleanup:
    yk_zap(&b, sizeof(b));
    return ret;
}

/* Encrypt the plaintext of b under key (key usage YK_KEY_USAGE) into a
 * mode 1 request; req_out->ciphertext is malloc'd (free it with
 * yk_request_clear(req, 1)).  The plaintext is wiped on every path. */
krb5_error_code
yk_padata_seal(krb5_context ctx, const krb5_keyblock *key,
               const yk_bound *b, yk_request *req_out)
{
    krb5_error_code ret;
    krb5_data plain = { 0 };
    krb5_enc_data enc;
    size_t ctlen = 0;
    char *ct = NULL;

    memset(&enc, 0, sizeof(enc));
    if (ctx == NULL || key == NULL || b == NULL || req_out == NULL)
        return EINVAL;
    ret = yk_padata_encode_bound(b, &plain);
    if (ret)
        goto cleanup;
    ret = krb5_c_encrypt_length(ctx, key->enctype, plain.length, &ctlen);
    if (ret)
        goto cleanup;
    /* The request carries at most YK_CT_MAX bytes of ciphertext. */
    if (ctlen < YK_CT_MIN || ctlen > YK_CT_MAX) {
        ret = KRB5_BAD_MSIZE;
        goto cleanup;
    }
    ct = malloc(ctlen);
    if (ct == NULL) {
        ret = ENOMEM;
        goto cleanup;
    }
    enc.magic = KV5M_ENC_DATA;
    enc.enctype = key->enctype;
    enc.ciphertext.magic = KV5M_DATA;
    enc.ciphertext.length = (unsigned int)ctlen;
    enc.ciphertext.data = ct;
    ret = krb5_c_encrypt(ctx, key, YK_KEY_USAGE, NULL, &plain, &enc);
    if (ret)
        goto cleanup;
    if (enc.ciphertext.length < YK_CT_MIN ||
        enc.ciphertext.length > YK_CT_MAX) {
        ret = KRB5_BAD_MSIZE;
        goto cleanup;
    }

    memset(req_out, 0, sizeof(*req_out));
    req_out->mode = YK_MODE_2FA;
    req_out->enctype = key->enctype;
    req_out->ciphertext = enc.ciphertext;
    ct = NULL;

cleanup:
    yk_data_free(&plain);
    free(ct);
    return ret;
}

/* Decrypt the ciphertext of a mode 1 request with key and decode the
 * plaintext into *b_out (untouched on failure).  A request for another
 * enctype gives KRB5_BAD_ENCTYPE; a decryption failure (a wrong password
 * or a tampered message) gives KRB5KRB_AP_ERR_BAD_INTEGRITY.  The
 * plaintext is wiped on every path. */
krb5_error_code
yk_padata_open(krb5_context ctx, const krb5_keyblock *key,
               const yk_request *req, yk_bound *b_out)
{
    krb5_error_code ret;
    krb5_enc_data enc;
    krb5_data plain = { 0 };
    size_t cap = 0;

    memset(&enc, 0, sizeof(enc));
    if (ctx == NULL || key == NULL || req == NULL || b_out == NULL)
        return EINVAL;
    if (req->mode != YK_MODE_2FA || req->ciphertext.data == NULL ||
        req->ciphertext.length == 0)
        return EINVAL;
    if (req->enctype != key->enctype)
        return KRB5_BAD_ENCTYPE;

    /* The plaintext is never longer than the ciphertext. */
    cap = req->ciphertext.length;
    plain.data = malloc(cap);
    if (plain.data == NULL)
        return ENOMEM;
    plain.magic = KV5M_DATA;
    plain.length = (unsigned int)cap;
    enc.magic = KV5M_ENC_DATA;
    enc.enctype = req->enctype;
    enc.ciphertext = req->ciphertext;
    ret = krb5_c_decrypt(ctx, key, YK_KEY_USAGE, NULL, &enc, &plain);
    if (ret) {
        if (ret != ENOMEM)
            ret = KRB5KRB_AP_ERR_BAD_INTEGRITY;
        goto cleanup;
    }
    ret = yk_padata_decode_bound(&plain, b_out);

cleanup:
    /* Wipe the whole buffer: decrypt may have shortened plain.length. */
    yk_zap(plain.data, cap);
    free(plain.data);
    return ret;
}

/* Wipe and free d->data (allocated by this module) and empty d; NULL and
 * an empty d are accepted. */
void
yk_data_free(krb5_data *d)
{
    if (d == NULL)
        return;
    if (d->data != NULL) {
        yk_zap(d->data, d->length);
        free(d->data);
    }
    d->data = NULL;
    d->length = 0;
}

/* Wipe *req (its OTP included); when owns_ciphertext is set, also wipe and
 * free its ciphertext (as allocated by yk_padata_seal).  NULL is
 * accepted. */
void
yk_request_clear(yk_request *req, int owns_ciphertext)
{
    if (req == NULL)
        return;
    if (owns_ciphertext)
        yk_data_free(&req->ciphertext);
    yk_zap(req, sizeof(*req));
}
