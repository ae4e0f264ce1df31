#!/bin/bash
# SPDX-License-Identifier: MIT
# connect.sh: opening an LDAP connection never blocks a KDC worker
# (shared/store_open.c).
#
# libldap's connect, TLS handshake and SASL bind block; in the KDC they
# run in a thread while the attempt waits.  A DB2 realm, krb5kdc with ONE
# worker, yubikey_ldap_timeout 4 s, the records cached (dave's too).  For
# each way of opening:
#   a. ldaps:// (a TLS handshake), verified against the test CA;
#   b. ldapi:// with SASL EXTERNAL (ldap_sasl_interactive_bind_s);
# slapd is stopped (an OTP login meanwhile is DISCARDed, and the KDC
# drops its write connection), started again and frozen: the next OTP
# login must open a new connection, and its handshake or bind gets no
# answer.  Meanwhile dave's password kinit and a kvno on the same
# worker are answered in milliseconds, before the OTP login is; the OTP
# login is then DISCARDed within its budget.  Thawed, the next OTP login
# opens a connection the same way and is accepted.
# Exit 0 pass, 1 fail, 77 skip (announced).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"

R=$YK_REALM
TC=$YK_BUILDDIR/tests/client/yktestclient
SVC=host/svc.example.com
TIMEOUT_S=4
BUDGET_MS=$((2 * TIMEOUT_S * 1000))
FAST_MS=1000                    # "in milliseconds", on a loaded 2-core box
YK_BREAKER_TIME=1
YK_CACHE_TTL=600
YK_SLAPD_LDAPI=1
YK_KDC_UDP_PORT=$(yk_realm_free_port) || yk_fail "no free port"
[ -x "$TC" ] || yk_fail "$TC is not built (run make first)"

yk_init
PKI=$YK_TMP/tls
yk_tls_pki "$PKI"
SPORT=$(yk_realm_free_port) || yk_fail "no free port"
LDAPS="ldaps://127.0.0.1:$SPORT/"
YK_SLAPD_EXTRA_URLS=$LDAPS
YK_SLAPD_EXTRA_CONF=$(yk_slapd_tls_conf "$PKI")

yk_realm_setup
yk_realm_addprinc dave dave-pw
yk_realm_service "$SVC"
yk_realm_addprinc alice alice-pw
yk_realm_enroll alice "$YK_TMP/alice.tok"

# The KDC's directory: URI, and RELATIONS (lines) added to the realm.
use() {
    local saved=$YK_LDAP_URI
    [ -n "$YK_KDC_PID" ] && yk_kdc_stop
    YK_LDAP_URI=$1 YK_KDC_EXTRA="  yubikey_ldap_timeout = $TIMEOUT_S
$2"
    yk_realm_write_config
    YK_LDAP_URI=$saved
    yk_kdc_start
}

# alice's OTP login with the next OTP; exit status (2: no reply).
otp_login() {
    KRB5_CONFIG=$YK_KRB5_CONF_PLAIN "$TC" --password alice-pw \
        --emu "$YK_TMP/alice.tok" alice > "$YK_TMP/tc.out" 2>&1
}

# frozen LABEL: the case described at the top, with the KDC started on
# the configuration under test.
frozen() {
    local label=$1 log0 t0 rc t_dave t_kvno ms done_early=0 kinit_ok=0
    # Warm up: alice's and dave's records cached, the connections open.
    otp_login || { cat "$YK_TMP/tc.out" >&2; tail -3 "$YK_KDC_LOG" >&2;
                   yk_fail "$label: warm-up OTP login refused"; }
    KRB5_CONFIG=$YK_KRB5_CONF_PLAIN kinit dave > "$YK_TMP/kinit.out" 2>&1 \
        <<< "dave-pw" || { cat "$YK_TMP/kinit.out" >&2;
                           yk_fail "$label: dave's warm-up kinit refused"; }
    # The KDC's write connection dies with slapd: an OTP login while it
    # is stopped is DISCARDed and drops it.  (Over TLS the server's
    # close_notify is data, so an idle connection does not look closed
    # until it is used.)  The new slapd is frozen; the breaker cools.
    yk_slapd_stop
    otp_login
    rc=$?
    [ "$rc" -eq 2 ] || { cat "$YK_TMP/tc.out" >&2;
        yk_fail "$label: slapd stopped: exit $rc, expected 2 (DISCARDed)"; }
    yk_slapd_start
    yk_slapd_freeze
    sleep $((YK_BREAKER_TIME + 1))
    log0=$(wc -l < "$YK_KDC_LOG")
    rm -f "$YK_TMP/otp.rc"
    t0=$(yk_ms)
    ( otp_login; echo $? > "$YK_TMP/otp.rc" ) &
    local bg=$!
    # Until the attempt is opening its connection.
    sleep 1
    KRB5_CONFIG=$YK_KRB5_CONF_PLAIN yk_timed kinit dave \
        > "$YK_TMP/kinit.out" 2>&1 <<< "dave-pw" && kinit_ok=1
    t_dave=$ELAPSED
    KRB5_CONFIG=$YK_KRB5_CONF_PLAIN yk_timed kvno "$SVC" \
        > "$YK_TMP/kvno.out" 2>&1 || { cat "$YK_TMP/kvno.out" >&2;
                                       yk_fail "$label: kvno failed"; }
    t_kvno=$ELAPSED
    [ -e "$YK_TMP/otp.rc" ] && done_early=1
    tail -n +"$((log0 + 1))" "$YK_KDC_LOG" |
        grep -qF "yubikey: principal=alice" && done_early=1
    wait "$bg"
    ms=$(($(yk_ms) - t0))
    rc=$(cat "$YK_TMP/otp.rc")
    yk_slapd_thaw
    echo "$label, slapd frozen after a restart: dave's password kinit" \
        "$t_dave ms, kvno $t_kvno ms while alice's OTP login opened a" \
        "connection; that login answered (exit $rc) after $ms ms"
    [ "$kinit_ok" -eq 1 ] || { cat "$YK_TMP/kinit.out" >&2;
                              yk_fail "$label: dave's password kinit refused"; }
    [ "$t_dave" -lt "$FAST_MS" ] && [ "$t_kvno" -lt "$FAST_MS" ] ||
        yk_fail "$label: the worker was blocked while a connection" \
            "opened: kinit $t_dave ms, kvno $t_kvno ms"
    [ "$done_early" -eq 0 ] ||
        { tail -n +"$((log0 + 1))" "$YK_KDC_LOG" >&2;
          yk_fail "$label: the OTP login was answered before dave's: it" \
              "was not waiting on the new connection"; }
    [ "$rc" -eq 2 ] || { cat "$YK_TMP/tc.out" >&2;
        yk_fail "$label: the OTP login exited $rc, expected 2 (DISCARDed)"; }
    tail -n +"$((log0 + 1))" "$YK_KDC_LOG" | grep -F "principal=alice" |
        tail -1 | grep -q 'verdict=discarded reason=backend' ||
        { tail -n +"$((log0 + 1))" "$YK_KDC_LOG" >&2;
          yk_fail "$label: the OTP login was not DISCARDed (backend)"; }
    [ "$ms" -lt $((BUDGET_MS + 2000)) ] ||
        yk_fail "$label: the OTP login took $ms ms (budget $BUDGET_MS ms)"
    # Thawed: once the breaker has cooled, a new connection the same way.
    sleep $((YK_BREAKER_TIME + 1))
    log0=$(wc -l < "$YK_KDC_LOG")
    otp_login || { cat "$YK_TMP/tc.out" >&2;
                   tail -n +"$((log0 + 1))" "$YK_KDC_LOG" >&2;
                   yk_fail "$label: OTP login refused after the thaw"; }
    kill -0 "$YK_KDC_PID" || yk_fail "$label: the KDC died"
    yk_ok "$label: a connection opening against a frozen slapd; password" \
        "kinit $t_dave ms and kvno $t_kvno ms on the same worker" \
        "meanwhile, the OTP login DISCARDed after $ms ms; thawed, accepted"
}

use "$LDAPS" "  yubikey_ldap_tls_cacert = $PKI/ca.pem"
frozen "ldaps:// (TLS handshake)"

use "$YK_LDAPI_URI" "  yubikey_ldap_sasl_mech = EXTERNAL"
frozen "ldapi:// with SASL EXTERNAL (bind)"

echo "PASS: connect.sh"
exit 0
