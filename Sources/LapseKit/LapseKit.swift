// SPDX-License-Identifier: GPL-3.0-or-later
// LapseKit: the jobs users run (hyperlapse, video, clip, gif) and the public types of every module.
@_exported import LapseCore
@_exported import LapseGIF
@_exported import LapseGeo
@_exported import LapseMedia
@_exported import LapseMotion
@_exported import LapseNet
@_exported import LapsePanorama
@_exported import LapseRender
@_exported import LapseReport
@_exported import LapseRouting
