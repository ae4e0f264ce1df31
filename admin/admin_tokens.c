/* SPDX-License-Identifier: MIT */
/* admin_tokens.c: ykadmin's commands on enrolled tokens (list, verify...). */

/*
 * list, disable, enable, delete, policy, verify and raise-counters.  Each
 * parses its own options (admin_util.c), checks everything it can before
 * touching the directory, and logs every change (principal and public
 * id, never a secret) through yk_admin_log.  Writes to a token's state go
 * through the store's compare-and-swap, re-read and retried when a KDC
 * used the token meanwhile.
 *
 * Counters.  The KDC compares ((usage & 0x7fff) << 8) | session: one
 * power-up of the device (a usage-counter step) is 256 in that value.
 * raise-counters counts in such steps: --by N makes every OTP whose usage
 * counter is at most the stored one + N refused (the stored value becomes
 * ((usage + N) << 8) | 0xff), so the token works again at its (N+1)th
 * power-up after the stored one -- or after "verify --resync --force"
 * with an OTP its owner types in front of the helpdesk.
 */

#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "admin.h"
#include "errors.h"
#include "keywrap.h"
#include "otp.h"
#include "record.h"
#include "secmem.h"
#include "store.h"

#define USAGE_WARN_MARGIN 1000        /* list warns this close to 0x7fff */
#define PRINCIPAL_SHOW_MAX 256        /* display width caps for list */
#define TEXT_SHOW_MAX 256
#define COUNTER_MAX ((uint32_t)((YK_USAGE_MAX << 8) | 0xff))
#define RAISE_DEFAULT_STEPS 256       /* power-ups: 0x10000 in the value */
#define OTP_LINE_MAX (YK_OTP_MAX_LEN + 3) /* an OTP, "\r\n", NUL */

/* One line of "ykadmin list", every field printable. */
typedef struct {
    char principal[PRINCIPAL_SHOW_MAX];
    char policy[8];
    char pubid[YK_PUBID_MODHEX_MAX + 1];
    char state[16];
    char counter[16];
    char split[16];              /* usage/session, "!" near the limit */
    char last_use[32];
    char enrolled_at[32];
    char enrolled_by[TEXT_SHOW_MAX];
    char description[TEXT_SHOW_MAX];
} list_row;

#define LIST_COLUMNS 10

static const char *const list_headers[LIST_COLUMNS] = {
    "PRINCIPAL", "POLICY", "PUBLIC_ID", "STATE", "COUNTER", "USAGE/SESS",
    "LAST_USE", "ENROLLED", "BY", "DESCRIPTION"
};

/* name (a principal read from the directory, or given) made printable
 * into buf for standard output, as the log lines are; returns buf. */
static const char *
shown(const char *name, char buf[PRINCIPAL_SHOW_MAX])
{
    yk_admin_printable(name, buf, PRINCIPAL_SHOW_MAX);
    return buf;
}

/* The fields of row r, in column order. */
static void
row_fields(const list_row *r, const char *f[LIST_COLUMNS])
{
    f[0] = r->principal;
    f[1] = r->policy;
    f[2] = r->pubid;
    f[3] = r->state;
    f[4] = r->counter;
    f[5] = r->split;
    f[6] = r->last_use;
    f[7] = r->enrolled_at;
    f[8] = r->enrolled_by;
    f[9] = r->description;
}

/* Fill row r from entry e's token t; returns 1 when the usage counter is
 * near its limit. */
static int
fill_row(const yk_entry *e, const yk_token *t, list_row *r)
{
    const char *name;
    unsigned int usage, session;
    int warn = 0;

    memset(r, 0, sizeof(*r));
    yk_admin_printable(e->principal, r->principal, sizeof(r->principal));
    name = yk_policy_name(e->has_policy ? e->policy : YK_POLICY_2FA);
    snprintf(r->policy, sizeof(r->policy), "%s", name ? name : "?");
    yk_admin_printable(t->pubid, r->pubid, sizeof(r->pubid));
    if (t->secret != NULL) {
        name = yk_token_state_name(t->secret->state);
        snprintf(r->state, sizeof(r->state), "%s", name ? name : "?");
        yk_admin_isotime(t->secret->enrolled_at, r->enrolled_at,
                         sizeof(r->enrolled_at));
        yk_admin_printable(t->secret->enrolled_by, r->enrolled_by,
                           sizeof(r->enrolled_by));
        yk_admin_printable(t->secret->description, r->description,
                           sizeof(r->description));
    } else {
        snprintf(r->state, sizeof(r->state), "no-secret");
        snprintf(r->enrolled_at, sizeof(r->enrolled_at), "-");
    }
    if (t->malformed) {
        snprintf(r->state, sizeof(r->state), "damaged");
        yk_admin_printable(t->malformed_reason != NULL ?
                           t->malformed_reason : "malformed record",
                           r->description, sizeof(r->description));
    }
    if (r->enrolled_by[0] == '\0')
        snprintf(r->enrolled_by, sizeof(r->enrolled_by), "-");
    if (t->has_state) {
        usage = (unsigned int)(t->state.counter >> 8);
        session = (unsigned int)(t->state.counter & 0xff);
        warn = usage + USAGE_WARN_MARGIN >= YK_USAGE_MAX;
        snprintf(r->counter, sizeof(r->counter), "%lu",
                 (unsigned long)t->state.counter);
        snprintf(r->split, sizeof(r->split), "%u/%u%s", usage, session,
                 warn ? "!" : "");
        yk_admin_isotime(t->state.last_use, r->last_use,
                         sizeof(r->last_use));
    } else {
        snprintf(r->counter, sizeof(r->counter), "-");
        snprintf(r->split, sizeof(r->split), "-");
        snprintf(r->last_use, sizeof(r->last_use), "-");
    }
    return warn;
}

/* Print rows as a table with columns as wide as their widest value; the
 * last column (free text) is not padded. */
static void
print_table(const list_row *rows, size_t n)
{
    size_t width[LIST_COLUMNS], i, j, w;
    const char *f[LIST_COLUMNS];

    for (j = 0; j < LIST_COLUMNS; j++)
        width[j] = strlen(list_headers[j]);
    for (i = 0; i < n; i++) {
        row_fields(&rows[i], f);
        for (j = 0; j < LIST_COLUMNS; j++) {
            w = strlen(f[j]);
            if (w > width[j])
                width[j] = w;
        }
    }
    for (i = 0; i <= n; i++) {
        if (i == 0)
            memcpy(f, list_headers, sizeof(f));
        else
            row_fields(&rows[i - 1], f);
        for (j = 0; j + 1 < LIST_COLUMNS; j++)
            printf("%-*s  ", (int)width[j], f[j]);
        printf("%s\n", f[LIST_COLUMNS - 1]);
    }
}

/* Print s as a JSON string: control and non-ASCII bytes are shown as '?'
 * (as in the table), so that the output is always valid UTF-8 JSON. */
static void
json_string(const char *s)
{
    const unsigned char *p = (const unsigned char *)(s != NULL ? s : "");

    putchar('"');
    for (; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f)
            putchar('?');
        else
            putchar(*p);
    }
    putchar('"');
}

/* Print Unix time t as a JSON string (ISO 8601 UTC), or null for 0. */
static void
json_time(int64_t t)
{
    char buf[32];

    if (t == 0) {
        printf("null");
        return;
    }
    yk_admin_isotime(t, buf, sizeof(buf));
    json_string(buf);
}

/* Print token t of principal as a JSON object; returns 1 when its usage
 * counter is near the limit (and warns on standard error). */
static int
json_token(const char *principal, const yk_token *t)
{
    unsigned int usage = 0, session = 0;
    uint32_t kvno = 0;
    int near = 0;

    printf("        {\"public_id\": ");
    json_string(t->pubid);
    printf(", \"state\": ");
    if (t->malformed)
        json_string("damaged");
    else if (t->secret == NULL)
        json_string("no-secret");
    else
        json_string(yk_token_state_name(t->secret->state));
    if (t->has_state) {
        usage = (unsigned int)(t->state.counter >> 8);
        session = (unsigned int)(t->state.counter & 0xff);
        near = usage + USAGE_WARN_MARGIN >= YK_USAGE_MAX;
        printf(", \"counter\": %lu, \"usage\": %u, \"session\": %u, "
               "\"usage_near_limit\": %s, \"last_use\": ",
               (unsigned long)t->state.counter, usage, session,
               near ? "true" : "false");
        json_time(t->state.last_use);
    } else {
        printf(", \"counter\": null, \"usage\": null, \"session\": null, "
               "\"usage_near_limit\": false, \"last_use\": null");
    }
    if (t->secret != NULL) {
        printf(", \"enrolled_at\": ");
        json_time(t->secret->enrolled_at);
        printf(", \"enrolled_by\": ");
        json_string(t->secret->enrolled_by);
        printf(", \"description\": ");
        json_string(t->secret->description);
        printf(", \"serial\": ");
        json_string(t->secret->serial);
        if (yk_keywrap_record_kvno(t->secret->wrapped, &kvno) == 0)
            printf(", \"key_version\": %lu", (unsigned long)kvno);
        else
            printf(", \"key_version\": null");
    } else {
        printf(", \"enrolled_at\": null, \"enrolled_by\": null, "
               "\"description\": null, \"serial\": null, "
               "\"key_version\": null");
    }
    printf(", \"damaged\": ");
    if (t->malformed)
        json_string(t->malformed_reason != NULL ? t->malformed_reason :
                    "malformed record");
    else
        printf("null");
    printf("}");
    if (near) {
        char shown[PRINCIPAL_SHOW_MAX];

        yk_admin_printable(principal, shown, sizeof(shown));
        fprintf(stderr, "ykadmin: warning: token %s of %s: usage counter %u "
                "is within %d of its limit 0x%x: the token will soon stop "
                "producing OTPs; enrol a new one\n", t->pubid, shown, usage,
                USAGE_WARN_MARGIN, YK_USAGE_MAX);
    }
    return near;
}

/* Print entries as one JSON document:
 * {"principals": [{"principal", "policy", "unparsed_values",
 *   "tokens": [{...}]}]}. */
static void
print_json(yk_entry **entries, size_t n)
{
    size_t i, j;

    printf("{\n  \"principals\": [");
    for (i = 0; i < n; i++) {
        const yk_entry *e = entries[i];

        printf("%s\n    {\"principal\": ", i > 0 ? "," : "");
        json_string(e->principal);
        printf(", \"policy\": ");
        json_string(yk_policy_name(e->has_policy ? e->policy :
                                   YK_POLICY_2FA));
        printf(", \"unparsed_values\": %lu,\n      \"tokens\": [",
               (unsigned long)e->nmalformed);
        for (j = 0; j < e->ntokens; j++) {
            printf("%s\n", j > 0 ? "," : "");
            (void)json_token(e->principal, &e->tokens[j]);
        }
        printf("%s]}", e->ntokens > 0 ? "\n      " : "");
    }
    printf("%s]\n}\n", n > 0 ? "\n  " : "");
}

/* Print entries as the table, with its notes. */
static int
print_list(const char *principal, yk_entry **entries, size_t n)
{
    list_row *rows = NULL;
    char name[PRINCIPAL_SHOW_MAX];
    size_t nrows = 0, i, j;
    int warn = 0;

    for (i = 0; i < n; i++)
        nrows += entries[i]->ntokens;
    if (nrows == 0) {
        if (principal != NULL && n > 0)
            printf("%s has no token (policy %s).\n",
                   shown(principal, name),
                   yk_policy_name(entries[0]->has_policy ?
                                  entries[0]->policy : YK_POLICY_2FA));
        else
            printf("No token is enrolled.\n");
        return YK_ADMIN_EXIT_OK;
    }
    rows = calloc(nrows, sizeof(*rows));
    if (rows == NULL)
        return yk_admin_fail("out of memory");
    nrows = 0;
    for (i = 0; i < n; i++) {
        for (j = 0; j < entries[i]->ntokens; j++)
            warn |= fill_row(entries[i], &entries[i]->tokens[j],
                             &rows[nrows++]);
    }
    print_table(rows, nrows);
    for (i = 0; i < n; i++) {
        if (entries[i]->nmalformed > 0)
            printf("%s: %lu directory value(s) tied to no token could not "
                   "be parsed.\n", shown(entries[i]->principal, name),
                   (unsigned long)entries[i]->nmalformed);
    }
    if (warn)
        printf("! usage counter within %d of its limit 0x%x: the token "
               "will soon stop producing OTPs; enrol a new one.\n",
               USAGE_WARN_MARGIN, YK_USAGE_MAX);
    free(rows);
    return YK_ADMIN_EXIT_OK;
}

/* list [PRINCIPAL] [--json]: every token (or PRINCIPAL's) with its state
 * and counters.  Never shows a secret: the wrapped record is not
 * printed. */
static int
run_list(yk_admin *adm, int argc, char **argv)
{
    const yk_admin_cmd *cmd = &yk_admin_cmd_list;
    yk_entry **entries = NULL;
    yk_store *st = NULL;
    char *principal = NULL;
    krb5_error_code ret;
    size_t n = 0;
    int status;
    yk_admin_args a;

    status = yk_admin_parse_args(cmd, argc, argv, YK_OPT_JSON, 0, 1, &a);
    if (status >= 0)
        return status;
    status = YK_ADMIN_EXIT_FAIL;
    if (a.nargs == 1 && yk_admin_principal(adm, a.args[0], &principal) != 0)
        goto cleanup;
    if (yk_admin_store(adm, &st) != 0)
        goto cleanup;
    ret = yk_store_list(st, principal, &entries, &n);
    if (ret == YK_ERR_STORE_NOT_FOUND && principal != NULL) {
        yk_admin_no_entry(adm, NULL, principal);
        goto cleanup;
    }
    if (ret) {
        yk_admin_store_fail(adm, ret, "cannot list %s",
                            principal ? principal : "the tokens");
        goto cleanup;
    }
    if (a.json) {
        print_json(entries, n);
        status = YK_ADMIN_EXIT_OK;
    } else {
        status = print_list(principal, entries, n);
    }

cleanup:
    yk_entries_free(entries, n);
    free(principal);
    return status;
}

/* disable / enable PUBLICID: find the holder, rewrite the token's state
 * (which also rewrites its state value, so KDC caches re-read). */
static int
change_state(yk_admin *adm, const yk_admin_cmd *cmd, int argc, char **argv,
             int new_state)
{
    char pubid_mh[YK_PUBID_MODHEX_MAX + 1];
    char name[PRINCIPAL_SHOW_MAX];
    char *holder = NULL;
    yk_store *st = NULL;
    int status, old = 0;
    yk_admin_args a;

    status = yk_admin_parse_args(cmd, argc, argv, 0, 1, 1, &a);
    if (status >= 0)
        return status;
    status = YK_ADMIN_EXIT_FAIL;
    if (yk_admin_canon_pubid(a.args[0], pubid_mh) != 0 ||
        yk_admin_store(adm, &st) != 0 ||
        yk_admin_find_holder(adm, st, pubid_mh, &holder) != 0)
        goto cleanup;
    if (yk_admin_set_token_state(adm, st, holder, pubid_mh, new_state, 0,
                                 NULL, &old) != 0)
        goto cleanup;
    if (old == new_state) {
        printf("Token %s of %s is already %s.\n", pubid_mh,
               shown(holder, name),
               yk_token_state_name(new_state));
    } else {
        yk_admin_log(adm, "%s principal=%s public_id=%s state=%s",
                     cmd->name, holder, pubid_mh,
                     yk_token_state_name(new_state));
        printf("Token %s of %s: %s.\n", pubid_mh, shown(holder, name),
               yk_token_state_name(new_state));
    }
    status = YK_ADMIN_EXIT_OK;

cleanup:
    free(holder);
    return status;
}

/* disable PUBLICID: the KDC refuses the token from now on. */
static int
run_disable(yk_admin *adm, int argc, char **argv)
{
    return change_state(adm, &yk_admin_cmd_disable, argc, argv,
                        YK_TOKEN_DISABLED);
}

/* enable PUBLICID: a disabled token is accepted again. */
static int
run_enable(yk_admin *adm, int argc, char **argv)
{
    return change_state(adm, &yk_admin_cmd_enable, argc, argv,
                        YK_TOKEN_ACTIVE);
}

/* delete PUBLICID: remove the token's public id, secret and state values
 * from its principal's entry (retried when a KDC used it meanwhile). */
static int
run_delete(yk_admin *adm, int argc, char **argv)
{
    const yk_admin_cmd *cmd = &yk_admin_cmd_delete;
    char pubid_mh[YK_PUBID_MODHEX_MAX + 1];
    char name[PRINCIPAL_SHOW_MAX];
    yk_entry *entry = NULL;
    yk_store *st = NULL;
    char *holder = NULL;
    yk_token *tok;
    krb5_error_code ret = YK_ERR_STORE_CONFLICT;
    int status, tries;
    yk_admin_args a;

    status = yk_admin_parse_args(cmd, argc, argv, 0, 1, 1, &a);
    if (status >= 0)
        return status;
    status = YK_ADMIN_EXIT_FAIL;
    if (yk_admin_canon_pubid(a.args[0], pubid_mh) != 0 ||
        yk_admin_store(adm, &st) != 0 ||
        yk_admin_find_holder(adm, st, pubid_mh, &holder) != 0)
        goto cleanup;
    for (tries = 0; tries < YK_ADMIN_SWAP_TRIES &&
             ret == YK_ERR_STORE_CONFLICT; tries++) {
        yk_entry_free(entry);
        entry = NULL;
        if (yk_admin_read_entry(adm, st, holder, &entry) != 0)
            goto cleanup;
        tok = yk_entry_find_token(entry, pubid_mh);
        if (tok == NULL) {
            yk_admin_fail("%s holds no token %s any more", holder, pubid_mh);
            goto cleanup;
        }
        ret = yk_store_delete_token(st, entry, tok);
    }
    if (ret) {
        yk_admin_store_fail(adm, ret, "cannot delete token %s of %s",
                            pubid_mh, holder);
        goto cleanup;
    }
    yk_admin_log(adm, "delete principal=%s public_id=%s", holder, pubid_mh);
    printf("Deleted token %s of %s.\n", pubid_mh, shown(holder, name));
    status = YK_ADMIN_EXIT_OK;

cleanup:
    yk_entry_free(entry);
    free(holder);
    return status;
}

/* The verdict on one OTP against principal's token tok: 0 with
 * *new_out filled when its counter is fresh (with resync and force: any
 * counter but the stored one), otherwise an exit status after printing
 * and logging why; resync alone says what lowering the counter would do.
 * The unwrapped secret, the parsed OTP and the decrypted fields are
 * wiped here. */
static int
judge_otp(yk_admin *adm, const yk_keyring *kr, const char *principal,
          const yk_token *tok, const char *otp_str, int resync, int force,
          yk_state_rec *new_out)
{
    yk_token_secret secret;
    yk_token_fields fields;
    krb5_error_code ret;
    uint32_t counter, stored;
    yk_otp otp;
    int status = YK_ADMIN_EXIT_FAIL;

    memset(&secret, 0, sizeof(secret));
    memset(&fields, 0, sizeof(fields));
    memset(&otp, 0, sizeof(otp));
    (void)mlock(&secret, sizeof(secret));
    if (tok == NULL || tok->secret == NULL) {
        yk_admin_no_record(adm, principal, NULL);
        goto cleanup;
    }
    if (tok->malformed) {
        yk_admin_fail("token %s of %s is damaged in the directory (%s)",
                      tok->pubid, principal, tok->malformed_reason != NULL ?
                      tok->malformed_reason : "malformed");
        goto cleanup;
    }
    if (tok->secret->state != YK_TOKEN_ACTIVE) {
        yk_admin_log(adm, "verify principal=%s public_id=%s result=refused "
                     "reason=token-%s", principal, tok->pubid,
                     yk_token_state_name(tok->secret->state));
        yk_admin_fail("OTP refused: token %s of %s is %s", tok->pubid,
                      principal, yk_token_state_name(tok->secret->state));
        goto cleanup;
    }
    if (!tok->has_state) {
        yk_admin_fail("token %s of %s has no state record: the directory "
                      "entry is damaged", tok->pubid, principal);
        goto cleanup;
    }
    ret = yk_keywrap_unwrap(kr, tok->secret->wrapped, principal, tok->pubid,
                            &secret);
    if (ret) {
        yk_admin_fail("cannot unwrap the secret of token %s of %s: %s",
                      tok->pubid, principal, yk_strerror(ret));
        goto cleanup;
    }
    ret = yk_otp_verify(otp_str, strlen(otp_str), secret.aes_key,
                        secret.private_id, &otp, &fields);
    if (ret) {
        yk_admin_log(adm, "verify principal=%s public_id=%s result=refused "
                     "reason=bad-otp", principal, tok->pubid);
        yk_admin_fail("OTP refused for %s: %s", principal, yk_strerror(ret));
        goto cleanup;
    }
    counter = yk_otp_counter(&fields);
    stored = tok->state.counter;
    if (counter < stored && resync && !force) {
        /* Lowering reopens every OTP in between: say so, ask again. */
        yk_admin_log(adm, "verify principal=%s public_id=%s counter=%lu "
                     "stored=%lu result=refused reason=resync-needs-force",
                     principal, tok->pubid, (unsigned long)counter,
                     (unsigned long)stored);
        yk_admin_fail("OTP not consumed: --resync would lower the stored "
                      "counter of token %s of %s from %lu to %lu, and every "
                      "OTP of that token with a counter in between (usage "
                      "%lu to %lu) would then be accepted once more; if its "
                      "owner typed this OTP in front of you, run \"ykadmin "
                      "verify --resync --force\" with it", tok->pubid,
                      principal, (unsigned long)stored,
                      (unsigned long)counter, (unsigned long)(counter >> 8),
                      (unsigned long)(stored >> 8));
        goto cleanup;
    }
    if (counter == stored || (counter < stored && !resync)) {
        yk_admin_log(adm, "verify principal=%s public_id=%s counter=%lu "
                     "stored=%lu result=refused reason=%s", principal,
                     tok->pubid, (unsigned long)counter,
                     (unsigned long)stored,
                     counter == stored ? "replay" : "older-than-last-use");
        if (counter == stored)
            yk_admin_fail("OTP refused for %s: replayed (counter %lu was "
                          "already used)", principal,
                          (unsigned long)counter);
        else
            yk_admin_fail("OTP refused for %s: older than the token's last "
                          "use (counter %lu < %lu): an old OTP replayed, or "
                          "a cloned key", principal, (unsigned long)counter,
                          (unsigned long)stored);
        goto cleanup;
    }
    memset(new_out, 0, sizeof(*new_out));
    snprintf(new_out->pubid, sizeof(new_out->pubid), "%s", tok->pubid);
    new_out->counter = counter;
    new_out->gen = tok->state.gen + 1;
    new_out->has_nonce = 0;
    new_out->last_use = (int64_t)time(NULL);
    status = 0;

cleanup:
    yk_zap(&secret, sizeof(secret));
    yk_zap(&fields, sizeof(fields));
    yk_zap(&otp, sizeof(otp));
    (void)munlock(&secret, sizeof(secret));
    return status;
}

/* Read one line from standard input into buf (size bytes), unbuffered
 * (no copy of the OTP stays in a stdio buffer), without its line end.
 * 0, or an exit status after printing why; buf is the caller's to wipe. */
static int
read_otp_line(char *buf, size_t size)
{
    size_t len = 0;
    ssize_t n;
    char c;

    for (;;) {
        n = read(STDIN_FILENO, &c, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return yk_admin_fail("verify -: cannot read standard input: %s",
                                 strerror(errno));
        if (n == 0 || c == '\n')
            break;
        if (len + 1 >= size)
            return yk_admin_fail("verify -: the line on standard input is "
                                 "too long for an OTP");
        buf[len++] = c;
    }
    yk_zap(&c, sizeof(c));
    if (len > 0 && buf[len - 1] == '\r')
        len--;
    buf[len] = '\0';
    if (len == 0)
        return yk_admin_fail("verify -: no OTP on standard input");
    return 0;
}

/* verify OTP|- [--resync [--force]]: check an OTP as the KDC would and
 * consume it (its counter is stored with a compare-and-swap), for the
 * helpdesk.  --resync --force also takes a counter below the stored one
 * (--resync alone explains what that would reopen).  "-" reads the OTP
 * from standard input; one given as an argument is copied and wiped from
 * the argument list at once (ps shows it until then).  The copy and the
 * parsed OTP are wiped on every path. */
static int
run_verify(yk_admin *adm, int argc, char **argv)
{
    const yk_admin_cmd *cmd = &yk_admin_cmd_verify;
    char *holder = NULL;
    yk_entry *entry = NULL;
    yk_keyring *kr = NULL;
    yk_store *st = NULL;
    yk_state_rec new_state;
    krb5_error_code ret;
    const yk_token *tok;
    char s[OTP_LINE_MAX], name[PRINCIPAL_SHOW_MAX];
    uint32_t before = 0;
    yk_otp otp;
    int status, tries;
    size_t len;
    yk_admin_args a;

    memset(&otp, 0, sizeof(otp));
    memset(s, 0, sizeof(s));
    status = yk_admin_parse_args(cmd, argc, argv,
                                 YK_OPT_RESYNC | YK_OPT_FORCE, 1, 1, &a);
    if (status >= 0)
        return status;
    if (a.force && !a.resync)
        return yk_admin_usage(cmd, "--force goes with --resync");
    status = YK_ADMIN_EXIT_FAIL;
    if (strcmp(a.args[0], "-") == 0) {
        if (isatty(STDIN_FILENO))
            fprintf(stderr, "YubiKey OTP: ");
        if (read_otp_line(s, sizeof(s)) != 0)
            goto cleanup;
    } else {
        len = strlen(a.args[0]);
        if (len >= sizeof(s)) {
            yk_admin_fail("not an OTP: %s", yk_strerror(YK_ERR_OTP_LENGTH));
            goto cleanup;
        }
        memcpy(s, a.args[0], len + 1);
        yk_zap(a.args[0], len);
    }
    ret = yk_otp_parse(s, strlen(s), &otp);
    if (ret) {
        yk_admin_fail("not an OTP: %s", yk_strerror(ret));
        goto cleanup;
    }
    if (otp.pubid_len == 0) {
        yk_admin_fail("the OTP carries no public id");
        goto cleanup;
    }
    if (yk_admin_store(adm, &st) != 0 ||
        yk_admin_find_holder(adm, st, otp.pubid_modhex, &holder) != 0 ||
        yk_admin_load_keyring(adm, &kr) != 0)
        goto cleanup;

    /* A lost swap means someone else used or changed the token: judge
     * the OTP again against what is there now. */
    ret = YK_ERR_STORE_CONFLICT;
    for (tries = 0; tries < YK_ADMIN_SWAP_TRIES &&
             ret == YK_ERR_STORE_CONFLICT; tries++) {
        yk_entry_free(entry);
        entry = NULL;
        if (yk_admin_read_entry(adm, st, holder, &entry) != 0)
            goto cleanup;
        tok = yk_entry_find_token(entry, otp.pubid_modhex);
        if (judge_otp(adm, kr, holder, tok, s, a.resync, a.force,
                      &new_state) != 0)
            goto cleanup;
        before = tok->state.counter;
        ret = yk_store_cas_state(st, entry, tok, &new_state);
    }
    if (ret) {
        yk_admin_store_fail(adm, ret, "cannot store the counter of token "
                            "%s of %s (the OTP was not consumed)",
                            otp.pubid_modhex, holder);
        goto cleanup;
    }
    if (new_state.counter < before)
        yk_admin_log(adm, "verify principal=%s public_id=%s counter=%lu "
                     "result=accepted resync=yes stored=%lu", holder,
                     otp.pubid_modhex, (unsigned long)new_state.counter,
                     (unsigned long)before);
    else
        yk_admin_log(adm, "verify principal=%s public_id=%s counter=%lu "
                     "result=accepted", holder, otp.pubid_modhex,
                     (unsigned long)new_state.counter);
    printf("OTP accepted for %s: token %s, counter %lu (usage %lu, "
           "session %lu)%s.\n", shown(holder, name), otp.pubid_modhex,
           (unsigned long)new_state.counter,
           (unsigned long)(new_state.counter >> 8),
           (unsigned long)(new_state.counter & 0xff),
           new_state.counter < before ? ", counter resynchronised" : "");
    status = YK_ADMIN_EXIT_OK;

cleanup:
    yk_zap(&otp, sizeof(otp));
    yk_zap(s, sizeof(s));
    yk_entry_free(entry);
    yk_keyring_free(kr);
    free(holder);
    return status;
}

/* The raised counter of a token whose stored value is stored: every OTP
 * of usage counter <= (stored usage + steps) refused.  Capped at the
 * device's limit. */
static uint32_t
raised_counter(uint32_t stored, unsigned long steps)
{
    unsigned long usage = stored >> 8;

    usage += steps;
    if (usage > YK_USAGE_MAX)
        usage = YK_USAGE_MAX;
    return (uint32_t)((usage << 8) | 0xff);
}

/* Raise the counters of principal's tokens by steps (fresh read, swap
 * retried).  Prints and logs each; returns the number of failures. */
static size_t
raise_principal(yk_admin *adm, yk_store *st, const char *principal,
                unsigned long steps, int dry_run, size_t *raised_out)
{
    yk_entry *entry = NULL;
    yk_state_rec next;
    krb5_error_code ret;
    char name[PRINCIPAL_SHOW_MAX];
    size_t i, failures = 0;
    int tries;

    (void)shown(principal, name);
    for (i = 0;; i++) {
        const yk_token *tok;

        /* Each token on a fresh read: the previous swap changed the
         * entry. */
        yk_entry_free(entry);
        entry = NULL;
        if (yk_admin_read_entry(adm, st, principal, &entry) != 0)
            return failures + 1;
        if (i >= entry->ntokens)
            break;
        ret = YK_ERR_STORE_CONFLICT;
        for (tries = 0; tries < YK_ADMIN_SWAP_TRIES &&
                 ret == YK_ERR_STORE_CONFLICT; tries++) {
            if (tries > 0) {
                yk_entry_free(entry);
                entry = NULL;
                if (yk_admin_read_entry(adm, st, principal, &entry) != 0)
                    return failures + 1;
                if (i >= entry->ntokens) {
                    ret = 0;        /* deleted meanwhile */
                    break;
                }
            }
            tok = &entry->tokens[i];
            if (tok->malformed || !tok->has_state) {
                yk_admin_fail("token %s of %s has no sound state record: "
                              "not raised", tok->pubid, principal);
                failures++;
                ret = 0;
                break;
            }
            next = tok->state;
            next.counter = raised_counter(tok->state.counter, steps);
            next.gen = tok->state.gen + 1;
            next.has_nonce = 0;
            next.nonce = YK_NONCE_NONE;
            if (next.counter <= tok->state.counter) {
                printf("Token %s of %s: counter %lu is at the limit "
                       "already: enrol a new token.\n", tok->pubid,
                       name, (unsigned long)tok->state.counter);
                ret = 0;
                break;
            }
            if (dry_run) {
                printf("Would raise token %s of %s: counter %lu (usage %lu) "
                       "-> %lu (usage %lu).\n", tok->pubid, name,
                       (unsigned long)tok->state.counter,
                       (unsigned long)(tok->state.counter >> 8),
                       (unsigned long)next.counter,
                       (unsigned long)(next.counter >> 8));
                (*raised_out)++;
                ret = 0;
                break;
            }
            ret = yk_store_cas_state(st, entry, tok, &next);
            if (ret == 0) {
                yk_admin_log(adm, "raise-counters principal=%s public_id=%s "
                             "counter=%lu new_counter=%lu steps=%lu",
                             principal, tok->pubid,
                             (unsigned long)tok->state.counter,
                             (unsigned long)next.counter, steps);
                printf("Raised token %s of %s: counter %lu (usage %lu) -> "
                       "%lu (usage %lu).\n", tok->pubid, name,
                       (unsigned long)tok->state.counter,
                       (unsigned long)(tok->state.counter >> 8),
                       (unsigned long)next.counter,
                       (unsigned long)(next.counter >> 8));
                (*raised_out)++;
            }
        }
        if (ret) {
            yk_admin_store_fail(adm, ret, "cannot raise the counter of "
                                "token %s of %s", entry->tokens[i].pubid,
                                principal);
            failures++;
        }
    }
    yk_entry_free(entry);
    return failures;
}

/* raise-counters [--by N] [--dry-run] PRINCIPAL|--all: after restoring
 * the directory from a backup, make every OTP typed since refused. */
static int
run_raise_counters(yk_admin *adm, int argc, char **argv)
{
    const yk_admin_cmd *cmd = &yk_admin_cmd_raise_counters;
    yk_entry **entries = NULL;
    yk_store *st = NULL;
    char *principal = NULL, *end = NULL;
    unsigned long steps = RAISE_DEFAULT_STEPS;
    krb5_error_code ret;
    size_t n = 0, i, failures = 0, raised = 0;
    int status;
    yk_admin_args a;

    status = yk_admin_parse_args(cmd, argc, argv,
                                 YK_OPT_BY | YK_OPT_ALL | YK_OPT_DRY_RUN, 0,
                                 1, &a);
    if (status >= 0)
        return status;
    if ((a.nargs == 1) == (a.all != 0))
        return yk_admin_usage(cmd, "name a PRINCIPAL or give --all");
    if (a.by != NULL) {
        errno = 0;
        steps = strtoul(a.by, &end, 0);
        if (*a.by == '\0' || *a.by == '-' || *end != '\0' || errno != 0 ||
            steps < 1 || steps > YK_USAGE_MAX)
            return yk_admin_usage(cmd, "--by takes a number of usage-counter "
                                  "steps (power-ups), 1 to %d", YK_USAGE_MAX);
    }
    status = YK_ADMIN_EXIT_FAIL;
    if (a.nargs == 1 && yk_admin_principal(adm, a.args[0], &principal) != 0)
        goto cleanup;
    if (yk_admin_store(adm, &st) != 0)
        goto cleanup;
    if (principal != NULL) {
        failures = raise_principal(adm, st, principal, steps, a.dry_run,
                                   &raised);
    } else {
        ret = yk_store_list(st, NULL, &entries, &n);
        if (ret) {
            yk_admin_store_fail(adm, ret, "cannot list the tokens");
            goto cleanup;
        }
        for (i = 0; i < n; i++) {
            if (entries[i]->ntokens > 0)
                failures += raise_principal(adm, st, entries[i]->principal,
                                            steps, a.dry_run, &raised);
        }
    }
    printf("%s %lu token%s by %lu usage-counter step%s (0x%lx in the "
           "compared counter)%s.\n", a.dry_run ? "Would raise" : "Raised",
           (unsigned long)raised, raised == 1 ? "" : "s", steps,
           steps == 1 ? "" : "s", steps << 8,
           failures > 0 ? "; some failed (see above)" : "");
    status = failures > 0 ? YK_ADMIN_EXIT_FAIL : YK_ADMIN_EXIT_OK;

cleanup:
    yk_entries_free(entries, n);
    free(principal);
    return status;
}

/* policy PRINCIPAL 2fa|otp: set the principal's policy (the store also
 * rewrites every token's state value). */
static int
run_policy(yk_admin *adm, int argc, char **argv)
{
    const yk_admin_cmd *cmd = &yk_admin_cmd_policy;
    yk_entry *entry = NULL;
    yk_store *st = NULL;
    char *principal = NULL, name[PRINCIPAL_SHOW_MAX];
    krb5_error_code ret;
    int status, policy = 0;
    yk_admin_args a;

    status = yk_admin_parse_args(cmd, argc, argv, 0, 2, 2, &a);
    if (status >= 0)
        return status;
    if (yk_policy_parse(a.args[1], strlen(a.args[1]), &policy) != 0)
        return yk_admin_usage(cmd, "the policy must be 2fa or otp");
    status = YK_ADMIN_EXIT_FAIL;
    if (yk_admin_principal(adm, a.args[0], &principal) != 0 ||
        yk_admin_store(adm, &st) != 0 ||
        yk_admin_read_entry(adm, st, principal, &entry) != 0)
        goto cleanup;
    if (entry->ntokens == 0) {
        /* The policy lives with the tokens (their auxiliary class), and
         * matters only once the KDC offers a token. */
        yk_admin_fail("%s holds no token: enrol one first, then set its "
                      "policy", principal);
        goto cleanup;
    }
    if (entry->has_policy && entry->policy == policy) {
        printf("The policy of %s is already %s.\n", shown(principal, name),
               yk_policy_name(policy));
        status = YK_ADMIN_EXIT_OK;
        goto cleanup;
    }
    ret = yk_store_set_policy(st, entry, policy);
    if (ret) {
        yk_admin_store_fail(adm, ret, "cannot set the policy of %s",
                            principal);
        goto cleanup;
    }
    yk_admin_log(adm, "policy principal=%s policy=%s", principal,
                 yk_policy_name(policy));
    printf("The policy of %s is now %s.\n", shown(principal, name),
           yk_policy_name(policy));
    status = YK_ADMIN_EXIT_OK;

cleanup:
    yk_entry_free(entry);
    free(principal);
    return status;
}

const yk_admin_cmd yk_admin_cmd_list = {
    "list",
    "[PRINCIPAL] [--json]",
    "show tokens, their state and counters",
    "Prints one line per token (of every principal, or of PRINCIPAL):\n"
    "principal, policy, public id, state (pending, active, disabled),\n"
    "counter, usage/session counters, last use (UTC, or \"never\"),\n"
    "enrolment time, enrolled by, description.  A \"!\" after the\n"
    "usage/session counters marks a usage counter within 1000 of its\n"
    "limit 0x7fff.  Secrets are never shown.\n\n"
    "Options:\n"
    "  --json                one JSON document instead: {\"principals\":\n"
    "                        [{\"principal\", \"policy\",\n"
    "                        \"unparsed_values\", \"tokens\":\n"
    "                        [{\"public_id\", \"state\", \"counter\",\n"
    "                        \"usage\", \"session\",\n"
    "                        \"usage_near_limit\",\n"
    "                        \"last_use\", \"enrolled_at\", \"enrolled_by\",\n"
    "                        \"description\", \"serial\", \"key_version\",\n"
    "                        \"damaged\"}]}]}; times in ISO 8601 UTC or\n"
    "                        null; a token near the limit is also named on\n"
    "                        standard error\n",
    run_list
};

const yk_admin_cmd yk_admin_cmd_disable = {
    "disable",
    "PUBLICID",
    "disable a token (the KDC refuses it at once)",
    "Marks the token disabled.  Its state value is rewritten too, so KDCs\n"
    "holding it in their cache re-read it before accepting an OTP.\n",
    run_disable
};

const yk_admin_cmd yk_admin_cmd_enable = {
    "enable",
    "PUBLICID",
    "enable a disabled token again",
    "Marks a disabled token active again.  A pending token (an enrolment\n"
    "that did not finish) cannot be enabled: enrol the token again.\n",
    run_enable
};

const yk_admin_cmd yk_admin_cmd_delete = {
    "delete",
    "PUBLICID",
    "remove a token from its principal",
    "Removes the token's public id, secret and state values from its\n"
    "principal's entry.  The KDC no longer knows the token; a principal\n"
    "left without a token logs in with its password alone, unless the KDC\n"
    "database says +requires_hwauth.\n",
    run_delete
};

const yk_admin_cmd yk_admin_cmd_policy = {
    "policy",
    "PRINCIPAL 2fa|otp",
    "set a principal's policy: 2fa or otp",
    "2fa (the default): the KDC requires the password and an OTP.\n"
    "otp: the OTP alone is also accepted, over FAST armor only.\n"
    "The principal must hold a token (enrol it first).\n",
    run_policy
};

const yk_admin_cmd yk_admin_cmd_verify = {
    "verify",
    "OTP|- [--resync [--force]]",
    "check and consume an OTP, as the KDC would",
    "Finds the token by the OTP's public id, decrypts the OTP with the\n"
    "token's key, and stores its counter, so the OTP cannot be used again.\n"
    "Refused: disabled or pending tokens, a wrong key or private id, a\n"
    "counter not above the stored one (a replay, or an old OTP).\n"
    "An OTP on the command line is a secret until it is consumed, but\n"
    "other users see it (ps) until ykadmin has read it, and it lands in\n"
    "the shell's history; \"-\" reads it from standard input instead\n"
    "(one line).\n\n"
    "Options:\n"
    "  --resync              for an OTP below the stored counter (after\n"
    "                        raise-counters): say how far the counter would\n"
    "                        go down, consume nothing\n"
    "  --force               with --resync: lower the stored counter to the\n"
    "                        OTP's and consume it.  Every OTP of the token\n"
    "                        in between works once more: only for an OTP\n"
    "                        its owner types in front of you (never one\n"
    "                        received by mail or chat: it may be replayed)\n",
    run_verify
};

const yk_admin_cmd yk_admin_cmd_raise_counters = {
    "raise-counters",
    "PRINCIPAL|--all [--by N] [--dry-run]",
    "refuse OTPs typed since a directory backup",
    "After restoring the directory from a backup, every OTP typed since the\n"
    "backup would be accepted again.  This raises each stored counter by N\n"
    "usage-counter steps (power-ups of the device; one step is 256 in the\n"
    "counter the KDC compares): every OTP whose usage counter is at most\n"
    "the stored one + N is refused.  Choose N above the number of times a\n"
    "token may have been plugged in since the backup.  A token works again\n"
    "at its next power-up beyond that, or at once after \"ykadmin verify\n"
    "--resync --force\" with an OTP its owner types in front of you.\n\n"
    "Options:\n"
    "  --by N                usage-counter steps, 1 to 32767 (default 256:\n"
    "                        0x10000 in the compared counter)\n"
    "  --all                 every token of every principal\n"
    "  --dry-run             show what would be raised, write nothing\n",
    run_raise_counters
};
