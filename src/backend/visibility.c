/*
 * visibility.c
 *	  The visibility map of a whole table, read at once.
 */
#include "postgres.h"

#include "access/visibilitymapdefs.h"
#include "port/pg_bitutils.h"
#include "storage/bufmgr.h"
#include "storage/smgr.h"
#include "utils/rel.h"

#include "visibility.h"

/* The visibility map's layout (visibilitymap.c): two bits per heap block. */
#define VM_MAPSIZE (BLCKSZ - MAXALIGN(SizeOfPageHeaderData))
#define VM_BLOCKS_PER_PAGE (VM_MAPSIZE * 4)

/*
 * One bit per heap block: set when the visibility map says all-visible.
 * Reads the map's pages directly (a byte holds four blocks), which for a
 * large table is much cheaper than asking block by block.
 */
uint8 *
gbt_read_visibility(Relation heap, BlockNumber nblocks, int64 *nvisible)
{
	uint8	   *bits = palloc0(nblocks / 8 + 1);
	SMgrRelation smgr = RelationGetSmgr(heap);
	BlockNumber mapblocks;
	BlockNumber mapblk;

	StaticAssertStmt(VISIBILITYMAP_ALL_VISIBLE == 0x01 && VM_BLOCKS_PER_PAGE % 8 == 0,
					 "a map byte's four all-visible bits are its even bits, a page's blocks start a byte");
	*nvisible = 0;
	if (!smgrexists(smgr, VISIBILITYMAP_FORKNUM))
		return bits;
	mapblocks = smgrnblocks(smgr, VISIBILITYMAP_FORKNUM);
	for (mapblk = 0; mapblk < mapblocks; mapblk++)
	{
		BlockNumber first = mapblk * VM_BLOCKS_PER_PAGE;
		Buffer		buf;
		uint8	   *map;
		int			i;

		if (first >= nblocks)
			break;
		buf = ReadBufferExtended(heap, VISIBILITYMAP_FORKNUM, mapblk,
								 RBM_ZERO_ON_ERROR, NULL);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		map = (uint8 *) PageGetContents(BufferGetPage(buf));
		for (i = 0; i < VM_MAPSIZE && first + i * 4 < nblocks; i++)
		{
			BlockNumber blk = first + i * 4;
			uint32		v = map[i] & 0x55;	/* the all-visible bits */

			if (v == 0)
				continue;
			/* bits 0, 2, 4, 6 to bits 0..3: four blocks at once */
			v = (v | (v >> 1)) & 0x33;
			v = (v | (v >> 2)) & 0x0f;
			if (blk + 4 > nblocks)
				v &= (1 << (nblocks - blk)) - 1;
			bits[blk >> 3] |= v << (blk & 7);
			*nvisible += pg_number_of_ones[v];
		}
		UnlockReleaseBuffer(buf);
	}
	return bits;
}

