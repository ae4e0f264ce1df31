#!/bin/bash
# SPDX-License-Identifier: MIT
# readme.sh: README.md's Configuration, run as written.
#
# Extracts the README blocks that follow a "<!-- readme-test: NAME -->"
# marker, replaces the placeholders of README's table with this test's
# values (and the installed module paths with the build tree's), and runs
# them: the password files; the example directory of ldap-schema/example/
# filled and loaded (slapd.conf form: started; cn=config form: made
# offline and compared with the slapd.conf form); kdc.conf and krb5.conf
# as the whole yubikey configuration of a DB2 realm; ldapadd of a
# principal entry; ykadmin init-master-key and enroll --require; then the
# first login (password + OTP, the H flag, a replay refused) and delprinc
# with the kadm5 hook removing the token from the directory.  A marker
# missing or doubled, a placeholder the test does not know or left in a
# generated file, or a block that fails, fails the test.
# With YK_README_INSTALLED=1 (tools/check, the Debian packages
# installed) the blocks run as written: the packages' module paths,
# /usr/sbin/ykadmin and /usr/share/krb5-yubikey.
# Exit 0 pass, 1 fail, 77 skip (announced).

set -u
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"

README=$YK_SRCDIR/README.md
# The packages' paths README names (amd64's triplet), and this machine's.
README_PLUGINS=/usr/lib/x86_64-linux-gnu/krb5/plugins
DEB_PLUGINS=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null ||
    gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)/krb5/plugins
# YK_README_INSTALLED=1 (tools/check, with the Debian packages installed):
# the blocks run against the installed files, as written.
INSTALLED=${YK_README_INSTALLED:-0}
if [ "$INSTALLED" = 1 ]; then
    HOOK_MODULE=$DEB_PLUGINS/kadm5_hook/yubikey_kadm5_hook.so
    YK_KDC_MODULE=$DEB_PLUGINS/preauth/yubikey_kdc.so
    YK_CLIENT_MODULE=$DEB_PLUGINS/preauth/yubikey_client.so
    YK_YKADMIN_BIN=/usr/sbin/ykadmin
    SHAREDIR=/usr/share/krb5-yubikey
    for f in "$HOOK_MODULE" "$YK_KDC_MODULE" "$YK_CLIENT_MODULE" \
        "$YK_YKADMIN_BIN" "$SHAREDIR/yubikey.schema"; do
        [ -e "$f" ] || yk_fail "installed mode: $f is not installed"
    done
else
    HOOK_MODULE=$YK_BUILDDIR/.libs/yubikey_kadm5_hook.so
    SHAREDIR=$YK_SRCDIR/ldap-schema
fi
MARKERS="passwords ldap-files slapd.conf cn=config kdc.conf krb5.conf
ldapadd ykadmin delprinc"
ALICE_PW=alice-readme-pw
BASE=$YK_LDAP_BASE

yk_init
yk_realm_check_tools
[ -e "$HOOK_MODULE" ] || yk_fail "$HOOK_MODULE is not built (run make first)"
for tool in slappasswd slaptest slapmodify slapcat; do
    command -v "$tool" >/dev/null 2>&1 ||
        yk_skip "$tool not found (apt-get install slapd)"
done
[ -f "$YK_KRB5_LDIF_GZ" ] ||
    yk_skip "krb5's kerberos LDIF missing: $YK_KRB5_LDIF_GZ"
T=$YK_TMP
YK_KRB5_DIR=$T/krb5
YK_KDC_LOG=$YK_KRB5_DIR/kdc.log
YK_KRB5_CONF=$YK_KRB5_DIR/krb5.conf
mkdir -p "$YK_KRB5_DIR" "$T/schema" "$T/ldap" "$T/cnconfig" "$T/run" \
    "$T/bin" "$T/work" "$T/blocks" || yk_fail "mkdir in $T"
# README's commands name the installed ykadmin: the built one here.
ln -s "$YK_YKADMIN_BIN" "$T/bin/ykadmin" || yk_fail "ln ykadmin"
export PATH=$T/bin:$PATH

# --- the placeholders ----------------------------------------------------

# This test's value of each placeholder of README's table (LDAP_URI and
# KDC_HOST:PORT once slapd and the KDC have their ports).
declare -A VAL=(
    [REALM]=$YK_REALM [BASE]=$BASE [DC]=${BASE%%,*}
    [LDAP_URI]="" [KDC_HOST:PORT]="" [DIR]=$YK_KRB5_DIR [SHAREDIR]=$SHAREDIR
    [SCHEMADIR]=$T/schema [LDAPDIR]=$T/ldap [DBDIR]=$T/ldap/db
    [RUNDIR]=$T/run
)
VAL[DC]=${VAL[DC]#dc=}
# The installed paths of README (the packages') and the files they stand
# for: the build tree's, or this machine's installed ones.
if [ "$INSTALLED" = 1 ]; then
    declare -A PATHS=(
        [$README_PLUGINS/preauth/]=$DEB_PLUGINS/preauth/
        [$README_PLUGINS/kadm5_hook/]=$DEB_PLUGINS/kadm5_hook/
    )
else
    declare -A PATHS=(
        [$README_PLUGINS/preauth/]=$YK_BUILDDIR/.libs/
        [$README_PLUGINS/kadm5_hook/]=$YK_BUILDDIR/.libs/
    )
fi
# What is left of an installed path when a file was not filled in.
LEFT_RE=$README_PLUGINS/
[ "$INSTALLED" = 1 ] && LEFT_RE=@@none@@

# The placeholders README's table lists (first column, in capitals).
readme_placeholders() {
    sed -n 's/^| `\([A-Z_:]*\)` |.*/\1/p' "$README"
}

names=$(readme_placeholders | sort)
[ -n "$names" ] || yk_fail "README.md: no placeholder table found"
known=$(printf '%s\n' "${!VAL[@]}" | sort)
[ "$names" = "$known" ] || {
    diff <(echo "$known") <(echo "$names") >&2
    yk_fail "README's placeholders (>) and this test's (<) differ"; }
# A regular expression matching any placeholder as a word.
PH_RE=$(printf '%s' "$names" | paste -sd'|')
PH_RE="(^|[^[:alnum:]_])($PH_RE)([^[:alnum:]_]|\$)"

# Print the block after README's marker NAME, without its indentation;
# fail when the marker is missing, doubled or not followed by a block.
readme_block() {
    local name=$1 n out
    n=$(grep -cFx "<!-- readme-test: $name -->" "$README")
    [ "$n" = 1 ] ||
        yk_fail "README.md: marker readme-test: $name found $n times"
    out=$(awk -v m="<!-- readme-test: $name -->" '
        $0 == m { state = 1; next }
        state == 1 && /^$/ { next }
        state == 1 && /^    / { state = 2 }
        state == 1 { exit }
        state == 2 && (/^    / || /^$/) {
            sub(/^    /, ""); line[++n] = $0; next }
        state == 2 { exit }
        END { while (n > 0 && line[n] == "") n--
              for (i = 1; i <= n; i++) print line[i] }' "$README")
    [ -n "$out" ] || yk_fail "README.md: no code block after marker $name"
    printf '%s\n' "$out"
}

# Replace the placeholders (as whole words; @NAME@ tokens, the example
# files' own placeholders, are kept) and the installed paths in standard
# input with this test's values.
readme_subst() {
    local script=$T/readme.sed k v
    {
        printf '%s\n' 's/@\([A-Z_]*\)@/_ykat_\1_ykat_/g'
        for k in "${!VAL[@]}"; do
            v=${VAL[$k]}
            [ -n "$v" ] || continue
            v=$(printf '%s' "$v" | sed 's/[|&\\]/\\&/g')
            printf 's|\\b%s\\b|%s|g\n' "$k" "$v"
        done
        for k in "${!PATHS[@]}"; do
            printf 's|%s|%s|g\n' "$k" "${PATHS[$k]}"
        done
        echo 's/_ykat_/@/g'
    } > "$script"
    sed -f "$script"
}

# Fail when FILE holds a placeholder of README's, an installed path, or
# (unless the third argument is "script": a block that fills them in)
# a placeholder of the example files (@NAME@): something left unfilled.
readme_check_filled() {
    local f=$1 what=$2 re="@[A-Z_]+@|$LEFT_RE" left
    [ "${3:-}" = script ] && re=$LEFT_RE
    left=$(grep -nE "$re" "$f")
    [ -z "$left" ] || yk_fail "$what: not filled in: $left"
    left=$(sed 's/@[A-Z_]*@//g' "$f" | grep -nE "$PH_RE")
    [ -z "$left" ] || yk_fail "$what: README placeholder left: $left"
}

# Write README's block NAME, filled in, to FILE (a third argument goes to
# readme_check_filled).
readme_file() {
    local text
    text=$(readme_block "$1") || exit 1
    printf '%s\n' "$text" | readme_subst > "$2" || yk_fail "cannot write $2"
    readme_check_filled "$2" "README block $1" "${3:-}"
}

# Run README's block NAME with bash -e in $T/work, standard input from
# INPUT (default /dev/null); output in $T/blocks/NAME.out.
readme_run() {
    local name=$1 input=${2:-/dev/null} script
    script=$T/blocks/$(echo "$name" | tr -c 'a-z0-9.\n-' _).sh
    readme_file "$name" "$script" script
    (cd "$T/work" && bash -e -o pipefail "$script") < "$input" \
        > "${script%.sh}.out" 2>&1 ||
        { cat "${script%.sh}.out" >&2;
          yk_fail "README block $name failed (as $script)"; }
}

for m in $MARKERS; do
    readme_block "$m" > /dev/null
done
yk_ok "README.md holds each marked block once, and the test knows its" \
    "placeholders: $(printf '%s' "$names" | tr '\n' ' ')"

# --- the directory -------------------------------------------------------

readme_run passwords
for id in root kdc ykadmin hook helpdesk; do
    f=$YK_KRB5_DIR/$id.pw
    [ -s "$f" ] || yk_fail "passwords: $f missing or empty"
    [ "$(stat -c %a "$f")" = 600 ] || yk_fail "passwords: $f not mode 0600"
    [ "$(tail -c 1 "$f" | od -An -c | tr -d ' ')" != '\n' ] ||
        yk_fail "passwords: $f ends in a newline"
done
yk_ok "password files: mode 0600, no trailing newline"

readme_run ldap-files
for f in slapd.conf config.ldif base.ldif yubikey-acl.conf yubikey-acl.ldif
do
    [ -s "$T/ldap/$f" ] || yk_fail "ldap-files: $T/ldap/$f not written"
    readme_check_filled "$T/ldap/$f" "ldap-files: $f"
done
yk_ok "ldap-schema/example/ and acl.* filled in, no placeholder left"

readme_run slapd.conf
yk_slapd_start -f "$T/ldap/slapd.conf"
VAL[LDAP_URI]=$YK_LDAP_URI
yk_ok "slapd runs from the example's slapd.conf ($YK_LDAP_URI)"

# The cn=config form, made into a second slapd.d, must configure what
# slapd.conf does: slaptest converts slapd.conf to cn=config, and both
# are compared (modules, schemas in order, the database's suffix, root
# DN, indexes, access rules in order, overlay), spelling normalised.
cn_summary() {
    slapcat -n0 -F "$1" -o ldif-wrap=no | awk '
        function sorted(s,   a, n, i, j, t, out) {
            n = split(s, a, ",")
            for (i = 2; i <= n; i++)
                for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
                    t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
            out = a[1]
            for (i = 2; i <= n; i++) out = out "," a[i]
            return out
        }
        /^dn: / { dn = substr($0, 5)
            if (dn ~ /,cn=schema,cn=config$/) print "schema: " dn
            next }
        /^olc(ModuleLoad|PidFile|ArgsFile): / { print; next }
        dn !~ /olcDatabase=\{1\}mdb,cn=config$/ { next }
        /^olcDbIndex: / { print $1, $2, sorted($3); next }
        /^olc(Suffix|RootDN|Access|Overlay|UniqueURI): / {
            gsub(/  */, " "); gsub(/dn\.base=/, "dn.exact="); print }'
}
# The cn=config run gets its own LDAPDIR, DBDIR and SCHEMADIR (schema
# files copied from a read-only source tree, as in make distcheck, cannot
# be copied over).
VAL[LDAPDIR]=$T/cnconfig VAL[DBDIR]=$T/cnconfig/db
VAL[SCHEMADIR]=$T/cnconfig/schema
mkdir "$T/cnconfig/schema" || yk_fail "mkdir"
readme_run ldap-files
readme_run cn=config
VAL[LDAPDIR]=$T/ldap VAL[DBDIR]=$T/ldap/db VAL[SCHEMADIR]=$T/schema
mkdir "$T/converted" || yk_fail "mkdir"
slaptest -Q -f "$T/ldap/slapd.conf" -F "$T/converted" \
    > "$T/slaptest.out" 2>&1 ||
    { cat "$T/slaptest.out" >&2;
      yk_fail "slaptest cannot convert slapd.conf"; }
cn_summary "$T/converted" > "$T/summary.slapd.conf"
cn_summary "$T/cnconfig/slapd.d" > "$T/summary.cn=config"
diff "$T/summary.slapd.conf" "$T/summary.cn=config" >&2 ||
    yk_fail "config.ldif (>) does not configure what slapd.conf (<) does"
got=$(sed -n 's/^olcAccess: \({[0-9]*}to [^ ]*\).*/\1/p' \
    "$T/summary.cn=config" | head -3 | tr '\n' ' ')
want="{0}to attrs=yubikeyTokenSecret {1}to attrs=yubikeyTokenState"
want="$want {2}to attrs=yubikeyPublicId,yubikeyPolicy "
[ "$got" = "$want" ] ||
    yk_fail "the shipped rules are not the first ones: $got"
yk_ok "config.ldif + yubikey-acl.ldif configure what slapd.conf does," \
    "the shipped rules first"

# --- the realm -----------------------------------------------------------

# kdc.conf is README's block with what it leaves to "its usual
# relations" (database, listeners, logs) added in the realm's subsection
# and after it; krb5.conf is README's block alone.  realm.sh calls this
# again when the KDC must move to another port.
yk_realm_write_config() {
    local d=$YK_KRB5_DIR
    VAL[KDC_HOST:PORT]=127.0.0.1:$YK_KDC_PORT
    readme_file kdc.conf "$d/kdc.readme.conf"
    readme_file krb5.conf "$YK_KRB5_CONF"
    printf '%s\n' "  database_name = $d/principal" \
        "  key_stash_file = $d/stash" "  acl_file = $d/kadm5.acl" \
        "  kdc_listen = 127.0.0.1:$YK_KDC_PORT" \
        "  kdc_tcp_listen = 127.0.0.1:$YK_KDC_PORT" > "$d/kdc.usual"
    awk -v head=" $YK_REALM = {" -v usual="$d/kdc.usual" '
        { print }
        $0 == head { while ((getline l < usual) > 0) print l; n++ }
        END { exit n != 1 }' "$d/kdc.readme.conf" > "$d/kdc.conf" ||
        yk_fail "README's kdc.conf lacks one \" $YK_REALM = {\" line"
    cat >> "$d/kdc.conf" <<EOF

[kdcdefaults]
 kdc_listen = 127.0.0.1:$YK_KDC_PORT
 kdc_tcp_listen = 127.0.0.1:$YK_KDC_PORT

[logging]
 kdc = FILE:$YK_KDC_LOG
 admin_server = FILE:$d/kadmin.log
 default = FILE:$d/krb5.log
EOF
}

YK_KDC_PORT=$(yk_realm_free_port) || yk_fail "no free port"
yk_realm_write_config
yk_realm_kdb_create

# ldapsearch as one of the example's identities, with its password file.
as() {
    local id=$1
    shift
    yk_ldapsearch_as "cn=$id,$BASE" "$(cat "$YK_KRB5_DIR/$id.pw")" "$@"
}

readme_run ldapadd
as kdc -b "$BASE" "(krbPrincipalName=bob@$YK_REALM)" dn | grep -q '^dn: ' ||
    yk_fail "ldapadd: the KDC does not find bob's entry"
yk_ok "the token administrator added bob's entry; the KDC finds it"

printf '%s\n%s\n' "$ALICE_PW" "$ALICE_PW" > "$T/addprinc.in"
readme_run ykadmin "$T/addprinc.in"
kadmin.local -r "$YK_REALM" getprinc alice 2>/dev/null |
    grep '^Attributes:' | grep -q 'REQUIRES_HW_AUTH' ||
    yk_fail "ykadmin enroll --require: alice is not +requires_hwauth"
tok=$T/work/alice.tok
pubid=$("$YK_YKEMU_BIN" --public-id "$tok") || yk_fail "no token in $tok"
ALICE_DN=uid=alice,ou=people,$BASE
as ykadmin -b "$ALICE_DN" -s base yubikeyPublicId yubikeyTokenSecret \
    > "$T/alice.before"
if ! grep -qx "yubikeyPublicId: $pubid" "$T/alice.before" ||
    ! grep -q '^yubikeyTokenSecret: ' "$T/alice.before"; then
    cat "$T/alice.before" >&2
    yk_fail "enroll: token $pubid not on alice's entry"
fi
got=$(as helpdesk -b "$ALICE_DN" -s base yubikeyTokenSecret \
    yubikeyTokenState | sed -n 's/^\(yubikey[A-Za-z]*\):.*/\1/p' | sort -u)
[ "$got" = yubikeyTokenState ] ||
    yk_fail "the helpdesk should see the token state only, sees: $got"
yk_ok "alice enrolled ($pubid, +requires_hwauth); the helpdesk sees" \
    "the state, not the secret"

# --- the first login -----------------------------------------------------

yk_kdc_start
grep -qE "yubikey: krb5-yubikey [0-9.]+, realm $YK_REALM: token directory $YK_LDAP_URI," \
    "$YK_KDC_LOG" ||
    yk_fail "the KDC log lacks the module's start line (README, Configuration)"
otp=$(yk_otp "$tok")
printf '%s\n%s\n' "$ALICE_PW" "$otp" | yk_kinit alice ||
    { cat "$T/kinit.out" >&2; yk_fail "kinit alice with password + OTP"; }
grep -q "^YubiKey OTP for alice@$YK_REALM: " "$T/kinit.out" ||
    { cat "$T/kinit.out" >&2; yk_fail "kinit never asked for the OTP"; }
flags=$(yk_tgt_flags)
case "$flags" in
    *H*) ;;
    *) yk_fail "klist -f: the TGT's flags are '$flags', no H" ;;
esac
yk_kdc_attempts "alice@$YK_REALM" | tail -1 |
    grep -q "pubid=$pubid .*verdict=accepted reason=accepted" ||
    yk_fail "no accepted line for alice in the KDC log"
yk_ok "kinit alice: password + OTP, TGT flags $flags"

kdestroy -q 2>/dev/null
printf '%s\n%s\n' "$ALICE_PW" "$otp" | yk_kinit alice &&
    yk_fail "a replayed OTP was accepted"
klist -s 2>/dev/null && yk_fail "a ticket was issued for a replayed OTP"
yk_kdc_attempts "alice@$YK_REALM" | tail -1 |
    grep -q "verdict=refused reason=replay" ||
    yk_fail "no refused/replay line for alice in the KDC log"
yk_ok "the same OTP again: refused (reason=replay)"

# --- delprinc with the hook ----------------------------------------------

readme_run delprinc
grep -q yubikey "$T/blocks/delprinc.out" &&
    { cat "$T/blocks/delprinc.out" >&2;
      yk_fail "delprinc: the hook complained"; }
kadmin.local -r "$YK_REALM" getprinc alice > /dev/null 2>&1 &&
    yk_fail "delprinc: alice is still in the KDC database"
left=$(as ykadmin -b "$ALICE_DN" -s base objectClass yubikeyPublicId \
    yubikeyTokenSecret yubikeyTokenState yubikeyPolicy)
echo "$left" | grep -q '^dn: ' ||
    yk_fail "delprinc: alice's entry is gone (it should stay)"
echo "$left" | grep -qi 'yubikey' &&
    { echo "$left" >&2; yk_fail "delprinc left token data on alice's entry"; }
yk_ok "delprinc alice: the hook removed her token from the directory"

echo "PASS: README.md's configuration works as written"
