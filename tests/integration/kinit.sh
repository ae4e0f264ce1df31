#!/bin/bash
# SPDX-License-Identifier: MIT
# kinit.sh: password + YubiKey OTP logins against a real KDC and slapd.
#
# A DB2 realm whose principal entries (and tokens) live in a separate
# slapd (realm.sh, lib.sh); tokens enrolled with ykadmin, OTPs from the
# emulator; the real kinit, klist and kvno over TCP on 127.0.0.1.
# Exit 0 pass, 1 fail, 77 skip (announced).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"

# A long cache TTL: a disabled token must be refused at once anyway (the
# administrator's write makes the KDC's swap fail and re-read).
YK_CACHE_TTL=60

R=$YK_REALM
WEB=HTTP/web.example.com        # require_auth yubikey-2fa
SSH=host/ssh.example.com        # require_auth yubikey
BOGUS=HTTP/bogus.example.com    # require_auth no-such-indicator

yk_realm_setup
yk_realm_addprinc alice alice-pw
yk_realm_addprinc bob bob-pw
yk_realm_addprinc carol carol-pw
yk_realm_addprinc dave dave-pw +requires_hwauth
yk_realm_addprinc erin erin-pw
yk_realm_service "$WEB" yubikey-2fa
yk_realm_service "$SSH" yubikey
yk_realm_service "$BOGUS" no-such-indicator
yk_realm_enroll alice "$YK_TMP/alice.tok"
yk_realm_enroll bob "$YK_TMP/bob.tok"
yk_realm_enroll dave "$YK_TMP/dave.tok"
yk_realm_enroll erin "$YK_TMP/erin.tok"
yk_kdc_start

# Every attempt must leave exactly one line in the KDC log.
expect_log() { yk_expect_attempt "$@"; }

# kinit NAME with password PW and OTP (empty or absent: password only),
# then further kinit options.
login() {
    local name=$1 pw=$2 otp=${3:-}
    shift $(($# < 3 ? $# : 3))
    if [ -n "$otp" ]; then
        printf '%s\n%s\n' "$pw" "$otp" | yk_kinit "$name" "$@"
    else
        printf '%s\n' "$pw" | yk_kinit "$name" "$@"
    fi
}

# The ticket flags of the ccache's TGT (klist -f).
tgt_flags() {
    klist -f 2>/dev/null | awk '/krbtgt\// { getline; sub(/.*Flags: /, "");
        print; exit }'
}

# --- password + OTP: a TGT flagged H, indicators on service tickets ----
otp1=$(yk_otp "$YK_TMP/alice.tok")
login alice alice-pw "$otp1" ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "alice: password + OTP refused"; }
grep -q "YubiKey OTP for alice@$R" "$YK_TMP/kinit.out" ||
    yk_fail "alice: kinit never asked for the OTP"
expect_log alice "verdict=accepted reason=accepted"
pubid=$("$YK_YKEMU_BIN" --public-id "$YK_TMP/alice.tok")
yk_kdc_attempts "alice@$R" | tail -1 | grep -q "pubid=$pubid counter=" ||
    yk_fail "alice: the log line does not name public id $pubid"
flags=$(tgt_flags)
case "$flags" in
    *H*) ;;
    *) yk_fail "alice's TGT is not flagged H (hardware auth): $flags" ;;
esac
yk_ok "password + OTP: TGT with flags $flags"
kvno "$WEB" > "$YK_TMP/kvno.out" 2>&1 ||
    { cat "$YK_TMP/kvno.out" >&2;
      yk_fail "alice: no ticket for $WEB (require_auth yubikey-2fa)"; }
kvno "$SSH" > "$YK_TMP/kvno.out" 2>&1 ||
    { cat "$YK_TMP/kvno.out" >&2;
      yk_fail "alice: no ticket for $SSH (require_auth yubikey)"; }
kvno "$BOGUS" > "$YK_TMP/kvno.out" 2>&1 &&
    yk_fail "alice got a ticket for $BOGUS: require_auth is not enforced"
yk_ok "the TGT carries yubikey and yubikey-2fa: service tickets issued"

# --- the same OTP twice: refused ---------------------------------------
kdestroy -q 2>/dev/null
login alice alice-pw "$otp1" &&
    yk_fail "alice: the same OTP was accepted twice"
expect_log alice "verdict=refused reason=replay"
klist -s 2>/dev/null && yk_fail "alice: a ticket after a replayed OTP"
yk_ok "the same OTP twice: the second refused (replay)"

# --- a wrong password with a good OTP: refused, the OTP not consumed ----
otp2=$(yk_otp "$YK_TMP/alice.tok")
login alice wrong-pw "$otp2" &&
    yk_fail "alice: a wrong password with a good OTP was accepted"
expect_log alice "verdict=refused reason=wrong password"
login alice alice-pw "$otp2" ||
    { cat "$YK_TMP/kinit.out" >&2;
      yk_fail "alice: the OTP sent with a wrong password was consumed"; }
expect_log alice "verdict=accepted"
yk_ok "wrong password refused; the same OTP then works with the right one"

# --- an older OTP: refused and logged as such; after a replug, accepted -
old=$(yk_otp "$YK_TMP/alice.tok")
new=$(yk_otp "$YK_TMP/alice.tok")
login alice alice-pw "$new" || yk_fail "alice: a fresh OTP refused"
expect_log alice "verdict=accepted"
login alice alice-pw "$old" && yk_fail "alice: an older OTP was accepted"
expect_log alice "verdict=refused reason=older than the token's last use"
"$YK_YKEMU_BIN" --replug "$YK_TMP/alice.tok" || yk_fail "ykemu --replug"
login alice alice-pw "$(yk_otp "$YK_TMP/alice.tok")" ||
    yk_fail "alice: the first OTP after a replug refused"
expect_log alice "verdict=accepted"
yk_ok "an older OTP refused (older than last use); after a replug accepted"

# --- another principal's token: refused --------------------------------
login alice alice-pw "$(yk_otp "$YK_TMP/bob.tok")" &&
    yk_fail "alice logged in with bob's OTP"
expect_log alice "verdict=refused reason=unknown token"
yk_ok "bob's OTP presented for alice: refused (unknown token)"

# --- a password-only client: a TGT that services requiring OTP refuse ---
kdestroy -q 2>/dev/null
KRB5_CONFIG=$YK_KRB5_CONF_PLAIN login alice alice-pw ||
    { cat "$YK_TMP/kinit.out" >&2;
      yk_fail "alice: password-only kinit refused (no +requires_hwauth)"; }
grep -q "YubiKey" "$YK_TMP/kinit.out" &&
    yk_fail "the plain client asked for an OTP"
case "$(tgt_flags)" in
    *H*) yk_fail "a password-only TGT is flagged H" ;;
esac
KRB5_CONFIG=$YK_KRB5_CONF_PLAIN kvno "$WEB" > "$YK_TMP/kvno.out" 2>&1 &&
    yk_fail "a password-only TGT got a ticket for $WEB"
yk_ok "password only (client without the module): $WEB refuses the TGT"

# --- a principal without tokens: password only, never asked for an OTP --
kdestroy -q 2>/dev/null
login carol carol-pw ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "carol: password kinit refused"; }
grep -q "YubiKey" "$YK_TMP/kinit.out" &&
    yk_fail "carol (no token) was asked for an OTP"
klist -s || yk_fail "carol: no TGT"
[ -z "$(yk_kdc_attempts "carol@$R")" ] ||
    yk_fail "carol: the module logged an attempt without one"
kvno "$WEB" > "$YK_TMP/kvno.out" 2>&1 &&
    yk_fail "carol's password-only TGT got a ticket for $WEB"
yk_ok "no token: password-only TGT, no OTP prompt, no module log line"

# --- +requires_hwauth: password alone refused, password + OTP accepted --
kdestroy -q 2>/dev/null
KRB5_CONFIG=$YK_KRB5_CONF_PLAIN login dave dave-pw &&
    yk_fail "dave (+requires_hwauth) logged in with the password alone"
login dave dave-pw "$(yk_otp "$YK_TMP/dave.tok")" ||
    { cat "$YK_TMP/kinit.out" >&2;
      yk_fail "dave (+requires_hwauth): password + OTP refused"; }
expect_log dave "verdict=accepted"
yk_ok "+requires_hwauth: password alone refused, password + OTP accepted"

# --- policy otp: the OTP alone over FAST, with only "yubikey" -----------
yk_ykadmin policy "erin@$R" otp >> "$YK_KRB5_DIR/ykadmin.log" 2>&1 ||
    yk_fail "ykadmin policy erin otp failed"
yk_armor_ccache "$YK_TMP/armor.cc"
kdestroy -q 2>/dev/null
printf '%s\n' "$(yk_otp "$YK_TMP/erin.tok")" |
    yk_kinit erin -T "$YK_TMP/armor.cc" ||
    { cat "$YK_TMP/kinit.out" >&2;
      yk_fail "erin: OTP alone over FAST refused"; }
grep -q "Password for" "$YK_TMP/kinit.out" &&
    yk_fail "erin (policy otp, armored) was asked for a password"
expect_log erin "mode=otp verdict=accepted"
case "$(tgt_flags)" in
    *H*) ;;
    *) yk_fail "erin's OTP-only TGT is not flagged H" ;;
esac
kvno "$SSH" > "$YK_TMP/kvno.out" 2>&1 ||
    yk_fail "erin: no ticket for $SSH (require_auth yubikey)"
kvno "$WEB" > "$YK_TMP/kvno.out" 2>&1 &&
    yk_fail "erin's OTP-only TGT got a ticket for $WEB (yubikey-2fa)"
login erin erin-pw "$(yk_otp "$YK_TMP/erin.tok")" -T "$YK_TMP/armor.cc" \
    -X yubikey_mode=2fa ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "erin: forced 2fa refused"; }
expect_log erin "mode=2fa verdict=accepted"
kvno "$WEB" > "$YK_TMP/kvno.out" 2>&1 ||
    yk_fail "erin: no ticket for $WEB after password + OTP"
yk_ok "policy otp: the OTP alone over FAST gives yubikey only; 2fa both"

# --- a disabled token: refused at once ----------------------------------
yk_ykadmin disable "$pubid" >> "$YK_KRB5_DIR/ykadmin.log" 2>&1 ||
    yk_fail "ykadmin disable $pubid failed"
login alice alice-pw "$(yk_otp "$YK_TMP/alice.tok")" &&
    yk_fail "alice: a disabled token was accepted"
expect_log alice "verdict=refused reason=disabled token"
yk_ok "ykadmin disable: the next login refused at once"

# --- enable takes effect at once, as disable does (cache TTL 60 s) --------
# alice's record, cached as "disabled" by the refusal above, must not hide
# the token from the next attempt: the hint is read again for principals
# that have tokens but no active one.
yk_ykadmin enable "$pubid" >> "$YK_KRB5_DIR/ykadmin.log" 2>&1 ||
    yk_fail "ykadmin enable $pubid failed"
login alice alice-pw "$(yk_otp "$YK_TMP/alice.tok")" ||
    { cat "$YK_TMP/kinit.out" >&2
      yk_fail "alice: refused right after ykadmin enable"; }
expect_log alice "verdict=accepted"
yk_ok "ykadmin enable: the next login accepted at once"

# A +requires_hwauth principal whose token is disabled gets no hint, and
# the KDC says why (a helpdesk reads reason=).
did=$("$YK_YKEMU_BIN" --public-id "$YK_TMP/dave.tok")
yk_ykadmin disable "$did" >> "$YK_KRB5_DIR/ykadmin.log" 2>&1 ||
    yk_fail "ykadmin disable $did failed"
login dave dave-pw "$(yk_otp "$YK_TMP/dave.tok")" &&
    yk_fail "dave: logged in with a disabled token"
expect_log dave "verdict=refused reason=disabled token"
# The refusal read the record afresh: the next attempt gets no hint (and
# so no module attempt), only the KDC's word why.
login dave dave-pw "$(yk_otp "$YK_TMP/dave.tok")" &&
    yk_fail "dave: logged in with a disabled token (second try)"
n=$(yk_kdc_attempts "dave@$R" | grep -c .)
[ "$n" -eq "$(yk_attempts_made dave)" ] ||
    yk_fail "dave: an attempt reached the module without a hint"
grep -F "yubikey: hint=none principal=dave@$R reason=no active token: $did disabled" \
    "$YK_KDC_LOG" >/dev/null ||
    yk_fail "no hint=none line saying dave's token is disabled:" \
        "$(grep -F 'hint=none' "$YK_KDC_LOG")"
yk_ykadmin enable "$did" >> "$YK_KRB5_DIR/ykadmin.log" 2>&1 ||
    yk_fail "ykadmin enable $did failed"
login dave dave-pw "$(yk_otp "$YK_TMP/dave.tok")" ||
    { cat "$YK_TMP/kinit.out" >&2
      yk_fail "dave: refused right after ykadmin enable"; }
expect_log dave "verdict=accepted"
yk_ok "+requires_hwauth: no hint while disabled (logged with the reason)," \
    "offered again at once after enable"

# The KDC said at start that the module is loaded, with its settings.
grep -E "yubikey: krb5-yubikey [0-9.]+, realm $R: token directory ldap://127\.0\.0\.1:[0-9]+/, writes to .*master keyring .* \(1 keys, newest version 1\); cache TTL 60 s" \
    "$YK_KDC_LOG" >/dev/null ||
    yk_fail "no start line for realm $R in the KDC log:" \
        "$(grep -F 'krb5-yubikey' "$YK_KDC_LOG")"
grep -F "yubikey: WARNING" "$YK_KDC_LOG" &&
    yk_fail "a lone slapd was reported as replicated"
yk_ok "the KDC logs the module's version and settings at start (and no" \
    "replication warning for a lone slapd)"

# The client module says under KRB5_TRACE that it is loaded; a client
# without it (krb5-plain.conf) says nothing of the kind.
: > "$YK_TMP/trace"
KRB5_TRACE=$YK_TMP/trace login alice alice-pw "$(yk_otp "$YK_TMP/alice.tok")" ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "alice: traced login refused"; }
expect_log alice "verdict=accepted"
grep -E "yubikey: krb5-yubikey [0-9.]+ client module loaded \(padata -22859" \
    "$YK_TMP/trace" >/dev/null ||
    yk_fail "KRB5_TRACE shows no line from the client module"
: > "$YK_TMP/trace"
KRB5_TRACE=$YK_TMP/trace KRB5_CONFIG=$YK_KRB5_CONF_PLAIN login carol carol-pw ||
    yk_fail "carol: password login refused"
grep -q "client module loaded" "$YK_TMP/trace" &&
    yk_fail "a client without the module traced the module's line"
yk_ok "KRB5_TRACE shows the client module loaded (and only where it is)"

# --- the KDC is still up, and logged no secret ---------------------------
kill -0 "$YK_KDC_PID" 2>/dev/null || yk_fail "the KDC died"
for otp in "$otp1" "$otp2" "$old" "$new"; do
    grep -qF "$otp" "$YK_KDC_LOG" && yk_fail "an OTP appears in the KDC log"
done
yk_ok "one log line per attempt with its verdict; no OTP in the log"
yk_kdc_attempts "alice@$R" | sed 's/^.*yubikey: /  /'
echo "PASS: kinit.sh"
exit 0
