/* SPDX-License-Identifier: MIT */
/* clientlogic.h: the client module's decisions, as plain functions. */
#ifndef YK_CLIENTLOGIC_H
#define YK_CLIENTLOGIC_H

#include <stddef.h>
#include <stdint.h>
#include <krb5.h>

#define YK_MODE_AUTO 0               /* no mode forced (yubikey_mode) */

/* What yk_client_decide found. */
typedef enum {
    YK_CHOICE_OK = 0,                /* *mode_out is the mode to use */
    YK_CHOICE_NONE,                  /* the hint offers nothing usable */
    YK_CHOICE_NEEDS_ARMOR,           /* forced otp without FAST armor */
    YK_CHOICE_NO_OTP_ALONE,          /* forced otp, not offered */
    YK_CHOICE_NO_2FA                 /* forced 2fa, not offered */
} yk_choice;

/* A yubikey_mode option value: "2fa" (YK_MODE_2FA) or "otp"
 * (YK_MODE_OTP); EINVAL for anything else, NULL included. */
krb5_error_code yk_client_mode_parse(const char *value, int *mode_out);

/* The mode for one request from the hint's flags (YK_HINT_*), the mode
 * forced (YK_MODE_AUTO: none) and whether the request is armored: a
 * forced mode is honoured or refused (the caller stops); without one,
 * the OTP alone when offered and armored, else password + OTP when
 * offered, else YK_CHOICE_NONE (other mechanisms may go on). */
yk_choice yk_client_decide(uint8_t flags, int forced, int armored,
                           int *mode_out);

/* Parse the responder's answer to the "otp" question, as
 * krb5_responder_otp_set_answer writes it: {"tokeninfo":0,"value":"..."}
 * (keys in any order, JSON white space, an empty "pin" tolerated; one
 * token announced, no PIN).  The value goes into value (valsize bytes,
 * NUL-terminated, *len_out its length); it is a secret and is wiped on
 * failure.  0 or EINVAL (anything else, a value that does not fit). */
krb5_error_code yk_client_parse_answer(const char *json, char *value,
                                       size_t valsize, size_t *len_out);

#endif /* YK_CLIENTLOGIC_H */
