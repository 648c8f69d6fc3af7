/*
 * scan.h
 *	  Bitmap scans answered by the GPU service.
 */
#ifndef GPUBTREE_SCAN_H
#define GPUBTREE_SCAN_H

#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "nodes/tidbitmap.h"

extern int64 gpubtree_getbitmap(IndexScanDesc scan, TIDBitmap *tbm);

#endif							/* GPUBTREE_SCAN_H */
