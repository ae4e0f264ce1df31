/* SPDX-License-Identifier: MIT */
/* importfile.h: parsers of token import files and of ykadmin's --map file. */
#ifndef YK_IMPORTFILE_H
#define YK_IMPORTFILE_H

#include <stddef.h>
#include <krb5.h>

#include "otp.h"

/*
 * yk_import_parse reads the text of a file that holds existing Yubico OTP
 * tokens: ykman's "-O" CSV (the personalization tool's "Yubico format"),
 * the personalization tool's "Traditional" log, or yubikey-ksm's
 * provisioning format (decrypted).  The formats are described at the top
 * of importfile.c.  The whole file parses or nothing is returned.
 *
 * The input buffer is the caller's and holds AES keys in clear: read the
 * file into one buffer of its final size (growing it with realloc leaves
 * copies behind), and wipe it with yk_zap as soon as the parser returns,
 * whatever it returned.  The result keeps its secrets in fixed buffers
 * and is wiped by yk_import_set_free.
 *
 * Errors: EINVAL with a one-line message in errbuf ("line 4, field 4 (AES
 * key): expected 32 hex digits, found 30 characters"), naming the line
 * (1-based, as an editor counts them) and the field (1-based column).
 * Messages quote canonical public ids and the Traditional log's event
 * types, never a key, private id or access code (nor any field that
 * failed validation: a shifted column may hold a key).
 * They do not name the file: the caller prefixes it.  ENOMEM when memory
 * runs out (errbuf says so too).  errbuf may be NULL when errlen is 0;
 * YK_IMPORT_ERRBUF_SIZE bytes hold every message whole.
 */

/* File formats (the format argument; AUTO detects from the first line). */
enum {
    YK_IMPORT_AUTO = 0,
    YK_IMPORT_YKMAN_CSV,        /* ykman -O / personalization "Yubico" */
    YK_IMPORT_TRADITIONAL,      /* personalization tool "Traditional" log */
    YK_IMPORT_KSM               /* yubikey-ksm "# ykksm 1" */
};

#define YK_IMPORT_SERIAL_MAX 15         /* decimal digits of a serial */
#define YK_IMPORT_ACCESS_CODE_LEN 6     /* a slot's access code, bytes */
#define YK_IMPORT_MAX_TOKENS 1000000    /* tokens in one file, at most */
#define YK_IMPORT_PRINCIPAL_MAX 1024    /* bytes of a principal in a map */
#define YK_IMPORT_ERRBUF_SIZE 320       /* room for any error message */

/* One imported token.  Holds the AES key, private id and access code:
 * live only inside a yk_import_set, which wipes them. */
typedef struct {
    char pubid[YK_PUBID_MODHEX_MAX + 1];  /* canonical lower-case modhex,
                                           * 2..32 characters, even */
    unsigned char aes_key[YK_AES_KEY_LEN];
    unsigned char private_id[YK_PRIVID_LEN];
    char serial[YK_IMPORT_SERIAL_MAX + 1]; /* decimal as written, "" if
                                            * the file names none */
    int has_access_code;                  /* 0: none (empty or all 0) */
    unsigned char access_code[YK_IMPORT_ACCESS_CODE_LEN]; /* 0s if none */
    int slot;                             /* 1 or 2 (Traditional log),
                                           * 0 when the file does not say */
    size_t line;                          /* 1-based line in the file */
} yk_import_token;

/* The tokens of one file, in file order (opaque). */
typedef struct yk_import_set yk_import_set;

/* The public-id -> principal pairs of a --map file (opaque). */
typedef struct yk_import_map yk_import_map;

/* Map a format name to YK_IMPORT_*: "auto", "ykman" (also "csv",
 * "yubico"), "traditional", "ksm" (also "ykksm"); case-insensitive.
 * EINVAL for any other name; *format_out is set only on success. */
krb5_error_code yk_import_format_parse(const char *name, int *format_out);

/* The canonical name of a YK_IMPORT_* value ("ykman", "traditional",
 * "ksm", "auto"), or "unknown". */
const char *yk_import_format_name(int format);

/* Parse len bytes at buf (not NUL-terminated; a leading UTF-8 BOM, CRLF
 * line ends, trailing blanks and blank lines are tolerated) as format.
 * On success *set_out holds at least one token, no public id twice; free
 * it with yk_import_set_free.  On error *set_out is untouched, nothing is
 * returned, and errbuf holds the message.  An OpenPGP file (armored or
 * binary) is refused with advice to decrypt it first with gpg. */
krb5_error_code yk_import_parse(const char *buf, size_t len, int format,
                                yk_import_set **set_out,
                                char *errbuf, size_t errlen);

/* Number of tokens in set (0 for NULL). */
size_t yk_import_set_count(const yk_import_set *set);

/* Token i (0-based, file order) of set, owned by the set; NULL when i is
 * out of range or set is NULL. */
const yk_import_token *yk_import_set_get(const yk_import_set *set,
                                         size_t i);

/* The format the file was parsed as (the detected one under AUTO). */
int yk_import_set_format(const yk_import_set *set);

/* Wipe every token of set and free it; NULL is accepted. */
void yk_import_set_free(yk_import_set *set);

/* Parse a --map file: lines "PUBLIC-ID PRINCIPAL" separated by blanks
 * (spaces or tabs), lines starting with '#' and blank lines ignored, CRLF
 * tolerated.  The public id is folded to canonical lower case; the
 * principal is taken as written (1..YK_IMPORT_PRINCIPAL_MAX bytes, no
 * control characters; the caller parses it with krb5).  A public id twice
 * is refused, naming both lines; so is a file without entries.  Errors as
 * for yk_import_parse; free the map with yk_import_map_free. */
krb5_error_code yk_import_parse_map(const char *buf, size_t len,
                                    yk_import_map **map_out,
                                    char *errbuf, size_t errlen);

/* Number of entries of map (0 for NULL). */
size_t yk_import_map_count(const yk_import_map *map);

/* Entry i (0-based, file order): its canonical public id, its principal
 * and its line; NULL / 0 when i is out of range.  Owned by the map. */
const char *yk_import_map_pubid(const yk_import_map *map, size_t i);
const char *yk_import_map_principal(const yk_import_map *map, size_t i);
size_t yk_import_map_line(const yk_import_map *map, size_t i);

/* The principal mapped to pubid (canonical lower case, as in
 * yk_import_token.pubid), or NULL when the map has no such line.  Binary
 * search; owned by the map. */
const char *yk_import_map_lookup(const yk_import_map *map,
                                 const char *pubid);

/* Check that every token of set has a line in map: 0, or EINVAL with
 * "line N: public id X has no line in the map file" (N is the token's
 * line in the import file) for the first such token.  Map lines without a
 * token are fine. */
krb5_error_code yk_import_map_check(const yk_import_map *map,
                                    const yk_import_set *set,
                                    char *errbuf, size_t errlen);

/* Free map; NULL is accepted. */
void yk_import_map_free(yk_import_map *map);

#endif /* YK_IMPORTFILE_H */
