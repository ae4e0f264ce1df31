#!/bin/bash
# SPDX-License-Identifier: MIT
# tls.sh: the token directory over TLS (ldaps:// and StartTLS), verified.
#
# A throwaway CA signs slapd's certificate (IP 127.0.0.1, DNS localhost);
# slapd listens on ldap:// and ldaps:// on 127.0.0.1 and on 127.0.0.2
# (which the certificate does not name), and its ACLs give authenticated
# users nothing over a connection without TLS (ssf 0), so every success
# below went over TLS.  One DB2 realm (realm.sh) with the kadm5 hook.
#
#   ldaps://, right CA       OTP login accepted, again at once after a
#                            slapd restart (not DISCARDed), ykadmin list
#                            works, kadmin.local delprinc through the
#                            hook works
#   StartTLS on ldap://      the same
#   ldap:// without StartTLS the directory shows the KDC nothing (the
#                            check that the cases above used TLS)
#   wrong CA (ldaps://, StartTLS), wrong name (127.0.0.2)
#                            the KDC logs a CONFIGURATION ERROR at start
#                            and at the login saying what to check, the
#                            OTP login is DISCARDed (no reply, no
#                            ticket), ykadmin and the hook fail with the
#                            same words
#   ldaps:// to a frozen slapd
#                            the handshake is bounded: DISCARDed in time
#   ldap:// to 192.0.2.1     a WARNING at start (cleartext), in ykadmin's
#                            output and the kadm5 hook's start line too;
#                            ldap:// to 127.0.0.1, ldaps:// and StartTLS:
#                            none
#   a write URI of its own   ldaps:// reads, StartTLS writes: works; a
#                            write URI whose name the certificate lacks:
#                            refused as above
#   the write failover       the write provider not there, the failover
#                            ldaps://: OTP login accepted on it (WRITE
#                            FAILOVER); a failover the certificate does
#                            not name: DISCARDed, the log says why
#
# Exit 0 pass, 1 fail, 77 skip.

set -u
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"

HOOK_MODULE=$YK_BUILDDIR/.libs/yubikey_kadm5_hook.so
[ -e "$HOOK_MODULE" ] || yk_fail "$HOOK_MODULE is not built (run make first)"
TC=$YK_BUILDDIR/tests/client/yktestclient
[ -x "$TC" ] || yk_fail "$TC is not built (run make first)"
R=$YK_REALM
YK_BREAKER_TIME=2
# The KDC's UDP on another port: after a DISCARD the client's UDP try is
# refused at once.
YK_KDC_UDP_PORT=$(yk_realm_free_port) || yk_fail "no free port"

yk_init
PKI=$YK_TMP/tls
yk_tls_pki "$PKI"
SPORT=$(yk_realm_free_port) || yk_fail "no free port"
LPORT2=$(yk_realm_free_port) || yk_fail "no free port"
[ "$SPORT" != "$LPORT2" ] || yk_fail "port clash"
LDAPS="ldaps://127.0.0.1:$SPORT/"
LDAPS_WRONG_NAME="ldaps://127.0.0.2:$SPORT/"
YK_SLAPD_EXTRA_URLS="$LDAPS $LDAPS_WRONG_NAME ldap://127.0.0.2:$LPORT2/"
YK_SLAPD_EXTRA_CONF=$(yk_slapd_tls_conf "$PKI")
# Authenticated users get nothing without TLS (the rootdn, which the
# harness uses to seed entries, is above the ACLs).
YK_SLAPD_PRE_ACL="access to *
	by ssf=1 break
	by users none
	by * break"

# kdc.conf gets the kadm5_hook every time the harness writes it.
eval "yk_tls_orig_write_config() $(declare -f yk_realm_write_config |
    tail -n +2)"
# The hook binds as the token administrator (the KDC's DN may not remove
# secrets).
yk_realm_write_config() {
    YK_KDC_EXTRA="${YK_KDC_EXTRA:-}
  yubikey_hook_bind_dn = $YK_YKADMIN_DN
  yubikey_hook_password_file = $YK_KRB5_DIR/ykadmin.pw" \
        yk_tls_orig_write_config
    cat >> "$YK_KRB5_DIR/kdc.conf" <<EOF

[plugins]
 kadm5_hook = {
  module = yubikey:$HOOK_MODULE
 }
EOF
}

yk_realm_setup
PLAIN=$YK_LDAP_URI

# use URI RELATIONS: kdc.conf's yubikey_ldap_uri is URI, with RELATIONS
# (lines) added to the realm; the KDC is restarted on it when running.
use() {
    local saved=$YK_LDAP_URI running=$YK_KDC_PID
    [ -n "$running" ] && yk_kdc_stop
    YK_LDAP_URI=$1 YK_KDC_EXTRA=$2
    yk_realm_write_config
    YK_LDAP_URI=$saved
    [ -n "$running" ] && yk_kdc_start
    return 0
}

# The KDC log lines written since the last mark.
MARK=0
mark() { MARK=$(cat "$YK_KDC_LOG" 2>/dev/null | wc -l); }
since() { tail -n +$((MARK + 1)) "$YK_KDC_LOG"; }

# kadmin.local in argument form; output in $YK_TMP/kadm.out.
kadm5() {
    kadmin.local -r "$R" "$@" > "$YK_TMP/kadm.out" 2>&1
}

# alice's OTP login with the real kinit (our client module).
otp_login() {
    printf '%s\n%s\n' alice-pw "$(yk_otp "$YK_TMP/alice.tok")" |
        yk_kinit alice
}

# The TLS relations with the right CA.
CA_OK="  yubikey_ldap_tls_cacert = $PKI/ca.pem"
CA_WRONG="  yubikey_ldap_tls_cacert = $PKI/other-ca.pem"
STARTTLS="  yubikey_ldap_starttls = true"

# --- ldaps:// with the right CA -------------------------------------------
use "$LDAPS" "$CA_OK"
yk_realm_addprinc alice alice-pw
yk_realm_addprinc bob bob-pw
yk_realm_enroll alice "$YK_TMP/alice.tok"
yk_realm_enroll bob "$YK_TMP/bob.tok"
yk_ok "ykadmin enrolled over ldaps:// (kdc.conf's yubikey_ldap_tls_cacert)"

# works LABEL: the OTP login, ykadmin list, the hook's delprinc (of a new
# principal carol with a token) all work with the current kdc.conf.
# started LABEL: the KDC started (log marked), alice's OTP login
# accepted.
started() {
    mark
    yk_kdc_start
    otp_login || { cat "$YK_TMP/kinit.out" >&2; since >&2;
        yk_fail "$1: alice's OTP login refused"; }
    yk_kdc_attempts "alice@$R" | tail -1 | grep -q 'verdict=accepted' ||
        yk_fail "$1: the login was not logged as accepted"
}
works() {
    local label=$1
    started "$label"
    # slapd restarted under the running KDC: its TLS connections are gone,
    # each with the server's close_notify unread before the end of the
    # stream.  The next login reconnects: accepted, not DISCARDed.
    yk_slapd_stop
    yk_slapd_start
    otp_login || { cat "$YK_TMP/kinit.out" >&2; since >&2;
        yk_fail "$label: after a slapd restart, alice's OTP login refused"; }
    yk_kdc_attempts "alice@$R" | tail -1 | grep -q 'verdict=accepted' ||
        { since >&2; yk_fail "$label: after a slapd restart, the login" \
            "was not logged as accepted"; }
    yk_ykadmin list alice@$R > "$YK_TMP/yk.out" 2>&1 ||
        { cat "$YK_TMP/yk.out" >&2; yk_fail "$label: ykadmin list failed"; }
    grep -q "$("$YK_YKEMU_BIN" --public-id "$YK_TMP/alice.tok")" \
        "$YK_TMP/yk.out" ||
        { cat "$YK_TMP/yk.out" >&2; yk_fail "$label: ykadmin list lacks" \
            "alice's token"; }
    yk_realm_addprinc carol carol-pw
    rm -f "$YK_TMP/carol.tok"
    yk_realm_enroll carol "$YK_TMP/carol.tok"
    kadm5 delprinc -force carol ||
        { cat "$YK_TMP/kadm.out" >&2; yk_fail "$label: delprinc carol" \
            "through the hook failed"; }
    ! yk_ldapsearch_as "$YK_ADMIN_DN" "$YK_ADMIN_PW" \
        -b "uid=carol,$YK_PEOPLE_DN" -s base yubikeyPublicId |
        grep -q '^yubikeyPublicId:' ||
        yk_fail "$label: the hook left carol's token"
    yk_ldap_modify <<EOF
dn: uid=carol,$YK_PEOPLE_DN
changetype: delete
EOF
    ! since | grep -q 'WARNING\|CONFIGURATION ERROR' ||
        { since >&2; yk_fail "$label: the KDC warned"; }
    yk_kdc_stop
    yk_ok "$label: OTP login accepted, again at once after a slapd" \
        "restart, ykadmin list, delprinc through the hook (token removed);" \
        "no warning at start"
}
works "ldaps://, right CA"

# --- StartTLS on ldap:// --------------------------------------------------
use "$PLAIN" "$CA_OK
$STARTTLS"
works "StartTLS on ldap://127.0.0.1, right CA"

# --- ldap:// without TLS: the ACLs hide everything from the KDC ------------
use "$PLAIN" ""
mark
yk_kdc_start
ALICE_ID=$("$YK_YKEMU_BIN" --public-id "$YK_TMP/alice.tok")
n=$(yk_kdc_attempts "alice@$R" | grep -c .)
otp_login
[ "$(yk_kdc_attempts "alice@$R" | grep -c .)" = "$n" ] ||
    yk_fail "plain ldap://: the KDC judged an OTP of alice (the ACLs" \
        "should hide her token without TLS)"
yk_ykadmin list alice@$R > "$YK_TMP/yk.out" 2>&1
! grep -q "$ALICE_ID" "$YK_TMP/yk.out" ||
    yk_fail "plain ldap://: ykadmin list shows alice's token"
! since | grep -q 'WARNING' || { since >&2;
    yk_fail "ldap://127.0.0.1 warned (loopback)"; }
yk_kdc_stop
yk_ok "plain ldap://127.0.0.1: no warning (loopback); the directory shows" \
    "the KDC and ykadmin no token without TLS, so the cases above used TLS"

# --- a silent server: the handshake is bounded ------------------------------
# slapd frozen: the kernel accepts the TCP connection, the TLS handshake
# gets no answer.  The login is DISCARDed within the attempt's budget.
use "$LDAPS" "$CA_OK"
yk_kdc_start
yk_slapd_freeze
t0=$(yk_ms)
KRB5_CONFIG=$YK_KRB5_CONF_PLAIN "$TC" --optimistic --password alice-pw \
    --emu "$YK_TMP/alice.tok" alice > "$YK_TMP/tc.out" 2>&1
rc=$?
ms=$(($(yk_ms) - t0))
yk_slapd_thaw
[ "$rc" -eq 2 ] || { cat "$YK_TMP/tc.out" >&2;
    yk_fail "frozen slapd over ldaps://: exit $rc, expected 2 (DISCARDed)"; }
yk_kdc_attempts "alice@$R" | tail -1 | grep -q 'verdict=discarded' ||
    yk_fail "frozen slapd over ldaps://: the login was not DISCARDed"
[ "$ms" -lt 3000 ] ||
    yk_fail "frozen slapd over ldaps://: the KDC answered after $ms ms"
kill -0 "$YK_KDC_PID" || yk_fail "the KDC died"
yk_kdc_stop
yk_ok "frozen slapd over ldaps://: OTP login DISCARDed after $ms ms (the" \
    "handshake is bounded by the timeout)"

# refused LABEL WANT [YKADMIN ARGS...]: with the current kdc.conf the KDC
# logs a CONFIGURATION ERROR holding WANT at start and at an OTP login,
# which is DISCARDed (no ticket); ykadmin (list alice, or ARGS) and the
# hook fail with WANT.
refused() {
    local label=$1 want=$2 rc
    shift 2
    [ $# -gt 0 ] || set -- list "alice@$R"
    mark
    yk_kdc_start
    since | grep 'CONFIGURATION ERROR' | grep -qF "$want" ||
        { since >&2; yk_fail "$label: no CONFIGURATION ERROR with" \
            "\"$want\" at start"; }
    mark
    KRB5_CONFIG=$YK_KRB5_CONF_PLAIN "$TC" --optimistic --password alice-pw \
        --emu "$YK_TMP/alice.tok" alice > "$YK_TMP/tc.out" 2>&1
    rc=$?
    [ "$rc" -eq 2 ] || { cat "$YK_TMP/tc.out" >&2;
        yk_fail "$label: test client exit $rc, expected 2 (DISCARDed)"; }
    yk_kdc_attempts "alice@$R" | tail -1 | grep -q 'verdict=discarded' ||
        yk_fail "$label: the OTP login was not DISCARDed"
    since | grep 'CONFIGURATION ERROR' | grep -qF "$want" ||
        { since >&2; yk_fail "$label: the login logged no" \
            "CONFIGURATION ERROR with \"$want\""; }
    ! since | grep -q 'verdict=accepted' ||
        yk_fail "$label: an OTP was accepted"
    yk_ykadmin "$@" > "$YK_TMP/yk.out" 2>&1 &&
        yk_fail "$label: ykadmin $* worked"
    grep -qF "$want" "$YK_TMP/yk.out" ||
        { cat "$YK_TMP/yk.out" >&2; yk_fail "$label: ykadmin does not say" \
            "\"$want\""; }
    kadm5 delprinc -force bob &&
        { cat "$YK_TMP/kadm.out" >&2; yk_fail "$label: delprinc bob" \
            "through the hook worked"; }
    grep -qF "$want" "$YK_TMP/kadm.out" ||
        { cat "$YK_TMP/kadm.out" >&2; yk_fail "$label: the hook does not" \
            "say \"$want\""; }
    kadmin.local -r "$R" getprinc bob >/dev/null 2>&1 ||
        yk_fail "$label: bob was deleted"
    yk_kdc_stop
    yk_ok "$label: CONFIGURATION ERROR at start and at the login" \
        "(\"$want\"), OTP login DISCARDed, ykadmin and the hook refuse"
}

WHY="certificate was refused: check that it chains to"
use "$LDAPS" "$CA_WRONG"
refused "ldaps://, wrong CA" "$WHY yubikey_ldap_tls_cacert = $PKI/other-ca.pem"
use "$PLAIN" "$CA_WRONG
$STARTTLS"
refused "StartTLS, wrong CA" "$WHY yubikey_ldap_tls_cacert = $PKI/other-ca.pem"
use "$LDAPS_WRONG_NAME" "$CA_OK"
refused "ldaps:// to 127.0.0.2 (not in the certificate)" \
    "server $LDAPS_WRONG_NAME: its $WHY"
use "ldap://127.0.0.2:$LPORT2/" "$CA_OK
$STARTTLS"
refused "StartTLS to 127.0.0.2 (not in the certificate)" \
    "names the URI's host"
use "$LDAPS" "  yubikey_ldap_tls_cacert = $YK_TMP/no-such-ca.pem"
refused "ldaps://, CA file missing" \
    "cannot load the CA certificates of yubikey_ldap_tls_cacert"

# --- the cleartext warning ------------------------------------------------
use "ldap://192.0.2.1/" "  yubikey_ldap_timeout = 0.2"
mark
yk_kdc_start
since | grep -q "WARNING: realm $R: ldap:// to 192.0.2.1 without TLS:" ||
    { since >&2; yk_fail "no WARNING for ldap://192.0.2.1"; }
yk_kdc_stop
use "ldap://192.0.2.1/" "  yubikey_ldap_timeout = 0.2
$STARTTLS
$CA_OK"
mark
yk_kdc_start
! since | grep -q "WARNING: realm $R: ldap://" ||
    { since >&2; yk_fail "WARNING for ldap://192.0.2.1 with StartTLS"; }
yk_kdc_stop
yk_ok "ldap://192.0.2.1: a WARNING at start; with StartTLS none"

# ykadmin and the kadm5 hook warn as loudly, in the same words; with
# StartTLS neither does.
hook_trace() {
    : > "$YK_TMP/hook.trace"
    KRB5_TRACE=$YK_TMP/hook.trace kadmin.local -r "$R" getprinc K/M \
        >/dev/null 2>&1 || yk_fail "kadmin.local getprinc K/M failed"
    grep -F "yubikey: krb5-yubikey" "$YK_TMP/hook.trace" ||
        { cat "$YK_TMP/hook.trace" >&2; yk_fail "no hook start line"; }
}
CLEAR="ldap:// to 192.0.2.1 without TLS:"
use "ldap://192.0.2.1/" "  yubikey_ldap_timeout = 0.2"
yk_ykadmin list "alice@$R" > "$YK_TMP/yk.out" 2>&1
grep -qF "ykadmin: WARNING: realm $R: $CLEAR" "$YK_TMP/yk.out" ||
    { cat "$YK_TMP/yk.out" >&2; yk_fail "ykadmin: no WARNING for" \
        "ldap://192.0.2.1"; }
hook_trace | grep -qF "; WARNING: $CLEAR" ||
    { cat "$YK_TMP/hook.trace" >&2; yk_fail "the hook's start line has no" \
        "WARNING for ldap://192.0.2.1"; }
use "ldap://192.0.2.1/" "  yubikey_ldap_timeout = 0.2
$STARTTLS
$CA_OK"
yk_ykadmin list "alice@$R" > "$YK_TMP/yk.out" 2>&1
! grep -q "WARNING" "$YK_TMP/yk.out" ||
    { cat "$YK_TMP/yk.out" >&2; yk_fail "ykadmin warned with StartTLS"; }
! hook_trace | grep -q "WARNING" ||
    yk_fail "the hook's start line warns with StartTLS"
yk_ok "ldap://192.0.2.1: ykadmin and the kadm5 hook's start line warn as" \
    "the KDC does; with StartTLS neither"

# --- a write URI of its own, and the write failover, over TLS --------------
use "$LDAPS" "$CA_OK
$STARTTLS
  yubikey_ldap_write_uri = $PLAIN"
works "ldaps:// reads, StartTLS on yubikey_ldap_write_uri = $PLAIN"
use "$LDAPS" "$CA_OK
  yubikey_ldap_write_uri = $LDAPS_WRONG_NAME"
refused "yubikey_ldap_write_uri = ldaps://127.0.0.2 (not in the cert)" \
    "server $LDAPS_WRONG_NAME: its $WHY" disable "$ALICE_ID"

# The write provider is not there (nothing listens on DEAD): the swaps
# fail over, over TLS too.
DEAD=$(yk_realm_free_port) || yk_fail "no free port"
use "$LDAPS" "$CA_OK
  yubikey_ldap_write_uri = ldaps://127.0.0.1:$DEAD/
  yubikey_ldap_write_failover_uri = $LDAPS"
started "failover over ldaps://"
since | grep -qF "WRITE FAILOVER: realm $R: write provider ldaps://127.0.0.1:$DEAD/ unreachable" ||
    { since >&2; yk_fail "failover over ldaps://: no WRITE FAILOVER line"; }
yk_kdc_stop
use "$LDAPS" "$CA_OK
  yubikey_ldap_write_uri = ldaps://127.0.0.1:$DEAD/
  yubikey_ldap_write_failover_uri = $LDAPS_WRONG_NAME"
mark
yk_kdc_start
KRB5_CONFIG=$YK_KRB5_CONF_PLAIN "$TC" --optimistic --password alice-pw \
    --emu "$YK_TMP/alice.tok" alice > "$YK_TMP/tc.out" 2>&1
rc=$?
[ "$rc" -eq 2 ] || { cat "$YK_TMP/tc.out" >&2; since >&2;
    yk_fail "failover to 127.0.0.2 (not in the certificate): exit $rc," \
        "expected 2 (DISCARDed)"; }
yk_kdc_attempts "alice@$R" | tail -1 | grep -q 'verdict=discarded' ||
    yk_fail "failover to 127.0.0.2: the login was not DISCARDed"
since | grep -qF "$WHY" ||
    { since >&2; yk_fail "failover to 127.0.0.2: the log does not say" \
        "the certificate was refused"; }
yk_kdc_stop
yk_ok "write failover over ldaps://: the OTP login accepted on the" \
    "failover (WRITE FAILOVER); a failover whose certificate does not" \
    "name it: DISCARDed, the log says why"
