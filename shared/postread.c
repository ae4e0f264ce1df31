/* SPDX-License-Identifier: MIT */
/* postread.c: the post-read entry of a counter swap, read strictly. */

/*
 * A swap deletes the state values it read and adds the new one.  With
 * delta-syncrepl a value that replication added after the read survives
 * that modify, so the KDC asks for the entry as the modify left it
 * (RFC 4527 post-read control) and looks there for another value of the
 * same token whose counter is as high as the new one: an OTP accepted on
 * another provider too.  Values of the token with a lower counter are no
 * rivals, only a conflict's leftovers (yk_postread_lower): the store
 * deletes them after the swap.
 *
 * The control value is a SearchResultEntry:
 *   [APPLICATION 4] SEQUENCE { objectName LDAPDN,
 *              attributes SEQUENCE OF SEQUENCE {
 *                  type AttributeDescription, vals SET OF value } }
 */

#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <lber.h>

#include "errors.h"
#include "postread.h"

#define YK_ATTR_STATE_NAME "yubikeyTokenState"
#define YK_TAG_SEARCH_ENTRY ((ber_tag_t)0x64U)  /* [APPLICATION 4] */

/* What one state value v (len bytes) is beside mine. */
static int
classify(const char *v, size_t len, const yk_state_rec *mine)
{
    yk_state_rec rec;

    if (yk_state_rec_parse(v, len, &rec) != 0 ||
        strcmp(rec.pubid, mine->pubid) != 0 || rec.counter < mine->counter)
        return YK_RIVAL_NONE;
    if (rec.counter > mine->counter)
        return YK_RIVAL_OLDER;
    if (rec.has_nonce && mine->has_nonce && rec.nonce == mine->nonce)
        return YK_RIVAL_RETRANSMISSION;
    return YK_RIVAL_REPLAY;
}

/* Called for each state value of the entry other than mine. */
typedef void (*visit_fn)(const struct berval *v, void *arg);

/* Walk the post-read entry value (len bytes) strictly: visit each
 * yubikeyTokenState value other than mine; YK_ERR_RECORD_FORMAT when it
 * is not such an entry, or lacks mine. */
static krb5_error_code
walk(const char *value, size_t len, const char *mine, visit_fn visit,
     void *arg)
{
    struct berval bv, dn, attr;
    BerElement *ber;
    BerVarray vals;
    ber_tag_t tag;
    ber_len_t blen;
    char *last;
    size_t i, mine_len;
    int seen = 0, bad = 0;

    /* (liblber's ber_init of an empty value gives no buffer to read.) */
    if (value == NULL || len == 0 || mine == NULL)
        return YK_ERR_RECORD_FORMAT;
    mine_len = strlen(mine);
    bv.bv_val = (char *)value;
    bv.bv_len = len;
    ber = ber_init(&bv);
    if (ber == NULL)
        return YK_ERR_RECORD_FORMAT;
    /* The tags too: the entry [APPLICATION 4], each attribute a
     * SEQUENCE, the attributes a SEQUENCE OF, the values a SET. */
    if (ber_peek_tag(ber, &blen) != YK_TAG_SEARCH_ENTRY ||
        ber_scanf(ber, "{m", &dn) == LBER_ERROR ||
        ber_peek_tag(ber, &blen) != LBER_SEQUENCE) {
        bad = 1;
        goto done;
    }
    for (tag = ber_first_element(ber, &blen, &last); tag != LBER_DEFAULT;
         tag = ber_next_element(ber, &blen, last)) {
        vals = NULL;
        if (tag != LBER_SEQUENCE ||
            ber_scanf(ber, "{m", &attr) == LBER_ERROR ||
            ber_peek_tag(ber, &blen) != LBER_SET ||
            ber_scanf(ber, "[W]}", &vals) == LBER_ERROR) {
            ber_bvarray_free(vals);
            bad = 1;
            break;
        }
        if (attr.bv_len == strlen(YK_ATTR_STATE_NAME) &&
            strncasecmp(attr.bv_val, YK_ATTR_STATE_NAME, attr.bv_len) == 0) {
            for (i = 0; vals != NULL && vals[i].bv_val != NULL; i++) {
                if (vals[i].bv_len == mine_len &&
                    memcmp(vals[i].bv_val, mine, mine_len) == 0)
                    seen = 1;
                else
                    visit(&vals[i], arg);
            }
        }
        ber_bvarray_free(vals);
    }
    /* Nothing may follow the entry. */
    if (!bad && (ber_get_option(ber, LBER_OPT_REMAINING_BYTES, &blen) !=
                 LBER_OPT_SUCCESS || blen != 0))
        bad = 1;

done:
    ber_free(ber, 1);
    return bad || !seen ? YK_ERR_RECORD_FORMAT : 0;
}

typedef struct {
    const yk_state_rec *mine;
    int rival;
} rival_arg;

static void
visit_rival(const struct berval *v, void *arg)
{
    rival_arg *a = arg;
    int kind = classify(v->bv_val, v->bv_len, a->mine);

    if (kind > a->rival)   /* YK_RIVAL_*: in increasing strength */
        a->rival = kind;
}

krb5_error_code
yk_postread_rival(const char *value, size_t len, const char *mine,
                  const yk_state_rec *mine_rec, int *rival_out)
{
    rival_arg a = { mine_rec, YK_RIVAL_NONE };
    krb5_error_code ret;

    *rival_out = YK_RIVAL_NONE;
    if (mine_rec == NULL)
        return YK_ERR_RECORD_FORMAT;
    ret = walk(value, len, mine, visit_rival, &a);
    if (ret == 0)
        *rival_out = a.rival;
    return ret;
}

typedef struct {
    const yk_state_rec *mine;
    char **vals;
    size_t n;
    int nomem;
} lower_arg;

static void
visit_lower(const struct berval *v, void *arg)
{
    lower_arg *a = arg;
    yk_state_rec rec;
    char **grown, *copy;

    /* (A value with a NUL byte is no record to delete by its text.) */
    if (a->nomem || memchr(v->bv_val, '\0', v->bv_len) != NULL ||
        yk_state_rec_parse(v->bv_val, v->bv_len, &rec) != 0 ||
        strcmp(rec.pubid, a->mine->pubid) != 0 ||
        rec.counter >= a->mine->counter)
        return;
    grown = realloc(a->vals, (a->n + 2) * sizeof(*grown));
    if (grown != NULL) {
        a->vals = grown;
        a->vals[a->n] = NULL;   /* terminated even if the copy fails */
    }
    copy = grown != NULL ? strndup(v->bv_val, v->bv_len) : NULL;
    if (copy == NULL) {
        a->nomem = 1;
        return;
    }
    a->vals[a->n++] = copy;
    a->vals[a->n] = NULL;
}

krb5_error_code
yk_postread_lower(const char *value, size_t len, const char *mine,
                  const yk_state_rec *mine_rec, char ***vals_out)
{
    lower_arg a = { mine_rec, NULL, 0, 0 };
    krb5_error_code ret;

    *vals_out = NULL;
    if (mine_rec == NULL)
        return YK_ERR_RECORD_FORMAT;
    ret = walk(value, len, mine, visit_lower, &a);
    if (ret == 0 && a.nomem)
        ret = ENOMEM;
    if (ret != 0) {
        yk_postread_free(a.vals);
        return ret;
    }
    *vals_out = a.vals;
    return 0;
}

void
yk_postread_free(char **vals)
{
    size_t i;

    for (i = 0; vals != NULL && vals[i] != NULL; i++)
        free(vals[i]);
    free(vals);
}
