/* SPDX-License-Identifier: MIT */
/* fuzz_record.c: libFuzzer target for the LDAP token record parsers. */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"

/* Parse data as a secret record; on success the canonical form must be
 * the input byte for byte and must parse to the same fields. */
static void
check_secret(const char *s, size_t len)
{
    yk_secret_rec *rec = NULL, *again = NULL, *cp = NULL;
    char *out = NULL, *out2 = NULL;

    if (yk_secret_rec_parse(s, len, &rec) != 0)
        return;
    if (yk_secret_rec_format(rec, &out) != 0 || strlen(out) != len ||
        memcmp(out, s, len) != 0)
        abort();
    if (yk_secret_rec_parse(out, len, &again) != 0 ||
        strcmp(again->pubid, rec->pubid) != 0 ||
        again->state != rec->state ||
        again->enrolled_at != rec->enrolled_at ||
        strcmp(again->description, rec->description) != 0 ||
        strcmp(again->enrolled_by, rec->enrolled_by) != 0 ||
        strcmp(again->wrapped, rec->wrapped) != 0)
        abort();
    if (yk_secret_rec_copy(rec, &cp) != 0 ||
        yk_secret_rec_format(cp, &out2) != 0 || strcmp(out2, out) != 0)
        abort();
    if (!yk_pubid_valid(rec->pubid) ||
        yk_token_state_name(rec->state) == NULL)
        abort();
    free(out);
    free(out2);
    yk_secret_rec_free(rec);
    yk_secret_rec_free(again);
    yk_secret_rec_free(cp);
}

/* Parse data as a state record; on success the canonical form must be
 * the input byte for byte. */
static void
check_state(const char *s, size_t len)
{
    yk_state_rec rec, again;
    char *out = NULL;

    if (yk_state_rec_parse(s, len, &rec) != 0)
        return;
    if (yk_state_rec_format(&rec, &out) != 0 || strlen(out) != len ||
        memcmp(out, s, len) != 0)
        abort();
    if (yk_state_rec_parse(out, len, &again) != 0 ||
        strcmp(again.pubid, rec.pubid) != 0 ||
        again.counter != rec.counter || again.gen != rec.gen ||
        again.has_nonce != rec.has_nonce || again.nonce != rec.nonce ||
        again.last_use != rec.last_use || !yk_pubid_valid(rec.pubid))
        abort();
    free(out);
}

/* Parse data as a policy value; a success must name itself. */
static void
check_policy(const char *s, size_t len)
{
    const char *name;
    int policy;

    if (yk_policy_parse(s, len, &policy) != 0)
        return;
    name = yk_policy_name(policy);
    if (name == NULL || strlen(name) != len || memcmp(name, s, len) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Each input is tried as every kind of record.  The bytes are copied to
 * an exact-size heap buffer so that a read past the end is caught. */
int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size ? size : 1);

    if (buf == NULL)
        return 0;
    memcpy(buf, data, size);
    check_secret(buf, size);
    check_state(buf, size);
    check_policy(buf, size);
    free(buf);
    return 0;
}
