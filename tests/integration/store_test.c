/* SPDX-License-Identifier: MIT */
/* store_test.c: drives shared/store against a real slapd (see store.sh). */

/*
 * Usage: store_test SCENARIO [ARGS]; the directory comes from the
 * environment store.sh sets (YK_TEST_URI, YK_TEST_BASE, YK_TEST_REALM,
 * YK_TEST_{KDC,ADMIN,HELPDESK,USER}_{DN,PW}, YK_TEST_LDAPI_URI,
 * YK_TEST_PEOPLE, YK_TEST_TIMEOUT_MS, YK_TEST_PROFILE, and optionally
 * YK_TEST_FILTER).  Each scenario prints "ok: ..."
 * per check and "FAIL: ..." per failure; the exit code is 0 only when
 * every check passed.  The "outage", "leftover" and "rival" scenarios
 * ask the shell to act on slapd: they print "ACTION stop|start|freeze|
 * thaw|leftover|rival N" and wait for a line on standard input.
 */

#include <config.h>

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "errors.h"
#include "postread.h"
#include "store.h"
#include "store_int.h"      /* the read handle, for lose_socket */

#define PUB_A "cccccccccccb"
#define PUB_B "cccccccccccd"
#define PUB_HIDDEN "ccccccccccce"
#define PUB_NONE "vvvvvvvvvvvv"
#define HANG_GUARD_SECONDS 120

static int failures;

static void check(int ok, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Count and print one check. */
static void
check(int ok, const char *fmt, ...)
{
    va_list ap;

    printf("%s", ok ? "ok: " : "FAIL: ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    if (!ok)
        failures++;
}

/* An environment variable that must be set. */
static const char *
env(const char *name)
{
    const char *v = getenv(name);

    if (v == NULL || *v == '\0') {
        fprintf(stderr, "store_test: %s is not set\n", name);
        exit(2);
    }
    return v;
}

/* Milliseconds on the monotonic clock. */
static long
now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A principal name in the test realm (static buffer per call site). */
static const char *
princ(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s@%s", name, env("YK_TEST_REALM"));
    return buf;
}

/* The name of an error code, for messages. */
static const char *
err_name(krb5_error_code code)
{
    return code == 0 ? "success" : yk_strerror(code);
}

/* A store bound as who: kdc, admin, helpdesk, user, anon or sasl
 * (EXTERNAL over ldapi).  base overrides YK_TEST_BASE when not NULL. */
static yk_store *
make_store(const char *who, const char *base)
{
    yk_store_config cfg;
    yk_store *st = NULL;
    char dnvar[64], pwvar[64], *upper, *p;
    const char *tmo = getenv("YK_TEST_TIMEOUT_MS");
    krb5_error_code ret;

    memset(&cfg, 0, sizeof(cfg));
    cfg.uri = (char *)env("YK_TEST_URI");
    cfg.base = (char *)(base != NULL ? base : env("YK_TEST_BASE"));
    cfg.timeout_ms = tmo != NULL ? atoi(tmo) : 0;
    cfg.filter = getenv("YK_TEST_FILTER");
    if (strcmp(who, "sasl") == 0) {
        cfg.uri = (char *)env("YK_TEST_LDAPI_URI");
        cfg.sasl_mech = "EXTERNAL";
    } else if (strcmp(who, "anon") != 0) {
        upper = strdup(who);
        if (upper == NULL)
            exit(2);
        for (p = upper; *p != '\0'; p++)
            *p = (char)(*p - 'a' + 'A');
        snprintf(dnvar, sizeof(dnvar), "YK_TEST_%s_DN", upper);
        snprintf(pwvar, sizeof(pwvar), "YK_TEST_%s_PW", upper);
        free(upper);
        cfg.bind_dn = (char *)env(dnvar);
        cfg.password = (char *)env(pwvar);
    }
    ret = yk_store_new(&cfg, &st);
    if (ret) {
        fprintf(stderr, "store_test: yk_store_new: %s\n", err_name(ret));
        exit(2);
    }
    return st;
}

/* Look name up; the entry or NULL, checking the expected code (a
 * success that was expected is not printed). */
static yk_entry *
lookup_expect(yk_store *st, const char *name, int fresh,
              krb5_error_code want, const char *who)
{
    yk_entry *e = NULL;
    krb5_error_code ret = yk_store_lookup(st, name, fresh, &e);

    /* Plain successful lookups are steps, not checks worth a line. */
    if (ret != want || want != 0)
        check(ret == want, "%s: lookup %s -> %s (want %s)%s%s", who, name,
              err_name(ret), err_name(want), ret ? ": " : "",
              ret ? yk_store_last_error(st) : "");
    if (ret != 0)
        return NULL;
    return e;
}

/* A secret record for pubid (caller frees the strings it did not set). */
static void
fill_secret(yk_secret_rec *sec, const char *pubid, const char *desc)
{
    memset(sec, 0, sizeof(*sec));
    snprintf(sec->pubid, sizeof(sec->pubid), "%s", pubid);
    sec->state = YK_TOKEN_ACTIVE;
    sec->serial = "4242";
    sec->enrolled_at = (int64_t)time(NULL);
    sec->enrolled_by = "ykadmin/admin@TEST";
    sec->description = (char *)desc;
    sec->wrapped = "ykw-test opaque wrapped secret";
}

/* A fresh initial state for pubid. */
static void
fill_state(yk_state_rec *s, const char *pubid)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->pubid, sizeof(s->pubid), "%s", pubid);
}

/* The next state a KDC would write after accepting counter ctr. */
static yk_state_rec
next_state(const yk_token *tok, uint32_t ctr, uint32_t nonce)
{
    yk_state_rec s = tok->state;

    s.counter = ctr;
    s.gen++;
    s.has_nonce = 1;
    s.nonce = nonce;
    s.last_use = (int64_t)time(NULL);
    return s;
}

/* Add tokens: the auxiliary class, uniqueness (ours and slapo-unique). */
static void
scenario_add(void)
{
    yk_store *adm = make_store("admin", NULL), *people = NULL;
    yk_entry *e = NULL;
    yk_token *tok;
    yk_secret_rec sec;
    yk_state_rec sta;
    char a[128], b[128], *who = NULL, *dn = NULL;
    krb5_error_code ret;

    e = lookup_expect(adm, princ(a, sizeof(a), "alice"), 0, 0, "admin");
    if (e != NULL) {
        check(e->ntokens == 0 && !e->has_policy &&
              e->policy == YK_POLICY_2FA, "alice starts without tokens");
        check(strcmp(e->principal, a) == 0, "entry principal %s",
              e->principal);
    }
    fill_secret(&sec, PUB_A, "alice's key (test) 100%");
    fill_state(&sta, PUB_A);
    ret = e ? yk_store_add_token(adm, e, &sec, &sta) : EINVAL;
    check(ret == 0, "add token %s to alice: %s", PUB_A, err_name(ret));
    yk_entry_free(e);

    e = lookup_expect(adm, a, 1, 0, "admin");
    tok = e ? yk_entry_find_token(e, PUB_A) : NULL;
    check(tok != NULL && e->ntokens == 1, "alice holds one token");
    if (tok != NULL) {
        check(tok->secret != NULL && !tok->malformed && tok->has_pubid &&
              tok->has_state && tok->nextra == 0, "token is well-formed");
        check(tok->secret != NULL &&
              strcmp(tok->secret->description, sec.description) == 0 &&
              strcmp(tok->secret->wrapped, sec.wrapped) == 0 &&
              tok->secret->state == YK_TOKEN_ACTIVE &&
              strcmp(tok->secret->serial, "4242") == 0,
              "secret record read back");
        check(tok->state.counter == 0 && tok->state.gen == 0 &&
              !tok->state.has_nonce, "initial state read back");
    }
    fill_secret(&sec, PUB_B, "second key");
    fill_state(&sta, PUB_B);
    ret = e ? yk_store_add_token(adm, e, &sec, &sta) : EINVAL;
    check(ret == 0, "add a second token %s to alice: %s", PUB_B,
          err_name(ret));
    yk_entry_free(e);

    e = lookup_expect(adm, princ(b, sizeof(b), "bob"), 0, 0, "admin");
    fill_secret(&sec, PUB_A, "stolen");
    fill_state(&sta, PUB_A);
    ret = e ? yk_store_add_token(adm, e, &sec, &sta) : EINVAL;
    check(ret == YK_ERR_STORE_EXISTS,
          "alice's public id on bob refused: %s", err_name(ret));

    ret = yk_store_find_pubid(adm, PUB_A, &who, &dn);
    check(ret == 0 && strcmp(who, a) == 0 &&
          strncasecmp(dn, "uid=alice,", 10) == 0,
          "find_pubid %s -> %s (%s)", PUB_A, who ? who : "-",
          dn ? dn : "-");
    free(who);
    free(dn);
    ret = yk_store_find_pubid(adm, PUB_NONE, NULL, NULL);
    check(ret == YK_ERR_TOKEN_UNKNOWN, "find_pubid of an unknown id: %s",
          err_name(ret));

    /* PUB_HIDDEN sits on an entry outside this store's base: our own
     * check cannot see it, slapo-unique refuses the modify. */
    people = make_store("admin", getenv("YK_TEST_PEOPLE"));
    fill_secret(&sec, PUB_HIDDEN, "duplicate");
    fill_state(&sta, PUB_HIDDEN);
    ret = e ? yk_store_add_token(people, e, &sec, &sta) : EINVAL;
    check(ret == YK_ERR_STORE_EXISTS &&
          strstr(yk_store_last_error(people), "onstraint") != NULL,
          "duplicate id refused by slapo-unique: %s (%s)", err_name(ret),
          yk_store_last_error(people));
    yk_entry_free(e);
    yk_store_free(people);
    yk_store_free(adm);
}

/* Compare-and-swap: success, then a stale swap loses. */
static void
scenario_cas(void)
{
    yk_store *kdc = make_store("kdc", NULL);
    yk_entry *e = NULL, *e2 = NULL;
    yk_token *tok, *t2;
    yk_state_rec ns;
    char a[128];
    krb5_error_code ret;

    e = lookup_expect(kdc, princ(a, sizeof(a), "alice"), 0, 0, "kdc");
    tok = e ? yk_entry_find_token(e, PUB_A) : NULL;
    check(tok != NULL && tok->secret != NULL, "the KDC reads the secret");
    if (tok == NULL)
        goto cleanup;
    ns = next_state(tok, 5, 0x1234abcd);
    ret = yk_store_cas_state(kdc, e, tok, &ns);
    check(ret == 0, "swap counter 0 -> 5: %s", err_name(ret));
    e2 = lookup_expect(kdc, a, 1, 0, "kdc");
    t2 = e2 ? yk_entry_find_token(e2, PUB_A) : NULL;
    check(t2 != NULL && t2->state.counter == 5 && t2->state.has_nonce &&
          t2->state.nonce == 0x1234abcd && t2->nextra == 0,
          "fresh read shows counter 5 and the nonce");
    ns = next_state(tok, 6, 0x55);
    ret = yk_store_cas_state(kdc, e, tok, &ns);
    check(ret == YK_ERR_STORE_CONFLICT, "swap from the stale value: %s",
          err_name(ret));
    yk_entry_free(e2);
    e2 = lookup_expect(kdc, a, 1, 0, "kdc");
    t2 = e2 ? yk_entry_find_token(e2, PUB_A) : NULL;
    check(t2 != NULL && t2->state.counter == 5 && t2->nextra == 0,
          "the lost swap changed nothing");

cleanup:
    yk_entry_free(e);
    yk_entry_free(e2);
    yk_store_free(kdc);
}

/* One child of a race: connect, wait for the start signal, swap. */
static void
race_child(yk_store *st, const yk_entry *e, const yk_token *tok,
           uint32_t ctr, uint32_t nonce, int ready_fd, int go_fd)
{
    yk_entry *warm = NULL;
    yk_state_rec ns;
    krb5_error_code ret;
    char c = 'r';

    /* Open (and bind) the connections before the start line. */
    ret = yk_store_lookup(st, e->principal, 1, &warm);
    yk_entry_free(warm);
    if (ret)
        _exit(3);
    if (write(ready_fd, &c, 1) != 1)
        _exit(3);
    if (read(go_fd, &c, 1) < 0)
        _exit(3);
    ns = next_state(tok, ctr, nonce);
    ret = yk_store_cas_state(st, e, tok, &ns);
    _exit(ret == 0 ? 0 : ret == YK_ERR_STORE_CONFLICT ? 1 : 2);
}

/* Two connections (two processes) swap from the same value at the same
 * moment, rounds times: exactly one wins each time.  One child uses a
 * store inherited from the parent (connected before fork). */
static void
scenario_race(int rounds)
{
    yk_store *parent = make_store("kdc", NULL), *other = NULL;
    yk_entry *e = NULL, *after = NULL;
    yk_token *tok, *t2;
    char a[128], c;
    int r, i, ready[2], go[2], status, wins, conflicts, errors, winner;
    pid_t pids[2];
    long t0 = now_ms();

    princ(a, sizeof(a), "alice");
    for (r = 0; r < rounds; r++) {
        e = lookup_expect(parent, a, 1, 0, "kdc");
        tok = e ? yk_entry_find_token(e, PUB_A) : NULL;
        if (tok == NULL) {
            check(0, "race: no token");
            break;
        }
        other = make_store("kdc", NULL);
        if (pipe(ready) != 0 || pipe(go) != 0) {
            check(0, "pipe: %s", strerror(errno));
            break;
        }
        fflush(stdout);
        for (i = 0; i < 2; i++) {
            pids[i] = fork();
            if (pids[i] == 0) {
                close(ready[0]);
                close(go[1]);
                race_child(i == 0 ? parent : other, e, tok,
                           tok->state.counter + 1 + i, 0xa000 + i,
                           ready[1], go[0]);
            }
        }
        close(ready[1]);
        close(go[0]);
        for (i = 0; i < 2; i++) {
            if (read(ready[0], &c, 1) != 1)
                break;
        }
        close(go[1]);           /* both children start now */
        close(ready[0]);
        wins = conflicts = errors = 0;
        winner = -1;
        for (i = 0; i < 2; i++) {
            if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status)) {
                errors++;
                continue;
            }
            if (WEXITSTATUS(status) == 0) {
                wins++;
                winner = i;
            } else if (WEXITSTATUS(status) == 1) {
                conflicts++;
            } else {
                errors++;
            }
        }
        after = lookup_expect(parent, a, 1, 0, "kdc");
        t2 = after ? yk_entry_find_token(after, PUB_A) : NULL;
        if (wins != 1 || conflicts != 1 || errors != 0 || t2 == NULL ||
            t2->nextra != 0 || t2->state.nonce != (uint32_t)(0xa000 + winner))
            check(0, "race round %d: %d won, %d lost, %d errors", r + 1,
                  wins, conflicts, errors);
        yk_entry_free(after);
        yk_entry_free(e);
        yk_store_free(other);
        e = NULL;
        other = NULL;
    }
    check(failures == 0, "%d rounds of two simultaneous swaps from one "
          "value: exactly one won each time (%ld ms)", rounds,
          now_ms() - t0);
    /* The parent's own connection survived its children. */
    after = lookup_expect(parent, a, 0, 0, "kdc after fork");
    yk_entry_free(after);
    yk_entry_free(e);
    yk_store_free(other);
    yk_store_free(parent);
}

/* Several state values (seeded by store.sh): the highest counter wins,
 * the next swap removes the others; malformed values are flagged. */
static void
scenario_extras(void)
{
    yk_store *kdc = make_store("kdc", NULL), *adm = make_store("admin", NULL);
    yk_entry *e = NULL;
    yk_token *tok, *tb;
    yk_state_rec ns;
    char a[128];
    krb5_error_code ret;

    e = lookup_expect(kdc, princ(a, sizeof(a), "alice"), 1, 0, "kdc");
    tok = e ? yk_entry_find_token(e, PUB_A) : NULL;
    check(tok != NULL && tok->has_state && tok->state.counter == 999999 &&
          tok->nextra == 2 && !tok->malformed,
          "three state values: counter 999999 wins, 2 extras (%u, %zu)",
          tok ? tok->state.counter : 0, tok ? tok->nextra : 0);
    tb = e ? yk_entry_find_token(e, PUB_B) : NULL;
    check(tb != NULL && tb->malformed && tb->malformed_reason != NULL &&
          tb->nextra == 1, "a state value that does not parse makes "
          "its token unusable (%s)",
          tb && tb->malformed_reason ? tb->malformed_reason : "-");
    check(e != NULL && e->nmalformed == 1,
          "a value naming no token is counted (%zu)",
          e ? e->nmalformed : 0);
    if (tok != NULL) {
        ns = next_state(tok, 1000000, 0x77);
        ret = yk_store_cas_state(kdc, e, tok, &ns);
        check(ret == 0, "swap from the winner removing the extras: %s",
              err_name(ret));
    }
    yk_entry_free(e);
    e = lookup_expect(kdc, a, 1, 0, "kdc");
    tok = e ? yk_entry_find_token(e, PUB_A) : NULL;
    check(tok != NULL && tok->state.counter == 1000000 && tok->nextra == 0,
          "one state value left, counter 1000000");
    yk_entry_free(e);

    /* An administrator's rewrite removes the malformed value. */
    e = lookup_expect(adm, a, 1, 0, "admin");
    tb = e ? yk_entry_find_token(e, PUB_B) : NULL;
    ret = tb && tb->secret ? yk_store_update_token(adm, e, tb, tb->secret,
                                                   NULL) : EINVAL;
    check(ret == 0, "admin rewrite of %s: %s", PUB_B, err_name(ret));
    yk_entry_free(e);
    e = lookup_expect(kdc, a, 1, 0, "kdc");
    tb = e ? yk_entry_find_token(e, PUB_B) : NULL;
    check(tb != NULL && !tb->malformed && tb->nextra == 0,
          "the rewrite removed the malformed value");
    yk_entry_free(e);
    yk_store_free(kdc);
    yk_store_free(adm);
}

/* Administrative writes rewrite the state: a KDC's cached value loses. */
static void
scenario_admin(void)
{
    yk_store *kdc = make_store("kdc", NULL), *adm = make_store("admin", NULL);
    yk_entry *ek = NULL, *ea = NULL, *e2 = NULL;
    yk_token *tk, *ta, *t2;
    yk_secret_rec *sec = NULL;
    yk_state_rec ns;
    uint32_t ctr = 0;
    uint64_t gen = 0, gen_b = 0;
    char a[128], *who = NULL;
    krb5_error_code ret;

    princ(a, sizeof(a), "alice");
    ek = lookup_expect(kdc, a, 0, 0, "kdc");
    tk = ek ? yk_entry_find_token(ek, PUB_A) : NULL;
    ea = lookup_expect(adm, a, 1, 0, "admin");
    ta = ea ? yk_entry_find_token(ea, PUB_A) : NULL;
    if (tk == NULL || ta == NULL || ta->secret == NULL) {
        check(0, "admin: token %s missing", PUB_A);
        goto cleanup;
    }
    ctr = ta->state.counter;
    gen = ta->state.gen;
    ret = yk_secret_rec_copy(ta->secret, &sec);
    if (ret == 0) {
        sec->state = YK_TOKEN_DISABLED;
        ret = yk_store_update_token(adm, ea, ta, sec, NULL);
    }
    check(ret == 0, "admin disables %s: %s", PUB_A, err_name(ret));
    ns = next_state(tk, tk->state.counter + 1, 0x99);
    ret = yk_store_cas_state(kdc, ek, tk, &ns);
    check(ret == YK_ERR_STORE_CONFLICT,
          "a KDC swapping from its cached value loses: %s", err_name(ret));
    e2 = lookup_expect(kdc, a, 1, 0, "kdc");
    t2 = e2 ? yk_entry_find_token(e2, PUB_A) : NULL;
    check(t2 != NULL && t2->secret != NULL &&
          t2->secret->state == YK_TOKEN_DISABLED &&
          t2->state.counter == ctr && t2->state.gen == gen + 1 &&
          !t2->state.has_nonce,
          "re-read: disabled, counter kept, gen + 1, no nonce");

    /* Enable again, then the policy. */
    yk_entry_free(ea);
    ea = lookup_expect(adm, a, 1, 0, "admin");
    ta = ea ? yk_entry_find_token(ea, PUB_A) : NULL;
    sec->state = YK_TOKEN_ACTIVE;
    ret = ta ? yk_store_update_token(adm, ea, ta, sec, NULL) : EINVAL;
    check(ret == 0, "admin enables %s: %s", PUB_A, err_name(ret));
    yk_entry_free(ea);
    ea = lookup_expect(adm, a, 1, 0, "admin");
    ta = ea ? yk_entry_find_token(ea, PUB_A) : NULL;
    t2 = ea ? yk_entry_find_token(ea, PUB_B) : NULL;
    gen = ta ? ta->state.gen : 0;
    gen_b = t2 ? t2->state.gen : 0;
    yk_entry_free(ek);
    ek = lookup_expect(kdc, a, 1, 0, "kdc");
    tk = ek ? yk_entry_find_token(ek, PUB_A) : NULL;
    ret = ea ? yk_store_set_policy(adm, ea, YK_POLICY_OTP) : EINVAL;
    check(ret == 0, "set policy otp: %s", err_name(ret));
    if (tk != NULL) {
        ns = next_state(tk, tk->state.counter + 1, 0x98);
        ret = yk_store_cas_state(kdc, ek, tk, &ns);
        check(ret == YK_ERR_STORE_CONFLICT,
              "after set_policy a cached swap loses: %s", err_name(ret));
    }
    yk_entry_free(e2);
    e2 = lookup_expect(kdc, a, 1, 0, "kdc");
    ta = e2 ? yk_entry_find_token(e2, PUB_A) : NULL;
    t2 = e2 ? yk_entry_find_token(e2, PUB_B) : NULL;
    check(e2 != NULL && e2->has_policy && e2->policy == YK_POLICY_OTP &&
          ta != NULL && ta->state.gen == gen + 1 && t2 != NULL &&
          t2->state.gen == gen_b + 1,
          "policy otp; every token's state rewritten (gen + 1)");
    yk_entry_free(ea);
    ea = lookup_expect(adm, a, 1, 0, "admin");
    ret = ea ? yk_store_set_policy(adm, ea, YK_POLICY_2FA) : EINVAL;
    check(ret == 0, "set policy back to 2fa: %s", err_name(ret));

    /* Delete the second token. */
    yk_entry_free(ea);
    ea = lookup_expect(adm, a, 1, 0, "admin");
    t2 = ea ? yk_entry_find_token(ea, PUB_B) : NULL;
    ret = t2 ? yk_store_delete_token(adm, ea, t2) : EINVAL;
    check(ret == 0, "delete %s: %s", PUB_B, err_name(ret));
    yk_entry_free(e2);
    e2 = lookup_expect(kdc, a, 1, 0, "kdc");
    check(e2 != NULL && e2->ntokens == 1 && e2->policy == YK_POLICY_2FA &&
          yk_entry_find_token(e2, PUB_B) == NULL,
          "alice holds one token again, policy 2fa");
    ret = yk_store_find_pubid(adm, PUB_B, &who, NULL);
    check(ret == YK_ERR_TOKEN_UNKNOWN, "deleted id is unknown: %s",
          err_name(ret));
    free(who);

cleanup:
    yk_secret_rec_free(sec);
    yk_entry_free(ek);
    yk_entry_free(ea);
    yk_entry_free(e2);
    yk_store_free(kdc);
    yk_store_free(adm);
}

/* Not found, ambiguous, and filter values that must be escaped. */
static void
scenario_lookups(void)
{
    yk_store *kdc = make_store("kdc", NULL);
    yk_entry *e;
    char n[128];

    e = lookup_expect(kdc, princ(n, sizeof(n), "nobody"), 0,
                      YK_ERR_STORE_NOT_FOUND, "kdc");
    yk_entry_free(e);
    e = lookup_expect(kdc, princ(n, sizeof(n), "dup"), 0,
                      YK_ERR_STORE_AMBIGUOUS, "kdc");
    yk_entry_free(e);
    e = lookup_expect(kdc, princ(n, sizeof(n), "we*ird(x)\\"), 0, 0, "kdc");
    check(e != NULL && strncasecmp(e->dn, "uid=weird,", 10) == 0,
          "the name with *()\\ matched exactly its own entry (%s)",
          e ? e->dn : "-");
    yk_entry_free(e);
    e = lookup_expect(kdc, "*", 0, YK_ERR_STORE_NOT_FOUND, "kdc");
    yk_entry_free(e);
    e = lookup_expect(kdc, "*)(krbPrincipalName=*", 0,
                      YK_ERR_STORE_NOT_FOUND, "kdc");
    yk_entry_free(e);
    e = lookup_expect(kdc, princ(n, sizeof(n), "we*"), 0,
                      YK_ERR_STORE_NOT_FOUND, "kdc");
    yk_entry_free(e);
    yk_store_free(kdc);
}

/* What each identity may do through the store. */
static void
scenario_acl(void)
{
    yk_store *kdc = make_store("kdc", NULL), *help = make_store("helpdesk",
                                                                NULL);
    yk_store *user = make_store("user", NULL), *anon = make_store("anon",
                                                                  NULL);
    yk_entry *e = NULL, *eb = NULL;
    yk_token *tok;
    yk_secret_rec sec;
    yk_state_rec sta, ns;
    char a[128], b[128];
    krb5_error_code ret;

    princ(a, sizeof(a), "alice");
    e = lookup_expect(kdc, a, 0, 0, "kdc");
    tok = e ? yk_entry_find_token(e, PUB_A) : NULL;
    check(tok != NULL && tok->secret != NULL && tok->has_state,
          "kdc reads secret and state");
    ret = tok && tok->secret ? yk_store_update_token(kdc, e, tok,
                                                     tok->secret, NULL) :
        EINVAL;
    check(ret == YK_ERR_STORE_ACCESS, "kdc cannot write the secret: %s",
          err_name(ret));
    ret = e ? yk_store_set_policy(kdc, e, YK_POLICY_OTP) : EINVAL;
    check(ret == YK_ERR_STORE_ACCESS, "kdc cannot set the policy: %s",
          err_name(ret));
    eb = lookup_expect(kdc, princ(b, sizeof(b), "bob"), 0, 0, "kdc");
    fill_secret(&sec, PUB_NONE, "by the kdc");
    fill_state(&sta, PUB_NONE);
    ret = eb ? yk_store_add_token(kdc, eb, &sec, &sta) : EINVAL;
    check(ret == YK_ERR_STORE_ACCESS, "kdc cannot enrol a token: %s",
          err_name(ret));
    yk_entry_free(e);
    yk_entry_free(eb);

    e = lookup_expect(help, a, 0, 0, "helpdesk");
    tok = e ? yk_entry_find_token(e, PUB_A) : NULL;
    check(tok != NULL && tok->secret == NULL && tok->secret_raw == NULL &&
          tok->has_state && tok->has_pubid,
          "helpdesk sees public id and state, not the secret");
    if (tok != NULL) {
        ns = next_state(tok, tok->state.counter + 1, 1);
        ret = yk_store_cas_state(help, e, tok, &ns);
        check(ret == YK_ERR_STORE_ACCESS, "helpdesk cannot swap: %s",
              err_name(ret));
    }
    yk_entry_free(e);

    e = lookup_expect(user, a, 0, 0, "user");
    check(e != NULL && e->ntokens == 0 && !e->has_policy,
          "an ordinary user sees no token attribute");
    yk_entry_free(e);
    e = lookup_expect(anon, a, 0, 0, "anonymous");
    check(e != NULL && e->ntokens == 0, "anonymous sees no token attribute");
    yk_entry_free(e);
    yk_store_free(kdc);
    yk_store_free(help);
    yk_store_free(user);
    yk_store_free(anon);
}

/* SASL EXTERNAL over ldapi://, mapped to the KDC's DN by slapd. */
static void
scenario_sasl(void)
{
    yk_store *st = make_store("sasl", NULL);
    yk_entry *e;
    yk_token *tok;
    char a[128];

    e = lookup_expect(st, princ(a, sizeof(a), "alice"), 0, 0, "sasl");
    tok = e ? yk_entry_find_token(e, PUB_A) : NULL;
    check(tok != NULL && tok->secret != NULL,
          "EXTERNAL bind over ldapi:// acts as the KDC (reads the secret)");
    yk_entry_free(e);
    yk_store_free(st);
}

/* yk_config_load: explicit settings, kldap defaults, refusals. */
static void
scenario_config(void)
{
    profile_t profile = NULL;
    const char *path = env("YK_TEST_PROFILE");
    const char *files[2] = { path, NULL };
    yk_config cfg;
    yk_store *st = NULL;
    yk_entry *e;
    char n[128];
    krb5_error_code ret;

    ret = profile_init(files, &profile);
    if (ret) {
        check(0, "profile_init %s: %ld", path, (long)ret);
        return;
    }
    memset(&cfg, 0, sizeof(cfg));
    ret = yk_config_load(profile, env("YK_TEST_REALM"), &cfg);
    check(ret == 0, "load [realms] %s: %s", env("YK_TEST_REALM"),
          err_name(ret));
    if (ret == 0) {
        check(strcmp(cfg.store.uri, env("YK_TEST_URI")) == 0 &&
              strcmp(cfg.store.write_uri, env("YK_TEST_URI")) == 0 &&
              strcmp(cfg.store.bind_dn, env("YK_TEST_KDC_DN")) == 0 &&
              strcmp(cfg.store.base, env("YK_TEST_BASE")) == 0 &&
              strcmp(cfg.store.filter, YK_DEFAULT_FILTER) == 0 &&
              cfg.store.kldap_realm_dn == NULL,
              "explicit LDAP settings read");
        check(cfg.store.password != NULL &&
              strcmp(cfg.store.password, env("YK_TEST_KDC_PW")) == 0,
              "password picked from the DN#{HEX} stash by bind DN");
        check(cfg.store.timeout_ms == 250 && cfg.cache_ttl == 7 &&
              cfg.breaker_seconds == 3 && cfg.require_fast == 1,
              "timeout 0.25 s = %d ms, ttl %d, breaker %d, fast %d",
              cfg.store.timeout_ms, cfg.cache_ttl, cfg.breaker_seconds,
              cfg.require_fast);
        check(strcmp(cfg.indicator, YK_DEFAULT_INDICATOR) == 0 &&
              strcmp(cfg.indicator_2fa, "custom-2fa") == 0 &&
              strcmp(cfg.master_key_file, "/nonexistent/keyring") == 0,
              "indicators and master key file");
        ret = yk_store_new(&cfg.store, &st);
        e = ret ? NULL : lookup_expect(st, princ(n, sizeof(n), "alice"), 0,
                                       0, "configured store");
        check(e != NULL && e->ntokens == 1 && e->tokens[0].secret != NULL,
              "the configured store binds as the KDC");
        yk_entry_free(e);
        yk_store_free(st);
        st = NULL;
        yk_config_clear(&cfg);
    }

    /* Defaults from the kldap database module. */
    ret = yk_config_load(profile, "KLDAP.TEST", &cfg);
    check(ret == 0, "load the kldap realm: %s", err_name(ret));
    if (ret == 0) {
        check(strcmp(cfg.store.uri, env("YK_TEST_URI")) == 0 &&
              cfg.store.write_uri == NULL &&
              strcmp(cfg.store.bind_dn, env("YK_TEST_KDC_DN")) == 0 &&
              cfg.store.password != NULL &&
              strcmp(cfg.store.password, env("YK_TEST_KDC_PW")) == 0 &&
              cfg.store.kldap_realm_dn != NULL &&
              strncmp(cfg.store.kldap_realm_dn, "cn=KLDAP.TEST,cn=krbC",
                      21) == 0 && cfg.store.timeout_ms == 500 &&
              cfg.cache_ttl == 5 && cfg.breaker_seconds == 10 &&
              cfg.require_fast == 0,
              "kldap defaults: ldap_servers, ldap_kdc_dn, stash, realm "
              "container %s", cfg.store.kldap_realm_dn ?
              cfg.store.kldap_realm_dn : "-");
        ret = yk_store_new(&cfg.store, &st);
        e = ret ? NULL : lookup_expect(st, "kalice@KLDAP.TEST", 0, 0,
                                       "kldap store");
        check(e != NULL && strncasecmp(e->dn, "krbPrincipalName=kalice",
                                       23) == 0,
              "a principal in the realm container is found");
        yk_entry_free(e);
        e = ret ? NULL : lookup_expect(st, princ(n, sizeof(n), "alice"), 0,
                                       0, "kldap store");
        check(e != NULL, "a principal in the realm's subtree is found");
        yk_entry_free(e);
        e = ret ? NULL : lookup_expect(st, princ(n, sizeof(n), "hidden"), 0,
                                       YK_ERR_STORE_NOT_FOUND,
                                       "kldap store");
        yk_entry_free(e);
        yk_store_free(st);
        yk_config_clear(&cfg);
    }

    ret = yk_config_load(profile, "BADTIME.TEST", &cfg);
    check(ret == YK_ERR_CONFIG, "timeout 0.0 refused: %s", err_name(ret));
    ret = yk_config_load(profile, "BADTIME2.TEST", &cfg);
    check(ret == YK_ERR_CONFIG, "timeout -1 refused: %s", err_name(ret));
    ret = yk_config_load(profile, "NOSTASH.TEST", &cfg);
    check(ret == YK_ERR_CONFIG, "a stash without the bind DN refused: %s",
          err_name(ret));
    ret = yk_config_load(profile, "PLAIN.TEST", &cfg);
    check(ret == 0 && cfg.store.password != NULL &&
          strcmp(cfg.store.password, "plain pass") == 0 &&
          cfg.store.timeout_ms == 1500 && cfg.store.uri == NULL,
          "plain password file (first line), timeout 1.5: %s",
          err_name(ret));
    if (ret == 0)
        yk_config_clear(&cfg);
    profile_abandon(profile);
}

/* A write server that refuses writes (readonly, or a replica): every
 * write says so, reads still work. */
static void
scenario_readonly(void)
{
    yk_store *kdc = make_store("kdc", NULL), *adm = make_store("admin", NULL);
    yk_entry *e = NULL;
    yk_token *tok;
    yk_state_rec ns;
    char a[128];
    krb5_error_code ret = EINVAL;

    e = lookup_expect(kdc, princ(a, sizeof(a), "alice"), 1, 0, "kdc");
    tok = e ? yk_entry_find_token(e, PUB_A) : NULL;
    if (tok != NULL) {
        ns = next_state(tok, tok->state.counter + 1, 0x44);
        ret = yk_store_cas_state(kdc, e, tok, &ns);
    }
    check(ret == YK_ERR_STORE_READONLY, "swap on a read-only server: %s (%s)",
          err_name(ret), yk_store_last_error(kdc));
    ret = e ? yk_store_set_policy(adm, e, YK_POLICY_OTP) : EINVAL;
    check(ret == YK_ERR_STORE_READONLY, "admin write on a read-only server: "
          "%s", err_name(ret));
    yk_entry_free(e);
    yk_store_free(kdc);
    yk_store_free(adm);
}

/* Ask store.sh to do something to slapd and wait until it is done. */
static void
pause_for(const char *action)
{
    char line[64];

    printf("ACTION %s\n", action);
    fflush(stdout);
    if (fgets(line, sizeof(line), stdin) == NULL) {
        fprintf(stderr, "store_test: no answer to ACTION %s\n", action);
        exit(2);
    }
}

/* A swap from a record read before another value of the token came in
 * (what delta-syncrepl brings after a conflict; store.sh adds it when
 * asked).  rival 0: a lower value; the swap stands and removes it (seen
 * in its post-read).  rival 1: a value of the same counter, another
 * provider's acceptance; the modify lands, its post-read shows the
 * rival: YK_ERR_STORE_RIVAL (REPLAY); a swap from a fresh read then
 * removes both.  Either way one value is left. */
static void
scenario_beside(int rival)
{
    yk_store *kdc = make_store("kdc", NULL);
    yk_entry *e = NULL, *e2 = NULL;
    yk_token *tok, *t2;
    yk_state_rec ns;
    uint32_t ctr;
    char a[128], action[64];
    krb5_error_code ret;

    e = lookup_expect(kdc, princ(a, sizeof(a), "alice"), 1, 0, "kdc");
    tok = e ? yk_entry_find_token(e, PUB_A) : NULL;
    check(tok != NULL && tok->has_state && tok->nextra == 0,
          "one state value read");
    if (tok == NULL)
        goto cleanup;
    /* The leftover's counter is 7; the rival's ours. */
    ctr = rival || tok->state.counter > 7 ? tok->state.counter + 1 : 8;
    if (rival)
        snprintf(action, sizeof(action), "rival %u", (unsigned)ctr);
    else
        snprintf(action, sizeof(action), "leftover");
    pause_for(action);
    ns = next_state(tok, ctr, 0x99);
    ret = yk_store_cas_state(kdc, e, tok, &ns);
    if (rival)
        check(ret == YK_ERR_STORE_RIVAL &&
              yk_store_last_rival(kdc) == YK_RIVAL_REPLAY,
              "swap to %u beside another value of that counter: %s, rival "
              "%d (%s)", (unsigned)ctr, err_name(ret),
              yk_store_last_rival(kdc), yk_store_last_error(kdc));
    else
        check(ret == 0 && yk_store_last_rival(kdc) == YK_RIVAL_NONE &&
              yk_store_last_leftovers(kdc) == 1,
              "swap to %u beside a lower value it did not read: %s, %zu "
              "leftover(s) removed", (unsigned)ctr, err_name(ret),
              yk_store_last_leftovers(kdc));
    e2 = lookup_expect(kdc, a, 1, 0, "kdc");
    t2 = e2 ? yk_entry_find_token(e2, PUB_A) : NULL;
    if (rival && t2 != NULL) {
        check(t2->state.counter == ctr && t2->nextra == 1,
              "a fresh read shows both values of counter %u",
              (unsigned)ctr);
        ns = next_state(t2, ++ctr, 0x9a);
        ret = yk_store_cas_state(kdc, e2, t2, &ns);
        check(ret == 0, "swap from the fresh read to %u: %s",
              (unsigned)ctr, err_name(ret));
        yk_entry_free(e2);
        e2 = lookup_expect(kdc, a, 1, 0, "kdc");
        t2 = e2 ? yk_entry_find_token(e2, PUB_A) : NULL;
    }
    check(t2 != NULL && t2->state.counter == ctr && t2->nextra == 0,
          "a fresh read shows counter %u alone", (unsigned)ctr);

cleanup:
    yk_entry_free(e);
    yk_entry_free(e2);
    yk_store_free(kdc);
}

/* Time one lookup; check its code; return the milliseconds. */
static long
timed_lookup(yk_store *st, const char *name, int fresh,
             krb5_error_code want, const char *what)
{
    yk_entry *e = NULL;
    long t0 = now_ms(), dt;
    krb5_error_code ret = yk_store_lookup(st, name, fresh, &e);

    dt = now_ms() - t0;
    check(ret == want, "%s: lookup -> %s in %ld ms (want %s)", what,
          err_name(ret), dt, err_name(want));
    yk_entry_free(e);
    return dt;
}

/* Time one swap of alice's token from entry e; return the milliseconds. */
static long
timed_swap(yk_store *st, const yk_entry *e, krb5_error_code want,
           const char *what)
{
    const yk_token *tok = e ? yk_entry_find_token(e, PUB_A) : NULL;
    yk_state_rec ns;
    long t0 = now_ms(), dt;
    krb5_error_code ret = EINVAL;

    if (tok != NULL) {
        ns = next_state(tok, tok->state.counter + 1, 0x42);
        ret = yk_store_cas_state(st, e, tok, &ns);
    }
    dt = now_ms() - t0;
    check(ret == want, "%s: swap -> %s in %ld ms (want %s)", what,
          err_name(ret), dt, err_name(want));
    return dt;
}

/* With slapd stopped, have libldap itself notice the closed connection
 * of st's read handle and close its socket, behind the store's back (an
 * operation sent on the handle directly): what a result read for another
 * attempt can do.  Whether the handle has no socket left. */
static int
lose_socket(yk_store *st)
{
    struct sigaction ign, old;
    struct timeval tv = { 5, 0 };
    LDAPMessage *res = NULL;
    ber_socket_t fd = -1;
    int msgid, i;

    memset(&ign, 0, sizeof(ign));
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old);
    /* The first request may still be written before the reset. */
    for (i = 0; i < 3; i++) {
        if (ldap_search_ext(st->rd.ld, "", LDAP_SCOPE_BASE, "(objectClass=*)",
                            NULL, 0, NULL, NULL, &tv, 1, &msgid) !=
            LDAP_SUCCESS)
            continue;
        if (ldap_result(st->rd.ld, msgid, LDAP_MSG_ALL, &tv, &res) > 0)
            ldap_msgfree(res);
        else    /* the request's reference goes: the dead one is freed */
            ldap_abandon_ext(st->rd.ld, msgid, NULL, NULL);
        res = NULL;
        fd = -1;
        if (ldap_get_option(st->rd.ld, LDAP_OPT_DESC, &fd) !=
            LDAP_OPT_SUCCESS || fd < 0)
            break;
    }
    sigaction(SIGPIPE, &old, NULL);
    return fd < 0;
}

/* A stopped slapd: UNAVAILABLE at once, then the same store works again
 * after a restart; a frozen slapd: TIMEOUT within twice the timeout. */
static void
scenario_outage(void)
{
    yk_store *kdc = make_store("kdc", NULL);
    yk_entry *e = NULL, *after = NULL;
    const yk_token *t0;
    yk_state_rec ns;
    krb5_error_code ret;
    int i;
    char a[128];
    const char *tmo = getenv("YK_TEST_TIMEOUT_MS");
    long limit = 2 * (tmo != NULL ? atol(tmo) : YK_DEFAULT_TIMEOUT_MS);
    long dt;

    princ(a, sizeof(a), "alice");
    timed_lookup(kdc, a, 0, 0, "slapd up");
    e = lookup_expect(kdc, a, 1, 0, "kdc");

    pause_for("stop");
    dt = timed_lookup(kdc, a, 0, YK_ERR_STORE_UNAVAILABLE, "slapd stopped");
    check(dt < limit / 2, "timing: stopped slapd noticed in %ld ms", dt);
    dt = timed_swap(kdc, e, YK_ERR_STORE_UNAVAILABLE, "slapd stopped");
    check(dt < limit / 2, "timing: swap to a stopped slapd failed in %ld ms",
          dt);

    pause_for("start");
    timed_lookup(kdc, a, 0, 0, "slapd restarted, same store");
    yk_entry_free(e);
    e = lookup_expect(kdc, a, 1, 0, "kdc");
    timed_swap(kdc, e, 0, "slapd restarted, same store");
    yk_entry_free(e);
    e = lookup_expect(kdc, a, 1, 0, "kdc");

    /* A handle libldap closed by itself is dropped and bound again: used
     * as it is, libldap would reconnect it without the bind (anonymous,
     * which sees no token). */
    pause_for("stop");
    check(lose_socket(kdc), "slapd stopped: libldap closed the store's "
          "read socket on its own");
    pause_for("start");
    after = lookup_expect(kdc, a, 0, 0, "kdc after libldap closed it");
    check(after != NULL && yk_entry_find_token(after, PUB_A) != NULL,
          "slapd restarted: the handle libldap closed is bound again (the "
          "token is seen: not an anonymous reconnection)");
    yk_entry_free(after);
    after = NULL;

    pause_for("freeze");
    dt = timed_lookup(kdc, a, 0, YK_ERR_STORE_TIMEOUT,
                      "slapd frozen (open connection)");
    check(dt <= limit, "timing: frozen slapd, open connection: %ld ms "
          "(limit %ld)", dt, limit);
    dt = timed_lookup(kdc, a, 0, YK_ERR_STORE_TIMEOUT,
                      "slapd frozen (new connection: bind)");
    check(dt <= limit, "timing: frozen slapd, reconnect and bind: %ld ms "
          "(limit %ld)", dt, limit);
    dt = timed_swap(kdc, e, YK_ERR_STORE_TIMEOUT, "slapd frozen");
    check(dt <= limit, "timing: frozen slapd, swap: %ld ms (limit %ld)", dt,
          limit);

    pause_for("thaw");
    timed_lookup(kdc, a, 0, 0, "slapd thawed, same store");
    /* The swap that timed out sits in the thawed slapd's queue and may
     * land at any moment (its writer never retries it blindly): swap
     * from a fresh read, and after a lost race read again, as the KDC
     * does. */
    for (i = 1; i <= 10; i++) {
        after = lookup_expect(kdc, a, 1, 0, "kdc");
        t0 = after ? yk_entry_find_token(after, PUB_A) : NULL;
        ret = EINVAL;
        if (t0 != NULL) {
            ns = next_state(t0, t0->state.counter + 1, 0x43);
            ret = yk_store_cas_state(kdc, after, t0, &ns);
        }
        yk_entry_free(after);
        if (ret != YK_ERR_STORE_CONFLICT)
            break;
        usleep(50000);
    }
    check(ret == 0, "slapd thawed, same store: swap from a fresh read -> "
          "%s (attempt %d)", err_name(ret), i);
    yk_entry_free(e);
    yk_store_free(kdc);
}

int
main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";

    /* A hung call must fail the test, not stall the suite. */
    alarm(HANG_GUARD_SECONDS);
    /* SIGPIPE stays fatal, as in krb5kdc: the store must guard itself. */
    if (strcmp(what, "add") == 0)
        scenario_add();
    else if (strcmp(what, "cas") == 0)
        scenario_cas();
    else if (strcmp(what, "race") == 0)
        scenario_race(argc > 2 ? atoi(argv[2]) : 20);
    else if (strcmp(what, "extras") == 0)
        scenario_extras();
    else if (strcmp(what, "admin") == 0)
        scenario_admin();
    else if (strcmp(what, "lookups") == 0)
        scenario_lookups();
    else if (strcmp(what, "acl") == 0)
        scenario_acl();
    else if (strcmp(what, "sasl") == 0)
        scenario_sasl();
    else if (strcmp(what, "config") == 0)
        scenario_config();
    else if (strcmp(what, "outage") == 0)
        scenario_outage();
    else if (strcmp(what, "readonly") == 0)
        scenario_readonly();
    else if (strcmp(what, "leftover") == 0)
        scenario_beside(0);
    else if (strcmp(what, "rival") == 0)
        scenario_beside(1);
    else {
        fprintf(stderr, "usage: store_test add|cas|race [N]|extras|admin|"
                "lookups|acl|sasl|config|outage|readonly|leftover|rival\n");
        return 2;
    }
    return failures == 0 ? 0 : 1;
}
