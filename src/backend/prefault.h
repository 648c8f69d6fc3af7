/*
 * prefault.h
 *	  Giving a fresh shared segment's pages memory in a helper thread, ahead
 *	  of the process that fills it.
 */
#ifndef GPUBTREE_PREFAULT_H
#define GPUBTREE_PREFAULT_H

#include "postgres.h"

#include "entries.h"

#define GBT_PREFAULT_MAX_PARTS 8

typedef struct GbtPrefault GbtPrefault;

extern GbtPrefault *gbt_prefault_start(char *const *starts, const Size *lens, int nparts);
extern GbtPrefault *gbt_prefault_entries(const GbtEntries *e, const GbtColumns *cols);
extern void gbt_prefault_stop(GbtPrefault *pf);

#endif							/* GPUBTREE_PREFAULT_H */
