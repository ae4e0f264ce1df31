#!/bin/bash
# SPDX-License-Identifier: MIT
# diskfull.sh: slapd's database on a file system that fills up.
#
# A DB2 realm (realm.sh) whose slapd keeps its LMDB database on a small
# tmpfs of its own (a private mount namespace: the host sees nothing),
# then filled to the last byte (a filler file, in slapd's namespace).
#   full:   a write that needs new pages (a 1 MB value) is refused; the
#           counter swaps are not: LMDB reuses the pages each swap frees,
#           so 50 OTP logins are accepted, each swap stored before its
#           ticket; password logins work;
#   freed:  (the filler removed) the big write works, OTP logins go on,
#           slapcat dumps the database whole with the last counter.
# (A full disk therefore never stops the KDC here; where a swap does
# fail, it is DISCARDed like any directory failure: outage.sh.)
# Exit 0 pass, 1 fail, 77 skip (announced: not root, no unshare -m).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"

R=$YK_REALM
TC=$YK_BUILDDIR/tests/client/yktestclient
YK_BREAKER_TIME=1
YK_KDC_UDP_PORT=$(yk_realm_free_port) || yk_fail "no free port"

yk_init
yk_realm_check_tools
[ -x "$TC" ] || yk_fail "tests/client/yktestclient is not built"
[ "$(id -u)" = 0 ] || yk_skip "a tmpfs in a private namespace needs root"
unshare -m --propagation private true 2>/dev/null ||
    yk_skip "unshare -m fails here: no private file system for slapd"

yk_realm_setup
yk_realm_addprinc alice alice-pw
yk_realm_enroll alice "$YK_TMP/alice.tok"
yk_realm_addprinc pat pat-pw
yk_kdc_start

# slapd again, its database moved onto a 8 MB tmpfs in its own namespace.
DB=$YK_TMP/slapd/db
yk_slapd_stop
cp -a "$DB" "$YK_TMP/db.copy" || yk_fail "cp $DB"
cat > "$YK_TMP/small-ns.sh" <<EOF
#!/bin/sh
mount -t tmpfs -o size=8m tmpfs "$DB" &&
cp -a "$YK_TMP/db.copy/." "$DB/" || exit 9
exec "\$@"
EOF
chmod +x "$YK_TMP/small-ns.sh"
YK_SLAPD_WRAPPER="unshare -m --propagation private $YK_TMP/small-ns.sh" \
    yk_slapd_start
in_ns() { nsenter -t "$YK_SLAPD_PID" -m "$@"; }
in_ns df -k "$DB" | tail -1 | grep -q tmpfs ||
    yk_fail "slapd's database is not on its tmpfs"

# tc NAME PW: the test client with NAME's token; its exit code.
tc() {
    KRB5_CONFIG=$YK_KRB5_CONF_PLAIN "$TC" --optimistic --password "$2" \
        --emu "$YK_TMP/$1.tok" "$1" > "$YK_TMP/tc.out" 2>&1
    echo $?
}
[ "$(tc alice alice-pw)" = 0 ] ||
    { cat "$YK_TMP/tc.out" >&2; yk_fail "alice: no login on the tmpfs"; }

# --- full ------------------------------------------------------------------
in_ns sh -c "dd if=/dev/zero of='$DB/filler' bs=64k 2>/dev/null; sync"
in_ns df -k "$DB" | tail -1 | awk '{ exit !($4 == 0) }' ||
    yk_fail "the tmpfs did not fill: $(in_ns df -k "$DB" | tail -1)"
# A write that needs new pages: refused, with slapd's reason.
big=$(head -c 1000000 /dev/zero | tr '\0' x)
printf 'dn: uid=pat,%s\nchangetype: modify\nadd: cn\ncn: %s\n' \
    "$YK_PEOPLE_DN" "$big" > "$YK_TMP/big.ldif"
yk_ldapmodify_as "$YK_ADMIN_DN" "$YK_ADMIN_PW" < "$YK_TMP/big.ldif" &&
    yk_fail "full disk: a 1 MB value was written"
why=$(grep -o "ldap_modify: .*" "$YK_TMP/ldapmodify.out" | head -1)
# The counter swaps need no new page: LMDB reuses the ones each swap
# frees (copy-on-write), so OTP logins go on, each swap acknowledged.
n_ok=0
for n in $(seq 50); do
    rc=$(tc alice alice-pw)
    [ "$rc" = 0 ] || { cat "$YK_TMP/tc.out" >&2;
        yk_kdc_attempts "alice@$R" | tail -1 >&2;
        yk_fail "full disk: OTP login $n refused (exit $rc)"; }
    n_ok=$((n_ok + 1))
done
ctr=$(yk_emu_last_counter "$YK_TMP/alice.tok")
stored=$(yk_ldapsearch_as "$YK_ADMIN_DN" "$YK_ADMIN_PW" -b "$YK_LDAP_BASE" \
    "(krbPrincipalName=alice@$R)" yubikeyTokenState |
    sed -n 's/^yubikeyTokenState: .* ctr=\([0-9]*\) .*/\1/p')
[ "$stored" = "$ctr" ] ||
    yk_fail "full disk: stored counter $stored, the last ticket's $ctr"
printf '%s\n' pat-pw | KRB5_CONFIG=$YK_KRB5_CONF_PLAIN kinit "pat@$R" \
    > "$YK_TMP/kinit.out" 2>&1 ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "full disk: pat's password login"; }
yk_ok "slapd's file system full: a write needing new pages refused" \
    "(${why:-refused}); $n_ok OTP logins accepted meanwhile, each swap" \
    "stored (counter $stored); pat's password login works"

# --- freed -----------------------------------------------------------------
in_ns rm -f "$DB/filler" || yk_fail "rm the filler"
yk_ldapmodify_as "$YK_ADMIN_DN" "$YK_ADMIN_PW" < "$YK_TMP/big.ldif" ||
    { head -c 600 "$YK_TMP/ldapmodify.out" >&2;
      yk_fail "space freed: the 1 MB value refused"; }
[ "$(tc alice alice-pw)" = 0 ] ||
    { cat "$YK_TMP/tc.out" >&2; yk_fail "space freed: alice refused"; }
in_ns slapcat -b "$YK_LDAP_BASE" -f "$YK_TMP/slapd/slapd.conf" \
    > "$YK_TMP/dump.ldif" 2> "$YK_TMP/slapcat.err" ||
    { cat "$YK_TMP/slapcat.err" >&2;
      yk_fail "space freed: slapcat of the database failed"; }
grep -q "^yubikeyTokenState: .* ctr=$(yk_emu_last_counter "$YK_TMP/alice.tok") " \
    "$YK_TMP/dump.ldif" || yk_fail "space freed: the dump lacks the counter"
yk_ok "space freed: the big write works, OTP logins go on, the database" \
    "dumps whole with the last counter"
echo "PASS: diskfull.sh"
exit 0
