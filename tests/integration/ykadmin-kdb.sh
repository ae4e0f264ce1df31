#!/bin/bash
# SPDX-License-Identifier: MIT
# ykadmin-kdb.sh: the ykadmin commands that touch the KDC's database or
# need a running KDC, on a DB2 realm (realm.sh) with the real krb5kdc.
#
# enroll --require sets +requires_preauth +requires_hwauth (checked with
# kadmin.local getprinc), refuses a principal missing from the database
# and sets nothing when the enrolment fails; the principal then logs in
# with password + OTP only.  Key rotation while the KDC runs, never
# restarted: a broken keyring copied over the KDC's is refused (logged,
# the old keyring kept, logins work); "rewrap --add-key" on the
# administrator's copy, copied over the KDC's keyring, is picked up
# within 5 s; logins work before and after "rewrap" moves every record to
# the new version.  purge removes the
# tokens of a deleted principal and stale pending records, and nothing
# else (a fresh pending record, another realm's entry, a live principal's
# token), and removes nothing when the database cannot be opened.  Exit 0
# pass, 1 fail, 77 skip.

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"
# shellcheck source=expect.sh
. "$srcdir/tests/integration/expect.sh"

R=$YK_REALM
yk_realm_setup
T=$YK_TMP
yk_realm_addprinc alice alice-pw
yk_realm_addprinc hw hw-pw -requires_preauth
yk_realm_addprinc hw2 hw2-pw -requires_preauth
yk_realm_addprinc gone gone-pw
yk_realm_addprinc erin erin-pw
yk_ldap_add_principal ldaponly
yk_ldap_add_principal x OTHER.ORG xother

# ykadmin as the token administrator; output in $T/out and $T/err.
yka() {
    yk_ykadmin "$@" > "$T/out" 2> "$T/err"
}

# The Attributes line of kadmin.local getprinc NAME.
attributes() {
    kadmin.local -r "$R" getprinc "$1" 2>/dev/null |
        sed -n 's/^Attributes: *//p'
}

# The public ids of NAME's tokens, sorted, on one line.
tokens_of() {
    yka list "$1" || { cat "$T/err" >&2; yk_fail "list $1 failed"; }
    awk 'NR > 1 && NF >= 3 { print $3 }' "$T/out" |
        grep -E '^[cbdefghijklnrtuv]+$' | sort | tr '\n' ' '
}

# kinit NAME with password PW and the next OTP of token file TOK.
login() {
    printf '%s\n%s\n' "$2" "$(yk_otp "$3")" | yk_kinit "$1@$R"
}

# ---------------------------------------------------------------------
# enroll --require
case "$(attributes hw)" in
    *REQUIRES_HW_AUTH*|*REQUIRES_PRE_AUTH*)
        yk_fail "hw starts with attributes: $(attributes hw)" ;;
esac
expect 1 "--require, principal not in the KDC database" -- enroll ldaponly \
    --require --emulate "$T/ldaponly.tok"
err_has "ldaponly@$R is not in the KDC database" "--require, no principal"
[ ! -e "$T/ldaponly.tok" ] || yk_fail "a refused --require wrote a file"
[ -z "$(tokens_of ldaponly)" ] || yk_fail "a refused --require wrote a token"
expect 1 "--require, no YubiKey" -- enroll hw2 --require
err_has "no YubiKey found" "--require without a device"
[ -z "$(attributes hw2)" ] ||
    yk_fail "a failed enrolment set flags: $(attributes hw2)"
expect 0 "enroll --require" -- enroll hw --require --emulate "$T/hw.tok"
err_has "require principal=hw@$R attributes=+requires_preauth,+requires_hw" \
    "--require log"
out_has "hw@$R now requires a hardware token" "--require output"
# The kadm5 library's "No dictionary file specified" chatter is not ours.
grep -qi "dictionary" "$T/err" "$T/out" &&
    { cat "$T/err" >&2; yk_fail "enroll --require printed the kadm5" \
        "library's dictionary notice"; }
[ "$(attributes hw)" = "REQUIRES_PRE_AUTH REQUIRES_HW_AUTH" ] ||
    yk_fail "after --require, hw has attributes: $(attributes hw)"
kadmin.local -r "$R" getprinc hw |
    grep -q "^Last modified: .*($(id -un)/admin@$R)" ||
    yk_fail "getprinc hw does not name the operator as the modifier"
yk_ok "enroll --require sets REQUIRES_PRE_AUTH REQUIRES_HW_AUTH" \
    "(kadmin.local getprinc); refused or failed enrolments set nothing"

yk_realm_enroll alice "$T/alice.tok"
yk_realm_enroll gone "$T/gone.tok"
yk_kdc_start

login hw hw-pw "$T/hw.tok" ||
    { cat "$T/kinit.out" >&2; yk_fail "hw: password + OTP refused"; }
printf 'hw-pw\n' | KRB5_CONFIG=$YK_KRB5_CONF_PLAIN yk_kinit "hw@$R" &&
    yk_fail "hw: a password-only client got a ticket"
grep -q "Generic preauthentication failure" "$YK_TMP/kinit.out" ||
    yk_fail "hw, password only: $(cat "$YK_TMP/kinit.out")"
yk_ok "the required token: password + OTP accepted, password alone refused"

# ---------------------------------------------------------------------
# Key rotation with the KDC running, never restarted.  The KDC looks at
# its keyring file at most every 5 s (YK_KEYRING_CHECK_MS), at an OTP
# login: one 5 s or more after a copy sees it.
KEYRING=$YK_KRB5_DIR/master.keyring
CHECK_WAIT=5.5
starts=$(yk_kdc_starts)
cp -p "$KEYRING" "$T/admin.keyring" || yk_fail "cp keyring"
# A damaged copy: refused, the keyring loaded before stays in use.
printf 'not a keyring\n' > "$KEYRING"
sleep "$CHECK_WAIT"
login alice alice-pw "$T/alice.tok" ||
    { cat "$T/kinit.out" >&2; yk_fail "alice refused (damaged keyring)"; }
want="KEYRING NOT RELOADED: realm $R: the master keyring $KEYRING changed"
grep -qF "$want" "$YK_KDC_LOG" ||
    yk_fail "no log line about the damaged keyring"

cp "$T/admin.keyring" "$KEYRING" || yk_fail "cp keyring back"
expect 0 "rewrap --add-key" -- rewrap --add-key --keyring "$T/admin.keyring"
out_has "Added key version 2" "add-key"
# The copy to the KDC: in place (same inode), as scp or cp would.
cp "$T/admin.keyring" "$KEYRING" || yk_fail "copy the new keyring"
sleep "$CHECK_WAIT"
login alice alice-pw "$T/alice.tok" ||
    { cat "$T/kinit.out" >&2; yk_fail "alice refused (records at v1)"; }
want="realm $R: master keyring $KEYRING changed: reloaded (2 keys, newest"
grep -qF "$want version 2)" "$YK_KDC_LOG" ||
    yk_fail "the KDC did not reload the copied keyring"
expect 0 "rewrap" -- rewrap
out_has "Re-wrapped 3 token records with key version 2; 0 already" "rewrap"
expect 0 "list --json" -- list --json
[ "$(grep -c '"key_version": 2' "$T/out")" = 3 ] ||
    yk_fail "records not at key version 2: $(cat "$T/out")"
login alice alice-pw "$T/alice.tok" ||
    { cat "$T/kinit.out" >&2; yk_fail "alice refused (records at v2)"; }
login hw hw-pw "$T/hw.tok" ||
    { cat "$T/kinit.out" >&2; yk_fail "hw refused (records at v2)"; }
expect 0 "ykadmin verify after rewrap" -- verify "$(yk_otp "$T/alice.tok")"
[ "$(yk_kdc_starts)" = "$starts" ] || yk_fail "the KDC was restarted"
yk_ok "rotation without a KDC restart: a damaged keyring copy refused" \
    "(logged, old keyring kept); the copied new keyring picked up within" \
    "5 s; logins work with records at version 1 and at 2"

# ---------------------------------------------------------------------
# purge
goneid=$("$YK_YKEMU_BIN" --public-id "$T/gone.tok")
aliceid=$("$YK_YKEMU_BIN" --public-id "$T/alice.tok")
now=$(date +%s)
stale=$((now - 7200))
yk_ldap_modify <<EOF
dn: uid=erin,$YK_PEOPLE_DN
changetype: modify
add: objectClass
objectClass: yubikeyPrincipalAux
-
add: yubikeyPublicId
yubikeyPublicId: vvcccccccfff
yubikeyPublicId: vvcccccccffg
-
add: yubikeyTokenSecret
yubikeyTokenSecret: yk1 id=vvcccccccfff st=pending serial= at=$stale by=test desc= wrap=x
yubikeyTokenSecret: yk1 id=vvcccccccffg st=pending serial= at=$now by=test desc= wrap=x
-
add: yubikeyTokenState
yubikeyTokenState: yk1 id=vvcccccccfff ctr=0 gen=0 nonce=- used=0
yubikeyTokenState: yk1 id=vvcccccccffg ctr=0 gen=0 nonce=- used=0

dn: uid=xother,$YK_PEOPLE_DN
changetype: modify
add: objectClass
objectClass: yubikeyPrincipalAux
-
add: yubikeyPublicId
yubikeyPublicId: vvcccccccffh
-
add: yubikeyTokenSecret
yubikeyTokenSecret: yk1 id=vvcccccccffh st=pending serial= at=$stale by=test desc= wrap=x
-
add: yubikeyTokenState
yubikeyTokenState: yk1 id=vvcccccccffh ctr=0 gen=0 nonce=- used=0
EOF
kadmin.local -r "$R" delprinc -force gone > "$T/delprinc.out" 2>&1 ||
    { cat "$T/delprinc.out" >&2; yk_fail "delprinc gone failed"; }
[ "$(tokens_of gone)" = "$goneid " ] ||
    yk_fail "delprinc already removed gone's token (a kadm5_hook?)"

# A database that cannot be opened: nothing removed.
sed "s|database_name = .*|database_name = $T/no-such-db|" \
    "$YK_KRB5_DIR/kdc.conf" > "$T/bad-kdc.conf"
KRB5_KDC_PROFILE=$T/bad-kdc.conf expect 1 "purge, no database" -- purge
err_has "cannot open the KDC database of $R" "purge, no database"
[ "$(tokens_of gone)" = "$goneid " ] || yk_fail "a failed purge removed"

expect 0 "purge --dry-run" -- purge --dry-run
out_has "Would remove token $goneid of gone@$R (principal-not-in-kdb)" \
    "dry run, gone"
out_has "Would remove token vvcccccccfff of erin@$R (stale-pending)" \
    "dry run, stale"
out_has "Would remove 2 tokens." "dry run count"
out_has "1 entry of other realms left alone." "dry run, other realm"
[ "$(tokens_of gone)" = "$goneid " ] || yk_fail "purge --dry-run removed"
expect 0 "purge" -- purge
out_has "Removed 2 tokens." "purge count"
err_has "purge principal=gone@$R public_id=$goneid reason=principal-not-in-kdb" \
    "purge log, gone"
err_has "purge principal=erin@$R public_id=vvcccccccfff reason=stale-pending" \
    "purge log, stale"
[ -z "$(tokens_of gone)" ] || yk_fail "purge left gone's token"
[ "$(tokens_of erin)" = "vvcccccccffg " ] ||
    yk_fail "purge: erin holds $(tokens_of erin)"
[ "$(tokens_of "x@OTHER.ORG")" = "vvcccccccffh " ] ||
    yk_fail "purge touched another realm's entry"
[ "$(tokens_of alice)" = "$aliceid " ] || yk_fail "purge touched alice"
expect 0 "purge again" -- purge
out_has "Removed 0 tokens." "purge is idempotent"
login alice alice-pw "$T/alice.tok" ||
    { cat "$T/kinit.out" >&2; yk_fail "alice refused after purge"; }
yk_ok "purge removes a deleted principal's token and a stale pending" \
    "record, nothing else; --dry-run and an unopenable database remove" \
    "nothing"

echo "PASS: ykadmin-kdb"
exit 0
