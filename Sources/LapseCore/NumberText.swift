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

extension NumberText {
    /// `text` read as a decimal number — `[+-]digits[.digits]` or `[+-].digits`, with an optional exponent
    /// `e[+-]digits` (JSON's and XML Schema's forms) — or nil. Stricter than `Double(_:)`, which also reads hex
    /// floats (`0x1p3`), `nan`, `inf`, and stops at an embedded NUL (`"1\0junk"` is 1); none of those is a
    /// number a person or a route file writes. A finite result only (`1e999` is nil).
    public static func decimal<S: StringProtocol>(_ text: S) -> Double? {
        var digits = 0
        var sawDot = false
        var sawExponent = false
        var exponentDigits = 0
        var previous: UInt8 = 0
        for (i, c) in text.utf8.enumerated() {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if sawExponent { exponentDigits += 1 } else { digits += 1 }
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                guard i == 0 || previous == UInt8(ascii: "e") || previous == UInt8(ascii: "E") else { return nil }
            case UInt8(ascii: "."):
                guard !sawDot, !sawExponent else { return nil }
                sawDot = true
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                guard digits > 0, !sawExponent else { return nil }
                sawExponent = true
            default:
                return nil
            }
            previous = c
        }
        guard digits > 0, !sawExponent || exponentDigits > 0, let v = Double(String(text)), v.isFinite else {
            return nil
        }
        return v
    }
}
