#!/bin/bash
# SPDX-License-Identifier: MIT
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
# shellcheck source=sshd.sh
. "$srcdir/tests/integration/sshd.sh"

R=$YK_REALM
yk_init
yk_realm_check_tools
yk_sshd_check
ME=$YK_SSH_ACCOUNT

yk_realm_setup
yk_realm_addprinc alice alice-pw
yk_realm_addprinc alice/sign sign-pw +requires_hwauth
yk_realm_enroll alice/sign "$YK_TMP/sign.tok"
yk_realm_addprinc bob bob-pw
yk_realm_enroll bob "$YK_TMP/bob.tok"
yk_realm_service host/localhost yubikey-2fa
yk_kdc_start

yk_sshd_start "alice/sign@$R"
echo "sshd on 127.0.0.1:$YK_SSHD_PORT (config $YK_SSHD_DIR/sshd_config)," \
    "host/localhost require_auth yubikey-2fa"

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
yk_ssh_as "$SIGN_CC" ||
    { cat "$YK_SSH_OUT" >&2; tail -5 "$YK_SSHD_LOG" >&2;
      yk_fail "alice/sign: ssh to the signing host refused"; }
grep -qx "signed in as $ME" "$YK_SSH_OUT" ||
    { cat "$YK_SSH_OUT" >&2; yk_fail "alice/sign: no remote command"; }
grep -q "Accepted gssapi-with-mic for $ME from 127.0.0.1" "$YK_SSHD_LOG" &&
    grep -q "Authorized to $ME, krb5 principal alice/sign@$R" "$YK_SSHD_LOG" ||
    { cat "$YK_SSHD_LOG" >&2; yk_fail "sshd does not log alice/sign's login"; }
yk_ok "alice/sign: no TGT from the password alone (requires_hwauth); with" \
    "the OTP a TGT flagged H, and ssh -K to the signing host logs in" \
    "(sshd: accepted gssapi-with-mic, principal alice/sign)"

# --- alice: her everyday ticket opens nothing here -----------------------
printf '%s\n' alice-pw | KRB5CCNAME=FILE:$ALICE_CC yk_kinit "alice@$R" ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "alice: kinit"; }
yk_ssh_as "$ALICE_CC" &&
    { cat "$YK_SSH_OUT" >&2; yk_fail "alice's password ticket logged in"; }
grep -q "Permission denied (gssapi-with-mic)" "$YK_SSH_OUT" ||
    { cat "$YK_SSH_OUT" >&2; yk_fail "alice: not refused by sshd"; }
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
yk_ssh_as "$BOB_CC" &&
    { cat "$YK_SSH_OUT" >&2; yk_fail "bob logged in (not in the k5login)"; }
KRB5CCNAME=FILE:$BOB_CC klist 2>/dev/null | grep -q "host/localhost@$R" ||
    yk_fail "bob: the KDC issued no ticket for the signing host"
grep -q "^Failed gssapi-with-mic for $ME from 127.0.0.1" "$YK_SSHD_LOG" ||
    { tail -5 "$YK_SSHD_LOG" >&2; yk_fail "bob: sshd logs no refusal"; }
yk_ok "bob (password + OTP, not in the k5login): the ticket issued, sshd" \
    "refuses the identity"
echo "PASS: ssh.sh"
exit 0
