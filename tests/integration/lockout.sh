#!/bin/bash
# SPDX-License-Identifier: MIT
# lockout.sh: OTP failures and the KDC's lockout policy (DB2 realm).
#
# Principals under a policy of maxfailure 3 (no expiry of the count, no
# automatic unlock): three bad OTPs lock one; a wrong password with a good
# OTP counts once; a token directory outage counts nothing; and a DISCARD
# never hides a wrong password sent in the same request (the test client
# puts an encrypted timestamp made with a wrong password before our padata
# while slapd is down: the failure is counted).  The failure counts are
# the KDC's own ("kadmin.local getprinc": "Failed password attempts").
# Exit 0 pass, 1 fail, 77 skip (announced).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"

R=$YK_REALM
TC=$YK_BUILDDIR/tests/client/yktestclient
POLICY=lock3
# The breaker closes soon after slapd is back.
YK_BREAKER_TIME=1
# The KDC's UDP on another port: after a DISCARD the client's UDP try is
# refused at once (libkrb5 1.20 would otherwise wait ~17 s for it).
YK_KDC_UDP_PORT=$(yk_realm_free_port) || yk_fail "no free port"

yk_realm_setup
[ -x "$TC" ] || yk_fail "$TC is not built (run make first)"
kadmin.local -r "$R" addpol -maxfailure 3 -failurecountinterval 0 \
    -lockoutduration 0 "$POLICY" > "$YK_KRB5_DIR/kadmin.out" 2>&1 ||
    { cat "$YK_KRB5_DIR/kadmin.out" >&2; yk_fail "addpol $POLICY failed"; }
for u in lucy mike nina; do
    yk_realm_addprinc "$u" "$u-pw" -policy "$POLICY"
    yk_realm_enroll "$u" "$YK_TMP/$u.tok"
done
yk_realm_addprinc bob bob-pw
yk_realm_enroll bob "$YK_TMP/bob.tok"
yk_kdc_start

# The KDC's failure count of NAME.
failures() {
    kadmin.local -r "$R" getprinc "$1" 2>/dev/null |
        sed -n 's/^Failed password attempts: //p'
}

# Fail unless NAME's failure count is N (what: the step, for the message).
expect_failures() {
    local n
    n=$(failures "$1")
    [ "$n" = "$2" ] ||
        yk_fail "$1: failure count \"$n\" after $3, expected $2"
}

# kinit NAME with password PW and OTP; sets ELAPSED (ms); returns kinit's
# status.
login() {
    local t0 rc
    t0=$(yk_ms)
    printf '%s\n%s\n' "$2" "$3" | yk_kinit "$1"
    rc=$?
    ELAPSED=$(($(yk_ms) - t0))
    return $rc
}

# The test client (password-only krb5.conf) for NAME; output in
# $YK_TMP/tc.out; sets ELAPSED (ms); returns its exit code (0 issued,
# 1 refused, 2 no reply).
tclient() {
    local t0 rc
    t0=$(yk_ms)
    KRB5_CONFIG=$YK_KRB5_CONF_PLAIN "$TC" "$@" > "$YK_TMP/tc.out" 2>&1
    rc=$?
    ELAPSED=$(($(yk_ms) - t0))
    return $rc
}

# The newest module log line of NAME must contain WANT.
expect_last() {
    local last
    last=$(yk_kdc_attempts "$1@$R" | tail -1)
    case "$last" in
        *"$2"*) ;;
        *) yk_fail "$1: last log line \"$last\" lacks \"$2\"" ;;
    esac
}

# Change the first character of an OTP's token part (the 32 characters at
# its end) to another modhex digit: a bad CRC.
garble() {
    local otp=$1 n c
    n=$((${#otp} - 32))
    c=${otp:n:1}
    [ "$c" = c ] && c=b || c=c
    printf '%s%s%s\n' "${otp:0:n}" "$c" "${otp:n+1}"
}

# --- three bad OTPs lock lucy; the lock refuses a good one -------------
otp=$(yk_otp "$YK_TMP/lucy.tok")
login lucy lucy-pw "$otp" ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "lucy: first login refused"; }
expect_failures lucy 0 "a good login"
login lucy lucy-pw "$otp" && yk_fail "lucy: a replayed OTP was accepted"
expect_last lucy "verdict=refused reason=replay"
expect_failures lucy 1 "a replayed OTP"
login lucy lucy-pw "$(yk_otp "$YK_TMP/bob.tok")" &&
    yk_fail "lucy: bob's OTP was accepted"
expect_last lucy "verdict=refused reason=unknown token"
expect_failures lucy 2 "another token's OTP"
login lucy lucy-pw "$(garble "$(yk_otp "$YK_TMP/lucy.tok")")" &&
    yk_fail "lucy: a garbled OTP was accepted"
expect_last lucy "verdict=refused reason=bad CRC or key"
expect_failures lucy 3 "a garbled OTP"
yk_ok "lucy: replayed, foreign, garbled OTP: failure count 1, 2, 3"

nlines=$(yk_kdc_attempts "lucy@$R" | grep -c .)
good=$(yk_otp "$YK_TMP/lucy.tok")
login lucy lucy-pw "$good" && yk_fail "lucy: a locked principal logged in"
grep -q "revoked" "$YK_TMP/kinit.out" ||
    { cat "$YK_TMP/kinit.out" >&2;
      yk_fail "lucy: kinit did not say the credentials are revoked"; }
grep "lucy@$R" "$YK_KDC_LOG" | tail -1 | grep -q 'LOCKED_OUT' ||
    yk_fail "lucy: the KDC log does not say LOCKED_OUT"
[ "$(yk_kdc_attempts "lucy@$R" | grep -c .)" -eq "$nlines" ] ||
    yk_fail "lucy: the module ran for a locked principal"
yk_ok "lucy locked: a good OTP refused ($(sed -n 's/^kinit: //p' \
    "$YK_TMP/kinit.out"); KDC: LOCKED_OUT), the module never ran"
kadmin.local -r "$R" modprinc -unlock lucy > "$YK_KRB5_DIR/kadmin.out" 2>&1 ||
    yk_fail "modprinc -unlock lucy failed"
login lucy lucy-pw "$good" ||
    { cat "$YK_TMP/kinit.out" >&2;
      yk_fail "lucy: the OTP refused while locked was consumed"; }
expect_last lucy "verdict=accepted"
expect_failures lucy 0 "a good login after the unlock"
yk_ok "unlocked: the same OTP accepted (the lock consumed nothing)"

# --- a wrong password with a good OTP counts once ----------------------
otp=$(yk_otp "$YK_TMP/mike.tok")
login mike wrong-pw "$otp" &&
    yk_fail "mike: a wrong password with a good OTP was accepted"
expect_last mike "verdict=refused reason=wrong password"
expect_failures mike 1 "one wrong password with a good OTP"
login mike mike-pw "$otp" ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "mike: password + OTP refused"; }
expect_failures mike 0 "a good login"
yk_ok "mike: wrong password + good OTP counted once; then accepted"

# --- an outage counts nothing; a wrong password in it still counts -----
login nina nina-pw "$(yk_otp "$YK_TMP/nina.tok")" ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "nina: first login refused"; }
yk_slapd_stop
login nina nina-pw "$(yk_otp "$YK_TMP/nina.tok")" &&
    yk_fail "nina: logged in with the token directory down"
grep -q "Cannot contact any KDC" "$YK_TMP/kinit.out" ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "nina: kinit got an answer"; }
expect_last nina "verdict=discarded reason=backend"
t_kinit=$ELAPSED
for i in 1 2 3; do
    tclient --password nina-pw --emu "$YK_TMP/nina.tok" nina
    rc=$?
    [ "$rc" -eq 2 ] ||
        { cat "$YK_TMP/tc.out" >&2;
          yk_fail "nina: outage attempt $i: exit $rc, expected 2 (no reply)"; }
    expect_last nina "verdict=discarded reason=backend"
done
expect_failures nina 0 "4 attempts during the outage"
yk_ok "slapd down: 4 good OTP logins DISCARDed (kinit: Cannot contact any" \
    "KDC, ${t_kinit} ms; test client: no reply, ${ELAPSED} ms), count 0"

tclient --send wrong-ts --password nina-pw --emu "$YK_TMP/nina.tok" nina
rc=$?
[ "$rc" -eq 1 ] ||
    { cat "$YK_TMP/tc.out" >&2;
      yk_fail "nina: a wrong encrypted timestamp with our padata during" \
          "the outage: exit $rc, expected 1 (refused)"; }
grep -q '^result: refused: .*(KDC error 24)' "$YK_TMP/tc.out" ||
    { cat "$YK_TMP/tc.out" >&2; yk_fail "nina: not PREAUTH_FAILED"; }
expect_last nina "verdict=refused reason=backend"
expect_failures nina 1 "a wrong encrypted timestamp sent with our padata"
yk_ok "slapd down: wrong-password encrypted timestamp + our padata:" \
    "refused (KDC error 24), counted ($(failures nina))"
# Our padata alone with a wrong password: answered like the right one
# (no reply), or the outage would confirm a password without the token.
login nina wrong-pw "$(yk_otp "$YK_TMP/nina.tok")" &&
    yk_fail "nina: a wrong password was accepted"
grep -q "Cannot contact any KDC" "$YK_TMP/kinit.out" ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "nina: wrong password answered"; }
expect_last nina "verdict=discarded reason=backend"
expect_failures nina 1 "a wrong password (our padata alone) in the outage"
yk_ok "slapd down: a wrong password with an OTP is DISCARDed like the" \
    "right one (no password oracle), not counted ($(failures nina))"

yk_slapd_start
sleep "$YK_BREAKER_TIME"
login nina nina-pw "$(yk_otp "$YK_TMP/nina.tok")" ||
    { cat "$YK_TMP/kinit.out" >&2;
      yk_fail "nina: refused after slapd came back"; }
expect_last nina "verdict=accepted"
expect_failures nina 0 "a good login"
yk_ok "slapd back: nina logs in (${ELAPSED} ms), count reset to 0"

kill -0 "$YK_KDC_PID" 2>/dev/null || yk_fail "the KDC died"
for u in lucy mike nina; do
    yk_kdc_attempts "$u@$R" | sed 's/^.*yubikey: /  /'
done
echo "PASS: lockout.sh"
exit 0
