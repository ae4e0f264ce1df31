#!/bin/bash
# SPDX-License-Identifier: MIT
# failover-delta.sh: failover.sh on two providers in delta-syncrepl
# (replica.sh with YK_REPLICA_DELTA=1: an accesslog database on each,
# syncrepl syncdata=accesslog), where each modify is replicated instead
# of whole entries.  Part c then shows a real conflict leaving two state
# values on both servers, the highest counter winning, and the next swap
# removing the other; part b's bounded case needs the swap's post-read
# check (a rival value left beside the newer one).
# Exit 0 pass, 1 fail, 77 skip (announced).

srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
YK_REPLICA_DELTA=1
export YK_REPLICA_DELTA
exec bash "$srcdir/tests/integration/failover.sh"
