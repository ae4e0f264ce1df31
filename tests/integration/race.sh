#!/bin/bash
# SPDX-License-Identifier: MIT
# race.sh: one OTP at once to several KDC processes; many users at once.
#
# A DB2 realm (realm.sh) served by "krb5kdc -w 2" and a second krb5kdc on
# the same database and token directory (three verifying processes).
# 1. 4 users log in 50 times each, in parallel (each user's logins one
#    after the other, alternating the two KDCs, so that the KDCs' cached
#    records go stale): every login succeeds, every one is logged accepted
#    once, and each token's stored counter is its last OTP's.
# 2. With the test build's hook (YK_TEST_CAS_DELAY_MS) holding each
#    verifier 300 ms between its read and its compare-and-swap, and no
#    cache (every verifier reads the directory), 8 clients send the same
#    OTP at once, 4 to each KDC: accepted exactly once, the others refused
#    as replays (or DISCARDed as retransmissions); slapd's monitor counts
#    the swaps tried (more than one: the losers' swaps failed).  3 rounds.
# Exit 0 pass, 1 fail, 77 skip (announced; phase 2 needs
# --enable-test-hooks).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"

R=$YK_REALM
TC=$YK_BUILDDIR/tests/client/yktestclient
USERS=(ann ben cid dot)
LOGINS=50
ROUNDS=3
PARALLEL=8
DELAY_MS=300
# slapd's monitor database counts the modify operations (the swaps).
YK_SLAPD_EXTRA_CONF="database monitor"
# Slowness from the load is not an outage here.
YK_KDC_EXTRA="  yubikey_ldap_timeout = 5"
# The KDC's UDP on another port: a DISCARD shows at once as no reply.
YK_KDC_UDP_PORT=$(yk_realm_free_port) || yk_fail "no free port"
unset YK_TEST_CAS_DELAY_MS

yk_realm_setup
[ -x "$TC" ] || yk_fail "$TC is not built (run make first)"
for u in "${USERS[@]}" rita; do
    yk_realm_addprinc "$u" "$u-pw"
    yk_realm_enroll "$u" "$YK_TMP/$u.tok"
done

# The number of modify operations slapd has completed.
modifies() {
    ldapsearch -LLL -x -H "$YK_LDAP_URI" \
        -b 'cn=Modify,cn=Operations,cn=Monitor' -s base \
        monitorOpCompleted | sed -n 's/^monitorOpCompleted: //p'
}
[[ "$(modifies)" =~ ^[0-9]+$ ]] || yk_fail "slapd's monitor is not readable"

# Start krb5kdc -w 2 and the second KDC (the environment passes on).
start_kdcs() {
    yk_kdc_start -w 2
    yk_kdc2_start
}

# Both KDCs' module lines for NAME.
attempts() {
    yk_kdc_attempts "$1@$R"
    yk_kdc_attempts "$1@$R" "$YK_KDC2_LOG"
}

# NAME logs in LOGINS times with the test client, alternating the KDCs;
# one exit code per line in $YK_TMP/NAME.rcs.
user_logins() {
    local u=$1 i conf
    for i in $(seq "$LOGINS"); do
        conf=$YK_KRB5_CONF_PLAIN
        [ $((i % 2)) -eq 0 ] && conf=$YK_KRB5_CONF_KDC2
        KRB5_CONFIG=$conf "$TC" --password "$u-pw" --emu "$YK_TMP/$u.tok" \
            "$u" >> "$YK_TMP/$u.out" 2>&1
        echo $? >> "$YK_TMP/$u.rcs"
    done
}

# --- 1. 4 users x 50 logins in parallel ---------------------------------
start_kdcs
echo "KDCs: krb5kdc -w 2 (port $YK_KDC_PORT), krb5kdc (port $YK_KDC2_PORT)"
pids=()
m0=$(modifies)
t0=$(yk_ms)
for u in "${USERS[@]}"; do
    user_logins "$u" &
    pids+=("$!")
done
wait "${pids[@]}"
t_all=$(($(yk_ms) - t0))
swaps=$(($(modifies) - m0))
for u in "${USERS[@]}"; do
    ok=$(grep -c '^0$' "$YK_TMP/$u.rcs")
    [ "$ok" -eq "$LOGINS" ] ||
        { grep '^result:' "$YK_TMP/$u.out" | sort | uniq -c >&2;
          yk_fail "$u: $ok of $LOGINS logins succeeded"; }
    n=$(attempts "$u" | grep -c .)
    acc=$(attempts "$u" | grep -c 'verdict=accepted')
    [ "$n" -eq "$LOGINS" ] && [ "$acc" -eq "$LOGINS" ] ||
        yk_fail "$u: $acc accepted of $n log lines for $LOGINS logins"
    last=$(yk_emu_last_counter "$YK_TMP/$u.tok")
    high=$(attempts "$u" | sed -n 's/.* counter=\([0-9]*\) .*/\1/p' |
        sort -n | tail -1)
    ctr=$(yk_stored_counter "$u")
    [ "$ctr" = "$last" ] && [ "$high" = "$last" ] ||
        yk_fail "$u: stored counter $ctr, last OTP $last, highest" \
            "accepted $high"
    workers=$(yk_kdc_attempts "$u@$R" |
        sed -n 's/.*krb5kdc\[\([0-9]*\)\].*/\1/p' | sort | uniq -c |
        awk '{printf "%s%s", s, $1; s="+"}')
    yk_ok "$u: $ok/$LOGINS logins accepted (krb5kdc -w 2 workers" \
        "$workers, second KDC $(yk_kdc_attempts "$u@$R" "$YK_KDC2_LOG" |
        grep -c .)), stored counter $ctr = last OTP's $last"
done
total=$((${#USERS[@]} * LOGINS))
yk_ok "$total logins of ${#USERS[@]} users in parallel: all accepted in" \
    "$t_all ms; $swaps swaps for $total logins (the extra ones lost to a" \
    "stale cached value, re-read and swapped again)"
[ "$swaps" -ge "$total" ] || yk_fail "fewer swaps ($swaps) than logins"

# --- 2. the same OTP at once to three verifiers, delayed swaps ----------
grep -q '^#define YK_TEST_HOOKS 1' "$YK_BUILDDIR/config.h" 2>/dev/null ||
    yk_skip "part 1 passed; part 2 needs a build configured with" \
        "--enable-test-hooks (YK_TEST_CAS_DELAY_MS)"
yk_kdc2_stop
yk_kdc_stop
YK_CACHE_TTL=0
yk_realm_write_config
export YK_TEST_CAS_DELAY_MS=$DELAY_MS
start_kdcs
unset YK_TEST_CAS_DELAY_MS
echo "KDCs restarted with YK_TEST_CAS_DELAY_MS=$DELAY_MS, yubikey_cache_ttl 0"

pubid=$("$YK_YKEMU_BIN" --public-id "$YK_TMP/rita.tok")
for round in $(seq "$ROUNDS"); do
    otp=$(yk_otp "$YK_TMP/rita.tok")
    ctr=$(yk_emu_last_counter "$YK_TMP/rita.tok")
    m0=$(modifies)
    pids=()
    t0=$(yk_ms)
    for i in $(seq "$PARALLEL"); do
        conf=$YK_KRB5_CONF_PLAIN
        [ $((i % 2)) -eq 0 ] && conf=$YK_KRB5_CONF_KDC2
        ( KRB5_CONFIG=$conf "$TC" --password rita-pw --otp "$otp" rita \
              > "$YK_TMP/rita.$round.$i.out" 2>&1
          echo $? > "$YK_TMP/rita.$round.$i.rc" ) &
        pids+=("$!")
    done
    wait "${pids[@]}"
    t_round=$(($(yk_ms) - t0))
    swaps=$(($(modifies) - m0))
    issued=$(cat "$YK_TMP"/rita."$round".*.rc | grep -c '^0$')
    refused=$(cat "$YK_TMP"/rita."$round".*.rc | grep -c '^1$')
    noreply=$(cat "$YK_TMP"/rita."$round".*.rc | grep -c '^2$')
    lines=$(attempts rita | grep -F "pubid=$pubid counter=$ctr ")
    n=$(printf '%s\n' "$lines" | grep -c .)
    acc=$(printf '%s\n' "$lines" | grep -c 'verdict=accepted')
    rep=$(printf '%s\n' "$lines" | grep -c 'verdict=refused reason=replay$')
    ret=$(printf '%s\n' "$lines" |
        grep -c 'verdict=discarded reason=retransmission$')
    procs=$(printf '%s\n' "$lines" |
        sed -n 's/.*krb5kdc\[\([0-9]*\)\].*/\1/p' | sort -u | grep -c .)
    echo "round $round: counter $ctr: $issued issued, $refused refused," \
        "$noreply no reply (clients, $t_round ms); KDC logs: $acc" \
        "accepted, $rep replay, $ret retransmission, from $procs" \
        "processes; $swaps swaps tried"
    [ "$issued" -eq 1 ] &&
        [ "$((refused + noreply))" -eq $((PARALLEL - 1)) ] ||
        { cat "$YK_TMP"/rita."$round".*.out >&2;
          yk_fail "round $round: $issued tickets for one OTP"; }
    [ "$n" -eq "$PARALLEL" ] && [ "$acc" -eq 1 ] &&
        [ "$((rep + ret))" -eq $((PARALLEL - 1)) ] ||
        { printf '%s\n' "$lines" >&2;
          yk_fail "round $round: KDC logs: $acc accepted, $rep replays," \
              "$ret retransmissions of $n lines"; }
    [ "$procs" -ge 2 ] && [ "$swaps" -ge 2 ] ||
        yk_fail "round $round: no race: $procs processes, $swaps swaps"
    [ "$t_round" -ge "$DELAY_MS" ] ||
        yk_fail "round $round took $t_round ms: the delay hook did not run"
    [ "$(yk_stored_counter rita)" = "$ctr" ] ||
        yk_fail "round $round: stored counter $(yk_stored_counter rita)"
done
yk_ok "$ROUNDS rounds of $PARALLEL parallel logins with one OTP across" \
    "3 verifying processes: accepted exactly once each"
kill -0 "$YK_KDC_PID" 2>/dev/null && kill -0 "$YK_KDC2_PID" 2>/dev/null ||
    yk_fail "a KDC died"
echo "PASS: race.sh"
exit 0
