// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Directions of travel along a track of noisy fixes (consumer GPS: metres of noise, fixes a fraction of a metre
/// to several metres apart), never from two fixes closer than the noise.
///
/// For fix i, the window is the fixes before and after it out to `halfWindow` metres of straight-line
/// displacement from it, widened where it spans less than `2 · halfWindow` (near the ends, at a stop: many
/// fixes within a few metres share the window of the travel around them and get no heading of their own); the
/// heading is the direction of the window's total least-squares line (the
/// principal axis of the fixes in a local east–north plane), pointed the way the track runs (from the window's
/// first fix to its last). Nil where the window spans less than `minimumSpan` metres (a track too short, or one
/// that never leaves a spot).
public enum TrackHeadings {
    /// - Parameters:
    ///   - positions: the fixes in travel order.
    ///   - halfWindow: metres of displacement either side (default 25).
    ///   - minimumSpan: metres the window's ends must lie apart (default 20).
    /// - Returns: one compass heading (degrees, [0, 360)) or nil per fix.
    public static func headings(_ positions: [Coordinate], halfWindow: Double = 25, minimumSpan: Double = 20)
        -> [Double?]
    {
        positions.indices.map { heading(at: $0, in: positions, halfWindow: halfWindow, minimumSpan: minimumSpan) }
    }

    /// The heading at fix `i` (see ``headings(_:halfWindow:minimumSpan:)``).
    public static func heading(at i: Int, in positions: [Coordinate], halfWindow: Double = 25, minimumSpan: Double = 20)
        -> Double?
    {
        guard positions.indices.contains(i) else { return nil }
        let here = positions[i]
        var lo = i
        var hi = i
        while lo > 0, positions[lo - 1].distance(to: here) <= halfWindow || positions[lo].distance(to: here) < 1 {
            lo -= 1
        }
        while hi + 1 < positions.count,
            positions[hi + 1].distance(to: here) <= halfWindow || positions[hi].distance(to: here) < 1
        { hi += 1 }
        // Near the ends of the track (or at a stop) widen the window on the side that has fixes until it spans
        // `2 · halfWindow` metres, as the windows of the travel around it do.
        while positions[lo].distance(to: positions[hi]) < 2 * halfWindow, lo > 0 || hi + 1 < positions.count {
            if lo > 0 { lo -= 1 }
            if hi + 1 < positions.count { hi += 1 }
        }
        guard positions[lo].distance(to: positions[hi]) >= minimumSpan else { return nil }
        // Local east (x) and north (y) metres around `here`.
        let metresPerDegree = 111_320.0
        let cosLatitude = cos(here.latitude * .pi / 180)
        var xs: [Double] = []
        var ys: [Double] = []
        for p in positions[lo...hi] {
            xs.append(normalizeLongitude(p.longitude - here.longitude) * metresPerDegree * cosLatitude)
            ys.append((p.latitude - here.latitude) * metresPerDegree)
        }
        let n = Double(xs.count)
        let mx = xs.reduce(0, +) / n
        let my = ys.reduce(0, +) / n
        var sxx = 0.0
        var sxy = 0.0
        var syy = 0.0
        for (x, y) in zip(xs, ys) {
            sxx += (x - mx) * (x - mx)
            sxy += (x - mx) * (y - my)
            syy += (y - my) * (y - my)
        }
        // The principal axis of [[sxx, sxy], [sxy, syy]].
        let angle = 0.5 * atan2(2 * sxy, sxx - syy)
        var dx = cos(angle)
        var dy = sin(angle)
        if dx * (xs.last! - xs.first!) + dy * (ys.last! - ys.first!) < 0 {
            dx = -dx
            dy = -dy
        }
        return normalizeDegrees(atan2(dx, dy) * 180 / .pi)
    }
}
