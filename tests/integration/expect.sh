# SPDX-License-Identifier: MIT
# expect.sh: checks on one command run, shared by the ykadmin tests.
# Source it after lib.sh; the test defines yka (runs ykadmin with stdout
# in $T/out and stderr in $T/err, returning its exit status).

# expect RC DESCRIPTION -- ARGS...: run yka ARGS (stdin inherited) and
# check its exit status; the output stays in $T/out and $T/err.
expect() {
    local want=$1 what=$2 rc
    shift 3
    yka "$@"
    rc=$?
    if [ "$rc" != "$want" ]; then
        echo "--- stdout:" >&2; cat "$T/out" >&2
        echo "--- stderr:" >&2; cat "$T/err" >&2
        yk_fail "$what: exit $rc, expected $want (ykadmin $*)"
    fi
}

# err_has TEXT WHAT: stderr of the last run contains TEXT.
err_has() {
    grep -qF -- "$1" "$T/err" ||
        { cat "$T/err" >&2; yk_fail "$2: stderr lacks \"$1\""; }
}

# out_has TEXT WHAT: stdout of the last run contains TEXT.
out_has() {
    grep -qF -- "$1" "$T/out" ||
        { cat "$T/out" >&2; yk_fail "$2: stdout lacks \"$1\""; }
}
