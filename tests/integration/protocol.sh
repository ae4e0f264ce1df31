#!/bin/bash
# SPDX-License-Identifier: MIT
# protocol.sh: the requests stock kinit never sends, against a real KDC.
#
# The same DB2 realm as kinit.sh (realm.sh, lib.sh), plus the test client
# tests/client/yktestclient (run with a krb5.conf without our client
# module) and a second krb5kdc on the same database and slapd: a verbatim
# retransmission to another KDC (DISCARD, not counted), the mechanisms a
# +requires_hwauth principal is offered, pending/disabled/unknown tokens,
# mode 2 without armor or without policy otp, malformed, truncated,
# doubled, stale and wrong-nonce requests (refused without consuming the
# OTP), and no hint for a principal without tokens.  One principal per
# scenario.  Exit 0 pass, 1 fail, 77 skip (announced).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"

R=$YK_REALM
YKTC=$YK_BUILDDIR/tests/client/yktestclient
LOCKPOL=lockout                 # a policy that keeps the failure count

T0=$(yk_ms)
yk_realm_setup
[ -x "$YKTC" ] || yk_fail "$YKTC is not built (run make first)"
ARMOR=$YK_TMP/armor.cc

# rtx/rtxo: retransmissions (mode 1 / mode 2); hw: +requires_hwauth;
# pend/dis/unk: pending, disabled, unknown token; potp/ptwo: policy otp /
# 2fa; junk: bad requests; none: no token.
kadmin.local -r "$R" addpol -maxfailure 5 "$LOCKPOL" \
    > "$YK_KRB5_DIR/kadmin.out" 2>&1 ||
    { cat "$YK_KRB5_DIR/kadmin.out" >&2; yk_fail "addpol failed"; }
yk_realm_addprinc rtx rtx-pw -policy "$LOCKPOL"
yk_realm_addprinc rtxo rtxo-pw -policy "$LOCKPOL"
yk_realm_addprinc hw hw-pw +requires_hwauth
for p in pend dis unk potp ptwo junk none; do
    yk_realm_addprinc "$p" "$p-pw"
done
for p in rtx rtxo hw pend dis unk potp ptwo junk; do
    yk_realm_enroll "$p" "$YK_TMP/$p.tok"
done
for p in rtxo potp; do
    yk_ykadmin policy "$p@$R" otp >> "$YK_KRB5_DIR/ykadmin.log" 2>&1 ||
        yk_fail "ykadmin policy $p otp failed"
done
yk_ykadmin disable "$("$YK_YKEMU_BIN" --public-id "$YK_TMP/dis.tok")" \
    >> "$YK_KRB5_DIR/ykadmin.log" 2>&1 || yk_fail "ykadmin disable failed"

# pend's token back to pending, as an interrupted enrolment leaves it:
# the exact secret value deleted, the same value with st=pending added.
pend_dn="uid=pend,$YK_PEOPLE_DN"
old=$(yk_ldapsearch_as "$YK_ADMIN_DN" "$YK_ADMIN_PW" -b "$pend_dn" -s base \
    yubikeyTokenSecret | sed -n 's/^yubikeyTokenSecret: //p')
case "$old" in
    *" st=active "*) ;;
    *) yk_fail "pend: unexpected secret value (base64?): $old" ;;
esac
yk_ldap_modify <<EOF
dn: $pend_dn
changetype: modify
delete: yubikeyTokenSecret
yubikeyTokenSecret: $old
-
add: yubikeyTokenSecret
yubikeyTokenSecret: ${old/ st=active / st=pending }
EOF
yk_ykadmin list "pend@$R" 2>&1 | grep -q ' pending ' ||
    yk_fail "pend: ykadmin list does not show the token pending"

# A token that was never enrolled anywhere.
"$YK_YKEMU_BIN" --init "$YK_TMP/stranger.tok" > /dev/null ||
    yk_fail "ykemu --init failed"

yk_kdc_start
yk_kdc2_start
yk_armor_ccache "$ARMOR"

# --- helpers -------------------------------------------------------------

LAST_LINE=

# Both KDCs still run.
kdcs_up() {
    kill -0 "$YK_KDC_PID" 2>/dev/null || yk_fail "the KDC died"
    kill -0 "$YK_KDC2_PID" 2>/dev/null || yk_fail "the second KDC died"
}

# expect_log NAME WANT [LOG]: one more attempt of NAME in LOG (default
# the first KDC's); its line contains " WANT"; the KDCs are up.  The line
# is left in LAST_LINE.
expect_log() {
    yk_expect_attempt "$@"
    LAST_LINE=$YK_LAST_ATTEMPT
    kdcs_up
}

# The counter= field of LAST_LINE.
last_counter() {
    printf '%s\n' "$LAST_LINE" | sed -n 's/.* counter=\([0-9-]*\) .*/\1/p'
}

# tc WANT_RC PRINC ARGS...: the test client (a krb5.conf without our
# module); output in $YK_TMP/tc.out, its time in TC_MS; fail unless it
# exits WANT_RC.
TC_MS=0
tc() {
    local want=$1 princ=$2 t0 rc
    shift 2
    t0=$(yk_ms)
    KRB5_CONFIG=$YK_KRB5_CONF_PLAIN "$YKTC" "$@" "$princ" \
        > "$YK_TMP/tc.out" 2>&1
    rc=$?
    TC_MS=$(($(yk_ms) - t0))
    [ "$rc" -eq "$want" ] ||
        { cat "$YK_TMP/tc.out" >&2;
          yk_fail "$princ: yktestclient $* exited $rc, expected $want"; }
}

# tc_has TEXT: the test client's output holds TEXT.
tc_has() {
    grep -qF -- "$1" "$YK_TMP/tc.out" ||
        { cat "$YK_TMP/tc.out" >&2; yk_fail "yktestclient output lacks: $1"; }
}

# login NAME PW OTP [KINIT OPTIONS]: kinit (our client module) with the
# password and the OTP, traced into $YK_TMP/trace; fail if refused; the
# TGT must be flagged H.
login() {
    local name=$1 pw=$2 otp=$3 flags
    shift 3
    : > "$YK_TMP/trace"     # KRB5_TRACE appends
    printf '%s\n%s\n' "$pw" "$otp" |
        KRB5_TRACE=$YK_TMP/trace yk_kinit "$name" "$@" ||
        { cat "$YK_TMP/kinit.out" >&2;
          yk_fail "$name: password + OTP refused"; }
    flags=$(yk_tgt_flags)
    case "$flags" in
        *H*) ;;
        *) yk_fail "$name: TGT not flagged H: $flags" ;;
    esac
}

# The padata types the KDC offered in its first PREAUTH_REQUIRED, as the
# client's trace in $YK_TMP/trace lists them.
offered() {
    grep -m1 'Processing preauth types:' "$YK_TMP/trace" |
        sed 's/.*Processing preauth types: //'
}

# failures NAME: "Failed password attempts" of NAME (kadmin.local).
failures() {
    kadmin.local -r "$R" getprinc "$1" 2>/dev/null |
        sed -n 's/^Failed password attempts: //p'
}

# list_field NAME TOKENFILE N: column N of ykadmin list for that token
# (4 state, 5 counter).
list_field() {
    local pubid
    pubid=$("$YK_YKEMU_BIN" --public-id "$2")
    yk_ykadmin list "$1@$R" 2>/dev/null |
        awk -v p="$pubid" -v n="$3" '$3 == p { print $n }'
}

# offered_has NAME TEXT / offered_lacks NAME TEXT: about offered().
offered_has() {
    case "$(offered)" in
        *"$2"*) ;;
        *) yk_fail "$1: the KDC did not offer $2: $(offered)" ;;
    esac
}
offered_lacks() {
    case "$(offered)" in
        *"$2"*) yk_fail "$1: the KDC offered $2: $(offered)" ;;
    esac
}

# hint_is TEXT: the test client's hint line is exactly TEXT.
hint_is() {
    local got
    got=$(grep '^hint: ' "$YK_TMP/tc.out")
    [ "$got" = "$1" ] ||
        { cat "$YK_TMP/tc.out" >&2; yk_fail "hint \"$got\", expected \"$1\""; }
}

# Every OTP used, for the final check that none reached a log.
OTPS=()

# next_otp NAME: the next OTP of NAME's token (also remembered in OTPS).
# Sets OTP (no subshell: the list must grow).
next_otp() {
    OTP=$(yk_otp "$YK_TMP/$1.tok")
    OTPS+=("$OTP")
}

# --- a verbatim retransmission to another KDC: DISCARD, not counted -----
# retransmit NAME KIND MODE ARGS...: KIND (replay, replay-otp) accepted by
# the first KDC, then the byte-identical AS-REQ sent to the second one:
# no reply, logged as a retransmission with the same counter, no failure
# counted, the directory's counter that of the OTP.
retransmit() {
    local name=$1 kind=$2 mode=$3 c
    shift 3
    next_otp "$name"
    tc 2 "$name" --send "$kind" --otp "$OTP" \
        --replay-config "$YK_KRB5_CONF_KDC2" --out "FILE:$YK_TMP/$name.cc" \
        "$@"
    [ "$(grep '^result: ' "$YK_TMP/tc.out" | tr '\n' '|')" = \
        "result: issued|result: no reply|" ] ||
        { cat "$YK_TMP/tc.out" >&2;
          yk_fail "$name: expected \"issued\", then \"no reply\""; }
    expect_log "$name" "mode=$mode verdict=accepted reason=accepted"
    c=$(last_counter)
    case "$(yk_tgt_flags "FILE:$YK_TMP/$name.cc")" in
        *H*) ;;
        *) yk_fail "$name: the accepted exchange's TGT is not flagged H" ;;
    esac
    expect_log "$name" \
        "counter=$c mode=$mode verdict=discarded reason=retransmission" \
        "$YK_KDC2_LOG"
    [ "$(failures "$name")" = 0 ] ||
        yk_fail "$name: failed attempts $(failures "$name") after a" \
            "retransmission (expected 0)"
    [ "$(list_field "$name" "$YK_TMP/$name.tok" 5)" = "$c" ] ||
        yk_fail "$name: ykadmin list counter" \
            "$(list_field "$name" "$YK_TMP/$name.tok" 5), expected $c"
    yk_ok "mode $mode ($kind): retransmission to a second KDC discarded" \
        "(both exchanges ${TC_MS} ms), 0 failures, counter $c"
}

retransmit rtx replay 2fa --password rtx-pw
retransmit rtxo replay-otp otp --armor "$ARMOR"
# The count is kept: a wrong password makes it 1.
next_otp rtx
tc 1 rtx --send good2fa --password wrong-pw --otp "$OTP"
expect_log rtx "verdict=refused reason=wrong password"
[ "$(failures rtx)" = 1 ] ||
    yk_fail "rtx: failed attempts $(failures rtx) after a wrong password"
yk_ok "the failure count is kept (a wrong password made it 1)"

# --- +requires_hwauth: only our mechanism is offered ---------------------
kdestroy -q 2>/dev/null
next_otp hw
login hw hw-pw "$OTP"
expect_log hw "mode=2fa verdict=accepted"
offered_has hw "-22859"
offered_lacks hw "(2)"
unarmored=$(offered)
next_otp hw
login hw hw-pw "$OTP" -T "$ARMOR"
expect_log hw "mode=2fa verdict=accepted"
offered_has hw "-22859"
offered_lacks hw "(138)"
offered_lacks hw "(2)"
yk_ok "+requires_hwauth offered: $unarmored; armored: $(offered)"

# --- pending, disabled and unknown tokens: refused -----------------------
tc 3 pend --send good2fa --password pend-pw --emu "$YK_TMP/pend.tok"
tc_has "no hint from the KDC"
tc 1 pend --optimistic --send good2fa --password pend-pw \
    --emu "$YK_TMP/pend.tok"
tc_has "(KDC error 24)"
expect_log pend "verdict=refused reason=pending token"
yk_ok "pending token: no hint; refused in $TC_MS ms (pending token)"

tc 1 dis --optimistic --send good2fa --password dis-pw \
    --emu "$YK_TMP/dis.tok"
tc_has "(KDC error 24)"
expect_log dis "verdict=refused reason=disabled token"
yk_ok "disabled token: refused in $TC_MS ms (disabled token)"

OTP=$(yk_otp "$YK_TMP/stranger.tok")
OTPS+=("$OTP")
kdestroy -q 2>/dev/null
printf '%s\n%s\n' unk-pw "$OTP" | yk_kinit unk &&
    yk_fail "unk: a token never enrolled was accepted"
klist -s 2>/dev/null && yk_fail "unk: a ticket after a refused login"
expect_log unk "pubid=$("$YK_YKEMU_BIN" --public-id "$YK_TMP/stranger.tok")"
case "$LAST_LINE" in
    *"verdict=refused reason=unknown token"*) ;;
    *) yk_fail "unk: log line \"$LAST_LINE\" lacks the unknown token" ;;
esac
yk_ok "a token never enrolled: refused (unknown token, its public id logged)"

# --- mode 2: armor and policy otp both needed -----------------------------
next_otp potp
tc 1 potp --send unarmored-otp --otp "$OTP"
hint_is "hint: flags 0x01 password-bound"
expect_log potp "mode=otp verdict=refused reason=not armored"
t=$TC_MS
tc 0 potp --send goodotp --otp "$OTP" --armor "$ARMOR" \
    --out "FILE:$YK_TMP/potp.cc"
hint_is "hint: flags 0x03 password-bound otp-alone"
expect_log potp "mode=otp verdict=accepted"
case "$(yk_tgt_flags "FILE:$YK_TMP/potp.cc")" in
    *H*) ;;
    *) yk_fail "potp: the OTP-only TGT is not flagged H" ;;
esac
yk_ok "policy otp: unarmored mode 2 refused in $t ms (not armored), no" \
    "OTP_ALONE_OK unarmored; armored: offered, the same OTP accepted"

next_otp ptwo
tc 1 ptwo --send goodotp --otp "$OTP" --armor "$ARMOR"
hint_is "hint: flags 0x01 password-bound"
expect_log ptwo "mode=otp verdict=refused reason=policy"
t=$TC_MS
kdestroy -q 2>/dev/null
login ptwo ptwo-pw "$OTP" -T "$ARMOR"
expect_log ptwo "mode=2fa verdict=accepted"
offered_has ptwo "-22859"
offered_has ptwo "(138)"     # what hw is not offered
yk_ok "policy 2fa: armored mode 2 refused in $t ms (policy), no" \
    "OTP_ALONE_OK; the same OTP then accepted with the password"

# --- bad requests: refused before the counter is touched -----------------
declare -A why=([malformed]="malformed" [truncated]="malformed"
    [double]="duplicate padata" [stale]="stale time"
    [wrong-nonce]="nonce mismatch")
for kind in malformed truncated double stale wrong-nonce; do
    next_otp junk
    tc 1 junk --send "$kind" --password junk-pw --otp "$OTP"
    tc_has "(KDC error 24)"
    expect_log junk "verdict=refused reason=${why[$kind]}"
    t=$TC_MS
    kdestroy -q 2>/dev/null
    login junk junk-pw "$OTP"
    expect_log junk "mode=2fa verdict=accepted"
    yk_ok "$kind: refused in $t ms (${why[$kind]}); the same OTP then" \
        "accepted"
done
offered_has junk "-22859"
offered_has junk "(2)"       # what hw is not offered

# --- no token: no hint -------------------------------------------------
tc 3 none --send good2fa --password none-pw --otp "${OTPS[0]}"
tc_has "no hint from the KDC"
kdestroy -q 2>/dev/null
: > "$YK_TMP/trace"
printf '%s\n' none-pw | KRB5_TRACE=$YK_TMP/trace yk_kinit none ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "none: password kinit refused"; }
case "$(yk_tgt_flags)" in
    *H*) yk_fail "none: a password-only TGT is flagged H" ;;
esac
offered_lacks none "-22859"
offered_has none "(2)"
[ -z "$(yk_kdc_attempts "none@$R")" ] ||
    yk_fail "none: the module logged an attempt"
yk_ok "no token: never offered the hint (offered: $(offered))"

# --- both KDCs up, no OTP in a log ---------------------------------------
kdcs_up
for otp in "${OTPS[@]}"; do
    grep -qF "$otp" "$YK_KDC_LOG" "$YK_KDC2_LOG" &&
        yk_fail "an OTP appears in a KDC log"
done
yk_kdc2_stop
yk_ok "both KDCs still up; no OTP in their logs"
echo "PASS: protocol.sh ($(($(yk_ms) - T0)) ms)"
exit 0
