// SPDX-License-Identifier: GPL-3.0-or-later

/// The byte order of a TIFF structure (TIFF 6.0, section 2: "II" little-endian or "MM" big-endian, then 42), as TIFF
/// files and the Multi-Picture Format index lay it out: the one reader of it for ``ImageHeader`` and
/// ``MultiPicture``.
package enum TIFFByteOrder: Sendable {
    case littleEndian, bigEndian

    /// The order the first four bytes mark (`II*\0` or `MM\0*`), or nil for anything else.
    package init?(mark: [UInt8]) {
        switch Array(mark.prefix(4)) {
        case [0x49, 0x49, 0x2A, 0x00]: self = .littleEndian
        case [0x4D, 0x4D, 0x00, 0x2A]: self = .bigEndian
        default: return nil
        }
    }

    /// The unsigned `count`-byte number at `offset` of `bytes`, in this order; nil where it reaches outside them.
    package func number(_ bytes: [UInt8], at offset: Int, count: Int) -> Int? {
        guard offset >= 0, count >= 0, offset <= bytes.count - count else { return nil }
        let range = offset..<offset + count
        return self == .littleEndian
            ? range.reversed().reduce(0) { $0 << 8 | Int(bytes[$1]) }
            : range.reduce(0) { $0 << 8 | Int(bytes[$1]) }
    }
}
