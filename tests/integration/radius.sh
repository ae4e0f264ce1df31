# SPDX-License-Identifier: MIT
# radius.sh: a throwaway FreeRADIUS on 127.0.0.1, behind MIT's otp module.
#
# Source it after realm.sh, then:
#   yk_radius_user NAME PASSWORD
#                            a user of the RADIUS server (its users file;
#                            before yk_radius_start)
#   yk_radius_start          FreeRADIUS in the foreground (-f) on a free
#                            UDP port of 127.0.0.1, with a minimal
#                            radiusd.conf of its own (files + pap: the
#                            password is compared as sent); waits until it
#                            is ready; skips (77) without freeradius
#   yk_radius_otp_section    the [otp] section of kdc.conf that sends MIT's
#                            otp module's DEFAULT token type there
#   yk_radius_logins NAME    how many "Login OK" lines it logged for NAME
#
# Variables: YK_RADIUS_PORT, YK_RADIUS_DIR (radiusd.conf, users, secret,
# radius.log).  The server is stopped by PID by lib.sh's trap.  The
# secret (a shared key between the KDC and the server) is random per
# run; the KDC reads it from the file named in [otp].

YK_RADIUS_DIR=
YK_RADIUS_PORT=
YK_RADIUS_PID=

# The directory, the secret and an empty users file, once.
yk_radius_dir() {
    [ -n "$YK_RADIUS_DIR" ] && return 0
    YK_RADIUS_DIR=$YK_TMP/radius
    mkdir -p "$YK_RADIUS_DIR" || yk_fail "mkdir $YK_RADIUS_DIR"
    (umask 077; head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' \
        > "$YK_RADIUS_DIR/secret")
    : > "$YK_RADIUS_DIR/users"
}

yk_radius_user() {
    yk_radius_dir
    printf '%s Cleartext-Password := "%s"\n' "$1" "$2" \
        >> "$YK_RADIUS_DIR/users"
}

# radiusd.conf for port $1: one client (127.0.0.1), one virtual server
# (authorize: files, pap; authenticate: pap), log to radius.log.
yk_radius_write_config() {
    local d=$YK_RADIUS_DIR
    cat > "$d/radiusd.conf" <<EOF
prefix = /usr
exec_prefix = /usr
sysconfdir = /etc
localstatedir = /var
sbindir = /usr/sbin
raddbdir = $d
confdir = $d
logdir = $d
run_dir = $d
libdir = /usr/lib/freeradius
pidfile = $d/radiusd.pid
name = freeradius
max_request_time = 30
cleanup_delay = 0
max_requests = 1024
hostname_lookups = no
log {
    destination = files
    file = $d/radius.log
    auth = yes
}
security {
    allow_core_dumps = no
    max_attributes = 200
    reject_delay = 0
    status_server = no
}
thread pool {
    start_servers = 2
    max_servers = 4
    min_spare_servers = 1
    max_spare_servers = 4
    max_requests_per_server = 0
}
client loopback {
    ipaddr = 127.0.0.1
    secret = $(cat "$d/secret")
}
modules {
    files {
        filename = $d/users
    }
    pap {
    }
}
server default {
    listen {
        type = auth
        ipaddr = 127.0.0.1
        port = $1
    }
    authorize {
        files
        pap
    }
    authenticate {
        pap
    }
}
EOF
    # FreeRADIUS reads $confdir/dictionary after its own (none to add).
    : > "$d/dictionary"
}

yk_radius_start() {
    local try port i
    command -v freeradius >/dev/null 2>&1 ||
        yk_skip "freeradius not found (apt-get install freeradius)"
    yk_radius_dir
    for try in $(seq 10); do
        port=$((20000 + RANDOM % 40000))
        yk_radius_write_config "$port"
        : > "$YK_RADIUS_DIR/radius.log"
        freeradius -f -d "$YK_RADIUS_DIR" -n radiusd \
            > "$YK_RADIUS_DIR/radiusd.out" 2>&1 &
        YK_RADIUS_PID=$!
        yk_register_pid "$YK_RADIUS_PID"
        for i in $(seq 100); do
            kill -0 "$YK_RADIUS_PID" 2>/dev/null || break
            if grep -q 'Ready to process requests' \
                    "$YK_RADIUS_DIR/radius.log" 2>/dev/null; then
                YK_RADIUS_PORT=$port
                return 0
            fi
            sleep 0.1
        done
        yk_stop_pid "$YK_RADIUS_PID"
        YK_RADIUS_PID=
        # A port taken by another process: try another.
        grep -q 'Address already in use' "$YK_RADIUS_DIR/radius.log" \
            "$YK_RADIUS_DIR/radiusd.out" 2>/dev/null || break
    done
    cat "$YK_RADIUS_DIR/radiusd.out" "$YK_RADIUS_DIR/radius.log" >&2
    yk_fail "freeradius did not start"
}

yk_radius_otp_section() {
    cat <<EOF
[otp]
 DEFAULT = {
  server = 127.0.0.1:$YK_RADIUS_PORT
  secret = $YK_RADIUS_DIR/secret
  timeout = 3
  retries = 1
  strip_realm = true
 }
EOF
}

yk_radius_logins() {
    grep -c "Login OK: \[$1\]" "$YK_RADIUS_DIR/radius.log" 2>/dev/null ||
        true
}
