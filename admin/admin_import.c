/* SPDX-License-Identifier: MIT */
/* admin_import.c: ykadmin import: existing tokens, from stdin or a file. */

/*
 * Two modes.  One token: "AESKEYHEX PRIVIDHEX" on standard input (32 and
 * 12 hexadecimal digits separated by white space, optionally surrounded
 * by white space, nothing else), the principal and public id on the
 * command line.  A file: ykman's -O CSV, the personalization tool's
 * Yubico and Traditional logs or yubikey-ksm's format (admin/importfile.c
 * parses them), each token assigned to a principal by --principal (a file
 * of one token) or a --map file.
 *
 * Nothing is written unless everything checks: the whole file parses,
 * every token has a principal that parses and has a directory entry,
 * no public id is enrolled already (or twice in the file), and every
 * --first-otp decrypts with its token's key.  An imported token's
 * counter is unknown: stored as 0, every OTP the token ever produced
 * would be accepted once more.  --first-otp seeds it from a fresh OTP,
 * --counter [PUBID=]N sets it to a known value (the last one used, e.g.
 * by a former validation server); a token imported with neither gets a
 * loud warning.  Keys live in locked buffers wiped on every path; the
 * file's text is wiped as soon as it is parsed.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "admin.h"
#include "errors.h"
#include "secfile.h"
#include "importfile.h"
#include "otp.h"
#include "record.h"
#include "secmem.h"
#include "store.h"

#define SECRET_INPUT_MAX 512          /* bytes of standard input, at most */
#define AES_KEY_HEX_LEN (2 * YK_AES_KEY_LEN)
#define PRIVID_HEX_LEN (2 * YK_PRIVID_LEN)
#define IMPORT_FILE_MAX (64 * 1024 * 1024) /* bytes of an import file */
#define MAP_FILE_MAX (16 * 1024 * 1024)    /* bytes of a map file */
#define WHERE_MAX 512                 /* "FILE line N" in messages */
#define WARN_LIST_MAX 10              /* tokens named by the warning */
#define COUNTER_MAX 0x7fffffUL        /* ((0x7fff << 8) | 0xff) */

/* Where an imported token's counter came from. */
enum {
    COUNTER_UNKNOWN = 0,         /* stored as 0: old OTPs work once */
    COUNTER_FIRST_OTP,           /* --first-otp: that OTP is consumed */
    COUNTER_GIVEN                /* --counter */
};

/* One token to import, whatever its source. */
typedef struct {
    const char *pubid;           /* canonical modhex */
    const unsigned char *aes_key;
    const unsigned char *private_id;
    const char *serial;          /* "" when unknown */
    size_t line;                 /* 0: standard input */
    char *principal;             /* canonical (malloc'd) */
    yk_entry *entry;
    int counter_from;            /* COUNTER_* */
    uint32_t counter;
} import_item;

/* Turn echo off on the terminal fd; *saved_out keeps the old settings.
 * 1 when changed (restore later), 0 otherwise. */
static int
echo_off(int fd, struct termios *saved_out)
{
    struct termios t;

    if (tcgetattr(fd, saved_out) != 0)
        return 0;
    t = *saved_out;
    t.c_lflag &= ~(tcflag_t)ECHO;
    t.c_lflag |= ECHONL;
    return tcsetattr(fd, TCSAFLUSH, &t) == 0;
}

/* Read the secret input into buf (size bytes): from a terminal one line
 * without echo after a prompt, otherwise everything up to end of file.
 * read(2), not stdio: no copy outside buf.  EFBIG when longer. */
static krb5_error_code
read_secret_input(char *buf, size_t size, size_t *len_out)
{
    struct termios saved;
    krb5_error_code ret = 0;
    size_t len = 0;
    ssize_t n;
    int tty, restore = 0;
    char extra;

    tty = isatty(STDIN_FILENO);
    if (tty) {
        fprintf(stderr, "AES key (32 hex digits) and private id (12 hex "
                "digits): ");
        fflush(stderr);
        restore = echo_off(STDIN_FILENO, &saved);
    }
    for (;;) {
        if (len == size) {
            /* One byte more tells "exactly full" from "too long". */
            n = read(STDIN_FILENO, &extra, 1);
            if (n < 0 && errno == EINTR)
                continue;
            ret = (n == 0) ? 0 : (n < 0 ? errno : EFBIG);
            yk_zap(&extra, sizeof(extra));
            break;
        }
        n = read(STDIN_FILENO, buf + len, tty ? 1 : size - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            ret = errno;
            break;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (tty && buf[len - 1] == '\n')
            break;
    }
    if (restore)
        (void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
    if (!ret)
        *len_out = len;
    return ret;
}

/* Whether c is white space in the secret input. */
static int
is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
        c == '\f';
}

/* Parse "AESKEYHEX PRIVIDHEX" (white space around and between, nothing
 * else) from buf into *secret_out.  On failure *why_out names the problem
 * (never the input). */
static krb5_error_code
parse_secret_input(const char *buf, size_t len, yk_token_secret *secret_out,
                   const char **why_out)
{
    size_t i = 0, key_start, key_len, id_start, id_len;

    while (i < len && is_space(buf[i]))
        i++;
    key_start = i;
    while (i < len && !is_space(buf[i]))
        i++;
    key_len = i - key_start;
    while (i < len && is_space(buf[i]))
        i++;
    id_start = i;
    while (i < len && !is_space(buf[i]))
        i++;
    id_len = i - id_start;
    while (i < len && is_space(buf[i]))
        i++;

    if (key_len == 0) {
        *why_out = "standard input is empty";
        return EINVAL;
    }
    if (key_len != AES_KEY_HEX_LEN) {
        *why_out = "the AES key must be exactly 32 hex digits";
        return EINVAL;
    }
    if (yk_hex_decode(buf + key_start, key_len, secret_out->aes_key,
                      sizeof(secret_out->aes_key)) != 0) {
        *why_out = "the AES key is not hexadecimal";
        return EINVAL;
    }
    if (id_len == 0) {
        *why_out = "the private id (12 hex digits) is missing after the "
            "AES key";
        return EINVAL;
    }
    if (id_len != PRIVID_HEX_LEN) {
        *why_out = "the private id must be exactly 12 hex digits";
        return EINVAL;
    }
    if (yk_hex_decode(buf + id_start, id_len, secret_out->private_id,
                      sizeof(secret_out->private_id)) != 0) {
        *why_out = "the private id is not hexadecimal";
        return EINVAL;
    }
    if (i < len) {
        *why_out = "unexpected data after the private id";
        return EINVAL;
    }
    return 0;
}

/* Read the whole regular file at path (at most max bytes; secfile.c:
 * locked memory, no FIFO, refused when it changes meanwhile) into
 * *buf_out (give it back with yk_secfile_free); an import file (secrets
 * set) readable by others is warned about.  0, or an exit status after
 * printing why. */
static int
read_whole_file(const char *path, const char *what, size_t max,
                int secrets, char **buf_out, size_t *len_out)
{
    krb5_error_code ret;
    struct stat sb;

    memset(&sb, 0, sizeof(sb));
    ret = yk_secfile_read(path, max, buf_out, len_out, &sb);
    if (ret == EINVAL)
        return yk_admin_fail("the %s %s is not a regular file", what, path);
    if (ret == EFBIG)
        return yk_admin_fail("the %s %s is too large (at most %lu bytes)",
                             what, path, (unsigned long)max);
    if (ret == EAGAIN)
        return yk_admin_fail("cannot read the %s %s: it changed while "
                             "being read", what, path);
    if (ret)
        return yk_admin_fail("cannot open the %s %s: %s", what, path,
                             strerror(ret));
    if (secrets && (sb.st_mode & 077) != 0)
        fprintf(stderr, "ykadmin: warning: %s holds AES keys in clear and "
                "is readable by others: wipe it (shred -u) once imported\n",
                path);
    return 0;
}

/* Where an item came from, for messages: "FILE line N" or "standard
 * input". */
static void
item_where(const char *file, const import_item *it, char *out, size_t size)
{
    if (it->line == 0)
        snprintf(out, size, "standard input");
    else
        snprintf(out, size, "%s line %lu", file, (unsigned long)it->line);
}

/* Apply the --first-otp options to items: each OTP's public id names its
 * token, and the OTP must decrypt with that token's key and private id;
 * its counter becomes the token's.  0, or an exit status. */
static int
apply_first_otps(const yk_admin_args *a, import_item *items, size_t n)
{
    yk_token_fields fields;
    yk_otp otp;
    krb5_error_code ret;
    size_t i, j;
    int status = 0;

    for (i = 0; i < a->nfirst_otp && status == 0; i++) {
        const char *s = a->first_otp[i];

        ret = yk_otp_parse(s, strlen(s), &otp);
        if (ret) {
            status = yk_admin_fail("--first-otp: not an OTP: %s",
                                   yk_strerror(ret));
            break;
        }
        for (j = 0; j < n; j++) {
            if (strcmp(items[j].pubid, otp.pubid_modhex) == 0)
                break;
        }
        if (j == n) {
            status = yk_admin_fail("--first-otp: public id %s is not one "
                                   "of the tokens imported",
                                   otp.pubid_len > 0 ? otp.pubid_modhex :
                                   "(none)");
            break;
        }
        if (items[j].counter_from != COUNTER_UNKNOWN) {
            status = yk_admin_fail("--first-otp given twice for %s",
                                   items[j].pubid);
            break;
        }
        ret = yk_otp_verify(s, strlen(s), items[j].aes_key,
                            items[j].private_id, &otp, &fields);
        if (ret) {
            status = yk_admin_fail("--first-otp for %s does not verify with "
                                   "the imported key: %s (a wrong key or "
                                   "private id, or another token's OTP)",
                                   items[j].pubid, yk_strerror(ret));
        } else {
            items[j].counter = yk_otp_counter(&fields);
            items[j].counter_from = COUNTER_FIRST_OTP;
        }
        yk_zap(&fields, sizeof(fields));
    }
    yk_zap(&otp, sizeof(otp));
    return status;
}

/* Apply the --counter options to items: "PUBID=N" names its token, a
 * bare "N" the only one; N (decimal, or hex with 0x) becomes its stored
 * counter, so that every OTP up to N is refused.  0, or an exit
 * status. */
static int
apply_counters(const yk_admin_args *a, import_item *items, size_t n)
{
    char pubid[YK_PUBID_MODHEX_MAX + 1], given[YK_PUBID_MODHEX_MAX * 2 + 1];
    const char *s, *eq, *num;
    char *end = NULL;
    unsigned long v;
    size_t i, j, len;

    for (i = 0; i < a->ncounter; i++) {
        s = a->counter[i];
        eq = strchr(s, '=');
        num = eq != NULL ? eq + 1 : s;
        errno = 0;
        v = strtoul(num, &end, 0);
        if (*num < '0' || *num > '9' || *end != '\0' || errno != 0 ||
            v > COUNTER_MAX)
            return yk_admin_fail("--counter %s: not a counter (0 to %lu, "
                                 "as \"ykadmin list\" shows it: usage "
                                 "counter * 256 + session counter)", s,
                                 COUNTER_MAX);
        if (eq == NULL) {
            if (n != 1)
                return yk_admin_fail("--counter %s: %lu tokens are "
                                     "imported: name the token, --counter "
                                     "PUBID=N", s, (unsigned long)n);
            j = 0;
        } else {
            len = (size_t)(eq - s);
            if (len >= sizeof(given))
                len = sizeof(given) - 1;
            memcpy(given, s, len);
            given[len] = '\0';
            if (yk_admin_canon_pubid(given, pubid) != 0)
                return YK_ADMIN_EXIT_FAIL;
            for (j = 0; j < n; j++) {
                if (strcmp(items[j].pubid, pubid) == 0)
                    break;
            }
            if (j == n)
                return yk_admin_fail("--counter: public id %s is not one "
                                     "of the tokens imported", pubid);
        }
        if (items[j].counter_from != COUNTER_UNKNOWN)
            return yk_admin_fail("token %s: its counter is given twice "
                                 "(--counter, --first-otp): give one",
                                 items[j].pubid);
        items[j].counter = (uint32_t)v;
        items[j].counter_from = COUNTER_GIVEN;
    }
    return 0;
}

/* Warn loudly (standard error) about every item imported without a known
 * counter: the KDC will accept each OTP that token ever produced once
 * more.  Names at most WARN_LIST_MAX of them. */
static void
warn_unknown_counters(const import_item *items, size_t n, int dry_run)
{
    size_t i, count = 0, shown = 0;

    for (i = 0; i < n; i++)
        count += items[i].counter_from == COUNTER_UNKNOWN;
    if (count == 0)
        return;
    fprintf(stderr, "ykadmin: WARNING: %lu token%s %s imported with "
            "counter 0: every OTP %s ever produced (any counter above 0) "
            "will be accepted once, also one copied from an old log or a "
            "former validation server.  Give --first-otp with a fresh OTP "
            "of each token, or --counter PUBID=N with the counter of its "
            "last OTP used; or run \"ykadmin raise-counters\" on %s "
            "afterwards.\n", (unsigned long)count, count == 1 ? "" : "s",
            dry_run ? "would be" : (count == 1 ? "is" : "are"),
            count == 1 ? "it" : "they",
            count == 1 ? "its principal" : "their principals");
    for (i = 0; i < n && shown < WARN_LIST_MAX; i++) {
        if (items[i].counter_from != COUNTER_UNKNOWN)
            continue;
        fprintf(stderr, "ykadmin: WARNING:   %s for %s\n", items[i].pubid,
                items[i].principal);
        shown++;
    }
    if (count > shown)
        fprintf(stderr, "ykadmin: WARNING:   and %lu more\n",
                (unsigned long)(count - shown));
}

/* Check every item against the directory: its principal's entry exists,
 * its public id is free.  Prints every problem; 0 when there is none,
 * else an exit status. */
static int
check_items(yk_admin *adm, yk_store *st, const char *file,
            import_item *items, size_t n)
{
    char where[WHERE_MAX];
    char *holder = NULL, *dn = NULL;
    krb5_error_code ret;
    size_t i, problems = 0, last = SIZE_MAX;

    for (i = 0; i < n; i++) {
        import_item *it = &items[i];

        item_where(file, it, where, sizeof(where));
        ret = yk_store_find_pubid(st, it->pubid, &holder, &dn);
        if (ret == 0 || ret == YK_ERR_STORE_AMBIGUOUS) {
            yk_admin_fail("%s: public id %s is already enrolled for %s: one "
                          "token, one principal", where, it->pubid,
                          holder != NULL ? holder : "several entries");
            problems++;
        } else if (ret != YK_ERR_TOKEN_UNKNOWN) {
            return yk_admin_store_fail(adm, ret, "cannot check whether "
                                       "public id %s is enrolled",
                                       it->pubid);
        }
        free(holder);
        free(dn);
        holder = dn = NULL;

        if (last != SIZE_MAX &&
            strcmp(items[last].principal, it->principal) == 0) {
            /* Consecutive tokens of one principal share its entry. */
            continue;
        }
        ret = yk_store_lookup(st, it->principal, 1, &it->entry);
        if (ret == 0)
            last = i;
        if (ret == YK_ERR_STORE_NOT_FOUND) {
            yk_admin_no_entry(adm, where, it->principal);
            problems++;
        } else if (ret == YK_ERR_STORE_AMBIGUOUS) {
            yk_admin_fail("%s: more than one directory entry matches %s",
                          where, it->principal);
            problems++;
        } else if (ret) {
            return yk_admin_store_fail(adm, ret, "cannot read %s",
                                       it->principal);
        }
    }
    if (problems > 0)
        return yk_admin_fail("nothing was imported: %lu problem%s above",
                             (unsigned long)problems,
                             problems == 1 ? "" : "s");
    return 0;
}

/* The entry of item i (its own, or the one of the item before it that
 * named the same principal). */
static const yk_entry *
item_entry(const import_item *items, size_t i)
{
    while (items[i].entry == NULL && i > 0)
        i--;
    return items[i].entry;
}

/* The log word for a COUNTER_* value. */
static const char *
counter_from_name(int from)
{
    return from == COUNTER_FIRST_OTP ? "first-otp" :
        from == COUNTER_GIVEN ? "given" : "unknown";
}

/* Write every item as an active token.  0, or an exit status after saying
 * which tokens were written before the failure. */
static int
write_items(yk_admin *adm, yk_store *st, const yk_keyring *kr,
            const char *file, const char *description, import_item *items,
            size_t n)
{
    yk_token_secret *secret = NULL;
    yk_secret_rec *rec = NULL;
    yk_state_rec state;
    krb5_error_code ret;
    int64_t now = (int64_t)time(NULL);
    size_t i;
    int status = YK_ADMIN_EXIT_FAIL;

    secret = calloc(1, sizeof(*secret));
    if (secret == NULL)
        return yk_admin_fail("out of memory");
    (void)mlock(secret, sizeof(*secret));
    for (i = 0; i < n; i++) {
        import_item *it = &items[i];

        memcpy(secret->aes_key, it->aes_key, sizeof(secret->aes_key));
        memcpy(secret->private_id, it->private_id,
               sizeof(secret->private_id));
        ret = yk_admin_new_records(adm, kr, it->principal, it->pubid,
                                   secret, YK_TOKEN_ACTIVE, description,
                                   it->serial, it->counter,
                                   it->counter_from == COUNTER_FIRST_OTP ?
                                   now : 0, &rec, &state);
        yk_zap(secret, sizeof(*secret));
        if (ret) {
            yk_admin_fail("cannot wrap the key of token %s: %s", it->pubid,
                          yk_strerror(ret));
            goto cleanup;
        }
        if (yk_admin_add_token(adm, st, item_entry(items, i), rec,
                               &state) != 0)
            goto cleanup;
        yk_secret_rec_free(rec);
        rec = NULL;
        if (it->line > 0)
            yk_admin_log(adm, "import principal=%s public_id=%s state=active "
                         "counter=%lu file=%s line=%lu counter_from=%s",
                         it->principal, it->pubid,
                         (unsigned long)state.counter, file,
                         (unsigned long)it->line,
                         counter_from_name(it->counter_from));
        else
            yk_admin_log(adm, "import principal=%s public_id=%s state=active "
                         "counter=%lu counter_from=%s", it->principal,
                         it->pubid, (unsigned long)state.counter,
                         counter_from_name(it->counter_from));
        printf("Imported token %s for %s: active (counter %lu).\n",
               it->pubid, it->principal, (unsigned long)state.counter);
    }
    status = YK_ADMIN_EXIT_OK;

cleanup:
    if (status != YK_ADMIN_EXIT_OK && n > 1)
        yk_admin_fail("%lu of %lu tokens were imported before this failure "
                      "(listed above); the others were not written",
                      (unsigned long)i, (unsigned long)n);
    yk_secret_rec_free(rec);
    yk_zap(secret, sizeof(*secret));
    (void)munlock(secret, sizeof(*secret));
    free(secret);
    return status;
}

/* The common end of both modes: --first-otp, the directory checks, then
 * (unless --dry-run) the writes. */
static int
import_items(yk_admin *adm, const yk_admin_args *a, const char *file,
             import_item *items, size_t n)
{
    yk_keyring *kr = NULL;
    yk_store *st = NULL;
    size_t i;
    int status = YK_ADMIN_EXIT_FAIL;

    if (apply_first_otps(a, items, n) != 0 ||
        apply_counters(a, items, n) != 0)
        return YK_ADMIN_EXIT_FAIL;
    if (yk_admin_load_keyring(adm, &kr) != 0 ||
        yk_admin_store(adm, &st) != 0 ||
        check_items(adm, st, file, items, n) != 0)
        goto cleanup;
    warn_unknown_counters(items, n, a->dry_run);
    if (a->dry_run) {
        for (i = 0; i < n; i++)
            printf("Would import token %s for %s%s%s (counter %lu).\n",
                   items[i].pubid, items[i].principal,
                   items[i].serial[0] != '\0' ? ", serial " : "",
                   items[i].serial, (unsigned long)items[i].counter);
        printf("Dry run: %lu token%s checked, nothing written.\n",
               (unsigned long)n, n == 1 ? "" : "s");
        status = YK_ADMIN_EXIT_OK;
        goto cleanup;
    }
    status = write_items(adm, st, kr, file, a->description, items, n);

cleanup:
    yk_keyring_free(kr);
    return status;
}

/* Free the items' principals and entries (the secrets are borrowed). */
static void
free_items(import_item *items, size_t n)
{
    size_t i;

    if (items == NULL)
        return;
    for (i = 0; i < n; i++) {
        free(items[i].principal);
        yk_entry_free(items[i].entry);
    }
    free(items);
}

/* import PRINCIPAL --public-id MODHEX: one token's secrets from standard
 * input. */
static int
import_stdin(yk_admin *adm, const yk_admin_args *a, const char *name)
{
    const yk_admin_cmd *cmd = &yk_admin_cmd_import;
    char pubid_mh[YK_PUBID_MODHEX_MAX + 1];
    char *input = NULL;
    yk_token_secret *secret = NULL;
    const char *why = NULL;
    krb5_error_code ret;
    import_item item;
    size_t len = 0;
    int status = YK_ADMIN_EXIT_FAIL;

    memset(&item, 0, sizeof(item));
    if (a->public_id == NULL)
        return yk_admin_usage(cmd, "--public-id MODHEX is required (or "
                              "--file FILE)");
    if (a->map != NULL || a->format != NULL)
        return yk_admin_usage(cmd, "--map and --format need --file FILE");
    if (a->nfirst_otp > 1)
        return yk_admin_usage(cmd, "one token, one --first-otp");
    if (a->ncounter > 1)
        return yk_admin_usage(cmd, "one token, one --counter");

    /* The input and the secret, locked and wiped. */
    input = calloc(1, SECRET_INPUT_MAX + sizeof(*secret));
    if (input == NULL)
        return yk_admin_fail("out of memory");
    (void)mlock(input, SECRET_INPUT_MAX + sizeof(*secret));
    secret = (yk_token_secret *)(void *)(input + SECRET_INPUT_MAX);

    if (yk_admin_canon_pubid(a->public_id, pubid_mh) != 0 ||
        yk_admin_check_description(a->description) != 0 ||
        yk_admin_principal(adm, name, &item.principal) != 0)
        goto cleanup;

    /* The secrets, before anything else is contacted. */
    ret = read_secret_input(input, SECRET_INPUT_MAX, &len);
    if (ret == EFBIG) {
        yk_admin_fail("import %s: standard input is too long (expected "
                      "\"AESKEYHEX PRIVIDHEX\")", item.principal);
        goto cleanup;
    }
    if (ret) {
        yk_admin_fail("import %s: cannot read standard input: %s",
                      item.principal, strerror(ret));
        goto cleanup;
    }
    if (parse_secret_input(input, len, secret, &why) != 0) {
        yk_admin_fail("import %s: %s (expected \"AESKEYHEX PRIVIDHEX\": 32 "
                      "and 12 hex digits on standard input)", item.principal,
                      why);
        goto cleanup;
    }
    yk_zap(input, SECRET_INPUT_MAX);

    item.pubid = pubid_mh;
    item.aes_key = secret->aes_key;
    item.private_id = secret->private_id;
    item.serial = "";
    status = import_items(adm, a, NULL, &item, 1);

cleanup:
    free(item.principal);
    yk_entry_free(item.entry);
    yk_zap(input, SECRET_INPUT_MAX + sizeof(*secret));
    (void)munlock(input, SECRET_INPUT_MAX + sizeof(*secret));
    free(input);
    return status;
}

/* Give every token of set its principal (--principal or the map) into
 * items[].principal, canonical.  0, or an exit status. */
static int
assign_principals(yk_admin *adm, const yk_admin_args *a,
                  const yk_import_set *set, import_item *items, size_t n)
{
    char errbuf[YK_IMPORT_ERRBUF_SIZE];
    yk_import_map *map = NULL;
    char *mbuf = NULL;
    const char *name;
    size_t mlen = 0, i;
    int status = YK_ADMIN_EXIT_FAIL;

    if (a->principal != NULL) {
        if (n != 1)
            return yk_admin_fail("%s holds %lu tokens: --principal assigns "
                                 "one; give a --map file instead", a->file,
                                 (unsigned long)n);
        return yk_admin_principal(adm, a->principal, &items[0].principal) ?
            YK_ADMIN_EXIT_FAIL : 0;
    }
    if (read_whole_file(a->map, "map file", MAP_FILE_MAX, 0, &mbuf,
                        &mlen) != 0)
        return YK_ADMIN_EXIT_FAIL;
    if (yk_import_parse_map(mbuf, mlen, &map, errbuf, sizeof(errbuf)) != 0) {
        yk_admin_fail("%s: %s", a->map, errbuf);
        goto cleanup;
    }
    if (yk_import_map_check(map, set, errbuf, sizeof(errbuf)) != 0) {
        yk_admin_fail("%s: %s (map file %s)", a->file, errbuf, a->map);
        goto cleanup;
    }
    for (i = 0; i < n; i++) {
        name = yk_import_map_lookup(map, items[i].pubid);
        if (name == NULL ||
            yk_admin_principal(adm, name, &items[i].principal) != 0) {
            if (name == NULL)
                yk_admin_fail("%s line %lu: public id %s has no line in the "
                              "map file", a->file,
                              (unsigned long)items[i].line, items[i].pubid);
            goto cleanup;
        }
    }
    status = 0;

cleanup:
    yk_import_map_free(map);
    yk_secfile_free(mbuf, mlen);
    return status;
}

/* import --file FILE (--principal P | --map MAP): every token of a key
 * file, or none. */
static int
import_file(yk_admin *adm, const yk_admin_args *a)
{
    const yk_admin_cmd *cmd = &yk_admin_cmd_import;
    char errbuf[YK_IMPORT_ERRBUF_SIZE];
    yk_import_set *set = NULL;
    import_item *items = NULL;
    char *buf = NULL;
    size_t len = 0, n = 0, i;
    int status = YK_ADMIN_EXIT_FAIL, format = YK_IMPORT_AUTO;

    if (a->public_id != NULL)
        return yk_admin_usage(cmd, "the file names the public ids: no "
                              "--public-id with --file");
    if ((a->principal == NULL) == (a->map == NULL))
        return yk_admin_usage(cmd, "--file needs --principal P (a file of "
                              "one token) or --map FILE, not both");
    if (a->format != NULL && yk_import_format_parse(a->format, &format) != 0)
        return yk_admin_usage(cmd, "unknown --format \"%s\": auto, ykman, "
                              "traditional or ksm", a->format);
    if (yk_admin_check_description(a->description) != 0)
        return YK_ADMIN_EXIT_FAIL;

    if (read_whole_file(a->file, "import file", IMPORT_FILE_MAX, 1, &buf,
                        &len) != 0)
        return YK_ADMIN_EXIT_FAIL;
    if (yk_import_parse(buf, len, format, &set, errbuf,
                        sizeof(errbuf)) != 0) {
        yk_secfile_free(buf, len);
        return yk_admin_fail("%s: %s; nothing was imported", a->file,
                             errbuf);
    }
    /* The text held every key in clear: gone before anything else. */
    yk_secfile_free(buf, len);

    n = yk_import_set_count(set);
    items = calloc(n, sizeof(*items));
    if (items == NULL) {
        yk_admin_fail("out of memory");
        goto cleanup;
    }
    for (i = 0; i < n; i++) {
        const yk_import_token *t = yk_import_set_get(set, i);

        items[i].pubid = t->pubid;
        items[i].aes_key = t->aes_key;
        items[i].private_id = t->private_id;
        items[i].serial = t->serial;
        items[i].line = t->line;
    }
    if (assign_principals(adm, a, set, items, n) != 0)
        goto cleanup;
    printf("%s: %lu token%s (%s format).\n", a->file, (unsigned long)n,
           n == 1 ? "" : "s",
           yk_import_format_name(yk_import_set_format(set)));
    status = import_items(adm, a, a->file, items, n);

cleanup:
    free_items(items, n);
    yk_import_set_free(set);
    return status;
}

/* import: one token from standard input, or the tokens of --file. */
static int
run_import(yk_admin *adm, int argc, char **argv)
{
    const yk_admin_cmd *cmd = &yk_admin_cmd_import;
    unsigned int allowed = YK_OPT_PUBLIC_ID | YK_OPT_DESCRIPTION |
        YK_OPT_FILE | YK_OPT_PRINCIPAL | YK_OPT_MAP | YK_OPT_FORMAT |
        YK_OPT_DRY_RUN | YK_OPT_FIRST_OTP | YK_OPT_COUNTER;
    yk_admin_args a;
    int status;

    status = yk_admin_parse_args(cmd, argc, argv, allowed, 0, 1, &a);
    if (status >= 0)
        return status;
    if (a.file != NULL) {
        if (a.nargs > 0)
            return yk_admin_usage(cmd, "with --file, the principal is given "
                                  "by --principal or --map");
        return import_file(adm, &a);
    }
    if (a.nargs == 1 && a.principal != NULL)
        return yk_admin_usage(cmd, "give the principal once");
    if (a.nargs == 0 && a.principal == NULL)
        return yk_admin_usage(cmd, "missing argument");
    return import_stdin(adm, &a, a.nargs == 1 ? a.args[0] : a.principal);
}

const yk_admin_cmd yk_admin_cmd_import = {
    "import",
    "PRINCIPAL --public-id MODHEX [--description TEXT] [--first-otp OTP | "
    "--counter N] [--dry-run] | --file FILE (--principal P | --map FILE) "
    "[--format auto|ykman|traditional|ksm] [--description TEXT] "
    "[--first-otp OTP]... [--counter PUBID=N]... [--dry-run]",
    "import existing tokens: from standard input or a key file",
    "One token: reads \"AESKEYHEX PRIVIDHEX\" from standard input: its AES\n"
    "key (32 hex digits) and private id (12 hex digits) separated by white\n"
    "space, nothing else (secrets never go on the command line).  From a\n"
    "terminal, one line is read without echo.\n"
    "A file: ykman's -O CSV (the personalization tool's \"Yubico\n"
    "format\"), the personalization tool's \"Traditional\" log, or\n"
    "yubikey-ksm's format (decrypt it with gpg first).  Nothing is written\n"
    "unless the whole file parses, every token has a principal with a\n"
    "directory entry, and no public id is enrolled already or twice in\n"
    "the file.  Tokens are stored active, with counter 0 unless\n"
    "--first-otp or --counter sets it; with 0, every OTP the token ever\n"
    "produced is accepted once (a warning says so).  Errors name the\n"
    "line.\n\n"
    "Options:\n"
    "  --public-id MODHEX    the token's public id (one token, required)\n"
    "  --file FILE           import the tokens of FILE\n"
    "  --principal P         the principal of the one token of FILE\n"
    "  --map FILE            lines \"PUBLIC-ID PRINCIPAL\" assigning every\n"
    "                        token of FILE ('#' starts a comment line); a\n"
    "                        token without a line is an error\n"
    "  --format NAME         auto (default: detected from the first line),\n"
    "                        ykman, traditional or ksm\n"
    "  --first-otp OTP       a fresh OTP of an imported token (matched by\n"
    "                        its public id; may be repeated): verified with\n"
    "                        the imported key, its counter becomes the\n"
    "                        stored one, so older OTPs are refused\n"
    "  --counter [PUBID=]N   the token's known counter (the last one used,\n"
    "                        as \"ykadmin list\" shows it: usage * 256 +\n"
    "                        session; decimal or 0x hex): OTPs up to N are\n"
    "                        refused; PUBID may be left out for one token;\n"
    "                        may be repeated\n"
    "  --description TEXT    free text shown by list (printable ASCII)\n"
    "  --dry-run             check everything, write nothing\n",
    run_import
};
