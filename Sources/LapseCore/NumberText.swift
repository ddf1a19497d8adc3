// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Numbers in messages, summaries and files as a person writes them: the one formatter of option values,
/// seconds, metres and coordinates.
public enum NumberText {
    /// `v` without a fraction when it is whole (`12`, not `12.0`); otherwise with at most `digits` decimals and
    /// no trailing zeros (`0.3`, `29.97`), or with `digits` nil the shortest text that reads back as `v`
    /// (`0.1`, `1e-09`). Not finite: `inf`, `-inf`, `nan`.
    public static func compact(_ v: Double, digits: Int? = nil) -> String {
        guard v.isFinite else { return String(v) }
        if v == v.rounded(), abs(v) < 1e15 { return String(Int(v)) }
        guard let digits else { return String(v) }
        var s = String(format: "%.\(digits)f", v)
        if s.contains(".") {
            while s.hasSuffix("0") { s.removeLast() }
            if s.hasSuffix(".") { s.removeLast() }
        }
        return s == "-0" ? "0" : s
    }
}
