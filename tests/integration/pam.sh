#!/bin/bash
# SPDX-License-Identifier: MIT
# pam.sh: a console login through PAM: pam_krb5 (libpam-krb5) with our
# client module answers the password and the OTP prompts.
#
# A DB2 realm (realm.sh); the PAM service yk-krb5 ("auth required
# pam_krb5.so", the snippet of doc/services.md) driven by pamtester,
# in a private mount namespace whose /etc/pam.d, /etc/passwd and
# /etc/group are the test's (the host's own are never read or written);
# krb5.conf is the one with our client module (KRB5_CONFIG).
#   alice, password + OTP at the two prompts ("Password:", "YubiKey OTP
#   for alice@REALM:"): authenticated, the KDC logs it accepted;
#   the same OTP again: refused (replay); a wrong OTP: refused (bad CRC);
#   a wrong password with a fresh OTP: refused, and that OTP still works.
# Exit 0 pass, 1 fail, 77 skip (announced: not root, no pamtester or
# pam_krb5, no unshare -m).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"

R=$YK_REALM
yk_init
yk_realm_check_tools
command -v pamtester > /dev/null ||
    yk_skip "pamtester is not installed (tools/packages)"
ls /lib/*/security/pam_krb5.so /usr/lib/*/security/pam_krb5.so \
    > /dev/null 2>&1 || yk_skip "pam_krb5.so not found (libpam-krb5)"
[ "$(id -u)" = 0 ] ||
    yk_skip "a private /etc/pam.d (mount namespace) needs root"
unshare -m --propagation private true 2>/dev/null ||
    yk_skip "unshare -m fails here: no private /etc/pam.d"

yk_realm_setup
yk_realm_addprinc alice alice-pw
yk_realm_enroll alice "$YK_TMP/alice.tok"
yk_kdc_start

P=$YK_TMP/pam
mkdir -p "$P/pam.d" || yk_fail "mkdir $P"
# The service of doc/services.md ("Console and PAM").
cat > "$P/pam.d/yk-krb5" <<'EOF'
auth     required   pam_krb5.so
account  required   pam_permit.so
EOF
{ cat /etc/passwd; echo "alice:x:2001:2001:alice:/nonexistent:/usr/sbin/nologin"; } \
    > "$P/passwd"
{ cat /etc/group; echo "alice:x:2001:"; } > "$P/group"
cat > "$P/in-ns.sh" <<EOF
#!/bin/sh
mount --bind "$P/pam.d" /etc/pam.d &&
mount --bind "$P/passwd" /etc/passwd &&
mount --bind "$P/group" /etc/group || exit 9
exec "\$@"
EOF
chmod +x "$P/in-ns.sh"

# pam FIRST SECOND: pamtester authenticate alice through yk-krb5, FIRST
# and SECOND typed at its prompts; output (the prompts too) in
# $P/pam.out; pamtester's status.
pam() {
    printf '%s\n%s\n' "$1" "$2" |
        KRB5_CONFIG=$YK_KRB5_CONF unshare -m --propagation private \
        "$P/in-ns.sh" pamtester -v yk-krb5 alice authenticate \
        > "$P/pam.out" 2>&1
}

otp=$(yk_otp "$YK_TMP/alice.tok")
pam alice-pw "$otp" ||
    { cat "$P/pam.out" >&2; yk_fail "alice: PAM login with the OTP failed"; }
grep -q "successfully authenticated" "$P/pam.out" &&
    grep -q "Password:" "$P/pam.out" &&
    grep -q "YubiKey OTP for alice@$R:" "$P/pam.out" ||
    { cat "$P/pam.out" >&2; yk_fail "alice: not the two prompts and success"; }
yk_expect_attempt alice "verdict=accepted"
yk_ok "pam_krb5 + our client module: \"Password:\" then \"YubiKey OTP" \
    "for alice@$R:\", authenticated; the KDC accepted the OTP"

pam alice-pw "$otp" && { cat "$P/pam.out" >&2; yk_fail "a replay logged in"; }
yk_expect_attempt alice "verdict=refused reason=replay"
bad=$(yk_otp "$YK_TMP/alice.tok")
case "${bad: -1}" in c) bad="${bad%?}b" ;; *) bad="${bad%?}c" ;; esac
pam alice-pw "$bad" && { cat "$P/pam.out" >&2; yk_fail "a wrong OTP logged in"; }
yk_expect_attempt alice "verdict=refused reason=bad CRC or key"
grep -q "Authentication failure\|authentication failure" "$P/pam.out" ||
    { cat "$P/pam.out" >&2; yk_fail "pamtester does not say it failed"; }
otp=$(yk_otp "$YK_TMP/alice.tok")
pam wrong-pw "$otp" && { cat "$P/pam.out" >&2;
    yk_fail "a wrong password logged in"; }
yk_expect_attempt alice "verdict=refused reason=wrong password"
pam alice-pw "$otp" ||
    { cat "$P/pam.out" >&2; yk_fail "the OTP after a wrong password was lost"; }
yk_expect_attempt alice "verdict=accepted"
yk_ok "PAM: a replay, a wrong OTP and a wrong password refused; the OTP" \
    "typed with the wrong password still logs in"
echo "PASS: pam.sh"
exit 0
