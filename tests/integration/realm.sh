# SPDX-License-Identifier: MIT
# realm.sh: a throwaway DB2 realm whose token directory is lib.sh's slapd.
#
# Source it from a bash test (it sources lib.sh itself), then:
#   yk_realm_setup           temp dir, slapd (lib.sh), kdc.conf, krb5.conf,
#                            the KDC database, the master keyring
#   yk_realm_kdb_create      (part of yk_realm_setup, for a test that
#                            writes its own kdc.conf and YK_KRB5_CONF)
#                            the KRB5_* variables, the DB2 database
#   yk_realm_addprinc NAME PW [ADDPRINC OPTIONS...]
#                            a principal (kadmin.local) and its entry in
#                            the token directory; PW "-" = -randkey
#   yk_realm_service NAME [REQUIRE_AUTH]
#                            a service principal (random key), with the
#                            require_auth string attribute when given
#   yk_realm_enroll NAME FILE
#                            enrol an emulated token for NAME@REALM with
#                            ykadmin; the state goes to FILE
#   yk_otp FILE              print the token's next OTP (ykemu)
#   yk_emu_last_counter FILE the counter of the last OTP it printed
#   yk_ykadmin ARGS...       ykadmin as the directory's token administrator
#   yk_kdc_start / yk_kdc_stop
#   yk_kinit PRINC [KINIT OPTIONS...] < INPUT
#                            kinit reading the password (and OTP) lines
#                            from standard input; output in
#                            $YK_TMP/kinit.out, returns kinit's status
#   yk_kdc_attempts PRINC [LOG]
#                            the module's log lines for PRINC, in order
#                            (in LOG: default the KDC's, $YK_KDC_LOG)
#   yk_tgt_flags [CCACHE]    the flags of the ccache's TGT (klist -f)
#   yk_expect_strong_tgt WHO CCACHE SERVICE
#                            fail unless the TGT is flagged H and gets a
#                            ticket for SERVICE (require_auth yubikey-2fa)
#   yk_armor_ccache FILE     a FAST armor ccache from a host keytab
#   yk_realm_pkinit_setup    anonymous PKINIT (after yk_realm_setup, before
#                            yk_kdc_start): a throwaway CA and KDC
#                            certificate, the KDC's pkinit relations,
#                            pkinit_anchors for every client krb5.conf,
#                            WELLKNOWN/ANONYMOUS; skips without
#                            krb5-pkinit or openssl
#   yk_anon_armor_ccache FILE
#                            a FAST armor ccache from anonymous PKINIT
#                            (kinit -n), with the current KRB5_CONFIG
#   yk_stock_client ANON HOST
#                            from here on a stock host's krb5.conf
#                            (KRB5_CONFIG=$YK_KRB5_CONF_STOCK), and armor
#                            ccaches from anonymous PKINIT and a host keytab
#   yk_stock_kinit NAME ARMOR VALUE
#                            stock kinit -T ARMOR, VALUE typed at its one
#                            RFC 6560 prompt; returns kinit's status
#   yk_kdc2_start / yk_kdc2_stop
#                            a second krb5kdc on the same database and
#                            slapd (own port, kdc2.conf, kdc2.log), and
#                            YK_KRB5_CONF_KDC2: a password-only krb5.conf
#                            naming only it; YK_KDC2_SED (sed commands)
#                            edits its kdc.conf further, e.g. to read
#                            from another LDAP server
#
# Variables: YK_REALM, YK_KDC_PORT, YK_KDC_PID, YK_KDC_LOG, YK_KRB5_DIR,
# YK_KRB5_CONF (with our client module), YK_KRB5_CONF_PLAIN (without it:
# a password-only client), YK_KRB5_CONF_STOCK (a stock host's krb5.conf:
# nothing of this project, not even preferred_preauth_types), YK_PKI_DIR
# (after yk_realm_pkinit_setup: ca.pem, kdc.pem, kdckey.pem).  Knobs
# (before yk_realm_setup): YK_CACHE_TTL, YK_BREAKER_TIME, YK_KDC_EXTRA
# (more relations for the realm section of kdc.conf, one per line),
# YK_KDC_PREAUTH_EXTRA (more relations for [plugins] kdcpreauth, e.g.
# "disable = otp"), YK_KDC_CONF_EXTRA (more sections at the end of
# kdc.conf, e.g. [otp]; rewrite with yk_realm_write_config);
# YK_KDC_WRAPPER (a command line krb5kdc runs under, yk_kdc2_start's
# too, e.g. "valgrind -q --error-exitcode=9"); YK_KDC_UDP_PORT (the
# KDC's UDP port, default its TCP port: another port makes a client's UDP
# try after a DISCARD fail at once, as for yk_kdc2_start).  Everything
# lives in $YK_TMP; lib.sh's trap stops every process by PID and removes
# it.

YK_REALM_SRCDIR=${top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." &&
    pwd)}
# shellcheck source=lib.sh
. "$YK_REALM_SRCDIR/tests/integration/lib.sh"

YK_KDC_PORT=
YK_KDC_PID=
YK_KRB5_DIR=
YK_KDC_LOG=
YK_KRB5_CONF=
YK_KRB5_CONF_PLAIN=
YK_KRB5_CONF_STOCK=
YK_PKI_DIR=
YK_KDC_MODULE=$YK_BUILDDIR/.libs/yubikey_kdc.so
YK_CLIENT_MODULE=$YK_BUILDDIR/.libs/yubikey_client.so
YK_YKADMIN_BIN=$YK_BUILDDIR/ykadmin
YK_YKEMU_BIN=$YK_BUILDDIR/emu/ykemu
YK_DB_PASSWORD=x

# Check for the Kerberos programs (else skip) and our built files (else
# fail: "make check" builds them first).
yk_realm_check_tools() {
    local tool f
    PATH=$PATH:/usr/sbin
    for tool in kdb5_util kadmin.local krb5kdc kinit klist kvno kdestroy; do
        command -v "$tool" >/dev/null 2>&1 ||
            yk_skip "$tool not found (apt-get install krb5-kdc" \
                "krb5-admin-server krb5-user)"
    done
    for f in "$YK_KDC_MODULE" "$YK_CLIENT_MODULE" "$YK_YKADMIN_BIN" \
             "$YK_YKEMU_BIN"; do
        [ -e "$f" ] || yk_fail "$f is not built (run make first)"
    done
}

# A free TCP port on 127.0.0.1 for the KDC (not slapd's), below Linux's
# ephemeral range so that no client connection holds it meanwhile.
yk_realm_free_port() {
    local port _
    for _ in $(seq 50); do
        port=$(yk_random_port)
        [ "$port" = "$YK_SLAPD_PORT" ] && continue
        yk_port_busy "$port" || { echo "$port"; return 0; }
    done
    return 1
}

# Anonymous PKINIT, for FAST armor that any user can get (kinit -n).
#
# yk_realm_pkinit_setup makes, with openssl, in $YK_PKI_DIR:
#   ca.pem, cakey.pem    a throwaway CA (basicConstraints CA:TRUE)
#   kdc.pem, kdckey.pem  the KDC's certificate, signed by it, with the EKU
#                        id-pkinit-KPKdc (1.3.6.1.5.2.3.5) and the SAN
#                        id-pkinit-san (1.3.6.1.5.2.2) holding the
#                        KRB5PrincipalName krbtgt/REALM@REALM (what MIT's
#                        client checks by default); see pki.cnf there
# and adds the principal WELLKNOWN/ANONYMOUS (-randkey; no LDAP entry).
# Then these relations go into the realm's section:
#   kdc.conf   pkinit_identity = FILE:kdc.pem,kdckey.pem
#              pkinit_anchors = FILE:ca.pem
#              restrict_anonymous_to_tgt = true
#   krb5.conf  pkinit_anchors = FILE:ca.pem   (every client conf, stock
#              included)
# Nothing else: Debian's krb5-pkinit installs pkinit.so in libkrb5's own
# plugin directory, which krb5kdc and kinit load without a [plugins]
# line (our "module = yubikey:..." adds a module, it replaces none).
# restrict_anonymous_to_tgt is not needed for armor (an armor TGT is
# used in the AS exchange, never for a service ticket); it keeps
# anonymous users from getting service tickets, as a real realm would.
# The client matches the SAN and then skips the EKU check (its trace:
# "no EKU check required"); the EKU counts for a certificate matched by
# pkinit_kdc_hostname instead.  With krb5-pkinit installed, a KDC
# without pkinit_identity logs "preauth pkinit failed to initialize" at
# start and runs on without PKINIT.

# The PKINIT relations of the realm section of kdc.conf: none before
# yk_realm_pkinit_setup.
yk_pkinit_kdc_relations() {
    [ -n "$YK_PKI_DIR" ] || return 0
    cat <<EOF
  pkinit_identity = FILE:$YK_PKI_DIR/kdc.pem,$YK_PKI_DIR/kdckey.pem
  pkinit_anchors = FILE:$YK_PKI_DIR/ca.pem
  restrict_anonymous_to_tgt = true
EOF
}

# The PKINIT relation of the realm section of a client's krb5.conf: none
# before yk_realm_pkinit_setup.
yk_pkinit_client_relations() {
    [ -n "$YK_PKI_DIR" ] || return 0
    echo "  pkinit_anchors = FILE:$YK_PKI_DIR/ca.pem"
}

# The [realms] section of the clients' krb5.conf files.
yk_realm_client_realms() {
    cat <<EOF
[realms]
 $YK_REALM = {
  kdc = 127.0.0.1:$YK_KDC_PORT
$(yk_pkinit_client_relations)
 }
EOF
}

# Write kdc.conf, krb5.conf (with our client module), krb5-plain.conf
# (without it) and krb5-stock.conf (a stock Debian host's: no line of
# this project; Debian's [libdefaults] and the realm's kdc).
yk_realm_write_config() {
    local d=$YK_KRB5_DIR
    cat > "$d/kdc.conf" <<EOF
[kdcdefaults]
 kdc_listen = 127.0.0.1:${YK_KDC_UDP_PORT:-$YK_KDC_PORT}
 kdc_tcp_listen = 127.0.0.1:$YK_KDC_PORT

[realms]
 $YK_REALM = {
  database_name = $d/principal
  key_stash_file = $d/stash
  acl_file = $d/kadm5.acl
  kdc_listen = 127.0.0.1:${YK_KDC_UDP_PORT:-$YK_KDC_PORT}
  kdc_tcp_listen = 127.0.0.1:$YK_KDC_PORT
  default_principal_flags = +preauth
  yubikey_ldap_uri = $YK_LDAP_URI
  yubikey_ldap_bind_dn = $YK_KDC_DN
  yubikey_ldap_password_file = $d/kdc.pw
  yubikey_ldap_base = $YK_LDAP_BASE
  yubikey_master_key_file = $d/master.keyring
  yubikey_cache_ttl = ${YK_CACHE_TTL:-5}
  yubikey_breaker_time = ${YK_BREAKER_TIME:-10}
$(yk_pkinit_kdc_relations)
${YK_KDC_EXTRA:-}
 }

[plugins]
 kdcpreauth = {
  module = yubikey:$YK_KDC_MODULE
${YK_KDC_PREAUTH_EXTRA:-}
 }

[logging]
 kdc = FILE:$YK_KDC_LOG
 admin_server = FILE:$d/kadmin.log
 default = FILE:$d/krb5.log
${YK_KDC_CONF_EXTRA:-}
EOF
    {
        cat <<EOF
[libdefaults]
 default_realm = $YK_REALM
 dns_lookup_kdc = false
 dns_lookup_realm = false
 rdns = false
 udp_preference_limit = 1
 preferred_preauth_types = -22859, 138, 2

EOF
        yk_realm_client_realms
    } > "$YK_KRB5_CONF_PLAIN"
    {
        # Debian's [libdefaults], but no DNS: the test realm is not in it
        # (else libkrb5 asks DNS for the primary KDC after every reply).
        cat <<EOF
[libdefaults]
 default_realm = $YK_REALM
 dns_lookup_kdc = false
 kdc_timesync = 1
 ccache_type = 4
 forwardable = true
 proxiable = true
 rdns = false

EOF
        yk_realm_client_realms
    } > "$YK_KRB5_CONF_STOCK"
    {
        cat "$YK_KRB5_CONF_PLAIN"
        cat <<EOF

[plugins]
 clpreauth = {
  module = yubikey:$YK_CLIENT_MODULE
 }
EOF
    } > "$YK_KRB5_CONF"
}

# Point the Kerberos programs at the realm's files in YK_KRB5_DIR
# (kdc.conf, YK_KRB5_CONF, an empty kadm5.acl, the ccache) and create
# its DB2 database with a stash file.
yk_realm_kdb_create() {
    : > "$YK_KRB5_DIR/kadm5.acl"
    export KRB5_CONFIG=$YK_KRB5_CONF
    export KRB5_KDC_PROFILE=$YK_KRB5_DIR/kdc.conf
    export KRB5CCNAME=FILE:$YK_KRB5_DIR/ccache
    export KRB5RCACHEDIR=$YK_KRB5_DIR
    unset KRB5_CLIENT_KTNAME KRB5_KTNAME KRB5_TRACE

    kdb5_util -r "$YK_REALM" create -s -P "$YK_DB_PASSWORD" \
        > "$YK_KRB5_DIR/kdb5_util.log" 2>&1 ||
        { cat "$YK_KRB5_DIR/kdb5_util.log" >&2;
          yk_fail "kdb5_util create failed"; }
}

# The whole realm: slapd started, the KDC configured (not started), its
# database and the master keyring made.
yk_realm_setup() {
    [ -n "$YK_TMP" ] || yk_init
    yk_realm_check_tools
    [ -n "$YK_SLAPD_PID" ] || { yk_slapd_setup; yk_slapd_start; }

    YK_KRB5_DIR=$YK_TMP/krb5
    YK_KDC_LOG=$YK_KRB5_DIR/kdc.log
    YK_KRB5_CONF=$YK_KRB5_DIR/krb5.conf
    YK_KRB5_CONF_PLAIN=$YK_KRB5_DIR/krb5-plain.conf
    YK_KRB5_CONF_STOCK=$YK_KRB5_DIR/krb5-stock.conf
    mkdir -p "$YK_KRB5_DIR" || yk_fail "mkdir $YK_KRB5_DIR"
    YK_KDC_PORT=$(yk_realm_free_port) || yk_fail "no free port"
    (umask 077; printf '%s\n' "$YK_KDC_PW" > "$YK_KRB5_DIR/kdc.pw";
     printf '%s\n' "$YK_YKADMIN_PW" > "$YK_KRB5_DIR/ykadmin.pw")
    yk_realm_write_config
    yk_realm_kdb_create
    yk_ykadmin init-master-key > "$YK_KRB5_DIR/ykadmin.log" 2>&1 ||
        { cat "$YK_KRB5_DIR/ykadmin.log" >&2;
          yk_fail "ykadmin init-master-key failed"; }
}

# ykadmin bound as the token administrator (a member of the admin group);
# the rest comes from kdc.conf (KRB5_KDC_PROFILE).
yk_ykadmin() {
    "$YK_YKADMIN_BIN" -r "$YK_REALM" --bind-dn "$YK_YKADMIN_DN" \
        --password-file "$YK_KRB5_DIR/ykadmin.pw" "$@"
}

# A principal NAME@REALM with password PW ("-" for a random key) and the
# given addprinc options, plus its entry in the token directory.
yk_realm_addprinc() {
    local name=$1 pw=$2
    shift 2
    if [ "$pw" = - ]; then
        set -- -randkey "$@"
    else
        set -- -pw "$pw" "$@"
    fi
    kadmin.local -r "$YK_REALM" addprinc "$@" "$name" \
        > "$YK_KRB5_DIR/kadmin.out" 2>&1 ||
        { cat "$YK_KRB5_DIR/kadmin.out" >&2;
          yk_fail "kadmin.local addprinc $name failed"; }
    yk_ldap_add_principal "$name" "$YK_REALM"
}

# A service principal with a random key (only the KDC needs it: kvno
# fetches tickets), with require_auth set when REQUIRE_AUTH is given.
yk_realm_service() {
    local name=$1 req=${2:-}
    kadmin.local -r "$YK_REALM" addprinc -randkey "$name" \
        > "$YK_KRB5_DIR/kadmin.out" 2>&1 ||
        { cat "$YK_KRB5_DIR/kadmin.out" >&2;
          yk_fail "kadmin.local addprinc $name failed"; }
    if [ -n "$req" ]; then
        kadmin.local -r "$YK_REALM" setstr "$name" require_auth "$req" \
            > "$YK_KRB5_DIR/kadmin.out" 2>&1 ||
            { cat "$YK_KRB5_DIR/kadmin.out" >&2;
              yk_fail "kadmin.local setstr $name require_auth failed"; }
    fi
}

# Enrol an emulated token for NAME@REALM; its state (AES key included)
# goes to FILE.  Prints nothing; the public id is "$YK_YKEMU_BIN
# --public-id FILE".
yk_realm_enroll() {
    yk_ykadmin enroll "$1@$YK_REALM" --emulate "$2" \
        >> "$YK_KRB5_DIR/ykadmin.log" 2>&1 ||
        { tail -5 "$YK_KRB5_DIR/ykadmin.log" >&2;
          yk_fail "ykadmin enroll $1 failed"; }
}

# yk_realm_load_principals N PREFIX: N principals PREFIX001.. with a
# random password, an emulated token each and policy otp (both modes),
# listed in $YK_TMP/principals (mode 600) as bench/ykbench reads them:
# "NAME@REALM PASSWORD TOKEN-FILE" (bench/run, tools/soak,
# tools/syscount).
yk_realm_load_principals() {
    local i name pw
    : > "$YK_TMP/principals"
    chmod 600 "$YK_TMP/principals"
    for i in $(seq "$1"); do
        name=$(printf '%s%03d' "$2" "$i")
        pw="pw-$i-$RANDOM$RANDOM"
        yk_realm_addprinc "$name" "$pw"
        yk_realm_enroll "$name" "$YK_TMP/$name.tok"
        yk_ykadmin policy "$name@$YK_REALM" otp \
            >> "$YK_KRB5_DIR/ykadmin.log" 2>&1 ||
            yk_fail "ykadmin policy $name otp failed"
        echo "$name@$YK_REALM $pw $YK_TMP/$name.tok" >> "$YK_TMP/principals"
    done
}

# The next OTP of the emulated token in FILE.
yk_otp() {
    "$YK_YKEMU_BIN" "$1" || yk_fail "ykemu $1 failed"
}

# The counter of the last OTP the emulated token in FILE made (its usage
# counter and next session counter are in its state file).
yk_emu_last_counter() {
    local usage session
    usage=$(sed -n 's/^usage //p' "$1")
    session=$(sed -n 's/^session //p' "$1")
    echo $(((usage << 8) | (session - 1)))
}

# The counter in NAME's one stored state value (as the administrator
# reads it).
yk_stored_counter() {
    local v
    v=$(yk_ldapsearch_as "$YK_ADMIN_DN" "$YK_ADMIN_PW" \
        -b "uid=$1,$YK_PEOPLE_DN" -s base yubikeyTokenState |
        sed -n 's/^yubikeyTokenState: //p')
    [ "$(printf '%s\n' "$v" | grep -c .)" -eq 1 ] ||
        yk_fail "$1: not exactly one state value: $v"
    printf '%s\n' "$v" | sed -n 's/.* ctr=\([0-9]*\) .*/\1/p'
}

# How many times the KDC log says it started.
yk_kdc_starts() {
    local n
    n=$(grep -c 'commencing operation' "$YK_KDC_LOG" 2>/dev/null)
    echo "${n:-0}"
}

# How many times the KDC log says its port was taken.
yk_kdc_port_clashes() {
    local n
    n=$(grep -c 'Address already in use' "$YK_KDC_LOG" 2>/dev/null)
    echo "${n:-0}"
}

# Start krb5kdc in the foreground (-n) in the background, wait until its
# log says "commencing operation" (a fresh line), fail if it dies.  When
# another process took the port meanwhile, move the realm to a new port
# (kdc.conf and both krb5.conf files) and try again.  Arguments go to
# krb5kdc (e.g. -w 2).
yk_kdc_start() {
    local before clashes try _
    for try in 1 2 3 4 5; do
        before=$(yk_kdc_starts)
        clashes=$(yk_kdc_port_clashes)
        # shellcheck disable=SC2086
        ${YK_KDC_WRAPPER:-} krb5kdc -n -r "$YK_REALM" "$@" \
            >> "$YK_KRB5_DIR/krb5kdc.out" 2>&1 &
        YK_KDC_PID=$!
        yk_register_pid "$YK_KDC_PID"
        for _ in $(seq 300); do
            kill -0 "$YK_KDC_PID" 2>/dev/null || break
            [ "$(yk_kdc_starts)" -gt "$before" ] && return 0
            sleep 0.1
        done
        if kill -0 "$YK_KDC_PID" 2>/dev/null; then
            yk_fail "krb5kdc did not start within 30 s (see $YK_KDC_LOG)"
        fi
        wait "$YK_KDC_PID" 2>/dev/null
        YK_KDC_PID=
        if [ "$(yk_kdc_port_clashes)" -gt "$clashes" ] && [ "$try" -lt 5 ]
        then
            echo "note: KDC port $YK_KDC_PORT was taken, moving" >&2
            YK_KDC_PORT=$(yk_realm_free_port) || yk_fail "no free port"
            yk_realm_write_config
            continue
        fi
        cat "$YK_KRB5_DIR/krb5kdc.out" >&2
        tail -5 "$YK_KDC_LOG" >&2 2>/dev/null
        yk_fail "krb5kdc exited at start"
    done
}

# Stop the KDC by PID and wait for it.
yk_kdc_stop() {
    [ -n "$YK_KDC_PID" ] || return 0
    yk_stop_pid "$YK_KDC_PID"
    YK_KDC_PID=
}

# kinit PRINC with further kinit options; the password (and OTP) lines
# come from standard input; output in $YK_TMP/kinit.out.
yk_kinit() {
    local princ=$1
    shift
    kinit "$@" "$princ" > "$YK_TMP/kinit.out" 2>&1
}

# The module's per-attempt log lines for PRINC (full name), oldest first,
# in the log file LOG (default: the KDC's).
yk_kdc_attempts() {
    grep -F "yubikey: principal=$1 " "${2:-$YK_KDC_LOG}"
}

# yk_expect_attempt NAME WANT [LOG]: one more attempt by NAME@REALM was
# made; check that LOG (default the KDC's) holds exactly one module line
# per attempt counted so far and that the newest has " WANT" (a prefix
# such as "verdict=refused reason=replay").  The newest line is left in
# YK_LAST_ATTEMPT; yk_attempts_made NAME [LOG] prints the count.
declare -gA YK_ATTEMPTS=()
yk_expect_attempt() {
    local name=$1 want=$2 log=${3:-$YK_KDC_LOG} key lines n
    key="$name $log"
    YK_ATTEMPTS[$key]=$((${YK_ATTEMPTS[$key]:-0} + 1))
    lines=$(yk_kdc_attempts "$name@$YK_REALM" "$log")
    n=$(printf '%s\n' "$lines" | grep -c .)
    [ "$n" -eq "${YK_ATTEMPTS[$key]}" ] ||
        yk_fail "$name: $n lines in $log for ${YK_ATTEMPTS[$key]}" \
            "attempts: $lines"
    YK_LAST_ATTEMPT=$(printf '%s\n' "$lines" | tail -1)
    case "$YK_LAST_ATTEMPT" in
        *" $want"*) ;;
        *) yk_fail "$name: log line \"$YK_LAST_ATTEMPT\" lacks \"$want\"" ;;
    esac
}
yk_attempts_made() {
    echo "${YK_ATTEMPTS[$1 ${2:-$YK_KDC_LOG}]:-0}"
}

# The flags of the TGT in CCACHE (default: the current one), as klist -f
# prints them (e.g. "FRIAH"); empty when there is none.
yk_tgt_flags() {
    klist -f ${1:+-c "$1"} 2>/dev/null | awk '/krbtgt\// { getline;
        sub(/.*Flags: /, ""); print; exit }'
}

# yk_expect_strong_tgt WHO CCACHE SERVICE: the TGT in CCACHE is flagged H
# (hardware authentication) and gets a ticket for SERVICE (a require_auth
# yubikey-2fa service); else fail, naming WHO.
yk_expect_strong_tgt() {
    case "$(yk_tgt_flags "$2")" in
        *H*) ;;
        *) yk_fail "$1: the TGT is not flagged H" ;;
    esac
    KRB5CCNAME=$2 kvno "$3" > "$YK_TMP/kvno.out" 2>&1 ||
        { cat "$YK_TMP/kvno.out" >&2; yk_fail "$1: no ticket for $3" \
            "(require_auth yubikey-2fa)"; }
}

# A FAST armor ccache in FILE, from the keytab of a host principal made
# for it (as kinit -T needs in krb5 1.20).
yk_armor_ccache() {
    local file=$1 host=host/armor.example.com
    if ! kadmin.local -r "$YK_REALM" getprinc "$host" >/dev/null 2>&1; then
        yk_realm_service "$host"
        kadmin.local -r "$YK_REALM" ktadd -k "$YK_KRB5_DIR/armor.keytab" \
            "$host" > "$YK_KRB5_DIR/kadmin.out" 2>&1 ||
            { cat "$YK_KRB5_DIR/kadmin.out" >&2; yk_fail "ktadd failed"; }
    fi
    kinit -k -t "$YK_KRB5_DIR/armor.keytab" -c "$file" "$host" \
        > "$YK_KRB5_DIR/armor.out" 2>&1 ||
        { cat "$YK_KRB5_DIR/armor.out" >&2;
          yk_fail "kinit of the armor ccache failed"; }
}

# The directory of libkrb5's own preauth plugins (where Debian's
# krb5-pkinit puts pkinit.so), from the path of the libkrb5 klist uses
# (kinit may be a wrapper script: tools/memcheck --asan).
yk_krb5_preauth_dir() {
    local lib
    lib=$(ldd "$(command -v klist)" 2>/dev/null |
        awk '$1 ~ /^libkrb5\.so/ { print $3; exit }')
    [ -n "$lib" ] || return 1
    echo "$(dirname "$lib")/krb5/plugins/preauth"
}

# Anonymous PKINIT for the realm (see the comment above
# yk_pkinit_kdc_relations): the CA and KDC certificate in $YK_PKI_DIR,
# WELLKNOWN/ANONYMOUS, and the configuration files rewritten.  Call it
# after yk_realm_setup and before yk_kdc_start (krb5kdc reads its PKINIT
# identity at start).  Skips (77) without krb5-pkinit or openssl.
yk_realm_pkinit_setup() {
    local p=$YK_TMP/pki dir
    [ -n "$YK_KRB5_DIR" ] || yk_fail "yk_realm_pkinit_setup: no realm yet"
    [ -z "$YK_KDC_PID" ] || yk_fail "yk_realm_pkinit_setup after yk_kdc_start"
    dir=$(yk_krb5_preauth_dir) || yk_fail "cannot locate libkrb5 of kinit"
    [ -f "$dir/pkinit.so" ] ||
        yk_skip "$dir/pkinit.so missing (apt-get install krb5-pkinit)"
    yk_pki_issue "$p" kdc_cert kdc "/CN=$YK_REALM test CA" \
        "/CN=kdc.$YK_REALM" <<EOF
[kdc_cert]
basicConstraints = CA:FALSE
keyUsage = nonRepudiation,digitalSignature,keyEncipherment,keyAgreement
extendedKeyUsage = 1.3.6.1.5.2.3.5
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid,issuer
subjectAltName = otherName:1.3.6.1.5.2.2;SEQUENCE:kdc_princ_name

[kdc_princ_name]
realm = EXP:0,GENERALSTRING:$YK_REALM
principal_name = EXP:1,SEQUENCE:kdc_principal_seq

[kdc_principal_seq]
name_type = EXP:0,INTEGER:2
name_string = EXP:1,SEQUENCE:kdc_principals

[kdc_principals]
princ1 = GENERALSTRING:krbtgt
princ2 = GENERALSTRING:$YK_REALM
EOF
    # Not a service, but the same: a random key, no token entry.
    yk_realm_service WELLKNOWN/ANONYMOUS
    YK_PKI_DIR=$p
    yk_realm_write_config
}

# A FAST armor ccache in FILE from anonymous PKINIT (kinit -n), with the
# current KRB5_CONFIG (e.g. KRB5_CONFIG=$YK_KRB5_CONF_STOCK before it);
# needs yk_realm_pkinit_setup.  kinit's output in $YK_KRB5_DIR/anon.out.
# When PKINIT fails kinit falls back to asking a password for
# WELLKNOWN/ANONYMOUS: standard input is /dev/null, and the KDC's own
# PKINIT complaints (e.g. "preauth pkinit failed to initialize") are shown.
yk_anon_armor_ccache() {
    [ -n "$YK_PKI_DIR" ] || yk_fail "yk_anon_armor_ccache needs" \
        "yk_realm_pkinit_setup"
    kinit -n -c "$1" < /dev/null > "$YK_KRB5_DIR/anon.out" 2>&1 ||
        { cat "$YK_KRB5_DIR/anon.out" >&2;
          grep -i pkinit "$YK_KDC_LOG" >&2;
          yk_fail "kinit -n (anonymous PKINIT) failed"; }
}

# yk_stock_client ANON HOST: export KRB5_CONFIG=$YK_KRB5_CONF_STOCK (a
# stock host's krb5.conf, checked to name nothing of ours) and make two
# FAST armor ccaches with it: ANON from anonymous PKINIT
# (yk_realm_pkinit_setup), HOST from the keytab of a host principal.
# After yk_kdc_start.
yk_stock_client() {
    export KRB5_CONFIG=$YK_KRB5_CONF_STOCK
    grep -qi 'yubikey\|plugins' "$KRB5_CONFIG" &&
        yk_fail "the stock krb5.conf names something of ours"
    yk_anon_armor_ccache "$1"
    yk_armor_ccache "$2"          # kinit -k with the stock krb5.conf
}

# yk_stock_kinit NAME ARMOR VALUE: stock kinit -T ARMOR for NAME@REALM
# (the current KRB5_CONFIG), VALUE typed at its one prompt ("Enter OTP
# Token Value"); output in $YK_TMP/kinit.out, trace in $YK_TMP/trace,
# ccache $YK_TMP/NAME.cc.  Returns kinit's status.
yk_stock_kinit() {
    printf '%s\n' "$3" | KRB5_TRACE=$YK_TMP/trace kinit -T "$2" \
        -c "$YK_TMP/$1.cc" "$1@$YK_REALM" > "$YK_TMP/kinit.out" 2>&1
}

YK_KDC2_PORT=
YK_KDC2_PID=
YK_KDC2_LOG=
YK_KRB5_CONF_KDC2=

# Start a second krb5kdc on the realm's database and token directory: a
# copy of kdc.conf with its own TCP port and log, and a copy of the
# password-only krb5.conf naming only it.  Its UDP listener is on another
# port, so that after a DISCARD (the TCP connection closed) the client's
# UDP fallback is refused at once instead of waiting out libkrb5's
# retries.  Waits for "commencing operation"; a port taken meanwhile is
# replaced (3 tries).  YK_KDC2_SED, when set, is one more sed script
# applied to the copy (e.g. "s|^\( *yubikey_ldap_uri = \).*|\1URI|").
yk_kdc2_start() {
    local d=$YK_KRB5_DIR udp try _
    YK_KDC2_LOG=$d/kdc2.log
    YK_KRB5_CONF_KDC2=$d/krb5-kdc2.conf
    for try in 1 2 3; do
        YK_KDC2_PORT=$(yk_realm_free_port) || yk_fail "no free port"
        udp=$(yk_realm_free_port) || yk_fail "no free port"
        case " $YK_KDC_PORT ${YK_KDC_UDP_PORT:-} $YK_KDC2_PORT " in
            *" $udp "*) continue ;;
        esac
        sed -e "s|\( kdc_listen = \).*|\1127.0.0.1:$udp|" \
            -e "s|\( kdc_tcp_listen = \).*|\1127.0.0.1:$YK_KDC2_PORT|" \
            -e "s|FILE:$YK_KDC_LOG\$|FILE:$YK_KDC2_LOG|" \
            -e "${YK_KDC2_SED:-}" "$d/kdc.conf" > "$d/kdc2.conf"
        sed -e "s|\( kdc = \)127\.0\.0\.1:.*|\1127.0.0.1:$YK_KDC2_PORT|" \
            "$YK_KRB5_CONF_PLAIN" > "$YK_KRB5_CONF_KDC2"
        : > "$YK_KDC2_LOG"
        KRB5_KDC_PROFILE=$d/kdc2.conf ${YK_KDC_WRAPPER:-} krb5kdc -n \
            -r "$YK_REALM" \
            >> "$d/krb5kdc2.out" 2>&1 &
        YK_KDC2_PID=$!
        yk_register_pid "$YK_KDC2_PID"
        for _ in $(seq 300); do
            kill -0 "$YK_KDC2_PID" 2>/dev/null || break
            grep -q 'commencing operation' "$YK_KDC2_LOG" && return 0
            sleep 0.1
        done
        kill -0 "$YK_KDC2_PID" 2>/dev/null &&
            yk_fail "the second krb5kdc did not start within 30 s"
        wait "$YK_KDC2_PID" 2>/dev/null
        YK_KDC2_PID=
        grep -q 'Address already in use' "$YK_KDC2_LOG" || break
    done
    cat "$d/krb5kdc2.out" >&2
    tail -5 "$YK_KDC2_LOG" >&2
    yk_fail "the second krb5kdc exited at start"
}

# Stop the second KDC by PID and wait for it.
yk_kdc2_stop() {
    [ -n "$YK_KDC2_PID" ] || return 0
    yk_stop_pid "$YK_KDC2_PID"
    YK_KDC2_PID=
}
