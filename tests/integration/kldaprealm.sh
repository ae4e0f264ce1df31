# SPDX-License-Identifier: MIT
# kldaprealm.sh: a throwaway realm on krb5's LDAP back end (kldap).
#
# Source it from a bash test (it sources realm.sh, which sources lib.sh),
# then:
#   yk_kldap_setup           temp dir, slapd with kerberos.schema, ours and
#                            the merged ACLs (lib.sh), kdc.conf with
#                            [dbmodules] only (no yubikey_ldap_*), the
#                            service password file in DN#{HEX} form,
#                            kdb5_ldap_util create, the master keyring
#   yk_kldap_realm_setup     the same on a slapd already running (e.g.
#                            replica.sh's A): all but the slapd
#   yk_kldap_addprinc NAME PW [ADDPRINC OPTIONS...]
#                            a principal in the realm container
#   yk_kldap_user UID PW     an ordinary user entry uid=UID,ou=people
#                            (inetOrgPerson, userPassword PW)
#   yk_kldap_addprinc_dn NAME PW DN [ADDPRINC OPTIONS...]
#                            a principal put on the existing entry DN
#                            (addprinc -x dn=DN)
#   yk_kldap_failcount NAME  the principal's failed-login count (getprinc)
# The rest comes from realm.sh: yk_kdc_start/stop, yk_kinit, yk_otp,
# yk_ykadmin, yk_realm_enroll, yk_realm_service, yk_kdc_attempts.
#
# Knobs (before yk_kldap_setup): those of realm.sh (YK_CACHE_TTL,
# YK_BREAKER_TIME, YK_KDC_EXTRA) and lib.sh (YK_SLAPD_EXTRA_LDIF,
# YK_SLAPD_PRE_ACL, YK_SLAPD_LDAPI).  YK_KDC_EXTRA must not hold
# yubikey_ldap_* settings for the realm to prove that [dbmodules] alone
# is enough.  Read each time kdc.conf is written (yk_realm_write_config):
#   YK_KLDAP_SERVERS     ldap_servers (default slapd's ldap:// URI; e.g.
#                        $YK_LDAPI_URI with YK_SLAPD_LDAPI=1)
#   YK_KLDAP_SASL_MECH   the KDC binds with this SASL mechanism
#                        (ldap_kdc_sasl_mech, e.g. EXTERNAL over ldapi://)
#                        instead of ldap_kdc_dn and the password file
#
# The directory's access rules, first match wins:
#   1. ours, ldap-schema/acl.conf as shipped (lib.sh puts it first);
#   2. kldap's, yk_kldap_acl: the KDC's DN writes under the Kerberos
#      container and the Kerberos attributes elsewhere and reads the rest;
#      the token administrators (a group) add object classes and find
#      principals; the helpdesk finds principal entries; kadmin.local binds
#      as the rootdn (objectClass comes before @krbPrincipalAux, which
#      includes it);
#   3. everyone reads the rest (yk_kldap_acl ends with "access to *", so
#      lib.sh's permissive rest, which lets the KDC write anything, is
#      never reached).

YK_KLDAP_SRCDIR=${top_srcdir:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." &&
    pwd)}
# shellcheck source=realm.sh
. "$YK_KLDAP_SRCDIR/tests/integration/realm.sh"

YK_KLDAP_CONTAINER="cn=krbContainer,$YK_LDAP_BASE"
YK_KLDAP_REALM_DN="cn=$YK_REALM,$YK_KLDAP_CONTAINER"
YK_KLDAP_SUBTREE=$YK_PEOPLE_DN
YK_KLDAP_KEYFILE=
YK_KLDAP_UDP_PORT=

# kdb5_ldap_util and the kldap back end (else skip).
yk_kldap_check_tools() {
    PATH=$PATH:/usr/sbin
    command -v kdb5_ldap_util >/dev/null 2>&1 ||
        yk_skip "kdb5_ldap_util not found (apt-get install krb5-kdc-ldap)"
}

# kldap's access rules (slapd.conf form) for the test DNs, printed; they
# go after ours (YK_SLAPD_EXTRA_ACL).
yk_kldap_acl() {
    local c=$YK_KLDAP_CONTAINER
    local kdc="dn.exact=\"$YK_KDC_DN\""
    local admins="group/groupOfNames/member.exact=\"$YK_ADMIN_GROUP_DN\""
    local helpdesk="dn.exact=\"$YK_HELPDESK_DN\""
    cat <<EOF
access to attrs=userPassword
	by self write
	by anonymous auth
	by * none
access to dn.subtree="$c" attrs=objectClass
	by $kdc write
	by $admins write
	by $helpdesk read
	by * none
access to dn.subtree="$c"
	attrs=entry,krbPrincipalName,krbSubTrees,krbSearchScope
	by $kdc write
	by $admins read
	by $helpdesk read
	by * none
access to dn.subtree="$c"
	by $kdc write
	by * none
access to attrs=krbPrincipalName
	by $kdc write
	by $admins read
	by $helpdesk read
	by * none
access to attrs=objectClass
	by $admins write
	by * read
access to attrs=@krbPrincipalAux,@krbTicketPolicyAux
	by $kdc write
	by * none
access to *
	by * read
EOF
}

# One line of kldap's service password file for DN and password PW:
# "DN#{HEX}<hex of PW>" (what kdb5_ldap_util stashsrvpw writes).
yk_kldap_stash_line() {
    printf '%s#{HEX}%s\n' "$1" \
        "$(printf '%s' "$2" | od -An -v -tx1 | tr -d ' \n')"
}

# Write kdc.conf for the kldap realm: the database in [dbmodules], the
# module's non-LDAP settings in the realm section, no yubikey_ldap_*.
# The KDC's UDP listener has a port of its own (YK_KLDAP_UDP_PORT):
# clients try TCP first (udp_preference_limit = 1), and their fallback to
# UDP on the TCP port is refused at once, so a DISCARD (the KDC closes the
# TCP connection) fails fast instead of after libkrb5's UDP retries.
yk_kldap_write_kdc_conf() {
    local d=$YK_KRB5_DIR kdc_bind="ldap_kdc_dn = $YK_KDC_DN"
    [ -n "${YK_KLDAP_SASL_MECH:-}" ] &&
        kdc_bind="ldap_kdc_sasl_mech = $YK_KLDAP_SASL_MECH"
    cat > "$d/kdc.conf" <<EOF
[kdcdefaults]
 kdc_listen = 127.0.0.1:$YK_KLDAP_UDP_PORT
 kdc_tcp_listen = 127.0.0.1:$YK_KDC_PORT

[realms]
 $YK_REALM = {
  database_module = LDAP
  key_stash_file = $d/stash
  acl_file = $d/kadm5.acl
  kdc_listen = 127.0.0.1:$YK_KLDAP_UDP_PORT
  kdc_tcp_listen = 127.0.0.1:$YK_KDC_PORT
  default_principal_flags = +preauth
  yubikey_master_key_file = $d/master.keyring
  yubikey_cache_ttl = ${YK_CACHE_TTL:-5}
  yubikey_breaker_time = ${YK_BREAKER_TIME:-10}
${YK_KDC_EXTRA:-}
 }

[dbmodules]
 LDAP = {
  db_library = kldap
  ldap_servers = ${YK_KLDAP_SERVERS:-ldap://127.0.0.1:$YK_SLAPD_PORT}
  ldap_kerberos_container_dn = $YK_KLDAP_CONTAINER
  $kdc_bind
  ldap_kadmind_dn = $YK_ADMIN_DN
  ldap_service_password_file = $YK_KLDAP_KEYFILE
 }

[plugins]
 kdcpreauth = {
  module = yubikey:$YK_KDC_MODULE
 }

[logging]
 kdc = FILE:$YK_KDC_LOG
 admin_server = FILE:$d/kadmin.log
 default = FILE:$d/krb5.log
EOF
}

# realm.sh's writer (a DB2 kdc.conf and both krb5.conf files), kept under
# another name: yk_kdc_start calls yk_realm_write_config when it moves the
# KDC to a new port, and on this realm that must write the kldap kdc.conf.
eval "yk_kldap_db2_write_config() $(declare -f yk_realm_write_config |
    tail -n +2)"

# Both krb5.conf files as realm.sh writes them, and the kldap kdc.conf
# with a new UDP port (the old one may be what was taken).
yk_realm_write_config() {
    YK_KLDAP_UDP_PORT=$(yk_realm_free_port) || yk_fail "no free port"
    [ "$YK_KLDAP_UDP_PORT" != "$YK_KDC_PORT" ] || yk_fail "port clash"
    yk_kldap_db2_write_config
    yk_kldap_write_kdc_conf
}

# The whole kldap realm: slapd started, the realm made with
# kdb5_ldap_util, the KDC configured (not started), the master keyring.
yk_kldap_setup() {
    [ -n "$YK_TMP" ] || yk_init
    yk_realm_check_tools
    yk_kldap_check_tools
    YK_SLAPD_EXTRA_ACL=$(yk_kldap_acl)
    yk_slapd_setup
    yk_slapd_start
    yk_kldap_realm_setup
}

# The kldap realm on the running slapd of lib.sh (YK_LDAP_URI; e.g. A of
# replica.sh, whose slapd.conf got YK_SLAPD_EXTRA_ACL=$(yk_kldap_acl)):
# the KDC configured (not started), the realm made with kdb5_ldap_util,
# the master keyring.  Part of yk_kldap_setup.
yk_kldap_realm_setup() {
    yk_realm_check_tools
    yk_kldap_check_tools
    YK_KRB5_DIR=$YK_TMP/krb5
    YK_KDC_LOG=$YK_KRB5_DIR/kdc.log
    YK_KRB5_CONF=$YK_KRB5_DIR/krb5.conf
    YK_KRB5_CONF_PLAIN=$YK_KRB5_DIR/krb5-plain.conf
    YK_KRB5_CONF_STOCK=$YK_KRB5_DIR/krb5-stock.conf
    YK_KLDAP_KEYFILE=$YK_KRB5_DIR/service.keyfile
    mkdir -p "$YK_KRB5_DIR" || yk_fail "mkdir $YK_KRB5_DIR"
    YK_KDC_PORT=$(yk_realm_free_port) || yk_fail "no free port"
    (umask 077
     { yk_kldap_stash_line "$YK_KDC_DN" "$YK_KDC_PW"
       yk_kldap_stash_line "$YK_ADMIN_DN" "$YK_ADMIN_PW"
     } > "$YK_KLDAP_KEYFILE"
     printf '%s\n' "$YK_YKADMIN_PW" > "$YK_KRB5_DIR/ykadmin.pw")
    : > "$YK_KRB5_DIR/kadm5.acl"
    yk_realm_write_config

    export KRB5_CONFIG=$YK_KRB5_CONF
    export KRB5_KDC_PROFILE=$YK_KRB5_DIR/kdc.conf
    export KRB5CCNAME=FILE:$YK_KRB5_DIR/ccache
    export KRB5RCACHEDIR=$YK_KRB5_DIR
    unset KRB5_CLIENT_KTNAME KRB5_KTNAME KRB5_TRACE

    kdb5_ldap_util -D "$YK_ADMIN_DN" -w "$YK_ADMIN_PW" -H "$YK_LDAP_URI" \
        create -r "$YK_REALM" -subtrees "$YK_KLDAP_SUBTREE" -sscope sub \
        -s -P "$YK_DB_PASSWORD" < /dev/null \
        > "$YK_KRB5_DIR/kdb5_ldap_util.log" 2>&1 ||
        { cat "$YK_KRB5_DIR/kdb5_ldap_util.log" >&2;
          yk_fail "kdb5_ldap_util create failed"; }
    yk_ykadmin init-master-key > "$YK_KRB5_DIR/ykadmin.log" 2>&1 ||
        { cat "$YK_KRB5_DIR/ykadmin.log" >&2;
          yk_fail "ykadmin init-master-key failed"; }
}

# A principal NAME@REALM (kadmin.local addprinc) with PW ("-" =
# -randkey) and the given options: without "-x dn=..." its entry goes into
# the realm container.  Fails the test when addprinc fails.
yk_kldap_addprinc() {
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
}

# An ordinary directory user uid=UID,ou=people,BASE with password PW.
yk_kldap_user() {
    yk_ldap_modify <<EOF
dn: uid=$1,$YK_PEOPLE_DN
changetype: add
objectClass: inetOrgPerson
uid: $1
cn: $1
sn: $1
userPassword: $2
EOF
}

# A principal NAME@REALM put on the existing entry DN.
yk_kldap_addprinc_dn() {
    local name=$1 pw=$2 dn=$3
    shift 3
    yk_kldap_addprinc "$name" "$pw" -x "dn=$dn" "$@"
}

# The principal's failed-login count as kadmin.local getprinc shows it.
yk_kldap_failcount() {
    kadmin.local -r "$YK_REALM" getprinc "$1" 2>/dev/null |
        sed -n 's/^Failed password attempts: //p'
}
