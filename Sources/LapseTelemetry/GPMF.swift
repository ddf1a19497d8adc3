// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore

/// GoPro's General Purpose Metadata Format (GPMF), as GoPro documents it (github.com/gopro/gpmf-parser, README
/// "GPMF Introduction"): a tree of KLV items, each an 8-byte header — a four-character key, a type character, the
/// size in bytes of one structure and a big-endian 16-bit repeat count — followed by size × repeat bytes of
/// big-endian values, padded to a multiple of 4. Type 0 is a container of items (`DEVC` a device, `STRM` a stream
/// of one sensor); the values of a stream are scaled by its `SCAL` item. Parsed with every length checked against
/// the bytes there are: a truncated or hostile payload is an error, never a read out of bounds.
public enum GPMF {
    /// One KLV item: its key, type and layout, and its value bytes or, for a container, its items.
    public struct Item: Sendable, Equatable {
        /// The four-character key (`GPS5`, `GRAV`, `STRM`, …).
        public var key: String
        /// The type character (`l` int32, `S` uint16, `c` text, `U` UTC date, `?` complex, 0 container, …).
        public var type: UInt8
        /// Bytes of one structure (one sample).
        public var structSize: Int
        /// Structures in the item (samples).
        public var repeatCount: Int
        /// The value bytes (size × repeat, without padding); empty for a container.
        public var bytes: ArraySlice<UInt8>
        /// A container's items; nil for values.
        public var items: [Item]?

        /// The first item of `key` among a container's items.
        public func item(_ key: String) -> Item? { items?.first { $0.key == key } }

        /// The item's text (type `c`), trailing NULs removed.
        public var text: String? {
            guard type == UInt8(ascii: "c") else { return nil }
            return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }

        /// Every value of the item as a number, in order (for types b B s S l L j J f d q Q; `types` gives the
        /// types of a complex item's fields, from its stream's `TYPE`). Empty for other types.
        public func numbers(types: [UInt8]? = nil) -> [Double] {
            let fields = type == UInt8(ascii: "?") ? (types ?? []) : [type]
            let widths = fields.map(GPMF.width)
            guard !fields.isEmpty, !widths.contains(0) else { return [] }
            let record = widths.reduce(0, +)
            guard record > 0, structSize % record == 0 else { return [] }
            var out: [Double] = []
            out.reserveCapacity(bytes.count / max(1, widths.min()!))
            var i = bytes.startIndex
            while i + record <= bytes.endIndex {
                for (k, field) in fields.enumerated() {
                    out.append(GPMF.value(field, bytes[i..<(i + widths[k])]))
                    i += widths[k]
                }
            }
            return out
        }
    }

    /// Containers nest at most this deep (GoPro's parser: 16).
    public static let nestLimit = 16

    /// Parses a payload (one sample of a `gpmd` track, or a raw GPMF file).
    /// - Throws: ``LapseError`` `.invalidInput` for an item that runs past the end or nests too deep.
    public static func parse(_ bytes: [UInt8]) throws -> [Item] {
        try parse(bytes[...], depth: 0)
    }

    private static func parse(_ bytes: ArraySlice<UInt8>, depth: Int) throws -> [Item] {
        guard depth < nestLimit else { throw LapseError(.invalidInput, "GPMF", "containers nested too deep") }
        var items: [Item] = []
        var at = bytes.startIndex
        while at + 8 <= bytes.endIndex {
            let header = bytes[at..<(at + 8)]
            if header.prefix(4).allSatisfy({ $0 == 0 }) { break } // padding at the end
            let key = String(decoding: header.prefix(4), as: UTF8.self)
            let type = header[at + 4]
            let size = Int(header[at + 5])
            let count = Int(header[at + 6]) << 8 | Int(header[at + 7])
            let length = size * count
            let start = at + 8
            guard start + length <= bytes.endIndex else {
                throw LapseError(.invalidInput, "GPMF", "item \(key) runs past the end of its payload")
            }
            let value = bytes[start..<(start + length)]
            let children = type == 0 ? try parse(value, depth: depth + 1) : nil
            items.append(
                Item(
                    key: key, type: type, structSize: size, repeatCount: count, bytes: type == 0 ? [] : value,
                    items: children))
            at = start + (length + 3) & ~3
        }
        return items
    }

    /// Bytes of one value of a type (0 for types that are not numbers).
    static func width(_ type: UInt8) -> Int {
        switch type {
        case UInt8(ascii: "b"), UInt8(ascii: "B"): 1
        case UInt8(ascii: "s"), UInt8(ascii: "S"): 2
        case UInt8(ascii: "l"), UInt8(ascii: "L"), UInt8(ascii: "f"), UInt8(ascii: "q"): 4
        case UInt8(ascii: "j"), UInt8(ascii: "J"), UInt8(ascii: "d"), UInt8(ascii: "Q"): 8
        default: 0
        }
    }

    /// A big-endian value of `type` (its width's bytes).
    static func value(_ type: UInt8, _ b: ArraySlice<UInt8>) -> Double {
        var u: UInt64 = 0
        for byte in b { u = u << 8 | UInt64(byte) }
        switch type {
        case UInt8(ascii: "b"): return Double(Int8(truncatingIfNeeded: u))
        case UInt8(ascii: "s"): return Double(Int16(truncatingIfNeeded: u))
        case UInt8(ascii: "l"): return Double(Int32(truncatingIfNeeded: u))
        case UInt8(ascii: "j"): return Double(Int64(bitPattern: u))
        case UInt8(ascii: "f"): return Double(Float(bitPattern: UInt32(truncatingIfNeeded: u)))
        case UInt8(ascii: "d"): return Double(bitPattern: u)
        case UInt8(ascii: "q"): return Double(Int32(truncatingIfNeeded: u)) / 65536
        case UInt8(ascii: "Q"): return Double(Int64(bitPattern: u)) / 4_294_967_296
        default: return Double(u)
        }
    }
}
