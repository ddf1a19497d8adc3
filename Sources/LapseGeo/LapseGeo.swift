// SPDX-License-Identifier: GPL-3.0-or-later
// LapseGeo: see docs/ARCHITECTURE.md for what this module owns.
