#!/bin/bash
# SPDX-License-Identifier: MIT
# ykadmin.sh: ykadmin against a real slapd, the way an administrator runs it.
#
# Keyring creation (and its ownership warnings), import (secrets on
# stdin), enrolment (emulated tokens; without a YubiKey attached, the
# "no YubiKey found" path; slot 1, --add, --replace, public id prefixes),
# list (table and --json), disable/enable/delete, policy, verify (the
# OTPs of emu/ykemu accepted, replays refused, --resync),
# raise-counters, key rotation (rewrap), uniqueness of public ids,
# malformed input, a wrong keyring and LDAP down (clear errors, nothing
# written), help and man page in step, and no secret in any output or log
# line.  Import files: ykadmin-import.sh; --require and purge (they need
# a KDC database): ykadmin-kdb.sh.  Exit 0 pass, 1 fail, 77 skip.

set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top_srcdir/tests/integration/lib.sh"
# shellcheck source=expect.sh
. "$top_srcdir/tests/integration/expect.sh"

YKADMIN=${YKADMIN:-$YK_BUILDDIR/ykadmin}
YKEMU=$YK_BUILDDIR/emu/ykemu
MANPAGE=$YK_SRCDIR/doc/ykadmin.8
[ -x "$YKADMIN" ] || yk_fail "ykadmin not built: $YKADMIN"
[ -x "$YKEMU" ] || yk_fail "ykemu not built: $YKEMU"

yk_init
T=$YK_TMP
ALL=$T/all-output.log        # every byte ykadmin printed, for the leak check
SECRETS=$T/secrets           # every secret used, one per line

# Known token secrets (import) and one more for a wrong-key OTP.
K1=00112233445566778899aabbccddeeff P1=a1b2c3d4e5f6 ID1=vvccccfbhvbb
K2=ffeeddccbbaa99887766554433221100 P2=0f1e2d3c4b5a
printf '%s\n' "$K1" "$P1" "$K2" "$P2" "$YK_YKADMIN_PW" > "$SECRETS"

# Run ykadmin; stdout in $T/out, stderr in $T/err, both appended to $ALL.
# Returns ykadmin's exit status.
yka() {
    local rc
    "$YKADMIN" "$@" > "$T/out" 2> "$T/err"
    rc=$?
    cat "$T/out" "$T/err" >> "$ALL"
    return $rc
}

# row PRINCIPAL PUBID: the list line of that token (empty when absent).
row() {
    yka list "$1" || { cat "$T/err" >&2; yk_fail "list $1 failed"; }
    awk -v p="$2" '$3 == p' "$T/out"
}

# field PRINCIPAL PUBID N: column N of that token's list line.
field() {
    row "$1" "$2" | awk -v n="$3" '{ print $n }'
}

# no_token PRINCIPAL WHAT: PRINCIPAL holds no token at all.
no_token() {
    yka list "$1" || { cat "$T/err" >&2; yk_fail "$2: list $1 failed"; }
    grep -q "has no token" "$T/out" ||
        { cat "$T/out" >&2; yk_fail "$2: $1 holds a token"; }
}

# ---------------------------------------------------------------------
# Help, usage errors and the man page: no directory needed.
CMDS="init-master-key rewrap enroll import list disable enable delete policy
verify raise-counters purge"
expect 0 "--help" -- --help
[ "$(grep -c '^  [a-z]' "$T/out")" = "$(echo $CMDS | wc -w)" ] ||
    yk_fail "--help lists other commands than: $CMDS"
for c in $CMDS; do
    grep -q "^  $c " "$T/out" || yk_fail "--help does not list $c"
    grep -q "^\.SS $(printf '%s' "$c" | sed 's/-/\\\\-/g')\b" "$MANPAGE" ||
        yk_fail "the man page has no section for $c"
done
opts=$(grep -o -- '--[a-z][a-z-]*' "$T/out" | sort -u)
for c in $CMDS; do
    expect 0 "$c --help" -- "$c" --help
    grep -q "^Usage: ykadmin \[GLOBAL OPTIONS\] $c" "$T/out" ||
        yk_fail "$c --help has no usage line"
    opts="$opts $(grep -o -- '--[a-z][a-z-]*' "$T/out" | sort -u)"
done
for o in $(printf '%s\n' $opts | sort -u); do
    grep -qF -- "$(printf '%s' "$o" | sed 's/-/\\-/g')" "$MANPAGE" ||
        yk_fail "the man page does not describe $o"
done
yk_ok "--help and COMMAND --help list what the man page describes"

expect 2 "no command" --
expect 2 "unknown command" -- frobnicate
expect 2 "unknown global option" -- --frobnicate list
expect 2 "missing option argument" -- --realm
expect 2 "enroll without principal" -- enroll
expect 2 "import without --public-id" -- import alice
expect 2 "secrets are never options" -- import alice --public-id "$ID1" \
    --key "$K1"
expect 2 "an option of another command" -- list --emulate x
expect 2 "extra argument" -- disable "$ID1" extra
expect 2 "bad policy" -- policy alice maybe
expect 2 "slot 3" -- enroll alice --slot 3
expect 2 "--add and --replace" -- enroll alice --add --replace
expect 2 "--public-id and a prefix" -- enroll alice --public-id vvcc \
    --public-id-prefix vv
expect 2 "an access code for an emulated token" -- enroll alice \
    --emulate "$T/x.emu" --access-code-file -
expect 2 "raise-counters without a target" -- raise-counters
expect 2 "raise-counters with two targets" -- raise-counters alice --all
expect 2 "raise-counters --by 0" -- raise-counters alice --by 0
expect 2 "raise-counters --by junk" -- raise-counters alice --by 12x
expect 2 "raise-counters --by too many" -- raise-counters --all --by 40000
expect 2 "import --file without a principal" -- import --file "$T/f"
expect 2 "import --file with both" -- import --file "$T/f" \
    --principal alice --map "$T/m"
expect 2 "import --file and a positional" -- import alice --file "$T/f"
expect 2 "import --file, bad format" -- import --file "$T/f" \
    --principal alice --format xml
expect 2 "import, principal twice" -- import alice --principal bob \
    --public-id "$ID1"
expect 2 "rewrap --kdc-user without --add-key" -- rewrap --kdc-user root
expect 2 "rewrap --add-key --dry-run" -- rewrap --add-key --dry-run
expect 2 "purge takes no argument" -- purge now
expect 2 "list, two principals" -- list alice bob --json
expect 2 "verify --resync without OTP" -- verify --resync
expect 2 "verify --force without --resync" -- verify --force x
[ ! -e "$T/x.emu" ] || yk_fail "a usage error wrote a file"
yk_ok "usage errors exit 2"

# ---------------------------------------------------------------------
# The directory and the configuration ykadmin reads.
yk_slapd_setup
yk_slapd_start
for p in alice bob carol dave erin frank; do
    yk_ldap_add_principal "$p"
done
mkdir -p "$T/kdb"

printf '%s\n' "$YK_YKADMIN_PW" > "$T/ykadmin.pw"
chmod 600 "$T/ykadmin.pw"
cat > "$T/kdc.conf" <<EOF
[realms]
	$YK_REALM = {
		yubikey_ldap_uri = $YK_LDAP_URI
		yubikey_ldap_bind_dn = $YK_YKADMIN_DN
		yubikey_ldap_password_file = $T/ykadmin.pw
		yubikey_ldap_base = $YK_LDAP_BASE
		yubikey_master_key_file = $T/keyring
		database_name = $T/kdb/principal
	}
EOF
cat > "$T/krb5.conf" <<EOF
[libdefaults]
	default_realm = $YK_REALM
EOF
export KRB5_CONFIG=$T/krb5.conf KRB5_KDC_PROFILE=$T/kdc.conf
unset SUDO_USER

# ---------------------------------------------------------------------
# init-master-key
expect 0 "init-master-key" -- init-master-key
[ "$(stat -c %a "$T/keyring")" = 600 ] ||
    yk_fail "keyring mode is $(stat -c %a "$T/keyring"), not 600"
err_has "init-master-key keyring=$T/keyring version=1" "init-master-key log"
sum=$(sha256sum < "$T/keyring")
expect 1 "init-master-key again" -- init-master-key
err_has "already exists" "init-master-key again"
[ "$(sha256sum < "$T/keyring")" = "$sum" ] ||
    yk_fail "init-master-key changed an existing keyring"
expect 1 "init-master-key --keyring existing" -- init-master-key \
    --keyring "$T/keyring"
expect 0 "init-master-key --keyring other" -- init-master-key \
    --keyring "$T/other-keyring"
[ "$(stat -c %a "$T/other-keyring")" = 600 ] ||
    yk_fail "--keyring file mode is not 600"
! grep -q warning "$T/err" || yk_fail "init-master-key warned: $(cat "$T/err")"
expect 0 "init-master-key, another KDC user" -- init-master-key \
    --keyring "$T/nobody-keyring" --kdc-user nobody
err_has "not by the KDC's user nobody (given by --kdc-user)" \
    "keyring owner warning"
err_has "chown nobody $T/nobody-keyring" "keyring owner advice"
mkdir -m 777 "$T/open-dir"
expect 0 "init-master-key in a world-writable directory" -- \
    init-master-key --keyring "$T/open-dir/keyring"
err_has "the directory $T/open-dir is writable by group or others" \
    "open directory warning"
mkdir -m 755 "$T/kdc-home" && chown nobody "$T/kdc-home"
sed -i "s|database_name = .*|database_name = $T/kdc-home/principal|" \
    "$T/kdc.conf"
expect 0 "init-master-key, KDC user from database_name" -- \
    init-master-key --keyring "$T/kdc-home-keyring"
err_has "not by the KDC's user nobody (the owner of $T/kdc-home, the KDC" \
    "KDC user from the database directory"
# A keyring owned by the KDC's user (nobody): root's ykadmin loads it as
# that KDC would; owned by anyone else, both refuse it.
cp "$T/keyring" "$T/owned-keyring" && chown nobody "$T/owned-keyring"
expect 0 "rewrap --add-key, keyring owned by the KDC's user" -- \
    --keyring "$T/owned-keyring" rewrap --add-key
[ "$(stat -c %U "$T/owned-keyring")" = nobody ] ||
    yk_fail "rewrap --add-key did not give the keyring back to nobody"
grep -q "owned by" "$T/err" && yk_fail "owner warning: $(cat "$T/err")"
sed -i "s|database_name = .*|database_name = $T/kdb/principal|" "$T/kdc.conf"
sum=$(sha256sum < "$T/owned-keyring")
expect 1 "a keyring owned by another user" -- \
    --keyring "$T/owned-keyring" rewrap --add-key
err_has "cannot load the master keyring $T/owned-keyring: it is owned by nobody, not root" \
    "keyring owner refused"
err_has "its owner could replace the keys: \"chown root $T/owned-keyring\"" \
    "keyring owner advice (load)"
[ "$(sha256sum < "$T/owned-keyring")" = "$sum" ] ||
    yk_fail "a refused keyring was changed"
chmod 640 "$T/owned-keyring"
expect 1 "a keyring readable by its group" -- \
    --keyring "$T/owned-keyring" rewrap --add-key
err_has "group or others may access it (mode 0640, must be 0600)" \
    "keyring mode refused"
err_has "\"chmod 600 $T/owned-keyring\"" "keyring mode advice"
expect 1 "init-master-key --kdc-user unknown" -- init-master-key \
    --keyring "$T/unknown-user-keyring" --kdc-user no-such-user-here
[ ! -e "$T/unknown-user-keyring" ] || yk_fail "bad --kdc-user wrote a file"
yk_ok "init-master-key creates a 0600 keyring, refuses to overwrite one," \
    "warns about its owner and directory; a keyring owned by neither root" \
    "nor the KDC's user, or open to its group, is refused with the fix"

# ---------------------------------------------------------------------
# import, list, uniqueness
expect 0 "import alice" -- import alice --public-id "$ID1" \
    --description "alice's spare key" <<< "$K1 $P1"
out_has "Imported token $ID1 for alice@$YK_REALM" "import alice"
err_has "import principal=alice@$YK_REALM public_id=$ID1 state=active" \
    "import log line"
err_has "operator=$(id -un)" "import log line names the operator"
line=$(row alice "$ID1")
# KRB5_KDC_PROFILE may list files, as krb5kdc takes it; each must exist.
printf '[realms]\n\t%s = {\n\t\tyubikey_cache_ttl = 5\n\t}\n' \
    "$YK_REALM" > "$T/extra.conf"
KRB5_KDC_PROFILE=$T/kdc.conf:$T/extra.conf expect 0 "a profile list" -- \
    list alice
out_has "$ID1" "list through a KRB5_KDC_PROFILE list"
KRB5_KDC_PROFILE=$T/kdc.conf:$T/missing.conf expect 1 "a list with a" \
    "missing file" -- list alice
err_has "cannot read the configuration $T/missing.conf" "missing list file"
yk_ok "KRB5_KDC_PROFILE as a colon-separated list, as krb5kdc reads it"
yka list alice || yk_fail "list alice"
# Without --bind-dn, ykadmin says which identity it binds as.
err_has "note: no --bind-dn: binding to $YK_LDAP_URI as DN $YK_YKADMIN_DN (yubikey_ldap_bind_dn, or kldap's ldap_kdc_dn, of $T/kdc.conf" \
    "the identity used without --bind-dn"
# An identity the access rules refuse is named in the error: the KDC's
# may read secrets but not change them, the helpdesk's may not read them.
printf '%s' "$YK_KDC_PW" > "$T/kdc.pw"
printf '%s' "$YK_HELPDESK_PW" > "$T/helpdesk.pw"
chmod 600 "$T/kdc.pw" "$T/helpdesk.pw"
expect 1 "disable as the KDC" -- --bind-dn "$YK_KDC_DN" \
    --password-file "$T/kdc.pw" disable "$ID1"
err_has "ykadmin bound as DN $YK_KDC_DN (--bind-dn), which the directory's access rules do not allow this" \
    "an ACL refusal names the identity"
grep -q "no --bind-dn" "$T/err" && yk_fail "a note about --bind-dn with --bind-dn"
expect 1 "disable as the helpdesk" -- --bind-dn "$YK_HELPDESK_DN" \
    --password-file "$T/helpdesk.pw" disable "$ID1"
err_has "or the directory hides yubikeyTokenSecret from DN $YK_HELPDESK_DN (--bind-dn)" \
    "an unreadable record names the identity"
[ "$(row alice "$ID1" | awk '{print $4}')" = active ] ||
    yk_fail "a refused disable changed the token: $(row alice "$ID1")"
yk_ok "ykadmin names its LDAP identity: without --bind-dn, and in an" \
    "access refusal"
line=$(row alice "$ID1")
[ -n "$line" ] || yk_fail "list alice does not show $ID1"
set -- $line
want="alice@$YK_REALM 2fa active 0 0/0 never $(id -un)"
[ "$1 $2 $4 $5 $6 $7 $9" = "$want" ] ||
    yk_fail "list alice: unexpected line: $line"
expect 0 "list (all)" -- list
grep -q "^alice@$YK_REALM .* $ID1 .* alice's spare key\$" "$T/out" ||
    yk_fail "list (all) lacks alice's token with its description"
yk_ok "import: alice's token listed active, counter 0, never used"

expect 1 "same public id, same principal" -- import alice \
    --public-id "$ID1" <<< "$K2 $P2"
err_has "already enrolled for alice@$YK_REALM" "duplicate (same principal)"
expect 1 "same public id, other principal" -- import bob \
    --public-id "${ID1^^}" <<< "$K2 $P2"
err_has "already enrolled for alice@$YK_REALM" "duplicate (other principal)"
no_token bob "duplicate public id"
yk_ok "a public id enrolled anywhere is refused, naming its holder"

# Malformed standard input: refused, nothing written.
bad_input() {
    printf '%b' "$1" > "$T/in"
    expect 1 "import: $2" -- import bob --public-id vvccccfbhvbc < "$T/in"
    err_has "$3" "import: $2"
}
bad_input "" "empty input" "standard input is empty"
bad_input " \n\t\n" "blank input" "standard input is empty"
bad_input "0011223344 $P1\n" "short key" "exactly 32 hex digits"
bad_input "${K1}00 $P1\n" "long key" "exactly 32 hex digits"
bad_input "00112233445566778899aabbccddeefg $P1\n" "non-hex key" \
    "not hexadecimal"
bad_input "$K1\n" "no private id" "private id (12 hex digits) is missing"
bad_input "$K1 a1b2c3\n" "short private id" "exactly 12 hex digits"
bad_input "$K1 a1b2c3d4e5fz\n" "non-hex private id" "not hexadecimal"
bad_input "$K1 $P1 extra\n" "trailing garbage" "unexpected data"
bad_input "$K1 $P1\n$K1 $P1\n" "two lines" "unexpected data"
bad_input "$K1 $P1 \0\n" "NUL byte" "unexpected data"
bad_input "$(head -c 600 /dev/zero | tr '\0' ' ')$K1 $P1" "too long" \
    "too long"
no_token bob "malformed input"
yk_ok "malformed standard input refused (short, long, non-hex, missing," \
    "trailing, empty, too long); nothing written"

# The key round trip: an emulated token holding K1/P1 under ID1 produces
# OTPs that verify (yk_otp_verify) against what import stored.
printf '%s %s\n' "$K1" "$P1" |
    "$YKEMU" --init "$T/alice.emu" --public-id "$ID1" --key-stdin ||
    yk_fail "ykemu --init --key-stdin failed"
otp=$("$YKEMU" "$T/alice.emu") || yk_fail "ykemu failed"
expect 0 "verify an OTP of the imported key" -- verify "$otp"
out_has "OTP accepted for alice@$YK_REALM: token $ID1, counter 256" \
    "verify alice"
expect 1 "verify the same OTP again" -- verify "$otp"
err_has "replayed" "replayed OTP"
[ "$(field alice "$ID1" 5)" = 256 ] || yk_fail "counter not stored"
[ "$(field alice "$ID1" 7)" != never ] || yk_fail "last use not stored"
printf '%s %s\n' "$K2" "$P1" |
    "$YKEMU" --init "$T/wrongkey.emu" --public-id "$ID1" --key-stdin ||
    yk_fail "ykemu --init (wrong key) failed"
expect 1 "verify an OTP made with another key" -- \
    verify "$("$YKEMU" "$T/wrongkey.emu")"
err_has "CRC" "wrong key"
yk_ok "imported key round trip: ykemu's OTP accepted once, replay and" \
    "wrong key refused"

# ---------------------------------------------------------------------
# enroll --emulate
expect 0 "enroll bob" -- enroll bob --emulate "$T/bob.emu" \
    --description "bob laptop"
[ -f "$T/bob.emu" ] || yk_fail "enroll wrote no state file"
[ "$(stat -c %a "$T/bob.emu")" = 600 ] || yk_fail "state file not 0600"
bobid=$("$YKEMU" --public-id "$T/bob.emu") || yk_fail "ykemu --public-id"
[[ $bobid =~ ^vv[cbdefghijklnrtuv]{10}$ ]] ||
    yk_fail "generated public id $bobid is not vv + 10 modhex"
sed -n 's/^\(aes_key\|private_id\) //p' "$T/bob.emu" >> "$SECRETS"
[ "$(grep -c . "$SECRETS")" = 7 ] || yk_fail "emu file lacks key/id lines"
err_has "enroll principal=bob@$YK_REALM public_id=$bobid state=pending" \
    "enroll log (pending)"
err_has "enroll principal=bob@$YK_REALM public_id=$bobid state=active" \
    "enroll log (active)"
[ "$(field bob "$bobid" 4) $(field bob "$bobid" 5)" = "active 0" ] ||
    yk_fail "enrolled token not listed active with counter 0"
otp=$("$YKEMU" "$T/bob.emu") || yk_fail "ykemu bob failed"
expect 0 "verify bob's first OTP" -- verify "$otp"
otp2=$("$YKEMU" "$T/bob.emu") || yk_fail "ykemu bob failed"
"$YKEMU" --replug "$T/bob.emu" || yk_fail "ykemu --replug failed"
otp3=$("$YKEMU" "$T/bob.emu") || yk_fail "ykemu bob failed"
expect 0 "verify bob's OTP after a replug" -- verify "$otp3"
out_has "counter 512 (usage 2, session 0)" "OTP after replug"
expect 1 "an OTP older than the last use" -- verify "$otp2"
err_has "older than the token's last use" "older OTP"
yk_ok "enroll --emulate: $bobid active, its ykemu OTPs accepted, an older" \
    "one refused"
otp4=$("$YKEMU" "$T/bob.emu") || yk_fail "ykemu bob failed"
expect 0 "verify - (the OTP on standard input)" -- verify - <<< "$otp4"
out_has "counter 513 (usage 2, session 1)" "verify -"
expect 1 "verify - with the same OTP again" -- verify - <<< "$otp4"
err_has "replayed" "verify -, replay"
expect 1 "verify - with nothing on standard input" -- verify - < /dev/null
err_has "no OTP on standard input" "verify -, empty input"
yk_ok "verify -: the OTP read from standard input, accepted once"

expect 1 "enroll with a taken public id" -- enroll carol \
    --emulate "$T/carol.emu" --public-id "$ID1"
err_has "already enrolled for alice@$YK_REALM" "enroll, taken public id"
[ ! -e "$T/carol.emu" ] || yk_fail "refused enroll left a state file"
expect 1 "enroll over an existing file" -- enroll carol \
    --emulate "$T/bob.emu"
err_has "already exists" "enroll over an existing file"
expect 1 "enroll to an unwritable path" -- enroll carol \
    --emulate "$T/no/such/dir/carol.emu"
err_has "cannot create the token state file $T/no/such/dir/carol.emu" \
    "unwritable emulate path"
expect 1 "enroll without a YubiKey attached" -- enroll carol
err_has "no YubiKey found" "enroll without a device"
err_has "--emulate" "enroll without a device suggests --emulate"
err_has "nothing is enrolled" "enroll without a device says what is left"
printf 'not-a-code\n' > "$T/bad.acc"
expect 1 "enroll, malformed access code" -- enroll carol \
    --access-code-file "$T/bad.acc"
err_has "must be exactly 12 hexadecimal digits" "malformed access code"
printf '0102030405ff\n' > "$T/good.acc"
expect 1 "enroll, access code, no YubiKey" -- enroll carol \
    --access-code-file "$T/good.acc"
err_has "no YubiKey found" "access code, no device"
expect 1 "slot 1 without --force" -- enroll carol --slot 1 \
    --emulate "$T/carol.emu"
err_has "--force" "slot 1 without --force"
[ ! -e "$T/carol.emu" ] || yk_fail "slot 1 without --force wrote a file"
expect 1 "enroll an unknown principal" -- enroll zed --emulate "$T/zed.emu"
err_has "zed@$YK_REALM has no entry in the directory" "unknown principal"
err_has "no entry matches (krbPrincipalName=%p) (%p = zed@$YK_REALM) under $YK_LDAP_BASE" \
    "unknown principal: where ykadmin looked"
err_has "krbPrincipalName: zed@$YK_REALM" "unknown principal: what to add"
[ ! -e "$T/zed.emu" ] || yk_fail "enroll for an unknown principal wrote"
no_token carol "refused enrolments"
expect 0 "enroll with a given public id" -- enroll carol \
    --emulate "$T/carol.emu" --public-id VVCCCCFBHVCC
[ "$(field carol vvccccfbhvcc 4)" = active ] ||
    yk_fail "enroll --public-id: token not listed"
sed -n 's/^\(aes_key\|private_id\) //p' "$T/carol.emu" >> "$SECRETS"
yk_ok "enroll refuses a taken public id, an existing or unwritable file," \
    "an unknown principal, slot 1 without --force, a bad access code;" \
    "without a YubiKey: \"no YubiKey found\"; nothing written"

# A second token needs --add; --replace re-keys one in place.
expect 1 "a second token without --add" -- enroll carol \
    --emulate "$T/carol2.emu"
err_has "already holds vvccccfbhvcc (active): give --add" "second token"
[ ! -e "$T/carol2.emu" ] || yk_fail "refused second token wrote a file"
expect 0 "a second token with --add" -- enroll carol --add \
    --emulate "$T/carol2.emu" --public-id-prefix DDEE
carol2=$("$YKEMU" --public-id "$T/carol2.emu")
[[ $carol2 =~ ^ddee[cbdefghijklnrtuv]{8}$ ]] ||
    yk_fail "--public-id-prefix ddee gave $carol2"
sed -n 's/^\(aes_key\|private_id\) //p' "$T/carol2.emu" >> "$SECRETS"
expect 1 "bad prefix" -- enroll carol --add --emulate "$T/carol3.emu" \
    --public-id-prefix xyz
err_has "invalid --public-id-prefix" "bad prefix"
expect 1 "--replace, two tokens, none named" -- enroll carol --replace \
    --emulate "$T/carol3.emu"
err_has "name the one to replace with --public-id" "ambiguous replace"
old_otp=$("$YKEMU" "$T/carol.emu")
expect 0 "verify carol's first token" -- verify "$old_otp"
expect 0 "--replace carol's first token" -- enroll carol --replace \
    --public-id vvccccfbhvcc --emulate "$T/carol-new.emu"
err_has "public_id=vvccccfbhvcc state=pending replace=yes" "replace log"
sed -n 's/^\(aes_key\|private_id\) //p' "$T/carol-new.emu" >> "$SECRETS"
[ "$(field carol vvccccfbhvcc 4) $(field carol vvccccfbhvcc 5)" = \
    "active 0" ] || yk_fail "--replace did not reset the counter"
[ "$(field carol "$carol2" 4)" = active ] ||
    yk_fail "--replace touched the other token"
expect 1 "the replaced key's OTP" -- verify "$("$YKEMU" "$T/carol.emu")"
err_has "CRC" "replaced key refused"
expect 0 "the new key's OTP" -- verify "$("$YKEMU" "$T/carol-new.emu")"
out_has "token vvccccfbhvcc, counter 256" "new key accepted"
expect 1 "--replace of a token the principal does not hold" -- enroll carol \
    --replace --public-id "$ID1" --emulate "$T/carol3.emu"
err_has "holds no token $ID1" "replace a foreign token"
expect 1 "--replace, no YubiKey: restored" -- enroll carol --replace \
    --public-id vvccccfbhvcc
err_has "no YubiKey found" "replace without a device"
err_has "has its previous key and counter again" "replace restored"
[ "$(field carol vvccccfbhvcc 5)" = 256 ] ||
    yk_fail "a failed --replace did not restore the counter"
expect 0 "the new key still works" -- verify "$("$YKEMU" "$T/carol-new.emu")"
yk_ok "a second token needs --add; --public-id-prefix; --replace re-keys" \
    "in place (counter reset, old key refused); a failed --replace" \
    "restores the token"

# The prefix from kdc.conf.
sed -i "s|^\t\tyubikey_master_key_file|\t\tyubikey_public_id_prefix = jjkk\n&|" \
    "$T/kdc.conf"
expect 0 "enroll with the prefix of kdc.conf" -- enroll erin \
    --emulate "$T/erin.emu"
erinid=$("$YKEMU" --public-id "$T/erin.emu")
[[ $erinid =~ ^jjkk[cbdefghijklnrtuv]{8}$ ]] ||
    yk_fail "yubikey_public_id_prefix jjkk gave $erinid"
sed -n 's/^\(aes_key\|private_id\) //p' "$T/erin.emu" >> "$SECRETS"
sed -i '/yubikey_public_id_prefix/d' "$T/kdc.conf"
yk_ok "yubikey_public_id_prefix of kdc.conf sets generated public ids"

# ---------------------------------------------------------------------
# disable / enable (the state value is rewritten too)
state_value() {
    yk_ldapsearch_as "$YK_ADMIN_DN" "$YK_ADMIN_PW" -b "$YK_PEOPLE_DN" \
        "(yubikeyPublicId=$1)" yubikeyTokenState | grep '^yubikeyTokenState'
}
before=$(state_value "$ID1")
SUDO_USER=helper expect 0 "disable" -- disable "$ID1"
err_has "disable principal=alice@$YK_REALM public_id=$ID1 state=disabled" \
    "disable log"
err_has "operator=$(id -un)(sudo:helper)" "operator with SUDO_USER"
[ "$(field alice "$ID1" 4)" = disabled ] || yk_fail "not listed disabled"
[ "$(state_value "$ID1")" != "$before" ] ||
    yk_fail "disable did not rewrite the state value"
expect 1 "verify on a disabled token" -- verify "$("$YKEMU" "$T/alice.emu")"
err_has "is disabled" "disabled token"
expect 0 "disable again" -- disable "$ID1"
out_has "already disabled" "disable again"
expect 0 "enable" -- enable "$ID1"
[ "$(field alice "$ID1" 4)" = active ] || yk_fail "not listed active"
expect 0 "verify after enable" -- verify "$("$YKEMU" "$T/alice.emu")"
expect 1 "disable an unknown public id" -- disable vvccccfbhvbd
err_has "no token with public id vvccccfbhvbd" "unknown public id"
expect 1 "disable a malformed public id" -- disable notmodhex
yk_ok "disable/enable visible in list, state value rewritten, OTPs of a" \
    "disabled token refused"

# policy
expect 0 "policy otp" -- policy alice otp
err_has "policy principal=alice@$YK_REALM policy=otp" "policy log"
[ "$(field alice "$ID1" 2)" = otp ] || yk_fail "policy otp not listed"
expect 0 "policy 2fa" -- policy "alice@$YK_REALM" 2fa
[ "$(field alice "$ID1" 2)" = 2fa ] || yk_fail "policy 2fa not listed"
expect 1 "policy of a principal without token" -- policy dave otp
err_has "dave@$YK_REALM holds no token" "policy without token"
expect 0 "list dave" -- list dave
out_has "has no token (policy 2fa)" "list dave"
yk_ok "policy 2fa|otp visible in list"

# ---------------------------------------------------------------------
# delete
expect 0 "delete carol's second token" -- delete "${carol2^^}"
err_has "delete principal=carol@$YK_REALM public_id=$carol2" "delete log"
out_has "Deleted token $carol2 of carol@$YK_REALM" "delete"
[ -z "$(row carol "$carol2")" ] || yk_fail "a deleted token is listed"
[ "$(field carol vvccccfbhvcc 4)" = active ] ||
    yk_fail "delete touched carol's other token"
yk_ldapsearch_as "$YK_ADMIN_DN" "$YK_ADMIN_PW" -b "uid=carol,$YK_PEOPLE_DN" \
    -s base yubikeyPublicId yubikeyTokenSecret yubikeyTokenState \
    > "$T/carol.ldif" || yk_fail "ldapsearch carol failed"
! grep -q "$carol2" "$T/carol.ldif" ||
    yk_fail "delete left values of $carol2: $(cat "$T/carol.ldif")"
grep -q "vvccccfbhvcc" "$T/carol.ldif" || yk_fail "delete removed too much"
expect 1 "verify an OTP of a deleted token" -- \
    verify "$("$YKEMU" "$T/carol2.emu")"
err_has "no token with public id $carol2 is enrolled" "deleted token OTP"
expect 1 "delete it again" -- delete "$carol2"
err_has "no token with public id $carol2" "delete twice"
expect 1 "delete a malformed public id" -- delete "not modhex"
yk_ok "delete removes the token's id, secret and state, nothing else"

# A principal name read from the directory is printed printable, as in
# the log lines (control characters shown as "?").
evil=$(printf 'ev\033]0;x\007il@%s' "$YK_REALM")
shown="ev?]0;x?il@$YK_REALM"
yk_ldap_modify <<EOF
dn: uid=evil,$YK_PEOPLE_DN
changetype: add
objectClass: inetOrgPerson
objectClass: krbPrincipalAux
objectClass: yubikeyPrincipalAux
uid: evil
cn: evil
sn: evil
krbPrincipalName:: $(printf '%s' "$evil" | base64 -w0)
yubikeyPublicId: vvcccccccfhb
yubikeyTokenSecret: yk1 id=vvcccccccfhb st=active serial= at=0 by=t desc= wrap=x
yubikeyTokenState: yk1 id=vvcccccccfhb ctr=0 gen=0 nonce=- used=0
EOF
expect 0 "disable a token of a name with control characters" -- \
    disable vvcccccccfhb
out_has "Token vvcccccccfhb of $shown: disabled." "printable holder"
expect 0 "delete it" -- delete vvcccccccfhb
out_has "Deleted token vvcccccccfhb of $shown." "printable holder (delete)"
! LC_ALL=C grep -q '[[:cntrl:]]' "$ALL" ||
    yk_fail "ykadmin printed a control character"
yk_ok "a holder's name with control characters is printed as \"$shown\""

# ---------------------------------------------------------------------
# list --json: valid JSON, the same facts as the table, text escaped.
expect 0 "import frank (quotes in the description)" -- import frank \
    --public-id vvccccfbhvbf --description 'a "quoted" \ back\slash' \
    <<< "$K2 $P2"
expect 0 "list --json" -- list --json
command -v python3 > /dev/null || yk_skip "python3 not found (list --json)"
python3 -m json.tool < "$T/out" > /dev/null ||
    { cat "$T/out" >&2; yk_fail "list --json is not valid JSON"; }
cp "$T/out" "$T/list.json"
# The system's python3 first: a version manager's shim costs 0.1 s a call.
PYTHON=python3
[ -x /usr/bin/python3 ] && PYTHON=/usr/bin/python3
json() {
    "$PYTHON" -c "import json, sys
d = json.load(open(sys.argv[1]))
t = {tok['public_id']: dict(tok, principal=p['principal'],
                            policy=p['policy'])
     for p in d['principals'] for tok in p['tokens']}
print(eval(sys.argv[2]))" "$@"
}
[ "$(json "$T/list.json" "t['$ID1']['counter']")" = \
    "$(field alice "$ID1" 5)" ] || yk_fail "--json counter differs"
[ "$(json "$T/list.json" "t['vvccccfbhvbf']['description']")" = \
    'a "quoted" \ back\slash' ] || yk_fail "--json description mangled"
kvnos="sorted(set(x['key_version'] for x in t.values()))"
[ "$(json "$T/list.json" "$kvnos")" = "[1]" ] ||
    yk_fail "--json key versions are not all 1"
[ "$(json "$T/list.json" "(t['$bobid']['principal'], t['$bobid']['state'],
    t['$bobid']['usage_near_limit'], t['$ID1']['last_use'][-1],
    t['vvccccfbhvbf']['last_use'])")" = \
    "('bob@$YK_REALM', 'active', False, 'Z', None)" ] ||
    yk_fail "--json fields wrong: $(cat "$T/list.json")"
expect 0 "list dave --json" -- list dave --json
[ "$(json "$T/out" "d['principals'][0]['tokens']")" = "[]" ] ||
    yk_fail "list dave --json: $(cat "$T/out")"
yk_ok "list --json is valid JSON with the table's facts, text escaped"

# ---------------------------------------------------------------------
# rewrap: a key version added, then every record re-wrapped with it.
expect 0 "rewrap with one key version" -- rewrap
out_has "Re-wrapped 0 token records with key version 1" "rewrap, one key"
out_has "ykadmin rewrap --add-key" "rewrap hint"
cp -p "$T/keyring" "$T/keyring.v1"
expect 0 "rewrap --add-key" -- rewrap --add-key
out_has "Added key version 2 to the master keyring $T/keyring" "add-key"
out_has "loads a changed keyring within 5 s" "add-key says what next"
err_has "rewrap add-key keyring=$T/keyring version=2" "add-key log"
[ "$(grep -c '^key ' "$T/keyring")" = 2 ] || yk_fail "keyring: not 2 keys"
grep -qxF "$(grep '^key 1 ' "$T/keyring.v1")" "$T/keyring" ||
    yk_fail "rewrap --add-key lost key version 1"
[ "$(stat -c %a "$T/keyring")" = 600 ] || yk_fail "keyring mode changed"
# Until the records are re-wrapped, a KDC holding only version 1 reads
# them all.
expect 0 "a KDC with the old keyring, before rewrap" -- \
    --keyring "$T/keyring.v1" verify "$("$YKEMU" "$T/bob.emu")"
expect 0 "rewrap --dry-run" -- rewrap --dry-run
grep -qE "^Would re-wrap [1-9][0-9]* token records with key version 2; \
0 already were; 0 failed" "$T/out" ||
    yk_fail "rewrap --dry-run: $(cat "$T/out")"
expect 0 "list after the dry run" -- list --json
[ "$(json "$T/out" "$kvnos")" = "[1]" ] || yk_fail "rewrap --dry-run wrote"
ntok=$(json "$T/out" "len(t)")
expect 0 "rewrap" -- rewrap
out_has "Re-wrapped $ntok token records with key version 2; 0 already" \
    "rewrap"
err_has "rewrap principal=alice@$YK_REALM public_id=$ID1 kvno=1 new_kvno=2" \
    "rewrap log"
expect 0 "list after rewrap" -- list --json
[ "$(json "$T/out" "$kvnos")" = "[2]" ] ||
    yk_fail "records do not name key version 2: $(cat "$T/out")"
[ "$(json "$T/out" "t['$ID1']['counter']")" = \
    "$(json "$T/list.json" "t['$ID1']['counter']")" ] ||
    yk_fail "rewrap changed a counter"
expect 0 "verify after rewrap (the new keyring)" -- \
    verify "$("$YKEMU" "$T/alice.emu")"
expect 1 "a KDC that kept the old keyring, after rewrap" -- \
    --keyring "$T/keyring.v1" verify "$("$YKEMU" "$T/bob.emu")"
err_has "master key version not in the keyring" "old keyring after rewrap"
expect 0 "rewrap again" -- rewrap
out_has "Re-wrapped 0 token records with key version 2; $ntok already" \
    "rewrap is idempotent"
expect 1 "rewrap with a wrong keyring" -- --keyring "$T/other-keyring" \
    rewrap
err_has "cannot unwrap token" "rewrap, wrong keyring"
out_has "$ntok failed" "rewrap, wrong keyring"
yk_ok "rewrap: --add-key keeps version 1 (old KDCs read every record)," \
    "rewrap moves all $ntok records to version 2, verify still works"

# ---------------------------------------------------------------------
# raise-counters: after a restore, OTPs typed since the backup refused.
before=$(field alice "$ID1" 5)
typed=$("$YKEMU" "$T/alice.emu")       # typed "since the backup"
expect 0 "raise-counters --dry-run" -- raise-counters alice --dry-run
out_has "Would raise token $ID1 of alice@$YK_REALM" "raise dry run"
[ "$(field alice "$ID1" 5)" = "$before" ] || yk_fail "--dry-run raised"
expect 0 "raise-counters alice" -- raise-counters alice
want=$(( (((before >> 8) + 256) << 8) | 255 ))
err_has "raise-counters principal=alice@$YK_REALM public_id=$ID1 counter=$before new_counter=$want steps=256" \
    "raise-counters log"
[ "$(field alice "$ID1" 5)" = "$want" ] ||
    yk_fail "raised counter $(field alice "$ID1" 5), expected $want"
[ "$(field bob "$bobid" 5)" -lt 65536 ] || yk_fail "raised bob too"
expect 1 "an OTP typed before the raise" -- verify "$typed"
err_has "older than the token's last use" "OTP typed before the raise"
"$YKEMU" --replug "$T/alice.emu" || yk_fail "ykemu --replug failed"
expect 1 "the owner's next OTP, still below" -- \
    verify "$("$YKEMU" "$T/alice.emu")"
fresh=$("$YKEMU" "$T/alice.emu")
expect 1 "verify --resync without --force" -- verify --resync "$fresh"
err_has "OTP not consumed: --resync would lower the stored counter of token $ID1 of alice@$YK_REALM from $want to" \
    "resync without --force: what it would do"
err_has "run \"ykadmin verify --resync --force\" with it" \
    "resync without --force: how to force"
err_has "result=refused reason=resync-needs-force" "resync refusal log"
[ "$(field alice "$ID1" 5)" = "$want" ] ||
    yk_fail "verify --resync without --force changed the counter"
expect 0 "verify --resync --force with a fresh OTP" -- \
    verify --resync --force "$fresh"
out_has "counter resynchronised" "resync"
err_has "result=accepted resync=yes stored=$want" "resync log"
expect 1 "--resync never takes the stored counter again" -- \
    verify --resync --force "$fresh"
err_has "replayed" "resync replay"
expect 0 "the owner's next OTP after resync" -- \
    verify "$("$YKEMU" "$T/alice.emu")"
expect 0 "raise every token near the limit" -- raise-counters --all \
    --by 32300
grep -q "^Raised $ntok tokens by 32300 usage-counter steps" "$T/out" ||
    yk_fail "raise-counters --all: $(cat "$T/out")"
expect 0 "list near the limit" -- list
out_has "! usage counter within 1000 of its limit 0x7fff" "near-limit note"
expect 0 "list --json near the limit" -- list --json
[ "$(json "$T/out" "all(x['usage_near_limit'] for x in t.values())")" = \
    True ] || yk_fail "--json: usage_near_limit not set"
err_has "warning: token $ID1 of alice@$YK_REALM: usage counter" \
    "--json near-limit warning"
expect 0 "raise past the limit" -- raise-counters bob --by 1000
[ "$(field bob "$bobid" 5)" = $((0x7fffff)) ] ||
    yk_fail "raise not capped at 0x7fffff"
expect 0 "raise at the limit" -- raise-counters bob
out_has "is at the limit already: enrol a new token" "raise at the limit"
yk_ok "raise-counters: OTPs typed before refused, verify --resync" \
    "refuses to lower the counter and says how, --resync --force takes" \
    "the owner's fresh OTP, the near-limit warning, the cap"

# ---------------------------------------------------------------------
# A wrong keyring and LDAP down: clear errors, nothing written.
expect 1 "import, missing keyring" -- --keyring "$T/no-keyring" \
    import dave --public-id vvccccfbhvbe <<< "$K2 $P2"
err_has "cannot load the master keyring $T/no-keyring" "missing keyring"
cp "$T/keyring" "$T/open-keyring" && chmod 644 "$T/open-keyring"
expect 1 "enroll, keyring readable by others" -- --keyring \
    "$T/open-keyring" enroll dave --emulate "$T/dave.emu"
err_has "0600" "keyring readable by others"
[ ! -e "$T/dave.emu" ] || yk_fail "enroll with a bad keyring wrote a file"
expect 1 "verify with another keyring" -- --keyring "$T/other-keyring" \
    verify "$("$YKEMU" "$T/alice.emu")"
err_has "cannot unwrap the secret of token $ID1" "wrong keyring"
no_token dave "wrong keyring"

printf '1,vvccccfbhvbj,%s,%s,,,\n' "$P2" "$K2" > "$T/one.csv"
dead=$YK_SLAPD_PORT
while yk_port_busy "$dead"; do dead=$((dead + 1)); done
expect 1 "import, LDAP unreachable" -- --uri "ldap://127.0.0.1:$dead/" \
    import dave --public-id vvccccfbhvbe <<< "$K2 $P2"
err_has "LDAP directory unavailable" "LDAP unreachable"
err_has "ldap://127.0.0.1:$dead/" "LDAP unreachable names the server"
yk_slapd_stop
expect 1 "enroll, slapd stopped" -- enroll dave --emulate "$T/dave.emu"
err_has "cannot read dave@$YK_REALM: LDAP directory unavailable" \
    "slapd stopped"
[ ! -e "$T/dave.emu" ] || yk_fail "enroll with LDAP down wrote a file"
expect 1 "list, slapd stopped" -- list
expect 1 "list --json, slapd stopped" -- list --json
[ ! -s "$T/out" ] || yk_fail "list --json printed something with LDAP down"
expect 1 "disable, slapd stopped" -- disable "$bobid"
expect 1 "delete, slapd stopped" -- delete "$bobid"
expect 1 "raise-counters, slapd stopped" -- raise-counters --all
expect 1 "rewrap, slapd stopped" -- rewrap
err_has "LDAP directory unavailable" "rewrap, slapd stopped"
expect 1 "import --file, slapd stopped" -- import --file "$T/one.csv" \
    --principal dave
err_has "LDAP directory unavailable" "import --file, slapd stopped"
yk_slapd_start
no_token dave "LDAP down"
[ "$(field bob "$bobid" 4)" = active ] || yk_fail "bob's token changed"
[ "$(field bob "$bobid" 5)" = $((0x7fffff)) ] || yk_fail "bob's token changed"
yk_ok "a wrong keyring and LDAP down: clear errors, nothing written"

# ---------------------------------------------------------------------
# No secret in anything ykadmin printed or logged.
while read -r s; do
    [ -n "$s" ] || continue
    if grep -qiF -- "$s" "$ALL"; then
        yk_fail "a secret appears in ykadmin's output or log lines"
    fi
done < "$SECRETS"
grep -q "^ykadmin\[[0-9]*\]: .* operator=" "$ALL" ||
    yk_fail "no syslog-format log line captured"
yk_ok "no key, private id or bind password in $(wc -l < "$ALL") lines of" \
    "output and log"

echo "PASS: ykadmin"
exit 0
