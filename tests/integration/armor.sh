#!/bin/bash
# SPDX-License-Identifier: MIT
# armor.sh: FAST armor that users can get: anonymous PKINIT and a host keytab.
#
# The DB2 realm of kinit.sh (realm.sh, lib.sh) with anonymous PKINIT
# (yk_realm_pkinit_setup: a throwaway CA and KDC certificate, krb5-pkinit
# on both sides).  A principal with policy otp logs in with the OTP alone
# over FAST (our client module, kinit -T) armored by kinit -n and by a
# host keytab; unarmored, it gets no ticket.  A stock krb5.conf (nothing
# of this project) gets anonymous armor and a password-only login, plain
# and armored.  Exit 0 pass, 1 fail, 77 skip (announced).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"

R=$YK_REALM
SSH=host/ssh.example.com        # any service: anonymous TGTs get none

T0=$(yk_ms)
yk_realm_setup
ANON=$YK_TMP/anon.cc            # kinit -n, our krb5.conf
ANON_STOCK=$YK_TMP/anon-stock.cc  # kinit -n, the stock krb5.conf
HOST=$YK_TMP/host.cc            # host keytab armor
yk_realm_pkinit_setup
yk_realm_addprinc oscar oscar-pw        # policy otp: the OTP alone
yk_realm_addprinc pat pat-pw            # no token: password only
yk_realm_service "$SSH"
yk_realm_enroll oscar "$YK_TMP/oscar.tok"
yk_ykadmin policy "oscar@$R" otp >> "$YK_KRB5_DIR/ykadmin.log" 2>&1 ||
    yk_fail "ykadmin policy oscar otp failed"
yk_kdc_start

# Every attempt of oscar's leaves exactly one module log line; the newest
# contains WANT.
expect_log() { yk_expect_attempt oscar "$1"; }

# The default principal of ccache FILE (klist).
ccache_principal() {
    klist -c "$1" 2>/dev/null | sed -n 's/^Default principal: //p'
}

# Check that FILE holds an anonymous TGT of the realm: its principal
# (left in $princ) is the anonymous one, its TGT flagged a (anonymous).
expect_anonymous() {
    local flags
    princ=$(ccache_principal "$1")
    case "$princ" in
        WELLKNOWN/ANONYMOUS@WELLKNOWN:ANONYMOUS|WELLKNOWN/ANONYMOUS@"$R") ;;
        *) yk_fail "$2: armor ccache principal is \"$princ\"," \
               "not WELLKNOWN/ANONYMOUS" ;;
    esac
    klist -c "$1" 2>/dev/null | grep -q "krbtgt/$R@$R" ||
        yk_fail "$2: no krbtgt/$R@$R in the armor ccache"
    flags=$(yk_tgt_flags "$1")
    case "$flags" in
        *a*) ;;
        *) yk_fail "$2: armor TGT not flagged a (anonymous): $flags" ;;
    esac
}

# oscar logs in with OTP alone over the armor ccache FILE (WHAT names
# it; libkrb5's trace goes to $YK_TMP/trace.WHAT).  Checks: no password
# prompt, one accepted mode=otp log line, a TGT of oscar's flagged H,
# FAST used with FILE.
otp_alone_armored() {
    local file=$1 what=$2 otp=$3 flags
    kdestroy -q 2>/dev/null
    printf '%s\n' "$otp" | KRB5_TRACE=$YK_TMP/trace.$what \
        yk_kinit oscar -T "$file" ||
        { cat "$YK_TMP/kinit.out" >&2;
          yk_fail "oscar: OTP alone over $what armor refused"; }
    grep -q "Password for" "$YK_TMP/kinit.out" &&
        yk_fail "oscar (policy otp, $what armor) was asked for a password"
    grep -q "YubiKey OTP for oscar@$R" "$YK_TMP/kinit.out" ||
        yk_fail "oscar ($what armor): kinit never asked for the OTP"
    expect_log "mode=otp verdict=accepted"
    flags=$(yk_tgt_flags)
    case "$flags" in
        *H*) ;;
        *) yk_fail "oscar's TGT ($what armor) not flagged H: $flags" ;;
    esac
    [ "$(ccache_principal "$KRB5CCNAME")" = "oscar@$R" ] ||
        yk_fail "oscar ($what armor): the TGT is not oscar's"
    grep -qF "FAST armor ccache: $file" "$YK_TMP/trace.$what" &&
        grep -q "Using FAST due to armor ccache negotiation result" \
            "$YK_TMP/trace.$what" ||
        yk_fail "oscar ($what armor): libkrb5 did not use FAST with $file"
    yk_ok "OTP alone over $what armor: TGT flagged $flags, mode=otp accepted"
}

# --- stock krb5.conf: anonymous PKINIT, kinit -n ----------------------------
grep -qiE 'yubikey|plugins|preferred_preauth' "$YK_KRB5_CONF_STOCK" &&
    yk_fail "the stock krb5.conf names something of this project"
KRB5_CONFIG=$YK_KRB5_CONF_STOCK yk_anon_armor_ccache "$ANON_STOCK"
expect_anonymous "$ANON_STOCK" "stock kinit -n"
[ -z "$(yk_kdc_attempts "WELLKNOWN/ANONYMOUS@$R")" ] ||
    yk_fail "the yubikey module logged an attempt for the anonymous client"
yk_ok "stock krb5.conf: kinit -n gives an anonymous TGT ($princ)"

# restrict_anonymous_to_tgt: the armor TGT buys no service ticket.
KRB5CCNAME=FILE:$ANON_STOCK KRB5_CONFIG=$YK_KRB5_CONF_STOCK kvno "$SSH" \
    > "$YK_TMP/kvno.out" 2>&1 &&
    yk_fail "an anonymous TGT got a ticket for $SSH"
grep -q "KDC policy rejects request" "$YK_TMP/kvno.out" ||
    { cat "$YK_TMP/kvno.out" >&2;
      yk_fail "kvno with an anonymous TGT failed, but not by KDC policy"; }
yk_ok "restrict_anonymous_to_tgt: no service ticket for an anonymous TGT"

# --- our krb5.conf: the OTP alone over anonymous armor ----------------------
yk_anon_armor_ccache "$ANON"
expect_anonymous "$ANON" "kinit -n (with our client module)"
otp=$(yk_otp "$YK_TMP/oscar.tok")

# Unarmored first, with the same OTP: no ticket, the OTP not consumed.
kdestroy -q 2>/dev/null
printf '%s\n' "$otp" | yk_kinit oscar -X yubikey_mode=otp &&
    yk_fail "oscar: OTP alone accepted without armor (forced mode otp)"
grep -q "needs FAST armor" "$YK_TMP/kinit.out" ||
    { cat "$YK_TMP/kinit.out" >&2;
      yk_fail "oscar: unarmored mode otp refused, but not for the armor"; }
# Without -X, our client asks a password (the OTP is taken for it), then
# an OTP (none left): the OTP goes as an encrypted timestamp's password,
# which the KDC refuses; it never travels in clear.
printf '%s\n' "$otp" | yk_kinit oscar &&
    yk_fail "oscar: OTP alone accepted without armor"
grep -q "Password for oscar@$R" "$YK_TMP/kinit.out" ||
    { cat "$YK_TMP/kinit.out" >&2;
      yk_fail "oscar: unarmored, kinit did not fall back to the password"; }
klist -s 2>/dev/null && yk_fail "oscar: a ticket after unarmored attempts"
yk_kdc_attempts "oscar@$R" | grep -q "verdict=accepted" &&
    yk_fail "oscar: the KDC accepted an unarmored attempt"
yk_ok "unarmored OTP alone: no ticket (forced: \"needs FAST armor\";" \
    "default: a password is asked)"

otp_alone_armored "$ANON" anonymous "$otp"

# --- host keytab armor ------------------------------------------------------
yk_armor_ccache "$HOST"
[ "$(ccache_principal "$HOST")" = "host/armor.example.com@$R" ] ||
    yk_fail "the host armor ccache is not host/armor.example.com's"
otp_alone_armored "$HOST" host "$(yk_otp "$YK_TMP/oscar.tok")"

# The same OTP again over armor: a replay, refused.
kdestroy -q 2>/dev/null
replay=$(yk_otp "$YK_TMP/oscar.tok")
printf '%s\n' "$replay" | yk_kinit oscar -T "$ANON" ||
    yk_fail "oscar: a fresh OTP refused"
expect_log "mode=otp verdict=accepted"
printf '%s\n' "$replay" | yk_kinit oscar -T "$ANON" &&
    yk_fail "oscar: the same OTP accepted twice over anonymous armor"
expect_log "mode=otp verdict=refused reason=replay"
yk_ok "over anonymous armor, a replayed OTP is refused"

# --- stock krb5.conf: a password-only principal, plain and armored ---------
kdestroy -q 2>/dev/null
printf '%s\n' pat-pw | KRB5_CONFIG=$YK_KRB5_CONF_STOCK yk_kinit pat ||
    { cat "$YK_TMP/kinit.out" >&2;
      yk_fail "pat: password kinit refused with the stock krb5.conf"; }
[ "$(ccache_principal "$KRB5CCNAME")" = "pat@$R" ] ||
    yk_fail "pat: no TGT of pat's after the stock kinit"
case "$(yk_tgt_flags)" in
    *H*) yk_fail "pat's password TGT is flagged H" ;;
esac
kdestroy -q 2>/dev/null
printf '%s\n' pat-pw | KRB5_TRACE=$YK_TMP/trace.pat \
    KRB5_CONFIG=$YK_KRB5_CONF_STOCK yk_kinit pat -T "$ANON_STOCK" ||
    { cat "$YK_TMP/kinit.out" >&2;
      yk_fail "pat: password kinit over anonymous armor refused (stock)"; }
grep -q "Using FAST due to armor ccache negotiation result" \
    "$YK_TMP/trace.pat" || yk_fail "pat: stock kinit -T did not use FAST"
grep -qF "Preauth module encrypted_challenge (138) (real) returned: 0/" \
    "$YK_TMP/trace.pat" ||
    yk_fail "pat: stock kinit -T did not use encrypted challenge (138)"
[ "$(ccache_principal "$KRB5CCNAME")" = "pat@$R" ] ||
    yk_fail "pat: no TGT of pat's after the stock armored kinit"
[ -z "$(yk_kdc_attempts "pat@$R")" ] ||
    yk_fail "pat (no token): the yubikey module logged an attempt"
yk_ok "stock krb5.conf: pat logs in with a password, plain and over" \
    "anonymous armor (encrypted challenge)"

kill -0 "$YK_KDC_PID" 2>/dev/null || yk_fail "the KDC died"
for o in "$otp" "$replay"; do
    grep -qF "$o" "$YK_KDC_LOG" && yk_fail "an OTP appears in the KDC log"
done
yk_kdc_attempts "oscar@$R" | sed 's/^.*yubikey: /  /'
echo "PASS: armor.sh ($(($(yk_ms) - T0)) ms)"
exit 0
