#ifndef LAPSE_CGIF_SHIM_H
#define LAPSE_CGIF_SHIM_H
#include <gif_lib.h>
#endif
