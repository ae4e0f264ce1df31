/* SPDX-License-Identifier: MIT */
/* modhex.h: Yubico OTP lengths and the modhex alphabet, without crypto. */
#ifndef YK_MODHEX_H
#define YK_MODHEX_H

#define YK_AES_KEY_LEN 16          /* token AES-128 key */
#define YK_PRIVID_LEN 6            /* private (internal) id */
#define YK_TOKEN_LEN 16            /* the encrypted block */
#define YK_TOKEN_MODHEX_LEN 32     /* the block in modhex */
#define YK_PUBID_MAX 16            /* public id bytes, at most */
#define YK_PUBID_MODHEX_MAX 32     /* public id modhex chars, at most */
#define YK_PUBID_MODHEX_STD 12     /* a factory public id (6 bytes) */
#define YK_OTP_MIN_LEN 32          /* OTP characters, at least */
#define YK_OTP_MAX_LEN 64          /* OTP characters, at most */

/* 1 if c is a modhex character (either case: "cbdefghijklnrtuv"). */
static inline int
yk_modhex_char(char c)
{
    switch (c | 0x20) {
    case 'c': case 'b': case 'd': case 'e': case 'f': case 'g': case 'h':
    case 'i': case 'j': case 'k': case 'l': case 'n': case 'r': case 't':
    case 'u': case 'v':
        return 1;
    default:
        return 0;
    }
}

#endif /* YK_MODHEX_H */
