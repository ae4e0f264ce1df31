#!/bin/bash
# SPDX-License-Identifier: MIT
# replication-kldap.sh: two KDCs of a kldap realm on two replicated slapds.
#
# Two slapd providers A and B in multi-provider replication (replica.sh)
# holding a realm on krb5's LDAP back end (kldaprealm.sh): principals,
# keys and tokens on the same entries.  KDC 1's ldap_servers is A, KDC
# 2's is B (each KDC's "local" provider: kldap's reads and its own
# writes, e.g. krbLastSuccessfulAuth, go there), and both swap token
# counters on A (yubikey_ldap_write_uri = A), as doc/deployment.md
# recommends.  ROUNDS rounds of one fresh OTP sent at the same moment to
# both KDCs, their swaps held DELAY_MS by the test build's hook: one
# ticket exactly, the other KDC's log says "refused reason=replay".
# Then, with A and B in sync, both hold the last counter as the one state
# value, and the last OTP sent again to either KDC is refused.  Then
# rita's token disabled with ykadmin on B: how long until both KDCs
# refuse it (KDC 2 reading B), and the delay B -> A (replica.sh's
# yk_replica_disable_on_b, as replication.sh part b).
# KDC 2's kldap writes nothing on B (disable_last_success, disable_lockout):
# with plain syncrepl, a write to a principal's entry on B (kldap's
# krbLastSuccessfulAuth) made before A's swap reached B replicates the
# whole entry back to A with the older token state, a counter roll-back
# (seen in CI: "A stores ctr=266" after counter 267 was accepted).  See
# doc/deployment.md.
# Exit 0 pass, 1 fail, 77 skip (announced; needs --enable-test-hooks).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=kldaprealm.sh
. "$srcdir/tests/integration/kldaprealm.sh"
# shellcheck source=replica.sh
. "$srcdir/tests/integration/replica.sh"

R=$YK_REALM
TC=$YK_BUILDDIR/tests/client/yktestclient
ROUNDS=15
DELAY_MS=200

yk_replica_rounds_prereq
yk_kldap_check_tools
YK_SLAPD_EXTRA_ACL=$(yk_kldap_acl)
yk_replica_setup
yk_replica_start
A=$YK_LDAP_URI_A
B=$YK_LDAP_URI_B
YK_KLDAP_SERVERS=$A
YK_KDC_EXTRA="  yubikey_ldap_write_uri = $A"
yk_kldap_realm_setup
yk_kldap_addprinc rita rita-pw
yk_realm_enroll rita "$YK_TMP/rita.tok"
yk_replica_wait_sync
echo "kldap realm on slapd A $A; B $B in sync $YK_REPLICA_WAITED ms later"

export YK_TEST_CAS_DELAY_MS=$DELAY_MS
yk_kdc_start
# KDC 2: kldap on B, swaps on A; kldap writes nothing on B (see the top:
# a write there can replicate a stale counter back to A).
YK_KDC2_SED="s|^\( *ldap_servers = \).*|\1$B\n  disable_last_success = true\n  disable_lockout = true|"
yk_kdc2_start
unset YK_TEST_CAS_DELAY_MS
grep -q "^ *disable_last_success = true" "$YK_KRB5_DIR/kdc2.conf" ||
    yk_fail "kdc2.conf does not set disable_last_success"
grep -q "ldap_servers = $B\$" "$YK_KRB5_DIR/kdc2.conf" ||
    yk_fail "kdc2.conf does not name B in ldap_servers"
echo "KDC 1 (port $YK_KDC_PORT): ldap_servers A; KDC 2 (port" \
    "$YK_KDC2_PORT): ldap_servers B; both yubikey_ldap_write_uri A"

t0=$(yk_ms)
yk_replica_rounds rita rita-pw "$YK_TMP/rita.tok" "$ROUNDS"
t_rounds=$(($(yk_ms) - t0))
[ "$YK_ROUND_MIN_MS" -ge "$DELAY_MS" ] ||
    yk_fail "a round took $YK_ROUND_MIN_MS ms: the delay hook did not run"
grep -qF "token directory $B, writes to $A," "$YK_KDC2_LOG" ||
    yk_fail "KDC 2 does not say it reads B and writes A:" \
        "$(grep -F 'krb5-yubikey' "$YK_KDC2_LOG")"
yk_ok "kldap: $ROUNDS rounds, one OTP to both KDCs at once: one ticket" \
    "each (KDC 1 won $YK_ROUNDS_WON1, KDC 2 won $YK_ROUNDS_WON2), the" \
    "other refused as a replay; $t_rounds ms"

# Replication settled: both servers hold the last counter, once.
yk_replica_wait_sync
ctr=$(yk_emu_last_counter "$YK_TMP/rita.tok")
dn=$(yk_replica_holder_dn rita)
for uri in "$A" "$B"; do
    v=$(yk_replica_values "$uri" "$dn" yubikeyTokenState)
    [ "$(printf '%s\n' "$v" | grep -c .)" -eq 1 ] &&
        [[ "$v" == *" ctr=$ctr "* ]] ||
        yk_fail "$uri holds rita's state \"$v\", not counter $ctr once"
done
last=$(yk_replica_values "$B" "$dn" krbLastSuccessfulAuth)
echo "rita's entry on B after the rounds: krbLastSuccessfulAuth $last" \
    "(kldap's own write, on each KDC's provider)"
# The last round's OTP again, to each KDC: refused.
for k in 1 2; do
    conf=$YK_KRB5_CONF_PLAIN log=$YK_KDC_LOG
    [ "$k" = 2 ] && conf=$YK_KRB5_CONF_KDC2 log=$YK_KDC2_LOG
    KRB5_CONFIG=$conf "$TC" --password rita-pw --otp "$YK_LAST_ROUND_OTP" \
        rita > "$YK_TMP/again.out" 2>&1
    rc=$?
    line=$(yk_kdc_attempts "rita@$R" "$log" | tail -1)
    [ "$rc" = 1 ] && [[ "$line" == *" counter=$ctr "*"verdict=refused"* ]] ||
        { cat "$YK_TMP/again.out" >&2;
          yk_fail "the last OTP again on KDC $k: exit $rc, log: $line"; }
done
yk_ok "after replication settled: A and B hold counter $ctr as the one" \
    "state value; the last OTP sent again is refused by both KDCs"
kill -0 "$YK_KDC_PID" 2>/dev/null && kill -0 "$YK_KDC2_PID" 2>/dev/null ||
    yk_fail "a KDC died"

# rita's token disabled on B (replica.sh; both KDCs restarted without the
# delay hook, which would slow every accepted login).
yk_kdc2_stop
yk_kdc_stop
yk_kdc_start
yk_kdc2_start
yk_replica_disable_on_b rita rita-pw "$YK_TMP/rita.tok"
echo "kldap: replication delay B -> A, ykadmin enable/disable on B until A" \
    "has it, 10 times (ms): $YK_DIS_DELAYS(one poll alone: $YK_DIS_POLL ms)"
yk_ok "kldap: token disabled on B: refused by KDC 1 (kldap on A) after" \
    "$YK_DIS_REFUSED1 ms, by KDC 2 (kldap on B) after $YK_DIS_REFUSED2 ms" \
    "($YK_DIS_ACCEPTED of $YK_DIS_TRIES OTPs accepted before); on A" \
    "$YK_DIS_ON_A ms after ykadmin returned; A and B agree"
echo "PASS: replication-kldap.sh"
exit 0
