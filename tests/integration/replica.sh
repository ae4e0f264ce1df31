# SPDX-License-Identifier: MIT
# replica.sh: two slapd providers in multi-provider replication (lib.sh).
#
# Source it from a bash test after lib.sh (realm.sh sources lib.sh), then:
#   yk_replica_setup         two slapd.conf files from lib.sh's (same
#                            schema, ACLs and seed entries), each a
#                            provider (syncprov) and a consumer of the
#                            other (syncrepl), serverID 1 and 2
#   yk_replica_start         start both on 127.0.0.1 (A first); sets
#                            YK_LDAP_URI_A/_B, YK_SLAPD_PID_A/_B and
#                            leaves lib.sh's YK_LDAP_URI, YK_SLAPD_PID,
#                            YK_SLAPD_PORT naming A, so that realm.sh and
#                            kldaprealm.sh build their realm on A
#   yk_replica_stop_a / yk_replica_start_a
#                            stop A by PID / start it again on its port
#   yk_replica_wait_sync [MS]
#                            wait until B holds every change A holds and
#                            the other way round (equal contextCSN sets);
#                            fail after MS (default 10000) ms; sets
#                            YK_REPLICA_WAITED (ms)
#   yk_replica_wait_attr URI DN ATTR REGEX [MS]
#                            poll the server at URI until an ATTR value of
#                            DN matches the extended REGEX; fail after MS
#                            (default 10000); sets YK_REPLICA_WAITED (ms)
#   yk_replica_values URI DN ATTR
#                            the ATTR values of DN at URI, one a line
#                            (read as the rootdn)
#   yk_replica_disable_on_b NAME PW FILE
#                            (realm.sh, two KDCs swapping on A) NAME's
#                            token disabled with ykadmin on B: how long
#                            until both KDCs refuse it, the delay B -> A
#   yk_replica_consumer_start
#                            a third server C, a read-only consumer of A
#                            (YK_LDAP_URI_C, YK_SLAPD_PID_C)
#   YK_REPLICA_CONFIG_READER (set before yk_replica_setup) a DN that may
#                            read each server's cn=config
#   yk_replica_rounds_prereq / yk_replica_rounds NAME PW FILE ROUNDS
#                            (realm.sh, two KDCs) one OTP at once to both
#                            KDCs, ROUNDS times: one ticket each round
#
# The replication (slapd.conf of each, OpenLDAP 2.5):
#   serverID N                          (global: 1 for A, 2 for B)
#   moduleload syncprov
#   syncrepl rid=00M provider=ldap://127.0.0.1:<the other's port>/
#            bindmethod=simple binddn="cn=replicator,BASE"
#            credentials=... searchbase="BASE" type=refreshAndPersist
#            retry="1 +" timeout=3 network-timeout=2
#   multiprovider on                    (2.5's name for mirrormode/MMR)
#   limits dn.exact="cn=replicator,BASE" size=unlimited time=unlimited
#   overlay syncprov
#   syncprov-checkpoint 100 1
# and, in front of every other access rule (YK_SLAPD_PRE_ACL), the
# replication identity reads everything, the token secrets, the Kerberos
# keys and userPassword included:
#   access to * by dn.exact="cn=replicator,BASE" read by * break
# The seed entries are loaded into A with slapadd, the replicator's entry
# added; B gets a slapcat copy of A (same entryUUIDs and entryCSNs), so
# both start in sync.  Knobs: those of lib.sh (YK_SLAPD_EXTRA_ACL, ...;
# not YK_SLAPD_LDAPI: both would share its socket path).  Every process
# is stopped by lib.sh's trap.

YK_REPL_DN="cn=replicator,$YK_LDAP_BASE"
YK_REPL_PW=replicator-secret
YK_REPLICA_DIR_A=
YK_REPLICA_DIR_B=
YK_REPLICA_PORT_A=
YK_REPLICA_PORT_B=
YK_LDAP_URI_A=
YK_LDAP_URI_B=
YK_SLAPD_PID_A=
YK_SLAPD_PID_B=
YK_REPLICA_WAITED=

# A free port for a slapd, not one taken already in this test.
yk_replica_free_port() {
    local port _
    for _ in $(seq 50); do
        port=$(yk_random_port)
        case " ${YK_REPLICA_PORT_A:-} ${YK_REPLICA_PORT_B:-} " in
            *" $port "*) continue ;;
        esac
        yk_port_busy "$port" || { echo "$port"; return 0; }
    done
    return 1
}

# The replication lines of server ID (1 or 2) that reads from PEER_PORT:
# $1 = "global" prints the global ones, "db" the database ones, "overlay"
# the overlay.
yk_replica_conf_lines() {
    local part=$1 id=$2 peer=$3 dir=$4
    case "$part" in
        global)
            echo "serverID $id"
            [ "${YK_REPLICA_DELTA:-0}" = 1 ] && echo "moduleload accesslog"
            ;;
        logdb)
            [ "${YK_REPLICA_DELTA:-0}" = 1 ] || return 0
            cat <<EOF
# --- delta-syncrepl: the log of every write, replicated from ---
database mdb
suffix "cn=accesslog"
directory $dir/log
maxsize 33554432
index entryCSN,objectClass,reqEnd,reqResult,reqStart,reqDN eq
access to * by dn.exact="$YK_REPL_DN" read by * none
limits dn.exact="$YK_REPL_DN" size=unlimited time=unlimited
overlay syncprov
syncprov-nopresent TRUE
syncprov-reloadhint TRUE

EOF
            ;;
        db)
            cat <<EOF
# --- multi-provider replication: this server consumes from the other ---
syncrepl rid=00$((3 - id)) provider=ldap://127.0.0.1:$peer/
	bindmethod=simple binddn="$YK_REPL_DN" credentials=$YK_REPL_PW
	searchbase="$YK_LDAP_BASE" type=refreshAndPersist
	retry="1 +" timeout=3 network-timeout=2
EOF
            [ "${YK_REPLICA_DELTA:-0}" = 1 ] && cat <<EOF
	logbase="cn=accesslog" syncdata=accesslog
	logfilter="(&(objectClass=auditWriteObject)(reqResult=0))"
EOF
            cat <<EOF
multiprovider on
limits dn.exact="$YK_REPL_DN" size=unlimited time=unlimited
EOF
            ;;
        overlay)
            cat <<EOF
# --- ... and provides to it ---
overlay syncprov
syncprov-checkpoint 100 1
EOF
            [ "${YK_REPLICA_DELTA:-0}" = 1 ] && cat <<EOF
overlay accesslog
logdb cn=accesslog
logops writes
logsuccess TRUE
logpurge 07+00:00 01+00:00
EOF
            ;;
    esac
    return 0
}

# The consumer's lines (yk_replica_consumer_start): it pulls from
# PROVIDER_PORT ($3), provides nothing, is no provider.
yk_replica_consumer_lines() {
    case "$1" in
        db)
            cat <<EOF
# --- a read-only consumer of A ---
syncrepl rid=003 provider=ldap://127.0.0.1:$3/
	bindmethod=simple binddn="$YK_REPL_DN" credentials=$YK_REPL_PW
	searchbase="$YK_LDAP_BASE" type=refreshAndPersist
	retry="1 +" timeout=3 network-timeout=2
EOF
            ;;
    esac
}

# The config database, readable by YK_REPLICA_CONFIG_READER (a DN) when
# set: what the KDC's start-up probe may read (store_probe.c).
yk_replica_config_db() {
    [ -n "${YK_REPLICA_CONFIG_READER:-}" ] || return 0
    cat <<EOF
database config
access to * by dn.exact="$YK_REPLICA_CONFIG_READER" read by * none

EOF
}

# Make DIR/slapd.conf from lib.sh's TEMPLATE: its paths moved to DIR,
# serverID ID, the replication from PEER_PORT; LINES names the function
# that prints the replication lines (yk_replica_conf_lines, or
# yk_replica_consumer_lines for a consumer).
yk_replica_write_conf() {
    local template=$1 dir=$2 id=$3 peer=$4 lines=${5:-yk_replica_conf_lines}
    local src
    src=$(dirname "$template")
    mkdir -p "$dir/db" "$dir/log" || yk_fail "mkdir $dir/db $dir/log"
    awk -v src="$src/" -v dst="$dir/" \
        -v global="$("$lines" global "$id" "$peer" "$dir")" \
        -v cfg="$(yk_replica_config_db)" \
        -v logdb="$("$lines" logdb "$id" "$peer" "$dir")" \
        -v db="$("$lines" db "$id" "$peer" "$dir")" \
        -v ovl="$("$lines" overlay "$id" "$peer" "$dir")" '
        { gsub(src, dst) }
        /^moduleload unique$/ { print; print "moduleload syncprov"; next }
        /^database mdb$/ && !done_global { print global; print "";
            print cfg; print logdb; done_global = 1 }
        /^index yubikeyPublicId eq$/ { print; print ""; print db; next }
        /^# One token, one principal/ { print ovl; print "" }
        { print }' "$template" > "$dir/slapd.conf" ||
        yk_fail "cannot write $dir/slapd.conf"
    grep -q '^syncrepl rid=' "$dir/slapd.conf" ||
        yk_fail "$dir/slapd.conf: replication lines not placed"
    [ "$lines" = yk_replica_consumer_lines ] && return 0
    if ! grep -q '^multiprovider on' "$dir/slapd.conf" ||
        ! grep -q '^overlay syncprov' "$dir/slapd.conf" ||
        ! grep -q "^serverID $id" "$dir/slapd.conf"; then
        yk_fail "$dir/slapd.conf: replication lines not placed"
    fi
}

# A third server C, a read-only consumer of A (syncrepl, no
# multiprovider, no syncprov), loaded from A's copy and started on its
# own port: sets YK_LDAP_URI_C, YK_SLAPD_PID_C.  lib.sh's variables still
# name A afterwards.
yk_replica_consumer_start() {
    local port=$YK_SLAPD_PORT pid=$YK_SLAPD_PID uri=$YK_LDAP_URI
    YK_REPLICA_DIR_C=$YK_TMP/slapd-c
    yk_replica_write_conf "$YK_TMP/slapd/slapd.conf" "$YK_REPLICA_DIR_C" 3 \
        "$YK_REPLICA_PORT_A" yk_replica_consumer_lines
    yk_replica_copy_a "$YK_REPLICA_DIR_C" C
    YK_SLAPD_PORT=$(yk_replica_free_port) || yk_fail "no free port"
    yk_slapd_start -f "$YK_REPLICA_DIR_C/slapd.conf"
    YK_SLAPD_PID_C=$YK_SLAPD_PID
    YK_LDAP_URI_C=$YK_LDAP_URI
    YK_SLAPD_PORT=$port YK_SLAPD_PID=$pid YK_LDAP_URI=$uri
}

# The replicator's entry (LDIF).
yk_replica_identity_ldif() {
    cat <<EOF

dn: $YK_REPL_DN
objectClass: organizationalRole
objectClass: simpleSecurityObject
cn: replicator
userPassword: $YK_REPL_PW
EOF
}

# Both servers configured and loaded (not started).
yk_replica_setup() {
    local template ldif
    [ -n "$YK_TMP" ] || yk_init
    [ -f "$YK_SLAPD_MODULES/syncprov.la" ] ||
        [ -f "$YK_SLAPD_MODULES/syncprov.so" ] ||
        yk_skip "slapo-syncprov not found in $YK_SLAPD_MODULES"
    if [ "${YK_REPLICA_DELTA:-0}" = 1 ] &&
        [ ! -f "$YK_SLAPD_MODULES/accesslog.la" ] &&
        [ ! -f "$YK_SLAPD_MODULES/accesslog.so" ]; then
        yk_skip "slapo-accesslog (delta-syncrepl) not found in" \
            "$YK_SLAPD_MODULES"
    fi
    [ "${YK_SLAPD_LDAPI:-0}" = 1 ] &&
        yk_fail "yk_replica_setup: YK_SLAPD_LDAPI is not supported"
    YK_SLAPD_PRE_ACL="access to * by dn.exact=\"$YK_REPL_DN\" read by * break
${YK_SLAPD_PRE_ACL:-}"
    # lib.sh's slapd.conf and seed, as the template of both.
    yk_slapd_setup
    template=$YK_TMP/slapd/slapd.conf
    YK_REPLICA_PORT_A=$(yk_replica_free_port) || yk_fail "no free port"
    YK_REPLICA_PORT_B=$(yk_replica_free_port) || yk_fail "no free port"
    YK_REPLICA_DIR_A=$YK_TMP/slapd-a
    YK_REPLICA_DIR_B=$YK_TMP/slapd-b
    yk_replica_write_conf "$template" "$YK_REPLICA_DIR_A" 1 \
        "$YK_REPLICA_PORT_B"
    yk_replica_write_conf "$template" "$YK_REPLICA_DIR_B" 2 \
        "$YK_REPLICA_PORT_A"

    ldif=$YK_TMP/replica-seed.ldif
    { slapcat -f "$template" -o ldif-wrap=no 2>> "$YK_TMP/slapadd.log" ||
          yk_fail "slapcat of the seed failed"
      yk_replica_identity_ldif; } > "$ldif"
    slapadd -q -w -b "$YK_LDAP_BASE" -f "$YK_REPLICA_DIR_A/slapd.conf" -l "$ldif" \
        >> "$YK_TMP/slapadd.log" 2>&1 ||
        { cat "$YK_TMP/slapadd.log" >&2; yk_fail "slapadd (A) failed"; }
    yk_replica_copy_a "$YK_REPLICA_DIR_B" B
}

# Load A's entries (slapcat, same entryUUIDs and entryCSNs) into the
# server of DIR (its slapd.conf), called NAME in errors.
yk_replica_copy_a() {
    slapcat -b "$YK_LDAP_BASE" -f "$YK_REPLICA_DIR_A/slapd.conf" -o ldif-wrap=no \
        -l "$YK_TMP/replica-$2.ldif" >> "$YK_TMP/slapadd.log" 2>&1 ||
        yk_fail "slapcat (A, for $2) failed"
    slapadd -q -w -b "$YK_LDAP_BASE" -f "$1/slapd.conf" -l "$YK_TMP/replica-$2.ldif" \
        >> "$YK_TMP/slapadd.log" 2>&1 ||
        { cat "$YK_TMP/slapadd.log" >&2; yk_fail "slapadd ($2) failed"; }
}

# Start A (on its port), remembering it as lib.sh's server.
yk_replica_start_a() {
    YK_SLAPD_PORT=$YK_REPLICA_PORT_A
    yk_slapd_start -f "$YK_REPLICA_DIR_A/slapd.conf"
    YK_SLAPD_PID_A=$YK_SLAPD_PID
    YK_LDAP_URI_A=$YK_LDAP_URI
}

# Stop A by PID (B keeps running).
yk_replica_stop_a() {
    [ -n "$YK_SLAPD_PID_A" ] || return 0
    yk_stop_pid "$YK_SLAPD_PID_A"
    YK_SLAPD_PID_A=
    YK_SLAPD_PID=
}

# Start both; lib.sh's variables name A afterwards.
yk_replica_start() {
    YK_SLAPD_PORT=$YK_REPLICA_PORT_B
    yk_slapd_start -f "$YK_REPLICA_DIR_B/slapd.conf"
    YK_SLAPD_PID_B=$YK_SLAPD_PID
    YK_LDAP_URI_B=$YK_LDAP_URI
    yk_replica_start_a
    yk_replica_wait_sync 15000
}

# The ATTR values of DN at URI, one a line, read as the rootdn.
yk_replica_values() {
    ldapsearch -LLL -x -o ldif-wrap=no -H "$1" -D "$YK_ADMIN_DN" \
        -w "$YK_ADMIN_PW" -b "$2" -s base '(objectClass=*)' "$3" \
        2>/dev/null | sed -n "s/^$3: //Ip"
}

# Sleep about 10 ms between polls.
yk_replica_nap() {
    sleep 0.01
}

# Wait until A and B hold the same contextCSN values (each the newest
# change of one server ID that it has seen): then each holds every change
# of the other.
yk_replica_wait_sync() {
    local limit=${1:-10000} t0 a b
    t0=$(yk_ms)
    for (( ; ; )); do
        a=$(yk_replica_values "$YK_LDAP_URI_A" "$YK_LDAP_BASE" contextCSN |
            sort)
        b=$(yk_replica_values "$YK_LDAP_URI_B" "$YK_LDAP_BASE" contextCSN |
            sort)
        YK_REPLICA_WAITED=$(($(yk_ms) - t0))
        [ -n "$a" ] && [ "$a" = "$b" ] && return 0
        [ "$YK_REPLICA_WAITED" -lt "$limit" ] ||
            yk_fail "A and B not in sync after $limit ms: A" \
                "contextCSN ${a//$'\n'/ }, B ${b//$'\n'/ }"
        yk_replica_nap
    done
}

# Poll URI until an ATTR value of DN matches REGEX (extended).
yk_replica_wait_attr() {
    local uri=$1 dn=$2 attr=$3 re=$4 limit=${5:-10000} t0
    t0=$(yk_ms)
    for (( ; ; )); do
        yk_replica_values "$uri" "$dn" "$attr" | grep -Eq -- "$re" &&
            { YK_REPLICA_WAITED=$(($(yk_ms) - t0)); return 0; }
        YK_REPLICA_WAITED=$(($(yk_ms) - t0))
        [ "$YK_REPLICA_WAITED" -lt "$limit" ] ||
            yk_fail "$uri: $dn has no $attr matching $re after $limit ms"
        yk_replica_nap
    done
}

# What yk_replica_rounds needs, before anything else: a build with the
# test hooks (else skip, loudly), the temp dir (yk_init), the Kerberos
# programs, the test client.
yk_replica_rounds_prereq() {
    grep -q '^#define YK_TEST_HOOKS 1' "$YK_BUILDDIR/config.h" 2>/dev/null ||
        yk_skip "needs a build configured with --enable-test-hooks" \
            "(YK_TEST_CAS_DELAY_MS makes both KDCs race to the swap)"
    unset YK_TEST_CAS_DELAY_MS
    yk_init
    yk_realm_check_tools
    [ -x "$YK_BUILDDIR/tests/client/yktestclient" ] ||
        yk_fail "tests/client/yktestclient is not built (run make first)"
}

# yk_replica_rounds NAME PW FILE ROUNDS: ROUNDS times, the next OTP of
# the emulated token FILE (NAME@REALM's, password PW) sent at the same
# moment to the first KDC (YK_KRB5_CONF_PLAIN) and to the second
# (YK_KRB5_CONF_KDC2) with tests/client/yktestclient.  Each round: one
# ticket exactly; the winner's KDC logs "verdict=accepted", the loser's
# "verdict=refused reason=replay" for that counter, and the write
# provider A stores that counter.  Prints one line per round; sets
# YK_ROUNDS_WON1/2 (rounds each KDC won), YK_ROUND_MIN_MS (the
# quickest round) and YK_LAST_ROUND_OTP (the last round's OTP).
yk_replica_rounds() {
    local name=$1 pw=$2 tok=$3 rounds=$4 tc round otp ctr pubid t0 ms
    local rc1 rc2 l1 l2 state pids
    tc=$YK_BUILDDIR/tests/client/yktestclient
    [ -x "$tc" ] || yk_fail "$tc is not built (run make first)"
    pubid=$("$YK_YKEMU_BIN" --public-id "$tok")
    YK_ROUNDS_WON1=0 YK_ROUNDS_WON2=0 YK_ROUND_MIN_MS=
    for round in $(seq "$rounds"); do
        otp=$(yk_otp "$tok")
        YK_LAST_ROUND_OTP=$otp
        ctr=$(yk_emu_last_counter "$tok")
        t0=$(yk_ms)
        ( KRB5_CONFIG=$YK_KRB5_CONF_PLAIN "$tc" --password "$pw" \
              --otp "$otp" "$name" > "$YK_TMP/round.1.out" 2>&1
          echo $? > "$YK_TMP/round.1.rc" ) &
        pids=("$!")
        ( KRB5_CONFIG=$YK_KRB5_CONF_KDC2 "$tc" --password "$pw" \
              --otp "$otp" "$name" > "$YK_TMP/round.2.out" 2>&1
          echo $? > "$YK_TMP/round.2.rc" ) &
        pids+=("$!")
        wait "${pids[@]}"
        ms=$(($(yk_ms) - t0))
        [ -z "$YK_ROUND_MIN_MS" ] || [ "$ms" -lt "$YK_ROUND_MIN_MS" ] &&
            YK_ROUND_MIN_MS=$ms
        rc1=$(cat "$YK_TMP/round.1.rc") rc2=$(cat "$YK_TMP/round.2.rc")
        l1=$(yk_kdc_attempts "$name@$YK_REALM" |
            grep -F "pubid=$pubid counter=$ctr ")
        l2=$(yk_kdc_attempts "$name@$YK_REALM" "$YK_KDC2_LOG" |
            grep -F "pubid=$pubid counter=$ctr ")
        [ "$(printf '%s\n' "$l1" | grep -c .)" -eq 1 ] &&
            [ "$(printf '%s\n' "$l2" | grep -c .)" -eq 1 ] ||
            { cat "$YK_TMP"/round.?.out >&2;
              yk_fail "round $round: not one log line per KDC: $l1 / $l2"; }
        if [ "$rc1" = 0 ] && [ "$rc2" = 1 ]; then
            YK_ROUNDS_WON1=$((YK_ROUNDS_WON1 + 1))
            case "$l1" in *" verdict=accepted "*) ;; *) false ;; esac &&
                case "$l2" in *" verdict=refused reason=replay") ;;
                    *) false ;; esac ||
                yk_fail "round $round: KDC logs: $l1 / $l2"
        elif [ "$rc1" = 1 ] && [ "$rc2" = 0 ]; then
            YK_ROUNDS_WON2=$((YK_ROUNDS_WON2 + 1))
            case "$l2" in *" verdict=accepted "*) ;; *) false ;; esac &&
                case "$l1" in *" verdict=refused reason=replay") ;;
                    *) false ;; esac ||
                yk_fail "round $round: KDC logs: $l1 / $l2"
        else
            cat "$YK_TMP"/round.?.out >&2
            yk_fail "round $round: exit codes $rc1 (KDC 1), $rc2 (KDC 2):" \
                "not one ticket and one refusal; logs: $l1 / $l2"
        fi
        state=$(yk_replica_values "$YK_LDAP_URI_A" \
            "$(yk_replica_holder_dn "$name")" yubikeyTokenState)
        [ "$(printf '%s\n' "$state" | grep -c .)" -eq 1 ] &&
            [[ "$state" == *" ctr=$ctr "* ]] ||
            yk_fail "round $round: A stores \"$state\", not counter $ctr"
        echo "round $round: counter $ctr: one ticket (KDC" \
            "$([ "$rc1" = 0 ] && echo 1 || echo 2)), the other KDC" \
            "refused it as a replay; $ms ms"
    done
}

# The DN of the entry that holds NAME's tokens (found on A by
# krbPrincipalName: a DB2 realm's people entry or a kldap principal).
yk_replica_holder_dn() {
    ldapsearch -LLL -x -o ldif-wrap=no -H "$YK_LDAP_URI_A" \
        -D "$YK_ADMIN_DN" -w "$YK_ADMIN_PW" -b "$YK_LDAP_BASE" \
        "(krbPrincipalName=$1@$YK_REALM)" 1.1 | sed -n 's/^dn: //p'
}

# yk_replica_disable_on_b NAME PW FILE: NAME's token (emulated in FILE,
# password PW) disabled with ykadmin on B (--uri B --write-uri B), with
# two KDCs up (realm.sh: KDC 1 on YK_KRB5_CONF_PLAIN, KDC 2 on
# YK_KRB5_CONF_KDC2) that swap on A.  Both KDCs cache the record first
# (one login each); then fresh OTPs to both until both refuse it
# ("disabled token"), and it stays refused; then the delay B -> A alone,
# 10 ykadmin enable / disable on B with A polled; then A and B hold the
# same token record and state value, the token disabled.  Sets
# YK_DIS_REFUSED1 / 2 (ms after ykadmin returned until KDC 1 / 2
# refused), YK_DIS_ON_A (ms until A held the disable), YK_DIS_ACCEPTED /
# YK_DIS_TRIES (OTPs accepted before / sent), YK_DIS_DELAYS (the 10
# delays B -> A, sorted), YK_DIS_POLL (one poll's cost).
yk_replica_disable_on_b() {
    local name=$1 pw=$2 tok=$3 dn pubid t0 now rc k poll_pid i cmd st attr
    local va vb limit=${YK_POLL_LIMIT_MS:-10000} delays=()
    dn=$(yk_replica_holder_dn "$name")
    pubid=$("$YK_YKEMU_BIN" --public-id "$tok")
    # One login on each KDC: both cache the record.
    for k in 1 2; do
        yk_replica_otp_to "$k" "$name" "$pw" "$tok" ||
            { cat "$YK_TMP/otp_to.out" >&2;
              yk_fail "$name: login on KDC $k refused before the disable"; }
    done
    yk_replica_wait_sync
    # When A holds the disable: polled in the background, from before
    # the disable (absolute ms in a file).
    rm -f "$YK_TMP/a-disabled.ms"
    ( yk_replica_wait_attr "$YK_LDAP_URI_A" "$dn" yubikeyTokenSecret \
          " id=$pubid st=disabled " "$limit" &&
          yk_ms > "$YK_TMP/a-disabled.ms" ) &
    poll_pid=$!
    yk_ykadmin --uri "$YK_LDAP_URI_B" --write-uri "$YK_LDAP_URI_B" \
        --base "$YK_LDAP_BASE" disable "$pubid" > "$YK_TMP/disable.out" 2>&1 ||
        { cat "$YK_TMP/disable.out" >&2;
          yk_fail "ykadmin disable on B failed"; }
    t0=$(yk_ms)
    YK_DIS_REFUSED1= YK_DIS_REFUSED2= YK_DIS_ACCEPTED=0 YK_DIS_TRIES=0
    while [ -z "$YK_DIS_REFUSED1" ] || [ -z "$YK_DIS_REFUSED2" ]; do
        for k in 1 2; do
            [ "$k" = 1 ] && [ -n "$YK_DIS_REFUSED1" ] && continue
            [ "$k" = 2 ] && [ -n "$YK_DIS_REFUSED2" ] && continue
            YK_DIS_TRIES=$((YK_DIS_TRIES + 1))
            yk_replica_otp_to "$k" "$name" "$pw" "$tok"
            rc=$?
            now=$(($(yk_ms) - t0))
            case "$rc:$YK_LAST_LINE" in
                "0:"*" verdict=accepted "*)
                    YK_DIS_ACCEPTED=$((YK_DIS_ACCEPTED + 1)) ;;
                "1:"*" verdict=refused reason=disabled token")
                    eval "YK_DIS_REFUSED$k=$now" ;;
                *)
                    cat "$YK_TMP/otp_to.out" >&2
                    yk_fail "$name on KDC $k after the disable: exit $rc," \
                        "log: $YK_LAST_LINE" ;;
            esac
        done
        [ "$now" -lt "$limit" ] ||
            yk_fail "$name's disabled token still accepted after $now ms"
    done
    wait "$poll_pid"
    [ -s "$YK_TMP/a-disabled.ms" ] ||
        yk_fail "A did not get the disable within $limit ms"
    YK_DIS_ON_A=$(($(cat "$YK_TMP/a-disabled.ms") - t0))
    # It stays refused, on both.
    for k in 1 2; do
        yk_replica_otp_to "$k" "$name" "$pw" "$tok" &&
            yk_fail "$name: accepted again on KDC $k"
        [[ "$YK_LAST_LINE" == *" verdict=refused reason=disabled token" ]] ||
            yk_fail "$name on KDC $k: $YK_LAST_LINE"
    done
    # The replication B -> A alone, 10 times.
    for i in $(seq 10); do
        cmd=enable st=active
        [ $((i % 2)) -eq 0 ] && cmd=disable st=disabled
        yk_ykadmin --uri "$YK_LDAP_URI_B" --write-uri "$YK_LDAP_URI_B" \
            --base "$YK_LDAP_BASE" "$cmd" "$pubid" \
            > "$YK_TMP/disable.out" 2>&1 ||
            { cat "$YK_TMP/disable.out" >&2;
              yk_fail "ykadmin $cmd on B failed"; }
        yk_replica_wait_attr "$YK_LDAP_URI_A" "$dn" yubikeyTokenSecret \
            " id=$pubid st=$st " "$limit"
        delays+=("$YK_REPLICA_WAITED")
    done
    YK_DIS_DELAYS=$(printf '%s\n' "${delays[@]}" | sort -n | tr '\n' ' ')
    # What one poll costs: the value is there already.
    yk_replica_wait_attr "$YK_LDAP_URI_A" "$dn" yubikeyTokenSecret \
        " id=$pubid st=disabled " "$limit"
    YK_DIS_POLL=$YK_REPLICA_WAITED
    yk_replica_wait_sync
    for attr in yubikeyTokenSecret yubikeyTokenState; do
        va=$(yk_replica_values "$YK_LDAP_URI_A" "$dn" "$attr")
        vb=$(yk_replica_values "$YK_LDAP_URI_B" "$dn" "$attr")
        [ "$va" = "$vb" ] && [ "$(printf '%s\n' "$va" | grep -c .)" -eq 1 ] ||
            yk_fail "$name's $attr differs or is not one value: A" \
                "\"$va\", B \"$vb\""
    done
    [[ "$(yk_replica_values "$YK_LDAP_URI_A" "$dn" yubikeyTokenSecret)" == \
        *" st=disabled "* ]] || yk_fail "the disable was lost in replication"
}

# yk_replica_otp_to K NAME PW FILE: NAME's password and next OTP of FILE
# to KDC K (1 or 2) through the test client; its exit code (0 issued, 1
# refused, 2 no reply); the KDC's line in YK_LAST_LINE, the client's
# output in $YK_TMP/otp_to.out.
yk_replica_otp_to() {
    local conf=$YK_KRB5_CONF_PLAIN log=$YK_KDC_LOG rc
    [ "$1" = 2 ] && conf=$YK_KRB5_CONF_KDC2 log=$YK_KDC2_LOG
    KRB5_CONFIG=$conf "$YK_BUILDDIR/tests/client/yktestclient" \
        --password "$3" --emu "$4" "$2" > "$YK_TMP/otp_to.out" 2>&1
    rc=$?
    YK_LAST_LINE=$(yk_kdc_attempts "$2@$YK_REALM" "$log" | tail -1)
    return $rc
}
