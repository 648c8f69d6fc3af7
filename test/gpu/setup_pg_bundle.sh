# Sourced on the GPU machine (no PostgreSQL, no package registry there):
# unpacks the PostgreSQL 15 bundle carried in .gpu/ (copy it there from
# ../shared/gpu/pg15-bundle.tar.gz; the folder is git-ignored) and puts it on
# PATH.  Its binaries expect to live under /tmp/pgbundle/pg15.
if [ ! -x /tmp/pgbundle/pg15/bin/postgres ]; then
	mkdir -p /tmp/pgbundle && tar xzf .gpu/pg15-bundle.tar.gz -C /tmp/pgbundle || return 1
fi
export PATH=/tmp/pgbundle/pg15/bin:$PATH
export PG_CONFIG=/tmp/pgbundle/pg15/bin/pg_config

# gpu_bench_begin CONSOLE: the start of a GPU-machine benchmark wrapper
# (caller sets START=$SECONDS and OUT): $OUT made, everything printed from
# here on also copied to $OUT/CONSOLE, the device and machine printed, and
# gpubtree built and installed against the bundle from GBT_BENCH_SRC
# (default: the checkout; for example a `git archive` of a commit, with the
# commit id in its .commit file, so that a run measures a known commit while
# the checkout is being edited).  Returns 1 when the build fails.
gpu_bench_begin() {
	mkdir -p "$OUT"
	exec > >(tee "$OUT/$1") 2>&1
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
	echo "cores: $(nproc); memory: $(awk '/MemTotal/ {print int($2/1048576)" GiB"}' /proc/meminfo)"
	SRC=${GBT_BENCH_SRC:-.}
	[ -f "$SRC/.commit" ] && export GBT_COMMIT=$(cat "$SRC/.commit")
	echo "building $SRC${GBT_COMMIT:+ (commit $GBT_COMMIT)}"
	make -s -C "$SRC" PG_CONFIG="$PG_CONFIG" && make -s -C "$SRC" install PG_CONFIG="$PG_CONFIG" ||
		{ echo "build failed"; return 1; }
	echo "built and installed in $((SECONDS - START)) s"
}
