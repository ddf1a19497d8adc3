// SPDX-License-Identifier: GPL-3.0-or-later

/// A JPEG's marker segments (ITU-T T.81 B.1.1), walked by their lengths from SOI: fill bytes before a marker skipped,
/// markers without a length (SOI, RSTn, TEM) stepped over, the walk stopping at the start of scan (SOS), an end of
/// image, a segment whose length is under 2 or lies past the bytes, or after 1024 segments (a file made to loop).
/// The one walker of the headers of JPEG files: ``ImageHeader`` (the frame's size) and the photo metadata of
/// LapsePanorama (how far the headers reach, the XMP packets).
package enum JPEGSegments {
    /// One segment with a length: its marker code and where its payload (after the two length bytes) lies, offsets
    /// in the file; the payload may reach past the bytes there are.
    package struct Segment: Sendable, Equatable {
        package let marker: UInt8
        package let payload: Range<Int>
    }

    /// How a walk ended.
    package enum End: Sendable, Equatable {
        /// At the start of scan or an end of image, whose marker is at this offset: every header segment visited.
        case imageData(at: Int)
        /// `visit` asked to stop.
        case stopped
        /// Not a JPEG (no SOI), a broken segment, or the bytes ended (at this offset) before a marker or a length.
        case broken(at: Int)
    }

    /// Walks the segments of a JPEG, calling `visit` with each segment that has a length, in file order, until it
    /// returns false.
    /// - Parameters:
    ///   - bytes: exactly `count` bytes at `offset` (offset, count), or nil past the end.
    ///   - visit: sees a segment; false stops the walk.
    /// - Returns: how the walk ended.
    @discardableResult
    package static func walk(_ bytes: (_ offset: Int, _ count: Int) -> [UInt8]?, _ visit: (Segment) -> Bool) -> End {
        guard let soi = bytes(0, 2), soi == [0xFF, 0xD8] else { return .broken(at: 0) }
        var i = 2
        for _ in 0..<1024 {
            guard var marker = bytes(i, 2), marker[0] == 0xFF else { return .broken(at: i) }
            var fill = 0
            while marker[1] == 0xFF { // fill bytes before a marker (a few at most in real files)
                i += 1
                fill += 1
                guard fill < 256, let next = bytes(i, 2) else { return .broken(at: i) }
                marker = next
            }
            let code = marker[1]
            if code == 0xD8 || (0xD0...0xD7).contains(code) || code == 0x01 { // no length
                i += 2
                continue
            }
            if code == 0xD9 || code == 0xDA { return .imageData(at: i) }
            guard let length = bytes(i + 2, 2).map({ Int($0[0]) << 8 | Int($0[1]) }), length >= 2 else {
                return .broken(at: i)
            }
            guard visit(Segment(marker: code, payload: (i + 4)..<(i + 2 + length))) else { return .stopped }
            i += 2 + length
        }
        return .broken(at: i)
    }

    /// ``walk(_:_:)`` over bytes in memory.
    @discardableResult
    package static func walk(_ data: [UInt8], _ visit: (Segment) -> Bool) -> End {
        walk(
            { offset, count in
                guard offset >= 0, count >= 0, offset + count <= data.count else { return nil }
                return Array(data[offset..<offset + count])
            }, visit)
    }
}
