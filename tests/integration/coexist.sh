#!/bin/bash
# SPDX-License-Identifier: MIT
# coexist.sh: krb5-yubikey beside MIT's RADIUS otp module (Debian's
# krb5-otp), which uses the same PA-OTP-REQUEST (142).  Stock kinit
# (nothing of ours on the client), host-keytab armor.
#
# 1. MIT's module loaded (installed, not disabled): alice (a YubiKey
#    token) logs in through krb5-yubikey; carol (MIT's "otp" string
#    attribute, no token) logs in through MIT's module and a real
#    FreeRADIUS, and a wrong value is refused there; each gets exactly
#    one PA-OTP-CHALLENGE.
# 2. [plugins] kdcpreauth = { disable = otp }: alice logs in; carol gets
#    no challenge and no ticket; the KDC says MIT's module is not loaded.
# 3. krb5-otp not installed (the KDC's plugin_base_dir without otp.so):
#    as 2.
# Part 1 needs krb5-otp and freeradius; without them it is skipped (the
# test then runs 2 and 3 and exits 77, saying so).
# Exit 0 pass, 1 fail, 77 skip (announced).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"
# shellcheck source=radius.sh
. "$srcdir/tests/integration/radius.sh"

R=$YK_REALM
CAROL_OTP=314159
skipped=

yk_realm_setup
ARMOR=$YK_TMP/armor.cc           # YK_TMP exists from here on
yk_realm_addprinc alice alice-pw
yk_realm_addprinc carol carol-pw
yk_realm_enroll alice "$YK_TMP/alice.tok"
kadmin.local -r "$R" setstr carol otp '[{"type": "DEFAULT"}]' \
    > "$YK_KRB5_DIR/kadmin.out" 2>&1 ||
    { cat "$YK_KRB5_DIR/kadmin.out" >&2; yk_fail "setstr carol otp failed"; }

preauth_dir=$(yk_krb5_preauth_dir) || yk_fail "cannot locate libkrb5"

# stock NAME VALUE: stock kinit -T armor, VALUE at its one prompt; output
# in $YK_TMP/kinit.out, trace in $YK_TMP/trace, ccache $YK_TMP/NAME.cc.
stock() {
    : > "$YK_TMP/trace"
    printf '%s\n' "$2" | KRB5_CONFIG=$YK_KRB5_CONF_STOCK \
        KRB5_TRACE=$YK_TMP/trace kinit -T "$ARMOR" -c "$YK_TMP/$1.cc" \
        "$1@$R" > "$YK_TMP/kinit.out" 2>&1
}

# How many PA-OTP-CHALLENGEs the last hint offered (the trace's
# "Processing preauth types" line after the KDC's PREAUTH_REQUIRED).
challenges() {
    grep -m1 'Processing preauth types:' "$YK_TMP/trace" |
        grep -o 'PA-OTP-CHALLENGE (141)' | grep -c . || true
}

# Our user, in every setup: password + OTP through krb5-yubikey.
alice_logs_in() {
    stock alice "alice-pw$(yk_otp "$YK_TMP/alice.tok")" ||
        { cat "$YK_TMP/kinit.out" >&2; yk_fail "$1: alice refused"; }
    yk_expect_attempt alice "mode=2fa verdict=accepted"
    [ "$(challenges)" = 1 ] ||
        yk_fail "$1: alice's hint has $(challenges) PA-OTP-CHALLENGEs"
    case "$(yk_tgt_flags "$YK_TMP/alice.cc")" in
        *H*) ;;
        *) yk_fail "$1: alice's TGT is not flagged H" ;;
    esac
}

# MIT's principal when MIT's module is not there: no challenge, no
# ticket, nothing handed anywhere.
carol_refused() {
    local before
    before=$(yk_kdc_attempts "carol@$R" | grep -c . || true)
    stock carol "$CAROL_OTP" && yk_fail "$1: carol got a ticket"
    [ "$(challenges)" = 0 ] ||
        yk_fail "$1: carol was offered a PA-OTP-CHALLENGE"
    [ "$(yk_kdc_attempts "carol@$R" | grep -c . || true)" = "$before" ] ||
        yk_fail "$1: the module logged an attempt for carol"
}

# --- 1. MIT's otp module loaded beside ours ------------------------------
if [ ! -f "$preauth_dir/otp.so" ]; then
    skipped="krb5-otp is not installed (no $preauth_dir/otp.so)"
elif ! command -v freeradius >/dev/null 2>&1; then
    skipped="freeradius is not installed (apt-get install freeradius)"
fi
if [ -n "$skipped" ]; then
    echo "SKIP (part 1, MIT's otp module beside ours): $skipped" >&2
else
    yk_radius_user carol "$CAROL_OTP"
    yk_radius_start
    YK_KDC_CONF_EXTRA=$(yk_radius_otp_section) yk_realm_write_config
    yk_kdc_start
    KRB5_CONFIG=$YK_KRB5_CONF yk_armor_ccache "$ARMOR"
    grep -q "yubikey: MIT's otp module is loaded (.*/otp.so)" \
        "$YK_KDC_LOG" || yk_fail "the KDC did not say MIT's module is loaded"

    alice_logs_in "MIT's module loaded"
    yk_ok "MIT's otp module loaded: alice (a token) logs in through" \
        "krb5-yubikey, one challenge, TGT flagged H"

    stock carol "$CAROL_OTP" ||
        { cat "$YK_TMP/kinit.out" >&2; yk_fail "carol (MIT's otp" \
            "attribute) refused"; }
    yk_expect_attempt carol \
        "padata=142: otp string attribute, handed to MIT's otp module"
    [ "$(challenges)" = 1 ] ||
        yk_fail "carol's hint has $(challenges) PA-OTP-CHALLENGEs"
    [ "$(yk_radius_logins carol)" = 1 ] ||
        yk_fail "FreeRADIUS did not log carol's login once"
    case "$(yk_tgt_flags "$YK_TMP/carol.cc")" in
        *H*) yk_fail "carol's TGT (MIT's module) is flagged H" ;;
        *A*) ;;
        *) yk_fail "carol's TGT is not flagged A (pre-authenticated)" ;;
    esac
    stock carol "271828" && yk_fail "carol: a wrong value was accepted"
    grep -q "Preauthentication failed" "$YK_TMP/kinit.out" ||
        yk_fail "carol's wrong value: kinit said $(cat "$YK_TMP/kinit.out")"
    yk_expect_attempt carol "padata=142: otp string attribute, handed to"
    grep -q "Login incorrect.*\[carol" "$YK_RADIUS_DIR/radius.log" ||
        yk_fail "FreeRADIUS did not refuse carol's wrong value"
    yk_ok "MIT's otp module loaded: carol (otp attribute) logs in through" \
        "it and FreeRADIUS (TGT A, not H); a wrong value is refused there"

    # Ours is still ours: a replay of alice's is refused by krb5-yubikey.
    otp=$(yk_otp "$YK_TMP/alice.tok")
    stock alice "alice-pw$otp" || yk_fail "alice refused"
    yk_expect_attempt alice "verdict=accepted"
    stock alice "alice-pw$otp" && yk_fail "alice: a replay was accepted"
    yk_expect_attempt alice "verdict=refused reason=replay"
    yk_ok "MIT's otp module loaded: alice's replay refused by krb5-yubikey"
    yk_kdc_stop
fi

# --- 2. disable = otp (the documented setting for sites with only ours) --
YK_KDC_PREAUTH_EXTRA="  disable = otp" yk_realm_write_config
: > "$YK_KDC_LOG"
YK_ATTEMPTS=()
yk_kdc_start
[ -f "$ARMOR" ] || KRB5_CONFIG=$YK_KRB5_CONF yk_armor_ccache "$ARMOR"
grep -q "yubikey: MIT's otp module is not loaded" "$YK_KDC_LOG" ||
    yk_fail "disable = otp: the KDC did not say MIT's module is not loaded"
alice_logs_in "disable = otp"
carol_refused "disable = otp"
yk_ok "disable = otp: alice logs in; carol gets no challenge and no ticket"
yk_kdc_stop

# --- 3. krb5-otp not installed ------------------------------------------
# The KDC loads its built-in modules from plugin_base_dir/preauth: a
# directory with libkrb5's modules but otp.so is what a host without
# krb5-otp has.
mkdir -p "$YK_TMP/plugins/preauth"
for so in "$preauth_dir"/*.so; do
    [ "$(basename "$so")" = otp.so ] && continue
    ln -s "$so" "$YK_TMP/plugins/preauth/"
done
YK_KDC_CONF_EXTRA="[libdefaults]
 plugin_base_dir = $YK_TMP/plugins" yk_realm_write_config
: > "$YK_KDC_LOG"
YK_ATTEMPTS=()
yk_kdc_start
grep -q "yubikey: MIT's otp module is not loaded" "$YK_KDC_LOG" ||
    yk_fail "without otp.so: the KDC did not say MIT's module is not loaded"
alice_logs_in "without krb5-otp"
carol_refused "without krb5-otp"
yk_ok "without krb5-otp: alice logs in; carol gets no challenge"

kill -0 "$YK_KDC_PID" 2>/dev/null || yk_fail "the KDC died"
if [ -n "$skipped" ]; then
    yk_skip "part 1 (MIT's otp module beside ours) not run: $skipped"
fi
echo "PASS: coexist.sh"
exit 0
