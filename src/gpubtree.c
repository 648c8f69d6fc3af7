/*
 * gpubtree.c
 *	  Module entry point and configuration parameters.
 *
 * Nothing here touches CUDA: this file also runs in the postmaster when the
 * library is in shared_preload_libraries, and a CUDA context must never be
 * created there (it would not survive fork()).
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

#include "gpubtree.h"

PG_MODULE_MAGIC;

int			gpubtree_device_mode = GPUBTREE_DEVICE_AUTO;

static const struct config_enum_entry device_mode_options[] = {
	{"auto", GPUBTREE_DEVICE_AUTO, false},
	{"gpu", GPUBTREE_DEVICE_GPU, false},
	{"cpu", GPUBTREE_DEVICE_CPU, false},
	{"off", GPUBTREE_DEVICE_OFF, false},
	{NULL, 0, false}
};

void		_PG_init(void);

void
_PG_init(void)
{
	DefineCustomEnumVariable("gpubtree.device",
							 "Where gpubtree answers bulk scans and aggregates.",
							 "auto uses a GPU when one is usable and the CPU engine otherwise; "
							 "gpu prefers the GPU but still falls back; cpu always uses the CPU engine; "
							 "off uses only the on-disk B-tree.",
							 &gpubtree_device_mode,
							 GPUBTREE_DEVICE_AUTO,
							 device_mode_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	MarkGUCPrefixReserved("gpubtree");

	gpubtree_btree_label_init();
}

const char *
gpubtree_device_mode_name(int mode)
{
	const struct config_enum_entry *e;

	for (e = device_mode_options; e->name != NULL; e++)
		if (e->val == mode)
			return e->name;
	return "unknown";
}
