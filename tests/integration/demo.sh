#!/bin/bash
# SPDX-License-Identifier: MIT
# demo.sh: tools/demo as a smoke test, on the tree "make check" built.
#
# Runs tools/demo with YK_DEMO_PREBUILT (no install, no build) and checks
# its exit status, the lines an administrator watching it relies on, its
# summary line, and that it stopped what it started and removed its
# temporary directory.  Exit 0 pass, 1 fail, 77 skip (announced).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=lib.sh
. "$srcdir/tests/integration/lib.sh"

yk_init
out=$YK_TMP/demo.out

YK_DEMO_PREBUILT=$YK_BUILDDIR bash "$srcdir/tools/demo" > "$out" 2>&1
rc=$?
cat "$out"
echo "--- tools/demo exited with $rc"
[ "$rc" -ne 77 ] || yk_skip "tools/demo could not run (see above)"
[ "$rc" -eq 0 ] || yk_fail "tools/demo failed (exit $rc)"

# Check that the output holds a line matching the extended regex $1.
expect() {
    grep -qE -- "$1" "$out" || yk_fail "tools/demo printed no line like: $1"
}

R=EXAMPLE.TEST
SIGN=host/sign.example.test
expect "^      Password for alice@$R: alice-pw"
expect "^      YubiKey OTP for alice@$R: [cbdefghijklnrtuv]{44}  <- ykemu\$"
attempt="yubikey: principal=alice@$R pubid=[a-z]+ counter=[0-9]+ mode=2fa"
expect "$attempt verdict=accepted reason=accepted\$"
expect "^    ok: TGT flags [A-Z]*H[A-Z]* include H\$"
expect "^      $SIGN@$R: kvno = 1\$"
expect "$attempt verdict=refused reason=replay\$"
expect "PREAUTH_FAILED: alice@$R for krbtgt/$R@$R"
expect "Attributes: REQUIRES_PRE_AUTH REQUIRES_HW_AUTH"
expect "^      kvno: KDC policy rejects request while getting credentials for"
expect "HIGHER_AUTHENTICATION_REQUIRED.* carol@$R for $SIGN@$R, Required auth"
expect "Required auth indicators not present in ticket: yubikey-2fa\$"
yk_ok "tools/demo showed login, H flag, signing ticket, replay and refusals"

# Step 10: the stock kinit (RFC 6560) over anonymous PKINIT armor.
expect "^\[10/12\] A stock kinit, anonymous PKINIT armor \\(RFC 6560\\)"
expect "^    \\$ KRB5_CONFIG=krb5-stock.conf kinit -n -c armor.cc\$"
expect "^      Default principal: WELLKNOWN/ANONYMOUS@WELLKNOWN:ANONYMOUS\$"
expect "^      Enter OTP Token Value: alice-pw[cbdefghijklnrtuv]{44}  <- typed"
expect "^      Preauth module otp \\(141\\) \\(real\\) returned: 0/Success\$"
n=$(grep -cE "$attempt verdict=accepted reason=accepted\$" "$out")
[ "$n" -eq 2 ] ||
    yk_fail "tools/demo showed $n accepted OTP lines, not 2 (steps 5, 10)"
expect "^    ok: stock kinit: TGT flagged [A-Z]*H[A-Z]*, ticket for $SIGN;"
expect "^    ok: stock kinit, policy otp: carol's OTP alone -> TGT flagged .*H"
yk_ok "tools/demo showed a stock kinit's password + OTP, and the OTP" \
    "alone, over anonymous PKINIT armor"

# Steps 11 and 12: the web page and ssh.
expect "^\[11/12\] Web single sign-on: Apache \+ mod_auth_gssapi"
expect "^ +GssapiRequiredNameAttributes \"auth-indicators=yubikey-2fa\"\$"
expect "^      indicators: yubikey,yubikey-2fa\$"
expect "^      HTTP 403\$"
expect "^      Refused: this page needs a ticket obtained with the YubiKey"
expect "^      alice@$R 200 /yubikey Firefox/"
expect "^      - 403 /yubikey Firefox/"
for png in granted-alice refused-dave; do
    [ -s "$YK_BUILDDIR/demo-screenshots/$png.png" ] ||
        yk_fail "tools/demo saved no $png.png"
done
expect "^\[12/12\] ssh to a signing host: only a YubiKey ticket logs in"
expect "^      signed in as "
expect "HIGHER_AUTHENTICATION_REQUIRED.* dave@$R for host/localhost@$R"
expect "Accepted gssapi-with-mic for .* ssh2: alice@$R"
yk_ok "tools/demo showed the YubiKey ticket opening the web page (curl," \
    "Firefox, screenshots) and ssh, the password ticket refused by both"

# Exactly the twelve steps, then the one-line summary, last.
n=$(grep -cE '^\[[0-9]+/12\] ' "$out")
[ "$n" -eq 12 ] || yk_fail "tools/demo showed $n of its 12 steps"
tail -1 "$out" | grep -qE '^demo: PASSED: all 12 steps behaved as shown' ||
    yk_fail "the last line is not the PASSED summary: $(tail -1 "$out")"
yk_ok "twelve steps, then the summary line"

# It stopped krb5kdc and slapd (by the PIDs it printed) and cleaned up.
stopping='^Stopping krb5kdc (pid \([0-9]*\)) and slapd (pid \([0-9]*\));'
pids=$(sed -n "s/$stopping.*/\\1 \\2/p" "$out")
tmp=$(sed -n "s/$stopping removing \(.*\)\.\$/\\3/p" "$out")
[ -n "$pids" ] && [ -n "$tmp" ] ||
    yk_fail "tools/demo did not say what it stops"
for pid in $pids; do
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != slapd ] &&
        [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != krb5kdc ] ||
        yk_fail "process $pid ($(cat "/proc/$pid/comm")) still runs"
done
[ ! -e "$tmp" ] || yk_fail "tools/demo left $tmp behind"
yk_ok "krb5kdc and slapd stopped, $tmp removed"
echo "PASS: demo.sh"
exit 0
