#!/bin/bash
# SPDX-License-Identifier: MIT
# web.sh: single sign-on to a web site with the YubiKey ticket.
#
# A DB2 realm (realm.sh), a throwaway Apache 2.4 with mod_auth_gssapi on
# 127.0.0.1 (apache.sh): /any for any Kerberos user, /yubikey only for a
# ticket with the auth indicator yubikey-2fa.  Three users:
#   bob     kinit with password + OTP (our client module)
#   alice   kinit with the password alone (no token)
#   nobody  no ticket at all
# curl --negotiate -u : : bob gets both pages (200, the page names him
# and his indicators), alice /any (200) and not /yubikey (403, the page
# says why), nobody neither (401).  Then a real browser: headless
# Firefox ESR with a throwaway profile trusting the test host, the same
# three users, each visit checked in Apache's access log (user, status,
# Firefox's user agent) and by the page it rendered (a screenshot, its
# size).  Firefox missing: that part skipped loudly.
# Exit 0 pass, 1 fail, 77 skip (announced).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
# shellcheck source=realm.sh
. "$srcdir/tests/integration/realm.sh"
# shellcheck source=apache.sh
. "$srcdir/tests/integration/apache.sh"

R=$YK_REALM
yk_init
yk_realm_check_tools
yk_apache_check
command -v curl > /dev/null || yk_skip "curl is not installed"
curl -V | grep -qi 'GSS-API\|SPNEGO' ||
    yk_skip "this curl has no GSS-API (SPNEGO) support"

yk_realm_setup
yk_realm_addprinc alice alice-pw
yk_realm_addprinc bob bob-pw
yk_realm_enroll bob "$YK_TMP/bob.tok"
yk_kdc_start
yk_apache_start
echo "Apache on $YK_WEB_URL (config $YK_WEB_DIR/httpd.conf)"

BOB_CC=$YK_TMP/bob.cc ALICE_CC=$YK_TMP/alice.cc NONE_CC=$YK_TMP/none.cc
printf '%s\n%s\n' bob-pw "$(yk_otp "$YK_TMP/bob.tok")" |
    KRB5CCNAME=FILE:$BOB_CC yk_kinit "bob@$R" ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "bob: kinit with the OTP failed"; }
yk_expect_attempt bob "verdict=accepted"
printf '%s\n' alice-pw | KRB5CCNAME=FILE:$ALICE_CC yk_kinit "alice@$R" ||
    { cat "$YK_TMP/kinit.out" >&2; yk_fail "alice: kinit failed"; }

# get CCACHE PATH: curl --negotiate with that ccache; prints the status,
# the body in $YK_TMP/body.
get() {
    KRB5CCNAME=FILE:$1 KRB5_CONFIG=$YK_KRB5_CONF_PLAIN curl -s \
        --negotiate -u : -o "$YK_TMP/body" -w '%{http_code}' \
        "$YK_WEB_URL$2"
}
# want WHO CCACHE PATH STATUS [TEXT]: the status, and TEXT in the body.
want() {
    local who=$1 st
    st=$(get "$2" "$3")
    [ "$st" = "$4" ] || { cat "$YK_TMP/body" >&2;
        tail -5 "$YK_WEB_DIR/error.log" >&2;
        yk_fail "curl, $who, $3: HTTP $st, want $4"; }
    [ -z "${5:-}" ] || grep -qF -- "$5" "$YK_TMP/body" ||
        { cat "$YK_TMP/body" >&2; yk_fail "curl, $who, $3: the page lacks" \
            "\"$5\""; }
}

want bob "$BOB_CC" /any 200 "principal: bob@$R"
want bob "$BOB_CC" /yubikey 200 "principal: bob@$R"
grep -q "^indicators: .*yubikey-2fa" "$YK_TMP/body" ||
    { cat "$YK_TMP/body" >&2; yk_fail "bob's page shows no yubikey-2fa"; }
bob_page=$(cat "$YK_TMP/body")
want alice "$ALICE_CC" /any 200 "principal: alice@$R"
grep -qx "indicators: none" "$YK_TMP/body" ||
    { cat "$YK_TMP/body" >&2; yk_fail "alice's page shows indicators"; }
want alice "$ALICE_CC" /yubikey 403 "needs a ticket obtained with the YubiKey"
want nobody "$NONE_CC" /any 401 "No Kerberos ticket"
want nobody "$NONE_CC" /yubikey 401 "No Kerberos ticket"
yk_ok "curl --negotiate: bob (password + OTP) gets /any and /yubikey" \
    "($(printf '%s' "$bob_page" | grep '^indicators:')), alice (password)" \
    "/any and not /yubikey (403, the page says why), no ticket: 401"

# --- a real browser: headless Firefox ESR ----------------------------------
FF=$(command -v firefox-esr || command -v firefox) ||
    yk_skip "Firefox ESR is not installed (tools/packages lists" \
        "firefox-esr): the curl part passed, the browser part did not run"
FFP=$YK_TMP/firefox-profile
mkdir -p "$FFP" "$YK_TMP/ffhome" || yk_fail "mkdir $FFP"
cat > "$FFP/user.js" <<EOF
user_pref("network.negotiate-auth.trusted-uris", "http://localhost");
user_pref("network.negotiate-auth.allow-non-fqdn", true);
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);
user_pref("app.update.enabled", false);
EOF
# visit WHO CCACHE PATH: Firefox loads the page with that ccache and saves
# a screenshot to $YK_TMP/WHO-PATH.png; prints Apache's access log line
# for the visit (Firefox's user agent).
visit() {
    local who=$1 png=$YK_TMP/$1-${3#/}.png n
    n=$(wc -l < "$YK_WEB_DIR/access.log")
    HOME=$YK_TMP/ffhome KRB5CCNAME=FILE:$2 KRB5_CONFIG=$YK_KRB5_CONF_PLAIN \
        MOZ_HEADLESS=1 timeout 120 "$FF" --headless --no-remote \
        --profile "$FFP" --window-size 900,300 --screenshot "$png" \
        "$YK_WEB_URL$3" > "$YK_TMP/firefox.out" 2>&1 ||
        { cat "$YK_TMP/firefox.out" >&2; yk_fail "firefox ($who, $3) failed"; }
    [ -s "$png" ] || { cat "$YK_TMP/firefox.out" >&2;
        yk_fail "firefox ($who, $3) saved no screenshot"; }
    tail -n +$((n + 1)) "$YK_WEB_DIR/access.log" | grep -F "Firefox/" |
        grep -F " $3 " | tail -1
}
# browser WHO CCACHE PATH USER STATUS: the visit's last log line is
# "USER STATUS PATH ...Firefox/...".
browser() {
    local line
    line=$(visit "$1" "$2" "$3")
    [[ "$line" == "$4 $5 $3 "* ]] ||
        yk_fail "Firefox, $1, $3: Apache logged \"$line\", want \"$4 $5 $3" \
            "...Firefox...\""
}
browser bob "$BOB_CC" /yubikey "bob@$R" 200
browser bob "$BOB_CC" /any "bob@$R" 200
browser alice "$ALICE_CC" /any "alice@$R" 200
# (A 403 logs no user: mod_auth_gssapi refuses before it sets one; only a
# valid Negotiate token gets that far, where no ticket gets 401.)
browser alice "$ALICE_CC" /yubikey - 403
browser nobody "$NONE_CC" /yubikey - 401
yk_ok "headless Firefox ($("$FF" --version 2>/dev/null)): bob's ticket" \
    "opens /yubikey and /any, alice's /any only (403 on /yubikey), no" \
    "ticket 401 (Apache's access log, Firefox's user agent; screenshots" \
    "in the temp dir)"
echo "PASS: web.sh"
exit 0
