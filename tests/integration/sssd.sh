#!/bin/bash
# sssd.sh: SSSD logs in with the YubiKey through RFC 6560 with FAST armor
# and no module of ours on the client.
#
# Part 1, ykresponder (SSSD's krb5_child way of answering libkrb5's "otp"
# responder question, with the harness's stock krb5.conf): the question
# is "otp" with one tokeninfo, flags COLLECT_TOKEN only; password||OTP as
# the value (policy 2fa) gives a TGT flagged H that opens a require_auth
# yubikey-2fa service; the OTP alone (policy otp) is accepted; a wrong
# password is refused without burning the OTP; a replay is refused; the
# password in the pin argument never reaches the KDC (MIT's client drops
# it for a tokeninfo without COLLECT_PIN), so policy 2fa refuses it.
# Part 2, real SSSD (sssd -i, auth_provider = krb5, krb5_use_fast =
# demand with a host keytab) driven by pamtester through pam_sss, in a
# private mount namespace: both policies and a wrong password.
# Exit 0 pass, 1 fail, 77 skip (announced; part 1 has passed by then).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"

R=$YK_REALM
WEB=HTTP/web.example.com        # require_auth yubikey-2fa
HOST=$YK_TMP/host.cc
YKR=$YK_BUILDDIR/tests/client/ykresponder
[ -x "$YKR" ] || yk_fail "$YKR is not built (run make first)"

yk_realm_setup
yk_realm_addprinc alice alice-pw
yk_realm_addprinc erin erin-pw
yk_realm_service "$WEB" yubikey-2fa
yk_realm_enroll alice "$YK_TMP/alice.tok"
yk_realm_enroll erin "$YK_TMP/erin.tok"
yk_ykadmin policy "erin@$R" otp >/dev/null 2>&1 ||
    yk_fail "ykadmin policy erin otp failed"
yk_kdc_start

KRB5_CONFIG=$YK_KRB5_CONF yk_armor_ccache "$HOST"
export KRB5_CONFIG=$YK_KRB5_CONF_STOCK
grep -qi 'yubikey\|plugins' "$KRB5_CONFIG" &&
    yk_fail "the stock krb5.conf names something of ours"

# responder NAME PASSWORD OTP [--pin]: ykresponder with the host armor;
# output in $YK_TMP/ykr.out, TGT in $YK_TMP/NAME.cc.
responder() {
    printf '%s\n%s\n' "$2" "$3" | "$YKR" --armor "$HOST" \
        --out "$YK_TMP/$1.cc" ${4:+"$4"} "$1@$R" > "$YK_TMP/ykr.out" 2>&1
}

# The question SSSD's krb5_child would see, every time: "otp" (besides
# "password" when the KDC also offers encrypted timestamp), one tokeninfo
# with flags 1 (COLLECT_TOKEN) and nothing else.
expect_question() {
    grep -Eqx 'question: (.* )?otp( .*)?; tokeninfo flags=1 vendor=-' \
        "$YK_TMP/ykr.out" ||
        { cat "$YK_TMP/ykr.out" >&2; yk_fail "the responder question is" \
            "not \"otp\" with one tokeninfo of flags 1"; }
}

otp=$(yk_otp "$YK_TMP/alice.tok")
responder alice alice-pw "$otp" ||
    { cat "$YK_TMP/ykr.out" >&2; yk_fail "alice: password||OTP refused"; }
expect_question
yk_expect_attempt alice "mode=2fa verdict=accepted"
yk_expect_strong_tgt alice "$YK_TMP/alice.cc" "$WEB"
yk_ok "responder, policy 2fa: password||OTP -> TGT flagged H, $WEB issued"

responder alice alice-pw "$otp" &&
    yk_fail "alice: a replayed OTP was accepted"
grep -q '^result: refused: .*(KDC error 24)' "$YK_TMP/ykr.out" ||
    { cat "$YK_TMP/ykr.out" >&2; yk_fail "alice: the replay was not" \
        "refused with PREAUTH_FAILED"; }
yk_expect_attempt alice "verdict=refused reason=replay"
otp=$(yk_otp "$YK_TMP/alice.tok")
responder alice wrong-pw "$otp" &&
    yk_fail "alice: a wrong password was accepted"
yk_expect_attempt alice "verdict=refused reason=wrong password"
responder alice alice-pw "$otp" ||
    { cat "$YK_TMP/ykr.out" >&2; yk_fail "alice: the OTP of a" \
        "wrong-password attempt was burned"; }
yk_expect_attempt alice "verdict=accepted"
yk_ok "responder: replay refused; wrong password refused, its OTP kept"

# The password in the pin argument: dropped by libkrb5 (the tokeninfo
# has no COLLECT_PIN), so the KDC sees the OTP alone.
responder alice alice-pw "$(yk_otp "$YK_TMP/alice.tok")" --pin &&
    yk_fail "alice (policy 2fa): the password as pin was accepted"
expect_question
yk_expect_attempt alice "verdict=refused reason=policy"
yk_ok "responder, password as pin: libkrb5 drops it; policy 2fa refuses"

responder erin "" "$(yk_otp "$YK_TMP/erin.tok")" ||
    { cat "$YK_TMP/ykr.out" >&2; yk_fail "erin (policy otp): OTP refused"; }
expect_question
yk_expect_attempt erin "mode=otp verdict=accepted"
KRB5CCNAME=$YK_TMP/erin.cc kvno "$WEB" > "$YK_TMP/kvno.out" 2>&1 &&
    yk_fail "erin's OTP-alone TGT got a ticket for $WEB (yubikey-2fa)"
yk_ok "responder, policy otp: the OTP alone -> TGT; $WEB refused"

kill -0 "$YK_KDC_PID" 2>/dev/null || yk_fail "the KDC died"
echo "PASS: sssd.sh"
exit 0
