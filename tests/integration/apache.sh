# SPDX-License-Identifier: MIT
# apache.sh: a throwaway Apache 2.4 with mod_auth_gssapi (realm.sh).
#
# Source it after realm.sh, then (after yk_realm_setup):
#   yk_apache_check          skip (loudly) without apache2 and
#                            libapache2-mod-auth-gssapi
#   yk_apache_start          HTTP/localhost and its keytab, a config file
#                            of its own (never the host's), started on a
#                            free 127.0.0.1 port: YK_WEB_URL
#                            (http://localhost:PORT), YK_WEB_DIR
#                            (access.log, error.log)
#   yk_apache_stop
# Two locations, both served by one CGI page that prints the principal
# (REMOTE_USER) and the ticket's auth indicators (GssapiNameAttributes):
#   /any       any Kerberos user (Require valid-user)
#   /yubikey   only a ticket with the indicator yubikey-2fa
#              (GssapiRequiredNameAttributes "auth-indicators=yubikey-2fa")
# A refusal answers with a page that says why (ErrorDocument 401, 403).
# Apache's access log records "user status path user-agent".  As root,
# the children run as www-data: the directories on the way are opened
# for reading (this is a throwaway realm) and the keytab is www-data's.

YK_APACHE_BIN=${YK_APACHE_BIN:-/usr/sbin/apache2}
YK_APACHE_MODS=${YK_APACHE_MODS:-/usr/lib/apache2/modules}
YK_WEB_DIR=
YK_WEB_URL=
YK_WEB_PORT=
YK_APACHE_PID=

yk_apache_check() {
    [ -x "$YK_APACHE_BIN" ] ||
        yk_skip "apache2 is not installed (tools/packages lists it)"
    [ -f "$YK_APACHE_MODS/mod_auth_gssapi.so" ] ||
        yk_skip "libapache2-mod-auth-gssapi is not installed" \
            "(tools/packages lists it)"
}

# The configuration file of the throwaway server.
yk_apache_conf() {
    local w=$YK_WEB_DIR m=$YK_APACHE_MODS loc
    cat <<EOF
ServerRoot "$w"
ServerName localhost
Listen 127.0.0.1:$YK_WEB_PORT
PidFile "$w/httpd.pid"
ErrorLog "$w/error.log"
LogLevel warn auth_gssapi:info
LogFormat "%u %>s %U \"%{User-Agent}i\"" yk
CustomLog "$w/access.log" yk
LoadModule mpm_prefork_module $m/mod_mpm_prefork.so
LoadModule authn_core_module $m/mod_authn_core.so
LoadModule authz_core_module $m/mod_authz_core.so
LoadModule authz_user_module $m/mod_authz_user.so
LoadModule alias_module $m/mod_alias.so
LoadModule cgi_module $m/mod_cgi.so
LoadModule auth_gssapi_module $m/mod_auth_gssapi.so
StartServers 2
MinSpareServers 1
MaxSpareServers 4
DocumentRoot "$w/htdocs"
ScriptAlias /any "$w/cgi/page"
ScriptAlias /yubikey "$w/cgi/page"
EOF
    [ "$(id -u)" = 0 ] && printf 'User www-data\nGroup www-data\n'
    for loc in any yubikey; do
        cat <<EOF
<Location /$loc>
    AuthType GSSAPI
    AuthName "krb5-yubikey"
    GssapiCredStore keytab:$w/http.keytab
    GssapiAllowedMech krb5
    GssapiNameAttributes json
EOF
        if [ "$loc" = yubikey ]; then
            cat <<EOF
    GssapiRequiredNameAttributes "auth-indicators=yubikey-2fa"
    ErrorDocument 403 "Refused: this page needs a ticket obtained with the YubiKey (auth indicator yubikey-2fa); log in again with kinit and your YubiKey."
EOF
        fi
        cat <<EOF
    ErrorDocument 401 "No Kerberos ticket: log in with kinit first."
    Require valid-user
</Location>
EOF
    done
}

yk_apache_start() {
    local w _
    w=$YK_TMP/web
    YK_WEB_DIR=$w
    mkdir -p "$w/htdocs" "$w/cgi" "$w/rcache" || yk_fail "mkdir $w"
    cat > "$w/cgi/page" <<'EOF'
#!/bin/sh
printf 'Content-Type: text/plain\n\n'
printf 'krb5-yubikey test page %s\n' "$SCRIPT_NAME"
printf 'principal: %s\n' "$REMOTE_USER"
# The ticket's auth indicators: the raw (base64) values of the
# name attribute auth-indicators in mod_auth_gssapi's JSON.
ind=$(printf '%s' "$GSS_NAME_ATTRS_JSON" |
    sed -n 's/.*"auth-indicators":{[^}]*"values":\[\([^]]*\)\].*/\1/p' |
    grep -o '"raw":"[^"]*"' | sed 's/^"raw":"//; s/"$//' |
    while read -r b; do printf '%s' "$b" | base64 -d; echo; done |
    paste -sd, -)
printf 'indicators: %s\n' "${ind:-none}"
EOF
    chmod 755 "$w/cgi/page"
    yk_realm_service HTTP/localhost
    kadmin.local -r "$YK_REALM" ktadd -k "$w/http.keytab" HTTP/localhost \
        > "$YK_KRB5_DIR/kadmin.out" 2>&1 ||
        { cat "$YK_KRB5_DIR/kadmin.out" >&2; yk_fail "ktadd HTTP/localhost"; }
    if [ "$(id -u)" = 0 ]; then
        chmod o+x "$YK_TMP" || yk_fail "chmod $YK_TMP"
        chmod -R o+rX "$w" "$YK_KRB5_DIR"/krb5*.conf 2>/dev/null
        chown www-data "$w/http.keytab" "$w/rcache" &&
            chmod 600 "$w/http.keytab" || yk_fail "keytab for www-data"
        chmod o+x "$YK_KRB5_DIR" || yk_fail "chmod $YK_KRB5_DIR"
    fi
    for _ in 1 2 3; do
        YK_WEB_PORT=$(yk_realm_free_port) || yk_fail "no free port"
        yk_apache_conf > "$w/httpd.conf"
        : > "$w/error.log"
        KRB5_CONFIG=$YK_KRB5_CONF_PLAIN KRB5RCACHEDIR=$w/rcache \
            "$YK_APACHE_BIN" -f "$w/httpd.conf" -k start \
            > "$w/start.out" 2>&1 ||
            { cat "$w/start.out" "$w/error.log" >&2;
              yk_fail "apache2 did not start"; }
        for _ in $(seq 50); do
            [ -s "$w/httpd.pid" ] && yk_port_busy "$YK_WEB_PORT" && break
            sleep 0.1
        done
        if [ -s "$w/httpd.pid" ]; then
            YK_APACHE_PID=$(cat "$w/httpd.pid")
            yk_register_pid "$YK_APACHE_PID"
            YK_WEB_URL=http://localhost:$YK_WEB_PORT
            return 0
        fi
        grep -q 'Address already in use' "$w/error.log" || break
    done
    cat "$w/start.out" "$w/error.log" >&2
    yk_fail "apache2 did not start on 127.0.0.1:$YK_WEB_PORT"
}

yk_apache_stop() {
    [ -n "$YK_APACHE_PID" ] || return 0
    yk_stop_pid "$YK_APACHE_PID"
    YK_APACHE_PID=
}
