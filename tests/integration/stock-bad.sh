#!/bin/bash
# SPDX-License-Identifier: MIT
# stock-bad.sh: bad input on the RFC 6560 path (PA-OTP-REQUEST 142) through
# the real KDC, one case each.
#
# Structural cases, from tests/client/yktestclient's in-process 141 module
# (padata inside FAST is encrypted: the client must make them): a correct
# 142 first (the module works), then garbage, a malformed and a truncated
# 142, a wrong nonce, encData under a key other than the armor key, the
# nonce of an earlier exchange's challenge, a 142 without armor, a value
# of several KB.  Value cases, typed into stock kinit (stock.sh has the
# password alone, the OTP alone under policy 2fa and another's OTP):
# non-modhex OTPs, a value one byte over the codec's limit next to one at
# the limit, a value of several KB (kinit sends its first 1023 bytes), and
# bob's password with alice's OTP.  For each: refused with "Preauthentication
# failed" (KDC error 24), the KDC's one line for the attempt names the
# reason, the KDC is still up, and the valid OTP inside the bad request
# still logs in afterwards (nothing consumed).  Armor: anonymous PKINIT for
# the structural cases, the host keytab for the value cases, both for the
# correct 142.  Then two forms that must work: a principal with two
# tokens, one public id the tail of the other's (the longest match
# splits the value), and the password in otp-pin (accepted; a wrong one
# refused with the OTP kept; a password in both places malformed).
# Exit 0 pass, 1 fail, 77 skip (announced).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"

R=$YK_REALM
YKTC=$YK_BUILDDIR/tests/client/yktestclient
ANON=$YK_TMP/anon.cc HOST=$YK_TMP/host.cc
VALUE_MAX=256       # YK_RFC6560_VALUE_MAX: otp-value's limit (rfc6560.h)
KINIT_MAX=1023      # what stock kinit reads at its prompt (1024 - NUL)
E_ACUTE=$'\xc3\xa9'   # a UTF-8 character (2 bytes), not modhex

yk_realm_setup
[ -x "$YKTC" ] || yk_fail "$YKTC is not built (run make first)"
yk_realm_pkinit_setup
yk_realm_addprinc alice alice-pw
yk_realm_addprinc bob bob-pw
yk_realm_addprinc long long-pw-for-now
yk_realm_addprinc lm lm-pw
for p in alice bob long; do
    yk_realm_enroll "$p" "$YK_TMP/$p.tok"
done
# lm: two tokens, the short one's public id the tail of the long one's,
# so only the longest match splits password + OTP right.
LM_SHORT=vvvvvvvvvvvv LM_LONG=ccccvvvvvvvvvvvv
for t in short:$LM_SHORT long:$LM_LONG; do
    yk_ykadmin enroll "lm@$R" --add --public-id "${t#*:}" \
        --emulate "$YK_TMP/lm-${t%%:*}.tok" >> "$YK_KRB5_DIR/ykadmin.log" \
        2>&1 || { tail -5 "$YK_KRB5_DIR/ykadmin.log" >&2;
                  yk_fail "ykadmin enroll lm ${t%%:*} failed"; }
done
# long's password makes password + OTP exactly VALUE_MAX bytes.
pub=$("$YK_YKEMU_BIN" --public-id "$YK_TMP/long.tok") ||
    yk_fail "ykemu --public-id failed"
LONGPW=$(head -c $((VALUE_MAX - ${#pub} - 32)) /dev/zero | tr '\0' 'p')
kadmin.local -r "$R" cpw -pw "$LONGPW" long > "$YK_KRB5_DIR/kadmin.out" 2>&1 ||
    { cat "$YK_KRB5_DIR/kadmin.out" >&2; yk_fail "cpw long failed"; }
yk_kdc_start

yk_stock_client "$ANON" "$HOST"

# --- helpers -------------------------------------------------------------

# expect_log NAME WANT: one more attempt of NAME, whose line has " WANT";
# the KDC is up.
expect_log() {
    yk_expect_attempt "$@"
    kill -0 "$YK_KDC_PID" 2>/dev/null ||
        yk_fail "the KDC died (after: $YK_LAST_ATTEMPT)"
}

# stock_refused WHAT NAME ARMOR VALUE WANT: stock kinit with VALUE is
# refused with "Preauthentication failed"; the KDC's line has WANT.
stock_refused() {
    local what=$1
    shift
    yk_stock_kinit "$1" "$2" "$3" &&
        yk_fail "$1: $what: accepted"
    grep -q "Preauthentication failed" "$YK_TMP/kinit.out" ||
        { cat "$YK_TMP/kinit.out" >&2;
          yk_fail "$1: $what: not refused with \"Preauthentication failed\""; }
    expect_log "$1" "$4"
}

# stock_ok WHAT NAME ARMOR VALUE: stock kinit with VALUE logs in (what:
# why it must).
stock_ok() {
    local what=$1
    shift
    yk_stock_kinit "$1" "$2" "$3" ||
        { cat "$YK_TMP/kinit.out" >&2; yk_fail "$1: $what"; }
    expect_log "$1" "verdict=accepted"
}

# tc NAME ARGS...: the test client for NAME@REALM (stock krb5.conf);
# output in $YK_TMP/tc.out, its status.
tc() {
    local name=$1
    shift
    KRB5_TRACE=$YK_TMP/tc.trace "$YKTC" "$@" "$name@$R" \
        > "$YK_TMP/tc.out" 2>&1
}

# tc_refused WHAT NAME WANT ARGS...: the test client's 142 is refused
# with KDC error 24 (PREAUTH_FAILED); the KDC's line has WANT.
tc_refused() {
    local what=$1 name=$2 want=$3 rc
    shift 3
    tc "$name" "$@"
    rc=$?
    if [ "$rc" -ne 1 ] ||
        ! grep -q "^result: refused: .*(KDC error 24)" "$YK_TMP/tc.out"; then
        cat "$YK_TMP/tc.out" >&2
        yk_fail "$name: $what: exit $rc, not refused with KDC error 24"
    fi
    expect_log "$name" "$want"
}

MALFORMED_142="verdict=refused reason=malformed: PA-OTP-REQUEST:"
TOO_LONG_142="$MALFORMED_142 OTP preauthentication data (RFC 6560) holds a\
 value over its size limit"
NOT_AN_OTP="verdict=refused reason=malformed: the value does not end with"
NONCE="verdict=refused reason=nonce mismatch"

# --- a correct 142 from the test client: the module works ----------------

for armor in "$ANON" "$HOST"; do
    otp=$(yk_otp "$YK_TMP/alice.tok")
    tc alice --send otp-good --armor "$armor" --password alice-pw \
        --otp "$otp" --out "$YK_TMP/tc.cc" ||
        { cat "$YK_TMP/tc.out" >&2; yk_fail "alice: otp-good refused"; }
    grep -q "^challenge: PA-OTP-CHALLENGE" "$YK_TMP/tc.out" ||
        yk_fail "alice: otp-good saw no PA-OTP-CHALLENGE"
    grep -q "otp conflicts with module yktest-otp" "$YK_TMP/tc.trace" ||
        yk_fail "MIT's otp module was not the one dropped for 141"
    expect_log alice "mode=2fa verdict=accepted"
    case "$(yk_tgt_flags "$YK_TMP/tc.cc")" in
        *H*) ;;
        *) yk_fail "alice: the otp-good TGT is not flagged H" ;;
    esac
done
yk_ok "yktestclient otp-good (both armors): a correct 142 -> TGT flagged H"

# --- structural cases (anonymous PKINIT armor) ----------------------------

# bad KIND WANT WHAT: alice's password + a fresh OTP in a bad 142 of KIND
# is refused with WANT; the same OTP logs in afterwards.
bad() {
    local kind=$1 want=$2 what=$3 otp
    otp=$(yk_otp "$YK_TMP/alice.tok")
    tc_refused "$what" alice "$want" --send "$kind" --armor "$ANON" \
        --password alice-pw --otp "$otp"
    stock_ok "the OTP of the $what was consumed" alice "$ANON" \
        "alice-pw$otp"
}

tc_refused "garbage" alice "$MALFORMED_142" --send otp-garbage \
    --armor "$ANON"
yk_ok "garbage instead of a 142: refused (malformed), KDC up"
bad otp-malformed "$MALFORMED_142" "malformed 142 (unknown field [14])"
yk_ok "a 142 with a field RFC 6560 lacks: refused (malformed), OTP kept"
bad otp-truncated "$MALFORMED_142" "truncated 142"
yk_ok "a 142 cut short by one byte: refused (malformed), OTP kept"
bad otp-wrong-nonce "$NONCE: not the nonce of our challenge" \
    "142 with a wrong nonce"
yk_ok "a 142 with a nonce not the challenge's: refused, OTP kept"
bad otp-wrong-key "$NONCE: encData does not decrypt with the armor key" \
    "142 under another key"
yk_ok "a 142 whose encData is not under the armor key: refused, OTP kept"
bad otp-reused-nonce "$NONCE: not the nonce of our challenge" \
    "142 with an earlier exchange's nonce"
grep -q "^challenge: nonce taken" "$YK_TMP/tc.out" ||
    yk_fail "otp-reused-nonce did not take a first exchange's nonce"
yk_ok "a 142 with the nonce of an earlier exchange's challenge: refused," \
    "OTP kept"
bad otp-unarmored "verdict=refused reason=not armored: PA-OTP-REQUEST" \
    "unarmored 142"
grep -q "^challenge:" "$YK_TMP/tc.out" &&
    yk_fail "otp-unarmored answered a challenge: it was armored"
yk_ok "a 142 in an unarmored request: refused (not armored), OTP kept"
bad otp-long "$TOO_LONG_142" "142 with a value of 4 KB"
yk_ok "a 142 whose value is 4 KB: refused (over the limit), OTP kept"

# --- values typed into stock kinit (host keytab armor) ------------------

otp=$(yk_otp "$YK_TMP/alice.tok")
stock_refused "non-modhex OTP" alice "$HOST" "alice-pw${otp%?}a" "$NOT_AN_OTP"
stock_refused "OTP with a UTF-8 character" alice "$HOST" \
    "alice-pw${otp:0:20}$E_ACUTE${otp:21}" "$NOT_AN_OTP"
stock_ok "the OTP of a non-modhex value was consumed" alice "$HOST" \
    "alice-pw$otp"
yk_ok "stock kinit: non-modhex OTPs (a letter, a UTF-8 character):" \
    "refused, OTP kept"

otp=$(yk_otp "$YK_TMP/long.tok")
stock_refused "value of $((VALUE_MAX + 1)) bytes" long "$HOST" "x$LONGPW$otp" \
    "$TOO_LONG_142"
stock_ok "a value of exactly $VALUE_MAX bytes refused, or the OTP of the
longer one consumed" long "$HOST" "$LONGPW$otp"
yk_ok "stock kinit: a value of $((VALUE_MAX + 1)) bytes refused (over the" \
    "limit), the same OTP in $VALUE_MAX bytes accepted"

otp=$(yk_otp "$YK_TMP/alice.tok")
pad=$(head -c 4096 /dev/zero | tr '\0' 'x')
stock_refused "value of 4 KB" alice "$HOST" "alice-pw$otp$pad" "$TOO_LONG_142"
stock_ok "the OTP at the start of a 4 KB value was consumed" alice \
    "$HOST" "alice-pw$otp"
yk_ok "stock kinit: a value of 4 KB (it sends $KINIT_MAX bytes): refused," \
    "OTP kept"

otp=$(yk_otp "$YK_TMP/alice.tok")
stock_refused "bob's password" alice "$HOST" "bob-pw$otp" \
    "mode=2fa verdict=refused reason=wrong password"
stock_ok "the OTP sent with bob's password was consumed" alice "$HOST" \
    "alice-pw$otp"
stock_ok "bob's own login failed after the attempt on alice" bob "$HOST" \
    "bob-pw$(yk_otp "$YK_TMP/bob.tok")"
yk_ok "stock kinit: bob's password with alice's OTP, for alice: refused" \
    "(wrong password), OTP kept"

# The longest enrolled public id wins the split: lm's long token after
# the password would read as password "lm-pwcccc" + the short token's id
# under a shortest match.
otp=$(yk_otp "$YK_TMP/lm-long.tok")
case "$otp" in
    "$LM_LONG"*) ;;
    *) yk_fail "lm's long token's OTP $otp lacks its public id" ;;
esac
stock_ok "lm: password + the long token's OTP refused (split wrong?)" lm \
    "$ANON" "lm-pw$otp"
case "$YK_LAST_ATTEMPT" in
    *" pubid=$LM_LONG "*) ;;
    *) yk_fail "lm: not the long token: $YK_LAST_ATTEMPT" ;;
esac
stock_ok "lm: password + the short token's OTP refused" lm "$ANON" \
    "lm-pw$(yk_otp "$YK_TMP/lm-short.tok")"
case "$YK_LAST_ATTEMPT" in
    *" pubid=$LM_SHORT "*) ;;
    *) yk_fail "lm: not the short token: $YK_LAST_ATTEMPT" ;;
esac
yk_ok "two tokens, one public id the tail of the other's: the longest" \
    "match splits password and OTP"

# The password in otp-pin and the OTP alone in otp-value (RFC 6560's
# other form): accepted as two factors; a wrong one there is refused
# without burning the OTP; a password both in otp-pin and before the OTP
# is malformed.
otp=$(yk_otp "$YK_TMP/alice.tok")
tc alice --send otp-good --armor "$ANON" --pin alice-pw --otp "$otp" \
    --out "$YK_TMP/tc.cc" ||
    { cat "$YK_TMP/tc.out" >&2; yk_fail "alice: the password in otp-pin" \
        "refused"; }
expect_log alice "mode=2fa verdict=accepted"
otp=$(yk_otp "$YK_TMP/alice.tok")
tc_refused "a wrong password in otp-pin" alice \
    "verdict=refused reason=wrong password" --send otp-good \
    --armor "$ANON" --pin wrong-pw --otp "$otp"
tc_refused "a password both in otp-pin and before the OTP" alice \
    "verdict=refused reason=malformed: a password both in otp-pin" \
    --send otp-good --armor "$ANON" --pin alice-pw --password alice-pw \
    --otp "$otp"
stock_ok "the OTP of the otp-pin refusals was consumed" alice "$ANON" \
    "alice-pw$otp"
yk_ok "otp-pin: the password there is accepted, a wrong one refused" \
    "(OTP kept), one in both places malformed"

kill -0 "$YK_KDC_PID" 2>/dev/null || yk_fail "the KDC died"
yk_kdc_attempts "alice@$R" | sed 's/^.*yubikey: /  /' | tail -4
echo "PASS: stock-bad.sh"
exit 0
