// SPDX-License-Identifier: GPL-3.0-or-later
#ifndef LAPSE_CFREETYPE_SHIM_H
#define LAPSE_CFREETYPE_SHIM_H
#include <ft2build.h>
#include FT_FREETYPE_H

/// FT_HAS_KERNING(face): the face has a kerning table FT_Get_Kerning reads.
static inline int lapse_ft_has_kerning(FT_Face face) { return FT_HAS_KERNING(face) ? 1 : 0; }
/// FT_LOAD_TARGET_LIGHT: hinting on the vertical axis only (glyph shapes and spacing stay true to the design).
static inline FT_Int32 lapse_ft_load_target_light(void) { return FT_LOAD_TARGET_LIGHT; }
#endif
