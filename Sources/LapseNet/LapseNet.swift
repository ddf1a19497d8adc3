// SPDX-License-Identifier: GPL-3.0-or-later
// LapseNet: see docs/ARCHITECTURE.md for what this module owns.
