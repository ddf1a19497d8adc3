// SPDX-License-Identifier: GPL-3.0-or-later

// The jobs' summaries encode themselves as the command line's `--json` prints them: camelCase keys here, which an
// encoder with `JSONEncoder.KeyEncodingStrategy.convertToSnakeCase` writes as snake_case (`framesSampled` →
// `frames_sampled`); an optional is left out when absent, except where a key is always there (`null` when there is
// nothing), which ``KeyedEncodingContainer/encodeNullable(_:forKey:)`` writes.

extension KeyedEncodingContainer {
    /// Encodes `value`, or `null` when it is nil: the key is always there (`encodeIfPresent` leaves it out).
    public mutating func encodeNullable<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
}

extension KeyedEncodingContainer where Key == SummaryKey {
    /// A video's frame size and rate as every summary writes them: `width`, `height` (pixels), `fps` (a number) and
    /// `frameRate` (the exact fraction's text, `"30000/1001"`).
    public mutating func encodeFrameFormat(width: Int, height: Int, frameRate: FrameRate) throws {
        try encode(width, forKey: "width")
        try encode(height, forKey: "height")
        try encode(frameRate.value, forKey: "fps")
        try encode("\(frameRate.numerator)/\(frameRate.denominator)", forKey: "frameRate")
    }
}

/// A coding key made from any string: for summaries whose keys are written out in their `encode(to:)`.
public struct SummaryKey: CodingKey, ExpressibleByStringLiteral, Sendable {
    /// The key's text (camelCase; the encoder may turn it into snake_case).
    public let stringValue: String
    /// Always nil: summary keys are strings.
    public var intValue: Int? { nil }
    /// The key named `stringValue`.
    public init(stringValue: String) { self.stringValue = stringValue }
    /// Always nil: summary keys are strings.
    public init?(intValue: Int) { nil }
    /// The key named by a string literal (`"framesSampled"`).
    public init(stringLiteral value: String) { stringValue = value }
}
