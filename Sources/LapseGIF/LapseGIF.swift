// SPDX-License-Identifier: GPL-3.0-or-later
// LapseGIF: see docs/ARCHITECTURE.md for what this module owns.
