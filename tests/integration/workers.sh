#!/bin/bash
# SPDX-License-Identifier: MIT
# workers.sh: one modify and no search per accepted OTP, whichever worker
# takes the login (the token states the workers share: doc/design.md
# §4.10); a garbage OTP on a fresh record costs no LDAP operation.
#
# A DB2 realm (realm.sh), slapd with its monitor database (operations
# counted as slapd completed them), yubikey_cache_ttl 600.
# 1. krb5kdc -w 4.  Warm-up: rounds of OTP logins (4 users in parallel,
#    5 each, one after the other) until a round costs no search: every
#    worker holds every record.  Then 4 users x 10 logins the same way,
#    spread over the workers: all accepted, exactly one modify per login
#    and no search (the counting's own operations subtracted) but a
#    worker's first read of a record it never needed before (slapd's
#    log: the kernel picks the worker, so a warm-up cannot promise that
#    every worker saw every user), accepted
#    by more than one worker.  Then the users' policy goes from otp to
#    2fa: OTP-alone logins (mode 2, armored) to every worker are all
#    refused (policy), though each worker's cache still says otp and the
#    table holds their newest state values (a policy change keeps the
#    secret value: the table's key has the policy too).
# 2. krb5kdc -w 1: the same round, the same figures; then a user never
#    seen logs in with a garbage OTP: its record is read once (for the
#    hint) and the refusal on that fresh record costs nothing more.
# 3. With the test build's YK_TEST_SHARED=0 (no shared table), the same
#    round at -w 4 is measured and printed for comparison, not asserted
#    (how many swaps are lost depends on how the kernel spreads the
#    connections over the workers).
# Exit 0 pass, 1 fail, 77 skip (announced; part 3 needs
# --enable-test-hooks).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"

TC=$YK_BUILDDIR/tests/client/yktestclient
USERS=(ann ben cid dot)
WARM_LOGINS=5
# slapd logs each operation: a search in a measured round must be a
# worker's first read of that record (by connection and filter).
YK_SLAPD_DEBUG=stats
LOGINS=10
YK_SLAPD_EXTRA_CONF="database monitor"
YK_CACHE_TTL=600
# Slowness from the load is not an outage here.
YK_KDC_EXTRA="  yubikey_ldap_timeout = 5"
unset YK_TEST_CAS_DELAY_MS YK_TEST_SHARED

yk_realm_setup
[ -x "$TC" ] || yk_fail "$TC is not built (run make first)"
for u in "${USERS[@]}" gus; do
    yk_realm_addprinc "$u" "$u-pw"
    yk_realm_enroll "$u" "$YK_TMP/$u.tok"
done
R=$YK_REALM
# Policy otp: the OTP alone is enough over FAST (mode 1 works too).
for u in "${USERS[@]}"; do
    yk_ykadmin policy "$u@$R" otp >> "$YK_KRB5_DIR/ykadmin.log" 2>&1 ||
        yk_fail "ykadmin policy $u otp failed"
done
ARMOR=$YK_TMP/armor.cc

# slapd's completed operations, "BIND SEARCH MODIFY".
ops() {
    ldapsearch -LLL -x -H "$YK_LDAP_URI" -b 'cn=Operations,cn=Monitor' \
        -s one '(|(cn=Bind)(cn=Search)(cn=Modify))' cn \
        monitorOpCompleted 2>/dev/null |
        awk '/^cn: / { op = $2 }
             /^monitorOpCompleted: / { n[op] = $2 }
             END { printf "%d %d %d\n", n["Bind"], n["Search"], n["Modify"] }'
}
read -r b0 s0 m0 <<< "$(ops)"
read -r b1 s1 m1 <<< "$(ops)"
[[ "$s0" =~ ^[0-9]+$ ]] && [ "$s1" -gt "$s0" ] ||
    yk_fail "slapd's monitor is not readable ($s0 searches, then $s1)"
# What one count itself costs (its bind and its search).
OWN_B=$((b1 - b0)) OWN_S=$((s1 - s0)) OWN_M=$((m1 - m0))

# One round: every user logs in N times (the users in parallel, each
# user's logins one after the other).  Sets LAST_OK (logins that got a
# ticket), LAST_ACC (accepted log lines), LAST_SEARCH, LAST_MODIFY,
# LAST_BIND (slapd's operations in the round) and LAST_WORKERS (accepted
# per worker).
round() {
    local n=$1 tag=$2 u i pids=() log0 b s m
    log0=$(wc -l < "$YK_KDC_LOG")
    SLOG0=$(wc -l < "$YK_TMP/slapd.log")
    read -r b s m <<< "$(ops)"
    for u in "${USERS[@]}"; do
        ( for i in $(seq "$n"); do
              KRB5_CONFIG=$YK_KRB5_CONF_PLAIN "$TC" --password "$u-pw" \
                  --emu "$YK_TMP/$u.tok" "$u" >> "$YK_TMP/$tag.$u.out" 2>&1
              echo $? >> "$YK_TMP/$tag.$u.rcs"
          done ) &
        pids+=("$!")
    done
    wait "${pids[@]}"
    read -r LAST_BIND LAST_SEARCH LAST_MODIFY <<< "$(ops)"
    LAST_BIND=$((LAST_BIND - b - OWN_B))
    LAST_SEARCH=$((LAST_SEARCH - s - OWN_S))
    LAST_MODIFY=$((LAST_MODIFY - m - OWN_M))
    LAST_OK=$(cat "$YK_TMP/$tag".*.rcs | grep -c '^0$')
    LAST_ACC=$(tail -n +"$((log0 + 1))" "$YK_KDC_LOG" |
        grep -F 'yubikey: principal=' | grep -c 'verdict=accepted')
    LAST_WORKERS=$(tail -n +"$((log0 + 1))" "$YK_KDC_LOG" |
        grep -F 'verdict=accepted' |
        sed -n 's/.*krb5kdc\[\([0-9]*\)\].*/\1/p' | sort | uniq -c |
        awk '{printf "%s%s", s, $1; s="+"}')
}

# How many of the KDC's searches since SLOG0 (slapd's stats log) read a
# record its connection had read before (same connection, same filter).
repeated_searches() {
    awk -v from="$SLOG0" '
        / SRCH base=/ && !/cn=[Mm]onitor/ {
            c = $0; sub(/.* conn=/, "", c); sub(/ .*/, "", c)
            f = $0; sub(/.* filter=/, "", f)
            k = c " " f
            if (NR > from && (k in seen)) r++
            seen[k] = 1
        }
        END { print r + 0 }' "$YK_TMP/slapd.log"
}

# Warm-up rounds until one costs no search.
warm_up() {
    local i
    for i in $(seq 8); do
        round "$WARM_LOGINS" "warm$1.$i"
        echo "warm-up round $i ($1): $LAST_OK logins, $LAST_SEARCH" \
            "searches, $LAST_MODIFY modifies"
        [ "$LAST_SEARCH" -eq 0 ] && return 0
    done
    yk_fail "$1: 8 warm-up rounds, still searching ($LAST_SEARCH in the" \
        "last): a record is not kept"
}

# The measured round of part $1 ($2: how the KDC runs), asserted.
measured() {
    local total=$((${#USERS[@]} * LOGINS))
    round "$LOGINS" "$1"
    echo "$2: $LAST_OK of $total logins, accepted by workers" \
        "$LAST_WORKERS: $LAST_MODIFY modifies, $LAST_SEARCH searches," \
        "$LAST_BIND binds"
    [ "$LAST_OK" -eq "$total" ] && [ "$LAST_ACC" -eq "$total" ] ||
        { cat "$YK_TMP/$1".*.out | grep '^result:' | sort | uniq -c >&2;
          yk_fail "$2: $LAST_OK of $total logins, $LAST_ACC accepted"; }
    # Which worker takes a login is the kernel's choice: a warm-up round
    # without a search does not prove every worker read every record.
    # A search here is allowed only as a connection's (a worker's) first
    # read of that principal's record, never a repeated one.
    local repeats
    repeats=$(repeated_searches)
    [ "$LAST_MODIFY" -eq "$total" ] && [ "$repeats" -eq 0 ] ||
        yk_fail "$2: $LAST_MODIFY modifies and $LAST_SEARCH searches" \
            "($repeats a worker's repeated read of a record) for $total" \
            "accepted OTPs (want one modify each, no search)"
    [ "$LAST_SEARCH" -eq 0 ] ||
        echo "$2: the $LAST_SEARCH searches were each a worker's first" \
            "read of a record (it had taken no login of that user before)"
    [ "$3" -le 1 ] || [[ "$LAST_WORKERS" == *+* ]] ||
        yk_fail "$2: every login went to one worker ($LAST_WORKERS): the" \
            "round shows nothing about the workers sharing state"
    yk_ok "$2: $total OTP logins (workers $LAST_WORKERS), one modify" \
        "each and no search"
}

# --- 1. krb5kdc -w 4 -----------------------------------------------------
yk_kdc_start -w 4
warm_up "-w 4"
measured w4 "krb5kdc -w 4" 4
for u in "${USERS[@]}"; do
    last=$(yk_emu_last_counter "$YK_TMP/$u.tok")
    ctr=$(yk_stored_counter "$u")
    [ "$ctr" = "$last" ] ||
        yk_fail "$u: stored counter $ctr, last OTP $last"
done
yk_ok "every token's stored counter is its last OTP's"

# The policy goes from otp to 2fa while every worker's cache says otp.
yk_armor_ccache "$ARMOR"
mode2() {
    KRB5_CONFIG=$YK_KRB5_CONF_PLAIN "$TC" --send goodotp --armor "$ARMOR" \
        --emu "$YK_TMP/$1.tok" "$1" >> "$YK_TMP/$2.$1.out" 2>&1
    echo $? >> "$YK_TMP/$2.$1.rcs"
}
pids=()
for u in "${USERS[@]}"; do mode2 "$u" p0 & pids+=("$!"); done
wait "${pids[@]}"
n=$(cat "$YK_TMP"/p0.*.rcs | grep -c '^0$')
[ "$n" -eq "${#USERS[@]}" ] ||
    { cat "$YK_TMP"/p0.*.out >&2;
      yk_fail "policy otp: $n of ${#USERS[@]} OTP-alone logins accepted"; }
for u in "${USERS[@]}"; do
    yk_ykadmin policy "$u@$R" 2fa >> "$YK_KRB5_DIR/ykadmin.log" 2>&1 ||
        yk_fail "ykadmin policy $u 2fa failed"
done
log0=$(wc -l < "$YK_KDC_LOG")
pids=()
for u in "${USERS[@]}"; do
    ( for i in 1 2 3 4 5 6; do mode2 "$u" p1; done ) &
    pids+=("$!")
done
wait "${pids[@]}"
n_ok=$(cat "$YK_TMP"/p1.*.rcs | grep -c '^0$')
n_all=$(cat "$YK_TMP"/p1.*.rcs | grep -c .)
lines=$(tail -n +"$((log0 + 1))" "$YK_KDC_LOG" | grep -F 'yubikey: principal=')
n_pol=$(grep -c 'reason=policy' <<< "$lines")
pol_workers=$(sed -n 's/.*krb5kdc\[\([0-9]*\)\].*/\1/p' <<< "$lines" |
    sort | uniq -c | awk '{printf "%s%s", s, $1; s="+"}')
echo "after the policy change: $n_ok of $n_all OTP-alone logins issued;" \
    "$n_pol refused for the policy, by workers $pol_workers"
[ "$n_ok" -eq 0 ] ||
    { grep -F 'verdict=accepted' <<< "$lines" >&2;
      yk_fail "policy changed to 2fa: $n_ok OTP-alone logins got a ticket" \
          "from a worker whose cache still said otp"; }
[ "$n_pol" -eq "$n_all" ] ||
    yk_fail "policy changed to 2fa: $n_pol of $n_all refused for the policy"
yk_ok "policy otp -> 2fa with every worker's cache saying otp: all $n_all" \
    "OTP-alone logins refused (policy), workers $pol_workers"
yk_kdc_stop

# --- 2. krb5kdc -w 1, and a garbage OTP on a fresh record -----------------
yk_kdc_start -w 1
warm_up "-w 1"
measured w1 "krb5kdc -w 1" 1
pubid=$("$YK_YKEMU_BIN" --public-id "$YK_TMP/gus.tok")
garbage=${pubid}cccccccccccccccccccccccccccccccc
read -r b s m <<< "$(ops)"
log0=$(wc -l < "$YK_KDC_LOG")
t0=$(yk_ms)
KRB5_CONFIG=$YK_KRB5_CONF_PLAIN "$TC" --password gus-pw --otp "$garbage" \
    gus > "$YK_TMP/gus.out" 2>&1 &&
    yk_fail "gus: a garbage OTP got a ticket"
t_garbage=$(($(yk_ms) - t0))
read -r b2 s2 m2 <<< "$(ops)"
gs=$((s2 - s - OWN_S)) gm=$((m2 - m - OWN_M))
line=$(tail -n +"$((log0 + 1))" "$YK_KDC_LOG" | grep -F 'principal=gus@')
echo "garbage OTP: $line"
grep -q 'verdict=refused' <<< "$line" ||
    yk_fail "gus: the garbage OTP was not refused (log: $line)"
# Over 2 s between the hint's read and the verify (a very loaded
# machine), the record is no longer fresh: one re-read, by design.
max_s=1
[ "$t_garbage" -lt 1900 ] || max_s=2
[ "$gs" -ge 1 ] && [ "$gs" -le "$max_s" ] && [ "$gm" -eq 0 ] ||
    yk_fail "gus: a garbage OTP on a fresh record cost $gs searches and" \
        "$gm modifies (want the hint's one search, nothing more)"
yk_ok "a garbage OTP on a fresh record: refused, no LDAP operation beyond" \
    "the hint's one search"
yk_kdc_stop

# --- 3. for comparison: -w 4 without the shared table ---------------------
grep -q '^#define YK_TEST_HOOKS 1' "$YK_BUILDDIR/config.h" 2>/dev/null ||
    yk_skip "parts 1 and 2 passed; part 3 (the comparison) needs a build" \
        "configured with --enable-test-hooks (YK_TEST_SHARED)"
export YK_TEST_SHARED=0
yk_kdc_start -w 4
unset YK_TEST_SHARED
round "$WARM_LOGINS" warm.off   # each worker's cache filled
total=$((${#USERS[@]} * LOGINS))
round "$LOGINS" w4off
[ "$LAST_OK" -eq "$total" ] ||
    yk_fail "without the shared table: $LAST_OK of $total logins"
echo "NOTE (not asserted): without the shared table, krb5kdc -w 4: $total" \
    "logins (workers $LAST_WORKERS) cost $LAST_MODIFY modifies and" \
    "$LAST_SEARCH searches (each lost swap costs a search and a modify)"
yk_ok "all parts passed"
