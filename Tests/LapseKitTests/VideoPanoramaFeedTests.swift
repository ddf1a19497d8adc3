// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia
import LapseMotion
import TestSupport
import Testing

@testable import LapseKit

/// Which frames of a 360° video the stabiliser analyses, and what the analysis decodes.
@Suite struct VideoPanoramaFeedTests {
    /// Reference frames every fourth (B-frames between): from the first, one at least the stride on; frames step;
    /// none when they lie too far apart, when every frame is one, or when the first is too late.
    @Test func referenceStopsAreEvenAndNearTheStride() {
        let everyFourth = (0..<24).map { $0 % 4 == 0 }
        #expect(VideoPanoramaFeed.referenceStops(everyFourth, frameStep: 1, stride: 3) == [0, 4, 8, 12, 16, 20])
        #expect(VideoPanoramaFeed.referenceStops(everyFourth, frameStep: 2, stride: 1) == [0, 2, 4, 6, 8, 10])
        // The first reference frame third (a clip cut after a keyframe): the frames before follow its motion.
        let late = (0..<24).map { $0 % 4 == 2 }
        #expect(VideoPanoramaFeed.referenceStops(late, frameStep: 1, stride: 3) == [2, 6, 10, 14, 18, 22])
        // Every second frame: every fourth analysed (two strides apart at most), the last reference frame too.
        let second = (0..<23).map { $0 % 2 == 0 }
        #expect(VideoPanoramaFeed.referenceStops(second, frameStep: 1, stride: 3) == [0, 4, 8, 12, 16, 20, 22])
        #expect(VideoPanoramaFeed.referenceStops((0..<48).map { $0 % 8 == 0 }, frameStep: 1, stride: 3) == nil)
        #expect(VideoPanoramaFeed.referenceStops([Bool](repeating: true, count: 24), frameStep: 1, stride: 3) == nil)
        #expect(
            VideoPanoramaFeed.referenceStops((0..<24).map { $0 == 7 || $0 % 4 == 3 && $0 > 7 }, frameStep: 1, stride: 3)
                == nil)
    }

    /// One check of what a 360° video is, for the track's source and the front-to-back feed alike: a phone's
    /// portrait video is refused by both with the same line.
    @Test func aVideoThatIsNot2To1IsRefusedTheSameWay() throws {
        let phone = TestData.path("video/iphone_rotated.mov")
        var messages: [String] = []
        do { _ = try VideoPanoramaFeed(url: URL(fileURLWithPath: phone)) } catch { messages.append("\(error)") }
        do { _ = try VideoPanoramaSource(url: URL(fileURLWithPath: phone)) } catch { messages.append("\(error)") }
        #expect(messages.count == 2 && messages[0] == messages[1], "\(messages)")
        #expect(messages.first?.contains("not an equirectangular 360° video: ") == true, "\(messages)")
    }

    /// The real 360° video (H.264 with three B-frames between reference frames, 29.97 fps): every fourth frame
    /// or so is analysed, all reference frames, and an analysed frame is the frame a full decode gives (only
    /// reference frames are decoded for it, without the deblocking filter: PSNR ≥ 40 dB against the full decode's
    /// frame, and nearer it than the frames either side; the Y′CbCr frame, here seen through its RGBA at 1024 wide).
    @Test func theVideoIsAnalysedOnItsReferenceFrames() async throws {
        let path = TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")
        let feed = try VideoPanoramaFeed(url: URL(fileURLWithPath: path))
        #expect(feed.analysisStride == 4)
        let stops = try await feed.lookup(0..<feed.pointCount).compactMap { $0 }
        let analysed = stops.enumerated().filter { feed.isAnalysed($1, seen: $0, last: $0 == stops.count - 1) }.map(
            \.offset)
        let packets = try #require(try VideoFrameReader(URL(fileURLWithPath: path)).framesFromPackets())
        let reference = try #require(packets.isReference)
        #expect(!analysed.isEmpty && analysed.allSatisfy { reference[$0] })
        // Frames 2, 6, 10, … (a keyframe every 28 or so shifts the pattern by one): at least the stride (3)
        // apart, at most twice it.
        let gaps = zip(analysed.dropFirst(), analysed).map { $0 - $1 }
        #expect(
            analysed.first == 2 && gaps.allSatisfy { (3...6).contains($0) } && gaps.sorted()[gaps.count / 2] == 4,
            "\(analysed)")
        #expect(analysed.count == 29)
        var pictures: [Int: PixelBuffer] = [:]
        for n in analysed { pictures[n] = try await feed.analysisImage(for: stops[n]) }
        let full = try VideoFrameReader(URL(fileURLWithPath: path))
        var decoded: [PixelBuffer] = []
        while let (_, frame) = try full.nextYUVFrame() {
            decoded.append(
                try frame.rgba().resized(width: SphereImage.standardWidth, height: SphereImage.standardWidth / 2))
        }
        var worst = Double.infinity
        for (k, picture) in pictures {
            let own = ImageMetrics.psnr(picture, decoded[k])
            worst = min(worst, own)
            #expect(own >= 40, "frame \(k): \(own) dB")
            for n in [k - 1, k + 1] where decoded.indices.contains(n) {
                let other = ImageMetrics.psnr(picture, decoded[n])
                #expect(other < own, "frame \(k) is nearer frame \(n): \(other) vs \(own) dB")
            }
        }
        print("analysed frames against the full decode: worst PSNR \(worst) dB")
        let k = decoded.count
        #expect(k == 120 && pictures.count == analysed.count)
    }

    /// A frame given back is written over by a later one: the real 360° video's frames decoded into the planes of
    /// the frame before are the frames a decode into new memory gives, byte for byte, in the same memory (no new
    /// 2 MB luma plane a frame); through the feed, a frame the render gives back holds the next one asked for.
    @Test func framesGivenBackAreWrittenOver() async throws {
        let url = URL(fileURLWithPath: TestData.path("pano360/valiant360_overpass/overpass-clip.mp4"))
        func address(_ frame: YUVFrame) -> UInt { frame.y.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) } }
        let fresh = try VideoFrameReader(url)
        let reusing = try VideoFrameReader(url)
        let spares = SpareFrames(limit: 1)
        var before: UInt?
        var (frames, same, inPlace) = (0, true, 0)
        while let (time, frame) = try fresh.nextYUVFrame() {
            let (otherTime, other) = try #require(try reusing.nextYUVFrame(spares: spares))
            // Compared as a Bool: a failed comparison of two 3 MB frames would be diffed element by element.
            let equal = time == otherTime && frame == other
            same = same && equal
            if before == address(other) { inPlace += 1 }
            frames += 1
            before = address(other)
            spares.give(other)
        }
        #expect(frames == 120 && same)
        #expect(inPlace == frames - 1)

        let feed = try VideoPanoramaFeed(url: url)
        let stops = try await feed.lookup(0..<3).compactMap { $0 }
        let first = try #require(try await feed.yuvImage(for: stops[0], region: nil))
        let firstAddress = address(first)
        feed.recycle(consume first)
        let second = try #require(try await feed.yuvImage(for: stops[1], region: nil))
        let check = try VideoFrameReader(url)
        _ = try check.skipFrame()
        let expected = try #require(try check.nextYUVFrame()).frame
        let secondIsFrameOne = second == expected
        #expect(secondIsFrameOne)
        #expect(address(second) == firstAddress)
    }
}
