// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

@testable import LapseKit

@Suite struct HyperlapseSegmentTests {
    let overpass = TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")

    /// ⌊(K−1)·F/N⌋ ..< ⌊K·F/N⌋: consecutive, covering 0 ..< F exactly, sizes differing by at most one; empty
    /// segments only when N > F.
    @Test func segmentsCoverTheFramesExactly() throws {
        for frames in [0, 1, 4, 12, 120, 10_007] {
            for count in [1, 2, 3, 5, 6, 7, 50, 200] {
                let ranges = try (1...count).map {
                    try HyperlapseJob.Segment(index: $0, count: count).range(of: frames)
                }
                #expect(ranges.first?.lowerBound == 0 && ranges.last?.upperBound == frames)
                #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
                let sizes = ranges.map(\.count)
                #expect(sizes.max()! - sizes.min()! <= 1, "\(frames) in \(count): \(sizes)")
                #expect(sizes.contains(0) == (count > frames))
            }
        }
        #expect(try HyperlapseJob.Segment(parsing: "3/5").range(of: 12) == 4..<7)
        #expect(try HyperlapseJob.Segment(parsing: " 5 / 5 ").range(of: 12) == 9..<12)
        // K·F past Int.max (it trapped): the same ⌊(K−1)·F/N⌋ ..< ⌊K·F/N⌋.
        let most = Int.max
        #expect(try HyperlapseJob.Segment(index: most, count: most).range(of: 120) == 119..<120)
        #expect(try HyperlapseJob.Segment(index: most / 2, count: most).range(of: 120) == 59..<59)
        #expect(try HyperlapseJob.Segment(index: 1, count: most).range(of: 120) == 0..<0)
        for bad in ["0/5", "6/5", "5", "/5", "1/", "x/y", "1/2/3", "-1/3"] {
            #expect(throws: LapseError.self, "\(bad)") { try HyperlapseJob.Segment(parsing: bad) }
        }
    }

    /// A segment of a video starts decoding at the keyframe before its first frame: the frame it gets is the one
    /// a decode from the start gives, bit for bit, and the frames before that keyframe are never decoded.
    @Test func aSegmentOfAVideoDecodesFromTheKeyframeBeforeIt() async throws {
        let whole = try VideoPanoramaFeed(url: URL(fileURLWithPath: overpass))
        let stops = try await whole.lookup(0..<whole.pointCount).compactMap { $0 }
        #expect(stops.count == 120)
        for stop in stops[..<100] { whole.skip(stop) }
        let expected = try await whole.yuvImage(for: stops[100])
        #expect(whole.decoder.framesDecoded == 101)

        let segment = try VideoPanoramaFeed(url: URL(fileURLWithPath: overpass))
        let again = try await segment.lookup(0..<segment.pointCount).compactMap { $0 }
        for stop in again[..<100] { segment.skip(stop) }
        segment.startRendering(at: again[100])
        let picture = try await segment.yuvImage(for: again[100])
        #expect(picture == expected)
        // The clip's keyframes are frames 0, 27, 56, 85 and 114 (ffprobe: pts 27027… at 1001 a frame): frame 100 is
        // decoded from 85.
        #expect(segment.decoder.framesDecoded == 16, "\(segment.decoder.framesDecoded)")
        let next = try await segment.yuvImage(for: again[101])
        let expectedNext = try await whole.yuvImage(for: stops[101])
        #expect(next == expectedNext)
    }
}
