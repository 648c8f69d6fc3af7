/*
 * engine_nogpu.c
 *	  engine.h's GPU entry point in a build without CUDA (the Makefile
 *	  compiles this file instead of engine_gpu.cu): there is no GPU engine.
 */
#include <stddef.h>

#include "engine.h"

const gbt_engine_ops *
gbt_engine_gpu_ops(void)
{
	return NULL;
}
