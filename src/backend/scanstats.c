/*
 * scanstats.c
 *	  What this backend's GPU bitmap scans and mirror builds did, counted for
 *	  EXPLAIN ANALYZE.
 *
 * The counters only grow (but for the last answer's engine and the last
 * scan's note on its mirror); EXPLAIN takes a copy before the query and
 * shows what changed after it.  Only this file touches them.
 */
#include "postgres.h"

#include "scanstats.h"

static GbtScanStats stats;

/* The service answered a scan of keys ranges with entries TIDs. */
void
gbt_scan_stats_answered(int64 keys, int64 entries, double device_ms, bool on_gpu)
{
	stats.gpu_scans++;
	stats.keys += keys;
	stats.entries += entries;
	stats.device_ms += device_ms;
	stats.on_gpu = on_gpu;
}

/* A scan that tried the service was answered by nbtree. */
void
gbt_scan_stats_fell_back(void)
{
	stats.fallbacks++;
}

void
gbt_scan_stats_add_prep(double ms)
{
	stats.prep_ms += ms;
}

void
gbt_scan_stats_add_wait(double ms)
{
	stats.wait_ms += ms;
}

void
gbt_scan_stats_add_build(double ms)
{
	stats.build_ms += ms;
}

/* Why the scan under way found no mirror ("" for nothing to say). */
void
gbt_scan_stats_set_note(const char *note)
{
	strlcpy(stats.mirror_note, note, sizeof(stats.mirror_note));
}

void
gbt_scan_stats_get(GbtScanStats *now)
{
	*now = stats;
}

/* The counts since before; the engine and the note as they are now. */
void
gbt_scan_stats_since(const GbtScanStats *before, GbtScanStats *delta)
{
	*delta = stats;
	delta->gpu_scans -= before->gpu_scans;
	delta->fallbacks -= before->fallbacks;
	delta->keys -= before->keys;
	delta->entries -= before->entries;
	delta->device_ms -= before->device_ms;
	delta->build_ms -= before->build_ms;
	delta->prep_ms -= before->prep_ms;
	delta->wait_ms -= before->wait_ms;
}
