# SPDX-License-Identifier: MIT
# lib.sh: integration test harness: a throwaway slapd with the shipped schema.
#
# Source it from a bash test (". "$top_srcdir/tests/integration/lib.sh"),
# then:
#   yk_init                  temp dir, LDAPNOINIT, cleanup trap
#   yk_slapd_setup           slapd.conf (shipped schema and ACLs), seed data
#   yk_slapd_start           start on 127.0.0.1, a free port; sets
#                            YK_LDAP_URI, YK_SLAPD_PID
#   yk_ldap_add_principal alice [REALM]
#   yk_slapd_stop / yk_slapd_freeze / yk_slapd_thaw
# Call yk_slapd_start/yk_slapd_stop directly, never inside $(...): the
# shell that starts slapd must be the one that waits for it.
#
# Exit codes follow automake: 0 pass, 1 fail, 77 skip (always announced
# loudly with "SKIP: ...").  Set YK_KEEP=1 to keep the temp dir.
#
# Knobs (set before yk_slapd_setup):
#   YK_SLAPD_EXTRA_SCHEMA  more schema files to include
#   YK_SLAPD_EXTRA_ACL     slapd.conf access lines placed after the shipped
#                          rules and before the permissive rest (e.g.
#                          kldap's rules)
#   YK_SLAPD_EXTRA_LDIF    an LDIF file added with the seed entries
#   YK_SLAPD_PRE_ACL       slapd.conf access lines placed BEFORE the
#                          shipped rules (tests that break them on
#                          purpose, e.g. "by * break" rules for one DN)
#   YK_SLAPD_LDAPI=1       also listen on ldapi:// (YK_LDAPI_URI), with
#                          SASL EXTERNAL for the test's own uid mapped to
#                          the KDC's DN
#   YK_SLAPD_EXTRA_CONF    lines appended to slapd.conf after the main
#                          database (e.g. "database monitor", or the
#                          TLS lines of yk_slapd_tls_conf)
#   YK_SLAPD_EXTRA_URLS    more URLs for slapd -h (set before
#                          yk_slapd_start), e.g. "ldaps://127.0.0.1:PORT/"
#   YK_SLAPD_WRAPPER       a command line slapd runs under (it must exec
#                          slapd, keeping the PID), e.g. a private mount
#                          namespace (diskfull.sh)
#   YK_SLAPD_DEBUG         slapd's -d level (default none; "stats" logs
#                          every operation and its result, async.sh)
#
# TLS (tls.sh):
#   yk_tls_pki DIR         a throwaway CA (ca.pem), a server certificate
#                          for IP 127.0.0.1 and DNS localhost signed by it
#                          (server.pem, serverkey.pem) and a second,
#                          unrelated CA (other-ca.pem); skips without
#                          openssl
#   yk_slapd_tls_conf DIR  the slapd.conf lines serving DIR's certificate

YK_SRCDIR=${top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
YK_BUILDDIR=${top_builddir:-$(pwd)}
YK_REALM=${YK_REALM:-EXAMPLE.COM}
YK_LDAP_BASE=${YK_LDAP_BASE:-dc=example,dc=com}
YK_SCHEMA_DIR=${YK_SCHEMA_DIR:-/etc/ldap/schema}
YK_SLAPD_MODULES=${YK_SLAPD_MODULES:-/usr/lib/ldap}
YK_KRB5_DOC=/usr/share/doc/krb5-kdc-ldap
YK_KRB5_SCHEMA_GZ=${YK_KRB5_SCHEMA_GZ:-$YK_KRB5_DOC/kerberos.schema.gz}
YK_KRB5_LDIF_GZ=${YK_KRB5_LDIF_GZ:-$YK_KRB5_DOC/kerberos.openldap.ldif.gz}

# The test identities (instantiating the placeholders of ldap-schema/acl.*).
YK_ADMIN_DN="cn=admin,$YK_LDAP_BASE"          # rootdn
YK_ADMIN_PW=admin-secret
YK_KDC_DN="cn=kdc,$YK_LDAP_BASE"
YK_KDC_PW=kdc-secret
YK_YKADMIN_DN="cn=ykadmin,$YK_LDAP_BASE"      # member of the admin group
YK_YKADMIN_PW=ykadmin-secret
YK_ADMIN_GROUP_DN="cn=yubikey-admins,ou=groups,$YK_LDAP_BASE"
YK_HELPDESK_DN="cn=helpdesk,$YK_LDAP_BASE"
YK_HELPDESK_PW=helpdesk-secret
YK_USER_DN="uid=someuser,ou=people,$YK_LDAP_BASE"
YK_USER_PW=user-secret
YK_PEOPLE_DN="ou=people,$YK_LDAP_BASE"

YK_TMP=
YK_SLAPD_PID=
YK_SLAPD_PORT=
YK_LDAP_URI=
YK_LDAPI_URI=
YK_PIDS=()

# Say why the test is skipped, loudly, and exit 77.
yk_skip() {
    echo "*** SKIP: $* ***" >&2
    echo "SKIP: $*"
    exit 77
}

# Report a failure and exit 1 (the trap cleans up).
yk_fail() {
    echo "FAIL: $*" >&2
    if [ -n "$YK_TMP" ] && [ -f "$YK_TMP/slapd.log" ]; then
        echo "--- last lines of slapd.log:" >&2
        tail -5 "$YK_TMP/slapd.log" >&2
    fi
    exit 1
}

# Print a passed check.
yk_ok() {
    echo "ok: $*"
}

# Milliseconds since the epoch.
yk_ms() {
    local us=${EPOCHREALTIME//[!0-9]/}   # bash's clock: no fork of date
    echo $((us / 1000))
}

# Run a command, setting ELAPSED (its wall time, ms); returns its status.
yk_timed() {
    local t0 rc
    t0=$(yk_ms)
    "$@"
    rc=$?
    ELAPSED=$(($(yk_ms) - t0))
    return $rc
}

# Remember a background process so that cleanup stops it.
yk_register_pid() {
    YK_PIDS+=("$1")
}

# Stop one process by PID: continue it (it may be frozen), TERM, wait up to
# 5 s, then KILL.
yk_stop_pid() {
    local pid=$1 i
    kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return 0; }
    kill -CONT "$pid" 2>/dev/null
    kill -TERM "$pid" 2>/dev/null
    for i in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    return 0
}

# The EXIT trap: stop every process we started, remove the temp dir.
yk_cleanup() {
    local rc=$? pid
    for pid in "${YK_PIDS[@]}"; do
        yk_stop_pid "$pid"
    done
    YK_PIDS=()
    if [ -n "$YK_TMP" ] && [ -d "$YK_TMP" ]; then
        if [ "${YK_KEEP:-0}" = 1 ]; then
            echo "kept $YK_TMP" >&2
        else
            rm -rf "$YK_TMP"
        fi
    fi
    exit "$rc"
}

# Make the temp dir, ignore the system's ldap.conf, install the trap and
# check that the servers and tools exist (else skip).
yk_init() {
    local tool
    for tool in slapd slapadd ldapsearch ldapmodify ldapadd; do
        command -v "$tool" >/dev/null 2>&1 ||
            PATH=$PATH:/usr/sbin command -v "$tool" >/dev/null 2>&1 ||
            yk_skip "$tool not found (apt-get install slapd ldap-utils)"
    done
    PATH=$PATH:/usr/sbin
    [ -f "$YK_SLAPD_MODULES/back_mdb.la" ] ||
        [ -f "$YK_SLAPD_MODULES/back_mdb.so" ] ||
        yk_skip "back_mdb not found in $YK_SLAPD_MODULES"
    YK_TMP=$(mktemp -d "${TMPDIR:-/tmp}/yktest.XXXXXX") ||
        yk_fail "mktemp failed"
    export LDAPNOINIT=1
    trap yk_cleanup EXIT
    trap 'exit 130' INT TERM
}

# Unpack krb5's kerberos schema (slapd.conf form) into the temp dir.
yk_kerberos_schema() {
    [ -f "$YK_KRB5_SCHEMA_GZ" ] ||
        yk_skip "krb5's kerberos.schema missing: $YK_KRB5_SCHEMA_GZ" \
            "(package krb5-kdc-ldap; images without /usr/share/doc lose it)"
    gunzip -c "$YK_KRB5_SCHEMA_GZ" > "$YK_TMP/kerberos.schema" ||
        yk_fail "cannot unpack $YK_KRB5_SCHEMA_GZ"
}

# Instantiate ldap-schema/$1 (acl.conf or acl.ldif) with the test DNs.
yk_acl_instantiate() {
    sed -e "s|@KDC_DN@|$YK_KDC_DN|g" \
        -e "s|@ADMIN_GROUP_DN@|$YK_ADMIN_GROUP_DN|g" \
        -e "s|@HELPDESK_DN@|$YK_HELPDESK_DN|g" \
        -e "s|@DATABASE@|${2:-{1\}mdb}|g" \
        "$YK_SRCDIR/ldap-schema/$1"
}

# The seed entries: base, ou=people, ou=groups, the service identities,
# the admin group and an ordinary user.
yk_seed_ldif() {
    local dc=${YK_LDAP_BASE%%,*}
    cat <<EOF
dn: $YK_LDAP_BASE
objectClass: dcObject
objectClass: organization
dc: ${dc#dc=}
o: krb5-yubikey test

dn: $YK_PEOPLE_DN
objectClass: organizationalUnit
ou: people

dn: ou=groups,$YK_LDAP_BASE
objectClass: organizationalUnit
ou: groups

dn: $YK_KDC_DN
objectClass: organizationalRole
objectClass: simpleSecurityObject
cn: kdc
userPassword: $YK_KDC_PW

dn: $YK_YKADMIN_DN
objectClass: organizationalRole
objectClass: simpleSecurityObject
cn: ykadmin
userPassword: $YK_YKADMIN_PW

dn: $YK_HELPDESK_DN
objectClass: organizationalRole
objectClass: simpleSecurityObject
cn: helpdesk
userPassword: $YK_HELPDESK_PW

dn: $YK_ADMIN_GROUP_DN
objectClass: groupOfNames
cn: yubikey-admins
member: $YK_YKADMIN_DN

dn: $YK_USER_DN
objectClass: inetOrgPerson
uid: someuser
cn: Some User
sn: User
userPassword: $YK_USER_PW
EOF
}

# Write slapd.conf and load the seed entries offline (slapadd).  The
# shipped ACLs come first, then YK_SLAPD_EXTRA_ACL, then a permissive rest
# (the KDC and administrators write, everyone reads).
yk_slapd_setup() {
    local dir=$YK_TMP/slapd f peer
    [ -f "$YK_TMP/kerberos.schema" ] || yk_kerberos_schema
    mkdir -p "$dir/db" || yk_fail "mkdir $dir/db"
    {
        for f in core cosine inetorgperson nis; do
            echo "include $YK_SCHEMA_DIR/$f.schema"
        done
        echo "include $YK_TMP/kerberos.schema"
        echo "include $YK_SRCDIR/ldap-schema/yubikey.schema"
        for f in ${YK_SLAPD_EXTRA_SCHEMA:-}; do
            echo "include $f"
        done
        peer="gidnumber=$(id -g).uidnumber=$(id -u),cn=peercred"
        cat <<EOF
pidfile $dir/slapd.pid
argsfile $dir/slapd.args
modulepath $YK_SLAPD_MODULES
moduleload back_mdb
moduleload unique
# SASL EXTERNAL over ldapi:// as this uid acts as the KDC.
authz-regexp "^$peer,cn=external,cn=auth\$" "$YK_KDC_DN"

database mdb
suffix "$YK_LDAP_BASE"
rootdn "$YK_ADMIN_DN"
rootpw $YK_ADMIN_PW
directory $dir/db
maxsize 33554432
index objectClass eq
index krbPrincipalName eq,pres,sub
index yubikeyPublicId eq

EOF
        printf '%s\n' "${YK_SLAPD_PRE_ACL:-}"
        cat <<EOF
# --- the shipped rules (ldap-schema/acl.conf), instantiated -----------
EOF
        yk_acl_instantiate acl.conf
        echo
        echo "# --- extra rules of this test ---"
        printf '%s\n' "${YK_SLAPD_EXTRA_ACL:-}"
        cat <<EOF

# --- the permissive rest (tests only) ---
access to attrs=userPassword
	by self write
	by anonymous auth
	by * none
access to *
	by dn.exact="$YK_KDC_DN" write
	by group/groupOfNames/member.exact="$YK_ADMIN_GROUP_DN" write
	by * read

# One token, one principal: yubikeyPublicId unique in the whole database.
overlay unique
unique_uri ldap:///?yubikeyPublicId?sub
EOF
        printf '%s\n' "${YK_SLAPD_EXTRA_CONF:-}"
    } > "$dir/slapd.conf"
    yk_seed_ldif > "$dir/seed.ldif"
    if [ -n "${YK_SLAPD_EXTRA_LDIF:-}" ]; then
        { echo; cat "$YK_SLAPD_EXTRA_LDIF"; } >> "$dir/seed.ldif"
    fi
    slapadd -q -f "$dir/slapd.conf" -l "$dir/seed.ldif" \
        > "$YK_TMP/slapadd.log" 2>&1 ||
        { cat "$YK_TMP/slapadd.log" >&2; yk_fail "slapadd failed"; }
}

# Whether something listens on 127.0.0.1:$1.
yk_port_busy() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# A random port for a server of a test, below Linux's ephemeral range
# (32768 and up: /proc/sys/net/ipv4/ip_local_port_range), so that no
# client connection of the machine holds it while its server is down
# for a restart on the same port.
yk_random_port() {
    echo $((10000 + RANDOM % 22000))
}

# Whether process $1 holds the listening TCP socket of port $2 (so the
# server answering there is ours, not another test's that took the port).
yk_pid_listens() {
    local pid=$1 hex inode
    hex=$(printf '%04X' "$2")
    for inode in $(awk -v p=":$hex" '$2 ~ (p "$") && $4 == "0A" {print $10}' \
            /proc/net/tcp /proc/net/tcp6 2>/dev/null); do
        ls -l "/proc/$pid/fd" 2>/dev/null | grep -q "socket:\[$inode\]" &&
            return 0
    done
    return 1
}

# Start slapd (slapd.conf from yk_slapd_setup, or the cn=config dir given
# as "-F DIR", or another slapd.conf given as "-f FILE") on a free random
# port, or on YK_SLAPD_PORT when set (a restart).  Waits until it answers.
yk_slapd_start() {
    local dir=$YK_TMP/slapd try port urls i conf
    conf=(-f "$dir/slapd.conf")
    [ "${1:-}" = -F ] && conf=(-F "$2")
    [ "${1:-}" = -f ] && conf=(-f "$2")
    for try in $(seq 10); do
        port=$YK_SLAPD_PORT
        if [ -z "$port" ]; then
            port=$(yk_random_port)
            yk_port_busy "$port" && continue
        fi
        urls="ldap://127.0.0.1:$port/ ${YK_SLAPD_EXTRA_URLS:-}"
        if [ "${YK_SLAPD_LDAPI:-0}" = 1 ]; then
            YK_LDAPI_URI="ldapi://$(printf '%s' "$dir/ldapi" |
                sed 's|/|%2F|g')"
            urls="$urls $YK_LDAPI_URI"
        fi
        # shellcheck disable=SC2086
        ${YK_SLAPD_WRAPPER:-} slapd "${conf[@]}" -h "$urls" \
            -d "${YK_SLAPD_DEBUG:-none}" \
            >> "$YK_TMP/slapd.log" 2>&1 &
        YK_SLAPD_PID=$!
        yk_register_pid "$YK_SLAPD_PID"
        for i in $(seq 100); do
            if ! kill -0 "$YK_SLAPD_PID" 2>/dev/null; then
                wait "$YK_SLAPD_PID" 2>/dev/null
                break
            fi
            if yk_pid_listens "$YK_SLAPD_PID" "$port" &&
                ldapsearch -x -H "ldap://127.0.0.1:$port/" -b '' -s base \
                    '(objectClass=*)' namingContexts >/dev/null 2>&1; then
                YK_SLAPD_PORT=$port
                YK_LDAP_URI="ldap://127.0.0.1:$port/"
                return 0
            fi
            sleep 0.1
        done
        yk_stop_pid "$YK_SLAPD_PID"
        YK_SLAPD_PID=
        # A fixed port (restart) is not retried elsewhere.
        [ -n "$YK_SLAPD_PORT" ] && break
    done
    yk_fail "slapd did not start on port $port (busy?) (see $YK_TMP/slapd.log)"
}

# Stop slapd by PID and wait for it.
yk_slapd_stop() {
    [ -n "$YK_SLAPD_PID" ] || return 0
    yk_stop_pid "$YK_SLAPD_PID"
    YK_SLAPD_PID=
}

# Whether every thread of process $1 is stopped (state T).
yk_pid_stopped() {
    local t state
    for t in /proc/"$1"/task/*; do
        state=$(sed 's/^.*) \(.\).*/\1/' "$t/stat" 2>/dev/null) || continue
        [ "$state" = T ] || [ "$state" = t ] || return 1
    done
    return 0
}

# Freeze slapd (SIGSTOP): connections stay open, nothing is answered.
# Returns once every thread has stopped (the signal is asynchronous).
yk_slapd_freeze() {
    local i
    kill -STOP "$YK_SLAPD_PID" || yk_fail "cannot freeze slapd"
    for i in $(seq 200); do
        yk_pid_stopped "$YK_SLAPD_PID" && return 0
        sleep 0.01
    done
    yk_fail "slapd did not stop after SIGSTOP"
}

# Let a frozen slapd run again.
yk_slapd_thaw() {
    kill -CONT "$YK_SLAPD_PID" || yk_fail "cannot thaw slapd"
}

# ldapsearch bound as DN with password PW (DN "" = anonymous); the rest of
# the arguments go to ldapsearch.  Output in LDIF without line wrapping.
yk_ldapsearch_as() {
    local dn=$1 pw=$2
    shift 2
    if [ -z "$dn" ]; then
        ldapsearch -LLL -x -o ldif-wrap=no -H "$YK_LDAP_URI" "$@"
    else
        ldapsearch -LLL -x -o ldif-wrap=no -H "$YK_LDAP_URI" -D "$dn" \
            -w "$pw" "$@"
    fi
}

# ldapmodify as DN/PW with the LDIF on standard input; returns its code.
yk_ldapmodify_as() {
    ldapmodify -x -H "$YK_LDAP_URI" -D "$1" -w "$2" \
        > "$YK_TMP/ldapmodify.out" 2>&1
}

# ldapmodify as the rootdn (LDIF on standard input); fails the test on
# error.
yk_ldap_modify() {
    yk_ldapmodify_as "$YK_ADMIN_DN" "$YK_ADMIN_PW" ||
        { cat "$YK_TMP/ldapmodify.out" >&2; yk_fail "ldapmodify failed"; }
}

# Add a principal entry uid=NAME,ou=people,BASE (inetOrgPerson +
# krbPrincipalAux, krbPrincipalName NAME@REALM, as a DB2 realm's
# directory would hold it).  NAME may hold any IA5 character but ",+=".
yk_ldap_add_principal() {
    local name=$1 realm=${2:-$YK_REALM} uid=${3:-$1}
    yk_ldap_modify <<EOF
dn: uid=$uid,$YK_PEOPLE_DN
changetype: add
objectClass: inetOrgPerson
objectClass: krbPrincipalAux
uid: $uid
cn: $uid
sn: $uid
krbPrincipalName: $name@$realm
EOF
}

# Load the shipped cn=config forms into a second slapd (slapd -F): the
# schema (yubikey.ldif, added online with ldapadd) and the ACLs
# (acl.ldif, inserted before an existing "to *" rule).  Then check that
# the schema equals the one slapd.conf's server (running, from
# yubikey.schema) publishes, that the rules landed at {0}..{2}, and that
# they work.  Leaves the slapd.conf server running as before.
yk_slapd_cnconfig_check() {
    local cdir=$YK_TMP/cnconfig saved_port=$YK_SLAPD_PORT
    local saved_pid=$YK_SLAPD_PID saved_uri=$YK_LDAP_URI
    local saved_ldapi=${YK_SLAPD_LDAPI:-0}
    local want got port
    [ -f "$YK_KRB5_LDIF_GZ" ] ||
        yk_skip "krb5's kerberos LDIF missing: $YK_KRB5_LDIF_GZ"
    gunzip -c "$YK_KRB5_LDIF_GZ" > "$YK_TMP/kerberos.ldif" ||
        yk_fail "cannot unpack $YK_KRB5_LDIF_GZ"
    want=$(yk_ldapsearch_as "" "" -b cn=Subschema -s base \
        '(objectClass=subschema)' attributeTypes objectClasses |
        grep -i 'yubikey' | sort)
    [ "$(printf '%s\n' "$want" | grep -c .)" -eq 5 ] ||
        yk_fail "slapd.conf server does not publish the 5 yubikey types"

    mkdir -p "$cdir/slapd.d" "$cdir/db"
    cat > "$cdir/config.ldif" <<EOF
dn: cn=config
objectClass: olcGlobal
cn: config
olcPidFile: $cdir/slapd.pid

dn: cn=module{0},cn=config
objectClass: olcModuleList
cn: module{0}
olcModulePath: $YK_SLAPD_MODULES
olcModuleLoad: back_mdb
olcModuleLoad: unique

dn: cn=schema,cn=config
objectClass: olcSchemaConfig
cn: schema

include: file://$YK_SCHEMA_DIR/core.ldif
include: file://$YK_SCHEMA_DIR/cosine.ldif
include: file://$YK_SCHEMA_DIR/inetorgperson.ldif
include: file://$YK_SCHEMA_DIR/nis.ldif
include: file://$YK_TMP/kerberos.ldif

dn: olcDatabase={-1}frontend,cn=config
objectClass: olcDatabaseConfig
objectClass: olcFrontendConfig
olcDatabase: {-1}frontend

dn: olcDatabase={0}config,cn=config
objectClass: olcDatabaseConfig
olcDatabase: {0}config
olcRootDN: cn=config
olcRootPW: config-secret

dn: olcDatabase={1}mdb,cn=config
objectClass: olcDatabaseConfig
objectClass: olcMdbConfig
olcDatabase: {1}mdb
olcSuffix: $YK_LDAP_BASE
olcRootDN: $YK_ADMIN_DN
olcRootPW: $YK_ADMIN_PW
olcDbDirectory: $cdir/db
olcDbMaxSize: 33554432
olcDbIndex: objectClass eq
olcAccess: {0}to * by * read
EOF
    # The index and slapo-unique, online, as doc/ldap.md configures them.
    cat > "$cdir/unique.ldif" <<EOF
dn: olcDatabase={1}mdb,cn=config
changetype: modify
add: olcDbIndex
olcDbIndex: yubikeyPublicId eq

dn: olcOverlay=unique,olcDatabase={1}mdb,cn=config
changetype: add
objectClass: olcOverlayConfig
objectClass: olcUniqueConfig
olcOverlay: unique
olcUniqueURI: ldap:///?yubikeyPublicId?sub
EOF
    slapadd -q -n0 -F "$cdir/slapd.d" -l "$cdir/config.ldif" \
        > "$YK_TMP/slapadd-config.log" 2>&1 ||
        { cat "$YK_TMP/slapadd-config.log" >&2;
          yk_fail "slapadd -n0 of the base cn=config failed"; }
    yk_seed_ldif | slapadd -q -F "$cdir/slapd.d" -b "$YK_LDAP_BASE" \
        > "$YK_TMP/slapadd-config.log" 2>&1 ||
        { cat "$YK_TMP/slapadd-config.log" >&2;
          yk_fail "slapadd of the seed entries (cn=config) failed"; }

    # TCP only: the ldapi socket path belongs to the first server.
    YK_SLAPD_PORT= YK_SLAPD_PID= YK_SLAPD_LDAPI=0
    yk_slapd_start -F "$cdir/slapd.d"
    port=$YK_SLAPD_PORT
    # Online, as an administrator would: the schema, then the rules.
    ldapadd -x -H "$YK_LDAP_URI" -D cn=config -w config-secret \
        -f "$YK_SRCDIR/ldap-schema/yubikey.ldif" > "$cdir/add.log" 2>&1 ||
        { cat "$cdir/add.log" >&2; yk_fail "ldapadd yubikey.ldif failed"; }
    yk_acl_instantiate acl.ldif '{1}mdb' > "$cdir/acl.ldif"
    ldapmodify -x -H "$YK_LDAP_URI" -D cn=config -w config-secret \
        -f "$cdir/acl.ldif" > "$cdir/acl.log" 2>&1 ||
        { cat "$cdir/acl.log" >&2; yk_fail "ldapmodify acl.ldif failed"; }
    ldapmodify -x -H "$YK_LDAP_URI" -D cn=config -w config-secret \
        -f "$cdir/unique.ldif" > "$cdir/unique.log" 2>&1 ||
        { cat "$cdir/unique.log" >&2;
          yk_fail "index and slapo-unique (cn=config) failed"; }

    got=$(yk_ldapsearch_as "" "" -b cn=Subschema -s base \
        '(objectClass=subschema)' attributeTypes objectClasses |
        grep -i 'yubikey' | sort)
    [ "$got" = "$want" ] || {
        diff <(echo "$want") <(echo "$got") >&2
        yk_fail "yubikey.ldif and yubikey.schema define different things"; }
    yk_ok "yubikey.ldif (cn=config) defines exactly what yubikey.schema does"

    got=$(ldapsearch -LLL -x -o ldif-wrap=no -H "$YK_LDAP_URI" -D cn=config \
        -w config-secret -b 'olcDatabase={1}mdb,cn=config' -s base olcAccess |
        sed -n 's/^olcAccess: \({[0-9]*}to [^ ]*\).*/\1/p' | tr '\n' ' ')
    want="{0}to attrs=yubikeyTokenSecret {1}to attrs=yubikeyTokenState"
    want="$want {2}to attrs=yubikeyPublicId,yubikeyPolicy {3}to * "
    [ "$got" = "$want" ] ||
        yk_fail "acl.ldif rules not placed first: $got"
    yk_ok "acl.ldif inserted its rules at {0}..{2}, before the existing rule"

    # The rules work on the cn=config server too.
    yk_ldap_modify <<EOF
dn: $YK_USER_DN
changetype: modify
add: objectClass
objectClass: yubikeyPrincipalAux
-
add: yubikeyTokenSecret
yubikeyTokenSecret: yk1 id=cccc st=active serial= at=0 by= desc= wrap=x
-
add: yubikeyTokenState
yubikeyTokenState: yk1 id=cccc ctr=0 gen=0 nonce=- used=0
EOF
    got=$(yk_ldapsearch_as "$YK_HELPDESK_DN" "$YK_HELPDESK_PW" \
        -b "$YK_USER_DN" -s base yubikeyTokenSecret yubikeyTokenState)
    echo "$got" | grep -q '^yubikeyTokenState:' &&
        ! echo "$got" | grep -q '^yubikeyTokenSecret' ||
        yk_fail "cn=config ACLs: helpdesk view wrong: $got"
    got=$(yk_ldapsearch_as "$YK_KDC_DN" "$YK_KDC_PW" -b "$YK_USER_DN" \
        -s base yubikeyTokenSecret)
    echo "$got" | grep -q '^yubikeyTokenSecret:' ||
        yk_fail "cn=config ACLs: the KDC cannot read the secret"
    yk_ok "cn=config ACLs: the KDC reads the secret, the helpdesk only state"
    yk_ldapmodify_as "$YK_ADMIN_DN" "$YK_ADMIN_PW" <<EOF
dn: $YK_USER_DN
changetype: modify
add: yubikeyPublicId
yubikeyPublicId: cccc

dn: $YK_HELPDESK_DN
changetype: modify
add: objectClass
objectClass: yubikeyPrincipalAux
-
add: yubikeyPublicId
yubikeyPublicId: cccc
EOF
    [ $? -eq 19 ] || { cat "$YK_TMP/ldapmodify.out" >&2;
        yk_fail "cn=config slapo-unique did not refuse a duplicate id"; }
    yk_ok "cn=config slapo-unique refuses a second entry with the same id"

    yk_slapd_stop
    YK_SLAPD_PORT=$saved_port YK_SLAPD_PID=$saved_pid YK_LDAP_URI=$saved_uri
    YK_SLAPD_LDAPI=$saved_ldapi
    [ "$port" != "$saved_port" ] || yk_fail "port clash"
}

# yk_pki_issue DIR LEAF_EXT LEAF_NAME CA_SUBJECT LEAF_SUBJECT < SECTIONS:
# a throwaway CA in DIR (ca.pem, cakey.pem) and a certificate it signs,
# LEAF_NAME.pem (key LEAF_NAMEkey.pem), with the extensions section
# LEAF_EXT of SECTIONS (the leaf's openssl config sections, on standard
# input).  Our own openssl config (DIR/pki.cnf): the system's adds
# nothing.  Fails the test (openssl's words in DIR/openssl.log).
yk_pki_issue() {
    local p=$1 ext=$2 leaf=$3 ca_subj=$4 leaf_subj=$5
    command -v openssl >/dev/null 2>&1 ||
        yk_skip "openssl not found (apt-get install openssl)"
    mkdir -p "$p" || yk_fail "mkdir $p"
    {
        cat <<EOF
[req]
prompt = no
distinguished_name = req_dn

[req_dn]
CN = unused

[ca_cert]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash

EOF
        cat
    } > "$p/pki.cnf"
    (
        set -e
        cd "$p"
        umask 077
        openssl req -config pki.cnf -x509 -newkey rsa:2048 -nodes \
            -keyout cakey.pem -extensions ca_cert -subj "$ca_subj" \
            -days 2 -out ca.pem
        openssl req -config pki.cnf -newkey rsa:2048 -nodes \
            -keyout "${leaf}key.pem" -subj "$leaf_subj" -out "$leaf.req"
        openssl x509 -req -in "$leaf.req" -CA ca.pem -CAkey cakey.pem \
            -set_serial 2 -days 2 -extfile pki.cnf -extensions "$ext" \
            -out "$leaf.pem"
        chmod 644 ca.pem "$leaf.pem"
    ) >> "$p/openssl.log" 2>&1 ||
        { cat "$p/openssl.log" >&2;
          yk_fail "openssl could not make the certificates in $p"; }
}

# A throwaway PKI in DIR for TLS tests (see the top of this file): the CA
# that signs the server's certificate (server.pem, serverkey.pem, for
# 127.0.0.1 and localhost), and another CA that does not (other-ca.pem).
yk_tls_pki() {
    local p=$1
    yk_pki_issue "$p" server_cert server "/CN=LDAP test CA" "/CN=127.0.0.1" \
        <<EOF
[server_cert]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid,issuer
subjectAltName = IP:127.0.0.1,DNS:localhost
EOF
    (cd "$p" && umask 077 &&
     openssl req -config pki.cnf -x509 -newkey rsa:2048 -nodes \
        -keyout other-cakey.pem -extensions ca_cert \
        -subj "/CN=unrelated test CA" -days 2 -out other-ca.pem &&
     chmod 644 other-ca.pem) >> "$p/openssl.log" 2>&1 ||
        { cat "$p/openssl.log" >&2; yk_fail "openssl: the other CA"; }
}

# The slapd.conf lines that serve DIR's server certificate (yk_tls_pki),
# for YK_SLAPD_EXTRA_CONF.
yk_slapd_tls_conf() {
    cat <<EOF
TLSCACertificateFile $1/ca.pem
TLSCertificateFile $1/server.pem
TLSCertificateKeyFile $1/serverkey.pem
EOF
}
