/*
 * device.c
 *	  gpubtree_device_info(): what this build and this backend see of CUDA.
 *
 * Runs in a backend, never in the postmaster, so initialising the CUDA
 * runtime here is allowed.  A missing driver or device is reported as a row,
 * not as an error: the extension works without a GPU.
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "backend.h"

#ifdef USE_CUDA
#include "gbt_device.h"
#endif

#define DEVICE_INFO_COLS 9

PG_FUNCTION_INFO_V1(gpubtree_device_info);

static void
put_row(ReturnSetInfo *rsinfo, Datum *values, bool *nulls)
{
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

Datum
gpubtree_device_info(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[DEVICE_INFO_COLS];
	bool		nulls[DEVICE_INFO_COLS];

	InitMaterializedSRF(fcinfo, 0);

	memset(values, 0, sizeof(values));
	memset(nulls, true, sizeof(nulls));

#ifdef USE_CUDA
	{
		char		errbuf[256];
		int			count;
		int			err;
		int			version = gbt_cuda_build_version();

		values[0] = BoolGetDatum(true);
		nulls[0] = false;
		values[1] = CStringGetTextDatum(psprintf("%d.%d", version / 1000,
												 (version % 1000) / 10));
		nulls[1] = false;
		values[2] = CStringGetTextDatum(gbt_cuda_build_archs());
		nulls[2] = false;

		/* CUDA must never be initialised in the postmaster. */
		Assert(MyProcPid != PostmasterPid);

		err = gbt_cuda_device_count(&count, errbuf, sizeof(errbuf));
		if (err != 0 || count == 0)
		{
			values[8] = CStringGetTextDatum(err != 0 ?
											psprintf("no usable CUDA device: %s", errbuf) :
											"no CUDA device found");
			nulls[8] = false;
			put_row(rsinfo, values, nulls);
		}
		else
		{
			int			id;

			for (id = 0; id < count; id++)
			{
				gbt_device_props props;

				nulls[3] = false;
				values[3] = Int32GetDatum(id);
				err = gbt_cuda_device_props(id, &props, errbuf, sizeof(errbuf));
				if (err != 0)
				{
					nulls[4] = nulls[5] = nulls[6] = nulls[7] = true;
					values[8] = CStringGetTextDatum(psprintf("device unusable: %s", errbuf));
				}
				else
				{
					values[4] = CStringGetTextDatum(props.name);
					values[5] = Int64GetDatum((int64) props.total_memory);
					values[6] = Int32GetDatum(props.sm_count);
					values[7] = CStringGetTextDatum(psprintf("%d.%d", props.cc_major,
															 props.cc_minor));
					values[8] = CStringGetTextDatum("available");
					nulls[4] = nulls[5] = nulls[6] = nulls[7] = false;
				}
				nulls[8] = false;
				put_row(rsinfo, values, nulls);
			}
		}
	}
#else
	values[0] = BoolGetDatum(false);
	nulls[0] = false;
	values[8] = CStringGetTextDatum("built without CUDA: queries are answered on the CPU");
	nulls[8] = false;
	put_row(rsinfo, values, nulls);
#endif

	return (Datum) 0;
}
