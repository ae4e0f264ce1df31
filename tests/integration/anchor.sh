#!/bin/bash
# SPDX-License-Identifier: MIT
# anchor.sh: the anchors of bench/run work on real servers: MIT's otp
# module (Debian's krb5-otp) -> RADIUS on 127.0.0.1 -> FreeRADIUS with
# rlm_yubikey decrypting an emulated token's OTP, the last counter kept
# by rlm_cache (ykcache, in memory) or in SQLite through rlm_sql (yksql).
#
# For each anchor, one principal with MIT's "otp" string attribute (token
# type ykcache or yksql, radius.sh) and no krb5-yubikey token; stock
# kinit (nothing of ours on the client) over host-keytab FAST armor,
# answering the otp prompt with the OTP alone:
#   1. an OTP is accepted (TGT pre-authenticated), the next one too;
#   2. the same OTP sent again is refused, and FreeRADIUS says replay;
#   3. an OTP with one character changed (a bad CRC) is refused;
#   4. FreeRADIUS restarted: yksql still refuses the last OTP (the
#      counter is on disk); ykcache accepts it once more (its counters
#      lived in memory only) - what bench/run and doc/performance.md say.
# Needs krb5-otp, freeradius and freeradius-yubikey, else skipped (77).
# Exit 0 pass, 1 fail, 77 skip (announced).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"
# shellcheck source=radius.sh
. "$srcdir/tests/integration/radius.sh"

ANCHORS="ykcache yksql"
REPLAY="Replay attack detected"      # rlm_yubikey's messages
BAD_CRC="Decrypting OTP token data failed"

yk_realm_setup
ARMOR=$YK_TMP/armor.cc           # YK_TMP exists from here on
preauth_dir=$(yk_krb5_preauth_dir) || yk_fail "cannot locate libkrb5"
[ -f "$preauth_dir/otp.so" ] ||
    yk_skip "krb5-otp is not installed (no $preauth_dir/otp.so)"
yk_radius_anchors

# One principal per anchor (named after it), its token type, its token.
for a in $ANCHORS; do
    yk_realm_addprinc "$a" -
    kadmin.local -r "$YK_REALM" setstr "$a" otp "[{\"type\": \"$a\"}]" \
        > "$YK_KRB5_DIR/kadmin.out" 2>&1 ||
        { cat "$YK_KRB5_DIR/kadmin.out" >&2; yk_fail "setstr $a otp failed"; }
    "$YK_YKEMU_BIN" --init "$YK_TMP/$a.tok" > /dev/null ||
        yk_fail "ykemu --init failed"
    yk_radius_yubikey_user "$a" "$YK_TMP/$a.tok"
done
yk_radius_start
YK_KDC_CONF_EXTRA=$(yk_radius_otp_section) yk_realm_write_config
yk_kdc_start
export KRB5_CONFIG=$YK_KRB5_CONF_STOCK
yk_armor_ccache "$ARMOR"

# login NAME VALUE: stock kinit with VALUE at its one prompt.
login() {
    yk_stock_kinit "$1" "$ARMOR" "$2"
}

# accepted NAME VALUE WHAT: the login succeeds with a pre-authenticated
# TGT, one more "Login OK" in FreeRADIUS's log.
accepted() {
    local before
    before=$(yk_radius_logins "$1")
    login "$1" "$2" ||
        { cat "$YK_TMP/kinit.out" >&2; yk_fail "$1: $3 refused"; }
    case "$(yk_tgt_flags "$YK_TMP/$1.cc")" in
        *A*) ;;
        *) yk_fail "$1: $3: the TGT is not flagged A (pre-authenticated)" ;;
    esac
    [ "$(yk_radius_logins "$1")" = $((before + 1)) ] ||
        yk_fail "$1: $3: FreeRADIUS did not log one more Login OK"
}

# refused NAME VALUE WHAT REASON: kinit is refused (preauth failed) and
# FreeRADIUS's newest line for NAME is "Login incorrect" with REASON
# (rlm_yubikey's message).
refused() {
    local line
    login "$1" "$2" && yk_fail "$1: $3 accepted"
    grep -q "Preauthentication failed" "$YK_TMP/kinit.out" ||
        yk_fail "$1: $3: kinit said $(cat "$YK_TMP/kinit.out")"
    line=$(grep "\[$1\]" "$YK_RADIUS_DIR/radius.log" | tail -1)
    case "$line" in
        *"Login incorrect"*"$4"*) ;;
        *) yk_fail "$1: $3: FreeRADIUS logged \"$line\", not \"$4\"" ;;
    esac
}

# A changed last character: the AES block decrypts to a bad CRC.
spoil() {
    local v=$1
    case "${v: -1}" in
        c) echo "${v%?}b" ;;
        *) echo "${v%?}c" ;;
    esac
}

declare -A LAST
for a in $ANCHORS; do
    otp=$(yk_otp "$YK_TMP/$a.tok")
    accepted "$a" "$otp" "a fresh OTP"
    LAST[$a]=$(yk_otp "$YK_TMP/$a.tok")
    accepted "$a" "${LAST[$a]}" "the next OTP"
    yk_ok "$a: OTPs accepted through MIT's otp module and FreeRADIUS"

    refused "$a" "${LAST[$a]}" "a replay" "$REPLAY"
    yk_ok "$a: a replay refused"
    refused "$a" "$otp" "an older OTP" "$REPLAY"
    refused "$a" "$(spoil "$(yk_otp "$YK_TMP/$a.tok")")" "a wrong OTP" \
        "$BAD_CRC"
    yk_ok "$a: an older OTP and a wrong one (bad CRC) refused"
done

# --- 4. FreeRADIUS restarted: what each anchor remembers ----------------
yk_radius_restart
refused yksql "${LAST[yksql]}" "a replay after a restart" "$REPLAY"
yk_ok "yksql: a replay refused after FreeRADIUS restarted (SQLite)"
accepted ykcache "${LAST[ykcache]}" "a replay after a restart"
yk_ok "ykcache: a replay ACCEPTED after FreeRADIUS restarted (rlm_cache" \
    "keeps counters in memory only, as documented)"
refused ykcache "${LAST[ykcache]}" "a second replay" "$REPLAY"
accepted yksql "$(yk_otp "$YK_TMP/yksql.tok")" "a new OTP after a restart"
yk_ok "after the restart: the cache holds the counter again; yksql" \
    "accepts a new OTP"

kill -0 "$YK_KDC_PID" 2>/dev/null || yk_fail "the KDC died"
echo "PASS: anchor.sh"
exit 0
