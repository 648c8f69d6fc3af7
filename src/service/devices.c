/*
 * devices.c
 *	  The devices the GPU service places mirrors on: every usable CUDA
 *	  device gpubtree.devices lets it use, or N simulated devices on the
 *	  CPU engine (gpubtree.simulated_devices, a test aid), or the CPU engine
 *	  alone.  Each device has a share of the memory limit; a new mirror goes
 *	  to the device with the most room, and eviction makes room there only.
 *	  A mirror larger than every share is split by position (engine.h's
 *	  split engine) across the fewest devices whose shares together hold
 *	  it, each part sized to its device's share.
 */
#include "postgres.h"

#include "utils/timestamp.h"

#include "service.h"
#include "settings.h"

#ifdef USE_CUDA
#include "gbt_device.h"
#endif

GbtDevice	gbt_devices[GBT_MAX_DEVICES];
int			gbt_ndevices = 0;

/* Whether gpubtree.devices lets mirrors go to the device numbered number. */
static bool
device_listed(int number)
{
	const char *p = gpubtree_devices != NULL ? gpubtree_devices : "";
	bool		any = false;

	while (*p != '\0')
	{
		char	   *end;
		long		d = strtol(p, &end, 10);

		if (end == p)
		{
			p++;				/* a separator (the setting's check let it in) */
			continue;
		}
		any = true;
		if (d == number)
			return true;
		p = end;
	}
	return !any;
}

static void
add_device(int number, int engine_device, const char *name, int64 free_bytes)
{
	GbtDevice  *dev = &gbt_devices[gbt_ndevices++];

	memset(dev, 0, sizeof(GbtDevice));
	dev->number = number;
	dev->engine_device = engine_device;
	strlcpy(dev->name, name, sizeof(dev->name));
	dev->free_at_start = free_bytes;
}

/*
 * The usable CUDA devices that gpubtree.devices lists; false, with why, when
 * there is none.  name is the first one's.
 */
static bool
find_gpus(char *name, Size namelen, char *why, Size whylen)
{
#ifdef USE_CUDA
	int			count = 0;
	int			d;

	if (gbt_engine_gpu_ops() == NULL)
	{
		strlcpy(why, "built without CUDA", whylen);
		return false;
	}
	if (gbt_cuda_device_count(&count, why, whylen) != 0)
		return false;
	if (count == 0)
	{
		strlcpy(why, "no CUDA device found", whylen);
		return false;
	}
	snprintf(why, whylen, "gpubtree.devices = '%s' names none of the %d CUDA devices",
			 gpubtree_devices, count);
	for (d = 0; d < count && d < GBT_MAX_DEVICES; d++)
	{
		char		devname[64];
		char		devwhy[GBT_ERRMSG_LEN];
		int64		free_bytes;

		if (!device_listed(d))
			continue;
		if (!gbt_engine_gpu_usable(d, devname, sizeof(devname), &free_bytes,
								   devwhy, sizeof(devwhy)))
		{
			/* one device held by another program leaves the others */
			ereport(LOG,
					(errmsg("gpubtree service: CUDA device %d is not used: %s", d, devwhy)));
			strlcpy(why, devwhy, whylen);
			continue;
		}
		if (gbt_ndevices == 0)
			strlcpy(name, devname, namelen);
		add_device(d, d, devname, free_bytes);
	}
	return gbt_ndevices > 0;
#else
	strlcpy(why, "built without CUDA", whylen);
	return false;
#endif
}

/*
 * Find the devices, once, at start: fills name (the first GPU's) or why
 * (why not a GPU).  Returns whether the mirrors live on GPUs.
 */
bool
gbt_find_devices(char *name, Size namelen, char *why, Size whylen)
{
	int			d;

	gbt_ndevices = 0;
	if (gpubtree_simulated_devices > 0)
	{
		for (d = 0; d < gpubtree_simulated_devices; d++)
			if (device_listed(d))
				add_device(d, -1, "simulated", 0);
		snprintf(why, whylen, "gpubtree.simulated_devices = %d", gpubtree_simulated_devices);
		return false;
	}
	if (gpubtree_engine != GPUBTREE_ENGINE_CPU &&
		find_gpus(name, namelen, why, whylen))
		return true;
	if (gpubtree_engine == GPUBTREE_ENGINE_CPU)
		strlcpy(why, "gpubtree.engine = cpu", whylen);
	gbt_ndevices = 0;
	add_device(-1, -1, "CPU engine", 0);
	return false;
}

/*
 * Share the memory limit (bytes, all devices together) among the devices:
 * equal shares, or on GPUs with the automatic limit, 3/4 of what each had
 * free at start (auto is true then, and total is ignored).  Returns the
 * total of the shares.
 */
int64
gbt_share_memory_limit(int64 total, bool auto_gpu)
{
	int64		sum = 0;
	int			d;

	for (d = 0; d < gbt_ndevices; d++)
	{
		gbt_devices[d].limit = auto_gpu ? gbt_devices[d].free_at_start / 4 * 3 :
			total / gbt_ndevices;
		sum += gbt_devices[d].limit;
	}
	return sum;
}

/* The devices and their shares, for the log: "0 (NAME): N MB, ...". */
void
gbt_devices_text(char *buf, Size len)
{
	int			d;

	buf[0] = '\0';
	for (d = 0; d < gbt_ndevices; d++)
	{
		Size		used = strlen(buf);

		snprintf(buf + used, len - used, "%s%d (%s): %lld MB", d > 0 ? ", " : "",
				 gbt_devices[d].number, gbt_devices[d].name,
				 (long long) (gbt_devices[d].limit >> 20));
	}
}

/* The largest device's share: the most a mirror not split may take. */
int64
gbt_largest_share(void)
{
	int64		largest = 0;
	int			d;

	for (d = 0; d < gbt_ndevices; d++)
		largest = Max(largest, gbt_devices[d].limit);
	return largest;
}

/*
 * The most one mirror may take: the shares of up to GBT_SPLIT_MAX_PARTS
 * devices together, the largest ones (a mirror split across them).
 */
int64
gbt_mirror_room(void)
{
	int64		limits[GBT_MAX_DEVICES];
	int64		room = 0;
	int			d,
				k;

	for (d = 0; d < gbt_ndevices; d++)
		limits[d] = gbt_devices[d].limit;
	for (k = 0; k < GBT_SPLIT_MAX_PARTS && k < gbt_ndevices; k++)
	{
		int			best = k;

		for (d = k + 1; d < gbt_ndevices; d++)
			if (limits[d] > limits[best])
				best = d;
		room += limits[best];
		limits[best] = limits[k];
	}
	return room;
}

/* Of bytes of a mirror placed as place, what its part k takes. */
static int64
part_bytes(int64 bytes, const GbtMirrorParts *place, int k)
{
	int64		total = 0;
	int			i;

	for (i = 0; i < place->nparts; i++)
		total += place->weight[i];
	return place->nparts <= 1 ? bytes :
		(int64) ((double) bytes * place->weight[k] / total) + 1;
}

/*
 * Bytes of the mirrors on device d (an index into gbt_devices): a split
 * mirror's in proportion to its parts there, and the room a build whose
 * engine is being built holds there.
 */
int64
gbt_device_used(int d)
{
	int64		used = 0;
	int64		building;
	GbtMirrorParts place;
	int			i,
				k;

	if (gbt_build_room(&building, &place))
		for (k = 0; k < place.nparts; k++)
			if (place.device[k] == d)
				used += part_bytes(building, &place, k);

	for (i = 0; i < GBT_MAX_MIRRORS; i++)
	{
		ServiceMirror *sm = &gbt_mirrors[i];

		if (!sm->in_use)
			continue;
		for (k = 0; k < sm->place.nparts; k++)
			if (sm->place.device[k] == d)
				used += part_bytes(gbt_mirror_bytes(sm->mirror), &sm->place, k);
	}
	return used;
}

/* Whether the mirror has a part on device d. */
static bool
mirror_on(const ServiceMirror *sm, int d)
{
	int			k;

	for (k = 0; k < sm->place.nparts; k++)
		if (sm->place.device[k] == d)
			return true;
	return false;
}

/*
 * Parts for a mirror larger than every share: the fewest devices, largest
 * shares first, whose shares together hold it, each part's weight its
 * device's share.  false when all of them together cannot.
 */
static bool
place_parts(int64 bytes, GbtMirrorParts *place)
{
	bool		taken[GBT_MAX_DEVICES] = {false};
	int64		sum = 0;
	int			d;

	place->nparts = 0;
	while (sum < bytes && place->nparts < GBT_SPLIT_MAX_PARTS)
	{
		int			best = -1;

		for (d = 0; d < gbt_ndevices; d++)
			if (!taken[d] && gbt_devices[d].limit > 0 &&
				(best < 0 || gbt_devices[d].limit > gbt_devices[best].limit))
				best = d;
		if (best < 0)
			break;
		taken[best] = true;
		place->device[place->nparts] = best;
		place->weight[place->nparts++] = gbt_devices[best].limit;
		sum += gbt_devices[best].limit;
	}
	return sum >= bytes && place->nparts > 1;
}

/*
 * The device a new mirror of the given size goes to: of those whose share
 * can hold it, the one with the most room left (ties: the first); -1 when
 * no share can.
 */
static int
place_mirror(int64 bytes)
{
	int			best = -1;
	int64		best_room = 0;
	int			d;

	for (d = 0; d < gbt_ndevices; d++)
	{
		int64		room = gbt_devices[d].limit - gbt_device_used(d);

		if (gbt_devices[d].limit < bytes)
			continue;
		if (best < 0 || room > best_room)
		{
			best = d;
			best_room = room;
		}
	}
	return best;
}

/* The least recently used mirror, on device d or (d < 0) on any. */
static ServiceMirror *
least_recently_used(int d)
{
	ServiceMirror *lru = NULL;
	int			i;

	for (i = 0; i < GBT_MAX_MIRRORS; i++)
	{
		ServiceMirror *sm = &gbt_mirrors[i];

		if (sm->in_use && (d < 0 || mirror_on(sm, d)) &&
			(lru == NULL || sm->last_used < lru->last_used))
			lru = sm;
	}
	return lru;
}

/*
 * Make room for a mirror of the given size: drop this index's older
 * mirrors (other storage), choose its device, or its parts' devices when
 * no share holds it (*place, devices as indexes into gbt_devices), then
 * drop each chosen device's least recently used mirrors while its share
 * would be exceeded.  Returns a free entry, or NULL when the mirror cannot
 * fit.
 */
ServiceMirror *
gbt_make_room(const GbtMirrorKey *key, int64 bytes, GbtMirrorParts *place)
{
	int			d;
	int			i,
				k;

	for (i = 0; i < GBT_MAX_MIRRORS; i++)
	{
		ServiceMirror *sm = &gbt_mirrors[i];

		if (sm->in_use && sm->key.dbid == key->dbid &&
			sm->key.indexrelid == key->indexrelid)
			gbt_drop_mirror(sm);
	}

	d = place_mirror(bytes);
	if (d >= 0)
	{
		place->nparts = 1;
		place->device[0] = d;
		place->weight[0] = 1;
	}
	else if (!place_parts(bytes, place))
		return NULL;
	for (;;)
	{
		ServiceMirror *free_entry = NULL;
		ServiceMirror *victim = NULL;
		bool		over = false;

		for (i = 0; i < GBT_MAX_MIRRORS && free_entry == NULL; i++)
			if (!gbt_mirrors[i].in_use)
				free_entry = &gbt_mirrors[i];
		for (k = 0; k < place->nparts && !over; k++)
		{
			d = place->device[k];
			if (gbt_device_used(d) + part_bytes(bytes, place, k) > gbt_devices[d].limit)
			{
				over = true;
				victim = least_recently_used(d);
			}
		}
		if (!over && free_entry != NULL)
			return free_entry;
		if (!over)
			victim = least_recently_used(-1);	/* the table is full */
		if (victim == NULL)
			return NULL;
		gbt_drop_mirror(victim);
	}
}

/*
 * Drop each device's least recently used mirrors while its mirrors exceed
 * its share: deltas grow, and gpubtree.mirror_memory_limit may have been
 * lowered.
 */
void
gbt_keep_under_limits(void)
{
	int			d;

	for (d = 0; d < gbt_ndevices; d++)
	{
		while (gbt_device_used(d) > gbt_devices[d].limit)
		{
			ServiceMirror *lru = least_recently_used(d);

			if (lru == NULL)
				break;
			gbt_drop_mirror(lru);
		}
	}
}
