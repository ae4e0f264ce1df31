#!/bin/bash
# SPDX-License-Identifier: MIT
# probe.sh: what a KDC says at start of its write server's replication
# (store_probe.c): two providers A and B in multi-provider replication
# (replica.sh) and a read-only consumer C of A, each server's cn=config
# readable by the KDC's DN.  DB2 realm on A.
#
#   KDC 1 writes to A   WARNING: A is one of several replicated providers,
#                       seen both in A's contextCSN (several server IDs)
#                       and in cn=config (multi-provider); its OTP logins
#                       work
#   KDC 2 writes to C   WARNING: C is a replica (a syncrepl consumer),
#                       point yubikey_ldap_write_uri at its provider; its
#                       OTP logins are never accepted (C refuses the
#                       swap): no ticket, and the log says what to set
#
# Exit 0 pass, 1 fail, 77 skip (announced).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"
# shellcheck source=replica.sh
. "$srcdir/tests/integration/replica.sh"

R=$YK_REALM
TC=$YK_BUILDDIR/tests/client/yktestclient
# The KDC's UDP on another port: a DISCARD shows at once as no reply.
YK_KDC_UDP_PORT=$(yk_realm_free_port) || yk_fail "no free port"

yk_init
yk_realm_check_tools
[ -x "$TC" ] || yk_fail "tests/client/yktestclient is not built"
YK_REPLICA_CONFIG_READER=$YK_KDC_DN
yk_replica_setup
yk_replica_start
A=$YK_LDAP_URI_A
YK_KDC_EXTRA="  yubikey_ldap_write_uri = $A"
yk_realm_setup
yk_realm_addprinc rita rita-pw
yk_realm_enroll rita "$YK_TMP/rita.tok"
yk_replica_wait_sync
yk_replica_consumer_start
C=$YK_LDAP_URI_C
yk_replica_wait_attr "$C" "uid=rita,$YK_PEOPLE_DN" yubikeyTokenState \
    " ctr=" 10000
echo "slapd A $A and B $YK_LDAP_URI_B (multi-provider), C $C (consumer" \
    "of A): C had rita's token $YK_REPLICA_WAITED ms after A and B synced"

YK_KDC2_SED="s|^\( *yubikey_ldap_write_uri = \).*|\1$C|"
yk_kdc_start
yk_kdc2_start

# rita_to K: her OTP to KDC K through the test client; its exit (0
# issued, 1 refused, 2 no reply).
rita_to() {
    local conf=$YK_KRB5_CONF_PLAIN
    [ "$1" = 2 ] && conf=$YK_KRB5_CONF_KDC2
    KRB5_CONFIG=$conf "$TC" --password rita-pw --emu "$YK_TMP/rita.tok" \
        rita > "$YK_TMP/rita.out" 2>&1
    echo $?
}

[ "$(rita_to 1)" = 0 ] || { cat "$YK_TMP/rita.out" >&2;
    yk_fail "rita on KDC 1 (writes to A): no ticket"; }
grep -F "WARNING: realm $R: the write server $A is one of several replicated providers of $YK_LDAP_BASE (" \
    "$YK_KDC_LOG" | grep -qF "multi-provider in cn=config)" ||
    { grep yubikey "$YK_KDC_LOG" >&2; yk_fail "KDC 1: no warning that A" \
        "is a multi-provider, read from cn=config"; }
yk_ok "KDC 1 writes to A: WARNING, A is one of several replicated" \
    "providers (cn=config says multi-provider); OTP login accepted"

rc=$(rita_to 2)
line=$(yk_kdc_attempts "rita@$R" "$YK_KDC2_LOG" | tail -1)
grep -qF "WARNING: realm $R: the write server $C is a replica (a syncrepl consumer of $YK_LDAP_BASE): it refuses or forwards the counter swap; point yubikey_ldap_write_uri at its provider" \
    "$YK_KDC2_LOG" ||
    { grep yubikey "$YK_KDC2_LOG" >&2; yk_fail "KDC 2: no warning that C" \
        "is a consumer"; }
[ "$rc" != 0 ] || { cat "$YK_TMP/rita.out" >&2;
    yk_fail "rita on KDC 2 (writes to the consumer C): a ticket"; }
[[ "$line" != *" verdict=accepted "* ]] ||
    yk_fail "KDC 2 accepted an OTP it could not swap: $line"
grep -qF "yubikey_ldap_write_uri must name the writable master" \
    "$YK_KDC2_LOG" ||
    { grep yubikey "$YK_KDC2_LOG" >&2; yk_fail "KDC 2: the refused swap" \
        "does not say what to set"; }
yk_ok "KDC 2 writes to the consumer C: WARNING, C is a replica; its OTP" \
    "login gets no ticket (exit $rc: ${line##*verdict=}), the log says" \
    "yubikey_ldap_write_uri must name the writable master"
echo "PASS: probe.sh"
exit 0
