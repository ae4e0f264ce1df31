#!/bin/bash
# SPDX-License-Identifier: MIT
# replication.sh: two KDCs on two replicated slapd providers (DB2 realm).
#
# Two slapd providers A and B in multi-provider replication on 127.0.0.1
# (replica.sh), a DB2 realm whose token directory is A, and two krb5kdc
# processes on the realm's database: KDC 1 reads from A, KDC 2 from B,
# and both swap on A (yubikey_ldap_write_uri = A), as doc/deployment.md
# recommends.
# a. ROUNDS rounds: one fresh OTP sent at the same moment to both KDCs,
#    whose swaps the test build's hook holds DELAY_MS after their read
#    (both judge the OTP good before either swaps): one ticket exactly,
#    the other KDC's log says "refused reason=replay".
# b. A token disabled with ykadmin on B (--uri B --write-uri B): fresh
#    OTPs to both KDCs until both refuse it ("disabled token"); prints
#    how long that took after ykadmin returned, and when A had the
#    disable.  A refusal of a disabled token is confirmed on the write
#    provider A, and a swap on A fails once the disable's new state value
#    reached A, so what is measured is the replication B -> A (plus one
#    attempt's time: the resolution).  Then the delay B -> A alone, 10
#    ykadmin changes on B and A polled.  Then A and B hold the same token
#    record and state value, the token disabled.
# c. A stopped: KDC 2 still reads the hint from B, OTP logins are
#    DISCARDed on both KDCs (no ticket; kinit: "Cannot contact any KDC";
#    no failure counted), password logins work on both; A started again:
#    OTP logins work on both KDCs, without a KDC restart.
# At start, both KDCs warn that the write server A is one of several
# replicated providers.  The kldap realm: replication-kldap.sh.  Exit 0 pass, 1 fail, 77 skip
# (announced; part a needs --enable-test-hooks).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"
# shellcheck source=replica.sh
. "$srcdir/tests/integration/replica.sh"

R=$YK_REALM
TC=$YK_BUILDDIR/tests/client/yktestclient
ROUNDS=20
DELAY_MS=200
YK_POLL_LIMIT_MS=10000
YK_BREAKER_TIME=2
# The KDC's UDP on another port: a DISCARD shows at once as no reply.
YK_KDC_UDP_PORT=$(yk_realm_free_port) || yk_fail "no free port"

yk_replica_rounds_prereq
yk_replica_setup
yk_replica_start
A=$YK_LDAP_URI_A
B=$YK_LDAP_URI_B
YK_KDC_EXTRA="  yubikey_ldap_write_uri = $A"
yk_realm_setup
for u in rita dora hank; do
    yk_realm_addprinc "$u" "$u-pw"
    yk_realm_enroll "$u" "$YK_TMP/$u.tok"
done
yk_realm_addprinc pat pat-pw
yk_replica_wait_sync
echo "slapd A $A (serverID 1), slapd B $B (serverID 2): in sync" \
    "$YK_REPLICA_WAITED ms after the last enrolment"

# KDC 2: reads from B, swaps on A.
YK_KDC2_SED="s|^\( *yubikey_ldap_uri = \).*|\1$B|"
# A krb5.conf with our client module naming KDC 2 only (real kinit).
KRB5_CONF_KDC2_YK=$YK_KRB5_DIR/krb5-kdc2-yk.conf

# Start both KDCs (the environment passes on).
start_kdcs() {
    yk_kdc_start
    yk_kdc2_start
    sed -e "s|\( kdc = \)127\.0\.0\.1:.*|\1127.0.0.1:$YK_KDC2_PORT|" \
        "$YK_KRB5_CONF" > "$KRB5_CONF_KDC2_YK"
}

# What each KDC says (at its first request) it reads from and writes to.
check_announce() {
    grep -qF "token directory $A, writes to $A," "$YK_KDC_LOG" ||
        yk_fail "KDC 1 does not say it reads and writes A"
    grep -qF "token directory $B, writes to $A," "$YK_KDC2_LOG" ||
        yk_fail "KDC 2 does not say it reads B and writes A"
    # At start each KDC asks A whether it is replicated (its contextCSN
    # holds changes from both providers' server IDs) and says so.
    for log in "$YK_KDC_LOG" "$YK_KDC2_LOG"; do
        grep -qF "WARNING: realm $R: the write server $A is one of several" \
            "$log" || yk_fail "$log: no warning that A is replicated"
    done
}

# --- a. one OTP at once to both KDCs ------------------------------------
export YK_TEST_CAS_DELAY_MS=$DELAY_MS
start_kdcs
unset YK_TEST_CAS_DELAY_MS
echo "KDC 1 (port $YK_KDC_PORT) reads A, KDC 2 (port $YK_KDC2_PORT)" \
    "reads B, both swap on A; swaps held $DELAY_MS ms (test hook)"
t0=$(yk_ms)
yk_replica_rounds rita rita-pw "$YK_TMP/rita.tok" "$ROUNDS"
t_rounds=$(($(yk_ms) - t0))
check_announce
[ "$YK_ROUND_MIN_MS" -ge "$DELAY_MS" ] ||
    yk_fail "a round took $YK_ROUND_MIN_MS ms: the delay hook did not run"
yk_replica_wait_sync
ctr=$(yk_emu_last_counter "$YK_TMP/rita.tok")
[ "$(yk_replica_values "$B" "uid=rita,$YK_PEOPLE_DN" yubikeyTokenState |
    sed -n 's/.* ctr=\([0-9]*\) .*/\1/p')" = "$ctr" ] ||
    yk_fail "B does not hold rita's last counter $ctr"
yk_ok "$ROUNDS rounds, one OTP to both KDCs at once: one ticket each" \
    "(KDC 1 won $YK_ROUNDS_WON1, KDC 2 won $YK_ROUNDS_WON2), the other" \
    "refused as a replay; $t_rounds ms; B holds the last counter $ctr" \
    "(in sync $YK_REPLICA_WAITED ms later)"

# Without the delay from here on (it would slow every accepted login).
yk_kdc2_stop
yk_kdc_stop
start_kdcs

# --- b. a token disabled on B --------------------------------------------
yk_replica_disable_on_b dora dora-pw "$YK_TMP/dora.tok"
echo "replication delay B -> A, ykadmin enable/disable on B until A" \
    "has it, 10 times (ms): $YK_DIS_DELAYS(one poll alone, the value there" \
    "already: $YK_DIS_POLL ms)"
echo "replication delay B -> A: the disable was on A $YK_DIS_ON_A ms after" \
    "ykadmin returned (polled every ~10 ms plus one ldapsearch)"
yk_ok "token disabled on B: refused by KDC 1 after $YK_DIS_REFUSED1 ms," \
    "by KDC 2 after $YK_DIS_REFUSED2 ms ($YK_DIS_ACCEPTED of" \
    "$YK_DIS_TRIES OTPs accepted before; each attempt takes one test" \
    "client run); A and B agree"

# --- c. A down ------------------------------------------------------------
# hank's login through the test client on KDC K (more test client
# options after K); output in hank.out.
hank_to() {
    local conf=$YK_KRB5_CONF_PLAIN
    [ "$1" = 2 ] && conf=$YK_KRB5_CONF_KDC2
    shift
    KRB5_CONFIG=$conf "$TC" --password hank-pw --emu "$YK_TMP/hank.tok" \
        "$@" hank > "$YK_TMP/hank.out" 2>&1
}

# Password login of pat (no token) with the real kinit on KDC K.
pat_login() {
    local conf=$YK_KRB5_CONF
    [ "$1" = 2 ] && conf=$KRB5_CONF_KDC2_YK
    printf '%s\n' pat-pw | KRB5_CONFIG=$conf kinit "pat@$R" \
        > "$YK_TMP/kinit.out" 2>&1 ||
        { cat "$YK_TMP/kinit.out" >&2;
          yk_fail "pat: password login on KDC $1 refused with A down"; }
}

yk_replica_stop_a
t_down=$(yk_ms)
# hank never logged in: KDC 2 reads his record from B for the hint.
hank_to 2
rc=$?
grep -q '^hint: flags' "$YK_TMP/hank.out" ||
    { cat "$YK_TMP/hank.out" >&2; yk_fail "hank: KDC 2 sent no hint"; }
[ "$rc" = 2 ] || { cat "$YK_TMP/hank.out" >&2;
    yk_fail "hank on KDC 2, A down: exit $rc, expected 2 (no reply)"; }
line=$(yk_kdc_attempts "hank@$R" "$YK_KDC2_LOG" | tail -1)
[[ "$line" == *" verdict=discarded reason=backend: "* ]] ||
    yk_fail "hank on KDC 2, A down: $line"
yk_ok "A down: KDC 2 read hank's hint from B; his OTP login DISCARDed" \
    "(${line##*reason=})"
printf '%s\n%s\n' hank-pw "$(yk_otp "$YK_TMP/hank.tok")" |
    KRB5_CONFIG=$KRB5_CONF_KDC2_YK kinit "hank@$R" > "$YK_TMP/kinit.out" 2>&1 &&
    yk_fail "hank: kinit got a ticket from KDC 2 with A down"
grep -q 'Cannot contact any KDC' "$YK_TMP/kinit.out" ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "hank: kinit got an answer"; }
# KDC 1 reads A: no hint; the test client sends its padata unasked.
hank_to 1 --optimistic
rc=$?
line=$(yk_kdc_attempts "hank@$R" | tail -1)
[ "$rc" = 2 ] && [[ "$line" == *" verdict=discarded reason=backend: "* ]] ||
    { cat "$YK_TMP/hank.out" >&2;
      yk_fail "hank on KDC 1, A down: exit $rc, log: $line"; }
pat_login 1
pat_login 2
fails=$(kadmin.local -r "$R" getprinc hank 2>/dev/null |
    sed -n 's/^Failed password attempts: //p')
[ "$fails" = 0 ] || yk_fail "hank: $fails failures counted for an outage"
yk_ok "A down: OTP logins DISCARDed on both KDCs (kinit: Cannot contact" \
    "any KDC; no failure counted), pat's password logins work on both"

yk_replica_start_a
t_up=$(yk_ms)
yk_replica_wait_sync
sleep "$YK_BREAKER_TIME"
for k in 1 2; do
    hank_to "$k" || { cat "$YK_TMP/hank.out" >&2;
        yk_fail "hank: OTP login on KDC $k refused after A came back"; }
done
kill -0 "$YK_KDC_PID" 2>/dev/null && kill -0 "$YK_KDC2_PID" 2>/dev/null ||
    yk_fail "a KDC died"
[ "$(yk_kdc_starts)" -eq 2 ] || yk_fail "KDC 1 was restarted"
yk_ok "A back after $((t_up - t_down)) ms down: OTP logins work on both" \
    "KDCs $(($(yk_ms) - t_up)) ms later (breaker $YK_BREAKER_TIME s)," \
    "no KDC restarted"
echo "PASS: replication.sh"
exit 0
