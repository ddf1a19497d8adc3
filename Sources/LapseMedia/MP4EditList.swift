// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore

/// Shortens the presented part of an MP4/MOV's video track in place: its edit list's last edit (`elst`,
/// ISO/IEC 14496-12 §8.6.6) ends at a given presentation time, and the track's and movie's durations (`tkhd`,
/// `mvhd`) follow.
///
/// A stream copy that ends inside a group of B-frames must keep the frames after the end that the last frames
/// before it reference; FFmpeg's mov muxer makes the edit last to the latest frame written, so players show those
/// frames too. Ending the edit at the cut hides them, as the start's pre-roll is hidden.
enum MP4EditList {
    /// Ends the video track's presentation `seconds` after its start (when it lasts longer).
    /// - Throws: ``LapseError`` `.output` when the file cannot be read or written or has no video edit list.
    static func trimVideo(_ path: String, to seconds: Double) throws {
        guard let handle = FileHandle(forUpdatingAtPath: path) else {
            throw LapseError.posix(.output, path, "cannot be opened")
        }
        defer { try? handle.close() }
        // Only the movie box is read (the media data may be gigabytes): the top-level boxes' headers are walked.
        let (moovOffset, moovData) = try movieBox(handle, path)
        var bytes = [UInt8](moovData)
        guard let moov = children(of: bytes, in: 0..<bytes.count).first(where: { $0.type == "moov" }),
            let mvhd = children(of: bytes, in: moov.body).first(where: { $0.type == "mvhd" })
        else {
            throw LapseError(.output, path, "has no movie header to trim")
        }
        let movieScale = UInt64(
            read(bytes, at: mvhd.body.lowerBound + (bytes[mvhd.body.lowerBound] == 1 ? 20 : 12), size: 4))
        let target = UInt64((seconds * Double(movieScale)).rounded())
        var longest: UInt64 = 0
        var trimmed = false
        for trak in children(of: bytes, in: moov.body) where trak.type == "trak" {
            let parts = children(of: bytes, in: trak.body)
            guard let tkhd = parts.first(where: { $0.type == "tkhd" }) else { continue }
            let v1 = bytes[tkhd.body.lowerBound] == 1
            let durationAt = tkhd.body.lowerBound + (v1 ? 28 : 20)
            let durationSize = v1 ? 8 : 4
            var duration = read(bytes, at: durationAt, size: durationSize)
            if isVideo(bytes, parts),
                let edts = parts.first(where: { $0.type == "edts" }),
                let elst = children(of: bytes, in: edts.body).first(where: { $0.type == "elst" })
            {
                let ev1 = bytes[elst.body.lowerBound] == 1
                let entrySize = ev1 ? 20 : 12
                let count = Int(read(bytes, at: elst.body.lowerBound + 4, size: 4))
                let first = elst.body.lowerBound + 8
                guard count > 0, first + count * entrySize <= elst.body.upperBound else { continue }
                // Empty edits (media time −1) before the content count towards the presentation's time.
                var before: UInt64 = 0
                for k in 0..<(count - 1) { before += read(bytes, at: first + k * entrySize, size: ev1 ? 8 : 4) }
                let last = first + (count - 1) * entrySize
                let current = read(bytes, at: last, size: ev1 ? 8 : 4)
                if target > before, current > target - before {
                    write(&bytes, target - before, at: last, size: ev1 ? 8 : 4)
                    duration = target
                    write(&bytes, duration, at: durationAt, size: durationSize)
                    trimmed = true
                }
            }
            longest = max(longest, duration)
        }
        guard trimmed else { return }
        let mvhdDuration = mvhd.body.lowerBound + (bytes[mvhd.body.lowerBound] == 1 ? 24 : 16)
        write(&bytes, longest, at: mvhdDuration, size: bytes[mvhd.body.lowerBound] == 1 ? 8 : 4)
        do {
            try handle.seek(toOffset: moovOffset)
            try handle.write(contentsOf: Data(bytes))
        } catch {
            throw LapseError(.output, path, "cannot be written: \(error.localizedDescription)")
        }
    }

    /// The `moov` box (header included) and where it starts in the file.
    static func movieBox(_ handle: FileHandle, _ path: String) throws -> (UInt64, Data) {
        do {
            let end = try handle.seekToEnd()
            var at: UInt64 = 0
            while at + 8 <= end {
                try handle.seek(toOffset: at)
                let header = [UInt8](try handle.read(upToCount: 16) ?? Data())
                guard header.count >= 8 else { break }
                var size = read(header, at: 0, size: 4)
                if size == 1, header.count >= 16 {
                    size = read(header, at: 8, size: 8)
                } else if size == 0 {
                    size = end - at
                }
                guard size >= 8, at + size <= end else { break }
                if String(decoding: header[4..<8], as: UTF8.self) == "moov" {
                    guard size < 1 << 30 else { break }
                    try handle.seek(toOffset: at)
                    return (at, try handle.read(upToCount: Int(size)) ?? Data())
                }
                at += size
            }
        } catch {
            throw LapseError(.output, path, "cannot be read: \(error.localizedDescription)")
        }
        throw LapseError(.output, path, "has no movie box to trim")
    }

    struct Box {
        var type: String
        var body: Range<Int>
    }

    /// The boxes in `range` of `bytes` (stopping at one that does not fit).
    static func children(of bytes: [UInt8], in range: Range<Int>) -> [Box] {
        var boxes: [Box] = []
        var at = range.lowerBound
        while at + 8 <= range.upperBound {
            var size = Int(read(bytes, at: at, size: 4))
            var header = 8
            if size == 1 {
                guard at + 16 <= range.upperBound else { break }
                size = Int(clamping: read(bytes, at: at + 8, size: 8))
                header = 16
            } else if size == 0 {
                size = range.upperBound - at
            }
            guard size >= header, at + size <= range.upperBound else { break }
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            boxes.append(Box(type: type, body: (at + header)..<(at + size)))
            at += size
        }
        return boxes
    }

    /// Whether a track's `mdia/hdlr` says `vide`.
    static func isVideo(_ bytes: [UInt8], _ parts: [Box]) -> Bool {
        guard let mdia = parts.first(where: { $0.type == "mdia" }),
            let hdlr = children(of: bytes, in: mdia.body).first(where: { $0.type == "hdlr" }),
            hdlr.body.count >= 12
        else { return false }
        return String(decoding: bytes[(hdlr.body.lowerBound + 8)..<(hdlr.body.lowerBound + 12)], as: UTF8.self)
            == "vide"
    }

    static func read(_ bytes: [UInt8], at offset: Int, size: Int) -> UInt64 {
        guard offset >= 0, offset + size <= bytes.count else { return 0 }
        var v: UInt64 = 0
        for k in 0..<size { v = v << 8 | UInt64(bytes[offset + k]) }
        return v
    }

    static func write(_ bytes: inout [UInt8], _ value: UInt64, at offset: Int, size: Int) {
        guard offset >= 0, offset + size <= bytes.count else { return }
        for k in 0..<size { bytes[offset + k] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(size - 1 - k))) }
    }
}
