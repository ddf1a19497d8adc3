#ifndef LAPSE_CIMAGEQUANT_SHIM_H
#define LAPSE_CIMAGEQUANT_SHIM_H
#include <libimagequant.h>
#endif
