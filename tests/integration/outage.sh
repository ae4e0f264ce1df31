#!/bin/bash
# SPDX-License-Identifier: MIT
# outage.sh: the KDC module when its token directory or keyring fails.
#
# A DB2 realm whose token directory is a slapd of its own, over TCP
# (realm.sh, lib.sh).  slapd stopped: an OTP login is DISCARDed (no reply,
# no failure counted), a password-only login works, the KDC stays up, and
# once slapd is back the next OTP login works without a KDC restart.
# slapd frozen (SIGSTOP): a password login and a kvno still succeed within
# 2 s, OTP logins fail fast once the circuit breaker is open, and work
# again after SIGCONT.  A read-only write server (a second slapd, "readonly
# on", named by yubikey_ldap_write_uri), a missing keyring and a wrong
# keyring: logged, DISCARDed, nothing written.  Prints the client's times
# and the module's KDC log lines (with their times) of each phase.
# Exit 0 pass, 1 fail, 77 skip (announced).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"

R=$YK_REALM
TC=$YK_BUILDDIR/tests/client/yktestclient
SVC=host/svc.example.com
POLICY=lock3
LIMIT_MS=2000                   # the issue's bound for the frozen case
YK_BREAKER_TIME=3
# The KDC's UDP on another port: after a DISCARD the client's UDP try is
# refused at once (libkrb5 1.20 would otherwise wait ~17 s for it).
YK_KDC_UDP_PORT=$(yk_realm_free_port) || yk_fail "no free port"

yk_realm_setup
[ -x "$TC" ] || yk_fail "$TC is not built (run make first)"
kadmin.local -r "$R" addpol -maxfailure 3 -failurecountinterval 0 \
    -lockoutduration 0 "$POLICY" > "$YK_KRB5_DIR/kadmin.out" 2>&1 ||
    { cat "$YK_KRB5_DIR/kadmin.out" >&2; yk_fail "addpol $POLICY failed"; }
yk_realm_addprinc alice alice-pw -policy "$POLICY"
yk_realm_addprinc carol carol-pw -policy "$POLICY"
yk_realm_addprinc dave dave-pw
yk_realm_service "$SVC"
yk_realm_enroll alice "$YK_TMP/alice.tok"
yk_kdc_start
KDC_PID0=$YK_KDC_PID
ALICE_DN="uid=alice,$YK_PEOPLE_DN"
echo "slapd $YK_LDAP_URI; yubikey_breaker_time $YK_BREAKER_TIME s;" \
    "yubikey_ldap_timeout default (0.5 s)"

# kinit NAME with password PW and, when given, an OTP (real kinit with
# our client module); sets ELAPSED.
login() {
    if [ -n "${3:-}" ]; then
        yk_timed yk_kinit "$1" < <(printf '%s\n%s\n' "$2" "$3")
    else
        yk_timed yk_kinit "$1" < <(printf '%s\n' "$2")
    fi
}

# alice's next OTP through the test client (password-only krb5.conf);
# output in $YK_TMP/tc.out; sets ELAPSED; returns its exit code (0 issued,
# 1 refused, 2 no reply).
tclient_alice() {
    KRB5_CONFIG=$YK_KRB5_CONF_PLAIN yk_timed "$TC" --password alice-pw \
        --emu "$YK_TMP/alice.tok" alice > "$YK_TMP/tc.out" 2>&1
}

# An OTP login of alice that the KDC must DISCARD: no reply, the newest
# log line "discarded" with WANT in its reason.  Sets ELAPSED.
expect_discard() {
    local rc last
    tclient_alice
    rc=$?
    [ "$rc" -eq 2 ] ||
        { cat "$YK_TMP/tc.out" >&2;
          yk_fail "alice ($1): exit $rc, expected 2 (no reply)"; }
    last=$(yk_kdc_attempts "alice@$R" | tail -1)
    case "$last" in
        *"verdict=discarded reason=backend: $2"*) ;;
        *) yk_fail "alice ($1): log line \"$last\" lacks" \
               "\"discarded ... $2\"" ;;
    esac
}

# alice's OTP login with the real kinit must work.
expect_otp_login() {
    login alice alice-pw "$(yk_otp "$YK_TMP/alice.tok")" ||
        { cat "$YK_TMP/kinit.out" >&2; tail -3 "$YK_KDC_LOG" >&2;
          yk_fail "alice: OTP login refused ($1)"; }
    yk_kdc_attempts "alice@$R" | tail -1 | grep -q 'verdict=accepted' ||
        yk_fail "alice: OTP login not logged as accepted ($1)"
}

# The KDC's failure count of NAME.
failures() {
    kadmin.local -r "$R" getprinc "$1" 2>/dev/null |
        sed -n 's/^Failed password attempts: //p'
}

# alice's token state value(s) as the administrator reads them from the
# server at URI (default: the token directory).
alice_state() {
    ldapsearch -LLL -x -o ldif-wrap=no -H "${1:-$YK_LDAP_URI}" \
        -D "$YK_ADMIN_DN" -w "$YK_ADMIN_PW" -b "$ALICE_DN" -s base \
        yubikeyTokenState | grep -i '^yubikeyTokenState' ||
        yk_fail "cannot read alice's state from ${1:-$YK_LDAP_URI}"
}

# Mark the KDC log: phase_log prints the module's lines since the mark.
phase_mark() {
    PHASE_LINE=$(wc -l < "$YK_KDC_LOG")
}
phase_log() {
    echo "  KDC log ($1):"
    tail -n +"$((PHASE_LINE + 1))" "$YK_KDC_LOG" | grep 'yubikey: ' |
        sed -e 's/^\([A-Z][a-z]* [0-9]* [0-9:]*\) .*yubikey: /    \1 /' \
            -e 's/ mode=2fa//'
}

# The KDC is the one started at the beginning, and alive.
expect_kdc_up() {
    kill -0 "$YK_KDC_PID" 2>/dev/null || yk_fail "the KDC died ($1)"
    [ "$YK_KDC_PID" = "$KDC_PID0" ] || yk_fail "the KDC was restarted"
    [ "$(yk_kdc_starts)" -eq 1 ] || yk_fail "the KDC started again"
}

# --- before: both kinds of login work ----------------------------------
expect_otp_login "slapd up"
login carol carol-pw ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "carol: password login refused"; }
yk_ok "slapd up: alice password + OTP, carol password only"

# --- slapd stopped -------------------------------------------------------
phase_mark
yk_slapd_stop
login alice alice-pw "$(yk_otp "$YK_TMP/alice.tok")" &&
    yk_fail "alice: OTP login accepted with slapd stopped"
grep -q 'Cannot contact any KDC' "$YK_TMP/kinit.out" ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "alice: kinit got an answer"; }
yk_kdc_attempts "alice@$R" | tail -1 | grep -q 'verdict=discarded' ||
    yk_fail "alice: the attempt was not DISCARDed"
t_kinit=$ELAPSED
expect_discard "slapd stopped" ""
t_tc=$ELAPSED
[ "$(failures alice)" = 0 ] ||
    yk_fail "alice: $(failures alice) failures counted for an outage"
login carol carol-pw ||
    { cat "$YK_TMP/kinit.out" >&2;
      yk_fail "carol: password login refused with slapd stopped"; }
t_carol=$ELAPSED
expect_kdc_up "slapd stopped"
yk_ok "slapd stopped: alice's OTP login DISCARDed (kinit: Cannot contact" \
    "any KDC, $t_kinit ms; test client: no reply, $t_tc ms);" \
    "Failed password attempts: $(failures alice); carol password only:" \
    "$t_carol ms; KDC up"

yk_slapd_start
t_back=$(yk_ms)
sleep "$YK_BREAKER_TIME"
expect_otp_login "slapd back"
expect_kdc_up "slapd back"
yk_ok "slapd back: alice's OTP login works $(($(yk_ms) - t_back)) ms" \
    "after the restart (breaker $YK_BREAKER_TIME s), same KDC process"
phase_log "slapd stopped, then back"

# --- slapd frozen --------------------------------------------------------
phase_mark
yk_slapd_freeze
login dave dave-pw ||
    { cat "$YK_TMP/kinit.out" >&2;
      yk_fail "dave: password login refused with slapd frozen"; }
t_dave=$ELAPSED
yk_timed kvno "$SVC" > "$YK_TMP/kvno.out" 2>&1 ||
    { cat "$YK_TMP/kvno.out" >&2; yk_fail "dave: kvno failed, slapd frozen"; }
t_kvno=$ELAPSED
[ "$t_dave" -lt "$LIMIT_MS" ] ||
    yk_fail "dave: password kinit took $t_dave ms with slapd frozen"
[ "$t_kvno" -lt "$LIMIT_MS" ] ||
    yk_fail "dave: kvno took $t_kvno ms with slapd frozen"
grep -q 'circuit breaker open' <(tail -n +"$((PHASE_LINE + 1))" \
    "$YK_KDC_LOG") || yk_fail "no circuit breaker line in the KDC log"
yk_ok "slapd frozen: dave's password kinit $t_dave ms, kvno $t_kvno ms" \
    "(limit $LIMIT_MS ms)"
expect_discard "slapd frozen" "circuit breaker open"
t1=$ELAPSED
expect_discard "slapd frozen" "circuit breaker open"
t2=$ELAPSED
[ "$t1" -lt "$LIMIT_MS" ] && [ "$t2" -lt "$LIMIT_MS" ] ||
    yk_fail "OTP logins with the breaker open took $t1 and $t2 ms"
login alice alice-pw "$(yk_otp "$YK_TMP/alice.tok")" &&
    yk_fail "alice: OTP login accepted with slapd frozen"
t3=$ELAPSED
[ "$t3" -lt "$LIMIT_MS" ] ||
    yk_fail "alice: kinit with the breaker open took $t3 ms"
expect_kdc_up "slapd frozen"
yk_ok "slapd frozen: OTP logins DISCARDed by the open breaker without" \
    "touching LDAP: test client $t1 ms, $t2 ms; kinit $t3 ms"
yk_slapd_thaw
t_back=$(yk_ms)
sleep "$YK_BREAKER_TIME"
expect_otp_login "after SIGCONT"
expect_kdc_up "after SIGCONT"
yk_ok "slapd continued: alice's OTP login works" \
    "$(($(yk_ms) - t_back)) ms after SIGCONT"
phase_log "slapd frozen, then continued"

# --- a read-only write server --------------------------------------------
# A copy of the directory in a second slapd with "readonly on", named as
# yubikey_ldap_write_uri (the KDC reads its configuration at start).
phase_mark
ro=$YK_TMP/slapd-ro
mkdir -p "$ro/db" || yk_fail "mkdir $ro/db"
sed -e "s|$YK_TMP/slapd/|$ro/|g" -e 's|^directory .*|&\nreadonly on|' \
    "$YK_TMP/slapd/slapd.conf" > "$ro/slapd.conf"
grep -q '^readonly on' "$ro/slapd.conf" || yk_fail "no readonly line"
slapcat -f "$YK_TMP/slapd/slapd.conf" -l "$ro/data.ldif" \
    > "$ro/slapcat.log" 2>&1 || yk_fail "slapcat failed"
slapadd -q -f "$ro/slapd.conf" -l "$ro/data.ldif" > "$ro/slapadd.log" 2>&1 ||
    { cat "$ro/slapadd.log" >&2; yk_fail "slapadd (read-only copy)"; }
main=("$YK_SLAPD_PORT" "$YK_SLAPD_PID" "$YK_LDAP_URI")
YK_SLAPD_PORT='' YK_SLAPD_PID=''
yk_slapd_start -f "$ro/slapd.conf"
RO_URI=$YK_LDAP_URI
RO_PID=$YK_SLAPD_PID
YK_SLAPD_PORT=${main[0]} YK_SLAPD_PID=${main[1]} YK_LDAP_URI=${main[2]}
[ "$RO_URI" != "$YK_LDAP_URI" ] || yk_fail "port clash"

YK_KDC_EXTRA="  yubikey_ldap_write_uri = $RO_URI"
yk_realm_write_config
yk_kdc_stop
yk_kdc_start
before=$(alice_state)
before_ro=$(alice_state "$RO_URI")
expect_discard "read-only write server" ""
tail -n +"$((PHASE_LINE + 1))" "$YK_KDC_LOG" | grep 'yubikey: ' |
    grep -q 'read-only' ||
    yk_fail "the KDC log does not say the write server is read-only"
[ "$(alice_state)" = "$before" ] && [ "$(alice_state "$RO_URI")" = \
    "$before_ro" ] || yk_fail "alice's state changed (read-only server)"
yk_ok "read-only write server: logged (\"read-only\"), DISCARDed" \
    "($ELAPSED ms), the state value unchanged on both servers"
yk_stop_pid "$RO_PID"
phase_log "read-only write server"

# --- the master keyring missing, then wrong ---------------------------------
# Removed (not chmod 000: this test may run as root, who reads it anyway).
phase_mark
keyring=$YK_KRB5_DIR/master.keyring
YK_KDC_EXTRA=
yk_realm_write_config
yk_kdc_stop
mv "$keyring" "$keyring.away" || yk_fail "cannot move the keyring"
yk_kdc_start
t_start=$(yk_ms)
tail -n +"$((PHASE_LINE + 1))" "$YK_KDC_LOG" | grep 'yubikey: ' |
    grep -q "cannot load the master keyring $keyring" ||
    yk_fail "no log line about the missing keyring"
before=$(alice_state)
expect_discard "keyring missing" "master keyring unreadable"
[ "$(alice_state)" = "$before" ] ||
    yk_fail "alice's state changed without a keyring"
yk_ok "keyring missing: logged, DISCARDed ($ELAPSED ms), nothing written"
# Put back: reloaded by the running KDC, which tries again 5 s after its
# last attempt (at its start, before t_start).
mv "$keyring.away" "$keyring" || yk_fail "cannot restore the keyring"
wait_ms=$((t_start + 5000 - $(yk_ms)))
[ "$wait_ms" -gt 0 ] && sleep "$((wait_ms / 1000)).$(printf '%03d' \
    $((wait_ms % 1000)))"
tclient_alice ||
    { cat "$YK_TMP/tc.out" >&2;
      yk_fail "the keyring put back was not reloaded after 5 s"; }
yk_ok "keyring put back: reloaded, OTP login works" \
    "$(($(yk_ms) - t_start)) ms after the KDC start, no restart"

yk_ykadmin --keyring "$YK_TMP/other.keyring" init-master-key \
    >> "$YK_KRB5_DIR/ykadmin.log" 2>&1 ||
    yk_fail "ykadmin init-master-key (another keyring) failed"
[ "$(sed -n 's/^key \([0-9]*\) .*/\1/p' "$keyring")" = \
    "$(sed -n 's/^key \([0-9]*\) .*/\1/p' "$YK_TMP/other.keyring")" ] ||
    yk_fail "the other keyring has another version"
yk_kdc_stop
mv "$keyring" "$keyring.good" && cp -p "$YK_TMP/other.keyring" "$keyring" ||
    yk_fail "cannot swap the keyrings"
yk_kdc_start
before=$(alice_state)
expect_discard "wrong keyring" "keyring: "
tail -n +"$((PHASE_LINE + 1))" "$YK_KDC_LOG" | grep 'yubikey: ' |
    grep -q 'does not unwrap with .*wrong or outdated master keyring' ||
    yk_fail "no log line about the wrong keyring"
[ "$(alice_state)" = "$before" ] ||
    yk_fail "alice's state changed with a wrong keyring"
yk_ok "wrong keyring (same version $(sed -n 's/^key \([0-9]*\) .*/\1/p' \
    "$keyring")): logged, DISCARDed ($ELAPSED ms), nothing written"
yk_kdc_stop
mv "$keyring.good" "$keyring" || yk_fail "cannot restore the keyring"
yk_kdc_start
expect_otp_login "the right keyring again"
[ "$(failures alice)" = 0 ] ||
    yk_fail "alice: $(failures alice) failures counted"
phase_log "keyring missing, put back, wrong, right"
yk_ok "right keyring again: OTP login works; alice's failure count" \
    "$(failures alice) after every outage"
echo "PASS: outage.sh"
exit 0
