#!/bin/bash
# SPDX-License-Identifier: MIT
# store.sh: the LDAP token store, schema and ACLs against a real slapd.
#
# Starts a throwaway slapd with the shipped schema and ACLs (lib.sh), then
# runs store_test scenarios and checks the directory with ldapsearch:
# enrolment and uniqueness, compare-and-swap and its races, several state
# values, administrative rewrites, lookups, what each identity can read
# and write, SASL EXTERNAL, the configuration, a swap beside a lower value
# it did not read (removed) and beside one as high (a rival, refused), a
# stopped and a frozen slapd, and the cn=config forms of the schema and
# the ACLs.  Exit 0 pass, 1 fail, 77 skip.  YK_TEST_WRAPPER (e.g.
# "valgrind -q") prefixes every store_test run but the acting ones
# (leftover, rival, the timed outage).
if [ -z "${BASH_VERSION:-}" ]; then
    exec bash "$0" "$@"
fi
set -u

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top_srcdir/tests/integration/lib.sh"

bin=$YK_BUILDDIR/tests/integration/store_test
[ -x "$bin" ] || yk_fail "$bin not built (make check builds it)"

yk_init
YK_SLAPD_LDAPI=1
yk_slapd_setup
yk_slapd_start
echo "slapd pid $YK_SLAPD_PID on $YK_LDAP_URI"

export YK_TEST_URI=$YK_LDAP_URI YK_TEST_LDAPI_URI=$YK_LDAPI_URI
export YK_TEST_BASE=$YK_LDAP_BASE YK_TEST_REALM=$YK_REALM
export YK_TEST_PEOPLE=$YK_PEOPLE_DN YK_TEST_TIMEOUT_MS=500
export YK_TEST_KDC_DN=$YK_KDC_DN YK_TEST_KDC_PW=$YK_KDC_PW
export YK_TEST_ADMIN_DN=$YK_YKADMIN_DN YK_TEST_ADMIN_PW=$YK_YKADMIN_PW
export YK_TEST_HELPDESK_DN=$YK_HELPDESK_DN YK_TEST_HELPDESK_PW=$YK_HELPDESK_PW
export YK_TEST_USER_DN=$YK_USER_DN YK_TEST_USER_PW=$YK_USER_PW

pub_a=cccccccccccb
pub_b=cccccccccccd
pub_hidden=ccccccccccce
fails=0

# How many state values of $pub_a alice's entry holds.
a_states() {
    yk_ldapsearch_as "$YK_ADMIN_DN" "$YK_ADMIN_PW" \
        -b "uid=alice,$YK_PEOPLE_DN" -s base yubikeyTokenState |
        grep -c "^yubikeyTokenState: yk1 id=$pub_a "
}

# Run one store_test scenario; count a failure.
run() {
    echo "--- store_test $*"
    ${YK_TEST_WRAPPER:-} "$bin" "$@" ||
        { echo "FAIL: store_test $* (exit $?)"; fails=$((fails + 1)); }
}

# Count a shell-side check.
expect() {
    local what=$1
    shift
    if "$@"; then
        yk_ok "$what"
    else
        echo "FAIL: $what"
        fails=$((fails + 1))
    fi
}

kldap_realm="cn=KLDAP.TEST,cn=krbContainer,$YK_LDAP_BASE"

# The directory: principals, duplicates, a name needing escapes, an entry
# outside ou=people holding a public id, a kldap-style realm container.
for p in alice bob; do
    yk_ldap_add_principal "$p"
done
yk_ldap_add_principal dup "$YK_REALM" dup1
yk_ldap_add_principal dup "$YK_REALM" dup2
yk_ldap_add_principal 'we*ird(x)\' "$YK_REALM" weird
yk_ldap_modify <<EOF
dn: ou=hidden,$YK_LDAP_BASE
changetype: add
objectClass: organizationalUnit
ou: hidden

dn: uid=hidden,ou=hidden,$YK_LDAP_BASE
changetype: add
objectClass: inetOrgPerson
objectClass: krbPrincipalAux
objectClass: yubikeyPrincipalAux
uid: hidden
cn: hidden
sn: hidden
krbPrincipalName: hidden@$YK_REALM
yubikeyPublicId: $pub_hidden

dn: cn=krbContainer,$YK_LDAP_BASE
changetype: add
objectClass: krbContainer
cn: krbContainer

dn: $kldap_realm
changetype: add
objectClass: krbRealmContainer
cn: KLDAP.TEST
krbSubTrees: $YK_PEOPLE_DN
krbSearchScope: 2

dn: krbPrincipalName=kalice@KLDAP.TEST,$kldap_realm
changetype: add
objectClass: krbPrincipal
objectClass: krbPrincipalAux
krbPrincipalName: kalice@KLDAP.TEST
EOF

# Writing the principal's public id by hand to a second entry: slapo-unique.
yk_ldapmodify_as "$YK_YKADMIN_DN" "$YK_YKADMIN_PW" <<EOF
dn: uid=bob,$YK_PEOPLE_DN
changetype: modify
add: objectClass
objectClass: yubikeyPrincipalAux
-
add: yubikeyPublicId
yubikeyPublicId: $pub_hidden
EOF
rc=$?
expect "slapo-unique refuses a second entry with the same yubikeyPublicId" \
    [ "$rc" -eq 19 ]

run add
expect "enrolment added the auxiliary class to alice's entry" \
    grep -qi '^objectClass: yubikeyPrincipalAux' \
    <(yk_ldapsearch_as "$YK_ADMIN_DN" "$YK_ADMIN_PW" \
        -b "uid=alice,$YK_PEOPLE_DN" -s base objectClass)
run cas
run race 20

# Several state values for one token, a malformed one, a stray value.
yk_ldap_modify <<EOF
dn: uid=alice,$YK_PEOPLE_DN
changetype: modify
add: yubikeyTokenState
yubikeyTokenState: yk1 id=$pub_a ctr=3 gen=1 nonce=- used=0
yubikeyTokenState: yk1 id=$pub_a ctr=999999 gen=1 nonce=0000abcd used=1
yubikeyTokenState: yk1 id=$pub_b ctr=01 gen=0 nonce=- used=0
yubikeyTokenState: garbage
EOF
run extras
states=$(a_states)
expect "after the swap one state value of $pub_a is left ($states)" \
    [ "$states" -eq 1 ]
yk_ldap_modify <<EOF
dn: uid=alice,$YK_PEOPLE_DN
changetype: modify
delete: yubikeyTokenState
yubikeyTokenState: garbage
EOF

run admin
left=$(yk_ldapsearch_as "$YK_ADMIN_DN" "$YK_ADMIN_PW" \
    -b "uid=alice,$YK_PEOPLE_DN" -s base yubikeyPublicId yubikeyTokenSecret \
    yubikeyTokenState | grep -c "$pub_b")
expect "delete left no value naming $pub_b ($left)" [ "$left" -eq 0 ]
run lookups

# ACLs, seen with ldapsearch as each identity.
view() {
    yk_ldapsearch_as "$1" "$2" -b "uid=alice,$YK_PEOPLE_DN" -s base \
        yubikeyTokenSecret yubikeyTokenState yubikeyPublicId yubikeyPolicy \
        krbPrincipalName 2>&1
}
kdc_view=$(view "$YK_KDC_DN" "$YK_KDC_PW")
help_view=$(view "$YK_HELPDESK_DN" "$YK_HELPDESK_PW")
user_view=$(view "$YK_USER_DN" "$YK_USER_PW")
anon_view=$(view "" "")
expect "the KDC reads secret, state and public id" \
    eval 'grep -q "^yubikeyTokenSecret:" <<<"$kdc_view" &&
          grep -q "^yubikeyTokenState:" <<<"$kdc_view" &&
          grep -q "^yubikeyPublicId:" <<<"$kdc_view"'
expect "the helpdesk reads state and public id but no secret" \
    eval '! grep -q "^yubikeyTokenSecret" <<<"$help_view" &&
          grep -q "^yubikeyTokenState:" <<<"$help_view" &&
          grep -q "^yubikeyPublicId:" <<<"$help_view"'
expect "an ordinary user reads neither secret nor state" \
    eval 'grep -q "^krbPrincipalName:" <<<"$user_view" &&
          ! grep -q "^yubikey" <<<"$user_view"'
expect "anonymous reads neither secret nor state" \
    eval 'grep -q "^krbPrincipalName:" <<<"$anon_view" &&
          ! grep -q "^yubikey" <<<"$anon_view"'
yk_ldapmodify_as "$YK_KDC_DN" "$YK_KDC_PW" <<EOF
dn: uid=alice,$YK_PEOPLE_DN
changetype: modify
add: yubikeyTokenSecret
yubikeyTokenSecret: yk1 id=vvvvvvvvvvvv st=active serial= at=0 by= desc= wrap=x
EOF
rc=$?
expect "the KDC cannot write yubikeyTokenSecret (ldapmodify exit $rc)" \
    [ "$rc" -eq 50 ]
yk_ldapmodify_as "$YK_HELPDESK_DN" "$YK_HELPDESK_PW" <<EOF
dn: uid=alice,$YK_PEOPLE_DN
changetype: modify
add: yubikeyTokenState
yubikeyTokenState: yk1 id=$pub_a ctr=1 gen=0 nonce=- used=0
EOF
rc=$?
expect "the helpdesk cannot write yubikeyTokenState (exit $rc)" \
    [ "$rc" -eq 50 ]
run acl
run sasl

# Configuration: explicit relations, kldap defaults, refusals.
hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
# A kldap stash: another DN's line first, ours in another case.
{
    printf '%s#{HEX}%s\n' "$YK_HELPDESK_DN" "$(hex "$YK_HELPDESK_PW")"
    printf '%s#{HEX}%s\n' "$(tr a-z A-Z <<<"$YK_KDC_DN")" "$(hex "$YK_KDC_PW")"
} > "$YK_TMP/stash"
printf 'plain pass\nsecond line\n' > "$YK_TMP/plain"
cat > "$YK_TMP/kdc.conf" <<EOF
[realms]
    $YK_REALM = {
        yubikey_ldap_uri = $YK_LDAP_URI
        yubikey_ldap_write_uri = $YK_LDAP_URI
        yubikey_ldap_bind_dn = $YK_KDC_DN
        yubikey_ldap_password_file = $YK_TMP/stash
        yubikey_ldap_base = $YK_LDAP_BASE
        yubikey_master_key_file = /nonexistent/keyring
        yubikey_ldap_timeout = 0.25
        yubikey_cache_ttl = 7
        yubikey_breaker_time = 3
        yubikey_require_fast = true
        yubikey_2fa_indicator = custom-2fa
    }
    KLDAP.TEST = {
        database_module = KLDAPMOD
    }
    BADTIME.TEST = {
        yubikey_ldap_uri = $YK_LDAP_URI
        yubikey_ldap_timeout = 0.0
    }
    BADTIME2.TEST = {
        yubikey_ldap_uri = $YK_LDAP_URI
        yubikey_ldap_timeout = -1
    }
    NOSTASH.TEST = {
        yubikey_ldap_uri = $YK_LDAP_URI
        yubikey_ldap_bind_dn = cn=nobody,$YK_LDAP_BASE
        yubikey_ldap_password_file = $YK_TMP/stash
    }
    PLAIN.TEST = {
        yubikey_ldap_password_file = $YK_TMP/plain
        yubikey_ldap_timeout = 1.5
    }
[dbdefaults]
    ldap_kdc_dn = $YK_KDC_DN
[dbmodules]
    KLDAPMOD = {
        db_library = kldap
        ldap_servers = $YK_LDAP_URI
        ldap_kerberos_container_dn = cn=krbContainer,$YK_LDAP_BASE
        ldap_service_password_file = $YK_TMP/stash
    }
EOF
YK_TEST_PROFILE=$YK_TMP/kdc.conf run config

# A scenario that asks the shell to act (ACTION lines, answered "go").
run_acting() {
    local line rc st_pid
    echo "--- store_test $1"
    rm -f "$YK_TMP/to_test" "$YK_TMP/from_test"
    mkfifo "$YK_TMP/to_test" "$YK_TMP/from_test" || yk_fail "mkfifo"
    "$bin" "$1" < "$YK_TMP/to_test" > "$YK_TMP/from_test" &
    st_pid=$!
    exec 8> "$YK_TMP/to_test" 9< "$YK_TMP/from_test"
    # slapd must not inherit the pipes: 8>&- 9<&- on each start.
    while IFS= read -r line <&9; do
        case $line in
            "ACTION stop") yk_slapd_stop; echo "(slapd stopped)" ;;
            "ACTION start") yk_slapd_start 8>&- 9<&-
                            echo "(slapd restarted)" ;;
            "ACTION freeze") yk_slapd_freeze; echo "(slapd frozen: SIGSTOP)" ;;
            "ACTION thaw") yk_slapd_thaw; echo "(slapd thawed: SIGCONT)" ;;
            "ACTION leftover")
                # What delta-syncrepl leaves after a conflict: a lower
                # value of the token that came in after the KDC's read.
                yk_ldap_modify 8>&- 9<&- <<EOF
dn: uid=alice,$YK_PEOPLE_DN
changetype: modify
add: yubikeyTokenState
yubikeyTokenState: yk1 id=$pub_a ctr=7 gen=1 nonce=00000007 used=1
EOF
                echo "(a lower state value of $pub_a added)" ;;
            "ACTION rival "*)
                # Another provider's acceptance of the same counter,
                # replicated after the KDC's read.
                yk_ldap_modify 8>&- 9<&- <<EOF
dn: uid=alice,$YK_PEOPLE_DN
changetype: modify
add: yubikeyTokenState
yubikeyTokenState: yk1 id=$pub_a ctr=${line#ACTION rival } gen=5 nonce=0000beef used=1
EOF
                echo "(a state value of $pub_a, counter ${line#ACTION rival }, added)" ;;
            *) echo "$line"; continue ;;
        esac
        echo go >&8
    done
    exec 8>&- 9<&-
    wait "$st_pid"
    rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "FAIL: store_test $1 (exit $rc)"
        fails=$((fails + 1))
    fi
}

run_acting leftover
states=$(a_states)
expect "after the swap beside a leftover, one state value of $pub_a is left ($states)" \
    [ "$states" -eq 1 ]

run_acting rival
states=$(a_states)
expect "after the rival and a swap from a fresh read, one state value of $pub_a is left ($states)" \
    [ "$states" -eq 1 ]

# Outages: the same store object across a stop, a restart and a freeze.
run_acting outage

# A write server that refuses writes (readonly on, like a replica).
yk_slapd_stop
sed -i '/^directory /a readonly on' "$YK_TMP/slapd/slapd.conf"
yk_slapd_start
run readonly

echo "--- cn=config forms"
yk_slapd_cnconfig_check

if [ "$fails" -ne 0 ]; then
    echo "FAIL: $fails store test group(s) failed"
    exit 1
fi
echo "PASS: store.sh"
exit 0
