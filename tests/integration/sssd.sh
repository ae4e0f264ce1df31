#!/bin/bash
# SPDX-License-Identifier: MIT
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
# Part 2, real SSSD 2.8 (sssd -i, id_provider = proxy over files,
# auth_provider = krb5, krb5_use_fast = demand with a host keytab, a
# [prompting/2fa] section) driven by pamtester through pam_sss, in a
# private mount namespace: password and OTP at two prompts (policy 2fa:
# TGT flagged H), a replay and a wrong password refused (the OTP kept),
# the OTP alone for a +requires_hwauth principal of policy otp; without
# +requires_hwauth krb5_child answers the "password" question instead.
# Exit 0 pass, 1 fail, 77 skip (announced; part 1 has passed by then).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"

R=$YK_REALM
WEB=HTTP/web.example.com        # require_auth yubikey-2fa
YKR=$YK_BUILDDIR/tests/client/ykresponder
[ -x "$YKR" ] || yk_fail "$YKR is not built (run make first)"

yk_realm_setup
HOST=$YK_TMP/host.cc                # after yk_init made YK_TMP
yk_realm_addprinc alice alice-pw
yk_realm_addprinc erin erin-pw
yk_realm_service "$WEB" yubikey-2fa
yk_realm_enroll alice "$YK_TMP/alice.tok"
yk_realm_enroll erin "$YK_TMP/erin.tok"
yk_realm_addprinc hw hw-pw +requires_hwauth
yk_realm_enroll hw "$YK_TMP/hw.tok"
yk_ykadmin policy "hw@$R" otp >/dev/null 2>&1 ||
    yk_fail "ykadmin policy hw otp failed"
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

# refusals LOGIN OUT OTP: with LOGIN (responder or pam, taking NAME
# PASSWORD OTP; OUT its output file), alice's accepted OTP replayed and a
# fresh OTP with a wrong password are refused, and that fresh OTP is then
# accepted with her password (a wrong password burns no OTP).  The wrong
# password's output is left in OUT.
refusals() {
    local login=$1 out=$2 otp=$3
    "$login" alice alice-pw "$otp" &&
        yk_fail "$login: alice's replayed OTP was accepted"
    yk_expect_attempt alice "verdict=refused reason=replay"
    otp=$(yk_otp "$YK_TMP/alice.tok")
    "$login" alice wrong-pw "$otp" &&
        yk_fail "$login: alice's wrong password was accepted"
    yk_expect_attempt alice "verdict=refused reason=wrong password"
    cp "$out" "$out.wrong"
    "$login" alice alice-pw "$otp" ||
        { cat "$out" >&2; yk_fail "$login: the OTP of a wrong-password" \
            "attempt was burned"; }
    yk_expect_attempt alice "verdict=accepted"
    cp "$out.wrong" "$out"
    yk_ok "$login: replay refused; wrong password refused, its OTP kept"
}

otp=$(yk_otp "$YK_TMP/alice.tok")
responder alice alice-pw "$otp" ||
    { cat "$YK_TMP/ykr.out" >&2; yk_fail "alice: password||OTP refused"; }
expect_question
yk_expect_attempt alice "mode=2fa verdict=accepted"
yk_expect_strong_tgt alice "$YK_TMP/alice.cc" "$WEB"
yk_ok "responder, policy 2fa: password||OTP -> TGT flagged H, $WEB issued"

refusals responder "$YK_TMP/ykr.out" "$otp"
grep -q '^result: refused: .*(KDC error 24)' "$YK_TMP/ykr.out" ||
    { cat "$YK_TMP/ykr.out" >&2; yk_fail "alice: the wrong password was" \
        "not refused with PREAUTH_FAILED"; }

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

# --- Part 2: real SSSD ----------------------------------------------------
# sssd -i with a private sssd.conf, in a private mount namespace whose
# bind mounts put temp dirs and files over SSSD's compiled-in paths
# (/var/lib/sss, /var/log/sssd, /etc/sssd, /run, /etc/pam.d, /etc/passwd,
# /etc/group, /etc/nsswitch.conf, /etc/krb5.conf): the host's own
# configuration is never read or written.  pamtester runs in the same
# namespace (nsenter) through pam_sss.
S=$YK_TMP/sssd
SSSD_PID=

# Skip part 2 (part 1 passed): say exactly why, exit 77.
skip_sssd() {
    yk_ok "part 1 (responder) passed"
    yk_skip "real SSSD: $*"
}

# Check the programs and that a private mount namespace can be made.
sssd_check() {
    local f out
    for f in unshare nsenter pamtester; do
        command -v "$f" >/dev/null 2>&1 ||
            skip_sssd "$f not found (apt-get install util-linux pamtester)"
    done
    if [ ! -x /usr/sbin/sssd ] || [ ! -x /usr/libexec/sssd/krb5_child ]; then
        skip_sssd "sssd or its krb5_child not found (apt-get install" \
            "sssd-krb5 sssd-common)"
    fi
    ls /lib/*/security/pam_sss.so /usr/lib/*/security/pam_sss.so \
        >/dev/null 2>&1 ||
        skip_sssd "pam_sss.so not found (apt-get install libpam-sss)"
    out=$(unshare -m --propagation private \
        mount --bind "$YK_TMP" "$YK_TMP" 2>&1) ||
        skip_sssd "no private mount namespace here (unshare -m:" \
            "${out:-failed}): SSSD's paths are compiled in"
}

# Write the files the namespace's bind mounts put in place.
sssd_files() {
    local d
    for d in lib/db lib/pipes/private lib/mc lib/pubconf/krb5.include.d \
             lib/gpo_cache lib/deskprofile lib/secrets lib/keytabs log etc \
             run pam.d tmp; do
        mkdir -p "$S/$d" || yk_fail "mkdir $S/$d"
    done
    chmod 700 "$S/lib/pipes/private"
    chmod 1777 "$S/tmp"
    { cp /etc/passwd "$S/passwd" && cp /etc/group "$S/group"; } ||
        yk_fail "cannot copy /etc/passwd and /etc/group"
    {
        echo "alice:x:61001:61001:alice:/nonexistent:/usr/sbin/nologin"
        echo "erin:x:61002:61002:erin:/nonexistent:/usr/sbin/nologin"
        echo "hw:x:61003:61003:hw:/nonexistent:/usr/sbin/nologin"
    } >> "$S/passwd"
    printf 'alice:x:61001:\nerin:x:61002:\nhw:x:61003:\n' >> "$S/group"
    printf 'passwd: files\ngroup: files\nshadow: files\n' \
        > "$S/nsswitch.conf"
    printf 'auth     required   pam_sss.so\naccount  required   pam_sss.so\n' \
        > "$S/pam.d/yk-sssd"
    cp "$YK_KRB5_CONF_STOCK" "$S/krb5.conf" || yk_fail "cp krb5.conf"
    # The namespace puts $S/tmp over /tmp, which hides $YK_TMP (under
    # /tmp unless TMPDIR says otherwise): the keytab goes into /etc/sssd.
    (umask 077; cp "$YK_KRB5_DIR/armor.keytab" "$S/etc/armor.keytab") ||
        yk_fail "cp armor.keytab"
    (umask 077; sssd_conf > "$S/etc/sssd.conf") || yk_fail "sssd.conf"
}

# The private sssd.conf (the admin guide's example, with test paths).
sssd_conf() {
    cat <<EOF
[sssd]
services = nss, pam
domains = yk

[nss]

[pam]

[domain/yk]
id_provider = proxy
proxy_lib_name = files
auth_provider = krb5
chpass_provider = none
cache_credentials = false
krb5_server = 127.0.0.1:$YK_KDC_PORT
krb5_realm = $R
krb5_use_fast = demand
krb5_fast_principal = host/armor.example.com@$R
krb5_keytab = /etc/sssd/armor.keytab
krb5_validate = false

[prompting/2fa]
first_prompt = Password:
second_prompt = YubiKey OTP:
EOF
}

# Start sssd -i in its namespace and wait for pam_sss's socket.
sssd_start() {
    local _
    # shellcheck disable=SC2016
    # The harness's KRB5_* variables name files under the private
    # $YK_TMP that krb5_child, running as the user, cannot read.
    env -u KRB5_CONFIG -u KRB5CCNAME -u KRB5_KDC_PROFILE -u KRB5RCACHEDIR \
        -u KRB5_TRACE unshare -m --propagation private bash -c '
        S=$1
        set -e
        mount --bind "$S/lib" /var/lib/sss
        mount --bind "$S/log" /var/log/sssd
        mount --bind "$S/etc" /etc/sssd
        mount --bind "$S/run" /run
        mount --bind "$S/pam.d" /etc/pam.d
        mount --bind "$S/passwd" /etc/passwd
        mount --bind "$S/group" /etc/group
        mount --bind "$S/nsswitch.conf" /etc/nsswitch.conf
        mount --bind "$S/krb5.conf" /etc/krb5.conf
        # Last: $S itself may live under /tmp.
        mount --bind "$S/tmp" /tmp
        exec /usr/sbin/sssd -i -c /etc/sssd/sssd.conf --logger=stderr \
            -d 0x3ff0' sssd-ns "$S" > "$S/sssd.out" 2>&1 &
    SSSD_PID=$!
    yk_register_pid "$SSSD_PID"
    for _ in $(seq 150); do
        kill -0 "$SSSD_PID" 2>/dev/null ||
            { tail -20 "$S/sssd.out" >&2; yk_fail "sssd exited at start"; }
        [ -S "$S/lib/pipes/pam" ] && return 0
        sleep 0.2
    done
    tail -20 "$S/sssd.out" >&2
    yk_fail "sssd did not open its PAM socket within 30 s"
}

# pam NAME FIRST SECOND: pamtester authenticate NAME through pam_sss in
# sssd's namespace, FIRST and SECOND typed at its two prompts; output in
# $S/pam.out.
pam() {
    printf '%s\n%s\n' "$2" "$3" | nsenter -t "$SSSD_PID" -m \
        pamtester -v yk-sssd "$1" authenticate > "$S/pam.out" 2>&1
}

sssd_check
sssd_files
sssd_start

# pam_sss asks both factors ([prompting/2fa] makes it ask before it
# knows the mechanism); krb5_child joins them: password||OTP.
otp=$(yk_otp "$YK_TMP/alice.tok")
pam alice alice-pw "$otp" ||
    { cat "$S/pam.out" >&2; yk_fail "sssd: alice's password + OTP refused"; }
grep -q 'Password:YubiKey OTP:' "$S/pam.out" ||
    { cat "$S/pam.out" >&2; yk_fail "pam_sss did not ask Password: then" \
        "YubiKey OTP:"; }
yk_expect_attempt alice "mode=2fa verdict=accepted"
ccs=("$S"/tmp/krb5cc_61001_*)
cc=${ccs[0]}
[ -f "$cc" ] || yk_fail "sssd stored no ccache for alice"
yk_expect_strong_tgt "alice (sssd)" "$cc" "$WEB"
yk_ok "sssd + pam_sss, policy 2fa: password and OTP -> TGT flagged H," \
    "$WEB issued"

refusals pam "$S/pam.out" "$otp"
grep -q 'Authentication failure' "$S/pam.out" ||
    { cat "$S/pam.out" >&2; yk_fail "sssd: the wrong password did not" \
        "end in Authentication failure"; }

# Policy otp: the OTP at the first prompt, the second left empty.
# krb5_child then answers libkrb5's "password" question if there is one,
# so only a +requires_hwauth principal (offered no password mechanism)
# reaches the OTP; erin, without it, fails on encrypted challenge.
pam hw "$(yk_otp "$YK_TMP/hw.tok")" "" ||
    { cat "$S/pam.out" >&2; yk_fail "sssd: hw (policy otp," \
        "+requires_hwauth): the OTP alone refused"; }
yk_expect_attempt hw "mode=otp verdict=accepted"
pam erin "$(yk_otp "$YK_TMP/erin.tok")" "" &&
    yk_fail "sssd: erin's OTP went through without +requires_hwauth"
[ "$(yk_kdc_attempts "erin@$R" | wc -l)" -eq "$(yk_attempts_made erin)" ] ||
    yk_fail "sssd: erin's OTP reached the module (expected encrypted" \
        "challenge)"
grep -q "PREAUTH_FAILED: erin@$R .*encrypted challenge" "$YK_KDC_LOG" ||
    yk_fail "sssd: erin's attempt was not an encrypted challenge"
yk_ok "sssd, policy otp: the OTP alone -> TGT with +requires_hwauth;" \
    "without it SSSD sends it as a password (refused)"

kill -0 "$YK_KDC_PID" 2>/dev/null || yk_fail "the KDC died"
echo "PASS: sssd.sh"
exit 0
