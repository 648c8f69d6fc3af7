# gpubtree: PGXS build.
#
#   make [USE_CUDA=auto|1|0] [CUDA_HOME=/usr/local/cuda] [CUDA_ARCH="sm_90 ..."]
#        (says in one line which engines the library has)
#   make install
#   make demo        build, install and run a demo on a throwaway cluster
#   make test-all    every test (what CI runs)
#   make deps        check what those two need (as root: install it)
#
# src/**/*.c and cuda/*.c are compiled with the C compiler; cuda/*.cu with nvcc
# when CUDA is enabled, and cuda/engine_nogpu.c only when it is not.  USE_CUDA=auto enables it when nvcc is on PATH or in
# CUDA_HOME.  The
# CUDA runtime is linked statically, so the installed library needs only the
# NVIDIA driver at run time, and works (CPU only) without it.

EXTENSION = gpubtree
MODULE_big = gpubtree
DATA = sql/gpubtree--0.1.0.sql sql/gpubtree--0.1.0--0.2.0.sql sql/gpubtree--0.2.0--0.3.0.sql
PGFILEDESC = "gpubtree - B-tree index access method with a GPU mirror"

# The tests: test/sql/*.sql against test/expected/*.out (pg_regress), and
# every isolation spec test/isolation/specs/*.spec against
# test/isolation/expected/ (pg_isolation_regress); their outputs go to
# results/ and output_iso/.  `make installcheck` runs both on the server
# libpq points at, which needs nothing but shared_preload_libraries =
# 'gpubtree' (tests that need prepared transactions have a second expected
# output for a server without them, the default).
REGRESS = types am_basics ordering constraints maintenance parallel partition aggregates agg_types agg_float_ties agg_funcs filters group_buckets \
	device errors differences service security any_planning any_dedup any_params lookup mvcc \
	capture_ddl in_statement twophase analytic group_estimate why_not export_visibility \
	build_after_create vacuum_sweep
REGRESS_OPTS = --inputdir=test --load-extension=gpubtree
# Tests that use contrib's amcheck run where it is installed (the wheel
# that carries PostgreSQL 16 lacks it; test/pg_version.sh): elsewhere
# installcheck names them as skipped.
AMCHECK_TESTS = constraints differences security
ISOLATION = $(sort $(basename $(notdir $(wildcard test/isolation/specs/*.spec))))
ISOLATION_OPTS = --inputdir=test/isolation --load-extension=gpubtree
# The suites compare the service's answers, so their queries wait for the
# mirror builds they ask for (the shipped default never waits): set for
# their sessions here rather than in the server's configuration.
installcheck: export PGOPTIONS := $(PGOPTIONS) -c gpubtree.build_wait=60s
# The crash, fault, standby and restore tests (t/*.pl, on
# PostgreSQL::Test::Cluster) make clusters of their own and take minutes,
# so they are not part of the quick installcheck: `make prove-installcheck`
# (or `make installcheck TAP_TESTS=1`) runs them with prove.  initdb
# refuses root: test/run_all.sh runs them as an unprivileged user.  They
# need Perl's IPC::Run (scripts/deps.sh).  (The target is below PGXS's.)

PG_CONFIG ?= pg_config

USE_CUDA ?= auto
CUDA_HOME ?= /usr/local/cuda
CUDA_ARCH ?= sm_90

# nvcc on PATH, else where CUDA installs it (Debian's PATH lacks /usr/local/cuda/bin).
NVCC_FOUND := $(or $(shell command -v nvcc 2>/dev/null),$(wildcard $(CUDA_HOME)/bin/nvcc))
ifeq ($(USE_CUDA),auto)
override USE_CUDA := $(if $(NVCC_FOUND),1,0)
endif
NVCC ?= $(or $(NVCC_FOUND),$(CUDA_HOME)/bin/nvcc)

SRC_DIRS = src src/common src/backend src/service src/exec src/aggregate src/lookup
C_SOURCES = $(sort $(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.c)) $(wildcard cuda/*.c))
ifeq ($(USE_CUDA),1)
C_SOURCES := $(filter-out cuda/engine_nogpu.c,$(C_SOURCES))
endif
OBJS = $(C_SOURCES:.c=.o)
PG_CPPFLAGS = $(foreach d,$(SRC_DIRS),-I$(CURDIR)/$(d)) -I$(CURDIR)/cuda

# GBT_SMALL_LAYOUT=1: the sizes below (each defined where it is used, under
# #ifndef, with what it sizes) at tiny values, so that small tests go through
# every layout change (test/run_all.sh's small-layout pass: a fresh copy of
# the tree, so every object is compiled with them, installed into a private
# copy of PostgreSQL).  Never for use.
ifeq ($(GBT_SMALL_LAYOUT),1)
PG_CPPFLAGS += -DGBT_RUN_MIN=2 -DGBT_MERGE_STEP=16 -DGBT_RECENT_MIN=4 -DGBT_SUM_BLOCK=4 \
	-DGBT_DUMP_MAX=8 -DGBT_REBUILD_MIN=64 -DGBT_REBUILD_SHARE=32 \
	-DGBT_REBUILD_STEP=16 -DGBT_JOIN_OUTER_MAX=16 -DGBT_LIST_PIECE_MIN=4 \
	-DGBT_CHUNK=16 -DGBT_CHUNK_FANOUT=4 -DGBT_CHUNK_SYNC_MAX=3 -DGBT_TIDY_CHUNKS=2 \
	-DGBT_SLICE_KEYS=16 -DGBT_WALK_PIECE_MIN=4 -DGBT_WALK_ALONE_MIN=64 \
	-DGBT_WALK_CHUNK=8 -DGBT_WALK_PENDING=4 \
	-DGBT_DEAD_SEARCH_MIN=64 -DGBT_BUILD_PIECE_MIN=16 -DGBT_BUILD_PIECE_ALIGN=8 \
	-DGBT_EXPORT_BATCH_PAGES=2 -DGBT_CHECK_RUN_SUMS=1
endif

ifeq ($(USE_CUDA),1)
CU_SOURCES = $(sort $(wildcard cuda/*.cu))
OBJS += $(CU_SOURCES:.cu=.o)
PG_CPPFLAGS += -DUSE_CUDA
SHLIB_LINK += -L$(CUDA_HOME)/lib64 -lcudart_static -lstdc++ -ldl -lrt -lpthread
NVCC_GENCODE = $(foreach a,$(CUDA_ARCH),-gencode=arch=compute_$(subst sm_,,$(a)),code=$(a))
NVCCFLAGS ?= -O3
NVCCFLAGS += -std=c++17 -Xcompiler -fPIC,-Wall $(NVCC_GENCODE) \
	-DGBT_CUDA_ARCHS='"$(subst $(eval) ,$(comma),$(strip $(CUDA_ARCH)))"' -Icuda
endif
comma := ,

# nvcc objects have no C source to make LLVM bitcode from; JIT inlining of
# this module is of no use anyway.
override with_llvm = no

EXTRA_CLEAN = cuda/*.o $(foreach d,$(SRC_DIRS),$(d)/*.o) results regression.diffs regression.out \
	test/tmp_check

# Without PGXS (no PostgreSQL yet) only the targets that install it can run.
PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)
ifneq ($(wildcard $(PGXS)),)
include $(PGXS)
else ifneq ($(filter-out deps demo test-all,$(or $(MAKECMDGOALS),all)),)
$(error no PostgreSQL build files (pg_config --pgxs): run `bash scripts/deps.sh`, as root it installs them)
endif

ifneq ($(wildcard $(PGXS)),)
ifeq ($(wildcard $(shell $(PG_CONFIG) --sharedir)/extension/amcheck.control),)
ifneq ($(and $(filter installcheck,$(MAKECMDGOALS)),$(filter $(AMCHECK_TESTS),$(REGRESS))),)
$(info gpubtree: skipped, no amcheck in this PostgreSQL: $(filter $(AMCHECK_TESTS),$(REGRESS)))
endif
REGRESS := $(filter-out $(AMCHECK_TESTS),$(REGRESS))
endif
endif

# A PostgreSQL built by a newer compiler (PostgreSQL 18's wheel:
# -Wmissing-variable-declarations, which gcc 12 lacks) may pass warning
# options this compiler rejects: they are dropped, the others kept.
ifneq ($(wildcard $(PGXS)),)
CC_UNKNOWN_W := $(shell LC_ALL=C $(CC) $(filter -W%,$(CFLAGS)) -E -x c /dev/null 2>&1 >/dev/null | \
	sed -n "s/.*unrecognized command.line option '\(-W[^']*\)'.*/\1/p")
ifneq ($(CC_UNKNOWN_W),)
override CFLAGS := $(filter-out $(CC_UNKNOWN_W),$(CFLAGS))
endif
endif

# One line after the library is linked: which engines it has.
ifeq ($(USE_CUDA),1)
GBT_ENGINE_LINE = gpubtree: built with CUDA ($(NVCC), $(CUDA_ARCH)): the service uses a GPU where one is usable, else its CPU engine
else
GBT_ENGINE_LINE = gpubtree: built without CUDA ($(if $(NVCC_FOUND),USE_CUDA=0,no nvcc on PATH or in $(CUDA_HOME)/bin)): the service runs its CPU engine only
endif
all: gpubtree-engine-line
.PHONY: gpubtree-engine-line
gpubtree-engine-line: $(shlib)
	@echo "$(GBT_ENGINE_LINE)"

ifeq ($(USE_CUDA),1)
cuda/%.o: cuda/%.cu $(wildcard cuda/*.h cuda/*.cuh)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@
endif

$(OBJS): $(foreach d,$(SRC_DIRS),$(wildcard $(d)/*.h)) $(wildcard cuda/*.h)

# scripts/deps.sh installs what is missing as root; any other user gets one
# line naming the packages.  (PG_CONFIG given to make reaches the scripts
# through the environment.)
.PHONY: deps demo test-all
deps:
	@bash scripts/deps.sh

demo: deps
	scripts/demo.sh

test-all: deps
	test/run_all.sh

.PHONY: prove-installcheck
prove-installcheck:
	$(prove_installcheck)
