/* SPDX-License-Identifier: MIT */
/* verify.c: the KDC module's logic: verify pipeline, hint, realm state. */

/*
 * doc/design.md §4 as plain functions, with no krb5 callback in sight
 * (kdc_main.c adapts those).  The pipeline of one attempt:
 *
 *   1. decode our padata (one per request); mode 2 needs FAST armor;
 *      yubikey_require_fast refuses mode 1 unarmored;
 *   -  before anything depends on the password: the circuit breaker and
 *      the keyring (an outage answers the same for every password, or
 *      the answer would confirm a password without the token), then the
 *      principal's record (cached, read again when older than the cache
 *      TTL), so that a wrong and a right password cost the same
 *      directory work up to the OTP check;
 *   2. mode 1: decrypt with the client key of the request's enctype (a
 *      wrong password ends here and consumes nothing), check the client
 *      time against the KDC's skew and the nonce against the request's;
 *   3. find this principal's token by the OTP's public id in the record;
 *      mode 2 needs policy otp; pending, disabled and unknown tokens do
 *      not count;
 *   4. unwrap the token secret, decrypt the OTP, CRC, private id;
 *   5. counter rules: higher than stored is good; equal with the nonce
 *      stored = a retransmission (DISCARD); equal otherwise = a replay;
 *      lower = an old OTP replayed or a cloned key (confirmed by a fresh
 *      read from the write server before it is logged as such);
 *   6. compare-and-swap the state; a lost race re-reads from the write
 *      server and runs 3-6 again (bounded); a write that timed out is
 *      never retried: it is an outage.
 *
 * A rejection judged on a record older than YK_RECHECK_AGE_MS is checked
 * again against a fresh read before it is final, so garbage against a
 * fresh record costs no LDAP operation and a stale cache never refuses a
 * good OTP.  That re-read is the one timing signal left between a wrong
 * and a right password: only a right one reaches the OTP check, and a
 * rejected OTP then costs a read from the write server when the record
 * is older than YK_RECHECK_AGE_MS (doc/protocol.md, security notes).
 * Every such guess is answered PREAUTH_FAILED and counts toward lockout.
 *
 * Outages (directory down, slow, refusing, read-only, access; keyring
 * unreadable) answer DISCARD, unless another authenticating padata
 * shares the request: the KDC keeps the last module error, and a DISCARD
 * there would hide a failed password guess from lockout.  Timeouts,
 * unreachable servers and a refused bind open the circuit breaker.  One
 * attempt's directory work (connects, binds, searches, swaps, re-reads)
 * has a time budget of YK_BUDGET_FACTOR times yubikey_ldap_timeout in
 * all: a directory that answers each operation just in time still
 * cannot hold a KDC worker for long, and running out of the budget is a
 * timeout.  The keyring file is looked at every YK_KEYRING_CHECK_MS and
 * reloaded whole when it changed (ykadmin rewrap --add-key, copied to
 * every KDC); a file that does not load leaves the old keyring in use.
 * Secrets (the unwrapped token secret, decrypted fields, OTP buffers,
 * the bind password once the store holds its copy) are wiped on every
 * path.
 */

#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <com_err.h>

#include "errors.h"
#include "padata.h"
#include "postread.h"
#include "rfc6560.h"
#include "secmem.h"
#include "realm.h"
#include "verify.h"

#define YK_TEST_DELAY_MAX_MS 60000  /* the test hook sleeps at most this */

/* ---- the hint ---------------------------------------------------------- */

/* Return 1 when entry holds at least one active token. */
static int
has_active_token(const yk_entry *entry)
{
    size_t i;

    for (i = 0; i < entry->ntokens; i++) {
        if (entry->tokens[i].secret != NULL &&
            !entry->tokens[i].malformed &&
            entry->tokens[i].secret->state == YK_TOKEN_ACTIVE)
            return 1;
    }
    return 0;
}

/* Describe why entry (the lookup's code) gives no hint, into buf: the
 * words a helpdesk needs in the KDC log ("tokens vv... disabled"). */
static void
describe_no_hint(const yk_entry *entry, krb5_error_code code, char *buf,
                 size_t len)
{
    const yk_token *t;
    const char *state;
    size_t i, used;

    if (code == YK_ERR_STORE_AMBIGUOUS) {
        snprintf(buf, len, "more than one directory entry");
        return;
    }
    if (entry == NULL) {
        snprintf(buf, len, "no directory entry");
        return;
    }
    if (entry->ntokens == 0) {
        snprintf(buf, len, "no token enrolled");
        return;
    }
    used = (size_t)snprintf(buf, len, "no active token:");
    for (i = 0; i < entry->ntokens && used < len; i++) {
        t = &entry->tokens[i];
        if (t->malformed || t->secret == NULL)
            state = "unusable record";
        else if (t->secret->state == YK_TOKEN_DISABLED)
            state = "disabled";
        else if (t->secret->state == YK_TOKEN_PENDING)
            state = "pending (enrolment not finished)";
        else
            state = "unknown state";
        used += (size_t)snprintf(buf + used, len - used, "%s %s %s",
                                 i > 0 ? "," : "", t->pubid, state);
    }
}

/* Decide the hint from the cache; see verify.h. */
krb5_error_code
yk_hint_flags(yk_realm *r, const char *principal, int armored,
              int requires_hw, uint8_t *flags_out)
{
    krb5_error_code ret, code = 0;
    const yk_entry *cached = NULL;
    yk_entry *entry = NULL;
    char why[YK_DETAIL_LEN];
    int64_t now, fetched = 0;
    int have, stale, breaker;
    uint8_t flags;

    if (r == NULL || !r->active) {
        if (requires_hw) {
            yk_kdc_log("hint=none principal=%s reason=%s", principal,
                       r != NULL && r->misconfigured ?
                       "CONFIGURATION ERROR (see the KDC's start)" :
                       "no token directory configured for the realm");
        }
        return ENOENT;
    }
    if (r->cfg.require_fast && !armored) {
        if (requires_hw) {
            yk_kdc_log("hint=none principal=%s reason=not armored "
                       "(yubikey_require_fast)", principal);
        }
        return ENOENT;
    }

    now = yk_mono_ms();
    breaker = yk_breaker_open(r, now);
    have = yk_cache_get(r->cache, principal, &cached, &code, &fetched) == 0;
    stale = !have || now - fetched >= (int64_t)r->cfg.cache_ttl * 1000;
    /* A record without an active token is read again at once when an
     * administrator's change could be what it misses: the principal has
     * tokens (one may just have been enabled or activated), or it cannot
     * log in without one.  Other principals' negative records live for
     * the cache TTL, so that password logins cost no directory work. */
    if (have && !stale && (cached == NULL || !has_active_token(cached)) &&
        (requires_hw || (cached != NULL && cached->ntokens > 0)))
        stale = 1;
    if (stale && !breaker) {
        /* One lookup.  On failure a stale record, if any, still serves
         * (a hint may be stale). */
        yk_budget_set(r, 1);
        ret = yk_read_entry(r, principal, 0, &entry, &code);
        yk_budget_set(r, 0);
        if (ret == 0) {
            ret = yk_cache_put(r->cache, principal, entry, code, now);
            entry = NULL;
            if (ret)
                return ENOENT;
            have = yk_cache_get(r->cache, principal, &cached, &code,
                                &fetched) == 0;
        }
    }
    if (!have || cached == NULL || !has_active_token(cached)) {
        /* Say why, where it matters: the principal has tokens, or it
         * gets no ticket without one. */
        if (!have) {
            snprintf(why, sizeof(why), "the token directory could not be "
                     "read%s", breaker ? " (circuit breaker open)" : "");
        } else {
            describe_no_hint(cached, code, why, sizeof(why));
        }
        if (requires_hw || (have && cached != NULL && cached->ntokens > 0))
            yk_kdc_log("hint=none principal=%s reason=%s", principal, why);
        return ENOENT;
    }

    flags = YK_HINT_PASSWORD_BOUND;
    if (armored && cached->has_policy && cached->policy == YK_POLICY_OTP)
        flags |= YK_HINT_OTP_ALONE_OK;
    *flags_out = flags;
    return 0;
}

/* The hint from the cache only; see verify.h. */
krb5_error_code
yk_hint_cached(yk_realm *r, const char *principal, int armored)
{
    const yk_entry *cached = NULL;
    krb5_error_code code = 0;
    int64_t fetched = 0;

    if (r == NULL || !r->active || (r->cfg.require_fast && !armored))
        return ENOENT;
    if (yk_cache_get(r->cache, principal, &cached, &code, &fetched) != 0 ||
        cached == NULL || !has_active_token(cached))
        return ENOENT;
    return 0;
}

/* ---- verify ---------------------------------------------------------- */

/* Record a verdict with an optional printf detail. */
static void
set_verdict(yk_verify_out *out, yk_verdict v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
set_verdict(yk_verify_out *out, yk_verdict v, const char *fmt, ...)
{
    va_list ap;

    out->verdict = v;
    out->detail[0] = '\0';
    if (fmt != NULL) {
        va_start(ap, fmt);
        vsnprintf(out->detail, sizeof(out->detail), fmt, ap);
        va_end(ap);
    }
}

#ifdef YK_TEST_HOOKS
/* Test hook: sleep YK_TEST_CAS_DELAY_MS milliseconds between the read and
 * the swap, so that tests can make two verifiers race. */
static void
test_cas_delay(yk_store *st)
{
    const char *s = getenv("YK_TEST_CAS_DELAY_MS");
    char *end = NULL;
    long ms;

    if (s == NULL || *s == '\0')
        return;
    ms = strtol(s, &end, 10);
    if (*end != '\0' || ms <= 0 || ms > YK_TEST_DELAY_MAX_MS)
        return;
    /* Inside the KDC other attempts run meanwhile (the worker is not
     * blocked), as during a slow swap. */
    yk_store_sleep_ms(st, (int)ms);
}
#endif

/* Mode 1, step 2: open the sealed request with the client key of its
 * enctype into *b.  Returns 1 on success; otherwise sets the verdict. */
static int
open_bound(krb5_context ctx, const yk_verify_in *in, const yk_request *req,
           yk_bound *b, yk_verify_out *out)
{
    const krb5_keyblock *k, *keys;
    krb5_error_code ret = 0;
    int tried = 0;

    keys = in->get_client_keys != NULL ?
        in->get_client_keys(in->keys_arg) : NULL;
    for (k = keys; k != NULL && k->enctype != 0; k++) {
        if (k->enctype != req->enctype)
            continue;
        tried = 1;
        ret = yk_padata_open(ctx, k, req, b);
        if (ret == 0)
            return 1;
        if (ret != KRB5KRB_AP_ERR_BAD_INTEGRITY)
            break;
    }
    if (!tried) {
        set_verdict(out, YK_V_MALFORMED, "no client key of enctype %d",
                    (int)req->enctype);
    } else if (ret == KRB5KRB_AP_ERR_BAD_INTEGRITY) {
        set_verdict(out, YK_V_WRONG_PASSWORD, NULL);
    } else if (ret == ENOMEM) {
        set_verdict(out, YK_V_BACKEND, "out of memory");
    } else {
        set_verdict(out, YK_V_MALFORMED, "sealed part: %s",
                    yk_strerror(ret));
    }
    return 0;
}

/* Step 3 on one record: the entry (code: the lookup's negative code),
 * the principal's policy for mode, and otp's token in it, which must be
 * active with a state.  The token, or NULL after setting the verdict. */
static yk_token *
judge_token(int mode, const yk_otp *otp, const yk_entry *entry,
            krb5_error_code code, yk_verify_out *out)
{
    yk_token *tok;

    if (code == YK_ERR_STORE_AMBIGUOUS) {
        set_verdict(out, YK_V_BACKEND, "more than one directory entry");
        return NULL;
    }
    if (entry == NULL) {
        set_verdict(out, YK_V_UNKNOWN_TOKEN, "no directory entry");
        return NULL;
    }
    if (mode == YK_MODE_OTP &&
        !(entry->has_policy && entry->policy == YK_POLICY_OTP)) {
        set_verdict(out, YK_V_POLICY, "OTP alone needs policy otp");
        return NULL;
    }
    tok = yk_entry_find_token(entry, otp->pubid_modhex);
    if (tok == NULL || (tok->secret == NULL && !tok->malformed)) {
        set_verdict(out, YK_V_UNKNOWN_TOKEN, NULL);
        return NULL;
    }
    if (tok->malformed || tok->secret == NULL) {
        set_verdict(out, YK_V_BAD_RECORD, "%s",
                    tok->malformed_reason != NULL ? tok->malformed_reason :
                    "no secret value");
        return NULL;
    }
    if (tok->secret->state == YK_TOKEN_PENDING) {
        set_verdict(out, YK_V_PENDING_TOKEN, NULL);
        return NULL;
    }
    if (tok->secret->state == YK_TOKEN_DISABLED) {
        set_verdict(out, YK_V_DISABLED_TOKEN, NULL);
        return NULL;
    }
    if (tok->secret->state != YK_TOKEN_ACTIVE) {
        set_verdict(out, YK_V_UNKNOWN_TOKEN, "state %d",
                    tok->secret->state);
        return NULL;
    }
    if (!tok->has_state) {
        set_verdict(out, YK_V_BAD_RECORD, "no state record");
        return NULL;
    }
    return tok;
}

/* Step 4: tok's secret, bound to this principal and public id, unwrapped
 * with r's keyring, decrypts otp into *fields with the right private id.
 * 1, or 0 after setting the verdict.  The unwrapped secret is wiped
 * here; *fields is the caller's to wipe. */
static int
judge_decrypt(yk_realm *r, const yk_verify_in *in, const yk_otp *otp,
              const yk_token *tok, yk_token_fields *fields,
              yk_verify_out *out)
{
    krb5_error_code ret;
    yk_token_secret secret;
    int ok = 0;

    memset(&secret, 0, sizeof(secret));
    ret = yk_keywrap_unwrap(r->keyring, tok->secret->wrapped, in->principal,
                            otp->pubid_modhex, &secret);
    if (ret == YK_ERR_WRAP_FORMAT || ret == YK_ERR_WRAP_BINDING) {
        set_verdict(out, YK_V_BAD_RECORD, "%s", yk_strerror(ret));
        yk_kdc_log("realm %s: token %s of %s: unusable secret record: "
                   "%s", r->name, otp->pubid_modhex, in->principal,
                   yk_strerror(ret));
        goto cleanup;
    }
    if (ret) {
        /* A key version we lack or a GCM failure: the keyring in use is
         * not the one the record was made with (or it was tampered). */
        set_verdict(out, YK_V_BACKEND, "keyring: %s", yk_strerror(ret));
        yk_kdc_log("realm %s: token %s of %s: the secret does not "
                   "unwrap with %s (%s): wrong or outdated master keyring, "
                   "or a tampered record", r->name, otp->pubid_modhex,
                   in->principal, r->cfg.master_key_file,
                   yk_strerror(ret));
        goto cleanup;
    }
    ret = yk_otp_decrypt(otp, secret.aes_key, fields);
    if (ret == YK_ERR_OTP_CRC) {
        set_verdict(out, YK_V_BAD_OTP, NULL);
        goto cleanup;
    }
    if (ret) {
        set_verdict(out, YK_V_BACKEND, "decrypt: %s", yk_strerror(ret));
        goto cleanup;
    }
    if (yk_otp_check_privid(fields, secret.private_id) != 0) {
        set_verdict(out, YK_V_BAD_OTP, "private id mismatch");
        goto cleanup;
    }
    ok = 1;

cleanup:
    yk_zap(&secret, sizeof(secret));
    return ok;
}

/* Step 5: the counter rules against tok's stored state.  On acceptance
 * *next_out is the new state (gen + 1, this request's nonce and time). */
static void
judge_counter(const yk_verify_in *in, const yk_token *tok,
              const yk_token_fields *fields, yk_state_rec *next_out,
              yk_verify_out *out)
{
    uint32_t counter, stored;

    counter = yk_otp_counter(fields);
    out->has_counter = 1;
    out->counter = counter;
    stored = tok->state.counter;
    if (counter < stored) {
        set_verdict(out, YK_V_OLDER, "stored counter %lu",
                    (unsigned long)stored);
        return;
    }
    if (counter == stored) {
        if (tok->state.has_nonce && tok->state.nonce == in->nonce)
            set_verdict(out, YK_V_RETRANSMISSION, NULL);
        else
            set_verdict(out, YK_V_REPLAY, NULL);
        return;
    }
    *next_out = tok->state;
    next_out->counter = counter;
    next_out->gen = tok->state.gen + 1;
    next_out->has_nonce = 1;
    next_out->nonce = in->nonce;
    next_out->last_use = (int64_t)(uint32_t)in->now;
    set_verdict(out, YK_V_ACCEPTED, NULL);
}

/* Steps 3-5 on one record: judge the OTP against entry (code: the
 * lookup's negative code).  On YK_V_ACCEPTED, *tok_out is the token and
 * *next_out its new state.  The OTP's fields are wiped here. */
static void
judge(yk_realm *r, const yk_verify_in *in, int mode, const yk_otp *otp,
      const yk_entry *entry, krb5_error_code code, yk_token **tok_out,
      yk_state_rec *next_out, yk_verify_out *out)
{
    yk_token_fields fields;
    yk_token *tok;

    memset(&fields, 0, sizeof(fields));
    out->has_counter = 0;
    out->counter = 0;
    tok = judge_token(mode, otp, entry, code, out);
    if (tok != NULL && judge_decrypt(r, in, otp, tok, &fields, out)) {
        judge_counter(in, tok, &fields, next_out, out);
        if (out->verdict == YK_V_ACCEPTED)
            *tok_out = tok;
    }
    yk_zap(&fields, sizeof(fields));
}

/* After a successful swap, make the cached record say what the directory
 * now holds: the new state value (the store writes the canonical format)
 * and no extra state values.  If that cannot be done, the record is
 * marked stale so that the next attempt reads again, and 0 returned. */
static int
note_commit(yk_token *tok, const yk_state_rec *next, int64_t *fetched)
{
    char *raw = NULL;
    size_t i;

    if (yk_state_rec_format(next, &raw) != 0) {
        *fetched = 0;
        return 0;
    }
    free(tok->state_raw);
    tok->state_raw = raw;
    tok->state_raw_len = strlen(raw);
    tok->state = *next;
    for (i = 0; i < tok->nextra; i++)
        free(tok->extra_raw[i]);
    free(tok->extra_raw);
    free(tok->extra_raw_len);
    tok->extra_raw = NULL;
    tok->extra_raw_len = NULL;
    tok->nextra = 0;
    return 1;
}

/* The key of entry's token tok in the table the workers share. */
static krb5_error_code
shared_key(const char *principal, const yk_entry *entry,
           const yk_token *tok, unsigned char key[YK_SHTAB_KEY_LEN])
{
    return yk_shtab_key(principal, tok->pubid, tok->secret_raw,
                        tok->secret_raw_len,
                        entry->has_policy ? entry->policy : -1, key);
}

/* Hold the state value of entry's token tok in the table the workers
 * share, for the next attempt on any of them: after a commit (kept only
 * when newer than what is held), or as read from the write server (read:
 * kept whatever is held, since it is what the directory has now). */
static void
shared_put(yk_realm *r, const char *principal, const yk_entry *entry,
           const yk_token *tok, int read)
{
    unsigned char key[YK_SHTAB_KEY_LEN];

    if (r->shared == NULL || tok->malformed || !tok->has_state ||
        tok->state_raw == NULL || tok->secret_raw == NULL ||
        tok->nextra != 0)
        return;
    if (shared_key(principal, entry, tok, key) == 0)
        yk_shtab_put(r->shared, key, tok->state.gen, read, tok->state_raw,
                     tok->state_raw_len);
}

/* When another worker committed a newer state value of the OTP's token
 * (same principal, public id, secret value and policy) than entry holds,
 * entry's copy takes it: the swap then starts from it and wins, instead
 * of losing and reading the entry again.  Only a guess: the swap
 * decides, and a value held there was in the directory once, so a
 * refusal judged on it is as sound as one judged on the cached record.
 * Only an administrator's write changes a secret or the policy, and it
 * rewrites the state values in the same modify: a value still in the
 * directory (the swap's test) vouches for the secret and policy it was
 * held under. */
static void
shared_adopt(yk_realm *r, const char *principal, const yk_otp *otp,
             yk_entry *entry)
{
    unsigned char key[YK_SHTAB_KEY_LEN];
    char raw[YK_SHTAB_RAW_MAX + 1];
    yk_state_rec st;
    yk_token *tok;
    size_t len = 0;
    char *copy;

    if (r->shared == NULL || entry == NULL)
        return;
    tok = yk_entry_find_token(entry, otp->pubid_modhex);
    if (tok == NULL || tok->malformed || !tok->has_state ||
        tok->secret_raw == NULL || tok->nextra != 0)
        return;
    if (shared_key(principal, entry, tok, key) != 0 ||
        !yk_shtab_get(r->shared, key, tok->state.gen, raw, YK_SHTAB_RAW_MAX,
                      &len))
        return;
    raw[len] = '\0';
    if (yk_state_rec_parse(raw, len, &st) != 0 ||
        strcmp(st.pubid, tok->pubid) != 0 || st.gen <= tok->state.gen)
        return;
    copy = strdup(raw);
    if (copy == NULL)
        return;
    free(tok->state_raw);
    tok->state_raw = copy;
    tok->state_raw_len = len;
    tok->state = st;
}

/* One attempt's copy of the principal's record: copied from the cache (or
 * read) before the password check, put back when the attempt ends. */
typedef struct {
    yk_entry *entry;             /* NULL: no entry (code says why) */
    krb5_error_code code;        /* the lookup's negative code, or 0 */
    int64_t fetched;             /* when it was read (monotonic ms) */
    int have;                    /* entry and code hold a lookup result */
} yk_record;

static int record_read(yk_realm *r, const yk_verify_in *in, int fresh,
                       yk_record *rec, yk_verify_out *out);

/* Before anything depends on the password: the circuit breaker, the
 * keyring, then principal's record into *rec (the cached one, read again
 * when older than the cache TTL), under the attempt's time budget.  So a
 * wrong and a right password get the same answer during an outage, and
 * cost the same directory work up to the OTP check.  Returns 1 when the
 * attempt goes on, else 0 with out's verdict set (an outage). */
static int
attempt_begin(yk_realm *r, const yk_verify_in *in, yk_record *rec,
              yk_verify_out *out)
{
    int64_t now = yk_mono_ms();
    const yk_entry *cached = NULL;

    if (yk_breaker_open(r, now)) {
        set_verdict(out, YK_V_BACKEND, "circuit breaker open");
        return 0;
    }
    if (!yk_keyring_ready(r, now)) {
        set_verdict(out, YK_V_BACKEND, "master keyring unreadable: %s",
                    yk_strerror(r->keyring_err));
        return 0;
    }
    yk_budget_set(r, 1);

    /* The cached record is the guess the swap starts from: a copy, so
     * that the attempts in flight meanwhile (hints, other logins of the
     * principal: async.c) still find it. */
    rec->entry = NULL;
    rec->have = yk_cache_get(r->cache, in->principal, &cached, &rec->code,
                             &rec->fetched) == 0;
    if (rec->have && cached != NULL &&
        yk_entry_copy(cached, &rec->entry) != 0)
        rec->have = 0;   /* no memory for the copy: read it */
    if (rec->have && now - rec->fetched < (int64_t)r->cfg.cache_ttl * 1000)
        return 1;
    return record_read(r, in, 0, rec, out);
}

/* A refusal that the write server could not confirm (it failed, or its
 * record is unusable): the refusal stands, as judged on the record held.
 * Not an outage answer: mode 1 checked the password before, and a
 * DISCARD here would tell a right password from a wrong one (whose
 * refusal comes first).  out's failure text goes into the log line. */
static void
keep_refusal(yk_verify_out *out, const yk_verify_out *refusal)
{
    char why[YK_DETAIL_LEN];
    size_t n;

    snprintf(why, sizeof(why), "%s", out->detail);
    *out = *refusal;
    n = strlen(out->detail);
    snprintf(out->detail + n, sizeof(out->detail) - n,
             "%snot confirmed on the write server: %s", n > 0 ? "; " : "",
             why);
}

/* Replace rec by the principal's record read again: from the read server,
 * or with fresh set from the write server (a lost swap, a rejection to
 * confirm).  Returns 1, or 0 with out's verdict set (an outage). */
static int
record_read(yk_realm *r, const yk_verify_in *in, int fresh,
            yk_record *rec, yk_verify_out *out)
{
    krb5_error_code ret, ncode = 0;
    yk_entry *newer = NULL;
    int64_t now = yk_mono_ms();
    size_t i;

    ret = yk_read_entry(r, in->principal, fresh, &newer, &ncode);
    if (ret) {
        set_verdict(out, YK_V_BACKEND, "%s: %s", fresh ? "re-read" : "read",
                    yk_store_why(r, ret));
        return 0;
    }
    for (i = 0; fresh && newer != NULL && i < newer->ntokens; i++)
        shared_put(r, in->principal, newer, &newer->tokens[i], 1);
    yk_entry_free(rec->entry);
    rec->entry = newer;
    rec->code = ncode;
    rec->fetched = now;
    rec->have = 1;
    return 1;
}

/* Before the password is looked at (mode 1 opens the request with it):
 * what of the record would fail after it whatever the OTP, answered now
 * so that the answer does not depend on the password (a right password
 * must not be told apart from a wrong one by a DISCARD).  Several entries
 * for the principal, and an active token whose secret does not unwrap
 * with the keyring (a key version not loaded, a tampered record): an
 * outage, DISCARDed.  Returns 1 when the attempt goes on. */
static int
record_usable(yk_realm *r, const yk_verify_in *in, const yk_record *rec,
              yk_verify_out *out)
{
    krb5_error_code ret;
    yk_token_secret secret;
    const yk_token *tok;
    size_t i;

    if (rec->code == YK_ERR_STORE_AMBIGUOUS) {
        set_verdict(out, YK_V_BACKEND, "more than one directory entry");
        return 0;
    }
    for (i = 0; rec->entry != NULL && i < rec->entry->ntokens; i++) {
        tok = &rec->entry->tokens[i];
        if (tok->malformed || tok->secret == NULL ||
            tok->secret->state != YK_TOKEN_ACTIVE)
            continue;
        memset(&secret, 0, sizeof(secret));
        ret = yk_keywrap_unwrap(r->keyring, tok->secret->wrapped,
                                in->principal, tok->pubid, &secret);
        yk_zap(&secret, sizeof(secret));
        if (ret == 0 || ret == YK_ERR_WRAP_FORMAT ||
            ret == YK_ERR_WRAP_BINDING)
            continue;   /* usable, or judged (refused) with its OTP */
        set_verdict(out, YK_V_BACKEND, "keyring: token %s: %s", tok->pubid,
                    yk_strerror(ret));
        yk_kdc_log("realm %s: token %s of %s: the secret does not unwrap "
                   "with %s (%s): wrong or outdated master keyring, or a "
                   "tampered record", r->name, tok->pubid, in->principal,
                   r->cfg.master_key_file, yk_strerror(ret));
        return 0;
    }
    return 1;
}

/* End an attempt begun with attempt_begin: the record goes back to the
 * cache (even after an outage it serves stale hints; a swap that timed
 * out only makes the next swap lose and re-read), the budget ends. */
static void
attempt_end(yk_realm *r, const yk_verify_in *in, yk_record *rec)
{
    if (rec->have) {
        (void)yk_cache_put(r->cache, in->principal, rec->entry, rec->code,
                           rec->fetched);
    } else {
        yk_entry_free(rec->entry);
    }
    rec->entry = NULL;
    rec->have = 0;
    yk_budget_set(r, 0);
}

/* Whether a rejection for verdict v is final only once a read from the
 * write server confirms it, however fresh the cached record: "older than
 * the last use" (it is logged as a possible clone), and what an
 * administrator's change undoes at once (enable, the end of an
 * enrolment, a policy change).  These need the token's public id, or
 * for a policy refusal an armored request. */
static int
confirm_always(yk_verdict v)
{
    return v == YK_V_OLDER || v == YK_V_DISABLED_TOKEN ||
        v == YK_V_PENDING_TOKEN || v == YK_V_POLICY;
}

/* The verdict on an OTP whose swap landed beside a rival value (store's
 * YK_ERR_STORE_RIVAL, kind YK_RIVAL_*), logged loudly: the same counter
 * accepted on another provider too (or one past it) is a replay, the
 * same request there a retransmission; a post-read that does not parse
 * is an outage (DISCARD: the OTP is spent either way). */
static void
rival_verdict(yk_realm *r, int kind, yk_verify_out *out)
{
    if (kind == YK_RIVAL_UNREADABLE) {
        yk_kdc_log("WARNING: realm %s: %s: the login is discarded",
                   r->name, yk_store_last_error(r->store));
        set_verdict(out, YK_V_BACKEND, "swap: post-read unusable");
        return;
    }
    yk_kdc_log("WARNING: realm %s: %s: %s; the KDCs swap on more than one "
               "provider", r->name, yk_store_last_error(r->store),
               kind == YK_RIVAL_RETRANSMISSION ?
               "the same request, a retransmission" :
               "the OTP is refused as a replay");
    if (kind == YK_RIVAL_RETRANSMISSION)
        set_verdict(out, YK_V_RETRANSMISSION, NULL);
    else if (kind == YK_RIVAL_OLDER)
        set_verdict(out, YK_V_OLDER, "swapped further on another provider");
    else
        set_verdict(out, YK_V_REPLAY, NULL);
}

/* Steps 3-6 on rec (from attempt_begin): the checks, the re-reads and
 * the swap loop.  pw (pw_len bytes, NULL: none) is an RFC 6560 password,
 * checked with in->check_password before the first swap. */
static void
check_and_commit(yk_realm *r, const yk_verify_in *in, int mode,
                 const yk_otp *otp, const char *pw, size_t pw_len,
                 yk_record *rec, yk_verify_out *out)
{
    krb5_error_code ret;
    yk_token *tok = NULL;
    yk_state_rec next;
    yk_verify_out refusal;
    int fresh = 0, swaps = 0, pw_checked = 0, confirming = 0;
    /* Mode 1 checked the password before this: an outage answered now
     * would tell a right password apart (keep_refusal). */
    int password_first = mode == YK_MODE_2FA && pw == NULL;

    memset(&next, 0, sizeof(next));
    memset(&refusal, 0, sizeof(refusal));
    shared_adopt(r, in->principal, otp, rec->entry);
    for (;;) {
        tok = NULL;
        judge(r, in, mode, otp, rec->entry, rec->code, &tok, &next, out);
        if (out->verdict == YK_V_ACCEPTED && pw != NULL && !pw_checked) {
            /* RFC 6560, two factors: the password only now, once the OTP
             * passed every check but the swap, so that a wrong password
             * never burns the OTP and a wrong OTP never costs a
             * string-to-key. */
            pw_checked = 1;
            ret = in->check_password != NULL ?
                in->check_password(in->password_arg, pw, pw_len) :
                KRB5KDC_ERR_PREAUTH_FAILED;
            if (ret == KRB5KDC_ERR_PREAUTH_FAILED) {
                set_verdict(out, YK_V_WRONG_PASSWORD, NULL);
                break;
            }
            if (ret) {
                set_verdict(out, YK_V_BACKEND, "password check: %s",
                            yk_strerror(ret));
                break;
            }
        }
        if (out->verdict == YK_V_ACCEPTED) {
            if (swaps >= YK_CAS_MAX_ROUNDS) {
                set_verdict(out, YK_V_BACKEND, "lost the swap %d times",
                            swaps);
                break;
            }
            swaps++;
#ifdef YK_TEST_HOOKS
            test_cas_delay(r->store);
#endif
            /* Step 6: acknowledged before anything is issued. */
            ret = yk_store_cas_state(r->store, rec->entry, tok, &next);
            if (ret == 0) {
                if (yk_store_last_leftovers(r->store) > 0)
                    yk_kdc_log("realm %s: token %s: %zu lower state "
                               "value(s) left by a conflict between "
                               "providers removed after the swap",
                               r->name, tok->pubid,
                               yk_store_last_leftovers(r->store));
                if (note_commit(tok, &next, &rec->fetched))
                    shared_put(r, in->principal, rec->entry, tok, 0);
                break;
            }
            if (ret == YK_ERR_STORE_RIVAL) {
                /* The modify landed beside a value as high from another
                 * provider (or its read-back is unusable): judged on
                 * that, not re-read (the re-read would find our own
                 * value), never accepted. */
                rival_verdict(r, yk_store_last_rival(r->store), out);
                rec->fetched = 0;
                break;
            } else if (ret != YK_ERR_STORE_CONFLICT) {
                /* Never retried: a timed-out write may have landed. */
                yk_store_failed(r, ret, "compare-and-swap");
                set_verdict(out, YK_V_BACKEND, "swap: %s",
                            yk_store_why(r, ret));
                break;
            }
        } else if (out->verdict == YK_V_BACKEND) {
            if (confirming && password_first)
                keep_refusal(out, &refusal);
            break;
        } else if (fresh || (!confirm_always(out->verdict) &&
                             yk_mono_ms() - rec->fetched <
                             YK_RECHECK_AGE_MS)) {
            /* A rejection on a fresh enough record is final; some only
             * after a read from the master (confirm_always).  (The
             * re-read of an older record is the timing signal a right
             * password with a wrong OTP still gives: see the top of
             * this file.) */
            break;
        }

        /* A lost swap, or a rejection to confirm: read the master. */
        confirming = out->verdict != YK_V_ACCEPTED;
        if (confirming)
            refusal = *out;
        if (!record_read(r, in, 1, rec, out)) {
            if (confirming && password_first)
                keep_refusal(out, &refusal);
            break;
        }
        fresh = 1;
    }
}

/* Choose the answer for out's verdict.  Every verdict on the OTP or the
 * password is PREAUTH_FAILED (counted by lockout); outages and
 * retransmissions are DISCARDed (counted nowhere), unless another
 * authenticating padata shares the request: the KDC keeps the last module
 * error, so a DISCARD would hide that padata's failure from lockout. */
static void
set_code(const yk_verify_in *in, yk_verify_out *out)
{
    switch (out->verdict) {
    case YK_V_ACCEPTED:
        out->code = 0;
        break;
    case YK_V_BACKEND:
    case YK_V_RETRANSMISSION:
        out->code = in->other_auth ? KRB5KDC_ERR_PREAUTH_FAILED :
            KRB5KDC_ERR_DISCARD;
        break;
    default:
        out->code = KRB5KDC_ERR_PREAUTH_FAILED;
        break;
    }
}

/* Turn an attempt into an internal failure (a committed OTP stays
 * consumed); see verify.h. */
void
yk_verify_late_failure(const yk_verify_in *in, yk_verify_out *out,
                       krb5_error_code why)
{
    set_verdict(out, YK_V_BACKEND, "internal: %s", yk_strerror(why));
    set_code(in, out);
}

/* Whether r can judge an attempt: 1, or 0 with out's verdict set (a
 * misconfigured realm is an outage: never accepted, never counted
 * against the user; a realm without a token directory refuses). */
static int
realm_usable(const yk_realm *r, yk_verify_out *out)
{
    if (r != NULL && r->misconfigured) {
        set_verdict(out, YK_V_BACKEND, "CONFIGURATION ERROR: %s",
                    r->config_error);
        return 0;
    }
    if (r == NULL || !r->active) {
        set_verdict(out, YK_V_NOT_CONFIGURED, NULL);
        return 0;
    }
    return 1;
}

/* Whether c is a modhex character (either case). */
static int
is_modhex(char c)
{
    return c != '\0' && strchr("cbdefghijklnrtuvCBDEFGHIJKLNRTUV", c) !=
        NULL;
}

/* Where the OTP starts in value (len bytes): the longest public id of
 * entry's tokens followed by YK_TOKEN_MODHEX_LEN modhex characters that
 * end value (the public id compared without case).  -1 when none
 * matches. */
static long
split_value(const yk_entry *entry, const char *value, size_t len)
{
    size_t i, k, plen, best = 0;
    const char *tail;
    int found = 0;

    if (entry == NULL || len < YK_TOKEN_MODHEX_LEN)
        return -1;
    for (k = len - YK_TOKEN_MODHEX_LEN; k < len; k++) {
        if (!is_modhex(value[k]))
            return -1;
    }
    for (i = 0; i < entry->ntokens; i++) {
        plen = strlen(entry->tokens[i].pubid);
        if (plen + YK_TOKEN_MODHEX_LEN > len || (found && plen <= best))
            continue;
        tail = value + len - YK_TOKEN_MODHEX_LEN - plen;
        if (strncasecmp(tail, entry->tokens[i].pubid, plen) == 0) {
            best = plen;
            found = 1;
        }
    }
    return found ? (long)(len - YK_TOKEN_MODHEX_LEN - best) : -1;
}

/* Whether value ends with what a YubiKey types: a public id of the usual
 * length and the 32-character token, all modhex. */
static int
ends_with_otp(const char *value, size_t len)
{
    size_t k;

    if (len < YK_PUBID_MODHEX_STD + YK_TOKEN_MODHEX_LEN)
        return 0;
    for (k = len - YK_PUBID_MODHEX_STD - YK_TOKEN_MODHEX_LEN; k < len; k++) {
        if (!is_modhex(value[k]))
            return 0;
    }
    return 1;
}

/* RFC 6560, before the directory: decode the PA-OTP-REQUEST into *req,
 * decrypt its encData with the armor key (key usage 45) and check the
 * nonce inside against our challenge's (from the KDC cookie).  Returns 1
 * when the request goes on; otherwise sets the verdict. */
static int
open_otp_request(krb5_context ctx, const yk_verify_in *in,
                 yk_rfc6560_request *req, yk_verify_out *out)
{
    krb5_error_code ret;
    krb5_data plain = { 0 }, nonce;
    int ok = 0;

    ret = yk_rfc6560_decode_request(in->padata, req);
    if (ret) {
        set_verdict(out, YK_V_MALFORMED, "PA-OTP-REQUEST: %s",
                    yk_strerror(ret));
        return 0;
    }
    if (in->armor_key == NULL || !in->armored) {
        set_verdict(out, YK_V_NOT_ARMORED, "PA-OTP-REQUEST");
        return 0;
    }
    if (!req->otp_value.present || req->otp_value.data.length == 0) {
        set_verdict(out, YK_V_MALFORMED, "PA-OTP-REQUEST without a value");
        return 0;
    }
    plain.length = req->enc_data.ciphertext.length;
    plain.data = calloc(1, plain.length > 0 ? plain.length : 1);
    if (plain.data == NULL) {
        set_verdict(out, YK_V_BACKEND, "out of memory");
        return 0;
    }
    ret = krb5_c_decrypt(ctx, in->armor_key, KRB5_KEYUSAGE_PA_OTP_REQUEST,
                         NULL, &req->enc_data, &plain);
    if (ret) {
        set_verdict(out, YK_V_NONCE_MISMATCH, "encData does not decrypt "
                    "with the armor key");
        goto cleanup;
    }
    ret = yk_rfc6560_decode_enc_request(&plain, &nonce);
    if (ret) {
        set_verdict(out, YK_V_MALFORMED, "PA-OTP-ENC-REQUEST: %s",
                    yk_strerror(ret));
        goto cleanup;
    }
    if (in->challenge_nonce == NULL ||
        in->challenge_nonce->length != nonce.length ||
        !yk_memeq(in->challenge_nonce->data, nonce.data, nonce.length)) {
        set_verdict(out, YK_V_NONCE_MISMATCH, "not the nonce of our "
                    "challenge");
        goto cleanup;
    }
    ok = 1;

cleanup:
    yk_zap(plain.data, plain.length);
    free(plain.data);
    return ok;
}

/* RFC 6560 (padata 142), after open_otp_request and attempt_begin: split
 * otp-value into password and OTP by the principal's public ids, then
 * steps 3-6 with the password checked before the swap.  The password is
 * otp-pin when sent, else what precedes the OTP; none means the OTP
 * alone (policy otp). */
static void
run_otp_request(yk_realm *r, const yk_verify_in *in,
                const yk_rfc6560_request *req, yk_record *rec,
                yk_verify_out *out)
{
    krb5_error_code ret;
    const char *value = req->otp_value.data.data, *pw = NULL;
    size_t len = req->otp_value.data.length, pw_len = 0, k;
    yk_otp otp;
    long off;

    memset(&otp, 0, sizeof(otp));
    off = split_value(rec->entry, value, len);
    if (off < 0 && yk_mono_ms() - rec->fetched >= YK_RECHECK_AGE_MS) {
        /* No enrolled token ends the value, judged on an older record: a
         * token enrolled since must not be refused, so read the master
         * once and split again (as -22859 confirms such a refusal). */
        if (!record_read(r, in, 1, rec, out))
            return;
        off = split_value(rec->entry, value, len);
    }
    if (off < 0 && rec->entry != NULL && ends_with_otp(value, len)) {
        /* An OTP, but of no token of this principal's (another's, or
         * one deleted).  Its public id is logged only when the value is
         * nothing else: before a password, the characters taken for it
         * could be the password's end (a shorter public id). */
        if (len == YK_PUBID_MODHEX_STD + YK_TOKEN_MODHEX_LEN) {
            for (k = 0; k < YK_PUBID_MODHEX_STD; k++)
                out->pubid[k] = (char)tolower((unsigned char)value[k]);
            out->pubid[k] = '\0';
        }
        set_verdict(out, YK_V_UNKNOWN_TOKEN, NULL);
        return;
    }
    if (off < 0) {
        set_verdict(out, rec->entry == NULL ? YK_V_UNKNOWN_TOKEN :
                    YK_V_MALFORMED, rec->entry == NULL ?
                    "no directory entry" : "the value does not end with "
                    "an OTP of an enrolled token");
        return;
    }
    if (req->pin.present && req->pin.data.length > 0) {
        if (off > 0) {
            set_verdict(out, YK_V_MALFORMED, "a password both in otp-pin "
                        "and before the OTP");
            return;
        }
        pw = req->pin.data.data;
        pw_len = req->pin.data.length;
    } else if (off > 0) {
        pw = value;
        pw_len = (size_t)off;
    }
    out->mode = pw != NULL ? YK_MODE_2FA : YK_MODE_OTP;
    ret = yk_otp_parse(value + off, len - (size_t)off, &otp);
    if (ret) {
        set_verdict(out, YK_V_MALFORMED, "OTP: %s", yk_strerror(ret));
        return;
    }
    snprintf(out->pubid, sizeof(out->pubid), "%s", otp.pubid_modhex);
    check_and_commit(r, in, out->mode, &otp, pw, pw_len, rec, out);
    yk_zap(&otp, sizeof(otp));
}

/* Run the pipeline for a PA-OTP-REQUEST; see yk_verify_run. */
static void
verify_otp_request(krb5_context ctx, yk_realm *r, const yk_verify_in *in,
                   yk_verify_out *out)
{
    yk_rfc6560_request req;
    yk_record rec;
    int begun = 0;

    memset(&req, 0, sizeof(req));
    memset(&rec, 0, sizeof(rec));
    if (in->duplicate) {
        set_verdict(out, YK_V_DUPLICATE, NULL);
        goto cleanup;
    }
    if (!realm_usable(r, out))
        goto cleanup;
    if (!open_otp_request(ctx, in, &req, out))
        goto cleanup;
    begun = 1;
    if (!attempt_begin(r, in, &rec, out))
        goto cleanup;
    run_otp_request(r, in, &req, &rec, out);

cleanup:
    if (begun)
        attempt_end(r, in, &rec);
    set_code(in, out);
}

/* Run the pipeline; see verify.h. */
void
yk_verify_run(krb5_context ctx, yk_realm *r, const yk_verify_in *in,
              yk_verify_out *out)
{
    krb5_error_code ret;
    yk_request req;
    yk_bound bound;
    yk_otp otp;
    yk_record rec;
    const char *otp_str = NULL;
    size_t otp_len = 0;
    int64_t skew;
    int begun = 0;

    memset(&req, 0, sizeof(req));
    memset(&bound, 0, sizeof(bound));
    memset(&otp, 0, sizeof(otp));
    memset(&rec, 0, sizeof(rec));
    memset(out, 0, sizeof(*out));
    set_verdict(out, YK_V_MALFORMED, NULL);
    if (in->rfc6560) {
        verify_otp_request(ctx, r, in, out);
        return;
    }

    /* Step 1. */
    if (in->duplicate) {
        set_verdict(out, YK_V_DUPLICATE, NULL);
        goto cleanup;
    }
    ret = yk_padata_decode_request(in->padata, &req);
    if (ret) {
        set_verdict(out, YK_V_MALFORMED, "%s", yk_strerror(ret));
        goto cleanup;
    }
    out->mode = req.mode;
    if (!realm_usable(r, out))
        goto cleanup;
    if (req.mode == YK_MODE_OTP && !in->armored) {
        set_verdict(out, YK_V_NOT_ARMORED, "OTP alone");
        goto cleanup;
    }
    if (req.mode != YK_MODE_OTP && r->cfg.require_fast && !in->armored) {
        set_verdict(out, YK_V_NOT_ARMORED, YK_CONF_REQUIRE_FAST);
        goto cleanup;
    }

    /* An outage answers before the password is looked at, and the record
     * is fetched whatever the password. */
    begun = 1;
    if (!attempt_begin(r, in, &rec, out))
        goto cleanup;
    if (!record_usable(r, in, &rec, out))
        goto cleanup;

    if (req.mode == YK_MODE_OTP) {
        otp_str = req.otp;
        otp_len = req.otp_len;
    } else {
        /* Step 2: the password, the time, the nonce. */
        if (!open_bound(ctx, in, &req, &bound, out))
            goto cleanup;
        skew = (int64_t)bound.sec - (int64_t)(uint32_t)in->now;
        if (skew < 0)
            skew = -skew;
        if (skew > (int64_t)in->max_skew) {
            set_verdict(out, YK_V_STALE_TIME, "%lld s off",
                        (long long)skew);
            goto cleanup;
        }
        if (bound.nonce != in->nonce) {
            set_verdict(out, YK_V_NONCE_MISMATCH, NULL);
            goto cleanup;
        }
        otp_str = bound.otp;
        otp_len = bound.otp_len;
    }

    ret = yk_otp_parse(otp_str, otp_len, &otp);
    if (ret) {
        set_verdict(out, YK_V_MALFORMED, "OTP: %s", yk_strerror(ret));
        goto cleanup;
    }
    snprintf(out->pubid, sizeof(out->pubid), "%s", otp.pubid_modhex);
    check_and_commit(r, in, req.mode, &otp, NULL, 0, &rec, out);

cleanup:
    if (begun)
        attempt_end(r, in, &rec);
    set_code(in, out);
    yk_request_clear(&req, 0);
    yk_zap(&bound, sizeof(bound));
    yk_zap(&otp, sizeof(otp));
}

/* ---- logging ----------------------------------------------------------- */

/* The reason words of each verdict. */
const char *
yk_verdict_reason(yk_verdict v)
{
    switch (v) {
    case YK_V_ACCEPTED:
        return "accepted";
    case YK_V_REPLAY:
        return "replay";
    case YK_V_RETRANSMISSION:
        return "retransmission";
    case YK_V_OLDER:
        return "older than the token's last use: an old OTP replayed, "
            "or a cloned key";
    case YK_V_BAD_OTP:
        return "bad CRC or key";
    case YK_V_UNKNOWN_TOKEN:
        return "unknown token";
    case YK_V_PENDING_TOKEN:
        return "pending token";
    case YK_V_DISABLED_TOKEN:
        return "disabled token";
    case YK_V_BAD_RECORD:
        return "malformed token record";
    case YK_V_WRONG_PASSWORD:
        return "wrong password";
    case YK_V_STALE_TIME:
        return "stale time";
    case YK_V_NONCE_MISMATCH:
        return "nonce mismatch";
    case YK_V_NOT_ARMORED:
        return "not armored";
    case YK_V_POLICY:
        return "policy";
    case YK_V_MALFORMED:
        return "malformed";
    case YK_V_DUPLICATE:
        return "duplicate padata";
    case YK_V_NOT_CONFIGURED:
        return "no token directory configured";
    case YK_V_BACKEND:
        return "backend";
    }
    return "unknown";
}

/* Format the attempt's log line; see verify.h. */
void
yk_verify_format_log(const char *principal, const yk_verify_out *out,
                     char *buf, size_t len)
{
    char counter[16] = "-";
    const char *verdict, *mode;

    if (out->has_counter)
        snprintf(counter, sizeof(counter), "%lu",
                 (unsigned long)out->counter);
    if (out->code == 0)
        verdict = "accepted";
    else if (out->code == KRB5KDC_ERR_DISCARD)
        verdict = "discarded";
    else
        verdict = "refused";
    if (out->mode == YK_MODE_2FA)
        mode = "2fa";
    else if (out->mode == YK_MODE_OTP)
        mode = "otp";
    else
        mode = "-";
    snprintf(buf, len, "principal=%s pubid=%s counter=%s mode=%s "
             "verdict=%s reason=%s%s%s",
             principal != NULL ? principal : "-",
             out->pubid[0] != '\0' ? out->pubid : "-", counter, mode,
             verdict, yk_verdict_reason(out->verdict),
             out->detail[0] != '\0' ? ": " : "", out->detail);
}
