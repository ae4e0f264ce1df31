#!/bin/bash
# review.sh: the security review's findings (issue 10), one test each.
#
# 1. ABA: a token deleted and its public id enrolled again starts from a
#    state value equal to the old token's when that one was never used.
#    A KDC worker that cached the old record (cache TTL 60) must not
#    accept the old key's OTP: its swap asserts the secret value it read
#    too, so it loses, re-reads and refuses (bad CRC or key).
# Exit 0 pass, 1 fail, 77 skip (announced).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"

R=$YK_REALM
YK_CACHE_TTL=60

yk_realm_setup
yk_realm_addprinc alice alice-pw
yk_kdc_start

# The yubikeyTokenState values of alice's entry.
states() {
    yk_ldapsearch_as "$YK_ADMIN_DN" "$YK_ADMIN_PW" \
        -b "$YK_LDAP_BASE" "(krbPrincipalName=alice@$R)" yubikeyTokenState |
        sed -n 's/^yubikeyTokenState: //p'
}

# login PASSWORD OTP: kinit with our client module.
login() {
    printf '%s\n%s\n' "$1" "$2" | yk_kinit "alice@$R"
}

# --- 1. ABA ---------------------------------------------------------------
yk_ykadmin enroll "alice@$R" --emulate "$YK_TMP/old.tok" \
    > "$YK_TMP/enroll.out" 2>&1 ||
    { cat "$YK_TMP/enroll.out" >&2; yk_fail "enroll the old token"; }
pubid=$("$YK_YKEMU_BIN" --public-id "$YK_TMP/old.tok") ||
    yk_fail "ykemu --public-id"
old_state=$(states)
# A refused attempt fills the KDC's cache with the old record (a wrong
# password: the request does not open, nothing is swapped).
login wrong-pw "$(yk_otp "$YK_TMP/old.tok")" &&
    yk_fail "alice: a wrong password was accepted"
yk_expect_attempt alice "verdict=refused reason=wrong password"
[ "$(states)" = "$old_state" ] || yk_fail "a refused attempt changed the state"
yk_ykadmin delete "$pubid" > "$YK_TMP/delete.out" 2>&1 ||
    { cat "$YK_TMP/delete.out" >&2; yk_fail "ykadmin delete"; }
yk_ykadmin enroll "alice@$R" --public-id "$pubid" --emulate \
    "$YK_TMP/new.tok" > "$YK_TMP/enroll.out" 2>&1 ||
    { cat "$YK_TMP/enroll.out" >&2; yk_fail "enroll the new token"; }
[ "$(states)" = "$old_state" ] ||
    yk_fail "the re-enrolled token's state \"$(states)\" differs from the" \
        "old one's \"$old_state\": this test no longer sets up an ABA"
login alice-pw "$(yk_otp "$YK_TMP/old.tok")" &&
    yk_fail "ABA: the deleted token's OTP was accepted (cached record)"
yk_expect_attempt alice "verdict=refused reason=bad CRC or key"
login alice-pw "$(yk_otp "$YK_TMP/new.tok")" ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "the new token's OTP refused"; }
yk_expect_attempt alice "verdict=accepted"
yk_ok "ABA: public id $pubid deleted and enrolled again with the same" \
    "state value; the old key's OTP refused (the swap asserts the secret)," \
    "the new one's accepted"

kill -0 "$YK_KDC_PID" 2>/dev/null || yk_fail "the KDC died"
echo "PASS: review.sh"
exit 0
