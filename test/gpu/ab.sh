#!/usr/bin/env bash
# test/gpu/ab.sh PART ARGS: the same measurement of several trees on one GPU
# machine, in one call of the device tool, so that a change is compared
# with what it changed on the same host (two machines of one kind differed
# by 2x in the service's times on 2026-11-27).
#
#   regress TEST...          pg_regress TEST... on the GPU engine
#                            (gpubtree.engine = gpu), each statement over
#                            1.5 s logged
#   sql FILE                 psql -f FILE (a path in the tree, e.g. under
#                            .gpu/) on a new database of a GPU-engine cluster
#   clients VAR=VALUE...     test/bench/clients.sh (LOG2, default 24) with
#                            the settings given (ONLY, CLIENTS, DURATION,
#                            SERVICE_LOG, ...)
#
# Each tree is a `git archive` in the git-ignored .gpu/ab/ (carried with
# .gpu), measured in the order of TREES (default "base new"):
#
#   git archive 57cfbcb | gzip > .gpu/ab/base.tar.gz
#   git archive HEAD | gzip > .gpu/ab/new.tar.gz
#   run(command="TLIM=230 test/gpu/ab.sh clients ONLY='sum_1 mix' CLIENTS='16 64' SERVICE_LOG=1",
#       carry=[".gpu"], timeout_s=560)
#
# Each tree is built, installed into the bundle's PostgreSQL and measured
# within TLIM seconds (default 150); what it printed goes to stdout and its
# report (clients) or server log (regress) to $OUT as TREE-*.
set -u
ROOT=$PWD
. test/gpu/setup_pg_bundle.sh || exit 1
OUTD=${OUT:-/tmp/gbt-ab-out}
mkdir -p "$OUTD" /tmp/ab && chmod 755 /tmp/ab
nvidia-smi --query-gpu=name --format=csv,noheader
echo "cores: $(nproc)"
part=$1
shift
for t in ${TREES:-base new}; do
	d=/tmp/ab/$t
	rm -rf "$d" && mkdir -p "$d" && tar xzf "$ROOT/.gpu/ab/$t.tar.gz" -C "$d" || { echo "$t: no archive"; continue; }
	cp -r "$ROOT/.gpu" "$d/"
	start=$SECONDS
	(cd "$d" && make -s -j"$(nproc)" PG_CONFIG="$PG_CONFIG" >/dev/null 2>&1 &&
		make -s install PG_CONFIG="$PG_CONFIG" >/dev/null 2>&1) || { echo "$t: build failed"; continue; }
	echo "=== $t built in $((SECONDS - start)) s"
	cd "$d" || exit 1
	. test/lib.sh
	if [ "$part" = regress ] || [ "$part" = sql ]; then
		DIR=/tmp/ab/c-$t
		rm -rf "$DIR"
		GPUBTREE_ENGINE=gpu cluster_init "$DIR" 54500 || { echo "$t: initdb failed"; cd "$ROOT"; continue; }
		echo "log_min_duration_statement = 1500" >>"$DIR/data/postgresql.conf"
		cluster_start "$DIR" || { echo "$t: the cluster did not start"; cd "$ROOT"; continue; }
		if [ "$part" = regress ]; then
			(cluster_env "$DIR" 54500; timeout "${TLIM:-150}" make -s installcheck ISOLATION= REGRESS="$*" 2>&1 |
				grep -E "^test|FAIL|passed|failed")
		else
			(cluster_env "$DIR" 54500; createdb ab && timeout "${TLIM:-150}" psql -X -q -d ab -f "$ROOT/$1" 2>&1)
		fi
		grep -E "duration:|WARNING|FATAL" "$DIR/server.log" | cut -c1-300 | head -30
		cp "$DIR/server.log" "$OUTD/$t-server.log"
		cluster_stop "$DIR"
	else
		RESULTS=/tmp/ab/r-$t timeout "${TLIM:-150}" env "$@" test/bench/clients.sh "${LOG2:-24}" 2>&1 | tail -3
		cp /tmp/ab/r-$t/clients-report.md "$OUTD/$t-clients-report.md" 2>/dev/null
		cp /tmp/ab/r-$t/clients-service.txt "$OUTD/$t-clients-service.txt" 2>/dev/null
		grep -E "^\| " /tmp/ab/r-$t/clients-report.md | grep -v "^| workload\|^|---"
		cut -c1-420 /tmp/ab/r-$t/clients-service.txt 2>/dev/null
	fi
	cd "$ROOT" || exit 1
done
