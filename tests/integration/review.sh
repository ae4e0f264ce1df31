#!/bin/bash
# SPDX-License-Identifier: MIT
# review.sh: the security review's findings (issue 10), one test each.
#
# 1. ABA: a token deleted and its public id enrolled again starts from a
#    state value that is never the old token's (a random first
#    generation), so a KDC worker that cached the old record (cache TTL
#    60) loses its swap, re-reads and refuses the old key's OTP (bad CRC
#    or key).  Then the second guard alone: the new token's state value
#    written by hand equal to the old one's (cached) -- the swap asserts
#    the secret value it read too, and still loses.  Each refusal comes
#    with exactly one modify on slapd (its monitor): the cached record's
#    lost swap, not a fresh read.
# 2. No password oracle in backend failures: a wrong password and the
#    right one with a bad OTP get the same answer (yktestclient's exit)
#    when the principal matches two entries (both DISCARDed), when a
#    token's secret does not unwrap with the keyring (both DISCARDed),
#    and when the write server that should confirm a refusal is down
#    (both refused: the refusal stands, "not confirmed").  And the one
#    exception, pinned: the swap itself failing after the right password
#    (slapd frozen while the test hook holds the swap) is DISCARDed and
#    not counted, where a wrong password with a good OTP is refused and
#    counted (needs --enable-test-hooks; skipped loudly otherwise).
# 3. Name resolution cannot stall a worker: a KDC whose directory is
#    named by a host name, in a private mount namespace whose resolv.conf
#    names a DNS server that never answers (tests/client/ykblackhole on
#    127.0.0.2:53; the resolver would wait 5 s), DISCARDs an OTP login
#    within its 500 ms LDAP timeout and says the name was not resolved.
#    Skipped, loudly, where unshare -m cannot run.
# Exit 0 pass, 1 fail, 77 skip (announced).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"

R=$YK_REALM
TC=$YK_BUILDDIR/tests/client/yktestclient
YK_CACHE_TTL=60
YK_SLAPD_EXTRA_CONF="database monitor"
YK_BREAKER_TIME=1
# The KDC's UDP on another port: a DISCARD shows at once as no reply.
YK_KDC_UDP_PORT=$(yk_realm_free_port) || yk_fail "no free port"
# KDC 2 confirms refusals on a write server that is never there.
YK_KDC2_SED="s|^\( *yubikey_ldap_uri = .*\)$|\1\n  yubikey_ldap_write_uri = ldap://127.0.0.1:9/|"

yk_realm_setup
yk_realm_addprinc alice alice-pw
yk_realm_addprinc bob bob-pw
yk_realm_addprinc carol carol-pw
yk_realm_enroll bob "$YK_TMP/bob.tok"
yk_realm_enroll carol "$YK_TMP/carol.tok"
yk_kdc_start

# The yubikeyTokenState values of alice's entry.
states() {
    yk_ldapsearch_as "$YK_ADMIN_DN" "$YK_ADMIN_PW" \
        -b "$YK_LDAP_BASE" "(krbPrincipalName=alice@$R)" yubikeyTokenState |
        sed -n 's/^yubikeyTokenState: //p'
}

# The modify operations slapd has completed (its monitor database): a
# refusal that came from a cached record's lost swap is one more; one
# judged on a fresh read makes none (a bad OTP is never swapped).
swaps() {
    ldapsearch -LLL -x -H "$YK_LDAP_URI" \
        -b 'cn=Modify,cn=Operations,cn=Monitor' -s base \
        monitorOpCompleted | sed -n 's/^monitorOpCompleted: //p'
}

# login PASSWORD OTP: kinit with our client module.
login() {
    printf '%s\n%s\n' "$1" "$2" | yk_kinit "alice@$R"
}

# --- 1. ABA ---------------------------------------------------------------
yk_ykadmin enroll "alice@$R" --emulate "$YK_TMP/old.tok" \
    > "$YK_TMP/enroll.out" 2>&1 ||
    { cat "$YK_TMP/enroll.out" >&2; yk_fail "enroll the old token"; }
pubid=$("$YK_YKEMU_BIN" --public-id "$YK_TMP/old.tok") ||
    yk_fail "ykemu --public-id"
old_state=$(states)
# A refused attempt fills the KDC's cache with the old record (a wrong
# password: the request does not open, nothing is swapped).
login wrong-pw "$(yk_otp "$YK_TMP/old.tok")" &&
    yk_fail "alice: a wrong password was accepted"
yk_expect_attempt alice "verdict=refused reason=wrong password"
[ "$(states)" = "$old_state" ] || yk_fail "a refused attempt changed the state"
yk_ykadmin delete "$pubid" > "$YK_TMP/delete.out" 2>&1 ||
    { cat "$YK_TMP/delete.out" >&2; yk_fail "ykadmin delete"; }
yk_ykadmin enroll "alice@$R" --public-id "$pubid" --emulate \
    "$YK_TMP/new.tok" > "$YK_TMP/enroll.out" 2>&1 ||
    { cat "$YK_TMP/enroll.out" >&2; yk_fail "enroll the new token"; }
new_state=$(states)
[ -n "$new_state" ] && [ "$new_state" != "$old_state" ] ||
    yk_fail "the re-enrolled token's state \"$new_state\" equals the old" \
        "one's \"$old_state\": a cached record's swap could win"
n=$(swaps)
login alice-pw "$(yk_otp "$YK_TMP/old.tok")" &&
    yk_fail "ABA: the deleted token's OTP was accepted (cached record)"
yk_expect_attempt alice "verdict=refused reason=bad CRC or key"
[ "$(swaps)" = $((n + 1)) ] ||
    yk_fail "ABA: $(($(swaps) - n)) swaps tried, not 1: the refusal did not" \
        "come from the cached record's lost swap"
login alice-pw "$(yk_otp "$YK_TMP/new.tok")" ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "the new token's OTP refused"; }
yk_expect_attempt alice "verdict=accepted"
yk_ok "ABA: public id $pubid deleted and enrolled again: a new state value" \
    "(\"${old_state#* ctr=}\" -> \"${new_state#* ctr=}\"); the old key's" \
    "OTP refused from the cached record, the new one's accepted"

# The second guard: the state a KDC holds cached (the new token's, just
# swapped) given by hand to the next token enrolled on this public id.
cached_state=$(states)
yk_ykadmin delete "$pubid" > "$YK_TMP/delete.out" 2>&1 ||
    { cat "$YK_TMP/delete.out" >&2; yk_fail "ykadmin delete (2)"; }
yk_ykadmin enroll "alice@$R" --public-id "$pubid" --emulate \
    "$YK_TMP/third.tok" > "$YK_TMP/enroll.out" 2>&1 ||
    { cat "$YK_TMP/enroll.out" >&2; yk_fail "enroll the third token"; }
yk_ldap_modify <<EOF
dn: uid=alice,$YK_PEOPLE_DN
changetype: modify
delete: yubikeyTokenState
yubikeyTokenState: $(states)
-
add: yubikeyTokenState
yubikeyTokenState: $cached_state
EOF
[ "$(states)" = "$cached_state" ] ||
    yk_fail "the state value was not set by hand: \"$(states)\""
n=$(swaps)
login alice-pw "$(yk_otp "$YK_TMP/new.tok")" &&
    yk_fail "ABA: with the state value equal, the deleted token's OTP was" \
        "accepted (the swap does not assert the secret)"
yk_expect_attempt alice "verdict=refused reason=bad CRC or key"
[ "$(swaps)" = $((n + 1)) ] ||
    yk_fail "ABA (equal state): $(($(swaps) - n)) swaps tried, not 1: the" \
        "refusal did not come from the cached record's lost swap"
# (The third token's first OTP has the counter of the state just copied:
# a replay; its second one is past it.)
yk_otp "$YK_TMP/third.tok" > /dev/null
login alice-pw "$(yk_otp "$YK_TMP/third.tok")" ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "the third token's OTP refused"; }
yk_expect_attempt alice "verdict=accepted"
yk_ok "ABA, the state value made equal by hand: the deleted token's OTP" \
    "still refused (the swap asserts the secret), the new one's accepted"

# --- 2. the same answer for a wrong and a right password ----------------
# tc CONF NAME PASSWORD OTP: the test client's exit (0 issued, 1 refused,
# 2 no reply), our padata sent unasked.
tc() {
    KRB5_CONFIG=$1 "$TC" --optimistic --password "$3" --otp "$4" "$2@$R" \
        > "$YK_TMP/tc.out" 2>&1
    echo $?
}
# A bad OTP: a fresh one with its last character changed (CRC fails).
bad_otp() {
    local o
    o=$(yk_otp "$1")
    case "${o: -1}" in c) echo "${o%?}b" ;; *) echo "${o%?}c" ;; esac
}
# same WHAT CONF NAME PW WANT: a wrong password and PW with a bad OTP
# both end with exit WANT.
same() {
    local what=$1 conf=$2 name=$3 pw=$4 want=$5 a b
    a=$(tc "$conf" "$name" wrong-pw "$(yk_otp "$YK_TMP/$name.tok")")
    b=$(tc "$conf" "$name" "$pw" "$(bad_otp "$YK_TMP/$name.tok")")
    [ "$a" = "$want" ] && [ "$b" = "$want" ] ||
        { cat "$YK_TMP/tc.out" >&2; yk_kdc_attempts "$name@$R" \
            "${6:-$YK_KDC_LOG}" | tail -2 >&2;
          yk_fail "$what: wrong password -> exit $a, right password with a" \
            "bad OTP -> exit $b; both must be $want"; }
}

# a. bob matches two entries.
yk_ldap_modify <<EOF
dn: uid=bob2,$YK_PEOPLE_DN
changetype: add
objectClass: inetOrgPerson
objectClass: krbPrincipalAux
uid: bob2
cn: bob2
sn: bob2
krbPrincipalName: bob@$R
EOF
sleep 1   # past the cache's read of bob (none yet): the KDC reads both
same "two entries" "$YK_KRB5_CONF_PLAIN" bob bob-pw 2
yk_kdc_attempts "bob@$R" | tail -2 | grep -c "more than one directory entry" |
    grep -qx 2 || yk_fail "two entries: the log does not say why, twice"
yk_ok "bob matches two entries: a wrong password and the right one with a" \
    "bad OTP both DISCARDed"

# b. the write server that confirms refusals is down (KDC 2): the
#    refusal stands for both.  carol's record is cached first, then ages.
yk_kdc2_start
[ "$(tc "$YK_KRB5_CONF_KDC2" carol carol-pw "$(bad_otp "$YK_TMP/carol.tok")")" \
    = 1 ] || yk_fail "carol on KDC 2: a bad OTP not refused"
sleep 2.5
same "write server down" "$YK_KRB5_CONF_KDC2" carol carol-pw 1 "$YK_KDC2_LOG"
yk_kdc_attempts "carol@$R" "$YK_KDC2_LOG" | tail -1 |
    grep -q "not confirmed on the write server" ||
    yk_fail "write server down: the refusal does not say it was not confirmed"
yk_kdc2_stop
yk_ok "write server down: a wrong password and the right one with a bad" \
    "OTP both refused (the refusal stands, not confirmed)"

# c. the keyring the tokens were wrapped with is replaced by another.
sleep 1.1   # the breaker KDC 1 may have opened is closed again
mv "$YK_KRB5_DIR/master.keyring" "$YK_KRB5_DIR/master.keyring.good"
yk_ykadmin init-master-key > "$YK_TMP/init.out" 2>&1 ||
    { cat "$YK_TMP/init.out" >&2; yk_fail "init-master-key (another)"; }
sleep 5.5  # the KDC looks at the keyring file every 5 s
same "another keyring" "$YK_KRB5_CONF_PLAIN" carol carol-pw 2
yk_kdc_attempts "carol@$R" | tail -1 | grep -q "keyring: token" ||
    yk_fail "another keyring: the log does not say why"
mv "$YK_KRB5_DIR/master.keyring.good" "$YK_KRB5_DIR/master.keyring"
yk_ok "a keyring the secrets do not unwrap with: a wrong password and the" \
    "right one with a bad OTP both DISCARDed"

# c2. one key version missing: the tokens rewrapped under a new key
#     (version 2), then the keyring put back to its copy holding key 1.
#     dave is new (no record cached: the KDC reads the version-2 secret:
#     DISCARD); carol's record, cached under version 1, still judges, and
#     a refusal on it is confirmed on the write server, which cannot be
#     done (the new secret does not unwrap): both refused.
K=$YK_KRB5_DIR/master.keyring
yk_realm_addprinc dave dave-pw
yk_realm_enroll dave "$YK_TMP/dave.tok"
cp -p "$K" "$K.v1" || yk_fail "cp keyring"
# (bob's two entries of part a make the rewrap fail for him, not carol.)
{ yk_ykadmin rewrap --add-key && yk_ykadmin rewrap; } \
    > "$YK_TMP/rewrap.out" 2>&1
grep -q "rewrap principal=carol@$R .* kvno=1 new_kvno=2" "$YK_TMP/rewrap.out" ||
    { cat "$YK_TMP/rewrap.out" >&2; yk_fail "ykadmin rewrap of carol"; }
mv "$K" "$K.v12" && cp -p "$K.v1" "$K" || yk_fail "keyring swap"
sleep 5.5  # the KDC looks at the keyring file every 5 s
grep -q "rewrap principal=dave@$R .* kvno=1 new_kvno=2" "$YK_TMP/rewrap.out" ||
    { cat "$YK_TMP/rewrap.out" >&2; yk_fail "ykadmin rewrap of dave"; }
same "key version 2 missing (dave)" "$YK_KRB5_CONF_PLAIN" dave dave-pw 2
yk_kdc_attempts "dave@$R" | tail -2 |
    grep -c "master key version not in the keyring" | grep -qx 2 ||
    { yk_kdc_attempts "dave@$R" | tail -2 >&2;
      yk_fail "key version missing: the log does not say why, twice"; }
same "key version 2 missing (carol, cached)" "$YK_KRB5_CONF_PLAIN" carol \
    carol-pw 1
yk_kdc_attempts "carol@$R" | tail -1 | grep -q "not confirmed on the write server: keyring: .*master key version not in the keyring" ||
    { yk_kdc_attempts "carol@$R" | tail -1 >&2;
      yk_fail "key version missing (cached): the log does not say why"; }
mv "$K.v12" "$K" || yk_fail "keyring back"
sleep 5.5
yk_ok "the keyring lacks the key version the secrets are wrapped with: a" \
    "wrong password and the right one with a bad OTP both DISCARDed (no" \
    "record cached), both refused (a record cached under the old version:" \
    "the refusal not confirmed)"

# d. the swap itself fails after a right password (the write server
#    frozen while the test build's hook holds the swap): DISCARDed,
#    counted nowhere; a wrong password with a good OTP: refused, counted.
#    The one backend failure that answers otherwise than a wrong
#    password (doc/protocol.md: only a valid, fresh OTP reaches it, and
#    PREAUTH_FAILED would lock users out during an outage).
SKIP_2D=
if grep -q '^#define YK_TEST_HOOKS 1' "$YK_BUILDDIR/config.h" 2>/dev/null; then
    carol_fails() {
        kadmin.local -r "$R" getprinc carol 2>/dev/null |
            sed -n 's/^Failed password attempts: //p'
    }
    yk_kdc_stop
    YK_TEST_CAS_DELAY_MS=1500 yk_kdc_start
    f0=$(carol_fails)
    ( tc "$YK_KRB5_CONF_PLAIN" carol carol-pw \
          "$(yk_otp "$YK_TMP/carol.tok")" > "$YK_TMP/swap.rc" ) &
    tc_pid=$!
    sleep 0.6          # read and judged; the swap held until 1.5 s
    yk_slapd_freeze
    wait "$tc_pid"
    yk_slapd_thaw
    [ "$(cat "$YK_TMP/swap.rc")" = 2 ] ||
        { cat "$YK_TMP/tc.out" >&2; yk_fail "failed swap: exit" \
            "$(cat "$YK_TMP/swap.rc"), want 2 (DISCARDed)"; }
    line=$(yk_kdc_attempts "carol@$R" | tail -1)
    [[ "$line" == *" verdict=discarded reason=backend: swap: "* ]] ||
        yk_fail "failed swap: the log says $line"
    f1=$(carol_fails)
    [ "$f1" = "$f0" ] ||
        yk_fail "failed swap: the failure count went $f0 -> $f1"
    sleep 1.1          # the breaker the failed swap opened is closed
    [ "$(tc "$YK_KRB5_CONF_PLAIN" carol wrong-pw \
        "$(yk_otp "$YK_TMP/carol.tok")")" = 1 ] ||
        { cat "$YK_TMP/tc.out" >&2;
          yk_fail "a wrong password with a good OTP: not refused"; }
    [ "$(carol_fails)" = $((f1 + 1)) ] ||
        yk_fail "a wrong password: the failure count went $f1 ->" \
            "$(carol_fails), want $((f1 + 1))"
    yk_kdc_stop
    yk_kdc_start
    yk_ok "a failed swap after the right password: DISCARDed (${line##*reason=})," \
        "not counted; a wrong password with a good OTP: refused, counted" \
        "(the documented exception)"
else
    SKIP_2D="part 2d (a failed swap) needs --enable-test-hooks"
    echo "SKIP (for now): $SKIP_2D"
fi

kill -0 "$YK_KDC_PID" 2>/dev/null || yk_fail "the KDC died"

# --- 3. a resolver that does not answer -----------------------------------
BH=$YK_BUILDDIR/tests/client/ykblackhole
if [ "$(id -u)" != 0 ]; then
    yk_skip "part 3 (name resolution) not run: it needs root (port 53," \
        "mount) (parts 1 and 2 passed${SKIP_2D:+; $SKIP_2D})"
fi
if ! unshare -m --propagation private true 2>/dev/null; then
    yk_skip "part 3 (name resolution) not run: unshare -m fails here" \
        "(parts 1 and 2 passed${SKIP_2D:+; $SKIP_2D})"
fi
"$BH" 127.0.0.2 53 > "$YK_TMP/bh.out" 2>&1 &
yk_register_pid $!
for _ in $(seq 50); do
    grep -q ready "$YK_TMP/bh.out" && break
    sleep 0.1
done
grep -q ready "$YK_TMP/bh.out" ||
    { cat "$YK_TMP/bh.out" >&2; yk_fail "ykblackhole did not start"; }
printf 'nameserver 127.0.0.2\noptions timeout:5 attempts:1\n' \
    > "$YK_TMP/resolv.conf"
cat > "$YK_TMP/in-ns.sh" <<EOF
#!/bin/sh
mount --bind "$YK_TMP/resolv.conf" /etc/resolv.conf || exit 1
exec "\$@"
EOF
chmod +x "$YK_TMP/in-ns.sh"
yk_kdc_stop
sed -i "s|^\( *yubikey_ldap_uri = \).*|\1ldap://ldap.unanswered.test:$YK_SLAPD_PORT/|" \
    "$YK_KRB5_DIR/kdc.conf" || yk_fail "kdc.conf"
grep -q "ldap.unanswered.test" "$YK_KRB5_DIR/kdc.conf" || yk_fail "kdc.conf"
: > "$YK_KDC_LOG"
# (Around any wrapper the suite runs under: tools/memcheck.)
ns="unshare -m --propagation private $YK_TMP/in-ns.sh"
YK_KDC_WRAPPER="$ns ${YK_KDC_WRAPPER:-}" yk_kdc_start
t0=$(yk_ms)
rc=$(tc "$YK_KRB5_CONF_PLAIN" carol carol-pw "$(yk_otp "$YK_TMP/carol.tok")")
ms=$(($(yk_ms) - t0))
[ "$rc" = 2 ] || { cat "$YK_TMP/tc.out" >&2;
    yk_fail "unanswered resolver: test client exit $rc, want 2 (no reply)"; }
grep -q "the name ldap.unanswered.test was not resolved within" \
    "$YK_KDC_LOG" || { grep yubikey: "$YK_KDC_LOG" | tail -3 >&2;
    yk_fail "unanswered resolver: the KDC log does not say so"; }
[ "$ms" -lt 4000 ] ||
    yk_fail "unanswered resolver: the attempt took $ms ms (resolver: 5 s)"
kill -0 "$YK_KDC_PID" 2>/dev/null || yk_fail "the KDC died"
yk_ok "a DNS server that never answers: the OTP login DISCARDed in $ms ms" \
    "(the resolver alone would wait 5 s), logged"
[ -z "$SKIP_2D" ] || yk_skip "$SKIP_2D (the rest passed)"
echo "PASS: review.sh"
exit 0
