#!/bin/bash
# ssh.sh: ssh to a signing host with the YubiKey ticket, and elevated
# principals (alice for everyday, alice/sign for signing).
#
# A DB2 realm (realm.sh) and a throwaway sshd on 127.0.0.1 (its own
# config, host key and host keytab in the temp dir; GSSAPI only, no
# password, no keys) whose host principal host/localhost carries
# require_auth yubikey-2fa: the KDC issues a ticket for it only from a
# TGT obtained with the YubiKey.  The login account is the test's own
# (root), whose k5login (krb5.conf k5login_directory, in the temp dir,
# read by this sshd only) lists alice/sign@REALM: the one identity that
# may sign.
#   alice/sign   +requires_hwauth, a token (policy 2fa): a password-only
#                kinit gets no TGT; with password + OTP: TGT flagged H,
#                ssh -K logs in (sshd: "Accepted gssapi-with-mic ...
#                alice/sign")
#   alice        password only: a TGT, but the KDC refuses the ticket for
#                the signing host (require_auth): ssh refused, no
#                fallback to a password
#   bob          password + OTP but not in the k5login: the ticket is
#                issued, sshd refuses the identity (krb5_kuserok)
# Exit 0 pass, 1 fail, 77 skip (announced: not root, no openssh-server).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"

R=$YK_REALM
SSHD=/usr/sbin/sshd
yk_init
yk_realm_check_tools
[ -x "$SSHD" ] || yk_skip "openssh-server is not installed (tools/packages)"
command -v ssh > /dev/null ||
    yk_skip "openssh-client is not installed (tools/packages)"
[ "$(id -u)" = 0 ] ||
    yk_skip "sshd must run as root to log a user in (privilege separation)"
ME=$(id -un)

yk_realm_setup
yk_realm_addprinc alice alice-pw
yk_realm_addprinc alice/sign sign-pw +requires_hwauth
yk_realm_enroll alice/sign "$YK_TMP/sign.tok"
yk_realm_addprinc bob bob-pw
yk_realm_enroll bob "$YK_TMP/bob.tok"
yk_realm_service host/localhost yubikey-2fa
yk_kdc_start

# --- the signing host's sshd ---------------------------------------------
S=$YK_TMP/sshd
mkdir -p "$S/k5login" || yk_fail "mkdir $S"
ssh-keygen -q -t ed25519 -N '' -f "$S/hostkey" || yk_fail "ssh-keygen"
kadmin.local -r "$R" ktadd -k "$S/host.keytab" host/localhost \
    > "$YK_TMP/ktadd.out" 2>&1 ||
    { cat "$YK_TMP/ktadd.out" >&2; yk_fail "ktadd host/localhost"; }
printf '%s\n' "alice/sign@$R" > "$S/k5login/$ME"
# sshd's krb5.conf: the plain client's, plus where the k5login files are.
sed "s|^\[libdefaults\]\$|[libdefaults]\n k5login_directory = $S/k5login|" \
    "$YK_KRB5_CONF_PLAIN" > "$S/krb5.conf"
grep -q "k5login_directory = $S/k5login" "$S/krb5.conf" ||
    yk_fail "no k5login_directory in sshd's krb5.conf"
mkdir -p /run/sshd   # sshd's privilege separation directory
SPORT=$(yk_realm_free_port) || yk_fail "no free port"
cat > "$S/sshd_config" <<EOF
ListenAddress 127.0.0.1:$SPORT
HostKey $S/hostkey
PidFile $S/sshd.pid
AuthorizedKeysFile none
PubkeyAuthentication no
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin yes
GSSAPIAuthentication yes
GSSAPIStrictAcceptorCheck no
AuthenticationMethods gssapi-with-mic
LogLevel VERBOSE
EOF
"$SSHD" -t -f "$S/sshd_config" > "$S/check.out" 2>&1 ||
    { cat "$S/check.out" >&2; yk_fail "sshd -t refuses the config"; }
KRB5_CONFIG=$S/krb5.conf KRB5_KTNAME=FILE:$S/host.keytab \
    KRB5RCACHEDIR=$S "$SSHD" -D -e -f "$S/sshd_config" \
    > "$S/sshd.log" 2>&1 &
yk_register_pid $!
for _ in $(seq 50); do
    yk_port_busy "$SPORT" && break
    sleep 0.1
done
yk_port_busy "$SPORT" || { cat "$S/sshd.log" >&2; yk_fail "sshd did not start"; }
echo "sshd on 127.0.0.1:$SPORT (config $S/sshd_config), host/localhost" \
    "require_auth yubikey-2fa"

# ssh_as CCACHE: ssh with that ccache to the signing host, GSSAPI only;
# prints what the remote command printed; output in $YK_TMP/ssh.out.
ssh_as() {
    KRB5CCNAME=FILE:$1 KRB5_CONFIG=$YK_KRB5_CONF_PLAIN ssh -F none \
        -p "$SPORT" -o BatchMode=yes -o GSSAPIAuthentication=yes \
        -o GSSAPIDelegateCredentials=no \
        -o PreferredAuthentications=gssapi-with-mic \
        -o StrictHostKeyChecking=no -o UserKnownHostsFile="$S/known_hosts" \
        -o ConnectTimeout=10 "$ME@localhost" 'echo "signed in as $(id -un)"' \
        > "$YK_TMP/ssh.out" 2>&1
}

# --- alice/sign: never without the token ---------------------------------
SIGN_CC=$YK_TMP/sign.cc ALICE_CC=$YK_TMP/alice.cc BOB_CC=$YK_TMP/bob.cc
printf '%s\n' sign-pw | KRB5CCNAME=FILE:$SIGN_CC KRB5_CONFIG=$YK_KRB5_CONF_PLAIN \
    yk_kinit "alice/sign@$R" &&
    yk_fail "alice/sign got a TGT with the password alone"
printf '%s\n' sign-pw | KRB5CCNAME=FILE:$SIGN_CC yk_kinit "alice/sign@$R" &&
    yk_fail "alice/sign got a TGT without an OTP (our client module)"
printf '%s\n%s\n' sign-pw "$(yk_otp "$YK_TMP/sign.tok")" |
    KRB5CCNAME=FILE:$SIGN_CC yk_kinit "alice/sign@$R" ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "alice/sign: kinit with the OTP"; }
yk_expect_attempt alice/sign "verdict=accepted"
yk_tgt_flags "FILE:$SIGN_CC" | grep -q H ||
    yk_fail "alice/sign's TGT is not flagged H"
ssh_as "$SIGN_CC" ||
    { cat "$YK_TMP/ssh.out" >&2; tail -5 "$S/sshd.log" >&2;
      yk_fail "alice/sign: ssh to the signing host refused"; }
grep -qx "signed in as $ME" "$YK_TMP/ssh.out" ||
    { cat "$YK_TMP/ssh.out" >&2; yk_fail "alice/sign: no remote command"; }
grep -q "Accepted gssapi-with-mic for $ME from 127.0.0.1" "$S/sshd.log" &&
    grep -q "Authorized to $ME, krb5 principal alice/sign@$R" "$S/sshd.log" ||
    { cat "$S/sshd.log" >&2; yk_fail "sshd does not log alice/sign's login"; }
yk_ok "alice/sign: no TGT from the password alone (requires_hwauth); with" \
    "the OTP a TGT flagged H, and ssh -K to the signing host logs in" \
    "(sshd: accepted gssapi-with-mic, principal alice/sign)"

# --- alice: her everyday ticket opens nothing here -----------------------
printf '%s\n' alice-pw | KRB5CCNAME=FILE:$ALICE_CC yk_kinit "alice@$R" ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "alice: kinit"; }
ssh_as "$ALICE_CC" &&
    { cat "$YK_TMP/ssh.out" >&2; yk_fail "alice's password ticket logged in"; }
grep -q "Permission denied (gssapi-with-mic)" "$YK_TMP/ssh.out" ||
    { cat "$YK_TMP/ssh.out" >&2; yk_fail "alice: not refused by sshd"; }
grep -q "HIGHER_AUTHENTICATION_REQUIRED: .* alice@$R for host/localhost@$R, Required auth indicators not present in ticket: yubikey-2fa" \
    "$YK_KDC_LOG" ||
    { grep TGS_REQ "$YK_KDC_LOG" | tail -3 >&2;
      yk_fail "alice: the KDC log has no refused ticket for the signing host"; }
! grep -q "ISSUE: .* alice@$R for host/localhost@$R" "$YK_KDC_LOG" ||
    yk_fail "alice: the KDC issued her a ticket for the signing host"
yk_ok "alice (password): ssh to the signing host refused, no password" \
    "fallback; the KDC refused her ticket for host/localhost (require_auth)"

# --- bob: the YubiKey, but not an identity the host lets in --------------
printf '%s\n%s\n' bob-pw "$(yk_otp "$YK_TMP/bob.tok")" |
    KRB5CCNAME=FILE:$BOB_CC yk_kinit "bob@$R" ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "bob: kinit with the OTP"; }
ssh_as "$BOB_CC" &&
    { cat "$YK_TMP/ssh.out" >&2; yk_fail "bob logged in (not in the k5login)"; }
KRB5CCNAME=FILE:$BOB_CC klist 2>/dev/null | grep -q "host/localhost@$R" ||
    yk_fail "bob: the KDC issued no ticket for the signing host"
grep -q "^Failed gssapi-with-mic for $ME from 127.0.0.1" "$S/sshd.log" ||
    { tail -5 "$S/sshd.log" >&2; yk_fail "bob: sshd logs no refusal"; }
yk_ok "bob (password + OTP, not in the k5login): the ticket issued, sshd" \
    "refuses the identity"
echo "PASS: ssh.sh"
exit 0
