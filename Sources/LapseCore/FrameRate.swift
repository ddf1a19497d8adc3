// SPDX-License-Identifier: GPL-3.0-or-later

/// A frame rate as a fraction, frames per second `numerator / denominator` (as FFmpeg's `AVRational`), so the
/// NTSC rates are exact: 29.97 is 30000/1001, not 2997/100.
public struct FrameRate: Sendable, Equatable, CustomStringConvertible {
    /// The rate as a fraction of whole numbers: frames per `denominator` seconds (30000 for 29.97 fps).
    public let numerator: Int
    /// Seconds the ``numerator`` frames take (1001 for 29.97 fps); at least 1.
    public let denominator: Int

    /// `numerator / denominator` frames per second, both > 0 (reduced by their greatest common divisor).
    public init(_ numerator: Int, _ denominator: Int = 1) {
        precondition(numerator > 0 && denominator > 0, "a frame rate is positive")
        var a = numerator
        var b = denominator
        while b != 0 { (a, b) = (b, a % b) }
        self.numerator = numerator / a
        self.denominator = denominator / a
    }

    /// Frames per second.
    public var value: Double { Double(numerator) / Double(denominator) }

    /// "30", "29.97", "12.5": the rate as people write it (two decimals at most).
    public var description: String {
        if denominator == 1 { return String(numerator) }
        var text = String(Double(Int((value * 100).rounded())) / 100)
        if text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }

    /// Parses `30`, `30000/1001`, or a decimal: the NTSC rates 23.976, 29.97, 47.952, 59.94 and 119.88 (and
    /// those to two decimals, e.g. 23.98) are N·1000/1001, as ffmpeg's `ntsc` rates; other decimals are taken to
    /// three decimals (12.5 = 25/2). Nil for anything else, zero, a negative or a non-finite rate.
    public static func parse(_ text: String) -> FrameRate? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count == 2 {
            guard let n = Int(parts[0]), let d = Int(parts[1]), n > 0, d > 0 else { return nil }
            return FrameRate(n, d)
        }
        guard parts.count == 1, let v = NumberText.decimal(text), v > 0, v < 1e6 else { return nil }
        for base in [24, 30, 48, 60, 120] {
            let ntsc = Double(base) * 1000 / 1001
            if abs(v - ntsc) < 0.006 && v != Double(base) { return FrameRate(base * 1000, 1001) }
        }
        let thousandths = Int((v * 1000).rounded())
        guard thousandths > 0 else { return nil }
        return FrameRate(thousandths, 1000)
    }
}

/// In a JSON file (a hyperlapse's job file): a whole rate as a number (`12`), any other as the fraction's text
/// (`"30000/1001"`); read from a number (`12`, `12.5`, `29.97`) or a text ``FrameRate/parse(_:)`` takes.
extension FrameRate: Codable {
    /// Reads a number (`25`, `29.97`) or a text ``parse(_:)`` takes (`"30000/1001"`).
    /// - Throws: `DecodingError.dataCorrupted` for anything else.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let rate: FrameRate?
        if let whole = try? container.decode(Int.self) {
            rate = whole > 0 ? FrameRate(whole) : nil
        } else if let number = try? container.decode(Double.self) {
            rate = FrameRate.parse(String(number))
        } else {
            rate = FrameRate.parse(try container.decode(String.self))
        }
        guard let rate else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "not a frame rate (12, 29.97 or 30000/1001)")
        }
        self = rate
    }

    /// Writes a whole rate as a number (`25`), any other as its fraction's text (`"30000/1001"`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if denominator == 1 {
            try container.encode(numerator)
        } else {
            try container.encode("\(numerator)/\(denominator)")
        }
    }
}
