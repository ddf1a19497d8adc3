// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// A frame's size in pixels, written `WIDTHxHEIGHT` (`1280x720`) on the command line and in job files.
public struct FrameSize: Sendable, Hashable, CustomStringConvertible {
    /// Width in pixels, 1…16384.
    public var width: Int
    /// Height in pixels, 1…16384.
    public var height: Int

    /// A size of `width × height` pixels (each 1…16384 where it is parsed; not checked here).
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// `WIDTHxHEIGHT` (`x` or `X`), each a whole number from 1 to 16384; nil for anything else.
    public init?(parsing text: String) {
        guard let (w, h) = Self.numbers(text), (1...16384).contains(w), (1...16384).contains(h) else { return nil }
        self.init(width: w, height: h)
    }

    /// The two whole numbers either side of the `x` (or `X`) of `text`, whatever their range.
    static func numbers(_ text: String) -> (Int, Int)? {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]) else { return nil }
        return (w, h)
    }

    /// `1280x720`.
    public var description: String { "\(width)x\(height)" }
}

/// In a JSON file: the text `"1280x720"`.
extension FrameSize: Codable {
    /// Any `WIDTHxHEIGHT` of whole numbers is read (what uses it says when it is out of range).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let (w, h) = Self.numbers(try container.decode(String.self)) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "not WIDTHxHEIGHT (such as 1280x720)")
        }
        self.init(width: w, height: h)
    }

    /// Writes the size as its text, `"1280x720"`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
