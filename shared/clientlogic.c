/* SPDX-License-Identifier: MIT */
/* clientlogic.c: the client module's decisions, as plain functions. */

/*
 * What clientplugin/client_main.c decides, without a krb5 callback in
 * sight, so that unit tests and a fuzz target can reach it: the mode of
 * a request (from the KDC's hint, a forced mode and the armor) and the
 * parser of a responder's answer.  The messages are the caller's.
 */

#include <config.h>

#include <errno.h>
#include <string.h>

#include "clientlogic.h"
#include "padata.h"
#include "secmem.h"

#define YK_KEYNAME_LEN 16            /* longest JSON key we accept */

krb5_error_code
yk_client_mode_parse(const char *value, int *mode_out)
{
    if (value != NULL && strcmp(value, "2fa") == 0) {
        *mode_out = YK_MODE_2FA;
        return 0;
    }
    if (value != NULL && strcmp(value, "otp") == 0) {
        *mode_out = YK_MODE_OTP;
        return 0;
    }
    return EINVAL;
}

yk_choice
yk_client_decide(uint8_t flags, int forced, int armored, int *mode_out)
{
    if (forced == YK_MODE_OTP) {
        if (!armored)
            return YK_CHOICE_NEEDS_ARMOR;
        if (!(flags & YK_HINT_OTP_ALONE_OK))
            return YK_CHOICE_NO_OTP_ALONE;
        *mode_out = YK_MODE_OTP;
        return YK_CHOICE_OK;
    }
    if (forced == YK_MODE_2FA) {
        if (!(flags & YK_HINT_PASSWORD_BOUND))
            return YK_CHOICE_NO_2FA;
        *mode_out = YK_MODE_2FA;
        return YK_CHOICE_OK;
    }
    if ((flags & YK_HINT_OTP_ALONE_OK) && armored) {
        *mode_out = YK_MODE_OTP;
        return YK_CHOICE_OK;
    }
    if (flags & YK_HINT_PASSWORD_BOUND) {
        *mode_out = YK_MODE_2FA;
        return YK_CHOICE_OK;
    }
    return YK_CHOICE_NONE;
}

/* Parse a JSON string starting at *pp (at its opening quote) into out
 * (outsize bytes, NUL-terminated); *pp moves past the closing quote.
 * Escapes are those libkrb5's JSON encoder writes; \u only below 0x80.
 * Returns 0 or EINVAL (also when the string does not fit). */
static krb5_error_code
yk_json_string(const char **pp, char *out, size_t outsize, size_t *len_out)
{
    static const char esc_in[] = "\"\\/bfnrt";
    static const char esc_out[] = "\"\\/\b\f\n\r\t";
    const char *p = *pp, *e;
    size_t n = 0;
    unsigned int u, i;
    int c;

    if (*p++ != '"')
        return EINVAL;
    for (;;) {
        c = (unsigned char)*p++;
        if (c == '"')
            break;
        if (c < 0x20)
            return EINVAL;          /* raw control char or end of text */
        if (c == '\\') {
            c = (unsigned char)*p++;
            if (c == 'u') {
                for (u = 0, i = 0; i < 4; i++) {
                    c = (unsigned char)*p++;
                    if (c >= '0' && c <= '9')
                        u = u * 16 + (unsigned int)(c - '0');
                    else if (c >= 'a' && c <= 'f')
                        u = u * 16 + (unsigned int)(c - 'a' + 10);
                    else if (c >= 'A' && c <= 'F')
                        u = u * 16 + (unsigned int)(c - 'A' + 10);
                    else
                        return EINVAL;
                }
                if (u == 0 || u >= 0x80)
                    return EINVAL;
                c = (int)u;
            } else {
                e = (c == '\0') ? NULL : strchr(esc_in, c);
                if (e == NULL)
                    return EINVAL;
                c = (unsigned char)esc_out[e - esc_in];
            }
        }
        if (n + 1 >= outsize)
            return EINVAL;
        out[n++] = (char)c;
    }
    out[n] = '\0';
    *pp = p;
    *len_out = n;
    return 0;
}

/* Skip JSON white space. */
static const char *
yk_json_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* See clientlogic.h. */
krb5_error_code
yk_client_parse_answer(const char *json, char *value, size_t valsize,
                       size_t *len_out)
{
    krb5_error_code ret = EINVAL;
    const char *p = json;
    char key[YK_KEYNAME_LEN], pin[2];
    size_t klen = 0, vlen = 0, plen = 0;
    int have_ti = 0, have_value = 0, have_pin = 0;

    p = yk_json_ws(p);
    if (*p++ != '{')
        goto cleanup;
    p = yk_json_ws(p);
    if (*p == '}')
        goto cleanup;
    for (;;) {
        if (yk_json_string(&p, key, sizeof(key), &klen) != 0)
            goto cleanup;
        p = yk_json_ws(p);
        if (*p++ != ':')
            goto cleanup;
        p = yk_json_ws(p);
        if (strcmp(key, "tokeninfo") == 0 && !have_ti) {
            /* We announce exactly one token: index 0. */
            if (p[0] != '0' || (p[1] >= '0' && p[1] <= '9'))
                goto cleanup;
            p++;
            have_ti = 1;
        } else if (strcmp(key, "value") == 0 && !have_value) {
            if (yk_json_string(&p, value, valsize, &vlen) != 0)
                goto cleanup;
            have_value = 1;
        } else if (strcmp(key, "pin") == 0 && !have_pin) {
            if (yk_json_string(&p, pin, sizeof(pin), &plen) != 0 ||
                plen != 0)
                goto cleanup;
            have_pin = 1;
        } else {
            goto cleanup;           /* unknown or repeated key */
        }
        p = yk_json_ws(p);
        if (*p == '}')
            break;
        if (*p++ != ',')
            goto cleanup;
        p = yk_json_ws(p);
    }
    p = yk_json_ws(p + 1);
    if (*p != '\0' || !have_ti || !have_value)
        goto cleanup;
    *len_out = vlen;
    ret = 0;

cleanup:
    if (ret)
        yk_zap(value, valsize);
    return ret;
}
