// SPDX-License-Identifier: GPL-3.0-or-later
internal import CFFmpeg
import Foundation
import LapseCore

/// One sample of a timed-metadata track (a camera's telemetry: GoPro's `gpmd`, Google's `camm`).
public struct DataSample: Sendable, Equatable {
    /// Presentation time in seconds from the media's start (the video's time 0).
    public var time: Double
    /// Duration in seconds (0 when the container gives none).
    public var duration: Double
    /// The sample's payload as stored.
    public var bytes: [UInt8]
}

extension MediaInput {
    /// The samples of the first data stream whose codec tag (the MP4 sample entry's four characters) is `tag`,
    /// e.g. `gpmd` or `camm`, in order.
    /// - Parameters:
    ///   - tag: the sample entry's four characters.
    ///   - maxBytes: the most bytes read in all (telemetry is a few kB a second: a larger track is refused).
    /// - Returns: nil when the media has no such stream.
    /// - Throws: ``LapseError`` `.invalidInput` when the track holds more than `maxBytes`, read errors.
    public func dataSamples(tag: String, maxBytes: Int = 64 << 20) throws -> [DataSample]? {
        try dataSamples(firstOf: [tag], maxBytes: maxBytes)?.samples
    }

    /// The samples of the first data stream whose codec tag is the first of `tags` the media has (e.g. `gpmd`,
    /// else `camm`), read in one pass, with that tag.
    /// - Returns: nil when the media has none of them.
    /// - Throws: as ``dataSamples(tag:maxBytes:)``.
    public func dataSamples(firstOf tags: [String], maxBytes: Int = 64 << 20) throws
        -> (tag: String, samples: [DataSample])?
    {
        func code(_ tag: String) -> UInt32? {
            let b = Array(tag.utf8)
            guard b.count == 4 else { return nil }
            return UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
        }
        let found = tags.lazy.compactMap { tag -> (String, Int)? in
            guard let code = code(tag) else { return nil }
            return self.streams.indices.first {
                self.streams[$0].kind == .data && self.withStream($0) { $0.pointee.codecpar.pointee.codec_tag } == code
            }.map { (tag, $0) }
        }.first
        guard let (tag, index) = found else { return nil }
        let tb = timeBase(of: index)
        // The other streams' samples are skipped by the container's index, not read (a .360 file is gigabytes).
        discardStreams(except: index)
        var samples: [DataSample] = []
        var total = 0
        let packet = try Packet()
        while try read(into: packet) {
            let p = packet.pointer.pointee
            guard Int(p.stream_index) == index, let data = p.data, p.size > 0 else { continue }
            total += Int(p.size)
            guard total <= maxBytes else {
                throw LapseError(.invalidInput, displayName, "the \(tag) track holds more than \(maxBytes) bytes")
            }
            let time = self.time(of: packet.pointer) ?? samples.last.map { $0.time + $0.duration } ?? 0
            let duration = p.duration > 0 ? Double(p.duration) * Double(tb.num) / Double(tb.den) : 0
            samples.append(
                DataSample(
                    time: time, duration: duration, bytes: Array(UnsafeBufferPointer(start: data, count: Int(p.size)))))
        }
        return (tag, samples)
    }
}
