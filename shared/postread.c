/* SPDX-License-Identifier: MIT */
/* postread.c: the post-read entry of a counter swap, read strictly. */

/*
 * A swap deletes the state values it read and adds the new one.  With
 * delta-syncrepl a value that replication added after the read survives
 * that modify, so the KDC asks for the entry as the modify left it
 * (RFC 4527 post-read control) and looks there for another value of the
 * same token whose counter is as high as the new one: an OTP accepted on
 * another provider too.
 *
 * The control value is a SearchResultEntry:
 *   [APPLICATION 4] SEQUENCE { objectName LDAPDN,
 *              attributes SEQUENCE OF SEQUENCE {
 *                  type AttributeDescription, vals SET OF value } }
 */

#include <config.h>

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

krb5_error_code
yk_postread_rival(const char *value, size_t len, const char *mine,
                  const yk_state_rec *mine_rec, int *rival_out)
{
    struct berval bv, dn, attr;
    BerElement *ber;
    BerVarray vals;
    ber_tag_t tag;
    ber_len_t blen;
    char *last;
    size_t i, mine_len;
    int seen = 0, bad = 0, kind, rival = YK_RIVAL_NONE;

    *rival_out = YK_RIVAL_NONE;
    /* (liblber's ber_init of an empty value gives no buffer to read.) */
    if (value == NULL || len == 0 || mine == NULL || mine_rec == NULL)
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
                    memcmp(vals[i].bv_val, mine, mine_len) == 0) {
                    seen = 1;
                    continue;
                }
                kind = classify(vals[i].bv_val, vals[i].bv_len, mine_rec);
                if (kind > rival)   /* YK_RIVAL_*: in increasing strength */
                    rival = kind;
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
    if (bad || !seen)
        return YK_ERR_RECORD_FORMAT;
    *rival_out = rival;
    return 0;
}
