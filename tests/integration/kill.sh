#!/bin/bash
# SPDX-License-Identifier: MIT
# kill.sh: slapd, then krb5kdc, killed (SIGKILL) at random points of a
# loop of OTP logins, and restarted each time.
#
# A DB2 realm (realm.sh), 4 users with tokens, CLIENTS clients (one a
# user) logging in LOGINS times in all with the test client (password +
# OTP), each accepted OTP sent once more at once (a replay).  Meanwhile
# slapd (run 1) or krb5kdc (run 2) is killed with SIGKILL every 0.2-1.2 s
# and started again (the same database).  After each run:
#   - no OTP was ever accepted twice: the KDC logged at most one
#     "verdict=accepted" per (public id, counter), and no replay got a
#     ticket;
#   - every token's stored counter is at least the highest counter of a
#     ticket issued (the swap is acknowledged before a ticket); where it
#     is higher it must be an attempt that got no ticket: a swap whose
#     answer the kill cut off (DISCARDed, the OTP spent), counted and
#     printed;
#   - LMDB came back every time, and the realm works at the end.
# YK_KILL_LOGINS (default 400) sets the loop's length; doc/reliability.md
# has the figures of a 1,000-login run.
# Exit 0 pass, 1 fail, 77 skip (announced).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"

R=$YK_REALM
TC=$YK_BUILDDIR/tests/client/yktestclient
LOGINS=${YK_KILL_LOGINS:-400}
CLIENTS=4
YK_BREAKER_TIME=1
YK_CACHE_TTL=2
# The KDC's UDP on another port: a DISCARD shows at once as no reply.
YK_KDC_UDP_PORT=$(yk_realm_free_port) || yk_fail "no free port"

yk_init
yk_realm_check_tools
[ -x "$TC" ] || yk_fail "tests/client/yktestclient is not built"
yk_realm_setup
for i in $(seq "$CLIENTS"); do
    yk_realm_addprinc "u$i" "u$i-pw"
    yk_realm_enroll "u$i" "$YK_TMP/u$i.tok"
done
yk_kdc_start

# client I: LOGINS/CLIENTS logins of uI; one line per attempt in
# $YK_TMP/res.I: "COUNTER RC [REPLAY_RC]".
client() {
    local i=$1 n otp ctr rc rc2
    for n in $(seq $((LOGINS / CLIENTS))); do
        otp=$("$YK_YKEMU_BIN" "$YK_TMP/u$i.tok") || exit 9
        ctr=$(yk_emu_last_counter "$YK_TMP/u$i.tok")
        KRB5_CONFIG=$YK_KRB5_CONF_PLAIN timeout 20 "$TC" --optimistic \
            --password "u$i-pw" --otp "$otp" "u$i" > /dev/null 2>&1
        rc=$?
        rc2=-
        if [ "$rc" = 0 ]; then
            KRB5_CONFIG=$YK_KRB5_CONF_PLAIN timeout 20 "$TC" --optimistic \
                --password "u$i-pw" --otp "$otp" "u$i" > /dev/null 2>&1
            rc2=$?
        fi
        echo "$ctr $rc $rc2" >> "$YK_TMP/res.$i"
    done
}

# kill_once VICTIM: SIGKILL slapd or krb5kdc and start it again.
kill_once() {
    if [ "$1" = slapd ]; then
        kill -KILL "$YK_SLAPD_PID" 2>/dev/null
        wait "$YK_SLAPD_PID" 2>/dev/null
        sleep "0.$((1 + RANDOM % 3))"
        yk_slapd_start
    else
        kill -KILL "$YK_KDC_PID" 2>/dev/null
        wait "$YK_KDC_PID" 2>/dev/null
        sleep "0.$((1 + RANDOM % 3))"
        yk_kdc_start
    fi
}

# run VICTIM: the clients' loop with VICTIM killed meanwhile, then the
# properties checked on this run's attempts.
run() {
    local victim=$1 pids=() i f pubid dup hi stored t0 ms kills=0
    local issued=0 discarded=0 refused=0 replays=0 cut=0
    rm -f "$YK_TMP"/res.*
    for i in $(seq "$CLIENTS"); do
        client "$i" &
        pids+=("$!")
    done
    t0=$(yk_ms)
    while alive_any "${pids[@]}"; do
        sleep "0.$((2 + RANDOM % 10))"
        alive_any "${pids[@]}" || break
        kill_once "$victim"
        kills=$((kills + 1))
    done
    wait "${pids[@]}"
    ms=$(($(yk_ms) - t0))
    for i in $(seq "$CLIENTS"); do
        f=$YK_TMP/res.$i
        [ "$(wc -l < "$f")" -eq $((LOGINS / CLIENTS)) ] ||
            yk_fail "$victim: client $i made $(wc -l < "$f") attempts"
        issued=$((issued + $(awk '$2 == 0' "$f" | wc -l)))
        discarded=$((discarded + $(awk '$2 == 2' "$f" | wc -l)))
        refused=$((refused + $(awk '$2 == 1' "$f" | wc -l)))
        replays=$((replays + $(awk '$3 != "-"' "$f" | wc -l)))
        awk '$3 == 0' "$f" | grep -q . &&
            yk_fail "$victim: u$i: a replayed OTP got a ticket:" \
                "$(awk '$3 == 0' "$f" | head -3)"
        pubid=$("$YK_YKEMU_BIN" --public-id "$YK_TMP/u$i.tok")
        dup=$(yk_kdc_attempts "u$i@$R" | grep " verdict=accepted " |
            sed -n 's/.* pubid=\([a-z]*\) counter=\([0-9]*\) .*/\1 \2/p' |
            sort | uniq -d)
        [ -z "$dup" ] || yk_fail "$victim: u$i: accepted twice: $dup"
        hi=$(awk '$2 == 0 { print $1 }' "$f" | sort -n | tail -1)
        stored=$(yk_ldapsearch_as "$YK_ADMIN_DN" "$YK_ADMIN_PW" \
            -b "$YK_LDAP_BASE" "(krbPrincipalName=u$i@$R)" \
            yubikeyTokenState |
            sed -n 's/^yubikeyTokenState: .* ctr=\([0-9]*\) .*/\1/p' |
            sort -n | tail -1)
        [ -n "$stored" ] || yk_fail "$victim: u$i: no stored counter"
        [ -z "$hi" ] || [ "$stored" -ge "$hi" ] ||
            yk_fail "$victim: u$i: stored counter $stored below the" \
                "ticket's $hi (lost)"
        if [ -n "$hi" ] && [ "$stored" -gt "$hi" ]; then
            awk -v c="$stored" '$1 == c && $2 != 0' "$f" | grep -q . ||
                yk_fail "$victim: u$i: stored counter $stored matches no" \
                    "attempt"
            cut=$((cut + 1))
        fi
    done
    echo "$victim: $LOGINS logins from $CLIENTS clients in $ms ms, killed" \
        "$kills times: $issued tickets, $discarded DISCARDed, $refused" \
        "refused; $replays replays of accepted OTPs, none got a ticket;" \
        "$cut token(s) whose stored counter is past its last ticket (a" \
        "swap whose answer the kill cut off)"
    [ "$kills" -ge 3 ] || yk_fail "$victim was killed only $kills times"
    [ "$issued" -gt 0 ] || yk_fail "$victim: no ticket at all"
    yk_ok "$victim SIGKILLed $kills times during $LOGINS OTP logins: no" \
        "OTP accepted twice, no replay with a ticket, no stored counter" \
        "below a ticket's"
}

# Whether any of the PIDs still runs.
alive_any() {
    local p
    for p in "$@"; do
        kill -0 "$p" 2>/dev/null && return 0
    done
    return 1
}

run slapd
run krb5kdc

# The realm works at the end: one more login for each user.
kill -0 "$YK_SLAPD_PID" 2>/dev/null || yk_slapd_start
sleep 1.2   # the breaker
for i in $(seq "$CLIENTS"); do
    KRB5_CONFIG=$YK_KRB5_CONF_PLAIN "$TC" --optimistic --password "u$i-pw" \
        --emu "$YK_TMP/u$i.tok" "u$i" > "$YK_TMP/tc.out" 2>&1 ||
        { cat "$YK_TMP/tc.out" >&2; yk_fail "u$i: no login after the run"; }
done
yk_ok "after both runs the realm works: one more OTP login each"
echo "PASS: kill.sh"
exit 0
