#!/bin/bash
# SPDX-License-Identifier: MIT
# kldap.sh: YubiKey logins on a realm whose database is krb5's kldap.
#
# A realm made with kdb5_ldap_util on a slapd that holds krb5's schema,
# ours and the merged access rules (ours first); kdc.conf names the
# directory only in [dbmodules] (ldap_servers, ldap_kdc_dn, the service
# password file in DN#{HEX} form): no yubikey_ldap_* setting.  alice lives
# in the realm container (addprinc), bob on an existing user entry
# (addprinc -x dn=...).  Checked: password + OTP (flag H), replays,
# +requires_hwauth, indicators on service tickets, the access rules as
# each identity sees them, a principal matched twice (loud, DISCARD, no
# lockout), a KDC identity that may not swap (logged as a configuration
# error), ldap_servers naming two servers without yubikey_ldap_write_uri
# (refused at start: one write server), lockout (maxfailure 3), ykadmin
# purge of the tokens that kldap's delprinc leaves on a user entry (no
# krbPrincipalName left), and a keyring given to another user: the KDC
# refuses it (keeps the one it loaded) and ykadmin says whose it is.
# Exit 0 pass, 1 fail, 77 skip.

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=kldaprealm.sh
. "$srcdir/tests/integration/kldaprealm.sh"

# Short: the test adds a duplicate entry and waits for the KDC to see it.
YK_CACHE_TTL=1
# slapd also on ldapi://, SASL EXTERNAL for our uid mapped to the KDC's DN.
YK_SLAPD_LDAPI=1
T0=$(yk_ms)
R=$YK_REALM
WEB=HTTP/web.example.com                 # require_auth yubikey-2fa
BOB_DN="uid=bob,$YK_PEOPLE_DN"
BOB_LDAP_PW=bob-directory-pw             # bob's own directory password
LOCKY_DN="uid=locky,$YK_PEOPLE_DN"
KDC_RO_DN="cn=kdc-ro,$YK_LDAP_BASE"      # reads everything, writes nothing
KDC_RO_PW='kdc-ro-secret'
# A rule before ours, for one test only: the misconfigured KDC identity
# may read everything and write nothing; everyone else goes on to the
# real rules.
YK_SLAPD_PRE_ACL="access to *
	by dn.exact=\"$KDC_RO_DN\" read
	by * break"

yk_kldap_setup
grep -q 'yubikey_ldap_' "$KRB5_KDC_PROFILE" &&
    yk_fail "kdc.conf holds yubikey_ldap_* settings"
# slapd applies the first match: ours must precede kldap's rules.
rules=$(grep -n '^access to' "$YK_TMP/slapd/slapd.conf")
ours=$(printf '%s\n' "$rules" | grep -m1 'attrs=yubikeyTokenSecret' |
    cut -d: -f1)
kldaps=$(printf '%s\n' "$rules" | grep -m1 "dn.subtree=\"$YK_KLDAP_CONTAINER" |
    cut -d: -f1)
[ -n "$ours" ] && [ -n "$kldaps" ] && [ "$ours" -lt "$kldaps" ] ||
    yk_fail "slapd.conf: the shipped rules do not precede kldap's"
yk_ok "slapd.conf: shipped rules (line $ours) before kldap's (line $kldaps)"
yk_ldap_modify <<EOF
dn: $KDC_RO_DN
changetype: add
objectClass: organizationalRole
objectClass: simpleSecurityObject
cn: kdc-ro
userPassword: $KDC_RO_PW
EOF

# --- principals and tokens ---------------------------------------------
yk_kldap_addprinc alice alice-pw
yk_kldap_user bob "$BOB_LDAP_PW"
yk_kldap_addprinc_dn bob bob-pw "$BOB_DN"
yk_realm_service "$WEB" yubikey-2fa

# The DN of the one entry holding krbPrincipalName NAME@REALM (rootdn).
princ_dn() {
    yk_ldapsearch_as "$YK_ADMIN_DN" "$YK_ADMIN_PW" -b "$YK_LDAP_BASE" \
        "(krbPrincipalName=$1@$R)" dn | sed -n 's/^dn: //p'
}
ALICE_DN=$(princ_dn alice)
[ "$ALICE_DN" = "krbPrincipalName=alice@$R,$YK_KLDAP_REALM_DN" ] ||
    yk_fail "alice's entry is not in the realm container: $ALICE_DN"
[ "$(princ_dn bob)" = "$BOB_DN" ] ||
    yk_fail "bob's principal is not on $BOB_DN: $(princ_dn bob)"
yk_ok "alice in the realm container ($ALICE_DN), bob on $BOB_DN"

# alice: enrolled (emulated token); bob: imported (a key we chose).
yk_realm_enroll alice "$YK_TMP/alice.tok"
BOB_ID=vvcccckldbeb
printf '%s %s\n' 0123456789abcdef0123456789abcdef 31415926aabb |
    "$YK_YKEMU_BIN" --init "$YK_TMP/bob.tok" --public-id "$BOB_ID" \
        --key-stdin > /dev/null || yk_fail "ykemu --init failed"
printf '%s %s\n' 0123456789abcdef0123456789abcdef 31415926aabb |
    yk_ykadmin import "bob@$R" --public-id "$BOB_ID" \
        >> "$YK_KRB5_DIR/ykadmin.log" 2>&1 ||
    { tail -3 "$YK_KRB5_DIR/ykadmin.log" >&2; yk_fail "ykadmin import bob"; }
ALICE_ID=$("$YK_YKEMU_BIN" --public-id "$YK_TMP/alice.tok")

# ykadmin with no LDAP option at all: [dbmodules] and the DN#{HEX} file.
"$YK_YKADMIN_BIN" -r "$R" list > "$YK_TMP/list.out" 2>&1 ||
    { cat "$YK_TMP/list.out" >&2;
      yk_fail "ykadmin list from [dbmodules] alone failed"; }
grep -q "^alice@$R .*$ALICE_ID .*active" "$YK_TMP/list.out" &&
    grep -q "^bob@$R .*$BOB_ID .*active" "$YK_TMP/list.out" ||
    { cat "$YK_TMP/list.out" >&2;
      yk_fail "ykadmin list (as the KDC's DN) misses alice's or bob's token"; }
yk_ok "ykadmin: enroll/import as an administrator; list from [dbmodules]" \
    "alone (ldap_kdc_dn, DN#{HEX} password file) sees both tokens"

yk_kdc_start

# --- helpers ------------------------------------------------------------

# kinit NAME with password PW and OTP (empty: password only), then more
# kinit options.
login() {
    local name=$1 pw=$2 otp=${3:-}
    shift $(($# < 3 ? $# : 3))
    if [ -n "$otp" ]; then
        printf '%s\n%s\n' "$pw" "$otp" | yk_kinit "$name" "$@"
    else
        printf '%s\n' "$pw" | yk_kinit "$name" "$@"
    fi
}

# The flags of the ccache's TGT (klist -f).
tgt_flags() {
    klist -f 2>/dev/null | awk '/krbtgt\// { getline; sub(/.*Flags: /, "");
        print; exit }'
}

# The newest module log line of NAME must contain TEXT.
last_log_has() {
    local last
    last=$(yk_kdc_attempts "$1@$R" | tail -1)
    case "$last" in
        *"$2"*) ;;
        *) yk_fail "$1: newest log line \"$last\" lacks \"$2\"" ;;
    esac
}

# The failed-login count of NAME must be N.
failcount_is() {
    local got
    got=$(yk_kldap_failcount "$1")
    [ "$got" = "$2" ] ||
        yk_fail "$1: failed-login count $got, expected $2 ($3)"
}

# --- password + OTP, replay, indicators: alice and bob ------------------
declare -A TOK=([alice]=$YK_TMP/alice.tok [bob]=$YK_TMP/bob.tok)
for who in alice bob; do
    kdestroy -q 2>/dev/null
    t=$(yk_ms)
    otp=$(yk_otp "${TOK[$who]}")
    login "$who" "$who-pw" "$otp" ||
        { cat "$YK_TMP/kinit.out" >&2;
          yk_fail "$who: password + OTP refused"; }
    ms=$(($(yk_ms) - t))
    grep -q "YubiKey OTP for $who@$R" "$YK_TMP/kinit.out" ||
        yk_fail "$who: kinit never asked for the OTP"
    last_log_has "$who" "verdict=accepted reason=accepted"
    flags=$(tgt_flags)
    case "$flags" in
        *H*) ;;
        *) yk_fail "$who's TGT is not flagged H: $flags" ;;
    esac
    kvno "$WEB" > "$YK_TMP/kvno.out" 2>&1 ||
        { cat "$YK_TMP/kvno.out" >&2;
          yk_fail "$who: no ticket for $WEB (require_auth yubikey-2fa)"; }
    yk_ok "$who: password + OTP in $ms ms, TGT flags $flags, $WEB ticket"

    kdestroy -q 2>/dev/null
    login "$who" "$who-pw" "$otp" && yk_fail "$who: an OTP accepted twice"
    last_log_has "$who" "verdict=refused reason=replay"
    klist -s 2>/dev/null && yk_fail "$who: a ticket after a replay"
    yk_ok "$who: the same OTP again refused (replay)"

    KRB5_CONFIG=$YK_KRB5_CONF_PLAIN login "$who" "$who-pw" ||
        { cat "$YK_TMP/kinit.out" >&2;
          yk_fail "$who: password-only kinit refused"; }
    case "$(tgt_flags)" in
        *H*) yk_fail "$who: a password-only TGT is flagged H" ;;
    esac
    KRB5_CONFIG=$YK_KRB5_CONF_PLAIN kvno "$WEB" > "$YK_TMP/kvno.out" 2>&1 &&
        yk_fail "$who: a password-only TGT got a ticket for $WEB"
    yk_ok "$who: password-only TGT (client without our module): $WEB" \
        "refuses it"
done

# --- +requires_hwauth: password + OTP only ------------------------------
for who in alice bob; do
    kadmin.local -r "$R" modprinc +requires_hwauth "$who" \
        > "$YK_KRB5_DIR/kadmin.out" 2>&1 ||
        { cat "$YK_KRB5_DIR/kadmin.out" >&2; yk_fail "modprinc $who"; }
    kdestroy -q 2>/dev/null
    KRB5_CONFIG=$YK_KRB5_CONF_PLAIN login "$who" "$who-pw" &&
        yk_fail "$who (+requires_hwauth) logged in with the password alone"
    login "$who" "$who-pw" "$(yk_otp "${TOK[$who]}")" ||
        { cat "$YK_TMP/kinit.out" >&2;
          yk_fail "$who (+requires_hwauth): password + OTP refused"; }
    last_log_has "$who" "verdict=accepted"
    case "$(tgt_flags)" in
        *H*) ;;
        *) yk_fail "$who (+requires_hwauth): TGT not flagged H" ;;
    esac
    yk_ok "$who +requires_hwauth: password alone refused, password + OTP" \
        "accepted"
done
failcount_is alice 0 "after the hwauth refusal without our padata"

# --- ACLs: who sees and changes what, on alice's and bob's entries ------

# The values of attribute A on entry DN as identity ID/PW ("" = anon);
# fails when there are none (an entry hidden from ID included).
attr_as() {
    yk_ldapsearch_as "$3" "$4" -b "$1" -s base '(objectClass=*)' "$2" \
        2>/dev/null | grep -i "^$2:"
}

# Whether identity ID/PW sees entry DN at all.
sees_entry() {
    yk_ldapsearch_as "$2" "$3" -b "$1" -s base '(objectClass=*)' 1.1 \
        2>/dev/null | grep -q '^dn:'
}

# Replace the value OLD of attribute A on DN by NEW as ID/PW (delete the
# exact value, add the new one, one modify); returns ldapmodify's code.
swap_as() {
    yk_ldapmodify_as "$5" "$6" <<EOF
dn: $1
changetype: modify
delete: $2
$2: $3
-
add: $2
$2: $4
EOF
}

# The state value of DN with gen raised by one (what an administrator
# write would leave: the KDC's cached copy goes stale).
# (bash arithmetic: a first generation takes up to 62 bits, past awk's
# doubles.)
bumped_state() {
    local g
    g=$(printf '%s\n' "$1" | sed -n 's/.* gen=\([0-9]*\) .*/\1/p')
    printf '%s\n' "$1" | sed "s/ gen=$g / gen=$((g + 1)) /"
}

for dn in "$ALICE_DN" "$BOB_DN"; do
    secret=$(attr_as "$dn" yubikeyTokenSecret "$YK_ADMIN_DN" "$YK_ADMIN_PW" |
        sed 's/^[^:]*: //')
    state=$(attr_as "$dn" yubikeyTokenState "$YK_ADMIN_DN" "$YK_ADMIN_PW" |
        sed 's/^[^:]*: //')
    case "$secret$state" in
        ""|*"::"*) yk_fail "$dn: no printable secret/state to test with" ;;
    esac

    # The KDC's DN: reads the secret and the state, swaps the state.
    attr_as "$dn" yubikeyTokenSecret "$YK_KDC_DN" "$YK_KDC_PW" >/dev/null ||
        yk_fail "$dn: the KDC's DN cannot read yubikeyTokenSecret"
    attr_as "$dn" yubikeyTokenState "$YK_KDC_DN" "$YK_KDC_PW" >/dev/null ||
        yk_fail "$dn: the KDC's DN cannot read yubikeyTokenState"
    new=$(bumped_state "$state")
    swap_as "$dn" yubikeyTokenState "$state" "$new" "$YK_KDC_DN" \
        "$YK_KDC_PW" ||
        { cat "$YK_TMP/ldapmodify.out" >&2;
          yk_fail "$dn: the KDC's DN cannot swap yubikeyTokenState"; }
    swap_as "$dn" yubikeyTokenSecret "$secret" "$secret" "$YK_KDC_DN" \
        "$YK_KDC_PW"
    rc=$?
    [ "$rc" = 50 ] ||
        yk_fail "$dn: the KDC's DN changing the secret: ldapmodify $rc," \
            "expected 50 (insufficientAccess)"

    # The helpdesk: the state, not the secret; changes nothing.
    sees_entry "$dn" "$YK_HELPDESK_DN" "$YK_HELPDESK_PW" ||
        yk_fail "$dn: the helpdesk does not see the entry"
    attr_as "$dn" yubikeyTokenState "$YK_HELPDESK_DN" "$YK_HELPDESK_PW" \
        >/dev/null || yk_fail "$dn: the helpdesk cannot read the state"
    attr_as "$dn" yubikeyTokenSecret "$YK_HELPDESK_DN" "$YK_HELPDESK_PW" &&
        yk_fail "$dn: the helpdesk reads yubikeyTokenSecret"
    swap_as "$dn" yubikeyTokenState "$new" "$new" "$YK_HELPDESK_DN" \
        "$YK_HELPDESK_PW"
    rc=$?
    [ "$rc" = 50 ] || yk_fail "$dn: the helpdesk changing the state: $rc"
    swap_as "$dn" yubikeyTokenSecret "$secret" "$secret" "$YK_HELPDESK_DN" \
        "$YK_HELPDESK_PW"
    rc=$?
    [ "$rc" = 50 ] || yk_fail "$dn: the helpdesk changing the secret: $rc"

    # bob himself (an ordinary bound user) and anonymous: neither.
    for id in "$BOB_DN" ""; do
        pw=$BOB_LDAP_PW
        [ -z "$id" ] && pw=
        for a in yubikeyTokenSecret yubikeyTokenState yubikeyPublicId; do
            attr_as "$dn" "$a" "$id" "$pw" &&
                yk_fail "$dn: ${id:-anonymous} reads $a"
        done
        if [ -n "$id" ]; then
            swap_as "$dn" yubikeyTokenSecret "$secret" "$secret" "$id" "$pw"
            rc=$?
            [ "$rc" = 50 ] ||
                yk_fail "$dn: $id changing the secret: ldapmodify $rc"
        fi
    done
    # On bob's own entry they see the entry, so the rules above hid
    # only our attributes (the container is hidden from them entirely).
    if [ "$dn" = "$BOB_DN" ]; then
        sees_entry "$dn" "$BOB_DN" "$BOB_LDAP_PW" &&
            sees_entry "$dn" "" "" ||
            yk_fail "bob and anonymous do not see bob's entry at all"
    fi

    # An administrator (member of the group) may change the secret.
    swap_as "$dn" yubikeyTokenSecret "$secret" "$secret" "$YK_YKADMIN_DN" \
        "$YK_YKADMIN_PW" ||
        { cat "$YK_TMP/ldapmodify.out" >&2;
          yk_fail "$dn: the token administrator cannot write the secret"; }
    yk_ok "ACLs on $dn: KDC reads the secret and swaps the state," \
        "may not change the secret (50); helpdesk reads only the state;" \
        "bob and anonymous read neither; administrators write the secret"
done

# The KDC swapped behind the module's cached copy: the next OTP still
# works (lost swap, re-read, swap again) and proves the KDC's own access.
for who in alice bob; do
    login "$who" "$who-pw" "$(yk_otp "${TOK[$who]}")" ||
        { cat "$YK_TMP/kinit.out" >&2;
          yk_fail "$who: OTP refused after the directory changed"; }
    last_log_has "$who" "verdict=accepted"
done
yk_ok "OTP logins after a swap behind the KDC's cache: accepted"

# --- one principal, two entries: loud, DISCARD, no lockout ---------------
DUP_DN="krbPrincipalName=bob@$R,$YK_KLDAP_REALM_DN"
yk_ldap_modify <<EOF
dn: $DUP_DN
changetype: add
objectClass: krbPrincipal
objectClass: krbPrincipalAux
krbPrincipalName: bob@$R
EOF
sleep 1.2                                # the cached record expires
yktc() {
    KRB5_CONFIG=$YK_KRB5_CONF_PLAIN \
        "$YK_BUILDDIR/tests/client/yktestclient" "$@" \
        > "$YK_TMP/ytc.out" 2>&1
}
t=$(yk_ms)
yktc --optimistic --password bob-pw --emu "$YK_TMP/bob.tok" "bob@$R"
rc=$?
ms=$(($(yk_ms) - t))
[ "$rc" = 2 ] ||
    { cat "$YK_TMP/ytc.out" >&2;
      yk_fail "bob with two entries: yktestclient exit $rc, expected 2" \
          "(no reply: DISCARD)"; }
last_log_has bob "verdict=discarded reason=backend: more than one"
grep -q "CONFIGURATION ERROR: realm $R: more than one directory entry" \
    "$YK_KDC_LOG" || yk_fail "no loud log line about bob's two entries"
login bob bob-pw \
    "$(yk_otp "$YK_TMP/bob.tok")" &&
    yk_fail "bob (two entries, +requires_hwauth) got a TGT from kinit"
failcount_is bob 0 "two entries must not count toward lockout"
yk_ok "bob matched by two entries: KDC log says so loudly; our padata" \
    "DISCARDed in $ms ms, kinit fails, failed-login count 0"
yk_ldap_modify <<EOF
dn: $DUP_DN
changetype: delete
EOF
sleep 1.2
login bob bob-pw "$(yk_otp "$YK_TMP/bob.tok")" ||
    { cat "$YK_TMP/kinit.out" >&2;
      yk_fail "bob: refused after the duplicate entry was removed"; }
yk_ok "duplicate removed: bob logs in again"

# --- insufficientAccess on a swap: a configuration error, said so -------
# The module (only) binds as a DN that may read but not write: the one
# test whose kdc.conf holds yubikey_ldap_* settings.
yk_kdc_stop
printf '%s\n' "$KDC_RO_PW" > "$YK_KRB5_DIR/kdc-ro.pw"
YK_KDC_EXTRA="  yubikey_ldap_bind_dn = $KDC_RO_DN
  yubikey_ldap_password_file = $YK_KRB5_DIR/kdc-ro.pw"
yk_realm_write_config
yk_kdc_start
before=$(attr_as "$ALICE_DN" yubikeyTokenState "$YK_ADMIN_DN" \
    "$YK_ADMIN_PW")
login alice alice-pw \
    "$(yk_otp "$YK_TMP/alice.tok")" &&
    yk_fail "alice logged in although the KDC could not swap"
last_log_has alice "verdict=discarded reason=backend: swap:"
grep -q "CONFIGURATION ERROR: realm $R: the token directory refused the" \
    "$YK_KDC_LOG" ||
    yk_fail "insufficientAccess on the swap is not logged as a" \
        "configuration error"
grep -q "circuit breaker open" "$YK_KDC_LOG" &&
    yk_fail "insufficientAccess was treated as an outage (breaker)"
after=$(attr_as "$ALICE_DN" yubikeyTokenState "$YK_ADMIN_DN" \
    "$YK_ADMIN_PW")
[ "$before" = "$after" ] || yk_fail "alice's state changed: $after"
failcount_is alice 0 "a refused swap is no failed login"
yk_ok "a KDC identity without write access: the swap refused, logged" \
    "as CONFIGURATION ERROR, DISCARD, state unchanged, no breaker"

# --- kldap over ldapi:// with SASL EXTERNAL (ldap_kdc_sasl_mech) ----------
# No ldap_kdc_dn and no password for the KDC: kldap and our module both
# bind with SASL EXTERNAL (slapd maps our uid to the KDC's DN).  An
# accepted OTP proves the module bound as the KDC: anonymously it would
# not see the secrets, and a failed bind would DISCARD.
yk_kdc_stop
YK_KDC_EXTRA=
YK_KLDAP_SERVERS=$YK_LDAPI_URI
YK_KLDAP_SASL_MECH=EXTERNAL
yk_realm_write_config
grep -q 'yubikey_ldap_\|ldap_kdc_dn' "$KRB5_KDC_PROFILE" &&
    yk_fail "kdc.conf still names a bind DN"
yk_kdc_start
for who in alice bob; do
    login "$who" "$who-pw" "$(yk_otp "${TOK[$who]}")" ||
        { cat "$YK_TMP/kinit.out" >&2;
          yk_fail "$who: password + OTP refused (ldapi://, SASL EXTERNAL)"; }
    last_log_has "$who" "verdict=accepted"
done
"$YK_YKADMIN_BIN" -r "$R" list > "$YK_TMP/list.out" 2>&1 &&
    grep -q "^bob@$R .*$BOB_ID .*active" "$YK_TMP/list.out" ||
    { cat "$YK_TMP/list.out" >&2;
      yk_fail "ykadmin list over ldapi:// with SASL EXTERNAL failed"; }
yk_ok "ldap_servers = ldapi://..., ldap_kdc_sasl_mech = EXTERNAL:" \
    "alice's and bob's OTPs accepted; ykadmin list works the same way"

# --- one write server: kldap's ldap_servers naming two -------------------
# kldap itself takes a list (libldap fails over through it); the counter
# swap must not: every KDC has to swap on the same one server.
yk_kdc_stop
YK_KLDAP_SERVERS="$YK_LDAPI_URI ldap://127.0.0.1:$YK_SLAPD_PORT/"
yk_realm_write_config
: > "$YK_KDC_LOG"
yk_kdc_start
want="CONFIGURATION ERROR: realm $R: yubikey_ldap_write_uri is unset, so"
want="$want writes would go to kldap's ldap_servers, which names 2 LDAP"
grep -q "$want servers" "$YK_KDC_LOG" ||
    { grep yubikey: "$YK_KDC_LOG" >&2;
      yk_fail "ldap_servers with two URIs: no CONFIGURATION ERROR"; }
grep -q "set yubikey_ldap_write_uri to that one provider" "$YK_KDC_LOG" ||
    yk_fail "the CONFIGURATION ERROR does not say what to set"
# The test client sends our padata unasked (the realm gives no hint).
KRB5_CONFIG=$YK_KRB5_CONF_PLAIN "$YK_BUILDDIR/tests/client/yktestclient" \
    --optimistic --password alice-pw --otp "$(yk_otp "${TOK[alice]}")" \
    "alice@$R" > "$YK_TMP/tc.out" 2>&1
rc=$?
[ "$rc" = 2 ] || { cat "$YK_TMP/tc.out" >&2;
    yk_fail "alice: test client exit $rc with two write servers, want 2" \
        "(no reply)"; }
last_log_has alice "verdict=discarded reason=backend: CONFIGURATION ERROR"
kadmin.local -r "$R" addprinc -pw carol-pw carol \
    > "$YK_KRB5_DIR/kadmin.out" 2>&1 ||
    { cat "$YK_KRB5_DIR/kadmin.out" >&2; yk_fail "addprinc carol"; }
KRB5_CONFIG=$YK_KRB5_CONF_PLAIN login carol carol-pw > /dev/null ||
    { cat "$YK_TMP/kinit.out" >&2;
      yk_fail "carol: password login refused (two servers)"; }
"$YK_YKADMIN_BIN" -r "$R" list > "$YK_TMP/list.out" 2>&1 &&
    yk_fail "ykadmin list worked with two write servers"
grep -q "names 2 LDAP servers" "$YK_TMP/list.out" ||
    { cat "$YK_TMP/list.out" >&2; yk_fail "ykadmin: no clear error"; }
yk_ok "ldap_servers naming two servers, no yubikey_ldap_write_uri:" \
    "CONFIGURATION ERROR at start, OTP logins DISCARDed, password logins" \
    "work, ykadmin refuses"
yk_kdc_stop
YK_KDC_EXTRA="  yubikey_ldap_write_uri = $YK_LDAPI_URI"
yk_realm_write_config
yk_kdc_start
login alice alice-pw "$(yk_otp "${TOK[alice]}")" ||
    { cat "$YK_TMP/kinit.out" >&2;
      yk_fail "alice: refused with one yubikey_ldap_write_uri"; }
last_log_has alice "verdict=accepted"
"$YK_YKADMIN_BIN" -r "$R" list > "$YK_TMP/list.out" 2>&1 ||
    { cat "$YK_TMP/list.out" >&2;
      yk_fail "ykadmin list with one yubikey_ldap_write_uri"; }
yk_ok "the same with yubikey_ldap_write_uri naming one: OTP accepted," \
    "ykadmin works"
yk_kdc_stop
YK_KDC_EXTRA=
YK_KLDAP_SERVERS=$YK_LDAPI_URI
yk_realm_write_config
yk_kdc_start

# --- lockout on kldap: maxfailure 3 -------------------------------------
kadmin.local -r "$R" addpol -maxfailure 3 lockpol \
    > "$YK_KRB5_DIR/kadmin.out" 2>&1 ||
    { cat "$YK_KRB5_DIR/kadmin.out" >&2; yk_fail "addpol lockpol"; }
yk_kldap_user locky locky-directory-pw
yk_kldap_addprinc_dn locky locky-pw "$LOCKY_DN" -policy lockpol
yk_realm_enroll locky "$YK_TMP/locky.tok"
failcount_is locky 0 "a new principal"

good=$(yk_otp "$YK_TMP/locky.tok")
login locky wrong-pw "$good" && yk_fail "locky: a wrong password accepted"
last_log_has locky "verdict=refused reason=wrong password"
failcount_is locky 1 "one wrong password sent with an OTP counts once"
login locky locky-pw "$good" ||
    { cat "$YK_TMP/kinit.out" >&2;
      yk_fail "locky: the OTP sent with the wrong password was consumed"; }
failcount_is locky 0 "a successful login resets the count"
yk_ok "locky: a wrong password + OTP counted once; the OTP then works"

# Three bad OTPs with the right password: a replay, another token's OTP,
# a damaged one (its last character changed: CRC fails).
fresh=$(yk_otp "$YK_TMP/locky.tok")
case "${fresh: -1}" in
    c) damaged=${fresh%?}b ;;
    *) damaged=${fresh%?}c ;;
esac
n=0
for bad in "$good" "$(yk_otp "$YK_TMP/alice.tok")" "$damaged"; do
    n=$((n + 1))
    login locky locky-pw "$bad" && yk_fail "locky: bad OTP $n accepted"
    last_log_has locky "verdict=refused"
    failcount_is locky "$n" "bad OTP $n"
done
login locky locky-pw "$(yk_otp "$YK_TMP/locky.tok")" &&
    yk_fail "locky: logged in after three bad OTPs"
grep -q "revoked" "$YK_TMP/kinit.out" ||
    { cat "$YK_TMP/kinit.out" >&2;
      yk_fail "locky: not reported locked (credentials revoked)"; }
failcount_is locky 3 "a locked principal's count stays"
yk_ok "locky: three bad OTPs (replay, unknown token, bad CRC) counted" \
    "1, 2, 3; then locked: \"$(grep -o "Client's credentials have been" \
    "$YK_TMP/kinit.out" | head -1) revoked\""
yk_kdc_attempts "locky@$R" | sed 's/^.*yubikey: /  /'

# --- purge: tokens left on a user entry whose principal was deleted ------
# kldap's delprinc of a principal put on an existing entry removes the
# Kerberos attributes and keeps the entry, with our token attributes: no
# KDC can use them, but a principal put there later would inherit them.
GONE_DN="uid=gone,$YK_PEOPLE_DN"
yk_kldap_user gone gone-directory-pw
yk_kldap_addprinc_dn gone gone-pw "$GONE_DN"
yk_realm_enroll gone "$YK_TMP/gone.tok"
GONE_ID=$("$YK_YKEMU_BIN" --public-id "$YK_TMP/gone.tok")
yk_ykadmin policy "gone@$R" otp >> "$YK_KRB5_DIR/ykadmin.log" 2>&1 ||
    yk_fail "ykadmin policy gone otp"
kadmin.local -r "$R" delprinc -force gone > "$YK_KRB5_DIR/kadmin.out" 2>&1 ||
    { cat "$YK_KRB5_DIR/kadmin.out" >&2; yk_fail "delprinc gone"; }

# What is on gone's entry (as the directory's rootdn): our attributes,
# our class, krbPrincipalName.
gone_attrs() {
    yk_ldapsearch_as "$YK_ADMIN_DN" "$YK_ADMIN_PW" -b "$GONE_DN" -s base \
        '(objectClass=*)' objectClass krbPrincipalName yubikeyPublicId \
        yubikeyTokenSecret yubikeyTokenState yubikeyPolicy 2>/dev/null |
        grep -i '^dn:\|^krbPrincipalName:\|^yubikey\|^objectClass: yubikey'
}
before=$(gone_attrs)
case "$before" in
    *"dn: $GONE_DN"*"yubikeyPublicId: $GONE_ID"*) ;;
    *) yk_fail "delprinc did not leave gone's entry with its token: $before" ;;
esac
printf '%s\n' "$before" | grep -qi '^krbPrincipalName:' &&
    yk_fail "gone's entry still names a principal after delprinc"
yk_ok "kldap's delprinc of gone (on $GONE_DN) kept the entry and its" \
    "token $GONE_ID, without krbPrincipalName"

yk_ykadmin purge --dry-run > "$YK_TMP/purge.out" 2>&1 ||
    { cat "$YK_TMP/purge.out" >&2; yk_fail "purge --dry-run failed"; }
grep -qF "Would remove token $GONE_ID of entry $GONE_DN (no principal name left: principal-name-gone)." \
    "$YK_TMP/purge.out" && grep -q "^Would remove 1 token\.$" \
    "$YK_TMP/purge.out" ||
    { cat "$YK_TMP/purge.out" >&2;
      yk_fail "purge --dry-run does not name gone's token alone"; }
[ "$(gone_attrs)" = "$before" ] || yk_fail "purge --dry-run changed $GONE_DN"
yk_ykadmin purge > "$YK_TMP/purge.out" 2>&1 ||
    { cat "$YK_TMP/purge.out" >&2; yk_fail "purge failed"; }
grep -qF "Removed token $GONE_ID of entry $GONE_DN" "$YK_TMP/purge.out" &&
    grep -qF "purge dn=$GONE_DN public_id=$GONE_ID reason=principal-name-gone" \
        "$YK_TMP/purge.out" &&
    grep -q "^Removed 1 token\.$" "$YK_TMP/purge.out" ||
    { cat "$YK_TMP/purge.out" >&2; yk_fail "purge did not remove gone's token"; }
[ "$(gone_attrs)" = "dn: $GONE_DN" ] ||
    yk_fail "after purge, $GONE_DN still holds: $(gone_attrs)"
yk_ykadmin list > "$YK_TMP/list.out" 2>&1 &&
    grep -q "^alice@$R .*$ALICE_ID " "$YK_TMP/list.out" &&
    grep -q "^bob@$R .*$BOB_ID " "$YK_TMP/list.out" ||
    { cat "$YK_TMP/list.out" >&2; yk_fail "purge touched alice or bob"; }
yk_ykadmin purge > "$YK_TMP/purge.out" 2>&1 &&
    grep -q "^Removed 0 tokens\.$" "$YK_TMP/purge.out" ||
    { cat "$YK_TMP/purge.out" >&2; yk_fail "purge again is not a no-op"; }
# A principal put on that entry again starts without the old token.
yk_kldap_addprinc_dn gone2 gone2-pw "$GONE_DN"
yk_ykadmin list "gone2@$R" > "$YK_TMP/list.out" 2>&1
grep -q "has no token" "$YK_TMP/list.out" ||
    { cat "$YK_TMP/list.out" >&2; yk_fail "gone2 inherited a token"; }
yk_ok "purge: --dry-run names the token of the nameless entry $GONE_DN and" \
    "writes nothing; purge strips its token, policy and class (entry" \
    "kept), logs it, leaves alice and bob; a new principal there holds" \
    "no token"

# --- the keyring's owner: another user's keyring is refused --------------
# Its owner could replace the keys.  The running KDC keeps the keyring it
# loaded (the change is seen within 5 s, at an OTP login) and says why.
KEYRING=$YK_KRB5_DIR/master.keyring
chown nobody "$KEYRING" || yk_fail "chown nobody $KEYRING"
sleep 5.5
login alice alice-pw "$(yk_otp "$YK_TMP/alice.tok")" ||
    { cat "$YK_TMP/kinit.out" >&2;
      yk_fail "alice refused while the KDC kept its loaded keyring"; }
grep -q "KEYRING NOT RELOADED: realm $R: the master keyring $KEYRING changed but cannot be loaded: Master keyring file is owned by another user" \
    "$YK_KDC_LOG" ||
    { grep KEYRING "$YK_KDC_LOG" >&2;
      yk_fail "the KDC did not refuse a keyring owned by nobody"; }
yk_ykadmin list "alice@$R" > /dev/null 2>&1 ||
    yk_fail "list needs no keyring, yet failed"
yk_ykadmin verify "$(yk_otp "$YK_TMP/alice.tok")" > "$YK_TMP/verify.out" 2>&1 &&
    yk_fail "ykadmin verify used a keyring owned by nobody"
grep -qF "cannot load the master keyring $KEYRING: it is owned by nobody" \
    "$YK_TMP/verify.out" && grep -qF "\"chown root $KEYRING\"" \
    "$YK_TMP/verify.out" ||
    { cat "$YK_TMP/verify.out" >&2;
      yk_fail "ykadmin does not say whose the keyring is and what to do"; }
chown root "$KEYRING" || yk_fail "chown root $KEYRING"
yk_ok "a keyring owned by nobody: the KDC keeps the one it loaded and" \
    "logs that it is another user's; ykadmin names the owner and the chown"

# --- the KDC is still up and logged no OTP -----------------------------
kill -0 "$YK_KDC_PID" 2>/dev/null || yk_fail "the KDC died"
grep -qF "$good" "$YK_KDC_LOG" && yk_fail "an OTP appears in the KDC log"
echo "figures: $(grep -c 'yubikey: principal=' "$YK_KDC_LOG") attempts" \
    "logged by $(yk_kdc_starts) KDC starts, total $(($(yk_ms) - T0)) ms"
echo "PASS: kldap.sh"
exit 0
