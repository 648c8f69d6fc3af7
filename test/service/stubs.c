/*
 * stubs.c
 *	  What the service's plain-C files call of the backend, for their unit
 *	  tests outside a server: allocation from malloc, a failed Assert()
 *	  aborting, and the summary's notes discarded.
 */
#include "postgres.h"

#include <stdio.h>

#include "lib/stringinfo.h"
#include "utils/memutils.h"

#undef fprintf

MemoryContext TopMemoryContext = NULL;

void *
MemoryContextAllocZero(MemoryContext context, Size size)
{
	void	   *p = calloc(1, size);

	if (p == NULL)
		abort();
	return p;
}

void
pfree(void *pointer)
{
	free(pointer);
}

#if PG_VERSION_NUM >= 160000
void
ExceptionalCondition(const char *conditionName, const char *fileName, int lineNumber)
#else
void
ExceptionalCondition(const char *conditionName, const char *errorType,
					 const char *fileName, int lineNumber)
#endif
{
	fprintf(stderr, "Assert(%s) failed at %s:%d\n", conditionName, fileName, lineNumber);
	abort();
}

void
appendStringInfo(StringInfo str, const char *fmt,...)
{
}
