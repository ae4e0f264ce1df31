/* SPDX-License-Identifier: MIT */
/* fuzz_rfc6560.c: libFuzzer target for the RFC 6560 OTP padata codec. */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <krb5.h>

#include "errors.h"
#include "padata.h"
#include "rfc6560.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input being decoded, for the bounds checks. */
static const uint8_t *in_base;
static size_t in_size;

/* Abort unless ret is success or one of the decoders' documented errors. */
static void
expect_known_error(krb5_error_code ret)
{
    if (ret != 0 && ret != YK_ERR_RFC6560_FORMAT &&
        ret != YK_ERR_RFC6560_TOO_LONG && ret != YK_ERR_RFC6560_UNSUPPORTED)
        abort();
}

/* Abort unless d (min..max bytes) lies wholly inside the input. */
static void
check_view(const krb5_data *d, size_t min, size_t max)
{
    const uint8_t *p = (const uint8_t *)d->data;

    if (d->length < min || d->length > max)
        abort();
    if (p < in_base || p > in_base + in_size ||
        d->length > (size_t)(in_base + in_size - p))
        abort();
}

/* check_view for an optional field, when present. */
static void
check_opt(const yk_rfc6560_opt *o, size_t min, size_t max)
{
    if (o->present)
        check_view(&o->data, min, max);
}

/* Abort unless out holds exactly the input. */
static void
expect_input(const krb5_data *out)
{
    if (out->length != in_size || memcmp(out->data, in_base, in_size) != 0)
        abort();
}

/* The challenge: views in bounds, re-encodes to the input; in the KDC's
 * own shape, build_challenge writes the input too. */
static void
fuzz_challenge(const krb5_data *in)
{
    krb5_error_code ret;
    krb5_data out = { 0 };
    yk_rfc6560_challenge ch;
    const yk_rfc6560_tokeninfo *ti;
    char vendor[YK_RFC6560_STRING_MAX + 1];
    size_t i;
    int printable;

    memset(&ch, 0, sizeof(ch));
    ret = yk_rfc6560_decode_challenge(in, &ch);
    expect_known_error(ret);
    if (ret)
        return;
    check_view(&ch.nonce, 1, YK_RFC6560_NONCE_MAX);
    check_opt(&ch.service, 0, YK_RFC6560_STRING_MAX);
    check_opt(&ch.salt, 0, YK_RFC6560_VALUE_MAX);
    check_opt(&ch.s2kparams, 0, YK_RFC6560_STRING_MAX);
    if (ch.n_tokeninfo < 1 || ch.n_tokeninfo > YK_RFC6560_TOKENINFO_MAX)
        abort();
    for (i = 0; i < ch.n_tokeninfo; i++) {
        ti = &ch.tokeninfo[i];
        check_opt(&ti->vendor, 0, YK_RFC6560_STRING_MAX);
        check_opt(&ti->challenge, 0, YK_RFC6560_STRING_MAX);
        check_opt(&ti->token_id, 0, YK_RFC6560_STRING_MAX);
        check_opt(&ti->alg_id, 0, YK_RFC6560_STRING_MAX);
    }
    if (yk_rfc6560_encode_challenge(&ch, &out) != 0)
        abort();
    expect_input(&out);
    yk_data_free(&out);

    /* One tokenInfo, flags 0, at most a vendor: what the KDC builds. */
    ti = &ch.tokeninfo[0];
    if (ch.n_tokeninfo != 1 || ti->flags != 0 || ch.service.present ||
        ch.salt.present || ch.s2kparams.present || ti->challenge.present ||
        ti->length.present || ti->format.present || ti->token_id.present ||
        ti->alg_id.present)
        return;
    memset(vendor, 0, sizeof(vendor));
    printable = 1;
    if (ti->vendor.present) {
        memcpy(vendor, ti->vendor.data.data, ti->vendor.data.length);
        printable = ti->vendor.data.length > 0;
        for (i = 0; i < ti->vendor.data.length; i++) {
            if ((uint8_t)vendor[i] < 0x20 || (uint8_t)vendor[i] > 0x7e)
                printable = 0;
        }
    }
    /* An empty or unprintable vendor is refused (one holding a NUL is
     * another, shorter C string: skip it). */
    if (!printable) {
        if (memchr(vendor, 0, ti->vendor.data.length) == NULL &&
            yk_rfc6560_build_challenge(&ch.nonce, vendor, &out) != EINVAL)
            abort();
        return;
    }
    if (yk_rfc6560_build_challenge(&ch.nonce,
                                   ti->vendor.present ? vendor : NULL,
                                   &out) != 0)
        abort();
    expect_input(&out);
    yk_data_free(&out);
}

/* The request: views in bounds (no copies), re-encodes to the input. */
static void
fuzz_request(const krb5_data *in)
{
    krb5_error_code ret;
    krb5_data out = { 0 };
    yk_rfc6560_request req;

    memset(&req, 0, sizeof(req));
    ret = yk_rfc6560_decode_request(in, &req);
    expect_known_error(ret);
    if (ret)
        return;
    check_opt(&req.nonce, 1, YK_RFC6560_NONCE_MAX);
    check_view(&req.enc_data.ciphertext, 1, YK_RFC6560_CIPHERTEXT_MAX);
    check_opt(&req.otp_value, 0, YK_RFC6560_VALUE_MAX);
    check_opt(&req.pin, 0, YK_RFC6560_VALUE_MAX);
    check_opt(&req.token_id, 0, YK_RFC6560_STRING_MAX);
    check_opt(&req.alg_id, 0, YK_RFC6560_STRING_MAX);
    check_opt(&req.vendor, 0, YK_RFC6560_STRING_MAX);
    if (req.enc_data.magic != KV5M_ENC_DATA ||
        (!req.has_kvno && req.enc_data.kvno != 0))
        abort();
    if (yk_rfc6560_encode_request(&req, &out) != 0)
        abort();
    expect_input(&out);
    yk_data_free(&out);
}

/* The enc-request: the nonce in bounds, re-encodes to the input. */
static void
fuzz_enc_request(const krb5_data *in)
{
    krb5_error_code ret;
    krb5_data out = { 0 }, nonce = { 0 };

    ret = yk_rfc6560_decode_enc_request(in, &nonce);
    expect_known_error(ret);
    if (ret)
        return;
    check_view(&nonce, 1, YK_RFC6560_NONCE_MAX);
    if (nonce.length + 4 != in_size)
        abort();
    if (yk_rfc6560_encode_enc_request(&nonce, &out) != 0)
        abort();
    expect_input(&out);
    yk_data_free(&out);
}

/* Take n bytes from the input for a value, or as many as remain. */
static krb5_data
take(const uint8_t **p, size_t *left, size_t n)
{
    krb5_data d;

    if (n > *left)
        n = *left;
    d.magic = KV5M_DATA;
    d.length = (unsigned int)n;
    d.data = (char *)*p;
    *p += n;
    *left -= n;
    return d;
}

/* Abort unless the optional fields a and b say the same. */
static void
expect_same_opt(const yk_rfc6560_opt *a, const yk_rfc6560_opt *b)
{
    if (a->present != b->present || a->data.length != b->data.length ||
        (a->present && a->data.length > 0 &&
         memcmp(a->data.data, b->data.data, a->data.length) != 0))
        abort();
}

/* The encoder: a request built from the input (a presence byte, then a
 * length byte and the bytes of each field) encodes exactly when its
 * bounds hold, and decodes back to itself. */
static void
fuzz_encode_request(const uint8_t *data, size_t size)
{
    yk_rfc6560_opt *opts[4];
    yk_rfc6560_request req, back;
    krb5_data out = { 0 };
    krb5_error_code ret;
    const uint8_t *p = data;
    size_t left = size, i, len;
    uint8_t mask;
    int in_bounds = 1;

    if (size < 6)
        return;
    memset(&req, 0, sizeof(req));
    mask = p[0];
    req.flags = ((uint32_t)p[1] << 24) | ((uint32_t)p[2] << 8) | p[1];
    req.enc_data.enctype = (int32_t)p[3] - 128;
    req.has_kvno = (mask & 0x10) ? TRUE : FALSE;
    req.enc_data.kvno = req.has_kvno ? (krb5_kvno)p[2] << 16 : 0;
    len = p[4] * 2u;
    p += 5;
    left -= 5;
    req.enc_data.ciphertext = take(&p, &left, len);
    len = req.enc_data.ciphertext.length;
    if (len < 1 || len > YK_RFC6560_CIPHERTEXT_MAX)
        in_bounds = 0;
    opts[0] = &req.otp_value;
    opts[1] = &req.pin;
    opts[2] = &req.vendor;
    opts[3] = &req.nonce;
    for (i = 0; i < 4; i++) {
        if ((mask & (1u << i)) == 0 || left == 0)
            continue;
        len = (size_t)p[0] * 2u;
        p++;
        left--;
        opts[i]->present = TRUE;
        opts[i]->data = take(&p, &left, len);
        len = opts[i]->data.length;
        if ((i < 2 && len > YK_RFC6560_VALUE_MAX) ||
            (i == 2 && len > YK_RFC6560_STRING_MAX) ||
            (i == 3 && (len < 1 || len > YK_RFC6560_NONCE_MAX)))
            in_bounds = 0;
    }
    if (mask & 0x20) {
        req.format.present = TRUE;
        req.format.value = (int32_t)req.flags;
    }

    ret = yk_rfc6560_encode_request(&req, &out);
    if (ret != (in_bounds ? 0 : EINVAL))
        abort();
    if (ret)
        return;
    memset(&back, 0, sizeof(back));
    if (yk_rfc6560_decode_request(&out, &back) != 0)
        abort();
    if (back.flags != req.flags ||
        back.enc_data.enctype != req.enc_data.enctype ||
        back.has_kvno != req.has_kvno ||
        back.enc_data.kvno != req.enc_data.kvno ||
        back.format.present != req.format.present ||
        back.format.value != req.format.value ||
        back.enc_data.ciphertext.length != req.enc_data.ciphertext.length ||
        memcmp(back.enc_data.ciphertext.data, req.enc_data.ciphertext.data,
               req.enc_data.ciphertext.length) != 0)
        abort();
    expect_same_opt(&back.otp_value, &req.otp_value);
    expect_same_opt(&back.pin, &req.pin);
    expect_same_opt(&back.vendor, &req.vendor);
    expect_same_opt(&back.nonce, &req.nonce);
    yk_data_free(&out);
}

/*
 * Tree mode.  Random bytes seldom make nested DER whose every enclosing
 * length still agrees, so the input is also read as a TLV tree whose
 * lengths the harness computes (minimally):
 *     node := tag, then for a constructed tag (0x20 set) a byte whose low
 *             four bits count the children, then the children; for a
 *             primitive one a length byte (0xff: add the next byte, for
 *             up to 510) and that many content bytes.
 * The seeds named tree-* are the MIT vectors in this form.
 */
#define TREE_MAX 4096             /* DER built from one input */
#define TREE_DEPTH 8
#define TREE_CHILDREN_MASK 0x0F
#define TREE_LEN_MORE 0xFF

/* DER under construction in tree mode. */
typedef struct {
    uint8_t b[TREE_MAX];
    size_t n;
    int ok;
} tree_out;

/* Take one byte of the tree description; 0 when none is left. */
static int
tree_byte(const uint8_t **p, size_t *left, uint8_t *v)
{
    if (*left == 0)
        return 0;
    *v = **p;
    (*p)++;
    (*left)--;
    return 1;
}

/* Append one node (and its subtree) to o; o->ok drops on running out of
 * input, depth or room. */
static void
tree_node(const uint8_t **p, size_t *left, tree_out *o, int depth)
{
    uint8_t tag = 0, b = 0;
    size_t start, len, hl, i;

    if (depth > TREE_DEPTH || !tree_byte(p, left, &tag) ||
        o->n + 3 > TREE_MAX) {
        o->ok = 0;
        return;
    }
    o->b[o->n++] = tag;
    start = o->n;
    if (tag & 0x20) {
        if (!tree_byte(p, left, &b)) {
            o->ok = 0;
            return;
        }
        for (i = 0; i < (b & TREE_CHILDREN_MASK) && o->ok; i++)
            tree_node(p, left, o, depth + 1);
    } else {
        if (!tree_byte(p, left, &b)) {
            o->ok = 0;
            return;
        }
        len = b;
        if (b == TREE_LEN_MORE && tree_byte(p, left, &b))
            len += b;
        if (len > *left || o->n + len > TREE_MAX) {
            o->ok = 0;
            return;
        }
        memcpy(o->b + o->n, *p, len);
        o->n += len;
        *p += len;
        *left -= len;
    }
    if (!o->ok)
        return;
    /* Make room for the minimal length in front of the contents. */
    len = o->n - start;
    hl = (len < 0x80) ? 1 : (len < 0x100) ? 2 : 3;
    if (o->n + hl > TREE_MAX) {
        o->ok = 0;
        return;
    }
    memmove(o->b + start + hl, o->b + start, len);
    if (hl == 1) {
        o->b[start] = (uint8_t)len;
    } else if (hl == 2) {
        o->b[start] = 0x81;
        o->b[start + 1] = (uint8_t)len;
    } else {
        o->b[start] = 0x82;
        o->b[start + 1] = (uint8_t)(len >> 8);
        o->b[start + 2] = (uint8_t)len;
    }
    o->n += hl;
}

/* Run the three decoders on the n bytes at der. */
static void
fuzz_decoders(const uint8_t *der, size_t n)
{
    krb5_data in;

    in_base = der;
    in_size = n;
    in.magic = KV5M_DATA;
    in.length = (unsigned int)n;
    in.data = (char *)der;
    fuzz_challenge(&in);
    fuzz_request(&in);
    fuzz_enc_request(&in);
}

/* Feed the bytes to the decoders as they are and as a tree, and to the
 * request encoder. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static tree_out tree;
    const uint8_t *p = data;
    size_t left = size;
    uint8_t *copy;

    if (size > 0xffffffffU)
        return 0;
    fuzz_decoders(data, size);
    fuzz_encode_request(data, size);

    tree.n = 0;
    tree.ok = 1;
    tree_node(&p, &left, &tree, 0);
    if (!tree.ok)
        return 0;
    /* An exact-size copy, so that a read past the end shows. */
    copy = malloc(tree.n);
    if (copy == NULL)
        return 0;
    memcpy(copy, tree.b, tree.n);
    fuzz_decoders(copy, tree.n);
    free(copy);
    return 0;
}
