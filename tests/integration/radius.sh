# SPDX-License-Identifier: MIT
# radius.sh: a throwaway FreeRADIUS on 127.0.0.1, behind MIT's otp module.
#
# Source it after realm.sh, then:
#   yk_radius_user NAME PASSWORD
#                            a user of the RADIUS server (its users file;
#                            before yk_radius_start)
#   yk_radius_anchors        (before yk_radius_start) also serve YubiKey
#                            OTPs, the anchors of bench/run: two more
#                            virtual servers, each on its own port, both
#                            decrypting with rlm_yubikey; "ykcache" keeps
#                            each token's last counter in memory
#                            (rlm_cache, rbtree: lost when the server
#                            stops), "yksql" in an SQLite table (rlm_sql,
#                            SQLite's default synced commit); skips (77)
#                            without them (yk_radius_anchors_missing)
#   yk_radius_anchors_missing
#                            prints what the anchors lack (nothing when
#                            freeradius, rlm_yubikey, rlm_cache_rbtree and
#                            rlm_sql_sqlite are all there)
#   yk_radius_yubikey_user NAME TOKENFILE
#                            a YubiKey user of both anchors: the emulated
#                            token's AES key and private id (Yubikey-Key,
#                            Yubikey-Private-ID) in the users file, its
#                            public id with counter 0 in the SQLite table
#                            (before yk_radius_start)
#   yk_radius_start          FreeRADIUS in the foreground (-f) on free
#                            UDP ports of 127.0.0.1, with a minimal
#                            radiusd.conf of its own (files + pap: the
#                            password is compared as sent); waits until it
#                            is ready; skips (77) without freeradius
#   yk_radius_stop / yk_radius_restart
#                            stop it (by PID); start it again on the same
#                            ports (the SQLite file is kept, the cache is
#                            not)
#   yk_radius_otp_section    the [otp] section of kdc.conf that sends MIT's
#                            otp module's DEFAULT token type there (and,
#                            with the anchors, the token types ykcache and
#                            yksql to their virtual servers)
#   yk_radius_logins NAME    how many "Login OK" lines it logged for NAME
#   yk_radius_pid            the PID of the running server
#
# The anchors' config, per OTP (User-Password is the OTP alone, 12 modhex
# of public id + 32 of AES block; User-Name the principal without realm):
#   authorize: files (the user's key), yubikey (Auth-Type yubikey, the
#     public id), then the last counter: ykcache reads its entry (read
#     only), yksql SELECTs its row;
#   authenticate: yubikey decrypts, checks the CRC and private id and
#     refuses a counter <= the last one;
#   post-auth: ykcache replaces the entry with the new counter (no
#     compare: a replay sent while the first is between authorize and
#     post-auth passes both); yksql UPDATEs the row WHERE the stored
#     counter is lower and rejects the login when no row changed (a
#     compare-and-set: of two concurrent uses of one OTP, one wins).
#
# Variables: YK_RADIUS_PORT (the pap server), YK_RADIUS_PORT_CACHE and
# YK_RADIUS_PORT_SQL (the anchors), YK_RADIUS_DIR (radiusd.conf, users,
# secret, radius.log (radius.log.old: before the last restart),
# counters.sqlite).  Knobs: YK_RADIUS_THREADS (4: the
# thread pool's max_servers, and the SQL connection pool's max),
# YK_RADIUS_CACHE_TTL (86400 s: how long a counter stays in the cache,
# rlm_cache's maximum), YK_RADIUS_SQL_BUSY_MS (5000: SQLite's
# busy_timeout, how long a writer waits for the lock).  The server is
# stopped by PID by lib.sh's trap.  The secret (a shared key between the
# KDC and the server) is random per run; the KDC reads it from the file
# named in [otp].

YK_RADIUS_DIR=
YK_RADIUS_PORT=
YK_RADIUS_PORT_CACHE=
YK_RADIUS_PORT_SQL=
YK_RADIUS_PID=
YK_RADIUS_ANCHORS=0
YK_RADIUS_THREADS=${YK_RADIUS_THREADS:-4}
YK_RADIUS_CACHE_TTL=${YK_RADIUS_CACHE_TTL:-86400}
YK_RADIUS_SQL_BUSY_MS=${YK_RADIUS_SQL_BUSY_MS:-5000}
YK_RADIUS_LIBDIR=/usr/lib/freeradius

# The directory, the secret, an empty users file and the anchors' SQLite
# bootstrap (the table; rows added by yk_radius_yubikey_user), once.
yk_radius_dir() {
    [ -n "$YK_RADIUS_DIR" ] && return 0
    YK_RADIUS_DIR=$YK_TMP/radius
    mkdir -p "$YK_RADIUS_DIR" || yk_fail "mkdir $YK_RADIUS_DIR"
    (umask 077; head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' \
        > "$YK_RADIUS_DIR/secret")
    : > "$YK_RADIUS_DIR/users"
    printf '%s\n' "CREATE TABLE ykcounter (public_id TEXT PRIMARY KEY," \
        "counter INTEGER NOT NULL);" > "$YK_RADIUS_DIR/bootstrap.sql"
}

yk_radius_user() {
    yk_radius_dir
    printf '%s Cleartext-Password := "%s"\n' "$1" "$2" \
        >> "$YK_RADIUS_DIR/users"
}

yk_radius_anchors_missing() {
    local m missing=
    command -v freeradius >/dev/null 2>&1 ||
        missing="freeradius (apt-get install freeradius)"
    for m in rlm_yubikey rlm_cache rlm_cache_rbtree rlm_sql rlm_sql_sqlite
    do
        [ -f "$YK_RADIUS_LIBDIR/$m.so" ] ||
            missing="$missing${missing:+, }$YK_RADIUS_LIBDIR/$m.so"
    done
    case "$missing" in
        *rlm_yubikey*) missing="$missing (apt-get install freeradius-yubikey)"
            ;;
    esac
    printf '%s' "$missing"
}

yk_radius_anchors() {
    local missing
    missing=$(yk_radius_anchors_missing)
    [ -z "$missing" ] || yk_skip "the RADIUS anchors need $missing"
    yk_radius_dir
    YK_RADIUS_ANCHORS=1
}

# The value of KEY in the emulated token state FILE (emu/emu.c's format).
yk_radius_token_field() {
    sed -n "s/^$2 //p" "$1"
}

yk_radius_yubikey_user() {
    local key privid pubid
    yk_radius_dir
    key=$(yk_radius_token_field "$2" aes_key)
    privid=$(yk_radius_token_field "$2" private_id)
    pubid=$(yk_radius_token_field "$2" public_id)
    if [ ${#key} != 32 ] || [ ${#privid} != 12 ] || [ ${#pubid} != 12 ]; then
        yk_fail "$2: not a token with a 12-character public id"
    fi
    (umask 077
     printf '%s Yubikey-Key := 0x%s, Yubikey-Private-ID := 0x%s\n' \
         "$1" "$key" "$privid" >> "$YK_RADIUS_DIR/users")
    printf "INSERT INTO ykcounter VALUES ('%s', 0);\n" "$pubid" \
        >> "$YK_RADIUS_DIR/bootstrap.sql"
}

# The anchors' modules (see the top of this file).
yk_radius_anchor_modules() {
    cat <<EOF
    yubikey {
        id_length = 12
        split = no
        decrypt = yes
        validate = no
    }
    always reject {
        rcode = reject
    }
    cache ykcache_counter {
        driver = "rlm_cache_rbtree"
        key = "%{Yubikey-Public-ID}"
        ttl = $YK_RADIUS_CACHE_TTL
        add_stats = no
        update {
            &control:Yubikey-Counter := &request:Yubikey-Counter
        }
    }
    sql yksql {
        driver = "rlm_sql_sqlite"
        dialect = "sqlite"
        sqlite {
            filename = "$YK_RADIUS_DIR/counters.sqlite"
            busy_timeout = $YK_RADIUS_SQL_BUSY_MS
            bootstrap = "$YK_RADIUS_DIR/bootstrap.sql"
        }
        read_clients = no
        pool {
            start = 1
            min = 1
            max = $YK_RADIUS_THREADS
            spare = $((YK_RADIUS_THREADS - 1))
            uses = 0
            retry_delay = 1
            lifetime = 0
            idle_timeout = 0
        }
    }
EOF
}

# A virtual server: name $1, UDP port $2 of 127.0.0.1, then the bodies
# of its authorize ($3), authenticate ($4) and post-auth ($5) sections.
yk_radius_server() {
    cat <<EOF
server $1 {
    listen {
        type = auth
        ipaddr = 127.0.0.1
        port = $2
    }
    authorize {
$3
    }
    authenticate {
$4
    }
    post-auth {
$5
    }
}
EOF
}

# The anchors' virtual servers on ports $1 (ykcache) and $2 (yksql).
yk_radius_anchor_servers() {
    local q="public_id = '%{Yubikey-Public-ID}'" auth
    auth="        Auth-Type yubikey {
            yubikey
        }"
    yk_radius_server ykcache "$1" "        files
        yubikey
        update control {
            &Cache-Read-Only := yes
        }
        ykcache_counter" "$auth" "        update control {
            &Cache-TTL := -$YK_RADIUS_CACHE_TTL
        }
        ykcache_counter"
    yk_radius_server yksql "$2" "        files
        yubikey
        update control {
            &Yubikey-Counter := \"%{yksql:SELECT counter FROM ykcounter WHERE $q}\"
        }" "$auth" "        if (\"%{yksql:UPDATE ykcounter SET counter = %{request:Yubikey-Counter} WHERE $q AND counter < %{request:Yubikey-Counter}}\" != 1) {
            reject
        }"
}

# radiusd.conf for port $1 (and, with the anchors, $2 and $3): one client
# (127.0.0.1), one virtual server (authorize: files, pap; authenticate:
# pap), log to radius.log.
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
libdir = $YK_RADIUS_LIBDIR
pidfile = $d/radiusd.pid
name = freeradius
max_request_time = 30
cleanup_delay = 0
max_requests = 4096
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
    max_servers = $YK_RADIUS_THREADS
    min_spare_servers = 1
    max_spare_servers = $YK_RADIUS_THREADS
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
$([ "$YK_RADIUS_ANCHORS" = 1 ] && yk_radius_anchor_modules)
}
$(yk_radius_server default "$1" "        files
        pap" "        pap" "")
$([ "$YK_RADIUS_ANCHORS" = 1 ] && yk_radius_anchor_servers "$2" "$3")
EOF
    # FreeRADIUS reads $confdir/dictionary after its own (none to add).
    : > "$d/dictionary"
}

# Start freeradius on ports $1 $2 $3; 0 when it is ready, 1 when it
# exited or did not get ready in 10 s (then stopped).
yk_radius_launch() {
    local i
    yk_radius_write_config "$@"
    # A restart keeps the earlier log in radius.log.old.
    cat "$YK_RADIUS_DIR/radius.log" >> "$YK_RADIUS_DIR/radius.log.old" \
        2>/dev/null
    : > "$YK_RADIUS_DIR/radius.log"
    freeradius -f -d "$YK_RADIUS_DIR" -n radiusd \
        > "$YK_RADIUS_DIR/radiusd.out" 2>&1 &
    YK_RADIUS_PID=$!
    yk_register_pid "$YK_RADIUS_PID"
    for i in $(seq 100); do
        kill -0 "$YK_RADIUS_PID" 2>/dev/null || break
        grep -q 'Ready to process requests' "$YK_RADIUS_DIR/radius.log" \
            2>/dev/null && return 0
        sleep 0.1
    done
    yk_stop_pid "$YK_RADIUS_PID"
    YK_RADIUS_PID=
    return 1
}

yk_radius_start() {
    local try port
    command -v freeradius >/dev/null 2>&1 ||
        yk_skip "freeradius not found (apt-get install freeradius)"
    yk_radius_dir
    for try in $(seq 10); do
        port=$(yk_random_port)
        if yk_radius_launch "$port" $((port + 1)) $((port + 2)); then
            YK_RADIUS_PORT=$port
            if [ "$YK_RADIUS_ANCHORS" = 1 ]; then
                YK_RADIUS_PORT_CACHE=$((port + 1))
                YK_RADIUS_PORT_SQL=$((port + 2))
            fi
            return 0
        fi
        # A port taken by another process: try another.
        grep -q 'Address already in use' "$YK_RADIUS_DIR/radius.log" \
            "$YK_RADIUS_DIR/radiusd.out" 2>/dev/null || break
    done
    cat "$YK_RADIUS_DIR/radiusd.out" "$YK_RADIUS_DIR/radius.log" >&2
    yk_fail "freeradius did not start"
}

yk_radius_stop() {
    [ -n "$YK_RADIUS_PID" ] && yk_stop_pid "$YK_RADIUS_PID"
    YK_RADIUS_PID=
}

yk_radius_restart() {
    yk_radius_stop
    yk_radius_launch "$YK_RADIUS_PORT" $((YK_RADIUS_PORT + 1)) \
        $((YK_RADIUS_PORT + 2)) && return 0
    cat "$YK_RADIUS_DIR/radiusd.out" "$YK_RADIUS_DIR/radius.log" >&2
    yk_fail "freeradius did not start again on port $YK_RADIUS_PORT"
}

yk_radius_pid() {
    echo "$YK_RADIUS_PID"
}

# One token type of the [otp] section: name $1, port $2.
yk_radius_otp_type() {
    cat <<EOF
 $1 = {
  server = 127.0.0.1:$2
  secret = $YK_RADIUS_DIR/secret
  timeout = 3
  retries = 1
  strip_realm = true
 }
EOF
}

yk_radius_otp_section() {
    echo "[otp]"
    yk_radius_otp_type DEFAULT "$YK_RADIUS_PORT"
    if [ "$YK_RADIUS_ANCHORS" = 1 ]; then
        yk_radius_otp_type ykcache "$YK_RADIUS_PORT_CACHE"
        yk_radius_otp_type yksql "$YK_RADIUS_PORT_SQL"
    fi
}

yk_radius_logins() {
    grep -c "Login OK: \[$1\]" "$YK_RADIUS_DIR/radius.log" 2>/dev/null ||
        true
}
