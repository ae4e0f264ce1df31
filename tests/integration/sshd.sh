# SPDX-License-Identifier: MIT
# sshd.sh: a throwaway sshd with GSSAPI only (realm.sh).
#
# Source it after realm.sh, then (after yk_realm_setup, as root):
#   yk_sshd_check            skip (loudly) without openssh-server and
#                            -client, or when not root
#   yk_sshd_start PRINCIPAL...
#                            host/localhost's keytab, a host key, a
#                            config of its own (never the host's):
#                            GSSAPI only, no password, no keys; the
#                            account of this test (YK_SSH_ACCOUNT, the
#                            user running it) may be logged in to by the
#                            PRINCIPALs given (its k5login, in a
#                            directory named by k5login_directory in
#                            sshd's own krb5.conf); started on a free
#                            127.0.0.1 port.  YK_SSHD_LOG is its log.
#                            host/localhost must exist (with the
#                            require_auth the test wants).
#   yk_ssh_as CCACHE         ssh with that ccache to the account on the
#                            host, GSSAPI only, running 'echo "signed in
#                            as $(id -un)"'; ssh's output in YK_SSH_OUT;
#                            returns ssh's status
# Everything lives in $YK_TMP/sshd; lib.sh's trap stops sshd by PID.

YK_SSHD_BIN=${YK_SSHD_BIN:-/usr/sbin/sshd}
YK_SSHD_DIR=
YK_SSHD_LOG=
YK_SSHD_PORT=
YK_SSH_OUT=
YK_SSH_ACCOUNT=$(id -un)

yk_sshd_check() {
    [ -x "$YK_SSHD_BIN" ] ||
        yk_skip "openssh-server is not installed (tools/packages)"
    command -v ssh > /dev/null ||
        yk_skip "openssh-client is not installed (tools/packages)"
    [ "$(id -u)" = 0 ] ||
        yk_skip "sshd must run as root to log a user in (privilege" \
            "separation)"
}

yk_sshd_start() {
    local s=$YK_TMP/sshd p _
    YK_SSHD_DIR=$s
    YK_SSHD_LOG=$s/sshd.log
    YK_SSH_OUT=$YK_TMP/ssh.out
    mkdir -p "$s/k5login" || yk_fail "mkdir $s"
    ssh-keygen -q -t ed25519 -N '' -f "$s/hostkey" || yk_fail "ssh-keygen"
    kadmin.local -r "$YK_REALM" ktadd -k "$s/host.keytab" host/localhost \
        > "$s/ktadd.out" 2>&1 ||
        { cat "$s/ktadd.out" >&2; yk_fail "ktadd host/localhost"; }
    for p in "$@"; do
        printf '%s\n' "$p"
    done > "$s/k5login/$YK_SSH_ACCOUNT"
    # sshd's krb5.conf: the plain client's, and where k5login files are.
    sed "s|^\[libdefaults\]\$|[libdefaults]\n k5login_directory = $s/k5login|" \
        "$YK_KRB5_CONF_PLAIN" > "$s/krb5.conf"
    grep -q "k5login_directory = $s/k5login" "$s/krb5.conf" ||
        yk_fail "no k5login_directory in sshd's krb5.conf"
    mkdir -p /run/sshd   # sshd's privilege separation directory
    YK_SSHD_PORT=$(yk_realm_free_port) || yk_fail "no free port"
    cat > "$s/sshd_config" <<EOF
ListenAddress 127.0.0.1:$YK_SSHD_PORT
HostKey $s/hostkey
PidFile $s/sshd.pid
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
    "$YK_SSHD_BIN" -t -f "$s/sshd_config" > "$s/check.out" 2>&1 ||
        { cat "$s/check.out" >&2; yk_fail "sshd -t refuses the config"; }
    KRB5_CONFIG=$s/krb5.conf KRB5_KTNAME=FILE:$s/host.keytab \
        KRB5RCACHEDIR=$s "$YK_SSHD_BIN" -D -e -f "$s/sshd_config" \
        > "$YK_SSHD_LOG" 2>&1 &
    yk_register_pid $!
    for _ in $(seq 50); do
        yk_port_busy "$YK_SSHD_PORT" && return 0
        sleep 0.1
    done
    cat "$YK_SSHD_LOG" >&2
    yk_fail "sshd did not start"
}

yk_ssh_as() {
    KRB5CCNAME=FILE:$1 KRB5_CONFIG=$YK_KRB5_CONF_PLAIN ssh -F none \
        -p "$YK_SSHD_PORT" -o BatchMode=yes -o GSSAPIAuthentication=yes \
        -o GSSAPIDelegateCredentials=no \
        -o PreferredAuthentications=gssapi-with-mic \
        -o StrictHostKeyChecking=no \
        -o UserKnownHostsFile="$YK_SSHD_DIR/known_hosts" \
        -o ConnectTimeout=10 "$YK_SSH_ACCOUNT@localhost" \
        'echo "signed in as $(id -un)"' > "$YK_SSH_OUT" 2>&1
}
