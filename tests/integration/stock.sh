#!/bin/bash
# SPDX-License-Identifier: MIT
# stock.sh: a stock MIT kinit (no file of this project on the client: the
# harness's YK_KRB5_CONF_STOCK) logs in with the YubiKey through RFC 6560
# (PA-OTP-CHALLENGE 141 / PA-OTP-REQUEST 142) over FAST armor.
#
# Password + OTP typed as one value (policy 2fa): a TGT flagged H whose
# indicators open a require_auth yubikey-2fa service; the OTP alone
# (policy otp); replays, an older OTP, a wrong password and the OTP alone
# under 2fa (the OTP is not burned), a password alone, bob's OTP for
# alice: all refused (more bad input: stock-bad.sh); unarmored requests
# get no challenge and return at once; a wrong password counts toward
# lockout once, an outage (slapd stopped) is DISCARDed and counts
# nothing.  Both armors: anonymous PKINIT and a host keytab.
# Exit 0 pass, 1 fail, 77 skip (announced).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"

R=$YK_REALM
WEB=HTTP/web.example.com        # require_auth yubikey-2fa
ANY=HTTP/any.example.com        # require_auth yubikey (one factor will do)

# The KDC's UDP on another port: a DISCARD (no reply) then costs the
# client no UDP wait (libkrb5 1.20 waits ~17 s otherwise; outage.sh).
YK_KDC_UDP_PORT=$(yk_realm_free_port) || yk_fail "no free port"

yk_realm_setup
ANON=$YK_TMP/anon.cc HOST=$YK_TMP/host.cc     # after yk_init made YK_TMP
yk_realm_pkinit_setup
yk_realm_addprinc alice alice-pw
yk_realm_addprinc bob bob-pw
yk_realm_addprinc erin erin-pw
yk_realm_addprinc hw hw-pw +requires_hwauth
yk_realm_service "$WEB" yubikey-2fa
yk_realm_service "$ANY" yubikey
yk_realm_enroll alice "$YK_TMP/alice.tok"
yk_realm_enroll bob "$YK_TMP/bob.tok"
yk_realm_enroll erin "$YK_TMP/erin.tok"
yk_realm_enroll hw "$YK_TMP/hw.tok"
yk_ykadmin policy "erin@$R" otp >/dev/null 2>&1 ||
    yk_fail "ykadmin policy erin otp failed"
yk_kdc_start

yk_stock_client "$ANON" "$HOST"

expect_log() { yk_expect_attempt "$@"; }

stock() { yk_stock_kinit "$@"; }

# preauth_failed WHAT: kinit's refusal was "Preauthentication failed"
# (KDC error 24), not an outage's.
preauth_failed() {
    grep -q "Preauthentication failed" "$YK_TMP/kinit.out" ||
        { cat "$YK_TMP/kinit.out" >&2; yk_fail "$1: not refused with" \
            "\"Preauthentication failed\""; }
}

for armor in "$ANON" "$HOST"; do
    what=anonymous; [ "$armor" = "$HOST" ] && what="host keytab"
    : > "$YK_TMP/trace"
    otp=$(yk_otp "$YK_TMP/alice.tok")
    stock alice "$armor" "alice-pw$otp" ||
        { cat "$YK_TMP/kinit.out" >&2; yk_fail "alice ($what armor):" \
            "password + OTP refused"; }
    grep -q "Enter OTP Token Value" "$YK_TMP/kinit.out" ||
        yk_fail "stock kinit did not ask for the OTP token value"
    grep -q "Preauth module otp (141)" "$YK_TMP/trace" ||
        yk_fail "the stock client did not use MIT's otp client (141)"
    expect_log alice "mode=2fa verdict=accepted"
    yk_expect_strong_tgt "alice ($what armor)" "$YK_TMP/alice.cc" "$WEB"
    yk_ok "stock kinit, $what armor: password + OTP -> TGT flagged H," \
        "$WEB issued"

    stock alice "$armor" "alice-pw$otp" &&
        yk_fail "alice: a replayed OTP was accepted"
    expect_log alice "verdict=refused reason=replay"
    # A replayed OTP with a wrong password: refused on the OTP, so the
    # password (PBKDF2) is never tried for it.
    stock alice "$armor" "wrong-pw$otp" &&
        yk_fail "alice: a replayed OTP with a wrong password was accepted"
    expect_log alice "verdict=refused reason=replay"
    otp2=$(yk_otp "$YK_TMP/alice.tok")
    stock alice "$armor" "wrong-pw$otp2" &&
        yk_fail "alice: a wrong password was accepted"
    expect_log alice "verdict=refused reason=wrong password"
    stock alice "$armor" "alice-pw$otp2" ||
        { cat "$YK_TMP/kinit.out" >&2; yk_fail "alice: the OTP of a" \
            "wrong-password attempt was burned"; }
    expect_log alice "verdict=accepted"
    otp3=$(yk_otp "$YK_TMP/alice.tok")
    stock alice "$armor" "$otp3" &&
        yk_fail "alice (policy 2fa): the OTP alone was accepted"
    preauth_failed "the OTP alone under policy 2fa"
    expect_log alice "verdict=refused reason=policy"
    stock alice "$armor" "alice-pw$otp3" ||
        { cat "$YK_TMP/kinit.out" >&2; yk_fail "alice: the OTP of an" \
            "OTP-alone attempt (policy 2fa) was burned"; }
    expect_log alice "verdict=accepted"
    stock alice "$armor" "alice-pw" &&
        yk_fail "alice: a password alone was accepted"
    preauth_failed "a password alone"
    expect_log alice "verdict=refused reason=malformed"
    stock alice "$armor" "alice-pw$(yk_otp "$YK_TMP/bob.tok")" &&
        yk_fail "alice: bob's OTP was accepted"
    expect_log alice "verdict=refused reason=unknown token"
    # After a password, what precedes the 32 characters could be the
    # password's end: no public id is logged.
    case "$YK_LAST_ATTEMPT" in
        *" pubid=- "*) ;;
        *) yk_fail "bob's OTP after alice's password: a public id was" \
            "logged: $YK_LAST_ATTEMPT" ;;
    esac
    stock alice "$armor" "$(yk_otp "$YK_TMP/bob.tok")" &&
        yk_fail "alice: bob's OTP alone was accepted"
    expect_log alice "verdict=refused reason=unknown token"
    case "$YK_LAST_ATTEMPT" in
        *" pubid=$("$YK_YKEMU_BIN" --public-id "$YK_TMP/bob.tok") "*) ;;
        *) yk_fail "bob's OTP alone for alice: the line lacks bob's" \
            "public id: $YK_LAST_ATTEMPT" ;;
    esac
    yk_ok "stock kinit, $what armor: replay, wrong password (OTP kept)," \
        "OTP alone under 2fa, password alone, another's OTP: refused"

    stock erin "$armor" "$(yk_otp "$YK_TMP/erin.tok")" ||
        { cat "$YK_TMP/kinit.out" >&2; yk_fail "erin (policy otp): the" \
            "OTP alone refused"; }
    expect_log erin "mode=otp verdict=accepted"
    yk_expect_strong_tgt "erin ($what armor, OTP alone)" \
        "$YK_TMP/erin.cc" "$ANY"
    KRB5CCNAME=$YK_TMP/erin.cc kvno "$WEB" > "$YK_TMP/kvno.out" 2>&1 &&
        yk_fail "erin's OTP-alone TGT got a ticket for $WEB (yubikey-2fa)"
    stock hw "$armor" "hw-pw$(yk_otp "$YK_TMP/hw.tok")" ||
        { cat "$YK_TMP/kinit.out" >&2; yk_fail "hw (+requires_hwauth):" \
            "password + OTP refused"; }
    expect_log hw "mode=2fa verdict=accepted"
    yk_ok "stock kinit, $what armor: policy otp with the OTP alone ->" \
        "TGT flagged H, $ANY (yubikey) issued, $WEB refused;" \
        "+requires_hwauth served"
done

# An older OTP (made, then overtaken by a newer one) is refused.
old=$(yk_otp "$YK_TMP/alice.tok")
stock alice "$ANON" "alice-pw$(yk_otp "$YK_TMP/alice.tok")" ||
    yk_fail "alice: a fresh OTP refused"
expect_log alice "verdict=accepted"
stock alice "$ANON" "alice-pw$old" && yk_fail "alice: an older OTP accepted"
expect_log alice "verdict=refused reason=older"
yk_ok "stock kinit: an older OTP refused"

# A token enrolled after the KDC cached the record (cache TTL 5 s): its
# first OTP, once the cached record is over 2 s old, is not refused (the
# KDC reads the master again before saying no token ends the value).
stock erin "$ANON" "$(yk_otp "$YK_TMP/erin.tok")" ||
    yk_fail "erin: OTP refused"
expect_log erin "verdict=accepted"
yk_ykadmin enroll "erin@$R" --add --emulate "$YK_TMP/erin2.tok" \
    > "$YK_TMP/enroll.out" 2>&1 ||
    { cat "$YK_TMP/enroll.out" >&2; yk_fail "enroll erin's second token"; }
sleep 2.5
stock erin "$ANON" "$(yk_otp "$YK_TMP/erin2.tok")" ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "erin: a token enrolled within" \
        "the cache TTL was refused: $(yk_kdc_attempts "erin@$R" | tail -1)"; }
expect_log erin "verdict=accepted"
yk_ok "stock kinit: a token enrolled within the cache TTL is accepted"

# Unarmored: no challenge, so no OTP prompt; kinit fails at once.
: > "$YK_TMP/trace"
start=$(date +%s%N)
printf 'alice-pw%s\n' "$(yk_otp "$YK_TMP/alice.tok")" |
    KRB5_TRACE=$YK_TMP/trace kinit -c "$YK_TMP/x.cc" "alice@$R" \
    > "$YK_TMP/kinit.out" 2>&1 && yk_fail "an unarmored stock kinit got a TGT"
ms=$((($(date +%s%N) - start) / 1000000))
grep -q "PA-OTP-CHALLENGE (141)" "$YK_TMP/trace" &&
    yk_fail "an unarmored request got a PA-OTP-CHALLENGE"
[ "$ms" -lt 5000 ] || yk_fail "the unarmored kinit took $ms ms"
yk_ok "unarmored stock kinit: no challenge, refused in $ms ms"

# Lockout and outages on the RFC 6560 path, as on ours: a wrong password
# with a good OTP counts once; with slapd stopped a stock login is
# DISCARDed (no reply, nothing counted) and a password login still works.
failures() {
    kadmin.local -r "$R" getprinc "$1" 2>/dev/null |
        sed -n 's/^Failed password attempts: //p'
}
kadmin.local -r "$R" addpol -maxfailure 5 -failurecountinterval 0 \
    -lockoutduration 0 lock5 > "$YK_KRB5_DIR/kadmin.out" 2>&1 &&
    kadmin.local -r "$R" modprinc -policy lock5 "alice@$R" \
        >> "$YK_KRB5_DIR/kadmin.out" 2>&1 ||
    { cat "$YK_KRB5_DIR/kadmin.out" >&2; yk_fail "lockout policy"; }
# (The count includes the loop's wrong passwords: a success resets it
# only for +requires_preauth principals.)
before=$(failures alice)
stock alice "$ANON" "wrong-pw$(yk_otp "$YK_TMP/alice.tok")" &&
    yk_fail "alice: a wrong password was accepted"
expect_log alice "verdict=refused reason=wrong password"
count=$((before + 1))
[ "$(failures alice)" = "$count" ] ||
    yk_fail "alice: $before -> $(failures alice) failures for one wrong" \
        "password"
yk_slapd_stop
stock alice "$ANON" "alice-pw$(yk_otp "$YK_TMP/alice.tok")" &&
    yk_fail "alice: a stock OTP login was accepted with slapd stopped"
grep -q 'Cannot contact any KDC' "$YK_TMP/kinit.out" ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "alice: the stock kinit got an" \
        "answer with slapd stopped (expected a DISCARD)"; }
expect_log alice "verdict=discarded"
[ "$(failures alice)" = "$count" ] ||
    yk_fail "alice: the outage was counted ($(failures alice) failures)"
printf 'bob-pw\n' | KRB5_CONFIG=$YK_KRB5_CONF_PLAIN kinit -c "$YK_TMP/b.cc" \
    "bob@$R" > "$YK_TMP/kinit.out" 2>&1 ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "bob: a password login failed" \
        "with slapd stopped"; }
yk_ok "stock kinit: a wrong password counted once toward lockout;" \
    "slapd stopped: DISCARDed, not counted; password logins unaffected"

kill -0 "$YK_KDC_PID" 2>/dev/null || yk_fail "the KDC died"
yk_kdc_attempts "alice@$R" | sed 's/^.*yubikey: /  /' | tail -4
echo "PASS: stock.sh"
exit 0
