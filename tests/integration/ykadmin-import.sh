#!/bin/bash
# SPDX-License-Identifier: MIT
# ykadmin-import.sh: "ykadmin import --file" against a real slapd.
#
# The three file formats (ykman CSV, the personalization tool's
# Traditional log, yubikey-ksm), tokens assigned by --principal or a
# --map file, each imported key proven by an OTP of an emulated token
# holding it; --dry-run; --first-otp (the counter seeded, older OTPs
# refused); --counter (a known counter given, older OTPs refused); the
# loud warning for a token imported without either; and the refusals, each with nothing written: malformed lines
# (named), a public id twice in the file or already enrolled, a token
# without a map line, a principal without an entry, an OTP that does not
# verify, an OpenPGP file.  No key in any output.  Exit 0 pass, 1 fail,
# 77 skip.

set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top_srcdir/tests/integration/lib.sh"
# shellcheck source=expect.sh
. "$top_srcdir/tests/integration/expect.sh"

YKADMIN=${YKADMIN:-$YK_BUILDDIR/ykadmin}
YKEMU=$YK_BUILDDIR/emu/ykemu
[ -x "$YKADMIN" ] || yk_fail "ykadmin not built: $YKADMIN"
[ -x "$YKEMU" ] || yk_fail "ykemu not built: $YKEMU"

yk_init
T=$YK_TMP
ALL=$T/all-output.log

# Five tokens: public id, private id, AES key.
ID_A=vvcccccccccb P_A=0a0b0c0d0e0f K_A=101112131415161718191a1b1c1d1e1f
ID_B=vvcccccccccd P_B=1a1b1c1d1e1f K_B=202122232425262728292a2b2c2d2e2f
ID_C=vvccccccccce P_C=2a2b2c2d2e2f K_C=303132333435363738393a3b3c3d3e3f
ID_D=vvcccccccccf P_D=3a3b3c3d3e3f K_D=404142434445464748494a4b4c4d4e4f
ID_E=vvcccccccccg P_E=4a4b4c4d4e4f K_E=505152535455565758595a5b5c5d5e5f
ID_F=vvccccccccch P_F=5a5b5c5d5e5f K_F=606162636465666768696a6b6c6d6e6f

# Run ykadmin; stdout in $T/out, stderr in $T/err, both kept in $ALL.
yka() {
    local rc
    "$YKADMIN" "$@" > "$T/out" 2> "$T/err"
    rc=$?
    cat "$T/out" "$T/err" >> "$ALL"
    return $rc
}

# ntokens: how many tokens the directory holds.
ntokens() {
    yka list --json || yk_fail "list --json failed"
    grep -o '"public_id": ' "$T/out" | wc -l
}

# emu NAME ID PRIV KEY: an emulated token holding that key, in $T/NAME.
emu() {
    printf '%s %s\n' "$4" "$3" |
        "$YKEMU" --init "$T/$1" --public-id "$2" --key-stdin ||
        yk_fail "ykemu --init $1 failed"
}

# nothing_written WHAT: the directory holds exactly $written tokens.
nothing_written() {
    [ "$(ntokens)" = "$written" ] ||
        yk_fail "$1: the directory holds $(ntokens) tokens, not $written"
}

# seeded_counter AT BELOW EMU WHAT: after an import that set the
# counter (WHAT), the OTP AT the stored counter is a replay, the older
# OTP BELOW is refused, the next OTP of the emulated token EMU works.
seeded_counter() {
    expect 1 "$4: the OTP at the stored counter" -- verify "$1"
    err_has "replayed" "$4: the OTP at the stored counter"
    expect 1 "$4: an older OTP" -- verify "$2"
    err_has "older than the token's last use" "$4: an older OTP"
    expect 0 "$4: the next OTP" -- verify "$("$YKEMU" "$T/$3")"
}

# ---------------------------------------------------------------------
yk_slapd_setup
yk_slapd_start
for p in alice bob carol dave erin; do
    yk_ldap_add_principal "$p"
done
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
		database_name = $T/principal
	}
EOF
printf '[libdefaults]\n\tdefault_realm = %s\n' "$YK_REALM" > "$T/krb5.conf"
export KRB5_CONFIG=$T/krb5.conf KRB5_KDC_PROFILE=$T/kdc.conf
unset SUDO_USER
expect 0 "init-master-key" -- init-master-key
written=0

# ---------------------------------------------------------------------
# ykman CSV, one token, --principal.
cat > "$T/a.csv" <<EOF
4711,${ID_A^^},$P_A,${K_A^^},,2024-05-01T12:00:00,
EOF
chmod 600 "$T/a.csv"
expect 0 "import a ykman CSV" -- import --file "$T/a.csv" --principal alice \
    --description "from ykman"
out_has "1 token (ykman format)" "CSV detected"
out_has "Imported token $ID_A for alice@$YK_REALM: active (counter 0)" \
    "CSV import"
err_has "import principal=alice@$YK_REALM public_id=$ID_A state=active counter=0 file=$T/a.csv line=1" \
    "CSV import log"
err_has "counter_from=unknown" "CSV import log: counter unknown"
! grep -q "warning" "$T/err" || yk_fail "a 0600 file drew a warning"
err_has "ykadmin: WARNING: 1 token is imported with counter 0: every OTP it ever produced (any counter above 0) will be accepted once" \
    "no counter: the loud warning"
err_has "ykadmin: WARNING:   $ID_A for alice@$YK_REALM" \
    "no counter: the warning names the token"
written=1
expect 0 "list alice --json" -- list alice --json
python3 -c 'import json, sys
t = json.load(sys.stdin)["principals"][0]["tokens"][0]
assert (t["public_id"], t["serial"], t["state"], t["description"]) == \
    (sys.argv[1], "4711", "active", "from ykman"), t' "$ID_A" < "$T/out" ||
    yk_fail "the imported token's record: $(cat "$T/out")"
emu a.emu "$ID_A" "$P_A" "$K_A"
expect 0 "an OTP of the imported key" -- verify "$("$YKEMU" "$T/a.emu")"
yk_ok "ykman CSV: one token for --principal, serial kept, its key works;" \
    "imported with counter 0: a WARNING names it"

# ---------------------------------------------------------------------
# Traditional log (a time with commas), two tokens, a --map file.
cat > "$T/trad.log" <<EOF
LOGGING START,3/12/13 2:02 PM
Yubico OTP,3/12/13 2:02 PM,2,$ID_B,$P_B,$K_B,,,0,0,0,0,0,0,0,0,0,0
LOGGING START,Tuesday, March 12, 2013 2:03:31 PM
Yubico OTP,Tuesday, March 12, 2013 2:03:40 PM,1,$ID_C,$P_C,$K_C,,,0,0,0,0,0,0,0,0,0,0
EOF
chmod 644 "$T/trad.log"
cat > "$T/owners" <<EOF
# public id   principal
$ID_B	bob
${ID_C^^}  carol@$YK_REALM
$ID_E erin
EOF
expect 0 "--dry-run of a Traditional log" -- import --file "$T/trad.log" \
    --map "$T/owners" --dry-run
out_has "Would import token $ID_B for bob@$YK_REALM" "dry run"
out_has "Dry run: 2 tokens checked, nothing written." "dry run"
nothing_written "--dry-run"
expect 0 "import a Traditional log" -- import --file "$T/trad.log" \
    --map "$T/owners"
out_has "2 tokens (traditional format)" "Traditional detected"
out_has "Imported token $ID_C for carol@$YK_REALM" "Traditional import"
err_has "holds AES keys in clear and is readable by others" \
    "warning about a readable key file"
written=3
emu b.emu "$ID_B" "$P_B" "$K_B"
emu c.emu "$ID_C" "$P_C" "$K_C"
expect 0 "an OTP of bob's imported key" -- verify "$("$YKEMU" "$T/b.emu")"
out_has "OTP accepted for bob@$YK_REALM" "bob's key"
expect 0 "an OTP of carol's imported key" -- verify "$("$YKEMU" "$T/c.emu")"
out_has "OTP accepted for carol@$YK_REALM" "carol's key"
yk_ok "Traditional log: two tokens assigned by a map, --dry-run wrote" \
    "nothing, both keys work"

# ---------------------------------------------------------------------
# yubikey-ksm, with --first-otp: the counter seeded from a fresh OTP.
emu d.emu "$ID_D" "$P_D" "$K_D"
older=$("$YKEMU" "$T/d.emu")
"$YKEMU" --replug "$T/d.emu" || yk_fail "ykemu --replug failed"
first=$("$YKEMU" "$T/d.emu")
cat > "$T/keys.ksm" <<EOF
# ykksm 1
# serialnr,identity,internaluid,aeskey,lockpw,created,accessed
4712,$ID_D,$P_D,$K_D,000000000000,2009-12-14T16:40:57,  # dave's
EOF
printf '%s dave\n' "$ID_D" > "$T/owners-d"
emu wrong.emu "$ID_D" "$P_D" "$K_E"
expect 1 "--first-otp made with another key" -- import --file \
    "$T/keys.ksm" --map "$T/owners-d" --first-otp "$("$YKEMU" "$T/wrong.emu")"
err_has "--first-otp for $ID_D does not verify with the imported key" \
    "wrong --first-otp"
expect 1 "--first-otp of a token not imported" -- import --file \
    "$T/keys.ksm" --map "$T/owners-d" --first-otp "$("$YKEMU" "$T/a.emu")"
err_has "public id $ID_A is not one of the tokens imported" \
    "foreign --first-otp"
nothing_written "refused --first-otp"
expect 0 "import a ksm file with --first-otp" -- import --file \
    "$T/keys.ksm" --map "$T/owners-d" --format KSM --first-otp "$first"
grep -q "WARNING" "$T/err" && yk_fail "--first-otp drew the warning"
err_has "counter_from=first-otp" "--first-otp log"
out_has "1 token (ksm format)" "ksm format"
out_has "Imported token $ID_D for dave@$YK_REALM: active (counter 512)" \
    "counter seeded"
written=4
seeded_counter "$first" "$older" d.emu "--first-otp"
yk_ok "yubikey-ksm file with --first-otp: counter seeded (512), that" \
    "OTP and an older one refused; a wrong or foreign OTP refused"

# One token on standard input, with --first-otp.
emu e.emu "$ID_E" "$P_E" "$K_E"
expect 1 "stdin import, --first-otp of another key" -- import erin \
    --public-id "$ID_E" --first-otp "$("$YKEMU" "$T/wrong.emu")" \
    <<< "$K_E $P_E"
err_has "public id $ID_D is not one of the tokens imported" \
    "stdin --first-otp mismatch"
nothing_written "stdin --first-otp mismatch"
expect 0 "stdin import --dry-run" -- import erin --public-id "$ID_E" \
    --dry-run <<< "$K_E $P_E"
out_has "Would import token $ID_E for erin@$YK_REALM" "stdin --dry-run"
nothing_written "stdin --dry-run"
first=$("$YKEMU" "$T/e.emu")
expect 0 "stdin import with --first-otp" -- import erin --public-id \
    "$ID_E" --first-otp "$first" <<< "$K_E $P_E"
out_has "Imported token $ID_E for erin@$YK_REALM: active (counter 256)" \
    "stdin --first-otp"
written=5
expect 1 "the stdin --first-otp again" -- verify "$first"
yk_ok "one token on standard input with --first-otp"

# One token on standard input, with --counter: its known last counter.
emu f.emu "$ID_F" "$P_F" "$K_F"
old1=$("$YKEMU" "$T/f.emu")             # counter 256 (usage 1, session 0)
old2=$("$YKEMU" "$T/f.emu")             # 257
"$YKEMU" --replug "$T/f.emu" || yk_fail "ykemu --replug failed"
expect 1 "--counter and --first-otp for one token" -- import carol \
    --public-id "$ID_F" --counter 257 --first-otp "$("$YKEMU" "$T/f.emu")" \
    <<< "$K_F $P_F"
err_has "token $ID_F: its counter is given twice" "--counter and --first-otp"
expect 1 "--counter, not a number" -- import carol --public-id "$ID_F" \
    --counter 25x <<< "$K_F $P_F"
err_has "--counter 25x: not a counter (0 to 8388607" "--counter 25x"
expect 1 "--counter too large" -- import carol --public-id "$ID_F" \
    --counter 0x800000 <<< "$K_F $P_F"
err_has "not a counter" "--counter 0x800000"
expect 2 "--counter twice for one token" -- import carol --public-id \
    "$ID_F" --counter 1 --counter 2 <<< "$K_F $P_F"
nothing_written "refused --counter"
expect 0 "stdin import --counter --dry-run" -- import carol --public-id \
    "$ID_F" --counter 257 --dry-run <<< "$K_F $P_F"
out_has "Would import token $ID_F for carol@$YK_REALM (counter 257)" \
    "--counter --dry-run"
grep -q "WARNING" "$T/err" && yk_fail "--counter drew the warning"
nothing_written "--counter --dry-run"
expect 0 "stdin import with --counter" -- import carol --public-id \
    "$ID_F" --counter "$ID_F=257" <<< "$K_F $P_F"
out_has "Imported token $ID_F for carol@$YK_REALM: active (counter 257)" \
    "stdin --counter"
err_has "counter=257 counter_from=given" "--counter log"
written=6
seeded_counter "$old2" "$old1" f.emu "--counter"
yk_ok "--counter: the known counter stored (no warning), OTPs up to it" \
    "refused, the next one accepted; bad or doubled values refused"

# ---------------------------------------------------------------------
# Refusals: each names the problem (and the line), nothing written.
N1=vvcccccccccr N2=vvccccccccct
good1="1,$N1,$P_A,$K_B,,,"
good2="2,$N2,$P_B,$K_C,,,"
printf '%s alice\n%s bob\n' "$N1" "$N2" > "$T/owners-n"

bad_file() {    # bad_file NAME WHAT EXPECTED-TEXT [IMPORT OPTIONS...]
    local name=$1 what=$2 text=$3
    shift 3
    expect 1 "$what" -- import --file "$T/$name" "$@"
    err_has "$text" "$what"
    nothing_written "$what"
}
printf '%s\n%s\n' "$good1" "2,$N2,$P_B,${K_C:0:30},,," > "$T/short.csv"
bad_file short.csv "a short key on line 2" \
    "$T/short.csv: line 2, field 4 (AES key)" --map "$T/owners-n"
printf '%s\n%s\n' "$good1" "2,$N2,$P_B" > "$T/fields.csv"
bad_file fields.csv "a truncated line" "line 2" --map "$T/owners-n"
printf '%s\n%s\n' "$good1" "2,$N2,zz${P_B:2},$K_C,,," > "$T/priv.csv"
bad_file priv.csv "a non-hex private id" "line 2, field 3" \
    --map "$T/owners-n"
printf '%s\n%s\n' "$good1" "2,$N1,$P_B,$K_C,,," > "$T/dup.csv"
bad_file dup.csv "a public id twice in the file" "$N1" --map "$T/owners-n"
printf '%s\n%s\n' "$good1" "2,$ID_B,$P_B,$K_C,,," > "$T/taken.csv"
printf '%s alice\n%s carol\n' "$N1" "$ID_B" > "$T/owners-t"
bad_file taken.csv "a public id already enrolled" \
    "$T/taken.csv line 2: public id $ID_B is already enrolled for bob@$YK_REALM" \
    --map "$T/owners-t"
printf '%s\n%s\n' "$good1" "$good2" > "$T/two.csv"
printf '%s alice\n' "$N1" > "$T/owners-1"
bad_file two.csv "a token without a map line" \
    "public id $N2 has no line in the map file" --map "$T/owners-1"
bad_file two.csv "--principal for two tokens" "--principal assigns one" \
    --principal alice
bad_file two.csv "--counter N for two tokens" \
    "--counter 5: 2 tokens are imported: name the token, --counter PUBID=N" \
    --map "$T/owners-n" --counter 5
bad_file two.csv "--counter of a token not imported" \
    "--counter: public id $ID_A is not one of the tokens imported" \
    --map "$T/owners-n" --counter "$ID_A=5"
bad_file two.csv "--counter with a bad public id" "invalid public id \"xyz\"" \
    --map "$T/owners-n" --counter "xyz=5"
printf '%s alice\n%s zed\n' "$N1" "$N2" > "$T/owners-z"
bad_file two.csv "a principal without an entry" \
    "$T/two.csv line 2: zed@$YK_REALM has no entry in the directory" \
    --map "$T/owners-z"
printf '%s alice\n%s bob\n%s carol\n' "$N1" "$N2" "$N1" > "$T/owners-dup"
bad_file two.csv "a map naming a public id twice" "$N1" \
    --map "$T/owners-dup"
bad_file two.csv "a forced wrong format" "$T/two.csv:" --format \
    traditional --map "$T/owners-n"
printf -- '-----BEGIN PGP MESSAGE-----\n\nhQEMA\n-----END PGP MESSAGE-----\n' \
    > "$T/keys.asc"
bad_file keys.asc "an OpenPGP file" "gpg --decrypt" --map "$T/owners-n"
: > "$T/empty.csv"
bad_file empty.csv "an empty file" "holds no tokens" --map "$T/owners-n"
bad_file no-such.csv "a missing file" "cannot open the import file" \
    --map "$T/owners-n"
bad_file two.csv "a missing map" "cannot open the map file" \
    --map "$T/no-such-map"
yk_ok "malformed lines, duplicate and enrolled public ids, missing map" \
    "lines, unknown principals, wrong formats, OpenPGP: refused, named," \
    "nothing written"

expect 0 "the good two-token file" -- import --file "$T/two.csv" \
    --map "$T/owners-n" --counter "${N1^^}=0x1ff"
out_has "Imported token $N1 for alice@$YK_REALM: active (counter 511)" \
    "--counter PUBID=0x..."
out_has "Imported token $N2 for bob@$YK_REALM: active (counter 0)" \
    "the other token"
err_has "ykadmin: WARNING: 1 token is imported with counter 0" \
    "the warning counts the token without a counter"
err_has "ykadmin: WARNING:   $N2 for bob@$YK_REALM" "the warning names N2"
grep -q "WARNING:   $N1" "$T/err" && yk_fail "the warning names $N1"
written=8
nothing_written "the good file"
yk_ok "the same file imports once fixed; --counter PUBID=N for one of its" \
    "tokens, the WARNING names the other"

# ---------------------------------------------------------------------
# No key or private id in anything ykadmin printed or logged.
for s in "$P_A" "$K_A" "$P_B" "$K_B" "$P_C" "$K_C" "$P_D" "$K_D" "$P_E" \
         "$K_E" "$P_F" "$K_F" "$YK_YKADMIN_PW" "${K_C:0:30}"; do
    ! grep -qiF -- "$s" "$ALL" ||
        yk_fail "a secret appears in ykadmin's output or log lines"
done
yk_ok "no key or private id in $(wc -l < "$ALL") lines of output and log"

echo "PASS: ykadmin-import"
exit 0
