#!/bin/bash
# SPDX-License-Identifier: MIT
# kadm5hook.sh: the kadm5_hook "yubikey" under kadmin.local delprinc/renprinc.
#
# DB2 (realm.sh: the tokens live in lib.sh's slapd): a rename re-binds
# the token (ykadmin verify accepts an OTP for the new name, kinit works
# with it) and moves krbPrincipalName on the token entry; a rename the
# tokens could not follow is refused (another entry has the new name, a
# wrong keyring); delprinc strips every yubikey attribute and the class
# (the public id can be enrolled again); with slapd down delprinc and
# renprinc are refused with the reason, for principals with tokens and
# without; a write target naming two servers (yubikey_ldap_write_uri)
# is a CONFIGURATION ERROR that refuses both; a write the hook may not make is reported and kadmin.local
# exits 1, and renaming back restores the match.  Then the same script
# runs itself with the argument "kldap" (kldaprealm.sh, its own slapd):
# a principal in the realm container and principals on user entries
# (addprinc -x dn=...), renamed and deleted, the hook binding as kadmind
# (ldap_kadmind_dn) by default.  Exit 0 pass, 1 fail, 77 skip.

set -u
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
MODE=${1:-db2}
if [ "$MODE" = kldap ]; then
    # shellcheck source=kldaprealm.sh
    . "$srcdir/tests/integration/kldaprealm.sh"
else
    # shellcheck source=realm.sh
    . "$srcdir/tests/integration/realm.sh"
fi

HOOK_MODULE=$YK_BUILDDIR/.libs/yubikey_kadm5_hook.so
[ -e "$HOOK_MODULE" ] || yk_fail "$HOOK_MODULE is not built (run make first)"
R=$YK_REALM

# Tokens imported with known secrets; ykemu makes OTPs with the same key.
KA=00112233445566778899aabbccddeeff PA=a1b2c3d4e5f6 IDA=vvccccfbhvbb
KB=ffeeddccbbaa99887766554433221100 PB=0f1e2d3c4b5a IDB=vvccccfbhvbc

# kdc.conf gets the kadm5_hook every time the harness writes it (a KDC
# moved to another port rewrites it); the second [plugins] section is
# merged with the first.
eval "yk_hook_orig_write_config() $(declare -f yk_realm_write_config |
    tail -n +2)"
yk_realm_write_config() {
    yk_hook_orig_write_config
    cat >> "$YK_KRB5_DIR/kdc.conf" <<EOF

[plugins]
 kadm5_hook = {
  module = yubikey:$HOOK_MODULE
 }
EOF
}

# kadm5 COMMAND ARGS...: kadmin.local in argument form (its -q form exits
# 0 whatever happens); output in $T/kadm.out, returns its status.
kadm5() {
    kadmin.local -r "$R" "$@" > "$T/kadm.out" 2>&1
}

# kadm5_ok WHAT COMMAND ARGS...: kadmin.local must succeed, the hook
# silent.
kadm5_ok() {
    local what=$1 rc
    shift
    kadm5 "$@"
    rc=$?
    [ "$rc" = 0 ] || { cat "$T/kadm.out" >&2; yk_fail "$what: kadmin.local" \
        "$* exited $rc"; }
    ! grep -q yubikey "$T/kadm.out" ||
        { cat "$T/kadm.out" >&2; yk_fail "$what: the hook complained"; }
}

# kadm5_refused WHAT TEXT COMMAND ARGS...: kadmin.local must fail and
# print TEXT.
kadm5_refused() {
    local what=$1 text=$2
    shift 2
    kadm5 "$@" && { cat "$T/kadm.out" >&2; yk_fail "$what: not refused"; }
    grep -qF -- "$text" "$T/kadm.out" ||
        { cat "$T/kadm.out" >&2; yk_fail "$what: output lacks \"$text\""; }
}

# exists PRINC: the principal is in the Kerberos database.
exists() {
    kadmin.local -r "$R" getprinc "$1" >/dev/null 2>&1
}

# ykadm ARGS...: ykadmin as the token administrator (realm.sh's
# yk_ykadmin); output in $T/yk.out, returns its status.
ykadm() {
    yk_ykadmin "$@" > "$T/yk.out" 2>&1
}

# import PRINC ID KEY PRIVID: an active token with known secrets.
import() {
    ykadm import "$1" --public-id "$2" <<< "$3 $4" ||
        { cat "$T/yk.out" >&2; yk_fail "ykadmin import $1 $2 failed"; }
}

# emu FILE ID KEY PRIVID: a software token with the same secrets.
emu() {
    rm -f "$1"
    "$YK_YKEMU_BIN" --init "$1" --public-id "$2" --key-stdin \
        <<< "$3 $4" > /dev/null || yk_fail "ykemu --init $1 failed"
}

# verify_for TOKENFILE PRINC: the token's next OTP is accepted for PRINC.
verify_for() {
    local otp
    otp=$(yk_otp "$1")
    ykadm verify "$otp" ||
        { cat "$T/yk.out" >&2; yk_fail "verify of $1's OTP failed"; }
    grep -q "^OTP accepted for $2: " "$T/yk.out" ||
        { cat "$T/yk.out" >&2; yk_fail "the OTP was not accepted for $2"; }
}

# attrs DN: the entry's yubikey attributes and classes, one per line.
attrs() {
    yk_ldapsearch_as "$YK_ADMIN_DN" "$YK_ADMIN_PW" -b "$1" -s base \
        '(objectClass=*)' objectClass krbPrincipalName krbCanonicalName \
        yubikeyPublicId yubikeyTokenSecret yubikeyTokenState yubikeyPolicy
}

# no_yk DN WHAT: the entry exists and holds nothing of ours.
no_yk() {
    local out
    out=$(attrs "$1") || yk_fail "$2: $1 is gone"
    printf '%s\n' "$out" | grep -qi '^dn:' || yk_fail "$2: $1 is gone"
    ! printf '%s\n' "$out" | grep -qi 'yubikey' ||
        { printf '%s\n' "$out" >&2; yk_fail "$2: yubikey data left on $1"; }
}

# holds_token PRINC ID: ykadmin list PRINC shows the token.
holds_token() {
    ykadm list "$1" ||
        { cat "$T/yk.out" >&2; yk_fail "ykadmin list $1 failed"; }
    awk -v p="$2" '$3 == p { f = 1 } END { exit !f }' "$T/yk.out" ||
        { cat "$T/yk.out" >&2; yk_fail "$1 does not hold $2"; }
}

# ---------------------------------------------------------------------
# kldap (run as "kadm5hook.sh kldap"): kldap renames and deletes the
# principal's entry itself; the hook binds as kadmind (no yubikey_hook_*
# and no yubikey_ldap_* setting: [dbmodules] alone).
test_kldap() {
    yk_kldap_setup
    T=$YK_TMP
    grep -q 'yubikey_hook_\|yubikey_ldap_' "$KRB5_KDC_PROFILE" &&
        yk_fail "kdc.conf holds yubikey_hook_* or yubikey_ldap_* settings"
    yk_kldap_addprinc alice alice-pw
    for u in bob carol; do
        yk_kldap_user "$u" "$u-directory-pw"
        yk_kldap_addprinc_dn "$u" "$u-pw" "uid=$u,$YK_PEOPLE_DN"
    done
    import "alice@$R" "$IDA" "$KA" "$PA"
    emu "$T/a.tok" "$IDA" "$KA" "$PA"
    import "bob@$R" "$IDB" "$KB" "$PB"
    emu "$T/b.tok" "$IDB" "$KB" "$PB"
    import "carol@$R" vvccccfbhvbd "$KA" "$PA"

    # alice (an entry of the realm container): kldap renames the entry,
    # the hook re-binds the token there; delprinc takes the entry.
    kadm5_ok "renprinc alice" renprinc -force alice alice2
    holds_token "alice2@$R" "$IDA"
    verify_for "$T/a.tok" "alice2@$R"
    ykadm list "alice@$R" && yk_fail "alice@$R still has a token entry"
    kadm5_ok "delprinc alice2" delprinc -force alice2
    ykadm list "alice2@$R" && yk_fail "alice2's entry survived"
    import "carol@$R" "$IDA" "$KA" "$PA"
    yk_ok "kldap, realm container: renprinc re-binds the token, delprinc" \
        "takes it with the entry (the id enrolled again)"

    # bob (a user entry): kldap keeps the DN and moves krbPrincipalName.
    kadm5_ok "renprinc bob" renprinc -force bob bob2
    holds_token "bob2@$R" "$IDB"
    verify_for "$T/b.tok" "bob2@$R"
    attrs "uid=bob,$YK_PEOPLE_DN" |
        grep -q "^yubikeyTokenSecret: .*:bob2@$R\$" ||
        yk_fail "bob's secret is not bound to bob2"
    yk_ok "kldap, user entry: renprinc re-binds the token on the entry"

    # carol (a user entry with two tokens): kldap strips its attributes,
    # the hook ours; a plain user entry stays, and kldap's modify meets no
    # schema violation from what the hook removes only afterwards.
    kadm5_ok "delprinc carol" delprinc -force carol
    no_yk "uid=carol,$YK_PEOPLE_DN" "delprinc carol"
    attrs "uid=carol,$YK_PEOPLE_DN" | grep -qi 'krbPrincipal' &&
        yk_fail "kldap left Kerberos data on carol's entry"
    yk_ok "kldap, user entry: delprinc leaves a plain user entry"

    # bob2 (renamed on a user entry): kldap's own delete fails on the
    # krbCanonicalName its rename left (kldap-realm.md); the token stays
    # with the principal.  Without that attribute the delete goes through.
    kadm5_refused "delprinc bob2 (kldap's krbCanonicalName)" \
        "Object class violation" delprinc -force bob2
    exists bob2 || yk_fail "bob2 is gone after a failed delprinc"
    holds_token "bob2@$R" "$IDB"
    printf 'dn: uid=bob,%s\nchangetype: modify\ndelete: krbCanonicalName\n' \
        "$YK_PEOPLE_DN" | yk_ldap_modify
    kadm5_ok "delprinc bob2" delprinc -force bob2
    no_yk "uid=bob,$YK_PEOPLE_DN" "delprinc bob2"
    yk_kldap_addprinc dave dave-pw
    import "dave@$R" "$IDB" "$KB" "$PB"
    import "dave@$R" vvccccfbhvbd "$KA" "$PA"
    yk_ok "kldap, renamed user entry: kldap's failed delprinc keeps the" \
        "token; once it succeeds the token goes, the ids are free"
}

if [ "$MODE" = kldap ]; then
    test_kldap
    exit 0
fi

# ---------------------------------------------------------------------
# DB2: the token entries are found by the principal filter.
yk_init
T=$YK_TMP
# The hook binds as the token administrator: the shipped ACLs let only
# administrators write secrets, public ids and the class.
YK_KDC_EXTRA="  yubikey_hook_bind_dn = $YK_YKADMIN_DN
  yubikey_hook_password_file = $T/krb5/ykadmin.pw"
yk_realm_setup
ALICE_DN="uid=alice,$YK_PEOPLE_DN"

yk_realm_addprinc alice alice-pw
yk_realm_addprinc bob bob-pw
yk_realm_addprinc carol carol-pw
yk_realm_addprinc dave dave-pw
yk_realm_service HTTP/nodir.example.com
import "alice@$R" "$IDA" "$KA" "$PA"
emu "$T/a.tok" "$IDA" "$KA" "$PA"
verify_for "$T/a.tok" "alice@$R"

# hook_loaded TEXT: kadmin.local traces the hook's start line, with TEXT.
hook_loaded() {
    : > "$T/hook.trace"
    KRB5_TRACE=$T/hook.trace kadmin.local -r "$R" getprinc K/M \
        >/dev/null 2>&1 || yk_fail "kadmin.local getprinc K/M failed"
    grep -F "yubikey: krb5-yubikey" "$T/hook.trace" | grep -qF "$1" ||
        { cat "$T/hook.trace" >&2; yk_fail "no hook start line with: $1"; }
}
hook_loaded "kadm5_hook loaded, realm $R: token directory $YK_LDAP_URI, writes to $YK_LDAP_URI, bind as DN $YK_YKADMIN_DN (yubikey_hook_*); master keyring $YK_KRB5_DIR/master.keyring (1 keys, newest version 1)"
yk_ok "kadmin.local traces the hook's start line (identity, keyring)"

# renprinc: the token follows, bound to the new name; its state value is
# rewritten (counter kept, generation + 1).
state=$(attrs "$ALICE_DN" | sed -n 's/^yubikeyTokenState: //p')
ctr=$(printf '%s\n' "$state" | sed -n 's/.* ctr=\([0-9]*\) .*/\1/p')
gen=$(printf '%s\n' "$state" | sed -n 's/.* gen=\([0-9]*\) .*/\1/p')
[ -n "$ctr" ] && [ "$ctr" -gt 0 ] && [ -n "$gen" ] ||
    yk_fail "unexpected state value before the rename: $state"
kadm5_ok "renprinc alice" renprinc -force alice alice2
exists alice2 && ! exists alice || yk_fail "renprinc alice: KDB not renamed"
out=$(attrs "$ALICE_DN")
printf '%s\n' "$out" | grep -qx "krbPrincipalName: alice2@$R" &&
    ! printf '%s\n' "$out" | grep -q "krbPrincipalName: alice@" ||
    { echo "$out" >&2; yk_fail "krbPrincipalName of $ALICE_DN not moved"; }
printf '%s\n' "$out" | grep -q "^yubikeyTokenSecret: .*:alice2@$R\$" ||
    { echo "$out" >&2; yk_fail "the secret is not bound to alice2"; }
printf '%s\n' "$out" |
    grep -q "^yubikeyTokenState: yk1 id=$IDA ctr=$ctr gen=$((gen + 1)) " ||
    { echo "$out" >&2; yk_fail "the state was not rewritten (counter kept)"; }
holds_token "alice2@$R" "$IDA"
verify_for "$T/a.tok" "alice2@$R"
ykadm list "alice@$R" && yk_fail "alice@$R still has a token entry"
yk_ok "renprinc (DB2): token re-bound, krbPrincipalName moved, OTP" \
    "accepted for the new name only"

# The KDC agrees: password + OTP for the new name.
yk_kdc_start
printf '%s\n%s\n' alice-pw "$(yk_otp "$T/a.tok")" | yk_kinit alice2 ||
    { cat "$T/kinit.out" >&2; yk_fail "kinit alice2 with the OTP failed"; }
yk_kdc_attempts "alice2@$R" | tail -1 | grep -q "verdict=accepted" ||
    { yk_kdc_attempts "alice2@$R" >&2; yk_fail "KDC log: no accepted line"; }
yk_kdc_stop
yk_ok "kinit alice2 (password + OTP) after the rename"

# Refused renames: nothing changes anywhere.
yk_ldap_add_principal zed "$R"
kadm5_refused "renprinc onto a directory entry" \
    "the token directory already has an entry for zed@$R" \
    renprinc -force alice2 zed
exists alice2 && ! exists zed || yk_fail "refused rename changed the KDB"
holds_token "alice2@$R" "$IDA"
mv "$YK_KRB5_DIR/master.keyring" "$T/keyring.saved"
yk_ykadmin init-master-key > /dev/null 2>&1 ||
    yk_fail "init-master-key (other keyring) failed"
kadm5_refused "renprinc with a wrong keyring" \
    "its secret does not unwrap for alice2@$R" renprinc -force alice2 alice3
exists alice2 && ! exists alice3 || yk_fail "refused rename changed the KDB"
mv "$T/keyring.saved" "$YK_KRB5_DIR/master.keyring"
verify_for "$T/a.tok" "alice2@$R"
yk_ok "renprinc refused (rc 1, reason printed) when the token cannot" \
    "follow: new name taken in the directory, wrong keyring"

# delprinc: every yubikey attribute and the class go; the id is free.
kadm5_ok "delprinc alice2" delprinc -force alice2
exists alice2 && yk_fail "alice2 not deleted"
no_yk "$ALICE_DN" "delprinc alice2"
attrs "$ALICE_DN" | grep -qx "krbPrincipalName: alice2@$R" ||
    yk_fail "delprinc touched the DB2 entry's own attributes"
import "bob@$R" "$IDA" "$KA" "$PA"
verify_for "$T/a.tok" "bob@$R"
yk_ok "delprinc (DB2): token attributes and class removed, the public id" \
    "enrolled again for bob"

# Principals without tokens, or without a directory entry.
before=$(attrs "uid=carol,$YK_PEOPLE_DN")
kadm5_ok "delprinc carol (no token)" delprinc -force carol
[ "$(attrs "uid=carol,$YK_PEOPLE_DN")" = "$before" ] ||
    yk_fail "delprinc carol changed carol's entry"
kadm5_ok "renprinc (no entry)" renprinc -force HTTP/nodir.example.com \
    HTTP/nodir2.example.com
kadm5_ok "delprinc (no entry)" delprinc -force HTTP/nodir2.example.com
yk_ok "principals without tokens or entry: renamed and deleted as usual"

# slapd down: the hook cannot tell whether tokens would be orphaned.
yk_slapd_stop
kadm5_refused "delprinc bob, slapd down" \
    "yubikey: cannot check whether bob@$R holds YubiKey tokens" \
    delprinc -force bob
grep -q "not deleted, so that no token outlives its principal" \
    "$T/kadm.out" || { cat "$T/kadm.out" >&2; yk_fail "no reason given"; }
kadm5_refused "delprinc dave (no token), slapd down" \
    "cannot check whether dave@$R holds YubiKey tokens" delprinc -force dave
kadm5_refused "renprinc bob, slapd down" "bob@$R cannot be renamed" \
    renprinc -force bob bob2
exists bob && exists dave && ! exists bob2 ||
    yk_fail "refused operations changed the KDB"
yk_slapd_start
holds_token "bob@$R" "$IDA"
yk_ok "slapd down: delprinc and renprinc refused with the reason, KDB" \
    "unchanged"

# A write target naming two servers: the hook refuses to change token
# holders, as the KDC refuses to start its OTP logins; ykadmin too.
cp "$YK_KRB5_DIR/kdc.conf" "$T/kdc.conf.saved"
sed -i "s|^\( *yubikey_ldap_uri = .*\)$|\1\n  yubikey_ldap_write_uri = $YK_LDAP_URI ldap://127.0.0.2:9/|" \
    "$YK_KRB5_DIR/kdc.conf"
grep -q "yubikey_ldap_write_uri = $YK_LDAP_URI ldap" "$YK_KRB5_DIR/kdc.conf" ||
    yk_fail "no two-server write URI in kdc.conf"
TWO="yubikey_ldap_write_uri names 2 LDAP servers"
hook_loaded "kadm5_hook loaded, realm $R: CONFIGURATION ERROR: $TWO"
kadm5_refused "delprinc bob, two write servers" "$TWO" delprinc -force bob
kadm5_refused "renprinc bob, two write servers" "$TWO" \
    renprinc -force bob bob2
exists bob && ! exists bob2 || yk_fail "refused operations changed the KDB"
yk_ykadmin list "bob@$R" > "$T/yk.out" 2>&1 &&
    yk_fail "ykadmin list worked with two write servers"
grep -qF "$TWO" "$T/yk.out" ||
    { cat "$T/yk.out" >&2; yk_fail "ykadmin does not say \"$TWO\""; }
cp "$T/kdc.conf.saved" "$YK_KRB5_DIR/kdc.conf"
holds_token "bob@$R" "$IDA"
yk_ok "a write URI naming two servers: the hook's start line says" \
    "CONFIGURATION ERROR, delprinc and renprinc refused with it, ykadmin" \
    "too; KDB unchanged"

# A write the hook's identity may not make (the KDC's DN may not write
# secrets): the rename happened, the failure is printed and rc is 1;
# renaming back restores the match.
sed -i '/yubikey_hook_/d' "$YK_KRB5_DIR/kdc.conf"
hook_loaded "bind as DN $YK_KDC_DN (the KDC's identity (yubikey_hook_bind_dn is not set))"
kadm5 renprinc -force bob bob2 &&
    { cat "$T/kadm.out" >&2; yk_fail "failed re-bind: kadmin.local rc 0"; }
grep -qF "yubikey: bob@$R was renamed to bob2@$R, but its YubiKey tokens" \
    "$T/kadm.out" || { cat "$T/kadm.out" >&2; yk_fail "no failure report"; }
exists bob2 || yk_fail "the KDB rename did not happen"
holds_token "bob@$R" "$IDA"
kadm5 renprinc -force bob2 bob ||
    { cat "$T/kadm.out" >&2; yk_fail "renaming bob2 back failed"; }
verify_for "$T/a.tok" "bob@$R"
yk_ok "a failed postcommit write is reported (rc 1); renaming back" \
    "restores the match"

# The kldap realm, in a process (and a slapd) of its own.
yk_slapd_stop
"$BASH" "$0" kldap
exit $?
