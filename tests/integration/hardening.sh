#!/bin/bash
# SPDX-License-Identifier: MIT
# hardening.sh: what the KDC module tells a password guesser, and its bounds.
#
# A DB2 realm (realm.sh) with a slapd that counts its operations (the
# monitor database), no cache (yubikey_cache_ttl 0) and a 3 s breaker.
# 1. Same directory work: a wrong password and a right one with a bad OTP
#    cost the same number of LDAP searches.
# 2. No password oracle during an outage: with the circuit breaker open
#    (slapd stopped), then with the keyring missing, a wrong password and
#    the right one both get no reply (DISCARD), and nothing is counted.
# 3. Time budget: through a proxy that delays every answer by 0.6 s
#    (yubikey_ldap_timeout 1 s: each operation in time), an attempt that
#    needs four operations is cut at 2 s, DISCARDed, and opens the
#    breaker.
# 4. A bind the directory refuses (wrong KDC password) opens the breaker:
#    one CONFIGURATION ERROR line, not one per request.
# 5. A second realm with a bad yubikey configuration (SASL GSSAPI, then a
#    malformed timeout, a write target naming two servers: in
#    yubikey_ldap_write_uri, or in yubikey_ldap_uri with no write URI) is
#    logged and its OTP logins DISCARDed, while the
#    first realm's OTP logins and the second's password logins work.
# Exit 0 pass, 1 fail, 77 skip (announced).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"

R=$YK_REALM
R2=OTHER.ORG
TC=$YK_BUILDDIR/tests/client/yktestclient
POLICY=lock10
DELAY_MS=600                    # the proxy's delay per answer
YK_CACHE_TTL=0
YK_BREAKER_TIME=3
YK_SLAPD_EXTRA_CONF="database monitor"
# The KDC's UDP on another port: after a DISCARD the client's UDP try is
# refused at once, so a DISCARD shows as "no reply" without a wait.
YK_KDC_UDP_PORT=$(yk_realm_free_port) || yk_fail "no free port"

perl -MIO::Socket::INET -MIO::Select -MTime::HiRes -e 1 2>/dev/null ||
    yk_skip "perl with IO::Socket, IO::Select and Time::HiRes is needed" \
        "for the delaying proxy (apt-get install perl)"
yk_realm_setup
[ -x "$TC" ] || yk_fail "$TC is not built (run make first)"
kadmin.local -r "$R" addpol -maxfailure 10 -failurecountinterval 0 \
    -lockoutduration 0 "$POLICY" > "$YK_KRB5_DIR/kadmin.out" 2>&1 ||
    { cat "$YK_KRB5_DIR/kadmin.out" >&2; yk_fail "addpol $POLICY failed"; }
yk_realm_addprinc alice alice-pw -policy "$POLICY"
yk_realm_enroll alice "$YK_TMP/alice.tok"
ALICE_ID=$("$YK_YKEMU_BIN" --public-id "$YK_TMP/alice.tok")
# Well-formed, alice's public id, but not made with her key.
BAD_OTP=${ALICE_ID}cccccccccccccccccccccccccccccccc

# tc WANT NAME PASSWORD [OPTIONS...]: the test client, optimistic (our
# padata in the first request), password-only krb5.conf (or $TC_CONF);
# alice's next OTP unless --otp is among the options.  Fails unless it
# exits WANT (0 issued, 1 refused, 2 no reply).  Sets ELAPSED.
tc() {
    local want=$1 name=$2 pw=$3 rc
    shift 3
    case " $* " in
        *" --otp "*) ;;
        *) set -- --emu "$YK_TMP/alice.tok" "$@" ;;
    esac
    KRB5_CONFIG=${TC_CONF:-$YK_KRB5_CONF_PLAIN} yk_timed "$TC" --optimistic \
        --password "$pw" "$@" "$name" > "$YK_TMP/tc.out" 2>&1
    rc=$?
    [ "$rc" = "$want" ] ||
        { cat "$YK_TMP/tc.out" >&2; tail -3 "$YK_KDC_LOG" >&2;
          yk_fail "$name ($pw): test client exit $rc, expected $want"; }
}

# The newest module line for alice must hold TEXT.
last_has() {
    local last
    last=$(yk_kdc_attempts "${2:-alice@$R}" | tail -1)
    case "$last" in
        *"$1"*) ;;
        *) yk_fail "last log line \"$last\" lacks \"$1\"" ;;
    esac
}

# The KDC's failure count of alice.
failures() {
    kadmin.local -r "$R" getprinc alice 2>/dev/null |
        sed -n 's/^Failed password attempts: //p'
}

# Searches slapd has completed (this one not included).
searches() {
    ldapsearch -LLL -x -H "$YK_LDAP_URI" \
        -b 'cn=Search,cn=Operations,cn=Monitor' -s base \
        monitorOpCompleted | sed -n 's/^monitorOpCompleted: //p'
}

# The searches one command makes, into SEARCHES (each reading of the
# count is itself one search, done by the time of the next reading).
count_searches() {
    local before after
    before=$(searches)
    "$@"
    after=$(searches)
    SEARCHES=$((after - before - 1))
}

# Module lines of the KDC log since the mark.
mark() {
    MARK=$(wc -l < "$YK_KDC_LOG")
}
since_mark() {
    tail -n +"$((MARK + 1))" "$YK_KDC_LOG" | grep 'yubikey: '
}

[[ "$(searches)" =~ ^[0-9]+$ ]] || yk_fail "slapd's monitor is not readable"
yk_kdc_start
tc 0 alice alice-pw
yk_ok "alice: password + OTP accepted (connections open)"

# --- 1. the same directory work for a wrong and a right password ---------
count_searches tc 1 alice wrong-pw --otp "$BAD_OTP"
last_has "reason=wrong password"
wrong=$SEARCHES
count_searches tc 1 alice alice-pw --otp "$BAD_OTP"
last_has "reason=bad CRC or key"
right=$SEARCHES
[ "$wrong" -ge 1 ] && [ "$wrong" = "$right" ] ||
    yk_fail "LDAP searches: $wrong for a wrong password, $right for the" \
        "right one (a timing oracle)"
f0=$(failures)
yk_ok "a wrong password and the right one with a bad OTP: both refused," \
    "$wrong LDAP searches each"

# --- 2. no oracle while the breaker is open or the keyring missing -------
mark
yk_slapd_stop
tc 2 alice alice-pw
last_has "verdict=discarded reason=backend"
since_mark | grep -q 'circuit breaker open for' ||
    yk_fail "the breaker did not open with slapd stopped"
tc 2 alice wrong-pw --otp "$BAD_OTP"
last_has "verdict=discarded reason=backend: circuit breaker open"
tc 2 alice alice-pw
last_has "verdict=discarded reason=backend: circuit breaker open"
[ "$(failures)" = "$f0" ] ||
    yk_fail "failures counted during the outage: $(failures), was $f0"
yk_ok "breaker open: a wrong and the right password both get no reply" \
    "(DISCARD), failure count unchanged ($f0)"
yk_slapd_start
sleep "$YK_BREAKER_TIME"

keyring=$YK_KRB5_DIR/master.keyring
yk_kdc_stop
mv "$keyring" "$keyring.away" || yk_fail "cannot move the keyring"
yk_kdc_start
tc 2 alice wrong-pw --otp "$BAD_OTP"
last_has "verdict=discarded reason=backend: master keyring unreadable"
tc 2 alice alice-pw
last_has "verdict=discarded reason=backend: master keyring unreadable"
[ "$(failures)" = "$f0" ] ||
    yk_fail "failures counted without a keyring: $(failures), was $f0"
mv "$keyring.away" "$keyring" || yk_fail "cannot restore the keyring"
yk_ok "keyring missing: a wrong and the right password both get no reply"

# --- 3. the time budget of one attempt -----------------------------------
# A proxy to slapd that holds every answer DELAY_MS (requests go through
# at once); one child per connection, all stopped with the proxy.
cat > "$YK_TMP/delayproxy.pl" <<'EOF'
use strict;
use warnings;
use IO::Socket::INET;
use IO::Select;
use POSIX ":sys_wait_h";
use Time::HiRes qw(time);

my ($rport, $delay, $portfile) = @ARGV;
my %kids;
my $srv = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0,
                                Listen => 16, ReuseAddr => 1)
    or die "listen: $!";
$SIG{CHLD} = sub { while ((my $p = waitpid(-1, WNOHANG)) > 0) {
    delete $kids{$p}; } };
$SIG{TERM} = sub { kill 'TERM', keys %kids; exit 0; };
open(my $fh, '>', "$portfile.tmp") or die;
print $fh $srv->sockport, "\n";
close $fh;
rename("$portfile.tmp", $portfile) or die;

sub relay {
    my ($c) = @_;
    my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
                                  PeerPort => $rport) or exit 1;
    my $sel = IO::Select->new($c, $s);
    my (@queue, $eof);
    for (;;) {
        my $now = time;
        while (@queue && $queue[0][0] <= $now) {
            defined(syswrite($c, (shift @queue)->[1])) or exit 0;
        }
        exit 0 if $eof && !@queue;
        my $wait = @queue ? $queue[0][0] - $now : undef;
        for my $h ($sel->can_read($wait)) {
            my $n = sysread($h, my $buf, 65536);
            if ($h == $c) {
                exit 0 unless $n;
                syswrite($s, $buf);
            } elsif ($n) {
                push @queue, [time + $delay / 1000, $buf];
            } else {
                $eof = 1;
                $sel->remove($s);
            }
        }
    }
}

for (;;) {
    my $c = $srv->accept or next;
    my $pid = fork;
    if (defined $pid && $pid == 0) {
        $SIG{TERM} = 'DEFAULT';
        close $srv;
        relay($c);
        exit 0;
    }
    $kids{$pid} = 1 if $pid;
    close $c;
}
EOF
perl "$YK_TMP/delayproxy.pl" "$YK_SLAPD_PORT" "$DELAY_MS" \
    "$YK_TMP/proxy.port" 2> "$YK_TMP/proxy.log" &
PROXY_PID=$!
yk_register_pid "$PROXY_PID"
for _ in $(seq 50); do
    [ -s "$YK_TMP/proxy.port" ] && break
    sleep 0.1
done
[ -s "$YK_TMP/proxy.port" ] ||
    { cat "$YK_TMP/proxy.log" >&2; yk_fail "the delay proxy did not start"; }
proxy_uri="ldap://127.0.0.1:$(cat "$YK_TMP/proxy.port")/"
t0=$(yk_ms)
ldapsearch -x -H "$proxy_uri" -b '' -s base namingContexts > /dev/null ||
    yk_fail "no answer through the proxy"
t_probe=$(($(yk_ms) - t0))
[ "$t_probe" -ge "$DELAY_MS" ] ||
    yk_fail "the proxy answered in $t_probe ms, not after $DELAY_MS ms"

mark
direct_uri=$YK_LDAP_URI
YK_LDAP_URI=$proxy_uri YK_KDC_EXTRA="  yubikey_ldap_timeout = 1" \
    yk_realm_write_config
yk_kdc_stop
yk_kdc_start
# A fresh worker: bind + search on the read connection, bind + modify on
# the write connection: 4 x 0.6 s, each within the 1 s timeout.
tc 2 alice alice-pw
t_cut=$ELAPSED
last_has "verdict=discarded reason=backend"
since_mark | grep 'circuit breaker open for' | grep -q 'time budget' ||
    { since_mark >&2; yk_fail "no breaker line naming the time budget"; }
[ "$t_cut" -lt 2900 ] ||
    yk_fail "the attempt took $t_cut ms (budget 2 x 1 s)"
tc 2 alice alice-pw
last_has "verdict=discarded reason=backend: circuit breaker open"
t_open=$ELAPSED
[ "$t_open" -lt "$DELAY_MS" ] ||
    yk_fail "with the breaker open the attempt took $t_open ms"
yk_ok "answers $DELAY_MS ms late (timeout 1 s): the attempt was cut after" \
    "$t_cut ms, DISCARDed, the breaker opened; next attempt $t_open ms"
yk_stop_pid "$PROXY_PID"
YK_LDAP_URI=$direct_uri
yk_realm_write_config

# --- 4. a refused bind opens the breaker, logged once --------------------
mark
cp -p "$YK_KRB5_DIR/kdc.pw" "$YK_TMP/kdc.pw.good" || yk_fail "cp kdc.pw"
printf 'not-the-password\n' > "$YK_KRB5_DIR/kdc.pw"
yk_kdc_stop
yk_kdc_start
tc 2 alice alice-pw
last_has "verdict=discarded reason=backend"
tc 2 alice alice-pw
last_has "verdict=discarded reason=backend: circuit breaker open"
tc 2 alice alice-pw
want="CONFIGURATION ERROR: realm $R: the token directory refused the KDC's"
n=$(since_mark | grep -cF "$want bind")
[ "$n" = 1 ] ||
    { since_mark >&2; yk_fail "$n bind CONFIGURATION ERROR lines, want 1"; }
[ "$(failures)" = "$f0" ] ||
    yk_fail "failures counted for a refused bind: $(failures), was $f0"
yk_ok "refused bind: breaker open, one CONFIGURATION ERROR line for three" \
    "attempts, nothing counted"
cp -p "$YK_TMP/kdc.pw.good" "$YK_KRB5_DIR/kdc.pw" || yk_fail "cp kdc.pw"

# --- 5. a misconfigured realm next to a good one -------------------------
# $1: the yubikey relations of the second realm.
second_realm() {
    local d=$YK_KRB5_DIR
    YK_KDC_EXTRA='' yk_realm_write_config
    # In [realms], after the first realm's subsection (before [plugins]).
    awk -v r2="$R2" -v d="$d" -v extra="$1" '
        /^\[plugins\]/ {
            print " " r2 " = {"
            print "  database_name = " d "/principal2"
            print "  key_stash_file = " d "/stash2"
            print "  acl_file = " d "/kadm5.acl"
            print "  default_principal_flags = +preauth"
            print extra
            print " }"
            print ""
        }
        { print }' "$d/kdc.conf" > "$d/kdc.conf.new" &&
        mv "$d/kdc.conf.new" "$d/kdc.conf" || yk_fail "kdc.conf for $R2"
}
second_realm "  yubikey_ldap_uri = $YK_LDAP_URI
  yubikey_ldap_base = $YK_LDAP_BASE
  yubikey_ldap_sasl_mech = GSSAPI
  yubikey_master_key_file = $YK_KRB5_DIR/master.keyring"
kdb5_util -r "$R2" create -s -P "$YK_DB_PASSWORD" \
    > "$YK_KRB5_DIR/kdb5_util2.log" 2>&1 ||
    { cat "$YK_KRB5_DIR/kdb5_util2.log" >&2; yk_fail "kdb5_util $R2"; }
kadmin.local -r "$R2" addprinc -pw bob-pw bob > "$YK_KRB5_DIR/kadmin.out" \
    2>&1 || { cat "$YK_KRB5_DIR/kadmin.out" >&2; yk_fail "addprinc bob"; }
yk_ldap_add_principal bob "$R2"

# Start the KDC for both realms and check both; $1: what the log says.
check_two_realms() {
    mark
    yk_kdc_stop
    yk_kdc_start -r "$R2"
    # A password-only krb5.conf knowing both realms (the KDC's port now).
    TC_CONF=$YK_TMP/krb5-two.conf
    sed "s|^\[realms\]|&\n $R2 = {\n  kdc = 127.0.0.1:$YK_KDC_PORT\n }|" \
        "$YK_KRB5_CONF_PLAIN" > "$TC_CONF"
    since_mark | grep -q "CONFIGURATION ERROR: realm $R2: $1" ||
        { since_mark >&2; yk_fail "no CONFIGURATION ERROR for $R2: $1"; }
    tc 0 alice alice-pw
    last_has "verdict=accepted"
    tc 2 "bob@$R2" bob-pw --otp "$BAD_OTP"
    last_has "verdict=discarded reason=backend: CONFIGURATION ERROR" \
        "bob@$R2"
    printf 'bob-pw\n' | KRB5_CONFIG=$TC_CONF kinit "bob@$R2" \
        > "$YK_TMP/kinit.out" 2>&1 ||
        { cat "$YK_TMP/kinit.out" >&2; yk_fail "bob: password login"; }
}
check_two_realms "yubikey_ldap_sasl_mech = GSSAPI cannot work in the KDC"
yk_ok "$R2 with SASL GSSAPI: refused at start (logged), its OTP logins" \
    "DISCARDed, its password logins work; $R's OTP logins work"
second_realm "  yubikey_ldap_uri = $YK_LDAP_URI
  yubikey_ldap_base = $YK_LDAP_BASE
  yubikey_ldap_timeout = soon"
check_two_realms "bad yubikey configuration"
yk_ok "$R2 with a malformed yubikey_ldap_timeout: the same"
second_realm "  yubikey_ldap_uri = $YK_LDAP_URI
  yubikey_ldap_write_uri = $YK_LDAP_URI ldap://127.0.0.1:9/
  yubikey_ldap_base = $YK_LDAP_BASE"
check_two_realms "yubikey_ldap_write_uri names 2 LDAP servers"
yk_ok "$R2 whose yubikey_ldap_write_uri names two servers: the same"
second_realm "  yubikey_ldap_uri = $YK_LDAP_URI,ldap://127.0.0.1:9/
  yubikey_ldap_base = $YK_LDAP_BASE"
check_two_realms "yubikey_ldap_write_uri is unset, so writes would go to"
yk_ok "$R2 whose yubikey_ldap_uri names two servers and no write URI:" \
    "the same"
echo "PASS: hardening.sh"
exit 0
