/* SPDX-License-Identifier: MIT */
/* fuzz_keywrap.c: libFuzzer target for wrapped-secret records. */

#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "keywrap.h"

/* The fixed ring: versions 1 and 2; version 1 alone for old records. */
#define KEY_1 "8e4f4bd2c01f2a6d9b1c3e5f7a9b0c2d" \
              "4e6f8a1b3c5d7e9f0a2b4c6d8e0f1a3b"
#define KEY_2 "1f2e3d4c5b6a79880f1e2d3c4b5a6978" \
              "8796a5b4c3d2e1f00112233445566778"
#define RING_12 "yk-keyring 1\nkey 1 " KEY_1 "\nkey 2 " KEY_2 "\n"
#define RING_1 "yk-keyring 1\nkey 1 " KEY_1 "\n"
#define NGENUINE 4
#define EDIT_MAX 2048

static yk_keyring *ring;
static yk_token_secret secret;
/* Records made at start-up with the ring (random IVs): the only strings
 * that may ever unwrap. */
static char *genuine[NGENUINE];

/* Parse a keyring that must be good. */
static yk_keyring *
must_parse(const char *text)
{
    yk_keyring *kr = NULL;

    if (yk_keyring_parse(text, strlen(text), &kr) != 0)
        abort();
    return kr;
}

/* Build the ring and the genuine records once. */
static void
init_once(void)
{
    static const struct { const char *principal, *pubid; int v1; } g[] = {
        { "alice@EXAMPLE.COM", "cccccccccccb", 0 },
        { "host/a:b c@EXAMPLE.COM", "", 0 },
        { "bob@EXAMPLE.COM", "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv", 1 },
        { "carol", "dd", 1 },
    };
    yk_keyring *ring1;
    size_t i;

    if (ring != NULL)
        return;
    ring = must_parse(RING_12);
    ring1 = must_parse(RING_1);
    for (i = 0; i < sizeof(secret.aes_key); i++)
        secret.aes_key[i] = (unsigned char)(0x11 * i);
    memcpy(secret.private_id, "\x01\x02\x03\x04\x05\x06", 6);
    for (i = 0; i < NGENUINE; i++) {
        if (yk_keywrap_wrap(g[i].v1 ? ring1 : ring, g[i].principal,
                            g[i].pubid, &secret, &genuine[i]) != 0)
            abort();
    }
    yk_keyring_free(ring1);
}

/* The public id and principal named by a record that parsed. */
static void
split_record(const char *rec, char *pubid, size_t size,
             const char **principal_out)
{
    const char *p = rec, *q;
    int i;

    p = strchr(p, ':') + 1;            /* after "yk1" */
    p = strchr(p, ':') + 1;            /* after the kvno */
    q = strchr(p, ':');
    if ((size_t)(q - p) >= size)
        abort();
    memcpy(pubid, p, (size_t)(q - p));
    pubid[q - p] = '\0';
    for (i = 0; i < 3; i++)            /* pubid, iv, ct */
        q = strchr(q, ':') + 1;
    *principal_out = q;
}

/* Unwrap s the way a caller would and check every invariant. */
static void
check_record(const char *s)
{
    unsigned char pattern[sizeof(yk_token_secret)];
    yk_token_secret out;
    char pubid[64];
    const char *principal = NULL;
    uint32_t kvno = 0;
    krb5_error_code kret, uret;
    int is_genuine = 0;
    size_t i;

    memset(pattern, 0x5a, sizeof(pattern));
    for (i = 0; i < NGENUINE; i++)
        is_genuine |= (strcmp(s, genuine[i]) == 0);

    kret = yk_keywrap_record_kvno(s, &kvno);
    memset(&out, 0x5a, sizeof(out));
    if (kret != 0) {
        /* Same parser: unwrap must call it malformed too. */
        if (kret != YK_ERR_WRAP_FORMAT || is_genuine || kvno != 0)
            abort();
        if (yk_keywrap_unwrap(ring, s, "x@Y", "", &out) !=
            YK_ERR_WRAP_FORMAT)
            abort();
        if (memcmp(&out, pattern, sizeof(out)) != 0)
            abort();
        return;
    }
    if (kvno == 0)
        abort();

    split_record(s, pubid, sizeof(pubid), &principal);
    uret = yk_keywrap_unwrap(ring, s, principal, pubid, &out);
    if (is_genuine) {
        if (uret != 0 || memcmp(&out, &secret, sizeof(out)) != 0)
            abort();
    } else {
        /* Records are canonical: any other string is a forgery. */
        if (uret == 0)
            abort();
        if (kvno != 1 && kvno != 2 && uret != YK_ERR_WRAP_KVNO)
            abort();
        if ((kvno == 1 || kvno == 2) && uret != YK_ERR_WRAP_INTEGRITY)
            abort();
        if (memcmp(&out, pattern, sizeof(out)) != 0)
            abort();
    }

    /* Asked for a principal no record can name: refused by name. */
    memset(&out, 0x5a, sizeof(out));
    if (yk_keywrap_unwrap(ring, s, "\x01", pubid, &out) !=
        YK_ERR_WRAP_BINDING || memcmp(&out, pattern, sizeof(out)) != 0)
        abort();
}

/* The input as edits of a genuine record: byte 0 picks the record, then
 * (op, position, byte) triples overwrite, insert or delete one byte; a
 * NUL written truncates. */
static void
check_edited(const uint8_t *data, size_t size)
{
    char buf[EDIT_MAX];
    size_t len, i, pos;

    if (size < 1)
        return;
    len = strlen(genuine[data[0] % NGENUINE]);
    if (len >= sizeof(buf))
        abort();
    memcpy(buf, genuine[data[0] % NGENUINE], len + 1);
    for (i = 1; i + 2 < size; i += 3) {
        pos = data[i + 1] % (len + 1);
        switch (data[i] % 3) {
        case 0:                         /* overwrite */
            if (pos < len)
                buf[pos] = (char)data[i + 2];
            break;
        case 1:                         /* insert */
            if (len + 1 >= sizeof(buf))
                break;
            memmove(buf + pos + 1, buf + pos, len - pos + 1);
            buf[pos] = (char)data[i + 2];
            len++;
            break;
        default:                        /* delete */
            if (pos < len) {
                memmove(buf + pos, buf + pos + 1, len - pos);
                len--;
            }
            break;
        }
        len = strlen(buf);
    }
    check_record(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* libFuzzer entry: the input as a record, then as edits of a good one. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s;
    size_t i;

    init_once();
    s = malloc(size + 1);
    if (s == NULL)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    check_record(s);
    free(s);
    check_edited(data, size);
    /* The genuine records still unwrap: nothing above disturbed state. */
    if (size > 0 && data[0] == 0xff) {
        for (i = 0; i < NGENUINE; i++)
            check_record(genuine[i]);
    }
    return 0;
}
