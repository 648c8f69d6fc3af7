/*
 * settings.c
 *	  gpubtree's configuration parameters.
 *
 * Defined by _PG_init in every process that loads the library.  Nothing here
 * touches CUDA: this also runs in the postmaster.
 */
#include "postgres.h"

#include <limits.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/interrupt.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "settings.h"
#include "shmem.h"

int			gpubtree_device_mode = GPUBTREE_DEVICE_AUTO;
int			gpubtree_engine = GPUBTREE_ENGINE_AUTO;
int			gpubtree_mirror_memory_limit = -1;
int			gpubtree_simulated_devices = 0;
char	   *gpubtree_devices = NULL;
int			gpubtree_batch_window = 0;
int			gpubtree_service_timeout = 5000;
int			gpubtree_min_gpu_batch = 1024;
bool		gpubtree_build_on_scan = true;
int			gpubtree_build_after_create = GPUBTREE_BUILD_AFTER_CREATE_WAIT;
int			gpubtree_build_wait = 0;
int			gpubtree_debug_build_delay = 0;
int			gpubtree_debug_service_publish_delay = 0;
int			gpubtree_debug_service_check_delay = 0;
int			gpubtree_debug_export_delay = 0;
int			gpubtree_debug_build_ask_delay = 0;
bool		gpubtree_debug_export_prefault = false;
bool		gpubtree_debug_tidy_pause = false;
int			gpubtree_debug_rebuild_delay = 0;
int			gpubtree_debug_engine_build_delay = 0;
bool		gpubtree_enable_aggregate = true;
bool		gpubtree_enable_lookup = true;
int			gpubtree_change_log_size = 1 << 18;

/*
 * gpubtree.device once also chose the service's engine.  Those values are
 * still recognised (hidden), so that they can be refused with a hint instead
 * of the generic list of valid values.
 */
#define DEVICE_FORMER_GPU	100
#define DEVICE_FORMER_CPU	101

static const struct config_enum_entry device_mode_options[] = {
	{"auto", GPUBTREE_DEVICE_AUTO, false},
	{"off", GPUBTREE_DEVICE_OFF, false},
	{"gpu", DEVICE_FORMER_GPU, true},
	{"cpu", DEVICE_FORMER_CPU, true},
	{NULL, 0, false}
};

static const struct config_enum_entry engine_options[] = {
	{"auto", GPUBTREE_ENGINE_AUTO, false},
	{"gpu", GPUBTREE_ENGINE_GPU, false},
	{"cpu", GPUBTREE_ENGINE_CPU, false},
	{NULL, 0, false}
};

/* on and off (the setting was once a bool) stay valid: on is wait. */
static const struct config_enum_entry build_after_create_options[] = {
	{"off", GPUBTREE_BUILD_AFTER_CREATE_OFF, false},
	{"background", GPUBTREE_BUILD_AFTER_CREATE_BACKGROUND, false},
	{"wait", GPUBTREE_BUILD_AFTER_CREATE_WAIT, false},
	{"on", GPUBTREE_BUILD_AFTER_CREATE_WAIT, true},
	{"true", GPUBTREE_BUILD_AFTER_CREATE_WAIT, true},
	{"yes", GPUBTREE_BUILD_AFTER_CREATE_WAIT, true},
	{"1", GPUBTREE_BUILD_AFTER_CREATE_WAIT, true},
	{"false", GPUBTREE_BUILD_AFTER_CREATE_OFF, true},
	{"no", GPUBTREE_BUILD_AFTER_CREATE_OFF, true},
	{"0", GPUBTREE_BUILD_AFTER_CREATE_OFF, true},
	{NULL, 0, false}
};

static bool
check_device_mode(int *newval, void **extra, GucSource source)
{
	if (*newval == DEVICE_FORMER_GPU || *newval == DEVICE_FORMER_CPU)
	{
		GUC_check_errdetail("gpubtree.device only says whether a session uses the GPU service: auto or off.");
		GUC_check_errhint("The service's engine is chosen by gpubtree.engine = %s in postgresql.conf, read at server start.",
						  *newval == DEVICE_FORMER_GPU ? "gpu" : "cpu");
		return false;
	}
	return true;
}

static const char *
enum_name(const struct config_enum_entry *options, int val)
{
	const struct config_enum_entry *e;

	for (e = options; e->name != NULL; e++)
		if (e->val == val)
			return e->name;
	return "unknown";
}

const char *
gpubtree_device_mode_name(int mode)
{
	return enum_name(device_mode_options, mode);
}

/*
 * gpubtree.devices: device numbers (0 .. GBT_MAX_DEVICES - 1), separated by
 * commas.  Whether they exist is known only to the service, which says so
 * when one does not.
 */
static bool
check_devices(char **newval, void **extra, GucSource source)
{
	const char *p = *newval;

	while (*p != '\0')
	{
		char	   *end;
		long		d;

		while (*p == ' ' || *p == ',')
			p++;
		if (*p == '\0')
			break;
		errno = 0;
		d = strtol(p, &end, 10);
		if (end == p || errno != 0 || d < 0 || d >= GBT_MAX_DEVICES)
		{
			GUC_check_errdetail("\"%s\" is not a list of device numbers from 0 to %d.",
								*newval, GBT_MAX_DEVICES - 1);
			return false;
		}
		p = end;
		while (*p == ' ')
			p++;
		if (*p != '\0' && *p != ',')
		{
			GUC_check_errdetail("\"%s\" is not a list of device numbers from 0 to %d.",
								*newval, GBT_MAX_DEVICES - 1);
			return false;
		}
	}
	return true;
}

const char *
gpubtree_engine_name(int engine)
{
	return enum_name(engine_options, engine);
}

/*
 * What the running service keeps its mirrors on: "gpu", "cpu", or "none"
 * (gpubtree.engine = gpu and it found no usable GPU: it builds no mirrors);
 * NULL when it is not running.  gpubtree.engine is fixed at server start, so
 * a backend's value is the service's.
 */
const char *
gbt_service_engine(void)
{
	GbtServiceFacts facts;

	if (gbt_shared == NULL)
		return NULL;
	gbt_service_facts(&facts);
	if (facts.pid == 0)
		return NULL;
	if (facts.gpu_usable)
		return "gpu";
	return gpubtree_engine == GPUBTREE_ENGINE_GPU ? "none" : "cpu";
}

void
gbt_settings_init(void)
{
	DefineCustomEnumVariable("gpubtree.device",
							 "Whether this session's bulk scans and aggregates may use the GPU service.",
							 "auto sends them to the service where it pays; off uses only the on-disk B-tree.  "
							 "The service's engine is gpubtree.engine.",
							 &gpubtree_device_mode,
							 GPUBTREE_DEVICE_AUTO,
							 device_mode_options,
							 PGC_USERSET,
							 0,
							 check_device_mode, NULL, NULL);

	/*
	 * Read by the service once, when it starts; a PGC_POSTMASTER parameter
	 * can only be defined while preloading (the service needs that anyway).
	 */
	if (process_shared_preload_libraries_in_progress)
		DefineCustomEnumVariable("gpubtree.engine",
								 "Where the GPU service keeps its mirrors.",
								 "auto: a usable GPU, else the CPU engine; gpu: a usable GPU only, "
								 "else no mirrors (every query uses nbtree); cpu: the CPU engine, even with a GPU.",
								 &gpubtree_engine,
								 GPUBTREE_ENGINE_AUTO,
								 engine_options,
								 PGC_POSTMASTER,
								 0,
								 NULL, NULL, NULL);

	/* The service's devices: read once, when it starts. */
	if (process_shared_preload_libraries_in_progress)
	{
		DefineCustomStringVariable("gpubtree.devices",
								   "The devices the GPU service places mirrors on, by number (for example '0,2').",
								   "Empty (the default): every device it finds.  A new mirror goes to the listed "
								   "device with the most room under its share of gpubtree.mirror_memory_limit.",
								   &gpubtree_devices,
								   "",
								   PGC_POSTMASTER,
								   GUC_LIST_INPUT,
								   check_devices, NULL, NULL);
		DefineCustomIntVariable("gpubtree.simulated_devices",
								"A test aid: the CPU engine's mirrors placed as on this many devices.",
								"0 (the default): off.  N > 0: the service runs on the CPU engine and treats it as N "
								"devices, each with 1/N of gpubtree.mirror_memory_limit, to test placement and "
								"eviction without several GPUs.",
								&gpubtree_simulated_devices,
								0, 0, GBT_MAX_DEVICES,
								PGC_POSTMASTER,
								GUC_NOT_IN_SAMPLE,
								NULL, NULL, NULL);
	}

	DefineCustomIntVariable("gpubtree.mirror_memory_limit",
							"Memory all mirrors together may use: their bytes in the GPU's memory and in the service's.",
							"-1 (auto): three quarters of the GPU's memory, or a quarter of the server's "
							"when the service runs on the CPU engine.  Least recently used mirrors are evicted "
							"to stay under it; a mirror that cannot fit is never built.",
							&gpubtree_mirror_memory_limit,
							-1, -1, INT_MAX / 2,
							PGC_SIGHUP,
							GUC_UNIT_MB,
							NULL, NULL, NULL);

	/* Sizes shared memory: only settable when preloaded (no log otherwise). */
	if (process_shared_preload_libraries_in_progress)
		DefineCustomIntVariable("gpubtree.change_log_size",
								"Entries the shared change log holds (64 bytes each).",
								"Committed inserts wait there until the service applies them to the mirrors; "
								"a writer that finds it full waits for room, within gpubtree.service_timeout. "
								"When it stays full, or a transaction inserts more into one index than an eighth "
								"of the index's mirror (or of the log), mirrors are invalidated and rebuilt instead.",
								&gpubtree_change_log_size,
								1 << 18, 1 << 12, 1 << 24,
								PGC_POSTMASTER,
								0,
								NULL, NULL, NULL);

	DefineCustomIntVariable("gpubtree.batch_window",
							"How long the service waits for more requests before a launch.",
							"Requests from several sessions within the window share one batched launch.",
							&gpubtree_batch_window,
							0, 0, 100000,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpubtree.service_timeout",
							"How long a statement may wait for the GPU service, all its waits together.",
							"One budget per statement (each command a client sends, an implicit commit "
							"included), shared by every wait on the service: answers to requests and room in a "
							"full change log; a wait that gets its answer is given back.  Once it is spent, the statement's scans and aggregates use nbtree "
							"or the plan below without waiting, and its writes make the mirrors of what they "
							"change unusable until rebuilt.",
							&gpubtree_service_timeout,
							5000, 1, 3600 * 1000,
							PGC_USERSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpubtree.min_gpu_batch",
							"Fewest distinct keys (= ANY elements) for which an = ANY scan goes to the service, and a quarter of the fewest rows (as estimated) of a key range whose rows it returns.",
							"Smaller batches, and single-key lookups, stay on nbtree, which is faster for them.",
							&gpubtree_min_gpu_batch,
							1024, 1, INT_MAX,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("gpubtree.build_on_scan",
							 "Have a mirror built in the background when a scan or aggregate finds none that is current.",
							 "The query itself is answered by nbtree (or the plan below) meanwhile.",
							 &gpubtree_build_on_scan,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomEnumVariable("gpubtree.build_after_create",
							 "When the mirror of an index made by CREATE INDEX or REINDEX is built.",
							 "wait (the default): inside CREATE INDEX, which takes longer, where it can be (else "
							 "as background); background: by a build job that starts when the creating "
							 "transaction commits, not waited for; off: when the first scan or aggregate asks for it.",
							 &gpubtree_build_after_create,
							 GPUBTREE_BUILD_AFTER_CREATE_WAIT,
							 build_after_create_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("gpubtree.build_wait",
							"How long a query waits for the background build of a mirror it asked for.",
							"0 (the default): never; the query is answered without the mirror, and the next "
							"uses it.  For tests and scripts that need the mirror at once.",
							&gpubtree_build_wait,
							0, 0, 3600 * 1000,
							PGC_USERSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpubtree.debug_build_delay",
							"Makes background mirror builds wait this long before they start (for tests).",
							NULL,
							&gpubtree_debug_build_delay,
							0, 0, 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS | GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpubtree.debug_service_publish_delay",
							"Makes the service hold a newly built mirror back this long before publishing it (for tests).",
							"The service waits holding what the publication holds; a reload that lowers the "
							"setting ends the wait early.",
							&gpubtree_debug_service_publish_delay,
							0, 0, 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS | GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpubtree.debug_service_check_delay",
							"Makes the service hold a newly built mirror back this long before it checks that its export is still registered (for tests).",
							"A reload that lowers the setting ends the wait early.",
							&gpubtree_debug_service_check_delay,
							0, 0, 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS | GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpubtree.debug_export_delay",
							"Makes background mirror builds wait this long once their export is registered and the index read, before the hand-over (for tests).",
							"A reload that lowers the setting ends the wait early.",
							&gpubtree_debug_export_delay,
							0, 0, 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS | GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpubtree.debug_build_ask_delay",
							"Makes a query that found no current mirror wait this long before it looks at the mirror's build job (for tests).",
							"A reload that lowers the setting ends the wait early.",
							&gpubtree_debug_build_ask_delay,
							0, 0, 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS | GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("gpubtree.debug_export_prefault",
							 "Gives an export's request segment its memory in a helper thread, ahead of the export (to measure).",
							 NULL,
							 &gpubtree_debug_export_prefault,
							 false,
							 PGC_SIGHUP,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("gpubtree.debug_tidy_pause",
							 "Makes the service leave its mirrors' chunk sums as writes left them between requests (for tests).",
							 "So that a test's aggregates meet the chunks an update made dirty; the aggregates themselves still make what they need.",
							 &gpubtree_debug_tidy_pause,
							 false,
							 PGC_SIGHUP,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("gpubtree.debug_rebuild_delay",
							"Makes the build of a new tree for a mirror whose delta grew take this much longer (for tests).",
							"The build runs beside the service, which goes on answering from the old tree and logging the changes made meanwhile.",
							&gpubtree_debug_rebuild_delay,
							0, 0, 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS | GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpubtree.debug_engine_build_delay",
							"Makes the engine's part of a new mirror's build in the service take this much longer (for tests).",
							"That part runs beside the service, which goes on answering the other sessions and logging the index's changes made meanwhile.",
							&gpubtree_debug_engine_build_delay,
							0, 0, 3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS | GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("gpubtree.enable_aggregate",
							 "Lets the planner answer range aggregates through the GPU service.",
							 "The GpubtreeAggregate plan node; off, aggregates use the ordinary plans.",
							 &gpubtree_enable_aggregate,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomBoolVariable("gpubtree.enable_lookup",
							 "Lets the planner look up the rows of many keys through the GPU service.",
							 "The GpubtreeLookup plan node, for = ANY of large or run-time arrays and for joins on the key; off, such queries use the ordinary plans.",
							 &gpubtree_enable_lookup,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	MarkGUCPrefixReserved("gpubtree");
}

/*
 * Wait as long as the debug setting *delay_ms says, counted from now: a
 * reload is read at once, so that a test ends the wait by lowering the
 * setting (the caller's main loop still sees the reload); a shutdown request
 * ends it, and interrupts are served (a cancel or a terminate of a build
 * worker).  Sets the latch after, for what came meanwhile.
 */
void
gbt_debug_wait(const int *delay_ms)
{
	TimestampTz start = GetCurrentTimestamp();

	for (;;)
	{
		long		ms = TimestampDifferenceMilliseconds(GetCurrentTimestamp(),
														 TimestampTzPlusMilliseconds(start, *delay_ms));

		if (ms <= 0 || ShutdownRequestPending)
			break;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
			ProcessConfigFile(PGC_SIGHUP);
	}
	SetLatch(MyLatch);
}
