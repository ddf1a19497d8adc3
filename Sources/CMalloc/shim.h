// glibc's malloc tuning (mallopt(3)), which Glibc's Swift module leaves out.
#ifndef LAPSE_CMALLOC_SHIM_H
#define LAPSE_CMALLOC_SHIM_H
#include <malloc.h>
#endif
