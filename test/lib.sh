# test/lib.sh: helpers shared by the test and demo scripts (sourced, not run).
#
# A throwaway PostgreSQL cluster under $GBT_TMP, owned by an unprivileged
# user: initdb refuses to run as root, so when we are root we run the server
# as $GBT_OS_USER (created if missing).

# GPUBTREE_DEVICE=auto|off sets gpubtree.device in the scripts' sessions;
# the engine is GPUBTREE_ENGINE's, for the whole cluster.
case "${GPUBTREE_DEVICE:-}" in
gpu | cpu)
	echo "GPUBTREE_DEVICE=$GPUBTREE_DEVICE: the engine is now chosen by GPUBTREE_ENGINE=$GPUBTREE_DEVICE (gpubtree.engine); GPUBTREE_DEVICE takes auto or off" >&2
	exit 2
	;;
esac

PG_CONFIG=${PG_CONFIG:-pg_config}
PGBIN=$("$PG_CONFIG" --bindir)
GBT_OS_USER=${GBT_OS_USER:-gpubtree}

if [ "$(id -u)" = 0 ]; then
	if ! id "$GBT_OS_USER" >/dev/null 2>&1; then
		useradd --system --no-create-home --shell /bin/sh "$GBT_OS_USER" ||
			{ echo "cannot create user $GBT_OS_USER" >&2; exit 1; }
	fi
	as_pg() { su "$GBT_OS_USER" -s /bin/sh -c "$*"; }
	export PGUSER=$GBT_OS_USER
else
	as_pg() { sh -c "$*"; }
	export PGUSER=$(id -un)
fi

# pg_private_copy DIR: a copy of this PostgreSQL installation (PG_CONFIG's)
# under DIR; prints the copy's pg_config.  PostgreSQL finds its files
# relative to its binaries, so the copy is whole, and what is installed
# into it (a test-only build) never reaches the real one.
pg_private_copy() {
	local dir=$1 prefix d paths
	paths=$("$PG_CONFIG" --bindir --pkglibdir --sharedir --includedir --includedir-server --pkgincludedir) || return 1
	prefix=$(echo "$paths" | head -1)
	while grep -qv "^$prefix/" <<<"$paths"; do prefix=${prefix%/*}; done
	for d in $paths; do
		mkdir -p "$dir/${d#"$prefix"/}" && cp -a "$d/." "$dir/${d#"$prefix"/}/" || return 1
	done
	echo "$dir/$("$PG_CONFIG" --bindir | sed "s|^$prefix/||")/pg_config"
}

# cluster_init DIR PORT: initdb into DIR, listen only on a socket in DIR.
cluster_init() {
	local dir=$1 port=$2
	mkdir -p "$dir"
	[ "$(id -u)" = 0 ] && chown "$GBT_OS_USER" "$dir"
	as_pg "'$PGBIN/initdb' -D '$dir/data' -A trust -E UTF8 --locale=C.UTF-8 --no-sync" >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; return 1; }
	cat >>"$dir/data/postgresql.conf" <<CONF
port = $port
listen_addresses = ''
unix_socket_directories = '$dir'
fsync = off
shared_buffers = 128MB
max_parallel_maintenance_workers = 2
max_prepared_transactions = 10
log_min_messages = warning
CONF
	# Queries never wait for a mirror build by default; the suites that
	# compare the service's answers with btree's need the mirror at once, so
	# their clusters let a query wait for the build it asks for.
	# GBT_BUILD_WAIT= (empty) keeps the shipped default.
	if [ -n "${GBT_BUILD_WAIT-60s}" ]; then
		echo "gpubtree.build_wait = '${GBT_BUILD_WAIT-60s}'" >>"$dir/data/postgresql.conf"
	fi
	# Preloading starts the GPU service, as on a production server;
	# GBT_PRELOAD=0 tests the extension without it.  GPUBTREE_ENGINE=
	# auto|gpu|cpu chooses the service's engine (gpubtree.engine).
	if [ "${GBT_PRELOAD:-1}" = 1 ]; then
		echo "shared_preload_libraries = 'gpubtree'" >>"$dir/data/postgresql.conf"
		if [ -n "${GPUBTREE_ENGINE:-}" ]; then
			echo "gpubtree.engine = '$GPUBTREE_ENGINE'" >>"$dir/data/postgresql.conf"
		fi
	fi
}

cluster_start() {
	local dir=$1
	as_pg "'$PGBIN/pg_ctl' -D '$dir/data' -l '$dir/server.log' -w -t 60 start" >/dev/null ||
		{ tail -20 "$dir/server.log" >&2; return 1; }
	grep -q "^shared_preload_libraries = 'gpubtree'" "$dir/data/postgresql.conf" || return 0
	cluster_wait_service "$dir"
}

# cluster_wait_service DIR: wait (at most 60 s) until the GPU service runs.
# The server accepts connections before the service has chosen its engine
# (a GPU's set-up takes a second or more), and until then queries go to
# nbtree: tests whose output says where a query went start after it.
cluster_wait_service() {
	local dir=$1 port psql i
	port=$(sed -n 's/^port = //p' "$dir/data/postgresql.conf" | tail -1)
	psql="'$PGBIN/psql' -X -q -At -h '$dir' -p $port"
	as_pg "$psql -d postgres -c 'CREATE DATABASE gbt_service_wait'" >/dev/null 2>&1
	for i in $(seq 600); do
		[ "$(as_pg "$psql -d gbt_service_wait -c 'CREATE EXTENSION IF NOT EXISTS gpubtree' \
			-c 'SELECT running FROM gpubtree_status()'" 2>/dev/null)" = t ] && break
		sleep 0.1
	done
	as_pg "$psql -d postgres -c 'DROP DATABASE IF EXISTS gbt_service_wait'" >/dev/null 2>&1
	return 0
}

cluster_stop() {
	local dir=$1 mode=${2:-fast}
	as_pg "'$PGBIN/pg_ctl' -D '$dir/data' -m $mode -w -t 60 stop" >/dev/null 2>&1
}

# cluster_env DIR PORT: point libpq clients at the cluster.
cluster_env() {
	export PGHOST=$1 PGPORT=$2 PGDATABASE=postgres
}

# cluster_throwaway NAME PORT: a fresh cluster in DIR=/tmp/gpubtree-NAME.*,
# started, with libpq pointed at it and PSQL set; stopped and removed when
# the script exits.
cluster_throwaway() {
	DIR=$(mktemp -d "/tmp/gpubtree-$1.XXXXXX")
	trap 'cluster_stop "$DIR" immediate; rm -rf "$DIR"' EXIT
	cluster_init "$DIR" "$2" && cluster_start "$DIR" || exit 1
	cluster_env "$DIR" "$2"
	PSQL="$PGBIN/psql -X -q -At -v ON_ERROR_STOP=1"
}

# check NAME GOT EXPECTED: count one check of a test script (passed/failed),
# saying "ok: NAME" unless GBT_QUIET_OK is set.
passed=0
failed=0
check() {
	if [ "$2" = "$3" ]; then
		[ -n "${GBT_QUIET_OK:-}" ] || echo "ok: $1"
		passed=$((passed + 1))
	else
		echo "FAILED: $1: got '$2', expected '$3'"
		failed=$((failed + 1))
	fi
}
