// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

/// Adds a Camera Motion Metadata track (Google's CAMM: sample entry `camm`, handler `meta`) to an MP4 file whose
/// `moov` box comes last (as ffmpeg writes it without `+faststart`). FFmpeg cannot write such a track, and no small
/// real file with one is public: the boxes are written here as ISO/IEC 14496-12 and the CAMM specification lay
/// them out, the samples into an `mdat` placed before the `moov`, so no existing chunk offset moves.
public enum CAMMFile {
    /// Writes `output`: `input` with a `camm` track of `samples` (times in seconds from 0, increasing; each
    /// sample's bytes as the caller wrote them).
    public static func add(samples: [(time: Double, bytes: [UInt8])], to input: String, output: String) throws {
        let file = Array(try Data(contentsOf: URL(fileURLWithPath: input)))
        // The top-level boxes; the moov must be the last.
        var at = 0
        var moov: Range<Int>?
        while at + 8 <= file.count {
            var size = Int(be32(file, at))
            if size == 1 { size = Int(be64(file, at + 8)) }
            if size == 0 { size = file.count - at }
            if String(decoding: file[(at + 4)..<(at + 8)], as: UTF8.self) == "moov" { moov = at..<(at + size) }
            at += size
        }
        guard let moov, moov.upperBound == file.count else {
            throw ReferenceError(message: "\(input): no moov box at the end")
        }
        let payload = samples.flatMap(\.bytes)
        let mdat = box("mdat", payload)
        let chunkOffset = moov.lowerBound + 8
        // The movie's boxes: mvhd's next_track_ID (its last 4 bytes) becomes the new track's ID, plus one.
        var children = Array(file[(moov.lowerBound + 8)..<moov.upperBound])
        var trackID: UInt32 = 0
        var movieTimescale: UInt32 = 1000
        var c = 0
        while c + 8 <= children.count {
            let size = Int(be32(children, c))
            if String(decoding: children[(c + 4)..<(c + 8)], as: UTF8.self) == "mvhd" {
                let version = children[c + 8]
                movieTimescale = be32(children, c + (version == 1 ? 28 : 20))
                let next = c + size - 4
                trackID = be32(children, next)
                put32(&children, next, trackID + 1)
            }
            c += max(8, size)
        }
        let timescale: UInt32 = 1000
        let ticks = samples.map { UInt32(($0.time * Double(timescale)).rounded()) }
        var deltas = zip(ticks.dropFirst(), ticks).map { $0 - $1 }
        deltas.append(deltas.last ?? timescale / 10)
        let duration = deltas.reduce(0, +)
        let movieDuration = UInt32(Double(duration) * Double(movieTimescale) / Double(timescale))

        let identity: [UInt32] = [0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x4000_0000]
        let tkhd = fullBox(
            "tkhd", flags: 1, words([0, 0, trackID, 0, movieDuration, 0, 0, 0, 0] + identity + [0, 0]))
        let mdhd = fullBox("mdhd", words([0, 0, timescale, duration]) + [0x55, 0xC4, 0, 0])
        let hdlr = fullBox(
            "hdlr", words([0]) + Array("meta".utf8) + words([0, 0, 0]) + Array("CameraMetadataMotionHandler".utf8) + [0]
        )
        let dinf = box("dinf", fullBox("dref", words([1]) + fullBox("url ", flags: 1, [])))
        let entry = box("camm", [0, 0, 0, 0, 0, 0, 0, 1])
        let stbl = box(
            "stbl",
            fullBox("stsd", words([1]) + entry)
                + fullBox("stts", words([UInt32(deltas.count)] + deltas.flatMap { [1, $0] }))
                + fullBox("stsc", words([1, 1, UInt32(samples.count), 1]))
                + fullBox("stsz", words([0, UInt32(samples.count)] + samples.map { UInt32($0.bytes.count) }))
                + fullBox("stco", words([1, UInt32(chunkOffset)])))
        let minf = box("minf", fullBox("nmhd", []) + dinf + stbl)
        let trak = box("trak", tkhd + box("mdia", mdhd + hdlr + minf))
        let out = Array(file[..<moov.lowerBound]) + mdat + box("moov", children + trak)
        try Data(out).write(to: URL(fileURLWithPath: output))
    }

    /// One CAMM packet as the specification lays it out: little-endian uint16 reserved (0), uint16 `type`, then
    /// the fields (`Float` float32, `Double` float64, `Int32` int32) in order.
    public static func packet(_ type: UInt16, _ fields: [Any]) -> [UInt8] {
        var d = Data()
        func le<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        le(UInt16(0))
        le(type)
        for f in fields {
            switch f {
            case let v as Float: le(v.bitPattern)
            case let v as Double: le(v.bitPattern)
            case let v as Int32: le(v)
            default: preconditionFailure("a CAMM field is Float, Double or Int32, not \(f)")
            }
        }
        return Array(d)
    }

    static func be32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }
    static func be64(_ b: [UInt8], _ i: Int) -> UInt64 { UInt64(be32(b, i)) << 32 | UInt64(be32(b, i + 4)) }
    static func put32(_ b: inout [UInt8], _ i: Int, _ v: UInt32) {
        for k in 0..<4 { b[i + k] = UInt8(truncatingIfNeeded: v >> (24 - 8 * UInt32(k))) }
    }
    static func words(_ v: [UInt32]) -> [UInt8] {
        v.flatMap { w in (0..<4).map { UInt8(truncatingIfNeeded: w >> (24 - 8 * UInt32($0))) } }
    }
    static func box(_ type: String, _ body: [UInt8]) -> [UInt8] {
        words([UInt32(8 + body.count)]) + Array(type.utf8) + body
    }
    static func fullBox(_ type: String, flags: UInt32 = 0, _ body: [UInt8]) -> [UInt8] {
        box(type, words([flags & 0xFF_FFFF]) + body)
    }
}
